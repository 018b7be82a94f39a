"""The t-SNE objective (van der Maaten's tsne.py): the KL divergence from P to the Student-t affinities Q."""
import numpy as np


def x2p_simple(X, perplexity_beta=1.0):
    """Joint probabilities P from a Gaussian kernel with a single precision (no binary search)."""
    sum_X = np.sum(np.square(X), 1)
    D = np.add(np.add(-2 * np.dot(X, X.T), sum_X).T, sum_X)
    P = np.exp(-D * perplexity_beta)
    np.fill_diagonal(P, 0.0)
    P = P + np.transpose(P)
    P = P / np.sum(P)
    return np.maximum(P, 1e-12)


def tsne_kl(Y, P):
    n = Y.shape[0]
    sum_Y = np.sum(np.square(Y), 1)
    num = -2. * np.dot(Y, Y.T)
    num = 1. / (1. + np.add(np.add(num, sum_Y).T, sum_Y))
    num[range(n), range(n)] = 0.
    Q = num / np.sum(num)
    Q = np.maximum(Q, 1e-12)
    C = np.sum(P * np.log(P / Q))
    return C


def cases():
    rs = np.random.RandomState(32)
    X = rs.randn(6, 4)
    P = x2p_simple(X, 0.3)
    # P is data: it holds 1e-12 where the affinity underflows, and log(P / Q) is not defined below 0.
    return [(tsne_kl, (rs.randn(6, 2), P), {"positions": [0]})]

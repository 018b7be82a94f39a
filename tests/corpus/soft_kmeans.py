"""Soft k-means: responsibilities from squared distances, the EM lower bound of an isotropic mixture."""
import numpy as np


def pairwise_sq_dists(X, mu):
    return np.sum((X[:, None, :] - mu[None, :, :]) ** 2, axis=-1)


def soft_kmeans_objective(mu, X, beta=2.0):
    d2 = pairwise_sq_dists(X, mu)
    logits = -beta * d2
    m = np.max(logits, axis=1, keepdims=True)
    log_norm = m[:, 0] + np.log(np.sum(np.exp(logits - m), axis=1))
    return -np.sum(log_norm) / beta


def em_bound(mu, log_var, X):
    """Expected complete log likelihood with responsibilities held fixed (the M-step objective)."""
    N, D = X.shape
    K = mu.shape[0]
    var = np.exp(log_var)
    d2 = pairwise_sq_dists(X, mu)
    log_p = -0.5 * d2 / var - 0.5 * D * (np.log(2 * np.pi) + log_var) - np.log(K)
    r = np.exp(log_p - log_p.max(axis=1, keepdims=True))
    r = r / r.sum(axis=1, keepdims=True)
    resp = np.copy(r)
    return np.sum(resp * log_p)


def cases():
    rs = np.random.RandomState(31)
    X = np.vstack([rs.randn(4, 2) + 2, rs.randn(4, 2) - 2])
    mu = rs.randn(3, 2)
    return [(soft_kmeans_objective, (mu, X)),
            (em_bound, (mu, 0.2, X))]

"""A linear-chain conditional random field's negative log likelihood, with SciPy's logsumexp."""
import numpy as np
from scipy.special import logsumexp


def score_sequence(emissions, transitions, tags):
    score = emissions[0, tags[0]]
    for t in range(1, len(tags)):
        score = score + transitions[tags[t - 1], tags[t]] + emissions[t, tags[t]]
    return score


def log_partition(emissions, transitions):
    alpha = emissions[0]
    for t in range(1, emissions.shape[0]):
        alpha = logsumexp(alpha[:, None] + transitions, axis=0) + emissions[t]
    return logsumexp(alpha)


def crf_nll(W, transitions, features, tags):
    emissions = features @ W
    return log_partition(emissions, transitions) - score_sequence(emissions, transitions, tags)


def cases():
    rs = np.random.RandomState(34)
    T, F, K = 5, 3, 3
    return [(crf_nll, (0.5 * rs.randn(F, K), 0.5 * rs.randn(K, K), rs.randn(T, F), rs.randint(0, K, size=T)))]

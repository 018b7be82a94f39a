"""The forward algorithm of a hidden Markov model, in log space (autograd's examples/hmm_em.py)."""
import numpy as np


def logsumexp(a, axis=None, keepdims=False):
    a_max = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - a_max), axis=axis, keepdims=True)) + a_max
    if not keepdims:
        out = np.squeeze(out, axis=axis)
    return out


def normalize(a):
    def replace_zeros(a):
        return np.where(a > 0., a, 1.)
    return a / replace_zeros(a.sum(-1, keepdims=True))


def log_partition_function(natural_params, data):
    if isinstance(data, list):
        return sum(map(lambda x: log_partition_function(natural_params, x), data))

    log_pi, log_A, log_B = natural_params

    log_alpha = log_pi
    for y in data:
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, y]

    return logsumexp(log_alpha)


def hmm_log_likelihood(pi, A, B, data):
    natural_params = (np.log(pi), np.log(A), np.log(B))
    return log_partition_function(natural_params, data)


def hmm_loglik_softmax(log_pi, log_A, log_B, obs):
    """The same likelihood over unconstrained parameters: rows normalized with a log-softmax."""
    log_pi = log_pi - logsumexp(log_pi)
    log_A = log_A - logsumexp(log_A, axis=1, keepdims=True)
    log_B = log_B - logsumexp(log_B, axis=1, keepdims=True)
    T = len(obs)
    log_alpha = log_pi + log_B[:, obs[0]]
    for t in range(1, T):
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, obs[t]]
    return logsumexp(log_alpha)


def cases():
    rs = np.random.RandomState(8)
    N, V = 3, 4
    pi = normalize(rs.rand(N) + 0.5)
    A = normalize(rs.rand(N, N) + 0.5)
    B = normalize(rs.rand(N, V) + 0.5)
    data = rs.randint(0, V, size=6)
    return [(hmm_log_likelihood, (pi, A, B, data)),
            (hmm_loglik_softmax, (rs.randn(N), rs.randn(N, N), rs.randn(N, V), data))]

"""Code written for HIPS autograd: `import autograd.numpy as np` and autograd's SciPy wrappers.

tapegen follows autograd's wrappers as the NumPy and SciPy functions they wrap (tests/test_autograd_code.py).
"""
import autograd.numpy as np
import autograd.numpy.random as npr
import autograd.scipy.stats.norm as norm
from autograd import tuple as ag_tuple
from autograd.misc.flatten import flatten
from autograd.scipy.special import logsumexp


def neural_net_predict(params, inputs):
    """autograd's examples/neural_net.py, as written there."""
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)


def l2_norm(params):
    """autograd's examples/neural_net.py: the squared norm of every parameter, through autograd's flatten."""
    flattened, _ = flatten(params)
    return np.dot(flattened, flattened)


def log_posterior(params, inputs, targets, L2_reg=0.1):
    log_prior = -L2_reg * l2_norm(params)
    log_lik = np.sum(neural_net_predict(params, inputs) * targets)
    return log_prior + log_lik


def gaussian_entropy_objective(mean, log_std, samples):
    """black_box_svi's reparameterised objective, with autograd's norm and np.array."""
    draws = samples * np.exp(log_std) + mean
    entropy = 0.5 * len(mean) * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)
    stacked = np.concatenate([draws, np.array([mean, log_std])], axis=0)
    return np.mean(norm.logpdf(stacked, 0.0, 1.5)) + entropy


def stacked_pairs(x, y):
    """autograd's tests: its differentiable `tuple`, and autograd.numpy's concatenate and vstack (lambdas there)."""
    w, v = np.sin(x[0]), np.dot(x, x.T)
    pair = ag_tuple((w, v))
    joined = np.concatenate([pair[0], y], axis=0)
    return np.sum(np.vstack([joined, np.sin(joined)]) ** 2) + np.sum(pair[1][:, 0] ** 2 * w)


def cases():
    rs = npr.RandomState(0)
    params = [(rs.randn(3, 4) * 0.5, rs.randn(4) * 0.1), (rs.randn(4, 2) * 0.5, rs.randn(2) * 0.1)]
    inputs, targets = rs.randn(5, 3), np.eye(2)[rs.randint(0, 2, 5)]
    mean, log_std, samples = rs.randn(3), rs.randn(3) * 0.1, rs.randn(4, 3)
    named = {"w": rs.randn(2, 2), "a": [rs.randn(3), 0.5]}
    return [(log_posterior, (params, inputs, targets)), (l2_norm, (named,)),
            (gaussian_entropy_objective, (mean, log_std, samples)),
            (stacked_pairs, (rs.randn(3, 3), rs.randn(2)))]

"""Code written for HIPS autograd: `import autograd.numpy as np` and autograd's SciPy wrappers.

tapegen follows autograd's wrappers as the NumPy and SciPy functions they wrap (tests/test_autograd_code.py).
"""
from functools import partial

import autograd.numpy as np
import autograd.numpy.random as npr
import autograd.scipy.stats.norm as norm
from autograd.builtins import tuple as ag_tuple
from autograd.extend import defjvp, defvjp, primitive
from autograd.misc.fixed_points import fixed_point
from autograd.misc.flatten import flatten
from autograd.scipy.special import logsumexp

import tapegen as tg


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


@primitive
def logsumexp_primitive(x):
    """autograd's examples/define_gradient.py: a function autograd does not look inside, with its own VJP."""
    max_x = np.max(x)
    return max_x + np.log(np.sum(np.exp(x - max_x)))


def logsumexp_vjp(ans, x):
    x_shape = x.shape
    return lambda g: np.full(x_shape, g) * np.exp(x - np.full(x_shape, ans))


defvjp(logsumexp_primitive, logsumexp_vjp)
defjvp(logsumexp_primitive, lambda g, ans, x: np.sum(g * np.exp(x - ans)))


def example_func(y):
    z = y ** 2
    lse = logsumexp_primitive(z)
    return np.sum(lse)


@primitive
def clipped(x):
    return np.clip(x, -1.0, 1.0)


defvjp(clipped, lambda ans, x: lambda g: g)  # straight through: the declared gradient is not clip's


def straight_through(x):
    return np.sum(clipped(x) ** 2)


@primitive
def weighted_product(x, y, g=2.0):
    """A primitive whose parameters are called y and g (the names tapegen's rules give the output and its
    cotangent): passed by position and by keyword."""
    return g * x * y


defvjp(weighted_product, lambda ans, x, y, g=2.0: lambda v: v * g * y,
       lambda ans, x, y, g=2.0: lambda v: v * g * x, lambda ans, x, y, g=2.0: lambda v: np.sum(v * x * y))
defjvp(weighted_product, lambda d, ans, x, y, g=2.0: d * g * y, lambda d, ans, x, y, g=2.0: d * g * x,
       lambda d, ans, x, y, g=2.0: d * x * y)


def products_with_y_and_g(x, y, g):
    return np.sum(weighted_product(x, y) + weighted_product(x, g=g, y=y) ** 2 + weighted_product(x, y, g))


@primitive
def doubled_rows(x, w):
    """Linear in x: autograd's `defjvp(f, "same")` says its tangent is f of the tangent."""
    return 2.0 * x * w[:, None]


defvjp(doubled_rows, lambda ans, x, w: lambda g: 2.0 * g * w[:, None],
       lambda ans, x, w: lambda g: np.sum(2.0 * g * x, axis=1))
defjvp(doubled_rows, "same", "same")


@primitive
def rounded_shift(x, offset):
    """Its derivative in `offset` is declared zero with None (np.round is flat almost everywhere)."""
    return x * x + np.round(offset)


defvjp(rounded_shift, lambda ans, x, offset: lambda g: 2.0 * g * x, None)
defjvp(rounded_shift, lambda d, ans, x, offset: 2.0 * d * x, None)


def zero_declared_derivatives(x, offset):
    return np.sum(np.sin(rounded_shift(x, offset)) * offset)


def linear_primitives(x, w):
    """A primitive of the user's and autograd's own np.make_diagonal, both with JVPs declared "same"."""
    return np.sum(np.sin(doubled_rows(x, w)) + np.make_diagonal(np.tanh(x[0]), axis1=-1, axis2=-2) ** 2)


def flattened_inside(params):
    """autograd.misc.flatten called in the differentiated function; its unflatten too."""
    flat, unflatten = flatten(params)
    p = unflatten(flat * 2.0)
    return np.sum(p["a"] ** 2) + np.sum(p["b"][0] * p["b"][1]) + np.sum(flat ** 3)


def mixture_objective(params, scale):
    """gmm.py's shape of objective, flattened by autograd's flatten_func before it is differentiated."""
    return np.sum(np.tanh(params["means"]) ** 2) * scale + np.sum(np.sin(params["chol"][0])) * params["chol"][1]


def grad_descent_sqrt_iter(a):
    """autograd's examples/fixed_points.py: a helper returning the update, a lambda closing over `a`."""
    return lambda x: x - 0.05 * (x ** 2 - a)


def distance(x, y):
    return np.abs(x - y)


def fixed_point_sqrt(a, guess=10.0):
    """autograd's examples/fixed_points.py: autograd's fixed_point, a primitive with a VJP of the library's."""
    return fixed_point(grad_descent_sqrt_iter, a, guess, distance, 1e-4)


def iterated_sqrt(a, guess=1.5):
    step = grad_descent_sqrt_iter(a)
    x = guess
    for _ in range(8):
        x = step(x)
    return np.sum(x)


def scaled_sines(scale):
    def sines(x):
        return np.sin(x) * scale
    return sines


def helper_made_def(x, w):
    return np.sum(scaled_sines(w)(x) ** 2)


def sequence_log_lik(natural_params, seq):
    log_pi, log_A = natural_params
    log_alpha = log_pi
    for y in seq:
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_pi * y
    return logsumexp(log_alpha)


def total_log_lik(natural_params, seqs):
    """autograd's examples/hmm_em.py's sum over sequences, through functools.partial."""
    return sum(map(partial(sequence_log_lik, natural_params), seqs))


def derivative(f, argnum=0):
    """What code written for autograd calls `grad`: a helper returning a gradient function."""
    return tg.grad(f, wrt=argnum)


def negbin_like(r, p, x):
    return np.sum(r * np.log(p + x) + x * np.log(1 - p) - np.log(r + x))


def stationarity(r, x):
    """autograd's examples/negative_binomial_maxlike.py: the derivative of a likelihood, itself differentiated."""
    p = np.sum(x) / np.sum(r + x)
    return derivative(negbin_like)(r, p, x)


def nn_predict(params, inputs, nonlinearity=np.tanh):
    """autograd's examples/neural_net_regression.py: autograd's np.tanh as a default argument."""
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = nonlinearity(outputs)
    return outputs


def autograd_builtins(x):
    pair = ag_tuple((x, 2.0 * x))
    return np.sum(pair[0] * pair[1])


def low_rank_pinv(x):
    """autograd's test_linalg: its own helpers np.linalg._dot (a partial of einsum) and np.linalg.T."""
    return np.sum(np.linalg.pinv(np.linalg._dot(np.linalg.T(x), x)) ** 2)


def cases():
    rs = npr.RandomState(0)
    params = [(rs.randn(3, 4) * 0.5, rs.randn(4) * 0.1), (rs.randn(4, 2) * 0.5, rs.randn(2) * 0.1)]
    inputs, targets = rs.randn(5, 3), np.eye(2)[rs.randint(0, 2, 5)]
    mean, log_std, samples = rs.randn(3), rs.randn(3) * 0.1, rs.randn(4, 3)
    named = {"w": rs.randn(2, 2), "a": [rs.randn(3), 0.5]}
    natural = (rs.randn(3) * 0.3, rs.randn(3, 3) * 0.3)
    seqs = [rs.randn(4), rs.randn(2)]
    return [(log_posterior, (params, inputs, targets)), (l2_norm, (named,)),
            (gaussian_entropy_objective, (mean, log_std, samples)),
            (stacked_pairs, (rs.randn(3, 3), rs.randn(2))), (low_rank_pinv, (rs.randn(4, 2),)),
            (example_func, (rs.randn(4),)), (iterated_sqrt, (np.array([2.0, 3.0]),)),
            (helper_made_def, (rs.randn(3), 0.7)), (total_log_lik, (natural, seqs)),
            (stationarity, (1.3, np.array([3.0, 5.0, 1.0]))), (nn_predict, (params, inputs)),
            (products_with_y_and_g, (rs.randn(3), rs.randn(3), 0.7)),
            (flattened_inside, ({"a": rs.randn(2), "b": [rs.randn(1), 0.5]},)),
            (linear_primitives, (rs.randn(3, 3), rs.randn(3))),
            (zero_declared_derivatives, (rs.randn(3), np.array([0.3, 1.2, -0.8])))]

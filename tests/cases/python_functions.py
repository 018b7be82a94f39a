"""Python as people write it (issue 15): each function uses idioms of published NumPy model code.

tests/test_python_features.py checks each in grad, vjp, jvp and grad-of-grad.
"""
import math
import warnings
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

Params = namedtuple("Params", "W b")


@dataclass
class Affine:
    W: np.ndarray
    b: np.ndarray
    name: str = "affine"


def mlp_over_pairs(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def enumerate_zip(w, xs, ys):
    total = 0.0
    for t, (x, y) in enumerate(zip(xs, ys)):
        total = total + (t + 1.0) * np.sum((x * w - y) ** 2)
    return total


def zip_star(w, pairs):
    total = 0.0
    for a, b in zip(*pairs):
        total = total + np.sum(a * w * b)
    return total


def dict_items_loop(params, x):
    total = 0.0
    for name, value in params.items():
        total = total + np.sum(np.sin(value) * x) * len(name)
    return total


def comprehensions(Ws, h):
    hs = [np.tanh(W @ h) for W in Ws]
    penalty = sum(np.sum(W ** 2) for W in Ws)
    scaled = {k: v * 2.0 for k, v in enumerate(hs) if k > 0}
    pairs = [[h[i] * h[j] for j in range(3) if j != i] for i in range(3)]
    return np.sum(np.stack(hs) ** 2) + 0.1 * penalty + np.sum(scaled[1]) + np.sum(np.array(pairs))


def builtins_and_math(x, s):
    a = abs(x[0]) + pow(x[1], 2) + max(x[0], x[1], 0.1) + min(x) + round(1.7) * x[2] + len(x) * x[0]
    b = math.exp(s) + math.log(s) + math.sqrt(s) + math.sin(s) * math.cos(s) + math.tanh(s) + math.pi * s
    return a + b + math.log(s, 2) + sum(x) + sum([x[0], x[1]], 1.0)


def apply(f, x):
    return f(x) * 2.0


def layer(x, W, act=np.tanh):
    return act(x @ W)


def functions_as_values(W, x):
    tanh = np.tanh
    pi, sqrt = np.pi, np.sqrt
    h = layer(x, W) + layer(x, W, act=np.sin) + apply(np.cos, x @ W)
    return np.sum(tanh(h) * pi + sqrt(h * h + 1.0))


def total(*arrays, scale=1.0, **extra):
    result = 0.0
    for a in arrays:
        result = result + np.sum(a * scale)
    return result + extra["bias"] * len(arrays)


def through(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def star_arguments(x, y, *, scale=2.0):
    args = (x, y * x)
    opts = {"bias": np.sum(y)}
    return total(*args, scale=scale, **opts) + through(np.dot, x, y) + through(total, x, bias=1.0)


def check_vector(x):
    if x.ndim != 1:
        raise ValueError(f"expected a vector, got {x.ndim} dimensions")
    assert np.all(np.isfinite(x)), "x must be finite"
    return x * 2.0


class Dense:
    def __init__(self, W, activation=np.tanh):
        self.W = W
        self.act_fn = activation

    def forward(self, X):
        self.n_in = X.shape[1]
        self.Z = X @ self.W
        return self.act_fn(self.Z)


def statements_and_objects(w, X):
    a = b = check_vector(w)
    print(f"a[0] = {a[0]:.3f}, shape {b.shape!r}")
    with np.errstate(divide="ignore"), warnings.catch_warnings():
        c = np.log(a * a + 1.0)
    if -10.0 < w[0] < 10.0:
        c = c * 2.0
    dense = Dense(np.eye(3) * 0.5)
    out = dense.forward(X * w)
    del a
    return np.sum(c) + np.sum(out) + np.sum(dense.Z ** 2) + dense.n_in


def writes_into_arguments(x, v):
    x[0] = v[0] * v[1]
    for i in range(1, 3):
        x[i] = x[i - 1] * v[i]
    v += 1.0
    return np.sum(x * v)


def namedtuple_parameters(p, x):
    return np.sum(np.tanh(x @ p.W + p.b)) + np.sum(p[0] * 2.0)


def dataclass_parameters(layer_params, x):
    return np.sum(np.tanh(x @ layer_params.W + layer_params.b) ** 2)


seed = np.array([1.0, 2.0, 0.5])
tape = 3.0
shape = (3,)


def unbroadcast(x):
    return x * 2.0


def names_like_generated_ones(x):
    return np.sum(unbroadcast(x * seed) * tape) + np.sum(np.ones(shape) * x)

"""Functions for the inspection, export and command-line tests (golden output depends on these lines)."""
import numpy as np


def seed_example(x1, x2):
    return (x1 + x2) * np.sin(x1)


def tanh_layer(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


def looped(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sin(x) * i
    if np.sum(s) > 0:
        s = s * 2.0
    return np.sum(s)


def params_loss(params, x):
    h = np.tanh(x @ params["W"])
    return np.sum(h ** 2) + np.sum(np.linalg.inv(params["A"]))


WEIGHTS = np.array([0.5, -1.0, 2.0])
PIECES = [np.ones(3)]


def reads_global_array(x):
    return np.sum(np.exp(x * WEIGHTS))


def reads_global_list(x):
    return np.sum(x * PIECES[0])


def assigns_rows(a, v):
    b = a * 1.0
    c = np.sin(b)  # its rule reads b: the backward pass restores the row `b[1] = ...` overwrote
    b[1] = v * 3.0
    return np.sum(np.sort(b, axis=1) ** 2) + np.sum(c)


RNG = np.random.default_rng(0)


def reads_generator(x):
    return np.sum(x * RNG.normal(size=3))

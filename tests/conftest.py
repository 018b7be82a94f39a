"""Shared test helpers: finite-difference oracles in float64.

Every first call of a gradient in the tests also runs the shape-specialized code and checks it
against the general code (tapegen.api raises InternalError on any difference).
"""
import os

os.environ.setdefault("TAPEGEN_CHECK_SPECIALIZED", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


def numeric_vjp(f, args, position, cotangent, eps=1e-6):
    """<cotangent, d f(args) / d args[position]> by central differences, shaped like the argument."""
    x = np.asarray(args[position], dtype=float)
    grad = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        plus, minus = list(args), list(args)
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        plus[position] = xp if np.ndim(args[position]) else float(xp)
        minus[position] = xm if np.ndim(args[position]) else float(xm)
        diff = (np.asarray(f(*plus), dtype=float) - np.asarray(f(*minus), dtype=float)) / (2 * eps)
        grad[i] = np.sum(diff * cotangent)
    return grad


@pytest.fixture
def rng():
    return np.random.default_rng(0)

"""The worked examples of the source documents (shared/seeds), as tests."""
import numpy as np
import pytest

import tapegen as tg
from conftest import numeric_vjp


def test_affine_square_gives_42_28_14():
    def y(W, x, b):
        return (W * x + b) ** 2
    assert tg.grad(y, wrt=("W", "x", "b"))(2.0, 3.0, 1.0) == (42.0, 28.0, 14.0)


def test_sum_times_sine_gives_2_463_and_0_8415():
    def f(x1, x2):
        return (x1 + x2) * np.sin(x1)
    d1, d2 = tg.grad(f, wrt=(0, 1))(1.0, 2.0)
    assert d1 == pytest.approx(2.463, abs=1e-3)  # the seed rounds 2.4624 to 2.463
    assert d2 == pytest.approx(0.8415, abs=5e-5)
    assert d1 == pytest.approx(np.sin(1.0) + 3.0 * np.cos(1.0), rel=1e-14)


def test_log_of_sine_square_plus_exp():
    def f(x):
        return np.log(np.sin(x ** 2) + np.exp(x))
    x = 1.5
    expected = (2 * x * np.cos(x ** 2) + np.exp(x)) / (np.sin(x ** 2) + np.exp(x))
    assert tg.grad(f)(x) == pytest.approx(expected, rel=1e-14)
    assert tg.grad(f)(x) == pytest.approx(float(numeric_vjp(f, (x,), 0, 1.0)), rel=1e-8)


def test_product_plus_times_exp():
    def f(x1, x2, x3):
        return (x1 * x2 + x3) * np.exp(-x1)
    grads = tg.grad(f, wrt=(0, 1, 2))(1.0, 2.0, 3.0)
    e = np.exp(-1.0)
    assert grads == pytest.approx((2 * e - (2 + 3) * e, 1.0 * e, e), rel=1e-14)
    for i in range(3):
        assert grads[i] == pytest.approx(float(numeric_vjp(f, (1.0, 2.0, 3.0), i, 1.0)), rel=1e-7)

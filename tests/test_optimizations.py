"""Optimization passes on generated code keep gradients exact (issue 7).

Each pass is checked two ways: the gradient still matches central differences
in float64 (first call: general code; second call: code specialized to the
arguments' shapes), and the generated source shows the pass acted, or, in the
cases it must leave alone, that it did not.
"""
import re

import numpy as np
import pytest

import tapegen as tg
from conftest import numeric_vjp


def _check(f, args, wrt=0, rtol=1e-6, atol=1e-8):
    """tapegen's gradient of scalar `f` against central differences, on the general and the specialized code."""
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    grad = tg.grad(f, wrt=wrt)
    for _ in range(2):  # the second call runs the code specialized to these shapes
        got = grad(*args)
        got = got if isinstance(wrt, tuple) else (got,)
        for g, i in zip(got, indices):
            np.testing.assert_allclose(g, numeric_vjp(f, args, i, 1.0), rtol=rtol, atol=atol)


# --- shift invariance: no gradient through a maximum that only shifts (invariance.py) ---------


def log_softmax_xent(W, x, Y):
    logits = x @ W
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * logp, axis=1))


def softmax_normalized(a, w):
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return np.sum(p * w)


def log_softmax_all_axes(a, w):
    z = a - np.max(a)
    return np.sum(w * (z - np.log(np.sum(np.exp(z)))))


def log_softmax_mean_shift(a, w):
    z = a - np.mean(a, axis=0, keepdims=True)
    lse = np.log(np.mean(np.exp(z), axis=0, keepdims=True))
    return np.sum(w * np.tanh(z - lse))


def log_softmax_two_axes(a, w):
    z = a - np.amin(a, axis=(1, 2), keepdims=True)
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=(1, 2), keepdims=True))))


SHIFT_INVARIANT = [
    (log_softmax_xent, lambda r: (r.normal(size=(5, 4)), r.normal(size=(6, 5)), np.eye(4)[r.integers(0, 4, 6)]),
     "max"),
    (softmax_normalized, lambda r: (r.normal(size=(3, 5)), r.normal(size=(3, 5))), "max"),
    (log_softmax_all_axes, lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4))), "max"),
    (log_softmax_mean_shift, lambda r: (r.normal(size=(4, 3)), r.normal(size=(4, 3))), "mean"),
    (log_softmax_two_axes, lambda r: (r.normal(size=(2, 3, 4)), r.normal(size=(2, 3, 4))), "amin"),
]


@pytest.mark.parametrize("f, make, reduction", SHIFT_INVARIANT, ids=[c[0].__name__ for c in SHIFT_INVARIANT])
def test_a_shift_that_cancels_gets_no_gradient(f, make, reduction, rng):
    args = make(rng)
    _check(f, args)
    for code in (tg.source(f), tg.source(f, args=args)):
        forward, backward = code.split("# backward pass")
        shift = _assigned_from(forward, reduction)  # the reduction still runs: the value needs it
        assert f"g_{shift} " not in backward and "extremum_share" not in backward


def _assigned_from(code, reduction):
    """The name the first line computing a reduction assigns (`t2 = np.max(...)` or `t2 = a.max(...)` -> "t2")."""
    name = re.findall(rf"^ *(\w+) = (?:np\.{reduction}\(|\w+\.{reduction.lstrip('a')}\()", code, re.M)[0]
    return name


def lse_returned(a, w):
    m = np.max(a, axis=1, keepdims=True)
    return np.sum(w[:, :1] * (m + np.log(np.sum(np.exp(a - m), axis=1, keepdims=True))))


def shift_also_used_directly(a, w):
    z = a - np.max(a, axis=1, keepdims=True)
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=1, keepdims=True)))) + np.sum(z * z)


def reduced_along_another_axis(a, w):
    z = a - np.max(a, axis=1, keepdims=True)
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=0, keepdims=True))))


def reduced_without_keepdims(a, w):
    z = a - np.max(a, axis=1, keepdims=True)
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=1))[:, None]))


def scaled_before_the_softmax(a, w):
    z = 2.0 * (a - np.max(a, axis=1, keepdims=True))
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))))


def max_without_keepdims(a, w):
    z = a - np.max(a, axis=1)
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))))


def negative_axis_against_positive(a, w):
    z = a - np.max(a, axis=-1, keepdims=True)
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))))


def shifted_value_in_a_loop(a, w):
    z = a - np.max(a, axis=1, keepdims=True)
    total = 0.0
    for k in range(2):
        total = total + np.sum(w * z) * k
    return total + np.sum(w * (z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))))


def shift_subtracted_from(a, w):
    z = np.max(a, axis=1, keepdims=True) - a
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))))


NOT_INVARIANT = [lse_returned, shift_also_used_directly, reduced_along_another_axis, reduced_without_keepdims,
                 scaled_before_the_softmax, max_without_keepdims, negative_axis_against_positive,
                 shifted_value_in_a_loop, shift_subtracted_from]


@pytest.mark.parametrize("f", NOT_INVARIANT, ids=[f.__name__ for f in NOT_INVARIANT])
def test_a_shift_that_does_not_cancel_keeps_its_gradient(f, rng):
    args = (rng.normal(size=(3, 3)), rng.normal(size=(3, 3)))
    _check(f, args)
    if f not in (max_without_keepdims, shift_subtracted_from):  # (3,) against (3, 3): still not invariant
        assert "extremum_share" in tg.source(f)


def test_the_cut_is_exact_where_the_maximum_is_tied(rng):
    a = np.array([[1.0, 1.0, 0.5], [0.2, 3.0, 3.0]])  # ties: the maximum itself is not differentiable here
    w = rng.normal(size=(2, 3))
    _check(softmax_normalized, (a, w))


# --- broadcasts left unbroadcast (codegen/broadcasts.py) ---------------------------------------


def _specialized(f, args, wrt=0):
    return tg.source(f, wrt=wrt, args=args)


def mean_of_squares(W, x, y):
    return np.mean((np.tanh(x @ W) - y) ** 2)


def row_sums_squared(x, y):
    return np.sum(np.sum(x * y, axis=1) ** 2)


def row_sums_kept(x, y):
    return np.sum(np.log(np.sum(np.exp(x) * y, axis=1, keepdims=True)))


def mean_of_a_broadcast_product(x, b):
    return np.mean(x * b)  # x (3, 4), b (4,): the mean's cotangent meets b, which is smaller


def mean_added(x):
    return np.sum(np.tanh(x + np.mean(x)))


def test_a_mean_cotangent_stays_a_scalar(rng):
    args = (rng.normal(size=(4, 3)), rng.normal(size=(5, 4)), rng.normal(size=(5, 3)))
    _check(mean_of_squares, args)
    code = _specialized(mean_of_squares, args)
    assert "np.full" not in code and "g_t4 = g_t5 / 15" in code  # one scalar instead of a (5, 3) array
    assert "unreduce(g_t5, t4_shape" in tg.source(mean_of_squares)  # the general code does not know the shape


def test_a_row_sum_cotangent_is_broadcast_by_the_product(rng):
    args = (rng.normal(size=(4, 3)), rng.uniform(0.5, 1.5, size=(4, 3)))
    for f, small in ((row_sums_squared, "[:, None]"), (row_sums_kept, "g_t2 = g_t3\n")):
        _check(f, args, wrt=(0, 1))
        code = _specialized(f, args, wrt=(0, 1))
        assert small in code and "unreduce" not in code, code


@pytest.mark.parametrize("f, shapes", [(mean_of_a_broadcast_product, [(3, 4), (4,)]), (mean_added, [(3, 4)])])
def test_a_broadcast_needed_in_full_is_kept(f, shapes, rng):
    args = tuple(rng.normal(size=s) for s in shapes)
    _check(f, args, wrt=tuple(range(len(args))))
    code = _specialized(f, args, wrt=tuple(range(len(args))))
    assert "np.full((3, 4)" in code
    grads = tg.grad(f, wrt=tuple(range(len(args))))(*args)
    assert [g.shape for g in grads] == shapes


# --- reductions as ndarray methods (codegen/reductions.py) --------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reductions_written_as_methods_give_the_same_values(dtype, rng):
    args = tuple(a.astype(dtype) for a in (rng.normal(size=(4, 3)), rng.normal(size=(5, 4)),
                                           np.eye(3)[rng.integers(0, 3, 5)]))
    f = log_softmax_xent
    code = "\n".join(line for line in _specialized(f, args).splitlines() if not line.lstrip().startswith("#"))
    assert "np.sum(" not in code and "np.max(" not in code and "np.mean(" not in code
    assert ".max(axis=1, keepdims=True)" in code and ".sum() / 5" in code and "-g_logp.sum(axis=1" in code
    value_and_grad = tg.value_and_grad(f)
    first, second = value_and_grad(*args), value_and_grad(*args)  # general, then specialized code
    assert first[0] == second[0] and type(first[0]) is type(second[0]) and first[0].dtype == dtype
    np.testing.assert_allclose(second[1], first[1], rtol=1e-12 if dtype == np.float64 else 1e-5)
    assert second[1].dtype == dtype
    if dtype == np.float64:
        _check(f, args)


def test_a_mean_of_integers_is_left_to_numpy(rng):
    def f(x, k):
        return np.sum(x) * np.mean(k)

    args = (rng.normal(size=3), np.arange(4))
    _check(f, args)
    assert "np.mean(k)" in _specialized(f, args)

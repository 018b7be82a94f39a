"""Optimization passes on generated code keep gradients exact (issue 7).

Each pass is checked two ways: the gradient still matches central differences
in float64 (first call: general code; second call: code specialized to the
arguments' shapes), and the generated source shows the pass acted, or, in the
cases it must leave alone, that it did not.
"""
import ast
import re

import numpy as np
import pytest
import scipy.special

import tapegen as tg
from conftest import numeric_vjp
from modes import check_modes


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


def log_softmax_reindexed(a, w):
    z = a - a.max(axis=1)[:, None]
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=1))[:, None]))


def softmax_max_subtracted_twice(a, w):
    m = np.max(a, axis=1, keepdims=True)
    p = np.exp(a - m) / np.sum(np.exp(a - m), axis=1, keepdims=True)
    return np.sum(w * p)


def softmax_max_written_twice(a, w):
    p = np.exp(a - a.max(axis=1, keepdims=True)) / np.exp(a - a.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)
    return np.sum(w * np.log(p))


def logsumexp_kept(a, w):
    m = np.max(a, axis=1, keepdims=True)
    return np.sum(w[:, :1] * (m + np.log(np.sum(np.exp(a - m), axis=1, keepdims=True))))


def logsumexp_reduced(a, w):
    m = np.max(a, axis=-1)
    lse = m + np.log(np.sum(np.exp(a - m[..., None]), axis=-1))
    return np.sum(w[:, 0] * lse)


def logsumexp_expand_dims(a, w):
    m = a.max(axis=1)
    lse = m + np.log(np.exp(a - np.expand_dims(m, 1)).sum(axis=1))
    return np.sum(np.tanh(lse) * w[:, 0]) + np.sum(w * np.exp(a - lse[:, None]))


def softmax_with_temperature(a, w):
    z = 2.0 * (a - np.max(a, axis=1, keepdims=True)) / 3.0
    return np.sum(w * (-z + np.log(np.sum(np.exp(z), axis=1, keepdims=True))))


def softmax_divided_by_its_sum(a, w):
    e = np.exp(-(np.max(a, axis=0, keepdims=True) - a))
    return np.sum(w * np.log(1.0 / (e.sum(axis=0, keepdims=True) / e)))


SHIFT_INVARIANT = [
    (log_softmax_xent, lambda r: (r.normal(size=(5, 4)), r.normal(size=(6, 5)), np.eye(4)[r.integers(0, 4, 6)]),
     "max"),
    (softmax_normalized, lambda r: (r.normal(size=(3, 5)), r.normal(size=(3, 5))), "max"),
    (log_softmax_all_axes, lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4))), "max"),
    (log_softmax_mean_shift, lambda r: (r.normal(size=(4, 3)), r.normal(size=(4, 3))), "mean"),
    (log_softmax_two_axes, lambda r: (r.normal(size=(2, 3, 4)), r.normal(size=(2, 3, 4))), "amin"),
    (log_softmax_reindexed, lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4))), "max"),
    (softmax_max_subtracted_twice, lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4))), "max"),
    (softmax_max_written_twice, lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4))), "max"),
    (logsumexp_kept, lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4))), "max"),
    (logsumexp_reduced, lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4))), "max"),
    (logsumexp_expand_dims, lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4))), "max"),
    (softmax_with_temperature, lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4))), "max"),
    (softmax_divided_by_its_sum, lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4))), "max"),
]


@pytest.mark.parametrize("f, make, reduction", SHIFT_INVARIANT, ids=[c[0].__name__ for c in SHIFT_INVARIANT])
def test_a_shift_that_cancels_gets_no_gradient(f, make, reduction, rng):
    args = make(rng)
    _check(f, args)
    check_modes(f, *args, positions=[0])
    for code in (tg.source(f), tg.source(f, args=args)):
        forward, backward = code.split("# backward pass")
        shifts = _assigned_from(forward, reduction)  # the reductions still run: the values need them
        assert shifts and "extremum_share" not in backward
        assert not [shift for shift in shifts if f"g_{shift} " in backward]


def _assigned_from(code, reduction):
    """The names lines computing a reduction of the first one's array assign (`t2 = np.max(a, ...)` or
    `t2 = a.max(...)` -> "t2")."""
    method = reduction.lstrip("a")
    found = re.findall(rf"^ *(\w+) = (?:np\.{reduction}\((\w+)|(\w+)\.{method}\()", code, re.M)
    return [f[0] for f in found if f[1:] == found[0][1:]]


def shift_also_used_directly(a, w):
    z = a - np.max(a, axis=1, keepdims=True)
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=1, keepdims=True)))) + np.sum(z * z)


def reduced_along_another_axis(a, w):
    z = a - np.max(a, axis=1, keepdims=True)
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=0, keepdims=True))))


def reduced_without_keepdims(a, w):
    z = a - np.max(a, axis=1, keepdims=True)
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=1)))[:, None])  # (3, 3) - (3,): along the wrong axis


def scaled_before_the_softmax(a, w):
    z = 2.0 * (a - np.max(a, axis=1, keepdims=True))
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=1, keepdims=True)) / 2.0))


def reindexed_along_another_axis(a, w):
    z = a - a.max(axis=0)[:, None]
    return np.sum(w * (z - np.log(np.sum(np.exp(z), axis=0, keepdims=True))))


def temperature_not_a_number(a, w):
    z = (a - np.max(a, axis=1, keepdims=True)) * w[:, :1]
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


NOT_INVARIANT = [shift_also_used_directly, reduced_along_another_axis,
                 reduced_without_keepdims, scaled_before_the_softmax, max_without_keepdims,
                 negative_axis_against_positive, shifted_value_in_a_loop, shift_subtracted_from,
                 reindexed_along_another_axis, temperature_not_a_number]


@pytest.mark.parametrize("f", NOT_INVARIANT, ids=[f.__name__ for f in NOT_INVARIANT])
def test_a_shift_that_does_not_cancel_keeps_its_gradient(f, rng):
    args = (rng.normal(size=(3, 3)), rng.normal(size=(3, 3)))
    _check(f, args)
    if f not in (max_without_keepdims, shift_subtracted_from):  # (3,) against (3, 3): still not invariant
        assert "extremum_share" in tg.source(f)


def test_axes_named_both_ways_match_where_shapes_are_known(rng):
    args = (rng.normal(size=(3, 4)), rng.normal(size=(3, 4)))
    _check(negative_axis_against_positive, args)
    assert "extremum_share" in tg.source(negative_axis_against_positive)  # -1 and 1: the same axis only in 2-D
    forward, backward = tg.source(negative_axis_against_positive, args=args).split("# backward pass")
    assert "extremum_share" not in backward and not [s for s in _assigned_from(forward, "max") if f"g_{s} " in backward]


def scipy_spellings(a, w):
    return (np.sum(w[:, 0] * scipy.special.logsumexp(a, axis=1)) + np.sum(w * scipy.special.softmax(a, axis=-1))
            + np.sum(w * scipy.special.log_softmax(a, axis=1)))


def test_scipy_softmax_and_logsumexp_carry_no_gradient_through_a_maximum(rng):
    args = (rng.normal(size=(3, 4)), rng.normal(size=(3, 4)))
    check_modes(scipy_spellings, *args, positions=[0])
    for code in (tg.source(scipy_spellings), tg.source(scipy_spellings, args=args)):
        backward = code.split("# backward pass")[1]
        assert "extremum_share" not in backward and not re.search(r"\bn?a?max\b|\.max\(", backward)


def maximum_of_another_array(b, a3):
    z = a3 - np.max(b, axis=1, keepdims=True)  # (2, 3, 3) - (3, 1): the maximum is constant along axis 2
    return np.sum(a3 * (z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))))


def broadcast_to_more_dimensions(a, b3):
    z = a - np.max(a, axis=1, keepdims=True)
    w = z + b3  # (3, 3) + (2, 3, 3): z's axis 1 is w's axis 2
    return np.sum(b3 * (w - np.log(np.sum(np.exp(w), axis=1, keepdims=True))))


@pytest.mark.parametrize("f", [maximum_of_another_array, broadcast_to_more_dimensions])
def test_a_shift_whose_axes_a_broadcast_moves_keeps_its_gradient(f, rng):
    args = (rng.normal(size=(3, 3)), rng.normal(size=(2, 3, 3)))
    _check(f, args)
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


def sum_to_a_scalar(a):
    return np.sum(np.sin(a), axis=0)


def sum_over_both_axes(a):
    return np.sum(a, axis=(0, 1))


@pytest.mark.parametrize("f, shape", [(sum_to_a_scalar, (2,)), (sum_over_both_axes, (2, 3))])
def test_a_returned_broadcast_gradient_is_a_full_array(f, shape, rng):
    """Found by the fuzzer: a gradient that is a reduction's spread cotangent, returned as it is."""
    a = rng.normal(size=shape)
    _check(f, (a,))
    grad = tg.grad(f)
    for _ in range(2):
        g = grad(a)
        assert type(g) is np.ndarray and g.shape == shape and g.flags.writeable


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


# --- writing into dead buffers (codegen/buffers.py) ----------------------------------------------

BIG = 40_000  # float64 elements: 320 KB, over the 256 KiB below which buffers are not reused


def _directional_check(f, args, wrt, rng, eps=1e-6):
    """<grad, v> against the central difference of f along a random v: one check for a large input."""
    grad = tg.grad(f, wrt=wrt)
    for _ in range(2):  # general code, then the specialized code that reuses buffers
        kept = [np.copy(a) for a in args]
        g = grad(*args)
        for a, before in zip(args, kept):
            np.testing.assert_array_equal(a, before)  # the arguments are never written
        v = rng.normal(size=np.shape(args[wrt]))
        plus, minus = list(args), list(args)
        plus[wrt], minus[wrt] = args[wrt] + eps * v, args[wrt] - eps * v
        numeric = (f(*plus) - f(*minus)) / (2 * eps)
        np.testing.assert_allclose(np.sum(g * v), numeric, rtol=1e-6)


def chain(x):
    y = np.sin(x)
    y = np.tanh(y * x)
    z = np.cos(y) * y
    return np.sum(np.tanh(z))


def test_a_chain_writes_into_its_dead_arrays(rng):
    x = rng.uniform(-1.0, 1.0, BIG)
    _directional_check(chain, (x,), 0, rng)
    code = _specialized(chain, (x,))
    assert "y_1 = np.tanh(t1, out=t1)" in code
    assert "np.subtract(1, t3, out=t3)" in code  # the tanh backward: 1 - t3*t3 over t3's own array
    assert "out=" not in tg.source(chain)  # the general code does not know the sizes
    small = rng.uniform(-1.0, 1.0, 100)
    assert "out=" not in _specialized(chain, (small,))  # below the threshold a fresh array is cheaper


def tanh_layer(W, x):
    h = np.tanh(x @ W)
    return np.sum((h @ W.T) ** 2)


def test_a_transpose_consumed_on_the_spot_does_not_stop_reuse(rng):
    args = (rng.normal(size=(64, 64)) / 8, rng.normal(size=(512, 64)))  # h: 512 x 64 floats, 256 KiB
    _directional_check(tanh_layer, args, 0, rng)
    code = _specialized(tanh_layer, args)
    assert "h.T @" in code and "np.subtract(1, h, out=h)" in code


def transposed_view(x):
    y = np.sin(x)
    z = y.T
    w = np.tanh(y)
    return np.sum(w * z.T) + np.sum(z)


def reshaped_view(x):
    y = np.sin(x)
    z = y.reshape(-1)
    w = np.exp(y)
    return np.sum(w) + np.sum(z * z)


def sliced_view(x):
    y = np.cos(x)
    head = y[:10]
    w = np.tanh(y)
    return np.sum(w) * np.sum(head)


def aliased(x):
    y = np.sin(x)
    a = y
    w = np.tanh(y)
    return np.sum(w * a)


def in_a_list(x):
    y = np.sin(x)
    parts = [y, x]
    w = np.tanh(y)
    return np.sum(np.stack(parts) ** 2) + np.sum(w)


def mixed_dtypes(x, s):
    y = np.sin(x)
    z = y * s  # float32 * float64: float64
    w = np.tanh(y)
    return np.sum(z) + np.sum(w)


ALIASING = [transposed_view, reshaped_view, sliced_view, aliased, in_a_list]


@pytest.mark.parametrize("f", ALIASING, ids=[f.__name__ for f in ALIASING])
def test_an_array_something_else_may_refer_to_is_never_overwritten(f, rng):
    x = rng.uniform(-1.0, 1.0, (200, 200))  # 320 KB
    _directional_check(f, (x,), 0, rng)
    forward = _specialized(f, (x,)).split("# backward pass")[0]
    assert "out=y)" not in forward  # y is referred to by a view, another name or a list when it dies


def test_buffers_keep_their_dtype(rng):
    x = rng.uniform(-1.0, 1.0, 2 * BIG).astype(np.float32)
    s = rng.uniform(-1.0, 1.0, 2 * BIG)
    g = tg.grad(mixed_dtypes)
    first, second = g(x, s), g(x, s)
    assert first.dtype == second.dtype == np.float32
    np.testing.assert_allclose(second, first, rtol=1e-6)


def test_auxiliary_outputs_are_never_overwritten(rng):
    def f(x):
        y = np.sin(x)
        w = np.tanh(y * x)
        return np.sum(w * w), {"y": y, "w": w}

    x = rng.uniform(-1.0, 1.0, BIG)
    g = tg.grad(f, has_aux=True)
    for _ in range(3):
        grad, aux = g(x)
        np.testing.assert_array_equal(aux["y"], np.sin(x))
        np.testing.assert_array_equal(aux["w"], np.tanh(np.sin(x) * x))


def loop_chain(x, w):
    h = x
    for _ in range(3):
        h = np.tanh(h * w + x) + 0.5 * np.sin(h)
    return np.sum(h * h)


def loop_keeps_what_it_carries(x, w):
    h, keep = x, []
    for k in range(3):
        u = np.sin(h) * w
        keep.append(u)  # a list refers to u: never a buffer
        v = u + 1.0
        h = np.tanh(v) + h  # h carried into the next iteration and pushed on the tape
    return np.sum(h * h) + np.sum(keep[0] * keep[2])


def loop_around_a_branch(x, w):
    h = x
    for k in range(4):
        u = np.cos(h) * w
        if k % 2:
            h = u * 0.5 + h
        else:
            h = np.tanh(u + h)
    return np.sum(h * h)


@pytest.mark.parametrize("f, writes", [(loop_chain, True), (loop_keeps_what_it_carries, True),
                                      (loop_around_a_branch, False)])  # a branch's arms free nothing
def test_a_loop_body_writes_into_its_own_dead_arrays(f, writes, rng):
    args = (rng.uniform(-1.0, 1.0, BIG), rng.uniform(-1.0, 1.0, BIG))
    _directional_check(f, args, 0, rng)
    _directional_check(f, args, 1, rng)
    code = _specialized(f, args, wrt=(0, 1))
    loops = [line for line in code.splitlines() if line.startswith("        ") and "out=" in line]
    assert bool(loops) == writes  # inside a loop body (two indents)
    assert not re.search(r"out=(h|x|w|u|keep)\b", code)  # carried, pushed, popped, listed or an argument
    grads = tg.grad(f, wrt=(0, 1))
    first, second, third = grads(*args), grads(*args), grads(*args)  # general, then specialized, twice
    for a, b, c in zip(first, second, third):
        np.testing.assert_allclose(b, a, rtol=1e-12)
        np.testing.assert_array_equal(c, b)


# --- del inside loop bodies (liveness.py) ---------------------------------------------------------


def temporary_read_after_the_loop(x):
    t = x
    for k in range(3):
        t = np.sin(x) * (k + 1)
        x = x + 0.1 * t
    return np.sum(x * t)


def temporary_around_a_break(x):
    t = x
    for k in range(5):
        u = np.tanh(x)
        t = u * 2.0
        if np.sum(t) > 10.0:
            break
        x = x + u
    return np.sum(x) + np.sum(t)


@pytest.mark.parametrize("f", [temporary_read_after_the_loop, temporary_around_a_break])
def test_loop_temporaries_are_freed_only_after_their_last_use(f, rng):
    x = rng.uniform(0.5, 1.0, 4)
    _check(f, (x,))
    for code in (tg.source(f), tg.source(f, args=(x,))):
        body = _loop_body(code.split("# backward pass")[0])
        deleted = {name.strip() for line in body if line.strip().startswith("del ")
                   for name in line.strip()[4:].split(",")}
        assert not deleted & {"t", "x", "x_1", "u"}  # never what is read after the loop or carried
    assert _loop_body(tg.source(f).split("# backward pass")[0]) != []
    assert any(line.strip().startswith("del ") for line in _loop_body(tg.source(f).split("# backward pass")[0]))


def _loop_body(code):
    """The lines of the first `for` loop's body in generated code."""
    lines = code.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("for "))
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for line in lines[start + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return body


# --- the tape keeps only what the backward pass reads (reverse.py, tape.py) -----------------------


def residual_loop(x):
    h = x
    for _ in range(4):
        h = h + 0.1 * np.tanh(h)
    return np.sum(h * h)


def loop_of_constants(x):
    h = x
    for _ in range(3):
        h = np.sin(h)
    c = 2.0
    for _ in range(2):
        c = c * 1.5
    return np.sum(h * c)


def restored_for_the_code_before_the_loop(x):
    h = x * x
    y = np.sum(np.sin(h))
    for _ in range(3):
        h = h + 0.1 * np.tanh(h)
    return y + np.sum(h * h)


def restored_in_a_nested_loop(x):
    h = x
    for i in range(2):
        for _ in range(2):
            h = h * 0.5 + np.cos(h)
        h = h + 0.1 * np.tanh(h)
    return np.sum(h * h)


@pytest.mark.parametrize("f, pushed", [(residual_loop, set()), (loop_of_constants, {"h"}),
                                       (restored_for_the_code_before_the_loop, {"h"}),
                                       (restored_in_a_nested_loop, {"h"})])
def test_a_loop_saves_only_the_values_its_backward_pass_reads(f, pushed, rng):
    x = rng.uniform(0.5, 1.0, 4)
    check_modes(f, x)
    for code in (tg.source(f), tg.source(f, args=(x,))):  # the general code saves h's shape, not h
        forward, backward = code.split("# backward pass")
        assert set(re.findall(r"tape\.append\(([hxc])\)", forward)) == pushed
        assert set(re.findall(r"([hxc]) = tape\.pop\(\)", backward)) == pushed


# --- loop accumulators start at zeros; private ones are added to in place (reverse.py, emit.py) -----


def rnn(Wx, Wh, xs):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    for x in xs:
        h = np.tanh(x @ Wx + h @ Wh)
    return np.sum(h * h)


def loop_on_a_derived_value(W, xs):
    V = W + 0.0  # V's cotangent accumulates in the loop, then flows to W (g_W is g_V): not private
    h = np.zeros((xs.shape[1], W.shape[0]))
    for x in xs:
        h = np.tanh(x @ V + h)
    return np.sum(h)


def test_loop_accumulators_start_at_zeros_and_add_in_place(rng):
    args = (rng.normal(size=(3, 4)) * 0.5, rng.normal(size=(4, 4)) * 0.5, rng.normal(size=(5, 2, 3)))
    _check(rnn, args, wrt=(0, 1))
    code = _specialized(rnn, args, wrt=(0, 1))
    assert "g_Wh = np.zeros((4, 4))" in code and "g_Wh += h" in code and "add_cotangents" not in code
    assert "add_cotangents" in tg.source(rnn, wrt=(0, 1))  # the general code does not know the shapes


def test_an_accumulator_something_else_reads_is_not_added_in_place(rng):
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 2, 3)))
    _check(loop_on_a_derived_value, args)
    code = _specialized(loop_on_a_derived_value, args)
    assert "g_V = np.zeros((3, 3))" in code and "g_V = g_V + " in code and "g_V +=" not in code


def test_a_float32_accumulator_stays_float32_and_is_not_added_in_place(rng):
    args = tuple(a.astype(np.float32) for a in (rng.normal(size=(3, 4)) * 0.5, rng.normal(size=(4, 4)) * 0.5,
                                                   rng.normal(size=(5, 2, 3))))
    code = _specialized(rnn, args, wrt=(0, 1))
    assert "np.zeros((4, 4), dtype=np.float32)" in code and "g_Wh +=" not in code
    grad = tg.grad(rnn, wrt=(0, 1))
    first, second = grad(*args), grad(*args)
    for a, b in zip(first, second):
        assert a.dtype == b.dtype == np.float32
        np.testing.assert_allclose(b, a, rtol=1e-6)


def nested_loops(W, xs):
    h = np.zeros((xs.shape[2], W.shape[0]))
    for block in xs:
        for x in block:
            h = np.tanh(x @ W + h)
    return np.sum(h * h)


def used_inside_and_after_the_loop(W, xs):
    h = np.zeros((xs.shape[1], W.shape[0]))
    for x in xs:
        h = np.tanh(x @ W + h)
    return np.sum(h * h) + np.sum(W * W)


@pytest.mark.parametrize("f, shape", [(nested_loops, (2, 3, 2, 3)), (used_inside_and_after_the_loop, (4, 2, 3))])
def test_accumulators_across_nested_loops_and_outside_them(f, shape, rng):
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=shape))
    _check(f, args)
    _check(f, args)  # the cached specialized code, a third and fourth time


# --- common subexpressions (codegen/cse.py) -----------------------------------------------------


def sum_of_squares(x):
    h = np.tanh(x)
    return np.sum(h * h)


def test_a_repeated_contribution_is_computed_once(rng):
    x = rng.normal(size=(3, 4))
    _check(sum_of_squares, (x,))
    code = _specialized(sum_of_squares, (x,))
    assert "g_h = g_h + g_h" in code  # h * h: the two operands' contributions are the same product


def _cse(*lines):
    from tapegen.codegen.cse import reuse_common
    items = []
    for line in lines:
        if line.startswith("del "):
            items.append(("free", set(line[4:].split(", "))))
        elif line == "loop":
            items.append(("barrier", None))
        else:
            items.append(("stmt", ast.parse(line).body[0]))
    replaced = reuse_common(items)
    return [ast.unparse(ast.fix_missing_locations(replaced[i])) if i in replaced else line
            for i, line in enumerate(lines)]


@pytest.mark.parametrize("lines, expected", [
    (["a = x * y", "b = x * y + 1"], "b = a + 1"),
    (["a = np.sin(x)", "b = np.sin(x) * np.sin(x)"], "b = a * a"),
    (["a = x * y", "del a", "b = x * y"], "b = x * y"),  # deleted
    (["a = x * y", "x = z", "b = x * y"], "b = x * y"),  # an operand rebound
    (["a = x * y", "a = a + 1", "b = x * y"], "b = x * y"),  # the holder rebound
    (["h = h * 2", "k = h * 2"], "k = h * 2"),  # the holder is one of its own operands
    (["a = x * y", "loop", "b = x * y"], "b = x * y"),  # a branch or loop in between
    (["a = f(x)", "b = f(x)"], "b = f(x)"),  # not known to be pure
    (["a = np.random.rand(3)", "b = np.random.rand(3)"], "b = np.random.rand(3)"),
    (["a = x[0]", "b = x[0] * 2"], "b = x[0] * 2"),  # only arithmetic is matched
])
def test_common_subexpressions_are_reused_only_while_their_name_holds_them(lines, expected):
    assert _cse(*lines)[-1] == expected


# --- dtypes stay put ---------------------------------------------------------------------------


def _local_dtypes(function, args):
    """The dtypes of every array local to the generated code while `function(*args)` runs."""
    import sys
    seen = set()

    def tracer(frame, event, arg):
        if "specialized" in frame.f_code.co_filename:
            seen.update(v.dtype for v in frame.f_locals.values() if isinstance(v, (np.ndarray, np.generic)))
            return tracer
        return None

    sys.settrace(tracer)
    try:
        function(*args)
    finally:
        sys.settrace(None)
    return seen


@pytest.mark.parametrize("f, shapes", [(mean_of_squares, [(64, 32), (256, 64), (256, 32)]),
                                       (log_softmax_xent, [(64, 10), (256, 64), (256, 10)])])
def test_a_float32_gradient_computes_in_float32(f, shapes, rng):
    """No float64 inside the backward pass (autograd 1.9 slips into float64 in `mean`, doubling its time)."""
    args = tuple(rng.normal(size=s).astype(np.float32) for s in shapes)
    grad = tg.value_and_grad(f)
    grad(*args)  # the first call specializes
    assert _local_dtypes(grad, args) == {np.dtype(np.float32)}


# --- loop counts are not pinned by the guard (specialize.unpinned) --------------------------------


def recurrent(Wh, xs, h, n):
    for t in range(n):
        h = np.tanh(xs[t] + h @ Wh)
    return np.sum(h * h)


def prefix_squares(x, n):
    return np.sum(np.sin(x[:n]) ** 2)  # the slice's shape is the count's


def growing(x, n):
    h = x
    for t in range(n):
        h = np.concatenate([h, np.sin(h[-1:])])  # one longer each step: no shape holds across counts
    return np.sum(h * h)


def shrinking(x, n):
    h = x
    for t in range(n):
        h = h[1:]  # one shorter each step: a slice of h, its shape computed from h's by a fixed rule
    return np.sum(h * h)


def _guard(source):
    return next(line for line in source.splitlines() if line.strip().startswith("if not ("))


def _recurrent_args(rng, n):
    return rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(8, 2, 3)), rng.normal(size=(2, 3)), n


def test_a_loop_count_is_left_out_of_the_guard(rng):
    args = _recurrent_args(rng, 5)
    assert "type(n) is int" in _guard(_specialized(recurrent, args)) and "n ==" not in _guard(
        _specialized(recurrent, args))
    grad = tg.grad(recurrent)
    grad(*args)  # specializes at n = 5
    specialized = grad._fast
    specialized.__globals__["GENERIC"] = None  # any other count must run the specialized code itself
    for n in (5, 7, 1, 0, 8):
        call = args[:3] + (n,)
        np.testing.assert_allclose(grad(*call), numeric_vjp(recurrent, call, 0, 1.0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("first", [0, 1])
def test_other_counts_after_a_loop_that_did_not_run_or_ran_once(rng, first):
    args = _recurrent_args(rng, first)
    grad = tg.grad(recurrent)
    for n in (first, 3, first, 2):
        call = args[:3] + (n,)
        np.testing.assert_allclose(grad(*call), numeric_vjp(recurrent, call, 0, 1.0), rtol=1e-6, atol=1e-8)


def test_a_count_that_shapes_values_stays_in_the_guard(rng):
    x = rng.normal(size=6)
    assert "n == 3" in _guard(_specialized(prefix_squares, (x, 3)))  # x[:n] has n's shape
    grad = tg.grad(prefix_squares)
    for n in (3, 4, 3, 2):
        np.testing.assert_allclose(grad(x, n), numeric_vjp(prefix_squares, (x, n), 0, 1.0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("first", [0, 1, 2])  # recorded with the body not run, run once, run twice
@pytest.mark.parametrize("f", [growing, shrinking])
def test_a_loop_whose_shapes_change_each_step(f, first, rng):
    x = rng.normal(size=6)
    grad = tg.grad(f)
    for n in (first, 4, first, 0, 3):
        np.testing.assert_allclose(grad(x, n), numeric_vjp(f, (x, n), 0, 1.0), rtol=1e-6, atol=1e-8)

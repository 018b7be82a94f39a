"""Programs the fuzzer (tests/fuzz) found wrong, minimized, against central finite differences.

A test marked xfail(strict=True) is a bug in tapegen's core still open: it
turns into a failure when the bug is fixed, so the mark can be removed.
"""
import numpy as np
import pytest

import tapegen as tg
from conftest import numeric_vjp


def check(f, *args, modes=("grad", "vjp", "jvp")):
    """Value and derivatives of `f` at `args` by every mode, against the plain call and central differences."""
    expected = [numeric_vjp(f, args, k, 1.0) for k in range(len(args))]
    plain = f(*args)
    wrt = tuple(range(len(args)))
    for mode in modes:
        if mode == "grad":
            value, grads = tg.value_and_grad(f, wrt=wrt)(*args)
        elif mode == "vjp":
            value, pullback = tg.vjp(f, *args, wrt=wrt)
            grads = pullback(1.0)
        else:
            if not hasattr(tg, "jvp"):
                continue
            tangents = tuple(np.ones(np.shape(a)) if np.ndim(a) else 1.0 for a in args)
            value, tangent = tg.jvp(f, args, tangents)
            assert tangent == pytest.approx(sum(float(np.sum(e)) for e in expected), rel=1e-6), mode
            grads = expected
        assert value == pytest.approx(plain, rel=1e-12), f"{mode}: value"
        for k, (grad, want) in enumerate(zip(grads, expected)):
            assert np.shape(grad) == np.shape(want), f"{mode}: shape of gradient {k}"
            np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-8, err_msg=f"{mode}: gradient {k}")


# --- branches ----------------------------------------------------------------------------------

def branch_saving_residuals(a):
    if np.sum(a) > 0.79:
        y = np.sum(np.sin(a))
    else:
        y = np.sum(np.cos(a))
    return y


def test_vjp_of_a_branch_whose_arms_save_residuals():
    check(branch_saving_residuals, np.array([0.3, -0.7, 1.1, -0.9]), modes=("vjp",))


def copy_in_a_branch(x):
    y = x * 2.0
    z = x * 3.0
    if x > 0.0:
        w = y
    else:
        w = z
    return w


def test_plain_copies_in_both_arms_of_a_branch():
    check(copy_in_a_branch, 1.0, modes=("grad", "vjp"))


def test_plain_copies_in_both_arms_of_a_branch_other_arm():
    check(copy_in_a_branch, -1.0)


# --- loops --------------------------------------------------------------------------------------

def returns_a_loop_carried_value(a, c):
    acc = 0.0
    for i in range(2):
        acc = np.tanh(acc + np.mean(c * a))
    return acc


def test_returning_a_variable_a_loop_updates():
    check(returns_a_loop_carried_value, np.array([0.65, -0.99, 0.62, -0.81]), -0.49, modes=("grad",))


def rebinds_the_array_it_iterates(a):
    for row in a:
        a = a + row
    return np.sum(a)


def rebinds_an_array_it_zips(a, b):
    for p, q in zip(a, b):
        a = a * 0.5 + p
    return np.sum(a ** 2)


def rebinds_an_array_it_enumerates(a):
    for k, p in enumerate(a):
        a = a * 0.5 + p
    return np.sum(a ** 2)


def test_loop_body_rebinding_the_iterated_array():
    check(rebinds_the_array_it_iterates, np.array([[1.44], [0.29], [0.90]]))


def test_loop_body_rebinding_a_zipped_array():
    check(rebinds_an_array_it_zips, np.array([0.3, -0.5, 0.8]), np.array([0.2, 0.4, -0.6]))


def test_loop_body_rebinding_an_enumerated_array():
    check(rebinds_an_array_it_enumerates, np.array([0.3, -0.5, 0.8]))


# --- names --------------------------------------------------------------------------------------

def user_name_like_a_cotangent(a):
    a = a + 1
    for i in range(3):
        g_a = np.mean(a)
    return g_a


def test_user_variable_named_like_a_cotangent():
    check(user_name_like_a_cotangent, np.array([0.5, 1.0]))

"""Custom VJPs, register_vjp and gradcheck on them, with the seeds' examples."""
import numpy as np
import pytest

import tapegen as tg
from cases import custom_functions as C
from conftest import numeric_vjp


def test_custom_softplus_matches_finite_differences(rng):
    w, x = rng.normal(size=3), rng.normal(size=(5, 3))
    np.testing.assert_allclose(tg.grad(C.softplus_loss)(w, x), numeric_vjp(C.softplus_loss, (w, x), 0, 1.0),
                               rtol=1e-6, atol=1e-9)
    tg.gradcheck(C.softplus_loss, w, x)


def test_custom_rule_is_called_by_name_with_visible_residuals():
    text = tg.source(C.softplus_loss)
    assert "= softplus_fwd(t1)" in text and "softplus_bwd(" in text and "_res" in text


def test_custom_softplus_is_stable_at_large_inputs():
    g = tg.grad(lambda x: np.sum(C.softplus(x)))(np.array([-1000.0, 0.0, 1000.0]))
    np.testing.assert_allclose(g, [0.0, 0.5, 1.0])


def test_straight_through_estimator():
    w = np.array([0.1, 0.45, -0.7])
    # forward uses round(3w); backward treats round as identity: d/dw [round(3w) * w] = 3w + round(3w)
    np.testing.assert_allclose(tg.grad(C.quantized_loss)(w), 3 * w + np.round(3 * w))


def test_implicit_ridge_regression_gradient(rng):
    X, y = rng.normal(size=(20, 4)), rng.normal(size=20)
    X_val, y_val = rng.normal(size=(10, 4)), rng.normal(size=10)
    args = (0.7, X, y, X_val, y_val)
    assert tg.grad(C.validation_loss)(*args) == pytest.approx(
        float(numeric_vjp(C.validation_loss, args, 0, 1.0)), rel=1e-6)
    dX = tg.grad(C.validation_loss, wrt="X")(*args)
    np.testing.assert_allclose(dX, numeric_vjp(C.validation_loss, args, 1, 1.0), rtol=1e-5, atol=1e-8)


def test_register_vjp_for_a_function_you_do_not_own(rng):
    def fwd(x):
        y = C.expit(x)
        return y, (y,)

    def bwd(residuals, g):
        (y,) = residuals
        return (g * y * (1.0 - y),)

    tg.register_vjp(C.expit, fwd, bwd)
    x = rng.normal(size=4)
    np.testing.assert_allclose(tg.grad(C.scipy_like)(x), numeric_vjp(C.scipy_like, (x,), 0, 1.0), rtol=1e-7)
    assert "expit_fwd" in tg.source(C.scipy_like)


def test_gradcheck_catches_a_wrong_custom_rule(rng):
    @tg.custom_vjp
    def cube(x):
        return x ** 3

    cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (2.0 * g * x ** 2,))  # wrong: should be 3

    def f(x):
        return np.sum(cube(x))

    with pytest.raises(tg.GradcheckError, match="disagrees"):
        tg.gradcheck(f, rng.normal(size=3))


def test_custom_rule_inside_a_loop(rng):
    def f(x):
        total = 0.0
        for k in range(3):
            total = total + np.sum(C.softplus(x * k))
        return total
    x = rng.normal(size=3)
    np.testing.assert_allclose(tg.grad(f)(x), numeric_vjp(f, (x,), 0, 1.0), rtol=1e-6, atol=1e-9)


def test_gradcheck_names_the_wrong_rule_and_its_line(rng):
    @tg.custom_vjp
    def cube(x):
        return x ** 3

    cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (2.0 * g * x ** 2,))  # wrong: should be 3

    def f(x):
        y = np.sin(x)
        return np.sum(cube(y) * 2.0)

    with pytest.raises(tg.GradcheckError) as info:
        tg.gradcheck(f, rng.normal(size=3))
    hint = str(info.value).splitlines()[-1]
    assert "most likely at fault: the rule for cube_fwd" in hint and "return np.sum(cube(y) * 2.0)" in hint


def test_gradcheck_second_order(rng):
    def f(x, w):
        return np.sum(np.tanh(x @ w) ** 2)
    x, w = rng.normal(size=(4, 3)), rng.normal(size=3)
    report = tg.gradcheck(f, x, w, wrt=(0, 1), order=2)
    assert report.ok and any(row.checked == "hvp" for row in report.arguments)


def test_complex_inputs_follow_jax_convention():
    """For real-valued f of complex z, the gradient is df/dx - i df/dy (JAX's convention)."""
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j])
    g = tg.grad(lambda v: np.sum(np.abs(v) ** 2))(z)
    np.testing.assert_allclose(g, 2 * np.conj(z))
    g = tg.grad(lambda v: np.sum(np.real(v * v)))(z)
    np.testing.assert_allclose(g, 2 * z)


# --- gradcheck of a custom rule itself ------------------------------------------------------------

@tg.custom_vjp
def _sine_with_a_wrong_rule(x):
    return np.sin(x)


_sine_with_a_wrong_rule.defvjp(lambda x: (np.sin(x), (x,)), lambda residuals, g: (g * np.sin(residuals[0]),))


@tg.custom_jvp
def _tanh_with_jvp(x):
    return np.tanh(x)


def _tanh_jvp(primals, tangents):
    y = np.tanh(primals[0])
    return y, tangents[0] * (1 - y ** 2)


_tanh_with_jvp.defjvp(_tanh_jvp)


@tg.custom_jvp
def _tanh_with_a_wrong_jvp(x):
    return np.tanh(x)


_tanh_with_a_wrong_jvp.defjvp(lambda primals, tangents: (np.tanh(primals[0]), tangents[0]))


def _hypot(a, b):
    return np.sqrt(a * a + b * b)


tg.register_vjp(_hypot, lambda a, b: (_hypot(a, b), (a, b)),
                lambda residuals, g: (g * residuals[0] / _hypot(*residuals), g * residuals[1] / _hypot(*residuals)))


def test_gradcheck_takes_a_custom_vjp_directly(rng):
    x = rng.normal(size=4)
    assert tg.gradcheck(C.softplus, x).ok
    with pytest.raises(tg.GradcheckError, match="custom VJP of _sine_with_a_wrong_rule"):
        tg.gradcheck(_sine_with_a_wrong_rule, x)


def test_gradcheck_takes_a_custom_jvp_directly(rng):
    x = rng.normal(size=4)
    report = tg.gradcheck(_tanh_with_jvp, x)
    assert report.ok and report.arguments[0].checked == "jvp"
    with pytest.raises(tg.GradcheckError, match="custom JVP of _tanh_with_a_wrong_jvp"):
        tg.gradcheck(_tanh_with_a_wrong_jvp, x)


def test_gradcheck_takes_a_registered_function_directly(rng):
    a, b = rng.normal(size=3), rng.normal(size=3)
    assert tg.gradcheck(_hypot, a, b, wrt=(0, 1)).ok


_softplus_lambda = tg.custom_vjp(lambda x: np.logaddexp(0.0, x))
_softplus_lambda.defvjp(lambda x: (np.logaddexp(0.0, x), x), lambda x, g: (g / (1.0 + np.exp(-x)),))
_softplus_jvp_lambda = tg.custom_jvp(lambda x: np.logaddexp(0.0, x))
_softplus_jvp_lambda.defjvp(lambda primals, tangents: (np.logaddexp(0.0, primals[0]),
                                                       tangents[0] / (1.0 + np.exp(-primals[0]))))


def _lambda_rule_loss(x):
    return np.sum(_softplus_lambda(x) * x)


def _lambda_jvp_rule_loss(x):
    return np.sum(_softplus_jvp_lambda(x) * x)


@pytest.mark.parametrize("loss", [_lambda_rule_loss, _lambda_jvp_rule_loss])
def test_custom_rule_of_a_lambda(loss):
    """custom_vjp(lambda x: ...) (autograd's `primitive(lambda x: 2.0 * x)`): the generated code named its residuals
    and rules after `<lambda>`, a SyntaxError when compiled."""
    from modes import check_modes
    check_modes(loss, np.array([0.5, -1.2, 2.0]))


@tg.custom_vjp
def _scale(x, k=2.0, mode="plain"):
    return x * k if mode == "plain" else x * k * 1.0


def _scale_fwd(x, k=2.0, mode="plain"):
    return _scale(x, k, mode), (x, k)


def _scale_bwd(residuals, g):
    x, k = residuals
    return g * k, np.sum(g * x), None


_scale.defvjp(_scale_fwd, _scale_bwd)


@tg.custom_vjp
def _shifted_sin(x, eps=1e-3):
    return np.sin(x) + eps


def _shifted_sin_fwd(x):  # takes only the argument without a default: called with it alone, as before
    return _shifted_sin(x), x


def _shifted_sin_bwd(x, g):
    return (g * np.cos(x),)


_shifted_sin.defvjp(_shifted_sin_fwd, _shifted_sin_bwd)


@tg.custom_vjp
def _times(x, k=3.0):
    return x * k


def _times_fwd(x, k=3.0):
    return x * k, k


def _times_bwd(k, g):  # a cotangent for x only: k's is None
    return (g * k,)


_times.defvjp(_times_fwd, _times_bwd)


def _defaults_all_passed(x):
    return np.sum(_scale(x, 3.0, "other") * x)


def _defaults_by_keyword(x):
    return np.sum(_scale(x, k=3.0) * x)


def _defaults_left(x):
    return np.sum(_scale(x) * x)


def _default_differentiated(x, k):
    return np.sum(_scale(x, k) * x)


def _fwd_without_defaults(x):
    return np.sum(_shifted_sin(x) * x)


def _bwd_for_the_first_only(x):
    return np.sum(_times(x) * x) + np.sum(_times(x, 2.0))


@pytest.mark.parametrize("loss, args", [
    (_defaults_all_passed, ()), (_defaults_by_keyword, ()), (_defaults_left, ()), (_default_differentiated, (1.7,)),
    (_fwd_without_defaults, ()), (_bwd_for_the_first_only, ())], ids=lambda v: getattr(v, "__name__", ""))
def test_custom_rule_of_a_function_with_defaults(loss, args):
    """A custom_vjp function with parameters that have defaults (autograd's convolve(A, B, axes=None, dot_axes=...,
    mode="full")): passed by position or keyword or left out, they reach fwd, and bwd's cotangent for them is
    used (it was refused as too many arguments, or unpacked into too few names: a ValueError); a fwd that takes
    only the others is called with those; a bwd giving fewer cotangents gives None for the rest."""
    from modes import check_modes
    check_modes(loss, np.array([1.0, 2.0, -0.5]), *args)


def _clipped(x):
    return np.clip(x, -1.0, 1.0)


tg.register_vjp(_clipped, lambda x: (_clipped(x), None), lambda residuals, g: (g,))  # straight through


def test_a_function_given_a_rule_is_its_rule_as_a_transform_target():
    """tg.vjp(f, x) of a Python function given a VJP by register_vjp used f's code (here clip's derivative,
    [1, 0, 0]) while a call of f inside a function used the declared rule ([1, 1, 1]): a silent difference in the
    gradient. The function itself is now its rule too, in every mode (forward mode: the rule transposed)."""
    x, t = np.array([0.5, 2.0, -3.0]), np.array([1.0, -2.0, 0.5])
    np.testing.assert_array_equal(tg.vjp(_clipped, x)[1](np.ones(3)), np.ones(3))
    np.testing.assert_array_equal(tg.vjp(lambda v: _clipped(v), x)[1](np.ones(3)), np.ones(3))
    np.testing.assert_array_equal(tg.jvp(_clipped, (x,), (t,))[1], t)
    np.testing.assert_array_equal(tg.jacobian(_clipped)(x), np.eye(3))

"""Second and higher derivatives through custom rules: tapegen differentiates the user's bwd (reverse over
reverse), and forward mode uses the bwd's transpose (jvp, hessian, jvp of a gradient, gradient of a jvp).

Reverse mode through a custom_jvp transposes its JVP, to any order too.

Checked against central differences of the first derivative, and against closed forms where there is one;
the fixed point below is autograd's examples/fixed_points.py written with tapegen's API: its bwd calls the
primitive itself, on a local def, with tg.vjp inside.
"""
import numpy as np
import pytest

import tapegen as tg
from cases import custom_functions as C
from modes import check_modes

EPS = 1e-5


def central(f, x, eps=EPS):
    """Central difference of a scalar function of a float."""
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def central_along(f, x, u, eps=EPS):
    """Central difference of an array-valued f along u."""
    return (np.asarray(f(x + eps * u)) - np.asarray(f(x - eps * u))) / (2 * eps)


# --- a fixed point, differentiated implicitly; its bwd is itself a fixed point ----------------------------------

@tg.custom_vjp
def fixed_point(f, a, x0, distance, tol):
    _f = f(a)
    x, x_prev = _f(x0), x0
    while distance(x, x_prev) > tol:
        x, x_prev = _f(x), x
    return x


def fixed_point_fwd(f, a, x0, distance, tol):
    x = fixed_point(f, a, x0, distance, tol)
    return x, (f, a, x, x0, distance, tol)


def fixed_point_bwd(residuals, g):
    f, a, x_star, x0, distance, tol = residuals

    def rev_iter(params):
        a, x_star, x_star_bar = params
        _, vjp_x = tg.vjp(f(a), x_star)
        return lambda g: vjp_x(g) + x_star_bar

    _, vjp_a = tg.vjp(lambda a, x: f(a)(x), a, x_star, wrt=0)
    w = fixed_point(rev_iter, (a, x_star, g), np.zeros_like(x0), distance, tol)
    return None, vjp_a(w), None, None, None


fixed_point.defvjp(fixed_point_fwd, fixed_point_bwd)


def newton_sqrt_iter(a):
    return lambda x: 0.5 * (x + a / x)


def fixed_point_sqrt(a, guess=10.0):
    return fixed_point(newton_sqrt_iter, a, guess, lambda x, x_prev: np.abs(x - x_prev), 1e-12)


def test_fixed_point_sqrt_second_derivative_in_every_mode():
    a = 2.0
    first, second = 0.5 * a ** -0.5, -0.25 * a ** -1.5
    gradient = tg.grad(fixed_point_sqrt)
    assert gradient(a) == pytest.approx(first, rel=1e-8)
    assert tg.grad(gradient)(a) == pytest.approx(second, rel=1e-7)  # reverse over reverse
    assert tg.grad(gradient)(a) == pytest.approx(central(gradient, a), rel=1e-6)
    assert tg.jvp(gradient, (a,), (1.0,))[1] == pytest.approx(second, rel=1e-7)  # forward over reverse
    assert tg.hessian(fixed_point_sqrt)(a) == pytest.approx(second, rel=1e-7)
    tangent = lambda x: tg.jvp(fixed_point_sqrt, (x,), (1.0,))[1]  # noqa: E731
    assert tangent(a) == pytest.approx(first, rel=1e-8)
    assert tg.grad(tangent)(a) == pytest.approx(second, rel=1e-7)  # reverse over forward
    assert tg.jvp(tangent, (a,), (1.0,))[1] == pytest.approx(second, rel=1e-7)  # forward over forward


def test_fixed_point_sqrt_third_derivative():
    third = 3 / 8 * 2.0 ** -2.5
    assert tg.grad(tg.grad(tg.grad(fixed_point_sqrt)))(2.0) == pytest.approx(third, rel=1e-6)


# --- custom rules of ordinary NumPy code -----------------------------------------------------------------------

def softplus_sum(x):
    return np.sum(C.softplus(x) * x)


def test_custom_vjp_in_every_mode_and_second_order(rng):
    x = rng.normal(size=4)
    check_modes(softplus_sum, x)
    gradient = tg.grad(softplus_sum)
    u = rng.normal(size=4)
    np.testing.assert_allclose(tg.hessian(softplus_sum)(x) @ u, central_along(gradient, x, u), rtol=1e-6)
    np.testing.assert_allclose(tg.jvp(gradient, (x,), (u,))[1], central_along(gradient, x, u), rtol=1e-6)
    np.testing.assert_allclose(tg.hvp(softplus_sum)(x, u), central_along(gradient, x, u), rtol=1e-6)
    tangent = lambda v: tg.jvp(softplus_sum, (v,), (u,))[1]  # noqa: E731
    np.testing.assert_allclose(tg.grad(tangent)(x), central_along(gradient, x, u), rtol=1e-6)


@tg.custom_vjp
def logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def logistic_fwd(x):
    y = logistic(x)
    return y, (y,)


def logistic_bwd(residuals, g):
    (y,) = residuals
    return (g * y * (1.0 - y),)


logistic.defvjp(logistic_fwd, logistic_bwd)


@tg.custom_vjp
def log_sum_softplus(x, w):
    return np.log(np.sum(np.logaddexp(0.0, x * w)))


def log_sum_softplus_fwd(x, w):
    return log_sum_softplus(x, w), (x, w)


def log_sum_softplus_bwd(residuals, g):
    x, w = residuals
    s = np.sum(np.logaddexp(0.0, x * w))
    d = logistic(x * w) * g / s  # another custom_vjp function, in the bwd
    return d * w, d * x


log_sum_softplus.defvjp(log_sum_softplus_fwd, log_sum_softplus_bwd)


def test_a_bwd_calling_another_custom_rule(rng):
    x, w = rng.normal(size=3), rng.normal(size=3)
    check_modes(log_sum_softplus, x, w)
    u = rng.normal(size=3)
    gradient = tg.grad(log_sum_softplus)
    np.testing.assert_allclose(tg.hessian(log_sum_softplus)(x, w) @ u, central_along(lambda v: gradient(v, w), x, u),
                               rtol=1e-6)
    mixed = tg.jvp(lambda v: gradient(x, v), (w,), (u,))[1]
    np.testing.assert_allclose(mixed, central_along(lambda v: gradient(x, v), w, u), rtol=1e-6)


def _opaque_cube(x):
    return x ** 3


tg.register_vjp(_opaque_cube, lambda x: (_opaque_cube(x), x), lambda x, g: (3.0 * x ** 2 * g,))


def uses_registered(x):
    return np.sum(np.sin(_opaque_cube(x)))


def test_register_vjp_second_order_with_residuals_not_in_a_tuple(rng):
    x = rng.normal(size=3)
    check_modes(uses_registered, x)
    u = rng.normal(size=3)
    gradient = tg.grad(uses_registered)
    np.testing.assert_allclose(tg.hessian(uses_registered)(x) @ u, central_along(gradient, x, u), rtol=1e-6)


@tg.custom_vjp
def complex_square(z):
    return z * z


complex_square.defvjp(lambda z: (complex_square(z), (z,)), lambda residuals, g: (g * 2.0 * residuals[0],))


def test_forward_mode_of_a_custom_vjp_on_complex_inputs(rng):
    z = rng.normal(size=3) + 1j * rng.normal(size=3)
    t = rng.normal(size=3) + 1j * rng.normal(size=3)
    np.testing.assert_allclose(tg.jvp(complex_square, (z,), (t,))[1], 2.0 * z * t)
    np.testing.assert_allclose(tg.jvp(complex_square, (z,), (t,))[1], central_along(complex_square, z, t), rtol=1e-8)


def test_a_bwd_tapegen_cannot_follow_is_refused_naming_its_line():
    import scipy.optimize

    @tg.custom_vjp
    def sine(x):
        return np.sin(x)

    def sine_bwd(x, g):
        return (np.asarray(scipy.optimize.nnls(np.eye(len(x)), g * np.cos(x))[0]),)

    sine.defvjp(lambda x: (sine(x), x), sine_bwd)

    def loss(x):
        return np.sum(sine(x) ** 2)

    x = np.array([0.3, 0.7])
    assert np.all(np.isfinite(tg.grad(loss)(x)))  # first order: the bwd runs as written
    for second_order in (lambda: tg.hessian(loss)(x), lambda: tg.grad(lambda v: np.sum(tg.grad(loss)(v)))(x),
                         lambda: tg.jvp(loss, (x,), (x,))):
        with pytest.raises(tg.NoRuleError, match="nnls") as error:
            second_order()
        assert "sine_bwd" in str(error.value) or "scipy.optimize.nnls(np.eye" in str(error.value)


# --- what the fixed point needs of the frontend ----------------------------------------------------------------

def square(x):
    return x * x


def with_function(f, a):
    return f(a), (f, a)


def residuals_holding_a_function(a):
    y, residuals = with_function(square, a)
    f, b = residuals
    return f(b) * y


def rest_holding_a_function(g, *rest):
    f, a = rest
    return f(a) * g


def test_a_tuple_holding_a_function_keeps_it_known_when_unpacked():
    assert tg.grad(residuals_holding_a_function)(3.0) == pytest.approx(4 * 27.0)
    assert tg.grad(rest_holding_a_function)(2.0, np.sin, 0.5) == pytest.approx(np.sin(0.5))
    assert tg.grad(rest_holding_a_function, wrt=2)(2.0, np.sin, 0.5) == pytest.approx(2.0 * np.cos(0.5))


def test_a_pullback_made_when_the_code_runs_is_followed_inside(rng):
    x0 = rng.normal(size=3)
    _, pullback = tg.vjp(lambda x: np.sin(x) * x, x0)

    def through_pullback(c):
        return np.sum(pullback(c) ** 2)

    c, u = rng.normal(size=3), rng.normal(size=3)
    assert tg.grad(through_pullback)(c) @ u == pytest.approx(central_along(through_pullback, c, u), rel=1e-6)


def shadowing(x, g):
    def inner(a):
        scale = lambda g: g * a  # noqa: E731  (its own g)
        return scale(x) + g * a  # the g of the function around it
    _, pullback = tg.vjp(inner, x)
    return pullback(1.0)  # x + g


def test_a_lifted_function_reads_the_outer_name_a_nested_lambda_shadows():
    assert shadowing(1.5, 0.25) == pytest.approx(1.75)
    assert tg.grad(shadowing, wrt=0)(1.5, 0.25) == pytest.approx(1.0)
    assert tg.grad(shadowing, wrt=1)(1.5, 0.25) == pytest.approx(1.0)


def pairs_a_none(x):
    _, pullback = tg.vjp(lambda v, w: (None, v * w, None), x, 2.0)
    return pullback((1.0, 3.0, 7.0))


def test_a_pullback_inside_of_a_function_returning_none_items():
    assert tg.grad(pairs_a_none)(1.5) == pytest.approx(0.0)
    assert pairs_a_none(1.5) == pytest.approx(6.0)
    assert tg.grad(lambda x: pairs_a_none(x) * x)(1.5) == pytest.approx(6.0)


# --- a custom rule with several outputs: its bwd gets their cotangents as a tuple ------------------------------

@tg.custom_vjp
def sine_and_cosine(x, w):
    return np.sin(x) * w, np.cos(x)


def sine_and_cosine_fwd(x, w):
    return sine_and_cosine(x, w), [x, w]


def sine_and_cosine_bwd(residuals, g):
    x, w = residuals
    g_sine, g_cosine = g  # a tuple, in the outputs' order (once the sparse Cotree of gradient code: its keys)
    return g_sine * np.cos(x) * w - g_cosine * np.sin(x), g_sine * np.sin(x)


sine_and_cosine.defvjp(sine_and_cosine_fwd, sine_and_cosine_bwd)


def product_of_outputs(x, w):
    a, b = sine_and_cosine(x, w)
    return np.sum(a * b)


def second_output_only(x, w):
    return np.sum(sine_and_cosine(x, w)[1] ** 2)


def test_a_custom_rule_with_several_outputs_in_every_mode(rng):
    x, w = rng.normal(size=3), rng.normal(size=3)
    check_modes(product_of_outputs, x, w)
    check_modes(second_output_only, x, w)
    np.testing.assert_allclose(tg.grad(product_of_outputs)(x, w), w * np.cos(2 * x), rtol=1e-12)
    u = rng.normal(size=3)
    gradient = tg.grad(product_of_outputs)
    np.testing.assert_allclose(tg.hessian(product_of_outputs)(x, w) @ u,
                               central_along(lambda v: gradient(v, w), x, u), rtol=1e-6)


# --- reverse mode through a custom_jvp: its JVP transposed --------------------------------------------------

@tg.custom_jvp
def _scaled_sine(x, w):
    return np.sin(x) * w


_scaled_sine.defjvp(lambda primals, tangents: (_scaled_sine(*primals), np.cos(primals[0]) * primals[1] * tangents[0]
                                               + np.sin(primals[0]) * tangents[1]))


@tg.custom_jvp
def _straight_through_round(x):
    return np.round(x)


_straight_through_round.defjvp(lambda primals, tangents: (np.round(primals[0]), tangents[0]))


def _uses_scaled_sine(x, w):
    return np.sum(_scaled_sine(x * x, w) ** 2)


def test_reverse_mode_and_second_order_through_a_custom_jvp():
    x, w = np.array([0.3, -0.7, 1.2]), np.array([1.5, 0.4, -0.8])
    check_modes(_uses_scaled_sine, x, w)  # grad, vjp, jvp, grad of grad: against central differences
    u = np.array([0.2, 0.5, -0.3])
    gradient = tg.grad(_uses_scaled_sine)
    expected = central_along(lambda x: gradient(x, w), x, u)
    np.testing.assert_allclose(tg.hessian(_uses_scaled_sine)(x, w) @ u, expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(tg.jvp(gradient, (x, w), (u, None))[1], expected, rtol=1e-5, atol=1e-7)


def test_reverse_mode_uses_the_rule_not_the_functions_code():
    """round has derivative 0; the straight-through rule says 1, in every mode."""
    x = np.array([0.3, 1.6, -2.2])
    np.testing.assert_allclose(tg.grad(lambda x: np.sum(_straight_through_round(x) * x))(x), np.round(x) + x)
    e = np.array([0.0, 1.0, 0.0])
    assert tg.jvp(lambda x: np.sum(_straight_through_round(x) * x), (x,), (e,))[1] == pytest.approx(np.round(x[1]) + x[1])
    assert tg.grad(_straight_through_round)(0.4) == 1.0
    assert tg.grad(lambda x: _scaled_sine(x, 2.0))(0.3) == pytest.approx(2 * np.cos(0.3))


@tg.custom_jvp
def _power(x, n):
    return x ** n


_power.defjvp(lambda primals, tangents: (primals[0] ** primals[1], primals[1] * primals[0] ** (primals[1] - 1)
                                         * tangents[0]))


def test_a_custom_jvp_taking_an_integer_in_reverse_mode_and_second_order():
    x = np.array([0.5, 1.5, -0.7])
    np.testing.assert_allclose(tg.grad(lambda x: np.sum(_power(x, 3)))(x), 3 * x ** 2)
    np.testing.assert_allclose(tg.hessian(lambda x: np.sum(_power(x, 3)))(x), np.diag(6 * x), atol=1e-12)
    check_modes(lambda x: np.sum(np.sin(_power(x, 3))), x)

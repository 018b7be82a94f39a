"""Issue 16: transforms compose, as JAX's do. A function being differentiated may call tg.grad,
tg.value_and_grad, tg.vjp, tg.jvp, tg.jacobian, tg.hessian and tg.hvp; each is inlined as plain code
built on the generated code it uses (api_transforms.py), so it can be differentiated again.

Every ordered pair (T1, T2) of the seven transforms is nested over a function with a loop, a branch
and array assignment (`lift(T2, lift(T1, base))`, each level reduced to a scalar), and the result is
checked against central differences by a third transform (grad, jvp or vjp): three transforms deep.
Each single transform is also checked in every mode, with a fourth (grad of grad).
"""
import itertools
import linecache

import numpy as np
import pytest

import tapegen as tg
from modes import check_modes

TRANSFORMS = ("grad", "value_and_grad", "vjp", "jvp", "jacobian", "hessian", "hvp")

# One level: a scalar function of x made from scalar function `inner` by a transform.
LIFT = {
    "grad": "return np.sum(tg.grad({inner})(x) * W)",
    "value_and_grad": "v, g = tg.value_and_grad({inner})(x)\n    return v + np.sum(g * W)",
    "vjp": "out, pullback = tg.vjp({inner}, x)\n    return out + np.sum(pullback(1.3) * W)",
    "jvp": "out, t = tg.jvp({inner}, (x,), (U,))\n    return out + 0.7 * t",
    "jacobian": "return np.sum(tg.jacobian({inner})(x) * W)",
    "hessian": "return np.sum(tg.hessian({inner})(x) * np.outer(W, U))",
    "hvp": "return np.sum(tg.hvp({inner})(x, U) * W)",
}

BASE = '''
def base(x):
    a = np.zeros(2)
    a[0] = x[0] * x[1]
    a[1:] = np.sin(x[1:])
    h = x
    for i in range(2):
        h = np.tanh(h * a + 0.1)
    if np.sum(x) > 0:
        s = np.sum(h ** 2)
    else:
        s = np.sum(np.cos(h))
    return s
'''

X = np.array([0.4, 0.3])
NAMESPACE = {"np": np, "tg": tg, "W": np.array([0.5, -1.0]), "U": np.array([0.3, -0.6])}
_COUNT = itertools.count()


def _nested(*transforms):
    """The module-level function applying `transforms` (innermost first) to `base`, compiled from source."""
    lines, inner = [BASE], "base"
    for k, name in enumerate(transforms):
        lines.append(f"\ndef level{k}(x):\n    {LIFT[name].format(inner=inner)}\n")
        inner = f"level{k}"
    source = "".join(lines)
    filename = f"<tests.test_compose {'-'.join(transforms)} {next(_COUNT)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(NAMESPACE)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[inner]


PAIRS = list(itertools.product(TRANSFORMS, TRANSFORMS))


@pytest.mark.parametrize("first, second, third", [(a, b, ("grad", "jvp", "vjp")[k % 3]) for k, (a, b) in enumerate(PAIRS)])
def test_two_transforms_inside_a_third(first, second, third):
    """The third transform takes turns (grad, jvp, vjp) over the 49 pairs, so each is used on every kind of
    pair; check_modes below uses all three on each single transform."""
    f = _nested(first, second)
    u = np.array([0.7, -0.4])
    eps = 1e-6
    expected = (f(X + eps * u) - f(X - eps * u)) / (2 * eps)
    if third == "grad":
        got = np.dot(tg.grad(f)(X), u)
    elif third == "jvp":
        got = tg.jvp(f, (X,), (u,))[1]
    else:
        got = np.dot(tg.vjp(f, X)[1](1.0), u)
    assert np.isclose(got, expected, rtol=1e-4, atol=1e-5), (got, expected)


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_one_transform_inside_grad_of_grad(transform):
    check_modes(_nested(transform), X, rtol=1e-4, atol=1e-5)


def test_jvp_and_vjp_of_functions_of_several_arguments():
    def g(x, y):
        return np.sin(x) * y + x ** 2

    check_modes(_nested_two(g), X)


def _nested_two(g):
    source = ("def pushes_and_pulls(x):\n"
              "    out, t = tg.jvp(g, (x, x * 2), (U, None))\n"
              "    out2, pullback = tg.vjp(g, x, x + 1.0, wrt=(0, 1))\n"
              "    gx, gy = pullback(W)\n"
              "    return np.sum(t * W) + np.sum(out) + np.sum(gx * gy) + np.sum(out2)\n")
    filename = f"<tests.test_compose two {next(_COUNT)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {**NAMESPACE, "g": g}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["pushes_and_pulls"]


def _loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


XS = np.array([[0.5, -1.0], [0.3, 0.8], [-0.7, 0.2]])


def step_on_a_lambda(w):
    """MAML's inner step as people write it: the gradient of a lambda reading the data around it."""
    g = tg.grad(lambda v: _loss(v, XS))(w)
    return _loss(w - 0.1 * g, XS)


def pullback_of_a_lambda(w):
    out, pullback = tg.vjp(lambda v: np.tanh(XS @ v) * w[0], w)
    return np.sum(pullback(np.ones(3)) ** 2) + np.sum(out)


def tangent_of_a_local_def(w):
    def f(v):
        return np.tanh(XS @ v) * w[1]
    out, tangent = tg.jvp(f, (w,), (np.ones(2),))
    return np.sum(tangent ** 2) + np.sum(out)


def hvp_and_jacobian_of_lambdas(w):
    scale = np.sum(w ** 2)
    h = tg.hvp(lambda v: _loss(v * scale, XS))(w, np.array([1.0, -0.5]))
    return np.sum(h * w) + np.sum(tg.jacobian(lambda v: np.sin(v) * scale)(w))


def _elementwise_grad(fun):  # autograd's egrad, written with tg.vjp of a lambda
    def gradfun(x):
        out, pullback = tg.vjp(lambda *a: fun(*a), x)
        return pullback(np.ones_like(out))
    return gradfun


def third_derivative_of_tanh(x):
    return np.sum(_elementwise_grad(_elementwise_grad(_elementwise_grad(np.tanh)))(x))


@pytest.mark.parametrize("f", [step_on_a_lambda, pullback_of_a_lambda, tangent_of_a_local_def,
                               hvp_and_jacobian_of_lambdas, third_derivative_of_tanh])
def test_transforms_of_lambdas_and_local_defs_inside(f):
    """A lambda or local def given to a transform inside a differentiated function is made a function of its
    own; what it reads from the function around it is passed to it, so derivatives flow through that too."""
    check_modes(f, X)


def uses_a_local_function_reading_values(x):
    act = lambda z: np.sin(z) * x  # reads x: passed to the lifted lambda too, bound with functools.partial
    return tg.jvp(lambda z: act(z) ** 2, (x,), (x,))[1].sum()


def test_a_transform_of_a_lambda_reading_a_function_made_inside():
    check_modes(uses_a_local_function_reading_values, X)


def two_outputs(x):
    return np.sin(x), x ** 2


def pulls_back_two_outputs(x):
    (a, b), pullback = tg.vjp(two_outputs, x)
    return np.sum(pullback((NAMESPACE["W"], 2 * NAMESPACE["W"])) * x) + np.sum(a * b)


def test_vjp_of_a_function_of_two_outputs_inside():
    check_modes(pulls_back_two_outputs, X)


def _product(x, y):
    return np.sum(x * np.sin(y))


def _pullback_of_two(x, y, v):
    """A pullback's value: a tuple the function returns without writing it as a display."""
    return tg.vjp(_product, x, y, wrt=(0, 1))[1](v)


def pulls_back_a_pullback(x, y):
    """vjp of a function whose output is another pullback's tuple: the pairing runs over every leaf."""
    out, pullback = tg.vjp(_pullback_of_two, x, y, 1.5, wrt=(0, 1, 2))
    gx, gy, gv = pullback((NAMESPACE["W"], NAMESPACE["U"]))
    return np.sum(gx * y) + np.sum(gy * x) + gv + np.sum(out[0] * out[1])


def test_vjp_of_a_tuple_valued_pullback_inside():
    check_modes(pulls_back_a_pullback, X, np.array([0.2, -0.7]))


def _holomorphic(z):
    return z * np.exp(z)


def test_a_pullback_of_a_complex_function_inside_follows_the_convention():
    """`tg.vjp(f, z)[1](ct)` inside a function is tg.vjp's own pullback (ct * f'(z) for a holomorphic f),
    and its gradient in z is ct * f''(z) under tapegen's convention (JAX's and autograd's)."""
    z = np.array([0.3 + 0.4j, -0.5 + 0.2j])
    ct = np.array([1.0 - 0.5j, 0.2 + 0.7j])
    inside = tg.jvp(lambda z: tg.vjp(_holomorphic, z)[1](ct), (z,), (np.ones(2) + 0j,))[1]
    np.testing.assert_allclose(tg.vjp(_holomorphic, z)[1](ct), ct * (1 + z) * np.exp(z))
    np.testing.assert_allclose(inside, ct * (2 + z) * np.exp(z))
    pulled = tg.vjp(lambda z: tg.vjp(_holomorphic, z)[1](ct), z)[1](np.ones(2) + 0j)
    np.testing.assert_allclose(pulled, ct * (2 + z) * np.exp(z))


A22 = np.array([[3.0, 0.5], [0.2, 2.0]])


def _solve_both_moving(x):
    return np.linalg.solve(A22 + np.outer(x, x), np.sin(x))


def tangent_of_a_solve(x):
    """np.linalg.solve's two JVP rules are summed with add_tangents in tangent code; differentiated again
    (forward over forward, reverse over forward) that sum must carry its derivative (it was dropped: zero)."""
    return np.sum(tg.jvp(_solve_both_moving, (x,), (np.array([1.0, -0.5]),))[1] * np.array([1.0, 2.0]))


def test_a_tangent_summed_from_two_rules_differentiates_again():
    check_modes(tangent_of_a_solve, X)


def _tuple_product(x):
    pair = tuple((x, x))  # a container the program builds: its cotangent adds with add_cotangents
    return np.sin(pair[0]) * pair[1]


_TUPLE_PRODUCT_GRAD = tg.grad(_tuple_product)


def pulls_back_a_gradient_through_a_tuple(x):
    return tg.vjp(_TUPLE_PRODUCT_GRAD, x)[1](1.0)


def test_derivatives_of_a_gradient_through_a_built_tuple():
    """A tuple's cotangent accumulated with `+` lost its structure two derivatives later (a Cotree where a
    float was due: TypeError in conform); it is accumulated with add_cotangents now."""
    check_modes(pulls_back_a_gradient_through_a_tuple, 1.0)


def _egrad_as_wrappers_write_it(fun, argnum=0):
    def egrad(*args, **kwargs):  # a lambda reading the helper's **kwargs, wrt from the closure
        out, pullback = tg.vjp(lambda *a: fun(*a, **kwargs), *args, wrt=argnum)
        return pullback(np.ones_like(out))
    return egrad


def third_derivative_through_keyword_wrappers(x):
    return np.sum(_egrad_as_wrappers_write_it(_egrad_as_wrappers_write_it(_egrad_as_wrappers_write_it(np.tanh)))(x))


def test_a_lambda_reading_a_helpers_kwargs_and_a_closure_wrt():
    """The lambda's `**kwargs` (a dict of keys known here) is passed item by item and rebuilt in the lifted
    function, and `wrt=argnum` of the closure is known when transforming (checked when the code runs)."""
    x = np.linspace(-1.0, 1.0, 4)
    t = np.tanh(x)
    np.testing.assert_allclose(_egrad_as_wrappers_write_it(_egrad_as_wrappers_write_it(
        _egrad_as_wrappers_write_it(np.tanh)))(x), -2 * (1 - t * t) ** 2 + 4 * t * t * (1 - t * t))
    check_modes(third_derivative_through_keyword_wrappers, x, order2=False)


def _cubed_scaled(a, k=2.0):
    return np.sum(a ** 3 * k)


def tangent_of_a_function_with_a_default(x):
    """tg.jvp(f, (x,), (t,)) inside, f taking a parameter with a default: its tangent code takes every
    parameter, so the default is passed (it was 'f_jvp() is missing argument a_dot')."""
    return tg.jvp(_cubed_scaled, (x,), (np.ones(2),))[1]


def test_a_tangent_of_a_function_with_a_default_inside():
    check_modes(tangent_of_a_function_with_a_default, X)


def _spreading(y, s, args, func):
    """Calls `func` with the items of a tuple argument spread (odeint's `func(y, t, *args)`)."""
    return func(y, s, *args)


def _dynamics(y, s, k, c):
    return np.sin(y) * k + s * c


def _pulled_back_through_a_spread_tuple(y, args):
    out, pullback = tg.vjp(_spreading, y, 0.5, args, _dynamics, wrt=(0, 2))
    g_y, g_args = pullback(np.cos(y))
    return np.sum(out * y) + np.sum(g_y) + g_args[0] * g_args[1]


def _pushed_forward_through_a_spread_tuple(y, args):
    out, tangent = tg.jvp(_spreading, (y, 0.5, args, _dynamics), (np.cos(y), None, (0.3, -0.2), None))
    return np.sum(out * tangent)


@pytest.mark.parametrize("f", [_pulled_back_through_a_spread_tuple, _pushed_forward_through_a_spread_tuple],
                         ids=["vjp", "jvp"])
def test_a_transform_inside_of_a_function_spreading_a_tuple_argument_and_calling_a_function_argument(f):
    """The tuple's length and the function, known where the transform is called, make its code: `*args`
    and `func(...)` inside are followed (the derivative solves of scipy.integrate rely on this)."""
    check_modes(lambda y, k: f(y, (k, 1.5)), np.array([0.3, -0.8]), 0.7)
    check_modes(f, np.array([0.3, -0.8]), (0.7, 1.5), order2=False)

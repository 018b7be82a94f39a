"""Code written for HIPS autograd (`import autograd.numpy as np`) is differentiated as the NumPy it wraps."""
import pytest

pytest.importorskip("autograd")

import numpy as np  # noqa: E402

import tapegen as tg  # noqa: E402
from cases import autograd_style  # noqa: E402
from modes import check_modes  # noqa: E402


@pytest.mark.parametrize("fn, args", autograd_style.cases(), ids=lambda v: getattr(v, "__name__", ""))
def test_autograd_numpy_code_in_every_mode(fn, args):
    check_modes(fn, *args)


def test_generated_code_calls_numpy_not_autograd():
    source = tg.source(autograd_style.neural_net_predict, kind="vjp")
    code = [line.split("#")[0] for line in source.splitlines()]
    assert any("np.tanh(" in line for line in code) and not any("autograd" in line for line in code)


def test_gradients_match_autograd():
    import autograd
    fn, args = autograd_style.cases()[0]
    ours = tg.grad(fn)(*args)
    theirs = autograd.grad(fn)(*args)
    for (W, b), (W2, b2) in zip(ours, theirs):
        np.testing.assert_allclose(W, W2, rtol=1e-10)
        np.testing.assert_allclose(b, b2, rtol=1e-10)


def test_autograd_builtins_are_pythons():
    """autograd.builtins.tuple (ode_net's `odeint(..., tuple((params,)))`) is Python's tuple, in every mode."""
    check_modes(autograd_style.autograd_builtins, np.array([0.3, -0.5, 0.8]))


def test_declared_vjp_is_the_gradient():
    """An autograd @primitive's VJP from defvjp is the gradient, even where it is not the derivative of
    the code inside (a straight-through estimator): tapegen gives what autograd gives."""
    import autograd
    x = np.array([0.5, 2.0, -3.0])
    expected = 2.0 * np.clip(x, -1.0, 1.0)  # d/dclipped of sum(clipped**2), passed straight through
    np.testing.assert_allclose(tg.grad(autograd_style.straight_through)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(autograd.grad(autograd_style.straight_through)(x), expected, rtol=1e-12)
    out, pullback = tg.vjp(autograd_style.straight_through, x)
    np.testing.assert_allclose(pullback(1.0), expected, rtol=1e-12)


def test_declared_vjp_without_jvp_is_transposed_in_forward_mode():
    """A primitive given only a VJP: forward mode uses that VJP transposed (here the identity, passed straight
    through), so every mode gives the gradient the program declares, to second order too."""
    x, t = np.array([0.5, 2.0, -3.0]), np.array([1.0, -2.0, 0.5])
    assert tg.jvp(autograd_style.straight_through, (x,), (t,))[1] == pytest.approx(2.0 * np.clip(x, -1, 1) @ t)
    np.testing.assert_allclose(tg.jvp(tg.grad(autograd_style.straight_through), (x,), (t,))[1], 2.0 * t)
    np.testing.assert_allclose(tg.hessian(autograd_style.straight_through)(x), 2.0 * np.eye(3))


def test_autograd_convolve_keeps_autograd_semantics():
    """autograd.scipy.signal.convolve (axes, dot_axes: not SciPy's convolve) runs as autograd's own
    function, differentiated with autograd's VJPs for it: convnet.py's layer, checked against finite
    differences and against autograd."""
    import autograd
    import autograd.scipy.signal as ag_signal

    def conv_loss(params, inputs):
        conv = ag_signal.convolve(inputs, params, axes=([2, 3], [2, 3]), dot_axes=([1], [0]), mode="valid")
        return np.sum(np.tanh(conv))
    rng = np.random.default_rng(3)
    params, inputs = rng.standard_normal((2, 3, 3, 3)), rng.standard_normal((4, 2, 6, 6))
    tg.gradcheck(conv_loss, params, inputs)
    np.testing.assert_allclose(tg.grad(conv_loss)(params, inputs), autograd.grad(conv_loss)(params, inputs),
                               rtol=1e-10)

    def full_conv(a, b):  # its defaults (dot_axes=[(), ()]) written into the generated call
        return np.sum(ag_signal.convolve(a, b) ** 2)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 2))
    tg.gradcheck(full_conv, a, b, wrt=(0, 1))
    np.testing.assert_allclose(tg.grad(full_conv)(a, b), autograd.grad(full_conv)(a, b), rtol=1e-10)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_autograd_convolve_second_order(mode):
    """autograd's VJP makers for its convolve are autograd.numpy code: gradient code calling them is
    differentiated again through them (autograd's test_convolve checks order 2), against finite differences
    and against autograd's own Hessian."""
    import autograd
    import autograd.scipy.signal as ag_signal

    def loss(a, b):
        return np.sum(np.sin(ag_signal.convolve(a, b, mode=mode)))
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((5, 4)), rng.standard_normal((3, 2))
    w = rng.standard_normal(a.shape)

    def mixed(b):  # reverse over reverse: autograd gives convolve no JVP, so no forward mode
        return np.sum(tg.grad(loss)(a, b) * w)

    def mixed_autograd(b):
        return np.sum(autograd.grad(loss)(a, b) * w)
    ours = tg.grad(mixed)(b)
    np.testing.assert_allclose(ours, autograd.grad(mixed_autograd)(b), rtol=1e-9, atol=1e-12)
    eps, expected = 1e-6, np.zeros_like(b)
    for i in np.ndindex(b.shape):
        step = np.zeros_like(b)
        step[i] = eps
        expected[i] = (mixed(b + step) - mixed(b - step)) / (2 * eps)
    np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-8)


def test_gradient_of_autograds_numpy_function():
    """`grad(np.sqrt)` with `import autograd.numpy as np` (examples/fixed_points.py): NumPy's sqrt."""
    import autograd.numpy as anp
    assert tg.grad(anp.sqrt)(2.0) == pytest.approx(0.5 / np.sqrt(2.0), rel=1e-12)
    assert tg.grad(tg.grad(anp.sqrt))(2.0) == pytest.approx(-0.25 * 2.0 ** -1.5, rel=1e-12)


class RKHSFun:
    """autograd's examples/rkhs.py differentiates with respect to a function in a kernel space (a VSpace of
    autograd's own); tapegen names the argument's class instead of failing where the function calls it."""

    def __init__(self, alphas):
        self.alphas = alphas

    def __call__(self, x):
        return sum([a * np.exp(-(x - x_repr) ** 2) for x_repr, a in self.alphas.items()], 0.0)


def rkhs_logprob(f, xs, ys):
    return -sum((f(x) - y) ** 2 for x, y in zip(xs, ys))


def test_object_without_fields_as_wrt_is_named():
    with pytest.raises(tg.WrtError, match="with respect to a RKHSFun: tapegen does not know its fields"):
        tg.grad(rkhs_logprob)(RKHSFun({0.5: 1.0}), [1.0, 2.0], [1.0, 0.0])
    with pytest.raises(tg.WrtError, match="RKHSFun"):
        tg.vjp(rkhs_logprob, RKHSFun({0.5: 1.0}), [1.0, 2.0], [1.0, 0.0])


def test_library_vjp_differentiated_again_by_autograd():
    """autograd's fixed_point has a VJP of autograd's own (fixed_point_vjp, built on autograd's make_vjp): its
    first derivative is autograd's, and so are its higher ones: tapegen cannot follow autograd's tracing, so
    autograd differentiates that rule (forward mode: its pullback transposed), as autograd.grad(grad(f))
    does (examples/fixed_points.py)."""
    import autograd
    f = autograd_style.fixed_point_sqrt
    ours, theirs = tg.grad(f)(2.0), autograd.grad(f)(2.0)
    assert ours == pytest.approx(theirs, rel=1e-12)
    assert ours == pytest.approx(0.5 / np.sqrt(2.0), rel=1e-3)  # the fixed point's tolerance, 1e-4
    second = autograd.grad(autograd.grad(f))(2.0)
    assert second == pytest.approx(-0.25 * 2.0 ** -1.5, rel=1e-2)
    assert tg.grad(tg.grad(f))(2.0) == pytest.approx(second, rel=1e-12)
    assert tg.jvp(tg.grad(f), (2.0,), (1.0,))[1] == pytest.approx(second, rel=1e-9)
    assert tg.hessian(f)(2.0) == pytest.approx(second, rel=1e-9)
    third = autograd.grad(autograd.grad(autograd.grad(f)))(2.0)
    assert tg.grad(tg.grad(tg.grad(f)))(2.0) == pytest.approx(third, rel=1e-9)


def test_deprecated_defvjp_differentiates_again():
    """autograd's deprecated `f.defvjp(lambda g, ans, vs, gvs, x, y: ...)` (test_wrappers.py): the user's
    function, not autograd's staging around it, is what gradient code calls, so it is differentiated again."""
    import warnings
    from autograd.core import primitive

    @primitive
    def new_mul(x, y):
        return x * y

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        new_mul.defvjp(lambda g, ans, vs, gvs, x, y: y * g)
        new_mul.defvjp(lambda g, ans, vs, gvs, x, y: x * g, argnum=1)

    def f(x, y):
        return np.sum(np.sin(new_mul(x, y)))

    x, y = np.array([0.3, -0.8]), np.array([1.5, 0.4])
    np.testing.assert_allclose(tg.grad(f)(x, y), np.cos(x * y) * y, rtol=1e-12)
    second = tg.grad(lambda v: np.sum(tg.grad(f)(v, y)))(x)
    np.testing.assert_allclose(second, -np.sin(x * y) * y * y, rtol=1e-12)


def test_flatten_func_unflatten_made_by_autograd_before_the_call():
    """gmm.py: `flattened_obj, unflatten, x0 = flatten_func(objective, params)`, then tapegen differentiates
    flattened_obj, whose `unflatten` is autograd's make_vjp of its _flatten: every mode, second order, and
    equal to autograd's gradient."""
    import autograd
    from autograd.misc.flatten import flatten_func
    rs = np.random.RandomState(3)
    params = {"means": rs.randn(2, 3), "chol": [rs.randn(3), 0.7]}
    flattened, unflatten, x0 = flatten_func(autograd_style.mixture_objective, params)
    check_modes(flattened, x0, 1.3)
    np.testing.assert_allclose(tg.grad(flattened)(x0, 1.3), autograd.grad(flattened)(x0, 1.3), rtol=1e-12)
    expected = autograd.hessian(flattened)(x0, 1.3)  # (1, 10, 10): flattened returns an array of one number
    np.testing.assert_allclose(tg.hessian(flattened)(x0, 1.3), expected.reshape(10, 10), rtol=1e-10)


def test_another_make_vjp_pullback_is_refused_when_the_code_runs():
    """A pullback autograd's make_vjp made for some other function is not flatten's unflatten: calling it on a
    differentiated value raises, never treated as unflatten."""
    from autograd import make_vjp
    reverse = make_vjp(lambda p: p[::-1] * 1.0)(np.ones(3))[0]  # linear and of the same size, but not unflatten
    with pytest.raises(tg.UnsupportedSyntaxError, match="not the `unflatten` of autograd.misc.flatten"):
        tg.grad(lambda g: np.sum(reverse(g) * np.arange(3.0)))(np.array([0.5, 1.0, 2.0]))


def test_same_jvp_differentiates_again_in_forward_mode():
    """`defjvp(f, "same")` (autograd's make_diagonal, the user's doubled_rows): the tangent is f of the tangent,
    so forward over forward follows f's own rules (autograd's test_make_diagonal checks order 2)."""
    rs = np.random.RandomState(5)
    x, w, u, v = rs.randn(3, 3), rs.randn(3), rs.randn(3, 3), rs.randn(3, 3)

    def along_u(x):
        return tg.jvp(lambda x: autograd_style.linear_primitives(x, w), (x,), (u,))[1]
    _, second = tg.jvp(along_u, (x,), (v,))
    eps = 1e-6
    np.testing.assert_allclose(second, (along_u(x + eps * v) - along_u(x - eps * v)) / (2 * eps), rtol=1e-6)


def test_grad_of_a_primitive_itself_and_one_without_a_vjp():
    """`grad(f)` of an autograd @primitive is the VJP defvjp gave it (defaults kept); one without a VJP raises a
    NoRuleError naming it, which is a NotImplementedError as autograd's is (autograd's test_no_vjp_def)."""
    from autograd.extend import defvjp, primitive

    @primitive
    def scaled(x, g=2.0):
        return x * g
    defvjp(scaled, lambda ans, x, g=2.0: lambda v: v * g * 10.0)  # declared, not the derivative: it is used
    assert tg.grad(scaled)(1.5) == pytest.approx(20.0)
    assert tg.grad(scaled)(1.5, 3.0) == pytest.approx(30.0)
    bare = primitive(lambda x: 2.0 * x)
    for differentiate in (lambda: tg.grad(bare)(1.0), lambda: tg.grad(lambda x: bare(x) * x)(1.0),
                          lambda: tg.jvp(bare, (1.0,), (1.0,))):
        with pytest.raises(NotImplementedError, match="no (gradient|derivative|JVP) rule for <lambda>"):
            differentiate()
    assert issubclass(tg.NoRuleError, NotImplementedError)


def test_a_method_made_a_primitive_is_refused_clearly():
    """A method made an autograd @primitive (autograd's VSpace.add), called on an object, is called as written;
    a derivative through it is a NoRuleError, not an error about the method's `self`."""
    from autograd.extend import defvjp, primitive

    class Doubler:
        @primitive
        def apply(self, x):
            return 2.0 * x
    defvjp(Doubler.apply, None, lambda ans, self, x: lambda g: 2.0 * g)
    apply = Doubler().apply  # passed on as a value, as autograd's check_grads(vs.add) does
    for differentiate in (lambda: tg.grad(lambda x: apply(x) * x)(1.5), lambda: tg.grad(apply)(1.5)):
        with pytest.raises(tg.NoRuleError, match="no gradient rule for"):
            differentiate()

"""scipy.special rules against central differences in float64: one row per (function, shape group).

Each row gets the checks of every rule table (test_rules_elementwise.table_tests: the VJP through
the whole transform, each JVP rule on its own, float32 kept), and a second-order check: Hessian-vector
products (forward over reverse) against central differences of the gradient. Reverse over reverse
and the arguments without a rule are tested below the table. Without SciPy the table is empty.
"""
import dataclasses

import numpy as np
import pytest

import tapegen as tg
from modes import check_modes
from test_rules_elementwise import BINARY_SHAPES, QUIET, UNARY_SHAPES, case, sample, shape_text, signed, table_tests

try:
    import scipy.special as sp
    from tapegen import rules
    rules.load_optional()
    from tapegen.rules import scipy_special
except ImportError:  # SciPy is optional: tests/test_scipy_optional.py checks tapegen without it
    sp = None


def between(low, high):
    return lambda shape: sample(shape, low, high)


def unary_table():
    positive, real, unit = between(0.5, 3.0), between(-2.0, 2.0), between(0.1, 0.9)
    away = lambda shape: signed(shape, 0.3, 3.0)  # noqa: E731  (|x| has a kink at 0: i0e, i1e)
    return [
        ("gammaln", positive), ("loggamma", positive), ("gamma", positive), ("rgamma", positive),
        ("digamma", positive), ("erf", real), ("erfc", real), ("erfcx", real), ("erfinv", between(-0.9, 0.9)),
        ("erfcinv", between(0.1, 1.9)), ("dawsn", real), ("expit", real), ("logit", unit), ("log_expit", real),
        ("ndtr", real), ("log_ndtr", between(-6.0, 2.0)), ("ndtri", unit), ("entr", between(0.2, 2.0)),
        ("expm1", real), ("log1p", between(-0.5, 2.0)), ("i0", real), ("i1", real), ("i0e", away),
        ("i1e", away), ("j0", real), ("j1", real), ("y0", positive), ("y1", positive), ("k0", positive),
        ("k1", positive), ("k0e", positive), ("k1e", positive), ("exp1", positive),
        ("expi", lambda shape: signed(shape, 0.3, 3.0)), ("ellipk", between(0.1, 0.9)), ("ellipe", between(0.1, 0.9)),
    ]


def binary_table():
    positive, real = between(0.5, 3.0), between(-2.0, 2.0)
    return [("beta", positive, positive), ("betaln", positive, positive), ("xlogy", real, positive),
            ("xlog1py", real, positive), ("rel_entr", between(0.3, 2.0), between(0.3, 2.0)),
            ("kl_div", between(0.3, 2.0), between(0.3, 2.0))]


def unary_rows(name, draw):
    fn = getattr(sp, name)
    for shape in UNARY_SHAPES:
        x = draw(shape)
        yield case(f"{name}-{shape_text(x)}", lambda x: fn(x), (x,), fn, {"x": x}, ("x",))


def binary_rows(name, draw1, draw2):
    fn = getattr(sp, name)
    params = tg.rules.lookup(fn).params
    for shape1, shape2 in BINARY_SHAPES:
        x1, x2 = draw1(shape1), draw2(shape2)
        yield case(f"{name}-{shape_text(x1, x2)}", lambda x1, x2: fn(x1, x2), (x1, x2), fn,
                   {params[0]: x1, params[1]: x2}, params)


def order_rows():
    """Functions of an order (Bessel v, polygamma n, multigammaln d): in their other argument; gammainc in both."""
    for name, v, draw in (("iv", 2.0, between(-2.0, 2.0)), ("ive", 0.5, between(0.3, 3.0)),
                          ("jv", 2.5, between(0.3, 3.0)), ("yv", 1.0, between(0.5, 3.0)),
                          ("kv", 0.7, between(0.5, 3.0)), ("kve", 1.5, between(0.5, 3.0)),
                          ("gammainc", 1.7, between(0.3, 3.0)), ("gammaincc", 2.5, between(0.3, 3.0))):
        fn = getattr(sp, name)
        order, arg = tg.rules.lookup(fn).params
        for shape in ((), (3, 2)):
            z = draw(shape)
            yield case(f"{name}-{order}={v}-{shape_text(z)}", (lambda fn, v: lambda z: fn(v, z))(fn, v), (z,), fn,
                       {order: v, arg: z}, (arg,), wrt=(0,))
    # in a too (the series where x < a + 1, the continued fraction elsewhere); the second derivative in a has
    # a rule in x only (a third derivative in a is refused): gammainc_da's second order, in x only
    for name, active in (("gammainc", ("a", "x")), ("gammaincc", ("a", "x")), ("gammainc_da", ("a", "x")),
                         ("gammainc_daa", ("x",))):
        fn = getattr(sp, name, None) or getattr(scipy_special, name)
        for region, a, x in (("series", sample((4,), 0.5, 3.0), sample((4,), 0.2, 1.2)),
                             ("fraction", sample((4,), 0.5, 2.0), sample((4,), 3.5, 9.0)),
                             ("both", 2.5, sample((3, 2), 0.3, 6.0))):
            wrt = (0, 1) if active == ("a", "x") else (1,)
            yield case(f"{name}-{region}-{shape_text(a, x)}", (lambda fn: lambda a, x: fn(a, x))(fn), (a, x), fn,
                       {"a": a, "x": x}, active, wrt=wrt)
    for n in (0, 2):
        x = sample((3, 2), 0.8, 3.0)
        yield case(f"yn-n={n}-(3,2)", (lambda n: lambda x: sp.yn(n, x))(n), (x,), sp.yn, {"n": n, "x": x}, ("x",))
    for n in (0, 1, 3):  # E_n' = -E_(n-1), E_0 = exp(-x) / x
        x = sample((3, 2), 0.3, 3.0)
        yield case(f"expn-n={n}-(3,2)", (lambda n: lambda x: sp.expn(n, x))(n), (x,), sp.expn, {"n": n, "x": x},
                   ("x",))
    z = sample((4,), -0.6, 0.6)
    yield case("hyp2f1-in-z-(4,)", lambda z: sp.hyp2f1(0.5, 1.5, 2.0, z), (z,), sp.hyp2f1,
               {"a": 0.5, "b": 1.5, "c": 2.0, "z": z}, ("z",))
    for df, shape in ((3.5, (4,)), (1.0, (3, 2))):  # (df = 1: the Cauchy cdf)
        t, df = sample(shape, -3.0, 3.0), np.full(shape, df)
        yield case(f"stdtr-df={df[0]}-{shape_text(t)}", (lambda df: lambda t: sp.stdtr(df, t))(df), (t,), sp.stdtr,
                   {"df": df, "t": t}, ("t",))
    h, a = sample((4,), -2.0, 2.0), sample((4,), -1.5, 1.5)
    yield case("owens_t-(4,)-(4,)", lambda h, a: sp.owens_t(h, a), (h, a), sp.owens_t, {"h": h, "a": a}, ("h", "a"),
               wrt=(0, 1))
    for shape in ((), (4,)):
        a, b, x = sample(shape, 1.2, 3.0), sample(shape, 1.2, 3.0), sample(shape, 0.2, 0.8)
        yield case(f"betainc-{shape_text(x)}", (lambda a, b: lambda x: sp.betainc(a, b, x))(a, b), (x,), sp.betainc,
                   {"a": a, "b": b, "x": x}, ("x",))
    # in a and b too (quadrature, incomplete_beta.py), below and above the median, a and b below 1 and large;
    # the second derivatives in a and b have rules in x only (a third derivative in a or b is refused)
    for name in ("betainc", "betainc_da", "betainc_db", "betainc_daa", "betainc_dab", "betainc_dbb"):
        fn = getattr(sp, name, None) or getattr(scipy_special, name)
        active = ("a", "b", "x") if name in ("betainc", "betainc_da", "betainc_db") else ("x",)
        for region, a, b, x in (("small", sample((4,), 0.3, 0.9), sample((4,), 0.4, 0.9), sample((4,), 0.1, 0.9)),
                                ("large", sample((3,), 20.0, 40.0), np.full(3, 30.0), sample((3,), 0.3, 0.6)),
                                ("both-tails", np.full(3, 2.5), np.full(3, 1.5), np.array([0.02, 0.5, 0.97]))):
            wrt = (0, 1, 2) if len(active) == 3 else (2,)
            yield case(f"{name}-in-a-b-{region}-{shape_text(a, x)}", (lambda fn: lambda a, b, x: fn(a, b, x))(fn),
                       (a, b, x), fn, {"a": a, "b": b, "x": x}, active, wrt=wrt)
    for n in (0, 1, 2):
        x = sample((3, 2), 0.5, 3.0)
        yield case(f"polygamma-n={n}-(3,2)", (lambda n: lambda x: sp.polygamma(n, x))(n), (x,), sp.polygamma,
                   {"n": n, "x": x}, ("x",))
    x = sample((4,), 0.5, 3.0)
    yield case("polygamma_like-n=1-(4,)", lambda x: scipy_special.polygamma_like(1, x), (x,),
               scipy_special.polygamma_like, {"n": 1, "x": x}, ("x",))
    x = sample((4,), -2.0, 2.0)
    yield case("gaussian-(4,)", lambda x: scipy_special.gaussian(x), (x,), scipy_special.gaussian, {"x": x}, ("x",))
    for shape in ((), (4,)):
        a = sample(shape, 1.5, 3.0)
        yield case(f"multigammaln-d=3-{shape_text(a)}", lambda a: sp.multigammaln(a, 3), (a,), sp.multigammaln,
                   {"a": a, "d": 3}, ("a",))


def reduction_rows():
    cube = sample((2, 3, 4))
    for axis, keepdims in ((None, False), (1, False), (-1, True), ((0, 2), False)):
        text = f"axis={str(axis).replace(' ', '')}{'-keepdims' if keepdims else ''}"
        yield case(f"logsumexp-(2,3,4)-{text}", (lambda ax, kd: lambda a: sp.logsumexp(a, axis=ax, keepdims=kd))(
            axis, keepdims), (cube,), sp.logsumexp, {"a": cube, "axis": axis, "keepdims": keepdims}, ("a",))
    a, b = sample((3, 4)), sample((3, 4), 0.5, 2.0)
    yield case("logsumexp-(3,4)-b-(3,4)-axis=1", lambda a, b: sp.logsumexp(a, axis=1, b=b), (a, b), sp.logsumexp,
               {"a": a, "axis": 1, "b": b}, ("a", "b"))
    b = sample((4,), 0.5, 2.0)
    yield case("logsumexp-(3,4)-b-(4,)", lambda a, b: sp.logsumexp(a, b=b), (a, b), sp.logsumexp,
               {"a": a, "b": b}, ("a", "b"))
    a = sample((5,))
    yield case("logsumexp-(5,)", lambda a: sp.logsumexp(a), (a,), sp.logsumexp, {"a": a}, ("a",))
    for fn in (sp.softmax, sp.log_softmax):
        for axis in (None, 1, -1):
            m = sample((3, 4))
            yield case(f"{fn.__name__}-(3,4)-axis={axis}", (lambda fn, ax: lambda x: fn(x, axis=ax))(fn, axis), (m,),
                       fn, {"x": m, "axis": axis}, ("x",))
    x = sample((3, 4))
    yield case("weights_or_one-(3,4)", lambda b: scipy_special.weights_or_one(b) * 2.0, (x,),
               scipy_special.weights_or_one, {"b": x}, ("b",))


def complex_rows():
    x = sample((3, 2))  # wofz of a real array is complex: rows of its real part and of a complex argument
    yield case("wofz-(3,2)-real-part", lambda x: np.real(sp.wofz(x)), (x,), sp.wofz, {"x": x}, ("x",), jvp=False)
    yield case("wofz-(3,2)-complex-imag", lambda x: np.imag(sp.wofz(x + 0.7j)), (x,), sp.wofz, {"x": x + 0.7j},
               ("x",), jvp=False)


if sp is None:
    ROWS = []
else:
    ROWS = [row for name, draw in unary_table() for row in unary_rows(name, draw)]
    ROWS += [row for name, d1, d2 in binary_table() for row in binary_rows(name, d1, d2)]
    ROWS += [*order_rows(), *reduction_rows(), *complex_rows()]

pytestmark = pytest.mark.skipif(sp is None, reason="SciPy is not installed")

if sp is not None:
    test_vjp, test_jvp, test_rules_keep_float32, test_every_vjp_rule_has_a_jvp_rule, test_ids_are_unique = \
        table_tests(ROWS, scipy_special.table)


SECOND_ORDER = [row for row in ROWS if not row.id.startswith(("gammainc_da-", "betainc_da-", "betainc_db-"))] + [
    dataclasses.replace(row, id=row.id.replace("gammainc_da-", "gammainc_da-in-x-"), wrt=(1,))
    for row in ROWS if row.id.startswith("gammainc_da-")] + [
    dataclasses.replace(row, id=row.id.replace("-in-a-b-", "-in-x-"), wrt=(2,))
    for row in ROWS if row.id.startswith(("betainc_da-", "betainc_db-"))]


@QUIET
@pytest.mark.parametrize("row", SECOND_ORDER, ids=[row.id for row in SECOND_ORDER])
def test_second_order(row):
    """Hessian-vector products (forward over reverse) vs central differences of the gradient."""
    check_second_order(row)


def check_second_order(row):
    """Of sum(sin(f(...))), a scalar whose Hessian mixes f's first and second derivatives."""
    fn = row.fn
    scalar = {1: lambda a: np.sum(np.sin(fn(a))), 2: lambda a, b: np.sum(np.sin(fn(a, b))),
              3: lambda a, b, c: np.sum(np.sin(fn(a, b, c))), 4: lambda a, b, c, d: np.sum(np.sin(fn(a, b, c, d))),
              5: lambda a, b, c, d, e: np.sum(np.sin(fn(a, b, c, d, e)))}[len(row.args)]
    tg.gradcheck(scalar, *row.args, wrt=row.wrt, rtol=1e-5, atol=1e-6, order=2)


@pytest.mark.parametrize("name", ["gammaln", "digamma", "erf", "log_ndtr", "i1", "j1", "expit"])
def test_reverse_over_reverse_and_third_order(name):
    fn, x, eps = getattr(sp, name), 0.8, 1e-4
    second, third = tg.grad(tg.grad(lambda x: fn(x))), tg.grad(tg.grad(tg.grad(lambda x: fn(x))))
    first = tg.grad(lambda x: fn(x))
    assert second(x) == pytest.approx((first(x + eps) - first(x - eps)) / (2 * eps), rel=1e-6)
    assert third(x) == pytest.approx((second(x + eps) - second(x - eps)) / (2 * eps), rel=1e-5)


@pytest.mark.parametrize("call", [lambda v, z: sp.iv(v, z), lambda a, b: scipy_special.betainc_daa(a, b, 0.3)],
                         ids=["iv", "betainc-third-derivative"])
def test_an_argument_without_a_rule_is_a_no_rule_error(call):
    with pytest.raises(tg.NoRuleError, match="argument 'v'|argument 'a'"):
        tg.grad(call, wrt=0)(1.5, 0.7)


@pytest.mark.parametrize("name", ["iv", "ive", "jv", "yv", "kv", "kve"])
def test_a_differentiated_bessel_order_names_why_and_the_fix(name):
    fn = getattr(sp, name)
    with pytest.raises(tg.NoRuleError, match=r"in z only.*no closed form.*stop_gradient"):
        tg.grad(lambda v, z: fn(v, z), wrt=0)(1.5, 0.7)
    assert tg.grad(lambda v, z: fn(tg.stop_gradient(v), z), wrt=1)(1.5, 0.7) != 0.0


def test_gammainc_in_a_against_scipy_deep_in_both_tails_and_to_third_order():
    """d log Q / da where Q ~ 1e-22 (computed from Q, not 1 - P) and d log P / da where P ~ 1e-12, against
    central differences of SciPy's own functions; the third derivative in a is refused, not guessed."""
    log_q = tg.grad(lambda a: np.log(sp.gammaincc(a, 60.0)))
    log_p = tg.grad(lambda a: np.log(sp.gammainc(a, 0.01)))
    for grad, f, a in ((log_q, lambda a: np.log(sp.gammaincc(a, 60.0)), 3.0),
                       (log_p, lambda a: np.log(sp.gammainc(a, 0.01)), 5.0)):
        h = 1e-4
        numeric = (8 * (f(a + h / 2) - f(a - h / 2)) - (f(a + h) - f(a - h))) / (6 * h)
        assert grad(a) == pytest.approx(numeric, rel=1e-7)
    with pytest.raises(tg.NoRuleError, match="gammainc_daa"):
        tg.grad(tg.grad(tg.grad(lambda a: sp.gammainc(a, 1.3))))(2.0)


def test_integer_orders_are_inert():
    """polygamma's n and multigammaln's d carry no derivative, even when computed from the variable."""
    assert tg.grad(lambda x: sp.polygamma(1, x) * x)(1.5) == pytest.approx(
        sp.polygamma(1, 1.5) + 1.5 * sp.polygamma(2, 1.5))


def test_logsumexp_is_stable_far_out():
    a = np.array([1000.0, 999.0, -1000.0])
    np.testing.assert_allclose(tg.grad(lambda a: sp.logsumexp(a))(a), sp.softmax(a), rtol=1e-12)


@QUIET
def test_xlogy_at_zero_is_zero_in_its_second_argument():
    dx1, dx2 = tg.grad(lambda a, b: np.sum(sp.xlogy(a, b)), wrt=(0, 1))(np.array([0.0, 2.0]), np.array([0.0, 3.0]))
    assert dx2[0] == 0.0 and dx2[1] == pytest.approx(2.0 / 3.0)


@pytest.mark.parametrize("a, b, x", [(0.7789738717408794, 0.4848638601869582, 0.8799232821691347),
                                     (0.11812749702019934, 7.938553712099653, 0.00018863691782290289),
                                     (0.2948304980035569, 0.08289726867359255, 0.9993018043228876)])
def test_betainc_shape_derivatives_converge_where_the_density_is_singular(a, b, x):
    """a or b below 1: t^(a-1) (or (1-t)^(b-1)) is singular at the end integrated from; substituted away (the
    quadrature raised 'did not converge' at these points, with a or b the one below 1)."""
    from tapegen.rules import incomplete_beta as ib
    h = 1e-6
    for second, first, shift in ((ib.betainc_daa, ib.betainc_da, (h, 0)), (ib.betainc_dbb, ib.betainc_db, (0, h))):
        central = (first(a + shift[0], b + shift[1], x) - first(a - shift[0], b - shift[1], x)) / (2 * h)
        np.testing.assert_allclose(second(a, b, x), central, rtol=1e-4, atol=1e-6)


def voigt_profile_sum(p):  # a Voigt line shape through the Faddeeva function, as spectroscopy fits write it
    x = np.linspace(-2.0, 2.0, 9)
    z = (x - p[0] + 1j * p[1]) / (p[2] * np.sqrt(2))
    return np.sum(np.real(sp.wofz(z)) / (p[2] * np.sqrt(2 * np.pi)))


def wofz_of_real(x):
    w = sp.wofz(x)
    return np.sum(np.real(w) * np.imag(w) + np.imag(w) ** 2)


@pytest.mark.parametrize("f, x", [(voigt_profile_sum, np.array([0.1, 0.5, 0.8])),
                                  (wofz_of_real, np.array([-1.5, 0.2, 0.9, 2.5]))], ids=["voigt", "real-input"])
def test_wofz_in_every_mode_and_second_order(f, x):
    check_modes(f, x)


@pytest.mark.parametrize("name", ["ndtr", "erf", "erfc"])
def test_second_derivative_at_infinity_is_zero(name):
    """ndtr(-inf) = 0, erf(inf) = 1: flat there, at every order (exp(-x * x)'s -2 x at x = inf is no NaN)."""
    fn = getattr(sp, name)
    check_modes(lambda p: np.sum(fn(np.array([-np.inf, 0.5, np.inf]) - p)), 0.3)
    assert np.array_equal(tg.hessian(lambda x: np.sum(fn(x)))(np.array([-np.inf, np.inf])), np.zeros((2, 2)))


def signed_sum_of_exponentials(a, w):
    """log |sum(b exp(a))| with weights of both signs, SciPy's sign kept (a difference of mixture densities)."""
    value, sign = sp.logsumexp(a, axis=1, b=np.array([[1.0, -2.5, 0.3]]) * w, return_sign=True)
    rowwise, signs = sp.logsumexp(a, 0, None, True, True)
    return np.sum(value * sign) + np.sum(rowwise ** 2 * signs)


def test_logsumexp_with_return_sign_in_every_mode():
    a = np.array([[0.3, -0.2, 0.5], [1.2, 0.1, -0.7], [-0.4, 0.9, 0.2]])
    check_modes(signed_sum_of_exponentials, a, 0.8)
    value = signed_sum_of_exponentials(a, 0.8)
    assert tg.value_and_grad(signed_sum_of_exponentials)(a, 0.8)[0] == pytest.approx(value, rel=1e-12)

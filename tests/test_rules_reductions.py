"""Reduction and scan rules against central differences in float64: one row per (primitive, axis group).

Axis groups: None, an int, a negative int, a tuple, with keepdims True and
False, on a (2, 3, 4) array, plus a vector and a Python float where NumPy
takes one. Every row checks the VJP through the whole transform, each JVP
rule on its own, and float32. Ties, zeros, NaNs and the logsumexp pattern
have tests of their own below the table.
"""
import numpy as np
import pytest

import tapegen as tg
from tapegen import rules
from tapegen.rules import reductions
from modes import check_modes
from test_rules_elementwise import RNG, case, sample, table_tests

AXES = ((None, False), (None, True), (1, False), (-1, True), ((0, 2), False), ((0, -1), True))
CUBE = (2, 3, 4)


def axis_text(axis, keepdims):
    text = "all" if axis is None else str(axis).replace(" ", "")
    return f"axis={text}{'-keepdims' if keepdims else ''}"


def reduce_call(prim, axis, keepdims):
    return lambda a: prim(a, axis=axis, keepdims=keepdims)


def reduction_rows(prim, draw=sample, scalar=True):
    name = rules.lookup(prim).name
    for axis, keepdims in AXES:
        a = draw(CUBE)
        yield case(f"{name}-(2,3,4)-{axis_text(axis, keepdims)}", reduce_call(prim, axis, keepdims), (a,), prim,
                   {"a": a, "axis": axis, "keepdims": keepdims}, ("a",))
    a = draw((5,))
    yield case(f"{name}-(5,)", lambda a: prim(a), (a,), prim, {"a": a}, ("a",))
    if scalar:
        a = draw(())
        yield case(f"{name}-scalar", lambda a: prim(a), (a,), prim, {"a": a}, ("a",))


def with_nans(shape):
    a = sample(shape)
    a[RNG.random(shape) < 0.25] = np.nan
    return a


def ddof_rows(prim):
    name = rules.lookup(prim).name
    for ddof in (0, 1):
        for axis, keepdims in AXES[:4]:
            a = sample(CUBE)
            yield case(f"{name}-(2,3,4)-{axis_text(axis, keepdims)}-ddof={ddof}",
                       (lambda axis, keepdims, ddof: lambda a: prim(a, axis=axis, ddof=ddof, keepdims=keepdims))(
                           axis, keepdims, ddof), (a,), prim,
                       {"a": a, "axis": axis, "ddof": ddof, "keepdims": keepdims}, ("a",))


def quantile_call(prim, q, axis, method, keepdims):
    return lambda a: prim(a, q, axis=axis, method=method, keepdims=keepdims)


def quantile_rows(prim, scale):
    name = rules.lookup(prim).name
    settings = [(0.3, None, "linear", False), (0.5, 1, "linear", True), (0.75, -1, "linear", False),
                (0.4, (0, 2), "linear", False), (np.array([0.1, 0.9]), 1, "linear", False),
                (np.array([[0.2], [0.6]]), None, "linear", True)]
    settings += [(0.3, 2, method, False) for method in ("lower", "higher", "nearest", "midpoint")]
    for q, axis, method, keepdims in settings:
        a = sample(CUBE)
        q = q * scale
        yield case(f"{name}-(2,3,4)-q={np.round(q, 2).tolist()}-{axis_text(axis, keepdims)}-{method}".replace(" ", ""),
                   quantile_call(prim, q, axis, method, keepdims), (a,), prim,
                   {"a": a, "q": q, "axis": axis, "method": method, "keepdims": keepdims}, ("a",))


def median_rows():
    for shape, axis, keepdims in ((CUBE, None, False), ((3, 5), 1, False), ((4, 4), 0, True), (CUBE, (0, 2), False)):
        a = sample(shape)
        yield case(f"median-{str(shape).replace(' ', '')}-{axis_text(axis, keepdims)}",
                   reduce_call(np.median, axis, keepdims), (a,), np.median,
                   {"a": a, "axis": axis, "keepdims": keepdims}, ("a",))


def average_rows():
    a, w = sample(CUBE), sample(CUBE, 0.5, 2.0)
    yield case("average-(2,3,4)-no-weights", lambda a: np.average(a, axis=1), (a,), np.average,
               {"a": a, "axis": 1}, ("a",))
    yield case("average-(2,3,4)-weights-(2,3,4)", lambda a, w: np.average(a, weights=w), (a, w), np.average,
               {"a": a, "weights": w}, ("a", "weights"))
    w3 = sample((3,), 0.5, 2.0)
    yield case("average-(2,3,4)-weights-(3,)-axis=1", lambda a, w: np.average(a, axis=1, weights=w), (a, w),
               np.average, {"a": a, "axis": 1, "weights": w3}, ("a", "weights"))
    w4 = sample((4,), 0.5, 2.0)
    yield case("average-(2,3,4)-weights-(4,)-axis=-1-keepdims",
               lambda a, w: np.average(a, axis=-1, weights=w, keepdims=True), (a, w4), np.average,
               {"a": a, "axis": -1, "weights": w4, "keepdims": True}, ("a", "weights"))


def zeros_in(shape, count):
    a = sample(shape, 0.5, 1.5) * RNG.choice([-1.0, 1.0], size=shape)
    flat = a.reshape(-1, shape[-1])
    for row in flat:
        row[RNG.choice(shape[-1], size=count, replace=False)] = 0.0
    return a


def scan_call(prim, axis):
    return lambda a: prim(a, axis=axis)


def scan_rows(prim):
    name = rules.lookup(prim).name
    for axis, a in ((None, sample((3, 4))), (0, sample((3, 4))), (-1, sample(CUBE)), (1, sample((2, 5)))):
        yield case(f"{name}-{str(np.shape(a)).replace(' ', '')}-axis={axis}", scan_call(prim, axis), (a,), prim,
                   {"a": a, "axis": axis}, ("a",))
    if prim is np.cumprod:
        for count in (1, 2):
            a = zeros_in((3, 5), count)
            yield case(f"cumprod-(3,5)-axis=-1-{count}-zeros", scan_call(prim, -1), (a,), prim,
                       {"a": a, "axis": -1}, ("a",))
        a = zeros_in((4,), 1)
        yield case("cumprod-(4,)-axis=None-zero", scan_call(prim, None), (a,), prim, {"a": a}, ("a",))


def prod_zero_rows():
    for count, axis in ((1, -1), (2, -1), (1, None), (2, (0, 1))):
        a = zeros_in((3, 4), count)
        yield case(f"prod-(3,4)-{axis_text(axis, False)}-{count}-zeros", reduce_call(np.prod, axis, False), (a,),
                   np.prod, {"a": a, "axis": axis}, ("a",))


def diff_call(n, axis):
    return lambda a: np.diff(a, n=n, axis=axis)


def diff_rows():
    for n, axis, shape in ((1, -1, (6,)), (2, -1, (3, 5)), (1, 0, (4, 3)), (3, 1, CUBE), (0, 0, (3,))):
        a = sample(shape)
        yield case(f"diff-{str(shape).replace(' ', '')}-n={n}-axis={axis}", diff_call(n, axis), (a,), np.diff,
                   {"a": a, "n": n, "axis": axis}, ("a",))


def gradient_both_axes(f):
    parts = np.gradient(f)
    return parts[0] + 3.0 * parts[1]


def gradient_rows():
    for shape, edge_order in (((6,), 1), ((6,), 2), ((2,), 1), ((3,), 2)):
        f = sample(shape)
        yield case(f"gradient-{str(shape).replace(' ', '')}-edge_order={edge_order}",
                   (lambda e: lambda f: np.gradient(f, edge_order=e))(edge_order), (f,), np.gradient,
                   {"f": f, "edge_order": edge_order}, ("f",))
    f = sample((4, 5))
    yield case("gradient-(4,5)-axis=0", lambda f: np.gradient(f, axis=0), (f,), np.gradient,
               {"f": f, "axis": 0}, ("f",))
    yield case("gradient-(4,5)-axis=-1-edge_order=2", lambda f: np.gradient(f, axis=-1, edge_order=2), (f,),
               np.gradient, {"f": f, "axis": -1, "edge_order": 2}, ("f",))
    # np.gradient of a matrix returns a tuple: its JVP rule is checked in test_gradient_jvp_of_a_matrix
    yield case("gradient-(4,5)-both-axes", gradient_both_axes, (f,), np.gradient, {"f": f}, ("f",), jvp=False)


def trapezoid_rows():
    y = sample((6,))
    yield case("trapezoid-(6,)", lambda y: np.trapezoid(y), (y,), np.trapezoid, {"values": y}, ("values",))
    yield case("trapezoid-(6,)-dx", lambda y, dx: np.trapezoid(y, dx=dx), (y, 0.3), np.trapezoid,
               {"values": y, "dx": 0.3}, ("values", "dx"))
    x = np.sort(sample((6,), 0.0, 5.0))
    yield case("trapezoid-(6,)-x", lambda y, x: np.trapezoid(y, x), (y, x), np.trapezoid,
               {"values": y, "x": x}, ("values", "x"))
    y3 = sample((3, 4))
    x4 = np.sort(sample((4,), 0.0, 2.0))
    yield case("trapezoid-(3,4)-x-(4,)", lambda y, x: np.trapezoid(y, x), (y3, x4), np.trapezoid,
               {"values": y3, "x": x4}, ("values", "x"))
    x34 = np.sort(sample((3, 4), 0.0, 2.0), axis=0)
    yield case("trapezoid-(3,4)-x-(3,4)-axis=0", lambda y, x: np.trapezoid(y, x, axis=0), (y3, x34),
               np.trapezoid, {"values": y3, "x": x34, "axis": 0}, ("values", "x"))


XP = np.array([0.0, 0.5, 1.5, 2.0, 3.5])


def interp_rows():
    x = np.array([-0.5, 0.2, 0.7, 1.9, 2.6, 3.3, 4.0])
    fp = sample((5,))
    yield case("interp-(7,)", lambda x, fp: np.interp(x, XP, fp), (x, fp), np.interp,
               {"x": x, "xp": XP, "fp": fp}, ("x", "fp"))
    yield case("interp-(7,)-left-right", lambda x, fp: np.interp(x, XP, fp, left=-1.0, right=2.0), (x, fp),
               np.interp, {"x": x, "xp": XP, "fp": fp, "left": -1.0, "right": 2.0}, ("x", "fp"))
    x2 = sample((2, 3), 0.1, 3.4)
    yield case("interp-(2,3)", lambda x, fp: np.interp(x, XP, fp), (x2, fp), np.interp,
               {"x": x2, "xp": XP, "fp": fp}, ("x", "fp"))
    yield case("interp-scalar", lambda x, fp: np.interp(x, XP, fp), (1.1, fp), np.interp,
               {"x": 1.1, "xp": XP, "fp": fp}, ("x", "fp"))


BINS = np.array([0, 3, 3, 1, 0, 5])


def bincount_rows():
    w = sample((6,))
    yield case("bincount-(6,)-weights", lambda w: np.bincount(BINS, weights=w), (w,), np.bincount,
               {"x": BINS, "weights": w}, ("weights",))
    yield case("bincount-(6,)-weights-minlength", lambda w: np.bincount(BINS, w, 8), (w,), np.bincount,
               {"x": BINS, "weights": w, "minlength": 8}, ("weights",))


SAMPLES = np.array([[0.1, 0.4, 0.45, 0.8], [1.0, 1.2, -0.3, 0.05]])  # outside the range, on its right edge


def histogram_rows():  # (jvp=False: the rule-level JVP check takes outputs of one shape; check_modes below)
    w = sample((2, 4), 0.5, 1.5)
    yield case("histogram-(2,4)-weights-range", lambda w: np.histogram(SAMPLES, 3, (0, 1), weights=w)[0], (w,),
               np.histogram, {"a": SAMPLES, "bins": 3, "range": (0, 1), "weights": w}, ("weights",), jvp=False)
    yield case("histogram-(2,4)-weights-density", lambda w: np.histogram(SAMPLES, 4, density=True, weights=w)[0],
               (w,), np.histogram, {"a": SAMPLES, "bins": 4, "density": True, "weights": w}, ("weights",), jvp=False)
    edges = np.array([0.0, 0.3, 0.5, 1.0])
    yield case("histogram-(2,4)-weights-edges-density", lambda w: np.histogram(SAMPLES, edges, density=True,
                                                                               weights=w)[0],
               (w,), np.histogram, {"a": SAMPLES, "bins": edges, "density": True, "weights": w}, ("weights",),
               jvp=False)


def method_rows():
    a = sample((3, 4))
    for name, call, prim, inputs in (
            ("sum", lambda a: a.sum(axis=1), np.sum, {"axis": 1}),
            ("mean", lambda a: a.mean(0), np.mean, {"axis": 0}),
            ("prod", lambda a: a.prod(), np.prod, {}),
            ("max", lambda a: a.max(axis=-1, keepdims=True), np.max, {"axis": -1, "keepdims": True}),
            ("min", lambda a: a.min(1), np.min, {"axis": 1}),
            ("var", lambda a: a.var(ddof=1), np.var, {"ddof": 1}),
            ("std", lambda a: a.std(axis=0), np.std, {"axis": 0}),
            ("cumsum", lambda a: a.cumsum(axis=1), np.cumsum, {"axis": 1}),
            ("cumprod", lambda a: a.cumprod(), np.cumprod, {})):
        yield case(f"{name}-(3,4)-method", call, (a,), prim, {"a": a, **inputs}, ("a",))


ROWS = [row for prim in (np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin)
        for row in reduction_rows(prim)]
ROWS += [row for prim in (np.nanmax, np.nanmin, np.ptp) for row in reduction_rows(prim, scalar=False)]
ROWS += [row for prim in (np.nansum, np.nanmean) for row in reduction_rows(prim, draw=with_nans, scalar=False)]
ROWS += [row for prim in (np.var, np.std) for row in ddof_rows(prim)]
ROWS += [*quantile_rows(np.quantile, 1), *quantile_rows(np.percentile, 100), *median_rows(), *average_rows()]
ROWS += [*scan_rows(np.cumsum), *scan_rows(np.cumprod), *prod_zero_rows(), *diff_rows(), *gradient_rows()]
ROWS += [*trapezoid_rows(), *interp_rows(), *bincount_rows(), *histogram_rows(), *method_rows()]

test_vjp, test_jvp, test_rules_keep_float32, test_every_vjp_rule_has_a_jvp_rule, test_ids_are_unique = \
    table_tests(ROWS, reductions.table)


# --- special values ------------------------------------------------------------------------------

def grad_of(f, *args, wrt=0):
    return tg.grad(f, wrt=wrt)(*args)


def test_gradient_jvp_of_a_matrix():
    f, t, eps = sample((4, 5)), sample((4, 5)), 1e-6
    expected = [(p - m) / (2 * eps) for p, m in zip(np.gradient(f + eps * t), np.gradient(f - eps * t))]
    got = reductions.gradient_jvp(t, None, 1)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("prim", [np.max, np.min, np.amax, np.nanmax], ids=lambda p: p.__name__)
def test_max_and_min_split_ties_evenly(prim):
    a = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    extreme = prim(a, axis=1, keepdims=True)
    expected = (a == extreme) / np.sum(a == extreme, axis=1, keepdims=True)
    np.testing.assert_array_equal(grad_of(lambda a: np.sum(prim(a, axis=1)), a), expected)
    # Along a direction that keeps the tie, the derivative is exact: moving both 3s moves the max.
    v = np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    eps = 1e-6
    slope = (np.sum(prim(a + eps * v, axis=1)) - np.sum(prim(a - eps * v, axis=1))) / (2 * eps)
    assert np.sum(grad_of(lambda a: np.sum(prim(a, axis=1)), a) * v) == pytest.approx(slope)


def test_ptp_of_a_constant_slice_is_zero_and_the_two_ends_otherwise():
    a = np.array([[2.0, 2.0, 2.0], [1.0, 4.0, 0.0]])
    np.testing.assert_array_equal(grad_of(lambda a: np.sum(np.ptp(a, axis=1)), a), [[0, 0, 0], [0, 1, -1]])


def test_median_shares_between_tied_middle_elements():
    a = np.array([2.0, 1.0, 2.0, 3.0, 2.0])
    g = grad_of(lambda a: np.median(a), a)
    np.testing.assert_allclose(g, np.where(a == 2.0, 1 / 3, 0.0))
    v, eps = (a == 2.0).astype(float), 1e-6  # a direction keeping the tie: the median moves with it
    assert np.sum(g * v) == pytest.approx((np.median(a + eps * v) - np.median(a - eps * v)) / (2 * eps))


def test_std_of_a_constant_gives_zero_not_nan():
    a = np.full((2, 3), 1.5)
    assert np.all(grad_of(lambda a: np.sum(np.std(a, axis=1)), a) == 0.0)
    assert np.all(grad_of(lambda a: np.std(a, ddof=1), a) == 0.0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nanmax_of_an_all_nan_slice_gives_zero_not_nan():
    a = np.array([[np.nan, np.nan], [1.0, 2.0]])
    np.testing.assert_array_equal(grad_of(lambda a: np.nansum(np.nanmax(a, axis=1)), a), [[0, 0], [0, 1]])


@pytest.mark.parametrize("scale", [1.0, 1000.0, -1000.0], ids=["1", "1000", "-1000"])
def test_logsumexp_through_max_exp_log(scale):
    def logsumexp(x):
        m = np.max(x, axis=-1, keepdims=True)
        return np.sum(np.log(np.sum(np.exp(x - m), axis=-1)) + m[..., 0])

    x = sample((3, 4)) + scale
    g = grad_of(logsumexp, x)
    assert np.all(np.isfinite(g))
    tg.gradcheck(logsumexp, x)
    np.testing.assert_allclose(np.sum(g, axis=-1), 1.0)  # softmax rows


def test_logsumexp_with_a_tied_max_is_still_the_softmax():
    def logsumexp(x):
        m = np.max(x)
        return np.log(np.sum(np.exp(x - m))) + m

    x = np.array([1.0, 3.0, 3.0])
    np.testing.assert_allclose(grad_of(logsumexp, x), np.exp(x) / np.sum(np.exp(x)), rtol=1e-12)


@pytest.mark.parametrize("count", [1, 2, 3])
def test_cumprod_and_prod_with_zeros_are_exact(count):
    a = zeros_in((6,), count)
    tg.gradcheck(lambda a: np.cumprod(a), a)
    tg.gradcheck(lambda a: np.prod(a), a)
    tg.gradcheck(lambda a: np.prod(a, axis=0, keepdims=True), a)


def test_an_unsupported_quantile_method_says_so():
    with pytest.raises(tg.TapegenError, match="quantile method 'weibull'"):
        grad_of(lambda a: np.quantile(a, 0.3, method="weibull"), np.arange(4.0))


def test_float32_end_to_end():
    a = sample((3, 4)).astype(np.float32)
    g = grad_of(lambda a: np.sum(np.cumprod(a, axis=1)) + np.median(a) + np.max(a) + np.std(a, ddof=1), a)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, grad_of(lambda a: np.sum(np.cumprod(a, axis=1)) + np.median(a) + np.max(a)
                                          + np.std(a, ddof=1), a.astype(np.float64)), rtol=1e-4, atol=1e-5)


def test_second_order_of_np_gradient_over_several_axes():
    """np.gradient's VJP over several axes read the outputs' cotangents with enumerate, which the code
    differentiating it again could not follow; it takes them as pieces (zeros for unused outputs)."""
    from modes import check_modes
    f = np.random.default_rng(3).standard_normal((4, 5))
    check_modes(lambda f: np.sum(np.sin(np.gradient(f)[0]) + np.gradient(f)[1] ** 2), f)


def weighted_histogram_energy(w):
    hist, edges = np.histogram(SAMPLES, bins=3, range=(0, 1), density=True, weights=w ** 2)
    return np.sum(hist ** 3) + np.sum(edges)


def test_histogram_in_every_mode_and_second_order():
    check_modes(weighted_histogram_energy, RNG.uniform(0.5, 1.5, (2, 4)))


def test_histogram_of_differentiated_samples_is_refused():
    """The counts are piecewise constant in the samples, but the edges move with them: no rule, an error."""
    with pytest.raises(tg.NoRuleError, match="histogram"):
        tg.grad(lambda a: np.sum(np.histogram(a, bins=3)[1]))(np.array([0.1, 0.5, 0.9]))

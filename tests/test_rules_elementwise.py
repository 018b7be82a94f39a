"""Elementwise rules against central differences in float64: one row per (primitive, shape group).

Shape groups: a Python float, a vector, a matrix; binary ops add broadcasting
((3, 1) with (4,), a Python float with a matrix). Every row checks the VJP
through the whole transform (`tg.gradcheck`), each JVP rule on its own
(`check_jvp_rules`, and that it returns the output's shape), and that rules
keep float32 as float32. Special values (kinks, ties, overflow, untaken
`np.where` branches) have tests of their own below the table.

The helpers here (`sample`, `Case`, the row checks) are shared with
test_rules_reductions.py.
"""
import operator

import numpy as np
import pytest

import tapegen as tg
from modes import check_modes
from rule_rows import Row, call_primitive, check_jvp_rules, check_vjp_row
from tapegen import rules
from tapegen.rules import elementwise
from tapegen.runtime import meta

RNG = np.random.default_rng(20240611)


# --- shared helpers ------------------------------------------------------------------------------

def sample(shape, low=-2.0, high=2.0):
    """A Python float for shape (), else a float64 array, uniform in [low, high)."""
    if shape == ():
        return float(RNG.uniform(low, high))
    return RNG.uniform(low, high, size=shape)


def signed(shape, low=0.3, high=2.0):
    """Like `sample`, with magnitudes in [low, high) and random signs: away from 0."""
    magnitude = sample(shape, low, high)
    return magnitude * (1.0 if RNG.random() < 0.5 else -1.0) if shape == () else \
        magnitude * RNG.choice([-1.0, 1.0], size=shape)


def shape_text(*values):
    return "x".join("scalar" if np.ndim(v) == 0 else str(np.shape(v)).replace(" ", "") for v in values)


def prim_name(fn):
    """`operator.add` for Python's operators (their NumPy twins are plain `add`), else the primitive's name."""
    if getattr(operator, getattr(fn, "__name__", ""), None) is fn:
        return f"operator.{fn.__name__}"
    return rules.lookup(fn).name


def case(name, fn, args, prim, inputs, active, wrt=None, covers=None, **options):
    """A Row that also knows the primitive's inputs by name, for the direct JVP and dtype checks."""
    prim_entry = rules.lookup(prim)
    return Row(id=f"{name}-float64", fn=fn, args=args, wrt=wrt or tuple(range(len(args))),
               covers=covers or (prim,),
               extra={"prim": prim, "inputs": {**prim_entry.defaults, **inputs}, "active": active}, **options)


def tangent_like(value):
    if isinstance(value, list):
        return [tangent_like(v) for v in value]
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        return float(RNG.normal())
    return RNG.normal(size=np.shape(value)).astype(np.asarray(value).dtype)


def rule_value(prim, rule, inputs, y, g=None, dots=None, active=()):
    """Call a rule with what each of its parameter names asks for (`active`: the other differentiated inputs)."""
    def read(name):
        if name in ("g", "y"):
            return g if name == "g" else y
        if name.endswith("_active") and name[:-7] in prim.params:
            return name[:-7] in active
        if name.endswith("_is_const") and name[:-9] in prim.params:
            return False  # the rows pass arrays, never literals
        base, _, suffix = name.rpartition("_")
        if suffix == "dot" and base in prim.params:
            return dots.get(base)
        if suffix in ("shape", "meta") and base in prim.params:
            return np.shape(inputs[base]) if suffix == "shape" else meta(inputs[base])
        return inputs[name]
    return rule.fn(**{name: read(name) for name in rule.reads})


def check_row_jvps(row):
    """Each JVP rule of the row's primitive, for each active input alone, vs central differences."""
    prim = rules.lookup(row.extra["prim"])
    inputs = row.extra["inputs"]
    y = call_primitive(prim, inputs)
    for name in row.extra["active"]:
        tangent = tangent_like(inputs[name])
        for fn in row.covers:
            check_jvp_rules(fn, inputs, {name: tangent}, rtol=row.rtol, atol=row.atol)
        part = rule_value(prim, prim.jvps[name], inputs, y, dots={name: tangent})
        assert np.shape(part) == np.shape(y), f"{prim.name} JVP for {name} has shape {np.shape(part)}"


def float32(value):
    if isinstance(value, list):
        return [float32(v) for v in value]
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value.astype(np.float32)
    return value


def cotangent_like(y):
    if isinstance(y, (tuple, list)):
        return [cotangent_like(item) for item in y]
    return np.asarray(RNG.normal(size=np.shape(y))).astype(np.result_type(y))


def dtypes(value):
    return [np.result_type(v) for v in value] if isinstance(value, (list, tuple)) else [np.result_type(value)]


def check_row_float32(row):
    """Rules given float32 arrays return float32 (float64 only where the primitive's output is)."""
    prim = rules.lookup(row.extra["prim"])
    inputs = {name: float32(value) for name, value in row.extra["inputs"].items()}
    y = call_primitive(prim, inputs)
    out_dtype = dtypes(y)[0]
    checked = 0
    for name in row.extra["active"]:
        value = inputs[name]
        if not all(isinstance(v, np.ndarray) for v in (value if isinstance(value, list) else [value])):
            continue
        expected = np.result_type(np.float32, out_dtype)
        cotangent = rule_value(prim, prim.vjps[name], inputs, y, g=cotangent_like(y))
        assert dtypes(cotangent) == [expected] * len(dtypes(cotangent)), f"{prim.name} VJP for {name}"
        shapes = [np.shape(v) for v in value] if isinstance(value, list) else np.shape(value)
        assert ([np.shape(c) for c in cotangent] if isinstance(value, list) else np.shape(cotangent)) == shapes
        tangent = rule_value(prim, prim.jvps[name], inputs, y, dots={name: float32(tangent_like(value))})
        # float32, or the output's own dtype where that is float64 whatever the inputs (np.interp)
        assert dtypes(tangent)[0] in (np.float32, out_dtype), f"{prim.name} JVP for {name}"
        checked += 1
    assert checked, "no float32 array input to check: give the row an array input"


# --- the table -----------------------------------------------------------------------------------

UNARY_SHAPES = ((), (5,), (3, 2))
BINARY_SHAPES = (((), ()), ((5,), (5,)), ((3, 2), (3, 2)), ((3, 1), (4,)), ((), (3, 2)), ((3, 2), ()))

# (primitive, parameter name, how to sample its input)
UNARY = [
    (operator.neg, "x", sample), (operator.pos, "x", sample), (np.negative, "x", sample),
    (np.positive, "x", sample), (np.exp, "x", sample), (np.exp2, "x", sample), (np.expm1, "x", sample),
    (np.log, "x", lambda s: sample(s, 0.5, 3.0)), (np.log2, "x", lambda s: sample(s, 0.5, 3.0)),
    (np.log10, "x", lambda s: sample(s, 0.5, 3.0)), (np.log1p, "x", lambda s: sample(s, -0.5, 2.0)),
    (np.sqrt, "x", lambda s: sample(s, 0.5, 3.0)), (np.cbrt, "x", signed), (np.square, "x", sample),
    (np.reciprocal, "x", signed), (np.sin, "x", sample), (np.cos, "x", sample),
    (np.tan, "x", lambda s: sample(s, -1.2, 1.2)), (np.tanh, "x", sample), (np.sinh, "x", sample),
    (np.cosh, "x", sample), (np.arcsin, "x", lambda s: sample(s, -0.9, 0.9)),
    (np.arccos, "x", lambda s: sample(s, -0.9, 0.9)), (np.arctan, "x", sample),
    (np.arcsinh, "x", lambda s: sample(s, -3.0, 3.0)), (np.arccosh, "x", lambda s: sample(s, 1.2, 3.0)),
    (np.arctanh, "x", lambda s: sample(s, -0.9, 0.9)), (np.abs, "x", signed), (np.fabs, "x", signed),
    (np.sinc, "x", sample), (np.deg2rad, "x", sample), (np.radians, "x", sample), (np.rad2deg, "x", sample),
    (np.degrees, "x", sample), (np.conjugate, "x", sample), (elementwise.conj_method, "x", sample),
    (np.real, "val", sample),
    (np.imag, "val", sample), (np.angle, "z", signed), (np.nan_to_num, "x", sample),
]

BINARY = [
    (operator.add, sample, sample), (np.add, sample, sample), (operator.sub, sample, sample),
    (np.subtract, sample, sample), (operator.mul, sample, sample), (np.multiply, sample, sample),
    (operator.truediv, sample, signed), (np.divide, sample, signed),
    (operator.pow, lambda s: sample(s, 0.5, 2.0), lambda s: sample(s, -1.5, 2.5)),
    (np.power, lambda s: sample(s, 0.5, 2.0), lambda s: sample(s, -1.5, 2.5)),
    (np.float_power, lambda s: sample(s, 0.5, 2.0), lambda s: sample(s, -1.5, 2.5)),
    (operator.mod, lambda s: sample(s, -3.0, 3.0), lambda s: sample(s, 0.7, 1.3)),
    (np.remainder, lambda s: sample(s, -3.0, 3.0), lambda s: sample(s, 0.7, 1.3)),
    (np.fmod, lambda s: sample(s, -3.0, 3.0), lambda s: sample(s, 0.7, 1.3)),
    (np.arctan2, sample, sample), (np.maximum, sample, sample), (np.minimum, sample, sample),
    (np.fmax, sample, sample), (np.fmin, sample, sample), (np.logaddexp, sample, sample),
    (np.logaddexp2, sample, sample), (np.hypot, sample, sample), (np.copysign, signed, signed),
]


def unary_rows(prim, param, draw):
    for shape in UNARY_SHAPES:
        x = draw(shape)
        yield case(f"{prim_name(prim)}-{shape_text(x)}", lambda x: prim(x), (x,), prim, {param: x}, (param,))


def binary_rows(prim, draw1, draw2):
    for shape1, shape2 in BINARY_SHAPES:
        x1, x2 = draw1(shape1), draw2(shape2)
        yield case(f"{prim_name(prim)}-{shape_text(x1, x2)}", lambda x1, x2: prim(x1, x2), (x1, x2),
                   prim, {"x1": x1, "x2": x2}, ("x1", "x2"))


def clip_rows():
    a = sample((3, 4))
    yield case("clip-(3,4)", lambda a: np.clip(a, -0.5, 0.7), (a,), np.clip,
               {"a": a, "a_min": -0.5, "a_max": 0.7}, ("a",))
    yield case("clip-(3,4)-method", lambda a: a.clip(-0.5, 0.7), (a,), np.clip,
               {"a": a, "a_min": -0.5, "a_max": 0.7}, ("a",))
    yield case("clip-(3,4)-upper-only", lambda a: np.clip(a, None, 0.3), (a,), np.clip,
               {"a": a, "a_min": None, "a_max": 0.3}, ("a",))
    low, high = sample((3, 1), -1.0, -0.2), sample((4,), 0.2, 1.0)
    yield case("clip-(3,4)x(3,1)x(4,)", lambda a, lo, hi: np.clip(a, lo, hi), (a, low, high), np.clip,
               {"a": a, "a_min": low, "a_max": high}, ("a", "a_min", "a_max"))
    x = sample((5,))
    yield case("clip-(5,)x(3,1)-broadcast", lambda a, lo: np.clip(a, lo, 2.0), (x, low), np.clip,
               {"a": x, "a_min": low, "a_max": 2.0}, ("a", "a_min"))


CONDITION = RNG.random((3, 4)) < 0.5
CONDITIONS = [RNG.random((3, 4)) < 0.3, RNG.random((3, 4)) < 0.5]


def where_rows():
    x1, x2 = sample((3, 4)), sample((3, 4))
    yield case("where-(3,4)", lambda x1, x2: np.where(CONDITION, x1, x2), (x1, x2), np.where,
               {"condition": CONDITION, "x1": x1, "x2": x2}, ("x1", "x2"))
    x1, x2 = sample((3, 1)), sample((4,))
    yield case("where-(3,1)x(4,)", lambda x1, x2: np.where(CONDITION, x1, x2), (x1, x2), np.where,
               {"condition": CONDITION, "x1": x1, "x2": x2}, ("x1", "x2"))
    x1, x2 = sample(()), sample((3, 4))
    yield case("where-scalarx(3,4)", lambda x1, x2: np.where(CONDITION, x1, x2), (x1, x2), np.where,
               {"condition": CONDITION, "x1": x1, "x2": x2}, ("x1", "x2"))
    c = sample((3, 4))
    yield case("where-float-condition-(3,4)", lambda c, x1: np.where(c, x1, 0.0), (c, x2), np.where,
               {"condition": c, "x1": x2, "x2": 0.0}, ("condition", "x1"))


def select_rows():
    a, b, d = sample((3, 4)), sample((3, 4)), sample((3, 4))
    yield case("select-(3,4)", lambda a, b, d: np.select(CONDITIONS, [a, b], d), (a, b, d), np.select,
               {"condlist": CONDITIONS, "choicelist": [a, b], "default": d}, ("choicelist", "default"))
    a, b, d = sample((3, 1)), sample((4,)), sample(())
    # jvp=False: check_jvp_rules perturbs a list argument as one array, which needs equal shapes
    yield case("select-(3,1)x(4,)xscalar", lambda a, b, d: np.select(CONDITIONS, [a, b], d), (a, b, d),
               np.select, {"condlist": CONDITIONS, "choicelist": [a, b], "default": d}, ("choicelist", "default"),
               jvp=False)


def constructor_rows():
    v = sample(())
    yield case("full-scalar", lambda v: np.full((3, 2), v), (v,), np.full,
               {"shape": (3, 2), "fill_value": v}, ("fill_value",))
    v = sample((2,))
    yield case("full-(2,)", lambda v: np.full((3, 2), v), (v,), np.full,
               {"shape": (3, 2), "fill_value": v}, ("fill_value",))
    x = sample((3, 2))
    yield case("full_like-(3,2)xscalar", lambda x, v: np.full_like(x, v), (x, 0.7), np.full_like,
               {"a": x, "fill_value": 0.7}, ("a", "fill_value"))
    yield case("linspace-scalar", lambda a, b: np.linspace(a, b, 5), (0.3, 1.7), np.linspace,
               {"start": 0.3, "stop": 1.7, "num": 5}, ("start", "stop"))
    start, stop = sample((2,)), sample((2,))
    yield case("linspace-(2,)-no-endpoint", lambda a, b: np.linspace(a, b, 4, endpoint=False), (start, stop),
               np.linspace, {"start": start, "stop": stop, "num": 4, "endpoint": False}, ("start", "stop"))
    yield case("arange-scalar", lambda s, h, e: np.arange(s, e, h), (0.25, 0.5, 3.0), np.arange,
               {"start": 0.25, "stop": 3.0, "step": 0.5}, ("start", "step", "stop"))
    yield case("arange-stop-only-scalar", lambda e: np.arange(e) * e, (3.5,), np.arange,
               {"start": 3.5}, ("start",))


def misc_rows():
    x = sample(())
    yield case("float-scalar", lambda x: float(x) * 3.0, (x,), float, {"x": x}, ("x",), covers=(float,))
    x = np.array([0.5, np.nan, -1.5, np.inf, -np.inf, 2.0])
    yield case("nan_to_num-(6,)-nonfinite", lambda x: np.nan_to_num(x), (x,), np.nan_to_num, {"x": x}, ("x",))
    x = np.array([[0.1, 3.0, 6.0, -0.5], [2.0, -2.5, 1.0, 4.5]])  # jumps of more than pi along both axes
    yield case("unwrap-(2,4)-jumps", lambda p: np.unwrap(p), (x,), np.unwrap, {"p": x}, ("p",))
    yield case("unwrap-(2,4)-axis0-period", lambda p: np.unwrap(p, axis=0, period=4.0), (x,), np.unwrap,
               {"p": x, "axis": 0, "period": 4.0}, ("p",))
    x = sample((3, 2))
    yield case("conjugate-(3,2)-method", lambda x: x.conj(), (x,), elementwise.conj_method, {"x": x}, ("x",))
    x = sample((3, 2))
    yield case("real_if_close-(3,2)", lambda a: np.real_if_close(a * a), (x,), np.real_if_close, {"a": x}, ("a",))


ROWS = [row for prim, param, draw in UNARY for row in unary_rows(prim, param, draw)]
ROWS += [row for prim, draw1, draw2 in BINARY for row in binary_rows(prim, draw1, draw2)]
ROWS += [*clip_rows(), *where_rows(), *select_rows(), *constructor_rows(), *misc_rows()]


QUIET = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf and NaN inputs, on purpose


def table_tests(rows, table):
    """The checks every rule table gets, for its test module to bind as its own tests."""
    @QUIET
    @pytest.mark.parametrize("row", rows, ids=[row.id for row in rows])
    def test_vjp(row):
        check_vjp_row(row)

    jvp_rows = [row for row in rows if row.jvp]

    @QUIET
    @pytest.mark.parametrize("row", jvp_rows, ids=[row.id for row in jvp_rows])
    def test_jvp(row):
        check_row_jvps(row)

    float32_rows = [row for row in rows if any(isinstance(v, np.ndarray) for v in row.args)]

    @QUIET
    @pytest.mark.parametrize("row", float32_rows, ids=[row.id.replace("float64", "float32") for row in float32_rows])
    def test_rules_keep_float32(row):
        check_row_float32(row)

    def test_every_vjp_rule_has_a_jvp_rule():
        for prim in table.primitives.values():
            assert set(prim.vjps) == set(prim.jvps), prim.name

    def test_ids_are_unique():
        assert len({row.id for row in rows}) == len(rows)

    return test_vjp, test_jvp, test_rules_keep_float32, test_every_vjp_rule_has_a_jvp_rule, test_ids_are_unique


test_vjp, test_jvp, test_rules_keep_float32, test_every_vjp_rule_has_a_jvp_rule, test_ids_are_unique = \
    table_tests(ROWS, elementwise.table)


# --- special values ------------------------------------------------------------------------------

def grad_of(f, *args, wrt=0):
    return tg.grad(f, wrt=wrt)(*args)


@pytest.mark.parametrize("x1, x2", [(1000.0, 1000.0), (-1000.0, -1000.0), (1000.0, -1000.0), (-1000.0, 999.0)])
def test_logaddexp_does_not_overflow(x1, x2):
    d1, d2 = grad_of(lambda a, b: np.logaddexp(a, b), x1, x2, wrt=(0, 1))
    assert np.isfinite(d1) and np.isfinite(d2)
    tg.gradcheck(lambda a, b: np.logaddexp(a, b), x1, x2, wrt=(0, 1))
    tg.gradcheck(lambda a, b: np.logaddexp2(a, b), x1, x2, wrt=(0, 1))


def test_sqrt_and_cbrt_at_zero_give_zero():
    x = np.array([0.0, 4.0, 0.0])
    np.testing.assert_array_equal(grad_of(lambda x: np.sum(np.sqrt(x)), x), [0.0, 0.25, 0.0])
    assert grad_of(lambda x: np.cbrt(x), 0.0) == 0.0
    assert elementwise.sqrt_jvp(np.array([1.0, 1.0]), np.sqrt(x[:2]))[0] == 0.0


def test_hypot_at_origin_gives_zero_and_elsewhere_its_slope():
    assert grad_of(lambda a, b: np.hypot(a, b), 0.0, 0.0, wrt=(0, 1)) == (0.0, 0.0)
    tg.gradcheck(lambda a, b: np.hypot(a, b), np.array([3.0, 0.0]), np.array([4.0, -2.0]), wrt=(0, 1))


def test_abs_at_zero_gives_zero():
    x = np.array([-2.0, 0.0, 3.0])
    np.testing.assert_array_equal(grad_of(lambda x: np.sum(np.abs(x)), x), np.sign(x))
    np.testing.assert_array_equal(grad_of(lambda x: np.sum(np.fabs(x)), x), np.sign(x))
    assert elementwise.abs_jvp(np.array(0.0), np.array(1.0)) == 0.0


def test_relu_has_derivative_zero_at_zero():
    x = np.array([-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(grad_of(lambda x: np.sum(np.maximum(x, 0)), x), x > 0)
    np.testing.assert_array_equal(grad_of(lambda x: np.sum(np.maximum(0.0, x)), x), x > 0)
    np.testing.assert_array_equal(grad_of(lambda x: np.sum(np.minimum(x, 0.0)), x), x < 0)


@pytest.mark.parametrize("prim", [np.maximum, np.minimum, np.fmax, np.fmin], ids=lambda p: p.__name__)
def test_ties_between_two_varying_arrays_split_evenly(prim):
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.5, 3.0])
    dx, dy = grad_of(lambda x, y: np.sum(prim(x, y)), x, y, wrt=(0, 1))
    winner_is_x = (x > y) if prim in (np.maximum, np.fmax) else (x < y)
    np.testing.assert_array_equal(dx, np.where(x == y, 0.5, winner_is_x))
    np.testing.assert_array_equal(dx + dy, 1.0)  # the whole cotangent goes somewhere, as for a sum


def test_fmax_and_fmin_pass_the_cotangent_to_the_number_beside_a_nan():
    x, y = np.array([np.nan, 2.0, np.nan]), np.array([1.0, np.nan, np.nan])
    for prim in (np.fmax, np.fmin):
        dx, dy = grad_of(lambda x, y: np.sum(np.nan_to_num(prim(x, y))), x, y, wrt=(0, 1))
        np.testing.assert_array_equal(dx, [0.0, 1.0, 0.0])
        np.testing.assert_array_equal(dy, [1.0, 0.0, 0.0])


def test_clip_passes_the_cotangent_at_its_bounds():
    a = np.array([-1.0, -0.5, 0.0, 0.7, 1.0])
    np.testing.assert_array_equal(grad_of(lambda a: np.sum(np.clip(a, -0.5, 0.7)), a), [0, 1, 1, 1, 0])


UNTAKEN = [  # (id, where the branch is taken, function)
    ("sqrt", lambda x: x > 0, lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0))),
    ("log", lambda x: x > 0, lambda x: np.sum(np.where(x > 0, np.log(x), 0.0))),
    ("log2", lambda x: x > 0, lambda x: np.sum(np.where(x > 0, np.log2(x), 0.0))),
    ("log10", lambda x: x > 0, lambda x: np.sum(np.where(x > 0, np.log10(x), 0.0))),
    ("log1p", lambda x: x > -1, lambda x: np.sum(np.where(x > -1, np.log1p(x), 0.0))),
    ("power", lambda x: x > 0, lambda x: np.sum(np.where(x > 0, x ** 0.5, 0.0))),
    ("float_power", lambda x: x > 0, lambda x: np.sum(np.where(x > 0, np.float_power(x, 1.5), 0.0))),
    ("reciprocal", lambda x: x != 0, lambda x: np.sum(np.where(x != 0, np.reciprocal(x), 0.0))),
    ("divide", lambda x: x != 0, lambda x: np.sum(np.where(x != 0, 1.0 / x, 0.0))),
    ("divide-x1", lambda x: x != 0, lambda x: np.sum(np.where(x != 0, x / x, 0.0))),
    ("arcsin", lambda x: np.abs(x) < 2, lambda x: np.sum(np.where(np.abs(x) < 2, np.arcsin(x / 2), 0.0))),
    ("arccos", lambda x: np.abs(x) < 2, lambda x: np.sum(np.where(np.abs(x) < 2, np.arccos(x / 2), 0.0))),
    ("arccosh", lambda x: x > 1, lambda x: np.sum(np.where(x > 1, np.arccosh(x), 0.0))),
    ("arctanh", lambda x: np.abs(x) < 2, lambda x: np.sum(np.where(np.abs(x) < 2, np.arctanh(x / 2), 0.0))),
    ("cbrt", lambda x: x != 0, lambda x: np.sum(np.where(x != 0, np.cbrt(x), 0.0))),
]


@QUIET
@pytest.mark.parametrize("taken, f", [(t, f) for _, t, f in UNTAKEN], ids=[name for name, _, _ in UNTAKEN])
def test_untaken_where_branch_gives_zero_not_nan(taken, f):
    x = np.array([-3.0, -2.0, -1.0, 0.0, 0.5, 1.5, 2.0, 4.0])
    g = grad_of(f, x)
    for value in x[taken(x)]:
        tg.gradcheck(f, np.array([value]))
    assert np.all(g[~taken(x)] == 0.0), g


@QUIET
def test_untaken_branch_value_infinite_or_nan_gives_zero():
    """An infinite or NaN *value* in the untaken branch, multiplied by a cotangent later (x * log(x)
    at 0, exp overflowing, a product with sqrt of a negative) gives 0, as the guard inside would."""
    x = np.array([0.0, 2.0])
    naive = grad_of(lambda x: np.sum(np.where(x > 0, x * np.log(x), 0.0)), x)
    inside = grad_of(lambda x: np.sum(np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)), x)
    np.testing.assert_allclose(naive, [0.0, np.log(2.0) + 1.0])
    np.testing.assert_allclose(inside, naive)
    big = grad_of(lambda x: np.sum(np.where(x < 100, np.exp(10 * x), 0.0)), np.array([1000.0, 0.1]))
    np.testing.assert_allclose(big, [0.0, 10 * np.exp(1.0)])


UNTAKEN_SECOND = [  # branches whose untaken side is NaN or infinite, away from the switch: every mode, second order
    lambda x: np.sum(np.where(x > 0, np.sqrt(x) * x, x ** 2)),
    lambda x: np.sum(np.where(x > 0, np.log(x) * x ** 2, np.sin(x))),
    lambda x: np.sum(np.where(x > 0.1, x / np.sqrt(x - 0.1), np.exp(x))),
    lambda x: np.sum(np.where(x > -0.5, (x + 0.5) ** 1.5 * x, 0.0) ** 2),
    lambda x: np.sum(np.where(x != 0, np.sin(x) / x, 1.0)),
]


@QUIET
@pytest.mark.parametrize("f", UNTAKEN_SECOND, ids=["sqrt-product", "log-product", "quotient", "power-product",
                                                   "sinc-like"])
def test_untaken_branch_second_order(f):
    x = np.array([0.5, -0.7, 1.3, -2.0, 0.05])
    check_modes(f, x)
    if f is UNTAKEN_SECOND[-1]:  # at 0 itself: the taken branch is the constant, whose derivatives are 0
        slope = tg.grad(f)
        curvature = tg.grad(lambda x: np.sum(slope(x)))(np.array([0.5, 0.0]))  # reverse over reverse
        np.testing.assert_allclose(curvature, [tg.grad(lambda x: np.sum(slope(x)))(np.array([0.5]))[0], 0.0])


def phase_energy(x):  # a phase recovered from a complex signal, unwrapped (signal processing)
    z = np.exp(1j * np.cumsum(x))
    return np.sum(np.unwrap(np.angle(z)) ** 2)


def test_unwrap_in_every_mode_and_second_order():
    check_modes(phase_energy, np.array([1.0, 2.0, 2.5, 1.7]))


def test_sinc_slope_is_zero_at_zero_and_accurate_near_it():
    assert grad_of(lambda x: np.sinc(x), 0.0) == 0.0
    tiny = np.array([1e-9, -1e-6, 1e-4])
    np.testing.assert_allclose(grad_of(lambda x: np.sum(np.sinc(x)), tiny), -np.pi ** 2 * tiny / 3, rtol=1e-7)
    across = np.array([0.3 / np.pi - 1e-3, 0.3 / np.pi + 1e-3, 0.05, 0.5, 1.0, 2.5])  # both sides of the switch
    tg.gradcheck(lambda x: np.sinc(x), across, rtol=1e-7)


@pytest.mark.parametrize("x", [1000.0, -1000.0, 1e200, -1e200])
def test_arcsinh_far_out(x):
    d = grad_of(lambda x: np.arcsinh(x), x)
    np.testing.assert_allclose(d, 1 / np.hypot(x, 1.0), rtol=1e-12)
    if abs(x) < 1e6:
        tg.gradcheck(lambda x: np.arcsinh(x), x)


@QUIET  # x ** (0 - 1) at 0 is inf in the backward pass, and then guarded
@pytest.mark.parametrize("k", [0, 1, 2, 3], ids=lambda k: f"k={k}")
def test_power_at_zero_with_integer_exponents(k):
    x = np.array([0.0, 0.0])
    g = grad_of(lambda x: np.sum(x ** k), x)
    assert np.all(np.isfinite(g))
    tg.gradcheck(lambda x: np.sum(x ** k), x)
    tg.gradcheck(lambda x: np.sum(np.power(x, k)), x)


@QUIET
@pytest.mark.parametrize("exponent", [0.0, 0], ids=lambda e: f"{type(e).__name__}-{e}")
def test_power_of_a_python_zero(exponent):
    """A Python 0.0 ** (e - 1) raises ZeroDivisionError where NumPy's is inf (autograd gives 0 for e = 0)."""
    assert tg.grad(lambda x: np.power(x, exponent))(0.0) == 0.0
    assert tg.grad(lambda x: x ** exponent)(0.0) == 0.0
    assert tg.jvp(lambda x: np.power(x, exponent), (0.0,), (1.0,))[1] == 0.0


@QUIET
def test_power_with_an_exponent_array_containing_zero_at_zero():
    """Polynomial features x ** [0, 1, 2, 3] at x = 0: d/dx is [0, 1, 0, 0], not NaN."""
    tg.gradcheck(lambda x: np.sum(x ** np.arange(4.0)), 0.0)
    tg.gradcheck(lambda p: np.sum(np.zeros(3) ** p), np.array([1.0, 2.0, 0.5]))


COMPLEX = [
    ("real", lambda z: np.real(z * z)),
    ("imag", lambda z: np.imag(z * z)),
    ("conj", lambda z: np.real(np.conj(z) * (2.0 + 3.0j))),
    ("angle", lambda z: np.angle(z)),
    ("angle-deg", lambda z: np.angle(z, deg=True)),
    ("abs", lambda z: np.abs(z)),
    ("exp", lambda z: np.real(np.exp(z))),
    ("real_if_close-complex", lambda z: np.abs(np.real_if_close(z * z))),
    ("real_if_close-real", lambda z: np.real_if_close(z - 1j * np.imag(z)) ** 3),
]


@pytest.mark.parametrize("f", [f for _, f in COMPLEX], ids=[name for name, _ in COMPLEX])
def test_complex_input_gradient_is_df_dx_minus_i_df_dy(f):
    """JAX's convention for a real function of z = x + iy."""
    z, eps = 0.7 - 1.3j, 1e-6
    d_dx = (f(z + eps) - f(z - eps)) / (2 * eps)
    d_dy = (f(z + 1j * eps) - f(z - 1j * eps)) / (2 * eps)
    np.testing.assert_allclose(grad_of(f, z), d_dx - 1j * d_dy, rtol=1e-7)


def test_complex_jvp_rules_are_directional_derivatives():
    z, t, eps = np.array([0.7 - 1.3j, -0.2 + 0.4j]), np.array([0.3 + 0.5j, -1.0 + 0.2j]), 1e-6
    for prim in (np.abs, np.angle, np.real, np.imag, np.conjugate, elementwise.conj_method, np.real_if_close):
        expected = (prim(z + eps * t) - prim(z - eps * t)) / (2 * eps)
        entry = rules.lookup(prim)
        param = entry.params[0]
        got = rule_value(entry, entry.jvps[param], {param: z, "deg": False}, prim(z), dots={param: t})
        np.testing.assert_allclose(got, expected, rtol=1e-7, err_msg=entry.name)

"""Non-differentiable functions: declared as such, zero gradient through them, never a missing rule.

Each case uses the function's output next to a differentiated value, at a
point away from its jumps, and checks the gradient against central
differences (which see the function as locally constant). A callable with no
entry at all is different: differentiating through it is a `NoRuleError`
when the function is transformed.
"""
import builtins
import functools
import math
import operator

import numpy as np
import pytest

import tapegen as tg
from tapegen import rules
from tapegen.rules import nondiff

X = np.array([-1.7, -0.4, 0.3, 0.8, 2.6])
BINS = np.array([-1.0, 0.0, 1.0, 2.0])

CASES = [  # (id, function of x, the non-differentiable callables it uses)
    ("floor", lambda x: np.sum(np.floor(x) * x), (np.floor,)),
    ("ceil", lambda x: np.sum(np.ceil(x) * x), (np.ceil,)),
    ("round", lambda x: np.sum(np.round(x, 1) * x + np.around(x) * x), (np.round, np.around)),
    ("round-method", lambda x: np.sum(x.round() * x), (np.round,)),
    ("rint-trunc-fix", lambda x: np.sum((np.rint(x) + np.trunc(x) + np.fix(x)) * x), (np.rint, np.trunc, np.fix)),
    ("sign-signbit", lambda x: np.sum(np.sign(x) * x + np.signbit(x) * x), (np.sign, np.signbit)),
    ("heaviside", lambda x: np.sum(np.heaviside(x, 0.5) * x), (np.heaviside,)),
    ("floor_divide", lambda x: np.sum(np.floor_divide(x, 0.7) * x + (x // 0.7) * x), (np.floor_divide,)),
    ("compare-operators", lambda x: np.sum((x < 0.5) * x + (x <= 0.5) * x + (x > 0) * x + (x >= 0) * x
                                           + (x == 0.3) * x + (x != 0.3) * x),
     (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne)),
    ("compare-ufuncs", lambda x: np.sum(np.less(x, 0.5) * x + np.less_equal(x, 0.5) * x + np.greater(x, 0) * x
                                        + np.greater_equal(x, 0) * x + np.equal(x, 0.3) * x
                                        + np.not_equal(x, 0.3) * x),
     (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)),
    ("logical", lambda x: np.sum(np.logical_and(x > 0, x < 1) * x + np.logical_or(x < 0, x > 2) * x
                                 + np.logical_xor(x > 0, x > 1) * x + np.logical_not(x > 0) * x
                                 + ((x > 0) & (x < 1)) * x + ((x < 0) | (x > 2)) * x + ((x > 0) ^ (x > 1)) * x
                                 + (~(x > 0)) * x),
     (np.logical_and, np.logical_or, np.logical_xor, np.logical_not, operator.and_, operator.or_, operator.xor,
      operator.invert)),
    ("bitwise", lambda x: np.sum((np.bitwise_and(np.floor(x + 5).astype(np.int64), 3)
                                  + np.bitwise_or(np.floor(x + 5).astype(np.int64), 1)
                                  + np.bitwise_xor(np.floor(x + 5).astype(np.int64), 2)
                                  + np.invert(np.floor(x + 5).astype(np.int64))
                                  + np.left_shift(np.floor(x + 5).astype(np.int64), 1)
                                  + np.right_shift(np.floor(x + 5).astype(np.int64), 1)) * x),
     (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift, np.right_shift)),
    ("classify", lambda x: np.sum((np.isnan(x) + np.isinf(x) + np.isfinite(x) + np.isposinf(x) + np.isneginf(x)
                                   + np.isreal(x) + np.iscomplex(x)) * x),
     (np.isnan, np.isinf, np.isfinite, np.isposinf, np.isneginf, np.isreal, np.iscomplex)),
    ("close", lambda x: np.sum(np.isclose(x, 0.3) * x) * (1 + np.allclose(x, x) + np.array_equal(x, x)
                                                         + np.array_equiv(x, x)),
     (np.isclose, np.allclose, np.array_equal, np.array_equiv)),
    ("all-any", lambda x: np.sum(x) * (np.all(x > -5) + np.any(x > 2) + (x > 0).all() + (x > 9).any()),
     (np.all, np.any)),
    ("count_nonzero", lambda x: np.sum(x) * np.count_nonzero(x > 0), (np.count_nonzero,)),
    ("matrix_rank", lambda x: np.sum(x) * np.linalg.matrix_rank(np.outer(x, x) + np.eye(5)), (np.linalg.matrix_rank,)),
    ("argmax-argmin", lambda x: x[np.argmax(x)] * 2.0 + x[np.argmin(x)] + x[x.argmax()], (np.argmax, np.argmin)),
    ("argsort", lambda x: np.sum(x[np.argsort(x)] * np.arange(5.0)) + np.sum(x[x.argsort()]), (np.argsort,)),
    ("argpartition", lambda x: x[np.argpartition(x, 2)[2]], (np.argpartition,)),
    ("lexsort", lambda x: np.sum(x[np.lexsort((x,))] * np.arange(5.0)), (np.lexsort,)),
    ("nonzero-argwhere", lambda x: np.sum(x[np.nonzero(x > 0)]) + np.sum(x[np.flatnonzero(x > 1)])
     + np.sum(x[np.argwhere(x < 0)[:, 0]]), (np.nonzero, np.flatnonzero, np.argwhere)),
    ("searchsorted-digitize", lambda x: np.sum(x * np.searchsorted(BINS, x) + x * np.digitize(x, BINS)),
     (np.searchsorted, np.digitize)),
    ("unique", lambda x: np.sum(x) * len(np.unique(np.floor(x))), (np.unique, builtins.len)),
    ("shape-ndim-size", lambda x: np.sum(x) * (np.shape(x)[0] + np.ndim(x) + np.size(x) + len(x)),
     (np.shape, np.ndim, np.size, builtins.len)),
    ("int-bool-not", lambda x: x[0] * int(x[4]) + x[1] * bool(x[2] > 0) + x[3] * (not x[3] > 1),
     (builtins.int, builtins.bool, operator.not_)),
    ("numpy-integer-casts", lambda x: np.sum(x * (np.int8(x * 3) + np.int16(x) + np.int32(x) + np.int64(x * 2)
                                                 + np.uint8(np.abs(x) * 3) + np.uint16(np.abs(x))
                                                 + np.uint32(np.abs(x)) + np.uint64(np.abs(x) * 2)
                                                 + np.bool_(x > 0))),
     (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_)),
    ("range", lambda x: np.sum(x) * len(range(1, 9, 2)), (builtins.range,)),
    ("text", lambda x: np.sum(x) * len(str(np.floor(x[0]))) + x[1] * len(format(x[2], ".2f")) + x[3] * len(repr(x[4] > 0))
     + x[4] * len(f"{x[1]:.3f}"), (builtins.str, builtins.format, builtins.repr)),
    # Python's rounding gives an int where NumPy's gives a float: a length or an index (`x[:round(...)]`)
    ("python-rounding", lambda x: np.sum(x[:round(2.6)] ** 2) * round(x[0] * 3) + round(x[1], 1) * x[2]
     + np.sum(x[:math.floor(3.7)]) * math.ceil(x[3]) + np.sum(x[math.trunc(-1.5):]),
     (builtins.round, math.floor, math.ceil, math.trunc)),
    ("is-is-not", lambda x: x[0] * (x is not None) + x[1] * (x is None) + x[2], (operator.is_, operator.is_not)),
    ("like-constructors", lambda x: np.sum(x * np.ones_like(x) + np.zeros_like(x) + 0 * np.empty_like(x)),
     (np.ones_like, np.zeros_like, np.empty_like)),
    ("constructors", lambda x: np.sum(x * np.ones(5) + np.zeros(5)) + np.sum(np.eye(5) @ x)
     + np.sum(np.identity(5) @ x) + np.sum(np.tri(5) @ x) + 0 * np.sum(np.empty(5)),
     (np.ones, np.zeros, np.eye, np.identity, np.tri, np.empty)),
    ("ndarray-constructor", lambda x: np.sum(x * 0 * np.ndarray((5,), dtype=x.dtype)) + np.sum(x), (np.ndarray,)),
    ("index-constructors", lambda x: np.sum(np.outer(x, x)[np.tril_indices(5)])
     + np.sum(np.outer(x, x)[np.triu_indices(5, 1)]) + np.sum(np.outer(x, x)[np.diag_indices(5)])
     + np.sum(np.indices((5,))[0] * x),
     (np.tril_indices, np.triu_indices, np.diag_indices, np.indices)),
    ("index-constructors-of-an-array", lambda x: np.sum(np.outer(x, x)[np.tril_indices_from(np.outer(x, x))])
     + np.sum(np.outer(x, x)[np.triu_indices_from(np.outer(x, x), 1)])
     + np.sum(np.outer(x, x)[np.diag_indices_from(np.outer(x, x))]),
     (np.tril_indices_from, np.triu_indices_from, np.diag_indices_from)),
    ("iscomplexobj", lambda x: np.sum(x) * (np.iscomplexobj(x) + np.isrealobj(x)), (np.iscomplexobj, np.isrealobj)),
    ("result_type", lambda x: np.sum(x.astype(np.result_type(x, 1.0))), (np.result_type,)),
]


@pytest.mark.parametrize("f", [f for _, f, _ in CASES], ids=[name for name, _, _ in CASES])
def test_zero_gradient_through_nondifferentiable_functions(f):
    tg.gradcheck(f, X)


@pytest.mark.parametrize("fns", [fns for _, _, fns in CASES], ids=[name for name, _, _ in CASES])
def test_declared_without_a_gradient(fns):
    for fn in fns:
        prim = rules.lookup(fn)
        assert prim is not None and not prim.differentiable, f"{fn!r} should be declared with table.nondiff"


def test_floor_times_x_has_gradient_floor():
    np.testing.assert_array_equal(tg.grad(lambda x: np.sum(np.floor(x) * x))(X), np.floor(X))


def test_stop_gradient_is_a_constant_to_tapegen_only():
    """Finite differences see x * x here; tapegen sees a constant times x."""
    assert not rules.lookup(tg.stop_gradient).differentiable
    np.testing.assert_array_equal(tg.grad(lambda x: np.sum(tg.stop_gradient(x) * x))(X), X)


def test_every_declared_function_is_covered_by_a_case():
    covered = {id(fn) for _, _, fns in CASES for fn in fns} | {id(tg.stop_gradient)}
    unexercised = [prim.name for fn, prim in nondiff.table.primitives.items() if id(fn) not in covered]
    assert not unexercised


def test_everything_in_the_table_is_nondifferentiable():
    assert all(not prim.differentiable and not prim.vjps for prim in nondiff.table.primitives.values())


def test_random_draws_on_shapes_are_constants():
    def noisy(x):
        rng = np.random.default_rng(0)
        return np.sum(x * 2.0 + rng.normal(size=x.shape) + np.random.normal(size=np.shape(x)) + np.random.rand(5))

    np.testing.assert_array_equal(tg.grad(noisy)(X), np.full_like(X, 2.0))


def test_random_draw_fed_a_differentiated_value_is_a_no_rule_error():
    def shifted(x):
        return np.sum(np.random.normal(loc=x))

    with pytest.raises(tg.NoRuleError, match="normal"):
        tg.source(shifted)


SCALE = np.vectorize(lambda v: 2.0 * v)  # a callable object tapegen cannot look into
TWICE = functools.partial(np.multiply, 2.0)


def test_a_partial_of_a_primitive_with_constant_arguments_is_followed():
    np.testing.assert_allclose(tg.grad(lambda x: np.sum(TWICE(x) ** 2))(X), 8.0 * X)


def test_unknown_callable_on_a_differentiated_value_is_a_no_rule_error_at_transform_time():
    def f(x):
        return np.sum(SCALE(x))

    with pytest.raises(tg.NoRuleError) as raised:
        tg.source(f)  # transforming only: nothing is called
    assert "SCALE" in str(raised.value)


def test_unknown_callable_on_a_constant_is_fine():
    def f(x):
        return np.sum(x * SCALE(np.ones(5)))

    np.testing.assert_array_equal(tg.grad(f)(X), np.full_like(X, 2.0))


@pytest.mark.parametrize("f", [lambda x: float(str(x)) * 2, lambda x: float(f"{x}".strip()),
                               lambda x: sum(float(p) for p in [repr(x), "1.0"]),
                               lambda x: np.float64("%.17g" % x), lambda x: float(format(x, ".17g"))],
                         ids=["str", "f-string", "repr-in-a-list", "percent", "format"])
def test_a_number_read_back_out_of_text_of_a_differentiated_value_is_refused(f):
    """Text has no derivative (its length, a message), but `float(str(x))` is `x` again: refused, not 0."""
    with pytest.raises(tg.NoRuleError, match="reads a number back out of text"):
        tg.grad(f)(0.7)


def test_the_length_of_text_of_a_differentiated_value_is_a_constant():
    f = lambda x: x * len(str(np.round(x, 1))) + np.sin(x) * len(f"{x:.2f}")
    assert tg.grad(f)(0.7) == pytest.approx(3 + 4 * np.cos(0.7))


def _truncated_draws(x, std):
    """numpy-ml's `truncated_normal` (through `he_normal`): a draw, then its outliers drawn again in place."""
    np.random.seed(3)
    samples = np.random.normal(loc=0.0, scale=std, size=x.shape)
    reject = np.logical_or(samples >= 2 * std, samples <= -2 * std)
    while any(reject.flatten()):
        samples[reject] = np.random.normal(loc=0.0, scale=std, size=reject.sum())
        reject = np.logical_or(samples >= 2 * std, samples <= -2 * std)
    noise = np.random.standard_normal(x.shape)
    noise[noise > 0.5] = 0.5
    return np.sum(np.tanh(x * samples) + x * noise)


def test_a_random_draw_is_a_new_array_that_may_be_written_into():
    """(`samples[reject] = ...` on an array np.random.normal returned was refused: "an array tapegen cannot
    follow: it may be an argument, a view of another array, or shared with another name")"""
    from modes import check_modes
    check_modes(lambda x: _truncated_draws(x, 0.8), np.linspace(-1.0, 1.0, 12))


def _draws_of_a_generator_made_here(x):
    """`rng = np.random.default_rng(0)` (or a RandomState) made in the function: its draws are new arrays too."""
    rng = np.random.default_rng(0)
    noise = rng.standard_normal(x.shape)
    noise[noise > 0.5] = 0.5
    state = np.random.RandomState(1)
    more = state.normal(size=x.shape)
    more[0] = 1.0
    return np.sum(np.tanh(x * noise) + more * x)


def test_a_draw_of_a_generator_made_in_the_function_may_be_written_into():
    from modes import check_modes
    check_modes(_draws_of_a_generator_made_here, np.linspace(-1.0, 1.0, 6))


def test_a_draw_given_a_differentiated_parameter_names_the_reparameterised_form():
    def draws(s):
        return np.sum(np.random.uniform(-s, s, size=3) ** 2)
    with pytest.raises(tg.NoRuleError, match=r"loc \+ scale \* np.random.standard_normal"):
        tg.grad(draws)(1.5)

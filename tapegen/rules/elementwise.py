"""Elementwise functions, Python's arithmetic operators, and constructors with a differentiable value.

Python operators are primitives of their own (`operator.add`, written `a + b`
in generated code) sharing rules with their NumPy ufuncs (`np.add`).
Binary VJP rules undo broadcasting with `unbroadcast`, which returns at once
when the shapes already match; binary JVP rules return a tangent shaped like
the output (`broadcast_like`), so one active input of `x + b` is enough.

Conventions at points where a derivative does not exist or is infinite:

- a kink gets the zero subgradient: abs'(0) = 0, sqrt'(0) = 0,
  hypot'(0, 0) = (0, 0), `np.maximum(x, 0)` (ReLU) has derivative 0 at 0;
- a tie between two varying arrays in maximum, minimum, fmax or fmin gives
  each half of the cotangent (a tie with a Python-number constant gives it none);
- a zero cotangent stays zero through derivatives that are infinite or NaN
  outside their domain (`guarded_mul`, `guarded_div`), so the untaken branch
  of `np.where(x > 0, np.sqrt(x), 0.0)` gives 0, not NaN; so do products and
  exponentials whose *value* is infinite or NaN there
  (`np.where(x > 0, x * np.log(x), 0.0)` at 0, `np.exp` overflowing), and
  second derivatives (the guards' own rules keep the guard). Where no
  masking op can leave a zero these are the plain `*` and `/`.

Rules multiply by Python floats (`math.log(2)`, not `np.log(2)`), so float32
stays float32. Complex inputs follow JAX's convention (the gradient of a real
function f of z = x + iy is df/dx - i df/dy).
"""
import math
import operator

import numpy as np

from ..runtime import is_duck, unbroadcast
from .table import RuleTable

table = RuleTable("elementwise")

# --- declarations -------------------------------------------------------------------------------

for fn, sym in ((operator.add, "+"), (operator.sub, "-"), (operator.mul, "*"), (operator.truediv, "/"),
                (operator.pow, "**"), (operator.floordiv, "//"), (operator.mod, "%")):
    table.op(fn, "x1, x2", name=fn.__name__.replace("truediv", "div"), form="binop", spelling=sym,
             differentiable=sym not in ("//",))
table.op(operator.neg, "x", name="neg", form="unop", spelling="-")
table.op(operator.pos, "x", name="pos", form="unop", spelling="+")
for fn in (np.add, np.subtract, np.multiply, np.divide, np.power, np.float_power, np.arctan2,
           np.maximum, np.minimum, np.fmax, np.fmin, np.logaddexp, np.logaddexp2, np.hypot,
           np.remainder, np.fmod, np.copysign):
    table.op(fn, "x1, x2")
for fn in (np.negative, np.positive, np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p,
           np.sqrt, np.cbrt, np.square, np.reciprocal, np.sin, np.cos, np.tan, np.tanh, np.sinh, np.cosh,
           np.arcsin, np.arccos, np.arctan, np.arcsinh, np.arccosh, np.arctanh, np.abs, np.fabs,
           np.sinc, np.deg2rad, np.radians, np.rad2deg, np.degrees, np.conjugate):
    table.op(fn, "x")
table.op(np.real, "val")
table.op(np.imag, "val")
table.op(np.angle, "z, deg=False")
table.op(np.real_if_close, "a, tol=100")
table.op(np.nan_to_num, "x, copy=True, nan=0.0, posinf=None, neginf=None")
table.op(np.unwrap, "p, discont=None, axis=-1, *, period=6.283185307179586", inert=("discont", "axis", "period"))
table.op(np.clip, "a, a_min, a_max")  # NumPy needs both, None for no bound (min=, max= too: lower.py)
table.op(np.where, "condition, x1, x2")
table.op(np.select, "condlist, choicelist, default=0", inert=("condlist",))  # conditions: booleans
table.op(float, "x", name="float", spelling="float")

table.op(np.full, "shape, fill_value, dtype=None")
table.op(np.full_like, "a, fill_value, dtype=None")
table.op(np.linspace, "start, stop, num=50, endpoint=True, *, dtype=None")  # (5th positional: `retstep`)
table.op(np.arange, "start, stop=None, step=None, dtype=None")

def conj_method(x):
    """`x.conj()` (`x.conjugate()`), the method: NumPy returns a real array itself, not a copy (a write into one
    shows in the other), and a complex array's conjugate, a new array, as np.conjugate does."""
    return x.conj() if isinstance(x, np.ndarray) else np.conjugate(x)


table.op(conj_method, "x", spelling="conj_method")

for method, fn in (("clip", np.clip), ("conj", conj_method), ("conjugate", conj_method)):
    table.method(method, fn)


# --- helpers (names in generated code) -----------------------------------------------------------

def guarded_mul(g, d):
    """g * d, but 0 wherever g is 0, even where d is infinite or NaN.

    A zero cotangent (the branch `np.where` did not take) so stays zero through
    a derivative that is undefined there. The check costs one sum when all is finite.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        q = np.multiply(g, d)
        if not is_duck(q) and np.isfinite(np.sum(q)):  # a lazy q is masked without looking
            return q
    return np.where(np.equal(g, 0), 0, q)


# The same product, where the guard is part of the rule itself (x ** 0 at 0 has derivative 0, not
# 0 * inf): never written as a plain `*`, unlike guarded_mul where no np.where zero can reach.
zero_safe_mul = guarded_mul


def guarded_div(g, d):
    """g / d, but 0 wherever g is 0, even where d is 0, infinite or NaN (see `guarded_mul`)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.divide(g, d)
        if not is_duck(q) and np.isfinite(np.sum(q)):  # a lazy q is masked without looking
            return q
    return np.where(np.equal(g, 0), 0, q)


# The same quotient, guarded by the rule itself: the derivative of guarded_div(ct, d) in d is
# -ct / d ** 2, zero wherever ct is, whether or not the cotangent reaching it can hold zeros.
zero_safe_div = guarded_div


def kink_div(g, d):
    """g / d, with 0 where d is 0 (the zero subgradient at a kink: sqrt'(0) = 0) or where g is 0."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.divide(g, d)
        if not is_duck(q) and np.isfinite(np.sum(q)):  # a lazy q is masked without looking
            return q
    return np.where(np.equal(d, 0) | np.equal(g, 0), 0, q)


def broadcast_like(t, y):
    """The tangent `t` of one input of a broadcasting op, spread to the output's shape."""
    return t if np.shape(t) == np.shape(y) else np.broadcast_to(t, np.shape(y))


def tie_split(g, wins, tie, other_active):
    """g where an input wins, g/2 where it ties with the other input, 0 elsewhere.

    The halves go only to inputs being differentiated: a tie with a constant
    (`np.maximum(x, 0)`, a ReLU, or `np.maximum(x, np.zeros_like(x))`) gives 0,
    the convention of PyTorch's and JAX's relu. `other_active` is known when
    the function is transformed.
    """
    if not other_active:
        return np.where(wins, g, 0)
    return np.where(wins, g, np.where(tie, g * 0.5, 0))


def fmax_share(g, mine, other, other_active):
    """The part of g that reaches `mine` in np.fmax(mine, other): a NaN loses to any number."""
    wins = (mine > other) | (np.isnan(other) & ~np.isnan(mine))
    return tie_split(g, wins, mine == other, other_active)


def fmin_share(g, mine, other, other_active):
    """The part of g that reaches `mine` in np.fmin(mine, other): a NaN loses to any number."""
    wins = (mine < other) | (np.isnan(other) & ~np.isnan(mine))
    return tie_split(g, wins, mine == other, other_active)


def log_or_zero(x):
    """log(x) where x > 0, else 0 (d x1 ** x2 / d x2 where x1 <= 0); a Python number gives a Python float."""
    if isinstance(x, (int, float)):
        return math.log(x) if x > 0 else 0.0
    return np.log(np.where(x > 0, x, 1))


def conj_sign(x):
    """d|x| as a factor: sign(x) (0 at 0), conjugated for complex x."""
    s = np.sign(x)
    return np.conj(s) if np.iscomplexobj(s) else s


def sinc_slope(x):
    """d sinc(x) / dx = (cos(pi x) - sinc(x)) / x, by its Taylor series near 0 (where it is 0)."""
    t = np.multiply(np.pi, x)  # not np.asarray: it would compute a dask array
    small = np.abs(t) < 0.3
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = (t * np.cos(t) - np.sin(t)) / (t * t)
    t2 = t * t
    series = t * (-1 / 3 + t2 * (1 / 30 + t2 * (-1 / 840 + t2 * (1 / 45360 - t2 / 3991680))))
    return np.pi * np.where(small, series, direct)


def clip_inside(a, a_min, a_max):
    """Where np.clip passes `a` through (bounds included, as PyTorch's clamp)."""
    inside = np.ones(np.shape(a), dtype=bool)
    if a_min is not None:
        inside = inside & (a >= a_min)
    if a_max is not None:
        inside = inside & (a <= a_max)
    return inside


def select_taken(condlist):
    """For each condition of np.select, where it is the first one true; and where none is."""
    taken, none = [], np.ones(np.broadcast_shapes(*(np.shape(c) for c in condlist)), dtype=bool)
    for cond in condlist:
        taken.append(none & cond)
        none = none & ~cond
    return taken, none


def select_vjp_choicelist(condlist, choicelist, g):
    taken, _ = select_taken(condlist)
    return [unbroadcast(np.where(pick, g, 0), np.shape(choice)) for pick, choice in zip(taken, choicelist)]


def select_jvp_choicelist(condlist, choicelist, choicelist_dot, y):
    tangents = [np.zeros_like(c) if t is None else t for c, t in zip(choicelist, choicelist_dot)]
    return broadcast_like(np.select(condlist, tangents, 0), y)


def real_like(t, like):
    """`t`, or its real part where `like` (a value, or its `meta`) is real: a tangent or cotangent for it.

    In JAX's convention the real part is the transpose of putting a real number into the complex
    plane, so this is linear in `t` and its own VJP is the identity.
    """
    dtype = like[1] if isinstance(like, tuple) and len(like) == 2 else np.result_type(like)
    if isinstance(dtype, np.dtype) and dtype.kind != "c" and np.iscomplexobj(t):
        return np.real(t)
    return t


def imag_vjp(val_meta, g):
    return real_like(-1j * np.real(g), val_meta)


def angle_scale(deg):
    """What np.angle's radians are multiplied by."""
    return 180 / np.pi if deg else 1.0


def angle_vjp(z, deg, g):
    return real_like(kink_div(np.real(g) * -1j * np.conj(z) * angle_scale(deg), np.real(z * np.conj(z))), z)


def angle_jvp(z, z_dot, deg):
    return kink_div(np.imag(np.conj(z) * z_dot) * angle_scale(deg), np.real(z * np.conj(z)))


def ramp(num, endpoint, like):
    """np.linspace(0, 1, num, endpoint), in `like`'s float dtype, along the first of `like`'s axes."""
    dtype = np.result_type(like, np.float16)
    t = np.arange(num, dtype=dtype) / max(num - 1 if endpoint else num, 1)
    return np.reshape(t, (num,) + (1,) * (np.ndim(like) - 1))


# --- addition and subtraction -------------------------------------------------------------------

@table.vjp(operator.add, "x1")
@table.vjp(np.add, "x1")
@table.vjp(operator.sub, "x1")
@table.vjp(np.subtract, "x1")
def add_vjp_x1(x1_shape, g):
    return unbroadcast(g, x1_shape)


@table.jvp(operator.add, "x1")
@table.jvp(np.add, "x1")
@table.jvp(operator.sub, "x1")
@table.jvp(np.subtract, "x1")
def add_jvp_x1(x1_dot, y):
    return broadcast_like(x1_dot, y)


@table.vjp(operator.add, "x2")
@table.vjp(np.add, "x2")
def add_vjp_x2(x2_shape, g):
    return unbroadcast(g, x2_shape)


@table.jvp(operator.add, "x2")
@table.jvp(np.add, "x2")
def add_jvp_x2(x2_dot, y):
    return broadcast_like(x2_dot, y)


@table.vjp(operator.sub, "x2")
@table.vjp(np.subtract, "x2")
def subtract_vjp_x2(x2_shape, g):
    return unbroadcast(-g, x2_shape)


@table.jvp(operator.sub, "x2")
@table.jvp(np.subtract, "x2")
def subtract_jvp_x2(x2_dot, y):
    return broadcast_like(-x2_dot, y)


@table.vjp(operator.neg, "x")
@table.vjp(np.negative, "x")
def negative_vjp(g):
    return -g


@table.jvp(operator.neg, "x")
@table.jvp(np.negative, "x")
def negative_jvp(x_dot):
    return -x_dot


@table.vjp(operator.pos, "x")
@table.vjp(np.positive, "x")
@table.vjp(float, "x")
def positive_vjp(g):
    return g


@table.jvp(operator.pos, "x")
@table.jvp(np.positive, "x")
@table.jvp(float, "x")
def positive_jvp(x_dot):
    return x_dot


# --- multiplication, division, remainders -------------------------------------------------------

@table.vjp(operator.mul, "x1")
@table.vjp(np.multiply, "x1")
def multiply_vjp_x1(x1_shape, x2, g):
    return unbroadcast(guarded_mul(g, x2), x1_shape)


@table.jvp(operator.mul, "x1")
@table.jvp(np.multiply, "x1")
def multiply_jvp_x1(x1_dot, x2):
    return x1_dot * x2


@table.vjp(operator.mul, "x2")
@table.vjp(np.multiply, "x2")
def multiply_vjp_x2(x1, x2_shape, g):
    return unbroadcast(guarded_mul(g, x1), x2_shape)


@table.jvp(operator.mul, "x2")
@table.jvp(np.multiply, "x2")
def multiply_jvp_x2(x1, x2_dot):
    return x1 * x2_dot


@table.vjp(operator.truediv, "x1")
@table.vjp(np.divide, "x1")
def divide_vjp_x1(x1_shape, x2, g):
    return unbroadcast(guarded_div(g, x2), x1_shape)


@table.jvp(operator.truediv, "x1")
@table.jvp(np.divide, "x1")
def divide_jvp_x1(x1_dot, x2):
    return guarded_div(x1_dot, x2)


@table.vjp(operator.truediv, "x2")
@table.vjp(np.divide, "x2")
def divide_vjp_x2(x2, x2_shape, y, g):
    return unbroadcast(-guarded_mul(g, y / x2), x2_shape)


@table.jvp(operator.truediv, "x2")
@table.jvp(np.divide, "x2")
def divide_jvp_x2(x2, x2_dot, y):
    return -guarded_mul(x2_dot, y / x2)


@table.vjp(operator.mod, "x1")
@table.vjp(np.remainder, "x1")
@table.vjp(np.fmod, "x1")
def mod_vjp_x1(x1_shape, g):
    return unbroadcast(g, x1_shape)


@table.jvp(operator.mod, "x1")
@table.jvp(np.remainder, "x1")
@table.jvp(np.fmod, "x1")
def mod_jvp_x1(x1_dot, y):
    return broadcast_like(x1_dot, y)


@table.vjp(operator.mod, "x2")
@table.vjp(np.remainder, "x2")
def mod_vjp_x2(x1, x2, x2_shape, g):
    return unbroadcast(-g * np.floor_divide(x1, x2), x2_shape)


@table.jvp(operator.mod, "x2")
@table.jvp(np.remainder, "x2")
def mod_jvp_x2(x1, x2, x2_dot):
    return -x2_dot * np.floor_divide(x1, x2)


@table.vjp(np.fmod, "x2")
def fmod_vjp_x2(x1, x2, x2_shape, g):
    return unbroadcast(-g * np.trunc(x1 / x2), x2_shape)


@table.jvp(np.fmod, "x2")
def fmod_jvp_x2(x1, x2, x2_dot):
    return -x2_dot * np.trunc(x1 / x2)


# --- powers and roots ---------------------------------------------------------------------------
# g * x2 is the guard: x ** 0 has derivative 0 at x = 0, not 0 * 0 ** -1 = NaN.

@table.vjp(operator.pow, "x1")
@table.vjp(np.power, "x1")
def power_vjp_x1(x1, x1_shape, x2, x2_is_const, g):
    return unbroadcast(guarded_mul(g * x2, x1 ** (x2 - 1)) if x2_is_const and x2 >= 1 else
                       zero_safe_mul(g * x2, np.power(x1, x2 - 1.0)), x1_shape)


@table.jvp(operator.pow, "x1")
@table.jvp(np.power, "x1")
def power_jvp_x1(x1, x1_dot, x2, x2_is_const):
    return x1_dot * x2 * x1 ** (x2 - 1) if x2_is_const and x2 >= 1 else \
        zero_safe_mul(x1_dot * x2, np.power(x1, x2 - 1.0))  # not **: a Python 0.0 ** -1.0 raises, NumPy's is inf


@table.vjp(operator.pow, "x2")
@table.vjp(np.power, "x2")
def power_vjp_x2(x1, x2_shape, y, g):
    return unbroadcast(g * y * log_or_zero(x1), x2_shape)


@table.jvp(operator.pow, "x2")
@table.jvp(np.power, "x2")
def power_jvp_x2(x1, x2_dot, y):
    return x2_dot * y * log_or_zero(x1)


@table.vjp(np.float_power, "x1")
def float_power_vjp_x1(x1, x1_shape, x2, g):
    return unbroadcast(zero_safe_mul(g * x2, np.float_power(x1, x2 - 1)), x1_shape)


@table.jvp(np.float_power, "x1")
def float_power_jvp_x1(x1, x1_dot, x2):
    return zero_safe_mul(x1_dot * x2, np.float_power(x1, x2 - 1))


@table.vjp(np.float_power, "x2")
def float_power_vjp_x2(x1, x2_shape, y, g):
    return unbroadcast(g * y * log_or_zero(x1), x2_shape)


@table.jvp(np.float_power, "x2")
def float_power_jvp_x2(x1, x2_dot, y):
    return x2_dot * y * log_or_zero(x1)


@table.vjp(np.square, "x")
def square_vjp(x, g):
    return g * 2 * x


@table.jvp(np.square, "x")
def square_jvp(x, x_dot):
    return x_dot * 2 * x


@table.vjp(np.reciprocal, "x")
def reciprocal_vjp(y, g):
    return -guarded_mul(g, y * y)


@table.jvp(np.reciprocal, "x")
def reciprocal_jvp(x_dot, y):
    return -guarded_mul(x_dot, y * y)


@table.vjp(np.sqrt, "x")
def sqrt_vjp(y, g):
    return kink_div(g, 2 * y)


@table.jvp(np.sqrt, "x")
def sqrt_jvp(x_dot, y):
    return kink_div(x_dot, 2 * y)


@table.vjp(np.cbrt, "x")
def cbrt_vjp(y, g):
    return kink_div(g, 3 * y * y)


@table.jvp(np.cbrt, "x")
def cbrt_jvp(x_dot, y):
    return kink_div(x_dot, 3 * y * y)


@table.vjp(np.hypot, "x1")
def hypot_vjp_x1(x1, x1_shape, y, g):
    return unbroadcast(kink_div(g * x1, y), x1_shape)


@table.jvp(np.hypot, "x1")
def hypot_jvp_x1(x1, x1_dot, y):
    return kink_div(x1_dot * x1, y)


@table.vjp(np.hypot, "x2")
def hypot_vjp_x2(x2, x2_shape, y, g):
    return unbroadcast(kink_div(g * x2, y), x2_shape)


@table.jvp(np.hypot, "x2")
def hypot_jvp_x2(x2, x2_dot, y):
    return kink_div(x2_dot * x2, y)


# --- exponentials and logarithms ----------------------------------------------------------------

@table.vjp(np.exp, "x")
def exp_vjp(y, g):
    return guarded_mul(g, y)


@table.jvp(np.exp, "x")
def exp_jvp(x_dot, y):
    return x_dot * y


@table.vjp(np.exp2, "x")
def exp2_vjp(y, g):
    return guarded_mul(g, y) * math.log(2)


@table.jvp(np.exp2, "x")
def exp2_jvp(x_dot, y):
    return x_dot * y * math.log(2)


@table.vjp(np.expm1, "x")
def expm1_vjp(y, g):
    return guarded_mul(g, y + 1)


@table.jvp(np.expm1, "x")
def expm1_jvp(x_dot, y):
    return x_dot * (y + 1)


@table.vjp(np.log, "x")
def log_vjp(x, g):
    return guarded_div(g, x)


@table.jvp(np.log, "x")
def log_jvp(x, x_dot):
    return guarded_div(x_dot, x)


@table.vjp(np.log2, "x")
def log2_vjp(x, g):
    return guarded_div(g, x * math.log(2))


@table.jvp(np.log2, "x")
def log2_jvp(x, x_dot):
    return guarded_div(x_dot, x * math.log(2))


@table.vjp(np.log10, "x")
def log10_vjp(x, g):
    return guarded_div(g, x * math.log(10))


@table.jvp(np.log10, "x")
def log10_jvp(x, x_dot):
    return guarded_div(x_dot, x * math.log(10))


@table.vjp(np.log1p, "x")
def log1p_vjp(x, g):
    return guarded_div(g, 1 + x)


@table.jvp(np.log1p, "x")
def log1p_jvp(x, x_dot):
    return guarded_div(x_dot, 1 + x)


# logaddexp: x - y <= 0, so exp(x - y) cannot overflow (y = log(exp(x1) + exp(x2)) >= max(x1, x2)).

@table.vjp(np.logaddexp, "x1")
def logaddexp_vjp_x1(x1, x1_shape, y, g):
    return unbroadcast(g * np.exp(x1 - y), x1_shape)


@table.jvp(np.logaddexp, "x1")
def logaddexp_jvp_x1(x1, x1_dot, y):
    return x1_dot * np.exp(x1 - y)


@table.vjp(np.logaddexp, "x2")
def logaddexp_vjp_x2(x2, x2_shape, y, g):
    return unbroadcast(g * np.exp(x2 - y), x2_shape)


@table.jvp(np.logaddexp, "x2")
def logaddexp_jvp_x2(x2, x2_dot, y):
    return x2_dot * np.exp(x2 - y)


@table.vjp(np.logaddexp2, "x1")
def logaddexp2_vjp_x1(x1, x1_shape, y, g):
    return unbroadcast(g * np.exp2(x1 - y), x1_shape)


@table.jvp(np.logaddexp2, "x1")
def logaddexp2_jvp_x1(x1, x1_dot, y):
    return x1_dot * np.exp2(x1 - y)


@table.vjp(np.logaddexp2, "x2")
def logaddexp2_vjp_x2(x2, x2_shape, y, g):
    return unbroadcast(g * np.exp2(x2 - y), x2_shape)


@table.jvp(np.logaddexp2, "x2")
def logaddexp2_jvp_x2(x2, x2_dot, y):
    return x2_dot * np.exp2(x2 - y)


# --- trigonometric and hyperbolic ---------------------------------------------------------------

@table.vjp(np.sin, "x")
def sin_vjp(x, g):
    return g * np.cos(x)


@table.jvp(np.sin, "x")
def sin_jvp(x, x_dot):
    return x_dot * np.cos(x)


@table.vjp(np.cos, "x")
def cos_vjp(x, g):
    return -g * np.sin(x)


@table.jvp(np.cos, "x")
def cos_jvp(x, x_dot):
    return -x_dot * np.sin(x)


@table.vjp(np.tan, "x")
def tan_vjp(y, g):
    return g * (1 + y * y)


@table.jvp(np.tan, "x")
def tan_jvp(x_dot, y):
    return x_dot * (1 + y * y)


@table.vjp(np.tanh, "x")
def tanh_vjp(y, g):
    return g * (1 - y * y)


@table.jvp(np.tanh, "x")
def tanh_jvp(x_dot, y):
    return x_dot * (1 - y * y)


@table.vjp(np.sinh, "x")
def sinh_vjp(x, g):
    return g * np.cosh(x)


@table.jvp(np.sinh, "x")
def sinh_jvp(x, x_dot):
    return x_dot * np.cosh(x)


@table.vjp(np.cosh, "x")
def cosh_vjp(x, g):
    return g * np.sinh(x)


@table.jvp(np.cosh, "x")
def cosh_jvp(x, x_dot):
    return x_dot * np.sinh(x)


@table.vjp(np.arcsin, "x")
def arcsin_vjp(x, g):
    return guarded_div(g, np.sqrt((1 - x) * (1 + x)))


@table.jvp(np.arcsin, "x")
def arcsin_jvp(x, x_dot):
    return guarded_div(x_dot, np.sqrt((1 - x) * (1 + x)))


@table.vjp(np.arccos, "x")
def arccos_vjp(x, g):
    return -guarded_div(g, np.sqrt((1 - x) * (1 + x)))


@table.jvp(np.arccos, "x")
def arccos_jvp(x, x_dot):
    return -guarded_div(x_dot, np.sqrt((1 - x) * (1 + x)))


@table.vjp(np.arctan, "x")
def arctan_vjp(x, g):
    return g / (1 + x * x)


@table.jvp(np.arctan, "x")
def arctan_jvp(x, x_dot):
    return x_dot / (1 + x * x)


# hypot(x, 1) is sqrt(1 + x * x) without overflow for |x| up to the largest float; it takes no
# complex x, whose derivative is the principal sqrt(1 + x * x) (arcsinh is holomorphic there).

@table.vjp(np.arcsinh, "x")
def arcsinh_vjp(x, g):
    return g / (np.sqrt(1 + x * x) if np.iscomplexobj(x) else np.hypot(x, 1))


@table.jvp(np.arcsinh, "x")
def arcsinh_jvp(x, x_dot):
    return x_dot / (np.sqrt(1 + x * x) if np.iscomplexobj(x) else np.hypot(x, 1))


@table.vjp(np.arccosh, "x")
def arccosh_vjp(x, g):
    return guarded_div(g, np.sqrt((x - 1) * (x + 1)))


@table.jvp(np.arccosh, "x")
def arccosh_jvp(x, x_dot):
    return guarded_div(x_dot, np.sqrt((x - 1) * (x + 1)))


@table.vjp(np.arctanh, "x")
def arctanh_vjp(x, g):
    return guarded_div(g, (1 - x) * (1 + x))


@table.jvp(np.arctanh, "x")
def arctanh_jvp(x, x_dot):
    return guarded_div(x_dot, (1 - x) * (1 + x))


@table.vjp(np.arctan2, "x1")
def arctan2_vjp_x1(x1, x2, x1_shape, g):
    return unbroadcast(kink_div(g * x2, x1 * x1 + x2 * x2), x1_shape)


@table.jvp(np.arctan2, "x1")
def arctan2_jvp_x1(x1, x1_dot, x2):
    return kink_div(x1_dot * x2, x1 * x1 + x2 * x2)


@table.vjp(np.arctan2, "x2")
def arctan2_vjp_x2(x1, x2, x2_shape, g):
    return unbroadcast(kink_div(-g * x1, x1 * x1 + x2 * x2), x2_shape)


@table.jvp(np.arctan2, "x2")
def arctan2_jvp_x2(x1, x2, x2_dot):
    return kink_div(-x2_dot * x1, x1 * x1 + x2 * x2)


@table.vjp(np.sinc, "x")
def sinc_vjp(x, g):
    return g * sinc_slope(x)


@table.jvp(np.sinc, "x")
def sinc_jvp(x, x_dot):
    return x_dot * sinc_slope(x)


@table.vjp(np.deg2rad, "x")
@table.vjp(np.radians, "x")
def deg2rad_vjp(g):
    return g * (np.pi / 180)


@table.jvp(np.deg2rad, "x")
@table.jvp(np.radians, "x")
def deg2rad_jvp(x_dot):
    return x_dot * (np.pi / 180)


@table.vjp(np.rad2deg, "x")
@table.vjp(np.degrees, "x")
def rad2deg_vjp(g):
    return g * (180 / np.pi)


@table.jvp(np.rad2deg, "x")
@table.jvp(np.degrees, "x")
def rad2deg_jvp(x_dot):
    return x_dot * (180 / np.pi)


# --- complex parts ------------------------------------------------------------------------------

@table.vjp(np.real, "val")
def real_vjp(g):
    return np.real(g)


@table.jvp(np.real, "val")
def real_jvp(val_dot):
    return np.real(val_dot)


table.vjp(np.imag, "val")(imag_vjp)


@table.jvp(np.imag, "val")
def imag_jvp(val_dot):
    return np.imag(val_dot)


@table.vjp(np.real_if_close, "a")
def real_if_close_vjp(g):
    return g


@table.jvp(np.real_if_close, "a")
def real_if_close_jvp(a_dot, y):
    return real_like(a_dot, y)


@table.vjp(np.conjugate, "x")
@table.vjp(conj_method, "x")
def conjugate_vjp(g):
    return np.conj(g)


@table.jvp(np.conjugate, "x")
@table.jvp(conj_method, "x")
def conjugate_jvp(x_dot):
    return np.conj(x_dot)


table.vjp(np.angle, "z")(angle_vjp)
table.jvp(np.angle, "z")(angle_jvp)


# --- piecewise: abs, copysign, maximum, minimum, clip, where, select, nan_to_num ----------------

@table.vjp(np.abs, "x")
def abs_vjp(x, g):  # |x| is real: an imaginary part of g (a real value's cotangent) means nothing
    return np.real(g) * conj_sign(x)


@table.jvp(np.abs, "x")
def abs_jvp(x, x_dot):
    return np.real(conj_sign(x) * x_dot)


@table.vjp(np.fabs, "x")
def fabs_vjp(x, g):
    return g * np.sign(x)


@table.jvp(np.fabs, "x")
def fabs_jvp(x, x_dot):
    return x_dot * np.sign(x)


@table.vjp(np.copysign, "x1")
def copysign_vjp_x1(x1, x1_shape, x2, g):
    return unbroadcast(np.sign(x1) * np.where(np.signbit(x2), -g, g), x1_shape)


@table.jvp(np.copysign, "x1")
def copysign_jvp_x1(x1, x1_dot, x2):
    return np.sign(x1) * np.where(np.signbit(x2), -x1_dot, x1_dot)


@table.vjp(np.copysign, "x2")
def copysign_vjp_x2(x2_shape, g):
    return np.zeros(x2_shape, np.result_type(g))


@table.jvp(np.copysign, "x2")
def copysign_jvp_x2(y):
    return np.zeros_like(y)


@table.vjp(np.maximum, "x1")
def maximum_vjp_x1(x1, x2, x1_shape, g, x2_active):
    return unbroadcast(tie_split(g, x1 > x2, x1 == x2, x2_active), x1_shape)


@table.jvp(np.maximum, "x1")
def maximum_jvp_x1(x1, x1_dot, x2, x2_active):
    return tie_split(x1_dot, x1 > x2, x1 == x2, x2_active)


@table.vjp(np.maximum, "x2")
def maximum_vjp_x2(x1, x2, x2_shape, g, x1_active):
    return unbroadcast(tie_split(g, x2 > x1, x2 == x1, x1_active), x2_shape)


@table.jvp(np.maximum, "x2")
def maximum_jvp_x2(x1, x2, x2_dot, x1_active):
    return tie_split(x2_dot, x2 > x1, x2 == x1, x1_active)


@table.vjp(np.minimum, "x1")
def minimum_vjp_x1(x1, x2, x1_shape, g, x2_active):
    return unbroadcast(tie_split(g, x1 < x2, x1 == x2, x2_active), x1_shape)


@table.jvp(np.minimum, "x1")
def minimum_jvp_x1(x1, x1_dot, x2, x2_active):
    return tie_split(x1_dot, x1 < x2, x1 == x2, x2_active)


@table.vjp(np.minimum, "x2")
def minimum_vjp_x2(x1, x2, x2_shape, g, x1_active):
    return unbroadcast(tie_split(g, x2 < x1, x2 == x1, x1_active), x2_shape)


@table.jvp(np.minimum, "x2")
def minimum_jvp_x2(x1, x2, x2_dot, x1_active):
    return tie_split(x2_dot, x2 < x1, x2 == x1, x1_active)


@table.vjp(np.fmax, "x1")
def fmax_vjp_x1(x1, x2, x1_shape, g, x2_active):
    return unbroadcast(fmax_share(g, x1, x2, x2_active), x1_shape)


@table.jvp(np.fmax, "x1")
def fmax_jvp_x1(x1, x1_dot, x2, x2_active):
    return fmax_share(x1_dot, x1, x2, x2_active)


@table.vjp(np.fmax, "x2")
def fmax_vjp_x2(x1, x2, x2_shape, g, x1_active):
    return unbroadcast(fmax_share(g, x2, x1, x1_active), x2_shape)


@table.jvp(np.fmax, "x2")
def fmax_jvp_x2(x1, x2, x2_dot, x1_active):
    return fmax_share(x2_dot, x2, x1, x1_active)


@table.vjp(np.fmin, "x1")
def fmin_vjp_x1(x1, x2, x1_shape, g, x2_active):
    return unbroadcast(fmin_share(g, x1, x2, x2_active), x1_shape)


@table.jvp(np.fmin, "x1")
def fmin_jvp_x1(x1, x1_dot, x2, x2_active):
    return fmin_share(x1_dot, x1, x2, x2_active)


@table.vjp(np.fmin, "x2")
def fmin_vjp_x2(x1, x2, x2_shape, g, x1_active):
    return unbroadcast(fmin_share(g, x2, x1, x1_active), x2_shape)


@table.jvp(np.fmin, "x2")
def fmin_jvp_x2(x1, x2, x2_dot, x1_active):
    return fmin_share(x2_dot, x2, x1, x1_active)


@table.vjp(np.clip, "a")
def clip_vjp(a, a_shape, a_min, a_max, g):
    return unbroadcast(np.where(clip_inside(a, a_min, a_max), g, 0), a_shape)


@table.jvp(np.clip, "a")
def clip_jvp(a, a_dot, a_min, a_max, y):
    return broadcast_like(np.where(clip_inside(a, a_min, a_max), a_dot, 0), y)


@table.vjp(np.clip, "a_min")
def clip_vjp_a_min(a, a_min, a_min_shape, g):
    return unbroadcast(np.where(a < a_min, g, 0), a_min_shape)


@table.jvp(np.clip, "a_min")
def clip_jvp_a_min(a, a_min, a_min_dot, y):
    return broadcast_like(np.where(a < a_min, a_min_dot, 0), y)


@table.vjp(np.clip, "a_max")
def clip_vjp_a_max(a, a_max, a_max_shape, g):
    return unbroadcast(np.where(a > a_max, g, 0), a_max_shape)


@table.jvp(np.clip, "a_max")
def clip_jvp_a_max(a, a_max, a_max_dot, y):
    return broadcast_like(np.where(a > a_max, a_max_dot, 0), y)


@table.vjp(np.where, "x1")
def where_vjp_x1(condition, x1_shape, g):
    return unbroadcast(np.where(condition, g, 0), x1_shape)


@table.jvp(np.where, "x1")
def where_jvp_x1(condition, x1_dot, y):
    return broadcast_like(np.where(condition, x1_dot, 0), y)


@table.vjp(np.where, "x2")
def where_vjp_x2(condition, x2_shape, g):
    return unbroadcast(np.where(condition, 0, g), x2_shape)


@table.jvp(np.where, "x2")
def where_jvp_x2(condition, x2_dot, y):
    return broadcast_like(np.where(condition, 0, x2_dot), y)


# A float condition only chooses, so its derivative is zero (not a missing rule).

@table.vjp(np.where, "condition")
def where_vjp_condition(condition):
    return np.zeros_like(condition)


@table.jvp(np.where, "condition")
def where_jvp_condition(y):
    return np.zeros_like(y)


table.vjp(np.select, "choicelist")(select_vjp_choicelist)
table.jvp(np.select, "choicelist")(select_jvp_choicelist)


@table.vjp(np.select, "default")
def select_vjp_default(condlist, default_shape, g):
    return unbroadcast(np.where(select_taken(condlist)[1], g, 0), default_shape)


@table.jvp(np.select, "default")
def select_jvp_default(condlist, default_dot, y):
    return broadcast_like(np.where(select_taken(condlist)[1], default_dot, 0), y)


@table.vjp(np.nan_to_num, "x")
def nan_to_num_vjp(x, g):
    return np.where(np.isfinite(x), g, 0)


@table.jvp(np.nan_to_num, "x")
def nan_to_num_jvp(x, x_dot):
    return np.where(np.isfinite(x), x_dot, 0)


# np.unwrap adds whole periods, constant between the jumps it removes: the derivative passes through
@table.vjp(np.unwrap, "p")
def unwrap_vjp(g):
    return g


@table.jvp(np.unwrap, "p")
def unwrap_jvp(p_dot):
    return p_dot


# --- constructors whose values depend on an argument --------------------------------------------

@table.vjp(np.full, "fill_value")
@table.vjp(np.full_like, "fill_value")
def full_vjp(fill_value_shape, g):
    return unbroadcast(g, fill_value_shape)


@table.jvp(np.full, "fill_value")
@table.jvp(np.full_like, "fill_value")
def full_jvp(fill_value_dot, y):
    return broadcast_like(fill_value_dot, y)


# full_like reads only the shape and dtype of `a`: a zero derivative, so `np.full_like(x, c)` works on an active x.

@table.vjp(np.full_like, "a")
def full_like_vjp_a(a_meta, g):
    return np.zeros(a_meta[0], np.result_type(a_meta[1], np.float16))


@table.jvp(np.full_like, "a")
def full_like_jvp_a(y):
    return np.zeros_like(y)


@table.vjp(np.linspace, "start")
def linspace_vjp_start(start_shape, num, endpoint, g):
    return unbroadcast(np.sum(g * (1 - ramp(num, endpoint, g)), axis=0), start_shape)


@table.jvp(np.linspace, "start")
def linspace_jvp_start(start_dot, num, endpoint, y):
    return broadcast_like(start_dot * (1 - ramp(num, endpoint, y)), y)


@table.vjp(np.linspace, "stop")
def linspace_vjp_stop(stop_shape, num, endpoint, g):
    return unbroadcast(np.sum(g * ramp(num, endpoint, g), axis=0), stop_shape)


@table.jvp(np.linspace, "stop")
def linspace_jvp_stop(stop_dot, num, endpoint, y):
    return broadcast_like(stop_dot * ramp(num, endpoint, y), y)


def arange_vjp_start(stop, g):
    """np.arange(start, stop): every element moves with start; np.arange(stop) alone: none does."""
    if stop is None:
        return np.zeros((), np.result_type(g))
    return np.sum(g)


def arange_jvp_start(start_dot, stop, y):
    return np.zeros_like(y) if stop is None else broadcast_like(start_dot, y)


table.vjp(np.arange, "start")(arange_vjp_start)
table.jvp(np.arange, "start")(arange_jvp_start)


@table.vjp(np.arange, "step")
def arange_vjp_step(g):
    return np.sum(g * np.arange(np.size(g), dtype=np.result_type(g)))


@table.jvp(np.arange, "step")
def arange_jvp_step(step_dot, y):
    return step_dot * np.arange(np.size(y), dtype=np.result_type(y))


# stop decides only how many elements there are.

@table.vjp(np.arange, "stop")
def arange_vjp_stop(g):
    return np.zeros((), np.result_type(g))


@table.jvp(np.arange, "stop")
def arange_jvp_stop(y):
    return np.zeros_like(y)

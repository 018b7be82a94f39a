"""Elementwise functions and Python's arithmetic operators.

Python operators are primitives of their own (`operator.add`, written `a + b`
in generated code) sharing rules with their NumPy ufuncs (`np.add`).
Binary rules undo broadcasting with `unbroadcast`, which returns at once when
the shapes already match.
"""
import operator

import numpy as np

from ..runtime import safe_div, unbroadcast
from .table import RuleTable

table = RuleTable("elementwise")

for fn, sym in ((operator.add, "+"), (operator.sub, "-"), (operator.mul, "*"), (operator.truediv, "/"),
                (operator.pow, "**"), (operator.floordiv, "//"), (operator.mod, "%")):
    table.op(fn, "x1, x2", name=fn.__name__.replace("truediv", "div"), form="binop", spelling=sym,
             differentiable=sym not in ("//",))
table.op(operator.neg, "x", name="neg", form="unop", spelling="-")
table.op(operator.pos, "x", name="pos", form="unop", spelling="+")
for fn in (np.add, np.subtract, np.multiply, np.divide, np.true_divide, np.power, np.arctan2,
           np.maximum, np.minimum, np.logaddexp, np.logaddexp2, np.hypot):
    table.op(fn, "x1, x2")
for fn in (np.negative, np.positive, np.exp, np.exp2, np.log, np.log2, np.log10, np.log1p, np.expm1,
           np.sqrt, np.cbrt, np.square, np.reciprocal, np.sin, np.cos, np.tan, np.tanh, np.sinh, np.cosh,
           np.arcsin, np.arccos, np.arctan, np.arcsinh, np.arccosh, np.arctanh, np.abs, np.fabs):
    table.op(fn, "x")
table.op(np.clip, "a, a_min=None, a_max=None")
table.method("clip", np.clip)
table.op(np.where, "condition, x1, x2")


# --- addition and subtraction ---------------------------------------------------------------

@table.vjp(operator.add, "x1")
@table.vjp(np.add, "x1")
@table.vjp(operator.sub, "x1")
@table.vjp(np.subtract, "x1")
def add_vjp_x1(x1_shape, g):
    return unbroadcast(g, x1_shape)


@table.vjp(operator.add, "x2")
@table.vjp(np.add, "x2")
def add_vjp_x2(x2_shape, g):
    return unbroadcast(g, x2_shape)


@table.vjp(operator.sub, "x2")
@table.vjp(np.subtract, "x2")
def subtract_vjp_x2(x2_shape, g):
    return unbroadcast(-g, x2_shape)


@table.vjp(operator.neg, "x")
@table.vjp(np.negative, "x")
def negative_vjp(g):
    return -g


@table.vjp(operator.pos, "x")
@table.vjp(np.positive, "x")
def positive_vjp(g):
    return g


# --- multiplication, division, powers -------------------------------------------------------

@table.vjp(operator.mul, "x1")
@table.vjp(np.multiply, "x1")
def multiply_vjp_x1(x1_shape, x2, g):
    return unbroadcast(g * x2, x1_shape)


@table.vjp(operator.mul, "x2")
@table.vjp(np.multiply, "x2")
def multiply_vjp_x2(x1, x2_shape, g):
    return unbroadcast(g * x1, x2_shape)


@table.vjp(operator.truediv, "x1")
@table.vjp(np.divide, "x1")
@table.vjp(np.true_divide, "x1")
def divide_vjp_x1(x1_shape, x2, g):
    return unbroadcast(g / x2, x1_shape)


@table.vjp(operator.truediv, "x2")
@table.vjp(np.divide, "x2")
@table.vjp(np.true_divide, "x2")
def divide_vjp_x2(x2, x2_shape, y, g):
    return unbroadcast(-g * y / x2, x2_shape)


@table.vjp(operator.mod, "x1")
def mod_vjp_x1(x1_shape, g):
    return unbroadcast(g, x1_shape)


@table.vjp(operator.mod, "x2")
def mod_vjp_x2(x1, x2, x2_shape, g):
    return unbroadcast(-g * np.floor_divide(x1, x2), x2_shape)


@table.vjp(operator.pow, "x1")
@table.vjp(np.power, "x1")
def power_vjp_x1(x1, x1_shape, x2, g):
    return unbroadcast(g * x2 * x1 ** (x2 - 1), x1_shape)


@table.vjp(operator.pow, "x2")
@table.vjp(np.power, "x2")
def power_vjp_x2(x1, x2_shape, y, g):
    return unbroadcast(g * y * np.log(np.where(x1 > 0, x1, 1)), x2_shape)


# --- exponentials and logarithms ------------------------------------------------------------

@table.vjp(np.exp, "x")
def exp_vjp(y, g):
    return g * y


@table.vjp(np.exp2, "x")
def exp2_vjp(y, g):
    return g * y * np.log(2)


@table.vjp(np.log, "x")
def log_vjp(x, g):
    return g / x


@table.vjp(np.log2, "x")
def log2_vjp(x, g):
    return g / (x * np.log(2))


@table.vjp(np.log10, "x")
def log10_vjp(x, g):
    return g / (x * np.log(10))


@table.vjp(np.log1p, "x")
def log1p_vjp(x, g):
    return g / (1 + x)


@table.vjp(np.expm1, "x")
def expm1_vjp(y, g):
    return g * (y + 1)


@table.vjp(np.logaddexp, "x1")
def logaddexp_vjp_x1(x1, x1_shape, y, g):
    return unbroadcast(g * np.exp(x1 - y), x1_shape)


@table.vjp(np.logaddexp, "x2")
def logaddexp_vjp_x2(x2, x2_shape, y, g):
    return unbroadcast(g * np.exp(x2 - y), x2_shape)


@table.vjp(np.logaddexp2, "x1")
def logaddexp2_vjp_x1(x1, x1_shape, y, g):
    return unbroadcast(g * np.exp2(x1 - y), x1_shape)


@table.vjp(np.logaddexp2, "x2")
def logaddexp2_vjp_x2(x2, x2_shape, y, g):
    return unbroadcast(g * np.exp2(x2 - y), x2_shape)


# --- roots and simple powers ----------------------------------------------------------------

@table.vjp(np.sqrt, "x")
def sqrt_vjp(y, g):
    return safe_div(g, 2 * y)


@table.vjp(np.cbrt, "x")
def cbrt_vjp(y, g):
    return safe_div(g, 3 * y * y)


@table.vjp(np.square, "x")
def square_vjp(x, g):
    return g * 2 * x


@table.vjp(np.reciprocal, "x")
def reciprocal_vjp(y, g):
    return -g * y * y


@table.vjp(np.hypot, "x1")
def hypot_vjp_x1(x1, x1_shape, y, g):
    return unbroadcast(safe_div(g * x1, y), x1_shape)


@table.vjp(np.hypot, "x2")
def hypot_vjp_x2(x2, x2_shape, y, g):
    return unbroadcast(safe_div(g * x2, y), x2_shape)


# --- trigonometric and hyperbolic -----------------------------------------------------------

@table.vjp(np.sin, "x")
def sin_vjp(x, g):
    return g * np.cos(x)


@table.vjp(np.cos, "x")
def cos_vjp(x, g):
    return -g * np.sin(x)


@table.vjp(np.tan, "x")
def tan_vjp(y, g):
    return g * (1 + y * y)


@table.vjp(np.tanh, "x")
def tanh_vjp(y, g):
    return g * (1 - y * y)


@table.vjp(np.sinh, "x")
def sinh_vjp(x, g):
    return g * np.cosh(x)


@table.vjp(np.cosh, "x")
def cosh_vjp(x, g):
    return g * np.sinh(x)


@table.vjp(np.arcsin, "x")
def arcsin_vjp(x, g):
    return g / np.sqrt(1 - x * x)


@table.vjp(np.arccos, "x")
def arccos_vjp(x, g):
    return -g / np.sqrt(1 - x * x)


@table.vjp(np.arctan, "x")
def arctan_vjp(x, g):
    return g / (1 + x * x)


@table.vjp(np.arcsinh, "x")
def arcsinh_vjp(x, g):
    return g / np.hypot(x, 1)


@table.vjp(np.arccosh, "x")
def arccosh_vjp(x, g):
    return g / np.sqrt((x - 1) * (x + 1))


@table.vjp(np.arctanh, "x")
def arctanh_vjp(x, g):
    return g / (1 - x * x)


@table.vjp(np.arctan2, "x1")
def arctan2_vjp_x1(x1, x2, x1_shape, g):
    return unbroadcast(g * x2 / (x1 * x1 + x2 * x2), x1_shape)


@table.vjp(np.arctan2, "x2")
def arctan2_vjp_x2(x1, x2, x2_shape, g):
    return unbroadcast(-g * x1 / (x1 * x1 + x2 * x2), x2_shape)


# --- piecewise: abs, maximum, minimum, clip, where --------------------------------------------

@table.vjp(np.abs, "x")
@table.vjp(np.fabs, "x")
def abs_vjp(x, g):
    return g * np.sign(x)


@table.vjp(np.maximum, "x1")
def maximum_vjp_x1(x1, x2, x1_shape, g):
    return unbroadcast(tie_split(g, x1, x2), x1_shape)


@table.vjp(np.maximum, "x2")
def maximum_vjp_x2(x1, x2, x2_shape, g):
    return unbroadcast(tie_split(g, x2, x1), x2_shape)


@table.vjp(np.minimum, "x1")
def minimum_vjp_x1(x1, x2, x1_shape, g):
    return unbroadcast(tie_split(g, x2, x1), x1_shape)


@table.vjp(np.minimum, "x2")
def minimum_vjp_x2(x1, x2, x2_shape, g):
    return unbroadcast(tie_split(g, x1, x2), x2_shape)


def tie_split(g, winner, loser):
    """g where `winner` wins strictly, g/2 at a tie between two arrays, 0 elsewhere.

    A tie with a scalar constant (`np.maximum(x, 0)`, a ReLU) gives 0, the
    convention of PyTorch's and JAX's relu.
    """
    if np.ndim(loser) == 0 and not isinstance(loser, np.ndarray):
        return np.where(winner > loser, g, 0)
    return np.where(winner > loser, g, np.where(winner == loser, g * 0.5, 0))


@table.vjp(np.clip, "a")
def clip_vjp(a, a_min, a_max, g):
    inside = np.ones(np.shape(a), dtype=bool)
    if a_min is not None:
        inside &= a >= a_min
    if a_max is not None:
        inside &= a <= a_max
    return np.where(inside, g, 0)


@table.vjp(np.where, "x1")
def where_vjp_x1(condition, x1_shape, g):
    return unbroadcast(np.where(condition, g, 0), x1_shape)


@table.vjp(np.where, "x2")
def where_vjp_x2(condition, x2_shape, g):
    return unbroadcast(np.where(condition, 0, g), x2_shape)


table.op(float, "x", name="float", spelling="float")


@table.vjp(float, "x")
def float_vjp(g):
    return g

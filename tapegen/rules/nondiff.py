"""Functions with no gradient: comparisons, rounding, index queries, constructors.

Their outputs are constants to tapegen (zero gradient), which is different from
a function with no rule at all: that one is an error when a gradient would
have to flow through it.
"""
import builtins
import operator

import numpy as np

from .table import RuleTable

table = RuleTable("nondiff")

for fn, sym in ((operator.lt, "<"), (operator.le, "<="), (operator.gt, ">"), (operator.ge, ">="),
                (operator.eq, "=="), (operator.ne, "!=")):
    table.nondiff(fn, "x1, x2", name=fn.__name__, form="compare", spelling=sym)
table.nondiff(operator.not_, "x", name="not_", form="unop", spelling="not ")
table.nondiff(operator.invert, "x", name="invert", form="unop", spelling="~")
for fn, sym in ((operator.and_, "&"), (operator.or_, "|"), (operator.xor, "^")):
    table.nondiff(fn, "x1, x2", name=fn.__name__.rstrip("_"), form="binop", spelling=sym)

for fn in (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
           np.logical_and, np.logical_or, np.logical_xor, np.floor_divide):
    table.nondiff(fn, "x1, x2")
for fn in (np.floor, np.ceil, np.trunc, np.rint, np.sign, np.isnan, np.isinf, np.isfinite,
           np.logical_not, np.signbit):
    table.nondiff(fn, "x")
table.nondiff(np.round, "a, decimals=0")
table.nondiff(np.around, "a, decimals=0")
for fn in (np.argmax, np.argmin):
    table.nondiff(fn, "a, axis=None, keepdims=False")
table.nondiff(np.argsort, "a, axis=-1")
table.nondiff(np.nonzero, "a")
table.nondiff(np.shape, "a")
table.nondiff(np.ndim, "a")
table.nondiff(np.size, "a, axis=None")
table.nondiff(builtins.len, "obj")
table.nondiff(builtins.int, "x")
table.nondiff(builtins.bool, "x")
for method, fn in (("argmax", np.argmax), ("argmin", np.argmin), ("argsort", np.argsort),
                   ("nonzero", np.nonzero), ("round", np.round)):
    table.method(method, fn)

for fn in (np.zeros, np.ones, np.empty):
    table.nondiff(fn, "shape, dtype=None")
for fn in (np.zeros_like, np.ones_like, np.empty_like):
    table.nondiff(fn, "a, dtype=None")
table.nondiff(np.full, "shape, fill_value, dtype=None")
table.nondiff(np.full_like, "a, fill_value, dtype=None")
table.nondiff(np.eye, "N, M=None, k=0, dtype=None")
table.nondiff(np.identity, "n, dtype=None")
table.nondiff(np.arange, "start, stop=None, step=None, dtype=None")
table.nondiff(np.linspace, "start, stop, num=50, endpoint=True, dtype=None")
table.nondiff(builtins.range, "start, stop=None, step=None")

from ..runtime import stop_gradient  # noqa: E402  (its own primitive, declared with the others)

table.nondiff(stop_gradient, "x", spelling="stop_gradient")

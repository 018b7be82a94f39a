"""Functions with no gradient: comparisons, rounding, index queries, logic, constructors.

Their outputs are constants to tapegen (zero gradient), which is different from
a function with no rule at all: that one is an error (`NoRuleError`) when a
gradient would have to flow through it. Everything listed here is piecewise
constant in its inputs, or depends only on their shapes and dtypes.

Not listed, on purpose, because their values do move with an input:
`np.full`, `np.full_like`, `np.linspace` and `np.arange` (declared with rules
in `elementwise`), `np.histogram` (bin edges and weights) and `np.bincount` (its weights: declared with
rules in `reductions`).
`np.unique` is listed although its values are elements of its input: it is
used to find labels, and `np.sort` is the differentiable way to order values.
Random draws (`np.random.normal(size=x.shape)`, `rng.normal(...)`) need no
entry: they are called as written, and only an error if a differentiated
value is passed to them.
"""
import builtins
import math
import operator

import numpy as np

from ..runtime import stop_gradient
from .table import RuleTable

table = RuleTable("nondiff")

# --- operators: comparisons, logic and bits -----------------------------------------------------

for fn, sym in ((operator.lt, "<"), (operator.le, "<="), (operator.gt, ">"), (operator.ge, ">="),
                (operator.eq, "=="), (operator.ne, "!=")):
    table.nondiff(fn, "x1, x2", name=fn.__name__, form="compare", spelling=sym)
table.nondiff(operator.not_, "x", name="not_", form="unop", spelling="not ")
table.nondiff(operator.is_, "x1, x2", name="is_", form="compare", spelling="is")
table.nondiff(operator.is_not, "x1, x2", name="is_not", form="compare", spelling="is not")
table.nondiff(operator.invert, "x", name="invert", form="unop", spelling="~")
for fn, sym in ((operator.and_, "&"), (operator.or_, "|"), (operator.xor, "^")):
    table.nondiff(fn, "x1, x2", name=fn.__name__.rstrip("_"), form="binop", spelling=sym)

# --- ufuncs: comparisons, logic, bits, rounding, classification ---------------------------------

for fn in (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
           np.logical_and, np.logical_or, np.logical_xor, np.bitwise_and, np.bitwise_or, np.bitwise_xor,
           np.left_shift, np.right_shift, np.floor_divide, np.heaviside):
    table.nondiff(fn, "x1, x2")
for fn in (np.logical_not, np.invert, np.floor, np.ceil, np.trunc, np.rint, np.sign, np.signbit,
           np.isnan, np.isinf, np.isfinite, np.isposinf, np.isneginf, np.isreal, np.iscomplex):
    table.nondiff(fn, "x")
table.nondiff(np.fix, "x")
table.nondiff(np.round, "a, decimals=0")
table.nondiff(np.around, "a, decimals=0")
table.nondiff(np.isclose, "a, b, rtol=1e-05, atol=1e-08, equal_nan=False")
table.nondiff(np.allclose, "a, b, rtol=1e-05, atol=1e-08, equal_nan=False")
table.nondiff(np.array_equal, "a1, a2, equal_nan=False")
table.nondiff(np.array_equiv, "a1, a2")

# --- reductions to booleans or counts, and index queries ----------------------------------------

for fn in (np.all, np.any):
    table.nondiff(fn, "a, axis=None, *, keepdims=False")  # (NumPy's 3rd positional is `out`)
table.nondiff(np.count_nonzero, "a, axis=None, keepdims=False")
table.nondiff(np.linalg.matrix_rank, "A, tol=None, hermitian=False", name="matrix_rank",
              spelling="np.linalg.matrix_rank")  # an integer
for fn in (np.argmax, np.argmin):
    table.nondiff(fn, "a, axis=None, *, keepdims=False")
table.nondiff(np.argsort, "a, axis=-1, kind=None, *, stable=None")
table.nondiff(np.argpartition, "a, kth, axis=-1")
table.nondiff(np.lexsort, "keys, axis=-1")
table.nondiff(np.nonzero, "a")
table.nondiff(np.flatnonzero, "a")
table.nondiff(np.argwhere, "a")
table.nondiff(np.searchsorted, "a, v, side='left', sorter=None")
table.nondiff(np.digitize, "x, bins, right=False")
table.nondiff(np.unique, "ar, return_index=False, return_inverse=False, return_counts=False, axis=None")

# --- shapes, sizes and types --------------------------------------------------------------------

table.nondiff(np.shape, "a")
table.nondiff(np.ndim, "a")
table.nondiff(np.size, "a, axis=None")
table.nondiff(np.iscomplexobj, "x")
table.nondiff(np.isrealobj, "x")
table.nondiff(np.result_type, "*arrays_and_dtypes")
table.nondiff(builtins.len, "obj")
table.nondiff(builtins.int, "x")
table.nondiff(builtins.bool, "x")
table.nondiff(builtins.str, "object=''", spelling="str")  # text (as an f-string's: language.formatted),
#                                                           piecewise constant in a value
table.nondiff(builtins.repr, "obj", spelling="repr")
table.nondiff(builtins.format, "value, format_spec=''", spelling="format")
for _type in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_):
    table.nondiff(_type, "x", name=_type.__name__, spelling=f"np.{_type.__name__}")  # np.int64(w): a count

# --- constructors that read only shapes ---------------------------------------------------------

for fn in (np.zeros, np.ones, np.empty):
    table.nondiff(fn, "shape, dtype=None")
# np.ndarray(shape, dtype) as sklearn's t-SNE calls it: np.empty's array (with `buffer=`, a view: not taken)
table.nondiff(np.ndarray, "shape, dtype=None", name="ndarray", spelling="np.ndarray")
for fn in (np.zeros_like, np.ones_like, np.empty_like):
    table.nondiff(fn, "a, dtype=None")
table.nondiff(np.eye, "N, M=None, k=0, dtype=None")
table.nondiff(np.identity, "n, dtype=None")
table.nondiff(np.tri, "N, M=None, k=0, dtype=None")
table.nondiff(np.indices, "dimensions, dtype=None")
for fn in (np.tril_indices, np.triu_indices):
    table.nondiff(fn, "n, k=0, m=None")
table.nondiff(np.diag_indices, "n, ndim=2")
for fn in (np.tril_indices_from, np.triu_indices_from):  # (the indices of an array's shape)
    table.nondiff(fn, "arr, k=0")
table.nondiff(np.diag_indices_from, "arr")
table.nondiff(builtins.range, "start, stop=None, step=None")
# Python's own rounding: `round(x)` and math.floor / ceil / trunc give an int (a length, an index, a count:
# `n = round(stride * fs)`), `round(x, 2)` a float; NumPy's np.round / np.floor would give a float
table.nondiff(builtins.round, "number, ndigits=None")
for fn in (math.floor, math.ceil, math.trunc):
    table.nondiff(fn, "x", spelling=f"math.{fn.__name__}")

table.nondiff(stop_gradient, "x", spelling="stop_gradient")

for method, fn in (("argmax", np.argmax), ("argmin", np.argmin), ("argsort", np.argsort),
                   ("argpartition", np.argpartition), ("nonzero", np.nonzero), ("round", np.round),
                   ("all", np.all), ("any", np.any), ("searchsorted", np.searchsorted)):
    table.method(method, fn)

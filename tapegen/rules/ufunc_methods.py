"""A ufunc's methods (`np.multiply.outer`, `np.add.reduce`, `np.logaddexp.reduce`, `np.add.accumulate`)
as the NumPy calls they stand for.

Lowering inlines the function here for such a call, as it inlines the user's own (a function of tapegen's
rules package counts as the user's), so its derivative is that of ordinary NumPy calls with rules:
`np.multiply.outer(a, b)` is `np.multiply(a` with an axis per dimension of `b`, `b)`; `np.add.reduce(a,
axis)` is `np.sum(a, axis)` (along axis 0 unless told, as the method has it); other reductions and
accumulations apply the ufunc item after item; `reduceat` reduces each slice between its indices so. `at`
(but `np.add.at`) stays a call tapegen runs as written (an error if a derivative must flow through it).
"""
from __future__ import annotations

import numpy as np

from ..runtime import stop_gradient


def outer(ufunc, a, b):
    """`ufunc.outer(a, b)`: `ufunc` of every pair, `a`'s axes first."""
    a, b = np.asarray(a), np.asarray(b)
    return ufunc(np.reshape(a, np.shape(a) + (1,) * np.ndim(b)), b)


def add_reduce(array, axis=0, dtype=None, out=None, keepdims=False):
    if out is not None:
        raise TypeError("np.add.reduce(..., out=...) writes into an array")
    return np.sum(array, axis=axis, dtype=dtype, keepdims=keepdims)


def multiply_reduce(array, axis=0, dtype=None, out=None, keepdims=False):
    if out is not None:
        raise TypeError("np.multiply.reduce(..., out=...) writes into an array")
    return np.prod(array, axis=axis, dtype=dtype, keepdims=keepdims)


def maximum_reduce(array, axis=0, dtype=None, out=None, keepdims=False):
    if out is not None:
        raise TypeError("np.maximum.reduce(..., out=...) writes into an array")
    return np.max(array, axis=axis, keepdims=keepdims)


def minimum_reduce(array, axis=0, dtype=None, out=None, keepdims=False):
    if out is not None:
        raise TypeError("np.minimum.reduce(..., out=...) writes into an array")
    return np.min(array, axis=axis, keepdims=keepdims)


def logaddexp_reduce(array, axis=0, dtype=None, out=None, keepdims=False):
    """log(sum(exp(array))) along `axis`, shifted by the largest item as NumPy's pairwise logaddexp is exact."""
    if out is not None:
        raise TypeError("np.logaddexp.reduce(..., out=...) writes into an array")
    top = stop_gradient(np.max(array, axis=axis, keepdims=True))  # (any shift gives the same value and slope)
    top = np.where(np.isfinite(top), top, 0.0)
    total = np.log(np.sum(np.exp(array - top), axis=axis, keepdims=True)) + top
    return total if keepdims else np.squeeze(total, axis=axis)


def add_accumulate(array, axis=0, dtype=None, out=None):
    if out is not None:
        raise TypeError("np.add.accumulate(..., out=...) writes into an array")
    return np.cumsum(array, axis=axis, dtype=dtype)


def multiply_accumulate(array, axis=0, dtype=None, out=None):
    if out is not None:
        raise TypeError("np.multiply.accumulate(..., out=...) writes into an array")
    return np.cumprod(array, axis=axis, dtype=dtype)


def reduce(ufunc, array, axis=0, dtype=None, out=None, keepdims=False):
    """`ufunc.reduce` of any other ufunc of two arguments: applied item after item along `axis`."""
    if out is not None:
        raise TypeError(f"np.{ufunc.__name__}.reduce(..., out=...) writes into an array")
    if axis is None:
        array, axis = np.ravel(array), 0
    rows = np.moveaxis(array, axis, 0)
    total = rows[0]
    for row in rows[1:]:
        total = ufunc(total, row)
    return np.expand_dims(total, axis) if keepdims else total


def accumulate(ufunc, array, axis=0, dtype=None, out=None):
    """`ufunc.accumulate` of any other ufunc of two arguments (`np.maximum.accumulate`: the running maximum)."""
    if out is not None:
        raise TypeError(f"np.{ufunc.__name__}.accumulate(..., out=...) writes into an array")
    rows = np.moveaxis(array, axis, 0)
    running = [np.copy(rows[0])]  # (not a view of `array` kept in a list: `out=` may write into `array` after)
    for row in rows[1:]:
        running.append(ufunc(running[-1], row))
    return np.moveaxis(np.stack(running), 0, axis)


def reduceat(ufunc, array, indices, axis=0, dtype=None, out=None):
    """`ufunc.reduceat`: the reduction of each slice indices[i]:indices[i + 1] along `axis` (the item at
    indices[i] alone where the next index is not larger), the last running to the end (`np.add.reduceat`:
    segment sums)."""
    if out is not None:
        raise TypeError(f"np.{ufunc.__name__}.reduceat(..., out=...) writes into an array")
    rows = np.moveaxis(array, axis, 0)
    starts = [int(start) for start in np.ravel(indices)]
    ends = starts[1:] + [len(rows)]
    pieces = []
    for start, end in zip(starts, ends):
        pieces.append(reduce(ufunc, rows[start:end], axis=0) if start < end else rows[start])
    return np.moveaxis(np.stack(pieces), 0, axis)


METHODS = {("add", "reduce"): add_reduce, ("multiply", "reduce"): multiply_reduce,
           ("maximum", "reduce"): maximum_reduce, ("minimum", "reduce"): minimum_reduce,
           ("logaddexp", "reduce"): logaddexp_reduce, ("add", "accumulate"): add_accumulate,
           ("multiply", "accumulate"): multiply_accumulate}


def method_function(ufunc, name):
    """`(function, passes the ufunc)` standing for `ufunc.<name>` (`outer`, `reduce`, `accumulate` or `reduceat` of a
    ufunc of two arguments), or None."""
    if not isinstance(ufunc, np.ufunc):
        return None
    if ufunc.nin != 2 or ufunc.nout != 1:
        return None
    found = METHODS.get((ufunc.__name__, name))
    if found is not None:
        return found, False
    generic = {"outer": outer, "reduce": reduce, "accumulate": accumulate, "reduceat": reduceat}.get(name)
    return None if generic is None else (generic, True)

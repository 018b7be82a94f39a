"""Reductions: sum, mean, prod, max, min, var, std, with `axis` and `keepdims`.

The cotangent of a reduction is broadcast back over the reduced axes
(`unreduce`); max and min split it evenly between tied elements.
"""
import numpy as np

from ..runtime import balanced_eq, unreduce
from .table import RuleTable

table = RuleTable("reductions")

for fn in (np.sum, np.prod, np.max, np.min, np.amax, np.amin):
    table.op(fn, "a, axis=None, keepdims=False")
for fn in (np.mean,):
    table.op(fn, "a, axis=None, keepdims=False")
for fn in (np.var, np.std):
    table.op(fn, "a, axis=None, ddof=0, keepdims=False")
for method, fn in (("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max),
                   ("min", np.min), ("var", np.var), ("std", np.std)):
    table.method(method, fn)


def reduced_size(a_shape, axis):
    """How many elements each output of a reduction over `axis` combines."""
    if axis is None:
        return int(np.prod(a_shape, dtype=np.int64))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return int(np.prod([a_shape[i] for i in axes], dtype=np.int64))


@table.vjp(np.sum, "a")
def sum_vjp(a_shape, axis, keepdims, g):
    return unreduce(g, a_shape, axis, keepdims)


@table.vjp(np.mean, "a")
def mean_vjp(a_shape, axis, keepdims, g):
    return unreduce(g, a_shape, axis, keepdims) / reduced_size(a_shape, axis)


@table.vjp(np.max, "a")
@table.vjp(np.amax, "a")
@table.vjp(np.min, "a")
@table.vjp(np.amin, "a")
def max_vjp(a, a_shape, axis, keepdims, y, g):
    return unreduce(g, a_shape, axis, keepdims) * balanced_eq(a, y, axis, keepdims)


@table.vjp(np.prod, "a")
def prod_vjp(a, a_shape, axis, keepdims, y, g):
    """g * (product of the other elements), exact when some elements are zero."""
    if np.all(a != 0):
        return unreduce(g * y, a_shape, axis, keepdims) / a
    axes = tuple(range(len(a_shape))) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    moved = np.moveaxis(a, axes, tuple(range(-len(axes), 0)))
    flat = moved.reshape(moved.shape[:moved.ndim - len(axes)] + (-1,))
    ones = np.ones_like(flat[..., :1])
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = np.moveaxis((before * after).reshape(moved.shape), tuple(range(-len(axes), 0)), axes)
    return unreduce(g, a_shape, axis, keepdims) * others


@table.vjp(np.var, "a")
def var_vjp(a, a_shape, axis, ddof, keepdims, g):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    return unreduce(g, a_shape, axis, keepdims) * centered * (2 / (reduced_size(a_shape, axis) - ddof))


@table.vjp(np.std, "a")
def std_vjp(a, a_shape, axis, ddof, keepdims, y, g):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    scale = unreduce(g / np.where(y == 0, 1, y), a_shape, axis, keepdims)
    return scale * centered / (reduced_size(a_shape, axis) - ddof)

"""Shapes and indexing: reshape, transpose, indexing with `a[...]`, dtype casts.

Indexing scatters its cotangent back with `np.add.at` semantics, so repeated
integer indices add up; indexing into a dict, list or tuple gives a sparse
container cotangent (`Cotree`).
"""
import operator

import numpy as np

from ..runtime import unindex
from .table import RuleTable

table = RuleTable("shape")

table.op(operator.getitem, "a, index", name="getitem", form="getitem")
table.op(np.reshape, "a, shape")
table.op(np.transpose, "a, axes=None")
table.op(np.ndarray.astype, "a, dtype", name="astype", form="method", spelling="astype")
table.method("reshape", np.reshape)
table.method("transpose", np.transpose)
table.method("astype", np.ndarray.astype)


@table.vjp(operator.getitem, "a")
def getitem_vjp(a_meta, index, g):
    return unindex(g, a_meta, index)


@table.vjp(np.reshape, "a")
def reshape_vjp(a_shape, g):
    return np.reshape(g, a_shape)


@table.vjp(np.transpose, "a")
def transpose_vjp(axes, g):
    return np.transpose(g, None if axes is None else np.argsort(axes))


@table.vjp(np.ndarray.astype, "a")
def astype_vjp(a_meta, g):
    return g if a_meta[1].kind not in "fc" else np.asarray(g, dtype=a_meta[1])


def metadata(obj, name):
    """`x.shape`, `x.ndim`, `x.dtype`, ...: attributes that describe a value and carry no gradient."""
    return getattr(obj, name)


table.op(getattr, "obj, name", name="getattr", form="attr")
table.nondiff(metadata, "obj, name", name="metadata", form="attr")
table.nondiff(slice, "start, stop=None, step=None", name="slice", spelling="slice")

from ..runtime import meta  # noqa: E402

table.nondiff(meta, "a", spelling="meta")

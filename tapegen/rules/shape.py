"""Shapes and indexing: reshape, transposes, joins and splits, flips, tiling, diagonals, `a[...]`.

Every rule here moves or copies elements without arithmetic, so each VJP is
the adjoint data movement: a transpose undoes a transpose, a split undoes a
concatenation, and gathers (indexing, take, repeat, tile, non-constant pad)
scatter back with `np.add.at` semantics, so repeated indices add up.
Indexing into a dict, list or tuple gives a sparse container cotangent
(`Cotree`); a function returning a list (`np.split`) gets its cotangent as a
`Cotree`, a list, or a tuple with None for unused pieces.

The JVP rules are the primitives themselves applied to the tangents, since
all of these functions are linear in their array arguments.
"""
import operator

import numpy as np

from ..errors import NoRuleError
from ..runtime import Cotree, entries, is_duck, meta, unbroadcast, unindex
from ..runtime import shape as shape_of
from .table import RuleTable

table = RuleTable("shape")

# --- declarations -------------------------------------------------------------------------------

table.op(operator.getitem, "a, index", name="getitem", form="getitem", inert=("index",))
table.op(np.ndarray.astype, "a, dtype, order='K', casting='unsafe', subok=True, copy=True", name="astype",
         form="method", spelling="astype", inert=("order", "casting", "subok", "copy"))
table.op(np.ndarray.flatten, "a", name="flatten", form="method", spelling="flatten")
table.op(np.copy, "a")


def copied(a):
    """`a.copy()` as written: an array's copy, or a list's or dict's (an argument's kind is known only when
    the code runs); written in generated code as the method call it is."""
    return a.copy()


table.op(copied, "a", name="copy_method", form="method", spelling="copy")


def item_of(a, index=None):
    """`a.item()` (`a.item(i)`: item i of the flattened array): one element, as a Python number."""
    return a.item() if index is None else a.item(index)


def element_cotangent(ct, shape, index=None):
    """The cotangent of `a.item(index)` for `a` of `shape`: `ct` at that flat position, zeros elsewhere."""
    out = np.zeros(shape, dtype=np.result_type(ct, 0.0))
    out.flat[0 if index is None else index] = ct
    return out


table.op(item_of, "a, index=None", name="item", spelling="item_of", inert=("index",))
table.op(element_cotangent, "ct, shape, index=None", spelling="element_cotangent", inert=("shape", "index"))

table.op(np.reshape, "a, shape")
table.op(np.ravel, "a")
table.op(np.squeeze, "a, axis=None")
table.op(np.expand_dims, "a, axis")
table.op(np.broadcast_to, "array, shape")
for _fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    table.op(_fn, "*arys")

table.op(np.transpose, "a, axes=None")
table.op(np.swapaxes, "a, axis1, axis2")
table.op(np.moveaxis, "a, source, destination")
table.op(np.rollaxis, "a, axis, start=0")

table.op(np.concatenate, "arrays, axis=0", sequences=("arrays",))
table.op(np.stack, "arrays, axis=0", sequences=("arrays",))
for _fn in (np.hstack, np.vstack, np.dstack, np.column_stack):
    table.op(_fn, "tup", sequences=("tup",))
table.op(np.block, "arrays", sequences=("arrays",))
for _fn in (np.split, np.array_split):
    table.op(_fn, "ary, indices_or_sections, axis=0")
for _fn in (np.hsplit, np.vsplit, np.dsplit):
    table.op(_fn, "ary, indices_or_sections")

table.op(np.flip, "m, axis=None")
table.op(np.fliplr, "m")
table.op(np.flipud, "m")
table.op(np.roll, "a, shift, axis=None")
table.op(np.rot90, "m, k=1, axes=(0, 1)")
table.op(np.tile, "A, reps")
table.op(np.repeat, "a, repeats, axis=None")
table.op(np.pad, "array, pad_width, mode='constant', constant_values=0", inert=("pad_width", "mode"))  # counts

table.op(np.tril, "m, k=0")
table.op(np.triu, "m, k=0")
table.op(np.diag, "v, k=0")
table.op(np.diagonal, "a, offset=0, axis1=0, axis2=1")

table.op(np.take, "a, indices, axis=None")
table.op(np.take_along_axis, "arr, indices, axis=-1")
table.op(np.sort, "a, axis=-1")
table.op(np.partition, "a, kth, axis=-1")

table.op(np.append, "arr, values, axis=None", name="np_append")  # "append" is the list method (lower.py)
table.op(np.insert, "arr, obj, values, axis=None")
table.op(np.delete, "arr, obj, axis=None")
if hasattr(np, "row_stack") and np.row_stack is not np.vstack:  # deprecated in NumPy 2.0: vstack under another name
    table.op(np.row_stack, "tup", sequences=("tup",))

for _name, _fn in (("reshape", np.reshape), ("ravel", np.ravel), ("flatten", np.ndarray.flatten),
                   ("squeeze", np.squeeze), ("transpose", np.transpose), ("swapaxes", np.swapaxes),
                   ("astype", np.ndarray.astype), ("copy", copied), ("repeat", np.repeat),
                   ("take", np.take), ("diagonal", np.diagonal), ("item", item_of)):
    table.method(_name, _fn)


# --- helpers (names in generated code) -----------------------------------------------------------

def transpose_inverse(axes):
    """The axes that undo `np.transpose(_, axes)` (None undoes None)."""
    return None if axes is None else tuple(np.argsort([axis % len(axes) for axis in axes]))


def rollaxis_destination(ndim, axis, start):
    """Where `np.rollaxis(a, axis, start)` puts `axis`, so `np.moveaxis(g, that, axis)` undoes it."""
    axis, start = axis % ndim, start + ndim if start < 0 else start
    return start - 1 if axis < start else start


def tangent_items(items, tangents):
    """The tangents of a list argument, zeros for the items that carry none (also inside an item written as a
    list: `np.concatenate([[1.0], S])`, whose `[1.0]` has the tangent `[None]`)."""
    return [_tangent_item(item, tangent) for item, tangent in zip(items, tangents)]


def _tangent_item(item, tangent):
    if isinstance(tangent, (list, tuple)) and isinstance(item, (list, tuple)) and len(item) == len(tangent):
        if all(t is None for t in tangent):
            return np.zeros(np.shape(item))
        return [_tangent_item(part, t) for part, t in zip(item, tangent)]
    return np.zeros_like(item) if tangent is None else tangent


def piece_cotangents(g, pieces):
    """The cotangent of a list result (`np.split`): one per piece, zeros for unused pieces.

    `g` is a `Cotree` keyed by index, a list or tuple with None for unused pieces, or None.
    """
    found = [None] * len(pieces)
    items = entries(g)
    for key, value in items:
        if value is not None:
            found[key] = value if found[key] is None else found[key] + value
    return tangent_items(pieces, found)


def unjoin(g, arrays, joined, axis):
    """Split `g` along `axis` into one piece per array, as joined (`joined`), shaped like the inputs."""
    ends = np.cumsum([np.shape(item)[axis] for item in joined]).tolist()
    lead = (slice(None),) * (axis % np.ndim(g))  # slices, not np.split: dask has no lazy np.split
    pieces = [g[lead + (slice(start, end),)] for start, end in zip([0] + ends[:-1], ends)]
    return items_cotangent([np.reshape(piece, np.shape(item)) for piece, item in zip(pieces, arrays)], arrays)


def items_cotangent(parts, items):
    """The cotangent of a list argument from one part per item: the list itself, or one array when
    `items` is an array, which NumPy iterates along its first axis (`np.vstack(x)` joins x's rows)."""
    if isinstance(items, (list, tuple)):
        return parts
    return np.reshape(np.stack(parts), np.shape(items))


def untile(g, A_shape, reps):
    """Sum the copies `np.tile` made: view `g` as (rep, size) pairs per axis and sum the reps."""
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    ndim = max(len(A_shape), len(reps))
    shape = (1,) * (ndim - len(A_shape)) + tuple(A_shape)
    reps = (1,) * (ndim - len(reps)) + reps
    pairs = [n for pair in zip(reps, shape) for n in pair]
    return np.reshape(np.sum(np.reshape(g, pairs), axis=tuple(range(0, 2 * ndim, 2))), A_shape)


def unrepeat(g, a_shape, repeats, axis):
    """Sum the copies `np.repeat` made of each element along `axis`."""
    if axis is None:
        return np.reshape(unrepeat(np.ravel(g), (int(np.prod(a_shape)),), repeats, 0), a_shape)
    axis = axis % len(a_shape)
    n = a_shape[axis]
    if np.ndim(repeats) == 0 or np.size(repeats) == 1:
        split = a_shape[:axis] + (n, int(np.ravel(repeats)[0])) + a_shape[axis + 1:]
        return np.sum(np.reshape(g, split), axis=axis + 1)
    return unindex(g, (a_shape, np.result_type(g)), (slice(None),) * axis + (np.repeat(np.arange(n), repeats),))


def unpad(g, array_shape, pad_width, mode):
    """The cotangent of `np.pad`: the middle of `g`, plus, for edge-like modes, the padding it copied."""
    widths = np.broadcast_to(pad_width, (len(array_shape), 2))
    if mode == "constant":
        return g[tuple(slice(before, before + n) for (before, _), n in zip(widths, array_shape))]
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NoRuleError(f"no gradient rule for np.pad with mode={mode!r}",
                          hint="modes with gradients: constant, edge, reflect, symmetric, wrap")
    size = int(np.prod(array_shape))
    source = np.pad(np.arange(size).reshape(array_shape), widths, mode)
    flat = np.ravel(g)
    summed = np.bincount(source.ravel(), weights=flat.real, minlength=size)
    if np.iscomplexobj(flat):  # (a complex cotangent: bincount adds real weights only)
        summed = summed + 1j * np.bincount(source.ravel(), weights=flat.imag, minlength=size)
    return summed.astype(np.result_type(g), copy=False).reshape(array_shape)


def undiagonal(g, a_shape, offset, axis1, axis2):
    """Zeros shaped `a_shape` with `g` on the diagonal `np.diagonal(_, offset, axis1, axis2)` reads."""
    result = np.zeros(a_shape, dtype=np.result_type(g))
    view = np.moveaxis(result, (axis1, axis2), (-2, -1))
    i = np.arange(np.shape(g)[-1])
    view[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return result


def untake(g, a_shape, indices, axis):
    """Scatter-add the cotangent of `np.take(a, indices, axis)` back into zeros shaped `a_shape`."""
    if axis is None:
        return np.reshape(untake(g, (int(np.prod(a_shape)),), indices, 0), a_shape)
    index = (slice(None),) * (axis % len(a_shape)) + (indices,)
    return unindex(g, (a_shape, np.result_type(g)), index)


def untake_along_axis(g, arr_shape, indices, axis):
    """Scatter-add the cotangent of `np.take_along_axis` back into zeros shaped `arr_shape`."""
    if axis is None:
        return np.reshape(untake_along_axis(g, (int(np.prod(arr_shape)),), indices, 0), arr_shape)
    ndim = len(arr_shape)
    axis = axis % ndim
    index = tuple(indices if d == axis else np.arange(n).reshape((n,) + (1,) * (ndim - d - 1))
                  for d, n in enumerate(arr_shape))
    return unindex(g, (arr_shape, np.result_type(g)), index)


def unsort(g, a, axis):
    """Put each element of `g` back where `np.sort` took its element from."""
    order = np.argsort(a, axis=axis)
    if axis is None:
        return np.reshape(g[np.argsort(order)], np.shape(a))
    return np.take_along_axis(g, np.argsort(order, axis=axis), axis)


def sort_tangent(a, a_dot, axis):
    """The tangent of `np.sort(a, axis)`: the tangent permuted the way `a` is."""
    order = np.argsort(a, axis=axis)
    return np.take_along_axis(a_dot, order, axis)


def partition_source(a, y, axis):
    """For each element of `y = np.partition(a, kth, axis)`, where along `axis` it was in `a`.

    Read off the values (the k-th smallest of `y` is the k-th smallest of `a`) rather than from
    `np.argpartition`, which may order the elements between the pivots differently from `np.partition`.
    """
    if axis is None:
        a, axis = np.ravel(a), 0
    order_a = np.argsort(a, axis=axis, kind="stable")
    order_y = np.argsort(y, axis=axis, kind="stable")
    source = np.empty_like(order_a)
    np.put_along_axis(source, order_y, order_a, axis)
    return source


def append_index(arr_shape, axis, first):
    """Where `np.append(arr, values, axis)` put `arr` (`first`) or `values`, as an index into the result."""
    if axis is None:
        size = int(np.prod(arr_shape))
        return slice(0, size) if first else slice(size, None)
    axis = axis % len(arr_shape)
    n = arr_shape[axis]
    return (slice(None),) * axis + (slice(0, n) if first else slice(n, None),)


def _insert_labels(arr_shape, obj, values_shape, axis):
    """`np.insert` applied to labels: k + 1 for element k of `arr`, -(k + 1) for element k of `values`,
    so NumPy itself decides where each element goes and how `values` broadcasts."""
    size, count = int(np.prod(arr_shape)), int(np.prod(values_shape))
    labels = np.arange(1, size + 1).reshape(arr_shape)
    return np.ravel(np.insert(labels, obj, -np.arange(1, count + 1).reshape(values_shape), axis))


def insert_index(arr_shape, obj, values, axis):
    """The flat positions in `np.insert(arr, obj, values, axis)` of `arr`'s elements, in `arr`'s order."""
    labels = _insert_labels(arr_shape, obj, np.shape(values), axis)
    found = np.flatnonzero(labels > 0)
    return found[np.argsort(labels[found])]


def insert_values_cotangent(g, arr_shape, obj, values_shape, axis):
    """The cotangent of `values` in `np.insert(arr, obj, values, axis)`: `g` where each element of `values`
    went, summed over the copies broadcasting made."""
    labels = _insert_labels(arr_shape, obj, values_shape, axis)
    found = np.flatnonzero(labels < 0)
    out = np.zeros(int(np.prod(values_shape)), dtype=np.result_type(g))
    np.add.at(out, -labels[found] - 1, np.ravel(g)[found])
    return np.reshape(out, values_shape)


def delete_cotangent(g, arr_shape, obj, axis):
    """The cotangent of `np.delete(arr, obj, axis)`: `g` put back where the kept elements were, 0 elsewhere."""
    size = int(np.prod(arr_shape))
    kept = np.ravel(np.delete(np.arange(size).reshape(arr_shape), obj, axis))
    out = np.zeros(size, dtype=np.result_type(g))
    out[kept] = np.ravel(g)
    return np.reshape(out, arr_shape)


def astype_cotangent(g, a_meta, dtype):
    """The cotangent of a cast, in the input's dtype; zero through a cast to an integer or bool."""
    if np.dtype(dtype).kind not in "fc":
        return np.zeros(a_meta[0], dtype=a_meta[1] if a_meta[1].kind in "fc" else float)
    if a_meta[1].kind not in "fc":
        return g
    return g.astype(a_meta[1]) if is_duck(g) else np.asarray(g, dtype=a_meta[1])


def astype_tangent(a_dot, dtype):
    """The tangent of a cast: cast too if the new dtype is inexact, zero if it is an integer or bool."""
    if np.dtype(dtype).kind in "fc":
        return np.asarray(a_dot).astype(dtype)
    return np.zeros(np.shape(a_dot))


# --- indexing and casts -------------------------------------------------------------------------

def added_at(a, index, values):
    """`np.add.at(a, index, values)` as a value: a copy of `a` with `values` added at `index`, repeated
    positions adding up. The frontend writes `np.add.at(sums, i, v)` on an array the function owns as
    `sums = added_at(sums, i, v)`."""
    out = np.array(a, dtype=np.result_type(a, values), copy=True)
    np.add.at(out, index, values)
    return out


table.op(added_at, "a, index, values", spelling="added_at", inert=("index",))


@table.vjp(added_at, "a")
def added_at_vjp_a(a_shape, g):
    return unbroadcast(g, a_shape)


@table.vjp(added_at, "values")
def added_at_vjp_values(index, values_shape, g):
    return unbroadcast(g[index], values_shape)


@table.jvp(added_at, "a")
def added_at_jvp_a(a_dot, y):
    return np.broadcast_to(a_dot, np.shape(y)).astype(y.dtype)


@table.jvp(added_at, "values")
def added_at_jvp_values(y, index, values_dot):
    return added_at(np.zeros_like(y), index, values_dot)


@table.vjp(operator.getitem, "a")
def getitem_vjp(a_meta, index, g):
    return unindex(g, a_meta, index)


@table.jvp(operator.getitem, "a")
def getitem_jvp(a_dot, index):
    return a_dot[index]


@table.vjp(item_of, "a")
def item_vjp(a_shape, index, g):
    return element_cotangent(g, a_shape, index)


@table.jvp(item_of, "a")
def item_jvp(a_dot, index):
    return item_of(a_dot, index)


@table.vjp(element_cotangent, "ct")
def element_cotangent_vjp(index, g):
    return item_of(g, index)


@table.jvp(element_cotangent, "ct")
def element_cotangent_jvp(ct_dot, shape, index):
    return element_cotangent(ct_dot, shape, index)


@table.vjp(np.ndarray.astype, "a")
def astype_vjp(a_meta, dtype, g):
    return astype_cotangent(g, a_meta, dtype)


@table.jvp(np.ndarray.astype, "a")
def astype_jvp(a_dot, dtype):
    return astype_tangent(a_dot, dtype)


@table.vjp(np.copy, "a")
@table.vjp(copied, "a")
def copy_vjp(g):
    return g


@table.jvp(np.copy, "a")
def copy_jvp(a_dot):
    return np.copy(a_dot)  # (a copy: the tangent may be a view of one written into later, `r_dot = A_dot[i]`)


@table.jvp(copied, "a")
def copied_jvp(a_dot):
    return copied(a_dot)


# --- reshapes: the cotangent takes the input's shape back ---------------------------------------

@table.vjp(np.reshape, "a")
@table.vjp(np.ravel, "a")
@table.vjp(np.ndarray.flatten, "a")
@table.vjp(np.squeeze, "a")
@table.vjp(np.expand_dims, "a")
def reshape_vjp(a_shape, g):
    return np.reshape(g, a_shape)


@table.jvp(np.reshape, "a")
def reshape_jvp(a_dot, shape):
    return np.reshape(a_dot, shape)


@table.jvp(np.ravel, "a")
@table.jvp(np.ndarray.flatten, "a")
def ravel_jvp(a_dot):
    return np.ravel(a_dot)


@table.jvp(np.squeeze, "a")
def squeeze_jvp(a_dot, axis):
    return np.squeeze(a_dot, axis)


@table.jvp(np.expand_dims, "a")
def expand_dims_jvp(a_dot, axis):
    return np.expand_dims(a_dot, axis)


@table.vjp(np.broadcast_to, "array")
def broadcast_to_vjp(array_shape, g):
    return unbroadcast(g, array_shape)


@table.jvp(np.broadcast_to, "array")
def broadcast_to_jvp(array_dot, shape):
    return np.broadcast_to(array_dot, shape)


@table.vjp(np.atleast_1d, "arys")
@table.vjp(np.atleast_2d, "arys")
@table.vjp(np.atleast_3d, "arys")
def atleast_vjp(arys, g):
    """One array in, one array out; several in, a list out."""
    if len(arys) == 1:
        return [np.reshape(g, np.shape(arys[0]))]
    return [np.reshape(part, np.shape(a)) for part, a in zip(piece_cotangents(g, arys), arys)]


@table.jvp(np.atleast_1d, "arys")
def atleast_1d_jvp(arys, arys_dot):  # one array in, one out; several in, a list out
    tangents = tangent_items(arys, arys_dot)
    return np.atleast_1d(tangents[0]) if len(tangents) == 1 else [np.atleast_1d(t) for t in tangents]


@table.jvp(np.atleast_2d, "arys")
def atleast_2d_jvp(arys, arys_dot):  # one array in, one out; several in, a list out
    tangents = tangent_items(arys, arys_dot)
    return np.atleast_2d(tangents[0]) if len(tangents) == 1 else [np.atleast_2d(t) for t in tangents]


@table.jvp(np.atleast_3d, "arys")
def atleast_3d_jvp(arys, arys_dot):  # one array in, one out; several in, a list out
    tangents = tangent_items(arys, arys_dot)
    return np.atleast_3d(tangents[0]) if len(tangents) == 1 else [np.atleast_3d(t) for t in tangents]


# --- transposes: the inverse permutation --------------------------------------------------------

@table.vjp(np.transpose, "a")
def transpose_vjp(axes, g):
    return np.transpose(g, transpose_inverse(axes))


@table.jvp(np.transpose, "a")
def transpose_jvp(a_dot, axes):
    return np.transpose(a_dot, axes)


@table.vjp(np.swapaxes, "a")
def swapaxes_vjp(axis1, axis2, g):
    return np.swapaxes(g, axis1, axis2)


@table.jvp(np.swapaxes, "a")
def swapaxes_jvp(a_dot, axis1, axis2):
    return np.swapaxes(a_dot, axis1, axis2)


@table.vjp(np.moveaxis, "a")
def moveaxis_vjp(source, destination, g):
    return np.moveaxis(g, destination, source)


@table.jvp(np.moveaxis, "a")
def moveaxis_jvp(a_dot, source, destination):
    return np.moveaxis(a_dot, source, destination)


@table.vjp(np.rollaxis, "a")
def rollaxis_vjp(a_shape, axis, start, g):
    return np.moveaxis(g, rollaxis_destination(len(a_shape), axis, start), axis)


@table.jvp(np.rollaxis, "a")
def rollaxis_jvp(a_dot, axis, start):
    return np.rollaxis(a_dot, axis, start)


# --- joins and splits ---------------------------------------------------------------------------

@table.vjp(np.concatenate, "arrays")
def concatenate_vjp(arrays, axis, g):
    if axis is None:
        return unjoin(g, arrays, [np.ravel(a) for a in arrays], 0)
    return unjoin(g, arrays, arrays, axis)


@table.jvp(np.concatenate, "arrays")
def concatenate_jvp(arrays, arrays_dot, axis):
    return np.concatenate(tangent_items(arrays, arrays_dot), axis)


@table.vjp(np.stack, "arrays")
def stack_vjp(axis, g):
    return list(np.moveaxis(g, axis, 0))


@table.jvp(np.stack, "arrays")
def stack_jvp(arrays, arrays_dot, axis):
    return np.stack(tangent_items(arrays, arrays_dot), axis)


@table.vjp(np.hstack, "tup")
def hstack_vjp(tup, g):
    joined = [np.atleast_1d(a) for a in tup]
    return unjoin(g, tup, joined, 0 if joined[0].ndim == 1 else 1)


@table.vjp(np.vstack, "tup")
def vstack_vjp(tup, g):
    joined = [np.atleast_2d(a) for a in tup]
    return unjoin(g, tup, joined, 0)


@table.vjp(np.dstack, "tup")
def dstack_vjp(tup, g):
    joined = [np.atleast_3d(a) for a in tup]
    return unjoin(g, tup, joined, 2)


@table.vjp(np.column_stack, "tup")
def column_stack_vjp(tup, g):
    joined = [np.atleast_2d(a).T if np.ndim(a) < 2 else a for a in tup]
    return unjoin(g, tup, joined, 1)


if getattr(np, "row_stack", None) in table.primitives:
    table.vjp(np.row_stack, "tup")(vstack_vjp)

    @table.jvp(np.row_stack, "tup")
    def row_stack_jvp(tup, tup_dot):
        return np.vstack(tangent_items(tup, tup_dot))


@table.jvp(np.hstack, "tup")
def hstack_jvp(tup, tup_dot):
    return np.hstack(tangent_items(tup, tup_dot))


@table.jvp(np.vstack, "tup")
def vstack_jvp(tup, tup_dot):
    return np.vstack(tangent_items(tup, tup_dot))


@table.jvp(np.dstack, "tup")
def dstack_jvp(tup, tup_dot):
    return np.dstack(tangent_items(tup, tup_dot))


@table.jvp(np.column_stack, "tup")
def column_stack_jvp(tup, tup_dot):
    return np.column_stack(tangent_items(tup, tup_dot))


@table.vjp(np.block, "arrays")
def block_vjp(arrays, g):
    return unblock(g, arrays)


@table.jvp(np.block, "arrays")
def block_jvp(arrays, arrays_dot):
    return reblock(arrays_dot, arrays)


def unblock(g, arrays):
    """The cotangent of `np.block(arrays)`, split into nested lists shaped like `arrays` (the transpose)."""
    if not isinstance(arrays, list):
        return np.reshape(g, np.shape(arrays))
    depth, ndim = _block_depth(arrays), np.ndim(g)

    def split(g, node, level):
        if not isinstance(node, list):
            return np.reshape(g, np.shape(node))
        axis = ndim - depth + level
        ends = np.cumsum([_block_extent(child, axis, ndim) for child in node]).tolist()
        lead = (slice(None),) * axis
        return [split(g[lead + (slice(start, end),)], child, level + 1)
                for child, start, end in zip(node, [0] + ends[:-1], ends)]
    return split(g, arrays, 0)


def reblock(ct, arrays):
    """`np.block` of the per-item cotangents (or tangents) `ct`, nested like `arrays`, zeros where none."""
    return np.block(dense_tree(ct, arrays))


def dense_tree(ct, like):
    """`ct` (nested lists, tuples or Cotrees with None for missing items) with zeros like `like` for those."""
    if not isinstance(like, (list, tuple)):
        return np.zeros_like(like) if ct is None else ct
    if isinstance(ct, dict):
        return [dense_tree(ct.get(i), item) for i, item in enumerate(like)]
    return [dense_tree(None if ct is None else ct[i], item) for i, item in enumerate(like)]


def _block_depth(node):
    return 1 + _block_depth(node[0]) if isinstance(node, list) else 0


def _block_extent(node, axis, ndim):
    """How far `node` (an array, or a nested list as `np.block` joins it) reaches along `axis`."""
    while isinstance(node, list):
        node = node[0]
    shape = np.shape(node)
    return ((1,) * (ndim - len(shape)) + tuple(shape))[axis]


@table.vjp(np.split, "ary")
@table.vjp(np.array_split, "ary")
def split_vjp(axis, y, g):
    return np.concatenate(piece_cotangents(g, y), axis)


@table.vjp(np.hsplit, "ary")
def hsplit_vjp(ary_shape, y, g):
    return np.concatenate(piece_cotangents(g, y), 1 if len(ary_shape) > 1 else 0)


@table.vjp(np.vsplit, "ary")
def vsplit_vjp(y, g):
    return np.concatenate(piece_cotangents(g, y), 0)


@table.vjp(np.dsplit, "ary")
def dsplit_vjp(y, g):
    return np.concatenate(piece_cotangents(g, y), 2)


@table.jvp(np.split, "ary")
def split_jvp(ary_dot, indices_or_sections, axis):
    return np.split(ary_dot, indices_or_sections, axis)


@table.jvp(np.array_split, "ary")
def array_split_jvp(ary_dot, indices_or_sections, axis):
    return np.array_split(ary_dot, indices_or_sections, axis)


@table.jvp(np.hsplit, "ary")
def hsplit_jvp(ary_dot, indices_or_sections):
    return np.hsplit(ary_dot, indices_or_sections)


@table.jvp(np.vsplit, "ary")
def vsplit_jvp(ary_dot, indices_or_sections):
    return np.vsplit(ary_dot, indices_or_sections)


@table.jvp(np.dsplit, "ary")
def dsplit_jvp(ary_dot, indices_or_sections):
    return np.dsplit(ary_dot, indices_or_sections)


# --- flips, rolls, rotations --------------------------------------------------------------------

@table.vjp(np.flip, "m")
def flip_vjp(axis, g):
    return np.flip(g, axis)


@table.jvp(np.flip, "m")
def flip_jvp(m_dot, axis):
    return np.flip(m_dot, axis)


@table.vjp(np.fliplr, "m")
def fliplr_vjp(g):
    return np.fliplr(g)


@table.jvp(np.fliplr, "m")
def fliplr_jvp(m_dot):
    return np.fliplr(m_dot)


@table.vjp(np.flipud, "m")
def flipud_vjp(g):
    return np.flipud(g)


@table.jvp(np.flipud, "m")
def flipud_jvp(m_dot):
    return np.flipud(m_dot)


@table.vjp(np.roll, "a")
def roll_vjp(shift, axis, g):
    return np.roll(g, np.negative(shift), axis)


@table.jvp(np.roll, "a")
def roll_jvp(a_dot, shift, axis):
    return np.roll(a_dot, shift, axis)


@table.vjp(np.rot90, "m")
def rot90_vjp(k, axes, g):
    return np.rot90(g, -k, axes)


@table.jvp(np.rot90, "m")
def rot90_jvp(m_dot, k, axes):
    return np.rot90(m_dot, k, axes)


# --- copies: tile, repeat, pad ------------------------------------------------------------------

@table.vjp(np.tile, "A")
def tile_vjp(A_shape, reps, g):
    return untile(g, A_shape, reps)


@table.jvp(np.tile, "A")
def tile_jvp(A_dot, reps):
    return np.tile(A_dot, reps)


@table.vjp(np.repeat, "a")
def repeat_vjp(a_shape, repeats, axis, g):
    return unrepeat(g, a_shape, repeats, axis)


@table.jvp(np.repeat, "a")
def repeat_jvp(a_dot, repeats, axis):
    return np.repeat(a_dot, repeats, axis)


@table.vjp(np.pad, "array")
def pad_vjp(array_shape, pad_width, mode, g):
    return unpad(g, array_shape, pad_width, mode)


@table.jvp(np.pad, "array")
def pad_jvp(array_dot, pad_width, mode):
    return np.pad(array_dot, pad_width, mode)


# --- triangles and diagonals --------------------------------------------------------------------

@table.vjp(np.tril, "m")
def tril_vjp(m_shape, k, g):
    return unbroadcast(np.tril(g, k), m_shape)


@table.jvp(np.tril, "m")
def tril_jvp(m_dot, k):
    return np.tril(m_dot, k)


@table.vjp(np.triu, "m")
def triu_vjp(m_shape, k, g):
    return unbroadcast(np.triu(g, k), m_shape)


@table.jvp(np.triu, "m")
def triu_jvp(m_dot, k):
    return np.triu(m_dot, k)


@table.vjp(np.diag, "v")
def diag_vjp(v_shape, k, g):
    return np.diag(g, k) if len(v_shape) == 1 else undiagonal(g, v_shape, k, 0, 1)


@table.jvp(np.diag, "v")
def diag_jvp(v_dot, k):
    return np.diag(v_dot, k)


@table.vjp(np.diagonal, "a")
def diagonal_vjp(a_shape, offset, axis1, axis2, g):
    return undiagonal(g, a_shape, offset, axis1, axis2)


@table.jvp(np.diagonal, "a")
def diagonal_jvp(a_dot, offset, axis1, axis2):
    return np.diagonal(a_dot, offset, axis1, axis2)


# --- gathers: take, take_along_axis, sort -------------------------------------------------------

@table.vjp(np.take, "a")
def take_vjp(a_shape, indices, axis, g):
    return untake(g, a_shape, indices, axis)


@table.jvp(np.take, "a")
def take_jvp(a_dot, indices, axis):
    return np.take(a_dot, indices, axis)


@table.vjp(np.take_along_axis, "arr")
def take_along_axis_vjp(arr_shape, indices, axis, g):
    return untake_along_axis(g, arr_shape, indices, axis)


@table.jvp(np.take_along_axis, "arr")
def take_along_axis_jvp(arr_dot, indices, axis):
    return np.take_along_axis(arr_dot, indices, axis)


@table.vjp(np.sort, "a")
def sort_vjp(a, axis, g):
    return unsort(g, a, axis)


@table.jvp(np.sort, "a")
def sort_jvp(a, a_dot, axis):
    return sort_tangent(a, a_dot, axis)


@table.vjp(np.partition, "a")
def partition_vjp(a_shape, axis, y, a, g):
    return untake_along_axis(g, a_shape, partition_source(a, y, axis), axis)


@table.jvp(np.partition, "a")
def partition_jvp(a, a_dot, axis, y):
    return np.take_along_axis(a_dot, partition_source(a, y, axis), axis)


# --- append, insert, delete ---------------------------------------------------------------------

@table.vjp(np.append, "arr")
def append_vjp_arr(arr_shape, axis, g):
    return np.reshape(g[append_index(arr_shape, axis, True)], arr_shape)


@table.vjp(np.append, "values")
def append_vjp_values(arr_shape, values_shape, axis, g):
    return np.reshape(g[append_index(arr_shape, axis, False)], values_shape)


@table.jvp(np.append, "arr")
def append_jvp_arr(arr_dot, values, axis):
    return np.append(arr_dot, np.zeros_like(values), axis)


@table.jvp(np.append, "values")
def append_jvp_values(arr, values_dot, axis):
    return np.append(np.zeros_like(arr), values_dot, axis)


@table.vjp(np.insert, "arr")
def insert_vjp_arr(arr_shape, obj, values, axis, g):
    return np.reshape(np.take(g, insert_index(arr_shape, obj, values, axis)), arr_shape)


@table.vjp(np.insert, "values")
def insert_vjp_values(arr_shape, obj, values_shape, axis, g):
    return insert_values_cotangent(g, arr_shape, obj, values_shape, axis)


@table.jvp(np.insert, "arr")
def insert_jvp_arr(arr_dot, obj, values, axis):
    return np.insert(arr_dot, obj, np.zeros_like(values), axis)


@table.jvp(np.insert, "values")
def insert_jvp_values(arr, obj, values_dot, axis):
    return np.insert(np.zeros_like(arr), obj, values_dot, axis)


@table.vjp(np.delete, "arr")
def delete_vjp(arr_shape, obj, axis, g):
    return delete_cotangent(g, arr_shape, obj, axis)


@table.jvp(np.delete, "arr")
def delete_jvp(arr_dot, obj, axis):
    return np.delete(arr_dot, obj, axis)


# --- attributes and small nondifferentiable pieces ----------------------------------------------

def metadata(obj, name):
    """`x.shape`, `x.ndim`, `x.dtype`, ...: attributes that describe a value and carry no gradient."""
    return getattr(obj, name)


def field_cotangent(g, name):
    """The cotangent of `obj.name` as the cotangent of `obj` (a namedtuple, dataclass or registered pytree)."""
    return Cotree({name: g})


def cotangent_field(ct, name):
    """Field `name` of an object's cotangent (None if it has none): the transpose of `field_cotangent`."""
    return None if ct is None else ct.get(name) if isinstance(ct, dict) else getattr(ct, name, None)


def attribute_or_none(obj, name):
    """`obj.name`, or None if it has none yet (what a loop that sets `self.h` starts from)."""
    return getattr(obj, name, None)


table.op(getattr, "obj, name", name="getattr", form="attr", inert=("name",))
# The value an attribute had before the function set it: not computed here, so no derivative (one set on
# another name for the same object is refused where it is read: frontend check_untied_attribute).
table.nondiff(attribute_or_none, "obj, name", spelling="attribute_or_none")


@table.vjp(getattr, "obj")
def getattr_vjp(name, g):
    return field_cotangent(g, name)


@table.jvp(getattr, "obj")
def getattr_jvp(obj_dot, name):
    return getattr(obj_dot, name)


# `obj.method` read as a value (`odeint(model.rhs, ...)`): getattr, with its rules, told apart so that
# activity knows the bound method reads every attribute of its object (frontend: expr_Attribute).
BOUND_METHOD = __import__("dataclasses").replace(table.primitives[getattr])
table.nondiff(metadata, "obj, name", name="metadata", form="attr")
# Written with all three arguments (render.py): `x[j:]` is `slice(j, None, None)`; `slice(j)` means `:j`.
table.nondiff(slice, "start, stop=None, step=None", name="slice", spelling="slice")
table.nondiff(meta, "a", spelling="meta")
table.nondiff(shape_of, "a", name="shape", spelling="shape")

"""Rule table tests for shapes and indexing: every primitive of `tapegen/rules/shape.py`.

`ROWS` runs each primitive through the full reverse transform and compares with
central differences; `JVP_CASES` calls the JVP rules directly against a
directional difference; `DTYPE_CASES` checks that VJP rules keep float32.
"""
import operator

import numpy as np
import pytest

from rule_rows import Row, check_jvp_rules, check_vjp_row
import tapegen as tg
from tapegen import rules
from tapegen.errors import NoRuleError
from tapegen.runtime import Cotree, meta
from tapegen.rules.shape import copied, element_cotangent, item_of

_rng = np.random.default_rng(7)


def _x(*shape):
    return _rng.standard_normal(shape)


S = 0.7
V5, V4, V3 = _x(5), _x(4), _x(3)
M34, M32, M24, M44, M31 = _x(3, 4), _x(3, 2), _x(2, 4), _x(4, 4), _x(3, 1)
T234, T134 = _x(2, 3, 4), _x(1, 3, 4)
V7 = _x(7)
DUPLICATES = np.array([0, 2, 2, -1, 0])
ORDER = np.argsort(M34, axis=1)


# A core bug (reverse/render): the rule result for a one-item list argument is assigned whole,
# `g_a = atleast_vjp((a,), g)`, not unpacked, `g_a, = ...`; so `np.atleast_1d(a)` and `np.stack([a])` fail.


def _row(id, fn, *args, covers, wrt=(0,), **options):
    return Row(id, fn, args, wrt=wrt, covers=covers, **options)


def split_two_pieces(a):
    pieces = np.split(a, 2, axis=2)
    return pieces[0] * pieces[1] + pieces[0]


def split_same_piece_twice(a):
    pieces = np.split(a, 3)
    return pieces[1] * pieces[-2]


def array_split_all(a):
    pieces = np.array_split(a, 3, axis=1)
    return np.sum(pieces[0]) + np.sum(pieces[1] ** 2) + np.sum(pieces[2] * 3.0)


ROWS = [
    # --- indexing and casts (the thorough indexing cases are in test_indexing.py) ---
    _row("getitem-(3,4)-slices-float64", lambda a: a[1:, ::-2], M34, covers=(operator.getitem,)),
    _row("getitem-(2,3,4)-int-array-float64", lambda a: a[:, DUPLICATES[:3]], T234, covers=(operator.getitem,)),
    _row("astype-(3,4)-float64", lambda a: a.astype(np.float64) * 2.0, M34, covers=(np.ndarray.astype,)),
    _row("item-(3,4)-float64", lambda a: a.item(5) * a[1:2, 2:3].item() ** 2 * a, M34,
         covers=(item_of, element_cotangent)),
    _row("astype-(3,4)-to-int-float64", lambda a: a.astype(int) * a, M34 * 3.0, covers=(np.ndarray.astype,)),
    _row("copy-(5,)-float64", lambda a: np.copy(a) * a, V5, covers=(np.copy,)),
    _row("copy-(3,4)-method-float64", lambda a: a.copy(), M34, covers=(copied,)),
    _row("copy-scalar-float64", lambda s: np.copy(s) * 3.0, S, covers=(np.copy,)),

    # --- reshapes ---
    _row("reshape-scalar-float64", lambda s: np.reshape(s, (1, 1)), S, covers=(np.reshape,)),
    _row("reshape-(3,4)-float64", lambda a: np.reshape(a, (4, 3)) * 2.0, M34, covers=(np.reshape,)),
    _row("reshape-(2,3,4)-minus1-float64", lambda a: np.reshape(a, (6, -1)), T234, covers=(np.reshape,)),
    _row("reshape-(3,4)-method-args-float64", lambda a: a.reshape(2, 6), M34, covers=(np.reshape,)),
    _row("reshape-(2,3,4)-method-tuple-float64", lambda a: a.reshape((4, -1)), T234, covers=(np.reshape,)),
    _row("ravel-(3,4)-float64", lambda a: np.ravel(a), M34, covers=(np.ravel,)),
    _row("ravel-(2,3,4)-method-float64", lambda a: a.ravel() ** 2, T234, covers=(np.ravel,)),
    _row("ravel-scalar-float64", lambda s: np.ravel(s), S, covers=(np.ravel,)),
    _row("flatten-(3,4)-float64", lambda a: a.flatten() * 3.0, M34, covers=(np.ndarray.flatten,)),
    _row("squeeze-(1,3,4)-float64", lambda a: np.squeeze(a), T134, covers=(np.squeeze,)),
    _row("squeeze-(3,1)-axis1-float64", lambda a: np.squeeze(a, axis=1), M31, covers=(np.squeeze,)),
    _row("squeeze-(1,3,4)-method-axis0-float64", lambda a: a.squeeze(0), T134, covers=(np.squeeze,)),
    _row("expand_dims-scalar-axis0-float64", lambda s: np.expand_dims(s, 0), S, covers=(np.expand_dims,)),
    _row("expand_dims-(5,)-axis-1-float64", lambda a: np.expand_dims(a, -1), V5, covers=(np.expand_dims,)),
    _row("expand_dims-(3,4)-axes02-float64", lambda a: np.expand_dims(a, (0, 2)), M34, covers=(np.expand_dims,)),
    _row("broadcast_to-scalar-float64", lambda s: np.broadcast_to(s, (3,)), S, covers=(np.broadcast_to,)),
    _row("broadcast_to-(4,)-(3,4)-float64", lambda a: np.broadcast_to(a, (3, 4)), V4, covers=(np.broadcast_to,)),
    _row("broadcast_to-(3,1)-(2,3,4)-float64", lambda a: np.broadcast_to(a, (2, 3, 4)), M31,
         covers=(np.broadcast_to,)),
    _row("atleast_1d-scalar-float64", lambda s: np.atleast_1d(s), S, covers=(np.atleast_1d,)),
    _row("atleast_1d-(3,4)-float64", lambda a: np.atleast_1d(a), M34, covers=(np.atleast_1d,)),
    _row("atleast_2d-(5,)-float64", lambda a: np.atleast_2d(a) * 2.0, V5, covers=(np.atleast_2d,)),
    _row("atleast_2d-scalar-float64", lambda s: np.atleast_2d(s), S, covers=(np.atleast_2d,)),
    _row("atleast_3d-(5,)-float64", lambda a: np.atleast_3d(a), V5, covers=(np.atleast_3d,)),
    _row("atleast_3d-(3,4)-float64", lambda a: np.atleast_3d(a), M34, covers=(np.atleast_3d,)),
    _row("atleast_2d-two-(5,),(3,4)-float64", lambda a, b: np.atleast_2d(a, b)[0] * 2.0, V5, M34, wrt=(0, 1),
         covers=(np.atleast_2d,)),
    _row("atleast_3d-two-(4,),(3,4)-float64", lambda a, b: np.atleast_3d(a, b)[1], V4, M34, wrt=(0, 1),
         covers=(np.atleast_3d,)),

    # --- transposes ---
    _row("transpose-(3,4)-float64", lambda a: np.transpose(a), M34, covers=(np.transpose,)),
    _row("transpose-(3,4)-T-float64", lambda a: a.T * 2.0, M34, covers=(np.transpose,)),
    _row("transpose-(2,3,4)-axes201-float64", lambda a: np.transpose(a, (2, 0, 1)), T234, covers=(np.transpose,)),
    _row("transpose-(2,3,4)-negative-axes-float64", lambda a: np.transpose(a, (-1, 0, 1)), T234,
         covers=(np.transpose,)),
    _row("transpose-(2,3,4)-method-args-float64", lambda a: a.transpose(1, 2, 0), T234, covers=(np.transpose,)),
    _row("transpose-(2,3,4)-method-noargs-float64", lambda a: a.transpose(), T234, covers=(np.transpose,)),
    _row("swapaxes-(2,3,4)-0,2-float64", lambda a: np.swapaxes(a, 0, 2), T234, covers=(np.swapaxes,)),
    _row("swapaxes-(3,4)-method-negative-float64", lambda a: a.swapaxes(-1, 0), M34, covers=(np.swapaxes,)),
    _row("moveaxis-(2,3,4)-0to-1-float64", lambda a: np.moveaxis(a, 0, -1), T234, covers=(np.moveaxis,)),
    _row("moveaxis-(2,3,4)-tuples-float64", lambda a: np.moveaxis(a, (0, 1), (2, 0)), T234, covers=(np.moveaxis,)),
    _row("rollaxis-(2,3,4)-axis2-float64", lambda a: np.rollaxis(a, 2), T234, covers=(np.rollaxis,)),
    _row("rollaxis-(2,3,4)-axis0-start3-float64", lambda a: np.rollaxis(a, 0, 3), T234, covers=(np.rollaxis,)),
    _row("rollaxis-(2,3,4)-axis1-start1-float64", lambda a: np.rollaxis(a, 1, 1), T234, covers=(np.rollaxis,)),
    _row("rollaxis-(2,3,4)-negative-float64", lambda a: np.rollaxis(a, -1, -2), T234, covers=(np.rollaxis,)),

    # --- joins ---
    _row("concatenate-(5,),(4,)-float64", lambda a, b: np.concatenate([a, b]) ** 2, V5, V4, wrt=(0, 1),
         covers=(np.concatenate,)),
    _row("concatenate-(3,4),(3,2)-axis1-float64", lambda a, b: np.concatenate([a, b], axis=1), M34, M32,
         wrt=(0, 1), covers=(np.concatenate,)),
    _row("concatenate-(3,4),(2,4)-axis-None-float64", lambda a, b: np.concatenate((a, b), axis=None), M34, M24,
         wrt=(0, 1), covers=(np.concatenate,)),
    _row("concatenate-(2,3,4)-self-axis-1-float64", lambda a: np.concatenate([a, 2.0 * a, a], axis=-1), T234,
         covers=(np.concatenate,)),
    _row("concatenate-(4,)-with-constant-float64", lambda a: np.concatenate([np.ones(2), a, np.zeros(1)]), V4,
         covers=(np.concatenate,)),
    _row("stack-(5,),(5,)-float64", lambda a, b: np.stack([a, b * a]), V5, V5 + 1.0, wrt=(0, 1),
         covers=(np.stack,)),
    _row("stack-(3,4)x3-axis2-float64", lambda a, b: np.stack([a, b, a], axis=2), M34, M34 * 2.0, wrt=(0, 1),
         covers=(np.stack,)),
    _row("stack-(3,4)-axis-1-float64", lambda a: np.stack([a, np.sin(a)], axis=-1), M34, covers=(np.stack,)),
    _row("stack-one-item-(3,4)-float64", lambda a: np.stack([a]), M34, covers=(np.stack,)),
    _row("stack-scalars-float64", lambda s: np.stack([s, 2.0 * s, 1.0]), S, covers=(np.stack,)),
    _row("hstack-scalars-float64", lambda s: np.hstack([s, s * s]), S, covers=(np.hstack,)),
    _row("hstack-(5,),(4,)-float64", lambda a, b: np.hstack([a, b]), V5, V4, wrt=(0, 1), covers=(np.hstack,)),
    _row("hstack-(3,4),(3,2)-float64", lambda a, b: np.hstack((a, b)), M34, M32, wrt=(0, 1), covers=(np.hstack,)),
    _row("vstack-(4,),(4,)-float64", lambda a, b: np.vstack([a, b]), V4, V4 * 3.0, wrt=(0, 1), covers=(np.vstack,)),
    _row("vstack-(3,4),(2,4),(4,)-float64", lambda a, b, c: np.vstack([a, b, c]), M34, M24, V4, wrt=(0, 1, 2),
         covers=(np.vstack,)),
    _row("vstack-scalars-float64", lambda s: np.vstack([s, 2.0 * s]), S, covers=(np.vstack,)),
    _row("dstack-(3,4),(3,4)-float64", lambda a, b: np.dstack([a, b]), M34, M34 - 1.0, wrt=(0, 1),
         covers=(np.dstack,)),
    _row("dstack-(4,),(2,3,4)-shapes-float64", lambda a: np.dstack([a, a * 2.0]), V4, covers=(np.dstack,)),
    _row("dstack-(2,3,4),(2,3,4)-float64", lambda a: np.dstack([a, np.cos(a)]), T234, covers=(np.dstack,)),
    _row("column_stack-(3,),(3,)-float64", lambda a, b: np.column_stack([a, b]), V3, V3 + 1.0, wrt=(0, 1),
         covers=(np.column_stack,)),
    _row("column_stack-(3,2),(3,)-float64", lambda a, b: np.column_stack((a, b)), M32, V3, wrt=(0, 1),
         covers=(np.column_stack,)),
    # --- one array where a list goes: NumPy iterates it along its first axis ---
    _row("concatenate-one-(3,4)-float64", lambda a: np.concatenate(a * 2.0), M34, covers=(np.concatenate,)),
    _row("hstack-one-(3,4)-float64", lambda a: np.hstack(a) ** 2, M34, covers=(np.hstack,)),
    _row("vstack-one-(4,)-float64", lambda a: np.vstack(a) * a, V4, covers=(np.vstack,)),
    _row("vstack-one-(2,3,4)-float64", lambda a: np.vstack(a ** 2), T234, covers=(np.vstack,)),
    _row("dstack-one-(3,4)-float64", lambda a: np.dstack(a) ** 2, M34, covers=(np.dstack,)),
    _row("column_stack-one-(3,4)-float64", lambda a: np.column_stack(a) ** 2, M34, covers=(np.column_stack,)),
    _row("column_stack-one-(4,)-float64", lambda a: np.column_stack(a) ** 2, V4, covers=(np.column_stack,)),

    # --- splits: the result is a list, used by indexing ---
    _row("split-(4,)-sections2-float64", lambda a: np.split(a, 2)[1] * 2.0, V4, covers=(np.split,)),
    _row("split-(3,4)-axis1-indices-float64", lambda a: np.split(a, [1, 3], axis=1)[-1], M34, covers=(np.split,)),
    _row("split-(2,3,4)-two-pieces-used-float64", split_two_pieces, T234, covers=(np.split,)),
    _row("split-(6,)-same-piece-by-two-keys-float64", split_same_piece_twice, _x(6), covers=(np.split,)),
    _row("array_split-(7,)-sections3-float64", lambda a: np.array_split(a, 3)[0] ** 2, V7, covers=(np.array_split,)),
    _row("array_split-(3,4)-axis1-float64", array_split_all, M34, covers=(np.array_split,)),
    _row("hsplit-(3,4)-float64", lambda a: np.hsplit(a, 2)[1], M34, covers=(np.hsplit,)),
    _row("hsplit-(4,)-float64", lambda a: np.hsplit(a, [1])[1] * 3.0, V4, covers=(np.hsplit,)),
    _row("vsplit-(4,4)-float64", lambda a: np.vsplit(a, [1, 2])[2], M44, covers=(np.vsplit,)),
    _row("dsplit-(2,3,4)-float64", lambda a: np.dsplit(a, 2)[0] * 2.0, T234, covers=(np.dsplit,)),

    # --- flips, rolls, rotations ---
    _row("flip-(5,)-float64", lambda m: np.flip(m) * np.arange(5.0), V5, covers=(np.flip,)),
    _row("flip-(3,4)-axis1-float64", lambda m: np.flip(m, 1), M34, covers=(np.flip,)),
    _row("flip-(2,3,4)-axes02-float64", lambda m: np.flip(m, axis=(0, 2)), T234, covers=(np.flip,)),
    _row("flip-(3,4)-axis-None-float64", lambda m: np.flip(m, axis=None), M34, covers=(np.flip,)),
    _row("fliplr-(3,4)-float64", lambda m: np.fliplr(m), M34, covers=(np.fliplr,)),
    _row("fliplr-(2,3,4)-float64", lambda m: np.fliplr(m), T234, covers=(np.fliplr,)),
    _row("flipud-(5,)-float64", lambda m: np.flipud(m) * np.arange(5.0), V5, covers=(np.flipud,)),
    _row("flipud-(3,4)-float64", lambda m: np.flipud(m), M34, covers=(np.flipud,)),
    _row("roll-(5,)-shift2-float64", lambda a: np.roll(a, 2) * np.arange(5.0), V5, covers=(np.roll,)),
    _row("roll-(3,4)-shift-1-axis1-float64", lambda a: np.roll(a, -1, axis=1), M34, covers=(np.roll,)),
    _row("roll-(3,4)-shifts-axes-float64", lambda a: np.roll(a, (1, 2), axis=(0, 1)), M34, covers=(np.roll,)),
    _row("roll-(3,4)-axis-None-float64", lambda a: np.roll(a, 5), M34, covers=(np.roll,)),
    _row("rot90-(3,4)-float64", lambda m: np.rot90(m), M34, covers=(np.rot90,)),
    _row("rot90-(3,4)-k2-float64", lambda m: np.rot90(m, 2), M34, covers=(np.rot90,)),
    _row("rot90-(2,3,4)-k-1-axes12-float64", lambda m: np.rot90(m, -1, axes=(1, 2)), T234, covers=(np.rot90,)),
    _row("rot90-(3,4)-k3-float64", lambda m: np.rot90(m, k=3), M34, covers=(np.rot90,)),

    # --- copies: tile, repeat, pad ---
    _row("tile-scalar-reps3-float64", lambda A: np.tile(A, 3), S, covers=(np.tile,)),
    _row("tile-(4,)-reps22-float64", lambda A: np.tile(A, (2, 2)) * np.arange(16.0).reshape(2, 8), V4,
         covers=(np.tile,)),
    _row("tile-(3,4)-reps2-float64", lambda A: np.tile(A, 2), M34, covers=(np.tile,)),
    _row("tile-(3,4)-reps213-float64", lambda A: np.tile(A, (2, 1, 3)), M34, covers=(np.tile,)),
    _row("repeat-scalar-3-float64", lambda a: np.repeat(a, 3) * np.arange(3.0), S, covers=(np.repeat,)),
    _row("repeat-(4,)-2-float64", lambda a: np.repeat(a, 2) * np.arange(8.0), V4, covers=(np.repeat,)),
    _row("repeat-(3,4)-counts-axis0-float64", lambda a: np.repeat(a, [1, 0, 2], axis=0), M34, covers=(np.repeat,)),
    _row("repeat-(3,4)-axis-None-float64", lambda a: np.repeat(a, 2), M34, covers=(np.repeat,)),
    _row("repeat-(2,3,4)-method-axis-1-float64", lambda a: a.repeat(2, axis=-1), T234, covers=(np.repeat,)),
    _row("pad-(5,)-constant-float64", lambda array: np.pad(array, 2), V5, covers=(np.pad,)),
    _row("pad-(3,4)-constant-widths-float64", lambda array: np.pad(array, ((1, 0), (2, 1))), M34, covers=(np.pad,)),
    _row("pad-(3,4)-constant-values-float64", lambda array: np.pad(array, 1, constant_values=1.5), M34,
         covers=(np.pad,)),
    _row("pad-(3,4)-edge-float64", lambda array: np.pad(array, ((2, 1), (0, 3)), mode="edge"), M34,
         covers=(np.pad,)),
    _row("pad-(3,4)-reflect-float64", lambda array: np.pad(array, 2, mode="reflect"), M34, covers=(np.pad,)),
    _row("pad-(5,)-symmetric-float64", lambda array: np.pad(array, (3, 1), "symmetric"), V5, covers=(np.pad,)),
    _row("pad-(2,3,4)-wrap-float64", lambda array: np.pad(array, 1, mode="wrap"), T234, covers=(np.pad,)),

    # --- triangles and diagonals ---
    _row("tril-(4,4)-float64", lambda m: np.tril(m), M44, covers=(np.tril,)),
    _row("tril-(3,4)-k1-float64", lambda m: np.tril(m, 1), M34, covers=(np.tril,)),
    _row("tril-(2,3,4)-k-1-float64", lambda m: np.tril(m, k=-1), T234, covers=(np.tril,)),
    _row("tril-(4,)-broadcast-float64", lambda m: np.tril(m), V4, covers=(np.tril,)),
    _row("triu-(4,4)-float64", lambda m: np.triu(m), M44, covers=(np.triu,)),
    _row("triu-(3,4)-k-1-float64", lambda m: np.triu(m, -1), M34, covers=(np.triu,)),
    _row("triu-(2,3,4)-k2-float64", lambda m: np.triu(m, k=2), T234, covers=(np.triu,)),
    _row("triu-(4,)-broadcast-float64", lambda m: np.triu(m, 1), V4, covers=(np.triu,)),
    _row("diag-(4,)-float64", lambda v: np.diag(v), V4, covers=(np.diag,)),
    _row("diag-(3,)-k1-float64", lambda v: np.diag(v, 1), V3, covers=(np.diag,)),
    _row("diag-(3,)-k-2-float64", lambda v: np.diag(v, k=-2), V3, covers=(np.diag,)),
    _row("diag-(4,4)-float64", lambda v: np.diag(v) ** 2, M44, covers=(np.diag,)),
    _row("diag-(3,4)-k1-float64", lambda v: np.diag(v, 1), M34, covers=(np.diag,)),
    _row("diag-(3,4)-k-1-float64", lambda v: np.diag(v, -1), M34, covers=(np.diag,)),
    _row("diagonal-(4,4)-float64", lambda a: np.diagonal(a), M44, covers=(np.diagonal,)),
    _row("diagonal-(3,4)-offset1-float64", lambda a: np.diagonal(a, 1), M34, covers=(np.diagonal,)),
    _row("diagonal-(2,3,4)-axes12-offset-1-float64", lambda a: np.diagonal(a, -1, axis1=1, axis2=2), T234,
         covers=(np.diagonal,)),
    _row("diagonal-(2,3,4)-axes20-float64", lambda a: np.diagonal(a, axis1=2, axis2=0), T234,
         covers=(np.diagonal,)),
    _row("diagonal-(3,4)-method-float64", lambda a: a.diagonal() * 3.0, M34, covers=(np.diagonal,)),

    # --- gathers ---
    _row("take-(5,)-duplicates-float64", lambda a: np.take(a, DUPLICATES) * np.arange(5.0), V5, covers=(np.take,)),
    _row("take-(3,4)-axis0-float64", lambda a: np.take(a, [2, 0, 2], axis=0), M34, covers=(np.take,)),
    _row("take-(3,4)-axis-None-float64", lambda a: np.take(a, DUPLICATES), M34, covers=(np.take,)),
    _row("take-(2,3,4)-axis-1-2d-indices-float64", lambda a: np.take(a, np.array([[0, 3], [3, 3]]), axis=-1), T234,
         covers=(np.take,)),
    _row("take-(3,4)-method-int-float64", lambda a: a.take(1, axis=1), M34, covers=(np.take,)),
    _row("take_along_axis-(3,4)-argsort-float64", lambda arr: np.take_along_axis(arr, ORDER, axis=1), M34,
         covers=(np.take_along_axis,)),
    _row("take_along_axis-(3,4)-duplicates-axis0-float64",
         lambda arr: np.take_along_axis(arr, np.array([[0, 0, 2, 1]]), axis=0), M34, covers=(np.take_along_axis,)),
    _row("take_along_axis-(2,3,4)-default-axis-float64",
         lambda arr: np.take_along_axis(arr, np.zeros((2, 3, 2), dtype=int), -1), T234, covers=(np.take_along_axis,)),
    _row("take_along_axis-(3,4)-axis-None-float64",
         lambda arr: np.take_along_axis(arr, DUPLICATES, axis=None), M34, covers=(np.take_along_axis,)),
    _row("sort-(5,)-float64", lambda a: np.sort(a) * np.arange(5.0), V5, covers=(np.sort,)),
    _row("sort-(3,4)-axis0-float64", lambda a: np.sort(a, axis=0), M34, covers=(np.sort,)),
    _row("sort-(2,3,4)-axis-1-float64", lambda a: np.sort(a, -1), T234, covers=(np.sort,)),
    _row("sort-(3,4)-axis-None-float64", lambda a: np.sort(a, axis=None), M34, covers=(np.sort,)),
    _row("partition-(5,)-float64", lambda a: np.partition(a, 2) * np.arange(5.0), V5, covers=(np.partition,)),
    _row("partition-(3,4)-axis0-float64", lambda a: np.partition(a, 1, axis=0), M34, covers=(np.partition,)),
    _row("partition-(2,3,4)-two-kth-float64", lambda a: np.partition(a, (0, 2)), T234, covers=(np.partition,)),
    _row("partition-(3,4)-axis-None-float64", lambda a: np.partition(a, 5, axis=None), M34, covers=(np.partition,)),

    # --- append, insert, delete ---
    _row("append-(3,4)x(2,4)-axis-None-float64", lambda a, b: np.append(a, b), M34, M24, wrt=(0, 1),
         covers=(np.append,)),
    _row("append-(3,4)x(2,4)-axis0-float64", lambda a, b: np.append(a, b, axis=0), M34, M24, wrt=(0, 1),
         covers=(np.append,)),
    _row("append-(3,4)x(3,2)-axis-1-float64", lambda a, b: np.append(a, b, axis=-1), M34, M32, wrt=(0, 1),
         covers=(np.append,)),
    _row("append-(5,)xscalar-float64", lambda a, b: np.append(a, b) * np.arange(6.0), V5, S, wrt=(0, 1),
         covers=(np.append,)),
    _row("append-(5,)-list-float64", lambda a: np.append(a, [1.0, 2.0]) ** 2, V5, covers=(np.append,)),
    _row("insert-(3,4)-int-axis1-float64", lambda a, v: np.insert(a, 1, v, axis=1), M34, V3, wrt=(0, 1),
         covers=(np.insert,)),
    _row("insert-(3,4)-int-broadcast-float64", lambda a, v: np.insert(a, 2, v, axis=0) ** 2, M34, _x(1), wrt=(0, 1),
         covers=(np.insert,)),
    _row("insert-(3,4)-flat-scalar-float64", lambda a, v: np.insert(a, 3, v), M34, S, wrt=(0, 1),
         covers=(np.insert,)),
    _row("insert-(3,4)-sequence-repeated-float64", lambda a, v: np.insert(a, [0, 2, 2], v, axis=0) ** 2, M34, V4,
         wrt=(0, 1), covers=(np.insert,)),
    _row("insert-(3,4)-sequence-values-(3,2)-float64", lambda a, v: np.insert(a, [1, 3], v, axis=1), M34, M32,
         wrt=(0, 1), covers=(np.insert,)),
    _row("insert-(3,4)-one-item-sequence-float64", lambda a, v: np.insert(a, [1], v, axis=1), M34, M31,
         wrt=(0, 1), covers=(np.insert,)),
    _row("insert-(3,4)-slice-float64", lambda a, v: np.insert(a, slice(0, 4, 2), v, axis=1) ** 2, M34, _x(2),
         wrt=(0, 1), covers=(np.insert,)),
    _row("insert-(5,)-negative-constant-values-float64", lambda a: np.insert(a, -1, [9.0, 8.0]) ** 2, V5,
         covers=(np.insert,)),
    _row("delete-(3,4)-int-axis1-float64", lambda a: np.delete(a, 1, axis=1), M34, covers=(np.delete,)),
    _row("delete-(3,4)-flat-sequence-float64", lambda a: np.delete(a, [0, 5, 7]) ** 2, M34, covers=(np.delete,)),
    _row("delete-(3,4)-slice-axis0-float64", lambda a: np.delete(a, slice(0, None, 2), axis=0), M34,
         covers=(np.delete,)),
    _row("delete-(3,4)-mask-float64", lambda a: np.delete(a, np.array([True, False, False, True]), axis=1), M34,
         covers=(np.delete,)),
]
if getattr(np, "row_stack", None) in rules.shape.table.primitives:  # deprecated in NumPy 2, removed later
    ROWS += [_row("row_stack-(4,)x(3,4)-float64", lambda a, b: np.row_stack([a, b]), V4, M34, wrt=(0, 1),
                  covers=(np.row_stack,), extra={"deprecated": True}),
             _row("row_stack-one-(3,4)-float64", lambda a: np.row_stack(a) ** 2, M34,
                  covers=(np.row_stack,), extra={"deprecated": True})]


def _param(row):
    reason = row.extra.get("xfail")
    return pytest.param(row, id=row.id, marks=[pytest.mark.xfail(strict=True, reason=reason)] if reason else [])


@pytest.mark.filterwarnings("ignore:`row_stack` alias is deprecated:DeprecationWarning")
@pytest.mark.parametrize("row", [_param(row) for row in ROWS])
def test_vjp(row):
    check_vjp_row(row)


SECOND_ORDER = ("partition", "append", "insert", "delete", "row_stack")


@pytest.mark.filterwarnings("ignore:`row_stack` alias is deprecated:DeprecationWarning")
@pytest.mark.parametrize("row", [row for row in ROWS if row.id.startswith(SECOND_ORDER)], ids=lambda row: row.id)
def test_second_order(row):
    """Hessian-vector products of sum(sin(f(...))) vs differences of the gradient: the rules' own code
    is differentiable (forward over reverse)."""
    fn = row.fn
    scalar = (lambda a: np.sum(np.sin(fn(a)))) if len(row.args) == 1 else (lambda a, b: np.sum(np.sin(fn(a, b))))
    tg.gradcheck(scalar, *row.args, wrt=row.wrt, order=2, rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore:`row_stack` alias is deprecated:DeprecationWarning")
@pytest.mark.parametrize("row", [row for row in ROWS if row.id.startswith(SECOND_ORDER)], ids=lambda row: row.id)
def test_forward_mode(row, eps=1e-6):
    """`tg.jvp` through the whole transform vs a central-difference directional derivative."""
    tangents = [_rng.standard_normal(np.shape(a)) if i in row.wrt else None for i, a in enumerate(row.args)]
    _, tangent = tg.jvp(row.fn, row.args, tuple(tangents))
    plus = [a if t is None else a + eps * t for a, t in zip(row.args, tangents)]
    minus = [a if t is None else a - eps * t for a, t in zip(row.args, tangents)]
    np.testing.assert_allclose(tangent, (row.fn(*plus) - row.fn(*minus)) / (2 * eps), rtol=1e-6, atol=1e-8)


def test_partition_follows_np_partition_not_np_argpartition():
    """The cotangent goes back along the permutation np.partition made, whatever np.argpartition says."""
    a = np.array([5.0, 1.0, 4.0, 2.0, 3.0, 0.5])
    weights = np.arange(1.0, 7.0)
    g = tg.grad(lambda a: np.sum(np.partition(a, 2) * weights))(a)
    expected = np.zeros(6)
    for position, value in enumerate(np.partition(a, 2)):
        expected[a == value] = weights[position]
    np.testing.assert_array_equal(g, expected)


def test_row_ids_are_unique():
    ids = [row.id for row in ROWS]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_pad_mode_without_a_rule_is_a_clear_error():
    with pytest.raises(NoRuleError, match="np.pad with mode='mean'"):
        tg.grad(lambda array: np.sum(np.pad(array, 1, mode="mean")))(V5)


# --- JVP rules, called directly -----------------------------------------------------------------

def _case(id, *values):
    return pytest.param(*values, id=id)


def _like(*arrays):
    return [_rng.standard_normal(np.shape(a)) for a in arrays]


JVP_CASES = [
    _case("getitem-(3,4)", operator.getitem, {"a": M34, "index": (slice(1, None), [0, 0, 2])}, {"a": _x(3, 4)}),
    _case("astype-(3,4)-float64", np.ndarray.astype, {"a": M34, "dtype": np.float64}, {"a": _x(3, 4)}),
    _case("item-(3,4)", item_of, {"a": M34, "index": 7}, {"a": _x(3, 4)}),
    _case("element_cotangent-(3,4)", element_cotangent, {"ct": 0.7, "shape": (3, 4), "index": 7}, {"ct": 1.3}),
    _case("copy-(5,)", np.copy, {"a": V5}, {"a": _x(5)}),
    _case("reshape-(3,4)", np.reshape, {"a": M34, "shape": (2, -1)}, {"a": _x(3, 4)}),
    _case("ravel-(2,3,4)", np.ravel, {"a": T234}, {"a": _x(2, 3, 4)}),
    _case("flatten-(3,4)", np.ndarray.flatten, {"a": M34}, {"a": _x(3, 4)}),
    _case("squeeze-(1,3,4)", np.squeeze, {"a": T134, "axis": 0}, {"a": _x(1, 3, 4)}),
    _case("expand_dims-(3,4)", np.expand_dims, {"a": M34, "axis": (0, 3)}, {"a": _x(3, 4)}),
    _case("broadcast_to-(3,1)", np.broadcast_to, {"array": M31, "shape": (2, 3, 4)}, {"array": _x(3, 1)}),
    _case("transpose-(2,3,4)", np.transpose, {"a": T234, "axes": (1, 2, 0)}, {"a": _x(2, 3, 4)}),
    _case("swapaxes-(2,3,4)", np.swapaxes, {"a": T234, "axis1": 0, "axis2": -1}, {"a": _x(2, 3, 4)}),
    _case("moveaxis-(2,3,4)", np.moveaxis, {"a": T234, "source": 0, "destination": 2}, {"a": _x(2, 3, 4)}),
    _case("rollaxis-(2,3,4)", np.rollaxis, {"a": T234, "axis": 2, "start": 1}, {"a": _x(2, 3, 4)}),
    _case("concatenate-(3,4)x2-axis1", np.concatenate, {"arrays": [M34, M34 + 1.0], "axis": 1},
         {"arrays": _like(M34, M34)}),
    _case("stack-(5,)x3-axis1", np.stack, {"arrays": [V5, V5 * 2.0, V5 - 1.0], "axis": 1},
         {"arrays": _like(V5, V5, V5)}),
    _case("hstack-(3,4)x2", np.hstack, {"tup": [M34, M34 * 2.0]}, {"tup": _like(M34, M34)}),
    _case("vstack-(4,)x2", np.vstack, {"tup": [V4, V4 * 2.0]}, {"tup": _like(V4, V4)}),
    _case("dstack-(3,4)x2", np.dstack, {"tup": [M34, M34 * 2.0]}, {"tup": _like(M34, M34)}),
    _case("column_stack-(3,)x2", np.column_stack, {"tup": [V3, V3 * 2.0]}, {"tup": _like(V3, V3)}),
    _case("split-(3,4)-axis1", np.split, {"ary": M34, "indices_or_sections": 2, "axis": 1}, {"ary": _x(3, 4)}),
    _case("array_split-(6,)", np.array_split, {"ary": _x(6), "indices_or_sections": 3, "axis": 0}, {"ary": _x(6)}),
    _case("hsplit-(3,4)", np.hsplit, {"ary": M34, "indices_or_sections": 2}, {"ary": _x(3, 4)}),
    _case("vsplit-(4,4)", np.vsplit, {"ary": M44, "indices_or_sections": [2]}, {"ary": _x(4, 4)}),
    _case("dsplit-(2,3,4)", np.dsplit, {"ary": T234, "indices_or_sections": 2}, {"ary": _x(2, 3, 4)}),
    _case("flip-(2,3,4)", np.flip, {"m": T234, "axis": (0, 1)}, {"m": _x(2, 3, 4)}),
    _case("fliplr-(3,4)", np.fliplr, {"m": M34}, {"m": _x(3, 4)}),
    _case("flipud-(3,4)", np.flipud, {"m": M34}, {"m": _x(3, 4)}),
    _case("roll-(3,4)", np.roll, {"a": M34, "shift": (1, -1), "axis": (0, 1)}, {"a": _x(3, 4)}),
    _case("rot90-(2,3,4)", np.rot90, {"m": T234, "k": 3, "axes": (2, 1)}, {"m": _x(2, 3, 4)}),
    _case("tile-(3,4)", np.tile, {"A": M34, "reps": (2, 1, 2)}, {"A": _x(3, 4)}),
    _case("repeat-(3,4)", np.repeat, {"a": M34, "repeats": [2, 0, 1], "axis": 0}, {"a": _x(3, 4)}),
    _case("pad-(3,4)-constant", np.pad, {"array": M34, "pad_width": 1, "mode": "constant", "constant_values": 2.0},
         {"array": _x(3, 4)}),
    _case("pad-(3,4)-reflect", np.pad, {"array": M34, "pad_width": (2, 1), "mode": "reflect"}, {"array": _x(3, 4)}),
    _case("tril-(3,4)", np.tril, {"m": M34, "k": -1}, {"m": _x(3, 4)}),
    _case("triu-(3,4)", np.triu, {"m": M34, "k": 1}, {"m": _x(3, 4)}),
    _case("diag-(4,)", np.diag, {"v": V4, "k": 1}, {"v": _x(4)}),
    _case("diag-(3,4)", np.diag, {"v": M34, "k": -1}, {"v": _x(3, 4)}),
    _case("diagonal-(2,3,4)", np.diagonal, {"a": T234, "offset": 1, "axis1": 2, "axis2": 1}, {"a": _x(2, 3, 4)}),
    _case("take-(3,4)", np.take, {"a": M34, "indices": [3, 3, 0], "axis": 1}, {"a": _x(3, 4)}),
    _case("take_along_axis-(3,4)", np.take_along_axis, {"arr": M34, "indices": ORDER, "axis": 1}, {"arr": _x(3, 4)}),
    _case("sort-(3,4)-axis0", np.sort, {"a": M34, "axis": 0}, {"a": _x(3, 4)}),
    _case("sort-(3,4)-axis-None", np.sort, {"a": M34, "axis": None}, {"a": _x(3, 4)}),
    _case("partition-(3,4)-axis1", np.partition, {"a": M34, "kth": 2, "axis": 1}, {"a": _x(3, 4)}),
    _case("partition-(3,4)-axis-None", np.partition, {"a": M34, "kth": (1, 7), "axis": None}, {"a": _x(3, 4)}),
    _case("append-(3,4)-axis-None", np.append, {"arr": M34, "values": V4, "axis": None},
          {"arr": _x(3, 4), "values": _x(4)}),
    _case("append-(3,4)-axis1", np.append, {"arr": M34, "values": M32, "axis": 1},
          {"arr": _x(3, 4), "values": _x(3, 2)}),
    _case("insert-(3,4)-sequence", np.insert, {"arr": M34, "obj": [0, 2, 2], "values": V4, "axis": 0},
          {"arr": _x(3, 4), "values": _x(4)}),
    _case("insert-(3,4)-flat", np.insert, {"arr": M34, "obj": slice(1, 3), "values": _x(2), "axis": None},
          {"arr": _x(3, 4), "values": _x(2)}),
    _case("delete-(3,4)-axis0", np.delete, {"arr": M34, "obj": [0, 2], "axis": 0}, {"arr": _x(3, 4)}),
    _case("delete-(3,4)-flat", np.delete, {"arr": M34, "obj": 5, "axis": None}, {"arr": _x(3, 4)}),
]


@pytest.mark.parametrize("fn, inputs, tangents", JVP_CASES)
def test_jvp(fn, inputs, tangents):
    check_jvp_rules(fn, inputs, tangents)


@pytest.mark.parametrize("fn", [np.atleast_1d, np.atleast_2d, np.atleast_3d], ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("arys", [(S,), (V4,), (M34,), (V4, M34, T234)], ids=["scalar", "(4,)", "(3,4)", "three"])
def test_jvp_atleast(fn, arys):
    """Variadic: `check_jvp_rules` would pass the tuple as one array, so the rule is called here."""
    tangents = _like(*arys)
    eps = 1e-6
    plus = fn(*(a + eps * t for a, t in zip(arys, tangents)))
    minus = fn(*(a - eps * t for a, t in zip(arys, tangents)))
    actual = rules.lookup(fn).jvps["arys"].fn(arys=arys, arys_dot=tangents)
    for got, p, m in zip(*(_pieces(v, len(arys)) for v in (actual, plus, minus))):
        np.testing.assert_allclose(got, (p - m) / (2 * eps), rtol=1e-6, atol=1e-8)


def _pieces(value, n):
    return [value] if n == 1 else list(value)


def test_jvp_of_a_list_with_an_inactive_item_uses_zeros():
    rule = rules.lookup(np.concatenate).jvps["arrays"]
    t = _x(5)
    out = rule.fn(arrays=[V5, V4], arrays_dot=[t, None], axis=0)
    np.testing.assert_array_equal(out, np.concatenate([t, np.zeros(4)]))


# --- VJP rules keep float32 ----------------------------------------------------------------------

def call_vjp_rule(fn, param, inputs, g):
    """Apply the VJP rule of primitive `fn` for `param` to cotangent `g`, given all inputs by name."""
    prim = rules.lookup(fn)
    rule = prim.vjps[param]
    values = {"g": g, "y": _call(prim, inputs)}
    for read in rule.reads:
        if read.endswith("_shape"):
            values[read] = np.shape(inputs[read[:-6]])
        elif read.endswith("_meta"):
            values[read] = meta(inputs[read[:-5]])
        elif read in inputs:
            values[read] = inputs[read]
    return rule.fn(**{read: values[read] for read in rule.reads})


def _call(prim, inputs):
    positional = [inputs[p] for p in prim.params if p not in prim.defaults and p != prim.variadic]
    keywords = {p: inputs[p] for p in prim.params if p in prim.defaults and p in inputs}
    return prim.fn(*positional, *inputs.get(prim.variadic, ()), **keywords)


F32 = _x(3, 4).astype(np.float32)
F32B = _x(3, 4).astype(np.float32)
DTYPE_CASES = [
    _case("astype-float64-to-float32", np.ndarray.astype, {"a": F32, "dtype": np.float64}, "a"),
    _case("getitem-duplicates", operator.getitem, {"a": F32, "index": (DUPLICATES[:3], slice(None))}, "a"),
    _case("reshape", np.reshape, {"a": F32, "shape": (12,)}, "a"),
    _case("broadcast_to", np.broadcast_to, {"array": F32, "shape": (2, 3, 4)}, "array"),
    _case("concatenate", np.concatenate, {"arrays": [F32, F32B], "axis": 1}, "arrays"),
    _case("stack", np.stack, {"arrays": [F32, F32B], "axis": 0}, "arrays"),
    _case("column_stack", np.column_stack, {"tup": [F32, F32B[:, 0]]}, "tup"),
    _case("split", np.split, {"ary": F32, "indices_or_sections": 2, "axis": 1}, "ary"),
    _case("tile", np.tile, {"A": F32, "reps": (2, 2)}, "A"),
    _case("repeat-counts", np.repeat, {"a": F32, "repeats": [1, 2, 0], "axis": 0}, "a"),
    _case("repeat-scalar", np.repeat, {"a": F32, "repeats": 2, "axis": None}, "a"),
    _case("pad-constant", np.pad, {"array": F32, "pad_width": 1, "mode": "constant"}, "array"),
    _case("pad-wrap", np.pad, {"array": F32, "pad_width": 2, "mode": "wrap"}, "array"),
    _case("tril-broadcast", np.tril, {"m": F32[0], "k": 0}, "m"),
    _case("diag-matrix", np.diag, {"v": F32, "k": 1}, "v"),
    _case("diagonal", np.diagonal, {"a": F32, "offset": 0, "axis1": 1, "axis2": 0}, "a"),
    _case("take", np.take, {"a": F32, "indices": DUPLICATES, "axis": None}, "a"),
    _case("take_along_axis", np.take_along_axis, {"arr": F32, "indices": ORDER, "axis": 1}, "arr"),
    _case("sort", np.sort, {"a": F32, "axis": 0}, "a"),
    _case("sort-axis-None", np.sort, {"a": F32, "axis": None}, "a"),
    _case("partition", np.partition, {"a": F32, "kth": 1, "axis": 0}, "a"),
    _case("append-arr", np.append, {"arr": F32, "values": F32B, "axis": 0}, "arr"),
    _case("append-values", np.append, {"arr": F32, "values": F32B, "axis": None}, "values"),
    _case("insert-arr", np.insert, {"arr": F32, "obj": [1, 1], "values": F32B[:, :1], "axis": 1}, "arr"),
    _case("insert-values", np.insert, {"arr": F32, "obj": [1, 1], "values": F32B[:, :1], "axis": 1}, "values"),
    _case("delete", np.delete, {"arr": F32, "obj": 2, "axis": 1}, "arr"),
]


@pytest.mark.parametrize("fn, inputs, param", DTYPE_CASES)
def test_vjp_rule_keeps_float32(fn, inputs, param):
    """The rule's result is float32 for float32 inputs, and agrees with the float64 result."""
    g32 = _random_like(_call(rules.lookup(fn), inputs))
    got32 = call_vjp_rule(fn, param, inputs, g32)
    got64 = call_vjp_rule(fn, param, _to_float64(inputs), _to_float64(g32))
    for a32, a64 in zip(_as_list(got32), _as_list(got64)):
        assert a32.dtype == np.float32
        assert a64.dtype == np.float64
        np.testing.assert_allclose(a32, a64, rtol=1e-5, atol=1e-6)


def _random_like(y):
    if isinstance(y, list):
        return [_random_like(piece) for piece in y]
    return _rng.standard_normal(np.shape(y)).astype(np.float32)


def _to_float64(value):
    if isinstance(value, dict):
        return {k: _to_float64(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_float64(v) for v in value]
    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        return value.astype(np.float64)
    return value


def _as_list(value):
    return value if isinstance(value, list) else [value]


# --- list results: the cotangent of unused pieces is zero ----------------------------------------

G1, G2 = _x(3, 2), _x(3, 2)


@pytest.mark.parametrize("g, middle", [
    (Cotree({1: G1}), G1),
    (Cotree({-2: G1}), G1),
    (Cotree({1: G1, -2: G2}), G1 + G2),
    ([None, G1, None], G1),
    ((None, G1, None), G1),
], ids=["cotree", "cotree-negative-key", "cotree-two-keys-one-piece", "list-with-none", "tuple-with-none"])
def test_split_vjp_fills_unused_pieces_with_zeros(g, middle):
    inputs = {"ary": M34, "indices_or_sections": [1, 3], "axis": 1}
    expected = np.zeros((3, 4))
    expected[:, 1:3] = middle
    np.testing.assert_array_equal(call_vjp_rule(np.split, "ary", inputs, g), expected)


def _joined_with_constant_lists(S):
    """A list written out of numbers among the joined items (a survival curve's `np.concatenate([[1.0], S])`):
    its tangent is `[None]`, zeros in forward mode (the jvp raised a TypeError)."""
    a = np.diff(np.concatenate([[1.0], S])) ** 2
    b = np.stack([[0.0, 1.0, 2.0], S]) * S
    c = np.vstack([[0.0, 0.5, 0.0], S, (S[0], 1.0, S[2])])
    d = np.hstack(([2.0], S, [3.0, S[1]]))
    return np.sum(a) + np.sum(b ** 2) + np.sum(np.tanh(c)) + np.sum(d ** 3)


def test_joining_lists_written_out_of_numbers_in_every_mode():
    from modes import check_modes
    check_modes(_joined_with_constant_lists, np.array([0.3, 0.5, 0.9]))

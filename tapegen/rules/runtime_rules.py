"""The helpers generated gradient code calls, as primitives with rules: gradient code is differentiable.

A gradient of a gradient (Hessian-vector products, MAML, third derivatives)
differentiates the generated gradient code itself. That code calls runtime
helpers (`unbroadcast`, `unreduce`, `conform`, ...) and rules called by name
(`matmul_vjp_x1`, `guarded_mul`, ...); this table declares them, with a VJP
and a JVP rule for each argument. Every rule here is one expression using
only NumPy primitives and helpers declared here, so the code it generates is
differentiable again (third order and beyond).

Most helpers are linear in their cotangent argument (named `ct` here, since
`g` means the cotangent of the helper's own output in a rule). The VJP of a
helper with respect to `ct` is then the transpose: `unbroadcast` transposes
to `np.broadcast_to`, the matmul cotangent rules transpose to `np.matmul`
itself. A helper's dependence on a value only through its shape or its
comparisons (`conform`'s `x`, `broadcast_like`'s `like`) has derivative zero: its
JVP rule returns None (no contribution) and its VJP rule a zero cotangent.

Also here: `zero_tangent`, `add_tangents`, `is_not_none`, `tape_pop`,
`copy_region` and `own_tangent`, helpers that forward-mode code and differentiable gradient
code use. Reverse mode sees `v = tape_pop(tape, v)` as an in-place update of
the list `tape` (its second output): the popped value's cotangent goes back
into the list's at the position it was popped from, and the backward pass
re-appends the value.
"""
import inspect

import numpy as np

from ..errors import TapegenError
from ..runtime import Cotree, add_cotangents, as_cotree, balanced_eq, conform, entries, safe_div, seed, unbroadcast
from ..runtime import unindex, unreduce, zeros_like_tree
from .elementwise import (broadcast_like, clip_inside, conj_sign, guarded_div, guarded_mul, kink_div, log_or_zero,
                          zero_safe_div, zero_safe_mul)
from .elementwise import angle_scale, fmax_share, fmin_share, real_like, select_taken, tie_split
from .fft import fft_axes, fft_dual, fft_fit, fft_shape, irfft_weights
from .linalg import dot_vjp_a, dot_vjp_b, linalg_mT, matmul_vjp_x1, matmul_vjp_x2
from .linalg import _gap_inverse, _safe_reciprocal, norm_axes, norm_direction, norm_direction_tangent, norm_is_matrix
from .linalg import linalg_adjugate, linalg_adjugate_tangent
from . import linalg
from .linalg import einsum_cross, einsum_first_cotangent, einsum_first_tangent, einsum_jvp, einsum_tangent_cross
from .linalg import einsum_vjp
from .shape import cotangent_field, field_cotangent, reblock, unblock
from .language import as_pairs, normal_key, pairs_cotangent, replaced, spread, unspread
from .language import gathered, item_range, shifted, summed_repeats, tiled
from .language import array_rows, item_cotangent, keyed, keys_outside, keys_within, make_dict_vjp, make_list_vjp
from .language import assign_jvp, assign_vjp, one_item, without_item
from .language import record_cotangent, record_items, zero_region
from .linalg import inner_vjp_a, inner_vjp_b, kron_vjp_a, kron_vjp_b, tensordot_vjp_a, tensordot_vjp_b, trace_vjp
from .reductions import centered, cumsum_vjp, diff_vjp, extremum_share, nan_count, ptp_share, reduced_size
from .shape import rollaxis_destination, transpose_inverse, undiagonal, unpad, unrepeat, unsort, untake
from .shape import column_stack_vjp, concatenate_vjp, dstack_vjp, hstack_vjp, piece_cotangents, stack_vjp
from .shape import untake_along_axis, untile, vstack_vjp
from .shape import append_index, delete_cotangent, insert_index, insert_values_cotangent, partition_source
from .table import RuleTable, parameter_names

table = RuleTable("runtime")


def zero_tangent(x):
    """A zero shaped like `x` (zeros item by item in a container; None stays None)."""
    if x is None:
        return None
    if isinstance(x, dict):
        return _copied_dict(x, ((k, zero_tangent(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return type(x)(zero_tangent(v) for v in x)
    if isinstance(x, float):
        return 0.0
    return np.zeros_like(x)


def _copied_dict(d, items):
    """A dict of `d`'s class holding `items` (a defaultdict keeps its factory)."""
    if hasattr(d, "default_factory"):
        new = d.copy()
        new.update(items)
        return new
    return type(d)(items)


def float_zeros(x):
    """`zero_tangent(x)` in floats: an integer's zeros are floats (where a linear map's pullback is taken)."""
    if isinstance(x, (dict, list, tuple)):
        return type(x)(float_zeros(v) for v in x) if not isinstance(x, dict) else \
            type(x)((k, float_zeros(v)) for k, v in x.items())
    if isinstance(x, (bool, int, np.integer, np.bool_)) or isinstance(x, np.ndarray) and x.dtype.kind in "biu":
        return np.zeros(np.shape(x)) if np.ndim(x) else 0.0
    return zero_tangent(x)


def zero_cotangent(x):
    """A zero cotangent for `x`: for a container, an empty Cotree (a plain tuple or list would join, not add)."""
    return Cotree() if isinstance(x, (dict, list, tuple)) else zero_tangent(x)


def add_tangents(*parts):
    """Add tangent contributions; tuples and lists (several outputs) item by item, dicts (a list of dicts
    joined) key by key; None is zero."""
    total = parts[0]
    for part in parts[1:]:
        if isinstance(total, (tuple, list)) and isinstance(part, (tuple, list)):
            total = type(total)(add_tangents(a, b) for a, b in zip(total, part))
        elif isinstance(total, dict) and isinstance(part, dict):
            added = {key: add_tangents(total.get(key), part.get(key)) for key in {**total, **part}}
            try:  # (scipy's OdeResult, a dict whose items are attributes too)
                total = added if type(total) is dict else type(total)(added)
            except TypeError:  # (a defaultdict's first argument is its factory)
                total = added
        else:
            total = add_cotangents(total, part)
    return total


def own_tangent(fn, primals, tangents):
    """The output tangent of `fn` from its own JVP, `fn.jvp(primals, tangents) -> (output, tangent)`.

    `fn` is a `custom_jvp`, or a checkpointed segment (`tapegen.checkpoint` gives it a `jvp`
    pushing the tangent through the segment's own code).
    """
    return fn.jvp(tuple(primals), tuple(tangents))[1]


def is_not_none(x):
    """`x is not None`, as a call (gradient code asks it of cotangents that may not exist)."""
    return x is not None


def tape_pop(tape, like):
    """`tape.pop()` restoring `like` (a var, or the array a region of it is written into) in gradient code.

    Naming what the popped value restores tells forward mode whether it carries
    a tangent: the tape itself holds values that do and values that do not.
    """
    return tape.pop()


def copy_region(a, index):
    """A copy of `a[index]`: what gradient code saves before `a[index] = ...` overwrites it."""
    region = a[index]
    return np.array(region, copy=True) if isinstance(region, np.ndarray) else region


def unconform(ct, like):
    """The transpose of `conform(like, x)`: `ct`, shaped like `x`, summed back to the shape of `like`."""
    if like is None or ct is None:
        return None
    if isinstance(like, (dict, list, tuple)):  # a Cotree: cotangents of containers add item by item (not `+`)
        items = like.items() if isinstance(like, dict) else enumerate(like)
        return Cotree((k, unconform(item_cotangent(ct, k), v)) for k, v in items)
    out = unbroadcast(ct, np.shape(like))
    dtype = getattr(like, "dtype", None)
    return out.astype(dtype) if dtype is not None and getattr(out, "dtype", dtype) != dtype else out


for _fn, _signature in ((seed, "out"), (reduced_size, "a_shape, axis"), (balanced_eq, "a, extremum, axis, keepdims"),
                        (is_not_none, "x"), (zero_tangent, "x"), (float_zeros, "x"), (zero_cotangent, "x"),
                        (extremum_share, "a, extremum, axis, keepdims"),
                        (ptp_share, "a, axis"), (nan_count, "a, axis"), (clip_inside, "a, a_min, a_max"),
                        (transpose_inverse, "axes"), (rollaxis_destination, "ndim, axis, start"),
                        (select_taken, "condlist"), (partition_source, "a, out, axis"),
                        (append_index, "arr_shape, axis, first"), (insert_index, "arr_shape, obj, values, axis"),
                        (fft_axes, "ndim, s, axes"), (fft_shape, "a_shape, s, axes"), (fft_dual, "norm"), (angle_scale, "deg"),
                        (irfft_weights, "a_shape, s, axes"), (norm_axes, "x_shape, ord, axis"),
                        (norm_is_matrix, "x_shape, ord, axis"),
                        *(((linalg.vector_norm_axes, "x_shape, axis"), (linalg.matrix_norm_axes, "x_shape"))
                          if hasattr(linalg, "vector_norm_axes") else ())):
    table.nondiff(_fn, _signature, spelling=_fn.__name__)  # constant, or piecewise constant (masks, signs)
ZERO_TANGENT = table.primitives[zero_tangent]


def output_cotangent(cotangent, like):
    """The cotangent of a custom rule's output `like` as its bwd takes it: shaped like `like` item by item (a
    tuple for a tuple, zeros for an item gradient code holds none for), not the sparse Cotree (a dict keyed by
    position) generated code adds up, which `g1, g2 = g` would unpack into its keys."""
    if isinstance(like, dict):
        parts = dict(entries(cotangent))
        return {key: output_cotangent(parts.get(key), value) for key, value in like.items()}
    if isinstance(like, (list, tuple)) and (isinstance(cotangent, dict) or not all(  # a list of numbers: an
            isinstance(item, (int, float, complex, np.number)) for item in like)):  # array, unless held sparse
        parts = dict(entries(cotangent))
        items = [output_cotangent(parts.get(k), item) for k, item in enumerate(like)]
        return items if isinstance(like, list) else tuple(items)
    return zero_tangent(like) if cotangent is None else cotangent


table.op(output_cotangent, "cotangent, like", spelling="output_cotangent", inert=("like",))


@table.vjp(output_cotangent, "cotangent")
def output_cotangent_vjp(g):
    return g


@table.jvp(output_cotangent, "cotangent")
def output_cotangent_jvp(cotangent_dot, like):
    return output_cotangent(cotangent_dot, like)


table.op(add_tangents, "*parts", spelling="add_tangents")  # linear: tangent code differentiated again
table.op(tape_pop, "tape, like", spelling="tape_pop", inert=("like",))  # forward.py mirrors it on the tangent tape


@table.vjp(tape_pop, "tape")
def tape_pop_vjp_tape(tape, g):
    return popped_cotangent(tape, g)


def popped_cotangent(tape, g):
    """The list's cotangent before the pop: after-pop cotangent, plus the value's at its old position."""
    g_value, g_rest = g if isinstance(g, tuple) else (g, None)
    result = Cotree(g_rest) if isinstance(g_rest, dict) else Cotree(enumerate(g_rest or ()))
    if g_value is not None:
        result[len(tape)] = g_value
    return result


def pushed_cotangent(tape_meta, ct_meta, g):
    """The transpose of `popped_cotangent`: a cotangent of the list before the pop, split into the
    popped value's and the rest's, in the form the popped cotangent had (`ct_meta`: a pair or one)."""
    value, rest = None, Cotree()
    for key, item in entries(g):
        if key == tape_meta[1]:
            value = item
        else:
            rest[key] = item
    return (value, rest) if ct_meta[0] is tuple else value


table.op(copy_region, "a, index", spelling="copy_region")
table.op(zero_region, "ct, index", spelling="zero_region")
table.op(unbroadcast, "ct, to_shape", spelling="unbroadcast")
table.op(unreduce, "ct, a_shape, axis, keepdims", spelling="unreduce")
table.op(conform, "ct, x", spelling="conform")
table.op(unconform, "ct, like", spelling="unconform")
table.op(add_cotangents, "a, b", spelling="add_cotangents")
table.op(unindex, "ct, a_meta, index", spelling="unindex")
for _fn in (guarded_mul, guarded_div, kink_div, safe_div):
    table.op(_fn, "ct, d", spelling=_fn.__name__)
table.op(broadcast_like, "t, like", spelling="broadcast_like")
table.op(tie_split, "ct, wins, tie, other_active", spelling="tie_split")
for _fn in (fmax_share, fmin_share):
    table.op(_fn, "ct, mine, other, other_active", spelling=_fn.__name__)
table.op(log_or_zero, "x", spelling="log_or_zero")
table.op(conj_sign, "x", spelling="conj_sign")
table.op(norm_direction, "x, ord, axes, matrix", spelling="norm_direction", inert=("ord", "axes", "matrix"))
# the norm's Hessian times a vector: no rules of its own, so third derivatives of a norm are a NoRuleError
table.op(norm_direction_tangent, "x, ord, axes, matrix, t", spelling="norm_direction_tangent",
         inert=("ord", "axes", "matrix"))
table.op(linalg_adjugate, "a", spelling="linalg_adjugate")  # det's gradient: its rules do not go through the
# SVD's (wrong where singular values repeat: a rotation, the identity); its derivative has rules along t only,
# so third derivatives of a determinant are a NoRuleError
table.op(linalg_adjugate_tangent, "a, t", spelling="linalg_adjugate_tangent")
table.op(linalg_mT, "x", spelling="linalg_mT")
table.op(matmul_vjp_x1, "x1_shape, x2, ct", spelling="matmul_vjp_x1")
table.op(matmul_vjp_x2, "x1, x2_shape, ct", spelling="matmul_vjp_x2")
table.op(dot_vjp_a, "a_shape, b, ct", spelling="dot_vjp_a")
table.op(dot_vjp_b, "a, b_shape, ct", spelling="dot_vjp_b")
for _fn, _signature in ((inner_vjp_a, "a_shape, b, ct"), (inner_vjp_b, "a, b_shape, ct"),
                        (kron_vjp_a, "a_shape, b, ct"), (kron_vjp_b, "a, b_shape, ct"),
                        (tensordot_vjp_a, "a_shape, b, axes, ct"), (tensordot_vjp_b, "a, b_shape, axes, ct"),
                        (centered, "a, axis"), (cumsum_vjp, "a_shape, axis, ct"), (diff_vjp, "n, axis, ct"),
                        (trace_vjp, "a_meta, offset, axis1, axis2, ct"), (untile, "ct, A_shape, reps"),
                        (unrepeat, "ct, a_shape, repeats, axis"), (unpad, "ct, array_shape, pad_width, mode"),
                        (untake, "ct, a_shape, indices, axis"), (untake_along_axis, "ct, arr_shape, indices, axis"),
                        (unsort, "ct, a, axis"), (undiagonal, "ct, a_shape, offset, axis1, axis2"),
                        (real_like, "t, like"), (fft_fit, "x, shape"),
                        (insert_values_cotangent, "ct, arr_shape, obj, values_shape, axis"),
                        (delete_cotangent, "ct, arr_shape, obj, axis")):
    table.op(_fn, _signature, spelling=_fn.__name__)


# --- reshaping cotangents: unbroadcast, unreduce, conform, unindex --------------------------------

@table.vjp(copy_region, "a")
def copy_region_vjp(a_meta, index, g):
    return unindex(g, a_meta, index)


@table.jvp(copy_region, "a")
def copy_region_jvp(a_dot, index):
    return copy_region(a_dot, index)


@table.vjp(zero_region, "ct")
def zero_region_vjp(index, g):
    return zero_region(g, index)


@table.jvp(zero_region, "ct")
def zero_region_jvp(ct_dot, index):
    return zero_region(ct_dot, index)


@table.vjp(unbroadcast, "ct")
def unbroadcast_vjp(ct_shape, g):
    return np.broadcast_to(g, ct_shape)


@table.jvp(unbroadcast, "ct")
def unbroadcast_jvp(ct_dot, to_shape):
    return unbroadcast(ct_dot, to_shape)


@table.vjp(unreduce, "ct")
def unreduce_vjp(ct_shape, axis, keepdims, g):
    return np.reshape(np.sum(g, axis=axis, keepdims=keepdims), ct_shape)


@table.jvp(unreduce, "ct")
def unreduce_jvp(ct_dot, a_shape, axis, keepdims):
    return unreduce(ct_dot, a_shape, axis, keepdims)


@table.vjp(conform, "ct")
def conform_vjp_ct(ct, g):
    return unconform(g, ct)


@table.jvp(conform, "ct")
def conform_jvp_ct(ct_dot, x):
    return conform(ct_dot, x)


@table.vjp(conform, "x")
def conform_vjp_x(x):
    return zero_cotangent(x)


@table.jvp(conform, "x")
def conform_jvp_x(x_dot):
    return None


@table.vjp(unconform, "ct")
def unconform_vjp_ct(ct, g):
    return conform(g, ct)


@table.jvp(unconform, "ct")
def unconform_jvp_ct(ct_dot, like):
    return unconform(ct_dot, like)


@table.vjp(unconform, "like")
def unconform_vjp_like(like):
    return zero_cotangent(like)


@table.jvp(unconform, "like")
def unconform_jvp_like(like_dot):
    return None


@table.vjp(unindex, "ct", partial=True)
def unindex_vjp(a_meta, index, g):
    return cotangent_at(g, a_meta, index)


@table.jvp(unindex, "ct")
def unindex_jvp(ct_dot, a_meta, index):
    return unindex(ct_dot, a_meta, index)


@table.vjp(add_cotangents, "a", partial=True)
def add_cotangents_vjp_a(a, g):
    return summand_cotangent(g, a)


@table.vjp(add_cotangents, "b", partial=True)
def add_cotangents_vjp_b(b, g):
    return summand_cotangent(g, b)


def summand_cotangent(ct, a):
    """The cotangent of `a` in `add_cotangents(a, b)`, from `ct`, the sum's: None where `a` is None (a zero,
    no derivative); for a container's cotangent (a Cotree, dict, list or tuple), ct's items at a's keys;
    else ct unbroadcast to a's shape. (A plain unbroadcast to shape(None) == () broke grad-of-grad of a
    loop accumulating into a list's cotangent.)"""
    if a is None or ct is None:
        return None
    if isinstance(a, (dict, list, tuple)):
        keys = a.keys() if isinstance(a, dict) else range(len(a))
        parts = ((k, ct.get(k) if isinstance(ct, dict) else ct[k] if k < len(ct) else None) for k in keys)
        return Cotree((k, v) for k, v in parts if v is not None)
    return unbroadcast(ct, np.shape(a))


table.op(summand_cotangent, "ct, a", spelling="summand_cotangent", inert=("a",))


@table.vjp(summand_cotangent, "ct", partial=True)
def summand_cotangent_vjp(ct_shape, a, g):
    """The transpose: a container's items as they are (zeros elsewhere), an array's broadcast back."""
    if a is None or g is None:
        return None
    return g if isinstance(a, (dict, list, tuple)) else np.broadcast_to(g, ct_shape)


@table.jvp(summand_cotangent, "ct")
def summand_cotangent_jvp(ct_dot, a):
    return summand_cotangent(ct_dot, a)


@table.vjp(add_tangents, "parts")
def add_tangents_vjp(parts, g):
    return [summand_cotangent(g, part) for part in parts]


@table.jvp(add_tangents, "parts")
def add_tangents_jvp(parts_dot, y):
    """The sum of the parts' tangents (None is zero); zeros shaped like the sum if none has one."""
    moving = [part for part in parts_dot if part is not None]
    return add_tangents(*moving) if moving else zero_tangent(y)


@table.jvp(add_cotangents, "a")
@table.jvp(add_cotangents, "b")
def add_cotangents_jvp(a_dot, b_dot, y):
    """None + None is None; a sum that is an array has a zero tangent shaped like it, which later rules
    multiply (`g_h = add_cotangents(None, item)` of a constant item, then `g_h * (1 - t * t)`)."""
    return add_cotangents(a_dot, b_dot) if a_dot is not None or b_dot is not None else zero_tangent(y)


# --- products and quotients guarded at zeros -------------------------------------------------------
# Each is zero wherever its cotangent argument `ct` is, whatever `d` holds (NaN in np.where's untaken
# branch): so is its derivative in `d`, a guard the rules keep (zero_safe_*) even where their own
# cotangent `g` cannot hold such zeros, or a second derivative picks up 0 * NaN.

@table.vjp(guarded_mul, "ct")
def guarded_mul_vjp_ct(ct_shape, d, g):
    return unbroadcast(guarded_mul(g, d), ct_shape)


@table.vjp(guarded_mul, "d")
def guarded_mul_vjp_d(ct, d_shape, g):
    return unbroadcast(zero_safe_mul(ct, g), d_shape)


@table.jvp(guarded_mul, "ct")
def guarded_mul_jvp_ct(ct_dot, d):
    return guarded_mul(ct_dot, d)


@table.jvp(guarded_mul, "d")
def guarded_mul_jvp_d(ct, d_dot):
    return zero_safe_mul(ct, d_dot)


@table.vjp(guarded_div, "ct")
def guarded_div_vjp_ct(ct_shape, d, g):
    return unbroadcast(guarded_div(g, d), ct_shape)


@table.vjp(guarded_div, "d")
def guarded_div_vjp_d(d, d_shape, y, g):
    return unbroadcast(-zero_safe_div(zero_safe_mul(y, g), d), d_shape)


@table.jvp(guarded_div, "ct")
def guarded_div_jvp_ct(ct_dot, d):
    return guarded_div(ct_dot, d)


@table.jvp(guarded_div, "d")
def guarded_div_jvp_d(d, d_dot, y):
    return -zero_safe_div(zero_safe_mul(y, d_dot), d)


@table.vjp(kink_div, "ct")
def kink_div_vjp_ct(ct_shape, d, g):
    return unbroadcast(kink_div(g, d), ct_shape)


@table.vjp(kink_div, "d")
def kink_div_vjp_d(d, d_shape, y, g):
    return unbroadcast(-kink_div(zero_safe_mul(y, g), d), d_shape)


@table.jvp(kink_div, "ct")
def kink_div_jvp_ct(ct_dot, d):
    return kink_div(ct_dot, d)


@table.jvp(kink_div, "d")
def kink_div_jvp_d(d, d_dot, y):
    return -kink_div(zero_safe_mul(y, d_dot), d)


@table.vjp(safe_div, "ct")
def safe_div_vjp_ct(ct_shape, d, g):
    return unbroadcast(safe_div(g, d), ct_shape)


@table.vjp(safe_div, "d")
def safe_div_vjp_d(d, d_shape, y, g):
    return unbroadcast(-safe_div(zero_safe_mul(y, g), d), d_shape)


@table.jvp(safe_div, "ct")
def safe_div_jvp_ct(ct_dot, d):
    return safe_div(ct_dot, d)


@table.jvp(safe_div, "d")
def safe_div_jvp_d(d, d_dot, y):
    return -safe_div(zero_safe_mul(y, d_dot), d)


# --- elementwise helpers ---------------------------------------------------------------------------

def unshared(x, shown):
    """A tangent `x` that is not the memory of `shown`, an input's tangent showing an array whose tangent is written
    in place later (`old_dot = t_dot` of `old = X[1] * 1.0`, then `X_dot[1] = ...`): a copy where it is (NumPy's
    `old` is a new array, which that write does not change)."""
    if isinstance(x, np.ndarray) and isinstance(shown, np.ndarray) and np.may_share_memory(x, shown):
        return x.copy()
    return x


table.op(unshared, "x, shown", spelling="unshared", inert=("shown",))
table.vjp(unshared, "x")(assign_vjp)  # (the value itself, as an assignment's)
table.jvp(unshared, "x")(assign_jvp)


@table.vjp(broadcast_like, "t")
def broadcast_like_vjp(t_shape, g):
    return unbroadcast(g, t_shape)


@table.jvp(broadcast_like, "t")
def broadcast_like_jvp(t_dot, like):
    return broadcast_like(t_dot, like)


@table.vjp(broadcast_like, "like")
def broadcast_like_vjp_like(like):
    return zero_tangent(like)


@table.jvp(broadcast_like, "like")
def broadcast_like_jvp_like(like_dot):
    return None


@table.vjp(tie_split, "ct")
def tie_split_vjp(ct_shape, wins, tie, other_active, g):
    return unbroadcast(tie_split(g, wins, tie, other_active), ct_shape)


@table.jvp(tie_split, "ct")
def tie_split_jvp(ct_dot, wins, tie, other_active):
    return tie_split(ct_dot, wins, tie, other_active)


@table.vjp(fmax_share, "ct")
def fmax_share_vjp(ct_shape, mine, other, other_active, g):
    return unbroadcast(fmax_share(g, mine, other, other_active), ct_shape)


@table.jvp(fmax_share, "ct")
def fmax_share_jvp(ct_dot, mine, other, other_active):
    return fmax_share(ct_dot, mine, other, other_active)


@table.vjp(fmin_share, "ct")
def fmin_share_vjp(ct_shape, mine, other, other_active, g):
    return unbroadcast(fmin_share(g, mine, other, other_active), ct_shape)


@table.jvp(fmin_share, "ct")
def fmin_share_jvp(ct_dot, mine, other, other_active):
    return fmin_share(ct_dot, mine, other, other_active)


@table.vjp(fmax_share, "mine")
@table.vjp(fmin_share, "mine")
def share_vjp_mine(mine):
    return zero_tangent(mine)


@table.vjp(fmax_share, "other")
@table.vjp(fmin_share, "other")
def share_vjp_other(other):
    return zero_tangent(other)


@table.jvp(fmax_share, "mine")
@table.jvp(fmin_share, "mine")
def share_jvp_mine(mine_dot):
    return None


@table.jvp(fmax_share, "other")
@table.jvp(fmin_share, "other")
def share_jvp_other(other_dot):
    return None


# conj_sign(z) = conj(z) / |z| is constant for real z (but at 0) and varies smoothly for complex z:
# d conj_sign = (conj(dz) - conj_sign(z) Re(conj_sign(z) dz)) / |z|, which is 0 for real z; 0 at z = 0.

@table.vjp(conj_sign, "x")
def conj_sign_vjp(x, g):
    return kink_div(np.conj(g) - np.real(g * conj_sign(x)) * conj_sign(x), np.abs(x))


@table.jvp(conj_sign, "x")
def conj_sign_jvp(x, x_dot):
    return kink_div(np.conj(x_dot) - conj_sign(x) * np.real(conj_sign(x) * x_dot), np.abs(x))


# einsum's cotangent rule is linear in its cotangent and multilinear in the operands: its VJP in the
# cotangent is einsum's own JVP, and its derivative in the operands (both ways) is `einsum_cross`,
# which has no rules (a third derivative is a NoRuleError). In the interleaved form the first array
# is `subscripts`, which has no rule here either: not inert, so a second derivative through it is
# a NoRuleError, never a missing term.
table.op(einsum_vjp, "subscripts, operands, optimize, ct", spelling="einsum_vjp", sequences=("operands",),
         inert=("optimize",))
table.op(einsum_cross, "subscripts, operands, optimize, ct, others", spelling="einsum_cross",
         sequences=("operands", "others"), inert=("optimize",))


@table.vjp(einsum_vjp, "ct")
def einsum_vjp_vjp_ct(subscripts, operands, optimize, g):
    return einsum_jvp(subscripts, operands, g, optimize)


@table.jvp(einsum_vjp, "ct")
def einsum_vjp_jvp_ct(subscripts, operands, optimize, ct_dot):
    tangent = einsum_vjp(subscripts, operands, optimize, ct_dot)
    return tangent  # called by name, not inlined: forward mode then adds the lists item by item


@table.vjp(einsum_vjp, "operands")
def einsum_vjp_vjp_operands(subscripts, operands, optimize, ct, g):
    return einsum_cross(subscripts, operands, optimize, ct, g)


@table.jvp(einsum_vjp, "operands")
def einsum_vjp_jvp_operands(subscripts, operands, optimize, ct, operands_dot):
    tangent = einsum_cross(subscripts, operands, optimize, ct, operands_dot)
    return tangent  # called by name, not inlined: forward mode then adds the lists item by item


# einsum's tangent rule is linear in the tangents and multilinear in the operands: its derivative in the
# tangents is itself, its VJP there einsum's own VJP; in the operands, einsum_tangent_cross (no rules: a
# third derivative is a NoRuleError) and, for the VJP, einsum_cross.
table.op(einsum_jvp, "subscripts, operands, directions, optimize", spelling="einsum_jvp",  # positional: its
         sequences=("operands", "directions"), inert=("optimize",))  # own `operands_dot` would shadow a tangent
table.op(einsum_tangent_cross, "subscripts, operands, optimize, directions, others", spelling="einsum_tangent_cross",
         sequences=("operands", "directions", "others"), inert=("optimize",))


table.nondiff(linalg.einsum_spelling, "has_output, *sublists", spelling="einsum_spelling")  # the frontend's,
table.nondiff(linalg.is_subscripts, "first", spelling="is_subscripts")  # for sublists known as the code runs
table.op(einsum_first_tangent, "subscripts, operands, optimize, subscripts_dot", spelling="einsum_first_tangent",
         sequences=("operands",), inert=("optimize",))
table.op(einsum_first_cotangent, "subscripts, operands, optimize, ct", spelling="einsum_first_cotangent",
         sequences=("operands",), inert=("optimize",))


@table.jvp(einsum_first_tangent, "subscripts_dot")
@table.jvp(einsum_first_tangent, "operands")
@table.jvp(einsum_first_tangent, "subscripts")
@table.jvp(einsum_jvp, "subscripts")  # a string (one a list gave is "varying" to the analysis) carries nothing
@table.jvp(einsum_vjp, "subscripts")
@table.jvp(einsum_first_cotangent, "ct")
@table.jvp(einsum_first_cotangent, "operands")
@table.jvp(einsum_first_cotangent, "subscripts")
def einsum_first_tangent_jvp(subscripts, y):
    derivative = einsum_first_derivative(subscripts, y)
    return derivative


@table.vjp(einsum_first_tangent, "subscripts_dot")
@table.vjp(einsum_first_tangent, "operands")
@table.vjp(einsum_first_tangent, "subscripts")
@table.vjp(einsum_jvp, "subscripts")
@table.vjp(einsum_vjp, "subscripts")
@table.vjp(einsum_first_cotangent, "ct")
@table.vjp(einsum_first_cotangent, "operands")
@table.vjp(einsum_first_cotangent, "subscripts")
def einsum_first_tangent_vjp(subscripts, g):
    derivative = einsum_first_derivative(subscripts, g)
    return derivative


def einsum_first_derivative(subscripts, value):
    """einsum_first_tangent's derivatives: none for string subscripts (its value is None, whatever moves);
    the interleaved form's first array has no second derivative here: refused, not zero."""
    if not isinstance(subscripts, str):
        raise TapegenError("tapegen has no second derivative through np.einsum's first array in the interleaved "
                           "form", hint="write the subscripts as a string: np.einsum('ij,jk->ik', a, b)")
    return None


table.nondiff(einsum_first_derivative, "subscripts, value", spelling="einsum_first_derivative")


@table.jvp(einsum_jvp, "directions")
def einsum_jvp_jvp_directions(subscripts, operands, directions_dot, optimize):
    tangent = einsum_jvp(subscripts, operands, directions_dot, optimize)
    return tangent


@table.jvp(einsum_jvp, "operands")
def einsum_jvp_jvp_operands(subscripts, operands, operands_dot, directions, optimize):
    return einsum_tangent_cross(subscripts, operands, optimize, directions, operands_dot)


@table.vjp(einsum_jvp, "directions")
def einsum_jvp_vjp_directions(subscripts, operands, optimize, g):
    return einsum_vjp(subscripts, operands, optimize, g)


@table.vjp(einsum_jvp, "operands")
def einsum_jvp_vjp_operands(subscripts, operands, directions, optimize, g):
    return einsum_cross(subscripts, operands, optimize, g, directions)


# Gradient code's own helpers, differentiated again (second order through eigh, eig and svd).
table.op(_gap_inverse, "w", spelling="_gap_inverse")
table.op(_safe_reciprocal, "s", spelling="_safe_reciprocal")
table.nondiff(linalg.phase_independent, "dependence, size", spelling="phase_independent")  # a check: no value
table.nondiff(linalg.tie_independent, "w, m", spelling="tie_independent")  # a check: no value
table.nondiff(linalg.diagonalizable, "w, v", spelling="diagonalizable")  # a check: no value
table.nondiff(linalg.free_phases, "w, a_meta", spelling="free_phases")  # a mask


@table.vjp(_gap_inverse, "w")
def gap_inverse_vjp(y, g):  # dF[i, j] = -F[i, j]^2 (dw_j - dw_i), 0 where F is
    s = y * y * g
    return np.sum(s, axis=-1) - np.sum(s, axis=-2)


@table.jvp(_gap_inverse, "w")
def gap_inverse_jvp(w_dot, y):
    return -(y * y) * (w_dot[..., None, :] - w_dot[..., :, None])


@table.vjp(_safe_reciprocal, "s")
def safe_reciprocal_vjp(y, g):
    return -g * y * y


@table.jvp(_safe_reciprocal, "s")
def safe_reciprocal_jvp(s_dot, y):
    return -s_dot * y * y


@table.vjp(norm_direction, "x")
def norm_direction_vjp(x, ord, axes, matrix, g):
    return norm_direction_tangent(x, ord, axes, matrix, g)


@table.jvp(norm_direction, "x")
def norm_direction_jvp(x, x_dot, ord, axes, matrix):
    return norm_direction_tangent(x, ord, axes, matrix, x_dot)


@table.vjp(linalg_adjugate, "a")
@table.vjp(linalg_adjugate_tangent, "t")  # (linear in t: the same map)
def linalg_adjugate_vjp(a, g):
    return linalg_adjugate_tangent(linalg_mT(a), g)


@table.jvp(linalg_adjugate, "a")
def linalg_adjugate_jvp(a, a_dot):
    return linalg_adjugate_tangent(a, a_dot)


@table.jvp(linalg_adjugate_tangent, "t")
def linalg_adjugate_tangent_jvp_t(a, t_dot):
    return linalg_adjugate_tangent(a, t_dot)


@table.vjp(log_or_zero, "x")
def log_or_zero_vjp(x, g):
    return guarded_div(g * (x > 0), np.where(x > 0, x, 1))


@table.jvp(log_or_zero, "x")
def log_or_zero_jvp(x, x_dot):
    return guarded_div(x_dot * (x > 0), np.where(x > 0, x, 1))


# --- products: the cotangent rules of bilinear ops are bilinear, and transpose to the op ----------

@table.vjp(linalg_mT, "x")
def linalg_mT_vjp(g):
    return linalg_mT(g)


@table.jvp(linalg_mT, "x")
def linalg_mT_jvp(x_dot):
    return linalg_mT(x_dot)


@table.vjp(matmul_vjp_x1, "ct")
def matmul_vjp_x1_vjp_ct(x2, g):
    return np.matmul(g, x2)


@table.vjp(matmul_vjp_x1, "x2")
def matmul_vjp_x1_vjp_x2(x2_shape, ct, g):
    return matmul_vjp_x2(g, x2_shape, ct)


@table.jvp(matmul_vjp_x1, "ct")
def matmul_vjp_x1_jvp_ct(x1_shape, x2, ct_dot):
    return matmul_vjp_x1(x1_shape, x2, ct_dot)


@table.jvp(matmul_vjp_x1, "x2")
def matmul_vjp_x1_jvp_x2(x1_shape, x2_dot, ct):
    return matmul_vjp_x1(x1_shape, x2_dot, ct)


@table.vjp(matmul_vjp_x2, "ct")
def matmul_vjp_x2_vjp_ct(x1, g):
    return np.matmul(x1, g)


@table.vjp(matmul_vjp_x2, "x1")
def matmul_vjp_x2_vjp_x1(x1_shape, ct, g):
    return matmul_vjp_x1(x1_shape, g, ct)


@table.jvp(matmul_vjp_x2, "ct")
def matmul_vjp_x2_jvp_ct(x1, x2_shape, ct_dot):
    return matmul_vjp_x2(x1, x2_shape, ct_dot)


@table.jvp(matmul_vjp_x2, "x1")
def matmul_vjp_x2_jvp_x1(x1_dot, x2_shape, ct):
    return matmul_vjp_x2(x1_dot, x2_shape, ct)


@table.vjp(dot_vjp_a, "ct")
def dot_vjp_a_vjp_ct(b, g):
    return np.dot(g, b)


@table.vjp(dot_vjp_a, "b")
def dot_vjp_a_vjp_b(b_shape, ct, g):
    return dot_vjp_b(g, b_shape, ct)


@table.jvp(dot_vjp_a, "ct")
def dot_vjp_a_jvp_ct(a_shape, b, ct_dot):
    return dot_vjp_a(a_shape, b, ct_dot)


@table.jvp(dot_vjp_a, "b")
def dot_vjp_a_jvp_b(a_shape, b_dot, ct):
    return dot_vjp_a(a_shape, b_dot, ct)


@table.vjp(dot_vjp_b, "ct")
def dot_vjp_b_vjp_ct(a, g):
    return np.dot(a, g)


@table.vjp(dot_vjp_b, "a")
def dot_vjp_b_vjp_a(a_shape, ct, g):
    return dot_vjp_a(a_shape, g, ct)


@table.jvp(dot_vjp_b, "ct")
def dot_vjp_b_jvp_ct(a, b_shape, ct_dot):
    return dot_vjp_b(a, b_shape, ct_dot)


@table.jvp(dot_vjp_b, "a")
def dot_vjp_b_jvp_a(a_dot, b_shape, ct):
    return dot_vjp_b(a_dot, b_shape, ct)


# --- the other products' cotangent rules: bilinear, transposing to the op ----------------------------

@table.vjp(inner_vjp_a, "ct")
def inner_vjp_a_vjp_ct(b, g):
    return np.inner(g, b)


@table.vjp(inner_vjp_a, "b")
def inner_vjp_a_vjp_b(b_shape, ct, g):
    return inner_vjp_b(g, b_shape, ct)


@table.jvp(inner_vjp_a, "ct")
def inner_vjp_a_jvp_ct(a_shape, b, ct_dot):
    return inner_vjp_a(a_shape, b, ct_dot)


@table.jvp(inner_vjp_a, "b")
def inner_vjp_a_jvp_b(a_shape, b_dot, ct):
    return inner_vjp_a(a_shape, b_dot, ct)


@table.vjp(inner_vjp_b, "ct")
def inner_vjp_b_vjp_ct(a, g):
    return np.inner(a, g)


@table.vjp(inner_vjp_b, "a")
def inner_vjp_b_vjp_a(a_shape, ct, g):
    return inner_vjp_a(a_shape, g, ct)


@table.jvp(inner_vjp_b, "ct")
def inner_vjp_b_jvp_ct(a, b_shape, ct_dot):
    return inner_vjp_b(a, b_shape, ct_dot)


@table.jvp(inner_vjp_b, "a")
def inner_vjp_b_jvp_a(a_dot, b_shape, ct):
    return inner_vjp_b(a_dot, b_shape, ct)


@table.vjp(kron_vjp_a, "ct")
def kron_vjp_a_vjp_ct(b, g):
    return np.kron(g, b)


@table.vjp(kron_vjp_a, "b")
def kron_vjp_a_vjp_b(b_shape, ct, g):
    return kron_vjp_b(g, b_shape, ct)


@table.jvp(kron_vjp_a, "ct")
def kron_vjp_a_jvp_ct(a_shape, b, ct_dot):
    return kron_vjp_a(a_shape, b, ct_dot)


@table.jvp(kron_vjp_a, "b")
def kron_vjp_a_jvp_b(a_shape, b_dot, ct):
    return kron_vjp_a(a_shape, b_dot, ct)


@table.vjp(kron_vjp_b, "ct")
def kron_vjp_b_vjp_ct(a, g):
    return np.kron(a, g)


@table.vjp(kron_vjp_b, "a")
def kron_vjp_b_vjp_a(a_shape, ct, g):
    return kron_vjp_a(a_shape, g, ct)


@table.jvp(kron_vjp_b, "ct")
def kron_vjp_b_jvp_ct(a, b_shape, ct_dot):
    return kron_vjp_b(a, b_shape, ct_dot)


@table.jvp(kron_vjp_b, "a")
def kron_vjp_b_jvp_a(a_dot, b_shape, ct):
    return kron_vjp_b(a_dot, b_shape, ct)


@table.vjp(tensordot_vjp_a, "ct")
def tensordot_vjp_a_vjp_ct(b, axes, g):
    return np.tensordot(g, b, axes)


@table.vjp(tensordot_vjp_a, "b")
def tensordot_vjp_a_vjp_b(b_shape, axes, ct, g):
    return tensordot_vjp_b(g, b_shape, axes, ct)


@table.jvp(tensordot_vjp_a, "ct")
def tensordot_vjp_a_jvp_ct(a_shape, b, axes, ct_dot):
    return tensordot_vjp_a(a_shape, b, axes, ct_dot)


@table.jvp(tensordot_vjp_a, "b")
def tensordot_vjp_a_jvp_b(a_shape, b_dot, axes, ct):
    return tensordot_vjp_a(a_shape, b_dot, axes, ct)


@table.vjp(tensordot_vjp_b, "ct")
def tensordot_vjp_b_vjp_ct(a, axes, g):
    return np.tensordot(a, g, axes)


@table.vjp(tensordot_vjp_b, "a")
def tensordot_vjp_b_vjp_a(a_shape, axes, ct, g):
    return tensordot_vjp_a(a_shape, g, axes, ct)


@table.jvp(tensordot_vjp_b, "ct")
def tensordot_vjp_b_jvp_ct(a, b_shape, axes, ct_dot):
    return tensordot_vjp_b(a, b_shape, axes, ct_dot)


@table.jvp(tensordot_vjp_b, "a")
def tensordot_vjp_b_jvp_a(a_dot, b_shape, axes, ct):
    return tensordot_vjp_b(a_dot, b_shape, axes, ct)


# --- cotangent rules of data movement and reductions: linear, transposing to the op -------------------

@table.vjp(centered, "a")
def centered_vjp(axis, g):
    return centered(g, axis)


@table.jvp(centered, "a")
def centered_jvp(a_dot, axis):
    return centered(a_dot, axis)


@table.vjp(cumsum_vjp, "ct")
def cumsum_vjp_vjp(axis, g):
    return np.cumsum(g, axis=axis)


@table.jvp(cumsum_vjp, "ct")
def cumsum_vjp_jvp(a_shape, axis, ct_dot):
    return cumsum_vjp(a_shape, axis, ct_dot)


@table.vjp(diff_vjp, "ct")
def diff_vjp_vjp(n, axis, g):
    return np.diff(g, n=n, axis=axis)


@table.jvp(diff_vjp, "ct")
def diff_vjp_jvp(n, axis, ct_dot):
    return diff_vjp(n, axis, ct_dot)


@table.vjp(trace_vjp, "ct")
def trace_vjp_vjp(offset, axis1, axis2, g):
    return np.trace(g, offset=offset, axis1=axis1, axis2=axis2)


@table.jvp(trace_vjp, "ct")
def trace_vjp_jvp(a_meta, offset, axis1, axis2, ct_dot):
    return trace_vjp(a_meta, offset, axis1, axis2, ct_dot)


@table.vjp(untile, "ct")
def untile_vjp(reps, g):
    return np.tile(g, reps)


@table.jvp(untile, "ct")
def untile_jvp(ct_dot, A_shape, reps):
    return untile(ct_dot, A_shape, reps)


@table.vjp(unrepeat, "ct")
def unrepeat_vjp(repeats, axis, g):
    return np.repeat(g, repeats, axis=axis)


@table.jvp(unrepeat, "ct")
def unrepeat_jvp(ct_dot, a_shape, repeats, axis):
    return unrepeat(ct_dot, a_shape, repeats, axis)


@table.vjp(unpad, "ct")
def unpad_vjp(pad_width, mode, g):
    return np.pad(g, pad_width, mode=mode)


@table.jvp(unpad, "ct")
def unpad_jvp(ct_dot, array_shape, pad_width, mode):
    return unpad(ct_dot, array_shape, pad_width, mode)


@table.vjp(untake, "ct")
def untake_vjp(indices, axis, g):
    return np.take(g, indices, axis=axis)


@table.jvp(untake, "ct")
def untake_jvp(ct_dot, a_shape, indices, axis):
    return untake(ct_dot, a_shape, indices, axis)


@table.vjp(untake_along_axis, "ct")
def untake_along_axis_vjp(indices, axis, g):
    return np.take_along_axis(g, indices, axis=axis)


@table.jvp(untake_along_axis, "ct")
def untake_along_axis_jvp(ct_dot, arr_shape, indices, axis):
    return untake_along_axis(ct_dot, arr_shape, indices, axis)


@table.vjp(unsort, "ct")
def unsort_vjp(a, axis, g):
    return np.take_along_axis(g, np.argsort(a, axis=axis), axis=axis)


@table.jvp(unsort, "ct")
def unsort_jvp(ct_dot, a, axis):
    return unsort(ct_dot, a, axis)


@table.vjp(unsort, "a")
def unsort_vjp_a(a):
    return zero_tangent(a)


@table.jvp(unsort, "a")
def unsort_jvp_a(a_dot):
    return None


@table.vjp(undiagonal, "ct")
def undiagonal_vjp(offset, axis1, axis2, g):
    return np.diagonal(g, offset=offset, axis1=axis1, axis2=axis2)


@table.jvp(undiagonal, "ct")
def undiagonal_jvp(ct_dot, a_shape, offset, axis1, axis2):
    return undiagonal(ct_dot, a_shape, offset, axis1, axis2)


@table.vjp(real_like, "t")
def real_like_vjp(g):
    return g


@table.jvp(real_like, "t")
def real_like_jvp(t_dot, like):
    return real_like(t_dot, like)


@table.vjp(fft_fit, "x")
def fft_fit_vjp(x_shape, g):
    return fft_fit(g, x_shape)


@table.jvp(fft_fit, "x")
def fft_fit_jvp(x_dot, shape):
    return fft_fit(x_dot, shape)


@table.vjp(insert_values_cotangent, "ct")
def insert_values_cotangent_vjp(arr_shape, obj, axis, g):
    return np.insert(np.zeros(arr_shape, dtype=np.result_type(g)), obj, g, axis)


@table.jvp(insert_values_cotangent, "ct")
def insert_values_cotangent_jvp(ct_dot, arr_shape, obj, values_shape, axis):
    return insert_values_cotangent(ct_dot, arr_shape, obj, values_shape, axis)


@table.vjp(delete_cotangent, "ct")
def delete_cotangent_vjp(obj, axis, g):
    return np.delete(g, obj, axis)


@table.jvp(delete_cotangent, "ct")
def delete_cotangent_jvp(ct_dot, arr_shape, obj, axis):
    return delete_cotangent(ct_dot, arr_shape, obj, axis)


def _declare_the_rest():
    """Every other function generated code may call becomes a primitive without rules.

    Marked `own_code`: differentiating gradient code that calls one (the VJP rule of
    `np.linalg.solve`, say) lowers its source in place, when lowering accepts that source;
    otherwise it is a NoRuleError naming the generated line at transform time, as for any
    function without rules.
    """
    from . import elementwise, fft, language, linalg, nondiff, reductions, shape
    from .. import runtime
    tables = (elementwise.table, fft.table, language.table, linalg.table, nondiff.table, reductions.table, shape.table,
              table)
    declared = {id(fn) for t in tables for fn in t.primitives}
    found = {}
    for t in tables[:-1]:
        for prim in t.primitives.values():
            for rule in list(prim.vjps.values()) + list(prim.jvps.values()):
                for fn in _called(rule):
                    found.setdefault(id(fn), fn)
    found[id(runtime.as_cotree)] = runtime.as_cotree
    for key, fn in sorted(found.items(), key=lambda item: item[1].__name__):
        if key not in declared:
            table.op(fn, _signature(fn), spelling=fn.__name__).own_code = True


table.nondiff(zeros_like_tree, "x", spelling="zeros_like_tree")  # zeros, whatever x holds: no derivative


def _called(rule):
    """The helper functions a rule may put into generated code: itself (called by name) and the tapegen
    functions its code names (what an inlined rule calls). Read from the code object, not parsed:
    declaring one more than needed costs nothing, parsing every rule at import costs 100 ms."""
    scope = rule.fn.__globals__
    values = [scope.get(name) for name in rule.fn.__code__.co_names]  # repeats are fine: the caller keys by id
    return [rule.fn] + [v for v in values if v.__class__ is _FUNCTION and v.__module__.startswith("tapegen.")]


_FUNCTION = type(_called)


def _signature(fn) -> str:
    """`fn`'s parameters as a declaration; `g` and `y` (names rules give the cotangent and output) renamed."""
    code = fn.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or hasattr(fn, "__wrapped__"):
        return _signature_inspected(fn)
    names = parameter_names(fn)
    defaults = dict(zip(names[code.co_argcount - len(fn.__defaults__ or ()):code.co_argcount], fn.__defaults__ or ()))
    defaults.update(fn.__kwdefaults__ or {})
    return ", ".join(_declared(name, name in defaults, defaults.get(name)) for name in names)


def _signature_inspected(fn) -> str:
    parts = []
    for param in inspect.signature(fn).parameters.values():
        name = {"g": "ct", "y": "out"}.get(param.name, param.name)
        if param.kind is param.VAR_POSITIONAL:
            parts.append(f"*{name}")
        else:
            parts.append(_declared(param.name, param.default is not param.empty, param.default))
    return ", ".join(parts)


def _declared(name, has_default, default) -> str:
    name = {"g": "ct", "y": "out"}.get(name, name)
    return f"{name}={default!r}" if has_default else name


_declare_the_rest()


# Shapes, axes, indices and masks carry no derivative, even when they come off the same tape as
# values that do (a shape popped from the list the backward pass replays).
_INERT_NAMES = ("axis", "keepdims", "index", "like", "wins", "tie", "other_active", "taken", "mask", "dtype", "obj",
                "fields", "pad_width", "mode", "reps", "repeats", "axes", "axis1", "axis2", "offset")
for _prim in table.primitives.values():
    _prim.inert = tuple(dict.fromkeys(tuple(_prim.inert) + tuple(
        p for p in _prim.params if p.endswith(("shape", "meta")) or p in _INERT_NAMES)))


# --- containers: cotangents of lists, tuples and dicts ------------------------------------------------

table.nondiff(normal_key, "a_meta, key", spelling="normal_key")
table.op(popped_cotangent, "tape, ct", spelling="popped_cotangent", inert=("tape",))
table.op(pushed_cotangent, "tape_meta, ct_meta, ct", spelling="pushed_cotangent")


@table.vjp(popped_cotangent, "ct")  # third derivatives through loops: gradient code's gradient code
def popped_cotangent_vjp(tape_meta, ct_meta, g):
    return pushed_cotangent(tape_meta, ct_meta, g)


@table.jvp(popped_cotangent, "ct")
def popped_cotangent_jvp(tape, ct_dot):
    return popped_cotangent(tape, ct_dot)


@table.jvp(pushed_cotangent, "ct")
def pushed_cotangent_jvp(tape_meta, ct_meta, ct_dot):
    return pushed_cotangent(tape_meta, ct_meta, ct_dot)


table.op(record_cotangent, "ct, fields", spelling="record_cotangent", inert=("fields",))
table.primitives[record_items].own_code = False  # its rules below, not its code (dict.get has none)


@table.vjp(record_items, "ct")
def record_items_vjp(fields, g):
    return record_cotangent(g, fields)


@table.jvp(record_items, "ct")
def record_items_jvp(ct_dot, fields):
    return record_items(ct_dot, fields)


@table.vjp(record_cotangent, "ct")
def record_cotangent_vjp(fields, g):
    return record_items(g, fields)


@table.jvp(record_cotangent, "ct")
def record_cotangent_jvp(ct_dot, fields):
    return record_cotangent(ct_dot, fields)
#
# Each helper below is linear in `ct`, a container's cotangent (a Cotree keyed by position or key, a
# list or tuple with None for items without one, or None) or a list of per-item cotangents. Its VJP is
# the transpose: taking item `key` transposes to putting `g` at `key`, splitting an array into pieces
# transposes to joining the pieces' cotangents (zeros for the pieces that have none).

def cotangent_at(ct, a_meta, index):
    """`ct[index]` of the cotangent of `a` (described by `a_meta`): the transpose of `unindex`.

    An array's element or region; for a container, its item (None if it has none), or for a
    slice of a list or tuple, the items it takes renumbered from 0.
    """
    if ct is None:
        return None
    if not isinstance(ct, dict):
        return ct[index] if not isinstance(ct, (list, tuple)) or isinstance(index, slice) or index < len(ct) else None
    kind, length = a_meta
    if kind is dict:
        return ct.get(index)
    if isinstance(index, slice):
        return Cotree((k, ct[p]) for k, p in enumerate(range(length)[index]) if ct.get(p) is not None)
    return ct.get(index % length if length else index)


def restack(ct, object, object_shape):
    """The transpose of `array_rows`: per-item cotangents of a list stacked into one array, zeros for none."""
    if not isinstance(object, (list, tuple)):
        return ct
    return np.stack(piece_cotangents(ct, [np.zeros(object_shape[1:])] * len(object)))


def unstack(ct, axis, like):
    """The transpose of `stack_vjp`: per-item cotangents stacked along `axis`, zeros for items with none."""
    return np.stack(piece_cotangents(ct, list(np.moveaxis(like, axis, 0))), axis)


for _fn, _signature in ((item_cotangent, "ct, key"), (cotangent_at, "ct, a_meta, index"), (gathered, "ct, like_meta"), (one_item, "ct, key"), (without_item, "ct, key"),
                        (keys_within, "ct, keys"), (keys_outside, "ct, keys"),
                        (make_list_vjp, "items, ct"), (make_dict_vjp, "keys, ct"), (keyed, "keys, ct"),
                        (as_cotree, "ct"), (piece_cotangents, "ct, pieces"), (array_rows, "object, ct"),
                        (restack, "ct, object, object_shape"), (concatenate_vjp, "arrays, axis, ct"),
                        (stack_vjp, "axis, ct"), (hstack_vjp, "tup, ct"), (vstack_vjp, "tup, ct"),
                        (dstack_vjp, "tup, ct"), (column_stack_vjp, "tup, ct"), (unstack, "ct, axis, like"),
                        (item_range, "ct, start, n"), (shifted, "ct, start, n"),
                        (summed_repeats, "ct, length, n"), (tiled, "ct, length, n"),
                        (unblock, "ct, arrays"), (reblock, "ct, arrays"), (replaced, "ct, a_meta, key"),
                        (spread, "ct, items"), (unspread, "ct, items, g_shape"), (pairs_cotangent, "keys, ct"),
                        (as_pairs, "keys, ct"), (field_cotangent, "ct, name"), (cotangent_field, "ct, name")):
    # everything but the cotangent is read for its length, keys or shapes only
    table.op(_fn, _signature, spelling=_fn.__name__, inert=tuple(p for p in _signature.split(", ") if p != "ct"))


@table.vjp(item_cotangent, "ct")
def item_cotangent_vjp(ct_meta, key, g):
    return unindex(g, ct_meta, key)


@table.jvp(item_cotangent, "ct")
def item_cotangent_jvp(ct, ct_dot, key):
    return _zero_where_missing(item_cotangent(ct_dot, key), item_cotangent(ct, key))


def _zero_where_missing(dot, primal):
    """The tangent `dot` of a cotangent `primal` an item was read out of: zeros where `primal` has a value and
    `dot` has none (a sum of list cotangents whose tangent came from one summand only lacks the other's
    items; gradient code testing `if g is not None` on the value then used the tangent: None * 3.0)."""
    return zero_tangent(primal) if dot is None else dot


def _zeros_where_missing(dots, primals):
    return [_zero_where_missing(dot, primal) for dot, primal in zip(dots, primals)]


@table.vjp(one_item, "ct", partial=True)
def one_item_vjp(key, g):
    return item_cotangent(g, key)


@table.jvp(one_item, "ct")
def one_item_jvp(ct_dot, key):
    return one_item(ct_dot, key)


@table.vjp(without_item, "ct")
def without_item_vjp(key, g):
    return without_item(g, key)


@table.jvp(without_item, "ct")
def without_item_jvp(ct_dot, key):
    return without_item(ct_dot, key)


@table.vjp(keys_within, "ct")
def keys_within_vjp(keys, g):  # (linear, its own transpose: the same items kept)
    return keys_within(g, keys)


@table.jvp(keys_within, "ct")
def keys_within_jvp(ct_dot, keys):
    return keys_within(ct_dot, keys)


@table.vjp(keys_outside, "ct")
def keys_outside_vjp(keys, g):
    return keys_outside(g, keys)


@table.jvp(keys_outside, "ct")
def keys_outside_jvp(ct_dot, keys):
    return keys_outside(ct_dot, keys)


@table.vjp(make_list_vjp, "ct")
def make_list_vjp_vjp(ct_meta, g):
    return gathered(g, ct_meta)


@table.jvp(make_list_vjp, "ct")
def make_list_vjp_jvp(items, ct, ct_dot):
    return _zeros_where_missing(make_list_vjp(items, ct_dot), make_list_vjp(items, ct))


@table.vjp(make_dict_vjp, "ct")
def make_dict_vjp_vjp(keys, g):
    return keyed(keys, g)


@table.jvp(make_dict_vjp, "ct")
def make_dict_vjp_jvp(keys, ct, ct_dot):
    return _zeros_where_missing(make_dict_vjp(keys, ct_dot), make_dict_vjp(keys, ct))


@table.vjp(keyed, "ct")
def keyed_vjp(keys, g):
    return make_dict_vjp(keys, g)


@table.jvp(keyed, "ct")
def keyed_jvp(keys, ct_dot):
    return keyed(keys, ct_dot)


@table.vjp(as_cotree, "ct")
def as_cotree_vjp(g):
    return as_cotree(g)


@table.vjp(piece_cotangents, "ct")
def piece_cotangents_vjp(ct_meta, g):
    return gathered(g, ct_meta)


@table.jvp(as_cotree, "ct")
def as_cotree_jvp(ct_dot):
    return as_cotree(ct_dot)


@table.jvp(piece_cotangents, "ct")
def piece_cotangents_jvp(ct_dot, pieces):
    return piece_cotangents(ct_dot, pieces)


@table.vjp(array_rows, "ct")
def array_rows_vjp(object, ct_shape, g):
    return restack(g, object, ct_shape)


@table.jvp(array_rows, "ct")
def array_rows_jvp(object, ct_dot):
    return array_rows(object, ct_dot)


@table.vjp(cotangent_at, "ct")
def cotangent_at_vjp(a_meta, index, g):
    return unindex(g, a_meta, index)


@table.jvp(cotangent_at, "ct")
def cotangent_at_jvp(ct_dot, a_meta, index):
    return cotangent_at(ct_dot, a_meta, index)


@table.vjp(gathered, "ct")
def gathered_vjp(ct, like_meta, g):
    return per_item(g, items_spanned(ct, like_meta, g))


def items_spanned(ct, like_meta, other) -> int:
    """How many items per-item cotangents must cover: the container's length where `like_meta` says it, and
    at least every position `ct` or `other` has (a Cotree holds only the items that have one: not its len)."""
    kind = like_meta[0]
    counts = [like_meta[1] if isinstance(kind, type) and kind is not dict else (kind[0] if kind else 0) if
              isinstance(kind, tuple) else 0]
    for part in (ct, other):
        if isinstance(part, dict):
            counts.append(max((k + 1 for k in part if isinstance(k, int)), default=0))
        elif isinstance(part, (list, tuple)):
            counts.append(len(part))
    return max(counts)


def per_item(g, count):
    """`g`, a container's cotangent, as a list of `count` per-item cotangents (None where it has none)."""
    return [item_cotangent(g, i) for i in range(count)]


table.nondiff(items_spanned, "ct, like_meta, other", spelling="items_spanned")  # a count: no derivative


@table.jvp(gathered, "ct")
def gathered_jvp(ct_dot, like_meta):
    return gathered(ct_dot, like_meta)


@table.vjp(restack, "ct")
def restack_vjp(object, g):
    return array_rows(object, g)


@table.jvp(restack, "ct")
def restack_jvp(ct_dot, object, object_shape):
    return restack(ct_dot, object, object_shape)


@table.vjp(concatenate_vjp, "ct")
def concatenate_vjp_vjp(arrays, axis, g):
    return np.concatenate(piece_cotangents(g, arrays), axis) if axis is not None else \
        np.concatenate([np.ravel(p) for p in piece_cotangents(g, arrays)])


@table.jvp(concatenate_vjp, "ct")
def concatenate_vjp_jvp(arrays, axis, ct_dot):
    return concatenate_vjp(arrays, axis, ct_dot)


@table.vjp(stack_vjp, "ct")
def stack_vjp_vjp(axis, ct, g):
    return unstack(g, axis, ct)


@table.jvp(stack_vjp, "ct")
def stack_vjp_jvp(axis, ct_dot):
    return stack_vjp(axis, ct_dot)


@table.vjp(unstack, "ct")
def unstack_vjp(axis, g):
    return stack_vjp(axis, g)


@table.jvp(unstack, "ct")
def unstack_jvp(ct_dot, axis, like):
    return unstack(ct_dot, axis, like)


@table.vjp(hstack_vjp, "ct")
def hstack_vjp_vjp(tup, g):
    return np.hstack(piece_cotangents(g, tup))


@table.vjp(vstack_vjp, "ct")
def vstack_vjp_vjp(tup, g):
    return np.vstack(piece_cotangents(g, tup))


@table.vjp(dstack_vjp, "ct")
def dstack_vjp_vjp(tup, g):
    return np.dstack(piece_cotangents(g, tup))


@table.vjp(column_stack_vjp, "ct")
def column_stack_vjp_vjp(tup, g):
    return np.column_stack(piece_cotangents(g, tup))


@table.jvp(hstack_vjp, "ct")
def hstack_vjp_jvp(tup, ct_dot):
    return hstack_vjp(tup, ct_dot)


@table.jvp(vstack_vjp, "ct")
def vstack_vjp_jvp(tup, ct_dot):
    return vstack_vjp(tup, ct_dot)


@table.jvp(dstack_vjp, "ct")
def dstack_vjp_jvp(tup, ct_dot):
    return dstack_vjp(tup, ct_dot)


@table.jvp(column_stack_vjp, "ct")
def column_stack_vjp_jvp(tup, ct_dot):
    return column_stack_vjp(tup, ct_dot)


@table.vjp(item_range, "ct")
def item_range_vjp(start, n, g):
    return shifted(g, start, n)


@table.vjp(shifted, "ct")
def shifted_vjp(start, n, g):
    return item_range(g, start, n)


@table.vjp(summed_repeats, "ct")
def summed_repeats_vjp(length, n, g):
    return tiled(g, length, n)


@table.vjp(tiled, "ct")
def tiled_vjp(length, n, g):
    return summed_repeats(g, length, n)


@table.jvp(item_range, "ct")
def item_range_jvp(ct_dot, start, n):
    return item_range(ct_dot, start, n)


@table.jvp(shifted, "ct")
def shifted_jvp(ct_dot, start, n):
    return shifted(ct_dot, start, n)


@table.jvp(summed_repeats, "ct")
def summed_repeats_jvp(ct_dot, length, n):
    return summed_repeats(ct_dot, length, n)


@table.jvp(tiled, "ct")
def tiled_jvp(ct_dot, length, n):
    return tiled(ct_dot, length, n)


@table.vjp(unblock, "ct")
def unblock_vjp(arrays, g):
    return reblock(g, arrays)


@table.vjp(reblock, "ct")
def reblock_vjp(arrays, g):
    return unblock(g, arrays)


@table.jvp(unblock, "ct")
def unblock_jvp(ct_dot, arrays):
    return unblock(ct_dot, arrays)


@table.jvp(reblock, "ct")
def reblock_jvp(ct_dot, arrays):
    return reblock(ct_dot, arrays)


@table.vjp(replaced, "ct")
def replaced_vjp(a_meta, key, g):
    return replaced(g, a_meta, key)


@table.jvp(replaced, "ct")
def replaced_jvp(ct_dot, a_meta, key):
    return replaced(ct_dot, a_meta, key)


@table.vjp(spread, "ct")
def spread_vjp(ct_shape, items, g):
    return unspread(g, items, ct_shape)


@table.vjp(unspread, "ct")
def unspread_vjp(items, g):
    return spread(g, items)


@table.jvp(spread, "ct")
def spread_jvp(ct_dot, items):
    return spread(ct_dot, items)


@table.jvp(unspread, "ct")
def unspread_jvp(ct_dot, items, g_shape):
    return unspread(ct_dot, items, g_shape)


@table.vjp(pairs_cotangent, "ct")
def pairs_cotangent_vjp(keys, g):
    return as_pairs(keys, g)


@table.vjp(as_pairs, "ct")
def as_pairs_vjp(keys, g):
    return pairs_cotangent(keys, g)


@table.jvp(pairs_cotangent, "ct")
def pairs_cotangent_jvp(keys, ct_dot):
    return pairs_cotangent(keys, ct_dot)


@table.jvp(as_pairs, "ct")
def as_pairs_jvp(keys, ct_dot):
    return as_pairs(keys, ct_dot)


@table.vjp(field_cotangent, "ct", partial=True)
def field_cotangent_vjp(name, g):
    return cotangent_field(g, name)


@table.vjp(cotangent_field, "ct")
def cotangent_field_vjp(name, g):
    return field_cotangent(g, name)


@table.jvp(field_cotangent, "ct")
def field_cotangent_jvp(ct_dot, name):
    return field_cotangent(ct_dot, name)


@table.jvp(cotangent_field, "ct")
def cotangent_field_jvp(ct_dot, name):
    return cotangent_field(ct_dot, name)

"""Rule table tests for the helpers gradient code calls (`tapegen/rules/runtime_rules.py`).

Each row differentiates a call of one helper through the full transform, in
reverse mode (`check_vjp_row`) and in forward mode (`check_forward_row`),
against central differences: these are the rules a gradient of a gradient uses.
"""
import numpy as np
import pytest

import tapegen as tg
from rule_rows import Row, check_vjp_row
from tapegen.rules.elementwise import broadcast_like, fmax_share, fmin_share, guarded_div, guarded_mul, kink_div
from tapegen.rules.elementwise import log_or_zero, tie_split
from tapegen.rules.language import gathered, item_cotangent, item_range, keyed, make_dict_vjp, make_list_vjp
from tapegen.rules.language import keys_outside, keys_within
from tapegen.rules.language import array_rows, one_item, shifted, summed_repeats, tiled, without_item, zero_region
from tapegen.rules.language import as_pairs, pairs_cotangent, replaced, spread, unspread
from tapegen.rules.language import record_cotangent, record_items
from tapegen.rules.runtime_rules import cotangent_at, popped_cotangent, restack, summand_cotangent, unstack
from tapegen.rules.shape import column_stack_vjp, concatenate_vjp, dstack_vjp, hstack_vjp, piece_cotangents
from tapegen.rules.shape import attribute_or_none, cotangent_field, field_cotangent
from tapegen.rules.shape import reblock, stack_vjp, unblock, vstack_vjp
from tapegen.rules.linalg import dot_vjp_a, dot_vjp_b, inner_vjp_a, inner_vjp_b, kron_vjp_a, kron_vjp_b
from tapegen.rules.linalg import linalg_mT, matmul_vjp_x1, matmul_vjp_x2, tensordot_vjp_a, tensordot_vjp_b, trace_vjp
from tapegen.rules.reductions import centered, cumsum_vjp, diff_vjp
from tapegen.rules.shape import undiagonal, unpad, unrepeat, unsort, untake, untake_along_axis, untile
from tapegen.rules.runtime_rules import add_tangents, copy_region, output_cotangent, tape_pop, unconform, unshared
from tapegen.rules.elementwise import conj_sign, real_like
from tapegen.rules.linalg import _gap_inverse, _safe_reciprocal, einsum_jvp, einsum_vjp, norm_direction
from tapegen.rules.linalg import linalg_adjugate, linalg_adjugate_tangent
from tapegen.rules.fft import fft_fit
from tapegen.rules.shape import delete_cotangent, insert_values_cotangent
from tapegen.runtime import add_cotangents, as_cotree, conform, safe_div, unbroadcast, unindex, unreduce

_rng = np.random.default_rng(11)


def _loop(x):
    h = x
    for _ in range(3):
        h = np.tanh(h * 1.2 + 0.1)
    return np.sum(h * h)


# A gradient whose code replays a loop from its tape: differentiating it goes through tape_pop.
_LOOP_GRADIENT = tg.grad(_loop)


def _x(*shape):
    return _rng.standard_normal(shape)


S = 0.7
V3, V4, V5 = _x(3), _x(4), _x(5)
TAPE = [V4]  # a list the backward pass popped one value from
M34, M23, M41, M45, M35 = _x(3, 4), _x(2, 3), _x(4, 1), _x(4, 5), _x(3, 5)
T234 = _x(2, 3, 4)
POSITIVE = np.abs(_x(3, 4)) + 0.5
MIXED = np.array([0.5, -1.2, 2.0, -0.3])
WINS = M34 > 0
TIE = np.zeros((3, 4), dtype=bool)
A_META = ((3, 4), np.dtype(np.float64))
ROW_INDEX = np.array([0, 2, 2])
COLUMN_0 = (slice(1, None), 0)
ORDER = np.argsort(M34, axis=1)


def _row(id, fn, *args, covers, wrt=(0,), **options):
    return Row(id, fn, args, wrt=wrt, covers=covers, **options)


PIECES = [V3, V4]
_ONES21 = np.ones((2, 1))
F64 = np.dtype(np.float64)


ROWS = [
    _row("unbroadcast-(2,3)-to-(3,)", lambda ct: unbroadcast(ct, (3,)), M23, covers=(unbroadcast,)),
    _row("unbroadcast-(4,1)-same", lambda ct: unbroadcast(ct, (4, 1)), M41, covers=(unbroadcast,)),
    _row("unbroadcast-(3,4)-to-(1,4)", lambda ct: unbroadcast(ct, (1, 4)), M34, covers=(unbroadcast,)),
    _row("unreduce-(3,)-axis1", lambda ct: unreduce(ct, (3, 4), 1, False), V3, covers=(unreduce,)),
    _row("unreduce-scalar-all", lambda ct: unreduce(ct, (3, 4), None, False), S, covers=(unreduce,)),
    _row("unreduce-keepdims", lambda ct: unreduce(ct, (3, 4), 0, True), V4[None], covers=(unreduce,)),
    _row("conform-same-shape", lambda ct, x: conform(ct, x), M34, POSITIVE, wrt=(0, 1), covers=(conform,)),
    _row("conform-broadcast-(4,)-to-(3,4)", lambda ct: conform(ct, POSITIVE), V4, covers=(conform,)),
    _row("conform-scalar", lambda ct: conform(ct, S), S, covers=(conform,)),
    _row("unconform-(3,4)-to-(4,)", lambda ct, like: unconform(ct, like), M34, V4, wrt=(0, 1),
         covers=(unconform,)),
    _row("add_cotangents", lambda a, b: add_cotangents(a, b), M34, V4, wrt=(0, 1), covers=(add_cotangents,)),
    _row("add_cotangents-none", lambda b: add_cotangents(None, b), M34, covers=(add_cotangents,)),
    _row("unindex-rows-duplicates", lambda ct: unindex(ct, A_META, ROW_INDEX), M34[:3], covers=(unindex,)),
    _row("unindex-slice", lambda ct: unindex(ct, A_META, COLUMN_0), V3[:2], covers=(unindex,)),
    _row("copy_region", lambda a: copy_region(a, COLUMN_0), M34, covers=(copy_region,)),
    _row("tape_pop-through-a-loop-gradient", lambda x: np.sum(_LOOP_GRADIENT(x) * V3), V3, covers=(tape_pop,)),
    _row("zero_region", lambda ct: zero_region(ct, COLUMN_0), M34, covers=(zero_region,)),
    _row("guarded_mul-broadcast", lambda ct, d: guarded_mul(ct, d), M34, V4, wrt=(0, 1), covers=(guarded_mul,)),
    _row("guarded_div-broadcast", lambda ct, d: guarded_div(ct, d), V4, POSITIVE, wrt=(0, 1),
         covers=(guarded_div,)),
    _row("kink_div", lambda ct, d: kink_div(ct, d), M34, POSITIVE, wrt=(0, 1), covers=(kink_div,)),
    _row("safe_div", lambda ct, d: safe_div(ct, d), M34, POSITIVE, wrt=(0, 1), covers=(safe_div,)),
    _row("broadcast_like-(4,)-to-(3,4)", lambda t, like: broadcast_like(t, like), V4, M34, wrt=(0, 1),
         covers=(broadcast_like,)),
    _row("unshared-(3,4)", lambda x, shown: unshared(x, shown), M34, M34, wrt=(0, 1), covers=(unshared,)),
    _row("tie_split", lambda ct: tie_split(ct, WINS, TIE, True), M34, covers=(tie_split,)),
    _row("fmax_share", lambda ct, mine, other: fmax_share(ct, mine, other, True), M34, POSITIVE, M34,
         wrt=(0, 1, 2), covers=(fmax_share,)),
    _row("fmin_share", lambda ct, mine, other: fmin_share(ct, mine, other, True), M34, POSITIVE, V4,
         wrt=(0, 1, 2), covers=(fmin_share,)),
    _row("centered-axis0", lambda a: centered(a, 0), M34, covers=(centered,)),
    _row("cumsum_vjp-axis1", lambda ct: cumsum_vjp((3, 4), 1, ct), M34, covers=(cumsum_vjp,)),
    _row("cumsum_vjp-flat", lambda ct: cumsum_vjp((3, 4), None, ct), M34.ravel(), covers=(cumsum_vjp,)),
    _row("diff_vjp", lambda ct: diff_vjp(1, -1, ct), M34[:, :3], covers=(diff_vjp,)),
    _row("trace_vjp", lambda ct: trace_vjp(A_META, 0, 0, 1, ct), S, covers=(trace_vjp,)),
    _row("untile", lambda ct: untile(ct, (3,), (2, 2)), _x(2, 6), covers=(untile,)),
    _row("unrepeat", lambda ct: unrepeat(ct, (3, 4), 2, 1), _x(3, 8), covers=(unrepeat,)),
    _row("unpad-constant", lambda ct: unpad(ct, (3, 4), 1, "constant"), _x(5, 6), covers=(unpad,)),
    _row("unpad-reflect", lambda ct: unpad(ct, (4,), 2, "reflect"), _x(8), covers=(unpad,)),
    _row("untake", lambda ct: untake(ct, (3, 4), ROW_INDEX, 0), M34, covers=(untake,)),
    _row("untake_along_axis", lambda ct: untake_along_axis(ct, (3, 4), ORDER, 1), M34, covers=(untake_along_axis,)),
    _row("unsort", lambda ct, a: unsort(ct, a, 1), M34, POSITIVE, wrt=(0, 1), covers=(unsort,)),
    _row("undiagonal", lambda ct: undiagonal(ct, (3, 4), 0, 0, 1), V3, covers=(undiagonal,)),
    _row("inner_vjp_a", lambda b, ct: inner_vjp_a((3, 4), b, ct), _x(5, 4), M35, wrt=(0, 1), covers=(inner_vjp_a,)),
    _row("inner_vjp_b", lambda a, ct: inner_vjp_b(a, (5, 4), ct), M34, M35, wrt=(0, 1), covers=(inner_vjp_b,)),
    _row("kron_vjp_a", lambda b, ct: kron_vjp_a((2, 3), b, ct), _x(2, 2), _x(4, 6), wrt=(0, 1), covers=(kron_vjp_a,)),
    _row("kron_vjp_b", lambda a, ct: kron_vjp_b(a, (2, 2), ct), M23, _x(4, 6), wrt=(0, 1), covers=(kron_vjp_b,)),
    _row("tensordot_vjp_a", lambda b, ct: tensordot_vjp_a((3, 4), b, 1, ct), M45, M35, wrt=(0, 1),
         covers=(tensordot_vjp_a,)),
    _row("tensordot_vjp_b", lambda a, ct: tensordot_vjp_b(a, (4, 5), 1, ct), M34, M35, wrt=(0, 1),
         covers=(tensordot_vjp_b,)),
    _row("log_or_zero-mixed-signs", lambda x: log_or_zero(x), MIXED, covers=(log_or_zero,)),
    _row("linalg_mT-(2,3,4)", lambda x: linalg_mT(x), T234, covers=(linalg_mT,)),
    _row("matmul_vjp_x1-matrices", lambda x2, ct: matmul_vjp_x1((3, 4), x2, ct), M45, M35, wrt=(0, 1),
         covers=(matmul_vjp_x1,)),
    _row("matmul_vjp_x1-vector-x1", lambda x2, ct: matmul_vjp_x1((4,), x2, ct), M45, V5, wrt=(0, 1),
         covers=(matmul_vjp_x1,)),
    _row("matmul_vjp_x1-vector-x2", lambda x2, ct: matmul_vjp_x1((3, 4), x2, ct), V4, V3, wrt=(0, 1),
         covers=(matmul_vjp_x1,)),
    _row("matmul_vjp_x2-matrices", lambda x1, ct: matmul_vjp_x2(x1, (4, 5), ct), M34, M35, wrt=(0, 1),
         covers=(matmul_vjp_x2,)),
    _row("matmul_vjp_x2-vector-x1", lambda x1, ct: matmul_vjp_x2(x1, (4, 5), ct), V4, V5, wrt=(0, 1),
         covers=(matmul_vjp_x2,)),
    _row("matmul_vjp_x2-vector-x2", lambda x1, ct: matmul_vjp_x2(x1, (4,), ct), M34, V3, wrt=(0, 1),
         covers=(matmul_vjp_x2,)),
    _row("dot_vjp_a-matrices", lambda b, ct: dot_vjp_a((3, 4), b, ct), M45, M35, wrt=(0, 1), covers=(dot_vjp_a,)),
    _row("dot_vjp_a-vectors", lambda b, ct: dot_vjp_a((4,), b, ct), V4, S, wrt=(0, 1), covers=(dot_vjp_a,)),
    _row("dot_vjp_b-matrices", lambda a, ct: dot_vjp_b(a, (4, 5), ct), M34, M35, wrt=(0, 1), covers=(dot_vjp_b,)),
    _row("dot_vjp_b-vectors", lambda a, ct: dot_vjp_b(a, (4,), ct), V4, S, wrt=(0, 1), covers=(dot_vjp_b,)),
    # containers: each helper between a list built of its arguments and an item taken back out
    _row("item_cotangent-list", lambda a, b: item_cotangent([a, b], 1) * a, V4, V4 * 2.0, wrt=(0, 1),
         covers=(item_cotangent,)),
    _row("one_item", lambda a: item_cotangent(one_item(a, 2), 2) ** 2, V4, covers=(one_item,)),
    _row("cotangent_at-dict", lambda a, b: cotangent_at({"x": a, "y": b}, (dict, 2), "y") * a, V4, V4, wrt=(0, 1),
         covers=(cotangent_at,)),
    _row("cotangent_at-slice", lambda a, b: item_cotangent(cotangent_at([a, b, a], (list, 3), slice(1, None)), 0),
         V4, V4, wrt=(0, 1), covers=(cotangent_at,)),
    _row("cotangent_at-array", lambda ct: cotangent_at(ct, A_META, COLUMN_0), M34, covers=(cotangent_at,)),
    _row("summand_cotangent-array-(3,4)-to-(4,)", lambda ct: summand_cotangent(ct, V4) ** 2, M34,
         covers=(summand_cotangent,)),
    _row("summand_cotangent-cotree", lambda a, b: item_cotangent(summand_cotangent([a, b * a], {1: V4}), 1) * b,
         V4, V4, wrt=(0, 1), covers=(summand_cotangent,)),
    _row("keys_within", lambda a, b: item_cotangent(keys_within({"x": a, "y": b}, {"y": None}), "y") * a, V4, V4,
         wrt=(0, 1), covers=(keys_within,)),
    _row("keys_outside", lambda a, b: item_cotangent(keys_outside({"x": a, "y": b}, {"y": None}), "x") * b, V4, V4,
         wrt=(0, 1), covers=(keys_outside,)),
    _row("without_item", lambda a, b, c: item_cotangent(without_item([a, b, c], 2), 1) * c, V4, V4, V4,
         wrt=(0, 1, 2), covers=(without_item,)),
    _row("make_list_vjp-list", lambda a, b: make_list_vjp((1, 2), [a, b])[1] * a, V4, V4, wrt=(0, 1),
         covers=(make_list_vjp,)),
    _row("make_list_vjp-array", lambda ct: make_list_vjp((1, 2, 3), ct)[2], M34, covers=(make_list_vjp,)),
    _row("make_dict_vjp", lambda a, b: make_dict_vjp(("x", "y"), {"x": a, "y": b})[1] * a, V4, V4, wrt=(0, 1),
         covers=(make_dict_vjp,)),
    _row("keyed", lambda a, b: keyed(("x", "y"), [a, b])["y"] * b, V4, V4, wrt=(0, 1), covers=(keyed,)),
    _row("record_items", lambda a, b: record_items({"second": a, 0: b}, ("first", "second"))[1] * b, V4, V4,
         wrt=(0, 1), covers=(record_items,)),
    _row("record_cotangent", lambda a, b: record_cotangent([a, b], ("first", "second"))["second"] * a, V4, V4,
         wrt=(0, 1), covers=(record_cotangent,)),
    _row("popped_cotangent", lambda a, b: item_cotangent(popped_cotangent(TAPE, (a, [b])), 1) * b, V4, V4,
         wrt=(0, 1), covers=(popped_cotangent,)),
    _row("as_cotree", lambda a, b: as_cotree([a, b])[1] * a, V4, V4, wrt=(0, 1), covers=(as_cotree,)),
    _row("piece_cotangents", lambda a, b: np.concatenate(piece_cotangents([a, None, b], [V3, V4, V5])) ** 2,
         V3, V5, wrt=(0, 1), covers=(piece_cotangents,)),
    _row("gathered-array", lambda a, b: gathered([a, None, b], ((3, 4), F64)), V4, V4, wrt=(0, 1),
         covers=(gathered,)),
    _row("gathered-list", lambda a, b: item_cotangent(gathered([a, b], (list, 2)), 1) * a, V4, V4, wrt=(0, 1),
         covers=(gathered,)),
    _row("array_rows", lambda ct: array_rows([V4, V4, V4], ct)[1] * ct[0], M34, covers=(array_rows,)),
    _row("restack", lambda a, b: restack([a, None, b], [V4, V4, V4], (3, 4)) ** 2, V4, V4, wrt=(0, 1),
         covers=(restack,)),
    _row("concatenate_vjp-axis0", lambda ct: concatenate_vjp(PIECES, 0, ct)[1] * ct[:4], _x(7),
         covers=(concatenate_vjp,)),
    _row("concatenate_vjp-flat", lambda ct: concatenate_vjp([M23, V4], None, ct)[0], _x(10),
         covers=(concatenate_vjp,)),
    _row("stack_vjp-axis1", lambda ct: stack_vjp(1, ct)[2] * ct[:, 0], M34, covers=(stack_vjp,)),
    _row("unstack-axis1", lambda a, b: unstack([a, None, b], 1, M34), V3, V3, wrt=(0, 1), covers=(unstack,)),
    _row("hstack_vjp", lambda ct: hstack_vjp([V3, V4], ct)[1] ** 2, _x(7), covers=(hstack_vjp,)),
    _row("vstack_vjp", lambda ct: vstack_vjp([V4, M34], ct)[1] ** 2, _x(4, 4), covers=(vstack_vjp,)),
    _row("dstack_vjp", lambda ct: dstack_vjp([M34, M34], ct)[0] ** 2, _x(3, 4, 2), covers=(dstack_vjp,)),
    _row("column_stack_vjp", lambda ct: column_stack_vjp([V3, M35], ct)[0] ** 2, _x(3, 6),
         covers=(column_stack_vjp,)),
    _row("item_range", lambda a, b, c: item_cotangent(item_range([a, b, c], 1, 2), 1) * a, V4, V4, V4,
         wrt=(0, 1, 2), covers=(item_range,)),
    _row("shifted", lambda a, b: item_cotangent(shifted([a, b], 2, 2), 3) * a, V4, V4, wrt=(0, 1), covers=(shifted,)),
    _row("summed_repeats", lambda a, b: item_cotangent(summed_repeats([a, b, a * b], 1, 3), 0), V4, V4,
         wrt=(0, 1), covers=(summed_repeats,)),
    _row("tiled", lambda a, b: item_cotangent(tiled([a, b], 2, 2), 3) * a, V4, V4, wrt=(0, 1), covers=(tiled,)),
    _row("unblock", lambda ct: unblock(ct, [[M23, _ONES21], [M34[:1, :3], M41[:1, :]]])[1][0] ** 2, M34,
         covers=(unblock,)),
    _row("replaced", lambda a, b: item_cotangent(replaced([a, b], (list, 2), -1), 0) * a, V4, V4, wrt=(0, 1),
         covers=(replaced,)),
    _row("spread-list", lambda g: spread(g, [V4, M34])[0], M34, covers=(spread,)),
    _row("spread-array", lambda g: spread(g, M34) * M34, V4, covers=(spread,)),
    _row("unspread-list", lambda a, b: unspread([a, None, b], [V4, V4, M34], (3, 4)), V4, M34, wrt=(0, 1),
         covers=(unspread,)),
    _row("unspread-array", lambda ct: unspread(ct, M34, (4,)) ** 2, M34, covers=(unspread,)),
    _row("pairs_cotangent", lambda a, b: pairs_cotangent(("x", "y"), [(None, a), (None, b)])["y"] * a, V4, V4,
         wrt=(0, 1), covers=(pairs_cotangent,)),
    _row("as_pairs", lambda a, b: as_pairs(("x", "y"), {"x": a, "y": b})[1][1] * a, V4, V4, wrt=(0, 1),
         covers=(as_pairs,)),
    _row("field_cotangent", lambda a: cotangent_field(field_cotangent(a, "W"), "W") * a, V4, covers=(field_cotangent,
                                                                                                 cotangent_field)),
    _row("einsum_vjp", lambda a, b, ct: einsum_vjp("ij,jk->ik", (a, b), False, ct)[0] * a, M23, _x(3, 4), _x(2, 4),
         wrt=(0, 1, 2), covers=(einsum_vjp,)),
    _row("einsum_vjp-second-operand", lambda a, b, ct: einsum_vjp("ij,jk->ik", (a, b), False, ct)[1], M23, _x(3, 4),
         _x(2, 4), wrt=(0, 1, 2), covers=(einsum_vjp,)),
    _row("einsum_vjp-diagonal", lambda a, ct: einsum_vjp("ii,i->i", (a, V3), False, ct)[0], _x(3, 3), V3,
         wrt=(0, 1), covers=(einsum_vjp,)),
    _row("norm_direction-rows-ord3", lambda x: norm_direction(x, 3, (1,), False), M34, covers=(norm_direction,)),
    _row("norm_direction-fro", lambda x: norm_direction(x, "fro", (0, 1), True), M34, covers=(norm_direction,)),
    _row("norm_direction-nuc", lambda x: norm_direction(x, "nuc", (0, 1), True), M34, covers=(norm_direction,)),
    _row("norm_direction-matrix-ord-2", lambda x: norm_direction(x, -2, (1, 0), True), M34,
         covers=(norm_direction,)),
    _row("norm_direction-inf-is-piecewise-constant", lambda x: norm_direction(x, np.inf, (1,), False) * x, M34,
         covers=(norm_direction,)),
    _row("einsum_jvp", lambda a, b, u, w: einsum_jvp("ij,jk->ik", (a, b), (u, w), False), M23, _x(3, 4), _x(2, 3),
         _x(3, 4), wrt=(0, 1, 2, 3), covers=(einsum_jvp,)),
    _row("einsum_jvp-one-direction", lambda a, b, u: einsum_jvp("ij,jk->ik", (a, b), (u, None), False) * a[:, :1],
         M23, _x(3, 4), _x(2, 3), wrt=(0, 1, 2), covers=(einsum_jvp,)),
    _row("add_tangents", lambda a, b: add_tangents(a * 2.0, None, np.sin(b)), V4, V4[::-1], wrt=(0, 1),
         covers=(add_tangents,)),
    _row("output_cotangent-tuple", lambda a, b: output_cotangent({1: a * b}, (a, b))[0] + output_cotangent(
        {1: a * b}, (a, b))[1] * 2.0, V4, V4[::-1], wrt=(0, 1), covers=(output_cotangent,)),
    _row("output_cotangent-array", lambda a: output_cotangent(np.sin(a), a) * a, V4, covers=(output_cotangent,)),
    _row("add_tangents-pairs", lambda a, b: add_tangents((a, b), (b * a, None))[0] * 2.0, V4, V4[::-1], wrt=(0, 1),
         covers=(add_tangents,)),
    _row("_gap_inverse", lambda w: _gap_inverse(w), np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]),
         covers=(_gap_inverse,)),
    _row("linalg_adjugate", lambda a: linalg_adjugate(a), np.sin(np.arange(18.0)).reshape(2, 3, 3),
         covers=(linalg_adjugate,)),
    _row("linalg_adjugate-rotation", lambda a: linalg_adjugate(a), np.array([[0.6, -0.8], [0.8, 0.6]]),
         covers=(linalg_adjugate,)),
    _row("linalg_adjugate_tangent", lambda t: linalg_adjugate_tangent(np.diag([2.0, 2.0, 0.5]) + 0.1, t),
         np.cos(np.arange(9.0)).reshape(3, 3), covers=(linalg_adjugate_tangent,)),
    _row("_safe_reciprocal", lambda s: _safe_reciprocal(s), np.array([0.5, 1.5, 2.0, 3.0]), covers=(_safe_reciprocal,)),
    _row("conj_sign-real", lambda x: conj_sign(x) * x, MIXED, covers=(conj_sign,)),
    _row("conj_sign-complex", lambda a, b: np.real(conj_sign(a + 1j * b) * (0.3 + 1.1j)), MIXED, MIXED[::-1],
         wrt=(0, 1), covers=(conj_sign,)),
    _row("real_like-real", lambda t: real_like(t * (1.0 + 2.0j), A_META) * t, V4, covers=(real_like,)),
    _row("real_like-complex", lambda t: np.real(real_like(t * (1.0 + 2.0j), ((4,), np.dtype(complex)))), V4,
         covers=(real_like,)),
    _row("fft_fit-crop-and-pad", lambda x: fft_fit(x, (2, 6)), M34, covers=(fft_fit,)),
    _row("insert_values_cotangent", lambda ct: insert_values_cotangent(ct, (3, 4), [0, 2, 2], (4,), 0),
         _x(6, 4), covers=(insert_values_cotangent,)),
    _row("insert_values_cotangent-broadcast", lambda ct: insert_values_cotangent(ct, (3, 4), 1, (1,), 1),
         _x(3, 5), covers=(insert_values_cotangent,)),
    _row("delete_cotangent", lambda ct: delete_cotangent(ct, (3, 4), [0, 2], None), _x(10),
         covers=(delete_cotangent,)),
    _row("delete_cotangent-axis1", lambda ct: delete_cotangent(ct, (3, 4), 1, 1), _x(3, 3), covers=(delete_cotangent,)),
    _row("reblock", lambda a, b: reblock([[a, None], [b, None]], [[M23, _ONES21], [M34[:1, :3], M41[:1, :]]]),
         M23, M34[:1, :3], wrt=(0, 1), covers=(reblock,)),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_vjp(row):
    check_vjp_row(row)


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_jvp(row):
    check_forward_row(row)


def test_row_ids_are_unique():
    ids = [row.id for row in ROWS]
    assert len(ids) == len(set(ids))


def check_forward_row(row, eps=1e-6):
    """`tg.jvp` through the full transform vs a central-difference directional derivative."""
    rng = np.random.default_rng(0)
    args = list(row.args)
    tangents = [None] * len(args)
    for i in row.wrt:
        tangents[i] = rng.standard_normal(np.shape(args[i])) if np.ndim(args[i]) else float(rng.standard_normal())
    _, tangent = tg.jvp(row.fn, tuple(args), tuple(tangents))
    plus = [a if t is None else a + eps * t for a, t in zip(args, tangents)]
    minus = [a if t is None else a - eps * t for a, t in zip(args, tangents)]
    expected = (np.asarray(row.fn(*plus), dtype=float) - np.asarray(row.fn(*minus), dtype=float)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tangent, dtype=float), expected, rtol=row.rtol, atol=row.atol)

"""Shift invariance: a derivative that is exactly zero, proved and skipped.

The numerically stable softmax, log-softmax and log-sum-exp subtract a maximum first:

    m = np.max(a, axis=1, keepdims=True)
    z = a - m
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))

`logp` does not change when `m` moves by any `d` constant along the reduced
axes, so the maximum's share of the gradient is zero: the rows of `g_z` sum to
zero. Computing it (a mask of where the maximum is, a count, a broadcast)
costs a third of a softmax cross-entropy's gradient and adds only rounding
error. JAX's `logsumexp` stops the maximum's gradient by hand for this reason;
here it is proved for the user's own code and no cotangent reaches `m`.

The proof moves `m` (and every reduction computing the same thing from the
same array, as when `x - x.max(1)[:, None]` is written twice) by `d` and
follows it forward. Each value downstream is *shifted* (`v -> v + k d`),
*scaled* (`v -> v exp(k d)`) or invariant (k = 0), for a rational k:

    m                               -> shifted, k = 1
    shifted +- shifted              -> shifted, k1 +- k2     shifted +- independent -> shifted
    shifted * or / a number         -> shifted, k * or / c   -shifted -> shifted, -k
    exp(shifted)                    -> scaled, k             log(scaled) -> shifted, k
    scaled * or / scaled            -> scaled, k1 +- k2      scaled * or / independent -> scaled, k or -k
    max/min/mean(shifted)           -> shifted               sum/mean(scaled) -> scaled

Reductions must run over exactly `m`'s axes (negative ones count as positive
where the shapes are known). `d` is laid out one of three ways, and values of
different layouts do not mix: *kept* (`m` reduced with keepdims, or the
reduction's result given its axis back by `r[:, None]`, `r[..., None]`,
`np.expand_dims(r, axis)`), *reduced* (`m` without keepdims; reductions with
keepdims=False lead here) and *all* (a reduction over every axis: `d` is one
number and any broadcast or reduction keeps it one). An independent operand
must not move the axes by broadcasting: in the kept layout it is the
reduction's own input or, shapes known, of no more dimensions; in the reduced
layout a number. A value that is shifted or scaled (k != 0) must not be
returned or used any other way; invariant values may be used freely. Anything
else and nothing is skipped.
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from ..ir import Const, Eqn, Pack, Var, mutable_vars
from .liveness import reads

SHIFTED, SCALED = "shifted", "scaled"
KEPT, REDUCED, ALL = "kept", "reduced", "all"
INVARIANT = "invariant"

_SUB = (operator.sub, np.subtract)
_ADD = (operator.add, np.add)
_MUL = (operator.mul, np.multiply)
_DIV = (operator.truediv, np.divide)
_NEG = (operator.neg, np.negative)
_PEAKS = (np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin)
_REDUCTIONS = _PEAKS + (np.sum, np.mean)


class Moved(NamedTuple):
    """How a value moves when the shift moves by d: `v + k d` (shifted) or `v exp(k d)` (scaled)."""

    kind: str
    k: Fraction
    layout: str


def _moved(kind, k, layout):
    from fractions import Fraction  # here, not at import: only a function with a maximum or a sum gets this far
    return INVARIANT if k == 0 else Moved(kind, Fraction(k), layout)


class _Shift(NamedTuple):
    """One group of equal reductions being moved: their input, axes, and that input's ndim if known."""

    a: object
    axes: object  # a sorted tuple, or None for all axes
    ndim: int | None
    known: dict


def shift_cuts(program, known=None) -> frozenset:
    """`(output, parameter)` for every use of a reduction `m` whose total cotangent is zero: all that the
    outputs depend on is invariant to moving `m` along its axes. `known` maps vars to (shape, dtype)."""
    known = known or {}
    top = [s for s in program.body if isinstance(s, Eqn)]
    # Vars used other than by a top-level equation (in nested blocks, loop and branch heads), returned,
    # or assigned more than once: a shifted or scaled value must be none of these.
    escaping = {v for stmt in program.body if not isinstance(stmt, Eqn) for v in reads(stmt)}
    escaping |= {v for v in program.outputs if isinstance(v, Var)} | mutable_vars(program.body)
    subtracted = {v for eqn in top if _fn(eqn) in _SUB + _ADD + (operator.getitem, np.expand_dims)
                  for v in eqn.reads}
    mutable = mutable_vars(program.body)
    groups = {}  # equal reductions of one array (not reassigned) move together
    for eqn in top:
        if len(eqn.outputs) == 1 and eqn.outputs[0] in subtracted and eqn.input("a") not in mutable \
                and _reduction(eqn, known) is not None:
            groups.setdefault((_fn(eqn), eqn.inputs), []).append(eqn)
    cuts = set()
    for members in groups.values():
        cuts |= _cuts(members, top, escaping, known)
    return frozenset(cuts)


def _fn(eqn):
    return getattr(eqn.op, "fn", None)


def _reduction(eqn, known):
    """(shift, layout) for a reduction `m` whose moving could cancel, else None."""
    if _fn(eqn) not in _REDUCTIONS or not isinstance(eqn.input("a"), Var) or not _plain_reduction(eqn):
        return None
    a = eqn.input("a")
    ndim = len(known[a][0]) if a in known else None
    axis, keepdims = _known(eqn.input("axis")), _known(eqn.input("keepdims"))
    if axis is None:
        return _Shift(a, None, ndim, known), ALL
    axes = _axes(axis, ndim)
    if axes is None:
        return None
    return _Shift(a, axes, ndim, known), (KEPT if keepdims is True else REDUCED)


def _plain_reduction(eqn) -> bool:
    """Only a, axis, keepdims (and dtype=None), all known constants."""
    if {k for k, _ in eqn.inputs} - {"a", "axis", "keepdims", "dtype"} or _known(eqn.input("dtype")) is not None:
        return False
    return _known(eqn.input("axis")) is not _UNKNOWN and _known(eqn.input("keepdims")) in (None, False, True)


_UNKNOWN = object()


def _known(atom):
    """The value of a constant atom (a tuple of constants too), else _UNKNOWN."""
    if atom is None:
        return None
    if isinstance(atom, Const):
        return atom.value
    if isinstance(atom, Pack) and atom.kind == "tuple" and all(isinstance(i, Const) for i in atom.items):
        return tuple(i.value for i in atom.items)
    return _UNKNOWN


def _axes(value, ndim):
    """Axes as a sorted tuple, negative ones made positive when `ndim` is known; None if not axes."""
    values = (value,) if isinstance(value, int) else value
    if not isinstance(values, tuple) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    if ndim is not None:
        if not all(-ndim <= v < ndim for v in values):
            return None
        values = tuple(v % ndim for v in values)
    return tuple(sorted(values))


def _cuts(members, top, escaping, known) -> set:
    """Every use of the group's results, if the outputs are invariant to moving them together; else nothing."""
    shift, layout = _reduction(members[0], known)
    results = {m.outputs[0] for m in members}
    from fractions import Fraction
    state = {v: Moved(SHIFTED, Fraction(1), layout) for v in results}
    start = next(i for i, e in enumerate(top) if e is members[0])
    for eqn in top[start + 1:]:
        tracked = [v for v in eqn.reads if v in state]
        if not tracked:
            continue
        if all(state[v] == INVARIANT for v in tracked):
            state.update((v, INVARIANT) for v in eqn.outputs)
            continue
        result = _transfer(eqn, state, shift) if len(eqn.outputs) == 1 else None
        if result is None:
            return set()
        state[eqn.outputs[0]] = result
    if any(s != INVARIANT and v in escaping for v, s in state.items()):
        return set()
    return {(eqn.outputs[0], key) for eqn in top for key, atom in eqn.inputs if atom in results}


def _transfer(eqn, state, shift):
    """How `eqn`'s output moves, from how its inputs do (untracked ones are independent), or None."""
    fn = _fn(eqn)
    keys = tuple(k for k, _ in eqn.inputs)
    if fn in _SUB + _ADD + _MUL + _DIV:
        if keys != ("x1", "x2"):
            return None
        left, right = eqn.input("x1"), eqn.input("x2")
        return _binary(fn, *_operands(left, right, state, shift), left, right)
    if fn in _NEG + (np.exp, np.log):
        x = state.get(eqn.input("x")) if keys == ("x",) else None
        if not isinstance(x, Moved):
            return None
        if fn in _NEG:
            return _moved(x.kind, -x.k if x.kind == SHIFTED else x.k, x.layout)
        wanted, made = (SHIFTED, SCALED) if fn is np.exp else (SCALED, SHIFTED)
        return Moved(made, x.k, x.layout) if x.kind == wanted else None
    if fn in _REDUCTIONS:
        return _reduced(eqn, state.get(eqn.input("a")), shift)
    if fn is operator.getitem or fn is np.expand_dims:
        return _expanded(eqn, state.get(eqn.input("a")), shift)
    return None


def _operands(left, right, state, shift):
    """Each operand's movement: Moved, INVARIANT (independent, broadcasting harmlessly) or None (it may not)."""
    tracked = [state[v] for v in (left, right) if isinstance(v, Var) and isinstance(state.get(v), Moved)]
    layout = tracked[0].layout if tracked else None

    def of(atom):
        moved = state.get(atom) if isinstance(atom, Var) else None
        if isinstance(moved, Moved):
            return moved
        if isinstance(atom, Const) and type(atom.value) in (int, float):
            return INVARIANT
        if layout == ALL or (layout == KEPT and _no_more_dimensions(atom, shift)):
            return INVARIANT
        return None
    return of(left), of(right)


def _no_more_dimensions(atom, shift) -> bool:
    """An independent array broadcasting against a kept-layout value leaves its axes where they are."""
    if atom == shift.a:
        return True
    shape = shift.known.get(atom) if isinstance(atom, Var) else None
    return shape is not None and shift.ndim is not None and len(shape[0]) <= shift.ndim


def _binary(fn, left, right, left_atom, right_atom):
    if left is None or right is None:
        return None
    moved = [x for x in (left, right) if isinstance(x, Moved)]
    if not moved or len({(x.kind, x.layout) for x in moved}) != 1:
        return None
    kind, layout = moved[0].kind, moved[0].layout
    k1 = left.k if isinstance(left, Moved) else 0
    k2 = right.k if isinstance(right, Moved) else 0
    if kind == SHIFTED and fn in _ADD + _SUB:
        return _moved(SHIFTED, k1 + k2 if fn in _ADD else k1 - k2, layout)
    if kind == SCALED and fn in _MUL + _DIV:  # the factors exp(k d) multiply
        return _moved(SCALED, k1 + k2 if fn in _MUL else k1 - k2, layout)
    if kind == SHIFTED and len(moved) == 1 and (fn in _MUL or (fn in _DIV and k1)):
        number = _number(right_atom if k1 else left_atom)  # a temperature: (a - m) / 2.0
        if number is None or number == 0:
            return None
        return _moved(SHIFTED, (k1 or k2) * number if fn in _MUL else k1 / number, layout)
    return None


def _number(atom):
    if isinstance(atom, Const) and type(atom.value) in (int, float) and np.isfinite(atom.value):
        from fractions import Fraction
        return Fraction(atom.value)
    return None


def _reduced(eqn, x, shift):
    """A reduction of a moved value over the shift's own axes (any axes, for a shift over all of them)."""
    if not isinstance(x, Moved) or not _plain_reduction(eqn):
        return None
    fn = _fn(eqn)
    if not ((x.kind == SHIFTED and fn in _PEAKS + (np.mean,)) or (x.kind == SCALED and fn in (np.sum, np.mean))):
        return None
    if x.layout == ALL:
        return x
    axes = _known(eqn.input("axis"))
    if x.layout != KEPT or axes is None or _axes(axes, shift.ndim) != shift.axes:
        return None
    return Moved(x.kind, x.k, KEPT if _known(eqn.input("keepdims")) is True else REDUCED)


def _expanded(eqn, x, shift):
    """`r[:, None]`, `r[..., None]` or `np.expand_dims(r, axis)`: a reduced-layout value given back its axis.
    Any indexing of a value moved by one number (the all layout) moves alike."""
    if not isinstance(x, Moved):
        return None
    if x.layout == ALL and _fn(eqn) is operator.getitem:
        return x
    if x.layout != REDUCED or shift.axes is None or len(shift.axes) != 1:
        return None
    axis = _inserted_axis(eqn, shift.ndim)
    if axis is None or _axes(axis, shift.ndim) != shift.axes:
        return None
    return Moved(x.kind, x.k, KEPT)


def _inserted_axis(eqn, ndim):
    """The one axis an index of only `:` and one `None` (or `..., None`), or expand_dims, inserts; else None."""
    if _fn(eqn) is np.expand_dims:
        axis = _known(eqn.input("axis"))
        return axis if isinstance(axis, int) and not isinstance(axis, bool) else None
    index = _known(eqn.input("index"))
    index = index if isinstance(index, tuple) else (index,)
    if index[:1] == (Ellipsis,) and index[1:] == (None,):
        return -1
    full = slice(None)
    if index and index[-1] is None and all(isinstance(i, slice) and i == full for i in index[:-1]):
        return len(index) - 1 if ndim is None or len(index) - 1 < ndim else None
    return None

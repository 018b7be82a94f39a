"""Shift invariance: a derivative that is exactly zero, proved and skipped.

The numerically stable softmax and log-softmax subtract a maximum first:

    z = a - np.max(a, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))

`logp` does not change when every row of `z` moves by a constant, so the
maximum's share of the gradient, `-sum(g_z, axis=1)`, is zero: the rows of
`g_z` sum to zero. Computing it (a mask of where the maximum is, a count, a
broadcast) costs a third of a softmax cross-entropy's gradient and adds only
rounding error. JAX's `logsumexp` stops the maximum's gradient by hand for this
reason; here it is proved for the user's own code and the cotangent never
flows.

The proof follows `z` forward. With `c` a shift constant along the reduced
axes, each value downstream of `z` is *shifted* (`v(z + c) = v(z) + c`),
*scaled* (`v(z + c) = v(z) * exp(c)`) or *invariant*:

    shifted +- independent -> shifted       exp(shifted) -> scaled
    max/mean(shifted)      -> shifted       sum/mean(scaled) -> scaled
    log(scaled)            -> shifted       scaled * or / independent -> scaled
    shifted - shifted      -> invariant     scaled / scaled -> invariant

where reductions must run over exactly the subtracted maximum's axes with
`keepdims=True`, and, for a maximum along some axes, it must be of `a` itself
and the independent operands plain numbers, so that no broadcast moves the
axes (any axes and operands when the maximum is over all of them). A value
that is only shifted or scaled must not be returned or used any other way;
invariant values may be used freely. Anything else and nothing is skipped.
"""
from __future__ import annotations

import operator

import numpy as np

from ..ir import Const, Eqn, Pack, Var, mutable_vars
from .liveness import reads

SHIFTED, SCALED, INVARIANT = "shifted", "scaled", "invariant"
OTHER = "other"  # an operand the rules do not accept (see _transfer)

_SUB = (operator.sub, np.subtract)
_ADD = (operator.add, np.add)
_MUL = (operator.mul, np.multiply)
_DIV = (operator.truediv, np.divide)
_PEAKS = (np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin)
_REDUCTIONS = _PEAKS + (np.sum, np.mean)


def shift_cuts(program) -> frozenset:
    """`(z, "x2")` for each `z = a - m` whose `m` receives no cotangent from it: every use of `z` is shift invariant."""
    top = [s for s in program.body if isinstance(s, Eqn)]
    definitions = {v: eqn for eqn in top for v in eqn.outputs}
    # Vars used other than by a top-level equation (in nested blocks, loop and branch heads), returned,
    # or assigned more than once: a shifted or scaled value must be none of these.
    escaping = {v for stmt in program.body if not isinstance(stmt, Eqn) for v in reads(stmt)}
    escaping |= {v for v in program.outputs if isinstance(v, Var)} | mutable_vars(program.body)
    cuts = set()
    for eqn in top:
        if _fn(eqn) not in _SUB or len(eqn.outputs) != 1:
            continue
        m = eqn.input("x2")
        axes = _shift_axes(definitions.get(m)) if isinstance(m, Var) else None
        if axes not in (None, "all") and definitions[m].input("a") != eqn.input("x1"):
            continue  # a - max(b, axis): the axes line up only if a is b (a could have more dimensions)
        if axes is not None and _invariant_uses(eqn.outputs[0], axes, escaping, top):
            cuts.add((eqn.outputs[0], "x2"))
    return frozenset(cuts)


def _fn(eqn):
    return getattr(eqn.op, "fn", None)


def _shift_axes(eqn):
    """The axes a reduction's result is constant along (kept with keepdims), "all", or None if not a reduction."""
    if eqn is None or _fn(eqn) not in _REDUCTIONS:
        return None
    axis, keepdims = _known(eqn.input("axis")), _known(eqn.input("keepdims"))
    if axis is _UNKNOWN or keepdims is _UNKNOWN:
        return None
    if axis is None:
        return "all"
    return _axes(axis) if keepdims is True else None


_UNKNOWN = object()


def _known(atom):
    """The value of a constant atom (a tuple of constants too), else _UNKNOWN."""
    if isinstance(atom, Const):
        return atom.value
    if isinstance(atom, Pack) and atom.kind == "tuple" and all(isinstance(i, Const) for i in atom.items):
        return tuple(i.value for i in atom.items)
    return _UNKNOWN


def _axes(value):
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(sorted(value))
    return None


def _invariant_uses(z, axes, escaping, top) -> bool:
    """Whether every use of `z`, followed forward, ends in values invariant to shifting `z` along `axes`."""
    state = {z: SHIFTED}
    for eqn in top[next(i for i, e in enumerate(top) if z in e.outputs) + 1:]:
        tracked = [v for v in eqn.reads if v in state]
        if not tracked:
            continue
        if all(state[v] == INVARIANT for v in tracked):
            state.update((v, INVARIANT) for v in eqn.outputs)
            continue
        result = _transfer(eqn, state, axes)
        if result is None or len(eqn.outputs) != 1:
            return False
        state[eqn.outputs[0]] = result
    return not any(s != INVARIANT and v in escaping for v, s in state.items())


def _transfer(eqn, state, axes):
    """The state of `eqn`'s output from its inputs' (untracked inputs are independent of the shift), or None."""
    fn = _fn(eqn)
    keys = tuple(k for k, _ in eqn.inputs)
    if (fn in _SUB + _ADD + _MUL + _DIV and keys != ("x1", "x2")) or (fn in (np.exp, np.log) and keys != ("x",)):
        return None

    def of(key):
        atom = eqn.input(key)
        if axes != "all" and not (isinstance(atom, Var) and state.get(atom) in (SHIFTED, SCALED)) \
                and not (isinstance(atom, Const) and type(atom.value) in (int, float)):
            return OTHER  # an array could broadcast z to more dimensions, moving the shift's axes
        return state.get(atom, INVARIANT) if isinstance(atom, Var) else INVARIANT

    if fn in _SUB or fn in _ADD:
        left, right = of("x1"), of("x2")
        if left == SHIFTED and right == INVARIANT:
            return SHIFTED
        if fn in _ADD and left == INVARIANT and right == SHIFTED:
            return SHIFTED
        if fn in _SUB and left == right == SHIFTED:
            return INVARIANT
        return None
    if fn in _MUL or fn in _DIV:
        left, right = of("x1"), of("x2")
        if left == SCALED and right == INVARIANT or (fn in _MUL and left == INVARIANT and right == SCALED):
            return SCALED
        if fn in _DIV and left == right == SCALED:
            return INVARIANT
        return None
    if fn is np.exp:
        return SCALED if of("x") == SHIFTED else None
    if fn is np.log:
        return SHIFTED if of("x") == SCALED else None
    if fn in _REDUCTIONS and _reduces_along(eqn, axes):
        kind = of("a")
        if fn in _PEAKS:
            return SHIFTED if kind == SHIFTED else None
        if fn is np.mean:
            return kind if kind in (SHIFTED, SCALED) else None
        return SCALED if kind == SCALED else None
    return None


def _reduces_along(eqn, axes) -> bool:
    """A reduction that keeps the shift a constant: over exactly the shift's axes with keepdims, or any if it is global."""
    if {k for k, _ in eqn.inputs} - {"a", "axis", "keepdims", "dtype"} or _known(eqn.input("dtype")) is not None:
        return False
    axis, keepdims = _known(eqn.input("axis")), _known(eqn.input("keepdims"))
    if axis is _UNKNOWN or keepdims is _UNKNOWN:
        return False
    return axes == "all" or (axis is not None and _axes(axis) == axes and keepdims is True)

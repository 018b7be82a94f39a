"""Shape specialization: generated code that knows its shapes, behind a guard.

A gradient function spends much of its time on small runtime questions: is
this cotangent already shaped like that input (`unbroadcast`), what shape is
this value (`shape`). On the first call tapegen runs an instrumented variant
that records the shape and dtype of every forward value, then writes a second
variant where the answers are constants: `unbroadcast(g, (3, 2))` on a
cotangent already of shape (3, 2) disappears, `x_shape = shape(x)` becomes a
literal. That variant starts with a guard on its arguments' types, shapes and
dtypes (and the values of int, bool and str arguments); any other call runs
the general code. An int argument's value is left out of the guard where no
trusted shape depends on it (`for t in range(n)` over rows of the same shape):
`unpinned` decides.

A recorded shape is used only if it is *trusted*: fixed by what the guard
checks, whatever the data. `trusted_shapes` works that out: values computed
by shape-preserving primitives from trusted inputs, with every non-array input
(an axis, an index, a length) itself fixed by the guard and not by float
data; never a boolean-mask index, an opaque call, `np.nonzero`/`np.unique`,
nor a value whose recorded shape varied between loop iterations.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Const, Eqn, Loop, Pack, Var, atom_vars, walk

# Outputs whose shape depends on the *values* of their array inputs.
DATA_SHAPED = {"nonzero", "unique", "flatnonzero", "argwhere", "extract", "compress", "where_1", "repeat"}
# Ops producing small values (ints, tuples) fixed by their inputs' shapes alone.
METADATA = {"shape", "meta", "metadata", "len", "ndim", "size"}
_MAX_LEAVES = 64


@dataclass(frozen=True)
class Recorded:
    """What a recording run saw of one var: each distinct (kind, shape, dtype)."""

    seen: frozenset


def signature(value, depth=0):
    """A hashable description of an argument the guard can check, or None if it cannot be guarded."""
    kind = type(value)
    if kind is np.ndarray:
        return ("array", value.shape, value.dtype)
    if kind is float:
        return ("float",)
    if kind in (int, bool, str) or value is None:
        return ("value", kind, value)
    if isinstance(value, np.generic):
        return ("scalar", kind)
    if depth < 2 and kind in (dict, list, tuple) and len(value) <= _MAX_LEAVES:
        items = value.items() if kind is dict else enumerate(value)
        parts = tuple((key, signature(item, depth + 1)) for key, item in items)
        if all(part is not None for _, part in parts) and (kind is not dict or all(
                isinstance(key, str) for key, _ in parts)):
            return ("container", kind, parts)
    return None


def describe(value):
    """(kind, shape, dtype) of a recorded forward value."""
    if type(value) is np.ndarray:
        return ("array", value.shape, value.dtype)
    if type(value) is float:
        return ("float", (), np.dtype(float))
    if isinstance(value, np.generic):
        return ("scalar", (), value.dtype)
    if type(value) in (int, bool):
        return ("int", (), None)
    return ("other", None, None)


def trusted_shapes(program, records, signatures, executed=None) -> dict:
    """{var: (shape, dtype)} for the forward values whose recorded shape holds for every guarded call.

    `executed` (ordinals of the equations of `walk(program.body)` that ran in the recording, if known):
    a value is trusted only if every equation assigning it ran. A branch not taken, say on the sign of
    the data, was never seen to give its value the recorded shape.
    """
    eqns = [e for e in walk(program.body) if isinstance(e, Eqn)]
    known, containers = {}, set()
    for param, sig in zip(program.params, signatures):
        if sig is not None and sig[0] == "array":
            known[param] = (sig[1], sig[2])
        elif sig is not None and sig[0] == "float":
            known[param] = ((), np.dtype(float))
        elif sig is not None and sig[0] == "container":
            containers.add(param)
    candidates = {}
    for var, seen in records.items():
        if len(seen) == 1:
            kind, shape, dtype = next(iter(seen))
            if kind in ("array", "float", "scalar"):
                candidates[var] = (shape, dtype)
    definers: dict = {}
    for eqn in eqns:
        for out in eqn.outputs:
            definers.setdefault(out, []).append(eqn)
    trusted = {v for v in candidates if v in definers}
    if executed is not None:
        unseen = {id(e) for k, e in enumerate(eqns) if k not in executed}
        trusted = {v for v in trusted if not any(id(d) in unseen for d in definers[v])}
    counters = _range_targets(program, definers)
    while True:  # shrink both sets together until each is consistent with the other
        shaped = trusted | set(known)
        static = _static_values(program, eqns, signatures, shaped)
        kept = {v for v in trusted
                if all(_pure(e, shaped, static, records, containers, counters) for e in definers[v])}
        if kept == trusted:
            break
        trusted = kept
    known.update({v: candidates[v] for v in trusted})
    return known


def _pure(eqn, shaped, static, records, containers, counters=frozenset()) -> bool:
    """Whether `eqn`'s output shape is fixed by trusted shapes and static values."""
    op = eqn.op
    name = getattr(op, "name", "")
    if getattr(op, "form", "") in ("opaque", "custom") or name in DATA_SHAPED:
        return False
    if name == "getitem" and eqn.input("a") in containers and isinstance(eqn.input("index"), Const):
        return True  # params["W"]: the guard checks that leaf
    for key, atom in eqn.inputs:
        for var in atom_vars(atom):
            if name == "getitem" and key == "index":
                # An index fixed by the guard, or an integer array (the result has its shape); never a
                # boolean mask, however trusted its own shape: what it selects depends on the data.
                if var in static or var in counters or _int_array(records.get(var)):
                    continue
                return False
            if var in shaped or var in static:
                continue
            return False
    return True


def _range_targets(program, definers) -> set:
    """Targets of loops over `range(...)`: ints whatever the bounds, so `xs[t]` has the shape of a row of
    `xs` for every t (an index whose value, not its shape, depends on the loop count)."""
    found = set()
    for loop in (s for s in walk(program.body) if isinstance(s, Loop)):
        iterable = loop.iterable
        if loop.target is not None and isinstance(iterable, Var) and definers.get(iterable) and all(
                getattr(d.op, "name", "") == "range" for d in definers[iterable]) \
                and definers.get(loop.target, []) == []:
            found.add(loop.target)
    return found


def _int_array(seen) -> bool:
    return bool(seen) and all(kind == "array" and dtype is not None and dtype.kind in "iu"
                              for kind, _, dtype in seen)


def unpinned(program, records, signatures, executed, known=None) -> tuple:
    """`signatures` with each int argument's value replaced by its type where the trusted shapes stay the same
    without it: a loop count, say, whose loop computes the same shapes however often it runs.

    Sound because every equation defining a trusted value ran in the recording (`executed`, see
    trusted_shapes): a loop body that never ran was seen to keep no shape; each equation that did run
    was seen to give its output the recorded shape from its inputs' recorded shapes.
    """
    if known is None:  # what trusted_shapes gives for `signatures`, if the caller has it
        known = trusted_shapes(program, records, signatures, executed)
    for i, sig in enumerate(signatures):
        if sig is not None and sig[0] == "value" and sig[1] is int:
            trial = signatures[:i] + (("int",),) + signatures[i + 1:]
            if trusted_shapes(program, records, trial, executed) == known:
                signatures = trial
    return signatures


def _static_values(program, eqns, signatures, shaped) -> set:
    """Non-array values (ints, tuples, slices, ranges) fixed by the guard, never by float data.

    A var is static only when every statement assigning it is (`hs = []` is, `hs.append(h)` is not).
    """
    static = {p for p, sig in zip(program.params, signatures) if sig is not None and sig[0] == "value"}
    loops = [s for s in walk(program.body) if isinstance(s, Loop)]
    definers: dict = {}
    for eqn in eqns:
        for out in eqn.outputs:
            definers.setdefault(out, []).append(eqn)
    for loop in loops:
        if loop.target is not None:
            definers.setdefault(loop.target, []).append(loop)

    def fixed(definer) -> bool:
        if isinstance(definer, Loop):
            return definer.iterable is not None and all(v in static for v in atom_vars(definer.iterable))
        if getattr(definer.op, "form", "") == "opaque":
            return False
        if getattr(definer.op, "name", "") in METADATA:  # a shape or length of a trusted value
            return all(v in shaped or v in static for v in definer.reads)
        return all(v in static for v in definer.reads)  # ints from ints: never float data

    changed = True
    while changed:
        changed = False
        for var, defs in definers.items():
            if var not in static and all(fixed(d) for d in defs):
                static.add(var)
                changed = True
    return static


def guard_source(params, signatures) -> tuple:
    """(a Python condition that holds for calls like the recorded one, the dtype objects it refers to)."""
    dtypes: list = []
    parts = [_guard(p.name, sig, dtypes) for p, sig in zip(params, signatures)]
    return " and ".join(part for part in parts if part) or "True", tuple(dtypes)


def _guard(expr, sig, dtypes) -> str:
    if sig is None:  # not guarded: nothing derived from it is trusted
        return ""
    kind = sig[0]
    if kind == "array":
        dtypes.append(sig[2])
        return f"type({expr}) is ndarray and {expr}.shape == {sig[1]!r} and {expr}.dtype is GUARD_DTYPES[{len(dtypes) - 1}]"
    if kind == "float":
        return f"type({expr}) is float"
    if kind == "int":  # an int whose value nothing specialized depends on (see unpinned)
        return f"type({expr}) is int"
    if kind == "scalar":
        return f"type({expr}) is {_scalar_name(sig[1])}"
    if kind == "value":
        value = sig[2]
        if value is None:
            return f"{expr} is None"
        return f"type({expr}) is {sig[1].__name__} and {expr} == {value!r}"
    if kind == "container":
        container, parts = sig[1], sig[2]
        head = f"type({expr}) is {container.__name__} and len({expr}) == {len(parts)}"
        if container is dict:
            head += f" and {expr}.keys() == {set(k for k, _ in parts)!r}"
        inner = [_guard(f"{expr}[{key!r}]", part, dtypes) for key, part in parts]
        return " and ".join([head] + [i for i in inner if i])
    return ""


def _scalar_name(kind) -> str:
    return f"np.{kind.__name__}"


def known_output(known, atom):
    """(shape, dtype) of an output atom if known, else None."""
    if isinstance(atom, Var):
        return known.get(atom)
    if isinstance(atom, Const) and isinstance(atom.value, float):
        return ((), np.dtype(float))
    return None


__all__ = ["signature", "describe", "trusted_shapes", "guard_source", "known_output", "Recorded", "Pack"]

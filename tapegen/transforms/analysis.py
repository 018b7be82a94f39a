"""Static facts the reverse transform needs about a program, each a pure function of it.

- which values' cotangents can hold the exact zeros of a masking op (np.where's
  untaken branch), so guarded products are used only there;
- which assignments are a var's first on every path (nothing to save);
- which values some rule reads anyway, so shapes can be taken from them in the
  backward pass; and the shape equations to add where they cannot;
- whether a derivative flows through an input (rules read `<param>_active`).
"""
from __future__ import annotations

import numpy as np

from .. import rules
from ..frontend.names import namer_for, reserved_names
from ..ir import Eqn, If, Loop, Pack, Var, atom_vars, walk
from ..runtime import meta
from ..runtime import shape as fast_shape


# Ops whose cotangent is exactly zero where a branch or region was not taken (np.where's other
# branch, the clipped part, the rest of an indexed array). Downstream of them, a rule's
# derivative may be infinite where that zero lands: rules use guarded products there. A guarded
# product of gradient code is one too: its factor's cotangent is zero wherever its cotangent was
# (the second derivative of `np.where(x != 0, np.sin(x) / x, 1.0)` at 0).
_MASKING = {"where", "select", "maximum", "minimum", "fmax", "fmin", "clip", "getitem", "piecewise",
            "guarded_mul", "guarded_div", "kink_div", "safe_div", "zero_region"}


def masked_cotangents(program) -> set:
    """Vars whose cotangent may contain such zeros: their values flow into a masking op, directly
    or through any op whose output's cotangent is masked."""
    eqns = [e for e in walk(program.body) if isinstance(e, Eqn)]
    masked, changed = set(), True
    while changed:
        changed = False
        for eqn in eqns:
            masking = getattr(eqn.op, "name", None) in _MASKING
            if masking or any(o in masked for o in eqn.outputs):
                for key, atom in eqn.inputs:
                    if key in ("condition", "index", "condlist"):
                        continue
                    for var in atom_vars(atom):
                        if var not in masked:
                            masked.add(var)
                            changed = True
    return masked


def broadcasting(op) -> bool:
    """Ufuncs and Python's arithmetic operators (and np.where): a rule's result has the output's shape
    before it is unbroadcast to an input's."""
    return isinstance(getattr(op, "fn", None), np.ufunc) or getattr(op, "form", "") == "binop" \
        or getattr(op, "name", "") in ("where", "clip")


def active_flags(atom, activity):
    """Whether a derivative flows through an input: a bool, or a tuple of bools for a list."""
    if isinstance(atom, Pack):
        return tuple(any(activity.varying_var(v) for v in atom_vars(item)) for item in atom.items)
    return any(activity.varying_var(v) for v in atom_vars(atom))


def initial_assignments(body) -> set:
    """(id(eqn), var) for a var's first assignment on every path, outside loops: no old value to save."""
    initial = set()

    def visit(stmts, defined):
        for stmt in stmts:
            if isinstance(stmt, Eqn):
                for var in stmt.outputs:
                    if var not in defined:
                        initial.add((id(stmt), var))
                    defined.add(var)
            elif isinstance(stmt, If):
                then, orelse = visit(stmt.then, set(defined)), visit(stmt.orelse, set(defined))
                defined |= then | orelse
            elif isinstance(stmt, Loop):
                from ..ir import assigned
                defined |= set(assigned([stmt]))
        return defined

    visit(body, set())
    return initial


def with_saved_shapes(program, activity, known=None):
    """Insert `x_shape = np.shape(x)` before each rule's consumer where `x` itself is not kept.

    These become ordinary equations, so inside loops the tape saves them like any other value.
    """
    outside = set(program.params) | set(program.free)
    namer = namer_for(program, reserved_names())
    derived, cache = {}, {}

    def visit(stmts, available, in_loop=False):
        out = []
        for stmt in stmts:
            if isinstance(stmt, Eqn):
                for key in activity.needs_rule(stmt):
                    for name in stmt.op.vjps[key].reads:
                        param, _, suffix = name.rpartition("_")
                        atom = stmt.input(param)
                        if suffix in ("shape", "meta") and isinstance(atom, Var) and atom not in available \
                                and name not in dict(stmt.inputs) and atom not in (known or {}):
                            if (atom, suffix) not in cache:
                                prim = rules.lookup(fast_shape if suffix == "shape" else meta)
                                var = namer.derived(atom, suffix)
                                out.append(Eqn(prim, (("a", atom),), (var,), stmt.span))
                                cache[(atom, suffix)] = var
                            derived[(id(stmt), atom, suffix)] = cache[(atom, suffix)]
                out.append(stmt)
                for var in stmt.outputs:  # the value changed: it may have a new shape
                    cache.pop((var, "shape"), None)
                    cache.pop((var, "meta"), None)
            elif isinstance(stmt, If):
                cache.clear()
                then = tuple(visit(stmt.then, available, in_loop))
                cache.clear()
                out.append(stmt.with_blocks(then, visit(stmt.orelse, available, in_loop)))
                cache.clear()
            elif isinstance(stmt, Loop):
                cache.clear()
                # in a loop, a value only rules after it read would be kept on the tape just for its shape
                inner = available if in_loop else outside | rule_value_reads(stmt.body, activity)
                out.append(Loop(stmt.kind, stmt.target, stmt.iterable, stmt.test_body, stmt.test,
                                tuple(visit(stmt.body, inner, True)), stmt.counter, stmt.span))
                cache.clear()
            else:
                out.append(stmt)
        return out

    body = tuple(visit(program.body, available_in_backward(program, activity)))
    from dataclasses import replace
    return replace(program, body=body), derived


def available_in_backward(program, activity) -> set:
    """Values the backward pass has anyway: arguments, and what some rule reads."""
    return set(program.params) | set(program.free) | rule_value_reads(program.body, activity)


def rule_value_reads(body, activity) -> set:
    """Vars whose values some rule in `body` will read (so their shapes can be taken in the backward pass)."""
    found = set()
    for eqn in walk(body):
        if not isinstance(eqn, Eqn):
            continue
        keys = activity.needs_rule(eqn)
        inputs = dict(eqn.inputs)
        for key in keys:
            for name in eqn.op.vjps[key].reads:
                if name == "y":
                    found.update(eqn.outputs)
                elif name in inputs:
                    found.update(atom_vars(inputs[name]))
    return found

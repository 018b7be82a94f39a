"""Freeing values as soon as their last use has run: `del` statements in generated code.

NumPy frees an array when its last reference goes. In a generated function
every temporary is a local variable, alive until the function returns unless
it is deleted; without `del`, a 64-layer chain would keep every cotangent of
every layer alive through the backward pass. `with_frees` inserts
`del a, b` right after the last top-level statement that reads them.

Only names bound on every path are deleted (assigned by a top-level
statement, or pre-set tape slots), so a `del` can never fail.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..ir import Eqn, Exit, Guard, If, Loop, Pop, Push, Var, atom_vars


# Ops whose results are small bookkeeping (shapes, lengths, ranges): not worth a `del` line.
_SMALL = {"shape", "meta", "metadata", "len", "range", "ndim", "size"}


@dataclass(frozen=True)
class Free:
    """`del vars`: these values are not needed any more."""

    vars: tuple
    span: object = None


def reads(stmt) -> set:
    """Every var a statement reads, including inside its blocks."""
    if isinstance(stmt, Eqn):
        return set(stmt.reads)
    if isinstance(stmt, If):
        return set(atom_vars(stmt.cond)) | _block_reads(stmt.then) | _block_reads(stmt.orelse)
    if isinstance(stmt, Loop):
        found = {stmt.counter} | _block_reads(stmt.test_body) | _block_reads(stmt.body)
        found |= set(atom_vars(stmt.iterable)) if stmt.iterable is not None else set()
        found |= set(atom_vars(stmt.test)) if stmt.test is not None else set()
        return found
    if isinstance(stmt, Push):
        return set(stmt.value.reads) if isinstance(stmt.value, Eqn) else set(atom_vars(stmt.value))
    if isinstance(stmt, Pop):
        return {stmt.var} | (set(atom_vars(stmt.index)) if stmt.index is not None else set())
    if isinstance(stmt, Guard):
        return {stmt.var} | _block_reads(stmt.body)
    return set()


def _block_reads(stmts) -> set:
    found = set()
    for stmt in stmts:
        found |= reads(stmt)
    return found


def with_frees(stmts, keep, bound=()) -> list:
    """`stmts` with `Free` statements after the last top-level read of each deletable var.

    Args:
        stmts: top-level statements of one generated function.
        keep: vars still needed after `stmts` (returned values, gradients, arguments).
        bound: vars bound before `stmts` run (tape slots, unpacked residuals).
    """
    keep = set(keep)
    definite = set(bound)
    for stmt in stmts:
        if isinstance(stmt, Eqn) and getattr(stmt.op, "name", None) not in _SMALL:
            definite.update(v for v in stmt.outputs if v.name != "_")
    last = {}
    for i, stmt in enumerate(stmts):
        for var in reads(stmt):
            last[var] = i
    for i, stmt in enumerate(stmts):  # defined but never read: free right after
        if isinstance(stmt, Eqn):
            for var in stmt.outputs:
                last.setdefault(var, i)
    after: dict = {}
    for var, i in last.items():
        if isinstance(var, Var) and var in definite and var not in keep:
            after.setdefault(i, []).append(var)
    out = []
    for i, stmt in enumerate(stmts):
        out.append(_freeing(stmt, stmts, keep) if isinstance(stmt, Loop) else stmt)
        if i in after:
            out.append(Free(tuple(sorted(after[i], key=lambda v: v.name)), getattr(stmt, "span", None)))
    return out


def _freeing(loop, siblings, keep):
    """`loop` with `del` in its body for values each iteration makes and uses up.

    A value assigned in the body is deleted after its last read there unless it is read
    outside the body (after the loop, in the other pass, in the loop's head) or carried to
    the next iteration (read in the body before the body assigns it). Without this, the
    last iteration's temporaries would stay alive through the whole backward pass.
    """
    outside = set(keep) | {loop.counter} | ({loop.target} if loop.target is not None else set())
    outside |= set(atom_vars(loop.iterable)) if loop.iterable is not None else set()
    outside |= _block_reads(loop.test_body) | (set(atom_vars(loop.test)) if loop.test is not None else set())
    outside |= {v for stmt in loop.test_body if isinstance(stmt, Eqn) for v in stmt.outputs}
    for stmt in siblings:
        if stmt is not loop:
            outside |= reads(stmt)
    carried, assigned = set(), set()
    for stmt in loop.body:
        carried |= reads(stmt) - assigned
        if isinstance(stmt, Eqn):
            assigned.update(stmt.outputs)
    return replace(loop, body=tuple(with_frees(loop.body, outside | carried)))


__all__ = ["Free", "with_frees", "reads", "Exit"]

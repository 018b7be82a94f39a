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

from collections import Counter
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
        return set(stmt.reads) | _block_reads(stmt.then) | _block_reads(stmt.orelse)
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
        keep: vars still needed after `stmts` (returned values, gradients, arguments): a set, or a _Kept.
        bound: vars bound before `stmts` run (tape slots, unpacked residuals).
    """
    keep = keep if isinstance(keep, _Kept) else set(keep)
    definite = set(bound)
    for stmt in stmts:
        if isinstance(stmt, Eqn) and getattr(stmt.op, "name", None) not in _SMALL:
            definite.update(v for v in stmt.outputs if v.name != "_")
    read = [reads(stmt) for stmt in stmts]
    last = {}
    for i, found in enumerate(read):
        for var in found:
            last[var] = i
    for i, stmt in enumerate(stmts):  # defined but never read: free right after
        if isinstance(stmt, Eqn):
            for var in stmt.outputs:
                last.setdefault(var, i)
    after: dict = {}
    for var, i in last.items():
        if isinstance(var, Var) and var in definite and var not in keep:
            after.setdefault(i, []).append(var)
    readers = None  # var -> how many of `stmts` read it, for the loops among them
    out = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, Loop):
            if readers is None:
                readers = Counter(var for found in read for var in found)
            # a var bound outside the loop too (`k = 0` before `for t in ...: k = t`) is freed after it, once
            stmt = _freeing(stmt, _Kept(keep, readers, read[i], frozenset(definite)))
        out.append(stmt)
        if i in after:
            out.append(Free(tuple(sorted(after[i], key=lambda v: v.name)), getattr(stmt, "span", None)))
    return out


class _Kept:
    """Vars needed after a loop's body: `keep`, what the loop's siblings read (each var's count of readers
    among them, less the loop itself), and `extra`. Asked var by var: building the set for each of many
    loops in a function was quadratic in its length."""

    def __init__(self, keep, readers, own, extra=frozenset()):
        self.keep, self.readers, self.own, self.extra = keep, readers, own, extra

    def __contains__(self, var) -> bool:
        return var in self.extra or var in self.keep or self.readers.get(var, 0) > (var in self.own)

    def adding(self, extra) -> "_Kept":
        return _Kept(self.keep, self.readers, self.own, self.extra | extra)


def _freeing(loop, outside):
    """`loop` with `del` in its body for values each iteration makes and uses up.

    A value assigned in the body is deleted after its last read there unless it is read
    outside the body (after the loop, in the other pass, in the loop's head: `outside`, to which the
    head is added here) or carried to the next iteration (read in the body before the body assigns it).
    Without this, the last iteration's temporaries would stay alive through the whole backward pass.
    """
    head = {loop.counter} | ({loop.target} if loop.target is not None else set())
    head |= set(atom_vars(loop.iterable)) if loop.iterable is not None else set()
    head |= _block_reads(loop.test_body) | (set(atom_vars(loop.test)) if loop.test is not None else set())
    head |= {v for stmt in loop.test_body if isinstance(stmt, Eqn) for v in stmt.outputs}
    carried, assigned = set(), set()
    for stmt in loop.body:
        carried |= reads(stmt) - assigned
        if isinstance(stmt, Eqn):
            assigned.update(stmt.outputs)
    return replace(loop, body=tuple(with_frees(loop.body, outside.adding(head | carried))))


__all__ = ["Free", "with_frees", "reads", "Exit"]

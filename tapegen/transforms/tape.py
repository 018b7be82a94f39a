"""The forward pass with its tape: the primal statements plus what the backward pass will need.

Before a reassigned var that some rule reads is overwritten, its old value is
pushed; `A[i] = v` pushes the region it overwrites; each branch pushes which
way it went, a nested loop its trip count. Everything else runs as written.
"""
from __future__ import annotations

from .. import rules
from ..ir import Const, Eqn, Exit, If, Loop, Push, walk


class ForwardPass:
    """The primal statements plus what the tape must record for the backward pass."""

    def __init__(self, program, backward, needed: set, restores=None, unsaved=frozenset()):
        self.program = program
        self.unsaved = unsaved  # ids of setitem eqns whose overwritten region the backward pass never restores
        self.backward = backward
        self.needed = needed
        self.restores = restores or {}  # top-level loop's counter -> the only vars its backward restores
        self.restored = None  # in such a loop: its restores
        self.mutable = backward.mutable
        self.uses_tape = False
        self.slots: dict = {}  # vars pushed before their first assignment (start as None), in order
        counters = {s.counter for s in walk(program.body) if isinstance(s, Loop)}
        targets = {s.target for s in walk(program.body) if isinstance(s, Loop) and s.target is not None}
        self.untracked = counters | targets
        self.initial = backward.initial
        self.bound = set(program.params)  # vars surely bound where the statement being made runs

    def block(self, stmts, in_loop) -> list:
        out = []
        for stmt in stmts:
            if isinstance(stmt, Eqn):
                out += self.saves(stmt)
                out.append(stmt)
                self.bound.update(stmt.outputs)
            elif isinstance(stmt, If):
                out.append(self.branch(stmt, in_loop))
            elif isinstance(stmt, Loop):
                out += self.loop(stmt, in_loop)
            else:
                out.append(stmt)
        return out

    def saves(self, eqn) -> list:
        """Pushes of the values `eqn` is about to overwrite, where the backward pass reads them."""
        out = []
        for o in eqn.outputs:
            if o not in self.mutable or o in self.untracked or (id(eqn), o) in self.initial or id(eqn) in self.unsaved:
                continue
            if (eqn.op.name in ("append", "tape_pop") and o is eqn.outputs[-1]) or \
                    (eqn.op.name != "setitem" and o not in self.needed) or \
                    (eqn.op.name != "setitem" and self.restored is not None and o not in self.restored):
                continue
            self.uses_tape = True
            if eqn.op.name == "setitem":
                expr = Eqn(rules.lookup(_saved_region()), (("a", o), ("index", eqn.input("index"))), (), eqn.span)
                out.append(Push(expr, eqn.span))
            else:
                if o not in self.bound:  # (`if c: L = a` then `if not c: L = b` pushes L, unset where c held)
                    self.slots[o] = None
                out.append(Push(o, eqn.span))
        return out

    def branch(self, stmt, in_loop) -> If:
        before = set(self.bound)
        then = self.block(stmt.then, in_loop)
        self.bound, after_then = set(before), self.bound
        orelse = self.block(stmt.orelse, in_loop)
        self.bound = after_then if stmt.manager is not None else self.bound & after_then  # (a `with`: always)
        if id(stmt) in self.backward.flagged:
            self.uses_tape = True
            then = _before_exits(then, Push(Const(True), stmt.span))
            orelse = _before_exits(orelse, Push(Const(False), stmt.span))
        return stmt.with_blocks(then, orelse)

    def loop(self, stmt, in_loop) -> list:
        if not in_loop:
            self.restored = self.restores.get(stmt.counter)
        before = set(self.bound)  # what a pass binds is bound in the next only if the loop ran
        body = self.block(stmt.body, in_loop=True)
        test_body = self.block(stmt.test_body, in_loop=True)
        self.bound = before
        if not in_loop:
            self.restored = None
        loop = Loop(stmt.kind, stmt.target, stmt.iterable, tuple(test_body), stmt.test, tuple(body),
                    stmt.counter, stmt.span)
        if id(stmt) in self.backward.counted:
            self.uses_tape = True
            return [loop, Push(stmt.counter, stmt.span)]
        return [loop]


def _before_exits(stmts, push) -> list:
    """`stmts` with `push` at its end and before every break/continue that leaves it early.

    An exit nested in an inner `if` leaves this arm too; one inside an inner loop leaves only that
    loop. Inner pushes come first, so the backward pass pops this arm's direction before them.
    """
    out = _push_before_nested_exits(stmts, push)
    return out if out and isinstance(out[-1], Exit) else out + [push]


def _push_before_nested_exits(stmts, push) -> list:
    out = []
    for stmt in stmts:
        if isinstance(stmt, Exit):
            out += [push, stmt]
        elif isinstance(stmt, If):
            out.append(stmt.with_blocks(_push_before_nested_exits(stmt.then, push),
                                        _push_before_nested_exits(stmt.orelse, push)))
        else:
            out.append(stmt)
    return out


def _saved_region():
    from ..rules.language import saved_region
    return saved_region

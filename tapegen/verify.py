"""The IR verifier: run after every pass in tests (and cheaply in production).

Checks single assignment, definition before use, that every op is known and
every equation has a span. A failure is a tapegen bug; the message shows the
printed IR around the bad equation.
"""
from __future__ import annotations

from .errors import InternalError
from .ir import Eqn, Exit, Guard, If, Loop, Pop, Program, Push, listing, mutable_vars


def verify(program: Program) -> Program:
    """Check `program`; return it unchanged, or raise InternalError."""
    defined = set(program.params) | set(program.free)
    check_body(program.body, defined, program.name, mutable_vars(program.body))
    for atom in program.outputs:
        _check_reads_atom(atom, defined, program.body, len(program.body), program.name)
    return program


def check_body(body, defined: set, where: str, mutable=frozenset()) -> set:
    """Verify statements in order against the vars `defined` before them; return all defined after.

    Only `mutable` vars (assigned in a loop or in several places) may be assigned twice.
    """
    _check_block(body, _Scopes((defined,)), where, mutable)
    return defined


class _Scopes:
    """The vars defined so far: the enclosing blocks' sets and, last, this block's own (added to). A nested
    block gets a new set of its own, not a copy of all before it (a copy per branch was quadratic)."""

    def __init__(self, sets):
        self.sets = sets

    def __contains__(self, var) -> bool:
        for defined in self.sets:
            if var in defined:
                return True
        return False

    def add(self, var) -> None:
        self.sets[-1].add(var)

    def nested(self, *inner) -> "_Scopes":
        return _Scopes(self.sets + inner)


def _check_block(body, defined, where, mutable) -> None:
    for i, stmt in enumerate(body):
        if isinstance(stmt, Eqn):
            if stmt.span is None or not hasattr(stmt.op, "name"):
                raise _bug("malformed equation", body, i, where)
            for var in stmt.reads:
                if var not in defined:
                    raise _bug(f"{var} is read before it is defined", body, i, where)
            for var in stmt.outputs:
                if var.name != "_" and var in defined and var not in mutable:
                    raise _bug(f"{var} is assigned twice", body, i, where)
                defined.add(var)
        elif isinstance(stmt, If):
            _check_reads_atom(stmt.cond, defined, body, i, where)
            if stmt.catch is not None:
                _check_reads_atom(stmt.catch.classes, defined, body, i, where)
            then, orelse = set(), ({stmt.catch.bound} if stmt.catch is not None else set())
            _check_block(stmt.then, defined.nested(then), where, mutable)
            _check_block(stmt.orelse, defined.nested(orelse), where, mutable)
            defined.sets[-1].update(then, orelse)
        elif isinstance(stmt, Loop):
            defined.add(stmt.counter)
            if stmt.target is not None:
                defined.add(stmt.target)
            test, inner = set(), set()
            _check_block(stmt.test_body, defined.nested(test), where, mutable)
            _check_block(stmt.body, defined.nested(test, inner), where, mutable)
            defined.sets[-1].update(test, inner)
        elif isinstance(stmt, Guard):
            inner = set()
            _check_block(stmt.body, defined.nested(inner), where, mutable)
            defined.sets[-1].update(inner)
        elif isinstance(stmt, Pop):
            defined.add(stmt.var)
        elif not isinstance(stmt, (Exit, Push)):
            raise _bug(f"unknown statement {stmt!r}", body, i, where)


def verify_adjoint(adjoint) -> None:
    """Check the forward pass, then the backward pass against the forward values and seeds."""
    program = adjoint.primal
    anything = _Anything()
    defined = check_body(adjoint.forward, set(program.params) | set(program.free) | set(adjoint.tape_slots),
                         f"forward {program.name}", anything)
    check_body(adjoint.backward, defined | set(adjoint.seeds), f"backward {program.name}", anything)


class _Anything(frozenset):
    """Generated passes reassign freely (cotangent accumulation, restores)."""

    def __contains__(self, item):
        return True


def _check_reads_atom(atom, defined, body, i, where):
    from .ir import atom_vars
    for var in atom_vars(atom):
        if var not in defined:
            raise _bug(f"{var} is returned but never defined", body, i, where)


def _bug(message, body, i, where):
    rows = listing(body[max(0, i - 3):i + 2])
    return InternalError(f"IR check failed in {where}: {message} (this is a tapegen bug; please report it)\n"
                         + "\n".join(rows))

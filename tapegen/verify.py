"""The IR verifier: run after every pass in tests (and cheaply in production).

Checks single assignment, definition before use, that every op is known and
every equation has a span. A failure is a tapegen bug; the message shows the
printed IR around the bad equation.
"""
from __future__ import annotations

from .errors import InternalError
from .ir import Eqn, Program, listing


def verify(program: Program) -> Program:
    """Check `program`; return it unchanged, or raise InternalError."""
    defined = set(program.params) | set(program.free)
    check_body(program.body, defined, program.name)
    for atom in program.outputs:
        _check_reads_atom(atom, defined, program.body, len(program.body), program.name)
    return program


def check_body(body, defined: set, where: str) -> set:
    """Verify equations in order against the vars `defined` before them; return all defined after."""
    for i, eqn in enumerate(body):
        if not isinstance(eqn, Eqn) or eqn.span is None or not hasattr(eqn.op, "name"):
            raise _bug("malformed equation", body, i, where)
        for var in eqn.reads:
            if var not in defined:
                raise _bug(f"{var} is read before it is defined", body, i, where)
        for var in eqn.outputs:
            if var.name == "_":
                continue
            if var in defined:
                raise _bug(f"{var} is assigned twice", body, i, where)
            defined.add(var)
    return defined


def verify_adjoint(adjoint) -> None:
    """Check the forward pass, then the backward pass against the forward values and seeds."""
    program = adjoint.primal
    defined = check_body(adjoint.forward, set(program.params) | set(program.free), f"forward {program.name}")
    check_body(adjoint.backward, defined | set(adjoint.seeds), f"backward {program.name}")


def _check_reads_atom(atom, defined, body, i, where):
    from .ir import atom_vars
    for var in atom_vars(atom):
        if var not in defined:
            raise _bug(f"{var} is returned but never defined", body, i, where)


def _bug(message, body, i, where):
    rows = listing(body[max(0, i - 3):i + 2])
    return InternalError(f"IR check failed in {where}: {message} (this is a tapegen bug; please report it)\n"
                         + "\n".join(rows))

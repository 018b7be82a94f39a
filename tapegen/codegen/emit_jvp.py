"""Writing a Tangent program as a readable Python module: `<name>(params..., <wrt>_dot...)`.

The function runs the primal statements with each one's tangent right after
it, and returns `(value, tangent)` (tuples of them for a function returning
a tuple). Comments quote the user's line above each group of statements, as
in gradient code (see emit.py); loops and branches keep their shape.
"""
from __future__ import annotations

import ast
import functools

from ..ir import Eqn, Exit, If, Loop
from ..transforms.forward import TangentSum
from ..transforms.reverse import RuleApplication
from .emit import INDENT, atom_text, header, to_text_expr, try_lines
from .render import expression, statement, to_text


def jvp_module(tangent, name: str) -> str:
    """Source of `<name>(params, tangents) -> (value, tangent of the value)`."""
    program = tangent.primal
    wrt = ", ".join(v.name for v in tangent.wrt)
    lines = header(program, f"value and Jacobian-vector product (tangent) with respect to {wrt}")
    params = [p.name for p in program.params] + [t.name for t in tangent.tangent_params]
    lines.append(f"def {name}({', '.join(params)}):")
    body = _lines(tangent.body)
    outs = [_output_tangent(atom, t) for atom, t in zip(program.outputs, tangent.output_tangents)]
    if program.returns_tuple:
        values = ", ".join(atom_text(a) for a in program.outputs)
        body.append(f"return ({values}{',' if len(outs) == 1 else ''}), "
                    f"({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    else:
        body.append(f"return {atom_text(program.outputs[0])}, {outs[0]}")
    lines += [INDENT + line for line in body]
    return "\n".join(lines) + "\n"


def _output_tangent(atom, tangent) -> str:
    """The tangent of an output (a zero like it if nothing reaches it).

    Not conformed to the output here: a caller may pass tangents with a
    leading batch axis (`tapegen.jacobian`); `tapegen.jvp` conforms them.
    """
    return f"zero_tangent({atom_text(atom)})" if tangent is None else tangent.name


def _lines(stmts) -> list:
    lines, last = [], None
    for stmt in stmts:
        if isinstance(stmt, (If, Loop)):
            last = None
        else:
            key = (stmt.span.file, stmt.span.line)
            if key != last:
                lines.append(f"# {stmt.span.file}:{stmt.span.line}   {stmt.span.text.strip()}")
                last = key
        lines += _statement_lines(stmt)
    return lines


def _statement_lines(stmt) -> list:
    if isinstance(stmt, Eqn):
        node = tangent_statement(stmt) if isinstance(stmt.op, TangentSum) else statement(stmt)
        return to_text(node).splitlines()
    if isinstance(stmt, Exit):
        return [stmt.kind]
    comment = f"  # {stmt.span.file}:{stmt.span.line}   {stmt.span.text.strip()}"
    if isinstance(stmt, If):
        then, orelse = _lines(stmt.then), _lines(stmt.orelse)
        if stmt.catch is not None:
            return try_lines(stmt, then, orelse, comment)
        if stmt.manager is not None:
            return [f"with {to_text_expr(stmt.manager)}:{comment}"] + _indented(then or ["pass"])
        if not then:
            return [f"if not {atom_text(stmt.cond)}:{comment}"] + _indented(orelse)
        lines = [f"if {atom_text(stmt.cond)}:{comment}"] + _indented(then)
        return lines + (["else:"] + _indented(orelse) if orelse else [])
    if isinstance(stmt, Loop):
        return _loop_lines(stmt, comment)
    raise TypeError(f"cannot write {stmt!r}")


def _loop_lines(loop, comment) -> list:
    body = _lines(loop.body)
    if loop.kind == "for":
        return [f"for {loop.target.name} in {atom_text(loop.iterable)}:{comment}"] + _indented(body)
    if not loop.test_body:
        return [f"while {atom_text(loop.test)}:{comment}"] + _indented(body)
    test = _lines(loop.test_body) + [f"if not {atom_text(loop.test)}:", f"{INDENT}break"]
    return [f"while True:{comment}"] + _indented(test + body)


def _indented(lines) -> list:
    return [INDENT + line for line in lines] or [INDENT + "pass"]


def tangent_statement(eqn: Eqn) -> ast.stmt:
    """`y_dot = contribution_1 + contribution_2`: each a JVP rule, inlined or called by name."""
    parts = [[] for _ in eqn.op.rules]
    for key, atom in eqn.inputs:
        index, _, name = key.partition(":")
        parts[int(index)].append((name, atom))
    values = [expression(Eqn(RuleApplication(rule), tuple(reads), eqn.outputs, eqn.span))
              for rule, reads in zip(eqn.op.rules, parts)]
    if eqn.op.generic:
        value = ast.Call(ast.Name("add_tangents", ast.Load()), values, [])
    else:
        value = functools.reduce(lambda a, b: ast.BinOp(a, ast.Add(), b), values)
    for shown in eqn.op.shown:  # (`old = t * 1.0`: NumPy's `old` is a new array, `old_dot` not `t_dot`)
        value = ast.Call(ast.Name("unshared", ast.Load()), [value, ast.Name(shown.name, ast.Load())], [])
    if len(eqn.outputs) == 1:
        target = ast.Name(eqn.outputs[0].name, ast.Store())
    else:
        target = ast.Tuple([ast.Name(v.name, ast.Store()) for v in eqn.outputs], ast.Store())
    return ast.Assign([target], value)


__all__ = ["jvp_module", "tangent_statement"]

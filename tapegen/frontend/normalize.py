"""Restructuring early exits so every block runs straight to its end.

`break`, `continue` and `return` in the middle of a block skip the rest of it.
This pass (AST -> AST, on a copy) moves "the rest" into the branch that does
not exit, so after it an exit is always the last statement of its branch:

    for x in xs:                    for x in xs:
        if bad(x):                      if bad(x):
            continue          ->            continue
        total = total + x               else:
                                            total = total + x

A `return` inside a loop becomes `result = value; returned = True; break`,
and the code after the loop runs only `if not returned`. A loop's `else:`
clause runs after the loop `if not broke`, a flag set where the loop is left
early (its own `break`s, and any `return` in it). The lowering then
only ever sees exits at the end of a branch, which the tape can record as
"which branch ran".
"""
from __future__ import annotations

import ast

from ..errors import UnsupportedSyntaxError
from .source import copy_tree

ALWAYS, MAYBE, NEVER = "always", "maybe", "never"


def normalize(node, source, identifiers) -> ast.AST:
    """A copy of function `node` whose exits all end their branch."""
    node = copy_tree(node)
    if isinstance(node, ast.Lambda):
        return node
    names = _Names(identifiers)
    node.body = _Normalizer(source, names).block(node.body, in_loop=False)
    if names.used:
        node.body.insert(0, _assign(names.returned, ast.Constant(False), node.body[0]))
    return node


class _Names:
    def __init__(self, identifiers):
        self.identifiers = set(identifiers)
        self.used = False
        self.returned = self._fresh("returned")
        self.result = self._fresh("result")

    def _fresh(self, base):
        name, i = base, 1
        while name in self.identifiers:
            name, i = f"{base}_{i}", i + 1
        self.identifiers.add(name)
        return name


class _Normalizer:
    def __init__(self, source, names):
        self.source = source
        self.names = names

    def block(self, stmts, in_loop):
        stmts = [new for stmt in stmts for new in self.loop_else(stmt)]
        stmts = [new for stmt in stmts for new in self.return_after_with(stmt)]
        out = []
        for i, stmt in enumerate(stmts):
            stmt = self.statement(stmt, in_loop)
            rest = stmts[i + 1:]
            kind = exits(stmt, loop_exits=in_loop)
            if isinstance(stmt, list):  # a loop containing `return`, then its `if returned:` check
                out.extend(self.push_rest(stmt, rest, in_loop) if rest else stmt)
                if rest:
                    return out
                continue
            if kind == ALWAYS:
                if rest:
                    raise self.error(rest[0], "this code can never run (it follows a return, break or continue)",
                                     "remove it")
                out.append(stmt)
                return out
            if kind == MAYBE and rest:
                out.append(self.push_rest(stmt, rest, in_loop))
                return out
            out.append(stmt)
        return out

    def statement(self, stmt, in_loop):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return stmt  # a nested def: normalized when it is inlined, with its own exits
        if isinstance(stmt, ast.If):
            stmt.body = self.block(stmt.body, in_loop)
            stmt.orelse = self.block(stmt.orelse, in_loop)
        elif isinstance(stmt, (ast.For, ast.While)):
            if isinstance(stmt, ast.While) and any(isinstance(n, ast.NamedExpr) for n in ast.walk(stmt.test)):
                # `while (v := f(x)) < 1:`: v, set in the test, may carry a derivative the body and the code
                # after the loop use: the test becomes the body's first statements, `if not (...): break`,
                # which the reverse pass follows as it follows the body (the last, failing, test too)
                leave = _located(ast.If(ast.UnaryOp(ast.Not(), stmt.test), [ast.Break()], []), stmt.test)
                stmt.body, stmt.test = [leave] + stmt.body, _located(ast.Constant(True), stmt.test)
            had_return = contains_return(stmt.body)
            stmt.body = self.returns_in_loop(self.block(stmt.body, in_loop=True))
            if had_return:
                self.names.used = True
                exit_stmt = ast.Break() if in_loop else ast.Return(ast.Name(self.names.result, ast.Load()))
                flag = ast.If(ast.Name(self.names.returned, ast.Load()), [exit_stmt], [])
                return [stmt, _located(flag, stmt)]
        return stmt

    def return_after_with(self, stmt):
        """`with m: ...; return v` as `with m: ...; result = v` then `return result` after the block, so the
        return ends its function's (or branch's) block, and the manager's `__exit__` runs before it."""
        if not isinstance(stmt, ast.With) or not stmt.body or not isinstance(stmt.body[-1], ast.Return) \
                or stmt.body[-1].value is None:
            return [stmt]
        ending = stmt.body[-1]
        held = self.names._fresh("with_result")
        stmt.body = stmt.body[:-1] + [_assign(held, ending.value, ending)]
        return [stmt, _located(ast.Return(ast.Name(held, ast.Load())), ending)]

    def loop_else(self, stmt):
        """`for ...: ... else: E` as `broke = False; for ...: ...; if not broke: E`, `broke = True` set before
        the loop's own `break`s and every `return` in it: the statements that leave it early."""
        if not isinstance(stmt, (ast.For, ast.While)) or not stmt.orelse:
            return [stmt]
        orelse, stmt.orelse = stmt.orelse, []
        if not any(_leaves_loop(stmt.body)):
            return [stmt] + orelse
        flag = self.names._fresh("broke")
        for body in _leaves_loop(stmt.body):
            i = 0
            while i < len(body):
                if isinstance(body[i], (ast.Break, ast.Return)):
                    body.insert(i, _assign(flag, ast.Constant(True), body[i]))
                    i += 1
                i += 1
        check = ast.If(ast.UnaryOp(ast.Not(), ast.Name(flag, ast.Load())), orelse, [])
        return [_assign(flag, ast.Constant(False), stmt), stmt, _located(check, orelse[0])]

    def returns_in_loop(self, stmts):
        """Inside a loop, `return v` becomes `result = v; returned = True; break`."""
        out = []
        for stmt in stmts:
            if isinstance(stmt, ast.Return):
                if isinstance(stmt.value, ast.Tuple) or stmt.value is None:
                    raise self.error(stmt, "returning a tuple (or nothing) from inside a loop is not supported",
                                     "assign the values to variables, break, and return after the loop")
                self.names.used = True
                out += [_assign(self.names.result, stmt.value, stmt),
                        _assign(self.names.returned, ast.Constant(True), stmt),
                        _located(ast.Break(), stmt)]
            elif isinstance(stmt, ast.If):
                stmt.body = self.returns_in_loop(stmt.body)
                stmt.orelse = self.returns_in_loop(stmt.orelse)
                out.append(stmt)
            else:
                out.append(stmt)
        return out

    def push_rest(self, stmt, rest, in_loop):
        """`if c: <exits>` followed by `rest`: put `rest` in every branch that does not always exit."""
        if isinstance(stmt, list):  # a loop containing `return`, and its `if returned:` check
            loop, check = stmt
            check.orelse = self.block(list(rest), in_loop)
            return [loop, check]
        if not isinstance(stmt, ast.If):
            raise self.error(stmt, "an early exit here is not supported", "restructure with if / else")
        for branch in ("body", "orelse"):
            stmts = getattr(stmt, branch)
            if exits_block(stmts, in_loop) != ALWAYS:
                setattr(stmt, branch, self.block(stmts + [copy_tree(r) for r in rest], in_loop))
        return stmt

    def error(self, node, message, hint=None):
        return UnsupportedSyntaxError(message, self.source.span(node), hint)


def _assign(name, value, where):
    return _located(ast.Assign([ast.Name(name, ast.Store())], value), where)


def _located(node, where):
    """`node` with `where`'s source position on every sub-node that has none (for error carets)."""
    for sub in ast.walk(node):
        if "lineno" in sub._attributes and not hasattr(sub, "lineno"):
            ast.copy_location(sub, where)
    return node


def exits(stmt, loop_exits) -> str:
    """Whether `stmt` always, maybe or never leaves the block it is in."""
    if isinstance(stmt, list):
        return MAYBE
    if isinstance(stmt, ast.Return):
        return ALWAYS
    if isinstance(stmt, (ast.Break, ast.Continue)):
        return ALWAYS if loop_exits else NEVER
    if isinstance(stmt, ast.If):
        a, b = exits_block(stmt.body, loop_exits), exits_block(stmt.orelse, loop_exits)
        if a == b:
            return a
        return MAYBE
    if isinstance(stmt, (ast.For, ast.While)):
        return MAYBE if contains_return(stmt.body) else NEVER
    return NEVER


def exits_block(stmts, loop_exits) -> str:
    kinds = [exits(s, loop_exits) for s in stmts]
    if ALWAYS in kinds:
        return ALWAYS
    return MAYBE if MAYBE in kinds else NEVER


def contains_return(stmts) -> bool:
    """A `return` of this function in `stmts` (not one of a nested def's)."""
    return any(isinstance(sub, ast.Return) for stmt in stmts for sub in _own_nodes(stmt))


def _leaves_loop(stmts, nested=False):
    """The statement lists (of the loop whose body is `stmts`) holding a `break` of that loop or a `return`."""
    if any(isinstance(s, ast.Return) or (isinstance(s, ast.Break) and not nested) for s in stmts):
        yield stmts
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            yield from _leaves_loop(stmt.body, nested)
            yield from _leaves_loop(stmt.orelse, nested)
        elif isinstance(stmt, (ast.For, ast.While)):
            yield from _leaves_loop(stmt.body, True)
            yield from _leaves_loop(stmt.orelse, nested)
        elif isinstance(stmt, (ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                yield from _leaves_loop(getattr(stmt, field, []), nested)


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _own_nodes(node):
    """`ast.walk`, but not into nested functions, lambdas or classes (their returns are theirs)."""
    if isinstance(node, _NESTED):
        return
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _own_nodes(child)

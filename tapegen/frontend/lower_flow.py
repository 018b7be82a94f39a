"""Lowering control flow and in-place assignment: `if`, `for`, `while`, exits, `A[i] = v`.

A name assigned inside a branch or loop gets one var for the whole construct
(a *shared* var, assigned in several places: the IR's only non-single
assignments). A shared var never aliases an argument or another name: if the
name's current value is not its own, it is copied in first (`h = x` before a
loop that reassigns `h`).

`for` over a range, an array, a list, `zip(...)` or `enumerate(...)` becomes a
loop over a range with an index var, so the backward pass can replay the
indices in reverse without recording them.
"""
from __future__ import annotations

import ast
import builtins
import operator

from .. import rules
from ..ir import Const, Exit, If, Loop, Pack, Var
from ..rules.language import assign
from .lower_expr import _opaque
from .resolve import MISSING


class ControlFlow:
    """Mixin for `_Lowerer`: statement handlers for control flow and subscript assignment."""

    # --- if / else ----------------------------------------------------------------------

    def stmt_If(self, stmt):
        cond = self.condition(stmt.test)
        if isinstance(cond, Const):  # decided at transform time: lower only the branch taken
            self.block(stmt.body if cond.value else stmt.orelse)
            return
        with self.sharing(_assigned_names(stmt.body + stmt.orelse), stmt):
            then = self.block(stmt.body)
            orelse = self.block(stmt.orelse)
        self.current.append(If(cond, tuple(then), tuple(orelse), self.span(stmt.test)))

    def condition(self, node):
        return self.expr(node)

    # --- loops --------------------------------------------------------------------------

    def stmt_For(self, stmt):
        # Python evaluates the iterable once, before the loop: a body rebinding its name
        # (`for row in a: a = a + row`) must not change what is iterated.
        iterable, index_name, bind_items = self.iteration(stmt)
        names = _assigned_names(stmt.body) | _target_names(stmt.target)
        rebound = {value for value in (self.env.get(name) for name in names) if isinstance(value, Var)}
        bind_items = [(target, self._snapshot(seq, stmt) if seq in rebound and seq in self.shared.values() else seq)
                      for target, seq in bind_items]  # inside an outer loop: a name it already shares
        pinned = {seq for _, seq in bind_items if isinstance(seq, Var)}
        with self.sharing(names, stmt, pinned):
            index = self.shared_var(index_name) if index_name else self.namer.invented("i")
            counter = self.namer.invented("n")
            body = self.block(stmt.body, before=(bind_items, index))
        self.current.append(Loop("for", index, iterable, (), None, tuple(body), counter, self.span(stmt)))

    def iteration(self, stmt):
        """(range atom, the user's index name or None, (target, sequence) pairs to bind) for a `for` header."""
        target, it = stmt.target, stmt.iter
        fn = self.scope.static(it.func) if isinstance(it, ast.Call) else MISSING
        if fn is builtins.range and isinstance(target, ast.Name):
            return self.expr(it), target.id, []
        if fn is builtins.enumerate and _is_pair(target) and len(it.args) == 1:
            seq = self.expr(it.args[0])
            return self.range_over([seq], it), target.elts[0].id, [(target.elts[1], seq)]
        if fn is builtins.zip and isinstance(target, ast.Tuple) and len(target.elts) == len(it.args):
            seqs = [self.expr(a) for a in it.args]
            return self.range_over(seqs, it), None, list(zip(target.elts, seqs))
        if isinstance(target, ast.Name):
            seq = self.expr(it)
            return self.range_over([seq], it), None, [(target, seq)]
        raise self.unsupported(stmt.target, "this loop target is not supported",
                               "loop over range(...), an array, zip(...) or enumerate(...)")

    def _snapshot(self, seq, node):
        """The value a loop iterates, under a name its body does not rebind."""
        return self.emit(rules.lookup(assign), [seq], {}, node, None)

    def range_over(self, seqs, node):
        lengths = [self.emit(rules.lookup(builtins.len), [s], {}, node, None) for s in seqs]
        if len(lengths) > 1:
            lengths = [self.emit(_opaque_builtin(min), lengths, {}, node, None)]
        return self.emit(rules.lookup(builtins.range), lengths, {}, node, None)

    def bind_loop_items(self, items, index):
        for target, seq in items:
            if not isinstance(target, ast.Name):
                raise self.unsupported(target, "nested unpacking in a loop target is not supported",
                                       "unpack inside the loop body")
            value = self.emit(rules.lookup(operator.getitem), [seq, index], {}, target, None)
            self.store(target.id, value, target)

    def stmt_While(self, stmt):
        with self.sharing(_assigned_names(stmt.body), stmt):
            test_body = self.block([], test=stmt.test)
            test = self._last_test
            counter = self.namer.invented("n")
            body = self.block(stmt.body)
        self.current.append(Loop("while", None, None, tuple(test_body), test, tuple(body), counter,
                                 self.span(stmt)))

    def stmt_Break(self, stmt):
        self.current.append(Exit("break", self.span(stmt)))

    def stmt_Continue(self, stmt):
        self.current.append(Exit("continue", self.span(stmt)))

    # --- returns inside branches ----------------------------------------------------------

    def branch_return(self, stmt):
        """`return v` at the end of a branch: store into the function's result var(s)."""
        values = stmt.value.elts if isinstance(stmt.value, ast.Tuple) else [stmt.value]
        as_tuple = isinstance(stmt.value, ast.Tuple)
        if self.results is None:
            self.results = [self.namer.invented("result") for _ in values]
            self.results_tuple = as_tuple
        if as_tuple != self.results_tuple or len(values) != len(self.results):
            raise self.unsupported(stmt, "every return must give the same number of values",
                                   "return a tuple of the same length everywhere")
        atoms = [self.expr(v) for v in values]
        for var, atom in zip(self.results, atoms):
            self.emit(rules.lookup(assign), [atom], {}, stmt, var)
        self.return_span = self.span(stmt)

    # --- A[i] = v ---------------------------------------------------------------------------

    def assign_subscript(self, target, value_node, op=None):
        if not isinstance(target.value, ast.Name):
            raise self.unsupported(target, "assignment into a nested subscript (a[i][j] = v) is not supported",
                                   "index once with a tuple: a[i, j] = v")
        name = target.value.id
        array = self.read_name(target.value)
        self.check_writable(name, array, target)
        index = self.index(target.slice)
        if op is not None:  # A[i] += v  is  A[i] = A[i] + v
            old = self.emit(rules.lookup(operator.getitem), [array, index], {}, target, None)
            value = self.emit(rules.lookup(op), [old, self.expr(value_node)], {}, target, None)
        else:
            value = self.expr(value_node)
        self.emit(rules.lookup(operator.setitem), [array, index, value], {}, target, array)

    def check_writable(self, name, array, node):
        if not isinstance(array, Var) or array in self.params or array not in self.fresh:
            raise self.unsupported(
                node, f"assigning into `{name}` would change an array tapegen cannot follow: it may be an "
                      f"argument, a view of another array, or shared with another name",
                f"make a private copy first: {name} = {name}.copy()  (or build it with np.zeros / np.empty)")
        for other, atom in self.env.items():
            if other != name and isinstance(atom, Var) and self.view_base(atom) is array:
                raise self.unsupported(node, f"`{other}` is a view of `{name}`, so this assignment changes it too",
                                       f"take a copy: {other} = {name}[...].copy()")


def _assigned_names(stmts) -> set:
    names = set()
    for stmt in stmts:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.add(sub.id)
    return names


def _target_names(target) -> set:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _is_pair(target) -> bool:
    return isinstance(target, ast.Tuple) and len(target.elts) == 2 and all(
        isinstance(e, ast.Name) for e in target.elts)


def _opaque_builtin(fn):
    return _opaque(fn.__name__, fn)


__all__ = ["ControlFlow", "Const", "Pack"]

"""Common subexpressions: a value computed again, read from the name that already holds it.

The reverse pass writes each rule on its own, so a value that two rules need
is computed twice. `np.sum(h * h)` has two identical contributions to `h`'s
cotangent:

    g_h = g_t8 * h                    g_h = g_t8 * h
    g_h = g_h + g_t8 * h        ->    g_h = g_h + g_h

Within a run of top-level statements (a branch or loop ends the run), an
arithmetic expression equal to an earlier statement's whole right-hand side is
replaced by that statement's name, if the name still holds it: not deleted,
not rebound, and none of the names the expression reads rebound since. Only
names that already exist are reused, so the code keeps its shape; only pure
arithmetic (operators and NumPy ufuncs) is matched, so nothing with side
effects or randomness is ever merged.
"""
from __future__ import annotations

import ast

import numpy as np

from .syntax import assigned_name, clone, numpy_name


def reuse_common(items) -> dict:
    """{index: statement} for the statements of `items` that read an earlier result instead of recomputing it.

    `items` is a function's top-level sequence: ("stmt", ast.stmt), ("free", names) or
    ("barrier", None) for a branch or loop (which ends every match).
    """
    available = _Available()
    replaced = {}
    for i, (kind, item) in enumerate(items):
        if kind == "barrier":
            available = _Available()
            continue
        if kind == "free":
            available.forget(item)
            continue
        if isinstance(item, ast.Assign) and available.held:
            reuse = _Reuse(available.held)
            new = reuse.visit(clone(item.value))
            if reuse.found:
                item = ast.Assign(item.targets, new)
                replaced[i] = item
        available.forget({n.id for n in ast.walk(item) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)})
        target = assigned_name(item)
        if target is not None and _pure(item.value):
            reads = {n.id for n in ast.walk(item.value) if isinstance(n, ast.Name)}
            if target not in reads:  # `h = h * 2`: after it, `h * 2` means something else
                available.add(ast.dump(item.value), target, reads)
    return replaced


class _Available:
    """Expressions held by live names: `held` maps ast.dump(expression) to the name holding it,
    `depends` each name to the expressions that are lost when it is deleted or rebound (the one it
    holds, those computed from it), so forgetting costs what it drops, not what is held."""

    def __init__(self):
        self.held: dict = {}
        self.depends: dict = {}

    def add(self, key, name, reads) -> None:
        if key in self.held:
            return
        self.held[key] = (name, reads)
        for dependency in {name} | reads:
            self.depends.setdefault(dependency, set()).add(key)

    def forget(self, names) -> None:
        """Drop what `names` (deleted or rebound) held or what was computed from them."""
        for name in names:
            for key in self.depends.pop(name, ()):
                self.held.pop(key, None)


def _pure(node) -> bool:
    """Arithmetic on names and numbers: operators and NumPy ufuncs, nothing else."""
    if isinstance(node, ast.BinOp):
        return _pure(node.left) and _pure(node.right)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.USub, ast.UAdd)) and _pure(node.operand)
    if isinstance(node, ast.Call):
        name = numpy_name(node.func)
        return (name is not None and isinstance(getattr(np, name, None), np.ufunc) and not node.keywords
                and all(_pure(a) for a in node.args))
    if isinstance(node, ast.Name):
        return True
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


class _Reuse(ast.NodeTransformer):
    """Replace the largest subexpressions found in `available` by the names holding them."""

    def __init__(self, available):
        self.available = available
        self.found = False

    def visit(self, node):
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call)) and _pure(node):
            found = self.available.get(ast.dump(node))
            if found is not None:
                self.found = True
                return ast.Name(found[0], ast.Load())
        return self.generic_visit(node)

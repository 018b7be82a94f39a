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
import copy

import numpy as np

from .syntax import assigned_name, numpy_name


def reuse_common(items) -> dict:
    """{index: statement} for the statements of `items` that read an earlier result instead of recomputing it.

    `items` is a function's top-level sequence: ("stmt", ast.stmt), ("free", names) or
    ("barrier", None) for a branch or loop (which ends every match).
    """
    available: dict = {}  # ast.dump(expression) -> (name holding it, names it reads)
    replaced = {}
    for i, (kind, item) in enumerate(items):
        if kind == "barrier":
            available.clear()
            continue
        if kind == "free":
            _forget(available, item)
            continue
        if isinstance(item, ast.Assign) and available:
            new = _Reuse(available).visit(copy.deepcopy(item.value))
            if ast.dump(new) != ast.dump(item.value):
                item = ast.Assign(item.targets, new)
                replaced[i] = item
        bound = {n.id for n in ast.walk(item) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        _forget(available, bound)
        target = assigned_name(item)
        if target is not None and _pure(item.value):
            reads = {n.id for n in ast.walk(item.value) if isinstance(n, ast.Name)}
            if target not in reads:  # `h = h * 2`: after it, `h * 2` means something else
                available.setdefault(ast.dump(item.value), (target, reads))
    return replaced


def _forget(available, names) -> None:
    """Drop what `names` (deleted or rebound) held or what was computed from them."""
    for key, (name, reads) in list(available.items()):
        if name in names or reads & set(names):
            del available[key]


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

    def visit(self, node):
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call)) and _pure(node):
            found = self.available.get(ast.dump(node))
            if found is not None:
                return ast.Name(found[0], ast.Load())
        return self.generic_visit(node)

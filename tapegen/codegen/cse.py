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

from .syntax import assigned_name, clone, numpy_name, walk


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
        inside = walk(item.value) if isinstance(item, ast.Assign) else None
        if inside is not None and available.held and _holds_some(inside, available.held):
            reuse = _Reuse(available.held)
            new = reuse.visit(clone(item.value))
            if reuse.found:
                item = ast.Assign(item.targets, new)
                replaced[i] = item
                inside = walk(new)
        nodes = walk(item) if inside is None else [n for t in item.targets for n in walk(t)] + inside
        available.forget({n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)})
        target = assigned_name(item)
        if target is not None:
            key = _key(item.value)
            if key is not None:
                reads = {n.id for n in inside if isinstance(n, ast.Name)}
                if target not in reads:  # `h = h * 2`: after it, `h * 2` means something else
                    available.add(key, target, reads)
    return replaced


class _Available:
    """Expressions held by live names: `held` maps an expression's _key to the name holding it,
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


def _key(node, found=None):
    """What identifies a pure expression (arithmetic on names and numbers: operators and NumPy ufuncs, nothing
    else): equal for two expressions exactly when their `ast.dump`s are, and cheaper to build; None if `node`
    is not pure. `found` collects the key of every pure operation inside by node id."""
    cls = node.__class__
    if cls is ast.Name:
        return ("name", node.id, getattr(node, "ctx", None).__class__)
    if cls is ast.Constant:
        value = node.value
        return ("constant", value.__class__, repr(value), node.kind) if value.__class__ in (int, float) else None
    if cls is ast.BinOp:
        left, right = _key(node.left, found), _key(node.right, found)
        key = None if left is None or right is None else ("binop", node.op.__class__, left, right)
    elif cls is ast.UnaryOp:
        operand = _key(node.operand, found)
        key = ("unop", node.op.__class__, operand) if operand is not None and \
            node.op.__class__ in (ast.USub, ast.UAdd) else None
    elif cls is ast.Call:
        name = numpy_name(node.func)
        args = [_key(a, found) for a in node.args]
        key = None if name is None or not isinstance(getattr(np, name, None), np.ufunc) or node.keywords \
            or None in args else ("ufunc", name, getattr(node.func, "ctx", None).__class__,
                                  getattr(node.func.value, "ctx", None).__class__, *args)
    else:
        return None
    if found is not None and key is not None:
        found[id(node)] = key
    return key


def _holds_some(nodes, held) -> bool:
    """Whether some pure operation among `nodes` (an expression's, walked) is an expression `held` holds (so
    _Reuse would replace it)."""
    found: dict = {}
    for node in nodes:
        if node.__class__ in _OPERATIONS and id(node) not in found:
            _key(node, found)
    return any(key in held for key in found.values())


_OPERATIONS = (ast.BinOp, ast.UnaryOp, ast.Call)


class _Reuse(ast.NodeTransformer):
    """Replace the largest subexpressions found in `available` by the names holding them."""

    def __init__(self, available):
        self.available = available
        self.found = False

    def visit(self, node):
        if isinstance(node, _OPERATIONS):
            key = _key(node)
            found = None if key is None else self.available.get(key)
            if found is not None:
                self.found = True
                return ast.Name(found[0], ast.Load())
        return self.generic_visit(node)

"""Reading generated statements: what the passes over specialized code share.

broadcasts.py, cse.py, buffers.py and reductions.py all look at rendered `ast`
statements: which name a line assigns, where each name is read and inside what,
and whether a call is `np.<something>`.
"""
from __future__ import annotations

import ast

from ..frontend.source import copy_tree, walk


def assigned_name(stmt):
    """The name a statement assigns if it is a plain `name = value`, else None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def names_with_ancestors(node, ancestors=()) -> list:
    """(Name node, its ancestors innermost first) for every name in `node`, read or assigned, depth first."""
    found: list = []
    _names_below(node, ancestors, found)
    return found


def _names_below(node, ancestors, found) -> None:
    if isinstance(node, ast.Name):
        found.append((node, ancestors))
        return
    ancestors = (node,) + ancestors
    for field in node._fields:
        value = getattr(node, field, None)
        if value.__class__ is list:
            for item in value:
                if isinstance(item, ast.AST):
                    _names_below(item, ancestors, found)
        elif isinstance(value, ast.AST):
            _names_below(value, ancestors, found)


def numpy_name(func):
    """`name` if `func` is written `np.name`, else None."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np":
        return func.attr
    return None


def clone(node):
    """A deep copy of an `ast` tree (frontend/source.py's copy_tree)."""
    return copy_tree(node)


def renamed(node, names: dict):
    """A copy of `node` (as `clone`) with each `Name` whose id is a key of `names` renamed to its value."""
    return copy_tree(node, names)

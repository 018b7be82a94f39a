"""Reading generated statements: what the passes over specialized code share.

broadcasts.py, cse.py, buffers.py and reductions.py all look at rendered `ast`
statements: which name a line assigns, where each name is read and inside what,
and whether a call is `np.<something>`.
"""
from __future__ import annotations

import ast


def assigned_name(stmt):
    """The name a statement assigns if it is a plain `name = value`, else None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def names_with_ancestors(node, ancestors=()):
    """(Name node, its ancestors innermost first) for every name in `node`, read or assigned."""
    if isinstance(node, ast.Name):
        yield node, ancestors
        return
    for child in ast.iter_child_nodes(node):
        yield from names_with_ancestors(child, (node,) + ancestors)


def numpy_name(func):
    """`name` if `func` is written `np.name`, else None."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np":
        return func.attr
    return None


# Contexts and operators carry no fields: `ast.parse` itself shares one instance of each.
_SHARED = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def clone(node):
    """A deep copy of an `ast` tree, about six times faster than `copy.deepcopy` (which goes
    through `__reduce_ex__` for every node): nodes and lists are copied, everything else shared."""
    return renamed(node, {})


def renamed(node, names: dict):
    """A copy of `node` (as `clone`) with each `Name` whose id is a key of `names` renamed to its value."""
    new = node.__class__.__new__(node.__class__)
    fields = new.__dict__
    for key, value in node.__dict__.items():
        if value.__class__ is list:
            fields[key] = [renamed(item, names) if isinstance(item, ast.AST) else item for item in value]
        elif isinstance(value, ast.AST) and not isinstance(value, _SHARED):
            fields[key] = renamed(value, names)
        else:
            fields[key] = value
    if names and new.__class__ is ast.Name:
        new.id = names.get(new.id, new.id)
    return new

"""Cotangents that are broadcasts, left unbroadcast (specialized code only).

The backward pass of a reduction spreads its cotangent over the reduced
input's shape: `np.mean` of a (32, 10) array gives `np.full((32, 10), g / 320)`,
a row sum gives `unreduce(g, (256, 10), 1, True)`. When every use of such a
value multiplies it by an array that already has the full shape, NumPy's
broadcasting does the spreading for free, so the value can stay small:

    g_t5 = np.full((32, 10), g_t6 / 320)        g_t5 = g_t6 / 320
    g_t4 = g_t5 * 2 * t4                  ->    g_t4 = g_t5 * 2 * t4

is one pass over the array instead of three (fill, `* 2`, `* t4`). With the
shapes known (shape specialization), this is exact: the product's shape and
values are unchanged.

A broadcast is `np.full(S, e)`, `unreduce(u, S, axis, keepdims)`, or a
copy or negation of one. It stays small when each use is a factor of a
product (`*`, `/`, unary `-`) another factor of which is a variable known to
have shape S, or defines another broadcast that stays small. A use anywhere
else (a sum, a matmul, a returned gradient, a loop or branch body) keeps the
full array, written exactly as before.
"""
from __future__ import annotations

import ast
from collections import Counter

from ..ir import Eqn, assigned
from ..transforms.liveness import Free, reads
from .buffers import array_type
from .render import statement
from .syntax import assigned_name, names_with_ancestors, numpy_name


def shrink_broadcasts(stmts, known, scalars, kept) -> dict:
    """{id(eqn): statement} for the top-level equations in `stmts`, broadcasts shrunk where that is exact.

    `known` maps the names of primal values to their (shape, dtype), known in advance; `scalars`
    are names surely holding scalars (0-d values and their cotangents); `kept` are names
    that must keep their full value (returned gradients, outputs). A use inside a
    nested block counts as one that needs the full value.
    """
    top = [s for s in stmts if isinstance(s, Eqn)]
    rendered = {id(e): statement(e) for e in top}
    targets = [assigned_name(rendered[id(e)]) for e in top]
    counts = Counter(targets)
    once = {name for name in targets if name is not None and counts[name] == 1}
    broadcasts = {}  # name -> _Broadcast
    for eqn in top:
        name = assigned_name(rendered[id(eqn)])
        if name in once:
            found = _broadcast(rendered[id(eqn)].value, broadcasts, scalars)
            if found is not None:
                broadcasts[name] = found
    if not broadcasts:
        return rendered
    full = set(kept) | _used_in_nested_blocks(stmts)
    uses: dict = {name: [] for name in broadcasts}
    for eqn in top:
        node = rendered[id(eqn)]
        for occurrence, parents in names_with_ancestors(node):
            if occurrence.id in uses and isinstance(occurrence.ctx, ast.Load):
                uses[occurrence.id].append((assigned_name(node), occurrence, parents))
    small = set()
    for name in reversed(list(broadcasts)):  # a broadcast's children are defined after it
        if name not in full and all((target in small and broadcasts[target].parent == name)
                                    or _scaled_to(occurrence, parents, broadcasts[name].shape, known)
                                    for target, occurrence, parents in uses[name]):
            small.add(name)
    for name, info in broadcasts.items():  # program order: parents first
        if name in small and info.parent is not None and info.parent not in small and info.needs_small_parent:
            small.discard(name)  # its small value is written in terms of the parent's small value
    for eqn in top:
        name = assigned_name(rendered[id(eqn)])
        if name in small:
            rendered[id(eqn)] = ast.Assign(rendered[id(eqn)].targets, broadcasts[name].small)
    return rendered


class _Broadcast:
    """A value equal to `small` broadcast to `shape`; `parent` is the broadcast it is computed from, if any;
    `scalar` says `small` is a scalar; `needs_small_parent` that `small` is right only if the parent is small
    too (a scalar put back along reduced axes: the parent's full array would not line up)."""

    def __init__(self, shape, small, parent=None, scalar=False, needs_small_parent=False):
        self.shape, self.small, self.parent, self.scalar = shape, small, parent, scalar
        self.needs_small_parent = needs_small_parent


def _broadcast(value, broadcasts, scalars):
    """The _Broadcast `value` (a statement's right-hand side) computes, or None."""
    if isinstance(value, ast.Name) and value.id in broadcasts:
        parent = broadcasts[value.id]
        return _Broadcast(parent.shape, value, value.id, parent.scalar)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and isinstance(value.operand, ast.Name) \
            and value.operand.id in broadcasts:
        parent = broadcasts[value.operand.id]
        return _Broadcast(parent.shape, value, value.operand.id, parent.scalar)
    if not (isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)) and not value.keywords):
        return None
    literals = [_literal(a) for a in value.args]
    if numpy_name(value.func) == "full" and len(value.args) == 2 and _is_shape(literals[0]):
        return _Broadcast(literals[0], value.args[1], scalar=_is_scalar(value.args[1], scalars))
    if isinstance(value.func, ast.Name) and value.func.id == "unreduce" and len(value.args) == 4 and isinstance(value.args[0], ast.Name) \
            and _is_shape(literals[1]) and literals[2] is not _NOT_LITERAL and isinstance(literals[3], bool):
        g, shape, axis, keepdims = value.args[0], literals[1], literals[2], literals[3]
        parent = broadcasts.get(g.id)
        if parent is not None and (parent.scalar or axis is None or keepdims):  # a broadcast of a broadcast
            return _Broadcast(shape, g, g.id, parent.scalar, needs_small_parent=not (axis is None or keepdims))
        if parent is not None:
            return None
        if axis is None or keepdims or shape == ():  # a scalar, or the kept dimensions line up for broadcasting
            return _Broadcast(shape, g, scalar=(axis is None and not keepdims) or shape == ())
        axes = {a % len(shape) for a in (axis if isinstance(axis, tuple) else (axis,))}
        if len(axes) == len(shape):  # every axis reduced: g is a scalar
            return _Broadcast(shape, g, scalar=True)
        index = ast.Tuple([ast.Constant(None) if i in axes else ast.Slice() for i in range(len(shape))], ast.Load())
        return _Broadcast(shape, ast.Subscript(g, index, ast.Load()))  # g[:, None]: its axes back as size 1
    return None


def _is_scalar(node, scalars) -> bool:
    """Whether an expression is surely a scalar: arithmetic on numbers and names in `scalars`."""
    if isinstance(node, ast.Name):
        return node.id in scalars
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        return _is_scalar(node.left, scalars) and _is_scalar(node.right, scalars)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _is_scalar(node.operand, scalars)
    return False


_NOT_LITERAL = object()


def _literal(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _NOT_LITERAL


def _is_shape(value) -> bool:
    return isinstance(value, tuple) and all(isinstance(n, int) and not isinstance(n, bool) for n in value)


_FACTORS = {"guarded_mul", "guarded_div"}


def _scaled_to(occurrence, parents, shape, known) -> bool:
    """Whether a name (`occurrence`, with ancestors `parents`) is a factor of a product with a factor of `shape`."""
    chain = []
    for node in parents:
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)) or \
                isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) or \
                isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FACTORS \
                and len(node.args) == 2 and not node.keywords:
            chain.append(node)
        else:
            break
    factors = [child for node in chain for child in ast.iter_child_nodes(node)
               if child not in chain and isinstance(child, ast.expr) and child is not occurrence]
    return any(isinstance(t, tuple) and t[0] == shape for t in (array_type(f, known) for f in factors))


def _used_in_nested_blocks(stmts) -> set:
    """Names read or assigned anywhere inside the branches, loops, guards and pops among `stmts`."""
    nested = [stmt for stmt in stmts if not isinstance(stmt, (Eqn, Free))]
    return {v.name for stmt in nested for v in reads(stmt) | set(assigned([stmt]))}

"""Writing into dead buffers: `out=` reuse of arrays whose last use has passed (specialized code only).

NumPy gives every result a fresh array. For large arrays that means a fresh
allocation, page faults on first touch and a free per operation, although the
generated code knows which of its arrays die at each line. This pass writes a
line's results into one of them instead:

    g_y_2 = g_y_3 * (1 - y_2 * y_2)          np.multiply(y_2, y_2, out=y_2)
    del g_y_3, y_2                    ->     np.subtract(1, y_2, out=y_2)
                                             g_y_2 = np.multiply(g_y_3, y_2, out=y_2)
                                             del g_y_3, y_2

A buffer is an array the generated code made itself (the result of an
arithmetic operation or ufunc), whose name is deleted right after the line (or
rebound by it, as in `g_x = g_x + ...`), that no other name, view or container
can refer to (every earlier read of it was an operand of an operation that
returns a new array), and whose shape and dtype are the result's, known from
shape specialization. It is written only by the operation that reads it last:
every occurrence of the buffer in the line is an operand of the node writing
into it, or of a node below it on the same chain of buffers.

The pass runs on straight-line code: emit.py hands it each run of statements
between branches and loops, and each loop body's, separately, so that a run
owns only the arrays it made (nothing carried from an earlier iteration,
pushed to or popped from the tape). It acts only on results of at least
`MIN_BYTES`: below that a fresh array costs less than the keyword argument.
"""
from __future__ import annotations

import ast

import numpy as np

from .syntax import assigned_name, names_with_ancestors, numpy_name, walk

MIN_BYTES = 1 << 18  # NumPy's own threshold for reusing temporaries in an expression (256 KiB)

_BINARY = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide"}
_UFUNCS = {"add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum", "negative", "square",
           "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "sinh", "cosh",
           "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "absolute", "fabs", "reciprocal",
           "sign", "logaddexp", "hypot", "arctan2"}
_METHODS = {"sum", "mean", "max", "min", "prod"}  # ndarray methods returning new arrays
_METADATA = {"shape", "dtype", "ndim", "size"}
WEAK = "python number"  # an int or float literal: NumPy 2 casts it to the other operand's dtype


def reuse_buffers(items, types: dict) -> dict:
    """{index: statements} replacing the statements at those indices of `items`.

    `items` is the function's top-level sequence, in order: ("stmt", ast.stmt) or
    ("free", names). `types` maps names to (shape, dtype) known before the function runs
    (arguments and forward values from shape specialization; the seed).
    """
    known, types = types, dict(types)
    owned: set = set()  # names holding an array only they refer to, made by the generated code
    replaced = {}
    for i, (kind, item) in enumerate(items):
        if kind == "free":
            owned.difference_update(item)
            continue
        names = names_with_ancestors(item)
        for name, ancestors in names:
            if isinstance(name.ctx, ast.Load) and not _consumes(name, *(ancestors + (None, None))[:2]):
                owned.discard(name.id)  # it may now be aliased: a view, a container, another name
        target = assigned_name(item)
        for node, _ in names:  # names bound here other than a plain `name = value`: not known any more
            if isinstance(node.ctx, ast.Store) and node.id != target:
                owned.discard(node.id)
                types.pop(node.id, None)
        if target is None:
            continue
        dying = set(items[i + 1][1]) if i + 1 < len(items) and items[i + 1][0] == "free" else set()
        dying |= {target}  # rebound by this statement: its old value dies here
        candidates = [n for n in _names_in(item.value) if n in owned and n in dying]
        kind = known.get(target) or array_type(item.value, types)  # what specialization knows comes first
        statements = _rewritten(item, kind, types, candidates)
        if statements is not None:
            replaced[i] = statements
            item = statements[-1]
        if _fresh(item.value, kind, owned):
            owned.add(target)
        else:
            owned.discard(target)
        types[target] = kind
    return replaced


def _names_in(node) -> list:
    """Names read in `node`, first occurrences in order."""
    seen = []
    for n in walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in seen:
            seen.append(n.id)
    return seen


def _consumes(name, parent, grandparent) -> bool:
    """Whether this read of `name` only consumes its value (the result is a new array, never it or a view)."""
    if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
        return True
    if isinstance(parent, ast.Call):
        return name in parent.args and _numpy_function(parent.func) is not None
    if isinstance(parent, ast.Attribute):
        if parent.attr == "T":  # a view, but one an operation consumes on the spot (`h.T @ g`)
            return isinstance(grandparent, (ast.BinOp, ast.UnaryOp, ast.Compare))
        return parent.attr in _METADATA or (parent.attr in _METHODS and isinstance(grandparent, ast.Call)
                                            and grandparent.func is parent)
    return False


def _numpy_function(func):
    """`name` for `np.name` where that is a ufunc or a reduction returning a new array, else None."""
    name = numpy_name(func)
    return name if name in _UFUNCS or name in _METHODS or name in ("where", "dot", "matmul") else None


def _fresh(value, kind, owned) -> bool:
    """Whether a statement's value (of type `kind`) is a new array nothing else refers to."""
    if not _is_array(kind):
        return False
    if isinstance(value, (ast.BinOp, ast.UnaryOp)):
        return True
    if isinstance(value, ast.Call):
        out = [k.value for k in value.keywords if k.arg == "out"]
        if out:  # our own rewrite: the buffer's array, now the target's alone
            return isinstance(out[0], ast.Name) and out[0].id in owned
        if _numpy_function(value.func) is not None and not value.keywords:
            return True
        return isinstance(value.func, ast.Attribute) and value.func.attr in _METHODS
    return False


# --- types: (shape, dtype) of float arrays and NumPy scalars, WEAK for Python numbers, None if unknown ---


def array_type(node, types):
    """(shape, dtype) of an elementwise expression of values whose types `types` gives by name, WEAK for a
    Python number, None if unknown."""
    if isinstance(node, ast.Name):
        return types.get(node.id)
    if isinstance(node, ast.Constant):
        return WEAK if type(node.value) in (int, float) else None
    if isinstance(node, ast.BinOp):
        left, right = array_type(node.left, types), array_type(node.right, types)
        if type(node.op) in _BINARY:
            return _combine(left, right)
        if isinstance(node.op, ast.Pow) and right == WEAK and _is_array(left) and left[1].kind == "f":
            return left
        if isinstance(node.op, ast.MatMult) and _is_array(left) and _is_array(right) and left[1] == right[1] \
                and len(left[0]) == len(right[0]) == 2 and left[0][1] == right[0][0]:
            return (left[0][0], right[0][1]), left[1]
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return array_type(node.operand, types)
    if isinstance(node, ast.Attribute) and node.attr == "T":
        inner = array_type(node.value, types)
        return (inner[0][::-1], inner[1]) if _is_array(inner) else None
    if isinstance(node, ast.Call) and _numpy_function(node.func) in _UFUNCS and not node.keywords:
        result = WEAK
        for arg in node.args:
            result = _combine(result, array_type(arg, types))
        return result if _is_array(result) else None
    return None


def _is_array(kind) -> bool:
    return isinstance(kind, tuple) and kind[0] != ()


def _combine(a, b):
    """The type of an elementwise operation on values of types `a` and `b` (real float dtypes only: a ufunc
    such as np.absolute turns complex into real)."""
    if a is None or b is None:
        return None
    if a == WEAK or b == WEAK:
        other = b if a == WEAK else a
        return other if other == WEAK or other[1].kind == "f" else None
    if a[1] != b[1] or a[1].kind != "f":
        return None
    try:
        return tuple(np.broadcast_shapes(a[0], b[0])), a[1]
    except ValueError:
        return None


# --- the rewrite ----------------------------------------------------------------------------------------


def _operands(node):
    """The operands of an elementwise operation that can write `out=`, or None for anything else."""
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return [node.left, node.right]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant) \
            and node.right.value == 2:
        return [node.left]  # x ** 2 is np.square(x): what NumPy itself runs for it
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return [node.operand]
    if isinstance(node, ast.Call) and _numpy_function(node.func) in _UFUNCS and not node.keywords:
        return list(node.args)
    return None


def _ufunc(node) -> str:
    if isinstance(node, ast.BinOp):
        return "square" if isinstance(node.op, ast.Pow) else _BINARY[type(node.op)]
    if isinstance(node, ast.UnaryOp):
        return "negative"
    return node.func.attr


def _rewritten(stmt, result, types, candidates):
    """The statements computing `stmt` (a value of type `result`) into dead buffers, or None if none fits."""
    candidates = [name for name in candidates if types.get(name) == result]  # same shape and dtype
    if not candidates or not _is_array(result) or np.prod(result[0]) * result[1].itemsize < MIN_BYTES:
        return None
    parents = {}
    for node in walk(stmt.value):
        for child in ast.iter_child_nodes(node):
            if id(child) in parents and not isinstance(child, (ast.operator, ast.unaryop, ast.expr_context)):
                return None  # one node object in two places: the parent map would mislead
            parents[id(child)] = node
    plan: dict = {}
    _plan(stmt.value, result, types, candidates, parents, plan, set())
    if not plan:
        return None
    out: list = []
    value = _emit(stmt.value, plan, out)
    if out and isinstance(value, ast.Name) and id(stmt.value) in plan:
        out[-1] = ast.Assign(stmt.targets, out[-1].value)  # the last write is the statement's value
    else:
        out.append(ast.Assign(stmt.targets, value))
    return out


def _plan(node, result, types, candidates, parents, plan, used) -> None:
    """Post-order: a buffer for each elementwise node computing an array of the statement's type."""
    operands = _operands(node)
    if operands is None:
        return
    for operand in operands:
        _plan(operand, result, types, candidates, parents, plan, used)
    if array_type(node, types) != result:
        return
    for operand in operands:  # a result only this node reads: write over it
        if id(operand) in plan:
            plan[id(node)] = plan[id(operand)]
            return
    for name in candidates:  # a dead array all of whose reads are this node's operands
        if name not in used and all(parents.get(id(n)) is node for n in walk(_root(node, parents))
                                    if isinstance(n, ast.Name) and n.id == name):
            plan[id(node)] = name
            used.add(name)
            return


def _root(node, parents):
    while id(node) in parents:
        node = parents[id(node)]
    return node


def _emit(node, plan, out):
    """`node` with its planned operations hoisted into `out` as `np.f(..., out=buffer)` statements."""
    operands = _operands(node)
    if operands is None:
        return node
    written = [_emit(operand, plan, out) for operand in operands]
    if id(node) not in plan:
        return _rebuilt(node, written)
    buffer = plan[id(node)]
    call = ast.Call(ast.Attribute(ast.Name("np", ast.Load()), _ufunc(node), ast.Load()), written,
                    [ast.keyword("out", ast.Name(buffer, ast.Load()))])
    out.append(ast.Expr(call))
    return ast.Name(buffer, ast.Load())


def _rebuilt(node, operands):
    if isinstance(node, ast.BinOp):
        return ast.BinOp(operands[0], node.op, operands[1] if len(operands) > 1 else node.right)
    if isinstance(node, ast.UnaryOp):
        return ast.UnaryOp(node.op, operands[0])
    return ast.Call(node.func, operands, [])

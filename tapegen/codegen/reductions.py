"""Reductions of arrays written as ndarray methods (specialized code only).

`np.sum(a, axis=0)` first dispatches on the type of `a` (`__array_function__`,
then a check for a `sum` method), which costs about a microsecond more than
`a.sum(axis=0)`; `np.mean(a)` also counts the elements at run time. Where shape
specialization knows that a name holds an ndarray, its reductions are written
as a person writes them:

    np.sum(t3, axis=1, keepdims=True)   ->  t3.sum(axis=1, keepdims=True)
    np.sum(-g, axis=1, keepdims=True)   ->  -g.sum(axis=1, keepdims=True)   (negate the small result)
    np.mean(t7)                         ->  t7.sum() / 256                   (float32/64: the same value)

Each is the same NumPy computation: the methods are what the functions call.
"""
from __future__ import annotations

import ast
import math

import numpy as np

from .syntax import numpy_name, walk

_METHODS = {"sum": "sum", "max": "max", "amax": "max", "min": "min", "amin": "min", "prod": "prod"}
_REDUCTIONS = set(_METHODS) | {"mean"}  # the calls _Methods.visit_Call may rewrite
_MEAN_EXACT = {np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128)}


def reductions_as_methods(stmt: ast.stmt, arrays: dict) -> ast.stmt:
    """`stmt` with reductions of names known to be ndarrays (`arrays`: name -> (shape, dtype)) as methods."""
    if not any(node.__class__ is ast.Call and numpy_name(node.func) in _REDUCTIONS for node in walk(stmt)):
        return stmt  # nothing _Methods rewrites (most statements): not worth its visit of every node
    return _Methods(arrays).visit(stmt)


def method_sum(expr: ast.expr, keywords: list) -> ast.expr:
    """`expr.sum(...)` for an expression known to be an ndarray; `-e.sum(...)` for `-e` (negating the result)."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return ast.UnaryOp(ast.USub(), method_sum(expr.operand, keywords))
    return ast.Call(ast.Attribute(expr, "sum", ast.Load()), [], keywords)


class _Methods(ast.NodeTransformer):
    def __init__(self, arrays):
        self.arrays = arrays

    def visit_Call(self, node):
        self.generic_visit(node)
        func = numpy_name(node.func)
        if len(node.args) != 1 or func is None:
            return node
        subject = node.args[0]
        inner = subject.operand if isinstance(subject, ast.UnaryOp) and isinstance(subject.op, ast.USub) else subject
        if not (isinstance(inner, ast.Name) and inner.id in self.arrays):
            return node
        if func == "sum":
            return method_sum(subject, node.keywords)
        if func in _METHODS and inner is subject:
            return ast.Call(ast.Attribute(subject, _METHODS[func], ast.Load()), [], node.keywords)
        shape, dtype = self.arrays[inner.id]
        if func == "mean" and inner is subject and not node.keywords and dtype in _MEAN_EXACT and math.prod(shape):
            total = ast.Call(ast.Attribute(subject, "sum", ast.Load()), [], [])
            return ast.BinOp(total, ast.Div(), ast.Constant(math.prod(shape)))
        return node

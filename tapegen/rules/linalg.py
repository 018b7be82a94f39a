"""Products and linear algebra: matmul (`@`), dot, inner, outer, tensordot, einsum, trace."""
import operator

import numpy as np

from ..runtime import unbroadcast
from .table import RuleTable

table = RuleTable("linalg")

table.op(operator.matmul, "x1, x2", name="matmul", form="binop", spelling="@")
table.op(np.matmul, "x1, x2")
table.op(np.dot, "a, b")
table.method("dot", np.dot)


def matmul_vjp_x1(x1, x1_shape, x2, g):
    if np.ndim(x2) == 1:
        return unbroadcast(np.multiply.outer(g, x2) if np.ndim(x1) > 1 else g * x2, x1_shape)
    if np.ndim(x1) == 1:
        return unbroadcast(np.matmul(x2, g[..., None])[..., 0], x1_shape)
    return unbroadcast(np.matmul(g, np.swapaxes(x2, -1, -2)), x1_shape)


def matmul_vjp_x2(x1, x2, x2_shape, g):
    if np.ndim(x1) == 1:
        return unbroadcast(np.multiply.outer(x1, g) if np.ndim(x2) > 1 else g * x1, x2_shape)
    if np.ndim(x2) == 1:
        return unbroadcast(np.matmul(np.swapaxes(x1, -1, -2), g[..., None])[..., 0], x2_shape)
    return unbroadcast(np.matmul(np.swapaxes(x1, -1, -2), g), x2_shape)


for _fn in (operator.matmul, np.matmul):
    table.vjp(_fn, "x1")(matmul_vjp_x1)
    table.vjp(_fn, "x2")(matmul_vjp_x2)


@table.vjp(np.dot, "a")
def dot_vjp_a(a, b, g):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.sum(g * b) if np.ndim(a) == 0 else g * b
    if np.ndim(b) == 1:
        return np.multiply.outer(g, b) if np.ndim(a) > 1 else g * b
    # a (..., k) . b (..., k, m): contract g with b over every axis of b but k.
    b_axes = [i for i in range(np.ndim(b)) if i != np.ndim(b) - 2]
    g_axes = list(range(np.ndim(a) - 1, np.ndim(g)))
    return np.tensordot(g, b, (g_axes, b_axes))


@table.vjp(np.dot, "b")
def dot_vjp_b(a, b, g):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.sum(g * a) if np.ndim(b) == 0 else g * a
    if np.ndim(a) == 1:
        return np.multiply.outer(a, g) if np.ndim(b) > 1 else g * a
    a_axes = list(range(np.ndim(a) - 1))
    g_axes = list(range(np.ndim(a) - 1))
    result = np.tensordot(a, g, (a_axes, g_axes))  # (k, *b_batch, m)
    return np.moveaxis(result, 0, -2) if np.ndim(b) > 1 else result

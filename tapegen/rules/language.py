"""Python's own statements as primitives: plain assignment and assignment into an array.

`h = x` inside a loop or branch copies a reference into the loop's variable
(`assign`); `A[i] = v` writes into `A` in place (`setitem`). The forward pass
saves the overwritten region before a `setitem` and the backward pass puts it
back, so every earlier value of `A` (and every view of it) reads correctly
when its rule runs.
"""
import operator

import numpy as np

from ..runtime import unbroadcast
from .table import RuleTable

table = RuleTable("language")


def assign(x):
    """`y = x`: the same value under another name."""
    return x


table.op(assign, "x", form="identity")
table.op(operator.setitem, "a, index, value", name="setitem", form="setitem")


@table.vjp(assign, "x")
def assign_vjp(g):
    return g


@table.jvp(assign, "x")
def assign_jvp(x_dot):
    return x_dot


@table.vjp(operator.setitem, "value")
def setitem_vjp_value(index, value_shape, g):
    return unbroadcast(g[index], value_shape)


@table.vjp(operator.setitem, "a")
def setitem_vjp_a(index, g):
    return zero_region(g, index)


@table.jvp(operator.setitem, "value")
def setitem_jvp_value(a, index, value_dot):
    return put_region(np.zeros(np.shape(a), dtype=np.result_type(a, value_dot)), index, value_dot)


@table.jvp(operator.setitem, "a")
def setitem_jvp_a(index, a_dot):
    return zero_region(a_dot, index)


def zero_region(g, index):
    """A copy of `g` with `g[index]` zeroed: those elements were overwritten, so they get no gradient."""
    g = np.array(g, copy=True)
    g[index] = 0
    return g


def put_region(a, index, value):
    a[index] = value
    return a


def saved_region(a, index):
    """The values `a[index] = ...` is about to overwrite (a copy, for the tape)."""
    region = a[index]
    return np.array(region, copy=True) if isinstance(region, np.ndarray) else region


table.nondiff(saved_region, "a, index", spelling="saved_region")

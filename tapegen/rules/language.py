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


def contained_in(x1, x2):
    """`x1 in x2` (a condition: no gradient)."""
    return x1 in x2


def not_contained_in(x1, x2):
    """`x1 not in x2`."""
    return x1 not in x2


table.nondiff(contained_in, "x1, x2", name="in", form="compare", spelling="in")
table.nondiff(not_contained_in, "x1, x2", name="not_in", form="compare", spelling="not in")


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


# --- lists, tuples and dicts as values -------------------------------------------------------

def make_list(*items):
    """`[a, b]` stored in a variable."""
    return list(items)


def make_tuple(*items):
    """`(a, b)` stored in a variable."""
    return items


def make_dict(keys, *values):
    """`{"W": W, "b": b}`: `keys` is a tuple of constants."""
    return dict(zip(keys, values))


def append(a, value):
    """`xs.append(v)`: appends in place; the backward pass undoes it with `xs.pop()`."""
    a.append(value)
    return a


table.op(make_list, "*items", form="display", spelling="[]")
table.op(make_tuple, "*items", form="display", spelling="()")
table.op(make_dict, "keys, *values", form="display", spelling="{}")
table.op(append, "a, value", form="method", spelling="append")
table.method("append", append)
for _fn in (np.array, np.asarray):
    table.op(_fn, "object, dtype=None", sequences=("object",))


@table.vjp(make_list, "items")
@table.vjp(make_tuple, "items")
def make_list_vjp(items, g):
    return [item_cotangent(g, i) for i in range(len(items))]


@table.vjp(make_dict, "values")
def make_dict_vjp(keys, g):
    return [item_cotangent(g, key) for key in keys]


@table.vjp(append, "value")
def append_vjp_value(a, g):
    return item_cotangent(g, len(a) - 1)


@table.vjp(append, "a")
def append_vjp_a(a, g):
    return without_item(g, len(a) - 1)


@table.vjp(np.array, "object")
@table.vjp(np.asarray, "object")
def array_vjp(object, dtype, g):
    return list(g) if isinstance(object, (list, tuple)) else g


def item_cotangent(g, key):
    """Item `key` of a container's cotangent (a Cotree, list or tuple), or None if it has none."""
    if g is None:
        return None
    if isinstance(g, dict):
        return g.get(key)
    return g[key] if key < len(g) else None


def without_item(g, key):
    """A container's cotangent without item `key` (the list before an append)."""
    if isinstance(g, dict):
        rest = type(g)(g)
        rest.pop(key, None)
        return rest
    return g[:key] if isinstance(g, (list, tuple)) else g

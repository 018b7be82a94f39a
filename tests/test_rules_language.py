"""Rows for the language primitives: assignment, A[i] = v, lists/tuples/dicts, append, np.array."""
import operator

import numpy as np
import pytest

from rule_rows import Row, check_vjp_row
from tapegen.rules import language
from tapegen.rules.shape import added_at

_rng = np.random.default_rng(5)
V = _rng.normal(size=4)
M = _rng.normal(size=(3, 4))


def assign_in_loop(x):
    y = x
    for _ in range(2):
        y = y * 1.5
    return np.sum(y)


def setitem_rows(x):
    A = np.zeros((3, 4))
    A[1] = x[0]
    A[:, 2] = x[:, 1] * 2.0
    return np.sum(A * A)


def setitem_broadcast(x):
    A = np.ones((3, 4))
    A[0, :] = x[0, 0]
    return np.sum(A ** 3)


def list_and_tuple(x):
    pieces = [x[0], x[1] * 2.0]
    pair = (x[2], x[0])
    return np.sum(np.stack(pieces) ** 2) + np.sum(pair[0] * pair[1])


def dict_display(x):
    d = {"a": x * 2.0, "b": np.sin(x)}
    return np.sum(d["a"] * d["b"])


def appended(x):
    xs = []
    for k in range(3):
        xs.append(x * k)
    return np.sum(np.array(xs) ** 2)


def as_array(x):
    return np.sum(np.asarray([x, x * 3.0]) ** 2)


def joined(x):
    items = [x[0], x[1] * 2.0] + [np.sin(x[2])]
    pair = (x[0],) + (x[1] * x[2],)
    return np.sum(np.stack(items * 2) ** 2) + np.sum(pair[1] * pair[0])


def joined_at_run_time(x, rest):
    items = [x[0] * 2.0] + rest  # rest: an argument, a list only when the code runs
    return np.sum(np.stack(items) ** 2)


def added_at_run_time(x, offsets):
    return np.sum(([1.0, 2.0, 3.0, 4.0] + x * offsets) ** 2)  # a list plus an array: added


def rows_of(x):
    first, second, third = list(x)
    return np.sum(first * second) + np.sum(np.stack(tuple(x * third)) ** 2)


def blocks(x):
    return np.sum(np.block([[x[:2, :2], x[:2, 2:]], [x[2:, :2] * 2.0, np.ones((1, 2))]]) ** 2)


def dict_items_and_values(x):
    d = {"a": x[0], "b": x[1] * 2.0}
    d["c"] = np.sin(x[2])
    return np.sum(sum(v * v for v in d.values()) + sum(k * v for k, (_, v) in enumerate(d.items())))


def dict_loop(x):
    """`for k in d` walks the dict's keys (iterated), a list's items too."""
    d = {"b": x * 2.0, "a": x}
    total = 0.0
    for k in d:
        total = total + np.sum(d[k] ** 2)
    for row in [x, x * 3.0]:
        total = total + np.sum(np.sin(row))
    return total


Pair = __import__("collections").namedtuple("Pair", "first second")


def records(x):
    """A namedtuple made of differentiated values (as_record), read by name and by position."""
    p = Pair(x * 2.0, np.sin(x))
    first, second = p
    return np.sum(p.first * second) + np.sum(p[1] * first)


def scatter_added(x):
    """np.add.at into an array the function made (added_at), a position repeated."""
    sums = np.zeros(3)
    np.add.at(sums, [0, 2, 0, 1], x)
    return np.sum(sums ** 2)


def kept_writes(x):
    """written_region: the region `a[i] = v` wrote, a repeated position's earlier write zeroed."""
    region = language.written_region(np.outer(x, x), ([0, 1, 1, 3], [2, 0, 0, 1]))
    return np.sum(np.sin(region) * np.arange(1.0, 5.0))


def written_tangents(x):
    """tangent_written: a tangent as `a[i] = v` writes it into a float array's (kept) and an int array's (none);
    written_region of an int array: no cotangent."""
    floats, ints = np.zeros(4), np.zeros(4, dtype=int)
    kept = language.tangent_written(np.sin(x), floats) + language.tangent_written(x ** 2, ints)
    region = language.written_region(np.outer(x, x), (0, slice(None)), (ints.shape, ints.dtype))
    return np.sum(kept * np.arange(1.0, 5.0)) + np.sum(region)


def set_in_items(x):
    """set_in_item: an array, a list and a dict a container holds, each with one item set."""
    rows = [x[:2] * 1.0, [x[2], 0.5], {"w": x[3], "b": 1.0}]
    a = language.set_in_item(rows[0], 1, x[0] ** 2)
    b = language.set_in_item(rows[1], 0, np.sin(x[1]))
    c = language.set_in_item(rows[2], "b", x[2] * x[3])
    return np.sum(a * x[2:]) + b[0] * b[1] + c["w"] * c["b"]


def python_sums(x):
    return np.sum(sum(x) ** 2) + sum([x[0, 0], x[1, 1]], 1.0) * sum(np.sum(row) for row in x)


def _accumulate(total, x):
    total += x


def _accumulated(s, x):
    s += x
    return s


def _steps_through_a_loop(W, b):
    """`W` and `b` arguments changed through a loop's target in a loop (copy_array: W's copy, b as it is; a
    number `b` in tests/cases/python_functions.py gradient_steps_through_a_loop_over_arguments)."""
    for _ in range(2):
        for p in [W, b]:
            p -= 0.1 * np.sin(p)
    return W * b


def added_in_a_helper(x):
    """A helper's `total += x` on the caller's array (in_place_result: the array's new value) and on a
    number (the caller's number unchanged)."""
    total = x * 2.0
    _accumulate(total, np.sin(x))
    s = np.sum(x)
    r = _accumulated(s, x)
    return np.sum(total ** 2) + np.sum(r) * s


def named_twice_then_added_to(x):
    """`prev = vel` in a pass, then `vel += ...`: prev holds the new value where it is that very array when the
    code runs (changed_with), its own where not (the first pass)."""
    vel, prev = x * 2.0, x * 0.5
    total = 0.0
    for k in range(3):
        vel += np.sin(prev) * x
        total = total + np.sum(prev * vel)
        if k < 2:
            prev = vel
    return total


def views_made_again_or_kept(x):
    """`W = B[idx]` (a copy: an index array) and `V = B[k]` (a view: an int known when the code runs), then `B[0] =
    v`: V is made again from B, W kept as it was (shows_memory_of, view_again)."""
    B = x * 2.0
    idx, k = np.array([0, 1]), int(np.argmax(np.abs(x) * 0.0))
    W, V = B[idx], B[k:k + 2]
    B[0] = np.sin(x[3])
    return np.sum(W * x[:2]) + np.sum(V ** 2 * x[2:])


def dict_get(x):
    """`d.get(k)` on a key present and `d.get(k, default)` on one missing (item_or)."""
    d = {"a": x * 2.0, "b": np.sin(x)}
    return np.sum(d.get("a") * d.get("b")) + np.sum(d.get("c", x ** 2))


def next_or_default(x):
    """`next(g, default)` with an item left and with none left (first_or)."""
    g = (v * 2.0 for v in x[:2])
    a = next(g, x[3])
    b = next(g, x[3])
    c = next(g, np.sin(x[2]))
    return a * b + c ** 2


def deep_copied(x):
    """copy.deepcopy of a dict of arrays and lists (deep_copy), then the original changed in place."""
    import copy
    d = {"a": x * 2.0, "b": [np.sin(x)]}
    e = copy.deepcopy(d)
    d["a"] += x
    return np.sum(d["a"] * e["a"]) + np.sum(e["b"][0] * x)


def dict_popped(x, keys):
    """d.pop(k) on a dict whose keys are known (dict_without), and on one whose keys are known only when the
    code runs (`keys` an argument: item_or, then dict_without)."""
    d = {"a": x * 2.0, "b": np.sin(x), "c": x ** 2}
    a = d.pop("a")
    e = dict(zip(keys, (x * 3.0, np.cos(x))))
    u = e.pop("u", x)
    return np.sum(a * d["b"]) + np.sum(d["c"] * u) + np.sum(e["v"] ** 2)


def sorted_items(x):
    """sorted() of a dict (its keys), of a list of differentiated values and of an array (py_sorted)."""
    d = {"b": x, "a": x * 2.0}
    first = [d[k] for k in sorted(d)][0]
    ordered = sorted([x[0] * 2.0, x[1], np.sin(x[2])], reverse=True)
    return np.sum(first ** 2) + ordered[0] * 3.0 + ordered[1] ** 2 + np.sum(np.array(sorted(x * x)) * x)


def dict_copies(x):
    """dict(d) of a dict and of (key, value) pairs (dict_copy), then an entry replaced."""
    d = dict({"a": x * 2.0, "b": np.sin(x)})
    d["b"] = d["b"] * x
    e = dict([("u", x ** 2), ("v", x)])
    return np.sum(d["a"] * d["b"]) + np.sum(e["u"] * e["v"])


def dict_updated(x, keys):
    """d.update(other) where other's keys are known only when the code runs (`keys` an argument): `updated`."""
    d = {"a": x * 2.0, "b": np.sin(x)}
    d.update({key: np.cos(x) * weight for key, weight in zip(keys, (0.5, 2.0))})
    return np.sum(d["a"] * d["b"]) + np.sum(d["c"] ** 2)


def flattened(x):
    """autograd.misc.flatten's flatten of a nested dict (flatten_tree), and back (unflatten_tree)."""
    tree = {"b": x * 2.0, "a": [np.sin(x), np.reshape(x, (2, 2))]}
    flat = language.flatten_tree(tree)
    back = language.unflatten_tree(tree, flat ** 2)
    return np.sum(flat * np.arange(12.0)) + np.sum(back["a"][1] * x.reshape(2, 2))


ROWS = [
    Row("flatten_tree-unflatten_tree-(4,)-float64", flattened, (V,),
        covers=(language.flatten_tree, language.unflatten_tree, language.flat_cotangent)),
    Row("dict_copy-(4,)-float64", dict_copies, (V,), covers=(dict,)),
    Row("updated-(4,)-float64", dict_updated, (V, ("a", "c")),
        covers=(language.updated,)),
    Row("item_or-(4,)-float64", dict_get, (V,), covers=(language.item_or,)),
    Row("first_or-(4,)-float64", next_or_default, (V,), covers=(language.first_or,)),
    Row("deep_copy-(4,)-float64", deep_copied, (V,), covers=(language.deep_copy,)),
    Row("dict_without-(4,)-float64", dict_popped, (V, ("u", "v")), covers=(language.dict_without,)),
    Row("sorted-(4,)-float64", sorted_items, (V,), covers=(language.py_sorted,)),
    Row("in_place_result-(4,)-float64", added_in_a_helper, (V,), covers=(language.in_place_result,)),
    Row("changed_with-(4,)-float64", named_twice_then_added_to, (V,), covers=(language.changed_with,)),
    Row("view_again-(4,)-float64", views_made_again_or_kept, (V,), covers=(language.view_again,)),
    Row("copy_array-(4,)-float64", lambda x: np.sum(_steps_through_a_loop(x, 0.5) ** 2), (V,),
        covers=(language.copy_array,)),
    Row("written_region-(4,)-float64", kept_writes, (V,), covers=(language.written_region,)),
    Row("tangent_written-(4,)-float64", written_tangents, (V,), covers=(language.tangent_written,)),
    Row("set_in_item-array-list-dict-(4,)-float64", set_in_items, (V,), covers=(language.set_in_item,)),
    Row("assign-loop-(4,)-float64", assign_in_loop, (V,), covers=(language.assign,)),
    Row("setitem-rows-(3,4)-float64", setitem_rows, (M,), covers=(operator.setitem,)),
    Row("setitem-broadcast-scalar-float64", setitem_broadcast, (M,), covers=(operator.setitem,)),
    Row("list-tuple-(3,4)-float64", list_and_tuple, (M,), covers=(language.make_list, language.make_tuple)),
    Row("dict-(4,)-float64", dict_display, (V,), covers=(language.make_dict,)),
    Row("append-np.array-(4,)-float64", appended, (V,), covers=(language.append, np.array)),
    Row("asarray-(4,)-float64", as_array, (V,), covers=(np.asarray,)),
    Row("concat-repeat-(3,4)-float64", joined, (M,), covers=(language.concat, language.repeat_items)),
    Row("repeat_items-as-a-product-(4,)-float64", lambda x: x * [1.0, -2.0, 3.0, 0.5] + [2.0, 1.0, 0.5, 3.0] * x ** 2,
        (V,), covers=(language.repeat_items,)),
    Row("plus-joined-(3,4)-float64", joined_at_run_time, (M, [V, V * 2.0]), wrt=(0,), covers=(language.plus,)),
    Row("plus-added-(4,)-float64", added_at_run_time, (V, V * 0.5), wrt=(0, 1), covers=(language.plus,)),
    Row("list-tuple-rows-(3,4)-float64", rows_of, (M,), covers=(list, tuple)),
    Row("block-(3,4)-float64", blocks, (M,), covers=(np.block,)),
    Row("with_item-items-values-(3,4)-float64", dict_items_and_values, (M,),
        covers=(language.with_item, language.dict_items, language.dict_values)),
    Row("sum-(3,4)-float64", python_sums, (M,), covers=(language.py_sum,)),
    Row("iterated-(4,)-float64", dict_loop, (V,), covers=(language.iterated,)),
    Row("as_record-(4,)-float64", records, (V,), covers=(language.as_record,)),
    Row("added_at-(4,)-float64", scatter_added, (V,), covers=(added_at,)),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_vjp(row):
    check_vjp_row(row)

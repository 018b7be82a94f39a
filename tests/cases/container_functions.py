"""Functions that build, index, join and unpack lists, tuples and dicts (issue 14's reproductions and more).

Each was silently wrong or crashed before containers became values with a structure known to
the transform; tests/test_containers.py checks each in grad, vjp, jvp and grad-of-grad.
"""
import collections

import numpy as np


def rotation(theta, p, target):
    R = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    return np.sum((R @ p - target) ** 2)


def nested_rows_of_a_scalar(x):
    return np.sum(np.array([[x, x, x], [x, x, x]]) ** 2)


def spring(x):
    return np.sum(np.concatenate([[x[0]], np.diff(x), [-x[-1]]]) ** 2)


def spring_hstack(x):
    return np.sum(np.hstack([[x[0]], np.diff(x), [-x[-1]]]) ** 2)


def spring_vstack(x):
    return np.sum(np.vstack([[x[0], x[1]], np.diff(x)[:2], [x[-1], -x[0]]]) ** 2)


def stacked_lists(x):
    return np.sum(np.stack([[x[0], x[1]], x[1:]]) ** 3)


def column_stacked(x):
    return np.sum(np.column_stack([[x[0], x[1]], x[:2] * 2.0]) * np.array([[1.0, 2.0], [3.0, 4.0]]))


def dstacked(x):
    return np.sum(np.dstack([[[x[0], x[1]]], [[x[2], x[0]]]]) ** 2)


def blocks(x):
    top = np.block([[x[:2], x[2:3]], [np.array([x[0], x[1]]) * x[2], np.ones(1)]])
    return np.sum(top ** 2)


def list_in_list(w):
    nested = [[w]]
    return np.sum(nested[0][0] * 3.0)


def tuple_in_list(w):
    nested = [(w,)]
    return np.sum(nested[0][0] * 3.0)


def tuple_in_tuple(w):
    nested = ((w,),)
    return np.sum(nested[0][0] * 3.0)


def tuple_in_dict(w):
    nested = {"a": (w,)}
    return np.sum(nested["a"][0] * 3.0)


def tuples_appended_and_unpacked(w):
    layers = []
    for i in range(2):
        layers.append((w[i] * 1.0, w[i] * 2.0))
    W, b = layers[1]
    return np.sum(W * b)


def branch_known_now(a):
    flag = True
    if flag:
        r = np.sin(a)
    else:
        r = np.cos(a)
    return np.sum(r)


def tuple_joined(h):
    args = (h,)
    return np.sum(np.hstack(args + (np.ones((2, 1)),)) ** 2)


def list_joined_and_repeated(h):
    xs = [h * 2.0] + [np.sin(h)]
    ys = xs * 2
    return np.sum(np.stack(ys) * np.arange(4.0)[:, None])


def loop_over_a_tuple(h):
    s = 0.0
    for a in (h, h * 2.0):
        s = s + a
    return np.sum(s * s)


def split_and_recombined(x):
    a, b = np.split(x, 2)
    return np.sum(a * b ** 2)


def array_split_pieces(x):
    pieces = np.array_split(x, 3)
    return np.sum(pieces[0] ** 2) + np.sum(pieces[2] * pieces[1][:1])


def one_piece_unpacked(x):
    a, = np.split(x, 1)
    return np.sum(a ** 2)


def statistics_of_a_list(x):
    t = x * 2.0
    return np.mean([x, t]) + np.std([x, t]) + np.var([x, t]) + np.sum([x, t])


def dict_call(a, b):
    d = dict(a=a, b=b)
    return np.sum(d["a"] * d["b"])


def unused_items(w):
    xs = []
    xs.append(w * 2.0)
    xs.append(w * 3.0)
    d = {"a": w * 2.0, "b": w * 3.0}
    return np.sum(xs[0]) + np.sum(d["b"])


def dict_of_tuples(params, x):
    h = x
    for name in ("l1", "l2"):
        W, b = params[name]
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def returns_nested_rows(x):
    return np.array([[x[0], x[1]], [x[1] * x[0], 2.0]])


def sliced_list(x):
    xs = [x * 1.0, x * 2.0, x * 3.0]
    head = xs[:2]
    return np.sum(head[1] * xs[-1])


def list_extended(w):
    xs = [w]
    xs.extend([w * 2.0, np.sin(w)])
    return np.sum(xs[1] * xs[2])


def items_replaced(w):
    xs = [w, w]
    xs[1] = w * 3.0
    d = {"a": w}
    d["b"] = np.cos(w)
    d["a"] = d["a"] + w * w
    return np.sum(xs[1] * d["b"] + d["a"])


def items_replaced_in_a_loop(w):
    acc = {"s": w * 0.0}
    rows = [w, w]
    for i in range(3):
        acc["s"] = acc["s"] + w * i
        rows[i % 2] = rows[i % 2] * w
    return np.sum(acc["s"] * rows[0] + rows[1])


def joined_in_place(w):
    xs = [w]
    xs += [w * 3.0]
    ts = (w,)
    ts += (np.sin(w),)
    return np.sum(xs[1] * ts[1])


# --- functions returning a structure: its tangent and cotangent have that structure (autograd suite) ---

Pair = collections.namedtuple("Pair", "first second")


def returns_a_list(x):
    return [x * 2.0, np.sin(x)]


def returns_a_list_of_one(x):
    return [x * 2.0]


def returns_nested_tuples(x):
    return (x * 2.0, np.sin(x)), x


def returns_a_list_in_a_tuple(x):
    return [np.cos(x), (x * x, 3.0)], np.sum(x)


def returns_a_tuple_held_in_a_variable(x):
    t = (x * 2.0, x[:2])
    return t


def returns_a_tuple_built_by_a_call(x):
    return tuple((x * 2.0, np.cos(x[1:])))


def returns_a_dict(x):
    return {"a": x * 2.0, "b": np.sin(x[:2])}


def returns_unequal_pieces(x):
    return np.split(np.sin(x), [1, 3])


def returns_a_namedtuple(x):
    return Pair(x * 2.0, np.sin(x[:3]))


def returns_eigh(a):
    return np.linalg.eigh(a @ a.T + np.diag([1.0, 2.0, 3.0]))
CONSTANT_LAYERS = [(np.array([[0.5, -0.3], [0.2, 0.8]]), np.array([0.1, -0.1])),
                   (np.array([[-0.4, 0.6], [0.7, 0.1]]), np.array([0.0, 0.2]))]


def layer_joined_to_constant_layers(W, b):
    """autograd's neural_net with one layer differentiated: `[(W, b)] + REST`, a ragged list of tuples."""
    layers = [(W, b)] + CONSTANT_LAYERS[:1]
    h = np.ones((1, 2))
    for Wi, bi in layers:
        h = np.tanh(h @ Wi + bi)
    return np.sum(h)


def layer_between_constant_layers(W, b):
    layers = CONSTANT_LAYERS[1:] + [(W, b)] + CONSTANT_LAYERS
    h = np.ones((1, 2))
    for Wi, bi in layers:
        h = np.tanh(h @ Wi + bi)
    return np.sum(h)


def flattened_by_a_loop(x, b):
    """autograd's flatten: a loop over list((x, b)) appending raveled pieces (grad-of-grad crashed)."""
    pieces = []
    for c in list((x, b)):
        pieces.append(np.ravel(c))
    v = np.concatenate(pieces)
    return np.dot(v, v) * np.sum(np.sin(v))


def _items(x):
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def flattened_by_nested_loops(x, b):
    pieces = []
    for a in _items([(x, b)]):
        for c in _items(a):
            pieces.append(np.ravel(c))
    v = np.concatenate(pieces)
    return np.dot(v, v) * np.sum(np.cos(v))


def slice_of_a_list_item_set(x):
    xs = [x, 2 * x, 3 * x]
    ys = xs[:2]  # a new list: setting its item leaves xs as it was
    ys[0] = x * 5
    return np.sum(xs[0]) + np.sum(ys[0] * ys[1])


def slice_of_a_list_appended(x, n):
    xs = [x, 2 * x, 3 * x]
    ys = xs[1:]
    ys.append(x ** 2)
    head = xs[:n]  # (a slice made when the code runs)
    head.append(x * 4)
    return np.sum(xs[1]) + len(xs) + np.sum(ys[-1] * ys[0]) + np.sum(head[-1] * head[0])


def appends_to_a_list_argument(xs):
    xs.append(xs[0] * 2.0)  # into a copy: the gradient is with respect to the list as passed
    return sum(np.sum(y ** 2) for y in xs)


def appends_to_a_slice_of_a_list_argument(xs):
    ys = xs[1:]
    ys.append(xs[0] * 2.0)
    return sum(np.sum(y ** 2) for y in ys)


def appends_to_an_item_of_a_list_argument(x, xs):
    xs[0].append(x * 3.0)  # changes xs: read after through xs[0]
    return np.sum(xs[0][-1] * xs[0][0])


def appends_to_a_list_argument_then_returns_it(x, xs):
    xs.append(x ** 2)
    return xs


def items_popped_and_deleted(x):
    """`pop`, `del`, `reverse`, `clear` and `sort` on lists (and `del` on a dict) built here: each name rebound to
    the changed list, as Python changes it in place."""
    xs = [x, x * 2, x * 3, x * 4, x * 5]
    last, first = xs.pop(), xs.pop(0)
    middle = xs.pop(1)
    del xs[-1]
    ys = [x[0] * 2, x[1], x[2] * 3]
    ys.sort()
    zs = [x, x ** 2]
    zs.sort(key=lambda v: np.sum(v), reverse=True)
    zs.reverse()
    d = {"a": x, "b": x * 2}
    del d["a"]
    ws = [x]
    ws.clear()
    ws.append(x * 6)
    return np.sum(last * first + middle * xs[0]) + ys[0] * ys[2] + np.sum(zs[0] * d["b"] + ws[0]) + len(xs)


def stack_popped_until_empty(x):
    """A work list: `while stack: v = stack.pop()`, items pushed back while large."""
    stack, total = [x], 0.0
    while stack:
        v = stack.pop()
        if np.sum(np.abs(v)) > 0.2:
            stack.append(v * 0.5)
        total = total + np.sum(v ** 2)
    queue = [x, x * 2]
    for _ in range(3):
        queue.append(queue.pop(0) * 0.3)
    return total + np.sum(queue[0] * queue[1])


def one_list_under_two_names(x):
    """`a = b = []` is one list: appending through `a` shows in `b`."""
    a = b = []
    a.append(x * 2)
    return np.sum(b[0] ** 2) + len(b)


def list_argument_joined_and_repeated(xs, t):
    """`xs + xs` joins and `xs * 2` repeats a list argument, and `t + (v,)` a tuple one, as Python does (`xs + xs`
    was NumPy's sum: a wrong gradient with no error; `xs * 2` crashed in the gradient code)."""
    joined, repeated, longer = xs + xs, xs * 2, t + (xs[0] * 3.0,)
    return np.sum(joined[1] * joined[2]) + np.sum(repeated[3] ** 2) + np.sum(longer[-1] * longer[0])


def lists_in_a_dict_argument_joined(p, ps):
    """`p["weights"] + p["biases"]` of a dict argument's lists (a params dict), `ps[0] + ps[1]` of a list of
    lists: joined, as Python joins them (they were NumPy's sum: a wrong gradient with no error where the arrays'
    shapes agreed, a crash where they did not); `p["scale"] * 2` of an array item stays NumPy's product."""
    total = 0.0
    for k, w in enumerate(p["weights"] + p["biases"]):
        total = total + np.sum(w ** 2) * (k + 1)
    rows = ps[0] + ps[1]
    return total + sum(np.sum(r) * (k + 2) for k, r in enumerate(rows)) + np.sum(p["scale"] * 2)


def lists_joined_by_sum_and_reduce(p):
    """`sum(lists, [])` and `functools.reduce(operator.add, lists)` join lists, as Python's + does (sum's rules
    added them: TypeError in the gradient code; reduce's `operator.add` was NumPy's sum: a crash, or a wrong
    gradient with no error where the shapes agreed)."""
    import functools
    import operator
    flat = sum([p["weights"], p["biases"]], [])
    joined = functools.reduce(operator.add, [p["weights"], p["biases"]])
    rows = sum([[p["weights"][0]], [p["biases"][1]]], [])
    return sum(np.sum(w ** 2) * (k + 1) for k, w in enumerate(flat)) + np.sum(joined[3] * joined[0]) + \
        np.sum(rows[1] * 3.0) + functools.reduce(operator.add, [np.sum(w) for w in flat])


def product_of_a_list_of_sums(x, y):
    """np.prod of a list: its rules ask `is_duck(a)` of the list, which a second derivative differentiates (it
    was refused there as a list passed to a function that may change it)."""
    return np.prod([np.sum(x), np.sum(y * 2.0), np.sum(x * y)]) + np.sum(x ** 2)


def setdefault_on_dicts_built_here(x):
    """`d.setdefault(k, v)`: `d[k] = d.get(k, v)`, then the item itself (so `.append` on it changes the list `d`
    holds), in a loop over keys known only when the code runs. It was refused."""
    groups = {}
    for i in range(3):
        groups.setdefault(i % 2, []).append(x[i] * (i + 1))
    sums = {}
    for i in range(3):
        sums[i % 2] = sums.setdefault(i % 2, 0.0) + x[i] ** 2
    first = sums.setdefault("first", x * 2.0)
    return sum(np.sum(np.stack(v) ** 2) for v in groups.values()) + sums[0] * sums[1] * len(sums) + \
        np.sum(first * sums["first"])


def list_changes_in_loops_and_branches(x):
    """`del xs[0]`, `xs.clear()`, `xs.reverse()`, `xs.sort()` in a loop or branch rebind the list the loop
    carries, or the branches join: on 5e8d915 `del xs[0]` in a loop changed a fresh copy each pass (a wrong
    value and gradient with no error), `xs.clear()` in a branch left the name unset on the other path
    (NameError), and `xs.sort()` in a loop that appends sorted the list as an array."""
    xs = [x[0], x[1] * 2.0, x[2] * 3.0]
    for i in range(2):
        del xs[0]
    ys = [x[2], x[0] * 2.0, x[1] * 3.0]
    if x[0] > 0:
        ys.clear()
    ys.append(x[1] * 0.5)
    zs = [x[1], x[2] * 2.0, x[0] * 3.0]
    if x[1] > 0:
        zs.reverse()
    ws = [x[0] * 4.0, x[1], x[2] * 2.0]
    for i in range(2):
        ws.sort(reverse=i == 0)
        ws.append(x[0] * i - 1.0)
    return xs[0] * len(xs) + ys[0] * 3.0 * len(ys) + zs[0] * 5.0 + zs[2] + \
        sum(w * (k + 1.0) for k, w in enumerate(ws))


def defaultdicts_built_here(x, labels=(0, 1, 0, 2)):
    """`collections.defaultdict`: a missing item is made when read (`totals[k] += v`, `groups[k].append(v)`,
    `tree[a][b] = v` of a defaultdict(dict), a factory lambda, a function of the user's, `int` counts). It was
    refused as a write into an array tapegen cannot follow."""
    import collections
    from collections import defaultdict
    totals = collections.defaultdict(float)
    groups = defaultdict(list)
    counts = defaultdict(int)
    for i, label in enumerate(labels):
        totals[label] += x[i] ** 2
        groups[label].append(x[i] * (i + 1))
        counts[label] += 1
    tree = defaultdict(dict)
    tree["a"]["b"] = x[0] * 3.0
    tree["a"]["c"] = x[1]
    rows = defaultdict(lambda: np.zeros(2))
    rows[labels[1] + 1] += x[:2] * 2.0
    made = defaultdict(_two_ones)
    made["w"] = made["w"] * x[2]
    unread = totals[5] + len(totals)  # (a read makes the item: 0.0, and len counts it)
    return sum(totals[k] * counts[k] for k in sorted(totals)) + sum(np.sum(np.stack(v) ** 2) for v in groups.values()) \
        + tree["a"]["b"] * tree["a"]["c"] + np.sum(rows[2] ** 2) + len(rows) + np.sum(made["w"]) + unread


def _two_ones():
    return np.ones(2)


def items_deleted_and_sorted_in_a_loop(x):
    """`del xs[0]`, `xs.sort()`, `xs.reverse()` and `xs.clear()` in a loop rebind the list each pass, as
    `xs.pop()` does (after `del xs[0]` twice, the loop gave the list as it was before it: 26.45 where Python gives
    35.65, no error; `xs.sort()` in a loop was NumPy's sort of the list, whose tangent code raised)."""
    xs = [x, x * 2.0, x * 3.0, x * 4.0]
    for _ in range(2):
        del xs[0]
    ys = [x[0], x[1] * 2.0, x[2]]
    for _ in range(2):
        ys.sort()
        ys[0] = ys[0] + 2.0
    zs = [x, x * 3.0]
    for k in range(3):
        zs.reverse()
        if k == 1:
            zs.clear()
        zs.append(x * (k + 2.0))
    return np.sum(xs[0] + xs[1] * 7.0) + ys[0] * 3.0 + ys[1] * 2.0 + ys[2] + np.sum(zs[0] * zs[-1]) * len(zs)


def items_read_past_a_slice_at_second_order(x):
    """`ys = xs[1:]` (as `xs.pop(0)` leaves it): the gradient code adds one item's cotangent to the
    slice's, whose tangent, differentiated again, lacked the other items (None * 3.0 in tg.hessian's code)."""
    xs = [x, np.sin(x), x * 3.0]
    ys = xs[1:]
    return np.sum(xs[0] * ys[0] + ys[1])


def _reversed_in_place(xs):
    xs[:] = [v * 2.0 for v in xs[::-1]]


def slices_of_a_list_assigned(x):
    """`xs[:] = ...` (here by a helper, on its caller's list) and `xs[1:3] = ...` replace the items, as many as
    given: with_item's rules took one item's key (TypeError: unhashable type: 'slice', in the gradient code)."""
    xs = [x, x * 3.0, np.sin(x)]
    _reversed_in_place(xs)
    xs[1:3] = (x * 5.0, xs[1] * 6.0, xs[2] * 7.0)
    return np.sum(xs[0] * 2.0 + xs[-1] * xs[1]) * len(xs)


def lists_joined_by_operator_iadd(x):
    """`operator.iadd(xs, ys)` on a list built here is `xs += ys`: it extends `xs` (run as written, the items
    it added had no derivative: a gradient lost with no error where another name read the list)."""
    import operator
    xs, ds = [], {"a": x}
    for k in range(3):
        operator.iadd(xs, [x * k])
    joined = operator.iadd(xs, [np.sin(x)])
    operator.ior(ds, {"b": x * 3.0})
    return np.sum(xs[2] * joined[-1]) + np.sum(ds["b"] * ds["a"])


def _scaled_item(d, x):
    d["x"] = d["x"] * x


def _scaled_in_a_loop(d, x):
    for _ in range(2):
        _scaled_item(d, x)


def a_helpers_helper_changing_the_callers_dict_in_a_loop(x):
    """A helper's loop calling another helper that changes the dict its caller passed down: the change reaches the
    first caller (it stopped at the helper's loop: x where Python gives x ** 3, no error)."""
    d = {"x": x}
    _scaled_in_a_loop(d, x)
    return np.sum(d["x"])


def _decayed(params, x):
    for k in params:
        params[k] = params[k] * x[0]


def params_flattened_after_a_helper_changes_them(x):
    """A helper's loop writing `params[k]` of the dict `unflatten` made a pass before (tg.flatten in an optimizer
    loop): it was taken for an array's item write (AttributeError in the gradient code)."""
    import tapegen as tg
    params = {"a": x, "b": x[:2] * 2.0}
    for _ in range(2):
        _decayed(params, x)
        v, unflatten = tg.flatten(params)
        params = unflatten(v + 0.1 * v ** 2)
    return np.sum(params["a"]) + np.sum(params["b"] ** 2)


def items_of_an_ordered_dict_set_in_a_loop(x):
    """A dict the function did not build as a display (collections.OrderedDict()), its items set by string keys in
    a loop: a new dict each pass, which the loop did not carry (2.3 where Python gives 3.45, no error)."""
    import collections
    d = collections.OrderedDict()
    for k in range(3):
        d["a"] = d.get("a", 0.0) + x * k
    return np.sum(d["a"] * x)


def tuples_in_a_list_joined_and_repeated(x):
    """Tuples a list holds are joined by `+` and repeated by `*` when read out, as lists are: functools.reduce(
    operator.add, [(x,), (2x,)]) was NumPy's sum (a wrong gradient, no error), `rows[0] + rows[1]` and
    `rows[1] * 3` crashed; `sum(rows, start)` with a list named `start` joins too (py_sum's rules raised)."""
    import functools
    import operator
    rows = [(x, x * 2.0), (np.sin(x),)]
    reduced = functools.reduce(operator.add, rows)
    joined, repeated = rows[0] + rows[1], rows[1] * 3
    start = [x * 5.0]
    summed = sum([[x], [x * 3.0]], start)
    return np.sum(reduced[1] * reduced[0] + joined[2] * repeated[1]) * len(repeated) + \
        np.sum(summed[0] * summed[2]) * len(summed)


def _tripled(layer):
    layer["w"] = layer["w"] * 3.0


def a_dict_read_out_of_a_list_changed_by_a_helper(x):
    """`layer = layers[1]; _tripled(layer)`: the helper changes the dict the list holds, as Python does (only the
    name `layer` was rebound: 10.9 where Python gives 18.9, no error)."""
    layers = [{"w": x}, {"w": x * 2.0}]
    layer = layers[1]
    _tripled(layer)
    return np.sum(layers[0]["w"] * layers[1]["w"] + layer["w"])


def items_of_a_defaultdict_added_to_in_a_loop(x):
    """`d = defaultdict(float); d["a"] += v` in a loop: a copy keeps the dict's factory (`type(d)(d)` raised
    TypeError in the gradient code)."""
    import collections
    d = collections.defaultdict(float)
    for k in range(3):
        d["a"] += x * k
    return np.sum(d["a"] * x)


class _MomentumFirstSetInStep:
    """An optimiser written the usual way: its state is None until the first step makes it."""

    def __init__(self, rate=0.1):
        self.rate, self.velocity, self.seen = rate, None, None

    def step(self, params, grads):
        if self.velocity is None:
            self.velocity = [np.zeros_like(p) for p in params]
        if self.seen is None:
            self.seen = {}
        for i, (p, g) in enumerate(zip(params, grads)):
            self.velocity[i] = 0.9 * self.velocity[i] + g
            self.seen[i] = self.seen.get(i, 0.0) + g * g
            params[i] = p - self.rate * self.velocity[i] / np.sqrt(1.0 + self.seen[i])
        return params


def a_list_first_set_where_it_is_none(x, fresh=True):
    """A list or dict set in a branch or loop on a name that held None (`self.velocity = None` in
    `__init__`, `if self.velocity is None: self.velocity = [...]` in `step`), then written item by item:
    the item writes went the way of an array's (a TypeError in NumPy's code, then 'NoneType' object is
    not subscriptable), since None on one path made the list's kind unknown after the join."""
    m = None
    if fresh:
        m = [x * 0.0, x]
    m[0] = m[0] + np.sin(x)
    opt = _MomentumFirstSetInStep()
    params = [x, x * 2.0]
    for _ in range(3):
        grads = [np.cos(p) * m[1] for p in params]
        params = opt.step(params, grads)
    cache = None
    for k in range(2):
        if cache is None:
            cache = {"h": x}
        cache["h"] = np.tanh(cache["h"]) * (k + 1.0)
    return np.sum(params[0] * params[1] + m[0]) + np.sum(cache["h"] ** 2) + (m is None)


def items_popped_from_a_dict(x):
    """`k, v = d.popitem()` on a dict whose keys are known when transforming: its last key's item, and the dict
    without it (it was refused as a change tapegen cannot follow)."""
    d = {"a": x, "b": x * 2.0}
    d["c"] = np.sin(x)
    k, v = d.popitem()
    pair = d.popitem()
    return np.sum(v * d["a"]) * len(d) + np.sum(pair[1] ** 2) * (k == "c") * len(pair[0])


def lists_and_dicts_two_names_hold_changed_in_place(w):
    """`ys = xs; xs += [v]` and `e = d; d |= {...}`: Python changes the list or dict both names hold (it was
    refused when the code ran)."""
    xs = [w]
    ys = xs
    xs += [w * 2.0]
    d = {"a": w}
    e = d
    d |= {"b": w * 3.0}
    return np.sum(ys[1] * ys[0]) * len(ys) + np.sum(e["b"] * e["a"])


def items_removed_where_the_code_finds_them(x):
    """`xs.remove(v)` (the first item equal to v) and `del xs[k]` with `k` known only when the code runs (a loop's
    variable): the list without that item, its position found when the code runs (both were refused)."""
    names = ["w", "b", "c"]
    names.remove("b")
    xs = [x[0], x[1] * 2.0, 3.0, np.sin(x[2])]
    xs.remove(3.0)
    rows = [x, x * 2.0, x ** 2, np.cos(x)]
    for k in range(2):
        del rows[k]
    del rows[-len(names)]
    return sum(xs) * len(names) + np.sum(rows[0] * x) * len(rows)


def keys_of_dict_items_used_as_numbers(x):
    """`for k, v in d.items(): total += k * v` with number keys (a defaultdict's too): a key is a constant, its
    tangent zero (forward mode took the key itself for its tangent: a wrong jvp, no error, on 481258e)."""
    d = {0: x[0], 1: x[1] * 2.0}
    counts = collections.defaultdict(float)
    for i in range(3):
        counts[i % 2 + 1] += x[i] ** 2
    total = 0.0
    for k, v in d.items():
        total = total + k * v
    for k, v in counts.items():
        total = total + v * k
    return total


def items_read_out_then_rebound_and_changed_in_place(x):
    """RNN-style history: `h = hs[t - 1]`, a new array bound to `h`, then `h += v`: the new array changes, not
    the item (on fb8f5d2 an internal KeyError or TypeError from the generated code: `h` was taken for a view
    of the dict or list, whose kind the loop then forgot)."""
    hs = {-1: np.zeros(3)}
    for t in range(3):
        h = hs[t - 1]
        h = h * 0.5
        h += x * t
        hs[t] = h
    rows = [x * 1.0]
    for t in range(3):
        h = rows[t]
        if t % 2:
            h = h * 0.5
        else:
            h = np.tanh(h)
        h *= x
        rows.append(h)
    return np.sum(hs[2] ** 2) + np.sum(rows[3] * rows[1]) + np.sum(rows[0])


def _batchnorm_forward(x, gamma, beta, bn_param):
    """cs231n's batchnorm_forward (train mode): it keeps running averages in the dict it is given."""
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    mu = x.mean(axis=0)
    var = x.var(axis=0)
    out = gamma * (x - mu) / np.sqrt(var + eps) + beta
    bn_param["running_mean"] = momentum * running_mean + (1 - momentum) * mu
    bn_param["running_var"] = momentum * running_var + (1 - momentum) * var
    return out


def dicts_of_a_list_changed_in_a_loop_through_the_item(W, X):
    """cs231n's FullyConnectedNet with batchnorm: `for bn_param in self.bn_params: bn_param["mode"] = mode`,
    then layer i calls `batchnorm_forward(..., self.bn_params[i])`, which sets items of that dict; and a cache
    per layer set through `c = caches[i]`. Python changes the dicts the list holds (refused in a loop on
    fb8f5d2)."""
    bn_params = [{"mode": "test"} for _ in range(2)]
    for bn_param in bn_params:
        bn_param["mode"] = "train"
    caches = [{} for _ in range(2)]
    h = X
    for i in range(2):
        c = caches[i]
        c["in"] = h
        h = np.tanh(_batchnorm_forward(h @ W, 1.5, 0.1, bn_params[i]))
        c["out"] = h
    return np.sum(h ** 2) + np.sum(bn_params[1]["running_var"] * bn_params[0]["running_mean"]) \
        + np.sum(caches[0]["out"] * caches[1]["in"]) * (bn_params[0]["mode"] == "train")


def an_item_replaced_before_a_change_through_its_old_name(x):
    """`c = caches[i]`, then `caches[i] = {...}` (or another item replaced): a change through `c` changes the
    old dict only, or the item it still is."""
    caches = [{"a": x}, {"a": x}]
    for i in range(2):
        c = caches[i]
        caches[i] = {"a": x * 3.0}
        c["a"] = x * 2.0
    other = [{"a": x}, {"a": x}]
    for i in range(2):
        c = other[i]
        other[1 - i] = {"a": x * 3.0}
        c["a"] = x * 2.0
    return np.sum(caches[0]["a"] * c["a"]) + np.sum(other[0]["a"]) + np.sum(other[1]["a"] ** 2)


def lists_of_dicts_joined(x):
    """`caches.insert(0, {...})` is the list joined with a list of a dict: forward mode added the dict tangents
    with `+` (TypeError on fb8f5d2)."""
    caches = [{"a": x}, {"a": x * 2.0}]
    caches.insert(1, {"a": np.sin(x)})
    return np.sum(caches[0]["a"] * caches[1]["a"]) + np.sum(caches[2]["a"])


def dict_of_a_list_set_then_passed_to_a_helper_that_sets_more(W, X):
    """`bp = bn_params[i]; bp["momentum"] = 0.5`, then `batchnorm_forward(..., bp)` setting more of its items:
    the list's dict, changed in the caller and then in the helper (refused as an argument's on fb8f5d2)."""
    bn_params = [{"mode": "train", "eps": 1e-5} for _ in range(2)]
    h = X
    for i in range(2):
        bp = bn_params[i]
        bp["momentum"] = 0.5
        h = np.tanh(_batchnorm_forward(h @ W, 1.0, 0.0, bp))
    first = bn_params[0]
    first["scale"] = 2.0
    out = _batchnorm_forward(X @ W, 1.0, 0.0, first)
    return np.sum(h ** 2) + np.sum(bn_params[1]["running_var"]) + np.sum(out * bn_params[0]["running_mean"]) \
        * bn_params[0]["scale"]


def items_changed_in_place_through_a_name_read_out_of_them(x):
    """`h = hs[t - 1]`, then `h += v` (also `h *= c` twice, a dict's item, a number item, `h` rebound in a branch
    first): NumPy changes the array the list or dict holds (refused on fb8f5d2); Python rebinds a number in `h`
    only, and an `h` rebound since is not the item."""
    hs = {-1: np.zeros(3)}
    for t in range(3):
        h = hs[t - 1]
        h += x * t
        hs[t] = h * 0.5
    rows = [x * 1.0]
    for t in range(3):
        h = rows[t]
        if t % 2:
            h = h * 0.5
        h += x
        rows.append(h * 2.0)
    d = {"a": x * 1.0, "b": x * 2.0}
    g = d["a"]
    g *= 2.0
    g += d["b"]
    counts = [0.5, 1.0]
    c = counts[0]
    c += x[0]
    return np.sum(hs[-1] ** 2) + np.sum(hs[1]) + np.sum(rows[1] ** 2) + np.sum(rows[0]) + np.sum(rows[3] * rows[2]) \
        + np.sum(d["a"] ** 2) + np.sum(g) + counts[0] * x[1] + c * x[2]


def _set_params(params, sd):
    """numpy-ml's `LayerBase.set_params`: nested dicts merged into one, their keys deleted by a loop's name."""
    for k in ["parameters", "hyperparameters"]:
        if k in sd:
            entry = sd[k]
            sd.update(entry)
            del sd[k]
    for k, v in sd.items():
        if k in params:
            params[k] = v
    return params


def dict_items_deleted_by_a_key_known_when_the_code_runs(x):
    """`del sd[k]`, `k` a loop's name (refused: "`del sd[k]` is not supported here")."""
    p = _set_params({"W": x, "b": 2.0}, {"parameters": {"W": x * 2.0}, "hyperparameters": {"b": x[0]}})
    d = {"a": x, "b": x * 3}
    for k in list(d):
        if k != "b":
            del d[k]
    return np.sum(p["W"] ** 2 * p["b"]) + np.sum(d["b"]) * len(d)


def other_items_read_before_one_is_changed_in_place(x):
    """numpy-ml's GPRegression.marginal_log_likelihood: `y = P["y"]`, `K = P["GP_cov"]`, `K += ...`, then `y`
    (refused as "`y` is what `K += ...` held before" it changed: only the item at "cov" changed)."""
    ps = {"y": x * 0.5, "cov": np.outer(x, x), "rows": [x, x * 2]}
    y = ps["y"]
    K = ps["cov"]
    first = ps["rows"][0]
    K += np.eye(3) * 2.0
    ps["rows"][1] = x * 3
    return np.sum(np.linalg.solve(K, y)) + np.sum(ps["cov"] * y) + np.sum(first * ps["rows"][1])


def items_read_by_get_then_changed_in_place(x):
    """`a = d.get("a")` of a key the dict has is `d["a"]` itself: `a += v` changes the array the dict holds, as
    NumPy's `+=` does (980730e took the item for a new array: d["a"] read unchanged, a wrong value and gradient
    with no error); so is a dict `qs.get("k")` gives, changed (`q["a"] = v`, not made in `qs`). A list of dicts
    unpacked into names, its tail sliced off (`p, *rest = ps`), is changed through the first as before."""
    d = {"a": x * 1.0, "b": x * 2.0}
    a = d.get("a")
    a += x
    a *= d.get("b")
    ps = [{"w": x}, {"w": x * 3.0}]
    p, *rest = ps
    p["w"] = np.sin(x)
    qs = {"k": {"a": x}}
    q = qs.get("k")
    q["a"] = x * 2.0
    return np.sum(d["a"] ** 2) + np.sum(ps[0]["w"] * rest[0]["w"]) + np.sum(ps[1]["w"]) + np.sum(qs["k"]["a"] * x)


def _add_into_item(rows, i, v):
    h = rows[i]
    h += v


def _scale_into_item(caches, i, k):
    c = caches[i]
    c["w"] = c["w"] * k


def items_changed_through_a_name_in_a_helper(x):
    """A helper reading an item of the list its caller passes into a name and changing it in place (`h = rows[i]`,
    then `h += v`): the caller's list holds the changed array, as in Python (980730e changed the helper's copy only:
    rows[0] read unchanged, a wrong value and gradient with no error)."""
    rows = [x * 1.0, x * 2.0]
    _add_into_item(rows, 1, np.sin(x))
    _add_into_item(rows, 0, x)
    caches = [{"w": x}, {"w": x * 2.0}]
    _scale_into_item(caches, 1, x)
    return np.sum(rows[0] * rows[1]) + np.sum(caches[1]["w"] * caches[0]["w"])


def shallow_copies_by_the_copy_module(x):
    """copy.copy of a list or dict built here is a new one holding the same items, as list(xs) and dict(d) are: an
    item replaced in one is not in the other (refused on 980730e: a NoRuleError naming copy.copy(), or the copy
    taken for an array, `kept[0] = v` a write into it)."""
    import copy
    state = {"m": x * 1.0, "n": x}
    saved = copy.copy(state)
    saved["m"] = x ** 2
    rows = [x, x * 2.0]
    kept = copy.copy(rows)
    kept.append(np.sin(x))
    kept[0] = x * 3.0
    return np.sum(state["m"] * saved["m"]) + np.sum(rows[0] * kept[0]) + np.sum(kept[2] * saved["n"]) + len(rows)


def defaults_given_by_get_then_changed(x):
    """`d.get("z", default)` of a key the dict lacks is the default, made for the call: `m += v` and `p["a"] = v`
    change it alone. Forward mode added the tangents of the dict's item and of a default dict with `+` (a
    TypeError on 980730e)."""
    d = {"m": x * 1.0, "n": {"a": x}}
    m = d.get("z", x * 3.0)
    m += x
    p = d.get("y", {"a": x * 2.0})
    p["a"] = p["a"] * x
    return np.sum(d["m"] * m) + np.sum(p["a"] * d["n"]["a"])


def deep_copies_by_the_copy_module(x):
    """copy.deepcopy of a list or dict built here (`best = copy.deepcopy(params)`) holds copies of its items: a
    change in place of one (`state["m"] += v`, `saved[0].append(v)`) does not show in the other (a NoRuleError
    naming copy.deepcopy() on 980730e)."""
    import copy
    state = {"m": x * 1.0, "rows": [x[0]]}
    saved = copy.deepcopy(state)
    state["m"] += x
    saved["rows"].append(x[1] ** 2)
    pair = copy.deepcopy((x * 2.0, [x]))
    return np.sum(saved["m"] * state["m"]) + saved["rows"][1] * len(state["rows"]) + np.sum(pair[0] * pair[1][0])


def results_written_by_out_into_dict_items(x):
    """`np.sin(x, out=d["a"])`: NumPy writes into the array the dict holds, which then holds the result (refused on
    980730e as an index making a copy); a name holding that array as well is refused when the code runs."""
    d = {"a": np.zeros(3), "b": np.zeros(3)}
    np.sin(x, out=d["a"])
    np.multiply(x, d["a"], out=d["b"])
    return np.sum(d["a"] * d["b"]) + np.sum(d["b"])

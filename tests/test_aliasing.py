"""One object under two names (or twice in one list), changed in place through one of them.

Python (and NumPy) show the change under every name; tapegen's code replaces what it changes by a
changed copy, so where another name would see the change it refuses, at run time where only the
objects themselves can tell (`[row] * 2` holds one row twice; `a[1]` is a view of a matrix's row but
a number of a vector's). Where nothing is shared, the same code is followed and checked against
finite differences.
"""
import numpy as np
import pytest

import tapegen as tg
from modes import check_modes

X = np.array([0.3, -0.7, 1.1, 0.45])


def halves_swapped_through_views(x):
    a = x * 1.0
    a[:2], a[2:] = a[2:], a[:2]  # NumPy: a[:2] is a view, showing the first write: [x2, x3, x2, x3]
    return np.sum(a * np.arange(4.0))


def rows_swapped_through_views(x):
    a = x.reshape(2, 2) * 1.0
    a[0], a[1] = a[1], a[0]
    return np.sum(a * np.arange(4.0).reshape(2, 2))


class _Holder:
    def __init__(self, a):
        self.a = a


def halves_of_an_attribute_swapped_through_views(x):
    h = _Holder(x * 1.0)
    h.a[:2], h.a[2:] = h.a[2:], h.a[:2]
    return np.sum(h.a * np.arange(4.0))


def halves_of_two_arrays_swapped_through_views(x):
    a, b = x * 1.0, x * 2.0
    a[:2], b[:2] = b[:2], a[:2]  # NumPy: b[:2] is set from a[:2] as just written, so b is unchanged
    return np.sum(a * np.arange(4.0)) + np.sum(b * x)


def rows_repeated(x):
    g = [[0.0] * 2] * 2  # one row, held twice
    g[0][0] += x[0]
    return g[1][0] * x[1] + g[0][0]


def arrays_repeated(x):
    a = [np.zeros(2)] * 2
    a[0][0] = x[0]
    return np.sum(a[1]) * x[1]


def rows_repeated_appended_to(x):
    rows = [[]] * 2
    rows[0].append(x[0])
    return sum(rows[1]) * x[1] + len(rows[1])


def array_in_a_list_changed_through_it(x):
    a = x * 1.0
    held = [a]
    held[0][1] = x[0] * 5
    return np.sum(a * x)  # NumPy: `a` shows the change


def row_of_a_list_of_its_rows_changed(x):
    a = x.reshape(2, 2) * 1.0
    rows = list(a)  # views of a's rows
    rows[0][1] = x[0] * 7
    return np.sum(a * np.arange(4.0).reshape(2, 2))


def row_taken_from_a_list_of_its_rows_changed(x):
    a = x.reshape(2, 2) * 1.0
    rows = list(a)
    r = rows[0]
    r[1] = x[0] * 7
    return np.sum(a * np.arange(4.0).reshape(2, 2))


def slice_taken_from_a_tuple_of_slices_changed(x):
    a = x * 1.0
    parts = (a[:2], a[2:])
    p = parts[1]
    p[0] = x[0] * 7
    return np.sum(a * np.arange(4.0))


def rows_unpacked_with_a_star_changed(x):
    a = x.reshape(2, 2) * 1.0
    first, *rest = a
    rest[0][1] = x[0] * 7
    return np.sum(a * np.arange(4.0).reshape(2, 2))


def array_made_here_on_one_path_only(x):
    a = np.ones(4)
    if x[0] > 0:
        b = np.ascontiguousarray(a)  # `a` itself
    else:
        b = np.zeros(4)
    b[0] = x[1] * 5
    return np.sum(a * x) + np.sum(b)


def becomes_what_a_function_returned_in_a_loop(x):
    a = np.ones(4)
    b = np.zeros(4)
    for i in range(2):
        b[0] = x[1] * 5 + i  # the second pass writes into `a` itself
        b = np.ascontiguousarray(a)
    return np.sum(a * x) + np.sum(b)


@pytest.mark.parametrize("f", [row_of_a_list_of_its_rows_changed, becomes_what_a_function_returned_in_a_loop, row_taken_from_a_list_of_its_rows_changed,
                               slice_taken_from_a_tuple_of_slices_changed, rows_unpacked_with_a_star_changed,
                               array_made_here_on_one_path_only], ids=lambda f: f.__name__)
def test_a_write_into_a_view_held_in_a_list_or_made_on_one_path_is_refused(f):
    """Each gave the gradient of the array left unchanged (NumPy changes it through the view)."""
    with pytest.raises(tg.UnsupportedSyntaxError):
        tg.jvp(f, (X.copy(),), (np.ones(4),))


class _Weights:
    def __init__(self, w):
        self.w = w


def _nudge(layer, g):
    layer.w -= 0.1 * g  # NumPy changes the array, whichever names hold it


def attribute_changed_in_place_another_name_holds(x):
    """`o.w -= g` on an array the name `w` holds too (a layer made from it): `w` shows the change (it was read
    unchanged: a wrong value and gradient, no error, on fb8f5d2)."""
    w = x * 1.0
    layer = _Weights(w)
    _nudge(layer, np.sin(x))
    return np.sum(w * x)


def attribute_changed_in_place_in_a_loop_another_name_holds(x):
    """The same through a loop, which carries the attribute: the array `w` holds when the code runs (a wrong value
    and gradient, no error, on fb8f5d2)."""
    w = x * 1.0
    layer = _Weights(w)
    for _ in range(2):
        _nudge(layer, np.sin(layer.w))
    return np.sum(w * x)


def attribute_changed_in_place_another_attribute_holds(x):
    a = x * 1.0
    one, two = _Weights(a), _Weights(a)
    one.w *= 3.0
    return np.sum(two.w * x)


@pytest.mark.parametrize("f", [halves_swapped_through_views, rows_swapped_through_views,
                               attribute_changed_in_place_another_name_holds,
                               attribute_changed_in_place_in_a_loop_another_name_holds,
                               attribute_changed_in_place_another_attribute_holds,
                               halves_of_an_attribute_swapped_through_views, halves_of_two_arrays_swapped_through_views,
                               rows_repeated,
                               arrays_repeated, rows_repeated_appended_to, array_in_a_list_changed_through_it],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_change_another_name_would_show_is_refused(f, mode):
    with pytest.raises(tg.UnsupportedSyntaxError, match="holds|changes an item|changes in place the item"):
        if mode == "grad":
            tg.grad(f)(X.copy())
        else:
            tg.jvp(f, (X.copy(),), (np.ones(4),))


def values_of_a_dict_changed_in_place_as_a_loop_walks_them(x):
    W = x * 1.0
    params = {"W": W}
    for v in params.values():
        v *= 2.0
    return np.sum(W * x)


def test_values_of_a_dict_changed_in_place_as_a_loop_walks_them_are_refused():
    """`for v in d.values(): v *= 2` changes the dict's arrays: refused (an internal TypeError on fb8f5d2)."""
    for run in (lambda f: tg.grad(f)(X.copy()), lambda f: tg.jvp(f, (X.copy(),), (np.ones(4),))):
        with pytest.raises(tg.UnsupportedSyntaxError, match="taken out of a list or dict"):
            run(values_of_a_dict_changed_in_place_as_a_loop_walks_them)


def attributes_changed_in_place_held_nowhere_else(x):
    """`layer.w -= g` on an array only the attribute holds (in a loop, a method), and `o.n += 1.0` on a number a
    name holds too (Python rebinds the attribute only): followed."""
    layer = _Weights(x * 1.0)
    for _ in range(2):
        _nudge(layer, np.sin(layer.w))
    n = 1.0
    counter = _Weights(n)
    counter.w += 1.0
    return np.sum(layer.w * x) * counter.w + n


def numbers_swapped(x):
    a = x * 1.0
    a[0], a[1] = a[1], a[0]  # items of a vector are numbers: a swap
    return np.sum(a * np.arange(4.0))


def rows_swapped_as_copies(x):
    a = x.reshape(2, 2) * 1.0
    a[0], a[1] = a[1].copy(), a[0].copy()
    return np.sum(a * np.arange(4.0).reshape(2, 2))


def rows_of_their_own(x):
    g = [[0.0] * 2 for _ in range(2)]
    g[0][0] += x[0]
    g[1][1] = x[1] * 3
    return g[1][0] * x[1] + g[0][0] * g[1][1]


def arrays_of_their_own(x):
    rows = [np.zeros(3) for _ in range(3)]
    for t in range(3):
        rows[t][t] = x[t] ** 2
    return np.sum(np.array(rows) * np.arange(9.0).reshape(3, 3))


def lists_of_their_own_appended_to(x):
    rows = [[] for _ in range(2)]
    rows[0].append(x[0])
    rows[1].append(x[1] * 2)
    return sum(rows[1]) * x[2] + rows[0][0] ** 2


@pytest.mark.parametrize("f", [numbers_swapped, rows_swapped_as_copies, rows_of_their_own, arrays_of_their_own,
                               attributes_changed_in_place_held_nowhere_else,
                               lists_of_their_own_appended_to], ids=lambda f: f.__name__)
def test_changes_no_other_name_sees_match_finite_differences(f):
    check_modes(f, X.copy())


VALID = np.array([1, 2, 2, 1, 0, 2, 1, 2])


def masks_a_reshaped_view_a_name_holds_in_a_branch(x, valid):
    """d2l's masked_softmax: `X = sequence_mask(X.reshape(-1, n), valid, value=-1e6)` on a view (`np.squeeze`),
    in a branch decided when the code runs, that rebinds `X`. Its gradient code, differentiated again (a
    Hessian), holds the view under a name bound before the branch and was refused there."""
    scores = np.squeeze(np.outer(x, x)[:, :, None] * 1.0, axis=-1)
    X = scores
    if valid is None:
        out = np.exp(X)
    else:
        flat = X.reshape(-1, 2)
        flat[~(np.arange(2)[None, :] < valid[:, None])] = -1e6
        X = flat
        out = np.exp(X - X.max(axis=-1, keepdims=True))
    return np.sum(out * np.arange(out.size).reshape(out.shape))


def test_a_view_written_in_a_branch_through_a_name_bound_before_it_differentiates_again():
    check_modes(masks_a_reshaped_view_a_name_holds_in_a_branch, X.copy(), VALID)
    hessian = tg.hessian(masks_a_reshaped_view_a_name_holds_in_a_branch)(X.copy(), VALID)
    gradient = tg.grad(masks_a_reshaped_view_a_name_holds_in_a_branch)
    numeric = np.stack([(gradient(X + 1e-6 * e, VALID) - gradient(X - 1e-6 * e, VALID)) / 2e-6 for e in np.eye(4)])
    np.testing.assert_allclose(hessian, numeric.T, rtol=1e-5, atol=1e-6)


def _doubled_default(v, s=np.array([1.0, 2.0])):
    s *= 2  # NumPy doubles the default itself: every later call sees it
    return v * s


def default_array_changed_in_place(x):
    return np.sum(_doubled_default(x[:2]))


OFFSETS = np.array([1.0, 2.0])


def _added_to(a, v):
    a += v
    return a


def module_array_changed_in_place(x):
    return np.sum(_added_to(OFFSETS, x[:2]) * x[:2])


def array_made_here_changed_in_place(x):
    a = np.ones(2)
    b = _added_to(a, x[:2])
    return np.sum(b * x[:2]) + np.sum(a)


@pytest.mark.parametrize("f", [default_array_changed_in_place, module_array_changed_in_place],
                         ids=lambda f: f.__name__)
def test_a_change_kept_between_calls_is_refused(f):
    """tapegen's code computed a new value: the default (or the module's array) was left as it was, so the
    next call computed from the old one where Python's computes from the changed one."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="keeps the change for later calls"):
        tg.grad(f)(X.copy())


def test_an_array_made_in_the_function_changed_by_a_helper_matches_finite_differences():
    check_modes(array_made_here_changed_in_place, X.copy())


# Lists and dicts a helper changes in place: Python changes the caller's own object. tapegen's code takes the
# helper's new value for the caller's name (in a loop of the helper, the caller's var itself is carried); where
# another list or dict keeps the changed list, or another name would not show the change, it refuses.

def _appended(xs, v):
    xs.append(v * 2.0)


def _appended_in_a_loop(xs, v, n=2):
    for i in range(n):
        xs.append(v * (i + 1))


def _item_set(xs, i, v):
    xs[i] = v * 5.0


def _items_scaled(xs, v):
    for i in range(len(xs)):
        xs[i] = xs[i] * v


def _extended(xs, v):
    xs.extend([v, v * 3.0])


def _key_set(d, key, v):
    d[key] = v * 2.0


def _updated(d, v):
    d.update({"u": v ** 2})


def _layer(x, W, caches):
    """cs231n's style: a layer keeps what its backward pass needs in the caller's list."""
    out = x @ W[:, :2]
    caches.append((x, W))
    return out


def _appended_by_branch(xs, v):
    if np.sum(v) > 0:
        xs.append(v * 2.0)
    else:
        xs.append(v * 3.0)


def list_appended_to_by_helpers(x):
    xs = [x]
    _appended(xs, x)
    _appended_in_a_loop(xs, x ** 2)
    _appended_by_branch(xs, -x)
    return np.sum(xs[0] * xs[1] + xs[2] * xs[3] + xs[4])


def list_appended_to_by_helpers_in_a_loop(x):
    xs = []
    for j in range(2):
        _appended_in_a_loop(xs, x * (j + 1))
        _appended(xs, xs[-1])
    while len(xs) < 8:
        _appended(xs, x * len(xs))
    return np.sum(xs[0] * xs[4] + xs[2] * xs[5] + xs[7])


def items_and_keys_set_by_helpers(x):
    xs = [x, x ** 2, x]
    for i in range(2):
        _item_set(xs, i, x * (i + 1))
    _items_scaled(xs, x)
    _extended(xs, x)
    d = {"a": x}
    for key in ("b", "c"):
        _key_set(d, key, xs[len(key)])
    _updated(d, x)
    return np.sum(xs[0] * xs[2] + xs[4] + d["a"] * d["c"] + d["u"])


def list_changed_by_helpers_under_two_names(x):
    xs = []
    ys = xs
    _appended(xs, x)
    _appended_in_a_loop(ys, x)
    _items_scaled(ys, x)
    return np.sum(xs[0] * ys[1] + xs[2])


def caches_kept_by_layers(x, W):
    caches = []
    h = _layer(x, W, caches)
    h = _layer(np.tanh(h) @ W[:2], W, caches)
    (x0, W0), (x1, W1) = caches
    return np.sum(h ** 2) + np.sum(x1 * x0) + np.sum(W1 * W0)


@pytest.mark.parametrize("f", [list_appended_to_by_helpers, list_appended_to_by_helpers_in_a_loop,
                               items_and_keys_set_by_helpers, list_changed_by_helpers_under_two_names],
                         ids=lambda f: f.__name__)
def test_a_list_or_dict_a_helper_changes_matches_finite_differences(f):
    check_modes(f, np.array([0.3, -0.2, 0.5]))


def test_caches_a_layer_appends_to_match_finite_differences():
    check_modes(caches_kept_by_layers, np.array([[0.3, -0.2, 0.5]]), np.random.default_rng(3).normal(size=(3, 3)))


def list_in_a_dict_appended_to(x):
    xs = []
    d = {"xs": xs}
    xs.append(x * 2.0)
    return np.sum(d["xs"][0] ** 2)


def row_in_a_list_appended_to(x):
    rows, row = [], []
    rows.append(row)
    row.append(x * 2.0)
    return np.sum(rows[0][0] ** 2)


def list_in_a_dict_appended_to_by_a_helper(x):
    xs = []
    d = {"xs": xs}
    _appended(xs, x)
    return np.sum(d["xs"][0] ** 2)


def row_kept_then_appended_to_in_a_loop(x):
    rows, row = [], []
    for i in range(3):
        row.append(x * i)
        rows.append(row)
    return np.sum(rows[0][2] * 2.0)


def other_name_for_a_list_a_loop_appends_to(x):
    xs = []
    ys = xs
    for i in range(2):
        xs.append(x * i)
    return np.sum(ys[1] ** 2)


@pytest.mark.parametrize("f", [list_in_a_dict_appended_to, row_in_a_list_appended_to,
                               list_in_a_dict_appended_to_by_a_helper, row_kept_then_appended_to_in_a_loop,
                               other_name_for_a_list_a_loop_appends_to], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_list_appended_to_where_another_holder_would_show_it_is_refused(f, mode):
    """Each gave a zero derivative before: the list another list or dict (or name) keeps changed, there too."""
    x = np.array([0.3, -0.2, 0.5])
    with pytest.raises(tg.UnsupportedSyntaxError, match="holds too|kept in another|changed its items"):
        tg.grad(f)(x) if mode == "grad" else tg.jvp(f, (x,), (np.ones(3),))


def rows_started_anew_each_pass(x):
    rows, row = [], []
    for i in range(3):
        row.append(x * i)
        rows.append(row)
        row = []
    hist = {"h": []}
    hs = []
    for i in range(2):
        hs.append(x * i)
        hist["h"] = hs  # the dict's item replaced each pass: the last pass's list is the one read
    return np.sum(rows[0][0] + rows[2][0] * 2.0) + np.sum(hist["h"][1])


def test_lists_kept_once_complete_match_finite_differences():
    check_modes(rows_started_anew_each_pass, np.array([0.3, -0.2, 0.5]))


# Arrays a helper writes into through `out=` (NumPy writes the caller's array), or an argument of the
# differentiated function a helper changes: the caller's name holds the new value after the call.

def _doubled_into(a, v):
    np.multiply(v, 2.0, out=a)


def _clipped(a):
    np.clip(a, -0.25, 0.25, out=a)


def _added_in_place(a, v):
    a += v


def _first_set(a, v):
    a[0] = v * 2.0


def written_into_by_helpers_through_out(x):
    a, total = np.zeros(3), 0.0
    for i in range(3):
        _doubled_into(a, x * (i + 1))
        total = total + np.sum(a ** 2)
    b = x * 1.0
    _clipped(b)
    return total + np.sum(b * x)


def arguments_changed_by_helpers(x, y):
    _clipped(x)  # Python changes the caller's array; tapegen's code leaves it as it was and follows a copy
    _added_in_place(y, 1.0)
    _first_set(y, x[1])
    return np.sum(x ** 2 * y)


def test_arrays_a_helper_writes_into_match_finite_differences():
    check_modes(written_into_by_helpers_through_out, np.array([0.3, -0.2, 0.5]))
    check_modes(arguments_changed_by_helpers, np.array([0.3, -0.2, 0.5]), np.array([0.4, 0.1, -0.6]))


def array_in_a_list_written_by_a_helper(x):
    a = np.zeros(3)
    kept = [a]
    _first_set(a, x[0])
    return np.sum(kept[0] * x)


def array_under_two_names_written_through_out(x):
    a = np.zeros(3)
    b = a
    _doubled_into(a, x)
    return np.sum(b)


@pytest.mark.parametrize("f", [array_in_a_list_written_by_a_helper, array_under_two_names_written_through_out],
                         ids=lambda f: f.__name__)
def test_a_helper_writing_into_an_array_another_holder_shows_is_refused(f):
    """The first gave half the derivative, the second a value of 0.0 (the write was lost)."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="kept in a list|changed in place by"):
        tg.grad(f)(np.array([0.3, -0.2, 0.5]))


_MAML_X = np.random.default_rng(0).normal(size=(5, 3))
_MAML_Y = np.random.default_rng(1).normal(size=5)


def _task_loss(p):
    return np.mean((np.tanh(_MAML_X @ p["W"]) * p["s"] - _MAML_Y) ** 2)


def _sgd_update(params, grads, lr):
    for k in params:
        params[k] = params[k] - lr * grads[k]


def inner_steps_by_a_helper_updating_the_params_dict(W, s):
    """MAML's inner loop: a helper updates its caller's params dict in place, step after step (the value was
    wrong: the caller kept reading the first step's dict)."""
    params = {"W": W, "s": s}
    for _ in range(2):
        _sgd_update(params, tg.grad(_task_loss)(params), 0.1)
    return _task_loss(params)


def test_a_params_dict_a_helper_updates_in_a_loop_matches_finite_differences():
    check_modes(inner_steps_by_a_helper_updating_the_params_dict, np.array([0.3, -0.5, 0.8]), 0.7)


# --- a write through a view of the argument being differentiated ----------------------------------------------
# NumPy changes the caller's array; tapegen's code copies the argument first (as for `x[0] = v` on it), so the
# write is followed into the copy and every view of it, and the caller's array is left as it was.

def row_of_the_argument_written_then_the_argument_read(x):
    row = x[1:]
    row[0] = 0.0
    return np.sum(x * np.arange(4.0)) + np.sum(row ** 2)


def argument_as_an_array_masked(x):
    x = np.asarray(x)
    x[x < 0] = 0.0
    return np.sum(np.sin(x) * x)


def _sequence_mask(X, valid_len, value=0.0):
    mask = np.arange(X.shape[1])[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def masked_softmax_of_the_argument(X):
    """d2l's masked_softmax on the argument itself: a helper writes into `X.reshape(-1, n)`."""
    X = X.reshape(2, 2)  # (still the argument's memory)
    shape = X.shape
    X = _sequence_mask(X.reshape(-1, shape[-1]), np.array([1, 2]), value=-1e6)
    e = np.exp(X - X.max(axis=-1, keepdims=True))
    return np.sum((e / e.sum(axis=-1, keepdims=True)).reshape(shape) * np.arange(4.0).reshape(shape))


def _masked_softmax_returning_early(X, valid_lens):
    """d2l's masked_softmax as published: `X` rebound in the `else` of an `if ... is None: return`."""
    if valid_lens is None:
        return np.exp(X)
    else:
        shape = X.shape
        X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens.repeat(shape[0]), value=-1e6)
        return np.exp(X - X.max(axis=-1, keepdims=True)).reshape(shape)


def masked_softmax_of_the_argument_read_after(X):
    """The argument's shape read after the write through the view (d2l's `np.arange(X.size).reshape(X.shape)`)."""
    out = _masked_softmax_returning_early(X.reshape(2, 2), np.array([1]))
    return np.sum(out * np.arange(X.size).reshape(out.shape)) + np.sum(np.tanh(X) * np.arange(4.0))


def views_of_the_argument_changed_by_augmented_assignments(x):
    """`v = x[:2]; v *= s` and `v += 1` on views taken in a loop, the argument read after."""
    v = x[:2]
    v *= x[3]
    for i in range(2):
        w = x[i:i + 2]
        w += 1.0
    return np.sum(x ** 2)


def view_of_the_argument_written_in_a_loop(x):
    s = 0.0
    for i in range(2):
        flat = x.reshape(-1)  # the next pass's view shows the write before
        flat[i] = flat[i + 1] * 3.0
        s = s + np.sum(flat ** 2)
    return s + np.sum(x)


def transpose_of_the_argument_written_in_a_branch(x):
    y = x.reshape(2, 2).T
    if np.sum(x) > 0:
        y[0] = y[1] * 2
    return np.sum(np.sin(x) * np.arange(4.0))


def row_of_the_argument_written_through_out_and_sorted(x):
    rows = x.reshape(2, 2)
    np.tanh(rows[0], out=rows[0])
    second = rows[1]
    second.sort()
    return np.sum(x * np.arange(4.0) ** 2)


@pytest.mark.parametrize("f", [row_of_the_argument_written_then_the_argument_read, argument_as_an_array_masked,
                               masked_softmax_of_the_argument, masked_softmax_of_the_argument_read_after,
                               view_of_the_argument_written_in_a_loop,
                               views_of_the_argument_changed_by_augmented_assignments,
                               transpose_of_the_argument_written_in_a_branch,
                               row_of_the_argument_written_through_out_and_sorted], ids=lambda f: f.__name__)
def test_writes_through_a_view_of_the_argument_match_finite_differences(f):
    check_modes(f, X.copy())  # (it checks that the caller's array is left as it was, too)
    check_modes(f, -X[::-1].copy())  # (the other branch, other rows masked)


def test_an_array_made_from_a_number_argument_written_into_is_refused_when_it_runs():
    """`x = np.asarray(x); x[x < 0] = 0`: for a number, NumPy's array is a new one, whose write the number does
    not see; tapegen's code would put it back into the number (an array argument runs, above)."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="an array made from a number"):
        tg.grad(argument_as_an_array_masked)(-0.7)


# --- a write into an array two names hold, both read after -------------------------------------------------

def relu_backward_through_the_upstream_name(x):
    """cs231n's relu_backward as often written: `dx = dout; dx[x <= 0] = 0`, which changes `dout` too."""
    dout = x * 2.0
    dx = dout
    dx[x <= 0] = 0
    return np.sum(dx * dout) + np.sum(dout * x)


def two_names_from_one_assignment(x):
    a = b = np.zeros(4)
    a[0] = x[0] * 2
    b[1] = x[1] ** 2
    for i in range(2, 4):  # (in a loop the names were bound before)
        a[i] = b[i - 1] * x[i]
    return np.sum(a * b) + np.sum(b * x)


@pytest.mark.parametrize("f", [relu_backward_through_the_upstream_name, two_names_from_one_assignment],
                         ids=lambda f: f.__name__)
def test_a_write_into_an_array_two_names_hold_shows_under_both(f):
    check_modes(f, X.copy())


def named_twice_in_one_branch(x):
    a = x * 1.0
    if x[0] > 0:
        b = a
    else:
        b = a * 2
    a[0] = 5.0
    return np.sum(b * x)


def test_a_write_into_an_array_another_name_holds_on_one_path_is_refused():
    with pytest.raises(tg.UnsupportedSyntaxError, match="`b` may be the same array as `a`"):
        tg.grad(named_twice_in_one_branch)(X)


# --- rows of an array changed through a loop's target ------------------------------------------------------

def rows_changed_through_the_loop_target(x):
    """`for row in M: row -= row.mean()` (and through enumerate, zip, a write into the row, out=): NumPy changes
    M's rows; followed as `M[k] -= M[k].mean()`."""
    M = np.outer(x, x)
    for row in M:
        row -= row.mean()
    for i, row in enumerate(M):
        row[i] = row[i] * 3.0
    for row, v in zip(M, x):
        row *= v
    N = np.outer(x, x[:2])
    for row in N:
        np.tanh(row, out=row)
    return np.sum(M ** 2) + np.sum(N * x[:, None])


def rows_of_the_argument_changed_through_the_loop_target(x):
    M = x.reshape(2, 2)  # (the argument's memory: copied first, the caller's array left as it was)
    for row in M:
        row *= 2.0
    return np.sum(M ** 2) + np.sum(x * np.arange(4.0))


@pytest.mark.parametrize("f", [rows_changed_through_the_loop_target,
                               rows_of_the_argument_changed_through_the_loop_target], ids=lambda f: f.__name__)
def test_rows_changed_through_a_loop_target_match_finite_differences(f):
    check_modes(f, X.copy())


def numbers_of_a_vector_added_to_through_the_loop_target(x):
    y = x * 2.0
    for v in y:
        v += 1.0  # Python rebinds `v` alone: y is unchanged
    return np.sum(y)


def test_numbers_of_a_vector_changed_through_the_loop_target_are_refused_when_it_runs():
    with pytest.raises(tg.UnsupportedSyntaxError, match="which Python rebinds in `v` only"):
        tg.grad(numbers_of_a_vector_added_to_through_the_loop_target)(X)

"""Indexing, `a[...]`, against central differences in float64.

Arrays: ints, slices with steps, None, Ellipsis, boolean masks, integer arrays
with duplicates (their cotangents add up; assigned to, one write kept), mixed tuples, and indices held in
variables. Containers: dicts, lists and tuples of arrays, whose gradient has
the container's structure. """
import numpy as np
import pytest

import tapegen as tg
from conftest import numeric_vjp
from modes import check_modes

_rng = np.random.default_rng(11)
X = _rng.standard_normal((4, 5))
T = _rng.standard_normal((2, 3, 4))
V = _rng.standard_normal(6)
DUPLICATES = np.array([0, 2, 2, 3, 0])
MASK = X > 0.2


def case(id, fn, *args, marks=()):
    return pytest.param(fn, args, id=id, marks=marks)


ARRAY_CASES = [
    case("int", lambda x: x[1], X),
    case("negative-int", lambda x: x[-1] * 2.0, X),
    case("two-ints", lambda x: x[1, -2] ** 2, X),
    case("vector-element", lambda v: v[3] * v, V),
    case("slice", lambda x: x[1:3], X),
    case("slice-steps", lambda x: x[::2, 1::2], X),
    case("slice-negative-steps", lambda x: x[::-1, 4:0:-2], X),
    case("slice-past-the-end", lambda x: x[2:10], X),
    case("empty-slice", lambda x: np.sum(x[3:1]) + np.sum(x * x), X),
    case("none", lambda x: x[None], X),
    case("newaxis-between", lambda x: x[:, np.newaxis, 1:], X),
    case("ellipsis", lambda t: t[..., 1], T),
    case("ellipsis-between", lambda t: t[1, ..., ::2], T),
    case("ellipsis-none-int", lambda t: t[..., None, 2], T),
    case("mask-from-the-input", lambda x: x[x > 0] ** 2, X),
    case("mask-argument", lambda x, m: x[m] * 3.0, X, MASK),
    case("mask-rows", lambda x: x[np.array([True, False, True, True])], X),
    case("mask-and-slice", lambda x: x[np.array([True, False, True, True]), 1:], X),
    case("int-array-duplicates", lambda v: v[DUPLICATES] * np.arange(5.0), V),
    case("int-array-duplicates-rows", lambda x: x[DUPLICATES], X),
    case("int-array-2d", lambda v: v[np.array([[0, 1], [1, 1]])], V),
    case("int-array-negative", lambda v: v[np.array([-1, -1, 0])], V),
    case("two-int-arrays", lambda x: x[DUPLICATES, DUPLICATES[::-1]], X),
    case("two-int-arrays-broadcast", lambda x: x[DUPLICATES[:3, None], np.array([[0, 0, 4]])], X),
    case("slice-and-int-array", lambda x: x[1:, DUPLICATES], X),
    case("int-and-int-array", lambda t: t[1, :, DUPLICATES], T),
    case("int-arrays-around-a-slice", lambda t: t[np.array([1, 1]), :, np.array([0, 3])], T),
    case("int-array-ellipsis-none", lambda t: t[np.array([1, 1, 0]), ..., None], T),
    case("chained", lambda x: x[1:][:, DUPLICATES][0], X),
    case("fan-out", lambda x: x[0] * x[0] + x[-1] * x[1:].sum(), X),
    case("list-literal-int-index", lambda v: v[[0, 0, 1]], V),
    case("list-literal-in-tuple", lambda x: x[1:, [0, 2, 2]], X),
    case("variable-int", lambda x, i: x[i], X, 2),
    case("variable-negative-int", lambda x, i: x[i, i], X, -1),
    case("variable-int-array", lambda x, i: x[i], X, DUPLICATES[:4]),
    case("variable-tuple", lambda x, i: x[i], X, (1, slice(None, None, 2))),
    case("variable-slice-bounds", lambda x, i, j: x[i:j], X, 1, 3),
    case("variable-slice-start", lambda x, j: x[j:, j], X, 2),
    case("variable-step", lambda x, s: x[::s, 1], X, -2),
]


@pytest.mark.parametrize("fn, args", ARRAY_CASES)
def test_array_indexing(fn, args):
    tg.gradcheck(fn, *args)


def test_duplicate_indices_add_up():
    """The gradient of sum(v[[0, 2, 2, 3, 0]]) counts each index: 2, 0, 2, 1, 0, 0."""
    gradient = tg.grad(lambda v, i: np.sum(v[i]))(V, DUPLICATES)
    np.testing.assert_array_equal(gradient, [2.0, 0.0, 2.0, 1.0, 0.0, 0.0])


def _written_twice(v, x):
    """`a[i] = ...` and `a[i] += ...` where `i` repeats positions: NumPy keeps one write per position."""
    a = np.zeros(5) + v[:5] * 0.5
    a[DUPLICATES] += x[:5] ** 2
    b = np.zeros((4, 5))
    b[[1, 3, 1], [0, 4, 0]] = v[:3] * x[:3]  # (1, 0) written twice
    b[DUPLICATES[:4], 1:3] = np.tanh(x[:4])[:, None]
    b[[2, 2]] = 3.0 * v[5]  # a repeated row, one value broadcast
    return np.sum(a ** 2) + np.sum(np.sin(b) * b)


def test_assignment_at_a_repeated_index_keeps_one_write_in_every_mode():
    check_modes(_written_twice, V, V[::-1].copy())
    gradient = tg.grad(lambda v: np.sum(_set_twice(v)))(V)  # v[1] is overwritten by v[2]
    np.testing.assert_array_equal(gradient, [1.0, 0.0, 1.0, 0.0, 0.0, 0.0])


def _set_twice(v):
    a = np.zeros(3)
    a[[0, 1, 1]] = v[:3]
    return a


def test_float32_gradient_of_an_index_scatter():
    x32 = X.astype(np.float32)
    gradient = tg.grad(lambda x: np.sum(x[DUPLICATES, 1:] ** 2))(x32)
    assert gradient.dtype == np.float32
    np.testing.assert_allclose(gradient, tg.grad(lambda x: np.sum(x[DUPLICATES, 1:] ** 2))(X), rtol=1e-5, atol=1e-6)


# --- containers ---------------------------------------------------------------------------------

W = _rng.standard_normal((5, 3))
B = _rng.standard_normal(3)
W2 = _rng.standard_normal((3, 2))


def dict_layer(params, x):
    return np.sum(np.tanh(x @ params["W"] + params["b"]))


def dict_unused_key(params, x):
    return np.sum(x @ params["W"])


def dict_same_key_twice(params):
    return np.sum(params["W"] * params["W"][0])


def dict_nested_list(params, x):
    h = np.tanh(x @ params["layers"][0])
    return np.sum(h @ params["layers"][1])


def list_first(xs):
    return np.sum(xs[0] * xs[1][0])


def list_variable_index(xs, i):
    return np.sum(xs[i] ** 2)


def list_negative_index(xs):
    return np.sum(xs[-1] * 3.0) + np.sum(xs[0])


def list_slice(xs):
    rest = xs[1:]
    return np.sum(rest[0] * 2.0)


def tuple_items(pair):
    a = pair[0]
    b = pair[1]
    return np.sum(a[:3] * b)


def list_into_stack(xs):
    return np.sum(np.stack(xs, axis=1) * np.arange(6.0)[:, None])


def tuple_into_concatenate(pair):
    return np.sum(np.concatenate(pair) ** 2)


def list_stacked_and_indexed(xs):
    return np.sum(np.stack(xs) ** 2) + np.sum(xs[0])


def list_stacked_twice(xs):
    return np.sum(np.stack(xs) ** 2) + np.sum(np.concatenate(xs) * 3.0)


def element_of_dict_entry(params):
    return np.sum(params["W"][1:, ::2] ** 2) + params["b"][-1]


TREE_CASES = [
    case("dict", dict_layer, {"W": W, "b": B}, X),
    case("dict-unused-key", dict_unused_key, {"W": W, "b": B}, X),
    case("dict-same-key-twice", dict_same_key_twice, {"W": W}),
    case("dict-of-list", dict_nested_list, {"layers": [W, W2]}, X),
    case("dict-entry-indexed", element_of_dict_entry, {"W": W, "b": B}),
    case("list", list_first, [V, V + 1.0]),
    case("list-variable-index", list_variable_index, [V, X, T], 1),
    case("tuple", tuple_items, (V, B)),
    case("list-into-stack", list_into_stack, [V, V * 2.0, V + 1.0]),
    case("tuple-into-concatenate", tuple_into_concatenate, (V, B)),
    case("list-negative-index", list_negative_index, [V, V * 2.0]),
    case("list-slice", list_slice, [V, V * 2.0, V]),
    case("list-stacked-and-indexed", list_stacked_and_indexed, [V, V * 2.0]),
    case("list-stacked-twice", list_stacked_twice, [V, V * 2.0]),
]


@pytest.mark.parametrize("fn, args", TREE_CASES)
def test_container_indexing(fn, args):
    tree, rest = args[0], args[1:]
    gradient = tg.grad(fn)(tree, *rest)
    assert type(gradient) is type(tree)
    for path, leaf in _leaves(tree):
        def along_leaf(value, path=path):
            return fn(_replace(tree, path, value), *rest)
        expected = numeric_vjp(along_leaf, [leaf], 0, 1.0)
        np.testing.assert_allclose(_get(gradient, path), expected, rtol=1e-5, atol=1e-7, err_msg=f"leaf {path}")


def _leaves(tree, path=()):
    if isinstance(tree, (dict, list, tuple)):
        items = tree.items() if isinstance(tree, dict) else enumerate(tree)
        return [leaf for key, value in items for leaf in _leaves(value, path + (key,))]
    return [(path, tree)]


def _get(tree, path):
    for key in path:
        tree = tree[key]
    return tree


def _replace(tree, path, value):
    if not path:
        return value
    key, rest = path[0], path[1:]
    if isinstance(tree, dict):
        return {**tree, key: _replace(tree[key], rest, value)}
    items = list(tree)
    items[key] = _replace(items[key], rest, value)
    return type(tree)(items)


# --- list results: np.split -------------------------------------------------------------------

def split_indexed(x):
    pieces = np.split(x, 3, axis=1)
    return pieces[0] * pieces[-1]


def split_unpacked(x):
    a, b = np.split(x, 2)
    return a * b


@pytest.mark.parametrize("fn", [
    pytest.param(split_indexed, id="split-indexed"),
    pytest.param(split_unpacked, id="split-unpacked"),
])
def test_split_results(fn):
    tg.gradcheck(fn, _rng.standard_normal((4, 6)))


_V3, _M23, _T234 = np.arange(1.0, 4.0), np.arange(1.0, 7.0).reshape(2, 3), np.arange(24.0).reshape(2, 3, 4) / 10


@pytest.mark.parametrize("f, x", [
    (lambda x: np.sum(np.r_[x, x * 2.0] ** 2), _V3),
    (lambda x: np.sum(np.r_[x, 1.0, x[0]] ** 2), _V3),
    (lambda x: np.sum(np.r_[x] * np.arange(3.0)), _V3),
    (lambda m: np.sum(np.r_[m, m * 2.0] ** 2), _M23),
    (lambda x: np.sum(np.c_[x, np.sin(x)] ** 3), _V3),
    (lambda m: np.sum(np.c_[m, m] ** 2 * np.arange(6.0)), _M23),
    (lambda t: np.sum(np.c_[t, t] ** 2 * np.arange(8.0)), _T234),
], ids=["r_-vectors", "r_-numbers", "r_-one", "r_-matrices", "c_-vectors", "c_-matrices", "c_-last-axis-3d"])
def test_r_and_c_index_tricks_join_like_numpy(f, x):
    check_modes(f, x)


def test_r_with_a_constant_slice_is_the_range_and_a_string_is_refused():
    np.testing.assert_allclose(tg.grad(lambda x: np.sum(np.r_[x, 0:3] * np.arange(6.0)))(_V3), np.arange(3.0))
    with pytest.raises(tg.UnsupportedSyntaxError, match="string item"):
        tg.grad(lambda x: np.sum(np.r_["0,2", x, x]))(_V3)


_FLAT_W = np.arange(9.0).reshape(3, 3)


def _flat_list(x):
    a = np.zeros((3, 3))
    a.flat[[0, 4, 8]] = x  # x on the diagonal
    return np.sum(a * _FLAT_W)


def _flat_slices(x):
    a = np.ones((3, 3))
    a.flat[2:5] = x ** 2
    a.flat[7] += x[0]
    a.flat[::4] *= 2.0
    return np.sum(a * _FLAT_W) + np.sum(a.flat[1:4]) * 2


def _flat_argument(x):
    x.flat[0] = 3.0  # into a copy of the argument
    return np.sum(x ** 2)


@pytest.mark.parametrize("f", [_flat_list, _flat_slices, _flat_argument], ids=lambda f: f.__name__)
def test_flat_indexing_of_arrays(f):
    """`a.flat[i] = v` crashed (the array taken for a dict), `a.flat[i]` had no derivative."""
    check_modes(f, np.array([0.3, -0.7, 1.1]))


def _writes_through_transpose(x):
    a = np.zeros((3, 3))
    a.T[0] = x
    return np.sum(a)


def _writes_through_real(x):
    a = np.zeros(3, dtype=complex)
    a.real[1:] = x[1:]
    return np.sum(np.abs(a) ** 2)


def test_writing_through_an_arrays_real_attribute_is_refused():
    """`a.real[1:] = v` gave a wrong gradient once attributes' arrays could be written into."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="would be a view of it"):
        tg.grad(_writes_through_real)(np.array([0.3, -0.7, 1.1]))


def test_writing_through_an_arrays_transpose_writes_into_the_array():
    """`a.T[0] = v` is a write through the view `a.T`, put back into `a` (it was refused)."""
    check_modes(_writes_through_transpose, np.array([0.3, -0.7, 1.1]))


def _into_int_arrays(x):
    labels = np.array([1, 0, 2, 1])
    preds = np.zeros_like(labels)
    for i in range(4):
        preds[i] = 3 * x[i]  # truncated to an int: a constant
    flags = np.zeros(4, dtype=bool)
    flags[1] = x[1]
    counts = np.array([x[0] * 5, x[1] * 5], dtype=int)
    return np.sum(preds * x) + np.sum(flags * x) + np.sum(counts * x[:2]) \
        + np.sum(np.asarray(x * 5, dtype=np.int64) * x)


def test_a_float_written_into_an_int_or_bool_array_has_no_derivative():
    """NumPy truncates what it writes into an int or bool array (and np.array(..., dtype=int) does too): the
    derivative through it was the float's (grad [2.5, 4.1, 2.2, 0.6] where floor(3x) = [1, 2, 1, 0])."""
    check_modes(_into_int_arrays, np.array([0.51, 0.73, 0.37, 0.23]))


def _diagonal_view_written(x):
    M = np.zeros((3, 3))
    d = np.einsum("ii->i", M)  # NumPy's einsum summing over nothing returns a view
    d[:] = x
    return np.sum(M @ x)


def test_a_write_through_a_view_einsum_returns_is_refused():
    """It gave a wrong derivative with no error: the write into M through the view went unseen."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="is a view of an array"):
        tg.grad(_diagonal_view_written)(np.array([0.3, -0.2, 0.5]))


_WEIGHTS = np.arange(1.0, 5.0)


def _subtracted_at(x):
    a = np.zeros(4)
    for k in range(2):
        np.subtract.at(a, [0, 0, k + 1], x[:3] ** (k + 1))
    np.subtract.at(x, [3, 3], x[1:3])  # (into an argument: into the function's copy)
    return np.sum(a * _WEIGHTS * a) + np.sum(x ** 2 * _WEIGHTS)


def test_np_subtract_at_is_followed_as_np_add_at_of_the_negated_values():
    """It ran as written, changing the array where the gradient code did not see it: a wrong gradient."""
    check_modes(_subtracted_at, np.array([0.5, -1.5, 2.0, 0.7]))


class _Holder:
    pass


def _multiplied_at(x):
    a = x * 1.0
    np.multiply.at(a, [0, 0], x[1])
    return np.sum(a * _WEIGHTS)


def _maximum_at(x):
    a = x * 1.0
    np.maximum.at(a, [1, 1], x[2:])
    return np.sum(a * _WEIGHTS)


def _added_at_into_an_attribute(x):
    h = _Holder()
    h.a = x * 1.0
    np.add.at(h.a, [0, 0], x[1])
    return np.sum(h.a * _WEIGHTS)


def _added_at_into_a_row(x):
    A = np.outer(x, x)
    np.add.at(A[0], [0, 0], x[1])
    return np.sum(A * _WEIGHTS)


def _added_at_into_a_list_item(x):
    rows = [x * 1.0]
    np.add.at(rows[0], [0, 0], x[1])
    return np.sum(rows[0] * _WEIGHTS)


@pytest.mark.parametrize("f", [_multiplied_at, _maximum_at, _added_at_into_an_attribute, _added_at_into_a_row,
                               _added_at_into_a_list_item], ids=lambda f: f.__name__)
def test_a_ufuncs_at_writing_into_a_differentiated_array_tapegen_cannot_follow_is_refused(f):
    """Each ran as written: the array changed in place, the gradient was that of the array before (no error)."""
    with pytest.raises(tg.NoRuleError, match="changes .* in place"):
        tg.grad(f)(np.array([0.5, -1.5, 2.0, 0.7]))


def _counted_at_into_an_attribute(x):
    h = _Holder()
    h.counts = np.zeros(4)
    np.add.at(h.counts, [0, 0, 2], 1.0)
    np.maximum.at(h.counts, [1], 0.5)
    return np.sum(x ** 2 * h.counts)


def test_a_ufuncs_at_on_an_array_without_derivatives_runs_as_written():
    check_modes(_counted_at_into_an_attribute, np.array([0.5, -1.5, 2.0, 0.7]))


def test_index_helpers_of_an_array_read_its_shape_only():
    """np.diag_indices_from(K) and np.tril/triu_indices_from of a differentiated K: the GP jitter idiom."""
    def f(theta):
        K = np.outer(theta, theta) + 2 * np.eye(3)
        K[np.diag_indices_from(K)] += theta ** 2
        K[np.triu_indices_from(K, 1)] *= 0.5
        return np.linalg.slogdet(K)[1] + np.sum(K[np.tril_indices_from(K)] ** 2)
    check_modes(f, np.array([0.3, -0.2, 0.5]))

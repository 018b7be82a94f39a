"""Forward mode, Jacobians, Hessians and gradients of gradients, each against central differences."""
import collections
import importlib
import pathlib

import numpy as np
import pytest

import tapegen as tg
from cases import flow_functions as F
from cases import golden_functions as G
from conftest import numeric_vjp
from test_rules_runtime import check_forward_row
from tapegen.api_transforms import _batched_columns, choose_mode


def directional(f, args, tangents, eps=1e-6):
    """d f(args) in direction `tangents` (None: fixed) by central differences."""
    plus = [a if t is None else _add(a, t, eps) for a, t in zip(args, tangents)]
    minus = [a if t is None else _add(a, t, -eps) for a, t in zip(args, tangents)]
    return _tree_map(lambda p, m: (np.asarray(p, dtype=float) - np.asarray(m, dtype=float)) / (2 * eps),
                     f(*plus), f(*minus))


def _add(a, t, eps):
    if isinstance(a, dict):
        return {k: _add(a[k], t[k], eps) for k in a}
    if isinstance(a, (list, tuple)):
        return type(a)(_add(ai, ti, eps) for ai, ti in zip(a, t))
    return a + eps * t if np.ndim(a) else float(a + eps * t)


def _tree_map(fn, *trees):
    if isinstance(trees[0], dict):
        return {k: _tree_map(fn, *(t[k] for t in trees)) for k in trees[0]}
    if isinstance(trees[0], (tuple, list)):
        return tuple(_tree_map(fn, *items) for items in zip(*trees))
    return fn(*trees)


def assert_close(actual, expected, rtol=1e-6, atol=1e-8):
    _tree_map(lambda a, e: np.testing.assert_allclose(np.asarray(a, dtype=float), e, rtol=rtol, atol=atol),
              actual, expected)


def check_jvp(f, args, wrt, rtol=1e-6, atol=1e-8):
    rng = np.random.default_rng(3)
    tangents = [None] * len(args)
    for i in wrt:
        tangents[i] = _tree_map(lambda a: rng.standard_normal(np.shape(a)) if np.ndim(a) else
                                float(rng.standard_normal()), args[i])
        tangents[i] = list(tangents[i]) if isinstance(args[i], list) else tangents[i]
    out, tangent = tg.jvp(f, tuple(args), tuple(tangents))
    assert_close(out, _tree_map(lambda o: np.asarray(o, dtype=float), f(*args)), rtol=1e-12, atol=0)
    assert _tree_map(np.shape, tangent) == _tree_map(np.shape, out)
    assert_close(tangent, directional(f, args, tangents), rtol, atol)


# --- every rule row of every table, in forward mode through the full transform --------------------

def _all_rows():
    for path in sorted(pathlib.Path(__file__).parent.glob("test_rules_*.py")):
        for row in importlib.import_module(path.stem).ROWS:
            yield pytest.param(row, id=f"{path.stem[11:]}-{row.id}")


@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::SyntaxWarning")
@pytest.mark.parametrize("row", list(_all_rows()))
def test_jvp_of_every_rule_row(row):
    check_forward_row(row)


# --- the control-flow corpus -------------------------------------------------------------------

_rng = np.random.default_rng(0)
CORPUS = [
    ("rnn", F.rnn, (_rng.normal(size=(4, 4)) * 0.5, _rng.normal(size=(3, 4)) * 0.5, _rng.normal(size=(6, 3)),
                    _rng.normal(size=4)), (0, 1, 2, 3)),
    ("rnn_states", F.rnn_states, (_rng.normal(size=(3, 3)) * 0.5, _rng.normal(size=(5, 3))), (0, 1)),
    ("piecewise-square", F.piecewise, (2.0,), (0,)),
    ("piecewise-sine", F.piecewise, (0.3,), (0,)),
    ("piecewise-negate", F.piecewise, (-2.5,), (0,)),
    ("newton_sqrt", F.newton_sqrt, (2.0,), (0,)),
    ("dp_table", F.dp_table, (_rng.normal(size=5),), (0,)),
    ("early_return-returns", F.early_return, (np.array([0.9, 0.8, 0.7, 0.6]), 0.5), (0, 1)),
    ("early_return-runs-through", F.early_return, (np.array([0.9, 0.8, 0.7, 0.6]), 100.0), (0, 1)),
    ("skips", F.skips, (np.array([0.5, -1.0, 2.0, 0.3, -0.2, 1.5, 0.7, 0.9]),), (0,)),
    ("zipped", F.zipped, (_rng.normal(size=4), _rng.normal(size=5)), (0, 1)),
    ("masked", F.masked, (_rng.normal(size=(4, 3)),), (0,)),
    ("accumulate_in_place", F.accumulate_in_place, (_rng.normal(size=3), 4), (0,)),
    ("swap_loop", F.swap_loop, (1.3, 0.7), (0, 1)),
    ("branch_reassigns_argument", F.branch_reassigns_argument, (np.abs(_rng.normal(size=3)),), (0,)),
    ("many_steps", F.many_steps, (1.0,), (0,)),
    ("two_layer_loss", F.two_layer_loss, ({"W1": _rng.normal(size=(3, 4)), "b1": _rng.normal(size=4),
                                            "W2": _rng.normal(size=(4, 2)), "b2": _rng.normal(size=2)},
                                           _rng.normal(size=(5, 3)), _rng.normal(size=(5, 2))), (0, 1)),
    ("closure", F.make_step(3.0), (_rng.normal(size=3), _rng.normal(size=3)), (0, 1)),
    ("nested_def", F.with_nested_def, (_rng.normal(size=3), _rng.normal(size=3)), (0, 1)),
    ("divmod_like", F.divmod_like, (_rng.normal(size=4),), (0,)),
    ("collect_and_stack", F.collect_and_stack, (_rng.normal(size=(3, 3)) * 0.5, _rng.normal(size=(4, 3))), (0, 1)),
    ("list_to_array", F.list_to_array, (_rng.normal(size=3), _rng.normal(size=3)), (0, 1)),
    ("dict_and_tuple_literals", F.dict_and_tuple_literals, (_rng.normal(size=3), _rng.normal(size=3)), (0, 1)),
    ("short_circuit-inside", F.short_circuit, (1.5, 2.0), (0,)),
    ("short_circuit-outside", F.short_circuit, (-2.0, 2.0), (0,)),
]


@pytest.mark.parametrize("name, f, args, wrt", CORPUS, ids=[case[0] for case in CORPUS])
def test_jvp_through_control_flow(name, f, args, wrt):
    check_jvp(f, args, wrt)


def copy_then_write(x):
    y = x.copy()
    y[0] = 5.0
    return np.sum(y * x)


def plus_zero_then_write(x):
    y = x + 0.0
    y[1] = 2.0 * y[0]
    return np.sum(y ** 2)


def carried_from_a_constant(w, n):
    h = 1.0
    for _ in range(n):
        h = h * w + 0.5
    return h


def while_with_a_compound_test(x):
    s = x * 1.0
    k = 0
    while np.sum(s) < 10.0 and k < 50:
        s = s * 1.5 + 0.1
        k = k + 1
    return np.sum(s)


def stack_a_list_argument(xs):
    return np.sum(np.stack(xs) ** 2)


def nested_loops_with_continue(x):
    total = 0.0
    for i in range(3):
        for j in range(2):
            if i > j:
                total = total + x[i] * x[j]
            else:
                continue
    return total


def several_outputs(x, c):
    return np.sin(x), {"twice": c * 2.0, "sum": np.sum(x)}, 3


TRICKY = [
    ("copy-then-write", copy_then_write, (np.array([0.3, -0.7, 1.1]),), (0,)),
    ("plus-zero-then-write", plus_zero_then_write, (np.array([0.3, -0.7, 1.1]),), (0,)),
    ("carried-from-a-constant", carried_from_a_constant, (0.9, 4), (0,)),
    ("while-compound-test", while_with_a_compound_test, (np.array([0.3, -0.7, 1.1]),), (0,)),
    ("list-argument", stack_a_list_argument, ([np.array([0.3, -0.7]), np.array([1.1, 0.2])],), (0,)),
    ("nested-loops-continue", nested_loops_with_continue, (np.array([0.3, -0.7, 1.1]),), (0,)),
    ("several-outputs", several_outputs, (np.array([0.3, -0.7]), 2.0), (0, 1)),
]


@pytest.mark.parametrize("name, f, args, wrt", TRICKY, ids=[case[0] for case in TRICKY])
def test_jvp_of_in_place_writes_carried_values_and_containers(name, f, args, wrt):
    check_jvp(f, args, wrt)


def test_jvp_never_writes_into_the_callers_tangent():
    tangent = np.array([1.0, 0.5, -2.0])
    tg.jvp(copy_then_write, (np.array([0.3, -0.7, 1.1]),), (tangent,))
    tg.jvp(plus_zero_then_write, (np.array([0.3, -0.7, 1.1]),), (tangent,))
    np.testing.assert_array_equal(tangent, [1.0, 0.5, -2.0])


def test_jvp_source_is_readable_and_deterministic():
    text = tg.source(G.rnn_loop, kind="jvp")
    assert "def rnn_loop_jvp(W, xs, W_dot):" in text and "h_dot = t8_dot * (1 - h * h)" in text
    assert "tape." not in text  # no tape: loops run their tangents inside them
    assert text == tg.source(G.rnn_loop, kind="jvp")


def test_differentiated_jvp_and_source():
    f = tg.differentiate(G.tanh_layer_loss, wrt=("W", "b"))
    args = (np.ones((3, 2)), np.zeros(2), np.ones((4, 3)), np.zeros((4, 2)))
    out, tangent = f.jvp(args, (np.ones((3, 2)), np.ones(2)), wrt=("W", "b"))
    assert out == f(*args)
    assert tangent == pytest.approx(directional(f, args, (np.ones((3, 2)), np.ones(2), None, None)), rel=1e-6)
    assert "W_dot, b_dot" in f.source("jvp")


def test_jvp_keeps_float32_and_skips_integer_arguments():
    out, tangent = tg.jvp(F.accumulate_in_place, (np.ones(3, dtype=np.float32), 3), (np.ones(3), 0))
    assert np.asarray(tangent).dtype == np.float32
    with pytest.raises(tg.WrtError, match="integer"):
        tg.jvp(F.accumulate_in_place, (np.ones(3), 3), (np.ones(3), 1))


def test_jvp_without_a_rule_names_the_users_line():
    def f(x):
        return np.sum(np.i0(x))

    with pytest.raises(tg.NoRuleError) as info:
        tg.jvp(f, (np.ones(3),), (np.ones(3),))
    assert "np.i0(x)" in str(info.value)


# --- Jacobians ----------------------------------------------------------------------------------

def numeric_jacobian(f, args, position):
    x = np.asarray(args[position], dtype=float)
    out = np.asarray(f(*args))
    columns = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = 1.0
        tangents = [None] * len(args)
        tangents[position] = e.reshape(x.shape) if x.ndim else float(e[0])
        columns.append(np.asarray(directional(f, args, tangents)))
    return np.moveaxis(np.array(columns), 0, -1).reshape(out.shape + x.shape)


JACOBIAN_CASES = [
    ("tanh-map", lambda x, A: np.tanh(A @ x), (np.linspace(-1, 1, 3), np.arange(12.0).reshape(4, 3) / 10)),
    ("elementwise", lambda x: np.sin(x) * x, (np.linspace(-1, 1, 5),)),
    ("matrix-in", lambda W, x: np.tanh(x @ W), (np.ones((3, 2)) * 0.3, np.linspace(0, 1, 6).reshape(2, 3))),
    ("scalar-out", lambda x: np.sum(x ** 3), (np.linspace(-1, 1, 4),)),
    ("rnn-loop", G.rnn_loop, (np.eye(3) * 0.4, np.linspace(-1, 1, 12).reshape(4, 3))),
]


@pytest.mark.parametrize("name, f, args", JACOBIAN_CASES, ids=[case[0] for case in JACOBIAN_CASES])
def test_jacobian_modes_agree_with_each_other_and_differences(name, f, args):
    expected = numeric_jacobian(f, args, 0)
    for mode in ("forward", "reverse", "auto"):
        np.testing.assert_allclose(tg.jacobian(f, mode=mode)(*args), expected, rtol=1e-6, atol=1e-8)


def test_jacobian_of_several_inputs_and_outputs():
    def f(a, b):
        return a * b, np.sum(a) + b[0]

    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    for mode in ("forward", "reverse"):
        (da, db), (sa, sb) = tg.jacobian(f, wrt=(0, 1), mode=mode)(a, b)
        np.testing.assert_allclose(da, np.diag(b))
        np.testing.assert_allclose(db, np.diag(a))
        np.testing.assert_allclose(sa, [1.0, 1.0])
        np.testing.assert_allclose(sb, [1.0, 0.0])


STRUCTURED = collections.namedtuple("STRUCTURED", "first second")
STRUCTURED_OUTPUTS = [
    ("list", lambda x: [x * 2.0, np.sin(x[:2])]),
    ("list-of-one", lambda x: [np.cos(x)]),
    ("nested-tuple", lambda x: ((x * x, np.sum(x)), np.sin(x))),
    ("dict", lambda x: {"a": np.exp(x), "b": x[1] * x[:2]}),
    ("namedtuple", lambda x: STRUCTURED(np.tanh(x), x[0] * 3.0)),
    ("unequal-pieces", lambda x: np.split(np.sin(x), [1])),
]


@pytest.mark.parametrize("name, f", STRUCTURED_OUTPUTS, ids=[case[0] for case in STRUCTURED_OUTPUTS])
def test_jacobian_of_a_structured_output_has_its_structure(name, f):
    """As in JAX: one Jacobian per array of the output, in the output's lists, tuples and dicts."""
    x = np.array([0.3, -0.7, 1.1])
    out = f(x)
    for mode in ("forward", "reverse", "auto"):
        jacobian = tg.jacobian(f, mode=mode)(x)
        assert type(jacobian) is type(out) and len(jacobian) == len(out)
        blocks = _leaves(jacobian)
        assert len(blocks) == len(_leaves(out))
        for k, block in enumerate(blocks):
            expected = numeric_jacobian(lambda x: _leaves(f(x))[k], (x,), 0)
            np.testing.assert_allclose(block, expected, rtol=1e-6, atol=1e-8)


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for value in tree.values() for leaf in _leaves(value)]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def test_auto_mode_picks_the_smaller_side():
    assert choose_mode(inputs=10, outputs=100) == "forward"
    assert choose_mode(inputs=100, outputs=10) == "reverse"
    assert choose_mode(inputs=50, outputs=50) == "reverse"


@pytest.mark.parametrize("f, batched", [(lambda x: np.tanh(x) * 2.0, True), (lambda x: np.cumsum(x) ** 2, False)],
                         ids=["elementwise-batched", "cumsum-one-at-a-time"])
def test_forward_jacobian_batches_basis_vectors_where_the_code_allows(f, batched):
    x = np.linspace(-1, 1, 6)
    function = tg.differentiate(f)._entry("jvp", (0,)).function
    columns = _batched_columns(function, (x,), np.eye(6), x, 0)
    assert (columns is not None) == batched
    np.testing.assert_allclose(tg.jacobian(f, mode="forward")(x), numeric_jacobian(f, (x,), 0), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("n, m", [(10, 100), (100, 10), (50, 50), (1000, 1)])
def test_seed_exercise_4_linear_map_forward_and_reverse(n, m):
    """A random linear map f(x) = A x: forward mode pushes n vectors, reverse pulls m; both give A."""
    A = np.random.default_rng(n + m).normal(size=(m, n))
    x = np.ones(n)
    for mode in ("forward", "reverse", "auto"):
        np.testing.assert_allclose(tg.jacobian(lambda x, A: A @ x, mode=mode)(x, A), A, rtol=1e-12, atol=1e-12)


# --- Hessians and Hessian-vector products ---------------------------------------------------------

def quadratic(x, A, b):
    return 0.5 * x @ A.T @ A @ x + b @ x


HESSIAN_CASES = [
    ("cubic", lambda x: np.sum(x ** 3) + x[0] * x[1], (np.array([0.5, -1.0, 2.0]),)),
    ("tanh-layer", G.tanh_layer_loss, (np.ones((3, 2)) * 0.3, np.array([0.1, -0.2]),
                                       np.linspace(-1, 1, 12).reshape(4, 3), np.ones((4, 2)) * 0.5)),
    ("rnn-loop", G.rnn_loop, (np.eye(3) * 0.4 + 0.1, np.linspace(-1, 1, 12).reshape(4, 3))),
    ("branch", G.branch, (0.7,)),
    ("quadratic", quadratic, (np.array([1.0, -2.0, 0.5]), np.arange(12.0).reshape(4, 3) / 7, np.ones(3))),
    ("dp_table", F.dp_table, (np.array([0.3, -0.2, 0.5, 0.1]),)),
]


@pytest.mark.parametrize("name, f, args", HESSIAN_CASES, ids=[case[0] for case in HESSIAN_CASES])
def test_hessian_is_symmetric_and_the_jacobian_of_the_gradient(name, f, args):
    x = np.asarray(args[0], dtype=float)
    H = np.asarray(tg.hessian(f)(*args)).reshape(x.size, x.size)
    np.testing.assert_allclose(H, H.T, rtol=1e-9, atol=1e-10)
    gradient = tg.grad(f)
    expected = numeric_jacobian(lambda *a: np.asarray(gradient(*a), dtype=float), args, 0).reshape(x.size, x.size)
    np.testing.assert_allclose(H, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name, f, args", HESSIAN_CASES, ids=[case[0] for case in HESSIAN_CASES])
def test_hvp_is_hessian_times_v(name, f, args):
    x = np.asarray(args[0], dtype=float)
    v = np.random.default_rng(1).standard_normal(x.shape)
    v = float(v) if x.ndim == 0 else v
    expected = np.asarray(tg.hessian(f)(*args)).reshape(x.size, x.size) @ np.ravel(v)
    np.testing.assert_allclose(np.ravel(tg.hvp(f)(*args, v)), expected, rtol=1e-9, atol=1e-10)


def test_hvp_of_a_params_dict():
    params = {"W": np.linspace(-1, 1, 6).reshape(3, 2), "b": np.array([0.1, -0.3])}
    x = np.linspace(0, 1, 12).reshape(4, 3)
    v = {"W": np.ones((3, 2)), "b": np.array([1.0, -1.0])}
    gradient = tg.grad(G.params_dict)
    assert_close(tg.hvp(G.params_dict)(params, x, v),
                 directional(lambda p, x: gradient(p, x), (params, x), (v, None)), rtol=1e-6)


def test_seed_exercise_5_hessian_vector_product_of_a_quadratic():
    """f(x) = 0.5 x^T A^T A x + b^T x: H = A^T A; direct, forward-over-reverse and reverse-over-reverse agree."""
    rng = np.random.default_rng(5)
    A, b, x, v = rng.normal(size=(20, 8)), rng.normal(size=8), rng.normal(size=8), rng.normal(size=8)
    direct = (A.T @ A) @ v
    np.testing.assert_allclose(tg.hvp(quadratic)(x, A, b, v), direct, rtol=1e-10)
    np.testing.assert_allclose(tg.hessian(quadratic)(x, A, b), A.T @ A, rtol=1e-10, atol=1e-12)
    _, pullback = tg.vjp(tg.grad(quadratic), x, A, b)
    np.testing.assert_allclose(pullback(v), direct, rtol=1e-10)


# --- gradients of gradients -----------------------------------------------------------------------

def quartic(x):
    return x ** 4 + np.sin(x)


def test_grad_of_grad_and_third_order_on_a_scalar_function():
    x = 1.3
    assert tg.grad(quartic)(x) == pytest.approx(4 * x ** 3 + np.cos(x), rel=1e-12)
    assert tg.grad(tg.grad(quartic))(x) == pytest.approx(12 * x ** 2 - np.sin(x), rel=1e-12)
    assert tg.grad(tg.grad(tg.grad(quartic)))(x) == pytest.approx(24 * x - np.cos(x), rel=1e-12)
    second = tg.grad(tg.grad(quartic))
    assert second(x) == pytest.approx(float(directional(tg.grad(quartic), (x,), (1.0,))), rel=1e-7)


def test_grad_of_grad_through_a_branch():
    assert tg.grad(tg.grad(F.piecewise))(2.0) == pytest.approx(6.0)
    assert tg.grad(tg.grad(F.piecewise))(0.3) == pytest.approx(-3 * np.sin(0.3))


def test_gradient_functions_source_and_jvp():
    second = tg.grad(tg.grad(quartic))
    assert "def quartic_grad_grad(x):" in second.source()
    value, tangent = tg.jvp(tg.grad(quartic), (1.3,), (1.0,))
    assert tangent == pytest.approx(12 * 1.3 ** 2 - np.sin(1.3), rel=1e-12)


def _second_derivative_matches(f, x, direction):
    """grad of <grad f, direction> (reverse over reverse) vs central differences of that gradient."""
    g = tg.grad(f)

    def projected(v):
        return np.sum(g(v) * direction)

    actual = tg.grad(projected)(x)
    np.testing.assert_allclose(actual, numeric_vjp(projected, (x,), 0, 1.0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(actual, tg.hessian(f)(x) @ direction, rtol=1e-8, atol=1e-10)


def test_reverse_over_reverse_through_a_loop():
    rng = np.random.default_rng(4)
    W, xs = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 3))
    _second_derivative_matches(lambda w: G.rnn_loop(w.reshape(3, 3), xs), W.ravel(), rng.normal(size=9))


def test_reverse_over_reverse_through_array_assignment():
    _second_derivative_matches(G.array_assignment, np.array([0.3, -0.8, 1.2]), np.array([1.0, 0.5, -2.0]))


def test_reverse_over_reverse_through_a_branch():
    def f(x):
        if np.sum(x) > 0.0:
            y = np.sin(x) * x
        else:
            y = np.exp(x)
        return np.sum(y ** 2)
    for x in (np.array([0.4, 0.9]), np.array([-0.4, -0.9])):
        _second_derivative_matches(f, x, np.array([1.0, -1.0]))


def test_forward_over_reverse_through_a_loop_for_a_scalar():
    def power(x):
        y = 1.0
        for _ in range(5):
            y = y * x
        return y
    assert tg.jvp(tg.grad(power), (1.5,), (1.0,))[1] == pytest.approx(20 * 1.5 ** 3, rel=1e-12)


def inner_loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def maml_objective(w, xs, ys, xq, yq, rate=0.1):
    """Loss on the query set after one gradient step on the support set."""
    return inner_loss(w - rate * tg.grad(inner_loss)(w, xs, ys), xq, yq)


def test_maml_step_matches_finite_differences():
    """The meta-gradient (I - a H_support) g_query, with H from a gradient of the gradient code."""
    rng = np.random.default_rng(2)
    w, xs, ys, xq, yq = rng.normal(size=3), rng.normal(size=(6, 3)), rng.normal(size=6), \
        rng.normal(size=(6, 3)), rng.normal(size=6)
    adapted = w - 0.1 * tg.grad(inner_loss)(w, xs, ys)
    g_query = tg.grad(inner_loss)(adapted, xq, yq)
    expected = numeric_vjp(maml_objective, (w, xs, ys, xq, yq), 0, 1.0)
    forward_over_reverse = g_query - 0.1 * tg.hvp(inner_loss)(w, xs, ys, g_query)
    np.testing.assert_allclose(forward_over_reverse, expected, rtol=1e-6, atol=1e-9)
    _, pullback = tg.vjp(tg.grad(inner_loss), w, xs, ys)
    reverse_over_reverse = g_query - 0.1 * pullback(g_query)
    np.testing.assert_allclose(reverse_over_reverse, expected, rtol=1e-6, atol=1e-9)


def test_maml_gradient_through_a_nested_gradient_call():
    rng = np.random.default_rng(2)
    args = (rng.normal(size=3), rng.normal(size=(6, 3)), rng.normal(size=6), rng.normal(size=(6, 3)),
            rng.normal(size=6))
    meta = tg.grad(maml_objective)(*args)
    np.testing.assert_allclose(meta, numeric_vjp(maml_objective, args, 0, 1.0), rtol=1e-6, atol=1e-9)


class Cubic:
    def __init__(self, scale):
        self.scale = scale

    def loss(self, x):
        return np.sum(self.scale * x ** 3)


def test_higher_order_of_methods_binds_each_instance():
    small, large = Cubic(2.0), Cubic(5.0)
    np.testing.assert_allclose(tg.hvp(small.loss)(np.ones(2), np.ones(2)), [12.0, 12.0])
    np.testing.assert_allclose(tg.hvp(large.loss)(np.ones(2), np.ones(2)), [30.0, 30.0])
    assert tg.grad(tg.grad(large.loss))(1.0) == pytest.approx(30.0)
    assert tg.jvp(small.loss, (np.ones(2),), (np.ones(2),))[1] == pytest.approx(12.0)


# --- user rules in forward mode -------------------------------------------------------------------

@tg.custom_jvp
def clipped_exp(x):
    return np.exp(np.minimum(x, 10.0))


def clipped_exp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = clipped_exp(x)
    return y, np.where(x < 10.0, y * t, 0.0)


clipped_exp.defjvp(clipped_exp_jvp)


def uses_clipped_exp(x, c):
    return np.sum(clipped_exp(x * c) * 2.0)


@tg.custom_vjp
def smooth_relu(x):
    return np.logaddexp(0.0, x)


smooth_relu.defvjp(lambda x: (smooth_relu(x), (x,)), lambda residuals, g: (g / (1.0 + np.exp(-residuals[0])),))


def uses_smooth_relu(x):
    return np.sum(smooth_relu(x))


def test_custom_jvp_is_used_by_forward_mode():
    check_jvp(uses_clipped_exp, (np.array([0.1, 0.5, 11.0]), 1.5), (0, 1))
    assert "clipped_exp_tangent((t1,), (t1_dot,))" in tg.source(uses_clipped_exp, kind="jvp", wrt=(0, 1))


def test_checkpointed_segments_push_tangents_through_their_code():
    from cases import checkpoint_functions as C
    check_jvp(C.checkpointed_chain, (np.linspace(-0.2, 0.2, 4) * 0.01,), (0,))
    check_jvp(C.two_layers_inner_checkpointed, (np.linspace(-1, 1, 4),), (0,))


def test_custom_vjp_in_forward_mode_transposes_its_bwd():
    check_jvp(uses_smooth_relu, (np.array([-2.0, 0.3, 4.0]),), (0,))
    assert "smooth_relu_tangent((x,), (x_dot,))" in tg.source(uses_smooth_relu, kind="jvp")

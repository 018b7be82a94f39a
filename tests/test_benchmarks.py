"""The benchmark workloads: hand-written gradients agree with tapegen and with finite differences.

Behaviour only; the timings live in benchmarks/.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tapegen as tg

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCHMARKS)

import workloads  # noqa: E402

ALL = {**workloads.SPEED, **workloads.MEMORY}


def _as_float64(value):
    if isinstance(value, list):
        return [_as_float64(v) for v in value]
    return np.asarray(value, dtype=np.float64) if isinstance(value, np.ndarray) else value


def _leaves(grads):
    """Gradients as a flat list of arrays (a list argument's gradient contributes one per item)."""
    return [np.asarray(a) for g in grads for a in (g if isinstance(g, list) else [g])]


def central_differences(f, args, name, eps=1e-6):
    """d f / d args[name] by central differences in float64, one leaf array (or float) at a time."""
    position = f.__code__.co_varnames.index(name)
    value = args[position]
    items = value if isinstance(value, list) else [value]
    grads = []
    for k, item in enumerate(items):
        x = np.array(item, dtype=np.float64)
        grad = np.zeros(x.shape)
        for i in np.ndindex(x.shape):
            values = []
            for step in (eps, -eps):
                moved = x.copy()
                moved[i] += step
                leaf = moved if np.ndim(item) else float(moved)
                new = list(items)
                new[k] = leaf
                call = list(args)
                call[position] = new if isinstance(value, list) else leaf
                values.append(f(*call))
            grad[i] = (values[0] - values[1]) / (2 * eps)
        grads.append(grad)
    return grads


@pytest.mark.parametrize("name", list(ALL))
def test_hand_written_gradient_equals_tapegen(name):
    workload = ALL[name]
    args = workload.make(np.random.default_rng(1), "test")
    value, grads = tg.value_and_grad(workload.fn, wrt=workload.wrt)(*args)
    hand_value, hand_grads = workload.hand(*args)
    rtol = 1e-5 if name == "mlp_large" else 1e-10
    np.testing.assert_allclose(value, hand_value, rtol=rtol)
    for ours, theirs in zip(_leaves(grads), _leaves(hand_grads), strict=True):
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("name", list(ALL))
def test_hand_written_gradient_equals_finite_differences(name):
    workload = ALL[name]
    args = tuple(_as_float64(a) for a in workload.make(np.random.default_rng(2), "test"))
    _, hand_grads = workload.hand(*args)
    expected = [g for wrt in workload.wrt for g in central_differences(workload.fn, args, wrt)]
    for ours, numeric in zip(_leaves(hand_grads), expected, strict=True):
        np.testing.assert_allclose(ours, numeric, rtol=1e-6, atol=1e-8)


def test_float32_stays_float32():
    workload = workloads.SPEED["mlp_large"]
    args = workload.make(np.random.default_rng(3), "test")
    value, grads = workload.hand(*args)
    assert np.asarray(value).dtype == np.float32
    assert all(g.dtype == np.float32 for g in grads)


@pytest.mark.parametrize("name", [n for n, w in ALL.items() if w.variants])
def test_variants_equal_the_hand_written_gradient(name):
    workload = ALL[name]
    args = workload.make(np.random.default_rng(4), "test")
    value, grads = workload.hand(*args)
    for variant in workload.variants.values():
        other_value, other_grads = variant(*args)
        assert other_value == value
        for a, b in zip(_leaves(other_grads), _leaves(grads), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("step", [1, 2, 3])
def test_hand_written_checkpointing_equals_plain(step):
    Ws, x = workloads.make_deep_mlp(np.random.default_rng(5), "test")
    value, (grads,) = workloads.deep_mlp_hand(Ws, x)
    other_value, (other_grads,) = workloads.deep_mlp_hand_checkpointed(Ws, x, step)
    assert other_value == value
    for a, b in zip(other_grads, grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_rebind_runs_the_same_code_with_another_numpy():
    calls = []

    class Recording:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(np, name)

    value = workloads.rebind(workloads.scalar, Recording())(0.7, 1.3)
    assert calls == ["tanh"] and value == workloads.scalar(0.7, 1.3)


def test_run_quick_prints_a_table():
    command = [sys.executable, os.path.join(BENCHMARKS, "run.py"), "--quick", "--rounds", "1", "--only", "scalar"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if line.startswith("workload"))
    assert "tapegen/hand" in header and "first call" in header
    assert any(line.startswith("scalar ") for line in done.stdout.splitlines())


def _table_lines(command):
    done = subprocess.run([sys.executable, *command], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.slow  # a fresh process per function: 5-15 s on a loaded machine
def test_transform_scaling_prints_seconds_per_statement():
    lines = _table_lines([os.path.join(BENCHMARKS, "transform_scaling.py"), "--sizes", "10", "--kinds",
                          "straight,loop"])
    header = next(line for line in lines if line.startswith("function"))
    assert "per statement" in header and "goal" in header
    assert [line.split()[:2] for line in lines if line.startswith(("straight ", "loop "))] == [
        ["straight", "10"], ["loop", "10"]]


@pytest.mark.slow  # four fresh processes
def test_first_call_prints_a_row_per_method():
    lines = _table_lines([os.path.join(BENCHMARKS, "first_call.py"), "--rounds", "1", "--only",
                          "tapegen,tapegen (warm disk cache)"])
    header = next(line for line in lines if line.startswith("method"))
    assert "import" in header and "first gradient" in header
    rows = [line for line in lines if line.startswith("tapegen")]
    assert len(rows) == 2 and all("goal 20 ms" in row for row in rows)


def test_state_loop_hand_written_gradient_equals_tapegen_and_finite_differences():
    x, steps = workloads.make_state_loop(np.random.default_rng(3), 5, n=4)
    value, grad = tg.value_and_grad(workloads.state_loop)(x, steps)
    hand_value, (hand,) = workloads.state_loop_hand(x, steps)
    np.testing.assert_allclose(value, hand_value, rtol=1e-12)
    np.testing.assert_allclose(grad, hand, rtol=1e-10)
    np.testing.assert_allclose(hand, central_differences(workloads.state_loop, (x, steps), "x")[0], rtol=1e-6)


def test_memory_counts_page_faults_in_a_fresh_process():
    command = [sys.executable, os.path.join(BENCHMARKS, "memory.py"), "--faults-child", "tapegen",
               "state loop, 1e5 floats", "3"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    calls = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(calls) == 2 and all(call["faults"] >= 0 and call["wall"] > 0 for call in calls)

"""Golden tests: the printed IR and the generated code, byte for byte.

Regenerate after an intended change with `TAPEGEN_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py`
and review the diff like any other code change.
"""
import os
import pathlib
import subprocess
import sys

import pytest

import tapegen as tg
from cases import golden_functions as cases

GOLDEN = pathlib.Path(__file__).parent / "golden"
UPDATE = os.environ.get("TAPEGEN_UPDATE_GOLDEN") == "1"

ARTIFACTS = [
    ("tanh_layer_loss", "wengert", lambda: tg.wengert(cases.tanh_layer_loss)),
    ("tanh_layer_loss", "grad", lambda: tg.source(cases.tanh_layer_loss, wrt=(0, 1))),
    ("tanh_layer_loss", "vjp", lambda: tg.source(cases.tanh_layer_loss, kind="vjp", wrt=(0, 1))),
    ("fan_out", "grad", lambda: tg.source(cases.fan_out)),
    ("slicing", "grad", lambda: tg.source(cases.slicing)),
    ("params_dict", "grad", lambda: tg.source(cases.params_dict)),
    ("rnn_loop", "grad", lambda: tg.source(cases.rnn_loop)),
    ("rnn_loop", "vjp", lambda: tg.source(cases.rnn_loop, kind="vjp")),
    ("branch", "grad", lambda: tg.source(cases.branch)),
    ("array_assignment", "grad", lambda: tg.source(cases.array_assignment)),
    ("jittered_cholesky", "grad", lambda: tg.source(cases.jittered_cholesky)),
    ("rnn_loop", "wengert", lambda: tg.wengert(cases.rnn_loop)),
    ("commented", "grad", lambda: tg.source(cases.commented, wrt=1)),
    ("tanh_layer_loss", "specialized", lambda: tg.source(cases.tanh_layer_loss, wrt=(0, 1, 2, 3),
                                                         args=cases.example_arguments("tanh_layer_loss"))),
    ("softmax_xent", "specialized", lambda: tg.source(cases.softmax_xent,
                                                      args=cases.example_arguments("softmax_xent"))),
]


@pytest.mark.parametrize("name, kind, make", ARTIFACTS, ids=[f"{n}-{k}" for n, k, _ in ARTIFACTS])
def test_golden(name, kind, make):
    path = GOLDEN / f"{name}.{kind}.txt"
    text = make()
    if UPDATE:
        path.write_text(text)
    assert path.exists(), f"no golden file {path.name}: run with TAPEGEN_UPDATE_GOLDEN=1"
    assert text == path.read_text()


def test_second_order_code_of_writes_in_a_loop_is_the_same_in_every_process():
    """Gradient code restoring writes in a loop (`a[i] = ...` under two names), differentiated again: the
    backward pass's restores were keyed by the id of objects a loop's fixed-point passes make and drop, so
    another restore could take a dropped one's id, and the forward pass then skipped a save (a crash, or
    restores of the wrong values) in about one process in seven."""
    script = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import numpy as np; import tapegen as tg; "
              "from test_aliasing import two_names_from_one_assignment as f; from modes import _projection; "
              "p = _projection(tg.grad(f), np.array([0.3, -0.2, 0.5, 0.1]), 1); "
              "print(tg.source(p), tg.grad(p)(np.array([0.3, -0.7, 1.1, 0.45])))")
    here = pathlib.Path(__file__).parent
    outputs = set()
    for _ in range(20):  # (memory addresses differ from process to process: the failure was one of chance)
        result = subprocess.run([sys.executable, "-c", script, str(here), str(here.parent)],
                                env={**os.environ, "TAPEGEN_CHECK_SPECIALIZED": "1"}, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[-2000:]
        outputs.add(result.stdout)
    assert len(outputs) == 1


def test_generation_is_deterministic_across_processes():
    """Same bytes whatever the hash seed: no set or id order leaks into names or layout."""
    script = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import tapegen as tg; "
              "from cases import golden_functions as c; "
              "print(tg.source(c.tanh_layer_loss, wrt=(0, 1)) + tg.source(c.params_dict, kind='vjp'))")
    here = pathlib.Path(__file__).parent
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run([sys.executable, "-c", script, str(here), str(here.parent)], env=env,
                                capture_output=True, text=True, check=True)
        outputs.add(result.stdout)
    assert len(outputs) == 1

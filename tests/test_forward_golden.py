"""Golden tests for generated forward-mode (JVP) code, byte for byte.

Regenerate after an intended change with
`TAPEGEN_UPDATE_GOLDEN=1 python -m pytest tests/test_forward_golden.py` and review the diff.
"""
import os
import pathlib

import pytest

import tapegen as tg
from cases import golden_functions as cases

GOLDEN = pathlib.Path(__file__).parent / "golden"
UPDATE = os.environ.get("TAPEGEN_UPDATE_GOLDEN") == "1"

ARTIFACTS = [
    ("tanh_layer_loss", lambda: tg.source(cases.tanh_layer_loss, kind="jvp", wrt=(0, 1))),
    ("fan_out", lambda: tg.source(cases.fan_out, kind="jvp")),
    ("rnn_loop", lambda: tg.source(cases.rnn_loop, kind="jvp")),
    ("branch", lambda: tg.source(cases.branch, kind="jvp")),
    ("array_assignment", lambda: tg.source(cases.array_assignment, kind="jvp")),
    ("jittered_cholesky", lambda: tg.source(cases.jittered_cholesky, kind="jvp")),
]


@pytest.mark.parametrize("name, make", ARTIFACTS, ids=[name for name, _ in ARTIFACTS])
def test_jvp_golden(name, make):
    path = GOLDEN / f"{name}.jvp.txt"
    text = make()
    if UPDATE:
        path.write_text(text)
    assert path.exists(), f"no golden file {path.name}: run with TAPEGEN_UPDATE_GOLDEN=1"
    assert text == path.read_text()

"""tg.trace, tg.residuals, tg.graph, and highlighted source: golden text and numbers checked independently.

Regenerate the golden files after an intended change with
`TAPEGEN_UPDATE_GOLDEN=1 python -m pytest tests/test_inspection.py` and review the diff.
"""
import html
import os
import pathlib
import re
import shutil
import subprocess

import numpy as np
import pytest

import tapegen as tg
from cases import inspection_functions as cases
from conftest import numeric_vjp
from tapegen import highlight
from tapegen.highlight import SourceText

GOLDEN = pathlib.Path(__file__).parent / "golden"
UPDATE = os.environ.get("TAPEGEN_UPDATE_GOLDEN") == "1"


def golden(name, text):
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text)
    assert path.exists(), f"no golden file {path.name}: run with TAPEGEN_UPDATE_GOLDEN=1"
    assert text == path.read_text()


def tanh_args():
    rng = np.random.default_rng(3)
    return rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))


# --- trace ----------------------------------------------------------------------------------------

def test_trace_of_the_seed_example_golden():
    golden("seed_example.trace.txt", str(tg.trace(cases.seed_example, 1.0, 2.0)) + "\n")


def test_trace_reproduces_the_seed_tables():
    """The seed's forward table (values, what is saved) and its adjoints 2.463 and 0.8415."""
    t = tg.trace(cases.seed_example, 1.0, 2.0)
    rows = {row[1]: row for row in t.forward}
    assert [rows[v][3] for v in ("x1", "x2", "t1", "t2", "t3")] == ["1.0", "2.0", "3.0", "0.8415", "2.524"]
    assert rows["t1"][4] == "- (linear)"            # x1 + x2 saves nothing: its derivative is constant
    assert rows["t2"][4] == "x1 = 1.0"              # sin saves its input, to compute cos(x1)
    assert rows["t3"][4] == "t1 = 3.0, t2 = 0.8415"  # a product saves both factors
    updates = [(row[1], row[3]) for row in t.backward]
    assert ("g_t2", "3.0") in updates and ("g_t1", "0.8415") in updates and ("g_x1", "1.621") in updates
    assert ("g_x1", "+= 0.8415 -> 2.462") in updates  # fan-out: x1 feeds both the sum and the sine
    (n1, d1), (n2, d2) = t.gradients
    assert (n1, n2) == ("x1", "x2")
    assert d1 == pytest.approx(2.463, abs=1e-3)      # the seed rounds 1.621 + 0.8415
    assert d2 == pytest.approx(0.8415, abs=5e-5)
    assert d1 == pytest.approx(numeric_vjp(cases.seed_example, (1.0, 2.0), 0, 1.0), rel=1e-8)
    assert t.value == pytest.approx(3 * np.sin(1.0))


def test_trace_gradients_agree_with_finite_differences():
    args = tanh_args()
    t = tg.trace(cases.tanh_layer, *args, wrt=("W", "b"))
    assert [name for name, _ in t.gradients] == ["W", "b"]
    for position, (_, gradient) in enumerate(t.gradients):
        np.testing.assert_allclose(gradient, numeric_vjp(cases.tanh_layer, args, position, 1.0), rtol=1e-6)
    assert [row[1] for row in t.forward if row[2].startswith("input")] == ["W", "b", "x", "y"]
    assert dict((row[1], row[2]) for row in t.forward)["x"] == "input, not differentiated"


def test_trace_default_wrt_is_every_float_argument():
    t = tg.trace(cases.looped, np.array([0.5, 1.0]), 3)
    assert [name for name, _ in t.gradients] == ["x"]
    with pytest.raises(tg.WrtError, match="no floating-point argument"):
        tg.trace(cases.looped, 1, 3)


def test_trace_runs_loops_and_branches_as_one_step():
    x = np.array([0.5, 1.0])
    t = tg.trace(cases.looped, x, 3)
    text = str(t)
    assert "for i in t1: ... (ran 3 times)" in text
    assert "(took the if branch)" in text
    assert "Loops and branches run as one step each" in text
    expected = numeric_vjp(lambda x: cases.looped(x, 3), (x,), 0, 1.0)
    np.testing.assert_allclose(t.gradients[0][1], expected, rtol=1e-7)


def test_trace_is_deterministic_and_renders_html():
    first, second = tg.trace(cases.seed_example, 1.0, 2.0), tg.trace(cases.seed_example, 1.0, 2.0)
    assert str(first) == str(second)
    page = first._repr_html_()
    assert page.count("<table>") == 2 and "g_x1 += unbroadcast(g_t1, x1_shape)" in page
    assert "-&gt; 2.462" in page  # cells are escaped


# --- residuals ------------------------------------------------------------------------------------

def test_residuals_name_size_and_origin_of_each_saved_value():
    args = tanh_args()
    report = tg.residuals(cases.tanh_layer, *args, wrt=("W", "b"))
    rows = {row[0]: row for row in report.rows}
    assert rows["h"][1:5] == ("value", "(4, 2)", "float64", 64)
    assert rows["h"][5].endswith("h = np.tanh(x @ W + b)") and ":10" in rows["h"][5]
    assert rows["x"][1] == "argument" and rows["W"][1] == "argument"
    assert report.total == sum(row[4] for row in report.rows)
    assert report.extra == report.total - sum(a.nbytes for a in args[:3])  # y is not saved
    out, saved = tg.pipeline.transform(cases.tanh_layer, "vjp", (0, 1), (0,), False).function(*args)
    assert len(saved) == len(report.rows)
    assert "total 320 B in 7 values; 160 B beyond the arguments" in str(report)


def test_residuals_of_a_loop_include_the_tape():
    report = tg.residuals(cases.looped, np.array([0.5, 1.0]), 3)
    tape = [row for row in report.rows if row[0] == "tape"]
    assert tape and tape[0][1] == "tape" and tape[0][2] == "list of 9"
    assert "<table>" in report._repr_html_()


def test_residuals_float32_bytes():
    x = np.ones(5, dtype=np.float32)
    report = tg.residuals(lambda x: np.sum(np.exp(x)), x)
    assert ("float32", 20) in [(row[3], row[4]) for row in report.rows]


# --- graph ----------------------------------------------------------------------------------------

def _check_dot(text):
    assert text.startswith("digraph ") and text.rstrip().endswith("}")
    assert text.count("{") == text.count("}")
    declared = set(re.findall(r"^\s*(n\d+) \[", text, re.M))
    for source, target in re.findall(r"^\s*(n\d+) -> (n\d+)", text, re.M):
        assert source in declared and target in declared


def test_graph_of_the_seed_example_golden():
    text = tg.graph(cases.seed_example)
    _check_dot(text)
    golden("seed_example.graph.dot", text)


def test_graph_of_a_loop_has_a_cluster_and_a_loop_carried_edge():
    text = tg.graph(cases.looped, wrt="x")
    _check_dot(text)
    assert 'label="for i in range(n):   (line 16)"' in text and 'label="if np.sum(s) > 0:   (line 18)"' in text
    assert '[style=dashed, label="next"]' in text
    filled = re.findall(r'label="([^"]*)\\nline \d+", shape=box, style=filled', text)
    assert "t1 = range(n)" not in filled and "t2 = np.sin(x)" in filled


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz is not installed")
def test_graph_renders_with_graphviz():
    for fn in (cases.seed_example, cases.looped, cases.tanh_layer):
        subprocess.run(["dot", "-Tsvg"], input=tg.graph(fn), text=True, check=True, capture_output=True)


# --- highlighted source -----------------------------------------------------------------------------

def test_source_is_a_str_that_renders_highlighted_html():
    text = tg.source(cases.tanh_layer, wrt=("W", "b"))
    assert isinstance(text, str) and isinstance(text, SourceText)
    page = text._repr_html_()
    assert page.startswith("<pre") and '<span style="color:' in page
    assert html.unescape(re.sub(r"<[^>]+>", "", page)) == text  # markup only, not a character changed


def test_ansi_highlighting_changes_no_character():
    text = tg.source(cases.looped, kind="vjp")
    coloured = highlight.ansi(text)
    assert "\x1b[1;34mdef\x1b[0m" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == text
    assert "".join(piece for piece, _ in highlight.spans(text)) == text


def test_highlighting_text_that_does_not_tokenize_returns_it_plain():
    assert highlight.spans("def f(:\n    '''") == [("def f(:\n    '''", None)]


def test_trace_shows_tape_pushes_and_pops_of_array_assignment():
    a, v = np.arange(12.0).reshape(3, 4) / 7, np.array([0.3, -0.2, 0.9, 0.1])
    t = tg.trace(cases.assigns_rows, a, v)
    operations = [row[2] for row in t.forward]
    assert operations.index("tape.append(saved_region(b, 1))") + 1 == operations.index("b[1] = t1")
    assert any(row[2] == "b[1] = tape.pop()" for row in t.backward)
    for position, (_, gradient) in enumerate(t.gradients):
        np.testing.assert_allclose(gradient, numeric_vjp(cases.assigns_rows, (a, v), position, 1.0), rtol=1e-6)


def test_trace_of_a_pytree_argument_and_long_cells():
    rng = np.random.default_rng(5)
    params = {"W": rng.normal(size=(3, 2)), "A": np.eye(2) * 2.0}
    x = rng.normal(size=(4, 3))
    t = tg.trace(cases.params_loss, params, x, wrt="params")
    (name, gradient), = t.gradients
    assert name == "params" and set(gradient) == {"W", "A"}
    np.testing.assert_allclose(gradient["W"], numeric_vjp(lambda W: cases.params_loss({**params, "W": W}, x),
                                                          (params["W"],), 0, 1.0), rtol=1e-6)
    assert max(len(line) for line in str(t).splitlines()) < 400  # long cells are cut in the text table

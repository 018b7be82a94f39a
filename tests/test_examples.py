"""Every examples/*.py runs (in its own process, as a user would run it) and prints what it promises."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))

# A line each example must print; examples not listed must at least run.
KEY_LINES = {
    "quickstart.py": "Checked against central finite differences",
    "how_it_works.py": "gradients: d/dx1 = 2.462, d/dx2 = 0.8415",
    "logistic_regression.py": "loss fell from",
    "mlp_sgd.py": "gradient checked against central finite differences: ok",
    "straight_through.py": "final rounded weights [ 2. -1.  3.]",
}


def run_example(path, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TAPEGEN_EXAMPLES_OUT": str(tmp_path), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)


_RUNS: dict = {}


def run_once(path, tmp_path_factory):
    """Each example runs once per test session; tests that read its output share the run."""
    if path not in _RUNS:
        directory = tmp_path_factory.mktemp(path.stem)
        _RUNS[path] = (run_example(path, directory), directory)
    return _RUNS[path]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, tmp_path_factory):
    result, directory = run_once(path, tmp_path_factory)
    assert result.returncode == 0, result.stderr
    assert KEY_LINES.get(path.name, "") in result.stdout
    assert sorted(os.listdir(directory)) in ([], [f"{path.stem}.png"])  # writes nothing but its plot


@pytest.mark.parametrize("name, pattern", [
    ("logistic_regression.py", r"^step +\d+ +loss (\S+)$"),
    ("mlp_sgd.py", r"^epoch +\d+ +loss (\S+)$"),
    ("straight_through.py", r"^step +\d+ +loss (\S+) "),
])
def test_training_loss_falls(name, pattern, tmp_path_factory):
    result, _ = run_once(ROOT / "examples" / name, tmp_path_factory)
    losses = [float(v) for v in re.findall(pattern, result.stdout, re.M)]
    assert len(losses) >= 4, result.stdout
    assert all(later <= earlier for earlier, later in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.6 * losses[0]


def test_how_it_works_is_short_and_prints_every_stage(tmp_path_factory):
    path = ROOT / "examples" / "how_it_works.py"
    assert len(path.read_text().splitlines()) < 100
    out = run_once(path, tmp_path_factory)[0].stdout
    stages = re.findall(r"^=== (\d)\. ", out, re.M)
    assert stages == [str(i) for i in range(1, 8)]


def test_tutorial_code_blocks_run_in_order(tmp_path):
    """docs/tutorial.md's ```python blocks are one script (tapegen reads function source, so a real file)."""
    text = (ROOT / "docs" / "tutorial.md").read_text()
    script = tmp_path / "tutorial.py"
    script.write_text("\n\n".join(re.findall(r"```python\n(.*?)```", text, re.S)))
    result = run_example(script, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "(2.4623779024123156, 0.8414709848078965)" in result.stdout
    assert "gradients: d/dx1 = 2.462, d/dx2 = 0.8415" in result.stdout


@pytest.mark.parametrize("page", ["tutorial.md", "syntax.md", "how_it_works.md", "faq.md", "rules.md"])
def test_docs_links_point_at_files_that_exist(page):
    text = (ROOT / "docs" / page).read_text()
    for target in re.findall(r"\]\(([^)#]+\.md)(?:#[^)]*)?\)", text):
        assert (ROOT / "docs" / target).exists(), f"{page} links to missing {target}"
    for example in re.findall(r"examples/(\w+\.py)", text):
        assert (ROOT / "examples" / example).exists(), f"{page} mentions missing examples/{example}"


def test_how_it_works_page_shows_actual_output(tmp_path):
    """The Wengert list and the forward table on docs/how_it_works.md are what tapegen prints today."""
    page = (ROOT / "docs" / "how_it_works.md").read_text()
    model = tmp_path / "model.py"
    model.write_text("import numpy as np\n\n\ndef f(x1, x2):\n    return (x1 + x2) * np.sin(x1)\n")
    script = tmp_path / "show.py"
    script.write_text("import tapegen as tg, model\nprint(tg.wengert(model.f))\nprint(tg.trace(model.f, 1.0, 2.0))\n")
    out = run_example(script, tmp_path).stdout
    wengert = out[:out.index("trace of")]
    assert wengert.strip() in page
    forward = out[out.index("forward pass"):out.index("backward pass")].strip()
    assert forward in page
    assert "gradients: d/dx1 = 2.462, d/dx2 = 0.8415" in page

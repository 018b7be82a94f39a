"""SciPy is optional: `import tapegen` does not import it; its rule tables load when user code uses it."""
import subprocess
import sys

import pytest


def run(code, tmp_path):
    script = tmp_path / "script.py"  # a file: tapegen reads the differentiated lambda's source
    script.write_text(code)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.slow
def test_import_tapegen_does_not_import_scipy(tmp_path):
    code = ("import sys, numpy as np, tapegen as tg\n"
            "tg.grad(lambda x: np.sum(np.tanh(x)))(np.ones(3))\n"
            "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith('scipy.')))")
    assert run(code, tmp_path) == "[]"


@pytest.mark.slow
def test_scipy_tables_load_when_a_function_meets_scipy(tmp_path):
    code = ("import sys, numpy as np, tapegen as tg\n"
            "from tapegen import rules\n"
            "before = [t.name for t in rules.TABLES]\n"
            "import scipy.special\n"
            "print(tg.grad(lambda x: scipy.special.gammaln(x))(2.5))\n"
            "print('scipy.special' in [t.name for t in rules.TABLES], 'scipy.special' in before, "
            "'scipy.stats' in sys.modules)")
    out = run(code, tmp_path).splitlines()
    assert float(out[0]) == pytest.approx(0.7031566406452432)
    assert out[1] == "True False False"


@pytest.mark.slow
def test_scipy_spatial_table_loads_when_a_function_calls_cdist(tmp_path):
    code = ("import numpy as np, tapegen as tg\n"
            "from tapegen import rules\n"
            "from scipy.spatial.distance import cdist\n"
            "x = np.array([[0.0, 1.0], [2.0, 0.5], [1.0, -1.0]])\n"
            "print(tg.grad(lambda x: np.sum(cdist(x, x)))(x)[0, 0])\n"
            "print('scipy.spatial' in [t.name for t in rules.TABLES])")
    out = run(code, tmp_path).splitlines()
    x = [[0.0, 1.0], [2.0, 0.5], [1.0, -1.0]]
    expected = 2 * sum((x[0][0] - b[0]) / ((x[0][0] - b[0]) ** 2 + (x[0][1] - b[1]) ** 2) ** 0.5 for b in x[1:])
    assert float(out[0]) == pytest.approx(expected)
    assert out[1] == "True"

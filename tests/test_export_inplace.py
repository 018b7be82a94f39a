"""`export FILE.py:FUNCTION --inplace` and `export --check FILE.py`: a gradient written into the user's
own module, every other byte unchanged; and a check that it is still what tapegen would write."""
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapegen as tg
from conftest import numeric_vjp
from tapegen.tools import cli

ROOT = pathlib.Path(__file__).parent.parent

MODEL = '''\
"""A model, formatted by hand."""
import numpy as np   # the usual alias

SCALE = 2.0
shape = (3,)  # a global named like a tapegen helper ( `shape` ), which the gradient must not disturb


def helper(z):
    return np.tanh(z)


def loss(W, b, x, y):
    # the layer
    h = helper( x @ W + b )   # odd spacing, kept
    return np.mean((h - y) ** 2) * SCALE
    # an indented comment after the body

# a comment about other
def other(x): return x+1   ;   y = 2


class Model:
    """A class, untouched."""
    def forward(self, x):
        def inner(z):
            return z * 2
        return inner(x)
'''


@pytest.fixture
def model(tmp_path):
    path = tmp_path / f"model_{tmp_path.name.replace('-', '_')}.py"
    path.write_bytes(MODEL.encode())
    return path


def export(*args):
    return cli.main(["export", *map(str, args)])


def without_block(text, name):
    """`text` with the gradient block of `name` taken out (the two blank lines before it included)."""
    pattern = re.compile(r"\r?\n\r?\n# tapegen: gradient of " + name + r",.*?\n" + name + r"_grad = _tapegen_" + name +
                         r"_grad\(\)(\r?\n)", re.S)
    assert len(pattern.findall(text)) == 1, text
    return pattern.sub("", text)


def load(path):
    name = f"inplace_{abs(hash((str(path), path.read_bytes())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def args(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))


def test_insertion_changes_no_byte_outside_its_block(model, capsys):
    assert export(f"{model}:loss", "--inplace", "--wrt", "W,b") == 0
    assert "inserted loss_grad beside loss" in capsys.readouterr().err
    text = model.read_bytes().decode()
    assert without_block(text, "loss") == MODEL
    # right after the function (and its indented trailing comment), before the comment about other()
    assert text.index("# an indented comment after the body") < text.index("# tapegen: gradient of loss") \
        < text.index("# a comment about other")
    assert "# tapegen: fingerprint " in text and "wrt W,b" in text
    assert not [line for line in text.splitlines() if line != line.rstrip()]  # no trailing whitespace added


def test_inserted_gradient_matches_tapegen_grad_and_finite_differences(model):
    assert export(f"{model}:loss", "--inplace", "--wrt", "W,b") == 0
    module = load(model)
    a = args()
    value, (dW, db) = module.loss_grad(*a)
    assert value == module.loss(*a)
    expected = tg.grad(module.loss, wrt=("W", "b"))(*a)
    np.testing.assert_array_equal(dW, expected[0])
    np.testing.assert_array_equal(db, expected[1])
    np.testing.assert_allclose(dW, numeric_vjp(module.loss, a, 0, 1.0), rtol=1e-6)
    np.testing.assert_allclose(db, numeric_vjp(module.loss, a, 1, 1.0), rtol=1e-6)
    # the module's own names are untouched, and the gradient reads its globals live
    assert module.shape == (3,) and module.other(1) == 2
    module.SCALE = 3.0
    np.testing.assert_allclose(module.loss_grad(*a)[1][0], 1.5 * dW, rtol=1e-12)
    assert module.loss_grad.__qualname__ == "loss_grad"


def test_running_it_twice_gives_the_same_bytes(model, capsys):
    assert export(f"{model}:loss", "--inplace", "--wrt", "W,b") == 0
    once = model.read_bytes()
    assert export(f"{model}:loss", "--inplace") == 0  # no --wrt: the block's own
    assert "already current: loss_grad" in capsys.readouterr().err
    assert model.read_bytes() == once
    assert export(f"{model}:loss", "--inplace", "--wrt", "W,b") == 0
    assert model.read_bytes() == once


def test_an_update_replaces_the_block(model, capsys):
    assert export(f"{model}:loss", "--inplace", "--wrt", "W,b") == 0
    edited = model.read_text().replace("* SCALE\n", "* SCALE + np.sum(W ** 2)\n", 1)
    model.write_text(edited)
    assert export(f"{model}:loss", "--inplace") == 0
    assert "updated loss_grad beside loss (loss changed since loss_grad was generated" in capsys.readouterr().err
    text = model.read_text()
    assert text.count("# tapegen: gradient of loss") == 1 and text.count("def _tapegen_loss_grad") == 1
    assert without_block(text, "loss") == MODEL.replace("* SCALE\n", "* SCALE + np.sum(W ** 2)\n", 1)
    module = load(model)
    a = args(1)
    np.testing.assert_array_equal(module.loss_grad(*a)[1][0], tg.grad(module.loss, wrt=("W", "b"))(*a)[0])
    # a new wrt replaces it too
    assert export(f"{model}:loss", "--inplace", "--wrt", "x") == 0
    assert "(loss_grad was with respect to W,b, and is now with respect to x)" in capsys.readouterr().err
    text = model.read_text()
    assert text.count("# tapegen: gradient of loss") == 1 and "--wrt x --inplace" in text
    module = load(model)
    np.testing.assert_array_equal(module.loss_grad(*a)[1], tg.grad(module.loss, wrt="x")(*a))


def test_check_exit_codes_and_diff(model, capsys, monkeypatch):
    assert export("--check", model) == 0  # no gradient block: nothing to check
    assert export(f"{model}:loss", "--inplace", "--wrt", "W,b") == 0
    capsys.readouterr()
    assert export("--check", model) == 0
    assert capsys.readouterr().out == ""
    current = model.read_text()
    model.write_text(current.replace("* SCALE\n", "* SCALE * 0.5\n", 1))
    before = model.read_bytes()
    assert export("--check", model) == 1
    out, err = capsys.readouterr()
    assert model.read_bytes() == before  # --check writes nothing
    assert f"{model}: loss_grad is out of date: loss changed since loss_grad was generated from it" in err
    assert out.startswith(f"--- {model}\n+++ {model} (as export --inplace writes it)\n@@ ")
    assert "\n-# tapegen: fingerprint " in out and "\n+# tapegen: fingerprint " in out
    assert "\n+        # loss()   return np.mean((h - y) ** 2) * SCALE * 0.5\n" in out
    assert export(f"{model}:loss", "--inplace") == 0
    assert export("--check", model) == 0
    # a new tapegen version makes it out of date too, and says so
    monkeypatch.setattr("tapegen._version.__version__", "9.9.9")
    capsys.readouterr()
    assert export("--check", model) == 1
    out, err = capsys.readouterr()
    assert "loss_grad was generated by tapegen 0.1.0; this is tapegen 9.9.9" in err
    assert "+# tapegen: fingerprint" in out and "tapegen 9.9.9" in out


def test_check_fails_when_the_function_of_a_block_is_gone(model, capsys):
    assert export(f"{model}:loss", "--inplace", "--wrt", "W,b") == 0
    text = model.read_text()
    model.write_text(text.replace("def loss(W, b, x, y):", "def renamed(W, b, x, y):"))
    assert export("--check", model) == 1
    assert "loss_grad is out of date: " in (err := capsys.readouterr().err)
    assert "has no top-level function 'loss': delete its gradient block" in err


def test_a_function_the_function_calls_is_part_of_what_check_compares(model, capsys):
    assert export(f"{model}:loss", "--inplace", "--wrt", "W,b") == 0
    model.write_text(model.read_text().replace("return np.tanh(z)", "return np.sin(z)"))
    assert export("--check", model) == 1
    assert "differs from what tapegen generates for loss" in capsys.readouterr().err


def test_line_numbers_elsewhere_do_not_make_a_gradient_out_of_date(model):
    assert export(f"{model}:loss", "--inplace", "--wrt", "W,b") == 0
    assert export(f"{model}:helper", "--inplace") == 0  # above loss: moves loss's lines
    assert export("--check", model) == 0
    model.write_text("# a new first line\n\n" + model.read_text())
    assert export("--check", model) == 0
    text = model.read_text()
    assert "# loss()   h = helper( x @ W + b )   # odd spacing, kept" in text
    module = load(model)
    np.testing.assert_allclose(module.helper_grad(0.3)[1], 1 - np.tanh(0.3) ** 2)


@pytest.mark.parametrize("target, message", [
    ("forward", "forward is defined inside class Model, not at the top level"),
    ("inner", "inner is defined inside forward(), not at the top level"),
    ("Model.forward", "--inplace writes gradients beside top-level functions, and Model.forward is a method"),
    ("missing", "has no top-level function 'missing'"),
])
def test_refuses_a_function_that_is_not_at_the_top_level(model, capsys, target, message):
    assert export(f"{model}:{target}", "--inplace") == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert model.read_text() == MODEL


def test_refuses_to_overwrite_a_name_of_the_users(model, capsys):
    model.write_text(MODEL + "\n\ndef loss_grad():\n    pass\n")
    assert export(f"{model}:loss", "--inplace") == 2
    assert "the module already defines loss_grad" in capsys.readouterr().err
    assert export(f"{model}:loss", "--inplace", "-o", "out.py") == 2
    assert "-o does not go with --inplace" in capsys.readouterr().err


def test_a_file_with_crlf_tabs_no_alias_and_a_global_named_seed(tmp_path):
    path = tmp_path / "crlf_tabs.py"
    source = ("import numpy\r\nseed = 3.0\r\nWEIGHTS = numpy.array([1.0, 2.0, 3.0])\r\n\r\n"
              "@numpy.vectorize\r\ndef unrelated(x):\r\n\treturn x\r\n\r\n"
              "def f(x):\r\n\tif numpy.sum(x) > 0:  # a branch\r\n"
              "\t\treturn numpy.sum(numpy.sin(x) * seed * WEIGHTS)\r\n\treturn numpy.sum(x)\r\n")
    path.write_bytes(source.encode())
    assert export(f"{path}:f", "--inplace") == 0
    text = path.read_bytes().decode()
    assert without_block(text, "f") == source
    block = text[len(source):]  # f is the last statement: the block is appended
    assert "\n" not in block.replace("\r\n", "")  # the block uses the file's line endings
    assert "\n\tdef f_grad(x):" in text  # and its indentation
    module = load(path)
    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_array_equal(module.f_grad(x)[1], tg.grad(module.f)(x))
    np.testing.assert_allclose(module.f_grad(x)[1], numeric_vjp(module.f, (x,), 0, 1.0), rtol=1e-7)


def test_a_decorated_function_keeps_its_decorators_wrt(tmp_path):
    path = tmp_path / "decorated.py"
    path.write_text(textwrap.dedent("""\
        import numpy as np
        import tapegen as tg


        @tg.differentiate(wrt=("W", "b"))
        def layer(W, b, x):
            return np.sum(np.tanh(x @ W + b))
        """))
    assert export(f"{path}:layer", "--inplace") == 0
    assert "--wrt W,b --inplace" in path.read_text()
    module = load(path)
    W, b, x = args()[:3]
    value, (dW, db) = module.layer_grad(W, b, x)
    expected = module.layer.grad(W, b, x)
    np.testing.assert_array_equal(dW, expected[0])
    np.testing.assert_array_equal(db, expected[1])


def test_importing_tapegen_and_taking_a_gradient_does_not_import_libcst(model):
    code = ("import sys, numpy as np, tapegen as tg\n"
            f"sys.path.insert(0, {str(model.parent)!r})\n"
            f"from {model.stem} import helper\n"
            "assert abs(tg.grad(helper)(0.3) - (1 - np.tanh(0.3) ** 2)) < 1e-12\n"
            "from tapegen.tools import cli\n"
            f"cli.main(['export', {str(model)!r} + ':loss'])\n"
            "print('libcst' in sys.modules, any(m.startswith('libcst.') for m in sys.modules), file=sys.stderr)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "False False"
    assert "def loss_grad(W, b, x, y):" in result.stdout  # plain export printed, without libcst


def test_invalid_python_is_refused_with_its_line(tmp_path, capsys):
    path = tmp_path / "broken.py"
    path.write_text("def f(x):\n    return x +\n")
    assert export(f"{path}:f", "--inplace") == 2
    assert f"{path}:2:" in (err := capsys.readouterr().err) and "invalid Python" in err
    assert path.read_text() == "def f(x):\n    return x +\n"


def test_the_gradient_takes_the_functions_defaults_and_keyword_only_parameters(tmp_path):
    path = tmp_path / "defaults.py"
    path.write_text(textwrap.dedent("""\
        import numpy as np

        REG = 0.1


        def ridge(w: np.ndarray, X, y, reg=REG, *, scale: float = 2.0,
                  shape=(3,)):  # a parameter named like a tapegen helper
            return scale * np.sum((X @ w - y) ** 2) + reg * np.sum(w ** 2) + 0 * np.sum(shape)
        """))
    assert export(f"{path}:ridge", "--inplace") == 0
    text = path.read_text()
    assert "    def ridge_grad(w, X, y, reg=REG, *, scale = 2.0,\n" in text  # as written, without annotations
    module = load(path)
    rng = np.random.default_rng(2)
    w, X, y = rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=5)
    np.testing.assert_array_equal(module.ridge_grad(w, X, y)[1], tg.grad(module.ridge)(w, X, y))
    np.testing.assert_array_equal(module.ridge_grad(w, X, y, 0.5, scale=1.0)[1],
                                  tg.grad(module.ridge)(w, X, y, 0.5, scale=1.0))


def test_a_module_scipy_helpers_need_is_imported_in_the_block(tmp_path):
    pytest.importorskip("scipy")
    path = tmp_path / "uses_scipy.py"
    path.write_text("import numpy as np\nfrom scipy.special import logsumexp\n\n\n"
                    "def f(x):\n    return logsumexp(x) + np.sum(x ** 2)\n")
    assert export(f"{path}:f", "--inplace") == 0
    module = load(path)
    x = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(module.f_grad(x)[1], tg.grad(module.f)(x), rtol=1e-15)
    np.testing.assert_allclose(module.f_grad(x)[1], numeric_vjp(module.f, (x,), 0, 1.0), rtol=1e-7)

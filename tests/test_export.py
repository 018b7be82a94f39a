"""Standalone export: the module runs where tapegen cannot be imported, and its gradients are right."""
import ast
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapegen as tg
from cases import inspection_functions as cases
from conftest import numeric_vjp
from tapegen.export import export

# Runs in a fresh interpreter: `import tapegen` fails (a meta path blocker), the exported module is
# imported from argv[1], and its value_and_grad is evaluated at the arrays saved in argv[2].
RUNNER = textwrap.dedent("""
    import pickle, sys
    class NoTapegen:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "tapegen":
                raise ImportError("tapegen is blocked in this process")
    sys.meta_path.insert(0, NoTapegen())
    sys.path.insert(0, sys.argv[1])
    import exported
    with open(sys.argv[2], "rb") as f:
        args = pickle.load(f)
    value, gradient = exported.value_and_grad(*args)
    assert "tapegen" not in sys.modules
    try:
        import tapegen
    except ImportError:
        pass
    else:
        raise SystemExit("tapegen was importable")
    with open(sys.argv[2], "wb") as f:
        pickle.dump((value, gradient, sorted(m for m in sys.modules if m.split(".")[0] == "tapegen")), f)
""")


def run_without_tapegen(tmp_path, text, args):
    import pickle
    (tmp_path / "exported.py").write_text(text)
    data = tmp_path / "args.pkl"
    data.write_bytes(pickle.dumps(args))
    # -I: isolated mode, so PYTHONPATH (which points at this checkout) is ignored
    result = subprocess.run([sys.executable, "-I", "-c", RUNNER, str(tmp_path), str(data)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    value, gradient, loaded = pickle.loads(data.read_bytes())
    assert loaded == []
    return value, gradient


def test_exported_module_runs_without_tapegen_and_matches_finite_differences(tmp_path):
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(4, 3)), rng.normal(size=(4, 2)))
    value, (dW, db) = run_without_tapegen(tmp_path, export(cases.tanh_layer, wrt=("W", "b")), args)
    assert value == pytest.approx(cases.tanh_layer(*args), rel=1e-15)
    np.testing.assert_allclose(dW, numeric_vjp(cases.tanh_layer, args, 0, 1.0), rtol=1e-6)
    np.testing.assert_allclose(db, numeric_vjp(cases.tanh_layer, args, 1, 1.0), rtol=1e-6)


def test_exported_loop_and_pytree_run_without_tapegen(tmp_path):
    x = np.array([0.5, 1.0, -0.3])
    value, gradient = run_without_tapegen(tmp_path, export(cases.looped), (x, 3))
    np.testing.assert_allclose(gradient, numeric_vjp(lambda x: cases.looped(x, 3), (x,), 0, 1.0), rtol=1e-7)
    rng = np.random.default_rng(1)
    params = {"W": rng.normal(size=(3, 2)), "A": np.eye(2) * 2.0 + 0.1 * rng.normal(size=(2, 2))}
    x = rng.normal(size=(4, 3))
    value, gradient = run_without_tapegen(tmp_path, export(cases.params_loss), (params, x))
    assert set(gradient) == {"W", "A"}
    for key in params:
        def along(p, key=key):
            return cases.params_loss({**params, key: p}, x)
        np.testing.assert_allclose(gradient[key], numeric_vjp(along, (params[key],), 0, 1.0), rtol=1e-6)


@pytest.mark.parametrize("fn, args, wrt", [
    (cases.seed_example, (1.0, 2.0), (0, 1)),
    (cases.reads_global_array, (np.array([0.1, 0.2, 0.3]),), 0),
    (cases.reads_global_list, (np.array([0.1, 0.2, 0.3]),), 0),
    (cases.assigns_rows, (np.arange(12.0).reshape(3, 4) / 7, np.array([0.3, -0.2, 0.9, 0.1])), (0, 1)),
], ids=["seed_example", "global-array", "global-list", "array-assignment-and-sort"])
def test_exported_module_needs_nothing_but_its_own_text(fn, args, wrt):
    """Executed in an empty namespace, so a helper missing from the text would be a NameError."""
    namespace = {}
    exec(compile(export(fn, wrt=wrt), "<exported>", "exec"), namespace)
    value, gradient = namespace["value_and_grad"](*args)
    expected_value, expected = tg.value_and_grad(fn, wrt=wrt)(*args)
    assert value == expected_value
    for got, want in zip(gradient if isinstance(wrt, tuple) else (gradient,),
                         expected if isinstance(wrt, tuple) else (expected,)):
        np.testing.assert_array_equal(got, want)
    assert namespace["grad"](*args) is not None


def test_header_says_what_it_was_generated_from_and_imports_only_numpy():
    text = export(cases.tanh_layer, wrt=("W", "b"))
    module = ast.parse(text)
    doc = ast.get_docstring(module)
    assert doc.startswith("Value and gradient of tanh_layer() from inspection_functions.py:9, with respect to W, b.")
    assert f"tapegen {tg.__version__}" in doc
    imports = [alias.name for node in ast.walk(module) if isinstance(node, (ast.Import, ast.ImportFrom))
               for alias in node.names]
    assert imports == ["numpy"]
    assert "#     def tanh_layer(W, b, x, y):" in text  # the source it came from, quoted
    assert "def unbroadcast(g, to_shape):" in text and "@table" not in text  # helpers copied, decorators not


def test_export_is_deterministic():
    assert export(cases.params_loss) == export(cases.params_loss)
    wrt_text = export(cases.tanh_layer, wrt="b")
    assert "def tanh_layer_grad(W, b, x, y):" in wrt_text and "with respect to b." in wrt_text


def test_a_value_that_cannot_be_written_into_a_module_is_an_error():
    with pytest.raises(tg.TapegenError, match="cannot export: the gradient code reads 'RNG'") as info:
        export(cases.reads_generator)
    assert "pass it to the function as an argument" in str(info.value)


def test_export_cli_writes_a_file(tmp_path):
    out = tmp_path / "tanh_grad.py"
    tests = pathlib.Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": str(tests.parent)}
    result = subprocess.run([sys.executable, "-m", "tapegen", "export", f"{tests / 'cases' / 'inspection_functions.py'}"
                             ":tanh_layer", "--wrt", "W,b", "-o", str(out)], capture_output=True, text=True, timeout=60,
                            env=env)
    assert result.returncode == 0, result.stderr
    assert out.read_text() == export(cases.tanh_layer, wrt=("W", "b"))
    assert f"wrote {out}" in result.stderr


def test_export_after_a_pytree_was_registered():
    """tapegen.register_pytree's registry holds this process's classes: the module gets it empty."""
    from tapegen.runtime import _PYTREES

    class Registered:
        pass
    tg.register_pytree(Registered)
    try:
        text = export(cases.tanh_layer, wrt=("W", "b"))
    finally:
        _PYTREES.pop(Registered)
    assert "\n_PYTREES = {}\n" in text

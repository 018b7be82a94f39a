"""The on-disk cache of generated code (tapegen/cache.py), across processes.

Each check runs fresh Python processes on a small module written to a temporary
directory: the first fills the cache, the next one must either use it (and not
lower the function at all) or, when anything that decides the code changed,
not use it. Gradients are checked against central differences every time.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapegen as tg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODEL = '''
import os
import numpy as np

ACTIVATION = np.tanh if os.environ.get("MODEL_ACTIVATION") == "tanh" else np.sin


def f(x):
    h = ACTIVATION(x) * x
    return np.sum(h * h)
'''

# A child process counting how often it lowers a function (0: its code came from the disk cache).
COUNTING = '''
import json, sys
import numpy as np
import tapegen as tg
from tapegen import pipeline

lowerings = []
lowered = pipeline.lowered
def counting(*args, **kwargs):
    lowerings.append(1)
    return lowered(*args, **kwargs)
pipeline.lowered = counting

sys.path.insert(0, sys.argv[1])
'''

CHILD = COUNTING + '''import model
x = np.linspace(0.1, 0.9, 5)
first = tg.grad(model.f)(x)
second = tg.grad(model.f)(x)  # the specialized code
print(json.dumps({"first": first.tolist(), "second": second.tolist(), "lowered": len(lowerings),
                  "location": tg.cache.location()}))
'''


def run(directory, cache, **env):
    # Without TAPEGEN_CHECK_SPECIALIZED (which the suite sets): that self-check reads the IR, lowering again.
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("TAPEGEN_CACHE_DIR", "MODEL_ACTIVATION", "TAPEGEN_CHECK_SPECIALIZED")}
    environment["PYTHONPATH"] = ROOT
    if cache is not None:
        environment["TAPEGEN_CACHE_DIR"] = str(cache)
    environment.update(env)
    done = subprocess.run([sys.executable, "-c", CHILD, str(directory)], capture_output=True, text=True,
                          env=environment, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def central_differences(path, x, eps=1e-6, **env):
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        spec = importlib.util.spec_from_file_location(f"model_{abs(hash((str(path), tuple(env.items()))))}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    grad = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (module.f(x + step) - module.f(x - step)) / (2 * eps)
    return grad


def check(result, path, **env):
    expected = central_differences(path, np.linspace(0.1, 0.9, 5), **env)
    np.testing.assert_allclose(result["first"], expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(result["second"], expected, rtol=1e-6, atol=1e-9)


@pytest.fixture
def model(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    path = source / "model.py"
    path.write_text(MODEL)
    return source, path, tmp_path / "cache"


def entries(cache):
    return sorted(p for p in cache.iterdir() if p.suffix == ".tapegen") if cache.exists() else []


def test_a_second_process_uses_the_cache(model):
    source, path, cache = model
    first = run(source, cache)
    assert first["lowered"] > 0 and first["location"] == str(cache)
    written = entries(cache)
    assert written, "the first process wrote no entries"
    assert not [p for p in cache.iterdir() if p.name.startswith(".writing-")], "a temporary file was left behind"
    second = run(source, cache)
    assert second["lowered"] == 0, "the second process lowered the function instead of reading the cache"
    assert second["first"] == first["first"] and second["second"] == first["second"]
    check(second, path)
    assert entries(cache) == written


def test_a_changed_source_is_not_served_from_the_cache(model):
    source, path, cache = model
    run(source, cache)
    path.write_text(MODEL.replace("return np.sum(h * h)", "return np.sum(h * h * h)"))
    changed = run(source, cache)
    assert changed["lowered"] > 0
    check(changed, path)


def test_a_changed_global_is_not_served_from_the_cache(model):
    source, path, cache = model
    run(source, cache)
    other = run(source, cache, MODEL_ACTIVATION="tanh")  # same source, another function bound to ACTIVATION
    assert other["lowered"] > 0
    check(other, path, MODEL_ACTIVATION="tanh")
    again = run(source, cache, MODEL_ACTIVATION="tanh")
    assert again["lowered"] == 0
    check(again, path, MODEL_ACTIVATION="tanh")


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_damaged_entry_is_ignored_and_rewritten(model, damage):
    source, path, cache = model
    run(source, cache)
    for entry in entries(cache):
        data = entry.read_bytes()
        entry.write_bytes({"garbage": b"\x00not an entry\xff" * 7, "truncated": data[:len(data) // 2],
                           "empty": b""}[damage])
    damaged = run(source, cache)
    assert damaged["lowered"] > 0
    check(damaged, path)
    assert run(source, cache)["lowered"] == 0  # the damaged entries were replaced


def test_no_cache_unless_asked(model):
    source, path, cache = model
    result = run(source, None)
    assert result["location"] is None and not cache.exists()
    check(result, path)


def test_an_unwritable_cache_directory_is_not_an_error(model):
    source, path, cache = model
    cache.write_text("a file where the directory should be")
    check(run(source, cache), path)


SETTINGS = """
import sys
import numpy as np
import tapegen as tg
directory, source = sys.argv[1], sys.argv[2]
assert tg.cache.location() is None
assert tg.cache.enable(directory) == directory and tg.cache.location() == directory
sys.path.insert(0, source)
import model
tg.grad(model.f)(np.linspace(0.1, 0.9, 5))
import os
written = [n for n in os.listdir(directory) if n.endswith(".tapegen")]
assert written
assert tg.cache.clear() == len(written)
assert not [n for n in os.listdir(directory) if n.endswith(".tapegen")]
tg.cache.disable()
assert tg.cache.location() is None
print("ok")
"""


def test_enable_clear_and_disable(model):
    # In a fresh process: the rules other tests register are part of every key (and some cannot be written down).
    source, path, cache = model
    environment = {k: v for k, v in os.environ.items() if k != "TAPEGEN_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-c", SETTINGS, str(cache), str(source)], capture_output=True, text=True,
                          env={**environment, "PYTHONPATH": ROOT}, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_a_function_with_an_undescribable_global_is_not_cached(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    path = source / "model.py"
    path.write_text(MODEL + textwrap.dedent('''
        class Settings:
            scale = 2.0

        SETTINGS = Settings()


        def f(x):
            return np.sum(np.sin(x) * x) * SETTINGS.scale
        '''))
    cache = tmp_path / "cache"
    first = run(source, cache)
    check(first, path)
    second = run(source, cache)
    assert second["lowered"] > 0
    check(second, path)


TWO_LAMBDAS = """
import numpy as np

pair = (lambda x: np.sum(np.sin(x) ** 2)), (lambda x: np.sum(np.cos(x) ** 2))
"""

CHILD_LAMBDAS = """
import json, sys
import numpy as np
import tapegen as tg
sys.path.insert(0, sys.argv[1])
import lambdas
x = np.linspace(0.1, 0.9, 5)
print(json.dumps([tg.grad(f)(x).tolist() for f in lambdas.pair[::int(sys.argv[2])]]))
"""


@pytest.mark.parametrize("order", [1, -1])
def test_two_lambdas_on_one_line_get_their_own_entries(tmp_path, order):
    (tmp_path / "lambdas.py").write_text(TWO_LAMBDAS)
    environment = {**os.environ, "PYTHONPATH": ROOT, "TAPEGEN_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):  # the second process reads what the first wrote
        done = subprocess.run([sys.executable, "-c", CHILD_LAMBDAS, str(tmp_path), str(order)], capture_output=True,
                              text=True, env=environment, timeout=120)
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout.splitlines()[-1])[::order]
        x = np.linspace(0.1, 0.9, 5)
        np.testing.assert_allclose(got[0], 2 * np.sin(x) * np.cos(x), rtol=1e-12)
        np.testing.assert_allclose(got[1], -2 * np.cos(x) * np.sin(x), rtol=1e-12)


ACTIVATIONS = """
import numpy as np


def layer(x, activation):
    return np.sum(activation(x) * x)
"""

CHILD_ACTIVATION = """
import json, sys
import numpy as np
import tapegen as tg
sys.path.insert(0, sys.argv[1])
import activations
x = np.linspace(0.1, 0.9, 5)
print(json.dumps(tg.grad(activations.layer)(x, getattr(np, sys.argv[2])).tolist()))
"""


def test_a_function_valued_argument_is_part_of_the_key(tmp_path):
    # The transform resolves calls of `activation` for the function passed: np.sin's code must not serve np.tanh.
    (tmp_path / "activations.py").write_text(ACTIVATIONS)
    environment = {**os.environ, "PYTHONPATH": ROOT, "TAPEGEN_CACHE_DIR": str(tmp_path / "cache")}
    x = np.linspace(0.1, 0.9, 5)
    expected = {"sin": np.cos(x) * x + np.sin(x), "tanh": (1 - np.tanh(x) ** 2) * x + np.tanh(x)}
    for name in ("sin", "tanh", "sin", "tanh"):
        done = subprocess.run([sys.executable, "-c", CHILD_ACTIVATION, str(tmp_path), name], capture_output=True,
                              text=True, env=environment, timeout=120)
        assert done.returncode == 0, done.stderr
        np.testing.assert_allclose(json.loads(done.stdout.splitlines()[-1]), expected[name], rtol=1e-12)


REBOUND_MODEL = '''
import numpy as np


def act(x):
    return np.sin(x)


def other(x):
    return np.cos(x) * 2.0


def f(x):
    return np.sum(act(x) * x)
'''

CHILD_REBOUND = COUNTING + '''import rebound
x = np.linspace(0.1, 0.9, 5)
df = tg.grad(rebound.f)
before = [df(x).tolist(), df(x).tolist()]
read = len(lowerings)
rebound.act = rebound.other  # a notebook redefining the helper
after = [df(x).tolist(), df(x).tolist()]
print(json.dumps({"before": before, "after": after, "lowered_before": read}))
'''


@pytest.mark.parametrize("change", ["rebound.act = rebound.other  # a notebook redefining the helper",
                                    "rebound.act.__code__ = rebound.other.__code__  # IPython's autoreload"],
                         ids=["rebound", "code-replaced"])
def test_code_read_from_the_cache_is_made_again_when_a_helper_is_rebound(tmp_path, change):
    """The disk cache keeps the module names the code was made for: code read from it in a new process is
    made again, as freshly made code is, when the notebook rebinds a helper it inlined (or autoreload gives
    the function object new code)."""
    (tmp_path / "rebound.py").write_text(REBOUND_MODEL)
    environment = {k: v for k, v in os.environ.items() if k not in ("TAPEGEN_CACHE_DIR", "TAPEGEN_CHECK_SPECIALIZED")}
    environment.update(PYTHONPATH=ROOT, TAPEGEN_CACHE_DIR=str(tmp_path / "cache"))
    results = []
    for _ in range(2):  # the first process writes the cache, the second reads it
        child = CHILD_REBOUND.replace("rebound.act = rebound.other  # a notebook redefining the helper", change)
        done = subprocess.run([sys.executable, "-c", child, str(tmp_path)], capture_output=True, text=True,
                              env=environment, timeout=120)
        assert done.returncode == 0, done.stderr
        results.append(json.loads(done.stdout.splitlines()[-1]))
    assert results[1]["lowered_before"] == 0, "the second process did not read the cache"
    x = np.linspace(0.1, 0.9, 5)
    for result in results:
        for gradient in result["before"]:
            np.testing.assert_allclose(gradient, np.cos(x) * x + np.sin(x), rtol=1e-10)
        for gradient in result["after"]:
            np.testing.assert_allclose(gradient, -2.0 * np.sin(x) * x + 2.0 * np.cos(x), rtol=1e-10)

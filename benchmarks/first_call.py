"""First use in a fresh process (issue 17): import time, the first gradient, a second function's.

Each measurement is a new Python process (median of `--rounds`): NumPy is imported
first and not counted; then the library's import, the first gradient of a 20-line
function (`model` below: everything that call costs), its second call (where tapegen
writes the code specialized to the first call's shapes), and the first gradient of a
second, one-line function. tapegen runs twice: with no disk cache, and with
`TAPEGEN_CACHE_DIR` filled by an earlier process ("warm disk cache"). autograd and
JAX (eager and jit) columns appear where they are installed.

Imports are timed from bytecode, as an installed package runs: the processes get a
private `PYTHONPYCACHEPREFIX` (and `PYTHONDONTWRITEBYTECODE` unset), filled by a first,
unmeasured process.

    python benchmarks/first_call.py [--rounds 5] [--markdown]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import common  # noqa: F401  (first: single-threaded BLAS before NumPy loads)
from common import REPO, format_table

GOALS = {"import": 0.050, "first gradient": 0.020}
METHODS = ("tapegen", "tapegen (warm disk cache)", "autograd", "jax eager", "jax jit")


def model(W1, b1, W2, b2, x, y):
    """A 20-line function: two tanh layers, a squared error, a weight penalty and some scalar arithmetic."""
    h = np.tanh(x @ W1 + b1)
    h2 = np.tanh(h @ W2 + b2)
    out = h2[:, :2]
    d = out - y
    loss = np.mean(d ** 2)
    reg = 0.01 * (np.sum(W1 ** 2) + np.sum(W2 ** 2))
    z = loss + reg
    a = np.exp(-z)
    b = np.log1p(a)
    c = b * z + np.sin(z)
    c2 = c * c
    c3 = c2 + z
    c4 = np.sqrt(c3 * c3 + 1.0)
    c5 = c4 - 1.0
    c6 = c5 * 0.5
    c7 = c6 + loss
    c8 = c7 / 2.0
    c9 = c8 * np.cos(reg)
    return c9 + reg


def second(x):
    return np.sum(np.sin(x) * x)


def measure(method: str) -> dict:
    """In this (fresh) process: seconds to import `method`'s library, the first gradient, the second's."""
    global np
    import numpy as np
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(3, 5)), rng.normal(size=5), rng.normal(size=(5, 4)), rng.normal(size=4),
            rng.normal(size=(8, 3)), rng.normal(size=(8, 2)))
    start = time.perf_counter()
    if method.startswith("tapegen"):
        import tapegen as tg
        imported = time.perf_counter()
        gradient = tg.grad(model)
        gradient(*args)
        first = time.perf_counter()
        gradient(*args)  # tapegen writes the code specialized to the first call's shapes here
        again = time.perf_counter()
        tg.grad(second)(args[0])
    else:
        import workloads
        if method == "autograd":
            import autograd
            import autograd.numpy as anp
            imported = time.perf_counter()
            gradient = autograd.grad(workloads.rebind(model, anp))
            gradient(*args)
            first = time.perf_counter()
            gradient(*args)
            again = time.perf_counter()
            autograd.grad(workloads.rebind(second, anp))(args[0])
        else:
            import jax
            jax.config.update("jax_enable_x64", True)
            imported = time.perf_counter()
            wrap = jax.jit if method == "jax jit" else (lambda f: f)
            gradient = wrap(jax.grad(workloads.rebind(model, jax.numpy)))
            jax.block_until_ready(gradient(*args))
            first = time.perf_counter()
            jax.block_until_ready(gradient(*args))
            again = time.perf_counter()
            jax.block_until_ready(wrap(jax.grad(workloads.rebind(second, jax.numpy)))(args[0]))
    done = time.perf_counter()
    return {"import": imported - start, "first gradient": first - imported, "second call": again - first,
            "second function": done - again}


def available(method: str) -> bool:
    module = {"autograd": "autograd", "jax eager": "jax", "jax jit": "jax"}.get(method)
    if module is None:
        return True
    import importlib.util
    return importlib.util.find_spec(module) is not None


def run(methods, rounds, log):
    """{method: [result dict per round]}, every round a fresh process per method."""
    scratch = tempfile.mkdtemp(prefix="tapegen-first-call-")
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "TAPEGEN_CACHE_DIR")}
    environment["PYTHONPYCACHEPREFIX"] = os.path.join(scratch, "bytecode")
    environment["PYTHONPATH"] = os.pathsep.join([REPO, os.path.dirname(os.path.abspath(__file__))])
    results = {m: [] for m in methods}

    def child(method, **extra):
        command = [sys.executable, os.path.abspath(__file__), "--measure", method]
        done = subprocess.run(command, capture_output=True, text=True, env={**environment, **extra}, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"{method} failed:\n{done.stderr[-3000:]}")
        return json.loads(done.stdout.splitlines()[-1])

    try:
        for method in methods:  # bytecode written, and the disk cache filled, by one unmeasured process each
            child(method, **_cache_env(method, scratch))
        for round_ in range(rounds):
            for method in methods:
                results[method].append(child(method, **_cache_env(method, scratch)))
            log(f"round {round_ + 1} of {rounds}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return results


def _cache_env(method, scratch):
    return {"TAPEGEN_CACHE_DIR": os.path.join(scratch, "cache")} if method == "tapegen (warm disk cache)" else {}


def rows(results):
    table = []
    for method, samples in results.items():
        row = [method]
        for column in ("import", "first gradient", "second call", "second function"):
            value = statistics.median(s[column] for s in samples)
            goal = GOALS.get(column) if method.startswith("tapegen") else None
            mark = "" if goal is None else f" (goal {goal * 1e3:.0f} ms: {'met' if value <= goal else 'not met'})"
            row.append(f"{value * 1e3:.1f} ms{mark}")
        table.append(row)
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", help="comma-separated methods (default: all that are installed)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    methods = [m for m in (args.only.split(",") if args.only else METHODS) if available(m)]
    results = run(methods, args.rounds, lambda text: print(text, file=sys.stderr))
    print(f"\nfirst use in a fresh process, median of {args.rounds} (NumPy imported first, not counted)\n")
    print(format_table(["method", "import", "first gradient (20 lines)", "its second call", "second function"],
                       rows(results),
                       args.markdown))


if __name__ == "__main__":
    main()

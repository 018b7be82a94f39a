"""Transform time against function length (issue 17): it should grow linearly.

Generates functions of 10, 100, 1,000 and 5,000 statements, straight-line and
as the body of a `for` loop, and times `tg.grad`'s transform of each (lowering,
the reverse pass, codegen and loading), its first call (plus the recording run),
and its second call (which writes the variant specialized to the first call's
shapes) in a fresh process per function, so no cache is shared.

    python benchmarks/transform_scaling.py [--sizes 10,100,1000] [--markdown]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import common  # noqa: F401  (first: single-threaded BLAS before NumPy loads)
from common import format_table

GOAL_PER_STATEMENT = 1e-3  # 1,000 statements in under 1 s, and linear
SIZES = (10, 100, 1000, 5000)

# One statement each; every third reads two earlier values, so cotangents fan in.
_STEPS = ("h = np.tanh(h) * 0.5 + x", "h = h * h - 0.25 * x", "h = np.sin(h) + h * c")


def function_text(kind: str, count: int) -> str:
    """The source of `f(x, c)` with `count` statements, straight-line or a loop body."""
    body = [_STEPS[k % len(_STEPS)] for k in range(count)]
    if kind == "straight":
        lines = ["def f(x, c):", "    h = x"] + [f"    {line}" for line in body] + ["    return np.sum(h)"]
    else:
        lines = (["def f(x, c, n):", "    h = x", "    for i in range(n):"] + [f"        {line}" for line in body]
                 + ["    return np.sum(h)"])
    return "\n".join(lines) + "\n"


def measure(kind: str, count: int) -> dict:
    """In this process: seconds to transform `f` (general code), and to write the specialized code."""
    import time

    import numpy as np

    import tapegen as tg

    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, f"scaling_{kind}_{count}.py")
        with open(path, "w") as handle:
            handle.write("import numpy as np\n\n" + function_text(kind, count))
        sys.path.insert(0, directory)
        module = __import__(f"scaling_{kind}_{count}")
        x = np.linspace(0.1, 0.5, 4)
        args = (x, 0.3) if kind == "straight" else (x, 0.3, 2)
        tg.value_and_grad(lambda v: np.sum(np.sin(v)))(x)  # lazy imports are not this benchmark's
        start = time.perf_counter()
        differentiated = tg.differentiate(module.f)
        differentiated._entry("grad", 0)  # what differentiated.grad (and tg.grad) uses: the first call reuses it
        transformed = time.perf_counter()
        differentiated.grad(*args)
        first = time.perf_counter()
        differentiated.grad(*args)  # the code specialized to the first call's shapes is written here
        second = time.perf_counter()
    return {"transform": transformed - start, "first call": first - start, "second call": second - first}


def run(kinds, sizes, timeout):
    """{(kind, count): result dict, or None on a timeout}, each measured in a fresh process."""
    results = {}
    for kind in kinds:
        for count in sizes:
            command = [sys.executable, __file__, "--measure", f"{kind}:{count}"]
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                results[kind, count] = None
                continue
            if done.returncode != 0:
                raise SystemExit(f"{kind} {count} failed:\n{done.stderr[-3000:]}")
            results[kind, count] = json.loads(done.stdout.splitlines()[-1])
            print(f"measured {kind} {count}", file=sys.stderr)
    return results


def rows(results):
    table = []
    for (kind, count), result in results.items():
        if result is None:
            table.append([kind, str(count), "timeout", "-", "-", "-", "-"])
            continue
        seconds = result["first call"]
        goal = "met" if seconds / count <= GOAL_PER_STATEMENT or seconds < 0.1 else "not met"
        table.append([kind, str(count), f"{result['transform']:.3f} s", f"{seconds:.3f} s",
                      f"{result.get('second call', float('nan')):.3f} s", f"{seconds / count * 1e3:.3f} ms",
                      f"{GOAL_PER_STATEMENT * 1e3:.0f} ms ({goal})"])
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--kinds", default="straight,loop")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        kind, count = args.measure.split(":")
        print(json.dumps(measure(kind, int(count))))
        return
    results = run(args.kinds.split(","), [int(s) for s in args.sizes.split(",")], args.timeout)
    headers = ["function", "statements", "transform", "transform + first call", "second call", "per statement",
               "goal"]
    print("\ntransform time (fresh process each; `first call` adds the recording run, `second call` writes the "
          "specialized variant and runs it)\n")
    print(format_table(headers, rows(results), args.markdown))


if __name__ == "__main__":
    main()

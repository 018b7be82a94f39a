"""Issue 7's benchmark: tapegen's value-and-gradient against a hand-written NumPy gradient.

    python benchmarks/run.py                 # the full suite (about 2 minutes with autograd and JAX)
    python benchmarks/run.py --quick         # under a minute: 5 rounds, smaller big workloads
    python benchmarks/run.py --only scalar,rnn --rounds 31 --markdown

One process times every workload with every method in interleaved rounds
(round r runs each method once, in a fresh random order), so drifts in machine
load hit all methods alike. Ratios are medians of the per-round ratios to the
hand-written gradient, with their interquartile range. First-call cost is
measured in a fresh subprocess per workload (`--first-call NAME`), so no cache
is warm. Every BLAS is pinned to one thread (see common.py). autograd and JAX
columns appear when those libraries import (`pip install ".[bench]"`).
"""
from __future__ import annotations

import common  # noqa: F401  (first: single-threaded BLAS before NumPy loads)

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import tapegen as tg  # noqa: E402
from common import bytes_text, calls_per_sample, format_table, median_iqr, peak_bytes, seconds_per_call  # noqa: E402
from workloads import SPEED, rebind  # noqa: E402

PEERS = ("autograd", "jax eager", "jax jit")


def tapegen_calls(workload, args):
    """name -> zero-argument callable for the hand-written gradient(s) and tapegen's three call layers."""
    fn, wrt = workload.fn, workload.wrt
    public = tg.value_and_grad(fn, wrt=wrt)
    method = tg.differentiate(fn).value_and_grad
    generated = running_function(public, args)
    calls = {"hand": lambda: workload.hand(*args)}
    calls.update({name: (lambda v=variant: v(*args)) for name, variant in workload.variants.items()})
    calls["tapegen"] = lambda: public(*args)
    calls["method"] = lambda: method(*args, wrt=wrt)
    calls["generated"] = lambda: generated(*args)
    return calls


def running_function(public, args):
    """The generated function `public` (a `tg.value_and_grad` function) runs for `args`.

    That is the shape-specialised variant the public path caches after its second call (the
    first records shapes, the second writes that variant) where there is one (`_fast`), else
    the generic `_entry("grad", wrt).function`.
    """
    public(*args)
    public(*args)
    fast = getattr(public, "_fast", None)
    return fast if fast is not None else tg.differentiate(public.__wrapped__)._entry("grad", public._wrt).function


def peer_calls(workload, args):
    """name -> zero-argument callable for autograd and JAX, for those that import."""
    indices = tuple(workload.fn.__code__.co_varnames.index(name) for name in workload.wrt)
    calls = {}
    try:
        import autograd
        import autograd.numpy as anp
        grad = autograd.value_and_grad(rebind(workload.fn, anp), indices)
        calls["autograd"] = lambda: grad(*args)
    except ImportError:
        pass
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        jargs = tuple(jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
        eager = jax.value_and_grad(rebind(workload.fn, jax.numpy), indices)
        jitted = jax.jit(eager)
        calls["jax eager"] = lambda: jax.block_until_ready(eager(*jargs))
        calls["jax jit"] = lambda: jax.block_until_ready(jitted(*jargs))
    except ImportError:
        pass
    return calls


def time_rounds(plans, rounds, target_seconds, log):
    """{workload: {method: [seconds per call, one per round]}}, interleaved across methods and workloads."""
    for calls in plans.values():
        for call in calls.values():
            call()  # warm up (JAX compiles here)
            call()  # tapegen writes its specialized code on a function's second call
    numbers = {name: {m: calls_per_sample(c, target_seconds) for m, c in calls.items()}
               for name, calls in plans.items()}
    times = {name: {m: [] for m in calls} for name, calls in plans.items()}
    shuffle = random.Random(0)
    for round_index in range(rounds):
        for name, calls in plans.items():
            order = list(calls)
            shuffle.shuffle(order)
            for method in order:
                times[name][method].append(seconds_per_call(calls[method], numbers[name][method]))
        log(f"round {round_index + 1}/{rounds}")
    return times


def ratio_summary(samples, method):
    """(median, IQR) of the per-round ratios of `method` to the hand-written gradient."""
    ratios = [t / h for t, h in zip(samples[method], samples["hand"])]
    return median_iqr(ratios)


def _warm_up(x):
    return np.sum(np.sin(x) * x)


def first_call(name, size, method):
    """Run in a fresh process: seconds for the first call(s) of `method` on workload `name`.

    For tapegen: "process" is the first transform + run in the process (of a
    one-line function: it pays for what tapegen imports lazily), then
    "transform" and "first" are the workload's own, as any function after the first pays.
    """
    workload = SPEED[name]
    args = workload.make(np.random.default_rng(0), size)
    workload.hand(*args)  # NumPy and BLAS warm: their first-call costs are not tapegen's
    if method == "tapegen":
        start = time.perf_counter()
        tg.value_and_grad(_warm_up)(np.ones(3))
        warm = time.perf_counter()
        entry = tg.differentiate(workload.fn)._entry("grad", workload.wrt)
        transformed = time.perf_counter()
        entry.function(*args)
        ran = time.perf_counter()
        return {"process": warm - start, "transform": transformed - warm, "first": ran - warm}
    call = peer_calls(workload, args)[method]
    start = time.perf_counter()
    call()
    return {"first": time.perf_counter() - start}


def first_calls(names, size, methods, log):
    """{workload: {method: {...}}}, each measured by `first_call` in a subprocess."""
    results = {}
    for name in names:
        results[name] = {}
        for method in methods:
            command = [sys.executable, __file__, "--first-call", name, "--size", size, "--method", method]
            done = subprocess.run(command, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                log(f"first call of {name} with {method} failed:\n{done.stderr[-2000:]}")
                continue
            results[name][method] = json.loads(done.stdout.strip().splitlines()[-1])
        log(f"first call: {name}")
    return results


def memory(plans):
    """{workload: {method: peak bytes}} by tracemalloc; JAX's XLA buffers are invisible to it, so no JAX."""
    return {name: {m: peak_bytes(call) for m, call in calls.items()
                   if m not in ("method", "generated") and not m.startswith("jax")}
            for name, calls in plans.items()}


def _cell(summary, digits=2):
    median, iqr = summary
    return f"{median:.{digits}f}x ±{iqr / 2:.{digits}f}"


def speed_rows(times, firsts, names):
    rows = []
    for name in names:
        samples = times[name]
        hand = median_iqr(samples["hand"])
        overhead = median_iqr([a - b for a, b in zip(samples["tapegen"], samples["generated"])])
        first = firsts.get(name, {}).get("tapegen")
        row = [name, common.seconds_text(hand[0]), common.seconds_text(median_iqr(samples["tapegen"])[0]),
               _cell(ratio_summary(samples, "tapegen")), _cell(ratio_summary(samples, "generated")),
               f"{overhead[0] * 1e6:.2f} µs ±{overhead[1] * 1e6 / 2:.2g}", f"{first['first'] * 1e3:.1f} ms" if first else "-"]
        for peer in PEERS:
            row.append(_cell(ratio_summary(samples, peer), 1 if peer != "jax jit" else 2) if peer in samples else "-")
        rows.append(row)
    return rows


def memory_rows(peaks, names):
    rows = []
    for name in names:
        peak = peaks[name]
        extra = [f"{m} {bytes_text(v)}" for m, v in peak.items() if m not in ("hand", "tapegen", "autograd")]
        rows.append([name, bytes_text(peak["hand"]), bytes_text(peak["tapegen"]),
                     f"{peak['tapegen'] / peak['hand']:.2f}x",
                     bytes_text(peak["autograd"]) if "autograd" in peak else "-", "; ".join(extra) or "-"])
    return rows


def report(times, firsts, peaks, names, args):
    headers = ["workload", "hand", "tapegen", "tapegen/hand", "generated/hand", "overhead", "first call"]
    headers += [f"{peer}/hand" for peer in PEERS]
    print(f"\nvalue + gradient, median of {args.rounds} interleaved rounds (ratio ± half its IQR), one thread\n")
    print(format_table(headers, speed_rows(times, firsts, names), args.markdown))
    firsts_rows = [[name, f"{r['tapegen']['process'] * 1e3:.0f} ms", f"{r['tapegen']['transform'] * 1e3:.1f} ms",
                    f"{r['tapegen']['first'] * 1e3:.1f} ms", f"{r['jax jit']['first'] * 1e3:.0f} ms" if "jax jit" in r else "-"]
                   for name, r in firsts.items() if "tapegen" in r]
    if firsts_rows:
        print("\nfirst call, in a fresh process per workload (NumPy warm; tapegen's lazy imports paid by a "
              "one-line function first)\n")
        print(format_table(["workload", "tapegen's first transform in the process", "transform", "transform + run",
                            "jax jit first call"], firsts_rows, args.markdown))
    print("\npeak memory (tracemalloc) of one value + gradient\n")
    print(format_table(["workload", "hand", "tapegen", "tapegen/hand", "autograd", "other"],
                       memory_rows(peaks, names), args.markdown))


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="5 rounds, smaller big workloads: under a minute")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 15, quick 5)")
    parser.add_argument("--only", help="comma-separated workloads: " + ",".join(SPEED))
    parser.add_argument("--markdown", action="store_true", help="print markdown tables")
    parser.add_argument("--no-peers", action="store_true", help="skip autograd and JAX")
    parser.add_argument("--json", help="also write the raw samples to this file")
    parser.add_argument("--first-call", help=argparse.SUPPRESS)
    parser.add_argument("--size", default="full", help=argparse.SUPPRESS)
    parser.add_argument("--method", default="tapegen", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (5 if args.quick else 15)
    return args


def main(argv=None):
    args = parse(argv)
    if args.first_call:
        print(json.dumps(first_call(args.first_call, args.size, args.method)))
        return
    names = args.only.split(",") if args.only else list(SPEED)
    unknown = [n for n in names if n not in SPEED]
    if unknown:
        sys.exit(f"unknown workload(s) {unknown}; choose from {list(SPEED)}")
    size = "quick" if args.quick else "full"
    def log(message):
        print(message, file=sys.stderr, flush=True)
    plans = {}
    for name in names:
        inputs = SPEED[name].make(np.random.default_rng(0), size)
        plans[name] = tapegen_calls(SPEED[name], inputs)
        if not args.no_peers:
            plans[name].update(peer_calls(SPEED[name], inputs))
    log(f"load average {' '.join(f'{x:.2f}' for x in __import__('os').getloadavg())}")
    times = time_rounds(plans, args.rounds, 0.005 if args.quick else 0.02, log)
    peer_methods = [] if args.quick or args.no_peers else [m for m in ("jax jit",) if m in plans[names[0]]]
    firsts = first_calls(names, size, ["tapegen"] + peer_methods, log)
    peaks = memory(plans)
    report(times, firsts, peaks, names, args)
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"times": times, "first_calls": firsts, "peak_mib": peaks, "size": size}, file, indent=1)


if __name__ == "__main__":
    main()

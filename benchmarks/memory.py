"""Issue 6's measurements: peak memory and time of plain vs checkpointed vs hand-written gradients.

    python benchmarks/memory.py              # chain, MLP and the Exercise 7 sweep
    python benchmarks/memory.py --quick --markdown

Three parts:

- the 64-layer elementwise chain over 200k floats (`workloads.chain`), plain and
  with `tapegen.checkpoint` on each 8-layer segment, against a hand-written
  backward pass that saves one array per layer;
- a 16-layer tanh MLP (256 wide, batch 512), checkpointing 4-layer segments,
  against hand-written gradients with and without the same checkpointing;
- the seeds' Exercise 7: the chain v_k = tanh(v_{k-1} W_k) for L in {10, 50, 100}
  (64 wide, batch 256), with and without sqrt(L) checkpointing (segments of
  round(sqrt(L)) layers), tapegen and hand-written;
- page faults of large-state loops (`h = h + 0.1 * tanh(h)` on 1e5 floats, and
  the RNN with a 1000 x 100 state, 1,000 steps; 200 with --quick): each method
  in a fresh process, two calls, each call's minor faults and system time
  from `resource.getrusage` (the first call pays the process's first touch of
  the memory the tape needs; the second shows what the allocator gives back).

Peak memory is tracemalloc's (inputs excluded, outputs included); time is the
median of interleaved rounds. `tapegen.checkpoint` is detected with `hasattr`:
without it the checkpointed rows say "not available".
"""
from __future__ import annotations

import common  # noqa: F401  (first: single-threaded BLAS before NumPy loads)

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import tapegen as tg  # noqa: E402
from common import bytes_text, calls_per_sample, format_table, median_iqr, peak_bytes, seconds_per_call  # noqa: E402
from common import seconds_text  # noqa: E402
from workloads import MEMORY, chain_segment, deep_mlp_hand_checkpointed, make_deep_mlp  # noqa: E402
from workloads import make_state_loop, make_wide_rnn, rebind, rnn, rnn_hand, state_loop, state_loop_hand  # noqa: E402

HAS_CHECKPOINT = hasattr(tg, "checkpoint")
_checkpointed = tg.checkpoint if HAS_CHECKPOINT else (lambda fn: fn)


def deep_mlp_segment(h, Ws, start, stop):
    for k in range(start, stop):
        h = np.tanh(h @ Ws[k])
    return h


chain_segment_checkpointed = _checkpointed(chain_segment)
deep_mlp_segment_checkpointed = _checkpointed(deep_mlp_segment)


def chain_checkpointed(x):
    h = x
    for _ in range(8):
        h = chain_segment_checkpointed(h)
    return np.sum(h * h)


def deep_mlp_checkpointed(Ws, x, step):
    h = x
    for start in range(0, len(Ws), step):
        h = deep_mlp_segment_checkpointed(h, Ws, start, min(start + step, len(Ws)))
    return np.mean(h * h)


def methods_for(name, step):
    """label -> (callable(*args) returning (value, grads), needs tapegen.checkpoint)."""
    workload = MEMORY[name]
    plain = tg.value_and_grad(workload.fn, wrt=workload.wrt)
    if name == "chain":
        checkpointed = tg.value_and_grad(chain_checkpointed, wrt=("x",))
        return {"hand-written": (workload.hand, False), "tapegen": (plain, False),
                "tapegen checkpointed": (checkpointed, True)}
    checkpointed = tg.value_and_grad(deep_mlp_checkpointed, wrt=("Ws",))
    return {"hand-written": (workload.hand, False), "hand-written checkpointed":
            (lambda Ws, x: deep_mlp_hand_checkpointed(Ws, x, step), False), "tapegen": (plain, False),
            "tapegen checkpointed": (lambda Ws, x: checkpointed(Ws, x, step), True)}


def same_gradient(result, reference):
    """Whether two (value, grads) results agree (lists of arrays compared item by item)."""
    def flat(grads):
        return [np.asarray(a) for g in grads for a in (g if isinstance(g, list) else [g])]
    return all(np.allclose(a, b, rtol=1e-9, atol=1e-12) for a, b in zip(flat(result[1]), flat(reference[1])))


def measure(methods, args, rounds, target_seconds):
    """{label: {peak, median, iqr, exact} or {error}}; timings interleaved over `rounds`."""
    results, calls = {}, {}
    reference = methods["hand-written"][0](*args)
    for label, (method, needs_checkpoint) in methods.items():
        if needs_checkpoint and not HAS_CHECKPOINT:
            results[label] = {"error": "not available (tapegen.checkpoint is missing)"}
            continue
        try:
            method(*args)  # tapegen's first call records shapes; its second writes the specialized code
            exact = same_gradient(method(*args), reference)
        except Exception as exc:  # a tapegen failure is reported, not fatal to the benchmark
            results[label] = {"error": f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"}
            continue
        calls[label] = lambda m=method: m(*args)
        results[label] = {"peak": peak_bytes(calls[label]), "exact": exact, "times": []}
    numbers = {label: calls_per_sample(call, target_seconds) for label, call in calls.items()}
    for _ in range(rounds):
        for label, call in calls.items():
            results[label]["times"].append(seconds_per_call(call, numbers[label]))
    for label in calls:
        results[label]["median"], results[label]["iqr"] = median_iqr(results[label]["times"])
    return results


def comparison_rows(results):
    base = results["hand-written"]
    rows = []
    for label, r in results.items():
        if "error" in r:
            rows.append([label, r["error"], "", "", "", ""])
            continue
        rows.append([label, bytes_text(r["peak"]), f"{r['peak'] / base['peak']:.2f}x", seconds_text(r["median"]),
                     f"{r['median'] / base['median']:.2f}x", "yes" if r["exact"] else "NO"])
    return rows


def sweep_rows(lengths, rounds, target_seconds, log):
    rows = []
    for length in lengths:
        step = max(1, round(math.sqrt(length)))
        args = make_deep_mlp(np.random.default_rng(0), "full", layers=length, width=64, batch=256)
        results = measure(methods_for("deep_mlp", step), args, rounds, target_seconds)
        rows.append([str(length), str(step)] + [_peak_and_time(results[label]) for label in
                                                 ("hand-written", "hand-written checkpointed", "tapegen",
                                                  "tapegen checkpointed")]
                    + [_saving(results, "hand-written"), _saving(results, "tapegen"), f"{math.sqrt(length):.1f}"])
        log(f"Exercise 7: L = {length}")
    return rows


def _peak_and_time(r):
    return "not available" if "error" in r else f"{bytes_text(r['peak'])}, {seconds_text(r['median'])}"


def _saving(results, label):
    plain, checkpointed = results[label], results[label + " checkpointed"]
    if "error" in plain or "error" in checkpointed:
        return "-"
    return f"{plain['peak'] / checkpointed['peak']:.2f}x less, {checkpointed['median'] / plain['median']:.2f}x time"


FAULT_WORKLOADS = {  # name -> (function, wrt, make(rng, steps), hand-written value and gradient)
    "state loop, 1e5 floats": (state_loop, (0,), make_state_loop, state_loop_hand),
    "RNN, 1000 x 100 state": (rnn, (0, 1, 2), make_wide_rnn, rnn_hand),
}
FAULT_METHODS = ("hand-written", "tapegen", "autograd")


def faults_child(method, name, steps):
    """In a fresh process: three value-and-gradient calls; prints the first's and the third's minor faults, system
    and wall time (tapegen's first runs the general code; its second writes the specialized code, which runs
    from then on)."""
    fn, wrt, make, hand = FAULT_WORKLOADS[name]
    args = make(np.random.default_rng(0), steps)
    if method == "tapegen":
        call = tg.value_and_grad(fn, wrt=wrt)
    elif method == "autograd":
        import autograd
        import autograd.numpy as anp
        call = autograd.value_and_grad(rebind(fn, anp), argnum=wrt)
    else:
        call = hand
    calls = []
    for _ in range(3):
        before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        call(*args)
        after, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - start
        calls.append({"faults": after.ru_minflt - before.ru_minflt, "system": after.ru_stime - before.ru_stime,
                      "wall": wall})
    print(json.dumps([calls[0], calls[2]]))


def fault_rows(steps, log):
    rows = []
    for name in FAULT_WORKLOADS:
        for method in FAULT_METHODS:
            done = subprocess.run([sys.executable, __file__, "--faults-child", method, name, str(steps)],
                                  capture_output=True, text=True)
            log(f"page faults: {name}, {method}")
            if done.returncode:
                rows.append([name, method, "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1][:80], "", ""])
                continue
            calls = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append([name, method] + [f"{c['faults'] / 1e6:.2f} M, {c['system']:.2f} s sys, "
                                          f"{seconds_text(c['wall'])}" for c in calls])
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 9")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--only-faults", action="store_true", help="only the page-fault table")
    parser.add_argument("--faults-child", nargs=3, metavar=("METHOD", "WORKLOAD", "STEPS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.faults_child:
        method, name, steps = args.faults_child
        return faults_child(method, name, int(steps))
    rounds = args.rounds or (3 if args.quick else 9)
    target = 0.01 if args.quick else 0.05
    def log(message):
        print(message, file=sys.stderr, flush=True)
    steps = 200 if args.quick else 1000
    fault_table = fault_rows(steps, log)
    print(f"\nLarge-state loops, {steps} steps, each method in a fresh process: minor page faults, system time "
          "and wall time of the first and the third value-and-gradient call\n")
    print(format_table(["workload", "method", "first call", "third call"], fault_table, args.markdown))
    if args.only_faults:
        return
    print(f"\ntapegen.checkpoint: {'available' if HAS_CHECKPOINT else 'not available'}")
    headers = ["method", "peak memory", "vs hand", "time", "vs hand", "same gradient"]
    for name, step in (("chain", 8), ("deep_mlp", 4)):
        workload = MEMORY[name]
        inputs = workload.make(np.random.default_rng(0), "full")
        results = measure(methods_for(name, step), inputs, rounds, target)
        print(f"\n{workload.title}; checkpointed segments of {step} layers, median of {rounds} rounds\n")
        print(format_table(headers, comparison_rows(results), args.markdown))
    rows = sweep_rows((10, 50, 100), rounds, target, log)
    print("\nExercise 7: v_k = tanh(v_(k-1) W_k), 64 wide, batch 256; gradient w.r.t. all W_k; "
          "checkpoints every round(sqrt(L)) layers (peak, time)\n")
    print(format_table(["L", "segment", "hand-written", "hand-written sqrt(L)", "tapegen", "tapegen sqrt(L)",
                        "hand-written saving", "tapegen saving", "sqrt(L)"], rows, args.markdown))


if __name__ == "__main__":
    main()

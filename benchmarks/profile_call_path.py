"""Where the time of a cached tapegen call goes: call layers, helpers, and each generated statement.

    python benchmarks/profile_call_path.py                  # scalar call path + every workload's generated code
    python benchmarks/profile_call_path.py --only scalar,rnn --markdown

Four views, each measured without the instruments of the others:

1. the call path on the scalar and small-MLP workloads: `tg.value_and_grad(f)(...)`
   -> `Differentiated.value_and_grad` -> `_entry` lookup -> argument binding ->
   the generated function, each layer timed alone (fastest of interleaved rounds);
2. helpers: every tapegen function the generated code calls (`unbroadcast`,
   `unreduce`, `seed`, `conform`, `guarded_mul`, rule helpers, ...), recorded
   during one call and replayed alone to time it; "no-op" counts the calls
   that returned their first argument unchanged, work a transform-time shape
   check could skip;
3. statements: the generated source is rewritten with a timer around every
   simple statement (loop bodies included) and the calibrated cost of the
   timer subtracted; statements are grouped by kind and the costliest listed;
4. rewrites: a few patterns of generated code timed against the line a
   person writes for the same thing, on the workloads' arrays.
"""
from __future__ import annotations

import common  # noqa: F401  (first: single-threaded BLAS before NumPy loads)

import argparse  # noqa: E402
import ast  # noqa: E402
import linecache  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
from collections import defaultdict  # noqa: E402

import numpy as np  # noqa: E402

import tapegen as tg  # noqa: E402
from common import calls_per_sample, format_table, seconds_per_call  # noqa: E402
from run import running_function  # noqa: E402
from workloads import SPEED  # noqa: E402


def _noop(*args):
    return args


def interleaved(calls, rounds=15, target_seconds=0.01):
    """{name: fastest seconds per call over interleaved rounds} (on a shared machine noise only adds time)."""
    numbers = {name: calls_per_sample(call, target_seconds) for name, call in calls.items()}
    samples = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            samples[name].append(seconds_per_call(call, numbers[name]))
    return {name: min(values) for name, values in samples.items()}


# --- 1. the call path -------------------------------------------------------------------------------


def call_path_rows(workload, args):
    fn, wrt = workload.fn, workload.wrt
    public = tg.value_and_grad(fn, wrt=wrt)
    differentiated = tg.differentiate(fn)
    generated, target = running_function(public, args), differentiated._target
    layers = {
        "empty Python call, same arguments": lambda: _noop(*args),
        "hand-written value and gradient": lambda: workload.hand(*args),
        "generated function, called directly": lambda: generated(*args),
        "_entry('grad', wrt) lookup alone": lambda: differentiated._entry("grad", wrt),
        "_target.arguments(args, {}) alone": lambda: target.arguments(args, {}),
        "Differentiated.value_and_grad(*args, wrt=...)": lambda: differentiated.value_and_grad(*args, wrt=wrt),
        "tg.value_and_grad(f, wrt)(*args)": lambda: public(*args),
    }
    times = interleaved(layers, rounds=41, target_seconds=0.002)
    direct = times["generated function, called directly"]
    rows = []
    for name, seconds in times.items():
        over = f"+{(seconds - direct) * 1e6:.2f}" if "value_and_grad" in name else ""
        rows.append([name, f"{seconds * 1e6:.2f}", over])
    return rows


# --- 2. helpers ---------------------------------------------------------------------------------------


def _generated(workload, args):
    """The generated code the public path runs for `args`: its text, globals, name and function."""
    function = running_function(tg.value_and_grad(workload.fn, wrt=workload.wrt), args)
    text = "".join(linecache.getlines(function.__code__.co_filename))
    if not text:
        text = tg.differentiate(workload.fn)._entry("grad", workload.wrt).generated.text
    return types.SimpleNamespace(text=text, namespace=function.__globals__, name=function.__name__,
                                 function=function)


def clone_namespace(namespace):
    """A copy of generated code's globals, of the same type (a LiveNamespace keeps its fallbacks)."""
    clone = type(namespace).__new__(type(namespace))
    dict.update(clone, namespace)
    clone.__dict__.update(getattr(namespace, "__dict__", {}))
    return clone


def helper_names(generated):
    """Names the generated code calls that are Python functions from tapegen (runtime and rule helpers)."""
    tree = ast.parse(generated.text)
    called = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    return sorted(name for name in called if isinstance(generated.namespace.get(name), types.FunctionType)
                  and (generated.namespace[name].__module__ or "").startswith("tapegen"))


def record_helper_calls(generated, args):
    """[(name, function, args, kwargs, no-op)] for every helper call during one call of the generated code."""
    namespace = clone_namespace(generated.namespace)
    calls = []
    for name in helper_names(generated):
        def recorder(*a, _name=name, _fn=namespace[name], **k):
            result = _fn(*a, **k)
            calls.append((_name, _fn, a, k, bool(a) and result is a[0]))
            return result
        namespace[name] = recorder
    exec(compile(generated.text, "<profiled>", "exec"), namespace)
    namespace[generated.name](*args)
    return calls


def helper_rows(generated, args, total):
    """One row per helper: calls, no-op calls, µs per call, µs per value-and-gradient, share of the total."""
    per_name = defaultdict(lambda: [0, 0, 0.0])
    for name, fn, a, k, noop in record_helper_calls(generated, args):
        number = calls_per_sample(lambda: fn(*a, **k), 0.0005)
        seconds = min(seconds_per_call(lambda: fn(*a, **k), number) for _ in range(3))
        stats = per_name[name]
        stats[0] += 1
        stats[1] += noop
        stats[2] += seconds
    rows = sorted(per_name.items(), key=lambda item: -item[1][2])
    return [[name, str(n), str(noops), f"{seconds / n * 1e6:.2f}", f"{seconds * 1e6:.1f}",
             f"{seconds / total * 100:.1f}%"] for name, (n, noops, seconds) in rows]


# --- 3. statements ------------------------------------------------------------------------------------


class _Timers(ast.NodeTransformer):
    """Wraps every simple statement of the generated function in `_t = _clock()` / `_spent[i] += ...`."""

    def __init__(self, name):
        self.name = name
        self.statements = []

    def visit_FunctionDef(self, node):
        if node.name == self.name:
            node.body = self._block(node.body)
        return node

    def _block(self, body):
        out = []
        for stmt in body:
            if isinstance(stmt, (ast.For, ast.While, ast.If)):
                stmt.body, stmt.orelse = self._block(stmt.body), self._block(stmt.orelse)
                out.append(stmt)
            elif isinstance(stmt, ast.Return):
                out += self._timed(ast.Assign([ast.Name("_result", ast.Store())], stmt.value), stmt)
                out.append(ast.Return(ast.Name("_result", ast.Load())))
            else:
                out += self._timed(stmt, stmt)
        return out

    def _timed(self, stmt, original):
        index = len(self.statements)
        self.statements.append(original)
        start = ast.parse("_t = _clock()").body[0]
        stop = ast.parse(f"_spent[{index}] += _clock() - _t; _count[{index}] += 1").body
        return [start, stmt] + stop


def statement_kind(stmt, helpers):
    """A coarse label for what a generated statement does."""
    text = ast.unparse(stmt)
    if isinstance(stmt, ast.Delete):
        return "del"
    if "tape." in text:
        return "tape push/pop"
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func) == "np.shape":
        return "np.shape record"
    if isinstance(stmt, ast.Return):
        return "return (conform)"
    called = [n.func.id for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    helpers_here = list(dict.fromkeys(name for name in called if name in helpers))
    if helpers_here:
        return "calls " + " + ".join(helpers_here)
    if isinstance(getattr(stmt, "value", None), (ast.Name, ast.Constant)):
        return "alias / constant"
    return "NumPy / arithmetic only"


def profile_statements(generated, args, calls_per_batch, batches=7):
    """[(statement, seconds per value-and-gradient, executions per call)]: the fastest of `batches`, timers' cost removed."""
    timers = _Timers(generated.name)
    tree = timers.visit(ast.parse(generated.text))
    namespace = clone_namespace(generated.namespace)
    size = len(timers.statements)
    namespace.update(_clock=time.perf_counter, _spent=[0.0] * size, _count=[0] * size)
    exec(compile(ast.fix_missing_locations(tree), "<profiled>", "exec"), namespace)
    function = namespace[generated.name]
    function(*args)
    overhead = _timer_overhead(namespace)
    best = [float("inf")] * size
    for _ in range(batches):
        namespace["_spent"][:], namespace["_count"][:] = [0.0] * size, [0] * size
        for _ in range(calls_per_batch):
            function(*args)
        for i, (spent, count) in enumerate(zip(namespace["_spent"], namespace["_count"])):
            best[i] = min(best[i], max(0.0, spent - overhead * count) / calls_per_batch)
    counts = [count / calls_per_batch for count in namespace["_count"]]
    return list(zip(timers.statements, best, counts))


def _timer_overhead(namespace):
    """Seconds a timer pair adds around an empty statement, measured in the profiled code's own globals."""
    timers = _Timers("_empty")
    tree = timers.visit(ast.parse("def _empty():\n    pass\n"))
    names = clone_namespace(namespace)
    names.update(_clock=time.perf_counter, _spent=[0.0], _count=[0])
    exec(compile(ast.fix_missing_locations(tree), "<calibration>", "exec"), names)
    samples = []
    for _ in range(20):
        names["_spent"][0] = 0.0
        for _ in range(2000):
            names["_empty"]()
        samples.append(names["_spent"][0] / 2000)
    return min(samples)


def statement_rows(profile, helpers, total):
    kinds = defaultdict(lambda: [0.0, 0.0])
    for stmt, seconds, count in profile:
        kind = statement_kind(stmt, helpers)
        kinds[kind][0] += seconds
        kinds[kind][1] += count
    rows = sorted(kinds.items(), key=lambda item: -item[1][0])
    return [[kind, f"{count:g}", f"{seconds * 1e6:.1f}", f"{seconds / total * 100:.1f}%"]
            for kind, (seconds, count) in rows]


def top_statement_rows(profile, total, most=8):
    rows = sorted(profile, key=lambda item: -item[1])[:most]
    return [[_clip(ast.unparse(stmt)), f"{count:g}", f"{seconds * 1e6:.1f}", f"{seconds / total * 100:.1f}%"]
            for stmt, seconds, count in rows]


def _clip(text, width=72):
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= width else text[:width - 3] + "..."


# --- 4. rewrites -------------------------------------------------------------------------------------


def rewrite_rows():
    """What the generated code spends on one pattern against what a person writes: µs each, on the workloads' arrays."""
    W1, b1, W2, b2, x, y = SPEED["mlp_small"].make(np.random.default_rng(0), "full")
    W, b, xs, Y = SPEED["softmax"].make(np.random.default_rng(0), "full")
    names = {name: value for workload, args in ((SPEED["mlp_small"], (W1, b1, W2, b2, x, y)),
                                                (SPEED["softmax"], (W, b, xs, Y)))
             for name, value in tg.differentiate(workload.fn)._entry("grad", workload.wrt).generated.namespace.items()}
    h = np.tanh(x @ W1 + b1)
    d, g_a, one = h @ W2 + b2 - y, h * 0.5, np.float64(1.0)
    logits = xs @ W + b
    top, g_z = logits.max(axis=1, keepdims=True), np.ones_like(logits)
    names.update(d=d, g_a=g_a, one=one, x=x, W1=W1, W2=W2, b1=b1, g=d, logits=logits, top=top, g_z=g_z,
                 acc=np.zeros((64, 64)), new=np.ones((64, 64)))
    pairs = [
        ("mean of squares, backward (mlp)",
         "unbroadcast(unreduce(one, d.shape, None, False) / reduced_size(d.shape, None) * 2 * d, d.shape)",
         "d * (2.0 / d.size)"),
        ("bias gradient (32, 64) -> (64,)", "unbroadcast(g_a, b1.shape)", "g_a.sum(axis=0)"),
        ("no-op unbroadcast + its shape record", "unbroadcast(g_a, shape(g_a))", "g_a"),
        ("weight gradient of x @ W1", "matmul_vjp_x2(x, W1.shape, g_a)", "x.T @ g_a"),
        ("input gradient of h @ W2", "matmul_vjp_x1(h.shape, W2, g)", "g @ W2.T"),
        ("accumulate a 64x64 gradient in a loop", "add_cotangents(acc, new)", "np.add(acc, new, out=acc)"),
        ("gradient through the max (softmax)",
         "logits + unreduce(unbroadcast(-g_z, top.shape), logits.shape, 1, True) * extremum_share(logits, top, 1, True)",
         "logits"),
    ]
    names["h"] = h
    rows = []
    for label, generated, written in pairs:
        times = [min(seconds_per_call(lambda c=compile(code, "<rewrite>", "eval"): eval(c, names), 2000)
                     for _ in range(7)) for code in (generated, written)]
        rows.append([label, _clip(generated, 60), f"{times[0] * 1e6:.2f}", _clip(written, 30), f"{times[1] * 1e6:.2f}",
                     f"{(times[0] - times[1]) * 1e6:.2f}"])
    return rows


# --- the report -------------------------------------------------------------------------------------


def profile_workload(name, size, markdown):
    workload = SPEED[name]
    args = workload.make(np.random.default_rng(0), size)
    generated = _generated(workload, args)
    function = generated.function
    total = interleaved({"generated": lambda: function(*args)}, rounds=9)["generated"]
    helpers = helper_names(generated)
    profile = profile_statements(generated, args, max(1, min(1000, int(0.05 / max(total, 1e-6)))))
    attributed = sum(seconds for _, seconds, _ in profile)
    print(f"\n### {name}: {workload.title}\n")
    print(f"generated code {total * 1e6:.1f} µs per call; the timed statements account for "
          f"{attributed * 1e6:.1f} µs ({attributed / total * 100:.0f}% of the plain call: timers perturb tiny statements, "
          f"loop headers are not timed).")
    print()
    print(format_table(["helper", "calls", "no-op", "µs each", "µs per call", "share"],
                       helper_rows(generated, args, total), markdown))
    print()
    print(format_table(["statement kind", "executions", "µs per call", "share of timed"],
                       statement_rows(profile, helpers, attributed), markdown))
    print()
    print(format_table(["costliest statements", "executions", "µs", "share of timed"],
                       top_statement_rows(profile, attributed), markdown))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated workloads (default: all): " + ",".join(SPEED))
    parser.add_argument("--quick", action="store_true", help="smaller big workloads")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(SPEED)
    size = "quick" if args.quick else "full"
    for name in [n for n in ("scalar", "mlp_small") if n in names]:
        workload = SPEED[name]
        rows = call_path_rows(workload, workload.make(np.random.default_rng(0), size))
        print(f"\n### call path: {name} (µs per call, fastest of 41 interleaved rounds)\n")
        print(format_table(["layer", "µs", "over generated"], rows, args.markdown))
    for name in names:
        profile_workload(name, size, args.markdown)
    print("\n### rewrites: a generated pattern against the hand-written one (µs each, fastest of 7)\n")
    print(format_table(["pattern", "generated", "µs", "hand-written", "µs", "saving µs"], rewrite_rows(), args.markdown))


if __name__ == "__main__":
    main()

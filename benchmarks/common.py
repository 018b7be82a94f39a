"""What the benchmark scripts share: single-threaded BLAS, the import path, timing, tracemalloc, tables.

Import this module before NumPy: it pins every BLAS and XLA thread pool to one
thread and the process to one core, so every library is measured on one core.
"""
from __future__ import annotations

import os
import sys

for _variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ[_variable] = "1"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# The flags above no longer bind XLA's CPU runtime (jaxlib 0.10 runs a jitted gradient on both cores with
# them set: process time twice the wall time), so the process itself is held to one core, and with it
# every thread pool of every library, and every process it starts.
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
for _path in (REPO, HERE):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

MIB = 1024 * 1024


def calls_per_sample(call, target_seconds):
    """How many calls of `call()` make one timing sample of about `target_seconds` (at least 1)."""
    start = time.perf_counter()
    call()
    once = time.perf_counter() - start
    return max(1, min(100_000, int(target_seconds / max(once, 1e-7))))


def seconds_per_call(call, number):
    """Mean seconds per call of `call()` over `number` back-to-back calls, the collector paused."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(number):
            call()
        return (time.perf_counter() - start) / number
    finally:
        if enabled:
            gc.enable()


def median_iqr(values):
    """(median, interquartile range) of a list of numbers."""
    if len(values) < 2:
        return values[0], 0.0
    quartiles = statistics.quantiles(values, n=4, method="inclusive")
    return statistics.median(values), quartiles[2] - quartiles[0]


def peak_bytes(call):
    """Peak bytes allocated (tracemalloc: Python objects and NumPy buffers) while `call()` runs.

    The inputs exist before, so they are not counted; the result is, as it is
    alive at the end.
    """
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
        del result
    finally:
        tracemalloc.stop()
    return peak


def format_table(headers, rows, markdown):
    """Rows of strings as an aligned text table, or a markdown table."""
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]
    def line(cells):
        return "  ".join(str(cell).ljust(width) for cell, width in zip(cells, widths)).rstrip()
    return "\n".join([line(headers), line("-" * w for w in widths)] + [line(row) for row in rows])


def seconds_text(seconds):
    """A duration with a unit that keeps three significant digits."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def bytes_text(count):
    """A byte count in KiB below 1 MiB, else in MiB."""
    return f"{count / 1024:.1f} KiB" if count < MIB else f"{count / MIB:.1f} MiB"

"""Checkpointing (the seeds' Exercise 7): sqrt(L) segments on a depth-L chain trade time for memory.

For L in {10, 50, 100}, prints the peak memory (tracemalloc) and time of one
value-and-gradient, plain and with the chain cut into about sqrt(L) checkpointed
segments, and checks both give the same gradient.

Run: python examples/checkpointing.py
"""
import math
import time
import tracemalloc

import numpy as np

import tapegen as tg


def layer(h):
    return np.tanh(h * 1.01 + 0.05)


def make_chain(depth):
    def chain(x):
        h = x
        for _ in range(depth):
            h = layer(h)
        return np.sum(h * h)
    return chain


def make_checkpointed_chain(depth):
    size = max(1, round(math.sqrt(depth)))
    segments, rest = divmod(depth, size)

    def run_segment(h):
        for _ in range(size):
            h = layer(h)
        return h

    segment = tg.checkpoint(run_segment)

    def chain(x):
        h = x
        for _ in range(segments):
            h = segment(h)
        for _ in range(rest):
            h = layer(h)
        return np.sum(h * h)
    return chain


def measure(fn, x):
    fn(x)  # transform once, outside the measurement
    tracemalloc.start()
    start = time.perf_counter()
    result = fn(x)
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, peak / 2 ** 20, elapsed * 1e3


def main():
    x = np.random.default_rng(0).normal(size=100_000)
    print(f"{'L':>4}  {'plain MiB':>10}  {'ckpt MiB':>9}  {'plain ms':>9}  {'ckpt ms':>8}  same gradient")
    for depth in (10, 50, 100):
        plain, plain_mib, plain_ms = measure(tg.grad(make_chain(depth)), x)
        ckpt, ckpt_mib, ckpt_ms = measure(tg.grad(make_checkpointed_chain(depth)), x)
        same = np.allclose(plain, ckpt, rtol=1e-12, atol=1e-14)
        print(f"{depth:>4}  {plain_mib:>10.1f}  {ckpt_mib:>9.1f}  {plain_ms:>9.1f}  {ckpt_ms:>8.1f}  {same}")


if __name__ == "__main__":
    main()

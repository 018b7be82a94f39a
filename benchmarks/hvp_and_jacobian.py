"""Issue 4's measurements: Hessian-vector product cost, and forward- vs reverse-mode Jacobians by shape.

Two tables:

1. `tg.hvp` time / `tg.grad` time per workload. The HVP is forward-over-reverse
   (the JVP of the generated gradient code), so it should cost a small constant
   times one gradient, whatever the number of parameters; the full Hessian column
   (`tg.hessian`, n HVP-like passes) shows what not forming it saves.
2. `tg.jacobian` time in forward and reverse mode for the seeds' Exercise 4
   (a random linear map f(x) = A x, n inputs, m outputs) and an elementwise map:
   forward mode costs about n passes, reverse about m, so the ratio crosses 1
   near n = m; "auto" picks the side with fewer vectors.

Run as a program (not a test): `python benchmarks/hvp_and_jacobian.py [--quick] [--markdown]`.
"""
from __future__ import annotations

import argparse

import common  # noqa: F401  (one BLAS thread; before NumPy)
import numpy as np

import tapegen as tg
from tapegen.api_transforms import choose_mode


def quadratic(x, A, b):
    """The seeds' Exercise 5: 0.5 x^T A^T A x + b^T x."""
    return 0.5 * x @ A.T @ A @ x + b @ x


def mlp_loss(W1, W2, x, y):
    h = np.tanh(x @ W1)
    return np.mean((h @ W2 - y) ** 2)


def rnn_loss(Wh, xs):
    h = np.zeros(Wh.shape[0])
    for x in xs:
        h = np.tanh(Wh @ h + x)
    return np.sum(h * h)


def elementwise(x):
    return np.sum(np.tanh(np.sin(x) * x))


def linear_map(x, A):
    return A @ x


def sine_map(x):
    return np.sin(x) * x


def hvp_workloads(quick):
    rng = np.random.default_rng(0)
    n = 200 if quick else 1000
    yield "quadratic (Exercise 5)", quadratic, (rng.normal(size=n), rng.normal(size=(n, n)) / n, rng.normal(size=n))
    yield "mlp 64-64-10", mlp_loss, (rng.normal(size=(64, 64)) * 0.1, rng.normal(size=(64, 10)) * 0.1,
                                     rng.normal(size=(32, 64)), rng.normal(size=(32, 10)))
    yield "rnn 20 steps, 32 hidden", rnn_loss, (rng.normal(size=(32, 32)) * 0.2, rng.normal(size=(20, 32)))
    yield "elementwise 1e5", elementwise, (rng.normal(size=10_000 if quick else 100_000),)


def timed(call, rounds):
    number = common.calls_per_sample(call, 0.02)
    return min(common.seconds_per_call(call, number) for _ in range(rounds))


def hvp_table(quick, rounds):
    rows = []
    for name, f, args in hvp_workloads(quick):
        grad, hvp = tg.grad(f), tg.hvp(f)
        v = np.random.default_rng(1).normal(size=np.shape(args[0]))
        g_time = timed(lambda: grad(*args), rounds)
        h_time = timed(lambda: hvp(*args, v), rounds)
        size = int(np.size(args[0]))
        hessian = "-"
        if size <= 1024:
            H = tg.hessian(f)
            hessian = f"{timed(lambda: H(*args), max(1, rounds // 3)) / g_time:8.1f}"
        rows.append([name, str(size), f"{g_time * 1e6:10.1f}", f"{h_time * 1e6:10.1f}", f"{h_time / g_time:6.2f}",
                     hessian])
    return ["workload", "wrt size", "grad us", "hvp us", "hvp/grad", "hessian/grad"], rows


def jacobian_table(quick, rounds):
    rows = []
    shapes = [(10, 100), (100, 10), (50, 50), (1000, 1)] + ([] if quick else [(5, 1000), (200, 200)])
    for n, m in shapes:
        A = np.random.default_rng(n * m).normal(size=(m, n))
        x = np.ones(n)
        forward, reverse = tg.jacobian(linear_map, mode="forward"), tg.jacobian(linear_map, mode="reverse")
        t_forward = timed(lambda: forward(x, A), rounds)
        t_reverse = timed(lambda: reverse(x, A), rounds)
        rows.append([f"A @ x  n={n} m={m}", f"{n / m:8.2f}", f"{t_forward * 1e3:9.2f}", f"{t_reverse * 1e3:9.2f}",
                     f"{t_forward / t_reverse:7.2f}", choose_mode(n, m)])
    for n in (10, 100) if quick else (10, 100, 1000):
        x = np.linspace(-1, 1, n)
        forward, reverse = tg.jacobian(sine_map, mode="forward"), tg.jacobian(sine_map, mode="reverse")
        t_forward = timed(lambda: forward(x), rounds)
        t_reverse = timed(lambda: reverse(x), rounds)
        rows.append([f"sin(x)*x n=m={n} (batched)", "1.00", f"{t_forward * 1e3:9.2f}", f"{t_reverse * 1e3:9.2f}",
                     f"{t_forward / t_reverse:7.2f}", choose_mode(n, n)])
    return ["jacobian of", "n/m", "forward ms", "reverse ms", "fwd/rev", "auto picks"], rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer rounds")
    parser.add_argument("--markdown", action="store_true", help="markdown tables")
    parser.add_argument("--rounds", type=int, default=None, help="timing rounds (the fastest is shown)")
    options = parser.parse_args()
    rounds = options.rounds or (3 if options.quick else 7)
    for title, (headers, rows) in (("Hessian-vector products (forward-over-reverse)",
                                    hvp_table(options.quick, rounds)),
                                   ("Jacobians: forward vs reverse mode", jacobian_table(options.quick, rounds))):
        print(f"\n{title}\n")
        print(common.format_table(headers, rows, options.markdown))


if __name__ == "__main__":
    main()

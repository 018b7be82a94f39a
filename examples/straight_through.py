"""The straight-through estimator: train through np.round with tg.stop_gradient.

Rounding has derivative 0 almost everywhere, so a weight that is rounded before
use gets no gradient. The straight-through estimator uses the rounded value
going forward and the identity going backward:

    q = w + tg.stop_gradient(np.round(w) - w)      # value: round(w); gradient: 1

Here a linear model with integer weights is fitted to data made with integer
weights (2, -1, 3): the float "shadow" weights are trained, their rounded
values are used.

Run: python examples/straight_through.py
"""
import numpy as np

import tapegen as tg


def quantize(w):
    return w + tg.stop_gradient(np.round(w) - w)


def loss(w, x, y):
    return np.mean((x @ quantize(w) - y) ** 2)


def naive_loss(w, x, y):
    return np.mean((x @ np.round(w) - y) ** 2)


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 3))
    y = x @ np.array([2.0, -1.0, 3.0])
    w = np.zeros(3) + 0.1

    print("gradient through np.round alone:", tg.grad(naive_loss)(w, x, y), "(no signal)")
    grad = tg.grad(loss)
    print("straight-through gradient:      ", np.round(grad(w, x, y), 3))
    print(tg.source(quantize))

    for step in range(60):
        w = w - 0.05 * grad(w, x, y)
        if step % 15 == 0:
            print(f"step {step:3d}   loss {loss(w, x, y):.4f}   rounded weights {np.round(w)}")
    print(f"final rounded weights {np.round(w)}; loss {loss(w, x, y):.4f}")


if __name__ == "__main__":
    main()

"""Quickstart: differentiate a small NumPy loss, print the generated gradient code and its values.

Run: python examples/quickstart.py
"""
import numpy as np

import tapegen as tg


@tg.differentiate
def loss(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


def main():
    rng = np.random.default_rng(0)
    W, b = rng.normal(size=(3, 2)), np.zeros(2)
    x, y = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))

    print("The generated gradient code (readable Python, compiled with exec):\n")
    print(loss.source(wrt=("W", "b")))

    value, (dW, db) = loss.value_and_grad(W, b, x, y, wrt=("W", "b"))
    print(f"loss = {value:.6f}")
    print("dloss/dW =\n", np.array2string(dW, precision=6))
    print("dloss/db =", np.array2string(db, precision=6))

    report = tg.gradcheck(loss, W, b, x, y, wrt=("W", "b"))
    print("\nChecked against central finite differences:\n" + str(report))


if __name__ == "__main__":
    main()

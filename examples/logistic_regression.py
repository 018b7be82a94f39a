"""Logistic regression trained by gradient descent, with gradients from tapegen.

Synthetic, linearly separable-ish data in 3 dimensions; the loss is the mean
binary cross-entropy written with np.logaddexp (stable for large logits). The
loss is printed as it falls; if matplotlib is installed, a plot of it is saved.

Run: python examples/logistic_regression.py
"""
import os
import tempfile

import numpy as np

import tapegen as tg


def loss(w, b, x, y):
    logits = x @ w + b
    # -[y log s(z) + (1 - y) log(1 - s(z))] = log(1 + e^z) - y z
    return np.mean(np.logaddexp(0.0, logits) - y * logits)


def make_data(rng, n=400):
    true_w, true_b = np.array([2.0, -3.0, 0.5]), 0.3
    x = rng.normal(size=(n, 3))
    p = 1.0 / (1.0 + np.exp(-(x @ true_w + true_b)))
    return x, (rng.random(n) < p).astype(float)


def train(x, y, steps=200, learning_rate=0.5):
    value_and_grad = tg.value_and_grad(loss, wrt=("w", "b"))
    w, b = np.zeros(3), 0.0
    history = []
    for step in range(steps):
        value, (dw, db) = value_and_grad(w, b, x, y)
        w, b = w - learning_rate * dw, b - learning_rate * db
        history.append(value)
        if step % 40 == 0 or step == steps - 1:
            print(f"step {step:4d}   loss {value:.4f}")
    return w, b, history


def save_plot(history):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    path = os.path.join(os.environ.get("TAPEGEN_EXAMPLES_OUT", tempfile.gettempdir()), "logistic_regression.png")
    fig, ax = plt.subplots()
    ax.plot(history)
    ax.set(xlabel="step", ylabel="loss", title="logistic regression")
    fig.savefig(path)
    print(f"plot saved to {path}")


def main():
    rng = np.random.default_rng(0)
    x, y = make_data(rng)
    tg.gradcheck(loss, np.zeros(3), 0.0, x, y, wrt=(0, 1))  # the gradient is right before we use it
    w, b, history = train(x, y)
    accuracy = np.mean(((x @ w + b) > 0) == (y > 0.5))
    print(f"learned w = {np.round(w, 2)}, b = {b:.2f}; training accuracy {accuracy:.1%}")
    print(f"loss fell from {history[0]:.4f} to {history[-1]:.4f}")
    save_plot(history)


if __name__ == "__main__":
    main()

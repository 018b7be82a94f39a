"""A two-layer perceptron fitted to y = sin(3x) by minibatch SGD; the parameters are a dict (a pytree).

`tg.value_and_grad(loss)` gives the gradient of the loss with respect to the
whole `params` dict, as a dict of the same keys. The loss is printed as it
falls; if matplotlib is installed, a plot of the fit is saved.

Run: python examples/mlp_sgd.py
"""
import os
import tempfile

import numpy as np

import tapegen as tg


def predict(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return h @ params["W2"] + params["b2"]


def loss(params, x, y):
    return np.mean((predict(params, x) - y) ** 2)


def loss_of_arrays(W1, b1, W2, b2, x, y):
    """The same loss with each parameter an argument, for gradcheck (which checks arrays, not dicts)."""
    return loss({"W1": W1, "b1": b1, "W2": W2, "b2": b2}, x, y)


def init(rng, hidden=32):
    return {"W1": rng.normal(size=(1, hidden)), "b1": np.zeros(hidden),
            "W2": rng.normal(size=(hidden, 1)) / np.sqrt(hidden), "b2": np.zeros(1)}


def train(params, x, y, rng, epochs=150, batch=32, learning_rate=0.1):
    value_and_grad = tg.value_and_grad(loss)
    history = []
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(x), batch):
            rows = order[start:start + batch]
            value, grads = value_and_grad(params, x[rows], y[rows])
            step = learning_rate / (1.0 + epoch / 30.0)  # a decaying step size settles the noise of SGD
            params = {k: params[k] - step * grads[k] for k in params}
        history.append(loss(params, x, y))
        if epoch % 30 == 0 or epoch == epochs - 1:
            print(f"epoch {epoch:4d}   loss {history[-1]:.5f}")
    return params, history


def save_plot(params, x, y):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    path = os.path.join(os.environ.get("TAPEGEN_EXAMPLES_OUT", tempfile.gettempdir()), "mlp_sgd.png")
    fig, ax = plt.subplots()
    ax.plot(x[:, 0], y[:, 0], ".", label="data")
    grid = np.linspace(-1, 1, 200)[:, None]
    ax.plot(grid[:, 0], predict(params, grid)[:, 0], label="MLP")
    ax.legend()
    fig.savefig(path)
    print(f"plot saved to {path}")


def main():
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, size=(256, 1))
    y = np.sin(3 * x) + 0.05 * rng.normal(size=x.shape)
    params = init(rng)
    small = {k: v[..., :4] if k in ("W1", "b1") else v[:4] for k, v in params.items()}  # 4 hidden units
    tg.gradcheck(loss_of_arrays, *small.values(), x[:8], y[:8], wrt=(0, 1, 2, 3))
    print("gradient checked against central finite differences: ok")
    first = loss(params, x, y)
    params, history = train(params, x, y, rng)
    print(f"loss fell from {first:.4f} to {history[-1]:.4f}")
    save_plot(params, x, y)


if __name__ == "__main__":
    main()

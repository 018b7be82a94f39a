"""An MLP whose parameters are a dict keyed by f-strings ("W1", "b1", ...), as many tutorials store them."""
import numpy as np


def init_params(layer_dims, seed=0):
    rng = np.random.default_rng(seed)
    params = {}
    for l in range(1, len(layer_dims)):
        params[f"W{l}"] = rng.standard_normal((layer_dims[l - 1], layer_dims[l])) / np.sqrt(layer_dims[l - 1])
        params[f"b{l}"] = np.zeros(layer_dims[l])
    return params


def forward(params, X, activation="tanh"):
    acts = {"tanh": np.tanh, "sigmoid": lambda z: 1 / (1 + np.exp(-z))}
    L = len(params) // 2
    A = X
    cache = {"A0": X}
    for l in range(1, L):
        Z = A @ params[f"W{l}"] + params[f"b{l}"]
        A = acts[activation](Z)
        cache[f"A{l}"] = A
    logits = A @ params[f"W{L}"] + params[f"b{L}"]
    return logits, cache


def cost(params, X, Y, lambd=0.1):
    m = X.shape[0]
    logits, _ = forward(params, X)
    probs = 1 / (1 + np.exp(-logits))
    cross_entropy = -np.sum(Y * np.log(probs) + (1 - Y) * np.log(1 - probs)) / m
    L2 = lambd / (2 * m) * sum(np.sum(np.square(params[k])) for k in params if k.startswith("W"))
    return cross_entropy + L2


def cases():
    rng = np.random.default_rng(26)
    params = init_params([3, 4, 4, 1], seed=1)
    params = {k: v + 0.1 * rng.standard_normal(v.shape) for k, v in params.items()}
    X = rng.standard_normal((5, 3))
    Y = (rng.random((5, 1)) > 0.5).astype(float)
    return [(cost, (params, X, Y))]

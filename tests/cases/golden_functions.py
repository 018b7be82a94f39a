"""Small functions whose Wengert list and generated code are pinned by golden files."""
import numpy as np


def tanh_layer_loss(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


def fan_out(x):
    s = np.sin(x)
    return np.sum(s * s + s)


def slicing(x):
    head = x[1:, None]
    return np.sum(head * x[0])


def params_dict(params, x):
    z = x @ params["W"] + params["b"]
    return np.sum(np.exp(z))


def rnn_loop(W, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h)


def branch(x):
    if x > 0.0:
        y = np.exp(x)
    else:
        y = x * x
    return y


def array_assignment(w):
    A = np.zeros((3, 3))
    for i in range(3):
        A[i, i] = w[i] ** 2
    return np.sum(A)


def commented(x, w):
    # a linear layer
    z = x @ w
    s = "# a string, not a comment"
    # squashed, then summed
    return np.sum(np.tanh(z)) + len(s)

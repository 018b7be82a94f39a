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


def softmax_xent(W, x, Y):
    logits = x @ W
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * logp, axis=1))


def jittered_cholesky(K, y):
    jitter = 1e-6
    for _ in range(5):
        try:
            L = np.linalg.cholesky(K + jitter * np.eye(len(y)))
            break
        except np.linalg.LinAlgError:
            jitter *= 10
    return np.sum(np.linalg.solve(L, y) ** 2)


def example_arguments(name):
    """Arguments the specialized goldens are generated for (deterministic values; only shapes matter)."""
    ones = {"tanh_layer_loss": [(4, 3), (3,), (5, 4), (5, 3)], "softmax_xent": [(4, 3), (5, 4), (5, 3)]}[name]
    return tuple(np.linspace(-1.0, 1.0, int(np.prod(s))).reshape(s) for s in ones)

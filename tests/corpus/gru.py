"""A GRU sequence classifier: the per-step loss in `for t, (x, y) in enumerate(zip(xs, ys))`."""
import numpy as np

sigmoid = lambda z: 1.0 / (1.0 + np.exp(-z))


def gru_step(params, h, x):
    Wz, Uz, Wr, Ur, Wh, Uh = (params[k] for k in ("Wz", "Uz", "Wr", "Ur", "Wh", "Uh"))
    z = sigmoid(x @ Wz + h @ Uz)
    r = sigmoid(x @ Wr + h @ Ur)
    h_tilde = np.tanh(x @ Wh + (r * h) @ Uh)
    return (1 - z) * h + z * h_tilde


def sequence_loss(params, xs, ys, discount=0.9):
    h = np.zeros(params["Uz"].shape[0])
    tanh, exp, log = np.tanh, np.exp, np.log
    total = 0.0
    for t, (x, y) in enumerate(zip(xs, ys)):
        h = gru_step(params, h, x)
        logits = h @ params["V"]
        log_probs = logits - log(sum(exp(l) for l in logits))
        total = total + discount ** t * -log_probs[y]
    return total / len(xs) + 1e-3 * tanh(sum(np.sum(w ** 2) for w in params.values()))


def cases():
    rs = np.random.RandomState(42)
    d_in, d_h, n_cls = 2, 3, 3
    params = {}
    for gate in "zrh":
        params[f"W{gate}"] = 0.5 * rs.randn(d_in, d_h)
        params[f"U{gate}"] = 0.5 * rs.randn(d_h, d_h)
    params["V"] = rs.randn(d_h, n_cls)
    xs = [rs.randn(d_in) for _ in range(3)]
    ys = [0, 2, 1]
    return [(sequence_loss, (params, xs, ys))]

"""Training-loop idioms around a loss: keyword-only options, logging, history lists, errstate, clipping."""
import numpy as np


def clip_by_global_norm(grads, max_norm):
    total = np.sqrt(sum(np.sum(g ** 2) for g in grads))
    scale = min(1.0, max_norm / total)
    return [g * scale for g in grads]


def mse(pred, y):
    return np.mean((pred - y) ** 2)


def regression_loss(w, X, y, *, l2=1e-3, verbose=False):
    pred = X @ w
    loss = mse(pred, y) + l2 * np.sum(w ** 2)
    if verbose:
        print(f"loss {loss:.4f}, |w| = {np.linalg.norm(w):.3f}")
    return loss


def fit_step_report(w, X, y):
    return regression_loss(w, X, y, l2=1e-2, verbose=True)


def logged_loss(w, X, y, history):
    loss = np.mean(np.log1p(np.exp(-(X @ w) * y)))
    history.append(float(loss))
    print(f"step {len(history)}: loss = {loss}")
    return loss


def entropy_loss(logits):
    p = np.exp(logits) / np.sum(np.exp(logits))
    with np.errstate(divide="ignore", invalid="ignore"):
        logp = np.log(p)
    return -np.sum(p * logp)


def clipped_step_loss(W1, W2, X, y, lr=0.5):
    """One SGD step with globally clipped (hand-written) gradients, then the loss after it."""
    h = np.tanh(X @ W1)
    err = h @ W2 - y
    g2 = h.T @ err / len(y)
    g1 = X.T @ ((err @ W2.T) * (1 - h ** 2)) / len(y)
    g1, g2 = clip_by_global_norm([g1, g2], max_norm=0.5)
    W1, W2 = W1 - lr * g1, W2 - lr * g2
    return 0.5 * mse(np.tanh(X @ W1) @ W2, y)


def cases():
    rs = np.random.RandomState(47)
    X, y = rs.randn(6, 3), rs.randn(6)
    return [(regression_loss, (rs.randn(3), X, y)),
            (logged_loss, (rs.randn(3), X, np.sign(y), [])),
            (entropy_loss, (rs.randn(5),)),
            (fit_step_report, (rs.randn(3), X, y)),
            (clipped_step_loss, (rs.randn(3, 4), rs.randn(4, 2), X, rs.randn(6, 2)))]

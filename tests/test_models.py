"""Real models against hand-written NumPy gradients and finite differences."""
import numpy as np

import tapegen as tg
from conftest import numeric_vjp


def logistic_loss(w, b, X, y):
    z = X @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def logistic_grad_by_hand(w, b, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w + b)))
    return X.T @ (p - y) / len(y), np.mean(p - y)


def test_logistic_regression(rng):
    X = rng.normal(size=(20, 4))
    y = (rng.random(20) > 0.5).astype(float)
    w, b = rng.normal(size=4) * 0.3, 0.1
    dw, db = tg.grad(logistic_loss, wrt=("w", "b"))(w, b, X, y)
    hand_w, hand_b = logistic_grad_by_hand(w, b, X, y)
    np.testing.assert_allclose(dw, hand_w, rtol=1e-12)
    assert isinstance(db, float) and abs(db - hand_b) < 1e-12
    np.testing.assert_allclose(dw, numeric_vjp(logistic_loss, (w, b, X, y), 0, 1.0), rtol=1e-6)


def mlp_loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    return 0.5 * np.mean(np.sum((logits - y) ** 2, axis=1))


def mlp_grad_by_hand(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    d_logits = (logits - y) / len(x)
    dh = d_logits @ params["W2"].T
    dz = dh * (1 - h ** 2)
    return {"W1": x.T @ dz, "b1": dz.sum(axis=0), "W2": h.T @ d_logits, "b2": d_logits.sum(axis=0)}


def test_two_layer_mlp_with_params_dict(rng):
    params = {"W1": rng.normal(size=(5, 8)) * 0.5, "b1": rng.normal(size=8) * 0.1,
              "W2": rng.normal(size=(8, 3)) * 0.5, "b2": np.zeros(3)}
    x, y = rng.normal(size=(16, 5)), rng.normal(size=(16, 3))
    grads = tg.grad(mlp_loss)(params, x, y)
    hand = mlp_grad_by_hand(params, x, y)
    for key in params:
        np.testing.assert_allclose(grads[key], hand[key], rtol=1e-10, atol=1e-13)


def softmax_cross_entropy(W, x, labels):
    logits = x @ W
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(len(labels)), labels])


def test_softmax_cross_entropy(rng):
    W, x = rng.normal(size=(6, 4)), rng.normal(size=(10, 6))
    labels = rng.integers(0, 4, size=10)
    g = tg.grad(softmax_cross_entropy)(W, x, labels)
    logits = x @ W
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(10), labels] -= 1
    np.testing.assert_allclose(g, x.T @ p / 10, rtol=1e-10, atol=1e-13)

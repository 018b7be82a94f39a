"""Robust regression losses: Huber, pseudo-Huber and log-cosh, as scikit-learn and Keras define them."""
import numpy as np


def huber(r, delta=1.0):
    abs_r = np.abs(r)
    return np.where(abs_r <= delta, 0.5 * r ** 2, delta * (abs_r - 0.5 * delta))


def pseudo_huber(r, delta=1.0):
    return delta ** 2 * (np.sqrt(1 + (r / delta) ** 2) - 1)


def logcosh(y_true, y_pred):
    x = y_pred - y_true
    return np.mean(x + np.logaddexp(-2.0 * x, 0.0) - np.log(2.0))


def huber_regression(w, b, X, y, alpha=1e-3, epsilon=1.35):
    residual = y - X @ w - b
    loss = np.sum(huber(residual, epsilon))
    return loss + alpha * w @ w


def robust_losses(w, X, y):
    pred = X @ w
    return np.mean(pseudo_huber(pred - y, 0.5)) + logcosh(y, pred) + max(abs(w[0]), abs(w[1]))


def cases():
    rs = np.random.RandomState(37)
    X = rs.randn(10, 3)
    y = X @ np.array([1.0, -2.0, 0.5]) + rs.standard_t(2, size=10)
    return [(huber_regression, (np.array([0.8, -1.5, 0.2]), 0.1, X, y)),
            (robust_losses, (np.array([0.8, -1.5, 0.2]), X, y))]

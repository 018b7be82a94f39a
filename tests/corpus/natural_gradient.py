"""One natural-gradient step of logistic regression, then the loss after it (the Fisher matrix written by hand)."""
import numpy as np


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def nll(w, X, y):
    p = sigmoid(X @ w)
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def nll_grad(w, X, y):
    p = sigmoid(X @ w)
    return X.T @ (p - y) / len(y)


def fisher(w, X, damping=1e-3):
    p = sigmoid(X @ w)
    n, d = X.shape
    F = X.T @ (X * (p * (1 - p))[:, None]) / n
    return F + damping * np.eye(d)


def natural_gradient_step(w, X, y, step_size):
    F = fisher(w, X)
    g = nll_grad(w, X, y)
    return w - step_size * np.linalg.solve(F, g)


def loss_after_step(w, X, y, step_size):
    """The quantity a meta-learner of the step size differentiates."""
    w_new = natural_gradient_step(w, X, y, step_size)
    return nll(w_new, X, y)


def cases():
    rs = np.random.RandomState(13)
    X = rs.randn(10, 3)
    y = (rs.rand(10) > 0.5).astype(float)
    w = 0.2 * rs.randn(3)
    return [(loss_after_step, (w, X, y, 0.5))]

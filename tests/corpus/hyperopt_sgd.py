"""Gradient-based hyperparameter optimization through unrolled SGD with momentum (Maclaurin et al. 2015)."""
import numpy as np


def train_loss_grad(w, X, y, l2):
    """The gradient of the training loss, written by hand as in a NumPy training loop."""
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return X.T @ (p - y) / len(y) + l2 * w


def sgd_with_momentum(w0, X, y, log_l2, log_alpha, mass=0.9, num_iters=8):
    w = w0
    v = np.zeros(len(w0))
    alpha = np.exp(log_alpha)
    l2 = np.exp(log_l2)
    for i in range(num_iters):
        g = train_loss_grad(w, X, y, l2)
        v = mass * v - (1.0 - mass) * g
        w = w + alpha * v
    return w


def validation_loss(hypers, w0, X, y, X_val, y_val):
    log_l2, log_alpha = hypers[0], hypers[1]
    w = sgd_with_momentum(w0, X, y, log_l2, log_alpha)
    p = 1.0 / (1.0 + np.exp(-(X_val @ w)))
    return -np.mean(y_val * np.log(p) + (1 - y_val) * np.log(1 - p))


def cases():
    rs = np.random.RandomState(36)
    X, X_val = rs.randn(8, 3), rs.randn(5, 3)
    w_true = rs.randn(3)
    y = (X @ w_true > 0).astype(float)
    y_val = (X_val @ w_true > 0).astype(float)
    return [(validation_loss, (np.array([-2.0, 0.5]), 0.1 * rs.randn(3), X, y, X_val, y_val))]

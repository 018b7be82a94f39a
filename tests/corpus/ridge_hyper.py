"""The validation loss of closed-form ridge regression, differentiated with respect to the penalty."""
import math

import numpy as np


def fit_ridge(X, y, lam):
    n_features = X.shape[1]
    A = X.T @ X + lam * np.eye(n_features)
    return np.linalg.solve(A, X.T @ y)


def validation_loss(log_lam, X_train, y_train, X_val, y_val):
    w = fit_ridge(X_train, y_train, math.exp(log_lam))
    resid = X_val @ w - y_val
    return resid @ resid / len(y_val)


def kernel_ridge(log_gamma, log_lam, X, y, X_test, y_test):
    gamma, lam = np.exp(log_gamma), np.exp(log_lam)
    sq = np.sum(X ** 2, 1)[:, None] + np.sum(X ** 2, 1)[None, :] - 2 * X @ X.T
    K = np.exp(-gamma * sq)
    alpha = np.linalg.solve(K + lam * np.eye(len(y)), y)
    sq_test = np.sum((X_test[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    pred = np.exp(-gamma * sq_test) @ alpha
    return np.mean((pred - y_test) ** 2)


def cases():
    rs = np.random.RandomState(30)
    w_true = rs.randn(3)
    X_train, X_val = rs.randn(10, 3), rs.randn(6, 3)
    y_train = X_train @ w_true + 0.5 * rs.randn(10)
    y_val = X_val @ w_true + 0.5 * rs.randn(6)
    return [(validation_loss, (0.3, X_train, y_train, X_val, y_val)),
            (kernel_ridge, (-0.5, -1.0, rs.randn(7, 2), rs.randn(7), rs.randn(4, 2), rs.randn(4)))]

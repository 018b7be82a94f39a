"""Custom rules from the seeds: stable softplus, straight-through rounding, implicit ridge regression."""
import numpy as np

import tapegen as tg


@tg.custom_vjp
def softplus(x):
    return np.logaddexp(0.0, x)


def softplus_fwd(x):
    return softplus(x), (x,)


def softplus_bwd(residuals, g):
    (x,) = residuals
    return (g / (1.0 + np.exp(-x)),)


softplus.defvjp(softplus_fwd, softplus_bwd)


def softplus_loss(w, x):
    return np.sum(softplus(x @ w) ** 2)


@tg.custom_vjp
def round_ste(x):
    return np.round(x)


round_ste.defvjp(lambda x: (np.round(x), None), lambda residuals, g: (g,))


def quantized_loss(w):
    return np.sum(round_ste(w * 3.0) * w)


@tg.custom_vjp
def ridge(X, y, lam):
    """argmin_w |Xw - y|^2 + lam |w|^2, differentiated implicitly (no unrolled solver)."""
    A = X.T @ X + lam * np.eye(X.shape[1])
    return np.linalg.solve(A, X.T @ y)


def ridge_fwd(X, y, lam):
    A = X.T @ X + lam * np.eye(X.shape[1])
    w = np.linalg.solve(A, X.T @ y)
    return w, (X, y, lam, A, w)


def ridge_bwd(residuals, g):
    X, y, lam, A, w = residuals
    v = np.linalg.solve(A, g)            # A is symmetric: A^-T g = A^-1 g
    dX = np.outer(y - X @ w, v) - np.outer(X @ v, w)
    dy = X @ v
    dlam = -float(w @ v)
    return dX, dy, dlam


ridge.defvjp(ridge_fwd, ridge_bwd)


def validation_loss(lam, X, y, X_val, y_val):
    w = ridge(X, y, lam)
    return np.mean((X_val @ w - y_val) ** 2)


def scipy_like(x):
    return np.sum(expit(x) * x)


def expit(x):
    return 1.0 / (1.0 + np.exp(-x))

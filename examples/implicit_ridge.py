"""Implicit differentiation: tune ridge regression's penalty by gradient descent (the seeds' Exercise 8).

w*(lam) = argmin |Xw - y|^2 + lam |w|^2 solves (X^T X + lam I) w = X^T y. Its
derivative needs no unrolled solver: differentiating that equation gives
dw = -(X^T X + lam I)^-1 w dlam, which a custom VJP expresses with one extra
solve. We minimise the validation loss over log(lam).

Run: python examples/implicit_ridge.py
"""
import numpy as np

import tapegen as tg


@tg.custom_vjp
def ridge(X, y, lam):
    return np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ y)


def ridge_fwd(X, y, lam):
    A = X.T @ X + lam * np.eye(X.shape[1])
    w = np.linalg.solve(A, X.T @ y)
    return w, (X, y, A, w)


def ridge_bwd(residuals, g):
    X, y, A, w = residuals
    v = np.linalg.solve(A, g)  # A is symmetric
    return np.outer(y - X @ w, v) - np.outer(X @ v, w), X @ v, -float(w @ v)


ridge.defvjp(ridge_fwd, ridge_bwd)


def validation_loss(log_lam, X, y, X_val, y_val):
    w = ridge(X, y, np.exp(log_lam))
    return np.mean((X_val @ w - y_val) ** 2)


def main():
    rng = np.random.default_rng(1)
    true_w = rng.normal(size=8)
    X, X_val = rng.normal(size=(30, 8)), rng.normal(size=(200, 8))
    y = X @ true_w + rng.normal(size=30) * 2.0
    y_val = X_val @ true_w + rng.normal(size=200) * 2.0
    step = tg.value_and_grad(validation_loss)
    log_lam = 3.0
    for i in range(30):
        value, g = step(log_lam, X, y, X_val, y_val)
        if i % 5 == 0:
            print(f"step {i:3d}  lam {np.exp(log_lam):8.3f}  validation loss {value:.4f}")
        log_lam -= 0.5 * g
    print(f"tuned lam = {np.exp(log_lam):.3f}")
    print(tg.gradcheck(validation_loss, log_lam, X, y, X_val, y_val))


if __name__ == "__main__":
    main()

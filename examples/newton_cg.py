"""Newton-CG with Hessian-vector products: second-order optimisation without forming the Hessian.

Each Newton step solves H p = -g by conjugate gradients, where every product
H v is tg.hvp (forward over reverse: a small constant times a gradient). On a
regularised logistic regression it converges in a handful of steps.

Run: python examples/newton_cg.py
"""
import numpy as np

import tapegen as tg


def loss(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z) + 0.01 * np.sum(w * w)


def conjugate_gradient(matvec, b, iterations=20, tolerance=1e-10):
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rr = r @ r
    for _ in range(iterations):
        Ap = matvec(p)
        alpha = rr / (p @ Ap)
        x += alpha * p
        r -= alpha * Ap
        rr, rr_old = r @ r, rr
        if rr < tolerance:
            break
        p = r + (rr / rr_old) * p
    return x


def main():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 5))
    y = (X @ rng.normal(size=5) + 0.3 * rng.normal(size=200) > 0).astype(float)
    w = np.zeros(5)
    grad, hessian_times = tg.value_and_grad(loss), tg.hvp(loss)
    for step in range(6):
        value, g = grad(w, X, y)
        print(f"step {step}  loss {value:.8f}  |grad| {np.linalg.norm(g):.2e}")
        w = w + conjugate_gradient(lambda v: hessian_times(w, X, y, v), -g)
    H = tg.hessian(loss)(w, X, y)
    print("hvp matches the Hessian:", np.allclose(hessian_times(w, X, y, np.ones(5)), H @ np.ones(5)))


if __name__ == "__main__":
    main()

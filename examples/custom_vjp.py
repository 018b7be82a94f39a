"""A custom VJP: a numerically stable softplus, checked with gradcheck.

softplus(x) = log(1 + e^x). Written naively its derivative overflows for large
x; with tg.custom_vjp we give tapegen the stable form 1 / (1 + e^-x), see it
called by name in the generated code, and check it against finite differences.

Run: python examples/custom_vjp.py
"""
import numpy as np

import tapegen as tg


@tg.custom_vjp
def softplus(x):
    return np.logaddexp(0.0, x)


def softplus_fwd(x):
    return softplus(x), (x,)


def softplus_bwd(residuals, g):
    (x,) = residuals
    return (g * np.exp(-np.logaddexp(0.0, -x)),)  # g / (1 + e^-x), without overflow


softplus.defvjp(softplus_fwd, softplus_bwd)


def loss(w, x, y):
    return np.mean(softplus(-y * (x @ w)))  # the logistic loss, written with softplus


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 4))
    y = np.sign(rng.normal(size=32))
    w = rng.normal(size=4)
    print(tg.source(loss))
    print("gradient:", np.round(tg.grad(loss)(w, x, y), 6))
    print(tg.gradcheck(loss, w, x, y))
    big = np.array([-1000.0, 0.0, 1000.0])
    print("softplus'(x) at", big, "=", tg.grad(lambda v: np.sum(softplus(v)))(big))


if __name__ == "__main__":
    main()

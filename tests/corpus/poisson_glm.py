"""A Poisson GLM with a log link and exposure offset, with the log-factorial constant from math.lgamma."""
import math

import numpy as np


def poisson_nll(beta, X, counts, exposure):
    eta = X @ beta + np.log(exposure)
    mu = np.exp(eta)
    log_factorial = sum(math.lgamma(k + 1) for k in counts)
    return np.sum(mu - counts * eta) + log_factorial


def negative_binomial_nll(beta, log_alpha, X, counts):
    alpha = math.exp(log_alpha)
    mu = np.exp(X @ beta)
    r = 1.0 / alpha
    ll = (counts * np.log(alpha * mu / (1 + alpha * mu)) - r * np.log(1 + alpha * mu))
    return -np.sum(ll) - sum(math.lgamma(k + r) - math.lgamma(r) for k in counts)


def cases():
    rs = np.random.RandomState(40)
    X = np.hstack([np.ones((8, 1)), rs.randn(8, 2)])
    counts = rs.poisson(3.0, size=8).astype(float)
    exposure = rs.uniform(0.5, 2.0, size=8)
    beta = np.array([0.8, 0.2, -0.1])
    return [(poisson_nll, (beta, X, counts, exposure)),
            (negative_binomial_nll, (beta, -0.7, X, counts)),
            # as fitted: with respect to the coefficients only (the dispersion needs a derivative of lgamma)
            (poisson_nll, (beta, X, counts, exposure), {"positions": [0]}),
            (negative_binomial_nll, (beta, -0.7, X, counts), {"positions": [0]})]

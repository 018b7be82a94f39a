"""Heteroscedastic regression with parameters grouped in a namedtuple, unpacked by attribute."""
import math
from collections import namedtuple

import numpy as np

Params = namedtuple("Params", ["W", "b", "log_sigma"])
Batch = namedtuple("Batch", "x y")

LOG_2PI = math.log(2 * math.pi)


def predict(params, x):
    mean = x @ params.W + params.b
    return mean, np.exp(params.log_sigma)


def gaussian_nll(params: Params, batch: Batch) -> float:
    mean, sigma = predict(params, batch.x)
    z = (batch.y - mean) / sigma
    return np.mean(0.5 * z ** 2 + np.log(sigma) + 0.5 * LOG_2PI)


def loss(W, b, log_sigma, x, y):
    params = Params(W=W, b=b, log_sigma=log_sigma)
    return gaussian_nll(params, Batch(x, y))


def loss_replace(W, b, x, y):
    params = Params(W, b, 0.0)
    params = params._replace(log_sigma=-1.0)
    W, b, log_sigma = params
    return gaussian_nll(Params(W, b, log_sigma), Batch(x=x, y=y))


def cases():
    rs = np.random.RandomState(27)
    x, y = rs.randn(6, 3), rs.randn(6)
    return [(loss, (rs.randn(3), 0.2, -0.3, x, y)),
            (loss_replace, (rs.randn(3), 0.2, x, y))]

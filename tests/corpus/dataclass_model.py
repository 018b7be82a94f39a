"""A linear-Gaussian state observation model with its configuration in dataclasses."""
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Config:
    l2: float = 1e-2
    noise_std: float = 0.5
    clip: float = 5.0


@dataclass
class LinearModel:
    W: np.ndarray
    b: np.ndarray
    config: Config = field(default_factory=Config)

    def predict(self, X):
        return X @ self.W + self.b

    def log_likelihood(self, X, Y):
        resid = (Y - self.predict(X)) / self.config.noise_std
        return -0.5 * np.sum(resid ** 2)

    def penalty(self):
        return 0.5 * self.config.l2 * np.sum(self.W ** 2)


def objective(W, b, X, Y, config):
    model = LinearModel(W, b, config)
    return -model.log_likelihood(X, Y) + model.penalty()


def cases():
    rs = np.random.RandomState(28)
    return [(objective, (rs.randn(3, 2), rs.randn(2), rs.randn(5, 3), rs.randn(5, 2), Config(l2=0.1)))]

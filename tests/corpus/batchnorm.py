"""Batch normalization with running statistics, in the style of numpy-ml's BatchNorm1D."""
import numpy as np


class BatchNorm1D:
    def __init__(self, momentum=0.9, epsilon=1e-5):
        self.momentum = momentum
        self.epsilon = epsilon
        self.trainable = True
        self.parameters = {"scaler": None, "intercept": None,
                           "running_var": None, "running_mean": None}
        self.hyperparameters = {"momentum": momentum, "epsilon": epsilon}
        self.X = []

    def _init_params(self, n_in):
        self.parameters["running_mean"] = np.zeros(n_in)
        self.parameters["running_var"] = np.ones(n_in)

    def forward(self, X, scaler, intercept, retain_derived=True):
        """Compute the output of the batchnorm layer."""
        if self.parameters["running_mean"] is None:
            self._init_params(X.shape[1])

        if not self.trainable and X.shape[0] == 1:
            raise ValueError("batch size must be greater than 1 in training mode")

        ep = self.hyperparameters["epsilon"]
        mm = self.hyperparameters["momentum"]
        rm = self.parameters["running_mean"]
        rv = self.parameters["running_var"]

        X_mean = self.parameters["running_mean"]
        X_var = self.parameters["running_var"]

        if self.trainable and retain_derived:
            X_mean, X_var = X.mean(axis=0), X.var(axis=0)  # , ddof=1)
            self.parameters["running_mean"] = mm * rm + (1.0 - mm) * X_mean
            self.parameters["running_var"] = mm * rv + (1.0 - mm) * X_var

        if retain_derived:
            self.X.append(X)

        N = (X - X_mean) / np.sqrt(X_var + ep)
        y = scaler * N + intercept
        return y


def batchnorm_loss(X, scaler, intercept, target):
    bn = BatchNorm1D()
    y = bn.forward(X, scaler, intercept)
    return np.sum((y - target) ** 2)


def batchnorm_by_hand(x, gamma, beta, eps=1e-5):
    """cs231n's batchnorm_forward in training mode, step by step."""
    N, D = x.shape
    mu = 1. / N * np.sum(x, axis=0)
    xmu = x - mu
    sq = xmu ** 2
    var = 1. / N * np.sum(sq, axis=0)
    sqrtvar = np.sqrt(var + eps)
    ivar = 1. / sqrtvar
    xhat = xmu * ivar
    gammax = gamma * xhat
    out = gammax + beta
    return np.sum(np.tanh(out))


def cases():
    rs = np.random.RandomState(20)
    X = rs.randn(6, 3)
    return [(batchnorm_loss, (X, 1.0 + 0.1 * rs.randn(3), 0.1 * rs.randn(3), rs.randn(6, 3))),
            (batchnorm_by_hand, (rs.randn(5, 4), rs.randn(4), rs.randn(4)))]

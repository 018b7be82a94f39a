"""Activation functions as classes, in the style of numpy-ml's neural_nets/activations/activations.py."""
import math
from abc import ABC, abstractmethod

import numpy as np


class ActivationBase(ABC):
    def __init__(self, **kwargs):
        """Initialize the ActivationBase object"""
        super().__init__()

    def __call__(self, z):
        """Apply the activation function to an input"""
        if z.ndim == 1:
            z = z.reshape(1, -1)
        return self.fn(z)

    @abstractmethod
    def fn(self, z):
        """Apply the activation function to an input"""
        raise NotImplementedError


class Sigmoid(ActivationBase):
    def __str__(self):
        return "Sigmoid"

    def fn(self, z):
        return 1 / (1 + np.exp(-z))


class Tanh(ActivationBase):
    def __str__(self):
        return "Tanh"

    def fn(self, z):
        return np.tanh(z)


class LeakyReLU(ActivationBase):
    def __init__(self, alpha=0.3):
        self.alpha = alpha
        super().__init__()

    def __str__(self):
        return "Leaky ReLU(alpha={})".format(self.alpha)

    def fn(self, z):
        _z = z.copy()
        _z[z < 0] = _z[z < 0] * self.alpha
        return _z


class ELU(ActivationBase):
    def __init__(self, alpha=1.0):
        self.alpha = alpha
        super().__init__()

    def __str__(self):
        return "ELU(alpha={})".format(self.alpha)

    def fn(self, z):
        return np.where(z > 0, z, self.alpha * (np.exp(z) - 1))


class SELU(ActivationBase):
    def __init__(self):
        self.alpha = 1.6732632423543772848170429916717
        self.scale = 1.0507009873554804934193349852946
        self.elu = ELU(alpha=self.alpha)
        super().__init__()

    def fn(self, z):
        return self.scale * self.elu.fn(z)


class SoftPlus(ActivationBase):
    def __str__(self):
        return "SoftPlus"

    def fn(self, z):
        return np.log(np.exp(z) + 1)


class GELU(ActivationBase):
    def __init__(self, approximate=True):
        self.approximate = approximate
        super().__init__()

    def fn(self, z):
        if self.approximate:
            return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))
        return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * z))


class Exponential(ActivationBase):
    def fn(self, z):
        return np.exp(z)


ACTIVATIONS = [Sigmoid(), Tanh(), LeakyReLU(), ELU(), SELU(), SoftPlus(), GELU(), Exponential()]


def activation_sum(z, weights):
    """A weighted sum of every activation over z, each called as a function object."""
    return sum(w * np.sum(act(z)) for act, w in zip(ACTIVATIONS, weights))


def elu_mlp(X, W1, W2):
    elu = ELU(alpha=0.5)
    softplus = SoftPlus()
    h = elu(X @ W1)
    return np.mean(softplus(h @ W2))


def cases():
    rs = np.random.RandomState(17)
    z = rs.randn(3, 4)
    z = np.where(np.abs(z) < 0.05, 0.3, z)   # away from the kinks at 0
    weights = [1.0, 0.5, -0.3, 0.7, 0.2, 1.1, -0.4, 0.1]
    return [(activation_sum, (z, weights)),
            (elu_mlp, (rs.randn(4, 3), rs.randn(3, 4), rs.randn(4, 2)))]

"""Models written as classes, differentiated through their bound methods (tests/test_objects.py)."""
import numpy as np


def relu(z):
    return np.maximum(z, 0.0)


class MLP:
    """An activation function kept in an attribute (`self.act = np.tanh`), as from-scratch code does."""

    def __init__(self, W1, W2, act=np.tanh):
        self.W1, self.W2 = W1, W2
        self.act = act

    def loss(self, x):
        h = self.act(self.W1 @ x)
        return np.sum((self.W2 @ h) ** 2)

    def __call__(self, x):
        return self.loss(x)


class Layer:
    def __init__(self, W, act):
        self.W, self.act = W, act

    def forward(self, x):
        return self.act(self.W @ x)


class Sequential:
    """Layers of one class, each with its own activation, in a list attribute."""

    def __init__(self, layers):
        self.layers = layers

    def loss(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return np.sum(x ** 2)


class Stack:
    """A list of functions in an attribute, and a lambda in another."""

    def __init__(self):
        self.acts = [np.tanh, np.sin]
        self.scale = lambda z: 2.0 * z

    def f(self, x):
        for a in self.acts:
            x = a(x)
        return np.sum(self.scale(x))

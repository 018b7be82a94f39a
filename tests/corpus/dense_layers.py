"""A fully connected network built from layer objects, in the style of numpy-ml's neural_nets/layers."""
import numpy as np


class ReLU:
    def __str__(self):
        return "ReLU"

    def fn(self, z):
        return np.clip(z, 0, np.inf)


class Tanh:
    def __str__(self):
        return "Tanh"

    def fn(self, z):
        return np.tanh(z)


class Affine:
    def __init__(self, slope=1, intercept=0):
        self.slope = slope
        self.intercept = intercept

    def fn(self, z):
        return self.slope * z + self.intercept


class FullyConnected:
    def __init__(self, n_out, act_fn=None, W=None, b=None):
        self.n_out = n_out
        self.act_fn = Affine(slope=1, intercept=0) if act_fn is None else act_fn
        self.parameters = {"W": W, "b": b}
        self.derived_variables = {"Z": []}
        self.X = []
        self.is_initialized = W is not None

    def forward(self, X, retain_derived=True):
        """Compute the layer output on a single minibatch.

        Parameters
        ----------
        X : :py:class:`ndarray <numpy.ndarray>` of shape `(n_ex, n_in)`
            Layer input, representing the `n_in`-dimensional features for a
            minibatch of `n_ex` examples.
        """
        if not self.is_initialized:
            raise ValueError("layer parameters have not been set")

        Y, Z = self._fwd(X)

        if retain_derived:
            self.X.append(X)
            self.derived_variables["Z"].append(Z)

        return Y

    def _fwd(self, X):
        """Actual computation of forward pass"""
        W = self.parameters["W"]
        b = self.parameters["b"]

        Z = X @ W + b
        Y = self.act_fn.fn(Z)
        return Y, Z


class SquaredError:
    def __call__(self, y, y_pred):
        return self.loss(y, y_pred)

    @staticmethod
    def loss(y, y_pred):
        return 0.5 * np.linalg.norm(y_pred - y) ** 2


def mlp_loss(params, X, y):
    layers = [FullyConnected(W.shape[1], act_fn=Tanh(), W=W, b=b) for W, b in params[:-1]]
    W_out, b_out = params[-1]
    layers.append(FullyConnected(W_out.shape[1], W=W_out, b=b_out))
    out = X
    for layer in layers:
        out = layer.forward(out)
    return SquaredError()(y, out)


def relu_net(W1, b1, W2, b2, X, y):
    fc1 = FullyConnected(4, act_fn=ReLU(), W=W1, b=b1)
    fc2 = FullyConnected(1, W=W2, b=b2)
    y_pred = fc2.forward(fc1.forward(X))
    return SquaredError.loss(y, y_pred) / X.shape[0]


def cases():
    rs = np.random.RandomState(18)
    params = [(0.5 * rs.randn(3, 4), 0.1 * rs.randn(4)), (0.5 * rs.randn(4, 4), 0.1 * rs.randn(4)),
              (0.5 * rs.randn(4, 2), 0.1 * rs.randn(2))]
    X, y = rs.randn(5, 3), rs.randn(5, 2)
    W1, b1 = rs.randn(3, 4), rs.randn(4)
    W2, b2 = rs.randn(4, 1), rs.randn(1)
    return [(mlp_loss, (params, X, y)),
            (relu_net, (W1, b1, W2, b2, X, rs.randn(5, 1)))]

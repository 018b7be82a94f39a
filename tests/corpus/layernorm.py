"""Layer normalization and RMS normalization in a pre-norm residual block."""
import numpy as np


class LayerNorm1D:
    def __init__(self, epsilon=1e-5):
        self.epsilon = epsilon
        self.X = []

    def forward(self, X, scaler, intercept, retain_derived=True):
        if retain_derived:
            self.X.append(X)
        X_mean, X_var = X.mean(axis=1, keepdims=True), X.var(axis=1, keepdims=True)
        lnorm = (X - X_mean) / np.sqrt(X_var + self.epsilon)
        y = scaler * lnorm + intercept
        return y


def rms_norm(x, weight, eps=1e-6):
    return x / np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + eps) * weight


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * np.power(x, 3))))


def residual_block(x, gamma, beta, W1, W2):
    ln = LayerNorm1D()
    h = ln.forward(x, gamma, beta)
    return x + gelu(h @ W1) @ W2


def block_loss(x, gamma, beta, W1, W2, rms_weight):
    y = residual_block(x, gamma, beta, W1, W2)
    return np.mean(rms_norm(y, rms_weight) ** 2)


def cases():
    rs = np.random.RandomState(21)
    return [(block_loss, (rs.randn(3, 4), 1 + 0.1 * rs.randn(4), 0.1 * rs.randn(4),
                          0.5 * rs.randn(4, 6), 0.5 * rs.randn(6, 4), 1 + 0.1 * rs.randn(4)))]

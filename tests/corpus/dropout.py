"""Inverted dropout with a fixed mask, in the style of numpy-ml's DropoutWrapper and cs231n's dropout_forward."""
import numpy as np


class Dropout:
    def __init__(self, p, mask):
        assert 0.0 <= p < 1.0, "p must be in [0, 1)"
        self.p = p
        self.trainable = True
        self._mask = mask

    def forward(self, X):
        scaler = 1.0
        if self.trainable:
            scaler = 1.0 / (1.0 - self.p)
            X = X * self._mask
        return scaler * X


def dropout_forward(x, dropout_param):
    p, mode = dropout_param['p'], dropout_param['mode']
    if mode == 'train':
        mask = dropout_param['mask'] / p
        out = x * mask
    elif mode == 'test':
        out = x
    else:
        raise ValueError('Invalid forward dropout mode "%s"' % mode)
    out = out.astype(x.dtype, copy=False)
    return out


def net_with_dropout(W1, W2, X, y, mask):
    h = np.tanh(X @ W1)
    h = Dropout(0.25, mask).forward(h)
    return np.mean((h @ W2 - y) ** 2)


def cs231n_dropout(x, W, mask):
    out = dropout_forward(x @ W, {'p': 0.5, 'mode': 'train', 'mask': mask})
    return np.sum(out ** 2)


def cases():
    rs = np.random.RandomState(22)
    X, y = rs.randn(4, 3), rs.randn(4, 2)
    mask = (rs.rand(4, 5) > 0.25).astype(float)
    return [(net_with_dropout, (rs.randn(3, 5), rs.randn(5, 2), X, y, mask)),
            (cs231n_dropout, (X, rs.randn(3, 5), (rs.rand(4, 5) > 0.5).astype(float)))]

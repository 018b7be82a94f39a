"""A small convolutional net with im2col written as loops (autograd's examples/convnet.py and cs231n's layers)."""
import numpy as np


def im2col(x, field_height, field_width, stride=1):
    """Lay out every (C, fh, fw) patch of x (N, C, H, W) as a column."""
    N, C, H, W = x.shape
    assert (H - field_height) % stride == 0, "field does not tile the image"
    out_height = (H - field_height) // stride + 1
    out_width = (W - field_width) // stride + 1
    cols = np.zeros((N, C * field_height * field_width, out_height * out_width))
    for i in range(out_height):
        for j in range(out_width):
            patch = x[:, :, i * stride:i * stride + field_height, j * stride:j * stride + field_width]
            cols[:, :, i * out_width + j] = patch.reshape(N, -1)
    return cols, out_height, out_width


def conv_forward(x, w, b, stride=1):
    N = x.shape[0]
    F, C, HH, WW = w.shape
    cols, out_h, out_w = im2col(x, HH, WW, stride)
    out = np.einsum('fk,nkp->nfp', w.reshape(F, -1), cols) + b[None, :, None]
    return out.reshape(N, F, out_h, out_w)


def conv_loops(x, w):
    """The same convolution, the way a first implementation writes it."""
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    H_out, W_out = H - HH + 1, W - WW + 1
    out = np.zeros((N, F, H_out, W_out))
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    out[n, f, i, j] = np.sum(x[n, :, i:i + HH, j:j + WW] * w[f])
    return out


def avg_pool(x, size=2):
    N, C, H, W = x.shape
    return x.reshape(N, C, H // size, size, W // size, size).mean(axis=(3, 5))


def logsoftmax(x):
    return x - np.log(np.sum(np.exp(x), axis=1, keepdims=True))


def convnet_loss(conv_w, conv_b, fc_w, images, labels):
    h = np.tanh(conv_forward(images, conv_w, conv_b))
    h = avg_pool(h)
    logits = h.reshape(h.shape[0], -1) @ fc_w
    return -np.mean(np.sum(logsoftmax(logits) * labels, axis=1))


def loop_conv_loss(w, images):
    return np.sum(np.tanh(conv_loops(images, w)) ** 2)


def cases():
    rs = np.random.RandomState(14)
    images = rs.randn(2, 1, 5, 5)
    conv_w = 0.5 * rs.randn(2, 1, 2, 2)
    conv_b = 0.1 * rs.randn(2)
    fc_w = 0.5 * rs.randn(8, 3)
    labels = np.eye(3)[[0, 2]]
    return [(convnet_loss, (conv_w, conv_b, fc_w, images, labels)),
            (loop_conv_loss, (conv_w, rs.randn(1, 1, 4, 4)))]

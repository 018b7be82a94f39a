"""Deep chains with and without checkpointing (issue 6)."""
import numpy as np

import tapegen as tg


def layer(h):
    return np.tanh(h * 1.01 + 0.1)


def eight_layers(h):
    for _ in range(8):
        h = layer(h)
    return h


segment = tg.checkpoint(eight_layers)


def chain(x):
    h = x
    for _ in range(64):
        h = layer(h)
    return np.sum(h ** 2)


def checkpointed_chain(x):
    h = x
    for _ in range(8):
        h = segment(h)
    return np.sum(h ** 2)


inner = tg.checkpoint(layer)


def two_layers_inner_checkpointed(h):
    return inner(inner(h))


outer = tg.checkpoint(two_layers_inner_checkpointed)


def nested(x, w):
    h = outer(x * w)
    return np.sum(outer(h) * w)

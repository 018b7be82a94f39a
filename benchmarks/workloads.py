"""The benchmark workloads: each a plain NumPy function and a hand-written value-and-gradient.

Issue 7's six speed workloads (`SPEED`) and issue 6's memory workloads
(`MEMORY`). A workload's function is written once, in plain NumPy, in this
file (tapegen reads its source; `rebind` runs the same code with autograd's or
JAX's NumPy). Its hand-written gradient is what a careful person writes by
hand: the floor tapegen's generated code is measured against.

Every hand-written function returns `(value, gradients)`, with `gradients` a
tuple in the order of the workload's `wrt`, exactly as
`tapegen.value_and_grad(f, wrt=wrt)` does.

Example:
    >>> import numpy as np
    >>> w = SPEED["mlp_small"]
    >>> args = w.make(np.random.default_rng(0), "test")
    >>> value, grads = w.hand(*args)
"""
from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Workload:
    """One benchmark: the function, what it is differentiated with respect to, and how to make inputs.

    `make(rng, size)` returns the positional arguments; `size` is "full" (the
    issue's sizes), "quick" (smaller, only where the full size is slow) or
    "test" (tiny, for finite differences). `variants` are extra hand-written
    value-and-gradient functions (the in-place one on the elementwise chain).
    """

    name: str
    title: str
    fn: Callable
    wrt: tuple
    make: Callable
    hand: Callable
    variants: dict = field(default_factory=dict)


def rebind(fn, numpy_module):
    """`fn` with its global `np` replaced by `numpy_module` (autograd.numpy, jax.numpy): the same code."""
    names = dict(fn.__globals__)
    names["np"] = numpy_module
    return types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__, fn.__closure__)


# --- 1. a scalar function on Python floats --------------------------------------------------------


def scalar(x, y):
    t = np.tanh(x * y)
    return t * x + y / x


def scalar_hand(x, y):
    t = np.tanh(x * y)
    value = t * x + y / x
    g_xy = x * (1.0 - t * t)
    return value, (g_xy * y + t - y / (x * x), g_xy * x + 1.0 / x)


def _make_scalar(rng, size):
    return 0.7, 1.3


# --- 2, 3. a tanh MLP -----------------------------------------------------------------------------


def mlp(W1, b1, W2, b2, x, y):
    h = np.tanh(x @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


def mlp_hand(W1, b1, W2, b2, x, y):
    h = np.tanh(x @ W1 + b1)
    d = h @ W2 + b2 - y
    value = np.mean(d * d)
    g_out = d * (2.0 / d.size)  # a Python float keeps float32 float32
    g_a = (g_out @ W2.T) * (1.0 - h * h)
    return value, (x.T @ g_a, g_a.sum(axis=0), h.T @ g_out, g_out.sum(axis=0))


def _mlp_maker(n_in, n_hidden, n_out, batch, dtype, quick_scale=1):
    def make(rng, size):
        scale = {"full": 1, "quick": quick_scale, "test": 0}[size]
        i, h, o, b = (n_in, n_hidden, n_out, batch) if scale == 1 else \
            (n_in // scale, n_hidden // scale, n_out, batch // scale) if scale else (4, 5, 3, 6)
        arrays = (rng.normal(size=(i, h)) / np.sqrt(i), rng.normal(size=h) * 0.1,
                  rng.normal(size=(h, o)) / np.sqrt(h), rng.normal(size=o) * 0.1,
                  rng.normal(size=(b, i)), rng.normal(size=(b, o)))
        return tuple(a.astype(dtype) for a in arrays)
    return make


# --- 4. softmax cross-entropy ---------------------------------------------------------------------


def softmax_xent(W, b, x, Y):
    logits = x @ W + b
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * logp, axis=1))


def softmax_xent_hand(W, b, x, Y):
    """Assumes one-hot rows of `Y` (as everyone does): the gradient through the max is then zero."""
    logits = x @ W + b
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    value = -np.mean(np.sum(Y * (z - np.log(s)), axis=1))
    g = (e / s - Y) / len(x)
    return value, (x.T @ g, g.sum(axis=0))


def _make_softmax(rng, size):
    n, d, k = (256, 100, 10) if size != "test" else (7, 5, 4)
    Y = np.eye(k)[rng.integers(0, k, size=n)]
    return rng.normal(size=(d, k)) / np.sqrt(d), rng.normal(size=k) * 0.1, rng.normal(size=(n, d)), Y


# --- 5. a tanh RNN in a Python loop ---------------------------------------------------------------


def rnn(Wx, Wh, b, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(x @ Wx + h @ Wh + b)
    return np.sum(h * h)


def rnn_hand(Wx, Wh, b, xs, h0):
    hs = [h0]
    for x in xs:
        hs.append(np.tanh(x @ Wx + hs[-1] @ Wh + b))
    h = hs[-1]
    value = np.sum(h * h)
    g_h = 2.0 * h
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    for t in range(len(xs) - 1, -1, -1):
        g_a = g_h * (1.0 - hs[t + 1] * hs[t + 1])
        dWx += xs[t].T @ g_a
        dWh += hs[t].T @ g_a
        db += g_a.sum(axis=0)
        g_h = g_a @ Wh.T
    return value, (dWx, dWh, db)


def _make_rnn(rng, size):
    steps, batch, n_in, hidden = (50, 16, 32, 64) if size != "test" else (4, 3, 2, 5)
    return (rng.normal(size=(n_in, hidden)) / np.sqrt(n_in), rng.normal(size=(hidden, hidden)) / np.sqrt(hidden),
            rng.normal(size=hidden) * 0.1, rng.normal(size=(steps, batch, n_in)), np.zeros((batch, hidden)))


# --- 6. 30 elementwise ops ------------------------------------------------------------------------


def elementwise(x):
    # Written out, not looped: in straight-line code tapegen sees every value's lifetime (a loop goes
    # through the tape), which is what buffer reuse needs.
    y = np.sin(x)
    y = y * x
    y = np.tanh(y)
    y = np.sin(y)
    y = y * x
    y = np.tanh(y)
    y = np.sin(y)
    y = y * x
    y = np.tanh(y)
    y = np.sin(y)
    y = y * x
    y = np.tanh(y)
    y = np.sin(y)
    y = y * x
    y = np.tanh(y)
    y = np.sin(y)
    y = y * x
    y = np.tanh(y)
    y = np.sin(y)
    y = y * x
    y = np.tanh(y)
    y = np.sin(y)
    y = y * x
    y = np.tanh(y)
    y = np.sin(y)
    y = y * x
    y = np.tanh(y)
    y = np.sin(y)
    y = y * x
    y = np.tanh(y)
    return np.sum(y)


def elementwise_hand(x):
    """The naive backward pass: every residual kept, a new array for every intermediate."""
    saved, y = [], x
    for _ in range(10):
        s = np.sin(y)
        t = np.tanh(s * x)
        saved.append((y, s, t))
        y = t
    value = np.sum(y)
    g = np.ones_like(x)
    g_x = np.zeros_like(x)
    for y_in, s, t in reversed(saved):
        g = g * (1.0 - t * t)
        g_x = g_x + g * s
        g = g * x * np.cos(y_in)
    return value, (g_x + g,)


def elementwise_inplace(x):
    """The same, with `out=` into dead buffers: what a person rarely bothers to write."""
    saved, y = [], x
    for _ in range(10):
        s = np.sin(y)
        t = np.multiply(s, x)
        np.tanh(t, out=t)
        saved.append((y, s, t))
        y = t
    value = np.sum(y)
    g = np.ones_like(x)
    g_x = np.zeros_like(x)
    work = np.empty_like(x)
    while saved:
        y_in, s, t = saved.pop()  # y_in is the previous block's t: read, never overwritten
        np.multiply(t, t, out=t)
        np.subtract(1.0, t, out=t)
        g *= t
        del t
        np.multiply(g, s, out=s)
        g_x += s
        del s
        g *= x
        g *= np.cos(y_in, out=work)
    g_x += g
    return value, (g_x,)


def _make_elementwise(rng, size):
    n = {"full": 1_000_000, "quick": 100_000, "test": 7}[size]
    return (rng.uniform(-1.0, 1.0, size=n),)


# --- issue 6: a 64-layer elementwise chain, and a deeper MLP ---------------------------------------


def chain_segment(h):
    for _ in range(8):
        h = h + 0.1 * np.tanh(h)
    return h


def chain(x):
    h = x
    for _ in range(8):
        h = chain_segment(h)
    return np.sum(h * h)


def chain_hand(x):
    """64 layers: one saved array per layer, as `state_loop_hand`."""
    return state_loop_hand(x, 64)


def _make_chain(rng, size):
    n = {"full": 200_000, "quick": 200_000, "test": 5}[size]
    return (rng.uniform(-1.0, 1.0, size=n),)


def deep_mlp(Ws, x):
    h = x
    for W in Ws:
        h = np.tanh(h @ W)
    return np.mean(h * h)


def deep_mlp_hand(Ws, x):
    hs = [x]
    for W in Ws:
        hs.append(np.tanh(hs[-1] @ W))
    h = hs.pop()
    value = np.mean(h * h)
    g = h * (2.0 / h.size)
    grads = [None] * len(Ws)
    for k in range(len(Ws) - 1, -1, -1):
        g = g * (1.0 - h * h)
        h = hs.pop()
        grads[k] = h.T @ g
        g = g @ Ws[k].T
    return value, (grads,)


def deep_mlp_hand_checkpointed(Ws, x, step):
    """`deep_mlp_hand` keeping only every `step`-th activation; each segment is recomputed going back."""
    starts = range(0, len(Ws), step)
    inputs, h = [], x
    for start in starts:
        inputs.append(h)
        for W in Ws[start:start + step]:
            h = np.tanh(h @ W)
    value = np.mean(h * h)
    g = h * (2.0 / h.size)
    grads = [None] * len(Ws)
    for start in reversed(starts):
        hs = [inputs.pop()]
        for W in Ws[start:start + step]:
            hs.append(np.tanh(hs[-1] @ W))
        for k in range(min(start + step, len(Ws)) - 1, start - 1, -1):
            h = hs.pop()
            g = g * (1.0 - h * h)
            grads[k] = hs[-1].T @ g
            g = g @ Ws[k].T
    return value, (grads,)


def make_deep_mlp(rng, size, layers=16, width=256, batch=512):
    layers, width, batch = (layers, width, batch) if size != "test" else (3, 4, 5)
    return [rng.normal(size=(width, width)) / np.sqrt(width) for _ in range(layers)], rng.normal(size=(batch, width))


# --- large-state loops: page faults in a fresh process ------------------------------------------


def state_loop(x, steps):
    h = x
    for _ in range(steps):
        h = h + 0.1 * np.tanh(h)
    return np.sum(h * h)


def state_loop_hand(x, steps):
    """One saved array per step (the tanh output), freed as the backward pass passes it (`chain_hand` too)."""
    ys, h = [], x
    for _ in range(steps):
        y = np.tanh(h)
        ys.append(y)
        h = h + 0.1 * y
    value = np.sum(h * h)
    g = 2.0 * h
    del h
    while ys:
        y = ys.pop()
        g = g + g * (0.1 * (1.0 - y * y))
        del y
    return value, (g,)


def make_state_loop(rng, steps, n=100_000):
    return rng.uniform(-1.0, 1.0, size=n), steps


def make_wide_rnn(rng, steps, batch=1000, n_in=8, hidden=100):
    """The RNN workload with a 1e5-float state (batch 1000 x hidden 100)."""
    return (rng.normal(size=(n_in, hidden)) / np.sqrt(n_in), rng.normal(size=(hidden, hidden)) / np.sqrt(hidden),
            rng.normal(size=hidden) * 0.1, rng.normal(size=(steps, batch, n_in)), np.zeros((batch, hidden)))


SPEED = {w.name: w for w in [
    Workload("scalar", "scalar function on Python floats", scalar, ("x", "y"), _make_scalar, scalar_hand),
    Workload("mlp_small", "tanh MLP 64-64-10, batch 32", mlp, ("W1", "b1", "W2", "b2"),
             _mlp_maker(64, 64, 10, 32, np.float64), mlp_hand),
    Workload("mlp_large", "tanh MLP 1024-1024-10, batch 512, float32", mlp, ("W1", "b1", "W2", "b2"),
             _mlp_maker(1024, 1024, 10, 512, np.float32, quick_scale=2), mlp_hand),
    Workload("softmax", "softmax cross-entropy 256x100 -> 10", softmax_xent, ("W", "b"), _make_softmax,
             softmax_xent_hand),
    Workload("rnn", "tanh RNN, 50 steps in a Python loop", rnn, ("Wx", "Wh", "b"), _make_rnn, rnn_hand),
    Workload("elementwise", "30 elementwise ops on 1e6 floats", elementwise, ("x",), _make_elementwise,
             elementwise_hand, {"in-place": elementwise_inplace}),
]}

MEMORY = {w.name: w for w in [
    Workload("chain", "64-layer elementwise chain, 200k floats", chain, ("x",), _make_chain, chain_hand),
    Workload("deep_mlp", "16-layer tanh MLP 256 wide, batch 512", deep_mlp, ("Ws",), make_deep_mlp,
             deep_mlp_hand),
]}

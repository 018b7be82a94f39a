"""Multi-head self-attention with a causal mask, as a transformer tutorial writes it in NumPy."""
import math

import numpy as np


def softmax(x, axis=-1):
    e_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e_x / e_x.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.shape[-1]
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = softmax(scores, axis=-1)
    return weights @ v, weights


def split_heads(x, n_heads):
    T, d_model = x.shape
    return x.reshape(T, n_heads, d_model // n_heads).transpose(1, 0, 2)


def combine_heads(x):
    n_heads, T, d_head = x.shape
    return x.transpose(1, 0, 2).reshape(T, n_heads * d_head)


def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads=2):
    T = x.shape[0]
    q = split_heads(x @ W_q, n_heads)
    k = split_heads(x @ W_k, n_heads)
    v = split_heads(x @ W_v, n_heads)
    causal_mask = np.tril(np.ones((T, T), dtype=bool))
    out, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask)
    return combine_heads(out) @ W_o


def attention_loss(x, W_q, W_k, W_v, W_o, target):
    y = multi_head_attention(x, W_q, W_k, W_v, W_o)
    return 0.5 * np.sum((y - target) ** 2)


def cases():
    rs = np.random.RandomState(16)
    T, d = 4, 4
    x = rs.randn(T, d)
    Ws = [0.5 * rs.randn(d, d) for _ in range(4)]
    target = rs.randn(T, d)
    return [(attention_loss, (x, *Ws, target))]

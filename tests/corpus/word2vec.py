"""Skip-gram with negative sampling (word2vec), as tutorials write it in NumPy."""
import numpy as np


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def log_sigmoid(x):
    return -np.logaddexp(0, -x)


def negative_sampling_loss(center_vec, outside_idx, outside_vectors, neg_indices):
    """The loss for one (center, outside) pair: -log s(u_o . v_c) - sum_k log s(-u_k . v_c)."""
    u_o = outside_vectors[outside_idx]
    loss = -log_sigmoid(u_o @ center_vec)
    for k in neg_indices:
        loss -= log_sigmoid(-outside_vectors[k] @ center_vec)
    return loss


def skipgram(W_in, W_out, pairs, negatives):
    total = 0.0
    for i, (center, context) in enumerate(pairs):
        total += negative_sampling_loss(W_in[center], context, W_out, negatives[i])
    return total / len(pairs)


def skipgram_vectorized(W_in, W_out, centers, contexts, negatives):
    v = W_in[centers]                                   # (B, d)
    pos = np.sum(v * W_out[contexts], axis=1)           # (B,)
    neg = np.einsum('bd,bkd->bk', v, W_out[negatives])  # (B, K)
    return -np.mean(log_sigmoid(pos) + np.sum(log_sigmoid(-neg), axis=1))


def cases():
    rs = np.random.RandomState(15)
    vocab, dim = 6, 3
    W_in = 0.5 * rs.randn(vocab, dim)
    W_out = 0.5 * rs.randn(vocab, dim)
    pairs = [(0, 1), (1, 2), (2, 0), (3, 5), (4, 3)]
    negatives = rs.randint(0, vocab, size=(5, 2))
    centers = np.array([c for c, _ in pairs])
    contexts = np.array([o for _, o in pairs])
    return [(skipgram, (W_in, W_out, pairs, negatives)),
            (skipgram_vectorized, (W_in, W_out, centers, contexts, negatives))]

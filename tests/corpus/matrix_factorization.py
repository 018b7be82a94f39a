"""Collaborative filtering by matrix factorization with biases (the Netflix-prize model), on observed entries."""
import numpy as np


def mf_loss(U, V, user_bias, item_bias, ratings, reg=0.05):
    """ratings: a list of (user, item, rating) triples."""
    mu = np.mean([r for _, _, r in ratings])
    loss = 0.0
    for u, i, r in ratings:
        pred = mu + user_bias[u] + item_bias[i] + U[u] @ V[i]
        loss += (r - pred) ** 2
    loss += reg * (np.sum(U ** 2) + np.sum(V ** 2) + np.sum(user_bias ** 2) + np.sum(item_bias ** 2))
    return loss / len(ratings)


def mf_loss_vectorized(U, V, rows, cols, values, mask_weight):
    pred = np.sum(U[rows] * V[cols], axis=1)
    return np.sum(mask_weight * (values - pred) ** 2) + 0.1 * (np.linalg.norm(U) ** 2 + np.linalg.norm(V) ** 2)


def cases():
    rs = np.random.RandomState(39)
    n_users, n_items, k = 4, 5, 2
    ratings = [(0, 1, 4.0), (0, 3, 2.0), (1, 0, 5.0), (2, 2, 3.0), (2, 4, 1.0), (3, 1, 4.5), (3, 3, 2.5)]
    U, V = 0.5 * rs.randn(n_users, k), 0.5 * rs.randn(n_items, k)
    rows = np.array([u for u, _, _ in ratings])
    cols = np.array([i for _, i, _ in ratings])
    values = np.array([r for _, _, r in ratings])
    return [(mf_loss, (U, V, 0.1 * rs.randn(n_users), 0.1 * rs.randn(n_items), ratings)),
            (mf_loss_vectorized, (U, V, rows, cols, values, rs.rand(7)))]

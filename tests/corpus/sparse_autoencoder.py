"""A sparse autoencoder with tied weights and a KL sparsity penalty (the UFLDL tutorial's cost function)."""
import numpy as np


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def kl_divergence(rho, rho_hat):
    return rho * np.log(rho / rho_hat) + (1 - rho) * np.log((1 - rho) / (1 - rho_hat))


def sparse_autoencoder_cost(theta, visible_size, hidden_size, lambda_, sparsity_param, beta, data):
    W1 = theta[0:hidden_size * visible_size].reshape(hidden_size, visible_size)
    b1 = theta[hidden_size * visible_size:hidden_size * visible_size + hidden_size]
    b2 = theta[hidden_size * visible_size + hidden_size:]
    m = data.shape[1]

    # Forward propagation (tied weights: the decoder is W1.T)
    z2 = W1.dot(data) + np.tile(b1, (m, 1)).transpose()
    a2 = sigmoid(z2)
    z3 = W1.transpose().dot(a2) + np.tile(b2, (m, 1)).transpose()
    h = sigmoid(z3)

    # Sparsity
    rho_hat = np.sum(a2, axis=1) / m
    rho = np.tile(sparsity_param, hidden_size)

    cost = np.sum((h - data) ** 2) / (2 * m) + \
        (lambda_ / 2) * np.sum(W1 ** 2) + \
        beta * np.sum(kl_divergence(rho, rho_hat))
    return cost


def cost_with_defaults(theta, data):
    return sparse_autoencoder_cost(theta, 4, 3, lambda_=1e-3, sparsity_param=0.1, beta=3, data=data)


def cases():
    rs = np.random.RandomState(41)
    theta = np.concatenate([0.3 * rs.randn(12), np.zeros(3), np.zeros(4)])
    data = rs.rand(4, 5)
    return [(cost_with_defaults, (theta, data))]

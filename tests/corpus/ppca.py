"""Probabilistic PCA's marginal log likelihood (Tipping & Bishop), with log det and trace."""
import numpy as np


def ppca_log_likelihood(W, log_sigma2, X):
    N, D = X.shape
    sigma2 = np.exp(log_sigma2)
    C = W @ W.T + sigma2 * np.eye(D)
    Xc = X - X.mean(axis=0)
    S = Xc.T @ Xc / N
    sign, logdet = np.linalg.slogdet(C)
    if sign <= 0:
        raise np.linalg.LinAlgError("covariance is not positive definite")
    return -0.5 * N * (D * np.log(2 * np.pi) + logdet + np.trace(np.linalg.solve(C, S)))


def ppca_via_inv(W, log_sigma2, X):
    """The same likelihood with the matrix inverse written out, as the paper's formula reads."""
    N, D = X.shape
    C = np.dot(W, W.T) + np.exp(log_sigma2) * np.identity(D)
    Cinv = np.linalg.inv(C)
    Xc = X - np.mean(X, axis=0)
    return -0.5 * (N * np.log(np.linalg.det(C)) + np.sum((Xc @ Cinv) * Xc)) - 0.5 * N * D * np.log(2 * np.pi)


def cases():
    rs = np.random.RandomState(29)
    X = rs.randn(8, 3) @ np.array([[1.0, 0.3, 0.0], [0.0, 1.0, 0.5], [0.0, 0.0, 0.4]])
    W = rs.randn(3, 2)
    return [(ppca_log_likelihood, (W, -1.0, X)),
            (ppca_via_inv, (W, -1.0, X))]

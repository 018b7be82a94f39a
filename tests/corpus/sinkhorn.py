"""Entropy-regularized optimal transport by Sinkhorn iterations (as in the POT library's sinkhorn_knopp)."""
import numpy as np


def sinkhorn_knopp(a, b, M, reg, numItermax=50, stopThr=1e-12):
    K = np.exp(M / (-reg))
    u = np.ones(a.shape[0]) / a.shape[0]
    v = np.ones(b.shape[0]) / b.shape[0]
    Kp = (1 / a).reshape(-1, 1) * K
    for ii in range(numItermax):
        uprev = u
        vprev = v
        KtransposeU = np.dot(K.T, u)
        v = b / KtransposeU
        u = 1. / np.dot(Kp, v)
        if np.any(KtransposeU == 0) or np.any(np.isnan(u)) or np.any(np.isnan(v)):
            # we have reached the machine precision
            # come back to previous solution and quit loop
            print('Warning: numerical errors at iteration', ii)
            u = uprev
            v = vprev
            break
    return u.reshape((-1, 1)) * K * v.reshape((1, -1))


def sinkhorn_loss(x, y, reg=0.5):
    a = np.full(x.shape[0], 1.0 / x.shape[0])
    b = np.full(y.shape[0], 1.0 / y.shape[0])
    M = np.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=2)
    G = sinkhorn_knopp(a, b, M, reg, numItermax=20)
    return np.sum(G * M)


def cases():
    rs = np.random.RandomState(33)
    return [(sinkhorn_loss, (rs.randn(4, 2), rs.randn(5, 2) + 0.5))]

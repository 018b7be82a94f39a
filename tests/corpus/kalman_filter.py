"""The log likelihood of a linear-Gaussian state space model by the Kalman filter, fit over noise parameters."""
import math

import numpy as np


def kalman_log_likelihood(log_q, log_r, ys, A, H, m0, P0):
    n = A.shape[0]
    Q = math.exp(log_q) * np.eye(n)
    R = np.exp(log_r) * np.eye(H.shape[0])
    m, P = m0, P0
    ll = 0.0
    for y in ys:
        # predict
        m = A @ m
        P = A @ P @ A.T + Q
        # update
        v = y - H @ m
        S = H @ P @ H.T + R
        K = P @ H.T @ np.linalg.inv(S)
        m = m + K @ v
        P = P - K @ S @ K.T
        _, logdet = np.linalg.slogdet(S)
        ll += -0.5 * (v @ np.linalg.solve(S, v) + logdet + len(v) * math.log(2 * math.pi))
    return ll


def smoothness_objective(ys, log_q, log_r):
    A = np.array([[1.0, 1.0], [0.0, 1.0]])      # constant velocity
    H = np.array([[1.0, 0.0]])
    return -kalman_log_likelihood(log_q, log_r, ys, A, H, np.zeros(2), np.eye(2))


def cases():
    rs = np.random.RandomState(46)
    ys = np.cumsum(rs.randn(6, 1), axis=0)
    return [(smoothness_objective, (ys, -1.0, 0.2))]

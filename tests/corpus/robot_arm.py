"""Inverse kinematics of a planar arm: forward kinematics as products of homogeneous transforms."""
import math

import numpy as np


def transform(theta, length):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s, length * c],
                     [s, c, length * s],
                     [0.0, 0.0, 1.0]])


def end_effector(thetas, lengths):
    if len(thetas) != len(lengths):
        raise ValueError(f"{len(thetas)} joint angles for {len(lengths)} links")
    T = np.eye(3)
    for theta, length in zip(thetas, lengths):
        T = T @ transform(theta, length)
    return T[:2, 2]


def ik_objective(thetas, target, lengths=(1.0, 0.8, 0.5)):
    pos = end_effector(thetas, lengths)
    # penalize joints near their limits, -pi/2 < theta < pi/2
    penalty = 0.0
    for theta in thetas:
        if -math.pi / 2 < theta < math.pi / 2:
            penalty += 0.01 * theta ** 2
        else:
            penalty += 1.0 + theta ** 2
    return np.sum((pos - target) ** 2) + penalty


def cases():
    thetas, target = np.array([0.3, -0.4, 0.9]), np.array([1.2, 1.0])
    return [(ik_objective, (thetas, target)),
            (ik_objective, (thetas, target, (1.0, 0.8, 0.5)))]

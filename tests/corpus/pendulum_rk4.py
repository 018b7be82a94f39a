"""Fitting a damped pendulum's parameters: an RK4 integrator taking the dynamics as a function and *args."""
import math

import numpy as np


def pendulum(state, t, g, length, damping):
    theta, omega = state[0], state[1]
    return np.array([omega, -(g / length) * np.sin(theta) - damping * omega])


def rk4_step(f, y, t, dt, *args):
    k1 = f(y, t, *args)
    k2 = f(y + dt / 2 * k1, t + dt / 2, *args)
    k3 = f(y + dt / 2 * k2, t + dt / 2, *args)
    k4 = f(y + dt * k3, t + dt, *args)
    return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def odeint(f, y0, ts, args=()):
    ys = [y0]
    y = y0
    for i in range(len(ts) - 1):
        y = rk4_step(f, y, ts[i], ts[i + 1] - ts[i], *args)
        ys.append(y)
    return np.stack(ys)


def trajectory_loss(log_params, y0, observed):
    g, length, damping = np.exp(log_params)
    ts = np.linspace(0, 1.0, observed.shape[0])
    traj = odeint(pendulum, y0, ts, args=(g, length, damping))
    return np.sum((traj[:, 0] - observed) ** 2)


def period_loss(length, amplitude):
    """Small-angle period with the first anharmonic correction, scalar math on Python floats."""
    g = 9.81
    T0 = 2 * math.pi * math.sqrt(length / g)
    return (T0 * (1 + amplitude ** 2 / 16) - 2.0) ** 2


def cases():
    y0 = np.array([0.8, 0.0])
    true = np.log(np.array([9.81, 1.0, 0.3]))
    observed = odeint(pendulum, y0, np.linspace(0, 1.0, 6), args=tuple(np.exp(true)))[:, 0]
    return [(trajectory_loss, (true + np.array([0.1, -0.05, 0.2]), y0, observed)),
            (period_loss, (1.2, 0.5))]

"""Karpathy's pg-pong.py policy network: a ReLU by masked write, discounted rewards, the REINFORCE surrogate."""
import numpy as np

gamma = 0.99  # discount factor for reward


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))  # sigmoid "squashing" function to interval [0,1]


def discount_rewards(r):
    """ take 1D float array of rewards and compute discounted reward """
    discounted_r = np.zeros_like(r)
    running_add = 0
    for t in reversed(range(0, r.size)):
        if r[t] != 0:
            running_add = 0  # reset the sum, since this was a game boundary (pong specific!)
        running_add = running_add * gamma + r[t]
        discounted_r[t] = running_add
    return discounted_r


def policy_forward(model, x):
    h = np.dot(model['W1'], x)
    h[h < 0] = 0  # ReLU nonlinearity
    logp = np.dot(model['W2'], h)
    p = sigmoid(logp)
    return p, h  # return probability of taking action 2, and hidden state


def reinforce_surrogate(model, observations, actions, rewards):
    discounted_epr = discount_rewards(rewards)
    # standardize the rewards to be unit normal (helps control the gradient estimator variance)
    discounted_epr -= np.mean(discounted_epr)
    discounted_epr /= np.std(discounted_epr)
    total = 0.0
    for x, y, adv in zip(observations, actions, discounted_epr):
        aprob, _ = policy_forward(model, x)
        total += adv * (y * np.log(aprob) + (1 - y) * np.log(1 - aprob))
    return -total


def cases():
    rs = np.random.RandomState(44)
    D, H = 4, 3
    model = {'W1': rs.randn(H, D) / np.sqrt(D), 'W2': rs.randn(H) / np.sqrt(H)}
    observations = rs.randn(5, D)
    actions = np.array([1, 0, 0, 1, 1])
    rewards = np.array([0.0, 0.0, 1.0, 0.0, -1.0])
    # The discounted return is piecewise in the rewards (`if r[t] != 0` resets it): differentiate
    # with respect to the policy's weights and the observations only.
    return [(reinforce_surrogate, (model, observations, actions, rewards), {"positions": [0, 1]})]

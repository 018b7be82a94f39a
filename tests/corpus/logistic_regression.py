"""Logistic regression on module-level data, as in autograd's README and examples/logistic_regression.py."""
import numpy as np


def sigmoid(x):
    return 0.5 * (np.tanh(x / 2.) + 1)


def logistic_predictions(weights, inputs):
    # Outputs probability of a label being true according to logistic model.
    return sigmoid(np.dot(inputs, weights))


# Build a toy dataset.
inputs = np.array([[0.52, 1.12,  0.77],
                   [0.88, -1.08, 0.15],
                   [0.52, 0.06, -1.30],
                   [0.74, -2.49, 1.39]])
targets = np.array([True, True, False, True])


def training_loss(weights):
    # Training loss is the negative log-likelihood of the training labels.
    preds = logistic_predictions(weights, inputs)
    label_probabilities = preds * targets + (1 - preds) * (1 - targets)
    return -np.sum(np.log(label_probabilities))


def regularized_loss(weights, bias, X, y, C=1.0):
    """scikit-learn's objective: 0.5 ||w||^2 + C * sum(log(1 + exp(-y (X w + b)))), y in {-1, 1}."""
    z = y * (X @ weights + bias)
    return 0.5 * weights.dot(weights) + C * np.sum(np.logaddexp(0, -z))


def cases():
    rs = np.random.RandomState(11)
    X = rs.randn(8, 3)
    y = np.sign(rs.randn(8))
    return [(training_loss, (np.array([0.0, 0.0, 0.0]),)),
            (training_loss, (rs.randn(3) * 0.5,)),
            (regularized_loss, (rs.randn(3), 0.3, X, y))]

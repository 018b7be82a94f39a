"""Multinomial logistic regression with weight decay, the way a course assignment writes it."""
import numpy as np


def one_hot(labels, num_classes):
    return np.eye(num_classes)[labels]


def log_softmax(logits):
    m = logits.max(axis=1, keepdims=True)
    return logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))


def softmax_loss(theta, X, labels, lam=1e-2):
    num_classes = theta.shape[1]
    n = len(labels)
    Y = one_hot(labels, num_classes)
    data_loss = -np.sum(Y * log_softmax(X @ theta)) / n
    reg = 0.5 * lam * np.sum(theta[1:] ** 2)   # no decay on the bias row
    return data_loss + reg


def softmax_loss_indexed(W, b, X, y, reg):
    N = X.shape[0]
    scores = X.dot(W) + b
    scores -= np.max(scores, axis=1, keepdims=True)
    exp_scores = np.exp(scores)
    probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
    correct_logprobs = -np.log(probs[range(N), y])
    data_loss = np.sum(correct_logprobs) / N
    reg_loss = 0.5 * reg * np.sum(W * W)
    return data_loss + reg_loss


def cases():
    rs = np.random.RandomState(25)
    X = np.hstack([np.ones((6, 1)), rs.randn(6, 3)])
    labels = rs.randint(0, 3, size=6)
    return [(softmax_loss, (0.5 * rs.randn(4, 3), X, labels)),
            (softmax_loss_indexed, (rs.randn(4, 3), rs.randn(3), X, labels, 0.1))]

"""cs231n assignment code: the two-layer net's loss, and the SVM loss both naive and vectorized."""
import numpy as np


def two_layer_net_loss(W1, b1, W2, b2, X, y, reg=0.05):
    N, D = X.shape
    # Compute the forward pass
    hidden = np.maximum(0, X.dot(W1) + b1)  # ReLU
    scores = hidden.dot(W2) + b2
    # Compute the loss
    scores -= np.max(scores, axis=1, keepdims=True)
    exp_scores = np.exp(scores)
    probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
    correct_logprobs = -np.log(probs[np.arange(N), y])
    data_loss = np.sum(correct_logprobs) / N
    reg_loss = reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
    loss = data_loss + reg_loss
    return loss


def svm_loss_naive(W, X, y, reg):
    """
    Structured SVM loss function, naive implementation (with loops).
    """
    num_classes = W.shape[1]
    num_train = X.shape[0]
    loss = 0.0
    for i in range(num_train):
        scores = X[i].dot(W)
        correct_class_score = scores[y[i]]
        for j in range(num_classes):
            if j == y[i]:
                continue
            margin = scores[j] - correct_class_score + 1  # note delta = 1
            if margin > 0:
                loss += margin
    # Right now the loss is a sum over all training examples, but we want it
    # to be an average instead so we divide by num_train.
    loss /= num_train
    # Add regularization to the loss.
    loss += reg * np.sum(W * W)
    return loss


def svm_loss_vectorized(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    correct_class_scores = scores[np.arange(num_train), y]
    margins = np.maximum(0, scores - correct_class_scores[:, np.newaxis] + 1.0)
    margins[np.arange(num_train), y] = 0
    loss = np.sum(margins) / num_train
    loss += reg * np.sum(W * W)
    return loss


def cases():
    rs = np.random.RandomState(45)
    X = rs.randn(5, 4)
    y = rs.randint(0, 3, size=5)
    W = 0.7 * rs.randn(4, 3)
    return [(two_layer_net_loss, (0.5 * rs.randn(4, 6), 0.1 * rs.randn(6), 0.5 * rs.randn(6, 3), 0.1 * rs.randn(3), X, y)),
            (svm_loss_naive, (W, X, y, 0.1)),
            (svm_loss_vectorized, (W, X, y, 0.1))]

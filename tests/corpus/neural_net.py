"""A multilayer perceptron for classification, in the style of autograd's examples/neural_net.py."""
import numpy as np


def init_random_params(scale, layer_sizes, rs=np.random.RandomState(0)):
    """Build a list of (weights, biases) tuples, one for each layer in the net."""
    return [(scale * rs.randn(m, n),   # weight matrix
             scale * rs.randn(n))      # bias vector
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def neural_net_predict(params, inputs):
    """Implements a deep neural network for classification.
       params is a list of (weights, bias) tuples.
       inputs is an (N x D) matrix.
       returns normalized class log-probabilities."""
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)


def logsumexp(x, axis=None, keepdims=False):
    max_x = np.max(x, axis=axis, keepdims=True)
    out = max_x + np.log(np.sum(np.exp(x - max_x), axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)


def l2_norm(params):
    """Computes l2 norm of params by flattening them into a vector."""
    return sum(np.sum(W ** 2) + np.sum(b ** 2) for W, b in params)


def log_posterior(params, inputs, targets, L2_reg):
    log_prior = -L2_reg * l2_norm(params)
    log_lik = np.sum(neural_net_predict(params, inputs) * targets)
    return log_prior + log_lik


def accuracy(params, inputs, targets):
    target_class = np.argmax(targets, axis=1)
    predicted_class = np.argmax(neural_net_predict(params, inputs), axis=1)
    return np.mean(predicted_class == target_class)


def objective(params, inputs, targets):
    return -log_posterior(params, inputs, targets, 0.01)


def cases():
    rs = np.random.RandomState(1)
    params = init_random_params(0.5, layer_sizes=[4, 5, 3])
    inputs = rs.randn(6, 4)
    targets = np.eye(3)[rs.randint(0, 3, size=6)]
    return [(objective, (params, inputs, targets)),
            (log_posterior, (params, inputs, targets, 0.1))]

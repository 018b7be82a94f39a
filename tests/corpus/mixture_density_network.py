"""A mixture density network's loss (autograd's examples/mixture_density_network.py, Bishop 1994)."""
import numpy as np


def init_random_params(scale, layer_sizes, rs=np.random.RandomState(0)):
    return [(rs.randn(insize, outsize) * scale,   # weight matrix
             rs.randn(outsize) * scale)           # bias vector
            for insize, outsize in zip(layer_sizes[:-1], layer_sizes[1:])]


def logsumexp(X, axis=None, keepdims=False):
    max_X = np.max(X, axis=axis, keepdims=True)
    out = max_X + np.log(np.sum(np.exp(X - max_X), axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)


def neural_net_predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def nn_predict_gmm(params, inputs):
    # Outputs mixture weights, means, and log std devs.
    outputs = neural_net_predict(params, inputs)
    num_components = outputs.shape[1] // 3
    log_weights, means, log_stds = np.split(outputs, 3, axis=1)
    log_weights = log_weights - logsumexp(log_weights, axis=1, keepdims=True)
    assert log_weights.shape[1] == num_components
    return log_weights, means, log_stds


def gaussian_log_density(x, mean, log_std):
    return -0.5 * np.log(2 * np.pi) - log_std - 0.5 * ((x - mean) / np.exp(log_std)) ** 2


def gmm_log_likelihood(params, inputs, targets):
    logprobs, means, log_stds = nn_predict_gmm(params, inputs)
    component_lls = logprobs + gaussian_log_density(targets, means, log_stds)
    return np.sum(logsumexp(component_lls, axis=1))


def objective(params, inputs, targets):
    return -gmm_log_likelihood(params, inputs, targets)


def cases():
    rs = np.random.RandomState(35)
    params = init_random_params(0.4, layer_sizes=[1, 4, 6], rs=rs)
    inputs = np.linspace(-1, 1, 6).reshape(-1, 1)
    targets = np.sin(3 * inputs) + 0.1 * rs.randn(6, 1)
    return [(objective, (params, inputs, targets))]

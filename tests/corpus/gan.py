"""The losses of a generative adversarial network, in the style of autograd's examples/generative_adversarial_net.py."""
import numpy as np


def relu(x):
    return np.maximum(0, x)


def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)


def logsigmoid(x):
    return x - np.logaddexp(0, x)


def init_random_params(scale, layer_sizes, rs=np.random.RandomState(0)):
    return [(scale * rs.randn(m, n),   # weight matrix
             scale * rs.randn(n))      # bias vector
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def batch_normalize(activations):
    mbmean = np.mean(activations, axis=0, keepdims=True)
    return (activations - mbmean) / (np.std(activations, axis=0, keepdims=True) + 1)


def neural_net_predict(params, inputs):
    """Params is a list of (weights, bias) tuples.
       inputs is an (N x D) matrix.
       Applies batch normalization to every layer but the last."""
    for W, b in params[:-1]:
        outputs = batch_normalize(np.dot(inputs, W) + b)  # linear transformation
        inputs = np.tanh(outputs)                          # nonlinear transformation
    outW, outb = params[-1]
    outputs = np.dot(inputs, outW) + outb
    return outputs


def generate_from_noise(gen_params, noise):
    return sigmoid(neural_net_predict(gen_params, noise))


def gan_objective(gen_params, dsc_params, real_data, noise):
    fake_data = generate_from_noise(gen_params, noise)
    logprobs_fake = logsigmoid(neural_net_predict(dsc_params, fake_data))
    logprobs_real = logsigmoid(neural_net_predict(dsc_params, real_data))
    return np.mean(logprobs_real) - np.mean(logprobs_fake)


def generator_loss(gen_params, dsc_params, noise):
    # The non-saturating generator loss.
    fake_data = generate_from_noise(gen_params, noise)
    return -np.mean(logsigmoid(neural_net_predict(dsc_params, fake_data)))


def cases():
    rs = np.random.RandomState(5)
    gen_params = init_random_params(0.5, [2, 3, 4], rs)
    dsc_params = init_random_params(0.5, [4, 3, 1], rs)
    real_data = rs.rand(5, 4)
    noise = rs.randn(5, 2)
    return [(gan_objective, (gen_params, dsc_params, real_data, noise)),
            (generator_loss, (gen_params, dsc_params, noise))]

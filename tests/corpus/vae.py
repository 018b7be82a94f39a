"""A variational autoencoder, in the style of autograd's examples/variational_autoencoder.py.

The reparameterization noise is drawn once, outside the objective, so the objective is deterministic.
"""
import numpy as np


def diag_gaussian_log_density(x, mu, log_std):
    return np.sum(-0.5 * (x - mu) ** 2 / np.exp(2 * log_std) - log_std - 0.5 * np.log(2 * np.pi), axis=-1)


def unpack_gaussian_params(params):
    # Params of a diagonal Gaussian.
    D = np.shape(params)[-1] // 2
    mean, log_std = params[:, :D], params[:, D:]
    return mean, log_std


def sample_diag_gaussian(mean, log_std, eps):
    return eps * np.exp(log_std) + mean


def bernoulli_log_density(targets, unnormalized_logprobs):
    # unnormalized_logprobs are in R
    # Targets must be -1 or 1
    label_probabilities = -np.logaddexp(0, -unnormalized_logprobs * targets)
    return np.sum(label_probabilities, axis=-1)   # Sum across pixels.


def relu(x):
    return np.maximum(0, x)


def init_net_params(scale, layer_sizes, rs=np.random.RandomState(0)):
    """Build a (weights, biases) tuples for all layers."""
    return [(scale * rs.randn(m, n),   # weight matrix
             scale * rs.randn(n))      # bias vector
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def neural_net_predict(params, inputs, nonlinearity=np.tanh):
    """Params is a list of (weights, bias) tuples.
       inputs is an (N x D) matrix."""
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = nonlinearity(outputs)
    return outputs


def nn_predict_gaussian(params, inputs):
    # Returns means and diagonal variances
    return unpack_gaussian_params(neural_net_predict(params, inputs))


def vae_lower_bound(gen_params, rec_params, data, eps):
    # We use a simple Monte Carlo estimate of the KL
    # divergence from the prior.
    q_means, q_log_stds = nn_predict_gaussian(rec_params, data)
    latents = sample_diag_gaussian(q_means, q_log_stds, eps)
    q_latents = diag_gaussian_log_density(latents, q_means, q_log_stds)
    p_latents = diag_gaussian_log_density(latents, 0, 0)
    logits = neural_net_predict(gen_params, latents)
    likelihood = bernoulli_log_density(data, logits)
    return np.mean(p_latents + likelihood - q_latents)


def objective(combined_params, data, eps):
    gen_params, rec_params = combined_params
    return -vae_lower_bound(gen_params, rec_params, data, eps)


def cases():
    rs = np.random.RandomState(4)
    latent_dim, data_dim = 2, 4
    gen_params = init_net_params(0.5, [latent_dim, 3, data_dim], rs)
    rec_params = init_net_params(0.5, [data_dim, 3, latent_dim * 2], rs)
    data = np.where(rs.rand(5, data_dim) > 0.5, 1.0, -1.0)
    eps = rs.randn(5, latent_dim)
    return [(objective, ((gen_params, rec_params), data, eps)),
            (vae_lower_bound, (gen_params, rec_params, data, eps))]

"""Independent component analysis with a Student-t source prior (autograd's examples/ica.py)."""
import math

import numpy as np


def t_logpdf(x, df, loc=0.0, scale=1.0):
    """Log density of a Student-t distribution (written out, as scipy.stats.t.logpdf computes it)."""
    r = df * 1.0
    z = (x - loc) / scale
    return (math.lgamma((r + 1) / 2) - math.lgamma(r / 2) - 0.5 * math.log(r * math.pi)
            - np.log(scale) - (r + 1) / 2 * np.log1p(z ** 2 / r))


def make_ica_funs(observed_dimension, latent_dimension):
    """These functions implement independent component analysis.

    The model is:
    latents are drawn i.i.d. for each data point from a product of student-ts.
    weights are the same across all datapoints.
    noise on observations is Gaussian with a fixed standard deviation."""

    def sample(weights, n_samples, noise_std, rs):
        latents = rs.randn(latent_dimension, n_samples)
        latents = np.array(sorted(latents.T, key=lambda a_entry: a_entry[0])).T
        noise = rs.randn(n_samples, observed_dimension) * noise_std
        observed = predict(weights, latents) + noise
        return latents, observed

    def predict(weights, latents):
        return np.dot(weights, latents).T

    def logprob(weights, latents, noise_std, observed):
        preds = predict(weights, latents)
        log_lik = np.sum(-0.5 * ((preds - observed) / noise_std) ** 2
                         - np.log(noise_std) - 0.5 * np.log(2 * np.pi))
        log_prior = np.sum(t_logpdf(latents, 2.4))
        return log_lik + log_prior

    num_weights = observed_dimension * latent_dimension

    def unpack_weights(weights):
        return np.reshape(weights, (observed_dimension, latent_dimension))

    return num_weights, sample, logprob, unpack_weights


observed_dimension, latent_dimension = 3, 2
num_weights, sample, logprob, unpack_weights = make_ica_funs(observed_dimension, latent_dimension)


def objective(params, observed, noise_std):
    weights = unpack_weights(params[:num_weights])
    latents = np.reshape(params[num_weights:], (latent_dimension, observed.shape[0]))
    return -logprob(weights, latents, noise_std, observed)


def square_ica_loglik(W, X):
    """Maximum-likelihood ICA with an unmixing matrix W: log|det W| + sum of source log densities."""
    S = X @ W.T
    sign, logdet = np.linalg.slogdet(W)
    return X.shape[0] * logdet + np.sum(-2.0 * np.log(np.cosh(S)))


def cases():
    rs = np.random.RandomState(9)
    true_weights = rs.randn(observed_dimension, latent_dimension)
    latents, observed = sample(true_weights, 6, 0.5, rs)
    params = np.concatenate([rs.randn(num_weights), 0.5 * rs.randn(latent_dimension * 6)])
    W = np.eye(3) + 0.3 * rs.randn(3, 3)
    X = rs.randn(8, 3)
    return [(objective, (params, observed, 0.5)),
            (square_ica_loglik, (W, X))]

"""Black-box stochastic variational inference on a 2-D funnel (autograd's examples/black_box_svi.py)."""
import numpy as np


def norm_logpdf(x, loc=0.0, scale=1.0):
    return -0.5 * ((x - loc) / scale) ** 2 - np.log(scale) - 0.5 * np.log(2 * np.pi)


def black_box_variational_inference(logprob, D, num_samples, rs=np.random.RandomState(0)):
    """Implements http://arxiv.org/abs/1401.0118, and uses the
    local reparameterization trick from http://arxiv.org/abs/1506.02557"""
    fixed_noise = rs.randn(num_samples, D)

    def unpack_params(params):
        # Variational dist is a diagonal Gaussian.
        mean, log_std = params[:D], params[D:]
        return mean, log_std

    def gaussian_entropy(log_std):
        return 0.5 * D * (1.0 + np.log(2*np.pi)) + np.sum(log_std)

    def variational_objective(params, t):
        """Provides a stochastic estimate of the variational lower bound."""
        mean, log_std = unpack_params(params)
        samples = fixed_noise * np.exp(log_std) + mean
        lower_bound = gaussian_entropy(log_std) + np.mean(logprob(samples, t))
        return -lower_bound

    return variational_objective


# Specify an inference problem by its unnormalized log-density.
D = 2


def log_density(x, t):
    mu, log_sigma = x[:, 0], x[:, 1]
    sigma_density = norm_logpdf(log_sigma, 0, 1.35)
    mu_density = norm_logpdf(mu, 0, np.exp(log_sigma))
    return sigma_density + mu_density


objective = black_box_variational_inference(log_density, D, num_samples=5)


def cases():
    init_mean = -1 * np.ones(D)
    init_log_std = -5 * np.ones(D)
    init_var_params = np.concatenate([init_mean, init_log_std])
    return [(objective, (init_var_params, 0)),
            (objective, (np.array([0.3, -0.2, -1.0, -0.5]), 3))]

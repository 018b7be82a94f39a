"""Gaussian process regression's log marginal likelihood, in the style of autograd's examples/gaussian_process.py."""
import numpy as np


def mvn_logpdf(x, mean, cov):
    """Log density of a multivariate normal, through a Cholesky factor."""
    D = x.shape[0]
    L = np.linalg.cholesky(cov)
    alpha = np.linalg.solve(L, x - mean)
    return -0.5 * np.dot(alpha, alpha) - np.sum(np.log(np.diag(L))) - 0.5 * D * np.log(2 * np.pi)


def make_gp_funs(cov_func, num_cov_params):
    """Functions that perform Gaussian process regression.
       cov_func has signature (cov_params, x, x')"""

    def unpack_kernel_params(params):
        mean        = params[0]
        cov_params  = params[2:]
        noise_scale = np.exp(params[1]) + 0.0001
        return mean, cov_params, noise_scale

    def predict(params, x, y, xstar):
        """Returns the predictive mean and covariance at locations xstar,
           of the latent function value f (without observation noise)."""
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_f_f = cov_func(cov_params, xstar, xstar)
        cov_y_f = cov_func(cov_params, x, xstar)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        pred_mean = mean + np.dot(np.linalg.solve(cov_y_y, cov_y_f).T, y - mean)
        pred_cov = cov_f_f - np.dot(np.linalg.solve(cov_y_y, cov_y_f).T, cov_y_f)
        return pred_mean, pred_cov

    def log_marginal_likelihood(params, x, y):
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        prior_mean = mean * np.ones(len(y))
        return mvn_logpdf(y, prior_mean, cov_y_y)

    return num_cov_params + 2, predict, log_marginal_likelihood


# Define an example covariance function.
def rbf_covariance(kernel_params, x, xp):
    output_scale = np.exp(kernel_params[0])
    lengthscales = np.exp(kernel_params[1:])
    diffs = np.expand_dims(x / lengthscales, 1) \
          - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs**2, axis=2))


D = 1
num_params, predict, log_marginal_likelihood = make_gp_funs(rbf_covariance, num_cov_params=D + 1)


def objective(params, X, y):
    return -log_marginal_likelihood(params, X, y)


def predictive_loss(params, X, y, Xstar, ystar):
    pred_mean, pred_cov = predict(params, X, y, Xstar)
    marg_std = np.sqrt(np.diag(pred_cov) + 0.01)
    return np.sum(((ystar - pred_mean) / marg_std) ** 2 + 2 * np.log(marg_std))


def cases():
    rs = np.random.RandomState(6)
    X = np.linspace(-2, 2, 8).reshape(-1, 1) + 0.1 * rs.randn(8, 1)
    y = np.cos(X[:, 0]) + 0.1 * rs.randn(8)
    params = np.array([0.1, -1.5, 0.2, 0.3])
    Xstar = np.array([[-1.0], [0.5], [1.5]])
    ystar = np.cos(Xstar[:, 0])
    return [(objective, (params, X, y)),
            (predictive_loss, (params, X, y, Xstar, ystar))]

"""A Gaussian mixture model's log likelihood, in the style of autograd's examples/gmm.py."""
import numpy as np


def logsumexp(a, axis=None):
    a_max = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(a_max, axis=axis) + np.log(np.sum(np.exp(a - a_max), axis=axis))


def mvn_logpdf(x, mean, cov):
    d = mean.shape[0]
    diff = x - mean
    sign, logdet = np.linalg.slogdet(cov)
    maha = np.sum(diff * np.linalg.solve(cov, diff.T).T, axis=1)
    return -0.5 * (d * np.log(2 * np.pi) + logdet + maha)


def init_gmm_params(num_components, D, scale, rs=np.random.RandomState(0)):
    return {'log proportions': rs.randn(num_components) * scale,
            'means':           rs.randn(num_components, D) * scale,
            'lower triangles': np.zeros((num_components, D, D)) + np.eye(D)}


def log_normalize(x):
    return x - logsumexp(x)


def unpack_gmm_params(params):
    normalized_log_proportions = log_normalize(params['log proportions'])
    return normalized_log_proportions, params['means'], params['lower triangles']


def gmm_log_likelihood(params, data):
    cluster_lls = []
    for log_proportion, mean, cov_sqrt in zip(*unpack_gmm_params(params)):
        cov = np.dot(cov_sqrt.T, cov_sqrt)
        cluster_lls.append(log_proportion + mvn_logpdf(data, mean, cov))
    return np.sum(logsumexp(np.vstack(cluster_lls), axis=0))


def objective(params, data):
    return -gmm_log_likelihood(params, data)


def cases():
    rs = np.random.RandomState(7)
    params = init_gmm_params(num_components=3, D=2, scale=1.0, rs=rs)
    params['lower triangles'] = params['lower triangles'] + 0.2 * np.tril(rs.randn(3, 2, 2))
    data = rs.randn(10, 2)
    return [(objective, (params, data))]

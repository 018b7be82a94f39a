"""Loss objects in the style of numpy-ml's neural_nets/losses/losses.py."""
import numpy as np


def is_binary(x):
    """Return True if array `x` consists only of binary values"""
    msg = "Matrix must be binary"
    assert np.array_equal(x, x.astype(bool)), msg
    return True


def is_stochastic(X):
    """True if `X` contains probabilities that sum to 1 along the columns"""
    msg = "Array should be stochastic along the columns"
    assert len(X[X < 0]) == len(X[X > 1]) == 0, msg
    assert np.allclose(np.sum(X, axis=1), np.ones(X.shape[0])), msg
    return True


class ObjectiveBase:
    def __call__(self, y, y_pred, *args, **kwargs):
        return self.loss(y, y_pred, *args, **kwargs)


class SquaredError(ObjectiveBase):
    def __str__(self):
        return "SquaredError"

    @staticmethod
    def loss(y, y_pred):
        """Compute the squared error cost on a batch of examples."""
        return 0.5 * np.linalg.norm(y_pred - y) ** 2


class CrossEntropy(ObjectiveBase):
    def __str__(self):
        return "CrossEntropy"

    @staticmethod
    def loss(y, y_pred):
        """Compute the cross-entropy (log) loss."""
        is_binary(y)
        is_stochastic(y_pred)

        # prevent taking the log of 0
        eps = np.finfo(float).eps

        # each example is associated with a single class; sum the negative log
        # probability of the correct label over all samples in the batch.
        # observe that we are taking advantage of the fact that y is one-hot
        # encoded
        cross_entropy = -np.sum(y * np.log(y_pred + eps))
        return cross_entropy


class VAELoss(ObjectiveBase):
    def __str__(self):
        return "VAELoss"

    @staticmethod
    def loss(y, y_pred, t_mean, t_log_var):
        """Variational lower bound for a Bernoulli VAE."""
        # prevent nan on log(0)
        eps = np.finfo(float).eps
        y_pred = np.clip(y_pred, eps, 1 - eps)

        # reconstruction loss: binary cross-entropy
        rec_loss = -np.sum(y * np.log(y_pred) + (1 - y) * np.log(1 - y_pred), axis=1)

        # KL divergence between the variational distribution q and the prior p,
        # a unit gaussian
        kl_loss = -0.5 * np.sum(1 + t_log_var - t_mean ** 2 - np.exp(t_log_var), axis=1)
        loss = np.mean(kl_loss + rec_loss)
        return loss


def softmax(x):
    e_X = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e_X / e_X.sum(axis=-1, keepdims=True)


def cross_entropy_of_logits(logits, y):
    return CrossEntropy()(y, softmax(logits))


def vae_loss(logits, y, t_mean, t_log_var):
    y_pred = 1 / (1 + np.exp(-logits))
    return VAELoss()(y, y_pred, t_mean, t_log_var)


def squared_error(y_pred, y):
    return SquaredError()(y, y_pred)


def cases():
    rs = np.random.RandomState(19)
    y = np.eye(3)[rs.randint(0, 3, size=4)]
    # The labels must stay one-hot (CrossEntropy.loss asserts it): differentiate in the logits only.
    return [(cross_entropy_of_logits, (rs.randn(4, 3), y), {"positions": [0]}),
            (vae_loss, (rs.randn(4, 5), (rs.rand(4, 5) > 0.5).astype(float), rs.randn(4, 2), 0.3 * rs.randn(4, 2))),
            (squared_error, (rs.randn(4, 2), rs.randn(4, 2)))]

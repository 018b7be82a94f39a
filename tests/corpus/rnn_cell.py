"""An Elman RNN cell unrolled over a sequence, in the style of numpy-ml's RNNCell."""
import numpy as np


class Tanh:
    def fn(self, z):
        return np.tanh(z)


class RNNCell:
    def __init__(self, n_out, act_fn=None):
        self.n_out = n_out
        self.act_fn = Tanh() if act_fn is None else act_fn
        self.parameters = {}
        self.derived_variables = {"A": [], "Z": [], "n_timesteps": 0, "current_step": 0}

    def set_params(self, Waa, Wax, ba, bx):
        self.parameters = {"Waa": Waa, "Wax": Wax, "ba": ba, "bx": bx}

    def forward(self, Xt):
        """Compute the network output for a single timestep.

        Xt : (n_ex, n_in) input at timestep t
        """
        Waa = self.parameters["Waa"]
        Wax = self.parameters["Wax"]
        ba = self.parameters["ba"]
        bx = self.parameters["bx"]

        self.derived_variables["n_timesteps"] += 1
        self.derived_variables["current_step"] += 1

        # initialize the hidden state to zero
        As = self.derived_variables["A"]
        if len(As) == 0:
            n_ex, n_in = Xt.shape
            init = np.zeros((n_ex, self.n_out))
            As.append(init)

        # compute next hidden state
        Zt = As[-1] @ Waa + ba + Xt @ Wax + bx
        At = self.act_fn.fn(Zt)

        self.derived_variables["Z"].append(Zt)
        self.derived_variables["A"].append(At)
        return At


def rnn_loss(Waa, Wax, ba, bx, W_out, X, Y):
    """X: (n_ex, n_in, n_t); Y: (n_ex, n_out, n_t)."""
    cell = RNNCell(n_out=Waa.shape[0])
    cell.set_params(Waa, Wax, ba, bx)
    n_ex, n_in, n_t = X.shape
    loss = 0
    for t in range(n_t):
        At = cell.forward(X[:, :, t])
        loss += np.sum((At @ W_out - Y[:, :, t]) ** 2)
    return loss / n_t


def cases():
    rs = np.random.RandomState(23)
    n_ex, n_in, n_h, n_out, n_t = 2, 3, 4, 2, 4
    return [(rnn_loss, (0.5 * rs.randn(n_h, n_h), 0.5 * rs.randn(n_in, n_h), 0.1 * rs.randn(1, n_h),
                        0.1 * rs.randn(1, n_h), rs.randn(n_h, n_out), rs.randn(n_ex, n_in, n_t),
                        rs.randn(n_ex, n_out, n_t)))]

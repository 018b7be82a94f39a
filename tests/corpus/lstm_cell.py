"""An LSTM cell in the style of numpy-ml's LSTMCell: gates from one stacked input, states kept on self."""
import numpy as np


class Sigmoid:
    def fn(self, z):
        return 1 / (1 + np.exp(-z))


class Tanh:
    def fn(self, z):
        return np.tanh(z)


class LSTMCell:
    def __init__(self, n_out, act_fn=None, gate_fn=None):
        self.n_out = n_out
        self.act_fn = Tanh() if act_fn is None else act_fn
        self.gate_fn = Sigmoid() if gate_fn is None else gate_fn
        self.derived_variables = {"C": [], "A": [], "Gf": [], "Gu": [], "Go": [], "Gc": [], "Cc": []}

    def _get_params(self, params):
        Wf, Wu, Wc, Wo = params["Wf"], params["Wu"], params["Wc"], params["Wo"]
        bf, bu, bc, bo = params["bf"], params["bu"], params["bc"], params["bo"]
        return Wf, Wu, Wc, Wo, bf, bu, bc, bo

    def forward(self, Xt, params):
        Wf, Wu, Wc, Wo, bf, bu, bc, bo = self._get_params(params)

        n_ex, n_in = Xt.shape
        if len(self.derived_variables["A"]) == 0:
            self.derived_variables["A"].append(np.zeros((n_ex, self.n_out)))
            self.derived_variables["C"].append(np.zeros((n_ex, self.n_out)))

        A_prev = self.derived_variables["A"][-1]
        C_prev = self.derived_variables["C"][-1]

        # concatenate A_prev and Xt to create Zt
        Zt = np.hstack([A_prev, Xt])

        Gft = self.gate_fn.fn(Zt @ Wf + bf)
        Gut = self.gate_fn.fn(Zt @ Wu + bu)
        Got = self.gate_fn.fn(Zt @ Wo + bo)
        Cct = self.act_fn.fn(Zt @ Wc + bc)
        Ct = Gft * C_prev + Gut * Cct
        At = Got * self.act_fn.fn(Ct)

        # bookkeeping
        self.derived_variables["A"].append(At)
        self.derived_variables["C"].append(Ct)
        self.derived_variables["Gf"].append(Gft)
        self.derived_variables["Gu"].append(Gut)
        self.derived_variables["Go"].append(Got)
        self.derived_variables["Cc"].append(Cct)
        return At, Ct


def lstm_loss(params, X, y):
    cell = LSTMCell(n_out=params["bf"].shape[1])
    n_ex, n_in, n_t = X.shape
    for t in range(n_t):
        At, Ct = cell.forward(X[:, :, t], params)
    return np.mean((At @ params["W_out"] - y) ** 2)


def cases():
    rs = np.random.RandomState(24)
    n_ex, n_in, n_h, n_t = 2, 2, 3, 3
    params = {name: 0.5 * rs.randn(n_h + n_in, n_h) for name in ("Wf", "Wu", "Wc", "Wo")}
    params.update({name: 0.1 * rs.randn(1, n_h) for name in ("bf", "bu", "bc", "bo")})
    params["W_out"] = rs.randn(n_h, 1)
    return [(lstm_loss, (params, rs.randn(n_ex, n_in, n_t), rs.randn(n_ex, 1)))]

"""Cox proportional hazards: Breslow's partial likelihood with risk sets by reversed cumulative sums."""
import numpy as np


def cox_partial_nll(beta, X, times, events):
    order = np.argsort(-times)            # latest first: risk sets are prefixes
    X, events = X[order], events[order]
    risk = X @ beta
    log_risk_set = np.log(np.cumsum(np.exp(risk)))
    return -np.sum((risk - log_risk_set)[events == 1]) / events.sum()


def cox_loop(beta, X, times, events):
    """The same likelihood as a double loop, the way the definition reads."""
    n = len(times)
    risk = np.dot(X, beta)
    loglik = 0.0
    for i in range(n):
        if events[i]:
            at_risk = [j for j in range(n) if times[j] >= times[i]]
            loglik += risk[i] - np.log(np.sum(np.exp(risk[at_risk])))
    return -loglik


def cases():
    rs = np.random.RandomState(38)
    X = rs.randn(7, 2)
    times = rs.exponential(size=7)
    events = (rs.rand(7) > 0.3).astype(int)
    beta = np.array([0.3, -0.5])
    return [(cox_partial_nll, (beta, X, times, events)),
            (cox_loop, (beta, X, times, events))]

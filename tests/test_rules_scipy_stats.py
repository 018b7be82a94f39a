"""scipy.stats distribution rules against central differences in float64, one row per (method, parameters).

The checks of every rule table (VJP through the transform, JVP rules alone, float32) and second order
(Hessian-vector products), as for scipy.special; then an end-to-end model, the arguments without rules,
multivariate_normal's covariance and dirichlet's simplex. Without SciPy the table is empty.
"""
import numpy as np
import pytest

import tapegen as tg
from test_rules_elementwise import QUIET, case, sample, table_tests
from test_rules_scipy_special import check_second_order
from modes import check_modes

try:
    import scipy.special as sp
    import scipy.stats as st
    from tapegen import rules
    rules.load_optional()
    from tapegen.rules import scipy_stats
except ImportError:
    st = None

# name: (shape parameter values, how to draw x)
CONTINUOUS = {
    "norm": ((), lambda s: sample(s, -2.0, 2.0)), "logistic": ((), lambda s: sample(s, -2.0, 2.0)),
    "laplace": ((), lambda s: sample(s, 0.4, 2.0)), "cauchy": ((), lambda s: sample(s, -2.0, 2.0)),
    "expon": ((), lambda s: sample(s, 0.5, 3.0)), "t": ((3.5,), lambda s: sample(s, -2.0, 2.0)),
    "gamma": ((2.5,), lambda s: sample(s, 0.5, 3.0)), "chi2": ((3.3,), lambda s: sample(s, 0.5, 3.0)),
    "lognorm": ((0.8,), lambda s: sample(s, 0.5, 3.0)), "beta": ((2.5, 1.7), lambda s: sample(s, 0.45, 0.9)),
    "halfnorm": ((), lambda s: sample(s, 0.5, 3.0)), "halfcauchy": ((), lambda s: sample(s, 0.5, 3.0)),
}
SHAPE_NAMES = {"t": ("df",), "gamma": ("a",), "chi2": ("df",), "lognorm": ("s",), "beta": ("a", "b")}


def continuous_rows():
    for name, (shapes, draw) in CONTINUOUS.items():
        for method in scipy_stats.CONTINUOUS_METHODS:
            fn = getattr(getattr(st, name), method)
            x, loc, scale = draw((4,)), 0.3 * sample((4,), 0.0, 1.0) - 0.1, 1.2
            if name in ("expon", "gamma", "chi2", "lognorm", "beta", "halfnorm", "halfcauchy"):
                loc = -0.2  # every x + 0.2 inside the support
            with_shapes = (method in ("logpdf", "pdf") or name in ("gamma", "chi2", "lognorm", "t", "beta")) \
                and shapes  # cdf & co.: in a, df, s, a and b
            params = SHAPE_NAMES.get(name, ()) if with_shapes else ()
            inputs = {"x": x, **dict(zip(SHAPE_NAMES.get(name, ()), shapes)), "loc": loc, "scale": scale}
            values = [x, *([*shapes] if with_shapes else []), loc, scale]
            call = _caller(fn, shapes, with_shapes)
            yield case(f"{name}.{method}-(4,)", call, tuple(values), fn, inputs, ("x", *params, "loc", "scale"),
                       rtol=1e-5, atol=1e-7)


def quantile_rows():
    """ppf and isf in q, loc, scale and the shape parameters (the cdf's implicit derivative)."""
    for name, (shapes, _) in CONTINUOUS.items():
        for method in ("ppf", "isf"):
            fn = getattr(getattr(st, name), method)
            q, loc, scale = sample((4,), 0.15, 0.85), 0.3, 1.2
            params = SHAPE_NAMES.get(name, ())
            inputs = {"q": q, **dict(zip(params, shapes)), "loc": loc, "scale": scale}
            yield case(f"{name}.{method}-(4,)", _caller(fn, shapes, bool(shapes)), (q, *shapes, loc, scale), fn,
                       inputs, ("q", *params, "loc", "scale"), rtol=1e-5, atol=1e-7)


def entropy_rows():
    """entropy in every parameter: shape parameters, loc (no effect) and scale."""
    for name, (shapes, _) in CONTINUOUS.items():
        fn = getattr(st, name).entropy
        names = SHAPE_NAMES.get(name, ())
        inputs = {**dict(zip(names, shapes)), "loc": 0.3, "scale": 1.2}
        yield case(f"{name}.entropy", _entropy_caller(fn, len(shapes)), (*shapes, 0.3, 1.2), fn, inputs,
                   (*names, "loc", "scale"), rtol=1e-5, atol=1e-7)


def _entropy_caller(fn, shapes):
    return {0: lambda loc, scale: fn(loc, scale), 1: lambda p, loc, scale: fn(p, loc, scale),
            2: lambda a, b, loc, scale: fn(a, b, loc, scale)}[shapes]


def _caller(fn, shapes, with_shapes):
    if not shapes:
        return lambda x, loc, scale: fn(x, loc, scale)
    if not with_shapes:  # the shape parameters as constants
        if len(shapes) == 1:
            return lambda x, loc, scale: fn(x, shapes[0], loc, scale)
        return lambda x, loc, scale: fn(x, shapes[0], shapes[1], loc, scale)
    if len(shapes) == 1:
        return lambda x, p, loc, scale: fn(x, p, loc, scale)
    return lambda x, a, b, loc, scale: fn(x, a, b, loc, scale)


def discrete_rows():
    k = np.array([0, 1, 3, 2])
    for method in ("logpmf", "pmf"):
        poisson, bernoulli, binom = (getattr(getattr(st, name), method) for name in ("poisson", "bernoulli", "binom"))
        mu, p = sample((4,), 0.5, 3.0), sample((4,), 0.2, 0.8)
        yield case(f"poisson.{method}-(4,)", lambda mu: poisson(k, mu), (mu,), poisson, {"k": k, "mu": mu}, ("mu",))
        yield case(f"bernoulli.{method}-(4,)", lambda p: bernoulli(k % 2, p), (p,), bernoulli, {"k": k % 2, "p": p},
                   ("p",))
        yield case(f"binom.{method}-(4,)", lambda p: binom(k, 5, p), (p,), binom, {"k": k, "n": 5, "p": p}, ("p",))
        nbinom, geom = getattr(st.nbinom, method), getattr(st.geom, method)
        n = sample((4,), 0.6, 3.0)  # (real: the NB2 regression's 1 / alpha)
        yield case(f"nbinom.{method}-(4,)", lambda n, p: nbinom(k, n, p), (n, p), nbinom, {"k": k, "n": n, "p": p},
                   ("n", "p"))
        yield case(f"geom.{method}-(4,)", lambda p: geom(k + 1, p), (p,), geom, {"k": k + 1, "p": p}, ("p",))
    for method in ("cdf", "sf", "logcdf", "logsf"):
        fn, mu = getattr(st.poisson, method), sample((4,), 0.5, 3.0)
        yield case(f"poisson.{method}-(4,)", (lambda fn: lambda mu: fn(k + 0.5, mu))(fn), (mu,), fn,
                   {"k": k + 0.5, "mu": mu}, ("mu",))
        fn, p = getattr(st.binom, method), sample((4,), 0.2, 0.8)
        yield case(f"binom.{method}-(4,)", (lambda fn: lambda p: fn(k, 5, p))(fn), (p,), fn,
                   {"k": k, "n": 5, "p": p}, ("p",))
        fn = getattr(st.bernoulli, method)
        counts = np.array([0.0, 0.5, 0.25, 0.0])  # (where cdf and sf are not 0: their logs are finite)
        yield case(f"bernoulli.{method}-(4,)", (lambda fn: lambda p: fn(counts, p))(fn), (p,), fn,
                   {"k": counts, "p": p}, ("p",))


def multivariate_rows():
    a = np.array([[1.0, 0.0, 0.0], [0.4, 0.9, 0.0], [-0.3, 0.2, 1.1]])
    cov = a @ a.T
    for method in ("logpdf", "pdf"):
        yield from _mvn_rows(getattr(st.multivariate_normal, method), method, cov)
        dirichlet = getattr(st.dirichlet, method)
        x = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])
        alpha = np.array([1.5, 2.0, 0.8])
        # x leaves the simplex under a finite-difference step: alpha here, x below
        yield case(f"dirichlet.{method}-(3,2)", lambda al: dirichlet(x, al), (alpha,), dirichlet,
                   {"x": x, "alpha": alpha}, ("alpha",), jvp=False)


def _mvn_rows(fn, method, cov):
    for shape in ((3,), (4, 3)):
        x, mean = sample(shape, -1.0, 1.0), sample((3,), -0.5, 0.5)
        yield case(f"multivariate_normal.{method}-{shape}".replace(" ", ""), lambda x, m, c: fn(x, m, c),
                   (x, mean, cov), fn, {"x": x, "mean": mean, "cov": cov}, ("x", "mean", "cov"))
    x = sample((4, 3), -1.0, 1.0)
    yield case(f"multivariate_normal.{method}-(4,3)-no-mean", lambda x: fn(x, cov=cov), (x,), fn,
               {"x": x, "cov": cov}, ("x",))
    entropy = st.multivariate_normal.entropy
    yield case(f"multivariate_normal.entropy-for-{method}", lambda c: entropy(cov=c), (cov,), entropy, {"cov": cov},
               ("cov",))
    yield case(f"multivariate_normal.{method}-allow_singular", lambda x: fn(x, cov=cov, allow_singular=False), (x,), fn,
               {"x": x, "cov": cov, "allow_singular": False}, ("x",))


def helper_rows():
    """The helpers multivariate_normal's and dirichlet's rules call (primitives, for second order)."""
    h = scipy_stats
    x, m, c, u, w = sample((4, 3)), sample((3,)), sample((3, 3)), sample((4, 3)), sample((4,))
    alpha, points = sample((3,)), sample((3, 2), 0.2, 0.9)
    yield case("centered_on-(4,3)x(3,)", lambda x, m: h.centered_on(x, m), (x, m), h.centered_on,
               {"x": x, "mean": m}, ("x", "mean"))
    yield case("lower_read-(3,3)", lambda c: h.lower_read(c), (c,), h.lower_read, {"c": c}, ("c",))
    spd = c @ c.T + 3.0 * np.eye(3)
    for allow in (False, True):
        yield case(f"mvn_precision-(3,3)-allow_singular={allow}", lambda c, allow=allow: h.mvn_precision(c, allow),
                   (spd,), h.mvn_precision, {"cov": spd, "allow_singular": allow}, ("cov",))
    yield case("lower_symmetric-(3,3)", lambda t: h.lower_symmetric(t), (c,), h.lower_symmetric, {"t": c}, ("t",))
    yield case("mvn_rows-(4,3)", lambda u: h.mvn_rows(u, 3), (u,), h.mvn_rows, {"u": u, "d": 3},
               ("u",))
    yield case("mvn_weighted_outer-(4,3)x(4,)", lambda u, w: h.mvn_weighted_outer(u, 3, w), (u, w),
               h.mvn_weighted_outer, {"u": u, "d": 3, "w": w}, ("u", "w"))
    yield case("along_components-(3,)x(3,2)", lambda a: h.along_components(a, points), (alpha,), h.along_components,
               {"alpha": alpha, "x": points}, ("alpha",))


if st is None:
    ROWS = []
else:
    ROWS = [*continuous_rows(), *quantile_rows(), *entropy_rows(), *discrete_rows(), *multivariate_rows(),
            *helper_rows()]

pytestmark = pytest.mark.skipif(st is None, reason="SciPy is not installed")

if st is not None:
    test_vjp, test_jvp, test_rules_keep_float32, test_every_vjp_rule_has_a_jvp_rule, test_ids_are_unique = \
        table_tests(ROWS, scipy_stats.table)


@QUIET
@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_second_order(row):
    check_second_order(row)


def model(x, mu, log_sigma, logits):
    lp = np.sum(st.norm.logpdf(x, mu, np.exp(log_sigma)))
    return lp + np.sum(sp.logsumexp(logits, axis=1)) + np.sum(sp.gammaln(np.exp(log_sigma) + x * x))


def test_end_to_end_grad_jvp_and_grad_of_grad(rng):
    x, logits = rng.normal(size=5), rng.normal(size=(3, 4))
    args = (x, 0.4, -0.2, logits)
    tg.gradcheck(model, *args, wrt=(0, 1, 2, 3), order=2)
    eps, t = 1e-6, rng.normal(size=5)
    _, tangent = tg.jvp(lambda x: model(x, 0.4, -0.2, logits), (x,), (t,))
    expected = (model(x + eps * t, 0.4, -0.2, logits) - model(x - eps * t, 0.4, -0.2, logits)) / (2 * eps)
    assert tangent == pytest.approx(expected, rel=1e-6)
    second = tg.grad(lambda mu: tg.grad(model, wrt=1)(x, mu, -0.2, logits))(0.4)
    first = tg.grad(model, wrt=1)
    assert second == pytest.approx((first(x, 0.4 + 1e-4, -0.2, logits) - first(x, 0.4 - 1e-4, -0.2, logits)) / 2e-4,
                                   rel=1e-6)


@pytest.mark.parametrize("call", [lambda q, df: st.t.median(df) * q, lambda q, a: st.beta.std(a, 2.0) * q,
                                  lambda q, df: st.t(df).median() * q], ids=["t.median", "beta.std", "frozen-t.median"])
def test_an_argument_without_a_rule_is_a_no_rule_error(call):
    with pytest.raises(tg.NoRuleError):
        tg.grad(lambda q, p: np.sum(call(q, p)), wrt=1)(np.array([0.3, 0.8]), 2.5)


@pytest.mark.parametrize("call", [lambda x, df: st.t.cdf(x, df), lambda x, df: st.t.logsf(x, df),
                                  lambda x, a: st.beta.sf(x, a, 2.0), lambda x, b: st.beta.logcdf(x, 1.5, b),
                                  lambda x, df: st.t(df).cdf(x)],
                         ids=["t.cdf-df", "t.logsf-df", "beta.sf-a", "beta.logcdf-b", "frozen-t.cdf-df"])
def test_cdfs_in_shape_parameters_on_both_sides_and_outside_the_support(call):
    """t's cdf in df below and above 0 (and at 0, where it is 1/2 for every df), beta's outside [0, 1]
    (0 or 1 for every a and b): every mode and grad of grad against central differences."""
    x = np.array([-1.3, 0.0, 0.4, 2.1]) if "df" in call.__code__.co_varnames else np.array([-0.2, 0.3, 0.8, 1.4])
    if "logcdf" in call.__code__.co_names:
        x = np.array([0.3, 0.5, 0.8])  # (log 0 outside the support)
    check_modes(lambda p: np.sum(np.sin(call(x, p))), 2.7)


def test_counts_and_data_written_as_lists():
    """poisson.logpmf([1, 2, 0], mu): the list as SciPy takes it (an array), in the rules too."""
    def f(log_mu, logit):
        p = 1 / (1 + np.exp(-logit))
        return (np.sum(st.poisson.logpmf([1, 2, 0], np.exp(log_mu))) + np.sum(st.binom.logpmf([1, 3, 2], 5, p))
                + np.sum(st.norm.logpdf([0.1, -0.4, 0.3], log_mu, 2.0)))
    check_modes(f, np.array([0.3, -0.2, 0.5]), np.array([0.1, 0.4, -0.3]))


def test_negative_binomial_regression_through_nbinom_logpmf():
    """An NB2 regression's log-likelihood as `stats.nbinom.logpmf(y, n, p)`, n = 1 / alpha and p = n / (n + mu):
    in the coefficients and log alpha, every mode and second order against central differences."""
    X = np.array([[1.0, 0.3], [1.0, -0.5], [1.0, 1.2], [1.0, 0.1], [1.0, -1.0]])
    y = np.array([0, 2, 5, 1, 0])

    def nb_loglike(params):
        beta, alpha = params[:-1], np.exp(params[-1])
        mu = np.exp(X.dot(beta))
        n = 1.0 / alpha
        return np.sum(st.nbinom.logpmf(y, n, n / (n + mu)))
    check_modes(nb_loglike, np.array([0.2, 0.4, -0.5]))


def test_counts_are_inert():
    """poisson's k carries no derivative even when computed from the variable (it is an integer there)."""
    g = tg.grad(lambda mu: np.sum(st.poisson.logpmf(np.floor(mu * 2.0), mu)))(1.3)
    assert g == pytest.approx(2.0 / 1.3 - 1)


def test_multivariate_normal_cov_gradient_through_a_factor(rng):
    """A symmetric parametrization (cov = a a' + I) gets the usual symmetric gradient."""
    a, x = rng.normal(size=(3, 3)), rng.normal(size=(5, 3))
    tg.gradcheck(lambda a: np.sum(st.multivariate_normal.logpdf(x, np.zeros(3), a @ a.T + np.eye(3))), a, order=2)


def test_multivariate_normal_with_a_singular_cov_allowed():
    """allow_singular=True (autograd's test): x and mean move within the support, their gradients use the
    pseudo-inverse; the support's complement is pinned to the mean, as the density requires."""
    cov = np.diag([1.0, 1.0, 0.0, 0.0])
    for method in (st.multivariate_normal.logpdf, st.multivariate_normal.pdf):
        def f(x, mean):
            x = np.concatenate([x[:2], mean[2:]])
            return method(x, mean, cov, allow_singular=True)
        x, mean = np.array([0.3, -0.4, 0.0, 0.0]), np.array([0.1, 0.2, 0.0, 0.0])
        tg.gradcheck(f, x, mean, wrt=(0, 1))
        _, tangent = tg.jvp(f, (x, mean), (np.array([0.5, 1.0, 0.0, 0.0]), np.array([-1.0, 0.3, 0.0, 0.0])))
        eps = 1e-6
        plus = f(x + eps * np.array([0.5, 1.0, 0, 0]), mean + eps * np.array([-1.0, 0.3, 0, 0]))
        minus = f(x - eps * np.array([0.5, 1.0, 0, 0]), mean - eps * np.array([-1.0, 0.3, 0, 0]))
        assert tangent == pytest.approx((plus - minus) / (2 * eps), rel=1e-6)


def test_multivariate_normal_entropy_does_not_depend_on_the_mean(rng):
    a = rng.normal(size=(3, 3))
    f = lambda mean, a: st.multivariate_normal.entropy(mean, a @ a.T + np.eye(3)) * np.sum(mean ** 0)  # noqa: E731
    tg.gradcheck(f, rng.normal(size=3), a, wrt=(0, 1), order=2)
    assert np.all(tg.grad(f)(rng.normal(size=3), a) == 0.0)


def test_dirichlet_x_along_the_simplex():
    x, alpha = np.array([0.2, 0.3, 0.5]), np.array([1.5, 2.0, 0.8])
    direction, eps = np.array([1.0, -0.4, -0.6]), 1e-6
    for fn in (st.dirichlet.logpdf, st.dirichlet.pdf):
        g = tg.grad(lambda x: fn(x, alpha))(x)
        expected = (fn(x + eps * direction, alpha) - fn(x - eps * direction, alpha)) / (2 * eps)
        assert g @ direction == pytest.approx(expected, rel=1e-6)
        _, tangent = tg.jvp(lambda x: fn(x, alpha), (x,), (direction,))
        assert tangent == pytest.approx(expected, rel=1e-6)


# --- frozen distributions: `norm(mu, sigma).logpdf(x)` is `norm.logpdf(x, mu, sigma)` -------------------

def frozen_norm(mu, sigma, x):
    d = st.norm(mu, sigma)
    return np.sum(d.logpdf(x)) + np.sum(st.norm(loc=mu, scale=sigma).logcdf(x))


def frozen_t(df, scale, x):
    return np.sum(st.t(df, 0.1, scale).logpdf(x))


def frozen_mvn(mean, cov, x):
    d = st.multivariate_normal(mean, cov)
    return np.sum(d.logpdf(x)) + 0.5 * np.sum(d.pdf(x))


def frozen_poisson(mu):
    return np.sum(st.poisson(mu).logpmf(np.array([0, 1, 4])))


def frozen_through_a_helper(mu, x):
    return _log_likelihood(st.logistic(mu, 0.7), x)


def _log_likelihood(d, x):
    return np.sum(d.logpdf(x))


@pytest.mark.parametrize("f, args", [
    (frozen_norm, (0.2, 1.3, np.array([0.3, -1.2, 0.8]))),
    (frozen_t, (3.5, 1.2, np.array([0.3, -1.2, 0.8]))),
    (frozen_mvn, (np.array([0.1, -0.2]), np.array([[2.0, 0.3], [0.3, 1.0]]), np.array([[0.5, 0.2], [-0.4, 1.0]]))),
    (frozen_poisson, (1.7,)),
    (frozen_through_a_helper, (0.3, np.array([0.3, -1.2, 0.8]))),
], ids=["norm", "t", "multivariate_normal", "poisson", "helper"])
def test_frozen_distributions_in_every_mode(f, args):
    check_modes(f, *args)


def test_frozen_distribution_lowers_to_the_method_with_its_arguments():
    text = tg.source(frozen_norm, wrt=(0, 1))
    assert "scipy.stats.norm.logpdf(x, mu, sigma)" in text
    assert "scipy.stats.norm.logcdf(x, loc=mu, scale=sigma)" in text


def test_frozen_distribution_used_as_a_value_is_made_as_written():
    """A method without rules runs on the frozen object; a gradient through it is refused, not lost."""
    def f(mu, x):
        spread = st.norm(0.0, 2.0)
        return np.sum(st.norm(mu).logpdf(x)) * spread.std()
    assert tg.grad(f)(0.2, np.array([0.5, 1.0])) == pytest.approx(2.0 * np.sum(np.array([0.5, 1.0]) - 0.2))

    def g(mu):
        d = st.norm(mu, 1.0)
        return d.logpdf(0.5) + d.mean()
    with pytest.raises(tg.NoRuleError, match=r"st\.norm\(\)"):
        tg.grad(g)(0.2)


def frozen_quantiles_and_entropy(mu, log_s, x):
    d = st.norm(mu, np.exp(log_s))
    return np.sum(d.logpdf(x)) + np.sum(d.ppf([0.2, 0.7]) ** 2) + d.entropy() * mu


def frozen_made_as_written(x):
    """A frozen distribution also used as a value (so made as written, also in gradient code differentiated
    again inside another module's function: tests/modes.py's)."""
    d = st.norm(x[0], np.exp(x[2]))
    print("the distribution:", d)
    return np.sum(d.logpdf(x))


@pytest.mark.parametrize("f, args", [(frozen_quantiles_and_entropy, (0.2, 0.3, np.array([0.3, -1.2, 0.8]))),
                                     (frozen_made_as_written, (np.array([0.3, -0.7, 1.2]),))],
                         ids=["ppf-entropy", "made-as-written"])
def test_frozen_distribution_methods_and_objects_in_every_mode(f, args):
    check_modes(f, *args)


def frozen_before_a_loop(mu, x):
    """The frozen distribution keeps the value m had when it was made, as SciPy's object does."""
    m = mu * 1.5
    d = st.norm(m, 1.0)
    for _ in range(2):
        m = m + mu
    return np.sum(d.logpdf(x)) + m


def test_frozen_distribution_keeps_its_arguments_values():
    check_modes(frozen_before_a_loop, 0.4, np.array([0.3, 0.9]))


def ordered_probit(params, y, x):
    """An ordered probit as published: cutpoints padded with -inf and inf, differences of normal cdfs."""
    cuts = np.cumsum(np.concatenate([params[:1], np.exp(params[1:3])]))
    c = np.concatenate([[-np.inf], cuts, [np.inf]])
    xb = params[3] * x
    return np.sum(np.log(st.norm.cdf(c[y + 1] - xb) - st.norm.cdf(c[y] - xb)))


@pytest.mark.parametrize("f", [
    lambda p: np.sum(st.norm.pdf(np.array([-np.inf, 0.3, np.inf]) - p)),
    lambda p: np.sum(st.norm.cdf(np.array([-np.inf, 0.3, np.inf]), p, 1.3)),
], ids=["norm.pdf", "norm.cdf-loc"])
def test_densities_where_they_are_zero_have_zero_derivative(f):
    """A density is never negative, so where it is 0 (z = +-inf, outside the support) so is its derivative:
    not 0 * inf = NaN from its score (-z for the normal); a cdf's second derivative is its density's first."""
    check_modes(f, 0.4, order2="pdf" not in f.__code__.co_names)


def test_ordered_probit_with_infinite_outer_cutpoints():
    params = np.array([-0.4, -0.2, 0.1, 0.7])
    check_modes(lambda params: ordered_probit(params, np.array([0, 1, 3, 2, 0, 3]),
                                              np.array([0.3, -0.5, 1.2, 0.1, -1.0, 2.0])), params)


def test_cdf_in_its_scale_where_z_is_infinite():
    """norm.cdf(inf, loc, scale) is 1 for every scale: its derivative in scale, -pdf(z) z / scale, is 0."""
    check_modes(lambda s: np.sum(st.norm.cdf(np.array([-np.inf, 0.3, np.inf]), 0.2, s)), 1.4, order2=False)

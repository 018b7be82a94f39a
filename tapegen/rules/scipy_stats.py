"""scipy.stats distributions called as functions: `norm.logpdf(x, loc, scale)`, `t.logpdf(x, df)`, ...

`scipy.stats.norm` is an instance (an `rv_continuous`); `scipy.stats.norm.logpdf`
a bound method, made afresh at each attribute access. resolve.Scope.static
follows attributes of scipy.stats instances, and bound methods are equal (and
hash alike) when their `__self__` and `__func__` are, so a method is a
primitive keyed by itself. A frozen distribution (`d = norm(mu, s)`) is no
primitive: the frontend keeps its arguments and lowers `d.logpdf(x)` to
`norm.logpdf(x, mu, s)` (frontend/lower_expr.py, `Frozen`).

Continuous location-scale families: logpdf(x, *shapes, loc, scale) =
f(z) - log(scale) with z = (x - loc) / scale, so the x, loc and scale rules
follow from the score f'(z) alone, and pdf's from logpdf's (times y). cdf,
logcdf, sf and logsf have rules in x, loc and scale (through pdf and logpdf,
themselves primitives with rules: second order works); so have ppf and isf
(in q, loc and scale). In shape parameters, the cdf & co. of gamma and chi2
have rules (through the incomplete gamma function's derivative in its shape,
incomplete_gamma.py), lognorm's (a normal cdf of log(z) / s), beta's a and b and
t's df (through the incomplete beta function's derivatives in its shapes,
incomplete_beta.py); ppf and isf too, the implicit derivative -(dF/dp) / pdf.

Discrete distributions: rules in their real parameters (poisson's mu,
bernoulli's, binom's and geom's p, nbinom's n and p); counts (k, binom's n) and the integer shift loc are inert.
multivariate_normal's rules read cov as SciPy does, through its lower triangle
(a symmetric perturbation gets the usual gradient); cov must be a 2-D matrix.
"""
import numpy as np
import scipy
import scipy.special
import scipy.stats

from ..runtime import unbroadcast
from .elementwise import broadcast_like, zero_safe_mul
from .linalg import linalg_mT, pinv_jvp, pinv_vjp
from .formulas import Formulas
from .incomplete_beta import betainc_da, betainc_db
from .incomplete_gamma import gammainc_da
from .table import RuleTable

table = RuleTable("scipy.stats")
st = scipy.stats

# name: (shape parameters, score f'(z), {shape parameter: d f / d parameter at fixed z}); {z} is the standardized x
LOCATION_SCALE = {
    "norm": ((), "-{z}", {}),
    "logistic": ((), "-np.tanh(0.5 * {z})", {}),
    "laplace": ((), "-np.sign({z})", {}),
    "cauchy": ((), "-2 * {z} / (1 + {z} * {z})", {}),
    "expon": ((), "-1.0", {}),
    "halfnorm": ((), "-{z}", {}),  # (on z >= 0, the norm's and cauchy's doubled)
    "halfcauchy": ((), "-2 * {z} / (1 + {z} * {z})", {}),
    "t": (("df",), "-(df + 1) * {z} / (df + {z} * {z})",
          {"df": "0.5 * (scipy.special.digamma(0.5 * (df + 1)) - scipy.special.digamma(0.5 * df) - 1 / df"
                 " - np.log1p({z} * {z} / df) + (df + 1) * {z} * {z} / (df * (df + {z} * {z})))"}),
    "gamma": (("a",), "(a - 1) / {z} - 1", {"a": "np.log({z}) - scipy.special.digamma(a)"}),
    "chi2": (("df",), "(0.5 * df - 1) / {z} - 0.5", {"df": "0.5 * (np.log(0.5 * {z}) - scipy.special.digamma(0.5 * df))"}),
    "lognorm": (("s",), "-(1 + np.log({z}) / (s * s)) / {z}", {"s": "(np.log({z}) ** 2 / (s * s) - 1) / s"}),
    "beta": (("a", "b"), "(a - 1) / {z} - (b - 1) / (1 - {z})",
             {"a": "np.log({z}) - scipy.special.digamma(a) + scipy.special.digamma(a + b)",
              "b": "np.log1p(-{z}) - scipy.special.digamma(b) + scipy.special.digamma(a + b)"}),
}
CONTINUOUS_METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")  # (and ppf, isf: below)

# name: {shape parameter: d cdf / d parameter at fixed z}: the regularized incomplete gamma function's
# derivative in its shape (incomplete_gamma.py; 0 below the support); sf, logcdf and logsf follow
CDF_SHAPE_PARTIALS = {
    "gamma": {"a": "gammainc_da(a, np.maximum({z}, 0.0))"},
    "chi2": {"df": "0.5 * gammainc_da(0.5 * df, 0.5 * np.maximum({z}, 0.0))"},
    # lognorm's cdf is ndtr(log(z) / s): in s, minus the normal density there times log(z) / s^2
    "lognorm": {"s": "-np.exp(-0.5 * (np.log(np.maximum({z}, 1e-300)) / s) ** 2) * 0.3989422804014327"
                     " * np.log(np.maximum({z}, 1e-300)) / (s * s)"},
    # beta's cdf is betainc(a, b, z): its derivatives in a and b (incomplete_beta.py)
    "beta": {"a": "betainc_da(a, b, np.clip({z}, 0.0, 1.0))", "b": "betainc_db(a, b, np.clip({z}, 0.0, 1.0))"},
    # t's is 0.5 betainc(df/2, 1/2, w) below 0 (1 - that above), w = df / (df + z^2): in df through a and w
    # (the beta density at w times dw/ddf = z^2 / (df + z^2)^2, written without its 0 * inf at z = 0); at z = 0
    # it is 1/2 for every df: 0 there, kept out of betainc_da's infinite x-derivative at w = 1
    "t": {"df": "np.where({z} == 0, 0.0, -0.5 * np.sign({z}) * (0.5 * betainc_da(0.5 * df, 0.5, "
                "df / (df + {z} * {z})) + np.exp((0.5 * df - 1) * np.log(df / (df + {z} * {z}))"
                " - scipy.special.betaln(0.5 * df, 0.5)) * np.abs({z}) / (df + {z} * {z}) ** 1.5))"},
}

# name: {shape parameter: d entropy / d parameter}; every entropy is the standard one's plus log(scale)
ENTROPY_PARTIALS = {
    "norm": {}, "logistic": {}, "laplace": {}, "cauchy": {}, "expon": {}, "halfnorm": {}, "halfcauchy": {},
    "t": {"df": "(df + 1) / 4 * (scipy.special.polygamma(1, (df + 1) / 2) - scipy.special.polygamma(1, df / 2))"
                " + 1 / (2 * df)"},
    "gamma": {"a": "1 + (1 - a) * scipy.special.polygamma(1, a)"},
    "chi2": {"df": "0.5 * (1 + (1 - df / 2) * scipy.special.polygamma(1, df / 2))"},
    "lognorm": {"s": "1 / s"},
    "beta": {"a": "(a + b - 2) * scipy.special.polygamma(1, a + b) - (a - 1) * scipy.special.polygamma(1, a)",
             "b": "(a + b - 2) * scipy.special.polygamma(1, a + b) - (b - 1) * scipy.special.polygamma(1, b)"},
}

# name: (signature, inert parameters, {parameter: d logpmf / d parameter})
DISCRETE = {
    "poisson": ("k, mu, loc=0", ("k", "loc"), {"mu": "(k - loc) / mu - 1"}),
    "bernoulli": ("k, p, loc=0", ("k", "loc"), {"p": "(k - loc) / p - (1 - (k - loc)) / (1 - p)"}),
    "binom": ("k, n, p, loc=0", ("k", "n", "loc"), {"p": "(k - loc) / p - (n - (k - loc)) / (1 - p)"}),
    # the negative binomial's n is real (NB2 regressions: n = 1 / alpha, p = n / (n + mu)): in n and p
    "nbinom": ("k, n, p, loc=0", ("k", "loc"), {
        "n": "scipy.special.digamma(k - loc + n) - scipy.special.digamma(n) + np.log(p)",
        "p": "n / p - (k - loc) / (1 - p)"}),
    "geom": ("k, p, loc=0", ("k", "loc"), {"p": "1 / p - (k - loc - 1) / (1 - p)"}),
}


def method(distribution: str, name: str):
    """`scipy.stats.<distribution>.<name>`, the bound method that is the primitive's key."""
    return getattr(getattr(st, distribution), name)


def centered_on(x, mean):
    """x - mean, or x for mean=None (multivariate_normal's default)."""
    return x if mean is None else x - mean


def mvn_precision(cov, allow_singular):
    """cov's inverse, or its pseudo-inverse where SciPy allows a singular cov (as autograd does)."""
    return np.linalg.pinv(cov) if allow_singular else np.linalg.inv(cov)


def lower_read(c):
    """A symmetric matrix's gradient as the gradient in a matrix read only through its lower triangle."""
    return np.tril(c + np.swapaxes(c, -1, -2)) - c * np.eye(np.shape(c)[-1], dtype=np.result_type(c))


def lower_symmetric(t):
    """The symmetric matrix SciPy sees in `t`: its lower triangle, mirrored."""
    return np.tril(t) + np.swapaxes(np.tril(t, -1), -1, -2)


def simplex_axes(x):
    """(components, -1): a Dirichlet sample's components along axis 0, its samples flattened after."""
    return (np.shape(x)[0], -1)


simplex_axes.pure = True

formulas = Formulas(table, globals(), "<tapegen scipy.stats formulas>")

for _name, (_shapes, _score, _shape_partials) in LOCATION_SCALE.items():
    _args = ", ".join(_shapes + ("loc", "scale"))
    _signature = ", ".join(_shapes + ("loc=0.0", "scale=1.0"))
    for _method in CONTINUOUS_METHODS:
        table.op(method(_name, _method), f"x, {_signature}", name=f"{_name}.{_method}",
                 spelling=f"scipy.stats.{_name}.{_method}")
    _z, _s = "((x - loc) / scale)", _score.format(z="((x - loc) / scale)")
    logpdf = {"x": f"({_s}) / scale", "loc": f"-({_s}) / scale", "scale": f"-(1 + {_z} * ({_s})) / scale",
              **{p: d.format(z=_z) for p, d in _shape_partials.items()}}
    formulas.derive(method(_name, "logpdf"), f"{_name}_logpdf", logpdf)
    # a density is never negative: where it is 0 (z infinite, outside the support) so is its derivative,
    # never 0 * inf (the normal's score -z at z = -inf, an ordered probit's outer cutpoints)
    formulas.derive(method(_name, "pdf"), f"{_name}_pdf", {p: f"zero_safe_mul(y, {d})" for p, d in logpdf.items()})
    _pdf = f"scipy.stats.{_name}.pdf(x, {_args})"
    _ratio = f"np.exp(scipy.stats.{_name}.logpdf(x, {_args}) - y)"  # pdf / cdf (or / sf) without underflow
    for _method, _slope, _sign in (("cdf", _pdf, ""), ("logcdf", _ratio, ""), ("sf", _pdf, "-"),
                                   ("logsf", _ratio, "-")):
        _other = "" if _sign else "-"
        _shaped = {p: d.format(z=_z) for p, d in CDF_SHAPE_PARTIALS.get(_name, {}).items()}
        _shaped = {p: f"{_sign}{d}" + (" * np.exp(-y)" if _method.startswith("log") else "")
                   for p, d in _shaped.items()}
        formulas.derive(method(_name, _method), f"{_name}_{_method}",
                        {"x": f"{_sign}{_slope}", "loc": f"{_other}{_slope}",
                         "scale": f"{_other}zero_safe_mul({_slope}, {_z})",  # (0, not NaN, at z = +-inf)
                         **_shaped})
    table.op(method(_name, "entropy"), _signature, name=f"{_name}.entropy", spelling=f"scipy.stats.{_name}.entropy")
    formulas.derive(method(_name, "entropy"), f"{_name}_entropy",
                    {"loc": "0.0", "scale": "1 / scale", **ENTROPY_PARTIALS[_name]})
    # the quantile functions: y = loc + scale * (a quantile of the standard distribution), so dy/dq is one
    # over the density at y (minus that for isf, of 1 - q); in a shape parameter p, where the cdf has a rule,
    # the implicit derivative: F((y - loc) / scale; p) = q (or 1 - q) held, dy/dp = -(dF/dp) / pdf(y), for both
    _implicit = {p: f"-({d.format(z='((y - loc) / scale)')}) / scipy.stats.{_name}.pdf(y, {_args})"
                 for p, d in CDF_SHAPE_PARTIALS.get(_name, {}).items()}
    for _method, _sign in (("ppf", ""), ("isf", "-")):
        table.op(method(_name, _method), f"q, {_signature}", name=f"{_name}.{_method}",
                 spelling=f"scipy.stats.{_name}.{_method}")
        formulas.derive(method(_name, _method), f"{_name}_{_method}",
                        {"q": f"{_sign}1 / scipy.stats.{_name}.pdf(y, {_args})", "loc": "1.0",
                         "scale": "(y - loc) / scale", **_implicit})

for _name, (_signature, _inert, _partials) in DISCRETE.items():
    for _method in ("logpmf", "pmf"):
        table.op(method(_name, _method), _signature, name=f"{_name}.{_method}",
                 spelling=f"scipy.stats.{_name}.{_method}", inert=_inert)
    formulas.derive(method(_name, "logpmf"), f"{_name}_logpmf", _partials)
    formulas.derive(method(_name, "pmf"), f"{_name}_pmf", {p: f"zero_safe_mul(y, {d})" for p, d in _partials.items()})

# poisson's cdf in mu: d P(K <= k) / d mu = -pmf(floor(k - loc), mu), its sf the opposite; logs divide by y
for _method, _slope in (("cdf", "-{pmf}"), ("sf", "{pmf}"), ("logcdf", "-{pmf} / np.exp(y)"),
                        ("logsf", "{pmf} / np.exp(y)")):
    table.op(method("poisson", _method), "k, mu, loc=0", name=f"poisson.{_method}",
             spelling=f"scipy.stats.poisson.{_method}", inert=("k", "loc"))
    formulas.derive(method("poisson", _method), f"poisson_{_method}",
                    {"mu": _slope.format(pmf="scipy.stats.poisson.pmf(np.floor(k - loc), mu)")})

# binom's (and bernoulli's, n = 1) in p: d P(K <= k) / d p = -n pmf(floor(k - loc); n - 1, p)
for _name, _signature, _inert, _n in (("binom", "k, n, p, loc=0", ("k", "n", "loc"), "n"),
                                      ("bernoulli", "k, p, loc=0", ("k", "loc"), "1")):
    for _method, _slope in (("cdf", "-{pmf}"), ("sf", "{pmf}"), ("logcdf", "-{pmf} / np.exp(y)"),
                            ("logsf", "{pmf} / np.exp(y)")):
        table.op(method(_name, _method), _signature, name=f"{_name}.{_method}",
                 spelling=f"scipy.stats.{_name}.{_method}", inert=_inert)
        formulas.derive(method(_name, _method), f"{_name}_{_method}",
                        {"p": _slope.format(pmf=f"{_n} * scipy.stats.binom.pmf(np.floor(k - loc), {_n} - 1, p)")})

MVN_LOGPDF, MVN_PDF = method("multivariate_normal", "logpdf"), method("multivariate_normal", "pdf")
DIRICHLET_LOGPDF, DIRICHLET_PDF = method("dirichlet", "logpdf"), method("dirichlet", "pdf")
for _fn, _name in ((MVN_LOGPDF, "multivariate_normal.logpdf"), (MVN_PDF, "multivariate_normal.pdf")):
    table.op(_fn, "x, mean=None, cov=1, allow_singular=False", name=_name, spelling=f"scipy.stats.{_name}",
             inert=("allow_singular",))  # in x and mean, a singular cov's pseudo-inverse (allow_singular=True)
for _fn, _name in ((DIRICHLET_LOGPDF, "dirichlet.logpdf"), (DIRICHLET_PDF, "dirichlet.pdf")):
    table.op(_fn, "x, alpha", name=_name, spelling=f"scipy.stats.{_name}")
table.op(centered_on, "x, mean", spelling="centered_on")
table.op(mvn_precision, "cov, allow_singular", spelling="mvn_precision", inert=("allow_singular",))
table.op(lower_read, "c", spelling="lower_read")
table.op(lower_symmetric, "t", spelling="lower_symmetric")
table.nondiff(simplex_axes, "x", spelling="simplex_axes")
formulas.derive(centered_on, "centered_on", {"x": "1", "mean": "-1"})
formulas.load()


# --- linear helpers: each one's transpose is the other ----------------------------------------------

@table.vjp(lower_read, "c")
def lower_read_vjp(g):
    return lower_symmetric(g)


@table.jvp(lower_read, "c")
def lower_read_jvp(c_dot):
    return lower_read(c_dot)


@table.vjp(lower_symmetric, "t")
def lower_symmetric_vjp(g):
    return lower_read(g)


@table.jvp(lower_symmetric, "t")
def lower_symmetric_jvp(t_dot):
    return lower_symmetric(t_dot)


@table.vjp(mvn_precision, "cov")
def mvn_precision_vjp(cov, allow_singular, y, g):
    return pinv_vjp(cov, y, g) if allow_singular else -linalg_mT(y) @ g @ linalg_mT(y)


@table.jvp(mvn_precision, "cov")
def mvn_precision_jvp(cov, cov_dot, allow_singular, y):
    return pinv_jvp(cov, cov_dot, y) if allow_singular else -y @ cov_dot @ y


# --- multivariate_normal: logpdf = -(d log 2 pi + log det cov + r' cov^-1 r) / 2, r = x - mean ------------
# The pdf rules are the logpdf rules with the cotangent g * y (d pdf = pdf * d logpdf).

@table.vjp(MVN_LOGPDF, "x")
def mvn_logpdf_vjp_x(x, mean, cov, allow_singular, g):
    return -np.expand_dims(g, -1) * (centered_on(x, mean) @ mvn_precision(cov, allow_singular))


@table.vjp(MVN_PDF, "x")
def mvn_pdf_vjp_x(x, mean, cov, allow_singular, y, g):
    return -np.expand_dims(g * y, -1) * (centered_on(x, mean) @ mvn_precision(cov, allow_singular))


@table.jvp(MVN_LOGPDF, "x")
def mvn_logpdf_jvp_x(x, x_dot, mean, cov, allow_singular):
    return -np.sum(x_dot * (centered_on(x, mean) @ mvn_precision(cov, allow_singular)), axis=-1)


@table.jvp(MVN_PDF, "x")
def mvn_pdf_jvp_x(x, x_dot, mean, cov, allow_singular, y):
    return -y * np.sum(x_dot * (centered_on(x, mean) @ mvn_precision(cov, allow_singular)), axis=-1)


@table.vjp(MVN_LOGPDF, "mean")
def mvn_logpdf_vjp_mean(x, mean, mean_shape, cov, allow_singular, g):
    return unbroadcast(np.expand_dims(g, -1) * (centered_on(x, mean) @ mvn_precision(cov, allow_singular)), mean_shape)


@table.vjp(MVN_PDF, "mean")
def mvn_pdf_vjp_mean(x, mean, mean_shape, cov, allow_singular, y, g):
    return unbroadcast(np.expand_dims(g * y, -1) * (centered_on(x, mean) @ mvn_precision(cov, allow_singular)), mean_shape)


@table.jvp(MVN_LOGPDF, "mean")
def mvn_logpdf_jvp_mean(x, mean, mean_dot, cov, allow_singular, y):
    return broadcast_like(np.sum(mean_dot * (centered_on(x, mean) @ mvn_precision(cov, allow_singular)), axis=-1), y)


@table.jvp(MVN_PDF, "mean")
def mvn_pdf_jvp_mean(x, mean, mean_dot, cov, allow_singular, y):
    return broadcast_like(y * np.sum(mean_dot * (centered_on(x, mean) @ mvn_precision(cov, allow_singular)), axis=-1), y)


# d logpdf / d cov (symmetric) = (u u' - cov^-1) / 2 per sample, u = cov^-1 r: summed with weights g.

MVN_ENTROPY = method("multivariate_normal", "entropy")
table.op(MVN_ENTROPY, "mean=None, cov=1", name="multivariate_normal.entropy",
         spelling="scipy.stats.multivariate_normal.entropy", inert=("mean",))  # not of the mean


@table.vjp(MVN_ENTROPY, "cov")  # entropy = (d (1 + log 2 pi) + log det cov) / 2: of cov only
def mvn_entropy_vjp_cov(cov, g):
    return 0.5 * g * lower_read(np.linalg.inv(cov))


@table.jvp(MVN_ENTROPY, "cov")
def mvn_entropy_jvp_cov(cov, cov_dot):
    return 0.5 * np.sum(np.linalg.inv(cov) * lower_symmetric(cov_dot))


@table.vjp(MVN_LOGPDF, "cov")
def mvn_logpdf_vjp_cov(x, x_shape, mean, cov, g):
    return 0.5 * lower_read(mvn_weighted_outer(centered_on(x, mean) @ np.linalg.inv(cov), x_shape[-1], g)
                            - np.sum(g) * np.linalg.inv(cov))


@table.vjp(MVN_PDF, "cov")
def mvn_pdf_vjp_cov(x, x_shape, mean, cov, y, g):
    return 0.5 * lower_read(mvn_weighted_outer(centered_on(x, mean) @ np.linalg.inv(cov), x_shape[-1], g * y)
                            - np.sum(g * y) * np.linalg.inv(cov))


@table.jvp(MVN_LOGPDF, "cov")
def mvn_logpdf_jvp_cov(x, mean, cov, cov_dot):
    return 0.5 * (np.sum((centered_on(x, mean) @ np.linalg.inv(cov) @ lower_symmetric(cov_dot))
                         * (centered_on(x, mean) @ np.linalg.inv(cov)), axis=-1)
                  - np.sum(np.linalg.inv(cov) * lower_symmetric(cov_dot)))


@table.jvp(MVN_PDF, "cov")
def mvn_pdf_jvp_cov(x, mean, cov, cov_dot, y):
    return 0.5 * y * (np.sum((centered_on(x, mean) @ np.linalg.inv(cov) @ lower_symmetric(cov_dot))
                             * (centered_on(x, mean) @ np.linalg.inv(cov)), axis=-1)
                      - np.sum(np.linalg.inv(cov) * lower_symmetric(cov_dot)))


def mvn_weighted_outer(u, d, w):
    """sum_i w_i u_i u_i' over the samples (rows of length d) of u; one sample when u is a vector."""
    return mvn_rows(u, d).T @ (np.reshape(w, (-1, 1)) * mvn_rows(u, d))


def mvn_rows(u, d):
    """u's samples as the rows of a matrix."""
    return np.reshape(u, (-1, d))


# --- dirichlet: logpdf = sum((alpha - 1) log x) + gammaln(sum alpha) - sum gammaln(alpha), x along axis 0 ---
# SciPy checks that x lies on the simplex: a perturbation of x that leaves it is an error there.

def along_components(alpha, x):
    """alpha shaped to broadcast along the first axis of x (the components)."""
    return np.reshape(alpha, np.shape(alpha) + (1,) * (np.ndim(x) - 1))



@table.vjp(DIRICHLET_LOGPDF, "x")
def dirichlet_logpdf_vjp_x(x, alpha, g):
    return g * (along_components(alpha, x) - 1) / x


@table.vjp(DIRICHLET_PDF, "x")
def dirichlet_pdf_vjp_x(x, alpha, y, g):
    return g * y * (along_components(alpha, x) - 1) / x


@table.jvp(DIRICHLET_LOGPDF, "x")
def dirichlet_logpdf_jvp_x(x, x_dot, alpha):
    return np.sum(x_dot * (along_components(alpha, x) - 1) / x, axis=0)


@table.jvp(DIRICHLET_PDF, "x")
def dirichlet_pdf_jvp_x(x, x_dot, alpha, y):
    return y * np.sum(x_dot * (along_components(alpha, x) - 1) / x, axis=0)


@table.vjp(DIRICHLET_LOGPDF, "alpha")
def dirichlet_logpdf_vjp_alpha(x, alpha, g):
    return (np.sum(np.reshape(g * np.log(x), simplex_axes(x)), axis=1)
            + np.sum(g) * (scipy.special.digamma(np.sum(alpha)) - scipy.special.digamma(alpha)))


@table.vjp(DIRICHLET_PDF, "alpha")
def dirichlet_pdf_vjp_alpha(x, alpha, y, g):
    return (np.sum(np.reshape(g * y * np.log(x), simplex_axes(x)), axis=1)
            + np.sum(g * y) * (scipy.special.digamma(np.sum(alpha)) - scipy.special.digamma(alpha)))


@table.jvp(DIRICHLET_LOGPDF, "alpha")
def dirichlet_logpdf_jvp_alpha(x, alpha, alpha_dot):
    return (np.sum(along_components(alpha_dot, x) * np.log(x), axis=0)
            + np.sum(alpha_dot * (scipy.special.digamma(np.sum(alpha)) - scipy.special.digamma(alpha))))


@table.jvp(DIRICHLET_PDF, "alpha")
def dirichlet_pdf_jvp_alpha(x, alpha, alpha_dot, y):
    return y * (np.sum(along_components(alpha_dot, x) * np.log(x), axis=0)
                + np.sum(alpha_dot * (scipy.special.digamma(np.sum(alpha)) - scipy.special.digamma(alpha))))


for _fn, _signature in ((mvn_weighted_outer, "u, d, w"), (mvn_rows, "u, d"), (along_components, "alpha, x")):
    table.op(_fn, _signature, spelling=_fn.__name__, inert=("d", "x"))


@table.vjp(mvn_rows, "u")
def mvn_rows_vjp(u_shape, g):
    return np.reshape(g, u_shape)


@table.jvp(mvn_rows, "u")
def mvn_rows_jvp(u_dot, d):
    return mvn_rows(u_dot, d)


@table.vjp(mvn_weighted_outer, "u")
def mvn_weighted_outer_vjp_u(u, u_shape, d, w, g):
    return np.reshape(np.reshape(w, (-1, 1)) * (mvn_rows(u, d) @ (g + g.T)), u_shape)


@table.jvp(mvn_weighted_outer, "u")
def mvn_weighted_outer_jvp_u(u, u_dot, d, w):
    return (mvn_rows(u_dot, d).T @ (np.reshape(w, (-1, 1)) * mvn_rows(u, d))
            + mvn_rows(u, d).T @ (np.reshape(w, (-1, 1)) * mvn_rows(u_dot, d)))


@table.vjp(mvn_weighted_outer, "w")
def mvn_weighted_outer_vjp_w(u, d, w_shape, g):
    return np.reshape(np.sum((mvn_rows(u, d) @ g) * mvn_rows(u, d), axis=1), w_shape)


@table.jvp(mvn_weighted_outer, "w")
def mvn_weighted_outer_jvp_w(u, d, w_dot):
    return mvn_weighted_outer(u, d, w_dot)


@table.vjp(along_components, "alpha")
def along_components_vjp(alpha_shape, g):
    return np.reshape(g, alpha_shape)


@table.jvp(along_components, "alpha")
def along_components_jvp(alpha_dot, x):
    return along_components(alpha_dot, x)


__all__ = ["table", "method", "centered_on", "lower_read", "lower_symmetric", "simplex_axes", "mvn_weighted_outer",
           "mvn_rows", "along_components", "broadcast_like", "unbroadcast"]

"""scipy.special: gamma and error functions, Bessel functions, logsumexp, softmax, entropies.

Loaded when lowering first meets a callable it does not know after the user's
code has imported scipy.special (`rules.load_optional`); `import tapegen`
never imports SciPy.

Most rules are derivative formulas (formulas.py): `{"x": "scipy.special.digamma(x)"}`
for gammaln. Each formula calls only primitives with rules of their own, so
the chain closes and gradient code differentiates again: gammaln -> digamma
-> polygamma(1, .) -> polygamma(2, .) ..., and the Bessel functions' recurrences
(`d iv(v, z) / dz = (iv(v - 1, z) + iv(v + 1, z)) / 2`) stay among themselves.
Order parameters (`n` of polygamma, `d` of multigammaln) are integers: inert.
Orders `v` of the Bessel functions have no rule: a gradient into them is a
NoRuleError, not a wrong number. gammainc's `a` has one: its derivatives in `a`
(no closed form) are computed as P is, by series and continued fraction
(incomplete_gamma.py), to second order; a third derivative in `a` is refused. betainc's `a` and `b`
likewise, by quadrature of the beta density's log-derivatives (incomplete_beta.py).

Constants are Python floats, so float32 stays float32, except where SciPy's own
function computes in float64 (polygamma, multigammaln): `polygamma_like` casts
back to the argument's dtype.
"""
import math

import numpy as np
import scipy
import scipy.special

from ..runtime import unbroadcast, unreduce
from .elementwise import broadcast_like, guarded_mul, zero_safe_mul
from .formulas import Formulas
from .incomplete_beta import betainc_da, betainc_daa, betainc_dab, betainc_db, betainc_dbb
from .incomplete_gamma import gammainc_da, gammainc_daa
from .table import RuleTable

table = RuleTable("scipy.special")
sp = scipy.special


def polygamma_like(n, x):
    """scipy.special.polygamma(n, x) in x's float dtype (SciPy computes it in float64)."""
    out = sp.polygamma(n, x)
    dtype = np.result_type(getattr(x, "dtype", np.float64), np.float16)
    return out if dtype == np.float64 else out.astype(dtype)


def gaussian(x):
    """exp(-x * x): the error functions' and ndtr's derivatives, 0 at x = +-inf (so is its own derivative there)."""
    return np.exp(-x * x)


def half_steps(d, a):
    """[0, 0.5, 1, ..., (d - 1) / 2] in a's float dtype: the shifts of multigammaln's gammaln terms."""
    return np.arange(d, dtype=np.result_type(getattr(a, "dtype", np.float64), np.float16)) * 0.5


def weights_or_one(b):
    """logsumexp's weights `b`, or 1.0 for none."""
    return 1.0 if b is None else b


def joint_shape(a_shape, b_shape):
    """The shape logsumexp reduces: `a`'s broadcast with its weights' (`b_shape` is () for none)."""
    return np.broadcast_shapes(a_shape, b_shape)


weights_or_one.pure = joint_shape.pure = True  # called on constants, folded when code is generated


# --- declarations -----------------------------------------------------------------------------------

UNARY = ("gammaln", "gamma", "rgamma", "loggamma", "digamma", "erf", "erfc", "erfcx", "erfinv", "erfcinv",
         "dawsn", "expit", "logit", "log_expit", "ndtr", "log_ndtr", "ndtri", "entr", "expm1", "log1p",
         "i0", "i1", "i0e", "i1e", "j0", "j1", "y0", "y1", "k0", "k1", "k0e", "k1e", "wofz", "exp1", "expi",
         "ellipk", "ellipe")
BINARY = {"xlogy": "x1, x2", "xlog1py": "x1, x2", "rel_entr": "x1, x2", "kl_div": "x1, x2", "beta": "a, b",
          "betaln": "a, b", "iv": "v, z", "ive": "v, z", "jv": "v, z", "yv": "v, z", "kv": "v, z",
          "kve": "v, z", "gammainc": "a, x", "gammaincc": "a, x", "stdtr": "df, t", "owens_t": "h, a"}

for _name in UNARY:
    table.op(getattr(sp, _name), "x", name=_name, spelling=f"scipy.special.{_name}")
for _name, _signature in BINARY.items():  # ufuncs take no keywords: the names are only for the rules
    table.op(getattr(sp, _name), _signature, name=_name, spelling=f"scipy.special.{_name}")
table.op(sp.polygamma, "n, x", name="polygamma", spelling="scipy.special.polygamma", inert=("n",))
table.op(sp.yn, "n, x", name="yn", spelling="scipy.special.yn", inert=("n",))  # integer order n
table.op(sp.expn, "n, x", name="expn", spelling="scipy.special.expn", inert=("n",))  # integer order n
table.op(sp.hyp2f1, "a, b, c, z", name="hyp2f1", spelling="scipy.special.hyp2f1")  # (a rule in z only)
table.op(sp.betainc, "a, b, x", name="betainc", spelling="scipy.special.betainc")
for _fn in (betainc_da, betainc_db, betainc_daa, betainc_dab, betainc_dbb):  # incomplete_beta.py
    table.op(_fn, "a, b, x", spelling=_fn.__name__)
table.nondiff(sp.gammasgn, "x", name="gammasgn", spelling="scipy.special.gammasgn")  # piecewise constant
table.op(sp.multigammaln, "a, d", name="multigammaln", spelling="scipy.special.multigammaln", inert=("d",))
table.op(sp.logsumexp, "a, axis=None, b=None, keepdims=False", name="logsumexp",
         spelling="scipy.special.logsumexp")  # (return_sign=True: standing_for.logsumexp)
table.op(sp.softmax, "x, axis=None", name="softmax", spelling="scipy.special.softmax")
table.op(sp.log_softmax, "x, axis=None", name="log_softmax", spelling="scipy.special.log_softmax")
table.op(polygamma_like, "n, x", spelling="polygamma_like", inert=("n",))
table.op(gaussian, "x", spelling="gaussian")
table.op(gammainc_da, "a, x", spelling="gammainc_da")  # dP/da and d2P/da2 (incomplete_gamma.py)
table.op(gammainc_daa, "a, x", spelling="gammainc_daa")
table.op(weights_or_one, "b", spelling="weights_or_one")
table.nondiff(half_steps, "d, a", spelling="half_steps")
table.nondiff(joint_shape, "a_shape, b_shape", spelling="joint_shape")

# --- derivative formulas ----------------------------------------------------------------------------

TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
SQRT_HALF = math.sqrt(0.5)
SQRT_2PI = math.sqrt(2 * math.pi)

UNARY_PARTIALS = {
    "gammaln": "scipy.special.digamma(x)",
    "loggamma": "scipy.special.digamma(x)",
    "gamma": "y * scipy.special.digamma(x)",
    "rgamma": "-y * scipy.special.digamma(x)",
    "digamma": "polygamma_like(1, x)",
    "erf": f"{TWO_OVER_SQRT_PI!r} * gaussian(x)",
    "erfc": f"-{TWO_OVER_SQRT_PI!r} * gaussian(x)",
    "erfcx": f"2 * x * y - {TWO_OVER_SQRT_PI!r}",
    "erfinv": f"{SQRT_PI_OVER_TWO!r} * np.exp(y * y)",
    "erfcinv": f"-{SQRT_PI_OVER_TWO!r} * np.exp(y * y)",
    "dawsn": "1 - 2 * x * y",
    "expit": "y * (1 - y)",
    "logit": "1 / (x * (1 - x))",
    "log_expit": "scipy.special.expit(-x)",
    "ndtr": f"{INV_SQRT_2PI!r} * gaussian({SQRT_HALF!r} * x)",
    "log_ndtr": f"{INV_SQRT_2PI!r} * np.exp(-0.5 * x * x - y)",  # pdf / cdf without underflow
    "ndtri": f"{SQRT_2PI!r} * np.exp(0.5 * y * y)",
    "entr": "-(np.log(x) + 1)",
    "expm1": "y + 1",
    "log1p": "1 / (1 + x)",
    "i0": "scipy.special.i1(x)",
    "i1": "0.5 * (scipy.special.i0(x) + scipy.special.iv(2, x))",
    "i0e": "scipy.special.i1e(x) - np.sign(x) * y",
    "i1e": "0.5 * (scipy.special.i0e(x) + scipy.special.ive(2, x)) - np.sign(x) * y",
    "j0": "-scipy.special.j1(x)",
    "j1": "0.5 * (scipy.special.j0(x) - scipy.special.jv(2, x))",
    "y0": "-scipy.special.y1(x)",
    "y1": "0.5 * (scipy.special.y0(x) - scipy.special.yv(2, x))",
    "k0": "-scipy.special.k1(x)",
    "k1": "-0.5 * (scipy.special.k0(x) + scipy.special.kv(2, x))",
    "k0e": "y - scipy.special.k1e(x)",
    "k1e": "y - 0.5 * (scipy.special.k0e(x) + scipy.special.kve(2, x))",
    "exp1": "-np.exp(-x) / x",
    "expi": "np.exp(x) / x",
    # the complete elliptic integrals of parameter m: dK/dm = (E - (1 - m) K) / (2 m (1 - m)), dE/dm = (E - K) / 2m
    "ellipk": "(scipy.special.ellipe(x) - (1 - x) * y) / (2 * x * (1 - x))",
    "ellipe": "(y - scipy.special.ellipk(x)) / (2 * x)",
    "wofz": f"{TWO_OVER_SQRT_PI!r}j - 2 * x * y",  # the Faddeeva function (Voigt profiles), holomorphic
}

BINARY_PARTIALS = {
    "beta": {"a": "y * (scipy.special.digamma(a) - scipy.special.digamma(a + b))",
             "b": "y * (scipy.special.digamma(b) - scipy.special.digamma(a + b))"},
    "betaln": {"a": "scipy.special.digamma(a) - scipy.special.digamma(a + b)",
               "b": "scipy.special.digamma(b) - scipy.special.digamma(a + b)"},
    "xlog1py": {"x1": "np.log1p(x2)", "x2": "x1 / np.where(x1 == 0, 1, 1 + x2)"},
    "rel_entr": {"x1": "np.log(x1 / x2) + 1", "x2": "-x1 / x2"},
    "kl_div": {"x1": "np.log(x1 / x2)", "x2": "1 - x1 / x2"},
    "iv": {"z": "0.5 * (scipy.special.iv(v - 1, z) + scipy.special.iv(v + 1, z))"},
    "ive": {"z": "0.5 * (scipy.special.ive(v - 1, z) + scipy.special.ive(v + 1, z)) - np.sign(z) * y"},
    "jv": {"z": "0.5 * (scipy.special.jv(v - 1, z) - scipy.special.jv(v + 1, z))"},
    "yv": {"z": "0.5 * (scipy.special.yv(v - 1, z) - scipy.special.yv(v + 1, z))"},
    "kv": {"z": "-0.5 * (scipy.special.kv(v - 1, z) + scipy.special.kv(v + 1, z))"},
    "kve": {"z": "y - 0.5 * (scipy.special.kve(v - 1, z) + scipy.special.kve(v + 1, z))"},
    "gammainc": {"a": "gammainc_da(a, x)", "x": "np.exp((a - 1) * np.log(x) - x - scipy.special.gammaln(a))"},
    "gammaincc": {"a": "-gammainc_da(a, x)", "x": "-np.exp((a - 1) * np.log(x) - x - scipy.special.gammaln(a))"},
    # the gamma density x^(a-1) e^-x / Gamma(a) differentiated in a, once and twice, for the mixed derivatives
    "gammainc_da": {"a": "gammainc_daa(a, x)",
                    "x": "np.exp((a - 1) * np.log(x) - x - scipy.special.gammaln(a)) * (np.log(x) - scipy.special.digamma(a))"},
    "gammainc_daa": {"x": "np.exp((a - 1) * np.log(x) - x - scipy.special.gammaln(a))"
                          " * ((np.log(x) - scipy.special.digamma(a)) ** 2 - polygamma_like(1, a))"},
    "yn": {"x": "0.5 * (scipy.special.yn(n - 1, x) - scipy.special.yn(n + 1, x))"},
    # E_n' = -E_(n-1), and E_0 = exp(-x) / x (whose own is -E_0 (1 + 1 / x))
    "expn": {"x": "np.where(n == 0, -y * (1 + 1 / x), -scipy.special.expn(np.maximum(n - 1, 0), x))"},
    "hyp2f1": {"z": "a * b / c * scipy.special.hyp2f1(a + 1, b + 1, c + 1, z)"},
    # Student's t cdf in t: the t density (in df: no rule)
    "stdtr": {"t": "np.exp(scipy.special.gammaln((df + 1) / 2) - scipy.special.gammaln(df / 2) - 0.5 * np.log(df * np.pi)"
                   " - (df + 1) / 2 * np.log1p(t * t / df))"},
    # Owen's T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx
    "owens_t": {"h": f"-0.5 * {INV_SQRT_2PI!r} * gaussian({SQRT_HALF!r} * h) * scipy.special.erf(a * h * {SQRT_HALF!r})",
                "a": f"gaussian({SQRT_HALF!r} * h) * gaussian({SQRT_HALF!r} * a * h) / (2 * np.pi * (1 + a * a))"},
}

BETA_DENSITY = "np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - scipy.special.betaln(a, b))"
LOG_A = "(np.log(x) - scipy.special.digamma(a) + scipy.special.digamma(a + b))"  # d log density / da
LOG_B = "(np.log1p(-x) - scipy.special.digamma(b) + scipy.special.digamma(a + b))"
formulas = Formulas(table, globals(), "<tapegen scipy.special formulas>")
for _name, _partial in UNARY_PARTIALS.items():
    formulas.derive(getattr(sp, _name), _name, {"x": _partial}, unbroadcast=False)
for _name, _partials in BINARY_PARTIALS.items():
    formulas.derive(getattr(sp, _name, None) or globals()[_name], _name, _partials)
# xlogy(0, x2) is 0 for every x2: its x2-derivative x1 / x2 is 0 there, also at x2 = 0.
formulas.derive(sp.xlogy, "xlogy", {"x1": "np.log(x2)"}, guard=True)
formulas.derive(sp.xlogy, "xlogy", {"x2": "x1 / np.where(x1 == 0, 1, x2)"})
formulas.derive(sp.polygamma, "polygamma", {"x": "polygamma_like(n + 1, x)"})
for _name in ("iv", "ive", "jv", "yv", "kv", "kve"):  # a differentiated order reaches no rule: say why
    table.primitives[getattr(sp, _name)].hint = (
        f"{_name}(v, z) is differentiated in z only: its derivative in the order v has no closed form (autograd and "
        f"JAX give none either); pass the order as a number, or wrap it in tapegen.stop_gradient(v)")
formulas.derive(sp.betainc, "betainc",  # the beta density: x^(a-1) (1-x)^(b-1) / B(a, b)
                {"x": BETA_DENSITY, "a": "betainc_da(a, b, x)", "b": "betainc_db(a, b, x)"})
# in a and b: the next derivatives in a and b (incomplete_beta.py); in x, the density times its log-derivatives
# (infinite at x = 0 or 1 for a or b below 1, where a zero tangent or cotangent stays zero: guard)
formulas.derive(betainc_da, "betainc_da", {"a": "betainc_daa(a, b, x)", "b": "betainc_dab(a, b, x)"})
formulas.derive(betainc_db, "betainc_db", {"a": "betainc_dab(a, b, x)", "b": "betainc_dbb(a, b, x)"})
formulas.derive(betainc_da, "betainc_da", {"x": f"{BETA_DENSITY} * {LOG_A}"}, guard=True)
formulas.derive(betainc_db, "betainc_db", {"x": f"{BETA_DENSITY} * {LOG_B}"}, guard=True)
formulas.derive(betainc_daa, "betainc_daa", {"x": f"{BETA_DENSITY} * ({LOG_A} ** 2 - polygamma_like(1, a) "
                                                  f"+ polygamma_like(1, a + b))"}, guard=True)
formulas.derive(betainc_dab, "betainc_dab", {"x": f"{BETA_DENSITY} * ({LOG_A} * {LOG_B} + polygamma_like(1, a + b))"},
                guard=True)
formulas.derive(betainc_dbb, "betainc_dbb", {"x": f"{BETA_DENSITY} * ({LOG_B} ** 2 - polygamma_like(1, b) "
                                                  f"+ polygamma_like(1, a + b))"}, guard=True)
formulas.derive(polygamma_like, "polygamma_like", {"x": "polygamma_like(n + 1, x)"})
# exp(-x^2) is never negative: where it is 0 (|x| large or infinite) so is its derivative, not 0 * inf
formulas.derive(gaussian, "gaussian", {"x": "zero_safe_mul(y, -2 * x)"}, unbroadcast=False)
formulas.derive(sp.multigammaln, "multigammaln",
                {"a": "np.sum(scipy.special.digamma(np.expand_dims(a, -1) - half_steps(d, a)), axis=-1)"},
                unbroadcast=False)
formulas.derive(weights_or_one, "weights_or_one", {"b": "1"}, unbroadcast=False)
formulas.load()


# --- reductions: logsumexp, softmax, log_softmax --------------------------------------------------
# exp(a - y) <= 1 where y = logsumexp(a): no overflow. `b` broadcasts against `a`; the reduced shape is both.

@table.vjp(sp.logsumexp, "a")
def logsumexp_vjp_a(a, a_shape, axis, b, b_shape, keepdims, y, g):
    return unbroadcast(unreduce(g, joint_shape(a_shape, b_shape), axis, keepdims) * weights_or_one(b)
                       * np.exp(a - unreduce(y, joint_shape(a_shape, b_shape), axis, keepdims)), a_shape)


@table.jvp(sp.logsumexp, "a")
def logsumexp_jvp_a(a, a_dot, a_shape, axis, b, b_shape, keepdims, y):
    return np.sum(a_dot * weights_or_one(b) * np.exp(a - unreduce(y, joint_shape(a_shape, b_shape), axis,
                                                                  keepdims)), axis=axis, keepdims=keepdims)


@table.vjp(sp.logsumexp, "b")
def logsumexp_vjp_b(a, a_shape, axis, b_shape, keepdims, y, g):
    return unbroadcast(unreduce(g, joint_shape(a_shape, b_shape), axis, keepdims)
                       * np.exp(a - unreduce(y, joint_shape(a_shape, b_shape), axis, keepdims)), b_shape)


@table.jvp(sp.logsumexp, "b")
def logsumexp_jvp_b(a, a_shape, axis, b_dot, b_shape, keepdims, y):
    return np.sum(b_dot * np.exp(a - unreduce(y, joint_shape(a_shape, b_shape), axis, keepdims)),
                  axis=axis, keepdims=keepdims)


@table.vjp(sp.softmax, "x")
def softmax_vjp(axis, y, g):
    return y * (g - np.sum(g * y, axis=axis, keepdims=True))


@table.jvp(sp.softmax, "x")
def softmax_jvp(x_dot, axis, y):
    return y * (x_dot - np.sum(x_dot * y, axis=axis, keepdims=True))


@table.vjp(sp.log_softmax, "x")
def log_softmax_vjp(axis, y, g):
    return g - np.exp(y) * np.sum(g, axis=axis, keepdims=True)


@table.jvp(sp.log_softmax, "x")
def log_softmax_jvp(x_dot, axis, y):
    return x_dot - np.sum(np.exp(y) * x_dot, axis=axis, keepdims=True)


__all__ = ["table", "gammainc_da", "gammainc_daa", "betainc_da", "betainc_db", "betainc_daa", "betainc_dab",
           "betainc_dbb", "polygamma_like", "gaussian", "half_steps", "weights_or_one", "joint_shape", "broadcast_like", "guarded_mul",
           "zero_safe_mul"]

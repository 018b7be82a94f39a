"""Derivatives of the regularized incomplete gamma function P(a, x) in its shape parameter `a`.

SciPy has P (`scipy.special.gammainc`) but no derivative in `a`, which has no closed form. These are
computed the way P itself is (Numerical Recipes' `gser` / `gcf`, Cephes' `igam`): the power series

    P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n t_n,   t_0 = 1,  t_n = t_(n-1) * x / (a + n)

where x < a + 1, and Legendre's continued fraction for Q = 1 - P elsewhere, differentiated term by
term: the series' terms in closed form (d log t_n / da = -sum_k 1 / (a + k)), the continued fraction's
convergents carried as (value, first, second derivative) through its recurrences. Q's derivatives are
taken from Q itself, not from 1 - P, so they keep their relative accuracy deep in the upper tail
(log sf of a gamma distribution). Both stop when the next term no longer changes the sums (every entry
converges within a few hundred terms for a and x up to 1e6; more raises, rather than return a number that
did not converge).

`gammainc_da(a, x)` and `gammainc_daa(a, x)` are primitives with rules (scipy_special.py): the first and
second derivatives in `a`; the mixed ones in `x` have closed forms.
"""
import numpy as np
import scipy.special

_EPS = 1e-16
_TINY = 1e-300
_MAX_TERMS = 100_000


def gammainc_derivatives(a, x):
    """(dP/da, d2P/da2) of the regularized lower incomplete gamma function, elementwise (broadcast)."""
    a, x = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(x, dtype=float))
    first, second = np.full(a.shape, np.nan), np.full(a.shape, np.nan)
    valid = (a > 0) & (x >= 0)
    edge = valid & ((x == 0) | np.isinf(x))  # P is 0 (or 1) whatever a is
    first[edge] = second[edge] = 0.0
    series = valid & ~edge & (x < a + 1)
    fraction = valid & ~edge & ~series
    if series.any():
        first[series], second[series] = _series(a[series], x[series])
    if fraction.any():
        d1, d2 = _continued_fraction(a[fraction], x[fraction])
        first[fraction], second[fraction] = -d1, -d2  # P = 1 - Q
    return first, second


def gammainc_da(a, x):
    """dP(a, x)/da (P = scipy.special.gammainc)."""
    return _like(gammainc_derivatives(a, x)[0], a, x)


def gammainc_daa(a, x):
    """d2P(a, x)/da2."""
    return _like(gammainc_derivatives(a, x)[1], a, x)


def _like(value, a, x):
    """The result in the arguments' float dtype (float32 stays float32, as SciPy's gammainc keeps it), a
    0-d one as a NumPy scalar."""
    dtype = np.result_type(np.asarray(a).dtype, np.asarray(x).dtype)  # (a Python float counts as float64, as
    #                                                                    SciPy's ufunc loops take it)
    value = value.astype(dtype if np.issubdtype(dtype, np.floating) else np.float64, copy=False)
    return value[()] if np.ndim(a) == 0 and np.ndim(x) == 0 else value


def _series(a, x):
    """P's derivatives in a from the series, where x < a + 1 (its terms then decrease after the first)."""
    log_x = np.log(x)
    prefactor = np.exp(a * log_x - x - scipy.special.gammaln(a + 1))
    term, h, h2 = np.ones_like(a), np.zeros_like(a), np.zeros_like(a)
    s, s1, s2 = term.copy(), np.zeros_like(a), np.zeros_like(a)
    for n in range(1, _MAX_TERMS):
        term = term * x / (a + n)
        h = h + 1 / (a + n)
        h2 = h2 + 1 / (a + n) ** 2
        d1, d2 = -term * h, term * (h * h + h2)
        s, s1, s2 = s + term, s1 + d1, s2 + d2
        if np.all((term <= _EPS * s) & (np.abs(d1) <= _EPS * np.abs(s1) + _TINY)
                  & (np.abs(d2) <= _EPS * np.abs(s2) + _TINY)):
            break
    else:
        raise FloatingPointError("the series of the incomplete gamma function's derivative did not converge")
    slope = log_x - scipy.special.digamma(a + 1)
    curvature = slope * slope - scipy.special.polygamma(1, a + 1)
    return prefactor * (slope * s + s1), prefactor * (curvature * s + 2 * slope * s1 + s2)


def _continued_fraction(a, x):
    """Q's derivatives in a from Legendre's continued fraction (modified Lentz), where x >= a + 1."""
    zero = np.zeros_like(a)
    b = (x + 1 - a, -np.ones_like(a), zero)
    c = (np.full_like(a, 1 / _TINY), zero, zero)
    d = _inverse(b)
    h = d
    for i in range(1, _MAX_TERMS):
        an = (-i * (i - a), np.full_like(a, float(i)), zero)
        b = (b[0] + 2, b[1], b[2])
        d = _add(_mul(an, d), b)
        d = (np.where(np.abs(d[0]) < _TINY, _TINY, d[0]), d[1], d[2])
        c = _add(b, _mul(an, _inverse(c)))
        c = (np.where(np.abs(c[0]) < _TINY, _TINY, c[0]), c[1], c[2])
        d = _inverse(d)
        step = _mul(d, c)
        h = _mul(h, step)
        if np.all((np.abs(step[0] - 1) <= _EPS) & (np.abs(step[1]) <= _EPS * np.abs(h[1] / h[0]) + _TINY)
                  & (np.abs(step[2]) <= _EPS * (np.abs(h[2] / h[0]) + 1) + _TINY)):
            break
    else:
        raise FloatingPointError("the continued fraction of the incomplete gamma function did not converge")
    log_q = -x + a * np.log(x) - scipy.special.gammaln(a) + np.log(h[0])
    q = np.exp(log_q)
    slope = np.log(x) - scipy.special.digamma(a) + h[1] / h[0]
    curvature = -scipy.special.polygamma(1, a) + (h[2] * h[0] - h[1] * h[1]) / (h[0] * h[0])
    return q * slope, q * (slope * slope + curvature)


# (value, d/da, d2/da2) triples: the arithmetic the continued fraction's recurrences need


def _add(u, v):
    return u[0] + v[0], u[1] + v[1], u[2] + v[2]


def _mul(u, v):
    return u[0] * v[0], u[1] * v[0] + u[0] * v[1], u[2] * v[0] + 2 * u[1] * v[1] + u[0] * v[2]


def _inverse(u):
    r = 1 / u[0]
    return r, -u[1] * r * r, (2 * u[1] * u[1] * r - u[2]) * r * r

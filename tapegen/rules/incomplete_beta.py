"""Derivatives of the regularized incomplete beta function I_x(a, b) in its shape parameters `a` and `b`.

SciPy has I (`scipy.special.betainc`) but no derivative in a or b, which has no closed form. With the
beta density f(t) = t^(a-1) (1-t)^(b-1) / B(a, b) and its log-derivatives

    L_a = log t - digamma(a) + digamma(a + b),   L_b = log(1 - t) - digamma(b) + digamma(a + b),

dI/da = int_0^x f L_a dt, dI/db = int_0^x f L_b dt, and the second derivatives integrate
f (L_a^2 - trigamma(a) + trigamma(a + b)), f (L_a L_b + trigamma(a + b)) and
f (L_b^2 - trigamma(b) + trigamma(a + b)). Each integrand integrates to 0 over (0, 1) (they are
derivatives of I_1 = 1), so the integral over (0, x) is minus the one over (x, 1): the side holding less
of the density is integrated (adaptive quadrature, QUADPACK's qags through scipy.integrate.quad, which
takes the integrable singularities of t^(a-1) and log t at the ends), keeping the relative accuracy in
both tails. An integral that does not reach its tolerance raises rather than return a number that did
not converge.

`betainc_da`, `betainc_db` (first) and `betainc_daa`, `betainc_dab`, `betainc_dbb` (second
derivatives) are primitives with rules (scipy_special.py); derivatives in x have closed forms; a
third derivative in a or b is refused (no rule).
"""
import warnings

import numpy as np
import scipy.integrate
import scipy.special

_RTOL = 1e-12


def _weights(a, b, kind):
    """The factor multiplying the density in the integrand of derivative `kind`, as a function of t."""
    da = scipy.special.digamma(a + b) - scipy.special.digamma(a)
    db = scipy.special.digamma(a + b) - scipy.special.digamma(b)
    both = scipy.special.polygamma(1, a + b)
    if kind == "a":
        return lambda lt, l1t: lt + da
    if kind == "b":
        return lambda lt, l1t: l1t + db
    if kind == "aa":
        return lambda lt, l1t: (lt + da) ** 2 - scipy.special.polygamma(1, a) + both
    if kind == "ab":
        return lambda lt, l1t: (lt + da) * (l1t + db) + both
    return lambda lt, l1t: (l1t + db) ** 2 - scipy.special.polygamma(1, b) + both


def _one(a, b, x, kind):
    if not (a > 0 and b > 0 and 0 <= x <= 1):
        return np.nan
    if x == 0 or x == 1:
        return 0.0  # I is 0 (or 1) whatever a and b are
    log_beta, weight = scipy.special.betaln(a, b), _weights(a, b, kind)

    lower = scipy.special.betainc(a, b, x) <= 0.5  # integrate the side holding less of the density

    # u = t on the lower side, 1 - t on the upper (log(1 - t) = log(u) there, exactly). Where the density has a
    # power singularity there (u^(p-1), p < 1), u = s^(1/p): u^(p-1) du = ds / p, only a log is left
    p, other = (a, b) if lower else (b, a)
    q = p if p < 1 else 1.0

    def integrand(s):
        lu = np.log(s) / q
        lt, l1t = (lu, np.log1p(-np.exp(lu))) if lower else (np.log1p(-np.exp(lu)), lu)
        power = (p - 1) * lu + (1 / q - 1) * np.log(s) if q != p else 0.0  # (exactly 0 when q = p)
        return np.exp(power + (other - 1) * (l1t if lower else lt) - log_beta - np.log(q)) * weight(lt, l1t)

    start, stop, sign = 0.0, (x if lower else 1.0 - x) ** q, 1.0 if lower else -1.0
    mode = (a - 1) / (a + b - 2) if a > 1 and b > 1 else None
    mode = mode if mode is None or lower else 1.0 - mode
    mode = mode ** q if mode is not None else None
    points = [mode] if mode is not None and start < mode < stop else None
    with warnings.catch_warnings():
        warnings.simplefilter("error", scipy.integrate.IntegrationWarning)
        try:
            return sign * scipy.integrate.quad(integrand, start, stop, points=points, epsabs=1e-300, epsrel=_RTOL,
                                               limit=500)[0]
        except scipy.integrate.IntegrationWarning:
            pass
        try:  # a value near 0 (where positive and negative parts cancel): to 1e-12 of the parts instead
            scale = scipy.integrate.quad(lambda u: abs(integrand(u)), start, stop, points=points, limit=500)[0]
            return sign * scipy.integrate.quad(integrand, start, stop, points=points, epsabs=_RTOL * scale,
                                               epsrel=_RTOL, limit=500)[0]
        except scipy.integrate.IntegrationWarning as exc:
            raise FloatingPointError(f"the derivative of the incomplete beta function in its shape at "
                                     f"a={a}, b={b}, x={x} did not converge: {exc}") from None


def _derivative(a, b, x, kind):
    """Elementwise (broadcast), in the arguments' float dtype as SciPy's betainc keeps it (float32 stays)."""
    dtype = np.result_type(a, b, x)  # (a Python float is weak, as in SciPy's ufunc loops)
    a, b, x = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                  np.asarray(x, dtype=float))
    out = np.array([_one(ai, bi, xi, kind) for ai, bi, xi in zip(a.ravel(), b.ravel(), x.ravel())],
                   dtype=float).reshape(a.shape)
    out = out.astype(dtype if np.issubdtype(dtype, np.floating) else np.float64, copy=False)
    return out[()] if out.ndim == 0 else out


def betainc_da(a, b, x):
    """dI_x(a, b)/da (I = scipy.special.betainc)."""
    return _derivative(a, b, x, "a")


def betainc_db(a, b, x):
    """dI_x(a, b)/db."""
    return _derivative(a, b, x, "b")


def betainc_daa(a, b, x):
    """d2I_x(a, b)/da2."""
    return _derivative(a, b, x, "aa")


def betainc_dab(a, b, x):
    """d2I_x(a, b)/da db."""
    return _derivative(a, b, x, "ab")


def betainc_dbb(a, b, x):
    """d2I_x(a, b)/db2."""
    return _derivative(a, b, x, "bb")

"""`python -m tapegen check`: every built-in VJP rule against central differences.

A table of sample calls, one or more per primitive, each a small function
differentiated with `tapegen.gradcheck` (float64, full Jacobian). Which
primitives a sample exercises is read from its lowered Wengert list, so the
report can list every primitive with a VJP rule that no sample reaches.
Samples live here rather than in the test suite so an installed tapegen can
check itself. Inputs are fixed (seeded) and kept away from kinks and ties.
"""
from __future__ import annotations

import collections

import operator
from dataclasses import dataclass

import numpy as np

from .. import pipeline, rules
from ..errors import TapegenError
from ..ir import Eqn, walk
from ..rules import elementwise
from ..rules.linalg import _gap_inverse, _safe_reciprocal

@dataclass(frozen=True)
class Sample:
    """`fn(*args)` differentiated in every argument (or `wrt`), checked with tolerance `rtol`/`atol`."""

    name: str
    fn: object
    args: tuple
    wrt: tuple = ()
    rtol: float = 1e-5
    atol: float = 1e-6


@dataclass(frozen=True)
class Result:
    sample: Sample
    primitives: tuple  # names of the primitives with VJP rules the sample exercises
    status: str        # "ok", "FAILED" or "ERROR"
    max_abs_error: float
    detail: str


_rng = np.random.default_rng(2024)


def _x(*shape, low=-2.0, high=2.0):
    return float(_rng.uniform(low, high)) if not shape else _rng.uniform(low, high, size=shape)


def _pos(*shape):
    return _x(*shape, low=0.5, high=2.0)


def _signed(*shape):
    return _pos(*shape) * np.where(_rng.random(shape) < 0.5, -1.0, 1.0)


def _spd(n):
    q, _ = np.linalg.qr(_rng.standard_normal((n, n)))
    return (q * np.linspace(1.0, 3.0, n)) @ q.T


def _conditioned(*shape):
    return _rng.standard_normal(shape) + 3 * np.eye(shape[-1])


def _real_spectrum(n):
    p = _conditioned(n, n)
    return p @ np.diag(np.arange(1.0, n + 1)) @ np.linalg.inv(p)


# (callable, how to draw its argument) for elementwise functions of one array
UNARY = [
    (operator.neg, _x), (operator.pos, _x), (np.negative, _x), (np.positive, _x), (np.exp, _x), (np.exp2, _x),
    (np.expm1, _x), (np.log, _pos), (np.log2, _pos), (np.log10, _pos), (np.log1p, _pos), (np.sqrt, _pos),
    (np.cbrt, _signed), (np.square, _x), (np.reciprocal, _signed), (np.sin, _x), (np.cos, _x),
    (np.tan, lambda *s: _x(*s, low=-1.2, high=1.2)), (np.tanh, _x), (np.sinh, _x), (np.cosh, _x),
    (np.arcsin, lambda *s: _x(*s, low=-0.9, high=0.9)), (np.arccos, lambda *s: _x(*s, low=-0.9, high=0.9)),
    (np.arctan, _x), (np.arcsinh, _x), (np.arccosh, lambda *s: _x(*s, low=1.2, high=3.0)),
    (np.arctanh, lambda *s: _x(*s, low=-0.9, high=0.9)), (np.abs, _signed), (np.fabs, _signed), (np.sinc, _x),
    (np.deg2rad, _x), (np.radians, _x), (np.rad2deg, _x), (np.degrees, _x), (np.conjugate, _x),
    (elementwise.conj_method, _x), (np.real, _x),
    (np.imag, _x), (np.angle, _signed), (np.nan_to_num, _x), (np.unwrap, lambda *s: 3 * _x(*s)),
]

# (callable, draw first, draw second) for elementwise functions of two arrays, broadcast (3, 1) with (4,)
BINARY = [
    (operator.add, _x, _x), (np.add, _x, _x), (operator.sub, _x, _x), (np.subtract, _x, _x),
    (operator.mul, _x, _x), (np.multiply, _x, _x), (operator.truediv, _x, _signed), (np.divide, _x, _signed),
    (operator.pow, _pos, _x), (np.power, _pos, _x), (np.float_power, _pos, _x),
    (operator.mod, _x, lambda *s: _x(*s, low=0.7, high=1.3)), (np.remainder, _x, lambda *s: _x(*s, low=0.7, high=1.3)),
    (np.fmod, _x, lambda *s: _x(*s, low=0.7, high=1.3)), (np.arctan2, _x, _x), (np.maximum, _x, _x),
    (np.minimum, _x, _x), (np.fmax, _x, _x), (np.fmin, _x, _x), (np.logaddexp, _x, _x), (np.logaddexp2, _x, _x),
    (np.hypot, _x, _x), (np.copysign, _signed, _signed),
]


def _unary(prim, draw):
    return Sample(f"{_label(prim)}-(3,2)", lambda x: prim(x), (draw(3, 2),))


def _binary(prim, draw1, draw2):
    return Sample(f"{_label(prim)}-(3,1)x(4,)", lambda x1, x2: prim(x1, x2), (draw1(3, 1), draw2(4)))


def _label(fn):
    if getattr(operator, getattr(fn, "__name__", ""), None) is fn:
        return f"operator.{fn.__name__}"
    return getattr(fn, "__name__", str(fn))


# --- functions with statements (samples that need more than a lambda) ------------------------------

def slogdet_logdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return logdet * sign


def eigh_sample(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w ** 2) + np.sum(v ** 4)


def eig_sample(a):
    w, v = np.linalg.eig(a)
    return np.sum(w ** 2) + np.sum(v ** 4)


def svd_sample(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s) + np.sum(u ** 4) + np.sum(vt ** 4)


def qr_sample(a):
    q, r = np.linalg.qr(a)
    return np.sum(q ** 3) + np.sum(r ** 3)


def lstsq_sample(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return np.sum(x ** 2) + np.sum(residuals) + np.sum(s ** 2)


# Functions with a tape (array assignment, append, loops) have scalar outputs here: their pullback
# can be called only once (see the report of issue 8): a scalar output and one argument need only one call.

def setitem_sample(a, v):
    b = a * 1.0
    b[1] = v
    return np.sum(b * a)


def set_in_sample(v):
    rows = [v * 1.0, [v[0], 2.0], {"w": v[1]}]  # rows[i][j] = ... on an array, a list and a dict held
    rows[0][1] = v[2] ** 2
    rows[1][1] = v[3] * v[0]
    rows[2]["w"] = rows[2]["w"] * 3.0
    return np.sum(rows[0] * v) + rows[1][0] * rows[1][1] + rows[2]["w"]


def written_sample(a):
    from ..rules.language import written_region  # a[i] = v with i naming a row twice: one write kept
    return np.sum(np.sin(written_region(a, [0, 2, 2])) * a[:3])


def tangent_written_sample(a):
    from ..rules.language import tangent_written  # a tangent written into a float array's, none into an int's
    return np.sum(np.sin(tangent_written(a, a)) + tangent_written(a ** 2, np.zeros(4, dtype=int)))


def element_sample(a):
    from ..rules.shape import element_cotangent  # a.item(i)'s cotangent: a number at one position of zeros
    return np.sum(element_cotangent(np.sum(a ** 2), (2, 3), 4) * np.arange(6.0).reshape(2, 3))


def append_sample(a):
    items = []
    items.append(a)
    items.append(a * 2.0)
    return np.sum(np.stack(items) ** 2)


def loop_sample(a):
    s = a
    for i in range(2):
        s = s * a
    return np.sum(s)


def containers_sample(a):
    pair = (a, 2.0 * a)
    named = {"k": a}
    return np.stack([pair[1] * pair[0], named["k"]])


def joined_sample(a, rest):
    items = [a, a * 2.0] + [np.sin(a)]  # two lists: joined where they are built
    more = items + rest                 # `rest` is an argument: joined when the code runs
    return np.stack(more * 2)


def items_sample(a):
    d = {"x": a, "y": a * 2.0}
    d["y"] = np.sin(d["y"])
    total = sum(v * k for k, v in zip((1.0, 2.0), d.values()))
    return total + sum(value for _, value in d.items())


_PAIR = collections.namedtuple("Pair", "first second")


def record_sample(a):
    p = _PAIR(a * 2.0, np.sin(a))
    first, second = p
    return p.first * second + p[1] * first


def dict_get_sample(a):
    d = {"a": a * 2.0, "b": np.sin(a)}
    return d.get("a") * d.get("b") + d.get("c", a * a)


def next_or_default_sample(a):
    g = (v * 2.0 for v in [a, np.sin(a)])
    first, second = next(g, a), next(g, a)
    return first * second + next(g, a * a)


def deep_copy_sample(a):
    import copy
    d = {"a": a * 2.0, "b": [np.sin(a)]}
    e = copy.deepcopy(d)
    d["a"] += a
    return d["a"] * e["a"] + e["b"][0] * a


def dict_copy_sample(a):
    d = dict({"a": a * 2.0, "b": np.sin(a)})
    e = {**d, "b": a * a}
    return d["a"] * e["b"] + e["a"]


def dict_without_sample(a):
    d = {"a": a * 2.0, "b": np.sin(a)}
    first = d.pop("a")
    return first * d["b"] + d.pop("c", a * a)


def updated_sample(a, keys):
    d = {"a": a * 2.0, "b": np.sin(a)}
    d.update({key: np.cos(a) * weight for key, weight in zip(keys, (0.5, 2.0))})
    return d["a"] * d["b"] + d["c"]


def flatten_sample(a):
    from ..rules.language import flatten_tree, unflatten_tree
    tree = {"b": a * 2.0, "a": [np.sin(a), a[:2]]}
    return unflatten_tree(tree, flatten_tree(tree) ** 2)["a"][0] * a


def flat_cotangent_sample(a):
    from ..rules.language import flat_cotangent
    like = {"b": a, "a": [a, a[:2]]}
    return flat_cotangent(like, {"b": np.sin(a), "a": [a * a, a[1:3]]}) * 2.0


def sorted_sample(a):
    return np.array(sorted(a * a)) * a


def in_place_sample(a):
    def accumulate(total, x):  # (a helper of tapegen's own module would not be inlined)
        total += x
    total = a * 2.0
    accumulate(total, np.sin(a))
    return total * total


def changed_with_sample(a):
    vel, prev = a * 2.0, a * 0.5
    for _ in range(2):  # (`prev` is `vel`'s array in the second pass: NumPy's `+=` changes both)
        vel += np.sin(prev) * a
        prev = vel
    return vel * prev


def view_again_sample(a):
    B = a * 2.0
    W, V = B[np.array([0, 1])], B[np.argmin(np.abs(a) * 0.0):]  # (a copy, and a view made again after the write)
    B[0] = np.sin(a[3])
    return W * a[:2] + V[:2] * B[2:]


def copy_array_sample(a, b):
    for _ in range(2):  # (numbers changed through the loop's target: only `p` is rebound; an array argument
        for p in [a, b]:  # would be changed in place, for every call of the check)
            p -= 0.1 * np.sin(p)
    return a * b + p


def added_at_sample(a):
    sums = np.zeros(3)
    np.add.at(sums, [0, 2, 0, 1], a)
    return sums * sums


def rows_sample(a):
    return np.stack(list(a)) * np.stack(tuple(a * 2.0))


def split_sample(a):
    first, second = np.split(a, 2, axis=1)
    return first * second


def array_split_sample(a):
    pieces = np.array_split(a, 3, axis=1)
    return pieces[0] * 2.0 + pieces[2]


def hsplit_sample(a):
    left, right = np.hsplit(a, 2)
    return left * right


def vsplit_sample(a):
    top, bottom = np.vsplit(a, 2)
    return top * bottom


def dsplit_sample(a):
    front, back = np.dsplit(a, 2)
    return front * back


def _samples() -> list:
    """Every sample, drawn once from a fixed seed."""
    m34, m32, v4, v5, t234 = _x(3, 4), _x(3, 2), _x(4), _x(5), _x(2, 3, 4)
    out = [_unary(prim, draw) for prim, draw in UNARY] + [_binary(*entry) for entry in BINARY]
    out += _elementwise_samples(m34, m32) + _reduction_samples(m34, v5) + _linalg_samples(m34, v4, v5, t234)
    out += _linalg_namespace_samples(m34, v4)
    out += _shape_samples(m34, m32, v4, v5, t234)
    out += _fft_samples(m34, t234)
    out += _scipy_samples()
    return out


def _fft_samples(m34, t234) -> list:
    """The discrete Fourier transforms, complex results mixed into real ones with a complex weight;
    real_if_close and row_stack."""
    w = 0.3 + 1.1j
    fft = np.fft
    out = [
        Sample("fft.fft-(3,4)-n5", lambda a: np.real(fft.fft(a, 5) * w), (m34,)),
        Sample("fft.ifft-(3,4)-ortho", lambda a: np.real(fft.ifft(a, norm="ortho") * w), (m34,)),
        Sample("fft.fft2-(3,4)", lambda a: np.real(fft.fft2(a) * w), (m34,)),
        Sample("fft.ifft2-(3,4)-s", lambda a: np.real(fft.ifft2(a, (2, 5)) * w), (m34,)),
        Sample("fft.fftn-(2,3,4)-axes", lambda a: np.real(fft.fftn(a, axes=(0, 2)) * w), (t234,)),
        Sample("fft.ifftn-(2,3,4)", lambda a: np.real(fft.ifftn(a, norm="forward") * w), (t234,)),
        Sample("fft.rfft-(3,4)", lambda a: np.real(fft.rfft(a) * w), (m34,)),
        Sample("fft.irfft-(3,4)-n5", lambda a: fft.irfft(a * w, 5), (m34,)),
        Sample("fft.hfft-(3,4)-n5", lambda a: fft.hfft(a * w, 5), (m34,)),
        Sample("fft.ihfft-(3,4)-ortho", lambda a: np.imag(fft.ihfft(a, norm="ortho") * w), (m34,)),
        Sample("fft.rfft2-(3,4)", lambda a: np.real(fft.rfft2(a) * w), (m34,)),
        Sample("fft.irfft2-(3,4)", lambda a: fft.irfft2(a * w), (m34,)),
        Sample("fft.rfftn-(2,3,4)", lambda a: np.real(fft.rfftn(a, axes=(1, 2)) * w), (t234,)),
        Sample("fft.irfftn-(2,3,4)", lambda a: fft.irfftn(a * w, (3, 5), (1, 2)), (t234,)),
        Sample("fft.fftshift-(3,4)", lambda x: fft.fftshift(x) * m34, (m34,)),
        Sample("fft.ifftshift-(3,4)", lambda x: fft.ifftshift(x, axes=0) * m34, (m34,)),
        Sample("real_if_close-(3,4)", lambda a: np.real_if_close(a * w - 1j * np.imag(a * w)), (m34,)),
    ]
    if getattr(np, "row_stack", None) in rules.PRIMITIVES:  # vstack's deprecated alias, while NumPy has it
        out.append(Sample("row_stack-(4,),(3,4)", lambda a, b: np.row_stack([a, b]), (_x(4), m34)))
    return out


def _scipy_samples() -> list:
    """SciPy's functions, where SciPy is installed (loading its rule tables)."""
    try:
        import scipy.special as sp
    except ImportError:
        return []
    rules.load_optional(everything=True)
    from ..rules.incomplete_beta import betainc_da, betainc_daa, betainc_dab, betainc_db, betainc_dbb
    from ..rules.incomplete_gamma import gammainc_da, gammainc_daa
    real, pos = (lambda: _x(3, 2)), (lambda: _x(3, 2, low=0.5, high=3.0))
    unit, away = (lambda: _x(3, 2, low=0.1, high=0.9)), (lambda: _signed(3, 2))
    draws = {"erfinv": lambda: _x(3, 2, low=-0.9, high=0.9), "erfcinv": lambda: _x(3, 2, low=0.1, high=1.9),
             "logit": unit, "ndtri": unit, "i0e": away, "i1e": away, "log1p": pos, "entr": pos}
    out = []
    for name in ("gammaln", "loggamma", "gamma", "rgamma", "digamma", "erf", "erfc", "erfcx", "erfinv", "erfcinv",
                 "dawsn", "expit", "logit", "log_expit", "ndtr", "log_ndtr", "ndtri", "entr", "expm1", "log1p",
                 "i0", "i1", "i0e", "i1e", "j0", "j1", "y0", "y1", "k0", "k1", "k0e", "k1e"):
        draw = draws.get(name, pos if name[0] in "gdrlyk" else real)
        out.append(Sample(f"scipy.special.{name}-(3,2)", (lambda f: lambda x: f(x))(getattr(sp, name)), (draw(),)))
    out.append(Sample("scipy.special.wofz-(3,2)-complex", lambda x, y: np.real(sp.wofz(x + 1j * y)) * np.imag(
        sp.wofz(x + 1j * y)), (real(), pos())))
    for name, d1 in (("beta", pos), ("betaln", pos), ("xlogy", real), ("xlog1py", real), ("rel_entr", pos),
                     ("kl_div", pos)):
        f = getattr(sp, name)
        out.append(Sample(f"scipy.special.{name}-(3,1)x(4,)", (lambda f: lambda a, b: f(a, b))(f),
                          (d1()[:, :1], _x(4, low=0.5, high=3.0))))
    for name, v in (("iv", 2.0), ("ive", 0.5), ("jv", 2.5), ("yv", 1.0), ("kv", 0.7), ("kve", 1.5),
                    ("gammainc", 1.7), ("gammaincc", 2.5)):
        out.append(Sample(f"scipy.special.{name}-{v}-(3,2)", (lambda f, v: lambda z: f(v, z))(getattr(sp, name), v),
                          (pos(),)))
    out += [
        Sample("scipy.special.gammainc-in-a-(3,2)", lambda a, x: sp.gammainc(a, x) + sp.gammaincc(a, x + 4.0),
               (pos(), pos())),
        Sample("gammainc_da-in-x-(3,2)", lambda x: gammainc_da(1.7, x) * gammainc_daa(2.5, x + 4.0), (pos(),)),
        Sample("scipy.special.betainc-in-a-b-x-(3,2)", lambda a, b, x: sp.betainc(a, b, x), (pos(), pos(), unit())),
        Sample("betainc_da-db-in-a-b-x-(3,2)", lambda a, b, x: betainc_da(a, b, x) * betainc_db(a, b, x),
               (pos(), pos(), unit())),
        Sample("betainc_daa-dab-dbb-in-x-(3,2)",
               lambda x: betainc_daa(1.7, 2.5, x) + betainc_dab(1.7, 2.5, x) * betainc_dbb(0.8, 1.5, x), (unit(),)),
        Sample("scipy.special.polygamma-2-(3,2)", lambda x: sp.polygamma(2, x), (pos(),)),
        Sample("scipy.special.yn-2-(3,2)", lambda x: sp.yn(2, x), (_x(3, 2, low=0.8, high=3.0),)),
        Sample("scipy.special.exp1-expi-expn-(3,2)", lambda x: sp.exp1(x) * sp.expi(x) + sp.expn(2, x) * sp.expn(0, x),
               (pos(),)),
        Sample("scipy.special.ellipk-ellipe-(3,2)", lambda m: sp.ellipk(m) * sp.ellipe(m), (unit(),)),
        Sample("scipy.special.hyp2f1-in-z-(3,2)", lambda z: sp.hyp2f1(0.5, 1.5, 2.0, z), (unit(),)),
        Sample("scipy.special.stdtr-in-t-(3,2)", lambda t: sp.stdtr(3.5, t), (real(),)),
        Sample("scipy.special.owens_t-(3,2)", lambda h, a: sp.owens_t(h, a), (real(), real())),
        Sample("scipy.special.betainc-(3,2)", lambda x: sp.betainc(1.5, 2.5, x), (unit(),)),
        Sample("scipy.special.multigammaln-(4,)", lambda a: sp.multigammaln(a, 3), (_x(4, low=1.5, high=3.0),)),
        Sample("scipy.special.logsumexp-(3,4)-axis1-b", lambda a, b: sp.logsumexp(a, axis=1, b=b),
               (_x(3, 4), _x(3, 4, low=0.5, high=2.0))),
        Sample("scipy.special.softmax-(3,4)", lambda x: sp.softmax(x, axis=1), (_x(3, 4),)),
        Sample("scipy.special.log_softmax-(3,4)", lambda x: sp.log_softmax(x, axis=0), (_x(3, 4),)),
    ]
    return out + _scipy_stats_samples() + _scipy_linalg_samples() + _scipy_integrate_samples() + \
        _scipy_signal_samples() + _scipy_spatial_samples()


def _scipy_spatial_samples() -> list:
    import scipy.spatial.distance as distance
    out = [Sample(f"scipy.spatial.distance.cdist-{metric}-(4,3)x(5,3)",
                  (lambda metric: lambda a, b: distance.cdist(a, b, metric))(metric), (_x(4, 3), _x(5, 3)))
           for metric in ("sqeuclidean", "euclidean", "cityblock", "minkowski", "chebyshev", "cosine", "correlation")]
    out += [Sample("scipy.spatial.distance.pdist-minkowski-p3-(5,2)", lambda x: distance.pdist(x, "minkowski", p=3),
                   (_x(5, 2),)),
            Sample("scipy.spatial.distance.squareform-(6,)", lambda v: distance.squareform(v), (_x(6),)),
            Sample("scipy.spatial.distance.squareform-(4,4)", lambda m: distance.squareform(m, checks=False),
                   (_x(4, 4),))]
    out += [Sample(f"scipy.spatial.distance.{fn.__name__}-(4,)x(4,)", (lambda fn: lambda u, v: fn(u, v))(fn),
                   (_x(4), _x(4))) for fn in (distance.euclidean, distance.sqeuclidean, distance.cityblock,
                                              distance.cosine, distance.chebyshev, distance.minkowski,
                                              distance.correlation)]
    return out


def _scipy_signal_samples() -> list:
    import scipy.signal as signal
    return [Sample(f"scipy.signal.{fn.__name__}-{mode}-(4,5)x(2,3)",
                   (lambda fn, mode: lambda a, v: fn(a, v, mode=mode))(fn, mode), (_x(4, 5), _x(2, 3)))
            for fn in (signal.convolve, signal.correlate, signal.fftconvolve) for mode in ("full", "same", "valid")]


def oscillator(y, t, k):
    """Dynamics for the odeint and solve_ivp samples (the adjoint solve differentiates it with tapegen)."""
    return np.array([y[1], -k[0] * y[0] - k[1] * y[1] * np.cos(t)])


def oscillator_t_first(t, y, k):
    return np.array([y[1], -k[0] * y[0] - k[1] * y[1] * np.cos(t)])


def _scipy_integrate_samples() -> list:
    from scipy.integrate import odeint, solve_ivp

    def odeint_sample(y0, t, k):
        return odeint(oscillator, y0, t, args=(k,), rtol=1e-11, atol=1e-11)

    def solve_ivp_sample(y0, t_eval, k):
        return solve_ivp(oscillator_t_first, (0.0, 2.0), y0, t_eval=t_eval, args=(k,), rtol=1e-11, atol=1e-11).y
    y0, k = np.array([0.5, -0.2]), np.array([1.3, 0.4])
    return [Sample("scipy.integrate.odeint-(2,)x(4,)", odeint_sample, (y0, np.array([0.0, 0.4, 1.0, 1.3]), k)),
            Sample("scipy.integrate.solve_ivp-(2,)x(3,)", solve_ivp_sample, (y0, np.array([0.3, 1.0, 1.7]), k))]


def _scipy_linalg_samples() -> list:
    import scipy.linalg as sl

    from ..rules.scipy_linalg import sqrtm_root
    a, spd, b, tall = _conditioned(3, 3), _spd(3), _x(3, 2), _x(4, 3)

    def eigh_sample(a):
        w, v = sl.eigh(a)
        return w + np.sum(v ** 2 * np.arange(3.0), axis=0)

    def svd_sample(a):
        u, s, vt = sl.svd(a, full_matrices=False)
        return s + np.sum(u ** 2 * np.arange(3.0), axis=0)

    def qr_sample(a):
        q, r = sl.qr(a, mode="economic")
        return np.sum(q ** 2 * np.arange(3.0), axis=0) + r * r
    return [
        Sample("scipy.linalg.solve_triangular-lower-trans", lambda a, b: sl.solve_triangular(a, b, trans=1, lower=True),
               (a, b)),
        Sample("scipy.linalg.solve_triangular-unit", lambda a, b: sl.solve_triangular(a, b, unit_diagonal=True), (a, b)),
        Sample("scipy.linalg.cholesky", lambda a: sl.cholesky(a), (spd,)),
        Sample("scipy.linalg.cho_solve", lambda a, b: sl.cho_solve(sl.cho_factor(a, lower=True), b), (spd, b)),
        Sample("scipy.linalg.lu_solve", lambda a, b: sl.lu_solve(sl.lu_factor(a), b), (a, b)),
        Sample("scipy.linalg.inv", lambda a: sl.inv(a), (a,)),
        Sample("scipy.linalg.det", lambda a: sl.det(a), (a,)),
        Sample("scipy.linalg.solve", lambda a, b: sl.solve(a, b), (a, b)),
        Sample("scipy.linalg.solve-pos", lambda a, b: sl.solve(a, b, assume_a="pos"), (spd, b)),
        Sample("scipy.linalg.eigh", eigh_sample, (spd,)),
        Sample("scipy.linalg.eigvalsh", lambda a: sl.eigvalsh(a), (spd,)),
        Sample("scipy.linalg.svd-(4,3)", svd_sample, (tall,)),
        Sample("scipy.linalg.qr-(4,3)", qr_sample, (tall,)),
        Sample("scipy.linalg.expm", lambda a: sl.expm(a), (0.3 * _x(3, 3),)),
        Sample("scipy.linalg.sqrtm", lambda a: sl.sqrtm(a), (spd,)),
        Sample("scipy.linalg.sqrtm-nonsymmetric", lambda a: sl.sqrtm(a), (_x(3, 3) + 3.0 * np.eye(3),)),
        Sample("sqrtm_root", lambda s: sqrtm_root(s, spd) * s, (spd,)),
        Sample("scipy.linalg.logm", lambda a: sl.logm(a), (spd,)),
        Sample("scipy.linalg.solve_sylvester", lambda a, b, q: sl.solve_sylvester(a, b, q), (a, spd[:2, :2], b)),
        Sample("scipy.linalg.solve_banded-(1,1)", lambda ab, b: sl.solve_banded((1, 1), ab, b),
               (_x(3, 3) + np.array([[0.0], [4.0], [0.0]]), b)),
    ]


def _discrete_samples(k, poisson, bernoulli, binom, nbinom, geom):
    method = poisson.__name__
    return [Sample(f"scipy.stats.poisson.{method}-(4,)", lambda mu: poisson(k, mu), (_pos(4),)),
            Sample(f"scipy.stats.bernoulli.{method}-(4,)", lambda p: bernoulli(k % 2, p), (_x(4, low=0.2, high=0.8),)),
            Sample(f"scipy.stats.binom.{method}-(4,)", lambda p: binom(k, 5, p), (_x(4, low=0.2, high=0.8),)),
            Sample(f"scipy.stats.nbinom.{method}-(4,)", lambda n, p: nbinom(k, n, p),
                   (_pos(4), _x(4, low=0.2, high=0.8))),
            Sample(f"scipy.stats.geom.{method}-(4,)", lambda p: geom(k + 1, p), (_x(4, low=0.2, high=0.8),))]


def _fixed_shapes(f, params):
    if not params:
        return lambda x, m, s: f(x, m, s)
    if len(params) == 1:
        return lambda x, m, s: f(x, params[0], m, s)
    return lambda x, m, s: f(x, params[0], params[1], m, s)


def _entropy_call(entropy, shapes):
    return {0: lambda m, s: entropy(m, s), 1: lambda p, m, s: entropy(p, m, s),
            2: lambda a, b, m, s: entropy(a, b, m, s)}[shapes]


def _scipy_stats_samples() -> list:
    import scipy.stats as st
    from ..rules.scipy_stats import CONTINUOUS_METHODS
    out = []
    shapes = {"t": (3.5,), "gamma": (2.5,), "chi2": (3.3,), "lognorm": (0.8,), "beta": (2.5, 1.7)}
    for name in ("norm", "logistic", "laplace", "cauchy", "expon", "t", "gamma", "chi2", "lognorm", "beta",
                 "halfnorm", "halfcauchy"):
        x = _x(4, low=0.45, high=0.9) if name == "beta" else _pos(4) if name in shapes or name in (
            "expon", "halfnorm", "halfcauchy") else _x(4)
        params = shapes.get(name, ())
        for method in CONTINUOUS_METHODS:
            f = getattr(getattr(st, name), method)
            if len(params) == 1:  # in every parameter (cdf & co. too: in a, df, s)
                out.append(Sample(f"scipy.stats.{name}.{method}-(4,)", (lambda f: lambda x, p, m, s: f(x, p, m, s))(f),
                                  (x, params[0], -0.2, 1.3)))
            elif params:  # beta's a and b
                out.append(Sample(f"scipy.stats.{name}.{method}-(4,)",
                                  (lambda f: lambda x, a, b, m, s: f(x, a, b, m, s))(f), (x, *params, -0.2, 1.3)))
            else:
                out.append(Sample(f"scipy.stats.{name}.{method}-(4,)", _fixed_shapes(f, params), (x, -0.2, 1.3)))
        for method in ("ppf", "isf"):  # in q, loc and scale (and the shapes: a constant here)
            out.append(Sample(f"scipy.stats.{name}.{method}-(4,)", _fixed_shapes(getattr(getattr(st, name), method),
                                                                                params), (_x(4, low=0.15, high=0.85), -0.2, 1.3)))
            if params:  # in the first shape parameter: the cdf's implicit derivative
                out.append(Sample(f"scipy.stats.{name}.{method}-in-{name}-shape",
                                  (lambda f, rest: lambda p: f(np.array([0.2, 0.5, 0.85]), p, *rest))(
                                      getattr(getattr(st, name), method), params[1:]), (params[0],)))
        out.append(Sample(f"scipy.stats.{name}.entropy", _entropy_call(getattr(st, name).entropy, len(params)),
                          (*params, -0.2, 1.3)))  # in every parameter
    k = np.array([0, 1, 3, 2])
    for method in ("cdf", "sf", "logcdf", "logsf"):
        f = getattr(st.poisson, method)
        out.append(Sample(f"scipy.stats.poisson.{method}-(4,)", (lambda f: lambda mu: f(k, mu))(f), (_pos(4),)))
        for name, call in (("binom", lambda f: lambda p: f(k, 5, p)), ("bernoulli", lambda f: lambda p: f(k * 0.1, p))):
            out.append(Sample(f"scipy.stats.{name}.{method}-(4,)", call(getattr(getattr(st, name), method)),
                              (_x(4, low=0.2, high=0.8),)))
    for method, density in (("logpmf", "logpdf"), ("pmf", "pdf")):
        out += _discrete_samples(k, *(getattr(getattr(st, n), method)
                                      for n in ("poisson", "bernoulli", "binom", "nbinom", "geom")))
        mvn, dirichlet = getattr(st.multivariate_normal, density), getattr(st.dirichlet, density)
        out += [Sample(f"scipy.stats.multivariate_normal.entropy-for-{density}",
                       lambda c: st.multivariate_normal.entropy(cov=c), (_spd(3),))] if density == "logpdf" else []
        out += [Sample(f"scipy.stats.multivariate_normal.{density}-(4,3)", (lambda f: lambda x, m, c: f(x, m, c))(mvn),
                       (_x(4, 3, low=-1.0, high=1.0), _x(3, low=-0.5, high=0.5), _spd(3))),
                Sample(f"scipy.stats.dirichlet.{density}-(3,)",
                       (lambda f: lambda alpha: f(np.array([0.2, 0.3, 0.5]), alpha))(dirichlet), (_pos(3),))]
    return out


def _elementwise_samples(m34, m32) -> list:
    cond = _rng.random((3, 4)) < 0.5
    return [
        Sample("clip-(3,4)", lambda a: np.clip(a, -0.5, 0.7), (m34,)),
        Sample("where-(3,4)", lambda x1, x2: np.where(cond, x1, x2), (m34, _x(3, 4))),
        Sample("select-(3,4)", lambda a, b: np.select([cond, ~cond], [a, b], 0.5), (m34, _x(3, 4))),
        Sample("float-scalar", lambda x: float(x) * 3.0, (0.7,)),
        Sample("full-scalar", lambda v: np.full((3, 2), v), (0.3,)),
        Sample("full_like-(3,2)", lambda x, v: np.full_like(x, v) * x, (m32, 0.7)),
        Sample("linspace-scalar", lambda a, b: np.linspace(a, b, 5), (0.3, 1.7)),
        Sample("arange-scalar", lambda s, e: np.arange(s, e, 0.5), (0.25, 3.0)),
    ]


def _reduction_samples(m34, v5) -> list:
    return [
        Sample("sum-(3,4)-axis0", lambda a: np.sum(a, axis=0), (m34,)),
        Sample("prod-(3,4)-axis1", lambda a: np.prod(a, axis=1), (_signed(3, 4),)),
        Sample("mean-(3,4)-keepdims", lambda a: np.mean(a, axis=1, keepdims=True), (m34,)),
        Sample("nansum-(3,4)", lambda a: np.nansum(a, axis=0), (m34,)),
        Sample("nanmean-(3,4)", lambda a: np.nanmean(a, axis=1), (m34,)),
        Sample("max-(3,4)-axis0", lambda a: np.max(a, axis=0), (m34,)),
        Sample("min-(3,4)", lambda a: np.min(a), (m34,)),
        Sample("amax-(3,4)", lambda a: np.amax(a, axis=1), (m34,)),
        Sample("amin-(3,4)", lambda a: np.amin(a, axis=1), (m34,)),
        Sample("nanmax-(3,4)", lambda a: np.nanmax(a, axis=0), (m34,)),
        Sample("nanmin-(3,4)", lambda a: np.nanmin(a, axis=0), (m34,)),
        Sample("ptp-(3,4)", lambda a: np.ptp(a, axis=1), (m34,)),
        Sample("median-(3,5)", lambda a: np.median(a, axis=1), (_x(3, 5),)),
        Sample("var-(3,4)-ddof1", lambda a: np.var(a, axis=0, ddof=1), (m34,)),
        Sample("std-(3,4)", lambda a: np.std(a, axis=1), (m34,)),
        Sample("quantile-(7,)", lambda a: np.quantile(a, 0.3), (_x(7),)),
        Sample("percentile-(7,)", lambda a: np.percentile(a, 30.0), (_x(7),)),
        Sample("average-(3,4)-weights", lambda a, w: np.average(a, axis=1, weights=w), (m34, _pos(4))),
        Sample("cumsum-(3,4)", lambda a: np.cumsum(a, axis=1), (m34,)),
        Sample("cumprod-(5,)", lambda a: np.cumprod(a), (_signed(5),)),
        Sample("diff-(5,)", lambda a: np.diff(a), (v5,)),
        Sample("gradient-(5,)", lambda f: np.gradient(f), (v5,)),
        Sample("interp-(4,)", lambda x, fp: np.interp(x, [0.0, 1.0, 2.0], fp), (_x(4, low=0.1, high=1.9), _x(3))),
        Sample("bincount-(5,)", lambda w: np.bincount([0, 3, 3, 1, 0], weights=w, minlength=5), (_x(5),)),
        Sample("histogram-(6,)", lambda w: np.histogram([0.1, 0.5, 0.55, 0.9, 1.0, 2.0], bins=3, range=(0, 1),
                                                        weights=w)[0], (_x(6),)),
        Sample("histogram-(6,)-density", lambda w: np.histogram([0.1, 0.5, 0.55, 0.9, 1.0, 2.0], bins=3,
                                                                range=(0, 1), density=True, weights=w)[0],
               (_x(6, low=0.5, high=1.5),)),
    ]


def _linalg_samples(m34, v4, v5, t234) -> list:
    return [
        Sample("matmul-(2,3)x(3,4)", lambda a, b: a @ b, (_x(2, 3), _x(3, 4))),
        Sample("np.matmul-(2,2,3)x(3,2)", lambda a, b: np.matmul(a, b), (_x(2, 2, 3), _x(3, 2))),
        Sample("dot-(2,3)x(3,)", lambda a, b: np.dot(a, b), (_x(2, 3), _x(3))),
        Sample("inner-(2,3)x(4,3)", lambda a, b: np.inner(a, b), (_x(2, 3), _x(4, 3))),
        Sample("outer-(3,)x(4,)", lambda a, b: np.outer(a, b), (_x(3), v4)),
        Sample("vdot-(2,3)x(3,2)", lambda a, b: np.vdot(a, b), (_x(2, 3), _x(3, 2))),
        Sample("kron-(2,2)x(2,3)", lambda a, b: np.kron(a, b), (_x(2, 2), _x(2, 3))),
        Sample("tensordot-(2,3,4)x(3,4,2)", lambda a, b: np.tensordot(a, b), (t234, _x(3, 4, 2))),
        Sample("einsum-ij,jk->ik", lambda a, b: np.einsum("ij,jk->ik", a, b), (_x(2, 3), _x(3, 4))),
        Sample("trace-(3,4)-offset1", lambda a: np.trace(a, offset=1), (m34,)),
        Sample("cross-(4,3)x(3,)", lambda a, b: np.cross(a, b), (_x(4, 3), _x(3))),
        Sample("det-(3,3)", lambda a: np.linalg.det(a), (_conditioned(3, 3),)),
        Sample("slogdet-(3,3)", slogdet_logdet, (_conditioned(3, 3),)),
        Sample("inv-(3,3)", lambda a: np.linalg.inv(a), (_conditioned(3, 3),)),
        Sample("pinv-(4,2)", lambda a: np.linalg.pinv(a), (_x(4, 2),), rtol=1e-4),
        Sample("solve-(3,3)x(3,2)", lambda a, b: np.linalg.solve(a, b), (_conditioned(3, 3), _x(3, 2))),
        Sample("lstsq-(5,3)x(5,)", lstsq_sample, (_x(5, 3), v5), rtol=1e-4),
        Sample("norm-(3,4)-axis1", lambda x: np.linalg.norm(x, axis=1), (m34,)),
        Sample("norm-(3,3)-fro", lambda x: np.linalg.norm(x, "fro"), (_x(3, 3),)),
        Sample("eigh-(3,3)", eigh_sample, (_spd(3),), rtol=1e-4),
        Sample("eigvalsh-(3,3)", lambda a: np.linalg.eigvalsh(a), (_spd(3),), rtol=1e-4),
        Sample("eig-(3,3)", eig_sample, (_real_spectrum(3),), rtol=1e-4),
        Sample("eigvals-(3,3)", lambda a: np.linalg.eigvals(a), (_real_spectrum(3),), rtol=1e-4),
        Sample("cholesky-(3,3)", lambda a: np.linalg.cholesky(a), (_spd(3),)),
        Sample("svd-(4,3)", svd_sample, (_x(4, 3),), rtol=1e-4),
        Sample("qr-(4,3)", qr_sample, (_x(4, 3),), rtol=1e-4),
        # the decompositions' gradient code, differentiated again (second order), calls these
        Sample("_gap_inverse-(2,3)", lambda w: _gap_inverse(w), (np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]),)),
        Sample("_safe_reciprocal-(4,)", lambda s: _safe_reciprocal(s), (np.array([0.5, 1.5, 2.0, 3.0]),)),
        Sample("matrix_power-(3,3)-3", lambda a: np.linalg.matrix_power(a, 3), (_x(3, 3),)),
        Sample("multi_dot-(2,3)x(3,4)x(4,)", lambda a, b, c: np.linalg.multi_dot([a, b, c]), (_x(2, 3), _x(3, 4), v4)),
    ]


def _linalg_namespace_samples(m34, v4) -> list:
    """The NumPy 2 array-API spellings in np.linalg, where this NumPy has them."""
    candidates = [
        ("linalg.matmul", "matmul", lambda a, b: np.linalg.matmul(a, b), (_x(2, 3), _x(3, 4))),
        ("linalg.outer", "outer", lambda a, b: np.linalg.outer(a, b), (_x(3), v4)),
        ("linalg.tensordot", "tensordot", lambda a, b: np.linalg.tensordot(a, b, axes=1), (_x(2, 3), _x(3, 4))),
        ("linalg.cross", "cross", lambda a, b: np.linalg.cross(a, b), (_x(4, 3), _x(4, 3))),
        ("linalg.trace", "trace", lambda a: np.linalg.trace(a), (_x(3, 3),)),
        ("linalg.vecdot", "vecdot", lambda a, b: np.linalg.vecdot(a, b), (m34, _x(3, 4))),
        ("linalg.vector_norm", "vector_norm", lambda x: np.linalg.vector_norm(x, axis=1), (m34,)),
        ("linalg.matrix_norm", "matrix_norm", lambda x: np.linalg.matrix_norm(x), (m34,)),
        ("linalg.svdvals", "svdvals", lambda x: np.linalg.svdvals(x), (m34,)),
    ]
    out = [Sample(f"{name}", fn, args, rtol=1e-4) for name, attr, fn, args in candidates if hasattr(np.linalg, attr)]
    if hasattr(np, "vecdot"):
        out.append(Sample("vecdot", lambda a, b: np.vecdot(a, b), (m34, _x(3, 4))))
    if hasattr(np, "trapezoid"):
        out.append(Sample("trapezoid-(5,)", lambda y, x: np.trapezoid(y, x), (_x(5), np.cumsum(_pos(5)))))
        out.append(Sample("trapezoid-(5,)-dx", lambda y, dx: np.trapezoid(y, dx=dx), (_x(5), 0.3)))
    return out


def _shape_samples(m34, m32, v4, v5, t234) -> list:
    m44, t134 = _x(4, 4), _x(1, 3, 4)
    order = np.argsort(m34, axis=1)
    return [
        Sample("getitem-(3,4)", lambda a: a[1:, ::-2], (m34,)),
        Sample("getitem-(3,4)-int-array", lambda a: a[:, np.array([0, 2, 2])], (m34,)),
        Sample("astype-(3,4)", lambda a: a.astype(np.float64) * 2.0, (m34,)),
        Sample("item-(3,4)", lambda a: a.item(5) * a[1:2, 2:3].item() ** 2 * a, (m34,)),
        Sample("element_cotangent-(3,4)", element_sample, (m34,)),
        Sample("flatten-(3,4)", lambda a: a.flatten() * 3.0, (m34,)),
        Sample("copy-(5,)", lambda a: np.copy(a) * a, (v5,)),
        Sample("copy_method-(5,)", lambda a: a.copy() * a, (v5,)),
        Sample("reshape-(3,4)", lambda a: np.reshape(a, (4, 3)), (m34,)),
        Sample("ravel-(3,4)", lambda a: np.ravel(a), (m34,)),
        Sample("squeeze-(1,3,4)", lambda a: np.squeeze(a), (t134,)),
        Sample("expand_dims-(5,)", lambda a: np.expand_dims(a, -1), (v5,)),
        Sample("broadcast_to-(4,)", lambda a: np.broadcast_to(a, (3, 4)), (v4,)),
        Sample("atleast_1d-scalar", lambda s: np.atleast_1d(s), (0.7,)),
        Sample("atleast_2d-(5,)", lambda a: np.atleast_2d(a) * 2.0, (v5,)),
        Sample("atleast_3d-(3,4)", lambda a: np.atleast_3d(a), (m34,)),
        Sample("transpose-(2,3,4)", lambda a: np.transpose(a, (2, 0, 1)), (t234,)),
        Sample("swapaxes-(2,3,4)", lambda a: np.swapaxes(a, 0, 2), (t234,)),
        Sample("moveaxis-(2,3,4)", lambda a: np.moveaxis(a, 0, -1), (t234,)),
        Sample("rollaxis-(2,3,4)", lambda a: np.rollaxis(a, 2), (t234,)),
        Sample("concatenate-(5,),(4,)", lambda a, b: np.concatenate([a, b]) ** 2, (v5, v4)),
        Sample("stack-(5,),(5,)", lambda a, b: np.stack([a, b * a]), (v5, _x(5))),
        Sample("hstack-(3,4),(3,2)", lambda a, b: np.hstack((a, b)), (m34, m32)),
        Sample("vstack-(4,),(4,)", lambda a, b: np.vstack([a, b]), (v4, _x(4))),
        Sample("dstack-(3,4),(3,4)", lambda a, b: np.dstack([a, b]), (m34, _x(3, 4))),
        Sample("column_stack-(4,),(4,2)", lambda a, b: np.column_stack([a, b]), (v4, _x(4, 2))),
        Sample("split-(3,4)", split_sample, (m34,)),
        Sample("array_split-(3,4)", array_split_sample, (m34,)),
        Sample("hsplit-(3,4)", hsplit_sample, (m34,)),
        Sample("vsplit-(4,4)", vsplit_sample, (m44,)),
        Sample("dsplit-(2,3,4)", dsplit_sample, (t234,)),
        Sample("flip-(3,4)", lambda m: np.flip(m, axis=1), (m34,)),
        Sample("fliplr-(3,4)", lambda m: np.fliplr(m), (m34,)),
        Sample("flipud-(3,4)", lambda m: np.flipud(m), (m34,)),
        Sample("roll-(3,4)", lambda a: np.roll(a, 2, axis=1), (m34,)),
        Sample("rot90-(3,4)", lambda m: np.rot90(m), (m34,)),
        Sample("tile-(3,4)", lambda a: np.tile(a, (2, 1)), (m34,)),
        Sample("repeat-(5,)", lambda a: np.repeat(a, 2), (v5,)),
        Sample("pad-(3,4)", lambda a: np.pad(a, ((1, 0), (0, 2))), (m34,)),
        Sample("tril-(4,4)", lambda m: np.tril(m), (m44,)),
        Sample("triu-(4,4)", lambda m: np.triu(m, 1), (m44,)),
        Sample("diag-(4,)", lambda v: np.diag(v), (v4,)),
        Sample("diagonal-(4,4)", lambda a: np.diagonal(a), (m44,)),
        Sample("take-(5,)", lambda a: np.take(a, np.array([0, 3, 3])), (v5,)),
        Sample("take_along_axis-(3,4)", lambda arr: np.take_along_axis(arr, order, axis=1), (m34,)),
        Sample("sort-(3,4)", lambda a: np.sort(a, axis=1), (m34,)),
        Sample("partition-(3,4)", lambda a: np.partition(a, 2, axis=1), (m34,)),
        Sample("append-(3,4),(2,4)", lambda a, b: np.append(a, b, axis=0), (m34, _x(2, 4))),
        Sample("insert-(3,4),(4,)", lambda a, v: np.insert(a, [0, 2, 2], v, axis=0), (m34, v4)),
        Sample("delete-(3,4)", lambda a: np.delete(a, [0, 5, 7]), (m34,)),
        # the language: assignment, containers, array construction
        Sample("setitem-(3,4)-array", setitem_sample, (m34, v4), wrt=(0,)),
        Sample("setitem-(3,4)-value", setitem_sample, (m34, v4), wrt=(1,)),
        Sample("written_region-(3,4)", written_sample, (m34,)),
        Sample("tangent_written-(3,4)", tangent_written_sample, (m34,)),
        Sample("set_in_item-(4,)", set_in_sample, (v4,)),
        Sample("append-(4,)", append_sample, (v4,)),
        Sample("assign-loop-(4,)", loop_sample, (v4,)),
        Sample("make_list-tuple-dict", containers_sample, (v4,)),
        Sample("concat-plus-repeat-(4,)", joined_sample, (v4, [_x(4)]), wrt=(0,)),
        Sample("list-tuple-(3,4)", rows_sample, (m34,)),
        Sample("with_item-sum-items-(4,)", items_sample, (v4,)),
        Sample("as_record-(4,)", record_sample, (v4,)),
        Sample("added_at-(4,)", added_at_sample, (v4,)),
        Sample("in_place_result-(4,)", in_place_sample, (v4,)),
        Sample("changed_with-(4,)", changed_with_sample, (v4,)),
        Sample("view_again-(4,)", view_again_sample, (v4,)),
        Sample("copy_array-in_place_result-numbers", copy_array_sample, (0.7, -0.4)),
        Sample("item_or-(4,)", dict_get_sample, (v4,)),
        Sample("first_or-(4,)", next_or_default_sample, (v4,)),
        Sample("deep_copy-(4,)", deep_copy_sample, (v4,)),
        Sample("sorted-(4,)", sorted_sample, (v4,)),
        Sample("dict_copy-(4,)", dict_copy_sample, (v4,)),
        Sample("updated-(4,)", updated_sample, (v4, ("a", "c")), wrt=(0,)),
        Sample("dict_without-(4,)", dict_without_sample, (v4,)),
        Sample("flatten_tree-unflatten_tree-(4,)", flatten_sample, (v4,)),
        Sample("flat_cotangent-(4,)", flat_cotangent_sample, (v4,)),
        Sample("block-(2,2)", lambda a, b: np.block([[a, b], [b * 2.0, a * b]]), (_x(2, 2), _x(2, 2))),
        Sample("array-(4,)", lambda a: np.array([a, a * 2.0]), (v4,)),
        Sample("asarray-list-(4,)", lambda a, b: np.asarray([a, b]) * 2.0, (v4, _x(4))),
    ]


_SAMPLES: list = []


def samples() -> list:
    """The built-in samples (built once)."""
    if not _SAMPLES:
        _SAMPLES.extend(_samples())
    return _SAMPLES


def exercised(sample) -> tuple:
    """The primitives (with VJP rules) the sample's function calls, from its Wengert list."""
    program = pipeline.lowered(sample.fn)
    found = []
    for stmt in walk(program.body):
        if isinstance(stmt, Eqn) and getattr(stmt.op, "vjps", None) and stmt.op not in found:
            found.append(stmt.op)
    return tuple(found)


def run_sample(sample) -> Result:
    """Gradcheck one sample; never raises for a failing or broken rule."""
    from .gradcheck import gradcheck
    wrt = sample.wrt or tuple(range(len(sample.args)))
    try:
        names = tuple(p.name for p in exercised(sample))
        report = gradcheck(sample.fn, *sample.args, wrt=wrt, rtol=sample.rtol, atol=sample.atol,
                           raise_on_failure=False)
    except TapegenError as exc:
        return Result(sample, (), "ERROR", float("nan"), exc.message)
    except Exception as exc:  # a rule that crashes is a finding to report, not a reason to stop
        return Result(sample, (), "ERROR", float("nan"), f"{type(exc).__name__}: {exc}")
    error = max((a.max_abs_error for a in report.arguments), default=0.0)
    return Result(sample, names, "ok" if report.ok else "FAILED", error, "" if report.ok else str(report))


def run(select=None) -> tuple:
    """`(results, unsampled)`: a Result per sample (matching `select`, a substring), and
    `(table name, primitive)` for each primitive with VJP rules that no sample exercises."""
    rules.load_optional(everything=True)
    results = [run_sample(s) for s in samples() if select is None or select in s.name]
    reached = set()
    for sample in samples():
        try:
            reached.update(exercised(sample))
        except TapegenError:
            pass
    unsampled = [(table.name, _primitive_label(prim)) for table in rules.TABLES
                 for prim in table.primitives.values() if prim.vjps and prim not in reached]
    return results, unsampled


def _primitive_label(prim) -> str:
    return prim.spelling if prim.spelling and prim.form == "call" else prim.name


__all__ = ["Sample", "Result", "samples", "exercised", "run_sample", "run"]

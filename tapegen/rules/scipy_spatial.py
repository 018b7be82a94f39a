"""scipy.spatial.distance: cdist, pdist, squareform and the distance of two vectors, for kernel code.

cdist(XA, XB, metric) is a matrix y[i, j] = d(XA[i], XB[j]) for 'sqeuclidean', 'euclidean',
'cityblock', 'minkowski' (p >= 1), 'chebyshev', 'cosine' and 'correlation' (and SciPy's aliases of
these); other metrics, a metric given as a function, weights (w=) and out= are refused when the
rule runs, and a derivative in Minkowski's p has no rule. pdist(X) is cdist(X, X) read above its
diagonal, the order squareform uses, so its rules are cdist's with the cotangent squareform(g)
(symmetric, zero diagonal) and both inputs X. euclidean(u, v), cosine(u, v) and the others of two
vectors are cdist of one row each.

A distance is symmetric, d(a, b) = d(b, a), so XB's rules are XA's with the inputs swapped and
the matrices transposed: one cotangent (`distance_cotangent`) and one tangent
(`distance_tangent`) per metric. The squared Euclidean distance and the cosine use matrix
products (no n x m x k array); the others read the differences D = XA[i] - XB[j].

Where a distance is 0 (a point and itself: the diagonal of cdist(X, X)) its derivative follows
what the same distance written with NumPy gets (docs/rules.md, elementwise.py): the zero
subgradient of a kink, as sqrt'(0) = 0 and abs'(0) = 0. For cdist(X, X) this is the true
derivative (d(X[i], X[i]) is 0 for every X), so the gradient of a kernel k(cdist(X, X)) is right
there, and its second derivative too; where two different inputs meet (XA[i] == XB[j]) the
Euclidean, Minkowski and Chebyshev distances have a cone, and 0 is its subgradient.
SciPy takes no complex inputs here.

squareform is linear: to a matrix it puts v above the diagonal and mirrors it, so the cotangent
is g's upper triangle plus its lower one; to a vector it reads the upper triangle (checks=False
reads it from any matrix), so the cotangent of a symmetric matrix's entries goes to that triangle
only (the lower one is not read). Every rule here calls functions with rules, so gradient code
differentiates again, to any order.
"""
import numpy as np
import scipy
import scipy.spatial.distance

from ..errors import TapegenError
from .elementwise import kink_div
from .formulas import Formulas
from .reductions import extremum_share
from .table import RuleTable

table = RuleTable("scipy.spatial")
sd = scipy.spatial.distance

table.op(sd.cdist, "XA, XB, metric='euclidean', *, out=None, p=None, w=None, V=None, VI=None",
         spelling="scipy.spatial.distance.cdist", inert=("metric", "out", "w", "V", "VI"))
table.op(sd.pdist, "X, metric='euclidean', *, out=None, p=None, w=None, V=None, VI=None",
         spelling="scipy.spatial.distance.pdist", inert=("metric", "out", "w", "V", "VI"))
table.op(sd.squareform, "X, force='no', checks=True", spelling="scipy.spatial.distance.squareform",
         inert=("force", "checks"))

_NAMES = {"sqeuclidean": "sqeuclidean", "euclidean": "euclidean", "cityblock": "cityblock",
          "minkowski": "minkowski", "chebyshev": "chebyshev", "cosine": "cosine", "correlation": "correlation"}
PAIR_FUNCTIONS = tuple(getattr(sd, name) for name in _NAMES)  # d(u, v) of two vectors: euclidean(u, v)
for _fn in PAIR_FUNCTIONS:
    table.op(_fn, "u, v, p=2, w=None" if _fn is sd.minkowski else "u, v, w=None",
             spelling=f"scipy.spatial.distance.{_fn.__name__}", inert=("w",))


def distance_metric(metric, p, w=None, V=None, VI=None, out=None):
    """The metric the rules compute: ('euclidean', 2.0) for 'euclidean', ('minkowski', p) for a p other than
    1, 2 or inf (those are 'cityblock', 'euclidean', 'chebyshev'); anything else is refused."""
    if not isinstance(metric, str):
        raise TapegenError(f"tapegen differentiates scipy.spatial.distance with a metric named by a string "
                           f"(got {metric!r})", hint="pass the metric's name, e.g. metric='euclidean'")
    info = getattr(sd, "_METRIC_ALIAS", {}).get(metric.lower())
    name = _NAMES.get(info.canonical_name if info is not None else metric.lower())
    if name is None:
        raise TapegenError(f"tapegen differentiates scipy.spatial.distance metrics {', '.join(_NAMES)} "
                           f"(got {metric!r})", hint="write the distance with NumPy, e.g. "
                           "np.sqrt(np.sum((XA[:, None, :] - XB[None, :, :]) ** 2, axis=-1))")
    if w is not None or V is not None or VI is not None or out is not None:
        raise TapegenError("tapegen differentiates scipy.spatial.distance without w=, V=, VI= or out=",
                           hint="scale the inputs instead: cdist(XA * np.sqrt(w), XB * np.sqrt(w), 'euclidean')")
    if name == "minkowski":
        p = 2.0 if p is None else float(p)
        if p < 1:
            raise TapegenError(f"tapegen differentiates the Minkowski distance for p >= 1 (got p={p})")
        name = {1.0: "cityblock", 2.0: "euclidean", np.inf: "chebyshev"}.get(p, name)
    return name, p


table.nondiff(distance_metric, "metric, p, w=None, V=None, VI=None, out=None", spelling="distance_metric")
distance_metric.pure = True


def pair_differences(XA, XB):
    """D[i, j] = XA[i] - XB[j], shaped (n, m, k)."""
    return XA[:, None, :] - XB[None, :, :]


def pair_weights(XA, XB, metric, p, y):
    """dy[i, j] / dD[i, j, k] for the metrics that read the differences D (y the distances)."""
    D = pair_differences(XA, XB)
    if metric == "cityblock":
        return np.sign(D)
    if metric == "chebyshev":
        return np.sign(D) * extremum_share(np.abs(D), y, -1, False)
    # |D|^(p-1) / y^(p-1), with 1 in place of a 0 under the powers (there |D| is 0 and so is the weight): no
    # infinite derivative of a power at 0 in gradient code differentiated again (1 < p < 2)
    apart = np.where(D == 0, 0.0, np.abs(np.where(D == 0, 1.0, D)) ** (p - 1))
    return np.sign(D) * kink_div(apart, (np.where(y == 0, 1.0, y) ** (p - 1))[:, :, None])


def centered(X):
    """Each row less its mean: the correlation distance is the cosine distance of the centered rows."""
    return X - np.mean(X, axis=1, keepdims=True)


def distance_cotangent(XA, XB, kind, y, g):
    """The cotangent of XA from g, that of y = cdist(XA, XB, metric) (XB's: the same with XA, XB swapped
    and y, g transposed); `kind` is (metric, p) from distance_metric."""
    metric, p = kind
    if metric == "correlation":  # centering is an orthogonal projection: its transpose is itself
        return centered(distance_cotangent(centered(XA), centered(XB), ("cosine", p), y, g))
    if metric in ("sqeuclidean", "euclidean"):
        h = 2 * g if metric == "sqeuclidean" else kink_div(g, y)
        return np.sum(h, axis=1)[:, None] * XA - h @ XB
    if metric == "cosine":
        na, nb = np.sqrt(np.sum(XA * XA, axis=1)), np.sqrt(np.sum(XB * XB, axis=1))
        h = g / (na[:, None] * nb[None, :])
        return np.sum(g * (1 - y), axis=1)[:, None] * XA / (na * na)[:, None] - h @ XB
    return np.einsum("ij,ijk->ik", g, pair_weights(XA, XB, metric, p, y))


def distance_tangent(XA, XB, XA_dot, kind, y):
    """The tangent of y = cdist(XA, XB, metric) from XA's (XB's: the same with XA, XB swapped, transposed)."""
    metric, p = kind
    if metric == "correlation":
        return distance_tangent(centered(XA), centered(XB), centered(XA_dot), ("cosine", p), y)
    if metric in ("sqeuclidean", "euclidean"):
        t = np.sum(XA * XA_dot, axis=1)[:, None] - XA_dot @ XB.T
        return 2 * t if metric == "sqeuclidean" else kink_div(t, y)
    if metric == "cosine":
        na, nb = np.sqrt(np.sum(XA * XA, axis=1)), np.sqrt(np.sum(XB * XB, axis=1))
        return (1 - y) * (np.sum(XA * XA_dot, axis=1) / (na * na))[:, None] - \
            (XA_dot @ XB.T) / (na[:, None] * nb[None, :])
    return np.einsum("ijk,ik->ij", pair_weights(XA, XB, metric, p, y), XA_dot)


@table.vjp(sd.cdist, "XA")
def cdist_vjp_XA(XA, XB, metric, p, w, V, VI, out, y, g):
    return distance_cotangent(XA, XB, distance_metric(metric, p, w, V, VI, out), y, g)


@table.vjp(sd.cdist, "XB")
def cdist_vjp_XB(XA, XB, metric, p, w, V, VI, out, y, g):
    return distance_cotangent(XB, XA, distance_metric(metric, p, w, V, VI, out), y.T, g.T)


@table.jvp(sd.cdist, "XA")
def cdist_jvp_XA(XA, XB, XA_dot, metric, p, w, V, VI, out, y):
    return distance_tangent(XA, XB, XA_dot, distance_metric(metric, p, w, V, VI, out), y)


@table.jvp(sd.cdist, "XB")
def cdist_jvp_XB(XA, XB, XB_dot, metric, p, w, V, VI, out, y):
    return distance_tangent(XB, XA, XB_dot, distance_metric(metric, p, w, V, VI, out), y.T).T


@table.vjp(sd.pdist, "X")
def pdist_vjp(X, metric, p, w, V, VI, out, y, g):
    return distance_cotangent(X, X, distance_metric(metric, p, w, V, VI, out), scipy.spatial.distance.squareform(y),
                              scipy.spatial.distance.squareform(g))


@table.jvp(sd.pdist, "X")
def pdist_jvp(X, X_dot, metric, p, w, V, VI, out, y):
    t = distance_tangent(X, X, X_dot, distance_metric(metric, p, w, V, VI, out), scipy.spatial.distance.squareform(y))
    return scipy.spatial.distance.squareform(t + t.T, checks=False)


# --- the distance of two vectors: scipy.spatial.distance.euclidean(u, v) and the like -------------------

def pair_cotangent(u, v, metric, p, w, y, g):
    """The cotangent of u from g, that of y = d(u, v): cdist's of one row each."""
    return distance_cotangent(u[None, :], v[None, :], distance_metric(metric, p, w), np.reshape(y, (1, 1)),
                              np.reshape(g, (1, 1)))[0]


def pair_tangent(u, v, u_dot, metric, p, w, y):
    """The tangent of y = d(u, v) from u's."""
    return distance_tangent(u[None, :], v[None, :], u_dot[None, :], distance_metric(metric, p, w),
                            np.reshape(y, (1, 1)))[0, 0]


written = Formulas(table, globals(), "<tapegen scipy.spatial rules>")
for _fn in PAIR_FUNCTIONS:
    _name, _p = _fn.__name__, "p" if _fn is sd.minkowski else "None"
    for _wrt, _other in (("u", "v"), ("v", "u")):
        _reads = ["u", "v"] + (["p"] if _p == "p" else []) + ["w"]
        written.rule(_fn, _wrt, "vjp", f"{_name}_vjp_{_wrt}", _reads + ["y", "g"],
                     f"pair_cotangent({_wrt}, {_other}, {_name!r}, {_p}, w, y, g)")
        written.rule(_fn, _wrt, "jvp", f"{_name}_jvp_{_wrt}", _reads + [f"{_wrt}_dot", "y"],
                     f"pair_tangent({_wrt}, {_other}, {_wrt}_dot, {_name!r}, {_p}, w, y)")
written.load()


# --- squareform: a condensed vector to its symmetric matrix, or back --------------------------------------

def to_matrix(X_shape, force):
    """Whether squareform makes a matrix (of a vector) or a vector (of a matrix), as SciPy decides."""
    if force.lower() == "tomatrix":
        return True
    if force.lower() == "tovector":
        return False
    return len(X_shape) == 1


table.nondiff(to_matrix, "X_shape, force", spelling="to_matrix")
to_matrix.pure = True


@table.vjp(sd.squareform, "X")
def squareform_vjp(X_shape, force, g):
    if to_matrix(X_shape, force):
        return scipy.spatial.distance.squareform(g + g.T, force="tovector", checks=False)
    return np.triu(scipy.spatial.distance.squareform(g, force="tomatrix"))


@table.jvp(sd.squareform, "X")
def squareform_jvp(X_dot, X_shape, force):
    return scipy.spatial.distance.squareform(X_dot, force="tomatrix" if to_matrix(X_shape, force) else "tovector",
                                             checks=False)


__all__ = ["table", "PAIR_FUNCTIONS", "distance_metric", "distance_cotangent", "distance_tangent", "pair_weights",
           "pair_cotangent", "pair_tangent", "centered", "to_matrix"]

"""Reductions and scans: sum, mean, prod, max/min, var/std, the nan-variants, order statistics
(median, percentile, quantile), cumsum/cumprod, diff, gradient, trapezoid, interp.

The cotangent of a reduction is broadcast back over the reduced axes
(`unreduce`) and weighted by how much each element moves the result: 1 for
sum, 1/n for mean, the product of the others for prod (exact with zeros), and
for max, min, ptp and the order statistics a share split evenly between tied
elements, so the derivative along any direction that keeps the tie is right.
A JVP rule returns the tangent of the output: the same weights, summed over
the reduced axes.

Weights are built in the input's float dtype, so float32 stays float32.
"""
import numpy as np

from ..errors import TapegenError
from ..runtime import is_duck, unreduce
from .shape import piece_cotangents
from .table import RuleTable

table = RuleTable("reductions")

# --- declarations -------------------------------------------------------------------------------

for fn in (np.sum, np.prod, np.mean, np.nansum, np.nanmean):
    table.op(fn, "a, axis=None, dtype=None, *, keepdims=False")  # (NumPy's 4th positional is `out`)
for fn in (np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin, np.ptp, np.median):
    table.op(fn, "a, axis=None, *, keepdims=False")  # (NumPy's 3rd positional is `out`)
for fn in (np.var, np.std):
    table.op(fn, "a, axis=None, dtype=None, *, ddof=0, keepdims=False")
for fn in (np.quantile, np.percentile):
    table.op(fn, "a, q, axis=None, *, method='linear', keepdims=False")
table.op(np.average, "a, axis=None, weights=None, *, keepdims=False")  # (4th positional: `returned`)
for fn in (np.cumsum, np.cumprod):
    table.op(fn, "a, axis=None, dtype=None")
table.op(np.diff, "a, n=1, axis=-1")
table.op(np.gradient, "f, axis=None, edge_order=1")
table.op(np.trapezoid, "values, x=None, dx=1.0, axis=-1")  # NumPy's `y`: a rule's `y` is the output
table.op(np.interp, "x, xp, fp, left=None, right=None")
table.op(np.bincount, "x, weights=None, minlength=0", inert=("x",))  # linear in the weights
# linear in the weights (density=True: divided by their sum within the range); the counts are piecewise constant
# in `a`, but the edges move with it (range=None): no rule for `a`, `bins` or `range`
table.op(np.histogram, "a, bins=10, range=None, density=None, weights=None", outputs=2)

for method, fn in (("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max), ("min", np.min),
                   ("var", np.var), ("std", np.std), ("ptp", np.ptp), ("cumsum", np.cumsum),
                   ("cumprod", np.cumprod)):
    table.method(method, fn)


# --- helpers (names in generated code) -----------------------------------------------------------

def reduced_size(a_shape, axis):
    """How many elements each output of a reduction over `axis` combines."""
    if axis is None:
        return int(np.prod(a_shape, dtype=np.int64))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return int(np.prod([a_shape[i] for i in axes], dtype=np.int64))


reduced_size.pure = True  # with constant arguments, generated code gets the number itself


def reduced_axes(axis, ndim):
    """`axis` (None, an int or a tuple, maybe negative) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(i % ndim for i in (axis if isinstance(axis, tuple) else (axis,))))


def keep_reduced(y, ndim, axis, keepdims):
    """A reduction's output `y` with its reduced axes kept (length 1), to broadcast against the input."""
    if axis is None or keepdims:
        return y
    return np.expand_dims(y, reduced_axes(axis, ndim))


def float_dtype(a):
    """The dtype weights for `a` are built in: its own if inexact, else float64."""
    return np.result_type(a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype, np.float16)


def extremum_share(a, y, axis, keepdims):
    """1/k at each of the k elements of a slice equal to its max (or min) `y`, 0 elsewhere."""
    mask = np.equal(a, keep_reduced(y, np.ndim(a), axis, keepdims))
    count = np.sum(mask, axis=axis, keepdims=True, dtype=float_dtype(a))
    return mask / np.where(count == 0, 1, count)


def ptp_share(a, axis):
    """How each element moves max - min of its slice (0 everywhere in a constant slice)."""
    top = extremum_share(a, np.max(a, axis=axis, keepdims=True), axis, True)
    return top - extremum_share(a, np.min(a, axis=axis, keepdims=True), axis, True)


def nan_count(a, axis):
    """How many non-NaN elements each slice has, with the reduced axes kept, in `a`'s float dtype."""
    return np.sum(~np.isnan(a), axis=axis, keepdims=True, dtype=float_dtype(a))


def centered(a, axis):
    return a - np.mean(a, axis=axis, keepdims=True)


def prod_others(a, axis, keepdims, y):
    """For each element, the product of the others in its slice; exact when some elements are zero."""
    if not is_duck(a) and np.all(a != 0):  # a lazy `a` takes the zero-safe way, without looking
        return keep_reduced(y, np.ndim(a), axis, keepdims) / a
    a = a if is_duck(a) else np.asarray(a)
    axes = reduced_axes(axis, a.ndim)
    last = tuple(range(a.ndim - len(axes), a.ndim))
    moved = np.moveaxis(a, axes, last)
    flat = moved.reshape(moved.shape[:a.ndim - len(axes)] + (-1,))
    ones = np.ones_like(flat[..., :1])
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return np.moveaxis((before * after).reshape(moved.shape), last, axes)


def reverse_cumsum(x, axis):
    """Sums from each position to the end of `axis`: the adjoint of np.cumsum."""
    return np.flip(np.cumsum(np.flip(x, axis), axis), axis)


def first_zero(a, axis):
    """Where a slice is before its first zero, where that zero is, and cumprod with it taken as 1."""
    zero = a == 0
    seen = np.cumsum(zero, axis=axis)
    first = zero & (seen == 1)
    return seen == 0, first, np.cumprod(np.where(first, 1, a), axis=axis)


def cumsum_vjp(a_shape, axis, g):
    if axis is None:
        return np.reshape(np.cumsum(g[::-1])[::-1], a_shape)
    return reverse_cumsum(g, axis)


def cumprod_vjp(a, axis, y, g):
    """Exact with zeros: only the first zero of a slice, and elements before it, move later products."""
    if axis is None:
        return np.reshape(cumprod_vjp(np.ravel(a), 0, y, g), np.shape(a))
    if not is_duck(a) and np.all(a != 0):  # a lazy `a` takes the zero-safe way, without looking
        return reverse_cumsum(g * y, axis) / a
    before, first, skipped = first_zero(a, axis)
    from_before = reverse_cumsum(g * y, axis) / np.where(before, a, 1)
    return np.where(before, from_before, np.where(first, reverse_cumsum(g * skipped, axis), 0))


def cumprod_jvp(a, a_dot, axis, y):
    if axis is None:
        return cumprod_jvp(np.ravel(a), np.ravel(a_dot), 0, y)
    if not is_duck(a) and np.all(a != 0):  # a lazy `a` takes the zero-safe way, without looking
        return y * np.cumsum(a_dot / a, axis=axis)
    before, first, skipped = first_zero(a, axis)
    relative = np.where(before, a_dot, 0) / np.where(before, a, 1)
    at_zero = np.sum(np.where(first, a_dot, 0), axis=axis, keepdims=True)
    return np.where(before, y * np.cumsum(relative, axis=axis), at_zero * skipped)


def diff_vjp(n, axis, g):
    """The adjoint of np.diff: each difference moves its two ends, n times over."""
    widths = [(0, 0)] * np.ndim(g)
    widths[axis] = (1, 1)
    for _ in range(n):
        g = -np.diff(np.pad(g, widths), axis=axis)
    return g


def gradient_adjoint(g, axis, edge_order):
    """The adjoint of np.gradient along one axis (unit spacing): central differences inside, one-sided at the ends."""
    g = np.moveaxis(g, axis, 0)
    r = np.zeros_like(g)
    r[2:] += g[1:-1] * 0.5
    r[:-2] -= g[1:-1] * 0.5
    if edge_order == 1:
        r[0] -= g[0]
        r[1] += g[0]
        r[-1] += g[-1]
        r[-2] -= g[-1]
    else:
        r[:3] += np.multiply.outer([-1.5, 2.0, -0.5], g[0]).astype(r.dtype)
        r[-3:] += np.multiply.outer([0.5, -2.0, 1.5], g[-1]).astype(r.dtype)
    return np.moveaxis(r, 0, axis)


def gradient_vjp(f, axis, edge_order, g):
    """np.gradient returns one array per axis; `g` is one cotangent, or a list / Cotree of them."""
    axes = reduced_axes(axis, np.ndim(f))
    pieces = [g] if len(axes) == 1 else piece_cotangents(g, [f] * len(axes))  # zeros for unused outputs
    total = np.zeros(np.shape(f), float_dtype(f))
    for ax, piece in zip(axes, pieces):
        total = total + gradient_adjoint(piece, ax, edge_order)
    return total


def weights_along(weights, a_shape, axis):
    """np.average's weights shaped to broadcast against `a` (1-D weights lie along `axis`)."""
    if np.shape(weights) == tuple(a_shape):
        return weights
    shape = [1] * len(a_shape)
    shape[axis] = -1
    return np.reshape(weights, shape)


def average_vjp_a(a_shape, axis, weights, keepdims, g):
    g = unreduce(g, a_shape, axis, keepdims)
    if weights is None:
        return g / reduced_size(a_shape, axis)
    w = weights_along(weights, a_shape, axis)
    return g * w / np.sum(w, axis=axis, keepdims=True)


def average_vjp_weights(a, axis, weights, keepdims, y, g):
    """d average / d w_i = (a_i - average) / sum(w), summed over the other axes for 1-D weights."""
    w = weights_along(weights, np.shape(a), axis)
    part = unreduce(g, np.shape(a), axis, keepdims) * (a - keep_reduced(y, np.ndim(a), axis, keepdims))
    part = part / np.sum(w, axis=axis, keepdims=True)
    if np.shape(weights) == np.shape(a):
        return part
    return np.sum(part, axis=tuple(i for i in range(np.ndim(a)) if i != axis % np.ndim(a)))


def average_jvp_weights(a, axis, weights, weights_dot, keepdims, y):
    w = weights_along(weights, np.shape(a), axis)
    moved = (a - keep_reduced(y, np.ndim(a), axis, keepdims)) * weights_along(weights_dot, np.shape(a), axis)
    return np.sum(moved / np.sum(w, axis=axis, keepdims=True), axis=axis, keepdims=keepdims)


QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def order_weights(a, q, axis, method):
    """How much each element moves the q-quantile (0 <= q <= 1) of its slice.

    The sorted neighbours of position q * (n - 1) get the method's interpolation
    weights; a weight is shared evenly between elements tied in value.
    """
    if method not in QUANTILE_METHODS:
        raise TapegenError(f"no gradient for quantile method {method!r}",
                           hint=f"tapegen differentiates the methods {', '.join(QUANTILE_METHODS)}")
    a = np.asarray(a)
    axes = reduced_axes(axis, a.ndim)
    last = tuple(range(a.ndim - len(axes), a.ndim))
    moved = np.moveaxis(a, axes, last)
    flat = moved.reshape(moved.shape[:a.ndim - len(axes)] + (-1,))
    position = float(q) * (flat.shape[-1] - 1)
    lo = int(np.floor(position))
    hi, frac = min(lo + 1, flat.shape[-1] - 1), position - lo
    picks = {"linear": ((lo, 1 - frac), (hi, frac)), "lower": ((lo, 1.0),),
             "higher": ((hi if frac > 0 else lo, 1.0),), "nearest": ((int(np.around(position)), 1.0),),
             "midpoint": ((lo, 0.5), (hi, 0.5)) if frac > 0 else ((lo, 1.0),)}[method]
    order = np.argsort(flat, axis=-1, kind="stable")
    ranked = np.take_along_axis(flat, order, -1)
    w = np.zeros(flat.shape, float_dtype(a))
    for index, weight in picks:
        w[..., index] += weight
    out = np.empty_like(w)
    np.put_along_axis(out, order, tie_average(w, ranked), -1)
    return np.moveaxis(out.reshape(moved.shape), last, axes)


def tie_average(w, ranked):
    """`w` averaged over each run of equal values in `ranked` (sorted along the last axis)."""
    starts = np.ones(ranked.shape, dtype=bool)
    starts[..., 1:] = ranked[..., 1:] != ranked[..., :-1]
    if starts.all():
        return w
    n = ranked.shape[-1]
    run = np.cumsum(starts, axis=-1) - 1 + np.arange(starts.size // n).reshape(starts.shape[:-1] + (1,)) * n
    key = run.ravel()
    sums = np.bincount(key, weights=w.ravel(), minlength=starts.size)
    counts = np.bincount(key, minlength=starts.size)
    return (sums[key] / counts[key]).reshape(w.shape).astype(w.dtype)


def quantile_cotangent(a, q, axis, method, keepdims, g):
    """The cotangent of np.quantile(a, q, ...); `g` has q's axes first when q is an array."""
    if np.ndim(q) == 0:
        return unreduce(g, np.shape(a), axis, keepdims) * order_weights(a, q, axis, method)
    total = np.zeros(np.shape(a), np.result_type(g))
    for i in np.ndindex(np.shape(q)):
        total = total + unreduce(g[i], np.shape(a), axis, keepdims) * order_weights(a, q[i], axis, method)
    return total


def quantile_tangent(a, a_dot, q, axis, method, keepdims):
    if np.ndim(q) == 0:
        return np.sum(a_dot * order_weights(a, q, axis, method), axis=axis, keepdims=keepdims)
    parts = [np.sum(a_dot * order_weights(a, q[i], axis, method), axis=axis, keepdims=keepdims)
             for i in np.ndindex(np.shape(q))]
    return np.reshape(np.stack(parts), np.shape(q) + np.shape(parts[0]))


def quantile_vjp(a, q, axis, method, keepdims, g):
    return quantile_cotangent(a, np.asarray(q), axis, method, keepdims, g)


def quantile_jvp(a, a_dot, q, axis, method, keepdims):
    return quantile_tangent(a, a_dot, np.asarray(q), axis, method, keepdims)


def percentile_vjp(a, q, axis, method, keepdims, g):
    return quantile_cotangent(a, np.asarray(q) / 100, axis, method, keepdims, g)


def percentile_jvp(a, a_dot, q, axis, method, keepdims):
    return quantile_tangent(a, a_dot, np.asarray(q) / 100, axis, method, keepdims)


def trapezoid_weights(x, dx, y_shape, axis, dtype):
    """d trapezoid / d y: half the spacing on each side of a sample, shaped to broadcast along `axis`."""
    ndim = len(y_shape)
    shape = [1] * ndim
    shape[axis] = y_shape[axis] - 1
    if x is None:
        d = np.full(shape, dx, dtype=dtype)
    elif np.ndim(x) == 1:
        d = np.reshape(np.diff(x), shape)
    else:
        d = np.diff(x, axis=axis)
    widths = [(0, 0)] * ndim
    widths[axis] = (1, 0)
    before = np.pad(d, widths)
    widths[axis] = (0, 1)
    return (before + np.pad(d, widths)) * 0.5


def trapezoid_vjp_values(values_shape, x, dx, axis, g):
    g = unreduce(g, values_shape, axis, False)
    return g * trapezoid_weights(x, dx, values_shape, axis, np.result_type(g))


def trapezoid_vjp_x(values, x, axis, g):
    """d trapezoid / d x_i = (mean of the segment left of i) - (mean of the segment right of i)."""
    y = np.asarray(values)
    axis = axis % y.ndim
    mids = (np.delete(y, -1, axis=axis) + np.delete(y, 0, axis=axis)) * 0.5
    m = np.expand_dims(g, axis) * mids
    widths = [(0, 0)] * y.ndim
    widths[axis] = (1, 0)
    before = np.pad(m, widths)
    widths[axis] = (0, 1)
    part = before - np.pad(m, widths)
    if np.ndim(x) == 1 and y.ndim > 1:
        return np.sum(part, axis=tuple(i for i in range(y.ndim) if i != axis))
    return part


def trapezoid_vjp_dx(values, x, axis, g):
    if x is not None:
        return np.zeros((), np.result_type(g))
    return np.sum(g * np.trapezoid(values, axis=axis))


def trapezoid_jvp_dx(values, x, dx_dot, axis):
    if x is not None:
        return np.zeros_like(np.trapezoid(values, axis=axis))
    return dx_dot * np.trapezoid(values, axis=axis)


def interp_segments(x, xp):
    """For each x, the segment [xp[i], xp[i+1]] it falls in (the end one outside) and how far along (0..1)."""
    xp = np.asarray(xp)
    i = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, len(xp) - 2)
    return i, np.clip((x - xp[i]) / (xp[i + 1] - xp[i]), 0, 1)


def interp_slope(x, xp, fp):
    """d np.interp / dx: the slope of x's segment, 0 outside [xp[0], xp[-1]]."""
    xp, fp = np.asarray(xp), np.asarray(fp)
    i, _ = interp_segments(x, xp)
    slope = (fp[i + 1] - fp[i]) / (xp[i + 1] - xp[i])
    return np.where((x >= xp[0]) & (x <= xp[-1]), slope, 0)


def interp_vjp_fp(x, xp, fp, left, right, g):
    """Each x passes its cotangent to the two ends of its segment, by (1 - t, t)."""
    xp = np.asarray(xp)
    i, t = interp_segments(x, xp)
    g = np.broadcast_to(g, np.shape(x))
    outside = np.zeros(np.shape(x), dtype=bool)
    if left is not None:
        outside = outside | (x < xp[0])
    if right is not None:
        outside = outside | (x > xp[-1])
    g = np.where(outside, 0, g)
    n = np.shape(fp)[0]
    total = (np.bincount(np.ravel(i), weights=np.ravel(g * (1 - t)), minlength=n)
             + np.bincount(np.ravel(i) + 1, weights=np.ravel(g * t), minlength=n))
    return total.astype(np.result_type(fp, g))


def interp_jvp_fp(x, xp, fp_dot, left, right):
    """np.interp is linear in fp: interpolate the tangent (0 where a constant left or right value is used)."""
    return np.interp(x, xp, fp_dot, left=None if left is None else 0.0, right=None if right is None else 0.0)


# --- sum, mean, prod ----------------------------------------------------------------------------

@table.vjp(np.sum, "a")
def sum_vjp(a_shape, axis, keepdims, g):
    return unreduce(g, a_shape, axis, keepdims)


@table.jvp(np.sum, "a")
def sum_jvp(a_dot, axis, dtype, keepdims):
    return np.sum(a_dot, axis=axis, dtype=dtype, keepdims=keepdims)


@table.vjp(np.mean, "a")
def mean_vjp(a_shape, axis, keepdims, g):
    return unreduce(g, a_shape, axis, keepdims) / reduced_size(a_shape, axis)


@table.jvp(np.mean, "a")
def mean_jvp(a_dot, axis, dtype, keepdims):
    return np.mean(a_dot, axis=axis, dtype=dtype, keepdims=keepdims)


@table.vjp(np.prod, "a")
def prod_vjp(a, a_shape, axis, keepdims, y, g):
    return unreduce(g, a_shape, axis, keepdims) * prod_others(a, axis, keepdims, y)


@table.jvp(np.prod, "a")
def prod_jvp(a, a_dot, axis, keepdims, y):
    return np.sum(a_dot * prod_others(a, axis, keepdims, y), axis=axis, keepdims=keepdims)


@table.vjp(np.nansum, "a")
def nansum_vjp(a, a_shape, axis, keepdims, g):
    return np.where(np.isnan(a), 0, unreduce(g, a_shape, axis, keepdims))


@table.jvp(np.nansum, "a")
def nansum_jvp(a, a_dot, axis, keepdims):
    return np.sum(np.where(np.isnan(a), 0, a_dot), axis=axis, keepdims=keepdims)


@table.vjp(np.nanmean, "a")
def nanmean_vjp(a, a_shape, axis, keepdims, g):
    return np.where(np.isnan(a), 0, unreduce(g, a_shape, axis, keepdims)) / nan_count(a, axis)


@table.jvp(np.nanmean, "a")
def nanmean_jvp(a, a_dot, axis, keepdims):
    return np.sum(np.where(np.isnan(a), 0, a_dot) / nan_count(a, axis), axis=axis, keepdims=keepdims)


table.vjp(np.average, "a")(average_vjp_a)


@table.jvp(np.average, "a")
def average_jvp(a_dot, axis, weights, keepdims):
    return np.average(a_dot, axis=axis, weights=weights, keepdims=keepdims)


table.vjp(np.average, "weights")(average_vjp_weights)
table.jvp(np.average, "weights")(average_jvp_weights)


# --- max, min, ptp ------------------------------------------------------------------------------

@table.vjp(np.max, "a")
@table.vjp(np.amax, "a")
@table.vjp(np.min, "a")
@table.vjp(np.amin, "a")
@table.vjp(np.nanmax, "a")
@table.vjp(np.nanmin, "a")
def max_vjp(a, a_shape, axis, keepdims, y, g):
    return unreduce(g, a_shape, axis, keepdims) * extremum_share(a, y, axis, keepdims)


@table.jvp(np.max, "a")
@table.jvp(np.amax, "a")
@table.jvp(np.min, "a")
@table.jvp(np.amin, "a")
@table.jvp(np.nanmax, "a")
@table.jvp(np.nanmin, "a")
def max_jvp(a, a_dot, axis, keepdims, y):
    return np.sum(a_dot * extremum_share(a, y, axis, keepdims), axis=axis, keepdims=keepdims)


@table.vjp(np.ptp, "a")
def ptp_vjp(a, a_shape, axis, keepdims, g):
    return unreduce(g, a_shape, axis, keepdims) * ptp_share(a, axis)


@table.jvp(np.ptp, "a")
def ptp_jvp(a, a_dot, axis, keepdims):
    return np.sum(a_dot * ptp_share(a, axis), axis=axis, keepdims=keepdims)


# --- var, std -----------------------------------------------------------------------------------

@table.vjp(np.var, "a")
def var_vjp(a, a_shape, axis, ddof, keepdims, g):
    """Of a complex `a`, var is the mean of |a - mean|^2: the conjugate carries the convention.
    var is real: an imaginary part of g (which a real value's cotangent can pick up) is dropped."""
    return unreduce(np.real(g), a_shape, axis, keepdims) * np.conj(centered(a, axis)) * (2 / (reduced_size(a_shape, axis) - ddof))


@table.jvp(np.var, "a")
def var_jvp(a, a_dot, axis, ddof, keepdims):
    moved = np.sum(np.real(np.conj(centered(a, axis)) * a_dot), axis=axis, keepdims=keepdims)
    return moved * (2 / (reduced_size(np.shape(a), axis) - ddof))


@table.vjp(np.std, "a")
def std_vjp(a, a_shape, axis, ddof, keepdims, y, g):
    """At a constant slice (std 0) the gradient is 0: every direction away from it is a kink."""
    return unreduce(np.real(g) / np.where(y == 0, 1, y), a_shape, axis, keepdims) * np.conj(centered(a, axis)) \
        / (reduced_size(a_shape, axis) - ddof)


@table.jvp(np.std, "a")
def std_jvp(a, a_dot, axis, ddof, keepdims, y):
    moved = np.sum(np.real(np.conj(centered(a, axis)) * a_dot), axis=axis, keepdims=keepdims)
    return moved / (np.where(y == 0, 1, y) * (reduced_size(np.shape(a), axis) - ddof))


# --- order statistics ---------------------------------------------------------------------------

@table.vjp(np.median, "a")
def median_vjp(a, a_shape, axis, keepdims, g):
    return unreduce(g, a_shape, axis, keepdims) * order_weights(a, 0.5, axis, "linear")


@table.jvp(np.median, "a")
def median_jvp(a, a_dot, axis, keepdims):
    return np.sum(a_dot * order_weights(a, 0.5, axis, "linear"), axis=axis, keepdims=keepdims)


table.vjp(np.quantile, "a")(quantile_vjp)
table.jvp(np.quantile, "a")(quantile_jvp)
table.vjp(np.percentile, "a")(percentile_vjp)
table.jvp(np.percentile, "a")(percentile_jvp)


# --- scans and differences ----------------------------------------------------------------------

table.vjp(np.cumsum, "a")(cumsum_vjp)


@table.jvp(np.cumsum, "a")
def cumsum_jvp(a_dot, axis):
    return np.cumsum(a_dot, axis=axis)


table.vjp(np.cumprod, "a")(cumprod_vjp)
table.jvp(np.cumprod, "a")(cumprod_jvp)
table.vjp(np.diff, "a")(diff_vjp)


@table.jvp(np.diff, "a")
def diff_jvp(a_dot, n, axis):
    return np.diff(a_dot, n=n, axis=axis)


@table.vjp(np.bincount, "weights")
def bincount_vjp(x, weights_shape, g):
    return np.reshape(g[x], weights_shape)


@table.jvp(np.bincount, "weights")
def bincount_jvp(x, weights_dot, minlength):
    return np.bincount(x, weights=weights_dot, minlength=minlength)


table.vjp(np.gradient, "f")(gradient_vjp)


@table.jvp(np.gradient, "f")
def gradient_jvp(f_dot, axis, edge_order):
    return np.gradient(f_dot, axis=axis, edge_order=edge_order)


# --- integration and interpolation --------------------------------------------------------------

table.vjp(np.trapezoid, "values")(trapezoid_vjp_values)


@table.jvp(np.trapezoid, "values")
def trapezoid_jvp_values(values_dot, x, dx, axis):
    return np.trapezoid(values_dot, x=x, dx=dx, axis=axis)


table.vjp(np.trapezoid, "x")(trapezoid_vjp_x)


@table.jvp(np.trapezoid, "x")
def trapezoid_jvp_x(values, x_dot, axis):
    return np.trapezoid(values, x=x_dot, axis=axis)


table.vjp(np.trapezoid, "dx")(trapezoid_vjp_dx)
table.jvp(np.trapezoid, "dx")(trapezoid_jvp_dx)


@table.vjp(np.interp, "x")
def interp_vjp_x(x, xp, fp, g):
    return g * interp_slope(x, xp, fp)


@table.jvp(np.interp, "x")
def interp_jvp_x(x, x_dot, xp, fp):
    return x_dot * interp_slope(x, xp, fp)


table.vjp(np.interp, "fp")(interp_vjp_fp)


def histogram_bin(a, edges):
    """The bin of each element of `a` (flattened) among `edges`, -1 outside them (the last bin holds its right
    edge, as np.histogram's does)."""
    flat = np.ravel(a)
    k = np.minimum(np.searchsorted(edges, flat, side="right") - 1, len(edges) - 2)
    return np.where((flat >= edges[0]) & (flat <= edges[-1]), k, -1)


def histogram_total(a, edges, weights):
    """The sum of the weights within the edges: what density=True divides by."""
    return np.sum(np.where(histogram_bin(a, edges) >= 0, np.ravel(weights), 0))


@table.vjp(np.histogram, "weights")
def histogram_vjp_weights(a, density, weights, weights_shape, y, g):
    g_hist = piece_cotangents(g, list(y))[0]
    b = histogram_bin(a, y[1])
    if density:
        total = histogram_total(a, y[1], weights)
        g_hist = g_hist / (np.diff(y[1]) * total) - np.sum(g_hist * y[0]) / total
    return np.reshape(np.where(b >= 0, g_hist[b], 0), weights_shape)


@table.jvp(np.histogram, "weights")
def histogram_jvp_weights(a, density, weights, weights_dot, y):
    counts_dot = np.histogram(a, bins=y[1], weights=weights_dot)[0]
    if density:
        total = histogram_total(a, y[1], weights)
        counts_dot = counts_dot / (np.diff(y[1]) * total) - y[0] * (np.sum(counts_dot) / total)
    return counts_dot, np.zeros_like(y[1])
table.jvp(np.interp, "fp")(interp_jvp_fp)

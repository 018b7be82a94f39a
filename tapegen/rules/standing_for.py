"""Functions that take functions, or build iterators, as the Python code they stand for; NumPy
functions without rules of their own, as the NumPy calls with rules they stand for (np.convolve,
np.correlate, np.polyval, np.meshgrid of two arrays); and NumPy functions that write into an array
(np.fill_diagonal, np.copyto, np.put, np.putmask, np.place, np.put_along_axis) as the assignments
they make.

`functools.reduce(f, xs)`, `itertools.chain(a, b)`, `np.apply_along_axis(f, axis, a)`, the function
`np.vectorize(f)` makes and `sorted` / `max` / `min` with a key function of the user's run code of the
user's (or NumPy's) on values tapegen follows. Lowering inlines the function here for such a call, as it
inlines the user's own (a function of tapegen's rules package counts as the user's), so the function
passed is called where tapegen sees it and its derivative is that of the loop written out. An iterator
becomes the list it yields (iterated once, as code handing it to a `for` or `list` does).
"""
from __future__ import annotations

import functools
import inspect
import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided as _strided
from numpy.lib.stride_tricks import sliding_window_view as _windows

from ..errors import NoRuleError
from ..runtime import stop_gradient


def reduce(function, sequence, *initial):
    """`functools.reduce(function, sequence[, initial])`: `function` applied item after item."""
    items = list(sequence)
    if initial:
        value, rest = initial[0], items
    else:
        value, rest = items[0], items[1:]
    for item in rest:
        value = function(value, item)
    return value


def chain(*iterables):
    """`itertools.chain(a, b, ...)`: the items of each in turn, as a list."""
    out = []
    for iterable in iterables:
        for item in iterable:
            out.append(item)
    return out


def product(*iterables, repeat=1):
    """`itertools.product(a, b)`, `itertools.product(xs, repeat=2)`: the tuples of one item of each, the last
    varying fastest, as a list."""
    pools = [list(pool) for pool in iterables] * repeat
    result = [[]]
    for pool in pools:
        result = [chosen + [item] for chosen in result for item in pool]
    return [tuple(chosen) for chosen in result]


def combinations(iterable, r):
    """`itertools.combinations(xs, r)`: the tuples of `r` items in the order they come (by their positions,
    chosen when the code runs), as a list."""
    pool = list(iterable)
    return [tuple(pool[i] for i in chosen) for chosen in itertools.combinations(range(len(pool)), r)]


def permutations(iterable, r=None):
    """`itertools.permutations(xs[, r])`: the ordered tuples of `r` distinct items, as a list."""
    pool = list(iterable)
    return [tuple(pool[i] for i in chosen) for chosen in itertools.permutations(range(len(pool)), r)]


def combinations_with_replacement(iterable, r):
    """`itertools.combinations_with_replacement(xs, r)`: the sorted tuples of `r` items, repeats allowed."""
    pool = list(iterable)
    return [tuple(pool[i] for i in chosen)
            for chosen in itertools.combinations_with_replacement(range(len(pool)), r)]


OF_ITEMS = (product, combinations, permutations, combinations_with_replacement)  # of a range: run as written


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """`np.apply_along_axis`: `func1d` of each 1-d slice along `axis` (returning a number or a 1-d array),
    the results stacked where NumPy puts them."""
    arr = np.asarray(arr)
    moved = np.moveaxis(arr, axis, -1)
    rows = np.reshape(moved, (-1, np.shape(moved)[-1]))
    results = [func1d(row, *args, **kwargs) for row in rows]
    if np.ndim(results[0]) > 1:
        raise ValueError("tapegen follows np.apply_along_axis for a function returning a number or a 1-d array")
    stacked = np.reshape(np.stack(results), np.shape(moved)[:-1] + np.shape(results[0]))
    return stacked if np.ndim(results[0]) == 0 else np.moveaxis(stacked, -1, axis % np.ndim(arr))


def vectorized(pyfunc, *args):
    """`np.vectorize(pyfunc)(*args)`: `pyfunc` of each element (of one argument, or of two broadcast
    together), the results (numbers) in the arguments' shape."""
    if len(args) == 1:
        a = np.asarray(args[0])
        return np.reshape(np.array([pyfunc(v) for v in np.ravel(a)]), np.shape(a))
    if len(args) == 2:
        shape = np.broadcast_shapes(np.shape(args[0]), np.shape(args[1]))
        a, b = np.broadcast_to(args[0], shape), np.broadcast_to(args[1], shape)
        return np.reshape(np.array([pyfunc(u, v) for u, v in zip(np.ravel(a), np.ravel(b))]), np.shape(a))
    raise ValueError("tapegen follows a function np.vectorize made of one or two arguments")


def convolve(a, v, mode="full"):
    """`np.convolve(a, v, mode)`: out[k] = sum_i a[i] v[k - i], as the product of `a` with the matrix of
    shifted copies of `v`, then the part `mode` keeps ("full", "same" or "valid", as NumPy centres them)."""
    a, v = np.ravel(a), np.ravel(v)
    n, m = np.shape(a)[0], np.shape(v)[0]
    shift = np.arange(n + m - 1)[:, None] - np.arange(n)[None, :]
    inside = (shift >= 0) & (shift < m)
    full = np.where(inside, v[np.clip(shift, 0, m - 1)], 0.0) @ a
    if mode == "full":
        return full
    length = max(n, m) if mode == "same" else max(n, m) - min(n, m) + 1
    start = (n + m - 1 - length) // 2
    return full[start:start + length]


def correlate(a, v, mode="valid"):
    """`np.correlate(a, v, mode)`: the convolution with `v` conjugated and reversed."""
    return convolve(a, np.conj(np.ravel(v))[::-1], mode)


def polyval(p, x):
    """`np.polyval(p, x)`: Horner's rule, `p` highest power first."""
    y = np.zeros(np.shape(x))
    for c in p:
        y = y * x + c
    return y


def meshgrid(x, y, indexing="xy"):
    """`np.meshgrid(x, y)` of two 1-d arrays: each broadcast over the other's axis ("xy": x along columns)."""
    x, y = np.ravel(x), np.ravel(y)
    if indexing == "xy":
        shape = (np.shape(y)[0], np.shape(x)[0])
        return np.broadcast_to(x[None, :], shape), np.broadcast_to(y[:, None], shape)
    shape = (np.shape(x)[0], np.shape(y)[0])
    return np.broadcast_to(x[:, None], shape), np.broadcast_to(y[None, :], shape)


def accumulate(iterable, func=None, *, initial=None):
    """`itertools.accumulate(xs[, func][, initial=])`: the running sums (or `func`'s running results)."""
    items = list(iterable)
    out = [] if initial is None else [initial]
    for item in items:
        if not out:
            out.append(item)
        elif func is None:
            out.append(out[-1] + item)
        else:
            out.append(func(out[-1], item))
    return out


def transposed(rows):
    """`zip(*rows)` of rows whose number is known only when the code runs: the tuples of their items at each
    position, as a list (as long as the shortest row)."""
    rows = list(rows)
    out = []
    if rows:
        for j in range(min(len(row) for row in rows)):
            column = []
            for row in rows:
                column.append(row[j])
            out.append(tuple(column))
    return out


def pairwise(iterable):
    """`itertools.pairwise(xs)`: each item with the next one, as a list of pairs."""
    items = list(iterable)
    return [(items[k], items[k + 1]) for k in range(len(items) - 1)]


def filtered(function, iterable):
    """`filter(f, xs)`: the items for which `f` holds (for `None`, the items that are true), as a list."""
    if function is None:
        return [item for item in iterable if item]
    return [item for item in iterable if function(item)]


def fsum(iterable):
    """`math.fsum(xs)`: the sum, as a Python float (its exact rounding is a detail of the value, not of its
    derivative)."""
    total = 0.0
    for item in iterable:
        total = total + item
    return float(total)


def product_of(iterable, *, start=1):
    """`math.prod(xs, start=1)`: the product of the items."""
    total = start
    for item in iterable:
        total = total * item
    return total


def divmod_of(a, b):
    """`divmod(a, b)`: (a // b, a % b)."""
    return a // b, a % b


def complex_of(real=0.0, imag=0.0):
    """`complex(re, im)` of numbers: re + im * 1j."""
    return real + imag * 1j


# --- NumPy functions that write into their first argument, as the assignments they make --------------
# Each is `a[positions] = values` on the array passed (tapegen follows such a write as it follows one in
# the user's code: into a copy when `a` is an argument); a position written twice keeps NumPy's write.

def _cycled(values, n):
    """The first `n` items of `values` (1-d) repeated as often as needed, as NumPy fills with a short list."""
    size = np.shape(values)[0]
    return values if size == n or size == 1 else np.tile(values, -(-n // size))[:n]


def fill_diagonal(a, val, wrap=False):
    """`np.fill_diagonal(a, val, wrap)`: `val`, flattened (and repeated), on the main diagonal of `a`."""
    shape = np.shape(a)
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) == 2:
        end = None if wrap else shape[1] * shape[1]
        flat = np.arange(np.size(a))[:end:shape[1] + 1]
    else:
        if len(set(shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        flat = np.arange(np.size(a))[::1 + int(np.sum(np.cumprod(shape[:-1])))]
    a[np.unravel_index(flat, shape)] = _cycled(np.ravel(val), np.shape(flat)[0])


def copyto(dst, src, casting="same_kind", where=True):
    """`np.copyto(dst, src, where=...)`: `src`, broadcast, written into all of `dst` (where `where` holds)."""
    dst[...] = src if where is True else np.where(where, src, dst)


def _flat_positions(ind, size, mode):
    """np.put's indices (into the flattened array) as non-negative positions, `mode` as NumPy applies it."""
    ind = np.ravel(ind)
    if mode == "wrap":
        return ind % size
    if mode == "clip":
        return np.clip(ind, 0, size - 1)
    if np.any(ind >= size) or np.any(ind < -size):
        raise IndexError(f"index out of range for array of size {size}")
    return np.where(ind < 0, ind + size, ind)


def put(a, ind, v, mode="raise"):
    """`np.put(a, ind, v)`: `v` (repeated as needed) at positions `ind` of the flattened `a`."""
    flat = _flat_positions(ind, np.size(a), mode)
    a[np.unravel_index(flat, np.shape(a))] = _cycled(np.ravel(v), np.shape(flat)[0])


def flat_set(a, index, v):
    """`a.flat[index] = v`: `v` (repeated as needed) at positions `index` (an int, a slice, a list, a mask) of
    the flattened `a`."""
    positions = np.arange(np.size(a))[index]
    values = _cycled(np.ravel(v), np.size(positions))
    a[np.unravel_index(positions, np.shape(a))] = values if np.ndim(positions) else values[0]


def flat_get(a, index):
    """`a.flat[index]`: items of the flattened `a`."""
    return a.flatten()[index]


def joined_sum(iterable, start):
    """`sum(xs, [])` (a start that is a list or tuple): the items joined one after another by `+`, as Python's
    sum does (py_sum's rules add numbers)."""
    total = start
    for item in iterable:
        total = total + item
    return total


def putmask(a, mask, values):
    """`np.putmask(a, mask, values)`: where `mask` holds, the item of `values` (repeated to `a`'s size) at
    the same flat position."""
    a[mask] = np.reshape(np.broadcast_to(_cycled(np.ravel(values), np.size(a)), (np.size(a),)), np.shape(a))[mask]


def place(arr, mask, vals):
    """`np.place(arr, mask, vals)`: the first items of `vals` (repeated as needed), in order, where `mask`
    holds."""
    arr[mask] = _cycled(np.ravel(vals), int(np.count_nonzero(mask)))


def put_along_axis(arr, indices, values, axis):
    """`np.put_along_axis(arr, indices, values, axis)`: `values` at `indices` along `axis` (`axis=None`:
    of the flattened array)."""
    if axis is None:
        put(arr, indices, values)
        return
    shape = np.shape(arr)
    axis = axis % len(shape)
    index = tuple(indices if k == axis else
                  np.reshape(np.arange(n), (1,) * k + (n,) + (1,) * (len(shape) - k - 1))
                  for k, n in enumerate(shape))
    arr[index] = values


def gradient(f, *varargs, axis=None, edge_order=1):
    """`np.gradient(f, h)`, `np.gradient(f, x)`, `np.gradient(f, hx, hy)`: with spacings (a number, or
    the coordinates along the axis), as NumPy computes it (second-order differences inside, first- or
    second-order at the ends); without them np.gradient's own rule applies."""
    ndim = np.ndim(f)
    axes = list(range(ndim)) if axis is None else [axis % ndim] if isinstance(axis, int) else [a % ndim for a in axis]
    if len(varargs) == 1:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    out = [_spaced_gradient(f, ax, h, edge_order) for ax, h in zip(axes, spacings)]
    return out[0] if len(out) == 1 else tuple(out)


def _spaced_gradient(f, axis, h, edge_order):
    """np.gradient of `f` along `axis` with spacing `h`: a number, or the coordinates along the axis."""
    if np.ndim(h) == 0:
        return np.gradient(f, axis=axis, edge_order=edge_order) / h
    g = np.moveaxis(f, axis, 0)
    dx = np.diff(h)
    extra = (1,) * (np.ndim(g) - 1)
    dx1, dx2 = np.reshape(dx[:-1], (-1,) + extra), np.reshape(dx[1:], (-1,) + extra)
    inside = (-dx2 / (dx1 * (dx1 + dx2)) * g[:-2] + (dx2 - dx1) / (dx1 * dx2) * g[1:-1]
              + dx1 / (dx2 * (dx1 + dx2)) * g[2:])
    if edge_order == 1:
        first = (g[1] - g[0]) / dx[0]
        last = (g[-1] - g[-2]) / dx[-1]
    else:
        a, b = dx[0], dx[1]
        first = (-(2.0 * a + b) / (a * (a + b)) * g[0] + (a + b) / (a * b) * g[1] - a / (b * (a + b)) * g[2])
        a, b = dx[-2], dx[-1]
        last = (b / (a * (a + b)) * g[-3] - (a + b) / (a * b) * g[-2] + (2.0 * b + a) / (b * (a + b)) * g[-1])
    return np.moveaxis(np.concatenate([first[None], inside, last[None]]), 0, axis)


def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    """`np.cov(m, y, rowvar, bias, ddof)` without weights: rows (columns if not `rowvar`) are variables."""
    X = np.atleast_2d(m)
    if not rowvar and np.shape(X)[0] != 1:
        X = X.T
    if y is not None:
        Y = np.atleast_2d(y)
        if not rowvar and np.shape(Y)[0] != 1:
            Y = Y.T
        X = np.concatenate([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    centred = X - np.mean(X, axis=1, keepdims=True)
    return np.squeeze(centred @ np.conj(centred).T / (np.shape(X)[1] - ddof))


def corrcoef(x, y=None, rowvar=True):
    """`np.corrcoef(x, y, rowvar)`: the covariance scaled by the standard deviations, clipped to [-1, 1]."""
    c = cov(x, y, rowvar)
    if np.ndim(c) == 0:
        return c / c
    d = np.sqrt(np.real(np.diag(c)))
    c = c / d[:, None] / d[None, :]
    return np.clip(c, -1, 1) if not np.iscomplexobj(c) else c


def broadcast_arrays(*args):
    """`np.broadcast_arrays(a, b, ...)`: each broadcast to the shape of all."""
    shape = np.broadcast_shapes(*[np.shape(a) for a in args])
    return tuple(np.broadcast_to(a, shape) for a in args)


def compress(condition, a, axis=None):
    """`np.compress(condition, a, axis)`: the slices of `a` (flattened for no axis) where `condition` holds."""
    where = np.nonzero(np.ravel(condition))[0]
    return np.take(np.ravel(a), where) if axis is None else np.take(a, where, axis=axis)


def extract(condition, arr):
    """`np.extract(condition, arr)`: the items of flattened `arr` where flattened `condition` holds."""
    return np.take(np.ravel(arr), np.nonzero(np.ravel(condition))[0])


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """`np.diff(a, n, axis, prepend=..., append=...)`: the values added at the ends first (a number
    broadcast to one slice), then np.diff's own rule."""
    parts = []
    for value in (prepend, None, append):
        if value is None:
            if not parts:
                parts.append(a)
            continue
        shape = list(np.shape(a))
        shape[axis] = 1
        parts.append(np.broadcast_to(value, shape) if np.ndim(value) == 0 else value)
    if prepend is not None:
        parts.insert(1, a)
    return np.diff(np.concatenate(parts, axis=axis), n=n, axis=axis)


def take(a, indices, axis=None, mode="raise"):
    """`np.take(a, indices, axis, mode="wrap" or "clip")`: the indices wrapped or clipped first."""
    size = np.size(a) if axis is None else np.shape(a)[axis]
    if mode == "wrap":
        indices = np.mod(indices, size)
    elif mode == "clip":
        indices = np.clip(indices, 0, size - 1)
    return np.take(a, indices, axis=axis)


def sliding_window_view(x, window_shape, axis=None):
    """`np.lib.stride_tricks.sliding_window_view(x, window_shape, axis)`: the windows, as the items of `x` at
    the positions NumPy's windows of an array of positions hold (a copy, where NumPy's is a read-only view)."""
    positions = np.reshape(np.arange(np.size(x)), np.shape(x))
    return np.ravel(x)[_windows(positions, window_shape, axis)]


def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """`np.lib.stride_tricks.as_strided(x, shape, strides)` of a C-contiguous array (im2col written with
    strides): the items of `x` at the flat positions those strides reach (a copy, where NumPy's is a view)."""
    if not np.asarray(x).flags.c_contiguous:
        raise NoRuleError("tapegen follows as_strided of a C-contiguous array only",
                          hint="take np.ascontiguousarray(x) first")
    itemsize = np.asarray(x).itemsize
    positions = np.arange(np.size(x))
    strides = strides if strides is not None else np.asarray(x).strides
    steps = tuple(s // itemsize * positions.itemsize for s in strides)
    items = np.ravel(x)[_strided(positions, shape if shape is not None else np.shape(x), steps)]
    return np.einsum("...->...", items)  # (a view that is no row or block of `x`: a write into it, which NumPy's
    #                                       view would put into `x`, is refused where `x` is read after)


def nanvar(a, axis=None, ddof=0, keepdims=False):
    """`np.nanvar`: the variance of the items that are not NaN (a NaN item has no derivative)."""
    kept = np.logical_not(np.isnan(a))
    count = np.sum(kept, axis=axis, keepdims=True)
    mean = np.sum(np.where(kept, a, 0.0), axis=axis, keepdims=True) / np.maximum(count, 1)
    deviation = np.where(kept, a - np.where(count > 0, mean, 0.0), 0.0)
    dof = np.sum(kept, axis=axis, keepdims=keepdims) - ddof
    total = np.sum(deviation * deviation, axis=axis, keepdims=keepdims)  # NaN where no degree of freedom is
    return np.where(dof > 0, total / np.where(dof > 0, dof, 1), np.nan)  # left, without a NaN derivative


def nanstd(a, axis=None, ddof=0, keepdims=False):
    """`np.nanstd`: the square root of np.nanvar."""
    return np.sqrt(nanvar(a, axis=axis, ddof=ddof, keepdims=keepdims))


def diagflat(v, k=0):
    """`np.diagflat(v, k)`: the flattened `v` on the k-th diagonal of a square array."""
    return np.diag(np.ravel(v), k)


def ediff1d(ary, to_end=None, to_begin=None):
    """`np.ediff1d`: the differences of the flattened array, `to_begin` before and `to_end` after them."""
    parts = [np.diff(np.ravel(ary))]
    if to_begin is not None:
        parts = [np.ravel(to_begin)] + parts
    if to_end is not None:
        parts = parts + [np.ravel(to_end)]
    return np.concatenate(parts)


def resize(a, new_shape):
    """`np.resize(a, new_shape)`: the flattened `a` repeated (or cut) to the new size, in the new shape."""
    flat = np.ravel(a)
    size = int(np.prod(new_shape))
    return np.reshape(np.tile(flat, -(-size // np.size(flat)))[:size], new_shape)


def piecewise(x, condlist, funclist, *args, **kw):
    """`np.piecewise(x, condlist, funclist)`: each function (or number) where its condition holds, the last
    function where none does if there is one more function than conditions; 0 elsewhere."""
    conditions = list(condlist) if isinstance(condlist, (list, tuple)) else [condlist]
    if len(funclist) == len(conditions) + 1:
        conditions = conditions + [np.logical_not(np.any(np.stack(conditions), axis=0))]
    out = np.zeros(np.shape(x))
    for condition, f in zip(conditions, funclist):
        out[condition] = f(x[condition], *args, **kw) if callable(f) else f
    return out


def condition_number(x, p=None):
    """`np.linalg.cond(x, p)`: the ratio of the largest to the smallest singular value (p None, 2 or -2), or
    norm(x) * norm(inv(x)) in another norm."""
    if p is None or p == 2 or p == -2:
        s = np.linalg.svd(x, compute_uv=False)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    return np.linalg.norm(x, p, axis=(-2, -1)) * np.linalg.norm(np.linalg.inv(x), p, axis=(-2, -1))


def polyfit(x, y, deg, rcond=None):
    """`np.polyfit(x, y, deg)`: the least-squares coefficients, highest power first."""
    powers = np.asarray(x)[:, None] ** np.arange(deg, -1, -1)
    return np.linalg.lstsq(powers, y, rcond=rcond)[0]


def lfilter(b, a, x, axis=-1):
    """`scipy.signal.lfilter(b, a, x)` of a 1-d signal: the filter's FIR part as a convolution, then its
    recursion y[n] = v[n] - a[1] y[n-1] - ... (coefficients scaled by a[0])."""
    if np.ndim(x) != 1:
        raise NoRuleError("tapegen follows scipy.signal.lfilter of a 1-d signal only",
                          hint="filter each row: np.stack([lfilter(b, a, row) for row in x])")
    b, a = np.atleast_1d(b) / np.atleast_1d(a)[0], np.atleast_1d(a) / np.atleast_1d(a)[0]
    n = np.shape(x)[0]
    v = np.convolve(x, b)[:n]
    if np.shape(a)[0] == 1:
        return v
    y = []
    for i in range(n):
        value = v[i]
        for k in range(1, min(np.shape(a)[0], i + 1)):
            value = value - a[k] * y[i - k]
        y.append(value)
    return np.stack(y)


def solve_continuous_lyapunov(a, q):
    """`scipy.linalg.solve_continuous_lyapunov(a, q)`: x with a x + x a^H = q, the Sylvester equation it is."""
    import scipy.linalg
    return scipy.linalg.solve_sylvester(a, np.conj(np.swapaxes(a, -1, -2)), q)


def solve_discrete_lyapunov(a, q, method=None):
    """`scipy.linalg.solve_discrete_lyapunov(a, q)`: x with x - a x a^H = q, by SciPy's own methods: 'direct'
    (below 10 rows) solves (I - a (x) conj(a)) vec x = vec q, 'bilinear' maps it to a continuous equation."""
    import scipy.linalg
    n = np.shape(a)[0]
    if method is None:
        method = "direct" if n < 10 else "bilinear"
    if method == "direct":
        lhs = np.eye(n * n) - np.kron(a, np.conj(a))
        return np.reshape(np.linalg.solve(lhs, np.ravel(q)), np.shape(q))
    if method != "bilinear":
        raise ValueError(f"Unknown solver {method}")
    eye = np.eye(n)
    a_h = np.conj(np.swapaxes(a, -1, -2))
    a_h_plus_inv = np.linalg.inv(a_h + eye)
    b = (a_h - eye) @ a_h_plus_inv
    c = 2 * np.linalg.inv(a + eye) @ q @ a_h_plus_inv
    return solve_continuous_lyapunov(np.conj(np.swapaxes(b, -1, -2)), -c)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """`scipy.special.logsumexp(a, axis, b, keepdims, return_sign=True)`: log |sum(b exp(a))| and the sum's sign,
    the sum taken with the largest item of `a` factored out (without return_sign, SciPy's own)."""
    import scipy.special
    if not return_sign:
        return scipy.special.logsumexp(a, axis=axis, b=b, keepdims=keepdims)
    top = stop_gradient(np.max(a, axis=axis, keepdims=True))  # (any shift gives the same value and slope)
    top = np.where(np.isfinite(top), top, 0.0)
    terms = np.exp(a - top) if b is None else b * np.exp(a - top)
    total = np.sum(terms, axis=axis, keepdims=True)
    value, sign = np.log(np.abs(total)) + top, np.sign(total)
    if keepdims:
        return value, sign
    return np.squeeze(value, axis=axis), np.squeeze(sign, axis=axis)


def polynomial_basis(kind, x, deg):
    """[P_0(x), ..., P_deg(x)] of a numpy.polynomial family, by its three-term recurrence."""
    one = np.ones(np.shape(x))
    if kind == "polynomial":
        basis = [one]
        for k in range(deg):
            basis.append(basis[-1] * x)
        return basis
    first = {"chebyshev": x * one, "legendre": x * one, "hermite": 2 * x * one, "hermite_e": x * one,
             "laguerre": 1 - x * one}[kind]
    basis = [one, first]
    for k in range(1, deg):
        p, q = basis[-1], basis[-2]
        if kind == "chebyshev":
            basis.append(2 * x * p - q)
        elif kind == "legendre":
            basis.append(((2 * k + 1) * x * p - k * q) / (k + 1))
        elif kind == "hermite":
            basis.append(2 * x * p - 2 * k * q)
        elif kind == "hermite_e":
            basis.append(x * p - k * q)
        else:
            basis.append(((2 * k + 1 - x) * p - k * q) / (k + 1))
    return basis[:deg + 1]


def polynomial_value(kind, x, c, tensor=True):
    """`np.polynomial.<kind>.<prefix>val(x, c)`: sum_k c[k] P_k(x); with `tensor`, each column of a
    many-dimensional `c` evaluated at every x (c's trailing shape, then x's)."""
    if isinstance(x, (tuple, list)):
        x = np.asarray(x)
    c = np.asarray(c)
    if tensor:
        c = np.reshape(c, np.shape(c) + (1,) * np.ndim(x))
    total = 0.0
    for k, p in enumerate(polynomial_basis(kind, x, np.shape(c)[0] - 1)):
        total = total + c[k] * p
    return total


def polynomial_vander(kind, x, deg):
    """`np.polynomial.<kind>.<prefix>vander(x, deg)`: the basis at x along a last axis (x at least 1-d)."""
    x = np.atleast_1d(x) + 0.0
    return np.stack(polynomial_basis(kind, x, int(deg)), axis=-1)


def polynomial_fit(kind, x, y, deg, rcond=None, full=False, w=None):
    """`np.polynomial.<kind>.<prefix>fit(x, y, deg)`: least-squares coefficients, lowest degree first, the
    basis columns scaled to unit norm as NumPy does (the solution does not depend on the scale)."""
    if full or not isinstance(deg, int):
        raise NoRuleError("tapegen follows np.polynomial's fit of one degree, without full=True",
                          hint="pass deg as an int, and compute the residuals from the coefficients")
    lhs, rhs = polynomial_vander(kind, x, deg), np.asarray(y) + 0.0
    if w is not None:
        lhs = lhs * np.reshape(w, (-1, 1))
        rhs = rhs * (w if np.ndim(rhs) == 1 else np.reshape(w, (-1, 1)))
    if rcond is None:
        rcond = np.shape(lhs)[0] * np.finfo(np.result_type(lhs, np.float64)).eps
    scale = stop_gradient(np.sqrt(np.sum(lhs * lhs, axis=0)))
    scale = np.where(scale == 0, 1.0, scale)
    coef = np.linalg.lstsq(lhs / scale, rhs, rcond=rcond)[0]
    return coef / (scale if np.ndim(coef) == 1 else np.reshape(scale, (-1, 1)))


POLYNOMIAL_PREFIXES = {"polynomial": "poly", "chebyshev": "cheb", "legendre": "leg", "hermite": "herm",
                       "hermite_e": "herme", "laguerre": "lag"}


def polynomial_function(obj):
    """The function here standing for a numpy.polynomial family's `<prefix>val`, `vander` or `fit`, or None."""
    module = str(getattr(obj, "__module__", ""))
    kind = module[len("numpy.polynomial."):] if module.startswith("numpy.polynomial.") else None
    prefix = POLYNOMIAL_PREFIXES.get(kind)
    name = getattr(obj, "__name__", "")
    if prefix is None or not name.startswith(prefix) or not inspect.isfunction(obj):
        return None
    return POLYNOMIAL_FUNCTIONS.get((kind, name[len(prefix):]))


def _of_family(kind):
    """The `val`, `vander` and `fit` of one numpy.polynomial family, as functions here."""
    def val(x, c, tensor=True):
        return polynomial_value(kind, x, c, tensor)

    def vander(x, deg):
        return polynomial_vander(kind, x, deg)

    def fit(x, y, deg, rcond=None, full=False, w=None):
        return polynomial_fit(kind, x, y, deg, rcond, full, w)
    return {(kind, "val"): val, (kind, "vander"): vander, (kind, "fit"): fit}


POLYNOMIAL_FUNCTIONS = {key: fn for kind in POLYNOMIAL_PREFIXES for key, fn in _of_family(kind).items()}


def _one_dimensional(name, *arrays):
    if any(np.ndim(a) > 1 for a in arrays):
        raise NoRuleError(f"tapegen follows scipy.linalg.{name} of 1-d arrays",
                          hint=f"make one matrix a call: np.stack([{name}(row) for row in c])")


def toeplitz(c, r=None):
    """`scipy.linalg.toeplitz(c, r)`: t[i, j] = c[i - j] below the diagonal, r[j - i] above (r's first item
    unused; r = conj(c) unless given), gathered from one vector of both."""
    _one_dimensional("toeplitz", c, r)
    c = np.ravel(c)
    r = np.conj(c) if r is None else np.ravel(r)
    values = np.concatenate((r[:0:-1], c))
    rows, cols = np.shape(c)[0], np.shape(r)[0]
    return values[(cols - 1) + np.arange(rows)[:, None] - np.arange(cols)[None, :]]


def circulant(c):
    """`scipy.linalg.circulant(c)`: c as its first column, each next column c rolled down by one."""
    _one_dimensional("circulant", c)
    c = np.ravel(c)
    n = np.shape(c)[0]
    return c[(np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def hankel(c, r=None):
    """`scipy.linalg.hankel(c, r)`: h[i, j] = c[i + j] while that is in c, then r (its first item unused;
    zeros unless given)."""
    _one_dimensional("hankel", c, r)
    c = np.ravel(c)
    r = np.zeros_like(c) if r is None else np.ravel(r)
    values = np.concatenate((c, r[1:]))
    return values[np.arange(np.shape(c)[0])[:, None] + np.arange(np.shape(r)[0])[None, :]]


def block_diag(*arrs):
    """`scipy.linalg.block_diag(a, b, ...)`: the arrays (numbers and 1-d arrays as one row) along the diagonal
    of a matrix of zeros."""
    if not arrs:
        return np.empty((1, 0))
    blocks = [np.atleast_2d(a) for a in arrs]
    if any(np.ndim(b) > 2 for b in blocks):
        raise ValueError("arguments in the following positions have dimension greater than 2")
    out = np.zeros((sum(np.shape(b)[0] for b in blocks), sum(np.shape(b)[1] for b in blocks)),
                   dtype=np.result_type(*blocks))
    row = col = 0
    for b in blocks:
        rows, cols = np.shape(b)
        out[row:row + rows, col:col + cols] = b
        row, col = row + rows, col + cols
    return out


SPECIAL_MATRICES = {"toeplitz": toeplitz, "circulant": circulant, "hankel": hankel, "block_diag": block_diag}


def float64(x=0.0):
    """`np.float64(x)`: the number (or array) as float64."""
    return np.asarray(x, dtype=np.float64)[()]


def float32(x=0.0):
    """`np.float32(x)`: the number (or array) as float32."""
    return np.asarray(x, dtype=np.float32)[()]


def fromiter(iterable, dtype, count=-1):
    """`np.fromiter(iterable, dtype)`: its items in a 1-d array (the first `count` if given)."""
    items = [item for item in iterable]
    return np.array(items if count < 0 else items[:count], dtype=dtype)


def sorted_by(iterable, key, reverse=False):
    """`sorted(iterable, key=f, reverse=...)` with `f` a function of the user's (a lambda): the items in the
    order of their keys, which decide the order only (no derivative flows through them)."""
    items = list(iterable)
    keys = [stop_gradient(key(item)) for item in items]
    order = sorted(range(len(items)), key=keys.__getitem__, reverse=reverse)
    return [items[i] for i in order]


def max_by(iterable, key):
    """`max(iterable, key=f)`: the first item whose key is largest."""
    return sorted_by(iterable, key, reverse=True)[0]


def min_by(iterable, key):
    """`min(iterable, key=f)`: the first item whose key is smallest."""
    return sorted_by(iterable, key)[0]


BY_KEY = {sorted: sorted_by, max: max_by, min: min_by}


def sum_where(a, axis=None, dtype=None, out=None, keepdims=False, initial=0, where=True):
    """`np.sum(a, where=w)`: `initial` plus the entries of `a` where `w` (broadcast against it) holds."""
    return np.sum(np.where(where, a, 0), axis=axis, dtype=dtype, keepdims=keepdims) + initial


def prod_where(a, axis=None, dtype=None, out=None, keepdims=False, initial=1, where=True):
    """`np.prod(a, where=w)`: `initial` times the entries of `a` where `w` holds."""
    return np.prod(np.where(where, a, 1), axis=axis, dtype=dtype, keepdims=keepdims) * initial


def mean_where(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """`np.mean(a, where=w)`: the mean of the entries of `a` where `w` holds (nan where none does)."""
    chosen = np.broadcast_to(where, np.shape(a))
    return np.sum(np.where(chosen, a, 0), axis=axis, dtype=dtype, keepdims=keepdims) / \
        np.sum(chosen, axis=axis, keepdims=keepdims)


def max_where(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """`np.max(a, where=w, initial=i)`: the largest of `i` and the entries of `a` where `w` holds."""
    top = np.max(np.where(where, a, -np.inf if initial is None else initial), axis=axis, keepdims=keepdims)
    return top if initial is None else np.maximum(top, initial)


def min_where(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """`np.min(a, where=w, initial=i)`: the smallest of `i` and the entries of `a` where `w` holds."""
    low = np.min(np.where(where, a, np.inf if initial is None else initial), axis=axis, keepdims=keepdims)
    return low if initial is None else np.minimum(low, initial)


def var_where(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
              correction=None):
    """`np.var(a, where=w, ddof=d)`: the variance of the entries of `a` where `w` holds."""
    chosen = np.broadcast_to(where, np.shape(a))
    count = np.sum(chosen, axis=axis, keepdims=True)
    centre = np.sum(np.where(chosen, a, 0), axis=axis, dtype=dtype, keepdims=True) / count
    deviation = np.where(chosen, np.abs(a - centre) ** 2, 0)
    kept = np.maximum(np.sum(chosen, axis=axis, keepdims=keepdims) - ddof, 0)  # (fewer than ddof chosen: nan, as
    return np.sum(deviation, axis=axis, keepdims=keepdims) / kept                # NumPy's, not a finite number)


def std_where(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
              correction=None):
    """`np.std(a, where=w, ddof=d)`: the standard deviation of the entries of `a` where `w` holds."""
    return np.sqrt(var_where(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where))


WHERE_REDUCTIONS = {np.sum: sum_where, np.prod: prod_where, np.mean: mean_where, np.max: max_where,
                    np.amax: max_where, np.min: min_where, np.amin: min_where, np.var: var_where, np.std: std_where}
_WITH_INITIAL = (np.sum, np.prod, np.max, np.amax, np.min, np.amin)


def stands_for(obj, positional: int, keywords) -> object:
    """The function here that a call of `obj` with `positional` arguments by position and `keywords` (their
    names) stands for, or None (then the call is NumPy's own: np.meshgrid of three arrays)."""
    if obj is np.meshgrid and (positional != 2 or set(keywords) - {"indexing"}):
        return None
    if obj in WHERE_REDUCTIONS:  # with where= or initial= (and no out=, mean=, correction=): of the entries
        chosen = "where" in keywords or "initial" in keywords and obj in _WITH_INITIAL  # chosen; else NumPy's own
        return WHERE_REDUCTIONS[obj] if chosen and not {"out", "mean", "correction"} & set(keywords) \
            and positional <= 5 else None
    if obj is np.gradient and positional < 2:  # no spacings: np.gradient's own rule
        return None
    if obj is complex and (positional == 0 or set(keywords) - {"real", "imag"}):
        return None
    if obj is np.diff and positional < 4 and not {"prepend", "append"} & set(keywords):
        return None
    if obj is np.take and positional < 4 and "mode" not in keywords:
        return None
    if obj is np.cov and (positional > 5 or set(keywords) - {"y", "rowvar", "bias", "ddof"}):
        return None  # with weights or dtype: refused, as NumPy's own
    if obj in (np.nanvar, np.nanstd) and (positional > 2 or set(keywords) - {"axis", "ddof", "keepdims"}):
        return None  # with dtype or out: refused, as NumPy's own
    if obj is np.polyfit and (positional > 4 or set(keywords) - {"rcond"}):
        return None  # with weights, full or cov: refused
    if obj is _windows and (positional > 3 or set(keywords) - {"window_shape", "axis"}):
        return None
    if inspect.isfunction(obj) and obj.__name__ == "lfilter" and str(obj.__module__).startswith("scipy.signal"):
        # (a function's own names: an object of the user's may answer any name through its __getattr__)
        return lfilter if positional <= 3 and not set(keywords) - {"axis"} else None  # (not with zi)
    polynomial = polynomial_function(obj)
    if polynomial is not None:
        return polynomial
    if inspect.isfunction(obj) and obj.__name__ == "logsumexp" and str(obj.__module__).startswith("scipy.special"):
        signed = positional == 5 or "return_sign" in keywords  # (else SciPy's own, with its rules)
        return logsumexp if signed and positional <= 5 else None
    if inspect.isfunction(obj) and str(obj.__module__).startswith("scipy.linalg"):
        if obj.__name__ in SPECIAL_MATRICES and not keywords:
            return SPECIAL_MATRICES[obj.__name__]
        if obj.__name__ == "solve_continuous_lyapunov":  # (also scipy.linalg.solve_lyapunov)
            return solve_continuous_lyapunov if positional <= 2 and not keywords else None
        if obj.__name__ == "solve_discrete_lyapunov":
            return solve_discrete_lyapunov if positional <= 3 and not set(keywords) - {"method"} else None
    return STANDING_FOR.get(obj)


STANDING_FOR = {functools.reduce: reduce, itertools.chain: chain, itertools.product: product,
                itertools.combinations: combinations, itertools.permutations: permutations,
                itertools.combinations_with_replacement: combinations_with_replacement,
                np.apply_along_axis: apply_along_axis,
                np.convolve: convolve, np.correlate: correlate, np.polyval: polyval, np.meshgrid: meshgrid,
                np.fill_diagonal: fill_diagonal, np.copyto: copyto, np.put: put, np.putmask: putmask,
                np.place: place, np.put_along_axis: put_along_axis, np.gradient: gradient, np.cov: cov,
                np.corrcoef: corrcoef, np.broadcast_arrays: broadcast_arrays, np.compress: compress,
                np.extract: extract, np.diff: diff, np.take: take, itertools.accumulate: accumulate,
                **({itertools.pairwise: pairwise} if hasattr(itertools, "pairwise") else {}),  # (Python 3.10)
                filter: filtered, math.fsum: fsum, math.prod: product_of, divmod: divmod_of, complex: complex_of,
                _windows: sliding_window_view, _strided: as_strided, np.nanvar: nanvar, np.nanstd: nanstd, np.diagflat: diagflat,
                np.ediff1d: ediff1d, np.resize: resize, np.piecewise: piecewise, np.linalg.cond: condition_number,
                np.polyfit: polyfit, np.float64: float64, np.float32: float32, np.fromiter: fromiter}

"""Functions that take functions, or build iterators, as the Python code they stand for; and NumPy
functions without rules of their own, as the NumPy calls with rules they stand for (np.convolve,
np.correlate, np.polyval, np.meshgrid of two arrays).

`functools.reduce(f, xs)`, `itertools.chain(a, b)`, `np.apply_along_axis(f, axis, a)`, the function
`np.vectorize(f)` makes and `sorted` / `max` / `min` with a key function of the user's run code of the
user's (or NumPy's) on values tapegen follows. Lowering inlines the function here for such a call, as it
inlines the user's own (a function of tapegen's rules package counts as the user's), so the function
passed is called where tapegen sees it and its derivative is that of the loop written out. An iterator
becomes the list it yields (iterated once, as code handing it to a `for` or `list` does).
"""
from __future__ import annotations

import functools
import itertools

import numpy as np

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


def stands_for(obj, positional: int, keywords) -> object:
    """The function here that a call of `obj` with `positional` arguments by position and `keywords` (their
    names) stands for, or None (then the call is NumPy's own: np.meshgrid of three arrays)."""
    if obj is np.meshgrid and (positional != 2 or set(keywords) - {"indexing"}):
        return None
    return STANDING_FOR.get(obj)


STANDING_FOR = {functools.reduce: reduce, itertools.chain: chain, np.apply_along_axis: apply_along_axis,
                np.convolve: convolve, np.correlate: correlate, np.polyval: polyval, np.meshgrid: meshgrid}

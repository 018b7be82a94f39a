"""Helpers that generated gradient code calls at run time.

Everything here is plain NumPy, works on Python scalars, NumPy scalars and
arrays, and takes the fast path first (no work when shapes already match).
Generated code refers to these by their bare names; `__all__` is that set.
"""
from __future__ import annotations

import numpy as np

from .errors import NanError, NonScalarOutputError, NotRealOutputError, WrtError

__all__ = [
    "shape", "unbroadcast", "unreduce", "seed", "conform", "Cotree", "unindex",
    "zeros_like_tree", "add_cotangents", "entries", "balanced_eq", "safe_div", "stop_gradient", "meta", "as_cotree",
]

_SCALARS = (float, int, complex, bool)


def shape(x):
    """`np.shape(x)`, fast for arrays, NumPy scalars and Python numbers (np.shape(1.0) builds an array);
    None for a ragged list or tuple, which NumPy cannot read as one array."""
    s = getattr(x, "shape", None)
    if s is not None:
        return s
    if type(x) in _SCALARS:
        return ()
    try:
        return np.shape(x)
    except ValueError:  # a ragged list or tuple (arrays of several shapes) has no array shape
        return None


def unbroadcast(g, to_shape):
    """Sum `g` over the axes NumPy broadcasting added or stretched, to get `to_shape`."""
    if isinstance(g, (dict, list, tuple)):  # a container's cotangent (a Cotree, or a tuple's cotangent as a list
        return g                            # in gradient code differentiated again): `+` adds item by item
    g_shape = shape(g)
    if g_shape == to_shape:
        return g
    extra = len(g_shape) - len(to_shape)
    axes = tuple(range(extra)) + tuple(
        i + extra for i, n in enumerate(to_shape) if n == 1 and g_shape[i + extra] != 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    return np.reshape(g, to_shape) if extra or not isinstance(g, np.ndarray) else g


def unreduce(g, a_shape, axis, keepdims):
    """Broadcast the cotangent of a reduction back to the shape of its input."""
    if axis is not None and not keepdims:
        g = np.expand_dims(g, _positive_axes(axis, len(a_shape)))
    return np.broadcast_to(g, a_shape)


def _positive_axes(axis, ndim):
    if ndim == 0:  # a NumPy scalar reduced along axis 0 (its methods allow it): no axis to put back
        return ()
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(a % ndim for a in axes))


def balanced_eq(a, y, axis, keepdims):
    """1/k where `a` equals the max/min `y`, for k ties: the gradient of max and min."""
    if axis is not None and not keepdims:
        y = np.expand_dims(y, _positive_axes(axis, np.ndim(a)))
    mask = np.equal(a, y)
    return mask / np.sum(mask, axis=axis, keepdims=True)


def safe_div(g, d):
    """g / d, with 0 where d == 0 (the subgradient convention at kinks such as sqrt(0))."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.divide(g, d)
    if is_duck(q):  # lazy: testing np.any(d == 0) would compute it, so mask unconditionally
        return np.where(np.equal(d, 0), 0.0, q)
    return np.where(np.equal(d, 0), 0.0, q) if np.any(np.equal(d, 0)) else q


def is_duck(x):
    """Whether `x` is an array that is not NumPy's but speaks its protocols (dask, CuPy, ...).

    Generated code runs on these unchanged (NumPy's functions dispatch through
    `__array_function__`), so helpers must not branch on their values or call
    `np.asarray` on them: either would compute a lazy array, or copy a GPU one.
    """
    return hasattr(x, "__array_function__") and not isinstance(x, (np.ndarray, np.generic))


def seed(out):
    """The cotangent 1 of a scalar output, in the output's dtype.

    An output with one element (shape (1,) or (1, 1)) counts as a scalar, as in autograd.
    """
    if out is None:
        raise NonScalarOutputError("grad needs a scalar output, but the function returned None (a path that ends "
                                   "without `return <value>` returns None)",
                                   hint="return a number on every path the code takes")
    out_shape = shape(out)
    if out_shape != () and (out_shape is None or int(np.prod(out_shape)) != 1):
        raise NonScalarOutputError(
            f"grad needs a scalar output, but the function returned shape {np.shape(out)}",
            hint="reduce it (np.sum, np.mean) or use tapegen.vjp with a cotangent of that shape")
    dtype = getattr(out, "dtype", None)
    if isinstance(out, (complex, bool)) or (dtype is not None and dtype.kind in "cb"):
        raise _not_real(out)
    if dtype is not None and dtype.kind == "f":
        return dtype.type(1) if out_shape == () else np.ones(out_shape, dtype)
    return 1.0 if out_shape == () else np.ones(out_shape)


def _not_real(out):
    if isinstance(out, bool) or getattr(out, "dtype", None) == np.bool_:
        return NotRealOutputError(f"grad needs a real number, but the function returned a bool ({out!r}): "
                                  f"it has no gradient", hint="differentiate the numbers it compares instead")
    return NotRealOutputError(f"grad needs a real output, but the function returned a complex number ({out!r})",
                              hint="differentiate np.real(...), np.abs(...) ** 2 or another real function of "
                                   "it, or use tapegen.vjp with a complex cotangent")


def conform(g, x):
    """Make a gradient look like its argument: same shape, dtype, and container structure.

    A duck-array gradient (dask, ...) stays one, even for a NumPy or float argument:
    converting it here would compute it apart from the value it is computed with.
    """
    if type(x) is float:
        g = np.real(g) if g is not None and np.iscomplexobj(g) else g
        return 0.0 if g is None else g.astype(np.float64) if is_duck(g) else float(g)
    if type(x) is complex:
        return 0j if g is None else g.astype(np.complex128) if is_duck(g) else complex(g)
    if isinstance(x, np.ndarray) or is_duck(x):
        if g is None:
            return np.zeros_like(x)
        if type(g) is np.ndarray and g.dtype == x.dtype and g.shape == x.shape and g.flags.writeable:
            return g
        if x.dtype.kind not in "fc":
            raise _integer_wrt(x)
        if x.dtype.kind == "f" and np.iscomplexobj(g):  # JAX's convention: a real input's part of it
            g = np.real(g)
        if is_duck(g):
            g = g if shape(g) == shape(x) else np.broadcast_to(g, shape(x))
            return g if g.dtype == x.dtype else g.astype(x.dtype)
        return np.array(np.broadcast_to(np.asarray(g, dtype=x.dtype), x.shape))  # a fresh, writeable array
    if isinstance(x, (dict, list, tuple)) or pytree_fields(x) is not None:
        return _conform_tree(g, x)
    if isinstance(x, (bool, int, np.integer, np.bool_)):
        raise _integer_wrt(x)
    if isinstance(x, np.generic):
        return x.dtype.type(0) if g is None else g.astype(x.dtype) if is_duck(g) else x.dtype.type(g)
    if isinstance(g, dict) or not (hasattr(x, "__array__") or isinstance(x, _SCALARS)):  # an unknown object
        raise _unknown_wrt(x)
    return g if g is not None else np.zeros_like(x)


def check_wrt(x):
    """Raise WrtError, before anything is transformed, for a `wrt` argument that is an object tapegen knows
    no fields of (an autograd RKHSFun with its own VSpace, a callable object): the error would otherwise
    come from where the function first uses it."""
    known = isinstance(x, (np.ndarray, dict, list, tuple, np.generic) + _SCALARS) or is_duck(x) \
        or hasattr(x, "__array__") or pytree_fields(x) is not None
    if not known:
        raise _unknown_wrt(x)


def _unknown_wrt(x):
    name = type(x).__name__
    return WrtError(f"cannot differentiate with respect to a {name}: tapegen does not know its fields (it "
                    f"differentiates with respect to arrays, numbers, and containers and registered classes of them)",
                    hint=f"register the class: tapegen.register_pytree({name}), or make it a dataclass or "
                         f"namedtuple; an object with a vector space of its own (autograd's VSpace.register, as "
                         f"examples/rkhs.py's RKHSFun) has no tapegen equivalent")


def _integer_wrt(x):
    kind = type(x).__name__ if not isinstance(x, np.ndarray) else f"an array of {x.dtype}"
    return WrtError(f"cannot differentiate with respect to an integer or boolean argument ({kind})",
                    hint="pass floats (e.g. np.asarray(x, dtype=float)), or leave this argument out of wrt")


# Classes whose instances are pytrees: their fields are differentiated like a dict's items.
_PYTREES: dict = {}  # class -> (fields: obj -> {name: value}, build: (obj, {name: value}) -> obj)


def register_pytree(cls, fields=None, build=None):
    """Differentiate instances of `cls` field by field, as dicts of their fields (like JAX's pytree nodes).

    `fields(obj)` gives `{name: value}` (default: `vars(obj)`); `build(obj, values)` makes an object like
    `obj` holding `values` (default: a shallow copy with those attributes set). Gradients with respect
    to such an argument are objects of the same class holding the gradients. Namedtuples and
    dataclasses need no registering.
    """
    _PYTREES[cls] = (fields or vars, build or _rebuilt)
    return cls


def _rebuilt(obj, values):
    """A shallow copy of `obj` with `values` as attributes (set past a frozen dataclass's guard)."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    for name, value in values.items():
        object.__setattr__(new, name, value)
    return new


def pytree_fields(x):
    """`{field: value}` if `x` is a namedtuple, a dataclass or a registered pytree, else None."""
    cls = type(x)
    if isinstance(x, tuple) and hasattr(cls, "_fields"):
        return dict(zip(cls._fields, x))
    fields = getattr(cls, "__dataclass_fields__", None)
    if fields is not None and not isinstance(x, type):
        return {name: getattr(x, name) for name in fields if hasattr(x, name)}
    for registered, (get_fields, _) in _PYTREES.items():
        if isinstance(x, registered):
            return dict(get_fields(x))
    return None


def _pytree_like(x, values):
    if isinstance(x, tuple):
        return type(x)(**values)
    if hasattr(type(x), "__dataclass_fields__"):
        return _rebuilt(x, values)
    for registered, (_, build) in _PYTREES.items():
        if isinstance(x, registered):
            return build(x, values)
    raise TypeError(f"not a pytree: {type(x).__name__}")


def _conform_fields(g, x, fields):
    """The gradient of a namedtuple, dataclass or registered object: one of its class, field by field.

    Fields that are not floats (ints, strings, None, ...) get None: no gradient.
    """
    values = {}
    for k, (name, value) in enumerate(fields.items()):
        part = None if g is None else g.get(name) if isinstance(g, dict) else getattr(g, name, None)
        if isinstance(g, dict) and isinstance(x, tuple):  # a namedtuple's field read by position too
            part = add_cotangents(part, g.get(k))
        floating = isinstance(value, (float, complex, dict, list, tuple)) or pytree_fields(value) is not None \
            or (hasattr(value, "dtype") and np.dtype(value.dtype).kind in "fc")
        values[name] = conform(part, value) if floating else None
    return _pytree_like(x, values)


def _conform_item(g, x):
    """`conform` of an item of a dict, list or tuple argument: strings and None get None, no gradient, as a
    params dict's {"W": W, "name": "relu"} holds them; an int or an object tapegen does not know is still
    an error, as in JAX and autograd, not a silent zero."""
    return None if x is None or isinstance(x, (str, bytes)) else conform(g, x)


def _conform_tree(g, x):
    fields = pytree_fields(x)
    if fields is not None:
        return _conform_fields(g, x, fields)
    if isinstance(x, dict):
        get = (lambda k: None) if g is None else g.get
        return type(x)((k, _conform_item(get(k), v)) for k, v in x.items())
    if isinstance(g, np.ndarray):  # a list of arrays used as one array: split the gradient by item
        g = list(g)
    items = [None] * len(x) if g is None else [_item(g, i) for i in range(len(x))]
    out = [_conform_item(gi, xi) for gi, xi in zip(items, x)]
    return tuple(out) if isinstance(x, tuple) else out


def _item(g, i):
    if isinstance(g, dict):
        return g.get(i)
    return g[i]


def as_cotree(parts):
    """A list of per-item cotangents (from a rule for a list argument) as a Cotree, so they add by item.

    Anything else (the cotangent of an array passed where a list may go) is returned as it is.
    """
    return Cotree(enumerate(parts)) if isinstance(parts, (list, tuple)) and not isinstance(parts, Cotree) else parts


class Cotree(dict):
    """The cotangent of a container (dict, list or tuple): sparse, keyed by index.

    Fan-out into one container adds up key by key, so generated code can
    accumulate `g_params = g_params + g_params_1` exactly as it does arrays.
    """

    __array_ufunc__ = None  # an array + a Cotree is the Cotree's sum (NumPy defers to __radd__)

    def __add__(self, other):
        if other is None:
            return self
        if isinstance(other, (list, tuple)):
            other = dict(enumerate(other))
        elif isinstance(other, np.ndarray) and other.ndim >= 1:  # the same list used as one array (passed to
            return np.stack([other[k] if self.get(k) is None else add_cotangents(self[k], other[k])  # logsumexp):
                             for k in range(other.shape[0])])  # its cotangent as an array, the items' its rows
        elif not isinstance(other, dict):
            raise TypeError(f"cannot add a container's cotangent and {type(other).__name__}")
        result = Cotree(self)
        for key, value in other.items():
            result[key] = value if key not in result else add_cotangents(result[key], value)
        return result

    __radd__ = __add__


def entries(g):
    """(position or key, cotangent) pairs of a container's cotangent: a Cotree or dict, a list or tuple,
    an array (its rows: a list NumPy used as one array), or None (no entries)."""
    if g is None:
        return ()
    return g.items() if isinstance(g, dict) else enumerate(g)


def add_cotangents(a, b):
    """a + b for cotangents: None is zero, and lists/tuples (a container's cotangent) add item by item."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, (list, tuple)) and not isinstance(a, Cotree):
        a = Cotree(enumerate(a))
    if isinstance(b, (list, tuple)) and not isinstance(b, Cotree):
        b = Cotree(enumerate(b))
    return a + b


def unindex(g, a_meta, index):
    """The cotangent of `a[index]`: `g` scattered into zeros, duplicates adding up."""
    if isinstance(a_meta, tuple) and len(a_meta) == 2 and isinstance(a_meta[0], type):
        return _container_cotangent(g, a_meta, index)
    a_shape, dtype = a_meta
    dtype = np.result_type(dtype, g) if dtype.kind in "fc" else np.result_type(g)
    if is_duck(g) and _is_basic(index):
        return _unindex_lazy(g, a_shape, dtype, index)
    result = np.zeros(a_shape, dtype=dtype)
    if _is_basic(index):
        result[index] = g
    else:  # NumPy's protocols have no lazy scatter-add (np.add.at): a duck-array g is computed here
        np.add.at(result, index, np.asarray(g) if is_duck(g) else g)
    return result


def _unindex_lazy(g, a_shape, dtype, index):
    """`unindex` of a duck-array `g` by item assignment into lazy zeros (dask cannot assign through None)."""
    result = np.zeros_like(g, shape=a_shape, dtype=dtype)
    items = index if isinstance(index, tuple) else (index,)
    if any(i is None for i in items):
        index = tuple(i for i in items if i is not None)
        g = np.reshape(g, np.broadcast_to(np.empty((), dtype), a_shape)[index].shape)
    result[index] = g
    return result


def _container_cotangent(g, a_meta, index):
    """Cotangent of `a[index]` for a dict, list or tuple `a`: sparse, keyed by non-negative position."""
    kind, length = a_meta
    if kind is dict:
        return Cotree({index: g})
    if isinstance(index, slice):
        positions = range(length)[index]
        parts = g if isinstance(g, dict) else dict(enumerate(g))
        return Cotree({positions[k]: v for k, v in parts.items() if v is not None})
    return Cotree({index % length if length else index: g})


def _is_basic(index):
    items = index if isinstance(index, tuple) else (index,)
    return all(isinstance(i, (int, np.integer, slice)) or i is None or i is Ellipsis for i in items)


def zeros_like_tree(x):
    fields = pytree_fields(x)
    if fields is not None:
        return _pytree_like(x, {name: zeros_like_tree(value) for name, value in fields.items()})
    if isinstance(x, dict):
        return {k: zeros_like_tree(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(zeros_like_tree(v) for v in x)
    return np.zeros_like(x)


def stop_gradient(x):
    """Return `x` unchanged; tapegen passes no gradient through it (the seeds' `detach`)."""
    return x


def meta(a):
    """What `unindex` needs to know about an indexed value: its type if a container, else shape and dtype."""
    if isinstance(a, dict):
        return dict, len(a)
    if isinstance(a, (list, tuple, range)):  # a range: a loop's, replayed from the tape in gradient code
        return type(a), len(a)
    if isinstance(a, np.ndarray):
        return a.shape, a.dtype
    return np.shape(a), np.result_type(a)


def nan_check(value, spans, index, phase):
    """Raise NanError if float `value` has a NaN or Inf; `spans[index]` is where it came from.

    Called after every equation by the debug_nans variant of generated code (not in `__all__`:
    only that variant's namespace has it).
    """
    if isinstance(value, (float, np.floating, np.ndarray)) and np.asarray(value).dtype.kind in "fc":
        if not np.all(np.isfinite(value)):
            kind = "NaN" if np.any(np.isnan(value)) else "Inf"
            where = "computed here" if phase == "forward" else "in the gradient of this line"
            raise NanError(f"first {kind} in the {phase} pass: {where}", spans[index],
                           "check the inputs and the domain of this operation (log of 0, 0/0, sqrt of a "
                           "negative, overflow in exp)")

"""One check of a function in every mode: grad, vjp, jvp and grad-of-grad, against central differences.

`check_modes(f, *args)` differentiates `f` with respect to each float argument (an array, a
Python float, or a list / tuple / dict of them) and compares, in float64, along a random
direction u of that argument:

- forward mode: `tg.jvp`'s tangent with the central difference J u;
- reverse mode: <`tg.grad`, u> (scalar outputs) and <pullback(v), u> from `tg.vjp` with <v, J u>;
- reverse over reverse (scalar outputs, array or float arguments): the gradient of
  x -> <grad f(x), w>, itself differentiated by tapegen, with central differences of <grad f, w>.
"""
import numpy as np

import tapegen as tg

EPS = 1e-6


def leaves(tree):
    if isinstance(tree, dict):
        return [leaf for key in tree for leaf in leaves(tree[key])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in leaves(item)]
    return [tree]


def _rebuild(tree, values):
    if isinstance(tree, dict):
        return {key: _rebuild(tree[key], values) for key in tree}
    if isinstance(tree, (list, tuple)):
        items = [_rebuild(item, values) for item in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)  # a namedtuple too
    return values.pop(0)


def _map(fn, tree):
    return _rebuild(tree, [fn(x) for x in leaves(tree)])


def _differentiable(arg):
    return bool(leaves(arg)) and all(isinstance(x, float) or (isinstance(x, np.ndarray) and x.dtype == np.float64)
                                     for x in leaves(arg))


def _step(arg, direction, eps):
    """`arg + eps * direction`, leaf by leaf; a Python float stays a float."""
    return _rebuild(arg, [x + eps * d if isinstance(x, np.ndarray) else float(x + eps * d)
                          for x, d in zip(leaves(arg), leaves(direction))])


def _random_like(arg, rng):
    return _map(lambda x: rng.standard_normal(np.shape(x)) if isinstance(x, np.ndarray)
                else float(rng.standard_normal()), arg)


def _dot(a, b):
    return sum(float(np.sum(np.asarray(x, dtype=float) * np.asarray(y, dtype=float)))
               for x, y in zip(leaves(a), leaves(b)))


def _fresh(args):
    """Copies of the arguments: a function that writes into its arguments sees the same values each call."""
    return [_map(lambda x: x.copy() if isinstance(x, np.ndarray) else x, a) for a in args]


def _directional(f, args, position, direction, eps=EPS):
    plus, minus = _fresh(args), _fresh(args)
    plus[position] = _step(args[position], direction, eps)
    minus[position] = _step(args[position], direction, -eps)
    high, low = f(*plus), f(*minus)
    if _structured(high):  # a list, tuple or dict of outputs: a difference per leaf
        return _rebuild(high, [(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)) / (2 * eps)
                               for a, b in zip(leaves(high), leaves(low))])
    return (np.asarray(high, dtype=float) - np.asarray(low, dtype=float)) / (2 * eps)


def _structured(value):
    return isinstance(value, (list, tuple, dict)) and not all(isinstance(x, (int, float)) for x in leaves(value))


def _close(actual, expected, what, rtol, atol):
    if _structured(expected):  # same structure (a namedtuple may come back as a tuple), then leaf by leaf
        assert isinstance(actual, dict) == isinstance(expected, dict), f"{what}: {actual!r} != {expected!r}"
        assert len(actual) == len(expected), f"{what}: {len(actual)} items, expected {len(expected)}"
        pairs = [(actual[k], expected[k]) for k in expected] if isinstance(expected, dict) else zip(actual, expected)
        for k, (a, e) in enumerate(pairs):
            _close(a, e, f"{what} [{k}]", rtol, atol)
        return
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    assert np.allclose(actual, expected, rtol=rtol, atol=atol), f"{what}: {actual} != {expected}"


def check_modes(f, *args, rtol=1e-5, atol=1e-6, order2=True, seed=0, positions=None):
    """Check `f`'s derivatives at `args` in every mode; returns the argument positions checked."""
    rng = np.random.default_rng(seed)
    value = f(*_fresh(args))
    before = _fresh(args)
    scalar = not _structured(value) and np.ndim(value) == 0
    if positions is None:
        positions = [i for i, a in enumerate(args) if _differentiable(a)]
    assert positions, "nothing to differentiate"
    for i in positions:
        u = _random_like(args[i], rng)
        expected = _directional(f, args, i, u)  # J u
        tangents = tuple(u if j == i else None for j in range(len(args)))
        out, tangent = tg.jvp(f, tuple(args), tangents)
        _close(out, value, f"jvp value wrt {i}", rtol, atol)
        _close(tangent, expected, f"jvp wrt {i}", rtol, atol)
        if scalar:
            _close(_dot(tg.grad(f, wrt=i)(*args), u), expected, f"grad wrt {i}", rtol, atol)
        v = _map(lambda x: rng.standard_normal(np.shape(x)), value) if _structured(value) else \
            rng.standard_normal(np.shape(value)) if np.ndim(value) else 1.0
        out, pullback = tg.vjp(f, *args, wrt=i)
        _close(out, value, "vjp value", rtol, atol)
        _close(_dot(pullback(v), u), _dot(expected, v), f"vjp wrt {i}", rtol, atol)
        if scalar and order2 and not isinstance(args[i], (list, tuple, dict)):
            w = _random_like(args[i], rng)
            projected = _projection(tg.grad(f, wrt=i), w, len(args))
            outer = tg.grad(projected, wrt=i)(*args)
            hu = _directional(projected, args, i, u, eps=1e-5)
            _close(_dot(outer, u), hu, f"grad of grad wrt {i}", max(rtol, 1e-4), max(atol, 1e-5))
    for arg, kept in zip(args, before):
        for x, y in zip(leaves(arg), leaves(kept)):
            assert np.array_equal(x, y), "tapegen's generated code changed an argument"
    return positions


def _projection(inner, w, n):
    """x -> np.sum(inner(x) * w) with n positional parameters, written as source tapegen can read."""
    params = ", ".join(f"a{k}" for k in range(n))
    return _compile(f"def projected({params}):\n    return np.sum(inner({params}) * w)\n", "projected",
                    {"inner": inner, "w": w, "np": np})


_COUNT = [0]


def _compile(source, name, namespace):
    """A function defined by `source`, with a real file behind it (tapegen reads its source)."""
    import linecache
    _COUNT[0] += 1
    filename = f"<tests.modes {name} {_COUNT[0]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(namespace)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]

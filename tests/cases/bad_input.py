"""The bad-input corpus of issue 10: each either differentiates correctly or is refused clearly."""
import numpy as np


def uses_with(x):
    with np.errstate(all="ignore"):
        y = np.log(x)
    return np.sum(y)


def writes_nonlocal():
    total = 0.0

    def f(x):
        nonlocal total
        total = np.sum(x)
        return total
    return f


async def coroutine(x):
    return np.sum(x)


def generator(x):
    yield np.sum(x)


def star_args(x, *rest):
    return np.sum(x)


def star_call(x):
    parts = (x, x)
    return np.sum(np.add(*parts))


def double(v):
    return v * 2.0


def unknown_callable(x):
    return np.sum(np.frompyfunc(double, 1, 1)(x))


def mutates_input(x):
    x *= 2.0
    return np.sum(x)


def names_like_generated(x):
    g_x = x * 2.0
    t1 = g_x + 1.0
    np_ = t1 * t1
    tape = np_ - 1.0
    residuals = tape * 0.5
    seed = residuals + g_x
    return np.sum(seed * t1)


def local_named_np(x):
    np = 3.0  # noqa: F811  (shadows the module inside this function)
    return x * np


class _Halver:
    def __init__(self):
        self.scale = 0.5

    def apply(self, x, n):
        if n == 0:
            return x
        return np.sin(self.apply(x * self.scale, n - 1))


_HALVER = _Halver()


def recursive_method(x, n):
    """A method calling itself on its object as deep as an argument says: not followed (the object)."""
    return np.sum(_HALVER.apply(x, n))


def defined_by_exec():
    namespace = {}
    exec("def made(x):\n    return x * 2.0\n", namespace)
    return namespace["made"]


class _Box:
    def __init__(self):
        self.scale = np.ones(3)


_BOX = _Box()


def _deep(x, n):
    if n <= 0:
        return x * _BOX.scale
    return _deep(np.sin(x), n - 1) + x


def recursion_reading_what_the_function_set(w, x, n):
    """`_deep` calls itself as deep as `n` says and reads `_BOX.scale`, which the function set to a value
    computed from `w`: run as written, its derivative in `w` would be lost (a silent zero once)."""
    _BOX.scale = w * 2.0
    return np.sum(_deep(x, n))

"""Functions tapegen must refuse, with the user's line and a caret. Line numbers are tested: append only."""
import numpy as np


def uses_cumprod_on_unknown(x):
    c = np.frompyfunc(abs, 1, 1)(x)
    return np.sum(c)


def uses_try(x):
    try:
        return np.sum(np.sin(x))
    finally:
        y = x
    return np.sum(y)


def non_ascii(x):
    π = np.frompyfunc(abs, 1, 1)(x)  # ünïcode before the call
    return np.sum(π)


def generator(x):
    yield np.sin(x)


def mutates_argument(x):
    x += 1.0
    return np.sum(x)


def calls_with_out(x):
    y = np.sum(x, out=None)
    return y


def starred(x, **rest):
    return np.sum(x)


def defines_a_class(x):
    class Local:
        pass
    return np.sum(x)


def unknown_name(x):
    return np.sum(x * undefined_thing)  # noqa: F821


def fine_after_fresh_aug(x):
    y = x * 2.0
    y += 1.0
    return np.sum(y * x)

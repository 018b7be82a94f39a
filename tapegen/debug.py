"""Finding the first NaN or Inf: `tapegen.debug_nans`.

With it on, tapegen generates (and caches separately) a checked variant of
each gradient function: after every equation of the forward and backward pass
it calls `nan_check`, which raises `NanError` naming the user's source line of
the operation that produced the value (for a backward value, the forward line
whose rule produced it), like PyTorch's anomaly mode and JAX's `debug_nans`.
With it off, the ordinary code runs: it costs nothing.

This module is the switch; the checks are written by codegen/emit.py
(`check_spans`), `nan_check` is in runtime.py and `NanError` in errors.py.
"""
from __future__ import annotations

import threading


class _State(threading.local):
    nans = False


STATE = _State()


class debug_nans:  # noqa: N801 (a function-like switch that is also a context manager)
    """Turn NaN/Inf checking in generated code on (or off); usable as a context manager.

    Example:
        >>> debug_nans(True)          # from now on, in this thread
        >>> with debug_nans():        # only inside the block
        ...     pass
    """

    def __init__(self, enabled: bool = True):
        self.previous = STATE.nans
        STATE.nans = bool(enabled)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        STATE.nans = self.previous
        return False

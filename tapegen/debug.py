"""Finding the first NaN or Inf: `tapegen.debug_nans`.

With it on, tapegen generates (and caches separately) a checked variant of
each gradient function: after every equation of the forward and backward pass
it calls `nan_check`, which raises `NanError` naming the user's source line of
the operation that produced the value (for a backward value, the forward line
whose rule produced it), like PyTorch's anomaly mode and JAX's `debug_nans`.
With it off, the ordinary code runs: it costs nothing.
"""
from __future__ import annotations

import threading

import numpy as np

from .errors import TapegenError
from .ir import Eqn, walk


class NanError(TapegenError, FloatingPointError):
    """A NaN or Inf appeared in a generated forward or backward pass (with debug_nans on)."""


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


def check_spans(adjoint) -> list:
    """The source spans of every checked equation, in a fixed order (indices used by nan_check)."""
    spans = {}
    for stmt in list(walk(adjoint.forward)) + list(walk(adjoint.backward)):
        if isinstance(stmt, Eqn) and stmt.span is not None:
            spans.setdefault(stmt.span, len(spans))
    return list(spans)


def nan_check(value, spans, index, phase):
    """Raise NanError if float `value` has a NaN or Inf; `spans[index]` is where it came from."""
    if isinstance(value, (float, np.floating, np.ndarray)) and np.asarray(value).dtype.kind in "fc":
        if not np.all(np.isfinite(value)):
            kind = "NaN" if np.any(np.isnan(value)) else "Inf"
            where = "computed here" if phase == "forward" else "in the gradient of this line"
            raise NanError(f"first {kind} in the {phase} pass: {where}", spans[index],
                           "check the inputs and the domain of this operation (log of 0, 0/0, sqrt of a "
                           "negative, overflow in exp)")

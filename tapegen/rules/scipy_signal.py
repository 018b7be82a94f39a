"""scipy.signal.convolve, correlate and fftconvolve, in every mode and any number of dimensions.

Every mode is a window of the full convolution y = a * v: `full` all of it,
`same` a's size at its center, `valid` where the smaller input fits inside the
larger one. The cotangent of the full output in a is the cotangent convolved
with v reversed (all axes), in `valid` mode, and in v likewise with a; a
window's cotangent is its cotangent padded with zeros to the full size first.
correlate(a, v) is convolve(a, conj(v) reversed). The rules call convolve,
np.flip and np.pad, which have rules themselves: gradient code differentiates
again. Complex inputs follow docs/faq.md (plain transposes).
"""
import numpy as np
import scipy
import scipy.signal

from ..errors import TapegenError
from .formulas import Formulas
from .table import RuleTable

table = RuleTable("scipy.signal")
table.op(scipy.signal.convolve, "in1, in2, mode='full', method='auto'", spelling="scipy.signal.convolve",
         inert=("mode", "method"))
table.op(scipy.signal.correlate, "in1, in2, mode='full', method='auto'", spelling="scipy.signal.correlate",
         inert=("mode", "method"))
table.op(scipy.signal.fftconvolve, "in1, in2, mode='full', axes=None", spelling="scipy.signal.fftconvolve",
         inert=("mode", "axes"))


def window_padding(in1_shape, in2_shape, mode, axes=None):
    """Per axis (before, after): the zeros around the `mode` output inside the full convolution."""
    if axes is not None:
        raise TapegenError("tapegen differentiates scipy.signal.fftconvolve over all axes only",
                           hint="leave axes=None, or use scipy.signal.convolve on arrays of matching shape")
    if mode not in ("full", "same", "valid"):
        raise TapegenError(f"scipy.signal mode {mode!r} is not one of 'full', 'same', 'valid'")
    pads = []
    for n1, n2 in zip(in1_shape, in2_shape):
        full = n1 + n2 - 1
        size = {"full": full, "same": n1, "valid": abs(n1 - n2) + 1}[mode]
        start = {"full": 0, "same": (full - n1) // 2, "valid": min(n1, n2) - 1}[mode]
        pads.append((start, full - start - size))
    return tuple(pads)


table.nondiff(window_padding, "in1_shape, in2_shape, mode, axes=None", spelling="window_padding")
window_padding.pure = True


def full_cotangent(g, in1_shape, in2_shape, mode, axes=None):
    """The cotangent of the full convolution, from that of its `mode` window (zeros outside it)."""
    return np.pad(g, window_padding(in1_shape, in2_shape, mode, axes))


def reversed_conj(x):
    """x reversed along every axis and conjugated: correlate(a, v) is convolve(a, reversed_conj(v))."""
    return np.conj(np.flip(x))


# --- convolve, fftconvolve: the same rules; correlate's JVPs have their shape too ----------------------

written = Formulas(table, globals(), "<tapegen scipy.signal rules>")
for _name, _option in (("convolve", "method"), ("fftconvolve", "axes"), ("correlate", "method")):
    _fn, _axes = getattr(scipy.signal, _name), ", axes" if _option == "axes" else ""
    for _wrt, _other in (("in1", "in2"), ("in2", "in1")):
        if _name != "correlate":  # the cotangent convolved with the other input reversed, in `valid` mode
            written.rule(_fn, _wrt, "vjp", f"{_name}_vjp_{_wrt}",
                         ["in1_shape", "in2_shape", _other, "mode"] + (["axes"] if _axes else []) + ["g"],
                         f"scipy.signal.{_name}(full_cotangent(g, in1_shape, in2_shape, mode{_axes}), "
                         f"np.flip({_other}), mode='valid')")
        _args = "in1_dot, in2" if _wrt == "in1" else "in1, in2_dot"
        written.rule(_fn, _wrt, "jvp", f"{_name}_jvp_{_wrt}", [*_args.split(", "), "mode", _option],
                     f"scipy.signal.{_name}({_args}, mode=mode, {_option}={_option})")


# --- correlate(a, v) = convolve(a, w), w = reversed_conj(v) ----------------------------------------------

@table.vjp(scipy.signal.correlate, "in1")
def correlate_vjp_in1(in1_shape, in2, in2_shape, mode, g):
    return scipy.signal.convolve(full_cotangent(g, in1_shape, in2_shape, mode), np.conj(in2), mode="valid")


@table.vjp(scipy.signal.correlate, "in2")
def correlate_vjp_in2(in1, in1_shape, in2_shape, mode, g):
    return reversed_conj(scipy.signal.convolve(full_cotangent(g, in1_shape, in2_shape, mode), np.flip(in1),
                                               mode="valid"))


written.load()


__all__ = ["table", "window_padding", "full_cotangent", "reversed_conj"]

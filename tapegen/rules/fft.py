"""Discrete Fourier transforms: `np.fft.fft`, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2,
irfft2, rfftn, irfftn, hfft, ihfft, and fftshift, ifftshift; with `n`/`s`, `axis`/`axes` and `norm`.

Every transform is linear, so each JVP rule is the transform of the tangent. The VJP rules follow
JAX's convention for complex numbers (a cotangent pairs with a tangent as `Re(sum(ct * t))`, so a
complex-linear map transposes to its plain transpose, without a conjugate):

- the DFT matrix is symmetric, so the VJP of `fft` is `fft` of the cotangent with the same `norm`
  (likewise ifft, fftn, ...); `n` or `s` crops or zero-pads the input first, which transposes to
  zero-padding or cropping the result back to the input's shape (`fft_fit`); a real input's
  cotangent is the real part (`real_like`), for every transform;
- `rfft` is the first half of `fft` of a real input: its VJP is the real part of `fft` of the
  cotangent zero-padded to the full length;
- `irfft` reads only the Hermitian half of its input and is linear over the reals only: its VJP is
  `w * conj(rfft(g))` with the dual normalisation, `w` 1 at the zero (and, for even lengths, the
  Nyquist) frequency and 2 elsewhere (each other frequency stands for itself and its mirror).
- `hfft(a)` is `irfft(conj(a))` and `ihfft(a)` is `conj(rfft(a))`, both with the dual `norm`: their
  VJPs are irfft's and rfft's with the conjugates moved through (conj transposes to conj).

Each rule is one expression of primitives that have rules themselves (`fft_fit` and `real_like` are
declared in `runtime_rules.py`), so gradient code differentiates again.
"""
import numpy as np

from .elementwise import real_like
from .table import RuleTable

table = RuleTable("fft")

COMPLEX = (np.fft.fft, np.fft.ifft)
COMPLEX_2D = (np.fft.fft2, np.fft.ifft2)
COMPLEX_ND = (np.fft.fftn, np.fft.ifftn)

for _fn in COMPLEX + (np.fft.rfft, np.fft.irfft, np.fft.hfft, np.fft.ihfft):
    table.op(_fn, "a, n=None, axis=-1, norm=None")
for _fn in COMPLEX_2D + (np.fft.rfft2, np.fft.irfft2):
    table.op(_fn, "a, s=None, axes=(-2, -1), norm=None")
for _fn in COMPLEX_ND + (np.fft.rfftn, np.fft.irfftn):
    table.op(_fn, "a, s=None, axes=None, norm=None")
for _fn in (np.fft.fftshift, np.fft.ifftshift):
    table.op(_fn, "x, axes=None")


# --- helpers (names in generated code) -----------------------------------------------------------

def fft_axes(ndim, s, axes):
    """The axes a transform works on, non-negative, as NumPy picks them: `axes` (an int for the 1-d
    transforms), else the last `len(s)`, else all."""
    if axes is not None:
        return tuple(a % ndim for a in ((axes,) if isinstance(axes, (int, np.integer)) else axes))
    if s is not None:
        return tuple(range(ndim - (1 if isinstance(s, (int, np.integer)) else len(s)), ndim))
    return tuple(range(ndim))


def fft_shape(a_shape, s, axes):
    """`a_shape` with the transformed axes resized to `s` (`n` for the 1-d transforms), as the input is
    cropped or zero-padded before the transform."""
    shape = list(a_shape)
    if s is not None:
        for axis, n in zip(fft_axes(len(a_shape), s, axes), (s,) if isinstance(s, (int, np.integer)) else s):
            shape[axis] = n
    return tuple(shape)


def fft_fit(x, shape):
    """`x` cropped or zero-padded at the end of each axis to `shape` (linear; its transpose fits back)."""
    if tuple(np.shape(x)) == tuple(shape):
        return x
    x = x[tuple(slice(0, min(n, m)) for n, m in zip(np.shape(x), shape))]
    pad = [(0, max(m - n, 0)) for n, m in zip(np.shape(x), shape)]
    return np.pad(x, pad) if any(after for _, after in pad) else x


def fft_dual(norm):
    """The normalisation whose forward transform scales as `norm`'s inverse does."""
    return {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def irfft_weights(a_shape, s, axes):
    """How many frequencies each entry of an inverse real transform's input stands for: 1 at 0 (and
    at the Nyquist frequency of an even length), 2 elsewhere; shaped to broadcast along the last
    transformed axis. float32, so it keeps the cotangent's precision."""
    axes = fft_axes(len(a_shape), s, axes)
    last = axes[-1]
    n = (s if isinstance(s, (int, np.integer)) else s[-1]) if s is not None else 2 * (a_shape[last] - 1)
    weights = np.full(n // 2 + 1, 2, dtype=np.float32)
    weights[0] = 1
    if n % 2 == 0:
        weights[-1] = 1
    return np.reshape(weights, [-1 if axis == last else 1 for axis in range(len(a_shape))])


# --- complex transforms: the DFT matrix is symmetric ----------------------------------------------

@table.vjp(np.fft.fft, "a")
def fft_vjp(a_shape, a_meta, axis, norm, g):
    return real_like(fft_fit(np.fft.fft(g, None, axis, norm), a_shape), a_meta)


@table.vjp(np.fft.ifft, "a")
def ifft_vjp(a_shape, a_meta, axis, norm, g):
    return real_like(fft_fit(np.fft.ifft(g, None, axis, norm), a_shape), a_meta)


@table.vjp(np.fft.fft2, "a")
def fft2_vjp(a_shape, a_meta, s, axes, norm, g):
    return real_like(fft_fit(np.fft.fft2(g, None, fft_axes(len(a_shape), s, axes), norm), a_shape), a_meta)


@table.vjp(np.fft.ifft2, "a")
def ifft2_vjp(a_shape, a_meta, s, axes, norm, g):
    return real_like(fft_fit(np.fft.ifft2(g, None, fft_axes(len(a_shape), s, axes), norm), a_shape), a_meta)


@table.vjp(np.fft.fftn, "a")
def fftn_vjp(a_shape, a_meta, s, axes, norm, g):
    return real_like(fft_fit(np.fft.fftn(g, None, fft_axes(len(a_shape), s, axes), norm), a_shape), a_meta)


@table.vjp(np.fft.ifftn, "a")
def ifftn_vjp(a_shape, a_meta, s, axes, norm, g):
    return real_like(fft_fit(np.fft.ifftn(g, None, fft_axes(len(a_shape), s, axes), norm), a_shape), a_meta)


@table.jvp(np.fft.fft, "a")
def fft_jvp(a_dot, n, axis, norm):
    return np.fft.fft(a_dot, n, axis, norm)


@table.jvp(np.fft.ifft, "a")
def ifft_jvp(a_dot, n, axis, norm):
    return np.fft.ifft(a_dot, n, axis, norm)


@table.jvp(np.fft.fft2, "a")
def fft2_jvp(a_dot, s, axes, norm):
    return np.fft.fft2(a_dot, s, axes, norm)


@table.jvp(np.fft.ifft2, "a")
def ifft2_jvp(a_dot, s, axes, norm):
    return np.fft.ifft2(a_dot, s, axes, norm)


@table.jvp(np.fft.fftn, "a")
def fftn_jvp(a_dot, s, axes, norm):
    return np.fft.fftn(a_dot, s, axes, norm)


@table.jvp(np.fft.ifftn, "a")
def ifftn_jvp(a_dot, s, axes, norm):
    return np.fft.ifftn(a_dot, s, axes, norm)


# --- real transforms ----------------------------------------------------------------------------

@table.vjp(np.fft.rfft, "a")
def rfft_vjp(a_shape, n, axis, norm, g):
    return fft_fit(np.real(np.fft.fft(fft_fit(g, fft_shape(a_shape, n, axis)), None, axis, norm)), a_shape)


@table.vjp(np.fft.rfft2, "a")
def rfft2_vjp(a_shape, s, axes, norm, g):
    return fft_fit(np.real(np.fft.fft2(fft_fit(g, fft_shape(a_shape, s, axes)), None,
                                       fft_axes(len(a_shape), s, axes), norm)), a_shape)


@table.vjp(np.fft.rfftn, "a")
def rfftn_vjp(a_shape, s, axes, norm, g):
    return fft_fit(np.real(np.fft.fftn(fft_fit(g, fft_shape(a_shape, s, axes)), None,
                                       fft_axes(len(a_shape), s, axes), norm)), a_shape)


@table.vjp(np.fft.irfft, "a")
def irfft_vjp(a_shape, a_meta, n, axis, norm, g):
    return real_like(fft_fit(irfft_weights(a_shape, n, axis) * np.conj(np.fft.rfft(g, None, axis, fft_dual(norm))),
                             a_shape), a_meta)


@table.vjp(np.fft.irfft2, "a")
def irfft2_vjp(a_shape, a_meta, s, axes, norm, g):
    return real_like(fft_fit(irfft_weights(a_shape, s, axes) * np.conj(
        np.fft.rfft2(g, None, fft_axes(len(a_shape), s, axes), fft_dual(norm))), a_shape), a_meta)


@table.vjp(np.fft.irfftn, "a")
def irfftn_vjp(a_shape, a_meta, s, axes, norm, g):
    return real_like(fft_fit(irfft_weights(a_shape, s, axes) * np.conj(
        np.fft.rfftn(g, None, fft_axes(len(a_shape), s, axes), fft_dual(norm))), a_shape), a_meta)


@table.jvp(np.fft.rfft, "a")
def rfft_jvp(a_dot, n, axis, norm):
    return np.fft.rfft(a_dot, n, axis, norm)


@table.jvp(np.fft.irfft, "a")
def irfft_jvp(a_dot, n, axis, norm):
    return np.fft.irfft(a_dot, n, axis, norm)


@table.vjp(np.fft.hfft, "a")
def hfft_vjp(a_shape, a_meta, n, axis, norm, g):
    return np.conj(irfft_vjp(a_shape, a_meta, n, axis, fft_dual(norm), g))


@table.vjp(np.fft.ihfft, "a")
def ihfft_vjp(a_shape, n, axis, norm, g):
    return rfft_vjp(a_shape, n, axis, fft_dual(norm), np.conj(g))


@table.jvp(np.fft.hfft, "a")
def hfft_jvp(a_dot, n, axis, norm):
    return np.fft.hfft(a_dot, n, axis, norm)


@table.jvp(np.fft.ihfft, "a")
def ihfft_jvp(a_dot, n, axis, norm):
    return np.fft.ihfft(a_dot, n, axis, norm)


@table.jvp(np.fft.rfft2, "a")
def rfft2_jvp(a_dot, s, axes, norm):
    return np.fft.rfft2(a_dot, s, axes, norm)


@table.jvp(np.fft.irfft2, "a")
def irfft2_jvp(a_dot, s, axes, norm):
    return np.fft.irfft2(a_dot, s, axes, norm)


@table.jvp(np.fft.rfftn, "a")
def rfftn_jvp(a_dot, s, axes, norm):
    return np.fft.rfftn(a_dot, s, axes, norm)


@table.jvp(np.fft.irfftn, "a")
def irfftn_jvp(a_dot, s, axes, norm):
    return np.fft.irfftn(a_dot, s, axes, norm)


# --- shifts: a permutation, undone by the other shift ---------------------------------------------

@table.vjp(np.fft.fftshift, "x")
def fftshift_vjp(axes, g):
    return np.fft.ifftshift(g, axes)


@table.vjp(np.fft.ifftshift, "x")
def ifftshift_vjp(axes, g):
    return np.fft.fftshift(g, axes)


@table.jvp(np.fft.fftshift, "x")
def fftshift_jvp(x_dot, axes):
    return np.fft.fftshift(x_dot, axes)


@table.jvp(np.fft.ifftshift, "x")
def ifftshift_jvp(x_dot, axes):
    return np.fft.ifftshift(x_dot, axes)

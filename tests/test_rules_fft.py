"""Rule table tests for the discrete Fourier transforms (`tapegen/rules/fft.py`).

Each row is a real-valued function of a real array through one transform (complex outputs are
mixed into a real one with a complex weight, so both parts count), checked in reverse mode
against central differences, in forward mode (`tg.jvp`) against a directional difference, and
at second order (Hessian-vector products). Complex inputs, where the convention matters, are
checked against its definition: for real L of z = x + iy, the gradient is dL/dx - i dL/dy.
"""
import numpy as np
import pytest

import tapegen as tg
from rule_rows import Row, check_vjp_row

_rng = np.random.default_rng(5)

# `s` without `axes` (the last len(s) axes) is deprecated in NumPy 2 but still what users write
pytestmark = pytest.mark.filterwarnings("ignore:`axes` should not be `None` if `s` is not `None`:DeprecationWarning")


def _x(*shape):
    return _rng.standard_normal(shape)


def _z(*shape):
    return _rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)


M34, T234 = _x(3, 4), _x(2, 3, 4)
W = 0.3 + 1.1j  # mixes the real and imaginary parts of a complex result into one real number


def _row(id, fn, *args, covers, wrt=(0,), **options):
    return Row(id, fn, args, wrt=wrt, covers=covers, **options)


fft = np.fft
ROWS = [
    _row("fft-(3,4)", lambda a: np.real(fft.fft(a) * W), M34, covers=(fft.fft,)),
    _row("fft-(3,4)-n5-axis0-ortho", lambda a: np.imag(fft.fft(a, 5, 0, "ortho")), M34, covers=(fft.fft,)),
    _row("fft-(3,4)-n3-crop", lambda a: np.abs(fft.fft(a, n=3)), M34, covers=(fft.fft,)),
    _row("ifft-(3,4)-n6-forward", lambda a: np.real(fft.ifft(a, 6, norm="forward") * W), M34, covers=(fft.ifft,)),
    _row("ifft-(3,4)-backward", lambda a: np.imag(fft.ifft(a, norm="backward")), M34, covers=(fft.ifft,)),
    _row("fft2-(3,4)", lambda a: np.real(fft.fft2(a) * W), M34, covers=(fft.fft2,)),
    _row("fft2-(3,4)-s", lambda a: np.real(fft.fft2(a, s=(2, 5)) * W), M34, covers=(fft.fft2,)),
    _row("ifft2-(3,4)-axes-ortho", lambda a: np.real(fft.ifft2(a, axes=(1, 0), norm="ortho") * W), M34,
         covers=(fft.ifft2,)),
    _row("fftn-(2,3,4)", lambda a: np.real(fft.fftn(a) * W), T234, covers=(fft.fftn,)),
    _row("fftn-(2,3,4)-s-last-two", lambda a: np.real(fft.fftn(a, s=(4, 3)) * W), T234, covers=(fft.fftn,)),
    _row("ifftn-(2,3,4)-axes", lambda a: np.imag(fft.ifftn(a, axes=(0, 2))), T234, covers=(fft.ifftn,)),
    _row("ifftn-(2,3,4)-s-axes-forward", lambda a: np.real(fft.ifftn(a, (3, 2), (2, 0), "forward") * W), T234,
         covers=(fft.ifftn,)),
    _row("rfft-(3,4)", lambda a: np.real(fft.rfft(a) * W), M34, covers=(fft.rfft,)),
    _row("rfft-(3,4)-n7-axis0-ortho", lambda a: np.imag(fft.rfft(a, 7, axis=0, norm="ortho")), M34,
         covers=(fft.rfft,)),
    _row("rfft-(3,4)-n3-crop", lambda a: np.abs(fft.rfft(a, 3)), M34, covers=(fft.rfft,)),
    _row("irfft-(3,4)-real-input", lambda a: fft.irfft(a), M34, covers=(fft.irfft,)),
    _row("irfft-(3,4)-n7-odd-forward", lambda a: fft.irfft(a * (1 + 0.5j), 7, 0, "forward"), M34,
         covers=(fft.irfft,)),
    _row("irfft-(3,4)-n4-even-ortho", lambda a: fft.irfft(a * (1 + 0.5j), 4, norm="ortho"), M34,
         covers=(fft.irfft,)),
    _row("rfft2-(3,4)", lambda a: np.real(fft.rfft2(a) * W), M34, covers=(fft.rfft2,)),
    _row("irfft2-(3,4)", lambda a: fft.irfft2(a * (1 + 0.5j)), M34, covers=(fft.irfft2,)),
    _row("rfftn-(2,3,4)-s", lambda a: np.imag(fft.rfftn(a, s=(3, 5))), T234, covers=(fft.rfftn,)),
    _row("irfftn-(2,3,4)-s-ortho", lambda a: fft.irfftn(a * (1 + 0.5j), s=(3, 5), norm="ortho"), T234,
         covers=(fft.irfftn,)),
    _row("irfftn-(2,3,4)-axes", lambda a: fft.irfftn(a * (1 - 0.5j), axes=(0, 1)), T234, covers=(fft.irfftn,)),
    _row("hfft-(3,4)-real-input", lambda a: fft.hfft(a), M34, covers=(fft.hfft,)),
    _row("hfft-(3,4)-n7-axis0-ortho", lambda a: fft.hfft(a * (1 + 0.5j), 7, 0, "ortho"), M34, covers=(fft.hfft,)),
    _row("hfft-(3,4)-n4-forward", lambda a: fft.hfft(a * (1 - 0.5j), 4, norm="forward"), M34, covers=(fft.hfft,)),
    _row("ihfft-(3,4)", lambda a: np.real(fft.ihfft(a) * W), M34, covers=(fft.ihfft,)),
    _row("ihfft-(3,4)-n5-axis0-ortho", lambda a: np.imag(fft.ihfft(a, 5, 0, "ortho")), M34, covers=(fft.ihfft,)),
    _row("ihfft-(3,4)-n3-crop-forward", lambda a: np.abs(fft.ihfft(a, 3, norm="forward")), M34,
         covers=(fft.ihfft,)),
    _row("fftshift-(3,4)", lambda x: fft.fftshift(x) * M34, M34, covers=(fft.fftshift,)),
    _row("ifftshift-(3,4)-axes", lambda x: fft.ifftshift(x, axes=1) * M34, M34, covers=(fft.ifftshift,)),
    _row("round-trip-(3,4)", lambda a: fft.irfft(fft.rfft(a) * np.arange(1.0, 4.0), 4) ** 2, M34,
         covers=(fft.rfft, fft.irfft)),
]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.id)
def test_vjp(row):
    check_vjp_row(row)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.id)
def test_forward_mode(row, eps=1e-6):
    tangent = _rng.standard_normal(np.shape(row.args[0]))
    _, got = tg.jvp(row.fn, row.args, (tangent,))
    expected = (row.fn(row.args[0] + eps * tangent) - row.fn(row.args[0] - eps * tangent)) / (2 * eps)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.id)
def test_second_order(row):
    fn = row.fn
    tg.gradcheck(lambda a: np.sum(np.sin(fn(a))), *row.args, order=2, rtol=1e-5, atol=1e-6)


def test_row_ids_are_unique():
    assert len({row.id for row in ROWS}) == len(ROWS)


# --- complex inputs: the convention's definition -------------------------------------------------

def convention_gradient(f, z, eps=1e-6):
    """dL/dx - i dL/dy for real L(z), by central differences in each element's real and imaginary part."""
    g = np.zeros_like(z)
    for i in np.ndindex(z.shape):
        e = np.zeros_like(z)
        e[i] = 1
        g[i] = (f(z + eps * e) - f(z - eps * e)) / (2 * eps) - 1j * (f(z + 1j * eps * e) - f(z - 1j * eps * e)) / (2 * eps)
    return g


Z34, Z234 = _z(3, 4), _z(2, 3, 4)
COMPLEX = [
    ("fft", lambda z: np.sum(np.abs(fft.fft(z)) ** 2 * np.arange(4.0)), Z34),
    ("fft-n-ortho", lambda z: np.sum(np.real(fft.fft(z, 6, 0, "ortho") * W)), Z34),
    ("ifft-crop", lambda z: np.sum(np.imag(fft.ifft(z, 3) * W) ** 2), Z34),
    ("fft2-s", lambda z: np.sum(np.abs(fft.fft2(z, (4, 3)))), Z34),
    ("ifft2-forward", lambda z: np.sum(np.real(fft.ifft2(z, norm="forward") * W)), Z34),
    ("fftn-axes", lambda z: np.sum(np.abs(fft.fftn(z, axes=(0, 2))) ** 2 * np.arange(4.0)), Z234),
    ("ifftn", lambda z: np.sum(np.real(fft.ifftn(z) * np.conj(z))), Z234),
    ("irfft", lambda z: np.sum(fft.irfft(z) ** 2 * np.arange(6.0)), Z34),
    ("hfft", lambda z: np.sum(fft.hfft(z) ** 2 * np.arange(6.0)), Z34),
    ("hfft-odd-n", lambda z: np.sum(np.sin(fft.hfft(z, 7, norm="ortho"))), Z34),
    ("irfft-odd-n", lambda z: np.sum(np.sin(fft.irfft(z, 7, norm="ortho"))), Z34),
    ("irfft2", lambda z: np.sum(fft.irfft2(z) * np.arange(6.0)), Z34),
    ("irfftn-s", lambda z: np.sum(fft.irfftn(z, s=(3, 4)) ** 3), Z234),
    ("fftshift", lambda z: np.sum(np.abs(fft.fftshift(z) - z[::-1]) ** 2), Z34),
]


@pytest.mark.parametrize("f, z", [(f, z) for _, f, z in COMPLEX], ids=[name for name, _, _ in COMPLEX])
def test_complex_input_gradient_follows_the_convention(f, z):
    np.testing.assert_allclose(tg.grad(f)(z), convention_gradient(f, z), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f, z", [(f, z) for _, f, z in COMPLEX], ids=[name for name, _, _ in COMPLEX])
def test_complex_input_tangent_is_the_directional_derivative(f, z, eps=1e-6):
    t = _z(*z.shape)
    _, got = tg.jvp(f, (z,), (t,))
    np.testing.assert_allclose(got, (f(z + eps * t) - f(z - eps * t)) / (2 * eps), rtol=1e-6, atol=1e-7)


def test_float32_stays_float32():
    a = M34.astype(np.float32)
    for f in (lambda a: np.real(fft.fft(a) * W), lambda a: fft.irfft(a * (1 + 0.5j), 5),
              lambda a: np.imag(fft.rfft2(a, (3, 6)))):
        assert tg.grad(lambda a: np.sum(f(a)))(a).dtype == np.float32

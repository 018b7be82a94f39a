"""scipy.signal.convolve, correlate and fftconvolve against central differences: every mode, 1-D and N-D.

Reverse, forward and second order (of sum(sin(f(a, v)))) through `check_modes`, in both inputs,
with the smaller input first and second (`valid` mode swaps them); complex inputs against the
convention of docs/faq.md.
"""
import numpy as np
import pytest

import tapegen as tg
from modes import check_modes
from rule_rows import Row
from test_complex import convention_gradient

signal = pytest.importorskip("scipy.signal")

RNG = np.random.default_rng(11)
SHAPES = [((7,), (3,)), ((3,), (6,)), ((4, 5), (2, 3)), ((2, 3, 4), (2, 2, 3))]
FUNCTIONS = {"convolve": signal.convolve, "correlate": signal.correlate, "fftconvolve": signal.fftconvolve}


def _rows():
    for name, fn in FUNCTIONS.items():
        for mode in ("full", "same", "valid"):
            for a_shape, v_shape in SHAPES:
                if mode == "valid" and not (all(m >= n for m, n in zip(a_shape, v_shape))
                                            or all(m <= n for m, n in zip(a_shape, v_shape))):
                    continue
                call = (lambda fn, mode: lambda a, v: fn(a, v, mode=mode))(fn, mode)
                shapes = f"{a_shape}x{v_shape}".replace(" ", "")
                yield Row(f"{name}-{mode}-{shapes}-float64", call,
                          (RNG.standard_normal(a_shape), RNG.standard_normal(v_shape)), (0, 1), covers=(fn,))


ROWS = list(_rows())


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_reverse_and_forward(row):
    check_modes(row.fn, *row.args)


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_second_order(row):
    fn = row.fn
    check_modes(lambda a, v: np.sum(np.sin(fn(a, v))), *row.args)


def test_method_direct_is_the_same_function():
    a, v = RNG.standard_normal(6), RNG.standard_normal(3)
    check_modes(lambda a, v: signal.convolve(a, v, mode="same", method="direct"), a, v)


V = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)


@pytest.mark.parametrize("f", [
    lambda z: np.sum(np.abs(signal.convolve(z, V, mode="same")) ** 2),
    lambda z: np.sum(np.real(signal.correlate(z, V) * (1 + 2j))),
    lambda z: np.sum(np.abs(signal.correlate(V, z, mode="valid")) ** 2),
    lambda z: np.sum(np.imag(signal.fftconvolve(z, V, mode="valid"))),
], ids=["convolve-same", "correlate-in1", "correlate-in2", "fftconvolve-valid"])
def test_complex_gradient_is_df_dx_minus_i_df_dy(f):
    z = RNG.standard_normal(5) + 1j * RNG.standard_normal(5)
    np.testing.assert_allclose(tg.grad(f)(z), convention_gradient(f, z), rtol=1e-6, atol=1e-8)


def test_fftconvolve_over_some_axes_is_an_error():
    a, v = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 2))
    with pytest.raises(tg.TapegenError, match="all axes"):
        tg.grad(lambda a: np.sum(signal.fftconvolve(a, v, axes=1)))(a)

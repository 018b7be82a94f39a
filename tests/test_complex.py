"""Rules on complex inputs, against the one convention tapegen follows (JAX's, docs/faq.md).

For a real loss L of a complex array z = x + iy, `tg.grad(L)(z)` is dL/dx - i dL/dy, computed
here by central differences in each element's real and imaginary part. Forward mode gives the
directional derivative (L(z + eps t) - L(z - eps t)) / 2 eps for a complex tangent t. Second
order is checked through real parameters, L(a + ib) with real a and b, where gradcheck's
Hessian-vector products apply as they are, and in the complex argument itself (`check_complex_modes`).
"""
import numpy as np
import pytest

import tapegen as tg
from modes import check_modes

_rng = np.random.default_rng(17)


def _z(*shape):
    return _rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)


def convention_gradient(f, z, eps=1e-6):
    """dL/dx - i dL/dy, element by element."""
    z = np.asarray(z, dtype=complex)
    g = np.zeros_like(z)
    for i in np.ndindex(z.shape):
        e = np.zeros_like(z)
        e[i] = 1
        d_dx = (f(z + eps * e) - f(z - eps * e)) / (2 * eps)
        d_dy = (f(z + 1j * eps * e) - f(z - 1j * eps * e)) / (2 * eps)
        g[i] = d_dx - 1j * d_dy
    return g


def directional(f, z, t, eps=1e-6):
    """(f(z + eps t) - f(z - eps t)) / 2 eps: the derivative of f along the (complex) direction t."""
    return (f(z + eps * t) - f(z - eps * t)) / (2 * eps)


def check_complex_modes(f, z, rtol=1e-5, atol=1e-6, seed=0, order2=True):
    """A real loss `f` of a complex array `z` (or of a real one) in every mode, under the convention.

    First order: grad and vjp's pullback of 1 against dL/dx - i dL/dy, jvp along a complex direction t
    against the directional derivative. Second order (`order2`): reverse over reverse (the gradient of
    Re<grad f, w>), reverse over forward (the gradient of the jvp along t), forward over reverse (the
    jvp of grad f along t) and forward over forward (the jvp along w of the jvp along t), each against
    central differences of the first-order result. A real `z` is moved along real directions only.
    """
    rng = np.random.default_rng(seed)
    is_complex = np.iscomplexobj(z)

    def direction():
        x = rng.standard_normal(np.shape(z))
        return x + 1j * rng.standard_normal(np.shape(z)) if is_complex else x

    def convention(fn, eps):
        if is_complex:
            return convention_gradient(fn, z, eps)
        return np.array([directional(fn, z, np.eye(np.size(z))[k].reshape(np.shape(z)), eps)
                         for k in range(np.size(z))]).reshape(np.shape(z))

    def close(actual, expected, what, factor=1):
        np.testing.assert_allclose(actual, expected, rtol=rtol * factor, atol=atol * factor, err_msg=what)

    t, w = direction(), direction()
    gradient = tg.grad(f)
    close(gradient(z), convention(f, 1e-6), "grad")
    close(tg.vjp(f, z)[1](1.0), convention(f, 1e-6), "vjp")
    close(tg.jvp(f, (z,), (t,))[1], directional(f, z, t), "jvp")
    if not order2:
        return
    projected = lambda x: np.real(np.sum(gradient(x) * w))
    close(tg.grad(projected)(z), convention(projected, 1e-5), "grad of grad", 10)
    forward = lambda x: tg.jvp(f, (x,), (t,))[1]
    close(tg.grad(forward)(z), convention(forward, 1e-5), "grad of jvp", 10)
    close(tg.jvp(gradient, (z,), (t,))[1], directional(gradient, z, t, 1e-5), "jvp of grad", 10)
    close(tg.jvp(forward, (z,), (w,))[1], directional(forward, z, w, 1e-5), "jvp of jvp", 10)


Z34, Z4, Z42, Z22 = _z(3, 4), _z(4), _z(4, 2), _z(2, 2)
Z34_OTHER = _z(3, 4)
R34, R22 = _rng.standard_normal((3, 4)), _rng.standard_normal((2, 2))
W = 0.3 + 1.1j

CASES = [
    # elementwise, broadcasting against complex and real arrays and Python numbers
    ("add-broadcast", lambda z: np.sum(np.abs(z + Z4) ** 2)),
    ("add-real-broadcast", lambda z: np.sum(np.abs(R34 + z[0]) ** 2)),
    ("sub-broadcast", lambda z: np.sum(np.abs(Z4 - z) ** 2)),
    ("mul-broadcast", lambda z: np.sum(np.abs(z * Z4) ** 2)),
    ("mul-real-broadcast", lambda z: np.sum(np.real(z[:, :1] * R34 * W))),
    ("mul-python-complex", lambda z: np.sum(np.imag(z * (1 + 2j)) ** 2)),
    ("div", lambda z: np.sum(np.abs(Z4 / z) ** 2)),
    ("power", lambda z: np.sum(np.real(z ** 3 * W))),
    ("exp-log", lambda z: np.sum(np.real(np.log(np.exp(z) + 2.0)))),
    ("sin-tanh", lambda z: np.sum(np.abs(np.sin(z) * np.tanh(z)))),
    ("sqrt", lambda z: np.sum(np.real(np.sqrt(z) * W))),
    ("arcsinh", lambda z: np.sum(np.real(np.arcsinh(z) * W))),
    # parts
    ("real", lambda z: np.sum(np.real(z) ** 2 * R34)),
    ("real-of-product", lambda z: np.sum(np.real(z * z))),
    ("real-broadcast", lambda z: np.sum(np.real(z[0]) * R34)),
    ("imag", lambda z: np.sum(np.imag(z) ** 3)),
    ("conj", lambda z: np.sum(np.real(np.conj(z) * z * z))),
    ("abs", lambda z: np.sum(np.abs(z))),
    ("abs-squared", lambda z: np.sum(np.abs(z) ** 2)),
    ("angle", lambda z: np.sum(np.angle(z) * R34)),
    ("angle-deg", lambda z: np.sum(np.angle(z, deg=True))),
    # reductions
    ("sum", lambda z: np.abs(np.sum(z)) ** 2),
    ("sum-axis", lambda z: np.sum(np.abs(np.sum(z * z, axis=0)))),
    ("mean", lambda z: np.abs(np.mean(z, axis=1)).sum()),
    ("var", lambda z: np.var(z)),
    ("var-axis-ddof", lambda z: np.sum(np.var(z, axis=0, ddof=1) * np.arange(1.0, 5.0))),
    ("std", lambda z: np.std(z)),
    ("std-axis-keepdims", lambda z: np.sum(np.std(z, axis=1, keepdims=True) * R34)),
    ("prod", lambda z: np.abs(np.prod(z[0]))),
    ("cumsum", lambda z: np.sum(np.abs(np.cumsum(z, axis=1)))),
    # products
    ("matmul", lambda z: np.sum(np.abs(z @ Z42) ** 2)),
    ("matmul-left", lambda z: np.sum(np.real(Z42.T @ z.T * W))),
    ("dot", lambda z: np.abs(np.dot(z[0], Z4))),
    ("kron", lambda z: np.sum(np.abs(np.kron(z, Z22)) ** 2)),
    ("kron-real-right", lambda z: np.sum(np.real(np.kron(R22, z) * W))),
    ("einsum", lambda z: np.sum(np.abs(np.einsum("ij,jk->ik", z, Z42)))),
    # vdot and vecdot conjugate their first argument
    ("vdot-first", lambda z: np.real(np.vdot(z, Z34_OTHER) * W)),
    ("vdot-second", lambda z: np.real(np.vdot(Z34_OTHER, z) * W)),
    ("vecdot-first", lambda z: np.sum(np.real(np.vecdot(z, Z4) * W))),
    ("vecdot-second", lambda z: np.sum(np.imag(np.vecdot(Z34_OTHER, z)) ** 2)),
    ("linalg.vecdot-first-axis=0", lambda z: np.sum(np.real(np.linalg.vecdot(z, Z34_OTHER[:, :1], axis=0) * W))),
    ("linalg.vecdot-second", lambda z: np.sum(np.abs(np.linalg.vecdot(Z4, z)) ** 2)),
    ("norm", lambda z: np.linalg.norm(z)),
    ("norm-rows-ord3", lambda z: np.sum(np.linalg.norm(z, 3, axis=1))),
    ("norm-inf", lambda z: np.linalg.norm(z[0], np.inf)),
    ("norm-nuc", lambda z: np.linalg.norm(z, "nuc")),
    ("norm-spectral", lambda z: np.linalg.norm(z, 2)),
    # a real result times a complex number: the real result's cotangent picks up an imaginary part
    ("abs-times-complex", lambda z: np.sum(np.real(np.abs(z) * W))),
    ("std-times-complex", lambda z: np.sum(np.real(np.std(z, axis=0) * W))),
    ("norm-times-complex", lambda z: np.real(np.linalg.norm(z, axis=1) @ Z34[:, 0])),
    ("svd-values", lambda z: np.sum(np.linalg.svd(z, compute_uv=False) * np.arange(1.0, 4.0))),
    ("svd-values-times-complex", lambda z: np.real(np.sum(np.linalg.svd(z, compute_uv=False) * W))),
    ("det", lambda z: np.real(np.linalg.det(z[:, :3]) * W)),
    ("slogdet", lambda z: np.real(np.linalg.slogdet(z[:, 1:]) [0] * W) + np.linalg.slogdet(z[:, 1:])[1] ** 2),
    # transforms
    ("fft", lambda z: np.sum(np.abs(np.fft.fft(z)) ** 2 * np.arange(4.0))),
    ("ifft2", lambda z: np.sum(np.real(np.fft.ifft2(z) * W))),
    ("irfft", lambda z: np.sum(np.fft.irfft(z) ** 2)),
]


@pytest.mark.parametrize("f", [f for _, f in CASES], ids=[name for name, _ in CASES])
def test_gradient_is_df_dx_minus_i_df_dy(f):
    np.testing.assert_allclose(tg.grad(f)(Z34), convention_gradient(f, Z34), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", [f for _, f in CASES], ids=[name for name, _ in CASES])
def test_tangent_is_the_directional_derivative(f, eps=1e-6):
    t = _z(3, 4)
    _, got = tg.jvp(f, (Z34,), (t,))
    np.testing.assert_allclose(got, (f(Z34 + eps * t) - f(Z34 - eps * t)) / (2 * eps), rtol=1e-6, atol=1e-7)


SECOND_ORDER = ("arcsinh", "add-broadcast", "mul-broadcast", "div", "real", "imag", "conj", "abs", "angle", "var", "std",
                "matmul", "kron", "fft", "irfft", "vdot-first", "vecdot-second", "linalg.vecdot-second")


@pytest.mark.parametrize("f", [f for name, f in CASES if name in SECOND_ORDER],
                         ids=[name for name, _ in CASES if name in SECOND_ORDER])
def test_second_order_through_real_parameters(f):
    tg.gradcheck(lambda a, b: f(a + 1j * b), np.real(Z34), np.imag(Z34), wrt=(0, 1), order=2, rtol=1e-5, atol=1e-6)


def test_real_input_gets_a_real_gradient_from_complex_intermediates():
    x = np.real(Z4)
    g = tg.grad(lambda x: np.sum(np.abs(x * Z4 + np.fft.fft(x)) ** 2))(x)
    assert g.dtype == np.float64
    f = lambda x: np.sum(np.abs(x * Z4 + np.fft.fft(x)) ** 2)
    np.testing.assert_allclose(g, np.real(convention_gradient(f, x)), rtol=1e-6)


def test_python_complex_scalar():
    g = tg.grad(lambda z: np.abs(z * z))(0.7 - 1.3j)
    assert isinstance(g, complex)
    np.testing.assert_allclose(g, convention_gradient(lambda z: np.abs(z * z), np.array(0.7 - 1.3j)))


V34 = _z(3, 4)  # a projection of the gradient, not z itself (|z|^2's errors cancel there)
SECOND_ORDER_COMPLEX = [
    # the gradient of a gradient, in a complex argument (autograd's test_complex / test_systematic)
    ("abs-squared", lambda z: np.sum(np.abs(z) ** 2)),
    ("abs", lambda z: np.sum(np.abs(z))),
    ("std", lambda z: np.std(z)),
    ("var-axis", lambda z: np.sum(np.var(z, axis=0) * np.arange(1.0, 5.0))),
    ("norm", lambda z: np.linalg.norm(z)),
    ("norm-fro-axis", lambda z: np.sum(np.linalg.norm(z, axis=0) * np.arange(1.0, 5.0))),
    ("norm-ord1", lambda z: np.sum(np.linalg.norm(z, 1, axis=1))),
    ("norm-ord3", lambda z: np.sum(np.linalg.norm(z, 3, axis=0) ** 2)),
    ("norm-matrix-fro", lambda z: np.linalg.norm(z, "fro") ** 3),
]


@pytest.mark.parametrize("f", [f for _, f in SECOND_ORDER_COMPLEX], ids=[name for name, _ in SECOND_ORDER_COMPLEX])
def test_gradient_of_gradient_in_a_complex_argument(f):
    gradient = tg.grad(f)
    projection = lambda z: np.real(np.sum(gradient(z) * V34))
    np.testing.assert_allclose(tg.grad(projection)(Z34), convention_gradient(projection, Z34), rtol=1e-5, atol=1e-6)


def test_third_derivative_of_abs_of_a_complex_scalar():
    w, u = 0.6 - 0.8j, 0.3 + 0.9j
    def modulus(z):
        return np.abs(z)

    gradient = tg.grad(modulus)
    first = lambda z: np.real(gradient(z) * w)
    second = lambda z: np.real(tg.grad(first)(z) * u)
    np.testing.assert_allclose(tg.grad(second)(1.1 + 1.3j), convention_gradient(second, np.array(1.1 + 1.3j)),
                               rtol=1e-5, atol=1e-6)


def test_grad_of_a_complex_output_is_a_type_error_naming_the_return():
    def f(x):
        return x * (1.0 + 0.2j)

    with pytest.raises(tg.NotRealOutputError, match="complex") as info:
        tg.grad(f)(1.0)
    assert isinstance(info.value, TypeError) and isinstance(info.value, tg.NonScalarOutputError)
    assert "return x * (1.0 + 0.2j)" in str(info.value) and "np.real" in str(info.value)
    with pytest.raises(TypeError):
        tg.value_and_grad(f)(np.ones(()))
    assert tg.grad(lambda x: np.real(f(x)))(1.0) == 1.0
    _, pullback = tg.vjp(f, 1.0)
    assert pullback(1.0 + 0j) == 1.0


def test_grad_of_a_bool_output_is_a_type_error():
    def close(x):
        return np.allclose(x, (x * 3.0) / 3.0)

    with pytest.raises(tg.NotRealOutputError, match="bool"):
        tg.grad(close)(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError):
        tg.grad(lambda x: np.sum(x) > 0)(np.ones(2))


def test_python_float_argument_that_meets_a_complex_number():
    def f(x):
        return np.real(x * (1.0 + 0.2j)) * x

    gradient = tg.grad(f)
    assert gradient(1.5) == gradient(1.5) == 3.0  # the second call runs the code specialized to a float


def test_a_padded_real_signal_under_complex_intermediates():
    """np.pad(x, n, "reflect") of a real signal whose cotangent is complex (a DFT by matrix product after it:
    numpy-ml's mel spectrogram): np.bincount refused the complex weights (a TypeError)."""
    def f(x):
        padded = np.pad(x, 2, "reflect")
        n = padded.shape[0]
        basis = np.exp(-2j * np.pi * np.outer(np.arange(n), np.arange(n)) / n)
        return np.sum(np.abs(basis @ padded) ** 2)
    x = np.real(Z4)
    tg.gradcheck(f, x, order=2, rtol=1e-5, atol=1e-6)


def _complex_items_written_in_a_loop(x):
    z = np.zeros(3, dtype=complex)
    for i in range(3):
        z[i] = x[i] * (1.0 + 2.0j) + np.exp(1j * x[i + 1])
    return np.sum(np.abs(z) ** 2)


def test_a_real_gradient_added_to_in_a_loop_from_complex_items():
    """Items of a complex array written from a real argument in a loop: the code specialized to the
    shapes added each complex contribution in place to a float64 buffer of zeros (numpy's casting error,
    once the function was called twice)."""
    check_modes(_complex_items_written_in_a_loop, np.array([0.3, -0.5, 0.7, 1.1]))


def _complex_items_of_real_items_read_at_computed_positions(x):
    z = np.zeros(4, dtype=complex)
    for k in range(4):
        z[k] = np.exp(1j * x[k]) * x[(k + 1) % 4]
    return np.sum(np.abs(z) ** 2 + np.real(z) * np.imag(z))


def test_a_real_gradient_of_items_read_at_computed_positions_from_complex_items():
    """The same with the real items read at a position computed in the loop (`x[(k + 1) % 4]`): the shapes the
    specialized code knew showed no complex value (only the argument's and the items'), so it still started the
    real gradient at float64 zeros and added complex contributions in place (numpy's casting error on the second
    call, on fb8f5d2); a complex constant or dtype in the function now counts."""
    x = np.array([0.3, -0.7, 1.1, 0.45])
    gradient = tg.grad(_complex_items_of_real_items_read_at_computed_positions)
    first = gradient(x)
    np.testing.assert_allclose(gradient(x), first)
    check_modes(_complex_items_of_real_items_read_at_computed_positions, x)

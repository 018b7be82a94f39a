"""scipy.linalg rules against central differences in float64: reverse, forward and second order.

One row per (function, options): `check_modes` compares grad, vjp and jvp with central differences
along random directions; second order differentiates sum(sin(f(...))) twice. Functions of
eigenvectors and singular vectors are gauge-invariant (`v ** 2`), inputs well conditioned.
The decompositions (eigh, svd, qr) have second order too: their gradient code differentiates again.
"""
import numpy as np
import pytest

import tapegen as tg
from modes import check_modes
from rule_rows import Row
from test_complex import check_complex_modes, convention_gradient

sl = pytest.importorskip("scipy.linalg")
from tapegen.rules import scipy_linalg  # noqa: E402 (after the skip: it imports SciPy)

RNG = np.random.default_rng(5)
A = RNG.standard_normal((3, 3)) + 3 * np.eye(3)  # well conditioned, and its triangles too
SPD = A @ A.T
B, b = RNG.standard_normal((3, 2)), RNG.standard_normal(3)
TALL = RNG.standard_normal((4, 3))
SMALL = 0.5 * RNG.standard_normal((3, 3))
BANDED = RNG.standard_normal((3, 4)) + np.array([[0.0], [4.0], [0.0]])  # (l, u) = (1, 1), diagonally dominant
BANDED_WIDE = RNG.standard_normal((4, 4)) + np.array([[0.0], [0.0], [4.0], [0.0]])  # (1, 2)
B4 = RNG.standard_normal(4)
NEGATIVE = SPD - 8.0 * np.eye(3)  # one negative eigenvalue: a complex square root


def row(name, fn, *args, covers):
    return Row(id=f"{name}-float64", fn=fn, args=args, wrt=tuple(range(len(args))), covers=covers)


def eigh_mixed(a, lower=True):
    w, v = sl.eigh(a, lower=lower)
    return w + np.sum(v ** 2 * np.arange(3.0), axis=0)


def svd_mixed(a):
    u, s, vt = sl.svd(a, full_matrices=False)
    return s + np.sum(u ** 2 * np.arange(3.0), axis=0) + np.sum(vt ** 2, axis=1) * s


def qr_mixed(a):
    q, r = sl.qr(a, mode="economic")
    return np.sum(q ** 2 * np.arange(3.0), axis=0) + r * r


def cho_solve_with_factor(a, b):
    c, low = sl.cho_factor(a, lower=True)
    return sl.cho_solve((c, low), b)


ROWS = [
    row("solve_triangular-upper-(3,3)x(3,2)", lambda a, b: sl.solve_triangular(a, b), A, B,
        covers=(sl.solve_triangular,)),
    row("solve_triangular-lower-(3,3)x(3,)", lambda a, b: sl.solve_triangular(a, b, lower=True), A, b,
        covers=(sl.solve_triangular,)),
    row("solve_triangular-trans-T-unit", lambda a, b: sl.solve_triangular(a, b, trans="T", lower=True,
                                                                          unit_diagonal=True), A, B,
        covers=(sl.solve_triangular,)),
    row("solve_triangular-trans-2-(3,)", lambda a, b: sl.solve_triangular(a, b, trans=2), A, b,
        covers=(sl.solve_triangular,)),
    row("cholesky-upper", lambda a: sl.cholesky(a), SPD, covers=(sl.cholesky,)),
    row("cholesky-lower", lambda a: sl.cholesky(a, lower=True), SPD, covers=(sl.cholesky,)),
    row("cho_factor-upper", lambda a: sl.cho_factor(a)[0], SPD, covers=(sl.cho_factor,)),
    row("cho_solve-upper-(3,3)x(3,2)", lambda a, b: sl.cho_solve(sl.cho_factor(a), b), SPD, B,
        covers=(sl.cho_factor, sl.cho_solve)),
    row("cho_solve-lower-(3,3)x(3,)", cho_solve_with_factor, SPD, b, covers=(sl.cho_factor, sl.cho_solve)),
    row("lu_factor", lambda a: sl.lu_factor(a)[0], A, covers=(sl.lu_factor,)),
    row("lu_solve-(3,3)x(3,2)", lambda a, b: sl.lu_solve(sl.lu_factor(a), b), A, B,
        covers=(sl.lu_factor, sl.lu_solve)),
    row("lu_solve-trans-1-(3,)", lambda a, b: sl.lu_solve(sl.lu_factor(a), b, trans=1), A, b,
        covers=(sl.lu_factor, sl.lu_solve)),
    row("inv", lambda a: sl.inv(a), A, covers=(sl.inv,)),
    row("inv-pos", lambda a: sl.inv(a, assume_a="pos"), SPD, covers=(sl.inv,)),
    row("det", lambda a: sl.det(a), A, covers=(sl.det,)),
    row("solve-gen-(3,3)x(3,2)", lambda a, b: sl.solve(a, b), A, B, covers=(sl.solve,)),
    row("solve-transposed-(3,)", lambda a, b: sl.solve(a, b, transposed=True), A, b, covers=(sl.solve,)),
    row("solve-sym-lower", lambda a, b: sl.solve(a, b, assume_a="sym", lower=True), SPD, B, covers=(sl.solve,)),
    row("solve-pos-upper", lambda a, b: sl.solve(a, b, assume_a="pos"), SPD, b, covers=(sl.solve,)),
    row("eigh-lower", eigh_mixed, SPD, covers=(sl.eigh,)),
    row("eigh-upper", lambda a: eigh_mixed(a, lower=False), SPD, covers=(sl.eigh,)),
    row("eigvalsh", lambda a: sl.eigvalsh(a), SPD, covers=(sl.eigvalsh,)),
    row("svd-(4,3)", svd_mixed, TALL, covers=(sl.svd,)),
    row("qr-economic-(4,3)", qr_mixed, TALL, covers=(sl.qr,)),
    row("solve_sylvester-(3,3)x(2,2)x(3,2)", lambda a, b, q: sl.solve_sylvester(a, b, q), A, A[:2, :2].T + 1.0,
        B, covers=(sl.solve_sylvester,)),
    row("solve_banded-(1,1)", lambda ab, b: sl.solve_banded((1, 1), ab, b), BANDED, B4,
        covers=(sl.solve_banded,)),
    row("solve_banded-(1,2)-matrix", lambda ab, b: sl.solve_banded((1, 2), ab, b), BANDED_WIDE, TALL,
        covers=(sl.solve_banded,)),
    row("band_transpose-(1,2)", lambda ab: scipy_linalg.band_transpose((1, 2), ab), BANDED_WIDE,
        covers=(scipy_linalg.band_transpose,)),
    row("band_product-(1,1)", lambda ab, x: scipy_linalg.band_product((1, 1), ab, x), BANDED, B4,
        covers=(scipy_linalg.band_product,)),
    row("band_outer-(1,2)", lambda u, v: scipy_linalg.band_outer((1, 2), BANDED_WIDE, u, v), TALL, TALL[::-1],
        covers=(scipy_linalg.band_outer,)),
    row("expm", lambda a: sl.expm(a), SMALL, covers=(sl.expm,)),
    row("sqrtm", lambda a: sl.sqrtm(a), SPD, covers=(sl.sqrtm,)),
    row("sqrtm-negative-eigenvalue", lambda a: np.real(sl.sqrtm(a) * (1.0 + 0.5j)), NEGATIVE, covers=(sl.sqrtm,)),
    row("sqrtm-nonsymmetric", lambda a: sl.sqrtm(a), A, covers=(sl.sqrtm,)),
    row("sqrtm_root", lambda s, a: scipy_linalg.sqrtm_root(s, a) ** 2, SPD, SPD, covers=(scipy_linalg.sqrtm_root,)),
    row("logm", lambda a: sl.logm(a), SPD, covers=(sl.logm,)),
]


def test_ids_are_unique():
    assert len({r.id for r in ROWS}) == len(ROWS)


@pytest.mark.parametrize("r", ROWS, ids=[r.id for r in ROWS])
def test_reverse_and_forward(r):
    check_modes(r.fn, *r.args)


def _scalar(fn, n):
    if n == 1:
        return lambda a: np.sum(np.sin(fn(a)))
    if n == 3:
        return lambda a, b, q: np.sum(np.sin(fn(a, b, q)))
    return lambda a, b: np.sum(np.sin(fn(a, b)))


@pytest.mark.parametrize("r", ROWS, ids=[r.id for r in ROWS])
def test_second_order(r):
    check_modes(_scalar(r.fn, len(r.args)), *r.args)


@pytest.mark.parametrize("r", ROWS, ids=[r.id.replace("float64", "float32") for r in ROWS])
def test_float32_in_float32_out(r):
    args = tuple(a.astype(np.float32) for a in r.args)
    grads = tg.grad(_scalar(r.fn, len(args)), wrt=tuple(range(len(args))))(*args)
    assert [g.dtype for g in grads] == [np.float32] * len(args)


def test_every_vjp_rule_has_a_jvp_rule():
    from tapegen.rules import scipy_linalg
    for prim in scipy_linalg.table.primitives.values():
        assert set(prim.vjps) == set(prim.jvps), prim.name


Z = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3)) + 3 * np.eye(3)
ZB = RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))
W = RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))


@pytest.mark.parametrize("f", [
    lambda z: np.sum(np.real(sl.solve_triangular(z, ZB) * W)),
    lambda z: np.sum(np.abs(sl.solve_triangular(z, ZB, trans=2, lower=True)) ** 2),
    lambda z: np.sum(np.imag(sl.solve(z, ZB) * W)),
    lambda z: np.sum(np.abs(sl.lu_solve(sl.lu_factor(z), ZB)) ** 2),
    lambda z: np.abs(sl.det(z)) ** 2,
    lambda z: np.sum(np.real(sl.inv(z) @ W)),
    lambda z: np.sum(np.abs(sl.expm(0.3 * z)) ** 2),
    lambda z: np.sum(np.real(sl.sqrtm(z) @ W)),
    lambda z: np.sum(np.real(sl.logm(z) @ W)),
    lambda z: np.sum(np.real(sl.solve_sylvester(z, z[:2, :2].T + 3.0, ZB) * W)),
], ids=["solve_triangular", "solve_triangular-trans-2", "solve", "lu_solve", "det", "inv", "expm", "sqrtm", "logm",
        "solve_sylvester"])
def test_complex_gradient_is_df_dx_minus_i_df_dy(f):
    np.testing.assert_allclose(tg.grad(f)(Z), convention_gradient(f, Z), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("call, a, match", [
    (lambda a: sl.svd(a)[1], TALL, "full_matrices=False"),
    (lambda a: sl.qr(a)[1], TALL, "mode='economic'"),
    (lambda a: sl.solve(a, b, assume_a="diagonal"), SPD, "assume_a"),
    (lambda a: sl.eigh(a, SPD)[0], SPD, "one symmetric matrix"),
], ids=["svd-full", "qr-full-tall", "solve-diagonal", "eigh-generalized"])
def test_unsupported_options_are_errors_not_wrong_numbers(call, a, match):
    with pytest.raises(tg.TapegenError, match=match):
        tg.grad(lambda a: np.sum(call(a)))(a)


# --- complex matrices: the factorizations of a Hermitian matrix, svd and qr, in every mode --------

HPD = Z @ np.conj(Z.T)  # Hermitian positive definite (Z is near 3 I)
NEAR_HPD = HPD + 0.3 * ZB @ W.T  # not Hermitian: each function reads its own triangle
ZTALL = RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3))
WEIGHTS = {shape: RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape) for shape in [(3, 3), (4, 3), (3, 2)]}


def weighted(x):
    """A real number from a complex array, with fixed complex weights (no phase-free reading needed)."""
    return np.sum(np.real(x * WEIGHTS[np.shape(x)])) + np.sum(np.abs(x) ** 3)


def scipy_eigh_phase_free(a):
    w, v = sl.eigh(a)
    return np.sum(w * np.arange(1.0, 4.0)) + np.sum(np.abs(v) ** 3)


def scipy_eigh_upper_phase_free(a):
    w, v = sl.eigh(a, lower=False)
    return np.sum(w ** 2) + np.sum(np.abs(v[0]) ** 2 * np.arange(3.0))


def scipy_svd_phase_free(a):
    u, s, vt = sl.svd(a, full_matrices=False)
    return np.sum(np.abs(u) ** 3) + np.sum(s * np.arange(1.0, 4.0)) + np.sum(np.real(u @ vt * WEIGHTS[(4, 3)]))


def scipy_qr_weighted(a):
    q, r = sl.qr(a, mode="economic")
    return weighted(q) + weighted(r)


def cho_solve_of(a):
    return weighted(sl.cho_solve(sl.cho_factor(a), W))


def cho_solve_lower_of(a):
    return weighted(sl.cho_solve(sl.cho_factor(a, lower=True), W))


def cho_solve_rhs(b):
    return weighted(sl.cho_solve(sl.cho_factor(HPD), b))


COMPLEX_ROWS = [
    ("eigh-lower", scipy_eigh_phase_free, NEAR_HPD),
    ("eigh-upper", scipy_eigh_upper_phase_free, NEAR_HPD),
    ("eigvalsh", lambda a: np.sum(sl.eigvalsh(a) ** 3), NEAR_HPD),
    ("eigvalsh-upper", lambda a: np.sum(sl.eigvalsh(a, lower=False) ** 3), NEAR_HPD),
    ("svd-(4,3)", scipy_svd_phase_free, ZTALL),
    ("qr-economic-(4,3)", scipy_qr_weighted, ZTALL),
    ("cholesky-upper", lambda a: weighted(sl.cholesky(a)), NEAR_HPD),
    ("cholesky-lower", lambda a: weighted(sl.cholesky(a, lower=True)), NEAR_HPD),
    ("cho_factor", lambda a: weighted(sl.cho_factor(a)[0]), NEAR_HPD),
    ("cho_solve-upper", cho_solve_of, NEAR_HPD),
    ("cho_solve-lower", cho_solve_lower_of, NEAR_HPD),
    ("cho_solve-b", cho_solve_rhs, W),
    ("solve-her", lambda a: weighted(sl.solve(a, W, assume_a="her")), NEAR_HPD),
    ("solve-pos-lower", lambda a: weighted(sl.solve(a, W, assume_a="pos", lower=True)), NEAR_HPD),
    ("solve-sym", lambda a: weighted(sl.solve(a, W, assume_a="sym")), NEAR_HPD),
    ("inv-pos", lambda a: weighted(sl.inv(a, assume_a="pos")), NEAR_HPD),
]


@pytest.mark.parametrize("f, z", [(f, z) for _, f, z in COMPLEX_ROWS], ids=[name for name, _, _ in COMPLEX_ROWS])
def test_complex_matrices_in_every_mode(f, z):
    """grad, vjp and jvp against dL/dx - i dL/dy and directional derivatives, and grad of grad, grad of jvp
    and jvp of grad (tests/test_complex.py's check_complex_modes). 'her' and 'pos' read a Hermitian matrix
    from one triangle (the real part of its diagonal), 'sym' a complex symmetric one."""
    check_complex_modes(f, z)


def scipy_eigh_real_part(a):
    w, v = sl.eigh(a)
    return np.sum(np.real(v))


def test_a_loss_that_depends_on_complex_eigenvectors_phases_is_refused():
    with pytest.raises(tg.TapegenError, match="phases of complex eigenvectors"):
        tg.grad(scipy_eigh_real_part)(HPD)


def test_sqrtm_second_derivative_at_a_negative_eigenvalue():
    """Second derivatives of sqrtm at a symmetric matrix with a negative eigenvalue (a complex root; once
    refused: the Fréchet block it nested was a matrix on which scipy's sqrtm was off by 1e21), against
    central differences of the first: the Sylvester equation's derivative is another Sylvester equation."""
    x = np.random.default_rng(42).standard_normal((3, 3))
    a = 0.5 * (x + x.T) - 2.0 * np.eye(3)  # a negative eigenvalue
    v, w, u = np.ones((3, 3)), np.eye(3) + 0.5j, np.random.default_rng(1).standard_normal((3, 3))
    symmetric_root = lambda m: sl.sqrtm(0.5 * (m + m.T))  # noqa: E731
    tangent = tg.jvp(symmetric_root, (a,), (v,))[1]
    np.testing.assert_allclose(tangent, (symmetric_root(a + 1e-6 * v) - symmetric_root(a - 1e-6 * v)) / 2e-6,
                               rtol=1e-6, atol=1e-8)
    jvp_of = lambda a: np.real(np.sum(tg.jvp(symmetric_root, (a,), (v,))[1] * w))  # noqa: E731
    expected = (jvp_of(a + 1e-5 * u) - jvp_of(a - 1e-5 * u)) / 2e-5
    assert np.sum(tg.grad(jvp_of)(a) * u) == pytest.approx(expected, rel=1e-6)
    assert np.sum(tg.jvp(tg.grad(lambda m: np.real(np.sum(symmetric_root(m) * w))), (a,), (u,))[1] * v) == \
        pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("a, match", [
    (np.diag([0.0, 1.0, 4.0]), "singular"),
    (np.diag([-1.0, -1.0, 4.0]), "negative real axis"),
    (np.diag([-1.0, 2.0, 4.0]).astype(complex), "negative real axis"),
], ids=["singular", "repeated-negative", "complex-on-the-cut"])
def test_sqrtm_where_it_has_no_derivative_is_refused(a, match):
    f = lambda m: np.sum(np.abs(sl.sqrtm(m)) ** 2)  # noqa: E731
    with pytest.raises(tg.TapegenError, match=match):
        tg.grad(f)(a)
    with pytest.raises(tg.TapegenError, match=match):
        tg.jvp(f, (a,), (np.ones((3, 3)),))


def var1_stationary_loglik(phi, method):
    """A VAR(1)'s stationary state covariance (statsmodels' initial state): x - a x a^T = q, then a Gaussian
    log-likelihood of one observation under it."""
    a = np.array([[phi[0], phi[1]], [0.2 * phi[1], phi[2]]])
    q = np.array([[1.0, 0.3], [0.3, 0.5]])
    p = sl.solve_discrete_lyapunov(a, q, method)
    y = np.array([0.4, -0.7])
    return -0.5 * (np.linalg.slogdet(p)[1] + y @ np.linalg.solve(p, y))


def lyapunov_of_ten(a, q):
    """Ten rows: SciPy's default is the bilinear method."""
    return np.sum(np.sin(sl.solve_discrete_lyapunov(0.3 * a, q)))


Q = np.array([[1.0, 0.3, -0.2], [0.1, 0.8, 0.4], [-0.5, 0.2, 1.5]])


@pytest.mark.parametrize("f, args", [
    (lambda a, q: np.sum(np.sin(sl.solve_continuous_lyapunov(a, q))), (A - 6 * np.eye(3), Q)),
    (lambda a, q: np.sum(np.cos(sl.solve_lyapunov(a, q @ q.T))), (A - 6 * np.eye(3), Q)),
    (lambda phi: var1_stationary_loglik(phi, None), (np.array([0.5, 0.3, -0.4]),)),
    (lambda phi: var1_stationary_loglik(phi, "bilinear"), (np.array([0.5, 0.3, -0.4]),)),
    (lyapunov_of_ten, (RNG.standard_normal((10, 10)) / 4, RNG.standard_normal((10, 10)))),
], ids=["continuous", "solve_lyapunov", "discrete-direct", "discrete-bilinear", "discrete-10-rows"])
def test_lyapunov_equations_in_every_mode(f, args):
    """solve_continuous_lyapunov is the Sylvester equation a x + x a^H = q, solve_discrete_lyapunov SciPy's own
    methods written with solves that have rules: every mode, second order, in a and q, against differences."""
    check_modes(f, *args)


def test_lyapunov_values_are_scipys():
    a, q = 0.3 * A, Q @ Q.T
    for method in (None, "direct", "bilinear"):
        x = tg.value_and_grad(lambda a: np.sum(sl.solve_discrete_lyapunov(a, q, method)))(a)[0]
        assert x == pytest.approx(np.sum(sl.solve_discrete_lyapunov(a, q, method)), rel=1e-12)


def ar1_exact_loglik(params):
    """An AR(1)'s exact likelihood through its Toeplitz autocovariance matrix."""
    phi, log_s = np.tanh(params[0]), params[1]
    acov = np.exp(2 * log_s) / (1 - phi ** 2) * phi ** np.arange(6)
    sigma = sl.toeplitz(acov)
    y = np.array([0.3, -0.1, 0.4, 0.2, -0.5, 0.1])
    return -0.5 * (np.linalg.slogdet(sigma)[1] + y @ np.linalg.solve(sigma, y))


def structured_matrices(c, r):
    return (np.sum(np.sin(sl.toeplitz(c, r))) + np.sum(np.cos(sl.toeplitz(c))) + np.sum(sl.hankel(c, r) ** 2)
            + np.sum(np.sin(sl.hankel(c))) + np.sum(sl.circulant(r) ** 3))


def state_space_transition(a, b):
    """A block-diagonal transition (a local linear trend and an AR(1)) propagated a few steps."""
    T = sl.block_diag(np.array([[a[0], 1.0], [0.0, a[1]]]), b[0], 0.3 * np.outer(b[1:], b[1:]))
    P = np.eye(T.shape[1])
    for _ in range(3):
        P = T @ P @ T.T + 0.1 * np.eye(T.shape[0])
    return np.trace(P)


@pytest.mark.parametrize("f, args", [
    (ar1_exact_loglik, (np.array([0.5, -0.2]),)),
    (structured_matrices, (np.array([0.3, -0.2, 0.5]), np.array([0.1, 0.4, 0.7, -0.3]))),
    (lambda a, b: state_space_transition(a, b) + np.sum(sl.block_diag(a, b, np.ones((1, 2))) @ np.arange(8.0)),
     (np.array([0.6, 0.3]), np.array([0.2, 0.4, 0.1, 0.5]))),
], ids=["toeplitz-ar1", "toeplitz-hankel-circulant", "block_diag"])
def test_structured_matrix_builders_in_every_mode(f, args):
    """toeplitz, hankel, circulant and block_diag as the gathers and writes that build them."""
    check_modes(f, *args)
    assert tg.value_and_grad(f)(*args)[0] == pytest.approx(f(*args), rel=1e-12)


def test_a_toeplitz_of_a_matrix_is_refused_with_a_hint():
    with pytest.raises(tg.NoRuleError, match="1-d arrays"):
        tg.grad(lambda c: np.sum(sl.toeplitz(np.outer(c, c))))(np.array([0.3, 0.5]))

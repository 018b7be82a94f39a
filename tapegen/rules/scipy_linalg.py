"""scipy.linalg: triangular and factored solves, factorizations, and the matrix functions expm, sqrtm, logm.

The rules are written with NumPy and SciPy functions that have rules themselves
(a triangular solve's VJP is two more triangular solves), so gradient code
differentiates again. Complex matrices follow docs/faq.md (a complex-linear map
transposes to its plain transpose): the solves, `inv`, `det`, `lu_*` and the
matrix functions are holomorphic; the factorizations of a Hermitian matrix
(`cholesky`, `cho_factor`, `cho_solve`, `eigh`) and `svd`, `qr` share NumPy's
rules in linalg.py, which carry the conjugates.

A function that reads one triangle of its matrix (`solve_triangular`,
`cholesky`, `solve(assume_a="pos")`) gets a cotangent in that triangle only: a
perturbation of the other triangle changes nothing. For 'her' and 'pos' (and
the Cholesky factorizations) the triangle stands for a Hermitian matrix whose
diagonal is its real part, for 'sym' for a complex symmetric one.

`expm` and `logm` use the Fréchet derivative of a primary matrix function f:
f([[A, E], [0, A]]) = [[f(A), Df(A)[E]], [0, f(A)]], and its adjoint is
Df(A^T)[G] (NumPy's real coefficients). That block matrix is a call of f
itself, so a second derivative is f of a 4n x 4n matrix. `sqrtm`'s derivative
solves S dS + dS S = dA (S = sqrtm(A)), a Sylvester equation whose own
derivative is another: accurate to every order, refused only where it does
not exist (`sqrtm_root`).
"""
import numpy as np
import scipy
import scipy.linalg

from ..errors import TapegenError
from .linalg import (_conj, _cotangents, _eigh_cotangent, _eigh_tangent, _h, _hermitian_from,
                     _hermitian_triangle, _one_triangle, _svd_cotangent, _svd_tangent, _symmetric_from, cholesky_jvp,
                     cholesky_vjp, linalg_mT, qr_jvp, qr_vjp)
from .formulas import Formulas
from .language import assign_jvp, assign_vjp
from .table import RuleTable

table = RuleTable("scipy.linalg")
sl = scipy.linalg
_FLAGS = ("overwrite_a", "overwrite_b", "check_finite")

table.op(sl.solve_triangular, "a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, "
                              "check_finite=True", spelling="scipy.linalg.solve_triangular",
         inert=("trans", "lower", "unit_diagonal") + _FLAGS)
table.op(sl.cholesky, "a, lower=False, overwrite_a=False, check_finite=True", spelling="scipy.linalg.cholesky",
         inert=("lower",) + _FLAGS)
table.op(sl.cho_factor, "a, lower=False, overwrite_a=False, check_finite=True", spelling="scipy.linalg.cho_factor",
         outputs=2, inert=("lower",) + _FLAGS)
table.op(sl.cho_solve, "c_and_lower, b, overwrite_b=False, check_finite=True", spelling="scipy.linalg.cho_solve",
         sequences=("c_and_lower",), inert=_FLAGS)
table.op(sl.lu_factor, "a, overwrite_a=False, check_finite=True", spelling="scipy.linalg.lu_factor", outputs=2,
         inert=_FLAGS)
table.op(sl.lu_solve, "lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True",
         spelling="scipy.linalg.lu_solve", sequences=("lu_and_piv",), inert=("trans",) + _FLAGS)
table.op(sl.inv, "a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False",
         spelling="scipy.linalg.inv", inert=("assume_a", "lower") + _FLAGS)
table.op(sl.det, "a, overwrite_a=False, check_finite=True", spelling="scipy.linalg.det", inert=_FLAGS)
table.op(sl.solve, "a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None, "
                   "transposed=False", spelling="scipy.linalg.solve", inert=("lower", "assume_a", "transposed") + _FLAGS)
table.op(sl.eigh, "a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, "
                  "type=1, check_finite=True, subset_by_index=None, subset_by_value=None, driver=None",
         spelling="scipy.linalg.eigh", outputs=2,
         inert=("lower", "eigvals_only", "type", "subset_by_index", "subset_by_value", "driver") + _FLAGS)
table.op(sl.eigvalsh, "a, b=None, *, lower=True, overwrite_a=False, overwrite_b=False, type=1, check_finite=True, "
                      "subset_by_index=None, subset_by_value=None, driver=None", spelling="scipy.linalg.eigvalsh",
         inert=("lower", "type", "subset_by_index", "subset_by_value", "driver") + _FLAGS)
table.op(sl.svd, "a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, "
                 "lapack_driver='gesdd'", spelling="scipy.linalg.svd", outputs=3,
         inert=("full_matrices", "compute_uv", "lapack_driver") + _FLAGS)
table.op(sl.qr, "a, overwrite_a=False, lwork=None, mode='full', pivoting=False, check_finite=True",
         spelling="scipy.linalg.qr", outputs=2, inert=("lwork", "mode", "pivoting") + _FLAGS)
for _fn in (sl.expm, sl.sqrtm, sl.logm):
    table.op(_fn, "A", spelling=f"scipy.linalg.{_fn.__name__}")
table.op(sl.solve_sylvester, "a, b, q", spelling="scipy.linalg.solve_sylvester")
table.op(sl.solve_banded, "l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True",
         spelling="scipy.linalg.solve_banded", inert=("l_and_u", "overwrite_ab") + _FLAGS)


def triangle(a, lower, unit_diagonal):
    """The part of `a` a triangular solve reads (its strict triangle when the diagonal is taken as ones)."""
    if lower:
        return np.tril(a, -1 if unit_diagonal else 0)
    return np.triu(a, 1 if unit_diagonal else 0)


def trans_code(trans):
    """SciPy's `trans` as 0 (a x = b), 1 (a^T x = b) or 2 (a^H x = b)."""
    return {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}[trans]


def as_columns(v, b):
    """`v` (shaped like the right-hand side `b`) as a matrix: a vector becomes one column."""
    return v[:, None] if np.ndim(b) == 1 else v


table.nondiff(trans_code, "trans", spelling="trans_code")
trans_code.pure = True


# --- solve_banded: x = A^-1 b, A held by its diagonals: A[i, j] = ab[u + i - j, j] -----------------------

def _band_rows(l_and_u, n):
    """For each row r of the band storage: the columns j it holds (i = j + r - u within the matrix)."""
    lower, upper = l_and_u
    return [(r, max(0, upper - r), min(n, n + upper - r)) for r in range(lower + upper + 1)]


def band_transpose(l_and_u, ab):
    """The band storage of A^T (its lower and upper widths swapped)."""
    lower, upper = l_and_u
    n = np.shape(ab)[1]
    out = np.zeros_like(ab)
    for r, start, stop in _band_rows((upper, lower), n):  # A^T[i, j] = A[j, i] = ab[u + l - r, i]
        out[r, start:stop] = ab[upper + lower - r, start + r - lower:stop + r - lower]
    return out


def band_product(l_and_u, ab, x):
    """A x for A in band storage, x a vector or a matrix (columns)."""
    lower, upper = l_and_u
    n = np.shape(ab)[1]
    out = np.zeros(np.shape(x), dtype=np.result_type(ab, x))
    for r, start, stop in _band_rows(l_and_u, n):
        rows = slice(start + r - upper, stop + r - upper)
        out[rows] = out[rows] + (ab[r, start:stop] if np.ndim(x) == 1 else ab[r, start:stop, None]) * x[start:stop]
    return out


def band_outer(l_and_u, ab, left, right):
    """(left right^T) read in A's band (shaped like `ab`): the cotangent of ab for A's cotangent left right^T."""
    lower, upper = l_and_u
    n = np.shape(ab)[1]
    out = np.zeros(np.shape(ab), dtype=np.result_type(ab, left, right))
    for r, start, stop in _band_rows(l_and_u, n):
        rows = left[start + r - upper:stop + r - upper] * right[start:stop]
        out[r, start:stop] = rows if np.ndim(rows) == 1 else np.sum(rows, axis=-1)
    return out


table.op(band_transpose, "l_and_u, ab", spelling="band_transpose", inert=("l_and_u",))
table.op(band_product, "l_and_u, ab, x", spelling="band_product", inert=("l_and_u",))
table.op(band_outer, "l_and_u, ab, left, right", spelling="band_outer", inert=("l_and_u", "ab"))


@table.vjp(sl.solve_banded, "b")
def solve_banded_vjp_b(l_and_u, ab, g):
    return scipy.linalg.solve_banded(l_and_u[::-1], band_transpose(l_and_u, ab), g)


@table.vjp(sl.solve_banded, "ab")
def solve_banded_vjp_ab(l_and_u, ab, y, g):
    return -band_outer(l_and_u, ab, scipy.linalg.solve_banded(l_and_u[::-1], band_transpose(l_and_u, ab), g), y)


@table.jvp(sl.solve_banded, "b")
def solve_banded_jvp_b(l_and_u, ab, b_dot):
    return scipy.linalg.solve_banded(l_and_u, ab, b_dot)


@table.jvp(sl.solve_banded, "ab")
def solve_banded_jvp_ab(l_and_u, ab, ab_dot, y):
    return -scipy.linalg.solve_banded(l_and_u, ab, band_product(l_and_u, ab_dot, y))


@table.vjp(band_transpose, "ab")
def band_transpose_vjp(l_and_u, g):
    return band_transpose(l_and_u[::-1], g)


@table.jvp(band_transpose, "ab")
def band_transpose_jvp(l_and_u, ab_dot):
    return band_transpose(l_and_u, ab_dot)


@table.vjp(band_product, "ab")
def band_product_vjp_ab(l_and_u, ab, x, g):
    return band_outer(l_and_u, ab, g, x)


@table.vjp(band_product, "x")
def band_product_vjp_x(l_and_u, ab, g):
    return band_product(l_and_u[::-1], band_transpose(l_and_u, ab), g)


@table.jvp(band_product, "ab")
def band_product_jvp_ab(l_and_u, ab_dot, x):
    return band_product(l_and_u, ab_dot, x)


@table.jvp(band_product, "x")
def band_product_jvp_x(l_and_u, ab, x_dot):
    return band_product(l_and_u, ab, x_dot)


@table.vjp(band_outer, "left")
def band_outer_vjp_left(l_and_u, ab, right, g):
    return band_product(l_and_u, g, right)


@table.vjp(band_outer, "right")
def band_outer_vjp_right(l_and_u, ab, left, g):
    return band_product(l_and_u[::-1], band_transpose(l_and_u, g), left)


@table.jvp(band_outer, "left")
def band_outer_jvp_left(l_and_u, ab, left_dot, right):
    return band_outer(l_and_u, ab, left_dot, right)


@table.jvp(band_outer, "right")
def band_outer_jvp_right(l_and_u, ab, left, right_dot):
    return band_outer(l_and_u, ab, left, right_dot)


# --- solve_triangular: x = op(T)^-1 b, T the triangle of a that is read --------------------------------

def _triangular_parts(a, trans):
    """(matrix solved with, whether it is transposed): a^H x = b is conj(a)^T x = b."""
    code = trans_code(trans)
    return (np.conj(a) if code == 2 else a), min(code, 1)


def _solve_transposed(a, trans, lower, unit_diagonal, g):
    """op(T)^-T g, the cotangent of b."""
    m, t = _triangular_parts(a, trans)
    return scipy.linalg.solve_triangular(m, g, trans=1 - t, lower=lower, unit_diagonal=unit_diagonal)


@table.vjp(sl.solve_triangular, "a")
def solve_triangular_vjp_a(a, b, trans, lower, unit_diagonal, y, g):
    g_b = _solve_transposed(a, trans, lower, unit_diagonal, g)
    g_m = -as_columns(g_b, b) @ linalg_mT(as_columns(y, b))
    g_m = linalg_mT(g_m) if trans_code(trans) else g_m
    g_a = triangle(g_m, lower, unit_diagonal)
    return np.conj(g_a) if trans_code(trans) == 2 else g_a


@table.vjp(sl.solve_triangular, "b")
def solve_triangular_vjp_b(a, trans, lower, unit_diagonal, g):
    return _solve_transposed(a, trans, lower, unit_diagonal, g)


@table.jvp(sl.solve_triangular, "a")
def solve_triangular_jvp_a(a, a_dot, b, trans, lower, unit_diagonal, y):
    m, t = _triangular_parts(a, trans)
    m_dot = triangle(np.conj(a_dot) if trans_code(trans) == 2 else a_dot, lower, unit_diagonal)
    m_dot = linalg_mT(m_dot) if t else m_dot
    product = m_dot @ y
    return -scipy.linalg.solve_triangular(m, product, trans=t, lower=lower, unit_diagonal=unit_diagonal)


@table.jvp(sl.solve_triangular, "b")
def solve_triangular_jvp_b(a, b_dot, trans, lower, unit_diagonal):
    return scipy.linalg.solve_triangular(a, b_dot, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


# --- cholesky, cho_factor, cho_solve (Hermitian positive definite) --------------------------------------
# cho_factor's c holds the factor in one triangle and a's own entries, untouched, in the other.

@table.vjp(sl.cholesky, "a")
def scipy_cholesky_vjp(lower, y, g):
    return cholesky_vjp(not lower, y, g)


@table.jvp(sl.cholesky, "a")
def scipy_cholesky_jvp(a_dot, lower, y):
    return cholesky_jvp(a_dot, not lower, y)


def other_triangle(x, lower):
    """The strict triangle of `x` opposite the factor's: what cho_factor leaves as it found it."""
    return np.triu(x, 1) if lower else np.tril(x, -1)


@table.vjp(sl.cho_factor, "a")
def cho_factor_vjp(lower, y, g):
    c, g_c = y[0], g[0]  # lower, a bool, has no cotangent
    factor = triangle(c, lower, False)
    return cholesky_vjp(not lower, factor, triangle(g_c, lower, False)) + other_triangle(g_c, lower)


@table.jvp(sl.cho_factor, "a")
def cho_factor_jvp(a_dot, lower, y):
    factor_dot = cholesky_jvp(a_dot, not lower, triangle(y[0], lower, False))
    return factor_dot + other_triangle(a_dot, lower), None


def _factor_product(c, lower):
    """The matrix L L^H (or U^H U) whose factor c holds."""
    factor = triangle(c, lower, False)
    return factor @ _h(factor) if lower else _h(factor) @ factor


def cho_solve_transposed(c_and_lower, g):
    """M^-T g for the Hermitian M whose factor c holds: M^T = conj(M), so conj(M^-1 conj(g))."""
    return _conj(scipy.linalg.cho_solve(c_and_lower, _conj(g)))


@table.vjp(sl.cho_solve, "c_and_lower")
def cho_solve_vjp_c(c_and_lower, b, y, g):
    c, lower = c_and_lower
    g_b = cho_solve_transposed(c_and_lower, g)
    g_m = -as_columns(g_b, b) @ linalg_mT(as_columns(y, b))  # the cotangent of the matrix L L^H
    g_m = g_m + _h(g_m)
    factor = _conj(triangle(c, lower, False))
    return [triangle(g_m @ factor if lower else factor @ g_m, lower, False), None]


@table.vjp(sl.cho_solve, "b")
def cho_solve_vjp_b(c_and_lower, g):
    return cho_solve_transposed(c_and_lower, g)


@table.jvp(sl.cho_solve, "c_and_lower")
def cho_solve_jvp_c(c_and_lower, c_and_lower_dot, y):
    c, lower = c_and_lower
    factor, factor_dot = triangle(c, lower, False), triangle(c_and_lower_dot[0], lower, False)
    m_dot = factor_dot @ _h(factor) if lower else _h(factor) @ factor_dot
    return -scipy.linalg.cho_solve(c_and_lower, (m_dot + _h(m_dot)) @ y)


@table.jvp(sl.cho_solve, "b")
def cho_solve_jvp_b(c_and_lower, b_dot):
    return scipy.linalg.cho_solve(c_and_lower, b_dot)


# --- lu_factor, lu_solve: P a = L U with L unit lower (its strict triangle in lu) and U upper -------------

def lu_permutation(piv):
    """The row order p with a[p] = L U, from LAPACK's pivots (row i swapped with row piv[i], in turn)."""
    order = np.arange(len(piv))
    for i, j in enumerate(piv):
        order[[i, j]] = order[[j, i]]
    return order


def lu_inverse_order(piv):
    """The inverse of `lu_permutation(piv)`: (L U)[q] = a."""
    return np.argsort(lu_permutation(piv))


table.nondiff(lu_permutation, "piv", spelling="lu_permutation")
table.nondiff(lu_inverse_order, "piv", spelling="lu_inverse_order")


def _unit_lower(lu):
    return np.tril(lu, -1) + np.eye(np.shape(lu)[-1], dtype=np.result_type(lu))


def _lu_cotangent(lu, piv, g_m):
    """lu's cotangent from that of m = P^T L U, the matrix lu factors (a cotangent of P a is one of a, permuted)."""
    l, u = _unit_lower(lu), np.triu(lu)
    g_pm = g_m[lu_permutation(piv)]
    return np.tril(g_pm @ linalg_mT(u), -1) + np.triu(linalg_mT(l) @ g_pm)


@table.vjp(sl.lu_factor, "a")
def lu_factor_vjp(y, g):
    lu, piv = y
    g_lu = g[0]  # piv, integers, has no cotangent
    l, u = _unit_lower(lu), np.triu(lu)
    g_f = np.tril(linalg_mT(l) @ np.tril(g_lu, -1), -1) + np.triu(np.triu(g_lu) @ linalg_mT(u))
    g_pa = scipy.linalg.solve_triangular(
        l, linalg_mT(scipy.linalg.solve_triangular(u, linalg_mT(g_f), lower=False)), trans=1, lower=True,
        unit_diagonal=True)  # L^-T G_F U^-T
    return g_pa[lu_inverse_order(piv)]


@table.jvp(sl.lu_factor, "a")
def lu_factor_jvp(a_dot, y):
    lu, piv = y
    l, u = _unit_lower(lu), np.triu(lu)
    f = scipy.linalg.solve_triangular(l, a_dot[lu_permutation(piv)], lower=True, unit_diagonal=True)
    f = linalg_mT(scipy.linalg.solve_triangular(u, linalg_mT(f), trans=1, lower=False))  # L^-1 P dA U^-1
    return l @ np.tril(f, -1) + np.triu(f) @ u, None


def _lu_matrix_cotangent(lu_and_piv, b, trans, y, g):
    """The cotangent of the matrix m = P^T L U that lu_solve solves with: m x = b (trans 0) or m^T x = b."""
    g_b = scipy.linalg.lu_solve(lu_and_piv, g, trans=1 - min(trans_code(trans), 1))
    g_m = -as_columns(g_b, b) @ linalg_mT(as_columns(y, b))
    return linalg_mT(g_m) if trans_code(trans) else g_m


@table.vjp(sl.lu_solve, "lu_and_piv")
def lu_solve_vjp_lu(lu_and_piv, b, trans, y, g):
    lu, piv = lu_and_piv
    return [_lu_cotangent(lu, piv, _lu_matrix_cotangent(lu_and_piv, b, trans, y, g)), None]


@table.vjp(sl.lu_solve, "b")
def lu_solve_vjp_b(lu_and_piv, trans, g):
    return scipy.linalg.lu_solve(lu_and_piv, g, trans=1 - min(trans_code(trans), 1))


@table.jvp(sl.lu_solve, "lu_and_piv")
def lu_solve_jvp_lu(lu_and_piv, lu_and_piv_dot, trans, y):
    lu, piv = lu_and_piv
    lu_dot = lu_and_piv_dot[0]
    m_dot = (np.tril(lu_dot, -1) @ np.triu(lu) + _unit_lower(lu) @ np.triu(lu_dot))[lu_inverse_order(piv)]
    m_dot = linalg_mT(m_dot) if trans_code(trans) else m_dot
    return -scipy.linalg.lu_solve(lu_and_piv, m_dot @ y, trans=trans)


@table.jvp(sl.lu_solve, "b")
def lu_solve_jvp_b(lu_and_piv, b_dot, trans):
    return scipy.linalg.lu_solve(lu_and_piv, b_dot, trans=trans)


# --- inv, det, solve ------------------------------------------------------------------------------------

@table.vjp(sl.inv, "a")
def scipy_inv_vjp(assume_a, lower, y, g):
    g_a = -linalg_mT(y) @ g @ linalg_mT(y)
    return triangle_cotangent(g_a, lower, assume_a) if solve_reads(assume_a) else g_a


@table.jvp(sl.inv, "a")
def scipy_inv_jvp(a_dot, assume_a, lower, y):
    return -y @ _solve_operand(a_dot, lower, assume_a, False) @ y


@table.vjp(sl.det, "a")
def scipy_det_vjp(a, y, g):
    return np.expand_dims(g * y, (-2, -1)) * linalg_mT(scipy.linalg.inv(a))


@table.jvp(sl.det, "a")
def scipy_det_jvp(a, a_dot, y):
    return y * np.trace(scipy.linalg.solve(a, a_dot), axis1=-2, axis2=-1)


HERMITIAN = ("her", "hermitian", "pos", "positive definite")
SYMMETRIC = ("sym", "symmetric") + HERMITIAN
GENERAL = (None, "gen", "general")


def solve_reads(assume_a):
    """Whether scipy.linalg.solve reads one triangle of `a` (a symmetric kind); other kinds are refused."""
    if assume_a not in SYMMETRIC + GENERAL:
        raise TapegenError(f"tapegen differentiates scipy.linalg.solve with assume_a 'gen', 'sym', 'her' or 'pos' "
                           f"(got {assume_a!r})", hint="use assume_a='gen' (the default) for a general matrix")
    return assume_a in SYMMETRIC


table.nondiff(solve_reads, "assume_a", spelling="solve_reads")
solve_reads.pure = True


def _solve_operand(a, lower, assume_a, transposed):
    """The matrix scipy.linalg.solve solves with: a (or a^T), or the symmetric (for 'sym') or Hermitian (for
    'her' and 'pos': LAPACK reads the real part of the diagonal) matrix of a's read triangle."""
    if solve_reads(assume_a):
        if assume_a in HERMITIAN:
            return _hermitian_from(a, "L" if lower else "U")
        return _symmetric_from(a, "L" if lower else "U")
    return linalg_mT(a) if transposed else a


def triangle_cotangent(g_m, lower, assume_a):
    """The cotangent of `a` from `g_m`, that of the matrix `_solve_operand` built from a's read triangle."""
    if assume_a in HERMITIAN:
        return _hermitian_triangle(g_m, "L" if lower else "U")
    return _one_triangle(g_m, "L" if lower else "U")


@table.vjp(sl.solve, "a")
def scipy_solve_vjp_a(a, b, lower, assume_a, transposed, y, g):
    m = _solve_operand(a, lower, assume_a, transposed)
    g_m = -as_columns(scipy.linalg.solve(linalg_mT(m), g), b) @ linalg_mT(as_columns(y, b))
    if solve_reads(assume_a):
        return triangle_cotangent(g_m, lower, assume_a)
    return linalg_mT(g_m) if transposed else g_m


@table.vjp(sl.solve, "b")
def scipy_solve_vjp_b(a, lower, assume_a, transposed, g):
    return scipy.linalg.solve(linalg_mT(_solve_operand(a, lower, assume_a, transposed)), g)


@table.jvp(sl.solve, "a")
def scipy_solve_jvp_a(a, a_dot, lower, assume_a, transposed, y):
    m, m_dot = (_solve_operand(a, lower, assume_a, transposed), _solve_operand(a_dot, lower, assume_a, transposed))
    return -scipy.linalg.solve(m, m_dot @ y)


@table.jvp(sl.solve, "b")
def scipy_solve_jvp_b(a, b_dot, lower, assume_a, transposed):
    return scipy.linalg.solve(_solve_operand(a, lower, assume_a, transposed), b_dot)


# --- solve_sylvester: a x + x b = q; the cotangent solves the transposed equation -----------------------

def sylvester_adjoint(a, b, g):
    """The cotangent of q: l with a^T l + l b^T = g."""
    return scipy.linalg.solve_sylvester(linalg_mT(a), linalg_mT(b), g)


@table.vjp(sl.solve_sylvester, "a")
def solve_sylvester_vjp_a(a, b, y, g):
    return -sylvester_adjoint(a, b, g) @ linalg_mT(y)


@table.vjp(sl.solve_sylvester, "b")
def solve_sylvester_vjp_b(a, b, y, g):
    return -linalg_mT(y) @ sylvester_adjoint(a, b, g)


@table.vjp(sl.solve_sylvester, "q")
def solve_sylvester_vjp_q(a, b, g):
    return sylvester_adjoint(a, b, g)


@table.jvp(sl.solve_sylvester, "a")
def solve_sylvester_jvp_a(a, a_dot, b, y):
    return scipy.linalg.solve_sylvester(a, b, -a_dot @ y)


@table.jvp(sl.solve_sylvester, "b")
def solve_sylvester_jvp_b(a, b, b_dot, y):
    return scipy.linalg.solve_sylvester(a, b, -y @ b_dot)


@table.jvp(sl.solve_sylvester, "q")
def solve_sylvester_jvp_q(a, b, q_dot):
    return scipy.linalg.solve_sylvester(a, b, q_dot)


# --- eigh, eigvalsh, svd, qr -----------------------------------------------------------------------------

def standard_eigenproblem(b, eigvals_only, subset_by_index, subset_by_value):
    """Refuse what the eigh rules do not cover: a generalized problem, a subset, or the values only."""
    if b is not None or subset_by_index is not None or subset_by_value is not None or eigvals_only:
        raise TapegenError("tapegen differentiates scipy.linalg.eigh of one symmetric matrix for all its "
                           "eigenvalues and eigenvectors", hint="drop b=, subset_by_index= and subset_by_value=; "
                                                                "use scipy.linalg.eigvalsh for the values only")


table.nondiff(standard_eigenproblem, "b, eigvals_only, subset_by_index, subset_by_value",
              spelling="standard_eigenproblem")


@table.vjp(sl.eigh, "a")
def scipy_eigh_vjp(b, lower, eigvals_only, subset_by_index, subset_by_value, y, g):
    standard_eigenproblem(b, eigvals_only, subset_by_index, subset_by_value)
    g_w, g_v = _cotangents(g, 2)
    return _hermitian_triangle(_eigh_cotangent(y[0], y[1], g_w, g_v), "L" if lower else "U")


@table.jvp(sl.eigh, "a")
def scipy_eigh_jvp(a_dot, b, lower, eigvals_only, subset_by_index, subset_by_value, y):
    standard_eigenproblem(b, eigvals_only, subset_by_index, subset_by_value)
    return _eigh_tangent(y[0], y[1], _hermitian_from(a_dot, "L" if lower else "U"))


@table.vjp(sl.eigvalsh, "a")
def scipy_eigvalsh_vjp(a, b, lower, subset_by_index, subset_by_value, g):
    standard_eigenproblem(b, False, subset_by_index, subset_by_value)
    w, v = scipy.linalg.eigh(a, lower=lower)
    return _hermitian_triangle(_eigh_cotangent(w, v, g, None), "L" if lower else "U")


@table.jvp(sl.eigvalsh, "a")
def scipy_eigvalsh_jvp(a, a_dot, b, lower, subset_by_index, subset_by_value):
    standard_eigenproblem(b, False, subset_by_index, subset_by_value)
    _, v = scipy.linalg.eigh(a, lower=lower)
    return np.real(np.einsum("ji,jk,ki->i", _conj(v), _hermitian_from(a_dot, "L" if lower else "U"), v))


def reduced_svd(a, full_matrices, compute_uv):
    """Refuse the SVDs the rules do not cover: the full one of a non-square matrix, or the values only."""
    m, n = np.shape(a)[-2:]
    if (full_matrices and m != n) or not compute_uv:
        raise TapegenError("tapegen differentiates scipy.linalg.svd with full_matrices=False and compute_uv=True",
                           hint="pass full_matrices=False; for the singular values only use scipy.linalg.svdvals "
                                "or np.linalg.svd(a, compute_uv=False)")


table.nondiff(reduced_svd, "a, full_matrices, compute_uv", spelling="reduced_svd")


@table.vjp(sl.svd, "a")
def scipy_svd_vjp(a, full_matrices, compute_uv, y, g):
    reduced_svd(a, full_matrices, compute_uv)
    u, s, vt = y
    g_u, g_s, g_vt = _cotangents(g, 3)
    return _svd_cotangent(u, s, vt, g_u, g_s, g_vt)


@table.jvp(sl.svd, "a")
def scipy_svd_jvp(a, a_dot, full_matrices, compute_uv, y):
    reduced_svd(a, full_matrices, compute_uv)
    u, s, vt = y
    return _svd_tangent(a_dot, u, s, vt)


def numpy_qr_mode(a, mode, pivoting):
    """NumPy's name for SciPy's qr mode: 'economic' is 'reduced', and 'full' is too for a wide or square a."""
    m, n = np.shape(a)[-2:]
    if pivoting or mode not in ("economic", "full") or (mode == "full" and m > n):
        raise TapegenError(f"tapegen differentiates scipy.linalg.qr with mode='economic' and no pivoting "
                           f"(got mode={mode!r}, pivoting={pivoting} for a {m}x{n} matrix)",
                           hint="pass mode='economic'")
    return "reduced"


table.nondiff(numpy_qr_mode, "a, mode, pivoting", spelling="numpy_qr_mode")


@table.vjp(sl.qr, "a")
def scipy_qr_vjp(a, mode, pivoting, y, g):
    return qr_vjp(a, numpy_qr_mode(a, mode, pivoting), y, g)


@table.jvp(sl.qr, "a")
def scipy_qr_jvp(a, a_dot, mode, pivoting, y):
    return qr_jvp(a, a_dot, numpy_qr_mode(a, mode, pivoting), y)


# --- expm, logm: Fréchet derivatives by the block matrix [[A, E], [0, A]] -------------------------------

def frechet_scale(a, e):
    """A factor bringing e to a's size, where the matrix functions are accurate (Df(a) is linear in e)."""
    return (np.linalg.norm(a) + 1e-300) / (np.linalg.norm(e) + 1e-300)


def frechet_block(a, e):
    """[[a, s e], [0, a]], whose f holds s Df(a)[e] in its upper right block."""
    return np.block([[a, frechet_scale(a, e) * e], [np.zeros_like(a + e), a]])


def frechet_corner(f_block, a, e):
    """Df(a)[e] from f(frechet_block(a, e))."""
    n = np.shape(a)[-1]
    return f_block[:n, n:] / frechet_scale(a, e)


# --- sqrtm: S = sqrtm(A) has S dS + dS S = dA, a Sylvester equation whose own derivative is one again -----

def sqrtm_root(x, A):
    """`x`, the square root S of `A`, checked to have a derivative there: the Sylvester operator X -> S X + X S
    invertible (no two eigenvalues of S sum to zero: A singular has none), and no eigenvalue of A on the negative
    real axis where sqrtm jumps (for a complex A; for a real A, where a repeated one can split into a complex pair
    whose roots land on either side). Tapegen refuses there rather than return the derivative of one side."""
    s = np.linalg.eigvals(x)
    scale = np.max(np.abs(s), initial=0.0) + 1e-300
    exact = 64 * np.finfo(np.result_type(s.dtype, np.float32)).eps * scale
    close = np.sqrt(np.finfo(np.result_type(s.dtype, np.float32)).eps) * scale
    if np.min(np.abs(s[..., :, None] + s[..., None, :]), initial=np.inf) <= exact:
        raise TapegenError("scipy.linalg.sqrtm has no derivative at a singular matrix (its square root S and -S "
                           "share an eigenvalue, so S dS + dS S = dA has no unique solution)",
                           hint="move the matrix away from singular ones (add a small multiple of the identity)")
    on_cut = np.abs(np.real(s)) <= exact
    repeated = on_cut[..., :, None] & on_cut[..., None, :] & (np.abs(s[..., :, None] - s[..., None, :]) <= close)
    if np.iscomplexobj(A) and np.any(on_cut) or np.any(repeated & ~np.eye(s.shape[-1], dtype=bool)):
        raise TapegenError("scipy.linalg.sqrtm has no derivative here: an eigenvalue of the matrix on the negative "
                           "real axis (for a real matrix, a repeated one), where the principal square root jumps",
                           hint="move the matrix's eigenvalues off the negative real axis")
    return x


table.op(sqrtm_root, "x, A", spelling="sqrtm_root", inert=("A",))  # the identity on its first argument:
table.vjp(sqrtm_root, "x")(assign_vjp)                              # its rules are assignment's
table.jvp(sqrtm_root, "x")(assign_jvp)


@table.vjp(sl.sqrtm, "A")
def sqrtm_vjp(A, y, g):
    root = linalg_mT(sqrtm_root(y, A))  # the transposed equation: S^T X + X S^T = g
    return scipy.linalg.solve_sylvester(root, root, g)


@table.jvp(sl.sqrtm, "A")
def sqrtm_jvp(A, A_dot, y):
    root = sqrtm_root(y, A)
    return scipy.linalg.solve_sylvester(root, root, A_dot)


matrix_functions = Formulas(table, globals(), "<tapegen scipy.linalg matrix functions>")
for _fn in (sl.expm, sl.logm):
    _f = f"scipy.linalg.{_fn.__name__}"
    matrix_functions.rule(_fn, "A", "vjp", f"{_fn.__name__}_vjp", ["A", "g"],
                          f"frechet_corner({_f}(frechet_block(linalg_mT(A), g)), linalg_mT(A), g)")
    matrix_functions.rule(_fn, "A", "jvp", f"{_fn.__name__}_jvp", ["A", "A_dot"],
                          f"frechet_corner({_f}(frechet_block(A, A_dot)), A, A_dot)")
matrix_functions.load()


__all__ = ["table", "sylvester_adjoint", "cho_solve_transposed", "triangle", "trans_code", "as_columns", "other_triangle", "lu_permutation", "lu_inverse_order",
           "solve_reads", "triangle_cotangent", "standard_eigenproblem", "reduced_svd", "numpy_qr_mode", "frechet_scale", "frechet_block",
           "frechet_corner", "sqrtm_root"]

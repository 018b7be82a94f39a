"""Rule table tests for products and linear algebra (tapegen/rules/linalg.py).

`ROWS`: reverse mode through the whole transform vs central differences, one row per
(primitive, shape group). `JVPS`: each primitive's JVP rules, called directly, vs a
central-difference directional derivative (gauge-fixed for eigenvectors and singular
vectors). The same JVP cases in float32 check that every rule keeps the dtype.

Functions of eigenvectors and singular vectors are gauge-invariant (`v ** 4`,
`s[0] * outer(u[:, 0], vt[0])`), as the rules require. Inputs are well conditioned:
distinct eigenvalues and singular values, SPD matrices for cholesky.
"""
import operator
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest

import tapegen as tg
from tapegen import rules
from tapegen.rules import linalg as linalg_rules
from tapegen.runtime import meta
from modes import check_modes
from rule_rows import Row, check_jvp_rules, check_vjp_row
from test_complex import check_complex_modes

linalg = np.linalg


def rand(*shape, seed=0):
    return np.random.default_rng(seed + 17 * len(shape) + sum(shape)).standard_normal(shape)


def spd(*shape, seed=0):
    """Symmetric positive definite matrices with well separated eigenvalues."""
    n = shape[-1]
    q, _ = np.linalg.qr(rand(*shape, seed=seed))
    return (q * np.linspace(1.0, 3.0, n)) @ np.swapaxes(q, -1, -2)


def well_conditioned(*shape, seed=0):
    """Square matrices near a multiple of the identity."""
    return rand(*shape, seed=seed) + 3 * np.eye(shape[-1])


def real_spectrum(n, seed=0):
    """A non-symmetric matrix with the real, distinct eigenvalues 1, 2, ..., n."""
    p = well_conditioned(n, n, seed=seed)
    return p @ np.diag(np.arange(1.0, n + 1)) @ np.linalg.inv(p)


def _shapes(args):
    return "".join(str(np.shape(a)).replace(" ", "").replace(",)", ")") for a in args
                   if isinstance(a, (np.ndarray, float)))


def row(name, fn, *args, wrt=(0,), covers, **options):
    return Row(f"{name}-{_shapes(args)}-float64", fn, args, wrt=wrt, covers=covers, **options)


# --- functions of several outputs (statements, so they are defs) ---------------------------------

def slogdet_logdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return logdet


def slogdet_both(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign * np.exp(logdet)


def slogdet_sign_only(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign * np.sum(a)


def eigh_mixed(a):
    w, v = np.linalg.eigh(a)
    return np.sum(v[0] ** 2 * w) + np.sum(v ** 4)


def eigh_upper(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return np.sum(w ** 2) + np.sum(v ** 4)


def eigh_symmetrized(x):
    w, v = np.linalg.eigh(x + x.T)
    return np.sum(w * np.arange(3.0)) + np.sum(v ** 4)


def eigh_values(a):
    w, v = np.linalg.eigh(a)
    return w


def eig_mixed(a):
    w, v = np.linalg.eig(a)
    return np.sum(w ** 2) + np.sum(v ** 4)


def eig_vectors(a):
    w, v = np.linalg.eig(a)
    return np.sum(v ** 4 * w)


def svd_values(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return s


def svd_nuclear(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s)


def svd_top(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return s[0] * np.outer(u[:, 0], vt[0])


def svd_rebuild(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return u @ (s[..., None] * vt)


def svd_vectors(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(u ** 4) + np.sum(vt ** 4)


def svd_square_default(a):
    u, s, vt = np.linalg.svd(a)
    return np.sum(u ** 4 * s) + np.sum(vt ** 4)


def qr_both(a):
    q, r = np.linalg.qr(a)
    return np.sum(q ** 3) + np.sum(r ** 3)


def qr_q(a):
    q, r = np.linalg.qr(a)
    return q


def qr_complete(a):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(q ** 3) + np.sum(r ** 3)


def lstsq_x(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return x


def lstsq_all(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return np.sum(x ** 2) + np.sum(residuals) + np.sum(s ** 2)


def norm_vector_2(x):
    return np.linalg.norm(x, 2)


def norm_inf(x):
    return np.linalg.norm(x, np.inf)


def norm_minus_inf(x):
    return np.linalg.norm(x, -np.inf)


def norm_matrix_inf(x):
    return np.linalg.norm(x, np.inf)


def norm_matrix_minus_inf(x):
    return np.linalg.norm(x, -np.inf)


A23, B34 = rand(2, 3), rand(3, 4)
SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.5], [0.5, -1.0, 2.0]])
SINGULAR[1] = 2 * SINGULAR[0]  # rank 2: det is 0 but its gradient is not

ROWS = [
    # matmul and `@`: every rank combination, broadcasting over batch axes
    row("matmul", lambda a, b: a @ b, rand(3), rand(3), wrt=(0, 1), covers=(operator.matmul,)),
    row("matmul", lambda a, b: a @ b, rand(3), rand(3, 2), wrt=(0, 1), covers=(operator.matmul,)),
    row("matmul", lambda a, b: a @ b, rand(2, 3), rand(3), wrt=(0, 1), covers=(operator.matmul,)),
    row("matmul", lambda a, b: a @ b, rand(2, 3), rand(3, 4), wrt=(0, 1), covers=(operator.matmul,)),
    row("matmul", lambda a, b: a @ b, rand(2, 2, 3), rand(3, 4), wrt=(0, 1), covers=(operator.matmul,)),
    row("matmul", lambda a, b: a @ b, rand(2, 1, 2, 3), rand(3, 3, 2), wrt=(0, 1), covers=(operator.matmul,)),
    row("matmul", lambda a, b: a @ b, rand(3), rand(2, 3, 4), wrt=(0, 1), covers=(operator.matmul,)),
    row("matmul", lambda a, b: a @ b, rand(2, 3, 4), rand(4), wrt=(0, 1), covers=(operator.matmul,)),
    row("np.matmul", lambda a, b: np.matmul(a, b), rand(2, 2, 3), rand(2, 3, 2), wrt=(0, 1), covers=(np.matmul,)),
    # dot: scalars, vectors, matrices, N-d
    row("dot", lambda a, b: np.dot(a, b), 1.5, rand(3), wrt=(0, 1), covers=(np.dot,)),
    row("dot", lambda a, b: np.dot(a, b), rand(2, 3), np.array(0.7), wrt=(0, 1), covers=(np.dot,)),
    row("dot", lambda a, b: np.dot(a, b), rand(3), rand(3), wrt=(0, 1), covers=(np.dot,)),
    row("dot", lambda a, b: np.dot(a, b), rand(2, 3), rand(3), wrt=(0, 1), covers=(np.dot,)),
    row("dot", lambda a, b: np.dot(a, b), rand(3), rand(3, 2), wrt=(0, 1), covers=(np.dot,)),
    row("dot", lambda a, b: np.dot(a, b), rand(3), rand(2, 3, 2), wrt=(0, 1), covers=(np.dot,)),
    row("dot", lambda a, b: np.dot(a, b), rand(2, 3), rand(2, 3, 2), wrt=(0, 1), covers=(np.dot,)),
    row("dot", lambda a, b: np.dot(a, b), rand(2, 2, 3), rand(3), wrt=(0, 1), covers=(np.dot,)),
    row("dot.method", lambda a, b: a.dot(b), rand(2, 3), rand(3, 2), wrt=(0, 1), covers=(np.dot,)),
    # inner, outer, vdot
    row("inner", lambda a, b: np.inner(a, b), rand(3), rand(3), wrt=(0, 1), covers=(np.inner,)),
    row("inner", lambda a, b: np.inner(a, b), rand(2, 3), rand(4, 3), wrt=(0, 1), covers=(np.inner,)),
    row("inner", lambda a, b: np.inner(a, b), rand(2, 2, 3), rand(3), wrt=(0, 1), covers=(np.inner,)),
    row("inner", lambda a, b: np.inner(a, b), 2.0, rand(2, 3), wrt=(0, 1), covers=(np.inner,)),
    row("inner", lambda a, b: np.inner(a, b), rand(2, 3), 2.0, wrt=(0, 1), covers=(np.inner,)),
    row("outer", lambda a, b: np.outer(a, b), rand(3), rand(4), wrt=(0, 1), covers=(np.outer,)),
    row("outer", lambda a, b: np.outer(a, b), rand(2, 2), rand(3), wrt=(0, 1), covers=(np.outer,)),
    row("vdot", lambda a, b: np.vdot(a, b), rand(3), rand(3), wrt=(0, 1), covers=(np.vdot,)),
    row("vdot", lambda a, b: np.vdot(a, b), rand(2, 3), rand(3, 2), wrt=(0, 1), covers=(np.vdot,)),
    # tensordot: int axes and pairs of lists, in any order, negative
    row("tensordot[2]", lambda a, b: np.tensordot(a, b), rand(2, 3, 4), rand(3, 4, 2), wrt=(0, 1),
        covers=(np.tensordot,)),
    row("tensordot[1]", lambda a, b: np.tensordot(a, b, 1), rand(2, 3), rand(3, 4), wrt=(0, 1),
        covers=(np.tensordot,)),
    row("tensordot[0]", lambda a, b: np.tensordot(a, b, 0), rand(2), rand(3), wrt=(0, 1), covers=(np.tensordot,)),
    row("tensordot[pairs]", lambda a, b: np.tensordot(a, b, axes=([1, 0], [0, 2])), rand(3, 2, 4), rand(2, 5, 3),
        wrt=(0, 1), covers=(np.tensordot,)),
    row("tensordot[unsorted-pairs]", lambda a, b: np.tensordot(a, b, axes=([0, 1], [2, 0])), rand(3, 2, 4),
        rand(2, 5, 3), wrt=(0, 1), covers=(np.tensordot,)),
    row("tensordot[negative]", lambda a, b: np.tensordot(a, b, ([-1], [0])), rand(2, 3), rand(3, 2, 2),
        wrt=(0, 1), covers=(np.tensordot,)),
    row("tensordot[ints]", lambda a, b: np.tensordot(a, b, (0, 1)), rand(3, 2), rand(2, 3), wrt=(0, 1),
        covers=(np.tensordot,)),
    # einsum in all its forms
    row("einsum[ij,jk->ik]", lambda a, b: np.einsum("ij,jk->ik", a, b), A23, B34, wrt=(0, 1), covers=(np.einsum,)),
    row("einsum[ij,jk]", lambda a, b: np.einsum("ij,jk", a, b), A23, B34, wrt=(0, 1), covers=(np.einsum,)),
    row("einsum[ii->i]", lambda a: np.einsum("ii->i", a), rand(3, 3), covers=(np.einsum,)),
    row("einsum[ii]", lambda a: np.einsum("ii", a), rand(3, 3), covers=(np.einsum,)),
    row("einsum[bii->bi]", lambda a: np.einsum("bii->bi", a), rand(2, 3, 3), covers=(np.einsum,)),
    row("einsum[iij,j->i]", lambda a, b: np.einsum("iij,j->i", a, b), rand(3, 3, 2), rand(2), wrt=(0, 1),
        covers=(np.einsum,)),
    row("einsum[iij->ji]", lambda a: np.einsum("iij->ji", a), rand(2, 2, 3), covers=(np.einsum,)),
    row("einsum[ij->]", lambda a: np.einsum("ij->", a), rand(2, 3), covers=(np.einsum,)),
    row("einsum[ij->ji]", lambda a: np.einsum("ij->ji", a), rand(2, 3), covers=(np.einsum,)),
    row("einsum[ij,k->i]", lambda a, b: np.einsum("ij,k->i", a, b), rand(2, 3), rand(4), wrt=(0, 1),
        covers=(np.einsum,)),
    row("einsum[ij,ij->ij]", lambda a, b: np.einsum("ij,ij->ij", a, b), rand(1, 3), rand(4, 3), wrt=(0, 1),
        covers=(np.einsum,)),
    row("einsum[...ij,...jk->...ik]", lambda a, b: np.einsum("...ij,...jk->...ik", a, b), rand(2, 2, 3),
        rand(3, 2), wrt=(0, 1), covers=(np.einsum,)),
    row("einsum[...ij,...jk->...ik]", lambda a, b: np.einsum("...ij,...jk->...ik", a, b), rand(2, 1, 2, 3),
        rand(3, 3, 2), wrt=(0, 1), covers=(np.einsum,)),
    row("einsum[...i,...i]", lambda a, b: np.einsum("...i,...i", a, b), rand(2, 3), rand(3), wrt=(0, 1),
        covers=(np.einsum,)),
    row("einsum[i...->...]", lambda a: np.einsum("i...->...", a), rand(3, 2), covers=(np.einsum,)),
    row("einsum[ij,jk,kl->il]", lambda a, b, c: np.einsum("ij,jk,kl->il", a, b, c), rand(2, 3), rand(3, 2),
        rand(2, 2), wrt=(0, 1, 2), covers=(np.einsum,)),
    row("einsum[i,i,i->]", lambda a, b, c: np.einsum("i,i,i->", a, b, c), rand(3), rand(3), rand(3),
        wrt=(0, 1, 2), covers=(np.einsum,)),
    row("einsum[Ab,bC->AC]", lambda a, b: np.einsum("Ab, bC -> AC", a, b), A23, B34, wrt=(0, 1),
        covers=(np.einsum,)),
    row("einsum[same-operand-twice]", lambda a: np.einsum("i,i", a, a), rand(3), covers=(np.einsum,)),
    row("einsum[optimize]", lambda a, b, c: np.einsum("ij,jk,kl->il", a, b, c, optimize=True), rand(2, 3),
        rand(3, 2), rand(2, 2), wrt=(0, 1, 2), covers=(np.einsum,)),
    row("einsum[one-constant]", lambda a: np.einsum("ij,jk->ik", a, B34), A23, covers=(np.einsum,)),
    row("einsum[interleaved]", lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2]), A23, B34, wrt=(0, 1),
        covers=(np.einsum,)),
    row("einsum[interleaved,implicit]", lambda a, b: np.einsum(a, [5, 1], b, [1, 0]), A23, B34, wrt=(0, 1),
        covers=(np.einsum,)),
    row("einsum[interleaved,ellipsis]", lambda a, b: np.einsum(a, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2]),
        rand(2, 2, 3), B34, wrt=(0, 1), covers=(np.einsum,)),
    row("einsum[interleaved,second-only]", lambda b: np.einsum(A23, [0, 1], b, [1, 2], [2]), B34,
        covers=(np.einsum,)),
    row("einsum[interleaved,diagonal]", lambda a: np.einsum(a, [0, 0], [0]), rand(3, 3), covers=(np.einsum,)),
    # trace, kron, cross
    row("trace", lambda a: np.trace(a), rand(3, 3), covers=(np.trace,)),
    row("trace[offset=1]", lambda a: np.trace(a, offset=1), rand(3, 4), covers=(np.trace,)),
    row("trace[offset=-1]", lambda a: np.trace(a, -1), rand(4, 3), covers=(np.trace,)),
    row("trace[axis1=1,axis2=2]", lambda a: np.trace(a, axis1=1, axis2=2), rand(2, 3, 3), covers=(np.trace,)),
    row("trace[axis1=2,axis2=0]", lambda a: np.trace(a, 0, 2, 0), rand(3, 2, 3), covers=(np.trace,)),
    row("trace.method", lambda a: a.trace(), rand(3, 3), covers=(np.trace,)),
    row("kron", lambda a, b: np.kron(a, b), rand(2, 2), rand(2, 3), wrt=(0, 1), covers=(np.kron,)),
    row("kron", lambda a, b: np.kron(a, b), rand(2), rand(3), wrt=(0, 1), covers=(np.kron,)),
    row("kron", lambda a, b: np.kron(a, b), rand(2, 3), rand(2), wrt=(0, 1), covers=(np.kron,)),
    row("kron", lambda a, b: np.kron(a, b), 2.0, rand(3), wrt=(0, 1), covers=(np.kron,)),
    row("cross", lambda a, b: np.cross(a, b), rand(3), rand(3), wrt=(0, 1), covers=(np.cross,)),
    row("cross", lambda a, b: np.cross(a, b), rand(4, 3), rand(3), wrt=(0, 1), covers=(np.cross,)),
    row("cross[axis=0]", lambda a, b: np.cross(a, b, axis=0), rand(3, 4), rand(3, 4), wrt=(0, 1),
        covers=(np.cross,)),
    row("cross[axisa=0,axisb=1,axisc=0]", lambda a, b: np.cross(a, b, axisa=0, axisb=1, axisc=0), rand(3, 2),
        rand(2, 3), wrt=(0, 1), covers=(np.cross,)),
    # det, slogdet, inv, pinv
    row("det", lambda a: np.linalg.det(a), well_conditioned(3, 3), covers=(linalg.det,)),
    row("det", lambda a: np.linalg.det(a), rand(1, 1), covers=(linalg.det,)),
    row("det", lambda a: np.linalg.det(a), well_conditioned(2, 3, 3), covers=(linalg.det,)),
    row("det[singular]", lambda a: np.linalg.det(a), SINGULAR, covers=(linalg.det,)),
    row("slogdet", slogdet_logdet, well_conditioned(3, 3), covers=(linalg.slogdet,)),
    row("slogdet[negative]", slogdet_logdet, well_conditioned(3, 3)[::-1].copy(), covers=(linalg.slogdet,)),
    row("slogdet", slogdet_logdet, well_conditioned(2, 3, 3), covers=(linalg.slogdet,)),
    row("slogdet[both]", slogdet_both, well_conditioned(3, 3), covers=(linalg.slogdet,)),
    row("slogdet[sign-only]", slogdet_sign_only, well_conditioned(3, 3), covers=(linalg.slogdet,)),
    row("slogdet[indexed]", lambda a: np.linalg.slogdet(a)[1], well_conditioned(3, 3), covers=(linalg.slogdet,)),
    row("inv", lambda a: np.linalg.inv(a), well_conditioned(3, 3), covers=(linalg.inv,)),
    row("inv", lambda a: np.linalg.inv(a), well_conditioned(2, 3, 3), covers=(linalg.inv,)),
    row("pinv", lambda a: np.linalg.pinv(a), well_conditioned(3, 3), covers=(linalg.pinv,)),
    row("pinv", lambda a: np.linalg.pinv(a), rand(4, 2), covers=(linalg.pinv,)),
    row("pinv", lambda a: np.linalg.pinv(a), rand(2, 4), covers=(linalg.pinv,)),
    row("pinv", lambda a: np.linalg.pinv(a), rand(2, 4, 3), covers=(linalg.pinv,)),
    # solve (vector and matrix right-hand sides, batched, broadcast) and lstsq
    row("solve", lambda a, b: np.linalg.solve(a, b), well_conditioned(3, 3), rand(3), wrt=(0, 1),
        covers=(linalg.solve,)),
    row("solve", lambda a, b: np.linalg.solve(a, b), well_conditioned(3, 3), rand(3, 2), wrt=(0, 1),
        covers=(linalg.solve,)),
    row("solve", lambda a, b: np.linalg.solve(a, b), well_conditioned(2, 3, 3), rand(3), wrt=(0, 1),
        covers=(linalg.solve,)),
    row("solve", lambda a, b: np.linalg.solve(a, b), well_conditioned(2, 3, 3), rand(2, 3, 2), wrt=(0, 1),
        covers=(linalg.solve,)),
    row("solve", lambda a, b: np.linalg.solve(a, b), well_conditioned(3, 3), rand(2, 3, 2), wrt=(0, 1),
        covers=(linalg.solve,)),
    row("lstsq[x]", lstsq_x, rand(5, 3), rand(5), wrt=(0, 1), covers=(linalg.lstsq,)),
    row("lstsq[all]", lstsq_all, rand(5, 3), rand(5, 2), wrt=(0, 1), covers=(linalg.lstsq,)),
    row("lstsq[all]", lstsq_all, rand(5, 3), rand(5), wrt=(0, 1), covers=(linalg.lstsq,)),
    row("lstsq[wide]", lstsq_x, rand(3, 5), rand(3), wrt=(0, 1), covers=(linalg.lstsq,)),
    row("lstsq[indexed]", lambda a, b: np.linalg.lstsq(a, b)[0], rand(4, 2), rand(4, 2), wrt=(0, 1),
        covers=(linalg.lstsq,)),
    # norm: vector and matrix orders, axis, keepdims, ties, and zero
    row("norm", lambda x: np.linalg.norm(x), rand(4), covers=(linalg.norm,)),
    row("norm", lambda x: np.linalg.norm(x), rand(2, 3, 2), covers=(linalg.norm,)),
    row("norm[zero]", lambda x: np.linalg.norm(x), np.zeros(3), covers=(linalg.norm,)),
    row("norm[ord=2]", norm_vector_2, rand(4), covers=(linalg.norm,)),
    row("norm[ord=1]", lambda x: np.linalg.norm(x, 1), rand(4), covers=(linalg.norm,)),
    row("norm[ord=1,zero-entry]", lambda x: np.linalg.norm(x, 1), np.array([1.0, 0.0, -2.0]),
        covers=(linalg.norm,)),
    row("norm[ord=inf]", norm_inf, rand(4), covers=(linalg.norm,)),
    row("norm[ord=inf,tie]", norm_inf, np.array([1.0, -3.0, 3.0]), covers=(linalg.norm,)),
    row("norm[ord=-inf]", norm_minus_inf, rand(4), covers=(linalg.norm,)),
    row("norm[ord=0]", lambda x: np.linalg.norm(x, 0), rand(4), covers=(linalg.norm,)),
    row("norm[ord=3]", lambda x: np.linalg.norm(x, 3), rand(4), covers=(linalg.norm,)),
    row("norm[ord=3,zero]", lambda x: np.linalg.norm(x, 3), np.zeros(3), covers=(linalg.norm,)),
    row("norm[axis=1]", lambda x: np.linalg.norm(x, axis=1), rand(3, 4), covers=(linalg.norm,)),
    row("norm[axis=-1,keepdims]", lambda x: np.linalg.norm(x, axis=-1, keepdims=True), rand(3, 4),
        covers=(linalg.norm,)),
    row("norm[axis=0,ord=1]", lambda x: np.linalg.norm(x, 1, 0), rand(3, 4), covers=(linalg.norm,)),
    row("norm[fro]", lambda x: np.linalg.norm(x, "fro"), rand(3, 4), covers=(linalg.norm,)),
    row("norm[nuc]", lambda x: np.linalg.norm(x, "nuc"), rand(3, 4), covers=(linalg.norm,)),
    row("norm[matrix,ord=2]", lambda x: np.linalg.norm(x, 2), rand(3, 4), covers=(linalg.norm,)),
    row("norm[matrix,ord=-2]", lambda x: np.linalg.norm(x, -2), rand(4, 3), covers=(linalg.norm,)),
    row("norm[matrix,ord=1]", lambda x: np.linalg.norm(x, 1), rand(3, 4), covers=(linalg.norm,)),
    row("norm[matrix,ord=-1]", lambda x: np.linalg.norm(x, -1), rand(3, 4), covers=(linalg.norm,)),
    row("norm[matrix,ord=inf]", norm_matrix_inf, rand(3, 4), covers=(linalg.norm,)),
    row("norm[matrix,ord=-inf]", norm_matrix_minus_inf, rand(3, 4), covers=(linalg.norm,)),
    row("norm[matrix,zero]", lambda x: np.linalg.norm(x, "fro"), np.zeros((2, 2)), covers=(linalg.norm,)),
    row("norm[matrix,ord=2,zero]", lambda x: np.linalg.norm(x, 2), np.zeros((2, 3)), covers=(linalg.norm,)),
    row("norm[nuc,zero]", lambda x: np.linalg.norm(x, "nuc"), np.zeros((2, 3)), covers=(linalg.norm,)),
    row("norm[axis=(2,0),nuc,keepdims]", lambda x: np.linalg.norm(x, "nuc", (2, 0), True), rand(3, 2, 4),
        covers=(linalg.norm,)),
    row("norm[axis=(1,2),ord=1]", lambda x: np.linalg.norm(x, 1, axis=(1, 2)), rand(2, 3, 3),
        covers=(linalg.norm,)),
    # eigenvalue problems: eigh reads one triangle, so non-symmetric inputs test that too
    row("eigh", eigh_mixed, spd(3, 3), covers=(linalg.eigh,)),
    row("eigh[non-symmetric-input]", eigh_mixed, spd(3, 3) + 0.1 * rand(3, 3), covers=(linalg.eigh,)),
    row("eigh[UPLO=U]", eigh_upper, spd(3, 3) + 0.1 * rand(3, 3), covers=(linalg.eigh,)),
    row("eigh[x+x.T]", eigh_symmetrized, spd(3, 3), covers=(linalg.eigh,)),
    row("eigh[values]", eigh_values, spd(2, 3, 3), covers=(linalg.eigh,)),
    row("eigh[indexed]", lambda a: np.linalg.eigh(a)[0], spd(3, 3), covers=(linalg.eigh,)),
    row("eigvalsh", lambda a: np.linalg.eigvalsh(a), spd(3, 3) + 0.1 * rand(3, 3), covers=(linalg.eigvalsh,)),
    row("eigvalsh[UPLO=U]", lambda a: np.linalg.eigvalsh(a, "U"), spd(3, 3) + 0.1 * rand(3, 3),
        covers=(linalg.eigvalsh,)),
    row("eigvalsh", lambda a: np.linalg.eigvalsh(a), spd(2, 3, 3), covers=(linalg.eigvalsh,)),
    row("eigvalsh[repeated]", lambda a: np.sum(np.linalg.eigvalsh(a)), np.eye(3), covers=(linalg.eigvalsh,)),
    row("eigh[repeated]", lambda a: np.sum(np.linalg.eigh(a)[0] ** 2), np.eye(3), covers=(linalg.eigh,)),
    row("eig", eig_mixed, real_spectrum(3), covers=(linalg.eig,)),
    row("eig[vectors]", eig_vectors, real_spectrum(3, seed=1), covers=(linalg.eig,)),
    row("eigvals", lambda a: np.linalg.eigvals(a), real_spectrum(3), covers=(linalg.eigvals,)),
    # cholesky: reads the lower triangle (upper=True: the upper one)
    row("cholesky", lambda a: np.linalg.cholesky(a), spd(3, 3), covers=(linalg.cholesky,)),
    row("cholesky", lambda a: np.linalg.cholesky(a), spd(2, 3, 3), covers=(linalg.cholesky,)),
    row("cholesky[upper]", lambda a: np.linalg.cholesky(a, upper=True), spd(3, 3), covers=(linalg.cholesky,)),
    row("cholesky[x@x.T]", lambda x: np.linalg.cholesky(x @ x.T + np.eye(3)), rand(3, 3),
        covers=(linalg.cholesky,)),
    # svd: gauge-invariant functions of u and vt
    row("svd[s]", svd_values, rand(4, 3), covers=(linalg.svd,)),
    row("svd[repeated]", svd_nuclear, np.linalg.qr(rand(3, 3))[0], covers=(linalg.svd,)),
    row("svd[top]", svd_top, rand(3, 3), covers=(linalg.svd,)),
    row("svd[top]", svd_top, rand(4, 3), covers=(linalg.svd,)),
    row("svd[top]", svd_top, rand(3, 4), covers=(linalg.svd,)),
    row("svd[rebuild]", svd_rebuild, rand(2, 4, 3), covers=(linalg.svd,)),
    row("svd[vectors]", svd_vectors, rand(4, 3), covers=(linalg.svd,)),
    row("svd[vectors]", svd_vectors, rand(3, 4), covers=(linalg.svd,)),
    row("svd[square-default]", svd_square_default, rand(3, 3), covers=(linalg.svd,)),
    row("svd[compute_uv=False]", lambda a: np.linalg.svd(a, compute_uv=False), rand(2, 3, 4),
        covers=(linalg.svd,)),
    # qr: reduced, and the modes that agree with it
    row("qr", qr_both, rand(3, 3), covers=(linalg.qr,)),
    row("qr", qr_both, rand(4, 3), covers=(linalg.qr,)),
    row("qr", qr_both, rand(3, 5), covers=(linalg.qr,)),
    row("qr[q]", qr_q, rand(2, 4, 3), covers=(linalg.qr,)),
    row("qr[mode=r]", lambda a: np.linalg.qr(a, mode="r"), rand(4, 3), covers=(linalg.qr,)),
    row("qr[mode=complete]", qr_complete, rand(2, 4), covers=(linalg.qr,)),
    # matrix_power, multi_dot
    row("matrix_power[3]", lambda a: np.linalg.matrix_power(a, 3), rand(3, 3), covers=(linalg.matrix_power,)),
    row("matrix_power[1]", lambda a: np.linalg.matrix_power(a, 1), rand(3, 3), covers=(linalg.matrix_power,)),
    row("matrix_power[0]", lambda a: np.linalg.matrix_power(a, 0), rand(3, 3), covers=(linalg.matrix_power,)),
    row("matrix_power[-2]", lambda a: np.linalg.matrix_power(a, -2), well_conditioned(3, 3),
        covers=(linalg.matrix_power,)),
    row("matrix_power[2]", lambda a: np.linalg.matrix_power(a, 2), rand(2, 3, 3), covers=(linalg.matrix_power,)),
    row("multi_dot", lambda a, b, c: np.linalg.multi_dot([a, b, c]), rand(2, 3), rand(3, 4), rand(4, 2),
        wrt=(0, 1, 2), covers=(linalg.multi_dot,)),
    row("multi_dot", lambda a, b, c: np.linalg.multi_dot([a, b, c]), rand(3), rand(3, 4), rand(4),
        wrt=(0, 1, 2), covers=(linalg.multi_dot,)),
    row("multi_dot", lambda a, b: np.linalg.multi_dot([a, b]), rand(3), rand(3, 2), wrt=(0, 1),
        covers=(linalg.multi_dot,)),
    row("multi_dot", lambda a, b, c, d: np.linalg.multi_dot([a, b, c, d]), rand(2, 3), rand(3, 2), rand(2, 2),
        rand(2), wrt=(0, 1, 2, 3), covers=(linalg.multi_dot,)),
]

if hasattr(np.linalg, "vector_norm"):  # NumPy 2's array-API spellings
    ROWS += [
        row("linalg.matmul", lambda a, b: np.linalg.matmul(a, b), rand(2, 2, 3), rand(3), wrt=(0, 1),
            covers=(linalg.matmul,)),
        row("linalg.outer", lambda a, b: np.linalg.outer(a, b), rand(3), rand(2), wrt=(0, 1), covers=(linalg.outer,)),
        row("linalg.tensordot", lambda a, b: np.linalg.tensordot(a, b, axes=([0, 1], [2, 0])), rand(3, 2, 4),
            rand(2, 5, 3), wrt=(0, 1), covers=(linalg.tensordot,)),
        row("linalg.cross", lambda a, b: np.linalg.cross(a, b, axis=0), rand(3, 2), rand(3, 1), wrt=(0, 1),
            covers=(linalg.cross,)),
        row("linalg.trace", lambda a: np.linalg.trace(a, offset=-1), rand(2, 3, 4), covers=(linalg.trace,)),
        row("linalg.vecdot", lambda a, b: np.linalg.vecdot(a, b), rand(2, 3), rand(3), wrt=(0, 1),
            covers=(linalg.vecdot,)),
        row("linalg.vecdot[axis=0]", lambda a, b: np.linalg.vecdot(a, b, axis=0), rand(3, 2), rand(3, 1),
            wrt=(0, 1), covers=(linalg.vecdot,)),
        row("linalg.vecdot[axis=-2]", lambda a, b: np.linalg.vecdot(a, b, axis=-2), rand(2, 3, 2), rand(3, 1),
            wrt=(0, 1), covers=(linalg.vecdot,)),
        row("vecdot", lambda a, b: np.vecdot(a, b), rand(4, 1, 3), rand(2, 3), wrt=(0, 1), covers=(np.vecdot,)),
        row("vector_norm", lambda x: np.linalg.vector_norm(x), rand(3, 4), covers=(linalg.vector_norm,)),
        row("vector_norm[zero]", lambda x: np.linalg.vector_norm(x), np.zeros((2, 2)), covers=(linalg.vector_norm,)),
        row("vector_norm[ord=1,axis=(0,2),keepdims]", lambda x: np.linalg.vector_norm(x, axis=(0, 2), keepdims=True,
                                                                                      ord=1),
            rand(2, 3, 2), covers=(linalg.vector_norm,)),
        row("vector_norm[ord=inf,axis=-1]", lambda x: np.linalg.vector_norm(x, axis=-1, ord=np.inf), rand(3, 4),
            covers=(linalg.vector_norm,)),
        row("matrix_norm", lambda x: np.linalg.matrix_norm(x), rand(2, 3, 4), covers=(linalg.matrix_norm,)),
        row("matrix_norm[nuc,keepdims]", lambda x: np.linalg.matrix_norm(x, keepdims=True, ord="nuc"), rand(2, 3, 4),
            covers=(linalg.matrix_norm,)),
        row("matrix_norm[ord=1]", lambda x: np.linalg.matrix_norm(x, ord=1), rand(3, 4), covers=(linalg.matrix_norm,)),
        row("svdvals", lambda x: np.linalg.svdvals(x), rand(2, 4, 3), covers=(linalg.svdvals,)),
    ]


@pytest.mark.parametrize("case", ROWS, ids=[r.id for r in ROWS])
def test_vjp(case):
    check_vjp_row(case)


def test_row_ids_are_unique():
    ids = [r.id for r in ROWS]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_cross_of_2_vectors():
    """2-vectors are deprecated in NumPy 2 but still work: the output is the z component."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for a, b in ((rand(2), rand(2)), (rand(2), rand(3)), (rand(4, 3), rand(2))):
            check_vjp_row(Row("cross-2d", lambda a, b: np.cross(a, b), (a, b), wrt=(0, 1)))


# --- JVP rules ----------------------------------------------------------------------------------

@dataclass
class Jvp:
    """JVP rules of primitive `fn` at `inputs` (by parameter name), differentiated in `wrt`.

    `gauge(y, y_other)` makes a nearby output comparable to `y` (eigenvector signs).
    """

    id: str
    fn: object
    inputs: dict
    wrt: tuple = ("a",)
    gauge: object = None
    rtol: float = 1e-5
    atol: float = 1e-7
    tangents: dict = field(default_factory=dict)

    def __post_init__(self):
        prim = rules.lookup(self.fn)
        self.inputs = {**prim.defaults, **self.inputs}
        for k, name in enumerate(self.wrt):
            value = self.inputs[name]
            if isinstance(value, (list, tuple)):
                self.tangents[name] = [rand(*np.shape(x), seed=90 + k + i) for i, x in enumerate(value)]
            else:
                self.tangents[name] = rand(*np.shape(value), seed=90 + k)


def align_columns(y, other):
    """Flip the sign of each eigenvector (column) of `other` to agree with `y`'s."""
    w, v = other
    signs = np.sign(np.sum(y[1] * v, axis=-2, keepdims=True))
    return w, v * signs


def align_singular(y, other):
    u, s, vt = other
    signs = np.sign(np.sum(y[0] * u, axis=-2, keepdims=True))
    return u * signs, s, vt * np.swapaxes(signs, -1, -2)


JVPS = [
    Jvp("matmul-(2,3)(3,4)", operator.matmul, {"x1": A23, "x2": B34}, ("x1", "x2")),
    Jvp("matmul-(3)(2,3,4)", operator.matmul, {"x1": rand(3), "x2": rand(2, 3, 4)}, ("x1", "x2")),
    Jvp("np.matmul-(2,2,3)(3)", np.matmul, {"x1": rand(2, 2, 3), "x2": rand(3)}, ("x1", "x2")),
    Jvp("dot-(2,3)(2,3,2)", np.dot, {"a": A23, "b": rand(2, 3, 2)}, ("a", "b")),
    Jvp("inner-(2,3)(4,3)", np.inner, {"a": A23, "b": rand(4, 3)}, ("a", "b")),
    Jvp("outer-(2,2)(3)", np.outer, {"a": rand(2, 2), "b": rand(3)}, ("a", "b")),
    Jvp("vdot-(2,3)(3,2)", np.vdot, {"a": A23, "b": rand(3, 2)}, ("a", "b")),
    Jvp("tensordot-(3,2,4)(2,5,3)", np.tensordot, {"a": rand(3, 2, 4), "b": rand(2, 5, 3), "axes": ([1, 0], [0, 2])},
        ("a", "b")),
    Jvp("einsum-(2,3)(3,4)(4,2)", np.einsum,
        {"subscripts": "ij,jk,kl->il", "operands": (A23, B34, rand(4, 2))}, ("operands",)),
    Jvp("einsum-(3,3)", np.einsum, {"subscripts": "ii", "operands": (rand(3, 3),)}, ("operands",)),
    Jvp("trace-(2,3,4)", np.trace, {"a": rand(2, 3, 4), "offset": 1, "axis1": 2, "axis2": 1}),
    Jvp("kron-(2,3)(2)", np.kron, {"a": A23, "b": rand(2)}, ("a", "b")),
    Jvp("cross-(3,4)(4,3)", np.cross, {"a": rand(3, 4), "b": rand(4, 3), "axisa": 0}, ("a", "b")),
    Jvp("det-(2,3,3)", linalg.det, {"a": well_conditioned(2, 3, 3)}),
    Jvp("det-singular", linalg.det, {"a": SINGULAR}),
    Jvp("slogdet-(2,3,3)", linalg.slogdet, {"a": well_conditioned(2, 3, 3)}),
    Jvp("inv-(2,3,3)", linalg.inv, {"a": well_conditioned(2, 3, 3)}),
    Jvp("pinv-(4,2)", linalg.pinv, {"a": rand(4, 2)}),
    Jvp("pinv-(2,2,4)", linalg.pinv, {"a": rand(2, 2, 4)}),
    Jvp("solve-(3,3)(3)", linalg.solve, {"a": well_conditioned(3, 3), "b": rand(3)}, ("a", "b")),
    Jvp("solve-(2,3,3)(3)", linalg.solve, {"a": well_conditioned(2, 3, 3), "b": rand(3)}, ("a",)),
    Jvp("solve-(2,3,3)(2,3,2)", linalg.solve, {"a": well_conditioned(2, 3, 3), "b": rand(2, 3, 2)}, ("a", "b")),
    Jvp("lstsq-(5,3)(5,2)", linalg.lstsq, {"a": rand(5, 3), "b": rand(5, 2)}, ("a", "b")),
    Jvp("lstsq-(5,3)(5)", linalg.lstsq, {"a": rand(5, 3), "b": rand(5)}, ("a",)),
    Jvp("lstsq-(3,5)(3)", linalg.lstsq, {"a": rand(3, 5), "b": rand(3)}, ("b",)),
    Jvp("norm-(3,4)", linalg.norm, {"x": rand(3, 4)}, ("x",)),
    Jvp("norm[axis=1,keepdims]-(3,4)", linalg.norm, {"x": rand(3, 4), "axis": 1, "keepdims": True}, ("x",)),
    Jvp("norm[ord=3,axis=0]-(3,4)", linalg.norm, {"x": rand(3, 4), "ord": 3, "axis": 0}, ("x",)),
    Jvp("norm[nuc]-(2,3,4)", linalg.norm, {"x": rand(2, 3, 4), "ord": "nuc", "axis": (1, 2)}, ("x",)),
    Jvp("norm[ord=-inf]-(3,4)", linalg.norm, {"x": rand(3, 4), "ord": -np.inf}, ("x",)),
    Jvp("eigh-(2,3,3)", linalg.eigh, {"a": spd(2, 3, 3)}, gauge=align_columns),
    Jvp("eigh[UPLO=U]-(3,3)", linalg.eigh, {"a": spd(3, 3) + 0.1 * rand(3, 3), "UPLO": "U"}, gauge=align_columns),
    Jvp("eigvalsh-(3,3)", linalg.eigvalsh, {"a": spd(3, 3) + 0.1 * rand(3, 3)}),
    Jvp("eig-(3,3)", linalg.eig, {"a": real_spectrum(3)}, gauge=align_columns),
    Jvp("eigvals-(3,3)", linalg.eigvals, {"a": real_spectrum(3)}),
    Jvp("cholesky-(2,3,3)", linalg.cholesky, {"a": spd(2, 3, 3)}),
    Jvp("cholesky[upper]-(3,3)", linalg.cholesky, {"a": spd(3, 3), "upper": True}),
    Jvp("svd-(4,3)", linalg.svd, {"a": rand(4, 3), "full_matrices": False}, gauge=align_singular),
    Jvp("svd-(2,3,4)", linalg.svd, {"a": rand(2, 3, 4), "full_matrices": False}, gauge=align_singular),
    Jvp("svd-(3,3)", linalg.svd, {"a": rand(3, 3)}, gauge=align_singular),
    Jvp("svd[compute_uv=False]-(3,4)", linalg.svd, {"a": rand(3, 4), "compute_uv": False}),
    Jvp("qr-(4,3)", linalg.qr, {"a": rand(4, 3)}),
    Jvp("qr-(2,3,5)", linalg.qr, {"a": rand(2, 3, 5)}),
    Jvp("qr[mode=r]-(3,3)", linalg.qr, {"a": rand(3, 3), "mode": "r"}),
    Jvp("matrix_power[4]-(3,3)", linalg.matrix_power, {"a": rand(3, 3), "n": 4}),
    Jvp("matrix_power[-3]-(2,3,3)", linalg.matrix_power, {"a": well_conditioned(2, 3, 3), "n": -3}),
    Jvp("matrix_power[0]-(3,3)", linalg.matrix_power, {"a": rand(3, 3), "n": 0}),
    Jvp("multi_dot-(3)(3,4)(4,2)", linalg.multi_dot, {"arrays": [rand(3), B34, rand(4, 2)]}, ("arrays",)),
]

if hasattr(np.linalg, "vector_norm"):
    JVPS += [
        Jvp("linalg.matmul-(2,3)(3,4)", linalg.matmul, {"x1": A23, "x2": B34}, ("x1", "x2")),
        Jvp("linalg.outer-(3)(2)", linalg.outer, {"x1": rand(3), "x2": rand(2)}, ("x1", "x2")),
        Jvp("linalg.tensordot-(2,3)(3,4)", linalg.tensordot, {"x1": A23, "x2": B34, "axes": 1}, ("x1", "x2")),
        Jvp("linalg.cross-(3,2)(3,1)", linalg.cross, {"x1": rand(3, 2), "x2": rand(3, 1), "axis": 0}, ("x1", "x2")),
        Jvp("linalg.trace-(2,3,4)", linalg.trace, {"x": rand(2, 3, 4), "offset": 1}, ("x",)),
        Jvp("linalg.vecdot-(3,2)(3,1)", linalg.vecdot, {"x1": rand(3, 2), "x2": rand(3, 1), "axis": 0},
            ("x1", "x2")),
        Jvp("vecdot-(2,3)(3)", np.vecdot, {"x1": A23, "x2": rand(3)}, ("x1", "x2")),
        Jvp("vector_norm-(3,4)", linalg.vector_norm, {"x": rand(3, 4), "axis": 1, "ord": 3}, ("x",)),
        Jvp("matrix_norm-(2,3,4)", linalg.matrix_norm, {"x": rand(2, 3, 4), "ord": 2}, ("x",)),
        Jvp("svdvals-(3,4)", linalg.svdvals, {"x": rand(3, 4)}, ("x",)),
    ]


def _plain(prim, case):
    """Whether the shared `check_jvp_rules` can check this case: one output, no list or variadic
    argument differentiated, no gauge to fix."""
    return prim.outputs == 1 and case.gauge is None and not any(
        isinstance(case.inputs[name], (list, tuple)) for name in case.wrt)


def call(prim, inputs):
    """Call a primitive with inputs by name, a variadic parameter spread out."""
    positional, keywords = [], {}
    for name in prim.params:
        if name == prim.variadic:
            positional.extend(inputs[name])
        elif name in prim.defaults:
            keywords[name] = inputs[name]
        else:
            positional.append(inputs[name])
    return prim.fn(*positional, **keywords)


def apply_rule(rule, inputs, y, g=None, tangent=None):
    """Call a rule with what it reads: inputs by name, their shapes and metas, y, g, the tangent."""
    reads = {}
    for read in rule.reads:
        if read == "y":
            reads[read] = y
        elif read == "g":
            reads[read] = g
        elif read == f"{rule.wrt}_dot":
            reads[read] = tangent
        elif read.endswith("_dot"):
            reads[read] = None
        elif read.endswith("_shape"):
            reads[read] = np.shape(inputs[read[:-6]])
        elif read.endswith("_meta"):
            reads[read] = meta(inputs[read[:-5]])
        else:
            reads[read] = inputs[read]
    return rule.fn(**reads)


def _outputs(prim, y):
    return tuple(y) if prim.outputs > 1 and prim.outputs == len(y) and isinstance(y, tuple) else (y,)


def _shifted(inputs, tangents, step):
    moved = dict(inputs)
    for name, tangent in tangents.items():
        if isinstance(tangent, list):
            moved[name] = [x + step * t for x, t in zip(inputs[name], tangent)]
        else:
            moved[name] = inputs[name] + step * tangent
    return moved


def check_jvp_outputs(case, eps=1e-6):
    """Like `check_jvp_rules`, for several outputs and for list or variadic inputs."""
    prim = rules.lookup(case.fn)
    y = call(prim, case.inputs)
    outputs = _outputs(prim, y)
    total = [None] * len(outputs)
    for name, tangent in case.tangents.items():
        part = apply_rule(prim.jvps[name], case.inputs, y, tangent=tangent)
        for i, p in enumerate(_outputs(prim, part) if len(outputs) > 1 else (part,)):
            if p is not None:
                total[i] = p if total[i] is None else total[i] + p
    plus = call(prim, _shifted(case.inputs, case.tangents, eps))
    minus = call(prim, _shifted(case.inputs, case.tangents, -eps))
    if case.gauge:
        plus, minus = case.gauge(y, plus), case.gauge(y, minus)
    for i, (p, m) in enumerate(zip(_outputs(prim, plus), _outputs(prim, minus))):
        if np.asarray(p).dtype.kind != "f":  # lstsq's rank
            continue
        expected = (np.asarray(p, dtype=float) - np.asarray(m, dtype=float)) / (2 * eps)
        np.testing.assert_allclose(total[i], expected, rtol=case.rtol, atol=case.atol,
                                   err_msg=f"JVP of {prim.name}, output {i}, disagrees with finite differences")


@pytest.mark.parametrize("case", JVPS, ids=[c.id + "-float64" for c in JVPS])
def test_jvp(case):
    prim = rules.lookup(case.fn)
    if _plain(prim, case):
        check_jvp_rules(case.fn, case.inputs, case.tangents, rtol=case.rtol, atol=case.atol)
    else:
        check_jvp_outputs(case)


def test_every_primitive_has_jvp_rules_and_cases():
    checked = {id(rules.lookup(c.fn)) for c in JVPS}
    for prim in linalg_rules.table.primitives.values():
        assert set(prim.jvps) == set(prim.vjps), f"{prim.name}: VJP and JVP rules differ"
        assert id(prim) in checked, f"{prim.name} has no JVP case"


# --- dtypes -------------------------------------------------------------------------------------

def _float32(value):
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value.astype(np.float32)
    if isinstance(value, (list, tuple)):
        return type(value)(_float32(v) for v in value)
    return value


def _arrays(value):
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _arrays(v)]
    return [] if value is None else [value]


@pytest.mark.parametrize("case", JVPS, ids=[c.id + "-float32" for c in JVPS])
def test_rules_keep_float32(case):
    prim = rules.lookup(case.fn)
    inputs = {k: _float32(v) for k, v in case.inputs.items()}
    y = call(prim, inputs)
    outputs = _outputs(prim, y)
    g = tuple(np.ones_like(out) if np.asarray(out).dtype.kind == "f" else None for out in outputs)
    g = g if len(outputs) > 1 else g[0]
    results = []
    for name in case.wrt:
        tangent = _float32(case.tangents[name])
        results += _arrays(apply_rule(prim.vjps[name], inputs, y, g=g))
        results += _arrays(apply_rule(prim.jvps[name], inputs, y, tangent=tangent))
    dtypes = {np.asarray(r).dtype for r in results if np.asarray(r).dtype.kind == "f"}
    assert dtypes == {np.dtype(np.float32)}, f"{prim.name} rules gave {dtypes} for float32 inputs"


def solve_loss(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2)


def spectral_loss(a):
    w, v = np.linalg.eigh(a)
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(w ** 2) + np.sum(v ** 4) + np.sum(s) + np.linalg.det(a)


def einsum_norm_loss(a, b):
    return np.linalg.norm(np.einsum("ij,jk->ik", a, b), "fro") + np.linalg.norm(a @ b, 2)


@pytest.mark.parametrize("fn, args", [
    (solve_loss, (well_conditioned(3, 3), rand(3, 2))),
    (spectral_loss, (spd(3, 3),)),
    (einsum_norm_loss, (A23, B34)),
], ids=["solve-float32", "eigh+svd+det-float32", "einsum+norm-float32"])
def test_float32_gradients(fn, args):
    wrt = tuple(range(len(args)))
    expected = tg.grad(fn, wrt=wrt)(*args)
    actual = tg.grad(fn, wrt=wrt)(*(a.astype(np.float32) for a in args))
    for e, a in zip(expected, actual):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, e, rtol=2e-3, atol=2e-4)


# --- errors -------------------------------------------------------------------------------------

def svd_full(a):
    u, s, vt = np.linalg.svd(a)
    return np.sum(s)


def test_svd_of_non_square_needs_full_matrices_false():
    with pytest.raises(tg.TapegenError, match="full_matrices=False"):
        tg.grad(svd_full)(rand(4, 3))


ZERO_NORMS = [
    lambda x: np.linalg.norm(x),
    lambda x: np.linalg.norm(x, 1),
    norm_vector_2,
    norm_inf,
    lambda x: np.linalg.norm(x, 3),
    lambda x: np.linalg.norm(x, axis=0),
]


@pytest.mark.parametrize("fn", ZERO_NORMS, ids=["None", "1", "2", "inf", "3", "axis=0"])
def test_norm_at_zero_has_zero_gradient(fn):
    assert np.array_equal(tg.vjp(fn, np.zeros(3))[1](np.ones(())), np.zeros(3))


# --- np.linalg.norm on every ord / axis / keepdims combination: reverse, forward, second order ----

def _norm_combinations():
    rng = np.random.default_rng(23)
    vector, matrix, stack = rng.standard_normal(5), rng.standard_normal((3, 4)), rng.standard_normal((2, 3, 4))
    for ord in (None, 1, 2, np.inf, -np.inf, 0, 3, 0.5, -1, -2):
        for keepdims in (False, True):
            yield f"vector-ord={ord}-keepdims={keepdims}", vector, dict(ord=ord, keepdims=keepdims)
            yield f"rows-axis=1-ord={ord}-keepdims={keepdims}", matrix, dict(ord=ord, axis=1, keepdims=keepdims)
    yield "vector-over-all-axes-of-(2,3,4)", stack, {}
    yield "vector-axis=(1,)-of-(2,3,4)", stack, dict(axis=(1,))
    for ord in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        for keepdims in (False, True):
            yield f"matrix-ord={ord}-keepdims={keepdims}", matrix, dict(ord=ord, keepdims=keepdims)
            yield f"stack-axis=(2,0)-ord={ord}-keepdims={keepdims}", stack, dict(ord=ord, axis=(2, 0),
                                                                                 keepdims=keepdims)


NORMS = list(_norm_combinations())


def _norm_of(options):
    ord, axis, keepdims = options.get("ord"), options.get("axis"), options.get("keepdims", False)
    return lambda x: np.linalg.norm(x, ord, axis, keepdims)


@pytest.mark.parametrize("x, options", [(x, o) for _, x, o in NORMS], ids=[name for name, _, _ in NORMS])
def test_norm_reverse_forward_and_second_order(x, options):
    norm = _norm_of(options)
    tg.gradcheck(norm, x, rtol=1e-5, atol=1e-7)
    tangent = np.random.default_rng(1).standard_normal(x.shape)
    _, got = tg.jvp(norm, (x,), (tangent,))
    expected = (norm(x + 1e-6 * tangent) - norm(x - 1e-6 * tangent)) / 2e-6
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)
    tg.gradcheck(lambda x: np.sum(np.sin(norm(x))), x, order=2, rtol=1e-4, atol=1e-6)


def test_array_api_norms_second_order():
    rng = np.random.default_rng(2)
    if not hasattr(np.linalg, "vector_norm"):
        pytest.skip("NumPy 1 has no np.linalg.vector_norm")
    tg.gradcheck(lambda x: np.sum(np.linalg.vector_norm(x, axis=(0, 1), ord=3)), rng.standard_normal((3, 4)), order=2)
    tg.gradcheck(lambda x: np.sum(np.linalg.matrix_norm(x, ord="nuc")), rng.standard_normal((2, 3, 4)), order=2)


def test_third_derivative_of_a_norm_is_a_clear_error():
    with pytest.raises(tg.NoRuleError, match="norm_direction_tangent"):
        tg.grad(tg.grad(tg.grad(lambda x: np.linalg.norm(x))))(np.arange(1.0, 5.0))


def _rotation(angles):
    (a, b), c = angles, np.cos(angles[0] + angles[1])
    rz = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])
    rx = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(b), -np.sin(b)], [0.0, np.sin(b), np.cos(b)]])
    return rz @ rx * (1.0 + 0.1 * c)


@pytest.mark.parametrize("a", [
    _rotation([0.3, -1.1]),  # all singular values equal
    2.0 * np.eye(3),
    np.array([[1.0, -0.5], [0.5, 1.0]]),  # a scaled rotation
    np.diag([1.0, 1.0, 0.0]),  # singular, with a repeated singular value
    np.stack([_rotation([0.3, 0.2]), np.eye(3), rand(3, 3, seed=3)]),
], ids=["rotation", "scaled-identity", "scaled-rotation-2x2", "singular-repeated", "stack"])
def test_det_second_order_where_singular_values_repeat(a):
    """det's gradient is the adjugate; differentiated through the SVD it was wrong wherever singular values
    repeat (the Hessian of det(I + K) for a skew K, of det(R(axis)) for a rotation, was not even symmetric)."""
    check_modes(lambda a: np.sum(np.sin(np.linalg.det(a))), a)


def test_det_second_order_of_a_rotation_built_from_angles():
    check_modes(lambda angles: np.linalg.det(_rotation(angles)) + np.trace(_rotation(angles)), np.array([0.3, -1.1]))


_det_gradient = tg.grad(lambda x: np.linalg.det(x.reshape(3, 3)))
_det_second = tg.grad(lambda x: np.sum(_det_gradient(x) ** 2))


def test_third_derivative_of_a_determinant_is_a_clear_error():
    x = rand(9, seed=2)
    tg.gradcheck(lambda x: np.sum(_det_gradient(x) ** 2), x)  # second order is exact
    with pytest.raises(tg.NoRuleError, match="linalg_adjugate_tangent"):
        tg.grad(lambda x: np.sum(_det_second(x) ** 2))(x)


_complex_norm_gradient = tg.grad(lambda z: np.linalg.norm(z, np.inf))


def _gradient_size(z):
    return np.sum(np.abs(_complex_norm_gradient(z)))


def test_second_derivative_of_a_complex_max_norm_is_a_clear_error():
    """Vector p-norms, the Frobenius norm and the spectral norms (2, -2, 'nuc') of a complex array have
    second derivatives (tests/test_complex.py, COMPLEX_ROWS below); the max norms of one do not yet."""
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j])
    with pytest.raises(tg.TapegenError, match="second derivatives of np.linalg.norm\\(ord=inf\\) of a complex"):
        tg.grad(_gradient_size)(z)
    matrix_norm_gradient = tg.grad(lambda z: np.linalg.norm(z, 1))
    with pytest.raises(tg.TapegenError, match="second derivatives of np.linalg.norm\\(ord=1\\) of a complex"):
        tg.grad(lambda z: np.sum(np.abs(matrix_norm_gradient(z)) ** 2))(zrand(3, 3))


EINSUM_FORMS = [
    ("string", lambda a, b: np.einsum("ij,jk->ik", a, b)),
    ("string-implicit", lambda a, b: np.einsum("ij,jk", a, b)),
    ("string-ellipsis", lambda a, b: np.einsum("...j,jk->...k", a, b)),
    ("interleaved", lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2])),
    ("interleaved-implicit", lambda a, b: np.einsum(a, [0, 1], b, [1, 2])),
    ("interleaved-first-constant", lambda a, b: np.einsum(A23, [0, 1], b, [1, 2]) * a[:, :1]),
]


@pytest.mark.parametrize("f", [f for _, f in EINSUM_FORMS], ids=[name for name, _ in EINSUM_FORMS])
def test_einsum_second_order(f):
    """The interleaved form with literal sublists is spelled as a string when lowered, so it too."""
    tg.gradcheck(lambda a, b: np.sum(np.sin(f(a, b))), rand(2, 3, seed=4), rand(3, 4, seed=5), wrt=(0, 1), order=2)


@pytest.mark.parametrize("subscripts, shapes", [("ii->i", [(3, 3)]), ("ij,ij->ij", [(1, 3), (4, 3)]),
                                                ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]), ("i,i,i->", [(3,)] * 3)],
                         ids=["diagonal", "broadcast", "chain-of-three", "three-vectors"])
def test_einsum_second_order_more_forms(subscripts, shapes):
    arrays = [rand(*shape, seed=10 + i) for i, shape in enumerate(shapes)]
    funcs = {1: lambda a: np.sum(np.sin(np.einsum(subscripts, a))),
             2: lambda a, b: np.sum(np.sin(np.einsum(subscripts, a, b))),
             3: lambda a, b, c: np.sum(np.sin(np.einsum(subscripts, a, b, c)))}
    tg.gradcheck(funcs[len(arrays)], *arrays, wrt=tuple(range(len(arrays))), order=2)


def _einsum_of(*args):
    return np.einsum(*args)  # autograd's tests call np.einsum so, the sublists known only when the code runs


def _einsum_by(spec, a, b):
    return np.einsum(spec, a, b)


EINSUM_RUNTIME_FORMS = [
    ("sublist-in-a-name", lambda a, b: np.einsum(a, SUBLIST, b, [1, 2], [0, 2])),
    ("star-args", lambda a, b: _einsum_of(a, (0, 1), b, (1, 2), (0, 2))),
    ("star-args-implicit", lambda a, b: _einsum_of(a, [Ellipsis, 1], b, [1, 2])),
    ("string-parameter", lambda a, b: _einsum_by("ij,jk->ik", a, b)),
]


@pytest.mark.parametrize("f", [f for _, f in EINSUM_RUNTIME_FORMS], ids=[name for name, _ in EINSUM_RUNTIME_FORMS])
def test_einsum_sublists_known_when_the_code_runs(f):
    """np.einsum whose first argument is a name (a parameter: the subscripts string or the first array) with
    sublists not written out: which form it is is decided when the code runs, the interleaved one written
    with the string its sublists spell, so every order and mode follows every array."""
    a, b = rand(2, 3, seed=4), rand(3, 4, seed=5)
    tg.gradcheck(lambda a, b: np.sum(np.sin(f(a, b))), a, b, wrt=(0, 1), order=2)
    ta, tb, eps = rand(2, 3, seed=6), rand(3, 4, seed=7), 1e-6
    _, got = tg.jvp(f, (a, b), (ta, tb))
    np.testing.assert_allclose(got, (f(a + eps * ta, b + eps * tb) - f(a - eps * ta, b - eps * tb)) / (2 * eps),
                               rtol=1e-6, atol=1e-8)


def test_einsum_second_order_through_the_interleaved_first_array_is_a_clear_error():
    """A sublist tapegen cannot read twice (a call) keeps the interleaved form in the rules; its first array's
    second derivative is refused when the gradient code runs (only then is it known to be an array): an
    error, never a missing term."""
    a, b = rand(2, 3, seed=4), rand(3, 4, seed=5)
    with pytest.raises(tg.TapegenError, match="first array in the interleaved form"):
        tg.gradcheck(lambda a, b: np.sum(np.sin(np.einsum(a, list(SUBLIST), b, [1, 2], [0, 2]))), a, b,
                     wrt=(0, 1), order=2)


@pytest.mark.parametrize("f", [f for _, f in EINSUM_FORMS], ids=[name for name, _ in EINSUM_FORMS])
def test_einsum_forward_mode(f):
    a, b, eps = rand(2, 3, seed=4), rand(3, 4, seed=5), 1e-6
    ta, tb = rand(2, 3, seed=6), rand(3, 4, seed=7)
    _, got = tg.jvp(f, (a, b), (ta, tb))
    expected = (f(a + eps * ta, b + eps * tb) - f(a - eps * ta, b - eps * tb)) / (2 * eps)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


DECOMPOSITIONS = (linalg.eigh, linalg.eigvalsh, linalg.eig, linalg.eigvals, linalg.svd, linalg.qr, linalg.cholesky)
SECOND_ORDER_ROWS = [r for r in ROWS if any(fn in DECOMPOSITIONS for fn in r.covers) and "repeated" not in r.id]


@pytest.mark.parametrize("case", SECOND_ORDER_ROWS, ids=[r.id for r in SECOND_ORDER_ROWS])
def test_second_order_through_the_decompositions(case):
    """Their gradient code differentiates again (grad of grad, and each mode of it), as autograd's
    check_grads(order=2) asks; at a repeated eigen- or singular value the second derivative does not exist."""
    check_modes(lambda a: np.sum(np.sin(case.fn(a))), *case.args)


@pytest.mark.parametrize("case", SECOND_ORDER_ROWS, ids=[r.id for r in SECOND_ORDER_ROWS])
def test_reverse_over_forward_through_the_decompositions(case):
    """The gradient of a JVP (and the JVP of a gradient) lowers the decompositions' tangent code:
    svd_jvp unpacks its `y` by name, and `if not compute_uv:` is decided when it is transformed."""
    check_complex_modes(lambda a: np.sum(np.sin(case.fn(a))), *case.args)


def _einsum_three(a, b):
    return np.einsum("ij,jk,kl->il", a, b, np.ones((2, 2)) * 0.5 + np.eye(2))


@pytest.mark.parametrize("f", [f for _, f in EINSUM_FORMS[:3]] + [_einsum_three],
                         ids=[name for name, _ in EINSUM_FORMS[:3]] + ["chain-of-three"])
def test_einsum_forward_over_forward_and_reverse_over_forward(f):
    """einsum's tangent rule is a primitive with rules of its own (einsum_jvp): the JVP of a JVP and the
    gradient of a JVP, checked in grad, vjp and jvp against central differences."""
    a, b = rand(2, 3, seed=4), rand(3, 2, seed=5)
    u, w = rand(2, 3, seed=6), rand(3, 2, seed=7)
    check_modes(lambda a, b: np.sum(np.sin(tg.jvp(f, (a, b), (u, w))[1])), a, b, order2=False)


SUBSCRIPTS = "ij,jk->ik"
SUBLIST = [0, 1]


def _einsum_of_a_list(xs):  # autograd's check_grads: np.einsum(*a), a list filled in a loop
    a = [SUBSCRIPTS, None, None]
    for i, x in zip((1, 2), xs):
        a[i] = x
    return np.einsum(*a)


def test_einsum_subscripts_from_a_list_carry_no_derivative_at_any_order():
    """The subscripts string read from a list the analysis cannot see into counts as varying: its JVP and
    VJP rules (einsum_first_tangent, einsum_first_cotangent) give none for a string, at second order too.
    (Their tangent was once summed by add_tangents, which had no derivative: second order was zero.)"""
    a, b, u, w = rand(2, 3, seed=4), rand(3, 4, seed=5), rand(2, 3, seed=6), rand(3, 4, seed=7)
    jvp_of = lambda a, b: np.sum(np.sin(tg.jvp(_einsum_of_a_list, ((a, b),), ((u, w),))[1]))
    check_modes(jvp_of, a, b, order2=False)
    vjp_of = lambda a, b: np.sum(np.sin(tg.vjp(_einsum_of_a_list, (a, b))[1](np.ones((2, 4)))[0]))
    check_modes(vjp_of, a, b, order2=False)



# --- complex matrices: docs/faq.md's convention in every mode, and second order ------------------

def zrand(*shape, seed=0):
    return rand(*shape, seed=seed) + 1j * rand(*shape, seed=seed + 50)


def hpd(*shape, seed=0):
    """Hermitian positive definite matrices with well separated eigenvalues."""
    q, _ = np.linalg.qr(zrand(*shape, seed=seed))
    return (q * np.linspace(1.0, 3.0, shape[-1])) @ np.conj(np.swapaxes(q, -1, -2))


def complex_spectrum(n, seed=0):
    """A real matrix whose eigenvalues are distinct, two of them a complex pair."""
    p = well_conditioned(n, n, seed=seed)
    block = np.diag(np.arange(1.0, n + 1))
    block[:2, :2] = [[1.0, -2.0], [2.0, 1.0]]  # 1 +- 2i
    return p @ block @ np.linalg.inv(p)


WEIGHTS = {shape: zrand(*shape, seed=7) for shape in [(3, 3), (4, 3), (3, 4), (2, 3, 3), (2, 4, 3), (2, 3, 4), (3, 5),
                                                      (5, 3), (3, 2), (2, 2, 3), (2, 3, 2), (1, 3), (2, 1, 3)]}


def _weights(like):
    """Fixed complex weights shaped like `like` (a dict look-up: tapegen lowers no array construction here)."""
    return WEIGHTS[np.shape(like)]


def _ct(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _eigh_phase_free(w, v):
    return np.sum(w * np.arange(1.0, np.shape(w)[-1] + 1)) + np.sum(np.abs(v) ** 3)


def eigh_phase_free(a):  # (no default arguments here: tg.grad of tg.jvp refuses them, see the report of issue 16)
    """The eigenvalues and |V|: a complex eigenvector's phase is arbitrary."""
    w, v = np.linalg.eigh(a)
    return _eigh_phase_free(w, v)


def eigh_upper_phase_free(a):
    w, v = np.linalg.eigh(a, "U")
    return _eigh_phase_free(w, v)


def eigh_projector(a):
    """The projector v v^H onto the smallest eigenvalue's eigenvector."""
    w, v = np.linalg.eigh(a)
    return np.sum(np.real(v[..., :, :1] @ _ct(v[..., :, :1]) * _weights(a)))


def eigh_of_hermitian_part(z):
    w, v = np.linalg.eigh(z + _ct(z))
    return np.sum(w ** 2) + np.sum(np.abs(v[..., 0, :]) ** 2 * np.arange(3.0))


def eig_phase_free(a):
    """The eigenvalues (complex) and |V|."""
    w, v = np.linalg.eig(a)
    return np.sum(np.real(w * np.arange(1.0, np.shape(a)[-1] + 1))) + np.sum(np.imag(w) ** 2) + np.sum(np.abs(v) ** 3)


def svd_phase_free(a):
    """s, |U| and |V^H|: each pair u_i, v_i shares one arbitrary phase."""
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.abs(u) ** 3) + np.sum(s * np.arange(1.0, np.shape(s)[-1] + 1)) + np.sum(np.abs(vt) ** 3)


def svd_truncated(a):
    """U_2 diag(s_2) V_2^H, the best rank-2 approximation, against complex weights."""
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.real((u[..., :, :2] * s[..., None, :2]) @ vt[..., :2, :] * _weights(a)))


def svd_polar(a):
    """U V^H (the unitary polar factor) and u_1 v_1^H: phase-free, each needs the phases' tangents."""
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.real(u @ vt * _weights(a))) + np.sum(np.imag(u[..., :, :1] @ vt[..., :1, :] * np.conj(_weights(a))))


def svd_square_default(a):
    u, s, vt = np.linalg.svd(a)
    return np.sum(np.abs(u) ** 2 * s) + np.sum(np.abs(vt) ** 4)


def qr_weighted(a):
    """Q and R are unique (R's diagonal is real): complex weights on both."""
    q, r = np.linalg.qr(a)
    return np.sum(np.real(q * _weights(q))) + np.sum(np.abs(r * np.conj(_weights(r))) ** 2)


def _factor_weighted(factor):
    return np.sum(np.real(factor * _weights(factor))) + np.sum(np.abs(factor) ** 3)


def cholesky_weighted(a):
    return _factor_weighted(np.linalg.cholesky(a))


def cholesky_upper_weighted(a):
    return _factor_weighted(np.linalg.cholesky(a, upper=True))


def lstsq_weighted(a):
    x, residuals, rank, s = np.linalg.lstsq(a, B_COMPLEX)
    return np.sum(np.real(x * _weights(x))) + np.sum(residuals) + np.sum(s ** 2)


B_COMPLEX = zrand(5, 2, seed=3)


def zrow(name, fn, z, order2=True):
    return pytest.param(fn, z, order2, id=f"{name}-{_shapes((z,))}-{z.dtype}")


COMPLEX_ROWS = [
    zrow("eigh", eigh_phase_free, zrand(3, 3)),  # a general matrix: eigh reads its lower triangle
    zrow("eigh[UPLO=U]", eigh_upper_phase_free, zrand(3, 3)),
    zrow("eigh", eigh_phase_free, zrand(2, 3, 3)),
    zrow("eigh[projector]", eigh_projector, hpd(3, 3)),
    zrow("eigh[z+z^H]", eigh_of_hermitian_part, zrand(3, 3)),
    zrow("eigvalsh", lambda a: np.sum(np.linalg.eigvalsh(a) ** 3), zrand(3, 3)),
    zrow("eigvalsh[UPLO=U]", lambda a: np.sum(np.linalg.eigvalsh(a, "U") ** 3), zrand(3, 3)),
    zrow("eigvalsh", lambda a: np.sum(np.linalg.eigvalsh(a) ** 3), zrand(2, 3, 3)),
    zrow("eig", eig_phase_free, zrand(3, 3)),
    zrow("eig", eig_phase_free, zrand(2, 3, 3)),
    zrow("eig[real,complex-eigenvalues]", eig_phase_free, complex_spectrum(3)),
    zrow("eigvals", lambda a: np.sum(np.abs(np.linalg.eigvals(a)) ** 3), zrand(3, 3)),
    zrow("eigvals[real,complex-eigenvalues]", lambda a: np.sum(np.real(np.linalg.eigvals(a) ** 3 * (1 + 2j))),
         complex_spectrum(3, seed=1)),
    zrow("svd[tall]", svd_phase_free, zrand(4, 3)),
    zrow("svd[wide]", svd_phase_free, zrand(3, 4)),
    zrow("svd[square]", svd_phase_free, zrand(3, 3)),
    zrow("svd[batched]", svd_phase_free, zrand(2, 4, 3)),
    zrow("svd[truncated]", svd_truncated, zrand(4, 3)),
    zrow("svd[truncated]", svd_truncated, zrand(3, 4)),
    zrow("svd[polar]", svd_polar, zrand(4, 3)),
    zrow("svd[polar]", svd_polar, zrand(2, 3, 4)),
    zrow("svd[square-default]", svd_square_default, zrand(3, 3)),
    zrow("svd[compute_uv=False]", lambda a: np.sum(np.linalg.svd(a, compute_uv=False) ** 3), zrand(2, 3, 4)),
    zrow("qr[tall]", qr_weighted, zrand(4, 3)),
    zrow("qr[wide]", qr_weighted, zrand(3, 5)),
    zrow("qr[square]", qr_weighted, zrand(3, 3)),
    zrow("qr[batched]", qr_weighted, zrand(2, 4, 3)),
    zrow("qr[mode=r]", lambda a: np.sum(np.abs(np.linalg.qr(a, mode="r")) ** 3), zrand(4, 3)),
    zrow("cholesky", cholesky_weighted, hpd(3, 3)),
    zrow("cholesky[non-hermitian-input]", cholesky_weighted, hpd(3, 3) + 0.2 * zrand(3, 3)),
    zrow("cholesky[upper]", cholesky_upper_weighted, hpd(3, 3) + 0.2 * zrand(3, 3)),
    zrow("cholesky", cholesky_weighted, hpd(2, 3, 3)),
    zrow("pinv[tall]", lambda a: np.sum(np.real(np.linalg.pinv(a) * _weights(a.T))), zrand(4, 3)),
    zrow("pinv[wide]", lambda a: np.sum(np.abs(np.linalg.pinv(a)) ** 2), zrand(2, 4)),
    zrow("pinv[batched]", lambda a: np.sum(np.abs(np.linalg.pinv(a)) ** 2), zrand(2, 4, 3)),
    zrow("lstsq", lstsq_weighted, zrand(5, 3)),
    zrow("norm[nuc]", lambda a: np.linalg.norm(a, "nuc"), zrand(4, 3)),
    zrow("norm[ord=2]", lambda a: np.linalg.norm(a, 2), zrand(3, 4)),
    zrow("norm[ord=-2]", lambda a: np.linalg.norm(a, -2), zrand(4, 3)),
    zrow("norm[nuc,axis=(2,0),keepdims]", lambda a: np.sum(np.linalg.norm(a, "nuc", (2, 0), True) ** 2),
         zrand(3, 2, 4)),
    zrow("norm[ord=2,axis=(1,2)]", lambda a: np.sum(np.sin(np.linalg.norm(a, 2, (1, 2)))), zrand(2, 3, 4)),
]


@pytest.mark.parametrize("fn, z, order2", COMPLEX_ROWS)
def test_complex_matrices(fn, z, order2):
    """grad, vjp and jvp against dL/dx - i dL/dy and directional derivatives, and each second order (grad of
    grad, grad of jvp, jvp of grad) against central differences of the first: the decompositions' gradient
    code differentiates again for complex matrices too. Functions of eigen- and singular vectors do not
    depend on their phases (|v|, v v^H, u diag(s) v^H), as the rules require."""
    check_complex_modes(fn, z, order2=order2)


REAL_WITH_COMPLEX_COTANGENTS = [
    ("eigh", lambda a: np.sum(np.real(np.linalg.eigh(a)[1] ** 2 * (1 + 2j)) + np.real(np.linalg.eigh(a)[0] * 1j)),
     spd(3, 3)),
    ("svd", lambda a: np.sum(np.real(svd_rebuild(a) * (0.5 - 1j) * A23.T[:, :3].sum())), rand(4, 3)),
    ("qr", lambda a: np.sum(np.real(np.linalg.qr(a)[0] * _weights(a))) + np.sum(np.imag(np.linalg.qr(a)[1] * (1 + 2j)) ** 2),
     rand(4, 3)),
    ("cholesky", lambda a: np.sum(np.real(np.linalg.cholesky(a) * _weights(a))), spd(3, 3)),
    ("pinv", lambda a: np.sum(np.real(np.linalg.pinv(a) * _weights(a.T))), rand(4, 3)),
    ("eig", lambda a: np.sum(np.real(np.linalg.eig(a)[0] * (1 - 1j))), real_spectrum(3)),
]


@pytest.mark.parametrize("fn, a", [(f, a) for _, f, a in REAL_WITH_COMPLEX_COTANGENTS],
                         ids=[name for name, _, _ in REAL_WITH_COMPLEX_COTANGENTS])
def test_real_matrices_under_complex_cotangents(fn, a):
    """A real matrix whose decomposition meets complex numbers downstream: its outputs' cotangents are
    complex, and the matrix's gradient is the real part of what the rules give (in every mode)."""
    check_modes(fn, a)


@pytest.mark.parametrize("fn, z", [(eigh_phase_free, hpd(3, 3)), (svd_polar, zrand(4, 3)), (qr_weighted, zrand(4, 3)),
                                   (cholesky_weighted, hpd(3, 3)), (eig_phase_free, zrand(3, 3))],
                         ids=["eigh", "svd", "qr", "cholesky", "eig"])
def test_complex64_in_complex64_out(fn, z):
    assert tg.grad(fn)(z.astype(np.complex64)).dtype == np.complex64


def eigh_real_part(a):
    w, v = np.linalg.eigh(a)
    return np.sum(np.real(v))


def eig_real_part(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.real(v[..., :, :2]))


def svd_u_real_part(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.real(u)) + np.sum(s)


def svd_vt_imaginary_part(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.imag(vt[..., :1, :]))


@pytest.mark.parametrize("fn, a", [(eigh_real_part, hpd(3, 3)), (eig_real_part, zrand(3, 3)),
                                   (eig_real_part, complex_spectrum(3)), (svd_u_real_part, zrand(4, 3)),
                                   (svd_vt_imaginary_part, zrand(2, 3, 4))],
                         ids=["eigh", "eig", "eig[real,complex-eigenvalues]", "svd[u]", "svd[vt]"])
def test_a_loss_that_depends_on_complex_vectors_phases_is_refused(fn, a):
    """LAPACK picks each complex eigenvector's (singular pair's) phase; the rules hold for losses that do not
    depend on it, and refuse one that does (as PyTorch does) rather than give a gradient that is not its."""
    with pytest.raises(tg.TapegenError, match="phases of complex eigenvectors or singular vectors"):
        tg.grad(fn)(a)


def eig_real_eigenvector(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.real(v[:, np.argmin(np.abs(np.imag(w)))]) ** 3)  # the real eigenvalue 3's: real, up to sign


def test_the_real_eigenvector_of_a_real_matrix_is_not_refused():
    """A real matrix's eigenvector of a real eigenvalue has no phase to choose, even when others are complex."""
    check_modes(eig_real_eigenvector, complex_spectrum(3))


_READ = np.arange(9.0).reshape(3, 3)


def _root_by_eigh(A):  # a matrix square root of a covariance, as written in many codes
    w, V = np.linalg.eigh(0.5 * (A + A.T))
    return np.sum((V @ np.diag(np.sqrt(w)) @ V.T) * _READ)


def _polar_factor(A):  # the orthogonal polar factor (Procrustes, Kabsch)
    u, s, vt = np.linalg.svd(A)
    return np.sum((u @ vt) * _READ)


def _values_only(A):
    w, V = np.linalg.eigh(0.5 * (A + A.T))
    u, s, vt = np.linalg.svd(A)
    return np.sum(w ** 2) + np.sum(s ** 3)


@pytest.mark.parametrize("f", [_root_by_eigh, _polar_factor], ids=lambda f: f.__name__)
def test_vectors_of_equal_values_are_refused_not_differentiated(f):
    """At 2 I every basis is an eigenbasis: the rules' derivative of the vectors leaves out the tied entries
    (wrong by 2.1 and 2.0 here); reverse mode refuses, forward mode's tangent is nan."""
    tied = 2.0 * np.eye(3)
    with pytest.raises(tg.TapegenError, match="equal eigenvalues"):
        tg.grad(f)(tied)
    assert np.isnan(tg.jvp(f, (tied,), (np.ones((3, 3)),))[1])
    check_modes(f, np.diag([1.0, 2.0, 3.0]) + 0.1)  # apart: as before


def test_values_of_equal_values_are_differentiated():
    """Their gradient, V diag(2w) V^T + ..., reads the vectors: differentiated again at the tie, the Hessian's
    undetermined entries are nan (forward over reverse; main gave 0 where 1 is right)."""
    check_modes(_values_only, 2.0 * np.eye(3), order2=False)
    assert np.isnan(tg.hessian(_values_only)(2.0 * np.eye(3))).any()


def _sum_of_squared_eigvals(a):
    return np.real(np.sum(np.linalg.eigvals(a) ** 2))  # tr(a @ a): smooth where eigenvalues repeat


def test_eigvals_where_eigenvalues_repeat():
    # (each repeated eigenvalue took the same eigenvector, making a singular matrix: LinAlgError)
    a = np.diag([1.0, 1.0, 2.0])
    np.testing.assert_allclose(tg.grad(_sum_of_squared_eigvals)(a), 2 * a.T, atol=1e-12)
    check_modes(_sum_of_squared_eigvals, a, order2=False)


def _eig_square_sum(A):
    w, V = np.linalg.eig(A)
    return np.real(np.sum(w ** 2))  # tr(A @ A)


def test_eig_of_a_matrix_that_is_not_diagonalizable_is_refused():
    """[[1, h, 0], [0, 1, 0], [0, 0, 2]]: a Jordan block; the rules gave 2 A^T off by 2h (found by adv11)."""
    jordan = np.diag([1.0, 1.0, 2.0])
    jordan[0, 1] = 0.1
    with pytest.raises(tg.TapegenError, match="not diagonalizable"):
        tg.grad(_eig_square_sum)(jordan)
    with pytest.raises(tg.TapegenError, match="not diagonalizable"):
        tg.jvp(_eig_square_sum, (jordan,), (np.ones((3, 3)),))
    repeated = np.diag([1.0, 1.0, 2.0])  # repeated but diagonalizable: a function of the values as a whole
    np.testing.assert_allclose(tg.grad(_eig_square_sum)(repeated), 2.0 * repeated.T)

"""Products and linear algebra: `@`, dot, inner, outer, vdot, tensordot, einsum, trace, kron, cross,
and `np.linalg` (det, slogdet, inv, pinv, solve, lstsq, norm, eigh, eigvalsh, eig, eigvals,
cholesky, svd, qr, matrix_power, multi_dot), and NumPy 2's array-API spellings (np.linalg.matmul,
outer, tensordot, cross, trace, vecdot, vector_norm, matrix_norm, svdvals; np.vecdot).

Matrix rules work on stacks of matrices (the last two axes) and keep the input's
dtype. Multi-output functions (`sign, logdet = np.linalg.slogdet(a)`) read `y`
and `g` as tuples; an unused output's cotangent is None (or missing from a
`Cotree` when the result was indexed). Decompositions whose outputs are defined
only up to sign, or for a complex matrix up to a phase (eigenvectors, singular
vectors), have the usual rules: the gradient is exact for functions of the
outputs that do not depend on that choice, such as `np.sum(np.abs(v) ** 2 * w)`
or `u @ np.diag(s) @ vt`, where the eigenvalues (singular values) are distinct.
Where two are equal, their vectors are any basis of a plane and have no
derivative; a function reading them there is refused (`tie_independent`), or
in forward mode gets a nan tangent.

Complex matrices follow docs/faq.md's convention: a rule pairs with its tangent
by Re(sum(g * dy)), no conjugate. The decompositions are written once for real
and complex matrices, with conjugate transposes (`_h`) where the real formulas
transpose; several work in conj(g), the cotangent of the usual complex formulas
written with ^H, and conjugate their result back.

Functions that read one triangle of their input (eigh, eigvalsh, cholesky)
get cotangents in that triangle only, since changing the other triangle
changes nothing; for an input built symmetric (`a + a.T`) this is the same
gradient as the symmetric one. For a complex matrix the triangle stands for a
Hermitian matrix, whose diagonal is the real part of the input's (LAPACK's).
"""
import operator
import string

import numpy as np

from ..errors import TapegenError
from ..runtime import safe_div, unbroadcast, unreduce
from .elementwise import real_like
from .table import RuleTable

table = RuleTable("linalg")

# --- declarations -------------------------------------------------------------------------------

table.op(operator.matmul, "x1, x2", name="matmul", form="binop", spelling="@")
table.op(np.matmul, "x1, x2")
table.op(np.dot, "a, b")
table.method("dot", np.dot)
for _fn in (np.inner, np.outer, np.vdot, np.kron):
    table.op(_fn, "a, b")
table.op(np.tensordot, "a, b, axes=2")
table.op(np.einsum, "subscripts, *operands, optimize=False")
table.op(np.trace, "a, offset=0, axis1=0, axis2=1")
table.method("trace", np.trace)
table.op(np.cross, "a, b, axisa=-1, axisb=-1, axisc=-1, axis=None")

table.op(np.linalg.det, "a")
table.op(np.linalg.slogdet, "a", outputs=2)
table.op(np.linalg.inv, "a")
table.op(np.linalg.pinv, "a, rcond=None")
table.op(np.linalg.solve, "a, b")
table.op(np.linalg.lstsq, "a, b, rcond=None", outputs=4)
table.op(np.linalg.norm, "x, ord=None, axis=None, keepdims=False")
table.op(np.linalg.eigh, "a, UPLO='L'", outputs=2)
table.op(np.linalg.eigvalsh, "a, UPLO='L'")
table.op(np.linalg.eig, "a", outputs=2)
table.op(np.linalg.eigvals, "a")
table.op(np.linalg.cholesky, "a, *, upper=False")
table.op(np.linalg.svd, "a, full_matrices=True, compute_uv=True", outputs=3)
table.op(np.linalg.qr, "a, mode='reduced'", outputs=2)
table.op(np.linalg.matrix_power, "a, n")
table.op(np.linalg.multi_dot, "arrays")

# NumPy >= 2 treats `b` in solve(a, b) as a vector only when it is 1-d; before, when b.ndim == a.ndim - 1.
_SOLVE_VECTOR_IS_1D = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


# --- helpers used by inlined rules (names in generated code) ------------------------------------

def linalg_mT(x):
    """The transpose of each matrix in a stack (the last two axes swapped)."""
    return np.swapaxes(x, -1, -2)


def linalg_per_matrix(g):
    """A cotangent with one value per matrix, shaped to broadcast against the matrices."""
    return g if np.ndim(g) == 0 else np.expand_dims(g, (-2, -1))


def linalg_adjugate(a):
    """adj(a) = det(a) inv(a) for each matrix, exact for singular matrices too.

    From the SVD a = U S V^H: adj(a) = det(U) det(V^H) V diag(prod of the other s_j) U^H,
    with the products built from cumulative products, so no s_i is divided by.
    """
    u, s, vt = np.linalg.svd(a)
    sign = np.linalg.det(u) * np.linalg.det(vt)
    return linalg_per_matrix(sign) * ((_h(vt) * _products_of_others(s)[..., None, :]) @ _h(u))


def linalg_adjugate_tangent(a, t):
    """The derivative of adj(a) along t, exact for singular matrices and repeated singular values too (the
    SVD's own derivative is not: its singular vectors are not determined there).

    adj(U (S + F) V^H) = det(U) det(V^H) V adj(S + F) U^H holds for every F (adj(P A Q) = adj(Q) adj(A)
    adj(P), adj(U) = det(U) U^H for a unitary U), so with F = U^H t V the derivative is V dadj(S)[F] U^H,
    where the derivative at a diagonal S is -q_ij F_ij off the diagonal and sum over k != i of q_ik F_kk on
    it, q_ij the product of the s_l other than s_i and s_j. That map is symmetric, so adj's VJP is this
    function at a^T (whose SVD swaps U and conj(V)).
    """
    u, s, vt = np.linalg.svd(a)
    sign = np.linalg.det(u) * np.linalg.det(vt)
    f = _h(u) @ t @ _h(vt)
    mask = _eye(s) == 1
    q = np.where(mask, 0, _products_of_others(np.where(mask, 1, s[..., None, :])))  # q_ij, 0 for i == j
    middle = _diag((q @ _diagonal(f)[..., None])[..., 0]) - q * f
    return linalg_per_matrix(sign) * (_h(vt) @ middle @ _h(u))


def _products_of_others(x):
    """The product of the other entries along the last axis, for each entry, with no division."""
    ones = np.ones_like(x[..., :1])
    before = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    after = np.flip(np.cumprod(np.concatenate([ones, np.flip(x[..., 1:], -1)], axis=-1), axis=-1), -1)
    return before * after


# --- helpers of the rules called by name --------------------------------------------------------

def _eye(x):
    """The identity matrix the size of `x`'s last axis, in `x`'s dtype."""
    return np.eye(np.shape(x)[-1], dtype=np.result_type(x))


def _diag(d):
    """Matrices with the vectors `d` on their diagonals."""
    return d[..., :, None] * _eye(d)


def _diagonal(x):
    return np.diagonal(x, 0, -2, -1)


def _conj(x):
    """conj(x) for a complex x; a real x as it is (no copy)."""
    return np.conj(x) if np.iscomplexobj(x) else x


def _cotangents(g, count):
    """The cotangents of a multi-output function's outputs, None for the unused ones.

    `g` is a tuple or list with None where an output is unused, or a `Cotree` keyed by
    output index (the result was kept whole and indexed: `np.linalg.slogdet(a)[1]`).
    """
    if isinstance(g, dict):
        return tuple(g.get(i) for i in range(count))
    return tuple(g)


def _gap_inverse(w):
    """F[..., i, j] = 1 / (w_j - w_i), 0 where w_j == w_i (the diagonal, and exact ties)."""
    gaps = w[..., None, :] - w[..., :, None]
    return np.divide(1, gaps, out=np.zeros_like(gaps), where=gaps != 0)


def _safe_reciprocal(s):
    """1 / s, 0 where s == 0 (singular values of rank-deficient matrices)."""
    return np.divide(1, s, out=np.zeros_like(s), where=s != 0)


def _h(x):
    """The conjugate transpose of each matrix in a stack (the transpose of a real one)."""
    return _conj(linalg_mT(x))


def _one_triangle(s, uplo):
    """The cotangent of a function that reads only the `uplo` triangle of a symmetric matrix.

    `s` is the cotangent with respect to the full symmetric matrix; entry (i, j) of the read
    triangle stands for both (i, j) and (j, i).
    """
    both = s + linalg_mT(s)
    triangle = np.tril(both) if uplo.upper() == "L" else np.triu(both)
    return triangle - s * _eye(s)


def _symmetric_from(a, uplo):
    """The symmetric matrix a function reading only the `uplo` triangle of `a` sees."""
    if uplo.upper() == "L":
        return np.tril(a) + linalg_mT(np.tril(a, -1))
    return np.triu(a) + linalg_mT(np.triu(a, 1))


def _hermitian_triangle(s, uplo):
    """The cotangent of a function that reads only the `uplo` triangle of a Hermitian matrix.

    `s` is the cotangent with respect to the full Hermitian matrix; entry (i, j) of the read
    triangle stands for (i, j) and, conjugated, for (j, i). LAPACK reads only the real part of
    the diagonal. For a real `s` this is `_one_triangle`.
    """
    both = s + _h(s)
    strict = np.tril(both, -1) if uplo.upper() == "L" else np.triu(both, 1)
    return strict + np.real(s) * _eye(s)


def _hermitian_from(a, uplo):
    """The Hermitian matrix a function reading only the `uplo` triangle of `a` sees (LAPACK's eigh and
    cholesky: the strict triangle, its conjugate transpose, the real part of the diagonal)."""
    strict = np.tril(a, -1) if uplo.upper() == "L" else np.triu(a, 1)
    return strict + _h(strict) + np.real(a) * _eye(a)


def _scalar_product_cotangent(x_shape, other, g):
    """The cotangent of x in a product that is x * other, because x or other is a scalar."""
    return np.sum(g * other) if len(x_shape) == 0 else g * other


# --- matmul (`@`) and dot -----------------------------------------------------------------------

def matmul_vjp_x1(x1_shape, x2, g):
    if np.ndim(x2) == 1:
        return unbroadcast(np.multiply.outer(g, x2) if len(x1_shape) > 1 else g * x2, x1_shape)
    if len(x1_shape) == 1:
        return unbroadcast(np.matmul(x2, g[..., None])[..., 0], x1_shape)
    return unbroadcast(np.matmul(g, linalg_mT(x2)), x1_shape)


def matmul_vjp_x2(x1, x2_shape, g):
    if np.ndim(x1) == 1:
        if len(x2_shape) == 1:
            return g * x1
        return unbroadcast(np.moveaxis(np.multiply.outer(x1, g), 0, -2), x2_shape)
    if len(x2_shape) == 1:
        return unbroadcast(np.matmul(linalg_mT(x1), g[..., None])[..., 0], x2_shape)
    return unbroadcast(np.matmul(linalg_mT(x1), g), x2_shape)


def matmul_rule_x1(x1_shape, x2, x2_shape, g):
    return g @ x2.T if len(x1_shape) == 2 and len(x2_shape) == 2 else matmul_vjp_x1(x1_shape, x2, g)


def matmul_rule_x2(x1, x1_shape, x2_shape, g):
    return x1.T @ g if len(x1_shape) == 2 and len(x2_shape) == 2 else matmul_vjp_x2(x1, x2_shape, g)


def matmul_jvp_x1(x1_dot, x2):
    return x1_dot @ x2


def matmul_jvp_x2(x1, x2_dot):
    return x1 @ x2_dot


for _fn in (operator.matmul, np.matmul):
    table.vjp(_fn, "x1")(matmul_rule_x1)  # matrices: g @ x2.T, inline; otherwise the general rule
    table.vjp(_fn, "x2")(matmul_rule_x2)
    table.jvp(_fn, "x1")(matmul_jvp_x1)
    table.jvp(_fn, "x2")(matmul_jvp_x2)


@table.vjp(np.dot, "a")
def dot_vjp_a(a_shape, b, g):
    if len(a_shape) == 0 or np.ndim(b) == 0:
        return _scalar_product_cotangent(a_shape, b, g)
    # a (..., k) . b (..., k, m) or b (k,): contract g with b over every axis of b but k.
    b_axes = [i for i in range(np.ndim(b)) if i != max(np.ndim(b) - 2, 0)]
    return np.tensordot(g, b, (list(range(len(a_shape) - 1, np.ndim(g))), b_axes))


@table.vjp(np.dot, "b")
def dot_vjp_b(a, b_shape, g):
    if np.ndim(a) == 0 or len(b_shape) == 0:
        return _scalar_product_cotangent(b_shape, a, g)
    leading = list(range(np.ndim(a) - 1))
    result = np.tensordot(a, g, (leading, leading))  # (k, *b_batch, m), or (k,) if b is 1-d
    return np.moveaxis(result, 0, -2) if len(b_shape) > 1 else result


@table.jvp(np.dot, "a")
def dot_jvp_a(a_dot, b):
    return np.dot(a_dot, b)


@table.jvp(np.dot, "b")
def dot_jvp_b(a, b_dot):
    return np.dot(a, b_dot)


# --- inner, outer, vdot -------------------------------------------------------------------------

@table.vjp(np.inner, "a")
def inner_vjp_a(a_shape, b, g):
    if len(a_shape) == 0 or np.ndim(b) == 0:
        return _scalar_product_cotangent(a_shape, b, g)
    return np.tensordot(g, b, (list(range(len(a_shape) - 1, np.ndim(g))), list(range(np.ndim(b) - 1))))


@table.vjp(np.inner, "b")
def inner_vjp_b(a, b_shape, g):
    if np.ndim(a) == 0 or len(b_shape) == 0:
        return _scalar_product_cotangent(b_shape, a, g)
    leading = list(range(np.ndim(a) - 1))
    return np.tensordot(g, a, (leading, leading))


@table.jvp(np.inner, "a")
def inner_jvp_a(a_dot, b):
    return np.inner(a_dot, b)


@table.jvp(np.inner, "b")
def inner_jvp_b(a, b_dot):
    return np.inner(a, b_dot)


@table.vjp(np.outer, "a")
def outer_vjp_a(a_shape, b, g):
    return np.reshape(g @ np.ravel(b), a_shape)


@table.vjp(np.outer, "b")
def outer_vjp_b(a, b_shape, g):
    return np.reshape(np.ravel(a) @ g, b_shape)


@table.jvp(np.outer, "a")
def outer_jvp_a(a_dot, b):
    return np.outer(a_dot, b)


@table.jvp(np.outer, "b")
def outer_jvp_b(a, b_dot):
    return np.outer(a, b_dot)


@table.vjp(np.vdot, "a")
def vdot_vjp_a(a_shape, b, g):  # vdot(a, b) = sum(conj(a) b) is conjugate-linear in a
    return np.reshape(_conj(g * np.ravel(b)), a_shape)


@table.vjp(np.vdot, "b")
def vdot_vjp_b(a, b_shape, g):
    return np.reshape(g * _conj(np.ravel(a)), b_shape)


@table.jvp(np.vdot, "a")
def vdot_jvp_a(a_dot, b):
    return np.vdot(a_dot, b)


@table.jvp(np.vdot, "b")
def vdot_jvp_b(a, b_dot):
    return np.vdot(a, b_dot)


# --- tensordot ----------------------------------------------------------------------------------

def _tensordot_axes(axes, a_ndim, b_ndim):
    """(a's summed axes, b's summed axes): non-negative, paired in order."""
    if isinstance(axes, (int, np.integer)):
        return list(range(a_ndim - axes, a_ndim)), list(range(axes))
    a_axes, b_axes = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in axes)
    return [i % a_ndim for i in a_axes], [j % b_ndim for j in b_axes]


@table.vjp(np.tensordot, "a")
def tensordot_vjp_a(a_shape, b, axes, g):
    a_sum, b_sum = _tensordot_axes(axes, len(a_shape), np.ndim(b))
    a_free = [i for i in range(len(a_shape)) if i not in a_sum]
    b_free = [j for j in range(np.ndim(b)) if j not in b_sum]
    result = np.tensordot(g, b, (list(range(len(a_free), np.ndim(g))), b_free))
    # result's axes: a's free axes, then b's summed axes in increasing order, each paired with an axis of a
    order = a_free + [a_sum[b_sum.index(j)] for j in sorted(b_sum)]
    return np.transpose(result, tuple(np.argsort(order).tolist()))  # dask takes axes as a tuple only


@table.vjp(np.tensordot, "b")
def tensordot_vjp_b(a, b_shape, axes, g):
    a_sum, b_sum = _tensordot_axes(axes, np.ndim(a), len(b_shape))
    a_free = [i for i in range(np.ndim(a)) if i not in a_sum]
    b_free = [j for j in range(len(b_shape)) if j not in b_sum]
    result = np.tensordot(a, g, (a_free, list(range(len(a_free)))))
    # result's axes: a's summed axes in increasing order, each paired with an axis of b, then b's free axes
    order = [b_sum[a_sum.index(i)] for i in sorted(a_sum)] + b_free
    return np.transpose(result, tuple(np.argsort(order).tolist()))  # dask takes axes as a tuple only


@table.jvp(np.tensordot, "a")
def tensordot_jvp_a(a_dot, b, axes):
    return np.tensordot(a_dot, b, axes)


@table.jvp(np.tensordot, "b")
def tensordot_jvp_b(a, b_dot, axes):
    return np.tensordot(a, b_dot, axes)


# --- einsum -------------------------------------------------------------------------------------

def _einsum_labels(subscripts, shapes):
    """Each operand's labels and the output's, with every `...` spelled out as letters.

    Implicit output (no `->`) is NumPy's: the broadcast dimensions, then the labels
    that occur once, in alphabetical order.
    """
    text = subscripts.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    specs = inputs.split(",")
    unused = [c for c in string.ascii_letters if c not in text]
    broadcast = max((len(shape) - len(spec) + 3 for spec, shape in zip(specs, shapes) if "..." in spec),
                    default=0)
    ellipsis = unused[:broadcast]
    labels = []
    for spec, shape in zip(specs, shapes):
        head, dots, tail = spec.partition("...")
        own = len(shape) - len(head) - len(tail) if dots else 0
        labels.append(list(head) + ellipsis[broadcast - own:broadcast] + list(tail))
    if arrow:
        head, dots, tail = output.partition("...")
        return labels, list(head) + (ellipsis if dots else []) + list(tail)
    counts = {}
    for c in inputs.replace(".", "").replace(",", ""):
        counts[c] = counts.get(c, 0) + 1
    return labels, ellipsis + sorted(c for c, n in counts.items() if n == 1)


def _einsum_cotangent(i, labels, output, operands, g, optimize):
    """The cotangent of operand `i`: `g` contracted with the other operands, then spread over the
    labels only operand `i` has (summed there, so the cotangent is constant along them), size-1
    axes that broadcasting stretched summed back, and repeated labels put back on their diagonal."""
    mine, shape = labels[i], np.shape(operands[i])
    unique = list(dict.fromkeys(mine))
    others = [j for j in range(len(operands)) if j != i]
    reachable = set(output).union(*(labels[j] for j in others))
    kept = [c for c in unique if c in reachable]
    spec = ",".join("".join(lab) for lab in [output] + [labels[j] for j in others]) + "->" + "".join(kept)
    part = np.einsum(spec, g, *(operands[j] for j in others), optimize=optimize)
    size = dict(zip(mine, shape))
    stretched = tuple(k for k, c in enumerate(kept) if size[c] == 1 and part.shape[k] != 1)
    if stretched:
        part = np.sum(part, axis=stretched, keepdims=True)
    part = np.reshape(part, [size[c] if c in kept else 1 for c in unique])
    if len(kept) < len(unique):
        part = np.broadcast_to(part, [size[c] for c in unique]).copy()
    if len(unique) == len(mine):
        return part
    grid = np.indices(shape, sparse=True)
    first = {c: grid[mine.index(c)] for c in unique}
    on_diagonal = np.ones(shape, dtype=bool)
    for axis, c in enumerate(mine):
        on_diagonal = on_diagonal & (grid[axis] == first[c])
    return np.where(on_diagonal, part[tuple(first[c] for c in unique)], 0)


def _einsum_parts(subscripts, operands):
    """(the subscripts as a string, the arrays, and each array's position among (subscripts, *operands)).

    The interleaved form, `np.einsum(a, [0, 1], b, [1, 2], [0, 2])`, binds the first array to
    `subscripts`; its sublists are spelled as letters in the order of their labels, so NumPy's
    implicit output (the labels used once, in order) stays the same.
    """
    if isinstance(subscripts, str):
        return subscripts, list(operands), list(range(1, len(operands) + 1))
    items = [subscripts, *operands]
    output = items.pop() if len(items) % 2 else None
    sublists = items[1::2] + ([output] if output is not None else [])
    symbols = sorted({s for sub in sublists for s in sub if s is not Ellipsis})
    if len(symbols) > len(string.ascii_letters):
        raise TapegenError(f"np.einsum with {len(symbols)} labels: tapegen spells them as letters, 52 at most")
    letter = dict(zip(symbols, string.ascii_letters))

    def spell(sub):
        return "".join("..." if s is Ellipsis else letter[s] for s in sub)
    spec = ",".join(spell(sub) for sub in items[1::2]) + ("" if output is None else "->" + spell(output))
    return spec, items[0::2], list(range(0, len(items), 2))


def einsum_spelling(has_output, *sublists):
    """The subscripts string for the interleaved form's sublists (and output sublist, if `has_output`), for
    `np.einsum(a, s0, b, s1)` whose sublists are known only when the code runs: the call is then written
    `np.einsum(einsum_spelling(False, s0, s1), a, b)`, every array an operand like in the string form."""
    items = [part for sub in sublists[:len(sublists) - has_output] for part in (None, sub)]
    spec, _, _ = _einsum_parts(items[0], items[1:] + list(sublists[len(sublists) - has_output:]))
    return spec



def is_subscripts(first):
    """Whether np.einsum's first argument is the subscripts string (else the interleaved form's first array)."""
    return isinstance(first, str)



def _einsum_cotangents(subscripts, operands, optimize, g):
    """The cotangents of (subscripts, *operands), None for what is not an array (strings, sublists)."""
    spec, arrays, positions = _einsum_parts(subscripts, operands)
    labels, output = _einsum_labels(spec, [np.shape(x) for x in arrays])
    optimize = optimize if isinstance(optimize, (bool, str)) else True
    found = [None] * (len(operands) + 1)
    for i, position in enumerate(positions):
        found[position] = _einsum_cotangent(i, labels, output, arrays, g, optimize)
    return found


def _einsum_dense(items, count):
    """Per-operand cotangents or tangents (a list or tuple with None, or a Cotree) as a list of `count`."""
    if isinstance(items, dict):
        return [items.get(i) for i in range(count)]
    return list(items) if items is not None else [None] * count


def einsum_cross(subscripts, operands, optimize, ct, others):
    """For each operand k: the sum over the other operands m with an entry in `others` of operand k's
    cotangent (for `ct`) with operand m replaced by others[m]. It is both the derivative of
    `einsum_vjp` along tangents `others` of the operands and its VJP for cotangents `others`
    (einsum is multilinear). Sublists of the interleaved form get None."""
    spec, arrays, positions = _einsum_parts(subscripts, operands)
    labels, output = _einsum_labels(spec, [np.shape(x) for x in arrays])
    optimize = optimize if isinstance(optimize, (bool, str)) else True
    others = _einsum_dense(others, len(operands))
    swaps = {i: others[p - 1] for i, p in enumerate(positions) if p > 0 and others[p - 1] is not None}
    result = [None] * len(operands)
    for k, position in enumerate(positions):
        if position == 0:
            continue
        total = None
        for m, other in swaps.items():
            if m != k:
                part = _einsum_cotangent(k, labels, output, arrays[:m] + [other] + arrays[m + 1:], ct, optimize)
                total = part if total is None else total + part
        result[position - 1] = np.zeros(np.shape(arrays[k]), np.result_type(arrays[k], ct)) if total is None else total
    return result


def _einsum_tangent(subscripts, operands, optimize, dots):
    """The output's tangent from `dots`, the tangents of (subscripts, *operands) (None: constant)."""
    spec, arrays, positions = _einsum_parts(subscripts, operands)
    total = None
    for i, position in enumerate(positions):
        if dots[position] is not None:
            term = np.einsum(spec, *arrays[:i], dots[position], *arrays[i + 1:], optimize=optimize)
            total = term if total is None else total + term
    return total


@table.vjp(np.einsum, "operands")
def einsum_vjp(subscripts, operands, optimize, g):
    cotangents = _einsum_cotangents(subscripts, operands, optimize, g)
    return cotangents[1:]


@table.vjp(np.einsum, "subscripts")
def einsum_vjp_subscripts(subscripts, operands, optimize, g):
    """The first array's cotangent in the interleaved form, which binds it to `subscripts`."""
    return einsum_first_cotangent(subscripts, operands, optimize, g)


def einsum_first_cotangent(subscripts, operands, optimize, ct):
    """The cotangent of `subscripts`: in the interleaved form the first array's, else none (a string)."""
    if isinstance(subscripts, str) or ct is None:
        return None
    return _einsum_cotangents(subscripts, operands, optimize, ct)[0]


def einsum_tangent_cross(subscripts, operands, optimize, directions, others):
    """The sum over operand pairs i != m of einsum with operand i replaced by directions[i] and operand m
    by others[m]: the derivative of `einsum_jvp` in the operands along `others` (einsum is multilinear)."""
    spec, arrays, positions = _einsum_parts(subscripts, operands)
    dots, swaps = _einsum_dense(directions, len(operands)), _einsum_dense(others, len(operands))
    total = None
    for i, pi in enumerate(positions):
        for m, pm in enumerate(positions):
            if m != i and pi > 0 and pm > 0 and dots[pi - 1] is not None and swaps[pm - 1] is not None:
                parts = list(arrays)
                parts[i], parts[m] = dots[pi - 1], swaps[pm - 1]
                term = np.einsum(spec, *parts, optimize=optimize)
                total = term if total is None else total + term
    return np.zeros_like(np.einsum(spec, *arrays, optimize=optimize)) if total is None else total


@table.jvp(np.einsum, "operands")
def einsum_jvp(subscripts, operands, operands_dot, optimize):
    dots = [None] + list(_einsum_dense(operands_dot, len(operands)))
    return _einsum_tangent(subscripts, operands, optimize, dots)  # called by name: a primitive with rules


def einsum_first_tangent(subscripts, operands, optimize, subscripts_dot):
    """The tangent from `subscripts`: in the interleaved form the first array's, else none (a string, even
    one a list gave, carries no derivative)."""
    if isinstance(subscripts, str) or subscripts_dot is None:
        return None
    return _einsum_tangent(subscripts, operands, optimize, [subscripts_dot] + [None] * len(operands))


@table.jvp(np.einsum, "subscripts")
def einsum_jvp_subscripts(subscripts, subscripts_dot, operands, optimize):
    return einsum_first_tangent(subscripts, operands, optimize, subscripts_dot)


# --- trace, kron, cross -------------------------------------------------------------------------

@table.vjp(np.trace, "a")
def trace_vjp(a_meta, offset, axis1, axis2, g):
    shape, dtype = a_meta
    diagonal = np.eye(shape[axis1], shape[axis2], offset, dtype=dtype)
    return np.moveaxis(np.multiply.outer(g, diagonal), (-2, -1), (axis1, axis2))


@table.jvp(np.trace, "a")
def trace_jvp(a_dot, offset, axis1, axis2):
    return np.trace(a_dot, offset, axis1, axis2)


def _kron_blocks(g, a_shape, b_shape):
    """`g` as (a0, b0, a1, b1, ...), with a and b padded with leading 1s to one rank."""
    rank = max(len(a_shape), len(b_shape))
    a_pad = (1,) * (rank - len(a_shape)) + tuple(a_shape)
    b_pad = (1,) * (rank - len(b_shape)) + tuple(b_shape)
    return np.reshape(g, [n for pair in zip(a_pad, b_pad) for n in pair]), a_pad, b_pad


@table.vjp(np.kron, "a")
def kron_vjp_a(a_shape, b, g):
    blocks, _, b_pad = _kron_blocks(g, a_shape, np.shape(b))
    b_spread = np.reshape(b, [n for k in b_pad for n in (1, k)])
    return np.reshape(np.sum(blocks * b_spread, axis=tuple(range(1, 2 * len(b_pad), 2))), a_shape)


@table.vjp(np.kron, "b")
def kron_vjp_b(a, b_shape, g):
    blocks, a_pad, _ = _kron_blocks(g, np.shape(a), b_shape)
    a_spread = np.reshape(a, [n for k in a_pad for n in (k, 1)])
    return np.reshape(np.sum(blocks * a_spread, axis=tuple(range(0, 2 * len(a_pad), 2))), b_shape)


@table.jvp(np.kron, "a")
def kron_jvp_a(a_dot, b):
    return np.kron(a_dot, b)


@table.jvp(np.kron, "b")
def kron_jvp_b(a, b_dot):
    return np.kron(a, b_dot)


def _cross_cotangent(x, x_axis, other, other_axis, c_axis, g, x_first):
    """The cotangent of `x` in `np.cross(x, other)` (x_first) or `np.cross(other, x)`.

    <g, a x b> = <a, b x g> = <b, g x a>; 2-vectors are 3-vectors with z = 0, and
    two 2-vectors have only the z component of their product as output.
    """
    x_moved = np.moveaxis(x, x_axis, -1)
    o = np.moveaxis(other, other_axis, -1)
    if o.shape[-1] == 2:
        o = np.concatenate([o, np.zeros_like(o[..., :1])], axis=-1)
    if x_moved.shape[-1] == 2 and np.shape(other)[other_axis] == 2:
        zero = np.zeros_like(g)
        g3 = np.stack([zero, zero, g], axis=-1)
    else:
        g3 = np.moveaxis(g, c_axis, -1)
    result = np.cross(o, g3) if x_first else np.cross(g3, o)
    return np.moveaxis(unbroadcast(result[..., :x_moved.shape[-1]], x_moved.shape), -1, x_axis)


@table.vjp(np.cross, "a")
def cross_vjp_a(a, b, axisa, axisb, axisc, axis, g):
    if axis is not None:
        axisa = axisb = axisc = axis
    return _cross_cotangent(a, axisa, b, axisb, axisc, g, True)


@table.vjp(np.cross, "b")
def cross_vjp_b(a, b, axisa, axisb, axisc, axis, g):
    if axis is not None:
        axisa = axisb = axisc = axis
    return _cross_cotangent(b, axisb, a, axisa, axisc, g, False)


@table.jvp(np.cross, "a")
def cross_jvp_a(a_dot, b, axisa, axisb, axisc, axis):
    return np.cross(a_dot, b, axisa, axisb, axisc, axis)


@table.jvp(np.cross, "b")
def cross_jvp_b(a, b_dot, axisa, axisb, axisc, axis):
    return np.cross(a, b_dot, axisa, axisb, axisc, axis)


# --- det, slogdet, inv, pinv --------------------------------------------------------------------

@table.vjp(np.linalg.det, "a")
def det_vjp(a, g):
    return linalg_per_matrix(g) * linalg_mT(linalg_adjugate(a))


@table.jvp(np.linalg.det, "a")
def det_jvp(a, a_dot):
    return np.einsum("...ij,...ji->...", linalg_adjugate(a), a_dot)


@table.vjp(np.linalg.slogdet, "a")
def slogdet_vjp(a, y, g):
    """d logdet = Re(T) and d sign = i sign Im(T), T = tr(a^-1 da): the sign is piecewise constant
    for a real `a`, and moves on the unit circle for a complex one."""
    g_sign, g_logdet = _cotangents(g, 2)
    scale = 0 if g_logdet is None else np.real(g_logdet)
    if g_sign is not None and np.iscomplexobj(y[0]):
        scale = scale + 1j * np.imag(g_sign * y[0])
    if g_sign is None and g_logdet is None:
        return np.zeros_like(a)
    return linalg_per_matrix(scale) * linalg_mT(np.linalg.inv(a))


@table.jvp(np.linalg.slogdet, "a")
def slogdet_jvp(a, a_dot, y):
    t = np.einsum("...ii->...", np.linalg.solve(a, a_dot))
    sign_dot = y[0] * (1j * np.imag(t)) if np.iscomplexobj(y[0]) else np.zeros_like(y[0])
    return sign_dot, np.real(t)


@table.vjp(np.linalg.inv, "a")
def inv_vjp(y, g):
    return -linalg_mT(y) @ g @ linalg_mT(y)


@table.jvp(np.linalg.inv, "a")
def inv_jvp(a_dot, y):
    return -y @ a_dot @ y


@table.vjp(np.linalg.pinv, "a")
def pinv_vjp(a, y, g):
    """Golub & Pereyra, where the rank is locally constant, for X = pinv(A), in G = conj(g) (for a complex
    A the formula reads with conjugate transposes) and conjugated back:
    conj(-X^H G X^H + (I - A X) G^H X X^H + X^H X G^H (I - X A))."""
    xh, gh = _h(y), linalg_mT(g)  # G^H is g^T
    g = _conj(g)
    return _conj(-xh @ g @ xh + (gh - a @ (y @ gh)) @ (y @ xh) + (xh @ y) @ (gh - (gh @ y) @ a))


@table.jvp(np.linalg.pinv, "a")
def pinv_jvp(a, a_dot, y):
    """dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X, for X = pinv(A)."""
    xh, dh = _h(y), _h(a_dot)
    return -y @ a_dot @ y + (y @ xh) @ (dh - (dh @ a) @ y) + (dh - y @ (a @ dh)) @ (xh @ y)


# --- solve and lstsq ----------------------------------------------------------------------------

def _solve_vector(a_ndim, b_ndim):
    """Whether np.linalg.solve treats b as a vector (stack) rather than a matrix (stack)."""
    return b_ndim == 1 if _SOLVE_VECTOR_IS_1D else b_ndim == a_ndim - 1


def _solve_transposed(a, b_ndim, g):
    """solve(a^T, g), with g in the shape of the solution (vectors as columns)."""
    if _solve_vector(np.ndim(a), b_ndim):
        return np.linalg.solve(linalg_mT(a), g[..., None])
    return np.linalg.solve(linalg_mT(a), g)


@table.vjp(np.linalg.solve, "a")
def solve_vjp_a(a, b_shape, y, g):
    columns = y[..., None] if _solve_vector(np.ndim(a), len(b_shape)) else y
    return unbroadcast(-_solve_transposed(a, len(b_shape), g) @ linalg_mT(columns), np.shape(a))


@table.vjp(np.linalg.solve, "b")
def solve_vjp_b(a, b_shape, g):
    g_b = _solve_transposed(a, len(b_shape), g)
    return unbroadcast(g_b[..., 0] if _solve_vector(np.ndim(a), len(b_shape)) else g_b, b_shape)


@table.jvp(np.linalg.solve, "a")
def solve_jvp_a(a, a_dot, b_shape, y):
    if _solve_vector(np.ndim(a), len(b_shape)):
        return -np.linalg.solve(a, a_dot @ y[..., None])[..., 0]
    return -np.linalg.solve(a, a_dot @ y)


@table.jvp(np.linalg.solve, "b")
def solve_jvp_b(a, b_dot):
    return np.linalg.solve(a, b_dot)


def _lstsq_parts(a, b, y):
    """x = pinv(a) b and the residual b - a x, both with b's columns as columns."""
    x = y[0]
    b_columns, x_columns = (b[:, None], x[:, None]) if np.ndim(b) == 1 else (b, x)
    return np.linalg.pinv(a), x_columns, b_columns - a @ x_columns


def _has_residuals(y, g_residuals):
    return g_residuals is not None and np.size(y[1]) > 0


@table.vjp(np.linalg.lstsq, "a")
def lstsq_vjp_a(a, b, y, g):
    g_x, g_residuals, _, g_s = _cotangents(g, 4)
    pinv, x, r = _lstsq_parts(a, b, y)
    result = np.zeros_like(a)
    if g_x is not None:
        g_columns = g_x[:, None] if np.ndim(b) == 1 else g_x
        b_columns = b[:, None] if np.ndim(b) == 1 else b
        result = result + pinv_vjp(a, pinv, g_columns @ linalg_mT(b_columns))
    if _has_residuals(y, g_residuals):  # r is orthogonal to a's columns, so x's change does not count
        result = result - 2 * (_conj(r) * np.real(g_residuals)) @ linalg_mT(x)
    if g_s is not None:
        u, _, vt = np.linalg.svd(a, full_matrices=False)
        result = result + (_conj(u) * np.real(g_s)[..., None, :]) @ _conj(vt)
    return result


@table.vjp(np.linalg.lstsq, "b")
def lstsq_vjp_b(a, b, y, g):
    g_x, g_residuals, _, _ = _cotangents(g, 4)
    pinv, _, r = _lstsq_parts(a, b, y)
    result = np.zeros_like(b)
    if g_x is not None:
        result = result + linalg_mT(pinv) @ g_x
    if _has_residuals(y, g_residuals):
        result = result + 2 * np.reshape(_conj(r) * np.real(g_residuals), np.shape(b))
    return result


@table.jvp(np.linalg.lstsq, "a")
def lstsq_jvp_a(a, a_dot, b, y):
    pinv, x, r = _lstsq_parts(a, b, y)
    x_dot = pinv_jvp(a, a_dot, pinv) @ (b[:, None] if np.ndim(b) == 1 else b)
    residuals_dot = -2 * np.sum(np.real(_conj(r) * (a_dot @ x)), axis=0) if np.size(y[1]) else np.zeros_like(y[1])
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    s_dot = np.real(_diagonal(_h(u) @ a_dot @ _h(vt)))
    return np.reshape(x_dot, np.shape(y[0])), residuals_dot, None, s_dot


@table.jvp(np.linalg.lstsq, "b")
def lstsq_jvp_b(a, b, b_dot, y):
    pinv, _, r = _lstsq_parts(a, b, y)
    b_dot_columns = b_dot[:, None] if np.ndim(b) == 1 else b_dot
    residuals_dot = 2 * np.sum(np.real(_conj(r) * b_dot_columns), axis=0) if np.size(y[1]) else np.zeros_like(y[1])
    return pinv @ b_dot, residuals_dot, None, np.zeros_like(y[3])


# --- norm ---------------------------------------------------------------------------------------

def _norm_axes(ndim, ord, axis):
    """(the reduced axes, non-negative; whether it is a matrix norm), as np.linalg.norm decides."""
    if axis is None:
        if ord is None or ndim == 1:
            return tuple(range(ndim)), False
        return (0, 1), True
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(a % ndim for a in axes), len(axes) == 2


def norm_axes(x_shape, ord, axis):
    """The axes np.linalg.norm(x, ord, axis) reduces."""
    return _norm_axes(len(x_shape), ord, axis)[0]


def norm_is_matrix(x_shape, ord, axis):
    """Whether np.linalg.norm(x, ord, axis) is a matrix norm."""
    return _norm_axes(len(x_shape), ord, axis)[1]


def _norm_value(x, ord, axes, matrix):
    """The norm with the reduced axes kept (a vector norm over any number of axes, as vector_norm)."""
    if matrix:
        return np.linalg.norm(x, ord, axes, keepdims=True)
    moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0)))
    flat = np.reshape(moved, np.shape(moved)[:np.ndim(x) - len(axes)] + (-1,))
    return np.expand_dims(np.linalg.norm(flat, ord, -1), tuple(sorted(axes)))


def norm_direction(x, ord, axes, matrix):
    """d norm / d x for each element (JAX's convention for complex x: conjugated).

    At x = 0 (and at ties of max-type norms) this is the subgradient 0 (split evenly among ties).
    Declared with rules in runtime_rules.py (its derivative is the norm's Hessian), so the
    gradient of a norm differentiates again.
    """
    y = _norm_value(x, ord, axes, matrix)
    if ord is None or ord == "fro" or (ord == 2 and not matrix):
        direction = safe_div(x, y)
    elif matrix and ord in (2, -2, "nuc"):
        direction = _norm_spectral_gradient(x, ord, axes)
    elif matrix and ord in (1, -1, np.inf, -np.inf):
        summed, extreme = (axes[0], axes[1]) if ord in (1, -1) else (axes[1], axes[0])
        direction = _norm_extreme_gradient(x, np.sum(np.abs(x), axis=summed, keepdims=True), extreme, ord > 0)
    elif ord in (np.inf, -np.inf):
        direction = _norm_extreme_gradient(x, np.abs(x), axes, ord > 0)
    elif ord == 0:
        direction = np.zeros_like(x)
    elif ord == 1:
        direction = np.sign(x)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            direction = np.where(x == 0, 0, np.sign(x) * safe_div(np.abs(x), y) ** (ord - 1))
    return np.conj(direction) if np.iscomplexobj(direction) else direction


def norm_direction_tangent(x, ord, axes, matrix, t):
    """The derivative of `norm_direction` along `t`: the norm's Hessian times `t`, slice by slice.

    The Hessian is symmetric, so this is also `norm_direction`'s VJP (for a complex x too, under the
    convention: Re<D, t> is the real gradient's inner product with t). Piecewise linear norms of a real x
    (ord 0, 1, inf, -inf, and the matrix 1, -1, inf, -inf norms) have Hessian 0.
    """
    complex_input = np.iscomplexobj(x) or np.iscomplexobj(t)
    if complex_input and (ord in (np.inf, -np.inf) or (matrix and ord not in (None, "fro", 2, -2, "nuc"))):
        raise TapegenError(f"tapegen has no second derivatives of np.linalg.norm(ord={ord!r}) of a complex array",
                           hint="write the norm out (np.sqrt(np.sum(np.abs(z) ** 2)) for the 2-norm)")
    if matrix and ord in (2, -2, "nuc"):
        return _norm_spectral_tangent(x, ord, axes, t)
    if ord == 0 or (not complex_input and (ord in (1, np.inf, -np.inf) or (matrix and ord == -1))):
        return np.zeros_like(x * t)
    p = 2 if ord is None or ord == "fro" else ord
    y = _norm_value(x, ord, axes, matrix)
    direction = norm_direction(x, ord, axes, matrix)
    y_dot = np.real(np.sum(direction * t, axis=axes, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        curvature = np.where(x == 0, 0, safe_div(np.abs(x), y) ** (p - 2)) if p != 2 else 1
        if not complex_input:
            return (p - 1) * safe_div(curvature * t - direction * y_dot, y)
        # D = conj(z) |z|^(p-2) / N^(p-1): dD = (conj(t) |z|^(p-2) + (p-2) conj(z) |z|^(p-4) Re(conj(z) t))
        # / N^(p-1) - (p-1) D dN / N, dN = Re(sum(D t))
        bent = np.conj(t) * curvature
        if p != 2:
            bent = bent + (p - 2) * np.where(x == 0, 0, curvature * np.conj(x) * np.real(np.conj(x) * t)
                                             / np.abs(x) ** 2)
    return safe_div(bent - (p - 1) * direction * y_dot, y)


def _norm_extreme_gradient(x, values, axes, largest):
    """sign(x) on the parts of `x` whose `values` attain the max (or min) over `axes`, ties sharing."""
    target = np.max(values, axis=axes, keepdims=True) if largest else np.min(values, axis=axes, keepdims=True)
    hits = values == target
    count = np.sum(hits, axis=axes, keepdims=True).astype(np.result_type(x))
    return np.sign(x) * hits / count


def _norm_spectral_gradient(x, ord, axes):
    """u_k v_k^T for the largest (ord=2) or smallest (ord=-2) singular value, U V^T for 'nuc';
    0 for a zero matrix, whose singular vectors are arbitrary."""
    matrices = np.moveaxis(x, axes, (-2, -1))
    u, _, vt = np.linalg.svd(matrices, full_matrices=False)
    if ord == "nuc":
        direction = u @ vt
    else:
        k = [0] if ord == 2 else [-1]
        direction = u[..., :, k] @ vt[..., k, :]
    direction = direction * np.any(matrices != 0, axis=(-2, -1), keepdims=True)
    return np.moveaxis(direction, (-2, -1), axes)


def _norm_spectral_tangent(x, ord, axes, t):
    """The derivative of `_norm_spectral_gradient` along `t`, from the SVD's tangents (conjugated for a
    complex x, as the gradient is)."""
    matrices = np.moveaxis(x, axes, (-2, -1))
    u, s, vt = np.linalg.svd(matrices, full_matrices=False)
    u_dot, _, vt_dot = _svd_tangent(np.moveaxis(t, axes, (-2, -1)), u, s, vt)
    if ord == "nuc":
        direction = u_dot @ vt + u @ vt_dot
    else:
        k = [0] if ord == 2 else [-1]
        direction = u_dot[..., :, k] @ vt[..., k, :] + u[..., :, k] @ vt_dot[..., k, :]
    direction = _conj(direction) * np.any(matrices != 0, axis=(-2, -1), keepdims=True)
    return np.moveaxis(direction, (-2, -1), axes)


@table.vjp(np.linalg.norm, "x")
def norm_vjp(x, x_shape, ord, axis, keepdims, g):  # a norm is real: so is its cotangent
    return unreduce(np.real(g), x_shape, norm_axes(x_shape, ord, axis), keepdims) * \
        norm_direction(x, ord, norm_axes(x_shape, ord, axis), norm_is_matrix(x_shape, ord, axis))


@table.jvp(np.linalg.norm, "x")
def norm_jvp(x, x_shape, x_dot, ord, axis, keepdims, y):
    return real_like(np.sum(norm_direction(x, ord, norm_axes(x_shape, ord, axis), norm_is_matrix(x_shape, ord, axis))
                            * x_dot, axis=norm_axes(x_shape, ord, axis), keepdims=keepdims), y)


# --- eigh, eigvalsh, eig, eigvals ---------------------------------------------------------------

def phase_independent(dependence, size):
    """Refuse a loss that changes with the phases of complex eigenvectors or singular vectors.

    A complex eigenvector v is as good as v exp(i t), a singular pair u, v as u exp(i t), v exp(i t):
    LAPACK picks one, and the rules (as autograd's, JAX's, PyTorch's) hold for losses that do not depend
    on the choice. `dependence[..., k]` is dL/dt for the k-th vector (pair), `size[..., k]` the size of
    its cotangent; a dependence beyond rounding means the gradient the rules give is not the loss's.
    """
    tolerance = np.sqrt(np.finfo(np.result_type(dependence, 1.0)).eps)
    if np.any(np.abs(dependence) > tolerance * (size + np.finfo(np.result_type(size, 1.0)).tiny)):
        raise TapegenError("the function depends on the phases of complex eigenvectors or singular vectors, "
                           "which are arbitrary (v is as good as v * exp(i t)): it has no gradient",
                           hint="differentiate what does not depend on them: the values, np.abs(v), "
                                "v @ v.conj().T, u @ np.diag(s) @ vh")


def tie_independent(w, m):
    """Refuse a loss that reads eigenvectors (singular vectors) where their eigenvalues (singular values) tie.

    Where w_i == w_j (i != j), vectors i and j are any orthonormal basis of their plane, and their derivative
    has no value: the rules (as autograd's, JAX's) leave out F[i, j] = 1 / (w_j - w_i) there, which holds
    only where the loss does not read them (`m`, what F multiplies, is zero at the tie). A loss that reads
    them through a function of the matrix (V f(w) V^T: its square root, the polar factor U V^T) has a
    derivative the rules cannot give: it needs f's divided differences, which they do not see.
    """
    ties = (w[..., :, None] == w[..., None, :]) & ~np.eye(np.shape(w)[-1], dtype=bool)
    if not np.any(ties):
        return
    size = np.max(np.abs(m), axis=(-2, -1), keepdims=True)
    tolerance = np.sqrt(np.finfo(np.result_type(m, 1.0)).eps)
    if np.any(np.abs(m) * ties > tolerance * (size + np.finfo(np.result_type(size, 1.0)).tiny)):
        raise TapegenError("the function reads eigenvectors (or singular vectors) of equal eigenvalues (singular "
                           "values), which are any basis of their space: their derivative is not determined "
                           "there, and the gradient would be wrong",
                           hint="for a function of the matrix (V f(w) V^T), use one with its own rule "
                                "(scipy.linalg.sqrtm, expm, logm, np.linalg.inv); else move the values apart")


def diagonalizable(w, v):
    """Refuse eig's derivative where a repeated eigenvalue has too few eigenvectors (a Jordan block, as in
    [[1, h], [0, 1]]): the eigenvalues move by sqrt(dA) there, and the rules' V^-1 (V nearly singular) would
    give a finite, wrong number."""
    ties = (w[..., :, None] == w[..., None, :]) & ~np.eye(np.shape(w)[-1], dtype=bool)
    if np.any(ties) and np.any(np.linalg.cond(v) > 1 / np.sqrt(np.finfo(np.result_type(v, 1.0)).eps)):
        raise TapegenError("np.linalg.eig of a matrix with a repeated eigenvalue and too few eigenvectors (not "
                           "diagonalizable): its eigenvalues have no derivative there",
                           hint="for a symmetric matrix use np.linalg.eigh; a function of the eigenvalues as a "
                                "whole may have one that needs no eigenvalue: np.trace(A @ A) for sum(w ** 2)")


def _tie_tangent(w, product, read):
    """`product` (F * `read`) with the columns whose entries tied values leave undetermined (`read` nonzero
    there) nan: forward mode's counterpart of `tie_independent` (the tangent of a vector no one reads is
    never read, so it cannot refuse)."""
    ties = (w[..., :, None] == w[..., None, :]) & ~np.eye(np.shape(w)[-1], dtype=bool)
    if not np.any(ties):
        return product
    return np.where(np.any(ties & (read != 0), axis=-2, keepdims=True), np.nan, product)


def _phase_dependence(v, g_v):
    """(dL/dt for each column v_k turned by exp(i t), the size of its cotangent): -Im(v_k^T g_k), |g_k|."""
    return -np.imag(np.sum(v * g_v, axis=-2)), np.sqrt(np.sum(np.abs(g_v) ** 2, axis=-2))


def _eigh_cotangent(w, v, g_w, g_v):
    """conj(V) (diag(g_w) + F * (V^T g_v)) V^T, F[i, j] = 1 / (w_j - w_i): the cotangent of the Hermitian
    matrix (symmetric for a real one). An imaginary part of g_w, the cotangent of real eigenvalues, goes
    when `_hermitian_triangle` keeps the Hermitian part."""
    middle = np.zeros_like(v)
    if g_v is not None and np.iscomplexobj(v):
        dependence, size = _phase_dependence(v, g_v)
        phase_independent(dependence, size)
    if g_v is not None:
        read = linalg_mT(v) @ g_v
        tie_independent(w, read)
        middle = _gap_inverse(w) * read
    if g_w is not None:
        middle = middle + _diag(g_w)
    return _conj(v) @ middle @ linalg_mT(v)


def _eigh_tangent(w, v, a_dot):
    """(dw, dV) of a = V diag(w) V^H along the Hermitian a_dot: P = V^H a_dot V, dw = diag(P) (real),
    dV = V (F * P), whose columns keep their phase (diag(V^H dV) = 0)."""
    p = _h(v) @ a_dot @ v
    return np.real(_diagonal(p)).copy(), v @ _tie_tangent(w, _gap_inverse(w) * p, p)


@table.vjp(np.linalg.eigh, "a")
def eigh_vjp(UPLO, y, g):
    w, v = y
    g_w, g_v = _cotangents(g, 2)
    return _hermitian_triangle(_eigh_cotangent(w, v, g_w, g_v), UPLO)


@table.jvp(np.linalg.eigh, "a")
def eigh_jvp(a_dot, UPLO, y):
    return _eigh_tangent(y[0], y[1], _hermitian_from(a_dot, UPLO))


@table.vjp(np.linalg.eigvalsh, "a")
def eigvalsh_vjp(a, UPLO, g):
    w, v = np.linalg.eigh(a, UPLO)
    return _hermitian_triangle(_eigh_cotangent(w, v, g, None), UPLO)


@table.jvp(np.linalg.eigvalsh, "a")
def eigvalsh_jvp(a, a_dot, UPLO):
    _, v = np.linalg.eigh(a, UPLO)
    return np.real(np.einsum("...ji,...jk,...ki->...i", _conj(v), _hermitian_from(a_dot, UPLO), v))


def _eig_cotangent(w, v, g_w, g_v, free):
    """V^-T (diag(g_w) + F * (V^T g_v')) V^T for unit-norm eigenvectors, where g_v' = g_v - conj(V)
    diag(1^T (V * g_v)) is the cotangent of V before each column was normalised: dV loses its part
    along V, diag(V^H dV) = 0 (the length is fixed; the phase, free where `free` says, is kept)."""
    middle = np.zeros_like(v)
    diagonalizable(w, v)
    if g_v is not None and np.iscomplexobj(v):
        dependence, size = _phase_dependence(v, g_v)
        phase_independent(dependence * free, size)
    if g_v is not None:
        g_v = g_v - _conj(v) * np.sum(v * g_v, axis=-2, keepdims=True)
        read = linalg_mT(v) @ g_v
        tie_independent(w, read)
        middle = _gap_inverse(w) * read
    if g_w is not None:
        middle = middle + _diag(g_w)
    return np.linalg.solve(linalg_mT(v), middle @ linalg_mT(v))


def _eig_tangent(w, v, a_dot):
    """(dw, dV) of a = V diag(w) V^-1: P = V^-1 a_dot V, dw = diag(P), dV = V (F * P) less its part
    along each column (diag(V^H dV) = 0, as `_eig_cotangent` assumes)."""
    diagonalizable(w, v)
    p = np.linalg.solve(v, a_dot @ v)
    v_dot = v @ _tie_tangent(w, _gap_inverse(w) * p, p)
    return _diagonal(p).copy(), v_dot - v * np.sum(_conj(v) * v_dot, axis=-2, keepdims=True)


def _eig_matching(a, w):
    """Eigenvectors of `a` in the order of the eigenvalues `w` (eigvals and eig may order them differently)."""
    w_all, v = np.linalg.eig(a)
    distance = np.abs(w[..., :, None] - w_all[..., None, :])
    order = np.empty(np.shape(w), dtype=int)
    for batch in np.ndindex(np.shape(w)[:-1]):  # each eigenvalue the nearest column not taken: equal eigenvalues
        left = distance[batch].copy()  # get different columns (the same one twice made `v` singular)
        for i in range(left.shape[0]):
            order[batch + (i,)] = j = np.argmin(left[i])
            left[:, j] = np.inf
    return np.take_along_axis(v, order[..., None, :], axis=-1)


def free_phases(w, a_meta):
    """Which eigenvectors have a free phase: all of a complex matrix's; of a real one's, those of its
    complex eigenvalues (the others are real, up to sign)."""
    if np.dtype(a_meta[1]).kind == "c":
        return np.ones(np.shape(w), dtype=bool)
    return np.imag(w) != 0


@table.vjp(np.linalg.eig, "a")
def eig_vjp(a_meta, y, g):  # a real `a` may have complex eigenvalues: its cotangent is the real part
    g_w, g_v = _cotangents(g, 2)
    return real_like(_eig_cotangent(y[0], y[1], g_w, g_v, free_phases(y[0], a_meta)), a_meta)


@table.jvp(np.linalg.eig, "a")
def eig_jvp(a_dot, y):
    return _eig_tangent(y[0], y[1], a_dot)


@table.vjp(np.linalg.eigvals, "a")
def eigvals_vjp(a, y, g):
    return real_like(_eig_cotangent(y, _eig_matching(a, y), g, None, None), a)


@table.jvp(np.linalg.eigvals, "a")
def eigvals_jvp(a, a_dot, y):
    v = _eig_matching(a, y)
    return _diagonal(np.linalg.solve(v, a_dot @ v)).copy()


# --- cholesky -----------------------------------------------------------------------------------

def _lower_half_diagonal(x):
    """The strict lower triangle of x and half its diagonal's real part (Murray's Phi; the diagonal of a
    Hermitian x, and of L's tangent, is real)."""
    return np.tril(x, -1) + 0.5 * np.real(x) * _eye(x)


@table.vjp(np.linalg.cholesky, "a")
def cholesky_vjp(upper, y, g):
    """a = L L^H: S = L^-T Phi(L^T g) conj(L)^-1 on the triangle read (Murray's rule, conjugated for the
    convention); U = L^H for upper=True, whose cotangent is g^H as L's."""
    l, g_l = (_h(y), _h(g)) if upper else (y, g)
    middle = _lower_half_diagonal(linalg_mT(l) @ g_l)
    s = np.linalg.solve(linalg_mT(l), middle)  # two solves
    s = linalg_mT(np.linalg.solve(_h(l), linalg_mT(s)))
    return _hermitian_triangle(s, "U" if upper else "L")


@table.jvp(np.linalg.cholesky, "a")
def cholesky_jvp(a_dot, upper, y):
    l = _h(y) if upper else y
    a_dot = _hermitian_from(a_dot, "U" if upper else "L")
    middle = np.linalg.solve(l, _h(np.linalg.solve(l, a_dot)))  # L^-1 dA L^-H
    l_dot = l @ _lower_half_diagonal(middle)
    return _h(l_dot) if upper else l_dot


# --- svd ----------------------------------------------------------------------------------------

def _svd_reduced(a_shape, full_matrices):
    if full_matrices and a_shape[-1] != a_shape[-2]:
        raise TapegenError("tapegen differentiates np.linalg.svd of a non-square matrix only with "
                           "full_matrices=False", hint="pass full_matrices=False (the extra columns of u "
                                                       "or rows of vt are not determined by the matrix)")


def _svd_phase_dependence(u, vt, g_u, g_vt):
    """`_phase_dependence` for the pairs u_k, v_k turned together (vt's rows by exp(-i t))."""
    dependence, size = 0, 0
    if g_u is not None:
        dependence, size = _phase_dependence(u, g_u)
    if g_vt is not None:
        dependence_v, size_v = _phase_dependence(_h(vt), _h(g_vt))
        dependence, size = dependence + dependence_v, size + size_v
    return dependence, size


def _svd_cotangent(u, s, vt, g_u, g_s, g_vt):
    """Townsend's rule for a = U S V^H (reduced), F[i, j] = 1 / (s_j^2 - s_i^2), in G = conj(g) (the
    complex formulas read with conjugate transposes) and conjugated back:
    U [diag(g_s) + (F * (J - J^H)) S + S (F * (K - K^H)) + i Im(diag J) S^-1] V^H
    + (I - U U^H) G_U S^-1 V^H + U S^-1 G_V^H (I - V V^H), with J = U^H G_U, K = V^H G_V, G_V = g_vt^T.
    Each pair u_i, v_i has a free phase: `_svd_tangent` puts the change of their relative phase in u_i,
    which is the term in Im(diag J)."""
    if np.iscomplexobj(u) and (g_u is not None or g_vt is not None):
        dependence, size = _svd_phase_dependence(u, vt, g_u, g_vt)
        phase_independent(dependence, size)
    v, s_inv, f = _h(vt), _safe_reciprocal(s), _gap_inverse(s * s)
    middle = np.zeros(np.shape(s) + np.shape(s)[-1:], dtype=np.result_type(s))
    extra = 0
    if g_s is not None:
        middle = middle + _diag(np.real(g_s))
    if g_u is not None:
        g_u = _conj(g_u)
        j = _h(u) @ g_u
        tie_independent(s * s, (j - _h(j)) * s[..., None, :])
        middle = middle + f * (j - _h(j)) * s[..., None, :]
        if np.iscomplexobj(u):
            middle = middle + _diag(1j * np.imag(_diagonal(j)) * s_inv)
        extra = extra + ((g_u - u @ (_h(u) @ g_u)) * s_inv[..., None, :]) @ vt
    if g_vt is not None:
        g_v = linalg_mT(g_vt)
        k = vt @ g_v
        tie_independent(s * s, s[..., :, None] * (k - _h(k)))
        middle = middle + s[..., :, None] * (f * (k - _h(k)))
        extra = extra + u @ (s_inv[..., :, None] * _h(g_v - v @ (vt @ g_v)))
    return _conj(u @ middle @ vt + extra)


def _svd_tangent(a_dot, u, s, vt):
    """(du, ds, dvt) for a reduced SVD (the JVP counterpart of `_svd_cotangent`): P = U^H a_dot V,
    ds = Re(diag(P)), du = U (F * (P S + S P^H) + i Im(diag(P)) S^-1), dv = V (F * (S P + P^H S)),
    and for a tall (wide) matrix the part of du (dv) outside U's (V's) columns."""
    v, s_inv, f = _h(vt), _safe_reciprocal(s), _gap_inverse(s * s)
    p = _h(u) @ a_dot @ v
    p_s, s_p = p * s[..., None, :], s[..., :, None] * p
    omega_u = _tie_tangent(s * s, f * (p_s + _h(p_s)), p_s + _h(p_s))
    if np.iscomplexobj(p):  # the relative phase of u_i and v_i moves: put it in u_i
        omega_u = omega_u + _diag(1j * np.imag(_diagonal(p)) * s_inv)
    u_dot = u @ omega_u
    v_dot = v @ _tie_tangent(s * s, f * (s_p + _h(s_p)), s_p + _h(s_p))
    m, n = np.shape(a_dot)[-2:]
    if m > n:
        a_v = a_dot @ v
        u_dot = u_dot + (a_v - u @ (_h(u) @ a_v)) * s_inv[..., None, :]
    if n > m:
        a_u = _h(a_dot) @ u
        v_dot = v_dot + (a_u - v @ (vt @ a_u)) * s_inv[..., None, :]
    return u_dot, np.real(_diagonal(p)).copy(), _h(v_dot)


@table.vjp(np.linalg.svd, "a")
def svd_vjp(a, full_matrices, compute_uv, y, g):
    if not compute_uv:  # s_i = Re(u_i^H a v_i): of a complex `a`, the conjugates carry the convention
        u, _, vt = np.linalg.svd(a, full_matrices=False)
        return (_conj(u) * np.real(g)[..., None, :]) @ _conj(vt)
    _svd_reduced(np.shape(a), full_matrices)
    u, s, vt = y
    g_u, g_s, g_vt = _cotangents(g, 3)
    return _svd_cotangent(u, s, vt, g_u, g_s, g_vt)


@table.jvp(np.linalg.svd, "a")
def svd_jvp(a, a_dot, full_matrices, compute_uv, y):
    if not compute_uv:
        u, _, vt = np.linalg.svd(a, full_matrices=False)
        return np.real(_diagonal(_h(u) @ a_dot @ _h(vt))).copy()
    _svd_reduced(np.shape(a), full_matrices)
    u, s, vt = y  # (not `*y`: the gradient of this code lowers it, and needs the count of arguments)
    return _svd_tangent(a_dot, u, s, vt)


# --- qr -----------------------------------------------------------------------------------------

def _qr_factors(a, mode, y):
    """(q, r) whatever the mode; mode 'complete' only where it equals 'reduced' (a is not tall)."""
    if mode == "r":
        return np.linalg.qr(a)
    m, n = np.shape(a)[-2:]
    if mode not in ("reduced", "complete") or (mode == "complete" and m > n):
        raise TapegenError(f"tapegen differentiates np.linalg.qr only with mode 'reduced' or 'r' (got {mode!r} "
                           f"for a {m}x{n} matrix)", hint="use mode='reduced'")
    return y


def _qr_tall_cotangent(q, r, g_q, g_r):
    """A = QR with A m x n, m >= n, in G = conj(g) and conjugated back: (G_Q + Q copyltu(M)) R^-H,
    M = R G_R^H - G_Q^H Q, copyltu(M) = tril(M, -1) + tril(M, -1)^H + Re(diag(M)) (R's diagonal is real)."""
    g_q, g_r = _conj(g_q), _conj(g_r)
    m = r @ _h(g_r) - _h(g_q) @ q
    lower = np.tril(m, -1)
    b = g_q + q @ (lower + _h(lower) + np.real(m) * _eye(m))
    return linalg_mT(np.linalg.solve(r, _h(b)))  # conj(b R^-H)


def _qr_tall_tangent(q, r, a_dot):
    """dQ, dR for A = QR, m >= n: B = Q^H dA R^-1 = Q^H dQ + dR R^-1, where Q^H dQ is anti-Hermitian
    (its strictly lower part is B's, its diagonal imaginary) and dR R^-1 upper triangular with a real diagonal."""
    a_dot_r = _h(np.linalg.solve(_h(r), _h(a_dot)))  # dA R^-1
    b = _h(q) @ a_dot_r
    lower = np.tril(b, -1)
    omega = lower - _h(lower)
    if np.iscomplexobj(b):
        omega = omega + 1j * np.imag(b) * _eye(b)
    return a_dot_r - q @ (b - omega), (b - omega) @ r


@table.vjp(np.linalg.qr, "a")
def qr_vjp(a, mode, y, g):
    q, r = _qr_factors(a, mode, y)
    g_q, g_r = (None, g) if mode == "r" else _cotangents(g, 2)
    g_q = np.zeros_like(q) if g_q is None else g_q
    g_r = np.zeros_like(r) if g_r is None else g_r
    m, n = np.shape(a)[-2:]
    if m >= n:
        return _qr_tall_cotangent(q, r, g_q, g_r)
    # a = [X | Y] with X square: X = Q R[:, :m] and R[:, m:] = Q^H Y.
    g_rest = g_r[..., :, m:]
    g_x = _qr_tall_cotangent(q, r[..., :, :m], g_q + _conj(a[..., :, m:] @ linalg_mT(g_rest)), g_r[..., :, :m])
    return np.concatenate([g_x, _conj(q) @ g_rest], axis=-1)


@table.jvp(np.linalg.qr, "a")
def qr_jvp(a, a_dot, mode, y):
    q, r = _qr_factors(a, mode, y)
    m, n = np.shape(a)[-2:]
    if m >= n:
        q_dot, r_dot = _qr_tall_tangent(q, r, a_dot)
    else:
        q_dot, r_left = _qr_tall_tangent(q, r[..., :, :m], a_dot[..., :, :m])
        r_right = _h(q_dot) @ a[..., :, m:] + _h(q) @ a_dot[..., :, m:]
        r_dot = np.concatenate([r_left, r_right], axis=-1)
    return r_dot if mode == "r" else (q_dot, r_dot)


# --- matrix_power, multi_dot --------------------------------------------------------------------

def _power_base(a, n):
    """The matrix whose |n|-th power is a^n, and the powers 0 .. |n| - 1 of it."""
    base = a if n > 0 else np.linalg.inv(a)
    powers = [_eye(a)]
    for _ in range(abs(n) - 1):
        powers.append(powers[-1] @ base)
    return base, powers


@table.vjp(np.linalg.matrix_power, "a")
def matrix_power_vjp(a, n, g):
    if n == 0:
        return np.zeros_like(a)
    base, powers = _power_base(a, n)
    k = len(powers)
    g_base = sum(linalg_mT(powers[j]) @ g @ linalg_mT(powers[k - 1 - j]) for j in range(k))
    return g_base if n > 0 else -linalg_mT(base) @ g_base @ linalg_mT(base)


@table.jvp(np.linalg.matrix_power, "a")
def matrix_power_jvp(a, a_dot, n):
    if n == 0:
        return np.zeros_like(a)
    base, powers = _power_base(a, n)
    base_dot = a_dot if n > 0 else -base @ a_dot @ base
    k = len(powers)
    return sum(powers[j] @ base_dot @ powers[k - 1 - j] for j in range(k))


@table.vjp(np.linalg.multi_dot, "arrays")
def multi_dot_vjp(arrays, g):
    """gA_i = (A_0 ... A_i-1)^T G (A_i+1 ... A_k-1)^T, 1-d ends read as a row and a column."""
    mats = [np.asarray(x) for x in arrays]
    if mats[0].ndim == 1:
        mats[0] = mats[0][None, :]
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1][:, None]
    left = [np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))]  # (A_0 ... A_i-1)^T G
    for mat in mats[:-1]:
        left.append(linalg_mT(mat) @ left[-1])
    right = [None] * len(mats)  # A_i+1 ... A_k-1
    for i in range(len(mats) - 2, -1, -1):
        right[i] = mats[i + 1] if right[i + 1] is None else mats[i + 1] @ right[i + 1]
    grads = [lg if r is None else lg @ linalg_mT(r) for lg, r in zip(left, right)]
    return [np.reshape(gr, np.shape(x)) for gr, x in zip(grads, arrays)]


@table.jvp(np.linalg.multi_dot, "arrays")
def multi_dot_jvp(arrays, arrays_dot):
    total = None
    for i, dot in enumerate(arrays_dot):
        if dot is not None:
            term = np.linalg.multi_dot(list(arrays[:i]) + [dot] + list(arrays[i + 1:]))
            total = term if total is None else total + term
    return total


# --- NumPy 2's array-API spellings --------------------------------------------------------------

if hasattr(np.linalg, "vector_norm"):
    table.op(np.linalg.matmul, "x1, x2")
    table.op(np.linalg.outer, "x1, x2")
    table.op(np.linalg.tensordot, "x1, x2, *, axes=2")
    table.op(np.linalg.cross, "x1, x2, *, axis=-1")
    table.op(np.linalg.trace, "x, *, offset=0")
    table.op(np.linalg.vecdot, "x1, x2, *, axis=-1")
    table.op(np.vecdot, "x1, x2")  # a ufunc: generated code writes its arguments positionally, so no axis
    table.op(np.linalg.vector_norm, "x, *, axis=None, keepdims=False, ord=2")
    table.op(np.linalg.matrix_norm, "x, *, keepdims=False, ord='fro'")
    table.op(np.linalg.svdvals, "x")

    for _fn in (np.linalg.matmul,):
        table.vjp(_fn, "x1")(matmul_rule_x1)
        table.vjp(_fn, "x2")(matmul_rule_x2)
        table.jvp(_fn, "x1")(matmul_jvp_x1)
        table.jvp(_fn, "x2")(matmul_jvp_x2)

    @table.vjp(np.linalg.outer, "x1")
    def linalg_outer_vjp_x1(x2, g):
        return g @ x2

    @table.vjp(np.linalg.outer, "x2")
    def linalg_outer_vjp_x2(x1, g):
        return x1 @ g

    @table.jvp(np.linalg.outer, "x1")
    def linalg_outer_jvp_x1(x1_dot, x2):
        return np.linalg.outer(x1_dot, x2)

    @table.jvp(np.linalg.outer, "x2")
    def linalg_outer_jvp_x2(x1, x2_dot):
        return np.linalg.outer(x1, x2_dot)

    @table.vjp(np.linalg.tensordot, "x1")
    def linalg_tensordot_vjp_x1(x1_shape, x2, axes, g):
        return tensordot_vjp_a(x1_shape, x2, axes, g)

    @table.vjp(np.linalg.tensordot, "x2")
    def linalg_tensordot_vjp_x2(x1, x2_shape, axes, g):
        return tensordot_vjp_b(x1, x2_shape, axes, g)

    @table.jvp(np.linalg.tensordot, "x1")
    def linalg_tensordot_jvp_x1(x1_dot, x2, axes):
        return np.linalg.tensordot(x1_dot, x2, axes=axes)

    @table.jvp(np.linalg.tensordot, "x2")
    def linalg_tensordot_jvp_x2(x1, x2_dot, axes):
        return np.linalg.tensordot(x1, x2_dot, axes=axes)

    @table.vjp(np.linalg.cross, "x1")
    def linalg_cross_vjp_x1(x1, x2, axis, g):
        return cross_vjp_a(x1, x2, -1, -1, -1, axis, g)

    @table.vjp(np.linalg.cross, "x2")
    def linalg_cross_vjp_x2(x1, x2, axis, g):
        return cross_vjp_b(x1, x2, -1, -1, -1, axis, g)

    @table.jvp(np.linalg.cross, "x1")
    def linalg_cross_jvp_x1(x1_dot, x2, axis):
        return np.linalg.cross(x1_dot, x2, axis=axis)

    @table.jvp(np.linalg.cross, "x2")
    def linalg_cross_jvp_x2(x1, x2_dot, axis):
        return np.linalg.cross(x1, x2_dot, axis=axis)

    @table.vjp(np.linalg.trace, "x")
    def linalg_trace_vjp(x_meta, offset, g):
        return trace_vjp(x_meta, offset, -2, -1, g)

    @table.jvp(np.linalg.trace, "x")
    def linalg_trace_jvp(x_dot, offset):
        return np.linalg.trace(x_dot, offset=offset)

    def linalg_vecdot_cotangent(x_shape, other, axis, g):
        """The cotangent of x2 in vecdot(other', x2) = sum(conj(other') x2) with other = conj(other'),
        each with its vectors along its own `axis`, the other axes broadcasting; conjugated, that of x1
        in vecdot(x1, other) (conjugate-linear in x1)."""
        at = axis % len(x_shape)  # x's shape with `axis` moved last (no list.pop: this code lowers again)
        moved = tuple(x_shape[:at]) + tuple(x_shape[at + 1:]) + (x_shape[at],)
        part = unbroadcast(np.expand_dims(g, -1) * np.moveaxis(other, axis, -1), moved)
        return np.moveaxis(part, -1, axis)

    @table.vjp(np.linalg.vecdot, "x1")
    def linalg_vecdot_vjp_x1(x1_shape, x2, axis, g):
        return _conj(linalg_vecdot_cotangent(x1_shape, x2, axis, g))

    @table.vjp(np.linalg.vecdot, "x2")
    def linalg_vecdot_vjp_x2(x1, x2_shape, axis, g):
        return linalg_vecdot_cotangent(x2_shape, _conj(x1), axis, g)

    @table.jvp(np.linalg.vecdot, "x1")
    def linalg_vecdot_jvp_x1(x1_dot, x2, axis):
        return np.linalg.vecdot(x1_dot, x2, axis=axis)

    @table.jvp(np.linalg.vecdot, "x2")
    def linalg_vecdot_jvp_x2(x1, x2_dot, axis):
        return np.linalg.vecdot(x1, x2_dot, axis=axis)

    @table.vjp(np.vecdot, "x1")
    def vecdot_vjp_x1(x1_shape, x2, g):  # vecdot(x1, x2) = sum(conj(x1) x2) is conjugate-linear in x1
        return unbroadcast(_conj(np.expand_dims(g, -1) * x2), x1_shape)

    @table.vjp(np.vecdot, "x2")
    def vecdot_vjp_x2(x1, x2_shape, g):
        return unbroadcast(np.expand_dims(g, -1) * _conj(x1), x2_shape)

    @table.jvp(np.vecdot, "x1")
    def vecdot_jvp_x1(x1_dot, x2):
        return np.vecdot(x1_dot, x2)

    @table.jvp(np.vecdot, "x2")
    def vecdot_jvp_x2(x1, x2_dot):
        return np.vecdot(x1, x2_dot)

    def vector_norm_axes(x_shape, axis):
        """The axes np.linalg.vector_norm(x, axis=axis) reduces."""
        if axis is None:
            return tuple(range(len(x_shape)))
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        return tuple(a % len(x_shape) for a in axes)

    def matrix_norm_axes(x_shape):
        """The axes np.linalg.matrix_norm reduces: the last two."""
        return (len(x_shape) - 2, len(x_shape) - 1)

    @table.vjp(np.linalg.vector_norm, "x")
    def vector_norm_vjp(x, x_shape, axis, keepdims, ord, g):
        return unreduce(g, x_shape, vector_norm_axes(x_shape, axis), keepdims) * \
            norm_direction(x, ord, vector_norm_axes(x_shape, axis), False)

    @table.jvp(np.linalg.vector_norm, "x")
    def vector_norm_jvp(x, x_shape, x_dot, axis, keepdims, ord, y):
        return real_like(np.sum(norm_direction(x, ord, vector_norm_axes(x_shape, axis), False) * x_dot,
                                axis=vector_norm_axes(x_shape, axis), keepdims=keepdims), y)

    @table.vjp(np.linalg.matrix_norm, "x")
    def matrix_norm_vjp(x, x_shape, keepdims, ord, g):
        return unreduce(g, x_shape, matrix_norm_axes(x_shape), keepdims) * \
            norm_direction(x, ord, matrix_norm_axes(x_shape), True)

    @table.jvp(np.linalg.matrix_norm, "x")
    def matrix_norm_jvp(x, x_shape, x_dot, keepdims, ord, y):
        return real_like(np.sum(norm_direction(x, ord, matrix_norm_axes(x_shape), True) * x_dot,
                                axis=matrix_norm_axes(x_shape), keepdims=keepdims), y)

    @table.vjp(np.linalg.svdvals, "x")
    def svdvals_vjp(x, g):
        return svd_vjp(x, False, False, None, g)

    @table.jvp(np.linalg.svdvals, "x")
    def svdvals_jvp(x, x_dot):
        return svd_jvp(x, x_dot, False, False, None)

"""Checking gradients against finite differences.

`gradcheck(f, *args, wrt=...)` compares tapegen's reverse-mode derivatives of
`f` with central differences in float64 (or the complex step). For a small
input it compares the whole Jacobian (one VJP per output element); for a
large one, the dot-product test along random directions: for random `u`
(input space) and `v` (output space), `<v, J u>` by finite differences must
equal `<J^T v, u>` by reverse mode.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import GradcheckError, TapegenError


@dataclass(frozen=True)
class ArgumentReport:
    name: str
    max_abs_error: float
    max_rel_error: float
    checked: str  # "jacobian" or "projection"


@dataclass(frozen=True)
class GradcheckReport:
    """Per-argument worst absolute and relative error; `ok` if within tolerance."""

    arguments: tuple
    ok: bool
    method: str

    def __str__(self) -> str:
        rows = [f"{'argument':<12} {'max abs err':>12} {'max rel err':>12}  checked", "-" * 52]
        rows += [f"{a.name:<12} {a.max_abs_error:>12.3e} {a.max_rel_error:>12.3e}  {a.checked}" for a in self.arguments]
        rows.append(f"{'ok' if self.ok else 'FAILED'} ({self.method} differences)")
        return "\n".join(rows)


def gradcheck(f, *args, wrt=0, method="central", order=1, eps=None, rtol=1e-5, atol=1e-7, max_jacobian=64,
              directions=3, seed=0, raise_on_failure=True):
    """Compare tapegen's gradient of `f` at `args` with finite differences.

    Args:
        f: a function of arrays (or a `tapegen.differentiate` function).
        *args: where to check; float inputs are promoted to float64 for the check.
        wrt: argument position(s) or name(s), as elsewhere in tapegen.
        method: "central" differences, or "complex" step (needs `f` to accept complex input).
        order: 1 checks gradients; 2 also checks second derivatives: Hessian-vector products
            (forward over reverse, `tapegen.hvp`) against central differences of the gradient.
        rtol, atol: tolerance: |err| <= atol + rtol * |expected|.
        max_jacobian: inputs with at most this many elements get a full Jacobian check;
            larger ones the random-projection (dot-product) test.

    Returns:
        GradcheckReport.

    Raises:
        GradcheckError: a derivative disagrees, with a table of the errors and, where tapegen can
            tell, the rule most likely at fault and the user's line it serves.

    Example:
        >>> import numpy as np
        >>> gradcheck(lambda x: np.sum(np.sin(x)), np.array([0.1, 0.2])).ok
        True
    """
    from ..api import _differentiated
    if _rule_owner(f) is not None:
        return _check_rule(f, args, wrt, method, order, eps, rtol, atol, max_jacobian, directions, seed,
                           raise_on_failure)
    if method not in ("central", "complex"):
        raise TapegenError(f"unknown gradcheck method {method!r}", hint="use 'central' or 'complex'")
    if order not in (1, 2):
        raise TapegenError(f"gradcheck order={order!r}", hint="use order=1 (gradients) or order=2 (also Hessians)")
    d = _differentiated(f)
    args = tuple(_float64(a) for a in args)
    target = d._target
    indices, bare = target.wrt(wrt)
    names = [target.params[i] for i in indices]
    out, pullback = d.vjp(*args, wrt=tuple(i - target.offset for i in indices))
    rng = np.random.default_rng(seed)
    eps = eps if eps is not None else (1e-20 if method == "complex" else 1e-6)
    reports, failures = [], []
    for k, (name, index) in enumerate(zip(names, indices)):
        position = index - target.offset
        x = args[position]
        call = _partial(d, args, position)
        if np.size(x) <= max_jacobian and np.size(out) <= max_jacobian:
            expected, actual = _jacobians(call, x, out, pullback, k, method, eps)
            checked = "jacobian"
        else:
            expected, actual = _projections(call, x, out, pullback, k, method, eps, rng, directions)
            checked = "projection"
        err = np.abs(np.asarray(expected) - np.asarray(actual))
        max_abs = float(np.max(err, initial=0.0))
        rel = err / np.maximum(np.abs(expected), 1e-300)
        max_rel = float(np.max(np.where(err > 0, rel, 0.0), initial=0.0))
        reports.append(ArgumentReport(name, max_abs, max_rel, checked))
        if not np.all(err <= atol + rtol * np.abs(expected)):
            failures.append(name)
    if order == 2 and not failures:
        for name, index in zip(names, indices):
            row, ok = _second_order(d, args, index - target.offset, name, rng, rtol, atol)
            reports.append(row)
            if not ok:
                failures.append(f"{name} (second order)")
    report = GradcheckReport(tuple(reports), not failures, method)
    if failures and raise_on_failure:
        from .localize import most_likely_fault
        from ..pipeline import lowered
        fault = most_likely_fault(lowered(target.fn), (target.bound + tuple(args)) if target.bound else args)
        raise GradcheckError(f"gradient of {getattr(f, '__name__', 'f')} disagrees with {method} finite "
                             f"differences for {', '.join(failures)}\n{report}",
                             hint=(f"most likely at fault: {fault}" if fault else
                                   "check the custom rules and the lines that use these arguments"))
    return report


def _rule_owner(f):
    """The custom rule `f` is (a `custom_vjp`, a `custom_jvp`, or a function given `register_vjp`), else None."""
    from .. import rules
    from ..rules.custom import custom_jvp, custom_vjp
    if isinstance(f, (custom_vjp, custom_jvp)):
        return f
    try:
        prim = rules.lookup(f)
    except TypeError:
        return None
    return f if prim is not None and prim.form == "custom" else None


def _check_rule(f, args, wrt, method, order, eps, rtol, atol, max_jacobian, directions, seed, raise_on_failure):
    """`gradcheck` of a custom rule itself: its VJP (and JVP) against finite differences of its function,
    and the VJP against the JVP (<J^T v, u> = <v, J u>), naming the rule that disagrees."""
    from ..rules.custom import custom_jvp
    name = getattr(f, "__name__", "f")
    caller = _caller(f, len(args))
    has_vjp = not isinstance(f, custom_jvp)
    rule = (getattr(f, "bwd", None) or getattr(f, "jvp", None))
    if has_vjp:  # reverse mode through the rule's own bwd: the ordinary check names it
        try:
            return gradcheck(caller, *args, wrt=wrt, method=method, order=order, eps=eps, rtol=rtol, atol=atol,
                             max_jacobian=max_jacobian, directions=directions, seed=seed,
                             raise_on_failure=raise_on_failure)
        except GradcheckError as exc:
            raise GradcheckError(f"the custom VJP of {name} ({getattr(rule, '__name__', 'bwd')}) disagrees with "
                                 f"finite differences of {name}\n{exc.message.split(chr(10), 1)[1]}",
                                 hint=f"check {getattr(rule, '__name__', 'bwd')} against {name}'s formula") from None
    return _check_jvp_rule(f, caller, args, wrt, rtol, atol, seed, raise_on_failure, rule)


def _check_jvp_rule(f, caller, args, wrt, rtol, atol, seed, raise_on_failure, rule, eps=1e-6):
    from ..api_transforms import jvp
    name = getattr(f, "__name__", "f")
    positions = (wrt,) if not isinstance(wrt, (tuple, list)) else tuple(wrt)
    rng = np.random.default_rng(seed)
    args = tuple(_float64(a) for a in args)
    reports, failures = [], []
    for position in positions:
        x = args[position]
        u = rng.standard_normal(np.shape(x))
        u = u if isinstance(x, np.ndarray) else float(u)
        tangents = tuple(u if i == position else (np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0)
                         for i, a in enumerate(args))
        _, actual = jvp(caller, args, tangents)
        call = _partial(_Plain(caller), args, position)
        expected = (np.asarray(call(x + eps * u), dtype=float) - np.asarray(call(x - eps * u), dtype=float)) / (2 * eps)
        err = np.abs(expected - np.asarray(actual, dtype=float))
        max_abs = float(np.max(err, initial=0.0))
        max_rel = float(np.max(np.where(err > 0, err / np.maximum(np.abs(expected), 1e-300), 0.0), initial=0.0))
        reports.append(ArgumentReport(f"x{position}" if not hasattr(f, "__wrapped__") else
                                      _param_name(f, position), max_abs, max_rel, "jvp"))
        if not np.all(err <= atol + rtol * np.abs(expected)):
            failures.append(reports[-1].name)
    report = GradcheckReport(tuple(reports), not failures, "central")
    if failures and raise_on_failure:
        raise GradcheckError(f"the custom JVP of {name} ({getattr(rule, '__name__', 'jvp')}) disagrees with finite "
                             f"differences of {name} for {', '.join(failures)}\n{report}",
                             hint=f"check {getattr(rule, '__name__', 'jvp')} against {name}'s formula")
    return report


class _Plain:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        return self.fn(*args)


def _param_name(f, position):
    import inspect
    try:
        return list(inspect.signature(f.__wrapped__).parameters)[position]
    except (TypeError, ValueError, IndexError):
        return f"x{position}"


def _caller(f, n):
    """`lambda a0, ..., a{n-1}: f(a0, ...)` with a source tapegen can read: `f` stays the one primitive."""
    import linecache
    params = ", ".join(f"{_param_name(f, i) if hasattr(f, '__wrapped__') else f'x{i}'}" for i in range(n))
    name = getattr(f, "__name__", "rule")
    source = f"def {name}_check({params}):\n    return rule({params})\n"
    filename = f"<tapegen gradcheck of {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"rule": f}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[f"{name}_check"]


def _second_order(d, args, position, name, rng, rtol, atol, eps=1e-5):
    """Hessian-vector product (forward over reverse) vs central differences of the gradient."""
    from ..api_transforms import hvp
    x = args[position]
    v = rng.standard_normal(np.shape(x))
    v = v if isinstance(x, np.ndarray) else float(v)
    grad = _gradient_of(d, args, position)
    actual = np.asarray(hvp(d.__wrapped__, wrt=position)(*args, v), dtype=float)
    expected = (np.asarray(grad(x + eps * v), dtype=float) - np.asarray(grad(x - eps * v), dtype=float)) / (2 * eps)
    err = np.abs(expected - actual)
    ok = bool(np.all(err <= 10 * (atol + rtol * np.abs(expected))))  # differences of a gradient: looser
    max_abs = float(np.max(err, initial=0.0))
    max_rel = float(np.max(np.where(err > 0, err / np.maximum(np.abs(expected), 1e-300), 0.0), initial=0.0))
    return ArgumentReport(f"{name} (H v)", max_abs, max_rel, "hvp"), ok


def _gradient_of(d, args, position):
    from ..api import grad as grad_of

    g = grad_of(d.__wrapped__, wrt=position)

    def at(value):
        full = list(args)
        full[position] = value
        return g(*full)
    return at


def _float64(a):
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return a.astype(np.float64)
    if isinstance(a, (float, np.floating)):
        return float(a)
    return a


def _partial(d, args, position):
    def call(value):
        full = list(args)
        full[position] = value
        return d(*full)
    return call


def _grad_part(grads, k):
    return grads if not isinstance(grads, tuple) else grads[k]


def _jacobians(call, x, out, pullback, k, method, eps):
    """Full Jacobian, rows by reverse mode (one pullback per output element), columns by differences."""
    x_arr = np.asarray(x, dtype=float)
    out_arr = np.asarray(out)
    reverse = np.empty((out_arr.size, x_arr.size))
    for i in range(out_arr.size):
        cot = np.zeros(out_arr.shape)
        cot.flat[i] = 1.0
        cot = cot if isinstance(out, np.ndarray) else float(cot)
        reverse[i] = np.ravel(_grad_part(pullback(cot), k))
    numeric = np.empty_like(reverse)
    for j in range(x_arr.size):
        numeric[:, j] = np.ravel(_directional(call, x, _basis(x, j), method, eps))
    return numeric, reverse


def _projections(call, x, out, pullback, k, method, eps, rng, directions):
    expected, actual = [], []
    for _ in range(directions):
        u = rng.standard_normal(np.shape(x))
        v = rng.standard_normal(np.shape(out))
        cot = v if isinstance(out, np.ndarray) else float(v)
        actual.append(float(np.sum(np.asarray(_grad_part(pullback(cot), k)) * u)))
        expected.append(float(np.sum(v * _directional(call, x, u if np.ndim(x) else float(u), method, eps))))
    return np.array(expected), np.array(actual)


def _basis(x, j):
    e = np.zeros(np.shape(x))
    e.flat[j] = 1.0
    return e if isinstance(x, np.ndarray) else float(e)


def _directional(call, x, direction, method, eps):
    if method == "complex":
        return np.imag(np.asarray(call(x + 1j * eps * direction))) / eps
    plus = np.asarray(call(x + eps * direction), dtype=float)
    minus = np.asarray(call(x - eps * direction), dtype=float)
    return (plus - minus) / (2 * eps)

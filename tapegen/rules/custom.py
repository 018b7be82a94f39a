"""User-defined derivative rules: `custom_vjp`, `custom_jvp` and `register_vjp`.

A custom rule makes a function a primitive: inside a differentiated function,
`y = softplus(x)` becomes

    y, y_res = softplus_fwd(x)          # forward pass: output and residuals
    ...
    g_x, = softplus_bwd(y_res, g_y)     # backward pass: one cotangent per argument

with the user's own `fwd` and `bwd` called by name, so the residuals are
visible variables in the generated code.

The user API (`tapegen.custom_vjp`, ...) is these; they live with the rules
because a custom rule is a primitive in the rule table, which lowering and
forward mode read.
"""
from __future__ import annotations

import functools
import inspect

from ..errors import TapegenError
from . import add_names, lent, register_primitive
from .runtime_rules import float_zeros, own_tangent, zero_tangent
from .table import Primitive


class custom_vjp:  # noqa: N801 (named like the decorator it is, as in JAX)
    """Decorator: give a function your own vector-Jacobian product.

    Example:
        >>> @custom_vjp
        ... def softplus(x):
        ...     return np.logaddexp(0.0, x)
        >>> def softplus_fwd(x):
        ...     return softplus(x), (x,)
        >>> def softplus_bwd(residuals, g):
        ...     (x,) = residuals
        ...     return (g / (1.0 + np.exp(-x)),)
        >>> softplus.defvjp(softplus_fwd, softplus_bwd)
    """

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.fwd = self.bwd = None

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def defvjp(self, fwd, bwd):
        """Set `fwd(*args) -> (output, residuals)` and `bwd(residuals, g) -> (cotangent per argument)`."""
        self.fwd, self.bwd = fwd, bwd
        _register(self, self.fn, fwd, bwd)
        return self


class custom_jvp:  # noqa: N801
    """Decorator: give a function your own Jacobian-vector product.

    `defjvp(jvp)` with `jvp(primals, tangents) -> (output, output_tangent)`; forward mode calls it. Reverse
    mode transposes it (as JAX does): the output tangent is linear in the tangents, `J t`, so the cotangents
    `J^T g` are the pullback of `t -> jvp(primals, t)[1]`, tapegen differentiating the jvp's code
    (`_transposed_jvp`); differentiated again, that is code too (a hessian through the function).
    """

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.jvp = None

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def defjvp(self, jvp):
        self.jvp = jvp
        fwd = _jvp_fwd(self.fn)
        _register(self, self.fn, fwd, _transposed_jvp(jvp, len(_parameters(self.fn, fwd)[0])))
        return self


def _jvp_fwd(fn):
    """A custom_jvp's forward pass for reverse mode: its output, and its arguments as the residuals."""
    def custom_jvp_fwd(*args):
        return fn(*args), args
    return custom_jvp_fwd


def _transposed_jvp(jvp, n):
    """A custom_jvp's bwd: the pullback of `tangents -> jvp(primals, tangents)[1]` (linear in the tangents,
    so taken at zero tangents: `float_zeros`, an integer argument's in floats), one cotangent per argument of the
    `n` the function takes."""
    wrt = tuple(range(1, n + 1))

    def jvp_tangent(primals, *tangents):
        return jvp(tuple(primals), tangents)[1]

    def custom_jvp_bwd(residuals, g):
        return lent.vjp(jvp_tangent, residuals, *[float_zeros(r) for r in residuals], wrt=wrt)[1](g)
    return custom_jvp_bwd


def register_vjp(fn, fwd, bwd):
    """Give `fn` (a function you do not own: SciPy, a C extension, a ufunc) a VJP rule.

    `fwd(*args) -> (output, residuals)`; `bwd(residuals, g) -> tuple`, one
    cotangent (or None) per positional argument of `fn`.
    """
    _register(fn, fn, fwd, bwd)
    return fn


class CustomRule:
    """The backward half of a custom primitive, in the shape reverse.py expects of a rule; and the forward half
    of its JVP (`tangent`), which forward mode calls."""

    inline = None

    def __init__(self, name, fwd, bwd, base):
        self.name = name
        self.fn = bwd
        self.reads = ("residuals", "g")
        self.__name__ = base
        self.tangent = CustomTangent(fwd, bwd, base)


class CustomTangent:
    """`(primals, tangents) -> output tangent` of a custom_vjp's function: the transpose of its bwd.

    The bwd is linear in the cotangent, `bwd(residuals, g) = J^T g` (a cotangent per argument), so the tangent
    `J t` is the pullback of `g -> bwd(residuals, g)` applied to the tangents `t` (None or zeros where an
    argument has none): tapegen differentiates the bwd's code (the rule as declared, not the function's own
    code). The residuals' items are passed as arguments of their own, so a function among them (fixed_point's
    `f`) is known where the bwd calls it. Called inside a function differentiated again (a gradient of a jvp),
    it is that computation as plain code (`__tapegen_inline__`), tapegen differentiating the fwd and the bwd
    once more; that needs residuals in a tuple, as most fwds return them.
    """

    def __init__(self, fwd, bwd, base):
        self.fwd, self.__name__ = fwd, f"{base}_tangent"
        self.transposed = {spread: _transposed(bwd, spread) for spread in (True, False)}
        self.code = _tangent_code(fwd, self.transposed[True])

    def __call__(self, primals, tangents):
        out, residuals = self.fwd(*primals)
        spread = type(residuals) is tuple
        args = residuals if spread else (residuals,)
        return lent.vjp(self.transposed[spread], zero_tangent(out), *args, wrt=0)[1](tuple(tangents))

    def __tapegen_inline__(self):
        return self.code


def _transposed(bwd, spread):
    """`(g, *residuals) -> bwd(residuals, g)`, or `(g, residuals) -> ...` for residuals that are not a tuple."""
    if spread:
        def bwd_of_cotangent(g, *residuals):
            return bwd(residuals, g)
    else:
        def bwd_of_cotangent(g, residuals):
            return bwd(residuals, g)
    return bwd_of_cotangent


def _tangent_code(fwd, transposed):
    """What a CustomTangent computes, as code tapegen differentiates (residuals in a tuple)."""
    def custom_tangent(primals, tangents):
        out, residuals = fwd(*primals)
        return lent.vjp(transposed, zero_tangent(out), *residuals, wrt=0)[1](tangents)
    return custom_tangent


def tangent_function(owner):
    """What forward mode calls for the output tangent of a function with its own JVP, `(primals, tangents) ->
    tangent`: a custom_vjp's CustomRule's transposed bwd, a custom_jvp's `jvp` (as code tapegen follows when
    the tangent code is differentiated again), or any other owner's `jvp` (a checkpointed segment's)."""
    if isinstance(owner, CustomRule):
        return owner.tangent
    if isinstance(owner, custom_jvp):
        return _own_jvp_code(owner.jvp)
    return functools.partial(own_tangent, owner)


def _own_jvp_code(jvp):
    def custom_jvp_tangent(primals, tangents):
        return jvp(tuple(primals), tuple(tangents))[1]
    return custom_jvp_tangent


def _register(key, fn, fwd, bwd):
    for what, f in (("fwd", fwd), ("bwd", bwd)):
        if not callable(f):
            raise TapegenError(f"{what} for {getattr(fn, '__name__', fn)!r} must be a function, got {f!r}")
    params, defaults = _parameters(fn, fwd)
    if defaults:  # a bwd may give cotangents for the arguments without defaults only: None for the others
        bwd = _padded(bwd, len(params))
    base = getattr(fn, "__name__", "custom")
    if not base.isidentifier():  # `custom_vjp(lambda x: ...)`: its residuals and rules need names Python can read
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base).strip("_") or "custom"
        base = base if base.isidentifier() else f"custom_{base}"
    fwd_name, bwd_name = add_names({f"{base}_fwd": fwd, f"{base}_bwd": bwd})
    prim = Primitive(name=base, fn=fn, params=params, defaults=defaults, form="custom", spelling=fwd_name,
                     outputs=1)
    rule = CustomRule(bwd_name, fwd, bwd, base)
    prim.vjps = {param: rule for param in params}
    prim.custom = rule
    register_primitive(key, prim)


def _parameters(fn, fwd=None):
    """(names, defaults): `fn`'s positional parameters, and those with defaults (`def convolve(A, B, axes=None,
    mode="full")`, passed or left at their defaults) where `fwd` takes them too; a fwd taking only the others
    (`def f(x, eps=1e-3)` with `def f_fwd(x)`) is called with those only, the defaults left to `fn`."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        nin = getattr(fn, "nin", None)  # a ufunc
        if nin is None:
            raise TapegenError(f"cannot read the parameters of {fn!r}",
                               hint="wrap it in a def with named parameters") from None
        return (tuple(f"x{i + 1}" for i in range(nin)) if nin > 1 else ("x",)), {}
    positional = [p for p in signature.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = tuple(p.name for p in positional if p.default is p.empty)
    if len(required) == len(positional) or not _takes(fwd, len(positional)):
        return required, {}
    return tuple(p.name for p in positional), {p.name: p.default for p in positional[len(required):]}


def _takes(fwd, count) -> bool:
    """`fwd` can be called with `count` positional arguments."""
    try:
        params = inspect.signature(fwd).parameters.values()
    except (TypeError, ValueError):
        return False
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return True
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) >= count


def _padded(bwd, count):
    """`bwd`, its cotangents made `count` long with None (a bwd giving them for the first arguments only)."""
    def custom_bwd_padded(residuals, g):
        cotangents = tuple(bwd(residuals, g))
        return cotangents + (None,) * (count - len(cotangents))
    return custom_bwd_padded

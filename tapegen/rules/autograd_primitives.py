"""Functions made primitives in code written for HIPS autograd: `@primitive` with `defvjp` / `defjvp`.

autograd's `@primitive` keeps autograd out of a function, and `defvjp(f, maker, ...)` gives it a VJP:
`maker(ans, *args, **kwargs)` returns the function `g -> cotangent of that argument`. tapegen keeps
that contract: such a function is a primitive whose VJP rule for argument i calls the i-th maker
(and whose JVP rule, where `defjvp` gave one, calls that), so the gradient the program declares (a
straight-through estimator, an implicit gradient, a clipped one) is the gradient tapegen computes,
as autograd does, not the derivative of the code inside.

The rules call the makers as the user wrote them, by name from generated code; differentiating that
code again inlines the maker and the function it returns, so a maker written in NumPy has a second
derivative. `lookup` builds the primitive the first time a call of such a function is lowered.
"""
from __future__ import annotations

import inspect

import numpy as np

from . import lent
from .runtime_rules import zero_tangent
from .table import Primitive, named_rule


def is_autograd_primitive(fn) -> bool:
    """`fn` was made by autograd's `@primitive` (autograd.extend.primitive)."""
    return getattr(fn, "_is_autograd_primitive", False) and callable(getattr(fn, "fun", None)) \
        and not inspect.ismethod(fn)  # (a method of an object made a primitive, autograd's VSpace.add: opaque)


def primitive_for(fn, add_names):
    """The tapegen primitive for autograd primitive `fn` with the VJPs `defvjp` gave it (none: a primitive
    without rules), or None (a signature tapegen cannot bind: `*args`, keyword-only parameters).
    `add_names` (rules.add_names) makes `fn` and its rules callable by name from generated code."""
    import autograd.core as core
    makers = _makers(core.primitive_vjps.get(fn), "vjps_dict")
    if makers is None:  # no defvjp: a primitive without rules, so a derivative through it is a NoRuleError
        makers = lambda index: None  # noqa: E731  (autograd's NotImplementedError), naming it
    params = _parameters(fn.fun)
    if params is None:
        return None
    names, defaults = params
    base = getattr(fn.fun, "__name__", "autograd_primitive")
    (spelling,) = add_names({base: fn})
    renamed = {own: name for own, name in zip(inspect.signature(fn.fun).parameters, names) if own != name}
    prim = Primitive(name=base, fn=fn, params=names, defaults=defaults, spelling=spelling, renamed=renamed)
    tangent_makers = _makers(core.primitive_jvps.get(fn), "jvps_dict")
    for index, param in enumerate(names):
        maker = _zero_as_written(_deprecated_as_written(makers(index)), index)
        if maker is not None:
            prim.vjps[param] = _rule(_vjp_rule(maker), add_names, f"{spelling}_vjp_{param}", "vjp", param,
                                     ("y", "g") + names)
        maker = tangent_makers(index) if tangent_makers is not None else None
        if maker is not None:
            maker = _zero_as_written(_same_as_written(maker), index)
            prim.jvps[param] = _rule(_jvp_rule(maker), add_names, f"{spelling}_jvp_{param}", "jvp", param,
                                     ("y", f"{param}_dot") + names)
        elif param in prim.vjps:  # no defjvp: the declared VJP, transposed
            prim.jvps[param] = named_rule(_transposed(prim.vjps[param].fn), add_names, f"{spelling}_jvp_{param}",
                                          "jvp", param, ("y", f"{param}_dot") + names)
            if getattr(prim.vjps[param].fn, "__tapegen_autograd__", None) is not None:
                prim.jvps[param].fn.__tapegen_autograd__ = prim.jvps[param].reads
    return prim


def _transposed(vjp_fn):
    """The JVP rule `(y, dot, *inputs)` of a primitive with a VJP rule `vjp_fn(y, g, *inputs)` and no JVP: the
    VJP is linear in g, so the tangent is its transpose applied to `dot`, the pullback of `g -> vjp_fn(y, g,
    *inputs)`: by tapegen, which differentiates the maker's code (the inputs passed one by one, so a function
    among them, fixed_point's `f`, is known there), or by autograd, for a library's maker written for it."""
    if getattr(vjp_fn, "__tapegen_autograd__", None) is not None:
        def autograd_transposed_jvp(y, dot, *inputs):
            from autograd.core import make_vjp
            return make_vjp(lambda g: vjp_fn(y, g, *inputs), np.zeros_like(y))[0](dot)
        return autograd_transposed_jvp

    def cotangent_of(g, y, *inputs):
        return vjp_fn(y, g, *inputs)

    def transposed_jvp(y, dot, *inputs):
        return lent.vjp(cotangent_of, zero_tangent(y), y, *inputs, wrt=0)[1](dot)
    return transposed_jvp


def _makers(argnums_rule, table_name):
    """index -> the maker autograd calls for that argument (None if it has none), or None if `fn` has no rule.

    `defvjp` keeps the user's makers in a dict its rule closes over: tapegen calls those, so their code
    can be differentiated again. Other definitions (`defvjp_argnums`) are called through autograd's own
    rule, one argument at a time.
    """
    if argnums_rule is None:
        return None
    cells = dict(zip(argnums_rule.__code__.co_freevars, argnums_rule.__closure__ or ()))
    if table_name in cells:
        table = cells[table_name].cell_contents
        return table.get
    if table_name == "vjps_dict":
        return lambda index: _through_autograd_vjp(argnums_rule, index)
    return lambda index: _through_autograd_jvp(argnums_rule, index)


def _parameters(raw):
    try:
        signature = inspect.signature(raw)
    except (TypeError, ValueError):
        return None
    names, defaults = [], {}
    taken = set(signature.parameters)
    for p in signature.parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            return None
        name = p.name
        while name in ("y", "g") or name != p.name and name in taken:  # rules read the output as y, its
            name += "_"  # cotangent as g: `def new_mul(x, y)` has its y called y_ in tapegen's rules
        names.append(name)
        if p.default is not p.empty:
            defaults[name] = p.default
    return tuple(names), defaults


def _rule(fn, add_names, name, kind, param, reads):
    rule = named_rule(fn, add_names, name, kind, param, reads)
    maker = fn.__closure__[0].cell_contents
    code = getattr(getattr(maker, "func", maker), "__code__", None)  # (autograd's convolve: partial(grad_convolve, 0))
    where = getattr(code, "co_filename", "").replace("\\", "/").rpartition("/autograd/")[2]
    if "-packages" in getattr(code, "co_filename", "-packages") and where not in _INLINED:
        # a library's maker (autograd's fixed_point_vjp, which runs autograd's make_vjp) is called as it is, not
        # inlined; differentiated again, autograd differentiates it (`through_autograd`)
        fn.__module__ = getattr(maker, "__module__", None) or "library"
        fn.__tapegen_autograd__ = reads
    return rule


def through_autograd(rule_fn, add_names):
    """The primitive for a call of a rule whose maker is a library's written for autograd (autograd's own
    fixed_point_vjp, which calls autograd's make_vjp: tapegen cannot follow it), in gradient code
    differentiated again: its VJP for each input is autograd's make_vjp of the rule in that input, its JVP
    that VJP transposed (autograd's make_vjp of the pullback, which is linear), as autograd itself would
    differentiate the rule; these rules are such primitives again, for higher orders. None for any other
    function."""
    reads = getattr(rule_fn, "__tapegen_autograd__", None)
    if reads is None:
        return None
    names = rule_parameters(reads)
    (spelling,) = add_names({rule_fn.__name__: rule_fn})
    prim = Primitive(name=rule_fn.__name__, fn=rule_fn, params=names, defaults={}, spelling=spelling)
    for index, param in enumerate(names):
        vjp = named_rule(_autograd_vjp(rule_fn, index), add_names, f"{spelling}_vjp_{param}", "vjp", param,
                         ("y", "g") + names)
        jvp = named_rule(_autograd_jvp(rule_fn, index), add_names, f"{spelling}_jvp_{param}", "jvp", param,
                         ("y", f"{param}_dot") + names)
        vjp.fn.__tapegen_autograd__, jvp.fn.__tapegen_autograd__ = vjp.reads, jvp.reads
        prim.vjps[param], prim.jvps[param] = vjp, jvp
    return prim


def rule_parameters(reads) -> tuple:
    """The parameters of a primitive calling a rule that reads `reads`: the rule's own output is y and its
    cotangent g, so its parameters of those names are named apart."""
    names = []
    for name in reads:
        while name in ("y", "g") or name in names:
            name += "_"
        names.append(name)
    return tuple(names)


def _pulled_back_by_autograd(rule_fn, index, inputs):
    """autograd's pullback of `rule_fn(*inputs)` in its input `index`."""
    from autograd.core import make_vjp

    def moved(value):
        return rule_fn(*inputs[:index], value, *inputs[index + 1:])
    return make_vjp(moved, inputs[index])[0]


def _autograd_vjp(rule_fn, index):
    def autograd_rule_vjp(y, g, *inputs):
        return _pulled_back_by_autograd(rule_fn, index, inputs)(g)
    return autograd_rule_vjp


def _autograd_jvp(rule_fn, index):
    def autograd_rule_jvp(y, dot, *inputs):
        from autograd.core import make_vjp
        pullback = _pulled_back_by_autograd(rule_fn, index, inputs)
        return make_vjp(pullback, np.zeros_like(y))[0](dot)  # linear in its cotangent: its transpose is the JVP
    return autograd_rule_jvp


# autograd's own makers written in autograd.numpy, inlined like the user's when gradient code is differentiated
# again (its convolve's second derivative); others (fixed_point_vjp, which runs autograd) are called as they are
_INLINED = ("scipy/signal.py",)


def _core_lambda(maker):
    """The code of `maker` if it is one of the lambdas autograd's core makes for defvjp/defjvp, else None."""
    code = getattr(maker, "__code__", None)
    if code is None or code.co_name != "<lambda>" or \
            not code.co_filename.replace("\\", "/").endswith("/autograd/core.py"):
        return None
    return code


def _zero_as_written(maker, argnum):
    """autograd's maker for a VJP or JVP declared None (`defvjp(f, None, ...)`, defvjp_is_zero: a zero
    derivative) as one of tapegen's own, returning zeros like the argument (or the output), so gradient code
    calling it is differentiated again; any other maker as it is."""
    code = _core_lambda(maker)
    inner = [c for c in getattr(code, "co_consts", ()) if inspect.iscode(c)]  # (the VJP's `lambda g: ...`)
    if code is None or "zeros" not in code.co_names + sum((c.co_names for c in inner), ()):
        return maker
    if "argnum" in code.co_freevars:  # translate_vjp(None): lambda ans, *args: lambda g: zeros like args[argnum]
        def zero_vjp_maker(ans, *args):
            return lambda g: np.zeros_like(args[argnum])
        return zero_vjp_maker

    def zero_jvp_maker(g, ans, *args):  # translate_jvp(None): zeros like the output
        return np.zeros_like(ans)
    return zero_jvp_maker


def _deprecated_as_written(maker):
    """A VJP given with autograd's deprecated `f.defvjp(lambda g, ans, vs, gvs, x, y: ..., argnum=1)` (its
    `staged_vjpmaker`, in autograd's core) as a maker of tapegen's own calling the user's function the same
    way, so gradient code calling it is differentiated again through the user's code; any other maker as it is."""
    code = getattr(maker, "__code__", None)
    if code is None or code.co_name != "staged_vjpmaker" or \
            not code.co_filename.replace("\\", "/").endswith("/autograd/core.py") or \
            set(code.co_freevars) != {"vjpmaker", "argnum"}:
        return maker
    from autograd.core import vspace
    cells = dict(zip(code.co_freevars, (cell.cell_contents for cell in maker.__closure__)))
    users, argnum = cells["vjpmaker"], cells["argnum"]

    def deprecated_maker(ans, *args):
        return lambda g: users(g, ans, vspace(args[argnum]), vspace(g), *args)
    return deprecated_maker


def _same_as_written(maker):
    """`defjvp(f, "same")` (f linear in that argument: its tangent is f of the tangent) as a maker of tapegen's
    own, so gradient code calling it is differentiated again through f's rules; any other maker as it is."""
    code = _core_lambda(maker)
    if code is None or set(code.co_freevars) != {"fun", "argnum"}:
        return maker
    cells = dict(zip(code.co_freevars, (cell.cell_contents for cell in maker.__closure__)))
    fun, argnum = cells["fun"], cells["argnum"]

    def same_maker(g, ans, *args):
        values = list(args)
        values[argnum] = g
        return fun(*values)
    return same_maker


def _vjp_rule(maker):
    def autograd_vjp(y, g, *inputs):
        vjp = maker(y, *inputs)
        return vjp(g)
    return autograd_vjp


def _jvp_rule(maker):
    def autograd_jvp(y, dot, *inputs):
        tangent = maker(dot, y, *inputs)
        return tangent
    return autograd_jvp


def _through_autograd_vjp(argnums_rule, index):
    def maker(ans, *args):
        return lambda g: next(iter(argnums_rule((index,), ans, args, {})(g)))
    return maker


def _through_autograd_jvp(argnums_rule, index):
    def maker(g, ans, *args):
        return argnums_rule((index,), (g,), ans, args, {})
    return maker

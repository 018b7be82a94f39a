"""A function calling itself deeper than the transform unrolls: a primitive whose derivatives are tapegen's own.

Lowering inlines a function calling itself, each call in its caller's place, while a test decided when
transforming ends the recursion. Past `RECURSION_DEPTH` levels, or met again inside a branch or loop of its
own decided when the code runs (the second time down), what ends it is known only when the code runs
(autograd's hmm_em maps `log_partition_function` over a list of sequences, then over each sequence; a tree
walked to its leaves). Such a call runs as written in the forward pass, and its derivative for an argument
is tapegen's own at the values it was called with:

    y = log_partition_function(natural_params, data_0)
    ...
    g_natural_params = log_partition_function_vjp_natural_params(y, g_y, natural_params, data_0)

where the rule is `tapegen.vjp(log_partition_function, natural_params, data_0, wrt=0)` applied to `g_y`
(and the JVP rule `tapegen.jvp` with that argument's tangent). That code meets the same call again, so
the derivative recurses exactly as deep as the program does when it runs; each signature's code is made
once. The rules are such primitives too (`rule_primitive`): gradient code calling them, differentiated
again, has their derivatives made when the code runs, to any order.
"""
from __future__ import annotations

from . import lent
from .autograd_primitives import _parameters, rule_parameters
from .runtime_rules import output_cotangent
from .table import Primitive, named_rule


def recursive_primitive(fn, add_names):
    """The primitive for `fn`'s calls of itself too deep to unroll, or None where its signature has
    `*args`, `**kwargs` or keyword-only parameters (then such a call stays opaque)."""
    params = _parameters(fn)
    if params is None:
        return None
    names, defaults = params
    renamed = {own: name for own, name in zip(fn.__code__.co_varnames, names) if own != name}
    return runtime_primitive(fn, fn.__name__, names, defaults, add_names, renamed=renamed)


def runtime_primitive(fn, name, names, defaults, add_names, as_run=None, **options):
    """A primitive calling `fn` by `name` with parameters `names`, whose VJP (JVP) for each is tapegen's own
    vjp (jvp) of `fn` when the code runs (`as_run(inputs)`: the function and the inputs to differentiate
    instead). Its rules are such primitives too, found by `lookup` when gradient code calling them is
    differentiated again (`rule_primitive`): each order's code is made when the code runs."""
    as_run = as_run or (lambda inputs: (fn, inputs))
    (spelling,) = add_names({name: fn})
    prim = Primitive(name=name, fn=fn, params=names, defaults=defaults, spelling=spelling, **options)
    for index, param in enumerate(names):
        vjp_rule = named_rule(_vjp_rule(as_run, index), add_names, f"{spelling}_vjp_{param}", "vjp", param,
                              ("y", "g") + names)
        vjp_rule.fn.__tapegen_runtime__ = (vjp_rule.reads, _as_pulled_back(as_run, index))
        jvp_rule = named_rule(_jvp_rule(as_run, index), add_names, f"{spelling}_jvp_{param}", "jvp", param,
                              ("y", f"{param}_dot") + names)
        jvp_rule.fn.__tapegen_runtime__ = (jvp_rule.reads, lambda inputs, rule=jvp_rule.fn: (rule, inputs))
        prim.vjps[param], prim.jvps[param] = vjp_rule, jvp_rule
    return prim


def rule_primitive(rule_fn, add_names):
    """The primitive for a call of one of these rules in gradient code differentiated again, or None for
    any other function."""
    reads, as_run = getattr(rule_fn, "__tapegen_runtime__", (None, None))
    if reads is None:
        return None
    return runtime_primitive(rule_fn, rule_fn.__name__, rule_parameters(reads), {}, add_names, as_run)


def _vjp_rule(as_run, index):
    pulled_back = _pulled_back(as_run, index)

    def recursive_vjp(y, g, *inputs):
        return pulled_back(y, output_cotangent(g, y), *inputs)
    return recursive_vjp


def _jvp_rule(as_run, index):
    def recursive_jvp(y, dot, *inputs):
        fn, inputs = as_run(inputs)
        tangents = [None] * len(inputs)
        tangents[index] = dot
        return lent.jvp(fn, tuple(inputs), tuple(tangents))[1]
    return recursive_jvp


def _pulled_back(as_run, index):
    """What a VJP rule computes, as a function tapegen differentiates when the code runs: `(y, g, *inputs)`
    with `g` a cotangent as `vjp`'s pullback takes it."""
    def pulled_back(y, g, *inputs):
        fn, inputs = as_run(inputs)
        return lent.vjp(fn, *inputs, wrt=index)[1](g)
    return pulled_back


def _as_pulled_back(as_run, index):
    """`as_run` for a VJP rule's own rules: its pulled-back function, at the cotangent as the pullback takes it."""
    pulled_back = _pulled_back(as_run, index)
    return lambda inputs: (pulled_back, (inputs[0], output_cotangent(inputs[1], inputs[0]), *inputs[2:]))

"""Which rule is wrong? Checking each equation of a failing gradient on its own.

When `gradcheck` finds a gradient that disagrees with finite differences, it
asks `most_likely_fault`: the function's Wengert list is replayed at the
failing point (straight-line code at the top level; a loop or branch ends the
replay), and each equation's VJP rules are checked by the dot-product test
against central differences of that one primitive. The first equation whose
rule disagrees is named, with the user's line.
"""
from __future__ import annotations

import numpy as np

from ..ir import Const, Eqn, Pack, Var
from ..runtime import meta


def most_likely_fault(program, args, eps=1e-6, rtol=1e-4, atol=1e-6, seed=0) -> str | None:
    """A sentence naming the first equation whose rule disagrees with finite differences, or None."""
    env = dict(zip(program.params, args))
    rng = np.random.default_rng(seed)
    for eqn in program.body:
        if not isinstance(eqn, Eqn):
            return None  # control flow: replaying it is the generated code's job
        try:
            inputs = {key: _value(atom, env) for key, atom in eqn.inputs}
            outputs = _call(eqn, inputs)
        except Exception:
            return None
        for var, value in zip(eqn.outputs, outputs):
            env[var] = value
        if eqn.op.differentiable and eqn.op.vjps and not _agrees(eqn, inputs, outputs, rng, eps, rtol, atol):
            return (f"the rule for {getattr(eqn.op, 'spelling', '') or eqn.op.name} at {eqn.span} "
                    f"(`{eqn.span.text.strip()}`) disagrees with finite differences there")
    return None


def _value(atom, env):
    if isinstance(atom, Var):
        return env[atom]
    if isinstance(atom, Const):
        return atom.value
    if isinstance(atom, Pack):
        items = [_value(item, env) for item in atom.items]
        return items if atom.kind == "list" else tuple(items)
    raise LookupError(atom)


def _call(eqn, inputs):
    op = eqn.op
    if op.form == "custom":
        out, residuals = op.fn and _custom_forward(op, inputs)
        return (out, residuals)
    positional = [inputs[p] for p in op.params if p not in op.defaults and p != op.variadic]
    keywords = {p: inputs[p] for p in op.params if p in op.defaults}
    if op.variadic:
        positional += list(inputs[op.variadic])
    result = op.fn(*positional, **keywords)
    return tuple(result) if len(eqn.outputs) > 1 else (result,)


def _custom_forward(op, inputs):
    from .. import rules
    fwd = rules.Names()[op.spelling]
    return fwd(*[inputs[p] for p in op.params])


def _agrees(eqn, inputs, outputs, rng, eps, rtol, atol) -> bool:
    """Dot-product test of every VJP rule of `eqn` for its float inputs: <v, J u> == <J^T v, u>."""
    op = eqn.op
    y = outputs[0]
    if not _is_float(y):
        return True
    g = rng.standard_normal(np.shape(y))
    g = g if isinstance(y, np.ndarray) else float(g)
    for key, rule in op.vjps.items():
        x = inputs.get(key)
        if not _is_float(x) or isinstance(eqn.input(key), Const):
            continue
        u = rng.standard_normal(np.shape(x))
        reverse = np.sum(np.asarray(_apply(op, rule, key, inputs, outputs, g)) * u)
        plus, minus = dict(inputs), dict(inputs)
        plus[key], minus[key] = x + eps * u, x - eps * u
        forward = np.sum(g * (np.asarray(_call(eqn, plus)[0]) - np.asarray(_call(eqn, minus)[0])) / (2 * eps))
        if not abs(reverse - forward) <= atol + rtol * abs(forward):
            return False
    return True


def _apply(op, rule, key, inputs, outputs, g):
    if op.form == "custom":
        grads = rule.fn(outputs[1], g)
        return grads[op.params.index(key)]
    reads = {}
    for name in rule.reads:
        if name == "g":
            reads[name] = g
        elif name == "y":
            reads[name] = outputs[0] if len(outputs) == 1 else tuple(outputs)
        elif name in inputs:
            reads[name] = inputs[name]
        elif name.endswith("_shape"):
            reads[name] = np.shape(inputs[name[:-6]])
        elif name.endswith("_meta"):
            reads[name] = meta(inputs[name[:-5]])
        elif name.endswith("_is_const"):
            reads[name] = False
        elif name.endswith("_active"):
            reads[name] = True
    return rule.fn(**reads)


def _is_float(x) -> bool:
    return isinstance(x, (float, np.floating)) or (isinstance(x, np.ndarray) and x.dtype.kind == "f")

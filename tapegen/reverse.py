"""The reverse-mode transform: a Program becomes an Adjoint (forward + backward).

The forward pass is the primal program plus the few values rules read that
the program does not already compute (an input's shape when only the shape is
needed). The backward pass applies each active equation's VJP rules in reverse
order; a value used several times gets its cotangent as an explicit sum.
Only what some rule reads becomes a residual: an `exp` keeps its output, a
`x * 3.0` keeps nothing of `x`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import rules
from .activity import analyze
from .errors import InternalError
from .ir import Const, Eqn, Pack, Program, Var, atom_vars
from .names import namer_for
from .runtime import meta


@dataclass(frozen=True, eq=False)
class RuleApplication:
    """The op of a backward equation: apply `rule` (a VJP) to the values it reads."""

    rule: object
    differentiable = True
    form = "rule"

    @property
    def name(self) -> str:
        return self.rule.name


@dataclass(frozen=True)
class Adjoint:
    """Forward and backward equations computing a program's VJP.

    `seeds` are the cotangent vars of the differentiated outputs (`outputs`
    indexes `primal.outputs`); `gradients` holds, for each var in `wrt`, its
    cotangent var, or None where no derivative reaches it.
    """

    primal: Program
    wrt: tuple
    outputs: tuple
    forward: tuple
    backward: tuple
    seeds: tuple
    gradients: tuple
    residuals: tuple

    def __str__(self) -> str:
        from .ir import listing
        lines = [f"forward {self.primal.name}({', '.join(p.name for p in self.primal.params)}):"]
        lines += listing(self.forward)
        lines.append(f"  residuals: {', '.join(v.name for v in self.residuals)}")
        lines.append(f"backward({', '.join(s.name for s in self.seeds)}):")
        lines += listing(self.backward)
        grads = ", ".join("0" if g is None else g.name for g in self.gradients)
        lines.append(f"  return {grads}")
        return "\n".join(lines)


def reverse(program: Program, wrt: tuple, outputs: tuple = (0,)) -> Adjoint:
    """Build the adjoint of `program` for derivatives of `outputs` with respect to params `wrt`.

    Raises:
        NoRuleError: an active value flows into a callable with no VJP rule.
    """
    targets = tuple(program.outputs[i] for i in outputs)
    activity = analyze(program, wrt, targets)
    builder = _Builder(program, activity)
    seeds = builder.seed(targets)
    for eqn in reversed(program.body):
        builder.backward_eqn(eqn)
    builder.place_derived()
    forward = builder.forward_order()
    backward = tuple(builder.backward)
    gradients = tuple(builder.cotangent.get(v) for v in wrt)
    residuals = _residuals(program, forward, backward)
    return Adjoint(program, tuple(wrt), tuple(outputs), forward, backward, seeds, gradients, residuals)


class _Builder:
    def __init__(self, program: Program, activity):
        self.program = program
        self.activity = activity
        self.namer = namer_for(program, rules.namespace().keys())
        self.cotangent: dict = {}
        self.backward: list = []   # in the order the backward pass runs
        self.extra_forward: dict = {}  # primal eqn -> residual eqns to emit right after it
        self.derived: dict = {}

    def seed(self, targets):
        seeds = []
        for atom in targets:
            if isinstance(atom, Var) and self.activity.active(atom):
                g, _ = self._contribution_var(atom, self.program.return_span)
            else:
                g = self.namer.cotangent(Var(atom.name if isinstance(atom, Var) else "out"))
            seeds.append(g)
        return tuple(seeds)

    def backward_eqn(self, eqn: Eqn):
        keys = self.activity.needs_rule(eqn)
        if not keys:
            return
        g = self._output_cotangent(eqn)
        if g is None:
            return
        pending = []
        for key in keys:
            rule = eqn.op.vjps[key]
            reads = tuple((name, self._read(name, eqn, g)) for name in rule.reads)
            outs = self._targets(eqn.input(key))
            pending.append(Eqn(RuleApplication(rule), reads, outs, eqn.span))
        for rule_eqn in pending:
            self._accumulate_pending(rule_eqn)

    def _output_cotangent(self, eqn):
        if len(eqn.outputs) == 1:
            return self.cotangent.get(eqn.outputs[0])
        items = tuple(self.cotangent.get(v, Const(None)) for v in eqn.outputs)
        if all(isinstance(i, Const) for i in items):
            return None
        return Pack(items, "tuple")

    def _read(self, name, eqn, g):
        if name == "g":
            return g
        if name == "y":
            return eqn.outputs[0] if len(eqn.outputs) == 1 else Pack(eqn.outputs, "tuple")
        param, _, suffix = name.rpartition("_")
        if name in dict(eqn.inputs):
            return eqn.input(name)
        if suffix in ("shape", "meta") and param in dict(eqn.inputs):
            return self._derive(eqn, eqn.input(param), suffix)
        raise InternalError(f"rule reads {name!r}, which {eqn.op.name} does not provide")

    def _derive(self, eqn, atom, suffix):
        """A value's shape (or meta), computed in the forward pass right after `eqn`."""
        if isinstance(atom, Const):
            return Const(np.shape(atom.value) if suffix == "shape" else meta(atom.value))
        if not isinstance(atom, Var):
            raise InternalError(f"cannot take the {suffix} of {atom}")
        key = (atom, suffix)
        if key not in self.derived:
            var = self.namer.derived(atom, suffix)
            prim = rules.lookup(np.shape if suffix == "shape" else meta)
            self.derived[key] = (Eqn(prim, (("a", atom),), (var,), eqn.span), eqn)
        return self.derived[key][0].outputs[0]

    def place_derived(self):
        """Put each shape where it costs least: in the backward pass if its value is there anyway
        (an argument, or a residual some rule reads), else in the forward pass as a residual."""
        derived_vars = {d.outputs[0] for d, _ in self.derived.values()}
        available = set(self.program.params) | set(self.program.free)
        available |= {v for eqn in self.backward for v in eqn.reads if v not in derived_vars}
        for (atom, _), (derive, after) in self.derived.items():
            if atom in available:
                first_use = next(i for i, e in enumerate(self.backward) if derive.outputs[0] in e.reads)
                self.backward.insert(first_use, derive)
            else:
                self.extra_forward.setdefault(after, []).append(derive)

    def _targets(self, atom):
        """Where a rule's result goes: the cotangent of each active var it flows into."""
        if isinstance(atom, Var):
            return (_Contribution(atom),)
        if isinstance(atom, Pack):
            return tuple(_Contribution(item) if self.activity.active(item) else Var("_") for item in atom.items)
        raise InternalError(f"a rule for a constant argument {atom} was requested")

    def _accumulate_pending(self, rule_eqn: Eqn):
        outs, sums = [], []
        for target in rule_eqn.outputs:
            if isinstance(target, _Contribution):
                var, total = self._contribution_var(target.var, rule_eqn.span)
                outs.append(var)
                if total is not None:
                    sums.append(total)
            else:
                outs.append(target)
        self.backward.append(Eqn(rule_eqn.op, rule_eqn.inputs, tuple(outs), rule_eqn.span))
        self.backward.extend(sums)

    def _contribution_var(self, var, span):
        """A var for a new contribution to `var`'s cotangent, and the sum eqn if it is not the first."""
        previous = self.cotangent.get(var)
        part = self.namer.cotangent(var)
        if previous is None:
            self.cotangent[var] = part
            return part, None
        total = self.namer.cotangent(var)
        self.cotangent[var] = total
        add = rules.lookup(_add())
        return part, Eqn(add, (("x1", previous), ("x2", part)), (total,), span)

    def forward_order(self):
        ordered = []
        for eqn in self.program.body:
            ordered.append(eqn)
            ordered.extend(self.extra_forward.get(eqn, ()))
        return tuple(ordered)


@dataclass(frozen=True)
class _Contribution:
    var: Var


def _add():
    import operator
    return operator.add


def _residuals(program, forward, backward):
    """Forward values (and inputs) the backward pass reads, in the order they are defined."""
    defined_in_backward = {v for eqn in backward for v in eqn.outputs}
    read = {v for eqn in backward for v in eqn.reads if v not in defined_in_backward}
    order = list(program.params) + [v for eqn in forward for v in eqn.outputs] + list(program.free)
    return tuple(v for v in dict.fromkeys(order) if v in read)

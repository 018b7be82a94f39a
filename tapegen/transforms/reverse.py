"""The reverse-mode transform: a Program becomes an Adjoint (forward + backward).

Backward statements run the active equations' VJP rules in reverse order;
a value used several times accumulates its cotangent (`g_s = g_s + ...`).

Control flow is replayed from a tape. Before a var that a loop or branch
reassigns is overwritten, the forward pass pushes its old value — but only if
some rule reads it — and the backward pass pops it back after running that
assignment's rules, so every rule sees the values it saw going forward.
Branches push which way they went, nested loops their trip counts; `A[i] = v`
pushes the region it overwrites and the backward pass writes it back.

Cotangents are tracked statically as zero (never assigned), live, or maybe
(None at run time, e.g. after a loop); only "maybe" costs a runtime check.
"""
from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass

import numpy as np

from .. import rules
from ..errors import InternalError
from ..frontend.names import namer_for, reserved_names
from ..ir import VIEW_OPS, Const, Eqn, Exit, Guard, If, Loop, Pack, Pop, Program, Var, assigned, atom_vars, mutable_vars, walk
from ..rules.runtime_rules import output_cotangent
from ..runtime import meta
from ..runtime import shape as fast_shape
from .activity import analyze
from .analysis import (active_flags, available_in_backward, broadcasting, initial_assignments, masked_cotangents,
                       with_saved_shapes)
from .tape import ForwardPass

ZERO, LIVE, MAYBE = "zero", "live", "maybe"
TAPE_POP = Const("tape.pop()")
APPENDED = Const("appended")  # Pop index meaning "undo an append": xs.pop()


@dataclass(frozen=True, eq=False)
class RuleApplication:
    """The op of a backward equation: `outputs = rule(**reads)`, or `g = g + rule(...)` if `accumulate`."""

    rule: object
    accumulate: str | None = None  # None, "add" (g + c) or "maybe" (add_cotangents(g, c))
    unpack: bool = False           # the rule returns one cotangent per item of a list argument
    sequence: bool = False         # ... for a list held in one var: wrap them as a Cotree
    masked: bool = True            # the cotangent may hold the zeros of an untaken np.where branch
    out_shape: tuple | None = None  # the primal output's shape, when known (shape specialization)
    broadcasting: bool = False      # an elementwise op: its rules' expressions have the output's shape
    differentiable = True
    form = "rule"

    @property
    def name(self) -> str:
        return self.rule.name


@dataclass(frozen=True)
class Adjoint:
    """Forward and backward statements computing a program's VJP.

    `seeds` are the cotangent vars of the differentiated outputs (`outputs`
    indexes `primal.outputs`); `gradients` holds, for each var in `wrt`, its
    cotangent var, or None where no derivative reaches it. `uses_tape` says
    the forward pass records a tape (a list named `tape`).
    """

    primal: Program
    wrt: tuple
    outputs: tuple
    forward: tuple
    backward: tuple
    seeds: tuple
    gradients: tuple
    residuals: tuple
    uses_tape: bool = False
    tape_slots: tuple = ()
    known: dict = None  # var -> (shape, dtype) known in advance (shape specialization), or None
    live: frozenset = frozenset()  # gradient vars surely not None at the end of the backward pass
    cotangents: dict = None  # primal var -> its cotangent var
    private: frozenset = frozenset()  # cotangent vars holding float64 zeros of its own, only added to (`g += c`)

    def __str__(self) -> str:
        from ..ir import listing
        lines = [f"forward {self.primal.name}({', '.join(p.name for p in self.primal.params)}):"]
        lines += listing(self.forward)
        lines.append(f"  residuals: {', '.join(v.name for v in self.residuals)}")
        lines.append(f"backward({', '.join(s.name for s in self.seeds)}):")
        lines += listing(self.backward)
        grads = ", ".join("0" if g is None else g.name for g in self.gradients)
        lines.append(f"  return {grads}")
        return "\n".join(lines)


def reverse(program: Program, wrt: tuple, outputs: tuple = (0,), known=None) -> Adjoint:
    """Build the adjoint of `program` for derivatives of `outputs` with respect to params `wrt`.

    `known` maps vars to (shape, dtype) known in advance (see specialize.py): their shapes
    become constants instead of values computed and saved at run time.

    Raises:
        NoRuleError: an active value flows into a callable with no VJP rule.
    """
    known = known or {}
    program = _loop_targets_apart(program)
    targets = tuple(program.outputs[i] for i in outputs)
    activity = analyze(program, wrt, targets, known)
    program, derived = with_saved_shapes(program, activity, known)
    builder = _Backward(program, activity, derived)
    builder.known = known
    builder.complex_known = any(dtype is not None and dtype.kind == "c" for _, dtype in known.values()) \
        or _computes_complex(program)
    seeds = builder.seed(targets)
    backward = builder.block(program.body)
    backward, unsaved = _drop_dead_region_restores(backward, builder.region_writes, _view_bases(program))
    needed = _reads(backward)
    backward = _drop_unneeded_pops(backward, needed)
    backward, restores = _drop_unread_restores(backward)
    forward_builder = ForwardPass(program, builder, needed, restores, unsaved)
    forward = forward_builder.block(program.body, in_loop=False)
    gradients = tuple(builder.cotangent_var(v) if builder.state.get(v, ZERO) != ZERO else None for v in wrt)
    live = frozenset(builder.cotangent_var(v) for v in wrt if builder.state.get(v, ZERO) == LIVE)
    residuals = _residuals(program, forward, needed)
    return Adjoint(program, tuple(wrt), tuple(outputs), tuple(forward), tuple(backward), seeds, gradients,
                   residuals, forward_builder.uses_tape, tuple(forward_builder.slots), known or None, live,
                   dict(builder.names), _private(backward, builder))


def _loop_targets_apart(program: Program) -> Program:
    """`program` with each loop whose target is also assigned by an equation (`for t in reversed(ts): ...`
    sets `t` in its body, and a later `for t in range(n)` loops over it) looping over a var of its own, then
    `t = that var` first in its body. The tape saves what equations overwrite and the backward loop sets
    its own target, so one var in both roles was restored by a pop no push matched."""
    from dataclasses import replace
    targets = {s.target for s in walk(program.body) if isinstance(s, Loop) and s.target is not None}
    written = {v for s in walk(program.body) if isinstance(s, Eqn) for v in s.outputs}
    clashing = targets & written
    if not clashing:
        return program
    names = {v.name for s in walk(program.body) if isinstance(s, Eqn) for v in s.outputs + tuple(s.reads)} | \
        {v.name for v in program.params} | {v.name for v in targets}  # (reads: globals and closures too)
    copy = rules.lookup(rules.language.assign)

    def fresh(var):
        k = 1
        while f"{var.name}_it{k}" in names:
            k += 1
        names.add(f"{var.name}_it{k}")
        return Var(f"{var.name}_it{k}")

    def apart(stmts):
        out = []
        for stmt in stmts:
            if isinstance(stmt, If):
                stmt = stmt.with_blocks(apart(stmt.then), apart(stmt.orelse))
            elif isinstance(stmt, Loop):
                body, target = apart(stmt.body), stmt.target
                if target in clashing:
                    own = fresh(target)
                    body = (Eqn(copy, (("x", own),), (target,), stmt.span),) + body
                    target = own
                stmt = Loop(stmt.kind, target, stmt.iterable, apart(stmt.test_body), stmt.test, body, stmt.counter,
                            stmt.span)
            out.append(stmt)
        return tuple(out)
    return replace(program, body=apart(program.body))


def _container_vars(body) -> set:
    """Vars holding a list, tuple or dict the program builds: their cotangents are containers (Cotrees),
    added with add_cotangents, whose rules know them (`+` on two Cotrees lost their structure once the
    gradient code was differentiated twice more)."""
    from ..rules.language import CONTAINER_OUTPUTS
    eqns = [eqn for eqn in walk(body) if isinstance(eqn, Eqn)]
    found = {v for eqn in eqns if eqn.op.name in CONTAINER_OUTPUTS or eqn.op.name in _CONTAINER_UPDATES
             for v in eqn.outputs}
    copies = [eqn for eqn in eqns if eqn.op.name == "assign" and eqn.reads]
    while True:  # names a loop or branch copies one into
        more = {v for eqn in copies if eqn.reads[0] in found for v in eqn.outputs} - found
        if not more:
            return found
        found |= more


_CONTAINER_UPDATES = ("with_item", "concat", "repeat_items", "append", "dict_copy")


_COMPLEX_MAKERS = ("fft", "eig", "roots", "hilbert", "complex", "emath", "schur", "csd")  # (names of primitives
#                                                               that may make complex values of real ones)


def _computes_complex(program) -> bool:
    """Whether the function may compute with complex values its arguments do not show: a complex constant (`1j`),
    a complex dtype (`np.zeros(n, dtype=complex)`), or a primitive that may make them (an FFT, np.linalg.eig)."""
    def complex_const(key, value) -> bool:
        if isinstance(value, (complex, np.complexfloating)) or isinstance(value, np.ndarray) and value.dtype.kind == "c":
            return True
        if isinstance(value, (type, np.dtype)) or isinstance(value, str) and key == "dtype":  # (not order="F")
            try:
                return np.dtype(value).kind == "c"
            except TypeError:
                return False
        return False

    def atoms(atom):
        return [x for item in atom.items for x in atoms(item)] if isinstance(atom, Pack) else [atom]
    for stmt in walk(program.body):
        if not isinstance(stmt, Eqn):
            continue
        if any(maker in stmt.op.name for maker in _COMPLEX_MAKERS) or any(
                isinstance(a, Const) and complex_const(key, a.value) for key, atom in stmt.inputs for a in atoms(atom)):
            return True
    return False


class _Backward:
    """Generates backward statements, tracking each cotangent's static state."""

    def __init__(self, program: Program, activity, derived):
        self.program = program
        self.activity = activity
        self.mutable = mutable_vars(program.body)
        self.initial = initial_assignments(program.body)
        self.namer = namer_for(program, reserved_names())
        self.names: dict = {}
        self.named: set = set()  # the names of `names`' values: the cotangent names given for good
        self.state: dict = {}
        self.forward_derived = derived  # (id(consumer eqn), var, suffix) -> var saved before it
        self.region_writes: dict = {}  # id(Pop) restoring a region -> (that Pop, id(the setitem eqn it undoes)):
        #                                the Pop held, so no other Pop made later (a loop's body is built again
        #                                on each fixed-point pass) can take its id
        self.derived_cache: dict = {}
        self.containers = _container_vars(program.body)  # their cotangents add with add_cotangents, not +
        self.available = available_in_backward(program, activity)
        self.masked = masked_cotangents(program)
        self.loop_depth = 0
        self.known: dict = {}
        self.complex_known = False  # whether a value `known` is complex
        self.flagged: set = set()  # ids of If statements whose branch is recorded on the tape
        self.counted: set = set()  # ids of loops whose trip count is recorded on the tape

    def cotangent_var(self, var: Var) -> Var:
        if var not in self.names:
            self.names[var] = self.namer.cotangent(var)
            self.named.add(self.names[var].name)
        return self.names[var]

    def seed(self, targets):
        seeds = []
        for atom in targets:
            if isinstance(atom, Var) and self.activity.active(atom):
                seeds.append(self.cotangent_var(atom))
                self.state[atom] = LIVE
            else:
                seeds.append(self.namer.cotangent(Var(atom.name if isinstance(atom, Var) else "out")))
        return tuple(seeds)

    # --- blocks -------------------------------------------------------------------------

    def block(self, stmts) -> list:
        saved_cache, self.derived_cache = self.derived_cache, {}
        out = []
        for stmt in reversed(stmts):
            if isinstance(stmt, Eqn):
                out += self.eqn(stmt)
            elif isinstance(stmt, If):
                out += self.branch(stmt)
            elif isinstance(stmt, Loop):
                out += self.loop(stmt)
            elif not isinstance(stmt, Exit):
                raise InternalError(f"unexpected statement in a primal program: {stmt!r}")
        self.derived_cache = saved_cache
        return out

    def branch(self, stmt: If) -> list:
        if stmt.manager is not None:  # `with np.errstate(...)`: always run; its backward pass in it too
            then = self.block(stmt.then)
            return [stmt.with_blocks(then, ())] if then else []
        before = dict(self.state)
        then = self.block(stmt.then)
        after_then, self.state = self.state, dict(before)
        orelse = self.block(stmt.orelse)
        after_else = self.state
        self.state = _merge(after_then, after_else, then, orelse, self, stmt.span)
        if not then and not orelse:
            return []  # nothing to replay: the forward pass records nothing for it either
        flagged = self.loop_depth > 0 or stmt.catch is not None or any(v in self.mutable for v in atom_vars(stmt.cond))
        if flagged:
            self.flagged.add(id(stmt))
        return [If(TAPE_POP if flagged else stmt.cond, tuple(then), tuple(orelse), stmt.span)]

    def loop(self, stmt: Loop) -> list:
        before = dict(self.state)
        entry = dict(before)
        touched = _touched(stmt.body)
        self.loop_depth += 1
        snapshot = self.namer.snapshot()
        for _ in range(4):  # states only rise (zero -> live -> maybe): this settles quickly
            self.namer.restore(snapshot)
            self.namer.assigned.update(self.named)  # cotangent names are for good
            self.state = dict(entry)
            body = self.block(stmt.body)
            exit_state = self.state
            widened = _widened(before, entry, exit_state, touched)
            if widened == entry:
                break
            entry = widened
        self.loop_depth -= 1
        zeroed = self._accumulators(before, entry, exit_state, touched)
        if zeroed:  # again, with these cotangents live from the start
            self.namer.restore(snapshot)
            self.namer.assigned.update(self.named)
            self.state = {**before, **{v: LIVE for v in zeroed}}
            return [_zeros(self.cotangent_var(v), *self.known[v], stmt.span) for v in zeroed] + self.loop(stmt)
        pre, body = _materialize_loop(before, entry, exit_state, body, self, stmt.span, touched)
        self.state = _widened(before, entry, exit_state, touched)
        if not body:
            return pre
        if self.loop_depth > 0:
            self.counted.add(id(stmt))
            pre = pre + [Pop(stmt.counter, None, stmt.span)]
        return pre + [Loop(stmt.kind, stmt.target, stmt.iterable, (), None, tuple(body), stmt.counter, stmt.span)]

    def _accumulators(self, before, entry, exit_state, touched) -> list:
        """Cotangents a loop only adds to, of known float array shape: start them at zeros, not None.

        With shapes known (specialized code), `g = np.zeros(S)` before the loop makes every
        contribution in it a plain `g + c` instead of `add_cotangents(g, c)`, which must check
        for None on every iteration (a microsecond each time for a 64 x 64 gradient). Only a var the
        body `touched` can be zero before the loop and maybe set on entering it. Where the function computes
        with complex numbers, a real array's cotangent may be complex (`conform` takes its real part at the
        end), so only complex arrays' start at zeros.
        """
        kinds = "c" if self.complex_known else "fc"
        return sorted((v for v in touched
                       if entry.get(v) == MAYBE and before.get(v, ZERO) == ZERO and exit_state.get(v, ZERO) == LIVE
                       and v in self.known and self.known[v][0] != () and self.known[v][1] is not None
                       and self.known[v][1].kind in kinds), key=lambda v: v.name)

    # --- equations ----------------------------------------------------------------------

    def eqn(self, eqn: Eqn) -> list:
        out = []
        keys = self.activity.needs_rule(eqn)
        live = [o for o in eqn.outputs if self.state.get(o, ZERO) != ZERO]
        if keys and live:
            g = self._output_cotangent(eqn)
            maybe = [o for o in live if self.state.get(o) == MAYBE]
            if maybe and len(live) == 1:
                # The rules run with their writes kept apart (copying every state for each guarded equation
                # made long loop bodies quadratic): a state they change is the join of before and after.
                before, cache = self.state, self.derived_cache
                self.state, self.derived_cache = ChainMap({}, before), ChainMap({}, cache)
                body = self.rules(eqn, keys, g)
                after = self.state.maps[0]
                self.state, self.derived_cache = before, cache  # shapes taken inside the guard may not exist after it
                pre = [_none(self.cotangent_var(v), eqn.span) for v in sorted(after, key=lambda v: v.name)
                       if before.get(v, ZERO) == ZERO and after[v] != ZERO]
                for v, state in after.items():
                    before[v] = state if state == before.get(v) else _join(state, before.get(v, ZERO))
                out += pre + [Guard(self.cotangent_var(maybe[0]), tuple(body), eqn.span)]
            else:
                out += self.rules(eqn, keys, g)
        for o in reversed(eqn.outputs):  # last pushed, first popped (`q, r = qr(m)` in a loop); tape_pop: the list first
            if o in self.mutable and (id(eqn), o) not in self.initial:
                if self.state.get(o, ZERO) != ZERO and not self._self_input(eqn, o):
                    self.state[o] = ZERO
                index = eqn.input("index") if eqn.op.name == "setitem" else \
                    APPENDED if eqn.op.name == "append" else \
                    Pack((eqn.outputs[0],), "popped") if eqn.op.name == "tape_pop" and o is eqn.outputs[-1] else None
                out.append(Pop(o, index, eqn.span))
                if eqn.op.name == "setitem":
                    self.region_writes[id(out[-1])] = (out[-1], id(eqn))
                for suffix in ("shape", "meta"):  # the only keys _derive makes: (var, suffix)
                    self.derived_cache.pop((o, suffix), None)
        return out

    def rules(self, eqn, keys, g) -> list:
        """Rule applications for `eqn`; contributions to a var it also assigns go in after the reset."""
        if eqn.op.form == "custom":  # the user's bwd: one call, a cotangent per argument, given the output's
            plain = self.namer.temp()  # cotangent shaped like the output (a tuple's as a tuple, not a Cotree)
            shaped = Eqn(rules.lookup(output_cotangent), (("cotangent", self.cotangent_var(eqn.outputs[0])),
                                                          ("like", eqn.outputs[0])), (plain,), eqn.span)
            reads = (("residuals", eqn.outputs[1]), ("g", plain))
            return [shaped] + self.contribute(eqn.op.custom, reads, Pack(tuple(a for _, a in eqn.inputs), "tuple"),
                                              eqn.span)
        out, deferred = [], []
        for key in keys:
            rule = eqn.op.vjps[key]
            reads, derive = self._reads(rule, eqn, g)
            out += derive
            atom = eqn.input(key)
            masked = any(o in self.masked for o in eqn.outputs)
            shape = self.known[eqn.outputs[0]][0] if len(eqn.outputs) == 1 and eqn.outputs[0] in self.known else None
            shape = (shape, broadcasting(eqn.op)) if shape is not None else None
            if isinstance(atom, Var) and atom in eqn.outputs:
                deferred.append((rule, reads, atom, masked, shape))
            else:
                out += self.contribute(rule, reads, atom, eqn.span, key in eqn.op.sequences, masked, shape)
        for rule, reads, atom, masked, shape in deferred:
            self.state[atom] = ZERO
            out += self.contribute(rule, reads, atom, eqn.span, masked=masked, out_shape=shape)
        return out

    def _self_input(self, eqn, var) -> bool:
        return any(atom is var or atom == var for _, atom in eqn.inputs)

    def contribute(self, rule, reads, atom, span, sequence=False, masked=True, out_shape=None) -> list:
        """Add `rule(reads)` into the cotangent of each active var `atom` holds."""
        if isinstance(atom, Var):
            shape, broadcasting = out_shape if out_shape is not None else (None, False)
            op = RuleApplication(rule, sequence=sequence, masked=masked, out_shape=shape, broadcasting=broadcasting)
            eqn = self._accumulate(atom, op, reads, span)
            if getattr(rule, "partial", False):
                self.state[atom] = MAYBE  # the rule may find no cotangent for this item
            return [eqn]
        if isinstance(atom, Pack):
            items = [a if isinstance(a, Var) and self.activity.active(a) else None for a in atom.items]
            direct = {a for a in items if a is not None and items.count(a) == 1 and self.state.get(a, ZERO) == ZERO}
            parts = [Var("_") if a is None else self.cotangent_var(a) if a in direct else self.namer.temp()
                     for a in items]
            out = [Eqn(RuleApplication(rule, unpack=True, masked=masked), reads, tuple(parts), span)]
            for item, part in zip(items, parts):
                if item is None:
                    continue
                if item not in direct:
                    out.append(self._accumulate(item, rules.lookup(_identity()), (("x", part),), span))
                self.state[item] = MAYBE  # an item's cotangent may be None (a container item never used)
            return out
        raise InternalError(f"a rule for the constant argument {atom} was requested")

    def _accumulate(self, var, op, reads, span) -> Eqn:
        g = self.cotangent_var(var)
        state = self.state.get(var, ZERO)
        self.state[var] = LIVE
        if state == ZERO:
            return Eqn(op, reads, (g,), span)
        mode = "add" if state == LIVE and isinstance(op, RuleApplication) and not getattr(op.rule, "partial", False) \
            and var not in self.containers else "maybe"
        if isinstance(op, RuleApplication):
            return Eqn(RuleApplication(op.rule, mode, sequence=op.sequence, masked=op.masked, out_shape=op.out_shape,
                                       broadcasting=op.broadcasting),
                       reads + (("__g", g),), (g,), span)
        return Eqn(RuleApplication(_IDENTITY_RULE, mode), (("g", reads[0][1]), ("__g", g)), (g,), span)

    def _output_cotangent(self, eqn):
        if len(eqn.outputs) == 1:
            return self.cotangent_var(eqn.outputs[0])
        return Pack(tuple(self.cotangent_var(v) if self.state.get(v, ZERO) != ZERO else Const(None)
                          for v in eqn.outputs), "tuple")

    def _reads(self, rule, eqn, g):
        reads, derive = [], []
        inputs = dict(eqn.inputs)
        for name in rule.reads:
            if name == "g":
                value = g
            elif name == "y":
                value = eqn.outputs[0] if len(eqn.outputs) == 1 else Pack(eqn.outputs, "tuple")
            elif name in inputs:
                value = inputs[name]
            elif name.endswith("_is_const") and name[:-9] in inputs:
                value = Const(isinstance(inputs[name[:-9]], Const))
            elif name.endswith("_active") and name[:-7] in inputs:
                value = Const(active_flags(inputs[name[:-7]], self.activity))
            else:
                param, _, suffix = name.rpartition("_")
                if suffix not in ("shape", "meta") or param not in inputs:
                    raise InternalError(f"rule {rule.name} reads {name!r}, which {eqn.op.name} does not provide")
                value = self._derive(eqn, inputs[param], suffix, derive)
            reads.append((name, value))
        return tuple(reads), derive

    def _derive(self, eqn, atom, suffix, derive):
        """A value's shape (or meta): computed in the backward pass if the value is there anyway."""
        if isinstance(atom, Const):
            return Const(np.shape(atom.value) if suffix == "shape" else meta(atom.value))
        if atom in self.known and (suffix == "shape" or self.known[atom][1] is not None):
            shape, dtype = self.known[atom]
            return Const(shape if suffix == "shape" else (shape, dtype))
        if not isinstance(atom, Var):
            raise InternalError(f"cannot take the {suffix} of {atom}")
        if (id(eqn), atom, suffix) in self.forward_derived:  # saved by the forward pass (analysis.py)
            return self.forward_derived[(id(eqn), atom, suffix)]
        prim = rules.lookup(fast_shape if suffix == "shape" else meta)
        if atom in self.available:
            key = (atom, suffix)
            if key not in self.derived_cache:
                var = self.namer.derived(atom, suffix)
                self.derived_cache[key] = var
                derive.append(Eqn(prim, (("a", atom),), (var,), eqn.span))
            return self.derived_cache[key]
        return self.forward_derived[(id(eqn), atom, suffix)]


def _join(a, b):
    if a == b:
        return a
    return MAYBE


def _merge(after_then, after_else, then, orelse, builder, span):
    """States after an if/else; a cotangent live on one path only is set to None on the other.

    A var in the same state on both paths keeps it, and needs nothing (a cotangent maybe set on both is
    named already, as every one whose state is not zero): only the states that differ are looked at, so
    a function of many branches is not quadratic in its length."""
    merged, maybe = {**after_else, **after_then}, []
    for var in {var for var, _ in after_then.items() ^ after_else.items()}:
        a, b = after_then.get(var, ZERO), after_else.get(var, ZERO)
        merged[var] = _join(a, b)
        if merged[var] == MAYBE:
            maybe.append((var, a, b))
    for var, a, b in sorted(maybe, key=lambda item: item[0].name):
        g = builder.cotangent_var(var)
        if a == ZERO:
            then.append(_none(g, span))
        if b == ZERO:
            orelse.append(_none(g, span))
    return merged


def _touched(body) -> set:
    """Every var an equation in `body` (nested blocks too) reads or assigns: the only vars whose cotangent
    states the backward pass of `body` can change (rules add into their inputs' cotangents, an assignment
    resets its outputs', branches and loops inside join those)."""
    return {v for stmt in walk(body) if isinstance(stmt, Eqn) for v in (*stmt.reads, *stmt.outputs)}


def _widened(before, entry, exit_state, touched) -> dict:
    """The states a loop's next pass starts from (or leaves after it): each var's join of its states before
    the loop, on entering this pass and on leaving it. A var the body did not touch is in the same state in
    all three: only the touched are joined (joining every state, for each of many loops, was quadratic)."""
    widened = dict(exit_state)  # exit_state has every var the others have: states are only ever added
    for v in touched:
        if v in widened:
            widened[v] = _join(_join(before.get(v, ZERO), widened[v]), entry.get(v, ZERO))
    return widened


def _materialize_loop(before, entry, exit_state, body, builder, span, touched):
    """Set to None what a loop's backward body may read before anything is assigned to it (only a var the
    body touched can be maybe set on entering it but zero before it or on leaving it)."""
    pre, body = [], list(body)
    for var in sorted((v for v in touched if entry.get(v) == MAYBE), key=lambda v: v.name):
        g = builder.cotangent_var(var)
        if before.get(var, ZERO) == ZERO:
            pre.append(_none(g, span))
        if exit_state.get(var, ZERO) == ZERO:
            body.append(_none(g, span))
    return pre, body


def _private(backward, builder) -> frozenset:
    """Cotangent vars holding a float64 array only the backward pass refers to, so `g += c` may update it.

    Each is set once, to np.zeros before a loop (`_zeros`, in the final backward pass, not in a pass
    a loop's fixed point discarded), and otherwise only added to (`g = g + c`) and finally returned.
    """
    zeros, cotangents = rules.lookup(np.zeros), set(builder.names.values())
    private = {s.outputs[0] for s in walk(backward) if isinstance(s, Eqn) and s.op is zeros
               and s.outputs[0] in cotangents and s.input("dtype") == Const(None)}
    for stmt in walk(backward):
        if not isinstance(stmt, Eqn):  # a branch or loop head reading it, or a pop into it (a guard only tests it)
            private.difference_update(getattr(stmt, "reads", ()))
            private.discard(stmt.var if isinstance(stmt, Pop) else None)
            continue
        own = stmt.op.form == "rule" and stmt.op.accumulate == "add" and stmt.input("__g") == stmt.outputs[0]
        for key, atom in stmt.inputs:
            if not (own and key == "__g"):
                private.difference_update(atom_vars(atom))
        if not own and stmt.op is not zeros:
            private.difference_update(stmt.outputs)  # assigned some other way: maybe another array
    return frozenset(private)


def _zeros(var, shape, dtype, span):
    dtype_atom = Const(None if dtype == np.float64 else dtype.type)
    return Eqn(rules.lookup(np.zeros), (("shape", Const(tuple(shape))), ("dtype", dtype_atom)), (var,), span)


def _none(var, span):
    return Eqn(rules.lookup(_identity()), (("x", Const(None)),), (var,), span)


def _identity():
    from ..rules.language import assign
    return assign


class _IdentityRule:
    name = "assign"
    reads = ("g",)
    inline = None


_IDENTITY_RULE = _IdentityRule()


def _reads(backward) -> set:
    """Vars the backward statements read (rule inputs, conditions, loop ranges)."""
    needed = set()
    for stmt in walk(backward):
        if isinstance(stmt, Eqn):
            needed.update(v for key, atom in stmt.inputs if key != "__g" for v in atom_vars(atom))
        elif isinstance(stmt, If) and stmt.cond is not TAPE_POP:
            needed.update(atom_vars(stmt.cond))
        elif isinstance(stmt, Loop):
            needed.update(atom_vars(stmt.iterable) if stmt.iterable is not None else ())
            needed.add(stmt.counter)
        elif isinstance(stmt, Pop) and stmt.index is not None:
            needed.update(atom_vars(stmt.index))
            needed.add(stmt.var)
    return needed


def _view_bases(program) -> dict:
    """var -> the var whose memory it shows, for the views the forward pass makes (`row = A[0]`, `A.T`)."""
    bases = {}
    for stmt in walk(program.body):
        source = stmt.inputs[0][1] if isinstance(stmt, Eqn) and stmt.inputs else None
        if isinstance(source, Pack) and len(source.items) == 1:  # np.atleast_1d(a)
            source = source.items[0]
        if isinstance(stmt, Eqn) and stmt.op.name in VIEW_OPS and isinstance(source, Var):
            for out in stmt.outputs:
                bases[out] = source
    return bases


def _drop_dead_region_restores(backward, region_writes, view_bases=None) -> tuple:
    """The backward pass less the top-level `A[i] = tape.pop()` that nothing after it reads `A` from (nor a
    view of `A`: `S[0] *= x` reads the old row through a view a rule keeps), and the ids of their setitem
    eqns (the forward pass saves no region for them).

    `s = np.zeros(4); s[1:3] = 1.0` then `s = f(s)` in a loop: the region restored at the very end of the
    backward pass is never read. Writing it is wasted work, and differentiated again (grad-of-grad), that
    write into a name the loop rebinds from the tape is refused by lowering."""
    out, unsaved, later = [], set(), set()
    view_bases = view_bases or {}
    for stmt in reversed(backward):
        if isinstance(stmt, Pop) and region_writes.get(id(stmt), (None,))[0] is stmt and stmt.var not in later \
                and _view_root(stmt.var, view_bases) not in later:  # (a write into a view restores its base)
            unsaved.add(region_writes[id(stmt)][1])
            continue
        read = _reads([stmt]) | ({stmt.var} if isinstance(stmt, Pop) and stmt.index is not None else set())
        for var in list(read):
            while var in view_bases:  # a view read: its base is read
                var = view_bases[var]
                read.add(var)
        later |= read
        out.append(stmt)
    return out[::-1], unsaved


def _view_root(var, view_bases):
    """The var whose memory `var` shows, following views to the array that owns it."""
    while var in view_bases:
        var = view_bases[var]
    return var


def _drop_unneeded_pops(stmts, needed) -> list:
    out = []
    for stmt in stmts:
        if isinstance(stmt, Pop) and stmt.index is None and stmt.var not in needed:
            continue
        if isinstance(stmt, If):
            stmt = stmt.with_blocks(_drop_unneeded_pops(stmt.then, needed), _drop_unneeded_pops(stmt.orelse, needed))
        elif isinstance(stmt, Loop):
            stmt = Loop(stmt.kind, stmt.target, stmt.iterable, stmt.test_body, stmt.test,
                        tuple(_drop_unneeded_pops(stmt.body, needed)), stmt.counter, stmt.span)
        elif isinstance(stmt, Guard):
            stmt = Guard(stmt.var, tuple(_drop_unneeded_pops(stmt.body, needed)), stmt.span)
        out.append(stmt)
    return out


def _drop_unread_restores(backward) -> tuple:
    """The backward pass less each top-level loop's restores that neither it nor anything after it reads,
    and, per such loop's counter, the vars it still restores (tape.py pushes only those in its forward loop).

    `h = h + 0.1 * np.tanh(h)` in a loop reassigns `h`, and a rule after the loop reads `h`: `_reads` keeps
    every restore of `h`, although no rule in the loop reads it. Each restore kept is an array the tape
    holds until the backward pass reaches it."""
    out, restores = [], {}
    read_from_here = set()  # what backward[index:] reads, gathered last statement first (not again per loop)
    for stmt in reversed(backward):
        read_from_here |= _reads([stmt])
        if isinstance(stmt, Loop):
            popped = {s.var for s in walk(stmt.body) if isinstance(s, Pop) and s.index is None}
            kept = popped & read_from_here
            body = _drop_unneeded_pops(stmt.body, kept)
            if kept != popped and not _empty_block(body):
                restores[stmt.counter] = frozenset(kept)
                if not body:
                    continue
                stmt = Loop(stmt.kind, stmt.target, stmt.iterable, stmt.test_body, stmt.test, tuple(body),
                            stmt.counter, stmt.span)
        out.append(stmt)
    return out[::-1], restores


def _empty_block(stmts) -> bool:
    """Whether a nested loop, guard or branch in `stmts` has nothing left to run."""
    for stmt in walk(stmts):
        if isinstance(stmt, (Loop, Guard)) and not stmt.body or isinstance(stmt, If) and not stmt.then + stmt.orelse:
            return True
    return False


def _residuals(program, forward, needed):
    """Forward values (and inputs) the backward pass reads, in the order they are defined."""
    order = list(program.params) + assigned(forward) + list(program.free)
    return tuple(v for v in dict.fromkeys(order) if v in needed)

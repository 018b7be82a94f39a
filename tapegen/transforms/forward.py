"""The forward-mode transform: a Program becomes a Tangent program (primal and tangent statements).

Each primal statement is followed by the tangent of what it assigns, when any
of its inputs carries one: `y_dot` is the sum of the JVP rule contributions of
the inputs that carry a tangent (`t3_dot = t1_dot * x2 + x1 * t2_dot`).
Values that do not depend on the `wrt` inputs, or that no output depends on,
get no tangent at all. Control flow keeps its structure: branches and loops
run their tangent statements inside them, so no tape is needed.

A few things are not sums of contributions, and are written here instead:

- in-place updates mirror on the tangent: `A[i] = v` gives `A_dot[i] = v_dot`,
  `xs.append(v)` gives `xs_dot.append(v_dot)`, and `v = tape.pop()` (in
  generated gradient code) gives `v_dot = tape_dot.pop()`;
- containers built from items (`[a, b]`, `{"W": W}`) hold the items'
  tangents, zeros for items that carry none;
- a function with its own JVP (`tapegen.custom_jvp`, or a `tapegen.checkpoint`
  segment, whose tangent is pushed through its code) is called for it:
  `y_dot = f_tangent((x,), (x_dot,))`;
- a var assigned in several places (a loop's `h`) has a tangent everywhere
  once it has one anywhere: an assignment of a value with no tangent gives it
  a zero tangent (`h_dot = zero_tangent(h)`).

A JVP rule that reads the tangent of another input than its own (`b_dot` in a
rule for `a`) computes the tangent of both at once: the others' own rules are
then not used, and it is passed None for an input without a tangent.
"""
from __future__ import annotations

import ast
import operator
from dataclasses import dataclass

import numpy as np

from .. import rules
from ..errors import InternalError, NoRuleError
from ..frontend.names import namer_for, reserved_names
from ..ir import VIEW_OPS, Const, Eqn, Exit, If, Loop, Pack, Program, Var, assigned, atom_vars, mutable_vars, walk
from ..rules import runtime_rules
from ..rules.custom import custom_jvp, tangent_function
from ..rules.language import append, make_dict, make_list, make_tuple, tangent_written
from ..rules.runtime_rules import tape_pop
from ..rules.table import Primitive
from ..runtime import meta
from .activity import Activity, ItemFlow, _check_attributes, _placed, check_kept


@dataclass(frozen=True, eq=False)
class TangentSum:
    """The op of a tangent equation: `y_dot = rule_1(reads_1) + rule_2(reads_2) + ...`.

    The equation's inputs are every rule's reads, keyed `"<i>:<name>"` for rule `i`.
    Contributions that may be tuples (rules called by name, several outputs) are
    added item by item: `y_dot = add_tangents(rule_1(...), rule_2(...))`.
    """

    rules: tuple
    generic: bool = False  # add with `add_tangents` (item by item), for rules that may return tuples
    shown: tuple = ()  # inputs' tangents showing an array whose tangent is written in place later (`X_dot[1] =
    #                    ...`): the tangent is copied where it is one of them (`t_dot` of `y = t * 1.0`: `unshared`)
    form = "tangent"
    name = "tangent"
    differentiable = False


@dataclass(frozen=True)
class Tangent:
    """A program's primal statements interleaved with tangent statements.

    `tangent_params` are the tangent vars of `wrt`, in order; `output_tangents`
    holds, for each of `primal.outputs`, its tangent var, or None where no
    tangent reaches it (a zero tangent).
    """

    primal: Program
    wrt: tuple
    tangent_params: tuple
    body: tuple
    output_tangents: tuple

    def __str__(self) -> str:
        from ..ir import listing
        params = [p.name for p in self.primal.params] + [t.name for t in self.tangent_params]
        lines = [f"jvp {self.primal.name}({', '.join(params)}):"] + listing(self.body)
        tangents = ", ".join("0" if t is None else t.name for t in self.output_tangents)
        outs = ", ".join(str(a) for a in self.primal.outputs)
        lines.append(f"  return ({outs}), ({tangents})")
        return "\n".join(lines)


def forward(program: Program, wrt: tuple) -> Tangent:
    """The tangent program of `program` for tangents of the params `wrt`.

    Raises:
        NoRuleError: a value carrying a tangent flows into a callable with no JVP rule.
    """
    active = _active(program, tuple(wrt))
    builder = _Builder(program, active)
    tangent_params = tuple(builder.tangent(p) for p in wrt)
    body = builder.block(program.body)
    outputs = tuple(builder.names.get(a) if isinstance(a, Var) and a in active else None for a in program.outputs)
    return Tangent(program, tuple(wrt), tangent_params, tuple(body), outputs)


def _active(program: Program, wrt: tuple) -> frozenset:
    """Vars that depend on `wrt` through differentiable ops and that some output depends on."""
    placed = [(eqn, position, set(loops)) for position, (eqn, loops) in enumerate(_placed(program.body))]
    varying, changed = set(wrt), True
    holding: dict = {}  # (object, attribute) -> (position, loops) of the first setattr storing a tangent there

    called = {v for eqn, _, _ in placed for key, atom in eqn.inputs
              if key in getattr(eqn.op, "callables", ()) for v in atom_vars(atom)}
    data = {(eqn.inputs[0][1], eqn.inputs[1][1].value) for eqn, _, _ in placed
            if getattr(eqn.op, "fn", None) is setattr and isinstance(eqn.inputs[1][1], Const)}

    def reads_varying(eqn, v, position, loops):  # from that setattr on (and in its loops), reading the object
        named = eqn.inputs[1][1].value if eqn.op.name in ("getattr", "attribute_or_none") \
            and isinstance(eqn.inputs[1][1], Const) else None  # (that
        if named is not None and (v, named) not in data and called & set(eqn.outputs):
            named = None  # a bound method passed to odeint (`model.rhs`) may read any attribute
        return v in varying or any(obj == v and (named is None or name == named)  # attribute, for getattr)
                                   and (position > at or bool(loops & around))
                                   for (obj, name), (at, around) in holding.items())
    items = ItemFlow(program.body)
    while changed:  # loops carry values backwards in program order: iterate to a fixed point
        changed = False
        for eqn, position, loops in placed:
            inert = getattr(eqn.op, "inert", ())  # shapes, indices, `like`s: no tangent flows from them
            reads = atom_vars(eqn.input("like")) if eqn.op.fn is tape_pop else \
                [v for key, atom in eqn.inputs if key not in inert for v in atom_vars(atom)]
            changed |= items.update(eqn, varying.__contains__)
            decided = items.output_varies(eqn)
            if decided is None and eqn.op.differentiable:
                decided = any(reads_varying(eqn, v, position, loops) for v in reads)
            if eqn.op.differentiable and decided and not varying.issuperset(eqn.outputs):
                varying.update(eqn.outputs)
                changed = True
            if getattr(eqn.op, "fn", None) is setattr and isinstance(eqn.inputs[0][1], Var) \
                    and any(v in varying or any(obj == v for obj, _ in holding) for v in eqn.reads[1:]) \
                    and (eqn.inputs[0][1], eqn.inputs[1][1].value) not in holding:
                # (an object holding one that tangents were set into holds them too: `Wrap(Lin(W))`)
                holding[(eqn.inputs[0][1], eqn.inputs[1][1].value)] = (position, loops)  # read later: needs rules
                changed = True
    eqns = [eqn for eqn, _, _ in placed]
    useful, changed = {v for atom in program.outputs for v in atom_vars(atom)}, True
    while changed:
        changed = False
        for eqn in reversed(eqns):  # a tangent never passes through a non-differentiable op (`seed(t5)`)
            if eqn.op.differentiable and any(v in useful for v in eqn.outputs) and not useful.issuperset(eqn.reads):
                useful.update(eqn.reads)
                changed = True
    # np.add.at(P, i, v): refused. An object tangents were set into is followed (its attributes carry them),
    # as reverse mode's analysis has it: what is appended to one of its lists is not kept out of sight
    followed = frozenset(varying | {obj for obj, _ in holding})
    check_kept(program.body, Activity(followed, frozenset(useful)), program.outputs)
    # `self.G = self.G + g` on `opts[0]` in a loop: the read in the next pass is of an object the frontend
    # cannot tie to the one the tangent was set on; its tangent would be taken as zero. Raise, as reverse mode
    _check_attributes(program.body, Activity(followed, frozenset(useful)))
    return frozenset(varying & useful)


_CONTAINERS = ((make_list, "items"), (make_tuple, "items"), (make_dict, "values"), (np.array, "object"),
               (np.asarray, "object"))


# Primitives whose tangents forward mode writes itself (in place, or item by item), not from JVP rules.
STRUCTURAL = tuple(fn for fn, _ in _CONTAINERS) + (append, operator.setitem, tape_pop)


def _container_key(op):
    """The parameter holding the items, if `op` builds a container (or an array) from them."""
    return next((key for fn, key in _CONTAINERS if op.fn is fn), None)


class _Builder:
    """Walks the primal program, writing each statement and then its tangent."""

    def __init__(self, program: Program, active: frozenset):
        self.program = program
        self.active = active
        self.mutable = mutable_vars(program.body)
        self.written_in_place = {s.outputs[0] for s in walk(program.body)
                                 if isinstance(s, Eqn) and s.op.name == "setitem"}
        self.shows_written = _showing(program.body, self.written_in_place)
        self.tapes = {s.input("tape") for s in walk(program.body) if isinstance(s, Eqn) and s.op.fn is tape_pop}
        self.namer = namer_for(program, reserved_names(generated_locals=False))
        self.names: dict = {}
        self.derived: dict = {}

    def tangent(self, var: Var) -> Var:
        if var not in self.names:
            self.names[var] = self.namer.tangent(var)
        return self.names[var]

    def has_tangent(self, atom) -> bool:
        return isinstance(atom, Var) and atom in self.active

    # --- blocks -------------------------------------------------------------------------

    def block(self, stmts) -> list:
        saved, self.derived = self.derived, {}
        out = []
        for stmt in stmts:
            if isinstance(stmt, Eqn):
                out += self.eqn(stmt)
            elif isinstance(stmt, If):
                out.append(stmt.with_blocks(self.block(stmt.then), self.block(stmt.orelse)))
            elif isinstance(stmt, Loop):
                out.append(Loop(stmt.kind, stmt.target, stmt.iterable, tuple(self.block(stmt.test_body)),
                                stmt.test, tuple(self.block(stmt.body)), stmt.counter, stmt.span))
            elif isinstance(stmt, Exit):
                out.append(stmt)
            else:
                raise InternalError(f"unexpected statement in a primal program: {stmt!r}")
            if not isinstance(stmt, (Eqn, Exit)):
                self._forget(assigned([stmt]))
        self.derived = saved
        return out

    def _forget(self, variables) -> None:
        """Drop saved shapes of vars that were just reassigned."""
        changed = set(variables)
        self.derived = {k: v for k, v in self.derived.items() if k[0] not in changed}

    # --- equations ----------------------------------------------------------------------

    def eqn(self, eqn: Eqn) -> list:
        self._forget(eqn.outputs)
        out = [eqn]
        op = eqn.op
        if op.name == "setitem":
            return out + self._setitem(eqn)
        if op.name == "append":
            return out + self._append(eqn)
        if op.fn is tape_pop or (op.form == "opaque" and op.spelling == ".pop"):
            return out + self._pop(eqn)
        outputs = [o for o in eqn.outputs if o in self.active]
        if not outputs:
            return out
        own = _own_jvp(op)
        if own is not None:
            return out + self._own(eqn, own)
        inert = getattr(op, "inert", ())  # indices, keys, shapes: no derivative flows through them
        carrying = [key for key, atom in eqn.inputs
                    if key not in inert and any(v in self.active for v in atom_vars(atom))]
        if not carrying and any(o not in self.mutable for o in outputs):  # an object a setattr made active
            raise NoRuleError("this object's attributes are set to values carrying a tangent, and the object "
                              "is then used where forward mode cannot follow them", eqn.span,
                              "pass the values themselves along instead of keeping them in the object's "
                              "attributes")
        if not carrying or not op.differentiable:
            return out + [self._zero(o, eqn.span) for o in outputs]
        if _container_key(op) is not None and not op.jvps:
            return out + self._container(eqn)
        out += self._rules(eqn, carrying)
        if any(o in self.written_in_place for o in eqn.outputs) and op.name != "assign":
            var = self.tangent(eqn.outputs[0])  # A_dot[i] = ... must not write into another value's tangent
            out.append(Eqn(rules.lookup(np.copy), (("a", var),), (var,), eqn.span))
        return out

    def _rules(self, eqn, carrying) -> list:
        chosen, covered, derive = [], set(), []
        for key in carrying:
            if key in covered:
                continue
            rule = eqn.op.jvps.get(key)
            if rule is None:
                raise NoRuleError(_no_rule_message(eqn.op, key), eqn.span, getattr(eqn.op, "hint", "") or
                                  "forward mode needs a JVP rule for it; see `python -m tapegen rules`")
            covered |= {read[:-4] for read in rule.reads if read.endswith("_dot")} | {key}
            if not _is_zero(rule):
                chosen.append((rule, self._reads(rule, eqn, derive)))
        if not chosen:  # every contribution is zero (a dependence through shapes or comparisons only)
            return [self._zero(o, eqn.span, anywhere=True) for o in eqn.outputs if o in self.active]
        inputs = tuple((f"{i}:{name}", atom) for i, (_, reads) in enumerate(chosen) for name, atom in reads)
        outs = tuple(self.tangent(o) for o in eqn.outputs)
        used = tuple(rule for rule, _ in chosen)
        generic = len(used) > 1 and (len(outs) > 1 or eqn.op.name in _JOINS
                                     or any(not _is_array_expression(rule) for rule in used))
        shown = () if eqn.op.name in _SHOWING | _NEW or len(outs) != 1 else tuple(dict.fromkeys(
            self.tangent(v) for key in carrying for v in atom_vars(eqn.input(key))
            if v in self.shows_written and self.has_tangent(v)))
        return derive + [Eqn(TangentSum(used, generic, shown), inputs, outs, eqn.span)]

    def _reads(self, rule, eqn, derive) -> tuple:
        inputs = dict(eqn.inputs)
        reads = []
        for name in rule.reads:
            if name == "y":
                value = eqn.outputs[0] if len(eqn.outputs) == 1 else Pack(eqn.outputs, "tuple")
            elif name in inputs:
                value = inputs[name]
            elif name.endswith("_dot") and name[:-4] in inputs:
                value = self._tangent_atom(inputs[name[:-4]])
            elif name.endswith("_is_const") and name[:-9] in inputs:
                value = Const(isinstance(inputs[name[:-9]], Const))
            elif name.endswith("_active") and name[:-7] in inputs:
                value = Const(self._carries(inputs[name[:-7]]))
            else:
                param, _, suffix = name.rpartition("_")
                if suffix not in ("shape", "meta") or param not in inputs:
                    raise InternalError(f"rule {rule.name} reads {name!r}, which {eqn.op.name} does not provide")
                value = self._derive(inputs[param], suffix, eqn.span, derive)
            reads.append((name, value))
        return tuple(reads)

    def _carries(self, atom):
        """Whether an input carries a tangent: a bool, or a tuple of bools for a list."""
        if isinstance(atom, Pack):
            return tuple(self._carries(item) for item in atom.items)
        return any(v in self.active for v in atom_vars(atom))

    def _tangent_atom(self, atom):
        """What a rule reads as `<param>_dot`: the tangent, None for none, item by item for a list."""
        if isinstance(atom, Pack):
            return Pack(tuple(self._tangent_atom(item) for item in atom.items), atom.kind)
        return self.tangent(atom) if self.has_tangent(atom) else Const(None)

    def _derive(self, atom, suffix, span, derive):
        if isinstance(atom, Const):
            return Const(np.shape(atom.value) if suffix == "shape" else meta(atom.value))
        if not isinstance(atom, Var):
            raise InternalError(f"cannot take the {suffix} of {atom}")
        key = (atom, suffix)
        if key not in self.derived:
            var = self.namer.derived(atom, suffix)
            derive.append(Eqn(rules.lookup(np.shape if suffix == "shape" else meta), (("a", atom),), (var,), span))
            self.derived[key] = var
        return self.derived[key]

    # --- tangents written structurally --------------------------------------------------

    def _zero(self, var, span, anywhere=False) -> Eqn:
        """A zero tangent for a var that has one elsewhere (`h_dot = zero_tangent(h)`)."""
        if var not in self.mutable and not anywhere:
            raise InternalError(f"{var} carries a tangent but was assigned a value that carries none")
        return Eqn(runtime_rules.ZERO_TANGENT, (("x", var),), (self.tangent(var),), span)

    def _item_tangents(self, pack, span, out) -> Pack:
        items = []
        for item in pack.items:
            if self.has_tangent(item):
                items.append(self.tangent(item))
            else:
                zero = self.namer.temp()
                out.append(Eqn(runtime_rules.ZERO_TANGENT, (("x", item),), (zero,), span))
                items.append(zero)
        return Pack(tuple(items), pack.kind)

    def _container(self, eqn) -> list:
        """`[a, b]` -> `[a_dot, zeros]`: the container op applied to the items' tangents."""
        key = _container_key(eqn.op)
        out = []
        inputs = []
        for name, atom in eqn.inputs:
            if name == key and isinstance(atom, Pack):
                atom = self._item_tangents(atom, eqn.span, out)
            elif name == key:
                atom = self.tangent(atom)
            inputs.append((name, atom))
        dtype = eqn.input("dtype")
        if dtype is None or isinstance(dtype, Const) and dtype.value is None:
            return out + [Eqn(eqn.op, tuple(inputs), (self.tangent(eqn.outputs[0]),), eqn.span)]
        made = self.namer.temp()  # np.array(x * 5, dtype=int): truncated, a constant (decided when it runs)
        return out + [Eqn(eqn.op, tuple(inputs), (made,), eqn.span),
                      Eqn(rules.lookup(tangent_written), (("value_dot", made), ("a", eqn.outputs[0])),
                          (self.tangent(eqn.outputs[0]),), eqn.span)]

    def _own(self, eqn, fn) -> list:
        """`y_dot = f_tangent((x, c), (x_dot, zeros))`: a function with its own JVP (custom_jvp, checkpoint)."""
        arguments = [atom for key, atom in eqn.inputs if eqn.op.form != "opaque" or key.startswith("_")]
        if len(arguments) != len(eqn.inputs):
            raise NoRuleError(f"{eqn.op.name}() is called with keyword arguments, which its JVP cannot take",
                              eqn.span, "pass its arguments by position")
        out = []
        tangents = self._item_tangents(Pack(tuple(arguments), "tuple"), eqn.span, out)
        inputs = (("primals", Pack(tuple(arguments), "tuple")), ("tangents", tangents))
        return out + [Eqn(_own_tangent_primitive(fn), inputs, (self.tangent(eqn.outputs[0]),),
                          eqn.span)]

    def _setitem(self, eqn) -> list:
        array = eqn.outputs[0]
        if array not in self.active:
            return []
        value = eqn.input("value")
        out = []
        value_dot = self.tangent(value) if self.has_tangent(value) else Const(0.0)
        if isinstance(value_dot, Var):  # (none into an int or bool array: NumPy truncates what it writes)
            written = self.namer.temp()
            out.append(Eqn(rules.lookup(tangent_written), (("value_dot", value_dot), ("a", array)), (written,),
                           eqn.span))
            value_dot = written
        array_dot = self.tangent(array)
        inputs = (("a", array_dot), ("index", eqn.input("index")), ("value", value_dot))
        return out + [Eqn(eqn.op, inputs, (array_dot,), eqn.span)]

    def _append(self, eqn) -> list:
        items = eqn.outputs[0]
        if items not in self.active:
            return []
        out = []
        value = eqn.input("value")
        if self.has_tangent(value):
            value_dot = self.tangent(value)
        elif items in self.tapes:
            value_dot = Const(None)  # restored into a value without a tangent: nothing reads it
        else:
            value_dot = self._item_tangents(Pack((value,), "list"), eqn.span, out).items[0]
        items_dot = self.tangent(items)
        return out + [Eqn(eqn.op, (("a", items_dot), ("value", value_dot)), (items_dot,), eqn.span)]

    def _pop(self, eqn) -> list:
        """`v = tape_pop(tape, v)` -> `v_dot = tape_pop(tape_dot, v_dot)`: the tangent tape pops in step."""
        receiver = eqn.inputs[0][1]
        if not self.has_tangent(receiver):
            return []
        outs = tuple(self.tangent(o) for o in eqn.outputs[:1] if o in self.active)  # not the list itself
        if eqn.op.fn is not tape_pop:
            return [Eqn(eqn.op, (("_0", self.tangent(receiver)),), outs, eqn.span)]
        like = self._tangent_atom(eqn.input("like"))
        return [Eqn(eqn.op, (("tape", self.tangent(receiver)), ("like", like)), outs, eqn.span)]


def _own_jvp(op):
    """The function whose own JVP gives `op`'s tangent: a `tapegen.custom_jvp`, or a checkpointed segment."""
    if op.form == "opaque" and isinstance(op.fn, custom_jvp) and op.fn.jvp is not None:
        return op.fn
    if op.form == "custom":  # a checkpointed segment's own tangent code, a custom_jvp's own JVP (its bwd is that
        key = next((key for key, prim in rules.PRIMITIVES.items() if prim is op), None)  # transposed), else the
        if isinstance(key, custom_jvp):  # transpose of the user's bwd
            return key
        return key if getattr(key, "checkpointed", None) is not None else op.custom
    return None


_OWN_TANGENTS: dict = {}


def _own_tangent_primitive(fn):
    """A primitive `<name>_tangent(primals, tangents)` computing `fn`'s tangent (rules/custom.py's
    `tangent_function`), callable by name."""
    if id(fn) not in _OWN_TANGENTS:
        base = getattr(fn, "__name__", "custom").replace("<lambda>", "segment")
        (name,) = rules.add_names({f"{base}_tangent": tangent_function(fn)})
        _OWN_TANGENTS[id(fn)] = (fn, Primitive(name=name, fn=None, params=("primals", "tangents"), defaults={},
                                               spelling=name, differentiable=False))
    return _OWN_TANGENTS[id(fn)][1]


_SHOWING = VIEW_OPS | {"assign", "iterated", "einsum", "astype", "list", "tuple", "make_list", "make_tuple",
                       "make_dict", "dict_copy", "with_item", "append", "concat", "plus"}  # results that may be (or
#                                                                  hold views of) their inputs


_NEW = {"sum", "mean", "prod", "max", "min", "amax", "amin", "var", "std", "dot", "matmul", "outer", "inner",
        "tensordot", "cumsum", "cumprod", "trace", "norm"}  # results NumPy always makes anew, tangents too


def _showing(body, written) -> set:
    """The vars whose value may be, or show, an array written in place (`t = X[1]` of `X[1] = v` later, in a loop
    too): the tangent of one shows that array's tangent, changed by the write; a tangent made of it must not be
    it (`old = t * 1.0` has `old_dot` the very `t_dot`, where NumPy's `old` is a new array)."""
    found, grown = set(written), True
    while grown:
        grown = False
        for stmt in walk(body):
            if isinstance(stmt, Eqn) and stmt.op.name in _SHOWING \
                    and any(v in found for _, atom in stmt.inputs for v in atom_vars(atom)):
                new = set(stmt.outputs) - found
                found |= new
                grown = grown or bool(new)
    return found


_JOINS = {"concat", "plus", "repeat_items",  # their tangent contributions are lists: add item by item; and
          "item_or"}                          # `d.get(k, default)`'s may be dicts or lists (`{"a": x}`)


def _is_array_expression(rule) -> bool:
    """An inlined rule whose value is not a tuple or list (so contributions add with `+`)."""
    return rule.inline is not None and not isinstance(rule.inline, (ast.Tuple, ast.List, ast.ListComp))


def _is_zero(rule) -> bool:
    """A JVP rule that is `return None`: the output does not change with this input (to first order)."""
    return isinstance(rule.inline, ast.Constant) and rule.inline.value is None


def _no_rule_message(prim, key) -> str:
    if prim.form == "custom":
        return f"{prim.name}() has a custom VJP (tapegen.custom_vjp), which forward mode cannot use"
    if prim.form == "opaque":
        return f"no derivative rule for {prim.name}(): a value carrying a tangent is passed to it{prim.note}"
    return f"no JVP rule for {prim.spelling or prim.name} (argument '{key}')"


__all__ = ["STRUCTURAL", "Tangent", "TangentSum", "forward", "verify_tangent"]


def verify_tangent(tangent: Tangent) -> Tangent:
    """Check every var is defined before it is read; return `tangent`, or raise InternalError (a tapegen bug)."""
    from ..verify import check_body
    program = tangent.primal
    defined = set(program.params) | set(program.free) | set(tangent.tangent_params)
    check_body(tangent.body, defined, f"jvp {program.name}", _Reassignable())
    return tangent


class _Reassignable(frozenset):
    """Mutable primal vars' tangents and in-place tangent updates reassign names: allow it."""

    def __contains__(self, item):
        return True

"""Activity analysis: which values carry a derivative from `wrt` to the outputs.

A value is *varying* if it depends on a `wrt` input through differentiable
primitives, and *useful* if a differentiated output depends on it. Only values
that are both (*active*) get cotangents; everything else costs nothing in the
backward pass. Active values flowing into a callable with no rule are reported
here, when the function is transformed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import NoRuleError
from ..frontend.lower_expr import MUTATOR_HINTS, MUTATORS
from ..ir import Const, Eqn, Guard, If, Loop, Program, Var, atom_vars, walk
from ..rules.shape import BOUND_METHOD
from .invariance import shift_cuts


@dataclass(frozen=True)
class Activity:
    varying: frozenset
    useful: frozenset
    cuts: frozenset = frozenset()  # (output, parameter): no cotangent flows there (invariance.py proves it zero)

    def active(self, var) -> bool:
        return isinstance(var, Var) and var in self.varying and var in self.useful

    def varying_var(self, var) -> bool:
        """A derivative reaches `var` from the inputs (it may or may not reach the output)."""
        return var in self.varying

    def needs_rule(self, eqn) -> list:
        """The parameters of `eqn` a cotangent must flow into."""
        if not eqn.op.differentiable or not any(self.active(v) for v in eqn.outputs):
            return []
        inert = getattr(eqn.op, "inert", ())
        return [key for key, atom in eqn.inputs
                if key not in inert and (eqn.outputs[0], key) not in self.cuts
                and any(self.active(v) for v in atom_vars(atom))]

    def flows_from(self, eqn) -> tuple:
        """The vars a cotangent of `eqn`'s outputs can reach: what it reads, less any cut parameter."""
        if not self.cuts or not eqn.outputs:
            return eqn.reads
        return tuple(v for key, atom in eqn.inputs if (eqn.outputs[0], key) not in self.cuts for v in atom_vars(atom))


class ItemFlow:
    """Which items of a list, tuple or dict carry a derivative, where the program fixes its items: built as
    a display (`a = [x, df]`), copied (`list(args)`, of a container no derivative reaches), with an item
    replaced by a constant key (`a[0] = x`).

    A constant index into one (`a[1]`, `*a` spread) then carries a derivative only if that item does, so
    `stats.t.cdf(*a)` with `a = [x, df]` needs no rule in `df`. Anything else that makes or changes a
    container (an append, an opaque call, two shapes meeting in a loop) leaves its items unknown: every
    item then varies with the whole. Flags only grow, so both fixed-point passes stay monotone.

    Flags are a tuple of bools (a list or tuple), a dict {key: bool} (a dict: its keys), `Partly` (items of
    unknown number, none varying but those it names), or UNKNOWN.
    """

    UNKNOWN = "unknown"
    _COPIES = {"list": "iterable", "tuple": "iterable", "dict_copy": "mapping", "assign": "x"}

    def __init__(self, program_body):
        self.flags: dict = {}
        self.made = {v for stmt in walk(program_body) if isinstance(stmt, Eqn) for v in stmt.outputs}

    def _of(self, atom, varies):
        if not isinstance(atom, Var):
            return self.UNKNOWN
        if atom not in self.made and not varies(atom):  # an argument or global no derivative reaches
            return _Partly()
        return self.flags.get(atom, self.UNKNOWN)

    def output_varies(self, eqn):
        """Whether `eqn`'s output varies, if its items decide it (a constant index into known items); else None."""
        if eqn.op.name != "getitem" or len(eqn.outputs) != 1 or not isinstance(eqn.input("index"), Const):
            return None
        flags, index = self.flags.get(eqn.input("a")), eqn.input("index").value
        if flags is None or flags == self.UNKNOWN:
            return None
        try:
            picked = flags[index]
        except (KeyError, IndexError, TypeError):
            return None
        return any(picked) if isinstance(picked, tuple) else bool(picked)

    def update(self, eqn, varies) -> bool:
        """Record the items of `eqn`'s outputs; True if anything changed."""
        name = eqn.op.name
        if name in ("make_list", "make_tuple"):
            new = tuple(any(varies(v) for v in atom_vars(item)) for item in eqn.input("items").items)
        elif name == "make_dict" and isinstance(eqn.input("keys"), Const):
            values = eqn.input("values").items
            new = {key: any(varies(v) for v in atom_vars(item)) for key, item in zip(eqn.input("keys").value, values)}
        elif name in self._COPIES:
            new = self._of(eqn.input(self._COPIES[name]), varies)
        elif name == "with_item" and isinstance(eqn.input("key"), Const):
            new = _replaced(self._of(eqn.input("a"), varies), eqn.input("key").value,
                            any(varies(v) for v in atom_vars(eqn.input("value"))))
        elif name == "getitem" and isinstance(eqn.input("index"), Const) and isinstance(eqn.input("index").value, slice) \
                and isinstance(self._of(eqn.input("a"), varies), tuple):
            new = self._of(eqn.input("a"), varies)[eqn.input("index").value]
        else:
            new = self.UNKNOWN
        changed = False
        for out in eqn.outputs:
            merged = _merged(self.flags.get(out), new)
            if merged != self.flags.get(out):
                self.flags[out] = merged
                changed = True
        return changed


class _Partly(dict):
    """Items of a container whose length the analysis does not know: False but for the keys held."""

    def __missing__(self, key):
        if isinstance(key, int) and key < 0:  # counted from an end the analysis does not know
            raise KeyError(key)
        return False


def _replaced(flags, key, flag):
    if isinstance(flags, tuple) and isinstance(key, int) and -len(flags) <= key < len(flags):
        return flags[:key % len(flags)] + (flag,) + flags[key % len(flags) + 1:]
    if isinstance(flags, dict) and not isinstance(key, slice) and not (isinstance(key, int) and key < 0
                                                                       and isinstance(flags, _Partly)):
        return type(flags)({**flags, key: flag})
    return ItemFlow.UNKNOWN


def _merged(old, new):
    """Two values one var may hold (a loop's passes): items that vary in either; unknown if shaped apart."""
    if old is None or old == new and type(old) is type(new):
        return new
    if isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new):
        return tuple(a or b for a, b in zip(old, new))
    if isinstance(old, _Partly) and isinstance(new, _Partly):
        return _Partly({k: old[k] or new[k] for k in old.keys() | new.keys()})
    if type(old) is dict and type(new) is dict and old.keys() == new.keys():
        return {k: old[k] or new[k] for k in old}
    return ItemFlow.UNKNOWN


def analyze(program: Program, wrt: tuple, outputs: tuple, known=None) -> Activity:
    """Activity of every var, for derivatives of `outputs` (atoms) with respect to `wrt` (vars).

    `known` maps vars to (shape, dtype) where shapes are known in advance (specialize.py)."""
    eqns = [s for s in walk(program.body) if isinstance(s, Eqn)]
    varying = set(wrt)
    holding = {}  # object -> the attributes derivatives were set into, while that alone makes it varying
    items = ItemFlow(program.body)
    changed = True
    while changed:  # loops carry values backwards in program order: iterate to a fixed point
        changed = False
        for eqn in eqns:
            changed |= items.update(eqn, varying.__contains__)
            if eqn.op.name == "tape_pop" and len(eqn.outputs) == 2:  # gradient code differentiated again
                # `v = tape_pop(tape, v)` restores the value `tape.append(v)` saved: it carries a derivative
                # only if v does (the tape mixes values that do with values that do not: lists of ints)
                value, rest = eqn.outputs
                tape_varies = any(v in varying for v in atom_vars(eqn.input("tape")))
                now = {rest} if tape_varies else set()
                if tape_varies and any(v in varying for v in atom_vars(eqn.input("like"))):
                    now.add(value)
                if not varying.issuperset(now):
                    varying.update(now)
                    changed = True
                continue
            decided = items.output_varies(eqn)
            if eqn.op.differentiable and (decided if decided is not None else any(v in varying for v in eqn.reads)) \
                    and not _other_attribute(eqn, holding):
                if any(v not in varying or v in holding for v in eqn.outputs):
                    varying.update(eqn.outputs)
                    for v in eqn.outputs:
                        holding.pop(v, None)  # varying as a whole
                    changed = True
            if getattr(eqn.op, "fn", None) is setattr and any(v in varying for v in eqn.reads[1:]) \
                    and isinstance(eqn.inputs[0][1], Var):
                # the object now holds a derivative: code reading it must have rules; reading this
                # attribute back carries it (another one, `self.act_fn` say, does not)
                obj, name = eqn.inputs[0][1], eqn.inputs[1][1]
                name = name.value if isinstance(name, Const) else None
                if obj not in varying:
                    varying.add(obj)
                    holding[obj] = {name}
                    changed = True
                elif obj in holding and name not in holding[obj]:
                    holding[obj].add(name)
                    changed = True
    flows = Activity(frozenset(), frozenset(), shift_cuts(program, known))
    useful = {v for atom in outputs for v in atom_vars(atom)}
    changed = True
    while changed:
        changed = False
        for eqn in reversed(eqns):
            reads = flows.flows_from(eqn)
            if any(v in useful for v in eqn.outputs) and not useful.issuperset(reads):
                useful.update(reads)
                changed = True
    activity = Activity(frozenset(varying), frozenset(useful), flows.cuts)
    _check_text_read_as_numbers(eqns, activity)
    for eqn in eqns:
        _check_rules(eqn, activity)
    check_kept(program.body, activity, outputs)
    _check_attributes(program.body, activity)
    return activity


def _other_attribute(eqn, holding) -> bool:
    """`obj.name` read from an object that is varying only because derivatives were set into other
    attributes of it (`layer.parameters["W"] = W` makes `layer` varying; `layer.act_fn` carries nothing)."""
    if eqn.op.name not in ("getattr", "attribute_or_none") or eqn.op is BOUND_METHOD \
            or not isinstance(eqn.inputs[1][1], Const):  # (a bound method reads every attribute of its object)
        return False
    held = holding.get(eqn.inputs[0][1])
    return held is not None and None not in held and eqn.inputs[1][1].value not in held


def _placed(body):
    """(eqn, the loops around it) for every equation in `body`, in program order."""
    return ((stmt, loops) for stmt, loops in _positions(body, ()) if isinstance(stmt, Eqn))


def _check_attributes(body, activity) -> None:
    """`obj.h = v` with a differentiated v is read back as v where the frontend can see the object; read
    through another way (an item of a list of objects, another name), the gradient would be lost: raise.
    A read before the first such `setattr` (and outside any loop around it) reads the value from before;
    so is a read on an object known to be another one (see `_distinct`)."""
    placed = [(eqn, position, loops) for position, (eqn, loops) in enumerate(_placed(body))]
    held = {}
    for eqn, position, loops in placed:
        if getattr(eqn.op, "fn", None) is setattr and any(v in activity.varying for v in eqn.reads[1:]):
            held.setdefault(eqn.inputs[1][1].value, []).append((eqn, position, set(loops)))
    if not held:
        return
    distinct = _distinct(eqn for eqn, _, _ in placed)
    for eqn, position, loops in placed:
        if eqn.op.name in ("getattr", "attribute_or_none") and isinstance(eqn.inputs[1][1], Const) \
                and eqn.inputs[1][1].value in held and any(v in activity.useful for v in eqn.outputs) \
                and any(v in activity.varying for v in eqn.reads):
            name, obj = eqn.inputs[1][1].value, eqn.inputs[0][1]
            setter = next((setter for setter, at, around in held[name] if (position > at or around & set(loops))
                           and frozenset((obj, setter.inputs[0][1])) not in distinct), None)
            if setter is not None:
                raise NoRuleError(
                    f"`.{name}` holds a differentiated value (set at {setter.span}), and is read here through a "
                    f"name tapegen cannot tie to that object: the gradient would be lost", eqn.span,
                    f"read it through the object it was set on, or pass the value along instead of storing it in "
                    f"`.{name}`")


def _distinct(eqns) -> set:
    """Pairs of vars holding different objects: two objects the function made (`object.__new__`), or two
    the frontend found different when transforming, and checks when the code runs (`identity_check`)."""
    made, pairs = [], set()
    for eqn in eqns:
        fn = getattr(eqn.op, "fn", None)
        if fn is object.__new__:
            made.extend(eqn.outputs)
        elif eqn.op.name == "identity_check" and isinstance(eqn.inputs[2][1], Const) and not eqn.inputs[2][1].value:
            pairs.add(frozenset((eqn.inputs[0][1], eqn.inputs[1][1])))
    pairs.update(frozenset((a, b)) for a in made for b in made if a != b)
    return pairs


# Opaque methods that keep what they are passed in the object they are called on
_KEEPING_METHODS = {".append", ".extend", ".insert", ".add", ".update", ".appendleft", ".extendleft", ".setdefault"}


def check_kept(body, activity, outputs) -> None:
    """A differentiated value passed to an opaque method (`buffer.push(h)`) may be kept in the object:
    if the object is used afterwards towards the output, its gradient would silently be lost. Raise.

    "Afterwards": later in program order, anywhere in a loop around the call (the next iteration), or returned
    (one of `outputs`, the program's).
    """
    returned = {v for atom in outputs for v in atom_vars(atom)}
    order = list(_positions(body, ()))
    taken_from = {}  # var -> the var it is an item, attribute or alias of: changing it in place changes that too
    containers = set()  # vars holding a list or dict the function built
    for eqn, _ in order:
        if isinstance(eqn, Eqn) and eqn.op.name in _TAKES and eqn.inputs and isinstance(eqn.inputs[0][1], Var):
            for out in eqn.outputs:
                taken_from.setdefault(out, eqn.inputs[0][1])
        if isinstance(eqn, Eqn) and (eqn.op.name in _BUILDS_CONTAINERS or eqn.op.name in ("assign", "append") and
                                     eqn.inputs and eqn.inputs[0][1] in containers):
            containers.update(eqn.outputs)
    for index, (eqn, loops) in enumerate(order):
        if isinstance(eqn, Eqn) and eqn.op.form == "opaque":
            _check_not_written(eqn, activity)
        if not (isinstance(eqn, Eqn) and eqn.op.form == "opaque" and getattr(eqn.op, "fn", None) not in _PURE
                and any(v in activity.varying for v in eqn.reads)):
            continue
        if eqn.op.spelling == "()" and eqn.op.fn is None:  # fns[i](h): a function tapegen could not tell may
            _check_not_changed(eqn, index, loops, order, activity, returned)  # change h in place (h *= h)
        # obj.m(v): obj may keep v; f(a, v) and np.add.at(a, i, v): v may be written into a (and into
        # what a was taken from: `self.cache["A"].append(h)` changes self.cache)
        holders = []
        receiver = eqn.inputs[0][1] if eqn.op.name in _KEEPING_METHODS and eqn.inputs and any(
            v in activity.varying for _, atom in eqn.inputs[1:] for v in atom_vars(atom)) else None  # (keeping one)
        while isinstance(receiver, Var) and receiver not in holders:  # xs.append(v) on a list argument: xs
            holders.append(receiver)  # keeps v (whether or not xs carries a derivative itself), and so does
            receiver = taken_from.get(receiver)  # what xs was taken from (xs[0].append(v) changes xs)
        for v in eqn.reads:
            while v not in activity.varying and v not in holders:
                holders.append(v)
                if v not in taken_from:
                    break
                v = taken_from[v]
        for v in eqn.reads if getattr(eqn.op, "fn", None) not in _PURE and not eqn.outputs else ():  # (called for
            #                  what it does, as a change in place is: a query's value is used, `is_duck(a)`)
            if v in containers and v in activity.varying and (v in returned or _used_after(v, eqn, index, loops,
                                                                                           order, activity)):
                raise NoRuleError(
                    f"`{v.name}`, a list or dict holding differentiated values, is passed to {eqn.op.name}(), which "
                    f"may change it in place (`bisect.insort(xs, v)`), and it is used afterwards: tapegen cannot "
                    f"follow such a change", eqn.span, "build the new list yourself (xs = sorted(xs + [v])), or "
                    "pass a copy: f(list(xs))")
        for holder in holders:
            if isinstance(holder, Var) and (holder in returned or _used_after(holder, eqn, index, loops, order,
                                                                              activity)):
                what = "what it is called on (or an argument)" if _TEMPORARY.fullmatch(holder.name) \
                    else f"`{holder.name}`"
                raise NoRuleError(
                    f"a differentiated value is passed to {eqn.op.name}(), which may keep it in (or write it into) "
                    f"{what}, and that is used afterwards: tapegen cannot follow a gradient through it", eqn.span,
                    "keep the value in a local variable (or a list the function builds) instead, or wrap it in "
                    "tapegen.stop_gradient if no gradient should flow there")


def _check_not_changed(eqn, index, loops, order, activity, returned) -> None:
    """A call of a function tapegen could not tell when transforming (`fns[i](h)`, `pick(k)(h)`), given a
    differentiated array that is used afterwards: the function may change the array in place (sklearn's
    `ACTIVATIONS[name](X)` does, by `np.tanh(X, out=X)`), and the derivative would then be that of the value
    before the change. Raise."""
    for _, atom in eqn.inputs[1:]:
        for v in atom_vars(atom):
            if v in activity.varying and (v in returned or _used_after(v, eqn, index, loops, order, activity)):
                raise NoRuleError(
                    f"`{v.name}` holds a differentiated value, is passed to {eqn.op.name}(), and is used "
                    f"afterwards{eqn.op.note}: that function may change it in place, which tapegen cannot follow",
                    eqn.span, eqn.op.hint or "call the function where tapegen knows which one it is: by name, or "
                                             "take it from a list or dict by a constant")


def _check_not_written(eqn, activity) -> None:
    """An opaque call known to change an argument in place (`np.random.shuffle(a)`, `rng.shuffle(a)`,
    `np.ndarray.fill(a, v)`, `f(..., out=a)` of a function without a rule) on a differentiated value: the
    derivative would be that of the value before the change. Raise."""
    fn, name = getattr(eqn.op, "fn", None), eqn.op.name
    written, hint = None, None
    if name.rpartition(".")[2] == "shuffle" and eqn.inputs:
        method_call = fn is None  # `rng.shuffle(a)`: the receiver comes first
        if len(eqn.inputs) > method_call:
            written = eqn.inputs[int(method_call)][1]
            hint = "permute a copy instead: a = a[rng.permutation(len(a))]"
    elif getattr(fn, "__objclass__", None) is np.ndarray and fn.__name__ in MUTATORS and eqn.inputs:
        written, hint = eqn.inputs[0][1], MUTATOR_HINTS.get(fn.__name__, "store a new array instead")  # (the
        #                                            method, called as a function: `np.ndarray.fill(a, v)`)
    elif name == ".at" and fn is None and len(eqn.inputs) > 1:  # np.multiply.at(a, i, v), np.add.at(h.a, i, v):
        written = eqn.inputs[1][1]  # a ufunc's `at` writes into its first argument (np.add.at(a, i, v) into a
        hint = ("np.add.at(a, i, v) into a name holding an array the function made is followed (a = h.a.copy(); "  # name
                "np.add.at(a, i, v); h.a = a); for another ufunc write the loop: for k, v in zip(i, vs): a[k] *= v")
    else:
        written = next((atom for key, atom in eqn.inputs if key == "out"), None)
        hint = "assign the result instead: a = f(...)"
    if isinstance(written, Var) and written in activity.varying:
        what = "the array passed to it" if _TEMPORARY.fullmatch(written.name) else f"`{written.name}`"
        raise NoRuleError(f"{name.lstrip('.')}() changes {what} in place, which tapegen cannot follow "
                          f"(the gradient would be that of the value before the change)", eqn.span, hint)


def _used_after(var, eqn, index, loops, order, activity) -> bool:
    for later, (other, other_loops) in enumerate(order):
        after = later > index or any(loop in other_loops for loop in loops)
        if after and other is not eqn and isinstance(other, Eqn) and var in other.reads \
                and any(v in activity.useful for v in other.outputs):
            return True
    return False


_TEMPORARY = re.compile(r"t\d+(_\d+)?")  # a name tapegen made up, which the user never saw

# Primitives making a list or dict (a new one, or one with an item added or replaced).
_BUILDS_CONTAINERS = {"make_list", "make_dict", "list", "dict_copy", "with_item", "concat", "updated", "dict_without"}

# Primitives whose output is part of their first input (an item, an attribute, a view, the value itself).
_TAKES = {"getitem", "getattr", "assign", "attribute_or_none"}

# Callables that keep nothing they are given (printing, formatting, questions about a value).
_PURE = {print, len, isinstance, repr, str, type, id, hasattr, callable, str.format, format,
         setattr}  # setattr: the frontend reads `obj.h` back as the value it set


def _positions(body, loops):
    """(statement, the loops around it) for every statement, in program order."""
    from ..ir import Guard, If, Loop
    for stmt in body:
        yield stmt, loops
        if isinstance(stmt, If):
            yield from _positions(stmt.then, loops)
            yield from _positions(stmt.orelse, loops)
        elif isinstance(stmt, Loop):
            yield from _positions(stmt.test_body + stmt.body, loops + (id(stmt),))
        elif isinstance(stmt, Guard):
            yield from _positions(stmt.body, loops)


_TEXT = frozenset({"formatted", "str", "repr", "format"})  # text of values: no derivative (nondiff)
_PARSING = frozenset({"float", "complex", "float64", "float32", "float16", "longdouble", "complex128", "complex64",
                      "array", "asarray", "asanyarray", "fromstring", "eval", "literal_eval", "Decimal", "Fraction"})


def _check_text_read_as_numbers(eqns, activity: Activity) -> None:
    """Text made of a differentiated value (`str(x)`, `f"{x}"`) has no derivative, which is right for what text
    is used for (its length, a message, a key), but `float(str(x))` is `x` again: a number read back out of such
    text (and out of text made from it) would get no derivative where it has one. Raise."""
    text = set()
    changed = True
    while changed:
        changed = False
        for eqn in eqns:
            source = eqn.op.name in _TEXT and any(v in activity.varying for v in eqn.reads)
            if (source or (eqn.op.differentiable or eqn.op.form == "opaque") and any(v in text for v in eqn.reads)) \
                    and not text.issuperset(eqn.outputs):
                text.update(eqn.outputs)
                changed = True
    for eqn in eqns:
        if eqn.op.name in _PARSING and any(v in text for v in eqn.reads) \
                and any(v in activity.useful for v in eqn.outputs):
            raise NoRuleError(f"{eqn.op.spelling or eqn.op.name}() reads a number back out of text made of a "
                              f"differentiated value (`str(x)`, an f-string): text carries no derivative, so tapegen "
                              f"cannot follow it", eqn.span,
                              "use the value itself (np.round(x, 3) to round it), or wrap it in "
                              "tapegen.stop_gradient if no gradient should flow here")


def _check_rules(eqn, activity: Activity) -> None:
    _check_callables(eqn, activity)
    for key in activity.needs_rule(eqn):
        prim = eqn.op
        if key not in prim.vjps:
            raise NoRuleError(_no_rule_message(prim, key), eqn.span,
                              getattr(prim, "hint", "") or
                              "register one with tapegen.register_vjp, or wrap the value in "
                              "tapegen.stop_gradient if no gradient should flow here; "
                              "see `python -m tapegen rules` for what is supported")


def _check_callables(eqn, activity: Activity) -> None:
    """A function passed to a primitive that calls it (odeint's `func`) may hold a differentiated value (a bound
    method of an object holding it): the rules differentiate the function in its own arguments only, so the
    gradient into what it holds would be silently zero. Raise."""
    for key, atom in eqn.inputs:
        if key in eqn.op.callables and any(v in activity.varying for v in atom_vars(atom)) \
                and any(v in activity.useful for v in eqn.outputs):
            raise NoRuleError(
                f"the function passed as `{key}` to {eqn.op.spelling or eqn.op.name} holds a differentiated value "
                f"(an attribute of its object, or a variable it closes over): tapegen cannot follow a gradient "
                f"into it", eqn.span, "pass the value through the call's `args=` instead, and read it there as a "
                                      "parameter of the function")


def _no_rule_message(prim, key) -> str:
    if prim.form == "opaque":
        return f"no gradient rule for {prim.name}(): a differentiated value is passed to it{prim.note}"
    if prim.name == "getattr":
        return "no gradient through attribute access on a differentiated value"
    return f"no gradient rule for {prim.spelling or prim.name} (argument '{key}')"

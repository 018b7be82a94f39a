"""Lowering a user function's AST to a Wengert list (`Program`).

Each Python expression becomes one equation per primitive, in evaluation
order; `h = np.tanh(x @ W + b)` becomes `t1 = x @ W; t2 = t1 + b; h = tanh(t2)`.
Callees are resolved to real objects here (`np.tanh` -> `numpy.tanh`, `x.sum()`
-> `numpy.sum`). Anything tapegen cannot follow is reported here, at
transform time, with the user's line.
"""
from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import importlib
import importlib.util
import inspect
import operator
import threading
import types
import weakref

import numpy as np

from .. import rules
from ..errors import UnsupportedSyntaxError
from ..ir import IN_PLACE, VIEW_OPS, Const, Eqn, If, Pack, Program, Var
from ..rules.language import assign as assign_primitive
from ..rules.language import (CONTAINER_OUTPUTS, changed_with, check_assertion, check_has_key, check_unpack,
                               copy_array, dict_without, in_place_result, make_dict, make_list, make_tuple, not_shared,
                               number_item, region_not_shared, raise_error,
                               same_noneness_as_transformed, same_object, same_shape_as_transformed,
                               same_value_as_transformed,
                               set_module_name, writable_argument)
from ..rules.shape import attribute_or_none
from ..rules.table import Primitive
from .defaults import rewrite_defaultdicts
from .inline import (Calls, Choice, KnownItems, LocalFunction, LocalToken, Recarry, StaticValue, Unsettled,
                     lowered_until_settled, user_function, users_class)
from .lower_expr import _HINTS, BINOPS, OPERATOR_METHODS, _as_if_statement, _located, WARNING_CONTEXTS, Expressions, Frozen, Spread, _describe, _function_like, _holds, _users_class_object, _hashable, _literal_constant, _numbers_written, _opaque
from .resolve import MISSING, library_object
from .lower_flow import ControlFlow, _assigned_names, _written_through_target
from .names import Namer
from .normalize import _located as _located_where_unset, normalize
from .resolve import Scope, all_identifiers, code_of, local_names, marker, native
from .source import FunctionSource


# Context managers whose entry and exit change nothing the block reads (held as objects: `with LOCK:`)
_SAFE_MANAGER_TYPES = (type(threading.Lock()), type(threading.RLock()))

# Other names NumPy accepts for a parameter (prim name -> {keyword: parameter})
_KEYWORD_ALIASES = {"clip": {"min": "a_min", "max": "a_max"}}

# Primitives that take an object of the user's without reading it as a whole: its attributes are read and
# set one by one (getattr, setattr, checks of what the code was made for), it is put into containers
_OBJECT_SAFE = frozenset({"getattr", "append", "with_item", "assign", "make_list", "make_tuple", "make_dict",
                          "set_in_item", "attribute_as_transformed", "has_attribute_as_transformed",
                          "attribute_or_none", "identity_check", "insert"})
# Functions called as they are that read no value from an object passed to them (or no derivative)
_READS_NO_VALUES = frozenset({print, repr, str, format, isinstance, issubclass, type, id, hash, hasattr, callable,
                              setattr, object.__new__})


_PLAIN_HINT = "keep the arrays in plain attributes (set in __init__, read as obj.name), or use a method or @property"


def _frozen_dataclass_method(cls, method) -> bool:
    """A frozen dataclass's own `__setattr__`/`__delattr__` (they raise; its `__init__` sets fields as usual)."""
    params = getattr(cls, "__dataclass_params__", None)
    return dataclasses.is_dataclass(cls) and params is not None and params.frozen \
        and getattr(method, "__qualname__", "").endswith(("__setattr__", "__delattr__"))


_PLAIN_DESCRIPTORS = (types.FunctionType, staticmethod, classmethod, property, types.MemberDescriptorType,
                      types.GetSetDescriptorType, types.BuiltinFunctionType, types.WrapperDescriptorType,
                      types.MethodDescriptorType, type)


def _descriptor(cls, attr):
    """What `cls.attr` is in words if it is a descriptor tapegen does not follow (a cached_property, a user's
    `__get__`), else None."""
    for klass in cls.__mro__[:-1]:
        if attr in vars(klass):
            held = vars(klass)[attr]
            if isinstance(held, _PLAIN_DESCRIPTORS) or not hasattr(type(held), "__get__"):
                return None
            return f"{type(held).__name__} (a descriptor)"
    return None


def _protocol(prim) -> str:
    """In words, how `prim` reads an object it is given."""
    special = {"getitem": "its `__getitem__`", "iterated": "its `__iter__`", "asarray": "its `__array__`",
               "array": "its `__array__`", "abs": "its `__abs__`", "list": "its `__iter__`",
               "tuple": "its `__iter__`", "reversed": "its `__reversed__`"}
    return special.get(prim.name, f"`{prim.name}`")


def lower(source: FunctionSource, fn, reserved=frozenset(), receiver=None, statics=()) -> Program:
    """Lower the parsed function `source` (of live function `fn`) to a Program.

    `receiver`: for a bound method, the class of `self`, so `self.helper(x)` can be inlined; or the
    object itself (a pipeline.Receiver), whose attributes are then known as a module's objects' are.
    `statics`: (parameter index, function) pairs: parameters this variant is made for a function
    value of (`nonlinearity=np.tanh`): calls through them are resolved as if spelled out.

    Raises:
        UnsupportedSyntaxError: syntax tapegen cannot differentiate, with the user's line.
    """
    obj = getattr(receiver, "obj", None)  # pipeline.Receiver: the object itself, known
    if obj is not None:
        receiver = receiver.cls

    def make(carried):
        lowerer = _Lowerer(source, fn, reserved)
        lowerer.receiver = receiver
        lowerer.receiver_object = obj
        lowerer.statics = dict(statics)
        lowerer.carried = carried
        lowerer.root_scope = lowerer.scope
        return lowerer
    program = lowered_until_settled(make)
    if isinstance(fn, types.FunctionType):  # its own code binding: the caches keyed by it do not keep it alive
        program = _weakly_bound(program, fn)
    return program if obj is None else _weakly_bound(program, obj)


def _read_before_set(loop, name) -> bool:
    """Whether a loop's body may read `name` before a pass sets it: a value carried from a pass before
    (`prev`), or set on some passes only, although nothing set it before the loop. Not so for the loop's
    target, nor for a name the body sets first thing, unconditionally (`h = ...` at its top level before any
    read of it)."""
    if isinstance(loop, ast.For) and any(isinstance(t, ast.Name) and t.id == name for t in ast.walk(loop.target)):
        return False  # the loop's target: set as each pass starts
    reads = [(n.lineno, n.col_offset) for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == name
             and isinstance(n.ctx, ast.Load)]
    if not reads:
        return False
    first_set = next(((s.lineno, s.col_offset) for s in loop.body if isinstance(s, ast.Assign)
                      and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)
                      and not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(s.value))), None)
    return first_set is None or min(reads) < first_set


def _weakly_bound(program, obj):
    """`program` checking the object it was made for through a weak proxy: the code kept for it (in caches
    keyed weakly by it) does not keep it alive."""
    try:
        proxy = weakref.proxy(obj)
    except TypeError:  # no weak references to it: held
        return program
    bindings = tuple((kind, proxy if holder is obj else holder, key, value)
                     for kind, holder, key, value in program.bindings)
    return dataclasses.replace(program, bindings=bindings)


# What the transform knows of a var's value (the items of a dict, the length of a list, the class of an
# object): true of a var a loop or branch assigns only if true of every value it may hold there.
FACTS = ("constant_items", "lengths", "dict_keys", "types", "item_types", "live", "containers")
_UNKNOWN = object()


class _Construct:
    """The facts known of the vars a branch or loop assigns, kept only where every path agrees.

    An `if`'s else branch starts from what was known before the `if`, not from what its then branch
    left; after the construct, a var keeps a fact only if every branch (a loop: every pass count)
    leaves the same. A loop whose body changes a fact its top may have read is lowered again with the
    fact forgotten on entry (`forget`), since the body's second pass starts from its first's end.
    """

    def __init__(self, lowerer, node, vars_unbound, known=frozenset()):
        self.lowerer, self.node = lowerer, node
        self.number = lowerer.construct_number
        self.unbound = {var for var, is_unbound in vars_unbound.items() if is_unbound}
        self.entry = {var: self.facts(var) for var in vars_unbound}
        self.entry_fresh = {var for var in vars_unbound if var in lowerer.fresh}
        self.entry_nones = {var for var in vars_unbound if var in lowerer.none_vars}
        self.ends_nones = []  # each branch's vars holding None at its end: no say in the facts joined after it
        self.kinds_bound = {}  # var -> the kinds of container ("list", None for None, ...) bound to it inside
        self.entry_iterators = dict(lowerer.iterators)  # (a generator read in one branch is unread in the other)
        self.iterators_read = set()
        self.ends = []
        self.ends_fresh = []  # each branch's vars owning their memory at its end (`fresh`): after it, those of all
        self.entry_mixed = {}  # var -> the classes of object it may hold on entry (set by `sharing`)
        self.ends_mixed = []
        self.rebound = set()  # vars bound to a new value in this pass so far
        self.bound_here = set()  # ... in this branch so far
        self.ends_bound = []  # each branch's `bound_here`
        self.early_writes = {}  # var -> "+=", "[]=" or "append": changed in place while holding the last pass's value
        # Names it sets to a function or object the transform must know (`fs = (np.tanh, np.sin)` in a
        # loop body): bound in the env as they are set, each pass or branch on its own, never shared.
        self.known = known
        self.known_entry = {name: lowerer.env.get(name, _UNKNOWN) for name in known}
        self.known_ends = []
        self.tokens = {}  # name -> the var holding its value when the code runs, for a call dispatched on it
        self.top = {}  # name -> the Choice a loop pass starts with (the entry's function, or one a pass set)
        if isinstance(node, (ast.For, ast.While)):  # a pass reading it before setting it reads the last pass's
            for name in known:
                lowerer.env[name] = Unsettled(
                    f"`{name}` is read before this pass of the loop (line {node.lineno}) sets it, so it holds "
                    f"the function or object the last pass set, which tapegen must know when it transforms "
                    f"the function", f"set `{name}` before reading it in the loop body, or once before the loop",
                    {self.number: {(name, "dispatch")}})

    def facts(self, var):
        return tuple(getattr(self.lowerer, tracker).get(var, _UNKNOWN) for tracker in FACTS)

    def set_facts(self, var, facts):
        self.lowerer.mixed.pop(var, None)
        for tracker, fact in zip(FACTS, facts):
            if fact is _UNKNOWN:
                getattr(self.lowerer, tracker).pop(var, None)
            else:
                getattr(self.lowerer, tracker)[var] = fact

    def forget(self, var, trackers=FACTS):
        cls = self.lowerer.types.get(var) if "types" in trackers else None
        self.set_facts(var, tuple(_UNKNOWN if tracker in trackers else fact
                                  for tracker, fact in zip(FACTS, self.facts(var))))
        if cls is not None:
            self.lowerer.mixed[var] = {cls}
        if var in self.entry:
            self.entry[var] = self.facts(var)

    def branch_done(self):
        """Between an `if`'s branches: the else branch starts from the facts before the `if`."""
        self.ends.append({var: self.facts(var) for var in self.entry})
        self.ends_mixed.append(self.classes_now())
        self.ends_fresh.append({var for var in self.entry if var in self.lowerer.fresh})
        self.ends_nones.append({var for var in self.entry if var in self.lowerer.none_vars})
        self.ends_bound.append(self.bound_here)
        self.bound_here = set()
        iterators = self.lowerer.iterators
        self.iterators_read |= {var for var, made_in in iterators.items() if made_in is None}
        iterators.update({var: made_in for var, made_in in self.entry_iterators.items() if var in iterators})
        for var, facts in self.entry.items():
            self.set_facts(var, facts)
            if var in self.entry_fresh:
                self.lowerer.fresh.add(var)
            else:
                self.lowerer.fresh.discard(var)
            if var in self.entry_mixed:
                self.lowerer.mixed[var] = set(self.entry_mixed[var])
            (self.lowerer.none_vars.add if var in self.entry_nones else self.lowerer.none_vars.discard)(var)
        self.known_ends.append({name: self.lowerer.env.get(name, _UNKNOWN) for name in self.known})
        for name, value in self.known_entry.items():
            self._bind(name, value)

    def classes_now(self) -> dict:
        """var -> the classes of object it may hold here, where the transform knows them."""
        lowerer, at = self.lowerer, FACTS.index("types")
        return {var: {self.facts(var)[at]} - {_UNKNOWN} or set(lowerer.mixed.get(var, ())) for var in self.entry}

    def _bind(self, name, value):
        if value is _UNKNOWN:
            self.lowerer.env.pop(name, None)
        else:
            self.lowerer.env[name] = value

    def settle_known(self):
        """After the construct, a name it set to a function or object holds it if every path leaves the same
        one (a loop: also no pass at all); else it holds an Unsettled value, whose reading is refused."""
        ends = self.known_ends + [{name: self.lowerer.env.get(name, _UNKNOWN) for name in self.known}]
        if not self.known_ends:  # a loop: it may run no pass
            ends.append(self.known_entry)
        what = "loop" if isinstance(self.node, (ast.For, ast.While)) else "`if`"
        for name, top in self.top.items():  # a pass started from the functions the last one may have left
            self._check_top(name, top, ends[0][name])
        for name in self.known:
            values = [end[name] for end in ends]
            merged = _same_known(values)
            candidates = _candidates(values) if merged is None else None
            if candidates is not None and name in self.tokens:  # called later: one branch per candidate
                merged = Choice(candidates, self.tokens[name])
            pending = [value for value in values if isinstance(value, Unsettled) and value.keys]
            if merged is None and pending and _candidates([value for value in values if value not in pending]):
                keys = {self.number: {(name, "dispatch")}}  # a loop's pass start, a Choice once it is one too
                for value in pending:
                    for number, more in value.keys.items():
                        keys.setdefault(number, set()).update(more)
                merged = Unsettled(pending[0].why, pending[0].hint, keys)
            self._bind(name, merged if merged is not None else Unsettled(
                f"`{name}` holds a function or object (which tapegen must know when it transforms the function) "
                f"on some path through the {what} at line {self.node.lineno}, and which value it holds after the "
                f"{what} depends on the path taken", f"use `{name}` inside the {what}, or give it one value "
                                                      f"before the {what}",
                {self.number: {(name, "dispatch")}} if candidates is not None else None))

    def _check_top(self, name, top, end):
        """A loop body read `name` as one of `top`'s candidates: the function its pass leaves must be one (else
        it is lowered again with those it may leave added, when they are functions known now)."""
        if isinstance(end, Unsettled) and end.keys:  # a branch in the body leaves one function or another
            raise Recarry(end.keys)
        left = _candidates([end])
        if left is not None and all(any(_same_candidate(one, other) for other in top.candidates) for one in left):
            return
        lowerer = self.lowerer
        if left is not None and all(isinstance(one, StaticValue) or one.lowerer is lowerer and one.depth ==
                                    len(lowerer.comprehensions) for one in left):  # a lambda or def of its own
            raise Recarry({("functions", self.number): {(name, one.obj if isinstance(one, StaticValue) else
                                                         ("local", one.node.lineno, one.node.col_offset))
                                                        for one in left}})
        raise self.lowerer.unsupported(self.node, f"`{name}` is read in this loop as the function a pass before set, "
                                                  f"and a pass may leave it holding a value that is not a function "
                                                  f"tapegen knows when it transforms the function (an array, say)",
                                       f"set `{name}` before reading it in the loop body, or keep the other value "
                                       f"under another name")

    def _forgotten(self, var, before, end, changed):
        """Recarry keys for a loop whose body changes facts known of `var` before it: lowered again with those
        facts forgotten on entry, except the class of its items where one class holds for every pass (a
        list empty before the loop, objects of one class appended in it); on a second change, that too."""
        number = self.lowerer.construct_number
        keys = {number: {(var.name, "~" + ",".join(changed))}}
        classes = {fact for fact in (before[FACTS.index("types")], end[FACTS.index("types")]) if fact is not _UNKNOWN}
        if "types" in changed:  # the classes of object a pass may start with: its methods dispatch on them
            keys[("classes", number)] = {(var.name, cls) for cls in classes}
        at = FACTS.index("item_types")
        if any(name == var.name and how.startswith("~") for name, how in self.lowerer.carried.get(number, ())):
            keys[("items", number)] = {(var.name, None)}
        elif before[at] is not _UNKNOWN and end[at] is not _UNKNOWN \
                and _joined_class(before[at], end[at]) not in (None, "empty"):
            keys[("items", number)] = {(var.name, _joined_class(before[at], end[at]))}
        return keys

    def close(self):
        is_loop = not self.ends
        self.settle_known()
        self.ends.append({var: self.facts(var) for var in self.entry})
        self.ends_mixed.append(self.classes_now())
        lowerer = self.lowerer
        ends_fresh = self.ends_fresh + [{var for var in self.entry if var in lowerer.fresh}]
        ends_bound = self.ends_bound + [self.bound_here]
        lowerer.iterators.update({var: None for var in self.iterators_read})  # read on some path: read
        for var in self.entry:  # `b = np.ascontiguousarray(a)` on one path, `b = np.zeros(4)` on the other: b may
            if not all(var in end or var in self.unbound and var not in bound  # be `a`, so not its own memory (a
                       for end, bound in zip(ends_fresh, ends_bound)) or is_loop and var not in self.unbound \
                    and var not in self.entry_fresh:  # loop may run no pass; a path leaving it unset is no
                lowerer.fresh.discard(var)  # such path: `if y is None: return x` before `dx = x.copy()`)
            elif not is_loop and any(var in end for end in ends_fresh):  # its own on every path setting it (the
                lowerer.fresh.add(var)  # else branch starts from the entry's, where an `if` first sets it)
        for var, how in self.early_writes.items():  # changed in place before the pass rebinds it, and kept
            if is_loop and how == "item" and (lowerer.held_in.get(var) == "a list or dict" or var in lowerer.item_origin):
                raise lowerer.unsupported(self.node, f"an item of `{var.name}` is set in this loop while it holds the "
                                                     f"list or dict of the pass before, which a list or dict holds "
                                                     f"too (kept there, or read out of it): Python changes it there "
                                                     f"as well, which tapegen does not follow",
                                          f"make a new one each pass before setting its items (`{var.name} = "
                                          f"dict({var.name})`), or set the item through the list or dict holding it")
            if is_loop and how == "[]=" and lowerer.held_in.get(var) == "a list or dict":
                raise lowerer.unsupported(self.node, f"`{var}` is written into in this loop and kept in "
                                                     f"{lowerer.held_in[var]}: each pass would change the same array",
                                          f"make a new array each pass (`{var} = np.zeros(...)`), or keep a copy")
            if is_loop and how == "append" and lowerer.kept_from_pass_to_pass(var):
                raise lowerer.unsupported(self.node, f"the list `{var}` is appended to in this loop and kept in another "
                                                     f"list, tuple or dict: each pass would change the list kept "
                                                     f"there too, which tapegen cannot follow",
                                          f"start a new list each pass (`{var} = []`) after keeping it")
            if is_loop and how == "+=" and var in lowerer.held_in and \
                    (var.name, "+=") not in lowerer.carried.get(lowerer.construct_number, ()):
                raise Recarry({lowerer.construct_number: {(var.name, "+=")}})  # checked when it runs
            others = {(var.name, other) for other in lowerer.names_maybe_holding(var)} if is_loop and how != "append" \
                else ()
            if set(others) - lowerer.carried.get(("aliases", lowerer.construct_number), set()):
                raise Recarry({("aliases", lowerer.construct_number): others})  # (`prev = vel` later in the pass)
        ends_nones = self.ends_nones + [{var for var in self.entry if var in lowerer.none_vars}]
        for var, before in self.entry.items():
            ends = [end[var] for end in self.ends]
            assumed = self.entry_mixed.get(var)
            if is_loop and assumed is not None and self.ends_mixed[-1][var] - assumed:  # a class the top missed
                raise Recarry({("classes", self.number): {(var.name, cls) for cls in self.ends_mixed[-1][var]}})
            kinds = self.kinds_bound.get(var, set()) - {None}
            if is_loop and var in self.entry_nones and len(kinds) == 1 and kinds <= {"list", "dict"} and \
                    before[FACTS.index("containers")] is _UNKNOWN and (var.name, next(iter(kinds))) not in \
                    lowerer.carried.get(("kinds", self.number), ()) and not lowerer.generated_code():
                # `self.m = None` before the loop, `self.m = [...]` in it: lowered again knowing it is a list
                # (once: not where a pass changes the kind again; not in gradient code, which writes no items
                # of the lists it makes so, and would be lowered again for nothing)
                raise Recarry({("kinds", self.number): {(var.name, kinds.pop())}})
            if is_loop and var not in self.unbound:
                changed = [tracker for tracker, end, start in zip(FACTS, ends[0], before)
                           if start is not _UNKNOWN and not _same(end, start)]
                if changed:  # a fact the body read at its top, changed by its end: lowered again without it
                    raise Recarry(self._forgotten(var, before, ends[0], changed))
                ends.append(before)  # no pass at all
            nones = [var in held for held in ends_nones] + [var in self.entry_nones] * (len(ends) - len(ends_nones))
            self.set_facts(var, _joined_facts(ends, nones))
            (lowerer.none_vars.add if all(nones) else lowerer.none_vars.discard)(var)
            if any(nones) and not all(nones) or var in lowerer.maybe_none:
                lowerer.maybe_none.add(var)
            classes = ({end[FACTS.index("types")] for end in ends} - {_UNKNOWN}).union(
                assumed or (), *(end[var] for end in self.ends_mixed))
            if classes and var not in lowerer.types:  # an object of one class or another: a call of its
                lowerer.mixed[var] = classes  # method dispatches on its class


_ELEMENTWISE_OPERATORS = (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow)


def _joined_facts(ends, nones):
    """The facts of a var after a construct: each kept where every path agrees on it. A path leaving the var
    None has no say in the kind of container it is when not None (`m = None`, then `if c: m = [x]`: a list,
    or None, where reading an item raises as Python's does); the var is then in `maybe_none`."""
    says = [end for end, is_none in zip(ends, nones) if not is_none] or ends
    kinds = (FACTS.index("containers"), FACTS.index("item_types"))
    return tuple(fact if all(_same(end[k], fact) for end in (says if k in kinds else ends)) else _UNKNOWN
                 for k, fact in enumerate(says[0] if says is not ends else ends[0]))


def _function_order(carried):
    if isinstance(carried, tuple):
        return ("", f"{carried[1]:09d}:{carried[2]:06d}")
    return (getattr(carried, "__module__", None) or "", getattr(carried, "__qualname__", None) or repr(carried))


def _same_known(values):
    """The one value every path leaves a name holding (a function, its atom kept only if one for all), or None."""
    first = values[0]
    if all(value is first for value in values):
        return first
    if all(isinstance(value, StaticValue) and value.obj is first.obj for value in values):
        return StaticValue(first.obj, first.atom if all(value.atom == first.atom for value in values) else None)
    return None


def _candidates(values):
    """The functions a name may hold after a construct, each once (a Choice's spread out), or None if one of
    them is not a function known now (an object, a list of functions) or none is. A path leaving it unset or
    None adds no candidate: a call there runs into the dispatch's last branch, which raises."""
    found = []
    for value in values:
        for one in value.candidates if isinstance(value, Choice) else (value,):
            if one is _UNKNOWN or isinstance(one, Const) and one.value is None:
                continue
            if not isinstance(one, (StaticValue, LocalFunction)):
                return None
            if not any(_same_candidate(one, other) for other in found):
                found.append(one)
    return tuple(found) or None


def _same_candidate(one, other) -> bool:
    if isinstance(one, LocalFunction) and isinstance(other, LocalFunction):  # one lambda or def, made twice
        return one.node is other.node and one.lowerer is other.lowerer and one.depth == other.depth
    return one is other or isinstance(one, StaticValue) and isinstance(other, StaticValue) and one.obj is other.obj


_KNOWN_KINDS = (StaticValue, LocalFunction, KnownItems, Frozen, Unsettled, Choice)  # what a name may hold besides an atom


def _item_classes(entries) -> dict:
    classes: dict = {}
    for base, cls in entries:
        classes.setdefault(base, set()).add(cls)
    return classes


def _joined_class(held, added):
    """The class of every item of a list holding items of class `held` (or "empty") and of class `added`."""
    if held == "empty" or held == added:
        return added
    return held if added == "empty" else None


def _same(a, b) -> bool:
    try:
        return a is b or bool(a == b)
    except Exception:  # values whose == is an array, say
        return False


class _Lowerer(Expressions, ControlFlow, Calls):
    def __init__(self, source: FunctionSource, fn, reserved, namer=None):
        self.source = source
        identifiers = all_identifiers(source.node)
        self.node = normalize(source.node, source, identifiers, Scope(fn, local_names(source.node)).static)
        self.scope = Scope(fn, local_names(self.node))
        _GettersAsLambdas(self.scope, identifiers).visit(self.node)
        rewrite_defaultdicts(self.node, self.scope, identifiers)
        self.bindings: list = []  # what the scopes read functions, classes and objects from (Program.bindings)
        self.scope.record = self.bindings
        self.namer = namer or Namer(identifiers, reserved)
        self.namer.identifiers |= identifiers | all_identifiers(self.node)
        self.fn = fn
        self.env: dict = {}
        self.comprehensions: list = []
        self.blocks: list = [[]]
        self.free: dict = {}
        self.free_sources: dict = {}  # free var name -> (function whose scope defines it, name there)
        self.fresh: set = set()  # vars that own their memory (not a parameter, not a view)
        self.views: dict = {}    # view var -> the var whose memory it shows
        self.view_ops: dict = {}  # view var -> (the name of the primitive that made it, its `index` or None)
        self.view_made: dict = {}  # view var -> (that primitive, its inputs, its number of outputs): made again
        self.view_block: dict = {}  # view var -> the block it was made in, and var -> how it was made (None where
        self.made_as: dict = {}  # two ways): a view made in a branch or loop that has ended may be another (the other
        #                          branch's), not made again after a write unless made one way only
        #                            after a write into its array (`refresh_views`)
        self.refreshing: set = set()  # views made again after the write being lowered (not refused for it)
        self.unset_names: dict = {}  # a name's var in a construct before the construct sets it: the construct
        self.written_back: set = set()  # a view's items read to put a write through it back (write_back_view)
        self.positions_of: dict = {}  # `where` of `where, pick = view_positions(base, view)` -> view
        self.aliases: dict = {}  # var -> the vars it was assigned from (`b = a` in a loop or branch): when the
        #                          code runs, it is the same array as one of them
        self.containers: dict = {}  # var -> "list", "tuple" or "dict": a container built here
        self.maybe_absent: set = set()  # (object, attribute) carried through a construct from maybe not set
        self.none_vars: set = set()  # vars holding None, set here (`m = None`): a branch or loop joining one with a
        #                          list keeps the list's kind (`if m is None: m = [...]`, then `m[0] = ...`)
        self.maybe_none: set = set()  # ... such vars after the join: `containers` says their kind, not that
        #                               they are not None
        self.holders: dict = {}  # a container held inside another (changing one in place changes both) -> {(the
        #                          container holding it, whether it keeps what it is given)}
        self.taken_out: dict = {}  # an item read out of a tuple built here -> the tuple
        self.maybe_lists: set = set()  # vars that may hold a list or tuple when the code runs (_track_lists_of_lists)
        self.displays: dict = {}  # a list displayed of names, passed to a helper -> the names (`sgd([w, b], ...)`)
        self.displays_changed: set = set()  # such lists a helper changed otherwise than an item in place
        self.live_written: dict = {}  # (module's object, attribute) -> (text, node) of a write of a derivative into it
        self.live_items: dict = {}  # a list or dict var written into -> ((module's object, attribute), its own var)
        self.attributes: dict = {}  # (object atom, name) -> (value, block): `self.h = ...` read back later
        self.attributes_written_through = None  # (name, node, [(object atom, attribute)]): write_through_attributes
        self.stale_attributes: dict = {}  # (object atom, name) -> (name, node): its list or dict was changed
        #                                   through another name (`C = self.cache; C[k] = v`), not yet set again
        self.types: dict = {}       # var -> the user class it is an instance of (`layer = Layer(W)`)
        self.live: dict = {}        # var -> the object of the user's it holds, read from the module
        self.constant_items: dict = {}  # dict var -> {key: Const}: its items that are constants
        self.item_types: dict = {}  # list or tuple var -> the user class of all its items
        self.item_vars: dict = {}  # list var -> the atoms it holds, while it is only appended to (_track_item_vars)
        self.computed: set = set()  # vars a differentiable primitive made (they may carry a derivative)
        self.made_objects: set = set()  # vars holding an object this function made (`Layer(W)`): each a new one
        self.function_attributes: dict = {}  # (lambda or local def made here, name) -> what `f.name = v` set
        self.root_params: set = set()
        self.argument_names: dict = {}  # the differentiated function's parameter vars -> their names
        self.stale: dict = {}       # var -> why: changed in place by a callee (`total += x` in a helper)
        self.shared_attributes: dict = {}  # (object atom, name) -> its var through the construct being lowered
        # Loops and branches are numbered in the order they are lowered (the same in every lowering of the
        # function); each block records its construct's number. `carried`: construct number -> attributes
        # to carry through it although no statement of its own body assigns them (a method called does).
        self.constructs = [0]
        self.construct_number = None
        self.block_owner: dict = {}
        self.carried: dict = {}
        self.outer_blocks: list = []  # a callee's: the caller's open blocks around the call
        self.caller = None  # a callee's: the lowerer of the function calling it (its names hold the caller's values)
        self.root_scope = None  # the differentiated function's scope: where generated code's names resolve
        self.mixed: dict = {}  # var -> the classes it may hold an object of, set in different branches or passes
        self.written_params: dict = {}  # a helper's: parameter name -> the caller's var it changed in place
        self.entry_params: dict = {}  # a helper's: parameter name -> the atom its caller passed
        # ids of the statements of branches a test known when transforming skips (True), or that ran (False)
        self.skipped: dict = {}
        self.var_block: dict = {}  # var -> the block it was first assigned in
        self.attribute_reads: dict = {}  # (object, name) -> vars read from an attribute this function did not set
        self.held_in: dict = {}  # var -> what else holds it ("a list or dict", "an attribute")
        self.version_of: dict = {}  # var -> the list or dict it is a version of (an item replaced, or rebound)
        self.times_held: dict = {}  # var -> how many lists, dicts and attributes were made holding it
        self.put_back: dict = {}  # var -> how many of those put it back where it was read out of (replace_item)
        self.view_writes: list = []  # (view var written into, the array it shows, node): checked in program()
        self.slices: set = set()  # vars holding a slice made when the code runs (`xs[:n]`)
        self.item_sharers: dict = {}  # list or dict var -> those holding the same items (`xs[1:]`, `list(xs)`)
        self.detached: set = set()  # items read out of a list or dict whose place there was set anew since
        self.read_out: set = set()  # vars that may be an item of a list, tuple or dict (`d = nested[0][0]`)
        self.slice_of: dict = {}  # list var -> (the list, the constant slice) it was cut from (`rest = xs[1:]`)
        self.lazy_sources: dict = {}  # name of a generator expression -> the vars it iterates
        self.maybe_same: dict = {}  # var a function run as written returned -> the arrays it was given
        self.static_set: dict = {}  # (id(class or module), attr) -> node: `C.count = v` setting one this function
        #                             would otherwise read as a constant (`C.count` read after it: refused)
        self.held_by: dict = {}  # list, tuple or dict var -> the arrays it may hold or hold views of (_track_held)
        self.iterators: dict = {}  # var -> the loops and branches open where it was made: a generator, map or zip,
        #                            read once (None once read)
        self.read_as_alias: dict = {}  # such a var read once -> where it was made (`h = g` passes it on)
        self.lazy_reads: dict = {}  # a generator assigned to a name -> ({name it reads: its value then}, when)
        self.acting: set = set()  # such generators whose items call what may change state (`log.append(v)`)
        self.whole_reads: set = set()  # generator expressions (or names of them) a whole reader is given: sum(g)
        self.in_place_log: list = []  # the vars written in place (`xs.append(v)`, `a[i] = v`), in order
        self.open_constructs: list = []  # the _Construct of each branch or loop being lowered, outermost first
        self.item_origin: dict = {}  # var -> (list or dict var, constant key) it was read from (`As = d["A"]`)
        self.lists_of_lists: set = set()  # list vars built here whose items are all lists (`[[0.0] * 3, ...]`)
        self.list_items: set = set()  # vars read out of one of those: a list, unless changed since
        self.item_parent: dict = {}  # dict or list var -> (var, key): made from var with item `key` replaced
        self.written = {sub.value.id for sub in ast.walk(self.node) if isinstance(sub, ast.Subscript)
                        and isinstance(sub.ctx, ast.Store) and isinstance(sub.value, ast.Name)} | {
            sub.target.id for sub in ast.walk(self.node) if isinstance(sub, ast.AugAssign)
            and isinstance(sub.target, ast.Name)}  # x[i] = v, x += v: written into in place
        self.written_through_loops = {name for sub in ast.walk(self.node)
                                      for _, walked in (_written_through_target(sub) or ()) for name in walked}
        self.written |= self.written_through_loops  # for p in [W, b]: p -= g (each walked name is written into)
        self.lengths = _ReadsNoted()    # list or tuple var -> its length, where the transform knows it (`f(*xs)`)
        self.dict_keys = _ReadsNoted()  # dict var -> its keys, where the transform knows them (`f(**d)`)
        self.free_shapes: dict = {}  # free var -> (its length or keys, its name): checked when the code runs
        self.free_values: dict = {}  # free var -> (the int or str it held, its name): an item's key, checked too
        # var -> (whether it is None, the module's name it was read by or None): where the transform knows
        # (`y is None` decided then); a module's name relied on so is checked when the code runs (`nones_read`)
        self.nones: dict = {}
        self.nones_read: set = set()
        self.shared: dict = {}   # name -> its var, while inside a branch or loop that assigns it
        self.params: set = set()
        self.results = None      # result vars, when the function returns from inside branches
        self.results_tuple = False
        self.return_span = None
        self.reserved = reserved
        self.receiver = None     # the class of `self` for a bound method
        self.receiver_object = None  # and the object itself, when the code is made for it
        self.statics: dict = {}  # parameter index -> the function this variant binds it to
        self.self_var = None
        self.comments: dict = {(source.display_file, line): texts for line, texts in source.comments().items()}

    @property
    def current(self) -> list:
        return self.blocks[-1]

    # --- program ------------------------------------------------------------------------

    def program(self) -> Program:
        node = self.node
        self._check_signature(node.args)
        self._check_kind(node)
        params = []
        positional = node.args.posonlyargs + node.args.args
        for index, arg in enumerate(positional + node.args.kwonlyargs):
            if index == len(positional) and node.args.vararg is not None:  # *args: one parameter per value
                params += self._rest_parameters(node.args.vararg.arg, len(params), self.statics.get("*", 0))
            index = len(params)
            var = self.namer.user(arg.arg)
            self.env[arg.arg] = StaticValue(native(self.statics[index]), var) if index in self.statics else var
            if ("len", index) in self.statics:  # a list or tuple argument, the code made for its length
                self.containers[var], self.lengths[var] = self.statics["len", index]
            elif ("kind", index) in self.statics:  # one of any length (the code made for a list or tuple)
                self.containers[var] = self.statics["kind", index]
            elif ("rows", index) in self.statics:  # an array argument, the code made for its length (`f(*p)`)
                self.lengths[var] = self.statics["rows", index]
            if any((kind, index) in self.statics for kind in ("len", "kind", "rows")):  # (so not None: `y is None`
                self.nones[var] = (False, None)  # decided, for code made for these lengths)
            if ("str", index) in self.statics:  # a string argument, the code made for its text
                self.env[arg.arg] = Const(self.statics["str", index])
            if ("none", index) in self.statics:  # None, the code made for it (`y is None` decided)
                self.env[arg.arg] = Const(None)
            if ("obj", index) in self.statics:  # an object of the user's, the parameter's default
                self.know_object(var, self.statics["obj", index].obj)
            params.append(var)
            self.argument_names[var] = arg.arg
        if node.args.vararg is not None and not node.args.kwonlyargs and "*" in self.statics:
            params += self._rest_parameters(node.args.vararg.arg, len(params), self.statics["*"])
        if node.args.kwarg is not None and "**" in self.statics:  # **options: one parameter per keyword passed
            keywords = self.statics["**"]
            values = [self.namer.invented(f"{node.args.kwarg.arg}_{key}") for key in keywords]
            params += values
            self.emit(rules.lookup(make_dict), [Const(tuple(keywords))] + values, {}, node.args.kwarg,
                      node.args.kwarg.arg)
            self.env[node.args.kwarg.arg] = self.current[-1].outputs[0]
        self.params = set(params)
        self.root_params = self.params  # the differentiated function's own (callees share these)
        self.bindings.extend(getattr(self.fn, "__tapegen_bindings__", ()))  # gradient code: what it was made for
        if isinstance(self.fn, types.FunctionType) and not marker(self.fn, "__tapegen_lifted__"):
            self.bindings.append(("code", self.fn, None, code_of(self.fn)))  # (replaced in place by autoreload)
        self.self_var = params[0] if params and self.receiver is not None else None
        if self.self_var is not None and self.receiver_object is not None:
            self.know_object(self.self_var, self.receiver_object)
        copied = self.copied_arguments()
        for var, name in self.argument_names.items():  # written through a view of it (`copy_argument_shown`):
            if name in copied and self.env.get(name) is var:  # the function's own copy from the start
                self.store(name, self.private_copy(name, var, node, numbers=True, statement=copied[name]) or var, node)
        if isinstance(node, ast.Lambda):
            outputs, returns_tuple = self._return_value(node.body)
            self.return_span = self.span(node.body)
        else:
            outputs, returns_tuple = self._statements(node.body)
        name = "lambda" if isinstance(node, ast.Lambda) else node.name
        checks = [Eqn(rules.lookup(same_shape_as_transformed), (("value", var), ("size", Const(size)),
                                                                ("name", Const(user_name))), (), self.span(node))
                  for var, (size, user_name) in self.free_shapes.items()
                  if var in self.lengths.read or var in self.dict_keys.read]  # (`LOG.append(v)` alone: not relied on)
        checks += [Eqn(rules.lookup(same_value_as_transformed), (("value", var), ("expected", Const(value)),
                                                                 ("name", Const(user_name))), (), self.span(node))
                   for var, (value, user_name) in self.free_values.items()]
        checks += [Eqn(rules.lookup(same_noneness_as_transformed), (("value", var), ("none", Const(self.nones[var][0])),
                                                                    ("name", Const(self.nones[var][1]))), (),
                       self.span(node)) for var in self.nones_read]
        self.check_view_writes(self.current, outputs)
        return Program(name, tuple(params), tuple(checks + self.current), outputs, self.span(node), returns_tuple,
                       self.return_span, tuple(dict.fromkeys(self.free.values())), frozenset(self.namer.identifiers),
                       tuple(sorted(self.free_sources.items())), tuple(sorted(self.comments.items())),
                       bindings=tuple({(kind, id(holder), key): (kind, holder, key, value)
                                       for kind, holder, key, value in self.bindings}.values()))

    def _rest_parameters(self, name, start, count):
        """The parameters of `*name`'s `count` values, the first at position `start`; the name is their tuple,
        a function among them known as the one this variant is made for (KnownItems)."""
        rest = [self.namer.invented(f"{name}_{k}") for k in range(count)]
        items = tuple(StaticValue(native(self.statics[start + k]), var) if start + k in self.statics else var
                      for k, var in enumerate(rest))
        known = any(isinstance(item, StaticValue) for item in items)
        self.env[name] = KnownItems(items, "tuple") if known else Pack(tuple(rest), "tuple")
        return rest

    def _statements(self, stmts):
        """Lower the function body; return (outputs, returns_tuple)."""
        last = stmts[-1] if stmts else self.node
        if isinstance(last, ast.Return):
            for stmt in stmts[:-1]:
                self.statement(stmt)
            if last.value is None and self.call_stack:  # a helper's bare `return` (at the end of a branch
                return (Const(None),), False  # decided now): None
            if last.value is None:
                raise self.unsupported(last, "a differentiated function must return a value")
            self.return_span = self.span(last)
            return self._return_value(last.value)
        for stmt in stmts[:-1]:
            self.statement(stmt)
        if isinstance(last, ast.If) and self.results is None:
            cond = self.if_condition(last)
            if isinstance(cond, Const):  # `if isinstance(other, G): return G(...)` / `return G(...)`, decided now:
                return self._statements(last.body if cond.value else last.orelse)  # the branch taken ends it, its
            self.stmt_If(last, cond)  # value returned as it is (an object it makes stays known)
        elif stmts:
            self.statement(last)
        if self.results is None and self.call_stack:  # a helper (or __init__) that returns nothing: None
            return (Const(None),), False
        if self.results is None:
            raise self.unsupported(last, "a differentiated function must end with `return <value>`")
        return tuple(self.results), self.results_tuple

    def block(self, stmts, before=None, test=None, then=None):
        """Lower `stmts` into a new block (a branch or loop body) and return its statements; `then()`, if given,
        lowers what follows them there (a dispatched call's branch)."""
        self.blocks.append([])
        self.block_owner[id(self.current)] = self.construct_number
        try:
            if before:
                self.bind_loop_items(*before)
            if test is not None:
                self._last_test = self.condition(test)
            for stmt in stmts:
                if isinstance(stmt, ast.Return):
                    self.branch_return(stmt)
                else:
                    self.statement(stmt)
            if then is not None:
                then()
            return self.blocks.pop()
        except BaseException:
            self.blocks.pop()
            raise

    @contextlib.contextmanager
    def sharing(self, names, node, pinned=()):
        """Give each of `names` one var for the construct; copy in values it does not own.

        `pinned` vars must keep their value through the construct (a loop's iterable): a name
        bound to one gets a new var.
        """
        saved = dict(self.shared)
        saved_attributes = dict(self.shared_attributes)
        saved_construct = self.construct_number
        self.construct_number = self.constructs[0] = self.constructs[0] + 1
        carried = self.carried.get(self.construct_number, ())
        forced = {base for base, how in carried if how == "=" and base in self.env}  # (a dict found to be one
        item_writes = set(getattr(names, "item_writes", ())) - forced               # in the body: carried)
        items_written = {base for base, how in carried if how == "[]" and base in self.env}  # (`c = caches[i]`,
        item_writes |= items_written  # then `c["h"] = h`: caches' items are changed through another name)
        names = set(names) | forced | items_written
        known = frozenset({base for base, how in carried if how in ("known", "dispatch")}  # set to one here, or holding one now
                          | {name for name in names if isinstance(self.env.get(name), _KNOWN_KINDS)})
        names -= known
        unbound = {name for name in names if "." not in name and self.env.get(name) is None}
        for base, attr in sorted(carried):
            if attr and attr not in ("=", "+=", "[]", "known", "dispatch") and not attr.startswith("~"):
                self._share_attribute_of(Var(base), attr, base, node)
        for name in sorted(names):
            if "." in name and name.split(".")[0] in unbound:  # `for l in layers: l.w = ...`: an object the
                continue  # construct binds itself has no attribute from before to carry
            if "." in name:  # `self.h = ...` inside: the attribute is carried like a variable
                self._share_attribute(name, node)
                continue
            if name in self.shared:
                continue
            current = self.env.get(name)
            if current is None and name in getattr(self, "module_names", ()) and self.scope.lookup(name) is not MISSING:
                current = self.read_name(ast.copy_location(ast.Name(name, ast.Load()), node))  # `global LR` set in
                # the construct: it starts from the module's value (not None, as a name first set there would)
            if name in item_writes and self.container_kind(current) not in ("list", "dict") \
                    and not (current in self.root_params and name in self.written) and current not in self.item_origin:
                continue  # A[i] = v writes into the array in place: the same var throughout
            if isinstance(current, Var) and current not in pinned and (self._owns(name, current) or (
                    name in item_writes and self.callers_container(name, current) and self.sole_name(name, current))):
                var = current  # (a list or dict the helper's caller made, its items changed: the caller's, as Python)
            elif current in self.root_params and name in self.written and self.sole_name(name, current):
                var = self.private_copy(name, current, node, self.namer.user(name),  # x[i] = v on an argument
                                        numbers=name in self.written_through_loops)
            else:
                var = self.namer.user(name)
                if current is not None:
                    self.emit(rules.lookup(assign_primitive), [current], {}, node, var)
                    if not (isinstance(current, Var) and current not in self.fresh):
                        self.fresh.add(var)
                    if name in item_writes and current in self.fresh and self.container_kind(current) in ("list",
                                                                                                          "dict"):
                        self.carried_apart(name, current, var, node)
                elif isinstance(node, (ast.For, ast.While)) and _read_before_set(node, name):  # first set in
                    self.emit(rules.lookup(assign_primitive), [Const(None)], {}, node, var)  # the body, read in a
                    # later pass (`prev` of the pass before): None until then, as it is unset in Python
                else:  # first set in the construct, its value from before never read: no var holds one yet
                    self.unset_names[var] = node
            self.shared[name] = var
            self.env[name] = var
            self.constant_items.pop(var, None)  # its items may change from one pass to the next
        attributes = {(self.env.get(name.split(".")[0]), name.split(".", 1)[1]) for name in names if "." in name}
        construct = _Construct(self, node, {self.shared[name]: name in unbound for name in names if name in self.shared}
                               | {var: False for key, var in self.shared_attributes.items()
                                  if key not in saved_attributes or key in attributes}, known)
        if isinstance(node, (ast.For, ast.While)):  # a pass starts from the last one's values: their items
            for var in construct.entry:  # may have changed (their length, keys and class seldom do: checked
                self.constant_items.pop(var, None)  # when the loop is lowered, which lowers it again if so)
            construct.entry = {var: construct.facts(var) for var in construct.entry}
        for base, attr in carried:
            if not attr:  # what was known of it before the loop does not hold through it
                construct.forget(Var(base))
            elif attr.startswith("~"):  # (those facts of it)
                construct.forget(Var(base), tuple(attr[1:].split(",")))
        for base, classes in _item_classes(self.carried.get(("classes", self.construct_number), ())).items():
            self.mixed[Var(base)] = self.mixed.get(Var(base), set()) | classes  # what a pass may start with
        construct.entry_mixed = {var: set(self.mixed[var]) for var in construct.entry if var in self.mixed}
        for base, classes in _item_classes(self.carried.get(("items", self.construct_number), ())).items():
            if len(classes) == 1 and None not in classes:  # all its items of one class, pass after pass
                self.item_types[Var(base)] = classes.pop()
                construct.entry[Var(base)] = construct.facts(Var(base))
        if isinstance(node, (ast.For, ast.While)):  # None before the loop, a list a pass made after it
            self.none_vars -= construct.entry_nones
            forgotten = {base for base, how in carried if not how or how.startswith("~") and "containers" in how}
            for base, kind in self.carried.get(("kinds", self.construct_number), ()):
                if base in forgotten:  # a pass changed it to another kind: not known at the top
                    continue
                self.containers[Var(base)] = kind
                self.maybe_none.add(Var(base))
                construct.entry[Var(base)] = construct.facts(Var(base))
        for name in sorted(base for base, how in carried if how == "dispatch"):
            self._track_token(construct, name, node)
            functions = sorted((obj for base, obj in self.carried.get(("functions", construct.number), ())
                                if base == name), key=_function_order)
            top = _candidates([construct.known_entry.get(name, _UNKNOWN)] + [self._carried_function(obj)
                                                                             for obj in functions])
            if isinstance(node, (ast.For, ast.While)) and top is not None:  # read before a pass sets it
                self.env[name] = construct.top[name] = Choice(top, construct.tokens[name])
        self.open_constructs.append(construct)
        try:
            yield construct
            construct.close()
        finally:
            self.open_constructs.remove(construct)
            for var in [*self.shared.values(), *self.shared_attributes.values()]:
                self.constant_items.pop(var, None)  # set in one branch or pass, not surely in all
            self.shared = saved
            self.shared_attributes.clear()
            self.shared_attributes.update(saved_attributes)
            self.construct_number = saved_construct

    def carried_apart(self, name, current, var, node):
        """A list or dict made here, whose items the construct `node` changes through `name`, carried in `var`
        apart from `current`, which another name (or the helper's caller) holds too: Python's change shows in
        `current` as well, so `current` is not to be read again, unless a caller's name is written back."""
        if current in self.holders:
            self.holders[var] = set(self.holders[current])
        others = [other for other, atom in self.env.items() if other != name and atom is current]
        if others or not self.changes_callers(name, current, node):
            self.stale.setdefault(current, (name, node, "construct"))

    def _track_token(self, construct, name, node):
        """Keep, beside `name`, a var holding its value when the code runs (a dispatch after `construct` tests
        it): set from its value now, and wherever the construct binds the name (`bind_static`)."""
        outer = next((c.tokens[name] for c in self.open_constructs if c.lowerer is self and name in c.tokens), None)
        if outer is not None:
            construct.tokens[name] = outer
            return
        var = construct.tokens[name] = self.namer.user(name)
        value = construct.known_entry.get(name, _UNKNOWN)
        self.emit(rules.lookup(assign_primitive), [self.token(value, node)], {}, node, var)

    def _carried_function(self, carried):
        """A function a loop's pass may start with, as `_Construct._check_top` carried it: the function itself,
        or ("local", line, column) for a lambda or def of this function, made afresh here."""
        if not (isinstance(carried, tuple) and carried[:1] == ("local",)):
            return StaticValue(carried)
        node = next(sub for sub in ast.walk(self.node) if isinstance(sub, (ast.Lambda, ast.FunctionDef))
                    and (sub.lineno, sub.col_offset) == carried[1:])
        return self.local_function(node)

    def token(self, value, node):
        """The atom generated code tests a dispatch's candidate by: the function itself, or a lambda's
        LocalToken; a Choice's own var."""
        if isinstance(value, Choice):
            return value.var
        if value is _UNKNOWN or isinstance(value, Pack) or isinstance(value, _KNOWN_KINDS) and \
                not isinstance(value, (StaticValue, LocalFunction)):  # not set yet, or a value no dispatch expects
            return Const(None)
        if not isinstance(value, (StaticValue, LocalFunction)):  # a plain value: itself
            return value
        if isinstance(value, LocalFunction):
            token = LocalToken.of(value.node, value.lowerer.source)
            return self.free_object("local_function", lambda t=token: t)
        obj = value.obj
        name = getattr(obj, "__name__", "")
        return self.free_object(name if name.isidentifier() else "function", lambda o=obj: o)  # (`<lambda>`)

    def facts_of(self, var):
        return tuple(getattr(self, tracker).get(var, _UNKNOWN) for tracker in FACTS)

    def agree_facts(self, var, ends):
        """`var` set on one path or another of an expression (`a if c else b`, `a or b`): it keeps each fact
        that every path's end agrees on, as after an `if` statement."""
        for tracker, facts in zip(FACTS, zip(*ends)):
            if facts[0] is not _UNKNOWN and all(_same(fact, facts[0]) for fact in facts):
                getattr(self, tracker)[var] = facts[0]
            else:
                getattr(self, tracker).pop(var, None)
        classes = {end[FACTS.index("types")] for end in ends} - {_UNKNOWN}
        if len(classes) > 1 or classes and len(classes) < len(ends):
            self.mixed[var] = classes

    def _share_attribute(self, name, node):
        """One var for `obj.attr` through a branch or loop that assigns it, starting from its value now."""
        owner, attr = name.split(".", 1)
        base = self.env.get(owner)
        if isinstance(base, Var):
            self._share_attribute_of(base, attr, owner, node)

    def _share_attribute_of(self, base, attr, owner, node):
        key = (base, attr)
        if key in self.shared_attributes:
            return
        cls = self.class_of(base)
        if cls is not None and isinstance(inspect.getattr_static(cls, attr, None), property):
            return  # `p.w = v` through a property: its setter sets what it sets (carried as a method's writes are)
        held = self.attributes.get(key)
        if held is not None and isinstance(held[0], StaticValue):
            return  # a function held in an attribute: known, not carried
        if held is None:
            self.check_untied_attribute(base, attr, node)
        if held is None or not isinstance(held[0], (LocalFunction, KnownItems)):  # set before loops open now
            self._carry_needed(key, held[0] if held is not None else None, node)  # (a method's branch in a loop)
        current = held[0] if held is not None else \
            self.emit(rules.lookup(attribute_or_none), [base, Const(attr)], {}, node, None)
        if held is None:  # (the object may not have it on entering: `hasattr` is then a test when the code runs)
            self.maybe_absent.add(key)
        var = self.namer.user(f"{owner}_{attr}")
        self.emit(rules.lookup(assign_primitive), [current], {}, node, var)
        self.constant_items.pop(var, None)  # its items may change from one pass to the next
        self.shared_attributes[key] = var
        self.attributes[key] = (var, self.current)

    def sole_name(self, name, var) -> bool:
        """Whether `name` is the only way to reach `var`: no other name, and no view of it, holds it."""
        return all(atom is not var and self.view_base(atom) is not var
                   for other, atom in self.env.items() if other != name and isinstance(atom, Var))

    def private_copy(self, name, var, node, target=None, numbers=False, statement=None):
        """`name`, an argument about to be written into, as a copy: the caller's array never changes (with
        `numbers`, a number stays one: `copy_array`; `statement`: the write's text, where `node` is not it)."""
        if not self.sole_name(name, var):
            return None
        text = statement if statement is not None else _statement_text(node)
        self.emit_multi(rules.lookup(writable_argument), [var, Const(text)], {}, node, 0, [])
        copy = self.emit(rules.lookup(copy_array if numbers else _np().copy), [var], {}, node, target or name)
        self.fresh.add(copy)
        if var in self.params and self.call_stack:  # a helper's parameter: the caller's name sees the change
            self.changes_callers_array(name, var, node)  # (written back; the argument itself stays as it was)
        return copy

    def _owns(self, name, var) -> bool:
        """Whether `name` alone holds `var`'s value, so a construct may reassign `var` itself: not a
        parameter, a view, another name's value or a global's (`h = v` then a loop reassigning h)."""
        return var not in self.params and var not in self.views and all(
            atom is not var and not (isinstance(atom, Frozen) and var in atom.reads())
            for other, atom in self.env.items() if other != name) and var not in self.free.values()

    def _module_reads_kept(self, name, node):
        """`global Y; ... Y = Y * 2` after `Y` was read as the module's: generated code reads a module's name as
        it is when that line runs, so the backward pass would read the new value. Lowered again with each
        read of `Y` kept in a name of its own (`read_name`), which the backward pass reads. Refused where a
        function calling this one declared `Y` global and set it: it reads its own value afterwards."""
        caller = self.caller
        while caller is not None:  # a calling function that declared the name global and set it reads the value
            if name in getattr(caller, "module_names", ()) and name in caller.env:  # it set (Python: this one)
                raise self.unsupported(node, f"`{name}` is the module's name, rebound here and before in a function "
                                             f"calling this one, which would read its own value afterwards: "
                                             f"tapegen does not follow the change there",
                                       f"return the new value and assign it there: {name} = f(...)")
            caller = caller.caller
        kept = self.carried.get(("module reads", 0), ())
        if self.generated_code():  # gradient code differentiated again: it reads the module's name under names
            name = "*"  # of its own (`_WEIGHTS_`), so every array or number it reads from outside is kept
        if (name, "kept") not in kept and any(isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], int)
                                              and (key[1] == name or name == "*") for key in self.free):
            raise Recarry({("module reads", 0): {(name, "kept")}})

    def shared_var(self, name):
        return self.shared[name]

    def store(self, name, atom, node):
        """Bind user name `name` to `atom` (copying into its shared var inside a construct)."""
        var = self.shared.get(name)
        if isinstance(atom, Pack) and self.needs_known(atom.items):
            atom = KnownItems(atom.items, atom.kind)  # r = tg.vjp(f, x): r[1] is its pullback
        if isinstance(atom, _KNOWN_KINDS):
            return self.bind_static(name, atom, node)
        if isinstance(atom, Pack) and atom.kind in ("list", "tuple"):  # a list kept in a variable
            maker = rules.lookup(make_list if atom.kind == "list" else make_tuple)
            atom = self.emit(maker, list(atom.items), {}, node, var or name)
        if name in getattr(self, "module_names", ()):  # `global name`: the module's name is rebound too
            self._module_reads_kept(name, node)
            namespace = self.free_object("module_names", lambda g=self.fn.__globals__: g)
            self.emit_multi(rules.lookup(set_module_name), [namespace, Const(name), atom], {}, node, 0, [])
        if var is None:
            self.env[name] = atom
            self._set_token(name, atom, node)
        elif atom is not var:
            self.emit(rules.lookup(assign_primitive), [atom], {}, node, var)
            if isinstance(atom, Var) and atom in self.fresh:
                self.fresh.add(var)
            self.carry_attributes(name, atom, var, node)
        self.write_through_attributes(name, node)

    def write_through_attributes(self, name, node):
        """`C = self.cache; C[k] = v` (numpy-ml's optimizers): the change `check_not_an_attributes` found `name`
        making to the list or dict attributes hold too is made there too, as Python's one object shows it (the
        attribute set to `name`'s new value, as `self.cache = C` would)."""
        pending, self.attributes_written_through = self.attributes_written_through, None
        if pending is None or pending[0] != name or pending[1] is not node or name in self.shared:
            return  # (in a loop or branch carrying `name`: `_assign_item` makes it there, as it carries it)
        for base, attr in pending[2]:
            self.set_attribute(base, ast.copy_location(ast.Attribute(ast.Name(str(base), ast.Load()), attr,
                                                                     ast.Store()), node), self.env[name])

    def carry_attributes(self, name, atom, var, node):
        """`acc = acc + N(...)` in a loop or branch: the object a call made there, its attributes set in that
        call, is now the construct's var: its attributes are that var's, carried as the body's own
        `acc.mu = ...` would be (read after the loop or in the next pass, they were acc's from before)."""
        if not isinstance(atom, Var) or atom not in self.types:
            return
        own = {attr: value for (base, attr), (value, _) in list(self.attributes.items()) if base is atom}
        for attr in [attr for (base, attr) in list(self.attributes) if base is var and attr not in own]:
            # one the var held before, which the new object's code did not set here (`st = a if c else b`): its
            # own when the code runs, unless that would lose a derivative (refused, as such a read is)
            target = ast.copy_location(ast.Attribute(ast.Name(name, ast.Load()), attr, ast.Load()), node)
            self.check_untied_attribute(atom, attr, target)
            own[attr] = self.emit(rules.lookup(getattr), [atom, Const(attr)], {}, node, None)
        for attr, value in own.items():
            target = ast.copy_location(ast.Attribute(ast.Name(name, ast.Load()), attr, ast.Store()), node)
            self.set_attribute(var, target, value)

    def bind_static(self, name, value, node=None):
        """Bind `name` to what the transform knows of its value: a function, a lambda, a display of them, an
        object. Inside loops and branches of this function, those setting it keep it apart from their shared
        vars (the function is lowered again so): each pass or branch binds it as it goes."""
        missing = {construct.number: {(name, "known")} for construct in self.open_constructs
                   if construct.lowerer is self and name not in construct.known}
        if missing:
            raise Recarry(missing)
        self.env[name] = value
        self._set_token(name, value, node)

    def _set_token(self, name, value, node):
        """Keep the var a dispatch tests beside `name` (`_track_token`) holding its value when the code runs."""
        tokens = {c.tokens[name] for c in self.open_constructs if c.lowerer is self and name in c.tokens}
        if tokens:
            node = node if node is not None else self.node
            self.emit(rules.lookup(assign_primitive), [self.token(value, node)], {}, node, tokens.pop())

    def alias_roots(self, atom) -> set:
        """The vars whose arrays `atom` may be, following views and `b = a` assignments (aliases)."""
        return {var for var in self.alias_reach(atom) if var not in self.views and var not in self.aliases}

    def names_maybe_holding(self, var) -> list:
        """The names, not holding `var` itself, that may hold the same array when the code runs (`prev = vel`
        later in a loop body whose next pass changes `vel` in place)."""
        reach = self.alias_reach(var, maybe=True)
        return [name for name, atom in self.env.items()
                if isinstance(atom, Var) and atom is not var and self.alias_reach(atom, maybe=True) & reach]

    def alias_reach(self, atom, maybe=False) -> set:
        """`atom` and every var it may have been assigned from or be a view of, through loops too (where the
        assignments go round: `prev, vel = vel, vel` in a loop, which has no var assigned from nothing); `maybe`:
        also the arrays a function run as written was given (`np.ascontiguousarray(a)` may be `a`)."""
        seen, todo = set(), [atom]
        while todo:
            var = todo.pop()
            if var not in seen:
                seen.add(var)
                todo += ([self.views[var]] if var in self.views else []) + list(self.aliases.get(var, ()))
                todo += list(self.maybe_same.get(var, ())) if maybe else []
        return seen

    def view_base(self, atom):
        while atom in self.views:
            atom = self.views[atom]
        return atom if atom is not None else None

    def _check_signature(self, args):
        """The differentiated function's own parameters: named ones, keyword-only ones too."""
        for extra, what in ((args.vararg, "*"), (args.kwarg, "**")):
            if extra is not None and what not in self.statics:
                raise self.unsupported(extra, f"the function being differentiated takes {what}{extra.arg}, whose "
                                              f"number of values tapegen cannot know when it transforms it",
                                       f"differentiate a function with named arguments that calls this one "
                                       f"(lambda x, y: f(x, y)); helpers it calls may take {what}{extra.arg}")

    def _check_kind(self, node):
        """Generators and coroutines have no single output: say so at the yield / await itself."""
        if isinstance(node, ast.AsyncFunctionDef):
            raise self.unsupported(node, "async functions cannot be differentiated", _HINTS[ast.Await])
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Yield, ast.YieldFrom, ast.Await)) and not _inside_nested_def(sub, node):
                raise self.unsupported(sub, f"{_describe(sub)} is not supported inside a differentiated function",
                                       _HINTS[type(sub)])

    def _return_value(self, value):
        if isinstance(value, ast.Tuple):  # a helper may return a local function with its values (a pullback)
            return tuple(self._returned(elt) for elt in value.elts), True
        return (self._returned(value),), False

    def _returned(self, node):
        if self.call_stack:  # a helper may return a function: a lambda, a local def, one it was passed
            return self.value(node) if isinstance(node, (ast.Lambda, ast.Call, ast.Name, ast.Attribute)) \
                or isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts) \
                else self.expr(node)  # (`return y, (f, a)`: residuals holding a function, known still)
        return self._built(self.expr(node), node)

    def _built(self, atom, node):
        """A list or tuple the function returns, built in a var: its tangent and cotangent flow through `[]`'s rule."""
        if not (isinstance(atom, Pack) and atom.kind in ("list", "tuple")):
            return atom
        items = [self._built(item, node) for item in atom.items]
        return self.emit(rules.lookup(make_list if atom.kind == "list" else make_tuple), items, {}, node, None)

    # --- statements ---------------------------------------------------------------------

    def statement(self, stmt):
        handler = getattr(self, f"stmt_{type(stmt).__name__}", None)
        if handler is None:
            raise self.unsupported(stmt, f"{_describe(stmt)} is not supported inside a differentiated function",
                                   _HINTS.get(type(stmt), "rewrite it with assignments and NumPy calls"))
        handler(stmt)

    def stmt_Import(self, stmt):
        """`import math` inside a function (numpy-ml's optimizers do it): the module, known now."""
        for alias in stmt.names:
            module = self._import(alias.name, stmt)
            if alias.asname is None:
                module = self._import(alias.name.split(".")[0], stmt)
            self.bind_static(alias.asname or alias.name.split(".")[0], StaticValue(native(module)))

    def stmt_ImportFrom(self, stmt):
        """`from ..initializers import SchedulerInitializer` inside a function: the objects, known now."""
        package = getattr(self.fn, "__globals__", {}).get("__package__") or ""
        name = "." * stmt.level + (stmt.module or "")
        try:
            resolved = importlib.util.resolve_name(name, package) if stmt.level else name
        except (ImportError, ValueError) as exc:
            raise self.unsupported(stmt, f"this import fails: {exc}") from None
        module = self._import(resolved, stmt)
        for alias in stmt.names:
            if alias.name == "*":
                raise self.unsupported(stmt, "`from ... import *` inside a function is not Python 3",
                                       "import the names you use")
            found = getattr(module, alias.name, MISSING)
            if found is MISSING:
                found = self._import(f"{resolved}.{alias.name}", stmt)
            found = native(found)
            name = alias.asname or alias.name
            if callable(found) or isinstance(found, types.ModuleType):
                self.bind_static(name, StaticValue(found))
            elif _literal_constant(found):
                self.env[name] = Const(found)
            else:  # data (an array): the object imported, as Python binds it
                self.env[name] = self.free_object(name, lambda imported=found: imported)

    def _import(self, name, stmt):
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            refused = self.unsupported(stmt, f"this import fails when tapegen runs it: {exc}")
            refused.import_error = exc  # (in a `try` block handling it: the except block runs)
            raise refused from None

    def stmt_Global(self, stmt):
        """`global calls`: the names, assigned below, are the module's (rebound there when the code runs)."""
        self.module_names = getattr(self, "module_names", frozenset()) | set(stmt.names)

    def stmt_Nonlocal(self, stmt):
        """`nonlocal count` in a local def: its names are the enclosing function's, rebound there after each
        call (inline_local); anywhere else (a def tapegen does not inline where it was written), refused."""
        if not getattr(self, "local_def", False):
            raise self.unsupported(stmt, "`nonlocal` is supported in a def written in the differentiated function "
                                         "(or a helper tapegen follows)",
                                   "pass the value in as an argument and return the new value")

    def stmt_Pass(self, stmt):
        pass

    def stmt_Expr(self, stmt):
        if isinstance(stmt.value, ast.Constant):  # a docstring or a bare constant: nothing to run
            return
        if not isinstance(stmt.value, ast.Call):
            raise self.unsupported(stmt, "an expression statement that is not a call does nothing",
                                   "remove it, or assign its value")
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and func.attr == "update" and isinstance(func.value, ast.Attribute) \
                and func.value.attr == "__dict__" and len(stmt.value.args) == 1 and not stmt.value.keywords:
            return self.update_attributes(func.value.value, stmt.value.args[0], stmt)
        self.call(stmt.value, outputs=0)

    def update_attributes(self, base_node, items_node, stmt):
        """`self.__dict__.update(kwargs)` (a config object's __init__): each item of a dict whose keys are known
        now set as an attribute, one by one."""
        items = self.value(items_node)
        keys = items.keys if isinstance(items, KnownItems) and items.kind == "dict" else \
            self.dict_keys.get(items) if isinstance(items, Var) else None
        if keys is None or not all(isinstance(k, str) and k.isidentifier() for k in keys):
            raise self.unsupported(stmt, f"`{ast.unparse(stmt)}` sets attributes named by keys tapegen does not know "
                                         f"when transforming", "set the attributes one by one: self.name = value")
        base = self.expr(base_node)
        for k, key in enumerate(keys):
            value = items.items[k] if isinstance(items, KnownItems) else \
                self.emit(rules.lookup(operator.getitem), [items, Const(key)], {}, stmt, None)
            self.set_attribute(base, _located(ast.Attribute(base_node, key, ast.Store()), stmt), value)

    def stmt_Delete(self, stmt):
        """`del x`: the name is gone (the value lives on where it is used). `del xs[k]`, `del d[key]` on a list or
        dict built here (`k`, `key` constants): the name is rebound to the list or dict without the item."""
        for target in stmt.targets:
            kind = self.container_kind(self.env.get(target.value.id)) if isinstance(target, ast.Subscript) \
                and isinstance(target.value, ast.Name) else None
            key = self.expr(target.slice) if kind in ("list", "dict") else None
            if isinstance(key, Const) and (kind == "dict" or type(key.value) is int) or kind == "list" and \
                    isinstance(key, Var):  # del xs[k]: xs rebound (k known when the code runs: checked then)
                without = self.list_without if kind == "list" else \
                    lambda name, container, k, node: self.dict_pop(name, container, k, None, node)
                without(target.value.id, self.read_name(target.value), key.value if isinstance(key, Const) else key,
                        target)
                continue
            if kind == "dict" and isinstance(key, Var):  # `for k in keys: if k in sd: ...; del sd[k]` (numpy-ml's
                self.del_dict_item(target.value.id, self.read_name(target.value), key, target)  # set_params)
                continue
            if not isinstance(target, ast.Name) or target.id not in self.env or target.id in self.shared:
                raise self.unsupported(target, f"`del {ast.unparse(target)}` is not supported here",
                                       "leave the name bound; tapegen frees values after their last use")
            del self.env[target.id]

    def del_dict_item(self, name, container, key, node):
        """`del d[k]`, `k` known when the code runs: `d` rebound to a copy without the item, after reading it
        (a KeyError where it is missing, as Python raises)."""
        self.check_unshared(name, container, node)
        self.emit_multi(rules.lookup(check_has_key), [container, key], {}, node, 0, [])
        self.store(name, self.emit(rules.lookup(dict_without), [container, key], {}, node,
                                   self.shared.get(name, name)), node)

    def stmt_Raise(self, stmt):
        """`raise E(...)`: generated code raises it too, where the user's code would."""
        if stmt.exc is None:
            raise self.unsupported(stmt, "a bare `raise` re-raises an exception being handled, and there is none "
                                         "here", "raise an exception object: raise ValueError(...)")
        cause = [self.expr(stmt.cause)] if stmt.cause is not None else []  # `raise E(...) from error`
        self.emit_multi(rules.lookup(raise_error), [self.expr(stmt.exc)] + cause, {}, stmt, 0, [])

    def stmt_Assert(self, stmt):
        """`assert c, msg`: checked when the generated code runs, as Python checks it."""
        message = [self.expr(stmt.msg)] if stmt.msg is not None else []
        self.emit_multi(rules.lookup(check_assertion), [self.expr(stmt.test)] + message, {}, stmt, 0, [])

    def stmt_With(self, stmt):
        """`with np.errstate(...):`, `warnings.catch_warnings()` and other contexts that change only how NumPy
        and Python treat warnings and errors: the body in the same `with` in generated code (its backward pass
        too), so an error it turns a warning into is raised where Python raises it, and the settings end with
        the block. Any other (`with Timer() as t:`, a lock, a `contextlib.contextmanager`): as Python runs it
        when the body raises nothing, `m = <expr>; t = m.__enter__(); <body>; m.__exit__(None, None, None)`
        (the methods of a class of yours inlined; a `return` ending the body comes after it:
        frontend/normalize.py)."""
        self.with_items(list(stmt.items), stmt)

    def with_items(self, items, stmt):
        if not items:
            for inner in stmt.body:
                self.statement(inner)
            return
        item, rest = items[0], items[1:]
        call = item.context_expr
        manager = self.static(call.func) if isinstance(call, ast.Call) else MISSING
        if manager in WARNING_CONTEXTS and item.optional_vars is None:
            return self.warning_context(call, lambda: self.with_items(rest, stmt), stmt)
        self.check_manager(call, manager)
        held = self.namer.invented("manager").name
        self.statement(_located(ast.Assign([ast.Name(held, ast.Store())], call), call))
        enter = ast.Call(ast.Attribute(ast.Name(held, ast.Load()), "__enter__", ast.Load()), [], [])
        self.statement(_located(ast.Assign([item.optional_vars], enter) if item.optional_vars is not None
                                else ast.Expr(enter), call))
        self.with_items(rest, stmt)
        leave = ast.Call(ast.Attribute(ast.Name(held, ast.Load()), "__exit__", ast.Load()), [ast.Constant(None)] * 3,
                         [])
        self.statement(_located(ast.Expr(leave), call))

    def warning_context(self, call, inside, stmt):
        """The rest of a `with` statement in a region run in `with <call>:` (an If with a manager)."""
        self.expr(call)
        made = self.current.pop()  # the manager's call, written in the `with` line itself
        manager = Eqn(made.op, made.inputs, (), made.span)
        with self.sharing(_assigned_names(stmt.body) | _assigned_names(
                [ast.Assign([i.optional_vars], i.context_expr) for i in stmt.items if i.optional_vars]), stmt) \
                as construct:
            then = self.block([], then=inside)
            construct.branch_done()
            orelse = self.block([])
        self.current.append(If(Const(True), tuple(then), tuple(orelse), self.span(call), manager=manager))

    def check_manager(self, call, manager):
        """Refuses a context manager tapegen cannot follow: one of a class of yours whose `__exit__` may swallow
        an exception (the generated code would let it out), or one whose `__enter__`/`__exit__` tapegen does
        not see (a library's, a `contextlib.contextmanager`: they may change what the body reads). A lock,
        `contextlib.nullcontext()` and the warning contexts are fine."""
        cls = manager if inspect.isclass(manager) else type(self.static(call)) \
            if self.static(call) is not MISSING and not callable(self.static(call)) or \
            isinstance(self.static(call), _SAFE_MANAGER_TYPES) else None
        if cls is not None and (issubclass(cls, _SAFE_MANAGER_TYPES) or cls in (contextlib.nullcontext,)):
            return
        enter = inspect.getattr_static(cls, "__enter__", None) if cls is not None else None
        leave = inspect.getattr_static(cls, "__exit__", None) if cls is not None else None
        if cls is None or not users_class(cls) or user_function(enter) is None or user_function(leave) is None:
            raise self.unsupported(call, f"`with {ast.unparse(call)}` is not supported inside a differentiated "
                                         f"function: tapegen cannot see what its manager does on entry and exit",
                                   "a manager of a class of yours is followed (its __enter__ and __exit__), as are "
                                   "np.errstate, warnings.catch_warnings() and locks; move this `with` block "
                                   "outside the differentiated function")
        from .source import function_source
        returns = [r.value for r in ast.walk(function_source(user_function(leave)).node) if isinstance(r, ast.Return)]
        if any(v is not None and not (isinstance(v, ast.Constant) and not v.value) for v in returns):
            raise self.unsupported(call, f"`{cls.__name__}.__exit__` may return True, which swallows an exception "
                                         f"raised in the block: tapegen's code would let it out",
                                   "return nothing from __exit__, or handle the error outside the differentiated "
                                   "function")

    def stmt_Assign(self, stmt):
        if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.GeneratorExp):
            # g = (f(v) for v in a): Python reads `a` when g is consumed; tapegen, here. A write into `a` while
            # g is read after it is refused (check_writable)
            sources = {self.env.get(gen.iter.id) for gen in stmt.value.generators if isinstance(gen.iter, ast.Name)}
            self.lazy_sources[stmt.targets[0].id] = {v for v in sources if isinstance(v, Var)}
            bound = {n.id for gen in stmt.value.generators for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
            before = {n.id: self.env.get(n.id) for n in ast.walk(stmt.value)
                      if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound}
            self.whole_reads.add(stmt.value)  # (whether its reader reads it whole: asked where it is read)
            self.assign(stmt.targets[0].id, stmt.value)
            made = self.env.get(stmt.targets[0].id)
            if made in self.iterators:  # what it reads, to be unchanged until it is read (read_iterator)
                self.lazy_reads[made] = (before, len(self.in_place_log))
                if self.may_act(stmt.value):
                    self.acting.add(made)
            return
        if len(stmt.targets) > 1:  # a = b = value: the value once, then each target
            value = self.expr(stmt.value)
            if isinstance(value, Pack) and value.kind == "list" and not self.needs_known(value.items):  # a = b = []:
                value = self.emit(rules.lookup(make_list), list(value.items), {}, stmt, None)  # one list, two names
            for target in stmt.targets:
                self.assign_atom(target, value, stmt)
            return
        target = stmt.targets[0]
        if isinstance(target, (ast.Tuple, ast.List)) and not all(isinstance(t, ast.Name) for t in target.elts):
            # self.W, self.b = W, b; (a, b), c = ...: every value first, then each target
            if any(isinstance(t, ast.Starred) for t in target.elts):
                return self.assign_starred(target, stmt)
            if isinstance(stmt.value, (ast.Tuple, ast.List)) and len(stmt.value.elts) == len(target.elts):
                atoms = [self.value(v) for v in stmt.value.elts]
            else:
                whole = self.expr(stmt.value)
                self.check_unpacking(whole, len(target.elts), stmt)
                atoms = list(whole.items) if isinstance(whole, Pack) and len(whole.items) == len(target.elts) \
                    else [self.emit(rules.lookup(operator.getitem), [whole, Const(k)], {}, stmt, None)
                          for k in range(len(target.elts))]
            overwritten = self.carried_targets(target)
            atoms = [self.read_before_stores(atom, overwritten, stmt) for atom in atoms]
            for k, (elt, atom) in enumerate(zip(target.elts, atoms)):
                self.check_views_pending(elt, atoms[k + 1:], stmt)
                self.assign_atom(elt, atom, stmt)
            return
        if isinstance(target, ast.Attribute):
            return self.assign_attribute(target, stmt.value)
        if isinstance(target, ast.Name) and isinstance(stmt.value, ast.Lambda):
            self.bind_static(target.id, self.local_function(stmt.value), stmt)
        elif isinstance(target, ast.Name) and isinstance(stmt.value, ast.IfExp) and \
                (self.function_like(stmt.value.body) or self.function_like(stmt.value.orelse)):
            self.statement(_as_if_statement(target, stmt.value))  # act = np.tanh if c else relu: set in branches
        elif isinstance(target, ast.Name):
            self.assign(target.id, stmt.value)
        elif isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(t, ast.Name) for t in target.elts):
            self.assign_tuple(target, stmt.value)
        elif isinstance(target, ast.Subscript):
            self.assign_subscript(target, stmt.value)
        else:
            raise self.unsupported(target, f"assignment to {_describe(target)} is not supported",
                                   "assign to a plain local name")

    def assign_starred(self, target, stmt):
        """`first, *rest = xs` (or `a, *mid, z = ...`): the named items by position, the starred name a list
        of the ones between, as Python binds them."""
        stars = [k for k, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
        if len(stars) > 1:
            raise self.unsupported(target, "two starred names in one assignment", None)
        star, after = stars[0], len(target.elts) - stars[0] - 1
        whole = self.expr(stmt.value)
        self.check_unpacking(whole, star + after, stmt, starred=True)
        if isinstance(whole, Pack) and len(whole.items) >= star + after:
            items = list(whole.items)
            middle = Pack(tuple(items[star:len(items) - after]), "list")
            parts = items[:star] + [middle] + items[len(items) - after:]
        else:
            def item(k):
                return self.emit(rules.lookup(operator.getitem), [whole, Const(k)], {}, stmt, None)
            between = self.emit(rules.lookup(operator.getitem), [whole, Const(slice(star, -after or None))], {},
                                stmt, None)
            middle = self.emit(rules.lookup(list), [between], {}, stmt, None)
            parts = [item(k) for k in range(star)] + [middle] + [item(k - after) for k in range(after)]
        overwritten = self.carried_targets(target)
        parts = [self.read_before_stores(part, overwritten, stmt) for part in parts]
        for elt, part in zip(target.elts, parts):
            self.assign_atom(elt.value if isinstance(elt, ast.Starred) else elt, part, stmt)

    def stmt_Unpacks(self, stmt):
        """frontend/normalize.py's `Unpacks`: the check of `a, b = v` in a `try` block, before the names are bound."""
        self.check_unpacking(self.expr(stmt.value), stmt.count, stmt, stmt.starred)

    def check_unpacking(self, whole, count, node, starred=False):
        """`a, b = whole` (`a, *rest = whole`: `starred`): Python raises ValueError where `whole` has not `count`
        items (at least `count`), which reading each item by its index would not: checked now where the items
        are known, else when the code runs."""
        if isinstance(whole, (Pack, Const)):
            try:
                check_unpack(whole.items if isinstance(whole, Pack) else whole.value, count, starred)
            except ValueError as error:
                if not self.in_a_branch():
                    raise self.unsupported(node, f"this assignment always raises ValueError: {error}",
                                           "unpack into as many names as the value has items") from None
                # (in a branch the code may not take: numpy-ml's `calc_conv_out_dims` unpacks a 3-D kernel's
                #  shape under `if len(X_shape) == 3`, given a 4-D one; raised when the code runs, as Python does)
                whole = self.emit(rules.lookup(make_tuple), list(whole.items), {}, node, None) \
                    if isinstance(whole, Pack) else whole
            else:
                return
        self.emit_multi(rules.lookup(check_unpack), [whole, Const(count), Const(starred)], {}, node, 0, [])

    def in_a_branch(self) -> bool:
        """Whether the statement being lowered is in a branch or loop (here or in a caller of this helper)."""
        lowerer = self
        while lowerer is not None:
            if lowerer.open_constructs:
                return True
            lowerer = getattr(lowerer, "caller", None)
        return False

    def assign_atom(self, target, atom, stmt):
        """`target = <atom already computed>`, for any target an assignment may have."""
        holder = self.namer.invented("value").name
        self.env[holder] = atom
        try:
            self.stmt_Assign(ast.copy_location(ast.Assign([target], ast.copy_location(
                ast.Name(holder, ast.Load()), stmt.value)), stmt))
        finally:
            del self.env[holder]

    def stmt_AnnAssign(self, stmt):
        if stmt.value is None or not isinstance(stmt.target, ast.Name):
            raise self.unsupported(stmt, "an annotation without a value is not supported", "give it a value")
        self.assign(stmt.target.id, stmt.value)

    def stmt_AugAssign(self, stmt):
        if isinstance(stmt.target, ast.Subscript):
            return self.assign_subscript(stmt.target, stmt.value, BINOPS.get(type(stmt.op)))
        if isinstance(stmt.target, ast.Attribute):  # self.steps += 1 is self.steps = self.steps + 1
            load = ast.copy_location(ast.Attribute(stmt.target.value, stmt.target.attr, ast.Load()), stmt.target)
            value = ast.copy_location(ast.BinOp(load, stmt.op, stmt.value), stmt)
            current = self.expr(load)
            if isinstance(current, Var) and self.held_elsewhere(current):  # `layer = Layer(w)`, `layer.W -= d`:
                self.emit_multi(rules.lookup(number_item), [  # NumPy changes the array `w` holds too (a number is
                    current, Const(ast.unparse(stmt)), Const(ast.unparse(stmt.target))], {}, stmt, 0, [])  # rebound)
            elif isinstance(current, Var) and self.names_reaching(current):  # (the same in a loop, whose attribute
                reaching = self.names_reaching(current)  # may be `w`'s array when it runs)
                self.emit_multi(rules.lookup(not_shared), [current, Pack(tuple(var for _, var in reaching), "tuple"),
                                                           Const(ast.unparse(stmt)), Const(ast.unparse(stmt.target)),
                                                           Const(tuple(name for name, _ in reaching))], {}, stmt, 0, [])
            return self.assign_attribute(stmt.target, value)
        if not isinstance(stmt.target, ast.Name):
            raise self.unsupported(stmt.target, "this augmented assignment target is not supported",
                                   "assign to a name or an array element")
        name = stmt.target.id
        if isinstance(self.env.get(name), KnownItems) and isinstance(stmt.op, (ast.Add, ast.Mult)):
            joined = self.known_joined(ast.copy_location(ast.BinOp(ast.Name(name, ast.Load()), stmt.op, stmt.value),
                                                         stmt))
            if joined is not None:  # fs += [np.tanh] on a list of functions: changed in place, known one by one
                self.check_sole_holder(name, self.env[name], f"{name} {_OPSYM[type(stmt.op)]}= ...", stmt,
                                       f"build a new list instead: {name} = {name} {_OPSYM[type(stmt.op)]} ...")
                return self.store(name, joined, stmt)
        current = self.read_name(stmt.target)
        fn = BINOPS.get(type(stmt.op))
        if fn is None:
            raise self.unsupported(stmt, "this augmented assignment operator is not supported")
        if isinstance(current, Var) and self.argument_shown(current) is not None \
                and not self.sole_name(name, self.view_base(current)):  # `v = x[:2]; v *= s`, `x` read after:
            self.copy_argument_shown(current, stmt)  # the argument copied first, the write put back into it
        if self.healed_base(current) is not None and current not in self.params:  # inner = u[1:-1]; inner += d:
            #   NumPy writes into `u` too (a helper's parameter: its caller's array, changed as such below)
            whole = ast.copy_location(ast.Subscript(ast.copy_location(ast.Name(name, ast.Load()), stmt.target),
                                                    ast.Constant(Ellipsis), ast.Store()), stmt.target)
            return self.assign_subscript(whole, stmt.value, fn)  # as `inner[...] += d`, put back into `u`
        value = self.expr(stmt.value)  # evaluated first, as Python does (`total += total`)
        cls = self.types.get(current) if isinstance(current, Var) else None
        if cls is not None and users_class(cls) and not issubclass(cls, (tuple, list, dict)):
            in_place = f"__i{OPERATOR_METHODS.get(fn, '')}__"  # v += w on an object of the user's class: its
            method = self.special_method(current, in_place, stmt)  # __iadd__, else v = v + w (__add__)
            result = self.operator_method(method, in_place, current, value, stmt) if method else None
            if result is None or isinstance(result, Const) and result.value is NotImplemented:
                result = self.binary(fn, current, value, stmt, None)
            return self.store(name, result, stmt)
        if isinstance(current, Var) and (current in self.root_params or current in self.views and self.view_base(
                current) in self.root_params) and self.sole_name(name, self.view_base(current)) \
                and not (current in self.params and self.call_stack):
            self.emit_multi(rules.lookup(writable_argument), [current, Const(ast.unparse(stmt))], {}, stmt, 0, [])
            # x += v on an argument (or on `x = np.asarray(x)`, a view of it, the argument reached by no other
            # name): the new value, computed apart from the caller's array (docs/syntax.md)
        elif isinstance(current, Var) and current in self.params:  # a helper's parameter: the caller's value
            self.changes_callers_array(name, current, stmt)
        elif isinstance(current, Var) and current in self.item_origin and self.callers_passed(name) is None \
                and self._holders(*self.item_origin[current]) and not self.generated_code():
            return self.augmented_item_name(name, current, fn, value, stmt)  # h = hs[t - 1]; h += v
        elif isinstance(current, Var) and current not in self.fresh and self.container_kind(current) is None and (
                current not in self.views or isinstance(stmt.value, ast.Tuple)):  # shape += (2, 2): a tuple is rebound;
            self.emit_multi(rules.lookup(number_item), [current, Const(ast.unparse(stmt)), Const(name)], {}, stmt, 0, [])  # an array raises
        elif isinstance(current, Var) and current not in self.fresh:
            raise self.unsupported(
                stmt, f"`{name} {_OPSYM.get(type(stmt.op), '?')}= ...` would change `{name}` in place, "
                      f"and `{name}` may share memory with an argument or another variable",
                f"write `{name} = {name} {_OPSYM.get(type(stmt.op), '?')} ...` to make a new array")
        others, maybe = (), {}
        if isinstance(current, Var) and current in self.fresh and (
                current in self.held_in or not self.sole_name(name, current)
                or any(self.shared.get(name) == Var(held) for _, (held, how) in self._carried_all() if how == "+=")):
            others = self.other_names_only(name, current)
            if others is None:  # held elsewhere too: a number (a counter) is rebound, as Python does; an array
                self.emit_multi(rules.lookup(number_item), [current, Const(ast.unparse(stmt)), Const(name)], {}, stmt,
                                0, [])  # raises when it runs
                others = ()
            for other in others:  # `b = a; a += d`: NumPy changes the array `b` holds too
                self._carry_written(other, current)
        elif isinstance(current, Var) and current in self.fresh:  # `prev = h` in a loop, then `h += v`:
            for other in self.names_maybe_sharing(name, current, stmt, self.aliases_read_after(name, current, stmt)):
                if not self.may_be_changed_by(self.env[other], current, stmt.op):
                    continue
                self._carry_written(other, self.env[other])  # (a loop around rebinds it: carried)
                maybe[other] = self.emit(rules.lookup(same_object), [  # `prev` is `h`'s array when the code runs?
                    self.env[other], current, Const(ast.unparse(stmt)), Const(name), Const(other)], {}, stmt, None)
        if isinstance(current, Var):
            self.wrote_in_place(self.shared.get(name, current), "+=")
        target = self.shared.get(name, name)
        result = self.binary(fn, current, value, stmt, target)
        self.store(name, result, stmt)
        for other in others:  # (an array's new value; a number's left as it was, as Python rebinds `a` only)
            self.store(other, self.emit(rules.lookup(in_place_result), [current, result], {}, stmt,
                                        self.shared.get(other, other)), stmt)
        for other, same in maybe.items():  # then it holds the new value too, as NumPy changed that array
            self.store(other, self.emit(rules.lookup(changed_with), [same, result, self.env[other]], {}, stmt,
                                        self.shared.get(other, other)), stmt)

    def augmented_item_name(self, name, current, fn, value, stmt):
        """`h = hs[t - 1]`, then `h += v`: NumPy changes the array the list or dict holds, which then holds `h`'s
        new value, where `h` is still that array when the code runs (a number item stays as it was, as Python
        rebinds `h` only; so does an item `h` was since rebound from). Checked then that no other item, name or
        view shows that array (write_through_item)."""
        self.wrote_in_place(self.shared.get(name, current), "item")  # (in a loop, before the pass rebinds it)
        container, key = self.item_origin[current]
        there = self.emit(rules.lookup(operator.getitem), [container, key if isinstance(key, Var) else Const(key)],
                          {}, stmt, None)
        text = ast.unparse(stmt)
        same = self.emit(rules.lookup(same_object), [there, current, Const(text), Const(name),
                                                     Const("the list or dict it was read out of")], {}, stmt, None)
        result = self.binary(fn, current, value, stmt, None)
        held = self.emit(rules.lookup(changed_with), [same, result, there], {}, stmt, None)  # (where `h` is still
        self.write_through_item(current, held, stmt, there)  # that array: rebound since, or a number, not)
        self.store(name, result, stmt)
        self.stale.pop(self.env[name], None)  # (its var, in a loop, is the one that held the item before)
        self.item_origin[self.env[name]] = self.item_origin[held]  # an array: that item still (a number is not,
        #                                      and the next change's same_object test leaves the item as it is)

    def may_be_changed_by(self, other, current, op) -> bool:
        """Whether `other` may be the object `current op= v` changes in place: not a tuple (rebound), nor a dict
        but by `|=`, nor a list or dict `current` is an item of (`h = hs[t - 1]`, then `h += v`: the item)."""
        kind = self.container_kind(other)
        if kind == "tuple" or kind == "dict" and not isinstance(op, ast.BitOr):
            return False
        if kind in ("list", "dict"):
            link = current
            while link in self.views:
                link = self.views[link]
                if link is other:
                    return False
        return True

    def held_elsewhere(self, var) -> bool:
        """Whether a name (of this function or its callers), a list or dict, or a second attribute holds `var`,
        the value of an attribute changed by `+=`."""
        frame = self
        while frame is not None:
            if any(atom is var or isinstance(atom, KnownItems) and _holds(atom, var) for atom in frame.env.values()):
                return True
            frame = frame.caller
        return sum(value is var or isinstance(value, KnownItems) and _holds(value, var)
                   for value, _ in self.attributes.values()) > 1

    def names_reaching(self, var) -> list:
        """[(name, var)]: the names (of this function or its callers) whose arrays `var` may have been assigned from
        (`layer.w` carried through a loop from `w`'s array)."""
        reach, found, frame = self.alias_reach(var), [], self
        while frame is not None:
            found += [(name, atom) for name, atom in frame.env.items() if isinstance(atom, Var) and atom is not var
                      and atom in reach]
            frame = frame.caller
        return found

    def other_names_only(self, name, current):
        """The other names holding array `current` (`b = a`, then `a += d`), where only names hold it (no list,
        dict, attribute, view or loop-carried alias: those are checked when the code runs), else None."""
        if current in self.held_in or any(self.shared.get(name) == Var(held) for _, (held, how)
                                          in self._carried_all() if how == "+="):
            return None
        others = sorted(other for other, atom in self.env.items() if other != name and atom is current)
        views = any(atom is not current and isinstance(atom, Var) and self.view_base(atom) is current
                    for atom in self.env.values())
        return None if views or not others else others

    def changes_callers_array(self, name, current, stmt):
        """`total += x` (or `np.multiply(v, 2, out=total)`) in a helper on an array its caller passed: NumPy changes
        the caller's array and its views. They are not to be read again, unless written back (`_write_back`)."""
        self.check_not_free(name, current, stmt)
        self.written_params.setdefault(name, current)
        root = self.view_base(current)
        for var in [root, *(view for view in self.views if self.view_base(view) == root)]:
            self.stale.setdefault(var, (name, stmt, "callee"))

    def check_not_free(self, name, current, stmt):
        """`s *= 2` in a helper on an array it was given that the function did not make: its parameter's
        default (`s=np.ones(2)`), or an array of the module's: NumPy changes that array for every later
        call too, which tapegen's code (computing a new value) does not."""
        root = self.view_base(current)
        if root in self.free.values() and root not in self.root_params:
            raise self.unsupported(stmt, f"`{ast.unparse(stmt)}` changes in place an array the function did not "
                                         f"make (`{name}`'s default, or one of the module's), which keeps the "
                                         f"change for later calls: tapegen's code computes a new value instead",
                                   f"compute a new value (`{name} = {ast.unparse(ast.BinOp(stmt.target, stmt.op, stmt.value))}`)"
                                   f", and keep state between calls outside the differentiated function")

    def check_views_pending(self, target, later, stmt):
        """`a[:2], a[2:] = a[2:], a[:2]`: the values are read first, and a view among them (`a[:2]`) shows the
        first write when the second target is set, as NumPy's does; tapegen's would not. Checked when the code
        runs (`a[1], a[0] = a[0], a[1]` of a vector reads numbers, not views), raising where one is a view."""
        if not isinstance(target, ast.Subscript):
            return
        if isinstance(target.value, ast.Name):
            array = self.env.get(target.value.id)
        elif isinstance(target.value, ast.Attribute) and isinstance(target.value.value, ast.Name):  # h.a[:2]
            held = self.attributes.get((self.env.get(target.value.value.id), target.value.attr))
            array = held[0] if held is not None else None
        else:
            return
        base = self.view_base(array)
        pending = [(k, atom) for k, atom in enumerate(later) if isinstance(atom, Var) and atom in self.views
                   and self.view_base(atom) == base]
        if not pending or not isinstance(base, Var):
            return
        values = stmt.value.elts[len(stmt.value.elts) - len(later):] if isinstance(stmt.value, (ast.Tuple, ast.List)) \
            else [stmt.value] * len(later)
        self.emit_multi(rules.lookup(not_shared), [base, Pack(tuple(atom for _, atom in pending), "tuple"),
                                                   Const(ast.unparse(stmt)), Const(ast.unparse(target.value)),
                                                   Const(tuple(ast.unparse(values[k]) for k, _ in pending))],
                        {}, stmt, 0, [])

    def rebound_after(self, other, stmt, name) -> bool:
        """Whether `other` holds no value yet at `stmt` writing into `name` in a loop (set later in the pass:
        `r = M[i]` after `M[i] = v`), and its value from the pass before is never read: the body sets it each pass.
        Raises where it may hold an earlier pass's value, read later (set in a branch), which a check when the code
        runs cannot see here."""
        construct = self.unset_names.get(self.env[other])
        if construct is None:
            return False
        sets = [(s.end_lineno, s.end_col_offset) for s in construct.body if isinstance(s, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == other for t in s.targets)]
        if sets:  # (bound where its statement ends, after its value: `r = np.tanh(z, out=M[:, 1])` holds nothing
            #        at that write; set before the write in the pass, `prev = vel` then `vel += a`, it holds a value)
            return min(sets) > (getattr(stmt, "lineno", 0), getattr(stmt, "col_offset", 0))
        raise self.unsupported(stmt, f"`{other}` may hold this array from an earlier pass of the loop (it is set "
                                     f"in a branch), and this assignment changes it in place",
                               f"keep a copy in it: {other} = {name}.copy()")

    def names_maybe_sharing(self, name, current, stmt, aliases=()) -> list:
        """The other names, read after `stmt`, that may hold the array `name` holds (`current`) when the code runs,
        through assignments in a loop or branch (`aliases`, or `prev = vel` later in the pass), and hold a value
        there (`rebound_after`)."""
        var = self.shared.get(name, current)
        later = {other for key, entries in self.carried.items() if isinstance(key, tuple) and key[0] == "aliases"
                 for held, other in entries if held == var.name}
        others = sorted({other for other in later if other != name and isinstance(self.env.get(other), Var)
                         and self.read_after(other, stmt)} | set(aliases))
        return [other for other in others if not self.rebound_after(other, stmt, name)]

    def check_not_shared(self, name, current, stmt, aliases=(), index=None):
        """`name[i] = v` on an array other names may hold too when the code runs (names_maybe_sharing): checked
        then, by what they hold (with `index`, the part `name[index]` written: `h = H[t - 1]`, then `H[t] = v`)."""
        others = self.names_maybe_sharing(name, current, stmt, aliases)
        if others:
            text = Const(ast.unparse(stmt) if isinstance(stmt, ast.stmt) else f"{ast.unparse(stmt)} = ...")
            held = Pack(tuple(self.env[o] for o in others), "tuple")
            if index is None:
                self.emit_multi(rules.lookup(not_shared), [current, held, text, Const(name), Const(tuple(others))],
                                {}, stmt, 0, [])
            else:
                self.emit_multi(rules.lookup(region_not_shared), [current, index, held, text, Const(name),
                                                                  Const(tuple(others))], {}, stmt, 0, [])

    def assign_attribute(self, target, value_node):
        """`obj.name = value`: set on the object when the code runs, and read back here as this value."""
        self.set_static_attribute(target)
        local = self.local_function_held(target.value)
        if local is not None:  # ML-From-Scratch's `self.regularization.grad = lambda x: 0`, on a lambda made here
            if self.open_constructs:
                raise self.unsupported(target, f"`{ast.unparse(target)} = ...` sets an attribute of a function made "
                                               f"in the differentiated function inside a loop or branch, which "
                                               f"tapegen cannot follow", "set it where the function is made")
            self.function_attributes[(local, target.attr)] = self.value(value_node)  # (called where read)
            return
        base = self.expr(target.value)
        if target.attr == "shape" and isinstance(target.value, ast.Name) and isinstance(base, Var) \
                and base not in self.types and base not in self.live:  # a.shape = (3, 1): a reshaped, in place
            name = target.value.id
            if not self.sole_name(name, base):
                raise self.unsupported(target, f"`{name}.shape = ...` reshapes the array another name holds too, "
                                               f"which tapegen cannot follow", f"{name} = {name}.reshape(...)")
            shape = self.expr(value_node)
            return self.store(name, self.emit(rules.lookup(np.reshape), [base, shape], {}, target,
                                              self.shared.get(name, name)), target)
        if target.attr in ("real", "imag", "flat") and isinstance(target.value, ast.Subscript) and isinstance(base, Var) \
                and base not in self.types and base not in self.live:  # z[:2].real = v: written into z's items
            if target.attr == "flat":
                raise self.unsupported(target, f"`{ast.unparse(target)} = ...` writes into the array in place, which "
                                               f"tapegen cannot follow", "assign the items: a[...] = ...")
            read = lambda: copy.deepcopy(target.value)  # noqa: E731  (z[:2], read again)
            part = ast.Attribute(read(), target.attr, ast.Load())
            if target.attr == "real":  # z[:2] = z[:2] - z[:2].real + v
                new = ast.BinOp(ast.BinOp(read(), ast.Sub(), part), ast.Add(), value_node)
            else:  # z[:2] = z[:2] - 1j * z[:2].imag + 1j * v
                new = ast.BinOp(ast.BinOp(read(), ast.Sub(), ast.BinOp(ast.Constant(1j), ast.Mult(), part)), ast.Add(),
                                ast.BinOp(ast.Constant(1j), ast.Mult(), value_node))
            stored = ast.Subscript(target.value.value, target.value.slice, ast.Store())
            return self.statement(_located_where_unset(ast.Assign([stored], new), target))
        if target.attr in ("real", "imag", "flat") and isinstance(target.value, ast.Name) and isinstance(base, Var) \
                and base not in self.types and base not in self.live:  # z.real = v: written into z, in place
            name = target.value.id
            if target.attr == "flat" or not self.sole_name(name, base):
                raise self.unsupported(target, f"`{name}.{target.attr} = ...` writes into the array in place"
                                               f"{' that another name holds too' if target.attr != 'flat' else ''}, "
                                               f"which tapegen cannot follow", f"{name}[...] = ... (or make a new "
                                                                              f"array: {name} = ...)")
            value = self.expr(value_node)
            if target.attr == "real":  # z - z.real + v: v + 1j * z.imag (for a real array, v in its shape)
                kept = self.binary(operator.sub, base, self.emit(rules.lookup(np.real), [base], {}, target, None),
                                   target, None)
            else:  # z - 1j * z.imag + 1j * v: z.real + 1j * v
                imag = self.binary(operator.mul, Const(1j), self.emit(rules.lookup(np.imag), [base], {}, target,
                                                                      None), target, None)
                kept, value = self.binary(operator.sub, base, imag, target, None), \
                    self.binary(operator.mul, Const(1j), value, target, None)
            return self.store(name, self.binary(operator.add, kept, value, target, self.shared.get(name, name)),
                              target)
        cls = self.class_of(base)
        prop = inspect.getattr_static(cls, target.attr, None) if cls is not None else None
        if isinstance(prop, property):  # s.w = v through a property of the user's class: its setter
            if user_function(prop.fset) is None:
                raise self.unsupported(target, f"`{cls.__name__}.{target.attr}` is a property "
                                               f"{'without a setter' if prop.fset is None else 'whose setter tapegen cannot read'}"
                                               f": setting it is not followed", _PLAIN_HINT)
            self.bind_method(cls, target.attr, prop)  # (`C.w = property(...)` makes the code again)
            self.inline(user_function(prop.fset), target, [base, self.value(value_node)], {}, receiver=cls)
            return
        self.set_attribute(base, target, self.value(value_node))  # self.act_fn = activation: stays known

    def local_function_held(self, node):
        """The lambda or local def `node` (a name, or a name's attribute) holds, where it was made in the
        differentiated function; else None."""
        if isinstance(node, ast.Name):
            held = self.env.get(node.id)
            return held if isinstance(held, LocalFunction) else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.env:
            owner = self.env[node.value.id]
            assigned = self.attributes.get((owner, node.attr)) if isinstance(owner, Var) else None
            if assigned is not None and isinstance(assigned[0], LocalFunction) and self.is_open(assigned[1]):
                return assigned[0]
        return None

    def set_static_attribute(self, target):
        """`C.count = v` (`C.count += 1`) on a class or module of the user's: tapegen reads a number or string it
        holds as a constant when it transforms the function, so one the function also reads is refused (it
        would read the value from before the call's own write)."""
        holder = self.static(target.value)
        if not isinstance(holder, (type, types.ModuleType)) or library_object(holder):
            return
        if any(kind == "attr" and where is holder and key == target.attr for kind, where, key, _ in self.bindings):
            raise self.static_attribute_refused(target)
        self.static_set[id(holder), target.attr] = target

    def static_attribute_refused(self, node):
        text = ast.unparse(node if isinstance(node, ast.Attribute) else node.value)
        return self.unsupported(node, f"`{text}` is set in the function and read in it too: tapegen reads what a "
                                      f"class or module holds when it transforms the function, so the read would "
                                      f"see the value from before the call", "keep what changes from call to call in "
                                      "an object's attribute (`STATE = State()`, then `STATE.count += 1`)")

    def set_attribute(self, base, target, value):
        cls = self.class_of(base)
        if cls is not None:
            self.check_attribute_access(cls, target, target.attr)
        self.forget_shadowed(base, target)
        if isinstance(value, LocalFunction) and hasattr(value.node, "partial_parts") and (
                (base, target.attr) in self.shared_attributes or self.open_constructs):
            value = self.partial_value(value, target)  # `self._fn = partial(...)` in a branch: made as written
        if isinstance(value, Pack) and value.kind in ("list", "tuple"):  # self.cache = []: a list of its own
            value = self.emit(rules.lookup(make_list if value.kind == "list" else make_tuple), list(value.items),
                              {}, target, None)
        written = value.atom if isinstance(value, StaticValue) else value.var if isinstance(value, Choice) else \
            None if isinstance(value, LocalFunction) and base in self.made_objects else value  # (a lambda on an
        #     object made here: called where read, as it is known; on another object, refused as a value)
        if isinstance(value, KnownItems) and value.kind in ("list", "tuple", "dict"):  # self.layers = [Dense(..),
            atoms = [item.atom if isinstance(item, StaticValue) else item for item in value.items]  # ..]: known by
            maker, keys = {"list": (make_list, []), "tuple": (make_tuple, []),  # item; the object holds the list
                           "dict": (make_dict, [Const(value.keys)])}[value.kind]  # too when the code runs (unless
            written = self.emit(rules.lookup(maker), keys + atoms, {}, target, None) \
                if all(isinstance(a, (Var, Const)) for a in atoms) else None  # an item is a function made here;
            # a dict comprehension of layers, `self.projections = {k: Dropout(...) for k in "QKVO"}`, too)
        key = (base, target.attr)
        if key in self.stale_attributes:  # `self.cache = C` after `C[k] = v`: holds the changed dict again (set
            within = tuple(map(id, self.open_constructs))  # where every path from the change passes: not in a
            if self.stale_attributes[key][2][:len(within)] == within:  # branch or loop opened after it)
                del self.stale_attributes[key]
        if key not in self.shared_attributes and self._carry_needed(key, value, target):
            return  # the same function again: nothing changes
        if key in self.shared_attributes and written is not None:  # carried through a loop or branch
            shared = self.shared_attributes[key]
            if written is not shared:
                self.emit(rules.lookup(assign_primitive), [written], {}, target, shared)
            written = value = shared
        if written is not None:  # (a helper's default function has no value in generated code: not set)
            self.emit_multi(_opaque("setattr", setattr), [base, Const(target.attr), written], {}, target, 0, [])
        if key not in self.shared_attributes:
            self.attributes[key] = (value, self.current)

    def forget_shadowed(self, base, target):
        """`ms[0].v = x` sets `.v` on an object tapegen may know under another name (`m = M(); ms = [m]`): what
        it knew `m.v` to hold is forgotten, so `m.v` is read when the code runs (where a derivative would have to
        flow through that read, the read is refused, as one through an untied name is); it read the value from
        before the write. Objects known to differ (each made here, or a module's) are left as they are."""
        if isinstance(target.value, (ast.Name, ast.Attribute)) and \
                isinstance(self.static(target.value), (type, types.ModuleType)):
            return  # (`C.scale = v` on a class or module: set_static_attribute's)
        attr, mine = target.attr, self.types.get(base)
        for key in [key for key in self.attributes if key[1] == attr and key[0] is not base]:
            owner = key[0]
            if base in self.made_objects and (owner in self.made_objects or owner in self.live) or \
                    owner in self.made_objects and base in self.live or \
                    base in self.live and owner in self.live and self.live[base] is not self.live[owner]:
                continue  # (a new object is not another one; two of the module's are checked before each call)
            theirs = self.types.get(owner)
            if mine is not None and theirs is not None and not (issubclass(mine, theirs) or issubclass(theirs, mine)):
                continue  # objects of unrelated classes
            if key in self.shared_attributes:
                raise self.unsupported(target, f"`{ast.unparse(target)} = ...` may set the `.{attr}` of an object "
                                               f"this loop or branch also reaches under another name, and tapegen "
                                               f"cannot tell whether it is that object",
                                       f"set it through the name the object was made or read as")
            del self.attributes[key]

    def wrote_in_place(self, var, how):
        """`var += v` or `var[i] = v` (NumPy changes the array in place), or `var.append(v)`: noted for each loop
        around it."""
        for construct in self.open_constructs:
            if var not in construct.rebound:
                construct.early_writes.setdefault(var, how)

    def _carried_all(self):
        return ((construct, entry) for construct, entries in self.carried.items() for entry in entries)

    def is_open(self, block) -> bool:
        """Whether statements lowered now run after `block`'s, on every path through it (it has not ended)."""
        return any(block is open_block for open_block in self.outer_blocks) or \
            any(block is open_block for open_block in self.blocks)

    def crossed_constructs(self, block) -> set:
        """The numbers of the loops and branches open now that `block` (still open) is outside of."""
        chain = self.outer_blocks + self.blocks
        at = next((k for k, open_block in enumerate(chain) if open_block is block), 0)
        return {self.block_owner.get(id(open_block)) for open_block in chain[at + 1:]} - {None}

    def _carry_needed(self, key, value, node) -> bool:
        """`obj.attr = v` inside loops or branches, reached through a call (`cell.forward(x)` in a loop setting
        `self.h`), where `obj.attr` was set before them: each must carry the attribute, as it carries one its
        own body assigns, or a read in the next pass (or after a branch) would see the value from before.
        Raises Recarry to lower the function again with the attribute carried. True: `v` is the function the
        attribute already holds (nothing to carry)."""
        held = self.attributes.get(key)
        chain = self.outer_blocks + self.blocks
        if held is None and isinstance(key[0], Var):  # an attribute of an object made before (or a global
            since = self.var_block.get(key[0], chain[0])  # one): the constructs since carry its first value
            at = next((k for k, block in enumerate(chain) if block is since), None)
        else:
            at = next((k for k, block in enumerate(chain) if held is not None and block is held[1]), None)
        if at is None or at == len(chain) - 1 or not isinstance(key[0], Var):
            return False
        constructs = {self.block_owner.get(id(block)) for block in chain[at + 1:]} - {None}
        if not constructs:
            return False
        base, attr = key
        if held is not None and isinstance(held[0], (StaticValue, LocalFunction, KnownItems)) or \
                isinstance(value, (StaticValue, LocalFunction, KnownItems)):
            if held is not None and isinstance(held[0], StaticValue) and isinstance(value, StaticValue) \
                    and held[0].obj is value.obj:
                return True
            text = ast.unparse(node)
            raise self.unsupported(node, f"`{text}` gets another function inside a loop or branch (in a call), "
                                         f"while the code around reads the one set before", f"set `{text}` once, "
                                         f"before the loop or branch, or pass the function as an argument")
        missing = {c: {(base.name, attr)} for c in constructs if (base.name, attr) not in self.carried.get(c, ())}
        if missing:
            raise Recarry(missing)
        return False

    def assign(self, name, value_node):
        """`name = value`, keeping what the transform knows of the value: `tanh = np.tanh`, `fs = [np.sin, f]`,
        `f = make(a)` (a function made here), `d = scipy.stats.norm(mu, sigma)` (calls d.logpdf(x) are
        norm.logpdf's)."""
        target = self.shared.get(name)
        chosen = self.decided_operand(value_node) if isinstance(value_node, ast.BoolOp) else value_node
        if chosen is not value_node:  # integrate = getattr(np, "trapz", None) or np.trapezoid: the one it is
            return self.assign(name, chosen)
        held = self.global_item(value_node)
        if isinstance(value_node, (ast.Name, ast.Attribute, ast.BoolOp)) or self.known(value_node) is not None \
                or _function_like(held) or _users_class_object(held) or held is None and \
                self.global_functions(value_node) is not None:  # (act = ACTIVATIONS["relu"]: known now, or one
            #                                                       of them: [self.activation], a key computed then)
            value = self.value(value_node, target)
        elif isinstance(value_node, (ast.List, ast.Tuple, ast.Dict)):
            value = self.display_value(value_node, target=target or name)
        elif isinstance(value_node, ast.Call):
            value = self.frozen(value_node) or self.made_function(value_node, target=target or name)
            if isinstance(value, LocalFunction) and hasattr(value.node, "partial_parts") and name in self.shared:
                value = self.partial_value(value, value_node)  # `fn = partial(f, a)` in a branch: made as written
        else:
            value = self.expr(value_node, target=target or name)
        self.store(name, value, value_node)
        self.pass_iterator(value_node, value, name)

    def decided_operand(self, node):
        """The operand `a or b` (`a and b`) is, where the operands before it are constants or `getattr`/`hasattr`
        calls the transform decides (`getattr(np, "trapz", None) or np.trapezoid`); else `node`."""
        for k, operand in enumerate(node.values[:-1]):
            if not (isinstance(operand, ast.Constant) or isinstance(operand, ast.Call) and self.static(
                    operand.func) in (getattr, hasattr) and len(operand.args) >= 2):
                return node
            value = self.expr(operand)
            if not (isinstance(value, Const) and isinstance(value.value, (type(None), bool, int, float, str))):
                return node if k == 0 else ast.copy_location(ast.BoolOp(node.op, node.values[k:]), node)
            if bool(value.value) != isinstance(node.op, ast.And):
                return operand  # `False and ...`, `None or f` passes on; `f or ...` with f truthy is f
        return node.values[-1]

    def pass_iterator(self, value_node, value, name):
        """`g = (f(v) for v in xs)` (or `h = g`, g not read yet): the name holds the generator, to be read once
        (a name assigned in a loop holds a var of its own there)."""
        made_in = self.iterators.get(value, False) if isinstance(value, Var) else False
        if made_in is None and isinstance(value_node, ast.Name):  # h = g: h holds it, g read no more
            made_in = self.read_as_alias.pop(value, False)
        if made_in not in (None, False) and isinstance(self.env.get(name), Var):
            self.iterators[self.env[name]] = made_in
            if self.env[name] != value:
                self.iterators[value] = None

    def assign_tuple(self, target, value_node):
        names = [t.id for t in target.elts]
        if isinstance(value_node, (ast.Tuple, ast.List)) and len(value_node.elts) == len(names):
            atoms = [self.value(v) for v in value_node.elts]  # every right-hand side first (pi, sqrt = np.pi, np.sqrt)
            targets = {self.shared[n] for n in names if n in self.shared}
            read = [self.read_before_stores(a, targets, value_node) for a in atoms]  # a, b = b, a: read both
            #                                                                          before writing either
            for before, copy in zip(atoms, read):
                if copy is not before and before in self.types:  # an object: its class and attributes too
                    self.types[copy] = self.types[before]
                    self.attributes.update({(copy, attr): held for (base, attr), held in list(self.attributes.items())
                                            if base is before})
            for name, atom in zip(names, read):
                self.store(name, atom, value_node)
            return
        if isinstance(value_node, ast.Call):
            prim = self.callee_primitive(value_node)
            if prim is not None and prim.outputs == len(names) > 1:  # `a, = f(x)` unpacks f's one value
                outs = self.call(value_node, outputs=len(names), targets=[self.shared.get(n, n) for n in names])
                for name, var in zip(names, outs):
                    self.store(name, var, value_node)
                return
        targets = {self.shared[n] for n in names if n in self.shared}
        known = self.known(value_node)
        if isinstance(known, KnownItems) and known.kind != "dict" and len(known.items) == len(names):
            parts = [self.read_before_stores(part, targets, value_node) for part in known.items]
            for name, part in zip(names, parts):  # `f, a = residuals` of `(f, a)`: f is known still
                self.store(name, part, value_node)
            return
        whole = self.expr(value_node)
        self.check_unpacking(whole, len(names), value_node)
        if isinstance(whole, Pack) and len(whole.items) == len(names):
            parts = [self.read_before_stores(part, targets, value_node) for part in whole.items]
            for name, part in zip(names, parts):  # (`h, cache = step(x, h)` returning `nh, (h, nh)`)
                self.store(name, part, value_node)
            return
        parts = [self.emit(rules.lookup(operator.getitem), [whole, Const(i)], {}, value_node, None)
                 for i in range(len(names))]
        for name, part in zip(names, parts):
            self.store(name, part, value_node)

    def carried_targets(self, target) -> set:
        """The vars a loop or branch carries the names and attributes (of names) of unpacking `target` in, which
        storing them overwrites (`h, *rest = ...`, `self.h, cache = ...`)."""
        found = set()
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and sub.id in self.shared:
                found.add(self.shared[sub.id])
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) \
                    and isinstance(self.env.get(sub.value.id), Var):
                held = self.shared_attributes.get((self.env[sub.value.id], sub.attr))
                if isinstance(held, Var):
                    found.add(held)
        return found

    def read_before_stores(self, atom, targets, node):
        """`atom`, about to be bound to a name of `a, b = ...`, read now where it is (or a list or tuple not yet made
        holds) a var a loop or branch carries another of those names in (`targets`), which storing that name
        overwrites: `h, cache = np.tanh(z), (h, 1.0)` in a loop keeps the `h` from before the statement."""
        if isinstance(atom, Var) and atom in targets:
            return self.emit(rules.lookup(assign_primitive), [atom], {}, node, None)
        if isinstance(atom, Pack) and any(v in targets for v in _vars(atom)):
            return Pack(tuple(self.read_before_stores(item, targets, node) for item in atom.items), atom.kind)
        return atom

    # --- expressions --------------------------------------------------------------------

    # --- emitting equations -------------------------------------------------------------

    def emit(self, prim: Primitive, args, kwargs, node, target):
        return self.emit_multi(prim, args, kwargs, node, 1, [target])[0]

    def emit_multi(self, prim: Primitive, args, kwargs, node, outputs, targets):
        for arg in (*args, *kwargs.values()):
            self.check_value(arg, node)
        if prim.differentiable and prim.name not in _OBJECT_SAFE and (prim.form != "opaque" or prim.fn not in _READS_NO_VALUES):
            self.check_not_read_whole(prim, args, kwargs, node)
        inputs = self.bind_arguments(prim, args, kwargs, node)
        if prim.name == "view_positions":
            self.check_put_back(*(atom for _, atom in inputs), node)
        return self.emit_bound(prim, inputs, node, outputs, targets)

    def emit_bound(self, prim: Primitive, inputs, node, outputs, targets):
        """`emit_multi` of inputs already bound to the primitive's parameters ((name, atom) pairs)."""
        targets = list(targets or []) + [None] * outputs
        outs = tuple(self._output_var(t) for t in targets[:outputs])
        reads = {v for _, atom in inputs for v in _vars(atom)}
        in_place = outs[-1] if prim.name in IN_PLACE else None  # the var the op updates, not replaces
        if in_place is not None:
            self.in_place_log.append(in_place)
        copies = [(o, self.namer.temp()) for o in outs if o in reads and o is not in_place]
        if copies:  # y = f(y) in a loop: compute into a temporary, then assign (rules read the old y)
            renamed = dict(copies)
            eqn_outs = tuple(renamed.get(o, o) for o in outs)
        else:
            eqn_outs = outs
        self.current.append(Eqn(prim, inputs, eqn_outs, self.span(node)))
        if prim.differentiable and prim.form != "opaque" and not (  # may carry a derivative (check_untied reads
                prim.name in ("make_list", "make_tuple", "make_dict") and not any(  # it): not `self.cache = {}`
                    v in self.computed or v in self.params or v in self.root_params
                    for _, atom in inputs for v in _vars(atom))):
            self.computed.update(outs)
        self._track_memory(prim, inputs, eqn_outs)
        self._track_containers(prim, inputs, outs + eqn_outs)
        for final, temp in copies:
            self.current.append(Eqn(rules.lookup(assign_primitive), (("x", temp),), (final,), self.span(node)))
            self._track_memory(rules.lookup(assign_primitive), (("x", temp),), (final,))
        return outs

    def check_attribute_access(self, cls, node, attr=None):
        """Refuses an object of class `cls` whose attributes tapegen cannot follow as it follows plain ones:
        one whose class changes how attributes are read or set (`__getattribute__`, `__setattr__`,
        `__delattr__`), or (`attr` given: that attribute) a descriptor of the class's other than a property
        (`functools.cached_property`, a user's `__get__`/`__set__`)."""
        if cls.__module__ in ("types", "builtins"):  # SimpleNamespace: plain attributes, in C
            return
        for special in ("__getattribute__", "__setattr__", "__delattr__"):
            own = inspect.getattr_static(cls, special, None)
            if own is not getattr(object, special) and not _frozen_dataclass_method(cls, own):
                raise self.unsupported(node, f"class {cls.__name__} defines `{special}`, which changes how its "
                                             f"attributes are read or set: tapegen follows plain attributes only "
                                             f"and cannot tell what this code reads", _PLAIN_HINT)
        described = _descriptor(cls, attr) if attr is not None else None
        if described is not None:
            raise self.unsupported(node, f"`{cls.__name__}.{attr}` is a {described}, which tapegen does not follow "
                                         f"(it would read or set the plain attribute instead)", _PLAIN_HINT)

    def check_not_read_whole(self, prim, args, kwargs, node, how=None):
        """Refuses `prim` reading an object of the user's class as a whole (`np.asarray(obj)`, `for v in obj`,
        `obj[k]`, a library function given it) when the function set its attributes to values that may carry
        derivatives: tapegen follows such an object through its attributes and methods only, so what `prim`
        computes from them would have no derivative."""
        for arg in (*args, *kwargs.values()):
            if not (isinstance(arg, Var) and arg in self.types) or issubclass(self.types[arg], tuple):
                continue
            carried = [attr for (holder, attr), (value, _) in self.attributes.items()
                       if holder is arg and isinstance(value, Var)]
            if carried:
                cls, how = self.types[arg].__name__, how or _protocol(prim)
                raise self.unsupported(node, f"`{ast.unparse(node)}` reads an object of class {cls} as a whole "
                                             f"(through {how}): tapegen follows such an object through "
                                             f"its attributes and methods only, so the derivatives its attributes "
                                             f"carry (`.{carried[0]}`) would be lost here",
                                       f"use the attributes themselves (`obj.{carried[0]}`), or call the method "
                                       f"this goes through yourself ({how})")

    def check_value(self, arg, node):
        """Refuses a function made in the differentiated function (a pullback, a lambda), used as a value."""
        if isinstance(arg, (LocalFunction, StaticValue)):
            self.as_atom(arg, node)
        elif isinstance(arg, (Pack, KnownItems)):
            for item in arg.items:
                self.check_value(item, node)

    def _generators_draw(self, prim, inputs) -> bool:
        """Whether `prim` is a sampler called on a Generator or RandomState this function made (`rng =
        np.random.default_rng(0)`, then `rng.standard_normal(n)`): a method of an object run as written, whose
        value is a new array (`_draws_new_array` tells of one it can see)."""
        receiver = inputs[0][1] if inputs and prim.fn is None and prim.name.startswith(".") else None
        made = self.made_as.get(receiver) if isinstance(receiver, Var) else None
        return made is not None and str(made[0]).rsplit(".", 1)[-1] in _GENERATOR_MAKERS \
            and prim.name[1:] not in _NOT_DRAWS

    def _output_var(self, target):
        var = target if isinstance(target, Var) else self.namer.user(target) if target else self.namer.temp()
        self.var_block.setdefault(var, self.current)  # an object made in a loop's body: made there, each pass
        return var

    def _track_memory(self, prim, inputs, outs):
        source = inputs[0][1] if inputs else None
        made = self.made_as.get(source) if prim.name == "assign" and isinstance(source, Var) else (prim.name,
                                                                                                 repr(inputs))
        for out in outs:
            self.made_as[out] = made if self.made_as.get(out, made) == made else None
        if prim.name == "view_positions" and outs:  # (gradient code putting back a write through a view)
            self.positions_of[outs[0]] = inputs[1][1]
        if isinstance(source, Pack) and len(source.items) == 1:  # np.atleast_1d(a): of one array, a view of it
            source = source.items[0]
        if prim.name == "einsum":  # np.einsum("ii->i", M), "ij->ji": of one array, summing nothing, a view of it
            operands = dict(inputs).get("operands")
            source = operands.items[0] if _einsum_view(dict(inputs).get("subscripts"), operands) else None
        if prim.name == "getitem" and self._is_slice(dict(inputs).get("index")) \
                and self.container_kind(source) in ("list", "tuple"):  # xs[1:] of a list: a new list
            self.fresh.update(outs)
        elif (prim.name in VIEW_OPS or prim.name == "einsum" or prim.name == "astype" and any(  # a.astype(float,
                key == "copy" and isinstance(atom, Const) and atom.value is False for key, atom in inputs)) \
                and isinstance(source, Var) and not (prim.name == "getitem" and _advanced_index(  # copy=False): maybe
                    dict(inputs).get("index"))):  # `a`; `a[[0, 2]]`, `a[a > 0]`: a copy
            for out in outs:
                self.views[out] = source
                self.view_ops[out] = (prim.name, dict(inputs).get("index"))
                self.view_made[out] = (prim, inputs, len(outs))
                self.view_block[out] = self.current
                self.fresh.discard(out)
        elif prim.name in ("assign", "iterated"):  # (what `for row in a` walks is `a` itself)
            source = inputs[0][1]
            if isinstance(source, Var):
                for out in outs:
                    self.aliases.setdefault(out, set()).add(source)
            for out in outs:
                if isinstance(source, Var) and (source not in self.fresh or source in self.params):
                    self.fresh.discard(out)
                else:
                    self.fresh.add(out)
        elif prim.form == "opaque" and outs and (_draws_new_array(prim.fn) or self._generators_draw(prim, inputs)):
            #                                                              np.random.normal(m, s, size=n):
            self.fresh.update(outs)  # a new array (numpy-ml's truncated_normal then sets `samples[reject] = ...`)
        elif prim.name == "item_or" and self._absent_key(dict(inputs)):  # `d.get("z", np.zeros(3))` of a key
            default = dict(inputs).get("default")                         # the dict has not: the default
            for out in outs if isinstance(default, Var) and default in self.fresh else ():
                self.fresh.add(out)
        elif prim.form == "opaque" and outs:  # run as written: its value may be an array it was given
            given = {v for _, atom in inputs for v in _vars(atom) if self.container_kind(v) is None}
            for out in outs if given else ():
                self.maybe_same.setdefault(out, set()).update(given)
        elif prim.name not in IN_PLACE and prim.form != "opaque" and prim.name not in ("getattr", "attribute_or_none",
                                                                                       "metadata", "item_or"):
            self.fresh.update(outs)  # (an attribute read is the object's own value: `layer.X.append(v)` is not
            #                          on a list this function made; nor is `x.shape` an array one writes into)

    def _absent_key(self, values) -> bool:
        """Whether `d.get(key, ...)`'s `key` (item_or's inputs) is known now not to be one of the dict's."""
        key, d = values.get("key"), values.get("d")
        if not (isinstance(key, Const) and _hashable(key.value) and isinstance(d, Var)
                and self.container_kind(d) == "dict"):
            return False
        keys = self.known_keys(d)
        return keys is not None and key.value not in keys

    def _track_item_sharers(self, prim, inputs, outs):
        """`ys = xs[1:]`, `list(xs)`, `dict(d)`: a new list or dict holding the same items (arrays, lists) as
        the one it is made from, and what is made from it (`ys + [v]`, `ys` with an item replaced)."""
        source = inputs[0][1] if inputs else None
        if not isinstance(source, Var):
            return
        copies = prim.name in ("list", "tuple", "dict_copy") or prim.name == "getitem" and self._is_slice(
            dict(inputs).get("index")) and self.container_kind(source) in ("list", "tuple")
        if copies and self.container_kind(source) is not None:
            index = dict(inputs).get("index")
            for out in outs:
                self.item_sharers.setdefault(out, set()).add(source)
                self.item_sharers.setdefault(source, set()).add(out)
                if prim.name == "getitem" and isinstance(index, Const) and isinstance(index.value, slice):
                    self.slice_of[out] = (source, index.value)
        elif prim.name in ("with_item", "add", "dict_without", "assign") and source in self.item_sharers:
            for out in outs:
                self.item_sharers.setdefault(out, set()).update(self.item_sharers[source])

    def _track_held(self, prim, inputs, outs):
        """`held_by`: the arrays a list, tuple or dict may hold, or hold views of (`[a[:2], a[2:]]`, `list(m)`, its
        rows; `xs.append(h)`), kept through copies, slices and items of it: an item taken out and written into
        changes them (write_into_view)."""
        held = set()
        keys = _HOLDS_ITEMS.get(prim.name, ())
        for key, atom in inputs:
            if key in keys:
                for var in _vars(atom):
                    held |= self.held_by.get(var, set()) if self.container_kind(var) else {var}
        copies = prim.name in ("list", "tuple", "assign", "plus", "add", "concat", "with_item", "append", "repeat_items",
                               "dict_copy", "dict_without", "getitem", "dict_values", "dict_items")
        for key, atom in inputs[:2] if copies else ():
            if isinstance(atom, Var) and (atom in self.held_by or self.container_kind(atom)):
                held |= self.held_by.get(atom, set())
            elif isinstance(atom, Var) and prim.name in ("list", "tuple") and inputs[0][1] is atom:
                held.add(atom)  # list(m) of an array: its rows, views of it
        for out in outs if held else ():
            self.held_by.setdefault(out, set()).update(held)

    def kept_from_pass_to_pass(self, var, seen=()) -> bool:
        """Whether the list `var` is kept, as it is, in a list that keeps what it is given (`rows.append(row)`), or in
        a list or dict kept so: a later pass of a loop changing `var` in place changes what that list holds too."""
        return any(keeps or holder not in seen and self.kept_from_pass_to_pass(holder, (*seen, var))
                   for holder, keeps in self.holders.get(var, ()))

    def may_carry(self, atom) -> bool:
        """Whether `atom` may carry a derivative: made by a differentiable primitive, or an argument."""
        return any(v in self.computed or v in self.params or v in self.root_params for v in _vars(atom))

    def check_items_unshared(self, container, node, text, key=None, root=None, named=False):
        """Refuses changing an item of `container` in place (`ys[0][0] = v`, `ys[0].append(v)`) where another
        list or dict holds the same item (`ys = xs[1:]`, `list(xs)`): NumPy (or Python) changes it there too.
        `key`, where known: a slice of `container` cut without that item does not hold it (`p, *rest = ps`).
        `named`: only a list or dict a name, or another list or dict, holds still counts (not the list before
        `caches.insert(0, v)` joined it anew)."""
        def misses(sharer):
            if named and sharer not in self.holders and all(atom is not sharer for atom in self.env.values()):
                return True
            source, part = self.slice_of.get(sharer, (None, None))
            if source is not container or not isinstance(key, Const) or type(key.value) is not int \
                    or key.value < 0 or part.step is not None \
                    or any(b is not None and (type(b) is not int or b < 0) for b in (part.start, part.stop)):
                return False
            return key.value < (part.start or 0) or part.stop is not None and key.value >= part.stop
        if any(not misses(sharer) for sharer in self.item_sharers.get(container, ())):
            root = root or text.split("[")[0]
            raise self.unsupported(node, f"`{text}` changes in place an item that another list or dict holds too "
                                         f"(a slice or copy of `{root}`, or the one `{root}` is a slice or copy "
                                         f"of): tapegen does not follow the change there",
                                   "copy the items when copying the list: ys = [y.copy() for y in xs[1:]]")

    def _track_containers(self, prim, inputs, outs):
        """Remember the vars that hold a list, tuple or dict built here (`+` joins them, `*` repeats)."""
        kind = CONTAINER_OUTPUTS.get(prim.name)
        if kind is None and prim.name in ("assign", "concat", "repeat_items", "with_item", "append", "unflatten_tree") \
                and inputs:  # (unflatten(v) of tg.flatten(params): params' kind)
            kind = self.container_kind(inputs[0][1])
        if prim.name == "repeat_items" and not isinstance(inputs[1][1], Const) and \
                len(_numbers_written(inputs[0][1]) or ()) > 1:  # x * [1.0, 2.0, 3.0]: meant as NumPy's product
            kind = None  # (repeat_items decides when it runs; a list of one item times a name is `[0.0] * n`)
        if kind is None and prim.name == "with_item" and inputs and self._read_from_live(inputs[0][1]) is not None:
            obj, attr = self._read_from_live(inputs[0][1])  # a layer's dict with an item replaced: a dict
            kind = "dict" if isinstance(getattr(self.live[obj], attr, None), dict) else "list"
        if kind is None and prim.name == "plus":  # list + v: a list when v is one, as it is meant to be
            kind = self.container_kind(inputs[0][1]) or self.container_kind(inputs[1][1])
        if prim.name == "slice":
            self.slices.update(outs)
        if kind is None and prim.name == "getitem" and self._is_slice(dict(inputs).get("index")) \
                and self.container_kind(inputs[0][1]) in ("list", "tuple"):  # xs[1:]: a new list (of the same items)
            kind = self.container_kind(inputs[0][1])
        self._track_item_sharers(prim, inputs, outs)
        self._track_held(prim, inputs, outs)
        self._track_lengths(prim, inputs, outs)
        self._track_types(prim, inputs, outs)
        self._track_constant_items(prim, inputs, outs)
        self._track_items(prim, inputs, outs)
        self._track_item_vars(prim, inputs, outs)
        held = _HOLDS_ITEMS.get(prim.name, ())
        for v in (v for key, atom in inputs if key in held for v in _vars(atom) if v in self.containers):
            kept = self.holders.setdefault(v, set())  # by `outs[-1]` (`rows.append(row)`: rows, which keeps what
            if outs:                                   # it is given)
                kept.add((outs[-1], prim.name == "append"))
        if prim.name not in IN_PLACE:  # a new value bound: what held the old one does not hold it
            for out in outs:
                self.held_in.pop(out, None)
                self.holders.pop(out, None)
                for construct in self.open_constructs:
                    construct.rebound.add(out)
                    construct.bound_here.add(out)
        for key, atom in inputs:
            if key in held or (prim.name == "setattr" and key == "_2"):
                for v in _vars(atom):  # an array kept in a container or attribute: changing it changes that
                    self.held_in.setdefault(v, "an attribute" if prim.name == "setattr" else "a list or dict")
                    self.times_held[v] = self.times_held.get(v, 0) + 1
        for out in outs:
            if kind is None:
                self.containers.pop(out, None)
            else:
                self.containers[out] = kind
        if prim.name not in IN_PLACE:
            is_none = prim.name == "assign" and isinstance(inputs[0][1], Const) and inputs[0][1].value is None
            for out in outs:
                (self.none_vars.add if is_none else self.none_vars.discard)(out)
                self.maybe_none.discard(out)
                for construct in self.open_constructs:  # (only the vars a construct shares are asked about)
                    if out in construct.entry:
                        construct.kinds_bound.setdefault(out, set()).add(None if is_none else kind or _UNKNOWN)

    def _track_constant_items(self, prim, inputs, outs):
        """The items of a dict built here that are constants (`{"running_mean": None}`), by key, so a test
        of one (`if self.parameters["running_mean"] is None:`) is decided when transforming."""
        values = dict(inputs)
        known = None
        if prim.name == "make_dict" and isinstance(values.get("keys"), Const):
            known = {k: v for k, v in zip(values["keys"].value, values["values"].items) if isinstance(v, Const)}
        elif prim.name == "assign" and values.get("x") in self.constant_items:
            known = dict(self.constant_items[values["x"]])
        elif prim.name == "with_item" and values.get("a") in self.constant_items and isinstance(values["key"], Const):
            known = dict(self.constant_items[values["a"]])
            known.pop(values["key"].value, None)
            if isinstance(values["value"], Const):
                known[values["key"].value] = values["value"]
        elif prim.form == "opaque" and prim.name != "setattr":  # a call tapegen does not follow may change a dict
            for _, atom in inputs:
                for v in _vars(atom):
                    self.constant_items.pop(v, None)
        for out in outs:
            if known is None:
                self.constant_items.pop(out, None)
            else:
                self.constant_items[out] = known

    def _track_types(self, prim, inputs, outs):
        """Objects of the user's classes in lists and tuples (`layers = [Dense(W1), Dense(W2)]`): an item
        taken out (`layers[0]`, `for layer in layers`) is of that class, so its methods are inlined.
        `item_types` holds that class, or "empty" for a list known to have no items yet."""
        values = dict(inputs)
        if prim.name in ("make_list", "make_tuple"):
            cls = self.items_class(values["items"])
        elif prim.name == "append":
            added = self.types.get(values["value"])
            cls = _joined_class(self.item_types.get(values["a"]), added) if added is not None else None
        elif prim.name == "concat":
            cls = _joined_class(self.items_class(values["x1"]), self.items_class(values["x2"]))
        elif prim.name in ("assign", "iterated"):
            source = values.get("x", values.get("xs"))
            cls = self.item_types.get(source)
            for out in outs:  # layer = layers[i] in a loop: the same class
                if source in self.types:
                    self.types[out] = self.types[source]
                else:
                    self.types.pop(out, None)
        elif prim.name == "getitem" and self.item_types.get(values["a"], "empty") != "empty":
            for out in outs:
                self.types[out] = self.item_types[values["a"]]
            return
        else:
            if prim.name not in IN_PLACE:  # a new value (in a var a loop or branch shares, perhaps): not known
                for out in outs:
                    self.types.pop(out, None)
                    self.item_types.pop(out, None)
            return
        for out in outs:
            if cls is None:
                self.item_types.pop(out, None)
            else:
                self.item_types[out] = cls

    def items_class(self, atom):
        """The class of every item of list or tuple `atom` ("empty" if it has none), or None."""
        if isinstance(atom, Pack):
            classes = {self.types.get(item) for item in atom.items}
            return "empty" if not classes else classes.pop() if len(classes) == 1 else None
        return self.item_types.get(atom)

    def _track_items(self, prim, inputs, outs):
        """Where a value taken out of a list or dict built here came from (`As = d["A"]`), and which dict
        a dict with one item replaced was made from: `As.append(v)` then updates `d` as well. Also which
        lists hold only lists, so `rows[0] + rows[1]` is decided when the code runs (joined or added)."""
        values = dict(inputs)
        self._track_lists_of_lists(prim, values, outs)
        index = values.get("index")
        default = values.get("default") if prim.name == "item_or" else None
        made_for_it = isinstance(default, Var) and default in self.fresh and default not in self.holders \
            and self._absent_key(values) and all(atom is not default for atom in self.env.values())
        if prim.name in ("getitem", "item_or", "iterated") and not self._is_slice(index) and not made_for_it \
                or prim.form == "opaque" \
                and any(self.container_kind(v) is not None or v in self.read_out
                        for _, atom in inputs for v in _vars(atom)):  # (`next(iter(ps))`, `min(ps, key=...)`)
            self.read_out.update(outs)
        elif prim.name == "assign" and values.get("x") in self.read_out:
            self.read_out.update(outs)
        if prim.name == "getitem" and isinstance(values["a"], Var) and isinstance(index, (Const, Var)) \
                and (self.container_kind(values["a"]) in ("list", "dict") or self._read_from_live(values["a"])) \
                and (isinstance(index, Var) or _hashable(index.value)) and not self._is_slice(index):
            for out in outs:
                self.item_origin[out] = (values["a"], index.value if isinstance(index, Const) else index)
        elif prim.name == "item_or" and isinstance(values["key"], Const) and _hashable(values["key"].value) \
                and self.container_kind(values["d"]) == "dict" and values["key"].value in (self.known_keys(values["d"])
                                                                                         or ()):
            for out in outs:  # `d.get("k")` of a key `d` has: `d["k"]` (`hist.get("loss").append(v)`)
                self.item_origin[out] = (values["d"], values["key"].value)
        elif prim.name == "getitem" and isinstance(values["a"], Var) and self.container_kind(values["a"]) == "tuple":
            for out in outs:  # an item of a tuple built here: it may be a list `holders` knows
                self.taken_out[out] = values["a"]
        elif prim.name == "with_item" and isinstance(values["key"], Const) and _hashable(values["key"].value):
            for out in outs:
                self.item_parent[out] = (values["a"], values["key"].value)
        if prim.name in ("with_item", "assign") and isinstance(values.get("a", values.get("x")), Var) \
                and self.container_kind(values.get("a", values.get("x"))) in ("list", "dict"):
            for out in outs:  # (the list or dict it is a new version of: `ps` with an item replaced)
                self.version_of[out] = values.get("a", values.get("x"))
        elif prim.name == "assign" and values["x"] in self.item_origin:
            for out in outs:
                self.item_origin[out] = self.item_origin[values["x"]]

    def _track_item_vars(self, prim, inputs, outs):
        """`item_vars`: the atoms a list built here holds, one by one, while it is only appended to outside
        loops and branches (ML-From-Scratch's `self.layers = []`, then `model.add(Dense(...))` appending to
        it), so a loop over objects of different classes in it can be unrolled, each item the object it is.
        Any other use of the list (a name for it, passing it on) forgets them."""
        values = dict(inputs)
        if prim.name == "make_list" and isinstance(values.get("items"), Pack) and not self.open_constructs:
            self.item_vars.update({out: tuple(values["items"].items) for out in outs})  # (in a branch, a var the
            return  # branches share: which list it holds after them depends on the path)
        if prim.name == "append" and values.get("a") in self.item_vars and not self.open_constructs:
            self.item_vars[values["a"]] += (values["value"],)
            return
        for _, atom in inputs:
            for v in _vars(atom):
                if prim.name not in ("getitem", "len", "iterated", "setattr"):
                    self.item_vars.pop(v, None)
        for out in outs:
            self.item_vars.pop(out, None)

    def _is_slice(self, index) -> bool:
        """Whether an index atom is a slice (`xs[1:]`, `xs[:n]`): of a list, a new list, not one of its items."""
        return isinstance(index, Const) and isinstance(index.value, slice) or index in self.slices

    def _track_lists_of_lists(self, prim, values, outs):
        """`lists_of_lists` and `list_items`: a list display (or comprehension) of lists, an empty list
        appended lists only, a list with an item replaced by a list; an item read from one by an index, and what
        `maybe_lists`: what may be a list when the code runs (an item of a list or tuple argument, or of a dict
        read by a key, a module's object's list attribute): `a + b` of two of them is joined or added, and `a * 3`
        repeated or multiplied, as they turn out to be."""
        is_list = lambda atom: self.container_kind(atom) in ("list", "tuple") or atom in self.list_items \
            or atom in self.maybe_lists  # noqa: E731  (a tuple is joined and repeated as a list is)
        if prim.name == "make_list":
            holds = all(is_list(item) for item in values["items"].items)
        elif prim.name == "append":
            holds = (values["a"] in self.lists_of_lists or self._length(values["a"]) == 0) and is_list(values["value"])
        elif prim.name == "with_item":
            holds = values["a"] in self.lists_of_lists and is_list(values["value"])
        elif prim.name == "set_in_item":  # rows[i][j] = v: the row changed is still a list
            holds = False
            self.list_items.update(out for out in outs if values["item"] in self.list_items)
        elif prim.name == "assign":
            holds = values["x"] in self.lists_of_lists
            self.list_items.update(out for out in outs if values["x"] in self.list_items)
            self.maybe_lists.update(out for out in outs if values["x"] in self.maybe_lists)
        elif prim.name in ("list", "tuple") or prim.name == "getitem" and isinstance(values.get("index"), Const) \
                and isinstance(values["index"].value, slice):  # list(rows), rows[1:]: the same lists
            holds = values.get("iterable", values.get("a")) in self.lists_of_lists
        else:
            holds = False
            index, base = values.get("index"), values.get("a")
            if prim.name == "getitem" and base in self.lists_of_lists and \
                    not (isinstance(index, Const) and isinstance(index.value, slice)):
                self.list_items.update(outs)
            if prim.name == "getitem" and not (isinstance(index, Const) and isinstance(index.value, slice)) and (
                    base in self.maybe_lists or isinstance(index, Const) and isinstance(index.value, str)
                    or base in self.root_params and self.container_kind(base) is not None):
                self.maybe_lists.update(outs)  # (an item of a list or tuple argument, or read by a name: a dict's)
            if prim.name == "getattr" and values.get("obj") in self.live and isinstance(values.get("name"), Const) \
                    and isinstance(getattr(self.live[values["obj"]], values["name"].value, None), (list, tuple)):
                self.maybe_lists.update(outs)  # `model.weights`: a list now
        for out in outs:
            (self.lists_of_lists.add if holds else self.lists_of_lists.discard)(out)

    def _track_lengths(self, prim, inputs, outs):
        """Lengths of lists and tuples, and keys of dicts, that are fixed when the function is transformed."""
        values = dict(inputs)
        length = keys = None
        if prim.name in ("make_list", "make_tuple"):
            length = len(values["items"].items)
        elif prim.name == "make_dict":
            keys = values["keys"].value
        elif prim.name == "concat" and all(self._length(values[k]) is not None for k in ("x1", "x2")):
            length = self._length(values["x1"]) + self._length(values["x2"])
        elif prim.name in ("assign", "list", "tuple", "dict_copy"):  # a name for it, or a copy of it
            source = values.get("x", values.get("iterable", values.get("mapping")))
            length, keys = self._length(source), self.known_keys(source) if isinstance(source, Var) else None
        elif prim.name == "getitem" and isinstance(values.get("index"), Const) \
                and isinstance(values["index"].value, slice) and self._length(values["a"]) is not None:
            length = len(range(self._length(values["a"]))[values["index"].value])  # args[1:]
        elif (elementwise := self._elementwise_of(prim, inputs)) is not None:
            length = elementwise  # np.exp(p) of an array of a length known now (`*np.exp(p)`)
        elif prim.name == "with_item" and not (isinstance(values["key"], Const) and isinstance(values["key"].value, slice)):
            length = self._length(values["a"])  # xs[i] = v: one item replaced (a slice computed then is refused)
            keys = self.dict_keys.get(values["a"]) if isinstance(values["key"], Const) else None
            if keys is not None and values["key"].value not in keys:  # d[k] = v
                keys += (values["key"].value,)
        if prim.form == "opaque" and prim.fn not in _READS_NO_VALUES:  # bisect.insort(xs, v) may change the list
            for v in (v for _, atom in inputs for v in _vars(atom) if self.container_kind(v) is not None):
                self.lengths.pop(v, None)
                self.dict_keys.pop(v, None)
                self.constant_items.pop(v, None)
        for out in outs:
            self.lengths.pop(out, None)
            self.dict_keys.pop(out, None)
            if length is not None:
                self.lengths[out] = length
            if keys is not None:
                self.dict_keys[out] = keys

    def _elementwise_of(self, prim, inputs):
        """The length of an array whose length is known now (code made for its length: `model(t, *p)`), where
        `prim` applies an elementwise function to it alone, or with a number (`np.exp(p)`, `p * 2.0`), else None."""
        fn = prim.fn
        unary = isinstance(fn, np.ufunc) and fn.nin == 1 or fn in (operator.neg, operator.pos)
        binary = isinstance(fn, np.ufunc) and fn.nin == 2 or fn in _ELEMENTWISE_OPERATORS
        if not (unary and len(inputs) == 1 or binary and len(inputs) == 2):
            return None
        arrays = [atom for _, atom in inputs if not (isinstance(atom, Const) and type(atom.value) in (int, float))]
        if len(arrays) != 1 or not isinstance(arrays[0], Var) or self.container_kind(arrays[0]) is not None:
            return None
        return self.lengths.get(arrays[0])

    def _length(self, atom):
        if isinstance(atom, Pack):
            return len(atom.items)
        return self.lengths.get(atom) if isinstance(atom, Var) else None

    def bind_arguments(self, prim: Primitive, args, kwargs, node):
        if prim.form == "opaque":  # `_*k`: an argument spread as `*xs`
            return tuple((f"_*{i}", a.atom) if isinstance(a, Spread) else (f"_{i}", a) for i, a in enumerate(args)) \
                + tuple(kwargs.items())
        params = list(prim.params)
        positional = params[:params.index(prim.variadic)] if prim.variadic else params
        positional = [p for p in positional if p not in prim.keyword_only]
        aliases = _KEYWORD_ALIASES.get(prim.name)
        if aliases and (set(kwargs) & set(aliases) or len(args) == 2):
            kwargs = {aliases.get(k, k): v for k, v in kwargs.items()}  # np.clip(x, min=0): NumPy 2.1's names
            for name in aliases.values():  # (the other bound None, spelled out: older NumPy needs both)
                if name not in kwargs and name not in positional[:len(args)]:
                    kwargs[name] = Const(None)
        bound = {}
        if len(args) > len(positional) and not prim.variadic:
            raise self.unsupported(node, f"{prim.spelling or prim.name}() takes at most {len(positional)} "
                                         f"positional arguments here, got {len(args)}",
                                   f"its parameters are ({', '.join(params)})")
        bound.update(zip(positional, args))
        if prim.variadic:
            bound[prim.variadic] = Pack(tuple(args[len(positional):]), "tuple")
        for key, value in kwargs.items():
            key = prim.renamed.get(key, key) if isinstance(prim, Primitive) else key
            if key not in params or key == prim.variadic:
                raise self.unsupported(node, f"argument `{key}` of {prim.spelling or prim.name}() is not "
                                             f"supported by tapegen", f"supported parameters: {', '.join(params)}")
            if key in bound:
                raise self.unsupported(node, f"{prim.spelling or prim.name}() got `{key}` twice")
            bound[key] = value
        inputs = []
        for param in params:
            if param in bound:
                inputs.append((param, self.flat(bound[param], node, whole=self._holds_one(prim, param))))
            elif param in prim.defaults:
                inputs.append((param, Const(prim.defaults[param])))
            else:
                raise self.unsupported(node, f"{prim.spelling or prim.name}() is missing argument `{param}`")
        return tuple(inputs)

    @staticmethod
    def _holds_one(prim, param) -> bool:
        """Whether `param` takes one value (a tuple passed to it is one value), not a list of arrays."""
        return prim.differentiable and prim.form not in ("opaque", "display") and param != prim.variadic \
            and param not in prim.sequences and param in prim.vjps

    def flat(self, atom, node, whole=False):
        """`atom` with every list or tuple inside a list or tuple held in a var of its own.

        `np.array([[a, b], [c, d]])` becomes `t1 = [a, b]; t2 = [c, d]; np.array([t1, t2])`:
        each pass then sees containers one level deep, whose items are vars or constants, and
        a nested item's cotangent (or tangent) flows through its own `[]`'s rule.
        """
        if not (isinstance(atom, Pack) and atom.kind in ("list", "tuple")):
            return atom
        if whole and _vars(atom):  # `xs.append((a, b))`: the tuple is one value, with a cotangent of its own
            maker = rules.lookup(make_list if atom.kind == "list" else make_tuple)
            return self.emit(maker, list(atom.items), {}, node, None)
        items = []
        for item in atom.items:
            if isinstance(item, Pack) and item.kind in ("list", "tuple") and _vars(item):
                maker = rules.lookup(make_list if item.kind == "list" else make_tuple)
                item = self.emit(maker, list(item.items), {}, node, None)
            items.append(item)
        return Pack(tuple(items), atom.kind)

    # --- errors -------------------------------------------------------------------------

    def span(self, node):
        return self.source.span(node)

    def unsupported(self, node, message, hint=None):
        return UnsupportedSyntaxError(message, self.span(node), hint)


# The inputs a container op keeps as items (a container kept so is changed by changing it in place).
_HOLDS_ITEMS = {"make_list": ("items",), "make_tuple": ("items",), "make_dict": ("values",), "append": ("value",),
                "with_item": ("value",), "as_record": ("items",)}


class _GettersAsLambdas(ast.NodeTransformer):
    """`operator.itemgetter(1)` (`attrgetter("w")`) with constant arguments, as the lambda it stands for
    (`lambda v: v[1]`), so `max(pairs, key=itemgetter(1))` and `get = itemgetter(0, 2)` are followed."""

    def __init__(self, scope, identifiers):
        self.scope = scope
        self.param = next(name for name in (f"_got{k}" for k in range(100)) if name not in identifiers)

    def visit_Call(self, node):
        self.generic_visit(node)
        getter = self.scope.static(node.func)
        if getter not in (operator.itemgetter, operator.attrgetter) or node.keywords or not node.args or not all(
                isinstance(a, ast.Constant) for a in node.args):
            return node
        if getter is operator.attrgetter and not all(isinstance(a.value, str) for a in node.args):
            return node

        def got(arg):
            value = ast.Name(self.param, ast.Load())
            if getter is operator.itemgetter:
                return ast.Subscript(value, ast.Constant(arg.value), ast.Load())
            for attr in arg.value.split("."):
                value = ast.Attribute(value, attr, ast.Load())
            return value
        parts = [got(a) for a in node.args]
        body = parts[0] if len(parts) == 1 else ast.Tuple(parts, ast.Load())
        arguments = ast.arguments(posonlyargs=[], args=[ast.arg(self.param)], vararg=None, kwonlyargs=[],
                                  kw_defaults=[], kwarg=None, defaults=[])
        return ast.fix_missing_locations(ast.copy_location(ast.Lambda(arguments, body), node))


class _ReadsNoted(dict):
    """A dict noting which of its `watched` keys were read (`get`, `[]`, `in`): the length of a list of the
    module's is checked when the code runs only where the transform relied on it (not for `LOG.append(v)`)."""

    def __init__(self):
        super().__init__()
        self.watched, self.read = set(), set()

    def _note(self, key):
        if key in self.watched:
            self.read.add(key)

    def get(self, key, default=None):
        self._note(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self._note(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self._note(key)
        return super().__contains__(key)


def _np():
    import numpy as np
    return np


def _statement_text(node) -> str:
    """The first line of the statement (or expression) `node`, as written."""
    return ast.unparse(node).splitlines()[0] if node is not None else ""


def _einsum_view(subscripts, operands) -> bool:
    """Whether `np.einsum(subscripts, *operands)` returns a view of its one operand, as NumPy does where it sums
    over no label (`"ii->i"`, a diagonal; `"ij->ji"`; implicitly `"ij"`): each input label in the output."""
    if not (isinstance(subscripts, Const) and isinstance(subscripts.value, str) and isinstance(operands, Pack)
            and len(operands.items) == 1 and isinstance(operands.items[0], Var)):
        return False
    written = subscripts.value.replace(" ", "").replace("...", "")
    given, _, out = written.partition("->")
    if "->" not in written:
        out = "".join(label for label in given if given.count(label) == 1)
    return "," not in given and set(given) <= set(out)


def _vars(atom):
    from ..ir import atom_vars
    return atom_vars(atom)


def _inside_nested_def(target, root) -> bool:
    for sub in ast.walk(root):
        if sub is not root and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if any(inner is target for inner in ast.walk(sub)):
                return True
    return False


_OPSYM = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.MatMult: "@",
          ast.FloorDiv: "//", ast.Mod: "%"}


def _advanced_index(index) -> bool:
    """Whether an index known when transforming is NumPy's advanced indexing (a list, an array, a bool), whose
    result is a copy of the array, not a view of it."""
    if not isinstance(index, Const):
        return False
    parts = index.value if isinstance(index.value, tuple) else (index.value,)
    return any(isinstance(part, (list, np.ndarray, bool, np.bool_)) for part in parts)


def _draws_new_array(fn) -> bool:
    """Whether `fn` is a sampler of NumPy's random module (`np.random.normal`, a `RandomState`'s or
    `Generator`'s method): what it returns is a new array (or a number), never one it was given."""
    owner = getattr(fn, "__self__", None)
    return isinstance(owner, (np.random.RandomState, np.random.Generator)) and callable(fn) \
        and getattr(fn, "__name__", "") not in _NOT_DRAWS


_NOT_DRAWS = frozenset({"shuffle", "permutation", "permuted", "choice", "get_state", "set_state", "bit_generator",
                        "spawn"})  # (may return, or change, an array they are given)
_GENERATOR_MAKERS = ("default_rng", "RandomState", "Generator")  # what makes a Generator or RandomState

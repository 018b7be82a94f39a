"""Lowering expressions: operators, names, attributes, subscripts, displays, and calls.

A mixin of `lower._Lowerer`. Each handler returns an atom (a Var, a Const, or
a Pack for a list or tuple passed straight to a call), emitting the equations
that compute it. Calls are resolved here: a primitive, an array method, a
user function (inlined), a gradient of one, a custom rule, or an opaque call.
"""
from __future__ import annotations

import ast
import collections
import copy
import functools
import inspect
import math
import operator
import sys
import types
from dataclasses import dataclass, replace

import numpy as np

from .. import rules
from ..errors import UnsupportedSyntaxError
from ..ir import Const, Eqn, If, Pack, Var, atom_vars as _vars, walk
from ..rules.language import append as append_primitive
from ..rules.language import assign as assign_primitive
from ..rules.language import as_record, concat, contained_in, list_position, make_dict, make_list, make_tuple, not_contained_in, plus, removed_position
from ..rules.language import attribute_as_transformed, has_attribute_as_transformed, identity_check, of_class
from ..rules.language import caught_exception, dict_without, evaluated_literal, exception_matches, item_or, keywords_known
from ..rules.language import spread_known
from ..rules.language import deep_copy, first_or, formatted, not_exhausted, set_module_name
from ..rules.language import py_sorted, py_sum, repeat_items
from ..rules.language import updated, view_index, with_item
from ..rules.shape import BOUND_METHOD, added_at
from ..rules import ufunc_methods
from ..rules.standing_for import BY_KEY, OF_ITEMS, flat_get, joined_sum, stands_for, transposed, vectorized
from ..rules.table import Primitive
from .inline import DYNAMIC, Choice, KnownItems, LocalFunction, Recarry, StaticValue, Unsettled, function_for_call, \
    lowered_until_settled, user_function, users_class, _CHANGING_METHODS, _keeps_state_alone
from .resolve import MISSING, LiveNamespace, _static_instance, freezes, library_object, marker, native

BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.Pow: operator.pow, ast.MatMult: operator.matmul, ast.FloorDiv: operator.floordiv,
          ast.Mod: operator.mod, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}
UNARYOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert}
COMPARES = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
            ast.In: contained_in, ast.NotIn: not_contained_in}
_ITERATING = (sum, list, tuple, sorted, max, min, any, all, np.stack, np.concatenate, np.vstack, np.hstack)
OPERATOR_METHODS = {operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "truediv",
                    operator.floordiv: "floordiv", operator.mod: "mod", operator.pow: "pow", operator.matmul: "matmul",
                    operator.and_: "and", operator.or_: "or", operator.xor: "xor"}  # fn: the name of its methods
METADATA_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}
# Context managers that change only warnings and printing: `with` blocks of them run their body as written.
WARNING_CONTEXTS = (np.errstate, np.printoptions, __import__("warnings").catch_warnings)
# Methods that change their list, dict, set or array in place.
IN_PLACE_OPERATORS = {operator.iadd: ast.Add, operator.isub: ast.Sub, operator.imul: ast.Mult,
                      operator.itruediv: ast.Div, operator.ifloordiv: ast.FloorDiv, operator.imod: ast.Mod,
                      operator.ipow: ast.Pow, operator.imatmul: ast.MatMult, operator.ior: ast.BitOr,
                      operator.iand: ast.BitAnd, operator.ixor: ast.BitXor, operator.iconcat: ast.Add}
MUTATORS = {"extend", "insert", "remove", "pop", "popitem", "clear", "reverse", "sort", "update", "setdefault",
            "add", "discard", "difference_update", "intersection_update", "symmetric_difference_update", "fill",
            "put", "itemset", "resize", "partition", "setfield", "byteswap", "__setitem__", "__delitem__",
            "__iadd__", "__imul__"}
_DICT_MUTATORS = frozenset({"setdefault", "update", "popitem"})  # only a dict's, of a list's or an array's
MUTATOR_HINTS = {
    "insert": "build a new list: xs = xs[:i] + [v] + xs[i:]",
    "pop": "read the item and shorten the list: v = xs[-1]; xs = xs[:-1]",
    "remove": "build a new list without the item",
    "reverse": "xs = xs[::-1] for a list, or np.flip(a) for an array",
    "sort": "a = np.sort(a) for an array, or xs = sorted(xs) for a list",
    "update": "set each item: d[key] = value",
    "setdefault": "write d[key] = value where it is set",
    "fill": "a = np.full_like(a, value)",
    "put": "a[indices] = values on an array the function made",
    "resize": "a = np.resize(a, shape)",
    "partition": "a = np.partition(a, k)",
    "clear": "start a new list or dict: xs = []",
    "popitem": "pop the items by key (v = d.pop(k)): d.popitem() is followed where the transform knows d's keys",
}


class Expressions:
    """Mixin for `_Lowerer`: one `expr_<Node>` handler per kind of expression, and `call`."""

    def expr(self, node, target=None):
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is None:
            raise self.unsupported(node, f"{_describe(node)} is not supported inside a differentiated function",
                                   _HINTS.get(type(node), "rewrite it with assignments and NumPy calls"))
        return handler(node, target)

    def expr_Lambda(self, node, target):
        """A lambda needed as a value when the code runs: passed to a function tapegen runs as written
        (`scipy.optimize.minimize(lambda w: ..., w0)`), whose calls of it tapegen cannot follow."""
        raise self.unsupported(node, "a lambda passed to a function tapegen runs as written, which calls it where "
                                     "tapegen cannot follow", "call it in the function yourself (a loop or a "
                                                              "comprehension over the values), or pass a function "
                                                              "defined at module level")

    def check_untied_attribute(self, base, attr, node):
        """`layer.params` read where tapegen cannot tie `layer` to the object whose `.params` this function
        set to a computed value (an item of a list of objects, say): its gradient would be lost. Refuse."""
        mine = self.types.get(base)
        for (owner, name), (value, _) in self.attributes.items():
            if name != attr or owner is base:
                continue
            if base in self.made_objects and (owner in self.made_objects or owner in self.live) or \
                    owner in self.made_objects and base in self.live:
                continue  # an object made here is a new one: not another object made here, nor one made before
            theirs = self.types.get(owner)
            unrelated = mine is not None and theirs is not None and not (issubclass(mine, theirs) or
                                                                        issubclass(theirs, mine))
            carries = self.carries(value)
            if isinstance(value, (Var, Pack)) and base in self.live and owner in self.live and \
                    self.live[base] is not self.live[owner]:
                # two objects of the module's (`fc1`, `fc2`), different now: checked again when the code runs
                # (also where the value is not known to carry a derivative yet: a branch may set it to one)
                written = next((n for n, atom in self.env.items() if atom is owner), owner.name)
                self.emit_multi(rules.lookup(identity_check), [base, owner, Const(False), Const(
                    f"`{ast.unparse(node)}` is now on the same object as `{written}.{attr}`, which this function "
                    f"set to a computed value; they were different objects when its gradient code was made")],
                    {}, node, 0, [])
                continue
            if unrelated:
                continue  # objects of unrelated classes: not the same object
            if carries:
                written = ast.unparse(node) if isinstance(node, ast.expr) else \
                    f"{next((n for n, atom in self.env.items() if atom is base), 'the object')}.{attr}"
                raise self.unsupported(node, f"`{written}` may be the `.{attr}` this function set on "
                                             f"another name's object to a computed value; tapegen cannot tell "
                                             f"which object this is, so its gradient would be lost",
                                       f"call the method on the object directly, or pass the value along instead "
                                       f"of storing it in `.{attr}`")

    def carries(self, value) -> bool:
        """Whether `value` (an attribute's) may carry a derivative: computed here, or an argument."""
        return isinstance(value, (Var, Pack)) and any(
            v in self.computed or v in self.params or v in self.root_params for v in _vars(value))

    def needs_known(self, items) -> bool:
        """Whether a display's items must stay known one by one: a function (or local function) among them,
        objects of the user's of more than one class, or an object whose attributes this function set to
        values that may carry a derivative (`[Dense(W1), Dense(W2)]`): an item taken out by a constant index,
        or in a loop over them (unrolled), is that object, whose attributes are known."""
        if any(isinstance(i, (StaticValue, LocalFunction, KnownItems)) for i in items):
            return True
        objects = [i for i in items if isinstance(i, Var) and i in self.types]
        return len({self.types[i] for i in objects}) > 1 or any(self._holds_derivatives(o, set()) for o in objects) \
            or any(o in self.made_objects for o in objects)

    def _holds_derivatives(self, obj, seen) -> bool:
        """Whether an attribute of object `obj` may carry a derivative, or holds an object one of whose does
        (`Wrapper(Dense(W))`)."""
        seen.add(obj)
        return any(self.carries(value) or isinstance(value, Var) and value in self.types and value not in seen
                   and self._holds_derivatives(value, seen)
                   for (owner, _), (value, _) in self.attributes.items() if owner is obj)

    def static(self, node):
        """The object `node` names if it is known now: a global, or a local bound to a function or module."""
        if isinstance(node, ast.Name) and node.id in self.env:
            value = self.env[node.id]
            return value.obj if isinstance(value, StaticValue) else MISSING
        if isinstance(node, ast.Attribute) and _root_name(node) in self.env:
            base = self.static(node.value)  # a module imported inside the function: `math.pi`, `stats.t.cdf`
            return native(getattr(base, node.attr, MISSING)) if isinstance(base, (types.ModuleType, type)) \
                or _static_instance(base) else MISSING
        if isinstance(node, ast.Call) and len(node.args) in (2, 3) and not node.keywords \
                and isinstance(node.func, ast.Name) and self.static(node.func) is getattr:
            base, name = self.static(node.args[0]), self.known_text(node.args[1])  # getattr(np, NAME)
            default = self.static_operand(node.args[2]) if len(node.args) == 3 else MISSING  # (np, NAME, None)
            if len(node.args) == 3 and default is MISSING:
                return MISSING
            return native(getattr(base, name, default)) if isinstance(name, str) and (
                isinstance(base, (types.ModuleType, type)) or _static_instance(base)) else MISSING
        if isinstance(node, ast.BoolOp):  # getattr(np, "trapezoid", None) or np.trapz: decided now, as Python
            for value in node.values:  # does (an operand not reached is not looked at)
                operand = self.static_operand(value)
                if operand is MISSING or bool(operand) != isinstance(node.op, ast.And):
                    return operand
            return operand
        return self.scope.static(node)

    def static_operand(self, node):
        """`static(node)`, or a literal's value (`None` in `getattr(np, NAME, None)`)."""
        return node.value if isinstance(node, ast.Constant) else self.static(node)

    def known_text(self, node):
        """The string `node` is when transforming (a literal, a name bound to one here or in the module), or None."""
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.Name) and node.id in self.env:
            value = self.env[node.id]
            return value.value if isinstance(value, Const) and isinstance(value.value, str) else None
        if isinstance(node, ast.Name) and node.id not in self.scope.locals:
            value = self.scope.lookup(node.id)
            return value if type(value) is str else None
        return None

    def free_object(self, hint, getter):
        """A var the generated code reads an object of the user's through, looked up afresh on each call
        by `getter()` (`cfg.SCALE`, an array in another module; a function that module imported)."""
        key = ("object", hint, getattr(getter, "__code__", None),
               tuple(id(d) for d in getattr(getter, "__defaults__", None) or ()))
        if key not in self.free:
            var = self.namer.invented(hint)
            self.namer.assigned.add(var.name)
            self.free[key] = var
            self.free_sources[var.name] = (None, getter)
        return self.free[key]

    def reachable_from_root(self, func) -> bool:
        """Whether generated code can spell `func` (a name or module attribute chain) as written: its first
        name means the same in the differentiated function's own scope."""
        root = _root_name(func)
        if root is None or root in self.env:
            return root is None
        mine = self.scope.lookup(root)
        theirs = self.root_scope.lookup(root) if self.root_scope is not None else mine
        return mine is theirs

    def value(self, node, target=None):
        """`node`'s atom, or what the transform knows of it now: a StaticValue for a function, class or
        module (`act = np.tanh`), a LocalFunction for a lambda or local def, KnownItems for a display
        or global holding such values (`[np.tanh, relu]`), or an item of one (`acts["tanh"]`).
        `target`: the var to compute an atom into."""
        if isinstance(node, ast.Lambda):
            return self.local_function(node)
        if isinstance(node, ast.IfExp) and self.function_like(node):  # f(np.cos if c else np.sin): set in branches
            held = self.namer.invented("chosen").name
            self.statement(_as_if_statement(ast.Name(held, ast.Store()), node))
            return self.value(ast.copy_location(ast.Name(held, ast.Load()), node))
        if isinstance(node, ast.Call):
            return self.made_function(node, target)
        if isinstance(node, ast.BoolOp):  # `getattr(np, "trapezoid", None) or np.trapz`: known now
            chosen = self.static(node)
            if chosen is not MISSING and (callable(chosen) or isinstance(chosen, types.ModuleType)):
                return StaticValue(chosen, None)
        if isinstance(node, ast.Name) and isinstance(self.env.get(node.id), (LocalFunction, KnownItems, Choice)):
            return self.env[node.id]
        if isinstance(node, (ast.List, ast.Tuple, ast.Dict)):
            return self.display_value(node)
        if isinstance(node, ast.Subscript) and isinstance(self.known(node.value), KnownItems):
            return self.known_item(self.value(node.value), node)
        held = self.global_item(node) if isinstance(node, ast.Subscript) else None
        if held is not None and (_function_like(held) or _users_class_object(held)):  # act = ACTIVATIONS["relu"]
            # (or [kind], kind known now; a class of the user's: cls = LAYERS[kind], then cls(...))
            return StaticValue(native(held), self.expr(node))
        if held is None and self.global_functions(node) is not None:  # act = ACTIVATIONS[self.activation]
            return self.global_choice(node)
        obj = self.static(node) if isinstance(node, (ast.Name, ast.Attribute)) else MISSING
        if obj is not MISSING and (callable(obj) or isinstance(obj, types.ModuleType)) \
                and not isinstance(obj, (Var, LocalFunction)):
            name = node.id if isinstance(node, ast.Name) else None
            known = self.env.get(name) if name else None
            if isinstance(known, StaticValue):
                return known
            root = self.env.get(_root_name(node))  # `fn = sc.expit` of `import scipy.special as sc` here: a
            unwritten = isinstance(root, StaticValue) and root.atom is None  # function to call, not a value
            return StaticValue(obj, None if unwritten else self.expr(node))
        if isinstance(obj, (list, tuple)) and not (isinstance(node, ast.Name) and node.id in self.env):
            return self.global_items(obj, node)
        held = self.live_attribute(node)
        if isinstance(held, (list, tuple)):  # `for layer in self.layers:` of an object known now
            return self.global_items(held, node)
        method = self.method_value(node)
        if method is not None:
            return method
        return self.expr(node, target)

    def is_method_value(self, node) -> bool:
        """Whether `node` reads a method of the user's class off an object whose class is known (see
        method_value), without lowering anything."""
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            return False
        base = self.env.get(node.value.id)
        cls = self.class_of(base) if isinstance(base, Var) else None
        return cls is not None and (base, node.attr) not in self.attributes and \
            node.attr not in getattr(self.live.get(base), "__dict__", {}) and \
            inspect.isfunction(inspect.getattr_static(cls, node.attr, None)) and \
            user_function(inspect.getattr_static(cls, node.attr)) is not None

    def method_value(self, node):
        """`self._relu` read as a value (`self.act = self._relu`, `f = layer.forward`) for an object whose class
        is known: the function `lambda *args, **kwargs: self._relu(*args, **kwargs)`, so a call of it is
        the method's, inlined with its object."""
        if not self.is_method_value(node):
            return None
        call = ast.Call(ast.Attribute(ast.Name(node.value.id, ast.Load()), node.attr, ast.Load()),
                        [ast.Starred(ast.Name("args", ast.Load()), ast.Load())],
                        [ast.keyword(None, ast.Name("kwargs", ast.Load()))])
        made = ast.Lambda(ast.arguments([], [], ast.arg("args"), [], [], ast.arg("kwargs"), []), call)
        return self.local_function(ast.fix_missing_locations(_located(made, node)))

    def special_method(self, atom, name, node):
        """The user's function behind `name` (`__getitem__`, `__setitem__`, `__iter__`) of the class of the
        object `atom` holds, if the transform knows it; None for any other value."""
        cls = self.types.get(atom) if isinstance(atom, Var) else None
        if cls is None or issubclass(cls, (tuple, list, dict)):
            return None
        method = inspect.getattr_static(cls, name, None)
        if method is None:
            return None
        if user_function(method) is None:
            raise self.unsupported(node, f"`{ast.unparse(node)}` goes through {cls.__name__}.{name}, which is not a "
                                         f"Python function of a class of yours, so tapegen cannot follow it",
                                   "keep the arrays in plain attributes, or call a method of yours that returns them")
        self.bind_method(cls, name, method)  # (Python looks it up on the class: `G.__mul__ = ...` makes it again)
        if name == "__iter__" and not inspect.isgeneratorfunction(method) and _iterates_attribute(method):
            return _iterates_attribute(method)  # `return iter(self.layers)`: the attribute's name
        if name == "__iter__" and not inspect.isgeneratorfunction(method):
            raise self.unsupported(node, f"`{ast.unparse(node)}` iterates over an object of class {cls.__name__}, "
                                         f"whose __iter__ returns an iterator tapegen cannot follow",
                                   f"write {cls.__name__}.__iter__ as a generator (`yield from self.items`), or "
                                   f"iterate over the list it holds")
        return user_function(method)

    def live_attribute(self, node):
        """What `obj.attr` holds now, for an object known now (of the module or closure, or the one a bound
        method is differentiated for) whose attribute this function has not set; else MISSING. Among the
        names checked before each call."""
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            return MISSING
        base = self.env.get(node.value.id)
        if not isinstance(base, Var) or base not in self.live or (base, node.attr) in self.attributes:
            return MISSING
        held = vars(self.live[base]).get(node.attr, MISSING) if hasattr(self.live[base], "__dict__") else MISSING
        if held is not MISSING:
            self.bindings.append(("attr", self.live[base], node.attr, held))
        return held

    def function_like(self, node) -> bool:
        """Whether `node` names a function (or class) known now, or a lambda, without lowering anything."""
        if isinstance(node, ast.Lambda):
            return True
        if isinstance(node, ast.Name) and node.id in self.env:
            return isinstance(self.env[node.id], (StaticValue, LocalFunction, Choice))
        if isinstance(node, ast.IfExp):
            return self.function_like(node.body) or self.function_like(node.orelse)
        if self.is_method_value(node):  # self._relu
            return True
        obj = self.static(node) if isinstance(node, (ast.Name, ast.Attribute, ast.Call)) else MISSING
        return obj is not MISSING and callable(obj) and not isinstance(obj, (Var, LocalFunction))

    def made_function(self, node, target=None):
        """A call's value, with a function it makes known: `partial(f, a)` (a LocalFunction calling `f`
        with `a` first), `tg.grad(f)` (a StaticValue), or what a helper of the user's returns (lowered
        here: a lambda or local def it returns comes back as a LocalFunction, a function it was passed as
        a StaticValue)."""
        named = self.static(node)  # getattr(np, NAME): the function (or module) it names, known now
        if named is not MISSING and (callable(named) or isinstance(named, types.ModuleType)):
            return StaticValue(named, self.expr(node, target) if len(node.args) == 2 else None)  # (with a
            # default: a function to call, not a value)
        obj = self.static(node.func)
        if obj is functools.partial and node.args and not any(isinstance(a, ast.Starred) for a in node.args) \
                and all(kw.arg is not None for kw in node.keywords):
            return self.partial_function(node)
        if obj is np.vectorize and len(node.args) == 1 and not node.keywords:  # np.vectorize(f): f per element
            return self.partial_function(node, StaticValue(vectorized))
        if _makes_record_class(obj):  # `Params = namedtuple("Params", "W b")` inside the function: made now
            made = self._called_now(obj, node, self._static_display)
            if made is not None:
                return made
        first = self.value(node.args[0]) if node.args and isinstance(node.args[0], (ast.Lambda, ast.Name)) \
            and marker(obj, "__tapegen_static_call__") is True else None
        if marker(obj, "__tapegen_static_call__") is True and isinstance(first, LocalFunction):
            return self.transform_of_local(obj, first, node)  # tg.grad(lambda w: loss(w, x))
        if marker(obj, "__tapegen_static_call__") is True:  # tg.grad(f): made now, if f is known now
            made = self._called_now(obj, node, self._static_argument)
            if made is not None:
                return made
        return self.expr(node, target)

    def _called_now(self, obj, node, known):
        """`obj(...)` called when transforming, with its arguments as `known` gives them (a StaticValue of
        what it returns), or None where an argument is computed only when the code runs."""
        try:
            args = [known(a) for a in node.args]
            kwargs = {kw.arg: known(kw.value) for kw in node.keywords}
        except LookupError:
            return None
        return StaticValue(obj(*args, **kwargs))

    def transform_of_local(self, maker, local, node):
        """`tg.grad(lambda w: loss(w, x))`, `tg.hvp(local_def)`: the transform of the lambda made a function
        of its own (`lift`), whose first parameters take what it reads from here; the result is the lambda
        `lambda *rest, **more: G(x, *rest, **more)`, G the transformed function, so calls pass them along."""
        fn, captured = self.lift(local, node)
        try:
            rest = [self._static_argument(a) for a in node.args[1:]]
            kwargs = {kw.arg: self._static_argument(kw.value) for kw in node.keywords}
        except LookupError as missing:
            raise self.unsupported(node, f"{ast.unparse(node.func)}(...) needs its arguments known when the "
                                         f"function is transformed; `{missing}` is computed at run time",
                                   "write them as constants") from None
        if rest:
            rest[0] = _shifted(rest[0], len(captured))
        else:
            key = next((k for k in ("wrt", "argnums", "argnum") if k in kwargs), "wrt")
            kwargs[key] = _shifted(kwargs.get(key, 0), len(captured))
        made = StaticValue(maker(fn, *rest, **kwargs))
        if not captured:
            return made
        holder = self.namer.invented("transformed").name
        env = dict(self.env)
        env[holder] = made
        names = []
        for value in captured:
            names.append(self.namer.invented("read").name)
            env[names[-1]] = value
        rest_name, more_name = self.namer.invented("rest").name, self.namer.invented("more").name
        call = ast.Call(ast.Name(holder, ast.Load()), [ast.Name(n, ast.Load()) for n in names]
                        + [ast.Starred(ast.Name(rest_name, ast.Load()), ast.Load())],
                        [ast.keyword(None, ast.Name(more_name, ast.Load()))])
        made_lambda = ast.Lambda(ast.arguments(posonlyargs=[], args=[], vararg=ast.arg(rest_name), kwonlyargs=[],
                                               kw_defaults=[], kwarg=ast.arg(more_name), defaults=[]), call)
        for sub in ast.walk(made_lambda):
            if isinstance(sub, (ast.expr, ast.arg, ast.keyword)):
                ast.copy_location(sub, node)
        return LocalFunction(made_lambda, env, self, len(self.comprehensions))

    def partial_function(self, node, calling=None):
        """`functools.partial(f, a, k=v)` as the lambda it stands for: `lambda *rest, **more: f(a, *rest,
        k=v, **more)`, with `f`, `a` and `v` as known here (so `map(partial(f, params), data)` inlines f).
        With `calling` (a function known now), `node`'s arguments are all bound to it instead:
        `np.vectorize(f)` is `partial(vectorized, f)`."""
        holders, env = [], dict(self.env)
        if calling is not None:
            holders.append(ast.Name(self.namer.invented("partial").name, ast.Load()))
            env[holders[0].id] = calling
        for part in [node.args[0]] + node.args[1:] + [kw.value for kw in node.keywords]:
            holder = self.namer.invented("partial").name
            env[holder] = self.value(part)
            holders.append(ast.Name(holder, ast.Load()))
        rest, more = self.namer.invented("rest").name, self.namer.invented("more").name
        count = len(node.args) + (calling is not None)  # the function and the positional parts
        call = ast.Call(holders[0], holders[1:count] + [ast.Starred(ast.Name(rest, ast.Load()), ast.Load())],
                        [ast.keyword(kw.arg, h) for kw, h in zip(node.keywords, holders[count:])]
                        + [ast.keyword(None, ast.Name(more, ast.Load()))])
        arguments = ast.arguments(posonlyargs=[], args=[], vararg=ast.arg(rest), kwonlyargs=[], kw_defaults=[],
                                  kwarg=ast.arg(more), defaults=[])
        made = ast.Lambda(arguments, call)
        for sub in ast.walk(made):
            if isinstance(sub, (ast.expr, ast.arg, ast.keyword)):
                ast.copy_location(sub, node)
        made.partial_parts = (holders[:count], {kw.arg: h for kw, h in zip(node.keywords, holders[count:])})
        return LocalFunction(made, env, self, len(self.comprehensions))

    def partial_value(self, local, node):
        """`partial(f, a, k=v)` kept as a value (`self._fn = partial(...)` in a branch, numpy-ml's
        WeightInitializer): made as written, by functools.partial, when the code runs."""
        def atom(holder):
            value = local.env[holder.id]
            if isinstance(value, StaticValue) and value.atom is None:
                return self.free_object(getattr(value.obj, "__name__", "function"), lambda found=value.obj: found)
            return self.as_atom(value, node)
        positional, keywords = local.node.partial_parts
        return self.made_partial([atom(h) for h in positional], {k: atom(h) for k, h in keywords.items()}, node)

    def made_partial(self, args, kwargs, node):
        """`functools.partial(*args, **kwargs)`, made when the code runs (an opaque call: a value carrying a
        derivative passed to it is refused where a derivative must flow)."""
        maker = self.free_object("partial", lambda: functools.partial)
        prim = _OPAQUE.setdefault(("call", "partial()", id(functools.partial)), Primitive(
            name="functools.partial", fn=functools.partial, params=(), defaults={}, form="opaque", spelling="()"))
        return self.emit(prim, [maker, *args], kwargs, node, None)

    def display_value(self, node, target=None):
        """A list, tuple or dict display: KnownItems if an item must stay known, else its atom."""
        if isinstance(node, ast.Dict):
            if any(k is None or not isinstance(k, ast.Constant) for k in node.keys):
                return self.expr(node)
            items = [self.value(v) for v in node.values]
            if not self.needs_known(items):
                return self.emit(rules.lookup(make_dict), [Const(tuple(k.value for k in node.keys))] + items, {},
                                 node, target)
            return KnownItems(tuple(items), "dict", tuple(k.value for k in node.keys))
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return self.expr(node)
        items = [self.value(e) for e in node.elts]
        kind = "list" if isinstance(node, ast.List) else "tuple"
        if not self.needs_known(items):
            return Pack(tuple(items), kind)
        return KnownItems(tuple(items), kind)

    def global_items(self, obj, node):
        """A list or tuple read from the function's module or closure: KnownItems when its items are
        functions or objects of the user's of different classes (`ACTIVATIONS = [Sigmoid(), Tanh()]`)."""
        if not obj or len(obj) > MAX_UNROLLED:
            return self.expr(node)
        functions = [_function_like(v) for v in obj]
        objects = [not f and not inspect.isclass(v) and users_class(type(v)) for f, v in zip(functions, obj)]
        classes = {type(v) for v, o in zip(obj, objects) if o}
        if not all(f or o for f, o in zip(functions, objects)):
            return self.expr(node)
        if not any(functions) and len(classes) < 2 and not (getattr(self, "unrollable", True)
                                                            and any(map(_holds_functions, obj))):
            whole = self.expr(node)  # objects of one class: taken out of it, their methods are inlined
            if isinstance(node, ast.Attribute) and isinstance(whole, Var):
                self.know_items(whole, obj)
            return whole
        # functions, objects of different classes, or of one class holding functions or objects in their
        # attributes (numpy-ml's layers, each with its own `act_fn`): each item known, so is what it holds
        whole = self.expr(node)
        items = []
        self.bindings.append(("len", obj, None, len(obj)))  # (made again for another number of items)
        for k, v in enumerate(obj):
            self.bindings.append(("item", obj, k, v))  # (made again if the item is another one)
            atom = self.emit(rules.lookup(operator.getitem), [whole, Const(k)], {}, node, None)
            if not _function_like(v):
                self.know_object(atom, v)
                items.append(atom)
            else:
                items.append(StaticValue(v, atom))
        return KnownItems(tuple(items), "list" if isinstance(obj, list) else "tuple")

    def known_item(self, known, node):
        """`fs[0]`, `acts["tanh"]`: the item, when the index is known now; `layers[1:]`: those items."""
        if isinstance(node.slice, ast.Slice) and known.kind != "dict":
            bounds = [self.expr(b) if b is not None else Const(None)
                      for b in (node.slice.lower, node.slice.upper, node.slice.step)]
            if all(isinstance(b, Const) and (b.value is None or type(b.value) is int) for b in bounds):
                return KnownItems(known.items[slice(*(b.value for b in bounds))], known.kind)
        index = self.expr(node.slice)
        if not isinstance(index, Const):
            raise self.unsupported(node, f"`{ast.unparse(node.value)}` holds functions or objects of different "
                                         f"classes, so tapegen must know which item `{ast.unparse(node)}` is when "
                                         f"it transforms the function, but the index is computed at run time",
                                   "index with a constant, or loop over the items")
        try:
            if known.kind == "dict":
                return known.items[known.keys.index(index.value)]
            return known.items[index.value]
        except (ValueError, IndexError, TypeError):
            raise self.unsupported(node, f"`{ast.unparse(node)}`: no such item", None) from None

    def global_item(self, node):
        """The item `node` reads from a list, tuple or dict in the function's module or closure by a
        constant index (`LAYERS[2]`, or `ACTIVATIONS[kind]` with `kind` known now: a string argument the code
        is made for), or None."""
        if not isinstance(node, ast.Subscript):
            return None
        if _constant_index(node.slice):
            index = ast.literal_eval(node.slice)
        elif isinstance(node.slice, ast.Name) and isinstance(self.env.get(node.slice.id), Const):
            index = self.env[node.slice.id].value
        elif isinstance(node.slice, ast.Name) and node.slice.id not in self.env and \
                type(self.scope.lookup(node.slice.id)) is str:  # ACTS[ACTIVATION], a string of the module's
            index = self.read_name(node.slice).value  # (a constant: the code is made again if it is rebound)
        else:
            return None
        if isinstance(node.value, ast.Name) and node.value.id in self.env:
            return None
        container = self.static(node.value)
        if not isinstance(container, (list, tuple, dict)):
            return None
        try:
            item = container[index]
        except (IndexError, KeyError, TypeError):
            return None
        if isinstance(container, (list, dict)):  # (made again if the item is another one when it is called)
            self.bindings.append(("item", container, index, item))
        return item

    def global_functions(self, node):
        """The list, tuple or dict of functions in the function's module or closure `node` reads an item of by
        an index or key not known now (see `global_choice`), or None."""
        if not isinstance(node, ast.Subscript) or isinstance(node.value, ast.Name) and node.value.id in self.env:
            return None
        container = self.static(node.value)
        if not isinstance(container, (list, tuple, dict)) or not container or len(container) > MAX_UNROLLED:
            return None
        functions = container.values() if isinstance(container, dict) else container
        return container if all(_function_like(f) and _hashable(f) for f in functions) else None

    def global_choice(self, node):
        """The item `node` reads from a list, tuple or dict of functions in the function's module or closure by
        an index or key computed when the code runs (`ACTIVATIONS[self.activation]`), as a Choice among its
        functions (a call through it dispatches on which one it is), or None."""
        container = self.global_functions(node)
        if container is None:
            return None
        functions = list(container.values() if isinstance(container, dict) else container)
        if isinstance(container, (list, dict)):  # (made again if an item is another one when it is called)
            for index in (container if isinstance(container, dict) else range(len(container))):
                self.bindings.append(("item", container, index, container[index]))
        candidates = tuple(StaticValue(f) for f in dict.fromkeys(functions))  # (each function once)
        return Choice(candidates, self.expr(node))

    def known(self, node):
        """What `node` names, if it is a name bound to KnownItems or a LocalFunction (or a constant item of
        one, `fs[0]`), without lowering anything; else None."""
        if isinstance(node, ast.Name):
            value = self.env.get(node.id)
            return value if isinstance(value, (KnownItems, LocalFunction)) else None
        if isinstance(node, ast.Subscript) and (_constant_index(node.slice) or (
                isinstance(node.slice, ast.Name) and isinstance(self.env.get(node.slice.id), Const))):
            base = self.known(node.value)
            if isinstance(base, KnownItems):
                return self.known_item(base, node)
        if _display_of_functions(node, self.function_like):  # {"relu": lambda z: ..., "tanh": np.tanh}[kind]
            made = self.display_value(node)
            return made if isinstance(made, KnownItems) else None
        return None

    def as_atom(self, item, node):
        """An item of KnownItems as a plain value."""
        if isinstance(item, KnownItems):
            return self.materialize(item, node)
        atom = item.atom if isinstance(item, StaticValue) else item
        if isinstance(item, Choice):  # one function or another: the one it holds when the code runs
            atom = item.var if all(isinstance(one, StaticValue) for one in item.candidates) else None
        if isinstance(atom, LocalFunction) and hasattr(atom.node, "partial_parts"):
            return self.partial_value(atom, node)
        if atom is None or isinstance(atom, LocalFunction):
            raise self.unsupported(node, f"`{ast.unparse(node)}` holds a function defined in the differentiated "
                                         f"function (a lambda or nested def), used here as a value",
                                   "call it, or define it outside the differentiated function")
        return atom

    def check_attribute_not_stale(self, base, attr, node):
        """`obj.d` read after `d = obj.d; d[k] = v` changed the dict through `d` (check_not_an_attributes): Python
        shows the change in `obj.d`; tapegen's change made a new dict only `d` holds (a wrong value and derivative
        if read): refused."""
        if (base, attr) in self.stale_attributes:
            name, where, _ = self.stale_attributes[(base, attr)]
            raise self.unsupported(node, f"`{ast.unparse(node)}` is read after `{ast.unparse(where)}` "
                                         f"({self.span(where)}) changed the list or dict it holds through `{name}`: "
                                         f"tapegen's change made a new one, which only `{name}` holds",
                                   f"set the attribute again after the change (`obj.{attr} = {name}`), or change "
                                   f"it through the attribute (`obj.{attr}[...] = ...`)")

    def materialize(self, known: KnownItems, node):
        """KnownItems used as a plain value: its atoms, each item read as a value."""
        atoms = [self.as_atom(item, node) for item in known.items]
        if known.kind == "dict":
            return self.emit(rules.lookup(make_dict), [Const(known.keys)] + atoms, {}, node, None)
        return Pack(tuple(self.flat(a, node, whole=True) if isinstance(a, Pack) else a for a in atoms), known.kind)

    def expr_Constant(self, node, target):
        return Const(node.value)

    def expr_NamedExpr(self, node, target):
        """`(y := f(x))`: `y = f(x)`, then the value of `y`."""
        self.assign(node.target.id, node.value)
        return self.expr(ast.copy_location(ast.Name(node.target.id, ast.Load()), node.target), target)

    def expr_Name(self, node, target):
        return self.read_name(node)

    def read_name(self, node):
        name = node.id
        if name in self.env:
            value = self.env[name]
            if value in self.stale:
                where, stmt, how = self.stale[value]
                if how == "construct":
                    raise self.unsupported(node, f"`{name}` is the list or dict `{where}` held before "
                                                 f"{_describe(stmt)} at {self.span(stmt)} changed its items "
                                                 f"in place, which tapegen made a new value there (this name would "
                                                 f"not show the change)", f"read `{where}` after the change instead")
                if how == "item":
                    raise self.unsupported(node, f"`{name}` is what `{where}` held before `{ast.unparse(stmt)}` "
                                                 f"({self.span(stmt)}) changed it, which tapegen made a new value "
                                                 f"there (this name would not show the change)",
                                           f"read `{where}` again after changing it")
                raise self.unsupported(node, f"`{name}` was changed in place by `{ast.unparse(stmt)}` in a function "
                                             f"it was passed to ({self.span(stmt)}), which tapegen cannot follow",
                                       f"return the new value from that function and assign it: "
                                       f"{name} = f({name}, ...)")
            if value in self.iterators:
                self.read_iterator(name, value, node)
            if isinstance(value, Unsettled) and value.keys:  # one function or another: known on each path
                self.lower_again(value, node)
            if isinstance(value, Unsettled):
                raise self.unsupported(node, value.why, value.hint)
            if isinstance(value, Choice):  # read as a value: the function it holds when the code runs
                if not all(isinstance(one, StaticValue) for one in value.candidates):
                    raise self.unsupported(node, f"`{name}` holds a local function on some path here, which can "
                                                 f"only be called", "call it, or define the function outside the "
                                                                    "differentiated function")
                return value.var
            if isinstance(value, Frozen):  # read as a value, not called: the frozen object itself
                return self.made(value)
            if isinstance(value, LocalFunction):
                raise self.unsupported(node, f"the local function `{name}` can only be called here",
                                       "call it, or define it outside the differentiated function")
            if isinstance(value, KnownItems):
                return self.materialize(value, node)
            if isinstance(value, StaticValue):  # a function read as a value (`kw = {"act": act}`)
                if value.atom is None:
                    raise self.unsupported(node, f"`{name}` is a function or module here, used as a value",
                                           f"call it ({name}(...)); tapegen follows it there")
                return value.atom
            return value
        if name in self.scope.locals:
            raise self.unsupported(node, f"`{name}` is used before it is assigned", "assign it first")
        value = self.scope.lookup(name)
        if value is MISSING:
            raise self.unsupported(node, f"name `{name}` is not defined", "define it, or import it")
        if type(value) is str and not isinstance(self.scope.globals, LiveNamespace):  # ACTIVATION = "relu" (or a
            cell = self.scope.cells.get(name)  # closure's): known now, as a constant string, so ACTS[ACTIVATION]
            self.bindings.append(("cell", cell, None, value) if cell is not None else  # is known; the code is
                                 ("item", self.scope.globals, name, value))  # made again if it is rebound
            return Const(value)
        if value is NotImplemented:  # (an operator's method returning it: tried in `overloaded`)
            return Const(value)
        clash = name in self.reserved and self.reserved_value(name) is not value  # a global `seed`, `tape`, ...
        key = (id(self.fn), name)
        if key not in self.free:
            var = Var(name) if name not in self.namer.assigned and not clash else self.namer.invented(f"{name}_")
            self.know_object(var, value)  # a global object of the user's: its methods are inlined
            self.know_items(var, value)
            self.namer.assigned.add(var.name)
            self.free[key] = var
            self.know_free_shape(var, value, name)
            self.nones[var] = (value is None, name)  # (`y is None` decided now, checked when the code runs)
            if var.name != name or self.call_stack:
                self.free_sources[var.name] = (self.fn, name)
            twin = self.twin_of(var)
            if twin is not None:  # `cell` in a helper's closure, the layer the caller's `cell` is: one object,
                self.same_object(twin, var, name, node)  # whose attributes set in one are read in the other
                self.free[(id(self.fn), name, "read")] = var
                self.free[key] = twin
        kept = self.carried.get(("module reads", 0), ())
        if (name, "kept") in kept or ("*", "kept") in kept and isinstance(value, (np.ndarray, np.generic, int, float,
                                                                                complex)):
            return self.emit(rules.lookup(assign_primitive), [self.free[key]], {}, node, None)  # rebound by the
        return self.free[key]  # code (`global`): the value read here, kept (for the backward pass)

    def know_items(self, var, value):
        """A list or tuple of objects all of one class of the user's, read from the module (`BLOCKS = [Sine(),
        Sine()]`): an item taken out of it is of that class, so its methods are inlined."""
        if isinstance(value, (list, tuple)) and value and len(value) <= MAX_UNROLLED:
            classes = {type(item) for item in value}
            cls = classes.pop()
            if not classes and not inspect.isclass(value[0]) and not _function_like(value[0]) and users_class(cls):
                self.item_types[var] = cls
                self.bindings.extend(("item", value, k, item) for k, item in enumerate(value))  # their methods:
                # cls's, inlined (the code is made again if an item is another object, or one is added)
                self.bindings.append(("len", value, None, len(value)))

    def know_free_shape(self, var, value, name):
        """A list, tuple or dict read from the module or closure (`f(*args, **kwargs)` in a wrapper): its
        length or keys are known from now on, as for one built here; the generated code starts by checking
        they are still what they were (same_shape_as_transformed), where the transform relied on them."""
        if isinstance(value, (list, tuple)) and len(value) <= MAX_UNROLLED:
            self.lengths[var] = size = len(value)
            self.lengths.watched.add(var)
        elif type(value) is dict and len(value) <= MAX_UNROLLED and all(type(k) is str for k in value):
            self.dict_keys[var] = size = tuple(value)
            self.dict_keys.watched.add(var)
        else:
            return
        self.free_shapes[var] = (size, name)

    def reserved_value(self, name):
        value = rules.lookup_name(name)
        return MISSING if value is rules.MISSING else value

    def expr_BinOp(self, node, target):
        fn = BINOPS.get(type(node.op))
        if fn is None:
            raise self.unsupported(node, "this operator is not supported")
        joined = self.known_joined(node)
        if joined is not None:
            return joined
        return self.binary(fn, self.expr(node.left), self.expr(node.right), node, target)

    def known_joined(self, node):
        """`fs + [np.tanh]`, `[relu] * 2`: lists (or tuples) of functions or objects known one by one, joined or
        repeated, known one by one too (so a call through an item is that item's), else None."""
        left, right = (self.known_joined(side) if isinstance(side, ast.BinOp) else self.known(side)
                       for side in (node.left, node.right))
        if isinstance(node.op, ast.Add) and isinstance(left, KnownItems) and isinstance(right, KnownItems) \
                and left.kind == right.kind and left.kind in ("list", "tuple"):
            return KnownItems(left.items + right.items, left.kind)
        if isinstance(node.op, ast.Mult) and (isinstance(left, KnownItems) or isinstance(right, KnownItems)):
            items, count = (left, node.right) if isinstance(left, KnownItems) else (right, node.left)
            count = count.value if isinstance(count, ast.Constant) else None
            if items.kind in ("list", "tuple") and type(count) is int and len(items.items) * count <= MAX_UNROLLED:
                return KnownItems(items.items * max(count, 0), items.kind)
        return None

    def binary(self, fn, left, right, node, target):
        """`left <op> right`: `+` and `*` join and repeat lists and tuples, and compute on arrays; an object of
        the user's class defining the operator calls its method."""
        known = _known_text(fn, left, right)
        if known is not None:  # "layer_%d" % i, "W" + str(i) with i known now: the key it names
            return known
        if fn is operator.mod and isinstance(left, Const) and isinstance(left.value, str):  # "loss=%.3f" % loss
            return self.emit(rules.lookup(formatted), [left, right, Const("%")], {}, node, target)
        overloaded = self.overloaded(fn, left, right, node)
        if overloaded is not None:
            return overloaded
        kinds = (self.container_kind(left), self.container_kind(right))
        if fn is operator.or_ and "dict" in kinds:  # d | e: a new dict, d's items with e's set (not a bitwise or)
            return self.emit(rules.lookup(updated), [left, right], {}, node, target)
        if fn is operator.add and any(kinds):  # joining sequences, not adding numbers
            op = concat if all(kinds) else plus  # plus: the other side's type is known only when it runs
            return self.emit(rules.lookup(op), [left, right], {}, node, target)
        if fn is operator.add and all(v in self.list_items or v in self.maybe_lists for v in (left, right)):
            return self.emit(rules.lookup(plus), [left, right], {}, node, target)  # rows[0] + rows[1]: items of a
            #     list of lists built here (joined; added, should they be arrays when the code runs); p["W"] + p["b"]
        if fn is operator.mul and any(kinds):  # [x] * 3: the items repeated
            items, n = (left, right) if kinds[0] else (right, left)
            return self.emit(rules.lookup(repeat_items), [items, n], {}, node, target)
        repeated = next((v for v, n in ((left, right), (right, left)) if v in self.maybe_lists and isinstance(
            n, Const) and type(n.value) is int), None)  # p["xs"] * 2: repeated if a list, else NumPy's product
        if fn is operator.mul and repeated is not None:
            return self.emit(rules.lookup(repeat_items), [repeated, right if repeated is left else left], {}, node,
                             target)
        if fn is operator.mul and any(v in self.list_items for v in (left, right)):  # rows[0] * 3: an item of a
            items, n = (left, right) if left in self.list_items else (right, left)  # list of lists built here
            return self.emit(rules.lookup(repeat_items), [items, n], {}, node, target)  # (repeated, should it be one)
        if fn not in (operator.add, operator.mul):  # x ** [1, 2, 3]: a list has no `-`, `/`, `**`, so the
            left, right = self._as_array(left, node), self._as_array(right, node)  # other side is an array
        return self.emit(rules.lookup(fn), [left, right], {}, node, target)

    def overloaded(self, fn, left, right, node):
        """`a * b` where an operand is an object of a class of the user's defining the operator: its method
        (`a.__mul__(b)`, or `b.__rmul__(a)`) inlined, tried in the order Python tries them; else None. The
        reflected method of the right operand only where the left one's operator surely gives way to it (a
        number written in the code, or an object of the user's without the operator): an array's would not."""
        name = OPERATOR_METHODS.get(fn)
        classes = [self.types.get(atom) if isinstance(atom, Var) else None for atom in (left, right)]
        if name is None or not any(cls is not None and users_class(cls) and not issubclass(cls, (tuple, list, dict))
                                   for cls in classes):
            return None
        own, reflected = f"__{name}__", f"__r{name}__"
        tries = [(left, right, own)] if classes[0] is not None else []
        if classes[1] is not None and classes[1] is not classes[0]:
            subclass_first = classes[0] is not None and issubclass(classes[1], classes[0]) and \
                inspect.getattr_static(classes[1], reflected, None) is not \
                inspect.getattr_static(classes[0], reflected, None)
            tries.insert(0 if subclass_first else len(tries), (right, left, reflected))
        for receiver, other, method_name in tries:
            method = self.special_method(receiver, method_name, node)
            if method is None:
                continue
            gives_way = receiver is left or isinstance(other, Const) and type(other.value) in (int, float, complex) \
                or classes[0] is not None
            if not gives_way:
                raise self.unsupported(node, f"`{ast.unparse(node)}`: NumPy's operator on the left operand (an array "
                                             f"or a NumPy number) runs before {classes[1].__name__}.{method_name} and "
                                             f"computes item by item on the object, which tapegen cannot follow",
                                       f"put the object on the left, or call {method_name} yourself")
            result = self.operator_method(method, method_name, receiver, other, node)
            if not (isinstance(result, Const) and result.value is NotImplemented):
                return result
        return None

    def operator_method(self, method, name, receiver, other, node):
        """`receiver.<name>(other)`, an operator's method of the user's class, inlined. It may return
        NotImplemented (Python then tries the other operand's method) only as decided now (`if not
        isinstance(other, G): return NotImplemented`): the Const returned."""
        cls = self.types[receiver]
        block, start = self.current, len(self.current)
        result = self.inline(method, node, [receiver, other], {}, receiver=cls)
        if "NotImplemented" in method.__code__.co_names and not isinstance(result, Const) and any(
                isinstance(eqn, Eqn) and any(isinstance(a, Const) and a.value is NotImplemented for _, a in eqn.inputs)
                for eqn in walk(block[start:])):  # (returned on a path decided as the code runs)
            raise self.unsupported(node, f"`{ast.unparse(node)}` calls {cls.__name__}.{name}, which may return "
                                         f"NotImplemented (Python then tries the other operand's method): which "
                                         f"one computes the value is known only when the code runs",
                                   f"call the method you mean yourself: {name}(...)")
        return result

    def held_kind(self, atom):
        """"list" or "dict" for a list or dict built here, or read from an attribute of a module's object that
        holds one now (checked before each call with that object's other names); else None."""
        kind = self.container_kind(atom)
        if kind in ("list", "dict"):
            return kind
        held = self._read_from_live(atom)
        if held is None:
            return None
        return "dict" if isinstance(getattr(self.live[held[0]], held[1], None), dict) else "list"

    def known_lengths(self, args, kwargs=None) -> tuple:
        """(("len", position), (kind, length)) for each of `args` that is a list or tuple of a length known
        now, (("rows", position), length) for an array of a length known now (an array argument of code made
        for its length), (("str", position), text) for each that is a string known now, and (("none",
        position), True) for each None: statics as a call's arguments give them (Target.length_statics),
        positions counted in `args`; of `kwargs`, by name, and (("keyword", name), None) for every keyword
        passed (a parameter it sets is not at its default)."""
        known = [(("keyword", name), None) for name in kwargs or {}]
        for k, arg in [*enumerate(args), *(kwargs or {}).items()]:
            if isinstance(arg, Const) and type(arg.value) is str:
                known.append((("str", k), arg.value))
                continue
            if isinstance(arg, Const) and arg.value is None:  # (None: `y is None` decided in its code)
                known.append((("none", k), True))
                continue
            kind, length = self.container_kind(arg), self._length(arg) if isinstance(arg, (Var, Pack)) else None
            if kind in ("list", "tuple") and length is not None:
                known.append((("len", k), (kind, length)))
            elif kind is None and isinstance(arg, Var) and length is not None:  # an array of a length known now
                known.append((("rows", k), length))
        return tuple(known)

    def names_sequence(self, node) -> bool:
        """Whether `node` is a name of a list or tuple built here."""
        return isinstance(node, ast.Name) and self.container_kind(self.env.get(node.id)) in ("list", "tuple")

    def container_kind(self, atom):
        """"list", "tuple" or "dict" for an atom known to be one at transform time, else None."""
        if isinstance(atom, Pack) and atom.kind in ("list", "tuple"):
            return atom.kind
        return self.containers.get(atom) if isinstance(atom, Var) else None

    def expr_UnaryOp(self, node, target):
        operand = self.expr(node.operand)
        name = {ast.USub: "__neg__", ast.UAdd: "__pos__", ast.Invert: "__invert__"}.get(type(node.op))
        method = self.special_method(operand, name, node) if name is not None else None
        if method is not None:  # -v of an object of the user's class defining __neg__: the method
            return self.inline(method, node, [operand], {}, receiver=self.types[operand])
        if isinstance(node.op, ast.USub) and isinstance(operand, Const) and isinstance(operand.value, (int, float)):
            return Const(-operand.value)
        if isinstance(node.op, ast.Not) and isinstance(operand, Const) and isinstance(operand.value, _PLAIN):
            return Const(not operand.value)  # `if not compute_uv:` with a constant: decided when transforming
        return self.emit(rules.lookup(UNARYOPS[type(node.op)]), [operand], {}, node, target)

    def expr_Caught(self, node, target):
        """The exception an `except` block handles (frontend/normalize.py's `Caught`)."""
        return self.emit(rules.lookup(caught_exception), [node.bound], {}, node, target)

    def expr_Matches(self, node, target):
        """Whether an `except` clause handles the exception caught (frontend/normalize.py's `Matches`)."""
        caught = self.expr(node.caught)
        classes = self.static_classes(node.catch) if isinstance(caught, Const) else None
        if classes is not None:  # an import that failed when transforming: decided now
            return Const(isinstance(caught.value, classes))
        return self.emit(rules.lookup(exception_matches), [caught, self.expr(node.catch)], {}, node, target)

    def expr_Compare(self, node, target):
        """`a < b`, and `a < b < c` as `(a < b) and (b < c)` with `b` computed once."""
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            sides = (node.left, node.comparators[0])
            named = next((s for s in sides if isinstance(s, ast.Name)), None)
            other = sides[1] if named is sides[0] else sides[0]
            held = self.env.get(named.id) if named is not None else None
            if isinstance(other, ast.Constant) and other.value is None and (isinstance(held, (LocalFunction, KnownItems))
                                                                          or isinstance(held, StaticValue) and held.obj is not None):
                return Const(isinstance(node.ops[0], ast.IsNot))  # `activation is None` for a function known now
        operands = [self.expr(node.left)]
        result = None
        for k, (op, comparator) in enumerate(zip(node.ops, node.comparators)):
            fn = COMPARES.get(type(op))
            if fn is None:
                raise self.unsupported(node, f"the comparison `{ast.unparse(node)}` is not supported")
            operands.append(self.expr(comparator))
            last = k == len(node.ops) - 1
            known = self._known_comparison(op, *operands[-2:])  # `x is None` for a None known now, a
            test = Const(known) if known is not None else _decided(fn, *operands[-2:])  # `(0, 1) is None`
            if test is not None and result is None:
                if last:
                    return test
                result = test
                continue
            test = self.emit(rules.lookup(fn), operands[-2:], {}, node, target if last and result is None else None)
            result = test if result is None else self.emit(rules.lookup(np.logical_and), [result, test], {}, node,
                                                           target if last else None)
        return result

    def _known_comparison(self, op, left, right):
        """The comparison's value when the transform knows it, else None: `x is None` for a None known now,
        and a list, tuple or dict built here against a number, string or None (`pad == "same"` where `pad`
        is the tuple of widths, `pad in ("same", "causal")`): never equal, as Python compares them."""
        fn = COMPARES[type(op)]
        if all(isinstance(o, Const) and isinstance(o.value, _PLAIN) for o in (left, right)):
            return bool(fn(left.value, right.value))
        if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)):
            return None
        if isinstance(op, (ast.In, ast.NotIn)):
            items = right.items if isinstance(right, Pack) and right.kind in ("list", "tuple") else \
                right.value if isinstance(right, Const) and isinstance(right.value, (list, tuple)) else None
            plain = items is not None and all(
                isinstance(i, _PLAIN) or isinstance(i, Const) and isinstance(i.value, _PLAIN) for i in items)
            if plain and self._is_container(left):
                return isinstance(op, ast.NotIn)
            keys = self.known_keys(right) if isinstance(right, Var) and self.containers.get(right) == "dict" else None
            if keys is not None and isinstance(left, Const) and _hashable(left.value):  # "wrappers" in dv
                return (left.value in keys) != isinstance(op, ast.NotIn)
            return None
        pair = (left, right) if self._is_container(left) else (right, left)
        if self._is_container(pair[0]) and isinstance(pair[1], Const) and isinstance(pair[1].value, _PLAIN) \
                and not (pair[1].value is None and pair[0] in self.maybe_none):  # (`self.m = None` before)
            return isinstance(op, (ast.NotEq, ast.IsNot))
        pair = (left, right) if isinstance(left, Var) else (right, left)
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(pair[1], Const) and pair[1].value is None \
                and pair[0] in self.types and pair[0] not in self.mixed:
            return isinstance(op, ast.IsNot)  # `act_fn is None` on an object of the user's (`ReLU()`): False
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(pair[1], Const) and pair[1].value is None \
                and pair[0] in self.nones:  # `y is None` for the module's `y_train`, or an array argument of code
            none, name = self.nones[pair[0]]  # made for its length: known (CS231n's `if y is None: return scores`)
            if name is not None:
                self.nones_read.add(pair[0])
            return none != isinstance(op, ast.IsNot)
        return None

    def _is_container(self, atom):
        return isinstance(atom, Pack) and atom.kind in ("list", "tuple", "dict") or \
            isinstance(atom, Var) and self.containers.get(atom) in ("list", "tuple", "dict")

    def expr_JoinedStr(self, node, target):
        """An f-string: `str.format` of the values it shows (no derivative)."""
        template, values = [], []
        for part in node.values:
            if isinstance(part, ast.Constant):
                template.append(part.value.replace("{", "{{").replace("}", "}}"))
                continue
            spec = ""
            if part.format_spec is not None:
                if not all(isinstance(p, ast.Constant) for p in part.format_spec.values):
                    raise self.unsupported(part, "an f-string with a computed format is not supported",
                                           "write the format out, e.g. {x:.3f}")
                spec = ":" + "".join(p.value for p in part.format_spec.values)
            conversion = {-1: "", 115: "!s", 114: "!r", 97: "!a"}[part.conversion]
            template.append("{" + conversion + spec + "}")
            values.append(self.expr(part.value))
        if all(isinstance(v, Const) and isinstance(v.value, _PLAIN) for v in values):  # f"{k}_proj", k known now
            return Const("".join(template).format(*(v.value for v in values)))
        return self.emit(rules.lookup(formatted), [Const("".join(template)), Pack(tuple(values), "tuple")], {}, node,
                         target)

    def expr_Set(self, node, target):
        """`{0, 2}` of constants: a frozenset, for `in` tests and loops (changing it is refused, as any
        change of a constant is); of computed values, `set([...])`, which no derivative flows through."""
        try:
            items = [ast.literal_eval(e) for e in node.elts]
        except ValueError:
            return self.as_set(ast.List(node.elts, ast.Load()), node, target)
        return Const(frozenset(items))

    def as_set(self, items, node, target):
        """`set(items)` (a list display or comprehension): a set holds no order, so a value carrying a derivative
        put into one is refused (set's NoRuleError); labels, keys and shapes are fine."""
        call = ast.copy_location(ast.Call(ast.Name("set", ast.Load()), [ast.copy_location(items, node)], []), node)
        return self.call_object(set, call, 1, [target])[0]

    def expr_Tuple(self, node, target):
        return self.display(node, "tuple", target)

    def expr_List(self, node, target):
        return self.display(node, "list", target)

    def display(self, node, kind, target):
        """`[a, b]`, `(a, *xs, b)`: the items; a starred one of a length known now is spread item by item,
        else the display is the pieces joined (`concat([a], list(xs))`), as Python builds it."""
        pieces, items = [], []
        for elt in node.elts:
            if not isinstance(elt, ast.Starred):
                items.append(self.expr(elt))
                continue
            atom = self.expr(elt.value)
            if isinstance(atom, Pack) or self._length(atom) is not None:
                items += self.spread(atom, elt)
                continue
            if items:
                pieces.append(Pack(tuple(items), kind))
                items = []
            pieces.append(self.emit(rules.lookup(list if kind == "list" else tuple), [atom], {}, elt, None))
        if not pieces:
            return Pack(tuple(items), kind)
        if items:
            pieces.append(Pack(tuple(items), kind))
        joined = pieces[0]
        for k, piece in enumerate(pieces[1:], 2):
            joined = self.emit(rules.lookup(concat), [joined, piece], {}, node, target if k == len(pieces) else None)
        return joined

    def expr_Dict(self, node, target):
        if node.keys and node.keys[0] is None and all(k is None or isinstance(k, ast.Constant) for k in node.keys):
            merged = self.emit(rules.lookup(dict), [self.expr(node.values[0])], {}, node, None)  # {**d, "b": b}
            for k, (key, value) in enumerate(zip(node.keys[1:], node.values[1:]), 2):  # {**base, **extra}: the
                made = target if k == len(node.keys) else None  # items of each set in turn, as Python does
                merged = self.emit(rules.lookup(updated), [merged, self.expr(value)], {}, node, made) if key is None \
                    else self.emit(rules.lookup(with_item), [merged, Const(key.value), self.expr(value)], {}, node, made)
            return merged
        known = [k.value if isinstance(k, ast.Constant) else self.expr(k) if k is not None else None
                 for k in node.keys]  # {name: x} with `name = "layer_%d" % 2`: a key known now
        known = [k.value if isinstance(k, Const) else k for k in known]
        if any(k is None or isinstance(k, (Var, Pack)) or not _hashable(k) for k in known):
            raise self.unsupported(node, "a dict literal needs keys known when transforming here (and `**d` first "
                                         "only)", "write the keys as literals")
        keys = Const(tuple(known))
        values = [self.expr(v) for v in node.values]
        return self.emit(rules.lookup(make_dict), [keys] + values, {}, node, target)

    def expr_BoolOp(self, node, target):
        """`a and b` / `a or b`, short-circuiting: the second operand is evaluated in a branch. Operands
        known when transforming decide it then (`p == "same" and k`, `p` a tuple: False, `k` not read)."""
        rest = list(node.values)
        first = self.expr(rest.pop(0))
        while rest and isinstance(first, Const) and isinstance(first.value, (*_PLAIN, tuple)):
            if bool(first.value) != isinstance(node.op, ast.And):
                return first  # `False and ...`, `True or ...`
            first = self.expr(rest.pop(0))
        if not rest:
            return first
        result = self.namer.temp()
        self.emit(rules.lookup(assign_primitive), [first], {}, node, result)
        ends = [self.facts_of(result)]
        for value in rest:
            branch = self._expression_block(value, result, node)
            ends.append(self.facts_of(result))
            then, orelse = (branch, []) if isinstance(node.op, ast.And) else ([], branch)
            self.current.append(If(result, tuple(then), tuple(orelse), self.span(node)))
        self.agree_facts(result, ends)  # (`x or []`: a list only if x is one)
        return result

    def expr_IfExp(self, node, target):
        """`a if c else b`: each side is evaluated only in its branch."""
        cond = self.expr(node.test)
        if isinstance(cond, Const):
            return self.expr(node.body if cond.value else node.orelse, target)
        result = self.namer.temp()
        then = self._expression_block(node.body, result, node)
        first = self.facts_of(result)
        orelse = self._expression_block(node.orelse, result, node)
        self.agree_facts(result, [first, self.facts_of(result)])  # `out[0] if lstm else out`: not a tuple
        self.current.append(If(cond, tuple(then), tuple(orelse), self.span(node)))
        return result

    def expr_ListComp(self, node, target):
        return self.comprehension(node, node.elt)

    def expr_GeneratorExp(self, node, target):  # its items, in a list: what sum(), np.stack() ... receive
        if node not in self.whole_reads and self.may_act(node):
            self.refuse_acting(node, "this generator")
        return self.one_pass(self.comprehension(node, node.elt))

    def check_not_a_generator(self, value, node, how):
        """Refuses `g[0]`, `len(g)`, `reversed(g)` on a generator (or map, zip object), where Python raises
        TypeError: tapegen's list would give a number."""
        if isinstance(value, ast.GeneratorExp) or isinstance(value, ast.Name) and isinstance(
                self.env.get(value.id), Var) and self.env[value.id] in self.iterators:
            raise self.unsupported(node, f"a generator (or map or zip object) {how} here: Python raises TypeError "
                                         f"(a generator has no items to index, no length, no order to reverse; "
                                         f"NumPy's functions take sequences: np.array(g) holds g itself)",
                                   "make it a list first: list(...) or [... for ...] (or np.fromiter(g, float))")

    def may_act(self, node) -> bool:
        """Whether computing a generator's items (`node`) may change state or read state changed between them:
        a call of a function of the user's (or a local one), a method that changes its object, a `:=`."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.NamedExpr):
                return True
            if not isinstance(sub, ast.Call):
                continue
            if isinstance(sub.func, ast.Attribute) and sub.func.attr in _CHANGING_METHODS:
                return True
            if isinstance(self.known(sub.func), LocalFunction) or isinstance(self.env.get(getattr(sub.func, "id", None)), (LocalFunction, Choice)):
                return True
            called = self.static(sub.func)
            if called is not MISSING and (user_function(called) is not None and not _keeps_state_alone(
                    user_function(called)) or inspect.isclass(called) and users_class(called)
                                          or users_class(type(called))):
                return True
        return False

    def refuse_acting(self, node, what):
        raise self.unsupported(node, f"{what} computes its items with calls that may change state (a function of "
                                     f"yours, a method changing a list), and is read where Python runs other code "
                                     f"between its items or stops early (a `for` loop, zip): tapegen computes all "
                                     f"its items first", "make it a list first ([... for v in xs]), or read it "
                                                         "with sum(), list(), sorted(), min() or max()")

    def one_pass(self, items):
        """`items`, the list a generator (or a map or zip object) yields, marked to be read once: Python's
        iterator is empty after its first reader, tapegen's list would not be (see `read_iterator`)."""
        if isinstance(items, Var):
            self.iterators[items] = {id(c) for c in self.open_constructs}  # (a loop's, a branch's: `next_item`)
        return items

    def next_item(self, node):
        """`next(g)` (`next(g, default)`) on a name holding a generator (or map, zip, `iter(xs)`): the first item of
        tapegen's list of what it yields (Python's StopIteration where none is left, or the default), and `g`
        the rest of the list, to be read once still (`rest = list(g)`, another `next(g)`). Inside a loop or
        branch it was not made in, refused as a second read is (which items are left would depend on the path)."""
        name = node.args[0].id
        value = self.env[name]
        made_in = self.iterators[value]
        if made_in is None:
            self.read_iterator(name, value, node)  # (refuses: read again)
        around = [c for c in self.open_constructs if id(c) not in made_in]
        if around:
            kind = "loop" if any(isinstance(c.node, (ast.For, ast.While)) for c in around) else "branch"
            raise self.unsupported(node, f"`next({name})` in a {kind} `{name}` was made outside of: which of its "
                                         f"items are left after it depends on the {'pass' if kind == 'loop' else 'path'}"
                                         f" taken, which tapegen does not follow",
                                   f"make `{name}` a list and index it (`{name}[k]`, with a counter), or call next() "
                                   f"outside the {kind}")
        items = self.read_name(node.args[0])
        first = self.first_item(items, node)
        rest = self.emit(rules.lookup(operator.getitem), [items, Const(slice(1, None))], {}, node, None)
        self.fresh.add(rest)
        self.store(name, rest, node)
        self.iterators[self.env[name]] = made_in  # (the var `name` holds in a construct setting it: to be read once)
        if self.env[name] is not rest:
            self.iterators[rest] = None
        return first

    def first_item(self, items, node):
        """`next(...)` of the list `items` (what is left of a generator): its first item; Python's StopIteration
        where it is empty, or the default `node` passes."""
        if len(node.args) == 1:
            self.emit_multi(rules.lookup(not_exhausted), [items], {}, node, 0, [])
            return self.emit(rules.lookup(operator.getitem), [items, Const(0)], {}, node, None)
        return self.emit(rules.lookup(first_or), [items, self.expr(node.args[1])], {}, node, None)

    def read_iterator(self, name, value, node):
        """A name holding a generator (or map, zip) read: the only read allowed, and not in a loop the
        generator was made outside (its second pass would find it empty)."""
        made_in = self.iterators.pop(value)
        if value in self.acting and node not in self.whole_reads:
            self.refuse_acting(node, f"`{name}`, a generator,")
        loops = made_in is not None and [c for c in self.open_constructs
                                         if isinstance(c.node, (ast.For, ast.While)) and id(c) not in made_in]
        if made_in is None or loops:
            raise self.unsupported(node, f"`{name}` is a generator (or map or zip object) read "
                                         f"{'again' if made_in is None else 'in a loop'} here: Python's is empty "
                                         f"after its first reader has run through it, and tapegen reads it as a list",
                                   f"make it a list where it is made ({name} = [...] or list(...)) if it is meant "
                                   f"to be read more than once")
        self.iterators[value] = None
        before, start = self.lazy_reads.pop(value, ({}, 0))
        written = {self.view_base(var) for var in self.in_place_log[start:]}
        changed = [n for n, atom in before.items() if self.env.get(n) is not atom
                   or isinstance(atom, Var) and self.view_base(atom) in written]
        if changed:
            raise self.unsupported(node, f"`{name}` is a generator reading `{changed[0]}`, which is changed (or "
                                         f"rebound) after the generator is made and before it is read here: "
                                         f"Python's generator computes its items as it is read, seeing the change; "
                                         f"tapegen's, where it is made",
                                   f"make it a list where it is made ({name} = [...]), or make the generator "
                                   f"where it is read")
        self.read_as_alias.clear()
        self.read_as_alias[value] = made_in  # (the last read only)

    def expr_DictComp(self, node, target):
        return self.comprehension(node, (node.key, node.value))

    def comprehension(self, node, element):
        """`[f(x) for x in xs if c(x)]` (or a generator, or a dict comprehension), as the loop it stands for.

        The result starts empty, and a `for` loop (one per `for` clause, `if`s as branches) appends
        each element to it (a dict: sets its item). The comprehension's own names stay its own: outer
        variables of the same names are untouched, as in Python.
        """
        if any(gen.is_async for gen in node.generators):
            raise self.unsupported(node, "async comprehensions cannot be differentiated", _HINTS[ast.Await])
        if isinstance(node, (ast.ListComp, ast.DictComp)) and len(node.generators) == 1 \
                and not node.generators[0].ifs and (self._makes_object(element[1] if isinstance(node, ast.DictComp)
                                                                       else element)
                                                    or self._makes_function(element)):
            made = self.objects_made_item_by_item(node, element)
            if made is not None:
                return made
        is_dict = isinstance(node, ast.DictComp)
        maker = rules.lookup(make_dict if is_dict else make_list)
        result = self.emit(maker, [Const(())] if is_dict else [], {}, node, None)
        holder = self.namer.invented("comprehension").name
        holders = {holder: result}
        if is_dict:
            key, value = element
            inner = ast.Assign([ast.Subscript(ast.Name(holder, ast.Load()), key, ast.Store())], value)
        else:
            inner = ast.Expr(ast.Call(ast.Attribute(ast.Name(holder, ast.Load()), "append", ast.Load()), [element], []))
        first = node.generators[0].iter
        length = self._iterated_length(first) if not is_dict and len(node.generators) == 1 \
            and not node.generators[0].ifs else None
        result = self.comprehension_loop(node, [inner], holders)[0]
        if length is not None and isinstance(result, Var):  # [p * 0.9 for p in params]: one item per item, so
            self.lengths[result] = length  # `f(*new)` passes as many (in a loop too, where each pass agrees)
        return result

    def _iterated_length(self, iterated):
        """How many items a comprehension's (first) iterable has, if the transform knows it: a name's list or
        tuple of known length, a display without `*` (`[params[k] for k in ("Wq", "Wk", "Wv")]`), a constant
        tuple; else None."""
        if isinstance(iterated, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in iterated.elts):
            return len(iterated.elts)
        if isinstance(iterated, ast.Constant) and isinstance(iterated.value, (tuple, str, bytes)):
            return len(iterated.value)
        held = self.env.get(iterated.id) if isinstance(iterated, ast.Name) else None
        return self._length(held) if isinstance(held, (Var, Pack)) else None

    def comprehension_loop(self, node, inner, holders, guard=None, after=()):
        """The loop a comprehension stands for, `inner` (statements) its innermost body, run with the names
        `holders` bound to their first values (and `after`, statements run after it); their last values.
        `guard` (an expression) is tested before each item's `if`s and body, at every level."""
        inner = list(inner)
        for gen in reversed(node.generators):
            body = inner
            for condition in reversed(gen.ifs):
                body = [ast.If(condition, body, [])]
            if guard is not None:
                body = [ast.If(guard, body, [])]
            inner = [ast.For(gen.target, gen.iter, body, [])]
        inner = inner[0]
        for sub in ast.walk(inner):
            if isinstance(sub, (ast.stmt, ast.expr)) and not hasattr(sub, "lineno"):
                ast.copy_location(sub, node)
        bound = {n.id for gen in node.generators for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        first = node.generators[0].iter  # Python evaluates the first iterable outside: [f(a) for a in [a, 2 * a]]
        if _reads(first, bound):
            outer_loop = inner
            while not (isinstance(outer_loop, ast.For) and outer_loop.iter is first):
                outer_loop = outer_loop.body[0]
            outer_loop.iter = self._evaluated_outside(first, bound)
        outer = {name: self.env.pop(name) for name in bound if name in self.env}
        shared = {name: self.shared.pop(name) for name in bound if name in self.shared}
        self.env.update(holders)
        self.comprehensions.append({name: outer.get(name) for name in bound})
        try:
            self.statement(inner)
            for statement in after:
                self.statement(statement)
        finally:
            self.comprehensions.pop()
            for name in bound:
                self.env.pop(name, None)
            self.env.update(outer)
            self.shared.update(shared)
            # (a dict's items set in a loop unrolled over its keys: a new value)
            results = [self.env.pop(holder) for holder in holders]
        return results

    def short_circuit(self, fn, node):
        """`any(c(v) for v in xs)`, `all(...)`, `next(f(v) for v in xs if c(v))` (or with a default): the loop
        that stops at the first item deciding it, as Python's does; the items after it are not computed (they
        may change a list, or raise)."""
        gen = node.args[0]
        result, found = self.namer.invented(fn.__name__).name, self.namer.invented("found").name

        def name(n, ctx=ast.Load):
            return ast.Name(n, ctx())

        def decided(value):
            return [ast.Assign([name(result, ast.Store)], value), ast.Assign([name(found, ast.Store)], ast.Constant(True))]
        if fn is next:
            inner = decided(gen.elt)
            first = self.expr(node.args[1]) if len(node.args) == 2 else Const(None)
        else:
            test = gen.elt if fn is any else ast.UnaryOp(ast.Not(), gen.elt)
            inner = [ast.If(test, decided(ast.Constant(fn is any)), [])]
            first = Const(fn is all)
        after = [] if fn is not next or len(node.args) == 2 else [ast.If(
            ast.UnaryOp(ast.Not(), name(found)), [ast.Raise(ast.Call(name("StopIteration"), [], []), None)], [])]
        made = [*inner, *after]
        for sub in (n for statement in made for n in ast.walk(statement)):
            if isinstance(sub, (ast.stmt, ast.expr)) and not hasattr(sub, "lineno"):
                ast.copy_location(sub, node)
        return self.comprehension_loop(gen, inner, {result: first, found: Const(False)},
                                       guard=ast.copy_location(ast.UnaryOp(ast.Not(), name(found)), node),
                                       after=after)[0]

    def _makes_object(self, element) -> bool:
        """Whether `element` is a call making an object of a class of the user's (`Dense(W, b)`)."""
        if not isinstance(element, ast.Call):
            return False
        cls = self.static(element.func)
        return cls is not MISSING and inspect.isclass(cls) and users_class(cls)

    def _makes_function(self, element) -> bool:
        """Whether `element` (of a list comprehension) makes a function: a lambda (`lambda z, k=k: z * k`), or
        a call of a function of the user's that returns a lambda or a def of its own (`make_scaler(k)`)."""
        if isinstance(element, ast.Lambda):
            return True
        if not isinstance(element, ast.Call):
            return False
        fn = user_function(self.static(element.func)) if self.static(element.func) is not MISSING else None
        if fn is None:
            return False
        try:
            from .source import function_source
            tree = function_source(fn).node
        except Exception:  # no source: not one of these
            return False
        local = {s.name for s in tree.body if isinstance(s, ast.FunctionDef)}
        returns = [r for r in ast.walk(tree) if isinstance(r, ast.Return) and r.value is not None]
        return bool(returns) and all(isinstance(r.value, ast.Lambda) or isinstance(r.value, ast.Name)
                                     and r.value.id in local for r in returns)

    def objects_made_item_by_item(self, node, element):
        """`[Dense(W, b) for W, b in params]` over a sequence whose length is known now (or `{k: Layer() for k
        in ["Q", "K"]}`): the objects one by one (KnownItems), so each item is the object it is and its methods
        read its own attributes; None (before lowering anything) where the length or keys are not known."""
        gen = node.generators[0]
        counted = isinstance(gen.iter, ast.Call) and self.static(gen.iter.func) is range and not gen.iter.keywords \
            and all(_plain_reads(a) for a in gen.iter.args)  # range(3), range(n)
        if not counted and not _plain_reads(gen.iter) and not (
                isinstance(gen.iter, ast.Subscript) and _plain_reads(gen.iter.value) and _plain_reads(gen.iter.slice)):
            return None  # (lowered twice when this returns None: names, constants and their slices only)
        keys = None
        if isinstance(node, ast.DictComp):  # {k: Dropout(...) for k in ["Q", "K", "V"]}: keys known now
            if not (isinstance(element[0], ast.Name) and isinstance(gen.target, ast.Name)
                    and element[0].id == gen.target.id and isinstance(gen.iter, (ast.List, ast.Tuple))
                    and all(isinstance(e, ast.Constant) for e in gen.iter.elts)
                    and len({e.value for e in gen.iter.elts}) == len(gen.iter.elts)):
                return None
            keys, element = tuple(e.value for e in gen.iter.elts), element[1]
        bounds = [self.expr(a) for a in gen.iter.args] if counted else None
        if counted and all(isinstance(b, Const) and type(b.value) is int for b in bounds):
            iterable = KnownItems(tuple(Const(k) for k in range(*(b.value for b in bounds))), "list")
        else:
            iterable = self.value(gen.iter)
        count = len(iterable.items) if isinstance(iterable, KnownItems) else self._length(iterable)
        if count is None or count > MAX_UNROLLED:
            return None
        held = self.namer.invented("iterable").name
        bound = {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        outer = {name: self.env.pop(name) for name in bound if name in self.env}
        self.env[held] = iterable
        items = []
        try:
            for k in range(count):
                item = ast.copy_location(ast.Subscript(ast.Name(held, ast.Load()), ast.Constant(k), ast.Load()), node)
                self.statement(ast.fix_missing_locations(ast.copy_location(ast.Assign([gen.target], item), node)))
                items.append(self.value(element))
            last = {name: self.env[name] for name in bound if name in self.env}
            items = [replace(item, env=collections.ChainMap(last, item.env))  # [lambda v: v * k for k
                     if isinstance(item, LocalFunction) and item.env is self.env else item  # in ...]: Python's reads
                     for item in items]  # k's last value, the comprehension's, when called (not a helper's closure
        finally:  # over its own `k`: `[make_scaler(k) for k in ...]`)
            for name in bound:
                self.env.pop(name, None)
            self.env.update(outer)
            del self.env[held]
        if keys is not None:
            if self.needs_known(items):
                return KnownItems(tuple(items), "dict", keys)
            return self.emit(rules.lookup(make_dict), [Const(keys)] + items, {}, node, None)
        if not items or self.needs_known(items):  # (none: objects appended next are known one by one too)
            return KnownItems(tuple(items), "list")
        return self.emit(rules.lookup(make_list), items, {}, node, None)

    def _evaluated_outside(self, iterable, bound):
        """`iterable` with what reads the comprehension's own names evaluated now, under names of its own.
        `zip(v, c)` (or `enumerate(c)`) keeps its call, each argument evaluated, so the loop still walks
        the sequences item by item (`for c, q in zip(v, c)`: a zip object has no length)."""
        def held(part):
            name = self.namer.invented("iterable").name
            self.env[name] = self.value(part)
            return ast.copy_location(ast.Name(name, ast.Load()), part)
        if isinstance(iterable, ast.Call) and not _reads(iterable.func, bound) and not iterable.keywords \
                and not any(isinstance(arg, ast.Starred) for arg in iterable.args):
            args = [held(arg) if _reads(arg, bound) else arg for arg in iterable.args]
            return ast.copy_location(ast.Call(iterable.func, args, []), iterable)
        return held(iterable)

    def expr_SetComp(self, node, target):
        """`{k for k in labels}`: `set([k for k in labels])` (see as_set)."""
        return self.as_set(ast.ListComp(node.elt, node.generators), node, target)

    def _expression_block(self, value_node, result, node):
        self.blocks.append([])
        try:
            atom = self.expr(value_node)
            self.emit(rules.lookup(assign_primitive), [atom], {}, node, result)
            return self.blocks.pop()
        except BaseException:
            self.blocks.pop()
            raise

    def expr_Attribute(self, node, target):
        static = self.static(node)
        if static is not MISSING and not callable(static) and _literal_constant(static):
            holder = self.static(node.value)  # a module constant such as np.pi or np.newaxis; a number of a
            if (id(holder), node.attr) in self.static_set:  # (set in the function before: not this constant)
                raise self.static_attribute_refused(node)
            if isinstance(holder, (types.ModuleType, type)) and not library_object(holder):  # module or class of
                self.bindings.append(("attr", holder, node.attr, static))  # the user's: checked before each call
            return Const(static)
        if static is not MISSING and not callable(static) and not isinstance(static, types.ModuleType):
            module, attr = self.static(node.value), node.attr  # cfg.WEIGHTS, data.X: read when the code runs
            return self.free_object(f"{_root_name(node)}_{attr}", lambda m=module, a=attr: getattr(m, a))
        base = self.expr(node.value)
        if (base, node.attr) in self.live_written:
            text, where = self.live_written[(base, node.attr)]
            raise self.unsupported(node, f"`{ast.unparse(node)}` is read after `{text}` ({self.span(where)}) wrote a "
                                         f"value carrying a derivative into it, as Python does: tapegen cannot follow "
                                         f"that value back out of the object", "keep the value in a local variable "
                                                                                "and read that")
        self.check_attribute_not_stale(base, node.attr, node)
        assigned = self.attributes.get((base, node.attr))
        if assigned is not None:  # self.h = ...; ... self.h: the value assigned
            value, block = assigned
            if not self.is_open(block):
                raise self.unsupported(node, f"`{ast.unparse(node)}` was assigned inside a branch or loop that has "
                                             f"ended, or outside the loop or branch a method reading it runs in, so "
                                             f"tapegen cannot tell which value it holds here",
                                       "assign it to a local name as well and read that, or pass it to the method")
            if isinstance(value, (StaticValue, Choice)):
                return self.as_atom(value, node)
            if isinstance(value, LocalFunction):  # self.act, a lambda set here, read but not called
                raise self.unsupported(node, f"`{ast.unparse(node)}` holds a function defined in the differentiated "
                                             f"function (a lambda or nested def), used here as a value",
                                       f"call it: {ast.unparse(node)}(...)")
            return value
        flag = self.known_flag(base, node)
        if flag is not None:
            return flag
        cls = self.class_of(base)
        prop = inspect.getattr_static(cls, node.attr, None) if cls is not None else None
        if isinstance(prop, property) and user_function(prop.fget) is not None:  # a property of the user's class
            self.bind_method(cls, node.attr, prop)  # (`C.w = property(...)` makes the code again)
            return self.inline(user_function(prop.fget), node, [base], {}, receiver=cls)
        if cls is not None and not issubclass(cls, tuple):
            self.check_attribute_access(cls, node, node.attr)
            if node.attr == "__dict__":
                self.check_not_read_whole(rules.lookup(getattr), [base], {}, node, "its `__dict__`")
            fallback = user_function(inspect.getattr_static(cls, "__getattr__", None))
            if fallback is not None and base not in self.live and \
                    inspect.getattr_static(cls, node.attr, MISSING) is MISSING:  # not set here, not of the class:
                self.bind_method(cls, "__getattr__", inspect.getattr_static(cls, "__getattr__"))
                return self.inline(fallback, node, [base, Const(node.attr)], {}, receiver=cls)  # its __getattr__
        self.check_untied_attribute(base, node.attr, node)
        if node.attr == "T" and cls is None:  # (an object's attribute `T`, a number of steps, is only that)
            return self.emit(rules.lookup(_transpose()), [base], {}, node, target)
        if node.attr in ("real", "imag") and rules.lookup(getattr(_numpy(), node.attr)) is not None:
            return self.emit(rules.lookup(getattr(_numpy(), node.attr)), [base], {}, node, target)
        if node.attr in METADATA_ATTRIBUTES:
            return self.emit(rules.lookup(_metadata()), [base, Const(node.attr)], {}, node, target)
        method = cls is not None and inspect.isfunction(inspect.getattr_static(cls, node.attr, None))
        result = self.emit(BOUND_METHOD if method else rules.lookup(getattr), [base, Const(node.attr)], {}, node,
                           target)
        self.know_object(result, getattr(self.live.get(base), node.attr, None) if base in self.live else None)
        if result in self.live:  # `MOD.sub`: its methods are inlined for the object it holds now
            self.bindings.append(("attr", self.live[base], node.attr, self.live[result]))
        self.attribute_reads.setdefault((base, node.attr), []).append(result)
        twin = self.twin_of(result) if not method else None
        if twin is not None:  # `self.cell_fwd` in a method, the object the caller read as `bl.cell_fwd`: one
            self.same_object(twin, result, ast.unparse(node), node)  # object, whose attributes set through one
            return twin  # are read through the other
        return result

    def known_flag(self, base, node):
        """`obj.flag` tested by an `if`, as the Const it holds now (True, False or None), where `obj` is an
        object of the module (or a closure) and this function has not set it: numpy-ml's lazy
        `if not self.is_initialized:` on a layer set up before lowers only the branch taken. The value is
        among the names checked before each call (a changed one has the code made again, Program.bindings),
        and checked where it is read, against a change made by code run as written during the call."""
        if not getattr(self, "deciding", False) or base not in self.live:
            return None
        obj = self.live[base]
        try:
            value = inspect.getattr_static(obj, node.attr)
        except AttributeError:
            return None
        if not (value is None or type(value) is bool):
            return None
        self.bindings.append(("attr", obj, node.attr, value))
        self.emit_multi(rules.lookup(attribute_as_transformed), [base, Const(node.attr), Const(value), Const(
            f"`{ast.unparse(node)}` was {value} when tapegen transformed the function, and its gradient code "
            f"took the branch for that; it changed while the function ran")], {}, node, 0, [])
        return Const(value)

    def same_object(self, twin, var, written, node):
        """Check, when the code runs, that `var` (read as `written`) still holds the object `twin` holds."""
        self.emit_multi(rules.lookup(identity_check), [twin, var, Const(True), Const(
            f"`{written}` and `{twin.name}` were one object when this gradient code was made, and are "
            f"different ones now")], {}, node, 0, [])

    def twin_of(self, var):
        """Another var holding the module's object `var` holds, read where `var` is read (not in a branch or
        loop that has ended), or None."""
        if var not in self.live:
            return None
        held = self.live[var]
        candidates = [other for other, obj in self.live.items() if obj is held and other is not var]
        if not candidates:
            return None
        free = set(self.free.values())
        return next((other for other in candidates if (other in free if other not in self.var_block else
                                                        self.is_open(self.var_block[other]))), None)

    def know_object(self, var, obj):
        """`var` holds `obj`, an object of the user's read from the module (or an attribute of one): its
        methods are inlined, and so are those of the objects its attributes hold (`self.elu.fn(z)`)."""
        if obj is not None and not inspect.isclass(obj) and (users_class(type(obj))
                                                             or type(obj) is types.SimpleNamespace):
            self.types[var] = type(obj)
            self.live[var] = obj

    def expr_Subscript(self, node, target):
        self.check_not_a_generator(node.value, node, "indexed")
        if self.static(node.value) is np.s_:  # np.s_[i, 1:]: the index itself (also in generated code)
            return self.index(node.slice)
        if self.static(node.value) is np.r_ or self.static(node.value) is np.c_:
            return self.index_trick(node, self.static(node.value) is np.c_, target)
        known = self.known(node) if isinstance(node.value, (ast.Name, ast.Subscript)) else None
        if isinstance(known, (Var, Const)):  # heads["K"] of a display kept known: the item itself (an object)
            return known
        if isinstance(node.value, ast.Attribute) and node.value.attr == "flat":  # a.flat[i] of an array
            array = self.expr(node.value.value)
            if isinstance(array, Var) and array not in self.types and array not in self.live:
                return self.inline(user_function(flat_get), node, [array, self.index(node.slice)], {})
        base = self.expr(node.value)
        constant = _constant_index(node.slice) or isinstance(node.slice, ast.Name) and isinstance(
            self.env.get(node.slice.id), Const)
        if isinstance(base, KnownItems) and constant:  # m.layers[0] of an attribute holding [Dense(W1), Dense(W2)]
            known = self.known_item(base, node)
            if isinstance(known, (Var, Const)):
                return known
        appended = self.appended_items(base)
        if appended is not None:  # layers[0] (m.layers[i - 1], i known) of a list of layers built here by `.append`
            index = self.known_int(node.slice)
            if index is not None and -len(appended) <= index < len(appended):
                return self.as_atom(appended[index], node)
        special = self.special_method(base, "__getitem__", node)
        if special is not None:  # p["w"] on an object of the user's: its __getitem__
            return self.inline(special, node, [base, self.expr(node.slice)], {}, receiver=self.types[base])
        index = self.container_key(base, node.slice)
        constants = self.constant_items.get(base) if isinstance(base, Var) else None
        if constants and isinstance(index, Const) and _hashable(index.value) and index.value in constants:
            return constants[index.value]  # {"mean": None}["mean"]: known now
        if isinstance(base, Pack) and isinstance(index, Const) and isinstance(index.value, int) \
                and -len(base.items) <= index.value < len(base.items):
            return base.items[index.value]  # (a, b)[1] is b
        if isinstance(base, Pack) and base.kind in ("tuple", "list") and isinstance(index, Const) \
                and isinstance(index.value, slice):
            return Pack(tuple(base.items[index.value]), base.kind)  # args[1:] of *args: the values known
        if isinstance(base, Pack):
            maker = rules.lookup(make_list if base.kind == "list" else make_tuple)
            base = self.emit(maker, list(base.items), {}, node, None)
        item = self.emit(rules.lookup(operator.getitem), [base, index], {}, node, target)
        self.know_object(item, self.global_item(node))  # BLOCKS[1]: that object of the module's
        if item not in self.live and isinstance(index, Const):
            self.know_object(item, self.live_item(base, index.value))  # self.heads["Q"] of a layer set up before
            twin = self.twin_of(item)
            if twin is not None:  # read before (in a loop over the keys, then in a property): one object
                self.same_object(twin, item, ast.unparse(node), node)
                return twin
        return item

    def known_int(self, node):
        """The int `node` is when transforming: an int literal, a name bound to one here, or +, -, *, // and %
        of them (`i - 1` in a loop unrolled); else None."""
        if isinstance(node, ast.Constant):
            return node.value if type(node.value) is int else None
        if isinstance(node, ast.Name):
            value = self.env.get(node.id)
            return value.value if isinstance(value, Const) and type(value.value) is int else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = self.known_int(node.operand)
            return None if value is None else -value
        if isinstance(node, ast.BinOp) and type(node.op) in _INT_OPS:
            left, right = self.known_int(node.left), self.known_int(node.right)
            if left is None or right is None or right == 0 and type(node.op) in (ast.FloorDiv, ast.Mod):
                return None
            return _INT_OPS[type(node.op)](left, right)
        return None

    def live_item(self, container, key):
        """The object of the user's at `key` of the list or dict `container` holds, where `container` is read
        from an attribute of a module's object that this function has not set (a layer's `self.heads`, set
        up before), or None. What it holds is among the names checked before each call."""
        held = self._read_from_live(container)
        if held is None:
            return None
        value = getattr(self.live[held[0]], held[1], None)
        try:
            obj = value[key]
        except (IndexError, KeyError, TypeError):
            return None
        if inspect.isclass(obj) or not users_class(type(obj)):
            return None
        self.bindings += [("attr", self.live[held[0]], held[1], value), ("item", value, key, obj)]
        return obj

    def index_trick(self, node, columns, target):
        """`np.r_[a, b]`: np.concatenate of the items made at least 1-d. `np.c_[a, b]`: of the items made
        columns (`np.column_stack` of one), along the last axis. So NumPy joins arrays and numbers."""
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for elt in elts:
            if (isinstance(elt, ast.Constant) and isinstance(elt.value, str)) or (
                    isinstance(elt, ast.Slice) and not isinstance(self.index(elt), Const)):
                raise self.unsupported(node, f"`{ast.unparse(node.value)}[...]` with a string item or a slice "
                                             f"computed when the code runs is not supported inside a "
                                             f"differentiated function",
                                       "write it with np.concatenate, np.arange or np.column_stack")
        make = rules.lookup(np.column_stack if columns else np.atleast_1d)
        items = [self.emit(make, [Pack((self.ranged(elt),), "tuple")] if columns else [self.ranged(elt)], {}, elt,
                           None) for elt in elts]
        return self.emit(rules.lookup(np.concatenate), [Pack(tuple(items), "tuple")],
                         {"axis": Const(-1 if columns else 0)}, node, target)

    def container_key(self, container, node):
        """The index of an item of a list, tuple or dict: a constant where written as one, and also where it is
        an int or string the function reads from its module or closure (`a[argnum] = x` in a wrapper), so
        which item moves is known item by item (ItemFlow); the generated code checks it is still that value."""
        index = self.index(node)
        if isinstance(container, Pack) or self.container_kind(container) is not None:
            return self.fixed_free_value(node, index, (int, str))
        return index

    def fixed_free_value(self, node, atom, kinds):
        """`atom` (what `node` reads) as a Const where `node` names an int, string or tuple of ints (of `kinds`)
        of the module or closure, which the generated code checks is still that value; else `atom`."""
        if not (isinstance(atom, Var) and isinstance(node, ast.Name) and node.id not in self.env):
            return atom
        value = self.scope.lookup(node.id)
        if type(value) in kinds and (type(value) is not tuple or all(type(v) is int for v in value)):
            self.free_values[atom] = (value, node.id)
            return Const(value)
        return atom

    def ranged(self, node):
        """An item of `np.r_[...]`: a constant slice is the range it stands for (`1:10`, `0:1:5j`), as NumPy reads it."""
        if not isinstance(node, ast.Slice):
            return self.expr(node)
        part = self.index(node).value
        start = 0 if part.start is None else part.start
        if isinstance(part.step, complex):  # 0:1:5j: five points from 0 to 1, both ends in
            return self.emit(rules.lookup(np.linspace), [Const(start), Const(part.stop), Const(int(abs(part.step)))],
                             {}, node, None)
        return self.emit(rules.lookup(np.arange), [Const(start), Const(part.stop), Const(part.step or 1)], {}, node,
                         None)

    def index(self, node):
        if isinstance(node, ast.Tuple):
            items = tuple(self.index(elt) for elt in node.elts)
            if all(isinstance(item, Const) for item in items):
                return Const(tuple(item.value for item in items))
            return Pack(items, "index")
        if isinstance(node, ast.Slice):
            parts = [Const(None) if p is None else self.expr(p) for p in (node.lower, node.upper, node.step)]
            if all(isinstance(p, Const) for p in parts):
                return Const(slice(*(p.value for p in parts)))
            return self.emit(rules.lookup(slice), parts, {}, node, None)
        return self.expr(node)

    def expr_Call(self, node, target):
        results = self.call(node, outputs=1, targets=[target])
        return results[0] if results else Const(None)  # xs.append(v) used as a value: None

    # --- calls --------------------------------------------------------------------------

    def callee_primitive(self, node):
        func = node.func
        obj = self.static(func)
        if obj is not MISSING:
            return rules.lookup(obj)
        if isinstance(func, ast.Attribute):
            entry = rules.method(func.attr)
            return entry[0] if entry else None
        return None

    def fold(self, fn, args, node, target):
        """`fn(a, b, c)` for a binary `fn` given several arguments: fn(fn(a, b), c)."""
        result = args[0]
        for k, arg in enumerate(args[1:], 2):
            result = self.emit(rules.lookup(fn), [result, arg], {}, node, target if k == len(args) else None)
        return result

    def arguments(self, node, static=False, spread_later=False, callee=None, bound=0):
        """A call's (positional atoms, keyword atoms), `*xs` and `**d` spread out item by item.

        `static`: functions and modules passed stay known (`StaticValue`), for calls that are inlined.
        `spread_later`: for a call run as written (no rule, not inlined), `*xs` of a length known only
        when the code runs (`rs.randn(*mean.shape)`) stays a `Spread`, written `*xs` in generated code.
        `callee`: the function of yours the call inlines, whose parameters tell how many items a `*xs` of a
        length known only when the code runs must have (`positional_encoding(*x.shape)`); its first `bound`
        parameters are not the call's (a class's `__init__`: self).
        """
        def read(node):  # a frozen distribution passed to a helper stays one
            frozen = self.frozen(node) if static else None
            return frozen if frozen is not None else self.value(node) if static else self.expr(node)
        args, kwargs = [], {}
        for arg in node.args:
            known = self.known(arg.value) if isinstance(arg, ast.Starred) else None
            if isinstance(known, KnownItems) and known.kind != "dict":  # f(*fs): each item as it is known
                args += [item if static else self.as_atom(item, arg) for item in known.items]
            elif isinstance(arg, ast.Starred):
                atom = self.expr(arg.value)
                unknown = not isinstance(atom, Pack) and self.lengths.get(atom) is None
                count = self._spread_count(callee, node, arg, bound) if unknown and callee is not None else None
                if spread_later and unknown:
                    args.append(Spread(atom))
                elif count is not None:  # as many as the parameters it fills: checked when the code runs
                    self.emit_multi(rules.lookup(spread_known), [atom, Const(count), Const(callee.__name__)], {},
                                    arg, 0, [])
                    args += [self.emit(rules.lookup(operator.getitem), [atom, Const(k)], {}, arg, None)
                             for k in range(count)]
                else:
                    args += self.spread(atom, arg)
            else:
                args.append(read(arg))
        for kw in node.keywords:
            known = self.known(kw.value) if kw.arg is None else None
            if isinstance(known, KnownItems) and known.kind == "dict":
                kwargs.update({k: item if static else self.as_atom(item, kw) for k, item in zip(known.keys, known.items)})
            elif kw.arg is None and spread_later and self._unknown_keywords(kw):
                kwargs[f"**{len(kwargs)}"] = self.expr(kw.value)  # written `**d` in generated code
            elif kw.arg is None:
                kwargs.update(self.spread_keywords(self.expr(kw.value), kw))
            else:
                kwargs[kw.arg] = read(kw.value)
        return args, kwargs

    @staticmethod
    def _spread_count(fn, node, starred, bound=0):
        """How many items `*xs` (`starred`, the one `*` of the call `node`) must have for `fn` (a function of
        yours taking no `*args`) to be called: the positional parameters it fills, up to the first one passed
        by keyword (or the last), none of them nor of those the arguments after it fill with a default (else
        another number would do: None)."""
        if not inspect.isfunction(fn) or sum(isinstance(a, ast.Starred) for a in node.args) != 1 \
                or any(kw.arg is None for kw in node.keywords):
            return None
        params = list(inspect.signature(fn).parameters.values())
        if any(p.kind is p.VAR_POSITIONAL for p in params):
            return None
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][bound:]
        named = {kw.arg for kw in node.keywords}
        end = next((k for k, p in enumerate(positional) if p.name in named), len(positional))
        before = node.args.index(starred)
        start, stop = before, end - (len(node.args) - 1 - before)
        if stop < start or any(p.default is not p.empty for p in positional[start:end]):  # (a default among
            return None  # those the arguments after it fill: fewer items would do too, `f(*xs, 5)`)
        return stop - start

    def spread(self, atom, node):
        """The items of `*xs`, when the transform knows how many there are."""
        if isinstance(atom, Pack):
            return list(atom.items)
        n = self.lengths.get(atom) if isinstance(atom, Var) else None
        if n is None:
            written = ast.unparse(node.value)
            raise self.unsupported(node, f"`*{written}` passes a number of arguments tapegen cannot "
                                         f"know when it transforms the function (an array's length is known "
                                         f"only when the code runs)",
                                   f"unpack it into names first (`a, b, c = {written}`, as many as the function "
                                   f"takes) and pass those, build the list or tuple in the function (its length is "
                                   f"then known), or pass the arguments one by one")
        return [self.emit(rules.lookup(operator.getitem), [atom, Const(k)], {}, node, None) for k in range(n)]

    def keywords_by_parameters(self, fn, node):
        """(args, kwargs) of `fn(x, **d)` for a dict `d` whose keys are known only when the code runs (a dict
        argument, a loop's item: picoGPT's `transformer_block(x, **block, n_head=n_head)`): each parameter of
        `fn` not otherwise passed is `d[name]` (or `d.get(name, default)`), and the code checks, when it runs,
        that `d` has no other key (Python's TypeError). None where `fn` takes `**kwargs` itself."""
        signature = inspect.signature(fn)
        if any(p.kind in (p.VAR_KEYWORD, p.POSITIONAL_ONLY) for p in signature.parameters.values()):
            return None
        plain = ast.copy_location(ast.Call(node.func, node.args, [kw for kw in node.keywords if kw.arg is not None
                                                                  or not self._unknown_keywords(kw)]), node)
        args, kwargs = self.arguments(plain, static=True)
        positional = [p for p in signature.parameters.values() if p.kind is not p.VAR_POSITIONAL][:len(args)]
        given = {p.name for p in positional} | set(kwargs)
        names = [p.name for p in signature.parameters.values()
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        for kw in node.keywords:
            if kw.arg is not None or not self._unknown_keywords(kw):
                continue
            spread = self.expr(kw.value)
            self.emit_multi(rules.lookup(keywords_known), [spread, Const(tuple(names)), Const(tuple(sorted(given))),
                                                           Const(fn.__name__)], {}, kw, 0, [])
            for p in signature.parameters.values():
                if p.name in given or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                    continue
                if p.default is p.empty:
                    kwargs[p.name] = self.emit(rules.lookup(operator.getitem), [spread, Const(p.name)], {}, kw, None)
                elif _literal_constant(p.default):
                    kwargs[p.name] = self.emit(rules.lookup(item_or), [spread, Const(p.name), Const(p.default)], {},
                                               kw, None)
                else:
                    return None
                given.add(p.name)
        return args, kwargs

    def _unknown_keywords(self, keyword) -> bool:
        """`**kwargs` whose keys the transform cannot know (a dict parsed from a string, say)."""
        value = self.env.get(keyword.value.id) if isinstance(keyword.value, ast.Name) else None
        return isinstance(value, Var) and self.dict_keys.get(value) is None

    def spread_keywords(self, atom, node):
        """The items of `**d`, for a dict whose keys the transform knows."""
        keys = self.dict_keys.get(atom) if isinstance(atom, Var) else None
        if keys is None:
            raise self.unsupported(node, f"`**{ast.unparse(node.value)}` passes keywords tapegen cannot know when it "
                                         f"transforms the function",
                                   "build the dict in the function with constant keys, or pass keywords one by one")
        return {key: self.emit(rules.lookup(operator.getitem), [atom, Const(key)], {}, node, None) for key in keys}

    def call(self, node, outputs=1, targets=None):
        node, holders = self._named_keyword_spreads(node)
        try:
            return self._call(node, outputs, targets)
        finally:
            for holder in holders:
                self.env.pop(holder, None)

    def _named_keyword_spreads(self, node):
        """`f(x, **params["blocks"][0])`, `f(x, **self.cfg)`: the dict read first (a path of subscripts and
        attributes, which reads nothing else) and spread under a name, as `d = params["blocks"][0]; f(x, **d)`
        is: its keys, known or not, are then those of a name (picoGPT's `mha(x, **block["attn"])`). Returns
        the call as rewritten and the names to forget after it."""
        holders, keywords = [], []
        for k, kw in enumerate(node.keywords):
            before = node.args + [earlier.value for earlier in node.keywords[:k]]  # (read after these in Python:
            if kw.arg is None and not isinstance(kw.value, ast.Name) and _plain_path(kw.value) \
                    and not isinstance(self.known(kw.value), KnownItems) \
                    and not any(self.may_act(arg) for arg in before):  # read first only where they change nothing)
                holder = self.namer.invented("spread").name
                self.env[holder] = self.expr(kw.value)
                holders.append(holder)
                kw = ast.copy_location(ast.keyword(None, ast.copy_location(ast.Name(holder, ast.Load()), kw.value)),
                                       kw)
            keywords.append(kw)
        if not holders:
            return node, holders
        return ast.copy_location(ast.Call(node.func, node.args, keywords), node), holders

    def _call(self, node, outputs=1, targets=None):
        func = node.func
        if len(node.args) == 1 and isinstance(node.args[0], (ast.GeneratorExp, ast.Name, ast.Call)) \
                and _reads_whole(self.static(func)):  # sum(f(v) for v in xs): its items computed before it runs
            self.whole_reads.add(node.args[0])
        if len(node.args) == 1 and self.static(func) in (len, reversed):
            self.check_not_a_generator(node.args[0], node, f"given to {func.id}()" if isinstance(func, ast.Name)
                                       else "given to len() or reversed()")
        called = self.static(func)
        if called is not MISSING and called is not np.fromiter and (getattr(called, "__module__", None) or "").startswith(
                "numpy") and node.args:  # np.sum(v for v in x) raises, np.array(g) is an array holding g itself
            self.check_not_a_generator(node.args[0], node, f"given to {ast.unparse(func)}()")
        if isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and isinstance(func.value, ast.Name) \
                and isinstance(self.env.get(func.value.id), KnownItems) and self.env[func.value.id].kind == "list":
            return self.grow_known(func.value.id, func.attr, node)[:outputs]
        held = self.env.get(func.id) if isinstance(func, ast.Name) else None
        if isinstance(held, Unsettled) and held.keys:  # one function or another: known on each path
            self.lower_again(held, node)
        if isinstance(held, Choice):
            return self.call_chosen(func.id, held, node, outputs, self._called_as(func.id, held, node, outputs))
        known = self.known(func)
        if isinstance(known, Choice):  # fs[0](x), an item that is one function or another
            return self.call_chosen(ast.unparse(func), known, node, outputs)
        if isinstance(known, LocalFunction):
            args, kwargs = self.arguments(node, static=True)
            return self._call_result(self.inline_local(known, node, args, kwargs), outputs, node, targets)
        if isinstance(known, StaticValue):  # fs[0](x), acts["tanh"](z)
            return self.call_object(known.obj, node, outputs, targets, known.atom)
        if isinstance(known, Var) and self._own_method(known, "__call__") is not None:  # layers[0](x)
            return self.call_instance(known, node, outputs, targets)
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Call) and _constant_index(func.slice):
            made = self.expr(func.value)  # tg.vjp(f, x)[1](v): an item of what a call returned, called
            if isinstance(made, Pack):
                made = KnownItems(made.items, made.kind)
            if isinstance(made, KnownItems):
                return self.call_known(self.known_item(made, func), node, outputs, targets)
            raise self.unsupported(node, f"`{ast.unparse(func)}`: tapegen does not know which function this calls "
                                         f"when it transforms the function", f"assign the call's result first "
                                         f"and call its item by name")
        held = self.global_item(func)
        if held is not None and (_function_like(held) or _users_class_object(held)):  # FUNCTIONS[0](x), for a
            return self.call_object(held, node, outputs, targets)  # list in the module; ACTIVATIONS[name]()
        if held is not None and not inspect.isclass(held) and users_class(type(held)):  # LAYERS[2](x)
            callee = self.expr(func)
            self.know_object(callee, held)
            if self._own_method(callee, "__call__") is not None:
                return self.call_instance(callee, node, outputs, targets)
        choice = self.global_choice(func) if held is None else None
        if choice is not None:  # ACTIVATIONS[self.activation](z): by a key computed when the code runs
            return self.call_chosen(ast.unparse(func), choice, node, outputs)
        obj = self.static(func)
        if obj is len and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Name) \
                and isinstance(self.env.get(node.args[0].id), Pack):  # len(args) of a helper's *args: known now
            return (Const(len(self.env[node.args[0].id].items)),)
        if obj is len and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Attribute) \
                and isinstance(node.args[0].value, ast.Name):  # len(self.layers) of layers appended here: known now
            held = self.attributes.get((self.env.get(node.args[0].value.id), node.args[0].attr), (None,))[0]
            appended = self.appended_items(held) if isinstance(held, Var) else None
            if appended is not None:
                return (Const(len(appended)),)
        if obj is len and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Name) \
                and isinstance(self.env.get(node.args[0].id), Var) \
                and self.appended_items(self.env[node.args[0].id]) is not None:
            return (Const(len(self.appended_items(self.env[node.args[0].id]))),)
        if obj is not MISSING and obj in (_dataclasses().asdict, _dataclasses().astuple) and len(node.args) == 1 \
                and not node.keywords:
            made = self.dataclass_dict(node, as_tuple=obj is _dataclasses().astuple)
            if made is not None:  # dataclasses.asdict(p) of a dataclass object whose fields are not objects
                return (made,)
        if obj is not MISSING and obj is _dataclasses().replace and len(node.args) == 1 \
                and all(kw.arg for kw in node.keywords):  # dataclasses.replace(p, b=v): a new object of p's class
            made = self.replaced_dataclass(node)
            if made is not None:
                return (made,)
        if obj is np.where and len(node.args) == 1 and not node.keywords:  # np.where(mask): np.nonzero(mask)
            return self.emit_multi(rules.lookup(np.nonzero), [self.expr(node.args[0])], {}, node, outputs, targets)
        if obj in (any, all, next) and node.args and isinstance(node.args[0], ast.GeneratorExp) and not node.keywords \
                and len(node.args) <= (2 if obj is next else 1):  # any(c(v) for v in xs): stops at the first true
            return (self.short_circuit(obj, node),)
        if obj is next and 1 <= len(node.args) <= 2 and not node.keywords and isinstance(node.args[0], ast.Name) \
                and isinstance(self.env.get(node.args[0].id), Var) and self.env[node.args[0].id] in self.iterators:
            return (self.next_item(node),)
        if obj is next and 1 <= len(node.args) <= 2 and not node.keywords and isinstance(node.args[0], ast.Call) \
                and self.static(node.args[0].func) is iter and len(node.args[0].args) == 1 \
                and not node.args[0].keywords:  # next(iter(xs)): the first item of xs
            return (self.first_item(self.emit(rules.lookup(list), [self.expr(node.args[0].args[0])], {}, node, None),
                                    node),)
        if obj is iter and len(node.args) == 1 and not node.keywords:  # iter(xs): read once, item by item
            return (self.one_pass(self.emit(rules.lookup(list), [self.expr(node.args[0])], {}, node, None)),)
        if obj is map and node.args and not node.keywords:  # map(f, xs): [f(x) for x in xs]
            return (self.one_pass(self.mapped(node)),)
        plain_call = obj is not MISSING and _hashable(obj) and not any(isinstance(a, ast.Starred) for a in node.args)
        helper = stands_for(obj, len(node.args), [kw.arg for kw in node.keywords]) if plain_call else None
        iterables = (node.args if helper is OF_ITEMS[0] else node.args[:1]) if helper in OF_ITEMS else ()
        if iterables and all(isinstance(a, ast.Call) and self.static(a.func) is range for a in iterables):
            helper = None  # itertools.combinations(range(n), 2): of numbers, run as written
        if plain_call and obj in BY_KEY and len(node.args) == 1 and any(  # sorted(xs, key=lambda x: x[1])
                kw.arg == "key" and isinstance(self.known(kw.value) or kw.value, (ast.Lambda, LocalFunction))
                for kw in node.keywords):
            helper = BY_KEY[obj]
        if obj is sum and len(node.args) == 2 and not node.keywords and (isinstance(node.args[1], (ast.List, ast.Tuple))
                                                                        or self.names_sequence(node.args[1])):
            helper = joined_sum  # sum(rows, []) (or sum(rows, start) of a list): the rows joined (py_sum's rules add)
        if helper is not None:  # functools.reduce(f, xs), np.convolve(a, v): the code they stand for
            args, kwargs = self.arguments(node, static=True)
            return self._call_result(self.inline(helper, node, args, kwargs), outputs, node, targets)
        if obj is collections.defaultdict:  # (one built into a name, its items read here, is a dict: defaults.py)
            raise self.unsupported(node, "a defaultdict is followed where the function builds it into a name and "
                                         "reads its items there; this one is returned, passed to a function, kept "
                                         "elsewhere or asked what it is, where its missing items may be read unseen",
                                   "build it into a name and read its items in this function (`d = defaultdict("
                                   "list)`, then `d[k].append(v)`), or use a dict with d.setdefault(k, default)")
        if obj is zip and any(isinstance(a, ast.Starred) for a in node.args):  # zip(*rows), rows of a known length
            node = self._spread_known(node)
            if len(node.args) == 1 and isinstance(node.args[0], ast.Starred) and not node.keywords:  # of a number
                rows = self.expr(node.args[0].value)  # known when the code runs: the columns, as a list
                return (self.one_pass(self.inline(transposed, node, [rows], {})),)  # (read once, as zip's)
        if obj in (zip, enumerate) and node.args and (obj is zip and self.zip_strict(node) is not None or
                                                      not node.keywords and len(node.args) == 1) \
                and not any(isinstance(a, ast.Starred) for a in node.args):  # dict(zip(keys, values))
            return (self.one_pass(self.paired(node)),)
        if obj is isinstance and len(node.args) == 2 and not node.keywords:
            known = self.known_isinstance(node)
            if known is not None:  # isinstance(p, str) on a constant: decided now (its branch alone lowered)
                return (known,)
        if obj in (getattr, setattr) and len(node.args) == (2 if obj is getattr else 3) and not node.keywords \
                and not isinstance(self.scope.globals, LiveNamespace):  # (generated code's are its own primitives)
            name = self.expr(node.args[1])  # getattr(self, "W"), setattr(self, "last", x): the attribute
            if isinstance(name, Const) and isinstance(name.value, str) and name.value.isidentifier():
                attribute = ast.copy_location(ast.Attribute(node.args[0], name.value, ast.Load()), node)
                if obj is getattr and self.is_method_value(attribute):  # getattr(self, "_tanh"): the method
                    return (self.method_value(attribute),)
                if obj is getattr:
                    return (self.expr(attribute, (targets or [None])[0]),)
                attribute.ctx = ast.Store()
                self.statement(ast.copy_location(ast.Assign([attribute], node.args[2]), node))
                return (Const(None),)[:outputs]
        if obj is getattr and len(node.args) == 3 and not node.keywords:  # getattr(layer, "b", None)
            plain = ast.copy_location(ast.Call(node.func, node.args[:2], []), node)
            base, name = self.static(node.args[0]), self.expr(node.args[1])
            name = name.value if isinstance(name, Const) else None
            known = Const(hasattr(base, name)) if base is not MISSING and isinstance(name, str) else \
                self.known_hasattr(plain, absent_too=True)  # (a module's attribute, or an object's it knows)
            if known is not None:  # the attribute where it is there, else the default
                return (self.expr(plain, (targets or [None])[0]) if known.value else self.expr(node.args[2]),)
            raise self.unsupported(node, f"`{ast.unparse(node)}`: tapegen picks the attribute or the default when "
                                         f"it transforms the function, and here it cannot tell then whether the "
                                         f"object has it (the name is computed when the code runs, or the object "
                                         f"is not one whose attributes it knows)",
                                   "write the attribute's name as a string, on an object the function makes or "
                                   "reads from its module")
        if obj is hasattr and len(node.args) == 2 and not node.keywords:
            known = self.known_hasattr(node)
            if known is not None:  # hasattr(self, "conv2") on an object of the module that has it: decided now
                return (known,)
        if obj is not MISSING and marker(obj, "__tapegen_compose__") is not None:  # tg.jvp(f, ...) inside
            return self.composed(obj, node, outputs, targets)
        method = ufunc_methods.method_function(self.static(func.value), func.attr) \
            if isinstance(func, ast.Attribute) else None
        if method is not None:  # np.multiply.outer(a, b), np.add.reduce(a): the NumPy calls they stand for
            into = "out" if _out_argument(None, node) == "out" else 3 if len(node.args) == 4 and \
                func.attr in ("reduce", "accumulate") else None
            if into is not None:  # np.add.reduce(a, 0, out=y): y = np.add.reduce(a, 0)
                return self.call_into(obj, node, into, outputs, targets, method=True)
            args, kwargs = self.arguments(node, static=True)
            ufunc = [StaticValue(self.static(func.value), None)] if method[1] else []
            return self._call_result(self.inline(method[0], node, ufunc + args, kwargs), outputs, node, targets)
        if isinstance(func, ast.Attribute) and func.attr == "at" and self.static(func.value) in (np.add, np.subtract) \
                and len(node.args) == 3 and not node.keywords and isinstance(node.args[0], ast.Name):
            return self.add_at(node, outputs, negated=self.static(func.value) is np.subtract)
        if obj is not MISSING and _hashable(obj) and obj in SCIPY_MATH:  # math.lgamma: scipy.special.gammaln
            try:
                import scipy.special
                obj = getattr(scipy.special, SCIPY_MATH[obj])
            except ImportError:
                pass
        if obj is not MISSING and _hashable(obj) and obj in _ITERATING and node.args and \
                isinstance(node.args[0], ast.Name) and \
                self.special_method(self.env.get(node.args[0].id), "__iter__", node) is not None:
            items = ast.copy_location(ast.ListComp(ast.Name("item_", ast.Load()), [ast.comprehension(
                ast.Name("item_", ast.Store()), node.args[0], [], 0)]), node)  # sum(bag), list(bag) of an object
            node = ast.fix_missing_locations(ast.copy_location(  # of the user's: of the items its __iter__ yields
                ast.Call(node.func, [items, *node.args[1:]], node.keywords), node))
        if obj is not MISSING and _hashable(obj) and obj in BUILTIN_SPELLINGS:
            if obj is math.log and len(node.args) == 2:  # math.log(x, base)
                x, base = (self.emit(rules.lookup(np.log), [self.expr(a)], {}, node, None) for a in node.args)
                return (self.emit(rules.lookup(operator.truediv), [x, base], {}, node, (targets or [None])[0]),)
            if obj is math.hypot and len(node.args) > 2 and not node.keywords:  # math.hypot(x, y, z)
                args = [self.expr(a) for a in node.args]
                return (self.fold(np.hypot, args, node, (targets or [None])[0]),)
            obj = self.builtin(obj, node)
        if obj is dict and len(node.args) == 1 and node.keywords and all(kw.arg for kw in node.keywords):
            made = self.emit(rules.lookup(dict), [self.expr(node.args[0])], {}, node, None)  # dict(pairs, b=x)
            for k, kw in enumerate(node.keywords, 1):
                made = self.emit(rules.lookup(with_item), [made, Const(kw.arg), self.expr(kw.value)], {}, node,
                                 (targets or [None])[0] if k == len(node.keywords) else None)
            return (made,)
        if obj in (list, tuple) and not node.args and not node.keywords:  # list(): an empty list
            return (self.emit(rules.lookup(make_list if obj is list else make_tuple), [], {}, node,
                              (targets or [None])[0]),)
        if obj is dict and not node.args:  # dict(W=W, b=b): a dict display
            keys = Const(tuple(kw.arg for kw in node.keywords))
            values = [self.expr(kw.value) for kw in node.keywords]
            return (self.emit(rules.lookup(make_dict), [keys] + values, {}, node, (targets or [None])[0]),)
        if obj is not MISSING:
            return self.call_object(obj, node, outputs, targets)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) \
                and self.static(func.value.func) is super:
            return self.call_super(func, node, outputs, targets)
        frozen = self.frozen(func.value) if isinstance(func, ast.Attribute) else None
        if frozen is not None:
            return self.call_frozen(frozen, func.attr, node, outputs, targets)
        if isinstance(func, ast.Attribute):
            local = self.local_function_held(func.value)
            if local is not None and (local, func.attr) in self.function_attributes:  # self.regularization.grad(w)
                held = self.function_attributes[(local, func.attr)]
                if isinstance(held, LocalFunction):
                    args, kwargs = self.arguments(node, static=True)
                    return self._call_result(self.inline_local(held, node, args, kwargs), outputs, node, targets)
                if isinstance(held, StaticValue):
                    return self.call_object(held.obj, node, outputs, targets)
            through = self.class_held(func.value, func.attr)
            if through is not None:  # self.cost.fn(a, y), `cost=CrossEntropyCost` (network2): the class's own
                return self.call_object(through[0], node, outputs, targets)  # function, as Python calls it
            receiver = self.expr(func.value)
            held = self.attributes.get((receiver, func.attr))
            if held is not None and isinstance(held[0], StaticValue):  # self.act_fn(z), set by __init__
                return self.call_object(held[0].obj, node, outputs, targets)
            if held is not None and isinstance(held[0], Choice):  # self.act(z), one function or another
                return self.call_chosen(ast.unparse(func), held[0], node, outputs)
            if held is not None and isinstance(held[0], LocalFunction):  # self.act = lambda z: ..., by __init__
                args, kwargs = self.arguments(node, static=True)
                return self._call_result(self.inline_local(held[0], node, args, kwargs), outputs, node, targets)
            if held is not None and isinstance(held[0], Var) and held[0] in self.types \
                    and self._own_method(held[0], "__call__") is not None:  # self.act = make_act("tanh")
                return self.call_instance(self.expr(func), node, outputs, targets)
            stored = getattr(self.live[receiver], "__dict__", {}).get(func.attr) \
                if receiver in self.live and held is None else None
            if stored is not None and callable(stored) and (
                    inspect.isfunction(stored) or not hasattr(stored, "__self__") or isinstance(stored, np.ufunc)
                    or inspect.ismethod(stored) and user_function(stored.__func__) is not None):  # self._relu
                self.bindings.append(("attr", self.live[receiver], func.attr, stored))  # (made again if changed)
                return self.call_object(stored, node, outputs, targets)  # layer.act_fn(z): a function it holds
            cls = self.class_of(receiver)
            held_by_class = inspect.getattr_static(cls, func.attr, None) if cls is not None and held is None else None
            if isinstance(held_by_class, (np.ufunc, types.BuiltinFunctionType)) and \
                    func.attr not in getattr(self.live.get(receiver), "__dict__", {}):  # `act = np.tanh` in the
                self.bind_method(cls, func.attr, held_by_class, receiver)  # class body: not a method, the ufunc
                return self.call_object(held_by_class, node, outputs, targets)
            return self.call_method(receiver, func, node, outputs, targets)
        made = self._static_gradient(func)
        if made is not None:  # tg.grad(loss)(w, x): the gradient's own code, inlined
            args, kwargs = self.arguments(node)
            called = function_for_call(made, len(args), self.known_lengths(args, kwargs))
            return self._call_result(self.inline(called, node, args, kwargs), outputs, node, targets)
        callee = self.made_function(func) if isinstance(func, ast.Call) else self.expr(func)
        if isinstance(callee, LocalFunction):  # make(a)(x), partial(f, a)(x): the function made, inlined
            args, kwargs = self.arguments(node, static=True)
            return self._call_result(self.inline_local(callee, node, args, kwargs), outputs, node, targets)
        if isinstance(callee, StaticValue):  # helper(f)(x) returning a function known here
            return self.call_object(callee.obj, node, outputs, targets)
        if isinstance(callee, Var) and callee in self.mixed:  # act(z), act of one class or another
            return self.call_of_class(callee, node, outputs, lambda: self.call_instance(callee, node, outputs, None),
                                      ast.unparse(func), "__call__")
        if self._own_method(callee, "__call__") is not None:  # an object of a class of the user's, called
            return self.call_instance(callee, node, outputs, targets)
        args, kwargs = self.arguments(node)
        chosen = isinstance(func, (ast.Name, ast.Subscript))  # a name or item holding a function not known now
        return self.emit_multi(_opaque_value(ast.unparse(func), chosen), [callee] + args, kwargs, node, outputs,
                               targets)

    def call_chosen(self, name, choice, node, outputs, called=None):
        """`pool_fn(x)` where `pool_fn` (a name, an attribute or an item) holds one function or another, each
        known now: dispatched on which one it holds when the code runs, the call lowered in each branch with
        its function known (by `called(candidate)`; else as a call of that function)."""
        called = called or (lambda one: lambda: self.call_known(one, node, outputs, None))
        cases = [(self.emit(rules.lookup(operator.is_), [choice.var, self.token(one, node)], {}, node, None),
                  called(one)) for one in choice.candidates]
        expected = ", ".join(_candidate_name(one) for one in choice.candidates)
        return self.dispatched(node, outputs, cases, choice.var, name, expected)

    def _called_as(self, name, choice, node, outputs):
        """Lowering `name(...)` with `name` bound to one candidate of `choice`: the call as written, so a
        built-in or a transform it names is followed as it would be if spelled out."""
        def called(candidate):
            def lower():
                self.env[name] = candidate
                try:
                    return self.call(node, outputs)
                finally:
                    self.env[name] = choice
            return lower
        return called

    def call_of_class(self, receiver, node, outputs, lower_one, text, method=None):
        """A method call on `receiver`, an object of one class or another (each known now): dispatched on its
        exact class when the code runs, `lower_one()` lowering the call in each branch with its class known
        (of the classes that have `method`, if given: on an object of another, the call raises)."""
        def lowered(cls):
            def lower():
                classes = self.mixed.pop(receiver)
                self.types[receiver] = cls
                try:
                    return lower_one()
                finally:
                    self.types.pop(receiver, None)
                    self.mixed[receiver] = classes
            return lower
        classes = sorted((cls for cls in self.mixed[receiver] if method is None or
                          any(method in vars(base) for base in cls.__mro__[:-1])),
                         key=lambda cls: (cls.__module__, cls.__qualname__))
        if not classes:
            which = " or ".join(sorted(cls.__name__ for cls in self.mixed[receiver]))
            raise self.unsupported(node, f"`{text}` holds an object of class {which} (or another) here, none of "
                                         f"which has `{method}` in its class", f"call `{method}` only on an object "
                                         f"of a class that defines it")
        cases = [(self.emit(rules.lookup(of_class), [receiver, self.free_object(cls.__name__, lambda c=cls: c)], {},
                            node, None), lowered(cls)) for cls in classes]
        expected = " or ".join(f"an object of class {cls.__name__}" for cls in classes)
        return self.dispatched(node, outputs, cases, receiver, text, expected)

    def grow_known(self, name, how, node):
        """`layers.append(Dense(W))` (or `.extend([...])`) on a list whose items the transform knows: the name
        is bound to the list with the items added. Python changes the list in place, so no other name,
        list or attribute may hold it (it would not show them)."""
        known = self.env[name]
        text = f"{name}.{how}(...)"
        self.check_sole_holder(name, known, text, node, f"build a new list instead: {name} = {name} + [...]")
        if len(node.args) != 1 or node.keywords:
            raise self.unsupported(node, f"`{text}` takes one argument")
        added = self.value(node.args[0])
        if how == "append":
            added = (added,)
        elif isinstance(added, (Pack, KnownItems)) and added.kind in ("list", "tuple"):
            added = added.items
        else:
            raise self.unsupported(node, f"`{text}` with items tapegen does not know one by one, onto a list whose "
                                         f"items it must know (functions, or objects)",
                                   f"append the items one by one, or write them out: {name}.extend([a, b])")
        self.bind_static(name, KnownItems(known.items + tuple(added), "list"))
        return (Const(None),)

    def lower_again(self, unsettled: Unsettled, node):
        """Raise Recarry to lower the function again with `unsettled`'s keys carried; where they are carried
        already (lowering again would not settle it: a list of functions grown in a loop), refused."""
        if all(keys <= self.carried.get(number, set()) for number, keys in unsettled.keys.items()):
            raise self.unsupported(node, unsettled.why, unsettled.hint)
        raise Recarry(unsettled.keys)

    def check_sole_holder(self, name, known, text, node, hint):
        """Python changes the list or dict `known` (which `name` holds) in place: refused where another name,
        list or attribute holds it too (it would not show the change)."""
        holders = [f"`{other}`" for other, value in self.env.items() if other != name and _holds(value, known)] + \
            [f"`.{attr}`" for (_, attr), (value, _) in self.attributes.items() if _holds(value, known)]
        caller = self.caller  # a helper's parameter: the caller's list or dict (`_replace(fs)` setting fs["a"])
        while caller is not None and not holders:
            holders = [f"`{other}` of {caller.fn.__name__}()" for other, value in caller.env.items()
                       if _holds(value, known)]
            if holders:
                hint = f"change it in {caller.fn.__name__}() itself, or return a new one from " \
                       f"{self.fn.__name__}() (new = list(fs); new.append(f); return new) and bind it there"
            caller = caller.caller
        if holders:
            kind = "dict" if known.kind == "dict" else "list"
            raise self.unsupported(node, f"`{text}` changes the {kind} {holders[0]} holds too, which tapegen cannot "
                                         f"follow", hint)

    def set_known_item(self, name, target, value_node) -> bool:
        """`ops["sin"] = np.sin` (`fs[0] = relu`) into a dict (list) whose items the transform knows one by one:
        the name is bound to it with the item set, as it is known. False where the index is not a constant."""
        known = self.env[name]
        if _constant_index(target.slice):
            key = ast.literal_eval(target.slice)
        elif isinstance(target.slice, ast.Name) and isinstance(self.env.get(target.slice.id), Const):
            key = self.env[target.slice.id].value
        else:
            return False
        if known.kind == "list" and not (type(key) is int and -len(known.items) <= key < len(known.items)):
            return False  # (not an item: as Python does, an error when it runs)
        text = f"{ast.unparse(target)} = ..."
        self.check_sole_holder(name, known, text, target, f"build a new {known.kind} instead")
        value = self.value(value_node)
        if known.kind == "list":
            items = list(known.items)
            items[key] = value
            self.bind_static(name, KnownItems(tuple(items), "list"), target)
        elif key in known.keys:
            k = known.keys.index(key)
            self.bind_static(name, KnownItems(known.items[:k] + (value,) + known.items[k + 1:], "dict", known.keys),
                             target)
        else:
            self.bind_static(name, KnownItems(known.items + (value,), "dict", known.keys + (key,)), target)
        return True

    def call_known(self, item, node, outputs, targets):
        """A call of an item the transform knows: a local function, a function known now, or a value."""
        if isinstance(item, LocalFunction):
            args, kwargs = self.arguments(node, static=True)
            return self._call_result(self.inline_local(item, node, args, kwargs), outputs, node, targets)
        if isinstance(item, StaticValue):
            return self.call_object(item.obj, node, outputs, targets, item.atom)
        callee = self.as_atom(item, node)
        args, kwargs = self.arguments(node)
        return self.emit_multi(_opaque_value(ast.unparse(node.func)), [callee] + args, kwargs, node, outputs, targets)

    def known_isinstance(self, node):
        """`isinstance(x, cls)` as a Const when the transform knows: `x` a constant, a list, tuple or dict
        built here, or an object of a class of the user's; else None (tested when the code runs)."""
        spec = node.args[1]
        classes = tuple(self.static(e) for e in spec.elts) if isinstance(spec, ast.Tuple) else (self.static(spec),)
        if any(c is MISSING or not isinstance(c, type) for c in classes):
            return None
        value = self.expr(node.args[0])
        if isinstance(value, Const):
            return Const(isinstance(value.value, classes))
        kind = value.kind if isinstance(value, Pack) else self.container_kind(value) if isinstance(value, Var) else None
        made = {"list": list, "tuple": tuple, "dict": dict}.get(kind)
        if made is None and isinstance(value, Var) and value in self.types:
            made = self.types[value]
        return Const(issubclass(made, classes)) if made is not None else None

    def known_hasattr(self, node, absent_too=False):
        """`hasattr(obj, "name")` as a Const, checked again when the code runs, where the transform knows it: `obj`
        an object of the user's read from the module (or a closure) that has the attribute now and that this
        function never sets (a layer set up before, reaching its lazy `if not hasattr(self, "conv2"):`), or one
        made here, whose attributes this function set (numpy-ml's wrappers: `hasattr(layer, "_base_layer")`);
        else None (tested when the code runs). `absent_too`: also where such an object of the module lacks it now
        (`getattr(layer, "b", None)`: the default)."""
        name = node.args[1]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return None
        module = self.static(node.args[0])
        if isinstance(module, types.ModuleType):  # hasattr(np, "trapz"): NumPy's version (in the cache's key)
            return Const(hasattr(module, name.value))  # decides it, as it does for the rules
        base = self.expr(node.args[0])
        if not isinstance(base, Var):
            return None
        if base in self.live and (absent_too or hasattr(self.live[base], name.value)) and \
                not any(attr == name.value for _, attr in self.attributes):
            has = hasattr(self.live[base], name.value)  # (absent: `getattr(layer, "b", None)`, not a lazy set-up)
        elif base in self.made_objects and base in self.types and (base, name.value) not in self.maybe_absent:
            has = (base, name.value) in self.attributes or hasattr(self.types[base], name.value)
        else:
            return None
        self.emit_multi(rules.lookup(has_attribute_as_transformed), [base, Const(name.value), Const(has), Const(
            f"`{ast.unparse(node.args[0])}` {'had no' if has else 'had an'} attribute `{name.value}` when the "
            f"function ran, but {'had one' if has else 'none'} when tapegen transformed it; its gradient code took "
            f"`{ast.unparse(node)}` as {has}")], {}, node, 0, [])
        return Const(has)

    def call_super(self, func, node, outputs, targets):
        """`super().name(...)` (or `super(Cls, self)`) in a method being inlined: the next class's method."""
        cls, obj = self.receiver, self.self_var
        given = func.value.args
        if given:
            obj = self.expr(given[1]) if len(given) == 2 else None
            start = self.static(given[0])
            cls = self.types.get(obj, cls) if obj is not self.self_var else cls
        else:
            start = next((c for c in (cls.__mro__ if cls else ()) if any(
                getattr(getattr(v, "__func__", v), "__code__", None) is self.fn.__code__ for v in vars(c).values())),
                None)
        if cls is None or obj is None or start is MISSING or start is None or start not in cls.__mro__:
            raise self.unsupported(node, f"`{ast.unparse(func.value)}` outside a method tapegen can follow",
                                   "call the base class's method by name: Base.method(self, ...)")
        mro = cls.__mro__
        owner = next((c for c in mro[mro.index(start) + 1:] if func.attr in vars(c)), object)
        method = vars(owner).get(func.attr, getattr(object, func.attr, None))
        if user_function(method) is None:
            if func.attr == "__init__" and method is object.__init__ and not node.args and not node.keywords:
                return (Const(None),)[:outputs]  # object.__init__(): nothing to do
            raise self.unsupported(node, f"`{ast.unparse(func)}` is {owner.__name__}.{func.attr}, which tapegen "
                                         f"cannot follow", None)
        args, kwargs = self.arguments(node, static=True)
        return self._call_result(self.inline(user_function(method), node, [obj] + args, kwargs, receiver=cls),
                                 outputs, node, targets)

    def add_at(self, node, outputs, negated=False):
        """`np.add.at(sums, index, values)` into an array the function made (and no other name or view
        shows): `sums` becomes the array with the values added, repeated positions adding up (`negated`:
        np.subtract.at, the values subtracted)."""
        name = node.args[0].id
        array = self.read_name(node.args[0])

        def added(array, target):
            index, values = self.index(node.args[1]), self.expr(node.args[2])
            if negated:
                values = self.emit(rules.lookup(np.negative), [values], {}, node, None)
            return self.emit(rules.lookup(added_at), [array, index, values], {}, node, target)
        if self.wrote_into_view(name, array, node, lambda: added(array, None)):  # np.add.at(row, ...), row = M[i]
            return (Const(None),)[:outputs]
        array = self.writable(name, array, node)
        self.store(name, added(array, self.shared.get(name, name)), node)
        if array in self.params:  # a helper's parameter: its caller's array, which NumPy adds into
            self.changes_callers_array(name, array, node)
        return (Const(None),)[:outputs]

    def composed(self, transform, node, outputs, targets):
        """`tg.jvp(f, primals, tangents)`, `tg.vjp(f, *args)` in the function: the transform says, from
        what is known of the call now, which plain function computes it (built on f's generated code),
        and that function is inlined."""
        args, kwargs = self.arguments(node, static=True)
        for kw in node.keywords:  # wrt=argnum, an int of a wrapper's closure: known now, checked when it runs
            if kw.arg == "wrt":
                kwargs["wrt"] = self.fixed_free_value(kw.value, kwargs["wrt"], (int, tuple))
        if args and isinstance(args[0], LocalFunction):  # tg.vjp(lambda w: loss(w, x), w): of a function of its own
            args, kwargs = self.lifted_arguments(transform, args, kwargs, node)
        made = transform.__tapegen_compose__(tuple(self.described(a) for a in args),
                                             {k: _described(v) for k, v in kwargs.items()})
        if made is None:
            name = ast.unparse(node.func)
            raise self.unsupported(node, f"{name}(...) inside a differentiated function needs the function known "
                                         f"when it is transformed (a function of your module, not a lambda or a "
                                         f"value computed at run time), and its arguments written out",
                                   f"write {name}(f, (x, y), (dx, None)) with `f` defined at module level")
        return self._call_result(self.inline(made, node, args, kwargs), outputs, node, targets)

    def described(self, atom):
        """`_described(atom)`, and a tuple computed at run time whose length is known now (a parameter of code made
        for its length) as that many DYNAMIC items: the composed code is made for that length too, so the
        function it differentiates may spread it (`func(y, t, *args)`)."""
        if isinstance(atom, (Pack, KnownItems)):
            return tuple(self.described(item) for item in atom.items)
        if not isinstance(atom, Var) or self.container_kind(atom) != "tuple" or self._length(atom) is None:
            return _described(atom)
        return (DYNAMIC,) * self._length(atom)

    def lifted_arguments(self, transform, args, kwargs, node):
        """tg.vjp's or tg.jvp's arguments, for the lambda they take lifted: what it reads passed first
        (with no tangent, in jvp), positions in `wrt` moved past them."""
        fn, captured = self.lift(args[0], node)
        if getattr(transform, "__name__", "") == "jvp":
            if len(args) != 3 or not all(isinstance(a, Pack) for a in args[1:]):
                return args, kwargs  # refused where the call is described
            nothing = (Const(None),) * len(captured)
            return [StaticValue(fn), Pack(tuple(captured) + args[1].items, "tuple"),
                    Pack(nothing + args[2].items, "tuple")], kwargs
        wrt = kwargs.get("wrt", Const(0))
        if not isinstance(wrt, Const):
            return args, kwargs
        return [StaticValue(fn)] + list(captured) + list(args[1:]), {**kwargs, "wrt": Const(_shifted(wrt.value,
                                                                                                len(captured)))}

    def call_instance(self, callee, node, outputs, targets):
        """`obj(...)` for an object of a class of the user's: its `__call__`, inlined."""
        called = self._own_method(callee, "__call__")
        args, kwargs = self.arguments(node, static=True)
        return self._call_result(self.inline(called[0], node, [callee] + args, kwargs, receiver=called[1]),
                                 outputs, node, targets)

    def mapped(self, node):
        """`map(f, xs, ...)` as the list comprehension it stands for: `[f(x, ...) for x, ... in zip(xs, ...)]`."""
        if node not in self.whole_reads and self.may_act(ast.copy_location(ast.Call(node.args[0], [], []), node)):
            self.refuse_acting(node, "this map")
        function = self.value(node.args[0])
        holder = self.namer.invented("mapped").name
        names = [self.namer.invented("item").name for _ in node.args[1:]]
        loads = [ast.Name(n, ast.Load()) for n in names]
        target = ast.Name(names[0], ast.Store()) if len(names) == 1 else \
            ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
        iterable = node.args[1] if len(names) == 1 else ast.Call(ast.Name("zip", ast.Load()), node.args[1:], [])
        comprehension = ast.ListComp(ast.Call(ast.Name(holder, ast.Load()), loads, []),
                                     [ast.comprehension(target, iterable, [], 0)])
        for sub in ast.walk(comprehension):
            if not hasattr(sub, "lineno") and isinstance(sub, (ast.expr, ast.stmt)):
                ast.copy_location(sub, node)
        self.env[holder] = function
        try:
            return self.comprehension(comprehension, comprehension.elt)
        finally:
            del self.env[holder]

    def paired(self, node):
        """`zip(xs, ys)` or `enumerate(xs)` outside a `for` header (`dict(zip(names, params))`, `list(zip(a,
        b))`): the list of tuples it yields, as the comprehension `[(x, y) for x, y in zip(xs, ys)]`."""
        names = [self.namer.invented("item").name for _ in range(max(len(node.args), 2))]
        target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
        comprehension = ast.ListComp(ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load()),
                                     [ast.comprehension(target, node, [], 0)])
        for sub in ast.walk(comprehension):
            if not hasattr(sub, "lineno") and isinstance(sub, (ast.expr, ast.stmt)):
                ast.copy_location(sub, node)
        return self.comprehension(comprehension, comprehension.elt)

    def frozen(self, node):
        """The `Frozen` distribution `node` is (a name bound to one, or `scipy.stats.norm(mu, sigma)`), or None."""
        if isinstance(node, ast.Name) and isinstance(self.env.get(node.id), Frozen):
            return self.env[node.id]
        if isinstance(node, ast.Call):
            obj = self.static(node.func)
            if obj is not MISSING and freezes(obj):
                args, kwargs = self.arguments(node)
                return Frozen(obj, tuple(args), tuple(kwargs.items()), node)
        return None

    def call_frozen(self, frozen, name, node, outputs, targets):
        """`d.<name>(...)` on a frozen distribution: `norm(mu, sigma).logpdf(x)` is `norm.logpdf(x, mu, sigma)`."""
        method = getattr(frozen.distribution, name, None)
        prim = rules.lookup(method) if _hashable(method) else None
        args, kwargs = self.arguments(node)
        if prim is None:  # a method without rules (d.rvs()): called on the object, as written
            return self.emit_multi(_opaque_method(name), [self.made(frozen)] + args, kwargs, node, outputs, targets)
        return self.emit_multi(prim, args + list(frozen.args), {**dict(frozen.kwargs), **kwargs}, node, outputs,
                               targets)

    def made(self, frozen):
        """The frozen distribution object itself, made by its call as written (where the name it is called by
        means something else in the function being transformed, a gradient inlined in another module's
        function: spelled `scipy.stats.norm` for SciPy's own, else read as an object of the user's)."""
        spelling = ast.unparse(frozen.node.func)
        if not self.reachable_from_root(frozen.node.func):
            name, stats = getattr(frozen.distribution, "name", None), sys.modules.get("scipy.stats")
            spelling = f"scipy.stats.{name}" if name and getattr(stats, name, None) is frozen.distribution else \
                self.free_object(_root_name(frozen.node.func) or "distribution", lambda d=frozen.distribution: d).name
        return self.emit_multi(_opaque(spelling, frozen.distribution), list(frozen.args), dict(frozen.kwargs),
                               frozen.node, 1, [None])[0]

    def einsum_interleaved(self, node, outputs, targets):
        """`np.einsum(a, s0, b, s1)` whose first argument carries a derivative (so it is an array: the
        interleaved form) and whose sublists are known only when the code runs (`np.einsum(*args)` in a
        wrapper): written with the subscripts string they spell, computed when the code runs, so every array
        is an operand as in the string form; else None."""
        from ..rules.linalg import einsum_spelling, is_subscripts
        if any(kw.arg not in ("optimize", None) or not _plain_reads(kw.value) for kw in node.keywords) or \
                not all(map(_plain_reads, node.args)):  # (**kwargs: checked below to hold optimize at most)
            return None  # (names and displays of them only: lowered again as the call they are on None)
        args, kwargs = self.arguments(node)
        if len(args) < 2 or any(isinstance(a, Spread) for a in args) or set(kwargs) - {"optimize"} or \
                not (isinstance(args[0], Var) and self.carries(args[0])):
            return None
        has_output = len(args) % 2 == 1
        arrays, sublists = args[0:len(args) - has_output:2], args[1::2] + ([args[-1]] if has_output else [])

        def interleaved():
            spec = self.emit(rules.lookup(einsum_spelling), [Const(has_output)] + sublists, {}, node, None)
            return self.emit_multi(rules.lookup(np.einsum), [spec] + arrays, kwargs, node, outputs, None)
        # the subscripts string (`def f(spec, A)`, or an item of a list holding it) or the first array: which
        # one is decided as the code runs (an item of a list made here is "computed" either way)
        is_str = self.emit(rules.lookup(is_subscripts), [args[0]], {}, node, None)
        cases = [(is_str, lambda: self.emit_multi(rules.lookup(np.einsum), args, kwargs, node, outputs, None)),
                 (self.emit(rules.lookup(operator.not_), [is_str], {}, node, None), interleaved)]
        return self.dispatched(node, outputs, cases, args[0], "np.einsum's first argument", "a string or an array")

    def in_place_operator(self, obj, node):
        """`operator.iadd(xs, ys)` (isub, imul, ior, ...) with `xs` a name of a list or dict built here: lowered as
        `xs += ys`, which changes it in place as the call does; its value is `xs` after it. Another (an array, a
        number: whether the name is rebound depends on the value) is refused. (Run as written, its change was
        made where the gradient code did not see it: a derivative lost with no error.)"""
        if len(node.args) != 2 or node.keywords or not isinstance(node.args[0], ast.Name) \
                or any(isinstance(a, ast.Starred) for a in node.args) \
                or self.container_kind(self.env.get(node.args[0].id)) not in ("list", "dict"):
            raise self.unsupported(node, f"`{ast.unparse(node)}` changes its first argument in place (an array or "
                                         f"list) or not (a number), which tapegen follows only for a list or dict "
                                         f"the function built, by name", "write the statement: a += b")
        name = node.args[0].id
        target = ast.copy_location(ast.Name(name, ast.Store()), node.args[0])
        self.statement(ast.copy_location(ast.AugAssign(target, IN_PLACE_OPERATORS[obj](), node.args[1]), node))
        return self.expr(ast.copy_location(ast.Name(name, ast.Load()), node.args[0]))

    def call_object(self, obj, node, outputs, targets, atom=None):
        """A call of `obj`, known now: a primitive, a class or function of the user's, or an opaque call.
        `atom`: how generated code reads `obj`, if known (an item of a dict holding a lambda too)."""
        if obj in IN_PLACE_OPERATORS:  # operator.iadd(xs, ys): `xs += ys`, then its value
            return (self.in_place_operator(obj, node),)[:max(outputs, 1)]
        if obj in (copy.copy, copy.deepcopy) and len(node.args) == 1 and not node.keywords \
                and not isinstance(node.args[0], ast.Starred) and node not in self.copying:
            return self.copied_object(obj, node, outputs, targets, atom)
        if obj in (operator.add, operator.mul) and len(node.args) == 2 and not node.keywords \
                and not any(isinstance(a, ast.Starred) for a in node.args):  # reduce(operator.add, rows): as `+`
            left, right = self.expr(node.args[0]), self.expr(node.args[1])  # (joins lists, adds arrays)
            return (self.binary(obj, left, right, node, (targets or [None])[0]),)[:max(outputs, 1)]
        if obj is np.einsum and node.args and not (isinstance(node.args[0], ast.Constant)
                                                  and isinstance(node.args[0].value, str)):
            spelled = _einsum_spelled(node)
            if spelled is not None:  # np.einsum(a, [0, 1], b, [1, 2]): the subscripts as a string, so the
                node = spelled       # arrays are all operands (and every order of derivative follows them)
            else:
                interleaved = self.einsum_interleaved(node, outputs, targets)
                if interleaved is not None:
                    return interleaved
        if isinstance(obj, functools.partial) and all(_literal_constant(v) for v in (*obj.args, *obj.keywords.values())):
            spelled = ast.copy_location(ast.Call(node.func, [ast.Constant(v) for v in obj.args] + node.args,
                                                 [ast.keyword(k, ast.Constant(v)) for k, v in obj.keywords.items()]
                                                 + node.keywords), node)  # autograd's _dot: einsum("...ij,...")
            return self.call_object(native(obj.func), ast.fix_missing_locations(spelled), outputs, targets)
        func = node.func
        if getattr(obj, "__module__", None) == "autograd.core" and \
                getattr(obj, "__qualname__", None) == "make_vjp.<locals>.vjp":  # autograd.misc.flatten's unflatten
            from ..rules.language import autograd_unflatten  # made before the function runs (flatten_func's)
            args, kwargs = self.arguments(node, static=True)
            held = atom if atom is not None else self.free_object("unflatten", lambda: obj)
            return self._call_result(self.inline(user_function(autograd_unflatten), node, [held] + args, kwargs),
                                     outputs, node, targets)
        if obj in (list, tuple) and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Name) \
                and isinstance(self.env.get(node.args[0].id), KnownItems) \
                and self.env[node.args[0].id].kind in ("list", "tuple"):  # list(layers) of `*layers`: a new list,
            known = self.env[node.args[0].id]  # its items known one by one
            return (KnownItems(known.items, "list" if obj is list else "tuple"),)
        if obj is len and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Name) \
                and isinstance(self.env.get(node.args[0].id), KnownItems):  # len(fs), fs functions known now
            return (Const(len(self.env[node.args[0].id].items)),)
        if obj is operator.setitem and len(node.args) == 3 and not node.keywords:  # operator.setitem(a, i, v)
            if not isinstance(node.args[0], ast.Name):
                raise self.unsupported(node, f"`{ast.unparse(node)}` writes into a value tapegen cannot name",
                                       "write it as an assignment: a[i] = v")
            self.statement(ast.fix_missing_locations(ast.copy_location(ast.Assign(
                [ast.Subscript(node.args[0], node.args[1], ast.Store())], node.args[2]), node)))
            return (Const(None),)[:outputs]
        if obj is eval and len(node.args) == 1 and not node.keywords:  # eval("0.8"): of a literal, known now or
            source = self.expr(node.args[0])  # when the code runs (a name read is refused then)
            if isinstance(source, Const) and isinstance(source.value, str):
                try:
                    return (Const(evaluated_literal(source.value, ast.unparse(node))),)[:max(outputs, 1)]
                except UnsupportedSyntaxError as error:
                    raise self.unsupported(node, error.message, error.hint) from None
            return (self.emit(rules.lookup(evaluated_literal), [source, Const(ast.unparse(node))], {}, node,
                              (targets or [None])[0]),)[:max(outputs, 1)]
        if obj in (eval, exec, locals) or obj is vars and not node.args:
            raise self.unsupported(node, f"`{ast.unparse(node)}` runs code or reads names tapegen cannot see "
                                         f"(its derivatives would be lost)",
                                   "write the expression out in the function, or pass the values as arguments")
        if obj is callable and len(node.args) == 1 and not node.keywords:
            held = self.value(node.args[0])  # callable(f) of a function, or a number, known now
            if isinstance(held, (StaticValue, LocalFunction, Const)):
                return (Const(True if isinstance(held, LocalFunction) else
                              callable(held.obj if isinstance(held, StaticValue) else held.value)),)
            return (self.emit(_opaque("callable", callable), [self.as_atom(held, node)], {}, node, None),)
        if _sparse_test(obj) and len(node.args) == 1 and not node.keywords:
            tested = self.expr(node.args[0])  # scipy.sparse.issparse(X) of a value computed here: a dense
            if isinstance(tested, Var) and tested in self.computed:  # array (numpy-ml's column_norm: its sparse
                return (Const(False),)  # branch is not lowered, so not refused)
        if obj is types.SimpleNamespace and not node.args and all(kw.arg for kw in node.keywords):
            maker = self.free_object("SimpleNamespace", lambda: types.SimpleNamespace)
            made = self.emit(_opaque_value("SimpleNamespace"), [maker], {}, node,
                             (targets or [None])[0])  # SimpleNamespace(w=W, b=b): an object made here,
            self.types[made] = types.SimpleNamespace  # its attributes set one by one (and read back so)
            self.made_objects.add(made)
            for kw in node.keywords:
                self.set_attribute(made, ast.copy_location(ast.Attribute(node, kw.arg, ast.Store()), kw.value),
                                   self.value(kw.value))
            return (made,)
        if obj is reversed and len(node.args) == 1 and not node.keywords:  # reversed(xs) is xs[::-1]
            return (self.emit(rules.lookup(operator.getitem), [self.expr(node.args[0]), Const(slice(None, None, -1))],
                              {}, node, (targets or [None])[0]),)
        prim = rules.lookup(obj) if _hashable(obj) else None
        if prim is None and not inspect.isclass(obj) and users_class(type(obj)) \
                and user_function(inspect.getattr_static(type(obj), "__call__", None)) is not None:
            callee = atom if atom is not None else self.expr(node.func)  # a global object of the user's, called:
            self.types[callee] = type(obj)  # its __call__, inlined
            called = self._own_method(callee, "__call__")
            args, kwargs = self.arguments(node, static=True)
            return self._call_result(self.inline(called[0], node, [callee] + args, kwargs, receiver=called[1]),
                                     outputs, node, targets)
        into = _out_argument(obj, node) if prim is not None and self.static(node.func) is obj else None
        if into is not None:  # np.clip(p, lo, hi, p), np.add(a, b, out=a): into an array, in place
            return self.call_into(obj, node, into, outputs, targets)
        if prim is not None and getattr(prim, "own_code", False) and self.lowers(obj):
            prim = None  # a rule's own helper (solve_vjp_a) in gradient code differentiated again: its code
        if prim is None and _is_namedtuple(obj):  # Params(W=W, b=b), whoever defined Params
            made_here = isinstance(node.func, ast.Name) and isinstance(self.env.get(node.func.id), StaticValue)
            like = atom if atom is not None else self.free_object(obj.__name__, lambda cls=obj: cls) if made_here \
                else self.expr(node.func)  # (a class namedtuple() made when transforming: that class)
            return (self.record(obj, like, *self.arguments(node), node, (targets or [None])[0]),)
        unknown = any(kw.arg is None and self._unknown_keywords(kw) for kw in node.keywords)
        if prim is None and unknown and user_function(obj) is not None and inspect.isfunction(obj):
            bound = self.keywords_by_parameters(obj, node)  # f(x, **block): block's items by f's parameters
            if bound is not None:
                return self._call_result(self.inline(user_function(obj), node, *bound), outputs, node, targets)
        if prim is None and inspect.isclass(obj) and users_class(obj) and not unknown:
            made = self.construct(obj, node, targets)
            if made is not None:
                return made[:outputs]
        if prim is None and (hasattr(type(obj), "__tapegen_inline_call__") or user_function(obj) is not None
                             or inspect.ismethod(obj) and user_function(obj.__func__) is not None) \
                and not unknown:  # (with `**kwargs` of keys known only when the code runs, it is called as written)
            args, kwargs = self.arguments(node, static=True, callee=obj)  # functions passed along stay known
            called = function_for_call(obj, len(args), self.known_lengths(args, kwargs)) if not inspect.ismethod(obj) \
                or hasattr(type(obj), "__tapegen_inline_call__") else obj  # (a bound method: with its object)
            return self._call_result(self.inline(called, node, args, kwargs), outputs, node, targets)
        if prim is not None and prim.callables:  # odeint(rhs, ...) of a def of this function reading its names
            node = self.lifted_callables(prim, node)
        if prim is not None and prim.form == "custom":  # fixed_point(rev_iter, ...) in fixed_point's own bwd
            node = self.functions_as_values(node)
        args, kwargs = self.arguments(node, spread_later=prim is None)
        if obj is set_module_name and len(args) == 3 and isinstance(args[1], Const):  # gradient code differentiated
            self._module_reads_kept(args[1].value, node)  # again: `global` names it rebinds (read before: kept)
        if obj in (np.maximum, np.minimum) and len(args) > 2 and not kwargs:  # max(a, b, c)
            return (self.fold(obj, args, node, (targets or [None])[0]),)
        if prim is None and not self.reachable_from_root(func):  # re.match in another module's helper, or
            name = self.free_object(_root_name(func) or "called", lambda found=obj: found).name  # a local import
            prim = _opaque(name, obj, ast.unparse(func))  # (errors name it as written)
        if prim is None:
            prim = _opaque(ast.unparse(func), obj)
        if prim.form == "custom":  # forward pass returns (output, residuals)
            target = (targets or [None])[0]
            base = target.name if isinstance(target, Var) else target or prim.name
            residuals = self.namer.invented(f"{base}_res")
            outs = self.emit_multi(prim, args, kwargs, node, 2, [target, residuals])
            return outs[:min(outputs, 1)]
        if prim.name == "tape_pop" and args and isinstance(args[0], Var):  # pops: updates its list
            outs = self.emit_multi(prim, args, kwargs, node, 2, [(targets or [None])[0], args[0]])
            self.fresh.add(outs[0])  # what the forward pass kept: an array only the tape held, which the
            return outs[:min(outputs, 1)]  # backward pass may put back what it overwrote into (g[1:] = tape_pop(...))
        spelling = str(getattr(prim, "spelling", ""))
        if prim.differentiable and prim.name not in ("array", "asarray") and spelling.startswith(("np.", "scipy.")):
            scipy = spelling.startswith("scipy.")  # np.hypot(x, [1.0, 2.0, 3.0]),
            args = [self._as_array(a, node, scipy) for a in args]  # poisson.logpmf([1, 2, 0], mu): the list
            kwargs = {k: self._as_array(a, node, scipy) for k, a in kwargs.items()}  # an array, as NumPy takes
        return self.emit_multi(prim, args, kwargs, node, outputs, targets)  # it, so rules computing with it work

    def _as_array(self, atom, node, tuples=False):
        """A list of numbers (or of lists of them, and with `tuples`, a tuple) written as a display or a
        constant, as the array NumPy makes of it; else `atom`. (A tuple of numbers is more often a shape.)"""
        value = _numbers_written(atom, tuples)
        if value is None:
            return atom
        return self.emit(rules.lookup(np.asarray), [Const(value)], {}, node, None)

    def call_into(self, obj, node, into, outputs, targets, method=False):
        """`np.clip(y, eps, 1 - eps, y)` (numpy-ml's NCELoss) or `f(..., out=y)`: NumPy writes the result into
        `y`. Where `y` is a name for an array the function made (or an argument, copied first) and nothing
        else shows that array, it is the same as `y = f(...)`: `y` is rebound to the result."""
        out = next(kw.value for kw in node.keywords if kw.arg == "out") if isinstance(into, str) else node.args[into]
        if isinstance(out, ast.Tuple) and len(out.elts) == 1 and not isinstance(out.elts[0], ast.Starred) \
                and isinstance(obj, np.ufunc):
            out = out.elts[0]  # a ufunc's `out=(y,)`: its one output, returned as `y` (not a tuple), as NumPy does
        call = ast.copy_location(ast.Call(node.func, [a for k, a in enumerate(node.args) if k != into],
                                          [kw for kw in node.keywords if kw.arg != "out"]), node)
        if isinstance(out, ast.Subscript) and isinstance(out.value, ast.Name) and (_basic_index(out.slice) or isinstance(
                self.env.get(out.value.id), Var) and (self.container_kind(self.env[out.value.id]) is None or isinstance(
                    out.slice, ast.Constant) and self.container_kind(self.env[out.value.id]) == "dict")):
            # np.sin(x, out=X[:, 1]), np.tanh(z, out=H[t]): into a view of X, so X[:, 1] = np.sin(x), and the
            # result is that view; an index with names is checked when the code runs to make one (view_index)
            at, holder = out, None
            container = self.env.get(out.value.id)
            item_of = isinstance(container, Var) and self.container_kind(container) in ("list", "dict")
            if item_of:
                key = self.container_key(container, out.slice)  # `out=rows[0]`: NumPy writes into the array the
                item = self.emit(rules.lookup(operator.getitem), [container, key], {}, out, None)  # list holds,
                self.check_item_alone(container, key, item, node, ast.unparse(node))  # which tapegen replaces: no
                for var, origin in list(self.item_origin.items()):  # other holder may show it; a name read out of
                    if origin[0] is container and (origin[1] is key if isinstance(key, Var) else  # it (`r = rows[0]`)
                                                   isinstance(key, Const) and origin[1] == key.value):  # is stale
                        self.stale.setdefault(var, (ast.unparse(out), node, "item"))
            if not _basic_index(out.slice) and not item_of:  # (`out=d["a"]`: the dict's item, as `out=rows[0]`)
                span = self.span(out)
                holder = self.namer.invented("index").name
                self.env[holder] = self.emit(rules.lookup(view_index), [
                    self.env[out.value.id], self.index(out.slice), Const(ast.unparse(node)),
                    Const(f"{span.file}:{span.line}:{span.col + 1}" if span is not None else "?")], {}, out, None)
                at = ast.copy_location(ast.Subscript(out.value, ast.copy_location(ast.Name(holder, ast.Load()),
                                                                                  out.slice), ast.Load()), out)
            try:
                self.assign_subscript(ast.copy_location(ast.Subscript(at.value, at.slice, ast.Store()), out), call)
                return (self.expr(at),)[:outputs]
            finally:
                self.env.pop(holder, None)
        if not isinstance(out, ast.Name):
            raise self.unsupported(out, f"`{ast.unparse(node)}` writes its result into `{ast.unparse(out)}` in place, "
                                        f"which tapegen cannot follow", f"assign the result instead: "
                                                                        f"{ast.unparse(out)} = ...")
        name, array = out.id, self.read_name(out)
        result = (lambda: self.call(call, 1, [None])[0]) if method else \
            (lambda: self.call_object(obj, call, 1, [None])[0])
        if self.wrote_into_view(name, array, node, result):
            return (self.read_name(out),)[:outputs]  # np.tanh(r, out=r), r = M[1]: r[...] = np.tanh(r)
        self._carry_written(name, array)  # (a loop around the call rebinds `name`)
        others = self.other_names_only(name, array) or () if isinstance(array, Var) and array in self.fresh \
            and array not in self.params and not self.generated_code() else ()
        for other in others:  # `z = y`, then np.exp(y, out=y): NumPy changes the array `z` holds too
            self._carry_written(other, array)
        held = {other: self.env[other] for other in others}
        self.env.update(dict.fromkeys(others, Const(None)))  # (for its checks, `name` alone holds the array)
        try:
            array = self.writable(name, array, node)
        finally:
            self.env.update(held)
        result = (self.call(call, 1, [self.shared.get(name)]) if method else
                  self.call_object(obj, call, 1, [self.shared.get(name)]))[0]
        if array in self.params:  # a helper's parameter: its caller's array, which NumPy writes into
            self.changes_callers_array(name, array, node)
        self.store(name, result, node)
        for other in others:  # (each name the new value: an array, as `out=` must be)
            self.store(other, self.emit(rules.lookup(assign_primitive), [result], {}, node,
                                        self.shared.get(other, other)), node)
        return (result,)[:outputs]

    def call_method(self, receiver, func, node, outputs, targets):
        """`receiver.name(...)`: a method of a class the transform knows (inlined), an array method, or opaque."""
        record = self.types.get(receiver)
        if func.attr == "_replace" and _is_namedtuple(record) and not node.args:
            return self.replaced(receiver, record, self.arguments(node)[1], node, targets)
        if func.attr == "_asdict" and _is_namedtuple(record) and not node.args and not node.keywords:
            items = [self.emit(rules.lookup(operator.getitem), [receiver, Const(k)], {}, node, None)
                     for k in range(len(record._fields))]  # s._asdict(): its fields by name, in a dict
            return (self.emit(rules.lookup(make_dict), [Const(tuple(record._fields))] + items, {}, node,
                              (targets or [None])[0]),)
        if receiver in self.mixed and rules.method(func.attr) is None:  # act.forward(z), act of one class or another
            return self.call_of_class(receiver, node, outputs, lambda: self.call_method(receiver, func, node, outputs,
                                                                                       None), ast.unparse(func.value),
                                      func.attr)
        static = self._static_method(receiver, func.attr)
        if static is not None:  # self.loss(y, p): a @staticmethod (or @classmethod) of the object's class
            args, kwargs = self.arguments(node, static=True)
            return self._call_result(self.inline(static[0], node, static[1] + args, kwargs), outputs, node, targets)
        if isinstance(receiver, Const) and isinstance(receiver.value, str) and func.attr in _STRING_METHODS:
            args, kwargs = self.arguments(node)
            if all(isinstance(a, Const) for a in [*args, *kwargs.values()]):  # "{}_proj".format(k), k known now
                return (Const(getattr(receiver.value, func.attr)(*(a.value for a in args),
                                                                 **{k: a.value for k, a in kwargs.items()})),)
            if func.attr == "format" and not any(isinstance(a, ast.Starred) for a in node.args) \
                    and all(kw.arg is not None for kw in node.keywords):  # "loss {:.3f}".format(loss): a str
                return self.emit_multi(rules.lookup(formatted), [receiver, Pack(tuple(args), "tuple"),
                                                                 Const(tuple(kwargs)),
                                                                 Pack(tuple(kwargs.values()), "tuple")],
                                       {}, node, outputs, targets)
        method = self._own_method(receiver, func.attr)
        entry = rules.method(func.attr)
        kind = self.held_kind(receiver) if func.attr == "copy" and not node.args and not node.keywords else None
        if kind is not None:  # d.copy() of a dict (or list) built here or held by a layer: dict(d), not np.copy
            return self.emit_multi(rules.lookup(dict if kind == "dict" else list), [receiver], {}, node, outputs,
                                   targets)
        if func.attr == "sort" and method is None and isinstance(func.value, ast.Name) and not node.args \
                and self.container_kind(receiver) == "list":  # xs.sort(key=..., reverse=...): xs = sorted(xs, ...)
            self.check_unshared(func.value.id, receiver, node)
            ordered = ast.copy_location(ast.Call(ast.Name("sorted", ast.Load()), [func.value], node.keywords), node)
            self.store(func.value.id, self.expr(ordered), node)
            return (Const(None),)[:outputs]
        args, kwargs = self.arguments(node, static=method is not None, spread_later=method is None and entry is None)
        if method is not None:  # self.helper(x), layer.forward(x): inline the method with its object
            result = self.inline(method[0], node, [receiver] + args, kwargs, receiver=method[1])
            return self._call_result(result, outputs, node, targets)
        if entry is None and func.attr in MUTATORS:
            return self._mutation(receiver, func, args, kwargs, node)
        where = stands_for(entry[0].fn, len(args) + 1, list(kwargs)) if entry is not None \
            and {"where", "initial"} & set(kwargs) and _hashable(entry[0].fn) else None
        if where is not None:  # x.sum(where=m), x.max(initial=0): as np.sum(x, where=m) stands for
            return self._call_result(self.inline(where, node, [receiver] + args, kwargs), outputs, node, targets)
        if entry is None and isinstance(receiver, Var) and receiver in self.types \
                and isinstance(self.attributes.get((receiver, func.attr), (None,))[0], Var) \
                and self.attributes[(receiver, func.attr)][0] not in self.types \
                and inspect.getattr_static(self.types[receiver], func.attr, MISSING) is MISSING:
            callee = self.expr(func)  # `self.kernel(X, X)`, the attribute an object tapegen runs as written
            return self.emit_multi(_opaque_value(ast.unparse(func)), [callee] + args, kwargs, node, outputs,
                                   targets)  # (numpy-ml's GPRegression): a call of it, not of `self` as a whole
        if entry is None:
            return self.emit_multi(_opaque_method(func.attr), [receiver] + args, kwargs, node, outputs, targets)
        prim, receiver_param = entry
        args = _method_arguments(prim, func.attr, args)
        if prim.fn is append_primitive:
            return self._append(receiver, args, func, node)
        return self.emit_multi(prim, [receiver] + args, kwargs, node, outputs, targets)

    def builtin(self, obj, node):
        """The NumPy function a Python built-in or `math` function computes here (`abs` is `np.abs`)."""
        spelled = BUILTIN_SPELLINGS[obj]
        if isinstance(spelled, tuple):  # max / min: of several arguments, or of one sequence
            one, several = spelled
            if node.keywords:
                raise self.unsupported(node, f"{obj.__name__}() with keyword arguments cannot be differentiated",
                                       f"use np.{one.__name__} or np.{several.__name__}")
            return one if len(node.args) == 1 else several
        return spelled

    def _static_gradient(self, func):
        """`tg.grad(f, ...)` / `tg.value_and_grad(f, ...)` with arguments known now: the gradient's code."""
        if not isinstance(func, ast.Call):
            return None
        maker = self.static(func.func)
        if marker(maker, "__tapegen_static_call__") is not True:  # tg.grad, tg.value_and_grad
            return None
        try:
            args = [self._static_argument(a) for a in func.args]
            kwargs = {kw.arg: self._static_argument(kw.value) for kw in func.keywords}
        except LookupError:
            return None
        return maker(*args, **kwargs)  # its code is chosen where it is called (function_for_call)

    def _static_argument(self, node):
        value = self.static(node)
        if value is not MISSING:
            return value
        made = self._static_gradient(node) if isinstance(node, ast.Call) else None
        if made is not None:  # tg.jacobian(tg.jacobian(f)): a transform of a transform, made now too
            return made
        if isinstance(node, ast.Name) and isinstance(self.env.get(node.id), Const):  # wrt=argnum, a helper's 0
            return self.env[node.id].value
        try:
            return ast.literal_eval(node)
        except ValueError:
            raise LookupError(ast.unparse(node)) from None

    def _spread_known(self, node):
        """`f(*rows)` as `f(rows[0], rows[1], ...)` where `rows` is a name for a list or tuple of a length
        known now; else `node` as it is."""
        args = []
        for arg in node.args:
            if not isinstance(arg, ast.Starred):
                args.append(arg)
                continue
            length = self._length(self.env.get(arg.value.id)) if isinstance(arg.value, ast.Name) else None
            if length is None:
                return node
            args += [ast.copy_location(ast.Subscript(ast.Name(arg.value.id, ast.Load()), ast.Constant(k), ast.Load()),
                                       arg) for k in range(length)]
        return ast.fix_missing_locations(ast.copy_location(ast.Call(node.func, args, node.keywords), node))

    def _static_display(self, node):
        """`_static_argument`, also of lists and tuples of them (`[("W", np.ndarray), ("b", float)]`)."""
        if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
            items = [self._static_display(e) for e in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        return self._static_argument(node)

    def class_of(self, atom):
        """The class of the object `atom` holds, if the transform knows it (`self` of a bound method, an object
        made here or read from the module), else None."""
        return self.receiver if self.self_var is not None and atom is self.self_var else self.types.get(atom)

    def _own_method(self, receiver, name):
        """(plain function, class) behind `obj.<name>(...)` when `obj`'s class is known here, else None.

        Known: `self` in a bound method, an object made here from a class of the user's
        (`layer = Layer(W)`), or an object the function reads from its module or closure.
        """
        cls = self.class_of(receiver)
        if cls is None:
            return None
        attribute = inspect.getattr_static(cls, name, None)
        if isinstance(attribute, (staticmethod, classmethod)):
            return None  # see call_method
        method = user_function(attribute)
        if method is not None:
            self.bind_method(cls, name, attribute, receiver)
        return (method, cls) if method is not None else None

    def bind_method(self, cls, name, attribute, receiver=None):
        """Among what is checked before each call: the class still has this method (`D.act = ...` replaced it),
        and an object known now has not shadowed it with an attribute of its own (`d.act = lambda z: ...`)."""
        self.bindings.append(("attr", cls, name, attribute))  # (a function in a class body: cls.name is it)
        obj = self.live.get(receiver) if isinstance(receiver, Var) else None
        if obj is None and receiver is not None and receiver is self.self_var:
            obj = getattr(self, "receiver_object", None)
        if obj is not None and isinstance(getattr(obj, "__dict__", None), dict):
            self.bindings.append(("absent", obj.__dict__, name, None))

    @property
    def copying(self):
        """The `copy.copy(obj)` calls being lowered as calls of `copy.copy` (see call_object)."""
        if "_copying" not in self.__dict__:
            self._copying = set()
        return self._copying

    def copied_object(self, obj, node, outputs, targets, atom):
        """`copy.copy(obj)` / `copy.deepcopy(obj)` (ML-From-Scratch's `self.W_opt = copy.copy(optimizer)`): run as
        written; where `obj` is an object of the user's holding only numbers (copied_class), the copy is an
        object of its class, its methods inlined and its attributes read when the code runs."""
        holder = None if isinstance(node.args[0], ast.Name) else self.namer.invented("copied").name
        source = self.expr(node.args[0])  # (what is copied, read once: `copy.copy(Adagrad(0.1))`)
        kind = self.container_kind(source)
        if obj is copy.copy and kind in ("list", "dict") and isinstance(source, (Var, Pack)):  # list(xs), dict(d):
            copier = list if kind == "list" else dict  # a new list or dict holding the same items, as Python's
            return (self.emit(rules.lookup(copier), [source], {}, node, (targets or [None])[0]),)[:max(outputs, 1)]
        if obj is copy.deepcopy and kind is not None and isinstance(source, (Var, Pack)):  # copies of its items
            made = self.emit(rules.lookup(deep_copy), [source], {}, node, (targets or [None])[0])
            self.containers[made] = kind
            return (made,)[:max(outputs, 1)]
        called = node
        if holder is not None:
            self.env[holder] = source
            called = ast.copy_location(ast.Call(node.func, [ast.copy_location(ast.Name(holder, ast.Load()), node)],
                                                []), node)
        self.copying.add(called)
        try:
            made = self.call_object(obj, called, outputs, targets, atom)
        finally:
            self.copying.discard(called)
            self.env.pop(holder, None)
        cls = self.copied_class(source)
        if cls is not None and made and isinstance(made[0], Var):
            self.types[made[0]] = cls
            if source not in self.live:  # an object made here: the copy is a new one, holding what it holds
                self.made_objects.add(made[0])
                for (base, attr), (value, _) in list(self.attributes.items()):
                    if base is source:
                        self.attributes[(made[0], attr)] = (value, self.current)
        return made

    def copied_class(self, source):
        """The class of the object `source` holds, where `copy.copy(source)` (or `copy.deepcopy`) may be run as
        written and the copy followed as an object of that class: a class of the user's that does not copy
        itself its own way, and whose object holds only numbers, strings and None (an array or object would be
        shared by a copy's in-place changes, which tapegen does not follow); else None."""
        cls = self.class_of(source)
        if cls is None or not inspect.isclass(cls) or not users_class(cls) or issubclass(cls, tuple) \
                or any(inspect.getattr_static(cls, own, None) is not inspect.getattr_static(object, own, None)
                       for own in ("__copy__", "__deepcopy__", "__reduce__", "__reduce_ex__", "__getstate__",
                                   "__setstate__", "__getattr__", "__getattribute__", "__setattr__")):
            return None
        plain = (int, float, complex, str, bool, type(None), np.generic)
        if any(base is source and not (isinstance(value, Const) and isinstance(value.value, plain))
               for (base, _), (value, _) in self.attributes.items()):
            return None
        live = self.live.get(source)
        if live is not None and not all(isinstance(v, plain) for v in getattr(live, "__dict__", {}).values()):
            return None
        return cls

    def class_held(self, node, name):
        """`(function, class)` for `obj.attr.name(...)` where `node` is `obj.attr`, an attribute that holds a
        class of the user's (`self.cost = cost` of a parameter `cost=CrossEntropyCost`, set here or on an object
        of the module), and `name` is a plain function, @staticmethod or @classmethod of that class: the function
        Python calls (a classmethod bound to the class); else None. Only a name's attribute is looked at."""
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            return None
        if node.value.id in self.env and not isinstance(self.env[node.value.id], Var):
            return None  # (a function, a list of them, a number: no object's attribute)
        owner = self.expr(node.value)  # (a name: read again by the call's own path if this returns None)
        if not isinstance(owner, Var):
            return None
        assigned = self.attributes.get((owner, node.attr))
        if assigned is not None:
            value, block = assigned
            if not (self.is_open(block) and isinstance(value, StaticValue) and inspect.isclass(value.obj)):
                return None
            cls = value.obj
        elif owner in self.live and node.attr in getattr(self.live[owner], "__dict__", {}):
            cls = inspect.getattr_static(self.live[owner], node.attr, None)
            if not inspect.isclass(cls):
                return None
            self.bindings.append(("attr", self.live[owner], node.attr, cls))  # (made again if rebound)
        elif inspect.isclass(self.types.get(owner)) and users_class(self.types[owner]) and (
                owner in self.live or owner in self.made_objects):  # `act = Tanh` in the class's body, read through
            kind = self.types[owner]                                 # an object that did not set its own `.act`
            cls = inspect.getattr_static(kind, node.attr, None)
            if not inspect.isclass(cls):
                return None
            self.bindings.append(("attr", kind, node.attr, cls))  # (made again if the class's is rebound)
        else:
            return None
        if not users_class(cls):
            return None
        attribute = inspect.getattr_static(cls, name, None)
        plain = attribute.__func__ if isinstance(attribute, (staticmethod, classmethod)) else attribute
        if not inspect.isfunction(plain) or user_function(plain) is None:
            return None
        called = getattr(cls, name)
        if not isinstance(attribute, classmethod):  # (a classmethod read is a new bound method each time)
            self.bindings.append(("attr", cls, name, called))  # the class's function replaced: made again
        return (called, cls)

    def _static_method(self, receiver, name):
        """The function behind `obj.<name>` and what it is called with first, for a @staticmethod (nothing)
        or a @classmethod (the class) of a class known here; else None."""
        cls = self.class_of(receiver)
        attribute = inspect.getattr_static(cls, name, None) if cls is not None else None
        if not isinstance(attribute, (staticmethod, classmethod)) or user_function(attribute.__func__) is None:
            return None
        return user_function(attribute.__func__), ([] if isinstance(attribute, staticmethod) else [StaticValue(cls)])

    def lowers(self, fn) -> bool:
        """Whether `fn`'s source lowers on its own (checked once per function)."""
        known = _LOWERS.get(fn)
        if known is None:
            from ..errors import TapegenError
            from .source import function_source

            def make(carried):
                lowerer = type(self)(function_source(fn), fn, self.reserved)
                lowerer.carried, lowerer.root_scope = carried, lowerer.scope
                return lowerer
            _LOWERS[fn] = False  # while it is lowered: a recursive helper (zeros_like_tree) does not lower
            try:
                lowered_until_settled(make)
                known = True
            except TapegenError:
                known = False
            _LOWERS[fn] = known
        return known

    def construct(self, cls, node, targets):
        """`Layer(W)` for a class of the user's: a bare instance, then its `__init__` inlined.

        A dataclass's generated `__init__` (it has no source) is followed field by field.
        """
        import dataclasses
        if inspect.getattr_static(cls, "__new__", object.__new__) is not object.__new__ or issubclass(cls, tuple):
            return None
        init = inspect.getattr_static(cls, "__init__", object.__init__)
        generated = getattr(getattr(init, "__code__", None), "co_filename", "").startswith("<")
        fields = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) and generated else None
        if fields is None and init is not object.__init__ and user_function(init) is None:
            return None
        known = self.env.get(node.func.id) if isinstance(node.func, ast.Name) else None
        made_by = self.free_object(cls.__name__, lambda c=cls: c) if isinstance(known, StaticValue) and \
            known.atom is None else self.expr(node.func)  # a class imported inside a function: read as itself
        obj = self.emit(_opaque("object.__new__", object.__new__), [made_by], {}, node, (targets or [None])[0])
        self.types[obj] = cls
        self.made_objects.add(obj)
        args, kwargs = self.arguments(node, static=True, callee=user_function(init) if fields is None else None,
                                      bound=1)
        if fields is not None:
            self._dataclass_init(obj, cls, [f for f in fields if f.init], args, kwargs, node)
        elif init is not object.__init__:
            self.inline(user_function(init), node, [obj] + args, kwargs, receiver=cls)
        return (obj,)

    def record(self, cls, like, args, kwargs, node, target=None):
        """`Params(W, b=b)` for a namedtuple class: its items in field order (defaults filled in), made
        into the record, whose items' cotangents come back by field name or position. `like`: the class
        (or a record of it) as generated code reads it."""
        fields = cls._fields
        unknown = set(kwargs) - set(fields)
        if len(args) > len(fields) or unknown or set(fields[:len(args)]) & set(kwargs):
            raise self.unsupported(node, f"{cls.__name__}() does not take these arguments "
                                         f"(its fields are {', '.join(fields)})")
        items = []
        for k, name in enumerate(fields):
            if k < len(args):
                items.append(args[k])
            elif name in kwargs:
                items.append(kwargs[name])
            elif name in cls._field_defaults:
                items.append(Const(cls._field_defaults[name]))
            else:
                raise self.unsupported(node, f"{cls.__name__}() is missing argument `{name}`")
        made = self.emit(rules.lookup(make_tuple), items, {}, node, None)
        record = self.emit(rules.lookup(as_record), [like, made], {}, node, target)
        self.types[record] = cls
        return record

    def replaced(self, receiver, cls, kwargs, node, targets):
        """`params._replace(b=v)` on a namedtuple made or known here: a new record, the other items read."""
        items = {name: kwargs[name] if name in kwargs else
                 self.emit(rules.lookup(operator.getitem), [receiver, Const(k)], {}, node, None)
                 for k, name in enumerate(cls._fields)}
        return (self.record(cls, receiver, [], items, node, (targets or [None])[0]),)

    def dataclass_dict(self, node, as_tuple=False):
        """`dataclasses.asdict(p)` on a dataclass object tapegen knows, whose fields hold no object of a class
        of the user's (asdict would turn a dataclass into a dict too): {name: p.name}; `dataclasses.astuple(p)`:
        (p.name, ...); else None."""
        dataclasses = _dataclasses()
        receiver = self.expr(node.args[0])
        cls = self.types.get(receiver) if isinstance(receiver, Var) else None
        if cls is None or not dataclasses.is_dataclass(cls):
            return None
        names = [f.name for f in dataclasses.fields(cls)]
        reads = [ast.copy_location(ast.Attribute(node.args[0], name, ast.Load()), node) for name in names]
        values = [self.expr(ast.fix_missing_locations(read)) for read in reads]
        if any(isinstance(v, Var) and v in self.types or isinstance(v, (KnownItems, Pack)) for v in values):
            return None
        if as_tuple:
            return self.emit(rules.lookup(make_tuple), values, {}, node, None)
        return self.emit(rules.lookup(make_dict), [Const(tuple(names))] + values, {}, node, None)

    def replaced_dataclass(self, node):
        """`dataclasses.replace(p, b=v)` on a dataclass object tapegen knows: `Cls(W=p.W, b=v)`, or None."""
        dataclasses = _dataclasses()
        receiver = self.expr(node.args[0])
        cls = self.types.get(receiver) if isinstance(receiver, Var) else None
        if cls is None or not dataclasses.is_dataclass(cls):
            return None
        holders = {"cls": self.namer.invented("replaced_class").name, "obj": self.namer.invented("replaced").name}
        changes = {kw.arg: kw.value for kw in node.keywords}
        call = ast.Call(ast.Name(holders["cls"], ast.Load()), [], [
            ast.keyword(f.name, changes.get(f.name, ast.Attribute(ast.Name(holders["obj"], ast.Load()), f.name,
                                                                  ast.Load())))
            for f in dataclasses.fields(cls) if f.init])
        for sub in ast.walk(call):
            if isinstance(sub, (ast.expr, ast.keyword)) and not hasattr(sub, "lineno"):
                ast.copy_location(sub, node)
        self.env[holders["cls"]], self.env[holders["obj"]] = StaticValue(cls), receiver
        try:
            return self.expr(call)
        finally:
            del self.env[holders["cls"]], self.env[holders["obj"]]

    def _dataclass_init(self, obj, cls, fields, args, kwargs, node):
        import dataclasses
        for k, field in enumerate(fields):
            if k < len(args):
                value = args[k]
            elif field.name in kwargs:
                value = kwargs[field.name]
            elif field.default is not dataclasses.MISSING:
                value = Const(field.default)
            elif field.default_factory is not dataclasses.MISSING:  # `field(default_factory=list)`: called, as
                factory = self.namer.invented("factory").name  # the generated `__init__` does, once per object
                self.env[factory] = StaticValue(field.default_factory)
                try:
                    value = self.call(ast.copy_location(ast.Call(ast.copy_location(ast.Name(factory, ast.Load()),
                                                                                   node), [], []), node))[0]
                finally:
                    del self.env[factory]
            else:
                raise self.unsupported(node, f"{cls.__name__}() is missing argument `{field.name}`")
            if isinstance(value, Pack) and value.kind in ("list", "tuple"):  # a list of its own, as set_attribute
                value = self.emit(rules.lookup(make_list if value.kind == "list" else make_tuple), list(value.items),
                                  {}, node, None)
            written = value.atom if isinstance(value, StaticValue) else \
                self.materialize(value, node) if isinstance(value, KnownItems) else value  # (the objects known)
            if written is not None:
                self.emit_multi(_opaque("setattr", setattr), [obj, Const(field.name), written], {}, node, 0, [])
            self.attributes[(obj, field.name)] = (value, self.current)
        post = user_function(inspect.getattr_static(cls, "__post_init__", None))
        if post is not None:
            self.inline(post, node, [obj], {}, receiver=cls)

    def _append(self, receiver, args, func, node):
        """`xs.append(v)`: an in-place update of the list var `xs`.

        On a list the function did not make (an argument, `history.append(loss)`; an object's list it
        reads), the append runs as written, as a side effect: should the list be read afterwards
        towards the output, activity analysis refuses it (the gradient would be lost there). A list argument
        of the differentiated function is appended to in a copy, as an array argument is written into (its
        gradient is with respect to its value on entry).
        """
        name = func.value.id if isinstance(func.value, ast.Name) else None
        if isinstance(receiver, Var) and receiver in self.root_params and self.container_kind(receiver) == "list" \
                and name is not None and self.sole_name(name, receiver):
            receiver = self.emit(rules.lookup(list), [receiver], {}, node, self.shared.get(name, name))
            self.store(name, receiver, node)
        if receiver in self.holders and len(args) == 1 and self.may_carry(args[0]):
            text = ast.unparse(func.value)
            raise self.unsupported(node, f"`{ast.unparse(node)}` changes the list `{text}`, which another list, tuple "
                                         f"or dict holds too (Python's change shows there): tapegen cannot follow a "
                                         f"gradient through that one", f"put `{text}` into the other list or dict "
                                                                       f"after appending to it")
        if not isinstance(receiver, Var) or receiver not in self.fresh or receiver in self.params \
                and not self.callers_container(name, receiver):  # (a list the helper's caller made: appended in place)
            if receiver in self.item_origin and self._append_to_item(receiver, args, func, node):
                return ()
            held = self._read_from_live(receiver)
            if held is not None and len(args) == 1:  # `self.X.append(X)` on a layer made before: the
                grown = self.binary(operator.add, receiver,  # attribute is rebound to the list with X added
                                    self.emit(rules.lookup(make_list), [args[0]], {}, node, None), node, None)
                base, attr = held
                for var in self.attribute_reads.get(held, ()):
                    if var is not receiver:
                        self.stale.setdefault(var, (ast.unparse(func.value), node, "item"))
                self.set_attribute(base, ast.copy_location(ast.Attribute(ast.Name(str(base), ast.Load()), attr,
                                                                         ast.Store()), node), grown)
                return ()
            if isinstance(receiver, Var):
                tuple_ = self.taken_out.get(receiver)
                named = [name for name, atom in self.env.items() if isinstance(atom, Var)
                         and (tuple_, False) in self.holders.get(atom, ()) and self.read_after(name, node)]
                callers = not named and self.call_stack and any((tuple_, False) in held  # (a helper given
                                                                for held in self.holders.values())  # `pair[0]`)
                if (named or callers) and len(args) == 1 and self.may_carry(args[0]):
                    which = f"the one `{named[0]}` names" if named else "one the caller names too"
                    raise self.unsupported(node, f"`{ast.unparse(node)}` changes a list the tuple holds, which may be "
                                                 f"{which} (Python's change shows there): tapegen "
                                                 f"cannot follow a gradient through that one",
                                           "append through the list's own name: "
                                           f"{named[0] if named else 'xs'}.append(...), not through the tuple")
                self.emit_multi(_opaque_method("append"), [receiver] + args, {}, node, 0, [])
                return ()
            raise self.unsupported(node, "append to a list tapegen cannot follow (an argument, or shared)",
                                   f"build a new list first: {ast.unparse(func.value)} = []")
        self.emit(rules.lookup(append_primitive), [receiver] + args, {}, node, receiver)
        self.wrote_in_place(receiver, "append")
        return ()

    def _append_to_item(self, receiver, args, func, node) -> bool:
        """`d["A"].append(v)`, or `As = d["A"]; As.append(v)`, on a list held in a dict (or list) this function
        built, as numpy-ml's layers keep `self.derived_variables["A"]`: the list with `v` added is a new
        value, and so is the dict holding it, rebound wherever the dict is held (a name, an attribute).
        Other names for the list from before may not be read again (they would not show `v`)."""
        container, key = self.item_origin[receiver]
        holders = self._holders(container, key)
        if not holders or len(args) != 1:
            return False
        if self.container_kind(container) != "dict" and self.may_carry(args[0]):  # (a value without a derivative,
            self.check_items_unshared(container, node, ast.unparse(func.value))  # or into a dict's list: as before,
            # numpy-ml's `dv = layer.derived_variables.copy(); dv["wrappers"].append(...)`)
        self.check_item_alone(container, key if isinstance(key, Var) else Const(key), receiver, node, ast.unparse(node),
                              holders=self.may_carry(args[0]))
        grown = self.binary(operator.add, receiver, self.emit(rules.lookup(make_list), [args[0]], {}, node, None),
                            node, None)
        self.replace_item(holders, key if isinstance(key, Var) else Const(key), grown, node, ast.unparse(func.value))
        if isinstance(func.value, ast.Name):
            self.stale.pop(self.env.get(func.value.id), None)
            self.store(func.value.id, grown, node)
            self.stale.pop(self.env.get(func.value.id), None)
        return True

    def replace_item(self, holders, key, value, node, text):
        """Item `key` of the list or dict each holder (a name, or an (object, attribute)) holds is now
        `value`: each is rebound to a copy with it replaced. Names for the item as it was go stale."""
        made = {}  # (one new list or dict for each held: a name and an attribute holding one dict, `C =
        for holder, current in holders:  # self.cache`, hold one again, as in Python)
            updated = made.get(current) or self.emit(rules.lookup(with_item), [current, key, value], {}, node, None)
            made[current] = updated
            self.put_back[value] = self.put_back.get(value, 0) + 1
            if isinstance(holder, str):
                self.check_holder_carried(holder, current, node, text)
                self.store(holder, updated, node)
            else:
                base, attr = holder
                self.set_attribute(base, ast.copy_location(ast.Attribute(ast.Name(str(base), ast.Load()), attr,
                                                                         ast.Store()), node), updated)
            self.item_origin[value] = (self.shared.get(holder, updated) if isinstance(holder, str) else updated,
                                       key.value if isinstance(key, Const) else key)
        containers = {current for _, current in holders}
        versions = None
        for var, (container, other_key) in list(self.item_origin.items()):
            same = container in containers
            if not same and other_key == (key.value if isinstance(key, Const) else key):  # (an item of another
                if versions is None:  # list at the same index: not the one changed)
                    versions = set().union(*(self.versions(current) for current in containers))
                same = container in versions
            if same and var is not value and not _other_items(other_key, key):  # the item as it was: not to be
                self.stale.setdefault(var, (text, node, "item"))  # read again (another key's item is as it was)

    def versions(self, var) -> set:
        """`var` and the lists or dicts it was made from, or made into, by replacing an item or rebinding
        (`version_of`): one list or dict as Python sees it."""
        made_into = {}
        for v, made_from in self.version_of.items():
            made_into.setdefault(made_from, []).append(v)
        found, todo = set(), [var]
        while todo:
            v = todo.pop()
            if v not in found:
                found.add(v)
                todo += ([self.version_of[v]] if v in self.version_of else []) + made_into.get(v, [])
        return found

    def check_holder_carried(self, holder, current, node, text):
        """Refuses changing an item of the list or dict `holder` names inside a loop or branch that does not carry
        `holder` (`for row in rows: row.append(v)`): the change would last only to the end of the pass (a wrong
        value, no error)."""
        block = self.var_block.get(current, self.blocks[0] if not self.outer_blocks else self.outer_blocks[0])
        if holder not in self.shared and self.crossed_constructs(block):
            raise self.unsupported(node, f"`{text}` changes in place an item of `{holder}` inside a loop or branch "
                                         f"that tapegen does not see change `{holder}` (its loop target, or a name "
                                         f"for an item read out of it)", f"change the item through `{holder}` "
                                                                         f"itself: `{holder}[i].append(v)` in a loop "
                                                                         f"over `range(len({holder}))`")

    def _holders(self, container, key):
        """[(name or (object, attribute), its value now)] for each name and attribute whose value is
        `container`, or a dict made from it with items other than `key` replaced."""
        def comes_from(value):
            seen = set()
            while value is not None and value not in seen:  # (a loop's var may be its own item's parent)
                if value == container:
                    return True
                seen.add(value)
                parent = self.item_parent.get(value)
                if parent is None or parent[1] == key:
                    return False
                value = parent[0]
            return False
        found = [(name, value) for name, value in self.env.items() if isinstance(value, Var) and comes_from(value)]
        for (base, attr), (value, block) in self.attributes.items():
            value = self.shared_attributes.get((base, attr), value)
            if isinstance(value, Var) and self.is_open(block) and comes_from(value):
                found.append(((base, attr), value))
        for var in [container, *self.env.values()]:  # a dict read from a layer made before (numpy-ml's
            held = self._read_from_live(var)         # self.derived_variables): rebound, item replaced
            if held is not None and comes_from(var) and all(holder != held for holder, _ in found):
                found.append((held, var))
        return found

    def known_keys(self, var):
        """The keys of dict `var`, where known when transforming: one built here, or read from the module, or
        a dict attribute of a module's object that this function has not set (numpy-ml's `self._dv`, whose
        keys are then among the names checked before each call: code made again if they change)."""
        keys = self.dict_keys.get(var) if isinstance(var, Var) else None
        held = self._read_from_live(var) if keys is None else None
        value = getattr(self.live[held[0]], held[1], None) if held is not None else None
        if type(value) is dict and len(value) <= MAX_UNROLLED and all(type(k) is str for k in value):
            self.bindings.append(("attr", self.live[held[0]], held[1], value))
            self.bindings.append(("keys", value, None, tuple(value)))
            keys = self.dict_keys[var] = tuple(value)
        return keys

    def _read_from_live(self, var):
        """(object, attribute) when `var` is `obj.attr` read from an object made before the function (a
        global layer) that the function has not set: the list or dict it holds now."""
        if not isinstance(var, Var):
            return None
        return next((key for key, reads in self.attribute_reads.items()
                     if key[0] in self.live and key not in self.attributes and var in reads
                     and isinstance(getattr(self.live[key[0]], key[1], None), (list, dict))), None)

    def _mutation(self, receiver, func, args, kwargs, node):
        """`xs.extend(ys)` on a list built here becomes `xs = xs + ys`; other in-place changes are refused.

        A method that changes its object in place (`xs.insert`, `d.update`, `a.sort()`) would change a
        value behind the transform's back: its gradient would silently be that of the unchanged value.
        """
        name = func.value.id if isinstance(func.value, ast.Name) else None
        if func.attr == "__setitem__" and name and len(node.args) == 2 and not kwargs:  # generated code's write into
            item = ast.copy_location(ast.Subscript(func.value, node.args[0], ast.Store()), node)  # a module's dict
            self.statement(ast.copy_location(ast.Assign([item], node.args[1]), node))  # (live_write): as `d[k] = v`
            return ()
        if name and isinstance(self.env.get(name), KnownItems):  # a list or dict of functions or objects: one
            self.check_sole_holder(name, self.env[name], f"{name}.{func.attr}(...)", node,  # name holds it
                                   f"build a new {self.env[name].kind} instead")
        if func.attr == "extend" and name and self.container_kind(receiver) == "list" and len(args) == 1 \
                and not kwargs:
            self.check_unshared(name, receiver, node)
            self.store(name, self.binary(operator.add, receiver, args[0], node, self.shared.get(name, name)), node)
            return ()
        if func.attr == "insert" and name and self.container_kind(receiver) == "list" and len(args) == 2 \
                and not kwargs and isinstance(args[0], (Const, Var)):  # xs.insert(i, v): xs = xs[:i] + [v] + xs[i:]
            self.check_unshared(name, receiver, node)
            at = args[0]
            cut = (lambda start, stop: Const(slice(start, stop))) if isinstance(at, Const) else \
                (lambda start, stop: self.emit(rules.lookup(slice), [Const(start) if start is None else start,
                                                                     Const(stop) if stop is None else stop],
                                               {}, node, None))
            if isinstance(at, Const):
                before, after = cut(None, at.value), cut(at.value, None)
            else:
                before, after = cut(None, at), cut(at, None)
            left = self.emit(rules.lookup(operator.getitem), [receiver, before], {}, node, None)
            right = self.emit(rules.lookup(operator.getitem), [receiver, after], {}, node, None)
            middle = self.binary(operator.add, left, self.emit(rules.lookup(make_list), [args[1]], {}, node, None),
                                 node, None)
            self.store(name, self.binary(operator.add, middle, right, node, self.shared.get(name, name)), node)
            return ()
        if func.attr == "update" and name and self.container_kind(receiver) == "dict" and len(args) <= 1:
            return self.dict_update(name, receiver, args[0] if args else None, kwargs, node)
        if func.attr == "setdefault" and name and self.container_kind(receiver) == "dict" and 1 <= len(args) <= 2 \
                and not kwargs:
            return (self.dict_setdefault(func.value, args[0], args[1] if len(args) == 2 else Const(None), node),)
        if func.attr == "remove" and name and self.container_kind(receiver) == "list" and len(args) == 1 \
                and not kwargs:  # xs.remove(v): xs without the first item equal to v (found as xs.index(v) is)
            at = self.emit(rules.lookup(removed_position), [receiver, args[0]], {}, node, None)
            self.list_without(name, receiver, at, node)
            return (Const(None),)
        if name and self.container_kind(receiver) == "list" and not kwargs and all(
                isinstance(a, Const) and type(a.value) is int for a in args):
            if func.attr == "pop" and len(args) <= 1:  # v = xs.pop(k): v = xs[k]; xs = xs without it
                return (self.list_without(name, receiver, args[0].value if args else -1, node),)
            if func.attr in ("reverse", "clear") and not args:  # xs = xs[::-1]; xs = []
                self.check_unshared(name, receiver, node)
                self.store(name, self.emit(rules.lookup(operator.getitem), [receiver, Const(slice(None, None, -1))],
                                           {}, node, None) if func.attr == "reverse" else
                           self.emit(rules.lookup(make_list), [], {}, node, None), node)
                return (Const(None),)
        known = self.known(func.value) if func.attr == "pop" and name else None  # (a dict of functions)
        if isinstance(known, KnownItems) and known.kind == "dict" or self.container_kind(receiver) == "dict":
            if func.attr == "pop" and name and 1 <= len(args) <= 2 and not kwargs and isinstance(args[0], Const):
                return (self.dict_pop(name, known if isinstance(known, KnownItems) else receiver, args[0].value,
                                      args[1] if len(args) == 2 else None, node),)
            keys = self.known_keys(receiver) if func.attr == "popitem" and name and not args and not kwargs \
                and not isinstance(known, KnownItems) else None
            if keys:  # k, v = d.popitem(): the last key set, its item, and `d` without it
                return (self.emit(rules.lookup(make_tuple), [Const(keys[-1]), self.dict_pop(name, receiver, keys[-1],
                                                                                             None, node)],
                                  {}, node, None),)
        if func.attr == "sort" and name and isinstance(receiver, Var) and self.container_kind(receiver) is None \
                and receiver not in self.types:  # a.sort(axis): a = np.sort(a, axis), into the array itself
            if self.wrote_into_view(name, receiver, node, lambda: self.emit(rules.lookup(np.sort), [receiver] + args,
                                                                            kwargs, node, None)):
                return ()  # row.sort(), row = M[i]: row[...] = np.sort(row)
            array = self.writable(name, receiver, node)
            self.store(name, self.emit(rules.lookup(np.sort), [array] + args, kwargs, node,
                                       self.shared.get(name, name)), node)
            if array in self.params:  # a helper's parameter: its caller's array, which NumPy sorts
                self.changes_callers_array(name, array, node)
            return ()
        if func.attr in _DICT_MUTATORS and self.container_kind(receiver) is None:
            self.kind_learnt_in_a_loop(receiver, "dict")
        what = f"`{ast.unparse(func.value)}`"
        raise self.unsupported(node, f"`.{func.attr}()` changes {what} in place, which tapegen cannot follow "
                                     f"(its gradient would be that of the unchanged value)",
                               MUTATOR_HINTS.get(func.attr, f"build a new value instead of changing {what}"))

    def kind_learnt_in_a_loop(self, receiver, kind):
        """`config.setdefault(k, v)` on a name None before a loop around it, a dict a pass made after it (cs231n's
        update rules: `if config is None: config = {}` in a helper the loop calls with the config it returned
        last pass): the loop is lowered again knowing the name holds a `kind` of container where not None
        (as it is where a pass makes it one, `Construct.close`), which this call finds out first."""
        if self.generated_code() or not isinstance(receiver, Var):
            return
        reach = self.alias_reach(receiver, maybe=True)
        for construct in self.open_constructs:
            if not isinstance(construct.node, (ast.For, ast.While)):
                continue
            for var in construct.entry_nones & reach:
                if (var.name, kind) not in construct.lowerer.carried.get(("kinds", construct.number), ()):
                    raise Recarry({("kinds", construct.number): {(var.name, kind)}})

    def list_without(self, name, receiver, index, node):
        """`xs.pop(index)` (or `del xs[index]`) on a list built here, `index` a constant: the item, and `xs` rebound
        to the list without it (`xs[:-1]` for the last; an empty list raises IndexError as Python's does). An
        index known only when the code runs (`del xs[k]` in a loop, `xs.remove(v)`) is an atom: `xs[:k] + xs[k +
        1:]`, the position checked and counted from 0 then (list_position)."""
        self.check_unshared(name, receiver, node)
        if not isinstance(index, int):
            at = self.emit(rules.lookup(list_position), [receiver, index, Const(ast.unparse(node))], {}, node, None)
            after = self.emit(rules.lookup(operator.add), [at, Const(1)], {}, node, None)
            item = self.emit(rules.lookup(operator.getitem), [receiver, at], {}, node, None)
            parts = [self.emit(rules.lookup(operator.getitem), [receiver, self.emit(
                rules.lookup(slice), [start, stop], {}, node, None)], {}, node, None)
                for start, stop in ((Const(None), at), (after, Const(None)))]
            self.store(name, self.binary(operator.add, *parts, node, None), node)
            return item
        item = self.emit(rules.lookup(operator.getitem), [receiver, Const(index)], {}, node, None)

        def part(start, stop):
            return self.emit(rules.lookup(operator.getitem), [receiver, Const(slice(start, stop))], {}, node, None)
        rest = part(None, -1) if index == -1 else self.binary(operator.add, part(None, index), part(index + 1, None),
                                                              node, None)
        self.store(name, rest, node)
        return item

    def dict_pop(self, name, receiver, key, default, node):
        """`d.pop(key, default)` on a dict built here (a wrapper's `**kwargs`: `verbose = kwargs.pop("verbose",
        False)`): the item (or `default`), and `d` rebound to a copy without it."""
        keys = receiver.keys if isinstance(receiver, KnownItems) else self.known_keys(receiver)
        if keys is not None and key not in keys:
            if default is None:
                raise self.unsupported(node, f"`{name}` has no key {key!r} to pop (a KeyError)",
                                       f"give a default: {name}.pop({key!r}, None)")
            return default
        if isinstance(receiver, KnownItems):  # of functions or objects, known one by one
            k = keys.index(key)
            self.store(name, KnownItems(receiver.items[:k] + receiver.items[k + 1:], "dict", keys[:k] + keys[k + 1:]),
                       node)
            return receiver.items[k]
        self.check_unshared(name, receiver, node)
        value = self.emit(rules.lookup(operator.getitem), [receiver, Const(key)], {}, node, None) if keys is not None \
            else self.emit(rules.lookup(item_or), [receiver, Const(key), default or Const(None)], {}, node, None)
        rest = self.emit(rules.lookup(dict_without), [receiver, Const(key)], {}, node, self.shared.get(name, name))
        if keys is not None:
            self.dict_keys[rest] = tuple(k for k in keys if k != key)
        self.store(name, rest, node)
        return value

    def dict_update(self, name, receiver, other, kwargs, node):
        """`d.update(other, k=v)` on a dict built here: `d` becomes a copy with each item set, one by one where
        `other`'s keys are known now, else with `other`'s items set when the code runs (`updated`)."""
        self.check_unshared(name, receiver, node)
        keys = self.known_keys(other) if other is not None else ()
        merged = receiver
        if keys is None:
            merged = self.emit(rules.lookup(updated), [receiver, other], {}, node,
                               None if kwargs else self.shared.get(name, name))
            keys = ()
        items = [(Const(key), self.emit(rules.lookup(operator.getitem), [other, Const(key)], {}, node, None))
                 for key in keys] + [(Const(key), value) for key, value in kwargs.items()]
        for k, (key, value) in enumerate(items):
            merged = self.emit(rules.lookup(with_item), [merged, key, value], {}, node,
                               self.shared.get(name, name) if k == len(items) - 1 else None)
        self.store(name, merged, node)
        return ()

    def dict_setdefault(self, name_node, key, default, node):
        """`d.setdefault(key, default)` on a dict built here: `d[key] = d.get(key, default)`, then `d[key]` read
        (the item itself, so `d.setdefault(k, []).append(v)` appends to the list `d` holds)."""
        hidden = {self.namer.invented(part).name: atom for part, atom in (("key", key), ("default", default))}
        self.env.update(hidden)
        try:
            key_name, default_name = (ast.copy_location(ast.Name(n, ast.Load()), node) for n in hidden)
            target = ast.copy_location(ast.Subscript(name_node, key_name, ast.Store()), node)
            got = ast.copy_location(ast.Call(ast.copy_location(ast.Attribute(name_node, "get", ast.Load()), node),
                                             [key_name, default_name], []), node)
            self.statement(ast.copy_location(ast.Assign([target], got), node))
            return self.expr(ast.copy_location(ast.Subscript(name_node, key_name, ast.Load()), node))
        finally:
            for n in hidden:
                del self.env[n]

    def _call_result(self, result, outputs, node, targets):
        """An inlined call's value, in the shape `call()` returns: a tuple of `outputs` atoms."""
        if outputs == 0:
            return ()
        target = (targets or [None])[0]
        if outputs == 1 and isinstance(target, Var) and result is not target and not isinstance(result, Pack):
            return (result,)
        if outputs > 1 and isinstance(result, Var):  # a call run as written (a recursion), unpacked
            return tuple(self.emit(rules.lookup(operator.getitem), [result, Const(k)], {}, node, None)
                         for k in range(outputs))
        return (result,) if outputs == 1 else tuple(result.items)


def _reads_whole(fn) -> bool:
    """Whether `fn`, given a generator, reads all its items before doing anything else (so computing them all
    first, as tapegen does, changes nothing)."""
    return fn is not MISSING and _hashable(fn) and fn in (sum, list, tuple, sorted, min, max, dict, set, frozenset,
                                                         np.fromiter, math.fsum, math.prod)


_INT_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
            ast.Mod: operator.mod}
MAX_UNROLLED = 64  # a global list of functions or objects longer than this is not unrolled


_PLAIN = (type(None), bool, int, float, str)


class _EllipsisNamed(ast.NodeTransformer):
    """`Ellipsis` in an einsum sublist, as the literal `...` it names."""

    def visit_Name(self, node):
        return ast.copy_location(ast.Constant(Ellipsis), node) if node.id == "Ellipsis" else node


def _plain_reads(node) -> bool:
    """Whether lowering `node` only reads names and constants (so lowering it twice changes nothing)."""
    if isinstance(node, ast.Starred):
        return _plain_reads(node.value)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(map(_plain_reads, node.elts))
    if isinstance(node, ast.Slice):
        return all(part is None or _plain_reads(part) for part in (node.lower, node.upper, node.step))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant)
    return isinstance(node, (ast.Name, ast.Constant))


def _einsum_spelled(node):
    """`np.einsum(a, [0, 1], b, [1, 2], [0, 2])` with literal sublists as `np.einsum("ab,bc->ac", a, b)`, or None."""
    from ..rules.linalg import _einsum_parts
    items = list(node.args)
    if any(kw.arg != "optimize" for kw in node.keywords) or any(isinstance(a, ast.Starred) for a in items):
        return None
    values, arrays = [], []
    for k, item in enumerate(items):
        if k % 2 == 0 and k < len(items) - (len(items) % 2 == 1 and len(items) > 1 and k == len(items) - 1):
            values.append(object())  # an array: _einsum_parts reads only the sublists
            arrays.append(item)
            continue
        spelled = ast.fix_missing_locations(_EllipsisNamed().visit(copy.deepcopy(item)))
        try:
            values.append(ast.literal_eval(spelled))
        except ValueError:
            return None
    if len(arrays) < 1 or len(items) < 2:
        return None
    spec, _, _ = _einsum_parts(values[0], values[1:])
    return ast.copy_location(ast.Call(node.func, [ast.copy_location(ast.Constant(spec), node)] + arrays,
                                      node.keywords), node)


def _decided(fn, left, right):
    """`left <fn> right` as a Const when it is decided now, else None: plain constants, or `is` against a
    singleton of a constant or a tuple or list written out (`(0, 1) is None` in a rule's code inlined with
    axis=(0, 1)), so generated code never writes `is` with a literal."""
    if fn in (operator.is_, operator.is_not) and any(isinstance(a, Const) and _singleton(a.value) for a in (left, right)) \
            and all(isinstance(a, Const) or (isinstance(a, Pack) and a.kind in ("list", "tuple")) for a in (left, right)):
        values = [a.value if isinstance(a, Const) else a for a in (left, right)]  # a display is a new object
        return Const(bool(fn(*values)))
    if isinstance(left, Const) and isinstance(right, Const) and isinstance(left.value, _PLAIN) \
            and isinstance(right.value, _PLAIN):
        return Const(bool(fn(left.value, right.value)))
    return None


def _singleton(value) -> bool:
    return value is None or value is Ellipsis or value is True or value is False


def _reads(node, names) -> bool:
    """Whether expression `node` reads any of `names`."""
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _holds(value, known) -> bool:
    """Whether `value` is the KnownItems `known`, or holds it as an item (at any depth)."""
    return value is known or isinstance(value, KnownItems) and any(_holds(item, known) for item in value.items)


def _shifted(wrt, by):
    """`wrt` for a function given `by` more parameters in front: positions moved, names and negatives kept."""
    if isinstance(wrt, (tuple, list)):
        return type(wrt)(_shifted(w, by) for w in wrt)
    return wrt + by if isinstance(wrt, int) and not isinstance(wrt, bool) and wrt >= 0 else wrt


def _out_argument(obj, node):
    """Where a NumPy call is given the array to write its result into: "out" (`out=y`), the position of an
    `out` passed positionally (a ufunc's argument after its inputs; np.clip's fourth), or None."""
    if any(kw.arg == "out" and not (isinstance(kw.value, ast.Constant) and kw.value.value is None)
           for kw in node.keywords):
        return "out"
    if any(isinstance(a, ast.Starred) for a in node.args):  # `f(*before, x, *after)`: the written arguments are not
        return None  # the values passed (an `out` among those the call spreads is refused where they are bound)
    if isinstance(obj, np.ufunc) and len(node.args) == obj.nin + 1 or obj is np.clip and len(node.args) == 4:
        return len(node.args) - 1
    return None


def _basic_index(node) -> bool:
    """An index written with slices, constant integers, `...` and `None` only (`X[:, 1]`, `out[2:, ...]`): NumPy's
    basic indexing, which gives a view of the array."""
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    return all(isinstance(part, ast.Slice) or isinstance(part, ast.Constant) and (
        part.value is None or part.value is Ellipsis or type(part.value) is int) or _constant_index(part)
        and not isinstance(part, ast.Constant) for part in parts)


def _constant_index(node) -> bool:
    """`fs[0]`, `fs[-1]`, `acts["tanh"]`: an index written as a constant."""
    return isinstance(node, ast.Constant) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
                                              and isinstance(node.operand, ast.Constant))


def _plain_path(node) -> bool:
    """`params["blocks"][0]`, `self.cfg`, `layers[i]["attn"]`: subscripts and attributes of a name, each
    index a constant or a name (reading it calls nothing of the user's beyond a container's own lookup)."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        if isinstance(node, ast.Subscript) and not (_constant_index(node.slice) or isinstance(node.slice, ast.Name)):
            return False
        node = node.value
    return isinstance(node, ast.Name)


def _described(value):
    """A call's argument as `__tapegen_compose__` sees it: a function as itself, a tuple display as a tuple,
    a constant as its value, anything computed at run time as DYNAMIC."""
    if isinstance(value, StaticValue):
        return value.obj
    if isinstance(value, (Pack, KnownItems)):
        return tuple(_described(item) for item in value.items)
    if isinstance(value, Const):
        return value.value
    return DYNAMIC


def _numbers_written(atom, tuples=False):
    """The Python value of a list display or constant of numbers (nested lists of one length each: a
    matrix), tuples too with `tuples`; else None."""
    kinds = (list, tuple) if tuples else (list,)
    if isinstance(atom, Pack) and atom.kind in ("list", "tuple")[:1 + tuples] and atom.items:
        items = [_numbers_written(v, tuples) if isinstance(v, Pack) else v.value if isinstance(v, Const) else None
                 for v in atom.items]
        value = items if atom.kind == "list" else tuple(items)
    elif isinstance(atom, Const) and isinstance(atom.value, kinds) and atom.value:
        value = atom.value
    else:
        return None
    flat = [value]
    while flat and isinstance(flat[0], kinds):
        if len({len(v) if isinstance(v, kinds) else -1 for v in flat}) != 1:
            return None
        flat = [item for v in flat for item in v]
    return value if flat and all(type(v) in (int, float) for v in flat) else None


def _display_of_functions(node, function_like) -> bool:
    """Whether `node` is a list, tuple or dict display (constant keys) of functions or lambdas: making it
    lowers nothing, so what it holds is known now."""
    if isinstance(node, ast.Dict):
        return bool(node.keys) and all(isinstance(k, ast.Constant) for k in node.keys) and \
            all(map(function_like, node.values))
    if isinstance(node, (ast.List, ast.Tuple)):
        return bool(node.elts) and all(map(function_like, node.elts))
    return False


def _makes_record_class(obj) -> bool:
    """Whether `obj` is `collections.namedtuple` or `typing.NamedTuple`: called on constants, a class made
    when transforming is the one each call would make (a record class, with no state of its own)."""
    return obj is collections.namedtuple or (obj is getattr(sys.modules.get("typing"), "NamedTuple", MISSING))


def _is_namedtuple(cls) -> bool:
    return inspect.isclass(cls) and issubclass(cls, tuple) and hasattr(cls, "_fields") and hasattr(cls, "_make")


def _iterates_attribute(method):
    """"layers" for an `__iter__` that is `return iter(self.layers)`, else None."""
    from .source import function_source
    try:
        node = function_source(user_function(method)).node
    except Exception:  # no source
        return None
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.Call):
        return None
    call, first = body[0].value, node.args.args[0].arg if node.args.args else None
    if not (isinstance(call.func, ast.Name) and call.func.id == "iter" and len(call.args) == 1
            and isinstance(call.args[0], ast.Attribute) and isinstance(call.args[0].value, ast.Name)
            and call.args[0].value.id == first):
        return None
    return call.args[0].attr


def _located(tree, where):
    """`tree` with `where`'s source position on every sub-node (for error carets)."""
    for sub in ast.walk(tree):
        if "lineno" in sub._attributes:
            ast.copy_location(sub, where)
    return tree


def _sparse_test(obj) -> bool:
    """scipy.sparse's issparse / isspmatrix (without importing SciPy)."""
    return str(getattr(obj, "__module__", "")).startswith(("scipy.sparse", "scipy._lib._sparse")) and \
        getattr(obj, "__name__", "") in ("issparse", "isspmatrix", "isspmatrix_csr", "isspmatrix_csc")


def _function_like(obj) -> bool:
    return inspect.isfunction(obj) or isinstance(obj, (np.ufunc, types.BuiltinFunctionType))


def _users_class_object(obj) -> bool:
    """A class of the user's (`activation_functions = {"relu": ReLU, ...}` holds them), called to make one."""
    return inspect.isclass(obj) and users_class(obj)


def _holds_functions(obj) -> bool:
    """Whether an object of the user's holds a function, or another object of the user's, in an attribute."""
    return any(_function_like(v) or not inspect.isclass(v) and users_class(type(v))
               for v in getattr(obj, "__dict__", {}).values())


@dataclass(frozen=True)
class Frozen:
    """A frozen SciPy distribution (`d = scipy.stats.norm(mu, sigma)`), kept as its distribution and arguments.

    Its methods are the distribution's, with the arguments appended: `d.logpdf(x)` lowers to
    `scipy.stats.norm.logpdf(x, mu, sigma)`, a primitive with rules in every argument. Read as a value
    (passed on, returned), it is made then, by the call as written (`node`).
    """

    distribution: object
    args: tuple
    kwargs: tuple  # (keyword, atom) pairs
    node: ast.Call

    def reads(self) -> tuple:
        """The variables its arguments read (a loop may not update one of them in place)."""
        return _vars(Pack(tuple(self.args) + tuple(atom for _, atom in self.kwargs), "tuple"))


def _hashable(obj) -> bool:
    try:
        hash(obj)
        return True
    except TypeError:
        return False


def _builtin_spellings():
    """Python built-ins and `math` functions, and the NumPy function with the same derivative."""
    import builtins
    import math
    import numpy as np
    spellings = {builtins.abs: np.abs, builtins.pow: np.power, builtins.sum: py_sum,
                 builtins.sorted: py_sorted,
                 builtins.max: (np.max, np.maximum), builtins.min: (np.min, np.minimum), math.fabs: np.abs,
                 math.pow: np.power, math.atan2: np.arctan2, math.hypot: np.hypot,
                 math.copysign: np.copysign, math.degrees: np.degrees,
                 math.radians: np.radians, math.asin: np.arcsin, math.acos: np.arccos, math.atan: np.arctan,
                 math.asinh: np.arcsinh, math.acosh: np.arccosh, math.atanh: np.arctanh, math.isnan: np.isnan,
                 math.isinf: np.isinf, math.isfinite: np.isfinite}
    for name in ("exp", "expm1", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh"):
        spellings[getattr(math, name)] = getattr(np, name)
    if hasattr(math, "cbrt"):
        spellings[math.cbrt] = np.cbrt
    if hasattr(math, "exp2"):
        spellings[math.exp2] = np.exp2
    spellings[math.log] = np.log  # math.log(x, base) is handled where it is called
    return spellings


# `math` functions SciPy has rules for, by their name in scipy.special (imported only when one is called).
SCIPY_MATH = {math.lgamma: "gammaln", math.gamma: "gamma", math.erf: "erf", math.erfc: "erfc"}


BUILTIN_SPELLINGS = _builtin_spellings()


def _method_arguments(prim, method_name, args):
    """`x.reshape(3, 4)` and `x.transpose(1, 0)` take their shape or axes as separate arguments."""
    if method_name in ("reshape", "transpose") and len(args) > 1:
        if all(isinstance(a, Const) for a in args):
            return [Const(tuple(a.value for a in args))]
        return [Pack(tuple(args), "tuple")]
    return args


_OPAQUE: dict = {}
_LOWERS: dict = {}  # rule helper -> whether its own source lowers (frontend inlines it when it does)


@dataclass(frozen=True)
class Spread:
    """`*xs` passed to a call run as written, whose length is known only when the code runs."""

    atom: object


def _root_name(node):
    """`a` for `a.b.c` (a Name or attribute chain), else None."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _literal_constant(value) -> bool:
    """Whether generated code can write `value` as a literal (np.pi, np.newaxis, a string, a tuple of them)."""
    if isinstance(value, tuple):
        return all(_literal_constant(v) for v in value)
    return value is None or value is Ellipsis or isinstance(value, (bool, int, float, complex, str, bytes, np.generic))


def _opaque(spelling, obj, written=None):
    """A callable with no rule: called as written; an error only if a gradient must flow through it, which
    names it as `written` (the generated code calls it as `spelling`) and, for a library tapegen has no
    rules for by design, the real fix."""
    key = ("call", spelling, id(obj), written)
    if key not in _OPAQUE:
        _OPAQUE[key] = Primitive(name=written or spelling, fn=obj, params=(), defaults={}, form="opaque",
                                 spelling=spelling, hint=_library_hint(obj))
    return _OPAQUE[key]


# Libraries whose functions have no rules, and what differentiable code uses instead (module prefix -> hint).
_LIBRARY_HINTS = {
    "scipy.sparse": "tapegen differentiates dense arrays only: build the matrix dense (np.diag(v, k), np.zeros "
                    "and A[i, j] = ...) and solve with np.linalg.solve or scipy.linalg.solve_banded",
    "numpy.ma": "tapegen does not follow masked arrays: keep the mask as a boolean array and use np.where(mask, "
                "x, 0.0), x[~mask], or np.nansum / np.nanmean on an array with NaN where masked",
    "scipy.interpolate": "tapegen has no rules for scipy.interpolate: np.interp (linear) is differentiable; for a "
                         "spline, write its formula in NumPy or register a rule with tapegen.register_vjp",
    "numpy.random": "tapegen does not differentiate a draw with respect to its parameters: draw the standard one "
                    "and scale it, `loc + scale * np.random.standard_normal(size)` (`low + (high - low) * "
                    "np.random.random_sample(size)` for uniform), which differentiates as written",
    "scipy.ndimage": "tapegen has no rules for scipy.ndimage: write the filter as scipy.signal.convolve(img, kernel, "
                     "mode='same') (zeros outside), or np.pad(img, r, mode='symmetric') (ndimage's 'reflect') and a "
                     "sum of shifted slices",
}


_BUILTIN_HINTS = {set: "a set has no order, so a value put into it cannot be followed out of it: keep such values in "
                      "a list (`sorted(set(labels))` of values that carry no derivative is fine)",
                  frozenset: "a set has no order, so a value put into it cannot be followed out of it: keep such "
                             "values in a list"}


def _library_hint(obj) -> str:
    if _hashable(obj) and obj in _BUILTIN_HINTS:
        return _BUILTIN_HINTS[obj]
    module = getattr(obj, "__module__", None) or ""
    if isinstance(obj, type) or not module:
        module = module or getattr(type(obj), "__module__", "")
    return next((hint for prefix, hint in _LIBRARY_HINTS.items()
                 if module == prefix or module.startswith(prefix + ".")), "")


def _opaque_method(method_name):
    key = ("method", method_name)
    if key not in _OPAQUE:
        _OPAQUE[key] = Primitive(name=f".{method_name}", fn=None, params=(), defaults={}, form="opaque",
                                 spelling=f".{method_name}")
    return _OPAQUE[key]


def _opaque_value(text, chosen=False):
    """A call of a computed callee (`fns[i](x)`): the callee is the first input. `chosen`: a name or item holding
    a function tapegen could not tell when transforming (a derivative through it names the real fix)."""
    key = ("value", text, chosen)
    if key not in _OPAQUE:
        _OPAQUE[key] = Primitive(name=text, fn=None, params=(), defaults={}, form="opaque", spelling="()")
        if chosen:
            _OPAQUE[key].note = (f"; `{text}` is a function tapegen could not tell when it transformed the function "
                                 f"(one a helper returns from a branch decided as the code runs, or an item picked "
                                 f"by a key computed then)")
            _OPAQUE[key].hint = ("call the function where tapegen knows which one it is: by name in each branch, or "
                                 "take it from a list or dict by a constant")
    return _OPAQUE[key]


def _transpose():
    import numpy as np
    return np.transpose


def _numpy():
    import numpy as np
    return np


def _metadata():
    from ..rules.shape import metadata
    return metadata


_HINTS = {
    ast.Try: "move error handling outside the differentiated function",
    ast.With: "move the `with` block outside the differentiated function",
    ast.Global: "pass the value in as an argument and return the new value",
    ast.Nonlocal: "pass the value in as an argument and return the new value",
    ast.Yield: "a generator has no single output to differentiate: return a value",
    ast.YieldFrom: "a generator has no single output to differentiate: return a value",
    ast.Await: "async functions cannot be differentiated: make it a plain function",
    ast.Lambda: "assign it to a name and call it, or define it with `def`",
}


def _as_if_statement(target, value):
    """`target = a if c else b` as `if c: target = a` / `else: target = b`."""
    branch = lambda side: [ast.copy_location(ast.Assign([target], side), side)]
    return ast.fix_missing_locations(ast.copy_location(ast.If(value.test, branch(value.body), branch(value.orelse)),
                                                       value))


def _candidate_name(candidate) -> str:
    """A function a dispatched call may call, in words."""
    if isinstance(candidate, LocalFunction):
        return "the lambda" if isinstance(candidate.node, ast.Lambda) else f"the local function {candidate.node.name}"
    return getattr(candidate.obj, "__qualname__", None) or repr(candidate.obj)


_STRING_METHODS = ("format", "upper", "lower", "replace", "strip", "startswith", "endswith", "join", "split")


def _dataclasses():
    import dataclasses
    return dataclasses


def _known_text(fn, left, right):
    """`"layer_%d" % i` or `"W" + name` of strings and numbers known when transforming, as a Const, else None."""
    def plain(atom):
        if isinstance(atom, Const) and isinstance(atom.value, _PLAIN):
            return True
        return isinstance(atom, Pack) and atom.kind == "tuple" and all(plain(item) for item in atom.items)

    def value(atom):
        return atom.value if isinstance(atom, Const) else tuple(value(item) for item in atom.items)
    if not (isinstance(left, Const) and isinstance(left.value, str) and plain(right)):
        return None
    if fn is operator.mod or fn is operator.add and isinstance(right, Const) and isinstance(right.value, str):
        return Const(fn(left.value, value(right)))
    return None


def _describe(node) -> str:
    names = {ast.If: "an `if` statement", ast.For: "a `for` loop", ast.While: "a `while` loop",
             ast.Try: "`try`", ast.With: "`with`", ast.Global: "`global`", ast.Nonlocal: "`nonlocal`",
             ast.Yield: "`yield`", ast.YieldFrom: "`yield from`", ast.Await: "`await`",
             ast.ListComp: "a list comprehension", ast.Lambda: "a lambda", ast.FunctionDef: "a nested def",
             ast.Delete: "`del`", ast.Raise: "`raise`", ast.Assert: "`assert`", ast.Import: "`import`",
             ast.Starred: "a starred expression", ast.IfExp: "a conditional expression",
             ast.BoolOp: "`and` / `or`", ast.Dict: "a dict literal", ast.JoinedStr: "an f-string"}
    names.update({ast.SetComp: "a set comprehension", ast.NamedExpr: "`:=`", ast.ClassDef: "a class definition",
                  ast.AsyncFunctionDef: "an async function", ast.AsyncFor: "`async for`", ast.AsyncWith: "`async with`",
                  ast.Set: "a set", ast.Slice: "a slice"})
    if hasattr(ast, "Match"):
        names[ast.Match] = "`match`"
    if hasattr(ast, "TryStar"):
        names[ast.TryStar] = "`try`"
    return names.get(type(node), "this construct")


def _other_items(at, key) -> bool:
    """Whether the item read at `at` surely is not the one at `key` (a Const or Var): both keys known now and
    different (`y = ps["y"]`, then `ps["cov"]` replaced), an index from the end excepted (`xs[-1]`, `xs[2]`)."""
    if isinstance(at, Var) or not isinstance(key, Const) or not _hashable(at) or not _hashable(key.value):
        return False
    if any(isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k < 0 for k in (at, key.value)):
        return False
    return type(at) is type(key.value) and at != key.value

"""All built-in primitives and rules, combined from one table per area of NumPy.

`lookup(fn)` finds the primitive for a callable; `method(name)` the primitive
behind an array method (`x.sum()` is `np.sum(x)`); `namespace()` the names
generated code may use (NumPy as `np`, and every helper and rule function it
calls by name).
"""
import builtins
import types
from collections.abc import Mapping

import numpy as np

from . import (autograd_primitives, elementwise, fft, language, linalg, nondiff, recursion, reductions, runtime_rules,
               shape)
from .table import Primitive, Rule, RuleError, RuleTable, _module_functions, combine

TABLES = (elementwise.table, reductions.table, linalg.table, fft.table, shape.table, nondiff.table, language.table,
          runtime_rules.table)
PRIMITIVES, METHODS = combine(*TABLES)

# Parameters that are shapes, axes, orders or modes carry no derivative, even when their value comes off
# a tape that carries values that do (a reshape's shape, replayed in a loop's gradient code).
_INERT_PARAMETERS = {"shape", "newshape", "axis", "axes", "axis1", "axis2", "keepdims", "dtype", "order", "ddof",
                     "source", "destination", "indices_or_sections", "decimals", "mode", "kind", "side", "reps",
                     "repeats"}


def _mark_inert(primitives):
    for prim in primitives:
        extra = tuple(p for p in prim.params if p in _INERT_PARAMETERS and p not in prim.vjps
                      and p not in prim.inert)
        if extra:
            prim.inert = tuple(prim.inert) + extra


_mark_inert(PRIMITIVES.values())

__all__ = ["PRIMITIVES", "METHODS", "TABLES", "Primitive", "Rule", "RuleError", "RuleTable",
           "lookup", "load_optional", "method", "namespace", "lookup_name", "Names", "MISSING", "register_table",
           "register_primitive", "add_names"]


def lookup(fn):
    """The primitive for callable `fn`, or None.

    A bound method (`scipy.stats.norm.logpdf`, made afresh on each attribute
    access) is found by equality: same `__self__`, same `__func__`.
    """
    try:
        prim = PRIMITIVES.get(fn)
    except TypeError:  # unhashable callables are never primitives
        return None
    if prim is None and load_optional():
        return lookup(fn)
    if prim is None and not isinstance(fn, types.FunctionType):  # (the marks below are a function's own
        return None  # attributes; getattr on an object would run its class's __getattr__, which may answer any name)
    if prim is None and autograd_primitives.is_autograd_primitive(fn):  # @primitive with defvjp, for autograd
        prim = autograd_primitives.primitive_for(fn, add_names)
        if prim is not None:
            register_primitive(fn, prim)
    if prim is None and getattr(fn, "__tapegen_runtime__", None) is not None:  # a rule of a recursive function's,
        prim = recursion.rule_primitive(fn, add_names)  # called by gradient code differentiated again
        register_primitive(fn, prim)
    if prim is None and getattr(fn, "__tapegen_autograd__", None) is not None:  # a rule autograd differentiates
        prim = autograd_primitives.through_autograd(fn, add_names)
        register_primitive(fn, prim)
    return prim


# Rule tables for optional libraries: (module whose import triggers loading, tapegen module with the table).
# SciPy's ufuncs have no `__module__` to recognise them by, so a table loads at the first lookup that
# misses once the user's code has imported the library: `import tapegen` never imports SciPy.
OPTIONAL = (("scipy.special", "tapegen.rules.scipy_special"), ("scipy.stats", "tapegen.rules.scipy_stats"),
            ("scipy.linalg", "tapegen.rules.scipy_linalg"), ("scipy.integrate", "tapegen.rules.scipy_integrate"),
            ("scipy.signal", "tapegen.rules.scipy_signal"), ("scipy.spatial", "tapegen.rules.scipy_spatial"))
_LOADED: set = set()


def load_optional(everything: bool = False) -> bool:
    """Load the optional tables whose library is imported (`everything`: whichever can be); True if any."""
    import importlib
    import sys
    added = False
    for trigger, module in OPTIONAL:
        if module in _LOADED or not (everything or trigger in sys.modules):
            continue
        _LOADED.add(module)
        try:
            table = importlib.import_module(module).table
        except ImportError:  # the library is not installed
            continue
        global TABLES
        TABLES = TABLES + (table,)
        for fn, prim in table.primitives.items():
            PRIMITIVES.setdefault(fn, prim)  # a user's registered rule stays
        METHODS.update(table.methods)
        _forget_names()
        added = True
    return added


def method(name: str):
    """`(primitive, receiver parameter)` for array method `name`, or None."""
    entry = METHODS.get(name)
    return None if entry is None else (PRIMITIVES[entry[0]], entry[1])


def register_table(table: RuleTable):
    """Add a user's table (custom rules); its primitives replace built-in ones of the same callable."""
    PRIMITIVES.update(table.primitives)
    METHODS.update(table.methods)
    _forget_names()


def register_primitive(key, prim):
    """Make `key` (a callable) the primitive `prim`, replacing any built-in entry."""
    PRIMITIVES[key] = prim
    _forget_names()


def add_names(objects: dict) -> list:
    """Make `objects` callable by name from generated code; returns the names used (deduplicated)."""
    names = []
    for name, obj in objects.items():
        base, i = name, 1
        while _USER_NAMES.get(name, obj) is not obj or (name not in _USER_NAMES and
                                                        lookup_name(name) is not MISSING and
                                                        lookup_name(name) is not obj):
            name, i = f"{base}_{i}", i + 1
        _USER_NAMES[name] = obj
        names.append(name)
    _forget_names()
    return names


MISSING = object()  # what `lookup_name` answers for a name generated code cannot use
_NAMESPACE: dict = {}
_USER_NAMES: dict = {}
_RESOLVED: dict = {}  # name -> its object, or MISSING: `lookup_name`'s answers so far
_INDEX: dict = {}  # name -> the rules that may put it in the namespace (see _rule_index)
_FIXED: dict = {}  # see _fixed_names


def _forget_names():
    _NAMESPACE.clear()
    _RESOLVED.clear()
    _INDEX.clear()
    _FIXED.clear()


def namespace() -> dict:
    """Names generated code can refer to: `np` and whatever the rules use (every one of them; a transform
    asks `lookup_name` for the names it writes instead, which does not read every rule's source)."""
    if not _NAMESPACE:
        for module in {rule.fn.__code__.co_filename for rules in _rule_index().values() for rule in rules
                       if hasattr(rule.fn, "__code__")}:
            _module_functions(module)  # one parse per rules file, rather than one per rule
        fixed = _fixed_names()
        names = [*fixed["base"], *_rule_index(), *fixed["late"], *fixed["helpers"], *_USER_NAMES]
        found = {name: lookup_name(name) for name in dict.fromkeys(names)}
        _NAMESPACE.update({name: value for name, value in found.items() if value is not MISSING})
    return _NAMESPACE


class Names(Mapping):
    """`namespace()` with `extra` names on top, read one name at a time (`lookup_name`): what generated code
    is loaded with (codegen/load.py copies in the names the code reads)."""

    def __init__(self, extra=None):
        self.extra = extra or {}

    def __getitem__(self, name):
        if name in self.extra:
            return self.extra[name]
        value = lookup_name(name)
        if value is MISSING:
            raise KeyError(name)
        return value

    def __contains__(self, name) -> bool:
        return name in self.extra or lookup_name(name) is not MISSING

    def __iter__(self):
        return iter({**namespace(), **self.extra})

    def __len__(self) -> int:
        return len({**namespace(), **self.extra})


def lookup_name(name: str):
    """The object generated code means by `name` (as `namespace()[name]`), or MISSING.

    Exact without reading every rule: only the rules that mention `name` are looked at, and of those only
    the ones that could give it another object are parsed (to see whether they are inlined).
    """
    value = _RESOLVED.get(name, _UNRESOLVED)
    if value is _UNRESOLVED:
        if len(_RESOLVED) > 200_000:  # most names asked about are a program's own (g_t17): do not keep them all
            _RESOLVED.clear()
        value = _RESOLVED[name] = _resolve(name)
    return value


_UNRESOLVED = object()
_BUILTINS = vars(builtins)  # `name in _BUILTINS` is hasattr(builtins, name) without raising for the rest


def _resolve(name):
    """`namespace()`'s entry for `name`, decided in the order it was built: the fixed names, then what each
    rule uses (another object under a name already taken is an error), the late names replacing those, the
    helpers where nothing else took the name, and a user's names (`add_names`) replacing everything."""
    fixed = _FIXED or _fixed_names()
    value = fixed["base"].get(name, MISSING)
    if name not in _BUILTINS:
        for rule in (_INDEX or _rule_index()).get(name, ()):
            fn = rule.fn
            mine = [fn] if name == rule.name else []
            scope = getattr(fn, "__globals__", None)
            if scope is not None and name in scope and name not in rule.reads:
                mine.append(scope[name])
            if not mine or value is not MISSING and all(m is value for m in mine):
                continue  # inlined or not, this rule cannot take the name or agrees
            used = _rule_globals(rule).get(name, MISSING)
            if used is MISSING:
                continue
            if value is MISSING:
                value = used
            elif used is not value:
                raise RuleError(f"{rule.where}: {rule.name} uses {name!r}, which another rule "
                                f"uses for a different object")
    value = fixed["late"].get(name, value)
    if value is MISSING:
        value = fixed["helpers"].get(name, MISSING)
    return _USER_NAMES.get(name, value)


def _fixed_names() -> dict:
    """The names that are not the rules': "base" (set first), "late" (set after the rules' names) and
    "helpers" (primitives generated code calls by their own name, runtime_rules' and the SciPy tables')."""
    if not _FIXED:
        from .. import runtime
        helpers: dict = {}
        optional = [prim for t in TABLES if t.name.startswith("scipy.") for prim in t.primitives.values()]
        own = [prim for prim in PRIMITIVES.values()
               if (getattr(prim.fn, "__module__", None) or "").startswith("tapegen.")]
        for prim in own + optional:  # helpers called by their name (same_shape_as_transformed, _gap_inverse)
            if prim.form == "call" and prim.spelling.isidentifier() and callable(prim.fn):
                helpers.setdefault(prim.spelling, prim.fn)
        _FIXED.update(
            base={"np": np, **{name: getattr(runtime, name) for name in runtime.__all__},
                  "saved_region": language.saved_region, "add_cotangents": runtime.add_cotangents,
                  "item_cotangent": language.item_cotangent,
                  **{fn.__name__: fn for fn in (language.concat, language.plus, language.repeat_items,
                                                shape.attribute_or_none,
                                                language.raise_error, language.check_assertion,
                                                language.number_item, language.same_shape_as_transformed,
                                                language.same_value_as_transformed,
                                                language.same_noneness_as_transformed,
                                                language.identity_check,
                                                language.in_place_result, language.item_or,
                                                language.sorted_order, language.flatten_tree,
                                                language.unflatten_tree,
                                                language.flat_cotangent, language.iterated)}},
            late={fn.__name__: fn for fn in (runtime_rules.tape_pop, runtime_rules.copy_region,
                                             runtime_rules.zero_tangent, runtime_rules.add_tangents,
                                             runtime_rules.is_not_none, runtime_rules.unconform)},
            helpers=helpers)
    return _FIXED


def _rule_index() -> dict:
    """{name: rules, in table order} for each name a rule could put in the namespace: its own name (called by
    it), and every global, attribute or free name its code mentions (a superset of what an inlined rule reads)."""
    if not _INDEX:
        for prim in PRIMITIVES.values():
            for rule in (*prim.vjps.values(), *prim.jvps.values()):
                code = getattr(rule.fn, "__code__", None)
                for name in (rule.name, *((*code.co_names, *code.co_freevars) if code is not None else ())):
                    rules = _INDEX.setdefault(name, [])
                    if not rules or rules[-1] is not rule:
                        rules.append(rule)
    return _INDEX


def _rule_globals(rule) -> dict:
    """Module-level names a rule needs in generated code: its free names, or itself if called by name."""
    if rule.inline is None:
        return {rule.name: rule.fn}
    import ast
    found = {}
    for node in ast.walk(rule.inline):
        if isinstance(node, ast.Name) and node.id not in rule.reads and not hasattr(builtins, node.id):
            found[node.id] = rule.fn.__globals__[node.id]
    return found

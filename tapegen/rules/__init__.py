"""All built-in primitives and rules, combined from one table per area of NumPy.

`lookup(fn)` finds the primitive for a callable; `method(name)` the primitive
behind an array method (`x.sum()` is `np.sum(x)`); `namespace()` the names
generated code may use (NumPy as `np`, and every helper and rule function it
calls by name).
"""
import builtins

import numpy as np

from . import autograd_primitives, elementwise, fft, language, linalg, nondiff, reductions, runtime_rules, shape
from .table import Primitive, Rule, RuleError, RuleTable, combine

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
           "lookup", "load_optional", "method", "namespace", "register_table", "register_primitive", "add_names"]


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
    if prim is None and autograd_primitives.is_autograd_primitive(fn):  # @primitive with defvjp, for autograd
        prim = autograd_primitives.primitive_for(fn, add_names)
        if prim is not None:
            register_primitive(fn, prim)
    return prim


# Rule tables for optional libraries: (module whose import triggers loading, tapegen module with the table).
# SciPy's ufuncs have no `__module__` to recognise them by, so a table loads at the first lookup that
# misses once the user's code has imported the library: `import tapegen` never imports SciPy.
OPTIONAL = (("scipy.special", "tapegen.rules.scipy_special"), ("scipy.stats", "tapegen.rules.scipy_stats"),
            ("scipy.linalg", "tapegen.rules.scipy_linalg"), ("scipy.integrate", "tapegen.rules.scipy_integrate"),
            ("scipy.signal", "tapegen.rules.scipy_signal"))
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
        _NAMESPACE.clear()
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
    _NAMESPACE.clear()


def register_primitive(key, prim):
    """Make `key` (a callable) the primitive `prim`, replacing any built-in entry."""
    PRIMITIVES[key] = prim


def add_names(objects: dict) -> list:
    """Make `objects` callable by name from generated code; returns the names used (deduplicated)."""
    names = []
    for name, obj in objects.items():
        base, i = name, 1
        while _USER_NAMES.get(name, obj) is not obj or (name in namespace() and namespace()[name] is not obj
                                                         and name not in _USER_NAMES):
            name, i = f"{base}_{i}", i + 1
        _USER_NAMES[name] = obj
        names.append(name)
    _NAMESPACE.clear()
    return names


_NAMESPACE: dict = {}
_USER_NAMES: dict = {}


def namespace() -> dict:
    """Names generated code can refer to: `np` and whatever the rules use."""
    if not _NAMESPACE:
        from .. import runtime
        names = {"np": np, **{name: getattr(runtime, name) for name in runtime.__all__},
                 "saved_region": language.saved_region, "add_cotangents": runtime.add_cotangents,
                 "item_cotangent": language.item_cotangent,
                 **{fn.__name__: fn for fn in (language.concat, language.plus, language.repeat_items,
                                               shape.attribute_or_none,
                                               language.raise_error, language.check_assertion, language.number_item,
                                               language.identity_check,
                                               language.same_shape_as_transformed,
                                               language.in_place_result, language.item_or, language.sorted_order,
                                               language.flatten_tree, language.unflatten_tree, language.unflattener,
                                               language.flat_cotangent,
                                               language.iterated)}}
        for prim in PRIMITIVES.values():
            for rule in list(prim.vjps.values()) + list(prim.jvps.values()):
                for name, value in _rule_globals(rule).items():
                    if names.setdefault(name, value) is not value:
                        raise RuleError(f"{rule.where}: {rule.name} uses {name!r}, which another rule "
                                        f"uses for a different object")
        names.update({fn.__name__: fn for fn in (runtime_rules.tape_pop, runtime_rules.copy_region,
                                                 runtime_rules.zero_tangent, runtime_rules.add_tangents,
                                                 runtime_rules.is_not_none, runtime_rules.unconform)})
        optional = [prim for t in TABLES if t.name.startswith("scipy.") for prim in t.primitives.values()]
        own = [prim for prim in PRIMITIVES.values() if getattr(prim.fn, "__module__", "").startswith("tapegen.")]
        for prim in own + optional:  # helpers called by their name
            if prim.form == "call" and prim.spelling.isidentifier() and callable(prim.fn):
                names.setdefault(prim.spelling, prim.fn)
        names.update(_USER_NAMES)
        _NAMESPACE.update(names)
    return _NAMESPACE


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

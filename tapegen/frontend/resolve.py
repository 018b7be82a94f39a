"""Resolving the names a user function reads to the objects they mean.

`np.sin` inside a function is `numpy.sin` if the function's globals (or its
closure, or builtins) say so; tapegen resolves callees once, when it
transforms the function. Data (arrays, numbers) read from the enclosing scope
is *not* frozen: generated code reads it live, through `LiveNamespace`.
"""
from __future__ import annotations

import ast
import builtins
import sys
import types

from .source import walk

MISSING = object()


class Scope:
    """The enclosing scope of a user function: closure cells, globals, builtins."""

    def __init__(self, fn, local_names):
        self.fn = fn
        self.locals = frozenset(local_names)
        code = fn.__code__
        cells = fn.__closure__ or ()
        self.cells = dict(zip(code.co_freevars, cells))
        self.globals = fn.__globals__
        self.record = None  # a list: (holder, name, object) for each function, class or object read from here

    def lookup(self, name: str):
        """The object `name` means in the enclosing scope, or MISSING (also for locals)."""
        return native(self._lookup(name))

    def _lookup(self, name: str):
        if name in self.locals:
            return MISSING
        cell = self.cells.get(name)
        if cell is not None:
            try:
                return self._recorded(cell, None, cell.cell_contents)
            except ValueError:  # an empty cell: the name is not bound yet
                return MISSING
        if name in self.globals:
            return self._recorded(self.globals, name, self.globals[name])
        if isinstance(self.globals, LiveNamespace):  # generated code (a gradient being inlined)
            try:
                return self.globals[name]
            except (KeyError, AttributeError):
                return MISSING
        return getattr(builtins, name, MISSING)

    def _recorded(self, holder, name, value):
        """`value`, noted in `record` where the code the transform makes may depend on which object it is: a
        function or class (inlined, or a rule chosen by it), or an object whose methods are inlined; not a
        module, nor a number or array (read when the code runs)."""
        if self.record is not None and not isinstance(value, types.ModuleType) and not isinstance(
                self.globals, LiveNamespace) and (callable(value) or _users_object(value)):
            self.record.append(("cell", holder, None, value) if name is None else ("item", holder, name, value))
        return value

    def static(self, node: ast.expr):
        """The object an expression names, if it is a name or a chain of module attributes."""
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        if isinstance(node, ast.Attribute):
            base = self.static(node.value)
            if isinstance(base, (types.ModuleType, type)) or _static_instance(base):
                found = getattr(base, node.attr, MISSING)
                if found is MISSING:  # autograd.numpy.linalg's own helpers (T, _dot), which NumPy's lacks
                    found = getattr(self._written(node.value), node.attr, MISSING)
                return native(found)
        return MISSING

    def _written(self, node):
        """The module an attribute chain names as written, before `native` (autograd's, not NumPy's)."""
        if isinstance(node, ast.Name):
            return self._lookup(node.id)
        if isinstance(node, ast.Attribute):
            base = self._written(node.value)
            return getattr(base, node.attr, MISSING) if isinstance(base, types.ModuleType) else MISSING
        return MISSING


def _users_object(value) -> bool:
    """An object whose class the transform may follow (its methods inlined): not a number, string, container
    or array (read when the code runs), whatever else it is (a library's objects are only compared)."""
    return type(value).__module__.partition(".")[0] not in ("builtins", "numpy")


def library_object(value) -> bool:
    """Of tapegen, NumPy, SciPy or the standard library (a module, or a function or class of one): its
    names and constants are not the user's to change between calls."""
    module = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None) or ""
    top = module.split(".")[0]
    return top in ("tapegen", "numpy", "scipy", "builtins") or top in sys.stdlib_module_names


def code_of(fn) -> tuple:
    """What a function's inlined code depends on of the function object itself: its code and defaults."""
    return fn.__code__, fn.__defaults__, fn.__kwdefaults__


def marker(obj, name):
    """The attribute `name` tapegen sets on its own functions (`__tapegen_compose__` on tg.jvp), or None: read
    from a function's own dict, never through getattr, which runs an object's __getattr__ (that may answer
    any name, or raise something other than AttributeError)."""
    return vars(obj).get(name) if isinstance(obj, types.FunctionType) else None


def binding_changed(bindings) -> bool:
    """Whether a name, cell, item or attribute of `bindings` (Program.bindings: (kind, holder, key, object))
    now holds another object (or none), a dict's keys (kind "keys", holder the dict) are others, a list's
    length (kind "len") is another, or a function's code or defaults (kind "code") are others."""
    for kind, holder, key, value in bindings:
        if kind == "keys":  # a dict's keys
            if tuple(holder) != value:
                return True
            continue
        if kind == "len":  # a list whose items the code was made for (a loop over it unrolled)
            if len(holder) != value:
                return True
            continue
        if kind == "absent":  # an object's own attributes (its __dict__) do not shadow the method inlined
            if key in holder:
                return True
            continue
        if kind == "code":  # a function inlined: its code and defaults as they were (IPython's autoreload
            code, defaults, kwdefaults = value  # replaces them in place; what code_of gives, unrolled: per call)
            try:  # (the differentiated function itself is held through a weak proxy)
                if holder.__code__ is not code or holder.__defaults__ is not defaults \
                        or holder.__kwdefaults__ is not kwdefaults:
                    return True
            except ReferenceError:
                return True
            continue

        try:
            now = holder.cell_contents if kind == "cell" else getattr(holder, key) if kind == "attr" else holder[key]
        except (KeyError, IndexError, ValueError, AttributeError, TypeError, ReferenceError):
            return True
        if now is not value:
            return True
    return False


_WRAPPERS = ("autograd.numpy", "autograd.scipy")
_BUILTINS = ("tuple", "list", "dict", "isinstance", "type")
# autograd modules whose functions mean something else than SciPy's of the same name: autograd's
# `convolve(A, B, axes, dot_axes, mode)` is not `scipy.signal.convolve`. Kept as autograd's (its primitives).
_OWN_MEANING = ("autograd.scipy.signal",)


def native(obj):
    """NumPy's or SciPy's own object for autograd's wrapper of it, so code written for autograd
    (`import autograd.numpy as np`, `from autograd.scipy.special import logsumexp`) is followed as
    plain NumPy: the module `autograd.numpy` is `numpy`, `np.tanh` is `numpy.tanh`."""
    if isinstance(obj, types.ModuleType):
        name = obj.__name__
        mapped = name.startswith(_WRAPPERS) and name not in _OWN_MEANING
        return _native_named(name[len("autograd."):], obj) if mapped else obj
    module = getattr(obj, "__module__", None)
    if module == "autograd.builtins" and getattr(obj, "__name__", None) in _BUILTINS:
        return getattr(builtins, obj.__name__)  # autograd's tuple, list, dict, isinstance, type: Python's own
    if module == "autograd.misc.flatten" and getattr(obj, "__name__", "") == "flatten":
        from ..rules.language import autograd_flatten
        return autograd_flatten
    if module == "autograd.tracer" and getattr(obj, "_is_autograd_primitive", False) and hasattr(obj, "fun"):
        # a NumPy or SciPy function autograd wrapped is that function; any other function made an autograd
        # primitive (the user's @primitive, autograd's own convolve) keeps its VJPs (rules/autograd_primitives.py)
        return obj.fun if _numpy_or_scipy(obj.fun) else obj
    if not (isinstance(module, str) and module.startswith(_WRAPPERS)):
        return obj
    name = getattr(obj, "__name__", "")  # autograd's own Python version of a NumPy function (np.array)
    if name == "<lambda>":  # `concatenate = lambda arr_list, axis=0: ...`: the name it is bound to
        import sys
        name = next((k for k, v in vars(sys.modules.get(module, builtins)).items() if v is obj), name)
    package = module[len("autograd."):].split(".")
    for depth in range(len(package), 0, -1):
        found = _native_named(".".join(package[:depth]) + "." + name, None)
        if found is not None and callable(found):
            return found
    return obj


def _numpy_or_scipy(fn) -> bool:
    module = getattr(fn, "__module__", None) or getattr(type(fn), "__module__", "")
    return isinstance(fn, types.BuiltinFunctionType) or module.split(".")[0] in ("numpy", "scipy")


def _native_named(dotted, default):
    import importlib
    try:
        return importlib.import_module(dotted)
    except ImportError:
        head, _, tail = dotted.rpartition(".")
        try:
            return getattr(importlib.import_module(head), tail, default) if head else default
        except ImportError:
            return default


def _static_instance(obj) -> bool:
    """A library object whose methods are functions to resolve now: a SciPy distribution
    (`scipy.stats.norm` is an instance; `scipy.stats.norm.logpdf` a bound method of it)."""
    return type(obj).__module__.startswith("scipy.stats.")


def freezes(obj) -> bool:
    """A SciPy distribution whose call makes a frozen one (`scipy.stats.norm(mu, sigma)`)."""
    return _static_instance(obj) and callable(obj)  # rv_continuous, multi_rv_generic, ...: called, they freeze


# Builtins generated code itself calls (guards, loops, conversions).
GENERATED_BUILTINS = ("type", "float", "len", "range", "reversed", "int", "bool", "slice", "tuple", "list",
                      "isinstance", "min", "max")


class LiveNamespace(dict):
    """Globals of generated code: tapegen's names first, then the user's scope, read at call time.

    A dict subclass, so a name tapegen does not define (a global array the user
    reassigns between calls, a closure variable) is looked up afresh each call.
    """

    def __init__(self, names, fn, sources=()):
        lazy = not isinstance(names, dict)  # rules.Names: tapegen's names, looked up as they are read
        super().__init__(() if lazy else names)
        self._names = names if lazy else None
        self._cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        self._globals = fn.__globals__
        self._sources = {name: original if source_fn is None else LiveNamespace({}, source_fn, ()).lookup_as(original)
                         for name, (source_fn, original) in sources}  # (None, getter): an object read afresh
        for name in GENERATED_BUILTINS:  # found at once, unless the user's scope has its own
            if name not in self and not (lazy and name in names) and name not in self._cells \
                    and name not in self._globals:
                self[name] = getattr(builtins, name)

    def lookup_as(self, original):
        return lambda: self.__missing__(original)

    def __missing__(self, name):
        if self._names is not None and name in self._names:
            value = self[name] = self._names[name]
            return value
        source = self._sources.get(name)
        if source is not None:
            return source()
        cell = self._cells.get(name)
        if cell is not None:
            return cell.cell_contents
        if name in self._globals:
            return self._globals[name]
        if isinstance(self._globals, LiveNamespace):  # inlined generated code looks further itself
            return self._globals[name]
        return getattr(builtins, name)  # AttributeError becomes a NameError in generated code

    def __reduce__(self):
        return (dict, (dict(self),))


def local_names(node) -> set:
    """Every name the function binds: parameters and assignment targets (Python's rule for locals)."""
    names = set()
    args = node.args
    for arg in args.posonlyargs + args.args + args.kwonlyargs:
        names.add(arg.arg)
    for extra in (args.vararg, args.kwarg):
        if extra is not None:
            names.add(extra.arg)
    body = node.body if isinstance(node.body, list) else [node.body]
    comprehension_targets = {id(name) for sub in walk(node) if isinstance(sub, ast.comprehension)
                             for name in walk(sub.target)}  # local to the comprehension, not the function
    for stmt in body:
        for sub in walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)) \
                    and id(sub) not in comprehension_targets:
                names.add(sub.id)
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(sub.name)
    declared = {name for stmt in body for sub in walk(stmt) if isinstance(sub, ast.Global) for name in sub.names}
    return names - declared  # `global calls`: the module's name, not a local


def all_identifiers(node) -> set:
    """Every identifier appearing in the function, so generated names never collide with one."""
    found = set()
    for sub in walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.arg):
            found.add(sub.arg)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
    return found

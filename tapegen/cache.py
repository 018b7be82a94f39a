"""An opt-in cache of generated code on disk, so that a second process skips the transform.

Off unless `TAPEGEN_CACHE_DIR` names a directory or `tapegen.cache.enable()` is called:

    import tapegen as tg
    tg.cache.enable()                 # ~/.cache/tapegen (or $XDG_CACHE_HOME/tapegen)
    tg.cache.enable("/tmp/my-cache")  # or a directory of your own; tg.cache.disable() turns it off

An entry is the text of one generated module (the general code of a kind and `wrt`, or the code
specialized to one argument signature) and where the names it calls come from. Its name is a hash
of everything the text depends on; if any of it differs, the entry is simply never found:

- tapegen's version, the size and time of each of its source files, Python's and NumPy's versions;
- the rule table: optional tables loaded (SciPy), and every rule and name a user registered;
- the function: module, qualified name, first line, and the text of its whole source file;
- every global and closure value its code names, described by value (numbers, strings, tuples),
  by module and name (functions, classes, modules, NumPy ufuncs) or by shape and dtype (arrays),
  and the functions it calls of the user's own the same way, recursively;
- what is generated: kind, `wrt`, outputs, and for specialized code the argument signature.

A function whose key cannot be written down that way (a global holding an object of a class
tapegen cannot describe, say) is not cached. Entries are written to a temporary file and renamed
into place, so a reader never sees half an entry; an entry that cannot be read or does not parse
is ignored (and rewritten).
"""
from __future__ import annotations

import importlib
import linecache
import marshal
import os
import sys
import types
import weakref

import numpy as np

from . import rules
from ._version import __version__
from .frontend.resolve import code_of, library_object

FORMAT = 2  # 2: entries keep the module names their code was made for (bindings)
_MAX_ITEMS = 256  # a container global described item by item up to this size; larger ones are not cached
_MAX_DEPTH = 6
_state = {"directory": None, "enabled": False, "stale": set()}  # stale: entries read, then found out of date


def enable(directory: str | None = None) -> str:
    """Cache generated code in `directory` (default: `$TAPEGEN_CACHE_DIR`, else ~/.cache/tapegen).

    Returns the directory used.

    Example:
        >>> import tapegen as tg
        >>> tg.cache.enable("/tmp/tapegen-cache")
        '/tmp/tapegen-cache'
    """
    default = os.environ.get("TAPEGEN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "tapegen")
    _state["directory"] = os.path.abspath(os.fspath(directory)) if directory is not None else default
    _state["enabled"] = True
    return _state["directory"]


def disable() -> None:
    """Stop reading and writing the cache (also when `TAPEGEN_CACHE_DIR` is set)."""
    _state["directory"], _state["enabled"] = None, False


def location() -> str | None:
    """The cache directory in use, or None if caching is off."""
    if _state["enabled"]:
        return _state["directory"]
    return os.environ.get("TAPEGEN_CACHE_DIR") or None


def forget_read() -> None:
    """What this process read from the cache so far is out of date (code made for a module's value that has
    changed since): read none of it again; the code made anew is written over it."""
    _state["stale"].update(_state.setdefault("read", set()))


def clear() -> int:
    """Delete every entry in the cache directory; returns how many were deleted."""
    directory = location()
    removed = 0
    for name in os.listdir(directory) if directory and os.path.isdir(directory) else ():
        if name.endswith(".tapegen"):
            try:
                os.remove(os.path.join(directory, name))
                removed += 1
            except OSError:
                pass
    return removed


# --- keys ---------------------------------------------------------------------------------------


class _Unkeyable(Exception):
    """A value the key cannot describe: the function is not cached."""


def key(fn, what: tuple, receiver=None, statics=()) -> str | None:
    """The entry name for `what` generated from `fn`, or None if caching is off or `fn` cannot be keyed.

    `statics`: the (parameter, function) pairs the variant was lowered for (pipeline.lowered).
    """
    if location() is None:
        return None
    try:
        material = (FORMAT, __version__, _tapegen_files(), sys.version_info[:2], np.__version__, _rules_state(),
                    _function(fn, set(), 0), _describe(receiver, set(), 0), what,
                    tuple((position, _describe(value, set(), 0)) for position, value in statics))
    except _Unkeyable:
        return None
    return _sha256(repr(material).encode())


def _sha256(data: bytes) -> str:
    import hashlib  # here, not at import: only a process with the cache on needs it
    return hashlib.sha256(data).hexdigest()


_TAPEGEN_FILES: list = []


def _tapegen_files() -> tuple:
    """(path, size, modification time) of every file of tapegen's own source: an edit changes every key."""
    if not _TAPEGEN_FILES:
        root = os.path.dirname(os.path.abspath(__file__))
        found = []
        for directory, subdirectories, files in os.walk(root):
            subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
            for name in sorted(f for f in files if f.endswith(".py")):
                stat = os.stat(os.path.join(directory, name))
                found.append((os.path.relpath(os.path.join(directory, name), root), stat.st_size, stat.st_mtime_ns))
        _TAPEGEN_FILES.append(tuple(found))
    return _TAPEGEN_FILES[0]


def _rules_state() -> tuple:
    """The rule table's additions beyond the built-in tables: optional tables loaded, users' rules and names."""
    builtin = {}
    for table in rules.TABLES:
        builtin.update(table.primitives)
    added = sorted(((prim.name, _describe(fn, set(), 0), _describe(prim.fn, set(), 0))
                    for fn, prim in rules.PRIMITIVES.items() if builtin.get(fn) is not prim), key=repr)
    names = sorted(((name, _describe(value, set(), 0)) for name, value in rules._USER_NAMES.items()), key=repr)
    return tuple(sorted(rules._LOADED)), tuple(added), tuple(names)


def _function(fn, seen: set, depth: int) -> tuple:
    """A function's module, name, source file text and the values of the names its code reads."""
    if depth > _MAX_DEPTH:
        raise _Unkeyable("functions nested too deep")
    code = fn.__code__
    if id(code) in seen:
        return ("seen", fn.__module__, fn.__qualname__)
    seen.add(id(code))
    text = _source_digest(code.co_filename, fn.__globals__)
    scope = fn.__globals__
    values = tuple((name, _describe(scope[name], seen, depth + 1)) for name in sorted(_names(code)) if name in scope)
    cells = tuple((name, _cell(cell, seen, depth)) for name, cell in zip(code.co_freevars, fn.__closure__ or ()))
    defaults = _describe((fn.__defaults__, tuple(sorted((fn.__kwdefaults__ or {}).items()))), seen, depth + 1)
    return (fn.__module__, fn.__qualname__, code.co_filename, code.co_firstlineno, _code(code), text, values, cells,
            defaults)


def _code(code) -> tuple:
    """The code object itself (two lambdas on one line share everything else)."""
    consts = tuple(_code(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c)) for c in code.co_consts)
    return _sha256(code.co_code), code.co_names, code.co_varnames, consts


def _source_digest(filename, module_globals=None) -> str:
    """A hash of the source file as tapegen reads it (through linecache: files and notebook cells alike)."""
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, module_globals)
    if not lines:
        raise _Unkeyable(f"no source for {filename}")
    return _sha256("".join(lines).encode())


def _names(code) -> set:
    """Every global or attribute name a code object and the code nested in it read."""
    from .codegen.load import global_names
    return global_names(code)


def _cell(cell, seen, depth):
    try:
        value = cell.cell_contents
    except ValueError:
        return ("empty",)
    return _describe(value, seen, depth + 1)


_PLAIN = (type(None), bool, int, float, complex, str, bytes)


def _describe(value, seen: set, depth: int):
    """A description of `value` that two processes agree on exactly when generated code would."""
    if isinstance(value, _PLAIN) or type(value) in _PLAIN:
        return ("value", type(value).__name__, repr(value))
    if isinstance(value, types.ModuleType):  # a user's module: its functions may be inlined, so its text counts
        return ("module", value.__name__, None if _library(value) else _module_digest(value))
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str)
    if isinstance(value, (np.generic, np.dtype)):
        return ("numpy", type(value).__name__, repr(value))
    if depth > _MAX_DEPTH:
        raise _Unkeyable("nested too deep")
    if type(value) in (tuple, list, frozenset, set):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        if len(items) > _MAX_ITEMS:
            raise _Unkeyable("container too large")
        return (type(value).__name__, tuple(_describe(item, seen, depth + 1) for item in items))
    if type(value) is dict:
        if len(value) > _MAX_ITEMS:
            raise _Unkeyable("container too large")
        return ("dict", tuple((repr(k), _describe(v, seen, depth + 1)) for k, v in value.items()))
    if isinstance(value, types.FunctionType) and not _library(value):
        return ("function", _function(value, seen, depth + 1))
    if isinstance(value, types.MethodType):
        return ("method", _describe(value.__self__, seen, depth + 1), _describe(value.__func__, seen, depth + 1))
    if isinstance(value, type) and not _library(value):  # methods may be inlined from any class of its MRO
        return ("class", _reference(value), tuple(_module_digest(sys.modules.get(c.__module__))
                                                  for c in value.__mro__ if not _library(c)))
    wrapped = getattr(value, "__wrapped__", None)  # @tg.differentiate, tg.grad(g), custom rules: g is inlined
    if isinstance(wrapped, types.FunctionType) and not _library(wrapped):
        return ("wrapping", type(value).__qualname__, _function(wrapped, seen, depth + 1))
    return ("named", type(value).__qualname__, _reference(value))


# Of tapegen, NumPy, SciPy or the standard library: their versions are in the key, their source is not read
_library = library_object


def _module_digest(module):
    filename = getattr(module, "__file__", None)
    if not filename:
        raise _Unkeyable(f"no source file for module {module!r}")
    return _source_digest(filename, vars(module))


def _reference(value) -> tuple:
    """(module, qualified name) by which `value` can be imported again, checked; _Unkeyable if none."""
    if isinstance(value, types.ModuleType):
        return (value.__name__, "")
    candidates = []
    module, name = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(name, str):
        candidates.append((module, name))
    if isinstance(value, np.ufunc):  # NumPy's ufuncs have no __module__; SciPy's live in scipy.special
        candidates += [("numpy", value.__name__), ("scipy.special", value.__name__)]
    proxy = isinstance(value, weakref.ProxyTypes)  # (the function a Program was made for, held weakly: equal
    for candidate in candidates:                   # to it, a function equal only to itself)
        if "<locals>" not in candidate[1] and (_resolve(candidate) is value or proxy and _resolve(candidate) == value):
            return candidate
    raise _Unkeyable(f"cannot name {value!r}")


def _literal(value) -> bool:
    return type(value) in (int, float, complex, bool, str, type(None))


def _resolve(reference):
    module, name = reference
    try:
        value = sys.modules.get(module) or importlib.import_module(module)
        for part in name.split(".") if name else ():
            value = getattr(value, part)
    except Exception:  # noqa: BLE001 (any failure means: not found)
        return _MISSING
    return value


_MISSING = object()


# --- entries ------------------------------------------------------------------------------------


def names_used(text: str, namespace: dict, filename: str) -> dict | None:
    """{name: reference} for the names of `namespace` that `text`'s code reads, or None if one has no reference."""
    code = compile(text, filename, "exec")
    used = {}
    for name in _names(code):
        if name in namespace:
            try:
                used[name] = _reference(namespace[name])
            except _Unkeyable:
                return None
    return used


def bindings_described(bindings) -> list | None:
    """Program.bindings as (module, name, reference) for each global name of a module the code was made for
    (a helper inlined, a class whose methods are), and ("attr", where, name, what) for an attribute of a
    module or class (a method inlined, a number read); None where one is anything else (an object's
    attribute, a closure cell, a list's item): such code is not kept on disk."""
    described = []
    for kind, holder, key, value in bindings:
        if kind == "code":  # a function's code and defaults: in the key; checked in the process that loads it
            try:
                described.append((kind, _reference(holder)))
            except _Unkeyable:
                pass
            continue
        if kind == "attr" and isinstance(holder, (type, types.ModuleType)):
            try:  # a method of a class, a number of a module or class: (kind, where, name, what)
                what = ("value", value) if _literal(value) else _reference(value)
                described.append((kind, _reference(holder), key, what))
            except _Unkeyable:
                return None
            continue
        module = holder.get("__name__") if kind == "item" and isinstance(holder, dict) else None
        if not isinstance(module, str) or getattr(sys.modules.get(module), "__dict__", None) is not holder:
            return None
        try:
            described.append((module, key, _reference(value)))
        except _Unkeyable:
            return None
    return described


def bindings_resolved(described) -> tuple | None:
    """The Program.bindings `bindings_described` described, as they are in this process, or None if a name
    now holds another object (the entry is out of date)."""
    bindings = []
    for entry in described:
        if len(entry) == 2:  # a function inlined: as it is now (its code and defaults are in the key)
            function = _resolve(tuple(entry[1]))
            if function is _MISSING:
                return None
            bindings.append(("code", function, None, code_of(function)))
            continue
        if len(entry) == 4:  # an attribute of a module or class: a method, a number
            kind, where, key, what = entry
            holder = _resolve(tuple(where))
            if what[0] == "value":  # a number: the object the module or class holds now, if it is that number
                value = getattr(holder, key, _MISSING) if holder is not _MISSING else _MISSING
                if type(value) is not type(what[1]) or value != what[1]:
                    return None
            else:
                value = _resolve(tuple(what))
            if holder is _MISSING or value is _MISSING:
                return None
            bindings.append((kind, holder, key, value))
            continue
        module, key, reference = entry
        holder = getattr(sys.modules.get(module), "__dict__", None)
        value = _resolve(tuple(reference))
        if holder is None or value is _MISSING or holder.get(key, _MISSING) is not value:
            return None
        bindings.append(("item", holder, key, value))
    return tuple(bindings)


def resolve_names(used: dict) -> dict | None:
    """The objects `names_used` referred to, or None if one is gone."""
    names = {}
    for name, reference in used.items():
        if not (isinstance(reference, tuple) and len(reference) == 2 and all(isinstance(r, str) for r in reference)):
            return None
        value = _resolve(reference)
        if value is _MISSING:
            return None
        names[name] = value
    return names


def read(name: str, fields: dict) -> dict | None:
    """The entry called `name`, or None if there is none, it cannot be read, it lacks one of `fields`
    (name -> type), or this process found the code it holds out of date (`forget_read`, until written again)."""
    directory = location()
    if directory is None or name in _state["stale"]:
        return None
    try:
        with open(os.path.join(directory, name + ".tapegen"), "rb") as handle:
            entry = marshal.loads(handle.read())
    except Exception:  # noqa: BLE001 (missing, unreadable, truncated or not ours: not an entry)
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != name \
            or not all(isinstance(entry.get(field), kind) for field, kind in fields.items()):
        return None
    _state.setdefault("read", set()).add(name)
    return entry


def write(name: str, entry: dict) -> None:
    """Store `entry` (str, number, bool, tuple, list and dict values) as `name`, atomically; errors are ignored."""
    directory = location()
    if directory is None:
        return
    _state["stale"].discard(name)  # (made anew: current again)
    _state.setdefault("read", set()).add(name)  # (what this process holds in memory: forget_read marks it)
    data = marshal.dumps({**entry, "format": FORMAT, "key": name})
    try:
        os.makedirs(directory, exist_ok=True)
        import tempfile
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".writing-", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, os.path.join(directory, name + ".tapegen"))
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        pass  # a read-only or full disk: the cache is an optimization, never an error

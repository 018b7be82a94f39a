"""Compiling generated source with `exec`, and making it visible to tools.

The source is registered in `linecache` under a deterministic pseudo-filename,
so tracebacks, `inspect.getsource` and pdb show the generated code without
any file on disk.
"""
from __future__ import annotations

import linecache
import weakref

from ..frontend.resolve import LiveNamespace


def load(text: str, filename: str, names: dict, fn, sources=()) -> dict:
    """Execute generated module `text`; return the namespace its functions live in.

    `names` are tapegen's own (NumPy as `np`, runtime helpers): a dict, or `rules.Names`; any other name
    the code reads comes from `fn`'s closure and globals at call time.
    """
    filename = _unique(filename, text)
    code = compile(text, filename, "exec")
    namespace = LiveNamespace(names, fn, sources)
    if not isinstance(names, dict):  # rules.Names: the names the code reads, in at once (as a dict's would be)
        for name in global_names(code):
            if name not in namespace and name in names:
                namespace[name] = names[name]
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(code, namespace)
    for value in list(namespace.values()):
        if getattr(value, "__code__", None) is not None and value.__code__.co_filename == filename:
            weakref.finalize(value, _forget, filename)  # no linecache entry outlives its code
            break
    return namespace


def global_names(code) -> set:
    """Every name `code` and the functions it defines read or write (globals and attributes alike)."""
    found, codes = set(), [code]
    while codes:
        code = codes.pop()
        found.update(code.co_names)
        codes.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return found


def _unique(filename: str, text: str) -> str:
    """Two different functions with the same generated name (lambdas on one line, a closure made afresh
    on each call) get distinct files; numbering goes on from the last one given, not from 2 each time
    (thousands of closures of one line made the search quadratic)."""
    lines = text.splitlines(True)
    entry = linecache.cache.get(filename)
    if entry is None or entry[2] == lines:
        return filename
    base, i = filename, _LAST.get(filename, 1)
    while True:
        i += 1
        candidate = f"{base[:-1]} #{i}>"
        entry = linecache.cache.get(candidate)
        if entry is None or entry[2] == lines:
            _LAST[base] = i
            return candidate


_LAST: dict = {}  # generated file name -> the last number given to another function of that name


def _forget(filename: str) -> None:
    linecache.cache.pop(filename, None)

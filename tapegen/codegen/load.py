"""Compiling generated source with `exec`, and making it visible to tools.

The source is registered in `linecache` under a deterministic pseudo-filename,
so tracebacks, `inspect.getsource` and pdb show the generated code without
any file on disk.
"""
from __future__ import annotations

import linecache

from ..resolve import LiveNamespace


def load(text: str, filename: str, names: dict, fn, sources=()) -> dict:
    """Execute generated module `text`; return the namespace its functions live in.

    `names` are tapegen's own (NumPy as `np`, runtime helpers); any other name
    the code reads comes from `fn`'s closure and globals at call time.
    """
    code = compile(text, filename, "exec")
    namespace = LiveNamespace(names, fn, sources)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(code, namespace)
    return namespace

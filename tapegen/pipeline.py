"""The transform, as a flat list of passes:

    source -> lower to Wengert list -> verify -> activity + reverse -> verify -> codegen -> load

Each pass is a function in its own module; this one only strings them
together and caches the result per (function, kind, wrt, outputs).
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np

from . import rules
from .codegen.emit import check_spans, grad_module, vjp_module
from .codegen.load import load
from .frontend.lower import lower
from .frontend.names import reserved_names
from .frontend.source import function_source
from .ir import Program, Var
from .runtime import nan_check
from .transforms.reverse import Adjoint, reverse
from .transforms.specialize import describe, guard_source, known_output, signature, trusted_shapes
from .verify import verify, verify_adjoint


@dataclass(frozen=True)
class Generated:
    """A transformed function: its IR, its source text, and the compiled functions."""

    kind: str
    name: str
    program: Program
    adjoint: Adjoint
    text: str
    namespace: dict
    filename: str = ""

    @property
    def function(self):
        return self.namespace[self.name if self.kind in ("grad", "jvp") else f"{self.name}_fwd"]

    @property
    def backward(self):
        return self.namespace[f"{self.name}_bwd"]


def lowered(fn, receiver=None, statics=()) -> Program:
    """The verified Wengert list of `fn` (cached); `receiver` is `self`'s class for a bound method.

    `statics`: (parameter index, function) pairs: parameters bound to functions for this variant
    (`nonlinearity=np.tanh`), whose calls are resolved when the function is transformed.
    """
    cache = _cache_for(fn)
    key = ("program", receiver, statics)
    program = cache.get(key)
    if program is None:
        program = verify(lower(function_source(fn), fn, reserved_names(), receiver, statics))
        cache[key] = program
    return program


def transform(fn, kind: str, wrt: tuple, outputs: tuple = (0,), bare: bool = True,
              checks: bool = False, receiver=None, statics=()) -> Generated:
    """Generate and load the `kind` ("grad" or "vjp") code of `fn` for params `wrt` (indices).

    `checks` generates the debug_nans variant (a NaN/Inf check after every equation).
    """
    cache = _cache_for(fn)
    key = (kind, wrt, outputs, bare, checks, receiver, statics)
    generated = cache.get(key)
    if generated is not None:
        return generated
    with _LOCK:
        generated = cache.get(key)
        if generated is None:
            generated = _generate(fn, kind, wrt, outputs, bare, checks, receiver, statics)
            cache[key] = generated
    return generated


def _generate(fn, kind, wrt, outputs, bare, checks=False, receiver=None, statics=()) -> Generated:
    program = lowered(fn, receiver, statics)
    if kind == "jvp":  # forward mode: lower -> forward -> verify -> codegen -> load
        from .codegen.emit_jvp import jvp_module
        from .transforms.forward import forward, verify_tangent
        tangent = verify_tangent(forward(program, tuple(program.params[i] for i in wrt)))
        name = f"{program.name}_jvp"
        wrt_names = ",".join(program.params[i].name for i in wrt)
        filename = f"<tapegen {name}[{wrt_names}] from {program.span.file}:{program.span.line}>"
        text = jvp_module(tangent, name)
        namespace = load(text, filename, rules.namespace(), fn, program.free_sources)
        return Generated(kind, name, program, tangent, text, namespace)
    adjoint = reverse(program, tuple(program.params[i] for i in wrt), outputs)
    verify_adjoint(adjoint)
    name = f"{program.name}_{kind}"
    emit = grad_module if kind == "grad" else vjp_module
    text = emit(adjoint, name, bare, checks)
    wrt_names = ",".join(program.params[i].name for i in wrt)
    filename = f"<tapegen {name}[{wrt_names}] from {program.span.file}:{program.span.line}>"
    names = rules.namespace()
    if checks:
        names = {**names, "nan_check": nan_check, "SPANS": check_spans(adjoint)}
    namespace = load(text, filename, names, fn, program.free_sources)
    return Generated(kind, name, program, adjoint, text, namespace, filename)


def specialized(fn, wrt: tuple, outputs: tuple, bare: bool, receiver, args, statics=()):
    """(result of this call, gradient function specialized to calls shaped like `args`).

    Runs a recording variant of the generic code on `args` (its result is returned), works
    out which recorded shapes hold for every call passing a guard (specialize.py), and
    generates code with those shapes as constants. Cached per argument signature.
    """
    generic = transform(fn, "grad", wrt, outputs, bare, False, receiver, statics)
    signatures = tuple(signature(a) for a in args)
    key = ("specialized", wrt, outputs, bare, receiver, signatures, statics)
    cache = _cache_for(fn)
    function = cache.get(key)
    if function is not None:
        return function(*args), function
    records: dict = {}

    def record(name, value):
        records.setdefault(Var(name), set()).add(describe(value))

    program = generic.program
    name = f"{program.name}_grad"
    with _LOCK:  # emit keeps per-module state while it writes: one module at a time
        text = grad_module(generic.adjoint, name, bare, record=True)
    recording = load(text, generic.filename + " (recording)", {**rules.namespace(), "record": record}, fn,
                     program.free_sources)[name]
    result = recording(*args)
    with _LOCK:
        known = trusted_shapes(program, {v: frozenset(s) for v, s in records.items()}, signatures)
        adjoint = reverse(program, tuple(program.params[i] for i in wrt), outputs, known)
        verify_adjoint(adjoint)
        guard, dtypes = guard_source(program.params, signatures)
        output = known_output(known, program.outputs[outputs[0]])
        seed_value = "1.0" if output is not None and output[0] == () and output[1] == np.float64 else None
        floats = frozenset(p for p, sig in zip(program.params, signatures) if sig == ("float",))
        text = grad_module(adjoint, name, bare, guard=guard, seed_value=seed_value, floats=floats)
        names = {**rules.namespace(), "GENERIC": generic.function, "GUARD_DTYPES": dtypes, "ndarray": np.ndarray}
        function = load(text, generic.filename.replace(">", " specialized>"), names, fn, program.free_sources)[name]
        cache[key] = function
    return result, function


_LOCK = threading.RLock()
_CACHES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _cache_for(fn) -> dict:
    cache = _CACHES.get(fn)
    if cache is None:
        with _LOCK:
            cache = _CACHES.setdefault(fn, {})
    return cache

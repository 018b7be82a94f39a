"""The transform, as a flat list of passes:

    source -> lower to Wengert list -> verify -> activity + reverse -> verify -> codegen -> load

Each pass is a function in its own module; this one only strings them
together and caches the result per (function, kind, wrt, outputs).
"""
from __future__ import annotations

import contextlib
import functools
import gc
import threading
import weakref
import numpy as np

from . import cache as disk
from . import rules
from .codegen.emit import check_spans, grad_module, vjp_module
from .codegen.load import load
from .frontend.lower import lower
from .frontend.names import reserved_names
from .frontend.source import function_source
from .ir import Eqn, Program, Var, walk
from .runtime import nan_check
from .transforms.reverse import Adjoint, reverse
from .transforms.specialize import describe, guard_source, known_output, signature, trusted_shapes, unpinned
from .verify import verify, verify_adjoint


def _load_later(text, filename, names, fn_ref, sources):
    """`load`, deferred: the function is held weakly (the cache keyed by it must not keep it alive)."""
    return load(text, filename, names, fn_ref(), sources)


class Generated:
    """A transformed function: its source text, the compiled functions, and its IR.

    Loaded from the on-disk cache (cache.py), the IR (`program`, `adjoint`) is rebuilt only if
    something asks for it: the call path needs only the code.
    """

    def __init__(self, kind, name, text, namespace, filename="", program=None, adjoint=None, rebuild=None,
                 uses_tape=None, bindings=None):
        self.kind, self.name, self.text, self.filename = kind, name, text, filename
        # what the code was made for (Program.bindings): from the disk, without the program
        self.bindings = program.bindings if program is not None else (bindings or ())
        self._namespace = namespace  # or a function loading it: the general code is compiled when first used
        self._program, self._adjoint, self._rebuild = program, adjoint, rebuild
        if uses_tape is None and adjoint is not None and kind != "jvp":
            uses_tape = adjoint.uses_tape
        self.uses_tape = uses_tape  # the vjp's backward pass consumes a tape (api.Pullback)

    @property
    def namespace(self) -> dict:
        if callable(self._namespace):
            with _LOCK:
                if callable(self._namespace):
                    self._namespace = self._namespace()
        return self._namespace

    @property
    def program(self) -> Program:
        if self._program is None:
            self._program, self._adjoint = self._rebuild()
        return self._program

    @property
    def adjoint(self):
        if self._adjoint is None:
            self._program, self._adjoint = self._rebuild()
        return self._adjoint

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
        with collecting_later():
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
    with _LOCK, collecting_later():
        generated = cache.get(key)
        if generated is None:
            generated = _generate(fn, kind, wrt, outputs, bare, checks, receiver, statics)
            cache[key] = generated
    return generated


def returns_tuple(fn, receiver=None, statics=()) -> bool:
    """Whether `fn` returns a tuple (from the disk cache if it has the answer, else by lowering it)."""
    cache = _cache_for(fn)
    answer = cache.get(("returns", receiver, statics))
    if answer is None:
        stored = None if ("program", receiver, statics) in cache else disk.key(fn, ("returns",), receiver, statics)
        entry = disk.read(stored, {"returns_tuple": bool}) if stored is not None else None
        answer = entry["returns_tuple"] if entry is not None else lowered(fn, receiver, statics).returns_tuple
        if stored is not None and entry is None:
            disk.write(stored, {"returns_tuple": answer})
        cache[("returns", receiver, statics)] = answer
    return answer


def _generate(fn, kind, wrt, outputs, bare, checks=False, receiver=None, statics=()) -> Generated:
    stored = None if checks else disk.key(fn, ("general", kind, wrt, outputs, bare), receiver, statics)
    if stored is not None:
        generated = _from_disk(stored, fn, kind, lambda: _ir(fn, kind, wrt, outputs, receiver, statics))
        if generated is not None:
            return generated
    program, ir = _ir(fn, kind, wrt, outputs, receiver, statics)
    wrt_names = ",".join(program.params[i].name for i in wrt)
    if kind == "jvp":  # forward mode: lower -> forward -> verify -> codegen -> load
        from .codegen.emit_jvp import jvp_module
        name = _code_name(f"{program.name}_jvp")
        text, names = jvp_module(ir, name), rules.Names()
    else:
        emit = grad_module if kind == "grad" else vjp_module
        name = _code_name(f"{program.name}_{kind}")
        text, names = emit(ir, name, bare, checks), rules.Names()
        if checks:
            names = rules.Names({"nan_check": nan_check, "SPANS": check_spans(ir)})
    filename = f"<tapegen {name}[{wrt_names}] from {program.span.file}:{program.span.line}>"
    namespace = functools.partial(_load_later, text, filename, names, weakref.ref(fn), program.free_sources)
    if kind != "grad" or checks:
        namespace = namespace()  # a grad's first call runs the recording variant: its own code waits till needed
    generated = Generated(kind, name, text, namespace, filename, program, ir)
    if stored is not None and not program.free_sources:
        _to_disk(stored, generated, names, uses_tape=generated.uses_tape)
    return generated


def _code_name(name):
    """`name` (`loss_grad`) for generated code, unless generated code means a rule's helper by it (the
    forward code of a user's `matrix_power` would be `matrix_power_jvp`, and call itself): then
    `matrix_power_jvp_code`."""
    while rules.lookup_name(name) is not rules.MISSING:
        name += "_code"
    return name


def _ir(fn, kind, wrt, outputs, receiver, statics=()):
    """(program, its adjoint or tangent program): the passes before codegen."""
    program = lowered(fn, receiver, statics)
    if kind == "jvp":
        from .transforms.forward import forward, verify_tangent
        return program, verify_tangent(forward(program, tuple(program.params[i] for i in wrt)))
    adjoint = reverse(program, tuple(program.params[i] for i in wrt), outputs)
    verify_adjoint(adjoint)
    return program, adjoint


def _from_disk(stored, fn, kind, rebuild, extra=None, entry=None):
    """The Generated a disk cache entry holds (None if there is none, or its names are gone)."""
    entry = entry or disk.read(stored, _CODE_FIELDS)
    names = disk.resolve_names(entry["names"]) if entry is not None else None
    bindings = disk.bindings_resolved(entry["bindings"]) if names is not None else None
    if bindings is None:
        return None
    try:
        namespace = load(entry["text"], entry["filename"], {**names, **(extra or {})}, fn)
    except (SyntaxError, ValueError, TypeError):  # damaged in a way the file format did not catch
        return None
    return Generated(kind, entry["name"], entry["text"], namespace, entry["filename"], rebuild=rebuild,
                     uses_tape=entry.get("uses_tape"), bindings=bindings)


_CODE_FIELDS = {"name": str, "text": str, "filename": str, "names": dict, "bindings": list}


def _to_disk(stored, generated, names, **meta):
    used = disk.names_used(generated.text, names, generated.filename)
    bindings = disk.bindings_described(generated.program.bindings)
    if used is not None and bindings is not None:
        disk.write(stored, {"name": generated.name, "text": generated.text, "filename": generated.filename,
                            "names": used, "bindings": bindings, **meta})


def specialized(fn, wrt: tuple, outputs: tuple, bare: bool, receiver, args, statics=(), defer=False):
    """(result of this call, gradient function specialized to calls shaped like `args`).

    Runs a recording variant of the generic code on `args` (its result is returned), works
    out which recorded shapes hold for every call passing a guard (specialize.py), and
    generates code with those shapes as constants. Cached per argument signature.

    With `defer`, the second item may instead be a `Specializing`: calling its `build()` writes the
    specialized code from this call's records (the first call returns without waiting for it).
    """
    generic = transform(fn, "grad", wrt, outputs, bare, False, receiver, statics)
    signatures = tuple(signature(a) for a in args)
    key = ("specialized", wrt, outputs, bare, receiver, signatures, statics)
    cache = _cache_for(fn)
    function = cache.get(key)
    stored = None
    if function is None:
        stored = disk.key(fn, ("specialized", wrt, outputs, bare, signatures), receiver, statics)
        function = _specialized_from_disk(stored, fn, generic) if stored is not None else None
        if function is not None:
            cache[key] = function
    if function is not None:
        return function(*args), function
    records: dict = {}
    executed: set = set()

    def record(name, value, ordinal):  # called after every forward equation of the recording run
        records.setdefault(name, set()).add(describe(value))
        executed.add(ordinal)

    program = generic.program
    name = _code_name(f"{program.name}_grad")
    ordinals = {id(e): k for k, e in enumerate(e for e in walk(program.body) if isinstance(e, Eqn))}
    with collecting_later():  # the recording run too: its records are part of the transform's large heap
        with _LOCK:  # emit keeps per-module state while it writes: one module at a time
            text = grad_module(generic.adjoint, name, bare, record=ordinals)
        recording = load(text, generic.filename + " (recording)", rules.Names({"record": record}), fn,
                         program.free_sources)[name]
        result = recording(*args)

    def build():
        with _LOCK, collecting_later():
            function = cache.get(key)  # another thread, or source(args=...), may have written it meanwhile
            if function is None:
                recorded = {Var(name): frozenset(s) for name, s in records.items()}
                function = cache[key] = _specialize(generic, wrt, outputs, bare, signatures, recorded, executed,
                                                    stored, fn)
            return function
    return result, (Specializing(build) if defer and stored is None else build())  # the disk cache keeps it now


def _general(generic):
    """What specialized code calls for arguments its guard rejects: `generic`'s function, compiled at the
    first such call, which also puts it in place of this in the specialized code's globals (`scope`)."""
    def GENERIC(*args, **kwargs):
        function = generic.function
        if GENERIC.scope is not None and GENERIC.scope.get("GENERIC") is GENERIC:
            GENERIC.scope["GENERIC"] = function
        return function(*args, **kwargs)
    GENERIC.scope = None
    return GENERIC


class Specializing:
    """The specialized code of a first call's shapes, not written yet: `build()` writes it (once)."""

    def __init__(self, build):
        self.build = build


def _specialize(generic, wrt, outputs, bare, signatures, recorded, executed, stored, fn):
    """Load the gradient code specialized to `recorded` shapes (and write it to the disk cache, if on)."""
    program = generic.program
    name = _code_name(f"{program.name}_grad")
    known = trusted_shapes(program, recorded, signatures, executed)
    guarded = unpinned(program, recorded, signatures, executed, known)  # unpinning keeps `known` as it is
    adjoint = reverse(program, tuple(program.params[i] for i in wrt), outputs, known)
    verify_adjoint(adjoint)
    guard, dtypes = guard_source(program.params, guarded)
    output = known_output(known, program.outputs[outputs[0]])
    seed_value = "1.0" if output is not None and output[0] == () and output[1] == np.float64 else None
    floats = frozenset(p for p, sig in zip(program.params, signatures) if sig == ("float",))
    text = grad_module(adjoint, name, bare, guard=guard, seed_value=seed_value, floats=floats)
    extra = {"GENERIC": _general(generic), "GUARD_DTYPES": dtypes, "ndarray": np.ndarray}
    filename = generic.filename.replace(">", " specialized>")
    namespace = extra["GENERIC"].scope = load(text, filename, rules.Names(extra), fn, program.free_sources)
    if stored is not None and not program.free_sources and all(np.dtype(d.str) is d for d in dtypes):
        _to_disk(stored, Generated("grad", name, text, namespace, filename, program, adjoint), rules.Names(),
                 dtypes=[d.str for d in dtypes])
    return namespace[name]


def _specialized_from_disk(stored, fn, generic):
    """The specialized function a disk cache entry holds, or None."""
    entry = disk.read(stored, {**_CODE_FIELDS, "dtypes": list})
    if entry is None:
        return None
    try:
        dtypes = tuple(np.dtype(d) for d in entry["dtypes"])
    except TypeError:
        return None
    extra = {"GENERIC": _general(generic), "GUARD_DTYPES": dtypes, "ndarray": np.ndarray}
    generated = _from_disk(stored, fn, "grad", None, extra, entry)
    if generated is None:
        return None
    extra["GENERIC"].scope = generated.namespace
    return generated.function


@contextlib.contextmanager
def collecting_later():
    """Python's cyclic garbage collector off while a transform runs, back on (if it was) after it.

    A transform allocates hundreds of thousands of small objects (syntax trees, equations) that live until
    it ends, and almost no cycles: the collector's passes over them were a fifth of a long function's
    transform, and found nothing. Reference counting still frees everything else as it goes. The first
    call's recording run (the general code on the caller's arguments, noting shapes) is inside too: its
    records are kept until the specialized code is written."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_LOCK = threading.RLock()
_CACHES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def forget_all() -> None:
    """Drop every transform made so far (in memory, and what was read from the disk cache): the code of some
    function was made for a value of its module that has changed (ChangedSinceTransformError)."""
    with _LOCK:
        _CACHES.clear()
        GENERATION[0] += 1
    disk.forget_read()


GENERATION = [0]  # bumped by forget_all: objects holding transforms (api's entries) drop theirs


class Receiver:
    """The object whose bound method is differentiated (`tg.grad(model.loss)`), as the transform's
    `receiver`: the code is made for that object (what its attributes hold, `self.act = np.tanh`, is known
    when transforming, and checked before each call as a module's names are), so it is keyed by the object
    itself. Held weakly where the object allows it: the code made for it is forgotten with it."""

    __slots__ = ("cls", "_ref", "_hash", "__weakref__")

    def __init__(self, obj):
        self.cls = type(obj)
        self._hash = hash((self.cls, id(obj)))
        try:
            self._ref = weakref.ref(obj, lambda _, me=weakref.ref(self): _forget_receiver(me()))
        except TypeError:  # an object with __slots__ and no __weakref__: held for the life of the process
            self._ref = lambda: obj

    @property
    def obj(self):
        return self._ref()

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return isinstance(other, Receiver) and self.obj is not None and self.obj is other.obj

    def __repr__(self):
        return f"<{self.cls.__qualname__} object>"


def _forget_receiver(receiver):
    """The code made for an object that is gone."""
    if receiver is None:
        return
    with _LOCK:
        for cache in list(_CACHES.values()):
            for key in [k for k in cache if isinstance(k, tuple) and receiver in k]:
                del cache[key]


def _cache_for(fn) -> dict:
    cache = _CACHES.get(fn)
    if cache is None:
        with _LOCK:
            cache = _CACHES.setdefault(fn, {})
    return cache

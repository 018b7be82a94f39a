"""The public API: `differentiate`, `grad`, `value_and_grad`, `vjp`, `source`, `wengert`.

Everything here is argument handling around `pipeline.transform`; the call
path after the first call is a dict lookup and a call of generated code.
Also here, because `Differentiated` and `GradFunction` use them: the call of
generated tangent code behind `.jvp` (`call_jvp`), and a gradient's generated
code made differentiable again (`differentiable_gradient`, for gradients of
gradients). The transforms built on these (`jvp`, `jacobian`, `hessian`,
`hvp`) are in api_transforms.py.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import linecache
import operator
import os
import re
import sys
import traceback
import types
import weakref

import numpy as np

from . import pipeline
from .debug import STATE as DEBUG
from .errors import ChangedSinceTransformError, NonScalarOutputError, TapegenError, WrtError
from .frontend.inline import plain_function, users_class
from .ir import Span
from .frontend.resolve import binding_changed, native
from .rules.custom import custom_jvp, custom_vjp
from .rules.runtime_rules import zero_tangent
from .runtime import _pytree_like, check_wrt, conform, pytree_fields


_POSITIONAL, _KEYWORD, _DEFAULT = "positional", "keyword", "default"


class _Slot:
    """A stand-in argument: binding these shows where each parameter's value comes from."""

    __slots__ = ("kind", "where")

    def __init__(self, kind, where):
        self.kind, self.where = kind, where


class _Arguments(tuple):
    """A call's arguments, flat, for a function taking **options: which keywords went into it."""

    keywords: tuple = ()

    def __new__(cls, values, keywords):
        made = super().__new__(cls, values)
        made.keywords = keywords
        return made


_COUNT = itertools.count(1)


def _plain(name, signature, body, **names):
    """A function `name(signature)` running `body`, compiled with its source in linecache (so
    tapegen reads and lowers it like user code), `names` its globals besides `np`."""
    text = f"def {name}{signature}:\n" + "".join(f"    {line}\n" for line in body.splitlines())
    filename = f"<tapegen {name} #{next(_COUNT)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"np": np, **names}
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]


def partial_function(made: functools.partial):
    """`functools.partial(f, a, k=v)` as the plain function it stands for, with the parameters it still takes
    (`def f_partial(x, *, k=v): return F(a, x, k=k)`), so tapegen differentiates it like one of the user's."""
    try:
        signature = inspect.signature(made)
    except (TypeError, ValueError):
        raise TapegenError(f"tapegen cannot read the parameters of {made!r}",
                           hint="wrap it: tapegen.grad(lambda x: f(x, ...))") from None
    params, passed, names = [], [f"B{k}" for k in range(len(made.args))], {"F": made.func}
    names.update({f"B{k}": value for k, value in enumerate(made.args)})
    star = False
    for k, param in enumerate(signature.parameters.values()):
        default = ""
        if type(param.default).__name__ == "_NoValueType" and param.kind is param.KEYWORD_ONLY:
            continue  # np.clip's min=<no value>: left out, as not passed (NumPy's own marker, not a value)
        if param.default is not param.empty:
            names[f"D{k}"], default = param.default, f"=D{k}"
        if param.kind is param.VAR_POSITIONAL:
            params.append(f"*{param.name}")
            passed.append(f"*{param.name}")
            star = True
        elif param.kind is param.VAR_KEYWORD:
            params.append(f"**{param.name}")
            passed.append(f"**{param.name}")
        elif param.kind is param.KEYWORD_ONLY:
            params.append(("" if star else "*, ") + f"{param.name}{default}")
            star = True
            passed.append(f"{param.name}={param.name}")
        else:
            params.append(f"{param.name}{default}")
            passed.append(param.name)
    name = f"{getattr(made.func, '__name__', 'f')}_partial".replace("<", "").replace(">", "")
    return _plain(name, f"({', '.join(params)})", f"return F({', '.join(passed)})", **names)


def _plain_object(value) -> bool:
    """An object of a class of the user's that is not a pytree of arrays (a namedtuple, a dataclass, a
    registered class: those are differentiated field by field)."""
    import dataclasses
    cls = type(value)
    return not isinstance(value, (type, tuple, list, dict, np.ndarray, np.generic)) and cls not in FUNCTION_TYPES \
        and not dataclasses.is_dataclass(value) and pytree_fields(value) is None and users_class(cls)


class _Target:
    """A user callable taken apart: the plain function, a bound `self`, parameter names and defaults."""

    __slots__ = ("fn", "bound", "params", "defaults", "nparams", "offset", "varargs", "varkw", "plans",
                 "lengths_matter", "receiver", "object_defaults")

    def __init__(self, fn):
        fn = native(fn)  # autograd's wrapper of a NumPy function (grad(np.sqrt) under autograd.numpy): NumPy's
        if isinstance(fn, Differentiated):
            fn = fn.__wrapped__
        if isinstance(fn, np.ufunc):
            fn = ufunc_function(fn)
        elif library_primitive(fn):
            fn = library_function(fn)
        elif isinstance(fn, (types.MethodDescriptorType, types.WrapperDescriptorType)):
            fn = method_function(fn)  # tg.grad(np.ndarray.sum)
        if getattr(fn, "_is_autograd_primitive", False) and inspect.isfunction(getattr(fn, "fun", None)) \
                or isinstance(fn, (custom_vjp, custom_jvp)) and inspect.isfunction(fn.fn):
            fn = primitive_function(fn)  # grad(f) of the user's autograd @primitive or custom rule: a call of it
        if isinstance(fn, functools.partial):  # tg.grad(partial(f, y=1))
            fn = partial_function(fn)
        if isinstance(fn, GradFunction):  # a gradient of a gradient: differentiate the generated code
            fn = _gradient_code(fn, reverse=True)
        elif not inspect.isfunction(fn) and getattr(type(fn), "__tapegen_inline__", None) is not None:
            fn = fn.__tapegen_inline__() or fn  # tg.jacobian(tg.hvp(f)): the plain code it stands for
        if not inspect.isfunction(fn) and not inspect.ismethod(fn) and not inspect.isclass(fn) \
                and users_class(type(fn)) and plain_function(inspect.getattr_static(type(fn), "__call__", None)):
            fn = fn.__call__  # an object of the user's, called: its __call__, for that object
        bound = ()
        if inspect.ismethod(fn):
            bound = (fn.__self__,)
            fn = fn.__func__
        if isinstance(fn, functools.partial) or not inspect.isfunction(fn):
            raise TapegenError(f"tapegen differentiates Python functions; got {type(fn).__name__} {fn!r}",
                               hint="wrap it: tapegen.grad(lambda x: f(x))")
        code = fn.__code__
        self.fn = fn
        self.bound = bound
        # what the code is made for: the object of a bound method of a class of the user's (its attributes
        # holding functions and objects are known when transforming), else its class; None for a function
        self.receiver = (pipeline.Receiver(bound[0]) if users_class(type(bound[0])) else type(bound[0])) \
            if bound else None
        self.nparams = code.co_argcount + code.co_kwonlyargcount  # keyword-only parameters come last
        self.params = code.co_varnames[:self.nparams]
        kwonly = code.co_varnames[code.co_argcount:self.nparams]
        kwdefaults = fn.__kwdefaults__ or {}
        if all(name in kwdefaults for name in kwonly):  # the defaults of the parameters, in order, all last
            self.defaults = (fn.__defaults__ or ()) + tuple(kwdefaults[name] for name in kwonly)
        else:  # a keyword-only parameter without a default comes after defaults: arguments() fills them in
            self.defaults = ()
        self.offset = len(bound)
        # `def f(x, *rest)`: the name of *rest; its values are passed (and differentiated) one by one
        self.varargs = code.co_varnames[self.nparams] if code.co_flags & inspect.CO_VARARGS else None
        # `def f(x, **options)`: the name of **options; its values come last, one argument each, by keyword
        self.varkw = code.co_varnames[self.nparams + (self.varargs is not None)] \
            if code.co_flags & inspect.CO_VARKEYWORDS else None
        self.plans: dict = {}  # (positional count, keyword names) -> see _plan
        # defaults that are objects of the user's (`def f(x, m=model)`): the code is made for the object
        first = len(self.params) - len(self.defaults)
        self.object_defaults = tuple((first + k, pipeline.Receiver(d)) for k, d in enumerate(self.defaults)
                                     if _plain_object(d))
        # the code is made for the lengths of the list and tuple arguments too (see `statics`): set when the
        # code made for any length was refused and the code for the lengths of a call is not; "rows": for the
        # lengths of its array arguments too (`model(x, *p)`), where the lists' lengths were not enough
        self.lengths_matter = False

    def arguments(self, args, kwargs):
        """All positional arguments, bound self first, defaults filled in; `*rest`'s values spread in
        place (after the named positional parameters, before keyword-only ones)."""
        if self.bound:
            args = self.bound + args
        if not kwargs and len(args) == self.nparams and self.varargs is None:
            return args
        plan = self.plans.get((len(args), tuple(kwargs)))
        if plan is None:
            plan = self._plan(args, kwargs)
        values = tuple(args[where] if kind is _POSITIONAL else kwargs[where] if kind is _KEYWORD else where
                       for kind, where in plan)
        if self.varkw is None:
            return values
        return _Arguments(values, tuple(k for k in kwargs if k not in self.params))

    def _plan(self, args, kwargs):
        """Where each parameter's value comes from, for calls with this many arguments and these keywords:
        `inspect`'s binding, worked out once per (count, keyword names) rather than on every call."""
        try:
            bound = inspect.signature(self.fn, follow_wrapped=False).bind(*(_Slot(_POSITIONAL, i) for i in range(len(args))),
                                                    **{name: _Slot(_KEYWORD, name) for name in kwargs})
        except TypeError as exc:
            raise TapegenError(f"{self.fn.__qualname__}(): {exc}") from None
        bound.apply_defaults()
        values = [bound.arguments[name] for name in self.params]
        if self.varargs is not None:  # *rest's values in place, before the keyword-only parameters
            positional = self.fn.__code__.co_argcount
            values[positional:positional] = bound.arguments[self.varargs]
        if self.varkw is not None:  # **options' values last, in the order they were passed
            values += list(bound.arguments.get(self.varkw, {}).values())
        plan = tuple((value.kind, value.where) if isinstance(value, _Slot) else (_DEFAULT, value) for value in values)
        self.plans[(len(args), tuple(kwargs))] = plan
        return plan

    def statics(self, arguments):
        """(position, function) for each argument that is a function (`nonlinearity=np.tanh`): the
        variant of the transform made for these functions, whose calls it resolves; and (("obj", position),
        the object) for a parameter left at its default that is an object of the user's (`m=model`)."""
        functions = tuple((i, a) for i, a in enumerate(arguments) if type(a) in FUNCTION_TYPES)
        if self.object_defaults and self.varargs is None:
            functions += tuple((("obj", i), known) for i, known in self.object_defaults if arguments[i] is known.obj)
        if self.lengths_matter:  # `[Dense(W, b) for W, b in params]`: made item by item, for len(params) items
            functions += self.mattering(self.length_statics(arguments))
        else:  # a list or tuple argument: `xs + ys` joins, `xs * 2` repeats (not NumPy's sum and product)
            functions += tuple((("kind", i), type(a).__name__) for i, a in enumerate(arguments)
                               if type(a) in (list, tuple))
        keywords = getattr(arguments, "keywords", ())
        if self.varkw is not None:
            functions = (("**", keywords),) + functions  # which keywords **options has
        if self.varargs is None:
            return functions
        return (("*", len(arguments) - self.nparams - len(keywords)),) + functions  # how many values *rest has

    @staticmethod
    def length_statics(arguments) -> tuple:
        """(("len", position), (kind, length)) for each list or tuple argument, (("str", position), text)
        for each string argument (`activation="relu"` picking a function from a dict), (("none", position), True)
        for each None (`loss(X, y=None)` returning the scores alone), and (("rows", position),
        length) for each array argument (`model(x, *p)`, `tuple(p)` of curve fitting's parameter vector): statics
        of code made for them."""
        return tuple((("len", i), (type(a).__name__, len(a))) for i, a in enumerate(arguments)
                     if type(a) in (list, tuple)) + \
            tuple((("str", i), a) for i, a in enumerate(arguments) if type(a) is str) + \
            tuple((("none", i), True) for i, a in enumerate(arguments) if a is None) + \
            tuple((("rows", i), len(a)) for i, a in enumerate(arguments) if type(a) is np.ndarray and a.ndim)

    def mattering(self, lengths) -> tuple:
        """Of `lengths` (length_statics), those the code is made for: an array's only where lengths_matter is
        "rows" (code made for each length of an array argument is made again for each batch size)."""
        return lengths if self.lengths_matter == "rows" else _lists_only(lengths)

    def call_lengths(self, positional, lengths):
        """The statics of a call's list lengths and strings (`length_statics`) where the function is called
        inside another (`lengths`, as the lowering knows them: keys of positional arguments counted among those
        passed, of keyword arguments by name), with the strings of parameters left at their defaults."""
        made, passed = {}, set(range(positional + self.offset))
        for (what, k), known in lengths:
            position = self.params.index(k) if isinstance(k, str) and k in self.params else \
                None if isinstance(k, str) else k + self.offset
            passed.add(position)
            if what != "keyword" and position is not None:
                made[(what, position)] = known
        first = len(self.params) - len(self.defaults)
        for k, default in enumerate(self.defaults, first):  # `activation="relu"` left at its default
            if type(default) is str and k not in passed:
                made[("str", k)] = default
        return tuple(made.items())

    def default_statics(self):
        """`statics` for a call that passes no function-valued parameter that has a default."""
        first = len(self.params) - len(self.defaults)
        return tuple((first + k, d) for k, d in enumerate(self.defaults) if type(d) in FUNCTION_TYPES) + \
            tuple((("obj", i), known) for i, known in self.object_defaults)

    def wrt(self, wrt, statics=()):
        """Parameter indices for a user's `wrt` (an int, a name, or a tuple of them), and whether bare.

        With `*rest`, `statics` says how many values it has: positions count them one by one.
        """
        bare = not isinstance(wrt, (tuple, list))
        items = (wrt,) if bare else tuple(wrt)
        visible = self.visible(dict(statics).get("*", 0), dict(statics).get("**", ()))
        if not items:
            raise self._wrt_error("wrt is empty", visible)
        indices = []
        for item in items:
            if isinstance(item, bool) or not isinstance(item, (int, str, np.integer)):
                raise self._wrt_error(f"wrt entries are argument positions or names, not {item!r}", visible)
            if isinstance(item, str):
                if item not in visible:
                    raise self._wrt_error(f"wrt names {item!r}, which is not an argument", visible)
                index = visible.index(item)
            else:
                index = int(item) + len(visible) if item < 0 else int(item)
                if not 0 <= index < len(visible):
                    raise self._wrt_error(f"wrt={item} is out of range", visible)
            if index + self.offset in indices:
                raise self._wrt_error(f"wrt names argument {visible[index]!r} twice", visible)
            indices.append(index + self.offset)
        return tuple(indices), bare

    def visible(self, rest=0, keywords=()):
        """The names of the parameters a caller passes, `*rest`'s values as `rest[0]`, `rest[1]`, ...,
        `**options`' as the keywords they were passed by."""
        params = self.params[self.offset:] + tuple(keywords if self.varkw is not None else ())
        if self.varargs is None:
            return params
        positional = self.fn.__code__.co_argcount - self.offset
        return params[:positional] + tuple(f"{self.varargs}[{k}]" for k in range(rest)) + params[positional:]

    def _wrt_error(self, message, visible):
        code = self.fn.__code__
        return WrtError(f"{self.fn.__qualname__}() at {code.co_filename}:{code.co_firstlineno}: {message}",
                        hint=f"its arguments are ({', '.join(visible)})")


class Differentiated:
    """A function with gradients: call it as usual, or ask for `.grad`, `.vjp`, `.source`, ...

    Made by `@tapegen.differentiate`. Every method takes the function's own
    arguments plus `wrt` (default: the decorator's, else the first argument).

    Example:
        >>> import numpy as np, tapegen as tg
        >>> @tg.differentiate
        ... def f(x):
        ...     return np.sum(x ** 2)
        >>> f.grad(np.array([1.0, 2.0]))
        array([2., 4.])
    """

    def __init__(self, fn, wrt=0, has_aux=False):
        functools.update_wrapper(self, fn)
        self._target = _Target(fn)
        self._wrt = wrt
        self._has_aux = has_aux
        self._entries: dict = {}

    def __call__(self, *args, **kwargs):
        return self.__wrapped__(*args, **kwargs)

    def __tapegen_inline__(self):
        """Called inside a differentiated function, the wrapped function is inlined (see frontend/inline.py)."""
        return plain_function(self.__wrapped__)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return Differentiated(self.__wrapped__.__get__(obj, objtype), self._wrt, self._has_aux)

    def __reduce__(self):
        if _is_module_global(self):  # `@differentiate` at module level: by reference, as pickle does functions
            return self.__qualname__
        return (_rebuild_differentiated,
                (self.__wrapped__, self._wrt, self._has_aux, _portable_source(self.__wrapped__)))

    def __setstate__(self, state):
        self._wrt, self._has_aux = state["_wrt"], state["_has_aux"]

    # --- the three kinds of call --------------------------------------------------------

    def value_and_grad(self, *args, wrt=None, **kwargs):
        """`(value, gradient)`; with `has_aux`, `((value, aux), gradient)`."""
        arguments = self._target.arguments(args, kwargs)

        def run(entry):
            try:
                return entry.specialize(arguments) if entry.pending else entry.function(*arguments)
            except NonScalarOutputError as exc:
                raise _at_return(exc, entry) from None
        return _on_current_code(lambda: self._entry("grad", self._wrt if wrt is None else wrt,
                                                    self._target.statics(arguments), arguments), run)

    def grad(self, *args, wrt=None, **kwargs):
        """The gradient of a scalar-valued function; with `has_aux`, `(gradient, aux)`."""
        value, gradient = self.value_and_grad(*args, wrt=wrt, **kwargs)
        return (gradient, value[1]) if self._has_aux else gradient

    def vjp(self, *args, wrt=None, **kwargs):
        """`(output, pullback)`: `pullback(cotangent)` returns the gradients for that cotangent."""
        arguments = self._target.arguments(args, kwargs)

        moving = self._wrt if wrt is None else wrt

        def run(entry):
            out, residuals = entry.function(*arguments)
            return out, Pullback(entry, out, residuals, arguments, (self, args, kwargs, moving))
        return _on_current_code(lambda: self._entry("vjp", moving, self._target.statics(arguments), arguments), run)

    def jvp(self, primals, tangents, wrt=None):
        """`(output, output tangent)` by forward mode: `tangents` pairs with `primals` (None: no tangent).

        With `wrt`, `tangents` holds only the tangents of those arguments, in that order.
        """
        return call_jvp(self, primals, tangents, wrt)

    def source(self, kind="grad", wrt=None, args=None):
        """The generated code for `kind` ("grad", "vjp" or "jvp") as a string.

        With `args` (a tuple of example arguments; "grad" only), the code specialized to
        their types and shapes: what every call after the first runs for such arguments.
        """
        if kind not in ("grad", "vjp", "jvp"):
            raise TapegenError(f"unknown kind {kind!r}", hint="use 'grad', 'vjp' or 'jvp'")
        arguments = None if args is None else self._target.arguments(tuple(args), {})
        statics = self._target.default_statics() if args is None else self._target.statics(arguments)
        entry = self._entry(kind, self._wrt if wrt is None else wrt, statics)
        from .highlight import SourceText  # a str that Jupyter shows highlighted (loaded when first asked)
        if args is None:
            return SourceText(entry.generated.text)
        if kind != "grad":
            raise TapegenError("source(args=...) shows the specialized gradient code: kind must be 'grad'",
                               hint="leave out args for the general vjp or jvp code")
        function = entry.specialized_function(arguments)
        return SourceText("".join(linecache.getlines(function.__code__.co_filename)))

    def wengert(self):
        """The Wengert list (one primitive a line, with the user's source lines) as text."""
        return str(pipeline.lowered(self._target.fn))

    def _entry(self, kind, wrt, statics=(), arguments=None, lengths_from=None):
        """The variant of the transform for (kind, wrt, statics), made on first use. `arguments` (a call's):
        those tapegen cannot differentiate are named; with `lengths_from` too (a call's), code refused for
        list and tuple arguments of any length is made again for theirs (Target.lengths_matter)."""
        lengths_from = arguments if lengths_from is None else lengths_from
        lengths = self._target.length_statics(lengths_from) if lengths_from is not None else ()
        return _made_for_lengths(self._target, lambda made_for: self._made_entry(kind, wrt, made_for, arguments),
                                 statics, lengths)[0]

    def _made_entry(self, kind, wrt, statics, arguments, again=False):
        if isinstance(wrt, list):
            wrt = tuple(wrt)
        if getattr(self, "_generation", 0) != pipeline.GENERATION[0]:  # made for a module's values since changed
            self._entries, self._generation = {}, pipeline.GENERATION[0]
        checks = DEBUG.nans
        key = (kind, wrt, checks, statics)
        entry = self._entries.get(key)
        if entry is None:
            if arguments is not None:  # the first call: arguments tapegen cannot differentiate are named now
                for index in self._target.wrt(wrt, statics)[0]:
                    if type(arguments[index]) not in FUNCTION_TYPES:  # a function: named where statics are
                        check_wrt(arguments[index])
            entry = self._entries[key] = _Entry(self._target, kind, wrt, self._has_aux, checks, statics)
        if entry.bindings and binding_changed(entry.bindings) and not again:
            # made (or lowered, for another kind) for a function, class or object a module name has since been
            # bound away from: made again, for every transform (jacobian and hessian too)
            forget_transforms()
            return self._made_entry(kind, wrt, statics, arguments, again=True)
        return entry


class _Entry:
    """One transformed variant: the generated function for a (kind, wrt) pair."""

    __slots__ = ("generated", "_function", "backward", "bare", "has_aux", "pending", "key", "bindings")

    def __init__(self, target, kind, wrt, has_aux, checks=False, statics=()):
        indices, bare = target.wrt(wrt, statics)
        receiver = target.receiver
        moving = [i for i, _ in statics if i in indices]
        if moving:
            visible = target.visible(dict(statics).get("*", 0), dict(statics).get("**", ()))
            raise target._wrt_error(f"wrt names argument {visible[moving[0] - target.offset]!r}, which is a "
                                    f"function", visible)
        returns_tuple = pipeline.returns_tuple(target.fn, receiver, statics)  # without lowering, if the disk cache knows
        if returns_tuple and not has_aux and kind == "grad":
            raise NonScalarOutputError(
                "grad needs a scalar output, but the function returns a tuple",
                pipeline.lowered(target.fn, receiver, statics).return_span,
                "pass has_aux=True if the first item is the loss and the rest are extras")
        outputs = (0,) if (has_aux or not returns_tuple) else \
            tuple(range(len(pipeline.lowered(target.fn, receiver, statics).outputs)))
        self.generated = pipeline.transform(target.fn, kind, indices, outputs, bare, checks, receiver, statics)
        self._function = None  # the general code's, when first asked for (a grad's first call records instead)
        self.backward = self.generated.backward if kind == "vjp" else None
        self.bare = bare
        self.has_aux = has_aux
        self.pending = kind == "grad" and not checks  # specialize to the shapes of the first call
        self.bindings = self.generated.bindings  # (from the disk cache too, resolved in this process)
        self.key = (target.fn, indices, outputs, bare, receiver, statics)

    @property
    def function(self):
        if self._function is None:
            self._function = self.generated.function
        return self._function

    @function.setter
    def function(self, function):
        self._function = function

    def specialized_function(self, arguments):
        """The code specialized to `arguments`' types and shapes (runs it once on them, to record shapes)."""
        return pipeline.specialized(*self.key[:5], arguments, self.key[5])[1]

    def specialize(self, arguments):
        """First call: run a recording variant (its result is the call's); second call: switch to code
        specialized to the first call's shapes, written now, so that a gradient taken once never waits for it.
        With TAPEGEN_CHECK_SPECIALIZED (the tests) or the disk cache on, it is written on the first call."""
        if isinstance(self.pending, pipeline.Specializing):
            self.function, self.pending = self.pending.build(), False
            return self.function(*arguments)
        result, function = pipeline.specialized(*self.key[:5], arguments, self.key[5], defer=not CHECK_SPECIALIZED)
        if isinstance(function, pipeline.Specializing):
            self.pending = function
            return result
        if CHECK_SPECIALIZED and _deterministic(self.generated.program):
            _same(result, function(*arguments), self.generated.program)
        self.function, self.pending = function, False
        return result


CHECK_SPECIALIZED = os.environ.get("TAPEGEN_CHECK_SPECIALIZED") == "1"

# Arguments that are functions: the transform is made for the function passed (`nonlinearity=np.tanh`).
FUNCTION_TYPES = frozenset({types.FunctionType, types.BuiltinFunctionType, np.ufunc, type(np.sum)})  # np.sum: a dispatcher


def _same(expected, actual, program):
    """Self-check (tests set TAPEGEN_CHECK_SPECIALIZED=1): specialized code gives the generic result."""
    from .errors import InternalError
    left, right = _leaves(expected), _leaves(actual)
    if any(not isinstance(leaf, (np.ndarray, np.generic, float, int)) for leaf in left + right):
        return  # a lazy (dask) result: comparing would compute it
    if len(left) != len(right) or not all(np.shape(a) == np.shape(b) and _close(a, b) for a, b in zip(left, right)):
        raise InternalError(f"specialized gradient code of {program.name}() disagrees with the general code "
                            f"(this is a tapegen bug; please report it)", program.span)


def _close(a, b):
    """Equal up to rounding: the two codes may sum in other orders (single precision rounds 1e-7 apart)."""
    dtype = np.result_type(a, b)
    eps = np.finfo(dtype).eps if dtype.kind in "fc" else 0.0
    return np.allclose(a, b, rtol=max(1e-10, 1e3 * eps), atol=max(1e-12, 1e2 * eps), equal_nan=True)


def _deterministic(program):
    """No opaque calls (a random draw would differ between the two runs being compared)."""
    from .ir import Eqn, walk
    return not any(isinstance(e, Eqn) and e.op.form == "opaque" for e in walk(program.body))


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=repr) for leaf in _leaves(value[key])]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


class Pullback:
    """The backward half of `vjp`: call it with the output's cotangent."""

    __slots__ = ("_entry", "_out", "_residuals", "_arguments", "_call", "_code", "__weakref__")  # (a transform of a
    # pullback, autograd's make_ggnvp's `make_vjp(f_vjp)`, keeps it in the weak table of differentiated functions)

    def __init__(self, entry, out, residuals, arguments, call=None):
        self._entry, self._out, self._residuals, self._arguments = entry, out, residuals, arguments
        self._call = call  # (the Differentiated, args, kwargs, wrt) of the vjp call that made it
        self._code = None

    def __tapegen_inline__(self):
        """Called inside a differentiated function (a pullback made when the code runs, that a custom rule's
        bwd returns in a closure), the pullback is the differentiable gradient code of <f(*args), ct> at its
        arguments, which are constants there: `vjp(f, *args, wrt=wrt)[1](ct)`, inlined."""
        if self._call is None or self._call[2]:
            return None
        if self._code is None:
            differentiated, args, _, wrt = self._call
            names = {f"A{k}": value for k, value in enumerate(args)}
            passed = "".join(f"A{k}, " for k in range(len(args)))
            name = getattr(differentiated, "__name__", "f").replace("<", "").replace(">", "") or "f"
            self._code = _plain(f"{name}_pullback", "(ct)", f"return VJP(F, {passed}wrt=WRT)[1](ct)", VJP=vjp,
                                F=differentiated, WRT=wrt, **names)
        return self._code

    def __call__(self, cotangent):
        """The gradients for `cotangent`; call it as often as you like (a Jacobian calls it per row)."""
        cotangent = _check_cotangent(cotangent, self._out, self._entry)
        residuals = self._residuals
        if self._entry.generated.uses_tape:
            # The backward pass consumes its tape and writes saved regions back into arrays:
            # the first call uses the saved residuals, later calls run the forward pass again.
            if residuals is None:
                residuals = self._entry.function(*self._arguments)[1]
            self._residuals = None
        return self._entry.backward(residuals, cotangent)


def _check_cotangent(cotangent, out, entry):
    if entry.generated.program.returns_tuple:
        if not isinstance(cotangent, (tuple, list)) or len(cotangent) != len(out):
            raise TapegenError(f"the function returns {len(out)} values, so the cotangent must be a tuple of "
                               f"{len(out)}", entry.generated.program.return_span)
        return tuple(_check_one(c, o, entry) for c, o in zip(cotangent, out))
    return _check_one(cotangent, out, entry)


def _check_one(cotangent, out, entry, where=""):
    """`cotangent` checked against `out`, item by item where `out` is a list, tuple or dict (None: zeros)."""
    if isinstance(out, dict):
        if cotangent is None:
            return {key: _check_one(None, value, entry) for key, value in out.items()}
        if not isinstance(cotangent, dict) or set(cotangent) != set(out):
            raise _cotangent_error(f"the output{where} is a dict with keys {sorted(out, key=repr)}, so its "
                                   f"cotangent must be a dict with those keys", entry)
        return {key: _check_one(cotangent[key], value, entry, f"{where}[{key!r}]") for key, value in out.items()}
    if isinstance(out, (list, tuple)) and not _is_array_like(out):
        if cotangent is None:
            return tuple(_check_one(None, item, entry) for item in out)
        if not isinstance(cotangent, (list, tuple)) or len(cotangent) != len(out):
            raise _cotangent_error(f"the output{where} is a {type(out).__name__} of {len(out)} values, so its "
                                   f"cotangent must be a tuple or list of {len(out)}", entry)
        return tuple(_check_one(c, o, entry, f"{where}[{k}]") for k, (c, o) in enumerate(zip(cotangent, out)))
    if cotangent is None:
        return np.zeros_like(out)
    if np.shape(cotangent) != np.shape(out):
        raise _cotangent_error(f"cotangent{where} has shape {np.shape(cotangent)}, but the output{where} has "
                               f"shape {np.shape(out)}", entry)
    return cotangent


def _is_array_like(out):
    """A list or tuple of numbers (`return [1.0, 2.0]`): one value, checked by its shape."""
    return all(isinstance(item, (int, float, complex, np.number)) for item in out) and len(out) > 0


def _cotangent_error(message, entry):
    return TapegenError(message, entry.generated.program.return_span, "pass a cotangent shaped like the output")


def _at_return(exc, entry):
    return exc.with_span(entry.generated.program.return_span) if exc.span is None else exc


# --- module-level transforms --------------------------------------------------------------------


def differentiate(fn=None, *, wrt=0, has_aux=False):
    """Decorate a NumPy function so it has `.grad`, `.value_and_grad`, `.vjp` and `.source`.

    Args:
        fn: the function (when used as a bare decorator).
        wrt: default argument(s) to differentiate with respect to: a position, a name, or a tuple.
        has_aux: the function returns `(loss, aux)`; only `loss` is differentiated.

    Example:
        >>> @differentiate(wrt=("W", "b"))
        ... def loss(W, b, x):
        ...     return np.sum(np.tanh(x @ W + b))
    """
    if fn is None:
        return lambda f: Differentiated(f, wrt, has_aux)
    return Differentiated(fn, wrt, has_aux)


class GradFunction:
    """What `tapegen.grad` and `tapegen.value_and_grad` return: a picklable gradient function."""

    def __init__(self, fn, wrt, has_aux, with_value):
        self._fn, self._wrt, self._has_aux, self._with_value = fn, wrt, has_aux, with_value
        self._differentiated = fn if isinstance(fn, Differentiated) else Differentiated(fn, wrt, has_aux)
        functools.update_wrapper(self, fn, updated=())  # not fn's __dict__: a GradFunction's would replace ours
        self.__name__ = f"{getattr(fn, '__name__', 'f')}_{'value_and_grad' if with_value else 'grad'}"
        self._fast = None  # the generated function, once known, for calls with all arguments positional
        self._fast_bindings = ()  # what it was made for (Program.bindings)
        target = self._differentiated._target
        self._nparams = -1 if target.bound or target.varargs else target.nparams

    def __call__(self, *args, **kwargs):
        fast = self._fast
        if fast is not None and getattr(self, "_fast_bindings", ()) and binding_changed(self._fast_bindings):
            fast = self._fast = None  # made for a function, class or object since bound to another: made again
            forget_transforms()
        if fast is not None and not kwargs and len(args) == self._nparams and not DEBUG.nans:
            try:
                result = fast(*args)
            except NonScalarOutputError as exc:
                raise _at_return(exc, self._differentiated._entry("grad", self._wrt)) from None
            except ChangedSinceTransformError:  # made for a module's value since changed: made again below
                self._fast = None
                forget_transforms()
            else:
                return result if self._with_value else result[1]
        d = self._differentiated
        if self._with_value:
            result = d.value_and_grad(*args, wrt=self._wrt, **kwargs)
        else:
            result = d.grad(*args, wrt=self._wrt, **kwargs)
        if not self._has_aux and not DEBUG.nans and not d._target.statics(d._target.arguments(args, kwargs)):
            entry = d._entry("grad", self._wrt)
            if not entry.pending:  # after the second call: the specialized code
                self._fast, self._fast_bindings = entry.function, entry.bindings
        return result

    def source(self):
        return self._differentiated.source("grad", wrt=self._wrt)

    def __tapegen_inline__(self):
        """Called inside a differentiated function, the generated gradient code is inlined (MAML)."""
        return differentiable_gradient(self)

    def __tapegen_inline_call__(self, positional: int, lengths=()):
        """The same, for a call passing `positional` arguments by position: a gradient of `f(*params)` is
        made for that many values (one variant per count, as on a plain call), and, where `f` needs them
        (Target.lengths_matter), for the `lengths` of its list and tuple arguments (and the strings) known there."""
        target = self._differentiated._target
        lengths = target.call_lengths(positional, lengths)
        if target.varargs is None:
            return differentiable_gradient(self, lengths=lengths)
        return differentiable_gradient(self, rest=max(0, positional + target.offset - target.fn.__code__.co_argcount),
                                       lengths=lengths)

    def __reduce__(self):
        return (_rebuild_grad_function,
                (self._fn, self._wrt, self._has_aux, self._with_value, _portable_source(self._fn)))


# --- forward mode, and gradient code that is differentiable again ------------------------------


def call_jvp(differentiated: Differentiated, primals, tangents, wrt=None):
    """`Differentiated.jvp`: pick the arguments that move, call the generated tangent code, shape the result."""
    primals = tuple(primals)
    positions, moving = _moving(differentiated, primals, tuple(tangents), wrt)
    if not positions:
        out = differentiated(*primals)
        return out, zero_tangent(out)
    arguments = differentiated._target.arguments(primals, {})
    entry, (out, out_dot) = _on_current_code(
        lambda: differentiated._entry("jvp", positions, differentiated._target.statics(arguments),
                                      lengths_from=arguments),
        lambda entry: (entry, entry.function(*arguments, *moving)))
    if entry.generated.program.returns_tuple:
        return out, tuple(_tangent_of_output(t, o) for t, o in zip(out_dot, out))
    return out, _tangent_of_output(out_dot, out)


def _tangent_of_output(t, out):
    """A tangent shaped, typed and structured like the output; an integer output's is a zero."""
    if isinstance(out, dict):
        return type(out)((k, _tangent_of_output(None if t is None else t[k], v)) for k, v in out.items())
    if isinstance(out, (list, tuple)):
        items = [_tangent_of_output(None if t is None else ti, oi)
                 for ti, oi in zip(t if t is not None else [None] * len(out), out)]
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)  # a namedtuple's by position
    kind = np.asarray(out).dtype.kind
    if kind in "fc":
        return conform(t, out)
    if isinstance(out, (bool, int)):
        return 0
    return zero_tangent(out) if kind in "biu" else None


def _moving(differentiated, primals, tangents, wrt):
    """(positions of the arguments with tangents, those tangents shaped like their arguments)."""
    if wrt is not None:
        indices, _ = differentiated._target.wrt(wrt)
        positions = tuple(i - differentiated._target.offset for i in indices)
        if len(tangents) != len(positions):
            raise WrtError(f"jvp: {len(positions)} arguments in wrt, but {len(tangents)} tangents")
        pairs = list(zip(positions, tangents))
    else:
        if len(tangents) != len(primals):
            raise WrtError(f"jvp: {len(primals)} primals but {len(tangents)} tangents",
                           hint="give one tangent per argument; None for an argument that does not move")
        pairs = [(i, t) for i, t in enumerate(tangents) if t is not None and not _fixed(primals[i], t)]
    return tuple(i for i, _ in pairs), [tangent_like(t, primals[i], i) for i, t in pairs]


def _fixed(x, t) -> bool:
    """An integer or boolean argument: it cannot move, so its tangent must be zero."""
    if isinstance(x, (bool, int, np.integer, np.bool_)) or (isinstance(x, np.ndarray) and x.dtype.kind in "biu"):
        if np.any(np.asarray(t) != 0):
            raise WrtError(f"jvp: a nonzero tangent for an integer argument ({x!r})",
                           hint="pass floats, or None as that argument's tangent")
        return True
    return False


def tangent_like(t, x, position):
    """Tangent `t` of argument `x`: its shape, dtype and container structure."""
    fields = pytree_fields(x)
    if fields is not None:  # a namedtuple, dataclass or registered pytree: a tangent of its class
        tangent_fields = pytree_fields(t) if type(t) is type(x) else None
        if tangent_fields is None:
            raise WrtError(f"jvp: the tangent of argument {position} must be a {type(x).__name__} like it")
        return _pytree_like(x, {name: tangent_like(tangent_fields[name], value, position)
                                for name, value in fields.items()})
    if isinstance(x, dict):
        if not isinstance(t, dict) or set(t) != set(x):
            raise WrtError(f"jvp: the tangent of argument {position} must be a dict with keys {sorted(x)}")
        return type(x)((k, tangent_like(t[k], v, position)) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        if not isinstance(t, (list, tuple)) or len(t) != len(x):
            raise WrtError(f"jvp: the tangent of argument {position} must be a {type(x).__name__} of {len(x)}")
        return type(x)(tangent_like(ti, xi, position) for ti, xi in zip(t, x))
    if np.shape(t) != np.shape(x):
        raise WrtError(f"jvp: the tangent of argument {position} has shape {np.shape(t)}, "
                       f"but the argument has shape {np.shape(x)}")
    if isinstance(x, float):
        return float(t)
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        return np.asarray(t, dtype=x.dtype) if isinstance(x, np.ndarray) else x.dtype.type(t)
    return t


# --- differentiable gradient code ---------------------------------------------------------------

_GRADIENTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def differentiable_gradient(gradient: GradFunction, reverse: bool = False, rest: int | None = None, lengths=()):
    """The function a `GradFunction` computes, as generated code tapegen can differentiate again.

    Same parameters, defaults and result as `gradient` itself (the gradient, or
    `(value, gradient)` for `value_and_grad`); its source is in `linecache`.
    `reverse` says it is about to be differentiated in reverse mode (which goes
    through the tape as list operations: see runtime_rules.tape_pop).
    It is the generated gradient code rewritten into plain Python tapegen
    lowers (codegen/differentiable.py). For `f(*params)`, `rest` says how many values *params has (known
    where the gradient is called inside another function: `__tapegen_inline_call__`); `lengths`, the
    statics of the lengths of its list and tuple arguments where known there, used where the code made for
    any length is refused (Target.lengths_matter).
    """
    d = gradient._differentiated
    wrt = tuple(gradient._wrt) if isinstance(gradient._wrt, list) else gradient._wrt
    if d._target.varargs is not None and rest is None:
        raise TapegenError(f"a gradient of {d._target.fn.__qualname__}(), which takes *{d._target.varargs}, cannot "
                           f"be differentiated again as a whole (only where it is called with its arguments)",
                           hint=f"call it inside the function you differentiate, or differentiate a function with "
                                f"named arguments: lambda x, y: {d._target.fn.__name__}(x, y)")
    if d._target.varkw is not None:
        raise TapegenError(f"a gradient of {d._target.fn.__qualname__}(), which takes **{d._target.varkw}, cannot "
                           f"be differentiated again yet",
                           hint=f"differentiate a function with named arguments: "
                                f"lambda x, y: {d._target.fn.__name__}(x, y)")
    statics = d._target.default_statics()  # a function-valued default: the code is made for it
    if rest is not None and d._target.varargs is not None:
        statics = (("*", rest),) + statics
    if lengths and d._target.lengths_matter:
        statics += d._target.mattering(lengths)
    # (a lowering made before a module name was rebound is made again there, and the caches with it)
    generated, statics = _made_for_lengths(d._target, lambda made_for: _generic_gradient(d, wrt, made_for), statics,
                                           lengths)
    key = (wrt, gradient._has_aux, gradient._with_value, statics, d._target.receiver)
    cache = _GRADIENTS.setdefault(d._target.fn, {})
    if key not in cache:
        from .codegen import differentiable  # gradients of gradients only
        cache[key] = differentiable.load(generated, d._target, key[1], key[2])
        # what the gradient code was made for: a function inlining it (or its Jacobian) is checked against it too
        cache[key].__tapegen_bindings__ = generated.bindings
        # A caller that inlines it must pass these very functions (frontend/inline.py checks).
        cache[key].__tapegen_statics__ = {d._target.params[i]: value for i, value in statics if isinstance(i, int)}
    bound = d._target.bound  # a method: the gradient code takes `self` first
    return types.MethodType(cache[key], bound[0]) if bound else cache[key]


def _made_for_lengths(target, make, statics, lengths):
    """(`make(statics)`, statics); where that is refused and `lengths` (the statics of a call's list and tuple
    lengths, and its arrays') are given, `make(statics + lengths)` if that works, the lists' lengths tried before
    the arrays' too, `target`'s code made for lengths from then on (Target.lengths_matter); else the first
    refusal."""
    try:
        return make(statics), statics
    except TapegenError as refused:
        if isinstance(refused, ChangedSinceTransformError) or not lengths or target.lengths_matter == "rows":
            raise
        levels = ((True, _lists_only(lengths)),) if not target.lengths_matter else ()
        for level, made_for in levels + (("rows", lengths),):  # the lists' lengths first, then the arrays' too
            made_for = statics + tuple(s for s in made_for if s not in statics)
            if made_for == statics:
                continue
            try:
                made = make(made_for)
            except TapegenError:
                continue
            target.lengths_matter = level
            return made, made_for
        raise refused from None


def _lists_only(lengths) -> tuple:
    """`lengths` (Target.length_statics) without the lengths of array arguments."""
    return tuple(s for s in lengths if s[0][0] != "rows")


def _generic_gradient(d, wrt, statics=()):
    """The generated gradient code of `d` for `wrt`: the general kind (not specialized, no NaN checks)."""
    target = d._target
    indices, bare = target.wrt(wrt, statics)
    receiver = target.receiver
    program = pipeline.lowered(target.fn, receiver, statics)
    if program.bindings and binding_changed(program.bindings):  # lowered before a module name was rebound
        forget_transforms()
        program = pipeline.lowered(target.fn, receiver, statics)
    if program.returns_tuple and not d._has_aux:
        raise NonScalarOutputError("grad needs a scalar output, but the function returns a tuple",
                                   program.return_span, "pass has_aux=True if the first item is the loss")
    return pipeline.transform(target.fn, "grad", indices, (0,), bare, False, receiver, statics)


# --- pickling: by reference when importable, else by value (cloudpickle) with the source --------


def _is_module_global(obj):
    """Whether `module.qualname` is `obj`, in a module another process can import (not `__main__`)."""
    module = sys.modules.get(getattr(obj, "__module__", None))
    if module is None or module.__name__ == "__main__":
        return False
    target = module
    for part in obj.__qualname__.split("."):
        target = getattr(target, part, None)
    return target is obj


def _portable_source(fn):
    """`(file, lines)` of `fn`'s source when the unpickling process may lack it, else None.

    A function from `__main__` or a notebook cell travels by value (cloudpickle), and tapegen
    derives its gradient from source there; a worker has neither the script nor the cell.
    """
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None or (fn.__module__ != "__main__" and os.path.exists(code.co_filename)):
        return None
    lines = linecache.getlines(code.co_filename, fn.__globals__)
    return (code.co_filename, tuple(lines)) if lines else None


def _register_source(fn, source):
    """Make `linecache`, which tapegen reads source through, serve the pickled lines.

    cloudpickle (3.1 and later) names the file of every function it sends by value
    `<dynamic-code>`; `fn`, and the by-value functions of its module it calls, get their
    own file's name back so their source is found in the lines sent with them.
    """
    if source is None:
        return
    file, lines = source
    if tuple(linecache.getlines(file)) != lines:
        linecache.cache[file] = (sum(map(len, lines)), None, list(lines), file)
    fn = getattr(fn, "__func__", fn)
    module = getattr(fn, "__module__", None)
    for value in [fn, *getattr(fn, "__globals__", {}).values()]:
        code = getattr(value, "__code__", None)
        if (code is not None and code.co_filename == "<dynamic-code>"
                and getattr(value, "__module__", None) == module):
            value.__code__ = code.replace(co_filename=file)


def _rebuild_differentiated(fn, wrt, has_aux, source):
    _register_source(fn, source)
    return Differentiated(fn, wrt, has_aux)


def _rebuild_grad_function(fn, wrt, has_aux, with_value, source):
    _register_source(fn, source)
    return GradFunction(fn, wrt, has_aux, with_value)


def chosen_wrt(wrt, argnums=None, argnum=None):
    """`wrt`, or what code written for JAX (`argnums=`) or autograd (`argnum=`) calls it."""
    given = [w for w in (argnums, argnum) if w is not None]
    if len(given) > 1 or given and wrt != 0:
        raise WrtError("give the arguments to differentiate once: wrt=, argnums= or argnum=")
    return given[0] if given else wrt


def grad(f, wrt=0, has_aux=False, *, argnums=None, argnum=None):
    """A function computing the gradient of scalar-valued `f` with respect to `wrt`.

    With `has_aux=True`, `f` returns `(value, aux)` and the result returns `(gradient, aux)`.
    `argnums=` (JAX's name) and `argnum=` (autograd's) are `wrt` too.

    Example:
        >>> df = grad(lambda x: np.sin(x) * x)
        >>> round(df(1.0), 6)
        1.381773
    """
    return GradFunction(f, chosen_wrt(wrt, argnums, argnum), has_aux, with_value=False)


def value_and_grad(f, wrt=0, has_aux=False, *, argnums=None, argnum=None):
    """A function returning `(value, gradient)`; with `has_aux`, `((value, aux), gradient)`."""
    return GradFunction(f, chosen_wrt(wrt, argnums, argnum), has_aux, with_value=True)


# `tg.grad(loss)(w, x)` inside a differentiated function, with `loss` and `wrt` known when it is
# lowered: the gradient function is made then and its code inlined (frontend/lower_expr.py reads
# this mark).
grad.__tapegen_static_call__ = value_and_grad.__tapegen_static_call__ = True


def vjp(f, *args, wrt=0):
    """`(out, pullback)` for `f(*args)`: `pullback(cotangent)` gives the gradients for `wrt`."""
    return _differentiated(f).vjp(*args, wrt=wrt)


def source(f, kind="grad", wrt=0, args=None):
    """The generated gradient code of `f` as a string (kind "grad", "vjp" or "jvp").

    With `args`, the gradient code specialized to those example arguments' shapes.
    """
    return _differentiated(f).source(kind, wrt=wrt, args=args)


def wengert(f):
    """The Wengert list of `f` as text: one primitive a line, with the user's source lines."""
    return _differentiated(f).wengert()


def _differentiated(f):
    if isinstance(f, Differentiated):
        return f
    if isinstance(f, np.ufunc):  # tg.grad(np.sin), as autograd users write
        f = ufunc_function(f)
    elif library_primitive(f):  # tg.vjp(np.mean, x), tg.grad(operator.mul), tg.vjp(norm.pdf, x)
        f = library_function(f)
    elif isinstance(f, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        f = method_function(f)  # tg.grad(np.ndarray.sum), tg.vjp(float.__mul__, a, b)
    if isinstance(f, GradFunction):  # a gradient of a gradient: differentiate the generated code
        f = _gradient_code(f)
    try:
        return _DIFFERENTIATED.get(f) or _DIFFERENTIATED.setdefault(f, Differentiated(f))
    except TypeError:  # (no weak reference to it: operator.itemgetter(1), a builtin's object)
        raise TapegenError(f"tapegen differentiates Python functions; got {type(f).__name__} {f!r}",
                           hint="wrap it: tapegen.grad(lambda x: f(x))") from None


def _gradient_code(gradient, reverse=False):
    """What a transform of `gradient` (a GradFunction) differentiates: its generated code; for a function of
    *args, a function passing its arguments on, whose call inside makes that code for their count."""
    target = gradient._differentiated._target
    if target.varargs is None:
        try:
            return differentiable_gradient(gradient, reverse)
        except TapegenError:  # made for the strings its call passes, or leaves at their defaults (`kind="relu"`
            if not any(type(d) is str for d in target.defaults):  # picking a function): its caller's
                raise
    made = _GRADIENT_CALLERS.get(gradient)
    if made is None:
        name = gradient.__name__.replace("<", "").replace(">", "")
        made = _GRADIENT_CALLERS[gradient] = _plain(name, "(*args)", "return GRADIENT(*args)", GRADIENT=gradient) \
            if target.varargs is not None else _caller_with_defaults(name, gradient, target)
    return made


def _caller_with_defaults(name, gradient, target):
    """`def name(x, kind=DEFAULT_1): return GRADIENT(x, kind)`: a caller with `target`'s parameters and
    defaults, whose call inside makes the gradient's code for the strings it passes (or leaves at defaults)."""
    first, positional = len(target.params) - len(target.defaults), target.fn.__code__.co_argcount
    defaults = {f"DEFAULT_{k}": d for k, d in enumerate(target.defaults, first)}
    declared = [p if k < first else f"{p}=DEFAULT_{k}" for k, p in enumerate(target.params)]
    passed = [p if k < positional else f"{p}={p}" for k, p in enumerate(target.params)]
    if positional < len(target.params):  # keyword-only parameters
        declared.insert(positional, "*")
    declared, passed = declared[target.offset:], passed[target.offset:]
    return _plain(name, f"({', '.join(declared)})", f"return GRADIENT({', '.join(passed)})", GRADIENT=gradient,
                  **defaults)


_GRADIENT_CALLERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


_DIFFERENTIATED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


_PRIMITIVE_FUNCTIONS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _on_current_code(entry_of, run):
    """`run(entry_of())`, on code made for what the module's names and values are now: code made for a
    function, class or object a name has since been bound away from is made again by `entry_of` (the entry's
    names are checked where it is found, `_made_entry`); code made for a list's length or an int key that has
    since changed (ChangedSinceTransformError, raised first thing in the generated code) is made again and run
    once more."""
    entry = entry_of()
    try:
        try:
            return run(entry)
        except ChangedSinceTransformError:
            forget_transforms()
        return run(entry_of())
    except TapegenError as exc:
        located = _located(exc)
        if located is exc:
            raise
        raise located from None


_SOURCE_COMMENT = re.compile(r"^\s*# (.+):(\d+)   (.*)$")  # generated code's comment above a user line's code
_LOCATED = re.compile(r"^\S+:\d+:\d+: ")  # a message naming its place already


def _located(exc):
    """`exc`, raised where no span was known (a check only the values can make when the code runs: `not_shared`,
    `number_item`), pointing at the user's line the generated code was running: the comment quoting it above
    that code (codegen/emit.py)."""
    if exc.span is not None or isinstance(exc, ChangedSinceTransformError) or _LOCATED.match(exc.message):
        return exc  # (a check that names the place itself: `item_not_shared`'s "file:line:col: ...")
    site = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename.startswith("<tapegen "):
            site = frame.f_code.co_filename, line  # (the innermost generated function's line)
    if site is None:
        return exc
    for number in range(site[1], 0, -1):
        found = _SOURCE_COMMENT.match(linecache.getline(site[0], number))
        if found:
            text = found.group(3)
            return exc.with_span(Span(found.group(1), int(found.group(2)), 0, len(text), text))
    return exc


_REMADE = [0]  # how often forget_transforms ran in this process
FORGETTABLE: list = []  # caches of code built on transforms (api_transforms' composed code): cleared with them


def forget_transforms() -> None:
    """Drop every transform made so far, here and in the pipeline, before the call is made again: the code of
    some function was made for a value of its module or closure that has changed since (a list's length, an
    int key, a name now bound to another function, class or object), so it is made anew for what it is now."""
    _REMADE[0] += 1
    if _REMADE[0] == 10:  # a module object replaced on every call (a model re-created each step) is slow
        import warnings
        warnings.warn("tapegen has made gradient code again 10 times because a function, class or object the "
                      "function reads from its module or closure (or a list's length) keeps changing between "
                      "calls; pass such a value to the function as an argument instead", stacklevel=3)
    pipeline.forget_all()
    _GRADIENTS.clear()
    _GRADIENT_CALLERS.clear()
    for made in FORGETTABLE:
        made.cache_clear()


def primitive_function(primitive):
    """`def f(x, y): return PRIMITIVE(x, y)`: an autograd @primitive or a custom rule's function differentiated
    itself (`grad(f)`), as a Python function tapegen reads, calling it (so its rules apply, or a NoRuleError
    names it)."""
    made = _PRIMITIVE_FUNCTIONS.get(primitive)
    if made is None:
        raw = primitive.fn if isinstance(primitive, (custom_vjp, custom_jvp)) else primitive.fun
        params = [p for p in inspect.signature(raw).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][inspect.ismethod(primitive):]
        name = raw.__name__ if raw.__name__.isidentifier() else "primitive"
        defaults = {f"DEFAULT_{k}": p.default for k, p in enumerate(params) if p.default is not p.empty}
        signature = ", ".join(p.name if p.default is p.empty else f"{p.name}=DEFAULT_{k}" for k, p in enumerate(params))
        names = ", ".join(p.name for p in params)
        made = _PRIMITIVE_FUNCTIONS[primitive] = _plain(name, f"({signature})", f"return PRIMITIVE({names})",
                                                        PRIMITIVE=primitive, **defaults)
    return made


def library_primitive(fn) -> bool:
    """`fn` is a library's callable tapegen has a rule for, not a Python function it reads: a NumPy function
    (`np.mean`, an `_ArrayFunctionDispatcher`), a builtin (`operator.mul`), a bound method of a library's
    object (`scipy.stats.norm.pdf`, whose own code tapegen does not follow)."""
    if isinstance(fn, (np.ufunc, functools.partial, custom_vjp, custom_jvp)) \
            or getattr(fn, "_is_autograd_primitive", False):
        return False
    if inspect.isfunction(fn):  # a Python function with a rule of its own (register_vjp; NumPy's np.row_stack):
        from .rules import PRIMITIVES  # the rule, as in a call of it inside a function, not its code
        try:
            return PRIMITIVES.get(fn) is not None
        except TypeError:
            return False
    if isinstance(fn, types.BuiltinFunctionType) or type(fn).__name__ == "_ArrayFunctionDispatcher":
        return True  # (abs, max, np.sum: what lowering makes of their call applies, or a NoRuleError names them)
    from .rules import lookup
    try:
        return lookup(fn) is not None
    except Exception:  # noqa: BLE001 (a callable the rule table cannot key: not a primitive)
        return False


_LIBRARY_FUNCTIONS: dict = {}


def library_function(fn):
    """`def mean_called(x1, *rest): return mean(x1, *rest)`: a library's callable as a Python function tapegen
    reads, calling it (so its rule applies, or an error names it), taking the arguments its signature requires
    (at least one: `np.atleast_1d(*arys)`) and any more by position (`norm.pdf(x, loc, scale)`)."""
    key = (fn, type(fn))
    made = _LIBRARY_FUNCTIONS.get(key)
    if made is None:
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):  # (a builtin without a signature)
            params = ()
        count = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params)
        names = ", ".join([f"x{k + 1}" for k in range(max(count, 1))] + ["*rest"])
        name = getattr(fn, "__name__", "")
        name = name if name.isidentifier() and name not in ("np", "rest") else "primitive"
        made = _LIBRARY_FUNCTIONS[key] = _plain(f"{name}_called", f"({names})", f"return {name}({names})",
                                                **{name: fn})
    return made


def method_function(fn):
    """An unbound method of a builtin class (`np.ndarray.sum`, `float.__mul__`) as the Python function calling
    it: `def sum_called(x1, *rest): return x1.sum(*rest)`, an operator's method as that operator
    (`operator.mul`). Refused where it is neither."""
    key = (fn, type(fn))
    made = _LIBRARY_FUNCTIONS.get(key)
    if made is None:
        name = fn.__name__
        op = getattr(operator, name[2:-2], None) if name.startswith("__") and name.endswith("__") else None
        if op is not None and library_primitive(op):
            made = library_function(op)
        elif name.isidentifier() and not name.startswith("__"):
            made = _plain(f"{name}_called", "(x1, *rest)", f"return x1.{name}(*rest)")
        else:
            raise TapegenError(f"tapegen differentiates Python functions; got {type(fn).__name__} {fn!r}",
                               hint="wrap it: tapegen.grad(lambda x: f(x))")
        _LIBRARY_FUNCTIONS[key] = made
    return made


@functools.lru_cache(maxsize=None)
def ufunc_function(ufunc):
    """`def sin(x1): return sin(x1)`: a NumPy ufunc as a Python function tapegen reads (its source is in linecache)."""
    name = ufunc.__name__ if ufunc.__name__.isidentifier() else "ufunc"
    params = ", ".join(f"x{k + 1}" for k in range(ufunc.nin))
    text = f"def {name}({params}):\n    return UFUNC({params})\n"
    filename = f"<tapegen ufunc {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"UFUNC": ufunc}
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]

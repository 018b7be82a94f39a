"""Calls to the user's own Python functions: inlined into the caller's Wengert list.

`loss(params)` calling `layer(W, x)` lowers `layer`'s body in place, with its
parameters bound to the call's arguments and its own names kept (renamed only
on collision), so the generated code reads like the two functions side by side
and the comments point at `layer`'s lines. The callee's globals and closure are
its own: data it reads from its module is looked up there at call time.

Module-level functions, closures, functions decorated with
`tapegen.differentiate`, nested `def`s and lambdas assigned to a name all
work; so does recursion that a test decided when transforming ends (`pad(x, "same")` calling
itself once with the padding worked out); other recursion is refused with a clear error.
"""
from __future__ import annotations

import ast
import copy
import functools
import inspect
import operator
import types
from dataclasses import dataclass

from .. import rules
from ..errors import TapegenError, UnsupportedSyntaxError
from ..ir import Const, Pack, Var
from .resolve import MISSING, code_of, local_names, marker, native
from .source import FunctionSource, function_source, register_source


@dataclass(frozen=True)
class StaticValue:
    """A local name or parameter bound to an object known at transform time: a function, class or module.

    `tanh = np.tanh`, `pi, sqrt = np.pi, np.sqrt`, a function passed to a helper (`apply(np.tanh, x)`) or
    a helper's default (`def layer(x, act=np.tanh)`): calls through it are resolved as if spelled out.
    """

    obj: object
    atom: object = None  # the value as generated code computes it, for a read that is not a call


@dataclass(frozen=True, eq=False)
class LocalFunction:
    """A `def` or lambda inside the differentiated function, called later by name or passed along.

    It keeps where it was written (`lowerer`: the source, live function and scope it reads names
    from), so a helper it is passed to (`map(lambda x: ..., xs)`, `apply(f, x)`) lowers it there.
    `env` is that function's own (not a copy): as in Python, a call reads the names it closes over as
    they are when it is called (`w = w * 3.0` after `k = lambda z: z * w` changes what `k` computes),
    except those a comprehension entered since (`depth`: how many were open then) binds for itself.
    """

    node: ast.AST
    env: dict
    lowerer: object = None
    depth: int = 0
    defaults: tuple | None = None  # its default values, evaluated where it was written (`lambda v, W=W: ...`)
    enclosing: tuple | None = None  # written in a local function: (that function, the names it binds itself,
    #                                 what its names held when it was called)

    def names(self) -> dict:
        """The names it reads, as they are now where it was written; those the local function it was written in
        reads from further out (a decorator's wrapper reading `scale`), as they are now there (Python's cells)."""
        env = dict(self.env)
        if self.enclosing is not None:  # (not one the local function rebound since it was called: `nonlocal`
            outer, own, entry = self.enclosing  # writes of a def inside it)
            env.update({name: atom for name, atom in outer.names().items()
                        if name not in own and (name not in env or env[name] is entry.get(name))})
        for hidden in getattr(self.lowerer, "comprehensions", [])[self.depth:]:
            for name, outer in hidden.items():
                if outer is None:
                    env.pop(name, None)
                else:
                    env[name] = outer
        return env



DYNAMIC = type("Dynamic", (), {"__repr__": lambda self: "DYNAMIC", "__doc__": "A value known only at run time, "
                 "in the description of a call given to `__tapegen_compose__`."})()


@dataclass(frozen=True, eq=False)
class KnownItems:
    """A list, tuple or dict display whose items the transform must know one by one.

    `[np.tanh, np.sin, relu]`, `{"tanh": np.tanh, "sigmoid": lambda z: ...}`, `[Dense(W), ReLU()]`:
    a call through an item, or a loop over the items calling each, is resolved per item (the loop
    is unrolled), as if the items were spelled out. `items` are StaticValue, LocalFunction,
    KnownItems or atoms; `keys` are a dict's.
    """

    items: tuple
    kind: str
    keys: tuple = ()


@dataclass(frozen=True, eq=False)
class Unsettled:
    """What a name holds where a function or object it was set to inside a loop or branch is not known: in
    a loop's body before this pass sets it (the last pass's), or after the loop or branch when the paths
    through it leave it holding different ones (or none). Reading it is refused, with `why`."""

    why: str
    hint: str
    keys: dict = None  # Recarry keys under which the paths' functions become a Choice, where they may


@dataclass(frozen=True, eq=False)
class Choice:
    """What a name holds after a loop or branch that leaves it holding one function or another, each known
    when transforming (`pool_fn = np.max` in one branch, `np.mean` in the other): a call through it is a
    dispatch that runs when the code runs, one branch per candidate (`candidates`: StaticValue or
    LocalFunction), chosen by the identity of `var`'s value, set beside the name on every path to the
    candidate's `token` (the function itself, or a LocalToken standing for a lambda or local def)."""

    candidates: tuple
    var: object


class LocalToken:
    """What a name set to a lambda or local def holds when the code runs, where a dispatch must tell which one
    it holds: one object per lambda or def in the source (`where` says which), the same on every call."""

    _made: dict = {}

    def __init__(self, where):
        self.where = where

    def __repr__(self):
        return f"<{self.where}>"

    def __call__(self, *args, **kwargs):  # callable, so gradient code differentiated again holds it as a function
        raise TypeError(f"{self!r} stands for a function tapegen inlines; it is not called itself")

    @classmethod
    def of(cls, node, source):
        key = (source.file, node.lineno, node.col_offset)
        if key not in cls._made:
            what = "lambda" if isinstance(node, ast.Lambda) else f"def {node.name}"
            cls._made[key] = cls(f"{what} at {source.display_file}:{node.lineno}")
        return cls._made[key]


class Recarry(Exception):
    """Raised while lowering when a call inside a loop or branch (`cell.forward(x)` in a loop) sets an
    object's attribute that was set before the construct (or a helper's `total += x` rebinds a caller's
    name there, or a fact known before a loop changes in its body): the construct must carry it like a
    variable its body assigns, which its syntax did not show. `keys`: construct number -> {(var name,
    attribute, or "=", "+=", "" for a name carried, checked, or forgotten; or "known" for a name the
    construct sets to a function or object the transform must know, kept apart from its shared vars, and
    "dispatch" for one whose value a call after the construct tests, kept in a var beside it too)};
    ("items", number) and ("classes", number): the class of a list's items, or the classes of object a
    name may hold, through the loop; ("kinds", number): the kind of container ("list", "dict") a name
    None before the loop holds after a pass. The function is lowered again with them (`lowered_until_settled`)."""

    def __init__(self, keys):
        super().__init__(keys)
        self.keys = keys


class NotFollowed(Exception):
    """Raised while lowering when an installed package's function (numpy-ml's `layer.forward`), followed
    like the user's code, holds something tapegen refuses: it is called as it is from then on (in this
    process), and the function being lowered is lowered again."""

    def __init__(self, code, error):
        super().__init__(code, error)
        self.code, self.error = code, error


def lowered_until_settled(make):
    """`make(carried).program()`, again with more carried through loops and branches until none is missing
    (and again with an installed package's function called as it is, should following it be refused)."""
    carried: dict = {}
    while True:
        try:
            return make(carried).program()
        except Recarry as more:
            for construct, keys in more.keys.items():
                carried.setdefault(construct, set()).update(keys)
        except NotFollowed as refused:
            CALLED_AS_IS[refused.code] = refused.error


def user_function(obj):
    """The plain Python function behind `obj` if tapegen should inline calls to it, else None.

    An object says what a call of it inlines with a `__tapegen_inline__()` method (returning a
    function, or None): a `tapegen.differentiate` wrapper inlines the function it wraps, and a
    gradient function (`tg.grad(loss)`) its generated code, so a function taking a gradient
    step inside (MAML) can itself be differentiated. The API layer defines both (api.py).
    """
    inline = getattr(type(obj), "__tapegen_inline__", None)
    if inline is not None:
        return inline(obj)
    return plain_function(obj)


def function_for_call(obj, positional: int, lengths=()):
    """`user_function(obj)` for a call passing `positional` arguments by position (`lengths`: the statics
    of those that are lists or tuples of a length known now, or strings known now: `known_lengths`): an
    object whose code depends
    on them (a gradient of `f(*params)`, or of a function made for its list arguments' lengths) says which
    code with `__tapegen_inline_call__`."""
    by_count = getattr(type(obj), "__tapegen_inline_call__", None)
    return by_count(obj, positional, lengths) if by_count is not None else user_function(obj)


def plain_function(obj):
    """`obj` if it is a Python function of the user's own (not a library's, not tapegen's), else None.

    tapegen's own rule helpers count as the user's (`solve_vjp_a`, `norm_vjp`, ...: the longer rules,
    called by name from gradient code): differentiating gradient code again inlines them, so a
    gradient of a gradient goes through their NumPy code like any other.
    """
    if inspect.isfunction(obj) and obj.__code__ not in CALLED_AS_IS \
            and (not _library_code(obj.__code__.co_filename, obj.__module__)
                 or obj.__module__.startswith(_RULES_PACKAGE) or obj.__module__.startswith(_AUTOGRAD_NUMPY)):
        return obj
    return None


# The code of installed packages' functions whose following was refused (-> the refusal): called as they are
CALLED_AS_IS: dict = {}


# autograd's own Python helpers written in autograd.numpy (`np.linalg.T`, `_dot`): NumPy code, followed as such
_AUTOGRAD_NUMPY = ("autograd.numpy.", "autograd.scipy.")


_RULES_PACKAGE = __name__.rsplit(".", 2)[0] + ".rules."


def _library_code(filename: str, module) -> bool:
    """Code called as it is, not inlined: tapegen itself, the standard library, and the installed packages of
    the NumPy stack and its tools (NumPy and SciPy have rules; the others are not NumPy model code). Other
    installed packages (numpy-ml's layers, a user's own package installed with pip) are followed like the
    user's code, a function of theirs tapegen refuses to follow then called as it is (`NotFollowed`)."""
    import sysconfig
    if "site-packages" in filename or "dist-packages" in filename:
        return not isinstance(module, str) or module.partition(".")[0] in CALLED_PACKAGES
    if filename.startswith(_TAPEGEN_DIR):
        return True
    stdlib = sysconfig.get_paths().get("stdlib", "")
    return bool(stdlib) and filename.startswith(stdlib)


def _installed(fn) -> bool:
    filename = fn.__code__.co_filename
    return ("site-packages" in filename or "dist-packages" in filename) and not fn.__module__.startswith(
        (_RULES_PACKAGE, *_AUTOGRAD_NUMPY))


_TAPEGEN_DIR = __file__.rsplit("/", 2)[0] + "/"  # tapegen/, the package this frontend/ is in
# A function calling itself is inlined again, each call in its caller's place, as long as a test decided
# when transforming ends it within this many levels (`pad2D(X, "same")` works its padding out as a tuple,
# then calls itself once with it); deeper, the recursion depends on values known only when the code runs.
RECURSION_DEPTH = 8
_RECURSIVE: dict = {}  # id(function) -> the opaque primitive its too-deep recursive calls are; ("rules", id(function))
# -> the primitive differentiated when the code runs, or None (rules/recursion.py)


# Installed packages called as they are (see _library_code)
CALLED_PACKAGES = frozenset({
    "numpy", "scipy", "tapegen", "autograd", "jax", "jaxlib", "torch", "tensorflow", "dask", "distributed",
    "pandas", "matplotlib", "sklearn", "numba", "tqdm", "IPython", "pytest", "_pytest", "hypothesis", "astor",
    "libcst", "setuptools", "pip", "toolz", "cloudpickle", "xarray", "sympy", "networkx", "PIL", "six", "attr",
    "attrs", "pydantic", "typing_extensions"})


def users_class(cls) -> bool:
    """A class defined in the user's code (not a library's, not a built-in)."""
    module = inspect.getmodule(cls)
    path = getattr(module, "__file__", None)
    return path is not None and not _library_code(path, cls.__module__)


class Calls:
    """Mixin for `_Lowerer`: inlining calls of user functions."""

    call_stack: tuple = ()
    call_blocks: tuple = ()  # for each call on call_stack, how many blocks were open where it was made
    comprehensions: list  # for each comprehension being lowered, the values of the names it binds outside it

    def stmt_FunctionDef(self, stmt):
        if not stmt.decorator_list:
            return self.bind_static(stmt.name, self.local_function(stmt), stmt)
        plain = copy.copy(stmt)  # @deco def h(...): the def, then h = deco(h), the decorators applied innermost
        plain.decorator_list = []  # first, as Python does
        self.bind_static(stmt.name, self.local_function(plain), stmt)
        value = ast.copy_location(ast.Name(stmt.name, ast.Load()), stmt)
        for decorator in reversed(stmt.decorator_list):
            if not self._transparent_decorator(decorator):
                value = ast.copy_location(ast.Call(decorator, [value], []), decorator)
        if not isinstance(value, ast.Name):
            self.statement(ast.copy_location(ast.Assign([ast.Name(stmt.name, ast.Store())], value), stmt))

    def _transparent_decorator(self, node) -> bool:
        """`@functools.wraps(g)` (it copies a name and a docstring), `@functools.cache` and `@lru_cache(...)` (a cache
        of what the function returns, which tapegen computes at each call: the same values), left out."""
        called = node.func if isinstance(node, ast.Call) else None
        if called is not None and self.static(called) in (functools.wraps, functools.lru_cache):
            return True
        return called is None and self.static(node) in (functools.cache, functools.lru_cache)

    def local_function(self, node):
        """A lambda or `def` written here, reading this function's names when it is called."""
        defaults = tuple(self._default_value(d) for d in node.args.defaults)  # evaluated here, as Python does
        return LocalFunction(node, self.env, self, len(self.comprehensions), defaults, getattr(self, "enclosing", None))

    def _default_value(self, node):
        try:
            return Const(ast.literal_eval(node))
        except ValueError:
            return self.value(node)

    def inline(self, fn, node, args, kwargs, receiver=None):
        """Lower a call of user function `fn`; return its result atoms.

        `receiver`: the class whose method `fn` is, called on `args[0]` (`layer.forward(x)`), so that
        `self.helper(...)` inside is inlined too.
        """
        if inspect.ismethod(fn):  # a bound method held in a name (`f = layer.forward`), or a gradient of one
            fn, args, receiver = self.bound_call(fn, args, receiver)
        code = fn.__code__  # with its closure: egrad(egrad(f)) nests two closures of one code, not recursion
        self.bindings.extend(getattr(fn, "__tapegen_bindings__", ()))  # gradient code: the names it was made for
        if not str(getattr(fn, "__module__", "")).startswith("tapegen.") and not marker(fn, "__tapegen_lifted__"):
            self.bindings.append(("code", fn, None, code_of(fn)))  # (made again if they change)
        key = (code, id(fn.__globals__), tuple(id(cell) for cell in fn.__closure__ or ()))
        if self.call_stack.count(key) >= RECURSION_DEPTH:
            return self.recursive_call(fn, node, args, kwargs)
        if self.undecided_recursion(key) and self.runs_when_called(fn, args, kwargs):
            # called again in a branch or loop of its own decided when the code runs, the second time
            # down (hmm_em's map over a list's items): what ends the recursion is known only then, so it
            # is not unrolled further: lowered again with such calls differentiated when the code runs
            if ("recursion", key) in self.carried:
                return self.recursive_call(fn, node, args, kwargs)
            if self.undecided_recursion(key, before=True):
                raise Recarry({("recursion", key): {(fn.__name__, "when run")}})
        try:
            source = function_source(fn)
        except UnsupportedSyntaxError:
            raise
        try:  # (its statements are normalized as the callee is made: an installed package's `match` on a class
            listed = self.generator_as_list(source)  # pattern is not followed either)
            callee = type(self)(listed, fn, self.reserved, namer=self.namer)
            callee.receiver, callee.self_var = self.receiver, None
            if receiver is not None:
                callee.receiver, callee.pending_self = receiver, True
            elif self.receiver is not None and args and args[0] is self.self_var:
                callee.pending_self = True
            if listed is not source and node not in self.whole_reads and not _keeps_state_alone(fn):
                self.refuse_acting(node, f"the generator `{fn.__name__}(...)`")  # (a loop reading it interleaves)
            result = self._run_callee(callee, callee.node, node, args, kwargs, fn.__defaults__ or (), key,
                                      fn.__name__, fn.__kwdefaults__ or {})
            return self.one_pass(result) if listed is not source else result  # a generator's: read once
        except TapegenError as refused:  # an installed package's function tapegen cannot follow: as it is
            if not _installed(fn):
                raise
            raise NotFollowed(code, refused) from None

    def bound_call(self, method, args, receiver):
        """(function, arguments, receiver) of a call of bound method `method`: its function, called with the
        object it is bound to first (known, as a module's object is; a class for a classmethod)."""
        owner = method.__self__
        if inspect.isclass(owner):
            return method.__func__, [StaticValue(owner)] + list(args), receiver
        held = self.free_object(f"{type(owner).__name__.lower()}_", lambda owner=owner: owner)
        self.know_object(held, owner)
        return method.__func__, [held] + list(args), receiver or (type(owner) if users_class(type(owner)) else None)

    def open_blocks(self) -> int:
        """How many blocks (branches and loop bodies decided when the code runs) are open here."""
        return len(self.outer_blocks) + len(self.blocks)

    def undecided_recursion(self, key, before=False) -> bool:
        """The call of `key` here is inside a branch or loop, decided when the code runs, of the same
        function's body it is called from (`before`: one of the calls on the stack was)."""
        entries = [blocks for called, blocks in zip(self.call_stack, self.call_blocks) if called == key]
        if before:
            return any(inner > outer for outer, inner in zip(entries, entries[1:]))
        return bool(entries) and self.open_blocks() > entries[-1]

    def runs_when_called(self, fn, args, kwargs) -> bool:
        """A call of `fn` (calling itself) that can run as written and be differentiated when the code runs:
        passed no function or object, with parameters tapegen can bind (rules/recursion.py), and reaching no
        object of the module the function has set an attribute (or an item of one) on, here or in the levels
        of `fn` lowered so far: a value it reads or leaves there would carry a derivative that code made for
        `fn`'s arguments alone does not follow."""
        values = [*args, *kwargs.values()]
        if any(isinstance(v, (StaticValue, LocalFunction, KnownItems)) or isinstance(v, Var) and (
                v in self.types or v in self.live) for v in values):
            return False
        if self.set_state_reached(fn, args, kwargs):
            return False
        from ..rules import add_names
        from ..rules.recursion import recursive_primitive
        if ("rules", id(fn)) not in _RECURSIVE:
            _RECURSIVE["rules", id(fn)] = recursive_primitive(fn, add_names)
        return _RECURSIVE["rules", id(fn)] is not None

    def set_state_reached(self, fn, args, kwargs) -> list:
        """`obj.attr` (as text) for each attribute the function has set on an object of the module that a call
        of `fn` run as written could read: an object passed to it, or one a global name `fn` reads holds."""
        set_on = {}
        for base, attr in self.attributes:
            if base in self.live:
                set_on.setdefault(id(self.live[base]), []).append(f"`{base.name}.{attr}`")
        if not set_on:
            return []
        reached = {id(self.live[v]) for v in [*args, *kwargs.values()] if isinstance(v, Var) and v in self.live}
        codes = [fn.__code__]
        while codes:
            code = codes.pop()
            codes += [c for c in code.co_consts if inspect.iscode(c)]
            reached |= {id(fn.__globals__[name]) for name in code.co_names if name in fn.__globals__}
        return sorted(text for obj, texts in set_on.items() if obj in reached for text in texts)

    def recursive_call(self, fn, node, args, kwargs):
        """`fn` calling itself deeper than RECURSION_DEPTH when transforming, or again in a branch or loop
        decided when the code runs (what ends it is known only then: hmm_em's log_partition_function over a
        list of sequences, numpy-ml's rejection sampler): the call runs as written, and its derivatives are
        tapegen's own of `fn`, made when the code runs (rules/recursion.py). Passed an object (a method's
        `self`), the call is opaque: an error only if a derivative must flow through it, and that error says
        it is recursion."""
        from ..rules.table import Primitive
        changed = [name for name, atom in _bound_parameters(fn, args, kwargs)
                   if name in _parameters_changed(fn) and self.may_carry(atom)]
        if changed:  # run as written, its change to the caller's list, dict or array is not seen by the tape
            raise self.unsupported(node, f"{fn.__name__}() calls itself deeper than tapegen unrolls (the end is known "
                                         f"only when the code runs), so the call runs as written, and it changes "
                                         f"its argument `{changed[0]}` in place: tapegen cannot follow a derivative "
                                         f"through that change", f"return the new value instead of changing "
                                                                 f"`{changed[0]}` (or rewrite the recursion as a loop)")
        if self.runs_when_called(fn, args, kwargs):
            return self.emit_multi(_RECURSIVE["rules", id(fn)], args, kwargs, node, 1, [None])[0]
        if any(isinstance(v, (StaticValue, LocalFunction, KnownItems)) for v in [*args, *kwargs.values()]):
            raise self.unsupported(node, f"{fn.__name__}() calls itself (recursion), passing a function, which "
                                         f"tapegen cannot unroll", "rewrite the recursion as a loop")
        state = self.set_state_reached(fn, args, kwargs)
        if state:  # the call, run as written, may read them: a derivative they carry would be lost
            raise self.unsupported(node, f"{fn.__name__}() calls itself deeper than tapegen unrolls (the end is known "
                                         f"only when the code runs), and the function has set {', '.join(state)} on "
                                         f"an object of the module the call can reach: tapegen cannot follow a "
                                         f"derivative through that",
                                   "pass the value to the function as an argument, or rewrite the recursion as a loop")
        note = (f" ({fn.__name__}() calls itself more than {RECURSION_DEPTH} deep when transforming, and is passed an "
                f"object (or takes *args, **kwargs or keyword-only parameters), so tapegen runs it as written: it "
                f"unrolls recursion only where a test decided when transforming ends it; rewrite the recursion as "
                f"a loop)")
        callee = self.free_object(fn.__name__, lambda f=fn: f)
        prim = _RECURSIVE.setdefault(id(fn), Primitive(name=fn.__name__, fn=fn, params=(), defaults={},
                                                        form="opaque", spelling="()", note=note))
        return self.emit_multi(prim, [callee, *args], kwargs, node, 1, [None])[0]

    def inline_local(self, local: LocalFunction, node, args, kwargs):
        home = local.lowerer or self  # where it was written: its lines and the names it reads
        source = home.source
        written = FunctionSource(local.node, source.file, source.lines, source.line_offset)
        source = self.generator_as_list(written)
        if source is not written and node not in self.whole_reads and not _keeps_state_alone(home.fn, tree=local.node):
            self.refuse_acting(node, f"the generator `{getattr(local.node, 'name', 'lambda')}(...)`")
        callee = type(self)(source, home.fn, self.reserved, namer=self.namer)
        callee.env.update(local.names())
        arguments = local.node.args
        callee.enclosing = (local, frozenset(_own_locals(local.node) - _nonlocal_names(local.node)) | {
            a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg,
                            arguments.kwarg] if a is not None}, dict(callee.env))
        callee.scope = home.scope
        defaults = local.defaults if local.defaults is not None else \
            tuple(_literal(d, self) for d in local.node.args.defaults)
        name = getattr(local.node, "name", "lambda")
        declared = _nonlocal_names(local.node)  # `nonlocal count`: the enclosing function's names
        missing = [n for n in declared if n not in callee.env]
        if missing:
            raise self.unsupported(node, f"`{name}` declares `nonlocal {missing[0]}`, which the function it was "
                                         f"written in has not set before this call",
                                   f"set `{missing[0]}` before calling `{name}`")
        own = _own_locals(local.node) - declared  # assigned in it: its own names, whatever ours hold (Python
        if own - callee.env.keys() != own:  # reads them there before they are assigned: UnboundLocalError)
            for own_name in own:
                callee.env.pop(own_name, None)
            callee.scope = copy.copy(home.scope)
            callee.scope.locals = home.scope.locals | own
        declared |= _nonlocal_names_within(local.node)  # (a def inside it declaring one of ours nonlocal)
        captured = {n: atom for n, atom in callee.env.items() if n in _free_names(local.node) or n in declared}
        callee.local_def = True
        try:
            result = self._run_callee(callee, callee.node, node, args, kwargs, defaults, local.node, name)
        except RecursionError:  # (a local function calling itself, unrolled until Python's own limit)
            if local.node in self.call_stack or not any(isinstance(sub, ast.Call) and isinstance(
                    sub.func, ast.Name) and sub.func.id == name for sub in ast.walk(local.node)):
                raise
            raise self.unsupported(node, f"the local function `{name}` calls itself deeper than tapegen can unroll "
                                         f"when transforming (what ends the recursion is known only when the code "
                                         f"runs)", f"define `{name}` at module level, where tapegen differentiates "
                                                   f"such recursion when the code runs, or rewrite it as a loop") \
                from None
        for held, before in captured.items():
            if callee.env.get(held) is not before:
                self._rebind_captured(held, before, callee.env[held], home, name, node)
        return self.one_pass(result) if source is not written else result  # a generator's: read once

    def _rebind_captured(self, name, before, after, home, function, node):
        """A local function changed a list or dict of the function it was written in (`total[0] += v`,
        `d["s"] = v` on a `total` it reads from there): tapegen's item assignment rebinds the name to the
        changed copy, so the name is rebound here too, where Python's closure would see the change."""
        if home is not self or self.env.get(name) is not before or not isinstance(after, Var):
            raise self.unsupported(node, f"`{function}` changes `{name}` of the function it was written in, "
                                         f"which tapegen can follow only where that function calls it itself",
                                   f"return the new value from `{function}` and assign it: {name} = ...")
        crossed = self.crossed_constructs(self.var_block.get(before, self.blocks[0] if not self.outer_blocks
                                                             else self.outer_blocks[0]))
        if name not in self.shared:
            missing = {c: {(name, "=")} for c in crossed if (name, "=") not in self.carried.get(c, ())}
            if missing:  # the loop around the call must carry the name, as if it assigned it
                raise Recarry(missing)
        self.store(name, after, node)

    def lift(self, local: LocalFunction, node, last=False):
        """A lambda or local def as a real function of its own, for a transform to take (`tg.vjp(lambda w:
        loss(w, x), w)`): the values it reads from the function around it become its first parameters
        (returned as atoms, to pass; with `last`, its last: `odeint(rhs, ..., args=...)` passes them after
        its own), functions it reads are held in its closure, names of the module or of the enclosing
        closure stay as they were. Its nodes are the user's, so spans point at their lines.
        """
        home = local.lowerer or self
        fn_node = local.node
        read = _free_reads(fn_node)
        captured, statics, partials = [], {}, []
        env = local.names()
        for name in read:
            value = env.get(name, MISSING)
            if value is MISSING:
                if home.scope.lookup(name) is MISSING and name in home.scope.locals:
                    raise self.unsupported(node, f"`{name}` is read by the function passed here before it is "
                                                 f"assigned", "assign it first")
                continue  # the module's or the enclosing closure's: the lifted function reads it there too
            if isinstance(value, LocalFunction):  # egrad(egrad(f)): a function made here, of known functions only
                inner, reads = self.lift(value, node)
                if reads:  # reading values itself: passed in too, and bound to it first thing (functools.partial)
                    names = [f"{name}_reads_{k}" for k in range(len(reads))]
                    captured += list(zip(names, reads))
                    statics[f"{name}_lifted"], statics[f"{name}_partial"] = inner, functools.partial
                    partials.append(ast.Assign([ast.Name(name, ast.Store())], ast.Call(
                        ast.Name(f"{name}_partial", ast.Load()), [ast.Name(f"{name}_lifted", ast.Load())]
                        + [ast.Name(n, ast.Load()) for n in names], [])))
                    continue
                value = StaticValue(inner)
            if isinstance(value, StaticValue):
                statics[name] = value.obj
            elif isinstance(value, Const):  # a constant (a helper's argnum=0): held in its closure, as a value
                statics[name] = value.value
            elif isinstance(value, (LocalFunction, KnownItems)) or getattr(value, "distribution", None) is not None:
                raise self.unsupported(node, f"the function passed here reads `{name}`, a function or list of "
                                             f"functions made in the differentiated function",
                                       "define the function it calls at module level, or pass it as an argument")
            else:
                captured.append((name, value))
        cells = {**{n: c for n, c in home.scope.cells.items() if n in read and n not in env}, **statics}
        parameters, passed, rebuilt = self._lifted_parameters(captured, node)
        rebuilt = rebuilt + partials
        own = list(fn_node.args.args)
        header = ast.arguments(posonlyargs=[], args=own + [ast.arg(n) for n in parameters] if last else
                               [ast.arg(n) for n in parameters] + own,
                               vararg=fn_node.args.vararg, kwonlyargs=fn_node.args.kwonlyargs,
                               kw_defaults=fn_node.args.kw_defaults, kwarg=fn_node.args.kwarg,
                               defaults=fn_node.args.defaults)
        if isinstance(fn_node, ast.FunctionDef):
            body = rebuilt + fn_node.body
        else:
            body = rebuilt + [ast.copy_location(ast.Return(fn_node.body), fn_node.body)]
        for statement in rebuilt:
            for sub in ast.walk(statement):
                if isinstance(sub, (ast.stmt, ast.expr)):
                    ast.copy_location(sub, fn_node)
        captured = [(None, atom) for atom in passed]
        name = getattr(fn_node, "name", "lambda_")
        lifted = ast.copy_location(ast.FunctionDef(name, header, body, [], None), fn_node)
        for arg in header.args[len(own):] if last else header.args[:len(parameters)]:
            ast.copy_location(arg, fn_node)
        outer = ast.FunctionDef("outer", ast.arguments([], [], None, [], [], None, []),
                                [ast.Assign([ast.Name(n, ast.Store())], ast.Constant(None)) for n in cells]
                                + [lifted, ast.Return(ast.Name(name, ast.Load()))], [], None)
        ast.copy_location(outer, fn_node)
        ast.fix_missing_locations(outer)
        module = compile(ast.Module([outer], []), home.source.file, "exec")
        code = next(c for c in next(c for c in module.co_consts if hasattr(c, "co_code")).co_consts
                    if hasattr(c, "co_code") and c.co_name == name)
        closure = tuple(cells[n] if isinstance(cells[n], type(_cell())) else _cell(cells[n]) for n in code.co_freevars)
        fn = types.FunctionType(code, home.fn.__globals__, name, None, closure or None)
        fn.__tapegen_lifted__ = True  # its code is the enclosing function's: no "code" binding of its own (one on
        # this object, dropped once lowered, would have the enclosing code made again on every call)
        register_source(code, FunctionSource(lifted, home.source.file, home.source.lines, home.source.line_offset))
        return fn, [value for _, value in captured]

    def _lifted_parameters(self, captured, node):
        """(parameter names, atoms to pass, statements rebuilding values) for what a lifted function reads from
        around it: a value as one parameter; a dict, list or tuple whose keys or length are known here (a
        helper's `**kwargs`) item by item, rebuilt at its top, so `f(**kwargs)` inside still knows its keys."""
        parameters, passed, rebuilt = [], [], []
        for name, value in captured:
            keys = self.dict_keys.get(value) if isinstance(value, Var) else None
            length = len(value.items) if isinstance(value, Pack) else self.lengths.get(value) \
                if isinstance(value, Var) else None
            kind = value.kind if isinstance(value, Pack) else self.container_kind(value)
            if keys is not None and kind == "dict" and all(type(k) is str for k in keys):
                names = [f"{name}__{k}" for k in range(len(keys))]
                parts = [self.emit(rules.lookup(operator.getitem), [value, Const(key)], {}, node, None) for key in keys]
                made = ast.Dict([ast.Constant(k) for k in keys], [ast.Name(n, ast.Load()) for n in names])
            elif length is not None and kind in ("list", "tuple"):
                names = [f"{name}__{k}" for k in range(length)]
                parts = list(value.items) if isinstance(value, Pack) else \
                    [self.emit(rules.lookup(operator.getitem), [value, Const(k)], {}, node, None) for k in range(length)]
                made = (ast.List if kind == "list" else ast.Tuple)([ast.Name(n, ast.Load()) for n in names],
                                                                   ast.Load())
            else:
                parameters.append(name)
                passed.append(value)
                continue
            parameters += names
            passed += parts
            rebuilt.append(ast.Assign([ast.Name(name, ast.Store())], made))
        return parameters, passed, rebuilt

    def generator_as_list(self, source: FunctionSource) -> FunctionSource:
        """A generator function as the list of what it yields: `yield v` appends `v`, `yield from g`
        appends each of `g`'s items, and every exit returns the list. A loop over its call (`for W, b in
        unpack_layers(w)`) then walks that list; a generator that never ends is refused."""
        node = source.node
        own = [sub for sub in _own_nodes(node) if isinstance(sub, (ast.Yield, ast.YieldFrom))]
        if not own:
            return source
        for sub in _own_nodes(node):
            if isinstance(sub, ast.While) and isinstance(sub.test, ast.Constant) and sub.test.value and not any(
                    isinstance(s, (ast.Break, ast.Return)) for s in _own_nodes(sub)):
                raise self.unsupported(sub, "a generator that never ends: tapegen runs a generator helper to the "
                                            "end, building the list of what it yields",
                                       "give the loop an end (a count, or a `break`)")
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {a.arg for a in ast.walk(node.args)
                                                                              if isinstance(a, ast.arg)}
        holder = next(name for name in ("yielded", *(f"yielded_{k}" for k in range(2, 100))) if name not in names)
        rewritten = _ListBuilder(holder).visit(copy.deepcopy(node))
        left = [sub for sub in _own_nodes(rewritten) if isinstance(sub, (ast.Yield, ast.YieldFrom))]
        if left:
            raise self.unsupported(left[0], "a `yield` whose value is used (a coroutine) cannot be differentiated",
                                   "yield values only, as statements: `yield x`")
        start = ast.copy_location(ast.Assign([ast.Name(holder, ast.Store())], ast.List([], ast.Load())), node.body[0])
        end = ast.copy_location(ast.Return(ast.Name(holder, ast.Load())), node.body[-1])
        rewritten.body = [start] + rewritten.body + [end]
        ast.fix_missing_locations(rewritten)
        return FunctionSource(rewritten, source.file, source.lines, source.line_offset)

    def _run_callee(self, callee, fn_node, node, args, kwargs, defaults, key, name, kwdefaults=None):
        self.comments.update(callee.comments)
        callee.comments = self.comments
        # Its statements go where the call is; the caller's open blocks stay open around it (an attribute
        # set before a loop the call is in is read there). Should the call set an attribute set before the
        # loop, set_attribute has the function lowered again with the attribute carried through the loop.
        callee.blocks = [self.current]
        callee.outer_blocks = self.outer_blocks + self.blocks[:-1]
        callee.construct_number = self.construct_number
        callee.free, callee.fresh, callee.views, callee.aliases = self.free, self.fresh, self.views, self.aliases
        callee.views_at_entry = len(self.views)
        for shared in ("containers", "lengths", "dict_keys", "free_shapes", "free_values", "nones", "nones_read", "attributes", "types", "live", "constant_items", "item_types", "item_vars",
                       "root_params", "argument_names", "stale", "var_block", "shared_attributes", "computed", "made_objects", "function_attributes", "constructs", "block_owner", "carried", "mixed", "item_origin", "detached", "read_out", "item_parent", "lists_of_lists", "list_items", "root_scope", "held_in", "open_constructs", "attribute_reads", "view_writes", "slices", "item_sharers", "slice_of", "iterators", "read_as_alias", "lazy_reads", "in_place_log", "acting", "whole_reads", "held_by", "maybe_same", "holders", "taken_out", "live_written", "live_items", "stale_attributes",
                       "static_set", "maybe_lists", "view_ops", "written_back", "positions_of", "displays",
                       "displays_changed", "none_vars", "maybe_none", "maybe_absent", "view_made", "view_block",
                       "made_as", "times_held", "put_back", "version_of"):
            setattr(callee, shared, getattr(self, shared))  # what the caller knows of its values holds inside
        callee.free_sources = self.free_sources
        callee.bindings = callee.scope.record = self.bindings  # (the caller's program checks the callee's names)
        callee.call_stack = self.call_stack + (key,)
        callee.caller = self
        callee.call_blocks = self.call_blocks + (self.open_blocks(),)
        bound = self._bind_call(fn_node.args, args, kwargs, defaults, node, name, kwdefaults)
        self.note_displays_of_names(node, args)
        for param, expected in getattr(callee.fn, "__tapegen_statics__", {}).items():
            passed = bound.get(param)  # gradient code made for a function-valued default: that function only
            if not (isinstance(passed, StaticValue) and passed.obj is expected):
                raise self.unsupported(node, f"this gradient was made for {param}={getattr(expected, '__name__', expected)}"
                                             f" (the default), and is called with another `{param}` here",
                                       f"take the gradient of a function that passes `{param}` itself: "
                                       f"tg.grad(lambda *a: f(*a, {param}=...))")
        callee.env.update(bound)
        made = bound.get(fn_node.args.kwarg.arg) if fn_node.args.kwarg is not None else None  # **kwargs: a dict
        callee.entry_params = {param: atom for param, atom in bound.items() if atom is not made}  # (the caller's)
        callee.params = {a for a in bound.values() if isinstance(a, Var) and a is not made}  # made for this call
        bound = list(bound.values())
        if getattr(callee, "pending_self", False):  # a method of self's class: self.helper() inside works too
            callee.self_var = bound[0]
        if isinstance(fn_node, ast.Lambda):
            outputs, as_tuple = callee._return_value(fn_node.body)
        else:
            outputs, as_tuple = callee._statements(fn_node.body)
        for param, passed in callee.written_params.items():
            if self.container_kind(passed) in ("list", "dict") or isinstance(passed, Pack) and passed in self.displays:
                self._write_back_items(passed, callee.env.get(param), node, param)
            else:
                self._write_back(passed, callee.env.get(param), node)
        return Pack(tuple(outputs), "tuple") if as_tuple else outputs[0]

    def _write_back(self, passed, value, node):
        """A helper did `total += x` on an array the caller passed it (`accumulate(h, E[t])`): NumPy changes
        the caller's array in place. Where the caller holds it under one name only (no view, no other
        name: an array it made), that name now holds the helper's new value; else it stays unreadable. (A list
        or dict: `_write_back_items`.)"""
        names = [name for name, atom in self.env.items() if atom == passed]
        if not names and passed in self.item_origin and isinstance(value, Var):
            return self._write_back_into_item(passed, value, node)
        if len(names) != 1 or not isinstance(value, Var) or not (passed in self.fresh or passed in self.root_params) \
                or passed in self.views or any(self.view_base(v) == passed for v in self.views):
            return
        name = names[0]
        self._carry_written(name, passed)
        from .. import rules
        from ..rules.language import in_place_result
        self.store(name, self.emit(rules.lookup(in_place_result), [passed, value], {}, node, None), node)
        if passed in self.params and self.call_stack:  # a parameter here: the array of this helper's caller
            self.written_params.setdefault(name, passed)
        else:
            self.stale.pop(passed, None)

    def _write_back_into_item(self, passed, value, node):
        """A helper changed in place the array its caller passed as an item of a list or dict (sklearn's
        `hidden_activation(activations[i + 1])` doing `np.tanh(X, out=X)`): NumPy changed the array that item is.
        Where one name holds the list or dict, its item is now the helper's new value, as `xs[k] += v` makes
        it (checked when the code runs that nothing else holds the array); else it stays unreadable."""
        container, key = self.item_origin[passed]
        names = [name for name, atom in self.env.items() if isinstance(atom, Var) and atom == container]
        if len(names) != 1 or self.container_kind(container) not in ("list", "dict") or any(
                self._viewed_through(view, passed) for view in self.views if view != passed):
            return  # (a view of the array, `a[1][:2]`, would not show the change)
        root = self.view_base(passed)
        for var in [v for v, (_, _, how) in self.stale.items() if how == "callee" and self.view_base(v) == root]:
            del self.stale[var]  # (marked by `changes_callers_array` in the helper, now written back)
        from .. import rules
        from ..rules.language import in_place_result
        self._carry_written(names[0], container)  # (a dispatch's branch, or a loop, around the call sets it)
        key = key if isinstance(key, Var) else Const(key)
        self.check_item_unshared(container, key, [(names[0], container)], node,
                                 ast.unparse(node))
        written = self.emit(rules.lookup(in_place_result), [passed, value], {}, node, None)
        hidden = {self.namer.invented("key").name: key, self.namer.invented("written").name: written}
        self.env.update(hidden)
        index, item = (ast.copy_location(ast.Name(name, ast.Load()), node) for name in hidden)
        try:
            self.statement(ast.copy_location(ast.Assign(
                [ast.copy_location(ast.Subscript(ast.copy_location(ast.Name(names[0], ast.Load()), node), index,
                                                 ast.Store()), node)], item), node))
        finally:
            for name in hidden:
                self.env.pop(name, None)

    def _viewed_through(self, view, base) -> bool:
        while view in self.views:
            view = self.views[view]
            if view == base:
                return True
        return False

    def _carry_written(self, name, passed):
        """A loop around the call must carry `name`, which the call rebinds, as if it assigned it."""
        crossed = self.crossed_constructs(self.var_block.get(passed, self.blocks[0] if not self.outer_blocks
                                                             else self.outer_blocks[0]))
        if name not in self.shared:
            missing = {c: {(name, "=")} for c in crossed if (name, "=") not in self.carried.get(c, ())}
            if missing:
                raise Recarry(missing)

    def note_displays_of_names(self, node, args):
        """`sgd([w, b], grads, lr)` (d2l's): a list or tuple display of names passed to a helper, which may change
        its items in place (`param[:] = param - lr * grad`). NumPy changes the arrays the names hold: noted here
        (`displays`: the list's atom -> the names), so the helper's check counts those names as the list's own
        (`check_item_unshared`) and the names hold the list's items after the call (`_write_back_items`)."""
        for arg, atom in zip(getattr(node, "args", ()), args):
            if isinstance(arg, (ast.List, ast.Tuple)) and arg.elts and isinstance(atom, (Var, Pack)) and all(
                    isinstance(elt, ast.Name) and isinstance(self.env.get(elt.id), Var) for elt in arg.elts):
                names = tuple(elt.id for elt in arg.elts)
                if len(set(names)) == len(names):  # ([w, w]: one array twice, refused when it runs)
                    self.displays[atom] = names

    def _write_back_display(self, passed, value, node):
        """The names a display passed to a helper was made of (`sgd([w, b], ...)`) now hold the items of the
        helper's new list: NumPy changed the arrays they hold in place. An item a number (rebound in the helper's
        list only, as Python leaves the name) is kept as it was by `in_place_result`."""
        names = self.displays[passed]
        if passed in self.displays_changed:
            raise self.unsupported(node, f"this call changes the list `[{', '.join(names)}]` it passes otherwise than "
                                         f"an item in place (`xs[k] = v`, `xs.append(v)`): Python leaves the names "
                                         f"as they were, and tapegen cannot tell which items each holds after it",
                                   f"hold the list in a name and read the items back after the call: xs = "
                                   f"[{', '.join(names)}]; f(xs, ...); {', '.join(names)} = xs")
        from .. import rules
        from ..rules.language import in_place_result
        for k, name in enumerate(names):
            before = self.env[name]
            self._carry_written(name, before)
            item = self.emit(rules.lookup(operator.getitem), [value, Const(k)], {}, node, None)
            self.store(name, self.emit(rules.lookup(in_place_result), [before, item], {}, node, None), node)
            self.stale.pop(before, None)

    def _write_back_items(self, passed, value, node, param):
        """A helper changed items of a list or dict its caller passed it (`bn_param["running_mean"] = m`,
        `params[k] -= lr * g`): Python changed the caller's, so the one name the caller holds it by now holds
        the helper's new value (an argument's: as `p["W"] = v` on it here, the caller's own is left as it was).
        Refused where anything else may hold it (another name, a list, dict or attribute, the module)."""
        names = [name for name, atom in self.env.items() if atom is passed or isinstance(atom, Var) and atom == passed]
        if not names and passed in self.item_origin and isinstance(value, (Var, Pack)):
            return self.write_through_item(passed, value, node)  # `bn(x, self.bn_params[i])`: the list's item
        if not names and passed in self.displays and isinstance(value, (Var, Pack)) and passed not in self.held_in \
                and passed not in self.holders:
            return self._write_back_display(passed, value, node)  # `sgd([w, b], ...)`: w and b changed
        held = (passed in self.held_in or passed in self.holders) and not (len(names) == 1 and self.held_where_read(
            passed)) or passed in self.free.values() or any(held[0] is passed for held in self.attributes.values())
        if not names and not held and passed in self.fresh and isinstance(passed, Var):
            return  # made for the call alone (`rmsprop(w, dw, {"learning_rate": 0.05})`): nothing else shows it
        elsewhere = len(names) != 1 or held
        if elsewhere or not isinstance(value, (Var, Pack)):
            kind = self.container_kind(passed)
            where = f"`{names[0]}` and `{names[1]}` hold" if len(names) > 1 else \
                "a list, dict, attribute or the module holds (or no name of this function)"
            raise self.unsupported(node, f"this call changes in place the {kind} it passes as `{param}`, which "
                                         f"{where} here: tapegen does not follow that change there",
                                   f"hold it in one local name before the call (`{param} = ...`, then pass "
                                   f"`{param}`), or have the helper return the new {kind}")
        self._carry_written(names[0], passed)
        through = passed in self.item_origin and self.callers_passed(names[0]) is None
        there = self.check_still_item(passed, node) if through else None  # (before the name's var, in a loop,
        self.store(names[0], value, node)                                 #  holds the new value)
        if through:  # `layer = layers[i]` passed: the list holding it changes too, as in Python
            self.write_through_item(passed, value, node, there)
        callers = passed if passed in self.params or passed in self.displays else \
            self.callers_passed(names[0])  # (in a loop: what it carries; a display of names: the caller's)
        if callers is not None and self.call_stack:  # a parameter here too: its caller's list or dict
            self.written_params.setdefault(names[0], callers)
        else:
            self.stale.pop(passed, None)  # (not to be read until written back: `changes_callers`)

    def _bind_call(self, signature, args, kwargs, defaults, node, name, kwdefaults=None):
        """{parameter name: atom} for a call, as Python binds it: `*args` a tuple, `**kwargs` a dict."""
        params = [a.arg for a in signature.posonlyargs + signature.args]
        keyword_only = [a.arg for a in signature.kwonlyargs]
        if len(args) > len(params) and signature.vararg is None:
            raise self.unsupported(node, f"{name}() takes {len(params)} arguments, got {len(args)}")
        bound = dict(zip(params, args))
        if signature.vararg is not None:  # (objects of the user's, or functions, known one by one, as in a
            rest = tuple(args[len(params):])  # display: `Sequential(Linear(W1, b1), ReLU(), ...)`)
            bound[signature.vararg.arg] = KnownItems(rest, "tuple") if self.needs_known(rest) else Pack(rest, "tuple")
        extra = {}
        for keyword, value in kwargs.items():
            if keyword in bound or (keyword not in params + keyword_only and signature.kwarg is None):
                raise self.unsupported(node, f"{name}() got an unexpected or repeated argument `{keyword}`")
            if keyword in params + keyword_only:
                bound[keyword] = value
            else:
                extra[keyword] = value
        first_default = len(params) - len(defaults)
        for i, param in enumerate(params):
            if param not in bound:
                if i < first_default:
                    raise self.unsupported(node, f"{name}() is missing argument `{param}`")
                default = defaults[i - first_default]
                atom = isinstance(default, (Const, Var, Pack, StaticValue, LocalFunction, KnownItems))
                bound[param] = default if atom else _default(default, param, self)  # (an atom: a local
                # function's default, evaluated where it was written)
        for param, default in zip(keyword_only, self._keyword_defaults(signature, kwdefaults)):
            if param not in bound:
                if default is _REQUIRED:
                    raise self.unsupported(node, f"{name}() is missing keyword argument `{param}`")
                bound[param] = default if isinstance(default, Const) else _default(default, param, self)
        if signature.kwarg is not None and any(not isinstance(v, (Const, Var, Pack)) for v in extra.values()):
            bound[signature.kwarg.arg] = KnownItems(tuple(extra.values()), "dict", tuple(extra))  # a function
            # passed by keyword through a wrapper's **kwargs (`layer(x, act=np.sin)` of a @wraps decorator)
        elif signature.kwarg is not None:
            from .. import rules
            from ..rules.language import make_dict
            bound[signature.kwarg.arg] = self.emit(rules.lookup(make_dict), [Const(tuple(extra))] + list(extra.values()),
                                                   {}, node, None)
        return bound

    def lifted_callables(self, prim, node):
        """`odeint(rhs, y0, t, args=(k,))` (or `solve_ivp(lambda t, y: -rate * y, ...)`) where `rhs` is a def or
        lambda of this function reading its names (`theta`): a call of `rhs` written as a function of its
        own taking those names last, `rhs_lifted(y, t, k, theta)`, and their values passed in `args`, through
        which the rules differentiate. The call as it is where `rhs` is no such function."""
        bound = {**dict(zip(prim.params, node.args)), **{kw.arg: kw.value for kw in node.keywords if kw.arg}}
        if any(isinstance(a, ast.Starred) for a in node.args) or any(kw.arg is None for kw in node.keywords):
            return node
        for param in (p for p in prim.callables if p in _PASSES_ARGS and p in bound):
            given = bound[param]
            local = self.local_function(given) if isinstance(given, ast.Lambda) else \
                self.env.get(given.id) if isinstance(given, ast.Name) else None
            if not isinstance(local, LocalFunction) or any(
                    (local.node.args.vararg, local.node.args.kwonlyargs, local.node.args.defaults)):
                continue
            function, captured = self.lift(local, node, last=True)
            held = self.namer.invented(f"{function.__name__}_lifted").name
            self.env[held] = StaticValue(function, self.free_object(held, lambda f=function: f))
            names = []
            for atom in captured:
                names.append(self.namer.invented("captured").name)
                self.env[names[-1]] = atom
            extra = ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load())
            given_args = bound.get(_PASSES_ARGS[param])
            passed = extra if given_args is None or isinstance(given_args, ast.Constant) and given_args.value is None \
                else ast.BinOp(ast.Call(ast.Name("tuple", ast.Load()), [given_args], []), ast.Add(), extra)
            position = prim.params.index(param)
            args = [ast.Name(held, ast.Load()) if k == position else a for k, a in enumerate(node.args)]
            keywords = [ast.keyword(kw.arg, ast.Name(held, ast.Load())) if kw.arg == param else kw
                        for kw in node.keywords if kw.arg != _PASSES_ARGS[param]]
            if prim.params.index(_PASSES_ARGS[param]) < len(args):
                args[prim.params.index(_PASSES_ARGS[param])] = passed
            else:
                keywords.append(ast.keyword(_PASSES_ARGS[param], passed))
            node = ast.fix_missing_locations(ast.copy_location(ast.Call(node.func, args, keywords), node))
            for sub in ast.walk(node):
                if not hasattr(sub, "lineno") and "lineno" in sub._attributes:
                    ast.copy_location(sub, node)
        return node

    def functions_as_values(self, node):
        """A call passing a lambda or local def to a custom rule's primitive (`fixed_point(rev_iter, (a, x, g),
        ...)` in fixed_point's own bwd, differentiated again): the function lifted (a function of its own) and,
        where it reads values of this function, made a value when the code runs, `partial(rev_iter_lifted,
        *what it reads)`. A value it reads that carries a derivative is refused there: the rule's bwd gives a
        function no cotangent, so that derivative would be lost."""
        def as_value(given):
            local = self.local_function(given) if isinstance(given, ast.Lambda) else \
                self.env.get(given.id) if isinstance(given, ast.Name) else None
            if not isinstance(local, LocalFunction) or hasattr(local.node, "partial_parts"):
                return given
            function, captured = self.lift(local, node)
            held = self.free_object(f"{function.__name__}_lifted", lambda f=function: f)
            made = self.made_partial([held, *captured], {}, node) if captured else held
            name = self.namer.invented(f"{function.__name__}_value").name
            self.env[name] = made
            return ast.copy_location(ast.Name(name, ast.Load()), given)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(kw.arg is None for kw in node.keywords):
            return node
        args = [as_value(a) for a in node.args]
        keywords = [ast.copy_location(ast.keyword(kw.arg, as_value(kw.value)), kw) for kw in node.keywords]
        return ast.copy_location(ast.Call(node.func, args, keywords), node)

    def _keyword_defaults(self, signature, kwdefaults):
        """The defaults of keyword-only parameters: a live function's values, or a local def's literals."""
        if kwdefaults is not None:
            return [kwdefaults.get(a.arg, _REQUIRED) for a in signature.kwonlyargs]
        return [_REQUIRED if d is None else _literal(d, self) for d in signature.kw_defaults]


_REQUIRED = object()  # a keyword-only parameter without a default

# Parameters of a primitive taking a function (odeint's `func`, solve_ivp's `fun`) -> the one passing it more
# arguments (a lifted def's captured values go last there)
_PASSES_ARGS = {"func": "args", "fun": "args"}


def _free_reads(fn_node) -> list:
    """The names a def or lambda reads from around it, in the order first read: not its own parameters and
    locals, nor, where a lambda, def or comprehension inside it reads a name, that one's own."""
    read = []

    def visit(node, bound):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and node.id not in bound and node.id not in read:
                read.append(node.id)
            return
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None),
                            *getattr(node, "decorator_list", ())]:  # (evaluated where it is defined)
                visit(default, bound)
            inner = bound | local_names(node)
            for part in node.body if isinstance(node.body, list) else [node.body]:
                visit(part, inner)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = set(bound)
            for generator in node.generators:
                visit(generator.iter, inner)
                inner |= {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
                for condition in generator.ifs:
                    visit(condition, inner)
            for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
                visit(part, inner)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, bound)

    for default in [*fn_node.args.defaults, *(d for d in fn_node.args.kw_defaults if d is not None)]:
        visit(default, set())
    own = local_names(fn_node)
    for part in fn_node.body if isinstance(fn_node.body, list) else [fn_node.body]:
        visit(part, own)
    return read


class _ListBuilder(ast.NodeTransformer):
    """`yield v` -> `<holder>.append(v)`, `yield from g` -> a loop appending g's items, `return` -> `return <holder>`,
    in one function (not in functions nested in it)."""

    def __init__(self, holder):
        self.holder = holder
        self.depth = 0

    def visit_FunctionDef(self, node):
        self.depth += 1
        if self.depth == 1:
            self.generic_visit(node)
        self.depth -= 1
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def visit_Expr(self, stmt):
        value = stmt.value
        if isinstance(value, ast.YieldFrom):  # yield from g: for each of g, append it
            item = ast.copy_location(ast.Name(f"{self.holder}_item", ast.Store()), value)
            append = self.visit_Expr(ast.copy_location(ast.Expr(ast.copy_location(
                ast.Yield(ast.Name(item.id, ast.Load())), value)), stmt))
            return ast.copy_location(ast.For(item, value.value, [append], []), stmt)
        if isinstance(value, ast.Yield):
            item = value.value if value.value is not None else ast.Constant(None)
            call = ast.Call(ast.Attribute(ast.Name(self.holder, ast.Load()), "append", ast.Load()), [item], [])
            return ast.copy_location(ast.Expr(ast.copy_location(call, value)), stmt)
        return self.generic_visit(stmt)

    def visit_Return(self, stmt):
        return ast.copy_location(ast.Return(ast.Name(self.holder, ast.Load())), stmt)


def _own_nodes(node):
    """The nodes of function `node`, not those of functions nested in it."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        yield child
        yield from _own_nodes(child)


_CHANGING_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
                               "popitem", "sort", "reverse", "fill", "put", "itemset", "resize", "add", "discard",
                               "__setitem__", "__delitem__", "__iadd__", "send", "write"})


def _parameters_changed(fn) -> set:
    """The parameters of function `fn` of the user's it may change in place (`xs.append(v)`, `xs[k] = v`,
    `del xs[k]`, `xs += ys`), where the object is its caller's; all of them where its source cannot be read."""
    try:
        tree = function_source(fn).node
    except Exception:
        return set(inspect.signature(fn).parameters)
    params = {a.arg for a in (*tree.args.posonlyargs, *tree.args.args, *tree.args.kwonlyargs)}
    changed = set()
    for sub in _own_nodes(tree):
        if isinstance(sub, ast.Subscript) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            root = sub.value
            while isinstance(root, ast.Subscript):
                root = root.value
            changed.add(getattr(root, "id", None))
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _CHANGING_METHODS:
            changed.add(getattr(sub.func.value, "id", None))
        elif isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name):
            changed.add(sub.target.id)
    return changed & params


def _bound_parameters(fn, args, kwargs) -> list:
    """(parameter name, atom) for each argument of a call of `fn` with `args` and `kwargs`."""
    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs)
    except TypeError:
        return []
    return list(bound.arguments.items())


def _keeps_state_alone(fn, depth=3, tree=None) -> bool:
    """Whether function `fn` of the user's (its parsed `tree`, for a local def) surely changes nothing outside
    itself: no `global` or `nonlocal`, no write into an item or attribute, no method changing its object, no
    call of a function of the user's that may (to `depth` calls deep)."""
    if tree is None:
        try:
            tree = function_source(fn).node
        except Exception:  # no source: it may
            return False
    for sub in ast.walk(tree):
        if isinstance(sub, (ast.Global, ast.Nonlocal, ast.NamedExpr)) or isinstance(
                sub, (ast.Subscript, ast.Attribute)) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            return False
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _CHANGING_METHODS:
            return False
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
            called = user_function(fn.__globals__.get(sub.func.id))
            if called is not None and called is not fn and (depth == 0 or not _keeps_state_alone(called, depth - 1)):
                return False
    return True


def _own_locals(node) -> set:
    """The names a local def or lambda binds itself (Python's rule for its locals), not those a def nested
    in it binds: assigned, a `for` or `with` target, a def or class of its own; less those it declares
    `global`."""
    nodes = [node, *_own_nodes(node)]
    targets = {id(n) for sub in nodes if isinstance(sub, ast.comprehension) for n in ast.walk(sub.target)}
    names = {sub.id for sub in nodes if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del))
             and id(sub) not in targets}
    names |= {child.name for sub in nodes for child in ast.iter_child_nodes(sub)
              if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and child is not node}
    return names - {name for sub in nodes if isinstance(sub, ast.Global) for name in sub.names}


def _default(value, param, lowerer):
    """A helper's default value as the call binds it: a constant, a function known now, or any other object
    (an array, an object of the user's: `act=HALF`), read by generated code as the default itself."""
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return Const(value)
    if isinstance(value, tuple) and all(v is None or isinstance(v, (bool, int, float, complex, str)) for v in value):
        return Const(value)  # lengths=(1.0, 0.8, 0.5)
    if (callable(value) or inspect.ismodule(value)) and (inspect.isclass(value) or not users_class(type(value))):
        return StaticValue(native(value), lowerer.free_object(f"{param}_default", lambda default=value: default))
        # (`act=np.tanh` under `import autograd.numpy as np`: NumPy's tanh; read as a value, `x.astype(dtype)`
        # of `dtype=np.float64`, the default itself)
    atom = lowerer.free_object(f"{param}_default", lambda default=value: default)
    lowerer.know_object(atom, value)  # an object of the user's: its methods (`__call__`) are inlined
    return atom


def _literal(node, lowerer):
    try:
        return Const(ast.literal_eval(node))
    except ValueError:
        raise lowerer.unsupported(node, "a default argument value that is not a literal",
                                  "pass the argument explicitly") from None


def _nonlocal_names(node) -> set:
    """The names a local def declares `nonlocal` (in its own body, not in defs nested in it)."""
    if not isinstance(node, ast.FunctionDef):
        return set()
    found, todo = set(), list(node.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, ast.Nonlocal):
            found.update(stmt.names)
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(child for child in ast.iter_child_nodes(stmt) if isinstance(child, ast.stmt))
    return found


def _nonlocal_names_within(node) -> set:
    """Names that defs nested in `node` declare `nonlocal` and `node` itself does not bind: names of the
    function around `node`, which a call of `node` may rebind through them."""
    if not isinstance(node, ast.FunctionDef):
        return set()
    own = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    deep, todo = set(), list(node.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            deep |= _nonlocal_names(stmt) | _nonlocal_names_within(stmt)
            own.add(stmt.name)
            continue
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            own |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        todo.extend(child for child in ast.iter_child_nodes(stmt) if isinstance(child, ast.stmt))
    return deep - own - _nonlocal_names(node)


def _free_names(node) -> set:
    """The names a local def or lambda reads from where it was written: read, never bound in it."""
    arguments = node.args
    bound = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    bound |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    read = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (read if isinstance(sub.ctx, ast.Load) else bound).add(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub is not node:
            bound.add(sub.name)
    return read - bound


def _cell(value=None):
    """A closure cell holding `value` (a function a lifted lambda reads, known when transforming)."""
    return (lambda: value).__closure__[0]

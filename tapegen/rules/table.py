"""Primitives and their derivative rules, and the tables that hold them.

A primitive is a callable tapegen knows (`numpy.tanh`, `operator.add`) with a
declared signature. A rule is an ordinary function; its parameter names say
what it reads, and that decides what the forward pass saves:

- a primitive parameter name (`x`, `x1`, `a`, `axis`): that input's value;
- `<param>_shape`: the input's shape (saved instead of the input itself);
- `<param>_meta`: shape and dtype for an array, the type for a container;
- `<param>_is_const`: True if the input is a literal in the source (`0` in `np.maximum(x, 0)`),
  known when the function is transformed;
- `<param>_active`: True if a derivative flows through that input (for a list argument, a tuple
  of bools, one per item), known when the function is transformed;
- `y`: the primitive's output; `g`: the output's cotangent (VJP rules);
- `<param>_dot`: an input's tangent (JVP rules).

Rules whose body is one `return` expression are inlined into generated code;
longer ones are called by name.
"""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from dataclasses import dataclass, field

import numpy as np

# What a rule can read about an input besides its value, and how the forward pass computes it.
SUFFIXES = {"shape": "shape", "meta": "meta", "is_const": "is_const", "active": "active"}


@dataclass(eq=False)
class Rule:
    """A derivative rule: a VJP (`kind="vjp"`) or JVP for one argument of a primitive."""

    fn: object
    kind: str
    wrt: str
    reads: tuple
    partial: bool = False  # may return None: an item of a container's cotangent that has none

    @property
    def inline(self):
        """The rule's single expression (an `ast.expr`) if it can be inlined, else None; parsed on first use."""
        try:
            return self._inline
        except AttributeError:
            self._inline = _inline_expression(self.fn)
            return self._inline

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def where(self) -> str:
        code = self.fn.__code__
        return f"{code.co_filename}:{code.co_firstlineno}"


def named_rule(fn, add_names, name, kind, param, reads) -> Rule:
    """A rule calling `fn` (a closure over what it needs: autograd's maker, the user's function) by `name`
    from generated code; `add_names` is rules.add_names, which makes the name unique and callable."""
    (name,) = add_names({name: fn})
    fn.__name__ = fn.__qualname__ = name
    rule = Rule(fn, kind, param, reads)
    rule._inline = None  # called by name: its body reads what it closes over
    return rule


@dataclass(eq=False)
class Primitive:
    """A function tapegen can differentiate through, and how to write a call to it.

    `form` says how generated code spells a call: "call" (`np.tanh(x)`),
    "binop" / "unop" / "compare" (an operator symbol), "getitem" (`a[index]`),
    or "method" (`a.astype(dtype)`).
    """

    name: str
    fn: object
    params: tuple
    defaults: dict
    form: str = "call"
    spelling: str = ""
    variadic: str | None = None
    differentiable: bool = True
    outputs: int = 1
    sequences: tuple = ()  # parameters taking a list of arrays: their cotangent is a list
    keyword_only: frozenset = frozenset()  # declared after `*`: never bound or written positionally
    inert: tuple = ()  # parameters no derivative flows through (read for their value only)
    callables: tuple = ()  # inert parameters taking a function the rules call: one holding a derivative is refused
    note: str = ""  # an opaque call: why tapegen runs it as written (said when a derivative must flow through it)
    hint: str = ""  # an opaque call: the fix a NoRuleError names instead of registering a rule
    renamed: dict = field(default_factory=dict)  # the function's own name of a parameter -> tapegen's (a `y`
    # clashing with the name rules give the output): such a function is called with every argument by position
    vjps: dict = field(default_factory=dict)
    jvps: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


class RuleError(Exception):
    """A rule table is malformed; names the rule's own file and line."""


class RuleTable:
    """The primitives and rules of one area of NumPy, built by one module."""

    def __init__(self, name: str):
        self.name = name
        self.primitives: dict = {}
        self.methods: dict = {}

    def op(self, fn, signature: str, *, name=None, form="call", spelling=None,
           differentiable=True, outputs=1, sequences=(), inert=(), callables=()):
        """Declare `fn` a primitive with the given Python parameter list."""
        params, defaults, variadic, keyword_only = _parse_signature(signature)
        for reserved in ("y", "g"):
            if reserved in params:
                raise RuleError(f"{getattr(fn, '__name__', fn)}: a parameter may not be called {reserved!r} "
                                f"(rules read the output as y and its cotangent as g); rename it")
        prim = Primitive(
            name=name or getattr(fn, "__name__", str(fn)), fn=fn, params=params, defaults=defaults,
            form=form, spelling=spelling or _spelling(fn), variadic=variadic,
            differentiable=differentiable, outputs=outputs, sequences=tuple(sequences),
            keyword_only=frozenset(keyword_only), inert=tuple(inert) + tuple(callables),
            callables=tuple(callables))
        self.primitives[fn] = prim
        return prim

    def nondiff(self, fn, signature: str, **options):
        """Declare `fn` a primitive with no gradient: its outputs are constants."""
        return self.op(fn, signature, differentiable=False, **options)

    def method(self, method_name: str, fn, receiver: str = "a"):
        """`x.<method_name>(...)` means `fn(x, ...)` for arrays."""
        self.methods[method_name] = (fn, receiver)

    def vjp(self, fn, wrt: str, partial: bool = False):
        """Decorator: register a VJP rule of primitive `fn` for its argument `wrt`.

        `partial`: the rule may return None (no cotangent), as taking one item of a container's
        cotangent does; generated code then checks for None before using the result.
        """
        return self._rule(fn, wrt, "vjp", partial)

    def jvp(self, fn, wrt: str):
        """Decorator: register a JVP rule of primitive `fn` for its argument `wrt`."""
        return self._rule(fn, wrt, "jvp")

    def _rule(self, fn, wrt, kind, partial=False):
        def register(rule_fn):
            prim = self.primitives.get(fn)
            if prim is None:
                raise _rule_error(rule_fn, f"{kind} rule for {fn!r}, which this table has not declared with .op()")
            if wrt not in prim.params:
                raise _rule_error(rule_fn, f"{prim.name} has no parameter {wrt!r} (it has {', '.join(prim.params)})")
            reads = parameter_names(rule_fn)
            allowed = _readable_names(prim, kind)
            for read in reads:
                if read not in allowed:
                    raise _rule_error(rule_fn, f"rule parameter {read!r} is not something a {kind} rule of "
                                               f"{prim.name} can read ({', '.join(sorted(allowed))})")
            table = prim.vjps if kind == "vjp" else prim.jvps
            table[wrt] = Rule(rule_fn, kind, wrt, reads, partial)
            return rule_fn
        return register


_VARARGS, _VARKEYWORDS = inspect.CO_VARARGS, inspect.CO_VARKEYWORDS


def parameter_names(fn) -> tuple:
    """`fn`'s parameter names in `inspect.signature`'s order, read from its code object where that is
    plain (no `*args`, `**kwargs`): `inspect.signature` of the 1,300 rules and helpers was most of import."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & (_VARARGS | _VARKEYWORDS) or hasattr(fn, "__wrapped__") \
            or hasattr(fn, "__signature__"):
        return tuple(inspect.signature(fn).parameters)
    return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def combine(*tables: RuleTable):
    """Merge tables into (primitives by callable, methods by name); duplicates are errors."""
    primitives, methods = {}, {}
    for table in tables:
        for fn, prim in table.primitives.items():
            if fn in primitives:
                raise RuleError(f"{prim.name} is declared by both {table.name} and another table")
            primitives[fn] = prim
        methods.update(table.methods)
    return primitives, methods


def _readable_names(prim: Primitive, kind: str) -> set:
    names = set(prim.params) | {f"{p}_{suffix}" for p in prim.params for suffix in SUFFIXES} | {"y"}
    names |= {"g"} if kind == "vjp" else {f"{p}_dot" for p in prim.params}
    return names


def _parse_signature(signature: str):
    params, defaults, variadic, keyword_only = _parsed_signature(signature)
    return params, dict(defaults), variadic, list(keyword_only)


@functools.lru_cache(maxsize=None)
def _parsed_signature(signature: str):
    """The parameter list, parsed once per distinct signature (many ops share one)."""
    simple = _simple_signature(signature)
    if simple is not None:
        return simple
    args = ast.parse(f"def f({signature}): pass").body[0].args
    params = [a.arg for a in args.posonlyargs + args.args]
    values = [ast.literal_eval(d) for d in args.defaults]
    defaults = dict(zip(params[len(params) - len(values):], values))
    variadic = args.vararg.arg if args.vararg else None
    if variadic:
        params.append(variadic)
    for kw, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(kw.arg)
        if default is not None:
            defaults[kw.arg] = ast.literal_eval(default)
    return tuple(params), defaults, variadic, [kw.arg for kw in args.kwonlyargs]


_LITERALS = {"None": None, "True": True, "False": False}


def _simple_signature(signature: str):
    """`_parsed_signature` of a list of names with `None`, bool or number defaults, `*args` and `*`, read
    without `ast.parse` (which was a tenth of import time); None for anything else."""
    if any(ch in signature for ch in "()[]{}'\"/"):
        return None
    params, defaults, variadic, keyword_only = [], {}, None, []
    for part in (p.strip() for p in signature.split(",") if p.strip()):
        name, equals, text = (s.strip() for s in part.partition("="))
        if name == "*":
            keyword_only = []  # the names after it
            variadic = variadic or ""
            continue
        if name.startswith("*"):
            if name.startswith("**") or variadic is not None:
                return None
            variadic, name = name[1:], name[1:]
        elif variadic is not None:
            keyword_only.append(name)
        if not name.isidentifier():
            return None
        params.append(name)
        if equals:
            value = _literal(text)
            if value is _NOT_LITERAL:
                return None
            defaults[name] = value
    return tuple(params), defaults, variadic or None, keyword_only


_NOT_LITERAL = object()


def _literal(text):
    if text in _LITERALS:
        return _LITERALS[text]
    if not text[:1].isdigit() and text[:1] not in "-+.":
        return _NOT_LITERAL  # a name (`inf` would parse as a float)
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return _NOT_LITERAL


def _spelling(fn) -> str:
    name = getattr(fn, "__name__", None)
    for prefix, module in (("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft)):
        if name and getattr(module, name, None) is fn:
            return f"{prefix}.{name}"
    return name or ""


_MODULES: dict = {}  # file name -> {first line: FunctionDef}, for files parsed whole


def _module_functions(filename: str) -> dict:
    """{first line: FunctionDef} for every function in a rules module, parsed once per file."""
    found = _MODULES.get(filename)
    if found is not None:
        return found
    import linecache
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except SyntaxError:
        return _MODULES.setdefault(filename, {})
    found = {}
    statements = list(tree.body)
    while statements:  # statements only: walking every expression node too took most of the first gradient
        node = statements.pop()
        if isinstance(node, ast.FunctionDef):
            found[min([d.lineno for d in node.decorator_list] + [node.lineno])] = node
        for field in ("body", "orelse", "finalbody", "handlers"):
            statements.extend(child for child in getattr(node, field, ()) if isinstance(child, ast.AST))
    _MODULES[filename] = found
    return found


def _function_node(code):
    """The FunctionDef of `code`: from its module's parse if that was made, else from its own lines alone
    (a rules module is 100 times longer than a rule, and a transform reads only the rules it applies)."""
    whole = _MODULES.get(code.co_filename)
    if whole is not None:
        return whole.get(code.co_firstlineno)
    import linecache
    lines = linecache.getlines(code.co_filename)
    start = code.co_firstlineno - 1
    node = None
    if 0 <= start < len(lines):
        try:
            node = ast.parse(textwrap.dedent("".join(_block(lines, start)))).body[0]
        except (SyntaxError, IndexError):  # the block ended early (a string or bracket closing further left)
            pass
    if not isinstance(node, ast.FunctionDef):
        node = _module_functions(code.co_filename).get(code.co_firstlineno)
    return node


def _block(lines, start):
    """The lines of the definition starting at `start` (its decorators, `def` and body): up to the first line
    of code indented no further than the `def`. Comment lines and blank lines do not end it."""
    first = start
    while first < len(lines) and not lines[first].lstrip().startswith(("def ", "async def ")):
        first += 1  # decorators
    indent = len(lines[first]) - len(lines[first].lstrip()) if first < len(lines) else 0
    end = first + 1
    while end < len(lines):
        text = lines[end].lstrip()
        if text and not text.startswith("#") and len(lines[end]) - len(text) <= indent:
            break
        end += 1
    return lines[start:end]


def _inline_expression(rule_fn):
    """The rule's expression if its body is a single `return <expr>`, else None."""
    code = getattr(rule_fn, "__code__", None)
    node = _function_node(code) if code else None
    if node is None:
        try:
            node = ast.parse(textwrap.dedent(inspect.getsource(rule_fn))).body[0]
        except (OSError, TypeError, SyntaxError, IndexError):
            return None
    body = [s for s in node.body if not _is_docstring(s)]
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        binds = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.NamedExpr)
        if not any(isinstance(node, binds) for node in ast.walk(body[0].value)):
            return body[0].value  # an expression that binds no names of its own can be inlined
    return None


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _rule_error(rule_fn, message):
    code = rule_fn.__code__
    return RuleError(f"{code.co_filename}:{code.co_firstlineno}: {rule_fn.__name__}: {message}")

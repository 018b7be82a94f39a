"""The intermediate representation: a Wengert list of single-assignment equations.

Every pass reads and returns these frozen values; none of them is mutated.
`str(program)` prints a Python-like listing, one primitive a line, with the
user's source line beside the first equation lowered from it.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Union



# Ops that update their last output in place (`A[i] = v`, `xs.append(v)`, `v = tape_pop(xs, v)`), rather than
# bind a new value to it.
IN_PLACE = frozenset({"setitem", "append", "tape_pop"})

# Ops whose result may share memory with an input: augmented assignment on it would write through, and
# writing into the input changes it (the frontend refuses the first; the backward pass keeps a region it
# restores while a view of it is still read).
VIEW_OPS = frozenset({"getitem", "reshape", "transpose", "ravel", "squeeze", "expand_dims", "swapaxes",
                      "broadcast_to", "moveaxis", "rollaxis", "atleast_1d", "atleast_2d", "atleast_3d", "diagonal",
                      "diag", "real", "imag", "flip", "fliplr", "flipud", "rot90", "split", "array_split",
                      "hsplit", "vsplit", "dsplit", "asarray", "conj_method"})  # (np.asarray(x) of an array is x
#                                                                             itself, so is a real array's x.conj())

@dataclass(frozen=True)
class Span:
    """Where an equation came from in the user's source.

    `line` is 1-based; `col` and `end_col` are 0-based character columns
    (not bytes) into `text`, the whole first source line.
    """

    file: str
    line: int
    col: int
    end_col: int
    text: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"


@dataclass(frozen=True, eq=False)
class Var:
    """A named value. Names are unique within a program (single assignment)."""

    name: str

    def __str__(self) -> str:
        return self.name

    # What the dataclass would write, without building a tuple for each hash: every pass keys sets and dicts by
    # vars, and a hash was a tenth of a long function's transform.
    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Var:
            return NotImplemented
        return self.name == other.name

    def __hash__(self) -> int:
        return hash(self.name)


@dataclass(frozen=True, eq=False)
class Const:
    """A value known when the function is transformed (a literal, a slice, ...)."""

    value: Any

    def __str__(self) -> str:
        return _const_text(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Const) and type(other.value) is type(self.value) and _same(other.value, self.value)

    def __hash__(self) -> int:
        return hash((type(self.value).__name__, repr(self.value)))


@dataclass(frozen=True)
class Pack:
    """A list or tuple of atoms passed as one argument (`np.stack([a, b])`)."""

    items: tuple
    kind: str = "list"

    def __str__(self) -> str:
        inner = ", ".join(str(item) for item in self.items)
        return f"[{inner}]" if self.kind == "list" else f"({inner}{',' if len(self.items) == 1 else ''})"


Atom = Union[Var, Const, Pack]


def atom_vars(atom: Atom) -> tuple:
    """The variables an atom reads, in order."""
    if isinstance(atom, Var):
        return (atom,)
    if isinstance(atom, Pack):
        return tuple(v for item in atom.items for v in atom_vars(item))
    return ()


@dataclass(frozen=True)
class Eqn:
    """`outputs = op(**inputs)`: one primitive application.

    `inputs` pairs each of the op's parameter names with an atom, in the op's
    parameter order; `outputs` has one var, or several for an op returning a
    tuple (`np.linalg.eigh`).
    """

    op: Any
    inputs: tuple
    outputs: tuple
    span: Span

    def input(self, name: str, default: Any = None) -> Any:
        for key, atom in self.inputs:
            if key == name:
                return atom
        return default

    @functools.cached_property  # computed once: every pass asks each equation what it reads, many times over
    def reads(self) -> tuple:
        return tuple(v for _, atom in self.inputs for v in atom_vars(atom))

    def __str__(self) -> str:
        defaults = getattr(self.op, "defaults", {})
        shown = [(key, atom) for key, atom in self.inputs
                 if not (key in defaults and isinstance(atom, Const) and atom == Const(defaults[key]))]
        args = ", ".join(str(atom) if key not in defaults else f"{key}={atom}" for key, atom in shown)
        lhs = ", ".join(str(v) for v in self.outputs)
        return f"{lhs} = {self.op.name}({args})"


@dataclass(frozen=True)
class Catch:
    """What makes an `If` a protected statement: `then` runs inside `try:`, and `orelse` is the `except
    classes as bound:` block, run instead of the rest of `then` when a statement there raises one of
    `classes` (an atom; the branch taken is always on the tape). `mark` names the tape's length before
    `then`: pushes `then` made before it raised are dropped, and `kept` holds the values of the vars it saves
    there before they are set, put back where it raised (frontend/normalize.py makes these of the user's
    `try`). `bound`, the exception, is defined at the start of `orelse`."""

    classes: Atom
    mark: Var
    bound: Var
    kept: Var


@dataclass(frozen=True)
class If:
    """`if cond: then else: orelse`. Vars assigned in a branch keep one name across both.

    With `catch`, `then` is a statement run in `try:` and `orelse` its `except` block (`cond` is unused).
    With `manager` (an Eqn with no outputs: `np.errstate(divide="raise")`), `then` runs in `with manager:`,
    always (`cond` is True, `orelse` empty), and so does its backward pass."""

    cond: Atom
    then: tuple
    orelse: tuple
    span: Span
    catch: Catch | None = None
    manager: Eqn | None = None

    @property
    def reads(self) -> tuple:
        return atom_vars(self.cond) + (atom_vars(self.catch.classes) if self.catch is not None else ()) + \
            (self.manager.reads if self.manager is not None else ())

    def with_blocks(self, then, orelse, cond=None) -> "If":
        """This statement with other blocks (and condition): what every pass rebuilding one makes."""
        return If(self.cond if cond is None else cond, tuple(then), tuple(orelse), self.span, self.catch,
                  self.manager)


@dataclass(frozen=True)
class Loop:
    """`for target in iterable: body` (iterable a range), or `while test: body`.

    For a while loop, `test_body` computes `test` before each iteration.
    `counter` counts the iterations entered (the tape's trip count).
    """

    kind: str
    target: Var | None
    iterable: Atom | None
    test_body: tuple
    test: Atom | None
    body: tuple
    counter: Var
    span: Span

    @property
    def reads(self) -> tuple:
        return atom_vars(self.iterable) if self.iterable is not None else ()


@dataclass(frozen=True)
class Exit:
    """`break` or `continue`, always the last statement of its branch (see frontend/normalize.py)."""

    kind: str
    span: Span
    reads = ()


@dataclass(frozen=True)
class Push:
    """Forward pass: `tape.append(value)`; `value` is an atom, or an Eqn with no outputs (an expression)."""

    value: object
    span: Span


@dataclass(frozen=True)
class Pop:
    """Backward pass: restore `var` from the tape (`var = tape.pop()`), or `var[index] = tape.pop()`."""

    var: Var
    index: object
    span: Span


@dataclass(frozen=True)
class Guard:
    """Backward pass: `if var is not None: body` around rules whose cotangent may be zero."""

    var: Var
    body: tuple
    span: Span


def walk(body):
    """Every equation and statement in `body`, depth first, in program order."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, If):
            yield from walk(stmt.then)
            yield from walk(stmt.orelse)
        elif isinstance(stmt, Loop):
            yield from walk(stmt.test_body)
            yield from walk(stmt.body)
        elif isinstance(stmt, Guard):
            yield from walk(stmt.body)


def assigned(body) -> list:
    """Vars assigned anywhere in `body` (loop targets and counters included), in order, repeats kept."""
    out = []
    for stmt in walk(body):
        if isinstance(stmt, Eqn):
            out.extend(stmt.outputs)
        elif isinstance(stmt, Loop):
            out.append(stmt.counter)
            if stmt.target is not None:
                out.append(stmt.target)
    return out


def mutable_vars(body) -> frozenset:
    """Vars assigned more than once, statically or because they are assigned inside a loop."""
    counts: dict = {}
    for var in assigned(body):
        counts[var] = counts.get(var, 0) + 1
    in_loops = {v for stmt in walk(body) if isinstance(stmt, Loop) for v in assigned(stmt.body)}
    in_loops |= {v for stmt in walk(body) if isinstance(stmt, Loop) for v in assigned(stmt.test_body)}
    return frozenset(v for v, n in counts.items() if n > 1) | frozenset(in_loops)


@dataclass(frozen=True)
class Program:
    """A lowered user function: parameters, a Wengert list, and what it returns.

    `returns_tuple` says the user's `return` was a tuple (`return loss, aux`),
    so `outputs` are the tuple's items rather than one value.
    """

    name: str
    params: tuple
    body: tuple
    outputs: tuple
    span: Span
    returns_tuple: bool = False
    return_span: Span | None = None
    free: tuple = ()
    identifiers: frozenset = field(default=frozenset())
    free_sources: tuple = ()  # (generated name, function whose scope has it, its name there)
    comments: tuple = ()  # ((file, line), ("# the user's comment", ...)): comment lines above a statement
    # (holder, name, object): a global (holder a module's dict) or closure cell (name None) the transform read a
    # function, class or object of the user's from: the code is made again if one is bound to another since
    bindings: tuple = field(default=(), compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        lines = [f"{self.name}({', '.join(p.name for p in self.params)}):"]
        lines += listing(self.body)
        outs = ", ".join(str(a) for a in self.outputs)
        lines.append(f"  return {outs}")
        return "\n".join(lines)


def listing(body, indent: str = "  ") -> list:
    """Equations one a line, each user line shown beside its first equation; blocks indented."""
    rows, last_line = [], None
    for eqn in body:
        if not isinstance(eqn, Eqn):
            rows += _compound_listing(eqn, indent)
            last_line = None
            continue
        text = f"{indent}{eqn}"
        key = (eqn.span.file, eqn.span.line)
        if key != last_line:
            text = f"{text:<40}  # {eqn.span.file}:{eqn.span.line}  {eqn.span.text.strip()}"
            last_line = key
        rows.append(text.rstrip())
    return rows


def _compound_listing(stmt, indent) -> list:
    inner = indent + "  "
    where = f"  # {stmt.span.file}:{stmt.span.line}  {stmt.span.text.strip()}"
    if isinstance(stmt, If):
        head = f"{indent}try:" if stmt.catch is not None else f"{indent}with {stmt.manager}:" \
            if stmt.manager is not None else f"{indent}if {stmt.cond}:"
        rows = [head.ljust(40) + where] + (listing(stmt.then, inner) or [f"{inner}pass"])
        if stmt.orelse or stmt.catch is not None:
            rows += [f"{indent}else:" if stmt.catch is None else f"{indent}except {stmt.catch.classes}:"]
            rows += listing(stmt.orelse, inner) or [f"{inner}pass"]
        return rows
    if isinstance(stmt, Loop):
        if stmt.kind == "for":
            head = f"{indent}for {stmt.target} in {stmt.iterable}:  [count {stmt.counter}]"
            return [head.ljust(40) + where] + listing(stmt.body, inner)
        rows = [f"{indent}while:  [count {stmt.counter}]".ljust(40) + where]
        rows += listing(stmt.test_body, inner) + [f"{inner}test {stmt.test}"] + listing(stmt.body, inner)
        return rows
    if isinstance(stmt, Exit):
        return [f"{indent}{stmt.kind}"]
    if isinstance(stmt, Guard):
        return [f"{indent}if {stmt.var} is not None:"] + listing(stmt.body, inner)
    if isinstance(stmt, Push):
        return [f"{indent}push {stmt.value}"]
    if isinstance(stmt, Pop):
        return [f"{indent}pop {stmt.var}{'' if stmt.index is None else '[' + str(stmt.index) + ']'}"]
    return [f"{indent}{stmt}"]


def _const_text(value: Any) -> str:
    if isinstance(value, slice):
        parts = ["" if p is None else repr(p) for p in (value.start, value.stop, value.step)]
        return ":".join(parts[:2]) + (f":{parts[2]}" if value.step is not None else "")
    if value is Ellipsis:
        return "..."
    if isinstance(value, tuple):
        inner = ", ".join(_const_text(v) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, type):
        return value.__name__
    return repr(value)


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # arrays and other values without a plain truth value
        return a is b

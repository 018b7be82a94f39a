"""Turning equations into Python statements (stdlib `ast` nodes) and text.

The only module that uses astor: `to_text` renders a statement. Each
primitive is spelled the way a person would write it (`x @ W`, `np.tanh(t2)`,
`h[1:, None]`); single-expression rules are inlined with their parameters
replaced by the values they read, and constant arithmetic folded away.
"""
from __future__ import annotations

import ast
import builtins
import functools
import operator

import astor
import numpy as np

from ..errors import InternalError
from ..ir import Const, Eqn, Pack, Var
from ..rules.table import Primitive
from ..transforms.reverse import RuleApplication
from .syntax import clone, renamed

_BINOPS = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "**": ast.Pow, "@": ast.MatMult,
           "//": ast.FloorDiv, "%": ast.Mod, "&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor}
_UNOPS = {"-": ast.USub, "+": ast.UAdd, "not ": ast.Not, "~": ast.Invert}
_COMPARES = {"<": ast.Lt, "<=": ast.LtE, ">": ast.Gt, ">=": ast.GtE, "==": ast.Eq, "!=": ast.NotEq,
             "is": ast.Is, "is not": ast.IsNot, "in": ast.In, "not in": ast.NotIn}


def to_text(stmt: ast.stmt) -> str:
    """Render one statement as source text (no trailing newline), on one line: astor's own wrapping
    breaks long lines at arbitrary commas, which reads worse than a long line.

    astor writes a name as it is, wherever it stands, so statements of one shape (the same nodes, operators
    and constants; any names) read alike but for their names: astor writes each shape once, with
    placeholders for the names, and the text of every other statement of that shape is that text with its
    names put in (astor was most of the time spent writing a long function).
    """
    names: dict = {}
    key = _shape(stmt, names)
    pieces = _WRITTEN.get(key)
    if pieces is None:
        if len(_WRITTEN) >= 50_000:
            _WRITTEN.clear()
        template = renamed(stmt, {name: f"\0{k}\0" for k, name in enumerate(names)})
        pieces = _WRITTEN[key] = tuple(astor.to_source(template, pretty_source=_one_line).rstrip("\n").split("\0"))
    if len(pieces) == 1:
        return pieces[0]
    order = list(names)
    return "".join([piece if k % 2 == 0 else order[int(piece)] for k, piece in enumerate(pieces)])


_WRITTEN: dict = {}  # a statement's _shape -> astor's text of it, split at its names' placeholders


def statement_text(eqn: Eqn, in_place: bool = False) -> str:
    """`to_text(statement(eqn))` (or of `accumulated_in_place(eqn)`), from the text of an equation of the same
    shape written before (the same op and flags, constants and structure of its atoms; other vars), with this
    one's var names put in: no statement built, no shape of it taken, for most lines of a long function."""
    names: list = []
    key = _eqn_shape(eqn, names)
    if key is None:
        return to_text(accumulated_in_place(eqn) if in_place else statement(eqn))
    key = (key, in_place)
    pieces = _EQN_TEXTS.get(key)
    if pieces is None:
        if len(_EQN_TEXTS) >= 50_000:
            _EQN_TEXTS.clear()
        count = iter(range(len(names)))
        marked = _with_vars(eqn, lambda var: Var(f"\0{next(count)}\0") if var.name.isidentifier() else var)
        text = to_text(accumulated_in_place(marked) if in_place else statement(marked))
        pieces = _EQN_TEXTS[key] = tuple(text.split("\0"))
    if len(pieces) == 1:
        return pieces[0]
    return "".join([piece if k % 2 == 0 else names[int(piece)] for k, piece in enumerate(pieces)])


_EQN_TEXTS: dict = {}  # an equation's _eqn_shape -> the text of its statement, split at its vars' placeholders


def _eqn_shape(eqn, names):
    """What `statement(eqn)` depends on but the names of its vars (appended to `names`, in inputs-then-outputs
    order), or None for an op that is not known to be described by its attributes."""
    op = eqn.op
    if op.__class__ is RuleApplication:
        op_key = (RuleApplication, op.rule, op.accumulate, op.unpack, op.sequence, op.masked, op.out_shape,
                  op.broadcasting)
    elif op.__class__ is Primitive:
        op_key = op
    else:
        return None
    try:
        key = (op_key, tuple((key, _atom_key(atom, names)) for key, atom in eqn.inputs),
               tuple(_atom_key(var, names) for var in eqn.outputs))
        hash(key)
    except TypeError:  # a constant that cannot be a key: written the long way
        return None
    return key


def _atom_key(atom, names):
    if atom.__class__ is Var:
        if atom.name.isidentifier():
            names.append(atom.name)
            return "var"
        return ("named", atom.name)
    if atom.__class__ is Pack:
        return ("pack", atom.kind, tuple(_atom_key(item, names) for item in atom.items))
    return ("const", type(atom.value), repr(atom.value))


def _with_vars(eqn, replace):
    """`eqn` with each var replaced by `replace(var)`, inputs then outputs (the order _eqn_shape names them)."""
    def atom(a):
        if a.__class__ is Var:
            return replace(a)
        if a.__class__ is Pack:
            return Pack(tuple(atom(item) for item in a.items), a.kind)
        return a
    inputs = tuple((key, atom(a)) for key, a in eqn.inputs)
    return Eqn(eqn.op, inputs, tuple(atom(v) for v in eqn.outputs), eqn.span)


def _shape(node, names: dict):
    """`node` as nested tuples of its node types and field values, names replaced by their number in order
    of first appearance (`names` collects them): two statements astor writes alike but for their names."""
    if node.__class__ is ast.Name:
        return ("name", names.setdefault(node.id, len(names)), getattr(node, "ctx", None).__class__)
    parts = [node.__class__]
    for field in node._fields:
        value = getattr(node, field, None)
        if value.__class__ is list:
            parts.append(tuple(_shape(item, names) if isinstance(item, ast.AST) else _leaf(item) for item in value))
        elif isinstance(value, ast.AST):
            parts.append(_shape(value, names))
        else:
            parts.append(_leaf(value))
    return tuple(parts)


def _leaf(value):
    """A field value that is not a node, as a key: equal only for values astor writes alike."""
    if value.__class__ in _BY_VALUE:
        return value.__class__, value  # equal values of one of these types have one text
    return value.__class__, repr(value)  # floats: 0.0 == -0.0, and nan != nan


_BY_VALUE = {str, int, bool, type(None), bytes}


def _one_line(pieces) -> str:
    return "".join(pieces)


def statement(eqn: Eqn) -> ast.stmt:
    """The Python statement computing `eqn`."""
    if eqn.op.form == "setitem":
        inputs = dict(eqn.inputs)
        target = ast.Subscript(atom(inputs["a"]), index(inputs["index"]), ast.Store())
        return ast.Assign([target], atom(inputs["value"]))
    value = expression(eqn)
    if not eqn.outputs or eqn.op.name == "append":
        return ast.Expr(value)
    if eqn.op.name == "tape_pop":  # its second output is the list it updates in place
        return ast.Assign([_name(eqn.outputs[0].name, ast.Store())], value)
    if len(eqn.outputs) == 1 and not getattr(eqn.op, "unpack", False):
        target = _name(eqn.outputs[0].name, ast.Store())
    else:
        target = ast.Tuple([_name(v.name, ast.Store()) for v in eqn.outputs], ast.Store())
    return ast.Assign([target], value)


def accumulated_in_place(eqn: Eqn) -> ast.stmt:
    """`g += c` for an accumulation `g = g + c` into an array only the generated code holds."""
    return ast.AugAssign(_name(eqn.outputs[0].name, ast.Store()), ast.Add(), _rule(eqn))


def expression(eqn: Eqn) -> ast.expr:
    op = eqn.op
    form = op.form
    if form == "rule":
        return _accumulated(eqn)
    inputs = eqn.inputs
    if form == "identity":
        return atom(inputs[0][1])
    if form == "binop":
        return ast.BinOp(atom(inputs[0][1]), _BINOPS[op.spelling](), atom(inputs[1][1]))
    if form == "unop":
        return ast.UnaryOp(_UNOPS[op.spelling](), atom(inputs[0][1]))
    if form == "compare":
        return ast.Compare(atom(inputs[0][1]), [_COMPARES[op.spelling]()], [atom(inputs[1][1])])
    if form == "getitem":
        return ast.Subscript(atom(inputs[0][1]), index(inputs[1][1]), ast.Load())
    if form == "attr":
        return ast.Attribute(atom(inputs[0][1]), inputs[1][1].value, ast.Load())
    if form == "method":
        receiver, rest = inputs[0][1], inputs[1:]
        return _call(ast.Attribute(atom(receiver), op.spelling, ast.Load()), op, rest)
    if form == "opaque":
        return _opaque(op, inputs)
    if form == "display":
        return _display(op, dict(inputs))
    if form == "call":
        return _call(_spelled(op.spelling), op, inputs)
    if form == "custom":
        return ast.Call(_name(op.spelling), [atom(value) for _, value in inputs], [])
    raise InternalError(f"no way to write a call of {op.name} (form {form!r})")


def _call(func, op, inputs):
    """Required parameters positionally, others by keyword and only if not their default.

    Builtins and ufuncs take no keywords for these parameters (`range(0, n)`), so
    for them every parameter up to the last one given is written positionally.
    """
    if getattr(op, "renamed", None) or _positional_only(op.fn):
        given = [i for i, (key, value) in enumerate(inputs) if not _defaulted(op, key, value)]
        last = max(given, default=-1) if op.fn is not slice else len(inputs) - 1  # slice(j) means :j
        return ast.Call(func, [atom(value) for _, value in inputs[:last + 1]], [])
    positional = _positional_params(op.fn)
    last_positional = max((i for i, (key, value) in enumerate(inputs)
                           if key in positional and not _defaulted(op, key, value)), default=-1)
    args, keywords = [], []
    for i, (key, value) in enumerate(inputs):
        if key == op.variadic:
            args.extend(atom(item) for item in value.items)
        elif i <= last_positional or (key not in op.defaults and key not in op.keyword_only):
            args.append(atom(value))  # NumPy takes it only by position, or it is required
        elif not _defaulted(op, key, value):
            keywords.append(ast.keyword(key, atom(value)))
    return ast.Call(func, args, keywords)


@functools.lru_cache(maxsize=None)
def _positional_params(fn) -> frozenset:
    """Parameters the real function accepts only by position (`np.where(condition, x, y, /)`)."""
    import inspect
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return frozenset()
    return frozenset(p.name for p in parameters if p.kind is p.POSITIONAL_ONLY)


def _defaulted(op, key, value) -> bool:
    return key in op.defaults and isinstance(value, Const) and _is_default(value.value, op.defaults[key])


def _positional_only(fn) -> bool:
    return isinstance(fn, (np.ufunc, type)) or getattr(fn, "__module__", None) == "builtins"


def _is_default(value, default) -> bool:
    return type(value) is type(default) and value == default


def _display(op, inputs):
    """`[a, b]`, `(a, b)` or `{"W": W}` for the list, tuple and dict primitives."""
    if op.spelling == "{}":
        keys = inputs["keys"].value
        return ast.Dict([constant(k) for k in keys], [atom(v) for v in inputs["values"].items])
    items = [atom(i) for i in inputs["items"].items]
    return ast.List(items, ast.Load()) if op.spelling == "[]" else ast.Tuple(items, ast.Load())


def _opaque(op, inputs):
    args = [ast.Starred(atom(a), ast.Load()) if k.startswith("_*") else atom(a) for k, a in inputs if k.startswith("_")]
    keywords = [ast.keyword(None if k.startswith("**") else k, atom(a)) for k, a in inputs if not k.startswith("_")]
    if op.spelling.startswith("."):
        return ast.Call(ast.Attribute(args[0], op.spelling[1:], ast.Load()), args[1:], keywords)
    if op.spelling == "()":
        return ast.Call(args[0], args[1:], keywords)
    return ast.Call(_spelled(op.spelling), args, keywords)


def _accumulated(eqn):
    """A rule's value, added to the cotangent it accumulates into if there is one already."""
    value = _rule(eqn)
    if eqn.op.sequence:
        value = ast.Call(_name("as_cotree"), [value], [])
    mode = eqn.op.accumulate
    if mode is None:
        return value
    previous = atom(dict(eqn.inputs)["__g"])
    if mode == "add":
        return ast.BinOp(previous, ast.Add(), value)
    return ast.Call(_name("add_cotangents"), [previous, value], [])


def _rule(eqn):
    rule = eqn.op.rule
    reads = dict(eqn.inputs)
    if rule.name == "assign" and rule.reads == ("g",):
        return atom(reads["g"])
    if rule.inline is not None:
        names: list = []
        shape = tuple((key, _atom_shape(value, names)) for key, value in eqn.inputs)
        key = (rule, getattr(eqn.op, "masked", True), getattr(eqn.op, "out_shape", None),
               getattr(eqn.op, "broadcasting", None), shape)
        template = _TEMPLATES.get(key)
        if template is None:
            template = _TEMPLATES[key] = _inlined(eqn, rule, _placeholders(eqn.inputs))
        return renamed(template, {f"\0{k}": name for k, name in enumerate(names)})
    return ast.Call(_name(rule.name), [atom(reads[name]) for name in rule.reads], [])


# An inlined rule, written once per rule, flags and shape of its inputs (constants by value, vars as
# placeholders), then copied with the vars' names: the same four passes on every application were a
# third of a long function's codegen.
_TEMPLATES: dict = {}


def _inlined(eqn, rule, reads):
    expr = _Substitute(reads).visit(clone(rule.inline))
    if not getattr(eqn.op, "masked", True):
        expr = _Unguard().visit(expr)
    if getattr(eqn.op, "out_shape", None) is not None:
        expr = _SameShape(eqn.op.out_shape, eqn.op.broadcasting).visit(expr)
    return fold(expr)


def _atom_shape(a, names):
    """`a` with its vars left out (their names appended to `names`): what a template is keyed by."""
    if isinstance(a, Var):
        names.append(a.name)
        return "var"
    if isinstance(a, Pack):
        return ("pack", a.kind, tuple(_atom_shape(item, names) for item in a.items))
    return ("const", type(a.value), repr(a.value))


def _placeholders(inputs) -> dict:
    """The inputs with each var renamed `\0<k>`, k counting vars in the order `_atom_shape` visits them."""
    count = iter(range(1 << 30))

    def replaced(a):
        if isinstance(a, Var):
            return Var(f"\0{next(count)}")
        if isinstance(a, Pack):
            return Pack(tuple(replaced(item) for item in a.items), a.kind)
        return a
    return {key: replaced(value) for key, value in inputs}


# Guarded products (0 * inf = 0) are only needed where a cotangent can hold np.where's zeros;
# elsewhere they are written as the plain operator (reverse.py decides, per rule application).
_GUARDED = {"guarded_mul": ast.Mult, "guarded_div": ast.Div}


class _Unguard(ast.NodeTransformer):
    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in _GUARDED and len(node.args) == 2 and not node.keywords:
            return ast.BinOp(node.args[0], _GUARDED[node.func.id](), node.args[1])
        return node


class _SameShape(ast.NodeTransformer):
    """`unbroadcast(e, S)` in a broadcasting op's rule, where `e` has the op's output shape, known, as is
    S (shape specialization): nothing when S is that shape, else the sum over the broadcast axes."""

    def __init__(self, shape, broadcasting):
        self.shape, self.broadcasting = shape, broadcasting

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "unbroadcast" and len(node.args) == 2:
            try:
                target = ast.literal_eval(node.args[1])
            except ValueError:
                return node
            if not self.broadcasting:  # the expression may have another shape (a region of the output)
                return node
            if target == self.shape:
                return node.args[0]
            return _sum_to(node.args[0], self.shape, target) or node  # sum it down directly
        return node


def _sum_to(expr, shape, target):
    """`np.sum(expr, axis=...)` taking an array of `shape` to `target`, when one sum does it."""
    if not isinstance(target, tuple) or len(target) > len(shape):
        return None
    extra = len(shape) - len(target)
    stretched = tuple(i + extra for i, n in enumerate(target) if n == 1 and shape[i + extra] != 1)
    if any(n != 1 and n != shape[i + extra] for i, n in enumerate(target)):
        return None
    if extra and not stretched:
        axes, keepdims = tuple(range(extra)), False
    elif stretched and not extra:
        axes, keepdims = stretched, True
    else:
        return None
    keywords = [ast.keyword("axis", constant(axes if len(axes) > 1 else axes[0]))]
    if keepdims:
        keywords.append(ast.keyword("keepdims", ast.Constant(True)))
    from .reductions import method_sum
    return method_sum(expr, keywords)  # `expr` has a known shape with axes to sum: it is an ndarray


class _Substitute(ast.NodeTransformer):
    def __init__(self, reads):
        self.reads = reads

    def visit_Name(self, node):
        if node.id in self.reads:
            return atom(self.reads[node.id])
        return node


def atom(a) -> ast.expr:
    """An atom as a value expression."""
    if isinstance(a, Var):
        return _name(a.name)
    if isinstance(a, Const):
        return constant(a.value)
    if isinstance(a, Pack):
        if a.kind == "index":
            return ast.Subscript(_spelled("np.s_"), index(a), ast.Load())
        items = [atom(i) for i in a.items]
        return ast.List(items, ast.Load()) if a.kind == "list" else ast.Tuple(items, ast.Load())
    raise InternalError(f"not an atom: {a!r}")


def index(a) -> ast.expr:
    """An atom in subscript position: slices written with colons."""
    if isinstance(a, Const) and isinstance(a.value, tuple):
        return ast.Tuple([_index_item(v) for v in a.value], ast.Load()) if a.value else constant(())
    if isinstance(a, Pack) and a.kind == "index":
        return ast.Tuple([index(i) for i in a.items], ast.Load())
    if isinstance(a, Const):
        return _index_item(a.value)
    return atom(a)


def _index_item(value):
    if isinstance(value, slice):
        return ast.Slice(*(None if p is None else constant(p) for p in (value.start, value.stop, value.step)))
    return constant(value)


def constant(value) -> ast.expr:
    """A value known at transform time, written as source."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)) or value is Ellipsis:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
            return ast.UnaryOp(ast.USub(), ast.Constant(-value))
        return ast.Constant(value)
    if isinstance(value, np.generic):
        return ast.Call(_spelled(f"np.{type(value).__name__}"), [constant(value.item())], [])
    if isinstance(value, tuple):
        return ast.Tuple([constant(v) for v in value], ast.Load())
    if isinstance(value, list):  # a parameter's default (autograd's convolve: dot_axes=[(), ()]), made afresh
        return ast.List([constant(v) for v in value], ast.Load())
    if isinstance(value, slice):
        return ast.Subscript(_spelled("np.s_"), _index_item(value), ast.Load())
    if isinstance(value, frozenset):  # `{0, 2}` of constants, written in the user's order where it can be
        items = sorted(value, key=repr) if not all(isinstance(v, (int, float)) for v in value) else sorted(value)
        return ast.Call(_name("frozenset"), [ast.Set([constant(v) for v in items])] if items else [], [])
    if isinstance(value, np.dtype):
        return ast.Call(_spelled("np.dtype"), [ast.Constant(value.str)], [])
    if isinstance(value, type):
        if getattr(np, value.__name__, None) is value:
            return _spelled(f"np.{value.__name__}")
        if value in (float, int, bool, complex):
            return _name(value.__name__)
    if isinstance(value, BaseException) and getattr(builtins, type(value).__name__, None) is type(value) \
            and all(isinstance(a, (str, int)) for a in value.args):  # an import that failed when transforming
        return ast.Call(_name(type(value).__name__), [constant(a) for a in value.args], [])
    raise InternalError(f"cannot write the constant {value!r} into generated code")


@functools.lru_cache(maxsize=None)
def _spelled_cached(text):
    return ast.parse(text, mode="eval").body


def _spelled(text):
    return clone(_spelled_cached(text))


def _name(name, ctx=None):
    return ast.Name(name, ctx or ast.Load())


_FOLDABLE = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow}


def fold(node):
    """Fold constant arithmetic left by inlining: `x2 - 1` with x2 = 2 is 1; `x ** 1` is x; `g * 1` is g."""
    return _Fold().visit(node)


class _Fold(ast.NodeTransformer):
    def visit_IfExp(self, node):
        self.generic_visit(node)
        if isinstance(node.test, ast.Constant):  # a condition known when transforming: keep one side
            return node.body if node.test.value else node.orelse
        return node

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if isinstance(node.values[0], ast.Constant):
            first = node.values[0].value
            decided = (not first) if isinstance(node.op, ast.And) else bool(first)
            if decided or len(node.values) == 1:
                return node.values[0]
            rest = node.values[1:]
            return rest[0] if len(rest) == 1 else self.visit(ast.BoolOp(node.op, rest))
        return node

    def visit_Call(self, node):
        """`len` of a constant tuple, and helpers marked `pure` called on constants, become constants."""
        self.generic_visit(node)
        if not isinstance(node.func, ast.Name) or node.keywords:
            return node
        try:
            args = [ast.literal_eval(a) for a in node.args]
        except ValueError:
            return node
        if node.func.id == "len" and len(args) == 1 and isinstance(args[0], tuple):
            return ast.Constant(len(args[0]))
        from .. import rules
        helper = rules.lookup_name(node.func.id)
        if getattr(helper, "pure", False):
            return constant(helper(*args))
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        values = [node.left] + node.comparators
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):  # `(0, 1) is None`: never
            try:  # written with a literal (a SyntaxWarning); a singleton against a literal is decided now
                left, right = (ast.literal_eval(v) for v in values)
            except ValueError:
                return node
            if any(v is None or v is Ellipsis or isinstance(v, bool) for v in (left, right)):
                same = left is right if type(left) is type(right) else False
                return ast.Constant(same if isinstance(node.ops[0], ast.Is) else not same)
            return node
        if len(node.ops) == 1 and all(_number(v) is not None for v in values):
            ops = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
                   ast.Eq: operator.eq, ast.NotEq: operator.ne}
            fn = ops.get(type(node.ops[0]))
            if fn is not None:
                return ast.Constant(bool(fn(_number(values[0]), _number(values[1]))))
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        filled = _mean_of_all(node)
        if filled is not None:
            return filled
        left, right = _number(node.left), _number(node.right)
        fn = _FOLDABLE.get(type(node.op))
        if fn and left is not None and right is not None:
            return constant(fn(left, right))
        if isinstance(node.op, ast.Pow) and right == 1:
            return node.left
        if isinstance(node.op, ast.Mult) and right == 1:
            return node.left
        if isinstance(node.op, ast.Mult) and left == 1:
            return node.right
        return node


def _mean_of_all(node):
    """`unreduce(g, S, None, False) / n` with S known: `np.full(S, g / n)`, one array instead of three steps."""
    call = node.left
    if not (isinstance(node.op, ast.Div) and _number(node.right) is not None and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name) and call.func.id == "unreduce" and len(call.args) == 4):
        return None
    try:
        shape, axis, keepdims = (ast.literal_eval(a) for a in call.args[1:])
    except ValueError:
        return None
    if axis is not None or not isinstance(shape, tuple):
        return None
    return ast.Call(_spelled("np.full"), [constant(shape), ast.BinOp(call.args[0], ast.Div(), node.right)], [])


def _number(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    return None

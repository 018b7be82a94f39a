"""Lowering expressions: operators, names, attributes, subscripts, displays, and calls.

A mixin of `lower._Lowerer`. Each handler returns an atom (a Var, a Const, or
a Pack for a list or tuple passed straight to a call), emitting the equations
that compute it. Calls are resolved here: a primitive, an array method, a
user function (inlined), a gradient of one, a custom rule, or an opaque call.
"""
from __future__ import annotations

import ast
import operator

from .. import rules
from ..ir import Const, If, Pack, Var
from ..rules.language import append as append_primitive
from ..rules.language import assign as assign_primitive
from ..rules.language import contained_in, make_dict, make_list, make_tuple, not_contained_in
from ..rules.table import Primitive
from .inline import LocalFunction, user_function
from .resolve import MISSING

BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.Pow: operator.pow, ast.MatMult: operator.matmul, ast.FloorDiv: operator.floordiv,
          ast.Mod: operator.mod, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}
UNARYOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert}
COMPARES = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
            ast.In: contained_in, ast.NotIn: not_contained_in}
METADATA_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}


class Expressions:
    """Mixin for `_Lowerer`: one `expr_<Node>` handler per kind of expression, and `call`."""

    def expr(self, node, target=None):
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is None:
            raise self.unsupported(node, f"{_describe(node)} is not supported inside a differentiated function",
                                   _HINTS.get(type(node), "rewrite it with assignments and NumPy calls"))
        return handler(node, target)

    def expr_Constant(self, node, target):
        return Const(node.value)

    def expr_Name(self, node, target):
        return self.read_name(node)

    def read_name(self, node):
        name = node.id
        if name in self.env:
            value = self.env[name]
            if isinstance(value, LocalFunction):
                raise self.unsupported(node, f"the local function `{name}` can only be called here",
                                       "call it, or define it outside the differentiated function")
            return value
        if name in self.scope.locals:
            raise self.unsupported(node, f"`{name}` is used before it is assigned", "assign it first")
        value = self.scope.lookup(name)
        if value is MISSING:
            raise self.unsupported(node, f"name `{name}` is not defined", "define it, or import it")
        if name in self.reserved and self.reserved_value(name) is not value:
            raise self.unsupported(node, f"`{name}` is a name tapegen's generated code uses for its own purposes",
                                   f"rename your global `{name}`")
        key = (id(self.fn), name)
        if key not in self.free:
            var = Var(name) if name not in self.namer.assigned else self.namer.invented(name)
            self.namer.assigned.add(var.name)
            self.free[key] = var
            if var.name != name or self.call_stack:
                self.free_sources[var.name] = (self.fn, name)
        return self.free[key]

    def reserved_value(self, name):
        return rules.namespace().get(name, MISSING)

    def expr_BinOp(self, node, target):
        fn = BINOPS.get(type(node.op))
        if fn is None:
            raise self.unsupported(node, "this operator is not supported")
        left, right = self.expr(node.left), self.expr(node.right)
        return self.emit(rules.lookup(fn), [left, right], {}, node, target)

    def expr_UnaryOp(self, node, target):
        operand = self.expr(node.operand)
        if isinstance(node.op, ast.USub) and isinstance(operand, Const) and isinstance(operand.value, (int, float)):
            return Const(-operand.value)
        return self.emit(rules.lookup(UNARYOPS[type(node.op)]), [operand], {}, node, target)

    def expr_Compare(self, node, target):
        if len(node.ops) != 1:
            raise self.unsupported(node, "chained comparisons (a < b < c) are not supported",
                                   "combine two comparisons with & (arrays) or `and` (scalars)")
        fn = COMPARES.get(type(node.ops[0]))
        if fn is None:
            raise self.unsupported(node, f"the comparison `{ast.unparse(node)}` is not supported")
        left, right = self.expr(node.left), self.expr(node.comparators[0])
        return self.emit(rules.lookup(fn), [left, right], {}, node, target)

    def expr_Tuple(self, node, target):
        return Pack(tuple(self.expr(e) for e in node.elts), "tuple")

    def expr_List(self, node, target):
        return Pack(tuple(self.expr(e) for e in node.elts), "list")

    def expr_Dict(self, node, target):
        if any(k is None or not isinstance(k, ast.Constant) for k in node.keys):
            raise self.unsupported(node, "a dict literal needs constant keys here", "write the keys as literals")
        keys = Const(tuple(k.value for k in node.keys))
        values = [self.expr(v) for v in node.values]
        return self.emit(rules.lookup(make_dict), [keys] + values, {}, node, target)

    def expr_BoolOp(self, node, target):
        """`a and b` / `a or b`, short-circuiting: the second operand is evaluated in a branch."""
        result = self.namer.temp()
        self.emit(rules.lookup(assign_primitive), [self.expr(node.values[0])], {}, node, result)
        for value in node.values[1:]:
            branch = self._expression_block(value, result, node)
            then, orelse = (branch, []) if isinstance(node.op, ast.And) else ([], branch)
            self.current.append(If(result, tuple(then), tuple(orelse), self.span(node)))
        return result

    def expr_IfExp(self, node, target):
        """`a if c else b`: each side is evaluated only in its branch."""
        cond = self.expr(node.test)
        if isinstance(cond, Const):
            return self.expr(node.body if cond.value else node.orelse, target)
        result = self.namer.temp()
        then = self._expression_block(node.body, result, node)
        orelse = self._expression_block(node.orelse, result, node)
        self.current.append(If(cond, tuple(then), tuple(orelse), self.span(node)))
        return result

    def _expression_block(self, value_node, result, node):
        self.blocks.append([])
        try:
            atom = self.expr(value_node)
            self.emit(rules.lookup(assign_primitive), [atom], {}, node, result)
            return self.blocks.pop()
        except BaseException:
            self.blocks.pop()
            raise

    def expr_Attribute(self, node, target):
        static = self.scope.static(node)
        if static is not MISSING and not callable(static):
            return Const(static)  # a module constant such as np.pi or np.newaxis
        base = self.expr(node.value)
        if node.attr == "T":
            return self.emit(rules.lookup(_transpose()), [base], {}, node, target)
        if node.attr in ("real", "imag") and rules.lookup(getattr(_numpy(), node.attr)) is not None:
            return self.emit(rules.lookup(getattr(_numpy(), node.attr)), [base], {}, node, target)
        if node.attr in METADATA_ATTRIBUTES:
            return self.emit(rules.lookup(_metadata()), [base, Const(node.attr)], {}, node, target)
        return self.emit(rules.lookup(getattr), [base, Const(node.attr)], {}, node, target)

    def expr_Subscript(self, node, target):
        base = self.expr(node.value)
        index = self.index(node.slice)
        if isinstance(base, Pack) and isinstance(index, Const) and isinstance(index.value, int) \
                and -len(base.items) <= index.value < len(base.items):
            return base.items[index.value]  # (a, b)[1] is b
        if isinstance(base, Pack):
            maker = rules.lookup(make_list if base.kind == "list" else make_tuple)
            base = self.emit(maker, list(base.items), {}, node, None)
        return self.emit(rules.lookup(operator.getitem), [base, index], {}, node, target)

    def index(self, node):
        if isinstance(node, ast.Tuple):
            items = tuple(self.index(elt) for elt in node.elts)
            if all(isinstance(item, Const) for item in items):
                return Const(tuple(item.value for item in items))
            return Pack(items, "index")
        if isinstance(node, ast.Slice):
            parts = [Const(None) if p is None else self.expr(p) for p in (node.lower, node.upper, node.step)]
            if all(isinstance(p, Const) for p in parts):
                return Const(slice(*(p.value for p in parts)))
            return self.emit(rules.lookup(slice), parts, {}, node, None)
        return self.expr(node)

    def expr_Call(self, node, target):
        return self.call(node, outputs=1, targets=[target])[0]

    # --- calls --------------------------------------------------------------------------

    def callee_primitive(self, node):
        func = node.func
        obj = self.scope.static(func)
        if obj is not MISSING:
            return rules.lookup(obj)
        if isinstance(func, ast.Attribute):
            entry = rules.method(func.attr)
            return entry[0] if entry else None
        return None

    def call(self, node, outputs=1, targets=None):
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.unsupported(arg, "calls with *args are not supported", "pass the arguments one by one")
        for kw in node.keywords:
            if kw.arg is None:
                raise self.unsupported(kw, "calls with **kwargs are not supported", "pass keywords one by one")
        func = node.func
        if isinstance(func, ast.Name) and isinstance(self.env.get(func.id), LocalFunction):
            args = [self.expr(a) for a in node.args]
            kwargs = {kw.arg: self.expr(kw.value) for kw in node.keywords}
            return self._call_result(self.inline_local(self.env[func.id], node, args, kwargs), outputs, node, targets)
        obj = self.scope.static(func)
        if obj is not MISSING:
            prim = rules.lookup(obj)
            args = [self.expr(a) for a in node.args]
            kwargs = {kw.arg: self.expr(kw.value) for kw in node.keywords}
            if prim is None and user_function(obj) is not None:
                return self._call_result(self.inline(user_function(obj), node, args, kwargs), outputs, node, targets)
            if prim is None:
                prim = _opaque(ast.unparse(func), obj)
            if prim.form == "custom":  # forward pass returns (output, residuals)
                target = (targets or [None])[0]
                base = target.name if isinstance(target, Var) else target or prim.name
                residuals = self.namer.invented(f"{base}_res")
                outs = self.emit_multi(prim, args, kwargs, node, 2, [target, residuals])
                return outs[:min(outputs, 1)]
            if prim.name == "tape_pop" and args and isinstance(args[0], Var):  # pops: updates its list
                outs = self.emit_multi(prim, args, kwargs, node, 2, [(targets or [None])[0], args[0]])
                return outs[:min(outputs, 1)]
            return self.emit_multi(prim, args, kwargs, node, outputs, targets)
        if isinstance(func, ast.Attribute):
            receiver = self.expr(func.value)
            args = [self.expr(a) for a in node.args]
            kwargs = {kw.arg: self.expr(kw.value) for kw in node.keywords}
            method = self._own_method(receiver, func.attr)
            if method is not None:  # self.helper(x) in a bound method: inline helper(self, x)
                result = self.inline(method, node, [receiver] + args, kwargs)
                return self._call_result(result, outputs, node, targets)
            entry = rules.method(func.attr)
            if entry is None:
                return self.emit_multi(_opaque_method(func.attr), [receiver] + args, kwargs, node, outputs, targets)
            prim, receiver_param = entry
            args = _method_arguments(prim, func.attr, args)
            if prim.fn is append_primitive:
                return self._append(receiver, args, func, node)
            return self.emit_multi(prim, [receiver] + args, kwargs, node, outputs, targets)
        made = self._static_gradient(func)
        if made is not None:  # tg.grad(loss)(w, x): the gradient's own code, inlined
            args = [self.expr(a) for a in node.args]
            kwargs = {kw.arg: self.expr(kw.value) for kw in node.keywords}
            return self._call_result(self.inline(made, node, args, kwargs), outputs, node, targets)
        callee = self.expr(func)
        args = [self.expr(a) for a in node.args]
        kwargs = {kw.arg: self.expr(kw.value) for kw in node.keywords}
        return self.emit_multi(_opaque_value(ast.unparse(func)), [callee] + args, kwargs, node, outputs, targets)

    def _static_gradient(self, func):
        """`tg.grad(f, ...)` / `tg.value_and_grad(f, ...)` with arguments known now: the gradient's code."""
        if not isinstance(func, ast.Call):
            return None
        maker = self.scope.static(func.func)
        if getattr(maker, "__tapegen_static_call__", None) is not True:  # tg.grad, tg.value_and_grad
            return None
        try:
            args = [self._static_argument(a) for a in func.args]
            kwargs = {kw.arg: self._static_argument(kw.value) for kw in func.keywords}
        except LookupError:
            return None
        return user_function(maker(*args, **kwargs))

    def _static_argument(self, node):
        value = self.scope.static(node)
        if value is not MISSING:
            return value
        try:
            return ast.literal_eval(node)
        except ValueError:
            raise LookupError(ast.unparse(node)) from None

    def _own_method(self, receiver, name):
        """The plain function behind `self.<name>` when `self` is the bound receiver, else None."""
        if self.self_var is None or receiver is not self.self_var:
            return None
        attribute = getattr(self.receiver, name, None)
        return user_function(attribute)

    def _append(self, receiver, args, func, node):
        """`xs.append(v)`: an in-place update of the list var `xs`."""
        if not isinstance(receiver, Var) or receiver not in self.fresh or receiver in self.params:
            raise self.unsupported(node, "append to a list tapegen cannot follow (an argument, or shared)",
                                   f"build a new list first: {ast.unparse(func.value)} = []")
        self.emit(rules.lookup(append_primitive), [receiver] + args, {}, node, receiver)
        return ()

    def _call_result(self, result, outputs, node, targets):
        """An inlined call's value, in the shape `call()` returns: a tuple of `outputs` atoms."""
        if outputs == 0:
            return ()
        target = (targets or [None])[0]
        if outputs == 1 and isinstance(target, Var) and result is not target and not isinstance(result, Pack):
            return (result,)
        return (result,) if outputs == 1 else tuple(result.items)


def _method_arguments(prim, method_name, args):
    """`x.reshape(3, 4)` and `x.transpose(1, 0)` take their shape or axes as separate arguments."""
    if method_name in ("reshape", "transpose") and len(args) > 1:
        if all(isinstance(a, Const) for a in args):
            return [Const(tuple(a.value for a in args))]
        return [Pack(tuple(args), "tuple")]
    return args


_OPAQUE: dict = {}


def _opaque(spelling, obj):
    """A callable with no rule: called as written; an error only if a gradient must flow through it."""
    key = ("call", spelling, id(obj))
    if key not in _OPAQUE:
        _OPAQUE[key] = Primitive(name=spelling, fn=obj, params=(), defaults={}, form="opaque", spelling=spelling)
    return _OPAQUE[key]


def _opaque_method(method_name):
    key = ("method", method_name)
    if key not in _OPAQUE:
        _OPAQUE[key] = Primitive(name=f".{method_name}", fn=None, params=(), defaults={}, form="opaque",
                                 spelling=f".{method_name}")
    return _OPAQUE[key]


def _opaque_value(text):
    """A call of a computed callee (`fns[i](x)`): the callee is the first input."""
    key = ("value", text)
    if key not in _OPAQUE:
        _OPAQUE[key] = Primitive(name=text, fn=None, params=(), defaults={}, form="opaque", spelling="()")
    return _OPAQUE[key]


def _transpose():
    import numpy as np
    return np.transpose


def _numpy():
    import numpy as np
    return np


def _metadata():
    from ..rules.shape import metadata
    return metadata


_HINTS = {
    ast.Try: "move error handling outside the differentiated function",
    ast.With: "move the `with` block outside the differentiated function",
    ast.Global: "pass the value in as an argument and return the new value",
    ast.Nonlocal: "pass the value in as an argument and return the new value",
    ast.Yield: "a generator has no single output to differentiate: return a value",
    ast.YieldFrom: "a generator has no single output to differentiate: return a value",
    ast.Await: "async functions cannot be differentiated: make it a plain function",
    ast.ListComp: "build the list with a loop-free NumPy expression (np.stack of arrays, broadcasting)",
    ast.Lambda: "assign it to a name and call it, or define it with `def`",
}


def _describe(node) -> str:
    names = {ast.If: "an `if` statement", ast.For: "a `for` loop", ast.While: "a `while` loop",
             ast.Try: "`try`", ast.With: "`with`", ast.Global: "`global`", ast.Nonlocal: "`nonlocal`",
             ast.Yield: "`yield`", ast.YieldFrom: "`yield from`", ast.Await: "`await`",
             ast.ListComp: "a list comprehension", ast.Lambda: "a lambda", ast.FunctionDef: "a nested def",
             ast.Delete: "`del`", ast.Raise: "`raise`", ast.Assert: "`assert`", ast.Import: "`import`",
             ast.Starred: "a starred expression", ast.IfExp: "a conditional expression",
             ast.BoolOp: "`and` / `or`", ast.Dict: "a dict literal", ast.JoinedStr: "an f-string"}
    return names.get(type(node), f"`{type(node).__name__}`")

"""Lowering a user function's AST to a Wengert list (`Program`).

Each Python expression becomes one equation per primitive, in evaluation
order; `h = np.tanh(x @ W + b)` becomes `t1 = x @ W; t2 = t1 + b; h = tanh(t2)`.
Callees are resolved to real objects here (`np.tanh` -> `numpy.tanh`, `x.sum()`
-> `numpy.sum`). Anything tapegen cannot follow is reported here, at
transform time, with the user's line.
"""
from __future__ import annotations

import ast
import operator

import contextlib

from . import rules
from .errors import UnsupportedSyntaxError
from .ir import Const, Eqn, If, Pack, Program, Var
from .inline import Calls, LocalFunction, user_function
from .lower_flow import ControlFlow
from .names import Namer
from .normalize import normalize
from .resolve import MISSING, Scope, all_identifiers, local_names
from .rules.language import append as append_primitive
from .rules.language import assign as assign_primitive
from .rules.language import contained_in, make_dict, make_list, make_tuple, not_contained_in
from .rules.table import Primitive
from .source import FunctionSource

BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.Pow: operator.pow, ast.MatMult: operator.matmul, ast.FloorDiv: operator.floordiv,
          ast.Mod: operator.mod, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}
UNARYOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert}
COMPARES = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
            ast.In: contained_in, ast.NotIn: not_contained_in}
METADATA_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}
# Ops whose result may share memory with an input: augmented assignment on it would write through.
VIEW_OPS = {"getitem", "reshape", "transpose", "ravel", "squeeze", "expand_dims", "swapaxes",
            "broadcast_to", "moveaxis", "rollaxis", "atleast_1d", "atleast_2d", "atleast_3d", "diagonal",
            "diag", "real", "imag", "flip", "fliplr", "flipud", "rot90", "split", "array_split", "hsplit",
            "vsplit", "dsplit"}


def lower(source: FunctionSource, fn, reserved=frozenset(), receiver=None) -> Program:
    """Lower the parsed function `source` (of live function `fn`) to a Program.

    `receiver`: for a bound method, the class of `self`, so `self.helper(x)` can be inlined.

    Raises:
        UnsupportedSyntaxError: syntax tapegen cannot differentiate, with the user's line.
    """
    lowerer = _Lowerer(source, fn, reserved)
    lowerer.receiver = receiver
    return lowerer.program()


class _Lowerer(ControlFlow, Calls):
    def __init__(self, source: FunctionSource, fn, reserved, namer=None):
        self.source = source
        identifiers = all_identifiers(source.node)
        self.node = normalize(source.node, source, identifiers)
        self.scope = Scope(fn, local_names(self.node))
        self.namer = namer or Namer(identifiers, reserved)
        self.namer.identifiers |= identifiers | all_identifiers(self.node)
        self.fn = fn
        self.env: dict = {}
        self.blocks: list = [[]]
        self.free: dict = {}
        self.free_sources: dict = {}  # free var name -> (function whose scope defines it, name there)
        self.fresh: set = set()  # vars that own their memory (not a parameter, not a view)
        self.views: dict = {}    # view var -> the var whose memory it shows
        self.shared: dict = {}   # name -> its var, while inside a branch or loop that assigns it
        self.params: set = set()
        self.results = None      # result vars, when the function returns from inside branches
        self.results_tuple = False
        self.return_span = None
        self.reserved = reserved
        self.receiver = None     # the class of `self` for a bound method
        self.self_var = None
        self.comments: dict = {(source.display_file, line): texts for line, texts in source.comments().items()}

    @property
    def current(self) -> list:
        return self.blocks[-1]

    # --- program ------------------------------------------------------------------------

    def program(self) -> Program:
        node = self.node
        self._check_signature(node.args)
        self._check_kind(node)
        params = []
        for arg in node.args.posonlyargs + node.args.args:
            var = self.namer.user(arg.arg)
            self.env[arg.arg] = var
            params.append(var)
        self.params = set(params)
        self.self_var = params[0] if params and self.receiver is not None else None
        if isinstance(node, ast.Lambda):
            outputs, returns_tuple = self._return_value(node.body)
            self.return_span = self.span(node.body)
        else:
            outputs, returns_tuple = self._statements(node.body)
        name = "lambda" if isinstance(node, ast.Lambda) else node.name
        return Program(name, tuple(params), tuple(self.current), outputs, self.span(node), returns_tuple,
                       self.return_span, tuple(self.free.values()), frozenset(self.namer.identifiers),
                       tuple(sorted(self.free_sources.items())), tuple(sorted(self.comments.items())))

    def _statements(self, stmts):
        """Lower the function body; return (outputs, returns_tuple)."""
        last = stmts[-1] if stmts else self.node
        if isinstance(last, ast.Return):
            for stmt in stmts[:-1]:
                self.statement(stmt)
            if last.value is None:
                raise self.unsupported(last, "a differentiated function must return a value")
            self.return_span = self.span(last)
            return self._return_value(last.value)
        for stmt in stmts:
            self.statement(stmt)
        if self.results is None:
            raise self.unsupported(last, "a differentiated function must end with `return <value>`")
        return tuple(self.results), self.results_tuple

    def block(self, stmts, before=None, test=None):
        """Lower `stmts` into a new block (a branch or loop body) and return its statements."""
        self.blocks.append([])
        try:
            if before:
                self.bind_loop_items(*before)
            if test is not None:
                self._last_test = self.condition(test)
            for stmt in stmts:
                if isinstance(stmt, ast.Return):
                    self.branch_return(stmt)
                else:
                    self.statement(stmt)
            return self.blocks.pop()
        except BaseException:
            self.blocks.pop()
            raise

    @contextlib.contextmanager
    def sharing(self, names, node, pinned=()):
        """Give each of `names` one var for the construct; copy in values it does not own.

        `pinned` vars must keep their value through the construct (a loop's iterable): a name
        bound to one gets a new var.
        """
        saved = dict(self.shared)
        for name in sorted(names):
            if name in self.shared:
                continue
            current = self.env.get(name)
            if isinstance(current, Var) and self._owns(name, current) and current not in pinned:
                var = current
            else:
                var = self.namer.user(name)
                if current is not None:
                    self.emit(rules.lookup(assign_primitive), [current], {}, node, var)
                    if not (isinstance(current, Var) and current not in self.fresh):
                        self.fresh.add(var)
            self.shared[name] = var
            self.env[name] = var
        try:
            yield
        finally:
            self.shared = saved

    def _owns(self, name, var) -> bool:
        return var not in self.params and var not in self.views and all(
            atom is not var for other, atom in self.env.items() if other != name)

    def shared_var(self, name):
        return self.shared[name]

    def store(self, name, atom, node):
        """Bind user name `name` to `atom` (copying into its shared var inside a construct)."""
        var = self.shared.get(name)
        if isinstance(atom, Pack) and atom.kind in ("list", "tuple"):  # a list kept in a variable
            maker = rules.lookup(make_list if atom.kind == "list" else make_tuple)
            atom = self.emit(maker, list(atom.items), {}, node, var or name)
        if var is None:
            self.env[name] = atom
        elif atom is not var:
            self.emit(rules.lookup(assign_primitive), [atom], {}, node, var)
            if isinstance(atom, Var) and atom in self.fresh:
                self.fresh.add(var)

    def view_base(self, atom):
        while atom in self.views:
            atom = self.views[atom]
        return atom if atom is not None else None

    def _check_signature(self, args):
        for extra, what in ((args.vararg, "*args"), (args.kwarg, "**kwargs")):
            if extra is not None:
                raise self.unsupported(extra, f"a function with {what} cannot be differentiated yet",
                                       "give every argument its own name")
        if args.kwonlyargs:
            raise self.unsupported(args.kwonlyargs[0], "keyword-only arguments cannot be differentiated yet",
                                   "make them ordinary positional-or-keyword arguments")

    def _check_kind(self, node):
        """Generators and coroutines have no single output: say so at the yield / await itself."""
        if isinstance(node, ast.AsyncFunctionDef):
            raise self.unsupported(node, "async functions cannot be differentiated", _HINTS[ast.Await])
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Yield, ast.YieldFrom, ast.Await)) and not _inside_nested_def(sub, node):
                raise self.unsupported(sub, f"{_describe(sub)} is not supported inside a differentiated function",
                                       _HINTS[type(sub)])

    def _return_value(self, value):
        if isinstance(value, ast.Tuple):
            return tuple(self.expr(elt) for elt in value.elts), True
        return (self.expr(value),), False

    # --- statements ---------------------------------------------------------------------

    def statement(self, stmt):
        handler = getattr(self, f"stmt_{type(stmt).__name__}", None)
        if handler is None:
            raise self.unsupported(stmt, f"{_describe(stmt)} is not supported inside a differentiated function",
                                   _HINTS.get(type(stmt), "rewrite it with assignments and NumPy calls"))
        handler(stmt)

    def stmt_Pass(self, stmt):
        pass

    def stmt_Expr(self, stmt):
        if isinstance(stmt.value, ast.Constant):  # a docstring or a bare constant: nothing to run
            return
        if not isinstance(stmt.value, ast.Call):
            raise self.unsupported(stmt, "an expression statement that is not a call does nothing",
                                   "remove it, or assign its value")
        self.call(stmt.value, outputs=0)

    def stmt_Assign(self, stmt):
        if len(stmt.targets) != 1:
            raise self.unsupported(stmt, "chained assignment (a = b = ...) is not supported",
                                   "assign each name separately")
        target = stmt.targets[0]
        if isinstance(target, ast.Name) and isinstance(stmt.value, ast.Lambda):
            self.env[target.id] = LocalFunction(stmt.value, dict(self.env))
        elif isinstance(target, ast.Name):
            self.assign(target.id, stmt.value)
        elif isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(t, ast.Name) for t in target.elts):
            self.assign_tuple(target, stmt.value)
        elif isinstance(target, ast.Subscript):
            self.assign_subscript(target, stmt.value)
        else:
            raise self.unsupported(target, f"assignment to {_describe(target)} is not supported",
                                   "assign to a plain local name")

    def stmt_AnnAssign(self, stmt):
        if stmt.value is None or not isinstance(stmt.target, ast.Name):
            raise self.unsupported(stmt, "an annotation without a value is not supported", "give it a value")
        self.assign(stmt.target.id, stmt.value)

    def stmt_AugAssign(self, stmt):
        if isinstance(stmt.target, ast.Subscript):
            return self.assign_subscript(stmt.target, stmt.value, BINOPS.get(type(stmt.op)))
        if not isinstance(stmt.target, ast.Name):
            raise self.unsupported(stmt.target, "this augmented assignment target is not supported",
                                   "assign to a name or an array element")
        name = stmt.target.id
        current = self.read_name(stmt.target)
        if isinstance(current, Var) and current not in self.fresh:
            raise self.unsupported(
                stmt, f"`{name} {_OPSYM.get(type(stmt.op), '?')}= ...` would change `{name}` in place, "
                      f"and `{name}` may share memory with an argument or another variable",
                f"write `{name} = {name} {_OPSYM.get(type(stmt.op), '?')} ...` to make a new array")
        fn = BINOPS.get(type(stmt.op))
        if fn is None:
            raise self.unsupported(stmt, "this augmented assignment operator is not supported")
        value = self.expr(stmt.value)
        target = self.shared.get(name, name)
        self.store(name, self.emit(rules.lookup(fn), [current, value], {}, stmt, target), stmt)

    def assign(self, name, value_node):
        atom = self.expr(value_node, target=self.shared.get(name, name))
        self.store(name, atom, value_node)

    def assign_tuple(self, target, value_node):
        names = [t.id for t in target.elts]
        if isinstance(value_node, (ast.Tuple, ast.List)) and len(value_node.elts) == len(names):
            atoms = [self.expr(v) for v in value_node.elts]  # all right-hand sides before any binding
            targets = {self.shared[n] for n in names if n in self.shared}
            atoms = [self.emit(rules.lookup(assign_primitive), [a], {}, value_node, None) if a in targets else a
                     for a in atoms]  # a, b = b, a: read both before writing either
            for name, atom in zip(names, atoms):
                self.store(name, atom, value_node)
            return
        if isinstance(value_node, ast.Call):
            prim = self.callee_primitive(value_node)
            if prim is not None and prim.outputs == len(names):
                outs = self.call(value_node, outputs=len(names), targets=[self.shared.get(n, n) for n in names])
                for name, var in zip(names, outs):
                    self.store(name, var, value_node)
                return
        whole = self.expr(value_node)
        if isinstance(whole, Pack) and len(whole.items) == len(names):
            for name, part in zip(names, whole.items):
                self.store(name, part, value_node)
            return
        parts = [self.emit(rules.lookup(operator.getitem), [whole, Const(i)], {}, value_node, None)
                 for i in range(len(names))]
        for name, part in zip(names, parts):
            self.store(name, part, value_node)

    # --- expressions --------------------------------------------------------------------

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
        from . import api
        maker = self.scope.static(func.func)
        if maker not in (api.grad, api.value_and_grad):
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

    # --- emitting equations -------------------------------------------------------------

    def emit(self, prim: Primitive, args, kwargs, node, target):
        return self.emit_multi(prim, args, kwargs, node, 1, [target])[0]

    def emit_multi(self, prim: Primitive, args, kwargs, node, outputs, targets):
        inputs = self.bind_arguments(prim, args, kwargs, node)
        targets = list(targets or []) + [None] * outputs
        outs = tuple(self._output_var(t) for t in targets[:outputs])
        reads = {v for _, atom in inputs for v in _vars(atom)}
        copies = [(o, self.namer.temp()) for o in outs if o in reads and prim.name not in ("setitem", "append")]
        if copies:  # y = f(y) in a loop: compute into a temporary, then assign (rules read the old y)
            renamed = dict(copies)
            eqn_outs = tuple(renamed.get(o, o) for o in outs)
        else:
            eqn_outs = outs
        self.current.append(Eqn(prim, inputs, eqn_outs, self.span(node)))
        self._track_memory(prim, inputs, eqn_outs)
        for final, temp in copies:
            self.current.append(Eqn(rules.lookup(assign_primitive), (("x", temp),), (final,), self.span(node)))
            self._track_memory(rules.lookup(assign_primitive), (("x", temp),), (final,))
        return outs

    def _output_var(self, target):
        if isinstance(target, Var):
            return target
        return self.namer.user(target) if target else self.namer.temp()

    def _track_memory(self, prim, inputs, outs):
        if prim.name in VIEW_OPS and inputs and isinstance(inputs[0][1], Var):
            for out in outs:
                self.views[out] = inputs[0][1]
                self.fresh.discard(out)
        elif prim.name == "assign":
            source = inputs[0][1]
            for out in outs:
                if isinstance(source, Var) and (source not in self.fresh or source in self.params):
                    self.fresh.discard(out)
                else:
                    self.fresh.add(out)
        elif prim.name not in ("setitem", "append") and prim.form != "opaque":
            self.fresh.update(outs)

    def bind_arguments(self, prim: Primitive, args, kwargs, node):
        if prim.form == "opaque":
            return tuple((f"_{i}", a) for i, a in enumerate(args)) + tuple(kwargs.items())
        params = list(prim.params)
        positional = params[:params.index(prim.variadic)] if prim.variadic else params
        positional = [p for p in positional if p not in prim.keyword_only]
        bound = {}
        if len(args) > len(positional) and not prim.variadic:
            raise self.unsupported(node, f"{prim.spelling or prim.name}() takes at most {len(positional)} "
                                         f"positional arguments here, got {len(args)}",
                                   f"its parameters are ({', '.join(params)})")
        bound.update(zip(positional, args))
        if prim.variadic:
            bound[prim.variadic] = Pack(tuple(args[len(positional):]), "tuple")
        for key, value in kwargs.items():
            if key not in params or key == prim.variadic:
                raise self.unsupported(node, f"argument `{key}` of {prim.spelling or prim.name}() is not "
                                             f"supported by tapegen", f"supported parameters: {', '.join(params)}")
            if key in bound:
                raise self.unsupported(node, f"{prim.spelling or prim.name}() got `{key}` twice")
            bound[key] = value
        inputs = []
        for param in params:
            if param in bound:
                inputs.append((param, bound[param]))
            elif param in prim.defaults:
                inputs.append((param, Const(prim.defaults[param])))
            else:
                raise self.unsupported(node, f"{prim.spelling or prim.name}() is missing argument `{param}`")
        return tuple(inputs)

    # --- errors -------------------------------------------------------------------------

    def span(self, node):
        return self.source.span(node)

    def unsupported(self, node, message, hint=None):
        return UnsupportedSyntaxError(message, self.span(node), hint)


def _vars(atom):
    from .ir import atom_vars
    return atom_vars(atom)


def _inside_nested_def(target, root) -> bool:
    for sub in ast.walk(root):
        if sub is not root and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if any(inner is target for inner in ast.walk(sub)):
                return True
    return False


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
    from .rules.shape import metadata
    return metadata


_OPSYM = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.MatMult: "@",
          ast.FloorDiv: "//", ast.Mod: "%"}

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

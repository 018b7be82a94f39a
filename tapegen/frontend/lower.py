"""Lowering a user function's AST to a Wengert list (`Program`).

Each Python expression becomes one equation per primitive, in evaluation
order; `h = np.tanh(x @ W + b)` becomes `t1 = x @ W; t2 = t1 + b; h = tanh(t2)`.
Callees are resolved to real objects here (`np.tanh` -> `numpy.tanh`, `x.sum()`
-> `numpy.sum`). Anything tapegen cannot follow is reported here, at
transform time, with the user's line.
"""
from __future__ import annotations

import ast
import contextlib
import operator

from .. import rules
from ..errors import UnsupportedSyntaxError
from ..ir import Const, Eqn, Pack, Program, Var
from ..rules.language import assign as assign_primitive
from ..rules.language import make_list, make_tuple
from ..rules.table import Primitive
from .inline import Calls, LocalFunction
from .lower_expr import _HINTS, BINOPS, Expressions, _describe
from .lower_flow import ControlFlow
from .names import Namer
from .normalize import normalize
from .resolve import Scope, all_identifiers, local_names
from .source import FunctionSource

# Ops that update their last output in place (`A[i] = v`, `xs.append(v)`, `v = tape_pop(xs, v)`).
IN_PLACE = {"setitem", "append", "tape_pop"}

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


class _Lowerer(Expressions, ControlFlow, Calls):
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

    # --- emitting equations -------------------------------------------------------------

    def emit(self, prim: Primitive, args, kwargs, node, target):
        return self.emit_multi(prim, args, kwargs, node, 1, [target])[0]

    def emit_multi(self, prim: Primitive, args, kwargs, node, outputs, targets):
        inputs = self.bind_arguments(prim, args, kwargs, node)
        targets = list(targets or []) + [None] * outputs
        outs = tuple(self._output_var(t) for t in targets[:outputs])
        reads = {v for _, atom in inputs for v in _vars(atom)}
        in_place = outs[-1] if prim.name in IN_PLACE else None  # the var the op updates, not replaces
        copies = [(o, self.namer.temp()) for o in outs if o in reads and o is not in_place]
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
        elif prim.name not in IN_PLACE and prim.form != "opaque":
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
    from ..ir import atom_vars
    return atom_vars(atom)


def _inside_nested_def(target, root) -> bool:
    for sub in ast.walk(root):
        if sub is not root and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if any(inner is target for inner in ast.walk(sub)):
                return True
    return False


_OPSYM = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.MatMult: "@",
          ast.FloorDiv: "//", ast.Mod: "%"}

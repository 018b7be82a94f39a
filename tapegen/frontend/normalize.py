"""Restructuring early exits so every block runs straight to its end.

`break`, `continue` and `return` in the middle of a block skip the rest of it.
This pass (AST -> AST, on a copy) moves "the rest" into the branch that does
not exit, so after it an exit is always the last statement of its branch:

    for x in xs:                    for x in xs:
        if bad(x):                      if bad(x):
            continue          ->            continue
        total = total + x               else:
                                            total = total + x

A `return` inside a loop becomes `result = value; returned = True; break`,
and the code after the loop runs only `if not returned`. A loop's `else:`
clause runs after the loop `if not broke`, a flag set where the loop is left
early (its own `break`s, and any `return` in it). The lowering then
only ever sees exits at the end of a branch, which the tape can record as
"which branch ran".
"""
from __future__ import annotations

import ast
import contextlib
import sys

from ..errors import UnsupportedSyntaxError
from .source import copy_tree

ALWAYS, MAYBE, NEVER = "always", "maybe", "never"


def normalize(node, source, identifiers, static=None) -> ast.AST:
    """A copy of function `node` whose exits all end their branch. `static`: the object an expression names
    in the function's scope (resolve.py's `Scope.static`), to know `contextlib.suppress`."""
    node = copy_tree(node)
    if isinstance(node, ast.Lambda):
        return node
    names = _Names(identifiers)
    normalizer = _Normalizer(source, names, static)
    normalizer.imported = _imported_here(node)
    if contains_return(node.body) and _reaches_end(node.body, normalizer.suppresses):  # `if c: return v` at the end:
        node.body.append(_located(ast.Return(ast.Constant(None)), node.body[-1]))  # Python returns None there
    node.body = normalizer.block(node.body, in_loop=False)
    if names.used:
        node.body.insert(0, _assign(names.returned, ast.Constant(False), node.body[0]))
    return node


def _imported_here(node) -> dict:
    """{name: module or object} for the function's own `import m` and `from m import o` of modules imported
    already (`import contextlib` inside it)."""
    found = {}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Import):
            for alias in sub.names:
                top = alias.name if alias.asname else alias.name.split(".")[0]
                if top in sys.modules:
                    found[alias.asname or top] = sys.modules[top]
        elif isinstance(sub, ast.ImportFrom) and not sub.level and sub.module in sys.modules:
            for alias in sub.names:
                found[alias.asname or alias.name] = getattr(sys.modules[sub.module], alias.name, None)
    return found


def _named(node, static, imported):
    """The object `node` (a name or a chain of attributes) names: the function's own imports first."""
    if isinstance(node, ast.Name) and node.id in imported:
        return imported[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported:
        return getattr(imported[node.value.id], node.attr, None)
    return static(node)


class _Names:
    def __init__(self, identifiers):
        self.identifiers = set(identifiers)
        self.used = False
        self.returned = self._fresh("returned")
        self.result = self._fresh("result")

    def _fresh(self, base):
        name, i = base, 1
        while name in self.identifiers:
            name, i = f"{base}_{i}", i + 1
        self.identifiers.add(name)
        return name


class _Normalizer:
    def __init__(self, source, names, static=None):
        self.source = source
        self.names = names
        self.static = static
        self.imported = {}  # name -> what the function's own `import` binds it to (`_imported_here`)

    def block(self, stmts, in_loop):
        stmts = [new for stmt in stmts for new in self.match_statement(stmt)]
        stmts = [self.suppressing(stmt) for stmt in stmts]
        stmts = [new for stmt in stmts for new in self.try_statement(stmt)]
        stmts = [new for stmt in stmts for new in self.zip_checked_at_end(stmt)]
        stmts = [new for stmt in stmts for new in self.loop_else(stmt)]
        stmts = [new for stmt in stmts for new in self.return_after_with(stmt)]
        out = []
        for i, stmt in enumerate(stmts):
            stmt = self.statement(stmt, in_loop)
            rest = stmts[i + 1:]
            kind = exits(stmt, loop_exits=in_loop)
            if isinstance(stmt, list):  # a loop containing `return`, then its `if returned:` check
                out.extend(self.push_rest(stmt, rest, in_loop) if rest else stmt)
                if rest:
                    return out
                continue
            if kind == ALWAYS:
                if rest:
                    raise self.error(rest[0], "this code can never run (it follows a return, break or continue)",
                                     "remove it")
                out.append(stmt)
                return out
            if kind == MAYBE and rest:
                out.append(self.push_rest(stmt, rest, in_loop))
                return out
            out.append(stmt)
        return out

    def statement(self, stmt, in_loop):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return stmt  # a nested def: normalized when it is inlined, with its own exits
        if isinstance(stmt, ast.With):
            return self.with_exits(stmt, in_loop)
        if isinstance(stmt, ast.If):
            stmt.body = self.block(stmt.body, in_loop)
            stmt.orelse = self.block(stmt.orelse, in_loop)
        elif isinstance(stmt, (ast.For, ast.While)):
            if isinstance(stmt, ast.While) and any(isinstance(n, ast.NamedExpr) for n in ast.walk(stmt.test)):
                # `while (v := f(x)) < 1:`: v, set in the test, may carry a derivative the body and the code
                # after the loop use: the test becomes the body's first statements, `if not (...): break`,
                # which the reverse pass follows as it follows the body (the last, failing, test too)
                leave = _located(ast.If(ast.UnaryOp(ast.Not(), stmt.test), [ast.Break()], []), stmt.test)
                stmt.body, stmt.test = [leave] + stmt.body, _located(ast.Constant(True), stmt.test)
            had_return = contains_return(stmt.body)
            stmt.body = self.returns_in_loop(self.block(stmt.body, in_loop=True))
            if had_return:
                self.names.used = True
                exit_stmt = ast.Break() if in_loop else ast.Return(ast.Name(self.names.result, ast.Load()))
                flag = ast.If(ast.Name(self.names.returned, ast.Load()), [exit_stmt], [])
                return [stmt, _located(flag, stmt)]
        return stmt

    def match_statement(self, stmt):
        """`match s: case p if g: B ...` as `subject = s`, then an `if`/`elif` chain, one branch per case: the
        pattern's test (`subject == "l2"`, `isinstance(subject, (list, tuple)) and len(subject) == 2 and
        subject[0] == "scale"`, `True` for `_` or a name), and its guard with the names it captures read where
        they are; the branch binds them (`s = subject[1]`), then runs B. Class, mapping and `*rest` patterns
        are refused."""
        if not isinstance(stmt, getattr(ast, "Match", ())):
            return [stmt]
        subject = self.names._fresh("subject")
        chain = []
        for case in stmt.cases:
            binds = []
            test = self._pattern(case.pattern, _located(ast.Name(subject, ast.Load()), stmt.subject), binds)
            if case.guard is not None:
                guard = _Substituted({name: path for name, path in binds}).visit(copy_tree(case.guard))
                test = ast.BoolOp(ast.And(), [test, guard]) if not _is_true(test) else guard
            body = [_assign(name, copy_tree(path), case.pattern) for name, path in binds] + case.body
            chain.append((_located(test, case.pattern), body, case))
        orelse = []
        for test, body, case in reversed(chain):
            orelse = body if _is_true(test) and not orelse else \
                [_located(ast.If(test, body, orelse), case.pattern)]
        return [_assign(subject, stmt.subject, stmt)] + orelse

    def _pattern(self, pattern, path, binds):
        """The test of `pattern` on the value `path` reads, appending (name, path) for each name it captures."""
        if isinstance(pattern, ast.MatchValue):
            return ast.Compare(path, [ast.Eq()], [pattern.value])
        if isinstance(pattern, ast.MatchSingleton):
            return ast.Compare(path, [ast.Is()], [ast.Constant(pattern.value)])
        if isinstance(pattern, ast.MatchAs):
            test = ast.Constant(True) if pattern.pattern is None else self._pattern(pattern.pattern, path, binds)
            if pattern.name is not None:
                binds.append((pattern.name, path))
            return test
        if isinstance(pattern, ast.MatchOr):
            tests = [self._pattern(p, path, binds) for p in pattern.patterns]
            if binds:
                raise self.error(pattern, "an or-pattern that captures names is not supported inside a "
                                          "differentiated function", "write one case per alternative")
            return ast.BoolOp(ast.Or(), tests)
        if isinstance(pattern, ast.MatchSequence) and not any(isinstance(p, ast.MatchStar) for p in pattern.patterns):
            kinds = ast.Tuple([ast.Name("list", ast.Load()), ast.Name("tuple", ast.Load())], ast.Load())
            tests = [ast.Call(ast.Name("isinstance", ast.Load()), [path, kinds], []),
                     ast.Compare(ast.Call(ast.Name("len", ast.Load()), [path], []), [ast.Eq()],
                                 [ast.Constant(len(pattern.patterns))])]
            for k, item in enumerate(pattern.patterns):
                test = self._pattern(item, ast.Subscript(path, ast.Constant(k), ast.Load()), binds)
                if not _is_true(test):
                    tests.append(test)
            return ast.BoolOp(ast.And(), tests)
        raise self.error(pattern, f"this `case` pattern (`{ast.unparse(pattern)}`) is not supported inside a "
                                  f"differentiated function: only values, names, `_`, `|` and sequences of them are",
                         "test the subject with `if`/`elif` (isinstance, keys, len) instead")

    def suppresses(self, item) -> bool:
        """Whether the `with` item `item` is `contextlib.suppress(...)` (`suppressing`)."""
        return self.static is not None and isinstance(item.context_expr, ast.Call) \
            and _named(item.context_expr.func, self.static, self.imported) is contextlib.suppress

    def suppressing(self, stmt):
        """`with contextlib.suppress(E, F): B` as `try: B except (E, F): pass`, which it is (a manager named
        after it, `with suppress(E), open(p) as f:`, wraps the rest in a `with` of its own)."""
        if not isinstance(stmt, ast.With) or not self.suppresses(stmt.items[0]) \
                or stmt.items[0].context_expr.keywords or stmt.items[0].optional_vars:
            return stmt
        call = stmt.items[0].context_expr
        body = stmt.body if len(stmt.items) == 1 else \
            [self.suppressing(_located(ast.With(stmt.items[1:], stmt.body), stmt.items[1].context_expr))]
        if not call.args:  # suppress(): nothing suppressed
            return _located(ast.If(ast.Constant(True), body, []), stmt)
        kinds = call.args[0] if len(call.args) == 1 else _located(ast.Tuple(call.args, ast.Load()), call)
        handler = _located(ast.ExceptHandler(kinds, None, [_located(ast.Pass(), stmt)]), stmt)
        return _located(ast.Try(body, [handler], [], []), stmt)

    def return_after_with(self, stmt):
        """`with m: ...; return v` as `with m: ...; result = v` then `return result` after the block, so the
        return ends its function's (or branch's) block, and the manager's `__exit__` runs before it."""
        if not isinstance(stmt, ast.With) or not stmt.body or not isinstance(stmt.body[-1], ast.Return) \
                or stmt.body[-1].value is None:
            return [stmt]
        ending = stmt.body[-1]
        held = self.names._fresh("with_result")
        stmt.body = stmt.body[:-1] + [_assign(held, ending.value, ending)]
        return [stmt, _located(ast.Return(ast.Name(held, ast.Load())), ending)]

    def try_statement(self, stmt):
        """`try: B except E as e: H else: L finally: F` as plain statements, each of B's that may raise in a
        `Protected` of its own (lowered to a branch whose condition is whether it raised: frontend/lower_flow.py):

            caught = None
            Protected(t = <first statement's value>)      # except E: caught = <the exception>
            if caught is None:
                <what the statement assigns> = t; Protected(<the next statement>) ...
            if caught is None:
                L
            else:
                e = caught; H                             # `raise` in H: raise caught
            F

        The statements of B that ran before one raised run their backward pass too (each branch taken is on
        the tape); names are bound only after their statement's value is made, as Python binds them."""
        if hasattr(ast, "TryStar") and isinstance(stmt, ast.TryStar):
            raise self.error(stmt, "`except*` (exception groups) is not supported inside a differentiated function",
                             "handle the exception group outside the differentiated function")
        if not isinstance(stmt, ast.Try):
            return [stmt]
        parts = stmt.body + stmt.orelse + [s for handler in stmt.handlers for s in handler.body]
        if stmt.finalbody and any(_exits_leaving(parts)):  # a with block's or an inner try's exits too
            raise self.error(stmt.finalbody[0], "a `finally` block of a `try` that returns, breaks or continues "
                                                "is not supported inside a differentiated function",
                             "put the finally block's statements before each return, break or continue")
        finally_ = [new for s in stmt.finalbody for new in self.try_statement(s)]
        if not stmt.handlers:  # try/finally: the body, then the finally block (if the body raises, so does this)
            return [new for s in stmt.body for new in self.try_statement(s)] + finally_
        caught = self.names._fresh("caught")
        body = _Protecting(self, caught, None).block(stmt.body)
        if not any(isinstance(sub, Protected) for s in body for sub in ast.walk(s)):  # nothing there may raise
            return [new for s in stmt.body + stmt.orelse for new in self.try_statement(s)] + finally_
        kinds = [h.type if h.type is not None else _located(ast.Name("BaseException", ast.Load()), h)
                 for h in stmt.handlers]
        catch = kinds[0] if len(kinds) == 1 else _located(ast.Tuple(kinds, ast.Load()), stmt)
        for sub in (sub for s in body for sub in ast.walk(s)):
            if isinstance(sub, Protected) and sub.caught == caught:
                sub.catch = catch
            elif isinstance(sub, Protected):  # of a `try` inside this one's block: what it does not handle,
                sub.outer.append((catch, caught))  # this one may
        out = [_assign(caught, ast.Constant(None), stmt)] + body
        if exits_block(body, loop_exits=True) == ALWAYS:  # left before anything that may raise: no handler runs
            return out
        handled = _handler_body(stmt.handlers[-1], caught)
        for handler, kind in reversed(list(zip(stmt.handlers[:-1], kinds))):
            test = _located(Matches(ast.Name(caught, ast.Load()), kind), handler)
            handled = [_located(ast.If(test, _handler_body(handler, caught), handled), handler)]
        if stmt.orelse:
            ran = _located(ast.Compare(ast.Name(caught, ast.Load()), [ast.Is()], [ast.Constant(None)]), stmt)
            out.append(_located(ast.If(ran, stmt.orelse, handled), stmt.handlers[0]))
        else:
            raised = _located(ast.Compare(ast.Name(caught, ast.Load()), [ast.IsNot()], [ast.Constant(None)]), stmt)
            out.append(_located(ast.If(raised, handled, []), stmt.handlers[0]))
        return out + finally_

    def zip_checked_at_end(self, stmt):
        """`for ... in zip(a, b, strict=True):` left early (`break`, `return`) checks the lengths only where it
        runs to its end, as Python's lazy zip does: `for ... in zip(a, b): ... else: for _ in zip(a, b,
        strict=True): pass` (the else clause runs only then). Where the arguments are names or their attributes
        or items the loop does not change; other arguments are checked before the loop."""
        it = stmt.iter if isinstance(stmt, ast.For) else None
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "zip"
                and self.static is not None and self.static(it.func) is zip
                and len(it.keywords) == 1 and it.keywords[0].arg == "strict"
                and isinstance(it.keywords[0].value, ast.Constant) and it.keywords[0].value.value is True
                and it.args and any(_leaves_loop(stmt.body))):
            return [stmt]
        changed = {n.id for sub in stmt.body for n in ast.walk(sub)
                   if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
        changed |= {n.func.value.id for sub in stmt.body for n in ast.walk(sub) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)}
        if any(_pure_root(arg) is not None and {n.id for n in ast.walk(arg) if isinstance(n, ast.Name)} & changed
               or isinstance(arg, (ast.Call, ast.GeneratorExp, ast.Starred, ast.Yield, ast.YieldFrom, ast.Await,
                                   ast.NamedExpr)) for arg in it.args):
            return [stmt]
        before, args = [], []  # (another argument, `x[:3]`, made once into a name: zip reads it once, before the
        for arg in it.args:    #  loop, and the check at the end zips what the loop walked)
            if _pure_root(arg) is None:
                held = self.names._fresh("zip_argument")
                before.append(_assign(held, arg, arg))
                arg = ast.copy_location(ast.Name(held, ast.Load()), arg)
            args.append(arg)
        it.args = args
        check = ast.For(ast.Name(self.names._fresh("zipped"), ast.Store()), copy_tree(it), [ast.Pass()], [])
        stmt.iter = ast.copy_location(ast.Call(it.func, it.args, []), it)
        stmt.orelse = [_located(check, it)] + stmt.orelse
        return before + [stmt]

    def loop_else(self, stmt):
        """`for ...: ... else: E` as `broke = False; for ...: ...; if not broke: E`, `broke = True` set before
        the loop's own `break`s and every `return` in it: the statements that leave it early."""
        if not isinstance(stmt, (ast.For, ast.While)) or not stmt.orelse:
            return [stmt]
        orelse, stmt.orelse = stmt.orelse, []
        if not any(_leaves_loop(stmt.body)):
            return [stmt] + orelse
        flag = self.names._fresh("broke")
        for body in _leaves_loop(stmt.body):
            i = 0
            while i < len(body):
                if isinstance(body[i], (ast.Break, ast.Return)):
                    body.insert(i, _assign(flag, ast.Constant(True), body[i]))
                    i += 1
                i += 1
        check = ast.If(ast.UnaryOp(ast.Not(), ast.Name(flag, ast.Load())), orelse, [])
        return [_assign(flag, ast.Constant(False), stmt), stmt, _located(check, orelse[0])]

    def returns_in_loop(self, stmts):
        """Inside a loop, `return v` becomes `result = v; returned = True; break`."""
        out = []
        for stmt in stmts:
            if isinstance(stmt, ast.Return):
                out += self.returned(stmt, "a loop", "break, and return after the loop")
                out.append(_located(ast.Break(), stmt))
            elif isinstance(stmt, ast.If):
                stmt.body = self.returns_in_loop(stmt.body)
                stmt.orelse = self.returns_in_loop(stmt.orelse)
                out.append(stmt)
            else:
                out.append(stmt)
        return out

    def returned(self, stmt, inside, then):
        """`return v` from `inside` a loop or block as `result = v; returned = True` (the exit after it)."""
        if isinstance(stmt.value, ast.Tuple):
            raise self.error(stmt, f"returning a tuple from inside {inside} is not supported",
                             f"assign the values to variables, {then}")
        self.names.used = True  # (a bare `return`, numpy-ml's LogisticRegression.fit leaving its loop: None)
        value = stmt.value if stmt.value is not None else ast.copy_location(ast.Constant(None), stmt)
        return [_assign(self.names.result, value, stmt), _assign(self.names.returned, ast.Constant(True), stmt)]

    def with_exits(self, stmt, in_loop):
        """A `with` block's `return`, `break` and `continue` as flags set inside it (what follows each already
        in the branch that does not leave), and the exits themselves after the block, so that a block (a region
        of the IR, `with np.errstate(...)` in generated code) never ends in an exit:

            with m:                          with m:
                if c:                            exited = 0
                    return v          ->         if c:
                w = f(x)                             result = v; returned = True
                                                 else:
                                                     w = f(x)
                                             if returned: return result   (in a loop: break)
        """
        leaving = list(_exits_leaving(stmt.body))
        stmt.body = self.block(stmt.body, in_loop)
        if not leaving:
            return stmt
        exited = self.names._fresh("exited")
        stmt.body = [_assign(exited, ast.Constant(0), stmt)] + self.exits_as_flags(stmt.body, exited)
        kinds = {type(s) for s in leaving}
        tests = []
        if ast.Return in kinds:
            self.names.used = True
            leave = ast.Break() if in_loop else ast.Return(ast.Name(self.names.result, ast.Load()))
            tests.append((ast.Name(self.names.returned, ast.Load()), leave))
        for code, kind in ((1, ast.Break), (2, ast.Continue)):
            if kind in kinds:
                tests.append((ast.Compare(ast.Name(exited, ast.Load()), [ast.Eq()], [ast.Constant(code)]), kind()))
        chain = None
        for test, leave in reversed(tests):
            chain = _located(ast.If(test, [leave], [chain] if chain is not None else []), stmt)
            chain.exit_chain = True
        return [stmt, chain]

    def exits_as_flags(self, stmts, exited):
        """A `with` block's exits: `return v` as `result = v; returned = True`, `break` as `exited = 1`,
        `continue` as `exited = 2` (each ends its branch: the block ends with it)."""
        out = []
        for stmt in stmts:
            if isinstance(stmt, ast.Return):
                out += self.returned(stmt, "a `with` block", "and return after the block")
            elif isinstance(stmt, (ast.Break, ast.Continue)):
                out.append(_assign(exited, ast.Constant(1 if isinstance(stmt, ast.Break) else 2), stmt))
            elif isinstance(stmt, ast.If):
                stmt.body = self.exits_as_flags(stmt.body, exited)
                stmt.orelse = self.exits_as_flags(stmt.orelse, exited)
                out.append(stmt)
            else:
                out.append(stmt)
        return out

    def push_rest(self, stmt, rest, in_loop):
        """`if c: <exits>` followed by `rest`: put `rest` in every branch that does not always exit."""
        if isinstance(stmt, list):  # a loop containing `return` (or a with block leaving), and its checks
            loop, check = stmt
            while check.orelse and getattr(check.orelse[0], "exit_chain", False):
                check = check.orelse[0]
            check.orelse = self.block(list(rest), in_loop)
            return stmt
        if not isinstance(stmt, ast.If):
            raise self.error(stmt, "an early exit here is not supported", "restructure with if / else")
        for branch in ("body", "orelse"):
            stmts = getattr(stmt, branch)
            if exits_block(stmts, in_loop) != ALWAYS:
                setattr(stmt, branch, self.block(stmts + [copy_tree(r) for r in rest], in_loop))
        return stmt

    def error(self, node, message, hint=None):
        return UnsupportedSyntaxError(message, self.source.span(node), hint)


class Protected(ast.stmt):
    """One statement of a `try` block (`body`: a list of it), run in `try:`; an exception of the classes `catch`
    evaluates to is bound to the name `caught` instead (see `_Normalizer.try_statement`)."""

    _fields = ("body", "catch")


class Unpacks(ast.stmt):
    """Checks that `value` has `count` items (at least `count`: `starred`) to unpack: raises ValueError, as
    Python's `a, b = value` does, where it has not (a statement of its own in a `try` block)."""

    _fields = ("value", "count", "starred")


class Matches(ast.expr):
    """Whether the exception `caught` holds is of the classes `catch` evaluates to (an `except` clause's test)."""

    _fields = ("caught", "catch")


class Caught(ast.expr):
    """The exception the `except` block of a `Protected` statement is handling, `bound` (a var) there."""

    _fields = ()

    def __init__(self, bound):
        super().__init__()
        self.bound = bound


class _Protecting:
    """The statements of one `try` block, each that may raise protected (see `_Normalizer.try_statement`)."""

    def __init__(self, normalizer, caught, catch):
        self.normalizer, self.caught, self.catch = normalizer, caught, catch

    def block(self, stmts) -> list:
        """`stmts` protected: after a statement that may raise, the rest runs only `if caught is None`."""
        out, guarded, guard = [], False, None
        for stmt in stmts:
            for piece in self.statement(stmt):
                if guarded and guard is None:
                    guard = _located(ast.If(self.ran(piece), [], []), piece)
                    out.append(guard)
                (guard.body if guard is not None else out).append(piece)
                if any(isinstance(sub, Protected) for sub in ast.walk(piece)):  # may set caught: guard the rest
                    guarded, guard = True, None
        return out

    def ran(self, where):
        return _located(ast.Compare(ast.Name(self.caught, ast.Load()), [ast.Is()], [ast.Constant(None)]), where)

    def protected(self, stmt):
        node = _located(ast.copy_location(Protected([stmt], self.catch), stmt), stmt)
        node.caught, node.outer = self.caught, []
        return node

    def value_first(self, value, where):
        """(a name holding `value`, made in a protected statement of its own) or (`value`, None) if it cannot
        raise (a name or constant, or `name is None`: an inner `try`'s test)."""
        if isinstance(value, (ast.Name, ast.Constant)) or isinstance(value, ast.Compare) and isinstance(
                value.left, ast.Name) and isinstance(value.ops[0], (ast.Is, ast.IsNot)) and isinstance(
                value.comparators[0], ast.Constant):
            return value, None
        held = self.normalizer.names._fresh("attempt")
        return ast.Name(held, ast.Load()), self.protected(_assign(held, value, where))

    def binding(self, stmt) -> list:
        """`a, b = t`, `out[k] = t`: binding a value may raise too (three items, `k` past the end). Unpacking is
        preceded by a protected check of the number of items; a write into an item is protected itself."""
        target = stmt.targets[0] if len(stmt.targets) == 1 else None
        if not isinstance(target, (ast.Tuple, ast.List)):
            return [self.protected(stmt)]
        starred = any(isinstance(t, ast.Starred) for t in target.elts)
        check = Unpacks(stmt.value, len(target.elts) - starred, starred)
        return [self.protected(_located(ast.copy_location(check, stmt), stmt)), stmt]

    def statement(self, stmt) -> list:
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)) and stmt.value is not None:
            value, made = self.value_first(stmt.value, stmt)
            stmt.value = _located(value, stmt.value)
            if isinstance(stmt, ast.Assign) and not all(isinstance(t, ast.Name) for t in stmt.targets):
                return [s for s in (made, *self.binding(stmt)) if s is not None]
            return [made, stmt] if made is not None else [stmt]
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):  # a docstring
            return [stmt]
        if isinstance(stmt, (ast.Expr, ast.Raise, ast.Assert)):
            return [self.protected(stmt)]
        if isinstance(stmt, ast.If):
            test, made = self.value_first(stmt.test, stmt.test)
            stmt.test = _located(test, stmt.test)
            stmt.body, stmt.orelse = self.block(stmt.body), self.block(stmt.orelse)
            return [made, stmt] if made is not None else [stmt]
        if isinstance(stmt, ast.With):  # (an exception in it leaves the block: the rest of it is skipped)
            stmt.body = self.block(stmt.body)
            return [stmt]
        if isinstance(stmt, (ast.For, ast.While)):  # the body protected; a pass that raised leaves the loop
            stmt.body = self.block(stmt.body)  # (a body where nothing may raise: no check, as `caught` may be unset)
            if any(isinstance(sub, Protected) for s in stmt.body for sub in ast.walk(s)) \
                    and exits_block(stmt.body, loop_exits=True) != ALWAYS:
                left = _located(ast.UnaryOp(ast.Not(), self.ran(stmt)), stmt)
                stmt.body.append(_located(ast.If(left, [ast.Break()], []), stmt))
            return [stmt]
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):  # (done when transforming: it may fail then)
            return [self.protected(stmt)]
        if isinstance(stmt, ast.Try):  # a `try` of its own: its statements, protected here too
            return [piece for inner in self.normalizer.try_statement(stmt) for piece in self.statement(inner)]
        if isinstance(stmt, Protected):  # (one of that inner `try`'s: protected already, by it and by this one)
            return [stmt]
        if isinstance(stmt, (ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal, ast.FunctionDef,
                             ast.Delete, ast.AnnAssign)):
            return [stmt]
        raise self.normalizer.error(stmt, "this statement inside a `try` block is not supported",
                                    "move it out of the try block, or into a function the try block calls")


def _handler_body(handler, caught) -> list:
    """An `except` block's statements: `e = caught` first for `as e`, and a bare `raise` raising `caught`."""
    body = [_assign(handler.name, ast.Name(caught, ast.Load()), handler)] if handler.name else []
    return body + _reraising(handler.body, caught) if handler.body else body


def _reraising(stmts, caught) -> list:
    for stmt in stmts:
        if isinstance(stmt, ast.Raise) and stmt.exc is None:
            stmt.exc = _located(ast.Name(caught, ast.Load()), stmt)
        for field in ("body", "orelse", "finalbody"):  # not a nested try's handlers: they raise their own
            if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)) and hasattr(stmt, field):
                _reraising(getattr(stmt, field), caught)
    return stmts


def _is_true(test) -> bool:
    return isinstance(test, ast.Constant) and test.value is True


class _Substituted(ast.NodeTransformer):
    """Names read replaced by the expressions given (a `case` guard reading what its pattern captures)."""

    def __init__(self, paths):
        self.paths = paths

    def visit_Name(self, node):
        return copy_tree(self.paths[node.id]) if isinstance(node.ctx, ast.Load) and node.id in self.paths else node


def _assign(name, value, where):
    return _located(ast.Assign([ast.Name(name, ast.Store())], value), where)


def _located(node, where):
    """`node` with `where`'s source position on every sub-node that has none (for error carets)."""
    for sub in ast.walk(node):
        if "lineno" in sub._attributes and not hasattr(sub, "lineno"):
            ast.copy_location(sub, where)
    return node


def exits(stmt, loop_exits) -> str:
    """Whether `stmt` always, maybe or never leaves the block it is in."""
    if isinstance(stmt, list):
        return MAYBE
    if isinstance(stmt, ast.Return):
        return ALWAYS
    if isinstance(stmt, (ast.Break, ast.Continue)):
        return ALWAYS if loop_exits else NEVER
    if isinstance(stmt, ast.If):
        a, b = exits_block(stmt.body, loop_exits), exits_block(stmt.orelse, loop_exits)
        if a == b:
            return a
        return MAYBE
    if isinstance(stmt, (ast.For, ast.While)):
        return MAYBE if contains_return(stmt.body) else NEVER
    return NEVER


def _pure_root(node):
    """The name `node` reads, where it is a name, or attributes or items (at constants or names) of one: read
    again, it gives the same object. Else None."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, (ast.Constant, ast.Name)):
            return None
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _reaches_end(stmts, suppresses) -> bool:
    """Whether running `stmts` (a function's body) may come to their end: not when the last statement returns
    or raises, or is an `if`, `with`, `try` or `match` none of whose ways through does, or a `while True:` that
    only a `return` leaves. `suppresses(item)`: whether a `with` item is `contextlib.suppress(...)`, after which
    the code goes on where the body raised."""
    if not stmts:
        return True
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return False
    if isinstance(last, ast.If):
        return _reaches_end(last.body, suppresses) or _reaches_end(last.orelse, suppresses)
    if isinstance(last, ast.While) and isinstance(last.test, ast.Constant) and last.test.value and not last.orelse:
        return any(True for _ in _breaks_of(last.body))
    if isinstance(last, ast.With):
        return _reaches_end(last.body, suppresses) or any(suppresses(item) for item in last.items)
    if isinstance(last, ast.Try):
        if last.finalbody and not _reaches_end(last.finalbody, suppresses):
            return False
        return (_reaches_end(last.body, suppresses) and _reaches_end(last.orelse, suppresses)) \
            or any(_reaches_end(handler.body, suppresses) for handler in last.handlers)
    if isinstance(last, getattr(ast, "Match", ())):
        final = last.cases[-1]
        irrefutable = isinstance(final.pattern, ast.MatchAs) and final.pattern.pattern is None and final.guard is None
        return not irrefutable or any(_reaches_end(case.body, suppresses) for case in last.cases)
    return True


def _breaks_of(stmts):
    """The `break`s of the loop whose body is `stmts` (not a nested loop's)."""
    for stmt in stmts:
        if isinstance(stmt, ast.Break):
            yield stmt
        elif isinstance(stmt, (ast.For, ast.While)):
            yield from _breaks_of(stmt.orelse)
        elif isinstance(stmt, (ast.If, ast.With, ast.Try)) or isinstance(stmt, getattr(ast, "Match", ())):
            for field in ("body", "orelse", "finalbody"):
                yield from _breaks_of(getattr(stmt, field, []))
            for sub in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
                yield from _breaks_of(sub.body)


def exits_block(stmts, loop_exits) -> str:
    kinds = [exits(s, loop_exits) for s in stmts]
    if ALWAYS in kinds:
        return ALWAYS
    return MAYBE if MAYBE in kinds else NEVER


def contains_return(stmts) -> bool:
    """A `return` of this function in `stmts` (not one of a nested def's)."""
    return any(isinstance(sub, ast.Return) for stmt in stmts for sub in _own_nodes(stmt))


def _leaves_loop(stmts, nested=False):
    """The statement lists (of the loop whose body is `stmts`) holding a `break` of that loop or a `return`."""
    if any(isinstance(s, ast.Return) or (isinstance(s, ast.Break) and not nested) for s in stmts):
        yield stmts
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            yield from _leaves_loop(stmt.body, nested)
            yield from _leaves_loop(stmt.orelse, nested)
        elif isinstance(stmt, (ast.For, ast.While)):
            yield from _leaves_loop(stmt.body, True)
            yield from _leaves_loop(stmt.orelse, nested)
        elif isinstance(stmt, (ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                yield from _leaves_loop(getattr(stmt, field, []), nested)


def _exits_leaving(stmts, in_loop=False):
    """The returns, breaks and continues in `stmts` that leave it (not a nested loop's own)."""
    for stmt in stmts:
        if isinstance(stmt, ast.Return) or isinstance(stmt, (ast.Break, ast.Continue)) and not in_loop:
            yield stmt
        elif isinstance(stmt, (ast.For, ast.While)):
            yield from _exits_leaving(stmt.body, True)
            yield from _exits_leaving(stmt.orelse, in_loop)
        elif isinstance(stmt, (ast.If, ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                yield from _exits_leaving(getattr(stmt, field, []), in_loop)
            for handler in getattr(stmt, "handlers", []):
                yield from _exits_leaving(handler.body, in_loop)


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _own_nodes(node):
    """`ast.walk`, but not into nested functions, lambdas or classes (their returns are theirs)."""
    if isinstance(node, _NESTED):
        return
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _own_nodes(child)

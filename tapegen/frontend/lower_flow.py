"""Lowering control flow and in-place assignment: `if`, `for`, `while`, exits, `A[i] = v`.

A name assigned inside a branch or loop gets one var for the whole construct
(a *shared* var, assigned in several places: the IR's only non-single
assignments). A shared var never aliases an argument or another name: if the
name's current value is not its own, it is copied in first (`h = x` before a
loop that reassigns `h`).

`for` over a range, an array, a list, `zip(...)` or `enumerate(...)` becomes a
loop over a range with an index var, so the backward pass can replay the
indices in reverse without recording them.
"""
from __future__ import annotations

import ast
import builtins
import copy
import inspect
import operator
import types

import numpy as np

from .. import rules
from ..errors import UnsupportedSyntaxError
from ..ir import IN_PLACE, Catch, Const, Eqn, Exit, If, Loop, Pack, Var, assigned, atom_vars, walk
from ..rules.language import (assign, changed_with, check_zip, flat_coordinates, in_place_result, integer_index,
                               item_alone, item_not_shared, iterated, joined_index, make_list, mutable_items,
                               no_candidate, number_item, same_object, set_in_item, shows_memory_of, still_item,
                               view_again, view_positions, with_item)
from ..rules.standing_for import flat_get, flat_set
from .inline import Choice, KnownItems, LocalFunction, Recarry, StaticValue, user_function, users_class
from .lower_expr import MAX_UNROLLED, _function_like, _hashable, _opaque, _opaque_method
from .normalize import Caught, Matches
from .resolve import MISSING


class ControlFlow:
    """Mixin for `_Lowerer`: statement handlers for control flow and subscript assignment."""

    # --- if / else ----------------------------------------------------------------------

    def stmt_If(self, stmt, cond=None):
        if cond is None:
            cond = self.if_condition(stmt)
        if isinstance(cond, Const):  # decided at transform time: lower only the branch taken, in place
            taken = stmt.body if cond.value else stmt.orelse
            for skipped in stmt.orelse if cond.value else stmt.body:  # (never run, unless lowered again so)
                self.skipped.setdefault(id(skipped), True)
            if any(isinstance(s, ast.Return) for s in taken):
                self.current.extend(self.block(taken))
            else:
                for inner in taken:
                    self.statement(inner)
            return
        self.skipped.update((id(branch), False) for branch in stmt.body + stmt.orelse)
        with self.sharing(_assigned_names(stmt.body + stmt.orelse), stmt) as construct:
            then = self.block(stmt.body)
            construct.branch_done()
            orelse = self.block(stmt.orelse)
        self.current.append(If(cond, tuple(then), tuple(orelse), self.span(stmt.test)))

    def if_condition(self, stmt):
        """An `if`'s condition: a Const where it is decided when transforming."""
        decided = self.known_comparison(stmt.test)
        if decided is not None:  # `elif i < layer_count - 1:` in a loop unrolled, of ints known now
            return Const(decided)
        deciding, self.deciding = getattr(self, "deciding", False), True  # a flag of a module's object tested
        try:  # here is taken as it is now (known_flag)
            return self.condition(stmt.test)
        finally:
            self.deciding = deciding

    def known_comparison(self, node):
        """The bool a comparison of ints known now is (`i < n - 1`, each operand `known_int`'s), else None."""
        if not isinstance(node, ast.Compare) or not all(type(op) in _INT_COMPARISONS for op in node.ops):
            return None
        operands = [self.known_int(operand) for operand in [node.left, *node.comparators]]
        if any(operand is None for operand in operands):
            return None
        return all(_INT_COMPARISONS[type(op)](a, b) for op, a, b in zip(node.ops, operands, operands[1:]))

    def condition(self, node):
        return self.expr(node)

    # --- try / except -------------------------------------------------------------------

    def stmt_Protected(self, stmt):
        """One statement of a `try` block (frontend/normalize.py): a branch whose `then` is the statement, run
        in `try:`, and whose `orelse` binds the exception `except` caught; which ran is on the tape, so the
        backward pass replays the statement only where it finished. It must change nothing that outlives it
        before it is sure to finish: where it raised, the change would be made with no backward pass."""
        inner = stmt.body[0]
        if isinstance(inner, ast.Assign) and self.known_now(inner.value):  # `act = getattr(np, NAME)`: made now,
            return self.statement(inner)  # nothing runs (or raises) when the code runs (`caught` stays None)
        if isinstance(inner, (ast.Import, ast.ImportFrom)):  # imported now, or failing now: its except block
            try:
                return self.statement(inner)
            except UnsupportedSyntaxError as refused:
                failed = getattr(refused, "import_error", None)
                classes = self.static_classes(stmt.catch)
                if failed is None or classes is None or not isinstance(failed, classes):
                    raise
                self.store(stmt.caught, Const(failed), inner)  # the guards after it and the handler: decided now
                return None
        handlers = [(stmt.catch, stmt.caught)] + getattr(stmt, "outer", [])  # (an inner `try`'s first)
        every = [e for c, _ in handlers for e in (c.elts if isinstance(c, ast.Tuple) else [c])]  # (`except` takes
        classes = self.expr(stmt.catch if len(handlers) == 1 else ast.copy_location(  # no tuple in a tuple)
            ast.Tuple(every, ast.Load()), inner))
        before = set(self.namer.assigned)
        bound = self.namer.invented("raised")
        caught = _caught_by(handlers, bound, inner)
        with self.sharing(_assigned_names(stmt.body) | {name for _, name in handlers}, inner) as construct:
            then = self.block(stmt.body)
            construct.branch_done()
            orelse = self.block([ast.fix_missing_locations(caught)])
        self.check_unchanged_before_raising(then, before, inner)
        catch = Catch(classes, self.namer.invented("mark"), bound, self.namer.invented("kept"))
        self.current.append(If(Const(True), tuple(then), tuple(orelse), self.span(inner), catch))

    def static_classes(self, node):
        """The exception class, or tuple of them, an `except` clause names, known now; or None."""
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        classes = tuple(self.static(item) for item in items)
        if not all(isinstance(c, type) and issubclass(c, BaseException) or isinstance(c, tuple) for c in classes):
            return None
        return classes

    def known_now(self, node) -> bool:
        """Whether `node` is a function, class or module the transform knows (`np.tanh`, `sc.expit`,
        `getattr(np, NAME)` of a name it knows)."""
        return isinstance(node, (ast.Name, ast.Attribute, ast.Call)) and self.static(node) is not MISSING

    def check_unchanged_before_raising(self, then, before, node):
        """Refuses a protected statement that changes a value made before it (`xs.append(v)`, an attribute a
        method sets) anywhere but in its last step: a step after the change may raise."""
        last = then[-1] if then else None
        for stmt in walk(then):
            if not isinstance(stmt, Eqn) or stmt is last:
                continue
            changed = [o for o in stmt.outputs if o.name in before]
            if changed:
                raise self.unsupported(node, f"this statement of a `try` block changes `{changed[0].name}` (at "
                                             f"{stmt.span.file}:{stmt.span.line}: {stmt.span.text.strip()}) "
                                             f"before it is sure to finish: if it raises after that, tapegen "
                                             f"cannot undo the change", "make the change in the try statement's "
                                                                       "`else:` block, after what may raise")

    def dispatched(self, node, outputs, cases, value, name, expected):
        """A call through a name (or object) that holds one of several functions (or classes of object), each
        known now: an `if` chain that runs when the code runs, one branch per case (`cases`: (test atom, a
        function lowering the call with that candidate known, returning its atoms)), in which every mode
        follows the branch taken; the last branch raises, naming `name`, for a `value` that is none of them
        (`expected`, in words). Returns the call's atoms."""
        holders = [self.namer.invented("chosen").name for _ in range(outputs)]
        stand_in = ast.copy_location(ast.If(node, [], []), node)  # the construct the branches make up
        branches = []
        with self.sharing(set(holders), stand_in) as construct:
            for test, lower_one in cases:
                def then(lower_one=lower_one):
                    for holder, atom in zip(holders, lower_one()):
                        self.store(holder, atom, node)
                branches.append((test, self.block([], then=then)))
                construct.branch_done()
            chain = tuple(self.block([], then=lambda: self.emit_multi(
                rules.lookup(no_candidate), [value, Const(name), Const(expected)], {}, node, 0, [])))
        for test, block in reversed(branches):
            chain = (If(test, tuple(block), chain, self.span(node)),)
        self.current.extend(chain)
        return tuple(self.env.pop(holder) for holder in holders)

    # --- loops --------------------------------------------------------------------------

    def stmt_For(self, stmt):
        # Python evaluates the iterable once, before the loop: a body rebinding its name
        # (`for row in a: a = a + row`) must not change what is iterated.
        walked = _written_through_target(stmt)
        if walked is not None and all(isinstance(self.env.get(name), Var) for _, names in walked for name in names):
            return self.unrolled_in_place(stmt, walked)
        by_index = self.through_list_items(stmt)
        if by_index is not None:
            return self.stmt_For(by_index)
        iterable, index_name, bind_items = self.iteration(stmt)
        if iterable is None:  # over functions, or objects of different classes: one copy of the body per item
            return self.unrolled(stmt, index_name, bind_items)
        names = _assigned_names(stmt.body) | _target_names(stmt.target)
        rebound = {value for value in (self.env.get(name) for name in names) if isinstance(value, Var)}
        bind_items = [(target, self._snapshot(seq, stmt) if seq in rebound and seq in self.shared.values() else seq)
                      for target, seq in bind_items]  # inside an outer loop: a name it already shares
        pinned = {seq for _, seq in bind_items if isinstance(seq, Var)}
        with self.sharing(names, stmt, pinned):
            index = self.shared_var(index_name) if index_name else self.namer.invented("i")
            counter = self.namer.invented("n")
            body = self.block(stmt.body, before=(bind_items, index))
        self.current.append(Loop("for", index, iterable, (), None, tuple(body), counter, self.span(stmt)))

    def iteration(self, stmt):
        """(range atom, the user's index name or None, (target, sequence) pairs to bind) for a `for` header.

        `for i in range(n)` counts; `enumerate(xs)`, `zip(xs, ys)` (also `zip(*pairs)`, and the two
        nested) and any other iterable are indexed by a hidden counter, and each target (a name, or a
        tuple to unpack, nested to any depth) is bound to its sequence's item.
        """
        target, it = stmt.target, stmt.iter
        self.unrollable = not any(isinstance(sub, (ast.Break, ast.Continue)) for sub in ast.walk(ast.Module(stmt.body, [])))
        fn = self.static(it.func) if isinstance(it, ast.Call) else MISSING
        if fn is builtins.range and isinstance(target, ast.Name):
            counted = self.expr(it)
            bounds = [self.env.get(a.id) if isinstance(a, ast.Name) else Const(a.value)
                      if isinstance(a, ast.Constant) else None for a in it.args]
            if self.unrollable and not it.keywords and 0 < len(bounds) <= 3 and all(
                    isinstance(b, Const) and type(b.value) is int for b in bounds) and bounds[-1].value != 0 \
                    and len(range(*(b.value for b in bounds))) <= MAX_UNROLLED \
                    and self.indexes_appended_objects(stmt, target.id):  # each layers[i] the object it is
                return None, None, [(target, KnownItems(tuple(Const(v) for v in range(*(b.value for b in bounds))),
                                                        "list"))]
            return counted, target.id, []
        if fn is builtins.enumerate and _is_unpacking(target, 2) and isinstance(target.elts[0], ast.Name) \
                and len(it.args) == 1 and not it.keywords:
            pairs = self.sequences(target.elts[1], it.args[0])
            index_name = target.elts[0].id
        elif fn is builtins.enumerate and _is_unpacking(target, 2) and (len(it.args) == 2 and not it.keywords or (
                len(it.args) == 1 and [k.arg for k in it.keywords] == ["start"])):
            return self.counted_from(target, it, it.args[1] if len(it.args) == 2 else it.keywords[0].value)
        else:
            pairs, index_name = self.sequences(target, it), None
        if any(isinstance(seq, KnownItems) for _, seq in pairs):
            return None, index_name, pairs
        return self.range_over([seq for _, seq in pairs], it), index_name, pairs

    def sequences(self, target, it):
        """(target, sequence) pairs whose items, taken at one index, bind `target` iterating over `it`."""
        fn = self.static(it.func) if isinstance(it, ast.Call) else MISSING
        strict = self.zip_strict(it) if fn is builtins.zip else None
        if strict is not None and _is_unpacking(target) and len(it.args) == 1 \
                and isinstance(it.args[0], ast.Starred):  # zip(*pairs): the k-th target walks pairs[k]
            rows = self.expr(it.args[0].value)
            pairs = [(elt, self.emit(rules.lookup(operator.getitem), [rows, Const(k)], {}, it, None))
                     for k, elt in enumerate(target.elts)]
            return self.checked_zip([[pair] for pair in pairs], it) if strict else pairs
        if strict is not None and _is_unpacking(target, len(it.args)) \
                and not any(isinstance(a, ast.Starred) for a in it.args):
            walked = [self.sequences(elt, arg) for elt, arg in zip(target.elts, it.args)]
            return self.checked_zip(walked, it) if strict else [pair for pairs in walked for pair in pairs]
        if isinstance(it, (ast.List, ast.Tuple)) and getattr(self, "unrollable", False) and 0 < len(it.elts) <= 16 \
                and all(isinstance(e, ast.Constant) and type(e.value) is str for e in it.elts):
            # for k in ["Q", "K", "V"]: unrolled, each key known (`self.projections[k]`, `d[f"{k}_proj"] = v`)
            return [(target, KnownItems(tuple(Const(e.value) for e in it.elts), "list"))]
        held = self.dict_of_objects(it) or self.known_keys_of(it)
        if held is not None:  # for k, layer in self.encoder.items(): over a dict of layers known now
            return [(target, held)]
        seq = self.value(it)
        if isinstance(seq, StaticValue):
            seq = seq.atom
        special = self.special_method(seq, "__iter__", it)
        if isinstance(special, str):  # __iter__ is `return iter(self.layers)`: over the attribute
            hidden = self.namer.invented("iterated").name
            self.env[hidden] = seq
            read = ast.copy_location(ast.Attribute(ast.copy_location(ast.Name(hidden, ast.Load()), it), special,
                                                   ast.Load()), it)
            try:
                return self.sequences(target, read)
            finally:
                del self.env[hidden]
        if special is not None:  # for v in obj, an object of the user's: the list its __iter__ (a generator) yields
            seq = self.inline(special, it, [seq], {}, receiver=self.types[seq])
        known = self.free_keys(it, seq) or self.appended_objects(seq)
        if known is not None:  # for i, x in zip(argnums, xs): each i known, so is the item it sets (ItemFlow)
            return [(target, known)]
        if isinstance(seq, Var) and self.container_kind(seq) not in ("list", "tuple"):
            seq = self.emit(rules.lookup(iterated), [seq], {}, it, None)  # a dict walks its keys
        return [(target, seq)]

    def zip_strict(self, it):
        """`zip(...)`'s `strict=` as a bool known now (False where not given), else None (another keyword, or a
        `strict` known only when the code runs)."""
        if not all(kw.arg == "strict" for kw in it.keywords):
            return None
        value = it.keywords[-1].value if it.keywords else ast.Constant(False)
        strict = value.value if isinstance(value, ast.Constant) else self.static(value)
        return bool(strict) if isinstance(strict, (bool, int)) else None

    def checked_zip(self, walked, it):
        """The (target, sequence) pairs of `zip(..., strict=True)`'s arguments (`walked`: each argument's), after
        Python's check that they have one length: made now where every length is known, else when the code
        runs."""
        sizes, sequences = [len(pairs) for pairs in walked], []
        for pairs in walked:
            for _, seq in pairs:
                known = seq.items if isinstance(seq, (KnownItems, Pack)) else \
                    seq.value if isinstance(seq, Const) and isinstance(seq.value, (list, tuple)) else None
                sequences.append(Const(len(known)) if known is not None else seq)
        if all(isinstance(seq, Const) for seq in sequences):
            try:
                check_zip(sizes, *(seq.value for seq in sequences))
            except ValueError as error:
                raise self.unsupported(it, f"this zip always raises ValueError: {error}",
                                       "give zip sequences of one length, or drop strict=True") from None
        else:
            self.emit_multi(rules.lookup(check_zip), [Const(tuple(sizes))] + sequences, {}, it, 0, [])
        return [pair for pairs in walked for pair in pairs]

    def dict_of_objects(self, it):
        """`d.items()` / `d.values()` of a dict of the module or closure, or of an object known now (numpy-ml's
        `self.encoder`, an OrderedDict of layers), whose values are objects of the user's or functions, or of a
        dict display made here whose items are known one by one (KnownItems, `{"sq": lambda v: v * v}`): the
        pairs (or values) as items known now, so the loop over them is unrolled with each object known. The
        dict's keys and values are among what is checked before each call."""
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in ("items", "values")
                and not it.args and not it.keywords and getattr(self, "unrollable", False)):
            return None
        base = it.func.value
        local = self.env.get(base.id) if isinstance(base, ast.Name) else None
        if isinstance(local, KnownItems) and local.kind == "dict":  # ops = {"sq": lambda v: v * v, ...} made here
            return KnownItems(tuple(KnownItems((Const(key), item), "tuple") if it.func.attr == "items" else item
                                    for key, item in zip(local.keys, local.items)), "list")
        found = self.static(base) if isinstance(base, (ast.Name, ast.Attribute)) else MISSING
        if found is MISSING or isinstance(base, ast.Attribute) and not isinstance(found, dict):
            found = self.live_attribute(base)
        if not isinstance(found, dict) or not 0 < len(found) <= MAX_UNROLLED or \
                not all(_function_like(v) or users_class(type(v)) and not inspect.isclass(v) for v in found.values()):
            return None
        whole = self.expr(base)
        self.bindings.append(("keys", found, None, tuple(found)))
        items = []
        for key, value in found.items():
            self.bindings.append(("item", found, key, value))
            atom = self.emit(rules.lookup(operator.getitem), [whole, Const(key)], {}, it, None)
            if _function_like(value):
                known = StaticValue(value, atom)
            else:
                self.know_object(atom, value)
                known = atom
            items.append(KnownItems((Const(key), known), "tuple") if it.func.attr == "items" else known)
        return KnownItems(tuple(items), "list")

    def known_keys_of(self, it):
        """`for k in ops:` (`ops.keys()`) over a dict whose items the transform knows one by one: its keys."""
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "keys" \
                and not it.args and not it.keywords:
            it = it.func.value
        local = self.env.get(it.id) if isinstance(it, ast.Name) else None
        if isinstance(local, KnownItems) and local.kind == "dict" and getattr(self, "unrollable", False):
            return KnownItems(tuple(Const(key) for key in local.keys), "list")
        return None

    def indexes_appended_objects(self, stmt, index) -> bool:
        """Whether the body of the loop `stmt` over `range(...)` indexes by its index `index` (`layers[i]`,
        `self.layers[i - 1]`) a list `appended_items` knows, read through a name or an object's attribute set
        here: NNFS's `Model.finalize` linking `self.layers[i].prev = self.layers[i - 1]`."""
        for sub in ast.walk(ast.Module(stmt.body, [])):
            if not (isinstance(sub, ast.Subscript) and any(isinstance(n, ast.Name) and n.id == index
                                                           for n in ast.walk(sub.slice))):
                continue
            held = self.env.get(sub.value.id) if isinstance(sub.value, ast.Name) else None
            if isinstance(sub.value, ast.Attribute) and isinstance(sub.value.value, ast.Name):
                owner = self.env.get(sub.value.value.id)
                held = self.attributes.get((owner, sub.value.attr), (None,))[0] if isinstance(owner, Var) else None
            if isinstance(held, Var) and self.appended_items(held) is not None:
                return True
        return False

    def appended_objects(self, seq):
        """A list built here by appending objects of the user's of different classes (and functions), one by
        one, as KnownItems: the loop over it is unrolled, each item the object it is (`item_vars`). So is one
        of objects of one class whose attributes hold derivatives, or made here (`layers.append(Dense(W1))`,
        `layers.append(Dense(W2))`): each its own `.W`, as for the display `[Dense(W1), Dense(W2)]`."""
        items = self.appended_items(seq) if getattr(self, "unrollable", False) else None
        return KnownItems(items, "list") if items is not None else None

    def appended_items(self, seq):
        """The atoms of `appended_objects`' list `seq` (whether or not a loop over it may be unrolled), or None."""
        items = self.item_vars.get(seq) if isinstance(seq, Var) else None
        if not items or len(items) > MAX_UNROLLED or self.items_class(seq) is not None and not \
                self.needs_known(items) or not all(
                isinstance(item, (StaticValue, LocalFunction)) or isinstance(item, Var) and item in self.types
                for item in items):
            return None
        return items

    def free_keys(self, node, seq):
        """A tuple of ints or strings the function reads from its module or closure (a wrapper's `argnums`),
        as items known now (the loop over it is unrolled); the generated code checks it is still that tuple."""
        if not (isinstance(node, ast.Name) and node.id not in self.env and isinstance(seq, Var)
                and getattr(self, "unrollable", False)):  # (a loop with `break` is not unrolled)
            return None
        value = self.scope.lookup(node.id)
        if type(value) is not tuple or not 0 < len(value) <= 16 or any(type(v) not in (int, str) for v in value):
            return None
        self.free_values[seq] = (value, node.id)
        return KnownItems(tuple(Const(v) for v in value), "tuple")

    def unrolled(self, stmt, index_name, items):
        """`for f in fs:` over KnownItems: the body once per item, with the item bound as it is known.

        `for act, w in zip(ACTIVATIONS, weights)` calls each activation's own method; the other
        sequences' items are read by constant index.
        """
        lengths = [len(seq.items) for _, seq in items if isinstance(seq, KnownItems)]
        exits = [sub for sub in ast.walk(ast.Module(stmt.body, [])) if isinstance(sub, (ast.Break, ast.Continue))]
        if exits:
            raise self.unsupported(exits[0], f"`{ast.unparse(exits[0])}` in a loop over functions or objects of "
                                             f"different classes, which tapegen unrolls",
                                   "use an `if` around the rest of the body instead")
        for k in range(min(lengths)):
            if index_name is not None:
                self.store(index_name, Const(k), stmt)
            for target, seq in items:
                item = seq.items[k] if isinstance(seq, KnownItems) else \
                    self.emit(rules.lookup(operator.getitem), [seq, Const(k)], {}, target, None)
                self.bind_known(target, item)
            for inner in stmt.body:
                self.statement(inner)
        for inner in stmt.orelse:
            self.statement(inner)

    def unrolled_in_place(self, stmt, walked):
        """`for d in [dWxh, dWhh]: np.clip(d, -5, 5, out=d)` (see `_written_through_target`): the body once per
        item, its target bound to what the walked name holds, that name set aside while the body runs (the
        target is then the one name for the array, changed as a name is), and bound after it to what the target
        holds then: NumPy changed the array both names held. In a loop around, the target is not carried through
        the passes here (its loop var would join each item's array, as if one name held them all)."""
        carried = {target: self.shared.pop(target) for target, _ in walked if target in self.shared}
        try:
            for k in range(len(walked[0][1])):
                self._pass_in_place(stmt, [(target, names[k]) for target, names in walked])
        finally:
            last = {target: self.env.get(target) for target in carried}
            for target, var in carried.items():
                self.shared[target] = self.env[target] = var
        for target in carried:  # the target holds the last item after the loop
            self.store(target, last[target], stmt)

    def _pass_in_place(self, stmt, passed):
        """One pass of `unrolled_in_place`: [(target, the name it stands for)]."""
        for target, name in passed:
            self.store(target, self.env[name], stmt)
        held = {name: self.env.pop(name) for _, name in passed if name in self.env}
        before = set(self.written_params)
        try:
            for inner in stmt.body:
                self.statement(inner)
        finally:
            for name, value in held.items():
                self.env.setdefault(name, value)
        for target, name in passed:
            self.store(name, self.changed_item(held.get(name), self.env[target], stmt), stmt)
            if target in self.written_params and target not in before:  # a helper's parameter written through
                self.written_params.setdefault(name, self.written_params.pop(target))  # the target: its caller's
                # array is now what the parameter's name holds

    def through_list_items(self, stmt):
        """`for p, g in zip(params, grads): p -= lr * g` (d2l's `sgd`, an optimiser's `self.params`, `for g in
        grads: g *= 0.5`) over lists held in a name or attribute, its body changing a target in place and binding
        it no other way (`_written_through_list`): the same loop by index, each target read and written as its
        list's item (`params[k] -= lr * grads[k]`, which tapegen follows, checking when the code runs that
        nothing else holds that item). The target and its item are then one object all along, as in NumPy, if
        the item is one an in-place operator changes: checked when the code runs (a number in the list would be
        rebound in the target only). None where the loop is not one, or a target is read after it."""
        found = _written_through_list(stmt)
        if found is None:
            return None
        pairs, index_name, augmented, changed = found
        as_lists = []
        for k, (target, seq) in enumerate(pairs):
            if target not in changed:  # only read: under a name of its own (`zip(params, [gW, gb])`)
                if not isinstance(seq, ast.Name):
                    hidden = self.namer.invented("walked").name
                    self.statement(ast.fix_missing_locations(ast.copy_location(
                        ast.Assign([ast.Name(hidden, ast.Store())], seq), seq)))
                    pairs[k] = (target, ast.copy_location(ast.Name(hidden, ast.Load()), seq))
                continue
            if isinstance(seq, ast.Name):
                held = self.env.get(seq.id)
            else:
                base = self.env.get(seq.value.id)
                held = self.attributes.get((base, seq.attr), (None,))[0] if isinstance(base, Var) else None
            if isinstance(seq, ast.Name) and isinstance(held, Pack) and held.kind == "tuple" \
                    and held in self.displays and not self.read_outside(seq.id, stmt):  # `sgd((w, b), ...)`: the
                as_lists.append(seq)  # arrays the tuple holds change as a list's items would (walked as one)
            elif self.container_kind(held) != "list" and not (  # `for row in out: row += b` over an array: its
                    isinstance(seq, ast.Name) and isinstance(held, Var) and self.container_kind(held) is None
                    and held not in self.types and held not in self.mixed):  # rows, `out[k] += b` (1-d: numbers,
                return None  # which `+=` rebinds in the target alone: `mutable_items` raises when the code runs)
        if any(self.static(ast.Name(fn, ast.Load())) is not getattr(builtins, fn) for fn in ("range", "len", "min")):
            return None
        span = (stmt.lineno, stmt.col_offset, stmt.end_lineno, stmt.end_col_offset)
        targets = {target for target, _ in pairs}
        loops = [loop for loop in ast.walk(self.node) if isinstance(loop, (ast.For, ast.While)) and loop is not stmt]
        around = [loop for loop in loops if _within(span[:2], loop)]
        rebinding = [loop for loop in loops if isinstance(loop, ast.For) and loop not in around
                     and {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)} & targets]
        for sub in ast.walk(self.node):  # (a target read after the loop, or in a loop around, holds its last
            where = (getattr(sub, "lineno", 0), getattr(sub, "col_offset", 0))  # item in Python; in a body of
            if isinstance(sub, ast.Name) and sub.id in targets and isinstance(sub.ctx, ast.Load) \
                    and not _within(where, stmt) \
                    and (where > span[:2] or any(_within(where, loop) for loop in around)) \
                    and not any(any(_within(where, inner) for inner in loop.body) and any(  # a loop binding it,
                        isinstance(n, ast.Name) and n.id == sub.id for n in ast.walk(loop.target))  # its own)
                                for loop in rebinding):
                return None
        for seq in as_lists:
            tuple_ = self.env[seq.id]  # (a list of the same names' arrays, as `sgd([w, b], ...)` passes)
            listed = self.emit(rules.lookup(make_list), list(tuple_.items), {}, stmt, self.shared.get(seq.id, seq.id))
            self.displays[listed] = self.displays[tuple_]
            self.store(seq.id, listed, stmt)
        if isinstance(stmt.iter, ast.Call) and self.zip_strict(stmt.iter):
            self.checked_zip([[(target, self.expr(seq))] for target, seq in pairs], stmt.iter)
        for target, seq in pairs:
            if target in augmented:
                self.emit_multi(rules.lookup(mutable_items), [self.expr(seq), Const(ast.unparse(seq)),
                                                              Const(target)], {}, stmt, 0, [])
        index = index_name or self.namer.invented("k").name
        lengths = [_call("len", seq) for _, seq in pairs]
        count = lengths[0] if len(lengths) == 1 else _call("min", *lengths)
        items = {target: seq for target, seq in pairs}

        class ByIndex(ast.NodeTransformer):
            def visit_Name(self, node):
                if node.id not in items:
                    return node
                return ast.copy_location(ast.Subscript(_copied(items[node.id]), ast.Name(index, ast.Load()),
                                                       node.ctx), node)

        body = [ByIndex().visit(_copied(inner)) for inner in stmt.body]
        loop = ast.For(ast.Name(index, ast.Store()), _call("range", count), body, [])
        return ast.fix_missing_locations(ast.copy_location(loop, stmt))

    def read_outside(self, name, stmt) -> bool:
        """Whether `name` is read outside statement `stmt`: after it, or in a loop around it."""
        span = (stmt.lineno, stmt.col_offset)
        around = [loop for loop in ast.walk(self.node) if isinstance(loop, (ast.For, ast.While)) and loop is not stmt
                  and _within(span, loop)]
        return any(isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Load)
                   and not _within((sub.lineno, sub.col_offset), stmt)
                   and ((sub.lineno, sub.col_offset) > span or any(_within((sub.lineno, sub.col_offset), loop)
                                                                   for loop in around))
                   for sub in ast.walk(self.node))

    def changed_item(self, before, after, node):
        """What a name holds once its array went through a loop target changed in place (`d *= 0.5`): the new
        value where it is an array, list or dict (NumPy or Python changed it); a number, only rebound in the
        target, is left as it was (`in_place_result` decides when the code runs)."""
        if after is before or before is None or self.container_kind(before) in ("list", "dict"):
            return after
        result = self.emit(rules.lookup(in_place_result), [before, after], {}, node, None)
        if after in self.fresh:
            self.fresh.add(result)
        return result

    def bind_known(self, target, item):
        """Bind loop target `target` to `item`: an atom, or a function or items known now."""
        if isinstance(target, ast.Name) and (isinstance(item, (StaticValue, LocalFunction, KnownItems, Choice))
                                             or isinstance(item, Var) and item in self.types):
            self.bind_static(target.id, item)  # an object too: the one made, whose attributes are known
        elif isinstance(item, KnownItems) and _is_unpacking(target, len(item.items)):
            for elt, part in zip(target.elts, item.items):
                self.bind_known(elt, part)
        else:
            self.unpack(target, self.as_atom(item, target))

    def _snapshot(self, seq, node):
        """The value a loop iterates, under a name its body does not rebind."""
        return self.emit(rules.lookup(assign), [seq], {}, node, None)

    def counted_from(self, target, it, start_node):
        """`for i, x in enumerate(xs, start)`: the index walks `range(start, start + n)` beside the items."""
        start = self.expr(start_node)
        pairs = self.sequences(target.elts[1], it.args[0])
        if any(isinstance(seq, KnownItems) for _, seq in pairs):
            if not isinstance(start, Const):
                raise self.unsupported(start_node, "`enumerate(..., start)` over functions or objects, with a start "
                                                   "computed when the code runs", "count from a constant")
            count = min(len(seq.items) for _, seq in pairs if isinstance(seq, KnownItems))
            numbers = KnownItems(tuple(Const(start.value + k) for k in range(count)), "list")
            return None, None, [(target.elts[0], numbers)] + pairs
        loop = self.range_over([seq for _, seq in pairs], it)
        stop = self.emit(rules.lookup(operator.add), [start, self.emit(rules.lookup(builtins.len), [loop], {}, it,
                                                                          None)], {}, it, None)
        numbers = self.emit(rules.lookup(builtins.range), [start, stop], {}, it, None)
        return loop, None, [(target.elts[0], numbers)] + pairs

    def range_over(self, seqs, node):
        lengths = [self.emit(rules.lookup(builtins.len), [s], {}, node, None) for s in seqs]
        if len(lengths) > 1:
            lengths = [self.emit(_opaque_builtin(min), lengths, {}, node, None)]
        return self.emit(rules.lookup(builtins.range), lengths, {}, node, None)

    def bind_loop_items(self, items, index):
        for target, seq in items:
            self.unpack(target, self.emit(rules.lookup(operator.getitem), [seq, index], {}, target, None))

    def unpack(self, target, value):
        """Bind `target` (a name, or a tuple or list of targets, nested) to `value`, item by item."""
        if isinstance(target, ast.Name):
            return self.store(target.id, value, target)
        if not _is_unpacking(target) or any(isinstance(elt, ast.Starred) for elt in target.elts):
            raise self.unsupported(target, f"the loop target `{ast.unparse(target)}` is not supported",
                                   "loop over names or tuples of names, e.g. `for i, (x, y) in ...`")
        for k, elt in enumerate(target.elts):
            self.unpack(elt, self.emit(rules.lookup(operator.getitem), [value, Const(k)], {}, elt, None))

    def stmt_While(self, stmt):
        with self.sharing(_assigned_names(stmt.body), stmt):
            test_body = self.block([], test=stmt.test)
            test = self._last_test
            counter = self.namer.invented("n")
            body = self.block(stmt.body)
        self.current.append(Loop("while", None, None, tuple(test_body), test, tuple(body), counter,
                                 self.span(stmt)))

    def stmt_Break(self, stmt):
        self.current.append(Exit("break", self.span(stmt)))

    def stmt_Continue(self, stmt):
        self.current.append(Exit("continue", self.span(stmt)))

    # --- returns inside branches ----------------------------------------------------------

    def branch_return(self, stmt):
        """`return v` at the end of a branch: store into the function's result var(s). (`return`: None.)"""
        value = stmt.value if stmt.value is not None else ast.copy_location(ast.Constant(None), stmt)
        values = value.elts if isinstance(value, ast.Tuple) else [value]
        as_tuple = isinstance(value, ast.Tuple)
        if self.results is None:
            self.results = [self.namer.invented("result") for _ in values]
            self.results_tuple = as_tuple
        if as_tuple != self.results_tuple or len(values) != len(self.results):
            raise self.unsupported(stmt, "every return must give the same number of values",
                                   "return a tuple of the same length everywhere")
        atoms = [self.expr(v) for v in values]
        for var, atom in zip(self.results, atoms):
            self.emit(rules.lookup(assign), [atom], {}, stmt, var)
        self.return_span = self.span(stmt)

    # --- A[i] = v ---------------------------------------------------------------------------

    def assign_subscript(self, target, value_node, op=None):
        if isinstance(target.value, ast.Attribute):
            return self._assign_attribute_item(target, value_node, op)
        if isinstance(target.value, ast.Subscript) and self._assign_into_item(target, value_node, op):
            return None
        if isinstance(target.value, ast.Subscript) and _view_index(target.value.slice) \
                and self._array_root(target.value) is not None:
            return self._assign_into_view(target, value_node, op)
        if isinstance(target.value, ast.Subscript) and not isinstance(target.value.slice, (ast.Tuple, ast.Slice)) \
                and self._array_root(target.value) is not None:
            joined, holder = self._joined_index(target)
            try:
                return self.assign_subscript(joined, value_node, op)
            finally:
                self.env.pop(holder, None)
        if isinstance(target.value, ast.Call):  # np.einsum("ii->i", K)[:] += v: into what a call returns
            raise self.unsupported(target, f"`{ast.unparse(target)} = ...` writes into the array a call returns, "
                                           f"which may be a view of another array (NumPy would change that one "
                                           f"too): tapegen does not follow that write",
                                   "write into the array itself (`K[np.diag_indices_from(K)] += v` for a diagonal), "
                                   "or into a copy of the result")
        if not isinstance(target.value, ast.Name):
            raise self.unsupported(target, "assignment into a nested subscript (a[i][j] = v) is not supported",
                                   "name the view first (v = a[i:]; v[j] = ...) and make `a` in the function "
                                   "(a = np.array(a) for an argument)" if isinstance(target.value, ast.Subscript)
                                   and _view_index(target.value.slice) else "index once with a tuple: a[i, j] = v")
        name = target.value.id
        held = self.env.get(name)
        if op is None and isinstance(held, KnownItems) and held.kind in ("list", "dict") \
                and self.set_known_item(name, target, value_node):
            return None
        array = self.read_name(target.value)
        special = self.special_method(array, "__setitem__", target)
        if special is not None:  # store[k] = v on an object of the user's: its __setitem__
            index = self.expr(target.slice)
            if op is not None:
                getter = self.special_method(array, "__getitem__", target)
                old = self.inline(getter, target, [array, index], {}, receiver=self.types[array])
                value = self.emit(rules.lookup(op), [old, self.expr(value_node)], {}, target, None)
            else:
                value = self.expr(value_node)
            self.inline(special, target, [array, index, value], {}, receiver=self.types[array])
            return None
        if self.container_kind(array) is None and isinstance(array, Var) and isinstance(target.slice, ast.Constant) \
                and isinstance(target.slice.value, str):  # p["W"] = v: a string key, so a dict (an argument's,
            if array in self.root_params:  # or `p = params.copy()` of one), set as one built here; into an
                array = self.emit(rules.lookup(dict), [array], {}, target, self.shared.get(name))  # argument's
                self.store(name, array, target)  # copy, as for an array (the caller's dict is left as it was)
            elif array in self.read_out and array not in self.item_origin and array not in self.detached:
                raise self.unsupported(target, f"`{ast.unparse(target)} = ...` changes in place a dict read out of "
                                               f"a list, tuple or dict tapegen does not follow here (`{name}` of "
                                               f"an item of an item, or of a copy): Python shows the change there "
                                               f"too", f"set the item through the name holding the list or dict "
                                                       f"(`ps[i][\"k\"] = v`), or work on a copy: "
                                                       f"{name} = dict({name})")
            self.containers[array] = "dict"
            self._carry_written(name, array)  # (a loop around: it rebinds the name, as for a dict built here)
        if self.container_kind(array) in ("list", "dict"):
            return self._assign_item(name, array, target, value_node, op)
        restoring = isinstance(value_node, ast.Call) and isinstance(value_node.func, ast.Name) \
            and value_node.func.id == "tape_pop"  # generated code putting back what it overwrote
        healed = None if restoring else self.healed_base(array)  # row = out[i]; row[:] = v: out changes too
        where = self.env.get(target.slice.id) if isinstance(target.slice, ast.Name) else None
        putting_back = {self.positions_of[where]} if where in self.positions_of else ()  # (gradient code's
        stale = self.stale_views(array, array, target) if healed is None and not restoring and isinstance(
            array, Var) and array in self.fresh and array not in self.views else []  # `W = B[:2]`, then `B[0] = v`
        self.refreshing = {view for _, view in stale}
        index = self.index(target.slice)
        try:
            array = self.writable(name, array, target, restoring, healed, putting_back,  # `out[where] = row[pick]`)
                                  into_view=True, index=index)
        finally:
            self.refreshing = set()
        if op is not None:  # A[i] += v  is  A[i] = A[i] + v
            old = self.emit(rules.lookup(operator.getitem), [array, index], {}, target, None)
            value = self.emit(rules.lookup(op), [old, self.expr(value_node)], {}, target, None)
        else:
            value = self.expr(value_node)
        self.emit(rules.lookup(operator.setitem), [array, index, value], {}, target, array)
        if healed is not None:
            self.write_back_view(array, healed, target)
        elif stale:
            self.refresh_views(array, array, target, stale)

    def _array_root(self, node):
        """The value of the name `A` in `A[i][j]...` where the function made it with NumPy (an array, not a list
        built here nor an argument, which may be a list: refused as written, then lowered again knowing), else
        None."""
        while isinstance(node, ast.Subscript):
            node = node.value
        value = self.env.get(node.id) if isinstance(node, ast.Name) else None
        made = value in self.fresh or value in self.computed
        return value if isinstance(value, Var) and made and self.container_kind(value) is None else None

    def _assign_into_view(self, target, value_node, op):
        """`F[i + 1:][mask] -= v` into an array the function made (an MD force loop): `F[i + 1:]` is a view of
        `F` (a slice always is), so this is `view = F[i + 1:]; view[mask] -= v`, the write into a view that
        NumPy shows in `F` too (followed as for a name holding the view). The view's name is not the user's:
        nothing reads it after."""
        holder = self.namer.invented("view").name
        self.assign(holder, target.value)
        into = ast.copy_location(ast.Subscript(ast.copy_location(ast.Name(holder, ast.Load()), target.value),
                                               target.slice, ast.Store()), target)
        try:
            return self.assign_subscript(into, value_node, op)
        finally:
            self.env.pop(holder, None)

    def _joined_index(self, target):
        """`P[i][k] = v` into an array (quuxlabs' matrix factorisation): `P[i]` is a view of `P` where `i` is an
        integer, so this is `P[i, k] = v`; checked when the code runs (`P` an array, `i` an integer)."""
        inner = target.value
        span = self.span(target)
        checked = self.emit(rules.lookup(integer_index),
                            [self._array_root(inner), self.expr(inner.slice), Const(f"{ast.unparse(target)} = ..."),
                             Const(f"{span.file}:{span.line}:{span.col + 1}" if span is not None else "?")],
                            {}, inner.slice, None)
        holder = self.namer.invented("index").name
        if not isinstance(target.slice, (ast.Tuple, ast.Slice, ast.Constant)):  # `C[k][np.diag_indices(3)]`:
            checked = self.emit(rules.lookup(joined_index), [checked, self.expr(target.slice)], {}, target.slice,
                                None)  # a tuple is spread after `k` (as `C[k][r, c]`), anything else follows it
            self.env[holder] = checked
            joined = ast.copy_location(ast.Name(holder, ast.Load()), target.slice)
            return ast.copy_location(ast.Subscript(inner.value, joined, ast.Store()), target), holder
        self.env[holder] = checked
        first = ast.copy_location(ast.Name(holder, ast.Load()), inner.slice)
        rest = list(target.slice.elts) if isinstance(target.slice, ast.Tuple) else [target.slice]
        joined = ast.copy_location(ast.Tuple([first, *rest], ast.Load()), target.slice)
        return ast.copy_location(ast.Subscript(inner.value, joined, ast.Store()), target), holder

    def _assign_into_item(self, target, value_node, op) -> bool:
        """`xs[t][i] = v` into an array held in a list or dict this function built (min-char-rnn's one-hot
        `xs[t][inputs[t]] = 1`): the array, changed, is a new array, and the container holding it is
        rebound wherever it is held (a name, an attribute). Another name for the array from before may not
        be read afterwards. False: not such a container (an array: `A[i][j] = v` is `_joined_index`'s)."""
        inner = target.value
        container = self.expr(inner.value)
        if not isinstance(container, Var) or self.container_kind(container) not in ("list", "dict"):
            return False
        key = self.index(inner.slice)
        holders = self._holders(container, key.value if isinstance(key, Const) else key)
        if not holders:
            return False
        if container in self.params and container not in self.root_params:  # a helper's: its caller's list or
            text = ast.unparse(inner.value)  # dict, whose item NumPy changes there too (not followed)
            raise self.unsupported(target, f"`{ast.unparse(target)} = ...` changes in place an item of `{text}`, "
                                           f"which the caller passed: tapegen does not follow the change there",
                                   f"change the item in the caller, or return the new value: "
                                   f"{text}[...] = new_item")
        self.check_items_unshared(container, target, ast.unparse(target))
        self.check_item_unshared(container, key, holders, target)
        item = self.emit(rules.lookup(operator.getitem), [container, key], {}, inner, None)
        index = self.index(target.slice)
        value = self.expr(value_node)
        if op is not None:
            old = self.emit(rules.lookup(operator.getitem), [item, index], {}, target, None)
            value = self.emit(rules.lookup(op), [old, value], {}, target, None)
        changed = self.emit(rules.lookup(set_in_item), [item, index, value], {}, target, None)  # a new array, list
        self.fresh.add(changed)                                                              # or dict
        self.replace_item(holders, key, changed, inner, ast.unparse(inner))
        for holder in (holder for holder, _ in holders if isinstance(holder, str)):
            passed = self.callers_passed(holder)  # `sgd([w, b], ...)` doing `params[k][:] = ...`: w and b hold
            if passed is not None and self.caller is not None and passed in self.caller.displays:  # the new
                self.written_params.setdefault(holder, passed)  # items after the call (`_write_back_display`)
        return True

    def check_item_unshared(self, container, key, holders, node, statement=None, follow=None) -> list:
        """`xs[t][i] = v` changes in place the array (or list, dict) `xs[t]`, which tapegen's code makes a new
        value held in `xs` only: checked when the code runs that no other item of `xs`, and no name read
        afterwards that may hold it (put in a list or dict, read out of one, or a list or dict itself:
        `h = ...; xs[t] = h`, then `h` read), holds the same one. `follow`: a test of the values of this
        function's names that are not checked but returned, [(name, its value)], for the caller to follow
        (`same_object`: the container's items put in it or taken out of it)."""
        holder_names = {holder for holder, _ in holders if isinstance(holder, str)}
        written = [self.callers_passed(holder) for holder in holder_names]  # (a helper's caller's list or
        written = {passed for passed in written if passed is not None}  # dict holds its new value after it)
        span = self.span(node)
        where = f"{span.file}:{span.line}:{span.col + 1}" if span is not None else "?"
        defined = self.defined_here()  # (a name a loop sets later in its pass holds nothing yet)
        others = sorted((name, value) for name, value in self.env.items() if isinstance(value, Var)
                        and value in defined and name not in holder_names and self.read_after(name, node))
        shapes = tuple(name for name, _ in others if not self.read_after(name, node, values_only=True))
        caller, seen = self.caller, {value for _, value in others}
        followed = [(name, value) for name, value in others if follow and follow(value)]
        others = [(name, value) for name, value in others if (name, value) not in followed]
        while caller is not None:  # in a helper or method: the names of the functions calling it (`W =
            # m.params["W"]`, then `m.update(grads)` doing `self.params[k] -= ...`; not the names of a display
            # it passed as the list, `sgd([w, b], ...)`, which hold its items after the call: `_write_back_display`)
            displayed = {name for passed in written for name in caller.displays.get(passed, ())}
            others += sorted((name, value) for name, value in caller.env.items() if isinstance(value, Var)
                             and value in defined and value not in seen and value not in written
                             and name not in displayed)
            seen.update(value for _, value in others)
            caller = caller.caller
        self.emit_multi(rules.lookup(item_not_shared), [container, key, Pack(tuple(value for _, value in others),
                                                                             "tuple"),
                                                        Const(statement or f"{ast.unparse(node)} = ..."),
                                                        Const(tuple(name for name, _ in others)),
                                                        Const(where), Const(shapes)],
                        {}, node, 0, [])
        return followed

    def defined_here(self) -> set:
        """The vars the code has set where the statement being lowered runs (in this function and the
        functions calling it): its parameters, the values it reads from outside, and what the open blocks set."""
        found = set(self.root_params) | set(self.params) | set(self.free.values())
        caller = self.caller
        while caller is not None:
            found |= set(caller.params) | set(caller.free.values())
            caller = caller.caller
        for block in (*self.outer_blocks, *self.blocks):
            found.update(assigned(block))
        return found

    def check_item_alone(self, container, key, item, node, text, holders=True):
        """`rows[0][1] = v` (or `rows[0].append(v)`) changes `item`, which tapegen's code replaces in `container`
        by a changed copy: checked when the code runs that no other item of it is the same object (`[row] * 2`)
        and no name read afterwards holds it or an array it is a view of (`rows = [a]`, or `rows = list(m)`,
        then `a` or `m`), where Python's change would show too; `holders`: nor another list or dict a name holds
        (`l2 = [a]`), nor an object's attribute (False: a change that carries no derivative, `dv["wrappers"].append(
        {...})` on a shallow copy of numpy-ml's dict, checked against names only as before)."""
        others = sorted(name for name, atom in self.env.items() if isinstance(atom, Var) and atom is not container
                        and atom is not item and atom not in self.item_origin  # (rebound, or not to be read again)
                        and (holders or atom in self.held_in or self.container_kind(atom) is None)
                        and self.read_after(name, node))  # (a list or dict too: `l2 = [a]` holding the item)
        values = [self.env[n] for n in others]
        for (base, attr), (value, block) in self.attributes.items() if holders else ():  # an object's attribute
            value = self.shared_attributes.get((base, attr), value)
            if isinstance(value, Var) and value is not container and value is not item and self.is_open(block):
                owner = [n for n, atom in self.env.items() if atom is base]
                others.append(f"{owner[0] if owner else 'an object'}.{attr}")
                values.append(value)
        self.emit_multi(rules.lookup(item_alone), [container, key, item, Pack(tuple(values), "tuple"), Const(text),
                                                   Const(tuple(others))], {}, node, 0, [])

    def _assign_item(self, name, container, target, value_node, op):
        """`xs[k] = v` on a list or dict built here: `xs` becomes a copy with item `k` replaced. On one a module's
        object holds (cs231n's `bn_param["running_mean"] = ...` into `model.bn_params[0]`, also in a helper), the
        write is also made as Python makes it, into that object: `live_write`."""
        if container in self.free.values():  # G["n"] += 1 on a dict of the module (or a closure)
            kind = self.container_kind(container)
            raise self.unsupported(target, f"`{ast.unparse(target)} = ...` changes `{name}`, a {kind} of the module "
                                           f"(or a closure), which Python changes for every later call: tapegen "
                                           f"would change a copy",
                                   f"keep what changes from call to call in an object's attribute "
                                   f"(`STATE.{name}[...] = ...`), or copy it first if only this call should see "
                                   f"the change: {name} = {'dict' if kind == 'dict' else 'list'}({name})")
        held = self.live_holder(container)
        if held is None:
            self.check_unshared(name, container, target, items_in_place=op is not None)
        key = self.container_key(container, target.slice)
        self.wrote_in_place(container, "item")  # (in a loop, before the pass rebinds it: checked at its end)
        value = self._augmented_item(container, key, target, value_node, op, [(name, container)])
        for var, (origin, at) in list(self.item_origin.items()) if op is None else ():  # `c = caches[i]`, then
            if origin is container and (at is key if isinstance(key, Var) else isinstance(key, Const) and not
                                        isinstance(at, Var) and _hashable(at) and at == key.value):
                del self.item_origin[var]  # `caches[i] = {}`: `c` holds an object no longer in it (a change
                self.detached.add(var)     # through `c` is not made there)
        through = held is None and container in self.item_origin and self.callers_passed(name) is None
        there = self.check_still_item(container, target) if through else None  # (before `name`'s var, in a loop,
        #                                                                          holds the changed copy)
        if isinstance(key, Const) and isinstance(key.value, slice) and self.container_kind(container) == "list":
            changed = self.spliced(container, key.value, value, target, self.shared.get(name, name))
        else:
            changed = self.emit(rules.lookup(with_item), [container, key, value], {}, target,
                                self.shared.get(name, name))
        if through:
            self.write_through_item(container, changed, target, there)  # `p = ps[i]; p["rm"] = m`: Python changed
            #                  the dict `ps[i]` is too (a helper's parameter: its caller does, after the call)
        self.store(name, changed, target)
        if held is not None:
            self.live_write(held, name, container, key, value, target)

    def spliced(self, container, part, value, target, out):
        """`xs[i:j] = ys` on a list built here (`xs[:] = ...` too): `xs[:i] + list(ys) + xs[j:]`, as Python
        replaces the items, however many `ys` holds. (with_item's rules take one item's key: a TypeError in
        the gradient code.) A step, or bounds that are not plain non-negative ints in order, are refused."""
        start, stop = part.start, part.stop
        if part.step is not None or any(b is not None and (type(b) is not int or b < 0) for b in (start, stop)) \
                or start is not None and stop is not None and stop < start:
            raise self.unsupported(target, f"`{ast.unparse(target)} = ...` replaces a slice tapegen follows only "
                                           f"with bounds 0 <= i <= j and no step", "build the new list: "
                                                                                   "xs = xs[:i] + new + xs[j:]")
        def part_of(lo, hi):
            return self.emit(rules.lookup(operator.getitem), [container, Const(slice(lo, hi))], {}, target, None)
        new = self.emit(rules.lookup(list), [value], {}, target, None)
        head = part_of(None, start) if start is not None else self.emit(rules.lookup(make_list), [], {}, target, None)
        joined = self.binary(operator.add, head, new, target, None)
        if stop is None:
            return self.emit(rules.lookup(assign), [joined], {}, target, out)
        return self.binary(operator.add, joined, part_of(stop, None), target, out)

    def live_holder(self, var, depth=0):
        """(object, attribute): the module's object whose list or dict attribute `var` is, or holds through items
        (`model.bn_params[0]`), where this function has not set that attribute; else None."""
        held = self.live_items[var][0] if var in self.live_items else self._read_from_live(var)
        origin = self.item_origin.get(var) if held is None and depth < 8 else None
        return held if origin is None else self.live_holder(origin[0], depth + 1)

    def live_write(self, held, name, container, key, value, node):
        """`container[key] = value` into a list or dict an object of the module holds (`held`: the object and
        attribute): made in place, as Python does, so the object keeps it after the call. A value that carries
        a derivative there cannot be followed back: the attribute may not be read again in this function."""
        target = self.live_items.get(container, (held, container))[1]  # (the object's own dict, not a copy)
        self.emit_multi(_opaque_method("__setitem__"), [target, key, value], {}, node, 0, [])
        self.live_items[self.env[name]] = (held, target)  # (the name's new value: a later write goes there too)
        if self.may_carry(value):
            self.live_written.setdefault(held, (ast.unparse(node), node))

    def check_still_item(self, item, node):
        """The item of the list or dict `item` was read out of, checked when the code runs to be `item` still,
        where a change through it is put back (`write_through_item`)."""
        container, key = self.item_origin[item]
        return self.emit(rules.lookup(still_item), [container, key if isinstance(key, Var) else Const(key), item,
                                                    Const(ast.unparse(node))], {}, node, None)

    def write_through_item(self, item, changed, node, there=None):
        """`item`, read out of a list or dict (`p = ps[i]`, or passed as `ps[i]` to a helper), is now `changed`
        (an item set on it, in place in Python): the list or dict holding it is rebound to hold `changed`,
        checked when the code runs that `item` is still there (`there`: the item the list or dict holds,
        already read so) and nothing else holds it (as `d[k].append(v)` is). Refused where tapegen cannot tell
        which list or dict that is."""
        if there is None:
            there = self.check_still_item(item, node)
        container, key = self.item_origin[item]
        text = ast.unparse(node)
        holders = self._holders(container, key)
        if not holders:
            raise self.unsupported(node, f"`{text}` changes in place a list or dict read out of another one, which "
                                         f"Python shows there too; tapegen follows that only into a list or dict "
                                         f"a name or attribute holds",
                                   "set the item through the list or dict holding it (`ps[i][\"k\"] = v`), or "
                                   "work on a copy (`p = dict(ps[i])`)")
        if self.times_held.get(item) and not self.held_where_read(item):  # (`other = [p]`: would not show it)
            raise self.unsupported(node, f"`{text}` changes in place a list or dict that another list, tuple or "
                                         f"dict holds too, besides the one it was read out of: tapegen does not "
                                         f"follow the change there", "work on a copy (`p = dict(ps[i])`), and put "
                                                                     "it back where it is read")
        for holder, current in holders:  # a helper's parameter: its caller's list or dict changes too (`h = l[i]`,
            if isinstance(holder, str) and self.callers_passed(holder) is not None \
                    and not self.changes_callers(holder, current, node, items_in_place=True):  # then `h += v`)
                raise self.unsupported(node, f"`{text}` changes in place an item of `{holder}`, which its caller "
                                             f"holds elsewhere too: tapegen does not follow that change there",
                                       "hold it in one local name before the call, or have the helper return it")
        for holder, current in holders:  # in a loop or branch: each around carries the name whose items it
            if isinstance(holder, str) and holder not in self.shared:  # changes (`c = caches[i]; c["h"] = h`)
                block = self.var_block.get(current, self.blocks[0] if not self.outer_blocks else self.outer_blocks[0])
                missing = {c: {(holder, "[]")} for c in self.crossed_constructs(block)
                           if (holder, "[]") not in self.carried.get(c, ())}
                if missing:
                    raise Recarry(missing)
        key = key if isinstance(key, Var) else Const(key)
        names = [holder for holder, _ in holders if isinstance(holder, str)]
        self.check_items_unshared(container, node, text, key, names[0] if names else None, named=True)  # (`qs =
        #                                                                                   list(ps)`, ps read)
        self.check_item_alone(container, key, there, node, text)  # (`item`'s var, in a loop, may hold the changed
        self.replace_item(holders, key, changed, node, text)      #  copy by now: the item as the list holds it)

    def _assign_attribute_item(self, target, value_node, op):
        """`self.parameters["W"] = v` on a list or dict this function put in the attribute: the attribute
        becomes a copy with the item replaced (as `xs[k] = v` rebinds a name)."""
        attribute = target.value
        if attribute.attr == "flat" and isinstance(attribute.value, ast.Subscript) \
                and self._array_root(attribute.value) is not None:
            return self._assign_flat_of_item(target, value_node, op)
        base = self.expr(attribute.value)
        if attribute.attr == "flat" and isinstance(attribute.value, ast.Name) and isinstance(base, Var) \
                and base not in self.types and base not in self.live:
            return self._assign_flat(attribute.value.id, base, target, value_node, op)
        cls = self.class_of(base)
        if cls is not None and isinstance(inspect.getattr_static(cls, attribute.attr, None), property):
            # `self.hyperparameters["wrappers"] = [hp]` (numpy-ml's wrappers) through a property: Python changes
            # the list or dict its getter returns, not an attribute; as `d = self.hyperparameters; d[k] = v`
            # (a getter returning an attribute's list or dict, `return self._base_layer.parameters`: the
            # change is made through that attribute, `self._base_layer.parameters[k] = v`)
            container = self.expr(attribute)
            holders = [key for key, (value, _) in self.attributes.items() if value is container
                       and not isinstance(key[0], (type, types.ModuleType))]
            held = self.namer.invented(f"{attribute.attr}_").name
            self.env[held] = holders[0][0] if len(holders) == 1 else container  # (known: not stale, below)
            written = ast.copy_location(ast.Name(held, ast.Load()), attribute)
            if len(holders) == 1:
                written = ast.copy_location(ast.Attribute(written, holders[0][1], ast.Load()), attribute)
            try:
                return self.assign_subscript(ast.copy_location(ast.Subscript(written, target.slice, ast.Store()),
                                                               target), value_node, op)
            finally:
                self.env.pop(held, None)
        self.check_attribute_not_stale(base, attribute.attr, attribute)
        held = self.attributes.get((base, attribute.attr))
        text = ast.unparse(attribute)
        by_key = isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)
        now = getattr(self.live[base], attribute.attr, None) if base in self.live else None
        if held is not None and isinstance(held[0], Var) and self.container_kind(held[0]) in ("list", "dict"):
            array = False
        elif now is not None:  # an attribute of an object made before the call: what it holds now
            array = isinstance(now, np.ndarray)
        elif held is not None:
            array = isinstance(held[0], Var) and self.container_kind(held[0]) is None and not by_key
        else:
            array = not by_key
        if array and attribute.attr in _ARRAY_VIEW_ATTRIBUTES and isinstance(attribute.value, ast.Name) \
                and isinstance(base, Var) and base not in self.types and base not in self.live:
            held = self.namer.invented(f"{attribute.value.id}_{attribute.attr}").name  # `M.T[0] = v` on an
            self.env[held] = self.expr(attribute)  # array: `M_T = M.T; M_T[0] = v`, a write through a view
            try:
                return self.assign_subscript(ast.copy_location(ast.Subscript(ast.copy_location(ast.Name(
                    held, ast.Load()), attribute), target.slice, ast.Store()), target), value_node, op)
            finally:
                self.env.pop(held, None)
        if array and not (isinstance(base, Var) and (base in self.types or base in self.live)):
            raise self.unsupported(target, f"`{ast.unparse(target)} = ...` writes into `{text}`, which tapegen cannot "
                                           f"follow: `{ast.unparse(attribute.value)}` is not an object whose class it "
                                           f"knows here (and an array's `{attribute.attr}` would be a view of it)",
                                   f"write into the array itself (`a[:, 0] = v` for `a.T[0] = v`), or through the "
                                   f"name of an object made or read by name in the function")
        if array:
            return self._assign_attribute_array_item(target, value_node, op, base)
        if held is None and isinstance(base, Var) and base not in self.root_params:
            # `LAYER.parameters["W"] = W` on an object made before (a global layer): the dict it holds now,
            # with the item replaced, becomes the attribute (earlier reads of the dict may not be read again)
            container = self.expr(attribute)
            for var in self.attribute_reads.get((base, attribute.attr), ()):
                if var != container:
                    self.stale.setdefault(var, (text, target, "item"))
            self.attributes[(base, attribute.attr)] = held = (container, self.current)
            self.containers.setdefault(container, "dict")
        container = held[0] if held is not None else None
        if isinstance(container, Var) and self.container_kind(container) is None and base in self.live:
            # `for k in self.derived_variables: self.derived_variables[k] = []` (numpy-ml's flush_gradients)
            # on a layer made before: the attribute, carried through the loop, holds its list or dict
            self.containers[container] = "dict"
        if not isinstance(container, Var) or self.container_kind(container) not in ("list", "dict") or \
                not self.is_open(held[1]):
            raise self.unsupported(target, f"`{ast.unparse(target)} = ...` changes the list or dict in `{text}` in "
                                           f"place, and tapegen cannot tell which one that is here",
                                   f"build the list or dict in this function (`{text} = {{}}`) before setting "
                                   f"its items, or keep it in a local variable")
        self.check_unshared(text, container, target, via=(base, attribute.attr))
        key = self.index(target.slice)
        changed = self.emit(rules.lookup(with_item), [container, key,
                                                      self._augmented_item(container, key, target, value_node, op,
                                                                           [])],
                            {}, target, None)
        self.set_attribute(base, attribute, changed)

    def _assign_flat(self, name, array, target, value_node, op):
        """`a.flat[i] = v` (`a.flat[i] += v`) into an array: standing_for.flat_set, written into `a` as
        `a[i, j] = v` would be (into a copy of an argument)."""
        array = self.writable(name, array, target)
        index = self.index(target.slice)
        value = self.expr(value_node)
        if op is not None:
            old = self.inline(user_function(flat_get), target, [array, index], {})
            value = self.emit(rules.lookup(op), [old, value], {}, target, None)
        self.inline(user_function(flat_set), target, [array, index, value], {})

    def _assign_flat_of_item(self, target, value_node, op):
        """`C[k].flat[::n + 1] += reg` (sklearn's GaussianMixture regularising each covariance) into an array
        the function made: `C[k][coordinates] += reg`, the coordinates in `C[k]` of the items `.flat` names,
        so a write into `C` through `[k][...]` (checked when the code runs: `k` an integer)."""
        item = target.value.value
        coordinates = self.emit(rules.lookup(flat_coordinates), [self.expr(item), self.index(target.slice)], {},
                                target.slice, None)
        holder = self.namer.invented("coordinates").name
        self.env[holder] = coordinates
        try:
            written = ast.copy_location(ast.Subscript(item, ast.copy_location(ast.Name(holder, ast.Load()),
                                                                              target.slice), ast.Store()), target)
            return self.assign_subscript(written, value_node, op)
        finally:
            self.env.pop(holder, None)

    def _assign_attribute_array_item(self, target, value_node, op, base):
        """`self.Q[i, :] = q` into an array an attribute holds (numpy-ml's GMM): as `Q = self.Q; Q[i, :] = q;
        self.Q = Q`, the write checked as one into a name's array (into a copy of an array the object held
        before the call); a value read from the attribute before (which NumPy would show changed) may not be
        read again."""
        attribute = target.value
        if not (isinstance(attribute.value, ast.Name) and (base in self.made_objects or base is self.self_var
                                                           or base in self.free.values() or base in self.live)):
            raise self.unsupported(target, f"`{ast.unparse(target)} = ...` writes into the array an attribute of "
                                           f"`{ast.unparse(attribute.value)}` holds, and tapegen cannot tell which "
                                           f"object that is (another name for it would not show the write)",
                                   f"write through the name the object was made or read as: "
                                   f"`obj.{attribute.attr}[...] = ...`")
        held = self.attributes.get((base, attribute.attr))
        if held is not None and isinstance(held[0], Var):  # a.mu = x, then a.mu[0] = v: x is written too
            roots = self.alias_roots(held[0])
            for other, atom in self.env.items():
                if isinstance(atom, Var) and self.alias_roots(atom) & roots and self.read_after(other, target):
                    raise self.unsupported(target, f"`{ast.unparse(target)} = ...` writes into the array `{other}` "
                                                   f"holds too, which tapegen cannot follow",
                                           f"set a copy: {ast.unparse(attribute)} = {other}.copy()")
        hidden = self.namer.invented(f"{attribute.attr}_").name
        load = ast.copy_location(ast.Name(hidden, ast.Load()), target)
        store = ast.copy_location(ast.Name(hidden, ast.Store()), target)
        read = ast.copy_location(ast.Attribute(attribute.value, attribute.attr, ast.Load()), attribute)
        item = ast.copy_location(ast.Subscript(load, target.slice, ast.Store()), target)
        self.statement(ast.copy_location(ast.Assign([store], read), target))
        array = self.env[hidden]
        if not (isinstance(array, Var) and array in self.fresh and array not in self.params):
            # an array the object held before the call: written into a copy, which the attribute then holds
            array = self.emit(rules.lookup(np.copy), [array], {}, target, None)  # (as `x[i] = v` on an argument)
            self.fresh.add(array)
            self.store(hidden, array, target)
        for var in self.attribute_reads.get((base, attribute.attr), ()):
            if var != array:
                self.stale.setdefault(var, (ast.unparse(attribute), target, "item"))
        self.assign_subscript(item, value_node, op)
        written = self.env.pop(hidden)
        if base in self.live:  # an object from before the call keeps a copy: the backward pass puts back what
            written = self.emit(rules.lookup(np.copy), [written], {}, target, None)  # the write overwrote in
            self.fresh.add(written)  # the array written into, which the object would otherwise show
        self.set_attribute(base, attribute, written)

    def _augmented_item(self, container, key, target, value_node, op, holders):
        """The value `xs[k] = v` stores, or `xs[k] op= v` (`d["n"] += 1`, `params[k] -= lr * grads[k]`): Python
        rebinds a number item. NumPy's `+=` on an array item changes the array in place, wherever else it is
        held: checked when the code runs that nothing else does (`holders` hold the container)."""
        if op is None:
            return self.expr(value_node)
        known = self.constant_items.get(container, {})
        if isinstance(key, Const) and _hashable(key.value) and key.value in known:
            old = known[key.value]
        else:
            old = self.emit(rules.lookup(operator.getitem), [container, key], {}, target, None)
        followed = []
        if not (isinstance(old, Const) and isinstance(old.value, (int, float, complex, np.generic))):
            statement = f"{ast.unparse(target)} {_OPSYM[op]}= ..."
            held = self.held_by.get(container, set())
            for name, value in self.check_item_unshared(container, key, holders, target, statement,
                                                        follow=lambda v: v in held or  # (put in it, or taken out)
                                                        self.item_origin.get(v, (None,))[0] is container):
                self._carry_written(name, value)  # `h = hs[0]`, then `hs[0] += v`: h is that array when the code
                followed.append((name, self.emit(rules.lookup(same_object), [  # runs? (then NumPy changed it too)
                    value, old, Const(statement), Const(ast.unparse(target)), Const(name)], {}, target, None)))
        new = self.binary(op, old, self.expr(value_node), target, None)
        for name, same in followed:
            self.store(name, self.emit(rules.lookup(changed_with), [same, new, self.env[name]], {}, target,
                                       self.shared.get(name, name)), target)
        return new

    def check_unshared(self, name, container, node, items_in_place=False, via=None):
        """A list or dict changed in place must be reachable by this one name only (tapegen rebinds it). A helper's
        parameter holding a list or dict its caller made is changed as its caller's own (`changes_callers`).
        `items_in_place`: the change is of an item in place (`params[k] -= v`), not of the list itself. `via`:
        the (object, attribute) the change is made through (`obj.d[k] = v`), which may hold it."""
        others = [other for other, atom in self.env.items() if other != name and atom is container
                  and self.read_after(other, node)]  # (`C = self.cache` never read after `self.cache[k] = v`)
        if not others and self.changes_callers(name, container, node, items_in_place):
            return
        self.check_not_an_attributes(name, container, node, via)
        if container in self.params or others or container in self.holders and not self.held_where_read(container):
            where = f"`{others[0]}`" if others else "an argument" if container in self.params \
                else "another list, tuple or dict"
            raise self.unsupported(node, f"changing `{name}` in place would also change {where}, "
                                         f"which tapegen cannot follow",
                                   f"build a new one instead: {name} = list({name}) (or dict({name})) first")

    def check_not_an_attributes(self, name, container, node, via=None):
        """`d = obj.d` (or `obj.d = d`), then `d[k] = v`: Python changes the one dict `obj.d` holds too, and a
        later `obj.d[k]` reads the new item. tapegen's change makes a new dict, which the attribute is set to when
        `name` is bound to it (write_through_attributes). Until then (and where that is not reached) the attribute
        may not be read (`expr_Attribute`)."""
        keys = [(base, attr) for (base, attr), (value, _) in self.attributes.items() if value is container
                and (base, attr) != via and not isinstance(base, (type, types.ModuleType))]
        for key in keys if name not in self.shared else ():  # (until made there too, when `name` is bound to
            self.stale_attributes.setdefault(key, (name, node, tuple(map(id, self.open_constructs))))  # its new value)
        self.attributes_written_through = (name, node, keys) if keys else None

    def held_where_read(self, container) -> bool:
        """Whether the list or dict `container` is held only by the list or dict it was read out of (`c =
        caches[i]`, then `c["in"] = h` put the changed dict back there), which a change through it rebinds
        (`write_through_item`)."""
        origin = self.item_origin.get(container)
        if origin is None:
            return False
        lowerer, names = self, []
        while lowerer is not None and not names:  # (in a helper: its caller's names, when it returns)
            names, lowerer = lowerer._holders(*origin), getattr(lowerer, "caller", None)
        if len(names) != 1:  # (`alias = caches`: each name would get its own copy)
            return False
        return self.times_held.get(container, 0) <= self.put_back.get(container, 0)

    def changes_callers(self, name, container, node, items_in_place=False) -> bool:
        """Whether `container`, changed in place through `name` (`xs.append(v)`, `d[k] = v`), is the list or dict
        a caller of this helper passed as `name` (or what a loop carries it in), held by no other name here
        nor by another list or dict: Python changes the caller's object, so tapegen's new value for `name` is
        written back to the caller's name when the helper returns (`_write_back_items`, which refuses where
        the caller holds it elsewhere too)."""
        passed = self.callers_passed(name)
        if passed is None or container in self.holders and not self.held_where_read(container) or any(
                atom is passed for other, atom in self.env.items() if other != name):
            return False
        if not (container is passed and self.shared.get(name) is passed):  # (a loop carrying the caller's var
            self.written_params.setdefault(name, passed)  # itself, `sharing`: nothing to write back)
        if passed in self.displays and not items_in_place:  # `sgd([w, b], ...)` setting `params[k] = v`: w and b
            self.displays_changed.add(passed)  # stay as they are (refused at the write-back)
        return True

    def callers_container(self, name, var) -> bool:
        """Whether `var` is the list or dict the caller made and passed as this helper's parameter `name`, held by
        no other list or dict: changed in place as the caller's own (appended to, carried through a loop)."""
        return var is not None and var is self.callers_passed(name) and var in self.fresh \
            and var not in self.root_params and var not in self.holders

    def callers_passed(self, name):
        """The list or dict a helper's parameter `name` holds as its caller passed it, where the helper never
        rebinds the name (so in a loop too, `for k in params: params[k] -= lr * grads[k]`), else None."""
        passed = self.entry_params.get(name)
        if not self.call_stack or passed is None or self.container_kind(passed) not in ("list", "dict") and not (
                isinstance(passed, Pack) and passed in self.displays):  # (`sgd((w, b), ...)`: a tuple of names)
            return None
        if any(isinstance(sub, ast.Name) and sub.id == name and not isinstance(sub.ctx, ast.Load)
               or isinstance(sub, (ast.Global, ast.Nonlocal)) and name in sub.names
               for sub in _walk_run(self.node, self.skipped)):  # (CS231n's `if config is None: config = {}`,
            return None  # given a dict: not rebound)
        return passed

    def generated_code(self) -> bool:
        """Whether the function being lowered is gradient code tapegen wrote (differentiated again)."""
        return getattr(getattr(self.fn, "__code__", None), "co_filename", "").startswith("<tapegen ")

    def view_alive(self, view, node) -> bool:
        """Whether a view this function made may be read after `node`: a name holding it read later, or a
        list, dict or attribute holding it (`H.T @ w`'s H.T, used up in its statement, is not)."""
        if view in self.held_in or any(held[0] is view for held in self.attributes.values()):
            return True
        return any(atom is view and self.read_after(name, node) for name, atom in self.env.items())

    def aliases_read_after(self, name, array, node) -> list:
        """The other names, read after `node`, that may be the same array as `array` when the code runs (assigned
        from it, or it from that name, in a loop or branch: `prev = vel` then `vel += a`)."""
        reach, found = None, []
        for other, atom in self.env.items():
            if other == name or not isinstance(atom, Var) or not (atom in self.aliases or array in self.aliases):
                continue
            reach = self.alias_reach(array) if reach is None else reach
            if self.alias_reach(atom) & reach and self.read_after(other, node):
                found.append(other)
        return found

    def read_after(self, name, node, values_only=False) -> bool:
        """Whether this function may read `name` after statement `node` runs: a read of it later in the
        function, or anywhere in a loop around `node` (the next pass reads it again). Another name for an array
        written into is harmless if it is never read again (`self_Q = t2` in generated code, then writes
        into self_Q). `values_only`: not counting reads of its shape and dtype alone (`_shape_only_reads`)."""
        where = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        end = (getattr(node, "end_lineno", None) or where[0], getattr(node, "end_col_offset", None) or where[1])
        for stmt in ast.walk(self.node):  # the whole statement `node` is in: its value is read before the write
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Expr)) and _within(where, stmt):
                end = max(end, (stmt.end_lineno, stmt.end_col_offset))
        shape_only = self._shape_only_reads(name) if values_only else set()
        if self.generated_code():  # (gradient code's `meta(t1)`: the shapes of what `t1` holds, which no write
            shape_only |= {id(arg) for call in ast.walk(self.node) if isinstance(call, ast.Call)  # changes)
                           and isinstance(call.func, ast.Name) and call.func.id in _GENERATED_SHAPE_READERS
                           for arg in call.args[_GENERATED_SHAPE_READERS[call.func.id]:]}
        reads = [n for n in ast.walk(self.node) if isinstance(n, ast.Name) and n.id == name
                 and not isinstance(n.ctx, ast.Store) and id(n) not in shape_only]
        if any((n.lineno, n.col_offset) > end for n in reads):  # (a read in the statement itself comes first)
            return True
        if reads and any(_reads_free(fn, name) for fn in ast.walk(self.node) if fn is not self.node):
            return True  # a function defined here reading it, called maybe after (`def read(): return a`)
        for loop in ast.walk(self.node):
            if not (isinstance(loop, (ast.For, ast.While)) and _within(where, loop)):
                continue
            if isinstance(loop, ast.For) and any(isinstance(t, ast.Name) and t.id == name
                                                 for t in ast.walk(loop.target)):
                continue  # the loop's target: set again as each pass starts
            inside = [(n.lineno, n.col_offset) for n in reads if _within((n.lineno, n.col_offset), loop)]
            if any(not _set_before(name, read, loop) for read in inside):  # (each read after the name is set
                return True                                                # again in that pass, or an inner one)
        return False

    def _shape_only_reads(self, name) -> set:
        """Ids of the reads of `name` that look only at its shape and dtype, which writing into an array in
        place never changes (a list's `+=` does): `np.zeros_like(v)` (Karpathy's `grad_buffer[k] =
        np.zeros_like(v)` after `model[k] += ...`), `len(v)`, `v.shape`, `v.dtype`, `v.ndim`, `v.size`."""
        found = set()
        for sub in ast.walk(self.node):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == name \
                    and sub.attr in ("shape", "dtype", "ndim", "size"):
                found.add(id(sub.value))
            elif isinstance(sub, ast.Call) and len(sub.args) == 1 and isinstance(sub.args[0], ast.Name) \
                    and sub.args[0].id == name and all(kw.arg == "dtype" for kw in sub.keywords) \
                    and self.static(sub.func) in _SHAPE_READERS:
                found.add(id(sub.args[0]))
        return found

    def writable(self, name, array, node, restoring=False, healed=None, putting_back=(), into_view=False,
                 index=None):
        """The array `name` holds, about to be written into (`out=`, `np.add.at`, `.sort()`): an argument's private
        copy (bound to `name`; the caller's array is left as it was), else `array` itself, checked writable.
        `into_view`: an item assignment, which may also go into a copy of a view of an argument; `index`: the
        part of the array it writes (another name may hold a part it does not reach: `check_not_shared`)."""
        if array in self.root_params:
            copy = self.private_copy(name, array, node, self.shared.get(name))
            if copy is not None:
                array = copy
                self.store(name, copy, node)
        elif into_view and not restoring and self.argument_shown(array) is not None:
            self.copy_argument_shown(array, node)
        self.check_writable(name, array, node, restoring, healed, putting_back, index)
        return array

    def argument_shown(self, array):
        """The differentiated function's argument (an array) that `array`, a view made here, shows (`X =
        X.reshape(-1, n)`, `row = x[0]`), else None."""
        if not isinstance(array, Var) or array not in self.views or self.generated_code():
            return None
        base, seen = self.view_base(array), set()
        while base not in self.root_params and len(self.aliases.get(base, ())) == 1 and base not in self.fresh \
                and base not in seen:
            seen.add(base)
            base = self.view_base(next(iter(self.aliases[base])))  # (a name for it a branch or loop carries)
        return base if base in self.root_params and self.container_kind(base) is None else None

    def copy_argument_shown(self, view, node):
        """`row[i] = v` where `row` is a view of an argument (`X = X.reshape(-1, n)`, d2l's
        `sequence_mask(X.reshape(-1, n), ...)` writing `X[~mask] = value`): NumPy changes the caller's array,
        which tapegen leaves as it was, as for a write into the argument itself (docs/syntax.md). The function is
        lowered again with the argument copied first (`program`): the view is then one of an array the function
        made, and the write is followed into it and into its other views, as NumPy does."""
        argument = self.argument_names.get(self.argument_shown(view))
        if argument is not None and argument not in self.copied_arguments():
            raise Recarry({("arguments", 0): {(argument, ast.unparse(node).splitlines()[0])}})

    def copied_arguments(self) -> dict:
        """{name: the statement writing through a view of it} of the arguments `program` copies first."""
        return dict(self.carried.get(("arguments", 0), ()))

    def wrote_into_view(self, name, array, node, result) -> bool:
        """NumPy writing a result into the array `name` holds in place (`out=r`, `r.sort()`, `np.add.at(r, ...)`),
        where that array is a view of one the function made (`r = M[1]`): written as `r[...] = result()`, so the
        array it shows changes too (put back into it, or refused where it is read after, as `r[:] = v` is); so is
        one the function made whose views names hold and read after (`v = y[:1]`, then `np.exp(y, out=y)`).
        False, doing nothing, where `array` is no such view (`name` is then rebound to the result)."""
        if not isinstance(array, Var) or array in self.params or self.generated_code() or not (
                array in self.views or self.healed_base(array) is not None
                or array in self.fresh and self.stale_views(array, array, node)):  # (`v = y[:1]`, then out=y)
            return False
        holder = self.namer.invented("value").name
        self.env[holder] = result()
        whole = ast.copy_location(ast.Subscript(ast.copy_location(ast.Name(name, ast.Load()), node),
                                                ast.Constant(Ellipsis), ast.Store()), node)
        try:
            self.assign_subscript(whole, ast.copy_location(ast.Name(holder, ast.Load()), node))
        finally:
            del self.env[holder]
        return True

    def check_writable(self, name, array, node, restoring=False, healed=None, putting_back=(), index=None):
        """`name[i] = v` writes into `array` in place: it must be an array the function made, reached only so.

        In a helper, that is also an array its caller made (`fill(buf, x)` writes into the caller's
        `buf`, as Python does), as long as no view of it exists anywhere.
        """
        if self.call_stack and isinstance(array, Var) and array in self.params and array in self.fresh \
                and array not in self.root_params:
            entry = getattr(self, "views_at_entry", 0)  # views made before this call (the caller's) may be read
            if any(self.view_base(view) is array and (k < entry or self.view_alive(view, node))
                   for k, view in enumerate(self.views)):
                raise self.unsupported(node, f"`{name}` has a view somewhere, so writing into it changes that too",
                                       f"take a copy first: {name} = {name}.copy()")
            if self.held_in.get(array) == "a list or dict" and not restoring:  # (the caller's `L = [a]`)
                raise self.unsupported(node, f"`{name}` is also kept in a list or dict, which this assignment would "
                                             f"change too", f"write into a copy: {name} = {name}.copy()")
            return
        base = healed if healed is not None else self.view_base(array) if isinstance(array, Var) else None
        if isinstance(base, Var) and base not in self.fresh and self.generated_code():
            base = self.generated_view_base(array)  # (`X = scores` before an `if` rebinding X: through names)
        if base is not array and isinstance(base, Var) and base in self.fresh and base not in self.root_params:
            if not (restoring or self.generated_code()):
                return self.write_into_view(name, array, base, node, healed is base)
            if not restoring:  # (gradient code writes into a view only where its function did, and puts the
                self.wrote_in_place(array, "[]=")  # values back before a rule reads the array)
            return
        if restoring and self.generated_code() and isinstance(array, Var) \
                and self.alias_reach(array) & set(self.positions_of.values()):
            return self.wrote_in_place(array, "[]=")  # gradient code's backward pass restoring a view whose
            # write it put back (`row[:] = tape.pop()`, `row` carried through its loop)
        if not isinstance(array, Var) or array in self.params or array not in self.fresh:
            raise self.unsupported(
                node, f"assigning into `{name}` would change an array tapegen cannot follow: it may be an "
                      f"argument, a view of another array, or shared with another name",
                f"make a private copy first: {name} = {name}.copy()  (or build it with np.zeros / np.empty)")
        for other, atom in self.env.items():  # (a name holding `array` itself sees the write: the same var)
            if other != name and isinstance(atom, Var) and atom is not array and self.view_base(atom) is array \
                    and atom not in self.refreshing \
                    and atom not in putting_back and not any(self.apart(atom, back, array) for back in putting_back) \
                    and self.read_after(other, node) \
                    and not (self.generated_code() and atom in self.positions_of.values()):  # (gradient code's
                # backward pass restores a view a write was put back through: `interior[...] = tape.pop()`)
                raise self.unsupported(node, f"`{other}` is a view of `{name}`, so this assignment changes it too",
                                       f"take a copy: {other} = {name}[...].copy()")
        others = [] if self.generated_code() else self.aliases_read_after(name, array, node)  # (tapegen's own
        if others:  # code aliases on purpose: the backward pass restores)
            other = others[0]
            raise self.unsupported(node, f"`{other}` may be the same array as `{name}` (assigned from it, or it "
                                         f"from `{other}`), so this assignment changes it too",
                                   f"take a copy: {other} = {name}.copy()")
        for lazy, sources in getattr(self, "lazy_sources", {}).items():
            if any(array in self.alias_roots(v) or self.alias_roots(array) & self.alias_roots(v) for v in sources) \
                    and self.read_after(lazy, node):
                raise self.unsupported(node, f"the generator expression `{lazy}` reads `{name}` when it is consumed, "
                                             f"after this assignment, and tapegen reads it where it is written",
                                       f"make it a list before the assignment: {lazy} = [...]")
        held_views = [held for held in self.held_in if held is not array and (held in self.views or held in self.aliases)
                      and array in self.alias_roots(held)]  # (only a view or another name's value can be `array`'s)
        if held_views and not restoring and not self.generated_code():  # rows = [r for r in a], then a[0] = v
            raise self.unsupported(node, f"a list or dict holds a view of `{name}` (a row or slice of it), which "
                                         f"this assignment would change too",
                                   f"keep copies in it: [r.copy() for r in {name}]")
        if self.held_in.get(array) == "a list or dict" and not restoring:  # (an attribute reads this var)
            raise self.unsupported(node, f"`{name}` is also kept in {self.held_in[array]}, which this assignment "
                                         f"would change too", f"fill `{name}` before keeping it there, or keep a "
                                                              f"copy: `{name}.copy()`")
        if not restoring:
            if not self.generated_code():  # (and names holding what a function run as written returned from it)
                reach = self.alias_reach(array, maybe=True)
                maybe = [other for other, atom in self.env.items() if other != name and isinstance(atom, Var)
                         and atom is not array and self.alias_reach(atom, maybe=True) & reach
                         and not self.alias_reach(atom) & self.alias_reach(array) and self.read_after(other, node)]
                self.check_not_shared(name, array, node, maybe, index)
            self.wrote_in_place(array, "[]=")


    def write_into_view(self, name, view, base, node, healed=False):
        """`X[mask] = v` on a view of an array the code made (`X = scores.reshape(-1, n)`, perhaps the caller's:
        d2l's `sequence_mask(X.reshape(...))`): NumPy changes that array too. The view's value is followed
        (the write is an equation on its var); the array's and its other views' are not, so none may be read
        after the write: checked when the whole program is lowered (`check_view_writes`). `healed`: the write
        is put back into the array after it (`write_back_view`), whose reads are then followed."""
        held = [v for v in self.memory_of(base) if v in self.held_in]
        if held:
            raise self.unsupported(node, f"`{name}` is a view of an array that is also kept in "
                                         f"{self.held_in[held[0]]}, which this assignment would change too",
                                   f"write into a copy: {name} = {name}.copy()")
        if healed:  # put back into `base`: another name that may hold it (`rows = M` in a loop) does not see that
            names = [other for other, atom in self.env.items() if atom is base]
            others = [other for other in self.aliases_read_after(names[0] if names else None, base, node)
                      if other not in names and other != name and not self._a_view(self.env[other])]
            if others:
                raise self.unsupported(node, f"`{name}` is a view of an array that `{others[0]}` may hold too "
                                             f"(assigned from another name for it, in a loop or branch), which this "
                                             f"assignment changes, and tapegen cannot follow the change there",
                                       f"take the view of `{others[0]}` itself, or write into a copy: "
                                       f"{name} = {name}.copy()")
        self.view_writes.append((name, view, base, node, healed))
        if self.container_kind(base) is not None and view in self.item_origin:  # `h = l[0]; h[0] = v`: no other list,
            container, key = self.item_origin[view]  # dict, name or attribute read after may hold that array
            self.check_item_alone(container, key if isinstance(key, Var) else Const(key), view, node,
                                  ast.unparse(node))
        if base in self.held_by:  # an item of a list or tuple: the array it holds, or shows
            for root in {self.view_base(var) for var in self.held_by.get(base, ())} - {base}:
                if isinstance(root, Var):
                    self.view_writes.append((name, view, root, node, False))
        self.wrote_in_place(view, "[]=")

    def _a_view(self, atom, seen=frozenset()) -> bool:
        """Whether `atom` is surely a view (not the array itself): made as one, or a name for views only (`row`
        carried through a loop, `acc[2]` before it and `acc[t]` in it)."""
        if atom in self.views:
            return True
        others = [a for a in self.aliases.get(atom, ()) if a is not atom and a not in seen]
        return bool(others) and all(self._a_view(a, seen | {atom}) for a in others)

    def generated_view_base(self, array):
        """In gradient code lowered again, the array `array` is a view of, through views and through names
        bound to one (the `X = scores` gradient code writes before an `if` that rebinds `X`, where the function
        it was made from wrote through `X.reshape(...)` in that branch: d2l's masked_softmax); else `array`."""
        link, seen = array, set()
        while isinstance(link, Var) and link not in seen:
            seen.add(link)
            if link in self.views:
                link = self.views[link]
            elif len(self.aliases.get(link, ())) == 1 and link not in self.fresh:
                link = next(iter(self.aliases[link]))
            else:
                break
        return link

    def healed_base(self, array):
        """The array (made here) that `array` is a view of, through views a write can be put back through
        (`row = out[i]`, `inner = u[1:-1]`, `M.T`, `a.reshape(...)`: not `.real`, nor an einsum's), else None."""
        if not isinstance(array, Var) or self.generated_code():
            return None
        link, through_view = array, False
        while True:  # (through views, and names bound to one: `row` carried through an `if` writing into it)
            if link in self.views:
                if self.view_ops.get(link, (None,))[0] not in _HEALABLE_VIEWS:
                    return None
                link, through_view = self.views[link], True
            elif len(self.aliases.get(link, ())) == 1 and link not in self.fresh:
                link = next(iter(self.aliases[link]))
            else:
                break
        return link if through_view and isinstance(link, Var) and link in self.fresh \
            and self.container_kind(link) is None and link not in self.root_params and link not in self.params \
            else None

    def check_put_back(self, base, view, node):
        """Gradient code putting back a write through `view` into `base` (`view_positions(out, row)`), lowered
        again: `view` must still be known as a view of `base` here, else NumPy's write through it is lost."""
        if not (isinstance(view, Var) and base in self.alias_reach(view)):
            raise self.unsupported(node, "a write through a view, put back into the array it shows, where "
                                         "tapegen no longer knows the view as one (differentiating again)",
                                   "write into a copy of the view, then assign it into the array")

    def apart(self, one, other, base) -> bool:
        """Whether views `one` and `other` of `base` surely share no item: made from rows of it (its first axis)
        that do not meet, `theta[:4]` and `theta[4:]` (whatever is made of them after)."""
        def rows(var):  # [start, stop) of the first axis that `var`'s view chain takes from `base`, else None
            while var in self.views and self.views[var] is not base:
                var = self.views[var]
            name, index = self.view_ops.get(var, (None, None)) if var in self.views else (None, None)
            value = index.value if name == "getitem" and isinstance(index, Const) else None
            value = value[0] if isinstance(value, tuple) and value else value
            if type(value) is int and value >= 0:
                return value, value + 1
            if isinstance(value, slice) and value.step in (None, 1) and all(
                    bound is None or type(bound) is int and bound >= 0 for bound in (value.start, value.stop)):
                return value.start or 0, value.stop if value.stop is not None else float("inf")
            return None
        first, second = rows(one), rows(other)
        if first is not None and second is not None and (first[1] <= second[0] or second[1] <= first[0]):
            return True
        first, second = self.split_piece(one), self.split_piece(other)  # `p, q = np.split(a, 2)`: p[0] = v
        return first is not None and second is not None and first[0] is second[0] and first[1] != second[1]

    def split_piece(self, var):
        """(the list np.split made, which of its pieces) where `var` is a piece of it (or a view of one, as it
        is made of it), else None: the pieces of one split share no item."""
        while var in self.views:
            parent = self.views[var]
            name, index = self.view_ops.get(var, (None, None))
            if name == "getitem" and self.view_ops.get(parent, (None,))[0] in _SPLITS and isinstance(index, Const) \
                    and type(index.value) is int and index.value >= 0:
                return parent, index.value
            var = parent
        return None

    def write_back_view(self, view, base, node):
        """After a write into `view` (`row[:] = v`, `inner += d`), the array it shows changed in NumPy: `base`
        takes the view's items back where they lie in it (`view_positions`, found when the code runs: in memory
        a no-op), so a read of `base` after the write has the derivatives of what was written; so do the other
        views of it that names hold (`refresh_views`)."""
        where, pick = self.emit_multi(rules.lookup(view_positions), [base, view], {}, node, 2, [None, None])
        value = self.emit(rules.lookup(operator.getitem), [view, pick], {}, node, None)
        self.written_back.add(value)
        self.emit(rules.lookup(operator.setitem), [base, where, value], {}, node, base)
        self.wrote_in_place(base, "[]=")
        self.refresh_views(base, view, node)

    def stale_views(self, base, written, node) -> list:
        """[(name, view)]: the names read after `node` holding a view of `base` made before a write into it
        (through the view `written`, or into `base` itself) that shares items with it, where that view can be made
        again from `base` (`view_made`: one primitive's one result, link after link) and nothing but names holds
        it (`refresh_views`)."""
        if self.generated_code():
            return []
        found = []
        for name, atom in self.env.items():
            if not (isinstance(atom, Var) and atom in self.views and atom is not written
                    and self.view_base(atom) is base) or atom in self.held_in \
                    or written is not base and self.apart(atom, written, base) or not self.read_after(name, node):
                continue
            link = atom
            while link is not base and link is not written and self.view_made.get(link, (None, None, 0))[2] == 1 \
                    and (self.is_open(self.view_block.get(link)) or self.made_as.get(link) is not None):  # (made in
                #                              a branch that has ended, another way in the other: maybe not this one)
                link = self.views[link]
            if link is base or link is written:
                found.append((name, atom))
        return found

    def refresh_views(self, base, written, node, stale=None):
        """NumPy's views of `base` show a write into it: each name holding one made before the write (`W =
        B[:2]`, then `B[0] = v` or a write through `V = B.reshape(2, 2)`), read after it, holds the view made again
        (the same primitive, on `base` as it is now) from then on."""
        made = {base: base, written: written}

        def again(view):
            if view not in made:
                prim, inputs, _ = self.view_made[view]
                old, parent = self.views[view], again(self.views[view])
                swapped = {old: parent}  # (the array it shows may be in a Pack: np.atleast_1d([a]), an einsum's)
                made[view] = self.emit_bound(prim, tuple((k, Pack(tuple(swapped.get(i, i) for i in a.items), a.kind)
                                                          if isinstance(a, Pack) else swapped.get(a, a))
                                                         for k, a in inputs), node, 1, [None])[0]
            return made[view]
        for name, view in self.stale_views(base, written, node) if stale is None else stale:
            self._carry_written(name, view)  # (a loop around: it rebinds the name)
            fresh = again(view)
            shown = self.may_be_a_copy(view, base, written)  # `B[idx]`, `A.T.reshape(-1)`: made again where it
            if shown is not None:  # shows the memory of `base` (or of the view written) when the code runs
                shows = self.emit(rules.lookup(shows_memory_of), [fresh, shown], {}, node, None)  # (made again
                #     now, so gradient code lowered again asks it of a view made after the write, not before)
                picked = self.emit(rules.lookup(view_again), [shows, fresh, view], {}, node, None)
                self.views[picked], self.view_ops[picked] = self.views[fresh], self.view_ops[fresh]
                self.view_made[picked] = self.view_made[fresh]  # (a view of it still, where it is one)
                self.view_block[picked] = self.current
                self.fresh.discard(picked)
                fresh = picked
            self.store(name, fresh, node)

    def may_be_a_copy(self, view, base, written):
        """`base` or `written` (the one `view` is made from) where a step from it to `view` may have made a copy
        when the code ran: an index holding a value known only then (an index array, a mask, or an int), integers
        only (`B[2]` of a vector is a number, not a view), a reshape
        or ravel (of an array not contiguous), np.diag (of a vector), np.asarray or astype with a dtype, the
        method x.conj() (of a complex array); else None."""
        link, copies = view, False
        while link in self.views and link is not base and link is not written:
            prim, inputs, _ = self.view_made.get(link, (None, (), 0))
            index = dict(inputs).get("index")
            copies = copies or prim is None or prim.name in ("reshape", "ravel", "diag", "asarray", "astype",
                                                             "conj_method") \
                or prim.name == "getitem" and (not isinstance(index, Const) or _integers(index.value))
            link = self.views[link]
        return link if copies else None

    def memory_of(self, base) -> set:
        """`base` and every var that may show its memory (its views, names assigned from them)."""
        return {base} | {v for v in (*self.views, *self.aliases) if base in self.alias_roots(v)}

    def check_view_writes(self, body, outputs):
        """Refuses a write into a view (`write_into_view`) where the array it shows, or another view of it made
        before the write, is read after it (later, in the loop around it, or returned) before its name is
        rebound: NumPy changed those values, which tapegen took as they were."""
        order = _order_and_contexts(body) if self.view_writes else []
        returned = {v for atom in outputs for v in atom_vars(atom)}
        for name, view, base, node, healed in self.view_writes:
            for write, (stmt, context) in enumerate(order):
                if not (isinstance(stmt, Eqn) and stmt.op.name == "setitem" and view in stmt.outputs):
                    continue  # (each write: a view made between two writes is changed by the second)
                shown, around = self.memory_of(base) - {view}, set(context)
                if healed:  # (the array, with the write put back into it; the view's items read to do so; views
                    shown -= {base} | self.written_back  # of rows the view does not reach: `theta[4:]`, `theta[:4]`)
                    shown = {other for other in shown if not self.apart(other, view, base)}

                def reads_before_rebound(part, rebound, before=None):  # reads of `shown` in `part` before their
                    read, bound = set(), {}  # name is bound anew there (surely: not in a branch or loop the write
                    for later, where in part:  # is not in); for a write put back (`healed`), also a var first
                        reads = set(later.reads) & (shown - rebound)  # bound after the write (`before`: those
                        if isinstance(later, Eqn) and later.op.name == "view_again":  # (a view made before it read
                            reads -= {later.input("before")}  # only where it turned out a copy: refresh_views)
                        if healed:  # bound up to it), and one bound earlier in a block around the read
                            reads = {v for v in reads if not any(block <= set(where) for block in bound.get(v, ()))}
                        read |= reads
                        if not isinstance(later, Eqn) or later.op.name in IN_PLACE:
                            continue
                        if set(where) <= around or before is not None and not set(later.outputs) & before:
                            rebound = rebound | set(later.outputs)
                        for v in later.outputs:
                            bound.setdefault(v, []).append(set(where))
                    return read, rebound
                bound_before = {v for earlier, _ in order[:write + 1] if isinstance(earlier, Eqn)
                                for v in earlier.outputs}
                read, rebound = reads_before_rebound(order[write + 1:], set(), bound_before if healed else None)
                read |= returned & (shown - rebound)
                loops = [c for c in context if not isinstance(c, tuple)]
                if loops:  # its next pass: after the rest of this pass, from the pass's start to the write
                    passes = [j for j, (_, c) in enumerate(order) if loops[-1] in c]
                    _, rebound = reads_before_rebound(order[write + 1:passes[-1] + 1], set())
                    read |= reads_before_rebound(order[passes[0]:write], rebound)[0]
                if read:
                    raise self.unsupported(node, f"`{name}` is a view of an array, which this assignment changes "
                                                 f"too, and that array (or another view of it) is read after it: "
                                                 f"tapegen cannot follow the change there",
                                           f"write into a copy: {name} = {name}.copy()")


_GENERATED_SHAPE_READERS = {"meta": 0, "shape": 0, "piece_cotangents": 1}  # runtime helpers gradient code calls
#                                                      that read only the shapes of their arguments from this one on
_ARRAY_VIEW_ATTRIBUTES = frozenset({"T", "mT"})  # an array's attributes that are views of it, written through
_SPLITS = frozenset({"split", "array_split", "hsplit", "vsplit", "dsplit"})
_HEALABLE_VIEWS = frozenset({"getitem", "reshape", "transpose", "ravel", "squeeze", "expand_dims", "swapaxes",
                             "moveaxis", "rollaxis", "atleast_1d", "atleast_2d", "atleast_3d", "flip", "fliplr",
                             "flipud", "rot90", "asarray", "split", "array_split", "hsplit", "vsplit", "dsplit",
                             "conj_method"})


_INT_COMPARISONS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
                    ast.Eq: operator.eq, ast.NotEq: operator.ne}


def _view_index(index) -> bool:
    """Whether indexing an array with `index` surely gives a view of it: a slice (`F[i + 1:]`, `A[::2]`), or a
    tuple of slices, `...`, `None` and integer literals with a slice among them (`A[0, 1:]`); not a name or a
    call (an index array or a mask gives a copy, an integer of a vector a number)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(p, ast.Slice) for p in parts) and all(
        isinstance(p, ast.Slice) or isinstance(p, ast.Constant) and (p.value is None or p.value is Ellipsis or type(
            p.value) is int) for p in parts)


def _reads_free(fn, name) -> bool:
    """Whether `fn`, a def or lambda inside the function, reads `name` of the function around it (not one of its
    own parameters or names)."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return False
    arguments = fn.args
    own = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                           *(a for a in (arguments.vararg, arguments.kwarg) if a is not None))}
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    subs = [sub for stmt in body for sub in ast.walk(stmt)]
    own |= {sub.id for sub in subs if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store)}
    return name not in own and any(isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Load)
                                   for sub in subs)


def _set_before(name, read, loop) -> bool:
    """Whether `name` is set anew before the read at `read` in each pass of `loop`: by an assignment at the top of
    the body of `loop`, or of a loop inside it around the read, coming before it (`line = Z[i]` in an inner loop
    that then reads `line`)."""
    loops = [loop] + [inner for inner in ast.walk(loop) if isinstance(inner, (ast.For, ast.While))
                      and inner is not loop and _within(read, inner)]
    return any(isinstance(stmt, ast.Assign) and (stmt.lineno, stmt.col_offset) < read
               and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)
               for inner in loops for stmt in inner.body)


def _order_and_contexts(body):
    """[(statement, the loops and branches around it, outermost first)] for every statement of `body`, in
    program order (a loop: its id; a branch: (its If's id, "then" or "orelse"))."""
    out = []

    def visit(stmts, context):
        for stmt in stmts:
            out.append((stmt, context))
            if isinstance(stmt, If):
                visit(stmt.then, context + ((id(stmt), "then"),))
                visit(stmt.orelse, context + ((id(stmt), "orelse"),))
            elif isinstance(stmt, Loop):
                visit(stmt.test_body + stmt.body, context + (id(stmt),))
    visit(body, ())
    return out


def _caught_by(handlers, bound, where):
    """The `except` block of a protected statement: the exception bound to the `caught` name of the first of
    `handlers` ((classes, caught name), the innermost `try`'s first) that handles it."""
    last = handlers[-1][1]
    chain = ast.Assign([ast.Name(last, ast.Store())], Caught(bound))
    for classes, name in reversed(handlers[:-1]):
        test = Matches(Caught(bound), classes)
        chain = ast.If(test, [ast.Assign([ast.Name(name, ast.Store())], Caught(bound))], [chain])
    for node in ast.walk(chain):
        if "lineno" in node._attributes:
            ast.copy_location(node, where)
    return chain


def _within(where, node) -> bool:
    return (node.lineno, node.col_offset) <= where <= (node.end_lineno, node.end_col_offset)


_OPSYM = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/", operator.pow: "**",
          operator.matmul: "@", operator.floordiv: "//", operator.mod: "%"}


class _Names(set):
    """Names a construct binds; `item_writes`: those it only writes items of (`xs[k] = v`, `xs.extend(ys)`),
    which rebind a list or dict (a copy with the item) but write into an array in place."""

    item_writes: frozenset = frozenset()

    def __or__(self, other):
        joined = _Names(set(self) | set(other))
        joined.item_writes = (self.item_writes | getattr(other, "item_writes", frozenset())) - \
            ((set(self) - self.item_writes) | (set(other) - getattr(other, "item_writes", frozenset())))
        return joined


def _written_through_target(loop) -> list | None:
    """`for d in [dWxh, dWhh]: np.clip(d, -5, 5, out=d)`, `for p, m in zip([W, b], [mW, mb]): m += g * g`: a loop
    over lists (or tuples) written out of names, whose body changes a target in place (`+=`, `d[i] = v`,
    `out=d`) and binds it no other way: [(target name, the names it walks)], else None. Such a loop is unrolled,
    each pass's changes made to the name the target holds then (min-char-rnn's gradient clipping and Adagrad)."""
    if not isinstance(loop, ast.For) or loop.orelse:
        return None
    it, target = loop.iter, loop.target
    if _zip_call(it) and isinstance(target, ast.Tuple) and len(target.elts) == len(it.args):
        pairs = list(zip(target.elts, it.args))
    else:
        pairs = [(target, it)]
    if not all(isinstance(t, ast.Name) and isinstance(seq, (ast.List, ast.Tuple)) and seq.elts
               and all(isinstance(e, ast.Name) for e in seq.elts) for t, seq in pairs):
        return None
    if len({len(seq.elts) for _, seq in pairs}) != 1:
        return None
    if not _changed_in_place(loop.body, {t.id for t, _ in pairs}, {e.id for _, seq in pairs for e in seq.elts}):
        return None
    return [(t.id, [e.id for e in seq.elts]) for t, seq in pairs]


def _zip_call(it) -> bool:
    """Whether `it` is `zip(...)` with no keyword but a constant `strict=` (checked where the loop is lowered)."""
    return isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "zip" \
        and all(kw.arg == "strict" and isinstance(kw.value, ast.Constant) for kw in it.keywords)


def _written_through_list(loop):
    """`for p, g in zip(params, grads): p -= lr * g`, `for i, p in enumerate(self.params): p *= 0.5`: a loop over
    lists held in names or attributes of a name (a zip of them, or an enumerate of one), whose body changes a
    target in place and binds it no other way, as `_written_through_target` tells for lists written out of
    names: ([(target name, its sequence's node)], the enumerate's index name or None, the targets changed by an
    augmented assignment), else None."""
    if not isinstance(loop, ast.For) or loop.orelse:
        return None
    it, target, index_name = loop.iter, loop.target, None
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate" and not it.keywords \
            and len(it.args) == 1 and _is_unpacking(target, 2) and isinstance(target.elts[0], ast.Name):
        index_name, target, it = target.elts[0].id, target.elts[1], it.args[0]
    if _zip_call(it) and isinstance(target, ast.Tuple) and len(target.elts) == len(it.args) and index_name is None:
        pairs = list(zip(target.elts, it.args))
    else:
        pairs = [(target, it)]
    if not all(isinstance(t, ast.Name) for t, _ in pairs):
        return None
    names = [t.id for t, _ in pairs] + ([index_name] if index_name else [])
    if len(set(names)) != len(names):
        return None
    roots = {seq.id for _, seq in pairs if isinstance(seq, ast.Name)}
    attributes = {(seq.value.id, seq.attr) for _, seq in pairs if isinstance(seq, ast.Attribute)
                  and isinstance(seq.value, ast.Name)}
    for sub in ast.walk(ast.Module(loop.body, [])):  # (`self.params` rebound in the body, or by a method it
        if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) and any(  # calls, is not the list
                sub.attr == attr for _, attr in attributes) or isinstance(sub, ast.Call) and isinstance(  # walked)
                sub.func, ast.Attribute) and isinstance(sub.func.value, ast.Name) and any(
                sub.func.value.id == base for base, _ in attributes):
            return None
    changed = _changed_in_place(loop.body, {t.id for t, _ in pairs}, roots)
    if not changed or not all(isinstance(seq, ast.Name) or isinstance(seq, ast.Attribute)
                              and isinstance(seq.value, ast.Name) for t, seq in pairs if t.id in changed):
        return None  # (a list changed through its target is one held in a name or attribute)
    augmented = {sub.target.id for sub in ast.walk(ast.Module(loop.body, [])) if isinstance(sub, ast.AugAssign)
                 and isinstance(sub.target, ast.Name)}
    return [(t.id, seq) for t, seq in pairs], index_name, augmented & changed, changed


def _changed_in_place(body, targets, walked):
    """The loop targets `targets` the statements `body` change in place (`+=`, `d[i] = v`, `out=d`), if they bind
    them no other way and neither read nor set the names `walked`, else an empty set."""
    body = ast.Module(body, [])
    written = set()
    augmented = {id(sub.target) for sub in ast.walk(body) if isinstance(sub, ast.AugAssign)}
    for sub in ast.walk(body):
        if isinstance(sub, (ast.Break, ast.Continue, ast.Return, ast.FunctionDef, ast.Lambda, ast.Global,
                            ast.Nonlocal, ast.Delete, ast.Yield, ast.ClassDef)):
            return set()
        if isinstance(sub, ast.Name) and sub.id in walked:
            return set()  # (the body reads or sets a walked name itself)
        if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name):
            written.add(sub.target.id)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and sub.id in targets \
                and id(sub) not in augmented:
            return set()  # `d = ...`: rebound, not changed
        elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Store) and isinstance(sub.value, ast.Name):
            written.add(sub.value.id)
        elif isinstance(sub, ast.Call):
            written.update(kw.value.id for kw in sub.keywords if kw.arg == "out" and isinstance(kw.value, ast.Name))
    return written & targets


def _call(fn, *args):
    return ast.Call(ast.Name(fn, ast.Load()), list(args), [])


def _copied(node):
    """A copy of `node` (its locations kept), to stand in a second place in the tree."""
    return copy.deepcopy(node)


def _assigned_names(stmts) -> set:
    """Names the statements bind, or may rebind: `xs[k] = v`, `del xs[k]`, `xs.extend(ys)`, `xs.insert(i, v)`,
    `d.pop(k, v)` and `d.setdefault(k, v)` rebind a list or dict."""
    names, items = set(), set()
    for stmt in stmts:
        local = {id(name) for sub in ast.walk(stmt) if isinstance(sub, ast.comprehension)
                 for name in ast.walk(sub.target)}  # a comprehension's own names
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and id(sub) not in local:
                names.add(sub.id)
            elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, (ast.Store, ast.Del)) \
                    and isinstance(sub.value, ast.Name):  # (`del xs[k]` rebinds xs to the list without the item)
                items.add(sub.value.id)
            elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Store) and isinstance(sub.value, ast.Subscript):
                _add_root(sub.value, names, items)  # rows[i][j] = v: rows is rebound (its item i replaced by a copy)
            elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Store) \
                    and isinstance(sub.value, ast.Attribute) and isinstance(sub.value.value, ast.Name):
                if sub.value.attr in _ARRAY_VIEW_ATTRIBUTES:  # `M.T[0] = v` on an array writes into M
                    items.add(sub.value.value.id)
                else:
                    names.add(f"{sub.value.value.id}.{sub.value.attr}")  # self.params[k] = v rebinds self.params
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.args \
                    and isinstance(sub.args[0], ast.Name) and (sub.func.attr == "at" or sub.func.attr in _IN_PLACE):
                names.add(sub.args[0].id)  # np.add.at(sums, i, v) rebinds sums; so does operator.iadd(xs, ys)
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _REBINDING \
                    and isinstance(sub.func.value, ast.Name):  # xs.append(v) on an item of a dict, d.pop(k, v): rebind
                items.add(sub.func.value.id)
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in ("extend", "append", "insert") \
                    and isinstance(sub.func.value, ast.Subscript):  # hist["h"].append(v): hist is rebound
                _add_root(sub.func.value, names, items)
            elif isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) and isinstance(sub.value, ast.Name):
                names.add(f"{sub.value.id}.{sub.attr}")  # self.h = ...: carried like a variable
            elif isinstance(sub, ast.For) and _written_through_target(sub):  # for d in [dW, db]: d *= 0.5
                names.update(name for _, walked in _written_through_target(sub) for name in walked)
    result = _Names(names | items)
    result.item_writes = frozenset(items - names)
    return result


_IN_PLACE = ("iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "imatmul", "ior", "iand", "ixor",
             "iconcat")  # operator's functions of `a += b` and the others
_REBINDING = ("extend", "append", "insert", "pop", "update", "setdefault", "popitem", "remove", "reverse", "clear",
              "sort")  # methods whose list or dict (or array: `a.sort()`) is rebound to a copy


def _add_root(node, names, items):
    """The name (`rows` of `rows[i][j]`) a chain of items starts from: rebound when an item down the chain is
    set or appended to. (An attribute's chain, `self.hist["h"].append(h)`, is carried as the attribute's
    items are: see `_assign_attribute_item` and `_append`.)"""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        items.add(node.id)


def _target_names(target) -> set:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _is_unpacking(target, length=None) -> bool:
    """A tuple or list target (`a, b` or `[a, b]`), of `length` items if given."""
    return isinstance(target, (ast.Tuple, ast.List)) and (length is None or len(target.elts) == length)


def _opaque_builtin(fn):
    return _opaque(fn.__name__, fn)


__all__ = ["ControlFlow", "Const", "Pack"]


def _walk_run(node, skipped):
    """`ast.walk(node)` without the statements `skipped` marks True (ids: of branches a test known when
    transforming skipped, which never run)."""
    todo = [node]
    while todo:
        sub = todo.pop()
        if skipped.get(id(sub)):
            continue
        yield sub
        todo.extend(ast.iter_child_nodes(sub))


_SHAPE_READERS = (np.zeros_like, np.ones_like, np.empty_like, np.shape, np.ndim, np.size, len)


def _integers(index) -> bool:
    """An index of integers only (`2`, `(1, 3)`): of an array with that many axes, an item (a copy), not a view."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(part, (int, np.integer)) and not isinstance(part, bool) for part in parts)

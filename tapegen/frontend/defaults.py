"""`collections.defaultdict`, as the dict built here it behaves as (AST -> AST, before lowering).

    groups = defaultdict(list)            groups = {}
    groups[label].append(v)       ->      groups.setdefault(label, []).append(v)
    totals[label] += v                    totals.setdefault(label, 0.0)
                                          totals[label] += v

A defaultdict makes an item when a missing key is read: `d[k]` read is
`d.setdefault(k, factory())`, and an item read to be changed (`d[k] += v`,
`d[k][j] = v`) is made first, its key (and the value assigned) computed once,
in Python's order. The rest of the dict's life (`d.items()`, `len(d)`, `k in
d`, loops over it) is a dict's, which tapegen follows. A name bound otherwise
too, asked what it is (`isinstance(d, defaultdict)`, `d.default_factory`,
`d.copy()`), or let go where a missing item may be read unseen (returned,
passed to a helper), is left a defaultdict, which the lowering refuses.
"""
from __future__ import annotations

import ast
import collections
import copy

_BUILTIN_DEFAULTS = {float: 0.0, int: 0, bool: False, str: ""}
_BUILTIN_DISPLAYS = {list: lambda: ast.List([], ast.Load()), dict: lambda: ast.Dict([], []),
                     tuple: lambda: ast.Tuple([], ast.Load())}
_ASKING = ("default_factory", "copy", "__missing__", "__class__")


def rewrite_defaultdicts(node, scope, identifiers):
    """`node` (a function's AST, changed in place) with each defaultdict it builds as a dict (see above)."""
    factories = _factories(node, scope, identifiers)
    if factories:
        _DefaultDicts(factories, identifiers).visit(node)


def _factories(node, scope, identifiers) -> dict:
    """{name: the statements making its factory, the expression of its default} for each name bound once, by
    `name = defaultdict(factory)`, and never asked what it is."""
    stores = collections.Counter(sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name)
                                 and not isinstance(sub.ctx, ast.Load))
    stores.update(arg.arg for sub in ast.walk(node) if isinstance(sub, ast.arguments)
                  for arg in sub.posonlyargs + sub.args + sub.kwonlyargs + [sub.vararg, sub.kwarg] if arg)
    declared = {name for sub in ast.walk(node) if isinstance(sub, (ast.Global, ast.Nonlocal)) for name in sub.names}
    imported = {alias.asname or alias.name: alias.name for sub in ast.walk(node)
                if isinstance(sub, ast.ImportFrom) and sub.module == "collections" and not sub.level
                for alias in sub.names}  # `from collections import defaultdict` in the function itself

    def names_defaultdict(func):
        if isinstance(func, ast.Name) and func.id in imported:
            return imported[func.id] == "defaultdict" and not stores[func.id]
        return scope.static(func) is collections.defaultdict

    found = {}
    for stmt in ast.walk(node):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Call) and len(stmt.value.args) <= 1 and not stmt.value.keywords
                and names_defaultdict(stmt.value.func)):
            continue
        name = stmt.targets[0].id
        if stores[name] != 1 or name in declared or _asked(node, name):
            continue
        factory = stmt.value.args[0] if stmt.value.args else None
        found[name] = (stmt, _default(factory, scope, name, identifiers))
    return found


def _asked(node, name) -> bool:
    """Whether the function asks the dict `name` what it is (its class, its factory, a copy: a defaultdict), or
    lets it go where a missing item may be read without this function knowing it is one: returned, passed to a
    function (but built-ins reading it whole: `len(d)`, `sorted(d)`), kept in a list or an attribute."""
    for sub in ast.walk(node):
        for child in ast.iter_child_nodes(sub):
            if not (isinstance(child, ast.Name) and child.id == name and isinstance(child.ctx, ast.Load)):
                continue
            if isinstance(sub, ast.Attribute) and sub.attr not in _ASKING or isinstance(sub, ast.Subscript) \
                    and child is sub.value or isinstance(sub, (ast.Compare, ast.comprehension, ast.For)) \
                    and child is not getattr(sub, "left", None) and child is not getattr(sub, "target", None):
                continue  # d[k], d.items(), k in d, for k in d
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in _READING_WHOLE \
                    and child is not sub.func:
                continue
            return True
    return False


_READING_WHOLE = frozenset({"len", "sorted", "list", "tuple", "dict", "set", "sum", "min", "max", "any", "all", "iter",
                            "enumerate", "zip", "reversed", "print"})


def _default(factory, scope, name, identifiers):
    """(statements to run where the defaultdict is made, a function making the default's expression at a read)."""
    if factory is None or isinstance(factory, ast.Constant) and factory.value is None:
        return [], None  # defaultdict(): a missing key raises KeyError, as a dict's does
    known = scope.static(factory) if isinstance(factory, (ast.Name, ast.Attribute)) else None
    if isinstance(known, type) and known in _BUILTIN_DEFAULTS:
        return [], lambda: ast.Constant(_BUILTIN_DEFAULTS[known])
    if isinstance(known, type) and known in _BUILTIN_DISPLAYS:
        return [], _BUILTIN_DISPLAYS[known]
    held = _fresh(f"{name}_factory", identifiers)  # a lambda or a function of the user's: called at each read,
    #                                                  as Python does (reading its names then, where it was written)
    made = ast.Assign([ast.Name(held, ast.Store())], factory)
    return [made], lambda: ast.Call(ast.Name(held, ast.Load()), [], [])


def _fresh(base, identifiers) -> str:
    name, k = base, 1
    while name in identifiers:
        name, k = f"{base}_{k}", k + 1
    identifiers.add(name)
    return name


class _DefaultDicts(ast.NodeTransformer):
    def __init__(self, factories, identifiers):
        self.made = {id(stmt): (name, before) for name, (stmt, (before, _)) in factories.items()}
        self.defaults = {name: default for name, (_, (_, default)) in factories.items() if default is not None}
        self.identifiers = identifiers

    def missing_made(self, node) -> bool:
        """Whether `node` reads an item of a defaultdict whose missing items are made."""
        return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
            and node.value.id in self.defaults and isinstance(node.ctx, ast.Load)

    def setdefault(self, node, key):
        name = node.value.id
        return _located(ast.Call(ast.Attribute(ast.Name(name, ast.Load()), "setdefault", ast.Load()),
                                 [key, self.defaults[name]()], []), node)

    def visit_Subscript(self, node):
        self.generic_visit(node)
        return self.setdefault(node, node.slice) if self.missing_made(node) else node

    def visit_Assign(self, node):
        if id(node) in self.made:  # d = defaultdict(f): d = {} (and f kept, where it is a function of the user's)
            name, before = self.made[id(node)]
            return [_located(stmt, node) for stmt in before] + \
                [_located(ast.Assign([ast.Name(name, ast.Store())], ast.Dict([], [])), node)]
        node.value = self.visit(node.value)
        made = []
        node.targets = [self.target(t, made) for t in node.targets]
        if made and not isinstance(node.value, (ast.Constant, ast.Name)):  # the value first, as Python computes it
            held = _fresh("assigned", self.identifiers)
            made.insert(0, _located(ast.Assign([ast.Name(held, ast.Store())], node.value), node))
            node.value = _located(ast.Name(held, ast.Load()), node)
        return made + [node]

    def visit_AugAssign(self, node):
        made = []
        node.target = self.target(node.target, made, read=True)  # d[k] += v: d[k] read (made) first
        node.value = self.visit(node.value)
        return made + [node]

    def visit_AnnAssign(self, node):
        made = []
        if node.value is not None:
            node.value = self.visit(node.value)
            node.target = self.target(node.target, made)
        return made + [node]

    def visit_Delete(self, node):
        made = []
        node.targets = [self.target(t, made) for t in node.targets]
        return made + [node]

    def target(self, node, made, read=False):
        """An assignment's target, with the items read to reach it (`d[k]` of `d[k][j] = v`, and of `d[k] += v`)
        made first (statements added to `made`), their keys computed once."""
        if isinstance(node, (ast.Tuple, ast.List)):
            node.elts = [self.target(elt, made) for elt in node.elts]
            return node
        if isinstance(node, ast.Starred):
            node.value = self.target(node.value, made)
            return node
        if isinstance(node, ast.Attribute):
            node.value = self.reached(node.value, made)
            return node
        if isinstance(node, ast.Subscript):
            if read and isinstance(node.value, ast.Name) and node.value.id in self.defaults:
                node.slice = self.made_first(node, made)
                return node
            node.value = self.reached(node.value, made)
            node.slice = self.visit(node.slice)
            return node
        return node

    def reached(self, node, made):
        """A container read on the way to a target: an item of a defaultdict made first, where it is one."""
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in self.defaults:
            node.slice = self.made_first(node, made)
            return node
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            node.value = self.reached(node.value, made)
            if isinstance(node, ast.Subscript):
                node.slice = self.visit(node.slice)
            return node
        return self.visit(node)

    def made_first(self, node, made):
        """`d[k]` about to be read to change it: `d.setdefault(k, default)` first; the key, where reading it
        may do anything, computed once into a name of its own."""
        key = self.visit(node.slice)
        if not _plain(key):
            held = _fresh("key", self.identifiers)
            made.append(_located(ast.Assign([ast.Name(held, ast.Store())], key), node))
            key = _located(ast.Name(held, ast.Load()), node)
        made.append(_located(ast.Expr(self.setdefault(node, copy.deepcopy(key))), node))
        return key


def _plain(node) -> bool:
    """An expression reading names and constants only (read twice, it gives the same and does nothing)."""
    return all(isinstance(sub, (ast.Name, ast.Constant, ast.Load, ast.Tuple, ast.BinOp, ast.UnaryOp, ast.operator,
                                ast.unaryop, ast.Attribute)) for sub in ast.walk(node))


def _located(new, where):
    for sub in ast.walk(new):
        if isinstance(sub, (ast.stmt, ast.expr)):
            ast.copy_location(sub, where)
            sub.end_lineno, sub.end_col_offset = where.end_lineno, where.end_col_offset
    return new

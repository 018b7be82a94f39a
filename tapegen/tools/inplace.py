"""`export --inplace` and `export --check`: a gradient written into the user's own module.

`python -m tapegen export model.py:loss --inplace` inserts `loss_grad` right after `loss` in
model.py, and leaves every other byte of the file as it was: the file is edited as a concrete
syntax tree (libcst), which keeps the user's comments, blank lines, quotes, indentation and line
endings. The inserted block is

    # tapegen: gradient of loss, generated from its source; regenerate with python -m tapegen export ...
    # tapegen: fingerprint 0123456789abcdef (tapegen 0.1.0, wrt W,b): a hash of loss's source, ...
    def _tapegen_loss_grad():
        import numpy as np

        def loss_grad(W, b, x, y):    # loss's parameters and defaults
            ...                       # the generated code, as `tapegen.source` shows it
            return value, (g_W, g_b)

        def unbroadcast(g, to_shape):  # the tapegen helpers loss_grad calls, copied
            ...

        loss_grad.__qualname__ = "loss_grad"
        return loss_grad


    loss_grad = _tapegen_loss_grad()

The helpers and imports live inside the builder function, so they cannot clash with the module's
names and nothing outside the block changes; the names the user's function reads from its
module (constants, arrays, functions) are read live from it (a global tapegen renames, such
as `seed`, is copied in as `export` copies it). Comments quoting the function's lines name the
function, not a line number, so edits elsewhere in the file leave the block current. The two
comment lines are the marker: an update finds the block by them (and the builder's name), and
replaces the builder and the assignment after it. The fingerprint hashes the function's source
(decorators included), tapegen's version and wrt; `wrt` is recorded so `--check` and a later
`--inplace` regenerate the same gradient.

Only this module imports libcst, and only `export --inplace` and `export --check` import it.
"""
from __future__ import annotations

import ast
import difflib
import hashlib
import linecache
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

with warnings.catch_warnings():  # libcst 1.0 warns about its own use of mypy_extensions
    warnings.simplefilter("ignore", DeprecationWarning)
    import libcst as cst

from .. import _version
from ..errors import TapegenError
from .export import _MISSING, _Collector, global_names, gradient

MARKER = "# tapegen: gradient of "
FINGERPRINT = re.compile(r"# tapegen: fingerprint ([0-9a-f]{16}) \(tapegen (\S+), wrt (\S+)\)")


class InplaceError(TapegenError):
    """`export --inplace` or `--check` cannot do what was asked (a nested function, a name clash)."""


@dataclass
class Change:
    """One gradient block: what --inplace writes for `name`, and why the file's is out of date."""

    name: str
    status: str   # "inserted", "updated", "current", or "stale" (its function is gone)
    reason: str = ""


def insert(path, name: str, wrt, load) -> tuple:
    """`(old text, new text, Change)`: `path` with the gradient of its function `name` inserted
    beside it, or its previous insertion replaced. `wrt` as in `tapegen.grad` (`None`: what the
    previous insertion used, else the decorator's, else the first argument). `load(path)` imports
    the file (the command line's `load_module`, passed in: cli imports this module)."""
    text = _read(path)
    module = _parse(path, text)
    _top_level(module, name, path)
    found = _blocks(module).get(name)
    if wrt is None and found is not None:
        wrt = found.wrt
    fn = _function(_load(path, load), name, path)
    new_module, change = _with_block(module, text, path, name, fn, wrt, found)
    return text, new_module.code, change


def check(path, load) -> tuple:
    """`(old text, new text, [Change])` for every gradient block in `path`: the text --inplace
    would write for all of them, and each block's status. `load` as for `insert`."""
    text = _read(path)
    if MARKER not in text:
        return text, text, []
    module = _parse(path, text)
    blocks = _blocks(module)
    if not blocks:
        return text, text, []
    loaded = _load(path, load)
    changes = []
    for name, found in blocks.items():
        try:
            _top_level(module, name, path)
        except InplaceError as exc:
            changes.append(Change(name, "stale", f"{exc.message}: delete its gradient block"))
            continue
        module, change = _with_block(module, text, path, name, _function(loaded, name, path), found.wrt,
                                     _blocks(module)[name])
        changes.append(change)
    return text, module.code, changes


def diff(path, old: str, new: str) -> str:
    """A unified diff from `old` to `new`, both the text of `path`."""
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"{path}",
                                        f"{path} (as export --inplace writes it)"))


# --- the file ------------------------------------------------------------------------------------


def _read(path) -> str:
    file = Path(path)
    if not file.is_file():
        raise InplaceError(f"{path}: no such file")
    with open(file, encoding="utf-8", newline="") as f:  # keep \r\n as it is
        return f.read()


def _parse(path, text) -> cst.Module:
    try:
        ast.parse(text, str(path))
    except SyntaxError as exc:
        raise InplaceError(f"{path}:{exc.lineno}:{exc.offset}: invalid Python: {exc.msg}") from None
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:  # valid Python this libcst does not know
        raise InplaceError(f"{path}:{exc.raw_line}:{exc.raw_column}: libcst cannot parse this: {exc.message}",
                           hint="upgrade libcst, or export the gradient with -o OUT.py") from None


def write(path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def _top_level(module: cst.Module, name: str, path) -> int:
    """The index in `module.body` of the top-level `def name`; refuses methods and nested functions."""
    if "." in name:
        raise InplaceError(f"--inplace writes gradients beside top-level functions, and {name} is a method",
                           hint=f"export it to a module of its own: python -m tapegen export {path}:{name} -o OUT.py")
    for index, stmt in enumerate(module.body):
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            return index
    finder = _Finder(name)
    module.visit(finder)
    if finder.inside:
        raise InplaceError(f"{name} is defined inside {finder.inside}, not at the top level of {path}",
                           hint="--inplace writes gradients beside top-level functions only; move it to the "
                                "top level, or export it with -o OUT.py")
    raise InplaceError(f"{path} has no top-level function {name!r}",
                       hint="--inplace needs `def " + name + "(...)` at the top level of the file")


class _Finder(cst.CSTVisitor):
    """Where a `def name` nested in another function, a class or a block is."""

    def __init__(self, name):
        self.name, self.stack, self.inside = name, [], None

    def visit_FunctionDef(self, node):
        if node.name.value == self.name and self.inside is None:
            self.inside = (f"{self.stack[-1]}" if self.stack else "a block (if/try/with)")
        self.stack.append(f"{node.name.value}()")

    def leave_FunctionDef(self, node):
        self.stack.pop()

    def visit_ClassDef(self, node):
        self.stack.append(f"class {node.name.value}")

    def leave_ClassDef(self, node):
        self.stack.pop()


def _load(path, load):
    """Import the file, with `load`, as it is now (not as an earlier import in this process left it
    in linecache)."""
    linecache.checkcache(str(path))
    return load(str(path))


def _function(module, name, path):
    fn = getattr(module, name, None)
    if fn is None or not callable(fn):
        raise InplaceError(f"running {path} leaves no function {name!r} in it")
    return fn


@dataclass
class _Found:
    """A gradient block in the file: its statements' positions and the wrt it was made for."""

    index: int
    count: int
    wrt: object
    spec: str          # wrt as the marker writes it
    fingerprint: str
    version: str


def _blocks(module: cst.Module) -> dict:
    """function name -> _Found, for every gradient block (a marked `def _tapegen_<name>_grad`)."""
    found = {}
    for index, stmt in enumerate(module.body):
        if not isinstance(stmt, cst.FunctionDef):
            continue
        comments = [line.comment.value for line in stmt.leading_lines if line.comment is not None]
        marker = next((c for c in comments if c.startswith(MARKER)), None)
        stamp = next((m for m in map(FINGERPRINT.match, comments) if m), None)
        if marker is None:
            continue
        name = marker[len(MARKER):].split(",")[0].strip()
        if stmt.name.value != _builder(name) or stamp is None:
            continue
        count = 2 if index + 1 < len(module.body) and _is_assignment(module.body[index + 1], name) else 1
        found[name] = _Found(index, count, parse_wrt(stamp.group(3)), stamp.group(3), stamp.group(1),
                             stamp.group(2))
    return found


def _is_assignment(stmt, name) -> bool:
    expected = f"{name}_grad = {_builder(name)}()"
    return isinstance(stmt, cst.SimpleStatementLine) and cst.Module([]).code_for_node(
        stmt.with_changes(leading_lines=())).strip() == expected


def _builder(name) -> str:
    return f"_tapegen_{name}_grad"


def _wrt_text(wrt) -> str:
    """wrt names as the marker and --wrt write them: `x`, `W,b`, and `x,` for a tuple of one."""
    if isinstance(wrt, tuple):
        return ",".join(wrt) + ("," if len(wrt) == 1 else "")
    return wrt


def parse_wrt(text):
    items = [item for item in text.split(",") if item]
    if not items:
        return None
    items = [int(item) if item.lstrip("-").isdigit() else item for item in items]
    return items[0] if len(items) == 1 and not text.endswith(",") else tuple(items)


# --- the block -----------------------------------------------------------------------------------


def _with_block(module, text, path, name, fn, wrt, found) -> tuple:
    """`(module with the block for `name` inserted or replaced, Change)`."""
    version = _version.__version__
    index = _top_level(module, name, path)
    grad_name = f"{name}_grad"
    _refuse_clashes(module, name, found)
    source = cst.Module([]).code_for_node(module.body[index].with_changes(leading_lines=()))
    _, indices, bare, generated = gradient(fn, wrt)
    program = generated.program
    wrt_names = tuple(program.params[i].name for i in indices)
    spec = _wrt_text(wrt_names[0] if bare else wrt_names)
    fingerprint = hashlib.sha256(f"{source}\0{version}\0{spec}".encode()).hexdigest()[:16]
    command = f"python -m tapegen export {Path(path).name}:{name} --wrt {spec} --inplace"
    lines = [f"{MARKER}{name}, generated from its source; regenerate with {command}",
             f"# tapegen: fingerprint {fingerprint} (tapegen {version}, wrt {spec}): a hash of {name}'s "
             f"source, the version and wrt. Edit {name}, not this block."]
    builder = _builder_def(fn, name, grad_name, generated, text, version, module.default_newline,
                           module.body[index].params)
    builder = builder.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()] +
                                   [cst.EmptyLine(comment=cst.Comment(line)) for line in lines])
    assign = cst.parse_statement(f"{grad_name} = {_builder(name)}()\n").with_changes(
        leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    body = list(module.body)
    if found is None:
        body[index + 1:index + 1] = [builder, assign]
        new = module.with_changes(body=body)
        return new, Change(name, "inserted", f"{name} has no gradient block")
    body[found.index:found.index + found.count] = [builder, assign]
    new = module.with_changes(body=body)
    old_code = "".join(module.code_for_node(s) for s in module.body[found.index:found.index + found.count])
    new_code = "".join(new.code_for_node(s) for s in new.body[found.index:found.index + 2])
    if old_code == new_code:
        return new, Change(name, "current")
    if found.version != version:
        reason = f"{name}_grad was generated by tapegen {found.version}; this is tapegen {version}"
    elif found.spec != spec:
        reason = f"{name}_grad was with respect to {found.spec}, and is now with respect to {spec}"
    elif found.fingerprint != fingerprint:
        reason = f"{name} changed since {name}_grad was generated from it"
    else:
        reason = (f"{name}_grad differs from what tapegen generates for {name} (edited by hand, or a function or "
                  f"value {name} uses changed)")
    return new, Change(name, "updated", reason)


def _refuse_clashes(module, name, found) -> None:
    """The module must not bind `<name>_grad` or the builder's name itself, outside the block."""
    skip = range(found.index, found.index + found.count) if found is not None else range(0)
    for index, stmt in enumerate(module.body):
        if index in skip:
            continue
        for bound in _bound_names(stmt):
            if bound in (f"{name}_grad", _builder(name)):
                raise InplaceError(f"the module already defines {bound}, the name --inplace would give "
                                   f"the gradient of {name}", hint=f"rename your {bound}, or export the gradient "
                                   "to a module of its own with -o OUT.py")


def _bound_names(stmt) -> list:
    try:
        tree = ast.parse(cst.Module([]).code_for_node(stmt.with_changes(leading_lines=())))
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [(alias.asname or alias.name).split(".")[0] for alias in node.names]
        else:
            names += [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    return names


class _BlockCollector(_Collector):
    """`export`'s collector, but a name the generated code reads from the user's module is left to be
    read there, live, instead of copied in as a literal; and any module may be imported (the user's
    module runs where its own imports, SciPy say, are installed)."""

    def __init__(self, namespace, module_globals, renamed):
        super().__init__(namespace)
        self.module_globals, self.renamed, self.live = module_globals, renamed, {}

    def add_generated(self, source) -> None:
        for name in global_names(source):
            value = self._resolve(name, None)
            ours = getattr(value, "__module__", None) or ""
            if name not in self.renamed and self.module_globals.get(name, _MISSING) is value \
                    and not ours.startswith("tapegen"):
                self.live[name] = value
            else:
                self.add(name, value)

    def _module(self, name, module) -> None:
        self.modules[name] = module


def _builder_def(fn, name, grad_name, generated, text, version, newline, params) -> cst.FunctionDef:
    """`def _tapegen_<name>_grad(): ...`: imports, the gradient function, the helpers it calls.
    `params` are the user's function's parameters, whose defaults the gradient function takes."""
    program = generated.program
    target_globals = _raw(fn).__globals__
    renamed = {generated_name for generated_name, (source_fn, original) in program.free_sources
               if generated_name != original or source_fn.__globals__ is not target_globals}
    collector = _BlockCollector(generated.namespace, target_globals, renamed)
    collector.add_generated(generated.text)
    for live, value in collector.live.items():
        if live in collector.bound and collector.bound[live] is not value:
            raise InplaceError(f"cannot insert the gradient of {name}: it reads the module's {live!r}, and a "
                               f"tapegen helper the gradient calls has that name",
                               hint=f"rename {live}, or export the gradient with -o OUT.py")
    code = _relocated(_without_header(generated.text), program.span.file, text)
    parts = [f'"""{grad_name}() and the tapegen helpers it calls, local here so they cannot clash with this '
             f'module\'s names."""', collector.imports(), code]
    helpers = collector.definitions()
    if helpers:
        parts.append(f"# helpers {grad_name} calls, copied from tapegen {version}\n" + "\n\n".join(helpers))
    parts.append(f'{grad_name}.__qualname__ = "{grad_name}"  # pickled by reference, as this module\'s '
                 f'{grad_name}\nreturn {grad_name}')
    inner_text = "\n\n".join(part for part in parts if part) + "\n"
    # the file's line endings, inside multi-line strings too (Python reads either as "\n")
    inner = cst.parse_module(inner_text.replace("\n", newline)).visit(_BareBlankLines())
    body = [stmt.with_changes(params=_parameters(params, program, collector, name))
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == grad_name else stmt for stmt in inner.body]
    return cst.FunctionDef(name=cst.Name(_builder(name)), params=cst.Parameters(),
                           body=cst.IndentedBlock(body=body))


def _parameters(params: cst.Parameters, program, collector, name) -> cst.Parameters:
    """The user's parameter list for the gradient function: its defaults and keyword-only marker as
    written (so `f_grad` is called as `f` is), annotations left out, each name as the generated
    code spells it (a parameter called `shape` is `shape_` there)."""
    slots = [*params.posonly_params, *params.params, *params.kwonly_params]
    names = [p.name for p in program.params]
    if len(slots) != len(names) or isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
        raise InplaceError(f"cannot insert the gradient of {name}: its parameters do not match the generated "
                           "code's", hint="export it with -o OUT.py")
    for param in slots:
        if param.default is None:
            continue
        reads = {node.id for node in ast.walk(ast.parse(cst.Module([]).code_for_node(param.default).strip(),
                                                        mode="eval")) if isinstance(node, ast.Name)}
        for read in reads & set(collector.bound):
            if collector.bound[read] is not collector.module_globals.get(read, _MISSING):
                raise InplaceError(f"cannot insert the gradient of {name}: the default of {param.name.value} reads "
                                   f"{read!r}, which a tapegen helper of the gradient also names",
                                   hint=f"rename {read}, or export the gradient with -o OUT.py")
    renamed = iter(names)

    def plain(group):
        return [p.with_changes(name=cst.Name(next(renamed)), annotation=None) for p in group]
    return params.with_changes(posonly_params=plain(params.posonly_params), params=plain(params.params),
                               kwonly_params=plain(params.kwonly_params))


class _BareBlankLines(cst.CSTTransformer):
    """Blank lines between the statements moved into the builder stay empty (no indentation)."""

    def leave_EmptyLine(self, original, updated):
        return updated.with_changes(indent=False) if updated.comment is None else updated


def _raw(fn):
    from ..api import _differentiated
    return _differentiated(fn)._target.fn


def _without_header(code: str) -> str:
    """The generated function without codegen's `# Generated by tapegen from f() in file:line` header
    (the marker says it, without a line number that moves)."""
    lines = code.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("def "))
    return "\n".join(lines[start:]).rstrip() + "\n"


def _relocated(code: str, file: str, text: str) -> str:
    """Comments quoting a line of the user's file say which function it is in, not its line
    number, so an edit elsewhere in the file does not make the gradient out of date."""
    owners = {}
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            for line in range(start, node.end_lineno + 1):
                owners[line] = f"{node.name}()" if not isinstance(node, ast.ClassDef) else f"class {node.name}"
    pattern = re.compile(r"# " + re.escape(file) + r":(\d+)   ")
    return pattern.sub(lambda m: f"# {owners.get(int(m.group(1)), file)}   ", code)

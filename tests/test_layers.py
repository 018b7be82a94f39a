"""tapegen's imports go one way: down the layers of docs/architecture.md, with no cycles.

Every module of tapegen/ is parsed with `ast` (nothing is imported) and every
import in it is read, at the top or inside a function alike: a function-level
import of a higher layer is an upward import too. A module may import its own
layer and the layers below it, never one above; and no chain of imports may
lead from a module back to itself.

A new module must be given a layer here (and a row in docs/architecture.md).
"""
from __future__ import annotations

import ast
import functools
import pathlib
import shutil

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "tapegen"

# Bottom to top. An entry names a module, or (ending in ".") every module of a subpackage.
LAYERS = (
    ("base", ("tapegen.errors", "tapegen.runtime", "tapegen._version")),
    ("rules", ("tapegen.rules", "tapegen.rules.")),
    ("ir", ("tapegen.ir", "tapegen.verify")),
    ("frontend", ("tapegen.frontend", "tapegen.frontend.")),
    ("transforms", ("tapegen.transforms", "tapegen.transforms.")),
    ("codegen", ("tapegen.codegen", "tapegen.codegen.")),
    ("pipeline", ("tapegen.pipeline", "tapegen.cache")),
    ("api", ("tapegen.api", "tapegen.api_transforms", "tapegen.checkpoint", "tapegen.debug", "tapegen.highlight")),
    ("tools", ("tapegen.tools", "tapegen.tools.")),
    ("package", ("tapegen", "tapegen.__main__", "tapegen.dask", "tapegen.export")),
)


def layer_of(module: str):
    """`(index, name)` of `module`'s layer, or None if no layer names it."""
    for index, (name, entries) in enumerate(LAYERS):
        for entry in entries:
            if module == entry or (entry.endswith(".") and module.startswith(entry)):
                return index, name
    return None


def modules(package: pathlib.Path) -> dict:
    """Dotted module name -> (path, whether it is a package's __init__)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_init = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_init else parts)] = (path, is_init)
    return found


def imports(module: str, path: pathlib.Path, is_init: bool, known: dict) -> list:
    """`(line, imported module)` for every tapegen import in the file, function-level ones included.

    The imported module is a dotted name: a module of the package, unless the import is stale
    (`unresolved` reports those).
    """
    package = module if is_init else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:  # `from . import x` imports the module x, when there is one
                name = f"{base}.{alias.name}"
                found.append((node.lineno, name if name in known else base))
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ast.unparse(node.func) in ("importlib.import_module", "import_module", "__import__")):
            found.append((node.lineno, node.args[0].value))
    return [(line, target) for line, target in found
            if (target == "tapegen" or target.startswith("tapegen.")) and target != module]


@functools.lru_cache(maxsize=None)
def graph(package: pathlib.Path = PACKAGE) -> dict:
    """Module -> [(line, imported module)], for every module of the package."""
    known = modules(package)
    return {module: imports(module, path, is_init, known) for module, (path, is_init) in known.items()}


def unassigned(edges: dict) -> list:
    return sorted(module for module in edges if layer_of(module) is None)


def unresolved(edges: dict) -> list:
    """`module:line imports target` for each import naming no module of the package (stale after a move)."""
    return [f"{module}:{line} imports {target}, which is no module of tapegen"
            for module, targets in sorted(edges.items()) for line, target in targets if target not in edges]


def upward(edges: dict) -> list:
    """`module:line imports target` for each import of a higher layer."""
    found = []
    for module, targets in sorted(edges.items()):
        here = layer_of(module)
        for line, target in targets:
            there = layer_of(target)
            if here is not None and there is not None and there[0] > here[0]:
                found.append(f"{module}:{line} ({here[1]}) imports {target} ({there[1]}, a higher layer)")
    return found


def cycles(edges: dict) -> list:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    successors = {m: sorted({t for _, t in targets if t in edges}) for m, targets in edges.items()}
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in successors[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(successors):
        if node not in index:
            visit(node)
    return sorted(found)


def test_every_module_has_a_layer():
    assert unassigned(graph()) == [], "give these modules a layer in LAYERS (and docs/architecture.md)"


def test_every_import_names_a_module():
    problems = unresolved(graph())
    assert not problems, "stale imports (a relative import not updated after a move?):\n" + "\n".join(problems)


def test_no_module_imports_a_higher_layer():
    problems = upward(graph())
    assert not problems, "upward imports:\n" + "\n".join(problems)


def test_no_import_cycles():
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_checks_catch_an_upward_import_and_a_cycle(tmp_path):
    """The checks themselves: a function-level import of the API from ir.py, a frontend cycle, a stale import."""
    copy = tmp_path / "tapegen"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "ir.py", "a") as f:
        f.write("\n\ndef _hidden():\n    from .api import grad\n    return grad\n")
    with open(copy / "frontend" / "names.py", "a") as f:
        f.write("\n\ndef _back():\n    from . import lower\n    return lower\n")
    with open(copy / "tools" / "gradcheck.py", "a") as f:
        f.write("\n\ndef _stale():\n    from .transforms import jvp\n    return jvp\n")
    edges = graph(copy)
    assert any(p.startswith("tapegen.ir:") and "imports tapegen.api (api" in p for p in upward(edges))
    assert any({"tapegen.frontend.lower", "tapegen.frontend.names"} <= set(c) for c in cycles(edges))
    assert any(p.startswith("tapegen.tools.gradcheck:") and "tapegen.tools.transforms" in p for p in unresolved(edges))
    assert upward(graph()) == [] and cycles(graph()) == [] and unresolved(graph()) == []  # the real one is untouched

"""The names generated code may use (rules/__init__.py): `lookup_name` answers one name without reading every
rule's source; it must agree exactly with the whole namespace built the way it always was (every rules module
parsed, every rule's free names collected), or generated code would run with another object under a name."""
import ast
import json
import subprocess
import sys

import pytest

from tapegen import rules
from tapegen.rules import table

# Run in a fresh process: lookups first (nothing parsed whole yet), then the reference built from scratch.
_SCRIPT = r"""
import ast, builtins, json, sys
import numpy as np
from tapegen import rules
from tapegen.rules import table
if sys.argv[1] == "scipy":
    rules.load_optional(everything=True)
words = set(rules._rule_index()) | {"x", "h", "W1", "loss", "shape", "T", "sum", "np", "tape", "seed", "g_x"}
lazy = {name: rules.lookup_name(name) for name in sorted(words)}
parsed_alone = {id(r): r.inline for p in rules.PRIMITIVES.values() for r in [*p.vjps.values(), *p.jvps.values()]}


def reference():
    # namespace() as it was written before lookup_name: every rule's globals, in table order
    from tapegen import runtime
    names = dict(rules._fixed_names()["base"])
    for prim in rules.PRIMITIVES.values():
        for rule in list(prim.vjps.values()) + list(prim.jvps.values()):
            node = table._module_functions(rule.fn.__code__.co_filename).get(rule.fn.__code__.co_firstlineno) \
                if hasattr(rule.fn, "__code__") else None
            whole = None
            if node is not None:
                body = [s for s in node.body if not table._is_docstring(s)]
                if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None and not any(
                        isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda,
                                       ast.NamedExpr)) for n in ast.walk(body[0].value)):
                    whole = body[0].value
            assert (whole is None) == (parsed_alone[id(rule)] is None), rule.where
            if whole is not None:
                assert ast.dump(whole) == ast.dump(parsed_alone[id(rule)]), rule.where
            found = {rule.name: rule.fn} if whole is None else {
                n.id: rule.fn.__globals__[n.id] for n in ast.walk(whole)
                if isinstance(n, ast.Name) and n.id not in rule.reads and not hasattr(builtins, n.id)}
            for name, value in found.items():
                assert names.setdefault(name, value) is value, (rule.where, name)
    names.update(rules._fixed_names()["late"])
    for name, value in rules._fixed_names()["helpers"].items():
        names.setdefault(name, value)
    return names


expected = reference()
full = rules.namespace()
problems = []
if set(full) != set(expected):
    problems.append(f"namespace() names differ: {sorted(set(full) ^ set(expected))}")
problems += [f"namespace()[{n!r}]" for n in expected if full.get(n) is not expected[n]]
problems += [f"lookup_name({n!r})" for n, v in lazy.items() if v is not expected.get(n, rules.MISSING)]
print(json.dumps({"problems": problems, "names": len(expected), "words": len(words)}))
"""


@pytest.mark.parametrize("tables", ["numpy", "scipy"])
def test_lookup_name_agrees_with_the_whole_namespace(tables):
    done = subprocess.run([sys.executable, "-c", _SCRIPT, tables], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["problems"] == []
    assert result["names"] > 300 and result["words"] > result["names"]


def test_a_rule_read_alone_is_the_rule_read_from_its_module():
    rule = rules.PRIMITIVES[__import__("numpy").tanh].vjps["x"]
    code = rule.fn.__code__
    alone = table._inline_expression(rule.fn) if code.co_filename not in table._MODULES else None
    whole = table._module_functions(code.co_filename)[code.co_firstlineno].body[-1].value
    assert alone is None or ast.dump(alone) == ast.dump(whole)


def test_a_name_two_rules_use_for_different_objects_is_refused():
    """A user's rule module with its own `unbroadcast`: generated code would call the wrong one; refused."""
    import linecache
    made = rules.RuleTable("conflicting")
    filename = "<conflicting rules>"
    text = ("def special(x):\n    return x\n\n\ndef unbroadcast(g, shape):\n    return g\n\n\n"
            "def special_vjp_x(g, x):\n    return unbroadcast(g, x)\n")
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {}
    exec(compile(text, filename, "exec"), scope)
    made.op(scope["special"], "x")
    made.vjp(scope["special"], "x")(scope["special_vjp_x"])
    try:
        rules.register_table(made)
        with pytest.raises(rules.RuleError, match="uses 'unbroadcast'"):
            rules.lookup_name("unbroadcast")
    finally:
        del rules.PRIMITIVES[scope["special"]]
        rules._forget_names()
        linecache.cache.pop(filename, None)
    from tapegen import runtime
    assert rules.lookup_name("unbroadcast") is runtime.unbroadcast

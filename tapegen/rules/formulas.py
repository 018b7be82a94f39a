"""Rules written as derivative formulas: one expression per (primitive, argument), the rules made from it.

Elementwise functions of several arguments all have rules of one shape:

    def <name>_vjp_<p>(..., <p>_shape, g):
        return unbroadcast(g * (<d>), <p>_shape)

    def <name>_jvp_<p>(..., <p>_dot, y):
        return broadcast_like(<p>_dot * (<d>), y)

where `<d>` is the partial derivative of the output in argument `p`, an
expression in the primitive's parameters and its output `y`. The SciPy tables
give only the `<d>`s (`{"x": "scipy.special.digamma(x)"}` for gammaln) and
`derive` writes the rules as source text, registered in `linecache` under a
pseudo-filename and executed in the table module's globals: they are ordinary
one-`return` rules, inlined into generated code like hand-written ones, and
since `<d>` calls only primitives that have rules themselves, gradient code
is differentiable again (second order and beyond). `python -c "import
linecache; ..."` or a traceback shows the rule's source like any other.

A formula whose derivative is infinite or undefined where the output is
finite (`xlogy` at 0) says so with `guard=True`: the product is then
`guarded_mul(g, <d>)`, zero wherever the cotangent is (see elementwise.py).
"""
from __future__ import annotations

import ast
import linecache

from .table import RuleError


class Formulas:
    """Rule sources for one table, executed together by `load`."""

    def __init__(self, table, namespace: dict, filename: str):
        self.table = table
        self.namespace = namespace
        self.filename = filename
        self.lines: list = []
        self.pending: list = []  # (primitive callable, wrt, kind, function name)

    def derive(self, fn, name: str, partials: dict, guard: bool = False, unbroadcast: bool = True):
        """Add a VJP and a JVP rule of primitive `fn` for each `{argument: derivative expression}`."""
        prim = self.table.primitives[fn]
        for wrt, expression in partials.items():
            if wrt not in prim.params:
                raise RuleError(f"{self.table.name}: {prim.name} has no parameter {wrt!r}")
            used = _free_names(expression)
            reads = [p for p in prim.params if p in used] + (["y"] if "y" in used else [])
            product = f"guarded_mul({{t}}, {expression})" if guard else f"{{t}} * ({expression})"
            back = product.format(t="g")
            if unbroadcast:
                back = f"unbroadcast({back}, {wrt}_shape)"
            self._add(fn, wrt, "vjp", f"{name}_vjp_{wrt}",
                      reads + ([f"{wrt}_shape"] if unbroadcast else []) + ["g"], back)
            forward = f"broadcast_like({product.format(t=f'{wrt}_dot')}, y)"
            self._add(fn, wrt, "jvp", f"{name}_jvp_{wrt}", [r for r in reads if r != "y"] + [f"{wrt}_dot", "y"],
                      forward)

    def rule(self, fn, wrt: str, kind: str, function: str, params: list, expression: str):
        """Add one rule of any shape: `def <function>(<params>): return <expression>`, a "vjp" or "jvp"."""
        self._add(fn, wrt, kind, function, params, expression)

    def _add(self, fn, wrt, kind, function, params, expression):
        self.lines += [f"def {function}({', '.join(params)}):", f"    return {expression}", ""]
        self.pending.append((fn, wrt, kind, function))

    def load(self):
        """Compile the rules, make their source visible to `inspect` and the inliner, register them."""
        text = "\n".join(self.lines) + "\n"
        linecache.cache[self.filename] = (len(text), None, text.splitlines(True), self.filename)
        exec(compile(text, self.filename, "exec"), self.namespace)
        for fn, wrt, kind, function in self.pending:
            register = self.table.vjp if kind == "vjp" else self.table.jvp
            register(fn, wrt)(self.namespace[function])
        self.pending = []


def _free_names(expression: str) -> set:
    return {node.id for node in ast.walk(ast.parse(expression, mode="eval")) if isinstance(node, ast.Name)}

"""The table-driven rule tests' shared parts: a row type and the two checks.

Each `tests/test_rules_<area>.py` defines `ROWS`, one `Row` per (rule, shape
group), and parametrizes `check_vjp_row` / `check_jvp_row` over it.
`tests/test_rule_coverage.py` fails if a primitive with rules has no row.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import tapegen as tg
from tapegen import rules
from tapegen.runtime import meta


@dataclass
class Row:
    """One rule test: `fn` (a lambda calling the primitive) at `args`, differentiated in `wrt`.

    `covers` names the primitives (callables) the row exercises, for the coverage test.
    `id` reads like `sin-(3,2)-float64`.
    """

    id: str
    fn: object
    args: tuple
    wrt: tuple = (0,)
    covers: tuple = ()
    rtol: float = 1e-5
    atol: float = 1e-7
    jvp: bool = True  # check the JVP rules of `covers` at these args too
    extra: dict = field(default_factory=dict)


def check_vjp_row(row: Row) -> None:
    """Reverse mode through the full transform vs central differences (raises GradcheckError)."""
    tg.gradcheck(row.fn, *row.args, wrt=row.wrt, rtol=row.rtol, atol=row.atol)


def check_jvp_rules(fn, inputs: dict, tangents: dict, rtol=1e-5, atol=1e-7, eps=1e-6) -> None:
    """A primitive's JVP rules, called directly, vs a central-difference directional derivative.

    `inputs` maps the primitive's parameter names to values (all of them, defaults included);
    `tangents` maps the differentiated ones to tangent directions.
    """
    prim = rules.lookup(fn)
    y = call_primitive(prim, inputs)
    total = None
    for name, tangent in tangents.items():
        rule = prim.jvps.get(name)
        assert rule is not None, f"{prim.name} has no JVP rule for {name!r}"
        reads = {}
        for read in rule.reads:
            if read == "y":
                reads[read] = y
            elif read.endswith("_dot"):
                reads[read] = tangent if read == f"{name}_dot" else None
            elif read.endswith("_shape"):
                reads[read] = np.shape(inputs[read[:-6]])
            elif read.endswith("_is_const"):
                reads[read] = False  # inputs here are values, not literals in a source file
            elif read.endswith("_active"):
                reads[read] = read[:-7] in tangents
            elif read.endswith("_meta"):
                reads[read] = meta(inputs[read[:-5]])
            else:
                reads[read] = inputs[read]
        part = rule.fn(**reads)
        total = part if total is None else total + part
    plus = dict(inputs)
    minus = dict(inputs)
    for name, tangent in tangents.items():
        plus[name] = np.asarray(inputs[name]) + eps * np.asarray(tangent)
        minus[name] = np.asarray(inputs[name]) - eps * np.asarray(tangent)
    expected = (np.asarray(call_primitive(prim, plus), dtype=float)
                - np.asarray(call_primitive(prim, minus), dtype=float)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(total, dtype=float), expected, rtol=rtol, atol=atol,
                               err_msg=f"JVP rules of {prim.name} disagree with finite differences")


def call_primitive(prim, inputs: dict):
    """Call a primitive with inputs by name: parameters without defaults positionally, the rest by keyword."""
    positional = [inputs[p] for p in prim.params if p in inputs and p not in prim.defaults]
    keywords = {p: inputs[p] for p in prim.params if p in prim.defaults and p in inputs}
    return prim.fn(*positional, **keywords)

"""Forward mode needs a JVP rule wherever reverse mode has a VJP rule: this test lists the gaps.

A primitive with a VJP rule for a parameter must have a JVP rule for it too,
in the same table, beside it; only the primitives forward mode writes tangents
for itself (containers, `A[i] = v`, `xs.append(v)`: `forward.STRUCTURAL`) are
exempt.
"""
from tapegen import rules
from tapegen.transforms.forward import STRUCTURAL


def _gaps():
    structural = {id(fn) for fn in STRUCTURAL}
    gaps = []
    for table in rules.TABLES:
        for fn, prim in table.primitives.items():
            if id(fn) in structural:
                continue
            gaps += [f"{table.name}: {prim.name} ({param})" for param in prim.vjps if param not in prim.jvps]
    return gaps


def test_every_vjp_rule_has_a_jvp_rule():
    gaps = _gaps()
    assert not gaps, f"{len(gaps)} VJP rules without a JVP rule: {'; '.join(gaps)}"


def test_jvp_rules_are_for_declared_parameters():
    for table in rules.TABLES:
        for prim in table.primitives.values():
            assert set(prim.jvps) <= set(prim.params), prim.name

"""Every primitive with a VJP rule has at least one row in a rule table test."""
import importlib
import pathlib

from tapegen import rules
from tapegen.rules.linalg import einsum_first_cotangent, einsum_first_tangent


def _covered():
    covered = set()
    for path in sorted(pathlib.Path(__file__).parent.glob("test_rules_*.py")):
        module = importlib.import_module(path.stem)
        for row in module.ROWS:
            covered.update(row.covers)  # by equality: a bound method (scipy.stats.norm.logpdf) is made afresh
    return covered


# Primitives whose rules a row cannot reach (rows differentiate arrays; these read objects' fields),
# with the test that checks them against finite differences instead.
ELSEWHERE = {getattr: "test_python_features.py::test_namedtuple_and_dataclass_arguments_get_gradients_of_their_class",
             # none for string subscripts, refused for the interleaved form's first array: nothing to difference
             einsum_first_tangent: "test_rules_linalg.py::test_einsum_subscripts_from_a_list_carry_no_derivative_at_any_order",
             einsum_first_cotangent: "test_rules_linalg.py::test_einsum_subscripts_from_a_list_carry_no_derivative_at_any_order"}


def test_every_rule_has_a_row():
    covered = _covered() | set(ELSEWHERE)
    builtin = {fn: prim for table in rules.TABLES for fn, prim in table.primitives.items()}
    missing = sorted(prim.name for fn, prim in builtin.items() if prim.vjps and fn not in covered)
    assert not missing, f"primitives with VJP rules but no test row: {', '.join(missing)}"

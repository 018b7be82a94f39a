"""Issue 15: real-world NumPy programs, run unchanged.

Every file in tests/corpus/ is model code written the way its authors write it (autograd's examples,
numpy-ml's layers and losses, cs231n, min-char-rnn, ...), with a `cases()` function returning
(function, args) pairs at small seeded inputs (or (function, args, options): keyword arguments of
check_modes, such as the positions to differentiate when the program is not smooth in another argument). Each case is checked in grad, vjp, jvp and
grad-of-grad against central differences (tests/modes.py).

A case tapegen cannot yet run is listed in XFAIL with the construct it trips on; XFAIL is strict, so
the entry must be removed when tapegen learns the construct.
"""
import importlib
import pkgutil

import numpy as np
import pytest

import corpus
from modes import check_modes

# "<module>.<function>[<index among the module's cases>]" -> the construct tapegen refuses or gets wrong.
XFAIL = {
}

# Cases whose first-order derivatives are right but whose second order tapegen cannot take yet: the
# full check is an expected failure, and the same case is also checked with order2=False.
XFAIL_ORDER2 = {
}

# Cases whose second-order check is infeasible: "<id>" -> why.
FIRST_ORDER_ONLY = {
}


def _cases():
    params = []
    for info in sorted(pkgutil.iter_modules(corpus.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"corpus.{info.name}")
        for index, (fn, args, *options) in enumerate(module.cases()):
            case_id = f"{info.name}.{fn.__name__}[{index}]"
            reason = XFAIL.get(case_id) or XFAIL_ORDER2.get(case_id)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param(fn, args, dict(*options), case_id, True, id=case_id, marks=marks))
            if case_id in XFAIL_ORDER2:
                params.append(pytest.param(fn, args, dict(*options), case_id, False, id=f"{case_id}-first-order"))
    return params


CASES = _cases()


@pytest.mark.parametrize("fn, args, options, case_id, order2", CASES)
def test_corpus_program(fn, args, options, case_id, order2):
    check_modes(fn, *args, order2=order2 and case_id not in FIRST_ORDER_ONLY, **options)


def test_corpus_is_large_enough():
    modules = {p.values[3].split(".")[0] for p in CASES}
    assert len(modules) >= 40


def test_every_listed_case_exists():
    ids = {p.values[3] for p in CASES}
    assert set(XFAIL) <= ids and set(XFAIL_ORDER2) <= ids and set(FIRST_ORDER_ONLY) <= ids
    assert not set(XFAIL) & set(XFAIL_ORDER2)


def test_programs_are_plain_numpy():
    """Every case runs as ordinary Python, deterministically, to a finite scalar."""
    for p in CASES:
        if p.id.endswith("-first-order"):
            continue
        fn, args, _, case_id, _ = p.values
        first, second = fn(*args), fn(*args)
        assert np.ndim(first) == 0 and np.isfinite(first) and first == second, case_id

"""Python statements and displays people write around NumPy code: `match` (values, names, `_`, `|`, sequences,
guards), `{**a, **b}` merges, `itertools.pairwise`. Each checked in every mode against finite differences."""
import itertools

import numpy as np
import pytest

import tapegen as tg
from modes import check_modes

X3 = np.array([0.3, -0.7, 1.1])


def loss_named_by_a_match(x, kind="huber"):
    r = x - 0.2
    match kind:
        case "l2":
            loss = np.sum(r ** 2)
        case "huber" | "smooth_l1":
            a = np.abs(r)
            loss = np.sum(np.where(a < 0.5, 0.5 * r ** 2, 0.5 * (a - 0.25)))
        case _:
            raise ValueError(f"unknown loss {kind!r}")
    return loss


def steps_matched_by_shape(x):
    """Sequence patterns capturing items, a guard reading a capture, None, and a capture of the whole."""
    y = x
    for step in [("scale", 2.0), ("scale", 0.5), ("shift", 0.3), None, "other"]:
        match step:
            case ("scale", s) if s > 1.0:
                y = y * s
            case ("shift" | "move", s):
                y = y + s
            case None:
                y = np.sin(y)
            case ("scale", _):
                y = y ** 2
            case rest:
                y = y * len(rest)
    match x.shape:
        case (n,):
            return np.sum(y) * n
        case (n, m):
            return np.sum(y) * n * m


def dicts_merged_by_spreads(x):
    base = {"a": x, "b": x ** 2}
    extra = {"c": np.sin(x)}
    merged = {**base, **extra, "d": x * 3, **{"a": np.cos(x)}}
    return sum(np.sum(v * k) for k, v in zip([1.0, 2.0, 3.0, 4.0], merged.values())) + len(merged)


def neighbours_by_pairwise(x):
    total = 0.0
    for a, b in itertools.pairwise(x):
        total = total + (a - b) ** 2
    return total + sum(np.sin(a) * b for a, b in itertools.pairwise([x[0], x[1] ** 2, x[2]]))


@pytest.mark.parametrize("fn", [loss_named_by_a_match, steps_matched_by_shape, dicts_merged_by_spreads,
                                neighbours_by_pairwise])
def test_every_mode_matches_finite_differences(fn):
    check_modes(fn, X3)


def test_a_match_on_a_loss_name_passed_runs_that_case():
    check_modes(lambda x: loss_named_by_a_match(x, "l2"), X3)


def _class_pattern(x):
    match x:
        case np.ndarray(shape=(3,)):
            return np.sum(x)
    return 0.0


def test_a_class_pattern_is_refused_with_a_hint():
    with pytest.raises(tg.UnsupportedSyntaxError, match="case` pattern") as raised:
        tg.grad(_class_pattern)(X3)
    assert "isinstance" in str(raised.value)


def columns_of_rows_made_in_a_loop(a, b):
    """`zip(*pairs)` of a list whose length is known only when the code runs (a comprehension over
    range(len(a))): the columns, as tuples; `map(list, zip(*pairs))` too."""
    pairs = [(a[i], b[i] ** 2) for i in range(len(a))]
    xs, ys = zip(*pairs)
    firsts, seconds = map(list, zip(*pairs))
    return sum(x * y for x, y in zip(xs, ys)) + np.sum(np.array(firsts) * np.sin(seconds))


def test_zip_of_rows_counted_when_the_code_runs_matches_finite_differences():
    check_modes(columns_of_rows_made_in_a_loop, X3, np.array([1.3, 0.2, -0.4]))


def _zip_read_twice(a):
    pairs = [(a[i], a[i] * 2) for i in range(len(a))]
    columns = zip(*pairs)
    first = list(columns)
    return np.sum(np.array(first)) + len(list(columns))


def test_a_zip_of_rows_read_twice_is_refused():
    with pytest.raises(tg.TapegenError, match="read again"):
        tg.grad(_zip_read_twice)(X3)

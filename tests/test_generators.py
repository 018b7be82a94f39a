"""Generators, map and zip objects as Python has them: read once, lazily.

tapegen reads a generator expression (or `map(...)`, `zip(...)` outside a `for` header) as the list of
its items. That is Python's value only for the generator's one reader: a second reader finds Python's
generator empty, so a second read is refused; `next(g)` reads one item and leaves the rest to be read.
`any`, `all` and `next` over a generator stop at the first item that decides them, as Python's do, so the
items after it are never computed (they may change a list, or raise).
"""
import numpy as np
import pytest

import tapegen as tg
from modes import check_modes

X = np.array([0.3, -0.7, 1.1])


def summed_twice(x):
    g = (v * 2 for v in x)
    return sum(g) + sum(g)  # Python: the second sum is 0


def listed_then_summed(x):
    g = (v * 2 for v in x)
    items = list(g)
    return np.sum(np.array(items) ** 2) + sum(g)


def looped_over_twice(x):
    g = (v * 2 for v in x)
    s = 0.0
    for v in g:
        s = s + v
    for v in g:
        s = s + v * 100
    return s


def passed_on_then_read_twice(x):
    return _sum_twice(v ** 2 for v in x)


def _sum_twice(items):
    return sum(items) + sum(items)


def read_in_a_loop(x):
    g = (v * 2 for v in x)
    s = 0.0
    for k in range(3):
        s = s + sum(g)
    return s


def made_in_a_loop_read_twice(x):
    s = 0.0
    for k in range(2):
        g = (v * k for v in x)
        s = s + sum(g) + sum(g)
    return s


def map_read_twice(x):
    m = map(np.sin, x)
    return sum(m) + sum(m)


def zip_read_twice(x):
    z = zip(x, [1.0, 2.0, 3.0])
    a = sum(p * q for p, q in z)
    return a + sum(p for p, q in z)


def read_in_a_branch_then_after_it(x):
    g = (v * 2 for v in x)
    s = sum(g) if x[0] > 0 else 1.0
    return s + sum(g)


def next_then_sum(x):
    g = (v * 2.0 for v in x)
    first = next(g)
    return first * 10 + sum(g)


def _doubled(x):
    for v in x:
        yield v * 2


def generator_function_read_twice(x):
    g = _doubled(x)
    return sum(g) + sum(g)


@pytest.mark.parametrize("f", [summed_twice, listed_then_summed, looped_over_twice, passed_on_then_read_twice,
                               read_in_a_loop, made_in_a_loop_read_twice, map_read_twice, zip_read_twice,
                               generator_function_read_twice, read_in_a_branch_then_after_it],
                         ids=lambda f: f.__name__)
def test_a_generator_read_a_second_time_is_refused(f):
    with pytest.raises(tg.UnsupportedSyntaxError, match="generator .* read (again|in a loop)"):
        tg.grad(f)(X)


def reads_a_name_rebound_before_it_is_read(x):
    k = 2.0
    g = (v * k for v in x)
    k = 5.0  # Python's generator multiplies by 5
    return sum(g)


def reads_a_list_appended_to_before_it_is_read(x):
    xs = [x[0], x[1]]
    g = (v * 2 for v in xs)
    xs.append(x[2])  # Python's generator sees three items
    return sum(g)


def reads_an_array_written_before_it_is_read(x):
    a = x * 1.0
    g = (v * 2 for v in a)
    a[0] = 10.0
    return sum(g)


def items_logged_read_by_a_loop(x):
    log = []

    def logged(v):
        log.append(v)
        return v
    s = 0.0
    for v in (logged(u) for u in x):
        s = s + v * len(log)  # Python: 1, 2, 3 items logged by then
    return s


def items_logged_read_by_zip(x):
    log = []
    s = 0.0
    for a, b in zip([1.0, 2.0], (log.append(v) or v for v in x)):  # Python's zip stops after two items
        s = s + a * b
    return s + sum(log)


def items_logged_by_map_read_by_a_loop(x):
    log = []
    total = 0.0
    for v in map(lambda u: log.append(u) or u, x):  # Python's map calls the lambda as the loop asks for an item
        total = total + v * len(log)
    return total


def _logging_as_it_yields(xs, log):
    for v in xs:
        log.append(v)
        yield v


def items_logged_by_a_generator_function_read_by_a_loop(x):
    log = []
    total = 0.0
    for v in _logging_as_it_yields(x, log):
        total = total + v * len(log)
    return total


@pytest.mark.parametrize("f", [reads_a_name_rebound_before_it_is_read, reads_a_list_appended_to_before_it_is_read,
                               items_logged_by_map_read_by_a_loop, items_logged_by_a_generator_function_read_by_a_loop,
                               reads_an_array_written_before_it_is_read, items_logged_read_by_a_loop,
                               items_logged_read_by_zip], ids=lambda f: f.__name__)
def test_a_generator_whose_items_depend_on_when_it_is_read_is_refused(f):
    with pytest.raises(tg.UnsupportedSyntaxError, match="generator"):
        tg.grad(f)(X)


def items_logged_read_whole(x):
    log = []
    g = (log.append(v) or v * 2 for v in x)
    total = sum(g)
    return total * len(log) + sum(log)


def generator_function_summed(x):
    return sum(_doubled(x)) * x[0]


def read_in_one_branch_or_the_other(x):
    g = (v * 2 for v in x)
    if x[0] > 0:
        s = sum(g)
    else:
        s = max(g)
    return s


def _squared(v):
    return v ** 2


def items_of_a_helper_changing_nothing_read_by_a_loop(x):
    s = 0.0
    for v in (_squared(u) for u in x):
        s = s * 0.5 + v
    return s


def made_in_a_loop_read_once(x):
    s = 0.0
    for k in range(2):
        g = (v * k for v in x)
        s = s + sum(g)
    return s


def renamed_then_read(x):
    g = (v * 2 for v in x)
    h = g
    return sum(h)


def listed_once(x):
    g = (np.sin(v) for v in x)
    return np.sum(np.array(list(g)) ** 2)


def any_with_a_side_effect(x):
    seen = []

    def positive(v):
        seen.append(v)
        return v > 0
    found = any(positive(v) for v in x)
    return sum(seen) * len(seen) * (2.0 if found else 3.0)  # Python stops at the first positive item


def all_with_a_side_effect(x):
    seen = []
    ok = all(seen.append(v) is None and v < 0.5 for v in x)
    return sum(seen) * (2.0 if ok else 3.0)


def any_over_keys_some_missing(x):
    d = {0: x[0], 1: x[2]}
    if any(d[k] > 0 for k in [0, 1, 2]):  # d[2] is never read: d[1] > 0
        return d[0] * 2
    return d[1]


def first_positive(x):
    return next(v for v in x if v > 0) * 3.0


def first_large_or_default(x):
    return next((v for v in x if v > 5), x[0] * 2) * 3.0


def first_pair(x):
    return next(a * b for a in x for b in x if a * b < 0)


@pytest.mark.parametrize("f", [made_in_a_loop_read_once, renamed_then_read, listed_once, items_logged_read_whole,
                               generator_function_summed, items_of_a_helper_changing_nothing_read_by_a_loop,
                               read_in_one_branch_or_the_other,
                               any_with_a_side_effect,
                               all_with_a_side_effect, any_over_keys_some_missing, first_positive,
                               first_large_or_default, first_pair], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, np.array([-0.3, -0.7, 1.1])], ids=["first_positive", "first_negative"])
def test_generators_read_once_and_short_circuits_match_finite_differences(f, x):
    check_modes(f, x.copy())


def first_item_then_the_rest(x):
    """`first = next(g)` then the rest (`list(g)`, a `for`, another `next`): the items after those read."""
    g = (v * (i + 1) for i, v in enumerate(x))
    first = next(g)
    second = next(g, 0.0)
    rest = list(g)
    rows = iter(np.outer(x, x))  # iter(): read item by item too
    top = next(rows)
    total = 0.0
    for row in rows:
        total = total + np.sum(row * top)
    return first * 3.0 + second ** 2 + sum(rest) + total + next(iter([x[0] * 4.0, x[1]])) * x[2]


def next_where_the_generator_is_made(x):
    """In a loop pass or a branch that makes the generator, `next` reads it there."""
    total = 0.0
    for k in range(2):
        g = (v * (k + 1) for v in x)
        total = total + next(g) * next(g)
    if x[0] > 0:
        h = map(np.sin, x)
        total = total + next(h) + sum(h)
    return total


def next_in_a_loop_over_one_made_before(x):
    it = iter(x)
    total = 0.0
    for _ in range(2):
        total = total + next(it)
    return total


@pytest.mark.parametrize("f", [next_then_sum, first_item_then_the_rest, next_where_the_generator_is_made],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, np.array([-0.3, -0.7, 1.1])], ids=["first_positive", "first_negative"])
def test_next_then_the_rest_of_a_generator_matches_finite_differences(f, x):
    check_modes(f, x.copy())


def test_next_in_a_loop_over_a_generator_made_before_it_is_refused():
    with pytest.raises(tg.UnsupportedSyntaxError, match=r"`next\(it\)` in a loop `it` was made outside of"):
        tg.grad(next_in_a_loop_over_one_made_before)(X)


def no_match(x):
    return next(v for v in x if v > 5)


def test_next_of_an_empty_generator_raises_stop_iteration():
    with pytest.raises(StopIteration):
        tg.grad(no_match)(X)


def length_of_a_generator(x):
    g = (v for v in x)
    return x[0] * len(g)


def item_of_a_generator(x):
    g = (v * 2 for v in x)
    return g[0]


def generator_reversed(x):
    return sum(v * i for i, v in enumerate(reversed(v ** 2 for v in x)))


def length_of_a_zip(x):
    z = zip(x, x)
    return x[0] * len(z)


def numpy_sum_of_a_generator(x):
    return np.sum(v ** 2 for v in x)


def numpy_stack_of_a_named_generator(x):
    rows = (v * x for v in x)
    return np.sum(np.stack(rows))


@pytest.mark.parametrize("f", [length_of_a_generator, item_of_a_generator, generator_reversed, length_of_a_zip,
                               numpy_sum_of_a_generator, numpy_stack_of_a_named_generator],
                         ids=lambda f: f.__name__)
def test_what_python_refuses_of_a_generator_is_refused(f):
    """Python raises TypeError; tapegen read the generator as a list and gave a gradient."""
    with pytest.raises(TypeError):
        f(X)
    with pytest.raises(tg.UnsupportedSyntaxError, match="Python raises TypeError"):
        tg.grad(f)(X)


def read_by_fromiter(x):
    return np.sum(np.fromiter((v ** 2 for v in x), float) * np.array([1.0, 2.0, 3.0]))


def test_a_generator_read_by_fromiter_matches_finite_differences():
    check_modes(read_by_fromiter, X.copy())

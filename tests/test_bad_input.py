"""Issue 10's bad-input corpus: the right gradient, or a TapegenError with file, line and caret."""
import numpy as np
import pytest

import tapegen as tg
from cases import bad_input as B
from conftest import numeric_vjp

X = np.array([0.5, 1.5, 2.0])

REFUSED = [
    ("coroutine", B.coroutine, tg.UnsupportedSyntaxError, "async"),
    ("generator", B.generator, tg.UnsupportedSyntaxError, "yield"),
    ("unknown-callable", B.unknown_callable, tg.NoRuleError, "no gradient rule"),
    ("nonlocal-write", B.writes_nonlocal(), tg.UnsupportedSyntaxError, "nonlocal"),
]


@pytest.mark.parametrize("name, fn, error, text", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_with_file_line_and_caret(name, fn, error, text):
    with pytest.raises(error) as info:
        tg.grad(fn)(X)
    message = str(info.value)
    assert text in message.splitlines()[0]
    assert message.startswith("bad_input.py:")
    assert "^" in message.splitlines()[2]
    assert isinstance(info.value, tg.TapegenError)


@pytest.mark.parametrize("fn", [B.star_call, B.mutates_input, B.uses_with, B.star_args],
                         ids=["star-call", "argument-written-in-place", "with-errstate", "star-args"])
def test_constructs_once_refused_now_differentiate(fn):
    """f(*parts), `x *= 2.0` on an argument (into a copy), `with np.errstate(...)`, `def f(x, *rest)`."""
    x = np.abs(X) + 0.5
    np.testing.assert_allclose(tg.grad(fn)(x.copy()), numeric_vjp(fn, (x,), 0, 1.0), rtol=1e-6, atol=1e-8)


def test_recursion_through_an_object_is_refused():
    with pytest.raises(tg.NoRuleError, match="apply\\(\\) calls itself .* is passed an object.* rewrite the "
                                             "recursion as a loop"):
        tg.grad(B.recursive_method)(X, 2)


def test_recursion_that_may_read_what_the_function_set_on_an_object_is_refused():
    with pytest.raises(tg.UnsupportedSyntaxError, match="_deep\\(\\) calls itself deeper than tapegen unrolls .* "
                                                         "has set `_BOX.scale`"):
        tg.grad(B.recursion_reading_what_the_function_set)(X, X, 12)


def test_function_without_source_is_refused():
    with pytest.raises(tg.SourceNotFoundError, match="made"):
        tg.grad(B.defined_by_exec())(1.0)


def test_names_that_look_generated_still_differentiate():
    g = tg.grad(B.names_like_generated)(X)
    np.testing.assert_allclose(g, numeric_vjp(B.names_like_generated, (X,), 0, 1.0), rtol=1e-6)
    text = tg.source(B.names_like_generated)
    assert "tape_ = " in text and "residuals_ = " in text


def test_a_local_named_np_does_not_shadow_numpy_in_generated_code():
    assert tg.grad(B.local_named_np)(2.0) == pytest.approx(3.0)


@pytest.mark.parametrize("wrt", [True, False, 1.5, None, "nope", 7, (0, 0), ()], ids=str)
def test_bad_wrt_values(wrt):
    with pytest.raises(tg.WrtError):
        tg.grad(B.names_like_generated, wrt=wrt)(X)


@pytest.mark.parametrize("value", [3, True, np.arange(3), np.array([True, False])],
                         ids=["int", "bool", "int-array", "bool-array"])
def test_integer_or_boolean_argument(value):
    with pytest.raises(tg.WrtError, match="integer or boolean"):
        tg.grad(lambda x: np.sum(x * 2.0))(value)


def test_wrong_cotangent_shape():
    out, pullback = tg.vjp(lambda x: np.sin(x), X)
    with pytest.raises(tg.TapegenError, match="cotangent has shape"):
        pullback(np.ones((2, 2)))


def test_non_scalar_grad():
    with pytest.raises(tg.NonScalarOutputError):
        tg.grad(lambda x: np.sin(x))(X)


def _first_set(x):
    x[0] = 2.0
    return np.sum(x ** 2)


def _added_to(x):
    x += 1.0
    return np.sum(x ** 2)


def _set_by_a_helper(x):
    _set_second(x)
    return np.sum(x ** 2)


def _set_second(a):
    a[1] = 3.0


@pytest.mark.parametrize("f", [_first_set, _added_to, _set_by_a_helper], ids=lambda f: f.__name__)
def test_a_read_only_argument_written_into_raises_as_numpy_does(f):
    """tapegen's code writes into a copy of an argument; the function as written raises on a read-only array,
    and so does tapegen's (it gave a number)."""
    x = np.array([0.3, -0.2, 0.5])
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        f(x)
    with pytest.raises(ValueError, match="read-only"):
        tg.grad(f)(x)
    writable = np.array([0.3, -0.2, 0.5])
    tg.grad(f)(writable)
    np.testing.assert_array_equal(writable, [0.3, -0.2, 0.5])  # (the caller's array is left as it was)

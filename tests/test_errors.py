"""Bad input gives a TapegenError subclass naming file, line, source text and a caret, at transform time."""
import re

import numpy as np
import pytest

import tapegen as tg
from cases import bad_functions as bad
from cases import python_functions as pf


def error_text(fn, exc_type, *args, wrt=0):
    with pytest.raises(exc_type) as info:
        tg.grad(fn, wrt=wrt)(*args)
    return str(info.value)


def test_no_rule_error_points_at_the_call():
    text = error_text(bad.uses_cumprod_on_unknown, tg.NoRuleError, np.ones(3))
    lines = text.splitlines()
    assert lines[0].startswith("bad_functions.py:6:9: no gradient rule for np.frompyfunc(abs, 1, 1)()")
    assert lines[1] == "    c = np.frompyfunc(abs, 1, 1)(x)"
    assert lines[2] == "        " + "^" * len("np.frompyfunc(abs, 1, 1)(x)")
    assert lines[3].startswith("hint: register one with tapegen.register_vjp")


def test_caret_counts_characters_not_bytes():
    lines = error_text(bad.non_ascii, tg.NoRuleError, np.ones(3)).splitlines()
    assert lines[0].startswith("bad_functions.py:19:9:")
    assert lines[1] == "    π = np.frompyfunc(abs, 1, 1)(x)  # ünïcode before the call"
    assert lines[2] == "        " + "^" * len("np.frompyfunc(abs, 1, 1)(x)")


@pytest.mark.parametrize("fn, line, message", [
    (bad.uses_try, 14, "a `finally` block of a `try` that returns, breaks or continues is not supported"),
    (bad.generator, 24, "`yield` is not supported"),
    (bad.calls_with_out, 33, "argument `out` of np.sum() is not supported"),
    (bad.defines_a_class, 42, "a class definition is not supported"),
    (bad.unknown_name, 48, "name `undefined_thing` is not defined"),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_unsupported_syntax(fn, line, message):
    text = error_text(fn, tg.UnsupportedSyntaxError, np.ones(3))
    assert text.startswith(f"bad_functions.py:{line}:")
    assert message in text.splitlines()[0]
    assert "^" in text.splitlines()[2] and text.splitlines()[-1].startswith("hint:")


def test_augmented_assignment_on_a_fresh_array_is_fine():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(tg.grad(bad.fine_after_fresh_aug)(x), 4 * x + 1)


def test_errors_are_raised_at_transform_time_by_source():
    with pytest.raises(tg.UnsupportedSyntaxError):
        tg.source(bad.uses_try)


@pytest.mark.parametrize("wrt, message", [
    ("nope", "wrt names 'nope', which is not an argument"),
    (5, "wrt=5 is out of range"),
    (True, "not True"),
    ((0, 0), "twice"),
], ids=["unknown-name", "out-of-range", "bool", "duplicate"])
def test_bad_wrt(wrt, message):
    with pytest.raises(tg.WrtError, match=message):
        tg.grad(bad.fine_after_fresh_aug, wrt=wrt)(np.ones(2))


@pytest.mark.parametrize("arg", [3, np.arange(3), True], ids=["int", "int-array", "bool"])
def test_integer_argument_is_a_wrt_error(arg):
    with pytest.raises(tg.WrtError, match="integer or boolean"):
        tg.grad(lambda x: np.sum(x * 2.0))(arg)


def test_function_without_source():
    namespace = {}
    exec("def made_by_exec(x):\n    return x * 2\n", namespace)
    with pytest.raises(tg.SourceNotFoundError, match="made_by_exec"):
        tg.grad(namespace["made_by_exec"])(1.0)


def test_not_a_function():
    """A ufunc, a NumPy function or a builtin is differentiated through its rule (tg.grad(np.sum): tests/test_api.py);
    one without a rule is named; objects tapegen cannot read are refused."""
    with pytest.raises(tg.NoRuleError, match="hash"):
        tg.grad(hash)(np.ones(2))
    with pytest.raises(tg.TapegenError, match="Python functions"):
        tg.grad(np.random.default_rng(0))(np.ones(2))


def test_every_error_is_a_tapegen_error():
    for cls in (tg.UnsupportedSyntaxError, tg.NoRuleError, tg.NonScalarOutputError, tg.GradcheckError,
                tg.SourceNotFoundError, tg.WrtError, tg.NotRealOutputError):
        assert issubclass(cls, tg.TapegenError)


def test_in_place_update_of_a_view_of_the_argument_changes_the_argument_too():
    """(refused until the argument was copied first where a view of it is written into: NumPy's `y += 1`
    changes `x` too, which the function reads after)"""
    from modes import check_modes

    def f(x):
        y = np.flip(x)
        y += 1.0
        return np.sum(y * x)
    check_modes(f, np.arange(3.0))


def test_assignment_into_an_argument_writes_into_a_copy():
    """The gradient of the function as written, at the argument's value on entry; the caller's array stays."""
    def f(x):
        x[0] = 0.0
        x += 1.0
        return np.sum(x * x)
    x = np.arange(1.0, 4.0)
    np.testing.assert_allclose(tg.grad(f)(x), [0.0, 6.0, 8.0])
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


def _shuffled(x):
    a = x * 2.0
    np.random.default_rng(0).shuffle(a)
    return a[0] * 3.0 + a[1]


def _module_shuffled(x):
    a = x * 2.0
    np.random.shuffle(a)
    return a[0] * 3.0 + a[1]


def _filled(x):
    a = np.outer(x, x)
    np.ndarray.fill(a, 2.0)
    return np.sum(a * x)


def _permuted_into(x):
    a = x * 2.0
    np.random.default_rng(0).permuted(a, out=a)
    return a[0] * 3.0 + a[1]


@pytest.mark.parametrize("f, message", [
    (_shuffled, r"shuffle\(\) changes `a` in place"),
    (_module_shuffled, r"np.random.shuffle\(\) changes `a` in place"),
    (_filled, r"np.ndarray.fill\(\) changes `a` in place"),
    (_permuted_into, r"permuted\(\) changes `a` in place"),
])
def test_a_library_call_changing_a_differentiated_array_in_place_is_refused(f, message):
    """Run as written, these change the array without tapegen seeing how: its gradient would be the
    unchanged array's (shuffled: [6, 2, 0] at every draw), a silent wrong number."""
    for transform in (tg.grad(f), lambda x: tg.jvp(f, (x,), (x,))):
        with pytest.raises(tg.NoRuleError, match=message):
            transform(np.array([0.3, -0.7, 1.2]))


def _doubled_through_asarray(x):
    a = np.asarray(x)
    a *= 2
    return np.sum(x ** 2)


def test_changing_an_argument_in_place_through_np_asarray_changes_it_where_read_again():
    """np.asarray(x) of an array is x: `a *= 2` doubles x too (refused until the argument was copied first where
    a view of it is written into, the write put back into the copy)."""
    from modes import check_modes
    check_modes(_doubled_through_asarray, np.array([0.3, -0.7, 1.2]))


def test_changing_a_number_argument_in_place_through_np_asarray_is_refused_when_it_runs():
    """np.asarray(s) of a number is a new array: NumPy's `a *= 2` leaves `s` as it was."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="an array made from a number"):
        tg.grad(_doubled_through_asarray)(0.7)


def test_a_local_function_changing_a_list_of_its_home_elsewhere_is_refused():
    def apply(fn, v):
        fn(v)

    def f(x):
        total = [0.0]

        def add(v):
            total[0] = total[0] + np.sum(v)
        apply(add, x)
        return total[0] ** 2
    with pytest.raises(tg.UnsupportedSyntaxError, match="changes `total` of the function it was written in"):
        tg.grad(f)(np.array([0.3, -0.7, 1.2]))


@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.max(x, 1, np.empty(2)) * x[0]),       # np.max(a, axis, out)
    lambda x: np.sum(np.mean(x, 0, None, np.empty(2)) * x),   # np.mean(a, axis, dtype, out)
    lambda x: np.sum(np.linspace(x[0, 0], x[1, 1], 5, True, True)[0]),  # np.linspace(..., retstep)
], ids=["max-out", "mean-out", "linspace-retstep"])
def test_a_positional_argument_numpy_binds_to_another_parameter_is_refused(f):
    """Where NumPy's next positional parameter is one tapegen does not take (`out`, `retstep`), an argument
    there is refused, not bound to the parameter tapegen declares next (`keepdims`, `dtype`)."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="positional arguments"):
        tg.grad(f)(np.array([[0.3, -0.7], [1.2, 0.5]]))


def test_setting_the_shape_of_an_array_another_name_holds_is_refused():
    def f(x):
        a = x * 2.0
        b = a
        a.shape = (3, 1)
        return np.sum(b @ b.T)
    with pytest.raises(tg.UnsupportedSyntaxError, match="reshapes the array another name holds"):
        tg.grad(f)(np.array([0.3, -0.7, 1.2]))


def test_shuffling_data_without_a_derivative_still_runs():
    def f(w, x):
        order = np.arange(len(x))
        np.random.default_rng(1).shuffle(order)
        batch = x[order[:2]]
        return np.sum(np.tanh(batch @ w))
    w, x = np.array([0.5, -0.2]), np.arange(8.0).reshape(4, 2) / 4
    tg.gradcheck(f, w, x)


def _grow_functions_in_a_loop(x):
    fs = [np.sin]
    out = 0.0
    for i in range(3):
        fs.append(np.cos)
        out = out + np.sum(fs[-1](x))
    return out


def _set_a_function_in_a_loop(x):
    acts = {"relu": lambda v: np.maximum(v, 0.0)}
    out = 0.0
    for i in range(3):
        acts["relu"] = lambda v: v * i
        out = out + np.sum(acts["relu"](x))
    return out


@pytest.mark.timeout(60)
@pytest.mark.parametrize("f", [_grow_functions_in_a_loop, _set_a_function_in_a_loop])
def test_a_list_or_dict_of_functions_changed_in_each_pass_of_a_loop_is_refused(f):
    """Each pass leaves the list (dict) of functions another one: refused where it is read (this lowered the
    function again and again, forever)."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="is read before this pass of the loop"):
        tg.grad(f)(np.array([0.3, -0.7, 1.2]))


class _Scaled:
    def __init__(self, a):
        self.a = a

    def __add__(self, other):
        if np.sum(self.a) > 0:  # (decided as the code runs)
            return NotImplemented
        return _Scaled(self.a + other.a)

    def __rmul__(self, k):
        return _Scaled(self.a * k)


def test_an_operator_method_that_may_return_not_implemented_when_it_runs_is_refused():
    def f(x):
        return np.sum((_Scaled(x) + _Scaled(x * 2)).a)
    with pytest.raises(tg.UnsupportedSyntaxError, match="may return NotImplemented"):
        tg.grad(f)(np.array([0.3, -0.7, 1.2]))


def test_a_reflected_operator_after_an_array_is_refused():
    """`x * obj` with `x` an array: NumPy's operator runs first, item by item on the object."""
    def f(x, y):
        return np.sum((y * _Scaled(x)).a)
    with pytest.raises(tg.UnsupportedSyntaxError, match="NumPy's operator on the left operand"):
        tg.grad(f)(np.array([0.3, -0.7, 1.2]), 2.0)


def test_a_row_written_through_an_index_that_is_not_an_integer_is_refused_when_it_runs():
    """`P[s][0] = v` is `P[s, 0] = v` for an integer `s` only; with a slice, NumPy writes row 0 of `P[s]`."""
    def f(P, s):
        P = P.copy()
        P[s][0] = 1.0
        return np.sum(P * P)
    P = np.array([[0.5, 0.2], [0.1, 0.7]])
    np.testing.assert_allclose(tg.grad(f)(P, 1), [[1.0, 0.4], [0.0, 1.4]])
    with pytest.raises(tg.UnsupportedSyntaxError, match="the first index is a slice"):
        tg.grad(f)(P, slice(0, 2))


def sparse_poisson(kappa):
    import scipy.sparse as sp  # a local import, as in scipy-lectures' examples
    n = kappa.size
    A = sp.diags([-np.ones(n - 1), 2 + kappa, -np.ones(n - 1)], [-1, 0, 1], format="csc")
    return np.sum(A @ np.ones(n))


def cubic_interpolation(y):
    from scipy.interpolate import interp1d
    f = interp1d(np.linspace(0, 1, 6), y, kind="cubic")
    return float(np.sum(f(np.array([0.2, 0.45]))))


def blurred_energy(x):
    from scipy import ndimage
    return np.sum(ndimage.gaussian_filter(x, sigma=1.0) ** 2)


def masked_energy(x):
    m = np.ma.masked_less(x, 0.0)
    return float(np.ma.sum(m ** 2))


@pytest.mark.parametrize("f, called, fix", [
    (sparse_poisson, "sp.diags()", "np.diag"), (cubic_interpolation, "interp1d()", "np.interp"),
    (blurred_energy, "ndimage.gaussian_filter()", "scipy.signal.convolve"),
    (masked_energy, "np.ma.masked_less()", "np.where(mask")],
    ids=["scipy.sparse", "scipy.interpolate", "scipy.ndimage", "np.ma"])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_library_without_rules_by_design_is_named_as_written_with_the_fix(f, called, fix, mode):
    if f is not masked_energy:
        pytest.importorskip("scipy")
    x = np.linspace(1.0, 2.0, 6)
    with pytest.raises(tg.NoRuleError) as info:
        tg.grad(f)(x) if mode == "grad" else tg.jvp(f, (x,), (np.ones(6),))
    assert f"rule for {called}:" in str(info.value) and fix in info.value.hint, str(info.value)


def exponential_model(x, a, b, c):
    return a * np.exp(-b * x) + c


def exponential_model_with_offset(x, a, b, c=0.0):
    return a * np.exp(-b * x) + c


def sorted_parameter_residuals(p):  # the model called with *popt of a vector computed here: as many as its
    x = np.linspace(0.0, 1.0, 5)  # parameters without defaults take, or one fewer (c's default)
    return np.sum((exponential_model_with_offset(x, *np.sort(p)) - 1.0) ** 2)


def test_spreading_a_computed_array_into_arguments_names_unpacking_as_the_fix():
    """(`*np.exp(p)`, an elementwise function of an argument the code is made for the length of, is spread.)"""
    with pytest.raises(tg.UnsupportedSyntaxError) as info:
        tg.grad(sorted_parameter_residuals)(np.array([1.0, 0.5, 0.2]))
    assert "`*np.sort(p)`" in str(info.value) and "a, b, c = np.sort(p)" in info.value.hint, str(info.value)


def test_a_numpy_polynomial_fit_with_full_output_is_refused_with_a_hint():
    from numpy.polynomial import chebyshev

    def f(y):
        coef, (resid, rank, sv, rcond) = chebyshev.chebfit(np.linspace(-1, 1, 5), y, 2, full=True)
        return np.sum(coef ** 2)
    with pytest.raises(tg.NoRuleError, match="compute the residuals from the coefficients"):
        tg.grad(f)(np.arange(5.0))


def log_parameter_residuals_of_a_model_without_defaults(p):
    x = np.linspace(0.0, 1.0, 5)
    return np.sum((exponential_model(x, *np.exp(p)) - 1.0) ** 2)


def test_spreading_a_computed_array_into_parameters_without_defaults_takes_that_many():
    from modes import check_modes
    check_modes(log_parameter_residuals_of_a_model_without_defaults, np.array([0.1, -0.5, 0.2]))


@pytest.mark.parametrize("mode", ["grad", "jvp", "vjp"])
def test_a_refusal_made_when_the_code_runs_names_the_file_line_and_source(mode):
    """Checks only the values can make (`prev` holding `vel`'s array in the next pass) raise in the generated
    code; the error still points at the user's line, as the transform's errors do."""
    x = np.array([0.3, -0.7, 1.1])
    with pytest.raises(tg.UnsupportedSyntaxError) as caught:
        if mode == "grad":
            tg.grad(pf.array_named_twice_at_the_end_of_a_pass_then_written_into)(x)
        elif mode == "jvp":
            tg.jvp(pf.array_named_twice_at_the_end_of_a_pass_then_written_into, (x,), (np.ones(3),))
        else:
            tg.vjp(pf.array_named_twice_at_the_end_of_a_pass_then_written_into, x)
    line = pf.array_named_twice_at_the_end_of_a_pass_then_written_into.__code__.co_firstlineno + 5
    assert caught.value.span is not None and caught.value.span.line == line
    assert str(caught.value).startswith(f"python_functions.py:{line}:")
    assert "vel[1] = vel[1] * x[1]" in str(caught.value) and "hint:" in str(caught.value)


class _Net:
    def __init__(self, W):
        self.W = W


def _stepped_through_a_list_the_object_shares(W):
    net = _Net(W * 1.0)
    params = [net.W]
    for p in params:
        p -= 0.1 * W
    return np.sum(net.W)


def test_a_refusal_made_when_the_code_runs_that_names_its_place_is_not_placed_twice():
    with pytest.raises(tg.UnsupportedSyntaxError) as caught:
        tg.grad(_stepped_through_a_list_the_object_shares)(np.array([0.5, -0.7]))
    first = str(caught.value).splitlines()[0]
    assert re.match(r"test_errors\.py:\d+:\d+: ", first) and not re.match(r"\S+:\d+:\d+: \S+:\d+:\d+: ", first), first

"""`try` / `except` inside differentiated functions (frontend/normalize.py, lower_flow.py's stmt_Protected).

Each statement of a `try` block that may raise runs in a `try:` of its own in generated code; which ran
is on the tape, so the backward pass replays exactly the statements that finished, then the handler's.
Every case is checked on both paths (the body raising and not) against central differences.
"""
import warnings

import numpy as np
import pytest

import tapegen as tg
from modes import check_modes


def _spd(n, smallest=0.5, seed=0):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    w = np.linspace(smallest, 2.0, n)
    return (q * w) @ q.T


K_GOOD = _spd(3)
K_BAD = _spd(3, smallest=-0.05)  # not positive definite; K + 0.1 I is
Y = np.array([0.3, -1.2, 0.7])


def jittered_solve(K, y):
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        L = np.linalg.cholesky(K + 0.1 * np.eye(K.shape[0]))
    a = np.linalg.solve(L, y)
    return np.sum(a ** 2)


def jitter_loop(K, y):
    jitter = 1e-3
    for _ in range(6):
        try:
            L = np.linalg.cholesky(K + jitter * np.eye(len(y)))
            break
        except np.linalg.LinAlgError:
            jitter *= 10
    return np.sum(np.linalg.solve(L, y) ** 2) + jitter


def two_statements(K, y):
    try:
        S = K * 2.0 + np.outer(y, y)   # finishes on both paths: its backward runs on both
        L = np.linalg.cholesky(K)
        out = np.sum(L) * np.sum(S)
    except np.linalg.LinAlgError:
        out = np.sum(S ** 2)
    return out


def returns_from_try(K, y):
    try:
        return np.sum(np.linalg.cholesky(K) @ y)
    except np.linalg.LinAlgError as error:
        assert "positive definite" in str(error)
        return np.sum(K @ y)


def with_else_and_finally(K, y):
    total = np.sum(y)
    try:
        L = np.linalg.cholesky(K)
    except (ValueError, np.linalg.LinAlgError):
        total = total * np.sum(K)
    else:
        total = total + np.sum(L * L)
    finally:
        total = total * 2.0
    return total


def several_handlers(K, y):
    try:
        v = np.linalg.cholesky(K)[0, 0] * y
        if np.sum(v) > 100.0:
            raise ValueError("large")
    except ValueError:
        v = y * 3.0
    except np.linalg.LinAlgError:
        v = y * np.sum(K)
    return np.sum(v ** 2)


def _safe_log_det(K):
    try:
        L = np.linalg.cholesky(K)
        return 2.0 * np.sum(np.log(np.diag(L)))
    except np.linalg.LinAlgError:
        sign, logdet = np.linalg.slogdet(K + 0.1 * np.eye(K.shape[0]))
        return logdet


def calls_a_helper_with_try(K, y):
    return _safe_log_det(K) * np.sum(y ** 2)


def branch_inside_try(K, y):
    try:
        if np.sum(y) > 0:
            z = np.linalg.cholesky(K) @ y
        else:
            z = np.linalg.solve(K, y)
        z = z * 2.0
    except np.linalg.LinAlgError:
        z = y * np.trace(K)
    return np.sum(z ** 2)


def suppressed(K, y):
    """`with contextlib.suppress(E):` is `try: ... except E: pass` (it was refused: tapegen could not see what the
    manager does on entry and exit), also named otherwise and with another manager after it."""
    import contextlib
    from contextlib import suppress as quietly
    total = np.sum(y * y)
    with contextlib.suppress(np.linalg.LinAlgError):
        L = np.linalg.cholesky(K)
        total = total + np.sum(L * np.outer(y, y))
    with quietly(ValueError, np.linalg.LinAlgError), np.errstate(divide="ignore"):
        total = total * np.sum(np.linalg.cholesky(K + 0.01 * np.eye(3)))
    with quietly():
        total = total + np.sum(K) * y[0]
    return total


@pytest.mark.parametrize("fn", [jittered_solve, jitter_loop, two_statements, returns_from_try,
                                with_else_and_finally, several_handlers, calls_a_helper_with_try, branch_inside_try,
                                suppressed])
@pytest.mark.parametrize("K", [K_GOOD, K_BAD], ids=["body-finishes", "body-raises"])
def test_both_paths_in_every_mode(fn, K):
    check_modes(fn, K, Y, rtol=1e-4, atol=1e-6)


def test_the_path_taken_is_the_one_python_takes():
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(K_BAD)
    assert tg.value_and_grad(two_statements)(K_BAD, Y)[0] == pytest.approx(two_statements(K_BAD, Y))
    assert tg.value_and_grad(several_handlers)(K_BAD, Y * 100)[0] == pytest.approx(several_handlers(K_BAD, Y * 100))


def loop_body_raises_midway(x):
    total = 0.0
    for k in range(4):
        try:
            step = np.sqrt(x[k])          # warns and gives nan for a negative entry: turned into an error
            total = total + step * x[k]
        except FloatingPointError:
            total = total - x[k] ** 2
    return total


def loop_inside_try(x):
    acc = 0.0
    try:
        for k in range(len(x)):
            acc = acc + np.sqrt(x[k]) * x[k]
    except FloatingPointError:
        acc = acc * 2.0 + x[0]
    return acc


@pytest.mark.parametrize("fn", [loop_body_raises_midway, loop_inside_try])
@pytest.mark.parametrize("x", [[1.5, 0.5, 2.0, 1.0], [1.5, 0.5, -2.0, 1.0]], ids=["finishes", "raises-midway"])
def test_errors_numpy_raises_under_errstate(fn, x):
    with np.errstate(invalid="raise"):
        check_modes(fn, np.array(x), order2=False)


def loop_whose_body_cannot_raise_in_a_try(x):
    """A `try` whose only statement is a loop with nothing in its body that may raise: the loop runs as it is
    (it read the name of the exception caught, never set: refused with 'name `caught` is not defined')."""
    out = x[3]
    try:
        for k in range(2):
            pass
    except ValueError:
        return x[0] * 2.0
    return out * x[1]


def test_a_loop_in_a_try_whose_body_cannot_raise():
    check_modes(loop_whose_body_cannot_raise_in_a_try, np.array([0.3, -0.7, 1.1, 0.45]))


def reraises(x):
    try:
        y = np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        raise
    return np.sum(y)


def raises_another(x):
    try:
        y = np.linalg.cholesky(x)
    except np.linalg.LinAlgError as error:
        raise ValueError(f"not positive definite: {error}") from error
    return np.sum(y)


def test_an_exception_the_handler_raises_reaches_the_caller():
    np.testing.assert_allclose(tg.grad(reraises)(K_GOOD), np.tril(np.ones((3, 3))) @ np.zeros(3) + tg.grad(reraises)(K_GOOD))
    with pytest.raises(np.linalg.LinAlgError):
        tg.grad(reraises)(K_BAD)
    with pytest.raises(ValueError, match="not positive definite") as raised:
        tg.grad(raises_another)(K_BAD)
    assert isinstance(raised.value.__cause__, np.linalg.LinAlgError)


def uncaught_kind(x):
    try:
        y = np.linalg.cholesky(x)
    except TypeError:
        y = x
    return np.sum(y)


def test_an_exception_no_handler_names_is_not_caught():
    with pytest.raises(np.linalg.LinAlgError):
        tg.grad(uncaught_kind)(K_BAD)


def changes_a_list_then_raises(x, out):
    try:
        out.append(np.sin(x))
        y = np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        y = x
    return np.sum(y) + np.sum(out[-1])


def _record(store, x):
    store[0] = x[0, 0] * 2.0
    return np.linalg.cholesky(x)


def changes_inside_a_call(x):
    store = np.zeros(3)
    try:
        y = _record(store, x)
    except np.linalg.LinAlgError:
        y = x
    return np.sum(y) + np.sum(store)


def test_a_change_before_the_statement_finishes_is_refused():
    with pytest.raises(tg.UnsupportedSyntaxError, match="changes `store"):
        tg.grad(changes_inside_a_call)(K_GOOD)


def test_a_change_that_is_the_statement_itself_is_fine():
    check_modes(lambda x: changes_a_list_then_raises(x, []), K_GOOD, order2=False)
    check_modes(lambda x: changes_a_list_then_raises(x, []), K_BAD, order2=False)


def test_generated_code_reads_as_try_except():
    text = tg.source(jittered_solve)
    assert "try:" in text and "except t" in text or "except np.linalg.LinAlgError" in text
    assert "caught = caught_exception(raised)" in text
    assert tg.source(jittered_solve) == text


def test_tapegens_own_errors_are_not_handled_as_the_users():
    from tapegen.rules.language import caught_exception
    with pytest.raises(tg.TapegenError):
        caught_exception(tg.TapegenError("a guard of generated code"))
    assert isinstance(caught_exception(ValueError("the user's")), ValueError)


def raises_under_errstate(x):
    with np.errstate(divide="raise"):
        r = np.sum(1.0 / x)
    return r


def handled_under_errstate(x):
    total = 0.0
    for k in range(len(x)):
        with np.errstate(divide="raise", invalid="raise"):
            try:
                total = total + np.log(x[k]) * x[k]
            except FloatingPointError:
                total = total + x[k] ** 2
    return total


def errstate_inside_try(x):
    try:
        with np.errstate(invalid="raise"):
            y = np.sqrt(x)
    except FloatingPointError:
        y = np.abs(x)
    return np.sum(y * x)


def quiet(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = np.log(x)
    with np.errstate(divide="ignore"):
        z = np.log(x)
    return np.sum(np.where(np.isfinite(y), y, 0.0) + np.where(np.isfinite(z), z, 0.0) * x)


def test_an_error_numpy_raises_under_errstate_is_raised_as_python_raises_it():
    with pytest.raises(FloatingPointError):
        tg.grad(raises_under_errstate)(np.array([0.0, 1.0]))
    np.testing.assert_allclose(tg.grad(raises_under_errstate)(np.array([2.0, 4.0])), [-0.25, -1 / 16])


@pytest.mark.parametrize("x", [[1.5, 0.5, 2.0], [0.5, -1.0, 2.0], [-0.5, 1.0, -2.0]])
def test_errstate_blocks_with_try(x):
    check_modes(handled_under_errstate, np.array(x), order2=False)
    check_modes(errstate_inside_try, np.array(x), order2=False)


def test_warning_settings_end_with_their_block():
    x = np.array([0.0, 1.0, 2.0])
    filters = list(warnings.filters)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value, gradient = tg.value_and_grad(quiet)(x)
        assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert warnings.filters == filters
    assert value == pytest.approx(quiet(x))
    text = tg.source(quiet)
    lines = [line.split("#")[0].strip() for line in text.splitlines()]
    assert lines.count("with warnings.catch_warnings():") == 2 and lines.count("with np.errstate(divide='ignore'):") == 2


def breaks_inside_with(x):
    total = 0.0
    for i in range(4):
        with np.errstate(all="ignore"):
            if x[i] < 0.0:
                continue
            if x[i] > 2.5:
                break
            total = total + np.log(x[i]) * x[i]
        total = total + x[i] ** 2
    return total


def safe_log_sum(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        if np.all(x > 0):
            return np.sum(np.log(x))  # (the rest ran too: a value twice this one)
        y = np.log(np.maximum(x, 1e-3))
    return np.sum(y) * 2.0


def returns_inside_with_in_a_loop(x):
    total = 0.0
    for i in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                if x[i] > 2.5:
                    return total + x[i] ** 3
                total = total + x[i] ** 2
    return total


@pytest.mark.parametrize("f, x", [(safe_log_sum, [1.0, 2.0]), (safe_log_sum, [-1.0, 2.0]),
                                  (breaks_inside_with, [1.0, -2.0, 3.0, 1.5]), (breaks_inside_with, [1.0, 2.0, -3.0, 1.5]),
                                  (returns_inside_with_in_a_loop, [1.0, 2.0, 3.0]),
                                  (returns_inside_with_in_a_loop, [1.0, 2.0, 1.5])])
def test_an_exit_inside_a_with_block(f, x):
    check_modes(f, np.array(x))


ACTIVATION = "sin"


def known_when_transforming(x):
    try:
        act = getattr(np, ACTIVATION)  # known now: nothing to protect when the code runs
    except AttributeError:
        act = np.tanh
    try:
        import scipy.special as special
        squash = special.expit
    except ImportError:
        squash = lambda z: 1.0 / (1.0 + np.exp(-z))  # noqa: E731
    return np.sum(act(x) * squash(x))


def import_failing_when_transforming(x):
    try:
        import a_module_that_is_not_installed as xp
        scale = 2.0
    except ValueError:
        scale = 0.5
    except ImportError as error:
        assert "a_module_that_is_not_installed" in str(error)
        import numpy as xp
        scale = 3.0
    return np.sum(xp.sin(x) * scale)


@pytest.mark.parametrize("fn", [known_when_transforming, import_failing_when_transforming])
def test_what_the_transform_decides_runs_as_python_runs_it(fn):
    x = np.array([0.3, -0.8, 1.2])
    check_modes(fn, x)
    assert "try:" not in tg.source(fn)


def unpacks_too_many(x):
    try:
        a, b = x * 2.0  # three items: ValueError, as Python raises it
    except ValueError:
        a, b = x[0], x[1] ** 2
    return a * b


def writes_past_the_end(x):
    out = np.zeros(2)
    try:
        for k in range(len(x)):
            out[k] = x[k] * 2.0  # IndexError at k = 2: out keeps what was written
    except IndexError:
        out = out * x[-1]
    return np.sum(out * x[:2])


@pytest.mark.parametrize("fn", [unpacks_too_many, writes_past_the_end])
@pytest.mark.parametrize("x", [[1.2, 1.3], [1.2, 1.3, 0.5]], ids=["finishes", "binding-raises"])
def test_binding_a_value_may_raise(fn, x):
    check_modes(fn, np.array(x))


def test_unpacking_the_wrong_number_of_items_raises_as_python_does():
    def pair_product(x):
        a, b = x
        return a * b
    with pytest.raises(ValueError, match="too many values to unpack"):
        tg.grad(pair_product)(np.ones(3))

    def three_of(x):
        first, *middle, last = x[:2]
        return first * last
    with pytest.raises(ValueError, match=r"not enough values to unpack \(expected at least 2"):
        tg.grad(three_of)(np.ones(1))
    with pytest.raises(tg.UnsupportedSyntaxError, match="always raises ValueError"):
        tg.grad(pair_of_three)(np.ones(2))


def pair_of_three(x):
    a, b = [x[0], x[1], x[0]]
    return a * b


def try_inside_try(K, y):
    try:
        try:
            L = np.linalg.cholesky(K)
        except np.linalg.LinAlgError:
            L = np.linalg.cholesky(K + 0.1 * np.eye(3))  # may raise too: the outer try handles it
        a = np.linalg.solve(L, y)
        if np.sum(a) > 100.0:
            raise ValueError("large")
    except np.linalg.LinAlgError:
        a = K @ y
    except ValueError:
        a = y * np.sum(K)
    return np.sum(a ** 2)


@pytest.mark.parametrize("K", [K_GOOD, K_BAD, _spd(3, smallest=-1.5)], ids=["inner-finishes", "inner-handles",
                                                                           "outer-handles"])
def test_a_try_inside_a_try_block(K):
    check_modes(try_inside_try, K, Y, rtol=1e-4, atol=1e-6)
    assert tg.value_and_grad(try_inside_try)(K, Y)[0] == pytest.approx(try_inside_try(K, Y))


def continue_in_with_inside_try_finally(x):
    s = x * 1.0
    for i in range(3):
        try:
            with np.errstate(all="ignore"):
                if x[i] > 0:
                    continue
                s = s * x[i]
        finally:
            s = s + 1.0
    return s


def return_in_inner_try_inside_try_finally(x):
    out = x * 2.0
    try:
        try:
            if x[0] > 0:
                return out
            out = out * 3
        except KeyError:
            pass
    finally:
        out[1] = out[1] * x[2]
    return out


@pytest.mark.parametrize("fn", [continue_in_with_inside_try_finally, return_in_inner_try_inside_try_finally])
def test_an_exit_inside_a_with_block_or_inner_try_of_a_try_finally_is_refused(fn):
    # the finally block ran before the with block's (or inner try's) exit, or not at all: a wrong value
    with pytest.raises(tg.UnsupportedSyntaxError, match="`finally` block of a `try` that returns"):
        tg.jvp(fn, (np.array([0.5, -0.4, 0.1, 0.6]),), (np.ones(4),))


def _conv_out_rows(X_shape, W_shape):
    """numpy-ml's `calc_conv_out_dims`: a 3-D kernel's shape unpacked only for a 3-D input."""
    if len(X_shape) == 3:
        fw, in_ch, out_ch = W_shape
        return X_shape[1] - fw + 1
    fr, fc, in_ch, out_ch = W_shape
    return X_shape[1] - fr + 1


def _unpacks_in_a_branch_not_taken(x):
    rows = _conv_out_rows(x.shape, (2, 1, 1, 1))
    return np.sum(x[:, :rows] ** 2)


def _unpacks_too_few_in_a_branch_not_taken(x):
    if x.ndim == 3:
        a, b, c = (1.0, 2.0)
        x = x * a * b * c
    return np.sum(x ** 3)


def test_unpacking_the_wrong_number_of_items_in_a_branch_not_taken_is_not_refused():
    """(refused as "this assignment always raises ValueError" although the branch does not run)"""
    from modes import check_modes
    check_modes(_unpacks_in_a_branch_not_taken, np.arange(1.0, 13.0).reshape(3, 4, 1, 1) / 7)
    check_modes(_unpacks_too_few_in_a_branch_not_taken, np.array([0.5, -1.5, 2.0]))
    with pytest.raises(ValueError, match=r"not enough values to unpack \(expected 3, got 2\)"):
        tg.grad(_unpacks_too_few_in_a_branch_not_taken)(np.ones((1, 2, 2)))

"""NaN debugging, caches, threads, and what generated code is made from."""
import gc
import linecache
import threading

import numpy as np
import pytest

import tapegen as tg


def log_of_difference(x, y):
    d = x - y
    return np.sum(np.log(d))


def test_debug_nans_names_the_forward_line():
    with tg.debug_nans():
        with pytest.raises(tg.NanError) as info:
            tg.grad(log_of_difference)(np.array([1.0, 2.0]), np.array([0.5, 3.0]))
    text = str(info.value)
    assert "first NaN in the forward pass" in text and "return np.sum(np.log(d))" in text
    assert isinstance(info.value, tg.TapegenError)


def test_debug_nans_off_costs_nothing_and_changes_nothing():
    f = tg.differentiate(log_of_difference)
    plain = f.source()
    assert "nan_check" not in plain
    with np.errstate(invalid="ignore", divide="ignore"):
        value = f.value_and_grad(np.array([1.0, 2.0]), np.array([0.5, 3.0]))[0]
    assert np.isnan(value)


def test_debug_nans_in_the_backward_pass():
    def f(x):
        return np.sum(np.sqrt(x) * 0.0 + np.abs(x) ** 0.5)
    with tg.debug_nans():
        with pytest.raises(tg.NanError, match="backward pass"):
            tg.grad(f)(np.array([1.0, 0.0]))


def test_debug_nans_is_restored_after_the_block():
    with tg.debug_nans():
        pass
    assert "nan_check" not in tg.source(log_of_difference)


def test_threads_transform_and_call_concurrently(rng):
    x = rng.normal(size=50)
    expected = [np.cos(x * k) * k for k in range(8)]
    results, errors = {}, []

    def work(k):
        try:
            results[k] = tg.grad(make_scaled(k))(x)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(8):
        np.testing.assert_allclose(results[k], expected[k])


def make_scaled(k):
    def f(x):
        return np.sum(np.sin(x * k))
    return f


def test_cache_does_not_keep_dead_functions_alive():
    before = sum(1 for name in linecache.cache if name.startswith("<tapegen"))
    for k in range(200):
        tg.grad(make_scaled(k))(np.ones(2))
    gc.collect()
    after = sum(1 for name in linecache.cache if name.startswith("<tapegen"))
    assert after - before < 20


def test_redefined_function_picks_up_new_source(tmp_path, monkeypatch):
    module = tmp_path / "notebook_cell.py"
    module.write_text("import numpy as np\ndef f(x):\n    return np.sum(x * 2.0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    import notebook_cell
    assert tg.grad(notebook_cell.f)(np.ones(2)).tolist() == [2.0, 2.0]
    module.write_text("import numpy as np\ndef f(x):\n    return np.sum(x * 5.0)\n")
    linecache.checkcache(str(module))
    importlib.reload(notebook_cell)
    assert tg.grad(notebook_cell.f)(np.ones(2)).tolist() == [5.0, 5.0]


def test_nothing_from_outside_becomes_code(tmp_path, monkeypatch):
    """A hostile file name or string constant only ever appears inside comments or literals."""
    module = tmp_path / "evil.py"
    module.write_text('import numpy as np\ndef f(x):\n    d = {"a\\nimport os; os.system(1)": x}\n'
                      '    return np.sum(d["a\\nimport os; os.system(1)"] * 2.0)\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    import evil
    text = tg.source(evil.f)
    assert "\nimport os" not in text
    np.testing.assert_allclose(tg.grad(evil.f)(np.ones(2)), [2.0, 2.0])


LOSSES = []
UNROLLED = [np.sin, np.tanh]


def _logs_into_a_module_list(x):
    LOSSES.append(float(np.sum(x ** 2)))  # the list's length is not relied on: code made once
    return np.sum(x ** 2) * len(UNROLLED)


def _walks_a_module_list(x):
    for f in UNROLLED:  # unrolled for the list's length: checked when the code runs, made again if it changes
        x = f(x)
    return np.sum(x)


def test_a_module_list_the_function_only_appends_to_does_not_remake_its_code():
    """Its length was checked on entry, so each call (the list one longer) made every gradient code again:
    400 times slower, and a hessian of it raised ChangedSinceTransformError."""
    import tapegen.api as api
    x = np.array([0.3, -0.2, 0.5])
    before = api._REMADE[0]
    for k in range(3):
        np.testing.assert_allclose(tg.grad(_logs_into_a_module_list)(x + k), 4 * (x + k))
    np.testing.assert_allclose(tg.hessian(_logs_into_a_module_list)(x), 4 * np.eye(3))
    assert api._REMADE[0] == before and len(LOSSES) >= 4
    t = np.tanh(np.sin(x))
    np.testing.assert_allclose(tg.grad(_walks_a_module_list)(x), (1 - t ** 2) * np.cos(x))
    UNROLLED.append(np.cos)  # a length the code relied on changes: made again, and right
    try:
        np.testing.assert_allclose(tg.grad(_walks_a_module_list)(x), -np.sin(t) * (1 - t ** 2) * np.cos(x))
    finally:
        UNROLLED.pop()


def _log_potential(t):
    return -np.sum(t ** 4) - np.sum(np.exp(t)) + t[0] * t[1]


def _laplace_evidence(theta):
    """A Laplace approximation as written: the Hessian of a lambda made in the function, by tapegen."""
    neg = lambda t: -_log_potential(t)  # noqa: E731
    H = tg.hessian(neg)(theta)
    return -neg(theta) - 0.5 * np.linalg.slogdet(H)[1]


def test_a_derivative_of_a_lambda_made_inside_does_not_remake_the_code_on_every_call():
    """The lambda is lifted to a function object while lowering, and its derivative's code held a check on that
    object's code through a weak reference: the object gone, every later call forgot every transform and made
    them again (200 times slower, with a warning after ten)."""
    import tapegen.api as api
    from modes import check_modes
    x = np.array([0.3, -0.2])
    check_modes(_laplace_evidence, x)
    gradient = tg.grad(_laplace_evidence)
    gradient(x)
    gc.collect()
    before = api._REMADE[0]
    for k in range(3):
        gradient(x + 0.1 * k)
    assert api._REMADE[0] == before

"""The first call of a gradient runs the general code (recording shapes) and returns; the code specialized to
those shapes is written on the second call (api._Entry.specialize), so a gradient taken once never waits for it.

The rest of the suite sets TAPEGEN_CHECK_SPECIALIZED=1, which writes the specialized code on the first call to
compare it with the general code; these tests switch that off to follow the path users take.
"""
import types

import numpy as np
import pytest

import tapegen as tg
from conftest import numeric_vjp
from tapegen import api, pipeline


@pytest.fixture
def users_path(monkeypatch):
    monkeypatch.setattr(api, "CHECK_SPECIALIZED", False)
    monkeypatch.delenv("TAPEGEN_CACHE_DIR", raising=False)
    tg.cache.disable()


def layer(W, b, x):
    h = np.tanh(x @ W + b)
    return np.mean(h * h) + 0.1 * np.sum(W ** 2)


def _entry(grad):
    return grad._differentiated._entry("grad", grad._wrt)


def _specialized(function) -> bool:
    return "specialized" in function.__code__.co_filename


def _args(rng, batch=4):
    return rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(batch, 3))


def _expected(f, args, wrt):
    return [numeric_vjp(f, args, i, 1.0) for i in wrt]


def test_the_first_call_returns_before_the_specialized_code_is_written(users_path, rng):
    args = _args(rng)
    grad = tg.grad(layer, wrt=(0, 1))
    for got, want in zip(grad(*args), _expected(layer, args, (0, 1))):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    entry = _entry(grad)
    assert isinstance(entry.pending, pipeline.Specializing) and not _specialized(entry.function)
    assert grad._fast is None  # the next call must go through the entry, which writes the specialized code
    for got, want in zip(grad(*args), _expected(layer, args, (0, 1))):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    assert entry.pending is False and _specialized(entry.function) and grad._fast is entry.function
    for got, want in zip(grad(*args), _expected(layer, args, (0, 1))):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_a_second_call_of_other_shapes_runs_the_general_code(users_path, rng):
    """The specialized code is the first call's shapes': another batch size fails its guard."""
    grad = tg.value_and_grad(layer)
    first, second = _args(rng, batch=4), _args(rng, batch=7)
    grad(*first)
    value, got = grad(*second)
    np.testing.assert_allclose(value, layer(*second), rtol=1e-12)
    np.testing.assert_allclose(got, numeric_vjp(layer, second, 0, 1.0), rtol=1e-6, atol=1e-8)
    entry = _entry(grad)
    assert _specialized(entry.function)
    np.testing.assert_allclose(grad(*first)[1], numeric_vjp(layer, first, 0, 1.0), rtol=1e-6, atol=1e-8)


def with_aux(W, b, x):
    loss = layer(W, b, x)
    return loss, {"loss": loss}


def test_has_aux_and_the_differentiate_decorator_take_the_same_path(users_path, rng):
    args = _args(rng)
    decorated = tg.differentiate(layer)
    aux = tg.grad(with_aux, has_aux=True)
    for _ in range(3):
        np.testing.assert_allclose(decorated.grad(*args), numeric_vjp(layer, args, 0, 1.0), rtol=1e-6, atol=1e-8)
        gradient, extra = aux(*args)
        np.testing.assert_allclose(gradient, numeric_vjp(layer, args, 0, 1.0), rtol=1e-6, atol=1e-8)
        assert extra["loss"] == pytest.approx(layer(*args))
    assert _specialized(decorated._entry("grad", 0).function)


def test_source_with_args_before_the_second_call_writes_the_same_code_once(users_path, rng):
    args = _args(rng)
    grad = tg.grad(layer)
    grad(*args)
    text = tg.source(layer, args=args)
    grad(*args)
    assert "".join(__import__("linecache").getlines(_entry(grad).function.__code__.co_filename)) == text


def test_with_the_disk_cache_on_the_first_call_writes_the_specialized_code(users_path, rng, tmp_path):
    tg.cache.enable(str(tmp_path))
    try:
        args = _args(rng)
        grad = tg.grad(layer)
        np.testing.assert_allclose(grad(*args), numeric_vjp(layer, args, 0, 1.0), rtol=1e-6, atol=1e-8)
        assert _entry(grad).pending is False and _specialized(_entry(grad).function)
    finally:
        tg.cache.disable()


def test_the_general_code_is_compiled_only_for_a_call_the_guard_sends_to_it(users_path, rng):
    fresh = types.FunctionType(layer.__code__, layer.__globals__, "layer")  # transformed by no other test
    grad = tg.grad(fresh)
    first, other = _args(rng, batch=4), _args(rng, batch=5)
    grad(*first)
    grad(*first)
    entry = _entry(grad)
    specialized = entry.function
    assert _specialized(specialized) and callable(entry.generated._namespace)  # not loaded: no call needed it
    np.testing.assert_allclose(grad(*other), numeric_vjp(fresh, other, 0, 1.0), rtol=1e-6, atol=1e-8)
    assert specialized.__globals__["GENERIC"] is entry.generated.function  # loaded, and called directly now
    np.testing.assert_allclose(grad(*other), numeric_vjp(fresh, other, 0, 1.0), rtol=1e-6, atol=1e-8)

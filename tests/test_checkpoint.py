"""tg.checkpoint: same gradient, fewer saved values (memory is measured in benchmarks/memory.py)."""
import sys
import tracemalloc

import numpy as np

import tapegen as tg
from cases import checkpoint_functions as C
from conftest import numeric_vjp
from modes import check_modes


def test_checkpointed_chain_has_the_same_gradient(rng):
    x = rng.normal(size=50)
    np.testing.assert_allclose(tg.grad(C.checkpointed_chain)(x), tg.grad(C.chain)(x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tg.grad(C.checkpointed_chain)(x), numeric_vjp(C.checkpointed_chain, (x,), 0, 1.0),
                               rtol=1e-6, atol=1e-9)


def test_nested_checkpoints(rng):
    x, w = rng.normal(size=5), rng.normal(size=5)
    gx, gw = tg.grad(C.nested, wrt=(0, 1))(x, w)
    np.testing.assert_allclose(gx, numeric_vjp(C.nested, (x, w), 0, 1.0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gw, numeric_vjp(C.nested, (x, w), 1, 1.0), rtol=1e-6, atol=1e-9)


def test_checkpoint_saves_only_segment_inputs():
    text = tg.source(C.checkpointed_chain)
    assert "eight_layers_fwd(h)" in text and "eight_layers_bwd(" in text
    assert "np.tanh" not in text  # the segment's internals are not in the outer code


def _peak(fn, x):
    fn(x)  # transform and warm up outside the measurement
    tracemalloc.start()
    fn(x)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_checkpointing_lowers_peak_memory(rng):
    x = rng.normal(size=200_000)
    plain = _peak(tg.grad(C.chain), x)
    checkpointed = _peak(tg.grad(C.checkpointed_chain), x)
    assert checkpointed * 3 < plain, (plain, checkpointed)


def test_checkpointed_function_reading_one_item_of_a_list_twice():
    def layer(h, Ws, k):
        return np.tanh(h @ Ws[k])

    layer_ck = tg.checkpoint(layer)

    def f(Ws, x):
        return np.sum(layer_ck(layer_ck(x, Ws, 0), Ws, 1))

    def plain(Ws, x):
        return np.sum(layer(layer(x, Ws, 0), Ws, 1))

    Ws, x = [np.eye(2) * 0.5, np.eye(2) * 0.3], np.ones((1, 2))
    g, expected = tg.grad(f)(Ws, x), tg.grad(plain)(Ws, x)
    assert type(g) is list and len(g) == 2
    for a, b in zip(g, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def _layer(h, Ws, k):
    return np.tanh(h @ Ws[k])


_layer_ck = tg.checkpoint(_layer)


def _deep(Ws, x):
    h = x
    for k in range(len(Ws)):
        h = _layer(h, Ws, k)
    return np.sum(h * h)


def _deep_checkpointed(Ws, x):
    h = x
    for k in range(len(Ws)):
        h = _layer_ck(h, Ws, k)
    return np.sum(h * h)


def test_segments_reading_one_item_of_a_list_hand_back_only_that_item(rng):
    """Each segment's gradient of `Ws` holds only the item it read (a Cotree), not 31 zero matrices
    that the running total would then copy once per segment."""
    Ws, x = [rng.normal(size=(8, 8)) / 3 for _ in range(32)], rng.normal(size=(4, 8))
    expected, got = tg.grad(_deep)(Ws, x), tg.grad(_deep_checkpointed)(Ws, x)
    assert type(got) is list and len(got) == 32
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    output, residuals = _layer_ck.fwd(x, Ws, 5)
    g_h, g_Ws, g_k = _layer_ck.bwd(residuals, np.ones_like(output))
    assert isinstance(g_Ws, dict) and list(g_Ws) == [5] and g_k is None
    np.testing.assert_allclose(g_Ws[5], tg.grad(lambda W: np.sum(np.tanh(x @ W)))(Ws[5]), rtol=1e-12)


def _scaled_layers(h, w, k):
    for _ in range(k):
        h = np.tanh(h * w) + 0.5 * h
    return h


def _scalar_segment(h, w):
    return np.sum(np.sin(h * w) * np.cos(h))


_scaled_layers_ck = tg.checkpoint(_scaled_layers)
_scalar_segment_ck = tg.checkpoint(_scalar_segment)


def _through_segments(x, w):
    h = _scaled_layers_ck(x, w, 2)
    h = _scaled_layers_ck(h * 1.5, w, 3)
    return _scalar_segment_ck(h, w) * np.sum(h)  # a float cotangent: the general vjp code pulls it back


def test_segments_pull_back_through_their_specialized_gradient_code(rng, monkeypatch):
    """An array cotangent goes through the gradient of <segment(args), cotangent>; the result is the vjp's."""
    x, w = rng.normal(size=6), rng.normal(size=6)
    check_modes(_through_segments, x, w, order2=False)
    plain = tg.grad(_unwrapped, wrt=(0, 1))(x, w)
    grads = tg.grad(_through_segments, wrt=(0, 1))
    pulled = []
    checkpointing = sys.modules["tapegen.checkpoint"]  # the module: tapegen.checkpoint is the function
    monkeypatch.setattr(checkpointing, "vjp", lambda f, *args, **kw: pulled.append(f) or tg.vjp(f, *args, **kw))
    for _ in range(3):  # the first call of each segment's gradient runs its general code, later ones specialized
        for ours, reference in zip(grads(x, w), plain):
            np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-14)
    assert set(pulled) == {_scalar_segment}  # only the float cotangent took the vjp code


def _unwrapped(x, w):
    h = _scaled_layers(x, w, 2)
    h = _scaled_layers(h * 1.5, w, 3)
    return _scalar_segment(h, w) * np.sum(h)


def test_a_float32_segment_keeps_float32(rng):
    x, w = rng.normal(size=6).astype(np.float32), rng.normal(size=6).astype(np.float32)
    grads = tg.grad(lambda x, w: np.sum(_scaled_layers_ck(x, w, 2)), wrt=(0, 1))
    for _ in range(2):
        gx, gw = grads(x, w)
        assert gx.dtype == gw.dtype == np.float32
        np.testing.assert_allclose(gx, tg.grad(lambda x, w: np.sum(_scaled_layers(x, w, 2)))(x, w), rtol=1e-5)

"""Code written for HIPS autograd (`import autograd.numpy as np`) is differentiated as the NumPy it wraps."""
import pytest

pytest.importorskip("autograd")

import numpy as np  # noqa: E402

import tapegen as tg  # noqa: E402
from cases import autograd_style  # noqa: E402
from modes import check_modes  # noqa: E402


@pytest.mark.parametrize("fn, args", autograd_style.cases(), ids=lambda v: getattr(v, "__name__", ""))
def test_autograd_numpy_code_in_every_mode(fn, args):
    check_modes(fn, *args)


def test_generated_code_calls_numpy_not_autograd():
    source = tg.source(autograd_style.neural_net_predict, kind="vjp")
    code = [line.split("#")[0] for line in source.splitlines()]
    assert any("np.tanh(" in line for line in code) and not any("autograd" in line for line in code)


def test_gradients_match_autograd():
    import autograd
    fn, args = autograd_style.cases()[0]
    ours = tg.grad(fn)(*args)
    theirs = autograd.grad(fn)(*args)
    for (W, b), (W2, b2) in zip(ours, theirs):
        np.testing.assert_allclose(W, W2, rtol=1e-10)
        np.testing.assert_allclose(b, b2, rtol=1e-10)

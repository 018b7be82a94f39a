"""tapegen: source-to-source reverse-mode automatic differentiation for NumPy.

    import numpy as np, tapegen as tg

    @tg.differentiate
    def loss(W, b, x, y):
        h = np.tanh(x @ W + b)
        return np.mean((h - y) ** 2)

    dW, db = loss.grad(W, b, x, y, wrt=("W", "b"))
    print(loss.source(wrt=("W", "b")))   # the generated gradient code
"""
from . import cache  # tg.cache.enable(): generated code kept on disk for the next process
from ._version import __version__
from .api import Differentiated, differentiate, grad, source, value_and_grad, vjp, wengert
from .api_transforms import hessian, hvp, jacobian, jvp
from .checkpoint import checkpoint
from .debug import debug_nans
from .errors import (GradcheckError, InternalError, NanError, NonScalarOutputError, NoRuleError,
                     NotRealOutputError, SourceNotFoundError, TapegenError, UnsupportedSyntaxError, WrtError)
from .rules.custom import custom_jvp, custom_vjp, register_vjp
from .runtime import register_pytree, stop_gradient

# Tools load on first use: `import tapegen` then `tg.grad` should pay only for what a gradient needs.
_LAZY = {"gradcheck": "tools.gradcheck", "GradcheckReport": "tools.gradcheck", "graph": "tools.graphing",
         "residuals": "tools.inspection", "trace": "tools.tracing", "flatten": "rules.language"}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'tapegen' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    # transforms
    "differentiate", "grad", "value_and_grad", "vjp", "jvp", "jacobian", "hessian", "hvp", "Differentiated",
    "stop_gradient", "checkpoint", "flatten",
    # custom rules and checking
    "custom_vjp", "custom_jvp", "register_vjp", "register_pytree", "gradcheck", "GradcheckReport", "debug_nans", "NanError",
    # inspection
    "source", "wengert", "trace", "graph", "residuals",
    # settings
    "cache",
    # errors
    "TapegenError", "UnsupportedSyntaxError", "NoRuleError", "NonScalarOutputError", "GradcheckError",
    "SourceNotFoundError", "WrtError", "InternalError", "NotRealOutputError",
]

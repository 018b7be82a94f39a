"""tapegen: source-to-source reverse-mode automatic differentiation for NumPy.

    import numpy as np, tapegen as tg

    @tg.differentiate
    def loss(W, b, x, y):
        h = np.tanh(x @ W + b)
        return np.mean((h - y) ** 2)

    dW, db = loss.grad(W, b, x, y, wrt=("W", "b"))
    print(loss.source(wrt=("W", "b")))   # the generated gradient code
"""
from .api import Differentiated, differentiate, grad, source, value_and_grad, vjp, wengert
from .errors import (GradcheckError, InternalError, NonScalarOutputError, NoRuleError, SourceNotFoundError,
                     TapegenError, UnsupportedSyntaxError, WrtError)
from .checkpoint import checkpoint
from .custom import custom_jvp, custom_vjp, register_vjp
from .debug import NanError, debug_nans
from .gradcheck import GradcheckReport, gradcheck
from .runtime import stop_gradient

__version__ = "0.1.0"

__all__ = [
    "differentiate", "grad", "value_and_grad", "vjp", "source", "wengert", "stop_gradient", "Differentiated",
    "gradcheck", "GradcheckReport", "custom_vjp", "custom_jvp", "register_vjp",
    "debug_nans", "NanError", "checkpoint",
    "TapegenError", "UnsupportedSyntaxError", "NoRuleError", "NonScalarOutputError", "GradcheckError",
    "SourceNotFoundError", "WrtError", "InternalError",
]

from .inspection import graph, residuals, trace  # noqa: E402  (issue 8: inspection)

__all__ += ["trace", "graph", "residuals"]

from .transforms import hessian, hvp, jacobian, jvp  # noqa: E402  (issue 4: forward mode, higher order)

__all__ += ["jvp", "jacobian", "hessian", "hvp"]

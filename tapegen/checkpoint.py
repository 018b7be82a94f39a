"""Checkpointing: trade recomputation for memory with `tapegen.checkpoint(g)`.

Inside a differentiated function, a call of a checkpointed `g` saves only
`g`'s inputs. Its forward pass runs `g` itself (no residuals kept); the
backward pass runs `g`'s generated VJP on the saved inputs (recomputing its
internals, now keeping their residuals only while that segment's backward
runs) and pulls the cotangent back. It works on functions with loops and on
nested checkpoints (each level recomputes its own segment).

There is no per-op save/recompute policy (e.g. "keep matmul outputs"): the
unit of recomputation is the function you wrap, which is where the choice is
readable in your own code — put the cheap-to-recompute, memory-heavy part in
its own function and checkpoint that.
"""
from __future__ import annotations

import functools
import linecache

import numpy as np

from .api import Differentiated, vjp
from .api import grad as gradient
from .api_transforms import jvp
from .rules.custom import custom_vjp
from .runtime import Cotree


def checkpoint(g):
    """`g`, recomputed in the backward pass instead of having its intermediates saved.

    Example:
        >>> block = checkpoint(lambda h: np.tanh(h * 1.1) * 0.9)
        >>> def deep(x):
        ...     for _ in range(8):
        ...         x = block(x)
        ...     return np.sum(x)
    """
    plain = g.__wrapped__ if isinstance(g, Differentiated) else g

    def segment_fwd(*args):
        return plain(*args), args

    projections = {}  # argument count -> the segment's projection (see _projection)

    def segment_bwd(args, cotangent):
        positions = tuple(i for i, a in enumerate(args) if _differentiable(a))
        if not positions:
            return (None,) * len(args)
        if isinstance(cotangent, np.ndarray) and cotangent.dtype.kind == "f":
            if len(args) not in projections:
                projections[len(args)] = _projection(plain, len(args))
            grads = gradient(projections[len(args)], wrt=tuple(p + 1 for p in positions))(cotangent, *args)
        else:
            _, pullback = vjp(plain, *args, wrt=positions)
            grads = pullback(cotangent)
        grads = grads if isinstance(grads, tuple) else (grads,)
        result = [None] * len(args)
        for position, grad in zip(positions, grads):
            result[position] = _sparse(grad) if isinstance(args[position], (list, tuple)) else grad
        return tuple(result)

    name = getattr(plain, "__name__", "segment").replace("<lambda>", "segment")
    segment_fwd.__name__ = f"{name}"
    wrapped = custom_vjp(functools.wraps(plain)(lambda *args: plain(*args)))
    wrapped.__name__ = name
    wrapped.fn.__name__ = name
    wrapped.defvjp(segment_fwd, segment_bwd)
    wrapped.checkpointed = plain
    wrapped.jvp = functools.partial(_segment_jvp, plain)  # forward mode: the segment's own tangent code
    return wrapped


def _projection(plain, count):
    """`(cotangent, a0, ...) -> np.sum(plain(a0, ...) * cotangent)`, whose gradient with respect to the a's is
    the segment's vector-Jacobian product: computed by gradient code, which, unlike the vjp code, is
    specialized to the arguments' shapes (no shape records, dead arrays reused, a tape of what is read)."""
    params = ", ".join(f"a{k}" for k in range(count))
    source = f"def projected(cotangent, {params}):\n    return np.sum(plain({params}) * cotangent)\n"
    filename = f"<tapegen.checkpoint of {getattr(plain, '__qualname__', 'segment')}, {count} arguments>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "plain": plain}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["projected"]


def _segment_jvp(plain, primals, tangents):
    """`(output, tangent)` of a checkpointed segment: forward mode keeps no residuals, so nothing to recompute."""
    return jvp(plain, primals, tangents)


def _sparse(grad):
    """A list argument's gradient without the items that are all zeros (the segment did not read them).

    The pullback fills every item of a list argument (`Ws`) with an array; a segment that reads
    one layer's weights would hand back a hundred zero arrays, and adding them into the
    running total would copy every item once per segment. A Cotree (missing items are zero)
    keeps only what the segment contributed.
    """
    if not isinstance(grad, (list, tuple)):
        return grad
    return Cotree({i: g for i, g in enumerate(grad) if not (isinstance(g, np.ndarray) and not g.any())})


def _differentiable(a) -> bool:
    if isinstance(a, (float, complex, np.floating, np.complexfloating)):
        return True
    if isinstance(a, np.ndarray):
        return a.dtype.kind in "fc"
    if isinstance(a, (dict, list, tuple)):
        return True
    return False

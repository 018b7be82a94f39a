"""Function transforms built on forward mode and on differentiable gradient code.

`jvp` runs generated tangent code (forward mode); `jacobian` pushes input
basis vectors forward or pulls output basis vectors back; `hessian` and
`hvp` differentiate the generated gradient code in forward mode
(forward-over-reverse), and `tg.grad(tg.grad(f))` differentiates it in
reverse mode. The gradient code is made differentiable in api.py
(`differentiable_gradient`): its source is rewritten into plain statements
tapegen lowers like user code, and the helpers it calls are primitives with
rules (rules/runtime_rules.py).
"""
from __future__ import annotations

import functools
import weakref

import numpy as np

from .api import Differentiated, GradFunction, _differentiated, _plain, _tangent_of_output, chosen_wrt
from .api import FORGETTABLE, FUNCTION_TYPES, differentiable_gradient
from .api import tangent_like
from .api import vjp as api_vjp
from .errors import TapegenError, WrtError
from .frontend.inline import DYNAMIC
from .ir import Pop, walk
from .rules import lent
from .rules.language import flat_cotangent, flatten_tree

__all__ = ["jvp", "jacobian", "hessian", "hvp"]


class Composed:
    """A function a transform made of `f` (`tg.hvp(f)`, `tg.jacobian(f)`, `tg.hessian(f)`).

    Called, it computes. Called inside a function being differentiated, it is inlined as plain
    Python built on the generated code it uses (`__tapegen_inline__`, read by frontend/inline.py),
    so transforms compose: `tg.grad` of a function taking a Hessian-vector product, `tg.jacobian`
    of `tg.jacobian(f)`, ...
    """

    def __init__(self, call, inline, name):
        self._call, self._inline = call, inline
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __tapegen_inline__(self):
        return self._inline()


class _ComposedByCount(Composed):
    """A Composed whose inlined code depends on how many values a call passes by position (`tg.hvp(f)` of
    `def f(x, *args)`): `inline(positional)` gives it."""

    def __tapegen_inline__(self):
        return None

    def __tapegen_inline_call__(self, positional: int, lengths=()):
        return self._inline(positional)

    def __repr__(self):
        return f"<tapegen {self.__name__}>"


def jvp(f, primals, tangents):
    """`(out, tangent_out)`: the value of `f(*primals)` and its derivative in the direction `tangents`.

    Forward mode, from generated tangent code (`tapegen.source(f, kind="jvp")`).
    `tangents` pairs with `primals`; None (or a tangent of an integer argument)
    means that argument does not move.

    Example:
        >>> import numpy as np, tapegen as tg
        >>> tg.jvp(lambda x: np.sin(x) * x, (1.0,), (1.0,))[1]  # doctest: +ELLIPSIS
        1.381773...
    """
    return _differentiated(f).jvp(primals, tangents)


def _gradient_of(f, wrt):
    """`differentiable_gradient` of `tapegen.grad(f, wrt)`."""
    return differentiable_gradient(GradFunction(f, wrt, False, False))


# --- Jacobians, Hessians, Hessian-vector products ---------------------------------------------------

def hvp(f, wrt=0, *, argnums=None, argnum=None):
    """A function `(*args, v)` returning the Hessian of `f` (in `wrt`) times `v`, never forming the Hessian.

    Forward-over-reverse: the JVP of the generated gradient code in the direction
    `v`, so its cost is a small constant times one gradient. With `wrt` a
    tuple, `v` and the result are tuples.

    Example:
        >>> f = lambda x: np.sum(x ** 3)
        >>> tg.hvp(f)(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
        array([6., 0.])
    """
    wrt = chosen_wrt(wrt, argnums, argnum)
    target = _differentiated(f)._target
    if target.varargs is not None and not target.bound:  # `lambda x, *args: ...` (autograd's flatten_func): the
        made = {}  # Hessian-vector product of a function taking the values a call passes, one per count

        def spread_hessian_vector_product(*args, **kwargs):
            count = len(args) - ("v" not in kwargs)
            if count not in made:
                made[count] = hvp(_called_with(target.fn, count), wrt)
            return made[count](*args, **kwargs)
        def inline(positional):  # a call inside a differentiated function: `(*args, v)`, v passed last
            return hvp(_called_with(target.fn, max(positional - 1, 0)), wrt).__tapegen_inline__()
        return _ComposedByCount(spread_hessian_vector_product, inline, f"{_name(f)}_hvp")
    gradient = Differentiated(_gradient_of(f, wrt))
    several = isinstance(wrt, (tuple, list))

    def hessian_vector_product(*args, **kwargs):
        if "v" in kwargs:
            v = kwargs.pop("v")
        elif args:
            args, v = args[:-1], args[-1]
        else:
            raise TapegenError("hvp: pass the vector v as the last argument")
        target = gradient._target
        primals = target.arguments(args, kwargs)[target.offset:]
        return gradient.jvp(primals, tuple(v) if several else (v,), wrt=tuple(wrt) if several else (wrt,))[1]

    def inline():  # JVP(*args, v)[1] of the gradient code, as plain Python
        target = gradient._target
        params = _names(len(target.params))
        moving = tuple(wrt) if several else (wrt,)
        tangents = ", ".join(f"v[{k}]" for k in range(len(moving))) if several else "v"
        return _plain(f"{_name(f)}_hvp", f"({params}, v)", f"return JVP({params}, {tangents})[1]",
                      JVP=_jvp_code(gradient, moving))

    return Composed(hessian_vector_product, inline, f"{_name(f)}_hvp")


def hessian(f, wrt=0, *, argnums=None, argnum=None):
    """A function returning the Hessian of scalar-valued `f` with respect to `wrt`, shaped `x.shape * 2`.

    The Jacobian of the generated gradient code, by forward mode
    (forward-over-reverse); with `wrt` a tuple, a tuple of tuples of blocks.
    """
    wrt = chosen_wrt(wrt, argnums, argnum)
    return jacobian(GradFunction(f, wrt, False, False), wrt, mode="forward")


def jacobian(f, wrt=0, mode="auto", *, argnums=None, argnum=None):
    """A function returning the Jacobian of `f` with respect to `wrt`, shaped `out.shape + x.shape`.

    mode "forward" pushes one input basis vector per element of the inputs
    through the generated tangent code; "reverse" pulls one output basis vector
    per element of the output through the generated VJP code. Each costs about
    (number of vectors) x (one evaluation), so "auto" picks forward when the
    `wrt` inputs have fewer elements than the output, and reverse otherwise.
    Forward mode batches the basis vectors into one call when the generated
    code handles a leading batch axis (checked on every call against a random
    combination of the vectors); where it does not, it makes one call per vector.

    With `wrt` a tuple, a tuple of Jacobians; for `f` returning a tuple, a
    tuple (over outputs) of them.
    """
    if mode not in ("auto", "forward", "reverse"):
        raise TapegenError(f"jacobian: unknown mode {mode!r}", hint="use 'auto', 'forward' or 'reverse'")
    wrt = chosen_wrt(wrt, argnums, argnum)
    d = _differentiated(f)

    def jacobian_of(*args, **kwargs):
        d = _differentiated(f)  # (a gradient's code: made again if a name it was made for is bound away)
        target = d._target
        arguments = target.arguments(args, kwargs)
        indices, bare = target.wrt(wrt, target.statics(arguments))  # with *args: positions count its values
        for i in indices:
            _check_array(arguments[i], i - target.offset)
        chosen = mode
        if mode == "auto":
            out = target.fn(*_copies(args), **_copies(kwargs))  # (run as written, as called: a write into an
            #                                                     argument stays in the copy)
            chosen = choose_mode(sum(np.size(arguments[i]) for i in indices),
                                 sum(np.size(o) for o in output_leaves(out)))
        positions = tuple(i - target.offset for i in indices)
        if chosen == "forward":
            pushed = [_forward_block(d, arguments, p, arguments[i]) for p, i in zip(positions, indices)]
            out, blocks = pushed[0][0], list(zip(*(block for _, block in pushed)))  # [output leaf][input]
        else:
            out, blocks = _reverse_blocks(d, arguments, positions, [arguments[i] for i in indices])
        return output_like(out, [block[0] if bare else tuple(block) for block in blocks])

    def inline():  # forward mode: one JVP per basis vector of each wrt argument, as plain Python
        target = d._target
        if target.bound or pipeline_returns_tuple(d):
            return None
        indices, bare = target.wrt(wrt)
        params = _names(len(target.params))
        lines, names = [], {}
        for k, i in enumerate(indices):  # one tangent per basis vector of the argument, stacked
            names[f"JVP{k}"] = _jvp_code(d, (i,))
            lines += [f"n{k} = np.size(a{i})",
                      f"basis{k} = np.eye(n{k}).reshape((n{k},) + np.shape(a{i}))",
                      f"columns{k} = [JVP{k}({params}, e)[1] for e in basis{k}]",
                      f"block{k} = np.moveaxis(np.stack(columns{k}), 0, -1).reshape(np.shape(columns{k}[0]) + "
                      f"np.shape(a{i}))"]
        lines.append("return block0" if bare else f"return ({', '.join(f'block{k}' for k in range(len(indices)))},)")
        return _plain(f"{_name(f)}_jacobian", f"({params})", "\n".join(lines), **names)

    return Composed(jacobian_of, inline, f"{_name(f)}_jacobian")


# --- transforms called inside a function being differentiated ---------------------------------------

def _called_with(f, count):
    """`def f_called(a0, ..., a<count-1>): return f(a0, ...)`: a Python function `f` of `*args`, for a call passing
    `count` values."""
    made = _CALLERS.setdefault(f, {})
    if count not in made:
        params = _names(count)
        made[count] = _plain(f"{_name(f)}_called", f"({params})", f"return F({params})", F=f)
    return made[count]


_CALLERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _name(f):
    return getattr(f, "__name__", "f").replace("<", "").replace(">", "") or "f"


def _names(n):
    return ", ".join(f"a{k}" for k in range(n))


def _jvp_code(d, positions, tuples=(), functions=()):
    """The generated tangent code of `d` (a Differentiated) moving `positions`; `tuples`: (position, length)
    of the arguments known to be tuples, for code that spreads one (`func(y, *args)`); `functions`: (position,
    function) of the arguments known to be functions, for code calling one."""
    d = _differentiated(d) if not isinstance(d, Differentiated) else d
    given = dict(functions)
    statics = tuple(functions) + tuple(s for s in d._target.default_statics() if s[0] not in given)
    stand_in = _with_lengths(tuples)
    if stand_in is not None and d._target.lengths_matter:  # made for lengths already: for these
        statics += d._target.mattering(d._target.length_statics(stand_in))
    entry = d._entry("jvp", positions, statics, lengths_from=stand_in)
    function = entry.function
    function.__tapegen_bindings__ = entry.bindings  # a function inlining it is checked against them too
    return function


def _with_lengths(tuples):
    """Stand-in arguments with the tuples of `tuples` ((position, length) pairs), for Target.length_statics."""
    if not tuples:
        return None
    spread = dict(tuples)
    return tuple((None,) * spread[k] if k in spread else None for k in range(max(spread) + 1))


def _tuple_lengths(described):
    """(position, length) of each argument described as a tuple (a tuple display, or one of a length known)."""
    return tuple((k, len(a)) for k, a in enumerate(described) if type(a) is tuple)


@functools.lru_cache(maxsize=None)
def _composed_jvp(f, moving, given, tuples=(), functions=()):
    """f's tangent code called with `given` primals: the parameters not given take their defaults (the
    tangent code takes every parameter, then the tangents)."""
    d = _differentiated(f)
    target = d._target
    if target.varargs is not None and not target.bound:  # `def f(*xs)`: tangent code for the `given` values passed
        d = _differentiated(_called_with(target.fn, given))
        target = d._target
    missing = len(target.params) - target.offset - given
    defaults = target.defaults[len(target.defaults) - missing:] if 0 < missing <= len(target.defaults) else ()
    tangents = ", ".join(f"tangents[{i}]" for i in moving)
    return _plain(f"{_name(f)}_jvp", "(f, primals, tangents)", f"return JVP(*primals, *DEFAULTS, {tangents})",
                  JVP=_jvp_code(d, moving, tuples, functions), DEFAULTS=tuple(defaults))


def _inline_jvp(args, kwargs):
    """`tg.jvp(f, primals, tangents)` inside a differentiated function: f's tangent code, inlined.

    `args`, `kwargs` describe the call as the transform sees it (frontend/inline.py's `described`):
    functions as themselves, tuple displays as tuples, None as None, anything else DYNAMIC.
    """
    if kwargs or len(args) != 3 or not callable(args[0]) or args[0] is DYNAMIC:
        return None
    f, primals, tangents = args
    if not (isinstance(primals, tuple) and isinstance(tangents, tuple) and len(primals) == len(tangents)):
        return None
    moving = tuple(i for i, t in enumerate(tangents) if t is not None)
    functions = tuple((k, a) for k, a in enumerate(primals) if type(a) in FUNCTION_TYPES and k not in moving)
    return _composed_jvp(f, moving, len(primals), _tuple_lengths(primals), functions) if moving else None


@functools.lru_cache(maxsize=None)
def _composed_vjp(f, n, wrt, several, functions=(), tuples=()):
    params = _names(n)
    # <out, ct>, the real part (as tg.vjp's pullback: JAX's convention), over every leaf of out and ct: f may
    # return a tuple, a list or dict of arrays, or a tuple it did not write as a display (another pullback's);
    # ct is read in out's structure, a None of out's (a bwd's for an argument without a cotangent) pairing nothing
    pairing = "np.real(np.sum(flatten_tree(out) * flat_cotangent(out, ct)))"
    # an argument known to be a function when transforming is that function in the gradient code too (a
    # parameter's value is known only when the code runs): `vjp(bwd_of_cotangent, g, f, a)` calling f
    passed = ", ".join(f"K{k}" if k in dict(functions) else f"a{k}" for k in range(n))
    objective = _plain(f"{_name(f)}_paired", f"({params}, ct)", f"out = F({passed})\nreturn {pairing}", F=f,
                       flatten_tree=flatten_tree, flat_cotangent=flat_cotangent, **{f"K{k}": function for k, function in functions})
    lengths = tuple((("len", k), ("tuple", length)) for k, length in tuples)  # code spreading a tuple argument
    pullback = differentiable_gradient(GradFunction(objective, list(wrt) if several else wrt[0], False, False),
                                       lengths=lengths)
    body = f"out = F({params})\n\ndef pullback(ct):\n    return PULLBACK({params}, ct)\n\nreturn out, pullback"
    return _plain(f"{_name(f)}_vjp", f"(f, {params}, wrt=None)", body, F=f, PULLBACK=pullback)


def _inline_vjp(args, kwargs):
    """`out, pullback = tg.vjp(f, *args)` inside a differentiated function: `out` is f's value, and
    `pullback(ct)` the inlined gradient code of <f(*args), ct> (with respect to `wrt`)."""
    if set(kwargs) - {"wrt"} or not args or not callable(args[0]) or args[0] is DYNAMIC:
        return None
    wrt = kwargs.get("wrt", 0)
    several = isinstance(wrt, (tuple, list))
    wrt = tuple(wrt) if several else (wrt,)
    if not all(isinstance(w, int) for w in wrt):
        return None
    functions = tuple((k, a) for k, a in enumerate(args[1:]) if type(a) in FUNCTION_TYPES and k not in wrt)
    return _composed_vjp(args[0], len(args) - 1, wrt, several, functions, _tuple_lengths(args[1:]))


# Inside a function being differentiated, `tg.jvp(...)` and `tg.vjp(...)` are inlined (frontend reads the mark).
jvp.__tapegen_compose__ = _inline_jvp
api_vjp.__tapegen_compose__ = _inline_vjp
# `tg.hvp(f)(x, v)`, `tg.jacobian(f)(x)`, `tg.hessian(f)(x)` inside: made when the function is lowered, then
# inlined through `Composed.__tapegen_inline__` (frontend/lower_expr.py reads the mark).
hvp.__tapegen_static_call__ = jacobian.__tapegen_static_call__ = hessian.__tapegen_static_call__ = True


def choose_mode(inputs: int, outputs: int) -> str:
    """"forward" if there are fewer input elements than output elements (fewer vectors to push), else "reverse"."""
    return "forward" if inputs < outputs else "reverse"


def pipeline_returns_tuple(d) -> bool:
    return _program(d).returns_tuple


def _program(d):
    from . import pipeline
    return pipeline.lowered(d._target.fn)


def _check_array(x, position):
    if isinstance(x, (dict, list, tuple)):
        raise WrtError(f"jacobian: argument {position} is a {type(x).__name__}; Jacobians are taken with "
                       f"respect to arrays and numbers", hint="pass its arrays as separate arguments")
    if np.asarray(x).dtype.kind not in "fc":
        raise WrtError(f"jacobian: argument {position} is not a float array or number",
                       hint="pass floats (e.g. np.asarray(x, dtype=float))")


def _basis(x):
    n = int(np.size(x))
    return np.eye(n, dtype=np.asarray(x).dtype).reshape((n,) + np.shape(x))


def output_leaves(out) -> list:
    """The arrays and numbers of a function's output, whatever lists, tuples and dicts hold them."""
    if isinstance(out, dict):
        return [leaf for value in out.values() for leaf in output_leaves(value)]
    if isinstance(out, (list, tuple)):
        return [leaf for item in out for leaf in output_leaves(item)]
    return [out]


def _copies(tree):
    """`tree` with each array copied, whatever lists, tuples and dicts hold it (other values as they are)."""
    if isinstance(tree, np.ndarray):
        return tree.copy()
    if isinstance(tree, dict):
        return type(tree)((key, _copies(value)) for key, value in tree.items())
    if isinstance(tree, (list, tuple)):
        items = [_copies(item) for item in tree]
        if hasattr(tree, "_fields"):  # a namedtuple
            return type(tree)(*items)
        return type(tree)(items)
    return tree


def output_like(out, leaves):
    """`out`'s structure (namedtuples kept) holding `leaves` in the order `output_leaves` gives."""
    leaves = list(leaves)[::-1]

    def build(tree):
        if isinstance(tree, dict):
            return type(tree)((key, build(value)) for key, value in tree.items())
        if isinstance(tree, (list, tuple)):
            items = [build(item) for item in tree]
            return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
        return leaves.pop()
    return build(out)


def _forward_block(d, arguments, position, x):
    """(out, columns of d leaf / d x for each output leaf): a tangent per basis vector of `x`, batched if it works."""
    function = d._entry("jvp", (position,), d._target.statics(arguments), lengths_from=arguments).function
    basis = _basis(x)
    batched = _batched_columns(function, arguments, basis, x, position)
    if batched is not None:
        out, columns = batched
    else:
        pushed = []
        for e in basis:
            out, tangent = function(*arguments, tangent_like(e, x, position))
            pushed.append(output_leaves(_tangent_of_output(tangent, out)))
        columns = [np.stack([np.asarray(p[k]) for p in pushed]) for k in range(len(pushed[0]))]
    return out, tuple(_columns_to_jacobian(c, np.shape(x)) for c in columns)


def _columns_to_jacobian(columns, x_shape):
    """(n, *out_shape) stacked tangents -> (*out_shape, *x_shape)."""
    columns = np.asarray(columns)
    out_shape = columns.shape[1:]
    return np.moveaxis(columns, 0, -1).reshape(out_shape + tuple(x_shape))


def _batched_columns(function, arguments, basis, x, position):
    """(out, all basis tangents in one call) if the generated code handles a leading batch axis; else None.

    Only for an array output or a flat tuple of them: the items of a list are not batched together.
    """
    n = len(basis)
    try:
        with np.errstate(all="ignore"):
            out, batch = function(*arguments, basis)
            if isinstance(out, (list, dict)) or (isinstance(out, tuple) and any(
                    isinstance(o, (list, tuple, dict)) for o in out)):
                return None
            parts = batch if isinstance(out, tuple) else (batch,)
            outs = out if isinstance(out, tuple) else (out,)
            if any(np.shape(p) != (n,) + np.shape(o) for p, o in zip(parts, outs)):
                return None
            weights = np.random.default_rng(0).standard_normal(n)
            _, single = function(*arguments, tangent_like(np.tensordot(weights, basis, 1), x, position))
            singles = single if isinstance(out, tuple) else (single,)
        for p, s in zip(parts, singles):
            expected = np.tensordot(weights, np.asarray(p), 1)
            tolerance = 1e-4 if np.asarray(p).dtype == np.float32 else 1e-9
            scale = max(float(np.max(np.abs(expected), initial=0.0)), 1.0)
            if not np.allclose(np.asarray(s, dtype=complex), expected, rtol=tolerance, atol=tolerance * scale):
                return None
    except Exception:  # the code does not take a batch axis: push the vectors one at a time
        return None
    return out, [np.asarray(p) for p in parts]


def _reverse_blocks(d, arguments, positions, xs):
    """(out, rows of d leaf / d x for each output leaf): one basis cotangent per element of each leaf."""
    entry = d._entry("vjp", positions, d._target.statics(arguments), lengths_from=arguments)
    reusable = not any(isinstance(s, Pop) for s in walk(entry.generated.adjoint.backward))
    out, residuals = entry.function(*arguments)
    outs = output_leaves(out)
    blocks = []
    for k, o in enumerate(outs):
        rows = []
        for e in _basis(o):
            cotangent = float(e) if isinstance(o, float) else np.asarray(e, dtype=np.asarray(o).dtype)
            if len(outs) > 1 or out is not o:  # the cotangent has the output's structure, zeros elsewhere
                cotangent = output_like(out, [cotangent if j == k else np.zeros_like(other)
                                              for j, other in enumerate(outs)])
            if not reusable:  # the backward pass pops its tape: run the forward pass again
                _, residuals = entry.function(*arguments)
            rows.append(entry.backward(residuals, cotangent))
        blocks.append(tuple(_rows_to_jacobian([r[j] for r in rows], np.shape(o), np.shape(x))
                            for j, x in enumerate(xs)))
    return out, blocks


def _rows_to_jacobian(rows, out_shape, x_shape):
    return np.asarray(rows).reshape(tuple(out_shape) + tuple(x_shape))


lent.provide(vjp=api_vjp, jvp=jvp)  # odeint's rules differentiate the user's dynamics with these


FORGETTABLE.extend([_composed_jvp, _composed_vjp])  # made again when the transforms are (forget_transforms)

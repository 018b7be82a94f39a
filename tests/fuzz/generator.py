"""Random, valid, differentiable NumPy programs as source text, for fuzzing tapegen.

`build(chooser)` writes a module with one entry function `fuzzed(a, ...)`
returning a scalar, and maybe helper functions it calls. The `Builder` keeps
every visible variable's shape and a bound on its absolute value, so each
statement it adds is well formed (broadcast-compatible shapes, matmul inner
dimensions, indices in range), stays on a safe domain (log of 1 + x*x, sqrt of
x*x + 0.5, exp of bounded values) and cannot overflow: an expression whose
bound passes `LIMIT` is scaled down, and inside a loop a variable from outside
it is only updated by contracting forms (`0.5 * v + 0.5 * np.tanh(e)`) or
accumulations whose growth the bound accounts for.

Points where a program is not differentiable (the comparison of an `if`,
`while`, `break`, `a if c else b` or `np.where`; `np.maximum`, `np.abs`,
`np.max`/`np.min`, `np.sort`, `np.clip`, `np.linalg.norm`; the built-ins `abs`, `max`, `min` and `round`
and idioms.py's `relu`) are written twice:
plainly in `Program.source`, and as calls of `Probe` methods in
`Program.probe_source`, which record how far the test point is from the kink.
A test rejects points closer than `MARGIN`, where finite differences would
straddle the kink. Exact ties of maximum/abs/max/sort (and a zero norm) are
allowed: they are structural (the same function on both sides, or constants),
so they stay tied under perturbation.

Statements: assignments, reassignments (also of arguments), `+=` on arrays
the function owns, tuple swaps, dicts/tuples/lists of values, lambdas and
nested defs, if/elif/else and early returns, `for` over ranges, rows, zip and
enumerate, `while` with a counter (and a data condition), break/continue,
`np.zeros` arrays filled by rows, columns, slices and cells, helper functions
(returning one value or a pair, called again with other arguments), and lists
built with `append` and stacked. Unusual names (`t1`, `g_a`, `tape`, ...) test generated-name
hygiene.

Nested containers, as real NumPy code has them: `np.array`/`np.asarray` of lists of lists (or
tuples) of elements `v[k]` and arrays (a rotation matrix of `a[0]`, `[[x0, x1], [x1 * x0, 2.0]]`);
joins (`concatenate`, `hstack`, `vstack`, `stack`, `column_stack`, `block`) mixing arrays with lists
of scalars (`np.concatenate([[x[0]], np.diff(x), [-x[-1]]])`); `np.mean`/`np.sum`/`np.std` of lists
of same-shape arrays; `np.split`/`np.array_split` pieces indexed or unpacked; tuples appended in a
loop then unpacked (`W, b = layers[k]`), indexed or looped over (`for pair in layers:` then
`W, b = pair`, or `for W, b in layers:`); dicts of tuples (`W, c = p["l1"]`),
`dict(a=u, b=v)`, nested indexing (`nested[0][1]`, `{"a": (w,)}["a"][0]`); tuple and list `+` and
`*` (`args = (h,)` then `np.hstack(args + (other,))`); loops over tuple literals
(`for t in (h, h * 2.0):`).

Python idioms (idioms.py and idiom_statements.py, mix-ins of the Builder; each form has a weight in
EXPRESSION_IDIOMS or STATEMENT_IDIOMS, the whole group EXPRESSION_WEIGHT and STATEMENT_WEIGHT): list
comprehensions and
generator expressions (nested, with `if`s on indices, `sum(...)` of them, `np.stack([...])`), dict
comprehensions, tuple-unpacking loops (`for W, b in pairs:`, `for t, (p, q) in enumerate(zip(xs, ys)):`,
`for p, q in zip(*columns):`, `for k, v in d.items():`, `for k in d:`, `for W, b in layers:`), built-ins
(`abs`, `sum`, `max`/`min` of two values, a list or a vector, `pow`, `len`, `round` with no gradient
through it), `math.*` of scalar elements, helpers with `*args`, keyword-only parameters and `**kwargs`
called with `*xs` / `**d`, functions as values (`apply(f, x)`, lists and dicts of NumPy functions,
module-level ones, lambdas and callable objects, called by constant index, in loops, comprehensions and
`map`; a helper's function default), methods of objects of different classes in a list, generator
helpers, and namedtuples. Those modules' docstrings list the forms.

Choices come from a `Chooser`: hypothesis' `draw` in the tests (so a failure
shrinks to a small program: the first option of every choice is the simplest)
or `random.Random` for quick batches.
"""
from __future__ import annotations

import functools
import itertools
import math
import random
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
from hypothesis import strategies as st

from .idiom_statements import STATEMENT_WEIGHT, IdiomStatements
from .idioms import EXPRESSION_WEIGHT
from .values import CONSTANTS, THRESHOLDS, Expr, Var, _a_view, _Part, _sequence, broadcast, const, ref

ENTRY = "fuzzed"
MARGIN = 1e-3       # nearest a kink a test point may be: far above the finite-difference step
LIMIT = 8.0         # bound on every value's magnitude; wider expressions are scaled down
INPUT_BOUND = 1.5   # arguments are uniform in [-INPUT_BOUND, INPUT_BOUND]
TRICKY_NAMES = ("t1", "g_a", "a_shape", "tape", "n", "seed", "meta", "g", "y", "x", "np_", "residuals",
                "unbroadcast", "t2", "g_v1", "v1_1")


# --- choices ------------------------------------------------------------------------------------

class Chooser:
    """Every random decision of the generator, built on `integer` (which shrinks towards `lo`)."""

    def integer(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def choice(self, options, weights=None):
        options = list(options)
        weights = weights or [1] * len(options)
        pick = self.integer(0, sum(weights) - 1)
        for option, weight in zip(options, weights):
            if pick < weight:
                return option
            pick -= weight
        raise AssertionError("unreachable")

    def flip(self, percent: int) -> bool:
        """True with probability percent/100; shrinks to False."""
        return self.integer(0, 99) >= 100 - percent


class DrawChooser(Chooser):
    def __init__(self, draw):
        self.draw = draw

    def integer(self, lo, hi):
        return self.draw(st.integers(lo, hi))


class RandomChooser(Chooser):
    def __init__(self, seed):
        self.random = random.Random(seed)

    def integer(self, lo, hi):
        return self.random.randint(lo, hi)


# --- values -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Program:
    source: str
    probe_source: str
    shapes: tuple
    features: tuple

    @property
    def params(self):
        return tuple("abc"[: len(self.shapes)])

    def arguments(self, seed: int) -> tuple:
        rng = np.random.default_rng(seed)
        return tuple(float(rng.uniform(-INPUT_BOUND, INPUT_BOUND)) if shape == ()
                     else rng.uniform(-INPUT_BOUND, INPUT_BOUND, size=shape) for shape in self.shapes)


class Probe:
    """The kink-measuring stand-ins that `Program.probe_source` calls; `margin` is the closest call."""

    def __init__(self):
        self.margin = math.inf

    def _note(self, gaps, exact_ties_ok):
        gaps = np.abs(np.asarray(gaps, dtype=float)).ravel()
        if exact_ties_ok:
            gaps = gaps[gaps > 0]
        if gaps.size:
            self.margin = min(self.margin, float(gaps.min()))

    def gt(self, a, t):
        self._note(np.asarray(a) - t, False)
        return a > t

    def lt(self, a, t):
        self._note(np.asarray(a) - t, False)
        return a < t

    def maximum(self, a, b):
        self._note(np.asarray(a) - np.asarray(b), True)
        return np.maximum(a, b)

    def abs(self, a):
        self._note(a, True)
        return np.abs(a)

    def max(self, a, axis=None, keepdims=False):
        top = np.max(a, axis=axis, keepdims=True)
        below = np.where(a < top, a, -np.inf)
        self._note((top - np.max(below, axis=axis, keepdims=True))[np.isfinite(np.max(below, axis=axis,
                                                                                           keepdims=True))], True)
        return np.max(a, axis=axis, keepdims=keepdims)

    def round(self, a, digits=None):
        """Python's `round`: its jumps are halfway between steps of 10 ** -digits."""
        scale = 10.0 ** (digits or 0)
        steps = np.asarray(a, dtype=float) * scale
        self._note((steps - np.floor(steps) - 0.5) / scale, False)
        return round(a, digits)

    def norm(self, a):
        value = np.linalg.norm(a)
        self._note(value, True)
        return value

    def sort(self, a, axis=-1):
        self._note(np.diff(np.sort(a, axis=axis), axis=axis), True)
        return np.sort(a, axis=axis)

    def clip(self, a, low, high):
        self._note(np.asarray(a) - low, False)
        self._note(np.asarray(a) - high, False)
        return np.clip(a, low, high)

    def std(self, a, axis=None):
        value = np.std(a, axis=axis)
        self._note(value, False)  # a zero std is a kink (of sqrt), even a structural one
        return value

    def maximum_accumulate(self, a):
        """A running maximum along axis 0: each item against the maximum before it."""
        running = np.asarray(a)[0]
        for row in np.asarray(a)[1:]:
            self._note(row - running, True)
            running = np.maximum(running, row)
        return np.maximum.accumulate(a, axis=0)

    def namespace(self):
        return {"np": np, "_gt": self.gt, "_lt": self.lt, "_maximum": self.maximum, "_abs": self.abs,
                "_max": self.max, "_norm": self.norm, "_round": self.round, "_sort": self.sort, "_clip": self.clip,
                "_std": self.std, "_maximum_accumulate": self.maximum_accumulate}


def probe(program: Program, args) -> tuple:
    """`(value, margin)`: the entry function's value at `args` and its distance to the nearest kink."""
    recorder = Probe()
    namespace = recorder.namespace()
    exec(compile(program.probe_source, "<fuzz probe>", "exec"), namespace)
    value = namespace[ENTRY](*args)
    return value, recorder.margin


# --- expressions ----------------------------------------------------------------------------------

UNARY = (  # name, template, probe template, bound of the result from the operand's, largest operand bound
    ("sin", "np.sin({0:x})", None, lambda b: 1.0, None),
    ("tanh", "np.tanh({0:x})", None, lambda b: 1.0, None),
    ("cos", "np.cos({0:x})", None, lambda b: 1.0, None),
    ("exp", "np.exp({0:x})", None, math.exp, 2.0),
    ("exp_tanh", "np.exp(np.tanh({0:x}))", None, lambda b: math.e, None),
    ("log", "np.log(1.0 + {0} * {0})", None, lambda b: math.log1p(b * b), None),
    ("sqrt", "np.sqrt({0} * {0} + 0.5)", None, lambda b: math.sqrt(b * b + 0.5), None),
    ("square", "{0} ** 2", None, lambda b: b * b, None),
    ("cube", "{0} ** 3", None, lambda b: b ** 3, None),
    ("neg", "-{0}", None, lambda b: b, None),
    ("recip", "1.0 / (1.0 + {0} * {0})", None, lambda b: 1.0, None),
    ("sigmoid", "1.0 / (1.0 + np.exp(-{0}))", None, lambda b: 1.0, 6.0),
    ("abs", "np.abs({0:x})", "_abs({0:x})", lambda b: b, None),
    ("arctan", "np.arctan({0:x})", None, lambda b: 1.6, None),
    ("sinh", "np.sinh({0:x})", None, math.sinh, 2.0),
    ("square_fn", "np.square({0:x})", None, lambda b: b * b, None),
)
BINARY = (
    ("add", "{0} + {1}", None, lambda p, q: p + q),
    ("mul", "{0} * {1}", None, lambda p, q: p * q),
    ("sub", "{0} - {1}", None, lambda p, q: p + q),
    ("div", "{0} / (1.0 + {1} * {1})", None, lambda p, q: p),
    ("add_fn", "np.add({0:x}, {1:x})", None, lambda p, q: p + q),
    ("mul_fn", "np.multiply({0:x}, {1:x})", None, lambda p, q: p * q),
    ("maximum", "np.maximum({0:x}, {1:x})", "_maximum({0:x}, {1:x})", max),
    ("tanh_mix", "np.tanh({0} * {1})", None, lambda p, q: 1.0),
    ("power", "(1.5 + np.sin({0:x})) ** np.tanh({1:x})", None, lambda p, q: 2.5),
    ("arctan2", "np.arctan2({0:x}, 1.0 + {1} * {1})", None, lambda p, q: 1.6),
    ("power_fn", "np.power({0:x}, 2)", None, lambda p, q: p * p),
)
MIXES = (  # how a variable {0} is updated with {1}; contracting ones never raise a bound that is >= 1
    ("axpy", "0.5 * {0} + 0.5 * np.tanh({1:x})", lambda p, q: p, True),
    ("tanh", "np.tanh({0} + {1})", lambda p, q: 1.0, True),
    ("cos", "{0} * np.cos({1:x})", lambda p, q: p, True),
    ("add", "{0} + {1}", lambda p, q: p + q, False),
    ("mul", "{0} * {1}", lambda p, q: p * q, False),
)


class Builder(IdiomStatements):
    """Writes one program: the entry function's lines and helper definitions, as (indent, plain, probe)."""

    def __init__(self, chooser: Chooser):
        self.c = chooser
        self.lines: list = []
        self.helpers: list = []        # finished helper definitions, each a list of lines
        self.signatures: list = []     # (name, parameter (shape, bound)s, result (shape, bound)s)
        self.pending: list = []        # helpers being written (a helper may define another)
        self.features: list = []
        self.counter = itertools.count(1)
        self.used: set = set()
        self.indent = 1
        self.ints: list = []           # loop indices in scope: (name, largest value)
        self.protected = frozenset()   # names from outside the innermost loop: updates must contract
        self.loops = 1                 # how many times the current line may run (product of trip counts)
        self.returns = None            # the entry function returns a scalar; a helper a value of this shape
        self.early: list = []          # bounds of the values a helper returns early
        self.imports: set = set()      # module imports beyond numpy (`import math`, namedtuple's)
        self.defined: set = set()      # module-level definitions written once (idioms.py)

    # --- bookkeeping ----------------------------------------------------------------------------

    def note(self, feature):
        self.features.append(feature)

    def emit(self, plain, probe=None):
        self.lines.append((self.indent, plain, probe if probe is not None else plain))

    @contextmanager
    def block(self):
        self.indent += 1
        try:
            yield
        finally:
            self.indent -= 1

    def name(self, prefix="v"):
        if self.c.flip(6):
            tricky = self.c.choice(TRICKY_NAMES)
            if tricky not in self.used:
                self.used.add(tricky)
                self.note(f"name:{tricky}")
                return tricky
        while True:
            candidate = f"{prefix}{next(self.counter)}"
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate

    def fmt(self, template, *parts, bound, probe=None, atom=True, view=False):
        """The expression `template` of `parts`, or None if its shape is not one the generator keeps."""
        shape = self.shape_of(template, parts)
        if shape is None:
            return None
        plain = template.format(*(_Part(p.plain, p.atom) for p in parts))
        probed = (probe or template).format(*(_Part(p.probe, p.atom) for p in parts))
        views = frozenset().union(*(p.views for p in parts)) if view else frozenset()
        return Expr(plain, probed, shape, max(float(bound), 1.0), atom, views)

    def shape_of(self, template, parts):
        namespace = {"np": np, "math": math, "functools": functools, **{name: 0 for name, _ in self.ints}}
        namespace.update({f"_{k}": (0.5 if p.shape == () else np.full(p.shape, 0.5)) for k, p in enumerate(parts)})
        try:
            value = eval(template.format(*(_Part(f"_{k}", True) for k in range(len(parts)))), namespace)
        except (ValueError, IndexError, TypeError, np.linalg.LinAlgError):
            return None
        shape = np.shape(value)
        return shape if len(shape) <= 2 and 1 <= int(np.prod(shape)) <= 40 else None

    def tame(self, e: Expr) -> Expr:
        if e.bound <= LIMIT:
            return e
        scale = 2.0 ** -math.ceil(math.log2(e.bound / LIMIT))
        return self.fmt("{0} * " + repr(scale), e, bound=e.bound * scale, atom=False)

    def pick(self, env, where=lambda v: True):
        candidates = [v for v in reversed(env) if where(v)]
        return self.c.choice(candidates) if candidates else None

    # --- expressions ----------------------------------------------------------------------------

    def operand(self, env, where=lambda v: True, nest=True):
        var = self.pick(env, where)
        if var is None:
            return None
        if nest and self.c.flip(25):
            inner = self.unary(ref(var))
            return inner if where(inner) else ref(var)
        return ref(var)

    def expression(self, env) -> Expr:
        kinds = [self.unary_of, self.binary, self.scaled, self.reduction, self.matmul, self.index, self.reshape,
                 self.where, self.with_index, self.linalg, self.scan, self.join, self.pick_one,
                 self.literal, self.mixed_join, self.list_reduce, self.split_part, self.nested_pick, self.sequence_ops,
                 self.idiom_expression]
        kind = self.c.choice(kinds, [4, 5, 2, 3, 2, 2, 2, 1, 4 if self.ints else 0, 2, 2, 1, 1, 2, 2, 1, 1, 1, 1,
                                     EXPRESSION_WEIGHT])
        e = kind(env)
        if e is None:
            e = self.unary_of(env)
        return self.tame(e)

    def unary_of(self, env):
        return self.unary(self.operand(env, nest=False))

    def unary(self, a: Expr) -> Expr:
        options = [u for u in UNARY if u[4] is None or a.bound <= u[4]]
        name, template, probe, bound, _ = self.c.choice(options)
        self.note(f"unary:{name}")
        return self.fmt(template, a, bound=bound(a.bound), probe=probe, atom=template.startswith("np."))

    def binary(self, env):
        a = self.operand(env)
        b = self.operand(env, lambda v: broadcast(a.shape, v.shape) is not None)
        name, template, probe, bound = self.c.choice(BINARY)
        self.note(f"binary:{name}")
        return self.fmt(template, a, b, bound=bound(a.bound, b.bound), probe=probe, atom=template.startswith("np."))

    def scaled(self, env):
        a = self.operand(env)
        k = const(self.c.choice(CONSTANTS))
        template = self.c.choice(["{0} * {1}", "{1} - {0}", "{0} / {1}", "{0} + {1}"])
        self.note("constant")
        return self.fmt(template, a, k, bound=a.bound * 4 + 3, atom=False)

    def reduction(self, env):
        a = self.operand(env, lambda v: v.ndim >= 1)
        if a is None:
            return None
        fn = self.c.choice(["sum", "mean", "max", "prod", "var", "min", "masked"])
        size = int(np.prod(a.shape))
        if fn == "masked":
            t = self.c.choice(THRESHOLDS)
            self.note("reduce:masked")
            return self.fmt(f"np.sum({{0}}[{{0:x}} > {t}])", a, bound=a.bound * size,
                            probe=f"np.sum({{0}}[_gt({{0:x}}, {t})])")
        axis = self.c.choice([None, 0, -1, 1, (0, 1)][: 3 + (a.ndim == 2) * 2])
        keywords = ("" if axis is None else f", axis={axis}") + (", keepdims=True" if self.c.flip(40) else "")
        if fn == "prod" and a.bound ** size > 1e3:
            fn = "sum"
        bound = {"sum": a.bound * size, "prod": a.bound ** size, "var": a.bound ** 2}.get(fn, a.bound)
        self.note(f"reduce:{fn}")
        if fn in ("max", "min"):
            sign = "-" if fn == "min" else ""
            probe = f"{sign}_max({sign}{{0}}{keywords})"
        else:
            probe = None
        if self.c.flip(30):
            return self.fmt(f"{{0}}.{fn}({keywords[2:]})", a, bound=bound, probe=probe)
        return self.fmt(f"np.{fn}({{0:x}}{keywords})", a, bound=bound, probe=probe)

    def matmul(self, env):
        a = self.operand(env, lambda v: v.ndim >= 1, nest=False)
        if a is None:
            return None
        b = self.operand(env, lambda v: v.ndim >= 1 and v.shape[0] == a.shape[-1])
        template = self.c.choice(["{0} @ {1}", "np.dot({0:x}, {1:x})", "np.matmul({0:x}, {1:x})", "{0}.dot({1:x})"])
        if b is None:
            b, template = a, self.c.choice(["{0} @ {1}.T", "np.dot({0:x}, {1}.T)"]) if a.ndim == 2 else "{0} @ {1}"
        self.note("matmul")
        return self.fmt(template, a, b, bound=a.bound * b.bound * a.shape[-1], atom=template[0] != "{")

    def index(self, env):
        a = self.operand(env, lambda v: v.ndim >= 1, nest=False)
        if a is None:
            return None
        n = a.shape[0]
        options = ["[0]", "[-1]", "[1:]", "[::-1]", "[:-1]", f"[[0, {n - 1}, 0]]", "[None]", "[..., 0]"]
        if a.ndim == 2:
            m = a.shape[1]
            options += ["[:, 0]", "[:, 1:]", "[0, -1]", "[::-1, :]", f"[[{n - 1}, 0]]", "[:, [0, 0]]",
                        f"[:, {m - 1}:]", "[1:, ::2]"]
        suffix = self.c.choice(options)
        self.note(f"index:{suffix}")
        return self.fmt("{0}" + suffix, a, bound=a.bound, view=True)

    def reshape(self, env):
        a = self.operand(env, lambda v: v.ndim >= 1, nest=False)
        if a is None:
            return None
        size = int(np.prod(a.shape))
        if a.ndim == 2:
            n, m = a.shape
            options = ["{0}.T", "np.transpose({0:x})", "{0}.reshape(-1)", f"{{0}}.reshape({m}, {n})",
                       f"np.reshape({{0:x}}, ({size},))", "{0}.ravel()", "np.swapaxes({0:x}, 0, 1)",
                       "np.flip({0:x}, axis=0)", "np.squeeze({0:x})", "np.concatenate([{0:x}, {0:x}], axis=1)"]
        else:
            options = ["{0}[:, None]", "{0}[None, :]", "{0}.reshape(1, -1)", "np.expand_dims({0:x}, 1)",
                       "np.flip({0:x})", "np.roll({0:x}, 1)", "np.concatenate([{0:x}, {0} * 2.0])",
                       "np.stack([{0:x}, np.sin({0:x})])", "np.tile({0:x}, 2)", "np.repeat({0:x}, 2)"]
        template = self.c.choice(options)
        self.note(f"shape:{template.split('(')[0].replace('{0}', '')}")
        return self.fmt(template, a, bound=a.bound * (2 if "2.0" in template else 1), view=True)

    def where(self, env):
        c = self.operand(env)
        a = self.operand(env, lambda v: broadcast(c.shape, v.shape) is not None)
        b = self.c.choice([const("0.0"), self.operand(env, lambda v: broadcast(c.shape, a.shape, v.shape) is not None)])
        b = b or const("0.0")
        t = self.c.choice(THRESHOLDS)
        self.note("where")
        return self.fmt(f"np.where({{0}} > {t}, {{1:x}}, {{2:x}})", c, a, b, bound=max(a.bound, b.bound),
                        probe=f"np.where(_gt({{0:x}}, {t}), {{1:x}}, {{2:x}})")

    def linalg(self, env):
        """norm, outer, einsum, trace, and solve/inv/det of a diagonally dominant matrix built from a var."""
        a = self.operand(env, lambda v: v.ndim >= 1, nest=False)
        if a is None:
            return None
        n, size = a.shape[0], int(np.prod(a.shape))
        square = a.shape == (n, n)
        form = self.c.choice(["norm", "outer", "einsum"] + ["solve", "inv", "det", "trace"] * square)
        self.note(f"linalg:{form}")
        if form == "norm":
            return self.fmt("np.linalg.norm({0:x})", a, bound=a.bound * math.sqrt(size), probe="_norm({0:x})")
        if form == "outer":
            b = self.operand(env, lambda v: v.ndim == 1)
            return self.fmt("np.outer({0:x}, {1:x})", a, b, bound=a.bound * b.bound) if b else None
        if form == "einsum":
            return self.einsum(env, a)
        if form == "trace":
            return self.fmt("np.trace({0:x})", a, bound=a.bound * n)
        scale = 2.0 ** -math.ceil(math.log2(a.bound * n))  # off-diagonal row sums <= 1 < the diagonal's 2
        matrix = f"np.eye({n}) * 2.0 + {{0}} * {scale!r}"
        if form == "inv":
            return self.fmt(f"np.linalg.inv({matrix})", a, bound=1.0)
        if form == "det":
            return self.fmt(f"np.linalg.det({matrix})", a, bound=3.0 ** n)
        b = self.operand(env, lambda v: v.ndim >= 1 and v.shape[0] == n)
        return self.fmt(f"np.linalg.solve({matrix}, {{1:x}})", a, b, bound=b.bound)

    def einsum(self, env, a):
        if a.ndim == 1:
            b = self.operand(env, lambda v: v.shape == a.shape)
            spec, parts = self.c.choice([("'i,i->'", (a, b)), ("'i->'", (a,)), ("'i,i->i'", (a, b))])
        else:
            b = self.operand(env, lambda v: v.shape == a.shape[1:]) or self.operand(env, lambda v: v.shape == a.shape)
            spec = {1: "'ij,j->i'", 2: "'ij,ij->j'"}[b.ndim]
            spec, parts = self.c.choice([(spec, (a, b)), ("'ij->j'", (a,)), ("'ij->ji'", (a,))])
        bound = a.bound * (parts[-1].bound if len(parts) > 1 else 1) * int(np.prod(a.shape))
        fields = ", ".join(f"{{{k}:x}}" for k in range(len(parts)))
        return self.fmt(f"np.einsum({spec}, {fields})", *parts, bound=bound, view=True)  # 'ij->ji' is a view

    def scan(self, env):
        """cumsum, diff, sort and clip along an axis (sort and clip through probes: ties and edges are kinks)."""
        a = self.operand(env, lambda v: v.ndim >= 1)
        if a is None:
            return None
        axis = self.c.choice([-1, 0][: a.ndim])
        n = a.shape[axis]
        form = self.c.choice(["cumsum", "diff", "sort", "clip", "cumsum_method"])
        self.note(f"scan:{form}")
        if form == "cumsum":
            return self.fmt(f"np.cumsum({{0:x}}, axis={axis})", a, bound=a.bound * n)
        if form == "cumsum_method":
            return self.fmt(f"{{0}}.cumsum(axis={axis})", a, bound=a.bound * n)
        if form == "diff":
            return self.fmt(f"np.diff({{0:x}}, axis={axis})", a, bound=2 * a.bound)
        if form == "sort":
            return self.fmt(f"np.sort({{0:x}}, axis={axis})", a, bound=a.bound, probe=f"_sort({{0:x}}, axis={axis})")
        return self.fmt("np.clip({0:x}, -0.5, 0.7)", a, bound=0.7, probe="_clip({0:x}, -0.5, 0.7)")

    def join(self, env):
        """Two arrays concatenated or stacked."""
        a = self.operand(env, lambda v: v.ndim >= 1, nest=False)
        if a is None:
            return None
        b = self.operand(env, lambda v: v.ndim == a.ndim)
        template = self.c.choice(["np.concatenate([{0:x}, {1:x}])", "np.concatenate([{0:x}, {1:x}], axis=-1)",
                                  "np.stack([{0:x}, {1:x}], axis=-1)", "np.vstack([{0:x}, {1:x}])",
                                  "np.hstack([{0:x}, {1:x}])", "np.concatenate(({0:x}, {1:x}))"])
        self.note(f"join:{template.split('(')[0]}")
        return self.fmt(template, a, b, bound=max(a.bound, b.bound))

    def pick_one(self, env):
        """`a if <comparison> else b`."""
        a = self.operand(env)
        b = self.operand(env, lambda v: v.shape == a.shape)
        plain, probe = self.condition(env)
        self.note("ifexp")
        return self.fmt("{0} if {2:x} else {1}", a, b, Expr(plain, probe, (), 1.0), bound=max(a.bound, b.bound),
                        atom=False, view=True)  # it is one of them, not a copy

    def with_index(self, env):
        """An expression reading a loop index: `A[i]`, `A[:, i]`, `x * i`, `np.sum(A[i:])`."""
        i, top = self.c.choice(self.ints)
        rows = self.pick(env, lambda v: v.ndim >= 1 and v.shape[0] > top)
        cols = self.pick(env, lambda v: v.ndim == 2 and v.shape[1] > top)
        form = self.c.choice(["scale", "row", "col", "tail", "prev"])
        self.note(f"loop-index:{form}")
        if form == "row" and rows:
            return self.fmt(f"{{0}}[{i}]", ref(rows), bound=rows.bound, view=True)
        if form == "col" and cols:
            return self.fmt(f"{{0}}[:, {i}]", ref(cols), bound=cols.bound, view=True)
        if form == "tail" and rows:
            return self.fmt(f"np.sum({{0}}[{i}:])", ref(rows), bound=rows.bound * np.prod(rows.shape))
        if form == "prev" and rows:
            return self.fmt(f"{{0}}[{i} - 1]", ref(rows), bound=rows.bound, view=True)
        a = self.operand(env)
        return self.fmt(f"{{0}} * ({i} + 0.5)", a, bound=a.bound * (top + 0.5), atom=False)

    def coerce(self, e: Expr, shape) -> Expr:
        """`e`, or a reduction of it, that broadcasts to `shape`."""
        if broadcast(e.shape, shape) == shape:
            return e
        if e.ndim == 2 and e.shape[::-1] == shape:
            return self.fmt("{0}.T", e, bound=e.bound, view=True)
        return self.fmt("np.mean({0:x})", e, bound=e.bound)

    def condition(self, env):
        """A data-dependent scalar comparison: (plain text, probe text)."""
        v = self.pick(env)
        if v.ndim == 0:
            scalar = v.name
        else:
            scalar = self.c.choice([f"np.sum({v.name})", f"np.mean({v.name})", f"{v.name}[{', '.join('0' * v.ndim)}]"])
        t = self.c.choice(THRESHOLDS)
        op, probe = self.c.choice([(">", "_gt"), ("<", "_lt")])
        plain, probed = f"{scalar} {op} {t}", f"{probe}({scalar}, {t})"
        if self.c.flip(12):
            word = self.c.choice(["and", "or"])
            self.note(f"condition:{word}")
            other, other_probed = self.condition(env)
            plain, probed = f"{plain} {word} {other}", f"{probed} {word} {other_probed}"
        return plain, probed

    # --- statements -----------------------------------------------------------------------------

    def statements(self, env, count, depth):
        for _ in range(count):
            env = self.statement(env, depth)
        return env

    def statement(self, env, depth):
        kinds = [self.assign, self.reassign, self.augment, self.swap, self.container, self.local_function,
                 self.branch, self.for_loop, self.while_loop, self.fill, self.call, self.stack, self.nested,
                 self.idiom_statement]
        nested = depth < 2
        weights = [6, 2, 1, 1, 1, 1] + [2 * nested, 2 * nested, 1 * nested, 1 * nested, 1 * nested, 1 * nested, 3,
                                        STATEMENT_WEIGHT]
        return self.c.choice(kinds, weights)(env, depth)

    def define(self, env, name, e: Expr, fresh=True):
        """Emit `name = e`; return the environment with `name` bound and e's sources marked shared."""
        self.emit(f"{name} = {e.plain}", f"{name} = {e.probe}")
        shared = e.views | {name}
        env = [replace(v, fresh=False) if v.name in shared else v for v in env if v.name != name]
        return env + [Var(name, e.shape, max(e.bound, 1.0), fresh and not e.views)]

    def assign(self, env, depth):
        return self.define(env, self.name(), self.expression(env))

    def mix(self, var: Var, e: Expr, contract: bool) -> Expr:
        e = self.coerce(e, var.shape)
        options = [m for m in MIXES if m[3] or not contract]
        name, template, bound, _ = self.c.choice(options)
        self.note(f"update:{name}")
        return self.fmt(template, ref(var), e, bound=bound(var.bound, e.bound), atom=template.startswith("np."))

    def reassign(self, env, depth):
        var = self.pick(env)
        new = self.mix(var, self.expression(env), var.name in self.protected)
        if new.shape != var.shape:
            return env
        self.note("reassign")
        return self.define(env, var.name, new, fresh=False)

    def augment(self, env, depth):
        """`v += e`, `v -= e`, `v *= np.cos(e)` on a variable that owns its data (tapegen refuses others)."""
        var = self.pick(env, lambda v: v.fresh and v.name not in self.protected)
        if var is None:
            return self.assign(env, depth)
        e = self.coerce(self.expression(env), var.shape)
        op, template, bound = self.c.choice([("+=", "{0}", var.bound + e.bound), ("-=", "{0}", var.bound + e.bound),
                                             ("*=", "np.cos({0:x})", var.bound)])
        e = self.fmt(template, e, bound=e.bound)
        self.note(f"augment:{op}")
        self.emit(f"{var.name} {op} {e.plain}", f"{var.name} {op} {e.probe}")
        return [replace(v, bound=max(bound, 1.0)) if v.name == var.name else v for v in env]

    def swap(self, env, depth):
        """`v, w = w, <v mixed with w>`: a tuple assignment reading both old values."""
        v = self.pick(env)
        w = self.pick(env, lambda u: u.shape == v.shape and u.name != v.name)
        protected = {v.name, w.name} & self.protected if w else set()
        if w is None or (protected and v.bound != w.bound):
            return self.reassign(env, depth)
        new = self.mix(v, ref(w), bool(protected))
        self.note("swap")
        self.emit(f"{v.name}, {w.name} = {w.name}, {new.plain}", f"{v.name}, {w.name} = {w.name}, {new.probe}")
        bounds = {v.name: w.bound, w.name: new.bound}
        return [replace(u, bound=max(bounds[u.name], 1.0), fresh=False) if u.name in bounds else u for u in env]

    def container(self, env, depth):
        """Two values packed in a dict, tuple or list, and an expression reading them back out."""
        x, y = self.pick(env), self.pick(env)
        name = self.name("params")
        form = self.c.choice(["dict", "tuple", "list"])
        self.note(f"container:{form}")
        if form == "dict":
            self.emit(f'{name} = {{"p": {x.name}, "q": {y.name}}}')
            keys = ('"p"', '"q"')
        else:
            self.emit(f"{name} = ({x.name}, {y.name})" if form == "tuple" else f"{name} = [{x.name}, {y.name}]")
            keys = ("0", "1")
        env = [replace(v, fresh=False) if v.name in (x.name, y.name) else v for v in env]
        items = [Var(f"{name}[{key}]", var.shape, var.bound) for key, var in zip(keys, (x, y))]
        return self.define(env, self.name(), self.expression(items))

    def local_function(self, env, depth):
        """A lambda or nested def (with a default argument) defined in the function, called once or twice."""
        x = self.pick(env)
        fname = self.name("f")
        captured = [self.pick(env)] if self.c.flip(40) else []  # a closure over a local of the enclosing function
        self.note("local:closure" if captured else "local:plain")
        body = self.expression([Var("u", x.shape, x.bound)] + captured)
        if self.c.flip(50):
            self.note("local:lambda")
            self.emit(f"{fname} = lambda u: {body.plain}", f"{fname} = lambda u: {body.probe}")
            calls, bound = [f"{fname}({{0}})"], body.bound
        else:
            self.note("local:def")
            self.emit(f"def {fname}(u, scale=0.5):")
            with self.block():
                self.emit(*(f"return {_Part(text, body.atom)} * scale" for text in (body.plain, body.probe)))
            calls, bound = [f"{fname}({{0}})", f"{fname}({{0}}, scale=1.5)", f"{fname}(u={{0}})"], body.bound * 1.5
        args = [x] + [v for v in env if v.shape == x.shape and v.bound <= x.bound and v.name != x.name][:1]
        e = " + ".join(self.c.choice(calls).format(a.name) for a in args)
        views = frozenset(a.name for a in args)  # `lambda u: u[0]` returns a view of its argument
        return self.define(env, self.name(), self.tame(Expr(e, e, body.shape, bound * len(args), False, views)))

    def branch(self, env, depth):
        form = self.c.choice(["reassign", "new", "elif", "return"], [3, 3, 1, 1 if self.returns is not False else 0])
        self.note(f"if:{form}")
        plain, probe = self.condition(env)
        if form == "return":
            self.emit(f"if {plain}:", f"if {probe}:")
            with self.block():
                if self.returns is None:
                    self.finish(env)
                else:
                    self.note("helper:early-return")
                    result = self.coerce(self.expression(env), self.returns)
                    self.early.append(result.bound)
                    self.emit(f"return {result.plain}", f"return {result.probe}")
            return env
        if form == "reassign":
            target = self.pick(env)
            arms = 1 + self.c.flip(50)
        else:
            target = Var(self.name(), self.pick(env).shape, 1.0)
            arms = 3 if form == "elif" else 2
        arms_env = [env] if form == "reassign" and arms == 1 else []
        for arm in range(arms):
            if arm == 0:
                self.emit(f"if {plain}:", f"if {probe}:")
            elif arm == arms - 1:
                self.emit("else:")
            else:
                plain, probe = self.condition(env)
                self.emit(f"elif {plain}:", f"elif {probe}:")
            with self.block():
                inner = self.statements(env, self.c.integer(0, 1), depth + 1)
                base = target if form == "reassign" else self.pick(inner, lambda v: v.shape == target.shape)
                new = self.mix(base, self.expression(inner), target.name in self.protected)
                arms_env.append(self.define(inner, target.name, new))
        return self.merge(env + ([] if form == "reassign" else [target]), arms_env)

    def merge(self, env, arms):
        """`env` after a branch: each variable with its largest bound over the arms; arm locals dropped."""
        merged = []
        for var in env:
            versions = [v for arm in arms for v in arm if v.name == var.name]
            merged.append(replace(var, bound=max(v.bound for v in versions),
                                  fresh=all(v.fresh for v in versions) and var.fresh))
        return merged

    @contextmanager
    def loop(self, env, trips, ints=()):
        saved = (self.protected, self.loops, len(self.ints))
        self.protected = self.protected | {v.name for v in env}
        self.loops *= trips
        self.ints.extend(ints)
        try:
            with self.block():
                yield
        finally:
            self.protected, self.loops = saved[:2]
            del self.ints[saved[2]:]

    def carried(self, env):
        """Variables a loop updates: an outer one (contracting), or a new accumulator set up before it."""
        if self.c.flip(50):
            var = self.pick(env)
            return env, var, "contract"
        name = self.name("acc")
        init = self.c.choice([const("0.0"), self.expression(env)])
        env = self.define(env, name, init)
        return env, env[-1], self.c.choice(["contract", "accumulate"])

    def loop_header(self, env, depth):
        """(header, trips, loop indices, item variables) for a `for` loop over a range or arrays."""
        form = self.c.choice(["range", "rows", "zip", "enumerate"])
        self.note(f"for:{form}")
        suffix = "" if depth == 0 else str(depth)
        arrays = [v for v in env if v.ndim >= 1]
        if form == "range" and arrays and self.c.flip(30):
            a = self.c.choice(arrays[::-1])
            spec = self.c.choice([f"len({a.name})", f"{a.name}.shape[0]"])
            self.note("for:range-len")
            return f"for i{suffix} in range({spec}):", a.shape[0], [(f"i{suffix}", a.shape[0] - 1)], []
        if form == "range":
            start, stop = self.c.choice([0, 0, 1]), self.c.integer(1, 4)
            start = min(start, stop - 1)
            spec = f"{stop}" if start == 0 else f"{start}, {stop}"
            return f"for i{suffix} in range({spec}):", stop - start, [(f"i{suffix}", stop - 1)], []
        if not arrays:
            return f"for i{suffix} in range(2):", 2, [(f"i{suffix}", 1)], []
        a = self.c.choice(arrays[::-1])
        item = Var(f"row{suffix}", a.shape[1:], a.bound)
        if form == "rows":
            return f"for {item.name} in {a.name}:", a.shape[0], [], [item]
        if form == "enumerate":
            return (f"for e{suffix}, {item.name} in enumerate({a.name}):", a.shape[0],
                    [(f"e{suffix}", a.shape[0] - 1)], [item])
        b = self.c.choice(arrays)
        other = Var(f"q{suffix}", b.shape[1:], b.bound)
        header = f"for {item.name}, {other.name} in zip({a.name}, {b.name}):"
        return header, min(a.shape[0], b.shape[0]), [], [item, other]

    def for_loop(self, env, depth):
        header, trips, ints, items = self.loop_header(env, depth)
        sources = {word.strip("():,") for word in header.split()}
        env = [replace(v, fresh=False) if v.name in sources else v for v in env]
        return self.loop_body(env, depth, header, header, trips, ints, items)

    def while_loop(self, env, depth):
        counter, stop = self.name("n"), self.c.integer(1, 4)
        env = [v for v in env if v.name != counter]
        self.emit(f"{counter} = 0")
        header = probe = f"while {counter} < {stop}"
        if self.c.flip(40):
            plain, probed = self.condition(env)
            header, probe = f"{header} and ({plain})", f"{probe} and ({probed})"
            self.note("while:data")
        self.note("while")
        step = [self.c.choice([f"{counter} += 1", f"{counter} = {counter} + 1"])]
        if self.c.flip(20):
            self.note("while:true")
            header = probe = "while True"
            step += [f"if {counter} > {stop}:", "    break"]
        return self.loop_body(env, depth, header + ":", probe + ":", stop, [(counter, stop)], [], first=step)

    def loop_body(self, env, depth, header, probe, trips, ints, items, first=None):
        env, var, kind = self.carried(env)
        if kind == "accumulate":
            if var.name in self.protected:
                kind = "contract"
            else:
                var = replace(var, bound=var.bound + 0.5 * trips * self.loops, fresh=False)
                env = [var if v.name == var.name else v for v in env]
        self.emit(header, probe)
        with self.loop(env, trips, ints):
            for line in first or ():
                self.emit(line)
            inner = self.statements(env + items, self.c.integer(0, 2), depth + 1)
            if self.c.flip(25):
                self.jump(inner)
            e = self.expression(inner)
            if kind == "accumulate":
                e = self.fmt("0.5 * np.tanh({0:x})", self.coerce(e, var.shape), bound=1.0, atom=False)
                self.note("loop:accumulate")
                self.emit(*(f"{var.name} = {var.name} + {text}" for text in (e.plain, e.probe)))
            else:
                self.define(inner, var.name, self.mix(var, e, True))
        return [replace(v, fresh=False) if v.name == var.name else v for v in env]

    def jump(self, env):
        plain, probe = self.condition(env)
        word = self.c.choice(["break", "continue"])
        self.note(f"jump:{word}")
        self.emit(f"if {plain}:", f"if {probe}:")
        with self.block():
            self.emit(word)

    def fill(self, env, depth):
        """A fresh `np.zeros` array written row by row, by slices, by columns or cell by cell."""
        shape = self.c.choice([v.shape for v in env if v.ndim >= 1] + [(3,), (2, 3), (4, 2)])
        name, form = self.name("Z"), self.c.choice(["rows", "slices", "recurrence", "columns", "cells", "rows+=",
                                                    "rows through a view", "columns through a view"])
        self.note(f"fill:{form}")
        self.emit(f"{name} = np.zeros({shape if len(shape) > 1 else shape[0]})")
        if form.startswith("columns") and len(shape) < 2:
            form = form.replace("columns", "rows")
        bound = 1.0
        if form == "slices":
            for target, rows in (("[0]", 0), ("[1:]", slice(1, None))):
                e = self.coerce(self.expression(env), np.zeros(shape)[rows].shape)
                self.emit(f"{name}{target} = {e.plain}", f"{name}{target} = {e.probe}")
                bound = max(bound, e.bound)
        elif form == "cells" and len(shape) == 2:
            bound = self.fill_cells(env, name, shape, depth)
        else:
            bound = self.fill_lines(env, name, shape, form, depth)
        if self.c.flip(20):
            t = self.c.choice(THRESHOLDS)
            self.note("fill:mask")
            self.emit(f"{name}[{name} > {t}] = 0.0", f"{name}[_gt({name}, {t})] = 0.0")
        return env + [Var(name, shape, bound, fresh=True)]

    def fill_lines(self, env, name, shape, form, depth):
        """Each row (or column) of `name` set in a loop; through a view of it (`line = Z[i]; line[...] += e`, which
        NumPy writes into `Z`) for the forms saying so."""
        column = form.startswith("columns")
        view = self.name("line") if form.endswith("through a view") else None
        count = shape[1] if column else shape[0]
        target_shape = (shape[0],) if column else shape[1:]
        i = "j" if column else "i"
        i = f"{i}{depth}" if depth else i
        if self.c.flip(5):  # a loop over positions: `i` set in its body (a name later loops reuse as target)
            self.note("loop:reversed")
            self.emit(f"for {i} in reversed(range({count})):")
        else:
            self.emit(f"for {i} in range({count}):")
        with self.loop(env, count, [(i, count - 1)]):
            e = self.coerce(self.expression(env), target_shape)
            slot = f"[:, {i}]" if column else f"[{i}]"
            if form == "recurrence":
                e = self.fmt(f"np.tanh(0.5 * {{1}}[{i} - 1] + {{0}})", e, ref(Var(name, shape, 1.0)), bound=1.0)
            op = "+=" if form == "rows+=" or view and self.c.flip(50) else "="
            if view is not None:  # (a row of a vector is a number: its view is a slice of one item)
                self.emit(f"{view} = {name}{slot if len(shape) > 1 else f'[{i}:{i} + 1]'}")
                self.emit(f"{view}[...] {op} {e.plain}", f"{view}[...] {op} {e.probe}")
            else:
                self.emit(f"{name}{slot} {op} {e.plain}", f"{name}{slot} {op} {e.probe}")
        return e.bound

    def fill_cells(self, env, name, shape, depth):
        i, j = (f"i{depth}", f"j{depth}") if depth else ("i", "j")
        self.emit(f"for {i} in range({shape[0]}):")
        with self.loop(env, shape[0], [(i, shape[0] - 1)]):
            self.emit(f"for {j} in range({shape[1]}):")
            with self.loop(env, shape[1], [(j, shape[1] - 1)]):
                e = self.coerce(self.expression(env), ())
                cells = f"{name}[{i} - 1, {j}], {name}[{i}, {j} - 1]"
                self.emit(f"{name}[{i}, {j}] = np.tanh(np.maximum({cells}) + {e.plain})",
                          f"{name}[{i}, {j}] = np.tanh(_maximum({cells}) + {e.probe})")
        return 1.0

    def call(self, env, depth):
        """Call a helper function defined in the same file (defining it first if none fits)."""
        for name, params, results in self.signatures:
            args = [self.pick(env, lambda v, p=p: v.shape == p[0] and v.bound <= p[1]) for p in params]
            if all(args) and self.c.flip(50):
                self.note("call:again")
                return self.call_with(env, name, args, results)
        args = [self.pick(env) for _ in range(self.c.integer(1, 2))]
        name, results = self.define_helper(args, depth)
        return self.call_with(env, name, args, results)

    def call_with(self, env, name, args, results):
        """`v = helper(a, b)`, or `v, w = helper(a, b)` for a helper returning a pair."""
        call = f"{name}({', '.join(a.name for a in args)})"
        env = [replace(v, fresh=False) if v in args else v for v in env]  # a helper may return a view of them
        if len(results) == 1:
            return self.define(env, self.name(), Expr(call, call, *results[0], True, frozenset({args[0].name})))
        names = [self.name() for _ in results]
        self.emit(f"{', '.join(names)} = {call}")
        env = [v for v in env if v.name not in names]
        return env + [Var(n, shape, max(bound, 1.0)) for n, (shape, bound) in zip(names, results)]

    def define_helper(self, args, depth):
        name = f"helper{len(self.signatures) + len(self.pending) + 1}"
        self.pending.append(name)
        self.note("helper")
        params = [Var(p, a.shape, a.bound) for p, a in zip("pq", args)]
        pair = self.c.flip(25)
        saved = (self.lines, self.indent, self.protected, self.loops, self.ints, self.returns, self.early)
        self.lines, self.indent, self.protected, self.loops, self.ints, self.early = [], 1, frozenset(), 1, [], []
        self.returns = False if pair else params[0].shape  # early returns give a value shaped like the first
        try:
            self.lines.append((0, f"def {name}({', '.join(p.name for p in params)}):", None))
            inner = self.statements(params, self.c.integer(0, 2), depth + 1)
            results = [self.expression(inner) for _ in range(1 + pair)]
            if not pair:
                results = [self.coerce(results[0], params[0].shape)]
            self.note(f"helper:returns-{len(results)}")
            self.emit(*(f"return {', '.join(getattr(r, column) for r in results)}" for column in ("plain", "probe")))
            self.helpers.append(self.lines)
        finally:
            early = self.early
            self.lines, self.indent, self.protected, self.loops, self.ints, self.returns, self.early = saved
        self.pending.remove(name)
        results = [(r.shape, max([r.bound] + early)) for r in results]
        self.signatures.append((name, [(a.shape, a.bound) for a in args], results))
        return name, results

    def stack(self, env, depth):
        """Collect states in a list with `.append` and stack them."""
        seed_var = self.pick(env, lambda v: v.ndim <= 1)
        if seed_var is None:
            return self.assign(env, depth)
        items, state = self.name("hs"), self.name("h")
        env = self.define(env, state, self.fmt("np.tanh({0:x})", ref(seed_var), bound=1.0))
        self.emit(f"{items} = []")
        trips = self.c.integer(1, 4)
        i = f"i{depth}" if depth else "i"
        self.emit(f"for {i} in range({trips}):")
        with self.loop(env, trips, [(i, trips - 1)]):
            new = self.mix(env[-1], self.expression(env), True)
            self.define(env, state, new)
            self.emit(f"{items}.append({state})")
            early = self.c.flip(25)
            if early:  # then the list's length depends on the data: only its sum over items is used
                self.jump(env)
        how = self.c.choice(["np.stack({0})", "np.stack({0}, axis=-1)", "np.array({0})"])
        self.note(f"stack:{how.split('(')[0]}")
        if early:
            how = "np.sum(np.stack({0}) ** 2, axis=0)"
        e = self.fmt(how, Expr(items, items, (trips,) + seed_var.shape, 1.0, True), bound=trips)
        env = [replace(v, fresh=False) if v.name == state else v for v in env]
        return self.define(env, self.name(), e) if e else env

    # --- nested containers ------------------------------------------------------------------------
    # Containers as real NumPy code has them: nested lists (and tuples) of elements and arrays passed to
    # np.array, joins mixing arrays with lists of scalars, lists of same-shape arrays reduced, np.split
    # pieces, tuples of arrays appended in loops and unpacked, dicts of tuples, nested indexing, tuple and
    # list `+` and `*`, loops over tuple literals. An item that is not a name (`p["l2"][0]`) is passed to
    # `expression` as a Var named by that text: expressions only read their operands, never assign them.

    def slot(self, parts, e: Expr) -> str:
        """The template field of `e`, appended to `parts`."""
        parts.append(e)
        return f"{{{len(parts) - 1}:x}}"

    def share(self, env, exprs):
        """`env` with the variables `exprs` may share data with marked as not owning it."""
        shared = frozenset().union(*(e.views for e in exprs))
        return [replace(v, fresh=False) if v.name in shared else v for v in env]

    def element(self, env) -> Expr:
        """A scalar: a scalar variable, or one element `v[k]`, `A[k, l]` (`v[i]` with a loop index that fits)."""
        var = self.pick(env)
        if var.ndim == 0:
            return ref(var)
        fits = [i for i, top in self.ints if top < var.shape[0]]
        if fits and self.c.flip(25):
            first = self.c.choice(fits)
        else:
            first = str(self.c.integer(-var.shape[0], var.shape[0] - 1))
        keys = [first] + [str(self.c.integer(-n, n - 1)) for n in var.shape[1:]]
        return self.fmt(f"{{0}}[{', '.join(keys)}]", ref(var), bound=var.bound, view=True)

    def scalar(self, env) -> Expr:
        """An element, maybe through a unary function, negated, scaled, or times another element."""
        e = self.element(env)
        how = self.c.choice(["element", "unary", "neg", "product", "scaled"], [4, 3, 1, 1, 1])
        if how == "unary":
            return self.unary(e)
        if how == "neg":
            return self.fmt("-{0}", e, bound=e.bound, atom=False)
        if how == "product":
            other = self.element(env)
            return self.tame(self.fmt("{0} * {1}", e, other, bound=e.bound * other.bound, atom=False))
        if how == "scaled":
            k = const(self.c.choice(CONSTANTS))
            return self.fmt("{0} * {1}", e, k, bound=e.bound * k.bound, atom=False)
        return e

    def scalars(self, env, parts, n, brackets="[]") -> str:
        """A list (or tuple) literal of `n` scalars, after the first maybe constants; fields go to `parts`."""
        items = [self.c.choice(CONSTANTS) if k and self.c.flip(20) else self.slot(parts, self.scalar(env))
                 for k in range(n)]
        return _sequence(items, brackets)

    def literal(self, env):
        """`np.array` / `np.asarray` of a rotation matrix, a grid of scalars, or rows that are arrays or lists."""
        fn = self.c.choice(["np.array", "np.asarray"])
        form = self.c.choice(["grid", "rotation", "vector", "rows"])
        parts = []
        if form == "rotation":
            s = self.slot(parts, self.scalar(env))
            text = f"[[np.cos({s}), -np.sin({s})], [np.sin({s}), np.cos({s})]]"
        elif form == "vector":
            text = self.scalars(env, parts, self.c.integer(1, 4), self.c.choice(["[]", "()"]))
        elif form == "grid":
            rows, cols, brackets = self.c.integer(1, 3), self.c.integer(2, 3), self.c.choice(["[]", "()"])
            text = _sequence([self.scalars(env, parts, cols, brackets) for _ in range(rows)], "[]")
        else:
            a = self.operand(env, lambda v: v.ndim == 1)
            if a is None:
                return None
            rows = [self.slot(parts, a)]
            for _ in range(self.c.integer(1, 2)):
                if self.c.flip(50):
                    rows.append(self.scalars(env, parts, a.shape[0], self.c.choice(["[]", "()"])))
                else:
                    rows.append(self.slot(parts, self.operand(env, lambda v: v.shape == a.shape)))
            text = _sequence(rows[::-1] if self.c.flip(30) else rows, "[]")
        self.note(f"literal:{form}")
        return self.fmt(f"{fn}({text})", *parts, bound=max([p.bound for p in parts] + [3.0]))

    def mixed_join(self, env):
        """concatenate / hstack / vstack / stack / column_stack / block of arrays and lists of scalars."""
        a = self.operand(env, lambda v: v.ndim >= 1)
        if a is None:
            return None
        form = self.c.choice(["ends", "concatenate", "hstack", "vstack", "stack", "column_stack", "block"])
        self.note(f"join-mixed:{form}")
        if form == "ends" and a.ndim == 1:
            return self.fmt("np.concatenate([[{0}[0]], np.diff({0:x}), [-{0}[-1]]])", a, bound=2 * a.bound)
        form = {"ends": "concatenate", "stack": "stack" if a.ndim == 1 else "vstack"}.get(form, form)
        parts, n, keywords = [], a.shape[0], ""
        items = [self.slot(parts, a)]
        if form in ("concatenate", "hstack") and a.ndim == 1:
            items.append(self.scalars(env, parts, self.c.integer(1, 2)))
            if self.c.flip(40):
                items.append(self.slot(parts, self.operand(env, lambda v: v.ndim == 1)))
            if form == "hstack" and self.c.flip(40):
                items.append(self.slot(parts, self.scalar(env)))  # a bare scalar: hstack makes it 1-d
        elif form == "concatenate":  # a row under a matrix
            items.append(_sequence([self.scalars(env, parts, a.shape[1])], "[]"))
        elif form == "hstack":  # a column beside it
            items.append(_sequence([self.scalars(env, parts, 1) for _ in range(n)], "[]"))
        elif form in ("vstack", "stack"):
            items.append(self.scalars(env, parts, a.shape[-1], self.c.choice(["[]", "()"])))
            keywords = ", axis=-1" if form == "stack" and self.c.flip(30) else ""
        elif form == "column_stack":
            items.append(self.scalars(env, parts, n))
        elif a.ndim == 1:  # np.block: arrays and scalars at one depth
            if self.c.flip(50):
                b = self.slot(parts, self.operand(env, lambda v: v.shape == a.shape))
                end = self.c.choice(CONSTANTS) if self.c.flip(50) else self.slot(parts, self.scalar(env))
                items = [f"[{items[0]}, {self.slot(parts, self.scalar(env))}]", f"[{b}, {end}]"]
            else:
                items += [self.slot(parts, self.scalar(env)), self.c.choice(CONSTANTS)]
        else:
            if self.c.flip(50):
                b = self.slot(parts, self.operand(env, lambda v: v.ndim == 2 and v.shape[0] == n))
                items = [f"[{items[0]}, {b}]"]
            else:
                b = self.slot(parts, self.operand(env, lambda v: v.ndim == 2 and v.shape[1] == a.shape[1]))
                items = [f"[{items[0]}]", f"[{b}]"]
        if self.c.flip(30):
            items = items[::-1]
        template = f"np.{form}([{', '.join(items)}]{keywords})"
        return self.fmt(template, *parts, bound=max([p.bound for p in parts] + [3.0]))

    def list_reduce(self, env):
        """np.mean / np.sum / np.std of a list of same-shape arrays (or scalars), maybe along axis 0."""
        items = [self.operand(env)]
        for _ in range(self.c.integer(1, 2)):
            b = self.operand(env, lambda v: v.shape == items[0].shape)
            if any(b.plain == item.plain for item in items):  # not all equal: std would be 0, a kink
                b = self.fmt("np.sin({0:x})", b, bound=1.0)
            items.append(b)
        fn = self.c.choice(["mean", "sum", "std"])
        self.note(f"list-reduce:{fn}")
        axis = self.c.choice(["", ", axis=0"])
        fields = ", ".join(f"{{{k}:x}}" for k in range(len(items)))
        bound = max(item.bound for item in items)
        if fn == "sum":
            bound *= len(items) * (1 if axis else int(np.prod(items[0].shape)))
        probe = f"_std([{fields}]{axis})" if fn == "std" else None
        return self.fmt(f"np.{fn}([{fields}]{axis})", *items, bound=bound, probe=probe)

    def split_spec(self, n):
        """(function, sections text, number of pieces) splitting a length-n axis in pieces of 1 or more."""
        form = self.c.choice(["split", "array_split", "indices"])
        self.note(f"split:{form}")
        if form == "split":
            k = self.c.choice([d for d in range(2, n + 1) if n % d == 0])
            return "split", str(k), k
        if form == "array_split":
            k = self.c.integer(2, n)
            return "array_split", str(k), k
        return "split", f"[{self.c.integer(1, n - 1)}]", 2

    def split_axis(self, shape):
        axis = self.c.choice([k for k, n in enumerate(shape) if n >= 2])
        return axis, ("" if axis == 0 and self.c.flip(50) else f", axis={axis}")

    def split_part(self, env):
        """One piece of np.split / np.array_split: `np.split(x, 2)[1]`."""
        a = self.operand(env, lambda v: max(v.shape, default=0) >= 2)
        if a is None:
            return None
        axis, keyword = self.split_axis(a.shape)
        fn, sections, k = self.split_spec(a.shape[axis])
        j = self.c.integer(-k, k - 1)
        e = self.fmt(f"np.{fn}({{0:x}}, {sections}{keyword})[{j}]", a, bound=a.bound, view=True)
        return _a_view(e)

    def nested_pick(self, env):
        """An item read back out of a container literal: `{"a": (w,)}["a"][0]`, `[(x, y)][0][1]`."""
        a, b = self.operand(env), self.operand(env)
        template = self.c.choice(['{{"a": ({0:x},)}}["a"][0]', "[({0:x}, {1:x})][0][1]",
                                  "(({0:x}, {1:x}), [{1:x}, {0:x}])[1][1]", 'dict(p={0:x}, q=({1:x}, {0:x}))["q"][0]',
                                  "[[{0:x}], ({1:x},)][-1][0]"])
        self.note("nested-pick")
        e = _a_view(self.fmt(template, a, b, bound=max(a.bound, b.bound), view=True))
        return self.unary(e) if self.c.flip(50) else e

    SEQUENCES = ("np.hstack({s} + ({1:x},))", "np.concatenate({s} + [{1:x}])", "np.stack({s} * 2)",
                 "np.vstack({s} + ({1:x},))", "np.sum({s} * 2 + [{1:x}], axis=0)", "np.column_stack({s} + [{1:x}])",
                 "np.mean({s} * 3, axis=0)", "np.concatenate({s} * 2 + [{1:x}])", "np.hstack({s} * 2 + ({1:x},))")

    def sequence_ops(self, env):
        """Tuple and list `+` and `*` inside a join: `np.hstack((x,) + (y,))`, `np.stack([x] * 2)`."""
        template = self.c.choice(self.SEQUENCES)
        inline = template.replace("{s}", "({0:x},)" if "({1:x},)" in template else "[{0:x}]")
        self.note("sequence:inline")
        return self.sequence_expr(env, inline, inline)

    def sequence_expr(self, env, inline, text, a=None):
        """`inline` (parts {0} and {1}) for an `a` and an operand that fit it, written as `text`."""
        if a is None:
            a = self.operand(env, lambda v: self.shape_of(inline, [v, v]) is not None)
        if a is None:
            return None
        b = self.operand(env, lambda v: self.shape_of(inline, [a, v]) is not None) or a
        copies = 4 if "* 3" in inline else 3 if "* 2 +" in inline else 2
        e = self.fmt(inline, a, b, bound=max(a.bound, b.bound) * (copies if "np.sum" in inline else 1))
        if e is None:
            return None
        parts = (_Part(a.plain, a.atom), _Part(b.plain, b.atom)), (_Part(a.probe, a.atom), _Part(b.probe, b.atom))
        return replace(e, plain=text.format(*parts[0]), probe=text.format(*parts[1]))

    # statements

    def nested(self, env, depth):
        """A statement with nested containers (each form a feature family of its own)."""
        forms = [self.elements, self.dict_of_tuples, self.nested_list, self.sequence_names, self.split_names,
                 self.dict_call] + ([self.layers, self.loop_over_items] if depth < 2 else [])
        return self.c.choice(forms)(env, depth)

    def elements(self, env, depth):
        """Scalars read out of arrays (`x0 = v[0]`), then an `np.array` of nested lists of them."""
        self.note("elements")
        for _ in range(self.c.integer(1, 2)):
            env = self.define(env, self.name("x"), self.element(env))
        e = self.literal(env)
        return self.define(env, self.name("M"), self.tame(e)) if e else env

    def dict_of_tuples(self, env, depth):
        """`p = {"l1": (A, b), "l2": (c,)}` (or `dict(l1=..., l2=...)`), `W, c = p["l1"]`, and a read of both."""
        name = self.name("p")
        first = [self.operand(env) for _ in range(self.c.integer(2, 3))]
        second = [self.operand(env)]
        call = self.c.flip(30)
        self.note("dict-tuples:" + ("call" if call else "literal"))
        texts = []
        for column in ("plain", "probe"):
            one, two = (_sequence([getattr(e, column) for e in values], "()") for values in (first, second))
            texts.append(f"dict(l1={one}, l2={two})" if call else f'{{"l1": {one}, "l2": {two}}}')
        self.emit(f"{name} = {texts[0]}", f"{name} = {texts[1]}")
        env = self.share(env, first + second)
        names = [self.name() for _ in first]
        self.emit(f'{", ".join(names)} = {name}["l1"]')
        new = [Var(n, e.shape, max(e.bound, 1.0)) for n, e in zip(names, first)]
        env = [v for v in env if v.name not in names] + new
        extra = Var(f'{name}["l2"][0]', second[0].shape, max(second[0].bound, 1.0))
        return self.define(env, self.name(), self.expression(new + [extra]))

    def nested_list(self, env, depth):
        """A list or tuple of tuples and lists, `nested = [(x, y), [z]]`, read back as `nested[0][1]`."""
        name = self.name("nested")
        groups = [[self.operand(env) for _ in range(self.c.integer(1, 2))] for _ in range(self.c.integer(1, 3))]
        shapes = [self.c.choice(["()", "[]"]) for _ in groups]
        outer = self.c.choice(["[]", "()"])
        self.note("nested-index")
        texts = [_sequence([_sequence([getattr(e, column) for e in group], brackets)
                            for group, brackets in zip(groups, shapes)], outer) for column in ("plain", "probe")]
        self.emit(f"{name} = {texts[0]}", f"{name} = {texts[1]}")
        env = self.share(env, [e for group in groups for e in group])
        items = []
        for i, group in enumerate(groups):
            for j, e in enumerate(group):
                key = i - len(groups) if self.c.flip(25) else i
                items.append(Var(f"{name}[{key}][{j}]", e.shape, max(e.bound, 1.0)))
        return self.define(env, self.name(), self.expression(items))

    def sequence_names(self, env, depth):
        """`args = (h,)` then `np.hstack(args + (other,))`; `xs = [h]` then `np.stack(xs * 2)`, `xs + [other]`."""
        template = self.c.choice(self.SEQUENCES)
        packed = "({0:x},)" if "({1:x},)" in template else "[{0:x}]"
        inline = template.replace("{s}", packed)
        a = self.operand(env, lambda v: self.shape_of(inline, [v, v]) is not None)
        if a is None:
            return self.assign(env, depth)
        name = self.name("args" if packed[0] == "(" else "xs")
        self.note("sequence:named-" + ("tuple" if packed[0] == "(" else "list"))
        e = self.sequence_expr(env, inline, template.replace("{s}", name), a)
        self.emit(*(f"{name} = {packed.format(_Part(text, a.atom))}" for text in (a.plain, a.probe)))
        env = self.share(env, [a])
        return self.define(env, self.name(), self.tame(e)) if e else env

    def split_names(self, env, depth):
        """`p, q = np.split(x, 2)` (np.array_split, at indices, along an axis), or `parts = ...` and `parts[k]`."""
        a = self.pick(env, lambda v: max(v.shape, default=0) >= 2)
        if a is None:
            return self.assign(env, depth)
        axis, keyword = self.split_axis(a.shape)
        fn, sections, k = self.split_spec(a.shape[axis])
        call = f"np.{fn}({a.name}, {sections}{keyword})"
        shapes = [piece.shape for piece in getattr(np, fn)(np.zeros(a.shape), eval(sections), axis=axis)]
        env = [replace(v, fresh=False) if v.name == a.name else v for v in env]  # the pieces are views of it
        if k <= 4 and self.c.flip(50):
            self.note("split:unpack")
            names = [self.name() for _ in shapes]
            self.emit(f"{', '.join(names)} = {call}")
            return [v for v in env if v.name not in names] + [Var(n, s, a.bound) for n, s in zip(names, shapes)]
        self.note("split:named")
        parts = self.name("parts")
        self.emit(f"{parts} = {call}")
        return self.define(env, self.name(), self.expression([Var(f"{parts}[{j}]", s, a.bound)
                                                               for j, s in enumerate(shapes)]))

    def dict_call(self, env, depth):
        """`d = dict(a=u, b=v)` and an expression reading `d["a"]`, `d["b"]`."""
        x, y = self.pick(env), self.pick(env)
        name = self.name("d")
        self.note("dict-call")
        self.emit(f"{name} = dict(a={x.name}, b={y.name})")
        env = [replace(v, fresh=False) if v.name in (x.name, y.name) else v for v in env]
        items = [Var(f'{name}["{key}"]', var.shape, var.bound) for key, var in zip("ab", (x, y))]
        return self.define(env, self.name(), self.expression(items))

    def layers(self, env, depth):
        """Tuples (or lists) of arrays appended in a loop, then unpacked (`W, b = layers[k]`), indexed
        (`layers[k][1]`) or looped over (`for pair in layers:` then `W, b = pair`)."""
        seed_var = self.pick(env)
        items, state = self.name("layers"), self.name("h")
        env = self.define(env, state, self.fmt("np.tanh({0:x})", ref(seed_var), bound=1.0))
        self.emit(f"{items} = []")
        trips, width, brackets = self.c.integer(1, 3), self.c.choice([2, 1, 3]), self.c.choice(["()", "[]"])
        i = f"i{depth}" if depth else "i"
        self.emit(f"for {i} in range({trips}):")
        with self.loop(env, trips, [(i, trips - 1)]):
            h = env[-1]
            entries = [self.fmt("{0} * {1}", ref(h), const(self.c.choice(CONSTANTS)), bound=3 * h.bound, atom=False)
                       if self.c.flip(50) else self.expression(env) for _ in range(width)]
            update = self.mix(h, self.expression(env), True)
            first = self.c.flip(30)  # update the state before appending (the entries then read the new one)
            if first:
                self.define(env, state, update)
            self.emit(*(f"{items}.append({_sequence([getattr(e, column) for e in entries], brackets)})"
                        for column in ("plain", "probe")))
            if not first:
                self.define(env, state, update)
        env = self.share([replace(v, fresh=False) if v.name == state else v for v in env], entries)
        read = self.c.choice(["unpack", "index", "loop"] if depth < 2 else ["unpack", "index"])
        self.note(f"layers:{read}")
        k = self.c.integer(-trips, trips - 1)
        names = [self.name("w") for _ in entries]
        new = [Var(n, e.shape, max(e.bound, 1.0)) for n, e in zip(names, entries)]
        if read == "unpack":
            self.emit(f"{', '.join(names)}{',' * (width == 1)} = {items}[{k}]")
            return [v for v in env if v.name not in names] + new
        if read == "index":
            return self.define(env, self.name(), self.expression([Var(f"{items}[{k}][{j}]", e.shape, e.bound)
                                                                   for j, e in enumerate(entries)]))
        if width > 1 and self.c.flip(35):  # `for W, b in layers:`
            self.note("layers:loop-unpack")
            header = f"for {', '.join(names)} in {items}:"
            return self.loop_body(env, depth, header, header, trips, [], new)
        pair = self.name("pair")
        if self.c.flip(50):
            header, ints = f"for {pair} in {items}:", []
        else:
            index = self.name("k")
            header, ints = f"for {index}, {pair} in enumerate({items}):", [(index, trips - 1)]
        unpack = f"{', '.join(names)}{',' * (width == 1)} = {pair}"
        return self.loop_body(env, depth, header, header, trips, ints, new, first=[unpack])

    def loop_over_items(self, env, depth):
        """`for t in (h, h * 2.0):` over a tuple or list literal of same-shape values, or a named tuple."""
        h = self.pick(env)
        values = [ref(h)] + [self.same_shape(env, h) for _ in range(self.c.integer(1, 2))]
        form = self.c.choice(["tuple", "list", "named", "enumerate"])
        self.note(f"loop-items:{form}")
        sequences = [_sequence([getattr(e, column) for e in values], "[]" if form == "list" else "()")
                     for column in ("plain", "probe")]
        if form == "named":
            name = self.name("pair")
            self.emit(f"{name} = {sequences[0]}", f"{name} = {sequences[1]}")
            sequences = [name, name]
        item, ints = self.name("t"), []
        targets = item
        if form == "enumerate":
            index = self.name("k")
            targets, ints = f"{index}, {item}", [(index, len(values) - 1)]
            sequences = [f"enumerate({text})" for text in sequences]
        env = self.share(env, values)
        headers = [f"for {targets} in {text}:" for text in sequences]
        var = Var(item, h.shape, max(e.bound for e in values))
        return self.loop_body(env, depth, headers[0], headers[1], len(values), ints, [var])

    def same_shape(self, env, h: Var) -> Expr:
        """A value shaped like `h`: `h * 2.0`, or `h` plus an expression that broadcasts to it."""
        if self.c.flip(50):
            return self.fmt("{0} * {1}", ref(h), const(self.c.choice(CONSTANTS)), bound=h.bound * 3, atom=False)
        e = self.coerce(self.expression(env), h.shape)
        return self.tame(self.fmt("{0} + {1}", ref(h), e, bound=h.bound + e.bound, atom=False))

    def finish(self, env):
        """`return` a scalar built from the most recent variable and up to two others."""
        chosen = [env[-1]] + [self.pick(env) for _ in range(self.c.integer(0, 2))]
        terms = []
        for var in dict.fromkeys(chosen):
            form = self.c.choice(["np.sum({0})", "np.mean({0})", "0.5 * np.sum(np.sin({0}))", "np.sum({0} ** 2)"])
            terms.append(form.format(var.name) if var.ndim else form.format(var.name).replace("np.sum", "").replace(
                "np.mean", ""))
        self.emit("return " + " + ".join(terms))


def build(chooser: Chooser) -> Program:
    """A random program: `fuzzed(a[, b[, c]])` returning a scalar, with its helpers."""
    d0, d1 = chooser.integer(2, 4), chooser.integer(2, 4)
    options = [(), (d0,), (d0, d1), (d1,), (d1, d0), (1, d1), (d0, 1)]
    shapes = tuple(chooser.choice(options) for _ in range(chooser.integer(1, 3)))
    builder = Builder(chooser)
    builder.used.update("abc")
    env = [Var(name, shape, INPUT_BOUND) for name, shape in zip("abc", shapes)]
    env = builder.statements(env, chooser.integer(1, 6), 0)
    builder.finish(env)
    header = f"def {ENTRY}({', '.join('abc'[: len(shapes)])}):"
    functions = builder.helpers + [[(0, header, None)] + builder.lines]
    imports = sorted(builder.imports | {"import numpy as np"}, key=lambda line: (line.startswith("from"), line))
    return Program(_render(functions, 1, imports), _render(functions, 2, imports), shapes, tuple(builder.features))


def _render(functions, column, imports):
    blocks = ["\n".join("    " * line[0] + (line[column] if line[column] is not None else line[1])
                        for line in function) for function in functions]
    return "\n".join(imports) + "\n\n\n" + "\n\n\n".join(blocks) + "\n"


@st.composite
def programs(draw) -> Program:
    """A hypothesis strategy of `Program`s."""
    return build(DrawChooser(draw))

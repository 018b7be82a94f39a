"""Python as people write NumPy model code, expressions: the `Builder` (generator.py) mixes these in.

Expressions (`Idioms.idiom_expression`, weights in EXPRESSION_IDIOMS):
  builtin               `abs`, `sum` of a list or of an array's rows, `max`/`min` of two scalars, of a list
                        of scalars or of a vector, `pow`, `len`
  math                  `math.exp/log/sqrt/sin/cos/tanh` of scalar elements (`math.sin(x[0])`)
  round                 `v * round(s)`, `round(s, 1)`: no gradient through it, kinks at the half steps probed
  comprehension         `np.stack([... for i in range(n) if i != k])`, `sum(... for w in (x, y))`, over rows,
                        zip and enumerate, with `if`s on indices; sometimes its variable shadows a local
  nested-comprehension  `np.array([[a[i] * b[j] for j in range(m)] for i in range(n)])`, double generators
  map                   `sum(map(lambda w: ..., (x, y)))`, `np.stack(list(map(np.tanh, [x, y])))`
  library               `functools.reduce(lambda p, q: ..., [x, y])`, `np.add.reduce(x)`,
                        `np.multiply.outer(a, b)`, `np.maximum.accumulate(x)`, `np.vectorize(np.tanh)(x)`,
                        `sum(k * ... for k, v in enumerate(xs, 1))`, `(w := ...) * w`

Statements: idiom_statements.py.

Every form keeps the Builder's invariants: shapes known, bounds tracked, kinks written twice (`relu` and
`abs`, `max`, `min`, `round` go through `Probe` in the probe source).
"""
from __future__ import annotations

from contextlib import contextmanager, nullcontext

import numpy as np

from .values import CONSTANTS, Expr, Var, _Part, _sequence, ref

EXPRESSION_WEIGHT = 3   # how often `expression` writes one of these (the built-in forms weigh 1 to 5)
EXPRESSION_IDIOMS = {"builtin": 4, "math": 2, "round": 1, "comprehension": 4, "nested-comprehension": 2, "map": 2,
                     "library": 2}

# Functions passed around as values: text, definition (module-level lines: (indent, plain, probe)), and the
# bound of the result from the operand's.
FUNCTIONS = {
    "np.tanh": (None, lambda b: 1.0),
    "np.sin": (None, lambda b: 1.0),
    "np.cos": (None, lambda b: 1.0),
    "np.arctan": (None, lambda b: 1.6),
    "relu": ([(0, "def relu(z):", None), (1, "return np.maximum(z, 0.0)", "return _maximum(z, 0.0)")], lambda b: b),
    "softplus": ([(0, "def softplus(z):", None), (1, "return np.log(1.0 + np.exp(z))", None)], lambda b: b + 0.7),
    "swish": ([(0, "def swish(z):", None), (1, "return z / (1.0 + np.exp(-z))", None)], lambda b: b),
    "(lambda z: z * np.cos(z))": (None, lambda b: b),
    "(lambda z: np.sin(2.0 * z) + 0.5)": (None, lambda b: 1.5),
    "Scaled(0.5)": ([(0, "class Scaled:", None), (1, "def __init__(self, k):", None), (2, "self.k = k", None),
                     (1, "def __call__(self, z):", None), (2, "return self.k * np.tanh(z)", None)], lambda b: 0.5),
    "HALF": ([(0, "class Halve:", None), (1, "def __call__(self, z):", None), (2, "return 0.5 * z", None),
              (0, "HALF = Halve()", None)], lambda b: 0.5 * b),
}


def both(template, *parts):
    """(plain, probe): `template` filled with the parts' texts; a part that is a str is the same in both."""
    return tuple(template.format(*(_Part(getattr(p, column), p.atom) if isinstance(p, Expr) else _Part(p, True)
                                   for p in parts)) for column in ("plain", "probe"))


class Idioms:
    """Forms for the `Builder`: read its docstring (generator.py) for the bookkeeping they share."""

    # --- shared -------------------------------------------------------------------------------------

    def library(self, name, lines, imports=()):
        """Add a module-level definition once (a helper, class or namedtuple the program uses)."""
        self.imports.update(imports)
        if name not in self.defined:
            self.defined.add(name)
            self.helpers.append(lines)

    @contextmanager
    def outside(self):
        """Writing a module-level definition: no loop indices or protected names of the function around."""
        saved = self.ints, self.protected, self.loops
        self.ints, self.protected, self.loops = [], frozenset(), 1
        try:
            yield
        finally:
            self.ints, self.protected, self.loops = saved

    @contextmanager
    def in_scope(self, name, top):
        """A comprehension's index in scope for the expressions of its body."""
        self.ints.append((name, top))
        try:
            yield
        finally:
            self.ints.remove((name, top))

    def function(self):
        """(text, bound function) of a function value, its definition added."""
        text = self.c.choice(list(FUNCTIONS))
        lines, bound = FUNCTIONS[text]
        if lines:
            self.library(text.split("(")[0], lines)
        self.note("function:" + ("lambda" if "lambda" in text else text.split("(")[0]))
        return text, bound

    def made(self, template, *parts, shape, bound, probe=None, atom=True):
        """Like `fmt`, for a template `fmt` cannot evaluate (it calls the program's own functions)."""
        if len(shape) > 2 or not 1 <= int(np.prod(shape)) <= 40:
            return None
        plain, probed = both(template, *parts)
        if probe is not None:
            probed = both(probe, *parts)[1]
        return Expr(plain, probed, tuple(shape), max(float(bound), 1.0), atom)

    def similar(self, env, e: Expr) -> Expr:
        """A value shaped like `e`, not the same text (so items of a loop or list differ)."""
        var = self.pick(env, lambda v: v.shape == e.shape and v.name != e.plain)
        if var is not None and self.c.flip(50):
            return ref(var)
        k = self.c.choice(CONSTANTS)
        return self.fmt("np.sin({0:x}) * " + k, e, bound=abs(float(k)), atom=False)

    def emit_both(self, template, *parts):
        self.emit(*both(template, *parts))

    # --- expressions --------------------------------------------------------------------------------

    def idiom_expression(self, env):
        forms = {"builtin": self.builtin, "math": self.math_scalar, "round": self.rounded,
                 "comprehension": self.comprehension, "nested-comprehension": self.nested_comprehension,
                 "map": self.mapped, "library": self.library_call}
        name = self.c.choice(list(forms), [EXPRESSION_IDIOMS[k] for k in forms])
        return forms[name](env)

    def builtin(self, env):
        form = self.c.choice(["abs", "sum-list", "sum-rows", "max2", "min2", "max-list", "min-list", "max-vector",
                              "min-vector", "pow", "pow-mixed", "len"])
        self.note(f"builtin:{form}")
        if form == "abs":
            a = self.operand(env)
            return self.fmt("abs({0:x})", a, bound=a.bound, probe="_abs({0:x})")
        if form == "sum-list":
            a = self.operand(env)
            items = [a] + [self.similar(env, a) for _ in range(self.c.integer(1, 2))]
            fields = ", ".join(f"{{{k}:x}}" for k in range(len(items)))
            brackets = self.c.choice(["[{0}]", "({0})"])
            return self.fmt(f"sum({brackets.format(fields)})", *items, bound=sum(e.bound for e in items))
        if form in ("sum-rows", "len"):
            a = self.operand(env, lambda v: v.ndim >= 1)
            if a is None:
                return None
            if form == "len":
                return self.fmt("np.sum({0:x}) / len({0:x})", a, bound=a.bound)
            return self.fmt("sum({0:x})", a, bound=a.bound * a.shape[0])
        if form in ("max2", "min2", "max-list", "min-list"):
            items = [self.scalar(env) for _ in range(2 if form.endswith("2") else self.c.integer(1, 3))]
            fields = ", ".join(f"{{{k}:x}}" for k in range(len(items)))
            fn = form[:3]
            if form.endswith("2"):
                probe = f"_maximum({fields})" if fn == "max" else "-_maximum(-{0}, -{1})"
                return self.fmt(f"{fn}({fields})", *items, bound=max(e.bound for e in items), probe=probe)
            negated = ", ".join(f"-{{{k}}}" for k in range(len(items)))
            probe = f"_max(np.array([{fields}]))" if fn == "max" else f"-_max(np.array([{negated}]))"
            return self.fmt(f"{fn}([{fields}])", *items, bound=max(e.bound for e in items), probe=probe)
        if form in ("max-vector", "min-vector"):
            a = self.operand(env, lambda v: v.ndim == 1)
            if a is None:
                return None
            probe = "_max({0:x})" if form == "max-vector" else "-_max(-{0})"
            return self.fmt(f"{form[:3]}({{0:x}})", a, bound=a.bound, probe=probe)
        if form == "pow":
            a = self.operand(env)
            return self.fmt("pow({0:x}, 2)", a, bound=a.bound ** 2)
        a = self.operand(env)
        b = self.operand(env, lambda v: self.shape_of("{0} + {1}", [a, v]) is not None) or a
        return self.fmt("pow(1.5 + np.sin({0:x}), np.tanh({1:x}))", a, b, bound=2.5)

    def library_call(self, env):
        """A call of the standard library or a ufunc method that tapegen writes out as NumPy code."""
        form = self.c.choice(["reduce", "ufunc-reduce", "outer", "accumulate", "vectorize", "enumerate-start",
                              "walrus"])
        self.note(f"library:{form}")
        if form in ("reduce", "enumerate-start"):
            a = self.operand(env)
            items = [a] + [self.similar(env, a) for _ in range(self.c.integer(1, 2))]
            fields = ", ".join(f"{{{k}:x}}" for k in range(len(items)))
            if form == "reduce":
                self.imports.add("import functools")
                return self.fmt(f"functools.reduce(lambda p, q: p + np.sin(q), [{fields}])", *items,
                                bound=a.bound + len(items))
            return self.fmt(f"sum(k * np.tanh(v) for k, v in enumerate([{fields}], 1))", *items,
                            bound=sum(range(1, len(items) + 1)))
        if form == "walrus":
            a = self.operand(env)
            name = self.name("w")
            return self.fmt(f"({name} := np.tanh({{0:x}})) * {name}", a, bound=1.0, atom=False)
        if form == "outer":
            a = self.operand(env, lambda v: v.ndim == 1)
            b = self.operand(env, lambda v: v.ndim == 1)
            if a is None or b is None:
                return None
            return self.fmt("np.multiply.outer({0:x}, {1:x})", a, b, bound=a.bound * b.bound)
        a = self.operand(env, lambda v: v.ndim >= 1)
        if a is None:
            return None
        if form == "ufunc-reduce":
            return self.fmt("np.add.reduce({0:x})", a, bound=a.bound * a.shape[0])
        if form == "accumulate":
            return self.fmt("np.maximum.accumulate({0:x})", a, bound=a.bound,
                            probe="_maximum_accumulate({0:x})")
        return self.fmt("np.vectorize(np.tanh)({0:x})", a, bound=1.0)

    def math_scalar(self, env):
        e = self.scalar(env)
        fn = self.c.choice(["exp", "log", "sqrt", "sin", "cos", "tanh", "pi"])
        self.imports.add("import math")
        self.note(f"math:{fn}")
        if fn == "exp":
            inner = "{0:x}" if e.bound <= 2.0 else "math.tanh({0:x})"
            return self.fmt(f"math.exp({inner})", e, bound=7.4 if e.bound <= 2.0 else 2.8)
        if fn == "log":
            return self.fmt("math.log(1.0 + {0} * {0})", e, bound=1.0 + 2.0 * e.bound)
        if fn == "sqrt":
            return self.fmt("math.sqrt({0} * {0} + 0.5)", e, bound=e.bound + 1.0)
        if fn == "pi":
            return self.fmt("math.pi * {0}", e, bound=3.2 * e.bound, atom=False)
        return self.fmt(f"math.{fn}({{0:x}})", e, bound=1.0)

    def rounded(self, env):
        """`v * round(s)`: round has no gradient, and the probe keeps the point off its jumps."""
        a = self.operand(env)
        s = self.scalar(env)
        digits = self.c.choice(["", ", 1"])
        self.note("round" + (":digits" if digits else ""))
        return self.fmt(f"{{0}} * round({{1:x}}{digits})", a, s, bound=a.bound * (s.bound + 1.0),
                        probe=f"{{0}} * _round({{1:x}}{digits})", atom=False)

    def comprehension(self, env):
        """A list comprehension or generator expression, reduced: `np.stack([...])`, `sum(... for ...)`."""
        source = self.c.choice(["range", "items", "rows", "zip", "enumerate"])
        made = self.comprehension_source(env, source)
        if made is None:
            return None
        clause, items, count, parts, ints = made
        names = {v.name for v in items}
        with self.in_scope(*ints) if ints else nullcontext():
            body = self.expression(items + [v for v in env if v.name not in names])
        body = self.coerce(body, items[0].shape if items[0].ndim <= 1 else ())
        how = self.c.choice(["np.stack([{b} {c}])", "sum({b} {c})", "sum([{b} {c}])", "np.array([{b} {c}])",
                             "np.mean([{b} {c}], axis=0)", "np.sum([{b} {c}], axis=0)"])
        self.note(f"comprehension:{source}:{how.split('(')[0]}")
        template = how.format(b="{0:x}", c=clause)
        bound = body.bound * (count if how.startswith(("sum", "np.sum")) else 1)
        return self.fmt(template, body, *parts, bound=bound)

    def comprehension_source(self, env, source):
        """(`for ... in ... if ...` with fields {1}, {2}..., item variables, item count, field values, index)."""
        if source == "range":
            a = self.pick(env, lambda v: v.ndim >= 1)
            if a is None:
                return None
            n, i = a.shape[0], self.name("i")
            condition, kept = self.index_condition(i, n)
            items = [Var(f"{a.name}[{i}]", a.shape[1:], a.bound)]
            return f"for {i} in range({n}){condition}", items, kept, [], (i, n - 1)
        if source == "items":
            first = self.operand(env)
            values = [first] + [self.similar(env, first) for _ in range(self.c.integer(1, 2))]
            name = self.comprehension_name(env, first.shape)
            fields = _sequence([f"{{{k + 1}:x}}" for k in range(len(values))], self.c.choice(["()", "[]"]))
            item = Var(name, first.shape, max(e.bound for e in values))
            return f"for {name} in {fields}", [item], len(values), values, ()
        a = self.pick(env, lambda v: v.ndim >= 1)
        if a is None:
            return None
        row = Var(self.comprehension_name(env, a.shape[1:]), a.shape[1:], a.bound)
        if source == "rows":
            return f"for {row.name} in {{1:x}}", [row], a.shape[0], [ref(a)], ()
        if source == "zip":
            b = self.pick(env, lambda v: v.ndim >= 1)
            other = Var(self.name("q"), b.shape[1:], b.bound)
            return (f"for {row.name}, {other.name} in zip({{1:x}}, {{2:x}})", [row, other],
                    min(a.shape[0], b.shape[0]), [ref(a), ref(b)], ())
        k = self.name("k")
        condition, kept = self.index_condition(k, a.shape[0])
        return f"for {k}, {row.name} in enumerate({{1:x}}){condition}", [row], kept, [ref(a)], (k, a.shape[0] - 1)

    def comprehension_name(self, env, shape):
        """A comprehension variable: new, or (sometimes) a local's name, which it shadows only inside."""
        same = [v for v in env if v.shape == shape and v.name.isidentifier()]
        if same and self.c.flip(15):
            self.note("comprehension:shadow")
            return self.c.choice(same).name
        return self.name("w")

    def index_condition(self, i, n):
        """(` if ...` on a comprehension index in range(n), how many indices it keeps; at least one)."""
        form = self.c.choice(["", "!=", "even", ">", "<="])
        k = self.c.integer(0, n - 1)
        condition = {"": "", "!=": f" if {i} != {k}", "even": f" if {i} % 2 == 0", ">": f" if {i} > {k}",
                     "<=": f" if {i} <= {k}"}[form]
        kept = sum(1 for j in range(n) if eval(condition[4:] or "True", {i: j})) if condition else n
        if kept == 0:
            return "", n
        return condition, kept

    def nested_comprehension(self, env):
        """`np.array([[a[i] * b[j] for j in range(m)] for i in range(n)])` or a double generator summed."""
        a = self.pick(env, lambda v: v.ndim == 1)
        b = self.pick(env, lambda v: v.ndim == 1)
        if a is None:
            return None
        i, j = self.name("i"), self.name("j")
        n, m = a.shape[0], b.shape[0]
        elements = [Var(f"{a.name}[{i}]", (), a.bound), Var(f"{b.name}[{j}]", (), b.bound)]
        with self.in_scope(i, n - 1), self.in_scope(j, m - 1):
            body = self.coerce(self.expression(elements), ())
        condition, kept = self.index_condition(i, n)
        if self.c.flip(50):
            self.note("nested-comprehension:array")
            template = f"np.array([[{{0:x}} for {j} in range({m})] for {i} in range({n}){condition}])"
            return self.fmt(template, body, bound=body.bound)
        inner = self.c.choice(["", f" if {i} <= {j}", f" if {j} != {i}"])
        count = sum(1 for p in range(n) for q in range(m) if eval(inner[4:] or "True", {i: p, j: q}))
        if count == 0:
            inner, count = "", n * m
        self.note("nested-comprehension:generator")
        return self.fmt(f"sum({{0:x}} for {i} in range({n}) for {j} in range({m}){inner})", body,
                        bound=body.bound * count)

    def mapped(self, env):
        """`sum(map(lambda w: ..., (x, y)))`, `np.stack(list(map(f, [x, y])))`, a two-list map."""
        first = self.operand(env)
        values = [first, self.similar(env, first)]
        fields = _sequence(["{1:x}", "{2:x}"], self.c.choice(["()", "[]"]))
        form = self.c.choice(["lambda", "function", "two"])
        self.note(f"map:{form}")
        if form == "function":
            text, bound = self.function()
            reducer = self.c.choice(["np.stack(list({0}))", "sum({0})", "np.mean(list({0}), axis=0)"])
            shape = ((2,) if reducer.startswith("np.stack") else ()) + first.shape
            bound = bound(max(v.bound for v in values)) * (2 if reducer.startswith("sum") else 1)
            fields = fields.replace("{1:x}", "{0:x}").replace("{2:x}", "{1:x}")
            return self.made(reducer.format(f"map({text}, {fields})"), *values, shape=shape, bound=bound)
        w = self.name("w")
        item = Var(w, first.shape, max(v.bound for v in values))
        if form == "two":
            q = self.name("q")
            body = self.expression([item, Var(q, first.shape, item.bound)])
            others = [self.similar(env, first), self.similar(env, first)]
            return self.fmt(f"sum(map(lambda {w}, {q}: {{0:x}}, {fields}, ({{3:x}}, {{4:x}})))", body, *values,
                            *others, bound=2 * body.bound)
        body = self.expression([item] + [v for v in env if v.name != w])
        return self.fmt(f"sum(map(lambda {w}: {{0:x}}, {fields}))", body, *values, bound=2 * body.bound)

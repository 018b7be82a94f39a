"""Python as people write NumPy model code, for the fuzzer's `Builder` (generator.py) to mix in.

Expressions (`Idioms.idiom_expression`, weights in EXPRESSION_IDIOMS):
  builtin               `abs`, `sum` of a list or of an array's rows, `max`/`min` of two scalars, of a list
                        of scalars or of a vector, `pow`, `len`
  math                  `math.exp/log/sqrt/sin/cos/tanh` of scalar elements (`math.sin(x[0])`)
  round                 `v * round(s)`, `round(s, 1)`: no gradient through it, kinks at the half steps probed
  comprehension         `np.stack([... for i in range(n) if i != k])`, `sum(... for w in (x, y))`, over rows,
                        zip and enumerate, with `if`s on indices; sometimes its variable shadows a local
  nested-comprehension  `np.array([[a[i] * b[j] for j in range(m)] for i in range(n)])`, double generators
  map                   `sum(map(lambda w: ..., (x, y)))`, `np.stack(list(map(np.tanh, [x, y])))`

Statements (`Idioms.idiom_statement`, weights in STATEMENT_IDIOMS):
  unpack-loop           `for W, b in pairs:`, `for t, (p, q) in enumerate(zip(xs, ys)):`,
                        `for p, q in zip(*pairs):`, `for k, v in d.items():`, `for k in d:`, over lists of tuples
  dict-comprehension    `{k: ... for k, v in params.items() if k != "q"}`, `{k: params[k] ... for k in params}`
  varargs               helpers with `*args`, keyword-only parameters and `**kwargs`, called with `f(*xs)`,
                        `g(**d)` of lists and dicts the function builds
  function-values       `apply(f, x)`, `fs[1](x)`, `acts["out"](x)`, `for f in fs:`, `[f(x) for f in fs]`,
                        `map(f, xs)`, a helper's function default `def layer(p, act=np.tanh)`; the functions are
                        NumPy's, module-level ones (`relu`, probed), lambdas and objects with `__call__`
  objects               a method called on objects of different classes in a list (`for blk in blocks:`),
                        objects made from differentiated values (`Affine(np.tanh(x[0]), 0.1)`), a module's list
  generator-helper      `def pieces(p): for i in range(len(p)): yield ...`, `yield from`, consumed by `for`,
                        `sum(...)`, `list(...)`
  namedtuple            `Layer(W=x, b=y)`, read as `p.W`, `p[1]`, `W, b = p`, `p._replace(b=...)`

Every form keeps the Builder's invariants: shapes known, bounds tracked, kinks written twice (`relu` and
`abs`, `max`, `min`, `round` go through `Probe` in the probe source).
"""
from __future__ import annotations

from contextlib import contextmanager, nullcontext

import numpy as np

from .values import CONSTANTS, Expr, Var, _Part, _sequence, ref

EXPRESSION_WEIGHT = 3   # how often `expression` writes one of these (the built-in forms weigh 1 to 5)
STATEMENT_WEIGHT = 4    # how often `statement` writes one of these (an assignment weighs 6)
EXPRESSION_IDIOMS = {"builtin": 4, "math": 2, "round": 1, "comprehension": 4, "nested-comprehension": 2, "map": 2}
STATEMENT_IDIOMS = {"unpack-loop": 4, "dict-comprehension": 2, "varargs": 3, "function-values": 4, "objects": 2,
                    "generator-helper": 2, "namedtuple": 2}

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
CLASSES = [  # objects with a `forward` method: (name, definition); a base class comes before its subclass
    ("Sine", [(0, "class Sine:", None), (1, "def forward(self, z):", None), (2, "return np.sin(z)", None)]),
    ("Affine", [(0, "class Affine:", None), (1, "def __init__(self, w, c=0.1):", None), (2, "self.w = w", None),
                (2, "self.c = c", None), (1, "def forward(self, z):", None), (2, "return z * self.w + self.c", None)]),
    ("Gate", [(0, "class Gate(Sine):", None), (1, "def forward(self, z):", None),
              (2, "return super().forward(z) * np.tanh(z)", None)]),
]
BASES = {"Gate": ("Sine",)}  # module-level definitions that must come before another
NAMEDTUPLES = {  # name: (definition lines, fields, import)
    "Layer": ([(0, 'Layer = namedtuple("Layer", ["W", "b"])', None)], ("W", "b"),
              "from collections import namedtuple"),
    "Triple": ([(0, 'Triple = namedtuple("Triple", "p q r")', None)], ("p", "q", "r"),
               "from collections import namedtuple"),
    "Params": ([(0, "class Params(NamedTuple):", None), (1, "W: np.ndarray", None), (1, "b: np.ndarray", None)],
               ("W", "b"), "from typing import NamedTuple"),
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
            for base in BASES.get(name, ()):
                self.library(base, dict(CLASSES)[base])
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
                 "map": self.mapped}
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

    # --- statements ---------------------------------------------------------------------------------

    def idiom_statement(self, env, depth):
        forms = {"unpack-loop": self.unpack_loop, "dict-comprehension": self.dict_comprehension,
                 "varargs": self.varargs, "function-values": self.function_values, "objects": self.objects,
                 "generator-helper": self.generator_helper, "namedtuple": self.named_tuple}
        name = self.c.choice(list(forms), [STATEMENT_IDIOMS[k] for k in forms])
        return forms[name](env, depth)

    def values_like(self, env, count):
        """`count` values: the first a variable, the others shaped like it; and `env` with them shared."""
        first = ref(self.pick(env))
        values = [first] + [self.similar(env, first) for _ in range(count - 1)]
        return values, self.share(env, values)

    def unpack_loop(self, env, depth):
        """A `for` whose target unpacks: pairs, enumerate(zip(...)), zip(*pairs), dict items and keys."""
        if depth >= 2:
            return self.assign(env, depth)
        form = self.c.choice(["pairs", "literal", "enumerate-zip", "zip-star", "items", "keys", "enumerate-pairs"])
        self.note(f"unpack-loop:{form}")
        trips = self.c.integer(1, 3)
        xs, env = self.values_like(env, trips)
        ys, env = self.values_like(env, trips)
        first, ints = [], []
        p, q = self.name("W"), self.name("b")
        items = [Var(p, xs[0].shape, max(e.bound for e in xs)), Var(q, ys[0].shape, max(e.bound for e in ys))]
        pairs = _sequence([_sequence([f"{{{k}:x}}", f"{{{k + trips}:x}}"], "()") for k in range(trips)], "[]")
        firsts = _sequence([f"{{{k}:x}}" for k in range(trips)], "[]")
        if form == "literal":
            header = both(f"for {p}, {q} in {pairs}:", *xs, *ys)
        elif form in ("pairs", "enumerate-pairs"):
            name = self.name("pairs")
            self.emit_both(f"{name} = {pairs}", *xs, *ys)
            if form == "pairs":
                header = f"for {p}, {q} in {name}:"
            else:
                t = self.name("t")
                header, ints = f"for {t}, ({p}, {q}) in enumerate({name}):", [(t, trips - 1)]
        elif form in ("enumerate-zip", "zip-star"):
            xs_name, ys_name = self.name("xs"), self.name("ys")
            self.emit_both(f"{xs_name} = {firsts}", *xs)
            self.emit_both(f"{ys_name} = {firsts}", *ys)
            if form == "zip-star":
                both_name = self.name("columns")
                self.emit(f"{both_name} = ({xs_name}, {ys_name})")
                header = f"for {p}, {q} in zip(*{both_name}):"
            else:
                t = self.name("t")
                header, ints = f"for {t}, ({p}, {q}) in enumerate(zip({xs_name}, {ys_name})):", [(t, trips - 1)]
        else:
            name, keys = self.name("d"), ["p", "q", "r"][:trips]
            entries = ", ".join(f'"{key}": {{{k}:x}}' for k, key in enumerate(keys))
            self.emit_both(f"{name} = {{{{{entries}}}}}", *xs)
            k = self.name("k")
            weight = self.name("s")
            items = [items[0], Var(weight, (), 1.5)]
            if form == "items":
                header = f"for {k}, {p} in {name}.items():"
            else:
                header = f"for {k} in {name}:"
                first.append(f"{p} = {name}[{k}]")
            first.append(f'{weight} = 1.5 if {k} == "p" else -0.5')
        plain, probe = (header, header) if isinstance(header, str) else header
        return self.loop_body(env, depth, plain, probe, trips, ints, items, first=first)

    def dict_comprehension(self, env, depth):
        """`{k: f(v) for k, v in params.items() if k != "q"}` (or over the keys, or a zip), then its items read."""
        values, env = self.values_like(env, self.c.integer(2, 3))
        keys = ["p", "q", "r"][:len(values)]
        name, new = self.name("params"), self.name("scaled")
        entries = ", ".join(f'"{key}": {{{k}:x}}' for k, key in enumerate(keys))
        self.emit_both(f"{name} = {{{{{entries}}}}}", *values)
        k, v = self.name("k"), self.comprehension_name(env, values[0].shape)
        form = self.c.choice(["items", "keys", "zip"])
        drop = self.c.choice([None, "q"])
        self.note(f"dict-comprehension:{form}" + (":if" if drop else ""))
        bound = max(e.bound for e in values)
        item = Var(f"{name}[{k}]" if form == "keys" else v, values[0].shape, bound)
        body = self.expression([item] + [u for u in env if u.name != v])
        condition = f' if {k} != "{drop}"' if drop else ""
        if form == "items":
            clause = f"for {k}, {v} in {name}.items(){condition}"
        elif form == "keys":
            clause = f"for {k} in {name}{condition}"
        else:
            clause = f"for {k}, {v} in zip({_sequence([repr(key) for key in keys], '()')}, {name}.values()){condition}"
        self.emit_both(f"{new} = {{{{{k}: {{0:x}} {clause}}}}}", body)
        reads = [Var(f'{new}["{key}"]', body.shape, body.bound) for key in keys if key != drop]
        return self.define(env, self.name(), self.expression(reads))

    def helper_lines(self, header, body_lines):
        """A module-level helper's lines: `def ...:` and its body (each a (plain, probe) pair, or a str)."""
        lines = [(0, header, None)]
        for line in body_lines:
            plain, probe = (line, line) if isinstance(line, str) else line
            indent = 1 + (len(plain) - len(plain.lstrip())) // 4
            lines.append((indent, plain.lstrip(), probe.lstrip()))
        self.helpers.append(lines)

    def varargs(self, env, depth):
        """Helpers with `*args`, keyword-only parameters and `**kwargs`, called with `*xs` and `**d`."""
        form = self.c.choice(["star-args", "keyword-only", "kwargs", "kwargs-loop", "star-call"])
        self.note(f"varargs:{form}")
        values, env = self.values_like(env, self.c.integer(2, 3) if form in ("star-args", "kwargs-loop") else 2)
        name = self.name(self.c.choice(["total", "combine", "mix"]))
        shape, bound = values[0].shape, max(e.bound for e in values)
        p, q = Var("p", shape, bound), Var('extra["q"]' if form == "kwargs" else "q", shape, bound)
        with self.outside():
            body = self.coerce(self.expression([p, q] if form != "star-args" else [p]), shape)
        fields = [f"{{{k}:x}}" for k in range(len(values))]
        if form == "star-args":
            self.helper_lines(f"def {name}(*args, scale=0.5):",
                              [both("return scale * sum({0} for p in args)", body)])
            result_bound = 1.5 * len(values) * body.bound
            call = self.c.choice(["{f}(*{xs})", "{f}(*{xs}, scale=1.5)", "{f}({args})"])
        elif form == "keyword-only":
            self.helper_lines(f"def {name}(p, *, q, scale=1.0):", [both("return {0} * scale", body)])
            result_bound = 1.5 * body.bound
            call = self.c.choice(["{f}({0}, q={1})", "{f}({0}, scale=1.5, q={1})", "{f}(q={1}, p={0})"])
        elif form == "kwargs":
            self.helper_lines(f"def {name}(p, **extra):", [both("return {0}", body)])
            result_bound = body.bound
            call = self.c.choice(["{f}({0}, q={1})", "{f}(**{d})", "{f}({0}, **{d1})"])
        elif form == "kwargs-loop":
            self.helper_lines(f"def {name}(p, **extra):", ["out = p", "for key in extra:",
                                                            "    out = out * np.cos(extra[key])", "return out"])
            result_bound = bound
            call = self.c.choice(["{f}({0}, **{d1})", "{f}({0}, " + ", ".join(
                f"{key}={field}" for key, field in zip("st", fields[1:])) + ")"])
        else:
            self.helper_lines(f"def {name}(p, q):", [both("return {0}", body)])
            result_bound = body.bound
            call = "{f}(*{xs})"
        result_shape = shape if form == "kwargs-loop" else body.shape
        return self.call_built(env, name, values, call, result_shape, result_bound, "q" if form == "kwargs" else "st")

    def call_built(self, env, name, values, call, shape, bound, extra_keys="st"):
        """Emit the list or dict `call` unpacks (if any) and `v = call`; return the environment."""
        fields = [f"{{{k}:x}}" for k in range(len(values))]
        texts = {"f": name, "args": ", ".join(fields)}
        if "{xs}" in call:
            texts["xs"] = self.name("xs")
            self.emit_both(f"{texts['xs']} = {_sequence(fields, self.c.choice(['[]', '()']))}", *values)
        for key, first in (("d", 0), ("d1", 1)):
            if "{" + key + "}" in call:
                texts[key] = self.name("kw")
                keys = "pq" if first == 0 else extra_keys
                if self.c.flip(50):
                    entries = ", ".join(f'"{k}": {field}' for k, field in zip(keys, fields[first:]))
                    self.emit_both(f"{texts[key]} = {{{{{entries}}}}}", *values)
                else:
                    entries = ", ".join(f"{k}={field}" for k, field in zip(keys, fields[first:]))
                    self.emit_both(f"{texts[key]} = dict({entries})", *values)
        text = call.replace("{f}", texts["f"])
        for key in ("xs", "args", "d1", "d"):
            if key in texts:
                text = text.replace("{" + key + "}", texts[key])
        e = self.made(text.replace("{0}", "{0:x}").replace("{1}", "{1:x}"), *values, shape=shape, bound=bound)
        if e is None:
            return env
        return self.define(env, self.name(), self.tame(e))

    def function_values(self, env, depth):
        """Functions as values: passed to a helper, held in a list or dict, looped over, mapped, defaults."""
        form = self.c.choice(["apply", "list-index", "dict-key", "loop", "compose", "comprehension", "default",
                              "lambda-arg"])
        self.note(f"function-values:{form}")
        x = self.pick(env)
        env = self.share(env, [ref(x)])
        if form in ("apply", "lambda-arg"):
            name = self.name("apply")
            self.helper_lines(f"def {name}(fn, p):", ["return 0.5 * fn(p) + 0.5 * p"])
            if form == "apply":
                text, bound = self.function()
            else:
                with self.outside():
                    body = self.coerce(self.expression([Var("z", x.shape, x.bound)]), x.shape)
                text, bound = Expr(*both("lambda z: {0:x}", body), (), 1.0, False), (lambda b: body.bound)
            e = self.made(f"{name}({{0:x}}, {{1:x}})", text, ref(x), shape=x.shape,
                          bound=0.5 * bound(x.bound) + 0.5 * x.bound)
            return self.define(env, self.name(), self.tame(e)) if e else env
        if form == "default":
            name = self.name("layer")
            default, bound = self.function()
            self.helper_lines(f"def {name}(p, act={default}):", ["return act(0.5 * p + 0.1)"])
            other, other_bound = self.function()
            call = self.c.choice(["{f}({x})", "{f}({x}, {g})", "{f}({x}, act={g})"])
            bound = max(bound(0.5 * x.bound + 0.1), other_bound(0.5 * x.bound + 0.1))
            text = call.format(f=name, x=x.name, g=other)
            return self.define(env, self.name(), Expr(text, text, x.shape, max(bound, 1.0)))
        fs = [self.function() for _ in range(self.c.integer(2, 3))]
        bound = max(b(x.bound) for _, b in fs)
        container = self.name("acts" if form == "dict-key" else "fs")
        keys = ["hidden", "out", "gate"][:len(fs)]
        if form == "dict-key":
            self.emit(f"{container} = {{{', '.join(f'{key!r}: {text}' for key, (text, _) in zip(keys, fs))}}}")
        else:
            self.emit(f"{container} = {_sequence([text for text, _ in fs], self.c.choice(['[]', '()']))}")
        if form in ("list-index", "dict-key"):
            k = self.c.integer(-len(fs), len(fs) - 1)
            key = repr(keys[k]) if form == "dict-key" else str(k)
            text = f"{container}[{key}]({x.name})"
            return self.define(env, self.name(), Expr(text, text, x.shape, max(fs[k][1](x.bound), 1.0)))
        f = self.name("f")
        if form == "comprehension":
            how = self.c.choice(["sum({0} for {f} in {fs})", "np.stack([{0} for {f} in {fs}])",
                                 "np.mean([{0} for {f} in {fs}], axis=0)"])
            text = how.format(f"{f}({x.name})", f=f, fs=container)
            shape = ((len(fs),) if how.startswith("np.stack") else ()) + x.shape
            e = self.made(text, shape=shape, bound=bound * (len(fs) if how.startswith("sum") else 1))
            return self.define(env, self.name(), e) if e else env
        h = self.name("h")
        if form == "loop":
            self.emit(f"{h} = 0.0")
            self.emit(f"for {f} in {container}:")
            with self.block():
                self.emit(f"{h} = {h} + {f}({x.name})")
            return env + [Var(h, x.shape, max(bound * len(fs), 1.0))]
        self.emit(f"{h} = {x.name}")  # compose: h = f(h) for each f
        self.emit(f"for {f} in {container}:")
        with self.block():
            self.emit(f"{h} = {f}({h})")
        composed = x.bound
        for _, b in fs:
            composed = max(b(composed), 0.0)
        return env + [Var(h, x.shape, max(composed, bound, x.bound, 1.0))]

    def objects(self, env, depth):
        """Objects of different classes with a `forward` method, in a list: looped over, comprehended,
        or a module-level list of them; `Affine` made from a differentiated element."""
        x = self.pick(env)
        env = self.share(env, [ref(x)])
        chosen = [self.c.choice(CLASSES) for _ in range(self.c.integer(2, 3))]
        form = self.c.choice(["loop", "comprehension", "module", "call"])
        self.note(f"objects:{form}")
        parts, texts = [], []
        for cls, lines in chosen:
            self.library(cls, lines)
            if cls != "Affine":
                texts.append(f"{cls}()")
            elif form == "module" or self.c.flip(40):
                texts.append(f"Affine({self.c.choice(['0.5', '-0.7', '0.3'])})")
            else:
                w = self.scalar(env)
                parts.append(w)
                texts.append(f"Affine(np.tanh({{{len(parts) - 1}:x}}), 0.1)")
        blocks = self.name("blocks")
        if form == "module":
            blocks = blocks.upper()
            self.library(blocks, [(0, f"{blocks} = [{', '.join(texts)}]", None)])
        else:
            self.emit_both(f"{blocks} = [{', '.join(texts)}]", *parts)
        if form == "call":
            k = self.c.integer(-len(chosen), len(chosen) - 1)
            text = f"{blocks}[{k}].forward({x.name})"
            return self.define(env, self.name(), Expr(text, text, x.shape, x.bound + 1.0))
        h, blk = self.name("h"), self.name("blk")
        if form == "comprehension":
            how = self.c.choice(["sum({0} for {b} in {bs})", "np.stack([{0} for {b} in {bs}])"])
            text = how.format(f"{blk}.forward({x.name})", b=blk, bs=blocks)
            shape = ((len(chosen),) if how.startswith("np.stack") else ()) + x.shape
            e = self.made(text, shape=shape, bound=(x.bound + 1.0) * len(chosen))
            return self.define(env, self.name(), self.tame(e)) if e else env
        self.emit(f"{h} = {x.name}")
        self.emit(f"for {blk} in {blocks}:")
        with self.block():
            self.emit(f"{h} = {blk}.forward({h})")
        return env + [Var(h, x.shape, x.bound + 0.1 * len(chosen) + 1.0)]

    def generator_helper(self, env, depth):
        """A generator helper (`yield` in a loop, a pair, or `yield from`), consumed by a loop or a reduction."""
        a = self.pick(env, lambda v: v.ndim >= 1)
        if a is None or depth >= 2:
            return self.assign(env, depth)
        form = self.c.choice(["rows", "pairs", "yield-from", "for-rows"])
        consume = self.c.choice(["loop", "sum", "stack", "comprehension"] if form != "pairs" else ["loop"])
        self.note(f"generator-helper:{form}:{consume}")
        name = self.name("pieces")
        row = Var("p[i]", a.shape[1:], a.bound)
        with self.outside():
            body = self.coerce(self.unary(ref(row)), row.shape)
        if form == "rows":
            lines, shape, trips = ["for i in range(len(p)):", both("    yield {0:x}", body)], a.shape[1:], a.shape[0]
        elif form == "for-rows":
            lines, shape, trips = ["for r in p:", "    yield np.tanh(r) * 0.5"], a.shape[1:], a.shape[0]
            body = Expr("", "", shape, 0.5)
        elif form == "pairs":
            lines = ["for i in range(len(p)):", both("    yield p[i], {0:x}", body)]
            shape, trips = a.shape[1:], a.shape[0]
        else:
            lines, shape, trips = ["yield p", "yield from (np.sin(p), p * 0.5)"], a.shape, 3
            body = Expr("", "", shape, a.bound)
        self.helper_lines(f"def {name}(p):", lines)
        env = self.share(env, [ref(a)])
        bound = max(body.bound, a.bound)
        call = f"{name}({a.name})"
        if consume == "loop":
            q, r = self.name("q"), self.name("r")
            items = [Var(q, shape, bound)] + ([Var(r, shape, body.bound)] if form == "pairs" else [])
            header = f"for {q}, {r} in {call}:" if form == "pairs" else f"for {q} in {call}:"
            return self.loop_body(env, depth, header, header, trips, [], items)
        if consume == "sum":
            e = self.made(f"sum({call})", shape=shape, bound=bound * trips)
        elif consume == "stack":
            e = self.made(f"np.stack(list({call}))", shape=(trips,) + shape, bound=bound)
        else:
            w = self.name("w")
            e = self.made(f"np.mean([np.cos({w}) * {w} for {w} in {call}], axis=0)", shape=shape, bound=bound)
        return self.define(env, self.name(), self.tame(e)) if e else env

    def named_tuple(self, env, depth):
        """A namedtuple of differentiated values, read by field name, by index, unpacked or `_replace`d."""
        kind = self.c.choice(list(NAMEDTUPLES))
        lines, fields, imports = NAMEDTUPLES[kind]
        self.library(kind, lines, [imports])
        values, env = self.values_like(env, 1)
        values += [self.operand(env) for _ in fields[1:]]
        env = self.share(env, values)
        name = self.name("layer")
        form = self.c.choice(["keywords", "positional"])
        read = self.c.choice(["field", "index", "unpack", "replace"])
        self.note(f"namedtuple:{kind}:{form}:{read}")
        if form == "keywords":
            arguments = ", ".join(f"{field}={{{k}:x}}" for k, field in enumerate(fields))
        else:
            arguments = ", ".join(f"{{{k}:x}}" for k in range(len(fields)))
        self.emit_both(f"{name} = {kind}({arguments})", *values)
        if read == "unpack":
            names = [self.name(field) for field in fields]
            self.emit(f"{', '.join(names)} = {name}")
            reads = [Var(n, e.shape, max(e.bound, 1.0)) for n, e in zip(names, values)]
            return [v for v in env if v.name not in names] + reads
        if read == "replace":
            new = self.coerce(self.expression(env), values[-1].shape)
            self.emit_both(f"{name} = {name}._replace({fields[-1]}={{0:x}})", new)
            values = values[:-1] + [new]
        key = (lambda k, field: f"{name}.{field}") if read != "index" else (lambda k, field: f"{name}[{k}]")
        reads = [Var(key(k, field), e.shape, max(e.bound, 1.0)) for k, (field, e) in enumerate(zip(fields, values))]
        return self.define(env, self.name(), self.expression(reads))

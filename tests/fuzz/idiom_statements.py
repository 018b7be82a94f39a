"""Python as people write NumPy model code, statements: the `Builder` (generator.py) mixes these in.

Expressions, and the helpers these share, are in idioms.py.

Statements (`IdiomStatements.idiom_statement`, weights in STATEMENT_IDIOMS):
  unpack-loop           `for W, b in pairs:`, `for t, (p, q) in enumerate(zip(xs, ys)):`,
                        `for p, q in zip(*pairs):`, `for k, v in d.items():`, `for k in d:`, over lists of tuples
  dict-comprehension    `{k: ... for k, v in params.items() if k != "q"}`, `{k: params[k] ... for k in params}`,
                        then maybe `d.update({"p": ...})` or `d.update(extra=...)`
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
"""
from __future__ import annotations

from .idioms import Idioms, both
from .values import Expr, Var, _sequence, ref

STATEMENT_WEIGHT = 4    # how often `statement` writes one of these (an assignment weighs 6)
STATEMENT_IDIOMS = {"unpack-loop": 4, "dict-comprehension": 2, "varargs": 3, "function-values": 4, "objects": 2,
                    "generator-helper": 2, "namedtuple": 2}
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


class IdiomStatements(Idioms):
    """Statement forms for the `Builder`: read its docstring (generator.py) for the bookkeeping they share."""

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
        if self.c.flip(40):  # d.update(...): an item set again, or a new one
            extra = self.expression(env)
            key = self.c.choice(["p", "extra"]) if drop != "p" else "extra"
            spelled = self.c.choice([f'{{{{"{key}": {{0:x}}}}}}', f"{key}={{0:x}}"])
            self.note("dict-comprehension:update")
            self.emit_both(f"{new}.update({spelled})", extra)
            reads = [r for r in reads if r.name != f'{new}["{key}"]'] + [Var(f'{new}["{key}"]', extra.shape,
                                                                              extra.bound)]
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
            for base in BASES.get(cls, ()):
                self.library(base, dict(CLASSES)[base])
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

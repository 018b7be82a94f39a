"""`trace`: the forward and backward passes of one call, as the table a textbook would print.

The generated statements (the same `Adjoint` `tapegen.vjp` runs) are executed
one at a time in a namespace we can read, and after each one its value goes
into a row. Forward rows say what the backward pass will read from that step
("saved for backward"); backward rows show each adjoint update as generated
code and its value, with `+=` rows for fan-out.

Straight-line code gets one row per primitive. A loop or branch is run as a
single step: its row shows the values it leaves behind (and, going forward,
how many times the loop ran); read `tapegen.source(f)` to see inside it.
Rows that only compute shapes (`t1_shape = np.shape(t1)`) run but are not shown;
pushes onto the tape and pops from it (array assignment, `append`) are shown
as the lines of code they are.
"""
from __future__ import annotations

import dataclasses
import re

from ..codegen import emit
from ..codegen.render import statement, to_text
from ..ir import Const, Eqn, Guard, If, Loop, Pop, Push, Var, assigned
from ..runtime import conform, seed
from ..transforms.activity import analyze
from .inspection import expression_text as _expression
from .inspection import html_table, prepare, show, table

HIDDEN_OPS = ("shape", "meta")
FORWARD_HEADER = ("step", "variable", "operation", "value", "saved for backward", "line")
BACKWARD_HEADER = ("step", "adjoint", "update", "value", "line")


class Trace:
    """A traced call: `str()` is the text table, `_repr_html_` the same as HTML tables.

    Attributes:
        forward, backward: the rows, as tuples of cells (see FORWARD_HEADER, BACKWARD_HEADER).
        value: the function's output.
        gradients: `(argument name, gradient)` pairs.
    """

    def __init__(self, title, forward, backward, value, gradients, notes):
        self.title, self.forward, self.backward = title, tuple(forward), tuple(backward)
        self.value, self.gradients, self.notes = value, tuple(gradients), tuple(notes)

    def gradient_text(self) -> str:
        return "gradients: " + ", ".join(f"d/d{name} = {show(g)}" for name, g in self.gradients)

    def __str__(self) -> str:
        lines = [self.title, "", "forward pass"] + table(FORWARD_HEADER, self.forward)
        lines += ["", "backward pass"] + table(BACKWARD_HEADER, self.backward)
        lines += ["", self.gradient_text()] + list(self.notes)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return (html_table(f"{self.title}: forward pass", FORWARD_HEADER, self.forward)
                + html_table("backward pass", BACKWARD_HEADER, self.backward)
                + "".join(f"<p>{text}</p>" for text in (self.gradient_text(),) + self.notes))


def trace(f, *args, wrt=None) -> Trace:
    """Run `f` at `args` and tabulate every forward value, what is saved, and every adjoint.

    Args:
        f: the function (plain or `@differentiate`d); its first output is differentiated.
        *args: where to evaluate.
        wrt: argument position(s) or name(s); default every floating-point argument.

    Returns:
        Trace: print it for the tables; `.value` and `.gradients` hold the numbers.

    Example:
        >>> import numpy as np, tapegen as tg
        >>> def f(x1, x2):
        ...     return (x1 + x2) * np.sin(x1)
        >>> t = tg.trace(f, 1.0, 2.0)       # doctest: +SKIP
        >>> t.gradients                     # doctest: +SKIP
        (('x1', 2.4632...), ('x2', 0.8414...))
    """
    target, arguments, generated = prepare(f, args, wrt)
    return _Tracer(generated).run(arguments)


class _Env(dict):
    """Locals for stepping through generated code; names it does not hold come from the generated module."""

    def __init__(self, namespace):
        super().__init__()
        self.namespace = namespace

    def __missing__(self, name):
        try:
            return self.namespace[name]
        except (KeyError, AttributeError):
            raise KeyError(name) from None


class _Tracer:
    def __init__(self, generated):
        self.generated = generated
        self.adjoint = generated.adjoint
        self.program = self.adjoint.primal
        self.env = _Env(generated.namespace)
        outputs = tuple(self.program.outputs[i] for i in self.adjoint.outputs)
        self.activity = analyze(self.program, self.adjoint.wrt, outputs)
        self.compound = False

    def run(self, arguments) -> Trace:
        forward = self.inputs(arguments)
        if self.adjoint.uses_tape:
            self.env["tape"] = []
            for var in self.adjoint.tape_slots:
                self.env[var.name] = None
        for stmt in self.adjoint.forward:
            forward += self.forward_rows(stmt, len(forward) + 1)
        value = self.value(self.program.outputs[self.adjoint.outputs[0]])
        first = self.adjoint.seeds[0].name
        self.env[first] = seed(value)
        backward = [(1, first, "seed: d out / d out", show(self.env[first]), "")]
        for stmt in self.adjoint.backward:
            backward += self.backward_rows(stmt, len(backward) + 1)
        gradients = [(p.name, conform(None if g is None else self.env.get(g.name), self.env[p.name]))
                     for g, p in zip(self.adjoint.gradients, self.adjoint.wrt)]
        return Trace(self.title(), forward, backward, value, gradients, self.notes())

    def title(self) -> str:
        p = self.program
        wrt = ", ".join(v.name for v in self.adjoint.wrt)
        return f"trace of {p.name}() ({p.span.file}:{p.span.line}), differentiated with respect to {wrt}"

    def notes(self) -> list:
        notes = ["g_v is the adjoint of v: d out / d v. Rows computing only shapes are not shown."]
        if self.compound:
            notes.append("Loops and branches run as one step each; tapegen.source(f) shows the code inside them.")
        return notes

    def inputs(self, arguments) -> list:
        rows, active = [], set(self.adjoint.wrt)
        for param, value in zip(self.program.params, arguments):
            self.env[param.name] = value
            kind = "input" if param in active else "input, not differentiated"
            rows.append((len(rows) + 1, param.name, kind, show(value), "-", self.program.span.line))
        return rows

    def value(self, atom):
        return atom.value if isinstance(atom, Const) else self.env[atom.name]

    def execute(self, text: str) -> None:
        exec(compile(text, "<tapegen trace>", "exec"), self.generated.namespace, self.env)

    # --- forward ---------------------------------------------------------------------------

    def forward_rows(self, stmt, step) -> list:
        if not isinstance(stmt, Eqn):
            return self.statement_rows(stmt, step, backward=False)
        self.execute(to_text(statement(stmt)))
        if stmt.op.name in HIDDEN_OPS:
            return []
        return [(step, _names(stmt.outputs), _expression(stmt), self.values(stmt.outputs),
                 self.saved(stmt), stmt.span.line)]

    def saved(self, eqn) -> str:
        """What the VJP rules of `eqn` read: input and output values (shapes alone do not count)."""
        keys = self.activity.needs_rule(eqn)
        if not keys:
            return "-"
        if eqn.op.form == "custom":
            return "residuals of the custom rule"
        reads = {name for key in keys for name in eqn.op.vjps[key].reads}
        inputs = [atom for key, atom in eqn.inputs if key in reads and isinstance(atom, Var)]
        outputs = list(eqn.outputs) if "y" in reads else []
        saved = list(dict.fromkeys(inputs + outputs))
        if not saved:
            return "- (linear)"
        return ", ".join(f"{v.name} = {show(self.env[v.name])}" for v in saved)

    def statement_rows(self, stmt, step, backward) -> list:
        """A loop or branch as one row; a tape push or pop as the line of code it is."""
        if isinstance(stmt, (If, Loop, Guard)):
            return self.compound_row(stmt, step, backward)
        lines = [line for line in emit._lines([stmt], backward) if not line.lstrip().startswith("#")]
        self.execute("\n".join(lines))
        if isinstance(stmt, Push):
            return [(step, "tape", lines[0], show(self.env["tape"][-1]), "pushed for the backward pass",
                     stmt.span.line)]
        if isinstance(stmt, Pop):
            return [(step, stmt.var.name, lines[0], show(self.env[stmt.var.name]), stmt.span.line)]
        return []

    def compound_row(self, stmt, step, backward) -> list:
        self.compound = True
        lines = emit._lines([stmt], backward)
        heads = ("for ", "while ", "if ", "try:", "with ")
        head = next(line for line in lines if line.startswith(heads)).split("  #")[0]
        taken = ""
        if isinstance(stmt, If) and stmt.catch is None and stmt.manager is None and not backward:
            taken = " (took the if branch)" if bool(self.value(stmt.cond)) else " (took the else branch)"
        tape_before = len(self.env.get("tape", ()))
        self.execute("\n".join(lines))
        if isinstance(stmt, If) and stmt.catch is not None and not backward:  # the last push: which block ran
            taken = " (finished)" if self.env["tape"][-1] else " (raised: ran the except block)"
        names = [v for v in dict.fromkeys(assigned([stmt])) if v.name in self.env and self.visible(v, backward)]
        detail = taken
        if isinstance(stmt, Loop) and not backward:
            detail = f" (ran {self.env[stmt.counter.name]} times)"
            names = [v for v in names if v != stmt.counter]
        saved = "-"
        if not backward and "tape" in self.env and len(self.env["tape"]) > tape_before:
            saved = f"tape: +{len(self.env['tape']) - tape_before} values"
        row = [step, _names(names), f"{head.strip()} ...{detail}", self.values(names)]
        return [tuple(row + ([saved] if not backward else []) + [stmt.span.line])]

    def visible(self, var, backward) -> bool:
        """A user's variable (or its adjoint, going backward): what a loop or branch row lists."""
        name = var.name[2:] if backward and var.name.startswith("g_") else var.name
        if backward and not var.name.startswith("g_"):
            return False
        return re.sub(r"_\d+$", "", name) in self.program.identifiers

    def values(self, variables) -> str:
        return "; ".join(show(self.env[v.name]) for v in variables)

    # --- backward --------------------------------------------------------------------------

    def backward_rows(self, stmt, step) -> list:
        if not isinstance(stmt, Eqn):
            return self.statement_rows(stmt, step, backward=True)
        if stmt.op.name in HIDDEN_OPS:
            self.execute(to_text(statement(stmt)))
            return []
        accumulate = getattr(stmt.op, "accumulate", None)
        if accumulate is None:
            self.execute(to_text(statement(stmt)))
            return [(step, _names(stmt.outputs), _expression(stmt), self.values(stmt.outputs),
                     stmt.span.line)]
        part = Eqn(dataclasses.replace(stmt.op, accumulate=None),
                   tuple((k, a) for k, a in stmt.inputs if k != "__g"), stmt.outputs, stmt.span)
        contribution = eval(compile(_expression(part), "<tapegen trace>", "eval"),
                            self.generated.namespace, self.env)
        self.execute(to_text(statement(stmt)))
        target = stmt.outputs[0].name
        return [(step, target, f"{target} += {_expression(part)}",
                 f"+= {show(contribution)} -> {show(self.env[target])}", stmt.span.line)]


def _names(variables) -> str:
    return ", ".join(v.name for v in variables)

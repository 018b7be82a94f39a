"""Looking inside a transform: `residuals`, and what `trace` and `graph` share.

- `residuals(f, *args)` lists what the forward pass saves for the backward
  pass, with sizes (like JAX's `print_saved_residuals`).
- `trace(f, *args)` (tracing.py) runs the generated forward and backward passes
  one statement at a time and tabulates every value: the table of a textbook's
  worked example, for any function.
- `graph(f)` (graphing.py) is the Wengert list as a Graphviz DOT graph (text; no
  graphviz needed).

Those two, and the rule listing, build on the helpers here (`prepare`, `show`,
`expression_text`, `table`, `html_table`). Everything here reads the same `Adjoint` and generated statements that
`tapegen.vjp` runs, so what it shows is what runs.
"""
from __future__ import annotations

import re

import numpy as np

from .. import pipeline
from ..errors import WrtError
from ..ir import Eqn, Loop, walk

__all__ = ["residuals", "Residuals"]


def prepare(f, args, wrt):
    """`(target, arguments, generated)`: the vjp transform of `f` for `wrt` at `args`.

    `wrt=None` means every floating-point argument (arrays, floats, and pytrees of them).
    """
    from ..api import _differentiated
    target = _differentiated(f)._target
    arguments = target.arguments(tuple(args), {})
    if wrt is None:
        indices = tuple(i for i in range(target.offset, target.nparams) if _floating(arguments[i]))
        if not indices:
            raise WrtError(f"{target.fn.__qualname__}() has no floating-point argument to differentiate",
                           hint="pass floats or float arrays, or name the arguments with wrt=")
        bare = False
    else:
        indices, bare = target.wrt(wrt)
    return target, arguments, pipeline.transform(target.fn, "vjp", indices, (0,), bare)


def _floating(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (float, complex, np.floating, np.complexfloating)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc"
    if isinstance(value, dict):
        return bool(value) and all(_floating(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_floating(v) for v in value)
    return False


# --- values as short text -----------------------------------------------------------------------


def show(value) -> str:
    """A value as a table cell: numbers to 4 significant digits, big arrays as dtype and shape."""
    if value is None:
        return "None"
    if isinstance(value, (bool, np.bool_, int, np.integer, str, range)):
        return repr(value) if isinstance(value, (str, range)) else str(value)
    if isinstance(value, (float, complex, np.floating, np.complexfloating)):
        return _number(value)
    if isinstance(value, np.ndarray):
        if value.ndim == 0 and value.dtype.kind in "fc":
            return _number(value[()])
        if value.size <= 6 and value.dtype.kind in "biufc":
            return "[" + ", ".join(_number(v) if value.dtype.kind in "fc" else str(v)
                                   for v in value.ravel()) + "]" + ("" if value.ndim == 1 else f" {value.shape}")
        return f"{value.dtype}{list(value.shape)}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(show(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return type(value).__name__


def expression_text(eqn) -> str:
    """An equation's right-hand side as generated code, without astor's outer parentheses."""
    from ..codegen.emit import to_text_expr
    from ..codegen.render import statement, to_text
    if getattr(eqn.op, "form", None) == "setitem":  # a statement, not an expression: `b[1] = v`
        return to_text(statement(eqn))
    text = to_text_expr(eqn)
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, char in enumerate(text):
            depth += (char == "(") - (char == ")")
            if depth == 0 and i < len(text) - 1:
                return text
        return text[1:-1]
    return text


def _number(value) -> str:
    if isinstance(value, (complex, np.complexfloating)):
        return f"{complex(value):.4g}"
    value = float(value)
    if value == 0 or 1e-4 <= abs(value) < 1e6:
        return np.format_float_positional(value, precision=4, unique=True, fractional=False, trim="0")
    if not np.isfinite(value):
        return str(value)
    return f"{value:.4g}"


MAX_CELL = 72


def _clip(cell):
    text = str(cell)
    return cell if len(text) <= MAX_CELL else text[:MAX_CELL - 3] + "..."


def table(header, rows) -> list:
    """Rows of cells as aligned text lines; numbers right-aligned, text left-aligned, long cells cut."""
    rows = [tuple(_clip(c) for c in row) for row in rows]
    widths = [max(len(str(r[i])) for r in [header] + list(rows)) for i in range(len(header))]

    def line(cells):
        parts = [str(c).rjust(w) if isinstance(c, int) else str(c).ljust(w) for c, w in zip(cells, widths)]
        return "  ".join(parts).rstrip()
    return [line(header)] + [line(r) for r in rows]


def html_table(caption, header, rows) -> str:
    import html
    head = "".join(f"<th style='text-align:left'>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='text-align:left;font-family:monospace'>{html.escape(str(c))}</td>"
                                    for c in row) + "</tr>" for row in rows)
    return f"<table><caption style='text-align:left'>{html.escape(caption)}</caption>" \
           f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# --- residuals ----------------------------------------------------------------------------------


class Residuals:
    """What the forward pass of `vjp` keeps for the backward pass: one row per saved value."""

    HEADER = ("name", "kind", "shape", "dtype", "bytes", "from")

    def __init__(self, title, rows):
        self.title = title
        self.rows = tuple(rows)  # (name, kind, shape, dtype, bytes, where)

    @property
    def total(self) -> int:
        """Bytes of all saved values."""
        return sum(row[4] for row in self.rows)

    @property
    def extra(self) -> int:
        """Bytes saved beyond the arguments (which the caller holds anyway)."""
        return sum(row[4] for row in self.rows if row[1] != "argument")

    def summary(self) -> str:
        return (f"total {_bytes(self.total)} in {len(self.rows)} values; "
                f"{_bytes(self.extra)} beyond the arguments")

    def __str__(self) -> str:
        return "\n".join([self.title] + table(self.HEADER, self._cells()) + [self.summary()])

    def _cells(self):
        return [(n, k, s, d, b, w) for n, k, s, d, b, w in self.rows]

    def _repr_html_(self) -> str:
        return html_table(self.title, self.HEADER, self._cells()) + f"<p>{self.summary()}</p>"


def residuals(f, *args, wrt=None) -> Residuals:
    """The values the forward pass saves for the backward pass, their sizes and where they come from.

    Args:
        f: the function (plain or `@differentiate`d).
        *args: arguments to run the forward pass at.
        wrt: argument position(s) or name(s); default every floating-point argument.

    Returns:
        Residuals: `str()` is a table (name, kind, shape, dtype, bytes, user line) and a total;
        `.rows`, `.total`, `.extra` (bytes beyond the arguments) for programs.

    Example:
        >>> import numpy as np, tapegen as tg
        >>> print(tg.residuals(lambda x: np.sum(np.sin(x) ** 2), np.ones(3)).summary())
        total 80 B in 3 values; 56 B beyond the arguments
    """
    from ..codegen.emit import _vjp_residuals
    target, arguments, generated = prepare(f, args, wrt)
    adjoint = generated.adjoint
    names = [v.name for v in _vjp_residuals(adjoint)] + (["tape"] if adjoint.uses_tape else [])
    _, saved = generated.function(*arguments)
    where = _definitions(adjoint)
    params = {p.name for p in adjoint.primal.params}
    rows = []
    for name, value in zip(names, saved):
        kind = "argument" if name in params else "tape" if name == "tape" else \
            "shape" if re.search(r"_(shape|meta)(_\d+)?$", name) else "value"
        rows.append((name, kind, _shape_text(value), _dtype_text(value), nbytes(value), where.get(name, "")))
    program = adjoint.primal
    title = (f"residuals of {program.name}() ({program.span.file}:{program.span.line}), "
             f"differentiated with respect to {', '.join(v.name for v in adjoint.wrt)}")
    return Residuals(title, rows)


def _definitions(adjoint) -> dict:
    """Var name -> "file:line  source text" of the statement that (last) assigns it."""
    found = {p.name: f"argument of {adjoint.primal.name}()" for p in adjoint.primal.params}
    for stmt in walk(adjoint.forward):
        span = getattr(stmt, "span", None)
        if span is None:
            continue
        where = f"{span.file}:{span.line}  {span.text.strip()}"
        if isinstance(stmt, Eqn):
            for var in stmt.outputs:
                found.setdefault(var.name, where)
        elif isinstance(stmt, Loop):
            found.setdefault(stmt.counter.name, f"{where}  (trip count)")
            if stmt.target is not None:
                found.setdefault(stmt.target.name, where)
    found["tape"] = "values loops and branches overwrite, replayed backwards"
    return found


def nbytes(value) -> int:
    """Bytes of array data in `value` (containers summed); Python numbers count as 8 (16 complex)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, np.generic):
        return int(value.itemsize)
    if isinstance(value, (bool, type(None), range, str)):
        return 0
    if isinstance(value, complex):
        return 16
    if isinstance(value, (int, float)):
        return 8
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(nbytes(v) for v in value)
    return 0


def _shape_text(value) -> str:
    if isinstance(value, (np.ndarray, np.generic)):
        return str(value.shape)
    if isinstance(value, (list, tuple, dict)):
        return f"{type(value).__name__} of {len(value)}"
    return "()" if isinstance(value, (int, float, complex)) else "-"


def _dtype_text(value) -> str:
    if isinstance(value, (np.ndarray, np.generic)):
        return str(value.dtype)
    return type(value).__name__


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"

"""The errors tapegen raises, and how they point at the user's source.

Every error is rendered like a compiler diagnostic:

    model.py:12:9: no gradient rule for numpy.cumprod (argument 'a')
        c = np.cumprod(h, axis=0)
            ^^^^^^^^^^^^^^^^^^^^^
    hint: register one with tapegen.register_vjp, or see `python -m tapegen rules`
"""
from __future__ import annotations


class TapegenError(Exception):
    """Base class of every error tapegen raises on purpose.

    Attributes:
        message: what went wrong, one line.
        span: the user's source location (`tapegen.ir.Span`) or None.
        hint: what to do about it, or None.
    """

    def __init__(self, message: str, span=None, hint: str | None = None):
        self.message = message
        self.span = span
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        if self.span is None:
            head = self.message
            body = []
        else:
            head = f"{self.span}: {self.message}"
            body = _source_lines(self.span)
        if self.hint:
            body.append(f"hint: {self.hint}")
        return "\n".join([head] + body)

    def with_span(self, span) -> "TapegenError":
        """The same error, pointing at `span` (used when the place is known only later)."""
        return type(self)(self.message, span, self.hint)

    def __reduce__(self):
        return (type(self), (self.message, self.span, self.hint))


class UnsupportedSyntaxError(TapegenError):
    """The function uses Python syntax tapegen cannot differentiate."""


class ChangedSinceTransformError(UnsupportedSyntaxError):
    """A value of the function's module or closure the generated code was made for (a list's length, an int
    key) has changed: the API makes the code again and calls it once more; raised only if that fails too."""


class NoRuleError(TapegenError, NotImplementedError):
    """A differentiated value flows into a function tapegen has no rule for (a NotImplementedError too, as
    autograd raises for a primitive without a VJP)."""


class NonScalarOutputError(TapegenError):
    """`grad` was asked of a function whose output is not a scalar."""


class NotRealOutputError(NonScalarOutputError, TypeError):
    """`grad` was asked of a function whose scalar output is complex or bool (a TypeError, as in JAX and autograd)."""


class GradcheckError(TapegenError):
    """A gradient disagrees with finite differences."""


class SourceNotFoundError(TapegenError):
    """tapegen cannot read the function's source code."""


class WrtError(TapegenError):
    """`wrt` names no differentiable argument of the function."""


class NanError(TapegenError, FloatingPointError):
    """A NaN or Inf appeared in a generated forward or backward pass (with debug_nans on)."""


class InternalError(TapegenError):
    """An invariant inside tapegen failed: this is a tapegen bug."""


def _source_lines(span) -> list:
    text = span.text.rstrip("\n")
    stripped = text.lstrip()
    indent = len(text) - len(stripped)
    start = max(span.col - indent, 0)
    end = span.end_col - indent if span.end_col > span.col else len(stripped)
    width = max(min(end, len(stripped)) - start, 1)
    return [f"    {stripped}", "    " + " " * start + "^" * width]

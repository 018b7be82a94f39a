"""Syntax highlighting of generated code, for terminals (ANSI codes) and Jupyter (HTML).

Uses only the standard library's `tokenize`: the text comes back unchanged
apart from the colour markup, so what you copy from a terminal or notebook
is the code tapegen runs. Text that does not tokenize is returned plain.
`SourceText`, the `str` that `source()` returns, renders itself highlighted in Jupyter.
"""
from __future__ import annotations

import html
import io
import keyword
import tokenize

# token class -> (ANSI code, CSS colour)
STYLES = {
    "keyword": ("1;34", "#0033b3"),
    "definition": ("1;33", "#00627a"),
    "string": ("32", "#067d17"),
    "number": ("36", "#1750eb"),
    "comment": ("90", "#8c8c8c"),
    "builtin": ("35", "#871094"),
}
BUILTINS = {"range", "reversed", "len", "float", "int", "bool", "tuple", "list", "dict", "None", "True", "False"}


def spans(text: str) -> list:
    """`(piece, style)` pairs covering `text` exactly; style is a key of STYLES or None."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    pieces, position, after_def = [], 0, False
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.ENDMARKER:
                break
            start = offsets[token.start[0] - 1] + token.start[1]
            end = offsets[token.end[0] - 1] + token.end[1]
            if start > position:
                pieces.append((text[position:start], None))
            style = _style(token, after_def)
            after_def = token.type == tokenize.NAME and token.string in ("def", "class")
            if end > start:
                pieces.append((text[start:end], style))
            position = max(position, end)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [(text, None)]
    if position < len(text):
        pieces.append((text[position:], None))
    return pieces


def _style(token, after_def):
    if token.type == tokenize.NAME:
        if after_def:
            return "definition"
        if keyword.iskeyword(token.string):
            return "keyword"
        return "builtin" if token.string in BUILTINS else None
    return {tokenize.STRING: "string", tokenize.NUMBER: "number", tokenize.COMMENT: "comment"}.get(token.type)


def ansi(text: str) -> str:
    """`text` with ANSI colour codes for a terminal."""
    out = []
    for piece, style in spans(text):
        out.append(piece if style is None else f"\033[{STYLES[style][0]}m{piece}\033[0m")
    return "".join(out)


def to_html(text: str) -> str:
    """`text` as a highlighted `<pre>` block (inline styles, so notebooks keep them)."""
    out = []
    for piece, style in spans(text):
        escaped = html.escape(piece)
        out.append(escaped if style is None else f'<span style="color:{STYLES[style][1]}">{escaped}</span>')
    body = "".join(out)
    return f'<pre class="tapegen-source" style="line-height:1.3">{body}</pre>'


class SourceText(str):
    """Generated source: a plain `str`, shown syntax-highlighted by Jupyter."""

    def _repr_html_(self) -> str:
        return to_html(str(self))

"""Finding and parsing a user function's source, and pointing into it.

This module owns reading user source: it locates the `def` (or `lambda`) of a
live function object in its file, parses it with the stdlib `ast`, and turns
AST positions (UTF-8 byte columns) into `Span`s with character columns, so a
caret lands under the right character on lines with non-ASCII text. It also
reads the user's comments, exactly (with the stdlib tokenizer, a `#` inside a
string is not a comment), so generated code can repeat them.
"""
from __future__ import annotations

import ast
import functools
import inspect
import linecache
import os
import textwrap
import tokenize
from dataclasses import dataclass

from ..errors import SourceNotFoundError
from ..ir import Span


# Contexts and operators carry no fields: `ast.parse` itself shares one instance of each.
_SHARED = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def copy_tree(node, names=None):
    """A deep copy of an `ast` tree, about six times faster than `copy.deepcopy` (which goes through
    `__reduce_ex__` for every node): nodes and lists are copied, everything else shared. With `names`,
    each `Name` whose id is a key of `names` is renamed to its value."""
    new = node.__class__.__new__(node.__class__)
    fields = new.__dict__
    for key, value in node.__dict__.items():
        if value.__class__ is list:
            fields[key] = [copy_tree(item, names) if isinstance(item, ast.AST) else item for item in value]
        elif isinstance(value, ast.AST) and not isinstance(value, _SHARED):
            fields[key] = copy_tree(value, names)
        else:
            fields[key] = value
    if names and new.__class__ is ast.Name:
        new.id = names.get(new.id, new.id)
    return new


def walk(node) -> list:
    """Every node of `node`'s tree in `ast.walk`'s order (breadth first, fields in order), as a list: the passes
    walk every statement of a function several times, and `ast.walk`'s nested generators were most of it."""
    found = [node]
    append = found.append
    for node in found:  # the list grows as it is read: breadth first
        for field in node._fields:
            value = getattr(node, field, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        append(item)
            elif isinstance(value, ast.AST):
                append(value)
    return found


@dataclass(frozen=True)
class FunctionSource:
    """A parsed user function and the file lines it came from."""

    node: ast.AST  # ast.FunctionDef or ast.Lambda
    file: str
    lines: tuple
    line_offset: int  # add to an AST lineno to get the line in `file`

    @property
    def display_file(self) -> str:
        return os.path.basename(self.file) if self.file else "<unknown>"

    def comments(self) -> dict:
        """{line: (comment, ...)}: the comment lines standing just above each statement of the function."""
        if isinstance(self.node, ast.Lambda):
            return {}
        first = min([d.lineno for d in self.node.decorator_list] + [self.node.lineno]) + self.line_offset
        last = self.node.end_lineno + self.line_offset
        lines = tuple(self.lines[first - 1:last])
        if not any("#" in line for line in lines):
            return {}  # no comment, surely: the tokenizer's first use alone costs a tenth of a first gradient
        return _comments(self.file, lines, first)

    def span(self, node: ast.AST) -> Span:
        line = node.lineno + self.line_offset
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        col = _char_col(text, node.col_offset)
        same_line = getattr(node, "end_lineno", node.lineno) == node.lineno
        end = _char_col(text, node.end_col_offset) if same_line and node.end_col_offset is not None else len(text.rstrip())
        return Span(self.display_file, line, col, end, text.rstrip("\n"))


def function_source(fn) -> FunctionSource:
    """Locate and parse the source of `fn`.

    Raises:
        SourceNotFoundError: the function was built where no source is kept
            (by `exec`, in a REPL without history, from a compiled module).
    """
    code = getattr(fn, "__code__", None)
    if code is None:
        raise SourceNotFoundError(f"{fn!r} is not a Python function, so it has no source to differentiate",
                                  hint="pass a function defined with `def` or `lambda` in a file or notebook")
    lifted = _LIFTED.get(code)
    if lifted is not None:
        return lifted
    file = code.co_filename
    lines = tuple(linecache.getlines(file, getattr(fn, "__globals__", {})))
    if not lines:
        raise SourceNotFoundError(
            f"cannot find the source of {fn.__qualname__}() (defined in {file!r})",
            hint="tapegen reads a function's source: define it in a .py file or a notebook cell, not with exec or eval")
    node, offset = _find_node(code, lines)
    return FunctionSource(node, file, lines, offset)


_PARSED: dict = {}
_LIFTED: dict = {}  # code object -> FunctionSource, for functions tapegen made from a user's lambda or def


def register_source(code, source: FunctionSource) -> None:
    """Say where a function tapegen compiled itself comes from: its nodes carry the user's lines."""
    _LIFTED[code] = source


def _parse_file(file_key, lines):
    cached = _PARSED.get(file_key)
    if cached is not None and cached[0] == lines:
        return cached[1]
    tree = ast.parse("".join(lines))
    if len(_PARSED) > 64:
        _PARSED.clear()
    _PARSED[file_key] = (lines, tree)
    return tree


def _find_node(code, lines):
    try:
        tree = _parse_file(code.co_filename, lines)
        return _match(tree, code), 0
    except (SyntaxError, LookupError):
        pass
    # The file as a whole does not parse (or changed): fall back to the block itself.
    start = code.co_firstlineno
    block = inspect.getblock(lines[start - 1:])
    text = textwrap.dedent("".join(block))
    try:
        tree = ast.parse(text)
        return _match(tree, code, first_line=1), start - 1
    except (SyntaxError, LookupError):
        raise SourceNotFoundError(
            f"cannot parse the source of {code.co_name}() at {code.co_filename}:{start}",
            hint="the file may have changed since the function was defined; re-run its definition") from None


def _match(tree, code, first_line=None):
    first_line = code.co_firstlineno if first_line is None else first_line
    name = code.co_name
    candidates = []
    for node in ast.walk(tree) if name == "<lambda>" else _definitions(tree).get((name, first_line), ()):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            starts = [d.lineno for d in node.decorator_list] + [node.lineno]
            if min(starts) == first_line:
                candidates.append(node)
        elif isinstance(node, ast.Lambda) and name == "<lambda>" and node.lineno == first_line:
            if [a.arg for a in node.args.args] == list(code.co_varnames[:code.co_argcount]):
                candidates.append(node)
    if not candidates:
        raise LookupError(name)
    if len(candidates) > 1 and name == "<lambda>":
        candidates = _lambda_by_column(candidates, code) or candidates
    return candidates[0]


def _definitions(tree) -> dict:
    """{(name, first line): [def nodes]} for every `def` in `tree`, in `ast.walk`'s order, once per tree: a def
    is a statement, so only statements are visited, not every expression of the file for each function."""
    cached = _DEFINITIONS.get(id(tree))
    if cached is not None and cached[0] is tree:
        return cached[1]
    found: dict = {}
    nodes = [tree]
    for node in nodes:  # breadth first, as ast.walk
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            found.setdefault((node.name, first), []).append(node)
        for field in node._fields:
            value = getattr(node, field, None)
            if value.__class__ is list:
                nodes.extend(item for item in value if isinstance(item, _BLOCK_ITEMS))
    if len(_DEFINITIONS) > 64:
        _DEFINITIONS.clear()
    _DEFINITIONS[id(tree)] = (tree, found)
    return found


_BLOCK_ITEMS = (ast.stmt, ast.excepthandler, *((ast.match_case,) if hasattr(ast, "match_case") else ()))
_DEFINITIONS: dict = {}  # id(tree) -> (tree, its _definitions)


def _lambda_by_column(candidates, code):
    """Several lambdas on one line: pick the one whose body the code object points at."""
    cols = {pos[2] for pos in code.co_positions() if pos[2] is not None}
    return [node for node in candidates if node.body.col_offset in cols]


@functools.lru_cache(maxsize=256)
def _comments(file, lines, first_line) -> dict:
    """{line: comments} for comment lines standing alone just above a line of code."""
    found, pending = {}, []
    readline = iter(textwrap.dedent("".join(lines)).splitlines(True)).__next__
    try:
        for token in tokenize.generate_tokens(readline):
            if token.type == tokenize.COMMENT and token.line.strip().startswith("#"):
                pending.append(token.string)
            elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                    tokenize.COMMENT, tokenize.ENDMARKER) and pending:
                found[token.start[0] + first_line - 1] = tuple(pending)
                pending = []
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return {}
    return found


def _char_col(text: str, byte_col: int) -> int:
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

"""Generated gradient code, rewritten so tapegen can differentiate it again (gradients of gradients).

The gradient code emit.py writes is plain Python, but a few of its idioms are
not what lowering accepts from a user, so the text is edited (by AST
position, keeping every comment and line) before it is compiled again:

- `del t1, t2` lines go; `a = b = None` becomes one assignment a name; `del tape[mark:]` (where a statement
  of a `try` block raised) becomes `tape = tape[:mark]`;
- `g is not None` becomes `is_not_none(g)`, `reversed(t)` becomes `(t)[::-1]`;
- `xs.pop()` (undoing `xs.append(v)`) becomes `xs = xs[:-1]`: the list the forward pass built
  stays whole for the second backward pass, which undoes the appends itself;
- `if tape.pop():` (and `if not tape.pop():`) becomes `if tape_pop(tape, None):` (a branch's
  direction restores nothing), and `h = tape.pop()` becomes `h = tape_pop(tape, h)`, naming what the pop
  restores (forward mode needs to know whether it carries a tangent), and the
  tape is renamed `recorded` (`tape` is a name reserved for generated code);
- `saved_region(A, i)` and reads `t = A[i]` of an array written into become
  `copy_region(A, i)` (lowering refuses a named view of an array written later), but for a view a write is
  put back through (`view_positions(A, row)`: the user's `row = out[i]; row[:] = v`), which stays one;
- `np.s_[i, 1:]` becomes `(i, slice(1, None, None))`;
- the final `return value, gradients` returns what the gradient function returns.

The result is registered in `linecache` and compiled beside the user's scope,
so lowering reads it and resolves its names like any user function.
"""
from __future__ import annotations

import ast
import linecache
import re

import numpy as np

from .. import rules
from ..frontend.resolve import LiveNamespace
from .load import _unique


def load(generated, target, has_aux: bool, with_value: bool):
    """The differentiable function for `generated` (a grad-kind `pipeline.Generated`) of `target`."""
    return _load(generated, target, _differentiable_source(generated.text, has_aux, with_value))


def _differentiable_source(text: str, has_aux: bool, with_value: bool) -> str:
    """Generated gradient code rewritten for lowering; the result is the gradient unless `with_value`."""
    source = text.encode("utf-8")
    lines = source.splitlines(keepends=True)
    starts = np.cumsum([0] + [len(line) for line in lines]).tolist()
    tree = ast.parse(text)
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef))
    edits, dropped = [], set()
    tape = _free_name(text, "recorded")

    segment = _segments(text)

    written = {node.targets[0].value.id for node in ast.walk(function) if isinstance(node, ast.Assign)
               and isinstance(node.targets[0], ast.Subscript) and isinstance(node.targets[0].value, ast.Name)}
    viewed = {"view_positions": 1, "shows_memory_of": 0}  # (the position of the view in each's arguments)
    put_back = {node.args[viewed[node.func.id]].id for node in ast.walk(function)  # views a write is put back
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in viewed}  # through
    #                                          (or asked whether they show the array's memory when the code runs),
    made_from = [(node.targets[0].id, {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)})
                 for node in ast.walk(function) if isinstance(node, ast.Assign) and len(node.targets) == 1
                 and isinstance(node.targets[0], ast.Name)]
    grown = True
    while grown:  # and the views they are made from (`a = out[1:]; b = a[0]`), kept views too
        grown = False
        for target, sources in made_from:
            if target in put_back and not sources <= put_back:
                put_back |= sources
                grown = True
    flags = {node.targets[0].id for node in ast.walk(function) if isinstance(node, ast.Assign)
             and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and _calls(node.value, "shows_memory_of")}
    stale = {node.args[2].id for node in ast.walk(function) if _calls(node, "view_again")  # a view made before a
             and isinstance(node.args[0], ast.Name) and node.args[0].id in flags  # write, kept where it turned out a
             and isinstance(node.args[2], ast.Name)} - put_back  # copy (`refresh_views`): a copy here, read after it
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript) \
                and isinstance(node.value.value, ast.Name) and node.value.value.id in written \
                and not any(isinstance(t, ast.Name) and t.id in put_back for t in node.targets):
            index = _index_value(node.value.slice, segment)  # a copy: lowering refuses a named view of an array
            edits.append((node.value, f"copy_region({node.value.value.id}, {index})"))  # that is written later
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in stale:
            edits.append((node.value, f"np.copy({segment(node.value)})"))
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "np.s_":
            edits.append((node, _index_value(node.slice, segment)))
        elif isinstance(node, ast.Delete) and isinstance(node.targets[0], ast.Subscript):  # `del tape[mark:]`
            mark = segment(node.targets[0].slice.lower)                                # where a protected
            edits.append((node, f"{tape} = {tape}[:{mark}]"))                          # statement raised
        elif isinstance(node, ast.Delete):
            dropped.add(node.lineno)
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.IsNot) \
                and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None:
            edits.append((node, f"is_not_none({segment(node.left)})"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "reversed":
            edits.append((node, f"({segment(node.args[0])})[::-1]"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "saved_region":
            edits.append((node.func, "copy_region"))
        elif isinstance(node, ast.Assign) and len(node.targets) > 1:  # a = b = None: one name at a time
            edits.append((node, "; ".join(f"{segment(t)} = {segment(node.value)}" for t in node.targets)))
        elif isinstance(node, ast.Expr) and _is_list_pop(node.value):  # the backward pass undoing an append:
            name = node.value.func.value.id                          # a shorter copy, so the list itself
            edits.append((node, f"{name} = {name}[:-1]"))           # is whole again when this code's own
        elif isinstance(node, ast.Assign) and _is_tape_pop(node.value):  # backward pass undoes the appends
            target = node.targets[0]
            restored = segment(target.value if isinstance(target, ast.Subscript) else target)
            edits.append((node.value, f"tape_pop({tape}, {restored})"))
    restoring = {id(node.value) for node in ast.walk(function) if isinstance(node, ast.Assign)}
    edits += [(node, f"tape_pop({tape}, None)") for node in ast.walk(function)  # `if not tape.pop():`: a
              if _is_tape_pop(node) and id(node) not in restoring]            # branch's direction, restoring nothing
    returned = function.body[-1].value
    value, gradients = returned.elts
    if not with_value:
        extra = f", {segment(value.elts[1])}" if has_aux else ""
        edits.append((returned, segment(gradients) + extra))
    replaced = {id(node.func.value) for node, _ in edits if _is_tape_pop(node)} | \
        {id(node.targets[0].value) for node, _ in edits if isinstance(node, ast.Delete)}
    edits += [(node, tape) for node in ast.walk(function)
              if isinstance(node, ast.Name) and node.id == "tape" and id(node) not in replaced]
    source = _edited(source, starts, edits)
    kept = [line for number, line in enumerate(source.splitlines(keepends=True), 1) if number not in dropped]
    return b"".join(kept).decode("utf-8")


def _calls(node, name) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _segments(text):
    """`ast.get_source_segment(text, node)` as a function of `node`, without splitting `text` into lines on each
    call (which made rewriting a long function's gradient code quadratic)."""
    if any(ch in text for ch in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"):  # where str.splitlines and ast differ
        return lambda node: ast.get_source_segment(text, node)
    lines = text.splitlines(keepends=True)

    def segment(node):
        first, last = lines[node.lineno - 1].encode(), lines[node.end_lineno - 1].encode()
        if node.lineno == node.end_lineno:
            return first[node.col_offset:node.end_col_offset].decode()
        return "".join([first[node.col_offset:].decode(), *lines[node.lineno:node.end_lineno - 1],
                        last[:node.end_col_offset].decode()])
    return segment


def _edited(source: bytes, starts, edits) -> bytes:
    """`source` with each (node, new text) edit's span replaced, last first: in one pass where no two edits
    overlap (replacing them one at a time copied the whole code for each: quadratic in its length)."""
    ordered = sorted(edits, key=lambda edit: (edit[0].lineno, edit[0].col_offset), reverse=True)
    spans = [(starts[node.lineno - 1] + node.col_offset, starts[node.end_lineno - 1] + node.end_col_offset, new)
             for node, new in ordered]
    if all(spans[k + 1][1] <= spans[k][0] for k in range(len(spans) - 1)):
        pieces, done = [], len(source)
        for begin, end, new in spans:
            pieces += [source[end:done], new.encode("utf-8")]
            done = begin
        pieces.append(source[:done])
        return b"".join(reversed(pieces))
    for begin, end, new in spans:
        source = source[:begin] + new.encode("utf-8") + source[end:]
    return source


def _index_value(node, segment) -> str:
    """A subscript's index as a value: `1:, j` -> `(slice(1, None, None), j)`."""
    if isinstance(node, ast.Slice):
        parts = [segment(p) if p is not None else "None" for p in (node.lower, node.upper, node.step)]
        return f"slice({', '.join(parts)})"
    if isinstance(node, ast.Tuple):
        return f"({', '.join(_index_value(e, segment) for e in node.elts)},)"
    return segment(node)


def _free_name(text, base) -> str:
    """`base`, or `base_1`, ... : a name the generated code does not use (what the tape is renamed to)."""
    used = set(re.findall(r"\w+", text))
    return next(name for name in [base] + [f"{base}_{i}" for i in range(1, 1000)] if name not in used)


def _is_list_pop(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop" \
        and isinstance(node.func.value, ast.Name) and node.func.value.id != "tape" and not node.args


def _is_tape_pop(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop" \
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "tape" and not node.args


class _Globals(LiveNamespace):
    """Generated code's globals, answering `in` for the user's names too (lowering resolves names with `in`)."""

    def __contains__(self, name):
        return dict.__contains__(self, name) or (self._names is not None and name in self._names) \
            or name in self._sources or name in self._cells or name in self._globals


def _load(generated, target, text):
    """Compile `text` beside the user's scope; register it in linecache so tapegen can read it back."""
    program = generated.program
    wrt = ",".join(v.name for v in generated.adjoint.wrt)
    root = re.search(r" of (.+)>$", program.span.file)  # nested: keep the user's file and line
    where = root.group(1) if root else f"{program.span.file}:{program.span.line}"
    filename = _unique(f"<tapegen {generated.name}[{wrt}] of {where}>", text)  # (code made for other statics of
    #     one function, `kind="sin"` and `kind="tanh"`, each read back as its own when lowered again)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = _Globals(rules.Names(), target.fn, program.free_sources)
    exec(compile(text, filename, "exec"), namespace)
    function = namespace[generated.name]
    function.__defaults__ = target.defaults or None
    return function

"""`graph`: a function's Wengert list as a Graphviz DOT graph (text only, no graphviz needed).

One node per argument (ellipse) and per equation (box, labelled with the
statement as generated code and its user line), one edge from each value to
the equations that read it. Loops and branches are clusters; a loop-carried
value also gets a dashed edge from its last assignment in the body back to
where the body reads it. With `wrt`, the equations a gradient flows through
are filled. Node names are numbered in program order, so the text is
deterministic and diffs cleanly.

Render it with `dot -Tsvg graph.dot -o graph.svg`, or paste it into any
Graphviz viewer.
"""
from __future__ import annotations

from .. import pipeline
from ..ir import Eqn, Exit, If, Loop, atom_vars
from .inspection import expression_text


def graph(f, wrt=None) -> str:
    """The computation graph of `f` as Graphviz DOT text.

    Args:
        f: the function (plain or `@differentiate`d).
        wrt: optional argument position(s) or name(s): equations on a gradient path are shaded.

    Returns:
        str: a `digraph`, one node per argument and per primitive.

    Example:
        >>> import numpy as np, tapegen as tg
        >>> def f(x1, x2):
        ...     return (x1 + x2) * np.sin(x1)
        >>> print(tg.graph(f))              # doctest: +SKIP
        digraph f { ...
    """
    from ..transforms.activity import analyze
    from ..api import _differentiated
    target = _differentiated(f)._target
    program = pipeline.lowered(target.fn)
    activity = None
    if wrt is not None:
        indices, _ = target.wrt(wrt)
        outputs = (program.outputs[0],)
        activity = analyze(program, tuple(program.params[i] for i in indices), outputs)
    return _Dot(program, activity).text()


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Dot:
    def __init__(self, program, activity):
        self.program = program
        self.activity = activity
        self.lines = []
        self.defined = {}  # var -> node ids of its latest assignment(s)
        self.count = 0
        self.depth = 1

    def text(self) -> str:
        p = self.program
        self.emit(f"label={_quote(f'{p.name}() from {p.span.file}:{p.span.line}')};")
        self.emit("labelloc=t;")
        self.emit('node [fontname="monospace", fontsize=10];')
        for param in p.params:
            node = self.node(param.name, "shape=ellipse")
            self.defined[param] = [node]
        self.block(p.body)
        out = self.node("return", "shape=doublecircle")
        for atom in p.outputs:
            self.edges(atom_vars(atom), out)
        return "\n".join([f"digraph {_quote(p.name)} {{"] + self.lines + ["}"]) + "\n"

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    def node(self, label: str, attributes: str) -> str:
        self.count += 1
        name = f"n{self.count}"
        self.emit(f"{name} [label={_quote(label)}, {attributes}];")
        return name

    def edges(self, variables, node, style="") -> None:
        for var in dict.fromkeys(variables):
            for source in self.defined.get(var, ()):
                self.emit(f"{source} -> {node}{style};")

    def block(self, stmts) -> None:
        for stmt in stmts:
            if isinstance(stmt, Eqn):
                self.equation(stmt)
            elif isinstance(stmt, Loop):
                self.loop(stmt)
            elif isinstance(stmt, If):
                self.branch(stmt)
            elif isinstance(stmt, Exit):
                self.node(stmt.kind, "shape=plaintext")

    def equation(self, eqn) -> None:
        label = f"{', '.join(v.name for v in eqn.outputs)} = {expression_text(eqn)}\nline {eqn.span.line}"
        active = self.activity is not None and any(self.activity.active(v) for v in eqn.outputs)
        node = self.node(label, "shape=box" + (', style=filled, fillcolor="#ffe9b3"' if active else ""))
        self.edges(eqn.reads, node)
        for var in eqn.outputs:
            self.defined[var] = [node]

    def cluster(self, label: str):
        self.count += 1
        self.emit(f"subgraph cluster_{self.count} {{")
        self.depth += 1
        self.emit(f"label={_quote(label)};")
        self.emit("style=rounded;")

    def end_cluster(self) -> None:
        self.depth -= 1
        self.emit("}")

    def loop(self, stmt) -> None:
        self.cluster(f"{stmt.span.text.strip()}   (line {stmt.span.line})")
        before = dict(self.defined)
        first_reads = {}  # var read in the body before the body assigns it -> reading nodes
        start = len(self.lines)
        self.block(stmt.test_body)
        self.block(stmt.body)
        for line in self.lines[start:]:
            self._note_reads(line, before, first_reads)
        for var, readers in first_reads.items():
            for source in self.defined.get(var, ()):
                if source not in before.get(var, ()):
                    for reader in readers:
                        self.emit(f'{source} -> {reader} [style=dashed, label="next"];')
        self.end_cluster()
        for var, nodes in before.items():  # after the loop: the body's value, or the one from before
            if self.defined.get(var) != nodes:
                self.defined[var] = list(dict.fromkeys(self.defined[var] + nodes))

    def _note_reads(self, line, before, first_reads) -> None:
        parts = line.strip().rstrip(";").split(" -> ")
        if len(parts) != 2 or "[" in parts[1]:
            return
        source, reader = parts
        for var, nodes in before.items():
            if source in nodes:
                first_reads.setdefault(var, []).append(reader)

    def branch(self, stmt) -> None:
        before = dict(self.defined)
        self.cluster(f"{stmt.span.text.strip()}   (line {stmt.span.line})")
        self.block(stmt.then)
        after_then, self.defined = self.defined, dict(before)
        if stmt.orelse:
            self.end_cluster()
            self.cluster("else")
            self.block(stmt.orelse)
        self.end_cluster()
        for var in set(after_then) | set(self.defined):
            merged = after_then.get(var, []) + self.defined.get(var, [])
            self.defined[var] = list(dict.fromkeys(merged))

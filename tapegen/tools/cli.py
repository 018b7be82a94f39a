"""The command line: `python -m tapegen show | export | wengert | graph | trace | rules | check`.

Owns argument parsing, loading `FILE.py:FUNCTION` targets, and turning every
failure into tapegen's error format (file:line:col, the line, a caret, a
hint) with exit status 2, never a traceback. What each command prints comes
from the library (`tapegen.source`, `export.export`, `inspection`,
`selfcheck`); the rule listing (`rules`, also `docs/rules.md`) is written here.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import linecache
import os
import sys
import traceback

import numpy as np
from pathlib import Path

from ..errors import TapegenError
from ..ir import Span

MANUAL = """\
NAME
    tapegen - readable reverse-mode gradients for NumPy functions

SYNOPSIS
    python -m tapegen show FILE.py:FUNCTION [--kind grad|vjp|jvp] [--wrt NAME,...] [--color WHEN]
    python -m tapegen export FILE.py:FUNCTION [-o OUT.py] [--wrt NAME,...]
    python -m tapegen export FILE.py:FUNCTION --inplace [--wrt NAME,...]
    python -m tapegen export --check FILE.py...
    python -m tapegen wengert FILE.py:FUNCTION
    python -m tapegen graph FILE.py:FUNCTION [--wrt NAME,...]
    python -m tapegen trace FILE.py:FUNCTION ARG... [--wrt NAME,...]
    python -m tapegen rules [--markdown] [--table NAME]
    python -m tapegen check [--select TEXT] [--quiet]

DESCRIPTION
    tapegen differentiates NumPy functions by reading their source and writing
    new Python source that computes the gradient. These commands print that
    code, save it as a standalone module, and show the steps in between.

    FILE.py is run (imported) to find FUNCTION; guard a script's own work with
    `if __name__ == "__main__":`. FUNCTION may be dotted (Class.method).
    --wrt takes argument names or positions, comma-separated: one gives a bare
    gradient, several a tuple. The default is the wrt of the function's
    @tapegen.differentiate decorator, else the first argument.

COMMANDS
    show      Print the generated code: kind `grad` (forward and backward in one
              function, returning value and gradient), `vjp` (a forward function
              returning residuals and a backward function taking a cotangent), or
              `jvp` (forward mode). Highlighted on a terminal; plain when piped.
    export    Write a module that computes the value and gradient with NumPy alone:
              the generated code plus the tapegen helpers it calls. Import it where
              tapegen is not installed. Without -o, print it.
              --inplace: insert FUNCTION_grad (returning value and gradient) right
              after FUNCTION in FILE.py itself, or replace the one inserted before;
              every other byte of the file stays as it was. It is marked by two
              `# tapegen:` comment lines (a fingerprint of FUNCTION's source,
              tapegen's version, wrt), and keeps its helpers inside a builder
              function, so they cannot clash with the file's names.
              --check: exit 1, printing a unified diff, if a gradient --inplace
              wrote in FILE.py is not what --inplace would write now (for CI and
              pre-commit); 0 if all are current.
    wengert   Print the Wengert list: one primitive a line, beside the user's lines.
    graph     Print the computation graph as Graphviz DOT (render: dot -Tsvg).
    trace     Evaluate at ARG... (Python literals: 1.0, [1.0, 2.0]; write 1.0, not 1,
              for a float) and print every forward value, what the backward pass
              saves, and every adjoint. Default wrt: every float argument.
    rules     List every primitive, by table, with the arguments its VJP and JVP rules
              cover. --markdown writes the table of docs/rules.md.
    check     Check every built-in VJP rule against central finite differences on
              small fixed inputs, and print a table.

EXAMPLES
    python -m tapegen show model.py:loss --wrt W,b
    python -m tapegen show model.py:loss --kind vjp | less
    python -m tapegen export model.py:loss --wrt W,b -o loss_grad.py
    python -m tapegen export model.py:loss --wrt W,b --inplace
    python -m tapegen export --check model.py
    python -m tapegen graph model.py:loss > loss.dot && dot -Tsvg loss.dot -o loss.svg
    python -m tapegen trace examples/how_it_works.py:f 1.0 2.0
    python -m tapegen rules --markdown > docs/rules.md

EXIT STATUS
    0   success
    1   check: a rule disagrees with finite differences, or fails to run;
        export --check: a gradient written with --inplace is out of date
    2   usage error, or an error in the file or function, printed as
        file:line:col, the offending line with a caret, and a hint

ENVIRONMENT
    NO_COLOR   if set, `show` does not colour its output (unless --color always)
"""


class CommandError(TapegenError):
    """A command-line usage problem (bad target, missing file), shown like any tapegen error."""


def main(argv=None) -> int:
    """Run the command line; returns the exit status (also the `tapegen` script's entry point)."""
    args = _parser().parse_args(argv)
    if args.help or args.command is None:
        stream = sys.stdout if args.help else sys.stderr
        stream.write(MANUAL if args.help else MANUAL.split("DESCRIPTION")[0] + "Run `python -m tapegen --help`.\n")
        return 0 if args.help else 2
    try:
        return COMMANDS[args.command](args)
    except TapegenError as exc:
        print(exc.render(), file=sys.stderr)
        return 2
    except BrokenPipeError:  # `... | head`: the reader left; not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a tapegen bug: say so in one line, no traceback unless asked
        if os.environ.get("TAPEGEN_TRACEBACK"):
            traceback.print_exc()
        print(f"tapegen: internal error: {type(exc).__name__}: {exc}\n"
              "hint: this is a tapegen bug; set TAPEGEN_TRACEBACK=1 for the traceback", file=sys.stderr)
        return 2


def _parser():
    parser = argparse.ArgumentParser(prog="python -m tapegen", add_help=False,
                                     usage="python -m tapegen COMMAND ... (--help for the manual)")
    parser.add_argument("-h", "--help", action="store_true")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name, summary):
        sub = commands.add_parser(name, help=summary, description=summary, prog=f"python -m tapegen {name}")
        return sub

    def target(sub):
        sub.add_argument("target", metavar="FILE.py:FUNCTION")

    def wrt(sub):
        sub.add_argument("--wrt", metavar="NAME,...",
                         help="argument names or positions (default: the decorator's, else the first)")

    show = command("show", "print the generated gradient code")
    target(show)
    wrt(show)
    show.add_argument("--kind", choices=("grad", "vjp", "jvp"), default="grad")
    show.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                      help="colour the code: auto (on a terminal), always, never")
    export = command("export", "write a standalone value-and-gradient module (needs only NumPy)")
    export.add_argument("target", nargs="+", metavar="FILE.py:FUNCTION",
                        help="the function; with --check, the files (FILE.py ...) to check")
    wrt(export)
    export.add_argument("-o", "--output", metavar="OUT.py", help="where to write it (default: print it)")
    export.add_argument("--inplace", action="store_true",
                        help="insert (or update) FUNCTION_grad beside FUNCTION in FILE.py itself")
    export.add_argument("--check", action="store_true",
                        help="exit 1, printing a diff, if a gradient --inplace wrote in FILE.py is out of date")
    target(command("wengert", "print the Wengert list"))
    graph = command("graph", "print the computation graph as Graphviz DOT")
    target(graph)
    wrt(graph)
    trace = command("trace", "tabulate forward values and backward adjoints at given arguments")
    target(trace)
    trace.add_argument("values", nargs="+", metavar="ARG", help="Python literals: 1.0, [1.0, 2.0], 3")
    wrt(trace)
    rules = command("rules", "list the primitives and their rules")
    rules.add_argument("--markdown", action="store_true", help="as the Markdown of docs/rules.md")
    rules.add_argument("--table", metavar="NAME", help="only this table (elementwise, linalg, ...)")
    check = command("check", "check every built-in VJP rule, or your function or custom rule, against finite "
                             "differences")
    check.add_argument("target", nargs="?", metavar="FILE.py:NAME",
                       help="a function, custom_vjp, custom_jvp or register_vjp'd function to check instead")
    check.add_argument("values", nargs="*", metavar="ARG", help="where to check it: Python literals")
    check.add_argument("--wrt", metavar="NAME,...", help="argument names or positions (default: the first)")
    check.add_argument("--select", metavar="TEXT", help="only samples whose name contains TEXT")
    check.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary")
    return parser


# --- loading FILE.py:FUNCTION -------------------------------------------------------------------


def load_target(spec: str):
    """The function named by `FILE.py:FUNCTION` (FUNCTION may be dotted), importing FILE.py."""
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise CommandError(f"expected FILE.py:FUNCTION, got {spec!r}", hint="e.g. python -m tapegen show model.py:loss")
    module = load_module(path)
    value = module
    for part in name.split("."):
        value = getattr(value, part, None)
        if value is None:
            functions = sorted(k for k, v in vars(module).items()
                               if callable(v) and getattr(v, "__module__", None) == module.__name__)
            raise CommandError(f"{path} defines no {name!r}",
                               hint=f"it defines: {', '.join(functions)}" if functions else "check the name")
    if not callable(value):
        raise CommandError(f"{spec} is a {type(value).__name__}, not a function")
    return value


def load_module(path: str):
    """Import the file at `path` as a module; its errors become tapegen errors pointing into it."""
    file = Path(path)
    if not file.is_file():
        raise CommandError(f"{path}: no such file")
    name = file.stem if file.stem.isidentifier() and file.stem not in sys.modules else "_tapegen_target"
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(file.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        end = (exc.end_offset or exc.offset or 1) if exc.end_lineno in (None, exc.lineno) else len(exc.text or "")
        span = Span(path, exc.lineno or 1, max((exc.offset or 1) - 1, 0), max(end - 1, exc.offset or 1),
                    (exc.text or "").rstrip("\n"))
        raise CommandError(f"invalid Python: {exc.msg}", span) from None
    except (Exception, SystemExit) as exc:
        raise CommandError(f"running {path} to find the function raised {type(exc).__name__}: {exc}",
                           _raise_site(exc, file), "tapegen imports the file; put script code under "
                           "`if __name__ == \"__main__\":`") from None
    return module


def _raise_site(exc, file):
    """The span of the line in `file` where `exc` was raised (the innermost frame there)."""
    target = str(file.resolve())
    site = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if str(Path(frame.f_code.co_filename).resolve()) == target:
            site = line
    if site is None:
        return None
    text = linecache.getline(target, site).rstrip("\n")
    return Span(str(file), site, len(text) - len(text.lstrip()), len(text), text)


def parse_wrt(text):
    """`--wrt a,b` -> ("a", "b"); `--wrt 0` -> 0 (one entry: a bare gradient); no --wrt -> None."""
    if text is None:
        return None
    items = [item.strip() for item in text.split(",") if item.strip()]
    items = [int(item) if item.lstrip("-").isdigit() else item for item in items]
    if not items:
        raise CommandError("--wrt is empty", hint="name arguments: --wrt W,b")
    return items[0] if len(items) == 1 else tuple(items)


def parse_value(text):
    """A command-line argument as a Python literal; lists become NumPy arrays."""
    import numpy as np
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise CommandError(f"argument {text!r} is not a Python literal",
                           hint="write numbers (1.0) or lists of numbers ([1.0, 2.0])") from None
    return np.asarray(value) if isinstance(value, list) else value


# --- commands -----------------------------------------------------------------------------------


def cmd_show(args) -> int:
    from .. import highlight
    from ..api import Differentiated, source
    fn, wrt = load_target(args.target), parse_wrt(args.wrt)
    if isinstance(fn, Differentiated):  # without --wrt, the decorator's wrt
        text = fn.source(args.kind, wrt=wrt)
    else:
        text = source(fn, kind=args.kind, wrt=0 if wrt is None else wrt)
    if _use_color(args.color, sys.stdout):
        text = highlight.ansi(text)
    sys.stdout.write(text)
    return 0


def _use_color(choice, stream) -> bool:
    if choice != "auto":
        return choice == "always"
    tty = hasattr(stream, "isatty") and stream.isatty()
    return tty and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def cmd_export(args) -> int:
    from .export import export
    if args.check or args.inplace:
        return _export_inplace(args)
    if len(args.target) != 1:
        raise CommandError("export takes one FILE.py:FUNCTION", hint="--check takes several files")
    text = export(load_target(args.target[0]), wrt=parse_wrt(args.wrt))
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text)
        print(f"wrote {args.output}: value_and_grad and grad of {args.target[0]}", file=sys.stderr)
    return 0


def _export_inplace(args) -> int:
    """`export FILE.py:FUNCTION --inplace` and `export --check FILE.py ...` (they import libcst)."""
    if args.check and args.inplace:
        raise CommandError("--check and --inplace do not go together",
                           hint="--check reports what --inplace would change, and changes nothing")
    if args.output is not None:
        raise CommandError(f"-o does not go with --{'check' if args.check else 'inplace'}",
                           hint="--inplace writes into FILE.py itself")
    from . import inplace
    if args.check:
        if args.wrt is not None:
            raise CommandError("--check takes no --wrt", hint="each gradient block records the wrt it was made for")
        status = 0
        for path in args.target:
            old, new, changes = inplace.check(path, load_module)
            for change in changes:
                if change.status != "current":
                    print(f"{path}: {change.name}_grad is out of date: {change.reason}", file=sys.stderr)
                    status = 1
            if new != old:
                sys.stdout.write(inplace.diff(path, old, new))
        return status
    if len(args.target) != 1:
        raise CommandError("--inplace takes one FILE.py:FUNCTION")
    path, _, name = args.target[0].rpartition(":")
    if not path or not name:
        raise CommandError(f"expected FILE.py:FUNCTION, got {args.target[0]!r}",
                           hint="e.g. python -m tapegen export model.py:loss --inplace")
    wrt = None if args.wrt is None else inplace.parse_wrt(args.wrt)
    if args.wrt is not None and wrt is None:
        raise CommandError("--wrt is empty", hint="name arguments: --wrt W,b")
    old, new, change = inplace.insert(path, name, wrt, load_module)
    if new != old:
        inplace.write(path, new)
    where = {"inserted": "inserted", "updated": "updated", "current": "already current:"}[change.status]
    print(f"{path}: {where} {name}_grad beside {name}" + (f" ({change.reason})" if change.status == "updated" else ""),
          file=sys.stderr)
    return 0


def cmd_wengert(args) -> int:
    from ..api import wengert
    print(wengert(load_target(args.target)))
    return 0


def cmd_graph(args) -> int:
    from .graphing import graph
    sys.stdout.write(graph(load_target(args.target), wrt=parse_wrt(args.wrt)))
    return 0


def cmd_trace(args) -> int:
    from .tracing import trace
    fn = load_target(args.target)
    values = [parse_value(v) for v in args.values]
    try:
        table = trace(fn, *values, wrt=parse_wrt(args.wrt))
    except TapegenError:
        raise
    except Exception as exc:  # the function itself failed at these arguments: not a tapegen bug
        raise CommandError(f"running {args.target} at {', '.join(args.values)} raised {type(exc).__name__}: {exc}",
                           hint="check the number, shapes and types of the arguments") from None
    print(table)
    return 0


def cmd_rules(args) -> int:
    from .rules_listing import listing
    sys.stdout.write(listing(markdown=args.markdown, only=args.table))
    return 0


def cmd_check(args) -> int:
    from . import selfcheck
    from .inspection import table
    if args.target:
        return _check_target(args)
    results, unsampled = selfcheck.run(args.select)
    failed = [r for r in results if r.status != "ok"]
    shown = failed if args.quiet else results
    rows = [(r.sample.name, ", ".join(r.primitives) or "-", f"{r.max_abs_error:.1e}", r.status) for r in shown]
    if rows:
        print("\n".join(table(("sample", "primitives", "max abs err", "status"), rows)))
    for result in failed:
        print(f"\n{result.sample.name}: {result.status}\n{result.detail}")
    print(f"\n{len(results)} samples: {len(results) - len(failed)} ok, {len(failed)} failed")
    if unsampled and args.select is None:
        names = ", ".join(f"{name} ({table})" for table, name in unsampled)
        print(f"primitives with VJP rules but no sample here (not checked): {names}")
    return 1 if failed else 0


def _check_target(args) -> int:
    """`check FILE.py:NAME ARG...`: gradcheck one function or custom rule at the given arguments."""
    from ..errors import GradcheckError
    from .gradcheck import gradcheck
    fn = load_target(args.target)
    if not args.values:
        raise CommandError(f"check {args.target} needs the arguments to check it at",
                           hint=f"e.g. python -m tapegen check {args.target} '[0.5, -1.0]'")
    values = [np.asarray(v, dtype=float) if isinstance(v, list) else v for v in map(parse_value, args.values)]
    wrt = parse_wrt(args.wrt)
    try:
        report = gradcheck(fn, *values, wrt=0 if wrt is None else wrt)
    except GradcheckError as exc:
        print(exc)
        return 1
    print(report)
    return 0


COMMANDS = {"show": cmd_show, "export": cmd_export, "wengert": cmd_wengert, "graph": cmd_graph,
            "trace": cmd_trace, "rules": cmd_rules, "check": cmd_check}

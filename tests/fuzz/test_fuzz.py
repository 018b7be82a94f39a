"""Property-based fuzzing: random programs through the whole transform, against finite differences.

Each program from `generator.programs()` is written to a real file, imported,
and checked at a random point at least `MARGIN` from any kink:

1. the value from the generated gradient code equals the plain call;
2. reverse-mode gradients (`grad` code for all arguments and for one, called
   again at the same and at another point, and the `vjp` code's pullback)
   equal central finite differences in float64;
3. if `tapegen.jvp` exists, forward mode agrees with the gradients of 2 by
   the dot-product identity <J u, 1> = <u, J^T 1> along random u;
4. the generated source is the same bytes when generated again from a fresh
   copy of the function (and, for a batch, in processes with other hash seeds);
5. no generated code writes into its arguments.

Two calls in three specialize with buffer reuse at every size, so that the
`out=` rewrites (normally only for arrays of 256 KiB and up) meet every program.

A failure that matches an open core bug (KNOWN_BUGS, each with a regression
test in tests/test_fuzz_regressions.py) is counted, not raised.

`pytest tests/fuzz --fuzz-long` (or TAPEGEN_FUZZ_LONG=1) runs thousands.
Run with `--hypothesis-show-statistics` to see the feature mix.
"""
import ast
import hashlib
import importlib.util
import itertools
import json
import os
import subprocess
import sys
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, assume, event, given, note, settings, strategies as st

import tapegen as tg
from conftest import numeric_vjp

from . import conftest as fuzz_options
from .generator import ENTRY, MARGIN, Program, RandomChooser, build, probe, programs

RTOL, ATOL = 1e-5, 1e-6
EXAMPLES = 4000 if fuzz_options.LONG else 300
_MODULES = itertools.count()


def load(source: str, path):
    """Write `source` to `path`, import it under a new module name, and return its entry function."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    name = f"{path.stem}_{next(_MODULES)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return getattr(module, ENTRY), name


def copies(args):
    return tuple(np.copy(a) if isinstance(a, np.ndarray) else a for a in args)


def admissible(program: Program, args) -> bool:
    """The point is far enough from every kink for finite differences; the value is finite."""
    try:
        value, margin = probe(program, copies(args))
    except (IndexError, ValueError):  # a helper whose branches return different shapes; the other one here
        return False
    if np.ndim(value) != 0:  # the same, taking the array branch here
        return False
    assert np.isfinite(value), f"the generator wrote a program that is not finite here:\n{program.source}"
    return margin > MARGIN


def assert_close(actual, expected, what):
    assert np.shape(actual) == np.shape(expected), f"{what}: shape {np.shape(actual)}, expected {np.shape(expected)}"
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, err_msg=what)


def check_program(program: Program, seed: int, directory, single: int = 0) -> list:
    """Properties 1-4 for `program` at the point drawn from `seed` (assumed admissible).

    Returns the open core bugs (KNOWN_BUGS) it ran into; raises on any other failure.
    """
    known = []
    with loaded(program, directory) as (f, copy):
        for check in properties(program, f, copy, program.arguments(seed), seed, single):
            try:
                check()
            except Exception as exc:
                bug = known_bug(program, check.__name__, exc)
                if bug is None:
                    raise
                known.append(bug)
    return known


@contextmanager
def loaded(program, directory):
    """The entry function of `program` from a file, and of a copy of it (same file name, new function)."""
    # named for its content, so that a replayed failure points at the same file and line
    stem = "fuzz_" + hashlib.sha1(program.source.encode()).hexdigest()[:12]
    f, module = load(program.source, directory / f"{stem}.py")
    g, copy_module = load(program.source, directory / "copy" / f"{stem}.py")
    try:
        yield f, g
    finally:
        sys.modules.pop(module, None)
        sys.modules.pop(copy_module, None)


def properties(program, f, copy, args, seed, single):
    """The checks of one program, as thunks; independent, so that a failing one hides none of the others.

    Generated code gets the arguments themselves, not copies, so that writing into them is caught last.
    """
    wrt = tuple(range(len(args)))
    names = program.params
    plain = f(*copies(args))
    expected = [numeric_vjp(f, args, k, 1.0) for k in wrt]

    function = tg.value_and_grad(f, wrt=wrt)

    def value_and_grad():
        assert plain == probe(program, copies(args))[0], "the generator's probe disagrees with the program"
        for call in ("first", "second"):  # the first call may run other code than later ones (specialization)
            with buffers_reused_at_any_size(single != 0):
                value, grads = function(*args)
            assert value == pytest.approx(plain, rel=1e-12, abs=1e-12), f"value_and_grad value differs ({call} call)"
            for k in wrt:
                assert_close(grads[k], expected[k], f"grad wrt {names[k]} ({call} call)")

    def another_point():
        """Code specialized at the first point, called at another (branches and trip counts may differ)."""
        other = program.arguments(seed + 7919)
        if not admissible(program, other):
            return
        value, grads = function(*other)
        assert value == pytest.approx(f(*copies(other)), rel=1e-12, abs=1e-12), "value differs at another point"
        for k in wrt:
            assert_close(grads[k], numeric_vjp(f, other, k, 1.0), f"grad wrt {names[k]} at another point")

    def vjp():
        out, pullback = tg.vjp(f, *args, wrt=wrt)
        assert out == pytest.approx(plain, rel=1e-12, abs=1e-12), "vjp output differs from the call"
        for k, pulled in enumerate(pullback(1.0)):
            assert_close(pulled, expected[k], f"vjp pullback wrt {names[k]}")

    def one_argument():
        k = single % len(args)
        assert_close(tg.grad(f, wrt=k)(*args), expected[k], f"grad wrt {names[k]} alone")

    def jvp():
        check_jvp(f, args, expected, seed, plain)

    def deterministic():
        for kind in ("grad", "vjp") + (("jvp",) if hasattr(tg, "jvp") else ()):
            assert tg.source(f, kind, wrt=wrt) == tg.source(copy, kind, wrt=wrt), f"{kind} source not deterministic"

    def inputs_unchanged():
        assert all(np.array_equal(a, b) for a, b in zip(args, program.arguments(seed))), "inputs were mutated"

    return [value_and_grad, another_point, vjp, one_argument, jvp, deterministic, inputs_unchanged]


@contextmanager
def buffers_reused_at_any_size(on: bool):
    """Specialized code writes into dead arrays however small (codegen/buffers.py; normally 256 KiB and up)."""
    from tapegen.codegen import buffers
    saved = buffers.MIN_BYTES
    buffers.MIN_BYTES = 0 if on else saved
    try:
        yield
    finally:
        buffers.MIN_BYTES = saved


def check_jvp(f, args, grads, seed, plain):
    """Forward mode, where it exists: its value is the call's, and by the dot-product identity its
    tangent along random `u` is <u, J^T 1>, with J^T 1 the gradients already checked."""
    if not hasattr(tg, "jvp"):
        return
    rng = np.random.default_rng(seed + 1)
    tangents = tuple(rng.standard_normal(np.shape(a)) if np.ndim(a) else float(rng.standard_normal()) for a in args)
    out, tangent_out = tg.jvp(f, args, tangents)
    assert out == pytest.approx(plain, rel=1e-12, abs=1e-12), "jvp output differs from the call"
    expected = sum(float(np.sum(np.asarray(g) * u)) for g, u in zip(grads, tangents))
    assert tangent_out == pytest.approx(expected, rel=RTOL, abs=ATOL), "jvp disagrees with vjp"


# --- open core bugs ---------------------------------------------------------------------------
# Each has its minimized program in tests/test_fuzz_regressions.py (xfail, strict). A fuzz failure that
# matches one is counted rather than raised, so that the fuzzer still finds new bugs in the programs
# around it. When a regression test starts passing, delete its row here. TAPEGEN_FUZZ_STRICT=1 raises all.

KNOWN_BUGS = (  # (regression test, does this failure look like it); empty while no fuzz-found bug is open
    ("test_adding_in_place_to_an_array_a_dead_dict_held",
     lambda tree, check, exc: "in place, and another name, list, dict or attribute holds it too" in str(exc)),
)


def known_bug(program, check, exc):
    """The regression test of the open bug this failure matches, or None."""
    if os.environ.get("TAPEGEN_FUZZ_STRICT") == "1":
        return None
    tree = ast.parse(program.source)
    return next((name for name, matches in KNOWN_BUGS if matches(tree, check, exc)), None)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, report_multiple_bugs=False,
          phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(program=programs(), seed=st.integers(0, 2 ** 16), single=st.integers(0, 2))
def test_random_program(program, seed, single, tmp_path):
    for feature in sorted(set(program.features)):
        event(feature.split(":")[0])
    note(f"program:\n{program.source}\narguments: {program.arguments(seed)!r}")
    assume(admissible(program, program.arguments(seed)))
    for bug in check_program(program, seed, tmp_path, single):
        event(f"known bug: {bug}")


# --- the checks themselves ------------------------------------------------------------------------

def first_passing(directory, count=1, start=0):
    """Seeds of generated programs that are admissible at their own point and pass every check (meeting no
    known bug: a check that swallows one cannot show that a wrong derivative fails it)."""
    found = []
    for seed in itertools.count(start):
        program = build(RandomChooser(seed))
        if admissible(program, program.arguments(seed)) and not check_program(program, seed, directory):
            found.append((program, seed))
        if len(found) == count:
            return found


def test_generated_code_does_not_depend_on_the_hash_seed(tmp_path):
    """The same programs transformed here and in two processes with other str hash seeds: the same bytes."""
    paths = []
    for seed in range(16):
        path = tmp_path / f"hashseed_{seed}.py"
        path.write_text(build(RandomChooser(seed)).source)
        paths.append(str(path))
    texts = [json.loads(_sources_script_output(paths, env=None))]
    root = os.path.dirname(os.path.dirname(tg.__file__))
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=root)
        result = subprocess.run([sys.executable, "-c", _SOURCES_SCRIPT, *paths], capture_output=True, text=True,
                                env=env, cwd=root, timeout=300)
        assert result.returncode == 0, result.stderr
        texts.append(json.loads(result.stdout))
    assert texts[1] == texts[0] and texts[2] == texts[0]


_SOURCES_SCRIPT = """
import importlib.util, json, sys
import tapegen as tg

def sources(path):
    spec = importlib.util.spec_from_file_location("fuzz_hash_" + str(abs(hash(path))), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    f = module.fuzzed
    wrt = tuple(range(f.__code__.co_argcount))
    texts = []
    for kind in ("grad", "vjp") + (("jvp",) if hasattr(tg, "jvp") else ()):
        try:
            texts.append(str(tg.source(f, kind, wrt=wrt)))
        except Exception as exc:  # a bug found elsewhere; here only whether it is the same everywhere
            texts.append(type(exc).__name__)
    return texts

print(json.dumps([sources(path) for path in sys.argv[1:]]))
"""


def _sources_script_output(paths, env):
    namespace = {"__name__": "fuzz_hash_inline"}
    argv, sys.argv = sys.argv, ["-c", *paths]
    output = []
    try:
        exec(compile(_SOURCES_SCRIPT.replace("print(", "output.append("), "<sources>", "exec"),
             {**namespace, "output": output})
    finally:
        sys.argv = argv
    return output[0]


@pytest.mark.parametrize("sabotage", ["gradient", "pullback"])
def test_a_wrong_derivative_fails_the_check(monkeypatch, tmp_path, sabotage):
    """The properties can fail: derivatives 0.1% off are caught."""
    (program, seed), = first_passing(tmp_path)
    if sabotage == "gradient":
        real = tg.value_and_grad

        def value_and_grad(f, wrt):
            g = real(f, wrt=wrt)
            return lambda *args: (lambda v, grads: (v, tuple(x * 1.001 for x in grads)))(*g(*args))
        monkeypatch.setattr(tg, "value_and_grad", value_and_grad)
    else:
        real = tg.vjp

        def vjp(f, *args, wrt):
            out, pullback = real(f, *args, wrt=wrt)
            return out, lambda g: tuple(x * 1.001 for x in pullback(g))
        monkeypatch.setattr(tg, "vjp", vjp)
    with pytest.raises(AssertionError):
        check_program(program, seed, tmp_path)


def test_a_point_near_a_kink_is_not_admissible():
    """Finite differences straddling a branch are wrong; the probe's margin keeps such points out."""
    body = "    if {cond}:\n        return np.sum(a) * 3.0\n    return np.sum(a)\n"
    source = "import numpy as np\n\n\ndef fuzzed(a):\n" + body.format(cond="np.sum(a) > 0.13")
    program = Program(source, source.replace("np.sum(a) > 0.13", "_gt(np.sum(a), 0.13)"), ((2,),), ())
    namespace = {}
    exec(source, namespace)
    near, far = np.array([0.1, 0.03 + 2e-7]), np.array([0.1, 0.2])
    assert not np.allclose(numeric_vjp(namespace[ENTRY], (near,), 0, 1.0), [3.0, 3.0])
    assert not admissible(program, (near,))
    assert admissible(program, (far,))


FAMILIES = {"unary", "binary", "constant", "reduce", "matmul", "index", "shape", "where", "linalg", "scan", "join",
            "ifexp", "loop-index", "if", "for", "while", "jump", "fill", "helper", "call", "stack", "augment",
            "reassign", "swap", "container", "local", "update", "loop", "name", "condition",
            "literal", "join-mixed", "list-reduce", "split", "nested-pick", "sequence", "elements", "dict-tuples",
            "nested-index", "dict-call", "layers", "loop-items",
            # Python idioms (idioms.py)
            "builtin", "math", "round", "comprehension", "nested-comprehension", "map", "unpack-loop",
            "dict-comprehension", "varargs", "function-values", "function", "objects", "generator-helper",
            "namedtuple"}


def test_the_generator_writes_valid_programs_of_every_feature():
    """Programs run (plain and probe agree, a finite scalar, inputs untouched); every feature family occurs."""
    seen = set()
    for seed in range(1000):
        program = build(RandomChooser(seed))
        seen.update(feature.split(":")[0] for feature in program.features)
        namespace = {}
        exec(compile(program.source, f"<fuzz {seed}>", "exec"), namespace)
        args = program.arguments(seed)
        value = namespace[ENTRY](*args)
        assert np.ndim(value) == 0 and np.isfinite(value)
        assert all(np.array_equal(a, b) for a, b in zip(args, program.arguments(seed))), "inputs mutated"
        assert value == probe(program, program.arguments(seed))[0]
    assert FAMILIES <= seen, FAMILIES - seen

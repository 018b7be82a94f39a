"""Programs the fuzzer (tests/fuzz) found wrong, minimized, against central finite differences.

A test marked xfail(strict=True) is a bug in tapegen's core still open: it
turns into a failure when the bug is fixed, so the mark can be removed.
"""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tapegen as tg
from conftest import numeric_vjp
from modes import check_modes


def check(f, *args, modes=("grad", "grad again", "vjp", "jvp")):
    """Value and derivatives of `f` at `args` by every mode, against the plain call and central differences."""
    expected = [numeric_vjp(f, args, k, 1.0) for k in range(len(args))]
    plain = f(*args)
    wrt = tuple(range(len(args)))
    function = tg.value_and_grad(f, wrt=wrt)
    for mode in modes:
        if mode in ("grad", "grad again"):  # a second call runs code specialized to the first call's shapes
            value, grads = function(*args)
        elif mode == "vjp":
            value, pullback = tg.vjp(f, *args, wrt=wrt)
            grads = pullback(1.0)
        else:
            if not hasattr(tg, "jvp"):
                continue
            tangents = tuple(np.ones(np.shape(a)) if np.ndim(a) else 1.0 for a in args)
            value, tangent = tg.jvp(f, args, tangents)
            assert tangent == pytest.approx(sum(float(np.sum(e)) for e in expected), rel=1e-6), mode
            grads = expected
        assert value == pytest.approx(plain, rel=1e-12), f"{mode}: value"
        for k, (grad, want) in enumerate(zip(grads, expected)):
            assert np.shape(grad) == np.shape(want), f"{mode}: shape of gradient {k}"
            np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-8, err_msg=f"{mode}: gradient {k}")


# --- branches ----------------------------------------------------------------------------------

def branch_saving_residuals(a):
    if np.sum(a) > 0.79:
        y = np.sum(np.sin(a))
    else:
        y = np.sum(np.cos(a))
    return y


def test_vjp_of_a_branch_whose_arms_save_residuals():
    check(branch_saving_residuals, np.array([0.3, -0.7, 1.1, -0.9]), modes=("vjp",))


def copy_in_a_branch(x):
    y = x * 2.0
    z = x * 3.0
    if x > 0.0:
        w = y
    else:
        w = z
    return w


def test_plain_copies_in_both_arms_of_a_branch():
    check(copy_in_a_branch, 1.0, modes=("grad", "vjp"))


def test_plain_copies_in_both_arms_of_a_branch_other_arm():
    check(copy_in_a_branch, -1.0)


# --- loops --------------------------------------------------------------------------------------

def returns_a_loop_carried_value(a, c):
    acc = 0.0
    for i in range(2):
        acc = np.tanh(acc + np.mean(c * a))
    return acc


def test_returning_a_variable_a_loop_updates():
    check(returns_a_loop_carried_value, np.array([0.65, -0.99, 0.62, -0.81]), -0.49, modes=("grad",))


def rebinds_the_array_it_iterates(a):
    for row in a:
        a = a + row
    return np.sum(a)


def rebinds_an_array_it_zips(a, b):
    for p, q in zip(a, b):
        a = a * 0.5 + p
    return np.sum(a ** 2)


def rebinds_an_array_it_enumerates(a):
    for k, p in enumerate(a):
        a = a * 0.5 + p
    return np.sum(a ** 2)


def test_loop_body_rebinding_the_iterated_array():
    check(rebinds_the_array_it_iterates, np.array([[1.44], [0.29], [0.90]]))


def test_loop_body_rebinding_a_zipped_array():
    check(rebinds_an_array_it_zips, np.array([0.3, -0.5, 0.8]), np.array([0.2, 0.4, -0.6]))


def test_loop_body_rebinding_an_enumerated_array():
    check(rebinds_an_array_it_enumerates, np.array([0.3, -0.5, 0.8]))


def inner_loop_rebinds_the_array_it_iterates(a, b):
    for row in b:
        for q in a:
            a = a + q * row
    return np.mean(a ** 2)


def test_inner_loop_rebinding_the_array_it_iterates():
    check(inner_loop_rebinds_the_array_it_iterates, np.array([-0.08, -0.33, 0.73]), np.array([0.5, -1.5]))


def return_then_continue(a, b):
    for i in range(2):
        if b > 0.13:
            return b * 2.0
        if a[i] > 0.0:
            continue
    return np.sum(a)


def return_then_break(a):
    for i in range(2):
        if a < 0.05:
            return a ** 2
        a = a * 2.0
        if a > 1.0:
            break
    return a


def test_early_return_then_continue_in_a_loop():
    check(return_then_continue, np.array([0.5, -0.3, 0.2]), -0.2)


def test_early_return_then_break_in_a_loop():
    check(return_then_break, 0.6)


# --- names --------------------------------------------------------------------------------------

def user_name_like_a_cotangent(a):
    a = a + 1
    for i in range(3):
        g_a = np.mean(a)
    return g_a


def test_user_variable_named_like_a_cotangent():
    check(user_name_like_a_cotangent, np.array([0.5, 1.0]))


def local_function_then_setitem(a):
    f1 = lambda u: u * 0.5
    Z = np.zeros(2)
    Z[0] = np.mean(f1(a))
    return np.sum(Z ** 2)


def nested_def_then_setitem(a):
    def f1(u, scale=0.5):
        return u * scale
    Z = np.zeros(2)
    Z[0] = np.mean(f1(a))
    return np.sum(Z ** 2)


@pytest.mark.parametrize("f", [local_function_then_setitem, nested_def_then_setitem], ids=["lambda", "def"])
def test_local_function_then_array_assignment(f):
    check(f, np.array([-0.86, 0.41, -0.30]))


def def_inside_a_loop(a):
    acc = 0.0
    for i in range(2):
        def half(u):
            return u * 0.5
        acc = acc + np.sum(half(a))
    return acc


def unused_def_inside_a_loop(a):
    acc = 0.0
    for i in range(2):
        def half(u):
            return u * 0.5
        acc = acc + np.sum(a)
    return acc


@pytest.mark.parametrize("f", [def_inside_a_loop, unused_def_inside_a_loop], ids=["called", "unused"])
def test_def_inside_a_loop(f):
    check(f, np.array([-0.86, 0.41, -0.30]))


def helper_with_break(p):
    acc = p
    for i in range(3):
        if np.sum(acc) > 1.0:
            break
        acc = acc * 1.5 + 0.1
    return acc


def calls_helper_with_break(a):
    return np.sum(helper_with_break(a) ** 2)


def helper_with_continue(p):
    acc = 0.0
    for row in p:
        if row > 0.13:
            continue
        acc = 0.5 * acc + 0.5 * np.tanh(np.sin(row))
    return np.sin(acc)


def calls_helper_with_continue(a):
    return helper_with_continue(a)


@pytest.mark.parametrize("f, a", [(calls_helper_with_break, [0.9, 0.5]), (calls_helper_with_break, [0.2, 0.1]),
                                  (calls_helper_with_continue, [0.41, -0.69])],
                         ids=["break-at-once", "break-later", "continue"])
def test_helper_with_a_break(f, a):
    check(f, np.array(a))


def unused_branch_after_or(a):
    for i in range(2):
        a = a * a
    c = a[0] > 0.13 or a[0] < 0.05
    if c:
        unused = a * 2.0  # noqa: F841  (the point: a branch whose backward pass has nothing to do)
    return np.sum(a)


def unused_choice_after_or(a):
    for i in range(2):
        a = a * a
    unused = a if a[0] > 0.13 or a[0] < 0.05 else a * 2.0  # noqa: F841
    return np.sum(a)


@pytest.mark.parametrize("f", [unused_branch_after_or, unused_choice_after_or], ids=["if", "ifexp"])
def test_unused_branch_on_an_or_condition(f):
    check(f, np.array([0.9, -0.7]))


def lambda_in_a_loop_after_an_elif_return(a, b):
    if np.mean(a) > 0.0:
        pass
    elif np.sum(a) > 0.47:
        return np.sum(b)
    for row in b:
        double = lambda u: u * 2.0
        b = b * 0.5 + double(row)
    return np.sum(b)


def test_lambda_in_a_loop_after_an_elif_return():
    check(lambda_in_a_loop_after_an_elif_return, np.array([-0.3, -0.2]), np.array([0.5, 0.1]))


# --- specialization ---------------------------------------------------------------------------

def assigns_into_an_empty_region(a):
    Z = np.zeros((1, 2))
    Z[1:] = a
    return np.mean(Z) + np.sum(a ** 2)


def test_assignment_into_an_empty_region_on_the_second_call():
    check(assigns_into_an_empty_region, np.array([[1.06, -1.33]]))


def scalar_packed_but_unused(a, b):
    params = {"p": b, "q": np.sum(a)}
    return np.sin(params["q"])


def test_float_argument_packed_in_a_dict_but_unused():
    check(scalar_packed_but_unused, np.array([0.41, -0.69]), -1.37)


def masked_sum(a):
    return np.sum(np.sin(a)[a > 0.5] ** 2)


def test_specialized_code_at_a_mask_selecting_fewer_elements():
    function = tg.value_and_grad(masked_sum)
    for a in ([0.9, 0.8, 0.1], [0.9, 0.8, 0.1], [0.9, 0.2, 0.1]):
        value, grad = function(np.array(a))
        assert value == pytest.approx(masked_sum(np.array(a)), rel=1e-12)
        np.testing.assert_allclose(grad, numeric_vjp(masked_sum, (np.array(a),), 0, 1.0), rtol=1e-6, atol=1e-8)


def stacked_then_masked(a):
    h = np.tanh(a)
    hs = []
    for i in range(3):
        h = h * 0.9
        hs.append(h)
    v = np.stack(hs)
    return np.sum(v[v > 0.5])


def test_specialized_code_at_a_mask_over_a_stacked_list():
    function = tg.value_and_grad(stacked_then_masked)
    for a in (1.2, 1.2, 0.6):
        value, grad = function(a)
        assert value == pytest.approx(stacked_then_masked(a), rel=1e-12)
        assert grad == pytest.approx(numeric_vjp(stacked_then_masked, (a,), 0, 1.0), rel=1e-6)


def collect_until(b, c):
    h = c
    hs = []
    for i in range(4):
        h = h * np.cos(np.exp(b))
        hs.append(h)
        if h > 0.05:
            break
    return np.sum(np.sum(np.stack(hs) ** 2, axis=0))


def test_specialized_code_at_a_list_a_break_cut_short():
    function = tg.value_and_grad(collect_until, wrt=(0, 1))
    for b, c in ((1.05, 0.88), (1.05, 0.88), (1.05, 0.01)):
        value, grads = function(b, c)
        assert value == pytest.approx(collect_until(b, c), rel=1e-12)
        for k, grad in enumerate(grads):
            assert grad == pytest.approx(float(numeric_vjp(collect_until, (b, c), k, 1.0)), rel=1e-6)


def one_of_two_shapes(x, a, b):
    if np.sum(x) > 0:  # the data picks the branch, so the guard cannot
        h = a
    else:
        h = b
    return np.mean(h * h) + np.sum(x)


def test_specialized_code_after_the_data_takes_the_other_branch():
    # Recorded on the first branch only, h's shape (3,) was trusted for the second too: the mean's
    # gradient came out with 1/3 for 1/4.
    a, b = np.arange(1.0, 4.0), np.arange(1.0, 5.0)
    grad = tg.grad(one_of_two_shapes, wrt=(1, 2))
    for x in (np.ones(2), -np.ones(2), np.ones(2), -np.ones(2)):
        for k, got in enumerate(grad(x, a, b)):
            np.testing.assert_allclose(got, numeric_vjp(one_of_two_shapes, (x, a, b), k + 1, 1.0), rtol=1e-6,
                                       atol=1e-8)


def sum_of_a_numpy_scalar_along_axis_0(a):
    s = np.sin(np.sum(a))  # a NumPy scalar: its .sum(axis=0) is itself (a 0-d array would refuse axis 0)
    return np.sin(np.sum(s, axis=0))


def test_a_numpy_scalar_summed_along_axis_0():
    check(sum_of_a_numpy_scalar_along_axis_0, np.array([0.03546487, 1.35139109]))


# --- containers -------------------------------------------------------------------------------

def mean_of_a_repeated_list(a):
    return np.mean([a] * 2)


def mean_of_joined_lists(a):
    return np.mean([a] + [a * 2.0])


def sin_of_joined_tuples(a):
    return np.sum(np.sin((a,) + (a * 2.0,)))


@pytest.mark.parametrize("f", [mean_of_a_repeated_list, mean_of_joined_lists, sin_of_joined_tuples],
                         ids=["list-times", "list-plus", "tuple-plus"])
@pytest.mark.parametrize("a", [0.3, np.array([0.3, -0.5])], ids=["scalar", "array"])
def test_numpy_function_of_a_list_built_with_plus_or_times(f, a):
    check(f, a)


# --- determinism ------------------------------------------------------------------------------

def one_arm_uses_more(a, b, c, d):
    if np.sum(d) > 0.0:
        y = a * b * c
    else:
        y = d * 2.0
    return np.sum(y)


def test_generated_code_is_the_same_under_any_hash_seed():
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import test_fuzz_regressions as t, tapegen as tg; "
              "print(tg.source(t.one_arm_uses_more, wrt=(0, 1, 2, 3)))")
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(os.path.abspath(tg.__file__)))
    texts = set()
    for seed in ("0", "1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=root)
        result = subprocess.run([sys.executable, "-c", script, here], capture_output=True, text=True, env=env,
                                cwd=root, timeout=120)
        assert result.returncode == 0, result.stderr
        texts.add(result.stdout)
    assert len(texts) == 1


# --- Python idioms: functions and objects as values, generator helpers --------------------------
# Open bugs are rows of IDIOMS marked xfail(strict=True): tests/fuzz/test_fuzz.py's KNOWN_BUGS names them by their id.

def function_at_a_negative_index(a):
    fs = (np.arctan, np.cos)
    return np.sum(fs[-2](a))


def lambda_at_a_negative_index(a):
    fs = [np.sin, lambda z: np.sin(2.0 * z)]
    return np.sum(fs[-1](a))


def lambda_in_a_dict_in_a_loop(a):
    for i in range(2):
        acts = {"h": lambda z: np.sin(z)}
        a = acts["h"](a)
    return np.sum(a)


def lambda_in_a_list_in_a_loop(a):
    for t in (a, a * 3.0):
        fs = [lambda z: np.sin(z) * t]
        a = fs[0](a)
    return np.sum(a)


def functions_indexed_in_a_loop(a):
    for i in range(2):
        fs = (np.tanh, np.sin)
        a = fs[1](a)
    return np.sum(a)


def functions_iterated_in_a_branch(a, b):
    if a[0] > 1.1:
        v = a
    else:
        fs = (np.tanh, np.sin)
        v = sum(f(b) for f in fs)
    return np.sum(v)


class Sine:
    def forward(self, z):
        return np.sin(z)


class Affine:
    def __init__(self, w):
        self.w = w

    def forward(self, z):
        return z * self.w + 0.1


class Scaled:
    def __init__(self, k):
        self.k = k

    def __call__(self, z):
        return self.k * np.tanh(z)


SINES = [Sine(), Sine()]
HALF = Scaled(0.5)


def objects_listed_in_a_loop(a):
    for i in range(2):
        blocks = [Sine(), Affine(0.5)]
        for block in blocks:
            a = block.forward(a)
    return np.sum(a)


def object_called_in_a_loop(a):
    scale = Scaled(0.5)
    h = 0.0
    for x in [a, a * 2.0]:
        h = h + scale(x)
    return np.sum(h)


def object_mapped(a):
    return np.sum(sum(map(Scaled(0.5), [a, a * 2.0])))


def object_of_a_computed_value_in_a_list(a, b):
    blocks = [Affine(np.tanh(b[0]))]
    return np.sum(blocks[0].forward(a))


def objects_of_computed_values_looped(a, b):
    h = a
    for block in [Affine(np.tanh(b[0])), Affine(0.5)]:
        h = block.forward(h)
    return np.sum(h)


def module_objects_of_one_class_looped(a):
    h = a
    for block in SINES:
        h = block.forward(h)
    return np.sum(h)


def module_objects_of_one_class_indexed(a):
    return np.sum(SINES[1].forward(a))


def object_in_a_dict_with_a_lambda(a):  # found by the long fuzz run: the dict was read as a value for the call
    acts = {"hidden": lambda z: z * np.cos(z), "out": HALF}
    return np.sum(acts["out"](np.sin(a)) + acts["hidden"](a))


def layer_with_an_object_default(p, act=HALF):
    return act(p)


def calls_a_helper_with_an_object_default(a):
    return np.sum(layer_with_an_object_default(a))


def yields_then_yields_from(p):
    yield p
    yield from (np.sin(p), p * 0.5)


def yields_from_a_tuple(p):
    yield from (np.sin(p), p * 0.5)


def sum_of_yields_then_yield_from(a):
    return np.sum(sum(yields_then_yields_from(a)))


def sum_of_a_yield_from_tuple(a):
    return np.sum(sum(yields_from_a_tuple(a)))


def comprehension_over_its_own_name(a):
    return np.sum(sum([np.sin(a) for a in [a, a * 2.0]]))


def zip_comprehension_over_its_own_name(a, b):  # found by the long fuzz run: a zip object has no len()
    v = np.outer(a, a)
    return np.sum(np.stack([np.sum(np.sin(b)) * q for b, q in zip(v, b)]))


def generator_over_a_local_it_shadows(a):
    h = a * 3.0
    return np.sum(sum(np.sin(h) for h in (h, a))) + np.sum(h)


def _fixed(*cases):
    """Rows for IDIOMS found by the fuzzer and fixed since: (id, function), each must pass."""
    return [pytest.param(f, id=name) for name, f in cases]


IDIOMS = _fixed(
    ("negative-index-numpy", function_at_a_negative_index), ("negative-index-lambda", lambda_at_a_negative_index),
    ("object-called-in-a-loop", object_called_in_a_loop), ("object-mapped", object_mapped),
    ("comprehension-over-its-own-name", comprehension_over_its_own_name),
    ("generator-over-a-local-it-shadows", generator_over_a_local_it_shadows),
    ("zip-comprehension-over-its-own-name", zip_comprehension_over_its_own_name),
    ("object-in-a-dict-with-a-lambda", object_in_a_dict_with_a_lambda),
    ("yield-from-after-yield", sum_of_yields_then_yield_from), ("yield-from-a-tuple", sum_of_a_yield_from_tuple),
    # were refused: a function or object set inside a loop body or branch is now bound there, pass by pass
    ("lambda-in-a-dict-in-a-loop", lambda_in_a_dict_in_a_loop), ("lambda-in-a-list-in-a-loop", lambda_in_a_list_in_a_loop),
    ("functions-indexed-in-a-loop", functions_indexed_in_a_loop),
    ("functions-iterated-in-a-branch", functions_iterated_in_a_branch),
    ("objects-listed-in-a-loop", objects_listed_in_a_loop),
    # were refused: a list of objects with computed attributes keeps each object known
    ("object-of-a-computed-value-indexed", object_of_a_computed_value_in_a_list),
    ("objects-of-computed-values-looped", objects_of_computed_values_looped),
    # were NoRuleErrors: a module-level list of objects of one class gives its items that class
    ("module-objects-looped", module_objects_of_one_class_looped),
    ("module-objects-indexed", module_objects_of_one_class_indexed),
    # was refused: a default that is an object is read as that object
    ("object-default", calls_a_helper_with_an_object_default),
)


@pytest.mark.parametrize("f", IDIOMS)
def test_python_idiom(f):
    arguments = (np.array([0.3, -0.5]), np.array([0.2, 0.1]))
    check(f, *arguments[: f.__code__.co_argcount])


# --- second order: forward over reverse (tg.hvp) -----------------------------------------------------
# Found by running tg.hvp on fuzzed programs (tests/fuzz checks first order only).

def check_hvp(f, a):
    """`tg.hvp(f)(a, v)` against central differences of the (first-order exact) gradient along v."""
    v = np.linspace(1.0, 0.5, np.size(a)).reshape(np.shape(a))
    gradient, eps = tg.grad(f), 1e-5
    expected = (gradient(a + eps * v) - gradient(a - eps * v)) / (2 * eps)
    np.testing.assert_allclose(tg.hvp(f)(a, v=v), expected, rtol=1e-5, atol=1e-7)


def sum_of_a_list(a):
    return np.mean(np.sum([np.exp(a), np.cos(a)], axis=0))


def states_appended_and_stacked(a):
    h = a
    hs = []
    for i in range(2):
        h = np.tanh(h)
        hs.append(h)
    return np.sum(np.stack(hs))


def test_hvp_of_a_reduction_of_a_list():
    """Was a NoRuleError in the gradient code's JVP: an inert input (`like`) counted as carrying a tangent."""
    check_hvp(sum_of_a_list, np.array([0.3, -0.5]))


def test_hvp_of_states_appended_and_stacked():
    """Was a TypeError (None * float) in the gradient code's JVP: add_cotangents(None, a constant item) had
    tangent None, which the tanh rule's product then multiplied."""
    check_hvp(states_appended_and_stacked, np.array([0.3, -0.5]))


def filled_then_scaled_in_a_loop(a):
    Z = np.zeros((3, 2))
    Z[0] = np.sum(np.exp(a))
    for i in range(2):
        Z = Z * np.cos(np.sum(a))
    return np.sum(Z ** 2)


def test_hvp_of_an_array_filled_then_rebound_in_a_loop():
    """The region `Z[0] = ...` overwrote is no longer restored at the end of the backward pass (nothing reads
    it): that restore, `Z[0] = tape.pop()` into a name the loop rebinds from the tape, was refused when the
    gradient code was differentiated again."""
    check_hvp(filled_then_scaled_in_a_loop, np.array([0.3, -0.5]))


def slice_filled_then_rolled(w):  # autograd's wing.py: a constant array filled by slice, rebound in a loop
    s = np.zeros(4)
    s[1:3] = 1.0
    s[0] = np.sin(w[0])
    for t in range(2):
        s = np.roll(s, 1) * w
    return np.sum(s ** 2)


def test_every_mode_of_a_slice_filled_array_rebound_in_a_loop():
    check_modes(slice_filled_then_rolled, np.array([0.5, 1.5, -1.0, 2.0]))
    assert "s[1:3] = tape.pop()" not in tg.source(slice_filled_then_rolled)  # a restore nothing reads


def product_over_both_axes(a):
    return np.tanh(np.prod(a, axis=(0, 1)))


def test_hvp_code_compiles_without_warnings():
    """The gradient code's JVP inlined the prod rule's `axis is None` as `(0, 1) is None`, a SyntaxWarning ('"is"
    with a literal') when the generated code was compiled: a singleton against a constant is decided now."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        check_hvp(product_over_both_axes, np.array([[0.3, -0.5], [0.2, 0.7]]))


@pytest.mark.parametrize("text, folded", [("(0, 1) is None", "False"), ("(0, 1) is not None", "True"),
                                          ("None is None", "True"), ("x is None", "x is None")])
def test_inlined_rule_code_never_compares_a_literal_with_is(text, folded):
    import ast
    from tapegen.codegen.render import fold
    assert ast.unparse(fold(ast.parse(text, mode="eval").body)) == folded


# --- open: found by the long fuzz run on the fuzzfix branch ------------------------------------------

def added_to_in_place_after_a_dict_held_it(a):
    v1 = np.sin(a)
    acc = 0.0
    for p in a:
        held = {"p": p, "q": v1}
        acc = acc + np.sum(np.sin(held["q"]))
    v1 += np.sin(acc)  # the dict is never read again, so Python's in-place change of its item is harmless
    return acc + np.sum(v1)


@pytest.mark.xfail(strict=True, reason="`v1 += ...` on an array a dict (built in a loop) also held is refused when "
                                       "the code runs ('another name, list, dict or attribute holds it too'), also "
                                       "where the dict is never read again")
def test_adding_in_place_to_an_array_a_dead_dict_held():
    check(added_to_in_place_after_a_dict_held_it, np.array([0.3, -0.5]))

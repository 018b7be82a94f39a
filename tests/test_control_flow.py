"""Loops, branches, early exits and array assignment, each against central finite differences."""
import numpy as np
import pytest

import tapegen as tg
from cases import flow_functions as F
from conftest import numeric_vjp


def check(f, args, wrt=0, rtol=1e-6, atol=1e-8):
    grads = tg.grad(f, wrt=wrt)(*args)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    grads = grads if isinstance(wrt, tuple) else (grads,)
    for position, grad in zip(positions, grads):
        expected = numeric_vjp(f, args, position, 1.0)
        np.testing.assert_allclose(grad, expected, rtol=rtol, atol=atol)
    value, _ = tg.value_and_grad(f, wrt=wrt)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)


def test_rnn_over_rows(rng):
    W, U = rng.normal(size=(4, 4)) * 0.5, rng.normal(size=(3, 4)) * 0.5
    xs, h0 = rng.normal(size=(6, 3)), rng.normal(size=4)
    check(F.rnn, (W, U, xs, h0), wrt=(0, 1, 2, 3))


def test_rnn_building_a_state_array(rng):
    check(F.rnn_states, (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(5, 3))), wrt=(0, 1))


@pytest.mark.parametrize("x", [2.0, 0.3, -2.5], ids=["square", "sine", "negate"])
def test_piecewise_takes_each_branch(x):
    check(F.piecewise, (x,))


@pytest.mark.parametrize("a", [2.0, 9.0, 0.5])
def test_newton_in_a_while_loop(a):
    assert tg.grad(F.newton_sqrt)(a) == pytest.approx(0.5 / np.sqrt(a), rel=1e-7)


def test_dynamic_programming_table(rng):
    check(F.dp_table, (rng.normal(size=5),))


@pytest.mark.parametrize("limit", [0.5, 100.0], ids=["returns-early", "runs-through"])
def test_early_return_from_a_loop(rng, limit):
    check(F.early_return, (np.array([0.9, 0.8, 0.7, 0.6]), limit))


def test_break_and_continue(rng):
    check(F.skips, (np.array([0.5, -1.0, 2.0, 0.3, -0.2, 1.5, 0.7, 0.9]),))


def test_zip(rng):
    check(F.zipped, (rng.normal(size=4), rng.normal(size=5)), wrt=(0, 1))


def test_masked_and_augmented_subscript_assignment(rng):
    check(F.masked, (rng.normal(size=(4, 3)),))


def test_augmented_assignment_on_a_fresh_array_in_a_loop(rng):
    check(F.accumulate_in_place, (rng.normal(size=3), 4))


def test_tuple_swap_in_a_loop():
    check(F.swap_loop, (1.3, 0.7), wrt=(0, 1))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_branch_reassigning_an_argument(rng, sign):
    check(F.branch_reassigns_argument, (sign * np.abs(rng.normal(size=3)),))


def test_thousands_of_iterations_no_recursion_and_constant_code_size():
    g = tg.grad(F.many_steps)(1.0)
    assert g == pytest.approx(0.999 ** 2000, rel=1e-9)
    assert len(tg.source(F.many_steps).splitlines()) < 40


def test_loss_calling_helper_functions(rng):
    params = {"W1": rng.normal(size=(3, 4)), "b1": rng.normal(size=4),
              "W2": rng.normal(size=(4, 2)), "b2": rng.normal(size=2)}
    x, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    g = tg.grad(F.two_layer_loss)(params, x, y)
    for key in params:
        def f(value, key=key):
            return F.two_layer_loss({**params, key: value}, x, y)
        np.testing.assert_allclose(g[key], numeric_vjp(f, (params[key],), 0, 1.0), rtol=1e-6, atol=1e-9)


def test_helper_source_lines_appear_in_generated_code():
    text = tg.source(F.two_layer_loss)
    assert "return np.tanh(x @ W + b)" in text and "diff = pred - y" in text


def test_closure_returned_by_a_factory(rng):
    step = F.make_step(3.0)
    check(step, (rng.normal(size=3), rng.normal(size=3)))


def test_nested_def_and_lambda(rng):
    check(F.with_nested_def, (rng.normal(size=3), rng.normal(size=3)), wrt=(0, 1))


def test_helper_returning_a_tuple(rng):
    check(F.divmod_like, (rng.normal(size=4),))


@pytest.mark.parametrize("n", [3, 12])
def test_recursion_ended_when_the_code_runs_is_differentiated(n):
    """`x * factorial_like(x, n - 1)` with `n` an argument: x ** n, whichever depth (12 is past the 8
    levels the transform unrolls), in reverse and forward mode and again for the second derivative."""
    x = 1.1
    assert tg.grad(F.factorial_like)(x, n) == pytest.approx(n * x ** (n - 1), rel=1e-12)
    assert tg.jvp(F.factorial_like, (x, n), (1.0, None))[1] == pytest.approx(n * x ** (n - 1), rel=1e-12)
    assert tg.grad(tg.grad(F.factorial_like))(x, n) == pytest.approx(n * (n - 1) * x ** (n - 2), rel=1e-12)


def test_print_keeps_working(capsys, rng):
    x = rng.normal(size=3)
    np.testing.assert_allclose(tg.grad(F.prints_along_the_way)(x), np.cos(x))
    assert "intermediate" in capsys.readouterr().out


def test_list_built_in_a_loop_then_stacked(rng):
    check(F.collect_and_stack, (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 3))), wrt=(0, 1))


def test_list_literal_append_and_np_array(rng):
    check(F.list_to_array, (rng.normal(size=3), rng.normal(size=3)), wrt=(0, 1))


def test_dict_and_tuple_literals(rng):
    check(F.dict_and_tuple_literals, (rng.normal(size=3), rng.normal(size=3)), wrt=(0, 1))


@pytest.mark.parametrize("x", [0.4, 1.5, 3.0, -2.0])
def test_and_or_and_conditional_expressions(x):
    check(F.short_circuit, (x, 2.0))


@pytest.mark.parametrize("scale, mode", [(None, "sum"), (3.0, "sum"), (3.0, "mean"), (3.0, "max")])
def test_is_none_and_in_conditions(rng, scale, mode):
    x = rng.normal(size=3)
    g = tg.grad(F.optional_argument)(x, scale, mode)
    np.testing.assert_allclose(g, numeric_vjp(lambda v: F.optional_argument(v, scale, mode), (x,), 0, 1.0),
                               rtol=1e-6, atol=1e-9)


def test_indexing_a_tuple_display(rng):
    check(F.indexes_a_tuple_display, (rng.normal(size=3),))


def test_module_constants_are_read_at_call_time():
    g = tg.grad(F.reads_a_module_constant)
    np.testing.assert_allclose(g(np.ones(2)), [2.0, 2.0])
    F.SCALE = 5.0
    try:
        np.testing.assert_allclose(g(np.ones(2)), [5.0, 5.0])
    finally:
        F.SCALE = 2.0


def test_a_pullback_can_be_called_again_after_a_loop(rng):
    out, pullback = tg.vjp(F.rnn, *(rng.normal(size=s) * 0.5 for s in ((4, 4), (3, 4), (6, 3), (4,))),
                           wrt=(0, 1))
    first = pullback(1.0)
    second = pullback(1.0)
    for a, b in zip(first, second):
        np.testing.assert_allclose(a, b)


@pytest.mark.parametrize("f, shape", [(F.loop_name_reused, (3, 4)), (F.loop_names_reused_nested, (3, 4)),
                                      (F.loop_target_set_before_and_after, (3, 4)),
                                      (F.loop_name_reused_with_ints_saved, (4,))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_a_name_set_in_one_loop_and_looped_over_in_another(rng, f, shape):
    """A var that is one loop's target and assigned in another's body: every mode and order (these crashed
    with a tape pop no push matched)."""
    from modes import check_modes
    check_modes(f, rng.normal(size=shape))


@pytest.mark.parametrize("f", [F.search_else, F.while_else, F.nested_loop_else, F.return_skips_else],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("limit", [0.5, 100.0], ids=["leaves-early", "runs-through"])
def test_loop_else_runs_when_no_break_left_the_loop(f, limit):
    """`for`/`while` with an `else:` clause, left by `break` or `return` or run to the end: every mode."""
    from modes import check_modes
    x = np.array([0.3, 0.9, 1.2])
    check_modes(lambda x: f(x, limit), x)


def test_a_name_set_before_a_loop_and_again_in_it_is_deleted_once():
    from modes import check_modes
    check_modes(F.index_set_before_and_in_a_loop, np.array([0.7, -0.2]))


def test_writes_into_an_array_the_tape_gives_back_are_followed_at_second_order():
    from modes import check_modes
    check_modes(F.fresh_array_written_then_rebound_in_a_loop, np.array([0.3, -0.7, 1.2]))


@pytest.mark.parametrize("f", [F.set_in_the_body_read_in_the_next_pass, F.helper_writes_into_a_copy_it_is_passed],
                         ids=lambda f: f.__name__)
def test_values_of_the_pass_before_and_views_used_up_in_their_statement(f):
    from modes import check_modes
    check_modes(f, np.array([0.3, 0.8]))


def test_with_blocks_run_enter_the_body_and_exit():
    """`with Timer() as t:`, nullcontext, a lock, a `return` ending the block (all refused before)."""
    from modes import check_modes
    check_modes(F.inside_context_managers, np.array([0.3, -0.8, 1.1]))


def test_nonlocal_in_local_defs():
    from modes import check_modes
    check_modes(F.nonlocal_accumulators, np.array([0.3, -0.8, 1.1]))


def test_nonlocal_in_a_def_called_by_a_helper_is_refused_naming_it():
    with pytest.raises(tg.UnsupportedSyntaxError, match="changes `total`"):
        tg.grad(F.nonlocal_def_called_elsewhere)(np.array([0.3, -0.8]))


@pytest.mark.parametrize("f", [F.alias_made_in_a_loop_read_after_the_write, F.alias_read_in_the_next_pass,
                               F.alias_chosen_in_a_branch], ids=lambda f: f.__name__)
def test_writing_into_an_array_another_name_may_be_is_refused(f):
    """`b = a` inside a loop or branch is the same array when the code runs: each gave a wrong gradient
    (the first and last on d0f02f4, the second an internal error)."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="same array"):
        tg.grad(f)(np.array([0.3, -0.5, 0.9]))


def test_a_region_a_view_still_reads_is_restored():
    from modes import check_modes
    check_modes(F.row_scaled_in_place_then_copied, np.array([0.3, -0.5, 0.9]))


@pytest.mark.parametrize("f, says", [(F.inside_a_manager_tapegen_cannot_see, "cannot see"),
                                     (F.inside_a_manager_that_swallows_errors, "swallows")],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_managers_tapegen_cannot_follow_are_refused(f, says):
    with pytest.raises(tg.UnsupportedSyntaxError, match=says):
        tg.grad(f)(np.array([0.3, -0.8, 1.1]))


@pytest.mark.parametrize("f, says", [(F.rows_kept_in_a_list_then_written, "holds a view"),
                                     (F.generator_consumed_after_a_write, "generator expression `g`")],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_writes_into_arrays_with_views_made_other_ways_are_refused(f, says):
    with pytest.raises(tg.UnsupportedSyntaxError, match=says):
        tg.grad(f)(np.array([0.3, -0.5, 0.9]))


def test_rows_read_in_the_statement_that_writes_them():
    from modes import check_modes
    check_modes(F.rows_written_through_in_a_loop, np.array([0.3, -0.5, 0.9]))


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_a_name_saved_before_it_is_surely_set(c):
    from modes import check_modes
    check_modes(F.set_in_one_branch_then_another, np.array([0.3, -0.5, 0.9]), c, positions=[0])


@pytest.mark.parametrize("f, args", [
    (F.attention_weights, (np.random.default_rng(0).normal(size=(2, 3, 4)), np.random.default_rng(1).normal(size=(2, 5, 4)))),
    (F.written_through_a_view_after_a_rule_read_it, (np.array([1.0, 2.0, 3.0, 4.0]),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_writes_into_a_view_of_an_array_not_read_again(f, args):
    from modes import check_modes
    check_modes(f, *args)


@pytest.mark.parametrize("f", [F.view_written_then_base_read, F.view_written_base_read_next_pass,
                               F.view_written_base_returned, F.rows_filled_through_views,
                               F.heat_equation_through_an_interior_view,
                               F.views_written_by_a_helper_and_views_of_views,
                               F.gradient_packed_through_views_of_its_rows,
                               F.views_read_where_made_after_a_write,
                               F.rows_filled_through_views_in_a_loop_then_masked,
                               F.results_written_into_views_by_out, F.results_written_by_out_in_a_loop,
                               F.results_written_by_out_into_rows_a_loop_picks, F.conjugates_of_a_real_array_by_method,
                               F.result_of_out_named_then_its_array_written_in_a_loop,
                               F.pieces_of_one_split_written_and_read, F.rows_of_a_transpose_written,
                               F.results_written_into_views_in_place,
                               F.row_bound_after_its_array_is_written_in_a_loop,  # (a wrong value, no error, on 481258e)
                               F.view_written_base_read_before_its_name_is_rebound],  # (gave a wrong gradient
                         ids=lambda v: v.__name__)                                   # before it was refused)
def test_a_write_into_a_view_is_put_back_into_its_array(f):
    """NumPy changes the array a view shows: its reads after the write have the derivatives of what was written
    (these were refused, as tapegen followed only the view)."""
    from modes import check_modes
    check_modes(f, np.array([1.0, 2.0, 3.0, 4.0]))
    check_modes(f, np.array([-0.5, 0.7, -1.3, 0.4]))


@pytest.mark.parametrize("f", [F.view_written_then_other_view_read, F.view_made_between_two_writes,
                               F.view_written_then_overlapping_view_read,
                               F.view_written_then_view_from_before_read_in_a_branch, F.views_made_other_ways,
                               F.views_of_an_array_written_directly_then_read,
                               F.views_of_views_made_again_after_a_write,
                               F.result_written_into_a_view_whose_other_view_is_read,
                               F.result_written_into_a_view_overlapping_another],
                         ids=lambda v: v.__name__)
def test_other_views_of_an_array_written_show_the_write(f):
    """Another view of the array, made before the write (through a view, or into the array) and read after it,
    shows the write, as NumPy's does: it is made again from the array after the write. These were refused (on
    d0f02f4, `np.atleast_1d(a)` read after `a[0] = v` gave a zero gradient)."""
    from modes import check_modes
    check_modes(f, np.array([1.0, 2.0, 3.0, 4.0]))
    check_modes(f, np.array([-0.5, 0.7, -1.3, 0.4]))


@pytest.mark.parametrize("f", [F.copies_taken_like_views_then_the_array_written,
                               F.copies_of_rows_made_by_arithmetic_then_the_array_written], ids=lambda v: v.__name__)
def test_copies_do_not_show_a_later_write_into_the_array(f):
    """A fancy index, a mask, an index array, a reshape that copies, or arithmetic on a row gives a new array: a
    later write into the array does not change it, in the value, the gradient or forward mode's tangent."""
    from modes import check_modes
    check_modes(f, np.array([1.0, 2.0, 3.0, 4.0]))
    check_modes(f, np.array([-0.5, 0.7, -1.3, 0.4]))


def test_a_view_made_in_a_branch_read_after_its_array_is_written_is_refused():
    """Which view a name holds after a branch is known only when the code runs: not made again after the write."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="`W`"):
        tg.grad(F.view_made_in_either_branch_then_its_array_written)(np.array([1.0, 2.0, 3.0, 4.0]))


def test_a_view_a_loop_carries_read_after_its_array_is_written_is_refused():
    """A view bound before the loop and read in it, its array written in the loop: not followed (yet)."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="may be the same array as `B`"):
        tg.jacobian(F.view_read_in_a_loop_writing_its_array)(np.array([1.0, 2.0, 3.0, 4.0]))


@pytest.mark.parametrize("f", [F.view_of_a_second_name_for_an_array_in_a_loop,
                               F.write_into_an_as_strided_view_then_its_array_read,
                               F.view_of_a_name_that_may_hold_the_array_after_a_branch],
                         ids=lambda v: v.__name__)
def test_writes_into_a_view_whose_other_views_are_read_after_are_refused(f):
    """Another view of the array, made before the write and read after it, is not followed through the write."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="is a view of an array(,| that `M` may hold too .*,) which "
                                                         "this assignment changes"):
        tg.jacobian(f)(np.array([1.0, 2.0, 3.0, 4.0]))


@pytest.mark.parametrize("f", [F.name_set_in_a_branch_of_a_loop_holding_the_array_written,
                               F.row_set_in_a_branch_of_a_loop_writing_its_array], ids=lambda v: v.__name__)
def test_a_name_a_loop_may_leave_holding_an_array_written_after_is_refused(f):
    """A name set in a branch of a loop may hold an array from an earlier pass that a later pass writes into
    (it was an internal error: the check when the code runs read it before it was set)."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="may hold this array from an earlier pass of the loop"):
        tg.grad(f)(np.array([1.0, 2.0, 3.0, 4.0]))


def qr_in_a_loop(a):
    """Both outputs of a multi-output primitive saved in each pass: the backward pass pops them last pushed first
    (it popped them in the order pushed, swapping q and r: a wrong gradient with no error)."""
    total = 0.0
    for k in range(3):
        q, r = np.linalg.qr(a + a.T + k * np.eye(3))
        total = total + np.sum(q * np.arange(9.0).reshape(3, 3)) + np.sum(r ** 2)
    return total


def test_a_multi_output_primitive_in_a_loop_restores_each_output():
    from modes import check_modes
    check_modes(qr_in_a_loop, np.random.default_rng(0).standard_normal((3, 3)))


def test_out_into_an_array_index_is_refused_when_it_runs():
    """`out=X[rows, 0]` with `rows` an array of indices writes into a copy NumPy drops: refused when the code
    runs, rather than taken for a write into X."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="the index makes a copy"):
        tg.grad(F.results_written_by_out_through_an_array_index)(np.array([1.0, 2.0, 3.0, 4.0]))


@pytest.mark.parametrize("lr", [0.3, 0.001], ids=["returns-early", "runs-through"])
def test_a_bare_return_from_a_loop(lr):
    """(refused: "returning a tuple (or nothing) from inside a loop is not supported")"""
    from modes import check_modes
    check_modes(F.fitted_until_converged, np.array([0.5, -0.2, 0.9]), lr)


def test_a_loop_binding_a_state_and_a_cache_holding_its_old_value_in_one_statement():
    from modes import check_modes
    check_modes(F.caches_holding_the_state_a_loop_rebinds_in_the_same_statement, np.array([0.3, -0.8, 1.2]))

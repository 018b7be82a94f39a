"""Python as people write it: loops that unpack, comprehensions, built-ins, functions as values,
*args, objects, raise/assert/print, writes into arguments, pytree arguments, names like tapegen's.

Each function in tests/cases/python_functions.py is checked in grad, vjp, jvp and grad-of-grad.
"""
import contextlib
import re

import numpy as np
import pytest

import tapegen as tg
from cases import python_functions as pf
from modes import check_modes

RNG = np.random.default_rng(7)
X3 = np.array([0.7, -1.2, 0.4])


def _m(*shape):
    return RNG.standard_normal(shape) * 0.5


POINTS = {
    "mlp_over_pairs": ([(_m(3, 4), _m(4)), (_m(4, 2), _m(2))], _m(5, 3)),
    "enumerate_zip": (X3, [_m(3) for _ in range(3)], [_m(3) for _ in range(3)]),
    "zip_star": (X3, ([_m(3), _m(3)], [_m(3), _m(3)])),
    "dict_items_loop": ({"w": _m(3), "bias": _m(3)}, X3),
    "comprehensions": ([_m(3, 3), _m(3, 3)], X3),
    "builtins_and_math": (X3, 1.3),
    "functions_as_values": (_m(3, 2), _m(4, 3)),
    "star_arguments": (np.array([0.3, -0.7]), np.array([1.2, 0.5])),
    "statements_and_objects": (np.array([0.3, -0.2, 0.5]), _m(4, 3)),
    "writes_into_arguments": (np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 1.5])),
    "arguments_added_to_in_a_loop": (np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 1.5])),
    "clipped_through_a_loop_over_names": (_m(4, 3), _m(2, 4), _m(3)),
    "gradient_steps_through_a_loop_over_arguments": (_m(2), 0.3, _m(5, 2), _m(5)),
    "pair_forces_written_through_a_slice": (np.array([[0.0, 0.0, 0.0], [1.2, 0.1, -0.3], [0.2, 1.3, 0.1],
                                                      [1.5, 1.2, 0.3]]),),
    "matrix_factorisation_written_item_by_item": (RNG.uniform(0.5, 1.2, (3, 2)), RNG.uniform(0.5, 1.2, (2, 4)),
                                                  np.array([[5, 3, 0, 1], [4, 0, 0, 1], [1, 1, 0, 5]])),  # (ratings:
    # integers, not differentiated)
    "adagrad_through_zipped_lists_of_names": (_m(4, 3), _m(2, 4), _m(3)),
    "loop_over_names_in_a_helper": (X3, np.array([0.5, -0.3])),
    "loop_over_names_in_branches_and_passes": (X3, np.array([0.5, -0.3, 0.9])),
    "numbers_and_lists_through_a_loop_over_names": (X3, np.array([0.5, -0.3, 0.9])),
    "number_named_twice_in_a_loop_then_added_to": (X3,),
    "arrays_swapped_then_added_to_in_a_loop": (X3,),
    "names_like_generated_ones": (X3,),
    "underscore_as_a_name": (_m(3, 3),),
    "functions_in_containers": (_m(3, 2), _m(4, 3)),
    "dicts_of_functions_made_here": (_m(3, 2), _m(4, 3)),
    "star_arguments_of_a_list_rebuilt_in_a_loop": (_m(3), _m(3)),
    "matrix_factorization_steps": (np.array([[0.5, 0.2], [0.1, 0.7]]), np.array([[0.3, 0.4, 0.2], [0.6, 0.1, 0.9]])),
    "itertools_of_differentiated_items": (np.array([0.3, -0.8, 1.1]), _m(3, 2)),
    "local_functions_a_helper_picks": (np.array([0.8, 1.2]),),
    "layers_of_different_classes_appended": (_m(3, 4), _m(4, 2), _m(5, 3)),
    "sequential_modules_of_different_classes": (_m(3, 4), _m(4), _m(4, 2), _m(5, 3)),
    "builtins_over_objects_of_the_users": (np.array([0.3, -0.8, 1.1]),),
    "operators_of_a_class_of_the_users": (np.array([0.3, -0.8, 1.1]), np.array([1.0, 2.0, 0.5])),
    "objects_of_different_classes": (_m(2, 3), [0.7, -0.4, 1.1]),
    "generator_helper": (_m(11), _m(4, 3)),
    "namedtuples_made_here": (_m(3), _m(3), _m(3)),
    "namedtuple_class_made_inside": (_m(3), _m(3), _m(3)),
    "numpy_writes_in_place": (np.array([0.7, -1.2, 0.4]), np.array([0.3, 0.9, -0.5])),
    "more_of_numpy": (np.array([0.7, -1.2, 0.4]), np.array([0.3, 0.9, -0.2])),
    "numpy_polynomial_series": (np.array([0.3, -0.2, 0.5, 0.7, 0.1]), np.linspace(-0.9, 0.8, 6),
                                np.linspace(0.5, 1.5, 6)),
    "reductions_where": (np.array([[0.3, -1.2, 2.0], [0.7, 0.2, -0.5]]),),
    "list_used_as_items_and_as_an_array": (np.array([0.7, -1.2, 0.4]),),
    "helper_with_a_bare_return": (_m(3), _m(3)),
    "closure_changes_a_list_it_reads": (_m(3), np.array([0.4, -0.3, 0.8])),
    "centred_with_asarray": (_m(3), _m(3)),
    "numpy_functions_written_out": (np.array([0.7, -1.2, 0.4]), np.array([0.3, 0.9, -0.5])),
    "display_of_functions_indexed": (_m(3), _m(3)),
    "activation_named_by_an_argument": (_m(3, 2), _m(4, 3), "softplus", "square"),
    "lambdas_kept_in_attributes": (_m(3, 2), _m(4, 3)),
    "activation_named_by_the_module": (_m(3, 2), _m(4, 3)),
    "items_of_held_arrays_set_in_loops": (_m(3), _m(3)),
    "appends_to_held_lists_in_loops": (_m(3), np.array([1.5, 0.8, -1.2])),
    "lists_and_dicts_held_in_containers_changed": (_m(3), _m(3)),
    "shape_set_in_place": (_m(3), _m(3)),
    "matrix_power": (_m(3), _m(3)),
    "loss": (_m(3), _m(3)),
    "lists_of_numbers_with_arrays": (_m(3), _m(3)),
    "assignment_in_a_while_test": (np.array([0.3, -0.5, 0.9]), np.array([0.2, 0.4, -0.3])),
    "builtins_and_itertools_as_written": (np.array([0.3, -0.5, 0.9]), np.array([0.2, 0.4, -0.3])),
    "records_as_dicts_and_dataclasses_of_objects": (_m(3), _m(3)),
    "function_valued_parameter": ([(_m(3, 4), _m(4)), (_m(4, 2), _m(2))], _m(5, 3)),
    "loop_from_a_global": (X3,),
    "starred_unpacking": ([_m(3), _m(3), _m(3), _m(3)], X3),
    "scatter_adds": (_m(4, 3), np.array([2, 0, 3]), _m(2, 3)),
    "attribute_dict_items": (_m(3), _m(3, 3)),
    "dict_loops": ({"W1": _m(3), "b1": _m(3), "W2": _m(3)}, X3),
    "running_in_a_loop": (_m(3), _m(3, 3)),
    "read_then_set_by_a_method_in_a_loop": (X3,),
    "methods_in_loops_and_branches": (np.array([0.3, -0.2, 0.5]),),
    "methods_in_loops_and_branches[other branch]": (np.array([-0.3, -0.2, 0.1]),),
    "dict_attribute_carried_by_a_loop": (np.array([0.3, -0.2, 0.5]),),
    "counters_in_a_dict": (_m(2, 3), _m(3, 3)),
    "dict_rebuilt_in_branches": (np.array([0.3, -0.2, 0.5]),),
    "helpers_adding_in_place": (X3,),
    "lists_in_a_dict_attribute": (_m(3, 3), _m(3, 3)),
    "writes_into_arrays_held_in_a_dict": (X3, _m(3, 3)),
    "reads_another_modules_data": (X3,),
    "imports_inside_functions": (X3,),
    "layer_objects_as_numpy_ml_writes_them": (_m(2, 3), _m(3, 3)),
    "closures_nested": (X3,),
    "global_layer_forward": (_m(2, 3),),
    "global_layer_parameters_set": (_m(3, 2), _m(1, 2), _m(2, 3)),
    "dicts_copied_and_merged": (X3, _m(3)),
    "lazy_layer_with_an_initializer_object": (_m(3, 2), _m(4, 3)),
    "container_made_in_one_branch_only": (_m(5),),
    "other_attributes_of_a_layer_holding_parameters": (_m(3, 2), _m(4, 3)),
    "recursion_ended_when_transforming": (_m(3), _m(5, 2)),
    "two_layers_of_one_class": (_m(3, 2), _m(2, 2), _m(4, 3)),
    "conditional_expression_of_a_tuple_or_its_item": (_m(4),),
    "cell_flushed_then_run_by_a_helper": (_m(5, 2), _m(2, 3, 3)),
    "global_layer_appending_to_its_lists": (_m(2, 3), _m(2, 3)),
    "layer_made_with_an_optimizer_inside": (_m(3, 2), _m(4, 3)),
    "recursion_run_as_written_and_results_written_into_arrays": (_m(5, 3), _m(4, 3)),
    "recursion_ended_when_the_code_runs": (_m(3), _m(3, 3), _m(5)),
    "attributes_read_with_a_default": (_m(2, 3), _m(3)),
    "batchnorm_keeping_running_averages": (_m(4, 3), _m(3)),
    "parts_of_arrays_set": (np.array([0.3, -0.2, 0.5]),),
    "parts_of_array_slices_set": (np.array([0.3, -0.2, 0.5]),),
    "subtracted_at_by_a_helper": (np.array([0.3, -0.2, 0.5, 0.9]),),
    "picked_by_itemgetter_and_attrgetter": (np.array([0.3, -0.2, 0.5]),),
    "sorted_in_place": (np.array([0.3, -0.2, 0.5]), np.array([[0.4, -0.1, 0.9], [-0.3, 0.7, 0.2]])),
    "layer_set_up_before_behind_a_flag": (_m(4, 3),),
    "dicts_updated": (X3, _m(3, 3), {"a": _m(3), "e": _m(3)}),
    "ufunc_methods": (np.array([0.3, -0.2, 0.5]), _m(4, 2)),
    "ufunc_reduceat": (_m(12), _m(3, 9)),
    "zip_and_enumerate_as_values": (_m(2, 3), _m(2), X3),
    "assignment_expressions": (np.array([0.5, -0.7, 1.2]),),
    "loss_keeping_its_inputs": (np.array([0.5, -0.7, 1.2]),),
    "functions_taking_functions": (X3, _m(3, 3)),
    "small_python_idioms": (X3, _m(3, 3)),
    "numpy_functions_written_out": (_m(5), _m(3)),
    "dict_argument_copied_then_set": ({"W": _m(3), "b": _m(2)}, X3),
    "dict_argument_written_into": ({"W": _m(3), "b": _m(2)}, X3),
    "sorted_by_a_lambda": (np.array([0.3, -0.7, 1.2]),),
    "keys_and_records_worked_out": (np.array([0.3, -0.7, 1.2]),),
    "counts_its_calls": (np.array([0.3, -0.7, 1.2]),),
    "attention_module_set_up_before": (np.array([0.5, -0.7, 1.2]), np.array([0.3, 0.2, -0.4])),
    "assignment_expressions[other branch]": (np.array([0.1, -0.2, 0.3]),),
    "globals_spread_as_arguments": (X3,),
    "closures_spread_as_arguments": (X3, _m(3)),
    "pullback_called_from_the_call": (X3, _m(3)),
    "items_without_a_derivative": (X3, 3),
    "late_bound_closures": (X3,),
    "item_chosen_by_a_closure_int": (X3,),
    "items_chosen_by_a_closure_tuple": (X3, _m(3)),
    "small_numpy_idioms": (np.array([0.3, -0.7, 0.2]), _m(3, 2)),
    "jacobian_of_a_jacobian": (np.array([0.3, -0.2]),),
    "functions_set_in_loops_and_branches": (_m(3, 2), _m(4, 3)),
    "closures_read_names_when_called": (X3,),
    "layers_in_a_list": (_m(3, 2), _m(2, 2), _m(4, 3)),
    "module_objects_and_object_defaults": (X3,),
    "objects_of_one_class_appended_in_a_loop": (X3,),
    "names_holding_a_function_or_an_array": (X3,),
    "starred_displays": (X3, [_m(3), _m(3)]),
    "sorted_with_a_key": ({"b": _m(2), "a": _m(2)},
                          [np.array([0.3, 0.2]), np.array([1.0, -0.2]), np.array([-1.0, 0.1])]),
    # a function or object chosen when the code runs (a dispatch in the code): each path once
    "pooling_mode_decided_when_the_code_runs": (_m(3, 2) + 1.0,),
    "pooling_mode_decided_when_the_code_runs[other branch]": (_m(3, 2) - 1.0,),
    "functions_chosen_when_the_code_runs": (np.array([0.3, -0.2, 0.5]),),
    "functions_chosen_when_the_code_runs[other branch]": (np.array([-0.3, 0.4, -0.5]),),
    "objects_chosen_when_the_code_runs": (np.array([0.3, -0.2, 0.5]),),
    "objects_chosen_when_the_code_runs[other branch]": (np.array([-0.3, 0.4, -0.5]),),
    "functions_chosen_held_by_an_object_and_a_list": (np.array([0.3, -0.2, 0.5]),),
    "functions_chosen_held_by_an_object_and_a_list[other branch]": (np.array([-0.3, 0.4, -0.5]),),
    "function_chosen_by_a_branch": (X3,),
    "function_chosen_by_a_branch[other branch]": (-X3,),
    "function_read_before_a_pass_sets_it": (X3,),
    "object_chosen_by_a_branch": (X3,),
    "object_chosen_by_a_branch[other branch]": (-np.abs(X3),),
    "object_replaced_in_a_loop": (X3,),
    "layers_set_up_on_the_first_forward_pass": (_m(2, 3),),
    "draws_without_replacement": (X3,),
    "bidirectional_cells_flushed_then_run": (_m(4, 3),),
    "inserts_into_a_list": (_m(3, 4),),
    "layers_made_by_a_comprehension": (_m(3, 4), _m(4), _m(4, 2), _m(2), _m(5, 3)),
    "layers_recording_in_a_module": (_m(2, 3),),
    "wrappers_made_here": (_m(3, 4), _m(4), _m(5, 3)),
    "steps_through_lists_held_in_names": (_m(3, 2), _m(2), _m(5, 3), _m(5, 2)),
    "helpers_changing_their_callers_dict": (_m(4, 3), _m(3)),
    "helper_changing_its_callers_dict_in_a_loop": (_m(4, 3), _m(3)),
    "numpy_attributes_decided_when_transforming": (_m(5),),
    "written_into_after_an_early_return": (_m(4, 3),),
    "dict_read_out_of_a_dict_then_changed": (_m(3),),
    "dict_item_of_a_list_changed_by_a_helper": (_m(3),),
    "dict_item_of_an_attribute_changed_by_a_helper": (_m(3),),
    "zips_with_strict": (_m(3), _m(3, 2)),
    "lambdas_made_by_a_comprehension_read_its_last_item": (_m(3), _m(2, 3, 3)),
    "decorated_local_functions": (np.array([0.3, 0.7, -0.4]),),
    "lists_of_functions_joined_and_repeated": (np.array([0.3, 0.7, -0.4]),),
    "activations_picked_by_a_key_the_code_computes": (_m(4, 3), _m(3, 2), _m(5, 4)),
    "items_of_a_list_changed_in_place_by_helpers": (_m(4, 3), _m(3, 2), _m(5, 4)),
    "optimiser_state_made_on_the_first_step_in_a_loop": (_m(3), _m(5, 3)),
    "state_a_method_sets_in_a_branch_read_in_the_next_pass": (_m(3),),
    "steps_on_a_display_of_names": (_m(2, 1), _m(6, 2), _m(6, 1)),
    "sets_of_labels_and_keys": (_m(3),),
    "arrays_two_names_hold_changed_in_place": (_m(3),),
    "state_made_where_hasattr_says_it_is_missing": (_m(3, 2), _m(4, 3)),
    "steps_on_a_tuple_display_of_names": (_m(2, 1), _m(6, 2), _m(6, 1)),
    "classes_and_functions_of_defaults_read_as_values": (_m(3), _m(3, 2)),
    "star_of_comprehensions_over_displays": (_m(3), {"q": _m(3), "k": _m(3), "v": _m(3)}),
    "returns_of_two_shapes_picked_by_module_labels": (_m(4, 3), _m(3, 4)),
    "returns_of_two_shapes_picked_by_argument_labels": (_m(4, 3), _m(3, 4), np.array([0, 2, 1])),
    "star_of_a_shape_into_a_helper": (_m(4, 6), _m(3, 3)),
    "update_rules_setting_defaults_of_their_config": (np.array([0.35, -0.7, 1.1]),),  # (not where a step lands on 0)
    "update_rule_config_none_before_the_loop": (np.array([0.35, -0.7, 1.1]),),
    "ufunc_results_written_through_a_one_tuple_out": (np.array([0.35, -0.7, 1.1]),),
    "text_made_from_differentiated_values": (np.array([0.35, -0.7, 1.1]),),
    "results_written_into_an_array_other_names_show": (np.array([0.35, -0.7, 0.1]),),
    "writes_through_an_item_by_a_computed_index": (np.array([0.3, -0.5, 0.8]),),
    "rows_filled_into_an_ndarray_constructed_by_shape": (_m(6), RNG.uniform(0.1, 0.5, (3, 3))),
    "covariances_regularised_through_flat_of_an_item": (_m(6, 2), RNG.uniform(0.2, 1.0, (6, 2))),
    "rmsprop_over_model_items_with_buffers_reset": (_m(4, 3), _m(4)),
    "module_rate_decayed_in_a_loop": (_m(3),),
    "scores_or_loss_by_argument_labels": (_m(4, 3), _m(3, 4), np.array([2, 0, 1])),
    "scores_or_loss_by_argument_labels[none]": (_m(4, 3), _m(3, 4), None),
    "keywords_from_items_of_dicts": (_m(2, 3), {"mlp": {"w": _m(3, 3), "b": _m(3)},
                                                "ln": {"g": 1 + _m(3), "b": _m(3)}}),
    "closures_made_by_a_local_function_read_names_when_called": (np.array([0.3, -0.7, 1.1]),),
}


@pytest.mark.parametrize("name", sorted(POINTS))
def test_every_mode_matches_finite_differences(name):
    check_modes(getattr(pf, name.split("[")[0]), *POINTS[name])


def test_a_star_of_another_length_than_the_parameters_raises_as_python_does():
    def spread(w):
        return np.sum(pf._scaled(*w, scale=2.0))
    with pytest.raises(TypeError):
        spread(np.ones((3, 2)))
    with pytest.raises(TypeError, match="_scaled\\(\\) takes 2 values from `\\*`"):
        tg.grad(spread)(np.ones((3, 2)))
    assert np.allclose(tg.grad(spread)(np.ones((2, 2))), 2.0)

    def spread_then_more(x):  # `b` filled by the argument after, `scale` left at its default: xs fills `a`
        return np.sum(pf._scaled(*x[:1], 5.0) * x[1])
    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(tg.grad(spread_then_more)(x), _numeric_gradient(spread_then_more, x), atol=1e-6)

    def spread_keys(x, d):  # a dict spreads its keys: the items are not read by position
        return np.sum(pf._attend(*d) * x)
    with pytest.raises(tg.TapegenError, match="only a list, tuple or array"):
        tg.grad(spread_keys)(np.ones(2), {0: 5.0, 1: 7.0, 2: 3.0})


def test_a_list_item_extended_in_place_then_its_length_read_by_another_name_is_refused():
    def extended(x):
        rows = {"a": [x, x * 2.0]}
        for k, v in rows.items():
            rows[k] += [x * 3.0]
            n = len(v)  # the same list, three items long in Python
        return np.sum(np.stack(rows["a"])) * n
    with pytest.raises(tg.TapegenError, match="holds the same list"):
        tg.grad(extended)(np.array([0.5, 1.0]))


def test_a_module_name_rebound_after_being_read_keeps_the_value_read(monkeypatch):
    weights, x, u = np.array([1.0, 2.0]), np.array([0.3, -0.7]), np.array([0.4, 1.1])

    def fresh(f, *args):
        monkeypatch.setattr(pf, "_WEIGHTS", weights.copy())
        return f(*args)
    f = pf.module_weights_rebound_after_being_read
    expected = _numeric_gradient(lambda v: fresh(f, v), x)
    gradient = tg.grad(f)
    for _ in range(2):  # (the first call's code, then the specialized code)
        assert np.allclose(fresh(gradient, x), expected, atol=1e-6)
        assert pf._WEIGHTS is not weights and np.allclose(pf._WEIGHTS, weights)  # (rebound, as Python does)
        assert np.isclose(fresh(tg.jvp, f, (x,), (u,))[1], expected @ u, atol=1e-6)
        _, pullback = fresh(tg.vjp, f, x)
        assert np.allclose(pullback(1.0), expected, atol=1e-6)
    check_modes(f, x)


def test_a_module_name_a_helper_rebinds_after_the_caller_set_it_is_refused():
    with pytest.raises(tg.UnsupportedSyntaxError, match="rebound here and before in a function calling this one"):
        tg.grad(pf.module_weights_set_then_rebound_by_a_helper)(np.array([0.3, -0.7]))


def test_module_labels_set_to_none_later_have_the_code_made_again(monkeypatch):
    """`y is None` was decided for the module's labels: once they are None, the code is made again."""
    W, X = POINTS["returns_of_two_shapes_picked_by_module_labels"]
    gradient = tg.grad(pf.returns_of_two_shapes_picked_by_module_labels)
    for labels in (pf._Y_TRAIN, None, np.array([1, 1, 0])):
        monkeypatch.setattr(pf, "_Y_TRAIN", labels)
        for _ in range(2):  # (the first call's code, then the specialized code)
            expected = _numeric_gradient(lambda w_: pf.returns_of_two_shapes_picked_by_module_labels(w_, X), W)
            assert np.allclose(gradient(W, X), expected, atol=1e-6)
        check_modes(pf.returns_of_two_shapes_picked_by_module_labels, W, X)


def test_two_global_layers_made_one_object_later_have_the_code_made_again(monkeypatch):
    """SECOND_DENSE rebound to FIRST_DENSE between calls: the code is made again for one object (whose
    parameters the second assignment overwrites), as Python runs it."""
    W1, W2, X = _m(3, 2), _m(2, 2), _m(4, 3)
    gradient = tg.grad(pf.two_layers_of_one_class, wrt=(0, 1))
    gradient(W1, W2, X)
    monkeypatch.setattr(pf, "SECOND_DENSE", pf.FIRST_DENSE)
    check_modes(pf.two_layers_of_one_class, W1, _m(3, 3), X)
    g1, g2 = gradient(W1, _m(3, 3), X)
    np.testing.assert_array_equal(g1, np.zeros_like(W1))  # W1 is overwritten before it is used


def test_an_attribute_hasattr_found_then_deleted_has_the_code_made_again(monkeypatch):
    gradient = tg.grad(pf.layers_set_up_on_the_first_forward_pass)
    gradient(_m(2, 3))
    monkeypatch.delattr(pf.SKIP_BLOCK, "dense2")
    with pytest.raises(tg.UnsupportedSyntaxError):  # the code is made again: the set-up branch is lowered now
        gradient(_m(2, 3))


def test_a_value_a_set_up_layer_appended_is_read_back():
    """`derived_variables["Z"].append(Z)` on a layer whose lazy set-up branch already ran (its flag is taken
    as it is): the list is the layer's own, which tapegen follows, so reading Z back carries its derivative,
    in every mode (it was refused while the set-up branch was lowered as one decided when the code runs)."""
    check_modes(pf.reads_back_what_a_layer_kept, _m(2, 3))


def test_an_object_holding_a_layer_with_derivatives_is_followed_in_forward_mode():
    W, X = _m(3, 4), _m(5, 3)
    with pytest.raises(tg.NoRuleError, match="no derivative rule for .forward\\(\\)"):
        tg.jvp(lambda W: pf.wrapped_layers_made_in_a_loop(W, X), (W,), (W,))
    with pytest.raises(tg.NoRuleError, match="no gradient rule for .forward\\(\\)"):
        tg.grad(pf.wrapped_layers_made_in_a_loop)(W, X)


@pytest.mark.parametrize("fn, name", [(pf.function_a_helper_returns_from_a_branch, "f"),
                                      (pf.function_picked_by_a_computed_key, "table\\[key\\]")])
def test_a_function_tapegen_cannot_tell_is_named_with_the_real_fix(fn, name):
    """Not `register_vjp`: the hint says to call the function where tapegen knows which it is."""
    for differentiate in (lambda: tg.grad(fn)(X3), lambda: tg.jvp(fn, (X3,), (X3,))):
        with pytest.raises(tg.NoRuleError, match=f"`{name}` is a function tapegen could not tell") as raised:
            differentiate()
        assert "by name in each branch" in raised.value.hint and "register_vjp" not in raised.value.hint


def test_raise_in_a_helper_raises_when_the_code_runs():
    with pytest.raises(ValueError, match="expected a vector, got 2 dimensions"):
        tg.grad(pf.statements_and_objects)(np.ones((2, 2)), _m(4, 3))


def test_writing_into_an_argument_leaves_the_callers_array_alone():
    x, v = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 1.5])
    x0, v0 = x.copy(), v.copy()
    tg.grad(pf.writes_into_arguments, wrt=(0, 1))(x, v)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(v, v0)


def _sorted_in_place(x):
    x.sort()  # (the caller's array, as Python sorts it)
    return x * np.arange(1.0, 5.0)


@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_jacobian_of_a_function_writing_into_its_argument_is_taken_where_it_is_called(mode):
    """tg.jacobian's "auto" ran the function as written to see its output's size, which sorted the caller's
    array: the Jacobian was then taken at the sorted array (rows in the wrong places, no error)."""
    x = np.array([0.3, -0.7, 1.1, 0.45])
    expected = np.stack([(_sorted_in_place(x + 1e-6 * e) - _sorted_in_place(x - 1e-6 * e)) / 2e-6
                         for e in np.eye(4)], -1)
    np.testing.assert_allclose(tg.jacobian(_sorted_in_place, mode=mode)(x.copy()), expected, atol=1e-6)


def _fd(f, p, field, x, eps=1e-6):
    value = getattr(p, field)
    grad = np.zeros_like(value)
    for i in np.ndindex(value.shape):
        plus, minus = value.copy(), value.copy()
        plus[i] += eps
        minus[i] -= eps
        grad[i] = (f(p.__class__(**{**_fields(p), field: plus}), x)
                   - f(p.__class__(**{**_fields(p), field: minus}), x)) / (2 * eps)
    return grad


def _fields(p):
    return p._asdict() if hasattr(p, "_asdict") else dict(vars(p))


def test_code_made_for_a_string_argument_is_made_again_for_another():
    """One gradient function called with `activation="tanh"`, then "relu", then "softplus": each string its
    own code, each gradient that of the function it names."""
    W, x = _m(3, 2), _m(4, 3)
    gradient = tg.grad(pf.activation_named_by_an_argument)
    for activation in ("tanh", "relu", "softplus", "tanh"):
        f = lambda w: pf.activation_named_by_an_argument(w, x, activation)
        np.testing.assert_allclose(gradient(W, x, activation), _numeric_gradient(f, W), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gradient(W, x), gradient(W, x, activation="tanh"))


@pytest.mark.parametrize("order", [("tanh", "relu", "tanh"), ("relu", "tanh", "relu")])
def test_gradients_for_strings_inlined_into_other_functions_are_each_their_own(order):
    """A gradient made for one string (`activation="tanh"`), inlined into a function differentiated again,
    then one made for another string, then the first again: each reads back its own code (the second's had
    replaced the first's under one file name: the third took relu's gradient for tanh's)."""
    W, x = _m(3, 2), _m(4, 3)
    for activation in order:
        def outer(w, activation=activation):
            return np.sum(tg.grad(pf.activation_named_by_an_argument)(w, x, activation, "identity") ** 2)
        np.testing.assert_allclose(tg.grad(outer)(W), _numeric_gradient(outer, W), rtol=1e-5, atol=1e-7)


class _Scaled:
    def loss(self, x, kind="sin"):
        return 2.0 * pf.activation_of_a_vector_named_by_a_default(x, kind)


def test_a_string_left_at_its_default_picks_the_function_in_second_derivatives():
    """tg.hessian of a function whose `kind="tanh"` (or a keyword passed) picks the function from a dict (also
    keyword-only, and of a method), and a gradient called inside another function with that parameter left
    at its default."""
    x = np.array([0.3, -0.5])
    f = pf.activation_of_a_vector_named_by_a_default
    for kwargs in ({}, {"kind": "sin"}, {"kind": "tanh"}):
        gradient = tg.grad(f)
        hessian = np.stack([(gradient(x + e, **kwargs) - gradient(x - e, **kwargs)) / 2e-6
                            for e in np.eye(2) * 1e-6], axis=1)
        np.testing.assert_allclose(tg.hessian(f)(x, **kwargs), hessian, rtol=1e-5, atol=1e-7)
    outers = [lambda v: np.sum(tg.grad(f)(v) ** 2), lambda v: np.sum(tg.grad(f)(v, kind="sin") ** 2),
              lambda v: np.sum(tg.grad(f)(v, "sin") ** 2), lambda v: np.sum(tg.grad(f)(v) ** 3)]
    for outer in outers:
        np.testing.assert_allclose(tg.grad(outer)(x), _numeric_gradient(outer, x), rtol=1e-5, atol=1e-7)
    keyword_only = lambda v, *, kind="sin": f(v, kind)  # noqa: E731
    for g, kwargs in ((keyword_only, {}), (keyword_only, {"kind": "tanh"}), (_Scaled().loss, {})):
        gradient = tg.grad(g)
        hessian = np.stack([(gradient(x + e, **kwargs) - gradient(x - e, **kwargs)) / 2e-6
                            for e in np.eye(2) * 1e-6], axis=1)
        np.testing.assert_allclose(tg.hessian(g)(x, **kwargs), hessian, rtol=1e-5, atol=1e-7)
    passed = {"kind": "sin"}  # (a keyword whose value is not known when transforming: not taken as the default,
    outer = lambda v: np.sum(tg.grad(f)(v, **passed) ** 2)  # noqa: E731  # but dispatched on when the code runs)
    np.testing.assert_allclose(tg.grad(outer)(x), _numeric_gradient(outer, x), rtol=1e-5, atol=1e-7)


def test_a_function_of_a_module_dict_replaced_between_calls_is_followed(monkeypatch):
    """ACTIVATION_BY_NAME["tanh"] set to np.sin after the first call: the code is made again for np.sin."""
    W, x = _m(3, 2), _m(4, 3)
    gradient = tg.grad(pf.activation_named_by_an_argument)
    gradient(W, x, "tanh")
    monkeypatch.setitem(pf.ACTIVATION_BY_NAME, "tanh", np.sin)
    f = lambda w: pf.activation_named_by_an_argument(w, x, "tanh")
    np.testing.assert_allclose(gradient(W, x, "tanh"), _numeric_gradient(f, W), rtol=1e-5, atol=1e-7)


def test_a_string_of_the_module_rebound_between_calls_is_followed(monkeypatch):
    W, x = _m(3, 2), _m(4, 3)
    gradient = tg.grad(pf.activation_named_by_the_module)
    gradient(W, x)
    monkeypatch.setattr(pf, "ACTIVATION", "relu")
    np.testing.assert_allclose(gradient(W, x), _numeric_gradient(lambda w: pf.activation_named_by_the_module(w, x), W),
                               rtol=1e-5, atol=1e-7)


def test_items_of_an_argument_list_added_stay_an_addition_at_every_order():
    """`a = list(args); a[0] + a[1]` (autograd's check_grads calling `lambda x, y: x + y`): items of a list
    whose items are not known to be lists are added as arrays, so the sum differentiates to any order."""
    def f(x, y):
        a = [x, y]
        a[0] = x * 2.0
        return np.sum(np.sin(a[0] + a[1]))
    x, y = _m(3), _m(3)
    hvp = tg.hvp(lambda x: f(x, y))(x, np.ones(3))
    expected = -np.sin(2 * x + y) * 4.0
    np.testing.assert_allclose(hvp, expected, rtol=1e-6, atol=1e-9)
    assert "plus(" not in tg.source(f)


def _numeric_gradient(f, w, eps=1e-6):
    out = np.zeros_like(w)
    for i in np.ndindex(w.shape):
        step = np.zeros_like(w)
        step[i] = eps
        out[i] = (f(w + step) - f(w - step)) / (2 * eps)
    return out


@pytest.mark.parametrize("make, f", [
    (lambda W, b: pf.Params(W, b), pf.namedtuple_parameters),
    (lambda W, b: pf.Affine(W, b), pf.dataclass_parameters),
])
def test_namedtuple_and_dataclass_arguments_get_gradients_of_their_class(make, f):
    p, x = make(_m(3, 2), _m(2)), _m(4, 3)
    g = tg.grad(f)(p, x)
    assert type(g) is type(p)
    for field in ("W", "b"):
        np.testing.assert_allclose(getattr(g, field), _fd(f, p, field, x), rtol=1e-5, atol=1e-7)
    tangent = make(np.ones((3, 2)), np.zeros(2))
    _, derivative = tg.jvp(lambda q: f(q, x), (p,), (tangent,))
    assert derivative == pytest.approx(np.sum(g.W))


class Registered:
    def __init__(self, W, b, label):
        self.W, self.b, self.label = W, b, label


tg.register_pytree(Registered)


def test_a_registered_class_is_differentiated_field_by_field():
    p, x = Registered(_m(3, 2), _m(2), "first"), _m(4, 3)
    g = tg.grad(pf.dataclass_parameters)(p, x)
    assert isinstance(g, Registered) and g.label is None
    expected = tg.grad(pf.dataclass_parameters)(pf.Affine(p.W, p.b), x)
    np.testing.assert_allclose(g.W, expected.W)
    np.testing.assert_allclose(g.b, expected.b)


async def _asynchronous(x):
    return np.sum(x)


def _evaluates(x):
    return np.sum(eval("x * 3") ** 2)


def _executes(x):
    scope = {"x": x}
    exec("y = x * 3", scope)
    return np.sum(scope["y"] ** 2)


def _reads_locals(x):
    y = x * 3
    return np.sum(locals()["y"])


def _flat_of_a_slice_set(x):
    a = x * 2.0
    a[:2].flat = x[1:] ** 2  # (written into `a` where the gradient code did not see it)
    return np.sum(a)


class _Holder:
    pass


def _getattr_of_a_computed_name(x):
    o = _Holder()
    o.a = x * 2.0
    total = 0.0
    for name in ["a", "b"]:
        total = total + np.sum(getattr(o, name, x * 5.0))  # (it said getattr() takes 2 arguments)
    return total


def _written_into_what_a_call_returns(x):
    K = np.outer(x, x)
    np.einsum("ii->i", K)[:] += 0.1  # (a view of K: it said "nested subscript", "index once with a tuple")
    return np.sum(K)


def _set_of_values_carrying_derivatives(x):
    return sum(sorted({v * 2.0 for v in x}))  # (a set has no order: what goes in cannot be followed out)


@pytest.mark.parametrize("fn, says", [
    (_set_of_values_carrying_derivatives, r"set\(\)(.|\n)*keep such values in a list"),
    (_written_into_what_a_call_returns, r"writes into the array a call returns(.|\n)*np.diag_indices_from"),
    (_getattr_of_a_computed_name, "tapegen picks the attribute or the default when it transforms"),
    (_flat_of_a_slice_set, r"`a\[:2\]\.flat = \.\.\.` writes into the array in place"),
    (_asynchronous, "async functions cannot be differentiated"),
    (_evaluates, r"evaluated 'x \* 3', which reads `x`"),  # (a zero gradient on d0f02f4)
    (_executes, "runs code or reads names"),
    (_reads_locals, "runs code or reads names"),  # (a KeyError when the code ran)
])
def test_refusals_name_the_construct(fn, says):
    with pytest.raises(tg.TapegenError, match=says):
        tg.grad(fn)(X3)


@pytest.mark.parametrize("fn, says", [
    (pf.function_unset_on_the_path_taken, "`fn` is not set \\(or None\\) on the path taken here, which is none of "
                                          "what tapegen found it could hold .* \\(sin, cos\\)"),
    (pf.object_or_array_on_the_path_taken, "`o` holds array.* \\(of class ndarray\\) here, which is none of what "
                                           "tapegen found it could hold .* \\(an object of class Doubler\\)"),
])
def test_a_value_that_is_none_of_a_dispatchs_candidates_raises_when_the_code_runs(fn, says):
    """A call dispatched on what a name holds runs the branch of the function or class it holds; on any other
    value (a path that left it unset, or an array) it raises, in every mode, never running another's code."""
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(tg.grad(fn)(x), np.cos(x) if fn is pf.function_unset_on_the_path_taken else 2.0)
    for differentiated in (tg.grad(fn), lambda x: tg.jvp(fn, (x,), (x,)), lambda x: tg.vjp(fn, x)):
        with pytest.raises(tg.UnsupportedSyntaxError, match=says):
            differentiated(-x)


@pytest.mark.parametrize("fn, says", [
    (pf.function_or_array_read_by_the_next_pass, "`f` is read in this loop as the function a pass before set, and "
                                                 "a pass may leave it holding a value that is not a function"),
    (pf.function_or_array_after_a_branch, "`fs` holds a function or object .* on some path through the `if`"),
    (pf.view_of_an_array_a_helper_changes, "`v` was changed in place by `total \\+= x`"),
    (pf.stale_list_alias, "`As` is what `d\\['A'\\]` held before"),
    (pf.alias_of_an_array_written_in_a_dict, "`a` is what `xs\\[0\\]` held before"),
])
def test_values_changed_behind_a_name_are_refused_not_read_stale(fn, says):
    with pytest.raises(tg.UnsupportedSyntaxError, match=says):
        tg.grad(fn)(X3)


def test_an_array_item_added_to_in_place_runs_where_nothing_else_holds_it():
    """`grads["W"] += x` changes the array in place: where no other name, item or object holds it (checked when
    the code runs: tests/test_containers.py has those that do), that is the item replaced."""
    check_modes(pf.array_item_added_in_place, X3)


@pytest.mark.parametrize("fn", [pf.array_named_twice_then_added_to_in_a_loop,
                                pf.array_named_twice_in_a_loop_then_added_to,
                                pf.arrays_named_twice_by_a_tuple_in_a_loop,
                                pf.array_named_twice_at_the_end_of_a_pass])
def test_an_array_another_name_holds_added_to_in_a_loop_changes_under_both_names(fn):
    """`prev = vel` (before a loop, or in a pass of it) then `vel += v`: NumPy changes the array `prev` holds too.
    tapegen first gave the gradient of `prev` keeping its value, then refused it when the code ran; `prev` now
    holds the new value where it holds that very array when the code runs."""
    check_modes(fn, X3)


def test_an_array_another_name_holds_written_into_in_a_loop_is_refused_when_it_runs():
    """`prev = vel` then `vel[1] = v`: NumPy changes `prev` too, which tapegen does not follow."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="in `vel` in place, and `prev` holds the same array"):
        tg.grad(pf.array_named_twice_at_the_end_of_a_pass_then_written_into)(X3)


def test_rows_written_where_a_view_of_another_row_is_held_match_finite_differences():
    """An RNN's `H[t] = ...; h = H[t]`: `h` shares the array's memory, not the row the next write reaches, so
    the write is not refused (the check when the code runs looks at the part written)."""
    check_modes(pf.rnn_states_written_into_rows_the_last_read_through_a_view, X3)


def test_a_write_reaching_the_row_a_view_shows_is_refused_when_it_runs():
    with pytest.raises(tg.UnsupportedSyntaxError, match="in `H` in place, and `prev` holds the same array"):
        tg.grad(pf.rows_written_over_the_one_the_last_pass_kept)(X3)


def test_star_args_in_the_differentiated_function():
    """`def loss(*params)`: each value of *params is an argument of its own (positions count them)."""
    a, b, c = _m(2), _m(2), _m(2)
    check_modes(pf.star_parameters, a, b, c)
    check_modes(pf.star_parameters, a)
    check_modes(lambda x: np.sum(tg.grad(pf.star_parameters, wrt=1)(x, x, x) * x), a)  # inside: a count per call
    gb, gc = tg.grad(pf.star_parameters, wrt=(1, 2))(a, b, c)
    expected = tg.grad(lambda a, b, c: pf.star_parameters(a, b, c), wrt=(1, 2))(a, b, c)
    np.testing.assert_allclose(gb, expected[0])
    np.testing.assert_allclose(gc, expected[1])
    with pytest.raises(tg.WrtError, match=r"\(params\[0\], params\[1\], scale\)"):
        tg.grad(pf.star_parameters, wrt=3)(a, b)
    hessian = tg.hessian(pf.star_parameters)(a, b)  # the gradient's code made for the count it is called with
    gradient, e0, eps = tg.grad(pf.star_parameters), np.array([1.0, 0.0]), 1e-6
    np.testing.assert_allclose(hessian[:, 0], (gradient(a + eps * e0, b) - gradient(a - eps * e0, b)) / (2 * eps),
                               rtol=1e-5, atol=1e-7)


def test_keyword_parameters_of_the_differentiated_function():
    """`**options` in the differentiated function's own signature: one variant per set of keywords passed;
    `wrt` names a keyword's value by the keyword."""
    x, r, b = _m(2), _m(2), _m(2)
    named = lambda x, r, scale, bias, weight: pf.keyword_parameters(x, r, scale=scale, bias=bias, weight=weight)
    check_modes(named, x, r, 2.0, b, 3.0)
    expected = tg.grad(named, wrt=(0, 1, 2, 3, 4))(x, r, 2.0, b, 3.0)
    got = tg.grad(pf.keyword_parameters, wrt=(0, 1, "scale", "bias", "weight"))(x, r, scale=2.0, bias=b, weight=3.0)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e)
    np.testing.assert_allclose(tg.grad(pf.keyword_parameters, wrt="bias")(x, r, bias=b), x)
    tangent = tg.jvp(lambda b: pf.keyword_parameters(x, bias=b), (b,), (np.ones(2),))[1]
    np.testing.assert_allclose(tangent, np.sum(x))
    with pytest.raises(tg.WrtError, match=r"\(x, scale, bias\)"):
        tg.grad(pf.keyword_parameters, wrt="weight")(x, bias=b)


def _hessian_vector_product(fun):  # autograd's, as written there
    fun_grad = tg.grad(fun)

    def vector_dot_grad(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return np.tensordot(fun_grad(*args, **kwargs), vector, np.ndim(vector))
    return tg.grad(vector_dot_grad)


def test_autograds_hessian_vector_product_differentiates_star_args_and_keywords():
    cubic = lambda x, c=1.0: np.sum(x ** 3) * c
    x, v = np.array([0.3, -0.4]), np.array([1.0, 0.5])
    np.testing.assert_allclose(_hessian_vector_product(cubic)(x, v, c=2.0), 12.0 * x * v)


@pytest.mark.parametrize("act", [np.sin, pf.relu, lambda z: z * np.tanh(z)])
def test_a_function_passed_to_the_differentiated_function_is_followed(act):
    params = [(_m(3, 4), _m(4)), (_m(4, 2), _m(2))]
    x = _m(5, 3) + 0.05
    check_modes(lambda p, x: pf.function_valued_parameter(p, x, act), params, x)
    by_argument = tg.grad(pf.function_valued_parameter)(params, x, act)
    by_keyword = tg.grad(pf.function_valued_parameter)(params, x, nonlinearity=act)
    expected = tg.grad(lambda p, x: pf.function_valued_parameter(p, x, act))(params, x)
    for got in (by_argument, by_keyword):
        for (gW, gb), (eW, eb) in zip(got, expected):
            np.testing.assert_allclose(gW, eW)
            np.testing.assert_allclose(gb, eb)
    assert not np.allclose(tg.grad(pf.function_valued_parameter)(params, x)[0][0], by_argument[0][0])


def test_a_function_valued_parameter_cannot_be_differentiated():
    with pytest.raises(tg.WrtError, match="is a function"):
        tg.grad(pf.function_valued_parameter, wrt=2)([(_m(3, 4), _m(4))], _m(5, 3), np.sin)


def test_a_module_tuple_spread_as_arguments_is_made_again_when_it_changes():
    """`f(*ARGS)` with a tuple of the module: its length is read when transforming and checked on each call;
    a tuple grown since (it would have an item the generated code does not pass) has the code made again,
    in every mode, with the disk cache on too."""
    global SPREAD

    def f(x):
        return np.sum(x * _spread_sum(*SPREAD))
    x = _m(3)
    gradient = tg.grad(f)
    np.testing.assert_allclose(gradient(x), np.full(3, _spread_sum(*SPREAD)))
    saved = SPREAD
    try:
        for grown in (SPREAD + (5.0,), SPREAD + (5.0, -2.0), SPREAD):
            SPREAD = grown
            expected = np.full(3, _spread_sum(*SPREAD))
            np.testing.assert_allclose(gradient(x), expected)
            np.testing.assert_allclose(tg.vjp(f, x)[1](1.0), expected)
            np.testing.assert_allclose(tg.jvp(f, (x,), (np.ones(3),))[1], np.sum(expected))
            np.testing.assert_allclose(tg.grad(lambda y: np.sum(gradient(y) * y))(x), expected)
    finally:
        SPREAD = saved


def test_module_names_rebound_between_calls_have_the_code_made_again(monkeypatch):
    """The generated code inlines the functions, classes and objects module names hold: a name rebound since
    (a helper redefined in a notebook, a layer replaced by one of another class, an item of a list of layers,
    an object's attribute) has the code made again, in every mode; it used to run the old code silently."""
    x = np.array([0.3, -0.4])
    gradient = tg.grad(pf.uses_module_names)
    gradient(x)
    gradient(x)  # (the fast path)
    changes = [("REBOUND_ACT", np.sin), ("_rebound_helper", lambda x: x * 5.0), ("REBOUND_LAYER", pf._Plus(2.0))]
    for name, value in changes:
        monkeypatch.setattr(pf, name, value)
        check_modes(pf.uses_module_names, x)
        np.testing.assert_allclose(gradient(x), tg.grad(lambda y: pf.uses_module_names(y))(x))
    saved = pf.REBOUND_LAYERS[0]
    pf.REBOUND_LAYERS[0] = pf._Plus(1.0)
    try:
        check_modes(pf.uses_module_names, x)
    finally:
        pf.REBOUND_LAYERS[0] = saved
    check_modes(pf.uses_module_names, x)
    monkeypatch.setattr(pf.REBOUND_MODULE, "sub", pf._Plus(0.5))
    monkeypatch.setattr(pf.REBOUND_MODULE, "act", np.sin)
    check_modes(pf.uses_module_names, x)
    expected = [(pf.uses_module_names(x + 1e-6 * e) - pf.uses_module_names(x - 1e-6 * e)) / 2e-6 for e in np.eye(2)]
    np.testing.assert_allclose(gradient(x), expected, rtol=1e-6)


PICKED = 0


def test_a_module_int_key_that_changes_between_calls_has_the_code_made_again():
    """`xs[PICKED] = ...` with an int of the module: which item moves is known when transforming and checked
    on each call; when PICKED changes, the code is made again for its new value."""
    global PICKED

    def f(a, b):
        xs = [a, b]
        xs[PICKED] = np.sin(xs[PICKED]) * 3.0
        return np.sum(xs[0] * xs[1])
    a, b = np.array([0.3, -0.2]), np.array([1.1, 0.4])
    gradient = tg.grad(f, wrt=(0, 1))
    try:
        for picked in (0, 1, 0):
            PICKED = picked
            ga, gb = gradient(a, b)
            if picked == 0:
                np.testing.assert_allclose(ga, 3.0 * np.cos(a) * b)
                np.testing.assert_allclose(gb, 3.0 * np.sin(a))
            else:
                np.testing.assert_allclose(ga, 3.0 * np.sin(b))
                np.testing.assert_allclose(gb, 3.0 * np.cos(b) * a)
    finally:
        PICKED = 0


def test_a_module_value_that_changes_between_calls_is_followed_with_the_disk_cache(tmp_path):
    global SPREAD

    def g(x):
        return np.sum(x * _spread_sum(*SPREAD))
    saved = SPREAD
    tg.cache.enable(str(tmp_path))
    try:
        x = _m(3)
        np.testing.assert_allclose(tg.grad(g)(x), np.full(3, _spread_sum(*SPREAD)))
        SPREAD = SPREAD + (7.0,)
        np.testing.assert_allclose(tg.grad(g)(x), np.full(3, _spread_sum(*SPREAD)))
    finally:
        SPREAD = saved
        tg.cache.disable()


SPREAD = (1.5, -0.5)


def _spread_sum(*values):
    return sum(values)


def test_a_list_item_set_by_a_computed_slice_that_changes_its_length_is_refused():
    def f(x, k):
        a = [x, x, x]
        a[k] = [x]
        return np.sum(_spread_sum(*a))
    with pytest.raises(tg.UnsupportedSyntaxError, match="changes the length of a list"):
        tg.grad(f)(X3, slice(0, 2))


def test_a_pullback_used_as_a_value_is_refused_by_name():
    def f(x):
        return np.sum(np.stack([tg.vjp(pf._sin_times, x)[1]]))
    with pytest.raises(tg.UnsupportedSyntaxError, match="holds a function defined in the differentiated function"):
        tg.grad(f)(X3)


def test_a_list_of_known_objects_grown_while_another_name_holds_it_is_refused():
    """`same` would not show the item appended: tapegen binds the name it is appended through anew."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="`layers.append\\(...\\)` changes the list `same` holds too"):
        tg.grad(pf.list_of_objects_appended_through_another_name)(_m(3, 3), X3)


def test_items_of_a_list_grown_in_a_loop_with_another_class_are_refused_not_guessed():
    """Lowered again with what was known of the list before the loop forgotten, it was taken for empty, so
    every item's `.f` was Tripler's (a wrong gradient). (`[Doubler()]`, a display of an object made here, is
    known item by item since probe17: the loop growing it is refused where it reads the list.)"""
    with pytest.raises((tg.NoRuleError, tg.UnsupportedSyntaxError),
                       match="no gradient rule for .f()|`layers` is read before this pass of the loop"):
        tg.grad(pf.objects_of_another_class_appended_in_a_loop)(X3)


def test_a_flag_that_decided_a_branch_has_the_code_made_again_when_it_changes():
    """A layer's first call sets it up (`is_initialized` False: the branch is in the code); the next call finds
    the flag True and the code is made again without it. Both gradients match finite differences."""
    layer = pf.LazyDense(2)

    def loss(X):
        return np.sum(layer.forward(X) ** 2)

    X = np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]])
    for _ in range(2):
        check_modes(loss, X)
    assert layer.is_initialized


def test_layers_made_from_a_list_argument_have_code_made_for_its_length():
    """`[Dense(W, b) for W, b in params[:-1]]` over the argument `params`: the objects are known one by one only
    for a length known when transforming, so the code is made for the lengths of the call's lists (refused
    for any length); a call with another number of layers has code made for that one."""
    from corpus import dense_layers

    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    for sizes in ((3, 4, 4, 2), (3, 2), (3, 5, 2)):
        params = [(0.5 * rng.standard_normal((m, n)), 0.1 * rng.standard_normal(n))
                  for m, n in zip(sizes[:-1], sizes[1:])]
        check_modes(dense_layers.mlp_loss, params, X, y, order2=False)


def test_a_function_refused_for_every_length_keeps_its_first_error():
    """Made again for the lengths of its lists only where that makes it work: otherwise the error is the one
    the general code was refused with."""
    def kept_in_a_set(params, x):
        seen = set()
        seen.add(id(params[0]))
        return np.sum(x * len(seen))

    with pytest.raises(tg.TapegenError) as general:
        tg.grad(kept_in_a_set, wrt=1)([X3], X3)
    with pytest.raises(tg.TapegenError) as again:
        tg.grad(kept_in_a_set, wrt=1)([X3, X3], X3)
    assert str(general.value) == str(again.value)


def test_jacobians_and_hessians_are_made_again_when_a_module_name_is_rebound(monkeypatch):
    """tg.jacobian, tg.hessian, tg.grad of tg.grad and of tg.jvp ran the code made for a helper since rebound (a
    silent stale value): the gradient and tangent code they differentiate keep the names they were made for,
    checked on each call."""
    x = np.array([0.3, -0.4])

    def steps(f, eps=1e-5):
        return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(2)])

    jacobian = tg.jacobian(lambda y: np.sin(pf.uses_module_names(y)) * y)
    hessian = tg.hessian(pf.uses_module_names)
    second = tg.grad(lambda y: np.sum(tg.grad(pf.uses_module_names)(y) ** 2))
    v = np.array([1.0, 0.5])
    of_jvp = tg.grad(lambda y: tg.jvp(pf.uses_module_names, (y,), (v,))[1])
    for name, value in [(None, None), ("_rebound_helper", lambda x: x * 5.0), ("REBOUND_ACT", np.sin)]:
        if name is not None:
            monkeypatch.setattr(pf, name, value)
        np.testing.assert_allclose(jacobian(x), steps(lambda y: np.sin(pf.uses_module_names(y)) * y).T, rtol=1e-4)
        np.testing.assert_allclose(hessian(x), steps(tg.grad(pf.uses_module_names)), rtol=1e-4)
        np.testing.assert_allclose(second(x), steps(lambda y: np.sum(tg.grad(pf.uses_module_names)(y) ** 2)),
                                   rtol=1e-4)
        np.testing.assert_allclose(of_jvp(x), steps(lambda y: tg.jvp(pf.uses_module_names, (y,), (v,))[1]),
                                   rtol=1e-4)


def test_global_names_are_rebound_in_the_module_as_the_code_runs():
    """`global CALLS; CALLS += 1` counts each call the gradient code makes (as the function run by Python
    does), and `LAST_LOSS = loss` keeps the value of the call."""
    x = np.array([0.3, -0.7, 1.2])
    gradient = tg.grad(pf.counts_its_calls)
    gradient(x)  # (the first calls make the code: the tests' self-check runs it once more)
    gradient(x)
    before = pf.CALLS
    for k in range(1, 4):
        np.testing.assert_allclose(gradient(x), 4.0 * np.sin(x) * np.cos(x))
        assert pf.CALLS == before + k
        assert pf.LAST_LOSS == pytest.approx(np.sum(np.sin(x) ** 2))


def _blocks(rng):
    def params():
        return {"mlp": {"w": rng.normal(size=(3, 3)) * 0.5, "b": rng.normal(size=3) * 0.1},
                "ln": {"g": 1 + 0.1 * rng.normal(size=3), "b": 0.1 * rng.normal(size=3)}}
    return [params(), params()]


def test_keywords_spread_from_dict_arguments_bind_by_parameter_name():
    rng = np.random.default_rng(5)
    blocks, x = _blocks(rng), rng.normal(size=(2, 3))
    check_modes(lambda x: pf.keywords_from_dict_arguments(x, blocks), x)
    gradient = tg.grad(pf.keywords_from_dict_arguments, argnums=1)(x, blocks)
    w = blocks[1]["mlp"]["w"]
    expected = _numeric_gradient(lambda w_: pf.keywords_from_dict_arguments(
        x, [blocks[0], {"mlp": {"w": w_, "b": blocks[1]["mlp"]["b"]}, "ln": blocks[1]["ln"]}]), w)
    np.testing.assert_allclose(gradient[1]["mlp"]["w"], expected, rtol=1e-6, atol=1e-8)


def test_a_spread_dict_with_a_key_the_function_does_not_take_is_pythons_type_error():
    rng = np.random.default_rng(5)
    blocks, x = _blocks(rng), rng.normal(size=(2, 3))
    blocks[0]["extra"] = 1.0
    with pytest.raises(TypeError, match="unexpected keyword argument 'extra'"):
        tg.grad(pf.keywords_from_dict_arguments)(x, blocks)


def test_functions_passed_by_keyword_through_a_wrappers_kwargs():
    check_modes(pf.function_through_wrapper_keywords, np.array([0.3, -0.8, 1.2]))


def test_dict_pop_on_dicts_built_here():
    x = np.array([0.3, -0.8, 1.2])
    check_modes(lambda x: pf.popped_options(x, {"w": x[1] * 2.0, "b": np.sin(x), "k": 1}), x)
    check_modes(pf.popped_from_a_built_dict, x)
    for fn in (pf.pops_in_a_loop, pf.updates_in_a_loop, pf.pops_keywords_in_a_loop):  # (the dict in the next pass
        check_modes(fn, x)  # was the one before the loop: wrong values and gradients)
    with pytest.raises(tg.UnsupportedSyntaxError, match="no key 'missing' to pop"):
        tg.grad(pf.pops_a_missing_key)(x)


def test_a_helpers_code_or_defaults_replaced_in_place_makes_the_code_again(monkeypatch):
    """IPython's autoreload gives the function object new code and defaults: the gradient made for the old
    ones is not used again (it gave the old function's gradient)."""
    x = np.array([0.3, -0.8, 1.2])
    gradient = tg.grad(pf.calls_a_helper_with_a_default)
    np.testing.assert_allclose(gradient(x), 8.0 * x)
    monkeypatch.setattr(pf._scaled_by_default, "__defaults__", (3.0,))
    np.testing.assert_allclose(gradient(x), 18.0 * x)
    monkeypatch.setattr(pf._scaled_by_default, "__code__", (lambda x, scale=2.0: x * scale * scale).__code__)
    np.testing.assert_allclose(gradient(x), 162.0 * x)


@pytest.mark.parametrize("fn", [pf.writes_into_an_item_of_a_slice, pf.writes_into_an_item_of_a_copied_list,
                                pf.appends_to_an_item_of_a_slice], ids=lambda f: f.__name__)
def test_an_item_a_slice_or_copy_shares_changed_in_place_is_refused(fn):
    with pytest.raises(tg.UnsupportedSyntaxError, match="another list or dict holds too"):  # (it gave the
        tg.jvp(fn, (X3,), (np.ones(3),))  # values of the list that was not changed: 1.53 where 0.69)


def test_items_copied_with_the_slice_are_written_as_usual():
    check_modes(pf.writes_into_items_copied_with_the_slice, X3)


def test_var_where_with_fewer_entries_chosen_than_ddof_is_nan_as_numpy():
    X = np.array([[0.3, -1.2, 2.0], [0.7, 0.2, -0.5]])
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        expected = pf.var_where_fewer_chosen_than_ddof(X)
        value, tangent = tg.jvp(pf.var_where_fewer_chosen_than_ddof, (X,), (np.ones_like(X),))
    assert np.isnan(expected[1]) and np.isnan(expected[4])  # (tapegen gave -0.0 there)
    np.testing.assert_allclose(value, expected, equal_nan=True)


def test_a_constant_appended_to_a_list_of_activations_and_a_copys_list_appended_to():
    """numpy-ml's RNNCell (`As.append(A0)` before the first step) and wrappers (`dv = ...copy();
    dv["wrappers"].append(...)`): neither keeps a derivative out of sight, so neither is refused."""
    check_modes(pf.cell_steps, np.array([0.3, -1.2, 0.8]), order2=False)


def _held_by_another_name(a):
    da, db = a * 2, a * 3
    kept = da
    for d in [da, db]:
        d *= 0.5
    return np.sum(kept ** 2) + np.sum(db)


def _held_in_a_list(a):
    da, db = a * 2, a * 3
    kept = [da]
    for d in [da, db]:
        d *= 0.5
    return np.sum(kept[0] ** 2) + np.sum(db)


def test_a_loop_over_names_changing_an_array_another_name_holds_changes_it_there():
    """`kept = da; for d in [da, db]: d *= 0.5`: NumPy changes the array `kept` holds too, as it now does (it
    was refused when the code ran)."""
    check_modes(_held_by_another_name, X3)


def test_a_loop_over_names_changing_an_array_a_list_holds_is_refused_when_it_runs():
    """`kept = [da]; for d in [da, db]: d *= 0.5`: NumPy changes it in the list as well, which tapegen does not
    follow."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="changes the ndarray in `d` in place"):
        tg.grad(_held_in_a_list)(X3)


def _written_through_an_index_array(P, x):
    P = P * 1.0
    rows = np.array([0, 1])
    P[rows][0] = x[0]  # NumPy writes into a copy (P[rows] is not a view): P is left as it was
    return np.sum(P ** 2)


def test_a_nested_write_whose_first_index_is_not_an_integer_is_refused_when_it_runs():
    """`A[i][j] = v` is `A[i, j] = v` only where `i` is an integer."""
    with pytest.raises(tg.UnsupportedSyntaxError, match=r"test_python_features.py:\d+:\d+: .*first index is an integer"):
        tg.grad(_written_through_an_index_array)(_m(2, 3), X3)


def _adds_to_a_name_of_its_own(x):
    total = np.zeros(3)

    def add(v):
        total += v  # no `nonlocal`: `total` is add's own name, read before it is assigned (UnboundLocalError)
    add(x)
    return np.sum(total)


def _shadows_a_name(x):
    y = x[0]

    def scaled(v):
        y = v * 2  # add's own `y`: the function's is unchanged
        return y
    return scaled(x[1]) * y


def test_a_local_function_reading_its_own_name_before_assigning_it_is_refused():
    """tapegen read the enclosing function's `total` there, and gave a zero gradient where Python raises."""
    with pytest.raises(UnboundLocalError):
        _adds_to_a_name_of_its_own(X3)
    with pytest.raises(tg.UnsupportedSyntaxError, match="used before it is assigned"):
        tg.grad(_adds_to_a_name_of_its_own)(X3)


def test_a_local_function_assigning_a_name_of_its_own_leaves_the_enclosing_one():
    check_modes(_shadows_a_name, X3)


def test_a_modules_model_keeps_what_a_helper_writes_into_its_dicts():
    x, gamma = _m(4, 3), _m(3)
    pf.BN_NET.bn_params[0] = {"mode": "train"}
    tg.grad(pf.batchnorm_keeping_running_averages)(x, gamma)
    np.testing.assert_allclose(pf.BN_NET.bn_params[0]["running_mean"], 0.1 * x.mean(axis=0))
    np.testing.assert_allclose(pf.BN_NET.bn_params[0]["running_var"], 0.1 * x.var(axis=0))


def test_a_derivative_written_into_a_modules_dict_is_not_read_back():
    with pytest.raises(tg.UnsupportedSyntaxError, match="wrote a value carrying a derivative into it"):
        tg.grad(pf.running_average_read_back)(_m(4, 3), _m(3))


def _set_the_first(fs):
    fs[0] = np.cos


def _replace_through_update(ops):
    ops.update(a=np.cos)


def _take_the_first(ops):
    return ops.pop("a")


def _add_cos(fs):
    fs.append(np.cos)


def _a_helper_sets_an_item_of_the_callers_list_of_functions(x):
    fs = [np.sin, np.tanh]
    _set_the_first(fs)
    return np.sum(fs[0](x))


def _a_helper_updates_the_callers_dict_of_functions(x):
    ops = {"a": np.sin}
    _replace_through_update(ops)
    return np.sum(ops["a"](x))


def _a_helper_pops_from_the_callers_dict_of_functions(x):
    ops = {"a": np.sin, "b": np.cos}
    f = _take_the_first(ops)
    return np.sum(f(x)) + sum(np.sum(g(x)) * 2 for g in ops.values())


def _a_helper_appends_to_the_callers_list_of_functions(x):
    fs = [np.sin]
    _add_cos(fs)
    return sum(np.sum(f(x)) * (k + 1) for k, f in enumerate(fs))


def _another_name_pops_from_a_dict_of_functions(x):
    ops = {"a": np.sin, "b": np.cos}
    same = ops
    f = same.pop("a")
    return np.sum(f(x)) + sum(np.sum(g(x)) * 2 for g in ops.values())


@pytest.mark.parametrize("fn", [_a_helper_sets_an_item_of_the_callers_list_of_functions,
                                _a_helper_updates_the_callers_dict_of_functions,
                                _a_helper_pops_from_the_callers_dict_of_functions,
                                _a_helper_appends_to_the_callers_list_of_functions,
                                _another_name_pops_from_a_dict_of_functions], ids=lambda f: f.__name__)
def test_a_list_or_dict_of_functions_changed_through_another_name_is_refused(fn):
    """A helper's `fs[0] = np.cos` (`.update`, `.pop`, `.append`) on the caller's list or dict of functions, or
    `.pop` through another name, changed it only where it was written: the caller went on calling np.sin (a wrong
    value and gradient, no error)."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="holds too"):
        tg.grad(fn)(X3.copy())


def _a_helper_returns_a_new_list_of_functions(fs):
    new = list(fs)
    new.append(np.cos)
    return new


def test_a_helper_returning_a_new_list_of_functions_is_followed():
    def f(x):
        fs = _a_helper_returns_a_new_list_of_functions([np.sin, np.tanh])
        return sum(np.sum(g(x)) * (k + 1) for k, g in enumerate(fs))
    check_modes(f, X3.copy())


class _Settings:
    scale = 2.0
    count = 0


_COUNTS = {"calls": 0}


def _bump_the_class_count():
    _Settings.count += 1


def _a_class_number_set_in_a_loop_and_read(x):
    s = 0.0
    for k in range(3):
        _Settings.scale = k * 1.0
        s = s + np.sum(x) * _Settings.scale
    return s


def _a_class_count_a_helper_bumps(x):
    _bump_the_class_count()
    return np.sum(x) * _Settings.count


def _a_module_dict_counted_into(x):
    _COUNTS["calls"] += 1
    return np.sum(x) * _COUNTS["calls"]


@pytest.mark.parametrize("fn, says", [
    (_a_class_number_set_in_a_loop_and_read, "`_Settings.scale` is set in the function and read in it too"),
    (_a_class_count_a_helper_bumps, "`_Settings.count` is set in the function and read in it too"),
    (_a_module_dict_counted_into, "changes `_COUNTS`, a dict of the module"),
])
def test_state_of_a_class_or_module_changed_and_read_in_the_function_is_refused(monkeypatch, fn, says):
    """A class's number is read as a constant when transforming: set in a loop (`C.scale = k`), each pass read
    the value from before the call (18.0 where Python gives 9.0); bumped by a helper, the count from before.
    `G["n"] += 1` on a module's dict changed a copy: G kept 0, each call gave the first call's value. No error."""
    monkeypatch.setattr(_Settings, "scale", 2.0)
    monkeypatch.setattr(_Settings, "count", 0)
    monkeypatch.setitem(_COUNTS, "calls", 0)
    with pytest.raises(tg.UnsupportedSyntaxError, match=says):
        tg.value_and_grad(fn)(X3.copy())


def _a_class_flag_only_set(x):
    _Settings.count = 5
    return np.sum(x ** 2) * _Settings.scale


def test_a_class_attribute_set_but_not_read_in_the_function_is_set(monkeypatch):
    monkeypatch.setattr(_Settings, "count", 0)
    check_modes(_a_class_flag_only_set, X3.copy())
    assert _Settings.count == 5


def test_a_loop_over_a_list_changing_an_array_another_name_holds_changes_it_there_too():
    """`params = [w]; for p in params: p -= v` runs as `params[k] -= v`: NumPy changes the array `w` holds too,
    which `w` now holds after it (it was refused when the code ran; a wrong gradient before that)."""
    check_modes(pf.item_of_a_list_another_name_holds_changed_through_the_loop, X3)
    check_modes(pf.items_of_a_list_other_names_hold_changed_in_place, X3)


@pytest.mark.parametrize("fn, says", [
    (pf.number_in_a_list_changed_through_the_loop, "`p` changed in place in a loop over `params` holds a float"),
])
def test_a_loop_over_a_list_changing_what_python_would_not_is_refused_when_it_runs(fn, says):
    """`for p in params: p -= v` runs as `params[k] -= v`: a number item (which Python rebinds in `p` only) or an
    array another name holds (which NumPy changes there too) raises, in every mode."""
    for differentiated in (tg.grad(fn), lambda x: tg.jvp(fn, (x,), (x,)), lambda x: tg.vjp(fn, x)):
        with pytest.raises(tg.UnsupportedSyntaxError, match=says):
            differentiated(X3)


def test_a_helper_changing_a_list_an_attribute_holds_matches_finite_differences():
    """d2l's `sgd(opt.params, grads, lr)` on an optimiser's list: the helper's loop carries the caller's list
    itself, so the attribute shows the change, as in Python."""
    check_modes(pf.list_held_by_an_attribute_changed_by_a_helper, X3)


def test_a_dict_read_out_of_a_list_changed_in_a_loop_changes_the_lists_dict():
    """`p = ps[i]; p["rm"] = v` in a loop: Python changes the list's dict (b0742a1 read the list's dict unchanged:
    a wrong value; refused from then to fb8f5d2, followed outside loops and branches only)."""
    check_modes(pf.dict_read_out_of_a_list_changed_in_a_loop, X3)


def _local_recursion_over_items(x):
    def norm(v):
        if isinstance(v, (list, tuple)):
            return sum(norm(e) for e in v)
        return np.sum(v ** 2)
    return norm([x, (x * 2, x[0])])


def test_a_local_function_recursing_past_what_tapegen_unrolls_is_refused():
    """A local def recursing over items whose kind is known only when the code runs: a RecursionError from
    tapegen's lowering on b0742a1; now a refusal naming the function and the fix (the module-level helper
    runs, differentiated when the code runs)."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="the local function `norm` calls itself deeper"):
        tg.grad(_local_recursion_over_items)(X3)


def test_a_strict_zip_of_sequences_of_two_lengths_raises_as_python_does():
    def walked(x, ys):
        return sum(a * b for a, b in zip(x, ys, strict=True))

    def known(x):
        return sum(a * b for a, b in zip([x, x], [1.0, 2.0, 3.0], strict=True))

    with pytest.raises(ValueError, match=r"zip\(\) argument 2 is shorter than argument 1"):
        walked(_m(3), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"zip\(\) argument 2 is shorter than argument 1"):
        tg.grad(walked)(_m(3), [1.0, 2.0])
    with pytest.raises(tg.UnsupportedSyntaxError, match=r"always raises ValueError: zip\(\) argument 2 is longer"):
        tg.grad(known)(1.5)


def _strict_zip_left_early(x, ys):
    s = 0.0
    for a, y in zip(x, ys, strict=True):
        if y > 2.5:
            break
        s = s + a * y
    else:
        s = s * 3.0
    return s


def _strict_zip_returned_from(x, ys):
    s = 0.0
    for a, y in zip(x, ys, strict=True):
        s = s + a * y
        if s > 10.0:
            return s
    return s * 2.0


def test_a_strict_zip_left_early_checks_lengths_only_where_the_loop_runs_to_its_end():
    """Python's zip is lazy: `strict=True` raises where the shortest argument runs out, so a loop left by
    `break` or `return` before that raises nothing. fb8f5d2 checked the lengths before the loop: a ValueError
    Python does not raise."""
    x = np.array([1.0, 2.0, 3.0])
    check_modes(_strict_zip_left_early, x, [1.0, 2.0, 3.0, 4.0])   # leaves at the third item, as Python
    check_modes(_strict_zip_left_early, x, [1.0, 2.0, 1.0])         # runs to its end: the else clause
    check_modes(_strict_zip_returned_from, x, [4.0, 2.0, 3.0, 4.0])  # returns at the second item
    check_modes(_strict_zip_returned_from, x, [1.0, 1.0, 1.0])
    for f, ys in [(_strict_zip_left_early, [1.0, 2.0]), (_strict_zip_left_early, [1.0, 1.0, 1.0, 1.0]),
                  (_strict_zip_returned_from, [1.0, 1.0, 1.0, 1.0])]:
        with pytest.raises(ValueError, match=r"zip\(\) argument 2 is (shorter|longer) than argument 1") as python:
            f(x, ys)
        with pytest.raises(ValueError, match=re.escape(str(python.value))):
            tg.grad(f)(x, ys)



def _strict_zip_of_a_slice_left_early(x, ys):
    s = 0.0
    for a, b, y in zip(x, x[:2] * 2.0, ys[1:], strict=True):
        s = s + a * b * y
        if y > 2.5:
            break
    return s


def test_a_strict_zip_of_expressions_left_early_checks_lengths_only_where_the_loop_runs_to_its_end():
    """`zip(x, x[:2] * 2.0, ys[1:], strict=True)`: arguments that are not names (a slice, arithmetic) were checked
    before the loop on 980730e, a ValueError from the generated code where the loop leaves before the shortest
    runs out and Python raises nothing. Each is now made once into a name before the loop, checked at its end."""
    x = np.array([1.0, 2.0, 3.0])
    check_modes(_strict_zip_of_a_slice_left_early, x, [0.0, 1.0, 3.0, 4.0])  # leaves at the second item
    for ys in ([0.0, 1.0, 2.0, 1.0], [0.0, 1.0, 1.0]):  # runs to its end: x[:2] is the shorter, as Python says
        with pytest.raises(ValueError, match=r"zip\(\) argument 2 is shorter than argument 1") as python:
            _strict_zip_of_a_slice_left_early(x, ys)
        with pytest.raises(ValueError, match=re.escape(str(python.value))):
            tg.grad(_strict_zip_of_a_slice_left_early)(x, ys)

def _returns_on_one_path(x):
    if np.sum(x) > 0:
        return x * 2.0


def _helper_falling_off_its_end(x):
    y = _returns_on_one_path(x)
    if y is None:
        return np.sum(np.sin(x))
    return np.sum(y ** 2)


def _matched_on_a_numpy_bool(x):
    match np.sum(x) > 0:  # `case True` matches only True itself: np.True_ is not True
        case True:
            return np.sum(x ** 2)
        case False:
            return np.sum(x)


class suppress_warnings:  # (named as numpy.testing's: a manager that suppresses no exception)
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _returns_inside_managers(x):
    if np.sum(x) > 0:
        with contextlib.suppress(ValueError):  # (a ValueError would leave it, and return None)
            return np.sum(np.sin(x))
    with suppress_warnings():
        return np.sum(x ** 2)


def test_a_function_falling_off_its_end_returns_none_as_python():
    """A path ending without `return` returns None. fb8f5d2 left the result unbound there: an
    UnboundLocalError from the generated code (a helper's None, read by its caller, or the function's own)."""
    check_modes(_helper_falling_off_its_end, np.array([-1.0, 0.5, -2.0]))
    check_modes(_helper_falling_off_its_end, np.array([1.0, 0.5, 2.0]))
    assert _matched_on_a_numpy_bool(np.ones(2)) is None
    with pytest.raises(tg.NonScalarOutputError, match="returned None"):
        tg.grad(_matched_on_a_numpy_bool)(np.ones(2))
    with pytest.raises(tg.NonScalarOutputError, match="returned None"):
        tg.grad(_helper_falling_off_its_end.__globals__["_returns_on_one_path"])(np.ones(2) * -1)
    value, tangent = tg.jvp(_matched_on_a_numpy_bool, (np.ones(2),), (np.ones(2),))
    assert value is None and tangent is None
    check_modes(_returns_inside_managers, np.array([0.3, -0.8, 1.2]))  # (ends in a `with` whose body returns)
    check_modes(_returns_inside_managers, np.array([-0.3, -0.8, 0.2]))


def test_a_list_of_functions_changed_in_place_under_another_name_is_refused():
    """`gs = fs; fs += [np.tanh]` changes the list both names hold: 5e8d915 left `gs` without np.tanh (a wrong
    value and gradient with no error)."""
    def f(x):
        fs = [np.sin, np.cos]
        gs = fs
        fs += [np.tanh]
        return sum(np.sum(g(x)) for g in gs)

    with pytest.raises(tg.UnsupportedSyntaxError, match="changes the list `gs` holds too"):
        tg.grad(f)(_m(3))


def expected_improvement_masked(mu, sigma):
    """Bayesian optimisation's acquisition as written in tutorials: `ei` first set in an errstate block,
    then zeroed in place where sigma is 0."""
    with np.errstate(divide="warn"):
        imp = mu - 0.2
        Z = imp / sigma
        ei = imp * 0.5 * (1 + np.tanh(Z)) + sigma * np.exp(-0.5 * Z ** 2)
        ei[sigma == 0.0] = 0.0
    return np.sum(ei)


def first_set_in_a_branch(x, flag):
    if flag:
        buf = x * 2.0
    buf[0] = np.sin(x[1])
    return np.sum(buf ** 2)


def test_an_array_first_set_in_a_with_block_is_written_into_there_in_every_mode_and_second_order():
    check_modes(expected_improvement_masked, np.array([0.3, -0.4, 1.1]), np.array([0.5, 1.5, 0.7]))


def test_an_array_first_set_in_a_branch_is_its_own_after_it():
    check_modes(first_set_in_a_branch, np.array([0.3, -0.4, 1.1]), True)


def exponential_model(x, a, b, c):
    return a * np.exp(-b * x) + c


def curve_fit_loss(p):  # scipy.optimize.curve_fit's convention: the model called with *popt
    x = np.linspace(0.0, 1.0, 5)
    return np.sum((exponential_model(x, *p) - np.cos(x)) ** 2) + np.sum(np.array(tuple(p)) ** 2)


def quartic(x, a, b, c, d=0.0, e=0.0):
    return a + b * x + c * x ** 2 + d * x ** 3 + e * x ** 4


def polynomial_of_any_degree(c):
    x = np.linspace(-1.0, 1.0, 4)
    return np.sum(np.sin(quartic(x, *c))) + len(c)


def log_parameterised_fit(log_p):  # positive parameters fitted on a log scale: `model(x, *np.exp(log_p))`
    x = np.linspace(0.0, 1.0, 5)
    return np.sum((exponential_model(x, *np.exp(log_p)) - np.cos(x)) ** 2) + \
        np.sum(quartic(x, *(2.0 * np.tanh(-log_p))))


def test_an_array_argument_spread_into_arguments_in_every_mode_and_second_order():
    check_modes(curve_fit_loss, np.array([1.0, 0.5, 0.2]))


def test_an_elementwise_function_of_an_array_argument_spread_into_arguments():
    """`*np.exp(log_p)` has as many items as `log_p`, which the code is made for (it was refused: an array's
    length known only when the code runs)."""
    check_modes(log_parameterised_fit, np.array([0.1, -0.5, 0.2]))


def test_code_made_for_an_array_arguments_length_is_made_again_for_another():
    for n in (3, 5, 3):
        c = np.linspace(0.2, 0.9, n)
        check_modes(polynomial_of_any_degree, c)
        assert np.shape(tg.grad(polynomial_of_any_degree)(c)) == (n,)


def two_factors(a, b, scale=1.0):  # (`*xs` may fill `scale` too: how many items xs has decides)
    return a * b * scale


def spread_list_argument(xs, x):
    return np.sum(two_factors(*xs) * x)


def test_code_made_for_a_list_arguments_length_is_not_made_for_each_array_length():
    """The lists' lengths are tried first: a function that needs only them is not made again per batch size."""
    spread = tg.grad(spread_list_argument, wrt=1)
    for n in (3, 4):
        np.testing.assert_allclose(spread([1.5, 2.0], np.ones(n)), np.full(n, 3.0))
    assert spread._differentiated._target.lengths_matter is True
    fitted = tg.grad(curve_fit_loss)
    p = np.array([1.0, 0.5, 0.2])
    np.testing.assert_allclose(fitted(p), _numeric_gradient(curve_fit_loss, p), atol=1e-6)
    # (`exponential_model(x, *p)`: its parameters, none with a default, take `*p` of any length, checked when
    # the code runs; the code for any length is not refused, so not made per length: quartic's defaults are)
    assert fitted._differentiated._target.lengths_matter is False
    polynomial = tg.grad(polynomial_of_any_degree)
    polynomial(np.array([0.2, 0.5, 0.9]))
    assert polynomial._differentiated._target.lengths_matter == "rows"


@pytest.mark.parametrize("fn", [pf.function_a_helper_returns_given_an_array_used_after,
                                pf.function_item_of_an_argument_given_an_array_used_after])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_function_tapegen_cannot_tell_given_an_array_used_afterwards_is_refused(fn, mode):
    """The function may change the array in place (sklearn's activations do): its derivative through the
    change would be lost. On 5e8d915 the call ran as written and the derivative was that of the array before."""
    with pytest.raises(tg.TapegenError, match="may change it in place"):
        tg.grad(fn)(X3) if mode == "grad" else tg.jvp(fn, (X3,), (X3,))


@pytest.mark.parametrize("fn", [pf._array_item_changed_by_a_helper_seen_by_a_name,
                                pf._array_item_changed_by_a_helper_held_twice,
                                pf._array_item_changed_by_a_helper_seen_through_a_view])
@pytest.mark.parametrize("mode", ["grad", "jvp", "vjp"])
def test_a_helper_changing_a_list_item_another_name_or_item_holds_is_refused_when_it_runs(fn, mode):
    """NumPy's change shows wherever the array is held: tapegen's code makes the list's item a new array only."""
    with pytest.raises(tg.TapegenError, match="holds the same ndarray|another of its items is the same|holds more "
                                              "than once"):
        if mode == "grad":
            tg.grad(fn)(X3)
        elif mode == "jvp":
            tg.jvp(fn, (X3,), (X3,))
        else:
            tg.vjp(fn, X3)[1](1.0)


@pytest.mark.parametrize("fn, says", [
    (pf._a_display_whose_items_a_helper_replaces, "otherwise than an item in place"),
    (pf._a_display_of_names_one_of_which_another_name_holds, "`w2` holds the same ndarray")])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_display_of_names_a_helper_changes_otherwise_is_refused(fn, says, mode):
    """`f([w, b])` replacing the list's items leaves `w` and `b` as they were (tapegen cannot tell which item
    each holds then); another name for `w` would show NumPy's change too."""
    with pytest.raises(tg.TapegenError, match=says):
        tg.grad(fn)(X3) if mode == "grad" else tg.jvp(fn, (X3,), (X3,))


def _parsed_settings(spec):
    """numpy-ml's KernelInitializer.init_from_str: `key=value` pairs of a string, each value `eval`ed."""
    import re
    r = r"([a-zA-Z0-9]*)=([^,)]*)"
    return dict([(i, eval(j)) for (i, j) in re.findall(r, spec)])


def _evaluates_literals(x):
    kw = _parsed_settings("RBFKernel(sigma=0.5, c0=-2e-1, d=3)")
    return np.sum(np.sin(x * kw["sigma"]) * eval("2.5") + kw["c0"] * x ** kw["d"])


def _evaluates_a_name_when_the_code_runs(x):
    return np.sum(x * _parsed_settings("RBFKernel(sigma=x)")["sigma"])


def test_eval_of_an_expression_reading_no_names_is_its_value():
    """(`eval(j)` was refused as code tapegen cannot see: `eval("0.8")` has one value in any scope)"""
    check_modes(_evaluates_literals, X3.copy())
    with pytest.raises(tg.UnsupportedSyntaxError, match=r"evaluated 'x', which reads `x`"):
        tg.grad(_evaluates_a_name_when_the_code_runs)(X3)

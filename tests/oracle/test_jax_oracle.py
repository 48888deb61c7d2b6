"""Real JAX (0.10.2, in .venv-jax) as the oracle for what pallas-ls claims.

One subprocess runs everything JAX has to decide (tests/oracle/jax_driver.py): every snippet
in tests/oracle/snippets/ (each exports one kernel for TPU by cross-lowering on this CPU
machine) and the PAL004 sources below (plus their fixed versions). The tests then compare
JAX's outcome with pallas-ls's view of the same source.

How JAX's outcome proves what lowered the kernel: every snippet's kernel body holds a
`lax.conv_general_dilated` whose result is stored to a ref. JAX 0.10.2 has no Mosaic rule for
it, so Mosaic raises "Unimplemented primitive in Pallas TPU lowering for <core type>:
conv_general_dilated" when it reaches the conv (naming the core type). An exported module
that calls `tpu_custom_call` was lowered by Mosaic without reaching the conv; anything else
(plain HLO, or an error raised outside Mosaic's lowering) was not lowered by Mosaic.

What 0.10.2 cannot decide is not tested against it: PAL001 needs `opt_level` (0.11.0+) and
PAL002/PAL003 need the Mosaic conv rule (not in any release up to 0.11.0). For the conv we
compare only reachability and liveness: "JAX's Mosaic reached the conv in a TensorCore
kernel" against "pallas-ls reports PAL002 for the conv's per-operand precision" (with the
default Config, i.e. a JAX that has the rule).

What the conv rule reads, though, 0.10.2 does decide: the canonical precision JAX gives the
conv (its equation's `precision` in the traced kernel), from an explicit `precision=` or from
`jax.default_matmul_precision` where the kernel is traced. The precision programs
(tests/oracle/precision/ and EXPLICIT below) compare it, through the record's rule
(`mosaic_verdict`), with pallas-ls's PAL002/PAL003, and re-trace every fix.
"""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pallas_ls.core.engine import analyse
from pallas_ls.core.kernels import KernelFinder, KernelKind, KernelSite, Mosaic
from pallas_ls.core.model import Config, Finding
from pallas_ls.core.resolve import parse_module
from pallas_ls.core.textedit import apply_edits
from pallas_ls.core.values import Evaluator

pytestmark = pytest.mark.oracle

REPO = Path(__file__).resolve().parents[2]
JAX_PYTHON = REPO / ".venv-jax" / "bin" / "python"
HERE = Path(__file__).resolve().parent
DRIVER = HERE / "jax_driver.py"
SNIPPET_DIR = HERE / "snippets"
ORACLE_JAX = "0.10.2"
JAX_0_10_2 = Config(jax_version=(0, 10, 2))
LATEST = Config()
# A safety net against a hung subprocess, not a timing assertion.
DRIVER_TIMEOUT_SECONDS = 600

if not JAX_PYTHON.exists():
    pytest.skip(
        f"{JAX_PYTHON} does not exist: the real-JAX oracle venv is built by `make install-test`",
        allow_module_level=True,
    )

MOSAIC_USED = {Mosaic.USED, Mosaic.USED_UNLESS_INTERPRET}
CONV = "conv_general_dilated"

# What JAX 0.10.2 does with each snippet (checked first, so a broken snippet cannot pass for
# an agreement). "mosaic:<core>:<primitive>": Mosaic lowered the kernel for <core> and stopped
# at <primitive>; "ok:mosaic": lowered by Mosaic without reaching the conv; "ok:interpreted":
# plain HLO, no Mosaic; "error:<Type>": failed outside Mosaic's lowering.
TC_CONV = f"mosaic:tc:{CONV}"
SNIPPETS: dict[str, str] = {
    # pl.pallas_call: always TensorCore
    "pallas_call_plain": TC_CONV,
    "pallas_call_decorator_partial": TC_CONV,
    "pallas_call_partial_variable": TC_CONV,
    "pallas_call_from_import": TC_CONV,
    "pallas_call_body_partial": TC_CONV,
    "pallas_call_interpret_false": TC_CONV,
    "pallas_call_interpret_none": TC_CONV,
    "pallas_call_interpret_parameter": TC_CONV,
    "pallas_call_interpret_true": "ok:interpreted",
    "pallas_call_interpret_nonempty_tuple": "ok:interpreted",
    "pallas_call_interpret_empty_tuple": TC_CONV,
    # TPU interpret mode runs the kernel on the CPU: exporting for TPU fails before Mosaic.
    "pallas_call_interpret_params": "error:ValueError",
    "pallas_call_interpret_params_class": "ok:interpreted",
    # a kernel only traced, never lowered (review16)
    "pallas_call_only_eval_shape": "ok:interpreted",
    "pallas_call_only_make_jaxpr": "ok:interpreted",
    # jax.jit(kernel) only traced (.eval_shape, .trace(...) dropped or read), never lowered;
    # traced and then called, it is lowered
    "pallas_call_jit_eval_shape": "ok:interpreted",
    "pallas_call_jit_trace_discarded": "ok:interpreted",
    "pallas_call_only_jit_trace": "ok:interpreted",
    "pallas_call_jit_trace_then_called": TC_CONV,
    "pallas_call_force_interpret": "error:ValueError",
    "pallas_call_set_interpret_mode": "error:ValueError",
    "pallas_call_interpret_params_src": "error:ValueError",
    "pallas_call_interpret_params_replaced": "error:ValueError",
    "pallas_call_interpret_kwargs_true": "ok:interpreted",
    "pallas_call_interpret_kwargs_false": TC_CONV,
    "pallas_call_interpret_conditional": TC_CONV,
    # pl.kernel / pl.core_map over a TensorCore mesh
    "kernel_tc_call": TC_CONV,
    "kernel_tc_decorator": TC_CONV,
    "kernel_tc_partial": TC_CONV,
    "kernel_tc_curried": TC_CONV,
    "kernel_tc_mesh_in_run": TC_CONV,
    "kernel_tc_interpret_true": TC_CONV,
    "kernel_tc_force_interpret": TC_CONV,
    "core_map_tc": TC_CONV,
    "core_map_tc_interpret_true": TC_CONV,
    # SparseCore meshes (an abstract TPU v5p device gives JAX the SparseCore info)
    "kernel_sc_vector": f"mosaic:sc_vector_subcore:{CONV}",
    "kernel_sc_scalar": f"mosaic:sc_scalar_subcore:{CONV}",
    "kernel_sc_mpmd": f"mosaic:sc_vector_subcore:{CONV}",
    # liveness: pallas_call removes dead equations, pl.kernel does not
    "dce_pallas_call_unused": "ok:mosaic",
    "dce_pallas_call_unused_chain": "ok:mosaic",
    "dce_pallas_call_bare_expression": "ok:mosaic",
    "dce_pallas_call_overwritten": "ok:mosaic",
    "dce_pallas_call_helper_result_unused": "ok:mosaic",
    "dce_pallas_call_loop_result_unused": "ok:mosaic",
    "dce_pallas_call_cond_result_unused": "ok:mosaic",
    "dce_pallas_call_scratch": TC_CONV,
    "dce_pallas_call_debug_print": TC_CONV,
    "dce_kernel_unused": TC_CONV,
    # liveness: what reads the conv's result
    "dce_pallas_call_shape_only": "ok:mosaic",
    "dce_pallas_call_shape_and_value": TC_CONV,
    "dce_pallas_call_zeros_like": "ok:mosaic",
    "dce_pallas_call_tuple_target": "ok:mosaic",
    "dce_pallas_call_helper_tuple_element": "ok:mosaic",
    "dce_pallas_call_cond_tuple_element": "ok:mosaic",
    "dce_pallas_call_augassign_unused": "ok:mosaic",
    "dce_pallas_call_walrus_identity": "ok:mosaic",
    "dce_pallas_call_walrus_read": TC_CONV,
    "dce_pallas_call_list_unused": "ok:mosaic",
    "dce_pallas_call_list_read": TC_CONV,
    "dce_pallas_call_helper_ignores_argument": "ok:mosaic",
    "dce_pallas_call_helper_reads_argument": TC_CONV,
    "dce_pallas_call_helper_rebinds_argument": "ok:mosaic",
    "dce_pallas_call_helper_hands_argument_on": "ok:mosaic",
    "dce_pallas_call_helper_reads_in_dead_branch": "ok:mosaic",
    "dce_pallas_call_helper_reads_after_return": "ok:mosaic",
    "dce_pallas_call_helper_reads_shape_only": "ok:mosaic",
    "dce_pallas_call_helper_reads_in_live_branch": TC_CONV,
    "dce_pallas_call_read_in_dead_branch": "ok:mosaic",
    "dce_pallas_call_read_in_live_branch": TC_CONV,
    "dce_pallas_call_read_after_continue": "ok:mosaic",
    "dce_pallas_call_read_in_finally": TC_CONV,
    "dce_pallas_call_helper_hands_argument_to_a_reader": TC_CONV,
    "reach_helper_tuple_element": TC_CONV,
    "reach_cond_tuple_element": TC_CONV,
    "reach_fori_carry_feedback": TC_CONV,
    # reachability: what the trace of the kernel body reaches
    "reach_helper": TC_CONV,
    "reach_jit_helper": TC_CONV,
    "reach_factory_closure": TC_CONV,
    "reach_fori_loop": TC_CONV,
    "reach_cond_branch": TC_CONV,
    "reach_when_traced": TC_CONV,
    "reach_vmap": TC_CONV,
    "reach_when_false": "ok:mosaic",
    "reach_when_false_kernel": "ok:mosaic",
    "reach_static_if": "ok:mosaic",
    "reach_checkpoint": "mosaic:tc:remat2",
    "reach_rebound_kernel": "ok:mosaic",
    "reach_after_return": "ok:mosaic",
    "reach_wrapper": TC_CONV,
    "reach_cond_constant_predicate": "ok:mosaic",
    "reach_switch_constant_index": "ok:mosaic",
    "reach_switch_constant_index_conv": TC_CONV,
    "reach_switch_branches": TC_CONV,
    "reach_for_empty_tuple": "ok:mosaic",
    "reach_for_range_zero": "ok:mosaic",
    "reach_for_range_two": TC_CONV,
    "reach_while_false": "ok:mosaic",
    "reach_conv_partial": TC_CONV,
    "reach_rebound_if_true": "ok:mosaic",
    "reach_rebound_if_false": TC_CONV,
    "reach_pipeline_run": TC_CONV,
    "reach_pipeline_never_run": "ok:mosaic",
    "reach_pipeline_run_in_dead_branch": "ok:mosaic",
    "reach_pipeline_from_helper_run": TC_CONV,
    "reach_pipeline_from_helper_never_run": "ok:mosaic",
    "reach_pipeline_from_helper_run_under_when_false": "ok:mosaic",
    "reach_pipeline_passed_to_helper_that_ignores_it": "ok:mosaic",
    "reach_pipeline_passed_to_helper_that_runs_it": TC_CONV,
    "reach_pipeline_passed_as_keyword_to_helper_that_ignores_it": "ok:mosaic",
    "reach_pipeline_run_in_uncalled_lambda": "ok:mosaic",
    "reach_pipeline_run_in_called_lambda": TC_CONV,
    "reach_pipeline_run_in_uncalled_nested_def": "ok:mosaic",
    "reach_pipeline_run_in_called_nested_def": TC_CONV,
    "branch_except_not_taken": "ok:mosaic",
    "branch_except_taken": TC_CONV,
    "dead_after_assert_false": "error:AssertionError",
    "reach_generator_never_iterated": "ok:mosaic",
    "loop_fori_zero_trips_literal": "ok:mosaic",
    "loop_fori_one_trip_literal": TC_CONV,
    "loop_fori_zero_trips_constants": "ok:mosaic",
    "loop_scan_length_zero": "ok:mosaic",
    "loop_scan_length_one": TC_CONV,
    "loop_pl_loop_zero_trips": "ok:mosaic",
    "loop_over_empty_dict_items": "ok:mosaic",
    "loop_over_set_call": "ok:mosaic",
    "loop_over_empty_string": "ok:mosaic",
    "loop_over_zip_with_empty": "ok:mosaic",
    "loop_over_range_len_empty": "ok:mosaic",
    "loop_over_range_len_one": TC_CONV,
    "loop_over_zip_nonempty": TC_CONV,
    "comprehension_filter_false": "ok:mosaic",
    "comprehension_filter_true": TC_CONV,
    "loop_pl_loop_reversed_bounds": "ok:mosaic",
    "loop_pl_loop_two_trips": TC_CONV,
    "dce_pallas_call_lax_full_like": "ok:mosaic",
    "dce_discarded_tuple_statement": "ok:mosaic",
    "dce_local_dict_store_unread": "ok:mosaic",
    "reach_local_dict_store_read": TC_CONV,
    "reach_local_list_store_read": TC_CONV,
    "dce_discarded_slice_statement": "ok:mosaic",
    "dce_print_of_conv": "ok:mosaic",
    "dce_assert_message": "ok:mosaic",
    "reach_discarded_store_call_statement": TC_CONV,
    "dce_and_short_circuit": "ok:mosaic",
    "reach_and_evaluated": TC_CONV,
    "dce_or_short_circuit": "ok:mosaic",
    "reach_or_evaluated": TC_CONV,
    "dce_tuple_index_other": "ok:mosaic",
    "dce_list_index_other": "ok:mosaic",
    "dce_helper_tuple_index_other": "ok:mosaic",
    "reach_tuple_index_same": TC_CONV,
    "reach_tuple_index_negative": TC_CONV,
    "dce_tuple_index_negative_other": "ok:mosaic",
    "reach_helper_tuple_index_same": TC_CONV,
    "dce_dict_key_other": "ok:mosaic",
    "dce_dict_key_overwritten": "ok:mosaic",
    "reach_dict_key_same": TC_CONV,
    "dce_starred_target_unused": "ok:mosaic",
    "reach_starred_target_read": TC_CONV,
    "reach_listcomp_range_zero": "ok:mosaic",
    "reach_listcomp_range_one": TC_CONV,
    "reach_while_local_zero": "ok:mosaic",
    "reach_while_local_one": TC_CONV,
    "reach_map_never_iterated": "ok:mosaic",
    "reach_map_iterated": TC_CONV,
    "reach_genexp_never_iterated": "ok:mosaic",
    "reach_genexp_iterated": TC_CONV,
    "reach_closure_rebound": "ok:mosaic",
    "reach_rebound_after_use": "ok:mosaic",
    "reach_kernel_alternatives": "ok:mosaic",
    # control flow: loops that always run, always leave, or always rebind
    "flow_return_in_for_then_conv": "ok:mosaic",
    "flow_while_true_return_then_conv": "ok:mosaic",
    "flow_while_true_break_rebinds": "ok:mosaic",
    "flow_for_range_rebinds": "ok:mosaic",
    "flow_if_true_rebinds": "ok:mosaic",
    "flow_with_rebinds": "ok:mosaic",
    "flow_try_finally_rebinds": "ok:mosaic",
    "flow_for_else_rebinds": "ok:mosaic",
    "flow_helper_returns_in_loop": "ok:mosaic",
    "flow_while_true_else": "ok:mosaic",
    "flow_for_break_else": "ok:mosaic",
    "flow_while_true_break_then_conv": TC_CONV,
    "flow_return_in_empty_for_then_conv": TC_CONV,
    "flow_empty_for_rebinds": TC_CONV,
    "flow_break_before_rebind": TC_CONV,
    "flow_if_false_rebinds": TC_CONV,
    "flow_helper_returns_in_empty_loop": TC_CONV,
    # JAX fails before lowering: the kernel must return None
    "kernel_returns_a_value": "error:ValueError",
    "kernel_returns_helper_none": TC_CONV,
    "kernel_returns_helper_explicit_none": TC_CONV,
    "kernel_returns_helper_value": "error:ValueError",
    "reach_conv_partial_bound_twice": "error:TypeError",
    # Python branches on shapes: static when traced, unknown to pallas-ls
    "branch_if_shape_taken": TC_CONV,
    "branch_if_shape_not_taken": "ok:mosaic",
    "branch_match_ndim_not_taken": "ok:mosaic",
    # a `match` on a module constant: decided, like an `if`
    "branch_match_constant_taken": TC_CONV,
    "branch_match_constant_not_taken": "ok:mosaic",
    "branch_match_constant_wildcard": "ok:mosaic",
    "branch_cond_shape_not_taken": "ok:mosaic",
    # 2026-12-05: liveness and reachability (review11 false reports): len/str of a display,
    # uncalled closures, defaults, self-rebinding through a helper, SimpleNamespace
    # attributes, cond/switch operands no branch reads, run_scoped buffers only stored
    # into, slices past the end, functools.reduce over an empty sequence
    "dce_closure_def_uncalled": "ok:mosaic",
    "dce_cond_operand_unread": "ok:mosaic",
    "dce_default_arg_unread": "ok:mosaic",
    "dce_lambda_capture_uncalled": "ok:mosaic",
    "dce_lambda_default_unread": "ok:mosaic",
    "dce_len_of_list_display": "ok:mosaic",
    "dce_namespace_attr_unread": "ok:mosaic",
    "dce_rebound_through_ignoring_helper": "ok:mosaic",
    "dce_reduce_over_empty": "ok:mosaic",
    "dce_run_scoped_decorated_store_only": "ok:mosaic",
    "dce_run_scoped_store_only": "ok:mosaic",
    "dce_switch_operand_unread": "ok:mosaic",
    "loop_over_slice_nonempty": TC_CONV,
    "loop_over_slice_past_end": "ok:mosaic",
    "reach_closure_under_pl_when": TC_CONV,
    "reach_cond_operand_read_by_one_branch": TC_CONV,
    "reach_default_arg_read": TC_CONV,
    "reach_default_read_through_kwonly": TC_CONV,
    "reach_lambda_capture_called": TC_CONV,
    "reach_lambda_capture_loop_body": TC_CONV,
    "reach_len_walrus_list_read": TC_CONV,
    "reach_namespace_attr_read": TC_CONV,
    "reach_namespace_passed_to_writer": TC_CONV,
    "reach_rebound_through_reading_helper": TC_CONV,
    "reach_reduce_over_one": TC_CONV,
    "reach_run_scoped_read_back": TC_CONV,
    "reach_run_scoped_sync_copy": TC_CONV,
    "reach_switch_operand_read_by_one": TC_CONV,
    # a store through `nonlocal`/`global`; a `return` that a `finally` replaces
    "reach_nonlocal_store_read": TC_CONV,
    "dce_nonlocal_store_unread": "ok:mosaic",
    "reach_global_store_read": TC_CONV,
    "dce_finally_return_overrides": "ok:mosaic",
    "reach_finally_return_undecided": TC_CONV,
    "reach_finally_without_return": TC_CONV,
    # a store into a module-level dict
    "dce_module_dict_store_unread": "ok:mosaic",
    "reach_module_dict_store_read": TC_CONV,
    "reach_module_dict_read_by_helper": TC_CONV,
    # a static fori_loop runs as a scan, whose unused carry elements and per-step outputs
    # JAX drops; a traced bound makes a while_loop, which keeps them
    "dce_fori_carry_element_unread": "ok:mosaic",
    "dce_fori_lambda_carry_index": "ok:mosaic",
    "dce_scan_ys_unused": "ok:mosaic",
    "reach_fori_carry_element_fed_back": TC_CONV,
    "reach_fori_carry_element_used_after": TC_CONV,
    "reach_fori_traced_bound_unused_carry": TC_CONV,
    # fields of a frozen dataclass or a NamedTuple decide loops and branches
    "loop_over_dataclass_field_zero": "ok:mosaic",
    "loop_over_dataclass_field_two": TC_CONV,
    "loop_over_namedtuple_field_zero": "ok:mosaic",
    "loop_pl_loop_dataclass_zero": "ok:mosaic",
    "branch_dataclass_flag_true": TC_CONV,
    # members of a plain enum.Enum compare as themselves (an equal value is an alias)
    "branch_enum_member_taken": TC_CONV,
    "branch_enum_member_other": "ok:mosaic",
    "branch_enum_alias_taken": TC_CONV,
    "branch_enum_value_taken": TC_CONV,
    "branch_enum_value_not_taken": "ok:mosaic",
    "branch_enum_name_taken": TC_CONV,
    "branch_enum_name_not_taken": "ok:mosaic",
    "branch_enum_call_by_value_taken": TC_CONV,
    "branch_enum_call_by_value_not_taken": "ok:mosaic",
    "branch_enum_getitem_taken": TC_CONV,
    "branch_enum_getitem_not_taken": "ok:mosaic",
    "branch_enum_auto_value_taken": TC_CONV,
    "branch_enum_auto_value_not_taken": "ok:mosaic",
    "branch_enum_member_truthy": TC_CONV,
    # a carry element rebound before it is read, or read only to update itself; constant
    # arithmetic (a static bound `8 // 4`, a test `BLOCKS % 2 == 0`)
    "dce_fori_carry_element_rebound": "ok:mosaic",
    "dce_fori_carry_element_self_recurrent": "ok:mosaic",
    "reach_fori_carry_element_feeds_other": TC_CONV,
    "reach_fori_carry_self_recurrent_used_after": TC_CONV,
    "branch_arithmetic_constant_taken": TC_CONV,
    "branch_arithmetic_constant_not_taken": "ok:mosaic",
    # run_scoped has no DCE rule: JAX keeps it whole (every equation of its body) when its
    # result is used or its body writes a ref of the kernel or prints; else it drops it
    "dce_run_scoped_dead_local_no_effect": "ok:mosaic",
    "dce_run_scoped_local_rebind_only": "ok:mosaic",
    "dce_run_scoped_result_unused": "ok:mosaic",
    "dce_run_scoped_two_buffers_store_only": "ok:mosaic",
    "dce_run_scoped_write_in_uncalled_def": "ok:mosaic",
    "reach_run_scoped_dead_local_body_writes_out": TC_CONV,
    "reach_run_scoped_partial_writes_out": TC_CONV,
    "reach_run_scoped_store_only_body_writes_out": TC_CONV,
    "reach_run_scoped_store_only_debug_print": TC_CONV,
    "reach_run_scoped_store_only_result_used": TC_CONV,
    "reach_run_scoped_store_only_when_writes_out": TC_CONV,
    # builtins, shifts, subscripts, unpacking and f-strings on known constants
    "loop_divmod_remainder_zero": "ok:mosaic",
    "loop_divmod_remainder_one": TC_CONV,
    "loop_int_of_division_zero": "ok:mosaic",
    "loop_max_zero": "ok:mosaic",
    "loop_min_one": TC_CONV,
    "loop_round_half_even_zero": "ok:mosaic",
    "loop_shift_zero": "ok:mosaic",
    "loop_shift_one": TC_CONV,
    "loop_len_of_tuple_zero": "ok:mosaic",
    "loop_tuple_index_zero": "ok:mosaic",
    "loop_tuple_index_negative_two": TC_CONV,
    "branch_fstring_tag_taken": TC_CONV,
    "branch_fstring_tag_not_taken": "ok:mosaic",
    # a fori_loop's initial carry; static bounds from shapes or `unroll`; one element of a
    # result held in a name; a loop whose result is discarded keeps what its effects read
    "dce_fori_init_element_unread": "ok:mosaic",
    "reach_fori_init_element_read": TC_CONV,
    "reach_fori_init_element_used_after": TC_CONV,
    "reach_fori_init_element_traced_bound": TC_CONV,
    "dce_fori_shape_bound_carry_unread": "ok:mosaic",
    "dce_fori_unroll_carry_unread": "ok:mosaic",
    "dce_fori_result_name_other_element": "ok:mosaic",
    "reach_fori_result_name_element_read": TC_CONV,
    "reach_fori_discarded_effect_reads_carry": TC_CONV,
    "reach_fori_discarded_effect_reads_init": TC_CONV,
    "dce_fori_discarded_effect_reads_other": "ok:mosaic",
    "dce_fori_discarded_no_effect": "ok:mosaic",
    # cond/switch operands: partial branches, `*args`, a switch table held in a name, a dead
    # local in a branch, one element of a tuple operand
    "dce_cond_partial_branches_unread": "ok:mosaic",
    "reach_cond_partial_branch_reads": TC_CONV,
    "dce_cond_star_args_unread": "ok:mosaic",
    "reach_cond_star_args_reads": TC_CONV,
    "dce_switch_table_name_unread": "ok:mosaic",
    "reach_switch_table_name_one_reads": TC_CONV,
    "dce_cond_branch_dead_local": "ok:mosaic",
    "reach_cond_branch_local_returned": TC_CONV,
    "dce_cond_tuple_operand_other_element": "ok:mosaic",
    "reach_cond_tuple_operand_element_read": TC_CONV,
    # one attribute of a local SimpleNamespace; dataclasses.replace, NamedTuple._replace and
    # a ClassVar read on a frozen dataclass instance
    "dce_namespace_other_attr_read": "ok:mosaic",
    "reach_namespace_same_attr_read": TC_CONV,
    "reach_namespace_getattr": TC_CONV,
    "loop_dataclass_replace_zero": "ok:mosaic",
    "loop_dataclass_replace_one": TC_CONV,
    "loop_dataclass_classvar_zero": "ok:mosaic",
    "loop_dataclass_classvar_two": TC_CONV,
    "loop_namedtuple_replace_zero": "ok:mosaic",
    "loop_namedtuple_replace_one": TC_CONV,
    # a scan's carry tuple inside `(carry, ys)`: its initial value, the step's return, and
    # the final carry unpacked or held in a name
    "dce_scan_init_carry_element_unread": "ok:mosaic",
    "reach_scan_init_carry_element_read": TC_CONV,
    "dce_scan_body_carry_element_unread": "ok:mosaic",
    "reach_scan_body_carry_element_used_after": TC_CONV,
    "reach_scan_body_carry_element_read_next_step": TC_CONV,
    "dce_scan_carry_name_other_element": "ok:mosaic",
    "reach_scan_carry_name_element_read": TC_CONV,
    # a fori_loop bounded by pl.num_programs(i): a Python int for a static grid, so the loop
    # is a scan whose unread carry elements are dropped
    "dce_fori_num_programs_init_unread": "ok:mosaic",
    "reach_fori_num_programs_init_used_after": TC_CONV,
    "dce_fori_num_programs_body_unread": "ok:mosaic",
    "reach_fori_num_programs_body_read": TC_CONV,
    # a dict display's entries are separate leaves: one entry of a loop's dict carry, a
    # local dict or a helper's returned dict is dropped when nothing reads it
    "dce_fori_dict_carry_init_unread": "ok:mosaic",
    "reach_fori_dict_carry_init_read": TC_CONV,
    "reach_fori_dict_carry_init_used_after": TC_CONV,
    "dce_fori_dict_carry_body_unread": "ok:mosaic",
    "reach_fori_dict_carry_body_read": TC_CONV,
    "reach_fori_dict_carry_traced_bound": TC_CONV,
    "reach_fori_dict_int_key": TC_CONV,
    "reach_fori_dict_key_var": TC_CONV,
    "reach_fori_dict_result_whole": TC_CONV,
    "reach_fori_dict_star_body": TC_CONV,
    "dce_scan_dict_carry_init": "ok:mosaic",
    "dce_scan_dict_carry_body": "ok:mosaic",
    "reach_scan_dict_carry_body_used": TC_CONV,
    "dce_local_dict_other_entry": "ok:mosaic",
    "reach_local_dict_get": TC_CONV,
    "dce_helper_dict_other": "ok:mosaic",
    # a value in a tuple (or dict) inside a tuple counts as the whole outer element it is in
    "dce_fori_nested_carry_init_unread": "ok:mosaic",
    "reach_fori_nested_carry_init_read": TC_CONV,
    "dce_fori_nested_carry_body_unread": "ok:mosaic",
    "reach_fori_nested_carry_body_used_after": TC_CONV,
    "dce_fori_nested_carry_passed_through": "ok:mosaic",
    "reach_fori_nested_carry_traced_bound": TC_CONV,
    "dce_local_nested_tuple_other": "ok:mosaic",
    "reach_local_nested_tuple_same": TC_CONV,
    "dce_scan_nested_carry_init": "ok:mosaic",
    "dce_fori_dict_in_tuple_carry": "ok:mosaic",
    # a read in a branch the evaluator rules out (`if DEBUG:`, `y if USE_CONV else x`, a
    # partial-bound flag) is never traced
    "dce_read_under_false_flag": "ok:mosaic",
    "reach_read_under_true_flag": TC_CONV,
    "dce_fori_carry_read_under_false_flag": "ok:mosaic",
    "reach_fori_carry_read_under_true_flag": TC_CONV,
    "dce_read_in_untaken_ifexp": "ok:mosaic",
    "reach_read_in_taken_ifexp": TC_CONV,
    "dce_read_under_partial_flag_false": "ok:mosaic",
    "reach_read_under_partial_flag_true": TC_CONV,
    # d.get with a constant key, dict(a=..., b=...), types.SimpleNamespace(a=..., b=...)
    # and a pl.cdiv bound
    "dce_local_dict_get_other_key": "ok:mosaic",
    "reach_local_dict_get_same_key": TC_CONV,
    "dce_dict_call_other_key": "ok:mosaic",
    "reach_dict_call_same_key": TC_CONV,
    "dce_namespace_ctor_other_attr": "ok:mosaic",
    "reach_namespace_ctor_same_attr": TC_CONV,
    "dce_fori_cdiv_bound_unread": "ok:mosaic",
    "reach_fori_cdiv_traced_bound": TC_CONV,
    # a scan step that returns a carry element as its per-step output too
    "reach_scan_ys_from_carry_element": TC_CONV,
    "dce_scan_ys_from_carry_element_unused": "ok:mosaic",
    # a fori_loop whose result is held in a name nothing reads keeps what its body's ref
    # stores read of the carry
    "reach_fori_unused_result_effect_reads_carry": TC_CONV,
    "reach_fori_unused_result_effect_reads_body_conv": TC_CONV,
    "dce_fori_unused_result_effect_reads_other": "ok:mosaic",
    # a scan's xs that no step reads
    "dce_scan_xs_unread": "ok:mosaic",
    "reach_scan_xs_read": TC_CONV,
    "reach_scan_xs_into_ys": TC_CONV,
    # a loop body given as functools.partial(body, x=x)
    "dce_fori_partial_body_unread": "ok:mosaic",
    "reach_fori_partial_body_reads": TC_CONV,
    # dict keys given by module string constants
    "dce_dict_constant_keys_other": "ok:mosaic",
    "reach_dict_constant_keys_same": TC_CONV,
    "reach_dict_constant_keys_overwrite": TC_CONV,
    # a dict passed to cond branches or a helper that read only other entries
    "dce_cond_dict_operand_other_entry": "ok:mosaic",
    "reach_cond_dict_operand_entry_read": TC_CONV,
    "dce_helper_dict_param_other_entry": "ok:mosaic",
    # math.floor/ceil and pl.cdiv on known numbers
    "loop_math_floor_zero": "ok:mosaic",
    "loop_math_ceil_one": TC_CONV,
    "loop_cdiv_zero": "ok:mosaic",
    "loop_cdiv_two": TC_CONV,
    # a frozen dataclass subclass of a frozen dataclass of the same module
    "loop_dataclass_subclass_classvar_zero": "ok:mosaic",
    "loop_dataclass_subclass_classvar_one": TC_CONV,
    "loop_dataclass_subclass_field_default_zero": "ok:mosaic",
    "loop_dataclass_subclass_inherited_field_one": TC_CONV,
    "loop_dataclass_subclass_positional_zero": "ok:mosaic",
    "loop_dataclass_subclass_positional_one": TC_CONV,
    # a plain @property of a frozen dataclass
    "loop_dataclass_property_zero": "ok:mosaic",
    "loop_dataclass_property_one": TC_CONV,
    "branch_dataclass_property_flag_not_taken": "ok:mosaic",
    "branch_dataclass_property_flag_taken": TC_CONV,
    # len() of a plain Enum class (aliases do not count)
    "loop_enum_len_zero": "ok:mosaic",
    "loop_enum_len_alias_zero": "ok:mosaic",
    "loop_enum_len_one": TC_CONV,
    # str methods on known strings
    "branch_str_startswith_taken": TC_CONV,
    "branch_str_startswith_not_taken": "ok:mosaic",
    "branch_str_lower_taken": TC_CONV,
    "branch_str_lower_not_taken": "ok:mosaic",
    # a dict carry rebuilt as {**c, "acc": ...}
    "dce_fori_dict_star_body_unread": "ok:mosaic",
    "dce_fori_dict_star_body_replaced": "ok:mosaic",
    "dce_scan_dict_star_body_unread": "ok:mosaic",
    "reach_scan_dict_star_body_used_after": TC_CONV,
    # a dict entry or namespace attribute deleted or stored over before the read, on every
    # way to it (a statement earlier in a block around the read, after the binding)
    "dce_dict_entry_deleted": "ok:mosaic",
    "dce_dict_entry_popped": "ok:mosaic",
    "dce_dict_entry_stored_over": "ok:mosaic",
    "dce_dict_entry_updated": "ok:mosaic",
    "dce_dict_entry_stored_over_in_loop": "ok:mosaic",
    "dce_namespace_attr_stored_over": "ok:mosaic",
    "reach_dict_entry_deleted_after_read": TC_CONV,
    "reach_dict_entry_pop_used": TC_CONV,
    "reach_dict_entry_stored_in_empty_loop": TC_CONV,
    "reach_dict_entry_read_before_store_in_loop": TC_CONV,
    "reach_dict_other_entry_deleted": TC_CONV,
    "reach_dict_entry_deleted_before_binding": TC_CONV,
    "reach_dict_entry_update_reads_it": TC_CONV,
    "reach_namespace_other_attr_stored": TC_CONV,
    # a read under a guard the analysis decides against it (the guards of the conv rule's
    # reachability): a loop over nothing, `while` false, a `match` case, an `and` operand
    "dce_read_in_and_operand_flag_false": "ok:mosaic",
    "reach_read_in_and_operand_flag_true": TC_CONV,
    "dce_read_in_loop_over_empty_range": "ok:mosaic",
    "reach_read_in_loop_over_range_one": TC_CONV,
    "dce_read_in_loop_over_empty_tuple_constant": "ok:mosaic",
    "reach_read_in_loop_over_tuple_constant": TC_CONV,
    "dce_read_in_match_case_not_taken": "ok:mosaic",
    "reach_read_in_match_case_taken": TC_CONV,
    "dce_read_in_while_flag_false": "ok:mosaic",
    "reach_read_in_while_flag_true": TC_CONV,
    # a decorator of the user's that visibly returns something else than the def it is
    # given (review16): the name is not the def; wrappers that call it, or return it, are
    "kernel_decorator_replaces": "ok:mosaic",
    "kernel_decorator_replaces_with_nested_def": "ok:mosaic",
    "helper_decorator_replaces": "ok:mosaic",
    "kernel_decorator_wraps": TC_CONV,
    "kernel_decorator_registers": TC_CONV,
    "kernel_decorator_factory_returns_it": TC_CONV,
    "helper_decorator_wraps": TC_CONV,
    # `with jax.ensure_compile_time_eval():` runs what it can eagerly (review16)
    "kernel_compile_time_eval_conv_of_constants": "ok:mosaic",
    "kernel_compile_time_eval_then_conv": TC_CONV,
    # constants of a plain class read through it (`Cfg.LAYERS`), unless the module stores
    # to that attribute name anywhere
    "dce_read_in_loop_over_class_constant_zero": "ok:mosaic",
    "dce_read_under_class_flag_false": "ok:mosaic",
    "reach_conv_under_class_flag_true": TC_CONV,
    "kernel_class_flag_stored_at_module_level": "ok:mosaic",
    "reach_precision_class_constant": TC_CONV,
    # a call of one of several helpers, picked by a test the analysis cannot decide
    # (review17: flash_attention's single-step and multi-step bodies)
    "branch_callee_one_of_two_not_taken": "ok:mosaic",
    "branch_callee_one_of_two_taken": TC_CONV,
    "reach_callee_one_of_two_flag_decided": TC_CONV,
    # code after an early `return` on a test the analysis does not decide (review17: gmm's
    # `if k_rem == 0: return x`); a guard that raises is not such a branch
    "branch_return_on_shape_taken": "ok:mosaic",
    "branch_return_on_shape_not_taken": TC_CONV,
    "reach_after_raise_guard": TC_CONV,
    # a partial of a kernel that may be one of several functions (review17: paged_attention)
    "reach_partial_of_either_kernel_both_reach": TC_CONV,
    "kernel_partial_of_either_kernel_one_reaches": "ok:mosaic",
    # JAX keeps every equation of a while loop's body (a traced-bound fori_loop or
    # pl.loop, lax.while_loop); a scan's body is pruned (review17: paged_attention)
    "reach_dead_conv_in_traced_fori_body": TC_CONV,
    "dce_dead_conv_in_static_fori_body": "ok:mosaic",
    "reach_dead_conv_in_while_loop_body": TC_CONV,
    "reach_dead_conv_in_pl_when_in_traced_fori_body": TC_CONV,
    "reach_dead_conv_in_pl_loop_traced": TC_CONV,
    "dce_dead_conv_in_pl_loop_static": "ok:mosaic",
    # numpy's bool constants as a pl.when test (review15)
    "dce_pl_when_numpy_false": "ok:mosaic",
    "reach_pl_when_numpy_true": TC_CONV,
    # plain functions and @staticmethods of a plain class, read through the class (review16)
    "kernel_class_staticmethod": TC_CONV,
    "reach_class_staticmethod_helper": TC_CONV,
    "kernel_class_function_replaced": "ok:mosaic",
    # review18 (splash/flash attention backward): a pl.when test that is False on one way,
    # and a fori_loop bound the analysis cannot read (not provably a while loop)
    "branch_pl_when_maybe_false_not_taken": "ok:mosaic",
    "branch_pl_when_maybe_false_taken": TC_CONV,
    "kernel_dead_conv_in_fori_bound_from_partial": "ok:mosaic",
    "reach_dead_conv_in_fori_bound_through_name": TC_CONV,
}

# Project policy (/work/shared/docs/pallas-semantics.md, section G.2, last paragraph): for
# pl.kernel / pl.core_map with a truthy interpret (interpret=True, or built under
# force_tpu_interpret_mode()), JAX ignores interpret when lowering for TPU and does use
# Mosaic, but such code targets CPU interpretation, so pallas-ls classifies it NOT_USED
# and stays silent. The tests below assert both JAX's behaviour and that classification.
POLICY_INTERPRET_SUPPRESSED = {
    "kernel_tc_interpret_true",
    "kernel_tc_force_interpret",
    "core_map_tc_interpret_true",
}

# Project policy (precision first, the brief and pallas-semantics.md G.5): a conv in a
# Python branch whose test pallas-ls cannot decide (a shape test, a flag it cannot see) is
# traced for some inputs and not for others, so it is not provably lowered and pallas-ls
# stays silent. Here JAX takes the branch and fails; the not-taken twins show why.
# An `except` clause is never decided (whether the `try` body raises while traced is not
# analysed), even when the body always raises.
# A helper the kernel calls through a name that may be one of several functions, picked by
# such a test (`body = with_conv if flag else plain`, then `body(...)`), is the same case.
POLICY_UNDECIDED_BRANCH = {
    "branch_if_shape_taken",
    "branch_except_taken",
    "branch_callee_one_of_two_taken",
    "branch_return_on_shape_not_taken",
    "branch_pl_when_maybe_false_taken",
}

# Kernels Mosaic would lower that fail earlier for another reason (a kernel returning a
# value, a partial's argument given twice), with what JAX says: the classification is
# still TensorCore with Mosaic, and no lowering error is reported.
FAILS_BEFORE_LOWERING = {
    "kernel_returns_a_value": "should return None",
    "kernel_returns_helper_value": "should return None",
    "reach_conv_partial_bound_twice": "multiple values for argument 'window_strides'",
    "dead_after_assert_false": "not supported",
}

# Precision programs (tests/oracle/precision/): what JAX 0.10.2 makes of each conv's
# precision, i.e. the `precision` of its conv equation in the traced kernel, which is what
# the Mosaic conv rule reads; or the error JAX raises before anything is traced.
PRECISION_DIR = HERE / "precision"
PRECISIONS: dict[str, str] = {
    # no precision given: the conv takes `jax.default_matmul_precision` where it is traced
    "context_with_tensorfloat32": "(Precision.HIGH, Precision.HIGH)",
    "context_decorator_preset": "DotAlgorithmPreset.BF16_BF16_F32",
    "context_decorator_float32": "(Precision.HIGHEST, Precision.HIGHEST)",
    "context_in_kernel_none": "(Precision.HIGH, Precision.HIGH)",
    "context_inner_wins": "(Precision.HIGHEST, Precision.HIGHEST)",
    "context_explicit_precision": "(Precision.HIGHEST, Precision.HIGHEST)",
    "context_built_inside_called_outside": "None",
    "context_lax_conv": "(Precision.HIGH, Precision.HIGH)",
    "context_when_body": "(Precision.HIGH, Precision.HIGH)",
    "context_loop_body_traced_inside": "(Precision.HIGH, Precision.HIGH)",
    "context_loop_body_traced_outside": "None",
    "context_helper_decorated": "(Precision.HIGH, Precision.HIGH)",
    "context_patches": "(Precision.HIGH, Precision.HIGH)",
    "context_partial": "(Precision.HIGH, Precision.HIGH)",
    "context_generator_consumed_after": "None",
    "context_list_comprehension": "(Precision.HIGH, Precision.HIGH)",
    "context_partial_gives_highest": "(Precision.HIGHEST, Precision.HIGHEST)",
    "context_variable_tensorfloat32": "(Precision.HIGH, Precision.HIGH)",
    "context_variable_float32": "(Precision.HIGHEST, Precision.HIGHEST)",
    "context_variable_either": "(Precision.HIGHEST, Precision.HIGHEST)",
    "context_config_update_tensorfloat32": "(Precision.HIGH, Precision.HIGH)",
    "context_config_update_float32": "(Precision.HIGHEST, Precision.HIGHEST)",
    "context_config_update_then_float32": "(Precision.HIGHEST, Precision.HIGHEST)",
    "context_config_update_under_main": "None",
    "dataclass_field_high": "(Precision.HIGH, Precision.HIGH)",
    "context_pallas_call_bound_then_called": "(Precision.HIGH, Precision.HIGH)",
    "context_pallas_call_bound_called_float32": "(Precision.HIGHEST, Precision.HIGHEST)",
    "context_kernel_mesh_bound_then_called": "(Precision.HIGH, Precision.HIGH)",
    # traced where a `jax.jit(...)` of the built kernel is called (review16)
    "context_config_update_jit_called": "(Precision.HIGH, Precision.HIGH)",
    "context_jit_bound_called_in_context": "(Precision.HIGH, Precision.HIGH)",
    "context_jit_bound_in_context_called_outside": "None",
    # keywords spread from a dict (`**CONV_KW`) (review16)
    "kwargs_dict_call_high": "(Precision.HIGH, Precision.HIGH)",
    "kwargs_display_mixed": "(Precision.HIGHEST, Precision.DEFAULT)",
    "kwargs_dict_without_precision_in_context": "(Precision.HIGH, Precision.HIGH)",
    "kwargs_dict_stored_into": "(Precision.HIGHEST, Precision.HIGHEST)",
    "kwargs_display_in_call": "(Precision.HIGH, Precision.HIGH)",
    # values the config does not take: ValueError when the context is entered
    "context_bfloat16_3x": "error:ValueError",
    "context_default_upper": "error:ValueError",
    # an explicit precision, for comparison
    "explicit_string_high": "(Precision.HIGH, Precision.HIGH)",
    "explicit_pair_mixed": "(Precision.DEFAULT, Precision.HIGHEST)",
    "explicit_string_pair_equal": "(Precision.HIGHEST, Precision.HIGHEST)",
}
EXPLICIT_HEAD = """import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.lax import Precision as P

X = jax.ShapeDtypeStruct((1, 1, 8, 128), jnp.float32)
W = jax.ShapeDtypeStruct((1, 1, 3, 3), jnp.float32)
ARGS = (X, W)
OUT = {out}


def kernel(x_ref, w_ref, o_ref):
    o_ref[...] = {call}


def f(x, w):
    return pl.pallas_call(kernel, out_shape=OUT)(x, w)
"""
CONV_CALL = 'lax.conv_general_dilated(x_ref[...], w_ref[...], (1, 1), "SAME", precision={})'
PATCHES_CALL = 'lax.conv_general_dilated_patches(x_ref[...], (3, 3), (1, 1), "SAME", precision={})'
PATCHES_OUT = "jax.ShapeDtypeStruct((1, 9, 8, 128), jnp.float32)"
# Explicit precisions, one program each (the conv above with `precision=<text>`): the
# canonical precision JAX 0.10.2 gives them, or the error it raises when tracing.
EXPLICIT: dict[str, tuple[str, str]] = {
    "string_highest": ('"highest"', "(Precision.HIGHEST, Precision.HIGHEST)"),
    "string_float32": ('"float32"', "(Precision.HIGHEST, Precision.HIGHEST)"),
    "string_high": ('"high"', "(Precision.HIGH, Precision.HIGH)"),
    "string_bfloat16_3x": ('"bfloat16_3x"', "(Precision.HIGH, Precision.HIGH)"),
    "string_tensorfloat32": ('"tensorfloat32"', "(Precision.HIGH, Precision.HIGH)"),
    "string_default": ('"default"', "(Precision.DEFAULT, Precision.DEFAULT)"),
    "string_bfloat16": ('"bfloat16"', "(Precision.DEFAULT, Precision.DEFAULT)"),
    "string_fastest": ('"fastest"', "(Precision.DEFAULT, Precision.DEFAULT)"),
    "string_upper_highest": ('"HIGHEST"', "error:ValueError"),
    "string_upper_default": ('"DEFAULT"', "DotAlgorithmPreset.DEFAULT"),
    "string_preset": ('"BF16_BF16_F32"', "DotAlgorithmPreset.BF16_BF16_F32"),
    "enum_high": ("lax.Precision.HIGH", "(Precision.HIGH, Precision.HIGH)"),
    "enum_highest": ("P.HIGHEST", "(Precision.HIGHEST, Precision.HIGHEST)"),
    "enum_default": ("P.DEFAULT", "(Precision.DEFAULT, Precision.DEFAULT)"),
    "none": ("None", "None"),
    "pair_high": ("(P.HIGH, P.HIGH)", "(Precision.HIGH, Precision.HIGH)"),
    "pair_mixed": ("(P.DEFAULT, P.HIGHEST)", "(Precision.DEFAULT, Precision.HIGHEST)"),
    "pair_strings_equal": ('("high", "tensorfloat32")', "(Precision.HIGH, Precision.HIGH)"),
    "pair_strings_mixed": ('("highest", "bfloat16")', "(Precision.HIGHEST, Precision.DEFAULT)"),
    "pair_enum_and_string": ('(P.HIGH, "high")', "error:ValueError"),
    "list_of_enums": ("[P.HIGH, P.HIGHEST]", "error:TypeError"),
    "one_tuple": ("(P.HIGH,)", "error:ValueError"),
    "preset_enum": (
        "lax.DotAlgorithmPreset.BF16_BF16_F32",
        "DotAlgorithmPreset.BF16_BF16_F32",
    ),
    "preset_default": ("lax.DotAlgorithmPreset.DEFAULT", "DotAlgorithmPreset.DEFAULT"),
    "algorithm_mixed": (
        "lax.DotAlgorithm(jnp.bfloat16, jnp.float32, jnp.float32)",
        "DotAlgorithm(lhs_precision_type=<class 'jax.numpy.bfloat16'>, "
        "rhs_precision_type=<class 'jax.numpy.float32'>, "
        "accumulation_type=<class 'jax.numpy.float32'>, lhs_component_count=1, "
        "rhs_component_count=1, num_primitive_operations=1, "
        "allow_imprecise_accumulation=False)",
    ),
    "algorithm_equal": (
        "lax.DotAlgorithm(jnp.float32, jnp.float32, jnp.float32)",
        "DotAlgorithm(lhs_precision_type=<class 'jax.numpy.float32'>, "
        "rhs_precision_type=<class 'jax.numpy.float32'>, "
        "accumulation_type=<class 'jax.numpy.float32'>, lhs_component_count=1, "
        "rhs_component_count=1, num_primitive_operations=1, "
        "allow_imprecise_accumulation=False)",
    ),
    # spelled through tuple operations, an enum lookup by name, getattr (review16)
    "pair_times_two": ("(P.HIGH,) * 2", "(Precision.HIGH, Precision.HIGH)"),
    "pair_times_two_highest": ("(P.HIGHEST,) * 2", "(Precision.HIGHEST, Precision.HIGHEST)"),
    "pair_concatenated": ("(P.HIGHEST,) + (P.DEFAULT,)", "(Precision.HIGHEST, Precision.DEFAULT)"),
    "pair_reversed": ("(P.DEFAULT, P.HIGHEST)[::-1]", "(Precision.HIGHEST, Precision.DEFAULT)"),
    "pair_sliced_to_one": ("(P.HIGH, P.DEFAULT)[:1]", "error:ValueError"),
    "tuple_of_list": ("tuple([P.HIGHEST, P.DEFAULT])", "(Precision.HIGHEST, Precision.DEFAULT)"),
    "list_times_two": ("[P.HIGH] * 2", "error:TypeError"),
    "enum_by_name": ('P["HIGH"]', "(Precision.HIGH, Precision.HIGH)"),
    "enum_getattr": ('getattr(P, "HIGH")', "(Precision.HIGH, Precision.HIGH)"),
    "enum_getattr_highest": ('getattr(P, "HIGHEST")', "(Precision.HIGHEST, Precision.HIGHEST)"),
    "patches_highest": ("P.HIGHEST", "(Precision.HIGHEST, Precision.DEFAULT)"),
    "patches_default": ("P.DEFAULT", "(Precision.DEFAULT, Precision.DEFAULT)"),
    "patches_string": ('"highest"', "error:ValueError"),
}


def _explicit_source(name: str) -> str:
    text, _ = EXPLICIT[name]
    if name.startswith("patches_"):
        return EXPLICIT_HEAD.format(out=PATCHES_OUT, call=PATCHES_CALL.format(text))
    return EXPLICIT_HEAD.format(out="X", call=CONV_CALL.format(text))


for _name, (_, _expected) in EXPLICIT.items():
    PRECISIONS[f"explicit:{_name}"] = _expected


def mosaic_verdict(precision: dict[str, Any]) -> str | None:
    """The error the Mosaic conv rule raises for a canonical precision (`repr` and, for a
    tuple, `pair`: its first two items), as the record's source (`_parse_precision_attr`)
    decides it: a tuple whose two items differ is per-operand (PAL002); then anything but
    None, DEFAULT and HIGHEST is unsupported (PAL003). No released JAX has the rule, so
    this part comes from the record; the canonical precision it is applied to comes from
    JAX."""
    pair = precision["pair"]
    if pair is not None and pair[0] != pair[1]:
        return "PAL002"
    first = pair[0] if pair is not None else precision["repr"]
    return None if first in {"None", "Precision.DEFAULT", "Precision.HIGHEST"} else "PAL003"


def _precision_source(name: str) -> str:
    if name.startswith("explicit:"):
        return _explicit_source(name.split(":", 1)[1])
    return (PRECISION_DIR / f"{name}.py").read_text(encoding="utf-8")


def _precision_fixes(name: str) -> list[str]:
    """The program with each fix of its conv findings applied (one program per fix)."""
    source = _precision_source(name)
    out = []
    for finding in analyse(source, None, LATEST):
        if finding.code in {"PAL002", "PAL003"}:
            out.extend(apply_edits(source, list(fix.edits)) for fix in finding.fixes)
    return out


# Disagreements where JAX shows the engine wrong (reported to the engine's owner).
ENGINE_BUGS: dict[str, str] = {}

OPTLEVEL_HEAD = "from jax.experimental.pallas import tpu as pltpu\n\n"
# PAL004 sources: each call with opt_level sits on one line, so JAX's traceback line is the
# line pallas-ls must flag. Sources JAX runs without error must get no PAL004.
PAL004_SOURCES: dict[str, str] = {
    "constructor": OPTLEVEL_HEAD + "params = pltpu.CompilerParams(opt_level=2)\n",
    "constructor_string_and_others": OPTLEVEL_HEAD
    + 'params = pltpu.CompilerParams(dimension_semantics=("parallel",), opt_level="O3")\n',
    "constructor_none": OPTLEVEL_HEAD + "params = pltpu.CompilerParams(opt_level=None)\n",
    "constructor_spread_dict": OPTLEVEL_HEAD
    + "params = pltpu.CompilerParams(**dict(opt_level=2), vmem_limit_bytes=1 << 20)\n",
    "constructor_spread_module_dict": OPTLEVEL_HEAD
    + "KW = dict(opt_level=1)\nparams = pltpu.CompilerParams(**KW)\n",
    "constructor_spread_without_opt_level": OPTLEVEL_HEAD
    + "params = pltpu.CompilerParams(**dict(vmem_limit_bytes=1 << 20))\n",
    "replace_method": OPTLEVEL_HEAD
    + "base = pltpu.CompilerParams()\nparams = base.replace(opt_level=1)\n",
    "replace_chained": OPTLEVEL_HEAD
    + "params = pltpu.CompilerParams(vmem_limit_bytes=1 << 20).replace(opt_level=0)\n",
    "dataclasses_replace": "import dataclasses\n\n"
    + OPTLEVEL_HEAD
    + "params = dataclasses.replace(pltpu.CompilerParams(), opt_level=2)\n",
    "replace_imported": "from dataclasses import replace\n\n"
    + OPTLEVEL_HEAD
    + "params = replace(pltpu.CompilerParams(), opt_level=2)\n",
    "from_import": "from jax.experimental.pallas.tpu import CompilerParams\n\n"
    "params = CompilerParams(opt_level=2)\n",
    "module_import_alias": "import jax.experimental.pallas.tpu as tpu\n\n"
    "params = tpu.CompilerParams(opt_level=2)\n",
    "pltpu_core": OPTLEVEL_HEAD + "params = pltpu.core.CompilerParams(opt_level=2)\n",
    "in_function": OPTLEVEL_HEAD + "def make():\n"
    "    return pltpu.CompilerParams(has_side_effects=True, opt_level=2)\n\n\nmake()\n",
    "in_pallas_call": "import jax\nimport jax.numpy as jnp\n"
    "from jax.experimental import pallas as pl\n" + OPTLEVEL_HEAD + "def kernel(x_ref, o_ref):\n"
    "    o_ref[...] = x_ref[...]\n\n\n"
    "X = jax.ShapeDtypeStruct((8, 128), jnp.float32)\n"
    "f = pl.pallas_call(kernel, out_shape=X, compiler_params=pltpu.CompilerParams(opt_level=2))\n",
    "optlevel_value": "import jax.experimental.mosaic\n\n"
    + OPTLEVEL_HEAD
    + "params = pltpu.CompilerParams(opt_level=jax.experimental.mosaic.OptLevel.O2)\n",
    # negatives: JAX runs these fine
    "no_opt_level": OPTLEVEL_HEAD
    + "params = pltpu.CompilerParams(vmem_limit_bytes=1 << 20).replace(has_side_effects=True)\n",
    "user_class": "class CompilerParams:\n    def __init__(self, opt_level=None):\n"
    "        self.opt_level = opt_level\n\n\nparams = CompilerParams(opt_level=2)\n",
    "user_dataclass_replace": "import dataclasses\n\n\n@dataclasses.dataclass\nclass Opts:\n"
    "    opt_level: int = 0\n\n\nopts = dataclasses.replace(Opts(), opt_level=2)\n",
}
PAL004_ENGINE_BUGS: dict[str, str] = {}
OPTLEVEL_ATTRIBUTE_SOURCE = (
    "import jax.experimental.mosaic\n\nlevel = jax.experimental.mosaic.OptLevel.O2\n"
)


def _pal004(source: str, config: Config = JAX_0_10_2) -> list[Finding]:
    return [f for f in analyse(source, None, config) if f.code == "PAL004"]


def _fixed(source: str) -> str | None:
    """The source with every PAL004 finding's preferred fix applied (None: nothing to fix)."""
    edits = []
    for finding in _pal004(source):
        fix = finding.preferred_fix
        if fix is None:
            return None
        edits.extend(fix.edits)
    return apply_edits(source, edits) if edits else None


@pytest.fixture(scope="module")
def oracle() -> dict[str, Any]:
    """Everything JAX decides, from one .venv-jax subprocess (jax is imported once)."""
    sources = dict(PAL004_SOURCES)
    sources["optlevel_attribute"] = OPTLEVEL_ATTRIBUTE_SOURCE
    for name, source in PAL004_SOURCES.items():
        fixed = _fixed(source)
        if fixed is not None:
            sources[f"fixed:{name}"] = fixed
    precision = {name: _precision_source(name) for name in PRECISIONS}
    for name in PRECISIONS:
        for i, fixed in enumerate(_precision_fixes(name)):
            precision[f"fixed:{name}:{i}"] = fixed
    request = {
        "snippets": {p.stem: str(p) for p in sorted(SNIPPET_DIR.glob("*.py"))},
        "sources": sources,
        "precision": precision,
    }
    proc = subprocess.run(
        [str(JAX_PYTHON), str(DRIVER)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=DRIVER_TIMEOUT_SECONDS,
        cwd=str(REPO),
        check=False,
    )
    assert proc.returncode == 0, f"driver failed:\n{proc.stderr[-4000:]}"
    result: dict[str, Any] = json.loads(proc.stdout)
    result["fixed_sources"] = {k[len("fixed:") :]: v for k, v in sources.items() if ":" in k}
    return result


def category(outcome: dict[str, Any]) -> str:
    if outcome["status"] == "ok":
        return "ok:mosaic" if outcome["mosaic_custom_call"] else "ok:interpreted"
    if outcome["unimplemented"]:
        core, primitive = outcome["unimplemented"]
        return f"mosaic:{core}:{primitive}"
    if outcome["mosaic_frames"]:
        return f"mosaic-error:{outcome['type']}"
    return f"error:{outcome['type']}"


def _site(name: str) -> tuple[str, KernelSite]:
    path = SNIPPET_DIR / f"{name}.py"
    source = path.read_text(encoding="utf-8")
    module = parse_module(source, str(path))
    assert module is not None
    sites = KernelFinder(module, Evaluator()).sites()
    # A kernel built by a wrapper function: the site seen with the call's arguments.
    sites = [s for s in sites if s.via is not None] or sites
    assert len(sites) == 1, f"{name}: expected one kernel site, found {len(sites)}"
    return source, sites[0]


def _describe(name: str, outcome: dict[str, Any], site: KernelSite | None = None) -> str:
    text = f"snippet {name}: JAX {category(outcome)}"
    if outcome.get("message"):
        text += f" ({outcome['type']}: {outcome['message'][:160]})"
    if site is not None:
        text += f"; pallas-ls kind={site.kind.name} mosaic={site.mosaic.name}"
    return text


def test_oracle_is_jax_0_10_2(oracle: dict[str, Any]) -> None:
    assert oracle["jax_version"] == ORACLE_JAX


def test_every_snippet_has_an_expectation() -> None:
    on_disk = {p.stem for p in SNIPPET_DIR.glob("*.py")}
    assert on_disk == set(SNIPPETS)
    assert set(ENGINE_BUGS) | POLICY_INTERPRET_SUPPRESSED <= on_disk


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippet_does_what_it_says_on_jax(oracle: dict[str, Any], name: str) -> None:
    outcome = oracle["snippets"][name]
    assert category(outcome) == SNIPPETS[name], _describe(name, outcome)


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_kernel_classification_matches_jax(oracle: dict[str, Any], name: str) -> None:
    """JAX's outcome decides the kind (from the core type Mosaic names) and whether Mosaic ran;
    pallas-ls's KernelFinder must agree."""
    outcome = oracle["snippets"][name]
    what = category(outcome)
    _, site = _site(name)
    why = _describe(name, outcome, site)
    if what.startswith("mosaic:"):
        core = what.split(":")[1]
        kind = KernelKind.TENSORCORE if core == "tc" else KernelKind.SPARSECORE
        assert core in {"tc", "sc_vector_subcore", "sc_scalar_subcore"}, why
        assert site.kind is kind, why
        if name in POLICY_INTERPRET_SUPPRESSED:
            # JAX lowered with Mosaic although interpret is truthy; pallas-ls suppresses by
            # policy (pallas-semantics.md G.2), see POLICY_INTERPRET_SUPPRESSED.
            assert site.entry.entry in {"kernel", "core_map"}, why
            assert site.mosaic is Mosaic.NOT_USED, why
        else:
            assert site.mosaic in MOSAIC_USED, why
    elif what == "ok:mosaic":
        assert site.mosaic in MOSAIC_USED, why
        if site.entry.entry == "pallas_call":
            assert site.kind is KernelKind.TENSORCORE, why
    elif name in FAILS_BEFORE_LOWERING:
        expected = FAILS_BEFORE_LOWERING[name]
        assert what.startswith("error:") and expected in outcome["message"], why
        assert site.kind is KernelKind.TENSORCORE and site.mosaic in MOSAIC_USED, why
    else:
        assert what == "ok:interpreted" or what.startswith("error:"), why
        assert site.mosaic is Mosaic.NOT_USED, why


def _conv_params() -> list[Any]:
    out = []
    for name in sorted(SNIPPETS):
        if name in ENGINE_BUGS:
            mark = pytest.mark.xfail(strict=True, reason=ENGINE_BUGS[name])
            out.append(pytest.param(name, marks=mark))
        else:
            out.append(name)
    return out


@pytest.mark.parametrize("name", _conv_params())
def test_conv_reached_and_live_matches_pal002(oracle: dict[str, Any], name: str) -> None:
    """Every snippet's conv has a per-operand precision. With a JAX that has the conv rule
    (Config(): latest), pallas-ls reports PAL002 exactly when the conv is traced, live and
    lowered by Mosaic in a TensorCore kernel, which is what JAX 0.10.2 shows by failing on
    that conv for `tc`."""
    outcome = oracle["snippets"][name]
    reached_in_tc = outcome.get("unimplemented") == ["tc", CONV]
    source, site = _site(name)
    found = [f for f in analyse(source, str(SNIPPET_DIR / f"{name}.py"), LATEST)]
    pal002 = [f for f in found if f.code == "PAL002"]
    why = _describe(name, outcome, site) + f"; pallas-ls PAL002 findings: {len(pal002)}"
    if name in POLICY_INTERPRET_SUPPRESSED or name in POLICY_UNDECIDED_BRANCH:
        assert reached_in_tc and not pal002, why
        return
    assert len(pal002) == (1 if reached_in_tc else 0), why
    for finding in pal002:
        line = source.splitlines()[finding.span.start_line]
        assert "precision" in line, f"{why}; PAL002 not on the precision argument: {line!r}"


# -- PAL002/PAL003: the canonical precision JAX gives a conv ---------------------------------


def _jax_precision(outcome: dict[str, Any]) -> dict[str, Any] | None:
    """The canonical precision of the program's one conv; None when JAX fails first."""
    if outcome["trace"]["status"] != "ok":
        return None
    precisions = outcome["precisions"]
    assert len(precisions) == 1, f"one conv expected, JAX traced {precisions}"
    return dict(precisions[0])


def _shown(outcome: dict[str, Any]) -> str:
    precision = _jax_precision(outcome)
    if precision is None:
        return f"error:{outcome['trace']['type']}"
    return str(precision["repr"])


def test_every_precision_program_has_an_expectation() -> None:
    on_disk = {p.stem for p in PRECISION_DIR.glob("*.py")}
    assert on_disk == {n for n in PRECISIONS if not n.startswith("explicit:")}


@pytest.mark.parametrize("name", sorted(PRECISIONS))
def test_precision_program_does_what_it_says_on_jax(oracle: dict[str, Any], name: str) -> None:
    """JAX gives the conv the precision the table says, and Mosaic lowers the kernel up to
    that conv in a TensorCore kernel (where the conv rule would read the precision)."""
    outcome = oracle["precision"][name]
    assert _shown(outcome) == PRECISIONS[name], outcome
    if outcome["trace"]["status"] == "ok":
        assert outcome["export"]["unimplemented"] == ["tc", CONV], outcome["export"]


@pytest.mark.parametrize("name", sorted(PRECISIONS))
def test_conv_precision_finding_matches_jax(oracle: dict[str, Any], name: str) -> None:
    """pallas-ls (for a JAX with the conv rule) reports exactly the error the rule raises for
    the precision JAX gives the conv, on the conv's lines; nothing where JAX fails earlier."""
    outcome = oracle["precision"][name]
    jax_precision = _jax_precision(outcome)
    expected = None if jax_precision is None else mosaic_verdict(jax_precision)
    source = _precision_source(name)
    found = [f for f in analyse(source, None, LATEST) if f.code in {"PAL002", "PAL003"}]
    why = f"{name}: JAX {_shown(outcome)}; pallas-ls {[f.message for f in found]}"
    assert [f.code for f in found] == ([expected] if expected else []), why
    tree = ast.parse(source)
    convs = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and (getattr(n.func, "attr", None) or getattr(n.func, "id", "")).startswith("conv")
    ]
    for finding in found:
        assert any(
            c.lineno - 1 <= finding.span.start_line <= (c.end_lineno or c.lineno) - 1 for c in convs
        ), why


@pytest.mark.parametrize("name", sorted(PRECISIONS))
def test_conv_precision_fixes_give_a_precision_mosaic_lowers(
    oracle: dict[str, Any], name: str
) -> None:
    """Every fix offered, applied on its own: JAX then gives the conv a precision the rule
    accepts, and pallas-ls finds nothing more."""
    fixed_names = [k for k in oracle["precision"] if k.startswith(f"fixed:{name}:")]
    jax_precision = _jax_precision(oracle["precision"][name])
    if jax_precision is None or mosaic_verdict(jax_precision) is None:
        assert not fixed_names, f"{name}: fixes offered for a conv Mosaic accepts"
        return
    assert fixed_names, f"{name}: no fix offered"
    for fixed_name in fixed_names:
        fixed_precision = _jax_precision(oracle["precision"][fixed_name])
        assert fixed_precision is not None, (fixed_name, oracle["precision"][fixed_name])
        assert mosaic_verdict(fixed_precision) is None, (fixed_name, fixed_precision)
        index = int(fixed_name.rsplit(":", 1)[1])
        fixed = _precision_fixes(name)[index]
        assert not [f for f in analyse(fixed, None, LATEST) if f.code in {"PAL002", "PAL003"}]


# -- PAL004: opt_level on a JAX that predates it ------------------------------------------


def _pal004_params(bugs: dict[str, str]) -> list[Any]:
    out = []
    for name in PAL004_SOURCES:
        if name in bugs:
            mark = pytest.mark.xfail(strict=True, reason=bugs[name])
            out.append(pytest.param(name, marks=mark))
        else:
            out.append(name)
    return out


@pytest.mark.parametrize("name", _pal004_params(PAL004_ENGINE_BUGS))
def test_pal004_predicts_what_jax_raises(oracle: dict[str, Any], name: str) -> None:
    source = PAL004_SOURCES[name]
    outcome = oracle["sources"][name]
    findings = analyse(source, None, JAX_0_10_2)
    pal004 = [f for f in findings if f.code == "PAL004"]
    assert not [f for f in findings if f.code == "PAL001"], "PAL001 needs jax >= 0.11.0"
    if outcome["status"] == "ok":
        assert not pal004, f"{name}: JAX runs it, but pallas-ls says {pal004[0].message}"
        return
    assert len(pal004) == 1, f"{name}: JAX raised {outcome['type']}: {outcome['message']}"
    finding = pal004[0]
    jax_text = outcome["message"]
    assert jax_text in finding.message, (
        f"{name}: JAX raised {outcome['type']}: {jax_text!r}; PAL004 says {finding.message!r}"
    )
    assert finding.span.start_line + 1 == outcome["line"], name
    lines = source.splitlines()
    flagged = lines[finding.span.start_line][finding.span.start_col :]
    # at the argument, or at the `**` argument of the call that gives it
    assert flagged.startswith(("opt_level=", "**")), flagged


def test_pal004_raises_are_the_typeerror(oracle: dict[str, Any]) -> None:
    """JAX 0.10.2 raises exactly the TypeError PAL004 quotes, for the constructor, `.replace`
    and `dataclasses.replace` alike."""
    for name in ("constructor", "constructor_none", "replace_method", "dataclasses_replace"):
        outcome = oracle["sources"][name]
        assert outcome["type"] == "TypeError", (name, outcome)
        assert outcome["message"] == (
            "CompilerParams.__init__() got an unexpected keyword argument 'opt_level'"
        ), name


@pytest.mark.parametrize("name", _pal004_params({}))
def test_pal004_fix_runs_on_jax(oracle: dict[str, Any], name: str) -> None:
    """The preferred fix (remove the argument) gives code that JAX 0.10.2 runs, and that
    pallas-ls no longer flags."""
    if oracle["sources"][name]["status"] == "ok":
        assert name not in oracle["fixed_sources"], f"{name}: a fix for code JAX runs"
        return
    fixed = oracle["fixed_sources"].get(name)
    assert fixed is not None, f"{name}: PAL004 offers no fix"
    ast.parse(fixed)
    outcome = oracle["sources"][f"fixed:{name}"]
    assert outcome["status"] == "ok", f"{name}: fixed code still raises {outcome}\n{fixed}"
    assert not _pal004(fixed)


def test_optlevel_enum_missing_on_jax_0_10_2(oracle: dict[str, Any]) -> None:
    outcome = oracle["sources"]["optlevel_attribute"]
    assert outcome["type"] == "AttributeError", outcome
    assert "has no attribute 'OptLevel'" in outcome["message"], outcome

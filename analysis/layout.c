/* SPDX-License-Identifier: MIT */
/*
 * The layout of the result structs, for bindings that read them without a compiler
 * (python/orrery reads them with ctypes and checks its copies against these at import).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

#define SIZE(T)                            \
	{                                  \
#T, NULL, sizeof(struct T) \
	}
#define FIELD(T, f)                           \
	{                                     \
#T, #f, offsetof(struct T, f) \
	}

static const struct {
	const char *type, *field;
	size_t value;
} layout[] = {
	SIZE(orr_diag),
	SIZE(orr_value),
	FIELD(orr_value, why),
	SIZE(orr_named_value),
	SIZE(orr_rank_fit),
	FIELD(orr_rank_fit, device),
	FIELD(orr_rank_fit, st),
	FIELD(orr_diag, msg),
	SIZE(orr_select),
	SIZE(orr_breakdown),
	SIZE(orr_replay_step),
	SIZE(orr_unexplained),
	SIZE(orr_path_seg),
	FIELD(orr_path_seg, start_ns),
	SIZE(orr_sum_idle),
	SIZE(orr_sum_step),
	FIELD(orr_sum_step, b),
	FIELD(orr_sum_step, idle),
	SIZE(orr_sum_item),
	SIZE(orr_sum_coll),
	FIELD(orr_sum_coll, ns),
	SIZE(orr_summary),
	FIELD(orr_summary, steps),
	FIELD(orr_summary, nsteps),
	FIELD(orr_summary, kernels),
	FIELD(orr_summary, nkernels),
	FIELD(orr_summary, kernel_ns),
	FIELD(orr_summary, colls),
	FIELD(orr_summary, straggler),
	FIELD(orr_summary, others_wait_ns),
	FIELD(orr_summary, delays),
	SIZE(orr_sum_delays),
	SIZE(orr_replay_row),
	FIELD(orr_replay_row, measured),
	FIELD(orr_replay_row, unexplained),
	FIELD(orr_replay_row, trust_low),
	SIZE(orr_replay_report),
	FIELD(orr_replay_report, rows),
	FIELD(orr_replay_report, job),
	FIELD(orr_replay_report, max_unexplained_share),
	SIZE(orr_scales),
	SIZE(orr_scenarios),
	SIZE(orr_scenario_run),
	FIELD(orr_scenario_run, rep),
	FIELD(orr_scenario_run, matches),
	SIZE(orr_scenario_report),
	FIELD(orr_scenario_report, base),
	FIELD(orr_scenario_report, runs),
	FIELD(orr_scenario_report, nruns),
	SIZE(orr_rule_match),
	SIZE(orr_diff_profile),
	FIELD(orr_diff_profile, predicted),
	FIELD(orr_diff_profile, kernels),
	FIELD(orr_diff_profile, ops),
	FIELD(orr_diff_profile, ops_shaped),
	SIZE(orr_diff_row),
	SIZE(orr_diff_table),
	SIZE(orr_estimate_options),
	FIELD(orr_estimate_options, rank),
	FIELD(orr_estimate_options, global_batch),
	FIELD(orr_estimate_options, gpus_per_node),
	FIELD(orr_estimate_options, size),
	FIELD(orr_estimate_options, recompute),
	FIELD(orr_estimate_options, sp),
	FIELD(orr_estimate_options, distopt),
	FIELD(orr_estimate_options, fsdp),
	FIELD(orr_estimate_options, overlap_grad),
	FIELD(orr_estimate_options, forward_only),
	FIELD(orr_estimate_options, precision),
	FIELD(orr_estimate_options, attention),
	FIELD(orr_estimate_options, swiglu),
	FIELD(orr_estimate_options, untie),
	FIELD(orr_estimate_options, norm),
	FIELD(orr_estimate_options, positions),
	FIELD(orr_estimate_options, launch_us),
	FIELD(orr_estimate_options, gemm_tiles),
	FIELD(orr_estimate_options, timeline),
	FIELD(orr_estimate_options, costs),
	FIELD(orr_estimate_options, trace),
	FIELD(orr_estimate_options, gpu),
	SIZE(orr_train_config),
	FIELD(orr_train_config, first_stage_layers),
	FIELD(orr_train_config, gated_mlp),
	FIELD(orr_train_config, rope),
	FIELD(orr_train_config, recompute),
	FIELD(orr_train_config, precision),
	SIZE(orr_memory),
	FIELD(orr_memory, fits),
	FIELD(orr_memory, why),
	FIELD(orr_memory, stage),
	SIZE(orr_estimate_step),
	SIZE(orr_estimate),
	FIELD(orr_estimate, how),
	FIELD(orr_estimate, trace),
	FIELD(orr_estimate, costs),
	FIELD(orr_estimate, rank),
	FIELD(orr_estimate, gpu),
	FIELD(orr_estimate, forward_only),
	FIELD(orr_estimate, steps),
	FIELD(orr_estimate, ranks),
	FIELD(orr_estimate, from),
	FIELD(orr_estimate, to),
	FIELD(orr_estimate, measured_ns),
	FIELD(orr_estimate, replayed),
	FIELD(orr_estimate, estimated),
	FIELD(orr_estimate, traced),
	FIELD(orr_estimate, profiler_host_ns),
	FIELD(orr_estimate, memory),
	FIELD(orr_estimate, memory_err),
	FIELD(orr_estimate, reserve_bytes),
	FIELD(orr_estimate, measured_peak_bytes),
	FIELD(orr_estimate, tokens_per_s_per_gpu),
	FIELD(orr_estimate, mfu),
	FIELD(orr_estimate, hfu),
	FIELD(orr_estimate, cpu_op_ns),
	FIELD(orr_estimate, cpu_op_from),
	FIELD(orr_estimate, cpu_op_profiler_ns),
	SIZE(orr_estimate_base),
	FIELD(orr_estimate_base, e),
	SIZE(orr_whatif_options),
	FIELD(orr_whatif_options, list),
	FIELD(orr_whatif_options, recompute),
	FIELD(orr_whatif_options, sp),
	FIELD(orr_whatif_options, distopt),
	FIELD(orr_whatif_options, allow_cross_node_tp),
	SIZE(orr_whatif_job),
	FIELD(orr_whatif_job, base),
	FIELD(orr_whatif_job, replayed_ns),
	FIELD(orr_whatif_job, recorded),
	FIELD(orr_whatif_job, x),
	FIELD(orr_whatif_job, plan),
	FIELD(orr_whatif_job, considered),
	SIZE(orr_whatif_result),
	FIELD(orr_whatif_result, index),
	FIELD(orr_whatif_result, c),
	FIELD(orr_whatif_result, why),
	FIELD(orr_whatif_result, refused),
	FIELD(orr_whatif_result, memory),
	FIELD(orr_whatif_result, gpus),
	FIELD(orr_whatif_result, step_ns),
	FIELD(orr_whatif_result, tokens_per_s_per_gpu),
	FIELD(orr_whatif_result, mfu),
	FIELD(orr_whatif_result, hfu),
	FIELD(orr_whatif_result, limit),
	SIZE(orr_whatif_tally),
	SIZE(orr_gpu_spec),
	FIELD(orr_gpu_spec, id),
};

size_t orr_analysis_layout(const char *type, const char *field)
{
	for (size_t i = 0; i < sizeof(layout) / sizeof(layout[0]); i++)
		if (strcmp(layout[i].type, type) == 0 &&
		    (field ? layout[i].field && strcmp(layout[i].field, field) == 0
			   : !layout[i].field))
			return layout[i].value;
	return SIZE_MAX;
}

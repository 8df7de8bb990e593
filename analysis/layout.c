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

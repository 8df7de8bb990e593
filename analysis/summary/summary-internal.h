/* SPDX-License-Identifier: MIT */
/*
 * analysis/summary/summary-internal.h — the parts of orr_summary_gather() in their own
 * files: GPU idle explained (summary-idle.c), memory and counters (summary-memory.c).
 */
#ifndef ORRERY_ANALYSIS_SUMMARY_INTERNAL_H
#define ORRERY_ANALYSIS_SUMMARY_INTERNAL_H

#include <stddef.h>

#include "orrery/analysis.h"

/*
 * GPU idle explained for graph rank k in its windows w[0..nw) (steps[0..nw) are its
 * rank-steps), its streams' idle and queues, launch delays and short kernels; then
 * orr__summary_idle_finish(), the delays' percentiles once every rank is in.
 */
void orr__summary_idle(struct orr_summary *s, size_t k, const struct orr_step *w, size_t nw,
		       struct orr_sum_step *steps);
void orr__summary_idle_finish(struct orr_summary *s);
/* Memory and counters, gathered for the ranks sel selects that have them. */
void orr__summary_memory(struct orr_summary *s, const struct orr_select *sel);

#endif

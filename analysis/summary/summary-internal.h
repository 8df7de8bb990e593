/* SPDX-License-Identifier: MIT */
/*
 * analysis/summary/summary-internal.h — the parts of orr_summary_gather() in their own
 * files: GPU idle explained (summary-idle.c), memory and counters (summary-memory.c).
 */
#ifndef ORRERY_ANALYSIS_SUMMARY_INTERNAL_H
#define ORRERY_ANALYSIS_SUMMARY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "orrery/analysis.h"

/*
 * The kernel classes of the names seen so far (summary-idle.c), each name's searched
 * once: orr_kernel_class_of() tries every pattern on the name, which for every task was
 * most of orrery summary's time.  Zero-initialised; free(c) releases it.
 */
struct orr__class_memo {
	uint8_t *c; /* per name id: its class + 1; 0 not yet known */
	size_t n;
};

/* orr_kernel_class_of() of an event's kind and name (an id of t's), through m (NULL: none). */
size_t orr__summary_class_of(struct orr__class_memo *m, const struct orr_trace *t,
			     enum orr_event_kind kind, uint32_t name);

/*
 * GPU idle explained for graph rank k in its windows w[0..nw) (steps[0..nw) are its
 * rank-steps), its streams' idle and queues, launch delays and short kernels (their
 * classes through m); then orr__summary_idle_finish(), the delays' percentiles once
 * every rank is in.
 */
void orr__summary_idle(struct orr_summary *s, size_t k, const struct orr_step *w, size_t nw,
		       struct orr_sum_step *steps, struct orr__class_memo *m);
void orr__summary_idle_finish(struct orr_summary *s);
/* Memory and counters, gathered for the ranks sel selects that have them. */
void orr__summary_memory(struct orr_summary *s, const struct orr_select *sel);

#endif

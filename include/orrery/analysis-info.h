/* SPDX-License-Identifier: MIT */
/*
 * orrery/analysis-info.h — what each rank of a trace holds (orrery info;
 * analysis/rank-stats.c).
 * Part of orrery/analysis.h, which includes it and whose rules on ownership, errors and
 * threads hold here.
 */
#ifndef ORRERY_ANALYSIS_INFO_H
#define ORRERY_ANALYSIS_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/analysis-select.h"
#include "orrery/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-rank numbers that take a pass over the events; per place: indexed as r->places. */
struct orr_rank_stats {
	size_t by_kind[ORR_EVENT_KIND_COUNT];
	size_t by_call[ORR_CALL_COUNT];
	size_t *place_events;
	int64_t *place_busy_ns;
	size_t launches_without_task, tasks_without_launch, flow_linked;
};

struct orr_coll_row {
	uint32_t type;
	size_t count;
	int64_t dur_ns, bytes; /* bytes: of the kernels whose collective gives its size */
	size_t unsized;        /* kernels whose collective gives no size */
};

/* Counts the events of r into st; release it with orr_rank_stats_release(). */
void orr_rank_stats_count(const struct orr_rank *r, struct orr_rank_stats *st);
void orr_rank_stats_release(struct orr_rank_stats *st);
/* NCCL kernels by collective type, in order of first appearance; *ret is to be freed. */
size_t orr_rank_collective_rows(const struct orr_rank *r, struct orr_coll_row **ret);
/* A rank read from a native file knows its process and how the capture went. */
bool orr_rank_has_capture(const struct orr_rank *r);
/* Keeps the steps of s[0..n) that sel selects, in order; how many. */
size_t orr_select_steps(const struct orr_select *sel, struct orr_step *s, size_t n);

#ifdef __cplusplus
}
#endif

#endif

/* SPDX-License-Identifier: MIT */
/*
 * cli/info.h — what the files of `orrery info` share: cmd-info.c parses the options,
 * imports the trace and counts what each rank holds, info-text.c prints it as text and
 * info-json.c as the JSON of docs/orrery-info.md.
 */
#ifndef ORRERY_CLI_INFO_H
#define ORRERY_CLI_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/graph.h"
#include "replay-common.h"

/* Per-rank numbers that take a pass over the events. */
struct rank_stats {
	size_t by_kind[ORR_EVENT_KIND_COUNT];
	size_t by_call[ORR_CALL_COUNT];
	size_t *place_events;
	int64_t *place_busy_ns;
	size_t launches_without_task, tasks_without_launch, flow_linked;
};

struct coll_row {
	uint32_t type;
	size_t count;
	int64_t dur_ns, bytes; /* bytes: of the kernels whose collective gives its size */
	size_t unsized;        /* kernels whose collective gives no size */
};

/* Counts the events of R into ST; release it with info_rank_stats_release(). */
void info_rank_stats(const struct orr_rank *r, struct rank_stats *st);
void info_rank_stats_release(struct rank_stats *st);
/* NCCL kernels by collective type, in order of first appearance; *ret is to be freed. */
size_t info_collective_rows(const struct orr_rank *r, struct coll_row **ret);
/* A rank read from a native file knows its process and how the capture went. */
bool info_has_capture(const struct orr_rank *r);
/* "from strings", "from hex strings", "ignored": how args values were taken. */
const char *info_coercion_name(uint32_t how);

/* Keeps the steps of s[0..n) that sel selects, in order; how many. */
size_t info_select_steps(const struct orr_select *sel, struct orr_step *s, size_t n);

/* What the trace at PATH holds (the ranks and steps sel selects), and its graph GS. */
void info_print_text(const char *path, const struct orr_trace *t, const struct orr_graph_stats *gs,
		     const struct orr_select *sel);
void info_print_json(const char *path, const struct orr_trace *t, const struct orr_graph_stats *gs,
		     const struct orr_select *sel);

#endif

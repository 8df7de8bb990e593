/* SPDX-License-Identifier: MIT */
/*
 * What a what-if cannot move on its critical path (orrery/replay.h): the idle time a
 * GPU task's kept delay holds, the idle time nothing decided (a thread's start), and
 * blocking calls kept at their measured duration because the graph does not know what
 * they waited for.  The trust signal measures the same on the measured timeline; this
 * is the scenario's own.
 */
#include "internal.h"
#include "banned.h"

/* A blocking call whose awaited work the graph did not identify (graph/explain.c). */
static bool wait_unknown(const struct orr_graph *g, uint32_t t)
{
	const struct orr_task *task = &orr_graph_tasks(g)[t];

	return task->kind == ORR_TASK_CPU && (task->flags & ORR_TASK_F_BLOCKING) &&
	       (task->aux == ORR_NONE || orr_graph_waits(g)[task->aux].kind == ORR_WAIT_RECORD);
}

void orr_replay_path_fixed(const struct orr_replay *r, const struct orr_path_seg *segs, size_t n,
			   struct orr_path_fixed *ret)
{
	const struct orr_graph *g = r->g;

	*ret = (struct orr_path_fixed){ 0 };
	for (size_t i = 0; i < n; i++) {
		const struct orr_path_seg *sg = &segs[i];
		int64_t len = sg->end_ns - sg->start_ns;

		if (sg->cat != ORR_PATH_IDLE) {
			/* The call itself, not the framework time before it. */
			if (sg->task != ORR_NONE && sg->start_ns >= r->ts[sg->task].start &&
			    wait_unknown(g, sg->task))
				ret->waits_ns += len;
			continue;
		}
		if (!sg->via) {
			ret->starts_ns += len;
		} else if (i + 1 < n && segs[i + 1].task != ORR_NONE &&
			   orr_graph_tasks(g)[segs[i + 1].task].kind == ORR_TASK_GPU) {
			/* The idle time before a GPU task: its kept delay, at most. */
			int64_t d = orr_graph_task_delay(g, segs[i + 1].task);

			ret->delays_ns += d < len ? d : len;
		}
	}
	ret->total_ns = ret->delays_ns + ret->starts_ns + ret->waits_ns;
}

/* SPDX-License-Identifier: MIT */
/* The graph's getters and names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

const struct orr_trace *orr_graph_trace(const struct orr_graph *g)
{
	return g->trace;
}

size_t orr_graph_rank_count(const struct orr_graph *g)
{
	return g->nranks;
}

const struct orr_graph_rank *orr_graph_get_rank(const struct orr_graph *g, size_t i)
{
	return &g->ranks[i];
}

size_t orr_graph_rank_gpu_tasks(const struct orr_graph *g, size_t i)
{
	const struct orr_graph_rank *r = &g->ranks[i];
	size_t n = 0;

	for (uint32_t p = r->first_proc; p < r->first_proc + r->nprocs; p++)
		if (g->procs[p].kind == ORR_TASK_GPU)
			n += g->procs[p].ntasks;
	return n;
}

size_t orr_graph_task_count(const struct orr_graph *g)
{
	return g->ntasks;
}

const struct orr_task *orr_graph_tasks(const struct orr_graph *g)
{
	return g->tasks;
}

size_t orr_graph_proc_count(const struct orr_graph *g)
{
	return g->nprocs;
}

const struct orr_proc *orr_graph_procs(const struct orr_graph *g)
{
	return g->procs;
}

const struct orr_dep *orr_graph_deps(const struct orr_graph *g)
{
	return g->deps;
}

const struct orr_wait *orr_graph_waits(const struct orr_graph *g)
{
	return g->waits;
}

const struct orr_group *orr_graph_groups(const struct orr_graph *g)
{
	return g->groups;
}

size_t orr_graph_group_count(const struct orr_graph *g)
{
	return g->ngroups;
}

const uint32_t *orr_graph_members(const struct orr_graph *g)
{
	return g->members;
}

void orr_graph_get_stats(const struct orr_graph *g, struct orr_graph_stats *ret_stats)
{
	*ret_stats = g->stats;
}

const struct orr_event *orr_graph_task_event(const struct orr_graph *g, uint32_t task)
{
	const struct orr_task *t = &g->tasks[task];

	return &g->ranks[g->procs[t->proc].rank].rank->events[t->event];
}

int64_t orr_graph_task_start(const struct orr_graph *g, uint32_t task)
{
	return orr_graph_task_event(g, task)->start_ns;
}

/* The wait a CPU task was untied from by drop_inferred, or ORR_NONE. */
static uint32_t unwaited(const struct orr_graph *g, uint32_t task)
{
	size_t i = orr__find_task(g->unwaited, g->nunwaited, sizeof(*g->unwaited), task);

	return i < g->nunwaited ? g->unwaited[i].wait : ORR_NONE;
}

int64_t orr_graph_task_end(const struct orr_graph *g, uint32_t task)
{
	const struct orr_task *t = &g->tasks[task];
	uint32_t w = t->aux;
	int64_t span = t->dur_ns;

	if (t->kind == ORR_TASK_CPU && w == ORR_NONE && g->nunwaited)
		w = unwaited(g, task);
	if (t->kind == ORR_TASK_CPU && w != ORR_NONE)
		span = g->waits[w].span_ns;
	return orr_graph_task_start(g, task) + span;
}

const char *orr_graph_task_name(const struct orr_graph *g, uint32_t task)
{
	return orr_trace_str(g->trace, orr_graph_task_event(g, task)->name);
}

void orr_graph_proc_label(const struct orr_graph *g, uint32_t proc, char *buf, size_t size)
{
	const struct orr_proc *p = &g->procs[proc];
	const struct orr_rank *r = g->ranks[p->rank].rank;
	const struct orr_place *pl = &r->places[p->place];

	if (pl->kind == ORR_PLACE_THREAD)
		snprintf(buf, size, "rank %d thread %lld", (int)r->rank, (long long)pl->tid);
	else
		snprintf(buf, size, "rank %d stream %lld", (int)r->rank, (long long)pl->tid);
}

const char *orr_dep_kind_name(enum orr_dep_kind kind)
{
	static const char *const names[ORR_DEP_COUNT] = {
		[ORR_DEP_THREAD] = "D1 thread",         [ORR_DEP_LAUNCH] = "D2 launch",
		[ORR_DEP_STREAM] = "D3 stream",         [ORR_DEP_CROSS_STREAM] = "D4 cross-stream",
		[ORR_DEP_SYNC] = "D5 GPU->CPU",         [ORR_DEP_CROSS_THREAD] = "D6 cross-thread",
		[ORR_DEP_CROSS_RANK] = "D7 cross-rank",
	};

	return kind > 0 && kind < ORR_DEP_COUNT ? names[kind] : "?";
}

/* SPDX-License-Identifier: MIT */
/*
 * What each rank of a trace holds, counted (orrery info): events by kind and by call,
 * per place, launches and GPU tasks that do not match, collectives by type.
 */
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

/* How many of a[0, na) are not in b[0, nb), both in order. */
static size_t missing(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
	size_t n = 0, j = 0;

	for (size_t i = 0; i < na; i++) {
		while (j < nb && b[j] < a[i])
			j++;
		n += j == nb || b[j] != a[i];
	}
	return n;
}

static bool is_gpu_task(const struct orr_event *e)
{
	return e->kind == ORR_EVENT_KERNEL || e->kind == ORR_EVENT_MEMCPY ||
	       e->kind == ORR_EVENT_MEMSET;
}

static bool is_launch(const struct orr_event *e)
{
	return (e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER) &&
	       (e->sub == ORR_CALL_LAUNCH || e->sub == ORR_CALL_GRAPH_LAUNCH ||
		e->sub == ORR_CALL_MEMCPY || e->sub == ORR_CALL_MEMSET);
}

/* Launches and GPU tasks are matched by correlation id: each list in order, then merged. */
static void match_launches(const struct orr_rank *r, struct orr_rank_stats *st)
{
	int64_t *calls = NULL, *tasks = NULL, *launches = NULL;
	size_t ncalls = 0, ccap = 0, ntasks = 0, tcap = 0, nlaunches = 0, lcap = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if (is_launch(e) && e->correlation < 0)
			st->launches_without_task++;
		else if (is_launch(e))
			ORR_VEC_PUSH(launches, nlaunches, lcap, e->correlation);
		if ((e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER) &&
		    e->correlation >= 0)
			ORR_VEC_PUSH(calls, ncalls, ccap, e->correlation);
		else if (is_gpu_task(e) && e->correlation < 0)
			st->tasks_without_launch++;
		else if (is_gpu_task(e))
			ORR_VEC_PUSH(tasks, ntasks, tcap, e->correlation);
	}
	orr_sort_i64(calls, ncalls);
	orr_sort_i64(tasks, ntasks);
	orr_sort_i64(launches, nlaunches);
	st->launches_without_task += missing(launches, nlaunches, tasks, ntasks);
	st->tasks_without_launch += missing(tasks, ntasks, calls, ncalls);
	free(calls);
	free(tasks);
	free(launches);
}

void orr_rank_stats_count(const struct orr_rank *r, struct orr_rank_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->place_events = orr_xcalloc(r->nplaces, sizeof(size_t));
	st->place_busy_ns = orr_xcalloc(r->nplaces, sizeof(int64_t));
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		st->by_kind[e->kind]++;
		if (e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER)
			st->by_call[e->sub]++;
		st->place_events[e->place]++;
		if (is_gpu_task(e))
			st->place_busy_ns[e->place] += e->dur_ns;
		st->flow_linked += (e->flags & ORR_EVENT_F_FLOW_LINKED) != 0;
	}
	match_launches(r, st);
}

void orr_rank_stats_release(struct orr_rank_stats *st)
{
	free(st->place_events);
	free(st->place_busy_ns);
}

/* NCCL kernels by collective type, in order of first appearance. */
size_t orr_rank_collective_rows(const struct orr_rank *r, struct orr_coll_row **ret)
{
	struct orr_coll_row *rows = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];
		const struct orr_collective *c;
		size_t k = 0;

		if (e->kind != ORR_EVENT_KERNEL || e->coll == ORR_NONE)
			continue;
		c = &r->collectives[e->coll];
		while (k < n && rows[k].type != c->type)
			k++;
		if (k == n)
			ORR_VEC_PUSH(rows, n, cap, ((struct orr_coll_row){ .type = c->type }));
		rows[k].count++;
		rows[k].dur_ns += e->dur_ns;
		if (c->in_bytes > 0)
			rows[k].bytes += c->in_bytes;
		else
			rows[k].unsized++;
	}
	*ret = rows;
	return n;
}

/* A rank read from a native file knows its process and how the capture went. */
bool orr_rank_has_capture(const struct orr_rank *r)
{
	return r->producer != ORR_STR_NONE || r->host != ORR_STR_NONE || r->pid >= 0;
}

size_t orr_select_steps(const struct orr_select *sel, struct orr_step *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (orr_select_step(sel, s[i].step))
			s[k++] = s[i];
	return k;
}

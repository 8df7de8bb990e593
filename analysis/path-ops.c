/* SPDX-License-Identifier: MIT */
/*
 * A step's critical path added up (orrery critical-path, docs/orrery-critical-path.md):
 * by category, and by the op each segment is listed under, per thread or stream.
 */
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

/*
 * The name a segment of the path is listed under; *ret_before when it is CPU time
 * outside every op, listed as "(no op) before" the call that follows it.
 */
uint32_t orr_path_seg_name(const struct orr_replay *r, const struct orr_op_names *names,
			   const struct orr_path_seg *seg, bool *ret_before)
{
	int64_t start = orr_replay_start(r, seg->task);

	*ret_before = false;
	if (seg->cat == ORR_PATH_CPU && seg->end_ns <= start) {
		/* CPU time before the call: where it was on the measured timeline. */
		int64_t mid = seg->start_ns + (seg->end_ns - seg->start_ns) / 2;
		uint32_t at = orr_op_name_at(names, seg->task,
					     orr_graph_task_start(orr_replay_graph(r), seg->task) -
						     (start - mid));

		if (at != ORR_STR_NONE)
			return at;
		*ret_before = true;
	}
	return orr_op_name(names, seg->task);
}

static int cmp_name(const void *a, const void *b)
{
	const struct orr_path_op *x = a, *y = b;

	if (x->name != y->name)
		return (x->name > y->name) - (x->name < y->name);
	if (x->before != y->before)
		return x->before - y->before;
	return (x->proc > y->proc) - (x->proc < y->proc);
}

/* Most time first; ties by name, so that the order does not depend on the trace's ids. */
static int cmp_time(const void *a, const void *b)
{
	const struct orr_path_op *x = a, *y = b;

	if (x->ns != y->ns)
		return (x->ns < y->ns) - (x->ns > y->ns);
	if (strcmp(x->str, y->str))
		return strcmp(x->str, y->str);
	if (x->before != y->before)
		return x->before - y->before;
	return (x->proc > y->proc) - (x->proc < y->proc);
}

int64_t orr_path_cat_totals(const struct orr_path_seg *segs, size_t n, int64_t *by_cat)
{
	int64_t sum = 0;

	for (int k = 0; k < ORR_PATH_CAT_COUNT; k++)
		by_cat[k] = 0;
	for (size_t i = 0; i < n; i++) {
		by_cat[segs[i].cat] += segs[i].end_ns - segs[i].start_ns;
		sum += segs[i].end_ns - segs[i].start_ns;
	}
	return sum;
}

/* Adds up the segments of the path by category, and by op into ops merged by name. */
void orr_path_step_tally(const struct orr_replay *r, const struct orr_op_names *names,
			 const struct orr_path_seg *segs, size_t n, struct orr_path_step *ps)
{
	const struct orr_graph *g = orr_replay_graph(r);
	struct orr_path_op *v = orr_xcalloc(n + 1, sizeof(*v));
	size_t nv = 0;

	ps->path_ns = orr_path_cat_totals(segs, n, ps->by_cat);
	for (size_t i = 0; i < n; i++) {
		int64_t d = segs[i].end_ns - segs[i].start_ns;

		if (segs[i].task == ORR_NONE)
			continue;
		v[nv] = (struct orr_path_op){ .proc = orr_graph_tasks(g)[segs[i].task].proc,
					      .ns = d,
					      .count = 1 };
		v[nv].name = orr_path_seg_name(r, names, &segs[i], &v[nv].before);
		/* A task's time before its start and its run are adjacent: count it once. */
		if (nv && segs[i - 1].task == segs[i].task && v[nv - 1].name == v[nv].name &&
		    v[nv - 1].before == v[nv].before)
			v[nv].count = 0;
		v[nv].str = orr_trace_str(orr_graph_trace(g), v[nv].name);
		v[nv++].by_cat[segs[i].cat] = d;
	}
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_name);
	ps->nops = 0;
	for (size_t i = 0; i < nv; i++) {
		struct orr_path_op *o = ps->nops ? &v[ps->nops - 1] : NULL;

		if (!o || o->name != v[i].name || o->before != v[i].before ||
		    o->proc != v[i].proc) {
			v[ps->nops++] = v[i];
			continue;
		}
		o->ns += v[i].ns;
		o->count += v[i].count;
		for (int k = 0; k < ORR_PATH_CAT_COUNT; k++)
			o->by_cat[k] += v[i].by_cat[k];
	}
	if (ps->nops)
		qsort(v, ps->nops, sizeof(*v), cmp_time);
	ps->ops = v;
}

/* The category an op spends most of its path time in. */
enum orr_path_cat orr_path_op_category(const struct orr_path_op *o)
{
	int best = 0;

	for (int k = 1; k < ORR_PATH_CAT_COUNT; k++)
		if (o->by_cat[k] > o->by_cat[best])
			best = k;
	return best;
}

void orr_path_step_release(struct orr_path_step *ps)
{
	free(ps->ops);
	ps->ops = NULL;
	ps->nops = 0;
}

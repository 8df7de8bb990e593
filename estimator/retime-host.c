/* SPDX-License-Identifier: MIT */
/*
 * The traced host timeline without the profiler's own cost (docs/estimator.md,
 * "Re-timing a trace", "The host timeline").  A thread's CPU task in the graph is a
 * runtime call, and the time before it on its thread (its gap) is the framework's:
 * the ops that ran since the thread's previous call.  The profiler ran its callbacks
 * in that time, for each op and each call it recorded (orr_prof_cost_event_ns()), so
 * the task's share of the host timeline without the profiler is its gap and duration
 * less what the profiler added to the ops and calls between the previous task's end
 * and its own.
 */
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

/* An op or call of a thread: its start and what the profiler added to it. */
struct cost_at {
	int64_t start_ns;
	double ns;
};

static int cmp_cost(const void *a, const void *b)
{
	const struct cost_at *x = a, *y = b;

	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* The profiler's time on place `place` of r, by start; *ret_n of them. */
static struct cost_at *costs_of(const struct orr_rank *r, uint32_t place,
				const struct orr_prof_cost *c, size_t *ret_n)
{
	struct cost_at *v = orr_xmalloc((r->nevents + 1) * sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		double ns = r->events[i].place == place
				    ? orr_prof_cost_event_ns(c, r, &r->events[i])
				    : 0;

		if (ns > 0)
			v[n++] = (struct cost_at){ r->events[i].start_ns, ns };
	}
	qsort(v, n, sizeof(*v), cmp_cost);
	*ret_n = n;
	return v;
}

/* CPU processor p's tasks: each factor times its time without the profiler's part. */
static void unprofile_proc(const struct orr_graph *g, const struct orr_proc *p,
			   const struct orr_prof_cost *c, float *cpu, double *ret_ns)
{
	const struct orr_task *tasks = orr_graph_tasks(g);
	size_t n, k = 0;
	struct cost_at *v = costs_of(orr_graph_get_rank(g, p->rank)->rank, p->place, c, &n);

	for (uint32_t t = p->first_task; t < p->first_task + p->ntasks; t++) {
		int64_t end = orr_graph_task_end(g, t);
		double span = (double)(tasks[t].gap_ns + tasks[t].dur_ns), prof = 0;

		for (; k < n && v[k].start_ns < end; k++)
			prof += v[k].ns;
		if (!(span > 0) || !(prof > 0))
			continue;
		if (prof > span)
			prof = span;
		*ret_ns += prof * (double)cpu[t];
		cpu[t] = (float)((double)cpu[t] * (span - prof) / span);
	}
	free(v);
}

double orr_retime_unprofile(const struct orr_graph *g, const struct orr_prof_cost *c, float *cpu)
{
	const struct orr_proc *procs = orr_graph_procs(g);
	double ns = 0;

	if (!(c->op_ns > 0) && !(c->call_ns > 0))
		return 0;
	for (size_t i = 0; i < orr_graph_proc_count(g); i++)
		if (procs[i].kind == ORR_TASK_CPU)
			unprofile_proc(g, &procs[i], c, cpu, &ns);
	return ns;
}

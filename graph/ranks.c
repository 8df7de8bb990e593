/* SPDX-License-Identifier: MIT */
/*
 * D7: one collective instance seen on several ranks.
 *
 * Exact: the same communicator (process group name) and collective sequence number.
 * Without sequence numbers, NCCL's own rule still holds: the members of a
 * communicator issue its collectives in the same order, so the k-th collective of a
 * group in step s is one instance on every member (flagged inferred: the capture
 * windows must start at the same step).  Without even a group name, the k-th
 * collective of a type on the i-th communication stream in step s (inferred).
 * A candidate instance whose measured member intervals do not all overlap cannot be
 * one collective (none may end before all have started); it is rejected and counted.
 */
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

struct key {
	uint32_t comm;   /* interned group name or collective type */
	uint32_t stream; /* communication stream ordinal, for type matching */
	int64_t seq;     /* sequence number, or the ordinal within the step */
	int64_t step;
	uint32_t rank, task;
	uint8_t exact;
};

/* qsort_r()'s form, for orr__merge_runs() too; no data. */
static int cmp_key(const void *a, const void *b, void *data)
{
	const struct key *x = a, *y = b;

	(void)data;
#define CMP(f)            \
	if (x->f != y->f) \
	return (x->f > y->f) - (x->f < y->f)
	CMP(exact);
	CMP(comm);
	CMP(stream);
	CMP(step);
	CMP(seq);
	CMP(rank);
	CMP(task);
#undef CMP
	return 0;
}

static bool same_bucket(const struct key *x, const struct key *y)
{
	return x->exact == y->exact && x->comm == y->comm && x->stream == y->stream &&
	       x->step == y->step;
}

static bool same_instance(const struct key *x, const struct key *y)
{
	return same_bucket(x, y) && x->seq == y->seq;
}

/* The measured start of the call that launched GPU task t, or t's own start. */
static int64_t launch_time(const struct orr_graph *g, uint32_t t)
{
	const struct orr_task *task = &g->tasks[t];

	for (uint32_t d = task->first_dep; d < task->first_dep + task->ndeps; d++)
		if (g->deps[d].kind == ORR_DEP_LAUNCH)
			return orr_graph_task_start(g, g->deps[d].src);
	return orr_graph_task_start(g, t);
}

static int64_t step_of(const struct orr_step *s, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].start_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? s[lo - 1].step : INT64_MIN;
}

static void rank_keys(const struct orr_graph *g, size_t ri, struct key **v, size_t *n, size_t *cap)
{
	const struct orr_graph_rank *gr = &g->ranks[ri];
	const struct orr_rank *r = gr->rank;
	struct orr_step *steps;
	size_t nsteps, first = *n;
	uint32_t nstreams = 0;

	orr_rank_steps(g->trace, r, &steps, &nsteps);
	for (uint32_t p = gr->first_proc; p < gr->first_proc + gr->nprocs; p++) {
		const struct orr_proc *pr = &g->procs[p];
		bool any = false;

		for (uint32_t t = pr->first_task; t < pr->first_task + pr->ntasks; t++) {
			const struct orr_event *e = &r->events[g->tasks[t].event];
			const struct orr_collective *co;
			bool exact;

			if (!(g->tasks[t].flags & ORR_TASK_F_COMM) || e->coll >= r->ncollectives)
				continue;
			co = &r->collectives[e->coll];
			exact = co->pg_name != ORR_STR_NONE && co->sequence >= 0;
			any = true;
			ORR_VEC_PUSH(
				*v, *n, *cap,
				((struct key){
					.comm = co->pg_name != ORR_STR_NONE ? co->pg_name
									    : co->type,
					.stream = co->pg_name != ORR_STR_NONE ? 0 : nstreams,
					.seq = exact ? co->sequence : orr_graph_task_start(g, t),
					.step = exact ? 0
						      : step_of(steps, nsteps, launch_time(g, t)),
					.rank = (uint32_t)ri,
					.task = t,
					.exact = exact,
				}));
		}
		nstreams += any;
	}
	free(steps);
	/* Ordinals within (communicator, stream, step) replace start times. */
	if (*n > first) /* *v is NULL while nothing was added: no qsort(NULL, 0) */
		qsort_r(*v + first, *n - first, sizeof(**v), cmp_key, NULL);
	for (size_t i = first, k = 0; i < *n; i++) {
		struct key *x = &(*v)[i];

		k = i > first && same_bucket(x - 1, x) ? k + 1 : 0;
		if (!x->exact)
			x->seq = (int64_t)k;
	}
}

/* Couples members [a, b) of one candidate instance when they can be one. */
static void add_group(struct orr_graph *g, const struct key *v, size_t a, size_t b)
{
	int64_t last_start = INT64_MIN, first_end = INT64_MAX;

	for (size_t i = a; i < b; i++) {
		if (i > a && v[i].rank == v[i - 1].rank)
			return; /* the same rank twice: not one instance */
		if (orr_graph_task_start(g, v[i].task) > last_start)
			last_start = orr_graph_task_start(g, v[i].task);
		if (orr_graph_task_end(g, v[i].task) < first_end)
			first_end = orr_graph_task_end(g, v[i].task);
	}
	if (last_start > first_end) {
		g->stats.groups_rejected++;
		return;
	}
	ORR_VEC_PUSH(g->groups, g->ngroups, g->cap_groups,
		     ((struct orr_group){ .first = (uint32_t)g->nmembers,
					  .n = (uint32_t)(b - a),
					  .flags = v[a].exact ? 0 : ORR_DEP_F_INFERRED }));
	for (size_t i = a; i < b; i++) {
		ORR_VEC_PUSH(g->members, g->nmembers, g->cap_members, v[i].task);
		g->tasks[v[i].task].aux = (uint32_t)(g->ngroups - 1);
	}
	g->stats.groups++;
	g->stats.edges[ORR_DEP_CROSS_RANK] += b - a;
	if (!v[a].exact)
		g->stats.inferred[ORR_DEP_CROSS_RANK] += b - a;
}

void orr__link_ranks(struct orr_graph *g)
{
	struct key *v = NULL;
	size_t n = 0, cap = 0;
	size_t *at;

	if (g->nranks < 2 || (g->skip & (1u << ORR_DEP_CROSS_RANK)))
		return;
	at = orr_xmalloc((g->nranks + 1) * sizeof(*at));
	for (size_t r = 0; r < g->nranks; r++) {
		at[r] = n;
		rank_keys(g, r, &v, &n, &cap);
	}
	at[g->nranks] = n;
	/* Each rank's run is sorted already (rank_keys()): merged, not sorted again.  The keys
	 * differ in rank and task, so any sort gives this order. */
	if (n)
		v = orr__merge_runs(v, n, sizeof(*v), at, g->nranks, cmp_key, NULL);
	free(at);
	for (size_t a = 0, b; a < n; a = b) {
		for (b = a + 1; b < n && same_instance(&v[a], &v[b]); b++)
			;
		if (b - a >= 2 && (v[a].exact || !g->drop_inferred))
			add_group(g, v, a, b);
	}
	free(v);
}

/* SPDX-License-Identifier: MIT */
/*
 * D5 without a CUDA call: a thread that spins on a flag a running kernel writes.
 *
 * Communication libraries that bypass NCCL (DeepEP, NVSHMEM, custom all-to-all
 * kernels) let a kernel write a flag or a counter into pinned host memory mapped into
 * the device, and the host polls that memory in a loop until the value arrives (DeepEP's
 * dispatch waits so for the number of tokens it will receive, before it allocates its
 * outputs).  No CUDA call waits, so the trace shows one long gap between two calls of
 * the op, ending as the kernel that wrote the flag ends.  Kept as measured CPU time,
 * that gap would not move when the kernel gets faster.
 *
 * The rule (thresholds in internal.h): a gap between consecutive calls t-1 and t of a
 * thread is a spin when
 *   - it is at least ORR__SPIN_MIN_GAP_NS and ORR__SPIN_GAP_FACTOR times the thread's
 *     median gap long, and no other pass has explained it already (D6 cuts the gap);
 *   - one op or annotation (not a step) encloses both calls;
 *   - a communication kernel (ORR_TASK_F_COMM: a collective, a built-in NCCL, NVSHMEM
 *     or DeepEP name, or a --comm pattern; comm.c) launched by an earlier call of that
 *     op, on this thread, ended inside the gap's last tenth and at most
 *     ORR__SPIN_WAKE_NS before t started.
 * Then t depends on the kernel (the one ending last, if several do): a D5 edge flagged
 * ORR_DEP_F_SPIN | ORR_DEP_F_INFERRED whose latency is the measured time from the
 * kernel's end to t's start, and t's own gap is cut to that latency, as D6 does, so
 * the wait comes out of the replay.  The CPU time before the spin began is lost with
 * it: the trace does not show where it began.
 *
 * Only communication kernels: a host waits for compute through CUDA calls, and without
 * that condition ordinary kernels that happen to end just before a call of a CPU-bound
 * thread match (on the shared traces, 33 gaps of 100-450 us in DDP forward passes and
 * convolutions, and a sampled trace's 49 ms hole, which then moved a step by 7.8 %).
 */
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

/* How many GPU tasks of a stream to look at backwards from the gap's end. */
#define SPIN_LOOKBACK 256

/* A gap to resolve: the call after it, and the event of the call before it. */
struct cand {
	uint32_t task;
	uint32_t prev_ev;
};

struct stack {
	uint32_t *v;
	size_t n, cap;
};

static int64_t measured_gap(const struct orr__rank_ctx *c, uint32_t t)
{
	int64_t gap = ORR__START(c, t) - ORR__END(c, t - 1);

	return gap > 0 ? gap : 0;
}

/*
 * The kernel launched on this thread by a call in [from_task, t) starting at or after
 * op_start, ending last in the wake window before t; ORR_NONE if none.
 */
static uint32_t awaited_kernel(const struct orr__rank_ctx *c, uint32_t t, uint32_t from_task,
			       int64_t op_start)
{
	const struct orr_graph *g = c->g;
	int64_t hi = ORR__START(c, t), gap = measured_gap(c, t);
	int64_t lo = hi - (gap / 10 < ORR__SPIN_WAKE_NS ? gap / 10 : ORR__SPIN_WAKE_NS);
	uint32_t best = ORR_NONE;

	for (uint32_t q = c->first_proc; q < g->nprocs; q++) {
		const struct orr_proc *pr = &g->procs[q];
		uint32_t a;

		if (pr->kind != ORR_TASK_GPU)
			continue;
		a = orr__ended_by(c, pr, hi); /* the last end <= hi, then backwards */
		for (uint32_t n = 0; a > 0 && n < SPIN_LOOKBACK; a--, n++) {
			uint32_t k = pr->first_task + a - 1, call = c->launcher[ORR__LOCAL(c, k)];

			if (ORR__END(c, k) < lo)
				break;
			if (c->r->events[g->tasks[k].event].kind != ORR_EVENT_KERNEL ||
			    !(g->tasks[k].flags & ORR_TASK_F_COMM) || call == ORR_NONE ||
			    call < from_task || call >= t || ORR__START(c, call) < op_start)
				continue;
			if (best == ORR_NONE || ORR__END(c, k) > ORR__END(c, best))
				best = k;
		}
	}
	return best;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int64_t median_gap(const struct orr__rank_ctx *c, const struct orr_proc *pr)
{
	int64_t *v = orr_xmalloc((pr->ntasks + 1) * sizeof(*v)), m;
	size_t n = 0;

	for (uint32_t t = pr->first_task + 1; t < pr->first_task + pr->ntasks; t++)
		v[n++] = measured_gap(c, t);
	qsort(v, n, sizeof(*v), cmp_i64);
	m = n ? v[(n - 1) / 2] : 0;
	free(v);
	return m;
}

/* The gaps of one thread long enough, and ending soon after a kernel it launched. */
static void find_candidates(const struct orr__rank_ctx *c, const struct orr_proc *pr,
			    struct cand **v, size_t *n, size_t *cap)
{
	const struct orr_graph *g = c->g;
	int64_t median = -1;

	for (uint32_t t = pr->first_task + 1; t < pr->first_task + pr->ntasks; t++) {
		int64_t gap = measured_gap(c, t);

		if (gap < ORR__SPIN_MIN_GAP_NS || g->tasks[t].gap_ns < gap)
			continue;
		if (awaited_kernel(c, t, pr->first_task, INT64_MIN) == ORR_NONE)
			continue;
		if (median < 0)
			median = median_gap(c, pr);
		if (gap < ORR__SPIN_GAP_FACTOR * median)
			continue;
		ORR_VEC_PUSH(*v, *n, *cap, ((struct cand){ t, g->tasks[t - 1].event }));
	}
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return (x->prev_ev > y->prev_ev) - (x->prev_ev < y->prev_ev);
}

static bool is_region(const struct orr_event *e)
{
	return e->kind == ORR_EVENT_OP || e->kind == ORR_EVENT_ANNOTATION;
}

static int64_t end_of(const struct orr_event *e)
{
	return e->start_ns + e->dur_ns;
}

/*
 * The innermost op or annotation (not a step) enclosing calls t-1 and t, from the
 * ops open on their thread when t-1 starts; ORR_NONE if none.
 */
static uint32_t enclosing_op(const struct orr__rank_ctx *c, struct stack *s, uint32_t t)
{
	const struct orr_event *ev = c->r->events;
	int64_t from = ORR__START(c, t - 1), to = ORR__END(c, t);

	while (s->n && end_of(&ev[s->v[s->n - 1]]) <= from)
		s->n--;
	for (size_t i = s->n; i-- > 0;) {
		const struct orr_event *op = &ev[s->v[i]];

		if (op->start_ns > from || end_of(op) < to)
			continue;
		if (orr_step_number(orr_trace_str(c->g->trace, op->name)) < 0)
			return s->v[i];
	}
	return ORR_NONE;
}

static void add_spin(struct orr__rank_ctx *c, uint32_t t, uint32_t k, uint32_t op)
{
	const struct orr_trace *tr = c->g->trace;
	int64_t lat = ORR__START(c, t) - ORR__END(c, k);
	struct orr_task *task = &c->g->tasks[t];

	if (orr_debug_enabled("graph"))
		orr_debug("graph",
			  "rank %u: spin in '%s': %lld us gap, '%s' ends %lld us before '%s'",
			  c->rank, orr_trace_str(tr, c->r->events[op].name),
			  (long long)(measured_gap(c, t) / 1000),
			  orr_trace_str(tr, c->r->events[c->g->tasks[k].event].name),
			  (long long)(lat / 1000),
			  orr_trace_str(tr, c->r->events[c->g->tasks[t].event].name));

	if (lat < 0)
		lat = 0;
	if (task->gap_ns > lat)
		task->gap_ns = lat;
	orr__add_edge(c, t, k, ORR_DEP_SYNC, lat, ORR_DEP_F_INFERRED | ORR_DEP_F_SPIN);
}

/* One sweep over the rank's events, keeping the ops open on each thread. */
static void resolve(struct orr__rank_ctx *c, const struct cand *v, size_t n)
{
	const struct orr_rank *r = c->r;
	struct stack *open = orr_xcalloc(r->nplaces + 1, sizeof(*open));
	size_t ci = 0;

	for (size_t i = 0; i < r->nevents && ci < n; i++) {
		const struct orr_event *e = &r->events[i];
		struct stack *s = &open[e->place];

		if (is_region(e) && r->places[e->place].kind == ORR_PLACE_THREAD) {
			while (s->n && end_of(&r->events[s->v[s->n - 1]]) <= e->start_ns)
				s->n--;
			ORR_VEC_PUSH(s->v, s->n, s->cap, (uint32_t)i);
		}
		for (; ci < n && v[ci].prev_ev == i; ci++) {
			uint32_t t = v[ci].task, op = enclosing_op(c, s, t), k;

			if (op == ORR_NONE)
				continue;
			k = awaited_kernel(c, t, c->g->procs[c->g->tasks[t].proc].first_task,
					   r->events[op].start_ns);
			if (k == ORR_NONE)
				continue;
			add_spin(c, t, k, op);
		}
	}
	for (size_t p = 0; p < r->nplaces; p++)
		free(open[p].v);
	free(open);
}

void orr__link_spins(struct orr__rank_ctx *c)
{
	const struct orr_graph *g = c->g;
	struct cand *v = NULL;
	size_t n = 0, cap = 0;

	if (g->skip & (1u << ORR_DEP_SYNC))
		return;
	for (uint32_t p = c->first_proc; p < g->nprocs; p++)
		if (g->procs[p].kind == ORR_TASK_CPU)
			find_candidates(c, &g->procs[p], &v, &n, &cap);
	if (n) {
		qsort(v, n, sizeof(*v), cmp_cand);
		resolve(c, v, n);
	}
	free(v);
}

/* SPDX-License-Identifier: MIT */
/*
 * The launch threads' time per step (docs/estimator.md, "Host stalls"): what
 * `fit` calibrates the time per launch on, with the part of it the profiler added
 * (profiler-cost.c's measurements) and the part the threads were not running.
 *
 * A rank's launch threads are timed from each launch to the next, less what blocking
 * calls spent (waiting for the GPU is no launch cost), each moment counted once over
 * the rank's threads.  Ranks that run the same program (the ranks of a tensor-parallel
 * group, and data-parallel replicas: the same Python code launching the same kernels in
 * the same order) spend the same host time between their k-th and (k+1)-th launch; where
 * one of them takes 20 ms and the median of three or more takes 0.2 ms, its thread was
 * not running (descheduled by a busy or CPU-limited host, faulting), which is the
 * machine's load at that moment and not the job's work.  Each such interval counts as
 * the median of the same interval over the ranks, and the difference is the stalls'.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* A part [lo, hi) of one thread's time; of its interval `at` (between two launches). */
struct span {
	int64_t lo, hi;
	size_t at;
};

/*
 * One launch thread of a rank in the steps: the parts of its intervals between
 * consecutive launches (without the blocking calls' waits), in order, and each
 * interval's length.
 */
struct lthread {
	uint32_t place;
	struct span *v;
	size_t nv, capv;
	int64_t *len;  /* len[0, n): interval i, its parts' lengths summed */
	uint32_t *end; /* end[0, n): the launch task that ends interval i */
	size_t n, cap;
	uint32_t first; /* its first launch task */
	struct span sp; /* its first launch to its last */
	uint64_t sig;   /* the names of the launches that end its intervals, hashed */
	uint64_t ops;   /* the framework ops in sp: their names' hashes summed, and count */
	size_t nops;
};

/* A rank's launch threads, in the order of their first launch. */
struct lrank {
	const struct orr_graph_rank *gr;
	struct lthread *t;
	size_t n;
	uint64_t sig;  /* its threads' signatures and interval counts, hashed */
	size_t peers;  /* ranks with the same signature, itself included */
	int64_t *kept; /* per interval (threads in order): at most the peers' median */
	size_t nintervals;
};

#define FNV_OFFSET 14695981039346656037ull
#define FNV_PRIME  1099511628211ull

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return hash_bytes(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* Room for the current interval's length (zero when new). */
static void len_room(struct lthread *t)
{
	size_t old = t->cap;

	if (t->n < t->cap)
		return;
	t->len = orr_xgrow(t->len, sizeof(*t->len), &t->cap, t->n + 1);
	memset(t->len + old, 0, (t->cap - old) * sizeof(*t->len));
	t->end = orr_xrealloc(t->end, t->cap * sizeof(*t->end));
}

/* A part of the thread's current interval (the one the next launch ends). */
static void push_part(struct lthread *t, int64_t lo, int64_t hi)
{
	if (hi <= lo)
		return;
	ORR_VEC_PUSH(t->v, t->nv, t->capv, ((struct span){ lo, hi, t->n }));
	len_room(t);
	t->len[t->n] += hi - lo;
}

/* The launch `task` ends the current interval. */
static void end_interval(struct lthread *t, const struct orr_graph *g, uint32_t task)
{
	len_room(t);
	t->end[t->n++] = task;
	t->sig = hash_str(t->sig, orr_graph_task_name(g, task));
}

/*
 * One CPU processor's intervals between consecutive launches inside [from, to), less
 * what its blocking calls spent (waiting for the GPU is no launch cost; how many times
 * a thread polls or waits depends on timing, so the intervals are the launches'), and
 * its time from the last launch to a blocking call after it (parts of interval n, which
 * no launch ends).
 */
static void thread_intervals(const struct orr_graph *g, const struct orr_proc *p, int64_t from,
			     int64_t to, struct lthread *t)
{
	const struct orr_task *tasks = orr_graph_tasks(g);
	int64_t last = -1, cur = 0;

	memset(t, 0, sizeof(*t));
	t->place = p->place;
	t->sig = FNV_OFFSET;
	for (uint32_t k = p->first_task; k < p->first_task + p->ntasks; k++) {
		int64_t at = orr_graph_task_start(g, k);

		if (at < from || at >= to)
			continue;
		if (tasks[k].flags & ORR_TASK_F_BLOCKING) {
			if (last >= 0)
				push_part(t, cur, at);
			if (orr_graph_task_end(g, k) > cur)
				cur = orr_graph_task_end(g, k);
		} else if (tasks[k].flags & ORR_TASK_F_LAUNCH) {
			if (last >= 0) {
				push_part(t, cur, at);
				end_interval(t, g, k);
			}
			if (last < 0) {
				t->sp.lo = at;
				t->first = k;
			}
			t->sp.hi = last = cur = at;
		}
	}
}

static void thread_release(struct lthread *t)
{
	free(t->v);
	free(t->len);
	free(t->end);
}

static int thread_cmp(const void *a, const void *b)
{
	const struct lthread *x = a, *y = b;

	return (x->sp.lo > y->sp.lo) - (x->sp.lo < y->sp.lo);
}

/*
 * The framework ops each of r's launch threads ran from its first launch to its last,
 * by name, in any order: work that one rank does and its peers do not (the rank that
 * loads the batch and broadcasts it) makes it another program, compared with none.
 */
static void thread_ops(const struct orr_graph *g, const struct orr_rank *r, struct lrank *lr)
{
	const struct orr_trace *tr = orr_graph_trace(g);

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if (e->kind != ORR_EVENT_OP)
			continue;
		for (size_t k = 0; k < lr->n; k++) {
			struct lthread *t = &lr->t[k];

			if (t->place != e->place || e->start_ns < t->sp.lo ||
			    e->start_ns >= t->sp.hi)
				continue;
			t->ops += hash_str(FNV_OFFSET, orr_trace_str(tr, e->name));
			t->nops++;
			break;
		}
	}
}

/* Rank gr's launch threads over [from, to); false when it launches nothing. */
static bool rank_threads(const struct orr_graph *g, const struct orr_graph_rank *gr, int64_t from,
			 int64_t to, struct lrank *ret)
{
	const struct orr_proc *procs = orr_graph_procs(g);
	size_t cap = 0;

	memset(ret, 0, sizeof(*ret));
	ret->gr = gr;
	ret->sig = FNV_OFFSET;
	for (uint32_t p = gr->first_proc; p < gr->first_proc + gr->nprocs; p++) {
		struct lthread t;

		if (procs[p].kind != ORR_TASK_CPU)
			continue;
		thread_intervals(g, &procs[p], from, to, &t);
		if (t.sp.hi > t.sp.lo)
			ORR_VEC_PUSH(ret->t, ret->n, cap, t);
		else
			thread_release(&t);
	}
	if (ret->n > 1)
		qsort(ret->t, ret->n, sizeof(*ret->t), thread_cmp);
	thread_ops(g, gr->rank, ret);
	for (size_t i = 0; i < ret->n; i++) {
		const struct lthread *t = &ret->t[i];

		ret->sig = hash_bytes(ret->sig, &t->sig, sizeof(t->sig));
		ret->sig = hash_bytes(ret->sig, &t->n, sizeof(t->n));
		ret->sig = hash_bytes(ret->sig, &t->ops, sizeof(t->ops));
		ret->sig = hash_bytes(ret->sig, &t->nops, sizeof(t->nops));
		ret->nintervals += t->n;
	}
	return ret->n > 0;
}

static void rank_release(struct lrank *r)
{
	for (size_t i = 0; i < r->n; i++)
		thread_release(&r->t[i]);
	free(r->t);
	free(r->kept);
}

/* The length of rank r's interval i (its threads' intervals in order). */
static int64_t interval_len(const struct lrank *r, size_t i)
{
	for (size_t k = 0; k < r->n; k++) {
		if (i < r->t[k].n)
			return r->t[k].len[i];
		i -= r->t[k].n;
	}
	return 0;
}

/* The median of v[0, n), n >= 1 (sorts v). */
static int64_t median_i64(int64_t *v, size_t n)
{
	orr_sort_i64(v, n);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

/* Peers of 3 or more ranks: each interval kept at most the peers' median of it. */
enum { MIN_PEERS = 3 };

static bool same_program(const struct lrank *a, const struct lrank *b)
{
	return a->n && b->n && a->sig == b->sig && a->nintervals == b->nintervals;
}

static int program_cmp(const void *a, const void *b, void *ranks)
{
	const struct lrank *rs = ranks;
	const struct lrank *x = &rs[*(const size_t *)a], *y = &rs[*(const size_t *)b];

	if (x->sig != y->sig)
		return x->sig < y->sig ? -1 : 1;
	if (x->nintervals != y->nintervals)
		return x->nintervals < y->nintervals ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) -
	       (*(const size_t *)a < *(const size_t *)b);
}

/* The peers idx[0, m) (ranks of one program): each interval at most their median. */
static void keep_group(struct lrank *rs, const size_t *idx, size_t m, int64_t *v)
{
	size_t nint = rs[idx[0]].nintervals;

	for (size_t a = 0; a < m; a++) {
		rs[idx[a]].peers = m;
		rs[idx[a]].kept = orr_xcalloc(nint ? nint : 1, sizeof(int64_t));
		for (size_t i = 0; i < nint; i++)
			rs[idx[a]].kept[i] = interval_len(&rs[idx[a]], i);
	}
	if (m < MIN_PEERS)
		return;
	for (size_t i = 0; i < nint; i++) {
		int64_t med;

		for (size_t a = 0; a < m; a++)
			v[a] = rs[idx[a]].kept[i];
		med = median_i64(v, m);
		for (size_t a = 0; a < m; a++)
			if (rs[idx[a]].kept[i] > med)
				rs[idx[a]].kept[i] = med;
	}
}

/* Each rank's kept intervals, the ranks grouped by program (sorted by signature). */
static void keep_medians(struct lrank *rs, size_t n)
{
	size_t *idx = orr_xcalloc(n ? n : 1, sizeof(*idx));
	int64_t *v = orr_xcalloc(n ? n : 1, sizeof(*v));

	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), program_cmp, rs);
	for (size_t a = 0, b; a < n; a = b) {
		for (b = a + 1; b < n && same_program(&rs[idx[a]], &rs[idx[b]]); b++)
			;
		if (rs[idx[a]].n)
			keep_group(rs, idx + a, b - a, v);
	}
	free(idx);
	free(v);
}

/* Intervals [lo, hi) of time, pushed by several threads. */
struct spans {
	struct span *v;
	size_t n, cap;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* The length of the union of s's intervals. */
static double spans_union_ns(struct spans *s)
{
	double sum = 0;
	int64_t lo = 0, hi = 0;

	if (!s->n)
		return 0;
	qsort(s->v, s->n, sizeof(*s->v), span_cmp);
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].lo > hi) {
			sum += (double)(hi - lo);
			lo = s->v[i].lo;
			hi = s->v[i].hi;
		} else if (s->v[i].hi > hi) {
			hi = s->v[i].hi;
		}
	}
	return sum + (double)(hi - lo);
}

/*
 * The union of r's intervals over its threads (a thread waiting for another's launches,
 * as the main thread in backward() while autograd's thread launches the pass, adds no
 * time of its own); with `kept`, each interval cut to its kept length.
 */
static double rank_union_ns(const struct lrank *r, bool kept)
{
	struct spans s = { 0 };
	size_t first = 0; /* the thread's first interval among the rank's */
	double ns;

	for (size_t k = 0; k < r->n; first += r->t[k++].n) {
		size_t at = SIZE_MAX;
		int64_t left = 0; /* of the interval's kept length */

		for (size_t j = 0; j < r->t[k].nv; j++) {
			struct span v = r->t[k].v[j];

			if (v.at != at) {
				at = v.at;
				/* after the thread's last launch, up to a blocking call: kept */
				left = at < r->t[k].n ? r->kept[first + at] : INT64_MAX;
			}
			if (kept) {
				v.hi = v.lo + (v.hi - v.lo < left ? v.hi - v.lo : left);
				left -= v.hi - v.lo;
			}
			if (v.hi > v.lo)
				ORR_VEC_PUSH(s.v, s.n, s.cap, v);
		}
	}
	ns = spans_union_ns(&s);
	free(s.v);
	return ns;
}

/* What c says the profiler added to the events of r on its threads' spans (by place). */
static void rank_profiler(const struct lrank *lr, const struct orr_prof_cost *c,
			  struct orr_launch_time *ret)
{
	const struct orr_rank *r = lr->gr->rank;
	struct span *sp = orr_xcalloc(r->nplaces ? r->nplaces : 1, sizeof(*sp));
	double ns;

	for (size_t k = 0; k < lr->n; k++)
		sp[lr->t[k].place] = lr->t[k].sp;
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];
		const struct span *s = &sp[e->place];

		if (e->start_ns < s->lo || e->start_ns >= s->hi)
			continue;
		ret->ops += e->kind == ORR_EVENT_OP && e->external_id >= 0;
		ret->calls += e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER;
		ns = orr_prof_cost_event_ns(c, r, e);
		ret->observed_ops += ns > c->op_ns && e->kind == ORR_EVENT_OP;
		ret->profiler_ns += ns;
	}
	free(sp);
}

/*
 * Every rank's launch threads over the job's steps, their intervals kept at most their
 * peers' median; NULL (*ret_steps 0) without job steps.  ranks_release() frees it.
 */
static struct lrank *ranks_measured(const struct orr_graph *g, size_t *ret_steps)
{
	struct orr_step *steps = NULL;
	size_t nsteps = 0, n = orr_graph_rank_count(g);
	struct lrank *rs;

	*ret_steps = 0;
	if (orr_trace_job_steps(orr_graph_trace(g), &steps, &nsteps) || !nsteps) {
		free(steps);
		return NULL;
	}
	rs = orr_xcalloc(n ? n : 1, sizeof(*rs));
	for (size_t r = 0; r < n; r++)
		rank_threads(g, orr_graph_get_rank(g, r), steps[0].start_ns,
			     steps[nsteps - 1].end_ns, &rs[r]);
	keep_medians(rs, n);
	free(steps);
	*ret_steps = nsteps;
	return rs;
}

static void ranks_release(struct lrank *rs, size_t n)
{
	for (size_t r = 0; rs && r < n; r++)
		rank_release(&rs[r]);
	free(rs);
}

void orr_launch_time_measure(const struct orr_graph *g, const struct orr_prof_cost *c,
			     struct orr_launch_time *ret)
{
	size_t nsteps, n = orr_graph_rank_count(g);
	struct lrank *rs = ranks_measured(g, &nsteps);
	double best = -1;

	*ret = (struct orr_launch_time){ .step_ns = NAN };
	for (size_t r = 0; rs && r < n; r++) {
		struct orr_launch_time lt = { 0 };
		double free_ns;

		if (!rs[r].n)
			continue;
		lt.step_ns = rank_union_ns(&rs[r], false);
		lt.stall_ns = fmax(0, lt.step_ns - rank_union_ns(&rs[r], true));
		rank_profiler(&rs[r], c, &lt);
		/* the slowest rank without the profiler and the stalls: its launches pace the
		 * job's collectives */
		free_ns = fmax(0, lt.step_ns - lt.profiler_ns - lt.stall_ns);
		if (free_ns <= best)
			continue;
		best = free_ns;
		*ret = (struct orr_launch_time){
			.step_ns = lt.step_ns / (double)nsteps,
			.profiler_ns =
				fmin(lt.profiler_ns, lt.step_ns - lt.stall_ns) / (double)nsteps,
			.stall_ns = lt.stall_ns / (double)nsteps,
			.ops = lt.ops / (double)nsteps,
			.calls = lt.calls / (double)nsteps,
			.observed_ops = lt.observed_ops / (double)nsteps,
			.peers = rs[r].peers >= MIN_PEERS ? rs[r].peers : 0,
		};
	}
	ranks_release(rs, n);
}

/* ---- the stalls put on the tasks that hold them ---- */

struct cut {
	uint32_t task;
	double room; /* its time and the time before it */
};

static int cut_cmp(const void *a, const void *b)
{
	const struct cut *x = a, *y = b;

	return (x->room < y->room) - (x->room > y->room);
}

/*
 * The part of CPU task t in the interval that launch task `from` starts and launch task
 * `to` ends: the launch that starts it, its time; the launch that ends it, the time
 * before it; a task between, both (a blocking call's wait is no part of the interval).
 */
static double room_in(const struct orr_task *tasks, uint32_t t, uint32_t from, uint32_t to)
{
	const struct orr_task *x = &tasks[t];
	bool blocking = x->flags & ORR_TASK_F_BLOCKING;

	if (t == from)
		return blocking ? 0 : (double)x->dur_ns;
	return (double)x->gap_ns + (t == to || blocking ? 0 : (double)x->dur_ns);
}

/*
 * An interval's excess over its peers' median put on the CPU tasks that make it up
 * (room_in()), the largest part first; what it could put on them.
 */
static double spread(const struct orr_graph *g, uint32_t from, uint32_t to, double excess,
		     float *stalls, struct cut **v, size_t *cap)
{
	const struct orr_task *tasks = orr_graph_tasks(g);
	double put = 0;
	size_t n = 0;

	for (uint32_t t = from; t <= to; t++) {
		double room = room_in(tasks, t, from, to);

		if (room > 0)
			ORR_VEC_PUSH(*v, n, *cap, ((struct cut){ t, room }));
	}
	if (n > 1)
		qsort(*v, n, sizeof(**v), cut_cmp);
	for (size_t i = 0; i < n && excess > 0; i++) {
		double x = fmin(excess, (*v)[i].room);

		stalls[(*v)[i].task] += (float)x;
		excess -= x;
		put += x;
	}
	return put;
}

float *orr_launch_stalls(const struct orr_graph *g, double *ret_ns)
{
	size_t nsteps, n = orr_graph_rank_count(g), cap = 0;
	struct lrank *rs = ranks_measured(g, &nsteps);
	float *stalls;
	struct cut *v = NULL;
	double total = 0;

	*ret_ns = 0;
	if (!rs)
		return NULL;
	stalls = orr_xcalloc(orr_graph_task_count(g) + 1, sizeof(*stalls));
	for (size_t r = 0; r < n; r++) {
		size_t first = 0;

		if (rs[r].peers < MIN_PEERS)
			continue;
		for (size_t k = 0; k < rs[r].n; first += rs[r].t[k++].n) {
			const struct lthread *t = &rs[r].t[k];
			uint32_t from = t->first;

			for (size_t i = 0; i < t->n; from = t->end[i++]) {
				double excess = (double)(t->len[i] - rs[r].kept[first + i]);

				if (excess > 0)
					total += spread(g, from, t->end[i], excess, stalls, &v,
							&cap);
			}
		}
	}
	free(v);
	ranks_release(rs, n);
	*ret_ns = total;
	return stalls;
}

/* SPDX-License-Identifier: MIT */
/*
 * `orrery summary`: where the time of a measured trace goes, in the steps of each rank
 * (the whole capture of a rank without steps).  Per rank-step the Lumos breakdown of the
 * measured timeline with its waiting for peers (replay/breakdown.c), the GPU's busy time
 * and its copies; kernels by GPU time, framework ops by CPU self time (an op's time less
 * that of the ops it calls on its thread), streams by busy time; collective instances
 * by kind, size, group and link as the estimator reads them (orr_coll_observe()), with
 * nccl-tests' bandwidths.  The straggler is the rank of a multi-rank job whose
 * collectives wait least while the others' wait most: they wait for it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "summary-internal.h"
#include "banned.h"

/*
 * A rank's step windows on its measured timeline that sel selects: its steps, else the
 * whole capture.
 */
static struct orr_step *windows(const struct orr_trace *t, const struct orr_rank *r,
				const struct orr_select *sel, size_t *ret_n)
{
	struct orr_step *s = NULL;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t n = 0;

	if (orr_rank_steps(t, r, &s, ret_n) == 0 && *ret_n) {
		for (size_t i = 0; i < *ret_n; i++)
			if (orr_select_step(sel, s[i].step))
				s[n++] = s[i];
		*ret_n = n;
		return s;
	}
	/* steps selected, none of them the rank's; or a rank of no event: no window */
	if ((sel && sel->steps_given) || !r->nevents) {
		*ret_n = 0;
		return s;
	}
	free(s);
	for (size_t i = 0; i < r->nevents; i++) {
		lo = r->events[i].start_ns < lo ? r->events[i].start_ns : lo;
		hi = r->events[i].start_ns + r->events[i].dur_ns > hi
			     ? r->events[i].start_ns + r->events[i].dur_ns
			     : hi;
	}
	s = orr_xcalloc(1, sizeof(*s));
	*s = (struct orr_step){ .step = -1, .start_ns = lo, .end_ns = hi > lo ? hi : lo };
	*ret_n = 1;
	return s;
}

static void add_item(struct orr_sum_item **v, size_t *n, size_t *cap, struct orr_sum_item it)
{
	ORR_VEC_PUSH(*v, *n, *cap, it);
}

static int cmp_key(const void *a, const void *b)
{
	const struct orr_sum_item *x = a, *y = b;

	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	if (x->stream != y->stream)
		return (x->stream > y->stream) - (x->stream < y->stream);
	return (x->name > y->name) - (x->name < y->name);
}

/*
 * Most time first, then by name (not by the trace's ids), rank, stream; data is the
 * trace (qsort_r(): no static, so that summaries of two replays may be gathered at once).
 */
static int cmp_time(const void *a, const void *b, void *data)
{
	const struct orr_trace *sort_trace = data;
	const struct orr_sum_item *x = a, *y = b;
	int c;

	if (x->ns != y->ns)
		return (x->ns < y->ns) - (x->ns > y->ns);
	if (x->name != y->name && x->name != ORR_NONE && y->name != ORR_NONE) {
		c = strcmp(orr_trace_str(sort_trace, x->name), orr_trace_str(sort_trace, y->name));
		if (c)
			return c;
	}
	return cmp_key(a, b);
}

/* Merges items of one key, sorted by time; returns the total. */
static int64_t merge(const struct orr_trace *t, struct orr_sum_item *v, size_t *n)
{
	size_t k = 0;
	int64_t total = 0;

	if (*n)
		qsort(v, *n, sizeof(*v), cmp_key);
	for (size_t i = 0; i < *n; i++) {
		total += v[i].ns;
		if (k && cmp_key(&v[k - 1], &v[i]) == 0) {
			v[k - 1].ns += v[i].ns;
			v[k - 1].count += v[i].count;
		} else {
			v[k++] = v[i];
		}
	}
	*n = k;
	if (k)
		qsort_r(v, k, sizeof(*v), cmp_time, (void *)t);
	return total;
}

struct item_lists {
	size_t kcap, ocap, scap;
};

int64_t *orr_op_self_times(const struct orr_rank *r)
{
	uint32_t *open = orr_xmalloc((r->nplaces + 1) * sizeof(*open));
	uint32_t *parent = orr_xmalloc((r->nevents + 1) * sizeof(*parent));
	int64_t *self = orr_xcalloc(r->nevents + 1, sizeof(*self));

	for (size_t i = 0; i < r->nplaces; i++)
		open[i] = ORR_NONE;
	/* events are in start order, longer first: a parent comes before its children */
	for (uint32_t e = 0; e < r->nevents; e++) {
		const struct orr_event *ev = &r->events[e];
		uint32_t o;

		if (ev->kind != ORR_EVENT_OP)
			continue;
		for (o = open[ev->place];
		     o != ORR_NONE && ev->start_ns >= r->events[o].start_ns + r->events[o].dur_ns;)
			o = parent[o];
		parent[e] = o;
		self[e] += ev->dur_ns;
		if (o != ORR_NONE)
			self[o] -= ev->dur_ns;
		open[ev->place] = e;
	}
	for (uint32_t e = 0; e < r->nevents; e++)
		self[e] = self[e] > 0 ? self[e] : 0;
	free(open);
	free(parent);
	return self;
}

/* Ops by CPU self time, those starting in the windows. */
static void op_self_times(struct orr_summary *s, struct item_lists *l, const struct orr_rank *r,
			  const struct orr_step *w, size_t nw)
{
	int64_t *self = orr_op_self_times(r);

	for (uint32_t e = 0; e < r->nevents; e++)
		if (r->events[e].kind == ORR_EVENT_OP &&
		    orr_step_index(w, nw, r->events[e].start_ns) >= 0)
			add_item(&s->ops, &s->nops, &l->ocap,
				 (struct orr_sum_item){ .name = r->events[e].name,
							.rank = -1,
							.stream = -1,
							.count = 1,
							.ns = self[e] });
	free(self);
}

/* The first of the windows w[0..nw) (in time order, disjoint) that ends after t. */
static size_t first_window(const struct orr_step *w, size_t nw, int64_t t)
{
	size_t lo = 0, hi = nw;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w[mid].end_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The part of [a, b) in window w. */
static int64_t time_in_window(const struct orr_step *w, int64_t a, int64_t b)
{
	int64_t x = a > w->start_ns ? a : w->start_ns, y = b < w->end_ns ? b : w->end_ns;

	return y > x ? y - x : 0;
}

/* The part of [a, b) in the windows w[0..nw). */
static int64_t time_in(const struct orr_step *w, size_t nw, int64_t a, int64_t b)
{
	int64_t t = 0;

	for (size_t i = first_window(w, nw, a); i < nw && w[i].start_ns < b; i++)
		t += time_in_window(&w[i], a, b);
	return t;
}

/*
 * GPU event e's time in the steps w[0..nw), or -1 when it is not of them: it counts when
 * it starts in a step or runs in one, with the part that runs in them (a copy launched
 * in the last step may run past its end).
 */
static int64_t gpu_time_in(const struct orr_event *e, const struct orr_step *w, size_t nw)
{
	int64_t t = time_in(w, nw, e->start_ns, orr_time_add(e->start_ns, e->dur_ns));

	return t > 0 || orr_step_index(w, nw, e->start_ns) >= 0 ? t : -1;
}

/*
 * Per event of graph rank gr, whether its task is communication: a kernel the trace names
 * as a collective, or one that --comm matched (as orr_kernel_class() classes tasks).
 */
static uint8_t *comm_events(const struct orr_graph *g, const struct orr_graph_rank *gr)
{
	uint8_t *c = orr_xcalloc(gr->rank->nevents + 1, 1);

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		const struct orr_task *task = &orr_graph_tasks(g)[t];

		if (task->kind == ORR_TASK_GPU && (task->flags & ORR_TASK_F_COMM) &&
		    task->event < gr->rank->nevents)
			c[task->event] = 1;
	}
	return c;
}

static void rank_items(struct orr_summary *s, struct item_lists *l, const struct orr_graph_rank *gr,
		       const struct orr_step *w, size_t nw, struct orr__class_memo *m)
{
	const struct orr_rank *r = gr->rank;
	uint8_t *comm = comm_events(s->g, gr);

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];
		const struct orr_place *pl = e->place < r->nplaces ? &r->places[e->place] : NULL;
		bool gpu = e->kind == ORR_EVENT_KERNEL || e->kind == ORR_EVENT_MEMCPY ||
			   e->kind == ORR_EVENT_MEMSET;
		int64_t ns;
		size_t c;

		if (!gpu || !pl || (ns = gpu_time_in(e, w, nw)) < 0)
			continue;
		c = e->kind == ORR_EVENT_KERNEL && comm[i]
			    ? 2 /* communication, as orr_kernel_class() says */
			    : orr__summary_class_of(m, orr_graph_trace(s->g),
						    (enum orr_event_kind)e->kind, e->name);
		s->class_tasks[c]++;
		s->class_ns[c] = orr_time_add(s->class_ns[c], ns);
		add_item(&s->kernels, &s->nkernels, &l->kcap,
			 (struct orr_sum_item){
				 .name = e->name, .rank = -1, .stream = -1, .count = 1, .ns = ns });
		add_item(&s->streams, &s->nstreams, &l->scap,
			 (struct orr_sum_item){ .name = ORR_NONE,
						.rank = r->rank,
						.stream = pl->tid,
						.count = 1,
						.ns = ns });
	}
	free(comm);
	op_self_times(s, l, r, w, nw);
}

/* Per rank-step of rank k's windows w[0..nw): the measured breakdown, busy time and copies. */
static void rank_steps(struct orr_summary *s, const struct orr_replay *r, size_t k,
		       const struct orr_step *w, size_t nw, size_t *cap, struct orr__class_memo *m)
{
	const struct orr_graph *g = orr_replay_graph(r);
	const struct orr_rank *rk = orr_graph_get_rank(g, k)->rank;
	struct orr_gpu_timeline *tl = orr_gpu_timeline_new(r, k, false);
	size_t first = s->nsteps;

	for (size_t i = 0; i < nw; i++) {
		struct orr_sum_step st = { .rank = rk->rank,
					   .step = w[i].step,
					   .step_ns = w[i].end_ns - w[i].start_ns };

		orr_gpu_timeline_breakdown(tl, w[i].start_ns, w[i].end_ns, &st.b);
		st.busy_ns = st.b.exposed_compute_ns + st.b.overlapped_ns + st.b.exposed_comm_ns;
		ORR_VEC_PUSH(s->steps, s->nsteps, *cap, st);
	}
	orr__summary_idle(s, k, w, nw, s->steps + first, m);
	for (size_t e = 0; e < rk->nevents; e++) {
		const struct orr_event *ev = &rk->events[e];
		int64_t end = orr_time_add(ev->start_ns, ev->dur_ns);

		if (ev->kind != ORR_EVENT_MEMCPY && ev->kind != ORR_EVENT_MEMSET)
			continue;
		/* its time in each step it runs in */
		for (size_t i = first_window(w, nw, ev->start_ns); i < nw && w[i].start_ns < end;
		     i++)
			s->steps[first + i].copy_ns += time_in_window(&w[i], ev->start_ns, end);
	}
	orr_gpu_timeline_free(tl);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The launch threads' stalls of the ranks sel shows, per job step. */
static void stalls(struct orr_summary *s, const struct orr_select *sel)
{
	struct orr_step *steps = NULL;
	size_t nsteps = 0;
	double total;
	float *st = orr_launch_stalls(s->g, &total);

	if (st && total > 0 && !orr_trace_job_steps(orr_graph_trace(s->g), &steps, &nsteps) &&
	    nsteps)
		for (size_t r = 0; r < orr_graph_rank_count(s->g); r++) {
			const struct orr_graph_rank *gr = orr_graph_get_rank(s->g, r);
			double ns = 0;

			if (sel && !orr_select_rank(sel, gr->rank->rank))
				continue;
			for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++)
				ns += st[t];
			if (!(ns > 0))
				continue;
			ns /= (double)nsteps;
			if (!s->stall_ranks++ || ns < s->stall_min_ns)
				s->stall_min_ns = ns;
			if (ns > s->stall_max_ns)
				s->stall_max_ns = ns;
		}
	free(steps);
	free(st);
}

/*
 * The straggler: in a job of several ranks whose collectives wait for peers, the rank
 * with the least waiting per step, when the others' median is more than twice it and
 * at least 1 % of their mean step (over the ranks shown whose steps hold collectives
 * coupled with peers, coupled[0..ncoupled): a rank without one waits for no one, and is
 * waited for by no one).
 */
static void straggler(struct orr_summary *s, const int32_t *coupled, size_t ncoupled)
{
	double *wait = orr_xcalloc(s->nsteps + 1, sizeof(*wait)), *sorted, step = 0;
	int32_t *rank = orr_xcalloc(s->nsteps + 1, sizeof(*rank));
	size_t *n = orr_xcalloc(s->nsteps + 1, sizeof(*n)), nr = 0, best = 0, nsteps = 0;

	s->straggler = -1;
	/* The rank-steps come rank after rank: one entry per rank shown and coupled. */
	for (size_t i = 0; i < s->nsteps; i++) {
		size_t c = 0;

		while (c < ncoupled && coupled[c] != s->steps[i].rank)
			c++;
		if (c == ncoupled)
			continue;
		if (!nr || s->steps[i].rank != rank[nr - 1])
			rank[nr++] = s->steps[i].rank;
		wait[nr - 1] += (double)s->steps[i].b.exposed_wait_ns;
		step += (double)s->steps[i].step_ns;
		n[nr - 1]++;
		nsteps++;
	}
	if (nr < 2)
		goto out;
	for (size_t k = 0; k < nr; k++) {
		wait[k] /= (double)n[k];
		if (wait[k] < wait[best])
			best = k;
	}
	sorted = orr_xmalloc(nr * sizeof(*sorted));
	for (size_t k = 0, m = 0; k < nr; k++)
		if (k != best)
			sorted[m++] = wait[k];
	qsort(sorted, nr - 1, sizeof(*sorted), cmp_double);
	s->others_wait_ns = sorted[(nr - 2) / 2];
	free(sorted);
	s->straggler_wait_ns = wait[best];
	if (s->others_wait_ns > 2 * wait[best] && s->others_wait_ns > 0.01 * step / (double)nsteps)
		s->straggler = rank[best];
out:
	free(wait);
	free(rank);
	free(n);
}

/* The row of s->colls for o, added when new; sizes NaN (unknown) are equal. */
static struct orr_sum_coll *coll_row(struct orr_summary *s, size_t *cap,
				     const struct orr_coll_obs *o)
{
	size_t k = 0;

	while (k < s->ncolls && !(s->colls[k].kind == o->kind && s->colls[k].link == o->link &&
				  s->colls[k].group == o->s.group &&
				  (s->colls[k].bytes == o->s.bytes ||
				   (isnan(s->colls[k].bytes) && isnan(o->s.bytes)))))
		k++;
	if (k == s->ncolls)
		ORR_VEC_PUSH(s->colls, s->ncolls, *cap,
			     ((struct orr_sum_coll){ .kind = o->kind,
						     .link = o->link,
						     .bytes = o->s.bytes,
						     .group = o->s.group,
						     .sized_by_caller = o->sized_by_caller,
						     .algo_task = o->task }));
	return &s->colls[k];
}

/*
 * A collective kernel the estimator could not take as a sample (no size, or no group):
 * its kind from its collective record, else from NCCL's kernel name
 * ("ncclDevKernel_AllReduce_Sum_f16_RING_LL", "ncclKernel_SendRecv_..."); its group
 * from the record or its coupled members; its size unknown.  False without a kind.
 */
static bool unsized(const struct orr_graph *g, uint32_t t, uint32_t members,
		    struct orr_coll_obs *ret)
{
	const struct orr_graph_rank *gr =
		orr_graph_get_rank(g, orr_graph_procs(g)[orr_graph_tasks(g)[t].proc].rank);
	const struct orr_event *e = orr_graph_task_event(g, t);
	const struct orr_collective *co =
		e->coll < gr->rank->ncollectives ? &gr->rank->collectives[e->coll] : NULL;
	const char *name = orr_graph_task_name(g, t), *u;
	enum orr_coll_kind k = ORR_COLL_UNKNOWN;

	if (co)
		k = orr_coll_kind_of(orr_trace_str(orr_graph_trace(g), co->type));
	if (k == ORR_COLL_UNKNOWN && strncmp(name, "nccl", 4) == 0 && (u = strchr(name, '_')))
		k = orr_coll_kind_of(u + 1);
	if (k == ORR_COLL_UNKNOWN)
		return false;
	*ret = (struct orr_coll_obs){
		.kind = k,
		.alone = members < 2,
		.task = t,
		.s = { NAN,
		       co && co->group_size > 0 ? co->group_size
		       : members > 1            ? (int)members
						: -1,
		       0 },
	};
	return true;
}

/* Whether collective kernel t, or a member of its instance, is in the steps counted. */
static bool counted(const struct orr_graph *g, const uint8_t *in, uint32_t t)
{
	const struct orr_task *task = &orr_graph_tasks(g)[t];
	const struct orr_group *gr;

	if (task->aux == ORR_NONE)
		return in[t];
	gr = &orr_graph_groups(g)[task->aux];
	for (uint32_t i = 0; i < gr->n; i++)
		if (in[orr_graph_members(g)[gr->first + i]])
			return true;
	return false;
}

/*
 * Collective instances grouped by kind, link, group and size (unknown sizes last): those
 * with a member in the steps counted (in[t], per task).
 */
static void collectives(struct orr_summary *s, const uint8_t *in)
{
	const struct orr_task *tasks = orr_graph_tasks(s->g);
	const struct orr_group *groups = orr_graph_groups(s->g);
	const uint32_t *members = orr_graph_members(s->g);
	struct orr_coll_obs *o = NULL, u;
	size_t n = orr_coll_observe(s->g, &o), cap = 0;
	uint8_t *seen = orr_xcalloc(orr_graph_task_count(s->g) + 1, 1);
	struct orr_sum_coll *c;

	for (size_t i = 0; i < n; i++) {
		seen[o[i].task] = 1;
		if (!counted(s->g, in, o[i].task))
			continue;
		c = coll_row(s, &cap, &o[i]);
		c->count++;
		c->alone += o[i].alone;
		c->ns += o[i].s.ns;
	}
	for (size_t gi = 0; gi < orr_graph_group_count(s->g); gi++) {
		const uint32_t *m = members + groups[gi].first;
		int64_t shortest = INT64_MAX;

		for (uint32_t i = 0; i < groups[gi].n; i++) {
			seen[m[0]] |= seen[m[i]];
			shortest = tasks[m[i]].dur_ns < shortest ? tasks[m[i]].dur_ns : shortest;
		}
		if (seen[m[0]] || !counted(s->g, in, m[0]))
			continue;
		if (!unsized(s->g, m[0], groups[gi].n, &u)) {
			s->colls_unknown++;
			continue;
		}
		c = coll_row(s, &cap, &u);
		c->count++;
		c->ns += (double)shortest;
	}
	for (uint32_t t = 0; t < orr_graph_task_count(s->g); t++) {
		if (tasks[t].aux != ORR_NONE || !(tasks[t].flags & ORR_TASK_F_COMM) ||
		    tasks[t].kind != ORR_TASK_GPU || seen[t] || !in[t])
			continue;
		if (!unsized(s->g, t, 1, &u)) {
			s->colls_unknown++;
			continue;
		}
		c = coll_row(s, &cap, &u);
		c->count++;
		c->alone++;
		c->ns += (double)tasks[t].dur_ns;
	}
	free(seen);
	free(o);
}

void orr_summary_gather(struct orr_summary *s, const char *path, const struct orr_replay *r,
			const struct orr_select *sel)
{
	const struct orr_graph *g = orr_replay_graph(r);
	const struct orr_trace *t = orr_graph_trace(g);
	struct item_lists l = { 0 };
	struct orr__class_memo m = { 0 };
	const struct orr_task *tasks = orr_graph_tasks(g);
	uint8_t *in = orr_xcalloc(orr_graph_task_count(g) + 1, 1);
	int32_t *coupled = NULL; /* the ranks shown whose steps hold coupled collectives */
	size_t cap = 0, ncoupled = 0, ccap = 0;

	*s = (struct orr_summary){ .path = path, .g = g, .nranks = orr_graph_rank_count(g) };
	for (size_t k = 0; k < s->nranks; k++) {
		const struct orr_graph_rank *gr = orr_graph_get_rank(g, k);
		const struct orr_rank *rk = gr->rank;
		size_t nw;
		struct orr_step *w;

		if (!orr_select_rank(sel, rk->rank))
			continue;
		w = windows(t, rk, sel, &nw);
		rank_steps(s, r, k, w, nw, &cap, &m);
		rank_items(s, &l, gr, w, nw, &m);
		for (uint32_t i = gr->first_task; i < gr->first_task + gr->ntasks; i++) {
			in[i] = orr_step_index(w, nw, orr_graph_task_start(g, i)) >= 0;
			if (in[i] && tasks[i].aux != ORR_NONE &&
			    (tasks[i].flags & ORR_TASK_F_COMM) &&
			    (!ncoupled || coupled[ncoupled - 1] != rk->rank))
				ORR_VEC_PUSH(coupled, ncoupled, ccap, rk->rank);
		}
		free(w);
	}
	free(m.c);
	s->kernel_ns = merge(t, s->kernels, &s->nkernels);
	s->op_ns = merge(t, s->ops, &s->nops);
	merge(t, s->streams, &s->nstreams);
	if (s->nstreams) /* by rank and stream */
		qsort(s->streams, s->nstreams, sizeof(*s->streams), cmp_key);
	straggler(s, coupled, ncoupled);
	stalls(s, sel);
	collectives(s, in);
	free(coupled);
	free(in);
	orr__summary_idle_finish(s);
	orr__summary_memory(s, sel);
}

void orr_summary_release(struct orr_summary *s)
{
	free(s->steps);
	free(s->kernels);
	free(s->ops);
	free(s->streams);
	free(s->colls);
	free(s->stream_idle);
	free(s->shorts);
	free(s->mem);
	free(s->counters);
	for (size_t c = 0; c < ORR_SUM_CLASSES; c++)
		free(s->delays[c].ns);
	*s = (struct orr_summary){ 0 };
}

double orr_sum_coll_algbw(const struct orr_sum_coll *c)
{
	double t = c->count ? c->ns / (double)c->count : 0;

	return isfinite(c->bytes) && t > 0 ? c->bytes / t * 1e9 : NAN;
}

double orr_sum_coll_busbw(const struct orr_sum_coll *c)
{
	return orr_sum_coll_algbw(c) * orr_coll_bus_factor(c->kind, c->group);
}

void orr_nccl_algorithm(const char *kernel, char *buf, size_t size)
{
	static const char *const algos[] = {
		"RING", "TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS_TREE", "NVLS", "PAT"
	};
	static const char *const protos[] = { "LL128", "LL", "SIMPLE" };
	const char *a = NULL, *p = NULL;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]) && !a; i++)
		if (strstr(kernel, algos[i]))
			a = algos[i];
	for (size_t i = 0; a && i < sizeof(protos) / sizeof(protos[0]) && !p; i++)
		if (strstr(kernel, protos[i]))
			p = protos[i];
	if (a)
		snprintf(buf, size, "%s%s%s", a, p ? "_" : "", p ? p : "");
}

/* SPDX-License-Identifier: MIT */
/*
 * Building the graph: rank by rank, tasks and processors first, then each kind of
 * edge; pending edges are laid out per task once the rank is done; D7 couples the
 * ranks at the end.  Everything lives in a few flat arrays that grow geometrically.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

void orr__add_edge(struct orr__rank_ctx *c, uint32_t dst, uint32_t src, enum orr_dep_kind kind,
		   int64_t lat_ns, uint8_t flags)
{
	const struct orr__pending *last = c->npend ? &c->pend[c->npend - 1] : NULL;

	/* Two stream waits in a row before one launch name the same edge once. */
	if (last && last->dst == dst && last->dep.src == src && last->dep.kind == kind &&
	    last->dep.lat_ns == lat_ns && last->dep.flags == flags)
		return;
	ORR_VEC_PUSH(c->pend, c->npend, c->cap_pend,
		     ((struct orr__pending){
			     .dst = dst,
			     .dep = { .lat_ns = lat_ns,
				      .src = src,
				      .kind = (uint8_t)kind,
				      .flags = flags },
		     }));
}

static int cmp_corr(const void *a, const void *b)
{
	const struct orr__corr *x = a, *y = b;

	if (x->corr != y->corr)
		return (x->corr > y->corr) - (x->corr < y->corr);
	return (x->task > y->task) - (x->task < y->task);
}

/*
 * Correlation ids grow with time, so the records usually come in order already.  The ids
 * are spread over a range a few times the records' count (Kineto gives one to every
 * call and op of the process, a cuda_sync record has one in six or so of a rank's), so
 * the table is made when the range is below 8 ids a record: 4 bytes an id, at most twice
 * the records' 16 bytes, for the rank only.
 */
void orr__corr_map_index(struct orr__corr_map *m)
{
	struct orr__corr *v = m->v;

	m->at = NULL;
	m->nat = 0;
	for (size_t i = 1; i < m->n; i++)
		if (cmp_corr(&v[i - 1], &v[i]) > 0) {
			qsort(v, m->n, sizeof(*v), cmp_corr);
			break;
		}
	if (!m->n || (uint64_t)(v[m->n - 1].corr - v[0].corr) >= 8 * (uint64_t)m->n)
		return;
	m->lo = v[0].corr;
	m->nat = (size_t)(v[m->n - 1].corr - m->lo) + 1;
	m->at = orr_xmalloc(m->nat * sizeof(*m->at));
	memset(m->at, 0xff, m->nat * sizeof(*m->at)); /* ORR_NONE */
	for (size_t i = m->n; i-- > 0;)
		m->at[v[i].corr - m->lo] = v[i].task; /* the first record of an id last */
}

void orr__corr_map_free(struct orr__corr_map *m)
{
	free(m->v);
	free(m->at);
}

/*
 * The first record not below corr, found without a branch on the data: the lookups come
 * in no order a predictor can learn, and a mispredicted halving step costs more than the
 * conditional move of this form (the same record as the classic search).
 */
static uint32_t search_corr(const struct orr__corr *v, size_t n, int64_t corr)
{
	const struct orr__corr *base = v;
	size_t len = n, lo;

	if (!n)
		return ORR_NONE;
	while (len > 1) {
		size_t half = len / 2;

		base = base[half].corr < corr ? base + half : base;
		len -= half;
	}
	lo = (size_t)(base - v) + (base->corr < corr);
	return lo < n && v[lo].corr == corr ? v[lo].task : ORR_NONE;
}

uint32_t orr__find_corr(const struct orr__corr_map *m, int64_t corr)
{
	if (!m->at)
		return search_corr(m->v, m->n, corr);
	if (corr < m->lo || (uint64_t)(corr - m->lo) >= m->nat)
		return ORR_NONE;
	return m->at[corr - m->lo];
}

size_t orr__find_task(const void *v, size_t n, size_t size, uint32_t task)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t at;

		memcpy(&at, (const char *)v + mid * size, sizeof(at));
		if (at < task)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n) {
		uint32_t at;

		memcpy(&at, (const char *)v + lo * size, sizeof(at));
		if (at == task)
			return lo;
	}
	return n;
}

uint32_t orr__new_wait(struct orr_graph *g, enum orr_wait_kind kind, uint32_t target, bool inferred)
{
	ORR_VEC_PUSH(g->waits, g->nwaits, g->cap_waits,
		     ((struct orr_wait){ .target = target,
					 .kind = (uint8_t)kind,
					 .flags = inferred ? ORR_DEP_F_INFERRED : 0 }));
	g->stats.waits[kind]++;
	return (uint32_t)(g->nwaits - 1);
}

static bool kept(const struct orr__rank_ctx *c, const struct orr__pending *p)
{
	return !c->g->drop_inferred || !(p->dep.flags & ORR_DEP_F_INFERRED);
}

/*
 * Lays the rank's pending edges out per task, in task order (a counting sort by task);
 * with drop_inferred, inferred edges are left out (and not counted) only here, so every
 * pass before saw them as usual.
 */
static void lay_out_edges(struct orr__rank_ctx *c)
{
	struct orr_graph *g = c->g;
	uint32_t *at = orr_xcalloc(c->ntasks + 1, sizeof(*at));

	g->deps = orr_xgrow(g->deps, sizeof(*g->deps), &g->cap_deps, g->ndeps + c->npend + 1);
	for (size_t i = 0; i < c->npend; i++)
		if (kept(c, &c->pend[i]) && at[ORR__LOCAL(c, c->pend[i].dst)] < UINT16_MAX)
			at[ORR__LOCAL(c, c->pend[i].dst)]++;
	for (uint32_t l = 0; l < c->ntasks; l++) {
		struct orr_task *t = &g->tasks[c->base + l];

		t->first_dep = (uint32_t)g->ndeps;
		t->ndeps = (uint16_t)at[l];
		g->ndeps += at[l];
		at[l] = t->first_dep;
	}
	for (size_t i = 0; i < c->npend; i++) {
		const struct orr__pending *p = &c->pend[i];
		struct orr_task *t = &g->tasks[p->dst];

		if (!kept(c, p))
			continue;
		if (at[ORR__LOCAL(c, p->dst)] >= t->first_dep + t->ndeps)
			continue; /* more than UINT16_MAX edges into one task */
		g->deps[at[ORR__LOCAL(c, p->dst)]++] = p->dep;
		g->stats.edges[p->dep.kind]++;
		g->stats.inferred[p->dep.kind] += p->dep.flags & ORR_DEP_F_INFERRED;
		g->stats.held += (p->dep.flags & ORR_DEP_F_HELD) != 0;
		g->stats.spin_waits += (p->dep.flags & ORR_DEP_F_SPIN) != 0;
	}
	free(at);
}

/*
 * drop_inferred: a blocking call whose wait was guessed no longer waits.  It keeps the
 * cost it has with the wait (its own work only), and its measured span is remembered.
 */
static void drop_inferred_waits(struct orr__rank_ctx *c)
{
	struct orr_graph *g = c->g;

	for (uint32_t t = c->base; t < c->base + c->ntasks; t++) {
		struct orr_task *task = &g->tasks[t];

		if (task->kind != ORR_TASK_CPU || task->aux == ORR_NONE ||
		    !(g->waits[task->aux].flags & ORR_DEP_F_INFERRED) ||
		    g->waits[task->aux].kind == ORR_WAIT_RECORD)
			continue;
		ORR_VEC_PUSH(g->unwaited, g->nunwaited, g->cap_unwaited,
			     ((struct orr__unwaited){ .task = t, .wait = task->aux }));
		g->stats.edges[ORR_DEP_SYNC]--;
		g->stats.inferred[ORR_DEP_SYNC]--;
		task->aux = ORR_NONE;
	}
}

static void map_syncs(struct orr__rank_ctx *c)
{
	struct orr__corr_map *m = &c->syncs;

	m->n = 0;
	m->v = orr_xmalloc((c->r->nsyncs + 1) * sizeof(*m->v));
	for (size_t i = 0; i < c->r->nevents && m->n < c->r->nsyncs; i++) {
		const struct orr_event *e = &c->r->events[i];

		if (e->kind == ORR_EVENT_SYNC && e->correlation >= 0 && e->args != ORR_NONE)
			m->v[m->n++] = (struct orr__corr){ e->correlation, (uint32_t)i };
	}
	orr__corr_map_index(m);
}

static void release_ctx(struct orr__rank_ctx *c)
{
	free(c->place_proc);
	free(c->end);
	free(c->poll_lo);
	free(c->last_ev);
	free(c->launcher);
	free(c->by_graph);
	free(c->lstart);
	orr__corr_map_free(&c->corrs);
	orr__corr_map_free(&c->syncs);
	free(c->pend);
	free(c->devs);
	free(c->streams);
}

static void build_rank(struct orr_graph *g, uint32_t ri, const struct orr_rank *r)
{
	struct orr__rank_ctx c = { .g = g, .r = r, .rank = ri };

	orr__collect_tasks(&c);
	/* About an edge a task or fewer (a launch each GPU task): grown beyond, not to it. */
	c.cap_pend = (size_t)c.ntasks + 1;
	c.pend = orr_xmalloc(c.cap_pend * sizeof(*c.pend));
	orr__mark_pollers(&c);
	orr__mark_comm(&c);
	map_syncs(&c);
	orr__link_launches(&c);
	orr__set_gpu_latencies(&c);
	orr__add_waits(&c);
	orr__link_stream_waits(&c);
	orr__late_tasks(&c);
	orr__link_threads(&c);
	orr__link_spins(&c);
	lay_out_edges(&c);
	if (g->drop_inferred)
		drop_inferred_waits(&c);
	orr__explain_rank(&c);
	g->ranks[ri] = (struct orr_graph_rank){
		.rank = r,
		.first_proc = c.first_proc,
		.nprocs = (uint32_t)(g->nprocs - c.first_proc),
		.first_task = c.base,
		.ntasks = c.ntasks,
	};
	release_ctx(&c);
}

static void count_tasks(struct orr_graph *g)
{
	for (size_t t = 0; t < g->ntasks; t++) {
		const struct orr_task *task = &g->tasks[t];

		g->stats.tasks[task->kind]++;
		if ((task->flags & ORR_TASK_F_COMM) && task->aux == ORR_NONE)
			g->stats.collectives_alone++;
	}
}

int orr_graph_build(const struct orr_trace *t, const struct orr_graph_options *opts,
		    struct orr_graph **ret_graph, struct orr_diag *reterr_diag)
{
	struct orr_graph *g = orr_xcalloc(1, sizeof(*g));
	uint64_t total = 0;

	g->trace = t;
	g->skip = opts ? opts->skip_deps : 0;
	g->drop_inferred = opts && opts->drop_inferred;
	g->no_delays = opts && opts->no_delays;
	g->nranks = orr_trace_rank_count(t);
	g->ranks = orr_xcalloc(g->nranks + 1, sizeof(*g->ranks));
	for (size_t i = 0; i < g->nranks; i++) {
		total += orr_trace_get_rank(t, i)->nevents;
		if (total >= UINT32_MAX) {
			orr_graph_free(g);
			return orr_diag_set(reterr_diag, ORR_ETOOBIG, "", -1, -1,
					    "more than %u events in one graph", UINT32_MAX - 1);
		}
	}
	g->comm_names = orr__comm_names_new(opts);
	for (size_t i = 0, done = 0; i < g->nranks; i++) {
		build_rank(g, (uint32_t)i, orr_trace_get_rank(t, i));
		done += orr_trace_get_rank(t, i)->nevents;
		if (opts && opts->progress)
			opts->progress(opts->progress_data, done, total);
	}
	orr__comm_names_free(g->comm_names);
	g->comm_names = NULL;
	orr__link_ranks(g);
	count_tasks(g);
	orr_debug("graph", "%zu ranks, %zu procs, %zu tasks, %zu edges, %zu waits, %zu groups",
		  g->nranks, g->nprocs, g->ntasks, g->ndeps, g->nwaits, g->ngroups);
	*ret_graph = g;
	return 0;
}

void orr_graph_free(struct orr_graph *g)
{
	if (!g)
		return;
	free(g->ranks);
	free(g->tasks);
	free(g->procs);
	free(g->deps);
	free(g->waits);
	free(g->groups);
	free(g->members);
	free(g->unwaited);
	free(g->delays);
	orr__explain_free(g);
	free(g);
}

/* SPDX-License-Identifier: MIT */
/* The graph's getters, names, and the explanation of a cycle (with igraph). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <igraph.h>

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

/* ---- cycles ---- */

/*
 * The igraph functions a cycle's explanation uses, from libigraph.so.3 (Debian's
 * libigraph3), loaded when a replay first cannot go on: no start loads igraph and the
 * BLAS, LAPACK, ARPACK and GLPK it links (docs/performance.md), and liborrery.so needs
 * no position-independent igraph archive (Debian's libigraph.a is not one).  Without
 * the library the explanation names the first tasks that can never run.
 */
static struct {
	__typeof__(igraph_set_error_handler) *set_error_handler;
	__typeof__(igraph_error_handler_ignore) *error_handler_ignore;
	__typeof__(igraph_vector_int_init) *init;
	__typeof__(igraph_vector_int_push_back) *push_back;
	__typeof__(igraph_vector_int_size) *size;
	__typeof__(igraph_vector_int_destroy) *destroy;
	__typeof__(igraph_create) *create;
	__typeof__(igraph_connected_components) *components;
	__typeof__(igraph_destroy) *graph_destroy;
	bool loaded;
} ig;
static pthread_once_t ig_once = PTHREAD_ONCE_INIT;

static void ig_load(void)
{
	/* Never closed: the functions may be used again until the process ends. */
	void *h = dlopen("libigraph.so.3", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&ig.set_error_handler = dlsym(h, "igraph_set_error_handler");
	*(void **)&ig.error_handler_ignore = dlsym(h, "igraph_error_handler_ignore");
	*(void **)&ig.init = dlsym(h, "igraph_vector_int_init");
	*(void **)&ig.push_back = dlsym(h, "igraph_vector_int_push_back");
	*(void **)&ig.size = dlsym(h, "igraph_vector_int_size");
	*(void **)&ig.destroy = dlsym(h, "igraph_vector_int_destroy");
	*(void **)&ig.create = dlsym(h, "igraph_create");
	*(void **)&ig.components = dlsym(h, "igraph_connected_components");
	*(void **)&ig.graph_destroy = dlsym(h, "igraph_destroy");
	ig.loaded = ig.set_error_handler && ig.error_handler_ignore && ig.init && ig.push_back &&
		    ig.size && ig.destroy && ig.create && ig.components && ig.graph_destroy;
}

struct stuck {
	const struct orr_graph *g;
	const bool *done;
	uint32_t *vertex; /* per task: its vertex, or ORR_NONE */
	igraph_vector_int_t edges;
};

static void stuck_edge(struct stuck *s, uint32_t from, uint32_t to)
{
	if (s->done[from] || s->done[to])
		return;
	ig.push_back(&s->edges, s->vertex[from]);
	ig.push_back(&s->edges, s->vertex[to]);
}

/* Edges into task t from what it waits for: its predecessor and its sources. */
static void waits_of(struct stuck *s, uint32_t t, uint32_t into)
{
	const struct orr_graph *g = s->g;
	const struct orr_task *task = &g->tasks[t];

	if (t > g->procs[task->proc].first_task)
		stuck_edge(s, t - 1, into);
	for (uint32_t d = task->first_dep; d < task->first_dep + task->ndeps; d++)
		stuck_edge(s, g->deps[d].src, into);
}

static void stuck_edges(struct stuck *s, uint32_t t)
{
	const struct orr_graph *g = s->g;
	const struct orr_task *task = &g->tasks[t];

	waits_of(s, t, t);
	if (task->kind != ORR_TASK_GPU || task->aux == ORR_NONE)
		return;
	/* A member cannot finish before every other member has arrived. */
	for (uint32_t m = 0; m < g->groups[task->aux].n; m++) {
		uint32_t other = g->members[g->groups[task->aux].first + m];

		if (other != t)
			waits_of(s, other, t);
	}
}

static void describe(const struct orr_graph *g, const char *what, const uint32_t *tasks, size_t n,
		     size_t total, struct orr_diag *d)
{
	size_t len = 0;

	len += (size_t)snprintf(d->msg, sizeof(d->msg), "%zu tasks %s:", total, what);
	for (size_t i = 0; i < n && len < sizeof(d->msg); i++) {
		char where[96];

		orr_graph_proc_label(g, g->tasks[tasks[i]].proc, where, sizeof(where));
		len += (size_t)snprintf(d->msg + len, sizeof(d->msg) - len, "%s '%.60s' on %s",
					i ? ";" : "", orr_graph_task_name(g, tasks[i]), where);
	}
	if (n < total && len < sizeof(d->msg))
		snprintf(d->msg + len, sizeof(d->msg) - len, "; and %zu more", total - n);
}

/* The tasks of the largest strongly connected component with more than one task. */
static size_t largest_cycle(const igraph_vector_int_t *memb, const igraph_vector_int_t *size,
			    const uint32_t *task_of, uint32_t *out, size_t max, size_t *ret_total)
{
	igraph_integer_t best = -1, n = 0;

	for (igraph_integer_t c = 0; c < ig.size(size); c++)
		if (VECTOR(*size)[c] > 1 && (best < 0 || VECTOR(*size)[c] > VECTOR(*size)[best]))
			best = c;
	*ret_total = best < 0 ? 0 : (size_t)VECTOR(*size)[best];
	for (igraph_integer_t v = 0; best >= 0 && v < ig.size(memb); v++)
		if (VECTOR(*memb)[v] == best && (size_t)n < max)
			out[n++] = task_of[v];
	return (size_t)n;
}

int orr_graph_explain_stuck(const struct orr_graph *g, const bool *done,
			    struct orr_diag *reterr_diag)
{
	struct stuck s = { .g = g, .done = done };
	uint32_t *task_of = orr_xmalloc((g->ntasks + 1) * sizeof(*task_of)), shown[6];
	igraph_vector_int_t memb, size;
	igraph_t graph;
	size_t nv = 0, n = 0, total = 0;

	s.vertex = orr_xmalloc((g->ntasks + 1) * sizeof(*s.vertex));
	for (uint32_t t = 0; t < g->ntasks; t++) {
		s.vertex[t] = done[t] ? ORR_NONE : (uint32_t)nv;
		if (!done[t])
			task_of[nv++] = t;
	}
	pthread_once(&ig_once, ig_load);
	if (ig.loaded) {
		ig.set_error_handler(ig.error_handler_ignore);
		ig.init(&s.edges, 0);
		for (size_t v = 0; v < nv; v++)
			stuck_edges(&s, task_of[v]);
		ig.init(&memb, 0);
		ig.init(&size, 0);
		if (ig.create(&graph, &s.edges, (igraph_integer_t)nv, IGRAPH_DIRECTED) ==
		    IGRAPH_SUCCESS) {
			if (ig.components(&graph, &memb, &size, NULL, IGRAPH_STRONG) ==
			    IGRAPH_SUCCESS)
				n = largest_cycle(&memb, &size, task_of, shown, 6, &total);
			ig.graph_destroy(&graph);
		}
		ig.destroy(&memb);
		ig.destroy(&size);
		ig.destroy(&s.edges);
	}
	orr_diag_set(reterr_diag, ORR_ECYCLE, "", -1, -1, "%zu tasks can never run", nv);
	if (n && reterr_diag)
		describe(g, "wait for each other", shown, n, total, reterr_diag);
	else if (nv && reterr_diag)
		describe(g, "can never run, the first", task_of, nv < 6 ? nv : 6, nv, reterr_diag);
	free(s.vertex);
	free(task_of);
	return ORR_ECYCLE;
}

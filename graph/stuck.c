/* SPDX-License-Identifier: MIT */
/*
 * Why a replay cannot go on: the tasks that never ran and what each waits for (the
 * replay's own waits, orr_graph_explain_stuck()), one cycle among them named wait by
 * wait, and, with igraph, how many tasks wait for each other.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <igraph.h>

#include "internal.h"
#include "banned.h"

/* Tasks of a cycle named one by one; a thread's or stream's run in order counts one. */
#define SHOWN_STEPS 5

/*
 * Stuck tasks igraph counts the components of, at most: its graph takes about 70 bytes
 * a task (the edge list handed over, igraph_t's four edge and two vertex indices of 8
 * bytes, the search's own), so a cycle near the start of a 1,024-rank replay (10^8
 * tasks stuck) would need 7 GB beside the replay's own.  Past it the cycle is named
 * without the count, as without the library.
 */
#define IGRAPH_MAX_TASKS (UINT32_C(1) << 24)

/*
 * The igraph functions the explanation uses, from libigraph.so.3 (Debian's libigraph3),
 * loaded when a replay first cannot go on: no start loads igraph and the BLAS, LAPACK,
 * ARPACK and GLPK it links (docs/performance.md), and liborrery.so needs no
 * position-independent igraph archive (Debian's libigraph.a is not one).  Without the
 * library the cycle is still named; only the count of the tasks that wait for each
 * other is left out.
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

/* The stuck tasks as vertices, and each one's waits (indices into waits[]) as its edges. */
struct stuck {
	const struct orr_graph *g;
	const struct orr_stuck_wait *waits;
	uint32_t *vertex;  /* per task: its vertex, or ORR_NONE when done */
	uint32_t *task_of; /* per vertex: its task */
	uint32_t *first;   /* per vertex: its waits are out[first[v] .. first[v + 1]) */
	uint32_t *out;     /* indices into waits[] */
	size_t nv;
	int32_t *comp; /* per vertex: its strongly connected component, or NULL without igraph */
	int32_t best;  /* the largest component of more than one task, or -1 */
	size_t best_n; /* its tasks */
};

static bool usable(const struct stuck *s, const struct orr_stuck_wait *w)
{
	return w->task < s->g->ntasks && w->on < s->g->ntasks && s->vertex[w->task] != ORR_NONE &&
	       s->vertex[w->on] != ORR_NONE;
}

/* The waits of each vertex, by a counting pass (waits[] in any order). */
static void index_waits(struct stuck *s, size_t nwaits)
{
	uint32_t *fill;

	s->first = orr_xcalloc(s->nv + 2, sizeof(*s->first));
	for (size_t i = 0; i < nwaits; i++)
		if (usable(s, &s->waits[i]))
			s->first[s->vertex[s->waits[i].task] + 1]++;
	for (size_t v = 0; v < s->nv; v++)
		s->first[v + 1] += s->first[v];
	s->out = orr_xmalloc(((size_t)s->first[s->nv] + 1) * sizeof(*s->out));
	fill = orr_xmalloc((s->nv + 1) * sizeof(*fill));
	memcpy(fill, s->first, s->nv * sizeof(*fill));
	for (size_t i = 0; i < nwaits; i++)
		if (usable(s, &s->waits[i]))
			s->out[fill[s->vertex[s->waits[i].task]]++] = (uint32_t)i;
	free(fill);
}

/* igraph's strongly connected components of the waits; s->comp stays NULL on failure. */
static void components(struct stuck *s)
{
	igraph_vector_int_t edges, memb, size;
	igraph_t graph;
	bool ok = false;

	pthread_once(&ig_once, ig_load);
	if (!ig.loaded)
		return;
	ig.set_error_handler(ig.error_handler_ignore);
	ig.init(&edges, 0);
	ig.init(&memb, 0);
	ig.init(&size, 0);
	for (size_t v = 0; v < s->nv; v++)
		for (uint32_t e = s->first[v]; e < s->first[v + 1]; e++) {
			ig.push_back(&edges, (igraph_integer_t)v);
			ig.push_back(&edges, s->vertex[s->waits[s->out[e]].on]);
		}
	if (ig.create(&graph, &edges, (igraph_integer_t)s->nv, IGRAPH_DIRECTED) == IGRAPH_SUCCESS) {
		ok = ig.components(&graph, &memb, &size, NULL, IGRAPH_STRONG) == IGRAPH_SUCCESS &&
		     (size_t)ig.size(&memb) == s->nv;
		ig.graph_destroy(&graph);
	}
	if (ok) {
		s->comp = orr_xmalloc((s->nv + 1) * sizeof(*s->comp));
		for (size_t v = 0; v < s->nv; v++)
			s->comp[v] = (int32_t)VECTOR(memb)[v];
		for (igraph_integer_t c = 0; c < ig.size(&size); c++)
			if (VECTOR(size)[c] > 1 && (size_t)VECTOR(size)[c] > s->best_n) {
				s->best = (int32_t)c;
				s->best_n = (size_t)VECTOR(size)[c];
			}
	}
	ig.destroy(&edges);
	ig.destroy(&memb);
	ig.destroy(&size);
}

/* Vertex v's first wait that stays in the chosen component (any, without one). */
static uint32_t next_wait(const struct stuck *s, size_t v)
{
	for (uint32_t e = s->first[v]; e < s->first[v + 1]; e++) {
		const struct orr_stuck_wait *w = &s->waits[s->out[e]];

		if (s->best < 0 || s->comp[s->vertex[w->on]] == s->best)
			return s->out[e];
	}
	return ORR_NONE;
}

/*
 * One cycle of waits: from a task of the largest component (the first stuck task
 * without one), each task's first wait followed until a task comes again.  Every
 * stuck task waits for another stuck task (the replay ran all it could), so the walk
 * ends on a cycle; the waits of the cycle go into cyc[], and their count is returned
 * (0 when a task waits for nothing the walk can follow).
 */
static size_t find_cycle(const struct stuck *s, uint32_t *cyc)
{
	uint32_t *seen = orr_xcalloc(s->nv + 1, sizeof(*seen)), *path = cyc;
	size_t v = 0, n = 0, len = 0;

	if (s->best >= 0)
		while (s->comp[v] != s->best)
			v++;
	for (;;) {
		uint32_t w = next_wait(s, v);

		if (w == ORR_NONE)
			break;
		seen[v] = (uint32_t)++n;
		path[n - 1] = w;
		v = s->vertex[s->waits[w].on];
		if (seen[v]) {
			len = n - (seen[v] - 1);
			memmove(cyc, &path[seen[v] - 1], len * sizeof(*cyc));
			break;
		}
	}
	free(seen);
	return len;
}

struct text {
	char *buf;
	size_t size, len;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len >= t->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	t->len = n < 0 ? t->size : t->len + (size_t)n;
}

/* The measured start of a task, in ms after its rank's first event. */
static double at_ms(const struct orr_graph *g, uint32_t task)
{
	const struct orr_rank *r = g->ranks[g->procs[g->tasks[task].proc].rank].rank;

	return (double)(orr_graph_task_start(g, task) - r->events[0].start_ns) / 1e6;
}

static void put_task(struct text *t, const struct orr_graph *g, uint32_t task, bool where)
{
	char label[96];

	put(t, "'%.48s'", orr_graph_task_name(g, task));
	if (where) {
		orr_graph_proc_label(g, g->tasks[task].proc, label, sizeof(label));
		put(t, " on %s", label);
	}
	put(t, " (at %.3f ms)", at_ms(g, task));
}

static bool in_order(uint8_t kind)
{
	return kind == ORR_DEP_THREAD || kind == ORR_DEP_STREAM;
}

/* "waits for ..." of one wait that is not its processor's order. */
static const char *why(uint8_t kind)
{
	switch (kind) {
	case ORR_DEP_LAUNCH:
		return "its launch";
	case ORR_DEP_CROSS_STREAM:
		return "the work of another stream it was ordered after (D4)";
	case ORR_DEP_SYNC:
		return "GPU work it synchronizes with (D5)";
	case ORR_DEP_CROSS_THREAD:
		return "the call that hands it its work (D6)";
	case ORR_DEP_CROSS_RANK:
		return "a member of its collective (D7)";
	default:
		return "";
	}
}

/*
 * The cycle, wait by wait, from the first task after a wait that is not a processor's
 * order; a run of tasks in order on one thread or stream is named by its two ends.
 */
static void put_cycle(struct text *t, const struct stuck *s, const uint32_t *cyc, size_t len)
{
	const struct orr_graph *g = s->g;
	size_t start = 0, shown = 0, i = 0;

	while (start < len && in_order(s->waits[cyc[(start + len - 1) % len]].kind))
		start++;
	start %= len;
	put_task(t, g, s->waits[cyc[start]].task, true);
	while (i < len) {
		const struct orr_stuck_wait *w = &s->waits[cyc[(start + i) % len]];
		size_t run = 0;

		while (i + run < len && in_order(s->waits[cyc[(start + i + run) % len]].kind))
			run++;
		if (run) {
			const struct orr_stuck_wait *last =
				&s->waits[cyc[(start + i + run - 1) % len]];

			put(t, ", which waits for the %zu %s before it on its %s, back to ", run,
			    run == 1 ? "task" : "tasks",
			    w->kind == ORR_DEP_THREAD ? "thread" : "stream");
			put_task(t, g, last->on, false);
			i += run;
		} else {
			put(t, ", which waits for %s: ", why(w->kind));
			i++;
			if (i == len) {
				put(t, "the first, ");
				put_task(t, g, w->on, false);
			} else if (++shown >= SHOWN_STEPS) {
				put(t, "...; %zu more waits close the cycle", len - i);
				return;
			} else {
				put_task(t, g, w->on, true);
			}
		}
	}
}

/*
 * A wait of the cycle whose task starts before the one it waits for in the trace
 * itself: a kernel before its launch, a call before the call that hands it its work.
 * No run records that; two clocks disagree, or the file was edited.
 */
static void put_contradiction(struct text *t, const struct stuck *s, const uint32_t *cyc,
			      size_t len)
{
	const struct orr_graph *g = s->g;

	for (size_t i = 0; i < len; i++) {
		const struct orr_stuck_wait *w = &s->waits[cyc[i]];

		if (w->kind != ORR_DEP_LAUNCH && w->kind != ORR_DEP_CROSS_STREAM &&
		    w->kind != ORR_DEP_CROSS_THREAD)
			continue;
		if (orr_graph_task_start(g, w->task) >= orr_graph_task_start(g, w->on))
			continue;
		put(t, ": ");
		put_task(t, g, w->task, true);
		put(t, " starts %.3f ms before ",
		    (double)(orr_graph_task_start(g, w->on) - orr_graph_task_start(g, w->task)) /
			    1e6);
		put_task(t, g, w->on, true);
		put(t,
		    ", which it waits for (%s): no run records that, so two clocks disagree or "
		    "the file was edited",
		    orr_dep_kind_name((enum orr_dep_kind)w->kind));
		return;
	}
}

/* Without a cycle to name: the first stuck task of each of the first processors. */
static void put_first(struct text *t, const struct stuck *s)
{
	size_t shown = 0;

	put(t, ", the first:");
	for (size_t v = 0; v < s->nv && shown < SHOWN_STEPS; v++) {
		uint32_t task = s->task_of[v];

		if (v && s->g->tasks[s->task_of[v - 1]].proc == s->g->tasks[task].proc)
			continue;
		put(t, "%s ", shown++ ? ";" : "");
		put_task(t, s->g, task, true);
	}
}

int orr_graph_explain_stuck(const struct orr_graph *g, const bool *done,
			    const struct orr_stuck_wait *waits, size_t nwaits,
			    struct orr_diag *reterr_diag)
{
	struct stuck s = { .g = g, .waits = waits, .best = -1 };
	uint32_t *cyc;
	size_t len;
	struct text t;

	s.vertex = orr_xmalloc((g->ntasks + 1) * sizeof(*s.vertex));
	s.task_of = orr_xmalloc((g->ntasks + 1) * sizeof(*s.task_of));
	for (uint32_t i = 0; i < g->ntasks; i++) {
		s.vertex[i] = done[i] ? ORR_NONE : (uint32_t)s.nv;
		if (!done[i])
			s.task_of[s.nv++] = i;
	}
	index_waits(&s, nwaits);
	if (s.nv && s.nv <= IGRAPH_MAX_TASKS)
		components(&s);
	cyc = orr_xmalloc((s.nv + 1) * sizeof(*cyc));
	len = s.nv ? find_cycle(&s, cyc) : 0;
	orr_diag_set(reterr_diag, ORR_ECYCLE, "", -1, -1, "%zu tasks can never run", s.nv);
	if (reterr_diag && s.nv) {
		t = (struct text){ reterr_diag->msg, sizeof(reterr_diag->msg),
				   strlen(reterr_diag->msg) };
		if (len) {
			put_contradiction(&t, &s, cyc, len);
			if (s.best >= 0)
				put(&t, "; %zu tasks wait for each other, as in this cycle: ",
				    s.best_n);
			else
				put(&t, "; they wait on this cycle: ");
			put_cycle(&t, &s, cyc, len);
			if (t.len >= t.size - 1)
				memcpy(t.buf + t.size - 4, "...", 4);
		} else {
			put_first(&t, &s);
		}
	}
	free(cyc);
	free(s.comp);
	free(s.out);
	free(s.first);
	free(s.task_of);
	free(s.vertex);
	return ORR_ECYCLE;
}

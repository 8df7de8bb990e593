/* SPDX-License-Identifier: MIT */
/*
 * Communication kernels by name.  A GPU task with a collective record (an NCCL kernel,
 * or one the framework tagged) is communication already (tasks.c).  Libraries that
 * bypass NCCL move data in kernels of their own with no such record: DeepEP's
 * dispatch/combine kernels (namespaces deep_ep:: and dpsk::ep::), NVSHMEM's, and NCCL
 * kernels whose name lacks the usual prefix.  Those names, and the user's
 * orr_graph_options.comm_globs (orrery replay --comm), mark a GPU task
 * ORR_TASK_F_COMM too: the breakdown counts it as communication and the critical path
 * lists it as such.  Matching is by fnmatch(3) once per distinct name, cached.
 */
#include <fnmatch.h>
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

static const char *const builtin[] = {
	"nccl*",        "*ncclDevKernel*", "*ncclKernel*", /* NCCL */
	"*nvshmem*",                                       /* NVSHMEM (and NCCL's use of it) */
	"*deep_ep::*",  "*dpsk::ep::*",                    /* DeepEP, demangled */
	"_Z*7deep_ep*", "_Z*4dpsk2ep*",                    /* DeepEP, mangled */
};

struct entry {
	uint32_t name;
	bool comm;
};

struct orr__comm_names {
	const char *const *globs;
	size_t nglobs;
	struct entry *v; /* open addressing by name id, at most half full */
	size_t cap, used;
};

static bool matches(const struct orr__comm_names *n, const char *s)
{
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (fnmatch(builtin[i], s, 0) == 0)
			return true;
	for (size_t i = 0; i < n->nglobs; i++)
		if (n->globs[i] && fnmatch(n->globs[i], s, 0) == 0)
			return true;
	return false;
}

static struct entry *slot(struct entry *v, size_t cap, uint32_t name)
{
	size_t h = (name * 2654435761u) & (cap - 1);

	while (v[h].name != ORR_NONE && v[h].name != name)
		h = (h + 1) & (cap - 1);
	return &v[h];
}

static void init_table(struct orr__comm_names *n, size_t cap)
{
	n->v = orr_xmalloc(cap * sizeof(*n->v));
	n->cap = cap;
	for (size_t i = 0; i < cap; i++)
		n->v[i].name = ORR_NONE;
}

/* Doubles the table's capacity, keeping what it knows. */
static void grow(struct orr__comm_names *n)
{
	struct entry *old = n->v;
	size_t cap = n->cap;

	init_table(n, 2 * cap);
	for (size_t i = 0; i < cap; i++)
		if (old[i].name != ORR_NONE)
			*slot(n->v, n->cap, old[i].name) = old[i];
	free(old);
}

static bool is_comm(struct orr__comm_names *n, const struct orr_trace *t, uint32_t name)
{
	struct entry *e = slot(n->v, n->cap, name);

	if (e->name == name)
		return e->comm;
	*e = (struct entry){ name, matches(n, orr_trace_str(t, name)) };
	if (++n->used * 2 <= n->cap)
		return e->comm;
	grow(n);
	return slot(n->v, n->cap, name)->comm;
}

struct orr__comm_names *orr__comm_names_new(const struct orr_graph_options *opts)
{
	struct orr__comm_names *n = orr_xcalloc(1, sizeof(*n));

	if (opts) {
		n->globs = opts->comm_globs;
		n->nglobs = opts->comm_globs ? opts->ncomm_globs : 0;
	}
	init_table(n, 256);
	return n;
}

void orr__comm_names_free(struct orr__comm_names *n)
{
	if (!n)
		return;
	free(n->v);
	free(n);
}

void orr__mark_comm(struct orr__rank_ctx *c)
{
	struct orr_graph *g = c->g;

	for (uint32_t t = c->base; t < c->base + c->ntasks; t++) {
		struct orr_task *task = &g->tasks[t];

		if (task->kind == ORR_TASK_GPU && !(task->flags & ORR_TASK_F_COMM) &&
		    is_comm(g->comm_names, g->trace, c->r->events[task->event].name))
			task->flags |= ORR_TASK_F_COMM;
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * The call tree of a rank's threads: each CPU event's innermost enclosing event on the
 * same thread (an op inside an op, a runtime call inside the op that made it).  Kineto
 * and the native format give no parent ids, only times, and the profiler writes a
 * child's interval inside its parent's on one thread; events that overlap without
 * nesting (clock rounding) are not nested.
 */
#include <fnmatch.h>
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

struct item {
	int64_t start, end;
	uint32_t place, event;
};

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->place != y->place)
		return x->place < y->place ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end) /* the enclosing one first */
		return x->end > y->end ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

static bool on_thread(const struct orr_rank *r, const struct orr_event *e)
{
	return e->place < r->nplaces && r->places[e->place].kind == ORR_PLACE_THREAD &&
	       e->kind != ORR_EVENT_MARKER;
}

uint32_t *orr__call_parents(const struct orr_rank *r)
{
	uint32_t *parent = orr_xmalloc((r->nevents ? r->nevents : 1) * sizeof(*parent));
	struct item *v = orr_xmalloc((r->nevents ? r->nevents : 1) * sizeof(*v));
	size_t n = 0, depth = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		parent[i] = ORR_NONE;
		if (on_thread(r, e))
			v[n++] = (struct item){ e->start_ns, orr_time_add(e->start_ns, e->dur_ns),
						e->place, (uint32_t)i };
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_item);
	/* v doubles as the stack: its first `depth` slots hold the open ancestors' items. */
	for (size_t i = 0; i < n; i++) {
		struct item it = v[i];

		while (depth && (v[depth - 1].place != it.place || v[depth - 1].end < it.end))
			depth--;
		parent[it.event] = depth ? v[depth - 1].event : ORR_NONE;
		v[depth++] = it;
	}
	free(v);
	return parent;
}

bool orr__name_is(const char *name, const char *const *globs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(globs[i], name, FNM_CASEFOLD) == 0)
			return true;
	return false;
}

/* Autograd runs the backward pass: its ops sit inside evaluate_function or *Backward*. */
static bool is_backward_name(const char *name)
{
	static const char *const globs[] = { "autograd::engine::evaluate_function*", "*Backward",
					     "*Backward[0-9]*", "*_backward" };

	return orr__name_is(name, globs, sizeof(globs) / sizeof(globs[0]));
}

uint32_t orr__backward_node(const struct orr_trace *t, const struct orr_rank *r,
			    const uint32_t *parent, uint32_t e)
{
	for (int depth = 0; e != ORR_NONE && e < r->nevents && depth < 64; depth++, e = parent[e])
		if (is_backward_name(orr_trace_str(t, r->events[e].name)))
			return e;
	return ORR_NONE;
}

bool orr__in_backward(const struct orr_trace *t, const struct orr_rank *r, const uint32_t *parent,
		      uint32_t e)
{
	return orr__backward_node(t, r, parent, e) != ORR_NONE;
}

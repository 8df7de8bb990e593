/* SPDX-License-Identifier: MIT */
/*
 * --scale: per GPU task, the product of the factors whose glob matches its name, each
 * name's product computed once (a hash table of names, grown as it fills); times the
 * task's own factor when the caller gives them (the estimator's re-timing).  Per CPU
 * task, the caller's CPU factor (on its duration and its gap), else 1.
 */
#include <fnmatch.h>
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

struct factor {
	uint32_t name;
	float factor;
};

static float name_factor(const struct orr_graph *g, const struct orr_replay_options *o,
			 uint32_t name)
{
	const char *s = orr_trace_str(orr_graph_trace(g), name);
	double f = 1;

	for (size_t i = 0; i < o->nscales; i++)
		if (fnmatch(o->scales[i].glob, s, 0) == 0)
			f *= o->scales[i].factor;
	/* Several large factors would overflow a float: past this any duration is refused. */
	return f < (double)ORR_TIME_MAX ? (float)f : (float)ORR_TIME_MAX;
}

float *orr__task_scales(const struct orr_graph *g, const struct orr_replay_options *o)
{
	size_t n = orr_graph_task_count(g), cap = 1024, used = 0;
	struct factor *tab = orr_xmalloc(cap * sizeof(*tab));
	float *f = orr_xmalloc((n + 1) * sizeof(*f));

	for (size_t i = 0; i < cap; i++)
		tab[i].name = ORR_NONE;
	for (size_t t = 0; t < n; t++) {
		uint32_t name = orr_graph_task_event(g, (uint32_t)t)->name;
		size_t h = (name * 2654435761u) & (cap - 1);

		f[t] = 1;
		if (orr_graph_tasks(g)[t].kind != ORR_TASK_GPU)
			continue;
		while (tab[h].name != ORR_NONE && tab[h].name != name)
			h = (h + 1) & (cap - 1);
		if (tab[h].name == ORR_NONE) {
			tab[h] = (struct factor){ name, name_factor(g, o, name) };
			if (++used * 2 > cap) {
				/* Start over with a larger table; the factors are recomputed once. */
				free(tab);
				cap *= 4;
				tab = orr_xmalloc(cap * sizeof(*tab));
				for (size_t i = 0; i < cap; i++)
					tab[i].name = ORR_NONE;
				used = 0;
				t = (size_t)-1;
				continue;
			}
		}
		f[t] = tab[h].factor;
	}
	free(tab);
	return f;
}

float *orr__replay_factors(const struct orr_graph *g, const struct orr_replay_options *o)
{
	size_t n = orr_graph_task_count(g);
	float *f;

	if (!o || (!o->nscales && !o->task_factors && !o->cpu_factors))
		return NULL;
	f = o->nscales ? orr__task_scales(g, o) : NULL;
	if (!f) {
		f = orr_xmalloc((n + 1) * sizeof(*f));
		for (size_t t = 0; t < n; t++)
			f[t] = 1;
	}
	for (size_t t = 0; o->task_factors && t < n; t++)
		if (orr_graph_tasks(g)[t].kind == ORR_TASK_GPU)
			f[t] *= o->task_factors[t];
	for (size_t t = 0; o->cpu_factors && t < n; t++)
		if (orr_graph_tasks(g)[t].kind == ORR_TASK_CPU)
			f[t] *= o->cpu_factors[t];
	return f;
}

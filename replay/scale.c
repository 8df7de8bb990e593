/* SPDX-License-Identifier: MIT */
/*
 * --scale: per GPU task, the product of the factors whose glob matches its name, each
 * name's product computed once (a hash table of names, grown as it fills); times the
 * task's own factor when the caller gives them (the estimator's re-timing).  Per CPU
 * task, the caller's CPU factor (on its duration and its gap), else 1.  And the bound
 * the factors must keep the replay within (orr__check_range()).
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
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

/* |x| as an unsigned sum's term, without overflowing at INT64_MIN. */
static uint64_t mag(int64_t x)
{
	return x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
}

/* Unscaled and both under 2^53 ns: what the check adds for the task is exact in integers. */
static bool plain(const struct orr_task *task, const float *scale)
{
	const uint64_t big = UINT64_C(1) << 53;

	return !scale && mag(task->dur_ns) < big && mag(task->gap_ns) < big;
}

/*
 * Factors in [0, ORR_SCALE_MAX], and a predicted timeline within ORR_TIME_MAX of its
 * first start: no predicted time is later than the latest first start plus every
 * duration, gap, latency and return time, so when those add up to no more than
 * ORR_TIME_MAX no sum in the simulation overflows.
 */
int orr__check_range(const struct orr_graph *g, const float *scale,
		     const struct orr_replay_options *o, struct orr_diag *reterr_diag)
{
	const struct orr_task *tasks = orr_graph_tasks(g);
	const struct orr_dep *deps = orr_graph_deps(g);
	const struct orr_wait *waits = orr_graph_waits(g);
	size_t n = orr_graph_task_count(g), nd = 0, nw = 0;
	struct orr_graph_stats st;
	uint64_t total = 0;
	double gs;

	for (size_t i = 0; o && i < o->nscales; i++)
		if (!(o->scales[i].factor >= 0 && o->scales[i].factor <= ORR_SCALE_MAX))
			return orr_diag_set(reterr_diag, -ERANGE, NULL, -1, -1,
					    "scale factor %g for '%.64s' is not from 0 to %g",
					    o->scales[i].factor, o->scales[i].glob, ORR_SCALE_MAX);
	for (size_t t = 0; o && o->task_factors && t < n; t++)
		if (!(o->task_factors[t] >= 0 && o->task_factors[t] <= ORR_SCALE_MAX))
			return orr_diag_set(reterr_diag, -ERANGE, NULL, -1, -1,
					    "factor %g of task %zu is not from 0 to %g",
					    (double)o->task_factors[t], t, ORR_SCALE_MAX);
	for (size_t t = 0; o && o->cpu_factors && t < n; t++)
		if (!(o->cpu_factors[t] >= 0 && o->cpu_factors[t] <= ORR_SCALE_MAX))
			return orr_diag_set(reterr_diag, -ERANGE, NULL, -1, -1,
					    "CPU factor %g of task %zu is not from 0 to %g",
					    (double)o->cpu_factors[t], t, ORR_SCALE_MAX);
	for (size_t t = 0; t < n; t++) {
		double d = (double)tasks[t].dur_ns * (scale ? scale[t] : 1);

		/* The general case below gives the same sum: doubles hold these exactly,
		 * llround() and the casts give them back (most tasks; no llround() each). */
		if (plain(&tasks[t], scale)) {
			total += mag(tasks[t].dur_ns) + mag(tasks[t].gap_ns);
		} else if (d > (double)ORR_TIME_MAX) {
			return orr_diag_set(
				reterr_diag, -ERANGE, NULL, -1, -1,
				"'%.64s' scaled by %g lasts %.3g ns, past 2^62 ns",
				orr_trace_str(orr_graph_trace(g),
					      orr_graph_task_event(g, (uint32_t)t)->name),
				scale ? scale[t] : 1.0, d);
		} else {
			gs = (double)mag(tasks[t].gap_ns) *
			     (scale && tasks[t].kind == ORR_TASK_CPU ? scale[t] : 1);
			total += mag(orr__scaled(tasks[t].dur_ns, scale ? scale[t] : 1)) +
				 (gs < (double)ORR_TIME_MAX ? (uint64_t)gs
							    : (uint64_t)ORR_TIME_MAX + 1);
		}
		nd = tasks[t].first_dep + tasks[t].ndeps > nd ? tasks[t].first_dep + tasks[t].ndeps
							      : nd;
		if (total > ORR_TIME_MAX)
			break;
	}
	for (size_t d = 0; d < nd && total <= ORR_TIME_MAX; d++)
		total += mag(deps[d].lat_ns);
	orr_graph_get_stats(g, &st);
	for (size_t k = 0; k < ORR_WAIT_KIND_COUNT; k++)
		nw += st.waits[k];
	for (size_t w = 0; w < nw && total <= ORR_TIME_MAX; w++)
		total += mag(waits[w].ret_ns);
	if (total > ORR_TIME_MAX)
		return orr_diag_set(reterr_diag, -ERANGE, NULL, -1, -1,
				    "the %sdurations, gaps and latencies add up to more than 2^62 "
				    "ns (about 146 years)",
				    scale ? "scaled " : "");
	return 0;
}

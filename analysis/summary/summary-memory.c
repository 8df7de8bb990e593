/* SPDX-License-Identifier: MIT */
/*
 * orrery summary's memory and counters (docs/orrery-summary.md, "Memory", "Counters"):
 * each rank's counter series (the trace's counter events: min, mean, max, a timeline),
 * and its CUDA caching
 * allocator over the capture, from the profiler's "[memory]" events (profile_memory=True):
 * its peaks, when they happen, a timeline of bins, and the peak against the estimator's
 * memory model of the configuration the trace recorded, when it holds a transformer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "summary-internal.h"
#include "banned.h"

/* The step of r whose window holds ts: its number, -1 outside every step. */
static int64_t step_at(const struct orr_trace *t, const struct orr_rank *r, int64_t ts)
{
	struct orr_step *s = NULL;
	size_t n = 0;
	int64_t step = -1;

	if (orr_rank_steps(t, r, &s, &n) == 0)
		for (size_t i = 0; i < n && step < 0; i++)
			if (ts >= s[i].start_ns && ts <= s[i].end_ns)
				step = s[i].step;
	free(s);
	return step;
}

/* Sample i of v (n of them, in time order): its time and value. */
typedef void (*point_fn)(const void *v, size_t i, int64_t *ret_ts, double *ret_value);

static void timeline(const void *v, size_t n, point_fn at, struct orr_sum_timeline *ret)
{
	int64_t t0, t1, ts;
	double last, x;
	size_t k = 0;

	at(v, 0, &t0, &last);
	at(v, n - 1, &t1, &x);
	ret->t0_ns = t0;
	ret->bin_ns = t1 > t0 ? (t1 - t0 + ORR_SUM_MEM_BINS - 1) / ORR_SUM_MEM_BINS : 1;
	for (size_t b = 0; b < ORR_SUM_MEM_BINS; b++) {
		int64_t end = t0 + (int64_t)(b + 1) * ret->bin_ns;
		double top = last;
		bool any = false;

		for (; k < n; k++) {
			at(v, k, &ts, &x);
			if (ts >= end && b + 1 < ORR_SUM_MEM_BINS)
				break;
			top = any ? fmax(top, x) : x;
			any = true;
			last = x;
		}
		ret->v[b] = top;
	}
}

static void allocated_at(const void *v, size_t i, int64_t *ret_ts, double *ret_value)
{
	const struct orr_mem_sample *m = v;

	*ret_ts = m[i].ts_ns;
	*ret_value = (double)m[i].allocated_bytes;
}

static void reserved_at(const void *v, size_t i, int64_t *ret_ts, double *ret_value)
{
	const struct orr_mem_sample *m = v;

	*ret_ts = m[i].ts_ns;
	*ret_value = (double)m[i].reserved_bytes;
}

static void counter_at(const void *v, size_t i, int64_t *ret_ts, double *ret_value)
{
	const struct orr_counter_sample *c = v;

	*ret_ts = c[i].ts_ns;
	*ret_value = c[i].value;
}

/*
 * What every rank's memory model shares, found once: the collectives the structures
 * read, and the GEMM precision of the trace over each GPU its ranks ran on.
 */
struct per_trace {
	struct orr_coll_obs *o;
	size_t no;
	const struct orr_gpu_spec **gpu;
	enum orr_dtype *p;
	size_t n;
};

static enum orr_dtype precision_over(const struct orr_graph *g, struct per_trace *pc,
				     const struct orr_gpu_spec *gpu)
{
	for (size_t i = 0; i < pc->n; i++)
		if (pc->gpu[i] == gpu)
			return pc->p[i];
	/* each rank adds at most one: the arrays hold a GPU per rank */
	pc->gpu[pc->n] = gpu;
	pc->p[pc->n] = orr_gemm_trace_precision(g, gpu);
	return pc->p[pc->n++];
}

/* The estimator's memory of the recorded configuration, when the trace gives it. */
static void model(const struct orr_summary *s, size_t k, struct per_trace *pc,
		  struct orr_sum_mem *m)
{
	struct orr_train_config c;
	struct orr_memory mem;
	struct orr_structure st;
	const struct orr_gpu_spec *gpu;

	m->model_bytes = m->model_state_bytes = m->model_activation_bytes = NAN;
	/* Not orr_rank_fit_run(): its kernel, collective and parts fits took two thirds of
	 * orrery summary's time on a large trace, for nothing used here.  The collectives
	 * and the precision (the trace's GEMMs', one per GPU) are every rank's: found
	 * again for each rank, they took 62 % of summary's time on eight ranks with memory. */
	gpu = orr_rank_gpu(s->g, k);
	orr_structure_recover_obs(s->g, k, pc->o, pc->no, &st);
	if (orr_train_config_from_structure(&st, &c, &m->model_missing) == 0) {
		c.precision = precision_over(s->g, pc, gpu);
		if (orr_memory_estimate(&c, gpu, 0, &mem) == 0) {
			m->model_bytes = mem.total_bytes;
			m->model_state_bytes = mem.model_bytes;
			m->model_activation_bytes = mem.activation_bytes;
		}
	}
}

static void rank_memory(const struct orr_summary *s, size_t k, struct per_trace *pc,
			struct orr_sum_mem *m)
{
	const struct orr_rank *r = orr_graph_get_rank(s->g, k)->rank;
	size_t pa = 0, pr = 0;

	m->rank = r->rank;
	m->device = r->mems[0].device;
	m->samples = r->nmems;
	for (size_t i = 1; i < r->nmems; i++) {
		if (r->mems[i].allocated_bytes > r->mems[pa].allocated_bytes)
			pa = i;
		if (r->mems[i].reserved_bytes > r->mems[pr].reserved_bytes)
			pr = i;
	}
	m->peak_allocated = r->mems[pa].allocated_bytes;
	m->peak_allocated_ns = r->mems[pa].ts_ns;
	m->peak_allocated_step = step_at(orr_graph_trace(s->g), r, m->peak_allocated_ns);
	m->peak_reserved = r->mems[pr].reserved_bytes;
	timeline(r->mems, r->nmems, allocated_at, &m->allocated);
	timeline(r->mems, r->nmems, reserved_at, &m->reserved);
	model(s, k, pc, m);
}

/* One series, v[0..n) (in time order): its statistics and bins. */
static void counter_series(const struct orr_counter_sample *v, size_t n, struct orr_sum_counter *c)
{
	double sum = 0;

	c->name = v[0].name;
	c->series = v[0].series;
	c->samples = n;
	c->min = c->max = v[0].value;
	/* each sample over n first: two samples of 1e308 add up past a double */
	for (size_t i = 0; i < n; i++) {
		c->min = fmin(c->min, v[i].value);
		c->max = fmax(c->max, v[i].value);
		sum += v[i].value / (double)n;
	}
	c->mean = fmin(fmax(sum, c->min), c->max);
	timeline(v, n, counter_at, &c->bins);
}

/* A rank's counter series: its samples are sorted by name, series and time. */
static void rank_counters(struct orr_summary *s, const struct orr_rank *r)
{
	for (size_t i = 0, j; i < r->ncounters; i = j) {
		for (j = i + 1; j < r->ncounters && r->counters[j].name == r->counters[i].name &&
				r->counters[j].series == r->counters[i].series;
		     j++)
			;
		s->counters = orr_xrealloc(s->counters, (s->ncounters + 1) * sizeof(*s->counters));
		memset(&s->counters[s->ncounters], 0, sizeof(*s->counters));
		s->counters[s->ncounters].rank = r->rank;
		counter_series(&r->counters[i], j - i, &s->counters[s->ncounters++]);
	}
}

void orr__summary_memory(struct orr_summary *s, const struct orr_select *sel)
{
	struct per_trace pc = { .gpu = orr_xcalloc(s->nranks + 1, sizeof(*pc.gpu)),
				.p = orr_xcalloc(s->nranks + 1, sizeof(*pc.p)) };
	bool any = false;

	for (size_t k = 0; k < s->nranks && !any; k++)
		any = orr_select_rank(sel, orr_graph_get_rank(s->g, k)->rank->rank) &&
		      orr_graph_get_rank(s->g, k)->rank->nmems;
	if (any)
		pc.no = orr_coll_observe(s->g, &pc.o);

	for (size_t k = 0; k < s->nranks; k++) {
		const struct orr_rank *r = orr_graph_get_rank(s->g, k)->rank;

		if (!orr_select_rank(sel, r->rank))
			continue;
		rank_counters(s, r);
		if (!r->nmems)
			continue;
		s->mem = orr_xrealloc(s->mem, (s->nmem + 1) * sizeof(*s->mem));
		memset(&s->mem[s->nmem], 0, sizeof(*s->mem));
		rank_memory(s, k, &pc, &s->mem[s->nmem++]);
	}
	free(pc.o);
	free(pc.gpu);
	free(pc.p);
}

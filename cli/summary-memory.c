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

#include "cli.h"
#include "estimate.h"
#include "fit.h"
#include "replay-common.h"
#include "summary.h"
#include "banned.h"

#define GIB 1073741824.0

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

static void timeline(const void *v, size_t n, point_fn at, struct sum_timeline *ret)
{
	int64_t t0, t1, ts;
	double last, x;
	size_t k = 0;

	at(v, 0, &t0, &last);
	at(v, n - 1, &t1, &x);
	ret->t0_ns = t0;
	ret->bin_ns = t1 > t0 ? (t1 - t0 + SUM_MEM_BINS - 1) / SUM_MEM_BINS : 1;
	for (size_t b = 0; b < SUM_MEM_BINS; b++) {
		int64_t end = t0 + (int64_t)(b + 1) * ret->bin_ns;
		double top = last;
		bool any = false;

		for (; k < n; k++) {
			at(v, k, &ts, &x);
			if (ts >= end && b + 1 < SUM_MEM_BINS)
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

/* The estimator's memory of the recorded configuration, when the trace gives it. */
static void model(const struct summary *s, size_t k, struct sum_mem *m)
{
	struct orr_train_config c;
	struct orr_memory mem;
	struct orr_rank_fit f;

	m->model_bytes = m->model_state_bytes = m->model_activation_bytes = NAN;
	orr_rank_fit_run(s->g, k, s->path, NULL, 0, &f);
	if (orr_train_config_from_structure(&f.st, &c, &m->model_missing) == 0) {
		c.precision = f.gemm_err ? ORR_DTYPE_BF16 : orr_gemm_precision(&f.gemm);
		if (orr_memory_estimate(&c, f.gpu, 0, &mem) == 0) {
			m->model_bytes = mem.total_bytes;
			m->model_state_bytes = mem.model_bytes;
			m->model_activation_bytes = mem.activation_bytes;
		}
	}
	orr_rank_fit_release(&f);
}

static void rank_memory(const struct summary *s, size_t k, struct sum_mem *m)
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
	model(s, k, m);
}

/* One series, v[0..n) (in time order): its statistics and bins. */
static void counter_series(const struct orr_counter_sample *v, size_t n, struct sum_counter *c)
{
	double sum = 0;

	c->name = v[0].name;
	c->series = v[0].series;
	c->samples = n;
	c->min = c->max = v[0].value;
	for (size_t i = 0; i < n; i++) {
		c->min = fmin(c->min, v[i].value);
		c->max = fmax(c->max, v[i].value);
		sum += v[i].value;
	}
	c->mean = sum / (double)n;
	timeline(v, n, counter_at, &c->bins);
}

/* A rank's counter series: its samples are sorted by name, series and time. */
static void rank_counters(struct summary *s, const struct orr_rank *r)
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

void summary_memory(struct summary *s, const struct cli_select *sel)
{
	for (size_t k = 0; k < s->nranks; k++) {
		const struct orr_rank *r = orr_graph_get_rank(s->g, k)->rank;

		if (!cli_selected_rank(sel, r->rank))
			continue;
		rank_counters(s, r);
		if (!r->nmems)
			continue;
		s->mem = orr_xrealloc(s->mem, (s->nmem + 1) * sizeof(*s->mem));
		memset(&s->mem[s->nmem], 0, sizeof(*s->mem));
		rank_memory(s, k, &s->mem[s->nmem++]);
	}
}

static const char *interned(const struct summary *s, uint32_t id)
{
	return orr_trace_str(orr_graph_trace(s->g), id);
}

static void counters_text(const struct summary *s)
{
	if (!s->ncounters)
		return;
	printf("\ncounters (the trace's counter events)\n  %5s %8s %12s %12s %12s  %s\n", "rank",
	       "samples", "min", "mean", "max", "counter: series");
	for (size_t i = 0; i < s->ncounters; i++) {
		const struct sum_counter *c = &s->counters[i];

		printf("  %5d %8zu %12.4g %12.4g %12.4g  ", c->rank, c->samples, c->min, c->mean,
		       c->max);
		fputs(cli_text(interned(s, c->name)), stdout);
		fputs(": ", stdout);
		fputs(cli_text(interned(s, c->series)), stdout);
		fputc('\n', stdout);
	}
}

/* A timeline's bins under key: whole numbers (bytes) or as they are. */
static void json_bins(struct json_out *j, const char *key, const struct sum_timeline *t, bool whole)
{
	json_array(j, key);
	for (size_t b = 0; b < SUM_MEM_BINS; b++)
		if (whole)
			json_int(j, NULL, (int64_t)t->v[b]);
		else
			json_double_exact(j, NULL, t->v[b]);
	json_close_array(j);
}

static void counters_json(struct json_out *j, const struct summary *s)
{
	json_array(j, "counters");
	for (size_t i = 0; i < s->ncounters; i++) {
		const struct sum_counter *c = &s->counters[i];

		json_object(j, NULL);
		json_int(j, "rank", c->rank);
		json_str(j, "name", interned(s, c->name));
		json_str(j, "series", interned(s, c->series));
		json_int(j, "samples", (int64_t)c->samples);
		json_double_exact(j, "min", c->min);
		json_double_exact(j, "mean", c->mean);
		json_double_exact(j, "max", c->max);
		json_object(j, "timeline");
		json_int(j, "t0_ns", c->bins.t0_ns);
		json_int(j, "bin_ns", c->bins.bin_ns);
		json_bins(j, "values", &c->bins, false);
		json_close_object(j);
		json_close_object(j);
	}
	json_close_array(j);
}

void summary_memory_text(const struct summary *s)
{
	counters_text(s);
	if (!s->nmem)
		return;
	printf("\nmemory of the CUDA caching allocator (the trace's [memory] events)\n");
	printf("  %5s %6s %8s %13s %8s %13s %s\n", "rank", "device", "samples", "peak alloc GiB",
	       "in step", "peak reserved", "model of the recorded configuration");
	for (size_t i = 0; i < s->nmem; i++) {
		const struct sum_mem *m = &s->mem[i];
		char step[24] = "-", reserved[24] = "-";

		if (m->peak_allocated_step >= 0)
			snprintf(step, sizeof(step), "%lld", (long long)m->peak_allocated_step);
		if (m->peak_reserved >= 0)
			snprintf(reserved, sizeof(reserved), "%.2f",
				 (double)m->peak_reserved / GIB);
		printf("  %5d %6d %8zu %13.2f %8s %13s ", m->rank, m->device, m->samples,
		       (double)m->peak_allocated / GIB, step, reserved);
		if (isfinite(m->model_bytes))
			printf("%.2f GiB (model state %.2f, activations %.2f): %.2fx the peak "
			       "allocated\n",
			       m->model_bytes / GIB, m->model_state_bytes / GIB,
			       m->model_activation_bytes / GIB,
			       m->model_bytes / (double)m->peak_allocated);
		else
			printf("- (no transformer: its %s is unknown)\n",
			       m->model_missing ? m->model_missing : "configuration");
	}
}

/* Bytes as a whole number, null when the model is not known. */
static void json_bytes(struct json_out *j, const char *key, double v)
{
	if (isfinite(v))
		json_int(j, key, (int64_t)llround(v));
	else
		json_str(j, key, NULL);
}

void summary_memory_json(struct json_out *j, const struct summary *s)
{
	counters_json(j, s);
	json_array(j, "memory");
	for (size_t i = 0; i < s->nmem; i++) {
		const struct sum_mem *m = &s->mem[i];

		json_object(j, NULL);
		json_int(j, "rank", m->rank);
		json_int(j, "device", m->device);
		json_int(j, "samples", (int64_t)m->samples);
		json_int(j, "peak_allocated_bytes", m->peak_allocated);
		json_int(j, "peak_allocated_ts_ns", m->peak_allocated_ns);
		if (m->peak_allocated_step >= 0)
			json_int(j, "peak_allocated_step", m->peak_allocated_step);
		else
			json_str(j, "peak_allocated_step", NULL);
		json_bytes(j, "peak_reserved_bytes",
			   m->peak_reserved >= 0 ? (double)m->peak_reserved : NAN);
		json_bytes(j, "model_bytes", m->model_bytes);
		json_bytes(j, "model_state_bytes", m->model_state_bytes);
		json_bytes(j, "model_activation_bytes", m->model_activation_bytes);
		json_object(j, "timeline");
		json_int(j, "t0_ns", m->allocated.t0_ns);
		json_int(j, "bin_ns", m->allocated.bin_ns);
		json_bins(j, "allocated_bytes", &m->allocated, true);
		json_bins(j, "reserved_bytes", &m->reserved, true);
		json_close_object(j);
		json_close_object(j);
	}
	json_close_array(j);
}

/* SPDX-License-Identifier: MIT */
/*
 * orrery summary's memory and counters as text and JSON (the analysis: analysis/summary/
 * summary-memory.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "summary.h"
#include "banned.h"

#define GIB 1073741824.0

static const char *interned(const struct orr_summary *s, uint32_t id)
{
	return orr_trace_str(orr_graph_trace(s->g), id);
}

static void counters_text(const struct orr_summary *s)
{
	if (!s->ncounters)
		return;
	printf("\ncounters (the trace's counter events)\n  %5s %8s %12s %12s %12s  %s\n", "rank",
	       "samples", "min", "mean", "max", "counter: series");
	for (size_t i = 0; i < s->ncounters; i++) {
		const struct orr_sum_counter *c = &s->counters[i];

		printf("  %5d %8zu %12.4g %12.4g %12.4g  ", c->rank, c->samples, c->min, c->mean,
		       c->max);
		fputs(cli_text(interned(s, c->name)), stdout);
		fputs(": ", stdout);
		fputs(cli_text(interned(s, c->series)), stdout);
		fputc('\n', stdout);
	}
}

/* A timeline's bins under key: whole numbers (bytes) or as they are. */
static void json_bins(struct json_out *j, const char *key, const struct orr_sum_timeline *t,
		      bool whole)
{
	json_array(j, key);
	for (size_t b = 0; b < ORR_SUM_MEM_BINS; b++)
		if (whole)
			json_int(j, NULL, (int64_t)t->v[b]);
		else
			json_double_exact(j, NULL, t->v[b]);
	json_close_array(j);
}

static void counters_json(struct json_out *j, const struct orr_summary *s)
{
	json_array(j, "counters");
	for (size_t i = 0; i < s->ncounters; i++) {
		const struct orr_sum_counter *c = &s->counters[i];

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

void summary_memory_text(const struct orr_summary *s)
{
	counters_text(s);
	if (!s->nmem)
		return;
	printf("\nmemory of the CUDA caching allocator (the trace's [memory] events)\n");
	printf("  %5s %6s %8s %13s %8s %13s %s\n", "rank", "device", "samples", "peak alloc GiB",
	       "in step", "peak reserved", "model of the recorded configuration");
	for (size_t i = 0; i < s->nmem; i++) {
		const struct orr_sum_mem *m = &s->mem[i];
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

void summary_memory_json(struct json_out *j, const struct orr_summary *s)
{
	counters_json(j, s);
	json_array(j, "memory");
	for (size_t i = 0; i < s->nmem; i++) {
		const struct orr_sum_mem *m = &s->mem[i];

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

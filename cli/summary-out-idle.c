/* SPDX-License-Identifier: MIT */
/*
 * orrery summary's GPU idle, explained, as text and JSON (the analysis: analysis/summary/
 * summary-idle.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay-common.h"
#include "summary.h"
#include "banned.h"

static double pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

void summary_idle_text(const struct orr_summary *s)
{
	char st[32], a[32], b[32], c[32], d[32];

	printf("\nGPU idle, explained, ms (host wait: what ran next was not launched yet; "
	       "kernel wait: it was, and waited on an event or a collective's peers; other: "
	       "launch latency, queueing)\n");
	printf("%-6s %6s %11s %11s %11s %11s\n", "rank", "step", "idle", "host wait", "kernel wait",
	       "other");
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct orr_sum_step *x = &s->steps[i];

		printf("%-6d %6s %11s %11s %11s %11s\n", x->rank,
		       cli_step_label(x->step, st, sizeof(st)), cli_ms(x->idle.idle_ns, a, 32),
		       cli_ms(x->idle.host_wait_ns, b, 32), cli_ms(x->idle.kernel_wait_ns, c, 32),
		       cli_ms(x->idle.other_ns, d, 32));
	}
	if (s->nstream_idle)
		printf("\nper stream, in the steps: idle explained, ms; queue: launched GPU tasks "
		       "not started yet\n  %-6s %8s %11s %11s %11s %11s %10s %9s\n",
		       "rank", "stream", "idle", "host wait", "kernel wait", "other", "queue mean",
		       "queue max");
	for (size_t i = 0; i < s->nstream_idle; i++) {
		const struct orr_sum_stream_idle *x = &s->stream_idle[i];

		printf("  %-6d %8lld %11s %11s %11s %11s %10.2f %9lld\n", x->rank,
		       (long long)x->stream, cli_ms(x->idle.idle_ns, a, 32),
		       cli_ms(x->idle.host_wait_ns, b, 32), cli_ms(x->idle.kernel_wait_ns, c, 32),
		       cli_ms(x->idle.other_ns, d, 32), x->queue_mean, (long long)x->queue_max);
	}
	printf("\nlaunch delay, us (GPU start less the launch call's start), by kernel class\n"
	       "  %-14s %9s %10s %10s %10s\n",
	       "class", "tasks", "median", "p90", "max");
	for (size_t k = 0; k < ORR_SUM_CLASSES; k++) {
		const struct orr_sum_delays *x = &s->delays[k];

		if (x->n)
			printf("  %-14s %9zu %10.1f %10.1f %10.1f\n", x->name, x->n,
			       (double)x->p50 / 1e3, (double)x->p90 / 1e3, (double)x->max / 1e3);
	}
	printf("\nshort kernels (under %d us: many of them make a step launch-bound)\n"
	       "  %-6s %9s %9s %12s %12s\n",
	       ORR_SUM_SHORT_KERNEL_NS / 1000, "rank", "kernels", "short", "of kernels",
	       "of GPU time");
	for (size_t i = 0; i < s->nshorts; i++) {
		const struct orr_sum_short *x = &s->shorts[i];

		printf("  %-6d %9zu %9zu %11.1f%% %11.1f%%\n", x->rank, x->kernels,
		       x->short_kernels, pct((int64_t)x->short_kernels, (int64_t)x->kernels),
		       pct(x->short_ns, x->kernel_ns));
	}
}

static void json_idle(struct json_out *j, const char *key, const struct orr_sum_idle *x)
{
	json_object(j, key);
	json_int(j, "idle_ns", x->idle_ns);
	json_int(j, "host_wait_ns", x->host_wait_ns);
	json_int(j, "kernel_wait_ns", x->kernel_wait_ns);
	json_int(j, "other_ns", x->other_ns);
	json_close_object(j);
}

void summary_idle_json_step(struct json_out *j, const struct orr_sum_step *x)
{
	json_idle(j, "idle", &x->idle);
}

void summary_idle_json(struct json_out *j, const struct orr_summary *s)
{
	json_array(j, "streams_idle");
	for (size_t i = 0; i < s->nstream_idle; i++) {
		const struct orr_sum_stream_idle *x = &s->stream_idle[i];

		json_object(j, NULL);
		json_int(j, "rank", x->rank);
		json_int(j, "stream", x->stream);
		json_idle(j, "idle", &x->idle);
		json_double(j, "queue_mean", x->queue_mean);
		json_int(j, "queue_max", x->queue_max);
		json_close_object(j);
	}
	json_close_array(j);
	json_array(j, "launch_delay");
	for (size_t k = 0; k < ORR_SUM_CLASSES; k++) {
		const struct orr_sum_delays *x = &s->delays[k];

		if (!x->n)
			continue;
		json_object(j, NULL);
		json_str(j, "class", x->name);
		json_int(j, "tasks", (int64_t)x->n);
		json_int(j, "median_ns", x->p50);
		json_int(j, "p90_ns", x->p90);
		json_int(j, "max_ns", x->max);
		json_close_object(j);
	}
	json_close_array(j);
	json_object(j, "short_kernels");
	json_int(j, "threshold_ns", ORR_SUM_SHORT_KERNEL_NS);
	json_array(j, "ranks");
	for (size_t i = 0; i < s->nshorts; i++) {
		const struct orr_sum_short *x = &s->shorts[i];

		json_object(j, NULL);
		json_int(j, "rank", x->rank);
		json_int(j, "kernels", (int64_t)x->kernels);
		json_int(j, "short", (int64_t)x->short_kernels);
		json_int(j, "kernel_ns", x->kernel_ns);
		json_int(j, "short_ns", x->short_ns);
		json_close_object(j);
	}
	json_close_array(j);
	json_close_object(j);
}

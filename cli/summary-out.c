/* SPDX-License-Identifier: MIT */
/*
 * `orrery summary`: orr_summary_gather()'s report (analysis/summary/) as text, JSON (every
 * section) and CSV (rank-steps).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay-common.h"
#include "summary.h"
#include "banned.h"

#define NAME_MAX_TEXT 90

static double pct(double part, double whole)
{
	return whole > 0 ? 100 * part / whole : 0;
}

static const char *name_of(const struct orr_summary *s, uint32_t name)
{
	return orr_trace_str(orr_graph_trace(s->g), name);
}

/* A name cut at NAME_MAX_TEXT characters, between UTF-8 characters. */
static void put_name(const char *name)
{
	const char *t = cli_text(name);
	int len = (int)strlen(t);

	if (len > NAME_MAX_TEXT) {
		len = NAME_MAX_TEXT - 3;
		while (len > 0 && ((unsigned char)t[len] & 0xc0) == 0x80)
			len--;
	}
	printf("%.*s%s\n", len, t, t[len] ? "..." : "");
}

/* ---- text ---- */

static void text_steps(const struct orr_summary *s)
{
	char st[32], c[7][32];

	printf("\nper rank and step, ms (busy: any GPU work; waiting: the exposed communication "
	       "spent waiting for other ranks; copies: memory copies and sets, summed)\n");
	printf("%-6s %6s %11s %11s %11s %11s %11s %11s %11s\n", "rank", "step", "step", "busy",
	       "compute", "exposed comm", "waiting", "copies", "idle");
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct orr_sum_step *x = &s->steps[i];

		printf("%-6d %6s %11s %11s %11s %11s %11s %11s %11s\n", x->rank,
		       cli_step_label(x->step, st, sizeof(st)), cli_ms(x->step_ns, c[0], 32),
		       cli_ms(x->busy_ns, c[1], 32),
		       cli_ms(x->b.exposed_compute_ns + x->b.overlapped_ns, c[2], 32),
		       cli_ms(x->b.exposed_comm_ns, c[3], 32),
		       cli_ms(x->b.exposed_wait_ns, c[4], 32), cli_ms(x->copy_ns, c[5], 32),
		       cli_ms(x->b.other_ns, c[6], 32));
	}
	if (s->straggler >= 0) {
		char a[32], b[32];

		printf("straggler: rank %d: its collectives wait %s ms per step for their peers, "
		       "the other ranks' a median %s ms: they wait for it\n",
		       s->straggler, cli_ms((int64_t)s->straggler_wait_ns, a, sizeof(a)),
		       cli_ms((int64_t)s->others_wait_ns, b, sizeof(b)));
	}
	if (s->stall_ranks) {
		char a[32], b[32];

		printf("host stalls: %zu %s launch threads were not running %s to %s ms per step "
		       "where their peers ran the same launches; orrery replay --scale "
		       "'stalls:*=0' replays the job without them\n",
		       s->stall_ranks, s->stall_ranks == 1 ? "rank's" : "ranks'",
		       cli_ms((int64_t)s->stall_min_ns, a, sizeof(a)),
		       cli_ms((int64_t)s->stall_max_ns, b, sizeof(b)));
	}
}

static void text_items(const struct orr_summary *s, const struct orr_sum_item *v, size_t n,
		       int64_t total, size_t top, const char *title, const char *what)
{
	char a[32];

	if (!n || !top)
		return;
	printf("\n%s\n", title);
	printf("  %12s %7s %8s %12s  %s\n", "ms", "%", "count", "mean us", what);
	for (size_t i = 0; i < n && i < top; i++) {
		printf("  %12s %6.1f%% %8zu %12.1f  ", cli_ms(v[i].ns, a, sizeof(a)),
		       pct((double)v[i].ns, (double)total), v[i].count,
		       (double)v[i].ns / (double)v[i].count / 1e3);
		put_name(name_of(s, v[i].name));
	}
}

static void text_streams(const struct orr_summary *s)
{
	char a[32];

	if (!s->nstreams)
		return;
	printf("\nGPU streams, in the steps (busy: their tasks' time, summed)\n");
	printf("  %-6s %8s %10s %12s\n", "rank", "stream", "tasks", "busy ms");
	for (size_t i = 0; i < s->nstreams; i++)
		printf("  %-6d %8lld %10zu %12s\n", s->streams[i].rank,
		       (long long)s->streams[i].stream, s->streams[i].count,
		       cli_ms(s->streams[i].ns, a, sizeof(a)));
}

/* "%10.1f" of v / 1e9, or "-" when it is unknown. */
static const char *gbps(double v, char *buf, size_t size)
{
	if (isfinite(v))
		snprintf(buf, size, "%.1f", v / 1e9);
	else
		snprintf(buf, size, "-");
	return buf;
}

static void text_colls(const struct orr_summary *s)
{
	char algo[32], bytes[32], group[16], ab[32], bb[32];

	if (!s->ncolls && !s->colls_unknown)
		return;
	printf("\ncollectives (an instance's time: its shortest member's, the transfer once every "
	       "rank arrived; algbw = size / time, busbw = algbw x nccl-tests' bus factor)\n");
	printf("  %-14s %14s %5s %-8s %6s %11s %10s %10s %10s  %s\n", "kind", "size B", "group",
	       "link", "count", "total ms", "mean us", "algbw GB/s", "busbw GB/s", "algorithm");
	for (size_t i = 0; i < s->ncolls; i++) {
		const struct orr_sum_coll *c = &s->colls[i];

		orr_nccl_algorithm(orr_graph_task_name(s->g, c->algo_task), algo, sizeof(algo));
		if (isfinite(c->bytes))
			snprintf(bytes, sizeof(bytes), "%.0f%s", c->bytes,
				 c->sized_by_caller ? "*" : "");
		else
			snprintf(bytes, sizeof(bytes), "unknown");
		if (c->group > 0)
			snprintf(group, sizeof(group), "%d", c->group);
		else
			snprintf(group, sizeof(group), "?");
		printf("  %-14s %14s %5s %-8s %6zu %11.3f %10.1f %10s %10s  %s%s\n",
		       orr_coll_kind_name(c->kind), bytes, group, orr_link_name(c->link), c->count,
		       c->ns / 1e6, c->ns / (double)c->count / 1e3,
		       gbps(orr_sum_coll_algbw(c), ab, sizeof(ab)),
		       gbps(orr_sum_coll_busbw(c), bb, sizeof(bb)), algo[0] ? algo : "-",
		       c->alone ? " (alone: includes waiting)" : "");
	}
	for (size_t i = 0; i < s->ncolls; i++)
		if (s->colls[i].sized_by_caller) {
			printf("  * size from the calling op's tensor (the trace gives none)\n");
			break;
		}
	if (s->colls_unknown)
		printf("  and %zu instance%s of no known kind\n", s->colls_unknown,
		       s->colls_unknown == 1 ? "" : "s");
}

void summary_text(const struct orr_summary *s, size_t top)
{
	printf("%s: %zu rank%s, %zu rank-step%s measured\n", cli_text(s->path), s->nranks,
	       s->nranks == 1 ? "" : "s", s->nsteps, s->nsteps == 1 ? "" : "s");
	text_steps(s);
	text_items(s, s->kernels, s->nkernels, s->kernel_ns, top,
		   "GPU kernels, copies and sets by time in the steps, all ranks", "kernel");
	text_items(
		s, s->ops, s->nops, s->op_ns, top,
		"framework ops by CPU self time in the steps (less the ops they call), all ranks",
		"op");
	text_streams(s);
	summary_idle_text(s);
	text_colls(s);
	summary_memory_text(s);
	printf("\nterms: busy, waiting, straggler, self time, algbw, busbw: "
	       "docs/orrery-summary.md\n");
}

/* ---- JSON ---- */

static void json_items(struct json_out *j, const struct orr_summary *s, const char *key,
		       const struct orr_sum_item *v, size_t n, int64_t total, size_t top)
{
	json_array(j, key);
	for (size_t i = 0; i < n && i < top; i++) {
		json_object(j, NULL);
		json_str(j, "name", name_of(s, v[i].name));
		json_int(j, "count", (int64_t)v[i].count);
		json_int(j, "ns", v[i].ns);
		json_double(j, "share", total > 0 ? (double)v[i].ns / (double)total : 0);
		json_close_object(j);
	}
	json_close_array(j);
}

static void json_steps(struct json_out *j, const struct orr_summary *s)
{
	json_array(j, "steps");
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct orr_sum_step *x = &s->steps[i];

		json_object(j, NULL);
		json_int(j, "rank", x->rank);
		json_int(j, "step", x->step);
		json_int(j, "step_ns", x->step_ns);
		json_int(j, "busy_ns", x->busy_ns);
		json_int(j, "compute_ns", x->b.exposed_compute_ns + x->b.overlapped_ns);
		json_int(j, "exposed_compute_ns", x->b.exposed_compute_ns);
		json_int(j, "overlapped_ns", x->b.overlapped_ns);
		json_int(j, "exposed_comm_ns", x->b.exposed_comm_ns);
		json_int(j, "exposed_comm_wait_ns", x->b.exposed_wait_ns);
		json_int(j, "copy_ns", x->copy_ns);
		json_int(j, "idle_ns", x->b.other_ns);
		summary_idle_json_step(j, x);
		json_close_object(j);
	}
	json_close_array(j);
}

static void json_colls(struct json_out *j, const struct orr_summary *s)
{
	char algo[32];

	json_array(j, "collectives");
	for (size_t i = 0; i < s->ncolls; i++) {
		const struct orr_sum_coll *c = &s->colls[i];

		orr_nccl_algorithm(orr_graph_task_name(s->g, c->algo_task), algo, sizeof(algo));
		json_object(j, NULL);
		json_str(j, "kind", orr_coll_kind_name(c->kind));
		json_double_exact(j, "bytes", c->bytes);
		json_bool(j, "sized_by_caller", c->sized_by_caller);
		json_int(j, "group", c->group);
		json_str(j, "link", orr_link_name(c->link));
		json_int(j, "count", (int64_t)c->count);
		json_int(j, "alone", (int64_t)c->alone);
		json_double_exact(j, "total_ns", c->ns);
		json_double(j, "algbw_bytes_per_s", orr_sum_coll_algbw(c));
		json_double(j, "busbw_bytes_per_s", orr_sum_coll_busbw(c));
		json_str(j, "algorithm", algo[0] ? algo : NULL);
		json_close_object(j);
	}
	json_close_array(j);
	json_int(j, "collectives_unknown", (int64_t)s->colls_unknown);
}

void summary_json(const struct orr_summary *s, size_t top)
{
	struct json_out j;

	json_begin(&j, stdout);
	json_str(&j, "trace", s->path);
	json_int(&j, "ranks", (int64_t)s->nranks);
	json_steps(&j, s);
	if (s->straggler >= 0) {
		json_object(&j, "straggler");
		json_int(&j, "rank", s->straggler);
		json_double(&j, "wait_ns_per_step", s->straggler_wait_ns);
		json_double(&j, "others_median_wait_ns_per_step", s->others_wait_ns);
		json_close_object(&j);
	} else {
		json_str(&j, "straggler", NULL);
	}
	if (s->stall_ranks) {
		json_object(&j, "stalls");
		json_int(&j, "ranks", (int64_t)s->stall_ranks);
		json_double(&j, "min_ns_per_step", s->stall_min_ns);
		json_double(&j, "max_ns_per_step", s->stall_max_ns);
		json_close_object(&j);
	} else {
		json_str(&j, "stalls", NULL);
	}
	json_items(&j, s, "kernels", s->kernels, s->nkernels, s->kernel_ns, top);
	json_array(&j, "kernel_classes");
	for (size_t c = 0; c < ORR_SUM_CLASSES; c++) {
		json_object(&j, NULL);
		json_str(&j, "class", orr_kernel_class_name(c));
		json_int(&j, "tasks", (int64_t)s->class_tasks[c]);
		json_int(&j, "ns", s->class_ns[c]);
		json_close_object(&j);
	}
	json_close_array(&j);
	json_items(&j, s, "ops", s->ops, s->nops, s->op_ns, top);
	json_array(&j, "streams");
	for (size_t i = 0; i < s->nstreams; i++) {
		json_object(&j, NULL);
		json_int(&j, "rank", s->streams[i].rank);
		json_int(&j, "stream", s->streams[i].stream);
		json_int(&j, "tasks", (int64_t)s->streams[i].count);
		json_int(&j, "busy_ns", s->streams[i].ns);
		json_close_object(&j);
	}
	json_close_array(&j);
	summary_idle_json(&j, s);
	json_colls(&j, s);
	summary_memory_json(&j, s);
	json_end(&j);
}

/* ---- CSV: the rank-steps ---- */

void summary_csv(const struct orr_summary *s)
{
	fputs("rank,step,step_ns,busy_ns,compute_ns,exposed_comm_ns,exposed_comm_wait_ns,copy_ns,"
	      "idle_ns\n",
	      stdout);
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct orr_sum_step *x = &s->steps[i];

		printf("%d,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", x->rank, (long long)x->step,
		       (long long)x->step_ns, (long long)x->busy_ns,
		       (long long)(x->b.exposed_compute_ns + x->b.overlapped_ns),
		       (long long)x->b.exposed_comm_ns, (long long)x->b.exposed_wait_ns,
		       (long long)x->copy_ns, (long long)x->b.other_ns);
	}
}

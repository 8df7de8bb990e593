/* SPDX-License-Identifier: MIT */
/* What `orrery replay` and `orrery critical-path` share: --comm, --steps, --ranks, loading. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay-common.h"
#include "banned.h"

/*
 * The launch threads' time of g and what the profiler added to it (its cost in *c);
 * whether that is worth a word: at least 1 % of the launch threads' time.
 */
static bool profiler_added(const struct orr_graph *g, struct orr_launch_time *lt,
			   struct orr_prof_cost *c)
{
	orr_rank_fit_launch_time(g, lt, c);
	return isfinite(lt->step_ns) && lt->profiler_ns > 0 &&
	       lt->profiler_ns >= 0.01 * lt->step_ns;
}

double cli_profiler_ns(const struct orr_graph *g)
{
	struct orr_launch_time lt;

	return profiler_added(g, &lt, NULL) ? lt.profiler_ns : 0;
}

void cli_profiler_note(const struct orr_graph *g)
{
	struct orr_launch_time lt;
	struct orr_prof_cost c;
	char opts[128];

	if (!profiler_added(g, &lt, &c))
		return;
	orr_prof_options_format(c.options, opts, sizeof(opts));
	printf("\nrecorded by torch.profiler (%s): of the launch threads' %.3f ms per step, "
	       "about %.3f ms is the profiler's own (%.0f ops x %.2f us",
	       opts, lt.step_ns / 1e6, lt.profiler_ns / 1e6, lt.ops, c.op_ns / 1e3);
	if (c.observer_source)
		printf(" + %.0f ops observed by the ExecutionTraceObserver x %.2f us",
		       lt.observed_ops, c.observer_ns / 1e3);
	printf(", docs/estimator.md); this replays the job as recorded, and orrery estimate of "
	       "the trace estimates it without the profiler\n");
}

int cli_globs_add(struct cli_globs *g, const char *glob)
{
	if (!glob[0])
		return -1;
	ORR_VEC_PUSH(g->v, g->n, g->cap, glob);
	return 0;
}

void cli_globs_release(struct cli_globs *g)
{
	free(g->v);
	*g = (struct cli_globs){ 0 };
}

/*
 * g replayed with the rules of scales, against its replay without them (the baseline a
 * what-if of orrery replay has: orr_scenario_options()), which is all there is without
 * rules.
 */
static int replay_scaled(const struct orr_graph *g, const struct orr_scales *scales,
			 struct orr_replay **ret, struct orr_diag *d)
{
	struct orr_replay *base = NULL;
	struct orr_scenario_replay sr;
	int err;

	err = cli_replay_run(g, NULL, &base, d);
	if (err || !scales || !orr_scales_rule_count(scales)) {
		*ret = base;
		return err;
	}
	orr_scenario_options(&sr, g, scales, NULL, base, NULL);
	err = cli_replay_run(g, &sr.opts, ret, d);
	orr_scenario_options_release(&sr);
	orr_replay_free(base);
	return err;
}

int cli_replay_open(const char *path, const struct orr_scales *scales, const struct cli_globs *comm,
		    struct cli_replay *ret)
{
	struct orr_graph_options gopts = { 0 };
	struct orr_diag diag;
	int err;

	*ret = (struct cli_replay){ 0 };
	if (comm)
		gopts = (struct orr_graph_options){ .comm_globs = comm->v, .ncomm_globs = comm->n };
	if (cli_import(path, &ret->t) < 0)
		return EXIT_FAIL;
	orr_diag_clear(&diag);
	err = cli_graph_build(ret->t, &gopts, &ret->g, &diag);
	if (!err)
		err = replay_scaled(ret->g, scales, &ret->r, &diag);
	if (err) {
		cli_error("cannot replay '%s': %s%s%s", path, orr_strerror(err),
			  diag.msg[0] ? ": " : "", diag.msg);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* Whether i is among the first n of idx. */
static bool picked(const size_t *idx, size_t n, size_t i)
{
	for (size_t k = 0; k < n; k++)
		if (idx[k] == i)
			return true;
	return false;
}

/* The categories rank r's import skipped, most events first, at most four:
 * ", skipped categories: a 12, b 3", or "". */
static void skipped_text(const struct orr_trace *t, const struct orr_rank *r, char *buf,
			 size_t size)
{
	size_t idx[4], n = 0, at = 0;

	buf[0] = '\0';
	for (; n < 4 && n < r->nskipped; n++) {
		size_t best = r->nskipped;

		for (size_t i = 0; i < r->nskipped; i++)
			if (!picked(idx, n, i) &&
			    (best == r->nskipped || r->skipped[i].count > r->skipped[best].count))
				best = i;
		idx[n] = best;
	}
	for (size_t k = 0; k < n && at < size; k++)
		at += (size_t)snprintf(buf + at, size - at, "%s %s %llu",
				       k ? "," : ", skipped categories:",
				       cli_text(orr_trace_str(t, r->skipped[idx[k]].category)),
				       (unsigned long long)r->skipped[idx[k]].count);
}

void cli_warn_no_gpu(const char *path, const struct orr_graph *g)
{
	size_t first = SIZE_MAX, more = 0;
	char cats[512], others[64] = "";

	for (size_t k = 0; k < orr_graph_rank_count(g); k++)
		if (!orr_graph_rank_gpu_tasks(g, k)) {
			if (first == SIZE_MAX)
				first = k;
			else
				more++;
		}
	if (first == SIZE_MAX)
		return;
	skipped_text(orr_graph_trace(g), orr_graph_get_rank(g, first)->rank, cats, sizeof(cats));
	if (more)
		snprintf(others, sizeof(others), " (and %zu more rank%s)", more,
			 more == 1 ? "" : "s");
	cli_warning("'%s': rank %d%s holds no GPU task (kernel, copy or set)%s: its steps replay "
		    "as measured, nothing is predicted",
		    cli_text(path), orr_graph_get_rank(g, first)->rank->rank, others, cats);
}

void cli_replay_close(struct cli_replay *cr)
{
	orr_replay_free(cr->r);
	orr_graph_free(cr->g);
	orr_trace_free(cr->t);
	*cr = (struct cli_replay){ 0 };
}

const char *cli_step_label(int64_t step, char *buf, size_t size)
{
	char tmp[24];
	size_t k = sizeof(tmp), len;
	uint64_t n = (uint64_t)step;

	if (step < 0) {
		snprintf(buf, size, "all");
		return buf;
	}
	/* By hand, as cli_ms(): one per row of a report of a million steps. */
	do
		tmp[--k] = (char)('0' + n % 10);
	while (n /= 10);
	len = sizeof(tmp) - k < size ? sizeof(tmp) - k : size - 1;
	memcpy(buf, tmp + k, len);
	buf[len] = 0;
	return buf;
}

/* A decimal from 0 to max, the whole of [s, e); -1 otherwise. */
static int64_t parse_num(const char *s, const char *e, int64_t max)
{
	int64_t v = 0;

	if (s == e)
		return -1;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9' || v > (max - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

/* "A" or "A-B" with A <= B into lo, hi; -1 when malformed. */
static int parse_range(const char *s, const char *e, int64_t max, int64_t *lo, int64_t *hi)
{
	const char *dash = memchr(s, '-', (size_t)(e - s));

	*lo = parse_num(s, dash ? dash : e, max);
	*hi = dash ? parse_num(dash + 1, e, max) : *lo;
	return *lo < 0 || *hi < *lo ? -1 : 0;
}

static int select_steps(struct orr_select *s, const char *arg)
{
	if (parse_range(arg, arg + strlen(arg), INT64_MAX, &s->step_lo, &s->step_hi) < 0)
		return -1;
	s->steps_given = true;
	return 0;
}

static int cmp_rank(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

static int select_ranks(struct orr_select *s, const char *arg)
{
	const char *p = arg;

	do {
		const char *e = strchr(p, ',');
		int64_t lo, hi;

		e = e ? e : p + strlen(p);
		if (parse_range(p, e, INT32_MAX, &lo, &hi) < 0 || hi - lo > 1 << 20)
			return -1;
		for (int64_t r = lo; r <= hi; r++)
			ORR_VEC_PUSH(s->ranks, s->nranks, s->cap, (int32_t)r);
		p = *e ? e + 1 : e;
	} while (*p);
	if (p > arg && p[-1] == ',')
		return -1;
	qsort(s->ranks, s->nranks, sizeof(*s->ranks), cmp_rank);
	return 0;
}

int cli_select_option(struct orr_select *s, const char *cmd, int opt, const char *arg)
{
	if (opt == 'p' && select_steps(s, arg) < 0) {
		cli_usage_error(cmd, "bad --steps '%s' (A or A-B)", arg);
		return -1;
	}
	if (opt == 'r' && select_ranks(s, arg) < 0) {
		cli_usage_error(cmd, "bad --ranks '%s' (a list like 0,2,4-7)", arg);
		return -1;
	}
	return 0;
}

int cli_scale_option(struct orr_scales *scales, const char *cmd, const char *arg)
{
	if (orr_scales_add(scales, arg) < 0) {
		cli_usage_error(
			cmd,
			"bad --scale '%s' ([gpu[@RANK]:|cpu[@RANK]:|stalls[@RANK]:|latency:|bandwidth:]"
			"GLOB=FACTOR, "
			"FACTOR from 0 to 1e6, a bandwidth's from 1e-6)",
			arg);
		return -1;
	}
	return 0;
}

int cli_timeline_option(const char *cmd, const char *arg)
{
	if (!arg[0]) {
		cli_usage_error(cmd, "empty --timeline file name");
		return -1;
	}
	if (cli_compressed_suffix(arg)) {
		cli_usage_error(
			cmd,
			"--timeline '%s': orrery writes plain JSON; name it without '%s' and "
			"compress it afterwards",
			arg, cli_compressed_suffix(arg));
		return -1;
	}
	cli_output_arg(arg);
	return 0;
}

void cli_select_nothing(const struct orr_select *s, const char *trace, const struct orr_replay *r)
{
	char want[256], have[256];

	if (orr_select_misses(s, orr_replay_graph(r), have, sizeof(have))) {
		orr_ranks_text(s->ranks, s->nranks, want, sizeof(want));
		cli_error("no rank %s%s in '%s'; its ranks are %s", s->nranks > 1 ? "of " : "",
			  want, trace, have);
	} else if (s->steps_given || s->ranks)
		cli_error("--steps and --ranks select no rank-step of '%s' ('orrery info' lists "
			  "them)",
			  trace);
	else
		cli_error("'%s' holds no step: no CPU or GPU task was read ('orrery info' lists "
			  "what it holds)",
			  trace);
}

int cli_timeline_write(const struct orr_replay *r, const struct orr_step_path *paths, size_t npaths,
		       const struct orr_select *sel, const char *path)
{
	orr_outfile_catch_signals();
	return orr_timeline_write(r, paths, npaths, sel, cli_output_path(path));
}

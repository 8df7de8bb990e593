/* SPDX-License-Identifier: MIT */
/*
 * `orrery replay` with what-if scenarios (--scale, --scenario; replayed by
 * orr_scenario_report_run(), analysis/scenario-run.c): the trace replayed as
 * recorded (the baseline) and with each scenario's rules, reported as baseline ->
 * scenario with a signed change, never as an error against the measured step, which a
 * scenario did not run.  One scenario: per rank-step and job step, and the breakdown of
 * both; several: one table of their job steps (a one-rank trace: its steps).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay-common.h"
#include "banned.h"

int cli_whatif_run(struct orr_scenario_report *w, const char *path, const struct orr_replay *base,
		   const struct orr_scenarios *sc, const struct orr_costs *costs,
		   const struct orr_select *sel)
{
	struct orr_diag diag = { 0 };
	int err;

	cli_progress_begin("replaying", "tasks");
	err = orr_scenario_report_run(w, path, base, sc, costs, sel, cli_progress_count, NULL,
				      &diag);
	cli_progress_done();
	if (err) {
		cli_error("cannot replay scenario '%s' of '%s': %s%s%s", sc->v[w->nruns].name, path,
			  orr_strerror(err), diag.msg[0] ? ": " : "", diag.msg);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* Whether g holds the rank numbered `rank` (global); its ranks' text in have. */
static bool has_rank(const struct orr_graph *g, int32_t rank, char *have, size_t size)
{
	size_t n = orr_graph_rank_count(g);
	int32_t *r = orr_xmalloc((n ? n : 1) * sizeof(*r));
	bool found = false;

	for (size_t k = 0; k < n; k++)
		found |= (r[k] = orr_graph_get_rank(g, k)->rank->rank) == rank;
	orr_ranks_text(r, n, have, size);
	free(r);
	return found;
}

size_t cli_whatif_unmatched(const struct orr_scenario_report *w, const struct orr_graph *g)
{
	size_t n = 0;
	char rule[512], have[256];

	for (size_t i = 0; i < w->nruns; i++) {
		const struct orr_scales *s = &w->runs[i].sc->scales;

		for (size_t k = 0; k < orr_scales_rule_count(s); k++) {
			struct orr_rule r = orr_scales_rule(s, k);

			if (w->runs[i].matches[k].tasks)
				continue;
			if (r.rank >= 0 && !has_rank(g, r.rank, have, sizeof(have)))
				cli_warning("scenario '%s': rule '%s' names rank %d, which '%s' "
					    "does not hold; its ranks are %s",
					    w->runs[i].sc->name,
					    orr_scales_rule_label(s, k, rule, sizeof(rule)),
					    (int)r.rank, cli_text(w->path), have);
			else if (r.on == ORR_RULE_STALLS)
				cli_warning("scenario '%s': rule '%s' matches no stall in the "
					    "trace's steps (stalls are found where 3 or more ranks "
					    "run the same launches: docs/orrery-replay.md)",
					    w->runs[i].sc->name,
					    orr_scales_rule_label(s, k, rule, sizeof(rule)));
			else
				cli_warning("scenario '%s': rule '%s' matches no %s in the "
					    "trace's steps",
					    w->runs[i].sc->name,
					    orr_scales_rule_label(s, k, rule, sizeof(rule)),
					    r.on == ORR_RULE_GPU   ? "GPU task"
					    : r.on == ORR_RULE_CPU ? "CPU task"
								   : "communication kernel");
			n++;
		}
	}
	return n;
}

static int64_t predicted(const struct orr_replay_row *row)
{
	return row->s.predicted_end_ns - row->s.predicted_start_ns;
}

static int64_t measured(const struct orr_replay_row *row)
{
	return row->s.measured_end_ns - row->s.measured_start_ns;
}

/* ---- text ---- */

static const char *signed_percent(double f, char *buf, size_t size)
{
	if (isfinite(f))
		snprintf(buf, size, "%+.2f%%", 100 * f);
	else
		snprintf(buf, size, "-");
	return buf;
}

/* A communication rule's kernels: their latency part, and those it cannot split. */
static void text_split(const struct orr_rule_match *m, double steps, bool costs)
{
	char t[32];

	printf("    latency %s ms per step of it (models %s)",
	       cli_ms((int64_t)((double)m->latency_ns / steps), t, sizeof(t)),
	       costs ? "of --costs" : "fitted on the trace's collectives");
	if (m->unsplit)
		printf("; %.1f kernels per step unchanged: no size, or one the fit cannot split",
		       (double)m->unsplit / steps);
	printf("\n");
}

static void text_rules(const struct orr_scenario_run *run, bool costs)
{
	char t[32];

	printf("scenario '%s'\n", cli_text(run->sc->name));
	printf("  %-32s %20s %28s\n", "rule", "tasks per step", "their measured ms per step");
	for (size_t k = 0; k < orr_scales_rule_count(&run->sc->scales); k++) {
		const struct orr_rule_match *m = &run->matches[k];
		double steps = m->rank_steps ? (double)m->rank_steps : 1;
		char rule[512];

		orr_scales_rule_label(&run->sc->scales, k, rule, sizeof(rule));
		printf("  ");
		cli_put_cell(cli_text(rule), -32);
		printf(" %20.1f %28s\n", (double)m->tasks / steps,
		       cli_ms((int64_t)((double)m->gpu_ns / steps), t, sizeof(t)));
		if (orr_scales_rule(&run->sc->scales, k).on >= ORR_RULE_LATENCY && m->tasks)
			text_split(m, steps, costs);
	}
}

static void text_row(const char *rank, const struct orr_replay_row *b,
		     const struct orr_replay_row *s)
{
	char st[32], m[32], p[32], q[32], c[32];

	cli_put_cell(rank, -6);
	putchar(' ');
	cli_put_cell(cli_step_label(b->s.step, st, sizeof(st)), 6);
	printf(" %12s %12s %12s %9s\n", cli_ms(measured(b), m, sizeof(m)),
	       cli_ms(predicted(b), p, sizeof(p)), cli_ms(predicted(s), q, sizeof(q)),
	       signed_percent(orr_scenario_change(b, s), c, sizeof(c)));
}

/* " %21s" of "BASELINE -> SCENARIO". */
static void text_pair(int64_t a_ns, int64_t b_ns)
{
	char a[32], b[32], cell[80];

	snprintf(cell, sizeof(cell), "%s -> %s", cli_ms(a_ns, a, sizeof(a)),
		 cli_ms(b_ns, b, sizeof(b)));
	putchar(' ');
	cli_put_cell(cell, 21);
}

static void text_one(const struct orr_scenario_report *w, const struct orr_scenario_run *run)
{
	const struct orr_replay_report *b = &w->base, *s = &run->rep;
	char rank[16], st[32];

	printf("\n%-6s %6s %12s %12s %12s %9s\n", "rank", "step", "measured ms", "baseline ms",
	       "scenario ms", "change");
	for (size_t i = 0; i < b->nrows && i < s->nrows; i++) {
		snprintf(rank, sizeof(rank), "%d", b->rows[i].rank);
		text_row(rank, &b->rows[i], &s->rows[i]);
	}
	for (size_t k = 0; b->nranks > 1 && k < b->njob && k < s->njob; k++)
		text_row("job", &b->job[k], &s->job[k]);
	printf("\nGPU time breakdown, ms baseline -> scenario (waiting: the part of exposed comm "
	       "spent waiting for other ranks)\n");
	printf("%-6s %6s %21s %21s %21s %21s %21s\n", "rank", "step", "exposed compute",
	       "overlapped", "exposed comm", "waiting", "other");
	for (size_t i = 0; i < b->nrows && i < s->nrows; i++) {
		const struct orr_breakdown *x = &b->rows[i].predicted, *y = &s->rows[i].predicted;

		snprintf(rank, sizeof(rank), "%d", b->rows[i].rank);
		cli_put_cell(rank, -6);
		putchar(' ');
		cli_put_cell(cli_step_label(b->rows[i].s.step, st, sizeof(st)), 6);
		text_pair(x->exposed_compute_ns, y->exposed_compute_ns);
		text_pair(x->overlapped_ns, y->overlapped_ns);
		text_pair(x->exposed_comm_ns, y->exposed_comm_ns);
		text_pair(x->exposed_wait_ns, y->exposed_wait_ns);
		text_pair(x->other_ns, y->other_ns);
		putchar('\n');
	}
}

static void text_table(const struct orr_scenario_report *w)
{
	char st[32], p[32], q[32], c[32];

	printf("\n%-24s %6s %12s %12s %9s\n", "scenario", "step", "baseline ms", "scenario ms",
	       "change");
	for (size_t i = 0; i < w->nruns; i++) {
		size_t n, m;
		const struct orr_replay_row *b = orr_replay_report_table(&w->base, &n);
		const struct orr_replay_row *s = orr_replay_report_table(&w->runs[i].rep, &m);

		for (size_t k = 0; k < n && k < m; k++) {
			cli_put_cell(cli_text(w->runs[i].sc->name), -24);
			putchar(' ');
			cli_put_cell(cli_step_label(b[k].s.step, st, sizeof(st)), 6);
			printf(" %12s %12s %9s\n", cli_ms(predicted(&b[k]), p, sizeof(p)),
			       cli_ms(predicted(&s[k]), q, sizeof(q)),
			       signed_percent(orr_scenario_change(&b[k], &s[k]), c, sizeof(c)));
		}
	}
}

/* The scenario's own trust: how much of its critical path no rule moves. */
static void text_fixed(const struct orr_scenario_run *run)
{
	char a[32], b[32], c[32], d[32], st[32];

	printf("scenario '%s': trust %s: %s ms (%.1f%%) of the critical path of step %s is time "
	       "no rule moves (delays kept as measured %s ms, threads' starts %s ms, waits for "
	       "unknown work %s ms)%s\n",
	       cli_text(run->sc->name), orr_scenario_trust_low(run) ? "low" : "high",
	       cli_ms(run->fixed.total_ns, a, sizeof(a)), 100 * run->fixed_share,
	       cli_step_label(run->fixed_step, st, sizeof(st)),
	       cli_ms(run->fixed.delays_ns, b, sizeof(b)),
	       cli_ms(run->fixed.starts_ns, c, sizeof(c)),
	       cli_ms(run->fixed.waits_ns, d, sizeof(d)),
	       orr_scenario_trust_low(run)
		       ? ": the replay holds it as measured whatever the rules change"
		       : "");
}

void cli_whatif_text(const struct orr_scenario_report *w)
{
	const struct orr_replay_report *b = &w->base;
	char x[32], y[32], z[32];

	printf("%s: %zu rank%s replayed as recorded (the baseline) and with %zu what-if "
	       "scenario%s\n\n",
	       cli_text(w->path), b->nranks, b->nranks == 1 ? "" : "s", w->nruns,
	       w->nruns == 1 ? "" : "s");
	for (size_t i = 0; i < w->nruns; i++)
		text_rules(&w->runs[i], w->costs);
	if (w->nruns == 1)
		text_one(w, &w->runs[0]);
	else
		text_table(w);
	putchar('\n');
	for (size_t i = 0; i < w->nruns; i++) {
		struct orr_change_range c = orr_scenario_change_range(w, &w->runs[i]);

		printf("scenario '%s': %s step time change mean %s (from %s to %s)\n",
		       cli_text(w->runs[i].sc->name), b->nranks > 1 ? "job" : "rank",
		       signed_percent(c.mean, x, sizeof(x)), signed_percent(c.min, y, sizeof(y)),
		       signed_percent(c.max, z, sizeof(z)));
		text_fixed(&w->runs[i]);
	}
	printf("baseline: replay error over %zu rank-steps mean %.2f%%, max %.2f%%; trust low on "
	       "%zu of them (orrery replay without a scenario for the details)\n",
	       b->nrows, 100 * b->mean_error, 100 * b->max_error, b->trust_low);
	printf("\nterms: baseline, scenario, change, breakdown, waiting: docs/orrery-replay.md "
	       "(\"What-if scenarios\") and docs/design.md (\"Definitions\")\n");
}

/* ---- CSV ---- */

static void csv_row(const char *scenario, const char *rank, const struct orr_replay_row *b,
		    const struct orr_replay_row *s)
{
	double c = orr_scenario_change(b, s);

	cli_csv_field(scenario);
	printf(",%s,%lld,%lld,%lld,%lld,", rank, (long long)b->s.step, (long long)measured(b),
	       (long long)predicted(b), (long long)predicted(s));
	if (isfinite(c))
		printf("%.6g", c);
	putchar('\n');
}

void cli_whatif_csv(const struct orr_scenario_report *w)
{
	char rank[16];

	fputs("scenario,rank,step,measured_ns,baseline_ns,scenario_ns,change\n", stdout);
	for (size_t i = 0; i < w->nruns; i++) {
		const struct orr_replay_report *b = &w->base, *s = &w->runs[i].rep;

		for (size_t k = 0; k < b->nrows && k < s->nrows; k++) {
			snprintf(rank, sizeof(rank), "%d", b->rows[k].rank);
			csv_row(w->runs[i].sc->name, rank, &b->rows[k], &s->rows[k]);
		}
		for (size_t k = 0; k < b->njob && k < s->njob; k++)
			csv_row(w->runs[i].sc->name, "job", &b->job[k], &s->job[k]);
	}
}

/* ---- JSON ---- */

static void json_step(struct json_out *j, const struct orr_replay_row *b,
		      const struct orr_replay_row *s, bool breakdown)
{
	json_object(j, NULL);
	json_int(j, "step", b->s.step);
	json_int(j, "measured_ns", measured(b));
	json_int(j, "baseline_ns", predicted(b));
	json_int(j, "scenario_ns", predicted(s));
	json_double(j, "change", orr_scenario_change(b, s));
	if (breakdown) {
		json_object(j, "breakdown");
		cli_json_breakdown(j, "baseline", &b->predicted);
		cli_json_breakdown(j, "scenario", &s->predicted);
		json_close_object(j);
	}
	json_close_object(j);
}

static void json_rules(struct json_out *j, const struct orr_scenario_run *run, bool costs)
{
	const struct orr_scales *s = &run->sc->scales;

	json_array(j, "rules");
	for (size_t k = 0; k < orr_scales_rule_count(s); k++) {
		const struct orr_rule_match *m = &run->matches[k];
		struct orr_rule r = orr_scales_rule(s, k);
		bool c = r.on >= ORR_RULE_LATENCY;

		json_object(j, NULL);
		json_str(j, "on", orr_rule_on_name(r.on));
		json_str(j, "glob", r.glob);
		json_double(j, "factor", r.factor);
		if (!c)
			json_int(j, "rank", r.rank);
		json_int(j, "tasks", (int64_t)m->tasks);
		json_int(j, "ns", m->gpu_ns);
		json_int(j, "rank_steps", (int64_t)m->rank_steps);
		if (c) {
			json_int(j, "latency_ns", m->latency_ns);
			json_int(j, "unsplit", (int64_t)m->unsplit);
			json_str(j, "models", costs ? "costs" : "trace");
		}
		json_close_object(j);
	}
	json_close_array(j);
}

static void json_run(struct json_out *j, const struct orr_scenario_report *w,
		     const struct orr_scenario_run *run)
{
	const struct orr_replay_report *b = &w->base, *s = &run->rep;
	struct orr_change_range c;
	size_t i = 0;

	json_object(j, NULL);
	json_str(j, "name", run->sc->name);
	json_rules(j, run, w->costs);
	json_array(j, "ranks");
	for (size_t k = 0; k < b->nranks; k++) {
		int32_t rank = orr_graph_get_rank(b->g, k)->rank->rank;

		if (i >= b->nrows || b->rows[i].rank != rank)
			continue; /* not selected (--ranks, --steps) */
		json_object(j, NULL);
		json_int(j, "rank", rank);
		json_array(j, "steps");
		for (; i < b->nrows && i < s->nrows && b->rows[i].rank == rank; i++)
			json_step(j, &b->rows[i], &s->rows[i], true);
		json_close_array(j);
		json_close_object(j);
	}
	json_close_array(j);
	json_array(j, "job");
	for (size_t k = 0; k < b->njob && k < s->njob; k++)
		json_step(j, &b->job[k], &s->job[k], false);
	json_close_array(j);
	c = orr_scenario_change_range(w, run);
	json_double(j, "change_mean", c.mean);
	json_double(j, "change_min", c.min);
	json_double(j, "change_max", c.max);
	json_object(j, "fixed");
	json_int(j, "step", run->fixed_step);
	json_int(j, "ns", run->fixed.total_ns);
	json_double(j, "share", run->fixed_share);
	json_int(j, "delays_ns", run->fixed.delays_ns);
	json_int(j, "starts_ns", run->fixed.starts_ns);
	json_int(j, "waits_ns", run->fixed.waits_ns);
	json_str(j, "trust", orr_scenario_trust_low(run) ? "low" : "high");
	json_close_object(j);
	json_close_object(j);
}

void cli_whatif_json(const struct orr_scenario_report *w)
{
	struct json_out j;

	json_begin(&j, stdout);
	json_str(&j, "trace", w->path);
	json_object(&j, "baseline");
	json_int(&j, "rank_steps", (int64_t)w->base.nrows);
	json_double(&j, "mean_error", w->base.mean_error);
	json_double(&j, "max_error", w->base.max_error);
	json_int(&j, "trust_low_steps", (int64_t)w->base.trust_low);
	json_close_object(&j);
	json_array(&j, "scenarios");
	for (size_t i = 0; i < w->nruns; i++)
		json_run(&j, w, &w->runs[i]);
	json_close_array(&j);
	cli_graph_json(&j, &w->base.stats);
	json_end(&j);
}

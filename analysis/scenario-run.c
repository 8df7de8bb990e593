/* SPDX-License-Identifier: MIT */
/*
 * `orrery replay` with what-if scenarios (--scale, --scenario): the trace replayed as
 * recorded (the baseline) and with each scenario's rules; per scenario its replay's rows,
 * what its rules matched, and the time on its critical path that no rule moves.  A
 * scenario did not run: front ends report baseline -> scenario, never an error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

/* The step of run's table whose critical path r holds most time no rule moves. */
static void fixed_time(struct orr_scenario_run *run, const struct orr_replay *r)
{
	size_t n;
	const struct orr_replay_row *rows = orr_replay_report_table(&run->rep, &n);

	run->fixed_share = 0;
	for (size_t k = 0; k < n; k++) {
		const struct orr_replay_step *st = &rows[k].s;
		int64_t len = st->predicted_end_ns - st->predicted_start_ns;
		struct orr_path_seg *segs;
		struct orr_path_fixed f;
		size_t nseg;

		if (len <= 0)
			continue;
		orr_replay_critical_path(r, st->predicted_start_ns, st->predicted_end_ns, &segs,
					 &nseg);
		orr_replay_path_fixed(r, segs, nseg, &f);
		free(segs);
		if (k == 0 || (double)f.total_ns / (double)len > run->fixed_share) {
			run->fixed = f;
			run->fixed_share = (double)f.total_ns / (double)len;
			run->fixed_step = st->step;
		}
	}
}

int orr_scenario_report_run(struct orr_scenario_report *w, const char *path,
			    const struct orr_replay *base, const struct orr_scenarios *sc,
			    const struct orr_costs *costs, const struct orr_select *sel,
			    void (*progress)(void *data, uint64_t done, uint64_t total),
			    void *progress_data, struct orr_diag *reterr_diag)
{
	const struct orr_graph *g = orr_replay_graph(base);

	*w = (struct orr_scenario_report){ .path = path, .costs = costs != NULL };
	orr_replay_report_init(&w->base, path, base, sel);
	w->runs = orr_xcalloc(sc->n + 1, sizeof(*w->runs));
	for (size_t i = 0; i < sc->n; i++) {
		const struct orr_scales *s = &sc->v[i].scales;
		struct orr_scenario_run *run = &w->runs[w->nruns];
		struct orr_replay *r = NULL;
		struct orr_scenario_replay sr;
		int err;

		run->matches = orr_xcalloc(orr_scales_rule_count(s) + 1, sizeof(*run->matches));
		orr_scenario_options(&sr, g, s, costs, base, run->matches);
		sr.opts.progress = progress;
		sr.opts.progress_data = progress_data;
		err = orr_replay_run(g, &sr.opts, &r, reterr_diag);
		orr_scenario_options_release(&sr);
		if (err) {
			free(run->matches);
			run->matches = NULL;
			return err;
		}
		run->sc = &sc->v[i];
		orr_replay_report_init(&run->rep, path, r, sel);
		fixed_time(run, r);
		orr_replay_free(r);
		w->nruns++;
	}
	return 0;
}

void orr_scenario_report_release(struct orr_scenario_report *w)
{
	for (size_t i = 0; i < w->nruns; i++) {
		orr_replay_report_release(&w->runs[i].rep);
		free(w->runs[i].matches);
	}
	free(w->runs);
	orr_replay_report_release(&w->base);
	*w = (struct orr_scenario_report){ 0 };
}

double orr_scenario_change(const struct orr_replay_row *base, const struct orr_replay_row *sc)
{
	int64_t b = base->s.predicted_end_ns - base->s.predicted_start_ns;

	return b > 0 ? (double)(sc->s.predicted_end_ns - sc->s.predicted_start_ns) / (double)b - 1
		     : NAN;
}

struct orr_change_range orr_scenario_change_range(const struct orr_scenario_report *w,
						  const struct orr_scenario_run *run)
{
	size_t n, m, k = 0;
	const struct orr_replay_row *b = orr_replay_report_table(&w->base, &n),
				    *s = orr_replay_report_table(&run->rep, &m);
	struct orr_change_range r = { .min = INFINITY, .max = -INFINITY };
	double sum = 0;

	for (size_t i = 0; i < n && i < m; i++) {
		double c = orr_scenario_change(&b[i], &s[i]);

		if (!isfinite(c))
			continue;
		sum += c;
		r.min = c < r.min ? c : r.min;
		r.max = c > r.max ? c : r.max;
		k++;
	}
	r.mean = k ? sum / (double)k : NAN;
	if (!k)
		r.min = r.max = NAN;
	return r;
}

bool orr_scenario_trust_low(const struct orr_scenario_run *run)
{
	return run->fixed_share > ORR_TRUST_MAX_UNEXPLAINED;
}

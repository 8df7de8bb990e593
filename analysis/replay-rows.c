/* SPDX-License-Identifier: MIT */
/*
 * What `orrery replay` reports, gathered: per rank-step the measured and predicted step
 * time, their error, the busy-timeline L1 distance and the Lumos breakdown of both; the
 * job steps; the mean and max errors; the time the graph cannot explain and the trust it
 * leaves in each step; what the graph holds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

double orr_step_error(const struct orr_replay_step *s)
{
	int64_t m = orr_time_sub(s->measured_end_ns, s->measured_start_ns);
	int64_t p = orr_time_sub(s->predicted_end_ns, s->predicted_start_ns);

	return m > 0 ? fabs((double)p - (double)m) / (double)m : NAN;
}

/* Mean and max of the finite errors; NaN for none. */
static void summarise(const struct orr_replay_row *rows, size_t n, double *ret_mean,
		      double *ret_max)
{
	double sum = 0, max = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (!isfinite(rows[i].error))
			continue;
		sum += rows[i].error;
		max = rows[i].error > max ? rows[i].error : max;
		k++;
	}
	*ret_mean = k ? sum / (double)k : NAN;
	*ret_max = k ? max : NAN;
}

/* The trust signal of a rank-step: what the graph cannot explain in its measured window. */
static void trust(const struct orr_graph *g, size_t rank, struct orr_replay_row *row)
{
	int64_t len = row->s.measured_end_ns - row->s.measured_start_ns;

	orr_graph_unexplained(g, rank, row->s.measured_start_ns, row->s.measured_end_ns,
			      &row->unexplained);
	row->unexplained_share = len > 0 ? (double)row->unexplained.total_ns / (double)len : NAN;
	row->trust_low = row->unexplained_share > ORR_TRUST_MAX_UNEXPLAINED;
}

static void add_rank_rows(struct orr_replay_report *rep, const struct orr_replay *r, size_t rank,
			  const struct orr_select *sel, size_t *cap)
{
	const struct orr_graph *g = orr_replay_graph(r);
	struct orr_gpu_timeline *m, *p;
	struct orr_replay_step *s;
	size_t n;

	if (!orr_select_rank(sel, orr_graph_get_rank(g, rank)->rank->rank))
		return;
	m = orr_gpu_timeline_new(r, rank, false);
	p = orr_gpu_timeline_new(r, rank, true);
	orr_replay_steps(r, rank, &s, &n);
	for (size_t k = 0; k < n; k++) {
		struct orr_replay_row row = {
			.rank = orr_graph_get_rank(g, rank)->rank->rank,
			.s = s[k],
			.error = orr_step_error(&s[k]),
			.busy_l1 = 0,
		};

		if (!orr_select_step(sel, s[k].step))
			continue;
		row.busy_l1 = orr_gpu_timeline_busy_l1(m, p, &s[k]);
		orr_gpu_timeline_breakdown(m, s[k].measured_start_ns, s[k].measured_end_ns,
					   &row.measured);
		orr_gpu_timeline_breakdown(p, s[k].predicted_start_ns, s[k].predicted_end_ns,
					   &row.predicted);
		trust(g, rank, &row);
		ORR_VEC_PUSH(rep->rows, rep->nrows, *cap, row);
	}
	free(s);
	orr_gpu_timeline_free(m);
	orr_gpu_timeline_free(p);
}

void orr_replay_report_init(struct orr_replay_report *rep, const char *path,
			    const struct orr_replay *r, const struct orr_select *sel)
{
	const struct orr_graph *g = orr_replay_graph(r);
	struct orr_replay_step *job;
	size_t cap = 0, njob;

	*rep = (struct orr_replay_report){ .path = path,
					   .g = g,
					   .nranks = orr_graph_rank_count(g) };

	for (size_t i = 0; i < rep->nranks; i++)
		add_rank_rows(rep, r, i, sel, &cap);
	orr_replay_job_steps(r, &job, &njob);
	rep->job = orr_xcalloc(njob + 1, sizeof(*rep->job));
	for (size_t k = 0; k < njob; k++)
		if (orr_select_step(sel, job[k].step))
			rep->job[rep->njob++] = (struct orr_replay_row){
				.rank = -1, .s = job[k], .error = orr_step_error(&job[k])
			};
	free(job);
	summarise(rep->rows, rep->nrows, &rep->mean_error, &rep->max_error);
	summarise(rep->job, rep->njob, &rep->job_mean_error, &rep->job_max_error);
	rep->max_unexplained_share = rep->nrows ? 0 : NAN;
	for (size_t i = 0; i < rep->nrows; i++) {
		double f = rep->rows[i].unexplained_share;

		rep->trust_low += rep->rows[i].trust_low;
		if (isfinite(f) && f > rep->max_unexplained_share)
			rep->max_unexplained_share = f;
	}
	orr_graph_get_stats(g, &rep->stats);
}

void orr_replay_report_release(struct orr_replay_report *rep)
{
	free(rep->rows);
	free(rep->job);
	*rep = (struct orr_replay_report){ 0 };
}

/* The rows of a report the table shows: job steps, or a one-rank trace's own steps. */
const struct orr_replay_row *orr_replay_report_table(const struct orr_replay_report *rep,
						     size_t *ret_n)
{
	if (rep->nranks > 1) {
		*ret_n = rep->njob;
		return rep->job;
	}
	*ret_n = rep->nrows;
	return rep->rows;
}

/* SPDX-License-Identifier: MIT */
/*
 * What `orrery replay` reports: per rank-step the measured and predicted step time,
 * their error, the busy-timeline L1 distance and the Lumos breakdown of both; the job
 * steps; the mean and max errors; the time the graph cannot explain and the trust it
 * leaves in each step; what the graph holds.  Gathered once by
 * orr_replay_report_init() (analysis/replay-rows.c), then printed as text or CSV here and
 * as JSON in replay-json.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay-common.h"
#include "banned.h"

/* ---- text ---- */

static const char *percent(double f, char *buf, size_t size)
{
	if (isfinite(f))
		snprintf(buf, size, "%.2f%%", 100 * f);
	else
		snprintf(buf, size, "-");
	return buf;
}

/* "%-6s %6s %12s %12s %8s", by cells (cli_put_cell()): one row per rank-step. */
static void text_time_row(const char *rank, const struct orr_replay_row *row, bool busy)
{
	char st[32], m[32], p[32], e[32];

	cli_put_cell(rank, -6);
	putchar(' ');
	cli_put_cell(cli_step_label(row->s.step, st, sizeof(st)), 6);
	putchar(' ');
	cli_put_cell(cli_ms(row->s.measured_end_ns - row->s.measured_start_ns, m, sizeof(m)), 12);
	putchar(' ');
	cli_put_cell(cli_ms(row->s.predicted_end_ns - row->s.predicted_start_ns, p, sizeof(p)), 12);
	putchar(' ');
	cli_put_cell(percent(row->error, e, sizeof(e)), 8);
	if (busy)
		printf(" %9.3f", row->busy_l1);
	putchar('\n');
}

static void text_times(const struct orr_replay_report *rep)
{
	char rank[16], a[32], b[32];

	printf("%-6s %6s %12s %12s %8s %9s\n", "rank", "step", "measured ms", "predicted ms",
	       "error", "busy L1");
	for (size_t i = 0; i < rep->nrows; i++) {
		snprintf(rank, sizeof(rank), "%d", rep->rows[i].rank);
		text_time_row(rank, &rep->rows[i], true);
	}
	if (rep->nranks > 1)
		for (size_t k = 0; k < rep->njob; k++)
			text_time_row("job", &rep->job[k], false);
	printf("\nerror over %zu rank-steps: mean %s, max %s\n", rep->nrows,
	       percent(rep->mean_error, a, sizeof(a)), percent(rep->max_error, b, sizeof(b)));
	if (rep->nranks > 1)
		printf("error over %zu job steps: mean %s, max %s\n", rep->njob,
		       percent(rep->job_mean_error, a, sizeof(a)),
		       percent(rep->job_max_error, b, sizeof(b)));
}

/* One line per rank-step with unexplained time, and a summary. */
static void text_trust(const struct orr_replay_report *rep)
{
	char st[32], a[32], b[32], c[32], f[32];

	putchar('\n');
	for (size_t i = 0; i < rep->nrows; i++) {
		const struct orr_replay_row *row = &rep->rows[i];

		if (row->unexplained.total_ns <= 0)
			continue;
		printf("rank %d step %s: unexplained %s ms, %s of the step (GPU idle %s ms, CPU "
		       "blocked %s ms): trust %s\n",
		       row->rank, cli_step_label(row->s.step, st, sizeof(st)),
		       cli_ms(row->unexplained.total_ns, a, sizeof(a)),
		       percent(row->unexplained_share, f, sizeof(f)),
		       cli_ms(row->unexplained.gpu_idle_ns, b, sizeof(b)),
		       cli_ms(row->unexplained.cpu_blocked_ns, c, sizeof(c)),
		       row->trust_low ? "low" : "high");
	}
	printf("trust: low on %zu of %zu rank-steps (unexplained time above %g%% of the step), "
	       "max unexplained %s\n",
	       rep->trust_low, rep->nrows, 100 * ORR_TRUST_MAX_UNEXPLAINED,
	       percent(rep->max_unexplained_share, a, sizeof(a)));
}

/* " %19s" of "MEASURED / PREDICTED". */
static void text_pair(int64_t measured_ns, int64_t predicted_ns)
{
	char m[32], p[32], cell[80];
	size_t lm = strlen(cli_ms(measured_ns, m, sizeof(m)));
	size_t lp = strlen(cli_ms(predicted_ns, p, sizeof(p)));

	memcpy(cell, m, lm);
	memcpy(cell + lm, " / ", 3);
	memcpy(cell + lm + 3, p, lp + 1);
	putchar(' ');
	cli_put_cell(cell, 19);
}

static void text_breakdown(const struct orr_replay_report *rep)
{
	char st[32], rank[16];

	printf("\nGPU time breakdown, ms measured / predicted (waiting: the part of exposed comm "
	       "spent waiting for other ranks)\n");
	printf("%-6s %6s %19s %19s %19s %19s %19s\n", "rank", "step", "exposed compute",
	       "overlapped", "exposed comm", "waiting", "other");
	for (size_t i = 0; i < rep->nrows; i++) {
		const struct orr_replay_row *row = &rep->rows[i];

		snprintf(rank, sizeof(rank), "%d", row->rank);
		cli_put_cell(rank, -6);
		putchar(' ');
		cli_put_cell(cli_step_label(row->s.step, st, sizeof(st)), 6);
		text_pair(row->measured.exposed_compute_ns, row->predicted.exposed_compute_ns);
		text_pair(row->measured.overlapped_ns, row->predicted.overlapped_ns);
		text_pair(row->measured.exposed_comm_ns, row->predicted.exposed_comm_ns);
		text_pair(row->measured.exposed_wait_ns, row->predicted.exposed_wait_ns);
		text_pair(row->measured.other_ns, row->predicted.other_ns);
		putchar('\n');
	}
}

void cli_report_text(const struct orr_replay_report *rep)
{
	printf("%s: %zu rank%s replayed\n\n", cli_text(rep->path), rep->nranks,
	       rep->nranks == 1 ? "" : "s");
	text_times(rep);
	text_trust(rep);
	text_breakdown(rep);
	cli_graph_text(&rep->stats);
	printf("\nterms: error, busy L1, breakdown, waiting, trust: docs/design.md "
	       "(\"Definitions\"); D1-D7, inferred, held: docs/replay-method.md\n");
}

/* ---- CSV ---- */

static void csv_number(double f)
{
	if (isfinite(f))
		printf(",%.6g", f);
	else
		fputs(",", stdout);
}

static void csv_breakdown(const struct orr_breakdown *b)
{
	printf(",%lld,%lld,%lld,%lld", (long long)b->exposed_compute_ns,
	       (long long)b->overlapped_ns, (long long)b->exposed_comm_ns, (long long)b->other_ns);
}

static void csv_row(const struct orr_replay_row *row, bool job)
{
	if (job)
		fputs("job", stdout);
	else
		printf("%d", row->rank);
	printf(",%lld,%lld,%lld", (long long)row->s.step,
	       (long long)(row->s.measured_end_ns - row->s.measured_start_ns),
	       (long long)(row->s.predicted_end_ns - row->s.predicted_start_ns));
	csv_number(row->error);
	if (job) {
		fputs(",,,,,,,,,,,,,,,,\n", stdout);
		return;
	}
	csv_number(row->busy_l1);
	csv_breakdown(&row->measured);
	csv_breakdown(&row->predicted);
	printf(",%lld,%lld,%lld", (long long)row->unexplained.gpu_idle_ns,
	       (long long)row->unexplained.cpu_blocked_ns, (long long)row->unexplained.total_ns);
	csv_number(row->unexplained_share);
	printf(",%s,%lld,%lld\n", row->trust_low ? "low" : "high",
	       (long long)row->measured.exposed_wait_ns, (long long)row->predicted.exposed_wait_ns);
}

void cli_report_csv(const struct orr_replay_report *rep)
{
	fputs("rank,step,measured_ns,predicted_ns,error,busy_l1,"
	      "measured_exposed_compute_ns,measured_overlapped_ns,measured_exposed_comm_ns,"
	      "measured_other_ns,predicted_exposed_compute_ns,predicted_overlapped_ns,"
	      "predicted_exposed_comm_ns,predicted_other_ns,unexplained_gpu_idle_ns,"
	      "unexplained_cpu_blocked_ns,unexplained_ns,unexplained_share,trust,"
	      "measured_exposed_comm_wait_ns,predicted_exposed_comm_wait_ns\n",
	      stdout);
	for (size_t i = 0; i < rep->nrows; i++)
		csv_row(&rep->rows[i], false);
	for (size_t k = 0; k < rep->njob; k++)
		csv_row(&rep->job[k], true);
}

/* SPDX-License-Identifier: MIT */
/*
 * orrery report: one self-contained HTML page of a trace (docs/orrery-report.md): step
 * times measured and predicted, the breakdown, per-rank skew, GPU idle explained, the
 * critical path of each job step, top kernels and ops, collectives.  Charts are inline
 * SVG (cli/html.c); the page has no script and loads nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "cli.h"
#include "html.h"
#include "replay-common.h"
#include "summary.h"
#include "whatif.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery report -o OUT.html [--top N] [--comm GLOB]... [--diff B] [--whatif GPUS]\n"
	"                     TRACE\n\n"
	"Writes one HTML page about TRACE, self-contained (inline SVG, no script, nothing\n"
	"loaded from the network): step times measured and predicted by the replay, the\n"
	"breakdown of each rank-step, the skew between ranks, why the GPU is idle, the\n"
	"critical path of each job step along the step, the top kernels and ops, and the\n"
	"collectives with their bandwidths; with --diff, TRACE compared with B (as orrery\n"
	"diff); with --whatif, the layouts of the traced job on GPUS GPUs ranked (as orrery\n"
	"whatif TRACE --gpus GPUS).\n\n"
	"  -o, --output FILE  the page ('-': standard output)\n"
	"  --top N            rows of the kernel and op tables (15)\n"
	"  --comm GLOB        count GPU tasks matching GLOB as communication\n"
	"  --diff B           add TRACE (A) compared with trace B\n"
	"  --whatif GPUS      add the best layouts on GPUS GPUs (N, or A-B: the Pareto front)\n"
	"  -h, --help         this help\n";

#define WIDTH 900

/* Okabe-Ito colors, distinct for color-blind readers. */
static const char *const bd_names[] = { "exposed compute", "overlapped", "exposed comm (transfer)",
					"waiting for peers", "idle" };
static const char *const bd_colors[] = { "#0072B2", "#56B4E9", "#E69F00", "#D55E00", "#BBBBBB" };
static const char *const idle_names[] = { "host wait", "kernel wait", "other" };
static const char *const idle_colors[] = { "#CC79A7", "#D55E00", "#999999" };
static const char *const path_colors[] = { "#0072B2", "#E69F00", "#009E73", "#F0E442", "#BBBBBB" };

struct options {
	const char *out, *in, *diff, *whatif;
	int64_t top;
	struct cli_globs comm;
};

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:960px;color:#222}"
	"h1{font-size:22px;margin:0}h2{font-size:17px;margin-top:32px;border-bottom:1px solid "
	"#ddd}.sub{color:#555}svg text{font:11px system-ui,sans-serif;fill:#333}"
	"table{border-collapse:collapse;width:100%;font-size:12px}td,th{padding:2px 6px;"
	"text-align:right;border-bottom:1px solid #eee}td.name,th.name{text-align:left;"
	"max-width:520px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}"
	"td.bar{width:120px}td.bar div{background:#56B4E9;height:10px}"
	".legend span{margin-right:14px;font-size:12px}.legend i{display:inline-block;width:10px;"
	"height:10px;margin-right:4px}.note{color:#555;font-size:12px}";

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static void label_of(char *buf, size_t size, int32_t rank, int64_t step, const char *what)
{
	char st[32];

	snprintf(buf, size, "rank %d step %s%s%s", rank, cli_step_label(step, st, sizeof(st)),
		 what ? " " : "", what ? what : "");
}

static void header(FILE *f, const struct options *o, const struct orr_replay_report *rep)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>orrery "
	      "report: ",
	      f);
	html_text(f, o->in);
	fprintf(f,
		"</title>\n<style>%s</style></head><body>\n<h1>orrery report</h1>\n<p "
		"class=\"sub\">",
		style);
	html_text(f, o->in);
	fprintf(f, ": %zu rank%s, %zu rank-step%s", rep->nranks, rep->nranks == 1 ? "" : "s",
		rep->nrows, rep->nrows == 1 ? "" : "s");
	if (isfinite(rep->mean_error))
		fprintf(f, "; replay error mean %.2f %%, max %.2f %%", 100 * rep->mean_error,
			100 * rep->max_error);
	if (rep->trust_low)
		fprintf(f, "; %zu rank-step%s of low trust (over 3 %% of the step unexplained)",
			rep->trust_low, rep->trust_low == 1 ? "" : "s");
	fputs("</p>\n", f);
}

static void steps(FILE *f, const struct orr_replay_report *rep)
{
	struct html_bar *bars = orr_xcalloc(2 * rep->nrows + 1, sizeof(*bars));
	struct html_seg *segs = orr_xcalloc(2 * rep->nrows + 1, sizeof(*segs));
	char(*labels)[64] = orr_xcalloc(2 * rep->nrows + 1, sizeof(*labels));
	static const char *const names[] = { "measured", "predicted" };
	static const char *const colors[] = { "#0072B2", "#E69F00" };

	fputs("<h2 id=\"steps\">Step times, measured and predicted by the replay (ms)</h2>\n", f);
	html_legend(f, names, colors, 2);
	for (size_t i = 0; i < rep->nrows; i++) {
		const struct orr_replay_row *r = &rep->rows[i];

		for (int p = 0; p < 2; p++) {
			size_t k = 2 * i + (size_t)p;

			label_of(labels[k], sizeof(labels[k]), r->rank, r->s.step, NULL);
			segs[k] = (struct html_seg){
				ms(p ? r->s.predicted_end_ns - r->s.predicted_start_ns
				     : r->s.measured_end_ns - r->s.measured_start_ns),
				colors[p], names[p]
			};
			/* the predicted row is unlabelled, under its measured one */
			bars[k] = (struct html_bar){ p ? "" : labels[k], labels[k], &segs[k], 1 };
		}
	}
	html_bars(f, bars, 2 * rep->nrows, 0, WIDTH, "ms");
	free(labels);
	free(segs);
	free(bars);
}

static void breakdown_segs(const struct orr_breakdown *b, struct html_seg *s)
{
	double v[5] = { ms(b->exposed_compute_ns), ms(b->overlapped_ns),
			ms(b->exposed_comm_ns - b->exposed_wait_ns), ms(b->exposed_wait_ns),
			ms(b->other_ns) };

	for (int i = 0; i < 5; i++)
		s[i] = (struct html_seg){ v[i], bd_colors[i], bd_names[i] };
}

static void breakdown(FILE *f, const struct orr_replay_report *rep)
{
	size_t n = 2 * rep->nrows;
	struct html_bar *bars = orr_xcalloc(n + 1, sizeof(*bars));
	struct html_seg *segs = orr_xcalloc(5 * n + 1, sizeof(*segs));
	char(*labels)[64] = orr_xcalloc(n + 1, sizeof(*labels));

	fputs("<h2 id=\"breakdown\">Breakdown of each rank-step (ms): measured, then "
	      "predicted</h2>\n",
	      f);
	html_legend(f, bd_names, bd_colors, 5);
	for (size_t i = 0; i < rep->nrows; i++) {
		const struct orr_replay_row *r = &rep->rows[i];

		for (int p = 0; p < 2; p++) {
			size_t k = 2 * i + (size_t)p;

			label_of(labels[k], sizeof(labels[k]), r->rank, r->s.step,
				 p ? "predicted" : "measured");
			breakdown_segs(p ? &r->predicted : &r->measured, &segs[5 * k]);
			bars[k] = (struct html_bar){ labels[k], NULL, &segs[5 * k], 5 };
		}
	}
	html_bars(f, bars, n, 0, WIDTH, "ms");
	free(labels);
	free(segs);
	free(bars);
}

/* Each rank's mean measured step, and how far the slowest is from the fastest. */
static void skew(FILE *f, const struct orr_replay_report *rep)
{
	struct html_bar *bars = orr_xcalloc(rep->nranks + 1, sizeof(*bars));
	struct html_seg *segs = orr_xcalloc(rep->nranks + 1, sizeof(*segs));
	char(*labels)[64] = orr_xcalloc(rep->nranks + 1, sizeof(*labels));
	size_t n = 0;
	double lo = INFINITY, hi = 0;

	for (size_t i = 0; i < rep->nrows;) {
		size_t j = i;
		double sum = 0;

		for (; j < rep->nrows && rep->rows[j].rank == rep->rows[i].rank; j++)
			sum += ms(rep->rows[j].s.measured_end_ns -
				  rep->rows[j].s.measured_start_ns);
		snprintf(labels[n], sizeof(labels[n]), "rank %d", rep->rows[i].rank);
		segs[n] = (struct html_seg){ sum / (double)(j - i), "#0072B2", "mean step" };
		lo = segs[n].value < lo ? segs[n].value : lo;
		hi = segs[n].value > hi ? segs[n].value : hi;
		bars[n] = (struct html_bar){ labels[n], NULL, &segs[n], 1 };
		n++;
		i = j;
	}
	fputs("<h2 id=\"skew\">Per-rank skew: mean measured step (ms)</h2>\n", f);
	if (n > 1)
		fprintf(f,
			"<p class=\"note\">The slowest rank's mean step is %.3f ms (%.1f %%) "
			"longer than the fastest's.</p>\n",
			hi - lo, lo > 0 ? 100 * (hi - lo) / lo : 0);
	html_bars(f, bars, n, 0, WIDTH, "ms");
	free(labels);
	free(segs);
	free(bars);
}

/* Streams' idle time and queues, launch delays by class, short kernels. */
static void launch_tables(FILE *f, const struct orr_summary *s)
{
	fputs("<table><tr><th>rank</th><th>stream</th><th>idle ms</th><th>host wait</th>"
	      "<th>kernel wait</th><th>other</th><th>queue mean</th><th>queue max</th></tr>\n",
	      f);
	for (size_t i = 0; i < s->nstream_idle; i++) {
		const struct orr_sum_stream_idle *x = &s->stream_idle[i];

		fprintf(f,
			"<tr><td>%d</td><td>%lld</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>"
			"<td>%.3f</td><td>%.2f</td><td>%lld</td></tr>\n",
			x->rank, (long long)x->stream, ms(x->idle.idle_ns),
			ms(x->idle.host_wait_ns), ms(x->idle.kernel_wait_ns), ms(x->idle.other_ns),
			x->queue_mean, (long long)x->queue_max);
	}
	fputs("</table>\n<h3>Launch delay by kernel class (us: GPU start less the launch "
	      "call's start)</h3>\n<table><tr><th class=\"name\">class</th><th>tasks</th>"
	      "<th>median</th><th>p90</th><th>max</th></tr>\n",
	      f);
	for (size_t k = 0; k < ORR_SUM_CLASSES; k++) {
		const struct orr_sum_delays *d = &s->delays[k];

		if (d->n)
			fprintf(f,
				"<tr><td class=\"name\">%s</td><td>%zu</td><td>%.1f</td>"
				"<td>%.1f</td><td>%.1f</td></tr>\n",
				d->name, d->n, (double)d->p50 / 1e3, (double)d->p90 / 1e3,
				(double)d->max / 1e3);
	}
	fputs("</table>\n<h3>Short kernels (under 10 us)</h3>\n<table><tr><th>rank</th>"
	      "<th>kernels</th><th>short</th><th>of kernels</th><th>of GPU time</th></tr>\n",
	      f);
	for (size_t i = 0; i < s->nshorts; i++) {
		const struct orr_sum_short *x = &s->shorts[i];

		fprintf(f,
			"<tr><td>%d</td><td>%zu</td><td>%zu</td><td>%.1f%%</td><td>%.1f%%</td>"
			"</tr>\n",
			x->rank, x->kernels, x->short_kernels,
			x->kernels ? 100.0 * (double)x->short_kernels / (double)x->kernels : 0,
			x->kernel_ns ? 100.0 * (double)x->short_ns / (double)x->kernel_ns : 0);
	}
	fputs("</table>\n", f);
}

static void idle(FILE *f, const struct orr_summary *s)
{
	struct html_bar *bars = orr_xcalloc(s->nsteps + 1, sizeof(*bars));
	struct html_seg *segs = orr_xcalloc(3 * s->nsteps + 1, sizeof(*segs));
	char(*labels)[64] = orr_xcalloc(s->nsteps + 1, sizeof(*labels));

	fputs("<h2 id=\"idle\">GPU idle, explained (ms)</h2>\n<p class=\"note\">Host wait: what "
	      "ran next was not launched yet; kernel wait: it was, and waited on an event or a "
	      "collective's peers; other: launch latency, queueing.</p>\n",
	      f);
	html_legend(f, idle_names, idle_colors, 3);
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct orr_sum_idle *x = &s->steps[i].idle;
		double v[3] = { ms(x->host_wait_ns), ms(x->kernel_wait_ns), ms(x->other_ns) };

		label_of(labels[i], sizeof(labels[i]), s->steps[i].rank, s->steps[i].step, NULL);
		for (int k = 0; k < 3; k++)
			segs[3 * i + (size_t)k] =
				(struct html_seg){ v[k], idle_colors[k], idle_names[k] };
		bars[i] = (struct html_bar){ labels[i], NULL, &segs[3 * i], 3 };
	}
	html_bars(f, bars, s->nsteps, 0, WIDTH, "ms");
	free(labels);
	free(segs);
	free(bars);
	launch_tables(f, s);
}

#define PATH_PX (WIDTH - 20) /* html_timeline()'s plot width */

/*
 * Spans of one job step's critical path, one per run of pixels whose largest share of
 * time is one category: a path of thousands of sub-microsecond calls stays a readable
 * (and small) picture; the totals are exact.
 */
static size_t path_spans(const struct orr_path_seg *segs, size_t ns, int64_t t0, double total,
			 const char *const *names, struct html_span *sp)
{
	double(*px)[ORR_PATH_CAT_COUNT] = orr_xcalloc(PATH_PX, sizeof(*px));
	size_t n = 0;

	for (size_t i = 0; i < ns; i++) {
		double a = ms(segs[i].start_ns - t0), b = ms(segs[i].end_ns - t0);

		for (double x = a; total > 0 && x < b;) {
			int p = (int)(x / total * PATH_PX);
			double edge;

			p = p < 0 ? 0 : p >= PATH_PX ? PATH_PX - 1 : p;
			edge = (double)(p + 1) * total / PATH_PX;
			edge = edge > b || p == PATH_PX - 1 ? b : edge;
			px[p][segs[i].cat] += edge - x;
			x = edge > x ? edge : b;
		}
	}
	for (int p = 0; p < PATH_PX; p++) {
		int best = -1;

		for (int c = 0; c < ORR_PATH_CAT_COUNT; c++)
			if (px[p][c] > 0 && (best < 0 || px[p][c] > px[p][best]))
				best = c;
		if (best < 0)
			continue;
		if (n && sp[n - 1].name == names[best] &&
		    fabs(sp[n - 1].start + sp[n - 1].length - p * total / PATH_PX) < 1e-9 * total) {
			sp[n - 1].length += total / PATH_PX;
			continue;
		}
		sp[n++] = (struct html_span){ p * total / PATH_PX, total / PATH_PX,
					      path_colors[best], names[best] };
	}
	free(px);
	return n;
}

/* Each job step's critical path along the step (docs/orrery-critical-path.md). */
static void critical_path(FILE *f, const struct orr_replay *r)
{
	struct orr_replay_step *js;
	size_t nj;
	const char *names[ORR_PATH_CAT_COUNT];

	for (int c = 0; c < ORR_PATH_CAT_COUNT; c++)
		names[c] = orr_path_cat_name((enum orr_path_cat)c);
	orr_replay_job_steps(r, &js, &nj);
	fputs("<h2 id=\"critical-path\">Critical path of each job step (predicted, ms)</h2>\n"
	      "<p class=\"note\">Each pixel shows the category that took most of its time; the "
	      "totals are exact.</p>\n",
	      f);
	html_legend(f, names, path_colors, ORR_PATH_CAT_COUNT);
	for (size_t k = 0; k < nj && k < 8; k++) {
		struct orr_path_seg *segs;
		struct html_span *sp = orr_xcalloc(PATH_PX + 1, sizeof(*sp));
		int64_t tot[ORR_PATH_CAT_COUNT];
		double total = ms(js[k].predicted_end_ns - js[k].predicted_start_ns);
		size_t ns, n;
		char st[32];

		orr_replay_critical_path(r, js[k].predicted_start_ns, js[k].predicted_end_ns, &segs,
					 &ns);
		orr_path_cat_totals(segs, ns, tot);
		n = path_spans(segs, ns, js[k].predicted_start_ns, total, names, sp);
		fprintf(f,
			"<p class=\"note\">step %s: %.3f ms:", cli_step_label(js[k].step, st, 32),
			total);
		for (int c = 0; c < ORR_PATH_CAT_COUNT; c++)
			fprintf(f, " %s %.3f%s", names[c], ms(tot[c]),
				c + 1 < ORR_PATH_CAT_COUNT ? "," : "");
		fputs("</p>\n", f);
		html_timeline(f, sp, n, total, WIDTH, "ms");
		free(sp);
		free(segs);
	}
	if (nj > 8)
		fprintf(f,
			"<p class=\"note\">... and %zu more job steps (orrery critical-path).</p>\n",
			nj - 8);
	free(js);
}

static void items(FILE *f, const struct orr_summary *s, const struct orr_sum_item *v, size_t n,
		  int64_t total, size_t top, const char *id, const char *title)
{
	fprintf(f,
		"<h2 id=\"%s\">%s</h2>\n<table><tr><th>ms</th><th>share</th><th></th>"
		"<th>count</th><th>mean us</th><th class=\"name\">name</th></tr>\n",
		id, title);
	for (size_t i = 0; i < n && i < top; i++) {
		double share = total > 0 ? (double)v[i].ns / (double)total : 0;

		fprintf(f,
			"<tr><td>%.3f</td><td>%.1f%%</td><td class=\"bar\"><div style=\"width:"
			"%.0f%%\"></div></td><td>%zu</td><td>%.1f</td><td class=\"name\" title=\"",
			ms(v[i].ns), 100 * share, 100 * share, v[i].count,
			v[i].count ? (double)v[i].ns / (double)v[i].count / 1e3 : 0);
		html_text(f, orr_trace_str(orr_graph_trace(s->g), v[i].name));
		fputs("\">", f);
		html_text(f, orr_trace_str(orr_graph_trace(s->g), v[i].name));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* Each rank's allocator over the capture: allocated and reserved, and the peaks. */
static void memory(FILE *f, const struct orr_summary *s)
{
	static const char *const colors[] = { "#0072B2", "#E69F00" };
	double y[2][ORR_SUM_MEM_BINS];
	char names[2][64];

	if (!s->nmem)
		return;
	fputs("<h2 id=\"memory\">Memory (the CUDA caching allocator)</h2>\n", f);
	for (size_t i = 0; i < s->nmem; i++) {
		const struct orr_sum_mem *m = &s->mem[i];
		struct html_line l[2] = { { y[0], colors[0], names[0] },
					  { y[1], colors[1], names[1] } };

		for (size_t b = 0; b < ORR_SUM_MEM_BINS; b++) {
			y[0][b] = m->allocated.v[b] / 1073741824.0;
			y[1][b] = m->reserved.v[b] >= 0 ? m->reserved.v[b] / 1073741824.0 : 0;
		}
		snprintf(names[0], sizeof(names[0]), "rank %d allocated", m->rank);
		snprintf(names[1], sizeof(names[1]), "rank %d reserved", m->rank);
		fprintf(f,
			"<p class=\"note\">Rank %d, device %d: %zu samples; peak allocated %.2f "
			"GiB, reserved %.2f GiB",
			m->rank, m->device, m->samples, (double)m->peak_allocated / 1073741824.0,
			(double)m->peak_reserved / 1073741824.0);
		if (isfinite(m->model_bytes))
			fprintf(f, "; the estimator's model of the recorded configuration %.2f GiB",
				m->model_bytes / 1073741824.0);
		fputs(".</p>\n", f);
		html_legend(f, (const char *const[]){ "allocated", "reserved" }, colors, 2);
		html_lines(f, l, m->reserved.v[0] >= 0 ? 2 : 1, ORR_SUM_MEM_BINS,
			   (double)m->allocated.bin_ns * ORR_SUM_MEM_BINS / 1e6, WIDTH, "ms",
			   "GiB");
	}
}

#define MAX_COUNTER_CHARTS 12

/* Each counter series as a line over the capture (the first MAX_COUNTER_CHARTS). */
static void counters(FILE *f, const struct orr_summary *s)
{
	const struct orr_trace *t = orr_graph_trace(s->g);

	if (!s->ncounters)
		return;
	fputs("<h2 id=\"counters\">Counters</h2>\n", f);
	if (s->ncounters > MAX_COUNTER_CHARTS)
		fprintf(f,
			"<p class=\"note\">The first %d of %zu series (orrery summary lists "
			"them all).</p>\n",
			MAX_COUNTER_CHARTS, s->ncounters);
	for (size_t i = 0; i < s->ncounters && i < MAX_COUNTER_CHARTS; i++) {
		const struct orr_sum_counter *c = &s->counters[i];
		char name[256];
		struct html_line l = { c->bins.v, "#009E73", name };

		snprintf(name, sizeof(name), "rank %d %s: %s", c->rank, orr_trace_str(t, c->name),
			 orr_trace_str(t, c->series));
		fputs("<p class=\"note\">", f);
		html_text(f, name);
		fprintf(f, ": %zu samples, min %.4g, mean %.4g, max %.4g.</p>\n", c->samples,
			c->min, c->mean, c->max);
		html_lines(f, &l, 1, ORR_SUM_MEM_BINS,
			   (double)c->bins.bin_ns * ORR_SUM_MEM_BINS / 1e6, WIDTH, "ms", "");
	}
}

static void collectives(FILE *f, const struct orr_summary *s)
{
	char algo[32];

	fputs("<h2 id=\"collectives\">Collectives</h2>\n", f);
	if (!s->ncolls) {
		fprintf(f, "<p class=\"note\">None of a known kind%s.</p>\n",
			s->colls_unknown ? " (and some of no known kind)" : "");
		return;
	}
	fputs("<table><tr><th class=\"name\">kind</th><th>size B</th><th>group</th><th>count</th>"
	      "<th>total ms</th><th>mean us</th><th>busbw GB/s</th><th class=\"name\">algorithm"
	      "</th></tr>\n",
	      f);
	for (size_t i = 0; i < s->ncolls; i++) {
		const struct orr_sum_coll *c = &s->colls[i];
		double mean = c->count ? c->ns / (double)c->count : 0;
		double bw = orr_sum_coll_busbw(c) / 1e9;

		orr_nccl_algorithm(orr_graph_task_name(s->g, c->algo_task), algo, sizeof(algo));
		fprintf(f, "<tr><td class=\"name\">%s</td>", orr_coll_kind_name(c->kind));
		if (isfinite(c->bytes))
			fprintf(f, "<td>%.0f%s</td>", c->bytes, c->sized_by_caller ? "*" : "");
		else
			fputs("<td>unknown</td>", f);
		if (c->group > 0)
			fprintf(f, "<td>%d</td>", c->group);
		else
			fputs("<td>?</td>", f);
		fprintf(f, "<td>%zu</td><td>%.3f</td><td>%.1f</td>", c->count, c->ns / 1e6,
			mean / 1e3);
		if (isfinite(bw))
			fprintf(f, "<td>%.1f</td>", bw);
		else
			fputs("<td>-</td>", f);
		fprintf(f, "<td class=\"name\">%s%s</td></tr>\n", algo[0] ? algo : "-",
			c->alone ? " (alone: includes waiting)" : "");
	}
	fputs("</table>\n<p class=\"note\">* size from the calling op's tensor (the trace gives "
	      "none). A collective seen on one rank only (alone) includes its wait for the others: "
	      "its bandwidth is no transfer's.",
	      f);
	if (s->colls_unknown)
		fprintf(f, " And %zu instance%s of no known kind.", s->colls_unknown,
			s->colls_unknown == 1 ? "" : "s");
	fputs("</p>\n", f);
}

static void diff_line(FILE *f, const char *name, double a, double b)
{
	fprintf(f, "<tr><td class=\"name\">%s</td><td>%.3f</td><td>%.3f</td><td>%+.3f</td></tr>\n",
		name, a / 1e6, b / 1e6, (b - a) / 1e6);
}

/* The GPU time of each kernel class in A and in B, a bar each. */
static void diff_classes(FILE *f, const struct orr_diff_table *classes)
{
	static const char *const names[] = { "A", "B" };
	static const char *const colors[] = { "#0072B2", "#E69F00" };
	struct html_bar *bars = orr_xcalloc(2 * classes->n + 1, sizeof(*bars));
	struct html_seg *segs = orr_xcalloc(2 * classes->n + 1, sizeof(*segs));

	fputs("<h3>GPU time by kernel class (ms)</h3>\n", f);
	html_legend(f, names, colors, 2);
	for (size_t i = 0; i < classes->n; i++) {
		const struct orr_diff_row *r = &classes->v[i];

		segs[2 * i] = (struct html_seg){ r->a / 1e6, colors[0], "A" };
		segs[2 * i + 1] = (struct html_seg){ r->b / 1e6, colors[1], "B" };
		bars[2 * i] = (struct html_bar){ r->key, NULL, &segs[2 * i], 1 };
		bars[2 * i + 1] = (struct html_bar){ "", r->key, &segs[2 * i + 1], 1 };
	}
	html_bars(f, bars, 2 * classes->n, 0, WIDTH, "ms");
	free(bars);
	free(segs);
}

/* The top kernels by their contribution to the change, a row each. */
static void diff_kernels(FILE *f, const struct orr_diff_table *kernels, int64_t top)
{
	fputs("<h3>Kernels by contribution to the change</h3>\n<table><tr><th>delta ms</th>"
	      "<th>A ms</th><th>B ms</th><th>A count</th><th>B count</th><th class=\"name\">"
	      "name</th></tr>\n",
	      f);
	for (size_t i = 0; i < kernels->n && i < (size_t)top; i++) {
		const struct orr_diff_row *r = &kernels->v[i];

		fprintf(f,
			"<tr><td>%+.3f</td><td>%.3f</td><td>%.3f</td><td>%llu</td><td>%llu</td>"
			"<td class=\"name\" title=\"",
			(r->b - r->a) / 1e6, r->a / 1e6, r->b / 1e6, (unsigned long long)r->ca,
			(unsigned long long)r->cb);
		html_text(f, r->key);
		fputs("\">", f);
		html_text(f, r->key);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* This trace (A) against another (B), per rank-step, as orrery diff compares them. */
static void diff(FILE *f, const struct options *o, const struct orr_replay *ra,
		 const struct orr_replay *rb)
{
	struct orr_diff_profile a, b;
	struct orr_diff_table classes = { 0 }, kernels = { 0 };
	struct orr_diff_totals ta, tb;

	orr_diff_profile_build(&a, o->in, ra, false);
	orr_diff_profile_build(&b, o->diff, rb, false);
	ta = orr_diff_totals_of(&a);
	tb = orr_diff_totals_of(&b);
	orr_diff_class_rows(&classes, &a, &b);
	orr_diff_union_rows(&kernels, "kernel", &a.kernels, &b.kernels, &a, &b);
	fputs("<h2 id=\"diff\">Compared with another trace (per rank-step)</h2>\n<p "
	      "class=\"note\">A: ",
	      f);
	html_text(f, o->in);
	fprintf(f, " (%zu rank-steps); B: ", a.steps);
	html_text(f, o->diff);
	fprintf(f,
		" (%zu rank-steps).</p>\n<table><tr><th class=\"name\"></th><th>A ms</th>"
		"<th>B ms</th><th>delta ms</th></tr>\n",
		b.steps);
	diff_line(f, "step", ta.step, tb.step);
	diff_line(f, "compute", ta.compute, tb.compute);
	diff_line(f, "exposed communication", ta.comm, tb.comm);
	diff_line(f, "&nbsp;&nbsp;of it waiting for peers", ta.wait, tb.wait);
	diff_line(f, "idle", ta.idle, tb.idle);
	fputs("</table>\n", f);
	diff_classes(f, &classes);
	diff_kernels(f, &kernels, o->top);
	orr_diff_table_release(&classes);
	orr_diff_table_release(&kernels);
	orr_diff_profile_release(&a);
	orr_diff_profile_release(&b);
}

static void page(FILE *f, const struct options *o, const struct orr_replay *r,
		 const struct orr_replay *rb, const struct cli_layouts *w)
{
	struct orr_replay_report rep;
	struct orr_summary s;

	orr_replay_report_init(&rep, o->in, r, NULL);
	orr_summary_gather(&s, o->in, r, NULL);
	header(f, o, &rep);
	steps(f, &rep);
	breakdown(f, &rep);
	skew(f, &rep);
	idle(f, &s);
	critical_path(f, r);
	items(f, &s, s.kernels, s.nkernels, s.kernel_ns, (size_t)o->top, "kernels",
	      "Top GPU kernels, copies and sets, all ranks");
	items(f, &s, s.ops, s.nops, s.op_ns, (size_t)o->top, "ops",
	      "Top framework ops by CPU self time, all ranks");
	collectives(f, &s);
	memory(f, &s);
	counters(f, &s);
	if (rb)
		diff(f, o, r, rb);
	if (w)
		cli_report_whatif(f, w, WIDTH);
	fprintf(f,
		"<p class=\"note\">orrery %s; the terms are defined in orrery's "
		"docs/orrery-report.md.</p>\n</body></html>\n",
		ORR_VERSION);
	orr_summary_release(&s);
	orr_replay_report_release(&rep);
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 'n' },
		{ "comm", required_argument, NULL, 'c' },
		{ "diff", required_argument, NULL, 'd' },
		{ "whatif", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!optarg[0])
				return cli_usage_error("report", "empty output name");
			if (cli_compressed_suffix(optarg))
				return cli_usage_error("report", "-o '%s': the page is plain HTML",
						       optarg);
			o->out = optarg;
			cli_output_arg(optarg);
			break;
		case 'n':
			if (cli_parse_count(optarg, &o->top) < 0 || o->top < 1)
				return cli_usage_error("report", "--top '%s': a count from 1",
						       optarg);
			break;
		case 'c':
			if (cli_globs_add(&o->comm, optarg) < 0)
				return cli_usage_error("report", "empty --comm pattern");
			break;
		case 'd':
			o->diff = optarg;
			break;
		case 'w': {
			int64_t lo, hi;
			int err = cli_whatif_gpus("report", "whatif", optarg, &lo, &hi);

			if (err >= 0)
				return err;
			o->whatif = optarg;
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cli_bad_option("report", argc, argv, opts);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("report",
				       optind >= argc ? "no trace given" : "one trace at a time");
	o->in = argv[optind];
	if (!o->out)
		return cli_usage_error("report", "no output given (-o OUT.html)");
	return -1;
}

/* The sweep of --whatif GPUS: orrery whatif TRACE --gpus GPUS, its defaults otherwise. */
static int sweep(const struct options *o, struct cli_whatif_options *wo,
		 struct cli_whatif_sweep **ret)
{
	/*
	 * the trace last, after "--": getopt_long() under POSIXLY_CORRECT stops at the first
	 * operand, and a trace may be named --help or --jobs=1024
	 */
	char *argv[] = {
		"whatif", "--gpus", (char *)o->whatif, "--no-progress", "--", (char *)o->in, NULL,
	};
	int err;

	if (strcmp(o->in, "-") == 0)
		return cli_usage_error("report", "--whatif reads the trace again: give a file, "
						 "not standard input");
	optind = 0; /* getopt_long() starts afresh */
	err = cli_whatif_parse(6, argv, wo);
	if (err >= 0)
		return err;
	if ((err = cli_whatif_sweep_new(wo, 0, 1, ret)) != EXIT_OK)
		return err;
	return cli_whatif_sweep_run(*ret, NULL, NULL);
}

int cmd_report(int argc, char **argv)
{
	struct options o = { .top = 15 };
	struct cli_replay cr = { 0 }, cb = { 0 };
	struct cli_whatif_options wo = { 0 };
	struct cli_whatif_sweep *ws = NULL;
	struct orr_outfile out;
	int ret = parse_options(argc, argv, &o), err;

	if (ret >= 0)
		goto done;
	if (cli_output_inside(o.out, o.in) || (o.diff && cli_output_inside(o.out, o.diff))) {
		cli_error("cannot write '%s': it is inside the trace '%s'; write it elsewhere",
			  o.out, cli_output_inside(o.out, o.in) ? o.in : o.diff);
		ret = EXIT_FAIL;
		goto done;
	}
	orr_outfile_catch_signals();
	ret = cli_replay_open(o.in, NULL, &o.comm, &cr);
	if (ret == EXIT_OK && o.diff)
		ret = cli_replay_open(o.diff, NULL, &o.comm, &cb);
	if (ret == EXIT_OK && o.whatif)
		ret = sweep(&o, &wo, &ws);
	if (ret != EXIT_OK)
		goto done;
	if ((err = orr_outfile_open(&out, cli_output_path(o.out), 0)) ||
	    !orr_outfile_stream(&out)) {
		cli_error("cannot write '%s': %s", cli_output_name(o.out),
			  orr_strerror(err ? err : -ENOMEM));
		if (!err)
			orr_outfile_abort(&out);
		ret = EXIT_FAIL;
		goto done;
	}
	page(orr_outfile_stream(&out), &o, cr.r, o.diff ? cb.r : NULL,
	     ws ? cli_whatif_sweep_result(ws) : NULL);
	if ((err = orr_outfile_commit(&out, false))) {
		cli_error("cannot write '%s': %s", cli_output_name(o.out), orr_strerror(err));
		ret = EXIT_FAIL;
	}
done:
	cli_whatif_sweep_free(ws);
	cli_whatif_options_release(&wo);
	cli_replay_close(&cr);
	cli_replay_close(&cb);
	cli_globs_release(&o.comm);
	return ret;
}

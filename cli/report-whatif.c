/* SPDX-License-Identifier: MIT */
/*
 * orrery report --whatif GPUS: the section of the layouts of the traced job on a GPU
 * budget (docs/orrery-report.md, "Layouts"): the counts, the best layouts as a table
 * and as bars of their step's parts, the recorded layout's place, and for a range of
 * GPU counts the Pareto front of GPUs against step time.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "html.h"
#include "whatif.h"
#include "banned.h"

#define TOP 10

static const char *const part_names[] = { "compute", "exposed communication", "pipeline bubble",
					  "no GPU work" };
static const char *const part_colors[] = { "#0072B2", "#E69F00", "#CC79A7", "#BBBBBB" };

static void layout(char *buf, size_t size, const struct orr_whatif_result *r)
{
	const struct orr_train_config *c = &r->c;
	char vpp[32] = "";

	if (c->vpp > 1)
		snprintf(vpp, sizeof(vpp), ", VPP %lld", (long long)c->vpp);
	snprintf(buf, size, "%lld GPUs: TP %lld, PP %lld, DP %lld%s, micro-batch %lld, %s",
		 (long long)r->gpus, (long long)c->tp, (long long)c->pp, (long long)c->dp, vpp,
		 (long long)c->micro_batch, orr_recompute_name(c->recompute));
}

static void counts(FILE *f, const struct cli_layouts *w)
{
	const uint64_t *n = w->tally.count;

	fprintf(f, "<p class=\"note\">%llu layouts on %lld", (unsigned long long)w->tally.n,
		(long long)w->o->gpus_min);
	if (w->o->gpus_max != w->o->gpus_min)
		fprintf(f, "-%lld", (long long)w->o->gpus_max);
	fprintf(f, " %s GPUs, each estimated as orrery estimate estimates it: %llu feasible",
		w->x->gpu->id, (unsigned long long)n[ORR_WHATIF_FEASIBLE]);
	for (int k = ORR_WHATIF_HEADS; k < ORR_WHATIF_WHY_COUNT; k++)
		if (n[k])
			fprintf(f, ", %llu refused for %s", (unsigned long long)n[k],
				orr_whatif_why_name(k));
	fputs(".</p>\n", f);
}

/* The label of a layout: its place among the best, the recorded one starred. */
static void label_of(char *buf, size_t size, const struct cli_layouts *w,
		     const struct orr_whatif_result *r)
{
	uint64_t place = orr_whatif_tally_place(&w->tally, r);

	if (place)
		snprintf(buf, size, "%s%llu", r->index == w->recorded_index ? "* " : "",
			 (unsigned long long)place);
	else
		snprintf(buf, size, "%lld GPUs", (long long)r->gpus);
}

static void row(FILE *f, const struct cli_layouts *w, const struct orr_whatif_result *r)
{
	char buf[160];

	label_of(buf, sizeof(buf), w, r);
	fprintf(f, "<tr><td>");
	html_text(f, buf);
	fprintf(f, "</td><td class=\"name\">");
	layout(buf, sizeof(buf), r);
	html_text(f, buf);
	fprintf(f,
		"</td><td>%.3f</td><td>%.0f</td><td>%.1f</td><td>%.1f</td><td>%.2f</td><td "
		"class=\"name\">%s</td></tr>\n",
		r->step_ns / 1e6, r->tokens_per_s_per_gpu, 100 * r->mfu, 100 * r->hfu,
		r->memory.total_bytes / 1073741824.0, orr_whatif_limit_name(r->limit));
}

static void table(FILE *f, const struct cli_layouts *w, const struct orr_whatif_result *v, size_t n)
{
	fputs("<table><tr><th>rank</th><th class=\"name\">layout</th><th>step ms</th>"
	      "<th>tokens/s/GPU</th><th>MFU %</th><th>HFU %</th><th>GiB/GPU</th><th class=\"name\">limit</th>"
	      "</tr>\n",
	      f);
	for (size_t i = 0; i < n; i++)
		row(f, w, &v[i]);
	fputs("</table>\n", f);
}

/* Bars of the step's parts, one per layout of v, labelled by rank (layout in the tooltip). */
static void bars(FILE *f, const struct cli_layouts *w, const struct orr_whatif_result *v, size_t n,
		 int width)
{
	struct html_bar *b = orr_xcalloc(n + 1, sizeof(*b));
	struct html_seg *s = orr_xcalloc(4 * n + 1, sizeof(*s));
	char(*label)[32] = orr_xcalloc(n + 1, sizeof(*label));
	char(*tip)[160] = orr_xcalloc(n + 1, sizeof(*tip));

	for (size_t i = 0; i < n; i++) {
		const struct orr_whatif_result *r = &v[i];
		double part[4] = { r->compute_ns, r->exposed_comm_ns, r->bubble_ns, r->other_ns };

		for (int k = 0; k < 4; k++)
			s[4 * i + k] =
				(struct html_seg){ part[k] / 1e6, part_colors[k], part_names[k] };
		label_of(label[i], sizeof(label[i]), w, r);
		layout(tip[i], sizeof(tip[i]), r);
		b[i] = (struct html_bar){ label[i], tip[i], &s[4 * i], 4 };
	}
	html_legend(f, part_names, part_colors, 4);
	html_bars(f, b, n, 0, width, "ms");
	free(tip);
	free(label);
	free(s);
	free(b);
}

void cli_report_whatif(FILE *f, const struct cli_layouts *w, int width)
{
	const struct orr_whatif_tally *t = &w->tally;
	size_t top = t->nbest < TOP ? t->nbest : TOP, n = 0;
	struct orr_whatif_result *v;

	fputs("<h2 id=\"whatif\">Layouts (estimated)</h2>\n", f);
	counts(f, w);
	if (!t->nbest) {
		fputs("<p>No layout is feasible.</p>\n", f);
		return;
	}
	v = orr_xcalloc(top + 2, sizeof(*v));
	for (size_t i = 0; i < top; i++)
		v[n++] = t->best[i];
	if (t->marked && t->mark.why == ORR_WHATIF_FEASIBLE) {
		bool shown = false;

		for (size_t i = 0; i < n; i++)
			shown |= v[i].index == w->recorded_index;
		if (!shown)
			v[n++] = t->mark;
		fprintf(f,
			"<p class=\"note\">* the recorded layout: %.3f ms estimated (its replay "
			"%.3f ms); the best %.3f ms.</p>\n",
			t->mark.step_ns / 1e6, w->replayed_ns / 1e6, t->best[0].step_ns / 1e6);
	}
	table(f, w, v, n);
	fputs("<h3>The step of each by rank, on the first pipeline stage (ms)</h3>\n", f);
	bars(f, w, v, n, width);
	free(v);
	if (w->o->gpus_min == w->o->gpus_max)
		return;
	fputs("<h3>Pareto front: the fastest layout of each GPU count that no fewer GPUs "
	      "match</h3>\n",
	      f);
	table(f, w, t->front, t->nfront);
	bars(f, w, t->front, t->nfront, width);
}

/* SPDX-License-Identifier: MIT */
/*
 * orrery whatif's reports (docs/orrery-whatif.md, "Output"): the ranked table, the
 * infeasible configurations counted by reason (or listed), the recorded configuration's
 * place, and the Pareto front of GPUs against step time; JSON and CSV carry every
 * configuration, the feasible ones with the fields of orrery estimate --format=json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "whatif.h"
#include "banned.h"

#define GIB 1073741824.0

static const char *const rank_by_names[] = { "time", "tokens-per-gpu", "cost" };

static size_t count_why(const struct cli_layouts *w, enum orr_whatif_why why)
{
	size_t n = 0;

	for (size_t i = 0; i < w->n; i++)
		n += w->v[i].why == why;
	return n;
}

static bool on_front(const struct cli_layouts *w, size_t at)
{
	for (size_t i = 0; i < w->npareto; i++)
		if (w->pareto[i] == at)
			return true;
	return false;
}

/* ---- text ---- */

static void text_header(const struct cli_layouts *w, FILE *f)
{
	const struct cli_whatif_options *o = w->o;
	const struct orr_train_config *c = &w->swept, *rec = &w->base.from;
	char gpus[48];

	if (o->gpus_min == o->gpus_max)
		snprintf(gpus, sizeof(gpus), "%lld", (long long)o->gpus_min);
	else
		snprintf(gpus, sizeof(gpus), "%lld-%lld", (long long)o->gpus_min,
			 (long long)o->gpus_max);
	if (w->have_trace)
		fprintf(f, "%s, rank %d: recorded tp %lld pp %lld dp %lld, replayed step %.3f ms\n",
			cli_text(w->base.trace), w->base.rank, (long long)rec->tp,
			(long long)rec->pp, (long long)rec->dp, w->replayed_ns / 1e6);
	else
		fprintf(f, "model description\n");
	fprintf(f,
		"model: %lld layers, hidden %lld, %lld heads (%lld KV), ffn %lld, seq %lld, vocab "
		"%lld, %s\n",
		(long long)c->layers, (long long)c->hidden, (long long)c->heads,
		(long long)(c->kv_groups ? c->kv_groups : c->heads), (long long)c->ffn,
		(long long)c->seq, (long long)c->vocab, orr_dtype_name(c->precision));
	fprintf(f, "sweep: %s %s GPUs, global batch %lld, ranked by %s\n", gpus, w->x->gpu->id,
		(long long)w->global_batch, rank_by_names[o->rank_by]);
}

static void text_counts(const struct cli_layouts *w, FILE *f)
{
	double rate = w->seconds > 0 ? (double)w->n / w->seconds : 0;
	bool first = true;

	fprintf(f,
		"\n%llu configurations in %.2f s (%.0f/s; %d thread%s x %d process%s): %zu "
		"feasible",
		(unsigned long long)w->n, w->seconds, rate, w->jobs, w->jobs == 1 ? "" : "s",
		w->processes, w->processes == 1 ? "" : "es", w->nranked);
	for (int k = ORR_WHATIF_HEADS; k < ORR_WHATIF_WHY_COUNT; k++) {
		size_t n = count_why(w, (enum orr_whatif_why)k);

		if (!n)
			continue;
		fprintf(f, "%s %s %zu", first ? "; not:" : ",", orr_whatif_why_name(k), n);
		first = false;
	}
	fputc('\n', f);
}

static const char *onoff(bool b)
{
	return b ? "on" : "off";
}

static void text_row_head(FILE *f)
{
	fprintf(f,
		"  %5s %5s %3s %3s %4s %3s %3s %3s %4s %-9s %3s %3s %11s %9s %6s %7s %6s %6s  %s\n",
		"rank", "gpus", "tp", "pp", "dp", "cp", "vpp", "mb", "mbs", "recompute", "sp", "do",
		"step ms", "tok/s/GPU", "MFU %", "mem GiB", "bubl %", "comm %", "limit");
}

static void text_row(const struct cli_layouts *w, size_t at, FILE *f)
{
	const struct orr_whatif_result *r = &w->v[at];
	const struct orr_train_config *c = &r->c;
	size_t k = w->place[at];
	char rank[32];

	snprintf(rank, sizeof(rank), "%s%zu", at == w->recorded_at ? "*" : "", k);
	fprintf(f,
		"  %5s %5lld %3lld %3lld %4lld %3lld %3lld %3lld %4lld %-9s %3s %3s %11.3f %9.0f "
		"%6.1f %7.2f %6.1f %6.1f  %s\n",
		rank, (long long)r->gpus, (long long)c->tp, (long long)c->pp, (long long)c->dp,
		(long long)c->cp, (long long)c->vpp, (long long)c->micro_batch,
		(long long)c->micro_batches, orr_recompute_name(c->recompute),
		onoff(c->sequence_parallel), onoff(c->distributed_optimizer), r->step_ns / 1e6,
		r->tokens_per_s_per_gpu, isfinite(r->mfu) ? 100 * r->mfu : NAN,
		r->memory.total_bytes / GIB, 100 * r->bubble_ns / r->step_ns,
		100 * r->exposed_comm_ns / r->step_ns, orr_whatif_limit_name(r->limit));
}

static void text_ranked(const struct cli_layouts *w, FILE *f)
{
	size_t top = w->o->top ? (size_t)w->o->top : w->nranked;
	bool recorded_shown = false;

	if (!w->nranked) {
		fprintf(f, "\nno configuration is feasible\n");
		return;
	}
	fprintf(f, "\nranked (mbs: micro-batches per step; do: distributed optimizer; bubble and "
		   "exposed communication as shares of the step)\n");
	text_row_head(f);
	for (size_t i = 0; i < w->nranked && i < top; i++) {
		text_row(w, w->ranked[i], f);
		recorded_shown |= w->ranked[i] == w->recorded_at;
	}
	if (w->recorded_at != SIZE_MAX && !recorded_shown && w->place[w->recorded_at]) {
		fprintf(f, "  ...\n");
		text_row(w, w->recorded_at, f);
	}
	if (w->recorded_at != SIZE_MAX) {
		const struct orr_whatif_result *r = &w->v[w->recorded_at];

		if (r->why == ORR_WHATIF_FEASIBLE)
			fprintf(f,
				"  * the recorded configuration: %.3f ms estimated (its replay "
				"%.3f ms), the best %.3f ms (%+.1f %%)\n",
				r->step_ns / 1e6, w->replayed_ns / 1e6,
				w->v[w->ranked[0]].step_ns / 1e6,
				100 * (w->v[w->ranked[0]].step_ns / r->step_ns - 1));
		else
			fprintf(f, "  the recorded configuration is not feasible here: %s\n",
				orr_whatif_why_name(r->why));
	} else if (w->have_trace) {
		fprintf(f, "  the recorded configuration is not in this sweep\n");
	}
}

static void text_pareto(const struct cli_layouts *w, FILE *f)
{
	if (w->o->gpus_min == w->o->gpus_max || !w->npareto)
		return;
	fprintf(f, "\nPareto front (no fewer GPUs are as fast)\n");
	text_row_head(f);
	for (size_t i = 0; i < w->npareto; i++)
		text_row(w, w->pareto[i], f);
}

static void text_infeasible(const struct cli_layouts *w, FILE *f)
{
	if (!w->o->show_infeasible)
		return;
	fprintf(f, "\nnot feasible\n  %5s %3s %3s %4s %3s %3s %3s %4s %-9s  %s\n", "gpus", "tp",
		"pp", "dp", "cp", "vpp", "mb", "mbs", "recompute", "why");
	for (size_t i = 0; i < w->n; i++) {
		const struct orr_whatif_result *r = &w->v[i];
		const struct orr_train_config *c = &r->c;

		if (r->why == ORR_WHATIF_FEASIBLE)
			continue;
		fprintf(f, "  %5lld %3lld %3lld %4lld %3lld %3lld %3lld %4lld %-9s  %s",
			(long long)r->gpus, (long long)c->tp, (long long)c->pp, (long long)c->dp,
			(long long)c->cp, (long long)c->vpp, (long long)c->micro_batch,
			(long long)c->micro_batches, orr_recompute_name(c->recompute),
			orr_whatif_why_name(r->why));
		if (r->why == ORR_WHATIF_MEMORY)
			fprintf(f, ": %s", r->memory.why);
		else if (r->why == ORR_WHATIF_REFUSED)
			fprintf(f, ": %s", r->refused);
		fputc('\n', f);
	}
}

static void text(const struct cli_layouts *w, FILE *f)
{
	text_header(w, f);
	text_counts(w, f);
	text_ranked(w, f);
	text_pareto(w, f);
	text_infeasible(w, f);
	fprintf(f, "\nEach configuration is estimated as orrery estimate estimates it; the terms "
		   "are defined in docs/orrery-whatif.md.\n");
}

/* ---- JSON and CSV ---- */

/* Result r as orrery estimate would have reported it. */
static void as_estimate(const struct cli_layouts *w, const struct orr_whatif_result *r,
			struct cli_estimate *e)
{
	const struct orr_synth *s = &r->synth;
	double f = s->placed_ns > 0 ? r->step_ns / s->placed_ns : 0;

	*e = w->base;
	e->how = w->have_trace ? CLI_ESTIMATE_SYNTH_RATIO : CLI_ESTIMATE_SYNTH;
	if (!w->have_trace) {
		e->from = r->c;
		e->ranks = s->ranks;
		e->steps = 1;
	}
	e->to = r->c;
	e->memory = r->memory;
	e->memory_err = 0;
	e->estimated.step_ns = r->step_ns;
	/* as orrery estimate scales the synthesized step's breakdown to the estimate */
	cli_estimate_scale(
		&(struct orr_breakdown){ .exposed_compute_ns = llround(s->placed_compute_ns),
					 .overlapped_ns = llround(s->placed_overlapped_ns),
					 .exposed_comm_ns = llround(s->placed_comm_ns),
					 .other_ns = llround(s->placed_other_ns) },
		f, &e->estimated.breakdown);
	e->synth_to.synth = *s;
	e->synth_to.step.step_ns = s->placed_ns;
	e->synth_from.synth = w->recorded;
	e->synth_from.step.step_ns = w->recorded.placed_ns;
	e->replayed.step_ns = w->replayed_ns;
	e->tokens_per_s_per_gpu = r->tokens_per_s_per_gpu;
	e->mfu = r->mfu;
}

static void json_layout(struct json_out *j, const struct orr_whatif_result *r)
{
	const struct orr_train_config *c = &r->c;

	json_object(j, "config");
	json_int(j, "tp", c->tp);
	json_int(j, "pp", c->pp);
	json_int(j, "dp", c->dp);
	json_int(j, "cp", c->cp);
	json_int(j, "vpp", c->vpp);
	json_int(j, "micro_batch", c->micro_batch);
	json_int(j, "micro_batches", c->micro_batches);
	json_str(j, "recompute", orr_recompute_name(c->recompute));
	json_bool(j, "sequence_parallel", c->sequence_parallel);
	json_bool(j, "distributed_optimizer", c->distributed_optimizer);
	json_close_object(j);
}

static void json_feasible(struct json_out *j, const struct cli_layouts *w, size_t at, size_t k)
{
	const struct orr_whatif_result *r = &w->v[at];
	struct cli_estimate e;

	json_object(j, NULL);
	json_int(j, "place", (int64_t)k);
	json_int(j, "index", (int64_t)r->index);
	json_int(j, "gpus", r->gpus);
	json_str(j, "limit", orr_whatif_limit_name(r->limit));
	json_bool(j, "pareto", on_front(w, at));
	json_bool(j, "is_recorded", at == w->recorded_at);
	as_estimate(w, r, &e);
	cli_estimate_json_fields(j, &e);
	json_close_object(j);
}

static void json_infeasible(struct json_out *j, const struct cli_layouts *w, size_t at)
{
	const struct orr_whatif_result *r = &w->v[at];

	json_object(j, NULL);
	json_int(j, "index", (int64_t)r->index);
	json_int(j, "gpus", r->gpus);
	json_str(j, "why", orr_whatif_why_name(r->why));
	json_str(j, "detail",
		 r->why == ORR_WHATIF_MEMORY    ? r->memory.why
		 : r->why == ORR_WHATIF_REFUSED ? r->refused
						: NULL);
	json_bool(j, "is_recorded", at == w->recorded_at);
	if (r->why == ORR_WHATIF_MEMORY)
		json_int(j, "memory_bytes_per_gpu", (int64_t)llround(r->memory.total_bytes));
	json_layout(j, r);
	json_close_object(j);
}

static void json(const struct cli_layouts *w, FILE *f)
{
	const struct cli_whatif_options *o = w->o;
	struct json_out j;

	json_begin(&j, f);
	json_str(&j, "trace", w->have_trace ? w->base.trace : NULL);
	json_str(&j, "gpu", w->x->gpu->id);
	json_int(&j, "gpus_min", o->gpus_min);
	json_int(&j, "gpus_max", o->gpus_max);
	json_str(&j, "rank_by", rank_by_names[o->rank_by]);
	json_int(&j, "configurations", (int64_t)w->n);
	json_int(&j, "feasible", (int64_t)w->nranked);
	json_object(&j, "infeasible");
	for (int k = ORR_WHATIF_HEADS; k < ORR_WHATIF_WHY_COUNT; k++)
		json_int(&j, orr_whatif_why_name(k), (int64_t)count_why(w, (enum orr_whatif_why)k));
	json_close_object(&j);
	json_double(&j, "replayed_ns", w->replayed_ns);
	json_array(&j, "ranked");
	for (size_t i = 0; i < w->nranked; i++)
		json_feasible(&j, w, w->ranked[i], i + 1);
	json_close_array(&j);
	json_array(&j, "pareto");
	for (size_t i = 0; i < w->npareto; i++)
		json_int(&j, NULL, (int64_t)w->v[w->pareto[i]].index);
	json_close_array(&j);
	json_array(&j, "not_feasible");
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].why != ORR_WHATIF_FEASIBLE)
			json_infeasible(&j, w, i);
	json_close_array(&j);
	json_end(&j);
}

static void csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, ",%.17g", v);
	else
		fputc(',', f);
}

static void csv_row(const struct cli_layouts *w, size_t at, size_t k, FILE *f)
{
	const struct orr_whatif_result *r = &w->v[at];
	const struct orr_train_config *c = &r->c;
	bool ok = r->why == ORR_WHATIF_FEASIBLE;
	double part[4] = { NAN, NAN, NAN, NAN };
	struct cli_estimate e;

	/* the breakdown exactly as the JSON (orrery estimate's) has it */
	if (ok) {
		as_estimate(w, r, &e);
		cli_estimate_parts(&e, part);
	}

	if (k)
		fprintf(f, "%zu", k);
	fprintf(f, ",%llu,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%s,%d,%d,%d,%s",
		(unsigned long long)r->index, (long long)r->gpus, (long long)c->tp,
		(long long)c->pp, (long long)c->dp, (long long)c->cp, (long long)c->vpp,
		(long long)c->micro_batch, (long long)c->micro_batches,
		orr_recompute_name(c->recompute), c->sequence_parallel, c->distributed_optimizer,
		ok, orr_whatif_why_name(r->why));
	csv_num(f, ok ? (double)llround(r->step_ns) : NAN);
	csv_num(f, ok ? r->tokens_per_s_per_gpu : NAN);
	csv_num(f, ok ? r->mfu : NAN);
	csv_num(f,
		ok || r->why == ORR_WHATIF_MEMORY ? (double)llround(r->memory.total_bytes) : NAN);
	for (int i = 0; i < 4; i++)
		csv_num(f, ok ? (double)llround(part[i]) : NAN);
	fprintf(f, ",%s,%d,%d\n", ok ? orr_whatif_limit_name(r->limit) : "", on_front(w, at),
		at == w->recorded_at);
}

static void csv(const struct cli_layouts *w, FILE *f)
{
	fputs("place,index,gpus,tp,pp,dp,cp,vpp,micro_batch,micro_batches,recompute,"
	      "sequence_parallel,distributed_optimizer,feasible,why,iteration_ns,"
	      "tokens_per_s_per_gpu,mfu,memory_bytes_per_gpu,compute_ns,exposed_comm_ns,"
	      "bubble_ns,other_ns,limit,pareto,recorded\n",
	      f);
	for (size_t i = 0; i < w->nranked; i++)
		csv_row(w, w->ranked[i], i + 1, f);
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].why != ORR_WHATIF_FEASIBLE)
			csv_row(w, i, 0, f);
}

void cli_whatif_report(const struct cli_layouts *w, FILE *f)
{
	if (w->o->format == CLI_FORMAT_JSON)
		json(w, f);
	else if (w->o->format == CLI_FORMAT_CSV)
		csv(w, f);
	else
		text(w, f);
}

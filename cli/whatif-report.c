/* SPDX-License-Identifier: MIT */
/*
 * orrery whatif's reports (docs/orrery-whatif.md, "Output"), written as the sweep goes:
 * the ranked table, the infeasible configurations counted by reason (or listed), the
 * recorded configuration's place, and the Pareto front of GPUs against step time; JSON
 * and CSV carry every configuration in the order of the space as it is estimated, the
 * feasible ones with the fields of orrery estimate --format=json, then (JSON) the tally.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "whatif.h"
#include "banned.h"

#define GIB 1073741824.0

static const char *const rank_by_names[] = { "time", "tokens-per-gpu", "cost" };

static bool on_front(const struct cli_layouts *w, const struct orr_whatif_result *r)
{
	for (size_t i = 0; i < w->tally.nfront; i++)
		if (w->tally.front[i].index == r->index)
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
	if (!w->have_trace)
		fprintf(f, "model description\n");
	else if (w->base.profiler_host_ns > 0)
		fprintf(f,
			"%s, rank %d: recorded tp %lld pp %lld dp %lld, replayed step %.3f ms (the "
			"estimates leave out the %.3f ms per rank and step the profiler added to "
			"the replayed host's calls)\n",
			cli_text(w->base.trace), w->base.rank, (long long)rec->tp,
			(long long)rec->pp, (long long)rec->dp, w->replayed_ns / 1e6,
			w->base.profiler_host_ns / 1e6);
	else
		fprintf(f, "%s, rank %d: recorded tp %lld pp %lld dp %lld, replayed step %.3f ms\n",
			cli_text(w->base.trace), w->base.rank, (long long)rec->tp,
			(long long)rec->pp, (long long)rec->dp, w->replayed_ns / 1e6);
	fprintf(f,
		"model: %lld layers, hidden %lld, %lld heads (%lld KV), ffn %lld, seq %lld, vocab "
		"%lld, %s%s%s%s%s\n",
		(long long)c->layers, (long long)c->hidden, (long long)c->heads,
		(long long)(c->kv_groups ? c->kv_groups : c->heads), (long long)c->ffn,
		(long long)c->seq, (long long)c->vocab, orr_dtype_name(c->precision),
		c->gated_mlp ? ", swiglu" : "", c->untied_embeddings ? ", untied embeddings" : "",
		c->rms_norm ? ", RMSNorm" : "", c->rope ? ", rope" : "");
	fprintf(f, "sweep: %s %s GPUs, global batch %lld, ranked by %s\n", gpus, w->x->gpu->id,
		(long long)w->global_batch, rank_by_names[o->rank_by]);
}

static void text_counts(const struct cli_layouts *w, FILE *f)
{
	const struct orr_whatif_tally *t = &w->tally;
	double rate = w->seconds > 0 ? (double)t->n / w->seconds : 0;
	bool first = true;

	fprintf(f,
		"\n%llu configurations in %.2f s (%.0f/s; %d thread%s x %d process%s): %llu "
		"feasible",
		(unsigned long long)t->n, w->seconds, rate, w->jobs, w->jobs == 1 ? "" : "s",
		w->processes, w->processes == 1 ? "" : "es",
		(unsigned long long)t->count[ORR_WHATIF_FEASIBLE]);
	for (int k = ORR_WHATIF_HEADS; k < ORR_WHATIF_WHY_COUNT; k++) {
		uint64_t n = t->count[k];

		if (!n)
			continue;
		fprintf(f, "%s %s %llu", first ? "; not:" : ",", orr_whatif_why_name(k),
			(unsigned long long)n);
		first = false;
	}
	fputc('\n', f);
}

static const char *onoff(bool b)
{
	return b ? "on" : "off";
}

/* Whether the sweep tries uneven pipeline splits: then the tables show them. */
static bool uneven_swept(const struct cli_layouts *w)
{
	const struct cli_whatif_options *o = w->o;

	for (int l = CLI_WHATIF_LISTS - 2; l < CLI_WHATIF_LISTS; l++)
		for (size_t i = 0; i < o->nlist[l]; i++)
			if (o->list[l][i])
				return true;
	return false;
}

/* The column of the split after vpp, when the sweep tries uneven ones: "3/1", "-/1". */
static const char *split_cell(const struct cli_layouts *w, const struct orr_train_config *c,
			      char *buf, size_t size)
{
	char first[24] = "-", last[24] = "-", both[56];

	if (!uneven_swept(w))
		return "";
	if (!c)
		return " 1st/last";
	if (c->first_stage_layers)
		snprintf(first, sizeof(first), "%lld", (long long)c->first_stage_layers);
	if (c->last_stage_layers)
		snprintf(last, sizeof(last), "%lld", (long long)c->last_stage_layers);
	snprintf(both, sizeof(both), "%s/%s", first, last);
	snprintf(buf, size, " %8s", both);
	return buf;
}

static void text_row_head(const struct cli_layouts *w, FILE *f)
{
	char split[64];

	fprintf(f,
		"  %5s %5s %3s %3s %4s %3s %3s%s %3s %4s %-9s %3s %3s %11s %9s %6s %6s %7s %6s "
		"%6s  %s\n",
		"rank", "gpus", "tp", "pp", "dp", "cp", "vpp",
		split_cell(w, NULL, split, sizeof(split)), "mb", "mbs", "recompute", "sp", "do",
		"step ms", "tok/s/GPU", "MFU %", "HFU %", "mem GiB", "bubl %", "comm %", "limit");
}

/* A ranked configuration; its place "-" when it is past the best kept. */
static void text_row(const struct cli_layouts *w, const struct orr_whatif_result *r, FILE *f)
{
	const struct orr_train_config *c = &r->c;
	uint64_t k = orr_whatif_tally_place(&w->tally, r);
	char rank[32], split[64];

	snprintf(rank, sizeof(rank), "%s%s", r->index == w->recorded_index ? "*" : "",
		 k ? "" : "-");
	if (k)
		snprintf(rank + strlen(rank), sizeof(rank) - strlen(rank), "%llu",
			 (unsigned long long)k);
	fprintf(f,
		"  %5s %5lld %3lld %3lld %4lld %3lld %3lld%s %3lld %4lld %-9s %3s %3s %11.3f %9.0f "
		"%6.1f %6.1f %7.2f %6.1f %6.1f  %s\n",
		rank, (long long)r->gpus, (long long)c->tp, (long long)c->pp, (long long)c->dp,
		(long long)c->cp, (long long)c->vpp, split_cell(w, c, split, sizeof(split)),
		(long long)c->micro_batch, (long long)c->micro_batches,
		orr_recompute_name(c->recompute), onoff(c->sequence_parallel),
		onoff(c->distributed_optimizer), r->step_ns / 1e6, r->tokens_per_s_per_gpu,
		isfinite(r->mfu) ? 100 * r->mfu : NAN, isfinite(r->hfu) ? 100 * r->hfu : NAN,
		r->memory.total_bytes / GIB, 100 * r->bubble_ns / r->step_ns,
		100 * r->exposed_comm_ns / r->step_ns, orr_whatif_limit_name(r->limit));
}

static void text_ranked(const struct cli_layouts *w, FILE *f)
{
	const struct orr_whatif_tally *t = &w->tally;
	const struct orr_whatif_result *rec = t->marked ? &t->mark : NULL;
	bool recorded_shown = false;

	if (!t->nbest) {
		fprintf(f, "\nno configuration is feasible\n");
		return;
	}
	fprintf(f,
		"\nranked (mb: sequences per micro-batch; mbs: micro-batches per step; do: "
		"distributed optimizer;%s bubble and exposed communication as shares of the step; "
		"limit: the step's largest part)\n",
		uneven_swept(w) ? " 1st/last: the first and last stages' layers, - as the others;"
				: "");
	text_row_head(w, f);
	for (size_t i = 0; i < t->nbest; i++) {
		text_row(w, &t->best[i], f);
		recorded_shown |= t->best[i].index == w->recorded_index;
	}
	if (rec && !recorded_shown && t->mark_place) {
		fprintf(f, "  ...\n");
		text_row(w, rec, f);
	}
	if (rec && rec->why == ORR_WHATIF_FEASIBLE)
		fprintf(f,
			"  * the recorded configuration: %.3f ms estimated (its replay %.3f ms), the "
			"best %.3f ms (%+.1f %%)\n",
			rec->step_ns / 1e6, w->replayed_ns / 1e6, t->best[0].step_ns / 1e6,
			100 * (t->best[0].step_ns / rec->step_ns - 1));
	else if (rec)
		fprintf(f, "  the recorded configuration is not feasible here: %s\n",
			orr_whatif_why_name(rec->why));
	else if (w->have_trace)
		fprintf(f, "  the recorded configuration is not in this sweep\n");
}

static void text_pareto(const struct cli_layouts *w, FILE *f)
{
	const struct orr_whatif_tally *t = &w->tally;

	if (w->o->gpus_min == w->o->gpus_max || !t->nfront)
		return;
	fprintf(f, "\nPareto front (no fewer GPUs are as fast; rank -: not among those above)\n");
	text_row_head(w, f);
	for (size_t i = 0; i < t->nfront; i++)
		text_row(w, &t->front[i], f);
}

static void as_estimate(const struct cli_layouts *w, const struct orr_whatif_result *r,
			struct orr_estimate *e);

/*
 * The sources and caveats of the best configuration's estimate, as orrery estimate
 * prints them (JSON gives every configuration's).
 */
static void text_caveats(const struct cli_layouts *w, FILE *f)
{
	struct orr_estimate e;

	if (!w->tally.nbest)
		return;
	as_estimate(w, &w->tally.best[0], &e);
	fprintf(f, "\nthe best configuration's sources and caveats, as orrery estimate prints "
		   "them\n");
	cli_estimate_caveats(&e, f);
}

/* --show-infeasible: a line per configuration not feasible, kept until the end. */
static void text_infeasible_row(const struct cli_layouts *w, FILE *f,
				const struct orr_whatif_result *r)
{
	const struct orr_train_config *c = &r->c;
	char split[64];

	fprintf(f, "  %5lld %3lld %3lld %4lld %3lld %3lld%s %3lld %4lld %-9s  %s",
		(long long)r->gpus, (long long)c->tp, (long long)c->pp, (long long)c->dp,
		(long long)c->cp, (long long)c->vpp, split_cell(w, c, split, sizeof(split)),
		(long long)c->micro_batch, (long long)c->micro_batches,
		orr_recompute_name(c->recompute), orr_whatif_why_name(r->why));
	if (r->why == ORR_WHATIF_MEMORY)
		fprintf(f, ": %s", r->memory.why);
	else if (r->why == ORR_WHATIF_REFUSED)
		fprintf(f, ": %s", r->refused);
	fputc('\n', f);
}

static void text_infeasible(const struct cli_whatif_writer *o, FILE *f)
{
	char buf[65536];
	size_t n;

	if (!o->spill)
		return;
	char split[64];

	fprintf(f, "\nnot feasible\n  %5s %3s %3s %4s %3s %3s%s %3s %4s %-9s  %s\n", "gpus", "tp",
		"pp", "dp", "cp", "vpp", split_cell(o->w, NULL, split, sizeof(split)), "mb", "mbs",
		"recompute", "why");
	rewind(o->spill);
	while ((n = fread(buf, 1, sizeof(buf), o->spill)) > 0)
		fwrite(buf, 1, n, f);
}

static void text(const struct cli_whatif_writer *o, FILE *f)
{
	const struct cli_layouts *w = o->w;

	text_header(w, f);
	text_counts(w, f);
	text_ranked(w, f);
	text_pareto(w, f);
	text_caveats(w, f);
	text_infeasible(o, f);
	if (w->have_trace)
		fprintf(f,
			"\nEach configuration is estimated as orrery estimate estimates it: the "
			"trace re-timed to its sizes (micro-batch, TP, DP and the model's) in the "
			"recorded layout, times the ratio of its synthesized step to that layout's "
			"where the structure changes; the terms are defined in "
			"docs/orrery-whatif.md.\n");
	else
		fprintf(f, "\nEach configuration is estimated as orrery estimate estimates it; the "
			   "terms are defined in docs/orrery-whatif.md.\n");
}

/* ---- JSON and CSV ---- */

/* Result r as orrery estimate would have reported it. */
static void as_estimate(const struct cli_layouts *w, const struct orr_whatif_result *r,
			struct orr_estimate *e)
{
	orr_estimate_of_result(&w->base, w->have_trace, &w->recorded, w->replayed_ns, r, e);
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
	json_int(j, "first_stage_layers", c->first_stage_layers);
	json_int(j, "last_stage_layers", c->last_stage_layers);
	json_int(j, "micro_batch", c->micro_batch);
	json_int(j, "micro_batches", c->micro_batches);
	json_str(j, "recompute", orr_recompute_name(c->recompute));
	json_bool(j, "sequence_parallel", c->sequence_parallel);
	json_bool(j, "distributed_optimizer", c->distributed_optimizer);
	json_close_object(j);
}

/*
 * A feasible configuration: the fields of orrery estimate --format=json, and in the
 * ranking (place > 0) its place and whether it is on the Pareto front.
 */
static void json_feasible(struct json_out *j, const struct cli_layouts *w,
			  const struct orr_whatif_result *r, uint64_t place)
{
	struct orr_estimate e;

	json_object(j, NULL);
	if (place) {
		json_int(j, "place", (int64_t)place);
		json_bool(j, "pareto", on_front(w, r));
	}
	json_int(j, "index", (int64_t)r->index);
	json_int(j, "gpus", r->gpus);
	json_str(j, "why", orr_whatif_why_name(r->why));
	json_str(j, "limit", orr_whatif_limit_name(r->limit));
	json_bool(j, "is_recorded", r->index == w->recorded_index);
	as_estimate(w, r, &e);
	cli_estimate_json_fields(j, &e);
	json_close_object(j);
}

static void json_infeasible(struct json_out *j, const struct cli_layouts *w,
			    const struct orr_whatif_result *r)
{
	json_object(j, NULL);
	json_int(j, "index", (int64_t)r->index);
	json_int(j, "gpus", r->gpus);
	json_str(j, "why", orr_whatif_why_name(r->why));
	json_str(j, "detail",
		 r->why == ORR_WHATIF_MEMORY    ? r->memory.why
		 : r->why == ORR_WHATIF_REFUSED ? r->refused
						: NULL);
	json_bool(j, "is_recorded", r->index == w->recorded_index);
	if (r->why == ORR_WHATIF_MEMORY)
		json_int(j, "memory_bytes_per_gpu", (int64_t)llround(r->memory.total_bytes));
	json_layout(j, r);
	json_close_object(j);
}

static void json_begin_report(struct cli_whatif_writer *o)
{
	const struct cli_layouts *w = o->w;
	const struct cli_whatif_options *opt = w->o;
	struct json_out *j = &o->j;
	char why[256];

	json_begin(j, o->f);
	json_str(j, "trace", w->have_trace ? w->base.trace : NULL);
	json_str(j, "gpu", w->x->gpu->id);
	json_int(j, "gpus_min", opt->gpus_min);
	json_int(j, "gpus_max", opt->gpus_max);
	json_str(j, "rank_by", rank_by_names[opt->rank_by]);
	if (isfinite(w->replayed_ns))
		json_int(j, "replayed_ns", (int64_t)llround(w->replayed_ns));
	else
		json_double(j, "replayed_ns", NAN);
	json_double(j, "launch_ns", w->base.cpu_op_ns);
	json_str(j, "launch", cli_launch_source(&w->base, why, sizeof(why)));
	json_array(j, "results");
}

static void json_end_report(struct cli_whatif_writer *o)
{
	const struct cli_layouts *w = o->w;
	const struct orr_whatif_tally *t = &w->tally;
	struct json_out *j = &o->j;

	json_close_array(j);
	json_int(j, "configurations", (int64_t)t->n);
	json_int(j, "feasible", (int64_t)t->count[ORR_WHATIF_FEASIBLE]);
	json_object(j, "infeasible");
	for (int k = ORR_WHATIF_HEADS; k < ORR_WHATIF_WHY_COUNT; k++)
		json_int(j, orr_whatif_why_name(k), (int64_t)t->count[k]);
	json_close_object(j);
	json_object(j, "recorded");
	json_double(j, "index", w->recorded_index == UINT64_MAX ? NAN : (double)w->recorded_index);
	json_double(j, "place", t->mark_place ? (double)t->mark_place : NAN);
	json_close_object(j);
	json_array(j, "ranked");
	for (size_t i = 0; i < t->nbest; i++)
		json_feasible(j, w, &t->best[i], i + 1);
	json_close_array(j);
	json_array(j, "pareto");
	for (size_t i = 0; i < t->nfront; i++)
		json_int(j, NULL, (int64_t)t->front[i].index);
	json_close_array(j);
	json_end(j);
}

static void csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, ",%.17g", v);
	else
		fputc(',', f);
}

static void csv_row(const struct cli_layouts *w, const struct orr_whatif_result *r, FILE *f)
{
	const struct orr_train_config *c = &r->c;
	bool ok = r->why == ORR_WHATIF_FEASIBLE;
	double part[4] = { NAN, NAN, NAN, NAN };
	struct orr_estimate e;

	/* the breakdown exactly as the JSON (orrery estimate's) has it */
	if (ok) {
		as_estimate(w, r, &e);
		orr_estimate_parts(&e, part);
	}
	fprintf(f, "%llu,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%s,%d,%d,%d,%s",
		(unsigned long long)r->index, (long long)r->gpus, (long long)c->tp,
		(long long)c->pp, (long long)c->dp, (long long)c->cp, (long long)c->vpp,
		(long long)c->first_stage_layers, (long long)c->last_stage_layers,
		(long long)c->micro_batch, (long long)c->micro_batches,
		orr_recompute_name(c->recompute), c->sequence_parallel, c->distributed_optimizer,
		ok, orr_whatif_why_name(r->why));
	csv_num(f, ok ? (double)llround(r->step_ns) : NAN);
	csv_num(f, ok ? r->tokens_per_s_per_gpu : NAN);
	csv_num(f, ok ? r->mfu : NAN);
	csv_num(f, ok ? r->hfu : NAN);
	csv_num(f,
		ok || r->why == ORR_WHATIF_MEMORY ? (double)llround(r->memory.total_bytes) : NAN);
	for (int i = 0; i < 4; i++)
		csv_num(f, ok ? (double)llround(part[i]) : NAN);
	fprintf(f, ",%s,%d\n", ok ? orr_whatif_limit_name(r->limit) : "",
		r->index == w->recorded_index);
}

int cli_whatif_write_begin(struct cli_whatif_writer *o, const struct cli_layouts *w, FILE *f)
{
	memset(o, 0, sizeof(*o));
	o->w = w;
	o->f = f;
	if (w->o->format == CLI_FORMAT_JSON) {
		json_begin_report(o);
	} else if (w->o->format == CLI_FORMAT_CSV) {
		fputs("index,gpus,tp,pp,dp,cp,vpp,first_stage_layers,last_stage_layers,micro_batch,"
		      "micro_batches,recompute,"
		      "sequence_parallel,distributed_optimizer,feasible,why,iteration_ns,"
		      "tokens_per_s_per_gpu,mfu,hfu,memory_bytes_per_gpu,compute_ns,exposed_comm_ns,"
		      "bubble_ns,other_ns,limit,recorded\n",
		      f);
	} else if (w->o->show_infeasible && !(o->spill = tmpfile())) {
		cli_error("cannot make a temporary file for --show-infeasible: %s",
			  orr_strerror(-errno));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

void cli_whatif_write_row(void *writer, const struct orr_whatif_result *r)
{
	struct cli_whatif_writer *o = writer;

	if (o->w->o->format == CLI_FORMAT_JSON) {
		if (r->why == ORR_WHATIF_FEASIBLE)
			json_feasible(&o->j, o->w, r, 0);
		else
			json_infeasible(&o->j, o->w, r);
	} else if (o->w->o->format == CLI_FORMAT_CSV) {
		csv_row(o->w, r, o->f);
	} else if (o->spill && r->why != ORR_WHATIF_FEASIBLE) {
		text_infeasible_row(o->w, o->spill, r);
	}
}

void cli_whatif_write_end(struct cli_whatif_writer *o)
{
	if (o->w->o->format == CLI_FORMAT_JSON)
		json_end_report(o);
	else if (o->w->o->format != CLI_FORMAT_CSV)
		text(o, o->f);
}

void cli_whatif_write_release(struct cli_whatif_writer *o)
{
	if (o->spill)
		fclose(o->spill);
	o->spill = NULL;
}

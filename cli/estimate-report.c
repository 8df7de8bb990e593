/* SPDX-License-Identifier: MIT */
/* orrery estimate: the text and JSON reports (docs/orrery-estimate.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "estimate.h"
#include "banned.h"

#define GIB 1073741824.0

/* The fields of a configuration the report shows, in order. */
struct field {
	const char *name;
	int64_t from, to;
};

/* split: the uneven split's fields even when neither configuration has one (JSON's) */
static size_t fields(const struct orr_estimate *e, bool split, struct field *v)
{
	const struct orr_train_config *a = &e->from, *b = &e->to;
	size_t n = 0;

#define F(label, f) v[n++] = (struct field){ label, a->f, b->f }
	F("layers", layers);
	F("hidden", hidden);
	F("heads", heads);
	F("kv_heads", kv_groups);
	F("ffn", ffn);
	F("vocab", vocab);
	F("seq", seq);
	F("micro_batch", micro_batch);
	F("micro_batches", micro_batches);
	F("tp", tp);
	F("pp", pp);
	F("dp", dp);
	F("cp", cp);
	F("vpp", vpp);
	/* the text shows an uneven split only when there is one */
	if (split || a->first_stage_layers || b->first_stage_layers)
		F("first_stage_layers", first_stage_layers);
	if (split || a->last_stage_layers || b->last_stage_layers)
		F("last_stage_layers", last_stage_layers);
#undef F
	return n;
}

/* Whether any field the report shows differs between the trace's and the estimate's. */
static bool config_changed(const struct orr_estimate *e)
{
	struct field v[20];
	size_t n = fields(e, false, v);

	for (size_t i = 0; i < n; i++)
		if (v[i].from != v[i].to)
			return true;
	return false;
}

static void text_changes(const struct orr_estimate *e)
{
	struct orr_estimate_delta v[ORR_ESTIMATE_NDELTA];
	size_t n = orr_estimate_deltas(e, v), shown = 0;

	printf("\nlargest changes of GPU time, per rank and step:\n");
	for (size_t i = 0; i < n && shown < 5; i++) {
		if (v[i].after == v[i].before)
			continue;
		printf("  %-18s %10.3f ms -> %10.3f ms (%+.3f ms)\n", v[i].what, v[i].before / 1e6,
		       v[i].after / 1e6, (v[i].after - v[i].before) / 1e6);
		shown++;
	}
	if (!shown && config_changed(e))
		printf("  none: what changed moves no modeled GPU time\n");
	else if (!shown)
		printf("  none: the configuration is the trace's\n");
}

static double pct(double a, double b)
{
	return 100 * (a / b - 1);
}

/* How the data-parallel ranks share the model's state. */
static const char *sharding_name(const struct orr_train_config *c)
{
	return c->fully_sharded ? "full" : c->distributed_optimizer ? "optimizer" : "none";
}

/* When the gradients are reduced over DP. */
static const char *reduce_name(const struct orr_train_config *c)
{
	return c->fully_sharded ? "per-layer" : c->overlap_grad_reduce ? "overlapped" : "at-end";
}

/* The model's features by Megatron's names: the MLP, embeddings, norm and positions. */
static const char *mlp_name(const struct orr_train_config *c)
{
	return c->gated_mlp ? "swiglu" : "gelu";
}

static const char *embeddings_name(const struct orr_train_config *c)
{
	return c->untied_embeddings ? "untied" : "tied";
}

static const char *norm_name(const struct orr_train_config *c)
{
	return c->rms_norm ? "RMSNorm" : "LayerNorm";
}

static const char *positions_name(const struct orr_train_config *c)
{
	return c->rope ? "rope" : "learned_absolute";
}

/*
 * The device synchronizations modeled (--sync-timers; --sync-layers where it acts, with
 * full recompute), as the JSON config's sync_timers and sync_layers; NULL when none.
 */
static const char *sync_name(const struct orr_train_config *c)
{
	bool layers = orr_train_syncs_layers(c);

	if (c->sync_timers)
		return layers ? "passes,layers" : "passes";
	return layers ? "layers" : NULL;
}

/* --sync-layers given where it changes nothing: said, beside what was modeled. */
static const char *sync_unused(const struct orr_train_config *c)
{
	return c->sync_layers && !orr_train_syncs_layers(c)
		       ? "  (--sync-layers does not apply: only checkpointed layers "
			 "synchronize, with --recompute full)"
		       : "";
}

static bool sync_shown(const struct orr_train_config *c)
{
	return sync_name(c) || c->sync_layers;
}

/*
 * With a trace: the MLP as recorded (fit tells a gated one); the embeddings, norm and
 * positions, which a trace does not tell, only where the options set them.
 */
static void text_features(const struct orr_estimate *e)
{
	const struct orr_train_config *f = &e->from, *t = &e->to;

	printf("  %-12s %10s %10s\n", "mlp", mlp_name(f), mlp_name(t));
	if (t->untied_embeddings)
		printf("  %-12s %10s %10s\n", "embeddings", "?", embeddings_name(t));
	if (t->rms_norm)
		printf("  %-12s %10s %10s\n", "norm", "?", norm_name(t));
	if (t->rope)
		printf("  %-12s %10s %10s\n", "positions", "?", positions_name(t));
	if (sync_shown(t))
		printf("  %-12s %10s %10s%s\n", "synchronize", "?",
		       sync_name(t) ? sync_name(t) : "none", sync_unused(t));
}

/* The first value's width after a name of 12 columns, less what a longer one takes. */
static int value_width(const char *name)
{
	int over = (int)strlen(name) - 12;

	return over > 0 ? 10 - over : 10;
}

/* A row of named values, recorded and estimated, marked as the sizes are when they differ. */
static void named_row(const char *name, const char *from, const char *to)
{
	printf("  %-12s %10s %10s%s\n", name, from, to, strcmp(from, to) ? "  changed" : "");
}

static void text_config(const struct orr_estimate *e)
{
	struct field v[20];
	size_t n = fields(e, false, v);

	if (!e->trace) {
		printf("\n");
		for (size_t i = 0; i < n; i++)
			printf("  %-12s %*lld\n", v[i].name, value_width(v[i].name),
			       (long long)v[i].to);
		printf("  %-12s %10s\n  %-12s %10s\n  %-12s %10s\n  %-12s %10s\n", "precision",
		       orr_dtype_name(e->to.precision), "recompute",
		       orr_recompute_name(e->to.recompute), "attention",
		       e->to.flash_attention ? "flash" : "unfused", "sharding",
		       sharding_name(&e->to));
		printf("  %-12s %10s\n", "grad reduce", reduce_name(&e->to));
		printf("  %-12s %10s\n  %-12s %10s\n  %-12s %10s\n  %-12s %10s\n", "mlp",
		       mlp_name(&e->to), "embeddings", embeddings_name(&e->to), "norm",
		       norm_name(&e->to), "positions", positions_name(&e->to));
		if (sync_shown(&e->to))
			printf("  %-12s %10s%s\n", "synchronize",
			       sync_name(&e->to) ? sync_name(&e->to) : "none", sync_unused(&e->to));
		return;
	}
	printf("\n%-14s %10s %10s\n", "", "recorded", "estimated");
	for (size_t i = 0; i < n; i++) {
		bool kept = strcmp(v[i].name, "ffn") == 0 &&
			    (orr_estimate_caveats(e) & ORR_CAVEAT_FFN_KEPT);

		printf("  %-12s %*lld %10lld%s\n", v[i].name, value_width(v[i].name),
		       (long long)v[i].from, (long long)v[i].to,
		       v[i].from != v[i].to ? "  changed"
		       : kept ? "  kept: the trace's, with another hidden (--ffn changes it)"
			      : "");
	}
	named_row("precision", orr_dtype_name(e->from.precision), orr_dtype_name(e->to.precision));
	named_row("recompute", orr_recompute_name(e->from.recompute),
		  orr_recompute_name(e->to.recompute));
	named_row("sharding", sharding_name(&e->from), sharding_name(&e->to));
	named_row("grad reduce", reduce_name(&e->from), reduce_name(&e->to));
	text_features(e);
}

/*
 * A step time, with its difference from base: the replay's error against the measured
 * step (from NULL), else a what-if's signed change from the step named from.
 */
static void text_step(const char *label, const struct orr_estimate_step *s, double base,
		      const char *from)
{
	const struct orr_breakdown *b = &s->breakdown;
	double total = (double)(b->exposed_compute_ns + b->overlapped_ns + b->exposed_comm_ns +
				b->other_ns);

	printf("  %-10s %12.3f ms", label, s->step_ns / 1e6);
	if (isfinite(base) && from)
		printf(" (%+.1f %% from %s)", pct(s->step_ns, base), from);
	else if (isfinite(base))
		printf(" (error %+.1f %%)", pct(s->step_ns, base));
	if (total > 0)
		printf("   compute %.1f %%, overlapped %.1f %%, exposed communication %.1f %%, "
		       "idle %.1f %%",
		       100 * (double)b->exposed_compute_ns / total,
		       100 * (double)b->overlapped_ns / total,
		       100 * (double)b->exposed_comm_ns / total, 100 * (double)b->other_ns / total);
	printf("\n");
}

/* The allocator's reserve the memory estimate holds, and where it came from. */
static void reserve(const struct orr_estimate *e, FILE *f)
{
	unsigned c = orr_estimate_caveats(e);

	if (c & ORR_CAVEAT_RESERVE)
		fprintf(f,
			"  reserve %.2f GiB: the trace's allocator reserved %.2f GiB at its peak, "
			"the recorded configuration's estimate less\n",
			e->reserve_bytes / GIB, e->measured_peak_bytes / GIB);
	else if (c & ORR_CAVEAT_NO_ALLOCATOR)
		fprintf(f,
			"  reserve 0: the trace records no allocator totals (profile_memory=True "
			"would let orrery calibrate one)\n");
}

static void text_memory(const struct orr_estimate *e)
{
	const struct orr_memory *m = &e->memory;

	if (orr_estimate_caveats(e) & ORR_CAVEAT_NO_MEMORY) {
		printf("\nmemory per GPU: not estimated: %s\n", orr_strerror(e->memory_err));
		return;
	}
	printf("\nmemory per GPU (the first pipeline stage): %.2f GiB: weights, gradients and "
	       "optimizer %.2f GiB (%.0f parameters x %.1f bytes), activations %.2f GiB\n",
	       m->total_bytes / GIB, m->model_bytes / GIB, m->params, m->bytes_per_param,
	       m->activation_bytes / GIB);
	printf("  %s: %s\n", m->fits ? "fits" : "does not fit", cli_text(m->why));
	reserve(e, stdout);
}

/*
 * Where a synthesized step's times came from, one line per kind of task, the launch
 * thread's time, and the lower bound of the hardware table's peaks.
 */
static void sources(const struct orr_estimate *e, FILE *f)
{
	const struct orr_synth *s = &e->synth_to.synth;
	const struct orr_synth_sources *k = &s->sources;
	char why[256];

	fprintf(f,
		"synthesized: %zu rank%s (one per pipeline stage), %zu kernels, %zu collectives, "
		"%zu transfers\n",
		s->ranks, s->ranks == 1 ? "" : "s", s->kernels, s->collectives, s->transfers);
	fprintf(f,
		"  GEMMs        %zu by a fitted class, %zu by the roofline x a measured "
		"efficiency, %zu at the hardware table's peak\n",
		k->gemm_fit, k->gemm_roofline, k->gemm_peak);
	if (k->gemm_memory)
		fprintf(f,
			"  GEMMs        %zu batched and bound by memory, by the bytes their tiles "
			"move at a measured rate\n",
			k->gemm_memory);
	if (k->gemm_tiles)
		fprintf(f, "  GEMMs        %zu by tiles and waves (--gemm-model tiles)\n",
			k->gemm_tiles);
	fprintf(f,
		"  kernels      %zu by a fitted family, %zu by the roofline x a measured "
		"efficiency, %zu at the hardware table's peak\n",
		k->kern_fit, k->kern_roofline, k->kern_peak);
	fprintf(f,
		"  collectives  %zu by a fitted model, %zu by a measured bus bandwidth, %zu by "
		"the hardware table's link\n",
		k->coll_fit, k->coll_measured, k->coll_peak);
	if (e->costs || e->trace)
		fprintf(f, "  models       %s%s\n",
			e->costs ? "the costs of " : "fitted on the trace",
			e->costs ? cli_text(e->costs) : "");
	if (e->costs_gpu && e->gpu)
		fprintf(f,
			"  transferred  the costs were fitted on %s: GEMMs and kernels at their "
			"measured efficiency over the %s's roofline, collectives by its hardware "
			"table (--transfer-costs)\n",
			e->costs_gpu->id, e->gpu->id);
	fprintf(f, "  launches     %.1f us of the launch thread per kernel (%s)\n",
		e->cpu_op_ns / 1e3, cli_launch_source(e, why, sizeof(why)));
	if (orr_estimate_caveats(e) & ORR_CAVEAT_PEAKS)
		fprintf(f,
			"  no costs: every GPU time is the hardware table's peak, a lower bound; "
			"--costs FILE (orrery fit -o FILE on a trace of this GPU) times it as "
			"measured\n");
	if (s->bubble_ns > 0)
		fprintf(f, "  pipeline bubble of the first stage %.3f ms\n", s->bubble_ns / 1e6);
}

void cli_estimate_caveats(const struct orr_estimate *e, FILE *f)
{
	sources(e, f);
	reserve(e, f);
}

static void text_retimed(const struct orr_estimate *e)
{
	const struct orr_retime *r = &e->retime;

	printf("\nre-timed: %zu GEMMs (%zu by the GEMM model%s%s, %zu by their FLOPs), %zu "
	       "collectives (%zu by a collective model), %zu other kernels; %zu GPU tasks kept "
	       "as measured\n",
	       r->gemms, r->gemms_modeled, e->costs ? " of " : "",
	       e->costs ? cli_text(e->costs) : "", r->gemms - r->gemms_modeled, r->collectives,
	       r->collectives_modeled, r->kernels, r->kept);
	if (r->layer_gpu_tasks)
		printf("layers %lld -> %lld on the host timeline: %zu GPU tasks and %zu calls of "
		       "the layers (%zu launches per layer, summed over passes) stretched by "
		       "%.3f\n",
		       (long long)e->from.layers, (long long)e->to.layers, r->layer_gpu_tasks,
		       r->layer_cpu_tasks, r->layer_period,
		       (double)e->to.layers / (double)e->from.layers);
	printf("host: the trace's own timeline%s\n",
	       e->cpu_op_from == ORR_LAUNCH_OPTION
		       ? " (--launch-us does not apply: it times the launches of a synthesized step)"
		       : "");
	text_changes(e);
}

void cli_estimate_text(const struct orr_estimate *e)
{
	if (e->trace)
		printf("%s: rank %d, %zu step%s", cli_text(e->trace), (int)e->rank, e->steps,
		       e->steps == 1 ? "" : "s");
	else
		printf("model description");
	printf("%s", e->forward_only ? ", forward only" : "");
	if (e->gpu)
		printf(", %s", e->gpu->id);
	printf(", by %s\n", orr_estimate_how_name(e->how));
	text_config(e);
	printf("\nstep time%s\n", e->trace ? " (mean over the job's steps)" : "");
	if (e->trace) {
		printf("  %-10s %12.3f ms\n", "measured", e->measured_ns / 1e6);
		text_step("replayed", &e->replayed, e->measured_ns, NULL);
	}
	if (e->how == ORR_ESTIMATE_SYNTH_RATIO && e->anchored) {
		printf("  %-10s %12.3f ms (the trace re-timed to the target's sizes, in its "
		       "own layout)\n",
		       "re-timed", e->anchor_retimed_ns / 1e6);
		text_step("synth re.", &e->synth_from.step, NAN, NULL);
		text_step("synth est.", &e->synth_to.step, e->synth_from.step.step_ns, "synth re.");
	} else if (e->how == ORR_ESTIMATE_SYNTH_RATIO) {
		text_step("synth rec.", &e->synth_from.step, NAN, NULL);
		text_step("synth est.", &e->synth_to.step, e->synth_from.step.step_ns,
			  "synth rec.");
	}
	text_step("estimated", &e->estimated, e->replayed.step_ns, "replayed");
	if (e->traced.step_ns > 0 && e->profiler_host_ns > 0) {
		text_step("as traced", &e->traced, e->replayed.step_ns, "replayed");
		printf("  (estimated: without the %.3f ms per rank and step the profiler added "
		       "to the replayed host's calls; as traced: with it)\n",
		       e->profiler_host_ns / 1e6);
	}
	printf("  tokens/s per GPU %.0f", e->tokens_per_s_per_gpu);
	if (isfinite(e->mfu))
		printf(", MFU %.1f %%, HFU %.1f %%", 100 * e->mfu, 100 * e->hfu);
	printf("\n");
	if (e->how == ORR_ESTIMATE_RETIME) {
		text_retimed(e);
	} else {
		if (e->how == ORR_ESTIMATE_SYNTH_RATIO)
			text_changes(e);
		putchar('\n');
		sources(e, stdout);
	}
	text_memory(e);
}

/* A time or size in whole units (the JSON's integers), null when not finite. */
static void json_whole(struct json_out *j, const char *key, double v)
{
	if (isfinite(v))
		json_int(j, key, (int64_t)llround(v));
	else
		json_double(j, key, NAN);
}

static void json_config(struct json_out *j, const char *key, const struct orr_estimate *e, bool to)
{
	const struct orr_train_config *c = to ? &e->to : &e->from;
	struct field v[20];
	size_t n = fields(e, true, v);

	json_object(j, key);
	for (size_t i = 0; i < n; i++)
		json_int(j, v[i].name, to ? v[i].to : v[i].from);
	json_str(j, "precision", orr_dtype_name(c->precision));
	json_bool(j, "sequence_parallel", c->sequence_parallel);
	json_bool(j, "distributed_optimizer", c->distributed_optimizer);
	json_bool(j, "fully_sharded", c->fully_sharded);
	json_bool(j, "overlap_grad_reduce", c->overlap_grad_reduce);
	json_bool(j, "p2p_scatter_gather", c->scatter_gather_p2p);
	json_bool(j, "sync_timers", c->sync_timers);
	json_bool(j, "sync_layers", orr_train_syncs_layers(c));
	if (to && c->sync_layers && !orr_train_syncs_layers(c))
		json_bool(j, "sync_layers_unused", true);
	if (to && (orr_estimate_caveats(e) & ORR_CAVEAT_FFN_KEPT))
		json_bool(j, "ffn_kept", true);
	json_str(j, "recompute", orr_recompute_name(c->recompute));
	json_str(j, "attention", c->flash_attention ? "flash" : "unfused");
	json_bool(j, "swiglu", c->gated_mlp);
	json_bool(j, "untie_embeddings_and_output_weights", c->untied_embeddings);
	json_str(j, "normalization", norm_name(c));
	json_str(j, "position_embedding_type", positions_name(c));
	json_close_object(j);
}

static void json_breakdown(struct json_out *j, const struct orr_estimate *e)
{
	double v[4];

	orr_estimate_parts(e, v);
	json_object(j, "breakdown");
	json_whole(j, "compute_ns", v[0]);
	json_whole(j, "exposed_comm_ns", v[1]);
	json_whole(j, "bubble_ns", v[2]);
	json_whole(j, "other_ns", v[3]);
	json_close_object(j);
}

/* Every kind of task's GPU time per rank and step, largest change first. */
static void json_changes(struct json_out *j, const struct orr_estimate *e)
{
	struct orr_estimate_delta v[ORR_ESTIMATE_NDELTA];
	size_t n = orr_estimate_deltas(e, v);

	json_array(j, "changes");
	for (size_t i = 0; i < n; i++) {
		json_object(j, NULL);
		json_str(j, "what", v[i].what);
		json_whole(j, "measured_ns", v[i].before);
		json_whole(j, "estimated_ns", v[i].after);
		json_close_object(j);
	}
	json_close_array(j);
}

static void json_counts(struct json_out *j, const char *key, size_t fit, size_t roofline,
			size_t peak, const char *middle)
{
	json_object(j, key);
	json_int(j, "fit", (int64_t)fit);
	json_int(j, middle, (int64_t)roofline);
	json_int(j, "hardware_table", (int64_t)peak);
	json_close_object(j);
}

static void json_synth_sources(struct json_out *j, const struct orr_estimate *e)
{
	const struct orr_synth_sources *k = &e->synth_to.synth.sources;
	char why[256];
	bool calibrated;

	json_str(j, "durations",
		 e->how == ORR_ESTIMATE_SYNTH
			 ? "a Megatron-LM step synthesized from the description"
			 : "the trace's replay x the synthesized step of the target over that "
			   "of the recorded configuration");
	json_str(j, "models",
		 e->costs   ? e->costs
		 : e->trace ? "fitted on the trace"
			    : "none: the hardware table's peaks (a lower bound)");
	if (e->costs_gpu)
		json_str(j, "costs_fitted_on", e->costs_gpu->id);
	json_counts(j, "gemm", k->gemm_fit, k->gemm_roofline, k->gemm_peak, "roofline");
	if (k->gemm_tiles)
		json_int(j, "gemm_tiles", (int64_t)k->gemm_tiles);
	if (k->gemm_memory)
		json_int(j, "gemm_memory_bound", (int64_t)k->gemm_memory);
	json_counts(j, "kernels", k->kern_fit, k->kern_roofline, k->kern_peak, "roofline");
	json_counts(j, "collectives", k->coll_fit, k->coll_measured, k->coll_peak,
		    "measured_bandwidth");
	json_double(j, "launch_ns", e->cpu_op_ns);
	calibrated = e->cpu_op_from == ORR_LAUNCH_TRACE || e->cpu_op_from == ORR_LAUNCH_COSTS;
	json_double(j, "launch_profiler_ns", calibrated ? e->cpu_op_profiler_ns : NAN);
	json_double(j, "launch_stall_ns", calibrated ? e->cpu_op_stall_ns : NAN);
	json_str(j, "launch", cli_launch_source(e, why, sizeof(why)));
}

static void json_sources(struct json_out *j, const struct orr_estimate *e)
{
	json_object(j, "sources");
	if (e->how != ORR_ESTIMATE_RETIME) {
		json_synth_sources(j, e);
	} else {
		json_str(j, "durations",
			 "the trace's, re-timed where the configuration changes them");
		json_str(j, "gemm",
			 e->costs ? "the GEMM model of the costs file (by FLOPs where it "
				    "cannot say)"
				  : "the GEMM model fitted on the trace (by FLOPs where it "
				    "cannot say)");
		if (e->costs)
			json_str(j, "costs", e->costs);
		json_str(j, "kernels",
			 "the trace's, scaled with their activation, at least the "
			 "trace's launch floor");
		json_str(j, "host",
			 e->cpu_op_from == ORR_LAUNCH_OPTION
				 ? "the trace's own timeline (--launch-us does not apply)"
				 : "the trace's own timeline");
		json_str(j, "collectives",
			 e->gpu ? "bytes x F(n) over the hardware table's link or "
				  "NIC bandwidth"
				: "bytes x F(n)");
	}
	json_str(j, "memory", "Megatron's parameter count and Korthikanti's activations");
	json_close_object(j);
}

static void json_synthesized(struct json_out *j, const struct orr_estimate *e)
{
	const struct orr_synth *s = &e->synth_to.synth;

	json_object(j, "synthesized");
	json_whole(j, "recorded_ns",
		   e->how == ORR_ESTIMATE_SYNTH_RATIO && !e->anchored ? e->synth_from.step.step_ns
								      : NAN);
	/* anchored: the ratio's base, synthesized at the re-timed sizes, and that estimate */
	json_whole(j, "anchor_ns",
		   e->how == ORR_ESTIMATE_SYNTH_RATIO && e->anchored ? e->synth_from.step.step_ns
								     : NAN);
	json_whole(j, "retimed_anchor_ns",
		   e->how == ORR_ESTIMATE_SYNTH_RATIO && e->anchored ? e->anchor_retimed_ns : NAN);
	json_whole(j, "target_ns", e->synth_to.step.step_ns);
	if (e->how == ORR_ESTIMATE_SYNTH_RATIO && e->anchored) {
		struct orr_estimate a = *e; /* the anchor's layout, as config shows the target's */

		a.to = e->anchor;
		json_config(j, "anchor", &a, true);
	}
	json_int(j, "ranks", (int64_t)s->ranks);
	json_int(j, "kernels", (int64_t)s->kernels);
	json_int(j, "collectives", (int64_t)s->collectives);
	json_int(j, "transfers", (int64_t)s->transfers);
	json_close_object(j);
}

static void json_retimed(struct json_out *j, const struct orr_estimate *e)
{
	json_object(j, "retimed");
	json_int(j, "gemms", (int64_t)e->retime.gemms);
	json_int(j, "gemms_modeled", (int64_t)e->retime.gemms_modeled);
	json_int(j, "collectives", (int64_t)e->retime.collectives);
	json_int(j, "collectives_modeled", (int64_t)e->retime.collectives_modeled);
	json_int(j, "kernels", (int64_t)e->retime.kernels);
	json_int(j, "kept", (int64_t)e->retime.kept);
	json_close_object(j);
}

void cli_estimate_json_fields(struct json_out *j, const struct orr_estimate *e)
{
	json_str(j, "method", orr_estimate_how_name(e->how));
	json_str(j, "trace", e->trace);
	json_str(j, "gpu", e->gpu ? e->gpu->id : NULL);
	json_int(j, "rank", e->rank);
	json_int(j, "steps", (int64_t)e->steps);
	json_whole(j, "iteration_ns", e->estimated.step_ns);
	json_whole(j, "measured_ns", e->measured_ns);
	json_whole(j, "replayed_ns", e->replayed.step_ns);
	/* From a trace the profiler added host time to: with it kept, and that time per step. */
	json_whole(j, "traced_ns", e->traced.step_ns > 0 ? e->traced.step_ns : NAN);
	json_whole(j, "profiler_host_ns", e->traced.step_ns > 0 ? e->profiler_host_ns : NAN);
	/* The what-if's signed change from the trace as replayed; null without one. */
	json_double(j, "change", orr_estimate_change(e));
	json_double(j, "tokens_per_s_per_gpu", e->tokens_per_s_per_gpu);
	json_double(j, "mfu", e->mfu);
	json_double(j, "hfu", e->hfu);
	json_whole(j, "memory_bytes_per_gpu", e->memory_err ? NAN : e->memory.total_bytes);
	json_bool(j, "fits", !e->memory_err && e->memory.fits);
	json_str(j, "fits_why", e->memory_err ? orr_strerror(e->memory_err) : e->memory.why);
	json_whole(j, "memory_reserve_bytes", e->reserve_bytes);
	json_whole(j, "memory_measured_peak_bytes", e->measured_peak_bytes);
	json_breakdown(j, e);
	json_config(j, "recorded", e, false);
	json_config(j, "config", e, true);
	if (e->how != ORR_ESTIMATE_SYNTH)
		json_changes(j, e);
	if (e->how != ORR_ESTIMATE_RETIME)
		json_synthesized(j, e);
	if (e->how == ORR_ESTIMATE_RETIME)
		json_retimed(j, e);
	json_sources(j, e);
}

void cli_estimate_json(const struct orr_estimate *e)
{
	struct json_out j;

	json_begin(&j, stdout);
	cli_estimate_json_fields(&j, e);
	json_end(&j);
}

void cli_estimate_report(const struct orr_estimate *e, int format)
{
	if (format == CLI_FORMAT_JSON)
		cli_estimate_json(e);
	else
		cli_estimate_text(e);
}

const char *cli_launch_source(const struct orr_estimate *e, char *buf, size_t size)
{
	const char *what = e->cpu_op_from == ORR_LAUNCH_COSTS ? "costs file: calibrated on the "
								"trace it was fitted on"
							      : "trace calibrated";
	int n;

	if (e->cpu_op_from == ORR_LAUNCH_OPTION && e->trace && e->how != ORR_ESTIMATE_RETIME) {
		/* what it changes there is the ratio, not the host the trace recorded */
		snprintf(buf, size,
			 "--launch-us: it times the two synthesized steps whose ratio scales the "
			 "trace's replay; the trace's own host timeline is kept");
		return buf;
	}
	if (e->cpu_op_from != ORR_LAUNCH_TRACE && e->cpu_op_from != ORR_LAUNCH_COSTS) {
		snprintf(buf, size, "%s",
			 e->cpu_op_from == ORR_LAUNCH_OPTION ? "--launch-us" : "none");
		return buf;
	}
	if (orr_estimate_caveats(e) & ORR_CAVEAT_LAUNCH_RECORDED)
		n = snprintf(buf, size,
			     "%s, as recorded: the file does not say what the profiler "
			     "added (fit it again to remove it)",
			     what);
	else
		n = snprintf(buf, size, "%s, profiler overhead removed %.1f us", what,
			     e->cpu_op_profiler_ns / 1e3);
	/* the threads' stalls, where ranks running the same launches showed them */
	if (e->cpu_op_stall_ns > 0 && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ", host stalls removed %.1f us",
			 e->cpu_op_stall_ns / 1e3);
	return buf;
}

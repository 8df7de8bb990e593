/* SPDX-License-Identifier: MIT */
/*
 * An estimate's synthesized steps (docs/orrery-estimate.md, "From a model description"):
 * the costs a synthesis is timed by, one configuration's step synthesized, imported,
 * built into a graph and replayed as any trace is, and the launch thread calibrated on
 * the configuration a trace recorded.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis-estimate.h"
#include "orrery/analysis.h"
#include "estimate-internal.h"
#include "banned.h"

/* ---- what an estimate gives ---- */

void orr_estimate_rates(struct orr_estimate *e)
{
	const struct orr_train_config *c = &e->to;
	double gpus = (double)(c->tp * c->pp * c->dp * c->cp), sec = e->estimated.step_ns / 1e9;
	double peak = e->gpu ? e->gpu->peak_flops[c->precision] : 0;

	e->tokens_per_s_per_gpu =
		(double)(c->micro_batch * c->micro_batches * c->dp * c->seq) / sec / gpus;
	e->mfu = peak > 0 ? orr_train_model_flops(c, e->forward_only) / (sec * gpus * peak) : NAN;
	e->hfu = peak > 0 ? orr_train_hardware_flops(c, e->forward_only) / (sec * gpus * peak)
			  : NAN;
}

void orr_estimate_scale(const struct orr_breakdown *b, double f, struct orr_breakdown *ret)
{
	ret->exposed_compute_ns = (int64_t)((double)b->exposed_compute_ns * f);
	ret->overlapped_ns = (int64_t)((double)b->overlapped_ns * f);
	ret->exposed_comm_ns = (int64_t)((double)b->exposed_comm_ns * f);
	ret->other_ns = (int64_t)((double)b->other_ns * f);
}

/* ---- costs ---- */

void orr_estimate_models(const struct orr_rank_fit *f, const struct orr_costs *c, int gpus_per_node,
			 struct orr_retime_models *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->gpus_per_node = gpus_per_node;
	if (c) {
		ret->gemm = c->gemm_fitted ? &c->gemm : NULL;
		ret->kern = c->kern_fitted ? &c->kern : NULL;
		for (size_t i = 0; i < c->ncoll; i++)
			if (c->coll[i].fitted && c->coll[i].m.constrained)
				ret->coll[c->coll[i].kind][c->coll[i].link] = &c->coll[i].m;
		return;
	}
	ret->gemm = f->gemm_err ? NULL : &f->gemm;
	ret->kern = f->kern_err ? NULL : &f->kern;
	for (size_t i = 0; i < f->ncoll; i++)
		if (!f->coll[i].err && f->coll[i].m.constrained)
			ret->coll[f->coll[i].kind][f->coll[i].link] = &f->coll[i].m;
}

/* ---- synthesized steps ---- */

void orr_estimate_synth_costs(const struct orr_retime_models *m, const struct orr_gpu_spec *gpu,
			      const struct orr_rank_fit *f, const struct orr_costs *c,
			      double cpu_op_ns, struct orr_synth_costs *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->gpu = gpu;
	ret->m = *m;
	ret->cpu_op_ns = cpu_op_ns;
	for (size_t i = 0; c && i < c->ncoll; i++)
		if (c->coll[i].measured_bus_bytes_per_s > 0)
			ret->bus_bytes_per_s[c->coll[i].kind][c->coll[i].link] =
				c->coll[i].measured_bus_bytes_per_s;
	for (size_t i = 0; !c && f && i < f->ncoll; i++)
		if (f->coll[i].median_bus_bytes_per_s > 0)
			ret->bus_bytes_per_s[f->coll[i].kind][f->coll[i].link] =
				f->coll[i].median_bus_bytes_per_s;
}

/* The mean job step of r and graph rank 0's breakdown over it (estimate-run.c's measure). */
static void first_stage(const struct orr_replay *r, struct orr_estimate_step *ret)
{
	struct orr_replay_step *s = NULL;
	size_t n = 0;

	memset(ret, 0, sizeof(*ret));
	ret->step_ns = NAN;
	orr_replay_job_steps(r, &s, &n);
	if (n) {
		ret->step_ns = (double)(s[0].predicted_end_ns - s[0].predicted_start_ns);
		orr_replay_breakdown(r, 0, true, s[0].predicted_start_ns, s[0].predicted_end_ns,
				     &ret->breakdown);
	}
	free(s);
}

int orr__estimate_build(const struct orr_estimate_options *o, const struct orr_trace *t,
			struct orr_graph **ret, struct orr_diag *d)
{
	struct orr_graph_options go = { 0 };
	int err;

	if (o && o->phase)
		o->phase(o->progress_data, "building the graph", "events");
	go.progress = o ? o->progress : NULL;
	go.progress_data = o ? o->progress_data : NULL;
	err = orr_graph_build(t, &go, ret, d);
	if (o && o->phase)
		o->phase(o->progress_data, NULL, NULL);
	return err;
}

int orr__estimate_replay(const struct orr_estimate_options *o, const struct orr_graph *g,
			 const struct orr_replay_options *opts, struct orr_replay **ret,
			 struct orr_diag *d)
{
	struct orr_replay_options ro = opts ? *opts : (struct orr_replay_options){ 0 };
	int err;

	if (o && o->phase)
		o->phase(o->progress_data, "replaying", "tasks");
	ro.progress = o ? o->progress : NULL;
	ro.progress_data = o ? o->progress_data : NULL;
	err = orr_replay_run(g, &ro, ret, d);
	if (o && o->phase)
		o->phase(o->progress_data, NULL, NULL);
	return err;
}

/*
 * The synthesized step is orrery's own text, not an input file: it is imported without
 * the limits docs/limits.md sets on those (nor a user's ORR_MAX_* variables), each at
 * what the text can hold, its length (the nesting at the default, past what it has).
 * Under them a configuration the options take failed as "a bug": --pp 10000 writes its
 * 10,000 stages' threads and streams in one file, past ORR_MAX_PLACES' 65,536.
 */
static struct orr_import_options own_text(const struct orr_synth *s)
{
	uint64_t n = s->len ? s->len : 1;

	return (struct orr_import_options){ .max_bytes = n,
					    .max_run_bytes = n,
					    .max_events = n,
					    .max_ranks = n,
					    .max_places = n,
					    .max_string_bytes = n,
					    .max_depth = 1024,
					    .max_ratio = 1000 };
}

static int replay_synth(const struct orr_estimate_options *o, const struct orr_synth *s,
			const char *timeline, struct orr_estimate_step *ret, struct orr_diag *d)
{
	const struct orr_import_options io = own_text(s);
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_replay *r = NULL;
	struct orr_diag rd;
	int err;

	orr_diag_clear(&rd);
	err = orr_trace_import_buffer("synthesized", s->json, s->len, &io, &t, &rd);
	if (!err)
		err = orr__estimate_build(o, t, &g, &rd);
	if (!err)
		err = orr__estimate_replay(o, g, NULL, &r, &rd);
	if (err) {
		orr_diag_set(d, err, "", -1, -1,
			     "cannot replay the synthesized step (a bug): %s%s%s",
			     orr_strerror(err), rd.msg[0] ? ": " : "", rd.msg);
		goto out;
	}
	first_stage(r, ret);
	if (timeline && (err = orr_timeline_write(r, NULL, 0, NULL, timeline)))
		orr_diag_set(d, err, "", -1, -1, "cannot write '%s': %s", timeline,
			     orr_strerror(err));
out:
	orr_replay_free(r);
	orr_graph_free(g);
	orr_trace_free(t);
	return err;
}

int orr__estimate_synth_run(const struct orr_estimate_options *o, const struct orr_train_config *c,
			    bool forward_only, const struct orr_synth_costs *k,
			    const char *timeline, struct orr_estimate_synth *ret,
			    struct orr_diag *d)
{
	struct orr_synth s;
	const char *why = NULL;
	int err = orr_synth_step(c, forward_only, k, &s, &why);

	/* Too many instructions: the count says what is wrong; E2BIG's text would not. */
	if (err == -E2BIG && why)
		return orr_diag_set(
			d, err, "", -1, -1,
			"cannot synthesize the step: %s, too many to place; try a smaller "
			"model, or more pipeline stages (--pp) to share its layers "
			"(docs/limits.md, \"Estimates: the synthesized step\")",
			why);
	if (err)
		return orr_diag_set(d, err, "", -1, -1, "cannot synthesize the step: %s%s%s",
				    orr_strerror(err), why ? ": " : "", why ? why : "");
	memset(ret, 0, sizeof(*ret));
	ret->synth = s;
	ret->synth.json = NULL;
	err = replay_synth(o, &s, timeline, &ret->step, d);
	orr_debug("estimate",
		  "synthesized step: placed %.0f ns (compute %.0f, overlapped %.0f, comm %.0f, "
		  "other %.0f), replayed %.0f ns (compute %lld, overlapped %lld, comm %lld, other "
		  "%lld)",
		  s.placed_ns, s.placed_compute_ns, s.placed_overlapped_ns, s.placed_comm_ns,
		  s.placed_other_ns, ret->step.step_ns,
		  (long long)ret->step.breakdown.exposed_compute_ns,
		  (long long)ret->step.breakdown.overlapped_ns,
		  (long long)ret->step.breakdown.exposed_comm_ns,
		  (long long)ret->step.breakdown.other_ns);
	orr_synth_release(&s);
	return err;
}

/* Launches per rank of a synthesized step: kernels, collectives and transfers. */
static size_t launches(const struct orr_synth *s)
{
	return s->ranks ? (s->kernels + s->collectives + s->transfers) / s->ranks : 0;
}

int orr__estimate_calibrate(const struct orr_estimate_options *o,
			    const struct orr_train_config *rec, bool forward_only, double step_ns,
			    double profiler_ns, double stall_ns, enum orr_launch_from from,
			    struct orr_synth_costs *k, struct orr_estimate *e, struct orr_diag *d)
{
	struct orr_estimate_synth probe;
	double stalls = isnan(stall_ns) ? 0 : stall_ns;
	double free_ns = fmax(0, step_ns - stalls - (isnan(profiler_ns) ? 0 : profiler_ns));
	size_t n;
	int err;

	if (!(step_ns > 0))
		return 0;
	k->cpu_op_ns = 0;
	if ((err = orr__estimate_synth_run(o, rec, forward_only, k, NULL, &probe, d)))
		return err;
	n = launches(&probe.synth);
	if (n) {
		k->cpu_op_ns = e->cpu_op_ns = free_ns / (double)n;
		e->cpu_op_from = from;
		e->cpu_op_stall_ns = fmin(stalls, step_ns) / (double)n;
		e->cpu_op_profiler_ns = (step_ns - free_ns) / (double)n - e->cpu_op_stall_ns;
		if (isnan(profiler_ns))
			e->cpu_op_profiler_ns = NAN;
	}
	orr_debug("estimate",
		  "launch thread: %.0f ns per step (%.0f without the profiler and the stalls), "
		  "%zu launches",
		  step_ns, free_ns, n);
	return 0;
}

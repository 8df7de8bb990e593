/* SPDX-License-Identifier: MIT */
/*
 * The step time of a configuration that was never run, from a trace of one that was
 * (docs/orrery-estimate.md).  The trace's structure gives the configuration it ran; the
 * options change it; the graph's tasks are re-timed for the new one (estimator/retime.c)
 * and replayed, or, where only a new graph can make the change, the trace's replay is
 * scaled by the ratio of two synthesized steps; the memory per GPU is estimated.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis-estimate.h"
#include "orrery/analysis.h"
#include "estimate-internal.h"
#include "banned.h"

static const char *const how_names[] = {
	[ORR_ESTIMATE_RETIME] = "retime",
	[ORR_ESTIMATE_SYNTH_RATIO] = "synthesis-ratio",
	[ORR_ESTIMATE_SYNTH] = "synthesis",
};

const char *orr_estimate_how_name(enum orr_estimate_how h)
{
	return (unsigned)h < ORR_ESTIMATE_HOW_COUNT ? how_names[h] : NULL;
}

/* ---- the configurations ---- */

/* The recorded configuration, and the target: the recorded one changed by the options. */
static int configs(const struct orr_estimate_options *o, const struct orr_rank_fit *f,
		   struct orr_estimate *e, struct orr_diag *d)
{
	const char *missing = NULL;

	if (orr_train_config_from_structure(&f->st, &e->from, &missing))
		return orr_diag_set(d, -ENODATA, "", -1, -1,
				    "%s: the trace does not give its %s (orrery fit %s shows why): "
				    "it cannot be estimated in another configuration",
				    o->trace, missing, o->trace);
	e->from.precision = f->gemm_err ? ORR_DTYPE_BF16 : orr_gemm_precision(&f->gemm);
	e->to = e->from;
	orr_estimate_apply(o, &e->to);
	orr_estimate_settle(&e->to);
	/* another TP pads the vocabulary as Megatron does (and orrery whatif's layouts) */
	if (e->to.tp != e->from.tp && !orr_estimate_given(o, "vocab"))
		e->to.vocab = orr_train_pad_vocab(e->to.vocab, e->to.tp);
	/* New heads without --kv-heads: attention stays multi-head if it was. */
	if (!orr_estimate_given(o, "kv-heads") && orr_estimate_given(o, "heads"))
		e->to.kv_groups = e->from.kv_groups == e->from.heads ? e->to.heads
								     : e->from.kv_groups;
	if (o->global_batch) {
		int64_t per = e->to.micro_batch * e->to.dp;

		if (o->global_batch % per)
			return orr_diag_set(
				d, -EDOM, "", -1, -1,
				"--global-batch %lld is not a multiple of micro-batch x dp (%lld)",
				(long long)o->global_batch, (long long)per);
		e->to.micro_batches = o->global_batch / per;
	}
	return orr_estimate_check(&e->to, d);
}

/* ---- replaying ---- */

/* The mean job step of r, and rank ri's breakdown over the steps. */
static void measure(const struct orr_replay *r, size_t ri, bool predicted, size_t *ret_steps,
		    struct orr_estimate_step *ret)
{
	struct orr_replay_step *s = NULL;
	size_t n = 0;
	double sum = 0;

	memset(ret, 0, sizeof(*ret));
	orr_replay_job_steps(r, &s, &n);
	for (size_t i = 0; i < n; i++) {
		int64_t a = predicted ? s[i].predicted_start_ns : s[i].measured_start_ns;
		int64_t b = predicted ? s[i].predicted_end_ns : s[i].measured_end_ns;
		struct orr_breakdown bd;

		sum += (double)(b - a);
		orr_replay_breakdown(r, ri, predicted, a, b, &bd);
		ret->breakdown.exposed_compute_ns += bd.exposed_compute_ns;
		ret->breakdown.overlapped_ns += bd.overlapped_ns;
		ret->breakdown.exposed_comm_ns += bd.exposed_comm_ns;
		ret->breakdown.other_ns += bd.other_ns;
	}
	ret->step_ns = n ? sum / (double)n : NAN;
	*ret_steps = n;
	free(s);
}

/* g re-timed by factors and cpu (each may be NULL), against the baseline base (or NULL). */
static int replay_cpu(const struct orr_estimate_options *o, const struct orr_graph *g,
		      const float *factors, const float *cpu, const struct orr_replay *base,
		      struct orr_replay **ret, struct orr_diag *d)
{
	const struct orr_replay_options opts = { .task_factors = factors,
						 .cpu_factors = cpu,
						 .baseline = base };
	struct orr_diag rd;
	int err;

	orr_diag_clear(&rd);
	err = orr__estimate_replay(o, g, factors || cpu || base ? &opts : NULL, ret, &rd);
	if (err && o->trace)
		orr_diag_set(d, err, "", -1, -1, "cannot replay '%s'%s: %s%s%s", o->trace,
			     base ? " re-timed" : "", orr_strerror(err), rd.msg[0] ? ": " : "",
			     rd.msg);
	else if (err)
		orr_diag_set(d, err, "", -1, -1, "cannot replay: %s%s%s", orr_strerror(err),
			     rd.msg[0] ? ": " : "", rd.msg);
	return err;
}

/*
 * The memory of the target, with a reserve calibrated where the trace recorded its
 * allocator (profile_memory=True): what the allocator held at its peak beyond the
 * estimate of the recorded configuration (fragmentation, workspaces, the CUDA context's
 * share), kept for the target.
 */
static void estimate_memory(const struct orr_graph *g, size_t ri, struct orr_estimate *e)
{
	const struct orr_rank *r = orr_graph_get_rank(g, ri)->rank;
	struct orr_memory rec;

	struct orr_gpu_spec seen;
	const struct orr_gpu_spec *gpu = e->gpu;

	/* the trace's own GPU holds what its device reported, not the datasheet's */
	if (gpu && gpu == orr_rank_gpu(g, ri)) {
		orr_rank_gpu_as_seen(g, ri, gpu, &seen);
		gpu = &seen;
	}
	e->measured_peak_bytes = NAN;
	if (r->mem_peak_reserved_bytes > 0 && !orr_memory_estimate(&e->from, gpu, 0, &rec)) {
		e->measured_peak_bytes = (double)r->mem_peak_reserved_bytes;
		e->reserve_bytes = fmax(0, e->measured_peak_bytes - rec.total_bytes);
	}
	e->memory_err = orr_memory_estimate(&e->to, gpu, e->reserve_bytes, &e->memory);
}

/* The launch thread's time per synthesized kernel, from the trace unless o gave it. */
static int calibrate_launches(const struct orr_estimate_options *o, const struct orr_graph *g,
			      struct orr_estimate *e, const struct orr_synth_costs *k,
			      struct orr_synth_costs *ret, struct orr_diag *d)
{
	struct orr_launch_time lt;

	*ret = *k;
	if (!isnan(o->launch_us))
		return 0;
	orr_rank_fit_launch_time(g, &lt, NULL);
	return orr__estimate_calibrate(o, &e->from, e->forward_only, lt.step_ns, lt.profiler_ns,
				       lt.stall_ns, ORR_LAUNCH_TRACE, ret, e, d);
}

static double unprofile(const struct orr_graph *g, float *cpu, size_t steps);

/*
 * The replay base of g (rank ri, over `steps` job steps) without the host time the
 * profiler added, as retimed() estimates in place: *ret_ns (left as it is when the
 * profiler added none), and that time per rank and step in *ret_prof_ns.  A change of
 * structure is scaled from it, so that it and no change agree.
 */
static int unprofiled(const struct orr_estimate_options *o, const struct orr_graph *g, size_t ri,
		      const struct orr_replay *base, size_t steps, double *ret_ns,
		      double *ret_prof_ns, struct orr_diag *d)
{
	size_t n = orr_graph_task_count(g), k;
	float *cpu = orr_xmalloc((n + 1) * sizeof(*cpu));
	struct orr_replay *est = NULL;
	struct orr_estimate_step st;
	int err = 0;

	for (size_t t = 0; t < n; t++)
		cpu[t] = 1;
	*ret_prof_ns = unprofile(g, cpu, steps);
	if (*ret_prof_ns > 0 && !(err = replay_cpu(o, g, NULL, cpu, base, &est, d))) {
		measure(est, ri, true, &k, &st);
		*ret_ns = st.step_ns;
	}
	orr_replay_free(est);
	free(cpu);
	return err;
}

/*
 * A change only a new graph can make: the trace's replay scaled by the synthesized step
 * of the target over that of the recorded configuration, both timed by the same models.
 */
static int by_synthesis(const struct orr_estimate_options *o, struct orr_estimate_base *b,
			struct orr_diag *d)
{
	struct orr_estimate *e = &b->e;
	struct orr_replay *base = NULL;
	struct orr_synth_costs kc = b->k;
	bool to_forward_only = e->forward_only || o->forward_only;
	struct orr_estimate_synth anchor_synth;
	struct orr_estimate anchor;
	double ratio, from_ns, traced_ns;
	int err;

	if (!b->k.gpu)
		return orr_diag_set(d, -ENODEV, "", -1, -1,
				    "%s: its GPU is not in the hardware table: a change of "
				    "structure is synthesized, and that needs the GPU's peaks",
				    o->trace);
	e->how = ORR_ESTIMATE_SYNTH_RATIO;
	if ((err = calibrate_launches(o, b->g, e, &b->k, &kc, d)) ||
	    (err = replay_cpu(o, b->g, NULL, NULL, NULL, &base, d)) ||
	    (err = orr__estimate_synth_run(o, &e->from, e->forward_only, &kc, NULL, &e->synth_from,
					   d)) ||
	    (err = orr__estimate_synth_run(o, &e->to, to_forward_only, &kc, o->timeline,
					   &e->synth_to, d)))
		goto out;
	measure(base, b->ri, false, &e->steps, &e->replayed);
	e->measured_ns = e->replayed.step_ns;
	measure(base, b->ri, true, &e->steps, &e->replayed);
	from_ns = e->replayed.step_ns;
	if ((err = unprofiled(o, b->g, b->ri, base, e->steps, &from_ns, &e->profiler_host_ns, d)))
		goto out;
	traced_ns = e->replayed.step_ns;
	/* new sizes too: scaled from the trace re-timed to them, as a change of sizes is */
	if (!orr_estimate_anchor(o, b, &e->to, &anchor) &&
	    !orr__estimate_synth_run(o, &anchor.to, e->forward_only, &kc, NULL, &anchor_synth, d)) {
		e->anchored = true;
		e->anchor = anchor.to;
		e->anchor_retimed_ns = from_ns = anchor.estimated.step_ns;
		e->anchor_traced_ns = traced_ns = anchor.traced.step_ns;
		e->profiler_host_ns = anchor.profiler_host_ns;
		e->synth_from = anchor_synth;
	} else {
		orr_debug("estimate", "no anchor: the trace's own sizes, or sizes it cannot be "
				      "re-timed to");
	}
	orr_diag_clear(d);
	e->forward_only = to_forward_only; /* after the anchor, which takes the trace's */
	ratio = e->synth_to.step.step_ns / e->synth_from.step.step_ns;
	orr_debug("estimate", "synthesized: recorded %.0f ns, target %.0f ns",
		  e->synth_from.step.step_ns, e->synth_to.step.step_ns);
	e->estimated.step_ns = from_ns * ratio;
	orr_estimate_scale(&e->synth_to.step.breakdown,
			   e->estimated.step_ns / e->synth_to.step.step_ns,
			   &e->estimated.breakdown);
	if (e->profiler_host_ns > 0 && traced_ns > 0) {
		e->traced.step_ns = traced_ns * ratio;
		orr_estimate_scale(&e->synth_to.step.breakdown,
				   e->traced.step_ns / e->synth_to.step.step_ns,
				   &e->traced.breakdown);
	}
	estimate_memory(b->g, b->ri, e);
	orr_estimate_rates(e);
out:
	orr_replay_free(base);
	return err;
}

/*
 * cpu without the profiler's host time (the trace's ops and calls): that time per rank
 * and step.
 */
static double unprofile(const struct orr_graph *g, float *cpu, size_t steps)
{
	size_t ranks = orr_graph_rank_count(g);
	struct orr_prof_cost c;

	orr_prof_cost_find(orr_graph_trace(g), &c);
	return orr_retime_unprofile(g, &c, cpu) / (double)(steps ? steps : 1) /
	       (double)(ranks ? ranks : 1);
}

/*
 * Factors the replay takes (0 to ORR_SCALE_MAX): a change of sizes can ask more of a
 * task, --seq 1048576 on a trace of 1024 a fused attention kernel 2^20 times its time,
 * and the replay's own refusal named the task by its index ("factor 1.04858e+06 of task
 * 4933 is not from 0 to 1e+06").  The first such task, by its name and rank.
 */
static int factors_fit(const struct orr_graph *g, const float *factors, struct orr_diag *d)
{
	const struct orr_task *tasks = orr_graph_tasks(g);
	size_t n = orr_graph_task_count(g);

	for (uint32_t t = 0; t < n; t++) {
		uint32_t ri = orr_graph_procs(g)[tasks[t].proc].rank;

		if (factors[t] >= 0 && factors[t] <= ORR_SCALE_MAX)
			continue;
		return orr_diag_set(
			d, -ERANGE, "", -1, -1,
			"cannot re-time the trace: its GPU task '%.64s' (rank %d) would take %g "
			"times its traced time, more than the %g a replay scales a task by; try "
			"a smaller change, or describe the model with the costs of 'orrery fit -o' "
			"(--costs) instead of the trace (docs/limits.md, \"Scale factors\")",
			orr_graph_task_name(g, t), (int)orr_graph_get_rank(g, ri)->rank->rank,
			(double)factors[t], ORR_SCALE_MAX);
	}
	return 0;
}

/* The re-timed graph replayed as traced, then without what the profiler added to the host. */
static int retimed(const struct orr_estimate_options *o, struct orr_estimate_base *b,
		   const float *factors, float *cpu, struct orr_diag *d)
{
	struct orr_estimate *e = &b->e;
	struct orr_replay *base = NULL, *est = NULL;
	int err;

	if ((err = factors_fit(b->g, factors, d)) ||
	    (err = replay_cpu(o, b->g, NULL, NULL, NULL, &base, d)) ||
	    (err = replay_cpu(o, b->g, factors, cpu, base, &est, d)))
		goto out;
	measure(est, b->ri, true, &e->steps, &e->traced);
	e->profiler_host_ns = unprofile(b->g, cpu, e->steps);
	if (e->profiler_host_ns > 0) {
		orr_replay_free(est);
		est = NULL;
		if ((err = replay_cpu(o, b->g, factors, cpu, base, &est, d)))
			goto out;
	}
	measure(base, b->ri, false, &e->steps, &e->replayed);
	e->measured_ns = e->replayed.step_ns;
	measure(base, b->ri, true, &e->steps, &e->replayed);
	measure(est, b->ri, true, &e->steps, &e->estimated);
	estimate_memory(b->g, b->ri, e);
	orr_estimate_rates(e);
	if (o->timeline && (err = orr_timeline_write(est, NULL, 0, NULL, o->timeline)))
		orr_diag_set(d, err, "", -1, -1, "cannot write '%s': %s", o->timeline,
			     orr_strerror(err));
out:
	orr_replay_free(est);
	orr_replay_free(base);
	return err;
}

/*
 * The factors of b->e's change of sizes on the trace's GPU tasks and host timeline (n + 1
 * of each; cpu all 1 on entry): orr_retime()'s, or orr_retime_layers()' where the
 * layers change too.  -ENOTSUP (why named) where only a new graph can make the change.
 */
static int retime_factors(struct orr_estimate_base *b, float *factors, float *cpu, const char **why)
{
	struct orr_estimate *e = &b->e;
	int err;

	err = orr_retime(b->g, &b->f.st, &e->from, &e->to, &b->m, factors, &e->retime, why);
	/* Layers that repeat on the host timeline: stretched, the rest re-timed. */
	if (err == -ENOTSUP && e->from.layers != e->to.layers) {
		err = orr_retime_layers(b->g, &b->f.st, &e->from, &e->to, &b->m, factors, cpu,
					&e->retime, why);
		if (err == -ENOENT)
			err = -ENOTSUP;
	}
	return err;
}

static int estimate(const struct orr_estimate_options *o, struct orr_estimate_base *b,
		    struct orr_diag *d)
{
	size_t n = orr_graph_task_count(b->g);
	float *factors = orr_xmalloc((n + 1) * sizeof(*factors));
	float *cpu = orr_xmalloc((n + 1) * sizeof(*cpu));
	const char *why = NULL;
	int err;

	for (size_t t = 0; t < n; t++)
		cpu[t] = 1;
	err = retime_factors(b, factors, cpu, &why);
	if (err == -ENOTSUP) {
		orr_debug("estimate", "%s: by synthesis", why);
		err = by_synthesis(o, b, d);
	} else if (err) {
		orr_diag_set(d, -EDOM, "", -1, -1,
			     "the configuration is not one Megatron would run (a size that does "
			     "not divide another: hidden %% heads, heads %% tp, kv-heads %% tp)");
		err = -EDOM;
	} else {
		err = retimed(o, b, factors, cpu, d);
	}
	free(cpu);
	free(factors);
	return err;
}

int orr_estimate_trace(const struct orr_estimate_options *o, struct orr_estimate_base *b,
		       struct orr_diag *d)
{
	orr_diag_clear(d);
	return o->forward_only && !b->e.forward_only ? by_synthesis(o, b, d) : estimate(o, b, d);
}

int orr_estimate_retime_config(const struct orr_estimate_options *o,
			       const struct orr_estimate_base *b, const struct orr_train_config *to,
			       struct orr_estimate *ret)
{
	struct orr_estimate_options quiet = *o;
	struct orr_estimate_base local = *b;
	size_t n = orr_graph_task_count(b->g);
	float *factors, *cpu;
	struct orr_diag d;
	int err;

	if (orr_retime_structural(&b->e.from, to) || (o->forward_only && !b->e.forward_only))
		return -ENOTSUP;
	/* each call on its own copy, with nothing written and nothing said: thread-safe */
	quiet.timeline = NULL;
	quiet.phase = NULL;
	quiet.progress = NULL;
	local.e.to = *to;
	factors = orr_xmalloc((n + 1) * sizeof(*factors));
	cpu = orr_xmalloc((n + 1) * sizeof(*cpu));
	for (size_t t = 0; t < n; t++)
		cpu[t] = 1;
	orr_diag_clear(&d);
	err = retime_factors(&local, factors, cpu, NULL);
	if (!err)
		err = retimed(&quiet, &local, factors, cpu, &d);
	else if (err != -ENOTSUP)
		err = -EDOM;
	free(cpu);
	free(factors);
	if (!err) {
		local.e.how = ORR_ESTIMATE_RETIME;
		*ret = local.e;
	}
	return err;
}

bool orr_estimate_same_sizes(const struct orr_train_config *a, const struct orr_train_config *b)
{
	return a->layers == b->layers && a->hidden == b->hidden && a->heads == b->heads &&
	       a->kv_groups == b->kv_groups && a->ffn == b->ffn && a->vocab == b->vocab &&
	       a->seq == b->seq && a->rms_norm == b->rms_norm && a->micro_batch == b->micro_batch &&
	       a->tp == b->tp && a->dp == b->dp;
}

bool orr_estimate_anchor_config(const struct orr_estimate_base *b,
				const struct orr_train_config *to, struct orr_train_config *ret)
{
	const struct orr_train_config *from = &b->e.from;
	struct orr_train_config a = *from;

	/* as orr_retime() changes them: the same collectives, other sizes */
	a.micro_batch = to->micro_batch;
	if ((a.tp == 1) == (to->tp == 1))
		a.tp = to->tp;
	if ((a.dp == 1) == (to->dp == 1))
		a.dp = to->dp;
	/* the layers of a pipeline's stages are its layout's: a new graph's */
	if (a.pp == 1)
		a.layers = to->layers;
	a.hidden = to->hidden;
	a.heads = to->heads;
	a.kv_groups = to->kv_groups;
	a.ffn = to->ffn;
	/* Megatron's padding for the TP alone is the trace's vocabulary at the anchor's TP */
	if (to->vocab == from->vocab || to->vocab == orr_train_pad_vocab(from->vocab, to->tp))
		a.vocab = a.tp == from->tp ? from->vocab : orr_train_pad_vocab(from->vocab, a.tp);
	else
		a.vocab = to->vocab;
	a.seq = to->seq;
	a.rms_norm = to->rms_norm;
	*ret = a;
	return !orr_estimate_same_sizes(&a, from);
}

int orr_estimate_anchor(const struct orr_estimate_options *o, const struct orr_estimate_base *b,
			const struct orr_train_config *to, struct orr_estimate *ret)
{
	struct orr_train_config a;

	if (!orr_estimate_anchor_config(b, to, &a))
		return -ENOENT;
	return orr_estimate_retime_config(o, b, &a, ret);
}

/* o->gpu with a trace must be the trace's. */
static int trace_gpu(const struct orr_estimate_options *o, const struct orr_rank_fit *f,
		     struct orr_diag *d)
{
	const struct orr_gpu_spec *gpu = o->gpu ? orr_estimate_gpu(o->gpu) : NULL;

	if (!o->gpu || (gpu && gpu == f->gpu))
		return 0;
	return orr_diag_set(d, -EXDEV, "", -1, -1,
			    "--gpu %s: the trace ran on %s; to estimate another GPU, give a model "
			    "description without the trace",
			    o->gpu, f->gpu ? f->gpu->id : "a GPU the hardware table does not have");
}

/* Costs fitted on another GPU would re-time this one's kernels with that one's. */
static int same_gpu(const char *path, const struct orr_costs *c, const struct orr_rank_fit *f,
		    struct orr_diag *d)
{
	if (!c->gpu || !f->gpu || c->gpu == f->gpu)
		return 0;
	return orr_diag_set(d, -EXDEV, "", -1, -1,
			    "%s: its costs were fitted on %s, the trace ran on %s: fit costs on "
			    "a trace of the same GPU",
			    path, c->gpu->id, f->gpu->id);
}

int orr__estimate_read_costs(const char *path, struct orr_costs *ret, struct orr_diag *d)
{
	struct orr_diag cd;
	char at[48] = "";
	int err;

	orr_diag_clear(&cd);
	err = orr_costs_read(path, ret, &cd);
	if (err && cd.offset >= 0) /* where a text stops being JSON */
		snprintf(at, sizeof(at), " at byte %lld", (long long)cd.offset);
	if (err)
		orr_diag_set(d, err, "", -1, -1, "%s: cannot read its costs%s: %s", path, at,
			     cd.msg[0] ? cd.msg : orr_strerror(err));
	return err;
}

int orr_estimate_base_open(const struct orr_estimate_options *o, const struct orr_graph *g,
			   size_t ri, struct orr_estimate_base *b, struct orr_diag *d)
{
	int err;

	orr_diag_clear(d);
	memset(b, 0, sizeof(*b));
	b->g = g;
	b->ri = ri;
	if ((err = orr_estimate_options_check(o, d)))
		goto fail;
	if (o->transfer_costs) {
		err = orr_diag_set(
			d, -EINVAL, "", -1, -1,
			"--transfer-costs: a trace is timed on its own GPU; to estimate "
			"another, describe the model without the trace (--gpu, --costs)");
		goto fail;
	}
	if (o->costs && (err = orr__estimate_read_costs(o->costs, &b->costs, d)))
		goto fail;
	b->have_costs = o->costs != NULL;
	orr_rank_fit_run(g, ri, o->trace, NULL, 0, &b->f);
	b->have_fit = true;
	orr_estimate_models(&b->f, o->costs ? &b->costs : NULL, (int)o->gpus_per_node, &b->m);
	b->m.nic_bytes_per_s = o->nic_gbps * 1e9 / 8;
	if ((o->costs && (err = same_gpu(o->costs, &b->costs, &b->f, d))) ||
	    (err = trace_gpu(o, &b->f, d)))
		goto fail;
	b->e.costs = o->costs;
	b->e.trace = o->trace;
	b->e.ranks = orr_graph_rank_count(g);
	b->e.rank = b->f.rank;
	b->e.gpu = b->f.gpu;
	b->e.forward_only = !b->f.st.backward;
	b->e.cpu_op_ns = isnan(o->launch_us) ? 0 : o->launch_us * 1e3;
	b->e.cpu_op_from = isnan(o->launch_us) ? ORR_LAUNCH_NONE : ORR_LAUNCH_OPTION;
	orr_estimate_synth_costs(&b->m, b->f.gpu, &b->f, o->costs ? &b->costs : NULL,
				 b->e.cpu_op_ns, &b->k);
	b->k.gemm_tiles = o->gemm_tiles;
	if (!(err = configs(o, &b->f, &b->e, d)))
		return 0;
fail:
	orr_estimate_base_close(b);
	return err;
}

void orr_estimate_base_close(struct orr_estimate_base *b)
{
	if (b->have_fit)
		orr_rank_fit_release(&b->f);
	if (b->have_costs)
		orr_costs_release(&b->costs);
	memset(b, 0, sizeof(*b));
}

int orr_estimate_base_sweep(const struct orr_estimate_options *o, struct orr_estimate_base *b,
			    struct orr_synth_costs *ret_k, double *ret_replayed_ns,
			    double *ret_base_ns, struct orr_diag *d)
{
	struct orr_replay *base = NULL;
	struct orr_estimate_step st;
	int err;

	orr_diag_clear(d);
	if (!b->k.gpu)
		return orr_diag_set(d, -ENODEV, "", -1, -1,
				    "%s: its GPU is not in the hardware table: a sweep synthesizes "
				    "every configuration, and that needs the GPU's peaks",
				    o->trace);
	if ((err = calibrate_launches(o, b->g, &b->e, &b->k, ret_k, d)) ||
	    (err = replay_cpu(o, b->g, NULL, NULL, NULL, &base, d)))
		return err;
	measure(base, b->ri, false, &b->e.steps, &st);
	b->e.measured_ns = st.step_ns; /* as orr_estimate_trace() reports it */
	measure(base, b->ri, true, &b->e.steps, &st);
	*ret_replayed_ns = *ret_base_ns = st.step_ns;
	err = unprofiled(o, b->g, b->ri, base, b->e.steps, ret_base_ns, &b->e.profiler_host_ns, d);
	orr_replay_free(base);
	if (err)
		return err;
	/* the recorded configuration as orr_estimate_trace() estimates it in place */
	b->e.replayed.step_ns = *ret_replayed_ns;
	b->e.estimated.step_ns = *ret_base_ns;
	estimate_memory(b->g, b->ri, &b->e);
	return 0;
}

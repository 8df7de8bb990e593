/* SPDX-License-Identifier: MIT */
/*
 * orrery estimate: the step time of a configuration that was never run, from a trace
 * of one that was (docs/orrery-estimate.md).  The trace's structure gives the
 * configuration it ran; the options change it; the graph's tasks are re-timed for the
 * new one (estimator/retime.c) and replayed, and the memory per GPU is estimated.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "estimate.h"
#include "fit.h"
#include "replay-common.h"
#include "banned.h"

const char cli_estimate_usage[] =
	"usage: orrery estimate [OPTIONS] TRACE\n"
	"       orrery estimate --gpu NAME --layers L --hidden H --heads A --seq S [OPTIONS]\n\n"
	"Estimates the step time and the memory per GPU of a training configuration.\n"
	"With TRACE, of the job it recorded under another configuration: every option\n"
	"defaults to what the trace recorded (orrery fit TRACE shows it); a change of\n"
	"sizes re-times the tasks whose work changes with models fitted on the trace and\n"
	"replays the graph; a change of structure (layers, pipeline, batch, recompute, ...)\n"
	"scales the trace's replay by the ratio of two synthesized steps, timed by the same\n"
	"models.  Without TRACE, synthesizes a Megatron-LM step from the description and\n"
	"replays it, timed by --costs or by the hardware table alone (a lower bound).\n\n"
	"  --gpu NAME              the GPU (hardware table id, e.g. a100-80gb-sxm, or a\n"
	"                          device name); default: the trace's or the costs'\n"
	"  --layers N, --hidden N, --ffn N (4h), --heads N, --kv-heads N (heads),\n"
	"  --seq N, --vocab N (50257, padded as Megatron pads it)\n"
	"                          the model\n"
	"  --tp N, --pp N, --dp N, --cp N, --vpp N (1 each)\n"
	"                          tensor, pipeline, data and context parallelism, model\n"
	"                          chunks per stage (interleaved 1F1B)\n"
	"  --first-stage-layers N, --last-stage-layers N\n"
	"                          an uneven pipeline split (Megatron-Core's\n"
	"                          --decoder-first/last-pipeline-num-layers): the first\n"
	"                          or last stage's layers, the rest shared evenly (no VPP)\n"
	"  --micro-batch N         sequences per micro-batch (1)\n"
	"  --global-batch N        sequences per step (micro-batch x dp)\n"
	"  --recompute MODE        none (default), selective or full\n"
	"  --sequence-parallel     with TP, norms and dropouts split over the sequence\n"
	"  --distributed-optimizer shard the optimizer state over DP\n"
	"  --fsdp                  shard weights, gradients and optimizer state over DP\n"
	"                          (PyTorch FSDP, DeepSpeed ZeRO-3): each layer's weights\n"
	"                          all-gathered for its passes, its gradients\n"
	"                          reduce-scattered\n"
	"  --overlap-grad-reduce   reduce the gradients' DP buckets during the last\n"
	"                          micro-batch's backward pass (Megatron's option)\n"
	"  --precision P           bf16 (default), fp16, fp32 or fp8 (FP8 GEMMs)\n"
	"  --attention MODE        flash (default) or unfused (scores, softmax, dropout)\n"
	"  --swiglu                a gated MLP: FC1 is 2 x ffn wide (Megatron's option)\n"
	"  --untie-embeddings-and-output-weights\n"
	"                          the output layer has its own weights\n"
	"  --normalization NAME    LayerNorm (default) or RMSNorm\n"
	"  --position-embedding-type NAME\n"
	"                          learned_absolute (default) or rope (rotary, on q and k)\n"
	"  --gpus-per-node N       GPUs a node holds (default: the hardware table's): a\n"
	"                          larger group talks over the network\n"
	"  --forward-only          forward passes only\n"
	"  --costs FILE            models from orrery fit -o FILE (of a trace of the same\n"
	"                          GPU) instead of fitting them on TRACE\n"
	"  --launch-us US          the launch thread's time per kernel (default: measured\n"
	"                          on TRACE; 0 without one: the GPU never waits for it)\n"
	"  --gemm-model MODEL      roofline (default: the roofline x a measured efficiency)\n"
	"                          or tiles (tile and wave quantization, docs/estimator.md)\n"
	"  --timeline FILE         write the estimated timeline (Chrome/Perfetto JSON)\n"
	"  --rank N                the rank whose structure is the recorded configuration\n"
	"  --format=FMT            text (default) or json (docs/orrery-estimate.md)\n"
	"  -h, --help              this help\n\n"
	"A --timeline FILE of '-' is standard output; the report then goes to standard error.\n";

/* ---- the configurations ---- */

/* The recorded configuration, and the target: the recorded one changed by the options. */
static int configs(const struct cli_estimate_options *o, const struct orr_rank_fit *f,
		   struct cli_estimate *e)
{
	const char *missing = NULL;

	if (orr_train_config_from_structure(&f->st, &e->from, &missing)) {
		cli_error("%s: the trace does not give its %s (orrery fit %s shows why): it "
			  "cannot be estimated in another configuration",
			  o->trace, missing, o->trace);
		return EXIT_FAIL;
	}
	e->from.precision = f->gemm_err ? ORR_DTYPE_BF16 : orr_gemm_precision(&f->gemm);
	e->to = e->from;
	cli_estimate_apply(o, &e->to);
	/* New heads without --kv-heads: attention stays multi-head if it was. */
	if (!cli_estimate_given(o, "kv-heads") && cli_estimate_given(o, "heads"))
		e->to.kv_groups = e->from.kv_groups == e->from.heads ? e->to.heads
								     : e->from.kv_groups;
	if (o->global_batch) {
		int64_t per = e->to.micro_batch * e->to.dp;

		if (o->global_batch % per) {
			cli_error(
				"--global-batch %lld is not a multiple of micro-batch x dp (%lld)",
				(long long)o->global_batch, (long long)per);
			return EXIT_FAIL;
		}
		e->to.micro_batches = o->global_batch / per;
	}
	return cli_estimate_check(&e->to);
}

/* ---- replaying ---- */

/* The mean job step of r, and rank ri's breakdown over the steps. */
static void measure(const struct orr_replay *r, size_t ri, bool predicted, size_t *ret_steps,
		    struct cli_estimate_step *ret)
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

static int replay_cpu(const struct orr_graph *g, const float *factors, const float *cpu,
		      struct orr_replay **ret)
{
	const struct orr_replay_options opts = { .task_factors = factors, .cpu_factors = cpu };
	struct orr_diag d;
	int err = cli_replay_run(g, factors || cpu ? &opts : NULL, ret, &d);

	if (err)
		cli_error("cannot replay: %s%s%s", orr_strerror(err), d.msg[0] ? ": " : "", d.msg);
	return err;
}

static int replay(const struct orr_graph *g, const float *factors, struct orr_replay **ret)
{
	return replay_cpu(g, factors, NULL, ret);
}

/*
 * The memory of the target, with a reserve calibrated where the trace recorded its
 * allocator (profile_memory=True): what the allocator held at its peak beyond the
 * estimate of the recorded configuration (fragmentation, workspaces, the CUDA context's
 * share), kept for the target.
 */
static void estimate_memory(const struct orr_graph *g, size_t ri, struct cli_estimate *e)
{
	const struct orr_rank *r = orr_graph_get_rank(g, ri)->rank;
	struct orr_memory rec;

	e->measured_peak_bytes = NAN;
	if (r->mem_peak_reserved_bytes > 0 && !orr_memory_estimate(&e->from, e->gpu, 0, &rec)) {
		e->measured_peak_bytes = (double)r->mem_peak_reserved_bytes;
		e->reserve_bytes = fmax(0, e->measured_peak_bytes - rec.total_bytes);
	}
	e->memory_err = orr_memory_estimate(&e->to, e->gpu, e->reserve_bytes, &e->memory);
}

/* The launch thread's time per synthesized kernel, from the trace unless --launch-us gave it. */
static int calibrate_launches(const struct cli_estimate_options *o, const struct orr_graph *g,
			      struct cli_estimate *e, const struct orr_synth_costs *k,
			      struct orr_synth_costs *ret)
{
	struct orr_launch_time lt;

	*ret = *k;
	if (!isnan(o->launch_us))
		return EXIT_OK;
	orr_rank_fit_launch_time(g, &lt, NULL);
	return cli_synth_calibrate(&e->from, e->forward_only, lt.step_ns, lt.profiler_ns, "trace",
				   ret, e);
}

/*
 * A change only a new graph can make: the trace's replay scaled by the synthesized step
 * of the target over that of the recorded configuration, both timed by the same models.
 */
static int by_synthesis(const struct cli_estimate_options *o, const struct orr_graph *g,
			const struct orr_rank_fit *f, const struct orr_synth_costs *k, size_t ri,
			struct cli_estimate *e)
{
	struct orr_replay *base = NULL;
	struct orr_synth_costs kc = *k;
	bool to_forward_only = e->forward_only || o->forward_only;
	double ratio;
	int ret = EXIT_FAIL;

	if (!k->gpu) {
		cli_error("%s: its GPU is not in the hardware table: a change of structure is "
			  "synthesized, and that needs the GPU's peaks",
			  o->trace);
		return EXIT_FAIL;
	}
	e->how = CLI_ESTIMATE_SYNTH_RATIO;
	if (calibrate_launches(o, g, e, k, &kc) || replay(g, NULL, &base) ||
	    cli_synth_run(&e->from, e->forward_only, &kc, NULL, &e->synth_from) ||
	    cli_synth_run(&e->to, to_forward_only, &kc, o->timeline, &e->synth_to))
		goto out;
	e->forward_only = to_forward_only;
	measure(base, ri, false, &e->steps, &e->replayed);
	e->measured_ns = e->replayed.step_ns;
	measure(base, ri, true, &e->steps, &e->replayed);
	ratio = e->synth_to.step.step_ns / e->synth_from.step.step_ns;
	orr_debug("estimate", "synthesized: recorded %.0f ns, target %.0f ns",
		  e->synth_from.step.step_ns, e->synth_to.step.step_ns);
	e->estimated.step_ns = e->replayed.step_ns * ratio;
	cli_estimate_scale(&e->synth_to.step.breakdown,
			   e->estimated.step_ns / e->synth_to.step.step_ns,
			   &e->estimated.breakdown);
	estimate_memory(g, ri, e);
	cli_estimate_rates(e);
	ret = EXIT_OK;
out:
	orr_replay_free(base);
	return ret;
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

static int estimate(const struct cli_estimate_options *o, const struct orr_graph *g,
		    const struct orr_rank_fit *f, const struct orr_retime_models *m,
		    const struct orr_synth_costs *k, size_t ri, struct cli_estimate *e)
{
	size_t n = orr_graph_task_count(g);
	float *factors = orr_xmalloc((n + 1) * sizeof(*factors)), *cpu = NULL;
	struct orr_replay *base = NULL, *est = NULL;
	const char *why = NULL;
	int err, ret = EXIT_FAIL;

	cpu = orr_xmalloc((n + 1) * sizeof(*cpu));
	for (size_t t = 0; t < n; t++)
		cpu[t] = 1;
	err = orr_retime(g, &f->st, &e->from, &e->to, m, factors, &e->retime, &why);
	/* Layers that repeat on the host timeline: stretched, the rest re-timed. */
	if (err == -ENOTSUP && e->from.layers != e->to.layers) {
		err = orr_retime_layers(g, &f->st, &e->from, &e->to, m, factors, cpu, &e->retime,
					&why);
		if (err == -ENOENT)
			err = -ENOTSUP;
	}
	if (err == -ENOTSUP) {
		orr_debug("estimate", "%s: by synthesis", why);
		ret = by_synthesis(o, g, f, k, ri, e);
		goto out;
	}
	if (err) {
		cli_error("the configuration is not one Megatron would run (a size that does not "
			  "divide another: hidden %% heads, heads %% tp, kv-heads %% tp)");
		goto out;
	}
	/* As traced, then without what the profiler added to the host (the estimate). */
	if (replay(g, NULL, &base) || replay_cpu(g, factors, cpu, &est))
		goto out;
	measure(est, ri, true, &e->steps, &e->traced);
	e->profiler_host_ns = unprofile(g, cpu, e->steps);
	if (e->profiler_host_ns > 0) {
		orr_replay_free(est);
		est = NULL;
		if (replay_cpu(g, factors, cpu, &est))
			goto out;
	}
	measure(base, ri, false, &e->steps, &e->replayed);
	e->measured_ns = e->replayed.step_ns;
	measure(base, ri, true, &e->steps, &e->replayed);
	measure(est, ri, true, &e->steps, &e->estimated);
	estimate_memory(g, ri, e);
	cli_estimate_rates(e);
	if (o->timeline && (err = cli_timeline_write(est, NULL, 0, NULL, o->timeline))) {
		cli_error("cannot write '%s': %s", o->timeline, orr_strerror(err));
		goto out;
	}
	ret = EXIT_OK;
out:
	orr_replay_free(est);
	orr_replay_free(base);
	free(cpu);
	free(factors);
	return ret;
}

/* --gpu with a trace must be the trace's. */
static int trace_gpu(const struct cli_estimate_options *o, const struct orr_rank_fit *f)
{
	const struct orr_gpu_spec *gpu = o->gpu ? cli_estimate_gpu(o->gpu) : NULL;

	if (!o->gpu || (gpu && gpu == f->gpu))
		return EXIT_OK;
	cli_error("--gpu %s: the trace ran on %s; to estimate another GPU, give a model "
		  "description without the trace",
		  o->gpu, f->gpu ? f->gpu->id : "a GPU the hardware table does not have");
	return EXIT_FAIL;
}

/* Costs fitted on another GPU would re-time this one's kernels with that one's. */
static int same_gpu(const char *path, const struct orr_costs *c, const struct orr_rank_fit *f)
{
	if (!c->gpu || !f->gpu || c->gpu == f->gpu)
		return EXIT_OK;
	cli_error("%s: its costs were fitted on %s, the trace ran on %s: fit costs on a trace "
		  "of the same GPU",
		  path, c->gpu->id, f->gpu->id);
	return EXIT_FAIL;
}

int cli_estimate_base_open(const struct cli_estimate_options *o, struct cli_estimate_base *b)
{
	int ret;

	memset(b, 0, sizeof(*b));
	ret = cli_fit_open(o->trace, o->timeline, o->rank, &b->t, &b->g, &b->ri);
	if (ret != EXIT_OK)
		goto fail; /* what it loaded before it failed (a rank the trace lacks) */
	if (o->costs && (ret = cli_read_costs(o->costs, &b->costs)) != EXIT_OK)
		goto fail;
	b->have_costs = o->costs != NULL;
	orr_rank_fit_run(b->g, b->ri, o->trace, NULL, 0, &b->f);
	b->have_fit = true;
	cli_estimate_models(&b->f, o->costs ? &b->costs : NULL, (int)o->gpus_per_node, &b->m);
	if ((o->costs && (ret = same_gpu(o->costs, &b->costs, &b->f)) != EXIT_OK) ||
	    (ret = trace_gpu(o, &b->f)) != EXIT_OK)
		goto fail;
	b->e.costs = o->costs;
	b->e.trace = o->trace;
	b->e.ranks = orr_graph_rank_count(b->g);
	b->e.rank = b->f.rank;
	b->e.gpu = b->f.gpu;
	b->e.forward_only = !b->f.st.backward;
	b->e.cpu_op_ns = isnan(o->launch_us) ? 0 : o->launch_us * 1e3;
	b->e.cpu_op_from = isnan(o->launch_us) ? "none" : "--launch-us";
	cli_synth_costs(&b->m, b->f.gpu, &b->f, o->costs ? &b->costs : NULL, b->e.cpu_op_ns, &b->k);
	b->k.gemm_tiles = o->gemm_tiles;
	if ((ret = configs(o, &b->f, &b->e)) == EXIT_OK)
		return EXIT_OK;
fail:
	cli_estimate_base_close(b);
	return ret;
}

void cli_estimate_base_close(struct cli_estimate_base *b)
{
	if (b->have_fit)
		orr_rank_fit_release(&b->f);
	if (b->have_costs)
		orr_costs_release(&b->costs);
	orr_graph_free(b->g);
	orr_trace_free(b->t);
	memset(b, 0, sizeof(*b));
}

int cli_estimate_base_sweep(const struct cli_estimate_options *o, struct cli_estimate_base *b,
			    struct orr_synth_costs *ret_k, double *ret_replayed_ns)
{
	struct orr_replay *base = NULL;
	struct cli_estimate_step st;

	if (!b->k.gpu) {
		cli_error("%s: its GPU is not in the hardware table: a sweep synthesizes every "
			  "configuration, and that needs the GPU's peaks",
			  o->trace);
		return EXIT_FAIL;
	}
	if (calibrate_launches(o, b->g, &b->e, &b->k, ret_k) || replay(b->g, NULL, &base))
		return EXIT_FAIL;
	measure(base, b->ri, true, &b->e.steps, &st);
	orr_replay_free(base);
	*ret_replayed_ns = st.step_ns;
	estimate_memory(b->g, b->ri, &b->e);
	return EXIT_OK;
}

int cmd_estimate(int argc, char **argv)
{
	struct cli_estimate_options o;
	struct cli_estimate_base b;
	int ret;

	ret = cli_estimate_parse(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (!o.trace)
		return cli_estimate_describe(&o);
	ret = cli_estimate_base_open(&o, &b);
	if (ret != EXIT_OK)
		return ret;
	ret = o.forward_only && !b.e.forward_only ? by_synthesis(&o, b.g, &b.f, &b.k, b.ri, &b.e)
						  : estimate(&o, b.g, &b.f, &b.m, &b.k, b.ri, &b.e);
	if (ret == EXIT_OK)
		cli_estimate_report(&b.e, o.format);
	cli_estimate_base_close(&b);
	return ret;
}

/* SPDX-License-Identifier: MIT */
/*
 * orrery estimate without a trace (docs/orrery-estimate.md, "From a model description"):
 * the configuration from the options with Megatron-LM's defaults, a step synthesized
 * and replayed, timed by --costs or by the hardware table alone.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "estimate.h"
#include "banned.h"

int cli_estimate_description(const struct cli_estimate_options *o, struct orr_train_config *c)
{
	static const char *const required[] = { "layers", "hidden", "heads", "seq" };

	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!cli_estimate_given(o, required[i]))
			return cli_usage_error("estimate",
					       "no trace: give the model, --%s is missing (or a "
					       "TRACE to estimate from)",
					       required[i]);
	*c = (struct orr_train_config){
		.micro_batch = 1,
		.micro_batches = 1,
		.tp = 1,
		.pp = 1,
		.dp = 1,
		.cp = 1,
		.vpp = 1,
		.vocab = 50257, /* GPT-2's tokenizer, Megatron's GPT default */
		.recompute = ORR_RECOMPUTE_NONE,
		.precision = ORR_DTYPE_BF16,
		.flash_attention = true,
	};
	cli_estimate_apply(o, c);
	if (!cli_estimate_given(o, "ffn"))
		c->ffn = 4 * c->hidden;
	if (!cli_estimate_given(o, "kv-heads"))
		c->kv_groups = c->heads;
	c->vocab = orr_train_pad_vocab(c->vocab, c->tp);
	if (o->global_batch) {
		int64_t per = c->micro_batch * c->dp;

		if (o->global_batch % per) {
			cli_error(
				"--global-batch %lld is not a multiple of micro-batch x dp (%lld)",
				(long long)o->global_batch, (long long)per);
			return EXIT_FAIL;
		}
		c->micro_batches = o->global_batch / per;
	}
	return cli_estimate_check(c);
}

static void list_gpus(void)
{
	size_t n;
	const struct orr_gpu_spec *v = orr_gpu_specs(&n);

	fputs("orrery: the hardware table has:", stderr);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, " %s", v[i].id);
	fputc('\n', stderr);
}

/* --gpu, else the costs' GPU; they must agree. */
int cli_estimate_pick_gpu(const struct cli_estimate_options *o, const struct orr_costs *c,
			  const struct orr_gpu_spec **ret)
{
	const struct orr_gpu_spec *gpu = o->gpu ? cli_estimate_gpu(o->gpu) : c ? c->gpu : NULL;

	if (!gpu) {
		if (o->gpu)
			cli_error("--gpu %s: no such GPU in the hardware table", o->gpu);
		else
			cli_error("no trace: name the GPU with --gpu");
		list_gpus();
		return EXIT_FAIL;
	}
	if (c && c->gpu && c->gpu != gpu) {
		cli_error("%s: its costs were fitted on %s, not %s: fit costs on a trace of the "
			  "same GPU, or leave --costs out (the hardware table alone)",
			  o->costs, c->gpu->id, gpu->id);
		return EXIT_FAIL;
	}
	*ret = gpu;
	return EXIT_OK;
}

/* The launch thread's time per kernel from the costs' trace, as a trace calibrates it. */
int cli_estimate_calibrate_costs(const struct orr_costs *c, struct orr_synth_costs *k,
				 struct cli_estimate *e)
{
	struct orr_train_config rec;

	if (!(c->launch_step_ns > 0) || orr_train_config_from_structure(&c->st, &rec, NULL))
		return EXIT_OK;
	rec.precision = orr_gemm_precision(&c->gemm);
	return cli_synth_calibrate(&rec, !c->st.backward, c->launch_step_ns, c->launch_profiler_ns,
				   "costs", k, e);
}

static int run(const struct cli_estimate_options *o, const struct orr_costs *costs,
	       struct cli_estimate *e)
{
	struct orr_retime_models m = { .gpus_per_node = (int)o->gpus_per_node };
	struct orr_synth_costs k;
	int ret = cli_estimate_description(o, &e->to);

	if (ret != EXIT_OK || (ret = cli_estimate_pick_gpu(o, costs, &e->gpu)) != EXIT_OK)
		return ret;
	if (costs)
		cli_estimate_models(NULL, costs, (int)o->gpus_per_node, &m);
	e->how = CLI_ESTIMATE_SYNTH;
	e->from = e->to;
	e->costs = o->costs;
	e->forward_only = o->forward_only;
	e->cpu_op_ns = isnan(o->launch_us) ? 0 : o->launch_us * 1e3;
	e->cpu_op_from = isnan(o->launch_us) ? "none" : "--launch-us";
	cli_synth_costs(&m, e->gpu, NULL, costs, e->cpu_op_ns, &k);
	k.gemm_tiles = o->gemm_tiles;
	if (costs && isnan(o->launch_us) &&
	    (ret = cli_estimate_calibrate_costs(costs, &k, e)) != EXIT_OK)
		return ret;
	ret = cli_synth_run(&e->to, e->forward_only, &k, o->timeline, &e->synth_to);
	if (ret != EXIT_OK)
		return ret;
	e->estimated = e->synth_to.step;
	e->measured_ns = NAN;
	e->replayed.step_ns = NAN;
	e->ranks = e->synth_to.synth.ranks;
	e->steps = 1;
	e->measured_peak_bytes = NAN;
	e->memory_err = orr_memory_estimate(&e->to, e->gpu, 0, &e->memory);
	cli_estimate_rates(e);
	return EXIT_OK;
}

int cli_estimate_describe(const struct cli_estimate_options *o)
{
	struct orr_costs costs = { 0 };
	struct cli_estimate e = { 0 };
	int ret;

	if (o->costs && (ret = cli_read_costs(o->costs, &costs)) != EXIT_OK)
		return ret;
	ret = run(o, o->costs ? &costs : NULL, &e);
	if (ret == EXIT_OK)
		cli_estimate_report(&e, o->format);
	if (o->costs)
		orr_costs_release(&costs);
	return ret;
}

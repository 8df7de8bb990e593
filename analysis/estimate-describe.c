/* SPDX-License-Identifier: MIT */
/*
 * An estimate without a trace (docs/orrery-estimate.md, "From a model description"): the
 * configuration from the options with Megatron-LM's defaults, a step synthesized and
 * replayed, timed by a costs file or by the hardware table alone.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "orrery/analysis-estimate.h"
#include "estimate-internal.h"
#include "banned.h"

const char *orr_estimate_missing(const struct orr_estimate_options *o)
{
	static const char *const required[] = { "layers", "hidden", "heads", "seq" };

	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!orr_estimate_given(o, required[i]))
			return required[i];
	return NULL;
}

/* -EINVAL, said, when o lacks a size a description needs. */
static int missing(const struct orr_estimate_options *o, struct orr_diag *d)
{
	const char *m = orr_estimate_missing(o);

	if (!m)
		return 0;
	return orr_diag_set(d, -EINVAL, "", -1, -1,
			    "no trace: give the model, --%s is missing (or a TRACE to estimate "
			    "from)",
			    m);
}

int orr_estimate_description(const struct orr_estimate_options *o, struct orr_train_config *c,
			     struct orr_diag *d)
{
	int err = missing(o, d);

	if (!err)
		err = orr_estimate_options_check(o, d);
	if (err)
		return err;
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
	orr_estimate_apply(o, c);
	if (!orr_estimate_given(o, "ffn"))
		c->ffn = 4 * c->hidden;
	if (!orr_estimate_given(o, "kv-heads"))
		c->kv_groups = c->heads;
	c->vocab = orr_train_pad_vocab(c->vocab, c->tp);
	if (o->global_batch) {
		int64_t per = c->micro_batch * c->dp;

		if (o->global_batch % per)
			return orr_diag_set(
				d, -EDOM, "", -1, -1,
				"--global-batch %lld is not a multiple of micro-batch x dp (%lld)",
				(long long)o->global_batch, (long long)per);
		c->micro_batches = o->global_batch / per;
	}
	return orr_estimate_check(c, d);
}

int orr_estimate_transfer_costs(const struct orr_estimate_options *o, struct orr_costs *c,
				const struct orr_gpu_spec **from, struct orr_diag *d)
{
	const struct orr_gpu_spec *to = o->gpu ? orr_estimate_gpu(o->gpu) : NULL;

	*from = NULL;
	if (!o->transfer_costs)
		return 0;
	if (!o->gpu)
		return orr_diag_set(d, -EINVAL, "", -1, -1,
				    "--transfer-costs: name the GPU to estimate with --gpu");
	if (!to)
		return orr_diag_set(d, -ENODEV, "", -1, -1,
				    "--gpu %s: no such GPU in the hardware table", o->gpu);
	if (!c->gpu)
		return orr_diag_set(d, -ENODEV, "", -1, -1,
				    "%s: its costs name no GPU of the hardware table (%s): their "
				    "efficiencies are over no known roofline, they cannot be "
				    "transferred",
				    o->costs, c->device ? c->device : "no device");
	if (c->gpu == to)
		return 0;
	/* efficiencies are measured time over the roofline: the roofline becomes to's */
	c->gemm.gpu = to;
	if (c->gemm.tiles.gpu)
		c->gemm.tiles.gpu = to;
	c->kern.gpu = to;
	/* the trace's links are not to's: the hardware table times the collectives */
	for (size_t i = 0; i < c->ncoll; i++) {
		c->coll[i].fitted = false;
		c->coll[i].measured_bus_bytes_per_s = NAN;
	}
	*from = c->gpu;
	c->gpu = to;
	return 0;
}

int orr_estimate_pick_gpu(const struct orr_estimate_options *o, const struct orr_costs *c,
			  const struct orr_gpu_spec **ret, struct orr_diag *d)
{
	const struct orr_gpu_spec *gpu = o->gpu ? orr_estimate_gpu(o->gpu) : c ? c->gpu : NULL;

	if (!gpu && o->gpu)
		return orr_diag_set(d, -ENODEV, "", -1, -1,
				    "--gpu %s: no such GPU in the hardware table", o->gpu);
	if (!gpu)
		return orr_diag_set(d, -ENODEV, "", -1, -1, "no trace: name the GPU with --gpu");
	if (c && c->gpu && c->gpu != gpu)
		return orr_diag_set(
			d, -EXDEV, "", -1, -1,
			"%s: its costs were fitted on %s, not %s: fit costs on a trace "
			"of the same GPU, transfer these (--transfer-costs: their efficiencies "
			"over this GPU's roofline), or leave --costs out (the hardware table's "
			"peaks)",
			o->costs, c->gpu->id, gpu->id);
	*ret = gpu;
	return 0;
}

int orr_estimate_calibrate_costs(const struct orr_estimate_options *o, const struct orr_costs *c,
				 struct orr_synth_costs *k, struct orr_estimate *e,
				 struct orr_diag *d)
{
	struct orr_train_config rec;

	if (!(c->launch_step_ns > 0) || orr_train_config_from_structure(&c->st, &rec, NULL))
		return 0;
	rec.precision = orr_gemm_precision(&c->gemm);
	return orr__estimate_calibrate(o, &rec, !c->st.backward, c->launch_step_ns,
				       c->launch_profiler_ns, c->launch_stall_ns, ORR_LAUNCH_COSTS,
				       k, e, d);
}

static int run(const struct orr_estimate_options *o, struct orr_costs *costs,
	       struct orr_estimate *e, struct orr_diag *d)
{
	struct orr_retime_models m = { .gpus_per_node = (int)o->gpus_per_node };
	struct orr_synth_costs k;
	int err = orr_estimate_description(o, &e->to, d);

	orr_estimate_settle(&e->to);
	if (err || (costs && (err = orr_estimate_transfer_costs(o, costs, &e->costs_gpu, d))) ||
	    (err = orr_estimate_pick_gpu(o, costs, &e->gpu, d)))
		return err;
	if (costs)
		orr_estimate_models(NULL, costs, (int)o->gpus_per_node, &m);
	m.nic_bytes_per_s = o->nic_gbps * 1e9 / 8;
	e->how = ORR_ESTIMATE_SYNTH;
	e->from = e->to;
	e->costs = o->costs;
	e->forward_only = o->forward_only;
	e->cpu_op_ns = isnan(o->launch_us) ? 0 : o->launch_us * 1e3;
	e->cpu_op_from = isnan(o->launch_us) ? ORR_LAUNCH_NONE : ORR_LAUNCH_OPTION;
	orr_estimate_synth_costs(&m, e->gpu, NULL, costs, e->cpu_op_ns, &k);
	k.gemm_tiles = o->gemm_tiles;
	if (costs && isnan(o->launch_us) &&
	    (err = orr_estimate_calibrate_costs(o, costs, &k, e, d)))
		return err;
	err = orr__estimate_synth_run(o, &e->to, e->forward_only, &k, o->timeline, &e->synth_to, d);
	if (err)
		return err;
	e->estimated = e->synth_to.step;
	e->measured_ns = NAN;
	e->replayed.step_ns = NAN;
	e->ranks = e->synth_to.synth.ranks;
	e->steps = 1;
	e->measured_peak_bytes = NAN;
	e->memory_err = orr_memory_estimate(&e->to, e->gpu, 0, &e->memory);
	orr_estimate_rates(e);
	return 0;
}

int orr_estimate_describe(const struct orr_estimate_options *o, struct orr_estimate *ret,
			  struct orr_diag *d)
{
	struct orr_costs costs = { 0 };
	int err;

	orr_diag_clear(d);
	memset(ret, 0, sizeof(*ret));
	/* what the options lack first: a usage error, whatever else fails */
	if ((err = missing(o, d)))
		return err;
	if (o->costs && (err = orr__estimate_read_costs(o->costs, &costs, d)))
		return err;
	err = run(o, o->costs ? &costs : NULL, ret, d);
	if (o->costs)
		orr_costs_release(&costs);
	return err;
}

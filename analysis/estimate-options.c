/* SPDX-License-Identifier: MIT */
/* orrery estimate's options as the library takes them (include/orrery/analysis-estimate.h). */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "orrery/analysis-estimate.h"
#include "banned.h"

/* The options that set a size, each to its field of the target configuration. */
static const struct size_opt {
	const char *name;
	size_t offset;
} size_opts[] = {
	{ "tp", offsetof(struct orr_train_config, tp) },
	{ "pp", offsetof(struct orr_train_config, pp) },
	{ "dp", offsetof(struct orr_train_config, dp) },
	{ "cp", offsetof(struct orr_train_config, cp) },
	{ "vpp", offsetof(struct orr_train_config, vpp) },
	{ "layers", offsetof(struct orr_train_config, layers) },
	{ "hidden", offsetof(struct orr_train_config, hidden) },
	{ "heads", offsetof(struct orr_train_config, heads) },
	{ "kv-heads", offsetof(struct orr_train_config, kv_groups) },
	{ "ffn", offsetof(struct orr_train_config, ffn) },
	{ "vocab", offsetof(struct orr_train_config, vocab) },
	{ "seq", offsetof(struct orr_train_config, seq) },
	{ "micro-batch", offsetof(struct orr_train_config, micro_batch) },
	{ "first-stage-layers", offsetof(struct orr_train_config, first_stage_layers) },
	{ "last-stage-layers", offsetof(struct orr_train_config, last_stage_layers) },
};

#define NSIZE (sizeof(size_opts) / sizeof(size_opts[0]))
_Static_assert(NSIZE == ORR_ESTIMATE_NSIZE, "one slot per size option");

const char *orr_estimate_size_name(size_t i)
{
	return i < NSIZE ? size_opts[i].name : NULL;
}

void orr_estimate_options_init(struct orr_estimate_options *o)
{
	*o = (struct orr_estimate_options){ .rank = -1,
					    .recompute = -1,
					    .precision = -1,
					    .attention = -1,
					    .norm = -1,
					    .positions = -1,
					    .launch_us = NAN };
}

int64_t orr_estimate_given(const struct orr_estimate_options *o, const char *name)
{
	for (size_t i = 0; i < NSIZE; i++)
		if (strcmp(size_opts[i].name, name) == 0)
			return o->size[i];
	return 0;
}

int orr_estimate_options_check(const struct orr_estimate_options *o, struct orr_diag *d)
{
	int64_t layers = orr_estimate_given(o, "layers");

	if (layers > ORR_ESTIMATE_MAX_LAYERS)
		return orr_diag_set(d, -ERANGE, "", -1, -1,
				    "layers %lld is past orrery's limit of %d (a step synthesized "
				    "layer by layer; the largest models have fewer than 200)",
				    (long long)layers, ORR_ESTIMATE_MAX_LAYERS);
	if (o->transfer_costs && !o->costs)
		return orr_diag_set(d, -EINVAL, "", -1, -1,
				    "--transfer-costs: give the costs to transfer, --costs FILE");
	/* below ORR_NIC_GBPS_MIN a channel across nodes would be timed faster than its NIC */
	if (o->nic_gbps == 0 || (o->nic_gbps >= ORR_NIC_GBPS_MIN && o->nic_gbps <= 1e6))
		return 0;
	return orr_diag_set(d, -ERANGE, "", -1, -1,
			    "nic_gbps %g is out of range: Gb/s per direction, %g to 1e6 (0: the "
			    "hardware table's)",
			    o->nic_gbps, ORR_NIC_GBPS_MIN);
}

int orr_estimate_check(const struct orr_train_config *c, struct orr_diag *d)
{
	char why[160];

	if (orr_train_check(c, why, sizeof(why)) == ORR_TRAIN_VALID)
		return 0;
	return orr_diag_set(d, -EDOM, "", -1, -1, "a configuration Megatron refuses: %s", why);
}

void orr_estimate_apply(const struct orr_estimate_options *o, struct orr_train_config *c)
{
	static const enum orr_dtype precision[] = { ORR_DTYPE_BF16, ORR_DTYPE_FP16, ORR_DTYPE_FP32,
						    ORR_DTYPE_FP8 };

	for (size_t i = 0; i < NSIZE; i++)
		if (o->size[i])
			*(int64_t *)((char *)c + size_opts[i].offset) = o->size[i];
	if (o->recompute >= 0 && o->recompute < ORR_RECOMPUTE_COUNT)
		c->recompute = (enum orr_recompute)o->recompute;
	if (o->precision >= 0 && o->precision < 4)
		c->precision = precision[o->precision];
	if (o->attention >= 0)
		c->flash_attention = o->attention == 0;
	c->sequence_parallel = o->sp;
	c->distributed_optimizer = o->distopt;
	c->fully_sharded = o->fsdp;
	c->overlap_grad_reduce = o->overlap_grad;
	c->scatter_gather_p2p = o->p2p_scatter;
	c->sync_timers = o->sync_timers;
	c->sync_layers = o->sync_layers;
	/* Megatron's switches turn a model's feature on; a trace's is kept without them. */
	c->gated_mlp |= o->swiglu;
	c->untied_embeddings |= o->untie;
	if (o->norm >= 0)
		c->rms_norm = o->norm == 1;
	if (o->positions >= 0)
		c->rope = o->positions == 1;
}

void orr_estimate_settle(struct orr_train_config *c)
{
	/* as Megatron-LM's validate_args(): no sequence parallelism without TP */
	c->sequence_parallel &= c->tp > 1;
	/* sharding and overlapped reductions need more than one data-parallel rank */
	c->distributed_optimizer &= c->dp * c->cp > 1;
	c->fully_sharded &= c->dp * c->cp > 1;
	c->overlap_grad_reduce &= c->dp * c->cp > 1;
}

const struct orr_gpu_spec *orr_estimate_gpu(const char *name)
{
	const struct orr_gpu_spec *gpu = orr_gpu_spec_by_id(name);

	return gpu ? gpu : orr_gpu_spec_match(name);
}

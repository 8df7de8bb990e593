/* SPDX-License-Identifier: MIT */
/*
 * What Megatron-LM refuses of a configuration when it starts (megatron/training/
 * arguments.py, and the divisions its layers and schedules assert), one check at a
 * time and in that order, each naming the dimension and the size that does not divide
 * it: `orrery estimate` prints the first that fails, `orrery whatif` counts
 * configurations by it (what-if/plan.c), and every estimator path refuses what fails.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"
#include "banned.h"

/* Writes the reason into why[0..size) (why may be NULL) and returns flaw. */
static enum orr_train_flaw flaw(enum orr_train_flaw f, char *why, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static enum orr_train_flaw flaw(enum orr_train_flaw f, char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (why && size) {
		va_start(ap, fmt);
		vsnprintf(why, size, fmt, ap);
		va_end(ap);
	}
	return f;
}

#define LL(x) ((long long)(x))

/* Every size at least 1, the enums in range (what a configuration is made of). */
static enum orr_train_flaw sizes(const struct orr_train_config *c, char *why, size_t size)
{
	const struct {
		const char *name;
		int64_t v;
	} s[] = {
		{ "layers", c->layers },
		{ "hidden", c->hidden },
		{ "heads", c->heads },
		{ "ffn", c->ffn },
		{ "vocab", c->vocab },
		{ "seq", c->seq },
		{ "micro-batch", c->micro_batch },
		{ "micro-batches", c->micro_batches },
		{ "tp", c->tp },
		{ "pp", c->pp },
		{ "dp", c->dp },
		{ "cp", c->cp },
		{ "vpp", c->vpp },
	};

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (s[i].v < 1)
			return flaw(ORR_TRAIN_SIZE, why, size, "%s %lld is below 1", s[i].name,
				    LL(s[i].v));
	if (c->kv_groups < 0)
		return flaw(ORR_TRAIN_SIZE, why, size, "kv-heads %lld is below 0",
			    LL(c->kv_groups));
	if (c->recompute < 0 || c->recompute >= ORR_RECOMPUTE_COUNT)
		return flaw(ORR_TRAIN_SIZE, why, size, "a recompute mode out of range");
	if (c->precision != ORR_DTYPE_BF16 && c->precision != ORR_DTYPE_FP16 &&
	    c->precision != ORR_DTYPE_FP32 && c->precision != ORR_DTYPE_FP8)
		return flaw(ORR_TRAIN_SIZE, why, size,
			    "a precision other than bf16, fp16, fp8 and fp32");
	return ORR_TRAIN_VALID;
}

/* Heads of one size, and tensor parallelism splitting whole heads, groups and FFN columns. */
static enum orr_train_flaw heads(const struct orr_train_config *c, char *why, size_t size)
{
	if (c->hidden % c->heads)
		return flaw(ORR_TRAIN_HEADS, why, size,
			    "hidden %lld is not divisible by heads %lld (heads of one size)",
			    LL(c->hidden), LL(c->heads));
	if (c->heads % c->tp)
		return flaw(ORR_TRAIN_HEADS, why, size, "heads %lld is not divisible by tp %lld",
			    LL(c->heads), LL(c->tp));
	/* Grouped-query attention: each group serves as many heads, TP splits whole groups. */
	if (c->kv_groups && c->heads % c->kv_groups)
		return flaw(ORR_TRAIN_HEADS, why, size,
			    "heads %lld is not divisible by kv-heads %lld", LL(c->heads),
			    LL(c->kv_groups));
	if (c->kv_groups && c->kv_groups % c->tp)
		return flaw(ORR_TRAIN_HEADS, why, size, "kv-heads %lld is not divisible by tp %lld",
			    LL(c->kv_groups), LL(c->tp));
	/* FC1 is column-parallel, FC2 row-parallel: whole FFN columns per rank. */
	if (c->ffn % c->tp)
		return flaw(ORR_TRAIN_HEADS, why, size, "ffn %lld is not divisible by tp %lld",
			    LL(c->ffn), LL(c->tp));
	return ORR_TRAIN_VALID;
}

bool orr_train_uneven(const struct orr_train_config *c)
{
	return c->first_stage_layers != 0 || c->last_stage_layers != 0;
}

bool orr_train_syncs_layers(const struct orr_train_config *c)
{
	return c->sync_layers && c->recompute == ORR_RECOMPUTE_FULL;
}

/* An uneven split's layers left for the stages not given, and how many those are. */
static int64_t layers_left(const struct orr_train_config *c, int64_t *ret_stages)
{
	*ret_stages = c->pp - (c->first_stage_layers != 0) - (c->last_stage_layers != 0);
	return c->layers - c->first_stage_layers - c->last_stage_layers;
}

/* An uneven split (Megatron-Core's get_num_layers_to_build()). */
static enum orr_train_flaw split_uneven(const struct orr_train_config *c, char *why, size_t size)
{
	int64_t first = c->first_stage_layers, last = c->last_stage_layers, rest, stages;

	if (first < 0 || last < 0 || first > c->layers || last > c->layers)
		return flaw(ORR_TRAIN_LAYERS, why, size,
			    "first-stage-layers %lld or last-stage-layers %lld is not from 0 to "
			    "layers %lld",
			    LL(first), LL(last), LL(c->layers));
	if (c->pp < 2)
		return flaw(ORR_TRAIN_LAYERS, why, size,
			    "an uneven pipeline split needs pp 2 or more, not %lld", LL(c->pp));
	if (c->vpp != 1)
		return flaw(ORR_TRAIN_LAYERS, why, size,
			    "an uneven pipeline split needs vpp 1, not %lld", LL(c->vpp));
	rest = layers_left(c, &stages);
	if (stages ? rest >= stages && rest % stages == 0 : rest == 0)
		return ORR_TRAIN_VALID;
	if (!stages)
		return flaw(ORR_TRAIN_LAYERS, why, size,
			    "first-stage-layers %lld + last-stage-layers %lld is not layers %lld",
			    LL(first), LL(last), LL(c->layers));
	return flaw(ORR_TRAIN_LAYERS, why, size,
		    "the %lld layers left by the first and last stages are not divisible by the "
		    "%lld other stages, at least one each",
		    LL(rest), LL(stages));
}

/*
 * How the layers are split over the stages.  Evenly: each stage, and each of its
 * virtual stages, holds as many, layers % (pp·vpp), without the product, which could
 * overflow.  Unevenly: pp >= 2, no interleaving, the first and the last stage as
 * given, and the stages left sharing the layers left evenly, at least one each.
 */
static enum orr_train_flaw split(const struct orr_train_config *c, char *why, size_t size)
{
	if (orr_train_uneven(c))
		return split_uneven(c, why, size);
	if (c->layers % c->pp)
		return flaw(ORR_TRAIN_LAYERS, why, size, "layers %lld is not divisible by pp %lld",
			    LL(c->layers), LL(c->pp));
	if ((c->layers / c->pp) % c->vpp)
		return flaw(ORR_TRAIN_LAYERS, why, size,
			    "the %lld layers of a stage (layers %lld / pp %lld) are not divisible "
			    "by vpp %lld",
			    LL(c->layers / c->pp), LL(c->layers), LL(c->pp), LL(c->vpp));
	return ORR_TRAIN_VALID;
}

bool orr_train_split_valid(const struct orr_train_config *c)
{
	return split(c, NULL, 0) == ORR_TRAIN_VALID;
}

int64_t orr_train_stage_layers(const struct orr_train_config *c, int64_t stage)
{
	int64_t rest, stages;

	if (stage < 0 || stage >= c->pp || c->pp < 1)
		return 0;
	if (!orr_train_uneven(c))
		return c->layers / c->pp;
	if (c->first_stage_layers && stage == 0)
		return c->first_stage_layers;
	if (c->last_stage_layers && stage == c->pp - 1)
		return c->last_stage_layers;
	rest = layers_left(c, &stages);
	return stages > 0 ? rest / stages : 0;
}

/* Load-balanced CP splits the sequence in 2 x CP chunks; SP splits each over TP. */
static enum orr_train_flaw sequence(const struct orr_train_config *c, char *why, size_t size)
{
	if (c->cp > 1 && c->seq % (2 * c->cp))
		return flaw(ORR_TRAIN_SEQUENCE, why, size,
			    "seq %lld is not divisible by 2 x cp (%lld)", LL(c->seq),
			    LL(2 * c->cp));
	if (c->sequence_parallel && c->tp > 1 && (c->seq / c->cp) % c->tp)
		return flaw(ORR_TRAIN_SEQUENCE, why, size,
			    "seq / cp (%lld) is not divisible by tp %lld (sequence parallelism)",
			    LL(c->seq / c->cp), LL(c->tp));
	return ORR_TRAIN_VALID;
}

/* The interleaved schedule runs micro-batches in groups of pp, over 2 stages or more. */
static enum orr_train_flaw interleave(const struct orr_train_config *c, char *why, size_t size)
{
	if (c->vpp > 1 && c->pp < 2)
		return flaw(ORR_TRAIN_INTERLEAVE, why, size,
			    "vpp %lld (interleaved 1F1B) needs pp 2 or more, not %lld", LL(c->vpp),
			    LL(c->pp));
	if (c->vpp > 1 && c->micro_batches % c->pp)
		return flaw(ORR_TRAIN_INTERLEAVE, why, size,
			    "micro-batches %lld is not divisible by pp %lld (interleaved 1F1B, "
			    "vpp %lld)",
			    LL(c->micro_batches), LL(c->pp), LL(c->vpp));
	return ORR_TRAIN_VALID;
}

enum orr_train_flaw orr_train_check_layout(const struct orr_train_config *c, char *why, size_t size)
{
	enum orr_train_flaw (*const checks[])(const struct orr_train_config *, char *, size_t) = {
		heads,
		split,
		sequence,
		interleave,
	};
	enum orr_train_flaw f = ORR_TRAIN_VALID;

	if (why && size)
		why[0] = '\0';
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]) && f == ORR_TRAIN_VALID; i++)
		f = checks[i](c, why, size);
	return f;
}

enum orr_train_flaw orr_train_check(const struct orr_train_config *c, char *why, size_t size)
{
	enum orr_train_flaw f = sizes(c, why, size);

	return f != ORR_TRAIN_VALID ? f : orr_train_check_layout(c, why, size);
}

bool orr__train_config_valid(const struct orr_train_config *c)
{
	return orr_train_check(c, NULL, 0) == ORR_TRAIN_VALID;
}

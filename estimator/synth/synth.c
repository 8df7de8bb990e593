/* SPDX-License-Identifier: MIT */
/* A step from a model description: the program, its timeline, its trace (synth.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "synth.h"
#include "banned.h"

static int elem_bytes(enum orr_dtype t)
{
	return t == ORR_DTYPE_FP32 ? 4 : 2;
}

static int check(const struct orr_train_config *c, const struct orr_synth_costs *k,
		 const char **ret_why)
{
	if (!k || !k->gpu) {
		*ret_why = "no GPU to time it on";
		return -EINVAL;
	}
	if (c->precision != ORR_DTYPE_BF16 && c->precision != ORR_DTYPE_FP16 &&
	    c->precision != ORR_DTYPE_FP32 && c->precision != ORR_DTYPE_FP8) {
		*ret_why = "a precision other than bf16, fp16, fp8 and fp32";
		return -ENOTSUP;
	}
	/* Transformer Engine's FP8 needs FP8 tensor cores (compute capability 8.9 or later) */
	if (c->precision == ORR_DTYPE_FP8 && !(k->gpu->peak_flops[ORR_DTYPE_FP8] > 0)) {
		*ret_why = "FP8 on a GPU without FP8 tensor cores (no FP8 peak in the hardware "
			   "table; Transformer Engine's FP8 needs compute capability 8.9 or later)";
		return -ENOTSUP;
	}
	if (!orr__train_config_valid(c)) {
		*ret_why = "a configuration Megatron refuses (a size below 1, a dimension a "
			   "parallel size does not divide, or an uneven pipeline split whose "
			   "other stages cannot share the layers left evenly, or with VPP)";
		return -EINVAL;
	}
	return 0;
}

/*
 * The placement adds int64 ns (synth-place.c): every instruction's time must be a
 * number, and all of them end to end, with the launch thread's time per call, below
 * 2^62 ns (a stage waits on the others' transfers, so the bound is the job's), so that
 * no sum or maximum of them overflows.  Times come from the costs' models and the
 * sizes; what passes is no step anyone runs (146 years).
 */
static int times_bounded(const struct sy_job *j, const char **ret_why)
{
	double cpu = j->k->cpu_op_ns, sum = 0;

	if (!(cpu >= 0) || cpu > 0x1p62) {
		*ret_why = "the launch thread's time per call is not a time";
		return -ERANGE;
	}
	/*
	 * Without reading the tasks again: every one a time, the same terms summed in
	 * another order.  A sum of at most 2^25 terms >= 0 in any order is within a factor
	 * 1 +- 2^-27 of the exact one, so below 2^61 here it is below 2^62 in the order
	 * below, which is the check; near the limit, or with a task not a time, the order
	 * below decides (and names the first such task).
	 */
	if (!j->ns_bad) {
		for (size_t r = 0; r < j->nranks; r++)
			sum += (double)j->ranks[r].n * (cpu + 2);
		if (sum + j->ns_sum < 0x1p61)
			return 0;
		sum = 0;
	}
	for (size_t r = 0; r < j->nranks && sum < 0x1p62; r++) {
		const struct sy_rank *a = &j->ranks[r];

		sum += (double)a->n * (cpu + 2);
		for (size_t i = 0; i < a->n; i++) {
			if (!(a->v[i].ns >= 0) || !isfinite(a->v[i].ns)) {
				*ret_why = "a task's time from the costs is not a number";
				return -ERANGE;
			}
			sum += a->v[i].ns;
		}
	}
	if (!(sum < 0x1p62)) {
		*ret_why = "the step's tasks take more than 2^62 ns (146 years) end to end";
		return -ERANGE;
	}
	return 0;
}

/* Megatron's schedule over passes as long as the first stage's, less those passes. */
static void bubble(const struct orr_train_config *c, bool forward_only, struct orr_synth *s)
{
	double chunks = (double)(c->micro_batches * c->vpp), f = s->forward_ns / chunks;
	double b = forward_only ? 0 : s->backward_ns / chunks, makespan;

	if (c->pp > 1 && orr_pp_simulate((int)c->pp, (int)c->micro_batches, (int)c->vpp, f, b,
					 s->transfer_ns, &makespan) == 0)
		s->bubble_ns = makespan - chunks * (f + b);
}

/*
 * A thread's instruction arrays, kept from one synthesized step to the next: a sweep
 * synthesizes thousands of steps of tens of megabytes each, and growing them anew (a
 * copy at each doubling) and faulting their pages in again took a fifth of its time,
 * its threads queued on the process's address-space lock.
 */
struct orr_synth_scratch {
	struct sy_rank *r; /* only their arrays */
	size_t n;
};

struct orr_synth_scratch *orr_synth_scratch_new(void)
{
	return orr_xcalloc(1, sizeof(struct orr_synth_scratch));
}

void orr_synth_scratch_free(struct orr_synth_scratch *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		orr__sy_rank_release(&s->r[i]);
	free(s->r);
	free(s);
}

/* Stage r's arrays from the scratch (its own from the last step), if any. */
static void take(struct orr_synth_scratch *s, size_t r, struct sy_rank *ret)
{
	if (!s || r >= s->n)
		return;
	ret->v = s->r[r].v;
	ret->cap = s->r[r].cap;
	for (int q = 0; q < SY_STREAMS; q++) {
		ret->q[q].at = s->r[r].q[q].at;
		ret->q[q].cap = s->r[r].q[q].cap;
	}
	memset(&s->r[r], 0, sizeof(s->r[r]));
}

/* Stage r's arrays back to the scratch, or freed without one. */
static void give(struct orr_synth_scratch *s, size_t r, struct sy_rank *a)
{
	if (!s) {
		orr__sy_rank_release(a);
		return;
	}
	if (r >= s->n) {
		s->r = orr_xrealloc(s->r, (r + 1) * sizeof(*s->r));
		memset(&s->r[s->n], 0, (r + 1 - s->n) * sizeof(*s->r));
		s->n = r + 1;
	}
	orr__sy_rank_release(&s->r[r]);
	s->r[r] = *a;
}

static void release_job(struct sy_job *j, struct orr_synth_scratch *s)
{
	for (size_t r = 0; r < j->nranks; r++)
		give(s, r, &j->ranks[r]);
	free(j->ranks);
}

static int synth(const struct orr_train_config *c, bool forward_only,
		 const struct orr_synth_costs *k, struct orr_synth_scratch *scratch, bool emit,
		 struct orr_synth *ret, const char **ret_why)
{
	const char *why = NULL;
	struct orr_synth s = { 0 };
	struct sy_job j = {
		.c = c,
		.k = k,
		.forward_only = forward_only,
		.max_insns = emit ? SY_MAX_WRITTEN_INSNS : SY_MAX_JOB_INSNS,
		.too_many = emit ? "more than 2^22 instructions in all its stages (the most "
				   "a step written as a trace is)"
				 : "more than 2^24 instructions in all its stages",
		.ret = &s,
		.labelled = emit,
	};
	int err = check(c, k, &why);

	if (err < 0)
		goto out;
	/* Transformer Engine's FP8: FP8 GEMMs, BF16 activations and communication */
	j.dtype = c->precision == ORR_DTYPE_FP8 ? ORR_DTYPE_BF16 : c->precision;
	j.elem_bytes = elem_bytes(j.dtype);
	j.gemm_dtype = c->precision;
	j.gemm_elem_bytes = c->precision == ORR_DTYPE_FP8 ? 1 : j.elem_bytes;
	j.gpus_per_node = k->m.gpus_per_node > 0      ? k->m.gpus_per_node
			  : k->gpu->gpus_per_node > 0 ? k->gpu->gpus_per_node
						      : 1;
	orr__sy_net_init(&j);
	err = orr__sy_bound(&j, &why);
	if (err < 0)
		goto out;
	j.nranks = (size_t)c->pp;
	j.ranks = orr_xcalloc(j.nranks, sizeof(*j.ranks));
	for (size_t r = 0; r < j.nranks; r++)
		take(scratch, r, &j.ranks[r]);
	err = orr__sy_program(&j, &why);
	if (err < 0)
		goto out;
	if (j.err < 0) {
		err = j.err;
		why = j.why;
		goto out;
	}
	err = times_bounded(&j, &why);
	if (err < 0)
		goto out;
	err = orr__sy_place(&j);
	if (err < 0) {
		why = "the pipeline's transfers do not pair up (a bug)";
		goto out;
	}
	s.ranks = j.nranks;
	bubble(c, forward_only, &s);
	orr__sy_busy(&j);
	if (emit)
		s.json = orr__sy_emit(&j, &s.len);
	*ret = s;
out:
	if (j.ranks)
		release_job(&j, scratch);
	if (ret_why)
		*ret_why = why;
	return err;
}

int orr_synth_step(const struct orr_train_config *c, bool forward_only,
		   const struct orr_synth_costs *k, struct orr_synth *ret, const char **ret_why)
{
	return synth(c, forward_only, k, NULL, true, ret, ret_why);
}

int orr_synth_time(const struct orr_train_config *c, bool forward_only,
		   const struct orr_synth_costs *k, struct orr_synth_scratch *scratch,
		   struct orr_synth *ret, const char **ret_why)
{
	return synth(c, forward_only, k, scratch, false, ret, ret_why);
}

void orr_synth_release(struct orr_synth *s)
{
	if (!s)
		return;
	free(s->json);
	memset(s, 0, sizeof(*s));
}

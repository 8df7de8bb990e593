/* SPDX-License-Identifier: MIT */
/*
 * One configuration of a sweep estimated as `orrery estimate` estimates it
 * (docs/orrery-whatif.md, "How a configuration is estimated"): its memory per GPU, then
 * its step synthesized and placed (orr_synth_time(), the replay's rules without the
 * trace written and read back), scaled by the trace's replay over the recorded
 * configuration's synthesized step when there is a trace (or, where the sizes change,
 * by the trace re-timed to them over their synthesized step: the anchor).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

static const char *const limit_names[ORR_WHATIF_LIMIT_COUNT] = {
	[ORR_WHATIF_LIMIT_COMPUTE] = "compute",
	[ORR_WHATIF_LIMIT_COMM] = "communication",
	[ORR_WHATIF_LIMIT_BUBBLE] = "pipeline bubble",
	[ORR_WHATIF_LIMIT_HOST] = "host",
};

const char *orr_whatif_limit_name(enum orr_whatif_limit l)
{
	return (unsigned)l < ORR_WHATIF_LIMIT_COUNT ? limit_names[l] : NULL;
}

/*
 * The step's parts on the first stage, as `orrery estimate --format=json` reports them:
 * compute (alone or under communication), the bubble (a stage waits for its neighbours
 * on its receives, so it is counted out of its exposed communication, and no more than
 * it: a host-bound stage waits on its launches instead), the exposed communication
 * left, and no GPU work; scaled to the step, they add up to it.
 */
static void parts(struct orr_whatif_result *r)
{
	const struct orr_synth *s = &r->synth;
	double f = s->placed_ns > 0 ? r->step_ns / s->placed_ns : 0;
	double best;

	r->compute_ns = (s->placed_compute_ns + s->placed_overlapped_ns) * f;
	r->bubble_ns = fmin(s->bubble_ns, s->placed_comm_ns) * f;
	r->exposed_comm_ns = s->placed_comm_ns * f - r->bubble_ns;
	r->other_ns = s->placed_other_ns * f;
	r->limit = ORR_WHATIF_LIMIT_COMPUTE;
	best = r->compute_ns;
	if (r->exposed_comm_ns > best) {
		r->limit = ORR_WHATIF_LIMIT_COMM;
		best = r->exposed_comm_ns;
	}
	if (r->bubble_ns > best) {
		r->limit = ORR_WHATIF_LIMIT_BUBBLE;
		best = r->bubble_ns;
	}
	if (r->other_ns > best)
		r->limit = ORR_WHATIF_LIMIT_HOST;
}

static void rates(const struct orr_whatif_context *x, struct orr_whatif_result *r)
{
	const struct orr_train_config *c = &r->c;
	double sec = r->step_ns / 1e9, peak = x->gpu->peak_flops[c->precision];

	r->tokens_per_s_per_gpu = (double)(c->micro_batch * c->micro_batches * c->dp * c->seq) /
				  sec / (double)r->gpus;
	r->mfu = peak > 0 ? orr_train_model_flops(c, x->forward_only) / (sec * r->gpus * peak)
			  : NAN;
	r->hfu = peak > 0 ? orr_train_hardware_flops(c, x->forward_only) / (sec * r->gpus * peak)
			  : NAN;
}

int orr_whatif_eval(const struct orr_whatif_plan *p, const struct orr_whatif_context *x, uint64_t i,
		    struct orr_synth_scratch *scratch, struct orr_whatif_result *ret)
{
	const struct orr_whatif_anchor *a = NULL;
	struct orr_whatif_result r;
	const char *why = NULL;
	int err;

	if (!x->gpu)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.index = i;
	r.step_ns = r.tokens_per_s_per_gpu = r.mfu = r.hfu = NAN;
	r.why = orr_whatif_config(p, i, &r.c);
	r.gpus = r.c.tp * r.c.pp * r.c.dp * r.c.cp;
	if (r.why != ORR_WHATIF_FEASIBLE)
		goto out;
	if (orr_memory_estimate(&r.c, x->gpu, x->reserve_bytes, &r.memory) || !r.memory.fits) {
		r.why = ORR_WHATIF_MEMORY;
		goto out;
	}
	err = orr_synth_time(&r.c, x->forward_only, &x->costs, scratch, &r.synth, &why);
	if (err) {
		r.why = ORR_WHATIF_REFUSED;
		snprintf(r.refused, sizeof(r.refused), "%s", why ? why : orr_strerror(err));
		goto out;
	}
	r.step_ns = r.synth.placed_ns;
	/* other sizes: scaled from the trace re-timed to them, as orrery estimate does */
	if (x->anchor && !x->anchor(x->anchor_arg, &r.c, &a) && a->synth.placed_ns > 0) {
		r.anchored = true;
		r.anchor = *a;
		r.step_ns = a->step_ns * r.synth.placed_ns / a->synth.placed_ns;
	} else if (x->replayed_ns > 0 && x->recorded_synth_ns > 0)
		r.step_ns = x->replayed_ns * r.synth.placed_ns / x->recorded_synth_ns;
	parts(&r);
	rates(x, &r);
out:
	*ret = r;
	return 0;
}

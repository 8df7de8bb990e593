/* SPDX-License-Identifier: MIT */
/*
 * What an estimate reports beside its step (docs/orrery-estimate.md): the step's parts,
 * the GPU time that changed by kind of task, and a sweep's result as an estimate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis-estimate.h"
#include "banned.h"

void orr_estimate_parts(const struct orr_estimate *e, double ret[4])
{
	const struct orr_breakdown *b = &e->estimated.breakdown;
	/* a synthesized breakdown is of its one step; a replayed one summed over the steps */
	bool synth = e->how != ORR_ESTIMATE_RETIME;
	double steps = !synth && e->steps ? (double)e->steps : 1;
	double comm = (double)b->exposed_comm_ns / steps;

	ret[0] = (double)(b->exposed_compute_ns + b->overlapped_ns) / steps;
	ret[1] = comm;
	ret[2] = e->to.pp == 1 ? 0 : NAN;
	ret[3] = (double)b->other_ns / steps;
	if (synth) {
		/*
		 * a stage waits for its neighbours on its receives: that part of its exposed
		 * communication is the bubble (no more than it: a host-bound stage waits on
		 * its launches instead, counted as other)
		 */
		ret[2] = fmin(comm, e->synth_to.synth.bubble_ns * e->estimated.step_ns /
					    e->synth_to.step.step_ns);
		ret[1] = comm - ret[2];
	}
}

double orr_estimate_change(const struct orr_estimate *e)
{
	return e->replayed.step_ns > 0 ? e->estimated.step_ns / e->replayed.step_ns - 1 : NAN;
}

static int cmp_delta(const void *a, const void *b)
{
	const struct orr_estimate_delta *x = a, *y = b;
	double dx = fabs(x->after - x->before), dy = fabs(y->after - y->before);

	return (dx < dy) - (dx > dy);
}

/* The first stage's GPU time by kind, synthesized at the recorded and the target configuration. */
static size_t synth_deltas(const struct orr_estimate *e, struct orr_estimate_delta *v)
{
	const struct orr_synth *a = &e->synth_from.synth, *b = &e->synth_to.synth;
	const struct {
		const char *what;
		double before, after;
	} k[] = {
		{ "GEMMs", a->gemm_ns, b->gemm_ns },
		{ "other kernels", a->kern_ns, b->kern_ns },
		{ "TP collectives", a->tp_ns, b->tp_ns },
		{ "DP collectives", a->dp_ns, b->dp_ns },
		{ "PP transfers", a->pp_ns, b->pp_ns },
		{ "pipeline bubble", a->bubble_ns, b->bubble_ns },
	};
	size_t n = sizeof(k) / sizeof(k[0]);

	for (size_t i = 0; i < n; i++) {
		snprintf(v[i].what, sizeof(v[i].what), "%s", k[i].what);
		v[i].before = k[i].before;
		v[i].after = k[i].after;
	}
	qsort(v, n, sizeof(*v), cmp_delta);
	return n;
}

static void delta(struct orr_estimate_delta *v, const char *what, double before, double after)
{
	snprintf(v->what, sizeof(v->what), "%s", what);
	v->before = before;
	v->after = after;
}

size_t orr_estimate_deltas(const struct orr_estimate *e,
			   struct orr_estimate_delta v[ORR_ESTIMATE_NDELTA])
{
	const struct orr_retime *r = &e->retime;
	double per = (double)(e->ranks ? e->ranks : 1) * (double)(e->steps ? e->steps : 1);
	size_t n = 0;

	if (e->how == ORR_ESTIMATE_SYNTH)
		return 0;
	if (e->how == ORR_ESTIMATE_SYNTH_RATIO)
		return synth_deltas(e, v);
	for (int k = 1; k < ORR_GEMM_ROLE_COUNT; k++) {
		snprintf(v[n].what, sizeof(v[n].what), "%s GEMMs", orr_gemm_role_name(k));
		v[n].before = r->gemm_ns[k][0] / per;
		v[n++].after = r->gemm_ns[k][1] / per;
	}
	delta(&v[n++], "TP collectives", r->tp_ns[0] / per, r->tp_ns[1] / per);
	delta(&v[n++], "DP collectives", r->dp_ns[0] / per, r->dp_ns[1] / per);
	delta(&v[n++], "other kernels", r->kernel_ns[0] / per, r->kernel_ns[1] / per);
	/* Another number of layers: the layers' GPU tasks, stretched and re-timed */
	if (r->layer_gpu_tasks)
		delta(&v[n++], "layers (stretched)", r->layer_gpu_ns[0] / per,
		      r->layer_gpu_ns[1] / per);
	qsort(v, n, sizeof(*v), cmp_delta);
	return n;
}

void orr_estimate_of_result(const struct orr_estimate *base, bool have_trace,
			    const struct orr_synth *recorded, double replayed_ns,
			    const struct orr_whatif_result *r, struct orr_estimate *ret)
{
	const struct orr_synth *s = &r->synth;
	double f = s->placed_ns > 0 ? r->step_ns / s->placed_ns : 0, traced_from;
	const struct orr_breakdown placed = { .exposed_compute_ns = llround(s->placed_compute_ns),
					      .overlapped_ns = llround(s->placed_overlapped_ns),
					      .exposed_comm_ns = llround(s->placed_comm_ns),
					      .other_ns = llround(s->placed_other_ns) };
	struct orr_estimate *e = ret;

	*e = *base;
	e->how = have_trace ? ORR_ESTIMATE_SYNTH_RATIO : ORR_ESTIMATE_SYNTH;
	if (!have_trace) {
		e->from = r->c;
		e->ranks = s->ranks;
		e->steps = 1;
	}
	e->to = r->c;
	e->memory = r->memory;
	e->memory_err = 0;
	e->estimated.step_ns = r->step_ns;
	/* as orr_estimate_trace() scales the synthesized step's breakdown to the estimate */
	orr_estimate_scale(&placed, f, &e->estimated.breakdown);
	e->synth_to.synth = *s;
	e->synth_to.step.step_ns = s->placed_ns;
	e->synth_from.synth = *recorded;
	e->replayed.step_ns = replayed_ns;
	traced_from = replayed_ns;
	if (r->anchored) { /* as orr_estimate_trace() anchors its ratio */
		e->anchored = true;
		e->anchor = r->anchor.config;
		e->anchor_retimed_ns = r->anchor.step_ns;
		e->anchor_traced_ns = traced_from = r->anchor.traced_ns;
		e->profiler_host_ns = r->anchor.profiler_host_ns;
		e->synth_from.synth = r->anchor.synth;
	}
	e->synth_from.step.step_ns = e->synth_from.synth.placed_ns;
	/* as orr_estimate_trace(): with the profiler's host time, scaled from the replay */
	e->traced.step_ns = 0;
	if (have_trace && e->profiler_host_ns > 0 && base->estimated.step_ns > 0 &&
	    e->synth_from.step.step_ns > 0 && traced_from > 0) {
		e->traced.step_ns = traced_from * (s->placed_ns / e->synth_from.step.step_ns);
		orr_estimate_scale(&placed, e->traced.step_ns / s->placed_ns, &e->traced.breakdown);
	}
	e->tokens_per_s_per_gpu = r->tokens_per_s_per_gpu;
	e->mfu = r->mfu;
	e->hfu = r->hfu;
}

unsigned orr_estimate_caveats(const struct orr_estimate *e)
{
	unsigned c = 0;

	if (e->how == ORR_ESTIMATE_SYNTH && !e->costs)
		c |= ORR_CAVEAT_PEAKS;
	if ((e->cpu_op_from == ORR_LAUNCH_TRACE || e->cpu_op_from == ORR_LAUNCH_COSTS) &&
	    isnan(e->cpu_op_profiler_ns))
		c |= ORR_CAVEAT_LAUNCH_RECORDED;
	if (isfinite(e->measured_peak_bytes))
		c |= ORR_CAVEAT_RESERVE;
	else if (e->trace)
		c |= ORR_CAVEAT_NO_ALLOCATOR;
	if (e->memory_err)
		c |= ORR_CAVEAT_NO_MEMORY;
	if (e->to.sync_layers && !orr_train_syncs_layers(&e->to))
		c |= ORR_CAVEAT_SYNC_LAYERS_UNUSED;
	if (e->costs_gpu)
		c |= ORR_CAVEAT_TRANSFERRED;
	if (e->trace && e->to.hidden != e->from.hidden && e->to.ffn == e->from.ffn)
		c |= ORR_CAVEAT_FFN_KEPT;
	return c;
}

const char *orr_estimate_caveat_name(unsigned i)
{
	static const char *const names[ORR_CAVEAT_COUNT] = {
		"peaks",     "launch-as-recorded", "no-allocator",      "reserve",
		"no-memory", "sync-layers-unused", "costs-transferred", "ffn-kept",
	};

	return i < ORR_CAVEAT_COUNT ? names[i] : NULL;
}

/* SPDX-License-Identifier: MIT */
/*
 * A sweep of layouts made ready (docs/orrery-whatif.md): the space from the options and
 * the trace's recorded configuration (or a description), the inputs every configuration
 * shares (the trace's replay, the fitted costs, the recorded configuration's synthesized
 * step) made once, and the plan what-if/ evaluates; what a sweep that found nothing
 * suggests.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis-estimate.h"
#include "estimate-internal.h"
#include "banned.h"

/* One anchor a sweep met (orr_whatif_context.anchor): made, or why not. */
struct anchor_entry {
	int err;
	struct orr_whatif_anchor a;
};

/* The anchors met, made once each, shared by the sweep's threads. */
struct orr_whatif_anchors {
	pthread_mutex_t lock;
	const struct orr_whatif_job *j;
	struct orr_estimate_options o; /* the base's */
	struct anchor_entry **v;
	size_t n, cap;
};

static struct anchor_entry *find_anchor(const struct orr_whatif_anchors *c,
					const struct orr_train_config *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (orr_estimate_same_sizes(&c->v[i]->a.config, key))
			return c->v[i];
	return NULL;
}

/* The trace re-timed to key, and key synthesized: an anchor, or the error. */
static struct anchor_entry *make_anchor(const struct orr_whatif_anchors *c,
					const struct orr_train_config *key)
{
	struct anchor_entry *e = orr_xcalloc(1, sizeof(*e));
	const struct orr_whatif_job *j = c->j;
	struct orr_estimate est;
	const char *why = NULL;

	e->a.config = *key;
	e->err = orr_estimate_retime_config(&c->o, &j->b, key, &est);
	if (!e->err)
		e->err = orr_synth_time(key, j->x.forward_only, &j->x.costs, NULL, &e->a.synth,
					&why);
	if (!e->err) {
		e->a.step_ns = est.estimated.step_ns;
		e->a.traced_ns = est.traced.step_ns;
		e->a.profiler_host_ns = est.profiler_host_ns;
	}
	return e;
}

/* orr_whatif_context.anchor: made once per anchor, outside the lock. */
static int anchor_of(void *arg, const struct orr_train_config *cfg,
		     const struct orr_whatif_anchor **ret)
{
	struct orr_whatif_anchors *c = arg;
	struct orr_train_config key;
	struct anchor_entry *e, *had;

	if (!orr_estimate_anchor_config(&c->j->b, cfg, &key))
		return -ENOENT;
	pthread_mutex_lock(&c->lock);
	e = find_anchor(c, &key);
	pthread_mutex_unlock(&c->lock);
	if (!e) {
		e = make_anchor(c, &key);
		pthread_mutex_lock(&c->lock);
		if ((had = find_anchor(c, &key))) { /* another thread made it meanwhile */
			free(e);
			e = had;
		} else {
			if (c->n == c->cap) {
				c->cap = c->cap ? 2 * c->cap : 8;
				c->v = orr_xrealloc(c->v, c->cap * sizeof(*c->v));
			}
			c->v[c->n++] = e;
		}
		pthread_mutex_unlock(&c->lock);
	}
	if (e->err)
		return e->err;
	*ret = &e->a;
	return 0;
}

static void anchors_free(struct orr_whatif_anchors *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i]);
	free(c->v);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* With a trace: each configuration scaled from the trace re-timed to its sizes. */
static void anchors_init(const struct orr_estimate_options *o, struct orr_whatif_job *j)
{
	struct orr_whatif_anchors *c = orr_xcalloc(1, sizeof(*c));

	pthread_mutex_init(&c->lock, NULL);
	c->j = j;
	c->o = *o; /* orr_estimate_retime_config() writes no timeline and reports no progress */
	j->anchors = c;
	j->x.anchor = anchor_of;
	j->x.anchor_arg = c;
}

/*
 * The recorded job: its configuration (changed by the model options), its replay.  The
 * base is opened without --global-batch: each configuration's micro-batch size and DP
 * divide it (what-if/plan.c), not the recorded ones, which refused --global-batch 12 of
 * a trace of 8 sequences per micro-batch, "not a multiple of micro-batch x dp (8)".
 */
static int from_trace(const struct orr_estimate_options *o, const struct orr_graph *g, size_t ri,
		      struct orr_whatif_job *j, struct orr_diag *d)
{
	struct orr_estimate_options recorded = *o;
	struct orr_estimate_base *b = &j->b;
	const char *why = NULL;
	double base_ns;
	int err;

	recorded.global_batch = 0;
	if ((err = orr_estimate_base_open(&recorded, g, ri, b, d)))
		return err;
	j->have_trace = true;
	if ((err = orr_estimate_base_sweep(o, b, &j->x.costs, &j->replayed_ns, &base_ns, d)))
		return err;
	j->base = b->e;
	j->swept = b->e.to;
	/* the switches as recorded (what auto keeps), unless the options turn them on */
	j->swept.sequence_parallel = b->e.from.sequence_parallel;
	j->swept.distributed_optimizer = b->e.from.distributed_optimizer;
	j->swept.fully_sharded = b->e.from.fully_sharded || o->fsdp;
	j->swept.overlap_grad_reduce = b->e.from.overlap_grad_reduce || o->overlap_grad;
	j->global_batch = o->global_batch
				  ? o->global_batch
				  : b->e.from.micro_batch * b->e.from.micro_batches * b->e.from.dp;
	j->x.gpu = b->e.gpu;
	/* its memory what the trace's device reported, as orrery estimate takes it */
	if (b->e.gpu && b->e.gpu == orr_rank_gpu(g, ri)) {
		orr_rank_gpu_as_seen(g, ri, b->e.gpu, &j->gpu_seen);
		j->x.gpu = &j->gpu_seen;
	}
	j->x.forward_only = b->e.forward_only || o->forward_only;
	j->x.reserve_bytes = b->e.reserve_bytes;
	j->x.replayed_ns = base_ns; /* what each estimate is scaled from */
	err = orr_synth_time(&b->e.from, b->e.forward_only, &j->x.costs, NULL, &j->recorded, &why);
	if (err)
		return orr_diag_set(d, err, "", -1, -1,
				    "cannot synthesize the recorded configuration: %s%s%s",
				    orr_strerror(err), why ? ": " : "", why ? why : "");
	j->x.recorded_synth_ns = j->recorded.placed_ns;
	anchors_init(&recorded, j);
	return 0;
}

/* A described model: Megatron-LM's defaults, timed by the costs file or the hardware table. */
static int from_description(const struct orr_estimate_options *o, struct orr_whatif_job *j,
			    struct orr_diag *d)
{
	struct orr_retime_models m = { .gpus_per_node = (int)o->gpus_per_node };
	struct orr_estimate *e = &j->base;
	const struct orr_gpu_spec *gpu;
	int err;

	if (!o->global_batch)
		return orr_diag_set(d, -EINVAL, "", -1, -1,
				    "no trace: give the batch, --global-batch");
	if ((err = orr_estimate_description(o, &j->swept, d)))
		return err;
	if (o->costs && (err = orr__estimate_read_costs(o->costs, &j->costs, d)))
		return err;
	j->have_costs = o->costs != NULL;
	if ((j->have_costs &&
	     (err = orr_estimate_transfer_costs(o, &j->costs, &e->costs_gpu, d))) ||
	    (err = orr_estimate_pick_gpu(o, j->have_costs ? &j->costs : NULL, &gpu, d)))
		return err;
	if (j->have_costs)
		orr_estimate_models(NULL, &j->costs, (int)o->gpus_per_node, &m);
	m.nic_bytes_per_s = o->nic_gbps * 1e9 / 8;
	e->how = ORR_ESTIMATE_SYNTH;
	e->gpu = gpu;
	e->costs = o->costs;
	e->forward_only = o->forward_only;
	e->cpu_op_ns = isnan(o->launch_us) ? 0 : o->launch_us * 1e3;
	e->cpu_op_from = isnan(o->launch_us) ? ORR_LAUNCH_NONE : ORR_LAUNCH_OPTION;
	e->measured_ns = e->replayed.step_ns = NAN;
	e->measured_peak_bytes = NAN;
	orr_estimate_synth_costs(&m, gpu, NULL, j->have_costs ? &j->costs : NULL, e->cpu_op_ns,
				 &j->x.costs);
	j->x.costs.gemm_tiles = o->gemm_tiles;
	if (j->have_costs && isnan(o->launch_us) &&
	    (err = orr_estimate_calibrate_costs(o, &j->costs, &j->x.costs, e, d)))
		return err;
	j->global_batch = o->global_batch;
	j->x.gpu = gpu;
	j->x.forward_only = o->forward_only;
	j->x.replayed_ns = j->x.recorded_synth_ns = NAN;
	j->replayed_ns = NAN;
	return 0;
}

static int make_plan(const struct orr_estimate_options *o, const struct orr_whatif_options *w,
		     struct orr_whatif_job *j, struct orr_diag *d)
{
	const struct orr_gpu_spec *gpu = j->x.gpu;
	struct orr_whatif_space s = {
		.base = j->swept,
		.gpus_min = w->gpus_min,
		.gpus_max = w->gpus_max,
		.global_batch = j->global_batch,
		.recompute = w->recompute,
		.sequence_parallel = w->sp,
		.distributed_optimizer = w->distopt,
		.gpus_per_node = o->gpus_per_node         ? (int)o->gpus_per_node
				 : gpu->gpus_per_node > 0 ? gpu->gpus_per_node
							  : 8,
		.allow_cross_node_tp = w->allow_cross_node_tp,
	};
	struct orr_whatif_list *l[ORR_WHATIF_NLISTS] = {
		&s.tp, &s.pp, &s.cp, &s.vpp, &s.micro_batch, &s.first_stage, &s.last_stage
	};
	int err;

	/* without a trace, auto means on */
	if (!j->have_trace)
		s.base.sequence_parallel = s.base.distributed_optimizer = true;
	/* forward passes only: recompute changes nothing but the memory a backward needs */
	if (j->x.forward_only && !w->recompute)
		s.recompute = 1u << ORR_RECOMPUTE_NONE;
	for (int i = 0; i < ORR_WHATIF_NLISTS; i++)
		*l[i] = w->list[i];
	err = orr_whatif_plan_new(&s, &j->plan);
	if (err == -E2BIG)
		return orr_diag_set(
			d, err, "", -1, -1,
			"--gpus %lld-%lld: too many GPU counts to sweep with these "
			"lists; give a narrower range or fewer --tp, --pp or --cp values",
			(long long)w->gpus_min, (long long)w->gpus_max);
	if (err)
		return orr_diag_set(
			d, err, "", -1, -1,
			"cannot sweep this space: %s (a global batch, GPU count or "
			"model size below 1, hidden not a multiple of heads, or too many "
			"configurations)",
			orr_strerror(err));
	j->considered = orr_whatif_plan_count(j->plan);
	return 0;
}

int orr_whatif_job_open(const struct orr_estimate_options *o, const struct orr_whatif_options *w,
			const struct orr_graph *g, size_t ri, struct orr_whatif_job *j,
			struct orr_diag *d)
{
	int err;

	orr_diag_clear(d);
	memset(j, 0, sizeof(*j));
	j->replayed_ns = NAN;
	err = g ? from_trace(o, g, ri, j, d) : from_description(o, j, d);
	if (!err)
		err = make_plan(o, w, j, d);
	return err;
}

void orr_whatif_job_close(struct orr_whatif_job *j)
{
	if (j->have_trace)
		orr_estimate_base_close(&j->b);
	if (j->have_costs)
		orr_costs_release(&j->costs);
	orr_whatif_plan_free(j->plan);
	anchors_free(j->anchors);
	memset(j, 0, sizeof(*j));
}

uint64_t orr_whatif_job_tally(const struct orr_whatif_job *j, enum orr_whatif_rank by, size_t top,
			      struct orr_whatif_tally *ret)
{
	uint64_t i = j->have_trace ? orr_whatif_find(j->plan, &j->base.from) : UINT64_MAX;
	struct orr_whatif_result r;

	if (i != UINT64_MAX && orr_whatif_eval(j->plan, &j->x, i, NULL, &r) == 0) {
		orr_whatif_tally_init(ret, by, top, &r);
		return i;
	}
	orr_whatif_tally_init(ret, by, top, NULL);
	return UINT64_MAX;
}

/* The number a refusal's suggestion names. */
static int64_t hint_value(const struct orr_whatif_job *j, const struct orr_whatif_options *w,
			  enum orr_whatif_why k)
{
	switch (k) {
	case ORR_WHATIF_HEADS:
		return j->swept.heads;
	case ORR_WHATIF_LAYERS:
		return j->swept.layers;
	case ORR_WHATIF_SEQUENCE:
		return j->swept.seq;
	case ORR_WHATIF_BATCH:
		return j->global_batch;
	case ORR_WHATIF_MEMORY:
		return w->gpus_max;
	default:
		return 0;
	}
}

/* What shards or frees memory that the sweep did not try. */
static unsigned memory_tries(const struct orr_whatif_job *j, const struct orr_whatif_options *w)
{
	unsigned t = ORR_WHATIF_TRY_GPUS;

	if (!j->swept.fully_sharded)
		t |= ORR_WHATIF_TRY_FSDP;
	if (!j->swept.fully_sharded && w->distopt == 0)
		t |= ORR_WHATIF_TRY_DISTOPT;
	if (w->recompute && !(w->recompute & (1u << ORR_RECOMPUTE_FULL)))
		t |= ORR_WHATIF_TRY_RECOMPUTE;
	return t;
}

size_t orr_whatif_hints(const struct orr_whatif_job *j, const struct orr_whatif_options *w,
			const struct orr_whatif_tally *t,
			struct orr_whatif_hint v[ORR_WHATIF_WHY_COUNT])
{
	bool done[ORR_WHATIF_WHY_COUNT] = { false };
	size_t n = 0;

	for (int i = ORR_WHATIF_HEADS; i < ORR_WHATIF_WHY_COUNT; i++) {
		int k = 0;

		for (int m = ORR_WHATIF_HEADS; m < ORR_WHATIF_WHY_COUNT; m++)
			if (!done[m] && t->count[m] && (!k || t->count[m] > t->count[k]))
				k = m;
		if (!k)
			break;
		done[k] = true;
		v[n++] = (struct orr_whatif_hint){
			.why = (enum orr_whatif_why)k,
			.count = t->count[k],
			.value = hint_value(j, w, (enum orr_whatif_why)k),
			.tries = k == ORR_WHATIF_MEMORY ? memory_tries(j, w) : 0,
		};
		orr_whatif_plan_example(j->plan, (enum orr_whatif_why)k, v[n - 1].example,
					sizeof(v[n - 1].example));
	}
	return n;
}

/* SPDX-License-Identifier: MIT */
/*
 * What-if digests (what-if/digest.c): every field of the space, the context and its
 * fitted models that changes an estimate changes its part of the digest, and nothing else does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/whatif.h"
#include "whatif-test.h"

/* Fitted models for a digest's context: a GEMM class, a kernel family, an all-reduce band. */
struct models {
	struct orr_gemm_class cls;
	struct orr_gemm_model gemm;
	struct orr_kern_family fam;
	struct orr_kern_model kern;
	struct orr_coll_model coll;
};

static void models_init(struct models *m)
{
	memset(m, 0, sizeof(*m));
	m->cls = (struct orr_gemm_class){ .dtype = ORR_DTYPE_BF16,
					  .how = ORR_GEMM_FIT,
					  .fit = { .nparams = 3, .coef = { 1000, 1e-9, 2e-9 } } };
	snprintf(m->cls.family, sizeof(m->cls.family), "sm80_xmma_gemm");
	m->gemm.classes = &m->cls;
	m->gemm.nclasses = 1;
	m->gemm.efficiency_all = (struct orr_gemm_efficiency){ .median = 0.6, .samples = 10 };
	m->fam = (struct orr_kern_family){ .dtype = ORR_DTYPE_BF16,
					   .how = ORR_GEMM_FIT,
					   .fit = { .nparams = 2, .coef = { 2000, 3e-9 } } };
	snprintf(m->fam.name, sizeof(m->fam.name), "elementwise");
	m->kern.families = &m->fam;
	m->kern.nfamilies = 1;
	m->kern.floor_ns = 2500;
	m->coll = (struct orr_coll_model){ .kind = ORR_COLL_ALL_REDUCE,
					   .nbands = 1,
					   .constrained = true };
	m->coll.bands[0] = (struct orr_coll_band){
		.lo_bytes = 1024, .hi_bytes = 1 << 20, .alpha_ns = 8000, .bus_bytes_per_s = 1e11
	};
}

static void with_models(struct orr_whatif_context *x, struct models *m)
{
	x->costs.m.gemm = &m->gemm;
	x->costs.m.kern = &m->kern;
	x->costs.m.coll[ORR_COLL_ALL_REDUCE][ORR_LINK_NODE] = &m->coll;
}

static struct orr_whatif_digest digest(const struct orr_whatif_space *s,
				       const struct orr_whatif_context *x)
{
	struct orr_whatif_plan *p = plan(s);
	struct orr_whatif_digest d;

	orr_whatif_digest(p, x, &d);
	orr_whatif_plan_free(p);
	return d;
}

/*
 * Change number i of one field of the space, the context or its models; the part of the
 * digest it belongs to, or -1 past the last change.
 */
static int change(int i, struct orr_whatif_space *s, struct orr_whatif_context *x, struct models *m)
{
	static const int64_t two[] = { 2 }, four[] = { 4 }, zero_one[] = { 0, 1 };
	struct orr_train_config *c = &s->base;

	switch (i) {
	case 0:
		c->layers = 16;
		return ORR_WHATIF_DIGEST_MODEL;
	case 1:
		c->hidden = 2048;
		return ORR_WHATIF_DIGEST_MODEL;
	case 2:
		c->heads = 32;
		c->kv_groups = 32;
		return ORR_WHATIF_DIGEST_MODEL;
	case 3:
		c->kv_groups = 8;
		return ORR_WHATIF_DIGEST_MODEL;
	case 4:
		c->ffn = 2048;
		return ORR_WHATIF_DIGEST_MODEL;
	case 5:
		c->vocab = 32000;
		return ORR_WHATIF_DIGEST_MODEL;
	case 6:
		c->seq = 2048;
		return ORR_WHATIF_DIGEST_MODEL;
	case 7:
		c->gated_mlp = true;
		return ORR_WHATIF_DIGEST_MODEL;
	case 8:
		c->flash_attention = false;
		return ORR_WHATIF_DIGEST_MODEL;
	case 9:
		c->untied_embeddings = true;
		return ORR_WHATIF_DIGEST_MODEL;
	case 10:
		c->precision = ORR_DTYPE_FP16;
		return ORR_WHATIF_DIGEST_MODEL;
	case 11:
		c->sequence_parallel = false;
		return ORR_WHATIF_DIGEST_MODEL;
	case 12:
		c->distributed_optimizer = false;
		return ORR_WHATIF_DIGEST_MODEL;
	case 13:
		c->fully_sharded = true;
		return ORR_WHATIF_DIGEST_MODEL;
	case 14:
		c->overlap_grad_reduce = true;
		return ORR_WHATIF_DIGEST_MODEL;
	case 15:
		c->recompute = ORR_RECOMPUTE_FULL;
		return ORR_WHATIF_DIGEST_MODEL;
	case 16:
		s->gpus_max = 16;
		return ORR_WHATIF_DIGEST_BUDGET;
	case 17:
		s->gpus_min = 4;
		return ORR_WHATIF_DIGEST_BUDGET;
	case 18:
		s->global_batch = 32;
		return ORR_WHATIF_DIGEST_SPACE;
	case 19:
		s->tp = (struct orr_whatif_list){ two, 1 };
		return ORR_WHATIF_DIGEST_SPACE;
	case 20:
		s->pp = (struct orr_whatif_list){ two, 1 };
		return ORR_WHATIF_DIGEST_SPACE;
	case 21:
		s->cp = (struct orr_whatif_list){ two, 1 };
		return ORR_WHATIF_DIGEST_SPACE;
	case 22:
		s->vpp = (struct orr_whatif_list){ two, 1 };
		return ORR_WHATIF_DIGEST_SPACE;
	case 23:
		s->micro_batch = (struct orr_whatif_list){ four, 1 };
		return ORR_WHATIF_DIGEST_SPACE;
	case 24:
		s->first_stage = (struct orr_whatif_list){ zero_one, 2 };
		return ORR_WHATIF_DIGEST_SPACE;
	case 25:
		s->last_stage = (struct orr_whatif_list){ zero_one, 2 };
		return ORR_WHATIF_DIGEST_SPACE;
	case 26:
		s->recompute = 1u << ORR_RECOMPUTE_NONE;
		return ORR_WHATIF_DIGEST_SPACE;
	case 27:
		s->sequence_parallel = 1;
		return ORR_WHATIF_DIGEST_SPACE;
	case 28:
		s->distributed_optimizer = 0;
		return ORR_WHATIF_DIGEST_SPACE;
	case 29:
		s->gpus_per_node = 4;
		return ORR_WHATIF_DIGEST_SPACE;
	case 30:
		s->allow_cross_node_tp = true;
		return ORR_WHATIF_DIGEST_SPACE;
	case 31:
		x->gpu = orr_gpu_spec_by_id("h100-sxm");
		return ORR_WHATIF_DIGEST_GPU;
	case 32:
		x->forward_only = true;
		return ORR_WHATIF_DIGEST_GPU;
	case 33:
		x->reserve_bytes = 1 << 30;
		return ORR_WHATIF_DIGEST_GPU;
	case 34:
		x->costs.gpu = orr_gpu_spec_by_id("h100-sxm");
		return ORR_WHATIF_DIGEST_COSTS;
	case 35:
		x->costs.cpu_op_ns = 6000;
		return ORR_WHATIF_DIGEST_COSTS;
	case 36:
		x->costs.m.gpus_per_node = 4;
		return ORR_WHATIF_DIGEST_COSTS;
	case 37:
		x->costs.bus_bytes_per_s[ORR_COLL_ALL_GATHER][ORR_LINK_NETWORK] = 2e10;
		return ORR_WHATIF_DIGEST_COSTS;
	case 38:
		m->cls.fit.coef[1] = 1.5e-9;
		return ORR_WHATIF_DIGEST_COSTS;
	case 39:
		m->cls.family[0] = 'S';
		return ORR_WHATIF_DIGEST_COSTS;
	case 40:
		m->cls.how = ORR_GEMM_ROOFLINE;
		return ORR_WHATIF_DIGEST_COSTS;
	case 41:
		m->gemm.efficiency_all.median = 0.5;
		return ORR_WHATIF_DIGEST_COSTS;
	case 42:
		m->gemm.efficiency[ORR_DTYPE_BF16].samples = 3;
		return ORR_WHATIF_DIGEST_COSTS;
	case 43:
		m->gemm.gpu = x->gpu;
		return ORR_WHATIF_DIGEST_COSTS;
	case 44:
		x->costs.m.gemm = NULL;
		return ORR_WHATIF_DIGEST_COSTS;
	case 45:
		m->kern.floor_ns = 3000;
		return ORR_WHATIF_DIGEST_COSTS;
	case 46:
		m->fam.fit.coef[0] = 2100;
		return ORR_WHATIF_DIGEST_COSTS;
	case 47:
		m->fam.name[0] = 'E';
		return ORR_WHATIF_DIGEST_COSTS;
	case 48:
		m->kern.pooled[1].coef[0] = 1;
		return ORR_WHATIF_DIGEST_COSTS;
	case 49:
		x->costs.m.kern = NULL;
		return ORR_WHATIF_DIGEST_COSTS;
	case 50:
		m->coll.bands[0].alpha_ns = 9000;
		return ORR_WHATIF_DIGEST_COSTS;
	case 51:
		m->coll.bands[0].bus_bytes_per_s = 2e11;
		return ORR_WHATIF_DIGEST_COSTS;
	case 52:
		m->coll.per_rank_latency = true;
		return ORR_WHATIF_DIGEST_COSTS;
	case 53:
		x->costs.m.coll[ORR_COLL_ALL_REDUCE][ORR_LINK_NETWORK] = &m->coll;
		return ORR_WHATIF_DIGEST_COSTS;
	case 54:
		x->replayed_ns = 1e9;
		return ORR_WHATIF_DIGEST_TRACE;
	case 55:
		x->recorded_synth_ns = 2e9;
		return ORR_WHATIF_DIGEST_TRACE;
	case 56: /* --nic-gbps */
		x->costs.m.nic_bytes_per_s = 12.5e9;
		return ORR_WHATIF_DIGEST_COSTS;
	case 57: /* the batched bandwidth-bound GEMMs' fallback (79a8962) */
		m->gemm.efficiency_memory[ORR_DTYPE_BF16] =
			(struct orr_gemm_efficiency){ .median = 1.2, .samples = 2 };
		return ORR_WHATIF_DIGEST_COSTS;
	case 58: /* --gemm-model tiles' fit */
		m->gemm.tiles.ns_per_ns[ORR_DTYPE_BF16] = 1.1;
		return ORR_WHATIF_DIGEST_COSTS;
	case 59: /* --p2p-scatter-gather (f881457) */
		c->scatter_gather_p2p = true;
		return ORR_WHATIF_DIGEST_MODEL;
	case 60: /* --sync-timers (3a1233a) */
		c->sync_timers = true;
		return ORR_WHATIF_DIGEST_MODEL;
	case 61: /* --sync-layers */
		c->sync_layers = true;
		return ORR_WHATIF_DIGEST_MODEL;
	default:
		return -1;
	}
}

/*
 * Equal inputs give equal digests, wherever they are; each field changed changes its
 * part, the first that differs.
 */
static void test_digest(void **state)
{
	struct orr_whatif_space s = space();
	struct orr_whatif_context x = context();
	struct models a, b;
	struct orr_whatif_digest d0, d;
	int part, i;

	(void)state;
	assert_string_equal(orr_whatif_digest_part_name(ORR_WHATIF_DIGEST_BUDGET), "GPU budget");
	assert_null(orr_whatif_digest_part_name(ORR_WHATIF_DIGEST_PARTS));
	models_init(&a);
	with_models(&x, &a);
	d0 = digest(&s, &x);
	/* the same values elsewhere in memory, another plan, 0 as -0 and another NaN */
	models_init(&b);
	with_models(&x, &b);
	b.kern.efficiency[0].median = -0.0;
	x.replayed_ns = -NAN;
	d = digest(&s, &x);
	assert_int_equal(orr_whatif_digest_diff(&d0, &d), ORR_WHATIF_DIGEST_PARTS);
	assert_memory_equal(&d0, &d, sizeof(d));
	for (i = 0;; i++) {
		struct orr_whatif_space s1 = space();
		struct orr_whatif_context x1 = context();
		struct models m;

		models_init(&m);
		with_models(&x1, &m);
		if ((part = change(i, &s1, &x1, &m)) < 0)
			break;
		d = digest(&s1, &x1);
		print_message("change %d: part %s\n", i, orr_whatif_digest_part_name(part));
		assert_int_equal(orr_whatif_digest_diff(&d0, &d), part);
		assert_true(d.part[part] != d0.part[part]);
		/*
		 * the plan's parts do not move with the context, nor the context's with the
		 * plan or one another (a model's size does change the lists made from it)
		 */
		for (int k = part + 1; k < ORR_WHATIF_DIGEST_PARTS; k++)
			if (part >= ORR_WHATIF_DIGEST_GPU || k >= ORR_WHATIF_DIGEST_GPU)
				assert_true(d.part[k] == d0.part[k]);
	}
	assert_int_equal(i, 62);
}

/*
 * --sync-layers acts only with full recompute: a sweep that tries no full recompute
 * models none, so its digest is that of the same sweep without it and its rows say
 * sync_layers false; with full recompute among those tried, only those rows sync.
 */
static void test_digest_sync_layers(void **state)
{
	struct orr_whatif_space s = space(), t;
	struct orr_whatif_context x = context();
	struct orr_whatif_digest d0, d;
	struct orr_whatif_plan *p;
	struct orr_train_config c;
	bool full = false, other = false;

	(void)state;
	s.recompute = (1u << ORR_RECOMPUTE_NONE) | (1u << ORR_RECOMPUTE_SELECTIVE);
	t = s;
	t.base.sync_layers = true;
	d0 = digest(&s, &x);
	d = digest(&t, &x);
	assert_int_equal(orr_whatif_digest_diff(&d0, &d), ORR_WHATIF_DIGEST_PARTS);
	p = plan(&t);
	assert_false(orr_whatif_plan_syncs_layers(p));
	for (uint64_t i = 0; i < orr_whatif_plan_count(p); i++)
		if (orr_whatif_config(p, i, &c) != ORR_WHATIF_WHY_COUNT)
			assert_false(c.sync_layers);
	orr_whatif_plan_free(p);
	/* every recompute mode: the full ones synchronize, the digest moves */
	t.recompute = 0;
	s.recompute = 0;
	d0 = digest(&s, &x);
	d = digest(&t, &x);
	assert_int_equal(orr_whatif_digest_diff(&d0, &d), ORR_WHATIF_DIGEST_MODEL);
	p = plan(&t);
	assert_true(orr_whatif_plan_syncs_layers(p));
	for (uint64_t i = 0; i < orr_whatif_plan_count(p); i++) {
		if (orr_whatif_config(p, i, &c) == ORR_WHATIF_WHY_COUNT)
			continue;
		assert_true(c.sync_layers == (c.recompute == ORR_RECOMPUTE_FULL));
		full |= c.sync_layers;
		other |= !c.sync_layers;
	}
	assert_true(full && other);
	orr_whatif_plan_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digest),
		cmocka_unit_test(test_digest_sync_layers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

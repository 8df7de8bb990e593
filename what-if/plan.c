/* SPDX-License-Identifier: MIT */
/*
 * The configurations of a sweep (docs/orrery-whatif.md, "What is enumerated"): the
 * space's lists, the defaults where none is given, and configuration i decoded from its
 * number, with the checks Megatron-LM makes when it starts (megatron/training/
 * arguments.py) named one by one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

#define MAX_CONFIGS  (UINT64_C(1) << 40)
#define MAX_PREFIXES ((size_t)1 << 22) /* GPU counts x TP x PP x CP kept: 128 MiB */

static const char *const why_names[ORR_WHATIF_WHY_COUNT] = {
	[ORR_WHATIF_FEASIBLE] = "feasible",        [ORR_WHATIF_HEADS] = "heads",
	[ORR_WHATIF_CROSS_NODE] = "cross-node-tp", [ORR_WHATIF_LAYERS] = "layers",
	[ORR_WHATIF_SEQUENCE] = "sequence",        [ORR_WHATIF_BATCH] = "batch",
	[ORR_WHATIF_INTERLEAVE] = "interleave",    [ORR_WHATIF_MEMORY] = "memory",
	[ORR_WHATIF_REFUSED] = "refused",
};

const char *orr_whatif_why_name(enum orr_whatif_why w)
{
	return (unsigned)w < ORR_WHATIF_WHY_COUNT ? why_names[w] : NULL;
}

static void push(struct wi_list *l, int64_t v)
{
	l->v = orr_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = v;
}

static int given(struct wi_list *l, const struct orr_whatif_list *g, int64_t least)
{
	for (size_t i = 0; i < g->n; i++) {
		if (g->v[i] < least)
			return -EINVAL;
		push(l, g->v[i]);
	}
	return 0;
}

/*
 * The divisors of n in increasing order, found up to its square root (each small one d
 * gives n / d): n is a global batch, which a trace's world size makes as large as 2^31
 * times its micro-batches (a loop up to n took minutes).
 */
static void divisors(struct wi_list *l, int64_t n)
{
	size_t first = l->n;

	for (int64_t d = 1; d <= n / d; d++)
		if (n % d == 0)
			push(l, d);
	for (size_t i = l->n; i-- > first;)
		if (l->v[i] != n / l->v[i])
			push(l, n / l->v[i]);
}

/*
 * The lists: as given, else TP the powers of two up to the heads, PP the divisors of
 * the layers, CP 1, VPP the divisors of the layers, micro-batch those of the batch, the
 * first and last stage's layers 0 (an even split).
 */
static int lists(struct orr_whatif_plan *p)
{
	const struct orr_whatif_space *s = &p->s;
	int err = 0;

	if (s->tp.n)
		err |= given(&p->tp, &s->tp, 1);
	else
		for (int64_t t = 1; t <= s->base.heads; t *= 2)
			push(&p->tp, t);
	if (s->pp.n)
		err |= given(&p->pp, &s->pp, 1);
	else
		divisors(&p->pp, s->base.layers);
	if (s->cp.n)
		err |= given(&p->cp, &s->cp, 1);
	else
		push(&p->cp, 1);
	if (s->vpp.n)
		err |= given(&p->vpp, &s->vpp, 1);
	else
		divisors(&p->vpp, s->base.layers);
	if (s->micro_batch.n)
		err |= given(&p->mb, &s->micro_batch, 1);
	else
		divisors(&p->mb, s->global_batch);
	if (s->first_stage.n)
		err |= given(&p->first, &s->first_stage, 0);
	else
		push(&p->first, 0);
	if (s->last_stage.n)
		err |= given(&p->last, &s->last_stage, 0);
	else
		push(&p->last, 0);
	p->vpp.all = !s->vpp.n;
	p->mb.all = !s->micro_batch.n;
	for (int r = 0; r < ORR_RECOMPUTE_COUNT; r++)
		if (!s->recompute || (s->recompute & (1u << r)))
			p->rec[p->nrec++] = (enum orr_recompute)r;
	return err ? -EINVAL : 0;
}

/* Every GPU count's TP, PP and CP whose product divides it. */
static int prefixes(struct orr_whatif_plan *p)
{
	for (int64_t g = p->s.gpus_min; g <= p->s.gpus_max; g++)
		for (size_t a = 0; a < p->tp.n; a++)
			for (size_t b = 0; b < p->pp.n; b++)
				for (size_t c = 0; c < p->cp.n; c++) {
					int64_t t = p->tp.v[a], q = p->pp.v[b], k = p->cp.v[c];

					if (t > g || q > g / t || k > g / t / q || g % (t * q * k))
						continue;
					if (p->nprefix >= MAX_PREFIXES)
						return -E2BIG;
					ORR_VEC_PUSH(p->prefix, p->nprefix, p->cap_prefix,
						     ((struct wi_prefix){ g, t, q, k }));
				}
	return 0;
}

static bool space_valid(const struct orr_whatif_space *s)
{
	const struct orr_train_config *c = &s->base;

	return s->gpus_min >= 1 && s->gpus_max >= s->gpus_min && s->global_batch >= 1 &&
	       s->gpus_per_node >= 1 && c->layers >= 1 && c->hidden >= 1 && c->heads >= 1 &&
	       c->ffn >= 1 && c->vocab >= 1 && c->seq >= 1 && c->hidden % c->heads == 0 &&
	       (!c->kv_groups || c->heads % c->kv_groups == 0) &&
	       s->gpus_max - s->gpus_min < (int64_t)MAX_CONFIGS;
}

int orr_whatif_plan_new(const struct orr_whatif_space *s, struct orr_whatif_plan **ret)
{
	struct orr_whatif_plan *p;
	int err;

	if (!space_valid(s))
		return -EINVAL;
	p = orr_xcalloc(1, sizeof(*p));
	p->s = *s;
	err = lists(p);
	if (!err)
		err = prefixes(p);
	if (!p->nrec) /* no recompute mode among the bits */
		err = -EINVAL;
	p->inner = (uint64_t)p->vpp.n * p->mb.n * (p->nrec ? p->nrec : 1);
	/* each list is at most an argument's length: the products stay far from 2^64 */
	if (!err && p->first.n * p->last.n > MAX_CONFIGS / p->inner)
		err = -EINVAL;
	p->inner *= p->first.n * p->last.n;
	if (!err && p->nprefix && p->inner > MAX_CONFIGS / p->nprefix)
		err = -EINVAL;
	if (err) {
		orr_whatif_plan_free(p);
		return err;
	}
	p->count = p->inner * p->nprefix;
	p->s.tp = (struct orr_whatif_list){ p->tp.v, p->tp.n };
	p->s.pp = (struct orr_whatif_list){ p->pp.v, p->pp.n };
	p->s.cp = (struct orr_whatif_list){ p->cp.v, p->cp.n };
	p->s.vpp = (struct orr_whatif_list){ p->vpp.v, p->vpp.n };
	p->s.micro_batch = (struct orr_whatif_list){ p->mb.v, p->mb.n };
	p->s.first_stage = (struct orr_whatif_list){ p->first.v, p->first.n };
	p->s.last_stage = (struct orr_whatif_list){ p->last.v, p->last.n };
	*ret = p;
	return 0;
}

void orr_whatif_plan_free(struct orr_whatif_plan *p)
{
	if (!p)
		return;
	free(p->tp.v);
	free(p->pp.v);
	free(p->cp.v);
	free(p->vpp.v);
	free(p->mb.v);
	free(p->first.v);
	free(p->last.v);
	free(p->prefix);
	free(p);
}

uint64_t orr_whatif_plan_count(const struct orr_whatif_plan *p)
{
	return p->count;
}

/* A switch: on, off, or as the base has it where it means something. */
static bool flag(int want, bool base, bool applies)
{
	return applies && (want == ORR_WHATIF_AUTO ? base : want != 0);
}

/*
 * Megatron's checks (orr_train_check_layout(), the ones `orrery estimate` names) and
 * the sweep's own, a node's TP and the global batch, in the order Megatron makes them.
 */
static enum orr_whatif_why check(const struct orr_whatif_plan *p, const struct orr_train_config *c)
{
	enum orr_train_flaw f = orr_train_check_layout(c, NULL, 0);

	if (f == ORR_TRAIN_HEADS)
		return ORR_WHATIF_HEADS;
	if (!p->s.allow_cross_node_tp && c->tp > p->s.gpus_per_node)
		return ORR_WHATIF_CROSS_NODE;
	if (f == ORR_TRAIN_LAYERS)
		return ORR_WHATIF_LAYERS;
	if (f == ORR_TRAIN_SEQUENCE)
		return ORR_WHATIF_SEQUENCE;
	if (p->s.global_batch % (c->dp * c->micro_batch))
		return ORR_WHATIF_BATCH;
	if (f == ORR_TRAIN_INTERLEAVE)
		return ORR_WHATIF_INTERLEAVE;
	return ORR_WHATIF_FEASIBLE;
}

enum orr_whatif_why orr_whatif_config(const struct orr_whatif_plan *p, uint64_t i,
				      struct orr_train_config *ret)
{
	const struct orr_train_config *b = &p->s.base;
	const struct wi_prefix *x;
	struct orr_train_config c = *b;
	uint64_t k;
	int64_t vpp, mb, first, last;

	if (i >= p->count)
		return ORR_WHATIF_WHY_COUNT;
	x = &p->prefix[i / p->inner];
	k = i % p->inner;
	c.recompute = p->rec[k % p->nrec];
	k /= p->nrec;
	mb = p->mb.v[k % p->mb.n];
	k /= p->mb.n;
	last = p->last.v[k % p->last.n];
	k /= p->last.n;
	first = p->first.v[k % p->first.n];
	vpp = p->vpp.v[k / p->first.n];
	c.tp = x->tp;
	c.pp = x->pp;
	c.cp = x->cp;
	c.dp = x->gpus / (x->tp * x->pp * x->cp);
	c.vpp = vpp;
	c.first_stage_layers = first;
	c.last_stage_layers = last;
	c.micro_batch = mb;
	/* 0 when the batch does not divide (ORR_WHATIF_BATCH below) */
	c.micro_batches = p->s.global_batch % (c.dp * mb) ? 0 : p->s.global_batch / (c.dp * mb);
	c.vocab = orr_train_pad_vocab(b->vocab, c.tp);
	c.sequence_parallel = flag(p->s.sequence_parallel, b->sequence_parallel, c.tp > 1);
	c.distributed_optimizer =
		flag(p->s.distributed_optimizer, b->distributed_optimizer, c.dp * c.cp > 1) ||
		(b->fully_sharded && c.dp * c.cp > 1);
	c.fully_sharded = b->fully_sharded && c.dp * c.cp > 1;
	c.overlap_grad_reduce = b->overlap_grad_reduce && c.dp * c.cp > 1;
	/* layers synchronize only where they are checkpointed: the rows say what is modeled */
	c.sync_layers = orr_train_syncs_layers(&c);
	*ret = c;
	/*
	 * A default list's value that does not divide is no configuration; but a PP that
	 * does not divide the layers, or a DP that does not divide the batch, keeps its
	 * first (VPP 1, micro-batch 1), to be refused with the reason.
	 */
	if (p->vpp.all && (orr_train_uneven(&c) ? vpp != 1
			   : c.layers % c.pp    ? vpp != 1
						: (c.layers / c.pp) % vpp || (vpp > 1 && c.pp < 2)))
		return ORR_WHATIF_WHY_COUNT;
	/* one stage has no first and last to give layers to */
	if (c.pp < 2 && orr_train_uneven(&c))
		return ORR_WHATIF_WHY_COUNT;
	if (p->mb.all && (p->s.global_batch % c.dp ? mb != 1 : p->s.global_batch % (c.dp * mb)))
		return ORR_WHATIF_WHY_COUNT;
	return check(p, &c);
}

bool orr_whatif_plan_syncs_layers(const struct orr_whatif_plan *p)
{
	for (size_t i = 0; p->s.base.sync_layers && i < p->nrec; i++)
		if (p->rec[i] == ORR_RECOMPUTE_FULL)
			return true;
	return false;
}

static size_t position(const int64_t *v, size_t n, int64_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return i;
	return SIZE_MAX;
}

/* Whether two configurations are one job: model, layout, micro-batching, switches. */
static bool same_job(const struct orr_train_config *a, const struct orr_train_config *b)
{
	return a->layers == b->layers && a->hidden == b->hidden && a->heads == b->heads &&
	       a->kv_groups == b->kv_groups && a->ffn == b->ffn && a->seq == b->seq &&
	       a->precision == b->precision && a->flash_attention == b->flash_attention &&
	       a->tp == b->tp && a->pp == b->pp && a->dp == b->dp && a->cp == b->cp &&
	       a->vpp == b->vpp && a->first_stage_layers == b->first_stage_layers &&
	       a->last_stage_layers == b->last_stage_layers && a->micro_batch == b->micro_batch &&
	       a->micro_batches == b->micro_batches && a->recompute == b->recompute &&
	       a->sequence_parallel == b->sequence_parallel &&
	       a->distributed_optimizer == b->distributed_optimizer;
}

uint64_t orr_whatif_find(const struct orr_whatif_plan *p, const struct orr_train_config *c)
{
	int64_t gpus = c->tp * c->pp * c->dp * c->cp;
	size_t v = position(p->vpp.v, p->vpp.n, c->vpp);
	size_t f = position(p->first.v, p->first.n, c->first_stage_layers);
	size_t l = position(p->last.v, p->last.n, c->last_stage_layers);
	size_t m = position(p->mb.v, p->mb.n, c->micro_batch);
	size_t r = SIZE_MAX;
	struct orr_train_config d;

	for (size_t i = 0; i < p->nrec; i++)
		if (p->rec[i] == c->recompute)
			r = i;
	if (v == SIZE_MAX || f == SIZE_MAX || l == SIZE_MAX || m == SIZE_MAX || r == SIZE_MAX)
		return UINT64_MAX;
	for (size_t k = 0; k < p->nprefix; k++) {
		const struct wi_prefix *x = &p->prefix[k];
		uint64_t i;

		if (x->gpus != gpus || x->tp != c->tp || x->pp != c->pp || x->cp != c->cp)
			continue;
		i = k * p->inner +
		    ((((uint64_t)v * p->first.n + f) * p->last.n + l) * p->mb.n + m) * p->nrec + r;
		if (orr_whatif_config(p, i, &d) != ORR_WHATIF_WHY_COUNT && same_job(c, &d))
			return i;
		return UINT64_MAX;
	}
	return UINT64_MAX;
}

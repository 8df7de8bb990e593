/* SPDX-License-Identifier: MIT */
/*
 * A sweep's definition as a digest (docs/orrery-whatif.md, "Threads and MPI"): the
 * processes of a sweep under mpirun each make their plan and context from their own
 * options and files, and compare digests before they sweep, so that one that was given
 * another model, budget, costs file or trace is refused rather than merged.
 *
 * The digest is over values, never over memory: FNV-1a, 64 bits, over each field in a
 * fixed order and byte order (so that padding, pointers and the host's layout play no
 * part), doubles by their bits with every NaN one value and -0 as 0, strings with their
 * length.  A fitted model is hashed by what its predictions read (the fits, the
 * efficiencies, the floor, the bands), not by its leave-out tables, which a costs file
 * does not carry and no estimate reads.  One part per kind of input, so that a
 * mismatch can be named.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME  UINT64_C(0x100000001b3)

static const char *const part_names[ORR_WHATIF_DIGEST_PARTS] = {
	[ORR_WHATIF_DIGEST_MODEL] = "model",
	[ORR_WHATIF_DIGEST_BUDGET] = "GPU budget",
	[ORR_WHATIF_DIGEST_SPACE] = "space of layouts",
	[ORR_WHATIF_DIGEST_GPU] = "GPU",
	[ORR_WHATIF_DIGEST_COSTS] = "cost model",
	[ORR_WHATIF_DIGEST_TRACE] = "trace",
};

const char *orr_whatif_digest_part_name(enum orr_whatif_digest_part d)
{
	return (unsigned)d < ORR_WHATIF_DIGEST_PARTS ? part_names[d] : NULL;
}

static void h_u64(uint64_t *h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		*h ^= (v >> (8 * i)) & 0xff;
		*h *= FNV_PRIME;
	}
}

static void h_i64(uint64_t *h, int64_t v)
{
	h_u64(h, (uint64_t)v);
}

static void h_f64(uint64_t *h, double v)
{
	uint64_t bits;

	if (isnan(v))
		v = NAN;
	else if (v == 0)
		v = 0; /* -0 == 0 */
	memcpy(&bits, &v, sizeof(bits));
	h_u64(h, bits);
}

/* NULL is not "": a length of UINT64_MAX stands for it. */
static void h_str(uint64_t *h, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	h_u64(h, s ? (uint64_t)n : UINT64_MAX);
	for (size_t i = 0; i < n; i++) {
		*h ^= (unsigned char)s[i];
		*h *= FNV_PRIME;
	}
}

/* c, with sync_layers as the sweep models it (syncs_layers: see the plan's) */
static void h_config(uint64_t *h, const struct orr_train_config *c, bool syncs_layers)
{
	const int64_t v[] = { c->layers,
			      c->hidden,
			      c->heads,
			      c->kv_groups,
			      c->ffn,
			      c->vocab,
			      c->seq,
			      c->micro_batch,
			      c->micro_batches,
			      c->tp,
			      c->pp,
			      c->dp,
			      c->cp,
			      c->vpp,
			      c->first_stage_layers,
			      c->last_stage_layers };
	const bool b[] = { c->gated_mlp,         c->sequence_parallel,   c->distributed_optimizer,
			   c->fully_sharded,     c->overlap_grad_reduce, c->flash_attention,
			   c->untied_embeddings, c->scatter_gather_p2p,  c->sync_timers,
			   syncs_layers };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		h_i64(h, v[i]);
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		h_u64(h, b[i]);
	h_u64(h, c->rms_norm);
	h_u64(h, c->rope);
	h_i64(h, c->recompute);
	h_i64(h, c->precision);
}

static void h_list(uint64_t *h, const struct wi_list *l)
{
	h_u64(h, l->n);
	for (size_t i = 0; i < l->n; i++)
		h_i64(h, l->v[i]);
	h_u64(h, l->all);
}

static void h_gpu(uint64_t *h, const struct orr_gpu_spec *g)
{
	h_u64(h, g != NULL);
	if (!g)
		return;
	h_str(h, g->id);
	for (int i = 0; i < ORR_DTYPE_COUNT; i++)
		h_f64(h, g->peak_flops[i]);
	h_f64(h, g->hbm_bytes_per_s);
	h_f64(h, g->hbm_bytes);
	h_f64(h, g->link_bytes_per_s);
	h_f64(h, g->nic_bytes_per_s);
	h_i64(h, g->gpus_per_node);
}

static void h_fit(uint64_t *h, const struct orr_fit *f)
{
	h_u64(h, f->nparams);
	h_u64(h, f->samples);
	h_u64(h, f->rank);
	h_u64(h, f->relative);
	for (int i = 0; i < ORR_FIT_MAX_PARAMS; i++)
		h_f64(h, f->coef[i]);
}

static void h_eff(uint64_t *h, const struct orr_gemm_efficiency *e)
{
	h_f64(h, e->median);
	h_u64(h, e->samples);
	h_u64(h, e->fitted);
}

static void h_gemm(uint64_t *h, const struct orr_gemm_model *m)
{
	h_u64(h, m != NULL);
	if (!m)
		return;
	h_gpu(h, m->gpu);
	for (int i = 0; i < ORR_DTYPE_COUNT; i++) {
		h_eff(h, &m->efficiency[i]);
		h_eff(h, &m->efficiency_memory[i]);
		h_fit(h, &m->pooled[i]);
	}
	h_eff(h, &m->efficiency_all);
	h_gpu(h, m->tiles.gpu);
	for (int i = 0; i < ORR_DTYPE_COUNT; i++) {
		h_u64(h, m->tiles.samples[i]);
		h_f64(h, m->tiles.fixed_ns[i]);
		h_f64(h, m->tiles.ns_per_ns[i]);
	}
	h_u64(h, m->nclasses);
	for (size_t i = 0; i < m->nclasses; i++) {
		const struct orr_gemm_class *c = &m->classes[i];

		h_i64(h, c->dtype);
		h_str(h, c->family);
		h_i64(h, c->how);
		h_fit(h, &c->fit);
	}
}

static void h_kern(uint64_t *h, const struct orr_kern_model *m)
{
	h_u64(h, m != NULL);
	if (!m)
		return;
	h_gpu(h, m->gpu);
	h_f64(h, m->floor_ns);
	for (int i = 0; i < ORR_KERN_CLASS_COUNT; i++) {
		h_eff(h, &m->efficiency[i]);
		h_fit(h, &m->pooled[i]);
	}
	h_eff(h, &m->efficiency_all);
	h_u64(h, m->nfamilies);
	for (size_t i = 0; i < m->nfamilies; i++) {
		const struct orr_kern_family *f = &m->families[i];

		h_i64(h, f->cls);
		h_i64(h, f->dtype);
		h_str(h, f->name);
		h_u64(h, f->flops);
		h_i64(h, f->how);
		h_fit(h, &f->fit);
	}
}

static void h_coll(uint64_t *h, const struct orr_coll_model *m)
{
	h_u64(h, m != NULL);
	if (!m)
		return;
	h_i64(h, m->kind);
	h_u64(h, m->per_rank_latency);
	h_u64(h, m->constrained);
	h_u64(h, m->nbands);
	for (size_t i = 0; i < m->nbands && i < ORR_COLL_MAX_BANDS; i++) {
		const struct orr_coll_band *b = &m->bands[i];

		h_f64(h, b->lo_bytes);
		h_f64(h, b->hi_bytes);
		h_f64(h, b->alpha_ns);
		h_f64(h, b->alpha_rank_ns);
		h_f64(h, b->bus_bytes_per_s);
		h_fit(h, &b->fit);
	}
}

static void h_costs(uint64_t *h, const struct orr_synth_costs *c)
{
	h_gpu(h, c->gpu);
	h_gemm(h, c->m.gemm);
	h_kern(h, c->m.kern);
	for (int k = 0; k < ORR_COLL_KIND_COUNT; k++)
		for (int l = 0; l <= ORR_LINK_NETWORK; l++) {
			h_coll(h, c->m.coll[k][l]);
			h_f64(h, c->bus_bytes_per_s[k][l]);
		}
	h_i64(h, c->m.gpus_per_node);
	h_f64(h, c->m.nic_bytes_per_s);
	h_f64(h, c->cpu_op_ns);
	h_u64(h, c->gemm_tiles);
}

void orr_whatif_digest(const struct orr_whatif_plan *p, const struct orr_whatif_context *x,
		       struct orr_whatif_digest *ret)
{
	const struct wi_list *lists[] = { &p->tp, &p->pp,    &p->cp,  &p->vpp,
					  &p->mb, &p->first, &p->last };
	uint64_t *h = ret->part;

	for (int i = 0; i < ORR_WHATIF_DIGEST_PARTS; i++)
		h[i] = FNV_OFFSET;
	h_config(&h[ORR_WHATIF_DIGEST_MODEL], &p->s.base, orr_whatif_plan_syncs_layers(p));
	h_i64(&h[ORR_WHATIF_DIGEST_BUDGET], p->s.gpus_min);
	h_i64(&h[ORR_WHATIF_DIGEST_BUDGET], p->s.gpus_max);
	h_i64(&h[ORR_WHATIF_DIGEST_SPACE], p->s.global_batch);
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		h_list(&h[ORR_WHATIF_DIGEST_SPACE], lists[i]);
	h_u64(&h[ORR_WHATIF_DIGEST_SPACE], p->nrec);
	for (size_t i = 0; i < p->nrec; i++)
		h_i64(&h[ORR_WHATIF_DIGEST_SPACE], p->rec[i]);
	h_i64(&h[ORR_WHATIF_DIGEST_SPACE], p->s.sequence_parallel);
	h_i64(&h[ORR_WHATIF_DIGEST_SPACE], p->s.distributed_optimizer);
	h_i64(&h[ORR_WHATIF_DIGEST_SPACE], p->s.gpus_per_node);
	h_u64(&h[ORR_WHATIF_DIGEST_SPACE], p->s.allow_cross_node_tp);
	h_u64(&h[ORR_WHATIF_DIGEST_SPACE], p->count);
	h_gpu(&h[ORR_WHATIF_DIGEST_GPU], x->gpu);
	h_u64(&h[ORR_WHATIF_DIGEST_GPU], x->forward_only);
	h_f64(&h[ORR_WHATIF_DIGEST_GPU], x->reserve_bytes);
	h_costs(&h[ORR_WHATIF_DIGEST_COSTS], &x->costs);
	h_f64(&h[ORR_WHATIF_DIGEST_TRACE], x->replayed_ns);
	h_f64(&h[ORR_WHATIF_DIGEST_TRACE], x->recorded_synth_ns);
}

enum orr_whatif_digest_part orr_whatif_digest_diff(const struct orr_whatif_digest *a,
						   const struct orr_whatif_digest *b)
{
	for (int i = 0; i < ORR_WHATIF_DIGEST_PARTS; i++)
		if (a->part[i] != b->part[i])
			return (enum orr_whatif_digest_part)i;
	return ORR_WHATIF_DIGEST_PARTS;
}

/* SPDX-License-Identifier: MIT */
/*
 * A traced configuration as a training configuration, and a GEMM of one configuration
 * re-shaped for another (notes/estimator.md, B.4, B.6 and B.7: "re-shape every GEMM
 * role"; docs/estimator.md, "Re-shaping GEMMs").
 *
 * A GEMM's role and pass (orr_gemm_label()) say which weight it multiplies and how; the
 * target configuration gives that weight's new K×N (with t-way tensor parallelism,
 * estimator/structure.c's table) and the new tokens T = b·s/cp per micro-batch, and the
 * pass puts them in the same places as the traced GEMM had them.  Its kernel family,
 * and so its class in the GEMM model, is kept: the cuBLAS kernel a new shape gets is
 * not known, and the traced one's efficiency is the best guess (B.1).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* ---- from a structure ---- */

static int take(const struct orr_value *v, int64_t *ret)
{
	if (v->how == ORR_VALUE_UNKNOWN || v->value < 1)
		return -ENOENT;
	*ret = v->value;
	return 0;
}

int orr_train_config_from_structure(const struct orr_structure *st, struct orr_train_config *ret,
				    const char **ret_missing)
{
	const struct {
		const char *name;
		const struct orr_value *v;
		int64_t *to;
	} need[] = {
		{ "layers", &st->layers, &ret->layers },
		{ "hidden", &st->hidden, &ret->hidden },
		{ "heads", &st->heads, &ret->heads },
		{ "kv_groups", &st->kv_groups, &ret->kv_groups },
		{ "ffn", &st->ffn, &ret->ffn },
		{ "vocab", &st->vocab, &ret->vocab },
		{ "seq", &st->seq, &ret->seq },
		{ "micro_batch", &st->micro_batch, &ret->micro_batch },
		{ "micro_batches", &st->micro_batches, &ret->micro_batches },
		{ "tp", &st->tp, &ret->tp },
		{ "pp", &st->pp, &ret->pp },
		{ "dp", &st->dp, &ret->dp },
	};

	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (take(need[i].v, need[i].to)) {
			if (ret_missing)
				*ret_missing = need[i].name;
			return -ENOENT;
		}
	ret->cp = 1;
	ret->vpp = 1;
	ret->gated_mlp = st->gated_mlp;
	ret->flash_attention = st->fused_attention;
	ret->precision = ORR_DTYPE_BF16;
	return 0;
}

/* ---- the shapes of a configuration ---- */

static int64_t tokens(const struct orr_train_config *c)
{
	return c->micro_batch * c->seq / c->cp;
}

/* The weight of a layer role, K×N on one tensor-parallel rank; false for attention. */
static bool weight_of(const struct orr_train_config *c, enum orr_gemm_role role, int64_t *k,
		      int64_t *n)
{
	int64_t h = c->hidden, t = c->tp, f = c->ffn, d = c->hidden / c->heads;
	int64_t g = c->kv_groups ? c->kv_groups : c->heads;

	switch (role) {
	case ORR_GEMM_ROLE_QKV:
		*k = h;
		*n = (h + 2 * g * d) / t;
		return true;
	case ORR_GEMM_ROLE_PROJ:
		*k = h / t;
		*n = h;
		return true;
	case ORR_GEMM_ROLE_FC1:
		*k = h;
		*n = (c->gated_mlp ? 2 * f : f) / t;
		return true;
	case ORR_GEMM_ROLE_FC2:
		*k = f / t;
		*n = h;
		return true;
	case ORR_GEMM_ROLE_LOGITS:
		*k = h;
		*n = c->vocab / t;
		return true;
	default:
		return false;
	}
}

/* Whether s has the shape its role and pass give it in c (weight K×N, T tokens). */
static bool shaped_as(const struct orr_gemm_sample *s, int64_t T, int64_t k, int64_t n)
{
	if (s->batch != 1)
		return false;
	switch (s->pass) {
	case ORR_GEMM_FORWARD:
		return s->m == T && s->k == k && s->n == n;
	case ORR_GEMM_DGRAD:
		return s->m == T && s->k == n && s->n == k;
	case ORR_GEMM_WGRAD:
		return s->k == T && ((s->m == k && s->n == n) || (s->m == n && s->n == k));
	default:
		return false;
	}
}

/*
 * A linear role's GEMM in `to`, its operands where the traced one (in `from`) had
 * them: forward T×K·K×N, data gradient T×N·N×K, weight gradient K×T·T×N or N×T·T×K.
 */
static int linear(const struct orr_gemm_sample *s, const struct orr_train_config *from,
		  const struct orr_train_config *to, struct orr_gemm_sample *ret)
{
	int64_t k0, n0, k, n, T = tokens(to);

	if (!weight_of(from, s->role, &k0, &n0) || !weight_of(to, s->role, &k, &n) ||
	    !shaped_as(s, tokens(from), k0, n0))
		return -EINVAL;
	ret->batch = 1;
	switch (s->pass) {
	case ORR_GEMM_FORWARD:
		ret->m = T, ret->k = k, ret->n = n;
		return 0;
	case ORR_GEMM_DGRAD:
		ret->m = T, ret->k = n, ret->n = k;
		return 0;
	case ORR_GEMM_WGRAD:
		if (s->m == n0 && s->n == k0 && !(s->m == k0 && s->n == n0))
			ret->m = n, ret->k = T, ret->n = k;
		else
			ret->m = k, ret->k = T, ret->n = n;
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * Attention's batched GEMMs, [B, s, d]·[B, d, s] or [B, s, s]·[B, s, d] with B = b·a/t,
 * kept in whichever of the two the traced one was.  Context parallelism splits the
 * sequence into a ring of chunks whose GEMMs are another shape: not done here.
 */
static int attention(const struct orr_gemm_sample *s, const struct orr_train_config *from,
		     const struct orr_train_config *to, struct orr_gemm_sample *ret)
{
	int64_t d0 = from->hidden / from->heads, d = to->hidden / to->heads;
	bool scores = s->k == d0 && s->n == from->seq;

	if (from->cp != 1 || to->cp != 1)
		return -ENOTSUP;
	if ((!scores && !(s->k == from->seq && s->n == d0)) || s->m != from->seq ||
	    s->batch != from->micro_batch * from->heads / from->tp)
		return -EINVAL;
	ret->batch = to->micro_batch * to->heads / to->tp;
	ret->m = to->seq;
	ret->k = scores ? d : to->seq;
	ret->n = scores ? to->seq : d;
	return 0;
}

/* The operands' type: the target's precision when it differs from the traced one's. */
static void retype(const struct orr_gemm_sample *s, const struct orr_train_config *from,
		   const struct orr_train_config *to, struct orr_gemm_sample *ret)
{
	if (from->precision == to->precision)
		return;
	ret->dtype = to->precision;
	ret->math = to->precision;
	ret->elem_bytes = to->precision == ORR_DTYPE_FP32 ? 4 : 2;
	if (to->precision == ORR_DTYPE_FP32 && s->math == ORR_DTYPE_TF32)
		ret->math = ORR_DTYPE_TF32;
}

int orr_gemm_reshape(const struct orr_gemm_sample *s, const struct orr_train_config *from,
		     const struct orr_train_config *to, struct orr_gemm_sample *ret)
{
	struct orr_gemm_sample r = *s;
	double b, m, n, k;
	int err;

	if (!orr__train_config_valid(from) || !orr__train_config_valid(to))
		return -EINVAL;
	if (s->role == ORR_GEMM_ROLE_ATTENTION)
		err = attention(s, from, to, &r);
	else
		err = linear(s, from, to, &r);
	if (err)
		return err;
	retype(s, from, to, &r);
	b = (double)r.batch, m = (double)r.m, n = (double)r.n, k = (double)r.k;
	r.flops = 2.0 * b * m * n * k;
	r.bytes = r.elem_bytes * b * (m * k + k * n + m * n);
	r.ns = 0;
	*ret = r;
	return 0;
}

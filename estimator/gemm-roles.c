/* SPDX-License-Identifier: MIT */
/*
 * What each GEMM of a transformer computes: its role in the layer (QKV, projection,
 * FC1, FC2, attention, logits) and its pass (forward, data gradient, weight gradient),
 * from its shape and the model's dimensions (docs/estimator.md, "GEMM roles").
 *
 * A layer's GEMM Y = X·W, X of T×K and W of K×N, runs three times in a training step:
 * forward (T×K · K×N), the data gradient dX = dY·Wᵀ (T×N · N×K) and the weight
 * gradient dW = Xᵀ·dY (K×T · T×N; Megatron computes dWᵀ = dYᵀ·X, N×T · T×K).  The
 * backward pass is autograd's: a GEMM under evaluate_function or a *Backward* node is
 * a gradient, the others are forward.  Attention's batched GEMMs multiply activations
 * only, so each of their backward GEMMs is a data gradient.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

const char *orr_gemm_role_name(enum orr_gemm_role r)
{
	static const char *const names[ORR_GEMM_ROLE_COUNT] = {
		[ORR_GEMM_ROLE_UNKNOWN] = "unknown", [ORR_GEMM_ROLE_QKV] = "qkv",
		[ORR_GEMM_ROLE_PROJ] = "proj",       [ORR_GEMM_ROLE_FC1] = "fc1",
		[ORR_GEMM_ROLE_FC2] = "fc2",         [ORR_GEMM_ROLE_ATTENTION] = "attention",
		[ORR_GEMM_ROLE_LOGITS] = "logits",
	};

	return (unsigned)r < ORR_GEMM_ROLE_COUNT ? names[r] : NULL;
}

const char *orr_gemm_pass_name(enum orr_gemm_pass p)
{
	static const char *const names[ORR_GEMM_PASS_COUNT] = {
		[ORR_GEMM_PASS_UNKNOWN] = "unknown",
		[ORR_GEMM_FORWARD] = "forward",
		[ORR_GEMM_DGRAD] = "dgrad",
		[ORR_GEMM_WGRAD] = "wgrad",
	};

	return (unsigned)p < ORR_GEMM_PASS_COUNT ? names[p] : NULL;
}

/* The weight of a layer's GEMM: K×N; 0 where the structure does not give it. */
struct weight {
	enum orr_gemm_role role;
	int64_t k, n;
};

static bool known(const struct orr_value *v)
{
	return v->how != ORR_VALUE_UNKNOWN && v->value > 0;
}

/* The weights of st's layer and output layer (n of them, at most 5) into w. */
static size_t weights(const struct orr_structure *st, struct weight *w)
{
	int64_t h = st->hidden.value, t = st->tp.value, f = st->ffn.value;
	size_t n = 0;

	if (known(&st->kv_groups) && known(&st->head_dim))
		w[n++] = (struct weight){ ORR_GEMM_ROLE_QKV, h,
					  (h + 2 * st->kv_groups.value * st->head_dim.value) / t };
	w[n++] = (struct weight){ ORR_GEMM_ROLE_PROJ, h / t, h };
	w[n++] = (struct weight){ ORR_GEMM_ROLE_FC1, h, (st->gated_mlp ? 2 * f : f) / t };
	w[n++] = (struct weight){ ORR_GEMM_ROLE_FC2, f / t, h };
	if (known(&st->vocab))
		w[n++] = (struct weight){ ORR_GEMM_ROLE_LOGITS, h, st->vocab.value / t };
	return n;
}

/* Whether the sample's batch, M, K, N are b, m, k, n. */
static bool shaped(const struct orr_gemm_sample *s, int64_t b, int64_t m, int64_t k, int64_t n)
{
	return s->batch == b && s->m == m && s->k == k && s->n == n;
}

/* The roles and passes a sample's shape fits. */
struct label {
	struct fit {
		enum orr_gemm_role role;
		enum orr_gemm_pass pass;
	} fits[8];
	int n;
};

static void match(struct label *l, enum orr_gemm_role role, enum orr_gemm_pass pass)
{
	for (int i = 0; i < l->n; i++)
		if (l->fits[i].role == role && l->fits[i].pass == pass)
			return;
	if (l->n < 8)
		l->fits[l->n++] = (struct fit){ role, pass };
}

static bool fits(const struct label *l, enum orr_gemm_role role, enum orr_gemm_pass pass)
{
	for (int i = 0; i < l->n; i++)
		if (l->fits[i].role == role && l->fits[i].pass == pass)
			return true;
	return false;
}

/* A linear layer's GEMMs: T rows forward and in the data gradient, T inner in dW. */
static void match_linear(struct label *l, const struct orr_gemm_sample *s, const struct weight *w,
			 int64_t T)
{
	if (!s->backward && shaped(s, 1, T, w->k, w->n))
		match(l, w->role, ORR_GEMM_FORWARD);
	if (s->backward && shaped(s, 1, T, w->n, w->k))
		match(l, w->role, ORR_GEMM_DGRAD);
	if (s->backward && (shaped(s, 1, w->k, T, w->n) || shaped(s, 1, w->n, T, w->k)))
		match(l, w->role, ORR_GEMM_WGRAD);
}

/* Attention: [B, s, d]·[B, d, s] and [B, s, s]·[B, s, d], B = b·a/t, either pass. */
static void match_attention(struct label *l, const struct orr_gemm_sample *s,
			    const struct orr_structure *st)
{
	int64_t B = st->micro_batch.value * st->heads.value / st->tp.value, q = st->seq.value,
		d = st->head_dim.value;

	if (shaped(s, B, q, d, q) || shaped(s, B, q, q, d))
		match(l, ORR_GEMM_ROLE_ATTENTION, s->backward ? ORR_GEMM_DGRAD : ORR_GEMM_FORWARD);
}

/* The fits of sample q. */
static void label_of(const struct orr_structure *st, const struct weight *w, size_t nw,
		     const struct orr_gemm_sample *q, struct label *l)
{
	l->n = 0;
	for (size_t j = 0; j < nw; j++)
		match_linear(l, q, &w[j], st->tokens.value);
	match_attention(l, q, st);
}

static int cmp_node(const void *a, const void *b, void *arg)
{
	const struct orr_gemm_sample *s = arg;
	const struct orr_gemm_sample *x = &s[*(const size_t *)a], *y = &s[*(const size_t *)b];

	if (x->grad_node != y->grad_node)
		return x->grad_node < y->grad_node ? -1 : 1;
	return (x->grad_index > y->grad_index) - (x->grad_index < y->grad_index);
}

/* The one role r whose data gradient a fits and weight gradient b fits; UNKNOWN. */
static enum orr_gemm_role pair_role(const struct label *a, const struct label *b)
{
	enum orr_gemm_role found = ORR_GEMM_ROLE_UNKNOWN;

	for (int r = ORR_GEMM_ROLE_UNKNOWN + 1; r < ORR_GEMM_ROLE_COUNT; r++)
		if (fits(a, r, ORR_GEMM_DGRAD) && fits(b, r, ORR_GEMM_WGRAD)) {
			if (found != ORR_GEMM_ROLE_UNKNOWN)
				return ORR_GEMM_ROLE_UNKNOWN;
			found = r;
		}
	return found;
}

/* Samples of two-GEMM autograd nodes that their shapes alone did not settle. */
static size_t settle_pairs(struct orr_gemm_sample *s, size_t n, const struct label *l)
{
	size_t *v = orr_xmalloc((n ? n : 1) * sizeof(*v)), m = 0, labeled = 0;

	for (size_t i = 0; i < n; i++)
		if (s[i].grad_count == 2)
			v[m++] = i;
	if (m)
		qsort_r(v, m, sizeof(*v), cmp_node, s);
	for (size_t i = 0; i + 1 < m; i++) {
		struct orr_gemm_sample *a = &s[v[i]], *b = &s[v[i + 1]];
		enum orr_gemm_role r;

		if (a->grad_node != b->grad_node || a->grad_index != 0 ||
		    (a->role != ORR_GEMM_ROLE_UNKNOWN && b->role != ORR_GEMM_ROLE_UNKNOWN))
			continue;
		r = pair_role(&l[v[i]], &l[v[i + 1]]);
		if (r == ORR_GEMM_ROLE_UNKNOWN)
			continue;
		labeled += (a->role == ORR_GEMM_ROLE_UNKNOWN) + (b->role == ORR_GEMM_ROLE_UNKNOWN);
		a->role = b->role = r;
		a->pass = ORR_GEMM_DGRAD;
		b->pass = ORR_GEMM_WGRAD;
	}
	free(v);
	return labeled;
}

size_t orr_gemm_label(const struct orr_structure *st, struct orr_gemm_sample *s, size_t n)
{
	const struct orr_value *need[] = { &st->tokens, &st->hidden,      &st->tp,  &st->ffn,
					   &st->heads,  &st->micro_batch, &st->seq, &st->head_dim };
	struct weight w[5];
	struct label *l;
	size_t nw, labeled = 0;

	for (size_t i = 0; i < n; i++) {
		s[i].role = ORR_GEMM_ROLE_UNKNOWN;
		s[i].pass = ORR_GEMM_PASS_UNKNOWN;
	}
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!known(need[i]))
			return 0;
	nw = weights(st, w);
	l = orr_xmalloc((n ? n : 1) * sizeof(*l));
	for (size_t i = 0; i < n; i++) {
		label_of(st, w, nw, &s[i], &l[i]);
		if (l[i].n != 1)
			continue;
		s[i].role = l[i].fits[0].role;
		s[i].pass = l[i].fits[0].pass;
		labeled++;
	}
	labeled += settle_pairs(s, n, l);
	free(l);
	return labeled;
}

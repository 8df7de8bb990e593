/* SPDX-License-Identifier: MIT */
/*
 * What a rank's training step is made of: its phases, and the transformer it runs,
 * read from operand shapes (docs/estimator.md, "Structure").
 *
 * Shapes come from the ops' `Input Dims`.  The transformer's dimensions follow from
 * what Megatron-style tensor parallelism does to each GEMM (notes/estimator.md, B.0),
 * T tokens per micro-batch on the rank, t-way tensor parallelism:
 *
 *   norm          input [.., h]                          h, read
 *   attention     scores [B, s, s] = [B, s, d]·[B, d, s]  s and d, read; B = b·a/t
 *   QKV           T×h · h×(h + 2·g·d)/t                   column-parallel
 *   projection    T×(a·d/t) · (a·d/t)×h                   row-parallel
 *   FC1           T×h · h×(f/t), ×2 in N when gated       column-parallel
 *   FC2           T×(f/t) · (f/t)×h                       row-parallel
 *   logits        T×h · h×(V/t), once per micro-batch     vocabulary-parallel
 *
 * Each value says whether it was read from the trace or inferred (and from what), or
 * why it could not be told.  Nothing is guessed: a rank whose shapes do not fit the
 * pattern (a convolutional network, a recommender) gets "unknown" with the reason.
 */
#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* ---- values ---- */

void orr__value_set(struct orr_value *v, int64_t value, enum orr_value_how how, const char *fmt,
		    ...)
{
	va_list ap;

	v->value = value;
	v->how = how;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
}

#define set orr__value_set

static bool known(const struct orr_value *v)
{
	return v->how != ORR_VALUE_UNKNOWN;
}

const char *orr_value_how_name(enum orr_value_how h)
{
	switch (h) {
	case ORR_VALUE_UNKNOWN:
		return "unknown";
	case ORR_VALUE_READ:
		return "read";
	case ORR_VALUE_INFERRED:
		return "inferred";
	}
	return NULL;
}

/* ---- counting ---- */

/* Counts of keys (a GEMM's M, K, N; a norm's width), most frequent found by sorting. */
struct tally {
	struct gemm_key {
		int64_t m, k, n;
	} * v;
	size_t n, cap;
};

static int cmp_gemm(const void *a, const void *b)
{
	const struct gemm_key *x = a, *y = b;

	if (x->m != y->m)
		return x->m < y->m ? -1 : 1;
	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return (x->n > y->n) - (x->n < y->n);
}

/* Distinct keys with their counts, in key order. */
struct group {
	struct gemm_key key;
	size_t count;
};

static size_t distinct(struct tally *t, struct group **ret)
{
	struct group *g = NULL;
	size_t n = 0, cap = 0;

	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_gemm);
	for (size_t i = 0; i < t->n; i++) {
		if (n && cmp_gemm(&g[n - 1].key, &t->v[i]) == 0) {
			g[n - 1].count++;
			continue;
		}
		ORR_VEC_PUSH(g, n, cap, ((struct group){ t->v[i], 1 }));
	}
	*ret = g;
	return n;
}

/* The value of field f (m, k or n) that the most entries have; 0 when none. */
static int64_t mode_of(const struct group *g, size_t n, size_t f, size_t *ret_count)
{
	int64_t best = 0;
	size_t best_count = 0;

	for (size_t i = 0; i < n; i++) {
		const int64_t *ki = &g[i].key.m;
		size_t c = 0;

		for (size_t j = 0; j < n; j++)
			if ((&g[j].key.m)[f] == ki[f])
				c += g[j].count;
		if (c > best_count || (c == best_count && ki[f] > best)) {
			best = ki[f];
			best_count = c;
		}
	}
	if (ret_count)
		*ret_count = best_count;
	return best;
}

/* ---- reading the rank ---- */

struct scan {
	const struct orr_trace *t;
	const struct orr_rank *r;
	const uint32_t *parent;
	struct tally norms;      /* (0, 0, width) */
	struct tally linear;     /* forward 2-D GEMMs: (M, K, N) */
	struct tally scores;     /* attention: (B, s, d) */
	size_t fused_scores;     /* ... of them from fused attention ops */
	struct tally embeddings; /* aten::embedding: (table rows, 0, index elements) */
	int64_t from, to;        /* the first step's bounds (the whole capture without steps) */
	bool stepped;            /* ... which the trace marks */
};

static const char *event_name(const struct scan *s, const struct orr_event *e)
{
	return orr_trace_str(s->t, e->name);
}

static bool name_is(const char *name, const char *const *globs, size_t n)
{
	return orr__name_is(name, globs, n);
}

static bool in_backward(const struct scan *s, uint32_t e)
{
	return orr__in_backward(s->t, s->r, s->parent, e);
}

/* Input i of op event e (its dims in *ret_dims), or NULL (and *ret_dims NULL). */
static const struct orr_input *input(const struct scan *s, const struct orr_event *e, uint32_t i,
				     const int64_t **ret_dims)
{
	const struct orr_op_args *a;
	const struct orr_input *in;

	*ret_dims = NULL;
	if (e->kind != ORR_EVENT_OP || e->args >= s->r->nops)
		return NULL;
	a = &s->r->ops[e->args];
	if (i >= a->ninputs || a->first_input + i >= s->r->ninputs)
		return NULL;
	in = &s->r->inputs[a->first_input + i];
	if (in->is_list || (size_t)in->first_dim + in->ndims > s->r->ndims)
		return NULL;
	*ret_dims = s->r->dims + in->first_dim;
	return in;
}

/*
 * A dimension the shapes may give: positive and at most 2^30 (no transformer's is
 * larger), so that a product of two of them, and that times 4, stays within int64.
 */
static bool dim_ok(int64_t v)
{
	return v > 0 && v <= (INT64_C(1) << 30);
}

static void note_norm(struct scan *s, const struct orr_event *e)
{
	const int64_t *d;
	const struct orr_input *in = input(s, e, 0, &d);

	if (in && in->ndims >= 2 && dim_ok(d[in->ndims - 1]))
		ORR_VEC_PUSH(s->norms.v, s->norms.n, s->norms.cap,
			     ((struct gemm_key){ 0, 0, d[in->ndims - 1] }));
}

/* aten::mm [M,K]·[K,N]; aten::addmm (bias, [M,K], [K,N]). */
static void note_mm(struct scan *s, const struct orr_event *e, uint32_t first)
{
	const int64_t *a, *b;
	const struct orr_input *x = input(s, e, first, &a), *w = input(s, e, first + 1, &b);

	if (x && w && x->ndims == 2 && w->ndims == 2 && a[1] == b[0] && dim_ok(a[0]) &&
	    dim_ok(a[1]) && dim_ok(b[1]))
		ORR_VEC_PUSH(s->linear.v, s->linear.n, s->linear.cap,
			     ((struct gemm_key){ a[0], a[1], b[1] }));
}

/* Attention scores: baddbmm (C, [B,s,d], [B,d,s]) or bmm [B,s,d]·[B,d,s]. */
static void note_bmm(struct scan *s, const struct orr_event *e, uint32_t first)
{
	const int64_t *a, *b;
	const struct orr_input *x = input(s, e, first, &a), *y = input(s, e, first + 1, &b);

	if (x && y && x->ndims == 3 && y->ndims == 3 && a[0] == b[0] && a[2] == b[1] &&
	    a[1] == b[2] && a[1] > a[2] && dim_ok(a[0]) && dim_ok(a[1]) && dim_ok(a[2]))
		ORR_VEC_PUSH(s->scores.v, s->scores.n, s->scores.cap,
			     ((struct gemm_key){ a[0], a[1], a[2] }));
}

/* aten::embedding (weight [rows, h], indices [..]): its table's rows and its lookups. */
static void note_embedding(struct scan *s, const struct orr_event *e)
{
	const int64_t *w, *x;
	const struct orr_input *weight = input(s, e, 0, &w), *idx = input(s, e, 1, &x);
	int64_t lookups = 1;

	if (!weight || !idx || weight->ndims != 2 || !dim_ok(w[0]))
		return;
	for (uint32_t i = 0; i < idx->ndims; i++)
		lookups = x[i] > 0 && lookups > 0 && lookups <= INT64_MAX / x[i] ? lookups * x[i]
										 : -1;
	if (dim_ok(lookups))
		ORR_VEC_PUSH(s->embeddings.v, s->embeddings.n, s->embeddings.cap,
			     ((struct gemm_key){ w[0], 0, lookups }));
}

/* The first step's bounds: a step's ops are its shapes, counted once. */
static void first_step(struct scan *s)
{
	struct orr_step *steps = NULL;
	size_t nsteps = 0;

	s->from = INT64_MIN;
	s->to = INT64_MAX;
	if (orr_rank_steps(s->t, s->r, &steps, &nsteps) == 0 && nsteps) {
		s->from = steps[0].start_ns;
		s->to = steps[0].end_ns;
		s->stepped = true;
	}
	free(steps);
}

/*
 * Fused attention: its query is [b, a/t, s, d] in PyTorch's scaled_dot_product
 * attention, [b, s, a/t, d] in flash-attn's; noted as the scores' (B = b·a/t, s, d).
 */
static void note_fused_attention(struct scan *s, const struct orr_event *e, bool heads_first)
{
	const int64_t *q;
	const struct orr_input *x = input(s, e, 0, &q);
	int64_t b, a, seq, d;

	if (!x || x->ndims != 4)
		return;
	b = q[0];
	a = heads_first ? q[1] : q[2];
	seq = heads_first ? q[2] : q[1];
	d = q[3];
	if (dim_ok(b) && dim_ok(a) && seq > d && dim_ok(seq) && dim_ok(d) && dim_ok(b * a)) {
		ORR_VEC_PUSH(s->scores.v, s->scores.n, s->scores.cap,
			     ((struct gemm_key){ b * a, seq, d }));
		s->fused_scores++;
	}
}

static void scan_ops(struct scan *s, struct orr_structure *st)
{
	static const char *const norms[] = { "*layer_norm*", "*LayerNorm*", "*rms_norm*",
					     "*RMSNorm*",    "*layernorm*", "*rmsnorm*" };
	static const char *const optim[] = { "Optimizer.step*", "*optimizer*step*", "*Adam*step*",
					     "*SGD.step*" };
	static const char *const data[] = { "enumerate(DataLoader)*", "*DataLoader*",
					    "*dataloader*" };
	static const char *const sdpa[] = { "aten::_scaled_dot_product_flash_attention",
					    "aten::_scaled_dot_product_efficient_attention",
					    "aten::_scaled_dot_product_cudnn_attention" };
	static const char *const flash[] = { "flash_attn::_flash_attn_forward", "FlashAttnFunc" };

	for (uint32_t i = 0; i < s->r->nevents; i++) {
		const struct orr_event *e = &s->r->events[i];
		const char *name;
		bool back;

		if (e->kind != ORR_EVENT_OP && e->kind != ORR_EVENT_ANNOTATION)
			continue;
		name = event_name(s, e);
		if (name_is(name, optim, sizeof(optim) / sizeof(optim[0])))
			st->optimizer = true;
		if (name_is(name, data, sizeof(data) / sizeof(data[0])))
			st->data_loading = true;
		if (e->kind != ORR_EVENT_OP || e->start_ns < s->from || e->start_ns >= s->to)
			continue;
		back = in_backward(s, i);
		st->backward |= back;
		if (back)
			continue;
		st->forward = true;
		if (strcmp(name, "aten::embedding") == 0)
			note_embedding(s, e);
		else if (name_is(name, norms, sizeof(norms) / sizeof(norms[0])) &&
			 !strstr(name, "backward"))
			note_norm(s, e);
		else if (strcmp(name, "aten::mm") == 0)
			note_mm(s, e, 0);
		else if (strcmp(name, "aten::addmm") == 0)
			note_mm(s, e, 1);
		else if (strcmp(name, "aten::bmm") == 0)
			note_bmm(s, e, 0);
		else if (strcmp(name, "aten::baddbmm") == 0)
			note_bmm(s, e, 1);
		else if (name_is(name, sdpa, sizeof(sdpa) / sizeof(sdpa[0])))
			note_fused_attention(s, e, true);
		else if (name_is(name, flash, sizeof(flash) / sizeof(flash[0])))
			note_fused_attention(s, e, false);
	}
}

/* ---- the transformer ---- */

struct dims {
	struct group *lin, *sc, *nm, *emb;
	size_t nlin, nsc, nnm, nemb;
};

/* Forward GEMMs of T rows with K == k (or N == n when k is 0), ordered by N (or K). */
static size_t gemms_with(const struct dims *d, int64_t tokens, int64_t k, int64_t n,
			 struct group *out, size_t cap)
{
	size_t m = 0;

	for (size_t i = 0; i < d->nlin && m < cap; i++) {
		const struct gemm_key *g = &d->lin[i].key;

		if (g->m == tokens && ((k && g->k == k) || (!k && g->n == n)))
			out[m++] = d->lin[i];
	}
	return m;
}

/*
 * Without the logits (a pipeline stage other than the last), the first stage's
 * embedding lookups count the micro-batches: those of T tokens in the largest table
 * (the vocabulary's; a learned position embedding is a second table, looked up as
 * often).  The layers are then per micro-batch.
 */
static void micro_batches(struct orr_structure *st, const struct dims *d, bool logits)
{
	int64_t rows = 0, e = 0;

	if (logits)
		return;
	for (size_t i = 0; i < d->nemb; i++)
		if (d->emb[i].key.n == st->tokens.value && d->emb[i].key.m > rows) {
			rows = d->emb[i].key.m;
			e = (int64_t)d->emb[i].count;
		}
	if (!e) {
		set(&st->micro_batches, 0, ORR_VALUE_UNKNOWN,
		    "no logits GEMM and no embedding lookup of T tokens in the step (a middle "
		    "pipeline stage?)");
		return;
	}
	set(&st->micro_batches, e, ORR_VALUE_INFERRED,
	    "lookups of T tokens in the largest embedding table (%lld rows) in the step: one "
	    "per micro-batch (no logits GEMM)",
	    (long long)rows);
	if (known(&st->layers) && e > 1 && st->layers.value % e == 0)
		set(&st->layers, st->layers.value / e, ORR_VALUE_INFERRED,
		    "QKV GEMMs in the forward pass / micro-batches: %lld / %lld",
		    (long long)st->layers.value, (long long)e);
}

static void layout(struct orr_structure *st, const struct dims *d)
{
	int64_t h = st->hidden.value, T = st->tokens.value, hd = st->head_dim.value, t;
	struct group in[16], out[16];
	size_t nin = gemms_with(d, T, h, 0, in, 16), nout = gemms_with(d, T, 0, h, out, 16);
	size_t qkv = SIZE_MAX, fc1 = SIZE_MAX, logits = SIZE_MAX;

	/* Row-parallel GEMMs end in h: the smaller K is the projection's a·d/t = h/t. */
	if (nout < 2) {
		set(&st->tp, 0, ORR_VALUE_UNKNOWN,
		    "fewer than two forward GEMMs of %lld tokens give %lld-wide outputs "
		    "(no attention projection and FC2)",
		    (long long)T, (long long)h);
		return;
	}
	if (out[0].key.k <= 0 || h % out[0].key.k) {
		set(&st->tp, 0, ORR_VALUE_UNKNOWN,
		    "the smallest row-parallel K (%lld) does not divide h",
		    (long long)out[0].key.k);
		return;
	}
	t = h / out[0].key.k;
	set(&st->tp, t, ORR_VALUE_INFERRED,
	    "h / the attention projection's K: %lld / %lld (T x %lld . %lld x %lld, %zu times)",
	    (long long)h, (long long)out[0].key.k, (long long)out[0].key.k, (long long)out[0].key.k,
	    (long long)h, out[0].count);
	set(&st->ffn, out[nout - 1].key.k * t, ORR_VALUE_INFERRED,
	    "FC2's K x tp: %lld x %lld (T x %lld . %lld x %lld, %zu times)",
	    (long long)out[nout - 1].key.k, (long long)t, (long long)out[nout - 1].key.k,
	    (long long)out[nout - 1].key.k, (long long)h, out[nout - 1].count);
	/* Column-parallel GEMMs start from h: QKV, FC1 (f/t or 2f/t), logits (rarest, widest). */
	for (size_t i = 0; i < nin; i++) {
		int64_t n = in[i].key.n;

		if (n * t == st->ffn.value || n * t == 2 * st->ffn.value)
			fc1 = i;
		else if (hd > 0 && n * t > h && (n * t - h) % (2 * hd) == 0 && n * t < 4 * h &&
			 qkv == SIZE_MAX)
			qkv = i;
	}
	/* Not one of h outputs: the attention projection at tp 1, a separate Q at any. */
	for (size_t i = 0; i < nin; i++)
		if (i != qkv && i != fc1 && in[i].key.n * t != h &&
		    (logits == SIZE_MAX || in[i].key.n > in[logits].key.n))
			logits = i;
	if (fc1 != SIZE_MAX)
		st->gated_mlp = in[fc1].key.n * t == 2 * st->ffn.value;
	if (qkv != SIZE_MAX) {
		int64_t g = (in[qkv].key.n * t - h) / (2 * hd);

		set(&st->kv_groups, g, ORR_VALUE_INFERRED,
		    "QKV's N x tp = h + 2 x groups x head dim: %lld x %lld = %lld + 2 x %lld x %lld",
		    (long long)in[qkv].key.n, (long long)t, (long long)h, (long long)g,
		    (long long)hd);
		set(&st->layers, (int64_t)in[qkv].count, ORR_VALUE_INFERRED,
		    "QKV GEMMs (T x %lld . %lld x %lld) in the forward pass", (long long)h,
		    (long long)h, (long long)in[qkv].key.n);
	}
	if (logits == SIZE_MAX)
		set(&st->vocab, 0, ORR_VALUE_UNKNOWN,
		    "no logits GEMM (T x h . h x V/tp) in the forward pass: not the last pipeline "
		    "stage?");
	if (logits != SIZE_MAX) {
		set(&st->vocab, in[logits].key.n * t, ORR_VALUE_INFERRED,
		    "the logits' N x tp: %lld x %lld (T x %lld . %lld x %lld, %zu times)",
		    (long long)in[logits].key.n, (long long)t, (long long)h, (long long)h,
		    (long long)in[logits].key.n, in[logits].count);
		set(&st->micro_batches, (int64_t)in[logits].count, ORR_VALUE_INFERRED,
		    "logits GEMMs in the step: one per micro-batch");
		if (known(&st->layers) && in[logits].count > 1 &&
		    st->layers.value % (int64_t)in[logits].count == 0)
			set(&st->layers, st->layers.value / (int64_t)in[logits].count,
			    ORR_VALUE_INFERRED,
			    "QKV GEMMs in the forward pass / micro-batches: %lld / %zu",
			    (long long)st->layers.value, in[logits].count);
	}
	micro_batches(st, d, logits != SIZE_MAX);
}

/* Every dimension the shapes gave, forgotten with one reason: they are not a transformer. */
static void not_a_transformer(struct orr_structure *st, const char *why)
{
	struct orr_value *all[] = { &st->layers,   &st->hidden,        &st->heads,
				    &st->head_dim, &st->kv_groups,     &st->ffn,
				    &st->vocab,    &st->seq,           &st->micro_batch,
				    &st->tokens,   &st->micro_batches, &st->tp };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		set(all[i], 0, ORR_VALUE_UNKNOWN, "the shapes do not fit a transformer layer: %s",
		    why);
	st->gated_mlp = false;
	st->fused_attention = false;
}

/*
 * The values hold together only if every one of them was found and the attention
 * batch is micro-batch x heads / tp, which no value was derived from: a recommender's
 * feature interaction is a batched GEMM too, but its "heads" and "batch" do not add up.
 */
static void coherent(struct orr_structure *st, int64_t b_heads, int64_t world)
{
	const struct orr_value *need[] = { &st->hidden, &st->heads,  &st->tokens, &st->micro_batch,
					   &st->tp,     &st->layers, &st->ffn };
	const char *names[] = { "hidden", "heads", "tokens", "micro-batch", "tp", "layers", "ffn" };
	char why[160];

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!known(need[i])) {
			snprintf(why, sizeof(why), "no %s (%.100s)", names[i], need[i]->why);
			not_a_transformer(st, why);
			return;
		}
	if (st->head_dim.value < 2 || (world > 0 && world % st->tp.value)) {
		snprintf(why, sizeof(why),
			 "a head dimension of %lld and tp %lld in a world of %lld",
			 (long long)st->head_dim.value, (long long)st->tp.value, (long long)world);
		not_a_transformer(st, why);
		return;
	}
	if (b_heads * st->tp.value != st->micro_batch.value * st->heads.value) {
		snprintf(
			why, sizeof(why),
			"the attention batch (%lld) is not micro-batch x heads / tp (%lld x %lld / "
			"%lld)",
			(long long)b_heads, (long long)st->micro_batch.value,
			(long long)st->heads.value, (long long)st->tp.value);
		not_a_transformer(st, why);
	}
}

static void transformer(struct orr_structure *st, struct scan *s)
{
	struct dims d;
	size_t c, cs;
	int64_t b_heads = 0, h;

	d.nnm = distinct(&s->norms, &d.nm);
	d.nlin = distinct(&s->linear, &d.lin);
	d.nsc = distinct(&s->scores, &d.sc);
	d.nemb = distinct(&s->embeddings, &d.emb);
	if (!d.nsc) {
		not_a_transformer(st,
				  "no attention (no forward [B, s, d] . [B, d, s] batched GEMM, no "
				  "fused attention op)");
		goto out;
	}
	/*
	 * Fused attention (PyTorch's scaled_dot_product ops, flash-attn) never writes the
	 * scores to memory, and its kernels' work grows with s² per sequence where the
	 * scores' batched GEMMs are separate ops: which of the two most attention ops are.
	 */
	st->fused_attention = 2 * s->fused_scores > s->scores.n;
	/* The attention scores' most frequent shape (the first of those as frequent). */
	cs = 0;
	for (size_t i = 1; i < d.nsc; i++)
		if (d.sc[i].count > d.sc[cs].count)
			cs = i;
	set(&st->seq, d.sc[cs].key.k, ORR_VALUE_READ,
	    "attention's queries [B, s, d] = [%lld, %lld, %lld] (the scores' batched GEMM or "
	    "fused attention), %zu times",
	    (long long)d.sc[cs].key.m, (long long)d.sc[cs].key.k, (long long)d.sc[cs].key.n,
	    d.sc[cs].count);
	set(&st->head_dim, d.sc[cs].key.n, ORR_VALUE_READ, "the same queries' last dimension");
	b_heads = d.sc[cs].key.m;
	if (!d.nnm) {
		not_a_transformer(st, "no forward normalization op with shapes");
		goto out;
	}
	h = mode_of(d.nm, d.nnm, 2, &c);
	set(&st->hidden, h, ORR_VALUE_READ,
	    "the last dimension of the normalization ops' input, %zu times", c);
	if (!d.nlin) {
		not_a_transformer(st, "no forward 2-D GEMM with shapes");
		goto out;
	}
	h = mode_of(d.lin, d.nlin, 0, &c);
	set(&st->tokens, h, ORR_VALUE_READ, "the rows of most forward 2-D GEMMs (%zu of %zu)", c,
	    s->linear.n);
	if (st->hidden.value % st->head_dim.value == 0)
		set(&st->heads, st->hidden.value / st->head_dim.value, ORR_VALUE_INFERRED,
		    "h / head dim: %lld / %lld", (long long)st->hidden.value,
		    (long long)st->head_dim.value);
	if (st->tokens.value % st->seq.value == 0)
		set(&st->micro_batch, st->tokens.value / st->seq.value, ORR_VALUE_INFERRED,
		    "tokens / sequence: %lld / %lld", (long long)st->tokens.value,
		    (long long)st->seq.value);
	layout(st, &d);
	coherent(st, b_heads, s->r->world_size);
out:
	free(d.nm);
	free(d.lin);
	free(d.sc);
	free(d.emb);
}

/*
 * Why the rank is a job of one GPU, or NULL: the trace holds one process (one rank, its
 * threads of one pid, its streams on one device) that used no communicator (no world
 * size above 1, no process-group backend, no communicator, no collective) and whose
 * shapes say no tensor parallelism.  A rank of a larger job whose trace lost its
 * distributedInfo still launched its collectives, and stays of unknown world.
 */
static const char *one_gpu(const struct orr_structure *st, const struct scan *s, size_t nranks)
{
	const struct orr_rank *r = s->r;
	int64_t pid = -1, device = -1;

	if (nranks != 1 || r->world_size > 1 || r->ncollectives || r->ncomms || st->ncomms ||
	    (r->backend != ORR_STR_NONE && r->world_size != 1) ||
	    (known(&st->tp) && st->tp.value != 1))
		return NULL;
	for (size_t i = 0; i < r->nplaces; i++) {
		const struct orr_place *p = &r->places[i];
		int64_t *seen = p->kind == ORR_PLACE_THREAD ? &pid : &device;
		int64_t id = p->kind == ORR_PLACE_THREAD ? p->pid : p->device;

		if (*seen >= 0 && *seen != id)
			return NULL;
		*seen = id;
	}
	return r->world_size == 1 ? "the trace's world size 1, no communicator"
				  : "one process, no communicator";
}

/* A job of one GPU: world 1, and so tp = pp = dp = 1, each saying why. */
static void layout_one_gpu(struct orr_structure *st, const char *why)
{
	struct orr_value *v[] = { &st->tp, &st->pp, &st->dp };

	if (!known(&st->world))
		set(&st->world, 1, ORR_VALUE_INFERRED, "%s", why);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!known(v[i]) || v[i]->how == ORR_VALUE_INFERRED)
			set(v[i], 1, ORR_VALUE_INFERRED, "world 1: %s", why);
}

static void layout_rest(struct orr_structure *st, const struct scan *s, int64_t world)
{
	bool p2p = false;

	for (size_t i = 0; i < s->r->ncollectives; i++)
		p2p |= orr_coll_kind_of(orr_trace_str(s->t, s->r->collectives[i].type)) ==
		       ORR_COLL_SEND_RECV;
	if (world > 0)
		set(&st->world, world, ORR_VALUE_READ, "the trace's world size");
	if (!p2p)
		set(&st->pp, 1, ORR_VALUE_INFERRED,
		    "no point-to-point transfers: no pipeline stage boundary");
	else
		set(&st->pp, 0, ORR_VALUE_UNKNOWN,
		    "point-to-point transfers were seen, from a pipeline or from something else "
		    "(an all-to-all made of sends)");
	if (st->dp.how == ORR_VALUE_READ) {
		if (known(&st->world) && known(&st->tp) && known(&st->pp) &&
		    st->tp.value * st->pp.value * st->dp.value != world)
			set(&st->dp, 0, ORR_VALUE_UNKNOWN,
			    "tp x pp x dp (%lld x %lld x %lld) is not the world size %lld",
			    (long long)st->tp.value, (long long)st->pp.value,
			    (long long)st->dp.value, (long long)world);
	} else if (known(&st->world) && known(&st->tp) && known(&st->pp) && st->tp.value > 0 &&
		   world % (st->tp.value * st->pp.value) == 0)
		set(&st->dp, world / (st->tp.value * st->pp.value), ORR_VALUE_INFERRED,
		    "world / (tp x pp): %lld / (%lld x %lld)", (long long)world,
		    (long long)st->tp.value, (long long)st->pp.value);
	else
		set(&st->dp, 0, ORR_VALUE_UNKNOWN, "needs the world size, tp and pp");
}

/* Each collective kernel of the rank, for its communicator's role. */
static void roles(struct orr_structure *st, const struct orr_graph *g, size_t rank,
		  const struct scan *s)
{
	static const char *const optim[] = { "Optimizer.step*", "*optimizer*step*" };
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, rank);
	const struct orr_task *tasks = orr_graph_tasks(g);

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		const struct orr_event *e = &s->r->events[tasks[t].event];
		const struct orr_collective *co;
		uint32_t launch, a;
		bool back = false;
		double bytes;

		if (tasks[t].kind != ORR_TASK_GPU || e->coll >= s->r->ncollectives)
			continue;
		co = &s->r->collectives[e->coll];
		launch = orr__launch_event(g, t);
		if (launch != ORR_NONE && launch < s->r->nevents) {
			back = in_backward(s, launch);
			for (a = launch; a != ORR_NONE && !back; a = s->parent[a])
				back = name_is(event_name(s, &s->r->events[a]), optim, 2);
		}
		bytes = co->in_bytes > 0 ? (double)co->in_bytes : (double)co->out_bytes;
		if (!(bytes > 0))
			bytes = orr__caller_bytes(g, s->parent, s->r, t);
		orr__roles_note(st, s->t, s->r, co, back, bytes);
	}
	orr__roles_decide(st);
	orr__layout_from_comms(st);
}

int orr_structure_recover(const struct orr_graph *g, size_t rank, struct orr_structure *ret)
{
	struct orr_coll_obs *o;
	size_t n = orr_coll_observe(g, &o);
	int err = orr_structure_recover_obs(g, rank, o, n, ret);

	free(o);
	return err;
}

int orr_structure_recover_obs(const struct orr_graph *g, size_t rank, const struct orr_coll_obs *o,
			      size_t n, struct orr_structure *ret)
{
	const struct orr_graph_rank *gr;
	struct scan s = { 0 };
	const char *alone;

	memset(ret, 0, sizeof(*ret));
	if (rank >= orr_graph_rank_count(g))
		return -EINVAL;
	gr = orr_graph_get_rank(g, rank);
	s.t = orr_graph_trace(g);
	s.r = gr->rank;
	s.parent = orr__call_parents(s.r);
	ret->rank = s.r->rank;
	first_step(&s);
	scan_ops(&s, ret);
	transformer(ret, &s);
	orr__layers_unshaped(s.t, s.r, s.parent, ret);
	orr__tp_group(ret, o, n);
	roles(ret, g, rank, &s);
	layout_rest(ret, &s, s.r->world_size);
	alone = one_gpu(ret, &s, orr_graph_rank_count(g));
	if (alone)
		layout_one_gpu(ret, alone);
	free(s.norms.v);
	free(s.linear.v);
	free(s.scores.v);
	free(s.embeddings.v);
	free((void *)s.parent);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * GEMM roles, parts and micro-batches on a training step written here, whose every
 * GEMM is known: a 3-layer transformer (h 256, 4 heads of 64, FFN 1024, vocabulary
 * 1000, sequence 128, micro-batch 4, so T = 512) with tensor parallelism 2, two
 * micro-batches per step and two steps.  Forward ops run on thread 1 (a linear layer
 * as aten::linear around the aten::mm of its flattened input), autograd's
 * backward on thread 2 (each linear layer's data and weight gradients, as
 * evaluate_function's aten::mm, Megatron's dWᵀ = dYᵀ·X), then the optimizer.  The
 * last pipeline stage has the logits and the loss; a first stage has the embedding
 * only, so its micro-batches are its embedding lookups; a middle stage has neither.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "orrery/estimator.h"
#include "test-util.h"
#include "trace-doc.h"

enum { H = 256, HEADS = 4, HD = 64, FFN = 1024, VOCAB = 1000, SEQ = 128, MB = 4, TP = 2 };
enum { T = SEQ * MB, LAYERS = 3, MICRO = 2, STEPS = 2, B = MB * HEADS / TP };

#define BF16_2 "[\"c10::BFloat16\", \"c10::BFloat16\"]"
#define BF16_3 "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]"
#define GEMM   "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn"

struct gen {
	struct doc d;
	double ts[3]; /* per thread: where its next op starts */
	int corr;
};

/* An op on thread tid with its operands' dims and types, launching `kernel` (or none). */
static void op(struct gen *g, int tid, const char *name, const char *dims, const char *types,
	       const char *kernel)
{
	double ts = g->ts[tid];

	doc_sep(&g->d);
	doc_add(&g->d,
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 1, \"tid\": %d,"
		" \"ts\": %.3f, \"dur\": 8, \"args\": {\"External id\": %d",
		name, tid, ts, g->corr);
	if (dims)
		doc_add(&g->d, ", \"Input Dims\": %s, \"Input type\": %s", dims, types);
	doc_add(&g->d, "}}");
	if (kernel) {
		doc_call(&g->d, "cudaLaunchKernel", tid, ts + 1, 1, g->corr);
		doc_kernel(&g->d, kernel, 7, ts + 2, 5, g->corr, NULL);
		g->corr++;
	}
	g->ts[tid] += 10;
}

/* A linear layer's forward as PyTorch records it: aten::linear around aten::mm. */
static void linear(struct gen *g, int k, int n)
{
	char dims[128];

	doc_region(&g->d, "cpu_op", "aten::linear", 1, g->ts[1] - 0.5, 9);
	snprintf(dims, sizeof(dims), "[[%d, %d], [%d, %d]]", T, k, k, n);
	op(g, 1, "aten::mm", dims, BF16_2, GEMM);
}

/* Its backward, inside evaluate_function: dX = dY·W, then dWᵀ = dYᵀ·X. */
static void linear_backward(struct gen *g, int k, int n)
{
	char dims[128];

	doc_region(&g->d, "cpu_op", "autograd::engine::evaluate_function: MmBackward0", 2,
		   g->ts[2] - 1, 21);
	snprintf(dims, sizeof(dims), "[[%d, %d], [%d, %d]]", T, n, n, k);
	op(g, 2, "aten::mm", dims, BF16_2, GEMM);
	snprintf(dims, sizeof(dims), "[[%d, %d], [%d, %d]]", n, T, T, k);
	op(g, 2, "aten::mm", dims, BF16_2, GEMM);
	g->ts[2] += 2;
}

struct stage {
	bool embedding, logits;
	bool fused; /* attention as PyTorch's flash attention op, without GEMMs */
};

static void attention(struct gen *g, const struct stage *st, bool backward)
{
	char sc[160], ctx[160];
	int tid = backward ? 2 : 1;

	if (st->fused) {
		snprintf(sc, sizeof(sc), "[[%d, %d, %d, %d], [%d, %d, %d, %d], [%d, %d, %d, %d]]",
			 MB, HEADS / TP, SEQ, HD, MB, HEADS / TP, SEQ, HD, MB, HEADS / TP, SEQ, HD);
		op(g, tid,
		   backward ? "aten::_scaled_dot_product_flash_attention_backward"
			    : "aten::_scaled_dot_product_flash_attention",
		   sc, BF16_3, backward ? "flash_bwd_dq_dk_dv_loop_kernel" : "flash_fwd_kernel");
		return;
	}

	snprintf(sc, sizeof(sc), "[[%d, %d, %d], [%d, %d, %d], [%d, %d, %d]]", B, SEQ, SEQ, B, SEQ,
		 HD, B, HD, SEQ);
	snprintf(ctx, sizeof(ctx), "[[%d, %d, %d], [%d, %d, %d]]", B, SEQ, SEQ, B, SEQ, HD);
	if (backward) {
		doc_region(&g->d, "cpu_op", "autograd::engine::evaluate_function: BmmBackward0", 2,
			   g->ts[2] - 1, 21);
		/* dP = dO·Vᵀ and dV = Pᵀ·dO */
		snprintf(sc, sizeof(sc), "[[%d, %d, %d], [%d, %d, %d]]", B, SEQ, HD, B, HD, SEQ);
		op(g, tid, "aten::bmm", sc, BF16_2, GEMM);
		op(g, tid, "aten::bmm", ctx, BF16_2, GEMM);
		g->ts[2] += 2;
		return;
	}
	op(g, tid, "aten::baddbmm", sc, BF16_3, GEMM);
	op(g, tid, "aten::bmm", ctx, BF16_2, GEMM);
}

static void norm(struct gen *g)
{
	char dims[64];

	snprintf(dims, sizeof(dims), "[[%d, %d, %d], [%d], [%d]]", SEQ, MB, H, H, H);
	op(g, 1, "aten::layer_norm", dims, BF16_3, "vectorized_layer_norm_kernel");
}

static const int qkv_n = (H + 2 * HEADS * HD) / TP;

static void layer(struct gen *g, const struct stage *st)
{
	norm(g);
	linear(g, H, qkv_n);
	attention(g, st, false);
	linear(g, H / TP, H);
	norm(g);
	linear(g, H, FFN / TP);
	linear(g, FFN / TP, H);
}

static void layer_backward(struct gen *g, const struct stage *st)
{
	linear_backward(g, FFN / TP, H);
	linear_backward(g, H, FFN / TP);
	linear_backward(g, H / TP, H);
	attention(g, st, true);
	linear_backward(g, H, qkv_n);
}

static void micro_batch(struct gen *g, const struct stage *st)
{
	char dims[64];

	if (st->embedding) {
		snprintf(dims, sizeof(dims), "[[%d, %d], [%d, %d]]", VOCAB / TP, H, MB, SEQ);
		op(g, 1, "aten::embedding", dims, "[\"c10::BFloat16\", \"long int\"]",
		   "indexSelectLargeIndex");
	}
	for (int l = 0; l < LAYERS; l++)
		layer(g, st);
	if (st->logits) {
		linear(g, H, VOCAB / TP);
		op(g, 1, "aten::cross_entropy_loss", NULL, NULL, "cunn_SoftMaxForward");
	}
	g->ts[2] = g->ts[1] + 5;
	if (st->logits)
		linear_backward(g, H, VOCAB / TP);
	for (int l = 0; l < LAYERS; l++)
		layer_backward(g, st);
	if (st->embedding)
		op(g, 2, "aten::embedding_dense_backward", NULL, NULL, "embedding_backward_kernel");
	g->ts[1] = g->ts[2] + 5;
}

static struct orr_trace *training(const struct stage *st)
{
	struct gen g = { .ts = { 0, 10, 10 }, .corr = 1 };
	struct orr_trace *t;

	doc_begin(&g.d, 0, TP);
	for (int s = 1; s <= STEPS; s++) {
		double start = g.ts[1] - 5;

		for (int m = 0; m < MICRO; m++)
			micro_batch(&g, st);
		doc_region(&g.d, "user_annotation", "Optimizer.step#AdamW.step", 1, g.ts[1] - 1,
			   10);
		op(&g, 1, "aten::_foreach_add_", NULL, NULL, "multi_tensor_apply_kernel");
		doc_step(&g.d, s, start, g.ts[1] + 5 - start);
		g.ts[1] += 20;
	}
	t = doc_import(&g.d, "roles.json");
	free(g.d.s);
	return t;
}

struct role_count {
	enum orr_gemm_role role;
	enum orr_gemm_pass pass;
	size_t per_step;
};

static void check_roles(struct orr_gemm_sample *s, size_t n, const struct role_count *want,
			size_t nwant)
{
	size_t got[ORR_GEMM_ROLE_COUNT][ORR_GEMM_PASS_COUNT] = { { 0 } }, total = 0;

	for (size_t i = 0; i < n; i++)
		got[s[i].role][s[i].pass]++;
	for (size_t i = 0; i < nwant; i++) {
		size_t c = got[want[i].role][want[i].pass];

		if (c != want[i].per_step * STEPS)
			fail_msg("%s %s: %zu GEMMs, not %zu", orr_gemm_role_name(want[i].role),
				 orr_gemm_pass_name(want[i].pass), c, want[i].per_step * STEPS);
		total += c;
	}
	/* Nothing else, and nothing unknown. */
	assert_int_equal(total, n);
}

static void structure_of(const struct orr_graph *g, struct orr_structure *s)
{
	assert_int_equal(orr_structure_recover(g, 0, s), 0);
	assert_int_equal(s->hidden.value, H);
	assert_int_equal(s->heads.value, HEADS);
	assert_int_equal(s->ffn.value, FFN);
	assert_int_equal(s->tokens.value, T);
	assert_int_equal(s->tp.value, TP);
	assert_true(s->forward && s->backward && s->optimizer);
}

static struct orr_graph *graph_of(struct orr_trace *t)
{
	struct orr_graph *g;
	struct orr_diag d;

	if (orr_graph_build(t, NULL, &g, &d))
		fail_msg("%s", d.msg);
	return g;
}

/* The last stage: every GEMM's role and pass; logits, loss and optimizer as parts. */
static void test_roles_last_stage(void **state)
{
	const struct stage st = { .embedding = true, .logits = true };
	const size_t per_layer = (size_t)MICRO * LAYERS;
	const struct role_count want[] = {
		{ ORR_GEMM_ROLE_QKV, ORR_GEMM_FORWARD, per_layer },
		{ ORR_GEMM_ROLE_QKV, ORR_GEMM_DGRAD, per_layer },
		{ ORR_GEMM_ROLE_QKV, ORR_GEMM_WGRAD, per_layer },
		{ ORR_GEMM_ROLE_PROJ, ORR_GEMM_FORWARD, per_layer },
		{ ORR_GEMM_ROLE_PROJ, ORR_GEMM_DGRAD, per_layer },
		{ ORR_GEMM_ROLE_PROJ, ORR_GEMM_WGRAD, per_layer },
		{ ORR_GEMM_ROLE_FC1, ORR_GEMM_FORWARD, per_layer },
		{ ORR_GEMM_ROLE_FC1, ORR_GEMM_DGRAD, per_layer },
		{ ORR_GEMM_ROLE_FC1, ORR_GEMM_WGRAD, per_layer },
		{ ORR_GEMM_ROLE_FC2, ORR_GEMM_FORWARD, per_layer },
		{ ORR_GEMM_ROLE_FC2, ORR_GEMM_DGRAD, per_layer },
		{ ORR_GEMM_ROLE_FC2, ORR_GEMM_WGRAD, per_layer },
		{ ORR_GEMM_ROLE_ATTENTION, ORR_GEMM_FORWARD, 2 * per_layer },
		{ ORR_GEMM_ROLE_ATTENTION, ORR_GEMM_DGRAD, 2 * per_layer },
		{ ORR_GEMM_ROLE_LOGITS, ORR_GEMM_FORWARD, MICRO },
		{ ORR_GEMM_ROLE_LOGITS, ORR_GEMM_DGRAD, MICRO },
		{ ORR_GEMM_ROLE_LOGITS, ORR_GEMM_WGRAD, MICRO },
	};
	struct orr_trace *t = training(&st);
	struct orr_graph *g = graph_of(t);
	struct orr_gemm_sample *s;
	struct orr_structure str;
	struct orr_parts p;
	size_t n = orr_gemm_observe(g, &s, NULL);

	(void)state;
	structure_of(g, &str);
	assert_int_equal(str.layers.value, LAYERS);
	assert_int_equal(str.vocab.value, VOCAB);
	assert_int_equal(str.micro_batches.value, MICRO);
	assert_int_equal(str.micro_batch.value, MB);
	assert_int_equal(str.seq.value, SEQ);
	assert_int_equal(orr_gemm_label(&str, s, n), n);
	check_roles(s, n, want, sizeof(want) / sizeof(want[0]));

	assert_int_equal(orr_parts_measure(g, 0, s, n, &p), 0);
	assert_int_equal(p.steps, STEPS);
	/* Per micro-batch: a lookup and its gradient; the logits' 3 GEMMs; the loss. */
	assert_int_equal(p.part[ORR_PART_EMBEDDING].kernels, 2 * MICRO * STEPS);
	assert_int_equal(p.part[ORR_PART_LOGITS].kernels, 3 * MICRO * STEPS);
	assert_int_equal(p.part[ORR_PART_LOSS].kernels, MICRO * STEPS);
	assert_int_equal(p.part[ORR_PART_OPTIMIZER].kernels, STEPS);
	/* A layer: 2 norms, 6 forward GEMMs, 10 backward. */
	assert_int_equal(p.part[ORR_PART_LAYERS].kernels, 18 * LAYERS * MICRO * STEPS);
	assert_int_equal(p.part[ORR_PART_OTHER].kernels, 0);
	assert_float_equal(p.part[ORR_PART_LOGITS].backward_ns, 2 * MICRO * STEPS * 5 * US, 1);
	assert_float_equal(p.part[ORR_PART_EMBEDDING].backward_ns, MICRO * STEPS * 5 * US, 1);
	assert_float_equal(p.part[ORR_PART_OPTIMIZER].backward_ns, 0, 0);

	/* No transformer, no labels. */
	memset(&str, 0, sizeof(str));
	assert_int_equal(orr_gemm_label(&str, s, n), 0);
	assert_int_equal(s[0].role, ORR_GEMM_ROLE_UNKNOWN);
	assert_int_equal(s[0].pass, ORR_GEMM_PASS_UNKNOWN);
	free(s);
	orr_graph_free(g);
	orr_trace_free(t);
}

/* A first stage counts its micro-batches by its lookups; a middle one cannot. */
static void test_roles_other_stages(void **state)
{
	const struct stage first = { .embedding = true }, middle = { 0 };
	struct orr_trace *t = training(&first);
	struct orr_graph *g = graph_of(t);
	struct orr_structure str;

	(void)state;
	structure_of(g, &str);
	assert_int_equal(str.micro_batches.value, MICRO);
	assert_int_equal(str.micro_batches.how, ORR_VALUE_INFERRED);
	assert_non_null(strstr(str.micro_batches.why, "embedding"));
	assert_int_equal(str.layers.value, LAYERS);
	assert_int_equal(str.vocab.how, ORR_VALUE_UNKNOWN);
	assert_non_null(strstr(str.vocab.why, "logits"));
	orr_graph_free(g);
	orr_trace_free(t);

	t = training(&middle);
	g = graph_of(t);
	structure_of(g, &str);
	assert_int_equal(str.micro_batches.how, ORR_VALUE_UNKNOWN);
	assert_non_null(strstr(str.micro_batches.why, "middle pipeline stage"));
	/* Layers are then QKV GEMMs per step: every micro-batch's. */
	assert_int_equal(str.layers.value, LAYERS * MICRO);
	orr_graph_free(g);
	orr_trace_free(t);
}

/* Fused attention gives the sequence and heads; its layer has no attention GEMMs. */
static void test_roles_fused_attention(void **state)
{
	const struct stage st = { .embedding = true, .logits = true, .fused = true };
	struct orr_trace *t = training(&st);
	struct orr_graph *g = graph_of(t);
	struct orr_gemm_sample *s;
	struct orr_structure str;
	size_t n = orr_gemm_observe(g, &s, NULL);

	(void)state;
	structure_of(g, &str);
	assert_int_equal(str.seq.value, SEQ);
	assert_int_equal(str.head_dim.value, HD);
	assert_int_equal(str.layers.value, LAYERS);
	assert_int_equal(orr_gemm_label(&str, s, n), n);
	for (size_t i = 0; i < n; i++)
		assert_int_not_equal(s[i].role, ORR_GEMM_ROLE_ATTENTION);
	free(s);
	orr_graph_free(g);
	orr_trace_free(t);
}

/* ---- re-shaping GEMMs for another configuration ---- */

static bool same_shape(const struct orr_gemm_sample *a, const struct orr_gemm_sample *b)
{
	return a->batch == b->batch && a->m == b->m && a->n == b->n && a->k == b->k &&
	       a->flops == b->flops && a->bytes == b->bytes;
}

/* The shape s takes in `to`, which must succeed. */
static struct orr_gemm_sample reshaped(const struct orr_gemm_sample *s,
				       const struct orr_train_config *from,
				       const struct orr_train_config *to)
{
	struct orr_gemm_sample r;
	int err = orr_gemm_reshape(s, from, to, &r);

	if (err)
		fail_msg("%s %s [%lld %lld %lld %lld]: %d", orr_gemm_role_name(s->role),
			 orr_gemm_pass_name(s->pass), (long long)s->batch, (long long)s->m,
			 (long long)s->k, (long long)s->n, err);
	return r;
}

static void expect(const struct orr_gemm_sample *r, int64_t batch, int64_t m, int64_t k, int64_t n)
{
	if (r->batch != batch || r->m != m || r->k != k || r->n != n)
		fail_msg("%s %s: [%lld %lld %lld %lld], not [%lld %lld %lld %lld]",
			 orr_gemm_role_name(r->role), orr_gemm_pass_name(r->pass),
			 (long long)r->batch, (long long)r->m, (long long)r->k, (long long)r->n,
			 (long long)batch, (long long)m, (long long)k, (long long)n);
	assert_float_equal(r->flops, 2.0 * batch * m * n * k, 0);
}

/*
 * Every GEMM of the written step at its own configuration is itself; at TP 1 and
 * micro-batch 8 each role and pass has the shape Megatron would give it, the weight
 * gradient kept in the traced N×T·T×K orientation.
 */
static void test_reshape_synthetic(void **state)
{
	const struct stage st = { .embedding = true, .logits = true };
	struct orr_trace *t = training(&st);
	struct orr_graph *g = graph_of(t);
	struct orr_train_config from, to;
	struct orr_gemm_sample *s, r;
	struct orr_structure str;
	const char *missing = NULL;
	size_t n = orr_gemm_observe(g, &s, NULL);
	const int64_t T2 = 2 * T;

	(void)state;
	structure_of(g, &str);
	orr_gemm_label(&str, s, n);
	assert_int_equal(orr_train_config_from_structure(&str, &from, &missing), 0);
	assert_int_equal(from.tp, TP);
	assert_int_equal(from.micro_batches, MICRO);
	to = from;
	to.tp = 1;
	to.micro_batch = 2 * MB;
	for (size_t i = 0; i < n; i++) {
		const int64_t qkv = H + 2 * HEADS * HD;

		r = reshaped(&s[i], &from, &from);
		assert_true(same_shape(&r, &s[i]));
		r = reshaped(&s[i], &from, &to);
		if (s[i].role == ORR_GEMM_ROLE_ATTENTION)
			expect(&r, 2 * MB * HEADS, SEQ, s[i].k == HD ? HD : SEQ,
			       s[i].k == HD ? SEQ : HD);
		else if (s[i].role == ORR_GEMM_ROLE_QKV && s[i].pass == ORR_GEMM_FORWARD)
			expect(&r, 1, T2, H, qkv);
		else if (s[i].role == ORR_GEMM_ROLE_QKV && s[i].pass == ORR_GEMM_WGRAD)
			expect(&r, 1, qkv, T2, H);
		else if (s[i].role == ORR_GEMM_ROLE_FC2 && s[i].pass == ORR_GEMM_DGRAD)
			expect(&r, 1, T2, H, FFN);
		else if (s[i].role == ORR_GEMM_ROLE_LOGITS && s[i].pass == ORR_GEMM_FORWARD)
			expect(&r, 1, T2, H, VOCAB);
	}
	/* A layout Megatron refuses; a sample without a role. */
	to.tp = 3;
	assert_int_equal(orr_gemm_reshape(&s[0], &from, &to, &r), -EINVAL);
	s[0].role = ORR_GEMM_ROLE_UNKNOWN;
	assert_int_equal(orr_gemm_reshape(&s[0], &from, &from, &r), -EINVAL);
	/* Without a transformer there is no configuration to recover. */
	memset(&str, 0, sizeof(str));
	assert_int_equal(orr_train_config_from_structure(&str, &from, &missing), -ENOENT);
	assert_string_equal(missing, "layers");
	free(s);
	orr_graph_free(g);
	orr_trace_free(t);
}

/* The Megatron job's configuration, and its GEMMs at TP 4: twice as wide. */
static void test_reshape_megatron(void **state)
{
	struct orr_trace *t = import_shared("astrasim-megatron-tp8");
	struct orr_graph *g = graph_of(t);
	struct orr_train_config from, to;
	struct orr_gemm_sample *s, r;
	struct orr_structure str;
	size_t n = orr_gemm_observe(g, &s, NULL), checked = 0;

	(void)state;
	assert_int_equal(orr_structure_recover(g, 0, &str), 0);
	assert_int_equal(orr_gemm_label(&str, s, n), n);
	assert_int_equal(orr_train_config_from_structure(&str, &from, NULL), 0);
	assert_int_equal(from.layers, 40);
	assert_int_equal(from.vocab, 51200);
	assert_int_equal(from.tp, 8);
	to = from;
	to.tp = 4;
	for (size_t i = 0; i < n; i++) {
		r = reshaped(&s[i], &from, &from);
		assert_true(same_shape(&r, &s[i]));
		r = reshaped(&s[i], &from, &to);
		switch (s[i].role) {
		case ORR_GEMM_ROLE_QKV:
		case ORR_GEMM_ROLE_FC1:
		case ORR_GEMM_ROLE_LOGITS:
			expect(&r, 1, s[i].m, s[i].k, 2 * s[i].n);
			break;
		case ORR_GEMM_ROLE_PROJ:
		case ORR_GEMM_ROLE_FC2:
			expect(&r, 1, s[i].m, 2 * s[i].k, s[i].n);
			break;
		default:
			expect(&r, 2 * s[i].batch, s[i].m, s[i].k, s[i].n);
		}
		checked++;
	}
	assert_int_equal(checked, 241 * 8);
	free(s);
	orr_graph_free(g);
	orr_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roles_last_stage),
		cmocka_unit_test(test_roles_other_stages),
		cmocka_unit_test(test_roles_fused_attention),
		cmocka_unit_test(test_reshape_synthetic),
		cmocka_unit_test(test_reshape_megatron),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

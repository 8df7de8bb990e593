/* SPDX-License-Identifier: MIT */
/*
 * Structure recovery on real traces.  The Megatron TP=8 job must come out exactly as it
 * was run: 40 layers, hidden 4096, 64 heads of 64, FFN 16384, vocabulary 51200,
 * sequence 2048, micro-batch 4, TP 8 (PP 1, DP 1 in a world of 8), forward only.  Every
 * other shared trace (ResNet, recommenders, micro-benchmarks) is no transformer, and
 * must say so, with a reason, rather than guess.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/estimator.h"
#include "test-util.h"
#include "trace-doc.h"

static void check(const struct orr_value *v, int64_t want, enum orr_value_how how, const char *what)
{
	if (v->value != want || v->how != how)
		fail_msg("%s: %lld (%s: %s), not %lld (%s)", what, (long long)v->value,
			 orr_value_how_name(v->how), v->why, (long long)want,
			 orr_value_how_name(how));
	assert_true(v->why[0] != '\0');
}

static void test_structure_megatron_tp8(void **state)
{
	struct orr_trace *t = import_shared("astrasim-megatron-tp8");
	struct orr_graph *g;
	struct orr_structure s;
	struct orr_diag d;

	(void)state;
	if (orr_graph_build(t, NULL, &g, &d))
		fail_msg("%s", d.msg);
	for (size_t r = 0; r < orr_graph_rank_count(g); r++) {
		assert_int_equal(orr_structure_recover(g, r, &s), 0);
		check(&s.layers, 40, ORR_VALUE_INFERRED, "layers");
		check(&s.hidden, 4096, ORR_VALUE_READ, "hidden");
		check(&s.heads, 64, ORR_VALUE_INFERRED, "heads");
		check(&s.head_dim, 64, ORR_VALUE_READ, "head dim");
		check(&s.kv_groups, 64, ORR_VALUE_INFERRED, "kv groups");
		check(&s.ffn, 16384, ORR_VALUE_INFERRED, "ffn");
		check(&s.vocab, 51200, ORR_VALUE_INFERRED, "vocab");
		check(&s.seq, 2048, ORR_VALUE_READ, "seq");
		check(&s.micro_batch, 4, ORR_VALUE_INFERRED, "micro-batch");
		check(&s.tokens, 8192, ORR_VALUE_READ, "tokens");
		check(&s.micro_batches, 1, ORR_VALUE_INFERRED, "micro-batches");
		check(&s.tp, 8, ORR_VALUE_READ, "tp");
		check(&s.pp, 1, ORR_VALUE_INFERRED, "pp");
		check(&s.dp, 1, ORR_VALUE_INFERRED, "dp");
		check(&s.world, 8, ORR_VALUE_READ, "world");
		assert_true(s.forward);
		assert_false(s.backward);
		assert_false(s.optimizer);
		assert_false(s.fused_attention); /* Megatron's unfused baddbmm and bmm */
		assert_false(s.gated_mlp);
		/* Without the shapes, the kernels say the same: 40 repeats of a layer. */
		check(&s.repeats, 40, ORR_VALUE_INFERRED, "repeats");
		assert_int_equal(s.repeat_kernels, 14);
		assert_int_equal(s.annotated_layers.how, ORR_VALUE_UNKNOWN);
		/* One unnamed communicator; its forward all-reduces of T x h make it TP. */
		assert_int_equal(s.ncomms, 1);
		assert_int_equal(s.comms[0].role, ORR_PAR_TP);
		assert_int_equal(s.comms[0].how, ORR_VALUE_INFERRED);
		assert_int_equal(s.comms[0].collectives, 84);
		assert_int_equal(s.comms[0].activations, 81);
	}
	assert_int_equal(orr_structure_recover(g, orr_graph_rank_count(g), &s), -EINVAL);
	orr_graph_free(g);
	orr_trace_free(t);
}

/*
 * The TP group is the one most activation all-reduces have: on the Megatron job, the
 * last of them (and then three of them) given a group of 2, as a gradient bucket of a
 * size that happens to be a multiple of T x h would be, leaves TP 8 and says so.
 */
static void test_structure_tp_group_by_most(void **state)
{
	struct orr_trace *t = import_shared("astrasim-megatron-tp8");
	struct orr_graph *g;
	struct orr_structure s;
	struct orr_coll_obs *o;
	struct orr_diag d;
	size_t n, changed = 0;

	(void)state;
	if (orr_graph_build(t, NULL, &g, &d))
		fail_msg("%s", d.msg);
	n = orr_coll_observe(g, &o);
	for (size_t i = n; i-- > 0 && changed < 3;)
		if (o[i].kind == ORR_COLL_ALL_REDUCE && o[i].s.group == 8 &&
		    (int64_t)o[i].s.bytes == 8192 * 4096 * 2) {
			o[i].s.group = 2;
			assert_int_equal(orr_structure_recover_obs(g, 0, o, n, &s), 0);
			check(&s.tp, 8, ORR_VALUE_READ, "tp");
			assert_non_null(strstr(s.tp.why, "of the 81 all-reduces"));
			assert_non_null(strstr(s.tp.why, "others are of another group"));
			changed++;
		}
	assert_int_equal(changed, 3);
	free(o);
	orr_graph_free(g);
	orr_trace_free(t);
}

/* Every other shared trace: no transformer, said with a reason; phases found. */
static void no_transformer(struct orr_trace *t, const char *name, void *data)
{
	struct orr_graph *g;
	struct orr_structure s;
	struct orr_diag d;
	size_t *n = data;

	if (strcmp(name, "astrasim-megatron-tp8") == 0)
		return;
	if (orr_graph_build(t, NULL, &g, &d))
		fail_msg("%s: %s", name, d.msg);
	assert_int_equal(orr_structure_recover(g, 0, &s), 0);
	/* A world of one (one process, no communicator) has tp 1 transformer or not. */
	if (s.layers.how != ORR_VALUE_UNKNOWN || s.hidden.how != ORR_VALUE_UNKNOWN ||
	    (s.tp.how != ORR_VALUE_UNKNOWN && !(s.world.value == 1 && s.tp.value == 1)))
		fail_msg("%s: a transformer? layers %lld (%s), hidden %lld, tp %lld", name,
			 (long long)s.layers.value, s.layers.why, (long long)s.hidden.value,
			 (long long)s.tp.value);
	assert_non_null(strstr(s.layers.why, "not fit a transformer"));
	/* DDP's gradient all-reduces, launched from the backward pass. */
	if (strcmp(name, "hta-ddp-resnet-rank0.json.gz") == 0) {
		assert_int_equal(s.ncomms, 1);
		assert_string_equal(s.comms[0].desc, "default_pg");
		assert_int_equal(s.comms[0].size, 2);
		assert_int_equal(s.comms[0].role, ORR_PAR_DP);
		assert_int_equal(s.comms[0].how, ORR_VALUE_INFERRED);
	}
	assert_true(s.forward);
	/* Training traces show their backward pass and optimizer. */
	if (strncmp(name, "hta-ddp", 7) == 0 || strncmp(name, "param-linear", 12) == 0)
		assert_true(s.backward && s.optimizer);
	(*n)++;
	orr_graph_free(g);
}

static void test_structure_others_say_unknown(void **state)
{
	size_t n = 0;

	(void)state;
	for_each_shared_trace(no_transformer, &n);
	assert_true(n >= 10);
}

/*
 * Two steps of a 6-layer model whose layers are annotated (DecoderLayer, as Hugging Face
 * names them) and run 4 kinds of kernel each, inside an embedding and a head, plus a
 * loop of one kernel that must not count as a block; and a backward pass whose
 * annotated layers must not count either.
 */
static void test_structure_annotations_and_period(void **state)
{
	static const char *const kernels[] = { "norm_kernel", "gemm_kernel", "attn_kernel",
					       "gelu_kernel" };
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_structure s;
	struct orr_diag diag;
	double ts = 0;

	(void)state;
	doc_begin(&d, 0, 1);
	for (int step = 1; step <= 2; step++) {
		double step_start = ts;

		doc_kernel(&d, "embedding_kernel", 7, ts += 10, 5, -1, NULL);
		for (int l = 0; l < 6; l++) {
			doc_region(&d, "cpu_op", "LlamaDecoderLayer", 1, ts, 100);
			doc_region(&d, "cpu_op", "aten::mm", 1, ts + 1, 10);
			for (int k = 0; k < 4; k++)
				doc_kernel(&d, kernels[k], 7, ts += 10, 5, -1, NULL);
			ts += 100;
		}
		for (int k = 0; k < 20; k++) /* a loop of one kernel */
			doc_kernel(&d, "fill_kernel", 7, ts += 10, 5, -1, NULL);
		doc_region(&d, "cpu_op", "autograd::engine::evaluate_function: MmBackward0", 2, ts,
			   400);
		for (int l = 0; l < 3; l++)
			doc_region(&d, "cpu_op", "LlamaDecoderLayer", 2, ts + 1 + l * 100, 50);
		ts += 500;
		doc_step(&d, step, step_start, ts - step_start);
		ts += 10;
	}
	t = doc_import(&d, "layers.json");
	if (orr_graph_build(t, NULL, &g, &diag))
		fail_msg("%s", diag.msg);
	assert_int_equal(orr_structure_recover(g, 0, &s), 0);
	check(&s.annotated_layers, 6, ORR_VALUE_READ, "annotated layers");
	check(&s.repeats, 6, ORR_VALUE_INFERRED, "repeats");
	assert_int_equal(s.repeat_kernels, 4);
	assert_true(s.backward);
	orr_graph_free(g);
	orr_trace_free(t);
	free(d.s);
}

/*
 * Communicators whose names say their role: Megatron-Core's and torchtitan's; and those
 * whose names say they span several dimensions (tp x dp, dp x cp, ...), which have none.
 */
static void test_structure_named_communicators(void **state)
{
	static const struct {
		const char *name, *desc;
		enum orr_par role;
	} pgs[] = {
		{ "3", "TENSOR_MODEL_PARALLEL_GROUP", ORR_PAR_TP },
		{ "4", "DATA_PARALLEL_GROUP", ORR_PAR_DP },
		{ "5", "PIPELINE_MODEL_PARALLEL_GROUP", ORR_PAR_PP },
		{ "6", "mesh_cp", ORR_PAR_CP },
		{ "7", "EXPERT_MODEL_PARALLEL_GROUP", ORR_PAR_EP },
		{ "8", "default_pg", ORR_PAR_UNKNOWN },
		{ "9", "dp_shard", ORR_PAR_DP },
		/* groups over several dimensions, or part of one: no role, none of the sizes */
		{ "10", "TENSOR_AND_DATA_PARALLEL_GROUP", ORR_PAR_UNKNOWN },
		{ "11", "DATA_PARALLEL_GROUP_WITH_CP", ORR_PAR_UNKNOWN },
		{ "12", "MODEL_PARALLEL_GROUP", ORR_PAR_UNKNOWN },
		{ "13", "EXPERT_TENSOR_PARALLEL_GROUP", ORR_PAR_UNKNOWN },
		{ "14", "EMBEDDING_GROUP", ORR_PAR_UNKNOWN },
		{ "15", "dp_shard_cp", ORR_PAR_UNKNOWN },
	};
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_structure s;
	struct orr_diag diag;
	char extra[256];

	(void)state;
	doc_begin(&d, 0, 8);
	for (size_t i = 0; i < sizeof(pgs) / sizeof(pgs[0]); i++) {
		snprintf(extra, sizeof(extra),
			 ", \"Collective name\": \"allreduce\", \"Process Group Name\": \"%s\","
			 " \"Process Group Description\": \"%s\", \"Group size\": 2,"
			 " \"In msg nelems\": 4, \"dtype\": \"Float\"",
			 pgs[i].name, pgs[i].desc);
		doc_call(&d, "cudaLaunchKernel", 1, 10 + 100 * (double)i, 5, (int)i + 1);
		doc_kernel(&d, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, 20 + 100 * (double)i,
			   10, (int)i + 1, extra);
	}
	t = doc_import(&d, "pgs.json");
	if (orr_graph_build(t, NULL, &g, &diag))
		fail_msg("%s", diag.msg);
	assert_int_equal(orr_structure_recover(g, 0, &s), 0);
	assert_int_equal(s.ncomms, sizeof(pgs) / sizeof(pgs[0]));
	for (size_t i = 0; i < s.ncomms; i++) {
		assert_string_equal(s.comms[i].name, pgs[i].name);
		assert_string_equal(s.comms[i].desc, pgs[i].desc);
		assert_int_equal(s.comms[i].size, 2);
		if (s.comms[i].role != pgs[i].role)
			fail_msg("%s: %s, not %s", pgs[i].desc, orr_par_name(s.comms[i].role),
				 orr_par_name(pgs[i].role));
		assert_int_equal(s.comms[i].how, pgs[i].role == ORR_PAR_UNKNOWN ? ORR_VALUE_UNKNOWN
										: ORR_VALUE_READ);
		if (i >= 9)
			assert_non_null(strstr(s.comms[i].why, "several parallel dimensions"));
	}
	/* TP 2 from its own group, whatever the size of tp x dp's */
	check(&s.tp, 2, ORR_VALUE_READ, "tp");
	orr_graph_free(g);
	orr_trace_free(t);
	free(d.s);
}

/*
 * A trace of one process: kernels on one device, launched from one thread, and what
 * makes it one rank of a larger job instead.  how: 0 nothing, 1 a distributedInfo of
 * world w, 2 an NCCL kernel, 3 a second process's thread, 4 a second device's stream.
 */
static void one_process(int how, int w, struct orr_structure *s)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_diag diag;
	int corr = 1;

	doc_begin(&d, how == 1 ? 0 : -1, w);
	for (int k = 0; k < 4; k++)
		doc_launch(&d, "gemm_kernel", 10 + 20 * k, 5, &corr);
	if (how == 2) {
		doc_call(&d, "cudaLaunchKernel", 1, 100, 1, corr);
		doc_kernel(&d, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 7, 102, 10, corr,
			   ", \"Collective name\": \"allreduce\", \"Group size\": 2,"
			   " \"In msg nelems\": 4, \"dtype\": \"Float\"");
	}
	if (how == 3) {
		doc_sep(&d);
		doc_add(&d, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\","
			    " \"pid\": 2, \"tid\": 5, \"ts\": 120, \"dur\": 5}");
	}
	if (how == 4) {
		doc_sep(&d);
		doc_add(&d, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 1,"
			    " \"tid\": 9, \"ts\": 130, \"dur\": 5, \"args\": {\"stream\": 9,"
			    " \"device\": 1}}");
	}
	t = doc_import(&d, "one.json");
	if (orr_graph_build(t, NULL, &g, &diag))
		fail_msg("%s", diag.msg);
	assert_int_equal(orr_structure_recover(g, 0, s), 0);
	orr_graph_free(g);
	orr_trace_free(t);
	free(d.s);
}

/* One process with no communicator is a world of 1: tp = pp = dp = 1, and says why. */
static void test_structure_one_gpu(void **state)
{
	struct orr_structure s;

	(void)state;
	one_process(0, 0, &s);
	check(&s.world, 1, ORR_VALUE_INFERRED, "world");
	assert_non_null(strstr(s.world.why, "one process, no communicator"));
	check(&s.tp, 1, ORR_VALUE_INFERRED, "tp");
	check(&s.pp, 1, ORR_VALUE_INFERRED, "pp");
	check(&s.dp, 1, ORR_VALUE_INFERRED, "dp");
	assert_non_null(strstr(s.dp.why, "world 1"));
	/* A world size of 1 in the trace says the same. */
	one_process(1, 1, &s);
	check(&s.world, 1, ORR_VALUE_READ, "world");
	check(&s.dp, 1, ORR_VALUE_INFERRED, "dp");
}

/* A rank of a larger job, or a trace of several processes or GPUs: dp stays unknown. */
static void test_structure_not_one_gpu(void **state)
{
	struct orr_structure s;

	(void)state;
	one_process(1, 2, &s); /* world 2 */
	check(&s.world, 2, ORR_VALUE_READ, "world");
	assert_int_equal(s.dp.how, ORR_VALUE_UNKNOWN);
	for (int how = 2; how <= 4; how++) {
		one_process(how, 0, &s);
		if (s.world.how != ORR_VALUE_UNKNOWN || s.dp.how != ORR_VALUE_UNKNOWN)
			fail_msg("case %d: world %lld (%s), dp %lld (%s)", how,
				 (long long)s.world.value, s.world.why, (long long)s.dp.value,
				 s.dp.why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_structure_megatron_tp8),
		cmocka_unit_test(test_structure_tp_group_by_most),
		cmocka_unit_test(test_structure_others_say_unknown),
		cmocka_unit_test(test_structure_annotations_and_period),
		cmocka_unit_test(test_structure_named_communicators),
		cmocka_unit_test(test_structure_one_gpu),
		cmocka_unit_test(test_structure_not_one_gpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

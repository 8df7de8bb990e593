/* SPDX-License-Identifier: MIT */
/*
 * Steps synthesized from a model description (estimator/synth/): they import, build
 * into a graph with every dependency read from the trace's own records, and replay to
 * the timeline the synthesizer placed; and they behave as Megatron's steps must: more
 * GPUs at a fixed global batch never more compute per GPU, interleaving never a larger
 * bubble, recompute never faster, twice the layers about twice the layers' time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orrery/estimator.h"
#include "orrery/graph.h"
#include "orrery/replay.h"
#include "orrery/trace.h"
#include "../../estimator/internal.h"
#include "synth-test.h"

/* synth-test.h's small GPT of 8 layers. */
static struct orr_train_config small(void)
{
	return small_gpt(8);
}

static struct orr_synth synth(const struct orr_train_config *c, bool forward_only)
{
	struct orr_synth_costs k = table_costs();
	struct orr_synth s;
	const char *why = NULL;

	assert_int_equal(orr_synth_step(c, forward_only, &k, &s, &why), 0);
	assert_null(why);
	return s;
}

/* The replayed job step of s, ns. */
static double replayed(const struct orr_synth *s, uint64_t *ret_inferred)
{
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_replay *r = NULL;
	struct orr_replay_step *steps = NULL;
	struct orr_graph_stats st;
	struct orr_diag d;
	size_t n = 0;
	double ns;

	assert_int_equal(orr_trace_import_buffer("synth", s->json, s->len, NULL, &t, &d), 0);
	assert_int_equal(orr_trace_rank_count(t), s->ranks);
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	orr_graph_get_stats(g, &st);
	*ret_inferred = 0;
	for (int k = 0; k < ORR_DEP_COUNT; k++)
		*ret_inferred += st.inferred[k];
	assert_int_equal(orr_replay_run(g, NULL, &r, &d), 0);
	orr_replay_job_steps(r, &steps, &n);
	assert_int_equal(n, 1);
	ns = (double)(steps[0].predicted_end_ns - steps[0].predicted_start_ns);
	free(steps);
	orr_replay_free(r);
	orr_graph_free(g);
	orr_trace_free(t);
	return ns;
}

static double step_of(const struct orr_train_config *c, bool forward_only)
{
	struct orr_synth s = synth(c, forward_only);
	uint64_t inferred;
	double ns = replayed(&s, &inferred);

	orr_synth_release(&s);
	return ns;
}

/*
 * orr_synth_time() places the same step without writing it (what a sweep evaluates): the
 * same times, and a breakdown of the first stage whose parts cover its span.
 */
static void placed_only(const struct orr_train_config *c, const struct orr_synth *full)
{
	struct orr_synth_costs k = table_costs();
	struct orr_synth s;
	double parts;

	assert_int_equal(orr_synth_time(c, false, &k, NULL, &s, NULL), 0);
	assert_null(s.json);
	assert_true(s.placed_ns == full->placed_ns && s.bubble_ns == full->bubble_ns);
	assert_int_equal(s.kernels, full->kernels);
	parts = s.placed_compute_ns + s.placed_overlapped_ns + s.placed_comm_ns + s.placed_other_ns;
	assert_true(fabs(parts - s.placed_ns) < 1);
	assert_true(s.placed_compute_ns > 0 && s.placed_comm_ns >= 0 && s.placed_other_ns >= 0);
	orr_synth_release(&s);
}

/*
 * A TP group across two DGX A100 nodes: each layer's all-reduce of T x h elements takes
 * NCCL's model of the ring over the 8 NICs a node's members use (24 GB/s a channel after
 * NCCL's speed ladder; the DGX A100's AMD CPUs), more than the same all-reduce inside
 * one node over NVLink and more than the NICs' bus bandwidth alone.  Two layers more add
 * four of them in the forward pass.
 */
static void test_synth_tp_across_nodes(void **state)
{
	struct orr_train_config c = small();
	struct orr_synth_costs k = table_costs();
	struct orr_nccl_net net = {
		.ranks = 16,
		.nodes = 2,
		.channels = 8,
		.channel_gbps = 24,
		.amd_cpu = true,
	};
	struct orr_nccl_choice nccl;
	struct orr_synth a, b;
	double bytes, per;

	(void)state;
	c.tp = 16;
	c.pp = c.dp = 1;
	c.micro_batches = 1;
	c.layers = 2;
	bytes = (double)(c.micro_batch * c.seq * c.hidden) * 2;
	assert_int_equal(orr_synth_time(&c, true, &k, NULL, &a, NULL), 0);
	c.layers = 4;
	assert_int_equal(orr_synth_time(&c, true, &k, NULL, &b, NULL), 0);
	per = (b.tp_ns - a.tp_ns) / 4;
	assert_int_equal(orr__nccl_net_time(&net, ORR_COLL_ALL_REDUCE, bytes, &nccl), 0);
	assert_true(fabs(per - nccl.ns) < 1e-6 * nccl.ns);
	assert_true(per > bytes * orr_coll_bus_factor(ORR_COLL_ALL_REDUCE, 16) / (8 * 25e9) * 1e9);
	orr_synth_release(&a);
	orr_synth_release(&b);
	c.tp = 8;
	assert_int_equal(orr_synth_time(&c, true, &k, NULL, &b, NULL), 0);
	c.layers = 2;
	assert_int_equal(orr_synth_time(&c, true, &k, NULL, &a, NULL), 0);
	assert_true((b.tp_ns - a.tp_ns) / 4 < per);
	orr_synth_release(&a);
	orr_synth_release(&b);
}

/*
 * DP of 2^31 - 1 (estimate --dp, or a trace's world size): NCCL's model of the group
 * across nodes counts its nodes without overflowing an int (UBSan: 2147483647 + 8).
 */
static void test_synth_dp_of_int_max(void **state)
{
	struct orr_train_config c = small();
	struct orr_synth_costs k = table_costs();
	struct orr_synth a;

	(void)state;
	c.tp = c.pp = 1;
	c.dp = INT32_MAX;
	c.micro_batches = 1;
	c.layers = 2;
	assert_int_equal(orr_synth_time(&c, true, &k, NULL, &a, NULL), 0);
	assert_true(a.dp_ns > 0 && isfinite(a.dp_ns));
	orr_synth_release(&a);
}

/* The replay runs the rules the synthesizer placed by: the same step, nothing inferred. */
static void test_synth_replays_as_placed(void **state)
{
	struct orr_train_config cs[8] = { small(), small(), small(), small(),
					  small(), small(), small(), small() };

	(void)state;
	cs[1].vpp = 2;
	cs[1].layers = 8;
	cs[2].pp = 1;
	cs[2].sequence_parallel = true;
	cs[2].distributed_optimizer = true;
	cs[2].flash_attention = false;
	cs[3].fully_sharded = true; /* waits on records made before the latest work */
	cs[4].overlap_grad_reduce = true;
	cs[4].vpp = 2;
	cs[5].tp = cs[5].pp = 1; /* context parallelism: the ring's exchanges beside attention */
	cs[5].cp = 2;
	cs[6].layers = 16; /* long stages: waits on other streams among few queued kernels */
	cs[7].pp = 4;      /* an uneven split: 3, 2, 2, 1 */
	cs[7].first_stage_layers = 3;
	cs[7].last_stage_layers = 1;
	for (int i = 0; i < 8; i++) {
		struct orr_synth s = synth(&cs[i], false);
		uint64_t inferred;
		double ns = replayed(&s, &inferred);

		assert_int_equal(s.ranks, (size_t)cs[i].pp);
		assert_true(s.kernels > 0 && s.placed_ns > 0);
		/* the graph's latencies are not inflated by the streams' event waits */
		assert_true(ns == s.placed_ns);
		assert_int_equal(inferred, 0);
		placed_only(&cs[i], &s);
		orr_synth_release(&s);
	}
}

static void test_synth_deterministic(void **state)
{
	struct orr_train_config c = small();
	struct orr_synth a = synth(&c, false), b = synth(&c, false);

	(void)state;
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.json, b.json, a.len);
	orr_synth_release(&a);
	orr_synth_release(&b);
}

/* At a fixed global batch, more data-parallel GPUs share the micro-batches. */
static void test_synth_more_gpus_less_compute(void **state)
{
	double last = INFINITY;

	(void)state;
	for (int dp = 1; dp <= 8; dp *= 2) {
		struct orr_train_config c = small();
		struct orr_synth s;

		c.dp = dp;
		c.micro_batches = 16 / dp;
		s = synth(&c, false);
		assert_true(s.gemm_ns + s.kern_ns <= last);
		last = s.gemm_ns + s.kern_ns;
		orr_synth_release(&s);
	}
}

/*
 * Interleaving (VPP 2 at PP 4) halves the first stage's bubble and, where a chunk's
 * passes outweigh the transfers (32 layers: 4 a chunk), is no slower than 1F1B.  With
 * a layer a chunk (8 layers) its twice as many transfers, each receive behind the
 * compute launched before it (docs/estimator.md, "The transfers of an interleaved
 * schedule"), make it 3.9 % slower than 1F1B: as docs/estimator.md's "Transfers" says,
 * interleaving can be slower where transfers weigh.
 */
static void test_synth_interleaving_no_worse(void **state)
{
	struct orr_train_config c = small(), v = small();
	struct orr_synth a, b;

	(void)state;
	c.pp = v.pp = 4;
	c.layers = v.layers = 32;
	v.vpp = 2;
	a = synth(&c, false);
	b = synth(&v, false);
	assert_true(a.bubble_ns > 0);
	assert_true(b.bubble_ns <= a.bubble_ns);
	assert_true(step_of(&v, false) <= step_of(&c, false) * 1.001);
	orr_synth_release(&a);
	orr_synth_release(&b);
}

static void test_synth_recompute_and_passes(void **state)
{
	struct orr_train_config c = small();
	double none, sel, full, fwd;

	(void)state;
	c.flash_attention = false;
	none = step_of(&c, false);
	fwd = step_of(&c, true);
	c.recompute = ORR_RECOMPUTE_SELECTIVE;
	sel = step_of(&c, false);
	c.recompute = ORR_RECOMPUTE_FULL;
	full = step_of(&c, false);
	assert_true(fwd < none);
	assert_true(none < sel);
	assert_true(sel < full);
}

/*
 * An uneven split (Megatron-Core's --decoder-first/last-pipeline-num-layers): each stage
 * runs its own layers, so a last stage spared a layer for the output layer's GEMM
 * shortens the step of a model whose logits weigh as much as a few layers, and the
 * split Megatron would refuse is refused.
 */
static void test_synth_uneven_split(void **state)
{
	struct orr_train_config c = small(), u = small();
	struct orr_synth_costs k = table_costs();
	struct orr_synth s;
	const char *why = NULL;

	(void)state;
	c.pp = u.pp = 4;
	c.micro_batches = u.micro_batches = 16;
	u.first_stage_layers = 3;
	u.last_stage_layers = 1;
	assert_int_equal(orr_train_stage_layers(&u, 0), 3);
	assert_int_equal(orr_train_stage_layers(&u, 1), 2);
	assert_int_equal(orr_train_stage_layers(&u, 3), 1);
	assert_true(step_of(&u, false) < step_of(&c, false));
	u.last_stage_layers = 2; /* 3 layers left for 2 stages */
	assert_int_equal(orr_synth_step(&u, false, &k, &s, &why), -EINVAL);
	assert_non_null(strstr(why, "uneven"));
	u.last_stage_layers = 1;
	u.vpp = 2; /* no interleaving with an uneven split */
	assert_int_equal(orr_synth_step(&u, false, &k, &s, &why), -EINVAL);
}

/* The layers' time doubles; embedding, logits and the optimizer's share do not. */
static void test_synth_layers_scale(void **state)
{
	struct orr_train_config c = small();
	double a, b;

	(void)state;
	c.pp = 1;
	a = step_of(&c, false);
	c.layers = 16;
	b = step_of(&c, false);
	assert_true(b / a > 1.4 && b / a < 2.0);
}

/*
 * ZeRO-3 / FSDP: per micro-batch and layer an all-gather for each pass and a
 * reduce-scatter after the backward pass (the embedding's and output layer's too), no
 * gradient reduction at the end; the communication overlaps the layers, and the model's
 * state per GPU shrinks by the DP degree.
 */
static void test_synth_fully_sharded(void **state)
{
	struct orr_train_config c = small();
	struct orr_synth plain, full;
	struct orr_memory mp, mf;
	uint64_t inferred;
	double units;

	(void)state;
	c.pp = 1;
	c.tp = 1;
	c.dp = 8;
	plain = synth(&c, false);
	c.fully_sharded = true;
	full = synth(&c, false);
	units = (double)c.layers + 1; /* the layers and the root: embedding, final norm */
	/*
	 * all-gathers 2 x units, reduce-scatters 1 x units and the loss's all-reduce per
	 * micro-batch, no DP buckets
	 */
	assert_int_equal(full.collectives,
			 (size_t)((3 * units + 1) * (double)c.micro_batches) + 1 /* the norm's */);
	assert_true(full.dp_ns > plain.dp_ns);
	/* overlapped: less than its compute and communication one after the other */
	assert_true(replayed(&full, &inferred) < full.gemm_ns + full.kern_ns + full.dp_ns);
	assert_int_equal(inferred, 0);
	assert_int_equal(orr_memory_estimate(&c, NULL, 0, &mf), 0);
	c.fully_sharded = false;
	assert_int_equal(orr_memory_estimate(&c, NULL, 0, &mp), 0);
	assert_true(mf.model_bytes < mp.model_bytes / 4);
	assert_true(mf.activation_bytes == mp.activation_bytes);
	orr_synth_release(&plain);
	orr_synth_release(&full);
}

/*
 * --overlap-grad-reduce: the same buckets' reductions (one more where a model chunk's
 * last one is partial), issued during the last micro-batch's backward pass: a shorter
 * step, never shorter than without data parallelism.
 */
static void test_synth_overlap_grad_reduce(void **state)
{
	struct orr_train_config c = small();
	struct orr_synth after, overlapped;
	double alone;

	(void)state;
	c.pp = 1;
	c.tp = 1;
	c.dp = 8;
	c.layers = 24;
	c.hidden = 2048;
	c.ffn = 8192;
	after = synth(&c, false);
	c.overlap_grad_reduce = true;
	overlapped = synth(&c, false);
	assert_true(overlapped.collectives >= after.collectives &&
		    overlapped.collectives <= after.collectives + 1);
	assert_true(overlapped.placed_ns < after.placed_ns);
	c.dp = 1;
	alone = step_of(&c, false);
	assert_true(overlapped.placed_ns > alone);
	orr_synth_release(&after);
	orr_synth_release(&overlapped);
}

static size_t kernels_of(const struct orr_train_config *c)
{
	struct orr_synth s = synth(c, false);
	size_t n = s.kernels;

	orr_synth_release(&s);
	return n;
}

/*
 * Megatron's fused softmax takes b x heads/t a multiple of 4 (8 up to 128 keys); else
 * PyTorch's ops run: with fp16, cast, scale, mask, softmax and cast back, each pass (4
 * kernels more than the fused one), with bf16 mask and softmax (1 more), with fp32
 * always scale, mask and softmax (and its logits need no cast for the cross-entropy).
 */
static void test_synth_softmax_fallback(void **state)
{
	struct orr_train_config c = small();
	size_t passes;

	(void)state;
	c.flash_attention = false;
	c.pp = 1;
	c.dp = 1;
	c.tp = 8;
	c.micro_batches = 2;
	c.precision = ORR_DTYPE_FP16;
	passes = 2 * (size_t)c.layers * (size_t)c.micro_batches; /* forward and backward */
	c.micro_batch = 1;                                       /* 1 x 2 heads: PyTorch's ops */
	size_t fp16_1 = kernels_of(&c);
	c.micro_batch = 2; /* 2 x 2: fused */
	size_t fp16_2 = kernels_of(&c);
	assert_int_equal(fp16_1 - fp16_2, 4 * passes);
	c.precision = ORR_DTYPE_BF16;
	size_t bf16_2 = kernels_of(&c);
	c.micro_batch = 1;
	assert_int_equal(kernels_of(&c) - bf16_2, passes);
	c.precision = ORR_DTYPE_FP32;
	size_t fp32_1 = kernels_of(&c);
	c.micro_batch = 2;
	assert_int_equal(kernels_of(&c), fp32_1);
	/* less the logits' casts to fp32 and back, once per micro-batch each */
	assert_int_equal(fp32_1 - bf16_2, 2 * passes - 2 * (size_t)c.micro_batches);
	/* up to 128 keys the kernel's block holds 8 rows: 4 x 1 heads falls back */
	c.precision = ORR_DTYPE_BF16;
	c.seq = 128;
	c.tp = 4;
	c.micro_batch = 1;
	size_t short_1 = kernels_of(&c);
	c.micro_batch = 2;
	assert_int_equal(short_1 - kernels_of(&c), passes);
}

/* A bf16 GEMM sample of batch x (m x k . k x n) at x times t (its roofline or tiles' bytes). */
static struct orr_gemm_sample bf16_gemm(const struct orr_gpu_spec *gpu, int64_t batch, int64_t m,
					int64_t n, int64_t k, bool tiles, double x)
{
	struct orr_gemm_sample s = { .op = "aten::bmm",
				     .dtype = ORR_DTYPE_BF16,
				     .math = ORR_DTYPE_BF16,
				     .elem_bytes = 2,
				     .batch = batch,
				     .m = m,
				     .n = n,
				     .k = k,
				     .kernels = 1 };

	snprintf(s.family, sizeof(s.family), "f%lldx%lldx%lld", (long long)m, (long long)n,
		 (long long)k);
	s.flops = 2.0 * (double)batch * (double)m * (double)n * (double)k;
	s.bytes = 2.0 * (double)batch * (double)(m * k + k * n + m * n);
	s.ns = x *
	       (tiles ? orr_gemm_tile_traffic_bytes(2, batch, m, n, k) / gpu->hbm_bytes_per_s * 1e9
		      : orr_gemm_roofline_ns(gpu, s.math, s.flops, s.bytes));
	return s;
}

/* What a synthesized GEMM of batch x (m x k . k x n) costs by m, less by m without
 * efficiency_memory. */
static double memory_extra(struct orr_gemm_model *m, double batch, double rows, double cols,
			   double depth)
{
	struct orr_gemm_sample q = bf16_gemm(m->gpu, (int64_t)batch, (int64_t)rows, (int64_t)cols,
					     (int64_t)depth, false, 1);
	struct orr_gemm_efficiency e = m->efficiency_memory[ORR_DTYPE_BF16];
	double with, without;

	q.family[0] = '\0';
	with = orr_gemm_model_time(m, &q, NULL);
	m->efficiency_memory[ORR_DTYPE_BF16].samples = 0;
	without = orr_gemm_model_time(m, &q, NULL);
	m->efficiency_memory[ORR_DTYPE_BF16] = e;
	return with - without;
}

/*
 * The unfused attention's batched GEMMs (the scores' and the context's, each micro-batch
 * and layer) take the GEMM model's rate of batched bandwidth-bound GEMMs over their
 * tiles' bytes: the forward pass's GEMM time grows by exactly their difference from the
 * roofline x the compute-bound efficiency; the other GEMMs and flash attention's step
 * do not change.  The sources count them as timed so, not by the roofline.
 */
static void test_synth_attention_gemms_by_tiles(void **state)
{
	const struct orr_gpu_spec *gpu = orr_gpu_spec_by_id("a100-80gb-sxm");
	struct orr_gemm_sample s[5] = {
		bf16_gemm(gpu, 1, 8192, 4096, 4096, false, 1.2),
		bf16_gemm(gpu, 1, 8192, 1536, 4096, false, 1.2),
		bf16_gemm(gpu, 1, 4096, 4096, 2048, false, 1.2),
		bf16_gemm(gpu, 32, 2048, 2048, 64, true, 3.0),
		bf16_gemm(gpu, 32, 2048, 64, 2048, true, 3.0),
	};
	struct orr_train_config c = small();
	struct orr_synth_costs k = table_costs();
	struct orr_synth a, b;
	struct orr_gemm_model m;
	double heads, extra;

	(void)state;
	assert_int_equal(orr_gemm_model_fit(s, 5, gpu, &m), 0);
	assert_int_equal(m.efficiency_memory[ORR_DTYPE_BF16].samples, 2);
	k.m.gemm = &m;
	k.cpu_op_ns = 0;
	c.pp = 1;
	c.flash_attention = false;
	heads = (double)c.micro_batch * (double)c.heads / (double)c.tp;
	extra = (double)c.layers * (double)c.micro_batches *
		(memory_extra(&m, heads, (double)c.seq, (double)c.seq, 64) +
		 memory_extra(&m, heads, (double)c.seq, 64, (double)c.seq));
	assert_true(extra > 0);
	for (int flash = 0; flash < 2; flash++) {
		c.flash_attention = flash;
		assert_int_equal(orr_synth_step(&c, true, &k, &a, NULL), 0);
		m.efficiency_memory[ORR_DTYPE_BF16].samples = 0;
		assert_int_equal(orr_synth_step(&c, true, &k, &b, NULL), 0);
		m.efficiency_memory[ORR_DTYPE_BF16].samples = 2;
		assert_float_equal(a.gemm_ns - b.gemm_ns, flash ? 0 : extra, 1e-6 * a.gemm_ns);
		/* the sources count them apart from the roofline x an efficiency */
		assert_true(flash ? a.sources.gemm_memory == 0 : a.sources.gemm_memory > 0);
		assert_int_equal(b.sources.gemm_memory, 0);
		assert_int_equal(a.sources.gemm_roofline + a.sources.gemm_memory,
				 b.sources.gemm_roofline);
		orr_synth_release(&a);
		orr_synth_release(&b);
	}
	orr_gemm_model_release(&m);
}

static size_t count_in(const char *s, size_t n, const char *what)
{
	size_t count = 0, len = strlen(what);

	for (size_t i = 0; i + len <= n; i++)
		if (memcmp(s + i, what, len) == 0)
			count++;
	return count;
}

/*
 * Megatron's get_batch reads the batch's sizes back to the host before each micro-batch's
 * forward pass on the stages that load data: without a pipeline one wait per
 * micro-batch, besides the gradient norm's .item() and the step's end (forward only:
 * the end alone).
 */
static void test_synth_get_batch_waits(void **state)
{
	struct orr_train_config c = small();
	struct orr_synth s;

	(void)state;
	c.pp = 1;
	c.micro_batches = 5;
	s = synth(&c, false);
	assert_int_equal(count_in(s.json, s.len, "cudaDeviceSynchronize"), 5 + 2);
	assert_int_equal(count_in(s.json, s.len, "batch_sizes_to_device"), 5);
	orr_synth_release(&s);
	s = synth(&c, true);
	assert_int_equal(count_in(s.json, s.len, "cudaDeviceSynchronize"), 5 + 1);
	orr_synth_release(&s);
}

static void test_synth_refuses(void **state)
{
	struct orr_synth_costs k = table_costs(), none = { 0 };
	struct orr_train_config c = small();
	struct orr_synth s;
	const char *why = NULL;

	(void)state;
	assert_int_equal(orr_synth_step(&c, false, &none, &s, &why), -EINVAL);
	assert_non_null(why);
	c.heads = 15; /* hidden % heads */
	assert_int_equal(orr_synth_step(&c, false, &k, &s, &why), -EINVAL);
	c = small();
	c.precision = ORR_DTYPE_INT8;
	assert_int_equal(orr_synth_step(&c, false, &k, &s, &why), -ENOTSUP);
	c = small();
	c.cp = 2;
	c.flash_attention = false;
	assert_int_equal(orr_synth_step(&c, false, &k, &s, &why), -ENOTSUP);
	assert_non_null(strstr(why, "context parallelism"));
	/* FP8 on the A100, which has no FP8 tensor cores (its GEMMs were timed by bytes alone) */
	c = small();
	c.precision = ORR_DTYPE_FP8;
	assert_int_equal(orr_synth_step(&c, false, &k, &s, &why), -ENOTSUP);
	assert_non_null(strstr(why, "FP8"));
}

/* CPU seconds this process has used. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* c refused at once, before it is written: -E2BIG, why naming the limit, in under 2 s. */
static void refused_at_once(const struct orr_train_config *c, const char *limit)
{
	struct orr_synth_costs k = table_costs();
	struct orr_synth s;
	const char *why = NULL;
	double t0 = cpu_s();

	assert_int_equal(orr_synth_time(c, false, &k, NULL, &s, &why), -E2BIG);
	assert_non_null(why);
	assert_non_null(strstr(why, limit));
	assert_int_equal(orr_synth_step(c, false, &k, &s, &why), -E2BIG);
	assert_non_null(strstr(why, limit));
	assert_true(cpu_s() - t0 < 2);
}

/*
 * A configuration past 2^24 instructions is refused from its sizes before anything is
 * written (issue 31, N3 and N11): billions of parameters, whose Adam kernels and
 * gradient buckets a loop once subtracted one at a time, never ending; a million
 * layers, written up to the cap (1.6 GB) before; a hundred thousand stages.
 */
static void test_synth_too_big_refused_at_once(void **state)
{
	struct orr_train_config c = small();

	(void)state;
	c.layers = 2;
	c.hidden = 1073741824;
	c.ffn = 4 * c.hidden;
	c.tp = c.pp = c.dp = 1;
	refused_at_once(&c, "more than 2^24 instructions per stage");
	c.dp = 4; /* the gradients' buckets */
	c.distributed_optimizer = true;
	refused_at_once(&c, "more than 2^24 instructions per stage");
	c.distributed_optimizer = false;
	c.overlap_grad_reduce = true; /* the buckets during the backward pass */
	refused_at_once(&c, "more than 2^24 instructions per stage");
	c = small();
	c.layers = 1000000;
	c.pp = 1;
	refused_at_once(&c, "more than 2^24 instructions per stage");
	c.layers = 2000000;
	c.pp = 100000;
	refused_at_once(&c, "instructions in all its stages");
	c = small();
	c.micro_batches = 1 << 30; /* the schedule's slots */
	refused_at_once(&c, "more than 2^24 instructions");
}

/*
 * A step written as a trace (orrery estimate replays it: about 0.75 KB per instruction)
 * has at most 2^22 instructions: 200,000 layers (4.8 M) are refused at once, where they
 * took a minute and 3.6 GB; orr_synth_time() (whatif's) is held to 2^24 only.
 */
static void test_synth_written_step_bounded(void **state)
{
	struct orr_synth_costs k = table_costs();
	struct orr_train_config c = small();
	struct orr_synth s;
	const char *why = NULL;
	double t0 = cpu_s();

	(void)state;
	c.layers = 200000;
	c.pp = 1;
	c.micro_batches = 1;
	assert_int_equal(orr_synth_step(&c, false, &k, &s, &why), -E2BIG);
	assert_non_null(strstr(why, "more than 2^22 instructions in all its stages"));
	assert_true(cpu_s() - t0 < 2);
}

/*
 * Times no placement can add up in int64 ns are refused with a reason (-ERANGE), not
 * placed: a launch time per call of 1e18 ns (a costs file's launch time of 1e300 once
 * overflowed synth-place.c, undefined behaviour, then "(a bug)"), or one that is NaN.
 */
static void test_synth_times_bounded(void **state)
{
	struct orr_synth_costs k = table_costs();
	struct orr_train_config c = small();
	struct orr_synth s;
	const char *why = NULL;

	(void)state;
	k.cpu_op_ns = 1e18;
	assert_int_equal(orr_synth_time(&c, false, &k, NULL, &s, &why), -ERANGE);
	assert_non_null(strstr(why, "2^62 ns"));
	assert_int_equal(orr_synth_step(&c, false, &k, &s, &why), -ERANGE);
	k.cpu_op_ns = NAN;
	assert_int_equal(orr_synth_time(&c, false, &k, NULL, &s, &why), -ERANGE);
	k.cpu_op_ns = 1e12; /* 1000 s per call: a long step, still a step */
	assert_int_equal(orr_synth_time(&c, false, &k, NULL, &s, &why), 0);
	assert_true(s.placed_ns > 1e12 && s.placed_ns < 0x1p62);
	orr_synth_release(&s);
}

/*
 * Megatron-DeepSpeed's scatter-gather of pipeline transfers (--p2p-scatter-gather): each
 * TP rank sends 1/tp of a stage's output over its own NIC, and the receiver all-gathers
 * it over TP and copies it out.  At TP 4 a stage boundary across nodes carries a quarter
 * of the bytes, and each receive (a forward's input, a backward's gradient) adds an
 * all-gather and a copy; without TP, or with sequence parallelism (its tensors are split
 * already), nothing changes.
 */
static void test_synth_p2p_scatter_gather(void **state)
{
	struct orr_train_config c = small(), g;
	struct orr_synth a, b;
	uint64_t inferred;

	(void)state;
	c.tp = 4;
	c.dp = 2; /* 8 GPUs a stage: stage 1 on the second node */
	g = c;
	g.scatter_gather_p2p = true;
	a = synth(&c, false);
	b = synth(&g, false);
	assert_true(b.transfer_ns < a.transfer_ns / 3);
	assert_int_equal(b.transfers, a.transfers);
	assert_int_equal(b.collectives, a.collectives + 2 * (size_t)c.micro_batches);
	assert_int_equal(b.kernels, a.kernels + 2 * (size_t)c.micro_batches);
	assert_true(replayed(&b, &inferred) == b.placed_ns);
	assert_int_equal(inferred, 0);
	placed_only(&g, &b);
	orr_synth_release(&a);
	orr_synth_release(&b);
	c.sequence_parallel = g.sequence_parallel = true;
	a = synth(&c, false);
	b = synth(&g, false);
	assert_true(b.placed_ns == a.placed_ns && b.collectives == a.collectives);
	orr_synth_release(&a);
	orr_synth_release(&b);
	c = small();
	c.tp = 1;
	g = c;
	g.scatter_gather_p2p = true;
	assert_true(step_of(&g, false) == step_of(&c, false));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synth_replays_as_placed),
		cmocka_unit_test(test_synth_deterministic),
		cmocka_unit_test(test_synth_more_gpus_less_compute),
		cmocka_unit_test(test_synth_interleaving_no_worse),
		cmocka_unit_test(test_synth_recompute_and_passes),
		cmocka_unit_test(test_synth_layers_scale),
		cmocka_unit_test(test_synth_uneven_split),
		cmocka_unit_test(test_synth_fully_sharded),
		cmocka_unit_test(test_synth_overlap_grad_reduce),
		cmocka_unit_test(test_synth_softmax_fallback),
		cmocka_unit_test(test_synth_attention_gemms_by_tiles),
		cmocka_unit_test(test_synth_get_batch_waits),
		cmocka_unit_test(test_synth_refuses),
		cmocka_unit_test(test_synth_too_big_refused_at_once),
		cmocka_unit_test(test_synth_times_bounded),
		cmocka_unit_test(test_synth_tp_across_nodes),
		cmocka_unit_test(test_synth_dp_of_int_max),
		cmocka_unit_test(test_synth_written_step_bounded),
		cmocka_unit_test(test_synth_p2p_scatter_gather),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

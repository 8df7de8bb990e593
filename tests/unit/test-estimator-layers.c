/* SPDX-License-Identifier: MIT */
/*
 * Another number of layers on the host timeline (estimator/retime-layers.c) and the
 * host timeline without the profiler (estimator/retime-host.c), on eager steps written
 * here: the main thread runs an embedding, L layers of three ops and the logits, each
 * op launching one kernel; autograd's thread runs the loss's backward and L layers of
 * three backward ops; the main thread then runs the optimizer.  The step of L layers
 * stretched to L' is the step written with L' layers, host-bound (the GPU waits for
 * the threads) or GPU-bound; the step without the profiler's time per op is the step
 * written with ops that much shorter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "orrery/estimator.h"
#include "orrery/replay.h"
#include "test-util.h"
#include "trace-doc.h"

/* A written eager step: op and kernel times (us), and where each thread stands. */
struct eager {
	struct doc d;
	double op_us, kern_us;
	double cpu[3]; /* threads 1 and 2: the end of their last op */
	double gpu;    /* the end of the stream's last kernel */
	int corr, ext;
};

/*
 * An op on thread tid launching kernel `kernel` of kern_us 2 us in; ops with an
 * External id.
 */
static void op_of(struct eager *e, int tid, const char *name, const char *kernel, double kern_us)
{
	double ts = e->cpu[tid], launch = ts + 2, k = fmax(launch + 3, e->gpu + 1);

	doc_sep(&e->d);
	doc_add(&e->d,
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 1, \"tid\": %d,"
		" \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": %d}}",
		name, tid, ts, e->op_us, e->ext++);
	doc_call(&e->d, "cudaLaunchKernel", tid, launch, 2, e->corr);
	doc_kernel(&e->d, kernel, 7, k, kern_us, e->corr, NULL);
	e->corr++;
	e->gpu = k + kern_us;
	e->cpu[tid] = ts + e->op_us + 1;
}

static void op(struct eager *e, int tid, const char *name, const char *kernel)
{
	op_of(e, tid, name, kernel, e->kern_us);
}

static const char *const fwd[] = { "aten::layer_norm", "aten::linear", "aten::gelu" };
static const char *const fwd_k[] = { "norm_kernel", "mm_kernel", "gelu_kernel" };
static const char *const bwd[] = { "autograd::engine::evaluate_function: GeluBackward0",
				   "autograd::engine::evaluate_function: AddmmBackward0",
				   "autograd::engine::evaluate_function: NativeLayerNormBackward0" };
static const char *const bwd_k[] = { "gelu_bwd_kernel", "mm_bwd_kernel", "norm_bwd_kernel" };

static struct orr_train_config config(int64_t layers);

/* One step of `layers` layers, starting on the main thread at ts. */
static void step(struct eager *e, int k, int layers)
{
	struct orr_train_config now = config(layers), one = config(1);
	double start = e->cpu[1];

	op(e, 1, "aten::embedding", "embedding_kernel");
	for (int l = 0; l < layers; l++)
		for (int i = 0; i < 3; i++)
			op(e, 1, fwd[i], fwd_k[i]);
	op(e, 1, "aten::linear", "logits_kernel");
	/* backward(): autograd's thread takes over, the main thread waits for it */
	e->cpu[2] = e->cpu[1] + 5;
	op(e, 2, "autograd::engine::evaluate_function: NllLossBackward0", "loss_bwd_kernel");
	for (int l = 0; l < layers; l++)
		for (int i = 0; i < 3; i++)
			op(e, 2, bwd[i], bwd_k[i]);
	e->cpu[1] = e->cpu[2] + 5;
	/* a fused optimizer sweeps every parameter: its kernel's time follows them */
	op_of(e, 1, "Optimizer.step#AdamW.step", "adam_kernel",
	      e->kern_us * orr_train_params(&now) / orr_train_params(&one));
	doc_call(&e->d, "cudaDeviceSynchronize", 1, e->cpu[1], fmax(2, e->gpu - e->cpu[1] + 2), -1);
	e->cpu[1] = fmax(e->cpu[1] + 2, e->gpu + 2) + 10;
	doc_step(&e->d, k, start, e->cpu[1] - start - 1);
}

/* A trace of three steps of `layers` layers. */
static struct orr_trace *eager_trace(int layers, double op_us, double kern_us)
{
	struct eager e = { .op_us = op_us, .kern_us = kern_us, .cpu = { 0, 100, 100 }, .corr = 1 };
	struct orr_trace *t;

	doc_begin(&e.d, -1, 0);
	for (int k = 1; k <= 3; k++)
		step(&e, k, layers);
	t = doc_import(&e.d, "eager.json");
	free(e.d.s);
	return t;
}

static struct orr_graph *graph_of(const struct orr_trace *t)
{
	struct orr_graph *g = NULL;
	struct orr_diag d;

	if (orr_graph_build(t, NULL, &g, &d))
		fail_msg("%s", d.msg);
	return g;
}

static struct orr_replay *replay_of(const struct orr_graph *g)
{
	struct orr_replay *r = NULL;
	struct orr_diag d;

	if (orr_replay_run(g, NULL, &r, &d))
		fail_msg("%s", d.msg);
	return r;
}

/*
 * The mean job step of g from step `first` on, replayed with factors f and cpu (NULL:
 * none), against the baseline base (NULL: none).
 */
static double step_ns(const struct orr_graph *g, const float *f, const float *cpu, size_t first,
		      const struct orr_replay *base)
{
	const struct orr_replay_options o = { .task_factors = f,
					      .cpu_factors = cpu,
					      .baseline = base };
	struct orr_replay_step *s;
	struct orr_replay *r;
	struct orr_diag d;
	double sum = 0;
	size_t n;

	if (orr_replay_run(g, &o, &r, &d))
		fail_msg("%s", d.msg);
	orr_replay_job_steps(r, &s, &n);
	assert_true(n > first);
	for (size_t i = first; i < n; i++)
		sum += (double)(s[i].predicted_end_ns - s[i].predicted_start_ns);
	free(s);
	orr_replay_free(r);
	return sum / (double)(n - first);
}

static struct orr_train_config config(int64_t layers)
{
	return (struct orr_train_config){ .layers = layers,
					  .hidden = 64,
					  .heads = 4,
					  .kv_groups = 4,
					  .ffn = 256,
					  .vocab = 128,
					  .seq = 16,
					  .micro_batch = 1,
					  .micro_batches = 1,
					  .tp = 1,
					  .pp = 1,
					  .dp = 1,
					  .cp = 1,
					  .vpp = 1,
					  .precision = ORR_DTYPE_BF16 };
}

/*
 * The step of `from` layers stretched to `to`, over the step written with `to`, from
 * step `first` on; against the trace's own replay (orrery estimate's) when `based`.
 */
static double stretched_over_written(int from, int to, double op_us, double kern_us, size_t first,
				     bool based, struct orr_retime *ret)
{
	struct orr_trace *t = eager_trace(from, op_us, kern_us),
			 *tt = eager_trace(to, op_us, kern_us);
	struct orr_graph *g = graph_of(t), *gt = graph_of(tt);
	size_t n = orr_graph_task_count(g);
	float *f = orr_xmalloc(n * sizeof(*f)), *cpu = orr_xmalloc(n * sizeof(*cpu));
	struct orr_train_config a = config(from), b = config(to);
	struct orr_structure st;
	const char *why = NULL;
	struct orr_replay *base;
	double got, want;

	memset(&st, 0, sizeof(st));
	assert_int_equal(orr_retime_layers(g, &st, &a, &b, NULL, f, cpu, ret, &why), 0);
	base = based ? replay_of(g) : NULL;
	got = step_ns(g, f, cpu, first, base);
	want = step_ns(gt, NULL, NULL, first, NULL);
	orr_replay_free(base);
	free(cpu);
	free(f);
	orr_graph_free(gt);
	orr_graph_free(g);
	orr_trace_free(tt);
	orr_trace_free(t);
	return got / want;
}

static void test_layers_host_bound(void **state)
{
	struct orr_retime r;
	double q;

	(void)state;
	/* 100 us per op, 10 us per kernel: the GPU waits for each launch */
	q = stretched_over_written(4, 8, 100, 10, 0, false, &r);
	print_message("host-bound, 4 -> 8 layers: %.4f of the step written\n", q);
	assert_true(fabs(q - 1) < 0.01);
	/* 3 launches a layer in each pass, on its thread; every step's layers */
	assert_int_equal(r.layer_period, 6);
	assert_int_equal(r.layer_gpu_tasks, 3 * 4 * 6);
	/*
	 * Fewer layers: exact from the second step on.  On the first, autograd's thread
	 * makes its first call of the capture no earlier than measured (a thread's first
	 * call is its anchor in the replay), after the longer forward pass; against the
	 * trace's own replay, as orrery estimate replays it, that call moves with the main
	 * thread's hand-off (its backward()), and the first step is exact too.
	 */
	q = stretched_over_written(8, 4, 100, 10, 1, false, &r);
	print_message("host-bound, 8 -> 4 layers: %.4f from the second step\n", q);
	assert_true(fabs(q - 1) < 0.01);
	q = stretched_over_written(8, 4, 100, 10, 0, false, &r);
	print_message("host-bound, 8 -> 4 layers: %.4f with the first\n", q);
	assert_true(q > 1.01);
	q = stretched_over_written(8, 4, 100, 10, 0, true, &r);
	print_message("host-bound, 8 -> 4 layers: %.4f with the first, against the baseline\n", q);
	assert_true(fabs(q - 1) < 0.01);
}

static void test_layers_gpu_bound(void **state)
{
	struct orr_retime r;
	double q;

	(void)state;
	/* 100 us per op, 300 us per kernel: the thread runs ahead, the GPU sets the pace */
	q = stretched_over_written(4, 12, 100, 300, 1, false, &r);
	print_message("GPU-bound, 4 -> 12 layers: %.4f\n", q);
	assert_true(fabs(q - 1) < 0.01);
}

/* Layers that do not repeat (one op renamed in one layer) are not found. */
static void test_layers_not_repeated(void **state)
{
	struct orr_trace *t = eager_trace(1, 100, 10);
	struct orr_graph *g = graph_of(t);
	size_t n = orr_graph_task_count(g);
	float *f = orr_xmalloc(n * sizeof(*f)), *cpu = orr_xmalloc(n * sizeof(*cpu));
	struct orr_train_config a = config(3), b = config(6);
	struct orr_structure st;
	struct orr_retime r;
	const char *why = NULL;

	(void)state;
	memset(&st, 0, sizeof(st));
	/* a step of one layer said to have three: no run of three periods */
	assert_int_equal(orr_retime_layers(g, &st, &a, &b, NULL, f, cpu, &r, &why), -ENOENT);
	assert_non_null(why);
	assert_non_null(strstr(why, "do not repeat"));
	/* a trace of one layer has nothing that repeats */
	a = config(1);
	assert_int_equal(orr_retime_layers(g, &st, &a, &b, NULL, f, cpu, &r, &why), -ENOENT);
	assert_string_equal(why, "one layer does not repeat");
	/* a pipeline stage holds a share of the layers: not this */
	a = config(4);
	b = config(8);
	a.pp = b.pp = 2;
	assert_int_equal(orr_retime_layers(g, &st, &a, &b, NULL, f, cpu, &r, &why), -ENOTSUP);
	assert_string_equal(why, "pipeline stages");
	free(cpu);
	free(f);
	orr_graph_free(g);
	orr_trace_free(t);
}

/* The profiler's time per op taken out: the step of ops that much shorter. */
static void test_unprofile(void **state)
{
	struct orr_trace *t = eager_trace(4, 100, 10), *tt = eager_trace(4, 90, 10);
	struct orr_graph *g = graph_of(t), *gt = graph_of(tt);
	size_t n = orr_graph_task_count(g);
	float *cpu = orr_xmalloc(n * sizeof(*cpu));
	struct orr_prof_cost c = { .op_ns = 10 * US };
	struct orr_replay *base;
	double removed, got, want, traced;

	(void)state;
	for (size_t i = 0; i < n; i++)
		cpu[i] = 1;
	removed = orr_retime_unprofile(g, &c, cpu);
	/*
	 * Every op of three steps (1 + 12 + 1 forward, 1 + 12 backward, 1 optimizer) but
	 * where a call's time is a wait cut to its wake-up (after a hand-off between the
	 * threads): no more than it holds.
	 */
	print_message("removed %.0f ns of %.0f\n", removed, 3 * 28 * 10.0 * US);
	assert_true(removed <= 3 * 28 * 10.0 * US && removed > 0.95 * 3 * 28 * 10.0 * US);
	/* from the second step: autograd's first call is its anchor on the first (above) */
	got = step_ns(g, NULL, cpu, 1, NULL);
	want = step_ns(gt, NULL, NULL, 1, NULL);
	traced = step_ns(g, NULL, NULL, 1, NULL);
	print_message("without 10 us per op: %.0f ns, written %.0f ns, traced %.0f ns\n", got, want,
		      traced);
	assert_true(got < traced);
	assert_true(fabs(got / want - 1) < 0.01);
	/* every step, against the trace's own replay: the first's backward moves too */
	base = replay_of(g);
	got = step_ns(g, NULL, cpu, 0, base);
	want = step_ns(gt, NULL, NULL, 0, NULL);
	print_message("every step, against the baseline: %.0f ns, written %.0f ns\n", got, want);
	assert_true(fabs(got / want - 1) < 0.01);
	/* unchanged factors against the baseline: the baseline's times */
	assert_float_equal(step_ns(g, NULL, NULL, 0, base), step_ns(g, NULL, NULL, 0, NULL), 0);
	orr_replay_free(base);
	/* nothing to take out without a cost */
	c.op_ns = 0;
	assert_float_equal(orr_retime_unprofile(g, &c, cpu), 0, 0);
	free(cpu);
	orr_graph_free(gt);
	orr_graph_free(g);
	orr_trace_free(tt);
	orr_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layers_host_bound),
		cmocka_unit_test(test_layers_gpu_bound),
		cmocka_unit_test(test_layers_not_repeated),
		cmocka_unit_test(test_unprofile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

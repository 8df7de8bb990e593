/* SPDX-License-Identifier: MIT */
/*
 * Waits with no CUDA call (graph/spin.c) and communication kernels by name
 * (graph/comm.c), on tiny Kineto traces written here.  The trace: five short launches,
 * then an op `dispatch` that launches a kernel on stream 20 and spins, with no call,
 * until that kernel ends 20 ms later, as DeepEP's dispatch does; then a launch of
 * `after`, and a `tail`.  Kernels start 8 us after their launch, the device's launch
 * latency, so that the replay reproduces the trace exactly.  Times below are
 * microseconds as Kineto writes them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/replay.h"
#include "trace-doc.h"

static void call(struct doc *d, double ts, double dur, int corr)
{
	doc_call(d, "cudaLaunchKernel", 1, ts, dur, corr);
}

static void kernel(struct doc *d, const char *name, int stream, double ts, double dur, int corr)
{
	doc_kernel(d, name, stream, ts, dur, corr, NULL);
}

/* An op or annotation (cat "cpu_op" or "user_annotation") on the thread. */
static void region(struct doc *d, const char *cat, const char *name, double ts, double dur)
{
	doc_region(d, cat, name, 1, ts, dur);
}

#define DEEP_EP "void deep_ep::intranode::dispatch<8, 768>(int4*, float*)"

/* What the trace's op holds: the kernel it waits for, and how long that runs. */
struct spin_case {
	const char *op_cat; /* "cpu_op", "user_annotation", or NULL for no op */
	const char *kernel;
	double kernel_us; /* 20000: ends 12 us before the next call */
};

static struct orr_trace *spin_trace(const struct spin_case *sc)
{
	struct doc d = { 0 };
	struct orr_trace *t = NULL;
	static const char *const gemms[] = { "gemm0", "gemm1", "gemm2", "gemm3", "gemm4" };

	doc_begin(&d, -1, 0);
	region(&d, "user_annotation", "ProfilerStep#1", 0, 20300);
	for (int i = 0; i < 5; i++) {
		call(&d, 10 * i, 5, i + 1);
		kernel(&d, gemms[i], 7, 10 * i + 8, 5, i + 1);
	}
	if (sc->op_cat)
		region(&d, sc->op_cat, "dispatch", 50, 20200);
	call(&d, 60, 5, 10);
	kernel(&d, sc->kernel, 20, 68, sc->kernel_us, 10);
	/* No call from 65 to 20080: the host spins. */
	call(&d, 20080, 5, 11);
	kernel(&d, "after", 7, 20088, 100, 11);
	call(&d, 20200, 5, 12);
	kernel(&d, "tail", 7, 20205, 10, 12);
	t = doc_import(&d, "spin.json");
	free(d.s);
	return t;
}

struct run {
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_graph_stats st;
	struct orr_replay_step step;
};

static void run(struct orr_trace *t, const struct orr_graph_options *gopts,
		const struct orr_scale *scale, struct run *ret)
{
	struct orr_replay_options ropts = { .scales = scale, .nscales = scale ? 1 : 0 };
	struct orr_replay_step *s;
	struct orr_diag diag;
	size_t n;

	*ret = (struct run){ 0 };
	if (orr_graph_build(t, gopts, &ret->g, &diag) ||
	    orr_replay_run(ret->g, &ropts, &ret->r, &diag))
		fail_msg("replay failed: %s", diag.msg);
	orr_graph_get_stats(ret->g, &ret->st);
	orr_replay_steps(ret->r, 0, &s, &n);
	assert_int_equal(n, 1);
	ret->step = s[0];
	free(s);
}

static void run_free(struct run *r)
{
	orr_replay_free(r->r);
	orr_graph_free(r->g);
}

static int64_t measured_ns(const struct run *r)
{
	return r->step.measured_end_ns - r->step.measured_start_ns;
}

static int64_t predicted_ns(const struct run *r)
{
	return r->step.predicted_end_ns - r->step.predicted_start_ns;
}

/* The only task called NAME. */
static uint32_t task(const struct run *r, const char *name)
{
	for (uint32_t i = 0; i < orr_graph_task_count(r->g); i++)
		if (strcmp(orr_graph_task_name(r->g, i), name) == 0)
			return i;
	fail_msg("no task called '%s'", name);
	return ORR_NONE;
}

/* The call that launched GPU task `gpu` (its D2 edge). */
static uint32_t launcher(const struct run *r, uint32_t gpu)
{
	const struct orr_task *task = &orr_graph_tasks(r->g)[gpu];
	const struct orr_dep *dep = &orr_graph_deps(r->g)[task->first_dep];

	assert_true(task->ndeps > 0);
	assert_int_equal(dep->kind, ORR_DEP_LAUNCH);
	return dep->src;
}

static bool is_comm(const struct run *r, const char *name)
{
	return (orr_graph_tasks(r->g)[task(r, name)].flags & ORR_TASK_F_COMM) != 0;
}

static void test_spin_waits_for_deep_ep_kernel(void **state)
{
	const struct spin_case sc = { "user_annotation", DEEP_EP, 20000 };
	struct orr_trace *t = spin_trace(&sc);
	struct orr_scale half = { "*dispatch*", 0.5 };
	const struct orr_task *tasks;
	const struct orr_dep *dep;
	struct orr_breakdown b;
	uint32_t next;
	struct run r;

	run(t, NULL, NULL, &r);
	assert_int_equal(r.st.spin_waits, 1);
	assert_int_equal(r.st.edges[ORR_DEP_SYNC], 1);
	assert_int_equal(r.st.inferred[ORR_DEP_SYNC], 1);
	/* The call after the spin waits for the kernel; its gap is the 12 us wake-up. */
	tasks = orr_graph_tasks(r.g);
	next = launcher(&r, task(&r, "after"));
	assert_int_equal(tasks[next].gap_ns, 12 * US);
	dep = NULL;
	for (uint32_t i = 0; i < tasks[next].ndeps; i++)
		if (orr_graph_deps(r.g)[tasks[next].first_dep + i].kind == ORR_DEP_SYNC)
			dep = &orr_graph_deps(r.g)[tasks[next].first_dep + i];
	assert_non_null(dep);
	assert_int_equal(dep->src, task(&r, DEEP_EP));
	assert_int_equal(dep->kind, ORR_DEP_SYNC);
	assert_int_equal(dep->lat_ns, 12 * US);
	assert_int_equal(dep->flags, ORR_DEP_F_INFERRED | ORR_DEP_F_SPIN);
	/* The replay reproduces the step; the DeepEP kernel is communication. */
	assert_int_equal(measured_ns(&r), 20300 * US);
	assert_int_equal(predicted_ns(&r), measured_ns(&r));
	assert_true(is_comm(&r, DEEP_EP));
	orr_replay_breakdown(r.r, 0, false, r.step.measured_start_ns, r.step.measured_end_ns, &b);
	assert_int_equal(b.exposed_comm_ns, 20000 * US);
	assert_int_equal(b.exposed_compute_ns, (5 * 5 + 100 + 10) * US);
	orr_replay_breakdown(r.r, 0, true, r.step.predicted_start_ns, r.step.predicted_end_ns, &b);
	assert_int_equal(b.exposed_comm_ns, 20000 * US);
	run_free(&r);

	/* Twice as fast a kernel: the wait ends 10 ms sooner, and so does the step. */
	run(t, NULL, &half, &r);
	assert_int_equal(predicted_ns(&r), measured_ns(&r) - 10000 * US);
	run_free(&r);

	/* Without the spin edge (no D5), the gap stays CPU time and the step does not move. */
	run(t, &(struct orr_graph_options){ .skip_deps = 1u << ORR_DEP_SYNC }, &half, &r);
	assert_int_equal(r.st.spin_waits, 0);
	assert_int_equal(predicted_ns(&r), measured_ns(&r));
	run_free(&r);
	orr_trace_free(t);
}

/* A framework op (cpu_op) encloses the spin as well as an annotation does. */
static void test_spin_inside_cpu_op(void **state)
{
	const struct spin_case sc = { "cpu_op", "nvshmemi_alltoall_kernel", 20000 };
	struct orr_trace *t = spin_trace(&sc);
	struct run r;

	run(t, NULL, NULL, &r);
	assert_int_equal(r.st.spin_waits, 1);
	assert_true(is_comm(&r, "nvshmemi_alltoall_kernel"));
	assert_int_equal(predicted_ns(&r), measured_ns(&r));
	run_free(&r);
	orr_trace_free(t);
}

static void test_spin_needs_kernel_ending_at_gap_end(void **state)
{
	/* The kernel ends 10 ms before the next call: the gap is not its wait. */
	const struct spin_case early = { "user_annotation", DEEP_EP, 10000 };
	/* No op encloses the gap (only the step). */
	const struct spin_case no_op = { NULL, DEEP_EP, 20000 };
	/* A compute kernel: hosts wait for those through CUDA calls. */
	const struct spin_case compute = { "user_annotation", "gemm_big", 20000 };
	const struct spin_case *cases[] = { &early, &no_op, &compute };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct orr_trace *t = spin_trace(cases[i]);
		struct run r;

		run(t, NULL, NULL, &r);
		assert_int_equal(r.st.spin_waits, 0);
		assert_int_equal(r.st.edges[ORR_DEP_SYNC], 0);
		assert_int_equal(predicted_ns(&r), measured_ns(&r));
		run_free(&r);
		orr_trace_free(t);
	}
}

static void test_comm_glob_marks_kernel(void **state)
{
	const struct spin_case sc = { "user_annotation", "my_alltoall_kernel", 20000 };
	const char *const globs[] = { "*alltoall*" };
	const char *const other[] = { "*reduce*" };
	struct orr_trace *t = spin_trace(&sc);
	struct orr_breakdown b;
	struct run r;

	run(t, NULL, NULL, &r);
	assert_false(is_comm(&r, "my_alltoall_kernel"));
	assert_false(is_comm(&r, "gemm0"));
	assert_int_equal(r.st.spin_waits, 0);
	orr_replay_breakdown(r.r, 0, false, r.step.measured_start_ns, r.step.measured_end_ns, &b);
	assert_int_equal(b.exposed_comm_ns, 0);
	run_free(&r);

	run(t, &(struct orr_graph_options){ .comm_globs = other, .ncomm_globs = 1 }, NULL, &r);
	assert_false(is_comm(&r, "my_alltoall_kernel"));
	run_free(&r);

	run(t, &(struct orr_graph_options){ .comm_globs = globs, .ncomm_globs = 1 }, NULL, &r);
	assert_true(is_comm(&r, "my_alltoall_kernel"));
	assert_false(is_comm(&r, "after"));
	assert_int_equal(r.st.spin_waits, 1);
	assert_int_equal(r.st.collectives_alone, 1);
	orr_replay_breakdown(r.r, 0, false, r.step.measured_start_ns, r.step.measured_end_ns, &b);
	assert_int_equal(b.exposed_comm_ns, 20000 * US);
	assert_int_equal(predicted_ns(&r), measured_ns(&r));
	run_free(&r);
	orr_trace_free(t);
}

/* Built-in names: NCCL without a collective record, DeepEP mangled; others are not. */
static void test_builtin_comm_names(void **state)
{
	static const struct {
		const char *name;
		bool comm;
	} names[] = {
		{ "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", true },
		{ "nccl_custom_alltoall", true },
		{ "void dpsk::ep::internode::combine<true>(int4*)", true },
		{ "_ZN7deep_ep9intranode15notify_dispatchEPKiPiS2_", true },
		{ "nvshmemi_barrier_all_kernel", true },
		{ "ampere_sgemm_128x64_tn", false },
		{ "void at::native::vectorized_elementwise_kernel<4>(int)", false },
	};
	struct doc d = { 0 };
	struct orr_trace *t = NULL;
	struct orr_diag diag;
	struct run r = { 0 };

	doc_begin(&d, -1, 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		call(&d, 10.0 * (double)i, 2, (int)i + 1);
		kernel(&d, names[i].name, 7, 10.0 * (double)i + 3, 5, (int)i + 1);
		/* The same name twice: the cache answers the second. */
		call(&d, 10.0 * (double)i + 5, 2, (int)i + 101);
		kernel(&d, names[i].name, 8, 10.0 * (double)i + 8, 1, (int)i + 101);
	}
	t = doc_import(&d, "names.json");
	free(d.s);
	assert_int_equal(orr_graph_build(t, NULL, &r.g, &diag), 0);
	for (uint32_t i = 0; i < orr_graph_task_count(r.g); i++) {
		const struct orr_task *task = &orr_graph_tasks(r.g)[i];
		const char *name = orr_graph_task_name(r.g, i);

		if (task->kind != ORR_TASK_GPU)
			continue;
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (strcmp(name, names[k].name) == 0 &&
			    ((task->flags & ORR_TASK_F_COMM) != 0) != names[k].comm)
				fail_msg("'%s' should%s be communication", name,
					 names[k].comm ? "" : " not");
	}
	orr_graph_free(r.g);
	orr_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spin_waits_for_deep_ep_kernel),
		cmocka_unit_test(test_spin_inside_cpu_op),
		cmocka_unit_test(test_spin_needs_kernel_ending_at_gap_end),
		cmocka_unit_test(test_comm_glob_marks_kernel),
		cmocka_unit_test(test_builtin_comm_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

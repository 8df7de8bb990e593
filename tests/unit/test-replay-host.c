/* SPDX-License-Identifier: MIT */
/*
 * Host what-ifs on tiny traces written here (docs/replay-method.md, "Threads that only
 * poll" and "A thread's start"): a watchdog thread that only queries events gates
 * nothing, and the framework time between a step's start and its thread's first call
 * scales with the host.  Times below are microseconds as Kineto writes them.
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

/* Replays g with every CPU task's factor f (1: none). */
static struct orr_replay *replay_cpu(const struct orr_graph *g, double f)
{
	size_t n = orr_graph_task_count(g);
	float *cpu = malloc((n + 1) * sizeof(*cpu));
	struct orr_replay *r = NULL;
	struct orr_diag diag;
	int err;

	for (size_t i = 0; i < n; i++)
		cpu[i] = (float)f;
	err = orr_replay_run(g, &(struct orr_replay_options){ .cpu_factors = cpu }, &r, &diag);
	if (err)
		fail_msg("replay failed: %s: %s", orr_errname(err), diag.msg);
	free(cpu);
	return r;
}

/* The task whose event is a call called NAME on thread tid (the first one). */
static uint32_t call_on(const struct orr_graph *g, const char *name, int tid)
{
	const struct orr_rank *rk = orr_graph_get_rank(g, 0)->rank;

	for (uint32_t i = 0; i < orr_graph_task_count(g); i++) {
		const struct orr_proc *p = &orr_graph_procs(g)[orr_graph_tasks(g)[i].proc];

		if (p->kind == ORR_TASK_CPU && rk->places[p->place].tid == tid &&
		    strcmp(orr_graph_task_name(g, i), name) == 0)
			return i;
	}
	fail_msg("no call '%s' on thread %d", name, tid);
	return ORR_NONE;
}

static const struct orr_proc *thread_proc(const struct orr_graph *g, int tid)
{
	const struct orr_rank *rk = orr_graph_get_rank(g, 0)->rank;

	for (size_t p = 0; p < orr_graph_proc_count(g); p++)
		if (orr_graph_procs(g)[p].kind == ORR_TASK_CPU &&
		    rk->places[orr_graph_procs(g)[p].place].tid == tid)
			return &orr_graph_procs(g)[p];
	fail_msg("no thread %d", tid);
	return NULL;
}

/*
 * The main thread (1) launches a kernel, then runs 1995 us of framework code before
 * its next launch; a watchdog (9) wakes inside that time and queries an event three
 * times, as NCCL's and c10d's do.  Thread 5 queries too but also records an event: it
 * is no watchdog.
 */
static struct orr_trace *watchdog_trace(void)
{
	struct doc d = { 0 };
	struct orr_trace *t;

	doc_begin(&d, -1, 0);
	doc_step(&d, 1, 0, 3000);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "k1", 7, 5, 100, 1, NULL);
	doc_call(&d, "cudaEventQuery", 9, 1500, 2, 2);
	doc_call(&d, "cudaEventQuery", 9, 1510, 2, 3);
	doc_call(&d, "cudaStreamQuery", 9, 1520, 2, 4);
	doc_call(&d, "cudaEventRecord", 5, 2500, 2, 5);
	doc_call(&d, "cudaEventQuery", 5, 2510, 2, 6);
	doc_call(&d, "cudaLaunchKernel", 1, 2000, 5, 7);
	doc_kernel(&d, "k2", 7, 2005, 100, 7, NULL);
	t = doc_import(&d, "watchdog.json");
	free(d.s);
	return t;
}

static void test_watchdog_gates_nothing(void **state)
{
	struct orr_trace *t = watchdog_trace();
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_graph_stats st;
	struct orr_unexplained u;
	struct orr_diag diag;
	uint32_t next;

	(void)state;
	assert_int_equal(orr_graph_build(t, NULL, &g, &diag), 0);
	assert_true(thread_proc(g, 9)->flags & ORR_PROC_F_POLLER);
	assert_false(thread_proc(g, 5)->flags & ORR_PROC_F_POLLER);
	assert_false(thread_proc(g, 1)->flags & ORR_PROC_F_POLLER);
	orr_graph_get_stats(g, &st);
	/* The watchdog's queries inside the main thread's idle time are no hand-off. */
	assert_int_equal(st.edges[ORR_DEP_CROSS_THREAD], 0);
	/* Nothing waits for the watchdog's polls, whose wait is not found: not unexplained. */
	orr_graph_unexplained(g, 0, 1500 * US, 1530 * US, &u);
	assert_int_equal(u.total_ns, 0);

	next = call_on(g, "cudaLaunchKernel", 1) + 1;
	r = replay_cpu(g, 1);
	assert_int_equal(orr_replay_start(r, next) - orr_replay_start(r, next - 1), 2000 * US);
	orr_replay_free(r);
	/* A host ten times as fast: the 1995 us of framework code take 199.5. */
	r = replay_cpu(g, 0.1);
	assert_int_equal(orr_replay_start(r, next) - orr_replay_start(r, next - 1), 200 * US);
	orr_replay_free(r);
	orr_graph_free(g);
	orr_trace_free(t);
}

/*
 * The step starts at 0 on thread 1, whose first call comes 1000 us later (data loading,
 * the model's Python): framework work, which a faster host shortens.  Thread 9 first
 * calls at 1500 without a step of its own: its start, which does not move.
 */
static void test_first_call_after_step_start(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_replay_step *st;
	struct orr_path_seg *seg;
	struct orr_diag diag;
	size_t n, nseg;
	uint32_t first, poll;

	(void)state;
	doc_begin(&d, -1, 0);
	doc_step(&d, 1, 0, 1200);
	doc_call(&d, "cudaLaunchKernel", 1, 1000, 5, 1);
	doc_kernel(&d, "k1", 7, 1005, 100, 1, NULL);
	doc_call(&d, "cudaEventQuery", 9, 1500, 2, 2);
	t = doc_import(&d, "first-gap.json");
	free(d.s);
	assert_int_equal(orr_graph_build(t, NULL, &g, &diag), 0);
	first = call_on(g, "cudaLaunchKernel", 1);
	poll = call_on(g, "cudaEventQuery", 9);
	assert_int_equal(orr_graph_tasks(g)[first].gap_ns, 1000 * US);
	assert_int_equal(orr_graph_tasks(g)[poll].gap_ns, 0);

	r = replay_cpu(g, 1);
	assert_int_equal(orr_replay_start(r, first), 1000 * US);
	orr_replay_steps(r, 0, &st, &n);
	assert_int_equal(st[0].predicted_start_ns, 0);
	assert_int_equal(st[0].predicted_end_ns, 1200 * US);
	free(st);
	/* The path: 1000 us of the step's framework work, the launch, the kernel. */
	orr_replay_critical_path(r, 0, 1200 * US, &seg, &nseg);
	assert_true(nseg > 1);
	assert_int_equal(seg[0].cat, ORR_PATH_CPU);
	assert_int_equal(seg[0].start_ns, 0);
	assert_int_equal(seg[0].end_ns, 1000 * US);
	free(seg);
	orr_replay_free(r);

	r = replay_cpu(g, 0.1);
	assert_int_equal(orr_replay_start(r, first), 100 * US);
	assert_int_equal(orr_replay_start(r, poll), 1500 * US);
	orr_replay_steps(r, 0, &st, &n);
	assert_int_equal(st[0].predicted_start_ns, 0);
	free(st);
	orr_replay_free(r);
	orr_graph_free(g);
	orr_trace_free(t);
}

/*
 * k2 starts 490 us after k1 ends, waiting for what the trace does not show: the delay is
 * kept, and a what-if's path through it holds that much time no rule moves.
 */
static void test_path_fixed_time(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_path_seg *seg;
	struct orr_path_fixed f;
	struct orr_diag diag;
	size_t nseg;
	uint32_t k2;

	(void)state;
	doc_begin(&d, -1, 0);
	doc_step(&d, 1, 0, 1000);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "k1", 7, 5, 100, 1, NULL);
	doc_call(&d, "cudaLaunchKernel", 1, 10, 5, 2);
	doc_kernel(&d, "k2", 7, 595, 100, 2, NULL);
	/* Queued kernels 1 us apart: the device's stream gap. */
	for (int i = 0; i < 8; i++) {
		char name[8];

		snprintf(name, sizeof(name), "q%d", i);
		doc_call(&d, "cudaLaunchKernel", 1, 20 + 5 * i, 2, 3 + i);
		doc_kernel(&d, name, 7, 696 + 11 * i, 10, 3 + i, NULL);
	}
	t = doc_import(&d, "delay.json");
	free(d.s);
	assert_int_equal(orr_graph_build(t, NULL, &g, &diag), 0);
	for (k2 = 0; strcmp(orr_graph_task_name(g, k2), "k2"); k2++)
		;
	assert_true(orr_graph_task_delay(g, k2) > 400 * US);

	r = replay_cpu(g, 0.1);
	orr_replay_critical_path(r, 0, orr_replay_end(r, k2), &seg, &nseg);
	orr_replay_path_fixed(r, seg, nseg, &f);
	assert_int_equal(f.delays_ns, orr_graph_task_delay(g, k2));
	assert_int_equal(f.starts_ns, 0);
	assert_int_equal(f.waits_ns, 0);
	assert_int_equal(f.total_ns, f.delays_ns);
	free(seg);
	orr_replay_free(r);
	orr_graph_free(g);
	orr_trace_free(t);
}

/* Whether the path seg[0..n) passes through a task on thread tid. */
static bool path_on_thread(const struct orr_graph *g, const struct orr_path_seg *seg, size_t n,
			   int tid)
{
	const struct orr_rank *rk = orr_graph_get_rank(g, 0)->rank;

	for (size_t i = 0; i < n; i++) {
		const struct orr_proc *p;

		if (seg[i].task == ORR_NONE)
			continue;
		p = &orr_graph_procs(g)[orr_graph_tasks(g)[seg[i].task].proc];
		if (p->kind == ORR_TASK_CPU && rk->places[p->place].tid == tid)
			return true;
	}
	return false;
}

/* The segment of seg[0..n) that ends at t_ns (failing when none does). */
static const struct orr_path_seg *seg_ending(const struct orr_path_seg *seg, size_t n, int64_t t_ns)
{
	for (size_t i = 0; i < n; i++)
		if (seg[i].end_ns == t_ns)
			return &seg[i];
	fail_msg("no segment of the path ends at %lld ns", (long long)t_ns);
	return NULL;
}

/*
 * Thread 1 launches k1, then is idle 1095 us while thread 2 launches two kernels (a
 * hand-off, D6: thread 1 waited for thread 2), then copies to the host with cudaMemcpy,
 * which returns when its copy is done.  The copy's start is the call's, so the path
 * goes back through the call's start: measured, thread 1 waited for thread 2.  With a
 * host twice as slow, thread 1's own 1070 us of framework code (its gap, cut to the
 * hand-off's latency, scaled) end after thread 2's burst and the wait's latency: the
 * path is that framework code, and thread 2 is not on it.  Before, the path's start of
 * a call whose end the GPU decided was found again with the gap unscaled, and named
 * thread 2.
 */
static void test_path_start_of_blocking_call(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_path_seg *seg;
	const struct orr_path_seg *before;
	struct orr_diag diag;
	size_t nseg;
	uint32_t copy, launch;

	(void)state;
	doc_begin(&d, -1, 0);
	doc_step(&d, 1, 0, 3200);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "k1", 7, 5, 10, 1, NULL);
	doc_call(&d, "cudaLaunchKernel", 2, 15, 5, 2);
	doc_kernel(&d, "kb1", 8, 20, 5, 2, NULL);
	doc_call(&d, "cudaLaunchKernel", 2, 25, 5, 3);
	doc_kernel(&d, "kb2", 8, 30, 5, 3, NULL);
	doc_call(&d, "cudaMemcpy", 1, 1100, 2010, 4);
	doc_copy(&d, "Memcpy DtoH (Device -> Pageable)", 7, 1105, 2000, 4);
	t = doc_import(&d, "blocking-start.json");
	free(d.s);
	assert_int_equal(orr_graph_build(t, NULL, &g, &diag), 0);
	copy = call_on(g, "cudaMemcpy", 1);
	launch = call_on(g, "cudaLaunchKernel", 1);
	assert_int_equal(orr_graph_tasks(g)[copy].gap_ns, 1070 * US);

	r = replay_cpu(g, 1);
	orr_replay_critical_path(r, 0, orr_replay_end(r, copy), &seg, &nseg);
	before = seg_ending(seg, nseg, orr_replay_start(r, copy));
	assert_int_equal(before->cat, ORR_PATH_IDLE);
	assert_true(path_on_thread(g, seg, nseg, 2));
	free(seg);
	orr_replay_free(r);

	r = replay_cpu(g, 2);
	assert_int_equal(orr_replay_start(r, copy), orr_replay_end(r, launch) + 2140 * US);
	orr_replay_critical_path(r, 0, orr_replay_end(r, copy), &seg, &nseg);
	before = seg_ending(seg, nseg, orr_replay_start(r, copy));
	assert_int_equal(before->cat, ORR_PATH_CPU);
	assert_int_equal(before->start_ns, orr_replay_end(r, launch));
	assert_false(path_on_thread(g, seg, nseg, 2));
	free(seg);
	orr_replay_free(r);
	orr_graph_free(g);
	orr_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watchdog_gates_nothing),
		cmocka_unit_test(test_first_call_after_step_start),
		cmocka_unit_test(test_path_fixed_time),
		cmocka_unit_test(test_path_start_of_blocking_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * The graph and the replay on tiny traces written here, with answers worked out by
 * hand: two streams joined by an event, a synchronize, a blocking copy, a thread
 * hand-off, a two-rank collective with skewed arrival, a cycle, and the null and
 * one-task cases.  Times below are microseconds as Kineto writes them.
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
#include "../../replay/internal.h"
#include "trace-doc.h"

struct run {
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
};

static int replay(struct orr_trace *t, uint32_t skip, const struct orr_scale *scales, size_t n,
		  struct run *ret, struct orr_diag *diag)
{
	int err;

	*ret = (struct run){ .t = t };
	/* An ablation (skip) keeps no delays: they would stand in for the missing edges. */
	err = orr_graph_build(t,
			      &(struct orr_graph_options){ .skip_deps = skip, .no_delays = skip },
			      &ret->g, diag);
	if (!err)
		err = orr_replay_run(ret->g,
				     &(struct orr_replay_options){ .scales = scales, .nscales = n },
				     &ret->r, diag);
	return err;
}

static void run_ok(struct orr_trace *t, uint32_t skip, const struct orr_scale *scales, size_t n,
		   struct run *ret)
{
	struct orr_diag diag;
	int err = replay(t, skip, scales, n, ret, &diag);

	if (err)
		fail_msg("replay failed: %s: %s", orr_errname(err), diag.msg);
}

static void run_free(struct run *r)
{
	orr_replay_free(r->r);
	orr_graph_free(r->g);
}

/* The only task called NAME. */
static uint32_t task(const struct run *r, const char *name)
{
	uint32_t found = ORR_NONE;

	for (uint32_t i = 0; i < orr_graph_task_count(r->g); i++)
		if (strcmp(orr_graph_task_name(r->g, i), name) == 0) {
			if (found != ORR_NONE)
				fail_msg("two tasks called '%s'", name);
			found = i;
		}
	if (found == ORR_NONE)
		fail_msg("no task called '%s'", name);
	return found;
}

static int64_t pstart(const struct run *r, const char *name)
{
	return orr_replay_start(r->r, task(r, name));
}

static int64_t pend(const struct run *r, const char *name)
{
	return orr_replay_end(r->r, task(r, name));
}

/* The task called NAME on graph rank `rank`. */
static uint32_t task_on(const struct run *r, size_t rank, const char *name)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(r->g, rank);

	for (uint32_t i = gr->first_task; i < gr->first_task + gr->ntasks; i++)
		if (strcmp(orr_graph_task_name(r->g, i), name) == 0)
			return i;
	fail_msg("no task called '%s' on rank %zu", name, rank);
	return ORR_NONE;
}

/* Stream 8 waits for kernel A on stream 7 through an event; a sync waits for stream 8. */
static struct orr_trace *two_streams(void)
{
	struct doc d = { 0 };
	struct orr_trace *t;

	doc_begin(&d, -1, 0);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "A", 7, 5, 100, 1, NULL);
	doc_call(&d, "cudaEventRecord", 1, 10, 2, 2);
	doc_call(&d, "cudaStreamWaitEvent", 1, 14, 2, 3);
	doc_sync(&d, "Stream Wait Event", 8, 15, 3, 7, 2);
	doc_call(&d, "cuLaunchKernel", 1, 20, 5, 4);
	doc_kernel(&d, "B", 8, 105, 10, 4, NULL);
	doc_call(&d, "cudaStreamSynchronize", 1, 30, 86, 5);
	doc_sync(&d, "Stream Sync", 8, 30, 5, -1, -1);
	doc_call(&d, "cudaLaunchKernelExC", 1, 120, 5, 6);
	doc_kernel(&d, "C", 7, 125, 1, 6, NULL);
	t = doc_import(&d, "two-streams.json");
	free(d.s);
	return t;
}

static void test_event_orders_streams(void **state)
{
	struct orr_trace *t = two_streams();
	struct orr_graph_stats st;
	struct run r;

	run_ok(t, 0, NULL, 0, &r);
	orr_graph_get_stats(r.g, &st);
	assert_int_equal(st.edges[ORR_DEP_CROSS_STREAM], 1);
	assert_int_equal(st.inferred[ORR_DEP_CROSS_STREAM], 0);
	assert_int_equal(st.waits[ORR_WAIT_STREAM], 1);
	assert_int_equal(st.edges[ORR_DEP_LAUNCH], 3);
	/* B waits for A (ends at 105); the sync returns 1 us after B ends; C follows. */
	assert_int_equal(pstart(&r, "B"), 105 * US);
	assert_int_equal(pend(&r, "cudaStreamSynchronize"), 116 * US);
	assert_int_equal(pstart(&r, "C"), 125 * US);
	run_free(&r);

	/* Without D4, B starts after its launch (20 + the 5 us launch latency). */
	run_ok(t, 1u << ORR_DEP_CROSS_STREAM, NULL, 0, &r);
	assert_int_equal(pstart(&r, "B"), 25 * US);
	assert_int_equal(pend(&r, "cudaStreamSynchronize"), 36 * US);
	/* C's call moves up to 40, but C still follows A on stream 7. */
	assert_int_equal(pstart(&r, "cudaLaunchKernelExC"), 40 * US);
	assert_int_equal(pstart(&r, "C"), 105 * US);
	run_free(&r);
	orr_trace_free(t);
}

static void test_sync_waits_for_scaled_kernel(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_scale twice = { "gemm*", 2 };
	struct orr_replay_step *s;
	size_t n;
	struct run r;

	doc_begin(&d, -1, 0);
	doc_step(&d, 1, 0, 1020);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "gemm_128x64", 7, 5, 1000, 1, NULL);
	doc_call(&d, "cudaDeviceSynchronize", 1, 10, 996, 2);
	doc_call(&d, "cudaLaunchKernelExC", 1, 1010, 5, 3);
	doc_kernel(&d, "tail", 7, 1015, 1, 3, NULL);
	t = doc_import(&d, "sync.json");
	free(d.s);

	run_ok(t, 0, NULL, 0, &r);
	orr_replay_steps(r.r, 0, &s, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].step, 1);
	assert_int_equal(s[0].measured_end_ns - s[0].measured_start_ns, 1020 * US);
	assert_int_equal(s[0].predicted_end_ns - s[0].predicted_start_ns, 1020 * US);
	free(s);
	run_free(&r);

	/* The sync ends 1 us after the (now 2 ms) kernel; everything after moves with it. */
	run_ok(t, 0, &twice, 1, &r);
	assert_int_equal(pend(&r, "gemm_128x64"), 2005 * US);
	assert_int_equal(pend(&r, "cudaDeviceSynchronize"), 2006 * US);
	orr_replay_steps(r.r, 0, &s, &n);
	assert_int_equal(s[0].predicted_end_ns - s[0].predicted_start_ns, 2020 * US);
	free(s);
	run_free(&r);

	/* Without D5 the sync does not wait: only its own 1 us. */
	run_ok(t, 1u << ORR_DEP_SYNC, &twice, 1, &r);
	assert_int_equal(pend(&r, "cudaDeviceSynchronize"), 11 * US);
	run_free(&r);
	orr_trace_free(t);
}

static void test_blocking_copy_ends_with_its_copy(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_scale half = { "work", 0.5 };
	struct run r;

	doc_begin(&d, -1, 0);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "work", 7, 5, 500, 1, NULL);
	doc_call(&d, "cudaMemcpy", 1, 10, 600, 2);
	doc_copy(&d, "Memcpy DtoH (Device -> Pageable)", 7, 505, 100, 2);
	t = doc_import(&d, "copy.json");
	free(d.s);

	run_ok(t, 0, NULL, 0, &r);
	assert_int_equal(pend(&r, "cudaMemcpy"), 610 * US);
	run_free(&r);
	run_ok(t, 0, &half, 1, &r);
	assert_int_equal(pstart(&r, "Memcpy DtoH (Device -> Pageable)"), 255 * US);
	assert_int_equal(pend(&r, "cudaMemcpy"), 360 * US);
	run_free(&r);
	orr_trace_free(t);
}

/* The main thread idles while an autograd-like thread launches and waits. */
static void test_thread_handoff(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_scale twice = { "bwd", 2 };
	struct orr_graph_stats st;
	struct run r;

	doc_begin(&d, -1, 0);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "fwd", 7, 5, 100, 1, NULL);
	doc_call(&d, "cuLaunchKernel", 2, 1000, 5, 3);
	doc_kernel(&d, "bwd", 7, 1005, 1000, 3, NULL);
	doc_call(&d, "cudaStreamSynchronize", 2, 1010, 1000, 4);
	doc_sync(&d, "Stream Sync", 7, 1010, 4, -1, -1);
	doc_call(&d, "cudaLaunchKernelExC", 1, 2020, 5, 9);
	doc_kernel(&d, "opt", 7, 2025, 1, 9, NULL);
	t = doc_import(&d, "handoff.json");
	free(d.s);

	run_ok(t, 0, &twice, 1, &r);
	orr_graph_get_stats(r.g, &st);
	assert_int_equal(st.edges[ORR_DEP_CROSS_THREAD], 2);
	assert_int_equal(st.inferred[ORR_DEP_CROSS_THREAD], 2);
	/* bwd ends at 3005, the sync at 3010, and main resumes 10 us later. */
	assert_int_equal(pend(&r, "cudaStreamSynchronize"), 3010 * US);
	assert_int_equal(pstart(&r, "cudaLaunchKernelExC"), 3020 * US);
	run_free(&r);

	run_ok(t, 1u << ORR_DEP_CROSS_THREAD, &twice, 1, &r);
	assert_int_equal(pstart(&r, "cudaLaunchKernelExC"), 2020 * US);
	run_free(&r);
	orr_trace_free(t);
}

/*
 * The hand-off above with steps: step 2 starts 4 us before the main thread's next call,
 * in the work after its wake-up, so the boundary moves with that call when the
 * backward pass takes longer.
 */
static void test_step_boundary_after_wakeup(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_scale twice = { "bwd", 2 };
	struct orr_replay_step *s;
	size_t n;
	struct run r;

	doc_begin(&d, -1, 0);
	doc_step(&d, 1, 0, 2016);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "fwd", 7, 5, 100, 1, NULL);
	doc_call(&d, "cuLaunchKernel", 2, 1000, 5, 3);
	doc_kernel(&d, "bwd", 7, 1005, 1000, 3, NULL);
	doc_call(&d, "cudaStreamSynchronize", 2, 1010, 1000, 4);
	doc_sync(&d, "Stream Sync", 7, 1010, 4, -1, -1);
	doc_step(&d, 2, 2016, 20);
	doc_call(&d, "cudaLaunchKernelExC", 1, 2020, 5, 9);
	doc_kernel(&d, "opt", 7, 2025, 1, 9, NULL);
	t = doc_import(&d, "handoff-steps.json");
	free(d.s);

	run_ok(t, 0, NULL, 0, &r);
	orr_replay_steps(r.r, 0, &s, &n);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].predicted_end_ns - s[0].predicted_start_ns, 2016 * US);
	free(s);
	run_free(&r);

	run_ok(t, 0, &twice, 1, &r);
	orr_replay_steps(r.r, 0, &s, &n);
	/* The main thread resumes at 3020; the boundary stays 4 us before it. */
	assert_int_equal(s[0].predicted_end_ns - s[0].predicted_start_ns, 3016 * US);
	free(s);
	run_free(&r);
	orr_trace_free(t);
}

static void test_polling_waits_for_kernel(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_scale twice = { "spin", 2 };
	struct orr_graph_stats st;
	struct run r;

	doc_begin(&d, -1, 0);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "spin", 7, 5, 500, 1, NULL);
	doc_call(&d, "cudaEventQuery", 1, 100, 2, 2);
	doc_call(&d, "cudaEventQuery", 1, 300, 2, 3);
	doc_call(&d, "cudaEventQuery", 1, 503, 3, 4);
	doc_call(&d, "cudaLaunchKernelExC", 1, 510, 5, 5);
	doc_kernel(&d, "next", 7, 515, 1, 5, NULL);
	t = doc_import(&d, "poll.json");
	free(d.s);

	run_ok(t, 0, &twice, 1, &r);
	orr_graph_get_stats(r.g, &st);
	assert_int_equal(st.polls, 1);
	assert_int_equal(st.waits[ORR_WAIT_TASK], 1);
	assert_int_equal(st.inferred[ORR_DEP_SYNC], 1);
	assert_int_equal(orr_graph_task_count(r.g), 5); /* 3 polls are one task */
	/* The kernel ends at 1005, the last poll 1 us later, the next call 4 us after. */
	assert_int_equal(pstart(&r, "cudaLaunchKernelExC"), 1010 * US);
	run_free(&r);
	orr_trace_free(t);
}

#define ALLREDUCE ", \"Collective name\": \"allreduce\", \"Process Group Name\": \"0\", \"Seq\": 1"

static void write_file(const char *dir, const char *name, const struct doc *d)
{
	char *path = orr_xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(d->s, 1, d->n, f), d->n);
	assert_int_equal(fclose(f), 0);
	free(path);
}

/* Rank 1 reaches the all-reduce only after its kernel `pre`; rank 0 waits for it. */
static struct orr_trace *two_ranks(const char *dir)
{
	struct doc d = { 0 };
	struct orr_trace *t = NULL;
	struct orr_diag diag;

	doc_begin(&d, 0, 2);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "ncclKernel_AllReduce_RING_LL_Sum_float", 20, 5, 500, 1, ALLREDUCE);
	doc_call(&d, "cudaStreamSynchronize", 1, 10, 500, 2);
	doc_sync(&d, "Stream Sync", 20, 10, 2, -1, -1);
	doc_add(&d, "]}");
	write_file(dir, "rank-0.json", &d);

	doc_begin(&d, 1, 2);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "pre", 7, 5, 395, 1, NULL);
	doc_call(&d, "cudaEventRecord", 1, 10, 2, 2);
	doc_call(&d, "cudaStreamWaitEvent", 1, 14, 2, 3);
	doc_sync(&d, "Stream Wait Event", 20, 15, 3, 7, 2);
	doc_call(&d, "cudaLaunchKernelExC", 1, 20, 5, 4);
	doc_kernel(&d, "ncclKernel_AllReduce_RING_LL_Sum_float", 20, 400, 105, 4, ALLREDUCE);
	doc_call(&d, "cudaStreamSynchronize", 1, 30, 480, 5);
	doc_sync(&d, "Stream Sync", 20, 30, 5, -1, -1);
	doc_add(&d, "]}");
	write_file(dir, "rank-1.json", &d);
	free(d.s);
	if (orr_trace_import(dir, NULL, &t, &diag))
		fail_msg("import failed: %s", diag.msg);
	assert_int_equal(orr_trace_rank_count(t), 2);
	return t;
}

static int tmpdir_setup(void **state)
{
	char *dir =
		orr_xasprintf("%s/orr-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");

	if (!mkdtemp(dir)) {
		free(dir);
		return -1;
	}
	*state = dir;
	return 0;
}

static int tmpdir_teardown(void **state)
{
	char *cmd = orr_xasprintf("rm -rf '%s'", (char *)*state);
	int r = system(cmd);

	free(cmd);
	free(*state);
	return r;
}

static void test_collective_waits_for_late_rank(void **state)
{
	struct orr_trace *t = two_ranks(*state);
	struct orr_scale twice = { "pre", 2 };
	const char *nccl = "ncclKernel_AllReduce_RING_LL_Sum_float";
	struct orr_graph_stats st;
	struct orr_breakdown b;
	struct orr_replay_step *job;
	size_t n;
	struct run r;

	run_ok(t, 0, NULL, 0, &r);
	orr_graph_get_stats(r.g, &st);
	assert_int_equal(st.groups, 1);
	assert_int_equal(st.inferred[ORR_DEP_CROSS_RANK], 0);
	/* End = the last arrival (400) + the shortest member duration (105). */
	assert_int_equal(orr_replay_end(r.r, task_on(&r, 0, nccl)), 505 * US);
	assert_int_equal(orr_replay_end(r.r, task_on(&r, 1, nccl)), 505 * US);
	orr_replay_job_steps(r.r, &job, &n);
	assert_int_equal(n, 1);
	assert_int_equal(job[0].predicted_end_ns - job[0].predicted_start_ns,
			 job[0].measured_end_ns - job[0].measured_start_ns);
	free(job);
	/* Rank 0's all-reduce waits 5..400 for rank 1, then transfers; rank 1 never waits. */
	for (int predicted = 0; predicted < 2; predicted++) {
		orr_replay_breakdown(r.r, 0, predicted, 0, 10000 * US, &b);
		assert_int_equal(b.exposed_comm_ns, 500 * US);
		assert_int_equal(b.exposed_wait_ns, 395 * US);
		orr_replay_breakdown(r.r, 1, predicted, 0, 10000 * US, &b);
		assert_int_equal(b.exposed_comm_ns, 105 * US);
		assert_int_equal(b.exposed_wait_ns, 0);
	}
	run_free(&r);

	/* Rank 1 arrives at 795: rank 0's all-reduce and its sync wait for it. */
	run_ok(t, 0, &twice, 1, &r);
	assert_int_equal(orr_replay_end(r.r, task_on(&r, 0, nccl)), 900 * US);
	assert_int_equal(orr_replay_end(r.r, task_on(&r, 0, "cudaStreamSynchronize")), 905 * US);
	orr_replay_breakdown(r.r, 0, true, 0, 10000 * US, &b);
	assert_int_equal(b.exposed_wait_ns, 790 * US);
	assert_int_equal(b.exposed_comm_ns - b.exposed_wait_ns, 105 * US);
	run_free(&r);

	/* Uncoupled (no D7), rank 0 does not wait. */
	run_ok(t, 1u << ORR_DEP_CROSS_RANK, &twice, 1, &r);
	assert_int_equal(orr_replay_end(r.r, task_on(&r, 0, nccl)), 505 * US);
	orr_replay_breakdown(r.r, 0, true, 0, 10000 * US, &b);
	assert_int_equal(b.exposed_wait_ns, 0);
	run_free(&r);
	orr_trace_free(t);
}

/* Each stream waits for an event recorded after the other's launch: a cycle. */
static void test_cycle_is_reported(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_diag diag;
	struct run r;

	doc_begin(&d, -1, 0);
	doc_call(&d, "cudaStreamWaitEvent", 1, 0, 1, 1);
	doc_sync(&d, "Stream Wait Event", 8, 0, 1, 7, 6);
	doc_call(&d, "cudaLaunchKernel", 1, 2, 1, 2);
	doc_kernel(&d, "X", 8, 3, 10, 2, NULL);
	doc_call(&d, "cudaStreamWaitEvent", 1, 4, 1, 3);
	doc_sync(&d, "Stream Wait Event", 7, 4, 3, 8, 5);
	doc_call(&d, "cudaLaunchKernelExC", 1, 6, 1, 4);
	doc_kernel(&d, "Y", 7, 7, 10, 4, NULL);
	doc_call(&d, "cudaEventRecord", 1, 8, 1, 5);
	doc_call(&d, "cuEventRecord", 1, 10, 1, 6);
	t = doc_import(&d, "cycle.json");
	free(d.s);

	assert_int_equal(replay(t, 0, NULL, 0, &r, &diag), ORR_ECYCLE);
	assert_non_null(strstr(diag.msg, "wait for each other"));
	assert_non_null(strstr(diag.msg, "'X' on rank 0 stream 8"));
	assert_non_null(strstr(diag.msg, "'Y' on rank 0 stream 7"));
	assert_null(r.r);
	run_free(&r);
	orr_trace_free(t);
}

static void test_null_and_one_task(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_replay_step *s;
	size_t n;
	struct run r;

	doc_begin(&d, -1, 0);
	doc_step(&d, 3, 10, 50);
	t = doc_import(&d, "empty.json");
	run_ok(t, 0, NULL, 0, &r);
	assert_int_equal(orr_graph_task_count(r.g), 0);
	orr_replay_steps(r.r, 0, &s, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].predicted_start_ns, s[0].measured_start_ns);
	assert_int_equal(s[0].predicted_end_ns, s[0].measured_end_ns);
	free(s);
	run_free(&r);
	orr_trace_free(t);

	doc_begin(&d, -1, 0);
	doc_kernel(&d, "alone", 7, 10, 20, 1, NULL);
	t = doc_import(&d, "one.json");
	free(d.s);
	run_ok(t, 0, NULL, 0, &r);
	assert_int_equal(orr_graph_task_count(r.g), 1);
	assert_int_equal(pstart(&r, "alone") - orr_graph_task_start(r.g, 0), 0);
	assert_int_equal(pend(&r, "alone") - orr_graph_task_end(r.g, 0), 0);
	run_free(&r);
	orr_trace_free(t);
}

static void test_replay_is_deterministic(void **state)
{
	struct orr_trace *t = two_streams();
	struct run a, b;
	size_t n;

	run_ok(t, 0, NULL, 0, &a);
	run_ok(t, 0, NULL, 0, &b);
	n = orr_graph_task_count(a.g);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(orr_replay_start(a.r, i), orr_replay_start(b.r, i));
		assert_int_equal(orr_replay_end(a.r, i), orr_replay_end(b.r, i));
	}
	run_free(&a);
	run_free(&b);
	orr_trace_free(t);
}

static void test_critical_path_covers_window(void **state)
{
	struct orr_trace *t = two_streams();
	struct orr_path_seg *seg;
	size_t n;
	int64_t covered = 0, comp = 0;
	struct run r;

	run_ok(t, 0, NULL, 0, &r);
	orr_replay_critical_path(r.r, 0, 126 * US, &seg, &n);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		covered += seg[i].end_ns - seg[i].start_ns;
		if (i)
			assert_true(seg[i].start_ns >= seg[i - 1].end_ns);
		if (seg[i].cat == ORR_PATH_COMPUTE)
			comp += seg[i].end_ns - seg[i].start_ns;
	}
	/* The path runs through A (100 us), B (10 us) and C (1 us). */
	assert_int_equal(comp, 111 * US);
	assert_true(covered <= 126 * US);
	free(seg);
	run_free(&r);
	orr_trace_free(t);
}

/*
 * Rank 1 arrives late: the path of the job's window ends with rank 0's synchronize
 * returning after its all-reduce (D5), whose transfer follows rank 1's arrival (D7), and
 * goes on through rank 1's long kernel; it covers the window segment after segment.
 */
static void test_critical_path_through_late_peer(void **state)
{
	struct orr_trace *t = two_ranks(*state);
	struct orr_scale twice = { "pre", 2 };
	struct orr_replay_step *job;
	struct orr_path_seg *seg;
	size_t n, nj;
	bool transfer = false, sync = false, pre = false;
	struct run r;

	run_ok(t, 0, &twice, 1, &r);
	orr_replay_job_steps(r.r, &job, &nj);
	assert_int_equal(nj, 1);
	orr_replay_critical_path(r.r, job[0].predicted_start_ns, job[0].predicted_end_ns, &seg, &n);
	assert_true(n > 0);
	assert_int_equal(seg[0].start_ns, job[0].predicted_start_ns);
	assert_int_equal(seg[n - 1].end_ns, job[0].predicted_end_ns);
	for (size_t i = 0; i < n; i++) {
		const char *name = seg[i].task == ORR_NONE ? ""
							   : orr_graph_task_name(r.g, seg[i].task);

		if (i)
			assert_int_equal(seg[i].start_ns, seg[i - 1].end_ns);
		if (seg[i].cat == ORR_PATH_COMM) {
			/* rank 0's member: from rank 1's arrival (795) to the end (900) */
			assert_int_equal(seg[i].via, ORR_DEP_CROSS_RANK);
			assert_int_equal(seg[i].end_ns - seg[i].start_ns, 105 * US);
			transfer = true;
		}
		if (strcmp(name, "cudaStreamSynchronize") == 0 && seg[i].via == ORR_DEP_SYNC)
			sync = true;
		if (strcmp(name, "pre") == 0) {
			assert_int_equal(seg[i].end_ns - seg[i].start_ns, 790 * US);
			pre = true;
		}
	}
	assert_true(transfer && sync && pre);
	free(seg);
	free(job);
	run_free(&r);
	orr_trace_free(t);
}

/*
 * CPU factors scale a CPU task's duration and the time before it on its thread: three
 * 10 us calls 10 us apart end at 50 us; twice as slow at 100, half at 25 (the first call
 * starts where it was measured); a factor of 1 changes nothing.
 */
static void test_cpu_factors(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_diag diag;
	const double f[] = { 1, 2, 0.5 };
	const int64_t end[] = { 50, 100, 25 };

	(void)state;
	doc_begin(&d, -1, 0);
	doc_call(&d, "cudaGetDevice", 1, 0, 10, 1);
	doc_call(&d, "cudaGetDevice", 1, 20, 10, 2);
	doc_call(&d, "cudaGetDevice", 1, 40, 10, 3);
	t = doc_import(&d, "cpu");
	free(d.s);
	assert_int_equal(orr_graph_build(t, NULL, &g, &diag), 0);
	for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
		size_t n = orr_graph_task_count(g);
		float *cpu = malloc(n * sizeof(*cpu));
		int64_t last = 0;

		for (size_t i = 0; i < n; i++)
			cpu[i] = (float)f[k];
		assert_int_equal(orr_replay_run(g,
						&(struct orr_replay_options){ .cpu_factors = cpu },
						&r, &diag),
				 0);
		for (uint32_t i = 0; i < n; i++)
			last = orr_replay_end(r, i) > last ? orr_replay_end(r, i) : last;
		assert_int_equal(last - orr_replay_start(r, 0), end[k] * US);
		orr_replay_free(r);
		free(cpu);
	}
	orr_graph_free(g);
	orr_trace_free(t);
}

/* Without inferred edges and waits: the exact ones stay, the guessed ones go, costs stay. */
static void test_drop_inferred_keeps_exact(void **state)
{
	struct orr_graph_options drop = { .drop_inferred = true };
	struct doc d = { 0 };
	struct orr_trace *t = two_streams();
	struct orr_graph_stats st;
	struct orr_diag diag;
	struct run r;

	/* Nothing inferred: the same edges and times. */
	r = (struct run){ .t = t };
	assert_int_equal(orr_graph_build(t, &drop, &r.g, &diag), 0);
	assert_int_equal(orr_replay_run(r.g, NULL, &r.r, &diag), 0);
	orr_graph_get_stats(r.g, &st);
	assert_int_equal(st.edges[ORR_DEP_CROSS_STREAM], 1);
	assert_int_equal(st.edges[ORR_DEP_LAUNCH], 3);
	assert_int_equal(st.edges[ORR_DEP_SYNC], 1);
	assert_int_equal(pstart(&r, "B"), 105 * US);
	assert_int_equal(pend(&r, "cudaStreamSynchronize"), 116 * US);
	run_free(&r);
	orr_trace_free(t);

	/* An inferred polling wait and two inferred hand-offs; the exact sync stays. */
	doc_begin(&d, -1, 0);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "spin", 7, 5, 500, 1, NULL);
	doc_call(&d, "cudaEventQuery", 1, 100, 2, 2);
	doc_call(&d, "cudaEventQuery", 1, 300, 2, 3);
	doc_call(&d, "cudaEventQuery", 1, 503, 3, 4);
	doc_call(&d, "cuLaunchKernel", 2, 2000, 5, 5);
	doc_kernel(&d, "bwd", 7, 2005, 1000, 5, NULL);
	doc_call(&d, "cudaStreamSynchronize", 2, 2010, 1000, 6);
	doc_sync(&d, "Stream Sync", 7, 2010, 6, -1, -1);
	doc_call(&d, "cudaLaunchKernelExC", 1, 3020, 5, 9);
	doc_kernel(&d, "opt", 8, 3025, 1, 9, NULL);
	t = doc_import(&d, "inferred.json");
	free(d.s);
	run_ok(t, 0, NULL, 0, &r);
	orr_graph_get_stats(r.g, &st);
	assert_int_equal(st.inferred[ORR_DEP_SYNC], 1);
	assert_int_equal(st.inferred[ORR_DEP_CROSS_THREAD], 2);
	run_free(&r);

	r = (struct run){ .t = t };
	assert_int_equal(orr_graph_build(t, &drop, &r.g, &diag), 0);
	assert_int_equal(orr_replay_run(r.g, NULL, &r.r, &diag), 0);
	orr_graph_get_stats(r.g, &st);
	for (int k = 0; k < ORR_DEP_COUNT; k++)
		assert_int_equal(st.inferred[k], 0);
	assert_int_equal(st.edges[ORR_DEP_CROSS_THREAD], 0);
	assert_int_equal(st.edges[ORR_DEP_SYNC], 1); /* the stream sync */
	assert_int_equal(st.edges[ORR_DEP_LAUNCH], 3);
	/* The polls keep their own 1 us and their measured span, but no longer wait. */
	assert_int_equal(pend(&r, "cudaEventQuery"), 101 * US);
	assert_int_equal(orr_graph_task_end(r.g, task(&r, "cudaEventQuery")), 506 * US);
	/* Thread 2 keeps its own start; its sync still returns 5 us after bwd ends. */
	assert_int_equal(pend(&r, "cudaStreamSynchronize"), 3010 * US);
	run_free(&r);
	orr_trace_free(t);
}

/*
 * The replay's state per task is new memory at every replay: at 1,024 ranks x 100 k
 * events 57.9 M states, whose first-touch page faults were 40 % of the replay's CPU
 * time at 32 bytes each (docs/performance.md).  24 bytes: start, end (or, until the
 * task is done, the first task parked on it), cause and state.
 */
static void test_task_state_is_24_bytes(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct orr__tstate), 24);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_orders_streams),
		cmocka_unit_test(test_sync_waits_for_scaled_kernel),
		cmocka_unit_test(test_blocking_copy_ends_with_its_copy),
		cmocka_unit_test(test_thread_handoff),
		cmocka_unit_test(test_step_boundary_after_wakeup),
		cmocka_unit_test(test_polling_waits_for_kernel),
		cmocka_unit_test_setup_teardown(test_collective_waits_for_late_rank, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test(test_cycle_is_reported),
		cmocka_unit_test(test_null_and_one_task),
		cmocka_unit_test(test_replay_is_deterministic),
		cmocka_unit_test(test_critical_path_covers_window),
		cmocka_unit_test(test_cpu_factors),
		cmocka_unit_test_setup_teardown(test_critical_path_through_late_peer, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test(test_drop_inferred_keeps_exact),
		cmocka_unit_test(test_task_state_is_24_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * The tracer's session end to end without CUPTI: flat records (as cupti-records.c makes
 * them) in, a native file out, read back with orr_trace_import() and checked: events,
 * places, call classes, copies, sync pairing, ops from emit_nvtx, steps, lost timestamps,
 * bounded tables and allocation failures.  The step window is in test-tracer-window.c.
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

#include "test-util.h"
#include "test-tracer-util.h"

static void process_records(struct orr__session *s)
{
	struct orr__trec r = rec(ORR__TREC_DEVICE);

	r.device = 0;
	r.name = "NVIDIA H100 80GB HBM3";
	r.num_sms = 132;
	r.cc_major = 9;
	r.mem_bytes = 80ll << 30;
	orr__session_add(s, &r);
	r = rec(ORR__TREC_CONTEXT);
	r.context = 1;
	r.device = 0;
	orr__session_add(s, &r);
	r = rec(ORR__TREC_NAME);
	r.name = "main";
	orr__session_add(s, &r);
	r = rec(ORR__TREC_EXT_CORR);
	r.correlation = 10;
	r.id = 555;
	orr__session_add(s, &r);
	r = rec(ORR__TREC_OVERHEAD);
	r.start_ns = 10;
	r.end_ns = 30;
	orr__session_add(s, &r);
}

/* One step of everything the model knows, fed out of order as CUPTI may deliver it. */
static void feed_step(struct orr__session *s)
{
	process_records(s);
	marker(s, ORR__MARKER_START, 1, "ProfilerStep#5, op_id = 1", NULL, 1000);
	marker(s, ORR__MARKER_START, 2, "aten::mm, seq = 12, op_id = 3, sizes = [[4, 8], [8, 2]]",
	       NULL, 1100);
	api(s, false, 211, 10, 1200);
	kernel(s, "_Z6matmulPfS_", 10, 7, 1400, 1900);
	marker(s, ORR__MARKER_END, 2, NULL, NULL, 1350);
	api(s, false, 135, 11, 1360);
	api(s, false, 147, 12, 1380);
	/* The wait arrives before the event record it refers to. */
	sync_rec(s, ORR_SYNC_STREAM_WAIT, 12, 9, 5, 77, 1380);
	cuda_event(s, 11, 7, 5, 77);
	api(s, false, 41, 13, 1400);
	copy(s, ORR__TREC_MEMCPY, 13, 4096, 2000);
	api(s, false, 51, 14, 1420);
	copy(s, ORR__TREC_MEMSET, 14, 256, 2150);
	marker(s, ORR__MARKER_START, 3, "ncclAllReduce", "NCCL", 1500);
	api(s, true, 307, 15, 1505);
	kernel(s, "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL19ncclDevKernelArgs4K", 15, 11, 2300,
	       2400);
	marker(s, ORR__MARKER_END, 3, NULL, "NCCL", 1510);
	api(s, false, 137, 16, 1600);
	sync_rec(s, ORR_SYNC_EVENT, 16, ORR__INVALID32, 5, 77, 1600);
	api(s, false, 131, 17, 1700);
	sync_rec(s, ORR_SYNC_STREAM, 17, 9, ORR__INVALID32, ORR__INVALID32, 1700);
	marker(s, ORR__MARKER_INSTANT, 4, "checkpoint", NULL, 2500);
	kernel(s, "lost", 18, 7, 0, 0); /* no timestamps */
	api(s, false, 311, 20, 2600);
	kernel(s, "graph_node_a", 20, 7, 2700, 2750);
	kernel(s, "graph_node_b", 20, 7, 2750, 2800);
	marker(s, ORR__MARKER_END, 1, NULL, NULL, 3000);
}

/* ---- checks on the imported rank ---- */

static void check_calls(const struct orr_trace *t, const struct orr_rank *r)
{
	const struct orr_event *e = must_find(t, r, ORR_EVENT_RUNTIME, "cudaLaunchKernel");
	const struct orr_place *p = &r->places[e->place];

	assert_int_equal(e->sub, ORR_CALL_LAUNCH);
	assert_int_equal(e->correlation, 10);
	assert_int_equal(e->external_id, 555);
	assert_int_equal(e->start_ns, 1200);
	assert_int_equal(e->dur_ns, 10);
	assert_int_equal(p->kind, ORR_PLACE_THREAD);
	assert_int_equal(p->pid, PID);
	assert_int_equal(p->tid, TID);
	assert_string_equal(orr_trace_str(t, p->name), "main");
	assert_int_equal(must_find(t, r, ORR_EVENT_DRIVER, "cuLaunchKernel")->sub, ORR_CALL_LAUNCH);
	assert_int_equal(must_find(t, r, ORR_EVENT_RUNTIME, "cudaStreamWaitEvent")->sub,
			 ORR_CALL_STREAM_WAIT);
	assert_int_equal(must_find(t, r, ORR_EVENT_RUNTIME, "cudaGraphLaunch")->sub,
			 ORR_CALL_GRAPH_LAUNCH);
	assert_int_equal(must_find(t, r, ORR_EVENT_RUNTIME, "cudaMemcpyAsync")->sub,
			 ORR_CALL_MEMCPY);
}

static void check_gpu(const struct orr_trace *t, const struct orr_rank *r)
{
	const struct orr_event *k = must_find(t, r, ORR_EVENT_KERNEL, "matmul(float*, float*)");
	const struct orr_event *nccl =
		must_find(t, r, ORR_EVENT_KERNEL,
			  "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs4K)");
	const struct orr_event *m =
		must_find(t, r, ORR_EVENT_MEMCPY, "Memcpy DtoH (Device -> Pageable)");
	const struct orr_event *ms = must_find(t, r, ORR_EVENT_MEMSET, "Memset (Pageable)");

	assert_int_equal(k->correlation, 10);
	assert_int_equal(k->dur_ns, 500);
	assert_int_equal(r->places[k->place].kind, ORR_PLACE_STREAM);
	assert_int_equal(r->places[k->place].tid, 7);
	assert_int_equal(r->places[k->place].device, 0);
	assert_int_not_equal(nccl->coll, ORR_NONE);
	assert_string_equal(orr_trace_str(t, r->collectives[nccl->coll].type), "AllReduce");
	assert_int_equal(k->coll, ORR_NONE);
	assert_int_equal(r->copies[m->args].bytes, 4096);
	assert_int_equal(r->copies[ms->args].bytes, 256);
	assert_null(find(t, r, ORR_EVENT_KERNEL, "lost", 0));
	/* Both nodes of the graph launch carry its correlation. */
	assert_int_equal(must_find(t, r, ORR_EVENT_KERNEL, "graph_node_a")->correlation, 20);
	assert_int_equal(must_find(t, r, ORR_EVENT_KERNEL, "graph_node_b")->correlation, 20);
}

static void check_syncs(const struct orr_trace *t, const struct orr_rank *r)
{
	const struct orr_event *w = must_find(t, r, ORR_EVENT_SYNC, "Stream Wait Event");
	const struct orr_event *es = must_find(t, r, ORR_EVENT_SYNC, "Event Sync");
	const struct orr_event *ss = must_find(t, r, ORR_EVENT_SYNC, "Stream Sync");
	const struct orr_sync_args *a = &r->syncs[w->args];

	assert_int_equal(w->sub, ORR_SYNC_STREAM_WAIT);
	assert_int_equal(w->correlation, 12);
	assert_int_equal(a->stream, 9);
	assert_int_equal(a->wait_on_stream, 7);
	assert_int_equal(a->event_record_corr, 11);
	assert_int_equal(a->event_id, 5);
	assert_int_equal(r->places[w->place].device, 0); /* context 1's device */
	a = &r->syncs[es->args];
	assert_int_equal(es->sub, ORR_SYNC_EVENT);
	assert_int_equal(a->stream, -1);
	assert_int_equal(a->wait_on_stream, 7);
	assert_int_equal(a->event_record_corr, 11);
	a = &r->syncs[ss->args];
	assert_int_equal(ss->sub, ORR_SYNC_STREAM);
	assert_int_equal(a->stream, 9);
	assert_int_equal(a->event_id, -1);
}

static void check_nvtx(const struct orr_trace *t, const struct orr_rank *r)
{
	const struct orr_event *op = must_find(t, r, ORR_EVENT_OP, "aten::mm");
	const struct orr_event *step = must_find(t, r, ORR_EVENT_ANNOTATION, "ProfilerStep#5");
	const struct orr_op_args *a = &r->ops[op->args];
	const struct orr_input *in = &r->inputs[a->first_input];
	struct orr_step *steps;
	size_t n;

	assert_int_equal(op->start_ns, 1100);
	assert_int_equal(op->dur_ns, 250);
	assert_int_equal(a->sequence, 12);
	assert_int_equal(a->ninputs, 2);
	assert_int_equal(in[0].ndims, 2);
	assert_int_equal(r->dims[in[0].first_dim], 4);
	assert_int_equal(r->dims[in[0].first_dim + 1], 8);
	assert_int_equal(r->dims[in[1].first_dim], 8);
	assert_int_equal(step->start_ns, 1000);
	assert_int_equal(step->dur_ns, 2000);
	assert_int_equal(must_find(t, r, ORR_EVENT_ANNOTATION, "ncclAllReduce")->dur_ns, 10);
	assert_int_equal(must_find(t, r, ORR_EVENT_MARKER, "checkpoint")->dur_ns, 0);
	assert_int_equal(orr_rank_steps(t, r, &steps, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(steps[0].step, 5);
	assert_int_equal(steps[0].start_ns, 1000);
	free(steps);
}

static void test_session_one_step(void **state)
{
	struct fixture f;
	const struct orr_rank *r;

	assert_int_equal(fixture_new(&f, *state, 0, 0), 0);
	feed_step(f.s);
	fixture_close(&f);
	assert_true(f.sum.written);
	assert_int_equal(f.sum.error, 0);
	assert_int_equal(f.sum.lost_timing, 1);
	assert_int_equal(f.sum.dropped_records, 1);
	assert_int_equal(f.sum.dropped_events, 0);
	assert_int_equal(f.sum.syncs_exact, 2);
	assert_int_equal(f.sum.syncs_unresolved, 0);
	assert_int_equal(f.sum.overhead_records, 1);
	assert_int_equal(f.sum.overhead_ns, 20);
	r = fixture_import(&f);
	assert_int_equal(r->nevents, f.sum.events);
	assert_int_equal(r->rank, 0);
	assert_int_equal(r->pid, PID);
	assert_string_equal(orr_trace_str(f.t, r->producer), "orrery-tracer test");
	assert_string_equal(orr_trace_str(f.t, r->host), "node1");
	assert_int_equal(r->cupti_version, 130001);
	assert_int_equal(r->dropped_records, 1);
	assert_int_equal(r->dropped_events, 0);
	assert_int_equal(r->first_step, -1);
	assert_int_equal(r->ndevices, 1);
	assert_string_equal(orr_trace_str(f.t, r->devices[0].name), "NVIDIA H100 80GB HBM3");
	assert_int_equal(r->devices[0].num_sms, 132);
	check_calls(f.t, r);
	check_gpu(f.t, r);
	check_syncs(f.t, r);
	check_nvtx(f.t, r);
	fixture_free(&f);
}

static void test_session_unresolved_wait(void **state)
{
	struct fixture f;
	const struct orr_rank *r;
	const struct orr_event *w;

	assert_int_equal(fixture_new(&f, *state, 0, 0), 0);
	api(f.s, false, 147, 12, 100);
	sync_rec(f.s, ORR_SYNC_STREAM_WAIT, 12, 9, 5, 77, 100);
	fixture_close(&f);
	assert_int_equal(f.sum.syncs_unresolved, 1);
	r = fixture_import(&f);
	w = must_find(f.t, r, ORR_EVENT_SYNC, "Stream Wait Event");
	assert_int_equal(r->syncs[w->args].wait_on_stream, -1);
	assert_int_equal(r->syncs[w->args].event_record_corr, -1);
	assert_int_equal(r->syncs[w->args].event_id, 5);
	fixture_free(&f);
}
/* Steps marked by nvtxMark with a prefix of the job's own; a range whose end comes first. */
static void test_session_marks_and_late_starts(void **state)
{
	struct fixture f;
	const struct orr_rank *r;
	const struct orr_event *e;
	struct orr_step *steps;
	size_t n;

	assert_int_equal(fixture_new_with(&f, *state, 0, 0, "iteration ", 0), 0);
	marker(f.s, ORR__MARKER_INSTANT, 1, "iteration 1", NULL, 100);
	api(f.s, false, 211, 1, 120);
	marker(f.s, ORR__MARKER_END, 7, NULL, NULL, 250);
	marker(f.s, ORR__MARKER_START, 7, "forward", NULL, 150);
	marker(f.s, ORR__MARKER_INSTANT, 2, "iteration 2", NULL, 300);
	api(f.s, false, 211, 2, 400);
	fixture_close(&f);
	r = fixture_import(&f);
	/* Written as ProfilerStep#N, the name orr_step_number() reads. */
	e = must_find(f.t, r, ORR_EVENT_ANNOTATION, "ProfilerStep#1");
	assert_int_equal(e->start_ns, 100);
	assert_int_equal(e->dur_ns, 200); /* until the next step's mark */
	e = must_find(f.t, r, ORR_EVENT_ANNOTATION, "ProfilerStep#2");
	assert_int_equal(e->dur_ns, 110); /* until the last CPU record */
	e = must_find(f.t, r, ORR_EVENT_ANNOTATION, "forward");
	assert_int_equal(e->start_ns, 150);
	assert_int_equal(e->dur_ns, 100);
	assert_int_equal(orr_rank_steps(f.t, r, &steps, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(steps[0].step, 1);
	assert_int_equal(steps[0].end_ns, 300);
	free(steps);
	fixture_free(&f);
}

static void test_session_open_ranges_bounded(void **state)
{
	struct fixture f;
	const struct orr_rank *r;

	/* Room for two open ranges: the third is dropped and counted, the others kept. */
	assert_int_equal(fixture_new_with(&f, *state, 0, 0, "ProfilerStep#", 2), 0);
	marker(f.s, ORR__MARKER_START, 1, "a", NULL, 100);
	marker(f.s, ORR__MARKER_START, 2, "b", NULL, 110);
	marker(f.s, ORR__MARKER_START, 3, "c", NULL, 120);
	marker(f.s, ORR__MARKER_END, 3, NULL, NULL, 130);
	marker(f.s, ORR__MARKER_END, 2, NULL, NULL, 140);
	marker(f.s, ORR__MARKER_START, 4, "d", NULL, 150); /* a free entry again */
	marker(f.s, ORR__MARKER_END, 4, NULL, NULL, 160);
	marker(f.s, ORR__MARKER_END, 1, NULL, NULL, 170);
	marker(f.s, ORR__MARKER_START, 5, "open at close", NULL, 180);
	fixture_close(&f);
	assert_int_equal(f.sum.dropped_events, 1);
	r = fixture_import(&f);
	assert_int_equal(must_find(f.t, r, ORR_EVENT_ANNOTATION, "a")->dur_ns, 70);
	assert_int_equal(must_find(f.t, r, ORR_EVENT_ANNOTATION, "b")->dur_ns, 30);
	assert_int_equal(must_find(f.t, r, ORR_EVENT_ANNOTATION, "d")->dur_ns, 10);
	assert_null(find(f.t, r, ORR_EVENT_ANNOTATION, "c", 0));
	assert_int_equal(must_find(f.t, r, ORR_EVENT_ANNOTATION, "open at close")->dur_ns, 0);
	fixture_free(&f);
}

/* Every allocation of the tracer's own fails in turn: records are dropped, never a crash. */
static void test_session_allocation_failures(void **state)
{
	bool dropped = false, complete = false;

	for (int64_t k = 0; k < 80 && !complete; k++) {
		struct fixture f;
		const struct orr_rank *r;
		int rc;

		orr__talloc_fail_after(k);
		rc = fixture_new(&f, *state, 0, 0);
		if (rc) {
			orr__talloc_fail_after(-1);
			assert_int_equal(rc, -ENOMEM);
			orr__window_release(&f.win);
			continue;
		}
		feed_step(f.s);
		fixture_close(&f);
		orr__talloc_fail_after(-1);
		assert_true(f.sum.written);
		r = fixture_import(&f);
		assert_int_equal(r->nevents, f.sum.events);
		dropped |= f.sum.dropped_events > 0;
		complete = f.sum.dropped_events == 0;
		fixture_free(&f);
	}
	assert_true(dropped);
	assert_true(complete);
}

static void test_session_unwritable(void **state)
{
	struct fixture f;
	char dir[512];

	/* A directory that does not exist: nothing written, every event counted. */
	snprintf(dir, sizeof(dir), "%s/missing", (const char *)*state);
	assert_int_equal(fixture_new(&f, dir, 0, 0), 0);
	api(f.s, false, 211, 1, 100);
	api(f.s, false, 211, 2, 200);
	fixture_close(&f);
	assert_false(f.sum.written);
	assert_int_not_equal(f.sum.error, 0);
	assert_int_equal(f.sum.dropped_events, 2);
	assert_int_equal(f.sum.events, 0);
	orr__window_release(&f.win);
}
/*
 * Driver calls the model has no class for (queries: cuKernelGetName, cuGetErrorString,
 * 31,308 of 37,353 driver records on the H200 run) are not written; launches through
 * the driver (Triton, cuBLASLt, NCCL) are, and a driver call without a name is kept.
 */
static void test_session_driver_queries(void **state)
{
	struct fixture f;
	const struct orr_rank *r;
	size_t driver = 0;

	assert_true(orr__driver_call_kept("cuLaunchKernelEx"));
	assert_true(orr__driver_call_kept("cuMemcpyHtoDAsync_v2"));
	assert_true(orr__driver_call_kept("cuStreamSynchronize"));
	assert_true(orr__driver_call_kept("cuCtxSynchronize_v2"));
	assert_false(orr__driver_call_kept("cuKernelGetName"));
	assert_false(orr__driver_call_kept("cuGetProcAddress_v2"));
	assert_int_equal(fixture_new(&f, *state, 0, 0), 0);
	for (int i = 0; i < 3; i++) { /* the second time from the cache */
		api(f.s, true, 719, 30 + 4 * i, 1000 + 100 * i);
		api(f.s, true, 372, 31 + 4 * i, 1010 + 100 * i);
		api(f.s, true, 652, 32 + 4 * i, 1020 + 100 * i);
		kernel(f.s, "_Z6tritonPf", 32 + 4 * i, 7, 1100 + 100 * i, 1150 + 100 * i);
	}
	api(f.s, true, 4000, 50, 1500); /* a cbid the names table does not know */
	fixture_close(&f);
	assert_int_equal(f.sum.driver_queries, 6);
	r = fixture_import(&f);
	for (size_t i = 0; i < r->nevents; i++)
		driver += r->events[i].kind == ORR_EVENT_DRIVER;
	assert_int_equal(driver, 4);
	assert_null(find(f.t, r, ORR_EVENT_DRIVER, "cuKernelGetName", 0));
	assert_null(find(f.t, r, ORR_EVENT_DRIVER, "cuGetErrorString", 0));
	assert_int_equal(must_find(f.t, r, ORR_EVENT_DRIVER, "cuLaunchKernelEx")->sub,
			 ORR_CALL_LAUNCH);
	assert_int_equal(must_find(f.t, r, ORR_EVENT_DRIVER, "driver_cbid_4000")->sub,
			 ORR_CALL_OTHER);
	assert_int_equal(must_find(f.t, r, ORR_EVENT_KERNEL, "triton(float*)")->correlation, 32);
	fixture_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_session_one_step, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_session_unresolved_wait, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_session_marks_and_late_starts, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_session_open_ranges_bounded, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_session_allocation_failures, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_session_unwritable, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_session_driver_queries, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * The step window end to end (ORR_RECORD_SKIP / ORR_RECORD_STEPS): step markers counted
 * as the NVTX callback does, records arriving later, the speculative file thrown away at
 * the first marker, GPU records after the window decided by their launch, and the file
 * read back with orr_trace_import().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-util.h"
#include "test-tracer-util.h"

/*
 * Skip 1, record 1: step markers 1, 2, 3, 4 at 1000, 2000, 3000, 4000 (the callback's
 * times), interleaved with records as the writer thread would see them.
 */
static void test_session_window(void **state)
{
	struct fixture f;
	const struct orr_rank *r;
	struct orr_step *steps;
	size_t n;

	assert_int_equal(fixture_new(&f, *state, 1, 1), 0);
	api(f.s, false, 211, 1, 100); /* before any marker: written speculatively */
	orr__window_marker(&f.win, 1, 1000);
	marker(f.s, ORR__MARKER_START, 10, "ProfilerStep#1", NULL, 1000);
	api(f.s, false, 211, 2, 1100);
	orr__window_marker(&f.win, 2, 2000);
	marker(f.s, ORR__MARKER_END, 10, NULL, NULL, 1998);
	/* The step's own marker is a little before the callback's time: kept all the same. */
	marker(f.s, ORR__MARKER_START, 11, "ProfilerStep#2", NULL, 1999);
	kernel(f.s, "k2", 2, 7, 1999, 2050); /* launched before the window: decided at close */
	api(f.s, false, 211, 3, 2100);
	kernel(f.s, "k3", 3, 7, 2200, 2300);
	api(f.s, false, 211, 4, 2900);
	orr__window_marker(&f.win, 3, 3000);
	marker(f.s, ORR__MARKER_END, 11, NULL, NULL, 2999);
	marker(f.s, ORR__MARKER_START, 12, "ProfilerStep#3", NULL, 3000);
	api(f.s, false, 211, 5, 3100);
	kernel(f.s, "k5", 5, 7, 3200, 3300); /* launched after the window: dropped */
	kernel(f.s, "k4", 4, 7, 3500, 3600); /* launched inside: kept */
	assert_true(orr__window_marker(&f.win, 4, 4000));
	assert_true(orr__window_done(&f.win, 4001));
	fixture_close(&f);
	assert_int_equal(f.sum.restarts, 1);
	assert_false(f.sum.no_markers);
	assert_int_equal(f.sum.pending_kept, 1);
	assert_int_equal(f.sum.pending_dropped, 1 + 1);
	r = fixture_import(&f);
	assert_int_equal(r->nevents, 5);
	assert_int_equal(r->first_step, 2);
	assert_int_equal(r->last_step, 2);
	assert_non_null(find(f.t, r, ORR_EVENT_ANNOTATION, "ProfilerStep#2", 0));
	assert_null(find(f.t, r, ORR_EVENT_ANNOTATION, "ProfilerStep#1", 0));
	assert_null(find(f.t, r, ORR_EVENT_ANNOTATION, "ProfilerStep#3", 0));
	assert_non_null(find(f.t, r, ORR_EVENT_KERNEL, "k3", 0));
	assert_non_null(find(f.t, r, ORR_EVENT_KERNEL, "k4", 0));
	assert_null(find(f.t, r, ORR_EVENT_KERNEL, "k2", 0));
	assert_null(find(f.t, r, ORR_EVENT_KERNEL, "k5", 0));
	for (size_t i = 0; i < r->nevents; i++)
		if (r->events[i].kind == ORR_EVENT_RUNTIME)
			assert_true(r->events[i].correlation == 3 || r->events[i].correlation == 4);
	assert_int_equal(orr_rank_steps(f.t, r, &steps, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(steps[0].step, 2);
	assert_int_equal(steps[0].start_ns, 1999);
	assert_int_equal(steps[0].end_ns, 3600); /* the end of k4, launched inside it */
	free(steps);
	fixture_free(&f);
}

static void test_session_window_without_markers(void **state)
{
	struct fixture f;
	const struct orr_rank *r;

	assert_int_equal(fixture_new(&f, *state, 2, 3), 0);
	api(f.s, false, 211, 1, 100);
	kernel(f.s, "k1", 1, 7, 200, 300);
	api(f.s, false, 211, 2, 400);
	fixture_close(&f);
	assert_true(f.sum.no_markers);
	assert_int_equal(f.sum.restarts, 0);
	r = fixture_import(&f);
	assert_int_equal(r->nevents, 3);
	fixture_free(&f);
}

static void test_session_nothing_recorded(void **state)
{
	struct fixture f;
	const struct orr_rank *r;

	/* The window never came: a file all the same, with no events. */
	assert_int_equal(fixture_new(&f, *state, 5, 1), 0);
	orr__window_marker(&f.win, 1, 1000);
	api(f.s, false, 211, 1, 1100);
	fixture_close(&f);
	assert_true(f.sum.written);
	assert_int_equal(f.sum.window_dropped, 1);
	r = fixture_import(&f);
	assert_int_equal(r->nevents, 0);
	fixture_free(&f);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_session_window, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_session_window_without_markers, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_session_nothing_recorded, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * The tracer's CUPTI-free parts on their own: emit_nvtx names, step markers and the
 * window, the map, event record -> wait pairing, the buffer queue, the environment and
 * the log.  The session and the file it writes are tested in test-tracer-session.c.
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
#include <unistd.h>

#include "../../tracer/internal.h"
#include "test-util.h"

/* ---- emit_nvtx names ---- */

static void test_nvtx_parse_emit_nvtx(void **state)
{
	struct orr__nvtx_name *n = malloc(sizeof(*n));

	orr__nvtx_parse("aten::mm, seq = 12, op_id = 3, sizes = [[4, 8], [8, 2], []], "
			"input_op_ids = [(1, 0), (2, 0)]",
			n);
	assert_true(n->emit_nvtx);
	assert_int_equal(n->len, 8);
	assert_memory_equal(n->name, "aten::mm", 8);
	assert_int_equal(n->seq, 12);
	assert_int_equal(n->ninputs, 3);
	assert_int_equal(n->inputs[0].ndims, 2);
	assert_int_equal(n->inputs[0].dims[0], 4);
	assert_int_equal(n->inputs[0].dims[1], 8);
	assert_int_equal(n->inputs[1].dims[0], 8);
	assert_int_equal(n->inputs[1].dims[1], 2);
	assert_int_equal(n->inputs[2].ndims, 0);

	/* op_id only: no sequence number, no shapes. */
	orr__nvtx_parse("aten::empty, op_id = 5", n);
	assert_true(n->emit_nvtx);
	assert_int_equal(n->len, 11);
	assert_int_equal(n->seq, -1);
	assert_int_equal(n->ninputs, 0);

	/* A plain range keeps its whole name, ", " included. */
	orr__nvtx_parse("forward, layer 3", n);
	assert_false(n->emit_nvtx);
	assert_int_equal(n->len, strlen("forward, layer 3"));

	/* Malformed shapes are left out, the rest is kept. */
	orr__nvtx_parse("aten::add, seq = 7, sizes = [[4, x], [2]]", n);
	assert_int_equal(n->seq, 7);
	assert_int_equal(n->ninputs, 0);
	orr__nvtx_parse("aten::add, seq = 7, sizes = [[4, 2", n);
	assert_int_equal(n->ninputs, 0);
	orr__nvtx_parse("", n);
	assert_int_equal(n->len, 0);
	assert_false(n->emit_nvtx);
	free(n);
}

static void test_nvtx_parse_limits(void **state)
{
	struct orr__nvtx_name *n = malloc(sizeof(*n));
	size_t cap = 64 + (ORR__NVTX_MAX_INPUTS + 1) * 8, len;
	char *s = malloc(cap);

	/* One input more than the limit: shapes dropped rather than cut. */
	len = (size_t)snprintf(s, cap, "aten::cat, seq = 1, sizes = [");
	for (int i = 0; i <= ORR__NVTX_MAX_INPUTS; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s[1]", i ? ", " : "");
	snprintf(s + len, cap - len, "]");
	orr__nvtx_parse(s, n);
	assert_int_equal(n->seq, 1);
	assert_int_equal(n->ninputs, 0);
	free(s);
	free(n);
}

/* ---- the step window ---- */

static void test_window_step_of(void **state)
{
	struct orr__window w;

	orr__window_init(&w, 0, 1, "ProfilerStep#");
	assert_int_equal(orr__window_step_of(&w, "ProfilerStep#12", 15), 12);
	assert_int_equal(orr__window_step_of(&w, "ProfilerStep#12, op_id = 3", 26), 12);
	assert_int_equal(orr__window_step_of(&w, "ProfilerStep#", 13), -1);
	assert_int_equal(orr__window_step_of(&w, "ProfilerStep#1x", 15), -1);
	assert_int_equal(orr__window_step_of(&w, "ProfilerStep", 12), -1);
	assert_int_equal(orr__window_step_of(&w, "aten::mm", 8), -1);
	orr__window_release(&w);
	orr__window_init(&w, 0, 1, "iteration ");
	assert_int_equal(orr__window_step_of(&w, "iteration 7", 11), 7);
	assert_int_equal(orr__window_step_of(&w, "ProfilerStep#7", 14), -1);
	orr__window_release(&w);
}

static void test_window_filters_by_time(void **state)
{
	struct orr__window w;

	/* Skip 1, record 2: markers (steps 10..14) at 1000, 2000, 3000, 4000, 5000. */
	orr__window_init(&w, 1, 2, "ProfilerStep#");
	assert_true(w.windowed);
	assert_int_equal(orr__window_check(&w, false, 500), ORR__DROP);
	assert_false(orr__window_marker(&w, 10, 1000));
	assert_int_equal(orr__window_check(&w, false, 1500), ORR__DROP); /* step 1: skipped */
	assert_false(orr__window_marker(&w, 11, 2000));
	assert_false(orr__window_marker(&w, 12, 3000));
	assert_false(orr__window_marker(&w, 13, 4000));
	assert_false(orr__window_done(&w, 4001));
	assert_int_equal(orr__window_check(&w, false, 1999), ORR__DROP);
	assert_int_equal(orr__window_check(&w, false, 2000), ORR__KEEP);
	assert_int_equal(orr__window_check(&w, false, 3999), ORR__KEEP);
	assert_int_equal(orr__window_check(&w, false, 4000), ORR__DROP);
	assert_int_equal(orr__window_check(&w, true, 3999), ORR__KEEP);
	assert_int_equal(orr__window_check(&w, true, 4500), ORR__PEND);
	/* GPU records just before the start: decided by their launch. */
	assert_int_equal(orr__window_check(&w, true, 2000 - 10), ORR__PEND);
	assert_int_equal(orr__window_check(&w, true, 2000 - ORR__WINDOW_SLACK_NS - 1), ORR__DROP);
	assert_true(orr__window_has_step(&w, 11));
	assert_true(orr__window_has_step(&w, 12));
	assert_false(orr__window_has_step(&w, 10));
	assert_false(orr__window_has_step(&w, 13));
	assert_int_equal(atomic_load(&w.first_step), 11);
	assert_int_equal(atomic_load(&w.last_step), 12);
	/* A step after the end stops tracing; so does time. */
	assert_true(orr__window_done(&w, 4000 + ORR__WINDOW_LINGER_NS));
	assert_true(orr__window_marker(&w, 14, 5000));
	assert_true(orr__window_done(&w, 5001));
	orr__window_release(&w);

	/* No window: everything is kept, nothing stops. */
	orr__window_init(&w, 0, 0, "ProfilerStep#");
	assert_false(w.windowed);
	assert_int_equal(orr__window_check(&w, false, -5), ORR__KEEP);
	assert_false(orr__window_marker(&w, 1, 10));
	assert_false(orr__window_done(&w, INT64_MAX));
	orr__window_release(&w);

	/* Skip without a step count: from step K+1 to the end. */
	orr__window_init(&w, 2, 0, "ProfilerStep#");
	orr__window_marker(&w, 1, 100);
	orr__window_marker(&w, 2, 200);
	assert_int_equal(orr__window_check(&w, false, 250), ORR__DROP);
	orr__window_marker(&w, 3, 300);
	assert_int_equal(orr__window_check(&w, false, 350), ORR__KEEP);
	assert_int_equal(orr__window_check(&w, true, INT64_MAX - 1), ORR__KEEP);
	assert_false(orr__window_marker(&w, 4, 400));
	orr__window_release(&w);
}

/* ---- the map ---- */

static void test_map_matches_an_array(void **state)
{
	enum { N = 4096 };
	static uint64_t ref[N]; /* value + 1, 0 = absent; key k is k * 7919 */
	struct orr__map m = { 0 };
	uint64_t v, seed = 1;

	memset(ref, 0, sizeof(ref));
	for (int i = 0; i < 200000; i++) {
		size_t k;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		k = (size_t)(seed >> 33) % N;
		if ((seed >> 20) % 3 == 0) {
			assert_int_equal(orr__map_remove(&m, k * 7919), ref[k] != 0);
			ref[k] = 0;
		} else {
			assert_int_equal(orr__map_put(&m, k * 7919, i), 0);
			ref[k] = (uint64_t)i + 1;
		}
	}
	for (size_t k = 0; k < N; k++) {
		bool found = orr__map_find(&m, k * 7919, &v);

		assert_int_equal(found, ref[k] != 0);
		if (found)
			assert_int_equal(v + 1, ref[k]);
	}
	assert_int_equal(orr__map_put(&m, ORR__MAP_EMPTY, 1), -EINVAL);
	orr__map_release(&m);
	assert_false(orr__map_find(&m, 1, &v));
}

static void test_map_allocation_failure(void **state)
{
	struct orr__map m = { 0 };
	uint64_t v;

	assert_int_equal(orr__map_put(&m, 1, 10), 0);
	orr__talloc_fail_after(0);
	for (uint64_t k = 2; k < 1000; k++)
		if (orr__map_put(&m, k, k) != 0)
			break;
	orr__talloc_fail_after(-1);
	assert_true(m.n < 1000);
	assert_true(orr__map_find(&m, 1, &v));
	assert_int_equal(v, 10);
	orr__map_release(&m);
}

/* ---- pairing ---- */

struct emitted {
	struct orr__held_sync h[64];
	enum orr__resolution how[64];
	size_t n;
};

static void collect(void *data, struct orr__held_sync *h, enum orr__resolution how)
{
	struct emitted *e = data;

	assert_true(e->n < 64);
	e->h[e->n] = *h;
	e->how[e->n++] = how;
}

static struct orr__held_sync wait_on(uint32_t ctx, uint32_t event, uint32_t corr, uint64_t sync)
{
	return (struct orr__held_sync){
		.ev = { .correlation = corr, .kind = ORR_EVENT_SYNC, .sub = ORR_SYNC_STREAM_WAIT },
		.args = { .stream = 9,
			  .wait_on_stream = -1,
			  .event_record_corr = -1,
			  .event_id = event },
		.context = ctx,
		.event_id = event,
		.corr = corr,
		.sync_id = sync,
	};
}

static void test_pairing_exact_and_late(void **state)
{
	struct emitted e = { .n = 0 };
	struct orr__pairing *p;
	struct orr__held_sync w;

	assert_int_equal(orr__pairing_new(16, 8, collect, &e, &p), 0);
	/* Record on stream 7 (corr 10), then the wait (corr 12): exact, at once. */
	orr__pairing_event(p, 1, 5, 10, 7, 1001);
	w = wait_on(1, 5, 12, 1001);
	orr__pairing_sync(p, &w);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.how[0], ORR__PAIR_EXACT);
	assert_int_equal(e.h[0].args.wait_on_stream, 7);
	assert_int_equal(e.h[0].args.event_record_corr, 10);

	/* The wait arrives before its record (another buffer): held, then resolved. */
	w = wait_on(1, 6, 30, 2002);
	orr__pairing_sync(p, &w);
	assert_int_equal(e.n, 1);
	orr__pairing_event(p, 1, 6, 25, 3, 2002);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.how[1], ORR__PAIR_EXACT);
	assert_int_equal(e.h[1].args.wait_on_stream, 3);
	assert_int_equal(e.h[1].args.event_record_corr, 25);

	/* Re-recorded: the later record (corr 45, stream 8) arrives first; the wait
	 * names the earlier one by its sync id. */
	orr__pairing_event(p, 1, 7, 45, 8, 3004);
	w = wait_on(1, 7, 42, 3003);
	orr__pairing_sync(p, &w);
	assert_int_equal(e.n, 2);
	orr__pairing_event(p, 1, 7, 40, 4, 3003);
	assert_int_equal(e.n, 3);
	assert_int_equal(e.h[2].args.wait_on_stream, 4);
	assert_int_equal(e.h[2].args.event_record_corr, 40);

	/* A sync that never finds its record: unresolved at close. */
	w = wait_on(1, 99, 50, 4004);
	orr__pairing_sync(p, &w);
	orr__pairing_flush(p);
	assert_int_equal(e.n, 4);
	assert_int_equal(e.how[3], ORR__PAIR_UNRESOLVED);
	assert_int_equal(e.h[3].args.wait_on_stream, -1);
	assert_int_equal(orr__pairing_lost(p), 0);
	orr__pairing_free(p);
}

static void test_pairing_fallback(void **state)
{
	struct emitted e = { .n = 0 };
	struct orr__pairing *p;
	struct orr__held_sync w;

	assert_int_equal(orr__pairing_new(16, 8, collect, &e, &p), 0);
	/* Without sync ids: the latest record below the wait's correlation (Kineto). */
	orr__pairing_event(p, 2, 1, 10, 1, 0);
	orr__pairing_event(p, 2, 1, 20, 2, 0);
	orr__pairing_event(p, 2, 1, 40, 4, 0);
	w = wait_on(2, 1, 30, 0);
	orr__pairing_sync(p, &w);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.how[0], ORR__PAIR_FALLBACK);
	assert_int_equal(e.h[0].args.event_record_corr, 20);
	assert_int_equal(e.h[0].args.wait_on_stream, 2);

	/* A sync id whose record never comes: the fallback at close. */
	w = wait_on(2, 1, 50, 777);
	orr__pairing_sync(p, &w);
	assert_int_equal(e.n, 1);
	orr__pairing_flush(p);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.how[1], ORR__PAIR_FALLBACK);
	assert_int_equal(e.h[1].args.event_record_corr, 40);

	/* Without a sync id and no record yet: held until one below it arrives. */
	w = wait_on(2, 3, 70, 0);
	orr__pairing_sync(p, &w);
	orr__pairing_event(p, 2, 3, 80, 5, 0); /* after the wait: not it */
	assert_int_equal(e.n, 2);
	orr__pairing_event(p, 2, 3, 60, 6, 0);
	assert_int_equal(e.n, 3);
	assert_int_equal(e.h[2].args.event_record_corr, 60);
	orr__pairing_free(p);
}

static void test_pairing_bounds(void **state)
{
	struct emitted e = { .n = 0 };
	struct orr__pairing *p;
	struct orr__held_sync w;

	/* Two syncs held at most: the third is emitted at once, unresolved. */
	assert_int_equal(orr__pairing_new(4, 2, collect, &e, &p), 0);
	for (uint32_t i = 0; i < 3; i++) {
		w = wait_on(1, 100 + i, 10 + i, 500 + i);
		orr__pairing_sync(p, &w);
	}
	assert_int_equal(e.n, 1);
	assert_int_equal(e.how[0], ORR__PAIR_UNRESOLVED);
	assert_int_equal(e.h[0].event_id, 102);
	/* Both held ones on distinct events resolve when their records arrive. */
	orr__pairing_event(p, 1, 101, 5, 2, 501);
	orr__pairing_event(p, 1, 100, 4, 1, 500);
	assert_int_equal(e.n, 3);

	/* Four events per generation: the oldest generation is forgotten. */
	for (uint32_t ev = 0; ev < 9; ev++)
		orr__pairing_event(p, 1, 200 + ev, 100 + ev, ev, 900 + ev);
	w = wait_on(1, 200, 500, 900); /* event 200 was in the forgotten generation */
	orr__pairing_sync(p, &w);
	w = wait_on(1, 208, 501, 908);
	orr__pairing_sync(p, &w);
	assert_int_equal(e.n, 4);
	assert_int_equal(e.h[3].event_id, 208);
	assert_int_equal(e.h[3].args.wait_on_stream, 8);
	orr__pairing_flush(p);
	assert_int_equal(e.n, 5);
	assert_int_equal(e.how[4], ORR__PAIR_UNRESOLVED);
	orr__pairing_free(p);
}

static void test_pairing_allocation_failure(void **state)
{
	struct orr__pairing *p = NULL;
	struct emitted e = { .n = 0 };

	orr__talloc_fail_after(0);
	assert_int_equal(orr__pairing_new(16, 8, collect, &e, &p), -ENOMEM);
	orr__talloc_fail_after(4); /* the pairing, its held table and stack, one generation */
	assert_int_equal(orr__pairing_new(16, 8, collect, &e, &p), 0);
	orr__pairing_event(p, 1, 1, 1, 1, 1); /* its map cannot grow */
	orr__talloc_fail_after(-1);
	assert_int_equal(orr__pairing_lost(p), 1);
	orr__pairing_free(p);
}

/* ---- the buffer queue ---- */

static void test_queue_bounded_pool(void **state)
{
	struct orr__queue q;
	uint8_t *a, *b, *c;
	struct orr__buf *x;

	assert_int_equal(orr__queue_init(&q, 4096, 2), 0);
	a = orr__queue_get(&q);
	b = orr__queue_get(&q);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal((uintptr_t)a % 8, 0);
	c = orr__queue_get(&q); /* the pool is exhausted: declined and counted */
	assert_null(c);
	assert_int_equal(atomic_load(&q.declined), 1);
	assert_null(orr__queue_pop(&q, 0));
	orr__queue_put(&q, b, 100);
	orr__queue_put(&q, a, 200);
	x = orr__queue_pop(&q, 1000);
	assert_ptr_equal(x->data, b);
	assert_int_equal(x->valid, 100);
	orr__queue_recycle(&q, x);
	assert_ptr_equal(orr__queue_get(&q), b); /* reused, not allocated */
	x = orr__queue_pop(&q, 0);
	assert_ptr_equal(x->data, a);
	orr__queue_recycle(&q, x);
	orr__queue_drop(&q, b);
	orr__queue_request(&q, ORR__REQ_FINISH);
	orr__queue_request(&q, ORR__REQ_STOP);
	assert_int_equal(orr__queue_take_requests(&q), ORR__REQ_FINISH | ORR__REQ_STOP);
	assert_int_equal(orr__queue_take_requests(&q), 0);
	orr__queue_release(&q);

	/* Without memory a request is declined, and the slot is not lost. */
	assert_int_equal(orr__queue_init(&q, 4096, 1), 0);
	orr__talloc_fail_after(0);
	assert_null(orr__queue_get(&q));
	orr__talloc_fail_after(-1);
	a = orr__queue_get(&q);
	assert_non_null(a);
	assert_int_equal(atomic_load(&q.declined), 1);
	orr__queue_drop(&q, a);
	orr__queue_release(&q);
}

/*
 * The writer's spares: a request on a job's thread takes one already allocated and
 * touched, and allocates itself only when none is left (counted); the spares stay within
 * the pool's bound, and a failed allocation leaves the pool as it was.
 */
static void test_queue_spares(void **state)
{
	struct orr__queue q;
	uint8_t *a, *b, *c, *d;

	assert_int_equal(orr__queue_init(&q, 4096, 3), 0);
	assert_int_equal(orr__queue_reserve(&q, 2), 2);
	assert_int_equal(orr__queue_reserve(&q, 2), 0); /* already there */
	assert_int_equal(q.nbufs, 2);
	assert_int_equal(q.nfree, 2);
	a = orr__queue_get(&q);
	b = orr__queue_get(&q);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a[0] | a[4095] | b[0] | b[4095], 0); /* touched: written with zeros */
	assert_int_equal(q.caller_allocs, 0);
	assert_int_equal(q.nfree, 0);
	c = orr__queue_get(&q); /* no spare left: allocated on the caller's thread */
	assert_non_null(c);
	assert_int_equal(q.caller_allocs, 1);
	assert_int_equal(orr__queue_reserve(&q, 2), 0); /* the pool's bound: 3 in all */
	assert_null(orr__queue_get(&q));
	orr__queue_drop(&q, c);
	assert_int_equal(q.nfree, 1);
	d = orr__queue_get(&q);
	assert_ptr_equal(d, c);
	assert_int_equal(q.caller_allocs, 1);
	orr__queue_drop(&q, a);
	orr__queue_drop(&q, b);
	orr__queue_drop(&q, d);
	assert_int_equal(q.nfree, 3);
	orr__queue_release(&q);

	/* Without memory no spare is made, and the pool is not shrunk by the attempt. */
	assert_int_equal(orr__queue_init(&q, 4096, 2), 0);
	orr__talloc_fail_after(0);
	assert_int_equal(orr__queue_reserve(&q, 2), 0);
	orr__talloc_fail_after(-1);
	assert_int_equal(q.nbufs, 0);
	assert_int_equal(orr__queue_reserve(&q, 2), 2);
	orr__queue_release(&q);
}

/* ---- environment and log ---- */

static void test_env_identity_and_path(void **state)
{
	struct orr__config c;
	char bad[128];

	setenv("ORR_RECORD_DIR", "/tmp/run", 1);
	setenv("RANK", "3", 1);
	setenv("WORLD_SIZE", "8", 1);
	setenv("LOCAL_RANK", "1", 1);
	setenv("ORR_RECORD_SKIP", "5", 1);
	setenv("ORR_RECORD_STEPS", "x2", 1);
	unsetenv("ORR_RECORD_STEP_PREFIX");
	orr__config_from_env(&c, bad, sizeof(bad));
	assert_int_equal(c.rank, 3);
	assert_int_equal(c.world_size, 8);
	assert_int_equal(c.local_rank, 1);
	assert_int_equal(c.skip, 5);
	assert_int_equal(c.steps, 0);
	assert_string_equal(bad, "ORR_RECORD_STEPS");
	assert_string_equal(c.step_prefix, "ProfilerStep#");
	{
		char want[128];

		snprintf(want, sizeof(want), "/tmp/run/rank-3-%d.orr", (int)getpid());
		assert_string_equal(c.path, want);
	}
	/* No rank anywhere: pid-PID.orr; OpenMPI's variables are read too. */
	unsetenv("RANK");
	unsetenv("LOCAL_RANK");
	unsetenv("WORLD_SIZE");
	unsetenv("ORR_RECORD_STEPS");
	setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
	orr__config_from_env(&c, bad, sizeof(bad));
	assert_int_equal(c.rank, -1);
	assert_int_equal(c.world_size, 4);
	assert_string_equal(bad, "");
	{
		char want[128];

		snprintf(want, sizeof(want), "/tmp/run/pid-%d.orr", (int)getpid());
		assert_string_equal(c.path, want);
	}
	/* A relative directory is made absolute: the job may change its own. */
	setenv("ORR_RECORD_DIR", ".", 1);
	orr__config_from_env(&c, bad, sizeof(bad));
	{
		char cwd[4096];

		assert_non_null(getcwd(cwd, sizeof(cwd)));
		assert_string_equal(c.dir, cwd);
	}
	unsetenv("OMPI_COMM_WORLD_SIZE");
	unsetenv("ORR_RECORD_DIR");
	unsetenv("ORR_RECORD_SKIP");
}

static void test_log_appends_lines(void **state)
{
	const char *dir = *state;
	char path[512], text[512];
	FILE *f;
	size_t n;

	orr__log("before open: discarded");
	orr__log_open(dir, 4242, false);
	orr__log("dropped %d records", 7);
	orr__log("second line");
	orr__log_close();
	orr__log("after close: discarded");
	snprintf(path, sizeof(path), "%s/tracer-4242.log", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	assert_string_equal(text, "dropped 7 records\nsecond line\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvtx_parse_emit_nvtx),
		cmocka_unit_test(test_nvtx_parse_limits),
		cmocka_unit_test(test_window_step_of),
		cmocka_unit_test(test_window_filters_by_time),
		cmocka_unit_test(test_map_matches_an_array),
		cmocka_unit_test(test_map_allocation_failure),
		cmocka_unit_test(test_pairing_exact_and_late),
		cmocka_unit_test(test_pairing_fallback),
		cmocka_unit_test(test_pairing_bounds),
		cmocka_unit_test(test_pairing_allocation_failure),
		cmocka_unit_test(test_queue_bounded_pool),
		cmocka_unit_test(test_queue_spares),
		cmocka_unit_test(test_env_identity_and_path),
		cmocka_unit_test_setup_teardown(test_log_appends_lines, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

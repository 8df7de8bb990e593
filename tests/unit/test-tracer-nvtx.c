/* SPDX-License-Identifier: MIT */
/*
 * The NVTX records' way from the job's threads to the writer (tracer/nvtx-buf.c): what a
 * thread puts comes out of a drain once, in order, with its fields and its thread; a
 * thread that ends hands its chunk over; a drain while a thread writes reads what is
 * published and the rest later; push/pop stacks per domain and beyond their depth; long
 * names cut; the chunk bound drops and counts; a full chunk wakes the writer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tracer/internal.h"

struct got {
	struct orr__trec r[8192];
	char names[8192][40];
	size_t n, total;
};

static struct got G;
static int wakes;

static void wake(void *arg)
{
	__atomic_add_fetch(&wakes, 1, __ATOMIC_RELAXED);
}

static void add(void *data, const struct orr__trec *r)
{
	struct got *g = data;

	g->total++;
	if (g->n == sizeof(g->r) / sizeof(g->r[0]))
		return;
	g->r[g->n] = *r;
	snprintf(g->names[g->n], sizeof(g->names[0]), "%s", r->name ? r->name : "");
	g->r[g->n].name = g->names[g->n];
	g->n++;
}

static void drain(void)
{
	G.n = G.total = 0;
	orr__nvtx_drain(add, &G);
}

static int setup(void **state)
{
	static bool done;

	if (!done && orr__nvtx_init(wake, NULL) != 0)
		return -1;
	done = true;
	drain();
	return 0;
}

static void put(uint8_t marker, int64_t ts, uint64_t id, const char *domain, const char *name)
{
	orr__nvtx_put(marker, ts, id, domain, name, strlen(name));
}

static void test_records_in_order(void **state)
{
	static const char dom[] = "NCCL";

	assert_true(orr__nvtx_on());
	put(ORR__MARKER_START, 10, 7, NULL, "aten::mm, seq = 1");
	put(ORR__MARKER_INSTANT, 11, 0, dom, "mark");
	put(ORR__MARKER_END, 12, 7, NULL, "");
	put(ORR__NVTX_THREAD_NAME, 13, 4242, NULL, "loader");
	drain();
	assert_int_equal(G.n, 4);
	assert_int_equal(G.r[0].kind, ORR__TREC_MARKER);
	assert_int_equal(G.r[0].marker, ORR__MARKER_START);
	assert_int_equal(G.r[0].start_ns, 10);
	assert_int_equal(G.r[0].id, 7);
	assert_null(G.r[0].domain);
	assert_string_equal(G.r[0].name, "aten::mm, seq = 1");
	assert_int_equal(G.r[0].pid, getpid());
	assert_int_equal(G.r[0].tid, gettid());
	assert_int_equal(G.r[1].marker, ORR__MARKER_INSTANT);
	assert_ptr_equal(G.r[1].domain, dom);
	assert_int_equal(G.r[2].marker, ORR__MARKER_END);
	assert_int_equal(G.r[2].id, 7);
	/* A thread's name: a NAME record for the thread it names. */
	assert_int_equal(G.r[3].kind, ORR__TREC_NAME);
	assert_int_equal(G.r[3].tid, 4242);
	assert_string_equal(G.r[3].name, "loader");
	/* Read once. */
	drain();
	assert_int_equal(G.n, 0);
}

static void test_drain_while_writing(void **state)
{
	char name[32];

	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "a%d", i);
		put(ORR__MARKER_INSTANT, i, 0, NULL, name);
	}
	drain();
	assert_int_equal(G.n, 10);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		put(ORR__MARKER_INSTANT, 100 + i, 0, NULL, name);
	}
	drain();
	assert_int_equal(G.n, 10);
	assert_string_equal(G.r[0].name, "b0");
	assert_string_equal(G.r[9].name, "b9");
}

#define PER_THREAD 3000 /* several chunks each */

static void *writer_thread(void *arg)
{
	char name[32];

	for (int i = 0; i < PER_THREAD; i++) {
		snprintf(name, sizeof(name), "t%ld-%d", (long)(intptr_t)arg, i);
		orr__nvtx_put(ORR__MARKER_INSTANT, i, (uint64_t)(intptr_t)arg, NULL, name, 24);
	}
	return NULL;
}

/* Two threads that end: every record comes out, in order per thread, none twice. */
static void test_threads_that_end(void **state)
{
	pthread_t t[2];
	int next[2] = { 0, 0 };
	uint32_t tid[2] = { 0, 0 };
	int w = wakes;

	for (intptr_t i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, writer_thread, (void *)i), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	drain();
	assert_int_equal(G.total, 2 * PER_THREAD);
	for (size_t k = 0; k < G.n; k++) {
		int who = (int)G.r[k].id;

		assert_true(who == 0 || who == 1);
		assert_int_equal(G.r[k].start_ns, next[who]++);
		if (!tid[who])
			tid[who] = G.r[k].tid;
		assert_int_equal(G.r[k].tid, tid[who]);
	}
	assert_int_equal(next[0], PER_THREAD);
	assert_int_equal(next[1], PER_THREAD);
	assert_true(tid[0] != tid[1] && tid[0] != (uint32_t)gettid());
	/* Each thread filled chunks (and handed its last over at its end): the writer woke. */
	assert_true(wakes >= w + 4);
}

static void test_push_pop(void **state)
{
	static const char d1[] = "d1", d2[] = "d2";
	uint64_t a, b, c, ids[ORR__NVTX_MAX_DEPTH];
	int depth;

	a = orr__nvtx_push(NULL, &depth);
	assert_int_equal(depth, 0);
	b = orr__nvtx_push(d1, &depth);
	assert_int_equal(depth, 1);
	c = orr__nvtx_push(d2, &depth);
	assert_true(a && b && c && a != b && b != c && a != c);
	/* Each domain has its own stack: d1's pop ends b, under d2's range. */
	assert_int_equal(orr__nvtx_pop(d1, &depth), b);
	assert_int_equal(orr__nvtx_pop(d1, &depth), 0); /* none left on d1 */
	assert_int_equal(orr__nvtx_pop(d2, &depth), c);
	assert_int_equal(orr__nvtx_pop(NULL, &depth), a);
	assert_int_equal(depth, 0);
	assert_int_equal(orr__nvtx_pop(NULL, &depth), 0);
	/* Deeper than the stack: not recorded, but the pops still match. */
	for (int i = 0; i < ORR__NVTX_MAX_DEPTH; i++)
		assert_true((ids[i] = orr__nvtx_push(NULL, &depth)) != 0);
	assert_int_equal(orr__nvtx_push(NULL, &depth), 0);
	assert_int_equal(depth, ORR__NVTX_MAX_DEPTH);
	assert_int_equal(orr__nvtx_push(NULL, &depth), 0);
	assert_int_equal(orr__nvtx_pop(NULL, &depth), 0);
	assert_int_equal(orr__nvtx_pop(NULL, &depth), 0);
	for (int i = ORR__NVTX_MAX_DEPTH - 1; i >= 0; i--)
		assert_int_equal(orr__nvtx_pop(NULL, &depth), ids[i]);
	assert_int_equal(orr__nvtx_pop(NULL, &depth), 0);
}

static void count_len(void *data, const struct orr__trec *r)
{
	*(size_t *)data = strlen(r->name);
}

static void test_long_name_length(void **state)
{
	size_t len = ORR__NVTX_MAX_NAME + 1000, got = 0;
	char *name = malloc(len + 1);

	assert_non_null(name);
	memset(name, 'y', len);
	name[len] = '\0';
	orr__nvtx_put(ORR__MARKER_INSTANT, 1, 0, NULL, name, len);
	orr__nvtx_drain(count_len, &got);
	assert_int_equal(got, ORR__NVTX_MAX_NAME);
	free(name);
}

/* Past the chunk bound records are dropped and counted; a drain frees chunks again. */
static void test_chunk_bound(void **state)
{
	size_t len = ORR__NVTX_MAX_NAME;
	char *name = malloc(len);
	uint64_t dropped = orr__nvtx_dropped();
	/* Records of the largest size: fewer than 4 to a chunk. */
	size_t per_chunk = ORR__NVTX_CHUNK_BYTES / (len + 64);
	size_t puts = (ORR__NVTX_MAX_CHUNKS + 4) * per_chunk;

	assert_non_null(name);
	memset(name, 'z', len);
	for (size_t i = 0; i < puts; i++)
		orr__nvtx_put(ORR__MARKER_INSTANT, (int64_t)i, 0, NULL, name, len);
	assert_true(orr__nvtx_dropped() > dropped);
	assert_true(orr__nvtx_backlog() >= ORR__NVTX_MAX_CHUNKS - 1);
	drain();
	assert_int_equal(G.total + (orr__nvtx_dropped() - dropped), puts);
	assert_int_equal(orr__nvtx_backlog(), 0);
	dropped = orr__nvtx_dropped();
	put(ORR__MARKER_INSTANT, 1, 0, NULL, "after");
	drain();
	assert_int_equal(G.n, 1);
	assert_int_equal(orr__nvtx_dropped(), dropped);
	free(name);
}

static void test_stop(void **state)
{
	orr__nvtx_stop();
	assert_false(orr__nvtx_on());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_records_in_order, setup),
		cmocka_unit_test_setup(test_drain_while_writing, setup),
		cmocka_unit_test_setup(test_threads_that_end, setup),
		cmocka_unit_test_setup(test_push_pop, setup),
		cmocka_unit_test_setup(test_long_name_length, setup),
		cmocka_unit_test_setup(test_chunk_bound, setup),
		cmocka_unit_test_setup(test_stop, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

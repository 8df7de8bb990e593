/* SPDX-License-Identifier: MIT */
/*
 * NCCL's NVTX payloads in the tracer, without CUPTI or NCCL: the payload structs below are
 * NCCL's layouts (2.25+ and 2.16-2.24), decoded by nccl.c; calls are numbered per
 * communicator and per rank pair; the writer finds them by external id; the per-thread
 * range stack; and end to end, launches inside NCCL calls give their kernels the call's
 * communicator and sequence, so that two ranks' kernels pair exactly in the graph.
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

#include "orrery/graph.h"
#include "orrery/native.h"
#include "model-compare.h"
#include "test-util.h"
#include "test-tracer-util.h"

#define SID(n) (ORR__NVTX_SCHEMA_STATIC_START + (n))
enum {
	SID_INIT = 0,
	SID_ALLGATHER = 4,
	SID_ALLREDUCE = 5,
	SID_BROADCAST = 6,
	SID_REDUCESCATTER = 7,
	SID_REDUCE = 8,
	SID_SEND = 9,
	SID_RECV = 10,
	SID_SPLIT = 13,
	SID_FINALIZE = 14,
	SID_ALLTOALL = 16
};

/* NCCL 2.25+ (src/include/nvtx_payload_schemas.h) */
struct p_bytes {
	uint64_t comm;
	size_t bytes;
};
struct p_bytes_int {
	uint64_t comm;
	size_t bytes;
	int a;
};
struct p_reduce {
	uint64_t comm;
	size_t bytes;
	int root, op;
};
struct p_init {
	uint64_t newcomm;
	int nranks, myrank, cuda_dev;
};
struct p_split {
	uint64_t newcomm, parentcomm;
	int nranks, myrank, cuda_dev, color, key;
};
/* NCCL 2.16-2.24 (collectives.cc) */
struct p_old_bytes {
	size_t bytes;
};
struct p_old_bytes_int {
	size_t bytes;
	int a;
};

#define COMM_A 0x5eedc0ffee000001ull
#define COMM_B 0x5eedc0ffee000002ull

static struct orr__nccl_call decoded(uint64_t sid, const void *p, size_t size, bool ok)
{
	struct orr__nvtx_payload pd = { SID(sid), size, p };
	struct orr__nccl_call c;

	assert_int_equal(orr__nccl_decode(&pd, &c), ok);
	return c;
}

static void test_nccl_decode_layouts(void **state)
{
	struct p_bytes_int ar = { COMM_A, 4096, 0 }, bc = { COMM_B, 64, 3 },
			   send = { COMM_A, 8, 2 };
	struct p_bytes ag = { COMM_A, 1024 };
	struct p_reduce red = { COMM_A, 32, 1, 0 };
	struct p_old_bytes_int old_ar = { 512, 0 };
	struct p_old_bytes old_ag = { 256 };
	struct orr__nccl_call c;

	(void)state;
	assert_int_equal(sizeof(ar), 24);
	assert_int_equal(sizeof(struct p_init), 24);
	assert_int_equal(sizeof(struct p_split), 40);
	c = decoded(SID_ALLREDUCE, &ar, sizeof(ar), true);
	assert_string_equal(c.type, "AllReduce");
	assert_true(c.has_comm);
	assert_true(c.comm == COMM_A);
	assert_int_equal(c.bytes, 4096);
	assert_false(c.comm_info || c.p2p);
	assert_int_equal(c.sequence, -1);
	assert_int_equal(c.id, 0);
	c = decoded(SID_ALLGATHER, &ag, sizeof(ag), true);
	assert_string_equal(c.type, "AllGather");
	assert_int_equal(c.bytes, 1024);
	c = decoded(SID_ALLTOALL, &ag, sizeof(ag), true);
	assert_string_equal(c.type, "AlltoAll");
	c = decoded(SID_BROADCAST, &bc, sizeof(bc), true);
	assert_int_equal(c.root, 3);
	assert_true(c.comm == COMM_B);
	c = decoded(SID_REDUCE, &red, sizeof(red), true);
	assert_int_equal(c.root, 1);
	assert_int_equal(c.bytes, 32);
	c = decoded(SID_SEND, &send, sizeof(send), true);
	assert_true(c.p2p);
	assert_int_equal(c.peer, 2);
	assert_int_equal(c.root, -1);
	/* Before 2.25: no communicator, and the size tells the layouts apart. */
	c = decoded(SID_ALLREDUCE, &old_ar, sizeof(old_ar), true);
	assert_false(c.has_comm);
	assert_int_equal(c.bytes, 512);
	c = decoded(SID_ALLGATHER, &old_ag, sizeof(old_ag), true);
	assert_false(c.has_comm);
	assert_int_equal(c.bytes, 256);
	c = decoded(SID_RECV, &old_ar, sizeof(old_ar), true);
	assert_true(c.p2p && !c.has_comm);
	assert_int_equal(c.peer, 0);
}

static void test_nccl_decode_communicators_and_rejects(void **state)
{
	struct p_init init = { COMM_A, 8, 3, 0 }, bad_rank = { COMM_A, 2, 2, 0 };
	struct p_split split = { COMM_B, COMM_A, 4, 1, 0, 7, 1 };
	struct p_bytes_int ar = { COMM_A, 4096, 0 };
	struct orr__nvtx_payload pd = { 5, sizeof(ar), &ar };
	struct orr__nccl_call c;

	(void)state;
	c = decoded(SID_INIT, &init, sizeof(init), true);
	assert_true(c.comm_info && c.has_comm);
	assert_true(c.comm == COMM_A);
	assert_int_equal(c.nranks, 8);
	assert_int_equal(c.myrank, 3);
	/* A split's payload holds its parent's size and rank: not taken. */
	decoded(SID_SPLIT, &split, sizeof(split), false);
	decoded(SID_INIT, &bad_rank, sizeof(bad_rank), false);
	decoded(SID_INIT, &init, 20, false);
	decoded(SID_ALLREDUCE, &ar, 20, false);
	decoded(SID_ALLREDUCE, &ar, SIZE_MAX, false);
	decoded(SID_ALLGATHER, &ar, sizeof(ar), false); /* 24 bytes is not an AllGather */
	decoded(SID_FINALIZE, &ar, 8, false);           /* known call, layout not decoded */
	decoded(99, &ar, sizeof(ar), false);
	decoded(SID_ALLREDUCE, NULL, sizeof(ar), false);
	assert_false(orr__nccl_decode(&pd, &c)); /* a schema id below the static range */
	assert_false(orr__nccl_decode(NULL, &c));
}

static uint64_t add_call(struct orr__nccl *n, uint64_t sid, uint64_t comm, size_t bytes, int a,
			 struct orr__nccl_call *ret)
{
	struct p_bytes_int p = { comm, bytes, a };
	struct p_bytes ag = { comm, bytes };
	bool two = sid == SID_ALLGATHER || sid == SID_ALLTOALL;

	*ret = decoded(sid, two ? (const void *)&ag : (const void *)&p,
		       two ? sizeof(ag) : sizeof(p), true);
	return orr__nccl_add(n, ret);
}

static void add_comm(struct orr__nccl *n, uint64_t comm, int nranks, int myrank)
{
	struct p_init init = { comm, nranks, myrank, 0 };
	struct orr__nccl_call c = decoded(SID_INIT, &init, sizeof(init), true);

	assert_int_equal(orr__nccl_add(n, &c), 0);
}

static void test_nccl_numbering(void **state)
{
	struct orr__nccl n;
	struct orr__nccl_call c, found;
	struct p_old_bytes_int old = { 64, 0 };
	uint64_t id;

	(void)state;
	assert_int_equal(orr__nccl_init(&n), 0);
	add_comm(&n, COMM_A, 4, 1);
	add_comm(&n, COMM_B, 2, 0);
	id = add_call(&n, SID_ALLREDUCE, COMM_A, 4096, 0, &c);
	assert_true(id & ORR__NCCL_EXT_TAG);
	assert_int_equal(c.id, id);
	assert_int_equal(c.sequence, 0);
	assert_int_equal(c.nranks, 4);
	assert_int_equal(c.myrank, 1);
	assert_true(orr__nccl_find(&n, id, &found));
	assert_int_equal(found.sequence, 0);
	assert_int_equal(found.bytes, 4096);
	add_call(&n, SID_ALLGATHER, COMM_A, 1024, 0, &c);
	assert_int_equal(c.sequence, 1);
	add_call(&n, SID_ALLREDUCE, COMM_B, 8, 0, &c);
	assert_int_equal(c.sequence, 0);
	assert_int_equal(c.nranks, 2);
	/* Send and Recv count per pair: ranks 1 and 3, then 1 and 0. */
	add_call(&n, SID_SEND, COMM_A, 8, 3, &c);
	assert_int_equal(c.sequence, 0);
	add_call(&n, SID_RECV, COMM_A, 8, 3, &c);
	assert_int_equal(c.sequence, 1);
	add_call(&n, SID_SEND, COMM_A, 8, 0, &c);
	assert_int_equal(c.sequence, 0);
	add_call(&n, SID_REDUCESCATTER, COMM_A, 8, 0, &c);
	assert_int_equal(c.sequence, 2); /* point-to-point calls do not count on the comm */
	/* A communicator created before the tracer: numbered, size unknown. */
	add_call(&n, SID_ALLREDUCE, 0x77, 8, 0, &c);
	assert_int_equal(c.sequence, 0);
	assert_int_equal(c.nranks, -1);
	/* No communicator in the payload: no sequence. */
	c = decoded(SID_ALLREDUCE, &old, sizeof(old), true);
	assert_true(orr__nccl_add(&n, &c));
	assert_int_equal(c.sequence, -1);
	assert_false(orr__nccl_find(&n, 12345, &found)); /* not ours */
	assert_false(orr__nccl_find(&n, ORR__NCCL_EXT_TAG | 999, &found));
	assert_int_equal(orr__nccl_lost(&n), 1);
	orr__nccl_release(&n);
}

static void test_nccl_calls_bounded(void **state)
{
	struct orr__nccl n;
	struct orr__nccl_call c, found;
	uint64_t first, last = 0;

	(void)state;
	assert_int_equal(orr__nccl_init(&n), 0);
	first = add_call(&n, SID_ALLREDUCE, COMM_A, 8, 0, &c);
	for (size_t i = 0; i < ORR__NCCL_CALLS; i++)
		last = add_call(&n, SID_ALLREDUCE, COMM_A, 8, 0, &c);
	assert_int_equal(c.sequence, ORR__NCCL_CALLS);
	assert_false(orr__nccl_find(&n, first, &found)); /* overwritten */
	assert_true(orr__nccl_find(&n, last, &found));
	assert_int_equal(found.sequence, ORR__NCCL_CALLS);
	orr__nccl_release(&n);

	/* Without memory for the table, calls are numbered but not remembered. */
	orr__talloc_fail_after(0);
	assert_int_equal(orr__nccl_init(&n), 0);
	orr__talloc_fail_after(-1);
	assert_int_equal(add_call(&n, SID_ALLREDUCE, COMM_A, 8, 0, &c), 0);
	assert_int_equal(add_call(&n, SID_ALLREDUCE, COMM_A, 8, 0, &c), 0);
	assert_int_equal(c.sequence, 1);
	assert_int_equal(orr__nccl_lost(&n), 2);
	orr__nccl_release(&n);
}

static void test_nccl_range_stack(void **state)
{
	(void)state;
	assert_false(orr__nccl_range_pop()); /* nothing open */
	orr__nccl_range_push(true);
	orr__nccl_range_push(false);
	orr__nccl_range_push(true);
	assert_true(orr__nccl_range_pop());
	assert_false(orr__nccl_range_pop());
	assert_true(orr__nccl_range_pop());
	assert_false(orr__nccl_range_pop());
	for (int i = 0; i < ORR__NCCL_MAX_DEPTH + 3; i++) {
		assert_int_equal(orr__nccl_range_full(), i >= ORR__NCCL_MAX_DEPTH);
		orr__nccl_range_push(i % 2 == 0);
	}
	for (int i = ORR__NCCL_MAX_DEPTH + 2; i >= 0; i--)
		assert_int_equal(orr__nccl_range_pop(), i < ORR__NCCL_MAX_DEPTH && i % 2 == 0);
	assert_false(orr__nccl_range_full());
}

/* ---- through the session ---- */

static void ext_corr(struct orr__session *s, uint32_t corr, uint64_t ext)
{
	struct orr__trec r = rec(ORR__TREC_EXT_CORR);

	r.correlation = corr;
	r.id = ext;
	orr__session_add(s, &r);
}

#define K_ALLREDUCE "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs4K)"
#define K_ALLGATHER "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgs4K)"
#define K_RS        "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgs4K)"

/* Rank `myrank` of a 2-rank communicator: AllReduce, AllGather, then a lost ReduceScatter. */
static void feed_rank(struct orr__session *s, struct orr__nccl *n, int myrank, int64_t t0)
{
	struct orr__nccl_call c;
	uint64_t ar, ag;

	add_comm(n, COMM_A, 2, myrank);
	ar = add_call(n, SID_ALLREDUCE, COMM_A, 4096, 0, &c);
	ag = add_call(n, SID_ALLGATHER, COMM_A, 1024, 0, &c);
	ext_corr(s, 15, ar);
	api(s, false, 135, 15, t0 + 100); /* cudaEventRecord inside the call: no collective */
	ext_corr(s, 16, ar);
	api(s, true, 307, 16, t0 + 120);
	kernel(s, K_ALLREDUCE, 16, 11, t0 + 300, t0 + 400);
	/* The AllGather's kernel arrives before its launch. */
	kernel(s, K_ALLGATHER, 17, 11, t0 + 500, t0 + 600);
	ext_corr(s, 17, ag);
	api(s, true, 307, 17, t0 + 200);
	/* An external id that names no call the tracer remembers. */
	ext_corr(s, 18, ORR__NCCL_EXT_TAG | 999);
	api(s, true, 307, 18, t0 + 250);
	kernel(s, K_RS, 18, 11, t0 + 700, t0 + 800);
}

static const struct orr_collective *coll_of(const struct orr_trace *t, const struct orr_rank *r,
					    const char *kernel_name)
{
	const struct orr_event *e = must_find(t, r, ORR_EVENT_KERNEL, kernel_name);

	assert_int_not_equal(e->coll, ORR_NONE);
	return &r->collectives[e->coll];
}

/* The collectives survive Chrome JSON and a native file written from the model. */
static void round_trips(const struct orr_trace *t, const char *dir)
{
	char json[600], orr[600];
	struct orr_trace *back = NULL;
	struct orr_diag d;

	snprintf(json, sizeof(json), "%s/back.json", dir);
	snprintf(orr, sizeof(orr), "%s/back.orr", dir);
	if (orr_trace_write_chrome(t, json, &d) || orr_trace_import(json, NULL, &back, &d))
		fail_msg("%s", d.msg);
	assert_same_model(t, back, MODEL_CMP_CHROME);
	orr_trace_free(back);
	if (orr_native_write_rank(orr, t, orr_trace_get_rank(t, 0), "test", &d) ||
	    orr_trace_import(orr, NULL, &back, &d))
		fail_msg("%s", d.msg);
	assert_same_model(t, back, MODEL_CMP_NATIVE);
	orr_trace_free(back);
}

static void test_nccl_session_launches(void **state)
{
	struct fixture f;
	struct orr__nccl n;
	const struct orr_rank *r;
	const struct orr_collective *co;
	const struct orr_event *rec_ev, *launch;

	assert_int_equal(orr__nccl_init(&n), 0);
	assert_int_equal(fixture_start(&f, *state, 0, 0, "ProfilerStep#", 0, &n), 0);
	feed_rank(f.s, &n, 1, 1000);
	fixture_close(&f);
	assert_int_equal(f.sum.nccl_calls, 2);
	assert_int_equal(orr__nccl_lost(&n), 1);
	r = fixture_import(&f);
	co = coll_of(f.t, r, K_ALLREDUCE);
	assert_string_equal(orr_trace_str(f.t, co->type), "AllReduce");
	assert_string_equal(orr_trace_str(f.t, co->pg_name), "nccl:5eedc0ffee000001");
	assert_int_equal(co->sequence, 0);
	assert_int_equal(co->group_size, 2);
	assert_int_equal(co->in_bytes, 4096);
	assert_int_equal(co->out_bytes, 4096);
	co = coll_of(f.t, r, K_ALLGATHER);
	assert_int_equal(co->sequence, 1);
	assert_int_equal(co->in_bytes, 1024);
	assert_int_equal(co->out_bytes, 2048);
	co = coll_of(f.t, r, K_RS); /* only what the kernel's name says */
	assert_string_equal(orr_trace_str(f.t, co->type), "ReduceScatter");
	assert_int_equal(co->pg_name, ORR_STR_NONE);
	assert_int_equal(co->sequence, -1);
	rec_ev = must_find(f.t, r, ORR_EVENT_RUNTIME, "cudaEventRecord");
	assert_int_equal(rec_ev->coll, ORR_NONE);
	launch = find(f.t, r, ORR_EVENT_DRIVER, "cuLaunchKernel", 0);
	assert_non_null(launch);
	assert_int_not_equal(launch->coll, ORR_NONE);
	/* The communicator, from its creation. */
	assert_int_equal(r->ncomms, 1);
	assert_string_equal(orr_trace_str(f.t, r->comms[0].name), "nccl:5eedc0ffee000001");
	assert_string_equal(orr_trace_str(f.t, r->comms[0].backend), "nccl");
	assert_int_equal(r->comms[0].size, 2);
	assert_int_equal(r->comms[0].nmembers, 0);
	round_trips(f.t, *state);
	fixture_free(&f);
	orr__nccl_release(&n);
}

/* Every allocation of the session failing in turn: calls are dropped and counted, never a crash. */
static void test_nccl_session_allocation_failures(void **state)
{
	bool dropped = false, complete = false;

	for (int64_t k = 0; k < 80 && !complete; k++) {
		struct fixture f;
		struct orr__nccl n;
		const struct orr_rank *r;
		int rc;

		assert_int_equal(orr__nccl_init(&n), 0);
		orr__talloc_fail_after(k);
		rc = fixture_start(&f, *state, 0, 0, "ProfilerStep#", 0, &n);
		if (rc) {
			orr__talloc_fail_after(-1);
			assert_int_equal(rc, -ENOMEM);
			orr__window_release(&f.win);
			orr__nccl_release(&n);
			continue;
		}
		feed_rank(f.s, &n, 0, 1000);
		fixture_close(&f);
		orr__talloc_fail_after(-1);
		assert_true(f.sum.written);
		r = fixture_import(&f);
		assert_int_equal(r->nevents, f.sum.events);
		dropped |= f.sum.dropped_events > 0;
		complete = f.sum.dropped_events == 0 && f.sum.nccl_calls == 2 && r->ncomms == 1;
		fixture_free(&f);
		orr__nccl_release(&n);
	}
	assert_true(dropped);
	assert_true(complete);
}

/* Writes rank `rank`'s file into dir, with its clock offset by skew_ns. */
static void write_rank(const char *dir, int rank, int64_t skew_ns)
{
	char path[512];
	struct orr__window win;
	struct orr__nccl n;
	struct orr__session *s;
	struct orr__summary sum;
	struct orr__session_config c = {
		.path = path,
		.header = { .rank = rank, .world_size = 2, .local_rank = rank, .pid = PID },
		.window = &win,
		.api_name = api_names,
		.nccl = &n,
	};

	assert_true(snprintf(path, sizeof(path), "%s/rank-%d-%d.orr", dir, rank, PID) <
		    (int)sizeof(path));
	orr__window_init(&win, 0, 0, "ProfilerStep#");
	assert_int_equal(orr__nccl_init(&n), 0);
	assert_int_equal(orr__session_new(&c, &s), 0);
	feed_rank(s, &n, rank, 1000 + skew_ns);
	orr__session_close(s, &sum);
	assert_true(sum.written);
	orr__window_release(&win);
	orr__nccl_release(&n);
}

static void test_nccl_ranks_pair_exactly(void **state)
{
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_graph_stats st;
	struct orr_diag d;

	write_rank(*state, 0, 0);
	write_rank(*state, 1, 30);
	if (orr_trace_import(*state, NULL, &t, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(orr_trace_rank_count(t), 2);
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	orr_graph_get_stats(g, &st);
	/* AllReduce and AllGather by communicator and sequence; ReduceScatter inferred. */
	assert_int_equal(st.groups, 3);
	assert_int_equal(st.edges[ORR_DEP_CROSS_RANK], 6);
	assert_int_equal(st.inferred[ORR_DEP_CROSS_RANK], 2);
	orr_graph_free(g);
	orr_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nccl_decode_layouts),
		cmocka_unit_test(test_nccl_decode_communicators_and_rejects),
		cmocka_unit_test(test_nccl_numbering),
		cmocka_unit_test(test_nccl_calls_bounded),
		cmocka_unit_test(test_nccl_range_stack),
		cmocka_unit_test_setup_teardown(test_nccl_session_launches, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_nccl_session_allocation_failures, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_nccl_ranks_pair_exactly, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

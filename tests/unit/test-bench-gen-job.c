/* SPDX-License-Identifier: MIT */
/*
 * The synthetic job generator of bench-replay (bench/gen-job.h): sizes, launches,
 * cross-stream waits and stream syncs that a graph can resolve, collectives that match
 * across ranks with consistent times, steps on every rank, determinism.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/trace.h"
#include "../../bench/gen-job-internal.h"

/* 16 ranks: two TP groups of 8, eight DP groups of 2. */
static const struct gen_job_options small = {
	.ranks = 16, .events_per_rank = 3000, .steps = 3, .seed = 7
};

static struct orr_trace *generate(const struct gen_job_options *o)
{
	struct orr_trace *t = NULL;

	assert_int_equal(gen_job(o, &t), 0);
	assert_non_null(t);
	return t;
}

static bool is_gpu_task(const struct orr_event *e)
{
	return e->kind == ORR_EVENT_KERNEL || e->kind == ORR_EVENT_MEMCPY ||
	       e->kind == ORR_EVENT_MEMSET;
}

static bool is_call(const struct orr_event *e)
{
	return e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER;
}

/* Event indices by correlation id, for calls and for GPU tasks: SIZE_MAX when none. */
struct by_corr {
	size_t *call, *task;
	size_t n;
};

static void by_corr_init(const struct orr_rank *r, struct by_corr *bc)
{
	int64_t max = 0;

	for (size_t i = 0; i < r->nevents; i++)
		if (r->events[i].correlation > max)
			max = r->events[i].correlation;
	bc->n = (size_t)max + 1;
	bc->call = orr_xmalloc(bc->n * sizeof(size_t));
	bc->task = orr_xmalloc(bc->n * sizeof(size_t));
	memset(bc->call, 0xff, bc->n * sizeof(size_t));
	memset(bc->task, 0xff, bc->n * sizeof(size_t));
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];
		size_t *slot = is_call(e) ? bc->call : is_gpu_task(e) ? bc->task : NULL;

		if (!slot || e->correlation < 0)
			continue;
		assert_int_equal(slot[e->correlation], SIZE_MAX); /* correlations are unique */
		slot[e->correlation] = i;
	}
}

static void by_corr_release(struct by_corr *bc)
{
	free(bc->call);
	free(bc->task);
}

/* ---- bad options ---- */

static void test_options_bad_rejected(void **state)
{
	struct orr_trace *t = NULL;
	struct gen_job_options o = small;

	o.ranks = 0;
	assert_int_equal(gen_job(&o, &t), -EINVAL);
	o = small;
	o.steps = 0;
	assert_int_equal(gen_job(&o, &t), -EINVAL);
	o = small;
	o.tp = 3;
	assert_int_equal(gen_job(&o, &t), -EINVAL);
	o = small;
	o.events_per_rank = 100; /* less than one layer per step */
	assert_int_equal(gen_job(&o, &t), -EINVAL);
	assert_null(t);
}

/* ---- sizes ---- */

static void check_sizes(const struct gen_job_options *o)
{
	struct orr_trace *t = generate(o);

	assert_int_equal(orr_trace_rank_count(t), o->ranks);
	for (size_t i = 0; i < o->ranks; i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);

		assert_int_equal(r->rank, (int32_t)i);
		assert_int_equal(r->world_size, (int32_t)o->ranks);
		assert_string_equal(orr_trace_str(t, r->backend), "nccl");
		assert_in_range(r->nevents, o->events_per_rank * 9 / 10,
				o->events_per_rank * 11 / 10);
	}
	orr_trace_free(t);
}

static void test_sizes_within_ten_percent(void **state)
{
	struct gen_job_options one = { .ranks = 1, .events_per_rank = 2000, .steps = 2, .seed = 1 };
	struct gen_job_options big = { .ranks = 4, .events_per_rank = 50000, .steps = 5, .seed = 1 };

	check_sizes(&small);
	check_sizes(&one);
	check_sizes(&big);
}

/* ---- launches, waits and syncs ---- */

static void check_launches(const struct orr_rank *r, const struct by_corr *bc)
{
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i], *c;

		if (!is_gpu_task(e))
			continue;
		assert_true(e->correlation >= 0 && (size_t)e->correlation < bc->n);
		assert_int_not_equal(bc->call[e->correlation], SIZE_MAX);
		c = &r->events[bc->call[e->correlation]];
		assert_int_equal(c->sub,
				 e->kind == ORR_EVENT_KERNEL ? ORR_CALL_LAUNCH : ORR_CALL_MEMCPY);
		assert_int_equal(r->places[c->place].kind, ORR_PLACE_THREAD);
		assert_int_equal(r->places[e->place].kind, ORR_PLACE_STREAM);
		assert_true(c->start_ns <= e->start_ns);
	}
}

/* GPU tasks on stream `tid` launched before (after) call `at`: latest end (earliest start). */
static void around(const struct orr_rank *r, const struct by_corr *bc, int64_t tid,
		   const struct orr_event *at, int64_t *ret_end_before, int64_t *ret_start_after)
{
	*ret_end_before = INT64_MIN;
	*ret_start_after = INT64_MAX;
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];
		const struct orr_event *c;

		if (!is_gpu_task(e) || r->places[e->place].tid != tid)
			continue;
		c = &r->events[bc->call[e->correlation]];
		if (c->start_ns < at->start_ns && e->start_ns + e->dur_ns > *ret_end_before)
			*ret_end_before = e->start_ns + e->dur_ns;
		if (c->start_ns > at->start_ns && e->start_ns < *ret_start_after)
			*ret_start_after = e->start_ns;
	}
}

/* record(e, A); wait(B, e): B's next task starts after A's last one ends. */
static void check_waits(const struct orr_rank *r, const struct by_corr *bc)
{
	size_t nwaits = 0, nsyncs = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i], *call;
		const struct orr_sync_args *s;
		int64_t end, start, unused;

		if (e->kind != ORR_EVENT_SYNC)
			continue;
		assert_true(e->args < r->nsyncs);
		s = &r->syncs[e->args];
		call = &r->events[bc->call[e->correlation]];
		assert_int_equal(s->stream, r->places[e->place].tid);
		if (e->sub == ORR_SYNC_STREAM) {
			/* the blocking call returns once its stream has run what it was given */
			assert_int_equal(call->sub, ORR_CALL_STREAM_SYNC);
			around(r, bc, s->stream, call, &end, &unused);
			assert_true(call->start_ns + call->dur_ns >= end);
			nsyncs++;
			continue;
		}
		assert_int_equal(e->sub, ORR_SYNC_STREAM_WAIT);
		assert_int_equal(call->sub, ORR_CALL_STREAM_WAIT);
		assert_int_equal(r->events[bc->call[s->event_record_corr]].sub,
				 ORR_CALL_EVENT_RECORD);
		around(r, bc, s->wait_on_stream, &r->events[bc->call[s->event_record_corr]], &end,
		       &unused);
		around(r, bc, s->stream, call, &unused, &start);
		assert_true(start == INT64_MAX || start >= end);
		nwaits++;
	}
	assert_true(nwaits > 0);
	assert_int_equal(nsyncs, small.steps);
}

/* Tasks of a stream never overlap. */
static void check_streams(const struct orr_rank *r)
{
	for (size_t p = 0; p < r->nplaces; p++) {
		int64_t end = INT64_MIN;

		for (size_t i = 0; i < r->nevents; i++) {
			const struct orr_event *e = &r->events[i];

			if (e->place != p || !is_gpu_task(e))
				continue;
			assert_true(e->start_ns >= end);
			end = e->start_ns + e->dur_ns;
		}
	}
}

static void test_launches_waits_syncs_consistent(void **state)
{
	struct orr_trace *t = generate(&small);

	for (size_t i = 0; i < orr_trace_rank_count(t); i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);
		struct by_corr bc;

		by_corr_init(r, &bc);
		check_launches(r, &bc);
		check_waits(r, &bc);
		check_streams(r);
		by_corr_release(&bc);
	}
	orr_trace_free(t);
}

/* ---- collectives ---- */

struct inst {
	uint32_t pg;
	int64_t seq;
	int32_t rank;
	uint32_t type;
	int32_t size;
	int64_t start, end;
};

static int cmp_inst(const void *pa, const void *pb)
{
	const struct inst *a = pa, *b = pb;

	if (a->pg != b->pg)
		return a->pg < b->pg ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

static size_t collect(const struct orr_trace *t, struct inst **ret)
{
	struct inst *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < orr_trace_rank_count(t); i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);

		for (size_t k = 0; k < r->nevents; k++) {
			const struct orr_event *e = &r->events[k];
			const struct orr_collective *c;

			if (e->kind != ORR_EVENT_KERNEL || e->coll == ORR_NONE)
				continue;
			c = &r->collectives[e->coll];
			assert_true(c->sequence >= 0);
			/* the members are the group, the rank among them */
			assert_int_equal(c->nmembers, c->group_size);
			ORR_VEC_PUSH(v, n, cap,
				     ((struct inst){ c->pg_name, c->sequence, r->rank, c->type,
						     c->group_size, e->start_ns,
						     e->start_ns + e->dur_ns }));
		}
	}
	qsort(v, n, sizeof(*v), cmp_inst);
	*ret = v;
	return n;
}

/* One instance: every member once, the same type, ends together, the last arrival shortest. */
static void check_instance(const struct inst *v, size_t n)
{
	int64_t min_end = INT64_MAX, max_end = INT64_MIN, last = INT64_MIN, min_dur = INT64_MAX;
	int64_t last_dur = 0;

	assert_int_equal(n, (size_t)v[0].size);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v[i].type, v[0].type);
		assert_true(i == 0 || v[i].rank != v[i - 1].rank);
		min_end = v[i].end < min_end ? v[i].end : min_end;
		max_end = v[i].end > max_end ? v[i].end : max_end;
		min_dur = v[i].end - v[i].start < min_dur ? v[i].end - v[i].start : min_dur;
		if (v[i].start > last) {
			last = v[i].start;
			last_dur = v[i].end - v[i].start;
		}
	}
	assert_true(max_end - min_end <= 1000);
	assert_true(last_dur <= min_dur + 500);
}

static void test_collectives_match_across_members(void **state)
{
	struct orr_trace *t = generate(&small);
	struct inst *v;
	size_t n = collect(t, &v), ninst = 0;

	assert_true(n > 0);
	for (size_t i = 0, j; i < n; i = j, ninst++) {
		const struct orr_rank *r = orr_trace_get_rank(t, (size_t)v[i].rank);

		for (j = i; j < n && v[j].pg == v[i].pg && v[j].seq == v[i].seq; j++)
			;
		check_instance(&v[i], j - i);
		/* every member listed by the first one is there */
		for (size_t k = 0; k < r->ncollectives; k++) {
			const struct orr_collective *c = &r->collectives[k];

			if (c->pg_name != v[i].pg || c->sequence != v[i].seq)
				continue;
			for (size_t m = 0; m < c->nmembers; m++)
				assert_int_equal(v[i + m].rank, r->members[c->first_member + m]);
		}
	}
	assert_true(ninst > 0);
	free(v);
	orr_trace_free(t);
}

/* ---- steps and determinism ---- */

static void test_steps_on_every_rank(void **state)
{
	struct orr_trace *t = generate(&small);
	struct orr_step *s;
	size_t n;

	for (size_t i = 0; i < orr_trace_rank_count(t); i++) {
		assert_int_equal(orr_rank_steps(t, orr_trace_get_rank(t, i), &s, &n), 0);
		assert_int_equal(n, small.steps);
		for (size_t k = 0; k < n; k++) {
			assert_int_equal(s[k].step, (int64_t)k + 1);
			assert_true(s[k].end_ns > s[k].start_ns);
		}
		free(s);
	}
	assert_int_equal(orr_trace_job_steps(t, &s, &n), 0);
	assert_int_equal(n, small.steps);
	free(s);
	orr_trace_free(t);
}

static bool same_event(const struct orr_event *a, const struct orr_event *b)
{
	return a->start_ns == b->start_ns && a->dur_ns == b->dur_ns &&
	       a->correlation == b->correlation && a->external_id == b->external_id &&
	       a->name == b->name && a->place == b->place && a->args == b->args &&
	       a->coll == b->coll && a->kind == b->kind && a->sub == b->sub;
}

static bool same_trace(const struct orr_trace *a, const struct orr_trace *b)
{
	if (orr_trace_rank_count(a) != orr_trace_rank_count(b))
		return false;
	for (size_t i = 0; i < orr_trace_rank_count(a); i++) {
		const struct orr_rank *x = orr_trace_get_rank(a, i), *y = orr_trace_get_rank(b, i);

		if (x->nevents != y->nevents || x->nsyncs != y->nsyncs ||
		    memcmp(x->syncs, y->syncs, x->nsyncs * sizeof(*x->syncs)) != 0)
			return false;
		for (size_t k = 0; k < x->nevents; k++)
			if (!same_event(&x->events[k], &y->events[k]))
				return false;
	}
	return true;
}

static void test_seed_deterministic(void **state)
{
	struct gen_job_options other = small;
	struct orr_trace *a = generate(&small), *b = generate(&small), *c;

	other.seed++;
	c = generate(&other);
	assert_true(same_trace(a, b));
	assert_false(same_trace(a, c));
	orr_trace_free(a);
	orr_trace_free(b);
	orr_trace_free(c);
}

/* The model's total order, written out here as traces/model.c documents it. */
static int cmp_model(const void *pa, const void *pb)
{
	const struct orr_event *a = pa, *b = pb;
	const int64_t x[] = { a->start_ns,    b->dur_ns, a->place, a->kind, a->correlation,
			      a->external_id, a->name,   a->args,  a->coll };
	const int64_t y[] = { b->start_ns,    a->dur_ns, b->place, b->kind, b->correlation,
			      b->external_id, b->name,   b->args,  b->coll };

	for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

/*
 * orr__rank_finish() sorts a rank's events, shuffled, on a coarse clock (many equal
 * starts), into the model's order, as qsort() with that order does, in the table they
 * came in.
 */
static void test_finish_sorts_shuffled_events(void **state)
{
	struct orr_trace *t = generate(&small);
	const void *table;
	const struct orr_rank *r0 = orr_trace_get_rank(t, 0);
	struct orr__rank_build *rb = orr__rank_new(t, 0);
	struct orr_event *ref = calloc(r0->nevents, sizeof(*ref));
	uint64_t rng = 1;
	size_t ties = 0;

	assert_non_null(ref);
	for (size_t i = 0; i < r0->nevents; i++) {
		ref[i] = r0->events[i];
		ref[i].start_ns -= ref[i].start_ns % 100000;
		/* starts on either side of zero, far apart: every radix digit is used */
		if (i % 7 == 3)
			ref[i].start_ns = -ref[i].start_ns * 1024;
	}
	for (size_t i = r0->nevents - 1; i > 0; i--) {
		size_t k = (size_t)gen_job_uniform(&rng, 0, (int64_t)i);
		struct orr_event e = ref[i];

		ref[i] = ref[k];
		ref[k] = e;
	}
	for (size_t i = 0; i < r0->nevents; i++)
		*(struct orr_event *)orr__vec_push(&rb->events) = ref[i];
	for (size_t i = 0; i < r0->nplaces; i++)
		orr__place(rb, r0->places[i].kind, r0->places[i].pid, r0->places[i].tid,
			   r0->places[i].device);
	table = rb->events.p;
	orr__rank_finish(t, rb);
	qsort(ref, r0->nevents, sizeof(*ref), cmp_model);
	assert_int_equal(rb->pub.nevents, r0->nevents);
	/* sorted in place: a second table would be first-touched, page by page */
	assert_ptr_equal(rb->pub.events, table);
	for (size_t i = 0; i < r0->nevents; i++) {
		struct orr_event got = rb->pub.events[i];

		ties += i && ref[i].start_ns == ref[i - 1].start_ns;
		/* collectives found by the finish are the only change */
		got.coll = ref[i].coll;
		assert_true(same_event(&got, &ref[i]));
	}
	assert_true(ties > 100);
	free(ref);
	orr_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options_bad_rejected),
		cmocka_unit_test(test_sizes_within_ten_percent),
		cmocka_unit_test(test_launches_waits_syncs_consistent),
		cmocka_unit_test(test_collectives_match_across_members),
		cmocka_unit_test(test_steps_on_every_rank),
		cmocka_unit_test(test_seed_deterministic),
		cmocka_unit_test(test_finish_sorts_shuffled_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

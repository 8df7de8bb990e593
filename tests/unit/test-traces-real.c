/* SPDX-License-Identifier: MIT */
/*
 * The real traces in ../shared/traces/kineto ($ORR_SHARED_TRACES): every file imports,
 * the step times in its README come out, and the fields each file is known for are
 * read.  Every test skips when the directory is absent (a user's clone), and then the
 * program exits 77 so that meson reports a skip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orrery/trace.h"
#include "test-util.h"

static void has_events(struct orr_trace *t, const char *name, void *data)
{
	assert_true(orr_trace_get_rank(t, 0)->nevents > 0);
}

static void test_real_every_file_imports(void **state)
{
	assert_true(for_each_shared_trace(has_events, NULL) >= 14);
}

static void test_real_step_times_match_readme(void **state)
{
	static const struct {
		const char *file;
		int rank;
		int64_t first;
		double ms[6];
	} table[] = {
		{ "hta-ddp-dense-rank1.json.gz",
		  1,
		  2,
		  { 345.823, 365.300, 346.141, 344.310, 336.328 } },
		{ "hta-ddp-nsres-rank0.json.gz",
		  0,
		  101,
		  { 35.154, 72.114, 95.728, 95.585, 184.937 } },
		{ "hta-ddp-resnet-rank0.json.gz", 0, 4, { 222.503, 219.786, 224.936 } },
		{ "hta-microbench-event-sync.json.gz", 0, 100, { 3.154 } },
		{ "hta-pyper-sampled-rank0.json.gz", 0, 551, { 607.361, 622.928 } },
		{ "hta-pyper-sampled-rank1.json.gz", 1, 551, { 607.954, 630.639 } },
		{ "hta-recsys-rank3.json.gz",
		  3,
		  1009,
		  { 75.516, 76.984, 76.256, 76.770, 78.525, 81.120 } },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct orr_trace *t = import_shared(table[i].file);
		const struct orr_rank *r = orr_trace_get_rank(t, 0);
		struct orr_step *s;
		size_t n, want = 0;

		while (want < 6 && table[i].ms[want] > 0)
			want++;
		assert_int_equal(r->rank, table[i].rank);
		assert_int_equal(orr_rank_steps(t, r, &s, &n), 0);
		assert_int_equal(n, want);
		for (size_t k = 0; k < n; k++) {
			double ms = (double)(s[k].end_ns - s[k].start_ns) / 1e6;

			assert_int_equal(s[k].step, table[i].first + (int64_t)k);
			if (ms < table[i].ms[k] * 0.999 || ms > table[i].ms[k] * 1.001)
				fail_msg("%s step %lld: %.3f ms, README says %.3f", table[i].file,
					 (long long)s[k].step, ms, table[i].ms[k]);
		}
		free(s);
		orr_trace_free(t);
	}
}

static void test_real_pyper_ranks_make_a_two_rank_run(void **state)
{
	const char *src = shared_kineto();
	const char *dir = *state;
	char *cmd;
	struct orr_trace *t;
	struct orr_diag d;
	struct orr_step *s;
	size_t n;

	if (!src)
		import_shared(NULL);
	cmd = orr_xasprintf("ln -s '%s'/hta-pyper-sampled-rank[01].json.gz '%s'", src, dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_int_equal(import_path(dir, NULL, &t, &d), 0);
	assert_int_equal(orr_trace_rank_count(t), 2);
	assert_int_equal(orr_trace_get_rank(t, 0)->rank, 0);
	assert_int_equal(orr_trace_get_rank(t, 1)->rank, 1);
	assert_int_equal(orr_trace_get_rank(t, 1)->world_size, 128);
	assert_int_equal(orr_trace_job_steps(t, &s, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].step, 551);
	assert_int_equal(s[1].step, 552);
	free(s);
	orr_trace_free(t);
}

static void test_real_recsys_has_old_flows(void **state)
{
	struct orr_trace *t = import_shared("hta-recsys-rank3.json.gz");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);

	/* every flow in this file is of the old async_cpu_to_gpu kind (README) */
	assert_int_equal(r->nflows, 34142);
	assert_int_equal(r->world_size, 8);
	orr_trace_free(t);
}

static void test_real_resnet_has_process_groups(void **state)
{
	struct orr_trace *t = import_shared("hta-ddp-resnet-rank0.json.gz");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	size_t with_pg = 0;

	assert_int_equal(r->ncomms, 1);
	assert_string_equal(orr_trace_str(t, r->comms[0].name), "0");
	assert_string_equal(orr_trace_str(t, r->comms[0].desc), "default_pg");
	assert_string_equal(orr_trace_str(t, r->comms[0].backend), "cuda:nccl");
	assert_int_equal(r->comms[0].size, 2);
	assert_int_equal(r->comms[0].nmembers, 2);
	assert_int_equal(r->members[r->comms[0].first_member + 1], 1);
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_collective *c;

		if (r->events[i].coll == ORR_NONE || r->events[i].kind != ORR_EVENT_OP)
			continue;
		c = &r->collectives[r->events[i].coll];
		if (strcmp(orr_trace_str(t, c->type), "wait") == 0)
			continue; /* "wait" records name no group */
		assert_string_equal(orr_trace_str(t, c->pg_name), "0");
		assert_string_equal(orr_trace_str(t, c->pg_desc), "default_pg");
		assert_int_equal(c->nmembers, 2);
		assert_int_equal(c->group_size, 2);
		assert_true(c->in_bytes > 0);
		with_pg++;
	}
	assert_true(with_pg > 0);
	orr_trace_free(t);
}

static void test_real_dense_stream_waits_are_classified(void **state)
{
	struct orr_trace *t = import_shared("hta-ddp-dense-rank1.json.gz");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	size_t waits = 0;

	for (size_t i = 0; i < r->nevents; i++)
		waits += r->events[i].kind == ORR_EVENT_RUNTIME &&
			 r->events[i].sub == ORR_CALL_STREAM_WAIT;
	assert_int_equal(waits, 6060);
	orr_trace_free(t);
}

/* cuda_sync events that name the cudaEventRecord they wait on (or, before Kineto's fix, -1). */
static void check_syncs(const char *file, bool fixed, int64_t want_event_id)
{
	struct orr_trace *t = import_shared(file);
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	size_t nsyncs = 0, linked = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_sync_args *a;

		if (r->events[i].kind != ORR_EVENT_SYNC)
			continue;
		nsyncs++;
		a = &r->syncs[r->events[i].args];
		assert_int_not_equal(r->events[i].sub, ORR_SYNC_UNKNOWN);
		if (a->event_record_corr >= 0)
			linked++;
		if (want_event_id >= 0 && r->events[i].sub != ORR_SYNC_STREAM)
			assert_int_equal(a->event_id, want_event_id);
	}
	assert_true(nsyncs > 0);
	if (fixed)
		assert_true(linked > 0);
	else
		assert_int_equal(linked, 0);
	orr_trace_free(t);
}

static void test_real_cuda_sync_events_name_their_record(void **state)
{
	check_syncs("hta-microbench-event-sync.json.gz", true, -1);
	check_syncs("kineto-unittest-cuda-sync-after-fix.json", true, 7777);
	check_syncs("kineto-unittest-cuda-sync-before-fix.json", false, 7777);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_every_file_imports),
		cmocka_unit_test(test_real_step_times_match_readme),
		cmocka_unit_test_setup_teardown(test_real_pyper_ranks_make_a_two_rank_run,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_real_recsys_has_old_flows),
		cmocka_unit_test(test_real_resnet_has_process_groups),
		cmocka_unit_test(test_real_dense_stream_waits_are_classified),
		cmocka_unit_test(test_real_cuda_sync_events_name_their_record),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	/* meson's "skipped" */
	return failed ? 1 : shared_kineto() ? 0 : 77;
}

/* SPDX-License-Identifier: MIT */
/*
 * Collective samples from real traces: the 8-rank Megatron TP=8 job (forward only, no
 * sequence parallelism) has only tensor-parallel all-reduces, coupled across the 8
 * ranks, of b·s·h·2 bytes = 4·2048·4096·2 = 64 MiB for the layers' outputs; a one-rank
 * DDP trace has all-reduces seen alone.  Samples of one size cannot separate latency
 * from bandwidth, and the model must say so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "orrery/estimator.h"
#include "test-util.h"

static size_t observe(const char *name, struct orr_coll_obs **ret, struct orr_trace **ret_t,
		      struct orr_graph **ret_g)
{
	struct orr_diag d;

	*ret_t = import_shared(name);
	if (orr_graph_build(*ret_t, NULL, ret_g, &d))
		fail_msg("%s: %s", name, d.msg);
	return orr_coll_observe(*ret_g, ret);
}

static void test_samples_megatron_tp8(void **state)
{
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_coll_obs *o;
	struct orr_coll_sample *big;
	struct orr_coll_model m;
	size_t n = observe("astrasim-megatron-tp8", &o, &t, &g), nbig = 0;

	(void)state;
	assert_true(n > 0);
	big = calloc(n, sizeof(*big));
	assert_non_null(big);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(o[i].kind, ORR_COLL_ALL_REDUCE);
		assert_int_equal(o[i].s.group, 8);
		assert_false(o[i].alone);
		assert_true(o[i].s.ns > 0);
		assert_true(o[i].sized_by_caller);
		assert_true(o[i].s.bytes == 4.0 * 2048 * 4096 * 2);
		big[nbig++] = o[i].s;
	}
	assert_int_equal(nbig, 2 * 40 + 1);
	assert_int_equal(orr_coll_model_fit(ORR_COLL_ALL_REDUCE, big, nbig, &m), 0);
	assert_false(m.constrained);
	free(big);
	free(o);
	orr_graph_free(g);
	orr_trace_free(t);
}

static void test_samples_one_rank_alone(void **state)
{
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_coll_obs *o;
	size_t n = observe("hta-ddp-resnet-rank0.json.gz", &o, &t, &g);

	(void)state;
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		assert_true(o[i].alone);
		assert_int_equal(o[i].link, ORR_LINK_UNKNOWN);
		assert_true(o[i].s.bytes > 0);
	}
	free(o);
	orr_graph_free(g);
	orr_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_megatron_tp8),
		cmocka_unit_test(test_samples_one_rank_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

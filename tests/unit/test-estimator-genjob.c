/* SPDX-License-Identifier: MIT */
/*
 * The layout of bench/gen-job's synthetic jobs, whose TP and DP degrees are known: its
 * process groups are described "tp" and "dp", so the roles are read and the degrees are
 * their sizes (dp is inferred from the world when its groups are of one rank); it has no pipeline (no point-to-point transfers), and its ops carry no
 * shapes, so the transformer's dimensions stay unknown, with the reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "../../bench/gen-job.h"
#include "orrery/estimator.h"

static void recover(size_t ranks, size_t tp)
{
	struct gen_job_options o = GEN_JOB_OPTIONS_DEFAULT;
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_structure s;
	struct orr_diag d;

	o.ranks = ranks;
	o.tp = tp;
	o.events_per_rank = 4000;
	o.steps = 2;
	assert_int_equal(gen_job(&o, &t), 0);
	if (orr_graph_build(t, NULL, &g, &d))
		fail_msg("%s", d.msg);
	for (size_t r = 0; r < orr_graph_rank_count(g); r++) {
		assert_int_equal(orr_structure_recover(g, r, &s), 0);
		/* A DP group of one rank has no collective: dp is then world / (tp x pp). */
		if (s.tp.value != (int64_t)tp || s.tp.how != ORR_VALUE_READ ||
		    s.dp.value != (int64_t)(ranks / tp) ||
		    s.dp.how != (ranks > tp ? ORR_VALUE_READ : ORR_VALUE_INFERRED))
			fail_msg("%zu ranks, tp %zu: tp %lld (%s), dp %lld (%s)", ranks, tp,
				 (long long)s.tp.value, s.tp.why, (long long)s.dp.value, s.dp.why);
		assert_int_equal(s.pp.value, 1);
		assert_int_equal(s.world.value, (int64_t)ranks);
		assert_int_equal(s.layers.how, ORR_VALUE_UNKNOWN);
		assert_true(s.forward && s.backward && s.optimizer);
	}
	orr_graph_free(g);
	orr_trace_free(t);
}

static void test_genjob_layouts(void **state)
{
	(void)state;
	recover(8, 2);
	recover(8, 8);
	recover(16, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_genjob_layouts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

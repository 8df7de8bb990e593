/* SPDX-License-Identifier: MIT */
/*
 * Megatron-Core's pipeline schedules: the orders written out by hand from the rules of
 * megatron/core/pipeline_parallel/schedules.py (1F1B warm-up min(p−r−1, m); interleaved
 * warm-up 2(p−r−1) + (v−1)·p, micro-batches in groups of p round the chunks, backward
 * chunks mirrored), and the simulated step times against the bubbles of Narayanan et
 * al., SC'21: (p−1)/m for 1F1B and (p−1)/(v·m) interleaved.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/estimator.h"

/* Stage r's order as "F0 F1 B0 ..." (v == 1) or "F0.0 F1.0 B0.1 ..." (micro-batch.chunk). */
static char *order_of(int p, int r, int m, int v)
{
	struct orr_pp_slot *s;
	size_t n, len = 0;
	char *out;

	assert_int_equal(orr_pp_schedule(p, r, m, v, &s, &n), 0);
	assert_int_equal(n, 2 * (size_t)m * (size_t)v);
	out = orr_xmalloc(n * 24 + 1);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char c = s[i].pass == ORR_PP_PASS_FORWARD ? 'F' : 'B';
		const char *sep = i ? " " : "";

		if (v == 1)
			len += (size_t)snprintf(out + len, 24, "%s%c%u", sep, c, s[i].micro_batch);
		else
			len += (size_t)snprintf(out + len, 24, "%s%c%u.%u", sep, c,
						s[i].micro_batch, s[i].chunk);
	}
	free(s);
	return out;
}

static void assert_order(int p, int r, int m, int v, const char *want)
{
	char *got = order_of(p, r, m, v);

	assert_string_equal(got, want);
	free(got);
}

/* 1F1B, p 4, m 8: stage r runs min(3 − r, 8) forwards, then (F, B) pairs, then Bs. */
static void test_schedule_1f1b_order(void **state)
{
	(void)state;
	assert_order(4, 0, 8, 1, "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
	assert_order(4, 1, 8, 1, "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7");
	assert_order(4, 3, 8, 1, "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
	/* m < p: everything in warm-up on stage 0, capped at m. */
	assert_order(4, 0, 2, 1, "F0 F1 B0 B1");
	assert_order(4, 2, 2, 1, "F0 F1 B0 B1");
}

/*
 * Interleaved, p 2, v 2, m 4: forward table (0,0) (1,0) (0,1) (1,1) (2,0) (3,0) (2,1)
 * (3,1); backward the same with chunks mirrored; warm-up 4 on stage 0, 2 on stage 1.
 */
static void test_schedule_interleaved_order(void **state)
{
	(void)state;
	assert_order(2, 0, 4, 2,
		     "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 "
		     "B2.1 B3.1 B2.0 B3.0");
	assert_order(2, 1, 4, 2,
		     "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 "
		     "F3.1 B3.1 B2.0 B3.0");
	/* p 4, v 2, m 4: stage 0's warm-up 2·3 + 4 = 10 is capped at m·v = 8. */
	assert_order(4, 0, 4, 2,
		     "F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 F3.1 "
		     "B0.1 B1.1 B2.1 B3.1 B0.0 B1.0 B2.0 B3.0");
}

/* On every stage each (micro-batch, chunk) has one forward and one backward, F first. */
static void assert_complete(int p, int r, int m, int v)
{
	size_t cells = (size_t)m * (size_t)v, n;
	size_t *fwd = orr_xcalloc(cells, sizeof(*fwd)), *bwd = orr_xcalloc(cells, sizeof(*bwd));
	struct orr_pp_slot *s;

	assert_int_equal(orr_pp_schedule(p, r, m, v, &s, &n), 0);
	for (size_t i = 0; i < n; i++) {
		size_t cell = (size_t)s[i].micro_batch * (size_t)v + s[i].chunk;

		assert_true(s[i].micro_batch < (uint32_t)m && s[i].chunk < (uint32_t)v);
		if (s[i].pass == ORR_PP_PASS_FORWARD) {
			assert_int_equal(fwd[cell]++, 0);
		} else {
			assert_int_equal(fwd[cell], 1);
			assert_int_equal(bwd[cell]++, 0);
		}
	}
	for (size_t c = 0; c < cells; c++)
		assert_int_equal(bwd[c], 1);
	free(s);
	free(fwd);
	free(bwd);
}

static void test_schedule_every_pass_once(void **state)
{
	(void)state;
	for (int p = 1; p <= 8; p++)
		for (int v = 1; v <= 4; v++)
			for (int m = 1; m <= 3 * p; m++)
				for (int r = 0; r < p && !(v > 1 && (p == 1 || m % p)); r++)
					assert_complete(p, r, m, v);
}

/* got within eps of want, saying both when not. */
static void assert_near(double got, double want, double eps)
{
	if (!(fabs(got - want) <= eps)) {
		print_error("got %.9g, want %.9g (within %g)\n", got, want, eps);
		fail();
	}
}

static double simulate(int p, int m, int v, double f, double b, double p2p)
{
	double t = -1;

	assert_int_equal(orr_pp_simulate(p, m, v, f, b, p2p, &t), 0);
	return t;
}

/* 1F1B with free transfers: (m + p − 1)(f + b) exactly, m < p included. */
static void test_schedule_1f1b_bubble(void **state)
{
	static const int pm[][2] = { { 4, 8 }, { 2, 1 },  { 4, 2 },  { 8, 3 },
				     { 4, 4 }, { 8, 64 }, { 16, 5 }, { 3, 7 } };
	const double f = 3, b = 5;

	(void)state;
	for (size_t i = 0; i < sizeof(pm) / sizeof(pm[0]); i++) {
		int p = pm[i][0], m = pm[i][1];
		double t = simulate(p, m, 1, f, b, 0), ideal = m * (f + b);
		double bubble = (t - ideal) / ideal, want = (p - 1.0) / m;

		assert_near(t, (m + p - 1) * (f + b), 1e-9);
		assert_near(bubble, want, 0.01 * want);
	}
}

/* Interleaved with free transfers: (p − 1)/(v·m) of the ideal m·v·(f + b). */
static void test_schedule_interleaved_bubble(void **state)
{
	static const int pvm[][3] = { { 4, 2, 8 },  { 2, 4, 8 }, { 4, 4, 8 },
				      { 8, 2, 16 }, { 4, 2, 4 }, { 8, 4, 32 } };
	static const double fb[][2] = { { 1, 1 }, { 1, 2 }, { 3, 5 } };

	(void)state;
	for (size_t i = 0; i < sizeof(pvm) / sizeof(pvm[0]); i++) {
		int p = pvm[i][0], v = pvm[i][1], m = pvm[i][2];

		for (size_t k = 0; k < sizeof(fb) / sizeof(fb[0]); k++) {
			double f = fb[k][0], b = fb[k][1], ideal = m * v * (f + b);
			double bubble = (simulate(p, m, v, f, b, 0) - ideal) / ideal;
			double want = (p - 1.0) / (v * m);

			assert_near(bubble, want, 0.01 * want);
		}
	}
}

/*
 * Same layout, same work (a chunk's pass 1/v of the stage's): interleaving never
 * takes longer with free transfers, and halves the bubble or better from v = 2.
 */
static void test_schedule_interleaving_never_worse(void **state)
{
	const double f = 12, b = 20;

	(void)state;
	for (int p = 2; p <= 8; p++) {
		for (int m = p; m <= 4 * p; m += p) {
			double plain = simulate(p, m, 1, f, b, 0), ideal = m * (f + b);

			for (int v = 2; v <= 6; v++) {
				double t = simulate(p, m, v, f / v, b / v, 0);

				assert_true(t <= plain + 1e-9);
				assert_true(t - ideal <= (plain - ideal) / 2 + 1e-9);
			}
		}
	}
}

/*
 * Transfers cost time, more the longer they take, and at least 2(p − 1) of them are in
 * a row (micro-batch 0's forward down the pipeline and its backward back).
 */
static void test_schedule_transfers_add_time(void **state)
{
	(void)state;
	for (int v = 1; v <= 2; v++) {
		double base = simulate(4, 8, v, 1.0 / v, 2.0 / v, 0), prev = base;

		for (int k = 1; k <= 3; k++) {
			double p2p = 0.1 * k, t = simulate(4, 8, v, 1.0 / v, 2.0 / v, p2p);

			assert_true(t > prev);
			assert_true(t >= base + 2 * 3 * p2p - 1e-9);
			prev = t;
		}
	}
}

/* One stage runs its passes back to back: m(f + b). */
static void test_schedule_one_stage(void **state)
{
	(void)state;
	assert_near(simulate(1, 1, 1, 3, 5, 7), 8, 1e-9);
	assert_near(simulate(1, 7, 1, 3, 5, 7), 56, 1e-9);
	assert_order(1, 0, 3, 1, "F0 B0 F1 B1 F2 B2");
}

static void test_schedule_invalid(void **state)
{
	static const int bad[][4] = {
		/* p, stage, m, v */
		{ 0, 0, 4, 1 }, { -1, 0, 4, 1 }, { 4, 4, 8, 1 }, { 4, -1, 8, 1 }, { 4, 0, 0, 1 },
		{ 4, 0, 8, 0 }, { 1, 0, 4, 2 },  { 4, 0, 6, 2 }, { 4, 0, 2, 2 },
	};
	struct orr_pp_slot *s = (struct orr_pp_slot *)&s;
	size_t n = 77;
	double t = 77;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int p = bad[i][0], r = bad[i][1], m = bad[i][2], v = bad[i][3];

		assert_int_equal(orr_pp_schedule(p, r, m, v, &s, &n), -EINVAL);
		if (r >= 0 && r < (p > 0 ? p : 1))
			assert_int_equal(orr_pp_simulate(p, m, v, 1, 2, 0, &t), -EINVAL);
	}
	assert_int_equal(orr_pp_simulate(4, 8, 1, -1, 2, 0, &t), -EINVAL);
	assert_int_equal(orr_pp_simulate(4, 8, 1, 1, -2, 0, &t), -EINVAL);
	assert_int_equal(orr_pp_simulate(4, 8, 1, 1, 2, -0.5, &t), -EINVAL);
	assert_int_equal(orr_pp_simulate(4, 8, 1, NAN, 2, 0, &t), -EINVAL);
	assert_int_equal(orr_pp_simulate(4, 8, 1, 1, INFINITY, 0, &t), -EINVAL);
	assert_int_equal(orr_pp_simulate(1024, 65536, 1, 1, 2, 0, &t), -E2BIG);
	assert_int_equal(orr_pp_schedule(1024, 0, 65536, 1, &s, &n), -E2BIG);
	/* Nothing written on failure. */
	assert_ptr_equal(s, (struct orr_pp_slot *)&s);
	assert_int_equal(n, 77);
	assert_near(t, 77, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedule_1f1b_order),
		cmocka_unit_test(test_schedule_interleaved_order),
		cmocka_unit_test(test_schedule_every_pass_once),
		cmocka_unit_test(test_schedule_1f1b_bubble),
		cmocka_unit_test(test_schedule_interleaved_bubble),
		cmocka_unit_test(test_schedule_interleaving_never_worse),
		cmocka_unit_test(test_schedule_transfers_add_time),
		cmocka_unit_test(test_schedule_one_stage),
		cmocka_unit_test(test_schedule_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

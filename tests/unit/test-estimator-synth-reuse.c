/* SPDX-License-Identifier: MIT */
/*
 * What the synthesizer keeps from one step to the next and from one pass to the next
 * (estimator/synth/): a sweep's scratch holds each stage's instructions, its streams'
 * queues and the passes it copies rather than writes again (a layer's forward and
 * backward passes), so a step synthesized after others, of other layouts, must be bit
 * for bit the step synthesized alone; and the check that a step's times add up in
 * int64 ns, which reads the sums kept as the tasks were written, must decide as a sum
 * over the tasks in order does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/estimator.h"
#include "synth-test.h"

/* Every count and time of two steps the same, bit for bit. */
static void assert_same(const struct orr_synth *a, const struct orr_synth *b)
{
	assert_int_equal(a->ranks, b->ranks);
	assert_int_equal(a->kernels, b->kernels);
	assert_int_equal(a->collectives, b->collectives);
	assert_int_equal(a->transfers, b->transfers);
	assert_memory_equal(&a->sources, &b->sources, sizeof(a->sources));
	assert_memory_equal(&a->placed_ns, &b->placed_ns, sizeof(double));
	assert_memory_equal(&a->placed_compute_ns, &b->placed_compute_ns, sizeof(double));
	assert_memory_equal(&a->placed_overlapped_ns, &b->placed_overlapped_ns, sizeof(double));
	assert_memory_equal(&a->placed_comm_ns, &b->placed_comm_ns, sizeof(double));
	assert_memory_equal(&a->placed_other_ns, &b->placed_other_ns, sizeof(double));
	assert_memory_equal(&a->gemm_ns, &b->gemm_ns, sizeof(double));
	assert_memory_equal(&a->kern_ns, &b->kern_ns, sizeof(double));
	assert_memory_equal(&a->tp_ns, &b->tp_ns, sizeof(double));
	assert_memory_equal(&a->dp_ns, &b->dp_ns, sizeof(double));
	assert_memory_equal(&a->pp_ns, &b->pp_ns, sizeof(double));
	assert_memory_equal(&a->forward_ns, &b->forward_ns, sizeof(double));
	assert_memory_equal(&a->backward_ns, &b->backward_ns, sizeof(double));
	assert_memory_equal(&a->transfer_ns, &b->transfer_ns, sizeof(double));
	assert_memory_equal(&a->bubble_ns, &b->bubble_ns, sizeof(double));
}

/* The layouts a sweep goes through, one after the other: each differs from the last. */
static struct orr_train_config layout(int i)
{
	struct orr_train_config c = small_gpt(8);

	c.sequence_parallel = c.distributed_optimizer = true;
	switch (i) {
	case 0: /* the most stages first: a later step has fewer, each shorter */
		c.pp = 8;
		c.tp = 1;
		c.micro_batches = 16;
		break;
	case 1:
		c.pp = 4;
		c.vpp = 2;
		break;
	case 2:
		c.fully_sharded = true;
		c.dp = 4;
		break;
	case 3:
		c.cp = 2;
		c.recompute = ORR_RECOMPUTE_SELECTIVE;
		break;
	case 4:
		c.recompute = ORR_RECOMPUTE_FULL;
		c.sync_layers = c.sync_timers = true;
		break;
	case 5:
		c.kv_groups = 4;
		c.gated_mlp = c.rms_norm = c.rope = c.untied_embeddings = true;
		c.tp = 4;
		c.pp = 1;
		break;
	case 6:
		c.overlap_grad_reduce = true;
		c.distributed_optimizer = c.sequence_parallel = false;
		c.scatter_gather_p2p = true;
		c.pp = 4;
		c.first_stage_layers = 1;
		c.last_stage_layers = 3;
		break;
	default: /* the first again, after all the others */
		return layout(0);
	}
	return c;
}

/*
 * One scratch through layouts of 8 down to 1 stages and back, with FSDP's records, CP's
 * ring, full recompute's synchronized layers: each step as synthesized alone.
 */
static void test_synth_reuse_scratch(void **state)
{
	struct orr_synth_costs k = table_costs();
	struct orr_synth_scratch *scratch = orr_synth_scratch_new();

	(void)state;
	for (int i = 0; i < 8; i++) {
		struct orr_train_config c = layout(i);
		struct orr_synth alone, after;

		assert_int_equal(orr_synth_time(&c, false, &k, NULL, &alone, NULL), 0);
		assert_int_equal(orr_synth_time(&c, false, &k, scratch, &after, NULL), 0);
		assert_same(&alone, &after);
		/* a written step times the same */
		orr_synth_release(&after);
		assert_int_equal(orr_synth_step(&c, false, &k, &after, NULL), 0);
		assert_same(&alone, &after);
		orr_synth_release(&alone);
		orr_synth_release(&after);
	}
	orr_synth_scratch_free(scratch);
}

/*
 * A step whose tasks add up to between 2^61 and 2^62 ns is placed, one past 2^62 is
 * refused: the sum kept as the tasks were written only decides below 2^61, and the
 * tasks read in order decide the rest.  A launch time per call of 2^61 ns over the
 * step's kernels and collectives (its calls are more: waits, synchronizations), then
 * four times it.
 */
static void test_synth_times_near_limit(void **state)
{
	struct orr_synth_costs k = table_costs();
	struct orr_train_config c = small_gpt(8);
	struct orr_synth s;
	const char *why = NULL;
	double calls;

	(void)state;
	assert_int_equal(orr_synth_time(&c, false, &k, NULL, &s, NULL), 0);
	calls = (double)(s.kernels + s.collectives + s.transfers);
	orr_synth_release(&s);
	k.cpu_op_ns = 0x1p61 / calls;
	assert_int_equal(orr_synth_time(&c, false, &k, NULL, &s, &why), 0);
	assert_true(s.placed_ns > 0x1p59 && s.placed_ns < 0x1p62);
	orr_synth_release(&s);
	k.cpu_op_ns *= 4;
	assert_int_equal(orr_synth_time(&c, false, &k, NULL, &s, &why), -ERANGE);
	assert_non_null(strstr(why, "2^62 ns"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synth_reuse_scratch),
		cmocka_unit_test(test_synth_times_near_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * What Megatron's training loop does around the model in a synthesized step
 * (estimator/synth/, docs/estimator.md "A step from a model description"): the loss of
 * each micro-batch on the last stage, averaged over the data-parallel group by an
 * all-reduce of one number (pretrain_gpt.py's loss_func), and, with sync_timers, the
 * device synchronizations of timers that synchronize when each pass starts and stops
 * (Megatron-DeepSpeed before its July 2023 rebase), and, with sync_layers, those of
 * DeepSpeed's activation checkpointing at each checkpointed layer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/estimator.h"
#include "orrery/graph.h"
#include "orrery/replay.h"
#include "orrery/trace.h"
#include "synth-test.h"

/* synth-test.h's small GPT of 4 layers. */
static struct orr_train_config small(void)
{
	return small_gpt(4);
}

static struct orr_synth synth(const struct orr_train_config *c)
{
	struct orr_synth_costs k = table_costs();
	struct orr_synth s;
	const char *why = NULL;

	assert_int_equal(orr_synth_step(c, false, &k, &s, &why), 0);
	assert_null(why);
	return s;
}

/* Occurrences of needle in the synthesized trace. */
static size_t count(const struct orr_synth *s, const char *needle)
{
	size_t n = 0, len = strlen(needle);

	for (const char *p = s->json; (p = strstr(p, needle)) != NULL; p += len)
		n++;
	return n;
}

/* The replayed job step of s, ns. */
static double replayed(const struct orr_synth *s)
{
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_replay *r = NULL;
	struct orr_replay_step *steps = NULL;
	struct orr_diag d;
	size_t n = 0;
	double ns;

	assert_int_equal(orr_trace_import_buffer("synth", s->json, s->len, NULL, &t, &d), 0);
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	assert_int_equal(orr_replay_run(g, NULL, &r, &d), 0);
	orr_replay_job_steps(r, &steps, &n);
	assert_int_equal(n, 1);
	ns = (double)(steps[0].predicted_end_ns - steps[0].predicted_start_ns);
	free(steps);
	orr_replay_free(r);
	orr_graph_free(g);
	orr_trace_free(t);
	return ns;
}

/*
 * Of the stage whose GPU is process gpu_pid in s's trace (stage k's: 2k + 2), the
 * receives of a forward pass's input ("receive from previous stage") after which the
 * first GEMM launched is a backward pass's (a dgrad) rather than the forward pass's
 * that the input feeds: the receives posted one call ahead, a backward pass between.
 * The trace writes each event on a line of its own, a stage's in launch order.
 */
static size_t received_ahead(const struct orr_synth *s, int gpu_pid)
{
	char pid[32], line[4096];
	size_t n = 0;
	bool open = false;

	snprintf(pid, sizeof(pid), "\"pid\":%d,", gpu_pid);
	for (const char *p = s->json; *p;) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		snprintf(line, sizeof(line), "%.*s",
			 (int)(len < sizeof(line) ? len : sizeof(line) - 1), p);
		p += end ? len + 1 : len;
		if (!strstr(line, "\"cat\":\"kernel\"") || !strstr(line, pid))
			continue;
		if (strstr(line, "\"Process Group Description\":\"receive from previous stage\"")) {
			open = true;
		} else if (open && strstr(line, "orrery_synth::gemm<")) {
			n += strstr(line, ",dgrad>") != NULL;
			open = false;
		}
	}
	return n;
}

/*
 * Of the same stage's receives (from either neighbour), those that start on the GPU
 * before the compute kernel launched last before them has ended: ProcessGroupNCCL
 * puts a receive on its stream behind an event of the compute stream, so none should.
 */
static size_t received_early(const struct orr_synth *s, int gpu_pid)
{
	char pid[32], line[4096];
	size_t n = 0;
	double compute_end = 0;

	snprintf(pid, sizeof(pid), "\"pid\":%d,", gpu_pid);
	for (const char *p = s->json; *p;) {
		const char *end = strchr(p, '\n'), *ts, *dur;
		size_t len = end ? (size_t)(end - p) : strlen(p);

		snprintf(line, sizeof(line), "%.*s",
			 (int)(len < sizeof(line) ? len : sizeof(line) - 1), p);
		p += end ? len + 1 : len;
		ts = strstr(line, "\"ts\":");
		dur = strstr(line, "\"dur\":");
		if (!strstr(line, "\"cat\":\"kernel\"") || !strstr(line, pid) || !ts || !dur)
			continue;
		if (strstr(line, "\"tid\":7,")) /* the compute stream */
			compute_end = strtod(ts + 5, NULL) + strtod(dur + 6, NULL);
		else if (strstr(line, "\"Process Group Description\":\"receive from"))
			n += strtod(ts + 5, NULL) < compute_end - 1e-3;
	}
	return n;
}

/* A DP all-reduce of one fp16/bf16 pair of elements (4 bytes) over the 2 DP ranks. */
#define LOSS_ALL_REDUCE "\"In msg nelems\":2,\"Out msg nelems\":2,\"Group size\":2,"

/*
 * The last stage computes each micro-batch's loss from its tokens' losses and averages
 * it over the DP group (an all-reduce of 4 bytes) after every forward pass, and its
 * backward pass starts from the loss: once per micro-batch, on the last stage only.
 */
static void test_loss_per_micro_batch(void **state)
{
	struct orr_train_config c = small();
	struct orr_synth s;

	(void)state;
	s = synth(&c);
	assert_int_equal(count(&s, "orrery_synth::loss_times_mask\""), c.micro_batches);
	assert_int_equal(count(&s, "orrery_synth::loss_times_mask_backward\""), c.micro_batches);
	assert_int_equal(count(&s, "orrery_synth::loss_scale\""), c.micro_batches);
	assert_int_equal(count(&s, LOSS_ALL_REDUCE), c.micro_batches);
	orr_synth_release(&s);

	/* Without data parallelism the loss is not reduced; the kernels stay. */
	c.dp = 1;
	s = synth(&c);
	assert_int_equal(count(&s, "orrery_synth::loss_times_mask\""), c.micro_batches);
	assert_int_equal(count(&s, LOSS_ALL_REDUCE), 0);
	orr_synth_release(&s);

	/* Forward only (evaluation) computes the loss and has no backward pass of it. */
	c = small();
	{
		struct orr_synth_costs k = table_costs();

		assert_int_equal(orr_synth_step(&c, true, &k, &s, NULL), 0);
	}
	assert_int_equal(count(&s, "orrery_synth::loss_times_mask\""), c.micro_batches);
	assert_int_equal(count(&s, "orrery_synth::loss_scale\""), 0);
	orr_synth_release(&s);
}

/*
 * sync_timers: every stage synchronizes the device when each forward and backward pass
 * starts and stops (forward-compute, backward-compute), and the stages that load a
 * batch when its loading starts and stops (batch-generator): with PP 2 both stages load
 * one, so 6 more per micro-batch and stage.  The step is no faster, and its trace
 * replays to the step as placed.
 */
static void test_sync_timers(void **state)
{
	struct orr_train_config c = small();
	struct orr_synth plain, timed;
	size_t syncs;

	(void)state;
	plain = synth(&c);
	c.sync_timers = true;
	timed = synth(&c);
	syncs = count(&plain, "\"cudaDeviceSynchronize\"");
	assert_int_equal(count(&timed, "\"cudaDeviceSynchronize\""),
			 syncs + (size_t)(c.pp * c.micro_batches * 6));
	assert_true(timed.placed_ns >= plain.placed_ns);
	assert_true(fabs(replayed(&timed) / timed.placed_ns - 1) < 0.005);
	orr_synth_release(&plain);
	orr_synth_release(&timed);
}

/*
 * sync_layers: with full recompute, each stage synchronizes the device when each of its
 * layers' forward pass and backward pass (the recompute included) starts and ends, as
 * DeepSpeed's CheckpointFunction does with synchronize on: 4 per layer and micro-batch,
 * layers / pp layers a stage.  Each synchronization leaves the GPU idle until the next
 * launch, so the step is longer; it replays to the step as placed.  Without full
 * recompute no layer is checkpointed and nothing changes.
 */
static void test_sync_layers(void **state)
{
	struct orr_train_config c = small();
	struct orr_synth plain, synced, none;
	size_t syncs;

	(void)state;
	c.recompute = ORR_RECOMPUTE_FULL;
	plain = synth(&c);
	c.sync_layers = true;
	synced = synth(&c);
	syncs = count(&plain, "\"cudaDeviceSynchronize\"");
	assert_int_equal(count(&synced, "\"cudaDeviceSynchronize\""),
			 syncs + (size_t)(c.micro_batches * c.layers * 4));
	assert_true(synced.placed_ns > plain.placed_ns);
	assert_true(fabs(replayed(&synced) / synced.placed_ns - 1) < 0.005);
	c.recompute = ORR_RECOMPUTE_NONE;
	none = synth(&c);
	orr_synth_release(&plain);
	c.sync_layers = false;
	plain = synth(&c);
	assert_int_equal(count(&none, "\"cudaDeviceSynchronize\""),
			 count(&plain, "\"cudaDeviceSynchronize\""));
	assert_true(none.placed_ns == plain.placed_ns);
	orr_synth_release(&plain);
	orr_synth_release(&synced);
	orr_synth_release(&none);
}

/*
 * An interleaved schedule (VPP 2) with synchronizing timers: Megatron posts each pass's
 * input one point-to-point call ahead (send_forward_recv_forward() after the forward
 * pass before it, send_backward_recv_backward() after the backward pass before it, the
 * first backward pass's input after the last warm-up forward pass), so the stages'
 * synchronizations wait for transfers both sides have posted, and the step runs (it was
 * refused as a deadlock: each input received just before its pass).  Per stage: 2
 * synchronizations per pass (forward-compute, backward-compute) and 2 per call after it
 * (forward-send-forward-recv, backward-send-backward-recv), 2 per micro-batch loaded
 * (both stages load: chunk 0 of stage 0, chunk 1 of stage 1), 2 for the call of the
 * first backward pass's input, and stage 1's recv_forward() of its first input.
 */
static void test_sync_timers_interleaved(void **state)
{
	struct orr_train_config c = small();
	struct orr_synth plain, timed;
	size_t passes, syncs;

	(void)state;
	c.vpp = 2;
	plain = synth(&c);
	c.sync_timers = true;
	timed = synth(&c);
	passes = (size_t)(2 * c.micro_batches * c.vpp);
	syncs = count(&plain, "\"cudaDeviceSynchronize\"");
	assert_int_equal(count(&timed, "\"cudaDeviceSynchronize\""),
			 syncs + (size_t)c.pp * (passes * 4 + (size_t)c.micro_batches * 2 + 2) + 2);
	assert_int_equal(timed.transfers, plain.transfers);
	assert_true(timed.placed_ns > plain.placed_ns);
	assert_true(fabs(replayed(&timed) / timed.placed_ns - 1) < 0.005);
	orr_synth_release(&plain);
	orr_synth_release(&timed);
}

/*
 * The same with DeepSpeed's synchronized checkpoints (full recompute), VPP 2, 4 stages
 * and forward only: each runs, with 4 synchronizations per layer and micro-batch (the
 * timers' none), and replays as placed.
 */
static void test_sync_layers_interleaved(void **state)
{
	struct orr_train_config c = small();
	struct orr_synth_costs k = table_costs();
	struct orr_synth plain, synced;

	(void)state;
	c.vpp = 2;
	c.recompute = ORR_RECOMPUTE_FULL;
	plain = synth(&c);
	c.sync_layers = true;
	synced = synth(&c);
	assert_int_equal(count(&synced, "\"cudaDeviceSynchronize\""),
			 count(&plain, "\"cudaDeviceSynchronize\"") +
				 (size_t)(c.micro_batches * c.layers * 4));
	assert_true(synced.placed_ns > plain.placed_ns);
	assert_true(fabs(replayed(&synced) / synced.placed_ns - 1) < 0.005);
	orr_synth_release(&plain);
	orr_synth_release(&synced);

	c.layers = 8;
	c.pp = 4;
	c.sync_timers = true;
	synced = synth(&c);
	assert_true(fabs(replayed(&synced) / synced.placed_ns - 1) < 0.005);
	orr_synth_release(&synced);
	assert_int_equal(orr_synth_step(&c, true, &k, &synced, NULL), 0);
	orr_synth_release(&synced);
}

/*
 * An interleaved schedule (VPP 2) without synchronizations is written in Megatron's
 * order too (overlap_p2p_comm, its default): in the steady state each forward pass's
 * input is posted by send_forward_recv_forward() after the forward pass before it, so
 * a backward pass runs between the receive and the pass it feeds.  Stage 1 of 2 warms
 * up with 2 forward passes (2 (pp - 1 - 1) + (vpp - 1) pp), whose calls wait for their
 * transfers at once; the 14 steady-state forward calls that follow post the next
 * forward pass's input ahead, all but the last (no forward pass after it): 13.
 * Received just before its pass (as 1F1B does) none would be.  No receive of either
 * stage starts before the compute launched before it has ended (ProcessGroupNCCL's
 * syncStream), so that its wait for the peer never runs beside that compute.  The step
 * replays as placed.
 */
static void test_interleaved_posted_ahead(void **state)
{
	struct orr_train_config c = small();
	struct orr_synth s;
	size_t total, warmup;

	(void)state;
	c.vpp = 2;
	s = synth(&c);
	total = (size_t)(c.micro_batches * c.vpp);
	warmup = (size_t)(2 * (c.pp - 1 - 1) + (c.vpp - 1) * c.pp);
	assert_int_equal(received_ahead(&s, 4), total - warmup - 1);
	assert_int_equal(received_early(&s, 2), 0);
	assert_int_equal(received_early(&s, 4), 0);
	assert_true(fabs(replayed(&s) / s.placed_ns - 1) < 0.005);
	orr_synth_release(&s);

	/*
	 * 1F1B receives each input just before its pass, in the batched call after the
	 * pass before it: behind that pass's compute too (ProcessGroupNCCL's syncStream)
	 */
	c.vpp = 1;
	s = synth(&c);
	assert_int_equal(received_ahead(&s, 4), 0);
	assert_int_equal(received_early(&s, 2), 0);
	assert_int_equal(received_early(&s, 4), 0);
	orr_synth_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loss_per_micro_batch),
		cmocka_unit_test(test_sync_timers),
		cmocka_unit_test(test_sync_layers),
		cmocka_unit_test(test_sync_timers_interleaved),
		cmocka_unit_test(test_sync_layers_interleaved),
		cmocka_unit_test(test_interleaved_posted_ahead),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

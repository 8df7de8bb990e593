/* SPDX-License-Identifier: MIT */
/*
 * NCCL's own model of a collective across nodes (estimator/nccl-model.c, NCCL 2.18.3's
 * src/graph/tuning.cc): each value worked out by hand from the model's description.
 * Two DGX A100 nodes (8 HDR NICs each, 24 GB/s per channel after NCCL's speed ladder):
 * a large all-reduce runs the ring at channels x 24 GB/s of bus bandwidth, its latency
 * grows with the ring's steps, a tree wins where the ring's latency dominates, and one
 * rank per node pays LL128's discount.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>

#include "orrery/estimator.h"
#include "../../estimator/internal.h"

#define GIB 1073741824.0

static struct orr_nccl_net dgx_a100(int ranks, int nodes)
{
	return (struct orr_nccl_net){
		.ranks = ranks,
		.nodes = nodes,
		.channels = ranks / nodes,
		.channel_gbps = orr__nccl_channel_gbps(25e9, false),
		.amd_cpu = true,
	};
}

static struct orr_nccl_choice run(struct orr_nccl_net net, enum orr_coll_kind kind, double bytes)
{
	struct orr_nccl_choice c;

	assert_int_equal(orr__nccl_net_time(&net, kind, bytes, &c), 0);
	return c;
}

/* The ladder of search.cc: HDR's 25 GB/s runs at 24, NDR's 50 at Hopper's 48. */
static void test_channel_speed(void **state)
{
	(void)state;
	assert_true(orr__nccl_channel_gbps(25e9, false) == 24.0);
	assert_true(orr__nccl_channel_gbps(50e9, true) == 48.0);
	assert_true(orr__nccl_channel_gbps(12.5e9, false) == 12.0);
	assert_true(orr__nccl_channel_gbps(1e6, false) == 0.12); /* the slowest */
}

/*
 * 1 GiB over 16 ranks on 2 nodes: the ring's Simple protocol, its bus bandwidth S·F(n)/t
 * channels x 24 GB/s but for the latency: 8.4 + 26 x max(3.4, 6) + 4 x 14 = 220.4 µs,
 * x 1.4 (the plateau) = 308.56 µs.  The same bus bandwidth on 4 nodes (32 ranks): the
 * time grows as F(n) and the latency, not as the nodes.
 */
static void test_allreduce_bus_bandwidth(void **state)
{
	double f16 = 2.0 * 15 / 16, f32 = 2.0 * 31 / 32;
	struct orr_nccl_choice a = run(dgx_a100(16, 2), ORR_COLL_ALL_REDUCE, GIB);
	struct orr_nccl_choice b = run(dgx_a100(32, 4), ORR_COLL_ALL_REDUCE, GIB);
	double lat16 = (8.4 + 26 * 6.0 + 4 * 14.0) * 1.4e3;
	double lat32 = (8.4 + 54 * 6.0 + 8 * 14.0) * 1.4e3;

	(void)state;
	assert_int_equal(a.algo, ORR_NCCL_RING);
	assert_int_equal(a.proto, ORR_NCCL_SIMPLE);
	assert_true(fabs(a.ns - (lat16 + GIB * f16 / (8 * 24e9) * 1e9)) < 1);
	assert_true(fabs(b.ns - (lat32 + GIB * f32 / (8 * 24e9) * 1e9)) < 1);
	/* as nccl-tests reports it: busbw within 6 % of the NICs' 192 GB/s */
	assert_true(GIB * f16 / a.ns > 0.94 * 192 && GIB * f16 / a.ns < 192);
}

/* Half the NICs (4 ranks a node): half the bus bandwidth. */
static void test_fewer_nics_per_node(void **state)
{
	struct orr_nccl_choice eight = run(dgx_a100(16, 2), ORR_COLL_ALL_REDUCE, GIB);
	struct orr_nccl_choice four = run(dgx_a100(8, 2), ORR_COLL_ALL_REDUCE, GIB);
	double bw8 = GIB * 2.0 * 15 / 16 / eight.ns, bw4 = GIB * 2.0 * 7 / 8 / four.ns;

	(void)state;
	assert_true(bw4 < 0.53 * bw8 &&
		    bw4 > 0.47 * bw8); /* the latency: 3 % of one, 1 % of the other */
}

/*
 * The latency grows with the ring: 8 KiB over 16 then 64 ranks, 8 a node, takes longer
 * each time; at 2,048 ranks the tree's 2 x (7 intra + 8 network hops) beats the ring's
 * 4,094 steps.
 */
static void test_latency_grows_and_tree(void **state)
{
	struct orr_nccl_choice r16 = run(dgx_a100(16, 2), ORR_COLL_ALL_REDUCE, 8192);
	struct orr_nccl_choice r64 = run(dgx_a100(64, 8), ORR_COLL_ALL_REDUCE, 8192);
	struct orr_nccl_choice r2048 = run(dgx_a100(2048, 256), ORR_COLL_ALL_REDUCE, 8192);

	(void)state;
	assert_true(r64.ns > r16.ns);
	assert_true(r2048.ns > r64.ns);
	assert_int_equal(r2048.algo, ORR_NCCL_TREE);
	/* LL's tree: 6.8 + 2 x (7 x 0.6 + 8 x 5.0) = 95.2 µs plus 8 KiB at its bandwidth */
	assert_true(r2048.ns > 95.2e3 && r2048.ns < 96.5e3);
}

/*
 * One rank per node (a DP group of a TP-8 job): LL128 at 0.7 of the one channel,
 * Simple at all of it; a reduce-scatter's ring has n - 1 steps, all across nodes.
 */
static void test_one_rank_per_node(void **state)
{
	struct orr_nccl_choice rs = run(dgx_a100(32, 32), ORR_COLL_REDUCE_SCATTER, GIB);
	double lat = 8.4 + 31 * 14.0;

	(void)state;
	assert_int_equal(rs.algo, ORR_NCCL_RING);
	assert_int_equal(rs.proto, ORR_NCCL_SIMPLE);
	assert_true(fabs(rs.ns - (lat * 1e3 + GIB * 31 / 32 / 24e9 * 1e9)) < 1);
}

/*
 * A channel at 25 GB/s or more is duplicated, each at half the speed (search.cc,
 * ncclTopoCompute(): bwIntra >= 25, at most MAXCHANNELS / 2 = 16 rings): two DGX H100
 * nodes' NDR NICs (50 GB/s, 48 after the ladder) run 16 channels at 24 GB/s, so LL128's
 * per-channel cap (36.7 GB/s on Hopper) bounds 16 of them, not 8.  96 MiB over 16 ranks:
 * LL128 at min(16 x 24 x 0.92, 16 x 36.7) = 353.28 GB/s of bus bandwidth, its latency
 * 14 + 26 x max(1.9, 1) + 4 x 4 = 79.4 µs, beats Simple (384 GB/s, but (8.4 + 26 x 3.4
 * + 4 x 14) x 1.4 = 213.92 µs of latency); one channel per NIC at 48 would cap LL128 at
 * 8 x 36.7 and pick Simple.
 */
static void test_hopper_channels_duplicated(void **state)
{
	struct orr_nccl_net net = {
		.ranks = 16,
		.nodes = 2,
		.channels = 8,
		.channel_gbps = orr__nccl_channel_gbps(50e9, true),
		.hopper = true,
	};
	double bytes = 96.0 * 1024 * 1024;
	struct orr_nccl_choice c = run(net, ORR_COLL_ALL_REDUCE, bytes);
	double ll128 = 79.4e3 + bytes / (353.28e9 * 16 / 30) * 1e9;

	(void)state;
	assert_true(net.channel_gbps == 48.0);
	assert_int_equal(c.algo, ORR_NCCL_RING);
	assert_int_equal(c.proto, ORR_NCCL_LL128);
	assert_true(fabs(c.ns - ll128) < 1);
}

static void test_refuses(void **state)
{
	struct orr_nccl_net one = dgx_a100(8, 1), two = dgx_a100(16, 2);
	struct orr_nccl_choice c;

	(void)state;
	assert_int_equal(orr__nccl_net_time(&one, ORR_COLL_ALL_REDUCE, GIB, &c), -EINVAL);
	assert_int_equal(orr__nccl_net_time(&two, ORR_COLL_SEND_RECV, GIB, &c), -EINVAL);
	assert_int_equal(orr__nccl_net_time(&two, ORR_COLL_ALL_REDUCE, NAN, &c), -EINVAL);
	two.channels = 0;
	assert_int_equal(orr__nccl_net_time(&two, ORR_COLL_ALL_REDUCE, GIB, &c), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_channel_speed),
		cmocka_unit_test(test_allreduce_bus_bandwidth),
		cmocka_unit_test(test_fewer_nics_per_node),
		cmocka_unit_test(test_latency_grows_and_tree),
		cmocka_unit_test(test_one_rank_per_node),
		cmocka_unit_test(test_hopper_channels_duplicated),
		cmocka_unit_test(test_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

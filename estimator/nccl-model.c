/* SPDX-License-Identifier: MIT */
/*
 * A collective across nodes as NCCL itself predicts it (docs/estimator.md, "Across
 * nodes: NCCL's own model"), for where no nccl-tests of the network were given.  NCCL
 * picks an algorithm (ring, or tree for all-reduce) and a protocol (LL, LL128, Simple)
 * per call by the smallest time of its tuning model, latency + bytes / algorithm
 * bandwidth.  The model is implemented here from NCCL 2.18.3's description of it
 * (src/graph/tuning.cc: ncclTopoTuneModel() and ncclTopoGetAlgoTime(); the speeds of
 * src/graph/search.cc), not copied; its constants are NCCL's, in its units (µs, GB/s):
 *
 * - Bus bandwidth: each channel (one ring through one NIC of each node) carries the
 *   largest of NCCL's ladder of speeds that its NIC allows, a channel of 25 GB/s or more
 *   split in two at half of it (NDR's 48: two of 24); the ring's bus bandwidth is
 *   channels x that.  LL moves 8 bytes of data in 16 (1/4 of it across nodes, at most
 *   llMaxBw), LL128 120 of 128 (x 0.92, x 0.7 with one rank per node, at most 20 GB/s
 *   per channel on Ampere), Simple all of it.  A tree runs at x 0.92 of it, at most its
 *   per-channel cap, and moves half the data each way (algorithm bandwidth x 0.5).
 * - Latency: a base per algorithm and protocol, plus a hop latency per step: a ring of
 *   n ranks takes 2(n-1) steps for an all-reduce, n-1 for the others, of which 2 x nodes
 *   (all-reduce) or nodes - 1 cross the network; a step inside a node costs at least
 *   the CPU's network overhead (1 µs Intel, 2 µs AMD, x 3 for Simple).  A tree takes
 *   2 x ((ranks per node - 1) intra hops + log2(nodes) network hops).  The ring's
 *   Simple all-reduce across nodes pays 1.4 x its latency (its "plateau effect"); the
 *   tree's bandwidth takes NCCL's correction per size below 256 MB.
 */
#include <errno.h>
#include <math.h>

#include "internal.h"
#include "banned.h"

enum { LL = ORR_NCCL_LL, LL128 = ORR_NCCL_LL128, SIMPLE = ORR_NCCL_SIMPLE };

/* Base latency per algorithm and protocol, and the hop latencies, µs (tuning.cc). */
static const double base_lat[2][3] = {
	[ORR_NCCL_RING] = { 6.6, 14.0, 8.4 }, [ORR_NCCL_TREE] = { 6.8, 14.0, 0 }
};
static const double nvlink_lat[2][3] = {
	[ORR_NCCL_RING] = { .6, 1.9, 3.4 }, [ORR_NCCL_TREE] = { .6, 1.25, 4 }
};
static const double net_lat[2][3] = {
	[ORR_NCCL_RING] = { 2.7, 4.0, 14.0 }, [ORR_NCCL_TREE] = { 5.0, 8.5, 14.0 }
};

/* Per-channel caps, GB/s, [Ampere, Hopper][2 nodes, more] (tuning.cc). */
static const double ring_ll128_cap[2] = { 20.0, 36.7 };
static const double tree_cap[2][2] = { { 23.6, 17.8 }, { 41.4, 36.0 } };
static const double tree_ll128_cap[2][2] = { { 20.0, 20.0 }, { 36.7, 29.0 } };
/* LL's cap across nodes by the CPU, [Intel, AMD][2 nodes, more] (tuning.cc llMaxBws). */
static const double ll_cap[2][2] = { { 39.0, 20.4 }, { 22.5, 19.0 } };

/* The tree's bandwidth correction per power of two of bytes / 64, 64 B to 256 MB. */
static const double tree_fix[3]
			    [23] = {
				    { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
				      .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0 },
				    { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
				      .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0 },
				    { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
				      .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9 },
			    };

/* The speeds a channel may take across nodes, GB/s, fastest first (search.cc). */
static const double ladder_ampere[] = { 48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
					7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12 };
static const double ladder_hopper[] = { 48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 20.0, 17.5,
					15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12 };

double orr__nccl_channel_gbps(double nic_bytes_per_s, bool hopper)
{
	const double *l = hopper ? ladder_hopper : ladder_ampere;
	size_t n = hopper ? sizeof(ladder_hopper) / sizeof(ladder_hopper[0])
			  : sizeof(ladder_ampere) / sizeof(ladder_ampere[0]);
	double nic = nic_bytes_per_s / 1e9;

	for (size_t i = 0; i < n; i++)
		if (l[i] <= nic)
			return l[i];
	return l[n - 1];
}

static int log2_floor(double x)
{
	return x >= 1 ? ilogb(x) : 0;
}

/* Steps of a ring, and those of them that cross the network (doubles: 2(n - 1) of n ranks
 * up to INT_MAX). */
static void ring_steps(enum orr_coll_kind kind, int ranks, int nodes, double *ret_steps,
		       double *ret_inter)
{
	if (kind == ORR_COLL_ALL_REDUCE) {
		*ret_steps = 2.0 * (ranks - 1);
		*ret_inter = 2.0 * nodes;
	} else { /* all-gather, reduce-scatter */
		*ret_steps = ranks - 1;
		*ret_inter = nodes - 1;
	}
	/* 2 x nodes may exceed 2(n - 1) with one rank per node: every step crosses then */
	if (*ret_inter > *ret_steps)
		*ret_inter = *ret_steps;
}

/* The algorithm bandwidth (GB/s) and latency (µs) of algo and proto, before the size. */
static void tune(const struct orr_nccl_net *net, enum orr_coll_kind kind, int algo, int proto,
		 double *ret_bw, double *ret_lat)
{
	int big = net->nodes > 2, gen = net->hopper ? 1 : 0;
	double ppn = (double)net->ranks / net->nodes, ch = net->channels;
	double bus = ch * net->channel_gbps, llmax = ll_cap[net->amd_cpu ? 1 : 0][big];
	double intra = nvlink_lat[algo][proto], inter = net_lat[algo][proto];
	double lat = base_lat[algo][proto], steps, cross;

	if (algo == ORR_NCCL_RING) {
		double overhead = (net->amd_cpu ? 2.0 : 1.0) * (proto == SIMPLE ? 3 : 1);

		if (proto == LL)
			bus = fmin(llmax, bus / 4);
		else if (proto == LL128)
			bus = fmin(bus * (ppn < 2 ? 0.7 : 0.92), ch * ring_ll128_cap[gen]);
		ring_steps(kind, net->ranks, net->nodes, &steps, &cross);
		*ret_bw = bus * net->ranks / steps;
		*ret_lat = lat + (steps - cross) * fmax(intra, overhead) + cross * inter;
		return;
	}
	bus = fmin(bus * 0.92, ch * tree_cap[gen][big]);
	if (proto == LL)
		bus = fmin(bus / 3.8, llmax);
	else if (proto == LL128)
		bus = fmin(bus * 120.0 / 128.0, ch * tree_ll128_cap[gen][big]);
	*ret_bw = bus * 0.5;
	*ret_lat = lat + 2 * ((ppn - 1) * intra + log2_floor(net->nodes) * inter);
}

/* The time in µs of algo and proto for bytes, as ncclTopoGetAlgoTime() gives it. */
static double algo_time(const struct orr_nccl_net *net, enum orr_coll_kind kind, int algo,
			int proto, double bytes)
{
	double bw, lat;
	int size_log = log2_floor(bytes / 64);

	tune(net, kind, algo, proto, &bw, &lat);
	if (algo == ORR_NCCL_TREE && size_log < 23)
		bw *= tree_fix[proto][size_log];
	if (algo == ORR_NCCL_RING && proto == SIMPLE && kind == ORR_COLL_ALL_REDUCE &&
	    bytes / (net->channels * (double)net->ranks) >= 64)
		lat *= 1.4; /* 1.9 before Ampere; the table has no older GPU's network */
	return lat + bytes / (1000 * bw);
}

/*
 * The channels NCCL's search ends with: one of 25 GB/s or more is duplicated, each copy
 * at the speed divided by the copies (search.cc, ncclTopoCompute(): bwIntra >= 25, at
 * most MAXCHANNELS / 2 = 16 rings), so the per-channel caps bound twice the channels.
 */
static struct orr_nccl_net duplicated(const struct orr_nccl_net *net)
{
	struct orr_nccl_net n = *net;
	int dup = n.channels * 2 < 16 ? n.channels * 2 : 16;

	if (n.channel_gbps >= 25.0 && dup > n.channels) {
		n.channel_gbps /= (dup + n.channels - 1) / n.channels;
		n.channels = dup;
	}
	return n;
}

int orr__nccl_net_time(const struct orr_nccl_net *net, enum orr_coll_kind kind, double bytes,
		       struct orr_nccl_choice *ret)
{
	struct orr_nccl_choice best = { .ns = INFINITY };
	int algos = kind == ORR_COLL_ALL_REDUCE ? 2 : 1;
	struct orr_nccl_net n;

	if (!net || net->nodes < 2 || net->ranks < net->nodes || net->channels < 1 ||
	    !(net->channel_gbps > 0) || !(bytes >= 0) || !isfinite(bytes) ||
	    (kind != ORR_COLL_ALL_REDUCE && kind != ORR_COLL_ALL_GATHER &&
	     kind != ORR_COLL_REDUCE_SCATTER))
		return -EINVAL;
	n = duplicated(net);
	for (int a = 0; a < algos; a++)
		for (int p = LL; p <= SIMPLE; p++) {
			double us = algo_time(&n, kind, a, p, bytes);

			if (us * 1e3 < best.ns)
				best = (struct orr_nccl_choice){
					.algo = (enum orr_nccl_algo)a,
					.proto = (enum orr_nccl_proto)p,
					.ns = us * 1e3,
				};
		}
	*ret = best;
	return 0;
}

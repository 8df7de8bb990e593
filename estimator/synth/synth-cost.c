/* SPDX-License-Identifier: MIT */
/*
 * What each synthesized task costs.  A GEMM asks the GEMM model without a kernel
 * family: cuBLAS picks the kernel by shape, so the family of a shape never run is
 * unknown, and a class's fit (a plane in FLOPs and bytes over a few traced shapes) is
 * no guide far outside those shapes; the model's fallback is the roofline times the
 * measured efficiency of the precision's fitted GEMMs.  Other kernels ask the kernel model by class alone (its roofline x the class's measured
 * efficiency, at least its launch floor).  Collectives ask a constrained model of their
 * kind and link, else take a bus bandwidth measured on the trace, else the hardware
 * table's link.  Without any model every time is the hardware table's peak: a lower
 * bound, and the sources say so.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "../internal.h"
#include "synth.h"
#include "banned.h"

double orr__sy_gemm_ns(struct sy_job *j, int64_t batch, int64_t m, int64_t n, int64_t k)
{
	const struct orr_gemm_model *gm = j->k->m.gemm;
	struct orr_gemm_sample q = {
		.dtype = j->gemm_dtype,
		.math = j->gemm_dtype,
		.elem_bytes = j->gemm_elem_bytes,
		.batch = batch,
		.m = m,
		.n = n,
		.k = k,
	};
	enum orr_gemm_how how = ORR_GEMM_NONE;
	double ns = NAN;

	q.flops = 2.0 * (double)batch * (double)m * (double)n * (double)k;
	q.bytes = (double)j->gemm_elem_bytes * (double)batch *
		  ((double)m * (double)k + (double)k * (double)n + (double)m * (double)n);
	if (gm && j->k->gemm_tiles && gm->tiles.gpu) {
		ns = orr_gemm_tiles_time(&gm->tiles, &q);
		if (ns > 0) {
			j->ret->sources.gemm_tiles++;
			return fmax(ns, orr_gemm_roofline_ns(j->k->gpu, j->gemm_dtype, q.flops,
							     q.bytes));
		}
	}
	if (gm)
		ns = orr_gemm_model_time(gm, &q, &how); /* no family: the roofline fallback */
	if (!(ns > 0)) {
		j->ret->sources.gemm_peak++;
		return orr_gemm_roofline_ns(j->k->gpu, j->gemm_dtype, q.flops, q.bytes);
	}
	if (how == ORR_GEMM_FIT)
		j->ret->sources.gemm_fit++;
	else if (how == ORR_GEMM_ROOFLINE && orr_gemm_model_memory_bound(gm, &q))
		j->ret->sources.gemm_memory++;
	else
		j->ret->sources.gemm_roofline++;
	return ns;
}

double orr__sy_kern_ns(struct sy_job *j, enum orr_kern_class cls, double bytes, double flops)
{
	const struct orr_kern_model *km = j->k->m.kern;
	struct orr_kern_sample q = { .cls = cls, .dtype = j->dtype, .bytes = bytes, .flops = flops };
	enum orr_gemm_how how = ORR_GEMM_NONE;
	double ns = km ? orr_kern_model_time(km, &q, &how) : NAN;

	if (!(ns > 0)) {
		j->ret->sources.kern_peak++;
		return orr_gemm_roofline_ns(j->k->gpu, j->dtype, flops, bytes);
	}
	if (how == ORR_GEMM_FIT)
		j->ret->sources.kern_fit++;
	else
		j->ret->sources.kern_roofline++;
	return ns;
}

struct sy_span orr__sy_span(const struct sy_job *j, int64_t first, int64_t stride, int64_t n)
{
	int64_t gpn = j->gpus_per_node, last = first + (n - 1) * stride;
	int64_t room = gpn - first % gpn; /* GPUs of the first node from it on */
	int64_t per = stride >= gpn ? 1 : (room + stride - 1) / stride;

	return (struct sy_span){
		.link = first / gpn == last / gpn ? ORR_LINK_NODE : ORR_LINK_NETWORK,
		.per_node = (int)(per < n ? per : n),
	};
}

static const struct orr_coll_model *coll_model(const struct sy_job *j, enum orr_coll_kind kind,
					       enum orr_link link)
{
	const struct orr_coll_model *m = j->k->m.coll[kind][link];

	/* a trace of one node cannot tell its links: its models are the node's */
	if (!m && link == ORR_LINK_NODE)
		m = j->k->m.coll[kind][ORR_LINK_UNKNOWN];
	return m && m->constrained ? m : NULL;
}

/*
 * A group across nodes: NCCL builds a ring (or tree) per NIC, so the members that share
 * a node move their traffic over that many NICs at once (nccl-tests' bus bandwidth of
 * two DGX nodes is their NICs', not one GPU's); never above the node's own link.
 */
/* The network per GPU: --nic-gbps's, else the hardware table's reference node's. */
static double nic_of(const struct sy_job *j)
{
	return j->k->m.nic_bytes_per_s > 0 ? j->k->m.nic_bytes_per_s : j->k->gpu->nic_bytes_per_s;
}

static double network_bytes_per_s(const struct sy_job *j, struct sy_span sp)
{
	const struct orr_gpu_spec *gpu = j->k->gpu;
	double bw = nic_of(j) * sp.per_node;

	return gpu->link_bytes_per_s > 0 && bw > gpu->link_bytes_per_s ? gpu->link_bytes_per_s : bw;
}

/*
 * NCCL's own model of a group across nodes (nccl-model.c) on the hardware table's
 * reference node, one NIC per GPU (of nic_of()'s rate): a channel per member on a node,
 * each at the speed NCCL's search gives the NIC, their sum never above the GPU's own
 * link.  The node's
 * CPU sets NCCL's network overhead: the DGX A100's is AMD's (two EPYC 7742, its user
 * guide), the other reference nodes' Intel's.  0 where the model does not apply.
 */
static double nccl_net_ns(const struct sy_job *j, enum orr_coll_kind kind, double bytes, int group,
			  struct sy_span sp)
{
	const struct orr_gpu_spec *gpu = j->k->gpu;
	struct orr_nccl_net net = {
		.ranks = group,
		/* rounded up without group + per_node overflowing (a dp of 2^31 - 1) */
		.nodes = group > 0 && sp.per_node > 0 ? (group - 1) / sp.per_node + 1 : 0,
		.channels = sp.per_node,
		.channel_gbps = j->net.channel_gbps,
		.hopper = j->net.hopper,
		.amd_cpu = j->net.amd_cpu,
	};
	struct orr_nccl_choice c;

	if (!(nic_of(j) > 0))
		return 0;
	if (gpu->link_bytes_per_s > 0 &&
	    net.channels * net.channel_gbps * 1e9 > gpu->link_bytes_per_s)
		net.channels = (int)fmax(1, floor(gpu->link_bytes_per_s / 1e9 / net.channel_gbps));
	return orr__nccl_net_time(&net, kind, bytes, &c) == 0 ? c.ns : 0;
}

void orr__sy_net_init(struct sy_job *j)
{
	const struct orr_gpu_spec *gpu = j->k->gpu;

	j->net.hopper = gpu->peak_flops[ORR_DTYPE_FP8] > 0;
	j->net.amd_cpu = gpu->source && strstr(gpu->source, "DGX A100");
	j->net.channel_gbps = orr__nccl_channel_gbps(nic_of(j), j->net.hopper);
}

double orr__sy_coll_ns(struct sy_job *j, enum orr_coll_kind kind, double bytes, int group,
		       struct sy_span sp)
{
	enum orr_link link = sp.link;
	const struct orr_coll_model *m = coll_model(j, kind, link);
	const struct orr_gpu_spec *gpu = j->k->gpu;
	double f = kind == ORR_COLL_SEND_RECV ? 1 : orr_coll_bus_factor(kind, group);
	double bw;

	if (m) {
		double ns = orr_coll_model_time(m, bytes, group);

		if (ns > 0) {
			j->ret->sources.coll_fit++;
			return ns;
		}
	}
	bw = j->k->bus_bytes_per_s[kind][link];
	if (!(bw > 0) && link == ORR_LINK_NODE)
		bw = j->k->bus_bytes_per_s[kind][ORR_LINK_UNKNOWN];
	if (bw > 0) {
		j->ret->sources.coll_measured++;
	} else {
		double ns = link == ORR_LINK_NETWORK ? nccl_net_ns(j, kind, bytes, group, sp) : 0;

		j->ret->sources.coll_peak++;
		if (ns > 0)
			return ns;
		bw = link == ORR_LINK_NODE ? gpu->link_bytes_per_s : network_bytes_per_s(j, sp);
		if (!(bw > 0)) {
			j->why =
				link == ORR_LINK_NODE
					? "the GPU's link bandwidth is unknown (hardware table)"
					: "the GPU's network bandwidth is unknown (hardware table)";
			j->err = -ENOTSUP;
			return 0;
		}
	}
	return bytes * f / bw * 1e9;
}

/* SPDX-License-Identifier: MIT */
/*
 * orrery/chakra.h — Chakra execution traces (MLCommons Chakra ET, the workload format
 * of ASTRA-sim): an execution graph written as one Chakra file per rank, and a Chakra
 * file read back (docs/chakra.md).
 *
 * A Chakra file is a varint32-length-prefixed GlobalMetadata message followed by one
 * length-prefixed Node message per node; the writer and the reader use protobuf-c
 * with chakra/chakra.proto.  Node types and collective types carry Chakra's numbers.
 *
 * Ownership: a read file (struct orr_chakra) owns its nodes and strings until
 * orr_chakra_free().  Errors: 0 or a negative code (-errno or ORR_E*) with a diag.
 * Thread safety: none shared; distinct calls may run on distinct threads.
 */
#ifndef ORRERY_CHAKRA_H
#define ORRERY_CHAKRA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/common.h"
#include "orrery/estimator.h"
#include "orrery/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Chakra's NodeType. */
enum orr_chakra_type {
	ORR_CHAKRA_INVALID = 0,
	ORR_CHAKRA_METADATA = 1,
	ORR_CHAKRA_MEM_LOAD = 2,
	ORR_CHAKRA_MEM_STORE = 3,
	ORR_CHAKRA_COMP = 4,
	ORR_CHAKRA_SEND = 5,
	ORR_CHAKRA_RECV = 6,
	ORR_CHAKRA_COLL = 7,
};

/* Chakra's CollectiveCommType. */
enum orr_chakra_coll {
	ORR_CHAKRA_ALL_REDUCE = 0,
	ORR_CHAKRA_REDUCE = 1,
	ORR_CHAKRA_ALL_GATHER = 2,
	ORR_CHAKRA_GATHER = 3,
	ORR_CHAKRA_SCATTER = 4,
	ORR_CHAKRA_BROADCAST = 5,
	ORR_CHAKRA_ALL_TO_ALL = 6,
	ORR_CHAKRA_REDUCE_SCATTER = 7,
	ORR_CHAKRA_REDUCE_SCATTER_BLOCK = 8,
	ORR_CHAKRA_BARRIER = 9,
};

/* One node as read: its fields, and the attributes a simulator reads (Chakra's names). */
struct orr_chakra_node {
	uint64_t id;
	const char *name; /* never NULL */
	int type;         /* enum orr_chakra_type, or another number as written */
	const uint64_t *ctrl_deps, *data_deps;
	size_t nctrl_deps, ndata_deps;
	uint64_t start_us, dur_us;            /* start_time_micros, duration_micros */
	int is_cpu_op;                        /* 1, 0, or -1 when absent */
	int64_t comm_type;                    /* enum orr_chakra_coll, -1 when absent */
	int64_t comm_size;                    /* bytes, -1 when absent */
	int64_t comm_src, comm_dst, comm_tag; /* -1 when absent */
	const char *pg_name;                  /* NULL when absent */
	/* orrery's own exact times (attributes orr_dur_ns, orr_gap_ns), -1 when absent */
	int64_t dur_ns, gap_ns;
	size_t nattrs; /* every attribute, read above or not */
};

struct orr_chakra {
	const char *version; /* GlobalMetadata.version; "" when not set */
	const char *schema;  /* its "schema" attribute, NULL when absent */
	int64_t rank;        /* its "rank" attribute (orrery's), -1 when absent */
	struct orr_chakra_node *nodes;
	size_t nnodes;
};

/*
 * Reads one Chakra file from data[0..len) (not compressed); name is for messages.  A
 * length prefix past the end or over 5 bytes, a message that does not decode are
 * ORR_EMALFORMED with the byte offset; more than 64 Mi nodes ORR_ETOOBIG; a zero length
 * ends the file, as Chakra's own reader takes it.
 */
int orr_chakra_read(const char *name, const void *data, size_t len, struct orr_chakra **ret,
		    struct orr_diag *reterr_diag);
/*
 * The same from a file, plain or gzip-compressed: at most 4 GiB decompressed, and past
 * 64 MiB at most 1,000 times the file.
 */
int orr_chakra_read_file(const char *path, struct orr_chakra **ret, struct orr_diag *reterr_diag);
void orr_chakra_free(struct orr_chakra *c);

/* What a written rank holds. */
struct orr_chakra_stats {
	uint64_t nodes, comp_cpu, comp_gpu, coll, send, recv;
	uint64_t data_deps;
	uint64_t waits; /* calls after a blocking call given deps on the GPU work it awaited */
	uint64_t comm_unsized;   /* collectives written without a comm_size */
	uint64_t comm_by_caller; /* ... sized by the op that called them (orr_coll_observe()) */
	uint64_t comm_as_comp;   /* communication kernels of unknown kind written as COMP */
};

/*
 * Writes rank `rank` (an index into g's ranks) of g as a Chakra file at path (created
 * or replaced): one node per task (docs/chakra.md says how each is made), producer
 * names the writer in the metadata.  obs (may be NULL) sizes the collectives the trace
 * gives no size for, as orr_coll_observe() made them for g: every member of an
 * instance gets its size.  stats may be NULL.
 */
int orr_chakra_write_rank(const struct orr_graph *g, size_t rank, const char *path,
			  const char *producer, const struct orr_coll_obs *obs, size_t nobs,
			  struct orr_chakra_stats *stats, struct orr_diag *reterr_diag);
/*
 * Writes every rank of g as dir/trace.R.et (R its global rank; dir exists), the
 * collectives sized by one orr_coll_observe() of g for all ranks, as orrery convert
 * --to chakra writes a job; stats (may be NULL) summed over the ranks.  Stops at the
 * first rank that fails, its index in *reterr_rank.
 */
int orr_chakra_write_graph(const struct orr_graph *g, const char *dir, const char *producer,
			   struct orr_chakra_stats *stats, size_t *reterr_rank,
			   struct orr_diag *reterr_diag);

#ifdef __cplusplus
}
#endif

#endif

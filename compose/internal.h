/* SPDX-License-Identifier: MIT */
/*
 * compose/internal.h — what the plan builder (plan.c, plan-sync.c) hands the writer
 * (write.c, args.c).
 */
#ifndef ORRERY_COMPOSE_INTERNAL_H
#define ORRERY_COMPOSE_INTERNAL_H

#include "orrery/compose.h"
#include "orrery/trace.h"

enum citem_kind { CI_OP, CI_COMM, CI_FILL, CI_SYNC, CI_RECORD, CI_WAIT };

/* One step of a plan, in the order the CPU issued it. */
struct citem {
	int64_t cpu_ns;   /* when the CPU issued it (an op's start, a call's start) */
	int64_t gpu_ns;   /* GPU time of the trace it stands for */
	int64_t dur_ns;   /* COMM, FILL: the measured duration of its task */
	int64_t wait_ns;  /* COMM: the part of it spent waiting for its peers */
	int64_t stream;   /* recorded stream id; -1: the current one */
	int64_t from;     /* COMM: the stream whose work it waited for (D4), -1 */
	uint32_t event;   /* OP: its op event; COMM, FILL: its GPU event; SYNC: the call */
	uint32_t place;   /* the CPU thread that issued it */
	uint32_t ev;      /* RECORD, WAIT: the event's number; SYNC: 1 device, 0 stream */
	uint32_t region;  /* --repeat region instance, or ORR_NONE */
	uint32_t regions; /* ... and its repeat count */
	uint32_t task;    /* COMM: its GPU task in the graph */
	bool keep;        /* inside --subgraph (true without it) */
	bool comm;        /* RECORD: of a collective's end; WAIT: before a collective */
	uint8_t kind;     /* enum citem_kind */
};

struct crank {
	const struct orr_rank *r;
	size_t grank; /* index into the graph's ranks */
	struct orr_compose_rank st;
	int64_t start_ns, end_ns; /* the step's window */
	struct citem *items;
	size_t nitems, cap;
	uint32_t *et_of_event; /* per event: the ET node giving its arguments, or ORR_NONE */
	struct orr__compose_lists *lists; /* lists of tensors without an ET (lists.c) */
	uint32_t nevents_waited;
};

struct orr_compose {
	const struct orr_graph *g;
	struct orr_compose_options o;
	struct crank *ranks;
	size_t nranks;
	uint8_t *comm_ok; /* per graph task: a collective every member runs (plan.c) */
	struct orr_compose_missing *missing;
	size_t nmissing, cap_missing;
	struct orr_strtab *strs; /* reasons */
};

/* Where event e ends. */
static inline int64_t orr__compose_end(const struct orr_event *e)
{
	return orr_time_add(e->start_ns, e->dur_ns);
}

/*
 * The step to compose and the one whose execution trace gives the operators'
 * arguments (*ret_args, -1 without one): plan-step.c.
 */
int orr__compose_choose_step(const struct orr_compose *c, int64_t *ret, int64_t *ret_args,
			     struct orr_diag *d);
/* Rank cr's window of step `step` (and, with an ET, of its ops), or an error. */
int orr__compose_rank_window(const struct orr_compose *c, struct crank *cr, int64_t step,
			     struct orr_diag *d);
/* The ET node of each of r's events, ORR_NONE where none: malloc'ed. */
uint32_t *orr__compose_et_links(const struct orr_rank *r);
/* Every rank's step *step with the ET arguments of step args, or *step = args. */
void orr__compose_map_ranks(struct orr_compose *c, int64_t args, int64_t *step);

/* The stream GPU task `task` of the graph ran on. */
int64_t orr__compose_stream(const struct orr_graph *g, const struct orr_rank *r, uint32_t task);
/* Adds GPU tasks and their time to the missing entry (name, reason). */
void orr__compose_missing(struct orr_compose *c, const char *name, const char *reason,
			  uint64_t tasks, int64_t gpu_ns);
/* Cross-stream records and waits (D4) and their events; then --repeat and the filters. */
void orr__compose_sync(struct orr_compose *c, struct crank *cr, const uint32_t *item_of_task);
/*
 * Why op event e of cr is not one bench.py may call (its name, namespace or overload),
 * or NULL.
 */
const char *orr__compose_refused(const struct orr_compose *c, const struct crank *cr, uint32_t e);
/* Why op event e of cr cannot be rebuilt (orr__compose_refused() included), or NULL. */
const char *orr__compose_unbuildable(const struct orr_compose *c, const struct crank *cr,
				     uint32_t e);

/*
 * Bounds on what a plan asks bench.py to allocate (docs/limits.md); bench.py --check
 * holds plans to the same.
 */
#define ORR_COMPOSE_MAX_DIMS         64
#define ORR_COMPOSE_MAX_TENSOR_BYTES ((int64_t)1 << 40)
#define ORR_COMPOSE_MAX_RANK_BYTES   ((int64_t)1 << 42)

/* True for a name bench.py may look up: [A-Za-z_][A-Za-z0-9_]*, at most 128 bytes. */
bool orr__compose_identifier(const char *s);
/*
 * Refuses a rank whose op items hold a tensor with a negative dimension, stride,
 * offset or element size, more than ORR_COMPOSE_MAX_DIMS dimensions or more than
 * ORR_COMPOSE_MAX_TENSOR_BYTES, or whose storages hold more than
 * ORR_COMPOSE_MAX_RANK_BYTES together; the diag names the execution trace node.
 */
int orr__compose_check_sizes(const struct orr_compose *c, const struct crank *cr,
			     struct orr_diag *reterr_diag);

/* The torch dtype name of a dtype as traces write it ("c10::BFloat16" -> "bfloat16"). */
const char *orr__compose_dtype(const char *name);

/*
 * concrete.c: a scalar's or scalar list's value as the profiler recorded it ("Concrete
 * Inputs": "1", "0.", "True", "[8, 1024]"), written to f as JSON when f is set; false,
 * with nothing written, when s is not such a value.
 */
bool orr__compose_concrete(FILE *f, const char *s, bool is_list);
/*
 * How a profiler-recorded input of an op without an execution trace is passed: a tensor,
 * a scalar or scalar list of the recorded value, or what the profiler recorded neither
 * (a string, a device, None: the schema's default, {"d": null} in the plan): true and
 * *ret; false when it cannot be, and *ret_why why not.
 */
enum orr__kineto_arg {
	ORR__KARG_TENSOR,
	ORR__KARG_SCALAR,
	ORR__KARG_LIST,
	ORR__KARG_DEFAULT,
	ORR__KARG_TENSORS /* a list of tensors of the recorded shapes, of dtype list_dtype */
};
bool orr__compose_kineto_arg(const struct orr_trace *t, const struct orr_input *in,
			     uint32_t list_dtype, enum orr__kineto_arg *ret, const char **ret_why);

/*
 * lists.c: the dtype of the members of op e's lists of tensors (interned, as traces
 * write it), from the element size its kernels are compiled for and the one dtype of
 * that size the rank recorded; ORR_STR_NONE when the trace does not show it.
 */
struct orr__compose_lists;
struct orr__compose_lists *orr__compose_lists_new(const struct orr_trace *t,
						  const struct orr_rank *r);
void orr__compose_lists_free(struct orr__compose_lists *l);
uint32_t orr__compose_list_dtype(const struct orr__compose_lists *l, const struct orr_trace *t,
				 const struct orr_event *e);
/* A list's members as struct orr_input holds them (count, then dims), each valid, one at least. */
bool orr__compose_list_members(const int64_t *v, uint32_t n);

/* allow.c: how deep a value's lists nest in a plan, at most. */
#define ORR_COMPOSE_MAX_VALUE_DEPTH 16
/* The dtype of an ET tensor type, "Tensor(c10::BFloat16)"; NULL when unknown. */
const char *orr__compose_et_dtype(const char *type);
/* An ET type that is a CUDA stream (bench.py passes the stream the op runs on). */
bool orr__compose_stream_type(const char *type);
/* An undefined tensor (an optional one not given). */
bool orr__compose_undefined(const char *type);
/*
 * The overload of op name in its ET schema: its offset and length there (0 for the
 * default one); false when the schema is not of that op.
 */
bool orr__compose_overload_of(const char *name, const char *schema, size_t *ret_at, size_t *ret_n);

/*
 * The tensors and storages of one rank's ops (args.c): an op item as JSON, then the
 * tables of what they referred to.
 */
struct cargs;
struct cargs *orr__compose_args_new(const struct orr_compose *c, const struct crank *cr);
void orr__compose_args_free(struct cargs *a);
void orr__compose_write_op(struct cargs *a, FILE *f, const struct citem *it);
void orr__compose_write_tables(struct cargs *a, FILE *f, uint64_t *ret_tensors,
			       uint64_t *ret_storages);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * orrery/trace.h — the in-memory trace model and its importers.
 *
 * A trace (a "run") holds ranks; a rank holds places (CPU threads and GPU streams)
 * and events on them.  Each event has a kind, a place, a start and duration in integer
 * nanoseconds, the CUDA correlation id (runtime call <-> GPU task), the framework's
 * external id (op <-> its calls), an interned name, and typed fields in side tables
 * chosen by its kind: tensor inputs of ops, bytes of copies, the collective of ops
 * and kernels, the CUDA event and streams of sync records.
 *
 * Ownership: the trace owns everything reachable from it; struct orr_rank and the
 * arrays it points to are read-only views valid until orr_trace_free().  Names are
 * ids into the trace's one string table (orr_trace_str()).
 *
 * Errors: importers return 0 or a negative code (orr_strerror()) and fill the
 * struct orr_diag with the file, the byte offset or event index, and what was
 * expected.  A failed import leaves nothing behind.
 *
 * Thread safety: a trace is immutable after import and may be read from any thread.
 */
#ifndef ORRERY_TRACE_H
#define ORRERY_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ORR_NONE UINT32_MAX /* "no side-table entry" */

enum orr_event_kind {
	ORR_EVENT_OP,         /* framework operator (Kineto cpu_op) */
	ORR_EVENT_ANNOTATION, /* user annotation, incl. ProfilerStep#N */
	ORR_EVENT_RUNTIME,    /* CUDA runtime API call */
	ORR_EVENT_DRIVER,     /* CUDA driver API call */
	ORR_EVENT_KERNEL,
	ORR_EVENT_MEMCPY,
	ORR_EVENT_MEMSET,
	ORR_EVENT_SYNC,       /* GPU-side synchronization record (Kineto cuda_sync) */
	ORR_EVENT_CUDA_EVENT, /* CUDA event record on the GPU (Kineto cuda_event) */
	ORR_EVENT_MARKER,     /* instant event */
	ORR_EVENT_KIND_COUNT
};

/* What a runtime or driver call does, from its name (event.sub of RUNTIME/DRIVER). */
enum orr_call {
	ORR_CALL_OTHER,
	ORR_CALL_LAUNCH,       /* kernel launch: cudaLaunchKernel(ExC), cuLaunchKernel(Ex), ... */
	ORR_CALL_GRAPH_LAUNCH, /* cudaGraphLaunch / cuGraphLaunch */
	ORR_CALL_MEMCPY,       /* cudaMemcpy*, cuMemcpy* */
	ORR_CALL_MEMSET,       /* cudaMemset*, cuMemset* */
	ORR_CALL_EVENT_RECORD,
	ORR_CALL_STREAM_WAIT, /* cudaStreamWaitEvent */
	ORR_CALL_EVENT_SYNC,  /* cudaEventSynchronize */
	ORR_CALL_EVENT_QUERY,
	ORR_CALL_STREAM_SYNC,
	ORR_CALL_DEVICE_SYNC, /* cudaDeviceSynchronize, cuCtxSynchronize */
	ORR_CALL_COUNT
};

/* event.sub of SYNC records (Kineto cuda_sync_kind). */
enum orr_sync_kind {
	ORR_SYNC_UNKNOWN,
	ORR_SYNC_EVENT,       /* Event Sync */
	ORR_SYNC_STREAM_WAIT, /* Stream Wait Event */
	ORR_SYNC_STREAM,      /* Stream Sync */
	ORR_SYNC_CONTEXT,     /* Context Sync */
	ORR_SYNC_COUNT
};

enum orr_place_kind { ORR_PLACE_THREAD, ORR_PLACE_STREAM };

struct orr_place {
	int64_t pid;    /* process id of a thread; device id of a stream */
	int64_t tid;    /* thread id, or stream id */
	uint32_t name;  /* thread name from metadata, or ORR_STR_NONE */
	int32_t device; /* -1 for threads */
	uint8_t kind;   /* enum orr_place_kind */
};

/* 56 bytes: the only per-event cost besides side tables. */
struct orr_event {
	int64_t start_ns;    /* absolute, on the rank's clock */
	int64_t dur_ns;      /* 0 for markers */
	int64_t correlation; /* CUDA correlation id, -1 when absent */
	int64_t external_id; /* framework external id, -1 when absent */
	uint32_t name;       /* interned */
	uint32_t place;      /* index into rank->places */
	uint32_t args;  /* index into the kind's table (ops/kernels/copies/syncs), or ORR_NONE */
	uint32_t coll;  /* index into rank->collectives, or ORR_NONE */
	uint8_t kind;   /* enum orr_event_kind */
	uint8_t sub;    /* enum orr_call (RUNTIME/DRIVER) or orr_sync_kind (SYNC) */
	uint16_t flags; /* ORR_EVENT_F_* */
};

#define ORR_EVENT_F_FLOW_LINKED 0x1 /* correlation came from an ac2g/async_cpu_to_gpu flow */

/*
 * Every imported time is within +-ORR_TIME_MAX ns (2^62 ns, about 146 years) of the
 * epoch: start_ns, dur_ns (0..ORR_TIME_MAX), start_ns + dur_ns and base_time_ns; an
 * import fails otherwise (docs/limits.md).  The sum of two such times fits in an
 * int64_t, and their difference but at the very ends; what adds up more (predicted
 * times, sums over events, scaled durations) saturates with orr_time_add/_sub().
 */
#define ORR_TIME_MAX (INT64_C(1) << 62)

/* a + b and a - b, clamped to [INT64_MIN, INT64_MAX] instead of overflowing. */
static inline int64_t orr_time_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t orr_time_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/*
 * One input of an op: dims[first_dim .. first_dim+ndims), strides[first_stride ..
 * first_stride+nstrides) (none when not recorded), dtype interned ("Scalar",
 * "ScalarList" for scalars; ORR_STR_NONE for what is neither a tensor nor a scalar).
 * A list of tensors (is_list) holds its members' shapes, when recorded, one after the
 * other, each as its number of dimensions then those: [2, 8, 1024, 1, 16] is an 8 x
 * 1024 tensor and one of 16; its strides likewise; ndims 0 when they were not recorded.
 */
struct orr_input {
	uint32_t first_dim;
	uint16_t ndims;
	uint8_t is_list;   /* a list of tensors (members as above) */
	uint8_t has_value; /* the profiler wrote its "Concrete Inputs" entry (even empty) */
	uint32_t dtype;    /* e.g. "float", "c10::BFloat16"; ORR_STR_NONE if unknown */
	/*
	 * A scalar's or scalar list's value as the profiler wrote it ("1", "0.", "True",
	 * "[8, 1024]"; PyTorch 2.1+ with record_shapes); ORR_STR_NONE for none or empty.
	 */
	uint32_t value;
	/* "Input Strides" (PyTorch 2.x, record_shapes), in elements */
	uint32_t first_stride;
	uint16_t nstrides;
};

struct orr_op_args {
	uint32_t first_input; /* into rank->inputs */
	uint32_t ninputs;
	int64_t sequence; /* autograd sequence number, -1 when absent */
};

/* A kernel's launch, as the profiler or CUPTI recorded it; 0 where unknown. */
struct orr_kernel_args {
	uint32_t grid[3], block[3]; /* x, y, z */
	uint32_t shared_bytes;      /* shared memory per block, static and dynamic */
	uint32_t registers;         /* per thread */
};

struct orr_copy_args {
	int64_t bytes; /* -1 when absent */
};

struct orr_sync_args {
	int64_t stream;            /* stream the call synchronizes, -1 for none */
	int64_t wait_on_stream;    /* stream the awaited event was recorded on, -1 */
	int64_t event_record_corr; /* correlation of the cudaEventRecord, -1 */
	int64_t event_id;          /* CUDA event id, -1 */
};

struct orr_collective {
	uint32_t type;      /* interned, as written: "allreduce", "nccl:all_reduce", ... */
	uint32_t dtype;     /* interned */
	uint32_t pg_name;   /* communicator / process group name, interned */
	uint32_t pg_desc;   /* interned */
	int64_t in_nelems;  /* -1 when absent */
	int64_t out_nelems; /* -1 when absent */
	int64_t in_bytes;   /* in_nelems * element size, -1 when unknown */
	int64_t out_bytes;
	int64_t sequence;   /* collective sequence number within the group, -1 */
	int32_t group_size; /* -1 */
	int32_t src_rank;   /* point-to-point: -1 */
	int32_t dst_rank;
	uint32_t first_member; /* into rank->members */
	uint32_t nmembers;
};

/* A communicator from distributedInfo.pg_config. */
struct orr_comm {
	uint32_t name, desc, backend;
	int32_t size;
	uint32_t first_member, nmembers; /* into rank->members */
};

struct orr_device {
	int32_t id;
	uint32_t name;
	int32_t num_sms;
	int32_t compute_major, compute_minor;
	int64_t total_mem_bytes;
};

struct orr_skipped {
	uint32_t category; /* interned "cat" (or "ph:X") */
	uint64_t count;
};

/*
 * How an args value of another type than the format's was taken: an integer written as
 * a decimal or hexadecimal string ("2560", "0x0") is read as that integer; any other
 * value (null, a fraction, text, a list) is ignored for its event.  Per key and way,
 * counted (orrery info lists them); structural errors stay errors.
 */
enum orr_coercion { ORR_COERCED_STRING, ORR_COERCED_HEX, ORR_COERCION_IGNORED };

/*
 * The CUDA caching allocator's totals on a device after an allocation or a free (the
 * PyTorch profiler's "[memory]" instant events, profile_memory=True).
 */
struct orr_mem_sample {
	int64_t ts_ns;
	int64_t allocated_bytes; /* "Total Allocated": in tensors */
	int64_t reserved_bytes;  /* "Total Reserved": held by the allocator; -1 unknown */
	int32_t device;          /* CUDA device index; -1 unknown */
	uint32_t place;          /* the "[memory]" marker's, into rank->places */
};

/*
 * A counter's value at a time: a Chrome trace-event counter ("ph": "C", e.g. GPU
 * metrics), one sample per series (args key) of the event.
 */
struct orr_counter_sample {
	int64_t ts_ns;
	double value;
	uint32_t name;   /* interned: the event's name */
	uint32_t series; /* interned: the args key */
	uint32_t place;  /* the event's process (and thread), into rank->places */
};

struct orr_coerced {
	uint32_t key; /* interned args key, e.g. "stream" */
	uint32_t how; /* enum orr_coercion */
	uint64_t count;
};

struct orr_rank {
	int32_t rank;       /* global rank */
	int32_t world_size; /* -1 when unknown */
	uint32_t source;    /* interned file (and archive member) name */
	uint32_t backend;   /* distributedInfo.backend, interned */
	int64_t base_time_ns;

	const struct orr_place *places;
	size_t nplaces;
	/* Sorted by start, longer first, then place, then input order. */
	const struct orr_event *events;
	size_t nevents;

	const struct orr_op_args *ops;
	size_t nops;
	const struct orr_input *inputs;
	size_t ninputs;
	const int64_t *dims;
	size_t ndims;
	const int64_t *strides; /* the inputs' strides, as dims holds their shapes */
	size_t nstrides;
	const struct orr_kernel_args *kernels;
	size_t nkernels;
	const struct orr_copy_args *copies;
	size_t ncopies;
	const struct orr_sync_args *syncs;
	size_t nsyncs;
	const struct orr_collective *collectives;
	size_t ncollectives;
	const int32_t *members;
	size_t nmembers;
	const struct orr_comm *comms;
	size_t ncomms;
	const struct orr_device *devices;
	size_t ndevices;
	const struct orr_skipped *skipped; /* categories not in the model, with counts */
	size_t nskipped;
	const struct orr_coerced *coerced; /* args values of unexpected types, by key and way */
	size_t ncoerced;
	uint64_t nflows; /* ac2g / async_cpu_to_gpu flow endpoints read */

	/* What a native file says about its process; unknown (as here) for Kineto input. */
	uint32_t host;          /* interned; ORR_STR_NONE when unknown */
	uint32_t producer;      /* interned, e.g. "orrery-tracer 0.1.0"; ORR_STR_NONE */
	uint32_t clock_source;  /* interned, e.g. "CLOCK_REALTIME"; ORR_STR_NONE */
	int64_t pid;            /* -1 */
	int32_t local_rank;     /* -1 */
	uint32_t cupti_version; /* 0 */
	/* 0 when unknown */
	int32_t cuda_driver_version, cuda_runtime_version;
	/* Activity records the capture lost, and events the tracer could not store. */
	uint64_t dropped_records, dropped_events;
	/* The recorded step window; -1 when not windowed. */
	int64_t first_step, last_step;
	/*
	 * The CUDA caching allocator's largest totals over the capture, from the profiler's
	 * "[memory]" events (profile_memory=True) on a CUDA device; -1 when none.
	 */
	int64_t mem_peak_allocated_bytes, mem_peak_reserved_bytes;
	/* Those events' totals one by one, in time order (the peaks are their maxima). */
	const struct orr_mem_sample *mems;
	size_t nmems;
	/* Counter samples, by name, series and time. */
	const struct orr_counter_sample *counters;
	size_t ncounters;
	bool truncated; /* the file was cut short: the events of its complete frames only */
	/* Ops the PyTorch profiler gave a "Call stack" (with_stack) or "flops" (with_flops). */
	uint64_t ops_with_stack, ops_with_flops;
	/* The PyTorch execution trace of this rank's step, linked to its ops; NULL if none. */
	const struct orr_et *et;
};

/* ---- PyTorch execution traces (traces/et/) ---- */

enum orr_et_kind {
	ORR_ET_NONE,   /* None */
	ORR_ET_TENSOR, /* Tensor(dtype): ids, offset, elements, element size, device */
	ORR_ET_INT,    /* Int, and integers of other types (ScalarType, Layout, ...) */
	ORR_ET_DOUBLE,
	ORR_ET_BOOL,
	ORR_ET_STRING, /* String, Device, and strings of other types */
	ORR_ET_LIST,   /* GenericList[...], TensorList, Tuple[...]: elements follow */
	ORR_ET_OTHER,  /* anything else, kept by its type only */
};

/* One input or output of a node, or one element of a list. */
struct orr_et_value {
	uint32_t type; /* interned, as written: "Tensor(float)", "Int", "GenericList[Int,Int]" */
	uint8_t kind;  /* enum orr_et_kind */
	uint32_t first_dim, ndims;       /* the shape, into the ET's dims; none for scalars */
	uint32_t first_stride, nstrides; /* the strides, when the trace has them */
	uint32_t first_elem, nelems;     /* ORR_ET_LIST: values[first_elem ..] */
	/* ORR_ET_TENSOR, as ExecutionTraceObserver writes it */
	int64_t tensor_id, storage_id, offset, numel, itemsize;
	uint32_t device; /* interned "cuda:0"; ORR_STR_NONE */
	int64_t i;       /* ORR_ET_INT, ORR_ET_BOOL */
	double d;        /* ORR_ET_DOUBLE */
	uint32_t str;    /* ORR_ET_STRING, interned */
};

struct orr_et_node {
	int64_t id, parent; /* parent: the node this one ran inside ("parent", "ctrl_deps") */
	int64_t rf_id, fw_parent, seq_id, tid, fw_tid;
	int32_t scope;
	uint32_t name, op_schema; /* interned; op_schema ORR_STR_NONE for annotations */
	uint32_t first_input, ninputs, first_output, noutputs; /* into values */
	uint32_t event; /* the rank's op or annotation event it is linked to, or ORR_NONE */
	/* record_param_comms in 1.1.x schemas (attrs): the collective and its group */
	uint32_t coll_name, pg_name; /* interned; ORR_STR_NONE */
	int32_t pg_size;             /* -1 */
};

/* A process group of "## process_group:init ##" (PyTorch's pg_config). */
struct orr_et_group {
	uint32_t name, desc, backend; /* interned: "0", "default_pg", "cuda:nccl" */
	int32_t size;
	uint32_t first_rank, nranks; /* into the ET's group_ranks; none: every rank */
};

struct orr_et {
	uint32_t source; /* interned file name */
	uint32_t schema; /* interned: "1.0.1", "1.1.0-chakra.0.0.4" */
	int64_t pid, start_ts, finish_ts;
	/*
	 * In the file's order: ExecutionTraceObserver writes a node when its op ends, so a
	 * node comes after those it called; ids are given as the ops start.
	 */
	const struct orr_et_node *nodes;
	size_t nnodes;
	const struct orr_et_value *values;
	size_t nvalues;
	const int64_t *dims; /* shapes and strides */
	size_t ndims;
	const struct orr_et_group *groups;
	size_t ngroups;
	const int32_t *group_ranks;
	size_t ngroup_ranks;
	/* The link with the rank's profiler trace (docs/inputs.md) */
	size_t ops;      /* nodes that stand for an op or annotation (not the root ones) */
	size_t linked;   /* ... linked to one of the rank's events */
	size_t rank_ops; /* the rank's op and annotation events in the ET's span */
	bool exact;      /* every one of both linked, one to one in order */
	/*
	 * The linked events' span: the first's start, the last's end (a start and 1 ns for
	 * one of no duration; 0, 0 when none), where the observer was recording.
	 */
	int64_t linked_from_ns, linked_to_ns;
	size_t sized; /* collective kernels given their size by the ET */
};

struct orr_trace;

struct orr_import_options {
	/*
	 * Limits (docs/limits.md); 0 takes the environment variable (ORR_MAX_FILE_BYTES,
	 * ORR_MAX_RUN_BYTES, ORR_MAX_EVENTS, ORR_MAX_RANKS, ORR_MAX_PLACES,
	 * ORR_MAX_STRING_BYTES, ORR_MAX_DEPTH, ORR_MAX_RATIO), else the default.  Passing
	 * one fails with ORR_ETOOBIG and a diag naming the limit.
	 */
	uint64_t max_bytes;        /* decompressed bytes per file; 4 GiB */
	uint64_t max_run_bytes;    /* decompressed bytes of all files together; 256 GiB */
	uint64_t max_events;       /* events per rank; 64 Mi */
	uint64_t max_ranks;        /* ranks; 65,536 */
	uint64_t max_places;       /* threads and streams per rank; 65,536 */
	uint64_t max_string_bytes; /* one string, or one run of JSON whitespace; 1 MiB */
	uint64_t max_depth;        /* JSON nesting; 1,024 */
	uint64_t max_ratio;        /* decompressed / compressed, past 64 MiB; 1,000 */
	/* Called between files and every 64 MiB of input, from the importing thread. */
	void (*progress)(void *data, const char *file, uint64_t done_bytes);
	void *progress_data;
	/*
	 * Called, when set, for what the import survives: a native file cut short (its
	 * complete frames are kept).  msg names the file and the byte offset.
	 */
	void (*warn)(void *data, const char *msg);
	void *warn_data;
	/*
	 * When set, the steps are the annotations (NVTX or record_function ranges) whose
	 * name matches this fnmatch(3) pattern, e.g. Megatron's "iteration*": each rank's
	 * become ProfilerStep#1, #2, ... in start order, and its own ProfilerStep#N
	 * annotations, if any, are dropped.
	 */
	const char *step_range;
	/*
	 * When set, what ranks' sources, messages and progress call the file at PATH (e.g.
	 * "standard input" for a copy of it); NULL: its path.  Not for a directory.
	 */
	const char *name;
	/*
	 * When set, PyTorch execution traces to attach to the ranks (a file, a directory of
	 * per-rank files, an archive): each pairs with the rank its name says (rank-3, or
	 * the only rank), and is linked to its ops (docs/inputs.md).  Execution traces
	 * found beside the profiler's files in PATH itself pair the same way.
	 */
	const char *et_path;
};

/*
 * Reads PATH: a Kineto JSON file (.json, .json.gz, .json.zst) or a native file (.orr,
 * orrery/native.h), a directory of per-rank files (a run directory's manifest.json is
 * skipped), or a .tar / .tar.gz / .tar.zst of them.  Ranks come from distributedInfo.rank
 * or the native header, else from the file name (rank-3, rank3, worker3).  A Chrome file
 * of several ranks (orr_trace_write_chrome()) gives its ranks; one whose processes are
 * named after several ranks without saying which is which fails with ORR_ERANK.  Only
 * regular files and directories are read (a FIFO fails at once); names starting with '.'
 * in directories and archives are skipped.  opts may be NULL.
 */
int orr_trace_import(const char *path, const struct orr_import_options *opts,
		     struct orr_trace **ret_trace, struct orr_diag *reterr_diag);
/* The same for one file already in memory; NAME is used for ranks and messages. */
int orr_trace_import_buffer(const char *name, const void *data, size_t size,
			    const struct orr_import_options *opts, struct orr_trace **ret_trace,
			    struct orr_diag *reterr_diag);
/*
 * For an input that is not a file yet (standard input, before it is copied): what
 * orr_trace_import() would decide from a file starting with the N bytes at HEAD (whole:
 * they are all of it), named NAME in the diag.  0: a format orrery reads (the rest is
 * checked by the import); 1: cannot tell yet (under 512 bytes, or only whitespace so
 * far); or a negative code, as the import of such a file would fail (garbage, N past the
 * file limit).  *ret_max_bytes is the limit on one file's bytes (max_bytes, else
 * ORR_MAX_FILE_BYTES, else 4 GiB), set unless a limit variable is malformed.
 */
int orr_trace_check_head(const char *name, const void *head, size_t n, bool whole,
			 const struct orr_import_options *opts, uint64_t *ret_max_bytes,
			 struct orr_diag *reterr_diag);
void orr_trace_free(struct orr_trace *t);

size_t orr_trace_rank_count(const struct orr_trace *t);
/* Ranks in increasing rank order; i < orr_trace_rank_count(). */
const struct orr_rank *orr_trace_get_rank(const struct orr_trace *t, size_t i);
const char *orr_trace_str(const struct orr_trace *t, uint32_t id);

const char *orr_event_kind_name(enum orr_event_kind kind);
const char *orr_call_name(enum orr_call call);
/* Classifies a runtime/driver API name. */
enum orr_call orr_call_classify(const char *name);
/* Element size of a dtype name as PyTorch writes it ("Float", "c10::BFloat16", ...); 0 if unknown. */
int orr_dtype_bytes(const char *name);
/*
 * The collective of an NCCL kernel name, demangled or not:
 * "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)" -> "AllReduce" (*ret_type, *ret_len
 * point into name).  False for other names.
 */
bool orr_nccl_kernel_type(const char *name, const char **ret_type, size_t *ret_len);

/*
 * Steps under DESIGN.md's definition.  Step k starts at its ProfilerStep#k annotation;
 * it ends where the next captured step starts; the last one ends at the later of its
 * annotation's end and the end of every GPU task launched inside it.  Without step
 * annotations the whole captured window is one step, numbered -1.
 */
struct orr_step {
	int64_t step;
	int64_t start_ns;
	int64_t end_ns;
};

/* "ProfilerStep#12" -> 12; -1 for any other name. */
int64_t orr_step_number(const char *name);

/* Steps of one rank, in order; *ret_steps is malloc'ed (free()). */
int orr_rank_steps(const struct orr_trace *t, const struct orr_rank *r, struct orr_step **ret_steps,
		   size_t *ret_n);
/*
 * Job steps: those captured on every rank; start = min start, end = max end over ranks.
 * *ret_steps is malloc'ed.
 */
int orr_trace_job_steps(const struct orr_trace *t, struct orr_step **ret_steps, size_t *ret_n);
/*
 * The index of the step of s[0..n) (in order, not overlapping: a rank's) that holds t
 * (start <= t < end), or -1.
 */
ptrdiff_t orr_step_index(const struct orr_step *s, size_t n, int64_t t_ns);

/*
 * Chrome trace-event JSON in Kineto's dialect (traces/chrome/chrome-write.c), for Perfetto and
 * for reading back: the file imports to the same model.  Every rank of t goes into one
 * file, or with _rank only r.  One rank is a Kineto file as torch.profiler writes it.
 * Several get processes of their own (distinct pids, named "rank R" and "rank R GPU D",
 * whose args say the rank and the process's own pid or device) and their Kineto headers
 * in a top-level "orreryRanks"; such a file reads back as those ranks.  Written as
 * orr_outfile_open() writes (a temporary renamed when complete, devices and FIFOs in
 * place); on failure nothing is left and reterr_diag names PATH.
 */
int orr_trace_write_chrome(const struct orr_trace *t, const char *path,
			   struct orr_diag *reterr_diag);
int orr_trace_write_chrome_rank(const struct orr_trace *t, const struct orr_rank *r,
				const char *path, struct orr_diag *reterr_diag);

#ifdef __cplusplus
}
#endif

#endif

/* SPDX-License-Identifier: MIT */
/* Names: event kinds, runtime/driver call classes, dtype sizes. */
#include <string.h>

#include "internal.h"
#include "banned.h"

const char *orr_event_kind_name(enum orr_event_kind kind)
{
	static const char *const names[ORR_EVENT_KIND_COUNT] = {
		[ORR_EVENT_OP] = "op",
		[ORR_EVENT_ANNOTATION] = "annotation",
		[ORR_EVENT_RUNTIME] = "runtime",
		[ORR_EVENT_DRIVER] = "driver",
		[ORR_EVENT_KERNEL] = "kernel",
		[ORR_EVENT_MEMCPY] = "memcpy",
		[ORR_EVENT_MEMSET] = "memset",
		[ORR_EVENT_SYNC] = "sync",
		[ORR_EVENT_CUDA_EVENT] = "cuda_event",
		[ORR_EVENT_MARKER] = "marker",
	};

	return (unsigned)kind < ORR_EVENT_KIND_COUNT ? names[kind] : "?";
}

const char *orr_call_name(enum orr_call call)
{
	static const char *const names[ORR_CALL_COUNT] = {
		[ORR_CALL_OTHER] = "other",
		[ORR_CALL_LAUNCH] = "launch",
		[ORR_CALL_GRAPH_LAUNCH] = "graph_launch",
		[ORR_CALL_MEMCPY] = "memcpy",
		[ORR_CALL_MEMSET] = "memset",
		[ORR_CALL_EVENT_RECORD] = "event_record",
		[ORR_CALL_STREAM_WAIT] = "stream_wait",
		[ORR_CALL_EVENT_SYNC] = "event_sync",
		[ORR_CALL_EVENT_QUERY] = "event_query",
		[ORR_CALL_STREAM_SYNC] = "stream_sync",
		[ORR_CALL_DEVICE_SYNC] = "device_sync",
	};

	return (unsigned)call < ORR_CALL_COUNT ? names[call] : "?";
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * Runtime ("cuda...", "hip...") and driver ("cu...") spellings; version suffixes (_v2,
 * _ptsz) pass.
 */
enum orr_call orr_call_classify(const char *name)
{
	static const struct {
		const char *prefix;
		enum orr_call call;
	} table[] = {
		{ "cudaGraphLaunch", ORR_CALL_GRAPH_LAUNCH },
		{ "cuGraphLaunch", ORR_CALL_GRAPH_LAUNCH },
		{ "cudaLaunch", ORR_CALL_LAUNCH },
		{ "__cudaLaunch", ORR_CALL_LAUNCH },
		{ "cuLaunch", ORR_CALL_LAUNCH },
		{ "cudaMemcpy", ORR_CALL_MEMCPY },
		{ "cuMemcpy", ORR_CALL_MEMCPY },
		{ "cudaMemset", ORR_CALL_MEMSET },
		{ "cuMemset", ORR_CALL_MEMSET },
		{ "cudaEventRecord", ORR_CALL_EVENT_RECORD },
		{ "cuEventRecord", ORR_CALL_EVENT_RECORD },
		{ "cudaStreamWaitEvent", ORR_CALL_STREAM_WAIT },
		{ "cuStreamWaitEvent", ORR_CALL_STREAM_WAIT },
		{ "cudaEventSynchronize", ORR_CALL_EVENT_SYNC },
		{ "cuEventSynchronize", ORR_CALL_EVENT_SYNC },
		{ "cudaEventQuery", ORR_CALL_EVENT_QUERY },
		{ "cuEventQuery", ORR_CALL_EVENT_QUERY },
		{ "cudaStreamSynchronize", ORR_CALL_STREAM_SYNC },
		{ "cuStreamSynchronize", ORR_CALL_STREAM_SYNC },
		{ "cudaDeviceSynchronize", ORR_CALL_DEVICE_SYNC },
		{ "cuCtxSynchronize", ORR_CALL_DEVICE_SYNC },
		/* HIP (PyTorch on ROCm), whose calls mirror CUDA's one for one */
		{ "hipGraphLaunch", ORR_CALL_GRAPH_LAUNCH },
		{ "hipLaunch", ORR_CALL_LAUNCH },
		{ "hipExtLaunch", ORR_CALL_LAUNCH },
		{ "hipModuleLaunch", ORR_CALL_LAUNCH },
		{ "hipExtModuleLaunch", ORR_CALL_LAUNCH },
		{ "hipMemcpy", ORR_CALL_MEMCPY },
		{ "hipMemset", ORR_CALL_MEMSET },
		{ "hipEventRecord", ORR_CALL_EVENT_RECORD },
		{ "hipStreamWaitEvent", ORR_CALL_STREAM_WAIT },
		{ "hipEventSynchronize", ORR_CALL_EVENT_SYNC },
		{ "hipEventQuery", ORR_CALL_EVENT_QUERY },
		{ "hipStreamSynchronize", ORR_CALL_STREAM_SYNC },
		{ "hipDeviceSynchronize", ORR_CALL_DEVICE_SYNC },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (starts(name, table[i].prefix))
			return table[i].call;
	return ORR_CALL_OTHER;
}

int orr_dtype_bytes(const char *name)
{
	static const struct {
		const char *name;
		int bytes;
	} table[] = {
		{ "Double", 8 },
		{ "Long", 8 },
		{ "ComplexFloat", 8 },
		{ "Float", 4 },
		{ "Int", 4 },
		{ "UInt32", 4 },
		{ "BFloat16", 2 },
		{ "Half", 2 },
		{ "Short", 2 },
		{ "Byte", 1 },
		{ "Char", 1 },
		{ "Bool", 1 },
		{ "Float8_e4m3fn", 1 },
		{ "Float8_e5m2", 1 },
		{ "double", 8 },
		{ "float", 4 },
		{ "int", 4 },
		{ "long int", 8 },
		/* C++ type names, as the profiler writes scalar types' storage */
		{ "bool", 1 },
		{ "unsigned char", 1 },
		{ "signed char", 1 },
		{ "short int", 2 },
		{ "long", 8 },
		{ "complex<float>", 8 },
		{ "complex<double>", 16 },
	};

	if (starts(name, "c10::"))
		name += 5;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(name, table[i].name) == 0)
			return table[i].bytes;
	return 0;
}

/* A word of a table, with its length: a trace's every event is looked up. */
struct word {
	const char *s;
	size_t len;
	int value;
};

#define WORD(s, value)                  \
	{                               \
		s, sizeof(s) - 1, value \
	}

static int lookup(const struct word *table, size_t n, const char *s, size_t len, int none)
{
	for (size_t i = 0; i < n; i++)
		if (table[i].len == len && memcmp(s, table[i].s, len) == 0)
			return table[i].value;
	return none;
}

int orr__kineto_kind(const char *cat, size_t len)
{
	static const struct word table[] = {
		WORD("cpu_op", ORR_EVENT_OP),
		WORD("operator", ORR_EVENT_OP),
		WORD("Operator", ORR_EVENT_OP), /* PyTorch 1.8-1.10 */
		WORD("user_annotation", ORR_EVENT_ANNOTATION),
		WORD("cuda_runtime", ORR_EVENT_RUNTIME),
		WORD("runtime", ORR_EVENT_RUNTIME),
		WORD("Runtime", ORR_EVENT_RUNTIME),
		WORD("cuda_driver", ORR_EVENT_DRIVER),
		WORD("kernel", ORR_EVENT_KERNEL),
		WORD("Kernel", ORR_EVENT_KERNEL),
		WORD("gpu_memcpy", ORR_EVENT_MEMCPY),
		WORD("Memcpy", ORR_EVENT_MEMCPY),
		WORD("gpu_memset", ORR_EVENT_MEMSET),
		WORD("Memset", ORR_EVENT_MEMSET),
		WORD("GPU Memcpy", ORR_EVENT_MEMCPY),
		WORD("GPU Memset", ORR_EVENT_MEMSET),
		WORD("cuda_sync", ORR_EVENT_SYNC),
		WORD("cuda_event", ORR_EVENT_CUDA_EVENT),
	};

	return lookup(table, sizeof(table) / sizeof(table[0]), cat, len, ORR_EVENT_KIND_COUNT);
}

enum orr_sync_kind orr__kineto_sync_kind(const char *s, size_t len)
{
	static const struct word table[] = {
		WORD("Event Sync", ORR_SYNC_EVENT),
		WORD("Stream Wait Event", ORR_SYNC_STREAM_WAIT),
		WORD("Stream Sync", ORR_SYNC_STREAM),
		WORD("Context Sync", ORR_SYNC_CONTEXT),
	};

	return (enum orr_sync_kind)lookup(table, sizeof(table) / sizeof(table[0]), s, len,
					  ORR_SYNC_UNKNOWN);
}

bool orr_nccl_kernel_type(const char *name, const char **ret_type, size_t *ret_len)
{
	static const char *const prefixes[] = { "ncclDevKernel_", "ncclKernel_" };

	for (size_t i = 0; i < 2; i++) {
		const char *p = strstr(name, prefixes[i]);

		if (p && (p == name || (p[-1] >= '0' && p[-1] <= '9') || p[-1] == ' ')) {
			p += strlen(prefixes[i]);
			/* Digits end it too: the mangled name goes on with the argument's length. */
			*ret_len = strcspn(p, "_(<0123456789");
			*ret_type = p;
			return *ret_len > 0;
		}
	}
	return false;
}

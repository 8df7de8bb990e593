/* SPDX-License-Identifier: MIT */
/*
 * bench-tracer: what the tracer costs per CUPTI record and per buffer, without a GPU
 * (bench/tracer-cost.sh drives it; docs/performance.md, "The tracer's cost").
 *
 *   bench-tracer [--steps N] [--json]
 *
 * The writer thread's side: a synthetic stream of real CUPTI 13 activity records (API,
 * Kernel10, Memcpy6, Memset4, Synchronization2, CudaEvent2), one step of it shaped as a
 * step of bench/gpu/gpt.py on the H200 (the recorded run's events divided by its 30 steps:
 * 560 cudaLaunchKernel and 201 cuLaunchKernelEx with their kernels, 124 memsets, 6
 * copies, 164 other runtime calls, event records, waits and syncs; 200 kernel names),
 * through the tracer's own orr__cupti_translate() and orr__session_add() into the native
 * writer (zstd, a file in a temporary directory): CPU ns per record and per step.  Three
 * times: as CUPTI now delivers it; with the 1,044 driver queries per step that it
 * delivered before they were turned off (cuKernelGetName, cuGetErrorString, ...), which
 * the writer drops; and with those queries written, as the tracer did before.
 *
 * The job's threads' side: CUPTI's buffer request and completion (orr__queue_get() and
 * orr__queue_put()) per buffer, and the first write of 4 MiB of records into a buffer
 * the writer reserved (pages touched) against one allocated at the request.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "../tracer/internal.h"

#define PID 4242
#define TID 4243

/* One step of gpt.py on the H200 (the recorded run's counts / 30 steps). */
enum {
	STEP_RT_LAUNCH = 560,
	STEP_DRV_LAUNCH = 201,
	STEP_MEMSET = 124,
	STEP_MEMCPY = 6,
	STEP_RT_OTHER = 164,
	STEP_EVENT_RECORD = 2,
	STEP_STREAM_WAIT = 1,
	STEP_STREAM_SYNC = 5,
	STEP_QUERIES = 1044,
	KERNEL_NAMES = 200,
};

union rec {
	CUpti_Activity a;
	CUpti_ActivityAPI api;
	CUpti_ActivityKernel10 k;
	CUpti_ActivityMemcpy6 mc;
	CUpti_ActivityMemset4 ms;
	CUpti_ActivitySynchronization2 sy;
	CUpti_ActivityCudaEvent2 ev;
	CUpti_ActivityDevice5 dev;
};

struct stream {
	union rec *r;
	size_t n, cap;
	uint64_t t;    /* the CPU clock of the synthetic job, ns */
	uint32_t corr; /* correlation ids, one sequence */
	char names[KERNEL_NAMES][160];
};

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static union rec *push(struct stream *s)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4096;
		s->r = realloc(s->r, s->cap * sizeof(*s->r));
		if (!s->r) {
			perror("bench-tracer");
			exit(1);
		}
	}
	memset(&s->r[s->n], 0, sizeof(s->r[s->n]));
	return &s->r[s->n++];
}

static uint32_t api(struct stream *s, bool driver, uint32_t cbid, uint64_t dur)
{
	CUpti_ActivityAPI *a = &push(s)->api;

	a->kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
	a->cbid = cbid;
	a->start = s->t;
	a->end = s->t + dur;
	a->processId = PID;
	a->threadId = TID;
	a->correlationId = ++s->corr;
	s->t += dur + 300;
	return a->correlationId;
}

static void kernel(struct stream *s, uint32_t corr, size_t i)
{
	CUpti_ActivityKernel10 *k = &push(s)->k;

	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->name = s->names[i % KERNEL_NAMES];
	k->correlationId = corr;
	k->deviceId = 0;
	k->contextId = 1;
	k->streamId = 7;
	k->start = s->t + 20000;
	k->end = s->t + 60000;
	k->gridX = 1024;
	k->gridY = k->gridZ = 1;
	k->blockX = 256;
	k->blockY = k->blockZ = 1;
	k->dynamicSharedMemory = 48 * 1024;
	k->registersPerThread = 64;
}

static void gpu_copy(struct stream *s, uint32_t corr, bool set)
{
	union rec *r = push(s);

	if (set) {
		r->ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
		r->ms.bytes = 1 << 20;
		r->ms.start = s->t + 20000;
		r->ms.end = s->t + 22000;
		r->ms.streamId = 7;
		r->ms.contextId = 1;
		r->ms.correlationId = corr;
		r->ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		return;
	}
	r->mc.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	r->mc.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	r->mc.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	r->mc.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	r->mc.bytes = 8 << 20;
	r->mc.start = s->t + 20000;
	r->mc.end = s->t + 200000;
	r->mc.streamId = 13;
	r->mc.contextId = 1;
	r->mc.correlationId = corr;
}

static void sync_rec(struct stream *s, uint32_t corr, CUpti_ActivitySynchronizationType type,
		     uint32_t event)
{
	CUpti_ActivitySynchronization2 *y = &push(s)->sy;

	y->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	y->type = type;
	y->start = s->t - 200;
	y->end = s->t;
	y->contextId = 1;
	y->streamId = type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT ||
				      type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE
			      ? 7
			      : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	y->cudaEventId = event;
	y->correlationId = corr;
	y->cudaEventSyncId = event;
}

static void event_record(struct stream *s, uint32_t corr, uint32_t event)
{
	CUpti_ActivityCudaEvent2 *e = &push(s)->ev;

	e->kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	e->correlationId = corr;
	e->contextId = 1;
	e->streamId = 13;
	e->eventId = event;
	e->cudaEventSyncId = event;
}

/* One step; with queries, the driver calls CUPTI delivered before they were turned off. */
static void one_step(struct stream *s, bool queries, size_t step)
{
	size_t k = 0;

	for (size_t i = 0; i < STEP_RT_LAUNCH; i++) {
		if (queries) /* PyTorch asks each kernel's name, then launches it */
			api(s, true, CUPTI_DRIVER_TRACE_CBID_cuKernelGetName, 400);
		kernel(s, api(s, false, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 3000),
		       k++);
	}
	for (size_t i = 0; i < STEP_DRV_LAUNCH; i++) {
		/* the other queries, spread over the driver launches */
		size_t nq = (STEP_QUERIES - STEP_RT_LAUNCH) * (i + 1) / STEP_DRV_LAUNCH -
			    (STEP_QUERIES - STEP_RT_LAUNCH) * i / STEP_DRV_LAUNCH;

		for (size_t q = 0; queries && q < nq; q++)
			api(s, true,
			    q % 2 ? CUPTI_DRIVER_TRACE_CBID_cuGetErrorString
				  : CUPTI_DRIVER_TRACE_CBID_cuCtxGetLimit,
			    300);
		kernel(s, api(s, true, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 4000), k++);
	}
	for (size_t i = 0; i < STEP_MEMSET; i++)
		gpu_copy(s, api(s, false, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 2500),
			 true);
	for (size_t i = 0; i < STEP_MEMCPY; i++)
		gpu_copy(s, api(s, false, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 5000),
			 false);
	for (size_t i = 0; i < STEP_RT_OTHER; i++)
		api(s, false, CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000, 500);
	for (size_t i = 0; i < STEP_EVENT_RECORD; i++)
		event_record(s, api(s, false, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, 1500),
			     (uint32_t)(step * 4 + i + 1));
	for (size_t i = 0; i < STEP_STREAM_WAIT; i++)
		sync_rec(s, api(s, false, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, 1500),
			 CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT,
			 (uint32_t)(step * 4 + 1));
	for (size_t i = 0; i < STEP_STREAM_SYNC; i++)
		sync_rec(s,
			 api(s, false, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 20000),
			 CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
			 CUPTI_SYNCHRONIZATION_INVALID_VALUE);
}

static void make_stream(struct stream *s, size_t steps, bool queries)
{
	CUpti_ActivityDevice5 *d;

	memset(s, 0, sizeof(*s));
	s->t = 1700000000000000000ull;
	for (size_t i = 0; i < KERNEL_NAMES; i++) /* mangled, as long as PyTorch's */
		snprintf(s->names[i], sizeof(s->names[i]),
			 "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfff"
			 "NS0_10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_%zu",
			 i);
	d = &push(s)->dev;
	d->kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d->id = 0;
	d->name = "NVIDIA H200";
	d->numMultiprocessors = 132;
	d->computeCapabilityMajor = 9;
	d->globalMemorySize = 141ull << 30;
	for (size_t i = 0; i < steps; i++)
		one_step(s, queries, i);
}

static const char *cupti_names(void *data, bool driver, uint32_t cbid)
{
	const char *name = NULL;

	/* "as before": a query without its name is kept, as every driver call was */
	if (data && driver &&
	    (cbid == CUPTI_DRIVER_TRACE_CBID_cuKernelGetName ||
	     cbid == CUPTI_DRIVER_TRACE_CBID_cuGetErrorString ||
	     cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxGetLimit))
		return NULL;

	if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
				 cbid, &name) != CUPTI_SUCCESS)
		return NULL;
	return name;
}

struct writer_result {
	size_t records, steps;
	int64_t cpu_ns;
	struct orr__summary sum;
};

/* The writer thread's work for the stream: translate, session, native file. */
static int run_writer(const struct stream *s, size_t steps, const char *dir, bool keep_queries,
		      struct writer_result *res)
{
	struct orr__window win;
	struct orr__session *ses;
	char path[512];
	struct orr__session_config c = {
		.path = path,
		.header = { .rank = 0,
			    .world_size = 1,
			    .local_rank = 0,
			    .pid = PID,
			    .producer = "bench-tracer",
			    .clock_source = "CLOCK_REALTIME",
			    .cupti_version = CUPTI_API_VERSION },
		.window = &win,
		.api_name = cupti_names,
		.api_name_data = keep_queries ? (void *)dir : NULL,
	};
	int64_t t0;
	int r;

	snprintf(path, sizeof(path), "%s/pid-%d.orr", dir, PID);
	orr__window_init(&win, 0, 0, "ProfilerStep#");
	if ((r = orr__session_new(&c, &ses)))
		return r;
	t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (size_t i = 0; i < s->n; i++) {
		struct orr__trec tr;

		if (orr__cupti_translate(&s->r[i], &tr))
			orr__session_add(ses, &tr);
	}
	orr__session_close(ses, &res->sum);
	res->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	res->records = s->n;
	res->steps = steps;
	unlink(path);
	orr__window_release(&win);
	return res->sum.written ? 0 : -EIO;
}

struct queue_result {
	double handoff_ns;    /* get + put of one buffer, spares ready */
	double first_fill_ns; /* 4 MiB of records written into a reserved buffer */
	double fresh_fill_ns; /* the same into a buffer allocated at the request */
	double fresh_get_ns;  /* the request that allocates */
};

/* CUPTI's side on the job's threads: requests, completions, first writes of records. */
static void run_queue(size_t rounds, struct queue_result *res)
{
	struct orr__queue q;
	int64_t handoff = 0, fill = 0, fresh = 0, fresh_get = 0, t;
	size_t handoffs = 0;

	for (size_t i = 0; i < rounds; i++) {
		uint8_t *d, *held[8];
		struct orr__buf *b;
		size_t nheld;

		orr__queue_init(&q, ORR__BUF_BYTES, ORR__MAX_BUFS);
		orr__queue_reserve(&q, ORR__SPARE_BUFS); /* the writer, at its start */
		t = now_ns(CLOCK_MONOTONIC);
		d = orr__queue_get(&q);
		handoff += now_ns(CLOCK_MONOTONIC) - t;
		t = now_ns(CLOCK_MONOTONIC);
		memset(d, 0x5a, ORR__BUF_BYTES); /* CUPTI writing records */
		fill += now_ns(CLOCK_MONOTONIC) - t;
		t = now_ns(CLOCK_MONOTONIC);
		orr__queue_put(&q, d, ORR__BUF_BYTES);
		handoff += now_ns(CLOCK_MONOTONIC) - t;
		handoffs++;
		b = orr__queue_pop(&q, 0);
		orr__queue_recycle(&q, b);
		nheld = 0;
		while (q.nfree > 0 && nheld < sizeof(held) / sizeof(held[0]))
			held[nheld++] =
				orr__queue_get(&q); /* no spare left: the next one allocates */
		t = now_ns(CLOCK_MONOTONIC);
		d = orr__queue_get(&q);
		fresh_get += now_ns(CLOCK_MONOTONIC) - t;
		t = now_ns(CLOCK_MONOTONIC);
		if (d)
			memset(d, 0x5a, ORR__BUF_BYTES);
		fresh += now_ns(CLOCK_MONOTONIC) - t;
		orr__queue_drop(&q, d);
		for (size_t j = 0; j < nheld; j++)
			orr__queue_drop(&q, held[j]);
		orr__queue_release(&q); /* frees every buffer: the next round starts cold */
	}
	res->handoff_ns = (double)handoff / (double)handoffs;
	res->first_fill_ns = (double)fill / (double)rounds;
	res->fresh_fill_ns = (double)fresh / (double)rounds;
	res->fresh_get_ns = (double)fresh_get / (double)rounds;
}

/* The three streams run_writer() is given, in order. */
static const char *const what[3] = { "as CUPTI now delivers",
				     "the driver queries delivered, dropped",
				     "the driver queries written (as before)" };

static void print_text(const struct writer_result *w, const struct queue_result *qr)
{
	for (int i = 0; i < 3; i++)
		printf("writer, %s: %zu records per step, %.0f ns per record, %.3f ms CPU per step, "
		       "%llu events written\n",
		       what[i], w[i].records / w[i].steps,
		       (double)w[i].cpu_ns / (double)w[i].records,
		       (double)w[i].cpu_ns / (double)w[i].steps / 1e6,
		       (unsigned long long)w[i].sum.events);
	printf("job's threads: buffer request + completion %.0f ns; 4 MiB of records into a "
	       "reserved buffer %.0f us, into one allocated at the request %.0f us (the "
	       "request itself %.0f us)\n",
	       qr->handoff_ns, qr->first_fill_ns / 1e3, qr->fresh_fill_ns / 1e3,
	       qr->fresh_get_ns / 1e3);
}

static void print_json(long steps, const struct writer_result *w, const struct queue_result *qr)
{
	printf("{\"steps\": %ld, \"writer\": [", steps);
	for (int i = 0; i < 3; i++)
		printf("%s{\"stream\": \"%s\", \"records_per_step\": %zu, \"ns_per_record\": %.1f, "
		       "\"cpu_ms_per_step\": %.4f, \"events\": %llu, \"driver_queries_dropped\": %llu}",
		       i ? ", " : "", what[i], w[i].records / w[i].steps,
		       (double)w[i].cpu_ns / (double)w[i].records,
		       (double)w[i].cpu_ns / (double)w[i].steps / 1e6,
		       (unsigned long long)w[i].sum.events,
		       (unsigned long long)w[i].sum.driver_queries);
	printf("], \"job_threads\": {\"buffer_handoff_ns\": %.1f, \"fill_reserved_us\": %.1f, "
	       "\"fill_fresh_us\": %.1f, \"fresh_request_us\": %.1f}}\n",
	       qr->handoff_ns, qr->first_fill_ns / 1e3, qr->fresh_fill_ns / 1e3,
	       qr->fresh_get_ns / 1e3);
}

static void usage(void)
{
	fputs("usage: bench-tracer [--steps N] [--json]\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "steps", required_argument, NULL, 's' },
					      { "json", no_argument, NULL, 'j' },
					      { 0 } };
	char dir[] = "/tmp/bench-tracer-XXXXXX";
	struct writer_result w[3];
	struct queue_result qr;
	struct stream *s = malloc(sizeof(*s));
	long steps = 200;
	bool json = false;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's' && (steps = strtol(optarg, NULL, 10)) > 0)
			continue;
		if (c == 'j') {
			json = true;
			continue;
		}
		usage();
	}
	if (!s || !mkdtemp(dir)) {
		perror("bench-tracer");
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		make_stream(s, (size_t)steps, i > 0);
		if (run_writer(s, (size_t)steps, dir, i == 2, &w[i])) {
			fprintf(stderr, "bench-tracer: the session wrote no file\n");
			return 1;
		}
		free(s->r);
	}
	free(s);
	rmdir(dir);
	run_queue(20, &qr);
	if (json)
		print_json(steps, w, &qr);
	else
		print_text(w, &qr);
	return 0;
}

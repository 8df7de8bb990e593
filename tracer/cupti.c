/* SPDX-License-Identifier: MIT */
/*
 * liborrery-tracer.so's start-up, its writer thread and its use of CUPTI: the only file
 * that includes <cupti.h>.  The library is loaded twice over, by the same path: as NVTX's
 * injection (NVTX_INJECTION64_PATH, nvtx-inject.c) at the first NVTX call of each NVTX
 * instance, and as CUDA's (CUDA_INJECTION64_PATH) during cuInit, which calls
 * InitializeInjection(); that must return 1 even when tracing is off (0 makes CUDA's
 * initialisation fail in the job).
 *
 * What runs where:
 *   The host start (once, at whichever comes first): the environment, the log, the
 *     window, the session, the writer thread, atexit / fork / SIGTERM handlers.  A process
 *     that never initializes CUDA is traced from its first NVTX call all the same.
 *   InitializeInjection (once): the host start, then check the CUPTI version, subscribe,
 *     set the clock, thread id type and buffer callbacks, and enable the activity kinds.
 *   CUPTI's buffer callbacks (any thread): take a buffer from the bounded pool, or queue
 *     a full one for the writer.  No I/O, one short mutex.
 *   NVTX calls (the job's threads, nvtx-inject.c): records in per-thread chunks
 *     (nvtx-buf.c), step markers counted (window.c), NCCL's payloads decoded and the call's
 *     external id pushed to CUPTI while it runs (nccl.c, orr__host_push_external).
 *   The writer thread: reads full buffers and the NVTX chunks, turns records into events
 *     (session*.c), and at the end of the window, at exit or on SIGTERM disables the kinds,
 *     flushes, writes the file.  cuptiActivityGetNumDroppedRecords is called there,
 *     holding no lock.
 * Nothing here aborts or prints; the log (log.c) says what happened.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "internal.h"
#include "banned.h"

#define WRITER_POLL_NS   200000000 /* the writer checks the window at least this often */
#define EXIT_WAIT_S      30        /* atexit waits this long for the file */
#define SIGTERM_WAIT_MS  5000      /* the SIGTERM handler waits this long */
#define HOLD_FOR_DEVICES 4         /* buffers held until one brings the DEVICE records */
#define HOLD_NVTX_CHUNKS 64        /* NVTX chunks held for them, at most (4 MiB) */
#define NCCL_EXT_KIND    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1

int InitializeInjection(void) __attribute__((visibility("default")));

static struct {
	pthread_mutex_t init_lock;
	bool initialized;   /* InitializeInjection ran */
	bool host_tried;    /* the host start ran */
	_Atomic bool on;    /* the host start succeeded: the writer runs */
	_Atomic bool cupti; /* CUPTI's activity is enabled */
	struct orr__config cfg;
	struct orr__window win;
	struct orr__queue q;
	struct orr__session *session;
	CUpti_SubscriberHandle sub;
	bool subscribed;
	uint32_t cupti_version;
	CUpti_ActivityKind enabled[24];
	size_t nenabled;
	pthread_t writer;
	bool writer_started;
	_Atomic bool closed; /* the file is written (or given up on) */
	sem_t done;          /* posted when closed */
	struct sigaction old_term;
	bool dropped_logged;
	struct orr__nccl nccl;
	bool nccl_ready;
	uint64_t nvtx_records, nvtx_dropped; /* NVTX records read, and dropped, so far */
	struct orr__buf *held;               /* buffers waiting for the DEVICE records */
	size_t nheld;
	bool holding;
	bool flushed_for_devices; /* CUPTI flushed once for DEVICE records NVTX waits for */
} T = { .init_lock = PTHREAD_MUTEX_INITIALIZER };

static const char *result_name(CUptiResult r)
{
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

/* ---- CUPTI callbacks (the job's threads) ---- */

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = atomic_load(&T.closed) ? NULL : orr__queue_get(&T.q);
	*size = *buf ? T.q.buf_bytes : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				      size_t valid)
{
	if (atomic_load(&T.closed))
		orr__queue_drop(&T.q, buf);
	else
		orr__queue_put(&T.q, buf, valid);
}

/*
 * The subscription holds CUPTI's one subscriber slot, so that another profiler is seen
 * at start-up; no callback is enabled (NVTX comes through nvtx-inject.c).
 */
static void CUPTIAPI on_callback(void *data, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *cbdata)
{
}

static const char *api_name(void *data, bool driver, uint32_t cbid)
{
	const char *name = NULL;

	if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
				 cbid, &name) != CUPTI_SUCCESS)
		return NULL;
	return name;
}

/* ---- the writer thread ---- */

static void count_dropped(void)
{
	size_t n = 0;

	if (!atomic_load(&T.cupti) ||
	    cuptiActivityGetNumDroppedRecords(NULL, 0, &n) != CUPTI_SUCCESS || !n)
		return;
	orr__session_dropped(T.session, n);
	if (!T.dropped_logged)
		orr__log("CUPTI dropped %zu activity records (the total is in the summary)", n);
	T.dropped_logged = true;
}

/* Feeds the buffer's records to the session; only DEVICE records when devices_only. */
static void read_buffer(struct orr__buf *b, bool devices_only)
{
	CUpti_Activity *rec = NULL;
	struct orr__trec r;

	/* MAX_LIMIT_REACHED ends the buffer; INVALID_KIND is an incomplete record. */
	while (cuptiActivityGetNextRecord(b->data, b->valid, &rec) == CUPTI_SUCCESS) {
		if (devices_only && rec->kind != CUPTI_ACTIVITY_KIND_DEVICE)
			continue;
		if (orr__cupti_translate(rec, &r))
			orr__session_add(T.session, &r);
	}
}

static bool has_devices(struct orr__buf *b)
{
	CUpti_Activity *rec = NULL;

	while (cuptiActivityGetNextRecord(b->data, b->valid, &rec) == CUPTI_SUCCESS)
		if (rec->kind == CUPTI_ACTIVITY_KIND_DEVICE)
			return true;
	return false;
}

/* The held buffers, DEVICE records first so that the file's header lists the devices. */
static void release_held(void)
{
	struct orr__buf *b, *next;

	orr__session_set_cupti_version(T.session, T.cupti_version);
	for (b = T.held; b; b = b->next)
		read_buffer(b, true);
	for (b = T.held; b; b = next) {
		next = b->next;
		read_buffer(b, false);
		orr__queue_recycle(&T.q, b);
	}
	T.held = NULL;
	T.nheld = 0;
	T.holding = false;
}

static void process(struct orr__buf *b)
{
	if (T.holding) {
		struct orr__buf **tail = &T.held;

		while (*tail)
			tail = &(*tail)->next;
		*tail = b;
		b->next = NULL;
		if (has_devices(b) || ++T.nheld >= HOLD_FOR_DEVICES)
			release_held();
	} else {
		read_buffer(b, false);
		orr__queue_recycle(&T.q, b);
	}
	count_dropped();
}

static void add_nvtx(void *data, const struct orr__trec *r)
{
	orr__session_add(T.session, r);
}

/*
 * The NVTX records so far.  While the DEVICE records are awaited (they go in the file's
 * header, written at its first event) they are left in their chunks, up to
 * HOLD_NVTX_CHUNKS full ones; then, once, CUPTI is flushed (forced) for the buffer that
 * holds them, and the records are read at the next pass whatever came.  `all` reads
 * them at once.
 */
static void drain_nvtx(bool all)
{
	uint64_t dropped;

	if (T.holding && !all && orr__nvtx_backlog() < HOLD_NVTX_CHUNKS)
		return;
	if (T.holding && !all && atomic_load(&T.cupti) && !T.flushed_for_devices) {
		T.flushed_for_devices = true;
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		return;
	}
	T.nvtx_records += orr__nvtx_drain(add_nvtx, NULL);
	dropped = orr__nvtx_dropped();
	if (dropped > T.nvtx_dropped) {
		orr__session_dropped(T.session, dropped - T.nvtx_dropped);
		orr__log("%llu NVTX records dropped (no memory, or %u chunks in use)",
			 (unsigned long long)(dropped - T.nvtx_dropped), ORR__NVTX_MAX_CHUNKS);
		T.nvtx_dropped = dropped;
	}
}

static void disable_kinds(void)
{
	for (size_t i = 0; i < T.nenabled; i++)
		cuptiActivityDisable(T.enabled[i]);
	T.nenabled = 0;
	if (T.subscribed)
		cuptiEnableDomain(0, T.sub, CUPTI_CB_DOMAIN_NVTX);
}

/* Flushes CUPTI, reads everything, writes and closes the file. */
static void finish(bool stop_tracing)
{
	struct orr__summary sum;
	struct orr__buf *b;
	CUptiResult r;

	/* Nothing is recorded past this point: the file is being written. */
	orr__nvtx_stop();
	if (stop_tracing && atomic_load(&T.cupti))
		disable_kinds();
	if (stop_tracing)
		orr__log("step window over: tracing stopped");
	if (atomic_load(&T.cupti)) {
		r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		if (r != CUPTI_SUCCESS)
			orr__log("cuptiActivityFlushAll: %s", result_name(r));
	}
	while ((b = orr__queue_pop(&T.q, 0)))
		process(b);
	if (T.holding)
		release_held();
	drain_nvtx(true);
	count_dropped();
	if (!atomic_load(&T.cupti) && !T.nvtx_records) {
		/* Neither CUDA nor NVTX: no file (the log says why CUDA was not traced). */
		orr__session_discard(T.session);
		T.session = NULL;
		orr__log("nothing was recorded: no file written");
		atomic_store(&T.closed, true);
		sem_post(&T.done);
		return;
	}
	orr__session_close(T.session, &sum);
	T.session = NULL;
	if (atomic_load(&T.q.declined))
		orr__log("%llu activity buffers declined (pool of %zu x %zu bytes exhausted)",
			 (unsigned long long)atomic_load(&T.q.declined), T.q.max_bufs,
			 T.q.buf_bytes);
	if (T.q.caller_allocs)
		orr__log("%llu activity buffers allocated on the job's threads (no spare ready)",
			 (unsigned long long)T.q.caller_allocs);
	orr__session_log_summary(&sum, T.cfg.path);
	if (T.nccl_ready && orr__nccl_lost(&T.nccl))
		orr__log("%llu NCCL calls were not found when their launch arrived",
			 (unsigned long long)orr__nccl_lost(&T.nccl));
	atomic_store(&T.closed, true);
	sem_post(&T.done);
}

static void *writer_main(void *arg)
{
	sigset_t all;

	/* Signals go to the job's threads: the SIGTERM handler waits for this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	orr__queue_reserve(&T.q, ORR__SPARE_BUFS);
	while (!atomic_load(&T.closed)) {
		struct orr__buf *b = orr__queue_pop(&T.q, WRITER_POLL_NS);
		unsigned req;

		if (b)
			process(b);
		orr__queue_reserve(&T.q, ORR__SPARE_BUFS);
		drain_nvtx(false);
		req = orr__queue_take_requests(&T.q);
		if ((req & ORR__REQ_STOP) || orr__window_done(&T.win, orr__now_ns()))
			finish(true);
		else if (req & ORR__REQ_FINISH)
			finish(false);
	}
	return NULL;
}

/* ---- exit, fork, SIGTERM ---- */

static void at_exit(void)
{
	struct timespec ts;

	if (getpid() != T.cfg.pid || !T.writer_started || atomic_load(&T.closed))
		return;
	orr__queue_request(&T.q, ORR__REQ_FINISH);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += EXIT_WAIT_S;
	while (sem_timedwait(&T.done, &ts) != 0 && errno == EINTR)
		;
}

/* A forked child has no writer thread and cannot use CUDA: it records nothing. */
static void in_child(void)
{
	/* The parent's threads may have held these locks at the fork: fresh ones. */
	pthread_mutex_init(&T.q.lock, NULL);
	pthread_mutex_init(&T.win.lock, NULL);
	orr__nvtx_after_fork();
	atomic_store(&T.closed, true);
}

/* Async-signal-safe only: wake the writer, poll, then restore and chain or re-raise. */
static void on_sigterm(int sig, siginfo_t *info, void *uc)
{
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	int saved = errno;

	if (getpid() == T.cfg.pid && T.writer_started && !atomic_load(&T.closed)) {
		orr__queue_request(&T.q, ORR__REQ_FINISH);
		for (int i = 0; i < SIGTERM_WAIT_MS / 10 && !atomic_load(&T.closed); i++)
			nanosleep(&nap, NULL);
	}
	sigaction(SIGTERM, &T.old_term, NULL);
	if (T.old_term.sa_flags & SA_SIGINFO) {
		if (T.old_term.sa_sigaction)
			T.old_term.sa_sigaction(sig, info, uc);
	} else if (T.old_term.sa_handler == SIG_DFL) {
		raise(sig); /* delivered, with the default action, when this handler returns */
	} else if (T.old_term.sa_handler != SIG_IGN) {
		T.old_term.sa_handler(sig);
	}
	errno = saved;
}

static void install_handlers(void)
{
	struct sigaction sa;

	atexit(at_exit);
	pthread_atfork(NULL, NULL, in_child);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigterm;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, NULL, &T.old_term) == 0 && T.old_term.sa_handler != SIG_IGN)
		sigaction(SIGTERM, &sa, &T.old_term);
}

/* ---- InitializeInjection ---- */

/*
 * Whether a libcupti of API version v writes the records this tracer was built to read.
 * From 13.0 the version is major * 10000 + minor * 100 + patch, and record layouts change
 * between minor versions (13.2: Kernel11), not within one.  Before, it is one number per
 * release (27: 12.9, 28: 12.9 Update 1): that one.
 */
static bool same_layouts(uint32_t v)
{
	if (CUPTI_API_VERSION >= 130000)
		return v / 100 == CUPTI_API_VERSION / 100;
	return v == CUPTI_API_VERSION;
}

static bool version_ok(void)
{
	CUptiResult r = cuptiGetVersion(&T.cupti_version);

	if (r != CUPTI_SUCCESS) {
		orr__log("cuptiGetVersion: %s: CUDA tracing disabled", result_name(r));
		return false;
	}
	if (!same_layouts(T.cupti_version)) {
		orr__log(
			"libcupti is version %u, the tracer was built for %u: CUDA tracing disabled",
			T.cupti_version, (unsigned)CUPTI_API_VERSION);
		return false;
	}
	return true;
}

static bool subscribe(void)
{
	CUptiResult r = cuptiSubscribe(&T.sub, (CUpti_CallbackFunc)on_callback, NULL);

	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		orr__log("another CUPTI subscriber is present (nsys, ncu, torch.profiler?): "
			 "CUDA tracing disabled");
		return false;
	}
	if (r != CUPTI_SUCCESS) {
		orr__log("cuptiSubscribe: %s: CUDA tracing disabled", result_name(r));
		return false;
	}
	T.subscribed = true;
	return true;
}

/*
 * Driver calls the model has no use for (orr__driver_call_kept()): their records are
 * turned off per cbid, so that CUPTI does not write them on the job's threads.  CUPTI
 * reports no driver call that a runtime call makes, so the driver records left are the
 * launches, copies and syncs the job makes itself (Triton, cuBLASLt, NCCL).  On the H200
 * run, 31,308 of the 37,353 driver records were such queries (docs/tracer.md).
 */
static void quiet_driver_queries(void)
{
	size_t off = 0;

	for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++) {
		const char *name = NULL;
		CUptiResult r = cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name);

		if (r != CUPTI_SUCCESS || !name || orr__driver_call_kept(name))
			continue;
		if (cuptiActivityEnableDriverApi(cbid, 0) == CUPTI_SUCCESS)
			off++;
	}
	orr__log("driver API records: %zu query calls of %d turned off", off,
		 (int)CUPTI_DRIVER_TRACE_CBID_SIZE - 1);
}

/* Kineto's list: calls made so often that they only cost time and space. */
static void quiet_calls(void)
{
	static const CUpti_CallbackId runtime[] = {
		CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020,
	};
	static const CUpti_CallbackId driver[] = {
		CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
		CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
		CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
	};

	for (size_t i = 0; i < sizeof(runtime) / sizeof(runtime[0]); i++)
		cuptiActivityEnableRuntimeApi(runtime[i], 0);
	for (size_t i = 0; i < sizeof(driver) / sizeof(driver[0]); i++)
		cuptiActivityEnableDriverApi(driver[i], 0);
	quiet_driver_queries();
}

static uint64_t CUPTIAPI timestamp(void)
{
	return (uint64_t)orr__now_ns();
}

/* Attributes and callbacks, then the kinds; false (all undone) when an essential one fails. */
static bool enable_activity(void)
{
	static const struct {
		CUpti_ActivityKind kind;
		bool essential;
	} kinds[] = {
		{ CUPTI_ACTIVITY_KIND_DEVICE, false },
		{ CUPTI_ACTIVITY_KIND_CONTEXT, false },
		{ CUPTI_ACTIVITY_KIND_STREAM, false },
		{ CUPTI_ACTIVITY_KIND_NAME, false },
		{ CUPTI_ACTIVITY_KIND_OVERHEAD, false },
		{ CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, false },
		{ CUPTI_ACTIVITY_KIND_RUNTIME, true },
		{ CUPTI_ACTIVITY_KIND_DRIVER, true },
		{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, true },
		{ CUPTI_ACTIVITY_KIND_MEMCPY, true },
		{ CUPTI_ACTIVITY_KIND_MEMCPY2, false },
		{ CUPTI_ACTIVITY_KIND_MEMSET, true },
		{ CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, false },
		{ CUPTI_ACTIVITY_KIND_CUDA_EVENT, false },
	};
	uint8_t per_thread = 1;
	size_t size = sizeof(per_thread);
	CUptiResult r;

	/* CUPTI's clock is the NVTX records' (CLOCK_REALTIME, its default on Linux but WSL). */
	if ((r = cuptiActivityRegisterTimestampCallback(timestamp)) != CUPTI_SUCCESS)
		orr__log("cuptiActivityRegisterTimestampCallback: %s: NVTX and CUDA times may "
			 "differ",
			 result_name(r));
	/* Per-thread buffers keep each thread's records in order (pairing relies on it). */
	cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size,
				  &per_thread);
	if ((r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) != CUPTI_SUCCESS ||
	    (r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) !=
		    CUPTI_SUCCESS) {
		orr__log("cannot set up activity buffers: %s: CUDA tracing disabled",
			 result_name(r));
		return false;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		r = cuptiActivityEnable(kinds[i].kind);
		if (r == CUPTI_SUCCESS) {
			T.enabled[T.nenabled++] = kinds[i].kind;
			continue;
		}
		orr__log("cuptiActivityEnable(%d): %s%s", (int)kinds[i].kind, result_name(r),
			 kinds[i].essential ? ": CUDA tracing disabled" : "");
		if (kinds[i].essential) {
			disable_kinds();
			return false;
		}
	}
	quiet_calls();
	return true;
}

static bool new_session(void)
{
	struct orr__session_config sc = {
		.path = T.cfg.path,
		.header = { .rank = T.cfg.rank,
			    .world_size = T.cfg.world_size,
			    .local_rank = T.cfg.local_rank,
			    .pid = T.cfg.pid,
			    .host = T.cfg.host[0] ? T.cfg.host : NULL,
			    .producer = "orrery-tracer " ORR_VERSION,
			    .clock_source = "CLOCK_REALTIME",
			    .cupti_version = T.cupti_version },
		.window = &T.win,
		.api_name = api_name,
		.nccl = T.nccl_ready ? &T.nccl : NULL,
	};
	int r = orr__session_new(&sc, &T.session);

	if (r)
		orr__log("cannot start a session: %s: tracing disabled", strerror(-r));
	return r == 0;
}

static void log_start(void)
{
	if (!T.win.windowed)
		orr__log("tracing pid %lld into %s", (long long)T.cfg.pid, T.cfg.path);
	else if (T.win.steps)
		orr__log("tracing pid %lld into %s: steps %lld to %lld of those named %s<N>",
			 (long long)T.cfg.pid, T.cfg.path, (long long)T.win.skip + 1,
			 (long long)(T.win.skip + T.win.steps), T.win.prefix);
	else
		orr__log("tracing pid %lld into %s: from step %lld of those named %s<N>",
			 (long long)T.cfg.pid, T.cfg.path, (long long)T.win.skip + 1, T.win.prefix);
}

static bool start_writer(void)
{
	int r;

	if (sem_init(&T.done, 0, 0) != 0)
		return false;
	r = pthread_create(&T.writer, NULL, writer_main, NULL);
	if (r) {
		orr__log("cannot start the writer thread: %s: tracing disabled", strerror(r));
		return false;
	}
	T.writer_started = true;
	return true;
}

/* A thread's NVTX chunk is full: the writer reads it now rather than at its next poll. */
static void wake_writer(void *arg)
{
	sem_post(&T.q.wake);
}

/* The host side, once, under init_lock: everything but CUDA's activity. */
static bool host_start_locked(void)
{
	char bad[256];

	if (T.host_tried)
		return atomic_load(&T.on);
	T.host_tried = true;
	orr__config_from_env(&T.cfg, bad, sizeof(bad));
	orr__log_open(T.cfg.dir, T.cfg.pid, T.cfg.debug);
	if (bad[0])
		orr__log("ignoring malformed %s", bad);
	if (T.cfg.path_too_long) {
		orr__log("ORR_RECORD_DIR is too long: tracing disabled");
		return false;
	}
	orr__window_init(&T.win, T.cfg.skip, T.cfg.steps, T.cfg.step_prefix);
	T.holding = true;
	if (orr__queue_init(&T.q, ORR__BUF_BYTES, ORR__MAX_BUFS)) {
		orr__log("cannot set up the buffer pool: tracing disabled");
		return false;
	}
	/* NCCL's payloads: without them a collective has only the type its kernel's name gives. */
	T.nccl_ready = orr__nccl_init(&T.nccl) == 0;
	if (!T.nccl_ready)
		orr__log("NCCL payloads not decoded: no mutex");
	if (!new_session())
		return false;
	if (orr__nvtx_init(wake_writer, NULL) || !start_writer()) {
		orr__log("cannot start recording NVTX: tracing disabled");
		orr__session_discard(T.session);
		T.session = NULL;
		return false;
	}
	install_handlers();
	log_start();
	atomic_store(&T.on, true);
	return true;
}

/* CUDA's activity, once the host side runs; it stays untraced when CUPTI cannot start. */
static void cuda_start(void)
{
	if (!host_start_locked() || !version_ok() || !subscribe())
		return;
	if (!enable_activity()) {
		cuptiUnsubscribe(T.sub);
		T.subscribed = false;
		return;
	}
	atomic_store(&T.cupti, true);
}

bool orr__host_start(void)
{
	bool on;

	pthread_mutex_lock(&T.init_lock);
	on = host_start_locked();
	pthread_mutex_unlock(&T.init_lock);
	return on;
}

struct orr__window *orr__host_window(void)
{
	return atomic_load(&T.on) ? &T.win : NULL;
}

struct orr__nccl *orr__host_nccl(void)
{
	return atomic_load(&T.on) && T.nccl_ready ? &T.nccl : NULL;
}

void orr__host_window_over(void)
{
	orr__queue_request(&T.q, ORR__REQ_STOP);
}

bool orr__host_push_external(uint64_t id)
{
	return atomic_load(&T.cupti) &&
	       cuptiActivityPushExternalCorrelationId(NCCL_EXT_KIND, id) == CUPTI_SUCCESS;
}

void orr__host_pop_external(void)
{
	uint64_t last;

	if (atomic_load(&T.cupti))
		cuptiActivityPopExternalCorrelationId(NCCL_EXT_KIND, &last);
}

int InitializeInjection(void)
{
	pthread_mutex_lock(&T.init_lock);
	if (!T.initialized) {
		T.initialized = true;
		cuda_start();
	}
	pthread_mutex_unlock(&T.init_lock);
	return 1;
}

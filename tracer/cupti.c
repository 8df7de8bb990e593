/* SPDX-License-Identifier: MIT */
/*
 * liborrery-tracer.so's entry point and its use of CUPTI: the only file that includes
 * <cupti.h>.  The CUDA driver loads the library named by CUDA_INJECTION64_PATH during
 * cuInit and calls InitializeInjection(), which must return 1 even when tracing is off
 * (0 makes CUDA's initialisation fail in the job).
 *
 * What runs where:
 *   InitializeInjection (once): check the CUPTI version, subscribe (for the NVTX
 *     callbacks that count steps), set the thread id type and buffer callbacks, enable
 *     the activity kinds, start the writer thread, install atexit / SIGTERM handlers.
 *   CUPTI's buffer callbacks (any thread): take a buffer from the bounded pool, or queue
 *     a full one for the writer.  No I/O, one short mutex.
 *   The NVTX callback (the job's threads): counts step markers (window.c); decodes the
 *     payload of an NCCL call and pushes the call's external id while it runs (nccl.c).
 *   The writer thread: reads full buffers, turns records into events (session*.c),
 *     and at the end of the window, at exit or on SIGTERM disables the kinds, flushes,
 *     writes the file.  cuptiActivityGetNumDroppedRecords is called there, holding no lock.
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
#include <generated_nvtx_meta.h>

#include "internal.h"
#include "banned.h"

#define WRITER_POLL_NS   200000000 /* the writer checks the window at least this often */
#define EXIT_WAIT_S      30        /* atexit waits this long for the file */
#define SIGTERM_WAIT_MS  5000      /* the SIGTERM handler waits this long */
#define HOLD_FOR_DEVICES 4         /* buffers held until one brings the DEVICE records */
#define NCCL_EXT_KIND    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1

int InitializeInjection(void) __attribute__((visibility("default")));

static struct {
	pthread_mutex_t init_lock;
	bool initialized;
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
	_Atomic(nvtxDomainHandle_t) nccl_domain; /* learnt from its first decoded payload */
	struct orr__buf *held;                   /* buffers waiting for the DEVICE records */
	size_t nheld;
	bool holding;
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

/* The message of an NVTX mark or range start, when it is plain ASCII. */
static const char *nvtx_message(CUpti_CallbackId cbid, const void *p)
{
	const nvtxEventAttributes_t *a = NULL;

	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxMarkA:
		return ((const nvtxMarkA_params *)p)->message;
	case CUPTI_CBID_NVTX_nvtxRangeStartA:
		return ((const nvtxRangeStartA_params *)p)->message;
	case CUPTI_CBID_NVTX_nvtxRangePushA:
		return ((const nvtxRangePushA_params *)p)->message;
	case CUPTI_CBID_NVTX_nvtxMarkEx:
		a = ((const nvtxMarkEx_params *)p)->eventAttrib;
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartEx:
		a = ((const nvtxRangeStartEx_params *)p)->eventAttrib;
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushEx:
		a = ((const nvtxRangePushEx_params *)p)->eventAttrib;
		break;
	case CUPTI_CBID_NVTX_nvtxDomainMarkEx:
		a = ((const nvtxDomainMarkEx_params *)p)->core.eventAttrib;
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
		a = ((const nvtxDomainRangeStartEx_params *)p)->core.eventAttrib;
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
		a = ((const nvtxDomainRangePushEx_params *)p)->core.eventAttrib;
		break;
	default:
		return NULL;
	}
	return a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : NULL;
}

/* A range on a domain with an NCCL payload: the call's external id is pushed for its run. */
static void nccl_push(const nvtxDomainRangePushEx_params *p)
{
	struct orr__nvtx_payload pd;
	struct orr__nccl_call c;
	uint64_t id;
	bool pushed = false;

	if (orr__cupti_nvtx_payload(p, &pd) && orr__nccl_decode(&pd, &c)) {
		atomic_store(&T.nccl_domain, p->domain);
		id = orr__nccl_add(&T.nccl, &c);
		if (id && !orr__nccl_range_full())
			pushed = cuptiActivityPushExternalCorrelationId(NCCL_EXT_KIND, id) ==
				 CUPTI_SUCCESS;
		orr__nccl_range_push(pushed);
		return;
	}
	if (p->domain && p->domain == atomic_load(&T.nccl_domain))
		orr__nccl_range_push(false);
}

static void nccl_pop(const nvtxDomainRangePop_params *p)
{
	uint64_t last;

	if (p->domain && p->domain == atomic_load(&T.nccl_domain) && orr__nccl_range_pop())
		cuptiActivityPopExternalCorrelationId(NCCL_EXT_KIND, &last);
}

/*
 * Step markers, counted in real time, and NCCL's ranges; the work for any other NVTX call
 * is a compare.
 */
static void CUPTIAPI on_callback(void *data, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *cbdata)
{
	const CUpti_NvtxData *d = cbdata;
	const char *msg;
	uint64_t ts;
	int64_t step;

	if (domain != CUPTI_CB_DOMAIN_NVTX || !d || !d->functionParams)
		return;
	if (T.nccl_ready && cbid == CUPTI_CBID_NVTX_nvtxDomainRangePushEx)
		nccl_push(d->functionParams);
	else if (T.nccl_ready && cbid == CUPTI_CBID_NVTX_nvtxDomainRangePop)
		nccl_pop(d->functionParams);
	if (!T.win.windowed)
		return;
	msg = nvtx_message(cbid, d->functionParams);
	if (!msg || strncmp(msg, T.win.prefix, T.win.prefix_len) != 0)
		return;
	step = orr__window_step_of(&T.win, msg, strnlen(msg, T.win.prefix_len + 32));
	if (step < 0 || cuptiGetTimestamp(&ts) != CUPTI_SUCCESS)
		return;
	if (orr__window_marker(&T.win, step, (int64_t)ts))
		orr__queue_request(&T.q, ORR__REQ_STOP);
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

	if (cuptiActivityGetNumDroppedRecords(NULL, 0, &n) != CUPTI_SUCCESS || !n)
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

	if (stop_tracing) {
		disable_kinds();
		orr__log("step window over: tracing stopped");
	}
	r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (r != CUPTI_SUCCESS)
		orr__log("cuptiActivityFlushAll: %s", result_name(r));
	while ((b = orr__queue_pop(&T.q, 0)))
		process(b);
	if (T.holding)
		release_held();
	count_dropped();
	orr__session_close(T.session, &sum);
	T.session = NULL;
	if (atomic_load(&T.q.declined))
		orr__log("%llu activity buffers declined (pool of %zu x %zu bytes exhausted)",
			 (unsigned long long)atomic_load(&T.q.declined), T.q.max_bufs,
			 T.q.buf_bytes);
	orr__session_log_summary(&sum, T.cfg.path);
	if (T.nccl_ready && orr__nccl_lost(&T.nccl))
		orr__log("%llu NCCL calls were not found when their launch arrived",
			 (unsigned long long)orr__nccl_lost(&T.nccl));
	atomic_store(&T.closed, true);
	sem_post(&T.done);
}

static int64_t now_ns(void)
{
	uint64_t ts = 0;

	return cuptiGetTimestamp(&ts) == CUPTI_SUCCESS ? (int64_t)ts : 0;
}

static void *writer_main(void *arg)
{
	sigset_t all;

	/* Signals go to the job's threads: the SIGTERM handler waits for this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	while (!atomic_load(&T.closed)) {
		struct orr__buf *b = orr__queue_pop(&T.q, WRITER_POLL_NS);
		unsigned req;

		if (b)
			process(b);
		req = orr__queue_take_requests(&T.q);
		if ((req & ORR__REQ_STOP) || orr__window_done(&T.win, now_ns()))
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

static bool version_ok(void)
{
	CUptiResult r = cuptiGetVersion(&T.cupti_version);

	if (r != CUPTI_SUCCESS) {
		orr__log("cuptiGetVersion: %s: tracing disabled", result_name(r));
		return false;
	}
	/* Record layouts change between minor versions (13.2: Kernel11), not within one. */
	if (T.cupti_version / 100 != CUPTI_API_VERSION / 100) {
		orr__log("libcupti is version %u, the tracer was built for %u: tracing disabled",
			 T.cupti_version, (unsigned)CUPTI_API_VERSION);
		return false;
	}
	return true;
}

/* NCCL's payloads: without them a collective has only the type its kernel's name gives. */
static void enable_nccl(void)
{
	CUptiResult r;

	if (orr__nccl_init(&T.nccl)) {
		orr__log("NCCL payloads not decoded: no mutex");
		return;
	}
	if ((r = cuptiEnableCallback(1, T.sub, CUPTI_CB_DOMAIN_NVTX,
				     CUPTI_CBID_NVTX_nvtxDomainRangePushEx)) != CUPTI_SUCCESS ||
	    (r = cuptiEnableCallback(1, T.sub, CUPTI_CB_DOMAIN_NVTX,
				     CUPTI_CBID_NVTX_nvtxDomainRangePop)) != CUPTI_SUCCESS) {
		orr__log("NVTX callbacks unavailable (%s): NCCL payloads not decoded",
			 result_name(r));
		return;
	}
	T.nccl_ready = true;
}

static bool subscribe(void)
{
	static const CUpti_CallbackId steps[] = {
		CUPTI_CBID_NVTX_nvtxMarkA,
		CUPTI_CBID_NVTX_nvtxMarkEx,
		CUPTI_CBID_NVTX_nvtxRangeStartA,
		CUPTI_CBID_NVTX_nvtxRangeStartEx,
		CUPTI_CBID_NVTX_nvtxRangePushA,
		CUPTI_CBID_NVTX_nvtxRangePushEx,
		CUPTI_CBID_NVTX_nvtxDomainMarkEx,
		CUPTI_CBID_NVTX_nvtxDomainRangeStartEx,
		CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
	};
	CUptiResult r = cuptiSubscribe(&T.sub, (CUpti_CallbackFunc)on_callback, NULL);

	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		orr__log("another CUPTI subscriber is present (nsys, ncu, torch.profiler?): "
			 "tracing disabled");
		return false;
	}
	if (r != CUPTI_SUCCESS) {
		orr__log("cuptiSubscribe: %s: tracing disabled", result_name(r));
		return false;
	}
	T.subscribed = true;
	for (size_t i = 0; T.win.windowed && i < sizeof(steps) / sizeof(steps[0]); i++)
		if ((r = cuptiEnableCallback(1, T.sub, CUPTI_CB_DOMAIN_NVTX, steps[i])) !=
		    CUPTI_SUCCESS) {
			orr__log("NVTX callbacks unavailable (%s): step markers cannot be counted",
				 result_name(r));
			break;
		}
	enable_nccl();
	return true;
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
		{ CUPTI_ACTIVITY_KIND_MARKER, false },
		{ CUPTI_ACTIVITY_KIND_MARKER_DATA, false },
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

	/* Per-thread buffers keep each thread's records in order (pairing relies on it). */
	cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size,
				  &per_thread);
	if ((r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) != CUPTI_SUCCESS ||
	    (r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) !=
		    CUPTI_SUCCESS) {
		orr__log("cannot set up activity buffers: %s: tracing disabled", result_name(r));
		return false;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		r = cuptiActivityEnable(kinds[i].kind);
		if (r == CUPTI_SUCCESS) {
			T.enabled[T.nenabled++] = kinds[i].kind;
			continue;
		}
		orr__log("cuptiActivityEnable(%d): %s%s", (int)kinds[i].kind, result_name(r),
			 kinds[i].essential ? ": tracing disabled" : "");
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

static void start(void)
{
	char bad[256];

	orr__config_from_env(&T.cfg, bad, sizeof(bad));
	orr__log_open(T.cfg.dir, T.cfg.pid, T.cfg.debug);
	if (bad[0])
		orr__log("ignoring malformed %s", bad);
	if (T.cfg.path_too_long) {
		orr__log("ORR_RECORD_DIR is too long: tracing disabled");
		return;
	}
	orr__window_init(&T.win, T.cfg.skip, T.cfg.steps, T.cfg.step_prefix);
	T.holding = true;
	if (!version_ok() || orr__queue_init(&T.q, ORR__BUF_BYTES, ORR__MAX_BUFS))
		return;
	if (!subscribe())
		return;
	if (!new_session() || !enable_activity() || !start_writer()) {
		disable_kinds();
		cuptiUnsubscribe(T.sub);
		T.subscribed = false;
		orr__session_discard(T.session);
		T.session = NULL;
		atomic_store(&T.closed, true);
		return;
	}
	install_handlers();
	log_start();
}

int InitializeInjection(void)
{
	pthread_mutex_lock(&T.init_lock);
	if (!T.initialized) {
		T.initialized = true;
		start();
	}
	pthread_mutex_unlock(&T.init_lock);
	return 1;
}

/* SPDX-License-Identifier: MIT */
/*
 * liborrery-tracer.so as NVTX's injection library (NVTX_INJECTION64_PATH).
 *
 * Every NVTX3 instance of the process (PyTorch carries two, NCCL one, each library built
 * with the header-only NVTX3 has its own) loads the library named by
 * NVTX_INJECTION64_PATH at its first NVTX call and calls InitializeInjectionNvtx2() with
 * its own export table: the callback tables are filled here, for each instance, with the
 * functions below.  The first call also starts tracing (cupti.c, orr__host_start), before
 * and without CUDA; InitializeInjection() adds CUDA's activity at cuInit.
 *
 * What is filled: core (MarkEx/A/W, RangeStartEx/A/W, RangeEnd, RangePushEx/A/W,
 * RangePop, NameOsThreadA/W) and core2 (DomainMarkEx, DomainRangeStartEx/End,
 * DomainRangePushEx/Pop, DomainRegisterStringA/W, DomainCreateA/W, DomainDestroy).
 * Categories, resources, the CUDA/OpenCL naming calls and the sync module are left
 * unset, which NVTX turns into no-ops.  The payload extension's own entry points (schema
 * registration) are not injected: NCCL's payloads name static schema ids and arrive
 * with the event attributes of nvtxDomainRangePushEx, where they are decoded (nccl.c).
 *
 * Each call runs on the job's thread: a clock read, a copy of the message into the
 * thread's own chunk (nvtx-buf.c), no lock.  Step markers take the window's lock (once a
 * step).  Domain and registered-string handles are copies of their names, never freed
 * (records refer to them until the file is written).
 */
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include "internal.h"
#include "banned.h"

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
	__attribute__((visibility("default")));

/* The NCCL domain, learnt from its first decoded payload. */
static _Atomic(nvtxDomainHandle_t) nccl_domain;

/* ---- messages ---- */

struct msg {
	const char *s;
	size_t len;
	char buf[512]; /* a wide message, as ASCII ('?' for the rest) */
};

static void from_wide(const wchar_t *w, struct msg *m)
{
	size_t i;

	for (i = 0; w && w[i] && i < sizeof(m->buf) - 1; i++)
		m->buf[i] = w[i] > 0 && w[i] < 0x7f ? (char)w[i] : '?';
	m->buf[i] = '\0';
	m->s = m->buf;
	m->len = i;
}

static void from_ascii(const char *s, struct msg *m)
{
	m->s = s ? s : "";
	m->len = s ? strlen(s) : 0;
}

static void from_attr(const nvtxEventAttributes_t *a, struct msg *m)
{
	m->s = "";
	m->len = 0;
	if (!a)
		return;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		from_ascii(a->message.ascii, m);
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		from_wide(a->message.unicode, m);
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED: /* our handle: a copy of the string */
		from_ascii((const char *)a->message.registered, m);
		break;
	default:
		break;
	}
}

/* ---- records ---- */

/* A step marker counted in real time; the writer stops tracing after the window. */
static void check_step(const struct msg *m, int64_t ts)
{
	struct orr__window *w = orr__host_window();
	int64_t step;

	if (!w || !w->windowed || m->len <= w->prefix_len ||
	    memcmp(m->s, w->prefix, w->prefix_len) != 0)
		return;
	step = orr__window_step_of(w, m->s, m->len);
	if (step >= 0 && orr__window_marker(w, step, ts))
		orr__host_window_over();
}

static void mark(nvtxDomainHandle_t domain, const struct msg *m)
{
	int64_t ts;

	if (!orr__nvtx_on())
		return;
	ts = orr__now_ns();
	orr__nvtx_put(ORR__MARKER_INSTANT, ts, 0, (const char *)domain, m->s, m->len);
	check_step(m, ts);
}

static void start(nvtxDomainHandle_t domain, const struct msg *m, uint64_t id)
{
	int64_t ts;

	if (!id)
		return;
	ts = orr__now_ns();
	orr__nvtx_put(ORR__MARKER_START, ts, id, (const char *)domain, m->s, m->len);
	check_step(m, ts);
}

static void end(uint64_t id)
{
	if (id && orr__nvtx_on())
		orr__nvtx_put(ORR__MARKER_END, orr__now_ns(), id, NULL, NULL, 0);
}

static nvtxRangeId_t range_start(nvtxDomainHandle_t domain, const struct msg *m)
{
	uint64_t id;

	if (!orr__nvtx_on())
		return 0;
	id = orr__nvtx_new_id();
	start(domain, m, id);
	return id;
}

static int range_push(nvtxDomainHandle_t domain, const struct msg *m)
{
	int depth;

	if (!orr__nvtx_on())
		return -1;
	start(domain, m, orr__nvtx_push(domain, &depth));
	return depth;
}

static int range_pop(nvtxDomainHandle_t domain)
{
	int depth;

	if (!orr__nvtx_on())
		return -1;
	end(orr__nvtx_pop(domain, &depth));
	return depth;
}

/* ---- core ---- */

static void NVTX_API mark_ex(const nvtxEventAttributes_t *a)
{
	struct msg m;

	from_attr(a, &m);
	mark(NULL, &m);
}

static void NVTX_API mark_a(const char *s)
{
	struct msg m;

	from_ascii(s, &m);
	mark(NULL, &m);
}

static void NVTX_API mark_w(const wchar_t *s)
{
	struct msg m;

	from_wide(s, &m);
	mark(NULL, &m);
}

static nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t *a)
{
	struct msg m;

	from_attr(a, &m);
	return range_start(NULL, &m);
}

static nvtxRangeId_t NVTX_API range_start_a(const char *s)
{
	struct msg m;

	from_ascii(s, &m);
	return range_start(NULL, &m);
}

static nvtxRangeId_t NVTX_API range_start_w(const wchar_t *s)
{
	struct msg m;

	from_wide(s, &m);
	return range_start(NULL, &m);
}

static void NVTX_API range_end(nvtxRangeId_t id)
{
	end(id);
}

static int NVTX_API range_push_ex(const nvtxEventAttributes_t *a)
{
	struct msg m;

	from_attr(a, &m);
	return range_push(NULL, &m);
}

static int NVTX_API range_push_a(const char *s)
{
	struct msg m;

	from_ascii(s, &m);
	return range_push(NULL, &m);
}

static int NVTX_API range_push_w(const wchar_t *s)
{
	struct msg m;

	from_wide(s, &m);
	return range_push(NULL, &m);
}

static int NVTX_API range_pop_default(void)
{
	return range_pop(NULL);
}

static void name_thread(uint32_t tid, const struct msg *m)
{
	if (orr__nvtx_on() && m->len)
		orr__nvtx_put(ORR__NVTX_THREAD_NAME, orr__now_ns(), tid, NULL, m->s, m->len);
}

static void NVTX_API name_thread_a(uint32_t tid, const char *s)
{
	struct msg m;

	from_ascii(s, &m);
	name_thread(tid, &m);
}

static void NVTX_API name_thread_w(uint32_t tid, const wchar_t *s)
{
	struct msg m;

	from_wide(s, &m);
	name_thread(tid, &m);
}

/* ---- core2: domains ---- */

static void NVTX_API domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct msg m;

	from_attr(a, &m);
	mark(d, &m);
}

static nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t d,
						    const nvtxEventAttributes_t *a)
{
	struct msg m;

	from_attr(a, &m);
	return range_start(d, &m);
}

static void NVTX_API domain_range_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	end(id);
}

/* The first extended payload of the attributes (NVTX_PAYLOAD_EVTATTR_SET_DATA's layout). */
static bool ext_payload(const nvtxEventAttributes_t *a, struct orr__nvtx_payload *ret)
{
	if (!a || a->payloadType != NVTX_PAYLOAD_TYPE_EXT || a->reserved0 < 1 ||
	    !a->payload.ullValue)
		return false;
	memcpy(ret, (const void *)(uintptr_t)a->payload.ullValue, sizeof(*ret));
	return true;
}

/* An NCCL call: numbered, and its id pushed to CUPTI while its range is open. */
static void nccl_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct orr__nccl *nccl = orr__host_nccl();
	struct orr__nvtx_payload pd;
	struct orr__nccl_call c;
	uint64_t id;
	bool pushed = false;

	if (!nccl)
		return;
	if (ext_payload(a, &pd) && orr__nccl_decode(&pd, &c)) {
		atomic_store(&nccl_domain, d);
		id = orr__nccl_add(nccl, &c);
		if (id && !orr__nccl_range_full())
			pushed = orr__host_push_external(id);
		orr__nccl_range_push(pushed);
		return;
	}
	if (d && d == atomic_load(&nccl_domain))
		orr__nccl_range_push(false);
}

static int NVTX_API domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct msg m;

	if (!orr__nvtx_on())
		return -1;
	nccl_push(d, a);
	from_attr(a, &m);
	return range_push(d, &m);
}

static int NVTX_API domain_range_pop(nvtxDomainHandle_t d)
{
	if (orr__nvtx_on() && d && d == atomic_load(&nccl_domain) && orr__nccl_range_pop())
		orr__host_pop_external();
	return range_pop(d);
}

/*
 * A handle is a copy of the string, never freed (records refer to it), on a list so
 * that it stays reachable (leak checkers) when the job drops the handle.
 */
struct kept {
	struct kept *next;
	char s[];
};

static _Atomic(struct kept *) kept_list;

static char *keep(const char *s, size_t len)
{
	struct kept *k = orr__talloc(sizeof(*k) + len + 1);

	if (!k)
		return NULL;
	memcpy(k->s, s, len);
	k->s[len] = '\0';
	k->next = atomic_load(&kept_list);
	while (!atomic_compare_exchange_weak(&kept_list, &k->next, k))
		;
	return k->s;
}

static char *keep_ascii(const char *s)
{
	return s ? keep(s, strlen(s)) : NULL;
}

static char *keep_wide(const wchar_t *s)
{
	struct msg m;

	if (!s)
		return NULL;
	from_wide(s, &m);
	return keep(m.s, m.len);
}

static nvtxStringHandle_t NVTX_API register_string_a(nvtxDomainHandle_t d, const char *s)
{
	return (nvtxStringHandle_t)keep_ascii(s);
}

static nvtxStringHandle_t NVTX_API register_string_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	return (nvtxStringHandle_t)keep_wide(s);
}

static nvtxDomainHandle_t NVTX_API domain_create_a(const char *name)
{
	return (nvtxDomainHandle_t)keep_ascii(name);
}

static nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t *name)
{
	return (nvtxDomainHandle_t)keep_wide(name);
}

static void NVTX_API domain_destroy(nvtxDomainHandle_t d)
{
	/* Kept: records written before may still name it. */
}

/* ---- the tables ---- */

struct slot {
	unsigned id;
	NvtxFunctionPointer fn;
};

#define SLOT(id, fn)                          \
	{                                     \
		id, (NvtxFunctionPointer)(fn) \
	}

static const struct slot core[] = {
	SLOT(NVTX_CBID_CORE_MarkEx, mark_ex),
	SLOT(NVTX_CBID_CORE_MarkA, mark_a),
	SLOT(NVTX_CBID_CORE_MarkW, mark_w),
	SLOT(NVTX_CBID_CORE_RangeStartEx, range_start_ex),
	SLOT(NVTX_CBID_CORE_RangeStartA, range_start_a),
	SLOT(NVTX_CBID_CORE_RangeStartW, range_start_w),
	SLOT(NVTX_CBID_CORE_RangeEnd, range_end),
	SLOT(NVTX_CBID_CORE_RangePushEx, range_push_ex),
	SLOT(NVTX_CBID_CORE_RangePushA, range_push_a),
	SLOT(NVTX_CBID_CORE_RangePushW, range_push_w),
	SLOT(NVTX_CBID_CORE_RangePop, range_pop_default),
	SLOT(NVTX_CBID_CORE_NameOsThreadA, name_thread_a),
	SLOT(NVTX_CBID_CORE_NameOsThreadW, name_thread_w),
};

static const struct slot core2[] = {
	SLOT(NVTX_CBID_CORE2_DomainMarkEx, domain_mark_ex),
	SLOT(NVTX_CBID_CORE2_DomainRangeStartEx, domain_range_start_ex),
	SLOT(NVTX_CBID_CORE2_DomainRangeEnd, domain_range_end),
	SLOT(NVTX_CBID_CORE2_DomainRangePushEx, domain_range_push_ex),
	SLOT(NVTX_CBID_CORE2_DomainRangePop, domain_range_pop),
	SLOT(NVTX_CBID_CORE2_DomainRegisterStringA, register_string_a),
	SLOT(NVTX_CBID_CORE2_DomainRegisterStringW, register_string_w),
	SLOT(NVTX_CBID_CORE2_DomainCreateA, domain_create_a),
	SLOT(NVTX_CBID_CORE2_DomainCreateW, domain_create_w),
	SLOT(NVTX_CBID_CORE2_DomainDestroy, domain_destroy),
};

/* Fills one module's table of this instance; false when the instance does not have it. */
static bool fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
		 const struct slot *slots, size_t n)
{
	NvtxFunctionTable table = NULL;
	unsigned size = 0;

	if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
		return false;
	for (size_t i = 0; i < n; i++)
		if (slots[i].id < size && table[slots[i].id])
			*table[slots[i].id] = slots[i].fn;
	return true;
}

/*
 * Called by each NVTX instance at its first NVTX call.  Returns 0 (NVTX then makes every
 * call of that instance a no-op) when tracing is off or the instance's table cannot be
 * had, else 1.
 */
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
	const NvtxExportTableCallbacks *cb;

	if (!get_table || !orr__host_start())
		return 0;
	cb = get_table(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable) {
		orr__log("an NVTX instance has no callback table: its ranges are not recorded");
		return 0;
	}
	if (!fill(cb, NVTX_CB_MODULE_CORE, core, sizeof(core) / sizeof(core[0]))) {
		orr__log("an NVTX instance has no core table: its ranges are not recorded");
		return 0;
	}
	fill(cb, NVTX_CB_MODULE_CORE2, core2, sizeof(core2) / sizeof(core2[0]));
	return 1;
}

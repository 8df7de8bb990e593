/* SPDX-License-Identifier: MIT */
/*
 * CUDA 12.9 and 13 activity records -> struct orr__trec.  This file reads CUPTI's record
 * structs but calls no CUPTI function, so the tests link it without libcupti.  A record
 * is cast, by its kind, only to the struct of the CUPTI headers the tracer was built with
 * (tracer/cupti.c refuses to run with a libcupti of another version): Kernel10 (13.x) or
 * Kernel9 (12.9), API, Memcpy6, MemcpyPtoP4, Memset4, Synchronization2, CudaEvent2,
 * ExternalCorrelation, Marker2, MarkerData2 (13.x) or MarkerData (12.9), Overhead3,
 * Device5, Context3, Stream, Name: the structs CUPTI 12.9's and 13.0's headers name as
 * the ones their records use (docs/tracer.md, "CUDA versions").  Also the NVTX
 * callback's parameters of nvtxDomainRangePushEx, for NCCL's payloads.
 */
#include <string.h>

#include <cupti_activity.h>
#include <cupti_version.h>
#include <generated_nvtx_meta.h>

#include "internal.h"
#include "banned.h"

#if CUPTI_API_VERSION >= 130000
_Static_assert(CUPTI_API_VERSION < 130200,
	       "cupti-records.c reads the record structs of CUPTI 13.0 and 13.1 (13.2: Kernel11)");
typedef CUpti_ActivityKernel10 kernel_record;
typedef CUpti_ActivityMarkerData2 marker_data_record;
#else
/* CUPTI_API_VERSION 27 is CUDA 12.9, 28 its Update 1 (cupti_version.h). */
_Static_assert(CUPTI_API_VERSION >= 27 && CUPTI_API_VERSION <= 28,
	       "cupti-records.c reads the record structs of CUPTI 12.9 (API 27, 28) and 13.0/13.1");
typedef CUpti_ActivityKernel9 kernel_record;
typedef CUpti_ActivityMarkerData marker_data_record;
#endif

static void api(const CUpti_ActivityAPI *a, struct orr__trec *r)
{
	r->kind = a->kind == CUPTI_ACTIVITY_KIND_DRIVER ? ORR__TREC_DRIVER : ORR__TREC_RUNTIME;
	r->cbid = a->cbid;
	r->start_ns = (int64_t)a->start;
	r->end_ns = (int64_t)a->end;
	r->pid = a->processId;
	r->tid = a->threadId;
	r->correlation = a->correlationId;
}

/* A launch dimension or size; CUPTI's are signed, and never negative in practice. */
static uint32_t dim(int32_t v)
{
	return v > 0 ? (uint32_t)v : 0;
}

static void kernel(const kernel_record *k, struct orr__trec *r)
{
	r->kind = ORR__TREC_KERNEL;
	r->start_ns = (int64_t)k->start;
	r->end_ns = (int64_t)k->end;
	r->device = k->deviceId;
	r->context = k->contextId;
	r->stream = k->streamId;
	r->correlation = k->correlationId;
	r->name = k->name;
	r->graph_node = k->graphNodeId;
	r->graph_id = k->graphId;
	r->launch = (struct orr_kernel_args){
		.grid = { dim(k->gridX), dim(k->gridY), dim(k->gridZ) },
		.block = { dim(k->blockX), dim(k->blockY), dim(k->blockZ) },
		.shared_bytes = dim(k->staticSharedMemory) + dim(k->dynamicSharedMemory),
		.registers = k->registersPerThread,
	};
}

static void memcpy6(const CUpti_ActivityMemcpy6 *m, struct orr__trec *r)
{
	r->kind = ORR__TREC_MEMCPY;
	r->copy_kind = m->copyKind;
	r->src_kind = m->srcKind;
	r->dst_kind = m->dstKind;
	r->bytes = m->bytes > INT64_MAX ? INT64_MAX : (int64_t)m->bytes;
	r->start_ns = (int64_t)m->start;
	r->end_ns = (int64_t)m->end;
	r->device = m->deviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	/* The driver call's id, else the runtime call's (capture.md 1.2). */
	r->correlation = m->correlationId ? m->correlationId : m->runtimeCorrelationId;
	r->graph_node = m->graphNodeId;
	r->graph_id = m->graphId;
}

static void memcpy_p2p(const CUpti_ActivityMemcpyPtoP4 *m, struct orr__trec *r)
{
	r->kind = ORR__TREC_MEMCPY;
	r->copy_kind = m->copyKind;
	r->src_kind = m->srcKind;
	r->dst_kind = m->dstKind;
	r->bytes = m->bytes > INT64_MAX ? INT64_MAX : (int64_t)m->bytes;
	r->start_ns = (int64_t)m->start;
	r->end_ns = (int64_t)m->end;
	r->device = m->deviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	r->correlation = m->correlationId;
	r->graph_node = m->graphNodeId;
	r->graph_id = m->graphId;
}

static void memset4(const CUpti_ActivityMemset4 *m, struct orr__trec *r)
{
	r->kind = ORR__TREC_MEMSET;
	r->dst_kind = (uint8_t)m->memoryKind;
	r->bytes = m->bytes > INT64_MAX ? INT64_MAX : (int64_t)m->bytes;
	r->start_ns = (int64_t)m->start;
	r->end_ns = (int64_t)m->end;
	r->device = m->deviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	r->correlation = m->correlationId;
	r->graph_node = m->graphNodeId;
	r->graph_id = m->graphId;
}

static void sync2(const CUpti_ActivitySynchronization2 *s, struct orr__trec *r)
{
	static const uint8_t kinds[] = {
		[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN] = ORR_SYNC_UNKNOWN,
		[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE] = ORR_SYNC_EVENT,
		[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT] = ORR_SYNC_STREAM_WAIT,
		[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE] = ORR_SYNC_STREAM,
		[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE] = ORR_SYNC_CONTEXT,
	};

	r->kind = ORR__TREC_SYNC;
	r->sync_kind = (unsigned)s->type < sizeof(kinds) ? kinds[s->type] : ORR_SYNC_UNKNOWN;
	r->start_ns = (int64_t)s->start;
	r->end_ns = (int64_t)s->end;
	r->correlation = s->correlationId;
	r->context = s->contextId;
	r->stream = s->streamId;
	r->event_id = s->cudaEventId;
	r->sync_id = s->cudaEventSyncId;
}

static void cuda_event2(const CUpti_ActivityCudaEvent2 *e, struct orr__trec *r)
{
	r->kind = ORR__TREC_CUDA_EVENT;
	r->correlation = e->correlationId;
	r->context = e->contextId;
	r->stream = e->streamId;
	r->event_id = e->eventId;
	r->device = e->deviceId;
	r->sync_id = e->cudaEventSyncId;
}

static void marker2(const CUpti_ActivityMarker2 *m, struct orr__trec *r)
{
	r->kind = ORR__TREC_MARKER;
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS)
		r->marker = ORR__MARKER_INSTANT;
	else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START)
		r->marker = ORR__MARKER_START;
	else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END)
		r->marker = ORR__MARKER_END;
	r->start_ns = (int64_t)m->timestamp;
	r->end_ns = r->start_ns;
	r->id = m->id;
	if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
	    m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
		r->pid = m->objectId.pt.processId;
		r->tid = m->objectId.pt.threadId;
	}
	r->name = m->name;
	r->domain = m->domain;
}

static void device5(const CUpti_ActivityDevice5 *d, struct orr__trec *r)
{
	r->kind = ORR__TREC_DEVICE;
	r->device = d->id;
	r->name = d->name;
	r->num_sms = (int32_t)d->numMultiprocessors;
	r->cc_major = (int32_t)d->computeCapabilityMajor;
	r->cc_minor = (int32_t)d->computeCapabilityMinor;
	r->mem_bytes = d->globalMemorySize > INT64_MAX ? INT64_MAX : (int64_t)d->globalMemorySize;
}

static void name(const CUpti_ActivityName *n, struct orr__trec *r)
{
	if (n->objectKind != CUPTI_ACTIVITY_OBJECT_THREAD)
		return; /* devices, contexts and streams named by NVTX: not in the model */
	r->kind = ORR__TREC_NAME;
	r->pid = n->objectId.pt.processId;
	r->tid = n->objectId.pt.threadId;
	r->name = n->name;
}

/* Kinds with a small body, and those the pipeline only counts. */
static void other(const CUpti_Activity *a, struct orr__trec *r)
{
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		r->kind = ORR__TREC_EXT_CORR;
		r->correlation = ((const CUpti_ActivityExternalCorrelation *)a)->correlationId;
		r->id = ((const CUpti_ActivityExternalCorrelation *)a)->externalId;
		break;
	case CUPTI_ACTIVITY_KIND_MARKER_DATA:
		r->kind = ORR__TREC_MARKER_DATA;
		r->id = ((const marker_data_record *)a)->id;
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		r->kind = ORR__TREC_OVERHEAD;
		r->overhead_kind = ((const CUpti_ActivityOverhead3 *)a)->overheadKind;
		r->start_ns = (int64_t)((const CUpti_ActivityOverhead3 *)a)->start;
		r->end_ns = (int64_t)((const CUpti_ActivityOverhead3 *)a)->end;
		break;
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		r->kind = ORR__TREC_CONTEXT;
		r->context = ((const CUpti_ActivityContext3 *)a)->contextId;
		r->device = ((const CUpti_ActivityContext3 *)a)->deviceId;
		break;
	case CUPTI_ACTIVITY_KIND_STREAM:
		r->kind = ORR__TREC_STREAM;
		r->context = ((const CUpti_ActivityStream *)a)->contextId;
		r->stream = ((const CUpti_ActivityStream *)a)->streamId;
		r->correlation = ((const CUpti_ActivityStream *)a)->correlationId;
		break;
	default:
		break;
	}
}

bool orr__cupti_translate(const void *record, struct orr__trec *r)
{
	const CUpti_Activity *a = record;

	*r = (struct orr__trec){ .event_id = ORR__INVALID32, .sync_id = ORR__INVALID32 };
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		api(record, r);
		break;
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		kernel(record, r);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		memcpy6(record, r);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		memcpy_p2p(record, r);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		memset4(record, r);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		sync2(record, r);
		break;
	case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
		cuda_event2(record, r);
		break;
	case CUPTI_ACTIVITY_KIND_MARKER:
		marker2(record, r);
		break;
	case CUPTI_ACTIVITY_KIND_DEVICE:
		device5(record, r);
		break;
	case CUPTI_ACTIVITY_KIND_NAME:
		name(record, r);
		break;
	default:
		other(a, r);
		break;
	}
	return r->kind != ORR__TREC_NONE;
}

#ifndef NVTX_PAYLOAD_TYPE_EXT /* nvtx3/nvToolsExtPayload.h */
#define NVTX_PAYLOAD_TYPE_EXT ((int32_t)0xDFBD0009)
#endif

bool orr__cupti_nvtx_payload(const void *params, struct orr__nvtx_payload *ret)
{
	const nvtxEventAttributes_t *a =
		((const nvtxDomainRangePushEx_params *)params)->core.eventAttrib;

	if (!a || a->payloadType != NVTX_PAYLOAD_TYPE_EXT || a->reserved0 < 1 ||
	    !a->payload.ullValue)
		return false;
	memcpy(ret, (const void *)(uintptr_t)a->payload.ullValue, sizeof(*ret));
	return true;
}

/* SPDX-License-Identifier: MIT */
/*
 * A second shared library with its own NVTX3 instance (as libtorch_cuda carries one):
 * ops named as PyTorch's emit_nvtx names them, from two threads of its own, in every
 * form the NVTX3 headers offer (push/pop ASCII and Ex, start/end, a mark, a domain with a
 * registered string), and NCCL's ranges with their extended payloads.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define NVTX_POINTER_AS_PAYLOAD_ULLVALUE(p) ((uint64_t)(uintptr_t)(p))
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include "nvtx-job.h"

struct job {
	int step, thread, nops;
};

static void *ops_thread(void *arg)
{
	const struct job *j = arg;
	nvtxDomainHandle_t d = nvtxDomainCreateA("ops");
	nvtxStringHandle_t reg = nvtxDomainRegisterStringA(d, "registered-op");
	nvtxEventAttributes_t a = { .version = NVTX_VERSION,
				    .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE };
	char name[160];
	nvtxRangeId_t id;

	for (int i = 0; i < j->nops; i++) {
		snprintf(name, sizeof(name),
			 "op-%d-%d-%d, seq = %d, op_id = %d, sizes = [[4, 8], [8, 2]], "
			 "input_op_ids = [(0, 0), (0, 0)]",
			 j->step, j->thread, i, i, j->step * 1000 + j->thread * 100 + i);
		if (i % 2) {
			nvtxRangePushA(name);
		} else {
			a.messageType = NVTX_MESSAGE_TYPE_ASCII;
			a.message.ascii = name;
			nvtxRangePushEx(&a);
		}
		nvtxRangePop();
	}
	snprintf(name, sizeof(name), "startend-%d-%d", j->step, j->thread);
	id = nvtxRangeStartA(name);
	snprintf(name, sizeof(name), "mark-%d-%d", j->step, j->thread);
	nvtxMarkA(name);
	nvtxRangeEnd(id);
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = reg;
	nvtxDomainRangePushEx(d, &a);
	nvtxDomainRangePop(d);
	return NULL;
}

void nvtx_ops_run(int step, int nops)
{
	struct job jobs[2] = { { step, 0, nops }, { step, 1, nops } };
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, ops_thread, &jobs[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

/* A range on NCCL's domain with one extended payload of schema NVTX_SID_<sid>. */
static void nccl_range(nvtxDomainHandle_t d, const char *call, uint64_t sid, const void *p,
		       size_t size)
{
	nvtxEventAttributes_t a = { .version = NVTX_VERSION,
				    .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE };
	nvtxPayloadData_t pd;

	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = nvtxDomainRegisterStringA(d, call);
	NVTX_PAYLOAD_EVTATTR_SET_DATA(a, &pd, NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + sid, p, size);
	nvtxDomainRangePushEx(d, &a);
	nvtxDomainRangePop(d);
}

void nvtx_ops_nccl_init(uint64_t comm, int nranks, int rank)
{
	/* NCCL's payload struct (nvtx_payload_schemas.h of NCCL 2.25+). */
	struct {
		uint64_t newcomm;
		int nranks, myrank, cudaDev;
	} init = { comm, nranks, rank, 0 };

	nccl_range(nvtxDomainCreateA("NCCL"), "ncclCommInitRank", 0, &init, sizeof(init));
}

void nvtx_ops_allreduce(uint64_t comm, uint64_t bytes)
{
	struct {
		uint64_t comm;
		size_t bytes;
		int op;
	} ar = { comm, bytes, 0 };

	nccl_range(nvtxDomainCreateA("NCCL"), "ncclAllReduce", 5, &ar, sizeof(ar));
}

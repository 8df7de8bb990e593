/* SPDX-License-Identifier: MIT */
/*
 * The Kineto JSON importer's collectives, through the public API only: record_param_comms
 * and NCCL/RCCL kernels' args, the process group's members (cut lists, start and stride).
 * The other fields are in test-traces-kineto.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/trace.h"

#define BASE_NS 1000000000LL

#include "kineto-test.h"

static void test_one_record_param_comms_is_a_collective(void **state)
{
	struct orr_trace *t = import_str(
		"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {\"External id\": 9,"
		" \"Process Group Name\": \"0\", \"Out msg nelems\": 2049000,"
		" \"Process Group Ranks\": \"[0, 1]\", \"Group size\": 2, \"In msg nelems\": 2049000,"
		" \"dtype\": \"Float\", \"Process Group Description\": \"default_pg\","
		" \"Seq\": 3, \"Collective name\": \"allreduce\"}}]");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *e = event_named(t, r, "record_param_comms");
	const struct orr_collective *c;

	assert_true(e->coll < r->ncollectives);
	c = &r->collectives[e->coll];
	assert_string_equal(orr_trace_str(t, c->type), "allreduce");
	assert_string_equal(orr_trace_str(t, c->dtype), "Float");
	assert_string_equal(orr_trace_str(t, c->pg_name), "0");
	assert_string_equal(orr_trace_str(t, c->pg_desc), "default_pg");
	assert_int_equal(c->in_nelems, 2049000);
	assert_int_equal(c->out_nelems, 2049000);
	assert_int_equal(c->in_bytes, 2049000 * 4);
	assert_int_equal(c->out_bytes, 2049000 * 4);
	assert_int_equal(c->group_size, 2);
	assert_int_equal(c->sequence, 3);
	assert_int_equal(c->src_rank, -1);
	assert_int_equal(c->nmembers, 2);
	assert_int_equal(r->members[c->first_member], 0);
	assert_int_equal(r->members[c->first_member + 1], 1);
	orr_trace_free(t);
}

/*
 * PyTorch cuts a list of more than 30 ranks, "[0, 1, ..., 29, ...]" (format_list(),
 * torch/csrc/profiler/util.cpp): those 30 are not the group, so no members are read,
 * neither from the op's args nor from distributedInfo's pg_config, and each is counted.
 */
static void test_one_truncated_ranks_are_no_members(void **state)
{
	struct orr_trace *t = import_str(
		"{\"distributedInfo\": {\"rank\": 0, \"world_size\": 64, \"pg_config\":"
		" [{\"pg_name\": \"0\", \"pg_size\": 64, \"ranks\": \"[0, 1, 2, 29, ...]\"}]},"
		" \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\","
		" \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {\"Process Group Name\":"
		" \"0\", \"Process Group Ranks\": \"[0, 1, 2, 29, ...]\", \"Group size\": 64,"
		" \"In msg nelems\": 8, \"dtype\": \"Float\", \"Collective name\": \"allreduce\"}}]}");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *e = event_named(t, r, "record_param_comms");
	const struct orr_collective *c;
	uint64_t ignored = 0;

	(void)state;
	assert_true(e->coll < r->ncollectives);
	c = &r->collectives[e->coll];
	assert_int_equal(c->group_size, 64);
	assert_int_equal(c->nmembers, 0);
	assert_int_equal(r->ncomms, 1);
	assert_int_equal(r->comms[0].size, 64);
	assert_int_equal(r->comms[0].nmembers, 0);
	for (size_t i = 0; i < r->ncoerced; i++)
		if (r->coerced[i].how == ORR_COERCION_IGNORED)
			ignored += r->coerced[i].count;
	assert_int_equal(ignored, 2);
	orr_trace_free(t);
}

/*
 * The members a cut list does not give come from "Global rank start" and "Global rank
 * stride" (PyTorch's getGlobalRankStartAndStride()): a DP group of 40 ranks 8 apart,
 * its second collective sharing the first's range; ranks not evenly spaced (stride -1)
 * give none.
 */
static void test_one_strided_ranks_give_members(void **state)
{
#define COLL(stride)                                                                           \
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 1,"   \
	" \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {\"Process Group Name\": \"5\","        \
	" \"Process Group Ranks\": \"[3, 11, 19, ...]\", \"Group size\": 40,"                  \
	" \"Global rank start\": 3, \"Global rank stride\": " stride ", \"In msg nelems\": 8," \
	" \"dtype\": \"Float\", \"Collective name\": \"allreduce\"}}"
	struct orr_trace *t = import_str("[" COLL("8") ", " COLL("8") ", " COLL("-1") "]");
#undef COLL
	const struct orr_rank *r = orr_trace_get_rank(t, 0);

	(void)state;
	assert_int_equal(r->ncollectives, 3);
	assert_int_equal(r->collectives[0].nmembers, 40);
	assert_int_equal(r->members[r->collectives[0].first_member], 3);
	assert_int_equal(r->members[r->collectives[0].first_member + 39], 3 + 39 * 8);
	assert_int_equal(r->collectives[1].nmembers, 40);
	assert_int_equal(r->collectives[1].first_member, r->collectives[0].first_member);
	assert_int_equal(r->collectives[2].nmembers, 0);
	assert_int_equal(r->nmembers, 40);
	orr_trace_free(t);
}

static void test_one_nccl_kernel_name_gives_collective(void **state)
{
	struct orr_trace *t = import_str(
		"[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\":"
		" \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)\","
		" \"pid\": 0, \"tid\": 20, \"ts\": 1, \"dur\": 2},"
		" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\":"
		" \"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)\","
		" \"pid\": 0, \"tid\": 20, \"ts\": 5, \"dur\": 2},"
		" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7,"
		" \"ts\": 1, \"dur\": 2}]");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const char *sendrecv = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned "
			       "long, ncclWork*)";
	const struct orr_collective *c;

	assert_int_equal(r->ncollectives, 2);
	c = &r->collectives[event_named(t, r,
					"ncclDevKernel_AllReduce_Sum_f32_RING_LL("
					"ncclDevKernelArgsStorage<4096ul>)")
				    ->coll];
	assert_string_equal(orr_trace_str(t, c->type), "AllReduce");
	assert_int_equal(c->in_nelems, -1);
	assert_int_equal(c->in_bytes, -1);
	assert_int_equal(c->nmembers, 0);
	c = &r->collectives[event_named(t, r, sendrecv)->coll];
	assert_string_equal(orr_trace_str(t, c->type), "SendRecv");
	assert_int_equal(event_named(t, r, "gemm")->coll, ORR_NONE);
	orr_trace_free(t);
}

/*
 * RCCL on ROCm: a kernel whose name says nothing of the collective
 * (ncclDevKernel_Generic_N) takes it from its args, as PyTorch's profiler writes them
 * (some integers as strings), and its hipExtLaunchKernel launch is linked to it.
 */
static void test_one_rccl_kernel_takes_its_collective_args(void **state)
{
	struct orr_trace *t = import_str(
		"[{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"hipExtLaunchKernel\","
		" \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {\"correlation\": 5}},"
		" {\"ph\": \"X\", \"cat\": \"kernel\","
		" \"name\": \"ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)\","
		" \"pid\": 2, \"tid\": 1, \"ts\": 4, \"dur\": 20, \"args\": {\"correlation\": 5,"
		" \"stream\": \"0x1\", \"device\": 2, \"Collective name\": \"allreduce\","
		" \"In msg nelems\": \"1048576\", \"Out msg nelems\": 1048576,"
		" \"dtype\": \"BFloat16\", \"Group size\": 8, \"Process Group Name\": \"0\","
		" \"Seq\": \"7\"}},"
		" {\"ph\": \"X\", \"cat\": \"kernel\","
		" \"name\": \"ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)\","
		" \"pid\": 2, \"tid\": 1, \"ts\": 30, \"dur\": 20, \"args\": {\"stream\": 1}}]");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *launch = event_named(t, r, "hipExtLaunchKernel");
	const struct orr_collective *c;
	const struct orr_event *k = NULL;

	assert_int_equal(launch->sub, ORR_CALL_LAUNCH);
	for (size_t i = 0; i < r->nevents; i++)
		if (r->events[i].kind == ORR_EVENT_KERNEL && !k)
			k = &r->events[i];
	assert_non_null(k);
	assert_int_equal(k->correlation, launch->correlation);
	assert_true(k->coll < r->ncollectives);
	c = &r->collectives[k->coll];
	assert_string_equal(orr_trace_str(t, c->type), "allreduce");
	assert_string_equal(orr_trace_str(t, c->pg_name), "0");
	assert_int_equal(c->in_nelems, 1048576);
	assert_int_equal(c->in_bytes, 2 * 1048576);
	assert_int_equal(c->out_bytes, 2 * 1048576);
	assert_int_equal(c->group_size, 8);
	assert_int_equal(c->sequence, 7);
	/* Without args, the name is all there is: RCCL's generic kernel, of no known type. */
	c = &r->collectives[k[1].coll];
	assert_string_equal(orr_trace_str(t, c->type), "Generic");
	assert_int_equal(c->in_bytes, -1);
	orr_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_record_param_comms_is_a_collective),
		cmocka_unit_test(test_one_truncated_ranks_are_no_members),
		cmocka_unit_test(test_one_strided_ranks_give_members),
		cmocka_unit_test(test_one_nccl_kernel_name_gives_collective),
		cmocka_unit_test(test_one_rccl_kernel_takes_its_collective_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

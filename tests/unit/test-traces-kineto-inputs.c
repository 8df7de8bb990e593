/* SPDX-License-Identifier: MIT */
/*
 * The Kineto JSON importer's op inputs, through the public API only: dims and types,
 * the profiler's Concrete Inputs and Input Strides, lists of tensors and their bounds.
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

#include "kineto-test.h"

static void test_one_op_inputs_have_dims_and_types(void **state)
{
	struct orr_trace *t = import_str(
		"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1,"
		" \"ts\": 1, \"dur\": 2, \"args\": {\"External id\": 3, \"Sequence number\": 17,"
		" \"Input Dims\": [[4, 8], [8, 16], [], [[1, 2], [3]]],"
		" \"Input type\": [\"float\", \"c10::BFloat16\", \"Scalar\", \"TensorList\"]}},"
		" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 5, \"dur\": 1, \"args\": {\"External id\": 4}}]");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *mm = event_named(t, r, "aten::mm");
	const struct orr_op_args *op;
	const struct orr_input *in;

	assert_int_equal(mm->kind, ORR_EVENT_OP);
	assert_int_equal(mm->external_id, 3);
	assert_true(mm->args < r->nops);
	op = &r->ops[mm->args];
	assert_int_equal(op->sequence, 17);
	assert_int_equal(op->ninputs, 4);
	in = &r->inputs[op->first_input];
	assert_int_equal(in[0].ndims, 2);
	assert_int_equal(r->dims[in[0].first_dim], 4);
	assert_int_equal(r->dims[in[0].first_dim + 1], 8);
	assert_string_equal(orr_trace_str(t, in[0].dtype), "float");
	assert_int_equal(in[1].ndims, 2);
	assert_int_equal(r->dims[in[1].first_dim], 8);
	assert_int_equal(r->dims[in[1].first_dim + 1], 16);
	assert_string_equal(orr_trace_str(t, in[1].dtype), "c10::BFloat16");
	assert_int_equal(in[2].ndims, 0);
	assert_int_equal(in[2].is_list, 0);
	assert_string_equal(orr_trace_str(t, in[2].dtype), "Scalar");
	assert_int_equal(in[3].is_list, 1);
	assert_string_equal(orr_trace_str(t, in[3].dtype), "TensorList");
	/* an op with nothing to record has no side-table entry */
	assert_int_equal(event_named(t, r, "aten::empty")->args, ORR_NONE);
	orr_trace_free(t);
}

/*
 * "Concrete Inputs" (PyTorch 2.1+): each input's value string, kept with has_value; an
 * element that is not a string gives no value, an array of other things is ignored.
 */
static void test_one_op_keeps_its_concrete_inputs(void **state)
{
	struct orr_trace *t = import_str(
		"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {"
		" \"Concrete Inputs\": [\"\", \"[8, 1024]\", \"1.0000000000000001e-05\", 7, \"\"],"
		" \"Input type\": [\"float\", \"ScalarList\", \"Scalar\", \"Scalar\", \"\"],"
		" \"Input Dims\": [[4], [], [], [], []]}},"
		" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mul\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 5, \"dur\": 1, \"args\": {\"Concrete Inputs\": {\"x\": [1]},"
		" \"Input type\": [\"Scalar\"], \"Input Dims\": [[]]}}]");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *add = event_named(t, r, "aten::add");
	const struct orr_event *mul = event_named(t, r, "aten::mul");
	const struct orr_input *in;

	(void)state;
	assert_int_equal(r->ops[add->args].ninputs, 5);
	in = &r->inputs[r->ops[add->args].first_input];
	assert_int_equal(in[0].has_value, 1);
	assert_int_equal(in[0].value, ORR_STR_NONE);
	assert_int_equal(in[1].has_value, 1);
	assert_string_equal(orr_trace_str(t, in[1].value), "[8, 1024]");
	assert_string_equal(orr_trace_str(t, in[2].value), "1.0000000000000001e-05");
	assert_int_equal(in[3].has_value, 0); /* a number, not a string */
	assert_int_equal(in[3].value, ORR_STR_NONE);
	assert_int_equal(in[4].has_value, 1);
	assert_int_equal(in[4].value, ORR_STR_NONE);
	in = &r->inputs[r->ops[mul->args].first_input];
	assert_int_equal(in[0].has_value, 0);
	assert_string_equal(orr_trace_str(t, in[0].dtype), "Scalar");
	orr_trace_free(t);
}

/*
 * "Input Strides" (PyTorch 2.x): each tensor's strides kept beside its dims, a list of
 * tensors' members' shapes and strides as each one's count then its values; strides that
 * are not integers, or do not match their input's dims, are skipped, and a whole entry
 * that is not an array is counted as ignored.
 */
static void test_one_op_keeps_its_strides(void **state)
{
	struct orr_trace *t = import_str(
		"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {"
		" \"Input Strides\": [[1, 4096], [8, 1], [], [[6, 3, 1], [2, 1]], [1.5, 1], [1],"
		" [[1], 1]],"
		" \"Input type\": [\"c10::BFloat16\", \"float\", \"Scalar\", \"TensorList\","
		" \"float\", \"float\", \"float\"],"
		" \"Input Dims\": [[4096, 1024], [2, 8], [], [[4, 2, 3], [5, 2]], [2, 3], [2, 3],"
		" [2, 1]]}},"
		" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mul\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 5, \"dur\": 1, \"args\": {\"Input Strides\": {\"x\": [1]},"
		" \"Input type\": [\"float\"], \"Input Dims\": [[3]]}}]");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *mm = event_named(t, r, "aten::mm");
	const struct orr_event *mul = event_named(t, r, "aten::mul");
	const int64_t list_dims[] = { 3, 4, 2, 3, 2, 5, 2 },
		      list_strides[] = { 3, 6, 3, 1, 2, 2, 1 };
	const struct orr_input *in;

	(void)state;
	assert_int_equal(r->ops[mm->args].ninputs, 7);
	in = &r->inputs[r->ops[mm->args].first_input];
	assert_int_equal(in[0].nstrides, 2);
	assert_int_equal(r->strides[in[0].first_stride], 1);
	assert_int_equal(r->strides[in[0].first_stride + 1], 4096);
	assert_int_equal(in[1].nstrides, 2);
	assert_int_equal(r->strides[in[1].first_stride], 8);
	assert_int_equal(in[2].nstrides, 0);
	assert_int_equal(in[3].is_list, 1);
	assert_int_equal(in[3].ndims, 7);
	assert_memory_equal(r->dims + in[3].first_dim, list_dims, sizeof(list_dims));
	assert_int_equal(in[3].nstrides, 7);
	assert_memory_equal(r->strides + in[3].first_stride, list_strides, sizeof(list_strides));
	assert_int_equal(in[4].nstrides, 0); /* not integers */
	assert_int_equal(in[5].nstrides, 0); /* one stride for two dims */
	assert_int_equal(in[6].nstrides, 0); /* a list beside a tensor's dims */
	assert_int_equal(in[6].ndims, 2);
	in = &r->inputs[r->ops[mul->args].first_input];
	assert_int_equal(in[0].ndims, 1);
	assert_int_equal(in[0].nstrides, 0);
	assert_int_equal(r->ncoerced, 1);
	assert_string_equal(orr_trace_str(t, r->coerced[0].key), "Input Strides");
	assert_int_equal(r->coerced[0].how, ORR_COERCION_IGNORED);
	orr_trace_free(t);
}

/*
 * A list of tensors whose members take more than 65535 values: its members are not
 * kept (a list without recorded shapes), whereas 65535 values are; the next input's
 * dims are read as ever.
 */
static char *long_list(size_t members)
{
	static const char head[] =
		"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::cat\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {\"Input type\": [\"TensorList\","
		" \"float\"], \"Input Dims\": [[";
	static const char tail[] = "], [5]]}}]";
	size_t size = sizeof(head) + members * 12 + sizeof(tail), n = strlen(head);
	char *json = orr_xmalloc(size);

	memcpy(json, head, n);
	for (size_t i = 0; i < members; i++)
		n += (size_t)snprintf(json + n, size - n, "%s[7, 8]", i ? ", " : "");
	memcpy(json + n, tail, sizeof(tail));
	return json;
}

static void test_one_long_list_keeps_no_members(void **state)
{
	char *json = long_list(21845); /* 3 values each: 65535 */
	struct orr_trace *t = import_str(json);
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_input *in = &r->inputs[r->ops[r->events[0].args].first_input];

	(void)state;
	assert_int_equal(in[0].is_list, 1);
	assert_int_equal(in[0].ndims, 65535);
	assert_int_equal(r->dims[in[0].first_dim + 65532], 2);
	orr_trace_free(t);
	free(json);
	json = long_list(21846);
	t = import_str(json);
	r = orr_trace_get_rank(t, 0);
	in = &r->inputs[r->ops[r->events[0].args].first_input];
	assert_int_equal(in[0].is_list, 1);
	assert_int_equal(in[0].ndims, 0);
	assert_int_equal(in[1].ndims, 1);
	assert_int_equal(r->dims[in[1].first_dim], 5);
	assert_int_equal(r->ndims, 1);
	orr_trace_free(t);
	free(json);
}

/*
 * Strides are kept where they are written as the dims are: a tensor's strides written as
 * a list ([[1]], flattened as a count then its value, as many numbers as [4, 4]) and a
 * list's written as a tensor ([2, 3, 1] beside [[2, 3]], whose count 2 they happen to
 * start with) are not a stride per dimension; whichever of the two keys comes first.
 */
static void test_one_op_keeps_strides_of_its_dims_shape(void **state)
{
	struct orr_trace *t = import_str(
		"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {"
		" \"Input Strides\": [[[1]], [2, 3, 1], [4, 1], [[3, 1]]],"
		" \"Input type\": [\"float\", \"TensorList\", \"float\", \"TensorList\"],"
		" \"Input Dims\": [[4, 4], [[2, 3]], [2, 4], [[2, 3]]]}},"
		" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mul\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 5, \"dur\": 1, \"args\": {"
		" \"Input Dims\": [[4, 4], [[2, 3]]], \"Input Strides\": [[[1]], [2, 3, 1]]}}]");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_input *in;

	(void)state;
	for (int k = 0; k < 2; k++) {
		const struct orr_event *e = event_named(t, r, k ? "aten::mul" : "aten::add");

		in = &r->inputs[r->ops[e->args].first_input];
		assert_int_equal(in[0].is_list, 0);
		assert_int_equal(in[0].nstrides, 0); /* a list for a tensor */
		assert_int_equal(in[1].is_list, 1);
		assert_int_equal(in[1].nstrides, 0); /* a tensor for a list */
	}
	in = &r->inputs[r->ops[event_named(t, r, "aten::add")->args].first_input];
	assert_int_equal(in[2].nstrides, 2);
	assert_int_equal(in[3].is_list, 1);
	assert_int_equal(in[3].nstrides, 3);
	orr_trace_free(t);
}

/*
 * A list member of Input Dims or Input Strides is read to its end past a value that is
 * not kept (a string, 1.5): what follows it is checked as everything is, so unbalanced
 * brackets there are refused, not skipped.
 */
static void test_one_bad_list_member_is_read_to_its_end(void **state)
{
	static const char *const docs[] = {
		"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::cat\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {\"Input Strides\":"
		" [[[1.5, [}{]]]]}}]",
		"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::cat\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {\"Input Dims\":"
		" [[[\"x\", {]]]]}}]",
	};
	struct orr_diag d;

	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		assert_int_equal(import_err(docs[i], strlen(docs[i]), &d), ORR_EMALFORMED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_op_inputs_have_dims_and_types),
		cmocka_unit_test(test_one_op_keeps_its_concrete_inputs),
		cmocka_unit_test(test_one_op_keeps_its_strides),
		cmocka_unit_test(test_one_long_list_keeps_no_members),
		cmocka_unit_test(test_one_op_keeps_strides_of_its_dims_shape),
		cmocka_unit_test(test_one_bad_list_member_is_read_to_its_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

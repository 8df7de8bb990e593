/* SPDX-License-Identifier: MIT */
/*
 * Chakra files: malformed input read back as errors with their offsets, and the
 * project's sample written and read back node for node (the independent wire check is
 * tests/golden/check-chakra.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/chakra.h"
#include "test-util.h"

static int read_bytes(const char *bytes, size_t len, struct orr_chakra **c, struct orr_diag *d)
{
	return orr_chakra_read("t.et", bytes, len, c, d);
}

static void test_null_malformed_input_is_an_error(void **state)
{
	/* metadata {attr: {name: "a"}} = 12 03 0a 01 61, prefixed */
	static const struct {
		const char *bytes;
		size_t len;
		int err;
		int64_t offset;
	} cases[] = {
		{ "", 0, ORR_EEMPTY, 0 },
		{ "\x80\x80\x80\x80\x80\x01", 6, ORR_EMALFORMED, 0 }, /* a length over 5 bytes */
		{ "\x85", 1, ORR_EMALFORMED, 0 },                     /* cut in its length */
		{ "\x09\x12\x03", 3, ORR_EMALFORMED, 0 },             /* past the end */
		{ "\x05\x12\x03\x0a\x01\x61\x03\xff\xff\xff", 10, ORR_EMALFORMED,
		  6 },                                                        /* a bad node */
		{ "\x05\x12\x03\x0a\x01\x61\x01\x07", 8, ORR_EMALFORMED, 6 }, /* wire type 7 */
	};
	struct orr_chakra *c;
	struct orr_diag d;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(read_bytes(cases[i].bytes, cases[i].len, &c, &d), cases[i].err);
		assert_null(c);
		assert_int_equal(d.offset, cases[i].offset);
	}
	(void)state;
}

static void test_null_zero_length_ends_the_file(void **state)
{
	/* metadata, a node {id 1, name "n"}, a zero length, then anything */
	static const char bytes[] = "\x05\x12\x03\x0a\x01\x61\x05\x08\x01\x12\x01\x6e\x00\xff\xff";
	struct orr_chakra *c;
	struct orr_diag d;

	assert_int_equal(read_bytes(bytes, sizeof(bytes) - 1, &c, &d), 0);
	assert_int_equal(c->nnodes, 1);
	assert_int_equal(c->nodes[0].id, 1);
	assert_string_equal(c->nodes[0].name, "n");
	assert_int_equal(c->nodes[0].is_cpu_op, -1);
	assert_int_equal(c->nodes[0].comm_type, -1);
	assert_null(c->nodes[0].pg_name);
	assert_string_equal(c->version, "");
	assert_null(c->schema);
	orr_chakra_free(c);
	(void)state;
}

static bool has_dep(const struct orr_chakra_node *n, uint64_t id)
{
	for (size_t j = 0; j < n->ndata_deps; j++)
		if (n->data_deps[j] == id)
			return true;
	return false;
}

/* The sample written and read back: every task a node with its times and deps. */
static void test_one_sample_reads_back_node_for_node(void **state)
{
	const char *root = getenv("ORR_SOURCE_ROOT");
	char *sample = orr_xasprintf("%s/traces/samples/tiny-2rank", root ? root : ".");
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_diag d;
	size_t waits = 0;

	assert_int_equal(orr_trace_import(sample, NULL, &t, &d), 0);
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	for (size_t k = 0; k < orr_graph_rank_count(g); k++) {
		const struct orr_graph_rank *gr = orr_graph_get_rank(g, k);
		char *path = orr_xasprintf("%s/r%zu.et", (char *)*state, k);
		struct orr_chakra_stats st;
		struct orr_chakra *c;

		assert_int_equal(orr_chakra_write_rank(g, k, path, "test", NULL, 0, &st, &d), 0);
		assert_int_equal(orr_chakra_read_file(path, &c, &d), 0);
		assert_int_equal(c->nnodes, gr->ntasks);
		assert_int_equal(st.nodes, gr->ntasks);
		assert_int_equal(c->rank, gr->rank->rank);
		assert_string_equal(c->schema, "1.0.2-chakra.0.0.4");
		for (uint32_t i = 0; i < gr->ntasks; i++) {
			const struct orr_task *task = &orr_graph_tasks(g)[gr->first_task + i];
			const struct orr_chakra_node *n = &c->nodes[i];
			bool cpu = task->kind == ORR_TASK_CPU, on_gpu = false;

			assert_int_equal(n->id, i);
			assert_string_equal(n->name, orr_graph_task_name(g, gr->first_task + i));
			assert_int_equal(n->is_cpu_op, cpu);
			assert_int_equal(n->dur_ns, task->dur_ns);
			assert_int_equal(n->gap_ns, task->gap_ns);
			assert_int_equal(
				n->dur_us,
				((cpu ? task->dur_ns + task->gap_ns : task->dur_ns) + 500) / 1000);
			for (size_t j = 0; j < n->ndata_deps; j++)
				assert_true(n->data_deps[j] < c->nnodes && n->data_deps[j] != i);
			/* The call after a stream synchronize waits on the GPU work before it. */
			if (cpu && (task->flags & ORR_TASK_F_BLOCKING) &&
			    !strcmp(n->name, "cudaStreamSynchronize") && i + 1 < gr->ntasks &&
			    orr_graph_tasks(g)[gr->first_task + i + 1].proc == task->proc) {
				const struct orr_chakra_node *next = &c->nodes[i + 1];

				for (size_t j = 0; j < next->ndata_deps; j++)
					on_gpu |= c->nodes[next->data_deps[j]].is_cpu_op == 0;
				assert_true(on_gpu);
				waits++;
			}
			/* A GPU task depends on its launch. */
			if (!cpu && task->ndeps &&
			    orr_graph_deps(g)[task->first_dep].kind == ORR_DEP_LAUNCH)
				assert_true(has_dep(n, orr_graph_deps(g)[task->first_dep].src -
							       gr->first_task));
		}
		orr_chakra_free(c);
		free(path);
	}
	assert_true(waits > 0);
	orr_graph_free(g);
	orr_trace_free(t);
	free(sample);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_malformed_input_is_an_error),
		cmocka_unit_test(test_null_zero_length_ends_the_file),
		cmocka_unit_test_setup_teardown(test_one_sample_reads_back_node_for_node,
						tmpdir_setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

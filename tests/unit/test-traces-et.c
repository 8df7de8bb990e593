/* SPDX-License-Identifier: MIT */
/*
 * PyTorch execution traces: read in both schemas (1.0.x flat, 1.1.x-chakra), values by
 * kind (tensors, lists, scalars), linked to the ops of their rank's profiler trace, and
 * malformed or misplaced ones refused.  The shared pairs: ../shared/traces/et and kineto.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orrery/trace.h"
#include "test-util.h"
#include "capped-test.h"

static char *shared(const char *rel)
{
	const char *root = getenv("ORR_SHARED_TRACES");
	char *p = orr_xasprintf("%s/%s", root ? root : "../shared/traces", rel);
	struct stat st;

	if (stat(p, &st) < 0) {
		fprintf(stderr, "skipped: no %s\n", p);
		free(p);
		skip();
	}
	return p;
}

/* TRACE with the execution traces at ET (paths under the shared traces). */
static struct orr_trace *import_with_et(const char *trace, const char *et)
{
	char *tp = shared(trace), *ep = shared(et);
	struct orr_import_options o = { .et_path = ep };
	struct orr_trace *t = NULL;
	struct orr_diag d;
	int r = orr_trace_import(tp, &o, &t, &d);

	if (r)
		fail_msg("%s with %s: %s: %s", tp, ep, orr_errname(r), d.msg);
	free(tp);
	free(ep);
	return t;
}

static const struct orr_et_node *node_named(const struct orr_trace *t, const struct orr_et *et,
					    const char *name)
{
	for (size_t i = 0; i < et->nnodes; i++)
		if (!strcmp(orr_trace_str(t, et->nodes[i].name), name))
			return &et->nodes[i];
	fail_msg("no node '%s'", name);
	return NULL;
}

/* Schema 1.0.1: param's linear model, every op linked in order. */
static void test_one_flat_schema_reads_and_links(void **state)
{
	struct orr_trace *t =
		import_with_et("kineto/param-linear.json.gz", "et/param-linear-et.json.gz");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_et *et = r->et;
	const struct orr_et_node *n;
	const struct orr_et_value *v, *list;

	(void)state;
	assert_non_null(et);
	assert_string_equal(orr_trace_str(t, et->schema), "1.0.1");
	assert_int_equal(et->nnodes, 931);
	assert_int_equal(et->ops, 928);
	assert_int_equal(et->linked, 928);
	assert_true(et->exact);
	assert_int_equal(et->pid, 24248);
	/* aten::as_strided (id 12): a tensor, two lists of ints, None */
	n = node_named(t, et, "aten::as_strided");
	assert_int_equal(n->id, 12);
	assert_int_equal(n->parent, 11);
	assert_int_equal(n->rf_id, 4);
	assert_int_equal(n->tid, 1);
	assert_true(strstr(orr_trace_str(t, n->op_schema), "aten::as_strided(Tensor(a) self"));
	assert_int_equal(n->ninputs, 4);
	v = &et->values[n->first_input];
	assert_int_equal(v->kind, ORR_ET_TENSOR);
	assert_string_equal(orr_trace_str(t, v->type), "Tensor(float)");
	assert_int_equal(v->tensor_id, 5);
	assert_int_equal(v->storage_id, 6);
	assert_int_equal(v->offset, 0);
	assert_int_equal(v->numel, 1048576);
	assert_int_equal(v->itemsize, 4);
	assert_string_equal(orr_trace_str(t, v->device), "cuda:0");
	assert_int_equal(v->ndims, 2);
	assert_int_equal(et->dims[v->first_dim], 1024);
	list = &et->values[n->first_input + 2];
	assert_int_equal(list->kind, ORR_ET_LIST);
	assert_int_equal(list->nelems, 2);
	assert_int_equal(et->values[list->first_elem].kind, ORR_ET_INT);
	assert_string_equal(orr_trace_str(t, et->values[list->first_elem].type), "Int");
	assert_int_equal(et->values[list->first_elem].i, 1);
	assert_int_equal(et->values[list->first_elem + 1].i, 1024);
	assert_int_equal(et->values[n->first_input + 3].kind, ORR_ET_NONE);
	assert_int_equal(n->noutputs, 1);
	assert_int_equal(et->values[n->first_output].tensor_id, 13);
	/* linked to the op of the same name, and every linked node so */
	assert_true(n->event < r->nevents);
	for (size_t i = 0; i < et->nnodes; i++)
		if (et->nodes[i].event != ORR_NONE)
			assert_int_equal(r->events[et->nodes[i].event].name, et->nodes[i].name);
	orr_trace_free(t);
}

/* Schema 1.1.0-chakra: attrs, inputs objects, tuples; another run's profiler trace. */
static void test_one_chakra_schema_reads(void **state)
{
	struct orr_trace *t = import_with_et("kineto/hta-ddp-resnet-rank0.json.gz",
					     "et/param-resnet-2gpu-et.json.gz");
	const struct orr_et *et = orr_trace_get_rank(t, 0)->et;
	const struct orr_et_node *n;
	const struct orr_et_value *v;

	(void)state;
	assert_string_equal(orr_trace_str(t, et->schema), "1.1.0-chakra.0.0.4");
	assert_int_equal(et->nnodes, 14392);
	n = node_named(t, et, "record_param_comms");
	assert_int_equal(n->id, 437);
	assert_int_equal(n->parent, 436);
	assert_int_equal(n->rf_id, 115);
	assert_int_equal(n->op_schema, ORR_STR_NONE);
	assert_int_equal(n->ninputs, 10);
	v = &et->values[n->first_input]; /* GenericList[Tensor(float)] */
	assert_int_equal(v->kind, ORR_ET_LIST);
	assert_int_equal(v->nelems, 1);
	assert_int_equal(et->values[v->first_elem].kind, ORR_ET_TENSOR);
	assert_int_equal(et->values[v->first_elem].numel, 53120);
	assert_string_equal(orr_trace_str(t, et->values[v->first_elem].device), "cuda:1");
	v = &et->values[n->first_input + 2]; /* Tuple[String,String] */
	assert_int_equal(v->kind, ORR_ET_LIST);
	assert_string_equal(orr_trace_str(t, et->values[v->first_elem + 1].str), "default_pg");
	assert_string_equal(orr_trace_str(t, et->values[v->first_elem + 1].type), "String");
	assert_string_equal(orr_trace_str(t, et->values[n->first_input + 4].str), "broadcast");
	assert_string_equal(orr_trace_str(t, n->coll_name), "broadcast");
	assert_string_equal(orr_trace_str(t, n->pg_name), "0");
	assert_int_equal(n->pg_size, 2);
	node_named(t, et, "## process_group:init ##");
	assert_int_equal(et->ngroups, 1);
	assert_string_equal(orr_trace_str(t, et->groups[0].name), "0");
	assert_string_equal(orr_trace_str(t, et->groups[0].desc), "default_pg");
	assert_string_equal(orr_trace_str(t, et->groups[0].backend), "cuda:nccl");
	assert_int_equal(et->groups[0].size, 2);
	assert_int_equal(et->groups[0].nranks, 0);
	orr_trace_free(t);
}

/* HF GPT-2's ET, in a .tar.gz, of another run than its profiler trace: read, none linked. */
static void test_one_archived_et_reads(void **state)
{
	struct orr_trace *t =
		import_with_et("kineto/param-linear.json.gz", "et/param-hf-gpt2-et.json.tar.gz");
	const struct orr_et *et = orr_trace_get_rank(t, 0)->et;

	(void)state;
	assert_non_null(et);
	assert_non_null(strstr(orr_trace_str(t, et->source), ":hf_GPT2_et.json"));
	assert_string_equal(orr_trace_str(t, et->schema), "1.1.0-chakra.0.0.4");
	assert_int_equal(et->nnodes, 27156);
	assert_true(et->nvalues > et->nnodes);
	orr_trace_free(t);
}

/* The Megatron TP=8 job: every rank's ET with its rank, every op linked. */
static void test_one_megatron_ranks_link_exactly(void **state)
{
	struct orr_trace *t =
		import_with_et("kineto/astrasim-megatron-tp8", "et/astrasim-megatron-tp8");

	(void)state;
	assert_int_equal(orr_trace_rank_count(t), 8);
	for (size_t i = 0; i < 8; i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);
		char want[64];

		assert_non_null(r->et);
		snprintf(want, sizeof(want), "rank-%d.et.json.gz", r->rank);
		assert_non_null(strstr(orr_trace_str(t, r->et->source), want));
		assert_true(r->et->exact);
		assert_int_equal(r->et->linked, r->et->ops);
		/* every all-reduce kernel sized by its record_param_comms node */
		assert_int_equal(r->et->sized, 84);
		for (size_t c = 0; c < r->ncollectives; c++)
			assert_true(r->collectives[c].in_bytes > 0);
	}
	orr_trace_free(t);
}

static int import_buf(const char *json, const struct orr_import_options *o, struct orr_diag *d)
{
	struct orr_trace *t = NULL;
	int r = orr_trace_import_buffer("rank-0.et.json", json, strlen(json), o, &t, d);

	orr_trace_free(t);
	return r;
}

static void test_null_malformed_or_alone_is_an_error(void **state)
{
	struct orr_diag d;

	(void)state;
	/* cut short: the offset of the cut */
	assert_int_equal(import_buf("{\"schema\": \"1.0.1\", \"nodes\": [{\"id\": 1, \"name\"",
				    NULL, &d),
			 ORR_ETRUNCATED);
	assert_true(d.offset > 0);
	assert_int_equal(import_buf("{\"schema\": \"1.0.1\", \"nodes\": [3]}", NULL, &d),
			 ORR_EMALFORMED);
	assert_non_null(strstr(d.msg, "a node that is not an object"));
	/* well formed, but no profiler trace to go with */
	assert_int_equal(import_buf("{\"schema\": \"1.0.1\", \"nodes\": []}", NULL, &d),
			 ORR_ENOTRACE);
	assert_non_null(strstr(d.msg, "execution traces alone"));
}

/*
 * --et names a profiler trace: an error; execution traces whose rank the run lacks: each
 * skipped; two of one rank: an error.
 */
static void test_null_misplaced_et(void **state)
{
	static const char et[] = "{\"schema\": \"1.0.1\", \"nodes\": []}";
	char *tp = shared("kineto/param-linear.json.gz"), *dir = *state;
	char *a = orr_xasprintf("%s/rank-0.et.json", dir),
	     *b = orr_xasprintf("%s/rank-0-b.et.json", dir);
	struct orr_import_options o = { .et_path = tp };
	struct orr_trace *t = NULL;
	struct orr_diag d;

	assert_int_equal(orr_trace_import(tp, &o, &t, &d), ORR_EFORMAT);
	assert_non_null(strstr(d.msg, "not a PyTorch execution trace"));
	free(tp);
	tp = shared("kineto/astrasim-megatron-tp8");
	o.et_path = shared("et"); /* none named after a rank */
	assert_int_equal(orr_trace_import(tp, &o, &t, &d), 0);
	for (size_t i = 0; i < orr_trace_rank_count(t); i++)
		assert_null(orr_trace_get_rank(t, i)->et);
	orr_trace_free(t);
	free((char *)o.et_path);
	write_text_file(a, et);
	write_text_file(b, et);
	o.et_path = dir;
	assert_int_equal(orr_trace_import(tp, &o, &t, &d), ORR_ERANK);
	assert_non_null(strstr(d.msg, "a second execution trace for rank 0"));
	free(tp);
	free(a);
	free(b);
}

/*
 * An execution trace given by --et that is not JSON where its structure is whole (a
 * missing ',', a bad literal): the byte where it stops being JSON, and what was expected.
 */
static void test_null_et_syntax_where(void **state)
{
	char *tp = shared("kineto/param-linear.json.gz"), *dir = *state;
	char *a = orr_xasprintf("%s/rank-0.et.json", dir);
	struct orr_import_options o = { .et_path = a };
	struct orr_trace *t = NULL;
	struct orr_diag d;

	write_text_file(a, "{\"schema\": \"1.0.1\", \"pid\": 7 \"nodes\": []}");
	assert_int_equal(orr_trace_import(tp, &o, &t, &d), ORR_EMALFORMED);
	if (d.offset != 29 || !strstr(d.msg, "expected ',' or '}'"))
		fail_msg("at %lld: %s", (long long)d.offset, d.msg);
	write_text_file(a, "{\"schema\": \"1.0.1\", \"pid\": tru, \"nodes\": []}");
	assert_int_equal(orr_trace_import(tp, &o, &t, &d), ORR_EMALFORMED);
	if (d.offset != 27 || !strstr(d.msg, "expected true"))
		fail_msg("at %lld: %s", (long long)d.offset, d.msg);
	/* at the depth's ceiling the parsers and the walk run as well */
	assert_int_equal(setenv("ORR_MAX_DEPTH", "64K", 1), 0);
	assert_int_equal(orr_trace_import(tp, &o, &t, &d), ORR_EMALFORMED);
	unsetenv("ORR_MAX_DEPTH");
	assert_int_equal(d.offset, 27);
	if (!strstr(d.msg, "line 1 column 28"))
		fail_msg("%s", d.msg);
	free(tp);
	free(a);
}

/*
 * A limit hit in an execution trace is the limit's error, as the Kineto and costs
 * readers give it, at the byte (line and column) where it was hit: the depth past
 * ORR_MAX_DEPTH, a string past ORR_MAX_STRING_BYTES (they were "nested too deep" with
 * no limit named, and no offset at all).
 */
static void test_null_et_limits_where(void **state)
{
	char *tp = shared("kineto/param-linear.json.gz"), *dir = *state;
	char *a = orr_xasprintf("%s/rank-0.et.json", dir);
	struct orr_import_options o = { .et_path = a };
	struct orr_trace *t = NULL;
	struct orr_diag d;
	char text[4096], name[1101];
	size_t n;

	n = (size_t)snprintf(text, sizeof(text), "{\"schema\": \"1.0.1\",\n \"x\": ");
	memset(text + n, '[', 40);
	memset(text + n + 40, ']', 40);
	memcpy(text + n + 80, ", \"nodes\": []}", sizeof(", \"nodes\": []}"));
	write_text_file(a, text);
	assert_int_equal(setenv("ORR_MAX_DEPTH", "32", 1), 0);
	assert_int_equal(orr_trace_import(tp, &o, &t, &d), ORR_ETOOBIG);
	unsetenv("ORR_MAX_DEPTH");
	/* the 33rd bracket: the object is the first level */
	if (d.offset != (int64_t)n + 31 || !strstr(d.msg, "line 2 column 38") ||
	    !strstr(d.msg, "raise the limit ORR_MAX_DEPTH"))
		fail_msg("at %lld: %s", (long long)d.offset, d.msg);
	memset(name, 'a', 1100);
	name[1100] = '\0';
	/* "s": 1240 bytes written, 240 read (\u0041 is one byte): within the limit */
	n = (size_t)snprintf(text, sizeof(text), "{\"schema\": \"1.0.1\", \"pid\": 7, \"s\": \"");
	for (int i = 0; i < 200; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "\\u0041");
	snprintf(text + n, sizeof(text) - n,
		 "%.40s\",\n\"nodes\": [{\"name\": \"%s\", \"id\": 1}]}", name, name);
	write_text_file(a, text);
	assert_int_equal(setenv("ORR_MAX_STRING_BYTES", "1K", 1), 0);
	assert_int_equal(orr_trace_import(tp, &o, &t, &d), ORR_ETOOBIG);
	unsetenv("ORR_MAX_STRING_BYTES");
	/* the node's name, line 2 column 20 */
	if (d.offset != (int64_t)(strstr(text, "\"name\": \"") - text) + 8 ||
	    !strstr(d.msg, "line 2 column 20") ||
	    !strstr(d.msg, "raise the limit ORR_MAX_STRING_BYTES"))
		fail_msg("at %lld: %s", (long long)d.offset, d.msg);
	/* a longer string the reader skips ("s" is no field it keeps) is not the one named */
	n = (size_t)snprintf(text, sizeof(text), "{\"schema\": \"1.0.1\", \"s\": \"%sbb\",\n",
			     name);
	snprintf(text + n, sizeof(text) - n, "\"nodes\": [{\"name\": \"%s\", \"id\": 1}]}", name);
	write_text_file(a, text);
	assert_int_equal(setenv("ORR_MAX_STRING_BYTES", "1K", 1), 0);
	assert_int_equal(orr_trace_import(tp, &o, &t, &d), ORR_ETOOBIG);
	unsetenv("ORR_MAX_STRING_BYTES");
	if (d.offset != (int64_t)(strstr(text, "\"name\": \"") - text) + 8 ||
	    !strstr(d.msg, "line 2 column 20"))
		fail_msg("at %lld: %s", (long long)d.offset, d.msg);
	free(tp);
	free(a);
}

/* Ops named a0..a7 x0..x69 b0..b99 in the profiler's trace, the ET without the x's. */
static void test_one_gap_wider_than_the_window_relinks(void **state)
{
	char *dir = *state, *kp = orr_xasprintf("%s/rank-0.json", dir),
	     *ep = orr_xasprintf("%s/rank-0.et.json", dir);
	FILE *k = fopen(kp, "w"), *e = fopen(ep, "w");
	struct orr_trace *t = NULL;
	struct orr_diag d;
	int ts = 0, id = 3;

	assert_non_null(k);
	assert_non_null(e);
	fputs("{\"traceEvents\": [", k);
	fputs("{\"schema\": \"1.0.1\", \"nodes\": [", e);
	for (int g = 0; g < 3; g++)
		for (int n = 0; n < (g == 0 ? 8 : g == 1 ? 70 : 100); n++) {
			char name[16];

			snprintf(name, sizeof(name), "%c%d", "axb"[g], n);
			fprintf(k,
				"%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", "
				"\"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 1}",
				ts ? ", " : "", name, ts);
			ts += 2;
			if (g != 1)
				fprintf(e, "%s{\"name\": \"%s\", \"id\": %d, \"parent\": 2}",
					id > 3 ? ", " : "", name, id),
					id++;
		}
	fputs("]}", k);
	fputs("]}", e);
	assert_int_equal(fclose(k), 0);
	assert_int_equal(fclose(e), 0);
	assert_int_equal(orr_trace_import(dir, NULL, &t, &d), 0);
	assert_int_equal(orr_trace_get_rank(t, 0)->et->linked, 108);
	assert_int_equal(orr_trace_get_rank(t, 0)->et->rank_ops, 178);
	assert_false(orr_trace_get_rank(t, 0)->et->exact);
	orr_trace_free(t);
	free(kp);
	free(ep);
}

/* A profiler trace without pg_config takes the ET's process groups. */
static void test_one_process_groups_come_from_the_et(void **state)
{
	static const char kineto[] =
		"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\","
		" \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}";
	static const char et[] =
		"{\"schema\": \"1.1.0-chakra.0.0.4\", \"nodes\": [{\"id\": 4, \"name\": "
		"\"## process_group:init ##\", \"ctrl_deps\": 2, \"inputs\": {\"values\": [\"[{\\\"pg_name\\\": "
		"\\\"3\\\", \\\"pg_desc\\\": \\\"tp\\\", \\\"backend_config\\\": \\\"cuda:nccl\\\", "
		"\\\"ranks\\\": [0, 1], \\\"group_size\\\": 2}]\"], \"shapes\": [[]], \"types\": [\"String\"]}, "
		"\"attrs\": []}, {\"id\": 5, \"name\": \"aten::add\", \"ctrl_deps\": 2, \"attrs\": []}]}";
	char *dir = *state, *kp = orr_xasprintf("%s/rank-0.json", dir),
	     *ep = orr_xasprintf("%s/rank-0.et.json", dir);
	struct orr_trace *t = NULL;
	struct orr_diag d;
	const struct orr_rank *r;

	write_text_file(kp, kineto);
	write_text_file(ep, et);
	if (orr_trace_import(dir, NULL, &t, &d))
		fail_msg("%s", d.msg);
	r = orr_trace_get_rank(t, 0);
	assert_true(r->et->exact);
	assert_int_equal(r->ncomms, 1);
	assert_string_equal(orr_trace_str(t, r->comms[0].name), "3");
	assert_string_equal(orr_trace_str(t, r->comms[0].desc), "tp");
	assert_int_equal(r->comms[0].size, 2);
	assert_int_equal(r->comms[0].nmembers, 2);
	assert_int_equal(r->members[r->comms[0].first_member + 1], 1);
	orr_trace_free(t);
	free(kp);
	free(ep);
}

/*
 * A node past ORR_MAX_EVENTS, or whose values or dimensions pass it, is named where it
 * is: its byte (its '{') and its place in "nodes" as the event, as Kineto's events are
 * (there was neither).  Nodes of 2 inputs of 3 dimensions: under 5, node 1's dimensions
 * (6) pass; under 4 with no inputs, node 4 is the fifth.
 */
static void test_null_et_nodes_limit_where(void **state)
{
	static const char kineto[] =
		"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\","
		" \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}";
	char *dir = *state, *kp = orr_xasprintf("%s/rank-0.json", dir),
	     *ep = orr_xasprintf("%s/rank-0.et.json", dir);
	const struct {
		const char *max, *inputs;
		int64_t node;
	} c[] = {
		{ "5",
		  ", \"inputs\": [1, 2], \"input_shapes\": [[2, 3], [4]], "
		  "\"input_types\": [\"Tensor(float)\", \"Tensor(float)\"]",
		  1 },
		{ "4", "", 4 },
	};

	write_text_file(kp, kineto);
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		char text[4096];
		size_t n, at = 0;
		struct orr_trace *t = NULL;
		struct orr_diag d;

		n = (size_t)snprintf(text, sizeof(text), "{\"schema\": \"1.0.1\",\n\"nodes\": [");
		for (int i = 0; i < 8; i++) {
			if (i == c[k].node)
				at = n + (i ? 3 : 0); /* past ",\n " */
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "%s{\"name\": \"aten::add\", \"id\": %d%s}",
					      i ? ",\n " : "", i + 1, c[k].inputs);
		}
		snprintf(text + n, sizeof(text) - n, "]}");
		write_text_file(ep, text);
		assert_int_equal(setenv("ORR_MAX_EVENTS", c[k].max, 1), 0);
		assert_int_equal(orr_trace_import(dir, NULL, &t, &d), ORR_ETOOBIG);
		unsetenv("ORR_MAX_EVENTS");
		if (d.offset != (int64_t)at || text[at] != '{' || d.event != c[k].node ||
		    !strstr(d.msg, "line ") || !strstr(d.msg, "raise the limit ORR_MAX_EVENTS"))
			fail_msg("ORR_MAX_EVENTS=%s: at %lld (event %lld), not %zu (%lld): %s",
				 c[k].max, (long long)d.offset, (long long)d.event, at,
				 (long long)c[k].node, d.msg);
	}
	free(kp);
	free(ep);
}

/*
 * With its address space capped 96 MiB above what it holds, the directory dir imported: 0
 * when the import fails with -ENOMEM naming memory, 2 otherwise (3: no cap).
 */
static int import_capped(void *dir)
{
	struct orr_trace *t = NULL;
	struct orr_diag d;
	int r;

	if (capped_address_space((size_t)96 << 20) != 0)
		return 3;
	r = orr_trace_import(dir, NULL, &t, &d);
	if (r == -ENOMEM && strstr(d.msg, "out of memory"))
		return 0;
	fprintf(stderr, "import: %s: %s\n", orr_errname(r), r ? d.msg : "read");
	orr_trace_free(t);
	return 2;
}

/*
 * Memory refused to the execution trace's parser (simdjson's index is several bytes per
 * byte of the file) is the import's error, -ENOMEM: the library printed 'out of memory'
 * and called exit(1).  The ET is 32 MiB, the cap 96 MiB above what the child holds: the
 * file is read, its index does not fit.  Not under ASan, whose shadow memory a cap breaks.
 */
static void test_malformed_et_out_of_memory_is_an_error(void **state)
{
	static const char kineto[] =
		"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\","
		" \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}";
	static const char head[] = "{\"schema\": \"1.0.1\", \"pad\": \"";
	char *dir = *state, *kp = orr_xasprintf("%s/rank-0.json", dir),
	     *ep = orr_xasprintf("%s/rank-0.et.json", dir);
	size_t pad = (size_t)32 << 20;
	char *et = orr_xmalloc(pad + 128);
	int status;

	if (UNDER_ASAN) {
		fprintf(stderr, "skipped: an address-space cap under ASan\n");
		free(et);
		free(kp);
		free(ep);
		skip();
	}
	write_text_file(kp, kineto);
	memcpy(et, head, sizeof(head) - 1);
	memset(et + sizeof(head) - 1, 'x', pad);
	snprintf(et + sizeof(head) - 1 + pad, 99,
		 "\", \"nodes\": [{\"name\": \"aten::add\", \"id\": 1}]}");
	write_text_file(ep, et);
	free(et);
	status = capped_in_child(import_capped, dir);
	if (status != 0)
		fail_msg("the capped import: %s %d", status < 0 ? "signal" : "exit",
			 status < 0 ? -status : status);
	free(kp);
	free(ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_malformed_or_alone_is_an_error),
		cmocka_unit_test_setup_teardown(test_null_misplaced_et, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_null_et_limits_where, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_null_et_syntax_where, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_null_et_nodes_limit_where, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_malformed_et_out_of_memory_is_an_error,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_one_flat_schema_reads_and_links),
		cmocka_unit_test(test_one_chakra_schema_reads),
		cmocka_unit_test(test_one_archived_et_reads),
		cmocka_unit_test(test_one_megatron_ranks_link_exactly),
		cmocka_unit_test_setup_teardown(test_one_gap_wider_than_the_window_relinks,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_one_process_groups_come_from_the_et,
						tmpdir_setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

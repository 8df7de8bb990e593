/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target, differential: one input written to a file and imported twice, by one
 * thread and by two that cut it in pieces whatever its size (ORR_IMPORT_THREADS,
 * ORR_IMPORT_SPLIT_BYTES: traces/kineto/kineto-window.cpp).  Both must fail alike (the
 * same error, message, offset and event) or give the same ranks, row for row; anything
 * else aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orrery/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int import_with(const char *path, const char *threads, struct orr_trace **t,
		       struct orr_diag *diag)
{
	const struct orr_import_options opts = { .max_bytes = 1u << 20 };

	setenv("ORR_IMPORT_THREADS", threads, 1);
	setenv("ORR_IMPORT_SPLIT_BYTES", "1", 1);
	memset(diag, 0, sizeof(*diag));
	*t = NULL;
	return orr_trace_import(path, &opts, t, diag);
}

static void differ(const char *what)
{
	fprintf(stderr, "fuzz-kineto-split: one thread and two differ: %s\n", what);
	abort();
}

static void same_rank(const struct orr_trace *a, const struct orr_rank *x,
		      const struct orr_trace *b, const struct orr_rank *y)
{
	if (x->nevents != y->nevents || x->nplaces != y->nplaces || x->nops != y->nops ||
	    x->ninputs != y->ninputs || x->ndims != y->ndims || x->nstrides != y->nstrides ||
	    x->nkernels != y->nkernels || x->ncollectives != y->ncollectives ||
	    x->nmembers != y->nmembers || x->nskipped != y->nskipped ||
	    x->ncoerced != y->ncoerced || x->nmems != y->nmems)
		differ("row counts");
	for (size_t i = 0; i < x->nevents; i++) {
		const struct orr_event *e = &x->events[i], *f = &y->events[i];

		if (e->start_ns != f->start_ns || e->dur_ns != f->dur_ns ||
		    e->correlation != f->correlation || e->external_id != f->external_id ||
		    e->name != f->name || e->place != f->place || e->args != f->args ||
		    e->coll != f->coll || e->kind != f->kind || e->sub != f->sub ||
		    e->flags != f->flags)
			differ("an event");
		if (strcmp(orr_trace_str(a, e->name), orr_trace_str(b, f->name)) != 0)
			differ("an event's name");
	}
	for (size_t i = 0; i < x->nplaces; i++)
		if (x->places[i].pid != y->places[i].pid || x->places[i].tid != y->places[i].tid ||
		    x->places[i].kind != y->places[i].kind ||
		    x->places[i].name != y->places[i].name)
			differ("a place");
	for (size_t i = 0; i < x->nskipped; i++)
		if (x->skipped[i].count != y->skipped[i].count ||
		    strcmp(orr_trace_str(a, x->skipped[i].category),
			   orr_trace_str(b, y->skipped[i].category)) != 0)
			differ("a skipped category");
	for (size_t i = 0; i < x->ninputs; i++)
		if (x->inputs[i].has_value != y->inputs[i].has_value ||
		    strcmp(orr_trace_str(a, x->inputs[i].value),
			   orr_trace_str(b, y->inputs[i].value)) != 0)
			differ("an input's recorded value");
	for (size_t i = 0; i < x->ninputs; i++)
		if (x->inputs[i].first_dim != y->inputs[i].first_dim ||
		    x->inputs[i].ndims != y->inputs[i].ndims ||
		    x->inputs[i].is_list != y->inputs[i].is_list ||
		    x->inputs[i].first_stride != y->inputs[i].first_stride ||
		    x->inputs[i].nstrides != y->inputs[i].nstrides)
			differ("an input's dims or strides");
	if (x->nstrides && memcmp(x->strides, y->strides, x->nstrides * sizeof(*x->strides)))
		differ("strides");
	if ((x->ndims && memcmp(x->dims, y->dims, x->ndims * sizeof(*x->dims))) ||
	    (x->nkernels && memcmp(x->kernels, y->kernels, x->nkernels * sizeof(*x->kernels))) ||
	    (x->nmembers && memcmp(x->members, y->members, x->nmembers * sizeof(*x->members))))
		differ("dims, kernels or members");
	if (x->ops_with_stack != y->ops_with_stack || x->ops_with_flops != y->ops_with_flops)
		differ("ops with stacks or flops");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[] = "/tmp/fuzz-kineto-split-XXXXXX", path[64];
	struct orr_trace *one, *two;
	struct orr_diag d1, d2;
	FILE *f;
	int r1, r2;

	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	if (!(f = fopen(path, "wb")) || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	r1 = import_with(path, "1", &one, &d1);
	r2 = import_with(path, "2", &two, &d2);
	unlink(path);
	rmdir(dir);
	if (r1 != r2 || strcmp(d1.msg, d2.msg) != 0 || d1.offset != d2.offset ||
	    d1.event != d2.event)
		differ("the import's result or message");
	if (r1 == 0) {
		if (orr_trace_rank_count(one) != orr_trace_rank_count(two))
			differ("rank counts");
		for (size_t i = 0; i < orr_trace_rank_count(one); i++)
			same_rank(one, orr_trace_get_rank(one, i), two, orr_trace_get_rank(two, i));
	}
	orr_trace_free(one);
	orr_trace_free(two);
	return 0;
}

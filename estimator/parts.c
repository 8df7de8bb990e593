/* SPDX-License-Identifier: MIT */
/*
 * Where a rank's GPU time goes in a step, by part of the model: the embedding, the
 * layers, the output layer's logits, the loss and the optimizer (docs/estimator.md,
 * "Parts").  The estimator scales each part by its own rule: the layers by the layers
 * a stage holds, the embedding on the first stage and the logits and loss on the last.
 *
 * A kernel's part is its launch's: the ops around the call that launched it, read from
 * the innermost out.  The logits are the GEMMs orr_gemm_label() named so; the others
 * are known by the names of their ops, annotations or modules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

const char *orr_part_name(enum orr_part p)
{
	static const char *const names[ORR_PART_COUNT] = {
		[ORR_PART_EMBEDDING] = "embedding", [ORR_PART_LAYERS] = "layers",
		[ORR_PART_LOGITS] = "logits",       [ORR_PART_LOSS] = "loss",
		[ORR_PART_OPTIMIZER] = "optimizer", [ORR_PART_OTHER] = "other",
	};

	return (unsigned)p < ORR_PART_COUNT ? names[p] : NULL;
}

static bool is_embedding(const char *name)
{
	static const char *const globs[] = { "aten::embedding*", "*Embedding*",
					     "*embedding_dense_backward*", "*embedding_backward*" };

	return orr__name_is(name, globs, sizeof(globs) / sizeof(globs[0]));
}

static bool is_loss(const char *name)
{
	static const char *const globs[] = {
		"*cross_entropy*", "*CrossEntropy*", "*nll_loss*", "*NllLoss*",
		"*mse_loss*",      "*MseLoss*",      "*Loss"
	};

	return orr__name_is(name, globs, sizeof(globs) / sizeof(globs[0]));
}

static bool is_optimizer(const char *name)
{
	static const char *const globs[] = { "Optimizer.step*", "*optimizer*step*", "*Adam*step*",
					     "*SGD.step*" };

	return orr__name_is(name, globs, sizeof(globs) / sizeof(globs[0]));
}

/* The part of the kernel launched by event e (ORR_NONE: none), and whether in backward. */
static enum orr_part part_of_launch(const struct orr_trace *t, const struct orr_rank *r,
				    const uint32_t *parent, uint32_t e, bool *ret_backward)
{
	bool any_op = false;

	*ret_backward = false;
	if (e == ORR_NONE || e >= r->nevents)
		return ORR_PART_OTHER;
	*ret_backward = orr__in_backward(t, r, parent, e);
	for (int depth = 0; e != ORR_NONE && depth < 64; depth++, e = parent[e]) {
		const struct orr_event *ev = &r->events[e];
		const char *name = orr_trace_str(t, ev->name);

		if (ev->kind != ORR_EVENT_OP && ev->kind != ORR_EVENT_ANNOTATION)
			continue;
		if (is_optimizer(name))
			return ORR_PART_OPTIMIZER;
		if (is_embedding(name))
			return ORR_PART_EMBEDDING;
		if (is_loss(name))
			return ORR_PART_LOSS;
		any_op |= ev->kind == ORR_EVENT_OP;
	}
	return any_op ? ORR_PART_LAYERS : ORR_PART_OTHER;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The GPU tasks of the logits' GEMMs among s[0..n), sorted; how many. */
static size_t logits_tasks(const struct orr_gemm_sample *s, size_t n, uint32_t **ret)
{
	uint32_t *v = orr_xmalloc((n ? n : 1) * sizeof(*v));
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (s[i].role == ORR_GEMM_ROLE_LOGITS)
			v[m++] = s[i].task;
	if (m)
		qsort(v, m, sizeof(*v), cmp_u32);
	*ret = v;
	return m;
}

/* Whether a GPU event is work: a kernel, copy or memset, not a collective's kernel. */
static bool is_compute(const struct orr_rank *r, const struct orr_event *e)
{
	return (e->kind == ORR_EVENT_KERNEL || e->kind == ORR_EVENT_MEMCPY ||
		e->kind == ORR_EVENT_MEMSET) &&
	       e->coll >= r->ncollectives;
}

/* The steps' bounds into *from, *to and their count; the whole capture, 1, without steps. */
static size_t step_bounds(const struct orr_trace *t, const struct orr_rank *r, int64_t *from,
			  int64_t *to)
{
	struct orr_step *steps = NULL;
	size_t n = 0;

	*from = INT64_MIN;
	*to = INT64_MAX;
	if (orr_rank_steps(t, r, &steps, &n) == 0 && n) {
		*from = steps[0].start_ns;
		*to = steps[n - 1].end_ns;
	}
	free(steps);
	return n;
}

int orr_parts_measure(const struct orr_graph *g, size_t rank, const struct orr_gemm_sample *s,
		      size_t n, struct orr_parts *ret)
{
	const struct orr_trace *t = orr_graph_trace(g);
	const struct orr_task *tasks = orr_graph_tasks(g);
	const struct orr_graph_rank *gr;
	uint32_t *parent, *logits;
	size_t nlogits;
	int64_t from, to;

	memset(ret, 0, sizeof(*ret));
	if (rank >= orr_graph_rank_count(g))
		return -EINVAL;
	gr = orr_graph_get_rank(g, rank);
	ret->steps = step_bounds(t, gr->rank, &from, &to);
	ret->from_ns = from;
	ret->to_ns = to;
	parent = orr__call_parents(gr->rank);
	nlogits = logits_tasks(s, n, &logits);
	for (uint32_t k = gr->first_task; k < gr->first_task + gr->ntasks; k++) {
		const struct orr_event *e = orr_graph_task_event(g, k);
		struct orr_part_time *p;
		enum orr_part part;
		bool back;

		if (tasks[k].kind != ORR_TASK_GPU || !is_compute(gr->rank, e) ||
		    e->start_ns < from || e->start_ns >= to)
			continue;
		part = part_of_launch(t, gr->rank, parent, orr__launch_event(g, k), &back);
		if (part == ORR_PART_LAYERS && nlogits &&
		    bsearch(&k, logits, nlogits, sizeof(*logits), cmp_u32))
			part = ORR_PART_LOGITS;
		p = &ret->part[part];
		p->kernels++;
		p->ns += (double)tasks[k].dur_ns;
		if (back)
			p->backward_ns += (double)tasks[k].dur_ns;
	}
	free(logits);
	free(parent);
	return 0;
}

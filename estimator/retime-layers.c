/* SPDX-License-Identifier: MIT */
/*
 * Another number of layers on a traced graph whose layers repeat (docs/estimator.md,
 * "Re-timing a trace", "Another number of layers").  Eager PyTorch runs a layer as
 * the same ops in the same order every time: each op's CPU time on one thread (the
 * main thread forward, autograd's thread backward) and its kernels on the stream, the
 * GPU waiting whenever the thread is behind.  A layer is thus one period of the
 * sequence of GPU work a thread launches in a pass, repeated once per layer.  The
 * layers' tasks, CPU and GPU, are stretched by L'/L: the replay of L layers each
 * L'/L as long takes what L' layers of the traced length take in the steady state,
 * since the cycle time of such a pipeline (the larger of the thread's and the GPU's
 * time per layer) scales with every time in the cycle; what runs before and after
 * the layers (embedding, logits, loss, optimizer) keeps its tasks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* The first step's launches searched for the period, at most (as structure.c's count). */
#define SEARCH_MAX 8192

/* A GPU task, the call that launched it, its kernel's name and the step of the call. */
struct launch {
	uint32_t gpu, call, name;
	int64_t step; /* index into the rank's steps; -1 outside them */
};

static int cmp_launch(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;

	if (x->call != y->call)
		return x->call < y->call ? -1 : 1;
	return (x->gpu > y->gpu) - (x->gpu < y->gpu);
}

/* The pass of the launch of GPU task t: 0 forward, 1 backward, 2 optimizer or none. */
static int pass_of(const struct orr_graph *g, const struct orr_rank *r, const uint32_t *parent,
		   uint32_t t)
{
	static const char *const globs[] = { "Optimizer.step*", "*optimizer*step*",
					     "Optimizer.zero_grad*" };
	const struct orr_trace *tr = orr_graph_trace(g);
	uint32_t e = orr__launch_event(g, t);

	if (e == ORR_NONE)
		return 2;
	for (uint32_t a = e, depth = 0; a != ORR_NONE && a < r->nevents && depth < 64;
	     depth++, a = parent[a])
		if (orr__name_is(orr_trace_str(tr, r->events[a].name), globs, 3))
			return 2;
	return orr__in_backward(tr, r, parent, e) ? 1 : 0;
}

/* Distinct names in v[0..p), at least three. */
static bool three_names(const struct launch *v, size_t p)
{
	uint32_t a = v[0].name, b = v[0].name;

	for (size_t i = 1; i < p; i++) {
		if (v[i].name == a || v[i].name == b)
			continue;
		if (a == b) {
			b = v[i].name;
			continue;
		}
		return true;
	}
	return false;
}

/* The end of the launches of v[a..n) made in v[a]'s step. */
static size_t step_end(const struct launch *v, size_t n, size_t a)
{
	size_t b = a;

	while (b < n && v[b].step == v[a].step)
		b++;
	return b;
}

/*
 * The smallest period p of v[0..n) (its first SEARCH_MAX) whose longest run of
 * launches equal to the one p before covers L periods, with three different kernels
 * in a period (a layer runs a GEMM, a normalization and an elementwise kernel: a run of
 * one or two is a loop over tensors); 0 when none.
 */
static size_t period(const struct launch *v, size_t n, int64_t L)
{
	size_t m = n < SEARCH_MAX ? n : SEARCH_MAX;

	for (size_t p = 1; p * (size_t)L <= m; p++) {
		size_t run = 0;

		for (size_t i = p; i < m; i++) {
			run = v[i].name == v[i - p].name ? run + 1 : 0;
			if (run + p >= p * (size_t)L && three_names(v + i + 1 - run - p, p))
				return p;
		}
	}
	return 0;
}

struct stretch {
	const struct orr_graph *g;
	float k; /* L' / L */
	float *gpu, *cpu;
	struct orr_retime *ret;
};

/* Stretches launches v[a .. a + len) and the calls of their thread from the first to the last. */
static void stretch_run(struct stretch *s, const struct launch *v, size_t a, size_t len)
{
	const struct orr_task *tasks = orr_graph_tasks(s->g);

	for (size_t i = a; i < a + len; i++) {
		double d = (double)tasks[v[i].gpu].dur_ns;

		s->gpu[v[i].gpu] *= s->k;
		s->ret->layer_gpu_tasks++;
		s->ret->layer_gpu_ns[0] += d;
		s->ret->layer_gpu_ns[1] += d * s->gpu[v[i].gpu];
	}
	for (uint32_t c = v[a].call; c <= v[a + len - 1].call; c++) {
		double d = (double)(tasks[c].dur_ns + tasks[c].gap_ns);

		s->cpu[c] = s->k;
		s->ret->layer_cpu_tasks++;
		s->ret->layer_cpu_ns[0] += d;
		s->ret->layer_cpu_ns[1] += d * s->k;
	}
}

/* Every run of L periods p in v[0..n), one a step: stretched. */
static size_t stretch_runs(struct stretch *s, const struct launch *v, size_t n, size_t p, int64_t L)
{
	size_t run = 0, found = 0, need = p * (size_t)L;

	for (size_t i = p; i <= n; i++) {
		if (i < n && v[i].name == v[i - p].name) {
			run++;
			continue;
		}
		if (run + p >= need) {
			stretch_run(s, v, i - run - p, need);
			found++;
		}
		run = 0;
	}
	return found;
}

/*
 * One thread's launches of one pass, v[0..n): its layers found and stretched; 0, or
 * -ENOENT when they do not repeat L times.
 */
static int stretch_thread(struct stretch *s, const struct launch *v, size_t n, int64_t L)
{
	size_t p = 0, found = 0, a = 0, b;

	/* The period of the first step's launches; the runs of each step (a layer is in one). */
	while (a < n && v[a].step < 0)
		a = step_end(v, n, a);
	if (a < n)
		p = period(v + a, step_end(v, n, a) - a, L);
	for (a = 0; p && a < n; a = b) {
		b = step_end(v, n, a);
		if (v[a].step >= 0)
			found += stretch_runs(s, v + a, b - a, p, L);
	}
	if (!found)
		return -ENOENT;
	s->ret->layer_period += p;
	return 0;
}

/* The launches of rank ri by pass (0 forward, 1 backward), in launch order. */
static void launches(const struct orr_graph *g, size_t ri, struct launch **ret, size_t *ret_n)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, ri);
	const struct orr_task *tasks = orr_graph_tasks(g);
	const struct orr_dep *deps = orr_graph_deps(g);
	uint32_t *parent = orr__call_parents(gr->rank);
	struct orr_step *steps = NULL;
	size_t nsteps = 0;

	if (orr_rank_steps(orr_graph_trace(g), gr->rank, &steps, &nsteps))
		nsteps = 0;
	ret_n[0] = ret_n[1] = 0;
	ret[0] = orr_xmalloc((gr->ntasks + 1) * sizeof(**ret));
	ret[1] = orr_xmalloc((gr->ntasks + 1) * sizeof(**ret));
	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		const struct orr_dep *d = &deps[tasks[t].first_dep];
		int pass;

		if (tasks[t].kind != ORR_TASK_GPU || !tasks[t].ndeps || d->kind != ORR_DEP_LAUNCH)
			continue;
		pass = pass_of(g, gr->rank, parent, t);
		if (pass < 2)
			ret[pass][ret_n[pass]++] = (struct launch){
				.gpu = t,
				.call = d->src,
				.name = orr_graph_task_event(g, t)->name,
				.step = orr_step_index(steps, nsteps,
						       orr_graph_task_start(g, d->src)),
			};
	}
	for (int i = 0; i < 2; i++)
		qsort(ret[i], ret_n[i], sizeof(**ret), cmp_launch);
	free(steps);
	free(parent);
}

/* Splits v[0..n) (sorted by call) by the thread of the calls: the next one's start. */
static size_t thread_end(const struct orr_graph *g, const struct launch *v, size_t n, size_t a)
{
	const struct orr_task *tasks = orr_graph_tasks(g);
	size_t b = a;

	while (b < n && tasks[v[b].call].proc == tasks[v[a].call].proc)
		b++;
	return b;
}

/* Rank ri's layers in every pass and thread stretched: 0, or -ENOENT naming what lacks. */
static int stretch_rank(struct stretch *s, size_t ri, int64_t L, const char **ret_why)
{
	struct launch *v[2];
	size_t n[2];
	int err = 0;

	launches(s->g, ri, v, n);
	for (int pass = 0; pass < 2 && !err; pass++) {
		size_t threads = 0;

		for (size_t a = 0, b; a < n[pass]; a = b) {
			b = thread_end(s->g, v[pass], n[pass], a);
			if (!stretch_thread(s, v[pass] + a, b - a, L))
				threads++;
		}
		if (n[pass] && !threads) {
			err = -ENOENT;
			*ret_why = pass ? "the backward pass's launches do not repeat once a layer"
					: "the forward pass's launches do not repeat once a layer";
		}
	}
	free(v[0]);
	free(v[1]);
	return err;
}

int orr_retime_layers(const struct orr_graph *g, const struct orr_structure *st,
		      const struct orr_train_config *from, const struct orr_train_config *to,
		      const struct orr_retime_models *m, float *ret_factors, float *ret_cpu,
		      struct orr_retime *ret, const char **ret_why)
{
	struct stretch s = { .g = g, .gpu = ret_factors, .cpu = ret_cpu, .ret = ret };
	size_t n = orr_graph_task_count(g);
	const char *why = NULL;
	int err;

	if (ret_why)
		*ret_why = NULL;
	err = orr__retime(g, st, from, to, m, true, ret_factors, ret, &why);
	if (!err && (from->pp != 1 || from->vpp != 1))
		why = "pipeline stages", err = -ENOTSUP;
	if (!err && !(from->layers > 0 && to->layers > 0))
		err = -EINVAL;
	if (!err && from->layers < 2)
		why = "one layer does not repeat", err = -ENOENT;
	for (size_t t = 0; t < n && !err; t++)
		ret_cpu[t] = 1;
	s.k = err ? 1 : (float)((double)to->layers / (double)from->layers);
	for (size_t ri = 0; ri < orr_graph_rank_count(g) && !err; ri++)
		err = stretch_rank(&s, ri, from->layers, &why);
	if (ret_why)
		*ret_why = why;
	return err;
}

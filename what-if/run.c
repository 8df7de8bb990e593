/* SPDX-License-Identifier: MIT */
/*
 * A sweep's share of configurations on a pool of threads (docs/orrery-whatif.md,
 * "Threads and MPI"): each thread takes the next configuration from a shared counter,
 * keeps its results, and the calling thread reports progress until every thread is done;
 * the results are then put back in the order of the configurations, so that neither the
 * thread count nor the timing changes what comes out.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"
#include "banned.h"

struct shared {
	const struct orr_whatif_plan *p;
	const struct orr_whatif_context *x;
	uint64_t part, parts, total; /* this process's configurations: part + k x parts */
	atomic_uint_fast64_t next, done;
};

struct worker {
	struct shared *sh;
	pthread_t tid;
	bool started;
	struct orr_whatif_result *v;
	size_t n, cap;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	struct orr_synth_scratch *scratch = orr_synth_scratch_new();
	struct orr_whatif_result r;

	for (;;) {
		uint64_t k = atomic_fetch_add(&sh->next, 1);

		if (k >= sh->total)
			break;
		orr_whatif_eval(sh->p, sh->x, sh->part + k * sh->parts, scratch, &r);
		if (r.why != ORR_WHATIF_WHY_COUNT)
			ORR_VEC_PUSH(w->v, w->n, w->cap, r);
		atomic_fetch_add(&sh->done, 1);
	}
	orr_synth_scratch_free(scratch);
	return NULL;
}

static int by_index(const void *a, const void *b)
{
	const struct orr_whatif_result *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

void orr_whatif_sort(struct orr_whatif_result *v, size_t n)
{
	if (n)
		qsort(v, n, sizeof(*v), by_index);
}

static void nap(void)
{
	struct timespec t = { 0, 100 * 1000 * 1000 };

	nanosleep(&t, NULL);
}

/* The calling thread reports progress until the others are done. */
static void watch(struct shared *sh, orr_whatif_progress_fn progress, void *data)
{
	while (progress && atomic_load(&sh->done) < sh->total) {
		progress(data, atomic_load(&sh->done), sh->total);
		nap();
	}
	if (progress)
		progress(data, sh->total, sh->total);
}

/* The workers' results in one array, in the order of the configurations. */
static void gather(struct worker *w, int jobs, struct orr_whatif_result **ret, size_t *ret_n)
{
	size_t n = 0, k = 0;
	struct orr_whatif_result *v;

	for (int i = 0; i < jobs; i++)
		n += w[i].n;
	v = n ? orr_xmalloc(n * sizeof(*v)) : NULL;
	for (int i = 0; i < jobs; i++) {
		for (size_t j = 0; j < w[i].n; j++)
			v[k++] = w[i].v[j];
		free(w[i].v);
	}
	orr_whatif_sort(v, n);
	*ret = v;
	*ret_n = n;
}

int orr_whatif_run(const struct orr_whatif_plan *p, const struct orr_whatif_context *x,
		   uint64_t part, uint64_t parts, int jobs, orr_whatif_progress_fn progress,
		   void *progress_data, struct orr_whatif_result **ret, size_t *ret_n)
{
	struct shared sh = { .p = p, .x = x, .part = part, .parts = parts };
	struct worker *w;

	if (!x->gpu || parts < 1 || part >= parts)
		return -EINVAL;
	sh.total = p->count > part ? (p->count - part + parts - 1) / parts : 0;
	atomic_init(&sh.next, 0);
	atomic_init(&sh.done, 0);
	if (jobs < 1)
		jobs = 1;
	w = orr_xcalloc((size_t)jobs, sizeof(*w));
	w[0].sh = &sh;
	/* with progress to report, the calling thread watches and every job is a thread */
	for (int i = progress ? 0 : 1; i < jobs; i++) {
		w[i].sh = &sh;
		if (pthread_create(&w[i].tid, NULL, work, &w[i]))
			break;
		w[i].started = true;
	}
	if (w[0].started)
		watch(&sh, progress, progress_data);
	else
		work(&w[0]); /* also what a thread that could not start left */
	for (int i = 0; i < jobs; i++)
		if (w[i].started)
			pthread_join(w[i].tid, NULL);
	if (progress && !w[0].started)
		progress(progress_data, sh.total, sh.total);
	gather(w, jobs, ret, ret_n);
	free(w);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * A sweep's share of configurations on a pool of threads (docs/orrery-whatif.md,
 * "Threads and MPI"): each thread takes the next configuration from a shared counter
 * and evaluates it into a ring of results, no further ahead than the ring holds; the
 * calling thread hands the ring's results to the sink in the order of the
 * configurations as soon as they are done, and reports progress.  Neither the thread
 * count nor the timing changes what the sink receives, and memory stays that of the
 * ring whatever the number of configurations.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"
#include "banned.h"

/*
 * Results a thread may run ahead of the oldest not handed on (800 bytes each): most
 * configurations are refused in microseconds and a synthesized one takes up to a second
 * or so, so a short window would fill with refused ones behind one slow configuration
 * and leave the other threads idle.
 */
#define WINDOW_PER_JOB 4096

struct shared {
	const struct orr_whatif_plan *p;
	const struct orr_whatif_context *x;
	uint64_t part, parts; /* this process's configurations: orr_whatif_part() == part */
	uint64_t total;       /* how many, the k-th of them numbered k */
	uint64_t scan;        /* the configuration after the last taken */
	pthread_mutex_t lock;
	pthread_cond_t ready, room; /* a result done; the ring's oldest handed on */
	struct orr_whatif_result *ring;
	bool *done;
	size_t window;
	uint64_t next;  /* the next configuration to take (of total) */
	uint64_t base;  /* the oldest not handed on */
	uint64_t ndone; /* evaluated */
	bool stop;
};

uint64_t orr_whatif_part(uint64_t i, uint64_t parts)
{
	/* the finalizer of splitmix64: neighbouring numbers far apart */
	uint64_t x = i + UINT64_C(0x9E3779B97F4A7C15);

	x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
	x ^= x >> 31;
	return parts > 1 ? x % parts : 0;
}

/* This process's next configuration after the last taken (one remains: k < total). */
static uint64_t take(struct shared *sh)
{
	while (sh->parts > 1 && orr_whatif_part(sh->scan, sh->parts) != sh->part)
		sh->scan++;
	return sh->scan++;
}

/* This process's configurations among count. */
static uint64_t share(uint64_t count, uint64_t part, uint64_t parts)
{
	uint64_t n = 0;

	if (parts == 1)
		return count;
	for (uint64_t i = 0; i < count; i++)
		n += orr_whatif_part(i, parts) == part;
	return n;
}

static void *work(void *arg)
{
	struct shared *sh = arg;
	struct orr_synth_scratch *scratch = orr_synth_scratch_new();

	pthread_mutex_lock(&sh->lock);
	while (!sh->stop && sh->next < sh->total) {
		uint64_t k = sh->next, i;

		if (k >= sh->base + sh->window) { /* the ring is full: wait for the oldest */
			pthread_cond_wait(&sh->room, &sh->lock);
			continue;
		}
		sh->next++;
		i = take(sh);
		pthread_mutex_unlock(&sh->lock);
		/* slot k % window is this thread's until it is marked done */
		orr_whatif_eval(sh->p, sh->x, i, scratch, &sh->ring[k % sh->window]);
		pthread_mutex_lock(&sh->lock);
		sh->done[k % sh->window] = true;
		sh->ndone++;
		if (k == sh->base) /* what the calling thread waits for */
			pthread_cond_signal(&sh->ready);
	}
	pthread_mutex_unlock(&sh->lock);
	orr_synth_scratch_free(scratch);
	return NULL;
}

static int hand(const struct orr_whatif_result *r, orr_whatif_sink_fn sink, void *data)
{
	return r->why == ORR_WHATIF_WHY_COUNT ? 0 : sink(data, r);
}

/* In 100 ms from now, for a wait that reports progress. */
static struct timespec soon(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t); /* the clock of sh->ready (pool()) */
	t.tv_nsec += 100 * 1000 * 1000;
	if (t.tv_nsec >= 1000 * 1000 * 1000) {
		t.tv_sec++;
		t.tv_nsec -= 1000 * 1000 * 1000;
	}
	return t;
}

/* Whether 100 ms have passed since *last (then set to now): progress's pace. */
static bool due(struct timespec *last)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((int64_t)(now.tv_sec - last->tv_sec) * 1000000000 + (now.tv_nsec - last->tv_nsec) <
	    100000000)
		return false;
	*last = now;
	return true;
}

/*
 * The calling thread: hands on the done results in order, reports progress, until every
 * result is handed on or the sink stops it.  The lock is not held while the sink runs.
 */
static int deliver(struct shared *sh, orr_whatif_progress_fn progress, void *pdata,
		   orr_whatif_sink_fn sink, void *sdata)
{
	struct timespec last = { 0, 0 };
	int ret = 0;

	pthread_mutex_lock(&sh->lock);
	while (!ret && sh->base < sh->total) {
		uint64_t k = sh->base, ndone = sh->ndone, end = k;

		if (progress && due(&last)) {
			pthread_mutex_unlock(&sh->lock);
			progress(pdata, ndone, sh->total);
			pthread_mutex_lock(&sh->lock);
		}
		if (!sh->done[k % sh->window]) {
			struct timespec t = soon();

			pthread_cond_timedwait(&sh->ready, &sh->lock, &t);
			continue;
		}
		/* every result done from the oldest on, handed on in one go */
		while (end < sh->total && end < k + sh->window && sh->done[end % sh->window])
			end++;
		pthread_mutex_unlock(&sh->lock);
		for (uint64_t i = k; i < end && !ret; i++)
			ret = hand(&sh->ring[i % sh->window], sink, sdata);
		pthread_mutex_lock(&sh->lock);
		for (uint64_t i = k; i < end; i++)
			sh->done[i % sh->window] = false;
		sh->base = end;
		pthread_cond_broadcast(&sh->room);
	}
	sh->stop = true;
	pthread_cond_broadcast(&sh->room);
	pthread_mutex_unlock(&sh->lock);
	return ret;
}

/* One thread: the calling one evaluates and hands on each in turn. */
static int alone(struct shared *sh, orr_whatif_progress_fn progress, void *pdata,
		 orr_whatif_sink_fn sink, void *sdata)
{
	struct orr_synth_scratch *scratch = orr_synth_scratch_new();
	struct orr_whatif_result r;
	struct timespec last = { 0, 0 };
	int ret = 0;

	for (uint64_t k = 0; !ret && k < sh->total; k++) {
		if (progress && due(&last))
			progress(pdata, k, sh->total);
		orr_whatif_eval(sh->p, sh->x, take(sh), scratch, &r);
		ret = hand(&r, sink, sdata);
	}
	orr_synth_scratch_free(scratch);
	return ret;
}

/*
 * Threads that evaluate while the calling thread hands on: what the sink returned, and
 * *ret_started false when no thread could start (nothing handed on).
 */
static int pool(struct shared *sh, int jobs, orr_whatif_progress_fn progress, void *pdata,
		orr_whatif_sink_fn sink, void *sdata, bool *ret_started)
{
	pthread_condattr_t attr;
	pthread_t *tid = orr_xcalloc((size_t)jobs, sizeof(*tid));
	int started = 0, ret;

	sh->window = (size_t)jobs * WINDOW_PER_JOB;
	if (sh->total < sh->window) /* a small sweep: its whole */
		sh->window = sh->total ? (size_t)sh->total : 1;
	sh->ring = orr_xcalloc(sh->window, sizeof(*sh->ring));
	sh->done = orr_xcalloc(sh->window, sizeof(*sh->done));
	pthread_mutex_init(&sh->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* soon()'s: not moved by the date */
	pthread_cond_init(&sh->ready, &attr);
	pthread_condattr_destroy(&attr);
	pthread_cond_init(&sh->room, NULL);
	for (int i = 0; i < jobs && !pthread_create(&tid[i], NULL, work, sh); i++)
		started++;
	ret = started ? deliver(sh, progress, pdata, sink, sdata) : 0;
	*ret_started = started > 0;
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_cond_destroy(&sh->room);
	pthread_cond_destroy(&sh->ready);
	pthread_mutex_destroy(&sh->lock);
	free(sh->done);
	free(sh->ring);
	free(tid);
	return ret;
}

int orr_whatif_run(const struct orr_whatif_plan *p, const struct orr_whatif_context *x,
		   uint64_t part, uint64_t parts, int jobs, orr_whatif_progress_fn progress,
		   void *progress_data, orr_whatif_sink_fn sink, void *sink_data)
{
	struct shared sh = { .p = p, .x = x, .part = part, .parts = parts };
	bool started;
	int ret;

	if (!x->gpu || parts < 1 || part >= parts)
		return -EINVAL;
	sh.total = share(p->count, part, parts);
	if (jobs < 1)
		jobs = 1;
	/*
	 * One job is a thread too: the calling thread then hands on while it evaluates, so
	 * that a sink that waits (rank 0 of an MPI sweep merging the others' results) does
	 * not stall the evaluation
	 */
	ret = pool(&sh, jobs, progress, progress_data, sink, sink_data, &started);
	if (!started)
		ret = alone(&sh, progress, progress_data, sink, sink_data);
	if (progress && !ret)
		progress(progress_data, sh.total, sh.total);
	return ret;
}

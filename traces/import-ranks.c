/* SPDX-License-Identifier: MIT */
/*
 * The ranks a run's files make one job: every file names its rank (distributedInfo.rank,
 * or rankN / workerN in its name; a lone file is rank 0), no rank twice (but for the
 * tracer's file of a process the rank started, skipped: skip_children()).  A directory or
 * archive of files that name none is most likely separate runs of one process each,
 * which orrery reads one at a time: the message says which file to give.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "banned.h"

static int cmp_rank(const void *a, const void *b)
{
	const struct orr__rank_build *x = *(struct orr__rank_build *const *)a;
	const struct orr__rank_build *y = *(struct orr__rank_build *const *)b;

	return (x->pub.rank > y->pub.rank) - (x->pub.rank < y->pub.rank);
}

/*
 * What to do when a directory or archive is not one job: it may hold runs of one GPU
 * each (orrery's options select ranks of a job once it is read, so none helps here).
 */
#define ONE_JOB_HINT                                                                  \
	"a directory or archive is read as one job, a file per rank: give traces of " \
	"separate runs one file at a time, or name a job's files rankN.json"

/*
 * Several traces of path (a directory or an archive) that name no rank: runs of one
 * process each, most likely, which orrery reads one at a time.  The message names one
 * to give: a directory's file as it is, an archive's member once extracted.
 */
static int separate_runs(struct import_ctx *c, const char *path, size_t unranked)
{
	struct orr_trace *t = c->t;
	const char *first = NULL;
	size_t len = strlen(path);

	for (size_t i = 0; i < t->nranks && !first; i++)
		if (t->ranks[i]->pub.rank < 0)
			first = orr_strtab_get(t->strs, t->ranks[i]->pub.source);
	if (strncmp(first, path, len) == 0 && first[len] == ':')
		return orr_diag_set(c->diag, ORR_ERANK, path, -1, -1,
				    "%zu of its %zu traces name no rank (no distributedInfo.rank, "
				    "no rankN or workerN in their names): separate runs, not one "
				    "job; extract one member and give it, e.g. '%s', or name a "
				    "job's files rankN.json",
				    unranked, t->nranks, first + len + 1);
	return orr_diag_set(c->diag, ORR_ERANK, path, -1, -1,
			    "%zu of its %zu traces name no rank (no distributedInfo.rank, no "
			    "rankN or workerN in their names): separate runs, not one job; give "
			    "one file, e.g. '%s', or name a job's files rankN.json",
			    unranked, t->nranks, first);
}

/* Whether rank b was written by orrery's tracer (a process under `orrery record`). */
static bool from_tracer(const struct orr_trace *t, const struct orr__rank_build *b)
{
	static const char tracer[] = "orrery-tracer";

	return b->pub.producer != ORR_STR_NONE &&
	       strncmp(orr_strtab_get(t->strs, b->pub.producer), tracer, sizeof(tracer) - 1) == 0;
}

/* Whether rank b recorded steps: a step window, or a step's annotation. */
static bool has_steps(const struct orr_trace *t, const struct orr__rank_build *b)
{
	if (b->pub.first_step >= 0)
		return true;
	for (size_t i = 0; i < b->pub.nevents; i++) {
		const struct orr_event *e = &b->pub.events[i];

		if ((e->kind == ORR_EVENT_ANNOTATION || e->kind == ORR_EVENT_OP) &&
		    orr_step_number(orr_strtab_get(t->strs, e->name)) >= 0)
			return true;
	}
	return false;
}

static void warn(struct import_ctx *c, const char *msg)
{
	if (c->opts && c->opts->warn)
		c->opts->warn(c->opts->warn_data, msg);
}

/*
 * The tracer's files of one rank, ranks [lo, hi) (sorted by rank): a process the job's
 * process started inherits its environment, RANK and the tracer included, and writes a
 * file of the same rank once it initializes CUDA (an autotuning or compile worker, a
 * data loader's worker).  When exactly one of them recorded steps, it is the rank's and
 * the others are skipped with a warning; otherwise they stay, for the caller's error.
 */
static void skip_children(struct import_ctx *c, size_t lo, size_t hi, bool *drop)
{
	struct orr_trace *t = c->t;
	size_t main = hi, with_steps = 0;
	char msg[1536];

	for (size_t i = lo; i < hi; i++) {
		if (!from_tracer(t, t->ranks[i]))
			return;
		if (has_steps(t, t->ranks[i]))
			main = i, with_steps++;
	}
	if (with_steps != 1)
		return;
	for (size_t i = lo; i < hi; i++) {
		if (i == main)
			continue;
		drop[i] = true;
		snprintf(msg, sizeof(msg),
			 "skipped '%s': process %lld of rank %d recorded no steps, '%s' (process "
			 "%lld) did; a process the job started with its environment (a compile or "
			 "autotuning worker, a data loader's): 'orrery info' reads it alone",
			 orr_strtab_get(t->strs, t->ranks[i]->pub.source),
			 (long long)t->ranks[i]->pub.pid, t->ranks[i]->pub.rank,
			 orr_strtab_get(t->strs, t->ranks[main]->pub.source),
			 (long long)t->ranks[main]->pub.pid);
		warn(c, msg);
	}
}

/* Every rank's children (skip_children()) removed from the sorted ranks. */
static void drop_children(struct import_ctx *c)
{
	struct orr_trace *t = c->t;
	bool *drop = orr_xcalloc(t->nranks ? t->nranks : 1, sizeof(*drop));
	size_t kept = 0;

	for (size_t lo = 0, hi; lo < t->nranks; lo = hi) {
		for (hi = lo + 1;
		     hi < t->nranks && t->ranks[hi]->pub.rank == t->ranks[lo]->pub.rank; hi++)
			;
		if (hi - lo > 1)
			skip_children(c, lo, hi, drop);
	}
	for (size_t i = 0; i < t->nranks; i++) {
		if (drop[i])
			orr__rank_free(t->ranks[i]);
		else
			t->ranks[kept++] = t->ranks[i];
	}
	t->nranks = kept;
	free(drop);
}

struct span {
	int64_t lo, hi;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

/*
 * Ranks that share nothing: no world size above 1, no collective, and no moment (each
 * rank's events end before the next one's begin).  Separate runs of one process each,
 * named rankN, most likely: read as one job, as named, with a warning (a job's step
 * would span them all).
 */
static void warn_apart(struct import_ctx *c, const char *path)
{
	struct orr_trace *t = c->t;
	struct span *s;
	int64_t end = INT64_MIN;
	bool apart = true;
	char msg[1024];

	if (t->nranks < 2)
		return;
	for (size_t i = 0; i < t->nranks; i++)
		if (t->ranks[i]->pub.world_size > 1 || t->ranks[i]->pub.ncollectives ||
		    !t->ranks[i]->pub.nevents)
			return;
	s = orr_xcalloc(t->nranks, sizeof(*s));
	for (size_t i = 0; i < t->nranks; i++) {
		const struct orr_rank *r = &t->ranks[i]->pub;

		s[i] = (struct span){ INT64_MAX, INT64_MIN };
		for (size_t k = 0; k < r->nevents; k++) {
			int64_t lo = r->events[k].start_ns;
			int64_t hi =
				orr_time_add(lo, r->events[k].dur_ns > 0 ? r->events[k].dur_ns : 0);

			s[i].lo = lo < s[i].lo ? lo : s[i].lo;
			s[i].hi = hi > s[i].hi ? hi : s[i].hi;
		}
	}
	qsort(s, t->nranks, sizeof(*s), cmp_span);
	for (size_t i = 0; i < t->nranks && apart; i++) {
		apart = s[i].lo >= end;
		end = s[i].hi > end ? s[i].hi : end;
	}
	free(s);
	if (!apart)
		return;
	snprintf(msg, sizeof(msg),
		 "%s: its %zu ranks share no communicator, no collective and no moment (each "
		 "one's events end before the next one's begin): separate runs of one process "
		 "each, most likely, read here as one job whose steps span them all (" ONE_JOB_HINT
		 ")",
		 path, t->nranks);
	warn(c, msg);
}

int orr__import_check_ranks(struct import_ctx *c, const char *path)
{
	struct orr_trace *t = c->t;
	size_t unranked = 0;

	if (t->nranks == 1 && t->ranks[0]->pub.rank < 0)
		t->ranks[0]->pub.rank = 0;
	for (size_t i = 0; i < t->nranks; i++)
		unranked += t->ranks[i]->pub.rank < 0;
	if (unranked > 1)
		return separate_runs(c, path, unranked);
	for (size_t i = 0; i < t->nranks; i++)
		if (t->ranks[i]->pub.rank < 0)
			return orr_diag_set(c->diag, ORR_ERANK,
					    orr_strtab_get(t->strs, t->ranks[i]->pub.source), -1,
					    -1,
					    "cannot tell its rank: no distributedInfo.rank "
					    "and no rankN or workerN in its name (" ONE_JOB_HINT
					    ")");
	if (t->nranks) /* none for execution traces alone: orr__import_attach_ets() says so */
		qsort(t->ranks, t->nranks, sizeof(*t->ranks), cmp_rank);
	drop_children(c);
	for (size_t i = 1; i < t->nranks; i++)
		if (t->ranks[i]->pub.rank == t->ranks[i - 1]->pub.rank)
			return orr_diag_set(c->diag, ORR_ERANK,
					    orr_strtab_get(t->strs, t->ranks[i]->pub.source), -1,
					    -1, "rank %d also comes from '%s' (" ONE_JOB_HINT ")",
					    t->ranks[i]->pub.rank,
					    orr_strtab_get(t->strs, t->ranks[i - 1]->pub.source));
	warn_apart(c, path);
	return 0;
}

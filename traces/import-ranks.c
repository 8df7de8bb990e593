/* SPDX-License-Identifier: MIT */
/*
 * The ranks a run's files make one job: every file names its rank (distributedInfo.rank,
 * or rankN / workerN in its name; a lone file is rank 0), no rank twice.  A directory or
 * archive of files that name none is most likely separate runs of one process each,
 * which orrery reads one at a time: the message says which file to give.
 */
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
	for (size_t i = 1; i < t->nranks; i++)
		if (t->ranks[i]->pub.rank == t->ranks[i - 1]->pub.rank)
			return orr_diag_set(c->diag, ORR_ERANK,
					    orr_strtab_get(t->strs, t->ranks[i]->pub.source), -1,
					    -1, "rank %d also comes from '%s' (" ONE_JOB_HINT ")",
					    t->ranks[i]->pub.rank,
					    orr_strtab_get(t->strs, t->ranks[i - 1]->pub.source));
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * One file's bytes, read whole (import.c), into ranks by its format: Kineto JSON
 * (traces/kineto/), native (traces/native/) or an Nsight Systems SQLite export
 * (traces/nsys/); the rank from the file's name when the format does not give it; and
 * JSON or SQLite that is no trace, which a directory or archive skips.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "import.h"
#include "banned.h"

/* rank-3, rank_3, rank3, worker3 (any case) in the file's own name. */
static int rank_from_name(const char *path)
{
	static const char *const words[] = { "rank", "worker" };
	const char *base = path;

	/* The file's own name: after the last '/' and after an archive's "name:" prefix. */
	for (const char *p = path; *p; p++)
		if (*p == '/' || *p == ':')
			base = p + 1;
	for (const char *s = base; *s; s++) {
		for (size_t w = 0; w < 2; w++) {
			size_t n = strlen(words[w]);
			const char *d = s + n;
			long r = 0;

			if (strncasecmp(s, words[w], n) != 0)
				continue;
			if (*d == '-' || *d == '_')
				d++;
			if (!isdigit((unsigned char)*d))
				continue;
			for (; isdigit((unsigned char)*d) && r < INT32_MAX; d++)
				r = r * 10 + (*d - '0');
			if (r <= INT32_MAX)
				return (int)r;
		}
	}
	return -1;
}

static int check_rank_count(struct import_ctx *c, const char *name)
{
	if (c->t->nranks > c->lim.max[ORR__LIMIT_RANKS])
		return orr__limit_fail(&c->lim, ORR__LIMIT_RANKS, c->diag, name, -1, -1);
	return 0;
}

/* A PyTorch execution trace: {"schema": ..., "nodes": [...]} near its start. */
static bool looks_like_et(const struct buf *b)
{
	size_t n = b->len < 4096 ? b->len : 4096;

	return memmem(b->p, n, "\"schema\"", 8) && memmem(b->p, b->len, "\"nodes\"", 7);
}

/* The rank made for a file that turned out to be none (the last one made) goes. */
static void drop_rank(struct import_ctx *c, struct orr__rank_build *rb)
{
	struct orr_trace *t = c->t;

	if (t->nranks && t->ranks[t->nranks - 1] == rb) {
		t->nranks--;
		orr__rank_free(rb);
	}
}

/* JSON or SQLite that is no trace: its rank goes; the diag says what it is. */
static int not_a_trace(struct import_ctx *c, struct orr__rank_build *rb)
{
	drop_rank(c, rb);
	c->not_trace = true;
	return ORR_EFORMAT;
}

/* Under orr_import_options.et_path, what is no execution trace is an error. */
static int not_an_et(struct import_ctx *c, const char *name)
{
	return orr_diag_set(c->diag, ORR_EFORMAT, name, -1, -1,
			    "not a PyTorch execution trace (given as one: --et)");
}

/*
 * An execution trace, kept until the ranks are known (orr__import_attach_ets()); counted
 * adds its bytes to those parsed (not yet counted by a Kineto attempt).
 */
static int import_et(struct import_ctx *c, const char *name, struct buf *b, bool count)
{
	struct orr__et_build *eb = orr__et_new();
	struct orr_trace *t = c->t;
	int r;

	if (count)
		c->bytes += b->len;
	if ((r = orr__et_parse(t, eb, name, b->p, b->len, &c->lim, c->diag))) {
		orr__et_free(eb);
		if (r == ORR_EFORMAT && !c->et_only)
			c->not_trace = true;
		return r;
	}
	buf_release(b);
	eb->rank = rank_from_name(name);
	ORR_VEC_PUSH(t->ets, t->nets, t->cap_ets, eb);
	orr_debug("traces", "%s: PyTorch execution trace, rank %d, %zu nodes", name, eb->rank,
		  eb->nodes.n);
	return 0;
}

bool orr__import_skipped(struct import_ctx *c, const char *name, int r)
{
	char msg[1536];

	if (r != ORR_EFORMAT || !c->not_trace)
		return false;
	c->not_trace = false;
	if (c->opts && c->opts->warn) {
		snprintf(msg, sizeof(msg), "skipped '%s': not a trace: %s", name,
			 c->diag && c->diag->msg[0] ? c->diag->msg : orr_strerror(r));
		c->opts->warn(c->opts->warn_data, msg);
	}
	orr_diag_clear(c->diag);
	return true;
}

/* A new rank for the file name, whose b->len bytes count as parsed. */
static struct orr__rank_build *new_rank(struct import_ctx *c, const char *name, const struct buf *b)
{
	c->bytes += b->len;
	return orr__rank_new(c->t, orr_strtab_intern(c->t->strs, name, strlen(name)));
}

/* A rank read whole: its rank from its name when the format gave none; finished. */
static int finish_rank(struct import_ctx *c, const char *name, struct orr__rank_build *rb,
		       const char *format, bool native)
{
	if (!rb->has_rank)
		rb->pub.rank = rank_from_name(name);
	if (native)
		orr__rank_finish_native(c->t, rb);
	else
		orr__rank_finish(c->t, rb);
	orr_debug("traces", "%s: %s, rank %d, %zu events", name, format, rb->pub.rank,
		  rb->pub.nevents);
	return check_rank_count(c, name);
}

/* A rank read from Kineto JSON, its text released: one rank, or several split. */
static int kineto_done(struct import_ctx *c, const char *name, struct orr__rank_build *rb)
{
	int r;

	/* Several ranks in one file (orr_trace_write_chrome()): each its own. */
	if (rb->nparts)
		return (r = orr__chrome_split(c->t, rb, name, &c->lim, c->diag))
			       ? r
			       : check_rank_count(c, name);
	if ((r = orr__chrome_check_one(c->t, rb, name, c->diag)))
		return r;
	return finish_rank(c, name, rb, "Kineto JSON", false);
}

int orr__import_json_source(struct import_ctx *c, const char *name, struct orr__source *src)
{
	struct orr__rank_build *rb;
	struct buf b;
	int r;

	c->bytes += src->size;
	rb = orr__rank_new(c->t, orr_strtab_intern(c->t->strs, name, strlen(name)));
	r = orr__kineto_parse_source(c->t, rb, name, src, &c->lim, c->diag);
	/* No profiler trace, so nothing let go of: an execution trace is read whole. */
	if (r == ORR_EFORMAT && src->lo == 0) {
		if (src->hi < src->size && (r = src->more(src, 0, src->size)))
			return r;
		r = ORR_EFORMAT;
		b = (struct buf){ .p = src->p, .len = src->size, .cap = src->cap };
		if (looks_like_et(&b)) {
			drop_rank(c, rb);
			orr_diag_clear(c->diag);
			src->p = NULL;
			r = import_et(c, name, &b, false);
			buf_release(&b);
			return r;
		}
	}
	if (r == ORR_EFORMAT)
		return not_a_trace(c, rb);
	if (r || (r = orr__rank_check_values(rb, &c->lim, name, c->diag)) ||
	    (r = orr__rank_check_times(c->t, rb, name, c->diag)))
		return r;
	free(src->p);
	src->p = NULL;
	return kineto_done(c, name, rb);
}

int orr__import_json(struct import_ctx *c, const char *name, struct buf *b)
{
	struct orr__rank_build *rb;
	int r;

	if (b->len == 0)
		return orr_diag_set(c->diag, ORR_EEMPTY, name, -1, -1, "the file is empty");
	if (c->et_only)
		return looks_like_et(b) ? import_et(c, name, b, true) : not_an_et(c, name);
	rb = new_rank(c, name, b);
	r = orr__kineto_parse(c->t, rb, name, b->p, b->len, &c->lim, c->diag);
	/* No profiler trace: an execution trace ("schema", "nodes") is read as one. */
	if (r == ORR_EFORMAT && looks_like_et(b)) {
		drop_rank(c, rb);
		orr_diag_clear(c->diag);
		return import_et(c, name, b, false);
	}
	if (r == ORR_EFORMAT)
		return not_a_trace(c, rb);
	/* Times within +-ORR_TIME_MAX, for every format (traces/model.c). */
	if (r || (r = orr__rank_check_values(rb, &c->lim, name, c->diag)) ||
	    (r = orr__rank_check_times(c->t, rb, name, c->diag)))
		return r;
	/* The text is no longer needed: give its memory back before sorting. */
	buf_release(b);
	return kineto_done(c, name, rb);
}

int orr__import_native(struct import_ctx *c, const char *name, struct buf *b)
{
	struct orr__rank_build *rb;
	int r;

	if (c->et_only)
		return not_an_et(c, name);
	rb = new_rank(c, name, b);
	r = orr__native_parse(c->t, rb, name, b->p, b->len, &c->lim, &c->run_bytes, c->opts,
			      c->diag);
	if (r || (r = orr__rank_check_values(rb, &c->lim, name, c->diag)) ||
	    (r = orr__rank_check_times(c->t, rb, name, c->diag)))
		return r;
	buf_release(b);
	return finish_rank(c, name, rb, "native", true);
}

int orr__import_sqlite(struct import_ctx *c, const char *name, struct buf *b)
{
	struct orr__rank_build *rb;
	int r;

	if (c->et_only)
		return not_an_et(c, name);
	rb = new_rank(c, name, b);
	r = orr__nsys_parse(c->t, rb, name, b->p, b->len, &c->lim, c->diag);

	if (r == ORR_ENOTRACE)
		return not_a_trace(c, rb);
	if (r || (r = orr__rank_check_values(rb, &c->lim, name, c->diag)) ||
	    (r = orr__rank_check_times(c->t, rb, name, c->diag)))
		return r;
	buf_release(b);
	return finish_rank(c, name, rb, "Nsight Systems", false);
}

static struct orr__rank_build *rank_of(struct orr_trace *t, int32_t rank)
{
	for (size_t i = 0; i < t->nranks; i++)
		if (t->ranks[i]->pub.rank == rank)
			return t->ranks[i];
	return NULL;
}

int orr__import_attach_ets(struct import_ctx *c, const char *path)
{
	struct orr_trace *t = c->t;
	char msg[1536];

	if (t->nets && !t->nranks)
		return orr_diag_set(c->diag, ORR_ENOTRACE, path, -1, -1,
				    "PyTorch execution traces alone: orrery reads one with the "
				    "profiler trace of the same step (both in one directory, or "
				    "orrery --et ET TRACE)");
	for (size_t i = 0; i < t->nets; i++) {
		struct orr__et_build *eb = t->ets[i];
		const char *name = orr_strtab_get(t->strs, eb->pub.source);
		struct orr__rank_build *rb = eb->rank >= 0                    ? rank_of(t, eb->rank)
					     : t->nets == 1 && t->nranks == 1 ? t->ranks[0]
									      : NULL;

		if (!rb) {
			if (c->opts && c->opts->warn) {
				snprintf(msg, sizeof(msg),
					 "skipped '%s': an execution trace without the profiler "
					 "trace of its rank (name both rank-R)",
					 name);
				c->opts->warn(c->opts->warn_data, msg);
			}
			continue;
		}
		if (rb->pub.et)
			return orr_diag_set(c->diag, ORR_ERANK, name, -1, -1,
					    "a second execution trace for rank %d (also '%s')",
					    rb->pub.rank,
					    orr_strtab_get(t->strs, rb->pub.et->source));
		orr__et_link(t, rb, eb);
	}
	return 0;
}

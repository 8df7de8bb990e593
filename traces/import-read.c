/* SPDX-License-Identifier: MIT */
/*
 * A plain JSON file read while it is parsed (import.c reads its first piece and finds it
 * is JSON): the Kineto parser asks for more through orr__source.more(), and the bytes
 * before its window are let go of, so the file is never whole in memory.  Read, not
 * mapped, as every plain file (import.c's read_plain()).
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"
#include "internal.h"
#include "banned.h"

int orr__import_changed(struct orr_diag *diag, const char *path, size_t at, size_t size)
{
	return orr_diag_set(diag, -EIO, path, (int64_t)at, -1,
			    "the file changed while it was read (it had %zu bytes)", size);
}

/*
 * A plain JSON file read while it is parsed: orr__source.more().  Read with pread(), at
 * the source's own offset, so that a fork (a second thread's reader of the same file)
 * reads beside it.
 */
struct json_source {
	struct orr__source src; /* first: more() is given it */
	struct orr_diag *diag;
	const char *name;
	int fd;
	struct orr_diag own_diag; /* a fork's */
};

/* Bytes [hi, want) of the file, or an error: like read_plain(), a piece at a time. */
static int json_read(struct json_source *js, size_t want)
{
	struct orr__source *src = &js->src;
	struct stat st;
	const char *nul;
	char one;

	while (src->hi < want) {
		size_t at = src->hi - src->lo;
		size_t piece = want - src->hi < ORR__IMPORT_READ_BYTES ? want - src->hi
								       : ORR__IMPORT_READ_BYTES;
		ssize_t n = pread(js->fd, src->p + at, piece, (off_t)src->hi);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return orr_diag_set(js->diag, -errno, js->name, (int64_t)src->hi, -1,
					    "read failed");
		if (n == 0)
			return orr__import_changed(js->diag, js->name, src->hi, src->size);
		src->hi += (size_t)n;
		/* Bytes read while the file was cut short may be zeros: say what happened. */
		nul = memchr(src->p + at, '\0', (size_t)n);
		if (nul && fstat(js->fd, &st) == 0 && (size_t)st.st_size != src->size)
			return orr__import_changed(js->diag, js->name, src->hi, src->size);
		if (nul)
			return orr_diag_set(js->diag, ORR_EMALFORMED, js->name,
					    (int64_t)(src->lo + (size_t)(nul - src->p)), -1,
					    "a NUL byte, which JSON text never holds");
	}
	memset(src->p + (src->hi - src->lo), 0, ORR__JSON_PADDING);
	/* One byte more is one too many: the file grew. */
	if (src->hi == src->size && pread(js->fd, &one, 1, (off_t)src->size) > 0)
		return orr__import_changed(js->diag, js->name, src->hi, src->size);
	return 0;
}

static int json_more(struct orr__source *src, size_t keep, size_t want)
{
	struct json_source *js = (struct json_source *)src;

	if (want > src->size)
		want = src->size;
	if (keep < src->lo || keep > src->hi) { /* nothing kept: read on from keep */
		src->lo = src->hi = keep;
	} else {
		memmove(src->p, src->p + (keep - src->lo), src->hi - keep);
		src->lo = keep;
	}
	if (want - keep + ORR__JSON_PADDING > src->cap) {
		src->cap = want - keep + ORR__JSON_PADDING;
		src->p = orr_xrealloc(src->p, src->cap);
	}
	return json_read(js, want);
}

static void json_close(struct orr__source *fork)
{
	if (!fork)
		return;
	free(fork->p);
	free(fork);
}

static struct orr__source *json_fork(struct orr__source *src, size_t at)
{
	struct json_source *parent = (struct json_source *)src;
	struct json_source *js = orr_xcalloc(1, sizeof(*js));

	js->src = (struct orr__source){ .p = orr_xmalloc(ORR__JSON_PADDING),
					.lo = at,
					.hi = at,
					.size = src->size,
					.cap = ORR__JSON_PADDING,
					.more = json_more,
					.fork = NULL,
					.close = json_close };
	memset(js->src.p, 0, ORR__JSON_PADDING);
	js->diag = &js->own_diag;
	js->name = parent->name;
	js->fd = parent->fd;
	return &js->src;
}

static _Thread_local size_t last_json_bytes;

size_t orr__import_last_json_bytes(void)
{
	return last_json_bytes;
}

void orr__import_read_json_reset(void)
{
	last_json_bytes = 0;
}

/*
 * A plain JSON file of which b holds the first piece (taken): parsed while the rest is read into
 * a buffer of about four parser windows (traces/kineto/), not the whole file, so that
 * the pages of a buffer as large as the file are neither faulted nor zeroed (a fifth of
 * an import) nor held.  Whatever is no Kineto trace is still read whole.
 */
int orr__import_read_json(struct import_ctx *c, int fd, size_t size, const char *name,
			  struct buf *b)
{
	struct json_source js = {
		.src = { .p = b->p,
			 .hi = b->len,
			 .size = size,
			 .cap = b->cap,
			 .more = json_more,
			 .fork = json_fork,
			 .close = json_close },
		.diag = c->diag,
		.name = name,
		.fd = fd,
	};
	int r;

	/* The rest of the file, counted once (the first piece was): a fork's reads overlap. */
	c->run_bytes += size - b->len;
	*b = (struct buf){ 0 };
	memset(js.src.p + js.src.hi, 0, ORR__JSON_PADDING);
	r = orr__import_json_source(c, name, &js.src);
	last_json_bytes = js.src.cap;
	free(js.src.p);
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * NVTX records from the job's threads to the writer thread, without a lock per record.
 *
 * Each thread that makes an NVTX call gets its own chunk (64 KiB) and appends records to
 * it: a fixed header, then the name, NUL-terminated and padded to 8 bytes.  A record is
 * published by a release store of the chunk's `used`; the writer reads up to an acquire
 * load of it, so it never sees half a record.  A full chunk goes to a list for the writer
 * and the thread takes another from the free list, both under one short mutex (once per
 * chunk, not per record).  The writer takes the full chunks and, at each pass, reads what
 * the threads' current chunks hold so far (`read` is its own mark in a chunk).  Only the
 * writer frees or recycles a chunk, and only one that came from the full list, so a
 * current chunk it reads is never freed under it.
 *
 * Chunks are bounded (ORR__NVTX_MAX_CHUNKS); past the bound a record is dropped and
 * counted.  A thread's chunk goes to the full list when the thread ends (its key's
 * destructor), so what it recorded is kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "banned.h"

struct orr__nvtx_chunk {
	struct orr__nvtx_chunk *next;      /* full or free list */
	struct orr__nvtx_chunk *snap_next; /* the writer's list of current chunks */
	_Atomic uint32_t used;             /* bytes published by the owner */
	uint32_t read;                     /* bytes the writer has read */
	uint32_t pid, tid;
	_Alignas(8) uint8_t data[ORR__NVTX_CHUNK_BYTES];
};

/* One record's header; the name follows. */
struct orr__nvtx_rec {
	int64_t ts;
	uint64_t id;
	const char *domain;
	uint32_t size; /* header and name, a multiple of 8 */
	uint32_t len;  /* name bytes, without the NUL */
	uint8_t marker;
};

struct orr__nvtx_stack {
	uint64_t id;
	const void *domain;
};

struct orr__nvtx_thread {
	struct orr__nvtx_thread *next, **prev; /* all threads, under the lock */
	struct orr__nvtx_chunk *cur;           /* written by the owner, read under the lock */
	uint32_t pid, tid;
	uint64_t index, next_id;
	size_t depth, lost_depth; /* pushes on the stack, and pushes beyond it */
	struct orr__nvtx_stack stack[ORR__NVTX_MAX_DEPTH];
};

static struct {
	pthread_mutex_t lock;
	pthread_key_t key;
	bool key_ready;
	void (*wake)(void *arg); /* tells the writer a chunk is full */
	void *wake_arg;
	_Atomic bool on;
	struct orr__nvtx_thread *threads;
	struct orr__nvtx_chunk *full, *full_tail, *free;
	size_t nfull, nchunks;
	_Atomic uint64_t dropped, threads_seen;
} N = { .lock = PTHREAD_MUTEX_INITIALIZER };

static __thread struct orr__nvtx_thread *tls;

int64_t orr__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Hands a chunk to the writer; the lock is held. */
static void push_full(struct orr__nvtx_chunk *c)
{
	c->next = NULL;
	if (N.full_tail)
		N.full_tail->next = c;
	else
		N.full = c;
	N.full_tail = c;
	N.nfull++;
}

/* A thread ends: its chunk goes to the writer, its entry away. */
static void thread_gone(void *p)
{
	struct orr__nvtx_thread *t = p;

	pthread_mutex_lock(&N.lock);
	if (t->cur)
		push_full(t->cur);
	t->cur = NULL;
	*t->prev = t->next;
	if (t->next)
		t->next->prev = t->prev;
	pthread_mutex_unlock(&N.lock);
	N.wake(N.wake_arg);
	if (tls == t)
		tls = NULL;
	free(t);
}

int orr__nvtx_init(void (*wake)(void *arg), void *arg)
{
	int r;

	if (N.key_ready)
		return 0;
	N.wake = wake;
	N.wake_arg = arg;
	if ((r = pthread_key_create(&N.key, thread_gone)))
		return -r;
	N.key_ready = true;
	atomic_store(&N.on, true);
	return 0;
}

bool orr__nvtx_on(void)
{
	return atomic_load_explicit(&N.on, memory_order_relaxed);
}

void orr__nvtx_stop(void)
{
	atomic_store(&N.on, false);
}

void orr__nvtx_after_fork(void)
{
	pthread_mutex_init(&N.lock, NULL);
	atomic_store(&N.on, false);
}

/* The calling thread's entry, made at its first NVTX call; NULL without memory. */
static struct orr__nvtx_thread *self(void)
{
	struct orr__nvtx_thread *t = tls;

	if (t)
		return t;
	if (!N.key_ready || !(t = orr__tcalloc(1, sizeof(*t))))
		return NULL;
	t->pid = (uint32_t)getpid();
	t->tid = (uint32_t)gettid();
	t->index = atomic_fetch_add(&N.threads_seen, 1) + 1;
	pthread_mutex_lock(&N.lock);
	t->next = N.threads;
	t->prev = &N.threads;
	if (N.threads)
		N.threads->prev = &t->next;
	N.threads = t;
	pthread_mutex_unlock(&N.lock);
	pthread_setspecific(N.key, t);
	tls = t;
	return t;
}

/* The current chunk handed over and a fresh one taken; false when none can be had. */
static bool next_chunk(struct orr__nvtx_thread *t)
{
	struct orr__nvtx_chunk *c = NULL;
	bool grow, full = t->cur != NULL;

	pthread_mutex_lock(&N.lock);
	if (t->cur)
		push_full(t->cur);
	t->cur = NULL;
	if ((c = N.free))
		N.free = c->next;
	grow = !c && N.nchunks < ORR__NVTX_MAX_CHUNKS;
	if (grow)
		N.nchunks++; /* reserved: allocated outside the lock */
	pthread_mutex_unlock(&N.lock);
	if (full)
		N.wake(N.wake_arg);
	if (grow && !(c = orr__talloc_aligned(8, sizeof(*c)))) {
		pthread_mutex_lock(&N.lock);
		N.nchunks--;
		pthread_mutex_unlock(&N.lock);
	}
	if (!c)
		return false;
	c->next = c->snap_next = NULL;
	atomic_store_explicit(&c->used, 0, memory_order_relaxed);
	c->read = 0;
	c->pid = t->pid;
	c->tid = t->tid;
	pthread_mutex_lock(&N.lock);
	t->cur = c;
	pthread_mutex_unlock(&N.lock);
	return true;
}

void orr__nvtx_put(uint8_t marker, int64_t ts, uint64_t id, const char *domain, const char *name,
		   size_t len)
{
	struct orr__nvtx_thread *t = self();
	struct orr__nvtx_rec h;
	struct orr__nvtx_chunk *c;
	uint32_t used, size;

	if (!t) {
		atomic_fetch_add(&N.dropped, 1);
		return;
	}
	if (len > ORR__NVTX_MAX_NAME)
		len = ORR__NVTX_MAX_NAME;
	size = (uint32_t)((sizeof(h) + len + 1 + 7) & ~(size_t)7);
	c = t->cur;
	used = c ? atomic_load_explicit(&c->used, memory_order_relaxed) : 0;
	if (!c || used + size > ORR__NVTX_CHUNK_BYTES) {
		if (!next_chunk(t)) {
			atomic_fetch_add(&N.dropped, 1);
			return;
		}
		c = t->cur;
		used = 0;
	}
	h = (struct orr__nvtx_rec){ ts, id, domain, size, (uint32_t)len, marker };
	memcpy(c->data + used, &h, sizeof(h));
	if (len)
		memcpy(c->data + used + sizeof(h), name, len);
	c->data[used + sizeof(h) + len] = '\0';
	atomic_store_explicit(&c->used, used + size, memory_order_release);
}

uint64_t orr__nvtx_new_id(void)
{
	struct orr__nvtx_thread *t = self();

	/* 2^24 threads of 2^40 ranges each; 0 is never an id. */
	return t ? (t->index & 0xffffff) << 40 | (++t->next_id & ((UINT64_C(1) << 40) - 1)) : 0;
}

uint64_t orr__nvtx_push(const void *domain, int *ret_depth)
{
	struct orr__nvtx_thread *t = self();
	uint64_t id;

	*ret_depth = -1;
	if (!t)
		return 0;
	if (t->depth == ORR__NVTX_MAX_DEPTH) {
		t->lost_depth++;
		*ret_depth = (int)(t->depth + t->lost_depth - 1);
		return 0;
	}
	id = orr__nvtx_new_id();
	t->stack[t->depth++] = (struct orr__nvtx_stack){ id, domain };
	*ret_depth = (int)(t->depth + t->lost_depth - 1);
	return id;
}

uint64_t orr__nvtx_pop(const void *domain, int *ret_depth)
{
	struct orr__nvtx_thread *t = tls;
	uint64_t id;
	size_t i;

	*ret_depth = -1;
	if (!t)
		return 0;
	if (t->lost_depth) {
		t->lost_depth--;
		*ret_depth = (int)(t->depth + t->lost_depth);
		return 0;
	}
	/* Each domain has its own stack: the innermost range of this domain ends. */
	for (i = t->depth; i > 0 && t->stack[i - 1].domain != domain; i--)
		;
	if (!i)
		return 0;
	id = t->stack[i - 1].id;
	memmove(&t->stack[i - 1], &t->stack[i], (t->depth - i) * sizeof(t->stack[0]));
	t->depth--;
	*ret_depth = (int)t->depth;
	return id;
}

size_t orr__nvtx_backlog(void)
{
	size_t n;

	pthread_mutex_lock(&N.lock);
	n = N.nfull;
	pthread_mutex_unlock(&N.lock);
	return n;
}

uint64_t orr__nvtx_dropped(void)
{
	return atomic_load(&N.dropped);
}

/* Delivers the chunk's records from the writer's mark to what its owner has published. */
static uint64_t read_chunk(struct orr__nvtx_chunk *c,
			   void (*add)(void *data, const struct orr__trec *r), void *data)
{
	uint32_t end = atomic_load_explicit(&c->used, memory_order_acquire);
	uint64_t n = 0;

	while (c->read < end) {
		struct orr__nvtx_rec h;
		struct orr__trec r = { .kind = ORR__TREC_MARKER, .pid = c->pid, .tid = c->tid };

		memcpy(&h, c->data + c->read, sizeof(h));
		r.name = (const char *)c->data + c->read + sizeof(h);
		r.start_ns = r.end_ns = h.ts;
		r.id = h.id;
		r.domain = h.domain;
		r.marker = h.marker;
		if (h.marker == ORR__NVTX_THREAD_NAME) {
			r.kind = ORR__TREC_NAME;
			r.tid = (uint32_t)h.id;
			r.id = 0;
		}
		add(data, &r);
		c->read += h.size;
		n++;
	}
	return n;
}

uint64_t orr__nvtx_drain(void (*add)(void *data, const struct orr__trec *r), void *data)
{
	struct orr__nvtx_chunk *full, *snap = NULL, *c, *next;
	uint64_t n = 0;

	pthread_mutex_lock(&N.lock);
	full = N.full;
	N.full = N.full_tail = NULL;
	N.nfull = 0;
	for (struct orr__nvtx_thread *t = N.threads; t; t = t->next)
		if (t->cur) {
			t->cur->snap_next = snap;
			snap = t->cur;
		}
	pthread_mutex_unlock(&N.lock);
	for (c = full; c; c = next) {
		next = c->next;
		n += read_chunk(c, add, data);
		pthread_mutex_lock(&N.lock);
		c->next = N.free;
		N.free = c;
		pthread_mutex_unlock(&N.lock);
	}
	for (c = snap; c; c = c->snap_next)
		n += read_chunk(c, add, data);
	return n;
}

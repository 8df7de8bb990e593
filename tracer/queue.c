/* SPDX-License-Identifier: MIT */
/*
 * Activity buffers between CUPTI and the writer thread.  CUPTI asks for an empty buffer
 * and hands back full ones on its own threads (and on the thread that flushes); both
 * paths take one short mutex and never do I/O.  The writer keeps spare buffers ready,
 * allocated and with every page touched (orr__queue_reserve()), so that a request on a
 * job's thread only takes one from a list: it allocates only when none is left.  The pool is bounded: past max_bufs, or
 * when malloc fails, a request is declined (CUPTI then drops records and counts them)
 * and the refusal is counted here.  Each buffer carries its header in front of the
 * 8-byte aligned data, so a full buffer is found again from the data pointer alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "banned.h"

#define HEADER_BYTES 64 /* >= sizeof(struct orr__buf), a multiple of 8 */

_Static_assert(sizeof(struct orr__buf) <= HEADER_BYTES, "buffer header too large");

int orr__queue_init(struct orr__queue *q, size_t buf_bytes, size_t max_bufs)
{
	*q = (struct orr__queue){ .buf_bytes = buf_bytes, .max_bufs = max_bufs };
	atomic_init(&q->declined, 0);
	atomic_init(&q->requests, 0);
	if (sem_init(&q->wake, 0, 0) != 0)
		return -errno;
	pthread_mutex_init(&q->lock, NULL);
	return 0;
}

static void free_list(struct orr__buf *b)
{
	while (b) {
		struct orr__buf *next = b->next;

		free(b);
		b = next;
	}
}

void orr__queue_release(struct orr__queue *q)
{
	free_list(q->free);
	free_list(q->head);
	q->free = q->head = q->tail = NULL;
	pthread_mutex_destroy(&q->lock);
	sem_destroy(&q->wake);
}

static struct orr__buf *new_buf(size_t bytes)
{
	/* 64-byte alignment for the block keeps the data after the header 8-byte aligned. */
	struct orr__buf *b = orr__talloc_aligned(64, HEADER_BYTES + bytes);

	if (!b)
		return NULL;
	b->next = NULL;
	b->data = (uint8_t *)b + HEADER_BYTES;
	b->valid = 0;
	return b;
}

uint8_t *orr__queue_get(struct orr__queue *q)
{
	struct orr__buf *b = NULL;
	bool allocate = false;

	pthread_mutex_lock(&q->lock);
	if (q->free) {
		b = q->free;
		q->free = b->next;
		q->nfree--;
	} else if (q->nbufs < q->max_bufs) {
		q->nbufs++; /* reserved before allocating, outside the lock */
		q->caller_allocs++;
		allocate = true;
	}
	pthread_mutex_unlock(&q->lock);
	if (allocate && !(b = new_buf(q->buf_bytes))) {
		pthread_mutex_lock(&q->lock);
		q->nbufs--;
		pthread_mutex_unlock(&q->lock);
	}
	if (!b) {
		atomic_fetch_add(&q->declined, 1);
		return NULL;
	}
	return b->data;
}

static struct orr__buf *header_of(uint8_t *data)
{
	return (struct orr__buf *)(data - HEADER_BYTES);
}

void orr__queue_put(struct orr__queue *q, uint8_t *data, size_t valid)
{
	struct orr__buf *b;

	if (!data)
		return;
	b = header_of(data);
	b->valid = valid;
	b->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	q->queued++;
	pthread_mutex_unlock(&q->lock);
	sem_post(&q->wake);
}

static struct orr__buf *take(struct orr__queue *q)
{
	struct orr__buf *b;

	pthread_mutex_lock(&q->lock);
	b = q->head;
	if (b) {
		q->head = b->next;
		if (!q->head)
			q->tail = NULL;
		q->queued--;
		b->next = NULL;
	}
	pthread_mutex_unlock(&q->lock);
	return b;
}

struct orr__buf *orr__queue_pop(struct orr__queue *q, int64_t timeout_ns)
{
	struct orr__buf *b = take(q);
	struct timespec ts;

	if (b || timeout_ns <= 0)
		return b;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(timeout_ns / 1000000000);
	ts.tv_nsec += (long)(timeout_ns % 1000000000);
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	while (sem_timedwait(&q->wake, &ts) != 0 && errno == EINTR)
		;
	return take(q);
}

void orr__queue_recycle(struct orr__queue *q, struct orr__buf *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&q->lock);
	b->next = q->free;
	q->free = b;
	q->nfree++;
	pthread_mutex_unlock(&q->lock);
}

size_t orr__queue_reserve(struct orr__queue *q, size_t spare)
{
	size_t made = 0;

	for (;;) {
		struct orr__buf *b;
		bool need;

		pthread_mutex_lock(&q->lock);
		need = q->nfree < spare && q->nbufs < q->max_bufs;
		if (need)
			q->nbufs++; /* reserved before allocating, outside the lock */
		pthread_mutex_unlock(&q->lock);
		if (!need)
			return made;
		b = new_buf(q->buf_bytes);
		if (!b) {
			pthread_mutex_lock(&q->lock);
			q->nbufs--;
			pthread_mutex_unlock(&q->lock);
			return made;
		}
		memset(b->data, 0, q->buf_bytes); /* the page faults happen here, not in the job */
		orr__queue_recycle(q, b);
		made++;
	}
}

void orr__queue_drop(struct orr__queue *q, uint8_t *data)
{
	if (data)
		orr__queue_recycle(q, header_of(data));
}

void orr__queue_request(struct orr__queue *q, unsigned req)
{
	atomic_fetch_or(&q->requests, req);
	sem_post(&q->wake);
}

unsigned orr__queue_take_requests(struct orr__queue *q)
{
	return atomic_exchange(&q->requests, 0);
}

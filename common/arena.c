/* SPDX-License-Identifier: MIT */
/* A bump allocator: strings and small records that live as long as a trace. */
#include <stdlib.h>

#include "orrery/common.h"
#include "banned.h"

enum { BLOCK_BYTES = 1 << 20 };

struct block {
	struct block *next;
	size_t used, size;
	max_align_t data[];
};

struct orr_arena {
	struct block *head;
};

struct orr_arena *orr_arena_new(void)
{
	return orr_xcalloc(1, sizeof(struct orr_arena));
}

void orr_arena_free(struct orr_arena *a)
{
	struct block *b, *next;

	if (!a)
		return;
	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	free(a);
}

static struct block *block_new(size_t size)
{
	struct block *b = orr_xmalloc(sizeof(*b) + size);

	b->next = NULL;
	b->used = 0;
	b->size = size;
	return b;
}

void *orr_arena_alloc(struct orr_arena *a, size_t size, size_t align)
{
	struct block *b = a->head;
	size_t at;

	if (b) {
		at = (b->used + align - 1) & ~(align - 1);
		if (at + size <= b->size) {
			b->used = at + size;
			return (char *)b->data + at;
		}
	}
	/* Oversized requests get a block of their own behind the current one. */
	if (size > BLOCK_BYTES / 4) {
		struct block *big = block_new(size);

		big->used = size;
		if (b) {
			big->next = b->next;
			b->next = big;
		} else {
			a->head = big;
		}
		return big->data;
	}
	b = block_new(BLOCK_BYTES);
	b->next = a->head;
	a->head = b;
	b->used = size;
	return b->data;
}

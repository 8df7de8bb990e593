/* SPDX-License-Identifier: MIT */
/*
 * String interning: open addressing on a power-of-two table of ids, strings in an
 * arena.  Kernel names are long and repeat thousands of times, so a trace's names
 * cost one copy each.
 */
#include <stdlib.h>
#include <string.h>

#include "orrery/common.h"
#include "banned.h"

struct entry {
	const char *s;
	uint32_t len;
	uint32_t hash;
};

struct orr_strtab {
	struct orr_arena *arena;
	struct entry *entries; /* by id */
	size_t n, cap;
	uint32_t *slots; /* id + 1, 0 = empty */
	size_t nslots;
};

/* FNV-1a over 8-byte words then the tail: fast enough and well spread for names. */
static uint32_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

static void rehash(struct orr_strtab *t, size_t nslots)
{
	size_t mask = nslots - 1;

	free(t->slots);
	t->slots = orr_xcalloc(nslots, sizeof(*t->slots));
	t->nslots = nslots;
	for (size_t id = 0; id < t->n; id++) {
		size_t i = t->entries[id].hash & mask;

		while (t->slots[i])
			i = (i + 1) & mask;
		t->slots[i] = (uint32_t)id + 1;
	}
}

struct orr_strtab *orr_strtab_new(void)
{
	struct orr_strtab *t = orr_xcalloc(1, sizeof(*t));

	t->arena = orr_arena_new();
	rehash(t, 1024);
	orr_strtab_intern(t, "", 0);
	return t;
}

void orr_strtab_free(struct orr_strtab *t)
{
	if (!t)
		return;
	orr_arena_free(t->arena);
	free(t->entries);
	free(t->slots);
	free(t);
}

static size_t lookup(const struct orr_strtab *t, const char *s, size_t len, uint32_t h)
{
	size_t mask = t->nslots - 1;
	size_t i = h & mask;

	for (; t->slots[i]; i = (i + 1) & mask) {
		const struct entry *e = &t->entries[t->slots[i] - 1];

		if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0)
			break;
	}
	return i;
}

uint32_t orr_strtab_find(const struct orr_strtab *t, const char *s, size_t len)
{
	if (len == 0)
		return 0;
	size_t i = lookup(t, s, len, hash_bytes(s, len));

	return t->slots[i] ? t->slots[i] - 1 : UINT32_MAX;
}

uint32_t orr_strtab_intern(struct orr_strtab *t, const char *s, size_t len)
{
	uint32_t h;
	size_t i;
	char *copy;

	if (len == 0 && t->n) /* "" is id 0; s may be NULL */
		return 0;
	h = hash_bytes(s, len);
	i = lookup(t, s, len, h);

	if (t->slots[i])
		return t->slots[i] - 1;
	copy = orr_arena_alloc(t->arena, len + 1, 1);
	if (len)
		memcpy(copy, s, len);
	copy[len] = '\0';
	ORR_VEC_PUSH(t->entries, t->n, t->cap,
		     ((struct entry){ .s = copy, .len = (uint32_t)len, .hash = h }));
	t->slots[i] = (uint32_t)t->n;
	if (t->n * 2 > t->nslots)
		rehash(t, t->nslots * 2);
	return (uint32_t)t->n - 1;
}

const char *orr_strtab_get(const struct orr_strtab *t, uint32_t id)
{
	return id < t->n ? t->entries[id].s : "";
}

size_t orr_strtab_len(const struct orr_strtab *t, uint32_t id)
{
	return id < t->n ? t->entries[id].len : 0;
}

size_t orr_strtab_count(const struct orr_strtab *t)
{
	return t->n;
}

/* SPDX-License-Identifier: MIT */
/*
 * An open-addressing map from uint64 keys to uint64 values (linear probing, deletion by
 * backward shift), for the tracer's places, name caches and pairing tables.  Growth
 * that fails leaves the map as it was.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

static size_t slot_of(uint64_t key, size_t cap)
{
	/* Keys are often small and dense: mix them before masking. */
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

bool orr__map_find(const struct orr__map *m, uint64_t key, uint64_t *ret_val)
{
	if (!m->cap || key == ORR__MAP_EMPTY)
		return false;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*ret_val = m->vals[i];
			return true;
		}
		if (m->keys[i] == ORR__MAP_EMPTY)
			return false;
	}
}

static void insert(uint64_t *keys, uint64_t *vals, size_t cap, uint64_t key, uint64_t val)
{
	size_t i = slot_of(key, cap);

	while (keys[i] != ORR__MAP_EMPTY && keys[i] != key)
		i = (i + 1) & (cap - 1);
	keys[i] = key;
	vals[i] = val;
}

static int grow(struct orr__map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = orr__talloc(cap * sizeof(*keys));
	uint64_t *vals = orr__talloc(cap * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cap; i++)
		keys[i] = ORR__MAP_EMPTY;
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] != ORR__MAP_EMPTY)
			insert(keys, vals, cap, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int orr__map_put(struct orr__map *m, uint64_t key, uint64_t val)
{
	uint64_t old;
	int r;

	if (key == ORR__MAP_EMPTY)
		return -EINVAL;
	if (orr__map_find(m, key, &old)) {
		insert(m->keys, m->vals, m->cap, key, val);
		return 0;
	}
	/* At most half full, so probes stay short. */
	if ((m->n + 1) * 2 > m->cap && (r = grow(m)))
		return r;
	insert(m->keys, m->vals, m->cap, key, val);
	m->n++;
	return 0;
}

bool orr__map_remove(struct orr__map *m, uint64_t key)
{
	size_t i, j, mask = m->cap - 1;
	uint64_t v;

	if (!orr__map_find(m, key, &v))
		return false;
	for (i = slot_of(key, m->cap); m->keys[i] != key; i = (i + 1) & mask)
		;
	/* Shift back every later entry of the run whose home is at or before the hole. */
	for (j = (i + 1) & mask; m->keys[j] != ORR__MAP_EMPTY; j = (j + 1) & mask) {
		size_t home = slot_of(m->keys[j], m->cap);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = ORR__MAP_EMPTY;
	m->n--;
	return true;
}

void orr__map_release(struct orr__map *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct orr__map){ 0 };
}

uint64_t orr__hash64(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

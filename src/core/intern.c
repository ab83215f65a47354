/*
 * intern.c - string interning.
 *
 * A 1 GB trace holds a few thousand distinct names repeated millions of
 * times. Interning turns each into a 32-bit id at parse time, so the event
 * store stays columnar and comparisons are integer compares.
 */
#include <stdlib.h>
#include <string.h>
#include "trainscope/core.h"

uint64_t ts_hash(const void *data, size_t n)
{
	/* FNV-1a over 8-byte words, then a final avalanche (splitmix64). */
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)n;

	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
		p += 8;
		n -= 8;
	}
	while (n--) {
		h = (h ^ *p++) * 0x100000001b3ULL;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

void ts_intern_init(struct ts_intern *t)
{
	memset(t, 0, sizeof(*t));
	ts_arena_init(&t->arena);
}

void ts_intern_release(struct ts_intern *t)
{
	free(t->slots);
	free(t->hashes);
	free(t->strs);
	free(t->lens);
	ts_arena_release(&t->arena);
	memset(t, 0, sizeof(*t));
}

static int rehash(struct ts_intern *t, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return TS_ENOMEM;
	for (size_t id = 0; id < t->count; id++) {
		size_t i = t->hashes[id] & (nslots - 1);
		while (slots[i])
			i = (i + 1) & (nslots - 1);
		slots[i] = (uint32_t)id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

int64_t ts_intern_find(const struct ts_intern *t, const char *s, size_t n)
{
	if (!t->nslots)
		return -1;
	uint32_t h = (uint32_t)ts_hash(s, n);
	size_t i = h & (t->nslots - 1);

	while (t->slots[i]) {
		uint32_t id = t->slots[i] - 1;
		if (t->hashes[id] == h && t->lens[id] == n &&
		    memcmp(t->strs[id], s, n) == 0)
			return id;
		i = (i + 1) & (t->nslots - 1);
	}
	return -1;
}

int64_t ts_intern(struct ts_intern *t, const char *s, size_t n)
{
	int64_t found;
	uint32_t h;
	size_t i;
	char *copy;

	if (n > UINT32_MAX)
		return TS_ELIMIT;
	found = ts_intern_find(t, s, n);
	if (found >= 0)
		return found;
	if (t->count >= UINT32_MAX - 1)
		return TS_ELIMIT;
	if ((t->count + 1) * 4 > t->nslots * 3) {
		if (rehash(t, t->nslots ? t->nslots * 2 : 1024))
			return TS_ENOMEM;
	}
	if (t->count == t->cap) {
		size_t cap = t->cap;
		if (ts_grow((void **)&t->hashes, &cap, t->count + 1, sizeof(*t->hashes)))
			return TS_ENOMEM;
		cap = t->cap;
		if (ts_grow((void **)&t->lens, &cap, t->count + 1, sizeof(*t->lens)))
			return TS_ENOMEM;
		cap = t->cap;
		if (ts_grow((void **)&t->strs, &cap, t->count + 1, sizeof(*t->strs)))
			return TS_ENOMEM;
		t->cap = cap;
	}
	copy = ts_arena_strndup(&t->arena, s, n);
	if (!copy)
		return TS_ENOMEM;
	h = (uint32_t)ts_hash(s, n);
	i = h & (t->nslots - 1);
	while (t->slots[i])
		i = (i + 1) & (t->nslots - 1);
	t->slots[i] = (uint32_t)t->count + 1;
	t->hashes[t->count] = h;
	t->lens[t->count] = (uint32_t)n;
	t->strs[t->count] = copy;
	return (int64_t)t->count++;
}

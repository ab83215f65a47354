/*
 * hta_pool.c - the HTA analysis's large temporaries, kept for reuse.
 *
 * One part's analysis allocates and frees about forty buffers of up to the
 * frame's size (maps, sort keys, permutations). Above the mmap threshold
 * (`trace` sets 128 KiB) each is a fresh mapping, and on a paravirtualised
 * host the first write to each of its pages is the dearest thing the
 * analysis does (docs/benchmarks.md, session 9). The pool keeps freed
 * buffers and hands them out again, so the pages are touched once per part
 * instead of once per buffer.
 */
#include <stdlib.h>
#include <string.h>
#include "hta_int.h"

/* the capacity sits in front of the buffer (16 bytes keep malloc's
 * alignment) */
#define HDR 16

static size_t cap_of(void *buf)
{
	size_t c;

	memcpy(&c, (char *)buf - HDR, sizeof(c));
	return c;
}

static void *with_cap(void *h, size_t cap)
{
	memcpy(h, &cap, sizeof(cap));
	return (char *)h + HDR;
}

void hta_pool_init(struct hta_pool *p, size_t budget)
{
	memset(p, 0, sizeof(*p));
	p->budget = budget;
	pthread_mutex_init(&p->mu, NULL);
}

void hta_pool_release(struct hta_pool *p)
{
	for (size_t k = 0; k < p->n; k++)
		free((char *)p->kept[k] - HDR);
	pthread_mutex_destroy(&p->mu);
	memset(p, 0, sizeof(*p));
}

void *hta_pool_get(struct hta_pool *p, size_t size)
{
	size_t best = SIZE_MAX, large = SIZE_MAX;
	void *buf = NULL, *h;

	if (!p)
		return malloc(size ? size : 1);
	if (size > SIZE_MAX - HDR)
		return NULL;
	pthread_mutex_lock(&p->mu);
	for (size_t k = 0; k < p->n; k++) {
		size_t c = cap_of(p->kept[k]);
		if (c >= size && (best == SIZE_MAX || c < cap_of(p->kept[best])))
			best = k;
		if (large == SIZE_MAX || c > cap_of(p->kept[large]))
			large = k;
	}
	/* the smallest kept buffer that fits; else the largest, grown (a
	 * mapping grows in place or is moved with its pages) */
	if (best == SIZE_MAX)
		best = large;
	if (best != SIZE_MAX) {
		buf = p->kept[best];
		p->kept[best] = p->kept[--p->n];
		p->bytes -= cap_of(buf);
	}
	pthread_mutex_unlock(&p->mu);
	if (buf && cap_of(buf) >= size)
		return buf;
	h = realloc(buf ? (char *)buf - HDR : NULL, size + HDR);
	if (!h) {
		hta_pool_put(p, buf);
		return NULL;
	}
	return with_cap(h, size);
}

void hta_pool_put(struct hta_pool *p, void *buf)
{
	if (!p) {
		free(buf);
		return;
	}
	if (!buf)
		return;
	pthread_mutex_lock(&p->mu);
	/* past the budget or the slots, the buffers go back to the system */
	if (p->n < HTA_POOL_KEEP && p->bytes + cap_of(buf) <= p->budget) {
		p->kept[p->n++] = buf;
		p->bytes += cap_of(buf);
		buf = NULL;
	}
	pthread_mutex_unlock(&p->mu);
	if (buf)
		free((char *)buf - HDR);
}

/*
 * radix.c - stable LSD radix sort on 64-bit keys, 8 bits per pass.
 *
 * Why not qsort: the per-rank analysis sorts several lists of the size of
 * the trace (GPU activities by stream, names, launches, intervals); glibc's
 * merge sort was the largest single cost of the analysis. One pass builds
 * all eight byte histograms (and notices input already in order), passes
 * over bytes that are constant across the input are skipped, and the
 * elements move between the input and one scratch copy, so the extra memory
 * is one copy of the input (the analysis buffers are part of the peak RSS).
 */
#include <stdlib.h>
#include <string.h>
#include "trainscope/core.h"
#include "radix.h"

/* Eight byte histograms of the keys; returns 1 when they are already in
 * order (nothing to do). */
static int histograms(const char *p, size_t n, size_t size,
		      uint64_t (*key)(const void *elem), size_t cnt[8][256])
{
	int sorted = 1;
	uint64_t prev = 0;

	memset(cnt, 0, 8 * 256 * sizeof(size_t));
	for (size_t i = 0; i < n; i++) {
		uint64_t k = key(p + i * size);
		for (int d = 0; d < 8; d++)
			cnt[d][(k >> (8 * d)) & 0xff]++;
		if (i && k < prev)
			sorted = 0;
		prev = k;
	}
	return sorted;
}

/* Histogram d turned into start offsets; 0 when every key has the same
 * byte d (the pass is skipped). */
static int offsets(size_t cnt[256], size_t n)
{
	size_t sum = 0;

	for (int b = 0; b < 256; b++)
		if (cnt[b] == n)
			return 0;
	for (int b = 0; b < 256; b++) {
		size_t c = cnt[b];
		cnt[b] = sum;
		sum += c;
	}
	return 1;
}

static inline void copy_elem(char *dst, const char *src, size_t size)
{
	switch (size) {
	case 16: memcpy(dst, src, 16); break;
	case 24: memcpy(dst, src, 24); break;
	case 32: memcpy(dst, src, 32); break;
	case 40: memcpy(dst, src, 40); break;
	default: memcpy(dst, src, size); break;
	}
}

/* The elements themselves move, pass by pass, between base and one buffer
 * of the same size: n * size bytes of scratch, no (key, index) pairs and no
 * final gather. */
int ts_radix_sort_in(void *base, size_t n, size_t size, uint64_t (*key)(const void *elem),
		     void *scratch)
{
	size_t cnt[8][256];
	char *a = base, *b, *tmp = NULL;

	if (n < 2 || histograms(base, n, size, key, cnt))
		return 0;
	if (!scratch) {
		tmp = malloc(n * size);
		if (!tmp)
			return TS_ENOMEM;
	}
	b = scratch ? scratch : tmp;
	for (int d = 0; d < 8; d++) {
		char *t;
		if (!offsets(cnt[d], n))
			continue;
		for (size_t i = 0; i < n; i++) {
			const char *e = a + i * size;
			copy_elem(b + cnt[d][(key(e) >> (8 * d)) & 0xff]++ * size, e, size);
		}
		t = a;
		a = b;
		b = t;
	}
	if (a != base)
		memcpy(base, a, n * size);
	free(tmp);
	return 0;
}

int ts_radix_sort(void *base, size_t n, size_t size, uint64_t (*key)(const void *elem))
{
	return ts_radix_sort_in(base, n, size, key, NULL);
}

/* In place on the keys (an order-preserving xor of v) and one buffer. */
int ts_radix_sort_i64_in(int64_t *v, size_t n, int64_t *scratch)
{
	uint64_t *a, *b, *tmp = NULL;
	size_t cnt[8][256];
	int sorted_already = 1;

	if (n < 2)
		return 0;
	for (size_t i = 1; i < n && sorted_already; i++)
		sorted_already = v[i - 1] <= v[i];
	if (sorted_already)
		return 0;
	if (!scratch) {
		tmp = malloc(n * sizeof(*tmp));
		if (!tmp)
			return TS_ENOMEM;
	}
	a = (uint64_t *)v;
	b = scratch ? (uint64_t *)scratch : tmp;
	memset(cnt, 0, sizeof(cnt));
	for (size_t i = 0; i < n; i++) {
		a[i] = ts_radix_i64(v[i]);
		for (int d = 0; d < 8; d++)
			cnt[d][(a[i] >> (8 * d)) & 0xff]++;
	}
	for (int d = 0; d < 8; d++) {
		uint64_t *t;
		if (!offsets(cnt[d], n))
			continue;
		for (size_t i = 0; i < n; i++)
			b[cnt[d][(a[i] >> (8 * d)) & 0xff]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = (int64_t)(a[i] ^ (UINT64_C(1) << 63));
	free(tmp);
	return 0;
}

int64_t ts_radix_select_i64(const int64_t *v, size_t n, size_t k, int64_t *scratch)
{
	const int64_t *src = v;
	uint64_t first = ts_radix_i64(v[0]), diff = 0;
	int shift;

	for (size_t i = 1; i < n; i++)
		diff |= ts_radix_i64(v[i]) ^ first;
	if (!diff)
		return v[0];
	/* the bytes above the highest differing one are the same in all */
	shift = (63 - __builtin_clzll(diff)) / 8 * 8;
	for (; shift >= 0 && n > 1; shift -= 8) {
		size_t cnt[256] = { 0 }, below = 0, m = 0;
		unsigned b = 0;
		for (size_t i = 0; i < n; i++)
			cnt[ts_radix_i64(src[i]) >> shift & 0xff]++;
		while (below + cnt[b] <= k)
			below += cnt[b++];
		if (cnt[b] == n)
			continue;       /* one bucket: this byte decides nothing */
		/* keep bucket b, in order; in place once src is scratch */
		for (size_t i = 0; i < n; i++)
			if ((ts_radix_i64(src[i]) >> shift & 0xff) == b)
				scratch[m++] = src[i];
		src = scratch;
		n = m;
		k -= below;
	}
	/* every key byte fixed, or one element left: all that remain are equal */
	return src[k];
}

int ts_radix_sort_i64(int64_t *v, size_t n)
{
	return ts_radix_sort_i64_in(v, n, NULL);
}

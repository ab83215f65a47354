/*
 * radix.c - stable LSD radix sort on 64-bit keys, 8 bits per pass.
 *
 * Why not qsort: the per-rank analysis sorts several lists of the size of
 * the trace (GPU activities by stream, names, launches, intervals); glibc's
 * merge sort was the largest single cost of the analysis. Keys are computed
 * once into (key, index) pairs, one pass builds all eight byte histograms,
 * passes over bytes that are constant across the input are skipped, and the
 * elements are permuted once at the end.
 */
#include <stdlib.h>
#include <string.h>
#include "trainscope/core.h"
#include "radix.h"

struct kv {
	uint64_t k;
	size_t i;
};

static void sort_kv(struct kv *a, struct kv *b, size_t n, struct kv **out)
{
	size_t cnt[8][256];

	memset(cnt, 0, sizeof(cnt));
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < 8; d++)
			cnt[d][(a[i].k >> (8 * d)) & 0xff]++;
	for (int d = 0; d < 8; d++) {
		size_t sum = 0;
		if (cnt[d][(a[0].k >> (8 * d)) & 0xff] == n)
			continue; /* every key has the same byte here */
		for (int b8 = 0; b8 < 256; b8++) {
			size_t c = cnt[d][b8];
			cnt[d][b8] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			b[cnt[d][(a[i].k >> (8 * d)) & 0xff]++] = a[i];
		{
			struct kv *t = a;
			a = b;
			b = t;
		}
	}
	*out = a;
}

int ts_radix_sort(void *base, size_t n, size_t size, uint64_t (*key)(const void *elem))
{
	struct kv *a, *b, *sorted;
	char *tmp, *p = base;
	int sorted_already = 1;

	if (n < 2)
		return 0;
	a = malloc(n * sizeof(*a));
	b = malloc(n * sizeof(*b));
	tmp = malloc(n * size);
	if (!a || !b || !tmp) {
		free(a);
		free(b);
		free(tmp);
		return TS_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		a[i].k = key(p + i * size);
		a[i].i = i;
		if (i && a[i].k < a[i - 1].k)
			sorted_already = 0;
	}
	if (!sorted_already) {
		sort_kv(a, b, n, &sorted);
		for (size_t i = 0; i < n; i++)
			memcpy(tmp + i * size, p + sorted[i].i * size, size);
		memcpy(base, tmp, n * size);
	}
	free(a);
	free(b);
	free(tmp);
	return 0;
}

int ts_radix_sort_i64(int64_t *v, size_t n)
{
	uint64_t *a, *b;
	size_t cnt[8][256];
	int sorted_already = 1;

	if (n < 2)
		return 0;
	for (size_t i = 1; i < n && sorted_already; i++)
		sorted_already = v[i - 1] <= v[i];
	if (sorted_already)
		return 0;
	a = malloc(n * sizeof(*a));
	b = malloc(n * sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		return TS_ENOMEM;
	}
	memset(cnt, 0, sizeof(cnt));
	for (size_t i = 0; i < n; i++) {
		a[i] = ts_radix_i64(v[i]);
		for (int d = 0; d < 8; d++)
			cnt[d][(a[i] >> (8 * d)) & 0xff]++;
	}
	for (int d = 0; d < 8; d++) {
		size_t sum = 0;
		uint64_t *t;
		if (cnt[d][(a[0] >> (8 * d)) & 0xff] == n)
			continue;
		for (int k = 0; k < 256; k++) {
			size_t c = cnt[d][k];
			cnt[d][k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			b[cnt[d][(a[i] >> (8 * d)) & 0xff]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = (int64_t)(a[i] ^ (UINT64_C(1) << 63));
	free(a);
	free(b);
	return 0;
}

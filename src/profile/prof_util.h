/*
 * prof_util.h - small sorting and percentile helpers shared by the rank
 * profile (profile.c) and the cross-rank analysis (xrank.c); internal to
 * src/profile.
 */
#ifndef TS_PROFILE_UTIL_H
#define TS_PROFILE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "trainscope/core.h"
#include "radix.h"

/* ts_sort that skips input that is
 * already in order (trace events mostly are). */
static inline void sort_n(void *v, size_t n, size_t size,
			  int (*cmp)(const void *, const void *))
{
	const char *c = v;
	size_t i = 1;

	while (i < n && cmp(c + (i - 1) * size, c + i * size) <= 0)
		i++;
	if (i < n)
		ts_sort(v, n, size, cmp);
}

/* Ascending int64_t, for ts_sort. */
static inline int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

/* The 0-based index that the nearest-rank percentile q (in (0, 1]) reads
 * from n >= 1 sorted values. */
static inline size_t pct_index(size_t n, double q)
{
	size_t k = (size_t)(q * (double)n + 0.999999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return k - 1;
}

/* Nearest-rank percentile of a sorted array (q in (0, 1]); 0 when n = 0. */
static inline int64_t pct_sorted(const int64_t *v, size_t n, double q)
{
	return n ? v[pct_index(n, q)] : 0;
}

/* The largest of v[0..n), 0 when n = 0. */
static inline int64_t max_of(const int64_t *v, size_t n)
{
	int64_t m = n ? v[0] : 0;

	for (size_t i = 1; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

/* pct_sorted() of v sorted, from v unsorted (left as it is; scratch holds
 * n values). */
static inline int64_t pct_select(const int64_t *v, size_t n, double q, int64_t *scratch)
{
	return n ? ts_radix_select_i64(v, n, pct_index(n, q), scratch) : 0;
}

#endif

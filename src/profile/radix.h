/*
 * radix.h - stable LSD radix sort on 64-bit keys (internal to src/profile).
 *
 * Sorting dominates the analysis (event lists of millions, several
 * orders); a radix sort is O(n) per key with no bad cases on hostile input,
 * and skips the key bytes that are the same in every element (small ids,
 * nearby timestamps), so it usually makes 3-5 passes.
 */
#ifndef TS_PROFILE_RADIX_H
#define TS_PROFILE_RADIX_H

#include <stddef.h>
#include <stdint.h>

/* Map an int64 to a uint64 with the same order. */
static inline uint64_t ts_radix_i64(int64_t v)
{
	return (uint64_t)v ^ (UINT64_C(1) << 63);
}

/*
 * Stable sort of n elements of `size` bytes at base by key(elem), ascending.
 * Sort by several keys with one call per key, least significant first.
 * Returns 0 or TS_ENOMEM (base untouched).
 */
int ts_radix_sort(void *base, size_t n, size_t size, uint64_t (*key)(const void *elem));

/* Sort int64 values ascending. Returns 0 or TS_ENOMEM (v untouched). */
int ts_radix_sort_i64(int64_t *v, size_t n);
/* The same two sorts with the caller's scratch (n elements; NULL: one is
 * allocated and freed), so that one buffer serves a series of sorts and its
 * pages are touched once. They then return 0 and allocate nothing. */
int ts_radix_sort_in(void *base, size_t n, size_t size, uint64_t (*key)(const void *elem),
		     void *scratch);
int ts_radix_sort_i64_in(int64_t *v, size_t n, int64_t *scratch);

/*
 * The value at index k (k < n) of v[0..n) sorted ascending, without sorting:
 * the elements whose highest differing key byte puts them in k's bucket are
 * kept (in scratch, room for n) and the next byte decides among them, at
 * most eight rounds. v is left unchanged; nothing is allocated.
 */
int64_t ts_radix_select_i64(const int64_t *v, size_t n, size_t k, int64_t *scratch);

#endif

/*
 * test_radix.c - the analysis' radix sort (order, signs, stability) and
 * selection (the percentiles read without sorting).
 */
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "../../src/profile/radix.h"
#include "../../src/profile/prof_util.h"

struct pair {
	int64_t k;
	int tag;
};

static uint64_t key_pair(const void *x)
{
	return ts_radix_i64(((const struct pair *)x)->k);
}

TEST(radix_i64_signs_and_extremes)
{
	int64_t v[] = { 5, -3, INT64_MAX, 0, INT64_MIN, -3, 1LL << 40, -(1LL << 40), 7 };
	int64_t want[] = { INT64_MIN, -(1LL << 40), -3, -3, 0, 5, 7, 1LL << 40, INT64_MAX };

	REQUIRE(ts_radix_sort_i64(v, 9) == 0);
	for (int i = 0; i < 9; i++)
		CHECK_I64(v[i], want[i]);
}

TEST(radix_stable_multi_key)
{
	/* equal keys keep their input order (tags 1,2,3 for key 10) */
	struct pair v[] = { { 10, 1 }, { -1, 9 }, { 10, 2 }, { 3, 5 }, { 10, 3 }, { -1, 8 } };

	REQUIRE(ts_radix_sort(v, 6, sizeof(v[0]), key_pair) == 0);
	CHECK_I64(v[0].tag, 9);
	CHECK_I64(v[1].tag, 8);
	CHECK_I64(v[2].tag, 5);
	CHECK_I64(v[3].tag, 1);
	CHECK_I64(v[4].tag, 2);
	CHECK_I64(v[5].tag, 3);
}

TEST(radix_large_matches_order)
{
	/* 100000 pseudo-random keys (LCG): the result must be non-decreasing
	 * and hold the same multiset (checked by sum and xor) */
	enum { N = 100000 };
	int64_t *v = malloc(N * sizeof(*v));
	uint64_t x = 12345, sum0 = 0, xor0 = 0, sum1 = 0, xor1 = 0;

	REQUIRE(v);
	for (int i = 0; i < N; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		v[i] = (int64_t)(x >> 3) - (INT64_C(1) << 59);
		sum0 += (uint64_t)v[i];
		xor0 ^= (uint64_t)v[i];
	}
	REQUIRE(ts_radix_sort_i64(v, N) == 0);
	for (int i = 0; i < N; i++) {
		if (i)
			CHECK(v[i - 1] <= v[i]);
		sum1 += (uint64_t)v[i];
		xor1 ^= (uint64_t)v[i];
	}
	CHECK(sum0 == sum1 && xor0 == xor1);
	free(v);
}

/* Elements wider than the key move whole (40 bytes here, and an odd 12),
 * stably: keys 7, -3, 7, 0 with tags 1..4 sort to tags 2, 4, 1, 3. */
struct wide {
	int64_t k, pad[3];
	int32_t tag, tail;
};

static uint64_t key_wide(const void *x)
{
	return ts_radix_i64(((const struct wide *)x)->k);
}

struct odd {
	int32_t k, tag, tail;
};

static uint64_t key_odd(const void *x)
{
	return ts_radix_i64(((const struct odd *)x)->k);
}

TEST(radix_wide_and_odd_elements)
{
	struct wide w[] = { { 7, { 1, 1, 1 }, 1, 11 }, { -3, { 2, 2, 2 }, 2, 12 },
			    { 7, { 3, 3, 3 }, 3, 13 }, { 0, { 4, 4, 4 }, 4, 14 } };
	struct odd o[] = { { 7, 1, 11 }, { -3, 2, 12 }, { 7, 3, 13 }, { 0, 4, 14 } };
	static const int want[] = { 2, 4, 1, 3 };

	CHECK_I64((int64_t)sizeof(w[0]), 40);
	CHECK_I64((int64_t)sizeof(o[0]), 12);
	REQUIRE(ts_radix_sort(w, 4, sizeof(w[0]), key_wide) == 0);
	REQUIRE(ts_radix_sort(o, 4, sizeof(o[0]), key_odd) == 0);
	for (int i = 0; i < 4; i++) {
		CHECK_I64(w[i].tag, want[i]);
		CHECK_I64(w[i].tail, 10 + want[i]);
		CHECK_I64(w[i].pad[2], want[i]);
		CHECK_I64(o[i].tag, want[i]);
		CHECK_I64(o[i].tail, 10 + want[i]);
	}
}

struct posk {
	int64_t k, pos, pad;
};

static uint64_t key_posk(const void *x)
{
	return ts_radix_i64(((const struct posk *)x)->k);
}

/* The caller's scratch serves a series of sorts of different sizes and
 * element widths: each result is the order the allocating sort gives
 * (2000 LCG keys; the 24-byte elements carry their input position, so
 * stability is checked too), and the scratch is left for the next one. */
TEST(radix_caller_scratch_series)
{
	enum { N = 2000 };
	int64_t *a = malloc(N * sizeof(*a)), *b = malloc(N * sizeof(*b));
	int64_t *scratch = malloc(3 * N * sizeof(*scratch));
	struct posk *w = malloc(N * sizeof(*w));
	uint64_t x = 777;

	REQUIRE(a && b && scratch && w);
	for (int round = 0; round < 3; round++) {
		size_t n = N >> round; /* 2000, 1000, 500 */
		for (size_t i = 0; i < n; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			a[i] = b[i] = (int64_t)(x >> 20) % 97 - 48; /* many ties, both signs */
			w[i].k = a[i];
			w[i].pos = (int64_t)i;
		}
		REQUIRE(ts_radix_sort_i64(a, n) == 0);
		REQUIRE(ts_radix_sort_i64_in(b, n, scratch) == 0);
		for (size_t i = 0; i < n; i++)
			CHECK_I64(b[i], a[i]);
		REQUIRE(ts_radix_sort_in(w, n, sizeof(*w), key_posk, scratch) == 0);
		for (size_t i = 0; i < n; i++) {
			CHECK_I64(w[i].k, a[i]);
			if (i && w[i].k == w[i - 1].k)
				CHECK(w[i].pos > w[i - 1].pos);
		}
	}
	free(a);
	free(b);
	free(scratch);
	free(w);
}

TEST(radix_select_hand_example)
{
	/* sorted: INT64_MIN, -3, -3, 0, 5, 7, INT64_MAX */
	int64_t v[] = { 5, -3, INT64_MAX, 0, INT64_MIN, -3, 7 };
	int64_t want[] = { INT64_MIN, -3, -3, 0, 5, 7, INT64_MAX };
	int64_t copy[7], scratch[7];

	memcpy(copy, v, sizeof(v));
	for (size_t k = 0; k < 7; k++)
		CHECK_I64(ts_radix_select_i64(v, 7, k, scratch), want[k]);
	CHECK(memcmp(copy, v, sizeof(v)) == 0);      /* the input is left as it is */
	CHECK_I64(ts_radix_select_i64(v + 2, 1, 0, scratch), INT64_MAX);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

TEST(radix_select_matches_qsort)
{
	/* 400 arrays of lengths 1..2000 in six shapes (all equal, two values,
	 * a small range full of repeats, durations spread over 2^0..2^40,
	 * both signs over the whole range, values that differ only in their
	 * low byte): every index of the short ones and 40 of the long ones
	 * against libc's qsort of a copy */
	enum { MAXN = 2000 };
	int64_t *v = malloc(MAXN * sizeof(*v)), *s = malloc(MAXN * sizeof(*s));
	int64_t *scratch = malloc(MAXN * sizeof(*scratch));
	uint64_t x = 99;
	int bad = 0;

	REQUIRE(v && s && scratch);
	for (int trial = 0; trial < 400; trial++) {
		size_t n = 1 + (size_t)(trial * 7919 % MAXN);
		int shape = trial % 6;
		for (size_t i = 0; i < n; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			uint64_t r = x >> 11;
			switch (shape) {
			case 0: v[i] = -42; break;
			case 1: v[i] = r & 1 ? 1000 : 999; break;
			case 2: v[i] = (int64_t)(r % 17) - 8; break;
			case 3: v[i] = (int64_t)(r & ((UINT64_C(1) << (r % 41)) - 1)); break;
			case 4: v[i] = (int64_t)(x ^ (x << 17)); break;
			default: v[i] = (INT64_C(0x123456789a) << 8) | (int64_t)(r & 0xff); break;
			}
		}
		memcpy(s, v, n * sizeof(*v));
		qsort(s, n, sizeof(*s), cmp_ll);
		for (size_t j = 0; j < (n <= 64 ? n : 40); j++) {
			size_t k = n <= 64 ? j : (size_t)(x >> 7) % n;
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			bad += ts_radix_select_i64(v, n, k, scratch) != s[k];
		}
	}
	CHECK_I64(bad, 0);
	free(v);
	free(s);
	free(scratch);
}

TEST(pct_select_nearest_rank)
{
	/* nearest rank: the ceil(q * n)-th smallest. n = 10 (10, 9, ..., 1):
	 * p50 the 5th = 5, p90 the 9th = 9, p100 the 10th = 10; n = 7
	 * (70, 10, 60, 20, 50, 30, 40): p50 the ceil(3.5) = 4th = 40, p90 the
	 * ceil(6.3) = 7th = 70 */
	int64_t a[10], b[] = { 70, 10, 60, 20, 50, 30, 40 }, scratch[10];

	for (int i = 0; i < 10; i++)
		a[i] = 10 - i;
	CHECK_I64(pct_select(a, 10, 0.5, scratch), 5);
	CHECK_I64(pct_select(a, 10, 0.9, scratch), 9);
	CHECK_I64(pct_select(a, 10, 1.0, scratch), 10);
	CHECK_I64(max_of(a, 10), 10);
	CHECK_I64(pct_select(b, 7, 0.5, scratch), 40);
	CHECK_I64(pct_select(b, 7, 0.9, scratch), 70);
	CHECK_I64(pct_select(b, 0, 0.5, scratch), 0);
	CHECK_I64(max_of(b, 0), 0);
}

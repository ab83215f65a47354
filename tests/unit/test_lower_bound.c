/*
 * test_lower_bound.c - ts_lower_bound (core.h), the one binary search, on
 * arrays written by hand: every expected index is counted off the array
 * in the comment beside it.
 */
#include "harness.h"
#include "trainscope/core.h"

/* the predicate's calls and whether each stayed inside the array */
static const int64_t *g_base;
static size_t g_n, g_calls, g_outside;

static void watch(const int64_t *v, size_t n)
{
	g_base = v;
	g_n = n;
	g_calls = g_outside = 0;
}

static int i64_below(const void *elem, const void *key)
{
	const int64_t *e = elem;
	g_calls++;
	if (!g_base || e < g_base || e >= g_base + g_n)
		g_outside++;
	return *e < *(const int64_t *)key;
}

static int i64_not_above(const void *elem, const void *key)
{
	g_calls++;
	return *(const int64_t *)elem <= *(const int64_t *)key;
}

static size_t lower(const int64_t *v, size_t n, int64_t key)
{
	return ts_lower_bound(v, n, sizeof(*v), &key, i64_below);
}

static size_t upper(const int64_t *v, size_t n, int64_t key)
{
	return ts_lower_bound(v, n, sizeof(*v), &key, i64_not_above);
}

TEST(lower_bound_empty)
{
	watch(NULL, 0);
	CHECK_I64(lower(NULL, 0, 5), 0);
	CHECK_I64(upper(NULL, 0, 5), 0);
	CHECK_I64(g_calls, 0);
}

TEST(lower_bound_one)
{
	const int64_t v[] = { 7 };

	watch(v, 1);
	CHECK_I64(lower(v, 1, 6), 0); /* 7 is not below 6 */
	CHECK_I64(lower(v, 1, 7), 0); /* 7 is not below 7 */
	CHECK_I64(lower(v, 1, 8), 1); /* 7 is below 8: none left */
	CHECK_I64(upper(v, 1, 6), 0);
	CHECK_I64(upper(v, 1, 7), 1);
	CHECK_I64(g_outside, 0);
}

TEST(lower_bound_all_equal)
{
	const int64_t v[] = { 4, 4, 4, 4, 4 };

	watch(v, 5);
	CHECK_I64(lower(v, 5, 4), 0); /* the first of the run */
	CHECK_I64(upper(v, 5, 4), 5); /* past the last of the run */
	CHECK_I64(lower(v, 5, 3), 0);
	CHECK_I64(upper(v, 5, 3), 0);
	CHECK_I64(lower(v, 5, 5), 5);
	CHECK_I64(upper(v, 5, 5), 5);
	CHECK_I64(g_outside, 0);
}

TEST(lower_bound_first_last_missing)
{
	/* index:             0  1  2  3  4  5  6 */
	const int64_t v[] = { -9, 0, 2, 2, 2, 8, INT64_MAX };
	size_t n = sizeof(v) / sizeof(*v);

	watch(v, n);
	CHECK_I64(lower(v, n, -9), 0);        /* the first element */
	CHECK_I64(lower(v, n, INT64_MAX), 6); /* the last element */
	CHECK_I64(lower(v, n, INT64_MIN), 0); /* below all */
	CHECK_I64(lower(v, n, 2), 2);         /* first of the 2s */
	CHECK_I64(upper(v, n, 2), 5);         /* the 8 after them */
	CHECK_I64(lower(v, n, 1), 2);         /* not found: where 1 would go */
	CHECK_I64(upper(v, n, 1), 2);
	CHECK_I64(lower(v, n, 5), 5);         /* not found, between 2 and 8 */
	CHECK_I64(upper(v, n, -9), 1);
	CHECK_I64(upper(v, n, INT64_MAX), 7); /* above none: n */
	CHECK_I64(g_outside, 0);
}

TEST(lower_bound_calls_logarithmic)
{
	int64_t v[1000];

	for (size_t i = 0; i < 1000; i++)
		v[i] = 2 * (int64_t)i; /* 0, 2, ..., 1998 */
	for (int64_t key = -1; key <= 2000; key++) {
		watch(v, 1000);
		/* the first even number >= key sits at (key + 1) / 2 */
		CHECK_I64(lower(v, 1000, key), key < 0 ? 0 : (key + 1) / 2);
		CHECK(g_calls <= 10); /* ceil(log2(1001)) */
		CHECK_I64(g_outside, 0);
	}
}

/* a key other than the first field, of another width, in a larger record */
struct rec {
	char tag[13];
	int pg;
	double w;
};

static int rec_pg_below(const void *elem, const void *key)
{
	return ((const struct rec *)elem)->pg < *(const int *)key;
}

TEST(lower_bound_struct_field)
{
	const struct rec v[] = { { "a", 1, 0 }, { "b", 3, 0 }, { "c", 3, 0 }, { "d", 9, 0 } };
	int key;

	key = 3;
	CHECK_I64(ts_lower_bound(v, 4, sizeof(*v), &key, rec_pg_below), 1); /* "b" */
	key = 4;
	CHECK_I64(ts_lower_bound(v, 4, sizeof(*v), &key, rec_pg_below), 3); /* "d" */
	key = 10;
	CHECK_I64(ts_lower_bound(v, 4, sizeof(*v), &key, rec_pg_below), 4);
}

TEST(lower_bound_i64_predicates)
{
	/* index:             0  1  2  3  4 */
	const int64_t v[] = { 1, 3, 3, 3, 6 };
	int64_t key = 3;

	CHECK_I64(ts_lower_bound(v, 5, sizeof(*v), &key, ts_i64_below), 1);     /* first 3 */
	CHECK_I64(ts_lower_bound(v, 5, sizeof(*v), &key, ts_i64_not_above), 4); /* the 6 */
	key = 0;
	CHECK_I64(ts_lower_bound(v, 5, sizeof(*v), &key, ts_i64_below), 0);
	CHECK_I64(ts_lower_bound(v, 5, sizeof(*v), &key, ts_i64_not_above), 0);
	key = 7;
	CHECK_I64(ts_lower_bound(v, 5, sizeof(*v), &key, ts_i64_below), 5);
	CHECK_I64(ts_lower_bound(v, 5, sizeof(*v), &key, ts_i64_not_above), 5);
}

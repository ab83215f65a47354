/*
 * ivset.c - exact interval-set arithmetic on int64 nanoseconds.
 *
 * Every "busy", "exposed" and "overlap" number in the trace analysis is a
 * length of a union, intersection or difference of many intervals. Doing
 * that with floats or pairwise loops is either inexact or quadratic, so
 * sets are normalized once (sort + merge, O(n log n)) and combined with
 * linear sweeps.
 */
#include <stdlib.h>
#include "trainscope/profile.h"
#include "radix.h"

void ts_ivset_init(struct ts_ivset *a)
{
	a->v = NULL;
	a->n = a->cap = 0;
}

void ts_ivset_release(struct ts_ivset *a)
{
	free(a->v);
	ts_ivset_init(a);
}

/* ts_ivset_add(), inlined into the sweeps below. */
static inline int put(struct ts_ivset *a, int64_t s, int64_t e)
{
	if (e <= s)
		return 0;
	if (a->n && a->v[a->n - 1].s <= s && s <= a->v[a->n - 1].e) {
		if (e > a->v[a->n - 1].e)
			a->v[a->n - 1].e = e;
		return 0;
	}
	if (a->n == a->cap && ts_grow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v)))
		return TS_ENOMEM;
	a->v[a->n].s = s;
	a->v[a->n].e = e;
	a->n++;
	return 0;
}

int ts_ivset_add(struct ts_ivset *a, int64_t s, int64_t e)
{
	return put(a, s, e);
}

/* Empty out and give it room for n intervals: a sweep over normalized sets
 * of m and k intervals yields at most m + k, so it then never regrows. The
 * buffer is grown with realloc, not replaced: a large one keeps the pages
 * it has touched (no fresh page faults for the part reused). */
static int reserve(struct ts_ivset *out, size_t n)
{
	out->n = 0;
	return ts_grow((void **)&out->v, &out->cap, n, sizeof(*out->v));
}

static int cmp_iv(const void *x, const void *y)
{
	const struct ts_iv *a = x, *b = y;

	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	if (a->e != b->e)
		return a->e < b->e ? -1 : 1;
	return 0;
}

static uint64_t key_iv(const void *x)
{
	return ts_radix_i64(((const struct ts_iv *)x)->s);
}

void ts_ivset_norm(struct ts_ivset *a)
{
	size_t w = 0;

	size_t k = 1;

	if (a->n < 2)
		return;
	while (k < a->n && a->v[k - 1].s <= a->v[k].s)
		k++;
	if (k < a->n && ts_radix_sort(a->v, a->n, sizeof(*a->v), key_iv))
		ts_sort(a->v, a->n, sizeof(*a->v), cmp_iv);
	for (size_t i = 1; i < a->n; i++) {
		if (a->v[i].s <= a->v[w].e) {
			if (a->v[i].e > a->v[w].e)
				a->v[w].e = a->v[i].e;
		} else {
			a->v[++w] = a->v[i];
		}
	}
	a->n = w + 1;
}

int64_t ts_ivset_len(const struct ts_ivset *a)
{
	int64_t t = 0;

	for (size_t i = 0; i < a->n; i++)
		t += a->v[i].e - a->v[i].s;
	return t;
}

int ts_ivset_and(struct ts_ivset *out, const struct ts_ivset *a, const struct ts_ivset *b)
{
	size_t i = 0, j = 0;

	if (reserve(out, a->n + b->n))
		return TS_ENOMEM;
	while (i < a->n && j < b->n) {
		int64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
		int64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
		if (s < e && put(out, s, e))
			return TS_ENOMEM;
		if (a->v[i].e < b->v[j].e)
			i++;
		else
			j++;
	}
	return 0;
}

int ts_ivset_or(struct ts_ivset *out, const struct ts_ivset *a, const struct ts_ivset *b)
{
	size_t i = 0, j = 0;

	if (reserve(out, a->n + b->n))
		return TS_ENOMEM;
	while (i < a->n || j < b->n) {
		const struct ts_iv *x;
		if (j >= b->n || (i < a->n && a->v[i].s <= b->v[j].s))
			x = &a->v[i++];
		else
			x = &b->v[j++];
		if (out->n && x->s <= out->v[out->n - 1].e) {
			if (x->e > out->v[out->n - 1].e)
				out->v[out->n - 1].e = x->e;
		} else if (put(out, x->s, x->e)) {
			return TS_ENOMEM;
		}
	}
	return 0;
}

int ts_ivset_or_all(struct ts_ivset *out, const struct ts_ivset *const *sets, size_t k)
{
	/* the sets not yet used up: next interval and end (the result is the
	 * normalized union, the same whichever of equal starts comes first) */
	struct head {
		const struct ts_iv *p, *end;
	} *h = malloc((k ? k : 1) * sizeof(*h));
	size_t live = 0, total = 0;

	if (!h)
		return TS_ENOMEM;
	for (size_t i = 0; i < k; i++)
		if (sets[i]->n) {
			h[live++] = (struct head){ sets[i]->v, sets[i]->v + sets[i]->n };
			total += sets[i]->n;
		}
	if (reserve(out, total)) {
		free(h);
		return TS_ENOMEM;
	}
	while (live) {
		const struct ts_iv *x;
		size_t best = 0;
		for (size_t i = 1; i < live; i++)
			if (h[i].p->s < h[best].p->s)
				best = i;
		x = h[best].p++;
		if (h[best].p == h[best].end)
			h[best] = h[--live];
		if (out->n && x->s <= out->v[out->n - 1].e) {
			if (x->e > out->v[out->n - 1].e)
				out->v[out->n - 1].e = x->e;
		} else if (put(out, x->s, x->e)) {
			free(h);
			return TS_ENOMEM;
		}
	}
	free(h);
	return 0;
}

int ts_ivset_sub(struct ts_ivset *out, const struct ts_ivset *a, const struct ts_ivset *b)
{
	size_t j = 0;

	if (reserve(out, a->n + b->n))
		return TS_ENOMEM;
	for (size_t i = 0; i < a->n; i++) {
		int64_t s = a->v[i].s, e = a->v[i].e;
		while (j < b->n && b->v[j].e <= s)
			j++;
		for (size_t k = j; k < b->n && b->v[k].s < e; k++) {
			if (b->v[k].s > s && put(out, s, b->v[k].s))
				return TS_ENOMEM;
			if (b->v[k].e > s)
				s = b->v[k].e;
			if (s >= e)
				break;
		}
		if (s < e && put(out, s, e))
			return TS_ENOMEM;
	}
	return 0;
}

int64_t ts_ivset_and_len(const struct ts_ivset *a, const struct ts_ivset *b)
{
	size_t i = 0, j = 0;
	int64_t t = 0;

	while (i < a->n && j < b->n) {
		int64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
		int64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
		if (s < e)
			t += e - s;
		if (a->v[i].e < b->v[j].e)
			i++;
		else
			j++;
	}
	return t;
}

static int iv_ends_by(const void *elem, const void *t)
{
	return ((const struct ts_iv *)elem)->e <= *(const int64_t *)t;
}

int64_t ts_ivset_len_in(const struct ts_ivset *a, int64_t lo, int64_t hi)
{
	/* first interval ending after lo */
	size_t l = ts_lower_bound(a->v, a->n, sizeof(*a->v), &lo, iv_ends_by);
	int64_t t = 0;

	for (size_t i = l; i < a->n && a->v[i].s < hi; i++) {
		int64_t s = a->v[i].s > lo ? a->v[i].s : lo;
		int64_t e = a->v[i].e < hi ? a->v[i].e : hi;
		if (s < e)
			t += e - s;
	}
	return t;
}

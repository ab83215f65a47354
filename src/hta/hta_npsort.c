/*
 * hta_npsort.c - the numeric primitives of numpy/pandas that HTA's numbers
 * depend on, reproduced bit for bit.
 *
 * HTA sorts with pandas sort_values(), i.e. numpy's unstable introsort
 * argsort. When timestamps tie, the order it leaves them in decides which
 * zero-length "A overlapping B" labels exist, how queue-length change points
 * interleave, and which gap an idle interval is charged to. So the exact
 * algorithm of numpy 1.24 (median-of-3 quicksort, insertion sort below 16
 * elements, heapsort past 2*log2(n) levels) is reproduced here, together
 * with numpy's linear quantile and round.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "hta_int.h"

#define NP_SMALL 15   /* numpy partitions while pr - pl > 15 */
#define NP_STACK 128

static int np_msb(size_t n)
{
	int d = 0;
	while (n > 1) {
		n >>= 1;
		d++;
	}
	return d;
}

/* numpy's aheapsort_ on base[0..n), with w[k] = v[base[k]] moved beside
 * base: the compares read w, the same keys numpy reads through base. */
static void np_aheapsort(int64_t *w, uint32_t *base, size_t n)
{
	/* numpy indexes the heap from 1: a[k] is base[k - 1]. */
#define A(k) base[(k) - 1]
#define W(k) w[(k) - 1]
	size_t i, j, l;
	uint32_t tmp;
	int64_t tmpw;

	for (l = n >> 1; l > 0; --l) {
		tmp = A(l);
		tmpw = W(l);
		for (i = l, j = l << 1; j <= n;) {
			if (j < n && W(j) < W(j + 1))
				j += 1;
			if (tmpw < W(j)) {
				A(i) = A(j);
				W(i) = W(j);
				i = j;
				j += j;
			} else {
				break;
			}
		}
		A(i) = tmp;
		W(i) = tmpw;
	}
	for (; n > 1;) {
		tmp = A(n);
		tmpw = W(n);
		A(n) = A(1);
		W(n) = W(1);
		n -= 1;
		for (i = 1, j = 2; j <= n;) {
			if (j < n && W(j) < W(j + 1))
				j++;
			if (tmpw < W(j)) {
				A(i) = A(j);
				W(i) = W(j);
				i = j;
				j += j;
			} else {
				break;
			}
		}
		A(i) = tmp;
		W(i) = tmpw;
	}
#undef W
#undef A
}

/* Merge the ascending runs from..mid and mid..to of src (indices into v)
 * into dst; 0 when two keys tie. */
static int merge_runs(const int64_t *v, const uint32_t *src, uint32_t *dst, size_t from,
		      size_t mid, size_t to)
{
	size_t i = from, j = mid, o = from;

	while (i < mid && j < to) {
		int64_t a = v[src[i]], b = v[src[j]];
		if (a == b)
			return 0;
		dst[o++] = a < b ? src[i++] : src[j++];
	}
	memcpy(dst + o, src + i, (mid - i) * sizeof(*dst));
	o += mid - i;
	memcpy(dst + o, src + j, (to - j) * sizeof(*dst));
	return 1;
}

/*
 * Keys that never tie have one ascending order, whichever algorithm finds
 * it, so numpy's permutation is then the merge of v's ascending runs (trace
 * times mostly arrive in a few interleaved runs). 1 when idx holds it; 0
 * when two keys tie, v has more than n/16 runs or memory is short: idx is
 * then scratch.
 */
static int argsort_distinct(const int64_t *v, size_t n, uint32_t *idx, struct hta_pool *pool)
{
	size_t *start, nr = 1, cap = n / 16 + 2;
	uint32_t *tmp, *src = idx, *dst;
	int ok = 1;

	for (size_t k = 1; k < n; k++) {
		if (v[k] == v[k - 1])
			return 0;
		nr += v[k] < v[k - 1];
	}
	if (nr == 1)
		return 1;
	if (nr > cap)
		return 0;
	start = malloc((nr + 1) * sizeof(*start));
	tmp = hta_pool_get(pool, n * sizeof(*tmp));
	if (!start || !tmp) {
		free(start);
		hta_pool_put(pool, tmp);
		return 0;
	}
	nr = 0;
	start[nr++] = 0;
	for (size_t k = 1; k < n; k++)
		if (v[k] < v[k - 1])
			start[nr++] = k;
	start[nr] = n;
	dst = tmp;
	/* bottom-up: runs r and r + 1 merge into one, until one is left */
	while (ok && nr > 1) {
		size_t m = 0;
		for (size_t r = 0; ok && r < nr; r += 2, m++) {
			size_t to = r + 2 <= nr ? start[r + 2] : start[nr];
			if (r + 1 < nr)
				ok = merge_runs(v, src, dst, start[r], start[r + 1], to);
			else
				memcpy(dst + start[r], src + start[r], (to - start[r]) * sizeof(*dst));
			start[m] = start[r];
		}
		start[m] = n;
		nr = m;
		uint32_t *t = src;
		src = dst;
		dst = t;
	}
	if (ok && src != idx)
		memcpy(idx, src, n * sizeof(*idx));
	free(start);
	hta_pool_put(pool, tmp);
	return ok;
}

/* swap positions a and b of both idx and the keys beside it */
#define SWAP(a, b) do { \
		size_t a_ = (a), b_ = (b); \
		int64_t w_ = v[a_]; \
		uint32_t i_ = idx[a_]; \
		v[a_] = v[b_]; \
		v[b_] = w_; \
		idx[a_] = idx[b_]; \
		idx[b_] = i_; \
	} while (0)

/*
 * numpy's aquicksort_ compares v[idx[i]]: an indirect load per compare,
 * scattered over v once the permutation is mixed. Here every move of idx
 * moves v[i] with it, so v[i] is always the key numpy reads through idx[i]
 * and the compares read v in order; the compares and swaps are numpy's,
 * one for one, and so is the permutation (tests/unit/test_hta.c checks it
 * against an indirect transcription and numpy's printed output).
 */
void hta_argsort_np(int64_t *v, size_t n, uint32_t *idx)
{
	size_t stack[NP_STACK];
	int depth[NP_STACK / 2];
	size_t sp = 0, dp = 0;
	size_t pl, pr, pm, pi, pj, pk;
	int cdepth;
	int64_t vp;

	for (size_t k = 0; k < n; k++)
		idx[k] = (uint32_t)k;
	if (n < 2)
		return;
	pl = 0;
	pr = n - 1;
	cdepth = np_msb(n) * 2;
	for (;;) {
		if (cdepth < 0) {
			np_aheapsort(v + pl, idx + pl, pr - pl + 1);
			goto stack_pop;
		}
		while (pr - pl > NP_SMALL) {
			pm = pl + ((pr - pl) >> 1);
			if (v[pm] < v[pl])
				SWAP(pm, pl);
			if (v[pr] < v[pm])
				SWAP(pr, pm);
			if (v[pm] < v[pl])
				SWAP(pm, pl);
			vp = v[pm];
			pi = pl;
			pj = pr - 1;
			SWAP(pm, pj);
			for (;;) {
				do
					++pi;
				while (v[pi] < vp);
				do
					--pj;
				while (vp < v[pj]);
				if (pi >= pj)
					break;
				SWAP(pi, pj);
			}
			pk = pr - 1;
			SWAP(pi, pk);
			/* push the larger partition, keep sorting the smaller */
			if (pi - pl < pr - pi) {
				stack[sp++] = pi + 1;
				stack[sp++] = pr;
				pr = pi - 1;
			} else {
				stack[sp++] = pl;
				stack[sp++] = pi - 1;
				pl = pi + 1;
			}
			depth[dp++] = --cdepth;
		}
		for (pi = pl + 1; pi <= pr; ++pi) {
			uint32_t vi = idx[pi];
			int64_t key = v[pi];
			pj = pi;
			pk = pi - 1;
			while (pj > pl && key < v[pk]) {
				v[pj] = v[pk];
				idx[pj--] = idx[pk--];
			}
			v[pj] = key;
			idx[pj] = vi;
		}
stack_pop:
		if (sp == 0)
			break;
		pr = stack[--sp];
		pl = stack[--sp];
		cdepth = depth[--dp];
	}
}

void hta_argsort(int64_t *v, size_t n, uint32_t *idx, struct hta_pool *pool)
{
	for (size_t k = 0; k < n; k++)
		idx[k] = (uint32_t)k;
	if (n > NP_SMALL && argsort_distinct(v, n, idx, pool))
		return;
	hta_argsort_np(v, n, idx);
}

int hta_argsort_desc(const int64_t *v, size_t n, uint32_t *idx)
{
	int64_t *rev;
	uint32_t *tmp;

	if (n == 0)
		return 0;
	rev = malloc(n * sizeof(*rev));
	tmp = malloc(n * sizeof(*tmp));
	if (!rev || !tmp) {
		free(rev);
		free(tmp);
		return TS_ENOMEM;
	}
	for (size_t k = 0; k < n; k++)
		rev[k] = v[n - 1 - k];
	hta_argsort(rev, n, tmp, NULL);
	/* pandas: indexer = (n-1-tmp)[::-1] */
	for (size_t k = 0; k < n; k++)
		idx[k] = (uint32_t)(n - 1 - tmp[n - 1 - k]);
	free(rev);
	free(tmp);
	return 0;
}

double hta_quantile_sorted(const double *s, size_t n, double q)
{
	double virt = (double)(n - 1) * q;
	double prev_i = floor(virt);
	double gamma, a, b, diff, r;

	if (virt >= (double)(n - 1))
		return s[n - 1];
	if (virt < 0)
		return s[0];
	gamma = virt - prev_i;
	a = s[(size_t)prev_i];
	b = s[(size_t)prev_i + 1];
	diff = b - a;
	r = a + diff * gamma;
	if (gamma >= 0.5)
		r = b - diff * (1 - gamma);
	return r;
}

double hta_round(double x, int decimals)
{
	double f = 1;
	for (int k = 0; k < decimals; k++)
		f *= 10;
	return rint(x * f) / f;
}

/* Correlation ids rise with time, so a pass in frame order asks for keys
 * k, k + 1, ... Blocks of 2^block_bits consecutive keys share consecutive
 * slots, placed by a mix of the key's upper bits: the pass then walks the
 * table nearly in order. The block is sized so that about
 * MAP_KEYS_PER_BLOCK keys (puts, counted over the key span) fall in it:
 * blocks of dense keys that are too large overlap into long probe runs,
 * blocks of sparse keys that are too small scatter like a plain hash. The
 * shared traces' rows carry 0.01-0.34 correlations per id of their span
 * (256-slot blocks); fully dense ids get 64. On the 241 MB benchmark
 * trace the analysis takes 108 ms against 125 ms with a plain hash; a
 * trace of many dense id ranges far apart (a sparse span, dense blocks)
 * is the case this gets wrong, up to 2.7x slower map lookups measured. */
#define MAP_KEYS_PER_BLOCK 100
#define MAP_BLOCK_BITS_MAX 8

static size_t map_cap(size_t expect)
{
	size_t cap = 16;

	while (cap < expect * 2 + 16)
		cap <<= 1;
	return cap;
}

size_t hta_map_bytes(size_t expect)
{
	/* key, a, b and used, one more slot for key -1 */
	return (map_cap(expect) + 1) * (3 * sizeof(int64_t) + 1);
}

int hta_map_init(struct hta_map *m, struct hta_pool *pool, size_t expect, uint64_t span)
{
	size_t cap = map_cap(expect);
	int bits = MAP_BLOCK_BITS_MAX;

	memset(m, 0, sizeof(*m));
	m->pool = pool;
	/* 2^bits * expect / span ~ MAP_KEYS_PER_BLOCK */
	if (span && expect) {
		double per = (double)MAP_KEYS_PER_BLOCK * (double)span / (double)expect;
		bits = 0;
		while (bits < MAP_BLOCK_BITS_MAX && (double)(UINT64_C(2) << bits) <= per)
			bits++;
	}
	m->block_bits = bits;
	/* slot cap (mask + 1) is key -1's */
	m->key = hta_pool_get(pool, (cap + 1) * sizeof(*m->key));
	m->a = hta_pool_get(pool, (cap + 1) * sizeof(*m->a));
	m->b = hta_pool_get(pool, (cap + 1) * sizeof(*m->b));
	m->used = hta_pool_get(pool, cap + 1);
	m->mask = cap - 1;
	if (!m->key || !m->a || !m->b || !m->used) {
		hta_map_release(m);
		return TS_ENOMEM;
	}
	memset(m->used, 0, cap + 1);
	return 0;
}

void hta_map_release(struct hta_map *m)
{
	hta_pool_put(m->pool, m->key);
	hta_pool_put(m->pool, m->a);
	hta_pool_put(m->pool, m->b);
	hta_pool_put(m->pool, m->used);
	memset(m, 0, sizeof(*m));
}

static size_t map_hash(const struct hta_map *m, int64_t k)
{
	uint64_t x = (uint64_t)k >> m->block_bits;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (size_t)(x + ((uint64_t)k & ((UINT64_C(1) << m->block_bits) - 1)));
}

int64_t hta_map_find(const struct hta_map *m, int64_t key)
{
	size_t i;

	if (key == -1)
		return m->used[m->mask + 1] ? (int64_t)(m->mask + 1) : -1;
	i = map_hash(m, key) & m->mask;
	while (m->used[i]) {
		if (m->key[i] == key)
			return (int64_t)i;
		i = (i + 1) & m->mask;
	}
	return -1;
}

size_t hta_map_put(struct hta_map *m, int64_t key, int64_t init)
{
	size_t i;

	if (key == -1) {
		i = m->mask + 1;
	} else {
		i = map_hash(m, key) & m->mask;
		while (m->used[i] && m->key[i] != key)
			i = (i + 1) & m->mask;
	}
	if (!m->used[i]) {
		m->used[i] = 1;
		m->key[i] = key;
		m->a[i] = init;
		m->b[i] = init;
	}
	return i;
}

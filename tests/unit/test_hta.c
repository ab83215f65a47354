/*
 * Unit tests for the HTA-compatibility mode. Hand-built traces check each
 * analyzer against values worked out in the comments; the expected-file
 * tests compare every number HTA itself produced for the shared traces
 * (data/expected/hta/NAME.json, computed by HTA f4d0062 with pandas 1.5.3 /
 * numpy 1.24.2) and print which sections match.
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "trainscope/hta.h"
#include "trainscope/json.h"
#include "trainscope/jsonw.h"
#include "trainscope/paths.h"
#include "trainscope/trace.h"
#include "tbuild.h"
#include "../../src/hta/hta_int.h"

/* ------------------------------------------------------------ builders */

static uint32_t sid(struct ts_trace *t, const char *s)
{
	return (uint32_t)ts_intern(&t->strings, s, strlen(s));
}

/* Append an X event; times in ns, stream/corr < -1 mean "absent". */
static void ev(struct ts_trace *t, const char *cat, const char *name, int64_t ts_ns,
	       int64_t dur_ns, int64_t stream, int64_t corr)
{
	struct ts_trace_event e;
	ts_trace_event_init(&e);
	e.ph = 'X';
	e.ts_ns = ts_ns;
	e.dur_ns = dur_ns;
	e.name = sid(t, name);
	e.cat_str = sid(t, cat);
	e.cat = ts_cat_of(cat, strlen(cat));
	e.pid = 1;
	e.tid = 1;
	if (stream >= -1)
		e.stream = stream;
	if (corr >= -1)
		e.correlation = corr;
	CHECK(ts_trace_push_event(t, &e) >= 0);
}

#define US_NS 1000
#define NOSTREAM (-2)
#define NOCORR (-2)

TEST(hta_classify_regexes)
{
	/* hta-definitions.md section 1.2 */
	CHECK_I64(hta_classify("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), TS_HTA_COMM);
	CHECK_I64(hta_classify("ncclDevKernel_AllGather"), TS_HTA_COMM);
	CHECK_I64(hta_classify("void foo<ncclKernel>()"), TS_HTA_COMM);
	CHECK_I64(hta_classify("hipMemcpyAsync"), TS_HTA_COMM);     /* ^hip wins */
	CHECK_I64(hta_classify("Memcpy HtoD (Pageable -> Device)"), TS_HTA_MEM);
	CHECK_I64(hta_classify("Memset (Device)"), TS_HTA_MEM);
	CHECK_I64(hta_classify("dma_copy"), TS_HTA_MEM);
	CHECK_I64(hta_classify("Context Sync"), TS_HTA_OTHER);
	CHECK_I64(hta_classify("Stream Wait Event"), TS_HTA_OTHER);
	CHECK_I64(hta_classify("my_Memcpy_kernel"), TS_HTA_OTHER);
	CHECK_I64(hta_classify("cudaLaunchKernel"), TS_HTA_OTHER);
	CHECK_I64(hta_classify("mcclKernel_AllReduce"), TS_HTA_COMP); /* MUSA: COMPUTATION */
	CHECK_I64(hta_classify("volta_sgemm_128x64_nn"), TS_HTA_COMP);
	/* '.' does not cross a newline: "Sync" on line 2 is not (^.*Sync) */
	CHECK_I64(hta_classify("kernel\nSync"), TS_HTA_COMP);
}

/*
 * A median-of-3 adversary (McIlroy's antiqsort run against numpy's
 * algorithm) that drives the sort past its depth limit into heapsort; the
 * expected permutation is numpy 1.24.2's argsort(kind="quicksort") of it.
 */
static const int64_t killer_v[200] = {
	0, 129, 2, 128, 4, 127, 6, 126, 8, 125, 10, 124, 12, 123, 14, 122, 16, 121, 18, 120,
	20, 119, 22, 118, 24, 117, 26, 116, 28, 31, 199, 197, 198, 196, 195, 194, 193, 192,
	191, 190, 189, 188, 187, 186, 185, 184, 183, 182, 181, 180, 179, 178, 177, 176, 175,
	174, 173, 172, 171, 170, 169, 168, 167, 166, 165, 164, 163, 162, 161, 160, 159, 158,
	157, 156, 155, 154, 153, 152, 151, 150, 149, 148, 147, 146, 145, 144, 143, 142, 141,
	140, 139, 138, 137, 136, 135, 134, 133, 132, 131, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19,
	21, 23, 25, 27, 29, 115, 114, 113, 112, 111, 110, 109, 108, 107, 106, 105, 104, 103,
	102, 101, 100, 99, 98, 97, 96, 95, 94, 93, 92, 91, 90, 89, 88, 87, 86, 85, 84, 83, 82,
	81, 80, 79, 78, 77, 76, 75, 74, 73, 72, 71, 70, 69, 68, 67, 66, 65, 64, 63, 62, 61,
	60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40,
	39, 38, 37, 36, 35, 34, 33, 32, 130, 30
};
static const uint32_t killer_np[200] = {
	0, 99, 2, 100, 4, 101, 6, 102, 8, 103, 10, 104, 12, 105, 14, 106, 16, 107, 18, 108,
	20, 109, 22, 110, 24, 111, 26, 112, 28, 113, 199, 29, 197, 196, 195, 194, 193, 192,
	191, 190, 189, 188, 187, 186, 185, 184, 183, 182, 181, 180, 179, 178, 177, 176, 175,
	174, 173, 172, 171, 170, 169, 168, 167, 166, 165, 164, 163, 162, 161, 160, 159, 158,
	157, 156, 155, 154, 153, 152, 151, 150, 149, 148, 147, 146, 145, 144, 143, 142, 141,
	140, 139, 138, 137, 136, 135, 134, 133, 132, 131, 130, 129, 128, 127, 126, 125, 124,
	123, 122, 121, 120, 119, 118, 117, 116, 115, 114, 27, 25, 23, 21, 19, 17, 15, 13, 11,
	9, 7, 5, 3, 1, 198, 98, 97, 96, 95, 94, 93, 92, 91, 90, 89, 88, 87, 86, 85, 84, 83,
	82, 81, 80, 79, 78, 77, 76, 75, 74, 73, 72, 71, 70, 69, 68, 67, 66, 65, 64, 63, 62,
	61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41,
	40, 39, 38, 37, 36, 35, 34, 33, 31, 32, 30
};


TEST(hta_numpy_argsort_heapsort_path)
{
	int64_t v[200];
	uint32_t got[200];

	memcpy(v, killer_v, sizeof(v));
	hta_argsort(v, 200, got, NULL);
	for (int k = 0; k < 200; k++)
		CHECK_I64(got[k], killer_np[k]);
	/* the step-by-step sort leaves the keys sorted beside it */
	memcpy(v, killer_v, sizeof(v));
	hta_argsort_np(v, 200, got);
	for (int k = 0; k < 200; k++) {
		CHECK_I64(got[k], killer_np[k]);
		CHECK_I64(v[k], killer_v[killer_np[k]]);
	}
}

TEST(hta_numpy_argsort_and_quantile)
{
	/* permutations printed by numpy 1.24.2 (Debian bookworm):
	 * np.array(v, dtype=np.int64).argsort(kind="quicksort") */
	static const int64_t v1[17] = { 1, 2, 3, 0, 0, 3, 2, 1, 1, 3, 3, 3, 1, 1, 1, 3, 0 };
	static const uint32_t w1[17] = { 16, 3, 4, 14, 13, 12, 7, 0, 8, 1, 6, 15, 9, 10, 11, 5, 2 };
	static const int64_t v2[20] = { 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0 };
	static const uint32_t w2[20] = { 9, 17, 18, 8, 7, 6, 19, 5, 4, 3, 2, 10, 11, 12, 13, 14,
					 15, 16, 1, 0 };
	static const double s[5] = { 1, 2, 3, 4, 10 };
	int64_t v[20];
	uint32_t got[20];

	memcpy(v, v1, sizeof(v1));
	hta_argsort(v, 17, got, NULL);
	for (int k = 0; k < 17; k++)
		CHECK_I64(got[k], w1[k]);
	memcpy(v, v2, sizeof(v2));
	hta_argsort(v, 20, got, NULL);
	for (int k = 0; k < 20; k++)
		CHECK_I64(got[k], w2[k]);
	/* linear quantile: virtual index 4*0.8 = 3.2 -> 4 + (10-4)*0.2 = 5.2 */
	CHECK_NEAR(hta_quantile_sorted(s, 5, 0.8), 5.2, 1e-12);
	/* 0.5 of 5 values is the middle one */
	CHECK_NEAR(hta_quantile_sorted(s, 5, 0.5), 3, 0);
	/* numpy round half to even: 0.125 -> 0.12, 0.375 -> 0.38 */
	CHECK_NEAR(hta_round(0.125, 2), 0.12, 1e-15);
	CHECK_NEAR(hta_round(0.375, 2), 0.38, 1e-15);
}

/* numpy 1.24's aquicksort_ and aheapsort_ (npysort/quicksort.cpp,
 * heapsort.cpp) for int64 as numpy writes them, every compare through the
 * permutation (v[idx[i]]): the oracle for hta_argsort_np, which moves the
 * keys beside the permutation instead. Pinned to numpy's own printed
 * output by the two tests above. */
static void ref_aheapsort(const int64_t *v, uint32_t *base, size_t n)
{
#define A(k) base[(k) - 1]
	size_t i, j, l;
	uint32_t tmp;

	for (l = n >> 1; l > 0; --l) {
		tmp = A(l);
		for (i = l, j = l << 1; j <= n;) {
			if (j < n && v[A(j)] < v[A(j + 1)])
				j += 1;
			if (v[tmp] < v[A(j)]) {
				A(i) = A(j);
				i = j;
				j += j;
			} else {
				break;
			}
		}
		A(i) = tmp;
	}
	for (; n > 1;) {
		tmp = A(n);
		A(n) = A(1);
		n -= 1;
		for (i = 1, j = 2; j <= n;) {
			if (j < n && v[A(j)] < v[A(j + 1)])
				j++;
			if (v[tmp] < v[A(j)]) {
				A(i) = A(j);
				i = j;
				j += j;
			} else {
				break;
			}
		}
		A(i) = tmp;
	}
#undef A
}

#define RSWAP(x, y) do { uint32_t t_ = (x); (x) = (y); (y) = t_; } while (0)

static void ref_aquicksort(const int64_t *v, size_t n, uint32_t *idx)
{
	size_t stack[128], sp = 0, dp = 0, pl, pr, pm, pi, pj, pk;
	int depth[64], cdepth = 0;
	int64_t vp;

	for (size_t k = 0; k < n; k++)
		idx[k] = (uint32_t)k;
	if (n < 2)
		return;
	for (size_t m = n; m > 1; m >>= 1)
		cdepth++;
	cdepth *= 2;
	pl = 0;
	pr = n - 1;
	for (;;) {
		if (cdepth < 0) {
			ref_aheapsort(v, idx + pl, pr - pl + 1);
			goto pop;
		}
		while (pr - pl > 15) {
			pm = pl + ((pr - pl) >> 1);
			if (v[idx[pm]] < v[idx[pl]])
				RSWAP(idx[pm], idx[pl]);
			if (v[idx[pr]] < v[idx[pm]])
				RSWAP(idx[pr], idx[pm]);
			if (v[idx[pm]] < v[idx[pl]])
				RSWAP(idx[pm], idx[pl]);
			vp = v[idx[pm]];
			pi = pl;
			pj = pr - 1;
			RSWAP(idx[pm], idx[pj]);
			for (;;) {
				do
					++pi;
				while (v[idx[pi]] < vp);
				do
					--pj;
				while (vp < v[idx[pj]]);
				if (pi >= pj)
					break;
				RSWAP(idx[pi], idx[pj]);
			}
			pk = pr - 1;
			RSWAP(idx[pi], idx[pk]);
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
			int64_t key = v[vi];
			pj = pi;
			pk = pi - 1;
			while (pj > pl && key < v[idx[pk]])
				idx[pj--] = idx[pk--];
			idx[pj] = vi;
		}
pop:
		if (sp == 0)
			break;
		pr = stack[--sp];
		pl = stack[--sp];
		cdepth = depth[--dp];
	}
}

/*
 * hta_argsort_np moves each key with its index instead of reading it
 * through the permutation; the permutation must stay numpy's, tie order
 * and all. Generated keys tie heavily (1 to 6 distinct values, or times on
 * a coarse grid as queue-length change points have: several points per
 * microsecond, interleaved runs), sizes 0-5,000 (insertion sort alone,
 * partitions, deep stacks), and the median-of-3 adversary above with its
 * keys divided by 2, 3 and 7 (ties on the heapsort path): the permutation
 * equals the indirect transcription's in every case, and the keys come
 * back sorted (v[k] = old v[idx[k]]).
 */
TEST(hta_argsort_np_moves_keys_with_ties)
{
	enum { N = 5000 };
	static int64_t v[N], w[N];
	static uint32_t got[N], want[N];
	uint64_t x = 0x9E3779B97F4A7C15ULL;
	int agree = 0, sorted = 0, cases = 0;

	for (int c = 0; c < 303; c++) {
		size_t n;
		if (c >= 300) {        /* the adversary, keys coarsened */
			static const int div[3] = { 2, 3, 7 };
			n = 200;
			for (size_t k = 0; k < n; k++)
				v[k] = killer_v[k] / div[c - 300];
		} else {
			n = (size_t)(c * c * 7 + c) % (N + 1);
			int shape = c % 3, distinct = 1 + c % 6;
			int64_t t = 0;
			for (size_t k = 0; k < n; k++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				if (shape == 0) {          /* few distinct keys */
					v[k] = (int64_t)(x % (uint64_t)distinct);
				} else if (shape == 1) {   /* 1 us grid, runs restart */
					if (x % 97 == 0)
						t -= (int64_t)(x >> 50) % 40000;
					t += (int64_t)((x >> 20) % 3) * 1000;
					v[k] = t;
				} else {                   /* descending with ties */
					v[k] = (int64_t)((n - k) / (size_t)distinct);
				}
			}
		}
		ref_aquicksort(v, n, want);
		memcpy(w, v, n * sizeof(*v));
		hta_argsort_np(w, n, got);
		cases++;
		agree += n == 0 || memcmp(got, want, n * sizeof(*got)) == 0;
		{
			int ok = 1;
			for (size_t k = 0; k < n; k++)
				ok &= w[k] == v[want[k]];
			sorted += ok;
		}
	}
	CHECK_I64(agree, cases);
	CHECK_I64(sorted, cases);
}

/*
 * hta_argsort's shortcut (a merge of ascending runs when no keys tie) must
 * give numpy's permutation: over arrays shaped like trace times (up to 23
 * concatenated increasing runs, some with a tie injected, some shuffled,
 * ascending and descending), it agrees with the step-by-step emulation,
 * which the two tests above pin to numpy's own output.
 */
TEST(hta_argsort_shortcut_is_numpy)
{
	enum { N = 3000 };
	static int64_t v[N], w[N];
	static uint32_t fast[N], slow[N];
	uint64_t x = 88172645463325252ULL;
	int agree = 0, cases = 0;

	for (int c = 0; c < 400; c++) {
		size_t n = 16 + (size_t)(c * 7) % (N - 16);
		int shape = c % 5, runs = 1 + c % 23;
		int64_t t = 0;

		for (size_t k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (shape == 3) {           /* ascending */
				v[k] = (int64_t)k * 3 - 7;
			} else if (shape == 4) {    /* descending */
				v[k] = (int64_t)(n - k);
			} else {                    /* run r holds keys = r mod runs */
				size_t r = k * (size_t)runs / n;
				if (k == 0 || r != (k - 1) * (size_t)runs / n)
					t = (int64_t)(x % 1000);
				t += 1 + (int64_t)(x >> 40) % 5;
				v[k] = t * runs + (int64_t)r;
			}
		}
		if (shape == 1) /* a tie: one key copied */
			v[(c * 31) % n] = v[(c * 17 + 5) % n];
		if (shape == 2) /* shuffled: far more runs than the shortcut takes */
			for (size_t k = n - 1; k > 0; k--) {
				size_t j = (size_t)((x = x * 6364136223846793005ULL + 1) >> 33) % (k + 1);
				int64_t s = v[k];
				v[k] = v[j];
				v[j] = s;
			}
		memcpy(w, v, n * sizeof(*v));
		hta_argsort(w, n, fast, NULL);
		memcpy(w, v, n * sizeof(*v));
		hta_argsort_np(w, n, slow);
		cases++;
		agree += memcmp(fast, slow, n * sizeof(*fast)) == 0;
		for (size_t k = 1; k < n; k++)
			CHECK(v[fast[k - 1]] <= v[fast[k]]);
	}
	CHECK_I64(agree, cases);
}

/*
 * Key -1 (rows without a correlation) lives in slot mask + 1 beside 5,000
 * hashed keys, -1000..3999 except -1: every key is found in its own slot,
 * absent keys are not, and the used slots over 0..mask + 1 are the 5,000.
 */
TEST(hta_map_key_minus_one_slot)
{
	struct hta_map m;
	size_t used = 0;
	int found = 0;

	CHECK_I64(hta_map_init(&m, NULL, 5000, 5000), 0);
	CHECK_I64(hta_map_find(&m, -1), -1);
	for (int64_t k = -1000; k < 4000; k++)
		m.a[hta_map_put(&m, k, 0)] = k;
	CHECK_I64(hta_map_find(&m, -1), (int64_t)(m.mask + 1));
	CHECK_I64((int64_t)hta_map_put(&m, -1, 7), (int64_t)(m.mask + 1));
	for (int64_t k = -1000; k < 4000; k++) {
		int64_t s = hta_map_find(&m, k);
		found += s >= 0 && m.a[s] == k && m.key[s] == k;
	}
	CHECK_I64(found, 5000);
	CHECK_I64(hta_map_find(&m, 4000), -1);
	CHECK_I64(hta_map_find(&m, -1001), -1);
	for (size_t s = 0; s <= m.mask + 1; s++)
		used += m.used[s];
	CHECK_I64((int64_t)used, 5000);
	hta_map_release(&m);
}

/*
 * The pool hands a kept buffer out again (the smallest that fits, else the
 * largest grown) and keeps no more than its budget: 1,000 bytes here.
 */
TEST(hta_pool_reuses_within_budget)
{
	struct hta_pool p;
	char *a, *b, *c;

	hta_pool_init(&p, 1000);
	a = hta_pool_get(&p, 600);
	b = hta_pool_get(&p, 300);
	REQUIRE(a && b);
	memset(a, 1, 600);
	memset(b, 2, 300);
	hta_pool_put(&p, a);
	hta_pool_put(&p, b);
	CHECK_I64((int64_t)p.n, 2);
	CHECK_I64((int64_t)p.bytes, 900);
	CHECK(hta_pool_get(&p, 200) == b);      /* smallest that fits */
	CHECK(hta_pool_get(&p, 500) == a);
	CHECK_I64((int64_t)p.n, 0);
	hta_pool_put(&p, b);
	c = hta_pool_get(&p, 700);              /* b grown to 700 */
	REQUIRE(c != NULL);
	CHECK(c[299] == 2);
	hta_pool_put(&p, a);                    /* 600 kept */
	hta_pool_put(&p, c);                    /* 600 + 700 > 1000: freed */
	CHECK_I64((int64_t)p.n, 1);
	CHECK_I64((int64_t)p.bytes, 600);
	hta_pool_release(&p);
}

/*
 * Launch statistics when runtime calls share a correlation, written in
 * descending time so that each group must be sorted by its end: 20 calls
 * of correlation 5 (more than the in-place sort's 16) and 3 of 11.
 *   c5: call i (0..19) starts at 200 - 10i us, lasts 60 (i even) or 5 us;
 *     one kernel at 200 us for 30 us. Delays max(0, 200 - end): even
 *     i = 2j end 260 - 20j -> 20j - 60 for j >= 4: 20+40+...+120 = 420;
 *     odd i = 2j+1 end 195 - 20j -> 5 + 20j: 50 + 900 = 950. > 100 us:
 *     120 (j = 9) and 105..185 (j = 5..9): 6. Calls > 50 us: the 10
 *     even ones, each also longer than the 30 us kernel: 10.
 *   c9: call 400+5, kernel 450: delay 45.
 *   c11: calls at 530, 520, 510 (5 us), kernel at 525 for 10 us: delays
 *     0, 0, 10.
 * n = 20 + 1 + 3 = 24; sum 420 + 950 + 45 + 10 = 1425 us.
 */
/*
 * hta_lrows_sort: a stable sort by (corr, a). With b = the row's input
 * position, the one right answer is the order by (corr, a, b), here found
 * by comparing every pair (the rank of a row is the number of rows before
 * it in that order). Inputs: 1-40 ascending runs (the merge path takes up
 * to 16, the radix sorts the rest), keys drawn from few values (ties on
 * corr and on both), negative keys, sizes 0-3,000.
 */
TEST(hta_lrows_sort_is_stable_by_corr_then_a)
{
	enum { N = 3000 };
	static struct hta_lrow v[N], scratch[N], want[N];
	uint64_t x = 0x2545F4914F6CDD1DULL;
	int good = 0, cases = 0, merged = 0, radix = 0;

	for (int c = 0; c < 120; c++) {
		size_t n = (size_t)(c * 97 + c * c) % (N + 1), runs = 1 + (size_t)c % 40;
		int64_t span = 1 + c % 7;
		for (size_t k = 0; k < n; k++) {
			size_t r = k * runs / n;
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* each run ascends in corr, three rows a corr; a is
			 * drawn from span values (odd c) or does not descend
			 * within a corr (even c: the runs stay runs) */
			v[k].corr = (int64_t)(k - r * n / runs) / 3 - 50 + (int64_t)(r % 3);
			v[k].a = c % 2 ? (int64_t)(x % (uint64_t)span) - 2
				       : (int64_t)((k - r * n / runs) % 3) / 2 - 1;
			v[k].b = (int64_t)k;
		}
		{
			size_t nr = 1;
			for (size_t k = 1; k < n; k++)
				nr += v[k].corr < v[k - 1].corr ||
				      (v[k].corr == v[k - 1].corr && v[k].a < v[k - 1].a);
			merged += n > 1 && nr > 1 && nr <= 16;
			radix += nr > 16;
		}
		for (size_t i = 0; i < n; i++) {
			size_t rank = 0;
			for (size_t j = 0; j < n; j++)
				rank += v[j].corr < v[i].corr ||
					(v[j].corr == v[i].corr &&
					 (v[j].a < v[i].a || (v[j].a == v[i].a && j < i)));
			want[rank] = v[i];
		}
		hta_lrows_sort(v, n, scratch);
		cases++;
		good += n == 0 || memcmp(v, want, n * sizeof(*v)) == 0;
	}
	CHECK_I64(good, cases);
	/* both paths taken, many times */
	CHECK(merged >= 20);
	CHECK(radix >= 20);
}

TEST(hta_launch_stats_shared_correlations)
{
	struct ts_trace t;
	const struct ts_trace *tp = &t;
	struct ts_hta h;
	struct ts_err err;
	const struct ts_hta_launch *l;

	ts_trace_init(&t);
	for (int i = 0; i < 20; i++)
		ev(&t, "cuda_runtime", "cudaLaunchKernel", (200 - 10 * i) * US_NS,
		   (i % 2 ? 5 : 60) * US_NS, NOSTREAM, 5);
	ev(&t, "kernel", "gemm", 200 * US_NS, 30 * US_NS, 7, 5);
	ev(&t, "cuda_runtime", "cudaLaunchKernel", 400 * US_NS, 5 * US_NS, NOSTREAM, 9);
	ev(&t, "kernel", "gemm", 450 * US_NS, 10 * US_NS, 7, 9);
	for (int i = 0; i < 3; i++)
		ev(&t, "cuda_runtime", "cudaLaunchKernel", (530 - 10 * i) * US_NS, 5 * US_NS,
		   NOSTREAM, 11);
	ev(&t, "kernel", "gemm", 525 * US_NS, 10 * US_NS, 7, 11);
	ts_err_init(&err);
	REQUIRE(ts_hta_analyze(&tp, 1, &h, &err) == 0);
	l = &h.ranks[0].launch;
	CHECK_I64(l->n, 24);
	CHECK_NEAR(l->sum_launch_delay_us, 1425, 0);
	CHECK_I64(l->n_launch_delay_gt_100us, 6);
	CHECK_I64(l->n_cpu_dur_gt_50us, 10);
	CHECK_I64(l->n_gpu_shorter_than_cpu, 10);
	ts_hta_release(&h);
	ts_trace_release(&t);
}

/*
 * The overlap's one-pass intersection against HTA's sweep and against the
 * truth counted unit by unit: 300 pairs of merged lists (sorted, each
 * interval starting past the previous one's end, zero-length ones among
 * them) on [0, 4000) ns. Cell t counts when some COMP and some COMM
 * interval both cover [t, t + 1).
 */
TEST(hta_overlap_walk_is_the_sweep)
{
	enum { T = 4000, M = 200 };
	static int64_t ts[2][M], end[2][M];
	static unsigned char cover[2][T];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int agree = 0, cases = 0;

	for (int c = 0; c < 300; c++) {
		size_t n[2];
		int64_t truth = 0, walk = -1, sweep = -2;

		memset(cover, 0, sizeof(cover));
		for (int l = 0; l < 2; l++) {
			int64_t t = 0;
			n[l] = 0;
			for (;;) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				t += 1 + (int64_t)(x % (uint64_t)(2 + c % 60));   /* gap > 0 */
				if (t >= T)
					break;
				ts[l][n[l]] = t;
				t += (x >> 20) % 4 == 0 ? 0 : (int64_t)((x >> 24) % (uint64_t)(1 + c % 90));
				if (t >= T)
					t = T - 1;
				end[l][n[l]] = t;
				for (int64_t u = ts[l][n[l]]; u < t; u++)
					cover[l][u] = 1;
				if (++n[l] == M)
					break;
			}
		}
		for (int u = 0; u < T; u++)
			truth += cover[0][u] && cover[1][u];
		CHECK_I64(hta_overlap_ns(ts[0], end[0], n[0], ts[1], end[1], n[1], 0, &walk), 0);
		CHECK_I64(hta_overlap_ns(ts[0], end[0], n[0], ts[1], end[1], n[1], 1, &sweep), 0);
		cases++;
		agree += walk == truth && sweep == truth;
	}
	CHECK_I64(agree, cases);
}

/*
 * Two profiler steps; step 2 is the last and is dropped with its kernel.
 * Kept GPU rows (us): gemm s7 [20,50] (launch 10+5), nccl s8 [40,80]
 * (launch 15+5), gemm s7 [90,100] (launch 60+5).
 *   merged busy: [20,80] + [90,100] = 70; kernel_time 100-20 = 80; idle 10
 *   compute = |gemm| = 30 + 10 = 40; non-compute = 80 - 40 - 10 = 30
 *   pct: idle 12.5, compute 50, non-compute 37.5
 *   overlap: comp n comm = [40,50] = 10 of comm 40 -> 25 %
 *   kernel type: COMP only [20,40)+[90,100) = 30, COMP+COMM [40,50) = 10,
 *     COMM only [50,80) = 30; of 70: 42.9, 14.3, 42.9 %
 *   idle s7: gap 90-50 = 40, launch at 60 > 50 -> host_wait 40 (ratio 1);
 *     first kernel -> "other" 0. s8: one kernel, other 0, ratio NaN.
 *   launches: delays 20-15 = 5, 40-20 = 20, 90-65 = 25 -> 50; none > 100,
 *     no runtime > 50, no kernel shorter than its 5 us launch.
 *   queue s7: +1@10 -1@20 +1@60 -1@90 -> 1,0,1,0: mean .5,
 *     std sqrt(1/3), p25 0, p50 .5, p75 1; s8: 1,0: p25 .25, std sqrt(.5)
 *   per kernel: gemm n=2 sum 40 max 30 min 10 mean 20 std sqrt(200)
 */
TEST(hta_hand_trace_two_steps)
{
	struct ts_trace t;
	const struct ts_trace *tp = &t;
	struct ts_hta h;
	struct ts_err err;
	const struct ts_hta_rank *r;
	int seen = 0;

	ts_trace_init(&t);
	ev(&t, "user_annotation", "ProfilerStep#1", 0, 100 * US_NS, NOSTREAM, NOCORR);
	ev(&t, "user_annotation", "ProfilerStep#2", 100 * US_NS, 100 * US_NS, NOSTREAM, NOCORR);
	ev(&t, "cuda_runtime", "cudaLaunchKernel", 10 * US_NS, 5 * US_NS, NOSTREAM, 1);
	ev(&t, "kernel", "gemm", 20 * US_NS, 30 * US_NS, 7, 1);
	ev(&t, "cuda_runtime", "cudaLaunchKernel", 15 * US_NS, 5 * US_NS, NOSTREAM, 2);
	ev(&t, "kernel", "ncclKernel_AllReduce", 40 * US_NS, 40 * US_NS, 8, 2);
	ev(&t, "cuda_runtime", "cudaLaunchKernel", 60 * US_NS, 5 * US_NS, NOSTREAM, 3);
	ev(&t, "kernel", "gemm", 90 * US_NS, 10 * US_NS, 7, 3);
	ev(&t, "cuda_runtime", "cudaLaunchKernel", 150 * US_NS, 5 * US_NS, NOSTREAM, 4);
	ev(&t, "kernel", "gemm", 160 * US_NS, 10 * US_NS, 7, 4);
	ts_err_init(&err);
	REQUIRE(ts_hta_analyze(&tp, 1, &h, &err) == 0);
	r = &h.ranks[0];
	CHECK(r->filtered);
	CHECK(!r->rounded);
	CHECK_I64(r->nkernels, 3);
	CHECK_I64(r->nsteps, 1);
	CHECK_I64(r->steps[0], 1);
	CHECK_NEAR(r->kernel_us, 80, 0);
	CHECK_NEAR(r->idle_us, 10, 0);
	CHECK_NEAR(r->compute_us, 40, 0);
	CHECK_NEAR(r->non_compute_us, 30, 0);
	CHECK_NEAR(r->idle_pct, 12.5, 0);
	CHECK_NEAR(r->compute_pct, 50, 0);
	CHECK_NEAR(r->non_compute_pct, 37.5, 0);
	CHECK_NEAR(r->overlap_pct, 25, 0);
	REQUIRE(r->nktype == 3);
	for (size_t k = 0; k < r->nktype; k++) {
		const struct ts_hta_klabel *l = &r->ktype[k];
		if (strcmp(l->label, "COMPUTATION overlapping COMMUNICATION") == 0) {
			CHECK_NEAR(l->sum_us, 10, 0);
			CHECK_NEAR(l->pct, 14.3, 1e-12);
			seen |= 1;
		} else if (strcmp(l->label, "COMPUTATION") == 0) {
			CHECK_NEAR(l->sum_us, 30, 0);
			CHECK_NEAR(l->pct, 42.9, 1e-12);
			seen |= 2;
		} else if (strcmp(l->label, "COMMUNICATION") == 0) {
			CHECK_NEAR(l->sum_us, 30, 0);
			seen |= 4;
		}
	}
	CHECK_I64(seen, 7);
	REQUIRE(r->nidle == 2);
	CHECK_I64(r->idle[0].stream, 7);
	CHECK(r->idle[0].present[TS_HTA_HOST_WAIT] && !r->idle[0].present[TS_HTA_KERNEL_WAIT]);
	CHECK_NEAR(r->idle[0].idle_us[TS_HTA_HOST_WAIT], 40, 0);
	CHECK_NEAR(r->idle[0].ratio[TS_HTA_HOST_WAIT], 1, 0);
	CHECK_NEAR(r->idle[0].ratio[TS_HTA_IDLE_OTHER], 0, 0);
	CHECK_I64(r->idle[1].stream, 8);
	CHECK(isnan(r->idle[1].ratio[TS_HTA_IDLE_OTHER]));
	CHECK_I64(r->launch.n, 3);
	CHECK_NEAR(r->launch.sum_launch_delay_us, 50, 0);
	CHECK_I64(r->launch.n_launch_delay_gt_100us, 0);
	CHECK_I64(r->launch.n_cpu_dur_gt_50us, 0);
	CHECK_I64(r->launch.n_gpu_shorter_than_cpu, 0);
	REQUIRE(r->nqueue == 2);
	CHECK_I64(r->queue[0].stream, 7);
	CHECK_NEAR(r->queue[0].count, 4, 0);
	CHECK_NEAR(r->queue[0].mean, 0.5, 0);
	CHECK_NEAR(r->queue[0].std, sqrt(1.0 / 3), 1e-12);
	CHECK_NEAR(r->queue[0].p25, 0, 0);
	CHECK_NEAR(r->queue[0].p50, 0.5, 0);
	CHECK_NEAR(r->queue[0].p75, 1, 0);
	CHECK_NEAR(r->queue[1].p25, 0.25, 0);
	CHECK_NEAR(r->queue[1].std, sqrt(0.5), 1e-12);
	REQUIRE(r->nkernels_all == 2);
	CHECK_STR(r->kernels_all[0].name, "ncclKernel_AllReduce");
	CHECK_STR(r->kernels_all[1].name, "gemm");
	CHECK_I64(r->kernels_all[1].count, 2);
	CHECK_NEAR(r->kernels_all[1].sum_us, 40, 0);
	CHECK_NEAR(r->kernels_all[1].max_us, 30, 0);
	CHECK_NEAR(r->kernels_all[1].min_us, 10, 0);
	CHECK_NEAR(r->kernels_all[1].mean_us, 20, 0);
	CHECK_NEAR(r->kernels_all[1].std_us, sqrt(200), 1e-9);
	ts_hta_release(&h);
	ts_trace_release(&t);
}

/*
 * ns-resolution rounding on doubles (HTA: end = floor(ts + dur), ts =
 * ceil(ts)), one rank, no steps so nothing is filtered:
 *   k1 ts 10.200 dur 5.500 -> ts 11, end floor(15.7) = 15, dur 4
 *   k2 ts 20.900 dur 0.050 -> ts 21, end floor(20.95) = 20, dur -1
 *   merged (HTA's rule): [11,15], [21,20]; kernel_time 20 - 11 = 9,
 *   busy 4 - 1 = 3, idle 6, compute 3, non-compute 0.
 */
TEST(hta_rounding_ceil_floor)
{
	struct ts_trace t;
	const struct ts_trace *tp = &t;
	struct ts_hta h;
	struct ts_err err;

	ts_trace_init(&t);
	ev(&t, "kernel", "k", 10200, 5500, 7, 1);
	ev(&t, "kernel", "k", 20900, 50, 7, 2);
	ts_err_init(&err);
	REQUIRE(ts_hta_analyze(&tp, 1, &h, &err) == 0);
	CHECK(h.ranks[0].rounded);
	CHECK(!h.ranks[0].filtered);
	CHECK_NEAR(h.ranks[0].kernel_us, 9, 0);
	CHECK_NEAR(h.ranks[0].idle_us, 6, 0);
	CHECK_NEAR(h.ranks[0].compute_us, 3, 0);
	CHECK_NEAR(h.ranks[0].non_compute_us, 0, 0);
	ts_hta_release(&h);
	ts_trace_release(&t);
}

/*
 * Epoch timestamps beyond double precision: 1712195495519689.047 us is the
 * double 1712195495519689.0 (spacing 0.25), so HTA's ceil gives ...689, not
 * ...690; end = 1712195495519689.0 + 2.0 -> floor ...691; dur = 2 us
 * (exact decimal arithmetic would give 1).
 */
TEST(hta_rounding_follows_doubles)
{
	struct ts_trace t;
	const struct ts_trace *tp = &t;
	struct ts_hta h;
	struct ts_err err;

	ts_trace_init(&t);
	ev(&t, "kernel", "k", INT64_C(1712195495519689047), 2000, 7, 1);
	ts_err_init(&err);
	REQUIRE(ts_hta_analyze(&tp, 1, &h, &err) == 0);
	REQUIRE(h.ranks[0].nkernels_all == 1);
	CHECK_NEAR(h.ranks[0].kernels_all[0].sum_us, 2, 0);
	CHECK_I64(h.t0_ns, INT64_C(1712195495519689000));
	ts_hta_release(&h);
	ts_trace_release(&t);
}

/*
 * Two ranks share one t0 and one kernel-type total:
 *   rank A: launch 4990+5, gemm [5000,5010];  rank B: launch 2990+5,
 *   gemm [3000,3030]  ->  t0 = 2990 us; kernel_time A 10, B 30;
 *   job kernel type: COMPUTATION 10 + 30 = 40 us, 100 %.
 * Then ProfilerStep#1 on A (ts 4980) and ProfilerStep#2 on B (ts 2980).
 * B alone has one step name, so nothing is filtered and its kernel stays.
 * Together the job has two distinct names, so HTA filters every rank with
 * the rank's own last step start as cutoff: no launch starts before it on
 * either rank, so both keep no GPU row (HTA's behaviour).
 */
static void two_ranks(struct ts_trace *a, struct ts_trace *b, int steps)
{
	ts_trace_init(a);
	ts_trace_init(b);
	if (steps) {
		ev(a, "user_annotation", "ProfilerStep#1", 4980 * US_NS, 100 * US_NS, NOSTREAM, NOCORR);
		ev(b, "user_annotation", "ProfilerStep#2", 2980 * US_NS, 100 * US_NS, NOSTREAM, NOCORR);
	}
	ev(a, "cuda_runtime", "cudaLaunchKernel", 4990 * US_NS, 5 * US_NS, NOSTREAM, 1);
	ev(a, "kernel", "gemm", 5000 * US_NS, 10 * US_NS, 7, 1);
	ev(b, "cuda_runtime", "cudaLaunchKernel", 2990 * US_NS, 5 * US_NS, NOSTREAM, 1);
	ev(b, "kernel", "gemm", 3000 * US_NS, 30 * US_NS, 7, 1);
}

TEST(hta_ranks_share_t0_and_step_names)
{
	struct ts_trace a, b;
	const struct ts_trace *tp[2] = { &a, &b };
	struct ts_hta h;
	struct ts_err err;

	two_ranks(&a, &b, 0);
	ts_err_init(&err);
	REQUIRE(ts_hta_analyze(tp, 2, &h, &err) == 0);
	CHECK_I64(h.t0_ns, 2990 * US_NS);
	CHECK_NEAR(h.ranks[0].kernel_us, 10, 0);
	CHECK_NEAR(h.ranks[1].kernel_us, 30, 0);
	REQUIRE(h.nktype == 1);
	CHECK_STR(h.ktype[0].label, "COMPUTATION");
	CHECK_NEAR(h.ktype[0].sum_us, 40, 0);
	CHECK_NEAR(h.ktype[0].pct, 100, 0);
	ts_hta_release(&h);
	ts_trace_release(&a);
	ts_trace_release(&b);

	two_ranks(&a, &b, 1);
	REQUIRE(ts_hta_analyze(&tp[1], 1, &h, &err) == 0);
	CHECK(!h.ranks[0].filtered);
	CHECK_I64(h.ranks[0].nkernels, 1);
	ts_hta_release(&h);
	/* the streaming path: parts built, traces released, then combined */
	{
		struct ts_hta_part parts[2];
		REQUIRE(ts_hta_part_build(&a, &parts[0], 1, &err) == 0);
		REQUIRE(ts_hta_part_build(&b, &parts[1], 2, &err) == 0);
		ts_trace_release(&a);
		ts_trace_release(&b);
		REQUIRE(ts_hta_combine(parts, 2, &h, &err) == 0);
	}
	CHECK(h.ranks[0].filtered && h.ranks[1].filtered);
	CHECK_I64(h.ranks[0].nkernels, 0);
	CHECK_I64(h.ranks[1].nkernels, 0);
	CHECK_I64(h.t0_ns, 2980 * US_NS);
	ts_hta_release(&h);
}

TEST(hta_cpu_only_says_no_gpu_kernels)
{
	struct ts_trace t;
	const struct ts_trace *tp = &t;
	struct ts_hta h;
	struct ts_err err;
	struct ts_sb sb;
	struct ts_jw w;

	ts_trace_init(&t);
	ev(&t, "cpu_op", "aten::mm", 0, 10 * US_NS, NOSTREAM, NOCORR);
	ts_err_init(&err);
	REQUIRE(ts_hta_analyze(&tp, 1, &h, &err) == 0);
	CHECK_I64(h.ranks[0].nkernels, 0);
	CHECK(isnan(h.ranks[0].kernel_us));
	ts_sb_init(&sb);
	ts_jw_init(&w, &sb, 0);
	ts_hta_write_json(&h, 0, &w);
	CHECK(strstr(sb.buf, "\"note\":\"no GPU kernels\"") != NULL);
	CHECK(strstr(sb.buf, "\"idle_time_us\":null") != NULL);
	ts_sb_reset(&sb);
	ts_hta_render(&h, &sb);
	CHECK(strstr(sb.buf, "no GPU kernels") != NULL);
	ts_sb_release(&sb);
	ts_hta_release(&h);
	ts_trace_release(&t);
}

/* ------------------------------------------------ expected-file tests */

/* Minimal in-memory JSON value built with the project's tokenizer. */
struct jv {
	int type;             /* TS_JSON_OBJ, _ARR, _STR, _NUM, _NULL, _TRUE, _FALSE */
	double num;
	char *str;
	char **keys;
	struct jv *kids;
	size_t n;
};

static void jv_free(struct jv *v)
{
	for (size_t k = 0; k < v->n; k++) {
		if (v->keys)
			free(v->keys[k]);
		jv_free(&v->kids[k]);
	}
	free(v->keys);
	free(v->kids);
	free(v->str);
}

static char *tok_str(const struct ts_json *j)
{
	struct ts_sb sb;
	char *s;
	ts_sb_init(&sb);
	if (j->escaped)
		ts_json_unescape(j->s, j->n, 1, &sb);
	else
		ts_sb_add(&sb, j->s, j->n);
	s = strdup(sb.buf);
	ts_sb_release(&sb);
	return s;
}

static int jv_parse(struct ts_json *j, int tok, struct jv *v, struct ts_err *err)
{
	memset(v, 0, sizeof(*v));
	v->type = tok;
	if (tok == TS_JSON_STR) {
		v->str = tok_str(j);
		return 0;
	}
	if (tok == TS_JSON_NUM)
		return ts_num_f64(j->s, j->n, &v->num);
	if (tok != TS_JSON_OBJ && tok != TS_JSON_ARR)
		return 0;
	for (;;) {
		char *key = NULL;
		int t = ts_json_next(j, err);
		if (t < 0)
			return t;
		if (t == TS_JSON_OBJ_END || t == TS_JSON_ARR_END)
			return 0;
		if (t == TS_JSON_KEY) {
			key = tok_str(j);
			t = ts_json_next(j, err);
			if (t < 0) {
				free(key);
				return t;
			}
		}
		v->kids = realloc(v->kids, (v->n + 1) * sizeof(*v->kids));
		v->keys = realloc(v->keys, (v->n + 1) * sizeof(*v->keys));
		v->keys[v->n] = key;
		if (jv_parse(j, t, &v->kids[v->n++], err))
			return -1;
	}
}

static const struct jv *jget(const struct jv *v, const char *key)
{
	for (size_t k = 0; v && k < v->n; k++)
		if (v->keys[k] && strcmp(v->keys[k], key) == 0)
			return &v->kids[k];
	return NULL;
}

static double jnum(const struct jv *v, const char *key)
{
	const struct jv *x = jget(v, key);
	return x && x->type == TS_JSON_NUM ? x->num : NAN;
}

static const char *jstr(const struct jv *v, const char *key)
{
	const struct jv *x = jget(v, key);
	return x && x->type == TS_JSON_STR ? x->str : "";
}

static int load_json(const char *path, struct jv *out)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;
	struct ts_json j;
	struct ts_err err;
	int t, rc;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	ts_err_init(&err);
	ts_json_init_mem(&j, buf, (size_t)n, 0, path);
	t = ts_json_next(&j, &err);
	rc = t < 0 ? t : jv_parse(&j, t, out, &err);
	ts_json_release(&j);
	free(buf);
	return rc;
}

/* Tally of compared numbers per section. */
struct tally {
	const char *name;
	int ok, bad;
};

static int same(double got, double want, double tol)
{
	if (isnan(want))
		return isnan(got);
	return fabs(got - want) <= tol * (fabs(want) > 1 ? fabs(want) : 1);
}

static void cmp(struct tally *t, const char *what, double got, double want, double tol)
{
	if (same(got, want, tol)) {
		t->ok++;
		return;
	}
	t->bad++;
	ts_test_fail(__FILE__, __LINE__, "%s: %s = %.10g, HTA says %.10g", t->name, what,
		     got, want);
}

static const struct ts_hta_rank *rank_of(const struct ts_hta *h, double rank)
{
	for (size_t k = 0; k < h->nranks; k++)
		if ((double)h->ranks[k].rank == rank)
			return &h->ranks[k];
	return NULL;
}

static const struct ts_hta_kstat *find_kstat(const struct ts_hta_kstat *k, size_t n,
					     const char *name, const char *type)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(k[i].name, name) == 0 && strcmp(ts_hta_ktype_name(k[i].type), type) == 0)
			return &k[i];
	return NULL;
}

static void cmp_kernels(struct tally *t, const struct ts_hta *h, const struct jv *rows, int all)
{
	size_t got_rows = 0;
	for (size_t k = 0; k < h->nranks; k++)
		got_rows += all ? h->ranks[k].nkernels_all : h->ranks[k].nkernels_tab;
	cmp(t, "row count", (double)got_rows, (double)(rows ? rows->n : 0), 0);
	for (size_t i = 0; rows && i < rows->n; i++) {
		const struct jv *e = &rows->kids[i];
		const struct ts_hta_rank *r = rank_of(h, jnum(e, "rank"));
		const struct ts_hta_kstat *k = NULL;
		if (r)
			k = all ? find_kstat(r->kernels_all, r->nkernels_all, jstr(e, "name"),
					     jstr(e, "kernel_type")) :
				  find_kstat(r->kernels, r->nkernels_tab, jstr(e, "name"),
					     jstr(e, "kernel_type"));
		if (!k) {
			t->bad++;
			ts_test_fail(__FILE__, __LINE__, "%s: no row for kernel %.60s", t->name,
				     jstr(e, "name"));
			continue;
		}
		cmp(t, "sum (us)", k->sum_us, jnum(e, "sum (us)"), 0);
		cmp(t, "max (us)", k->max_us, jnum(e, "max (us)"), 0);
		cmp(t, "min (us)", k->min_us, jnum(e, "min (us)"), 0);
		/* the file keeps 10 decimals */
		cmp(t, "mean (us)", k->mean_us, jnum(e, "mean (us)"), 1e-9);
		cmp(t, "stddev", k->std_us, jnum(e, "stddev"), 1e-9);
	}
}

static void check_expected(const char *name)
{
	char rel[256], line[1024];
	const char *path;
	struct jv exp;
	struct ts_paths paths;
	struct ts_trace *traces = NULL;
	const struct ts_trace **tp = NULL;
	struct ts_hta h;
	struct ts_err err;
	const struct jv *sec;
	struct tally tb = { "temporal_breakdown", 0, 0 }, kt = { "kernel_type_breakdown", 0, 0 },
		     kd = { "kernel_breakdown_default_args", 0, 0 },
		     ka = { "kernel_breakdown_all_kernels", 0, 0 },
		     ov = { "comm_comp_overlap", 0, 0 }, id = { "idle_time_breakdown", 0, 0 },
		     ls = { "launch_stats_summary", 0, 0 }, ql = { "queue_length_summary", 0, 0 },
		     ps = { "profiler_steps", 0, 0 };
	struct tally *all[] = { &tb, &kt, &kd, &ka, &ov, &id, &ls, &ql, &ps };

	snprintf(rel, sizeof(rel), "expected/hta/%s.json", name);
	path = test_data(rel);
	if (!path)
		return;
	REQUIRE(load_json(path, &exp) == 0);
	snprintf(rel, sizeof(rel), "traces/hta/%s", name);
	path = test_data(rel);
	if (!path) {
		jv_free(&exp);
		return;
	}
	ts_paths_init(&paths);
	ts_err_init(&err);
	REQUIRE(ts_paths_add(&paths, path, 1, &err) == 0);
	traces = calloc(paths.n, sizeof(*traces));
	tp = calloc(paths.n, sizeof(*tp));
	for (size_t k = 0; k < paths.n; k++) {
		ts_trace_init(&traces[k]);
		REQUIRE(ts_trace_read(&traces[k], paths.v[k], NULL, &err) == 0);
		tp[k] = &traces[k];
	}
	REQUIRE(ts_hta_analyze(tp, paths.n, &h, &err) == 0);

	sec = jget(&exp, "temporal_breakdown");
	for (size_t i = 0; sec && i < sec->n; i++) {
		const struct jv *e = &sec->kids[i];
		const struct ts_hta_rank *r = rank_of(&h, jnum(e, "rank"));
		if (!r) {
			cmp(&tb, "rank present", 0, 1, 0);
			continue;
		}
		cmp(&tb, "idle_time(us)", r->idle_us, jnum(e, "idle_time(us)"), 0);
		cmp(&tb, "compute_time(us)", r->compute_us, jnum(e, "compute_time(us)"), 0);
		cmp(&tb, "non_compute_time(us)", r->non_compute_us, jnum(e, "non_compute_time(us)"), 0);
		cmp(&tb, "kernel_time(us)", r->kernel_us, jnum(e, "kernel_time(us)"), 0);
		cmp(&tb, "idle_time_pctg", r->idle_pct, jnum(e, "idle_time_pctg"), 1e-12);
		cmp(&tb, "compute_time_pctg", r->compute_pct, jnum(e, "compute_time_pctg"), 1e-12);
		cmp(&tb, "non_compute_time_pctg", r->non_compute_pct,
		    jnum(e, "non_compute_time_pctg"), 1e-12);
	}

	sec = jget(&exp, "kernel_type_breakdown");
	cmp(&kt, "label count", (double)h.nktype, (double)(sec ? sec->n : 0), 0);
	for (size_t i = 0; sec && i < sec->n; i++) {
		const struct jv *e = &sec->kids[i];
		const struct ts_hta_klabel *l = NULL;
		for (size_t k = 0; k < h.nktype; k++)
			if (strcmp(h.ktype[k].label, jstr(e, "kernel_type")) == 0)
				l = &h.ktype[k];
		if (!l) {
			cmp(&kt, jstr(e, "kernel_type"), 0, 1, 0);
			continue;
		}
		cmp(&kt, "sum", l->sum_us, jnum(e, "sum"), 0);
		cmp(&kt, "percentage", l->pct, jnum(e, "percentage"), 1e-12);
	}

	cmp_kernels(&kd, &h, jget(&exp, "kernel_breakdown_default_args"), 0);
	cmp_kernels(&ka, &h, jget(&exp, "kernel_breakdown_all_kernels"), 1);

	sec = jget(&exp, "comm_comp_overlap");
	for (size_t i = 0; sec && i < sec->n; i++) {
		const struct jv *e = &sec->kids[i];
		const struct ts_hta_rank *r = rank_of(&h, jnum(e, "rank"));
		cmp(&ov, "comp_comm_overlap_pctg", r ? r->overlap_pct : -1,
		    jnum(e, "comp_comm_overlap_pctg"), 1e-12);
	}

	sec = jget(&exp, "idle_time_breakdown");
	{
		size_t got_rows = 0;
		for (size_t k = 0; k < h.nranks; k++)
			for (size_t s = 0; s < h.ranks[k].nidle; s++)
				for (int c = 0; c < 3; c++)
					got_rows += (size_t)h.ranks[k].idle[s].present[c];
		cmp(&id, "row count", (double)got_rows, (double)(sec ? sec->n : 0), 0);
	}
	for (size_t i = 0; sec && i < sec->n; i++) {
		static const char *const cats[3] = { "host_wait", "kernel_wait", "other" };
		const struct jv *e = &sec->kids[i];
		const struct ts_hta_rank *r = rank_of(&h, jnum(e, "rank"));
		const struct ts_hta_idle *s = NULL;
		int c = 0;
		while (c < 3 && strcmp(cats[c], jstr(e, "idle_category")) != 0)
			c++;
		for (size_t k = 0; r && k < r->nidle; k++)
			if ((double)r->idle[k].stream == jnum(e, "stream"))
				s = &r->idle[k];
		if (!s || c == 3 || !s->present[c]) {
			cmp(&id, "row present", 0, 1, 0);
			continue;
		}
		cmp(&id, "idle_time", s->idle_us[c], jnum(e, "idle_time"), 0);
		cmp(&id, "idle_time_ratio", s->ratio[c], jnum(e, "idle_time_ratio"), 1e-12);
	}

	sec = jget(&exp, "launch_stats_summary");
	for (size_t i = 0; sec && i < sec->n; i++) {
		const struct jv *e = &sec->kids[i];
		const struct ts_hta_rank *r = rank_of(&h, strtod(sec->keys[i], NULL));
		if (!r) {
			cmp(&ls, "rank present", 0, 1, 0);
			continue;
		}
		cmp(&ls, "n", (double)r->launch.n, jnum(e, "n"), 0);
		cmp(&ls, "sum_launch_delay", r->launch.sum_launch_delay_us,
		    jnum(e, "sum_launch_delay"), 0);
		cmp(&ls, "n_launch_delay_gt_100us", (double)r->launch.n_launch_delay_gt_100us,
		    jnum(e, "n_launch_delay_gt_100us"), 0);
		cmp(&ls, "n_cpu_dur_gt_50us", (double)r->launch.n_cpu_dur_gt_50us,
		    jnum(e, "n_cpu_dur_gt_50us"), 0);
		cmp(&ls, "n_gpu_shorter_than_cpu", (double)r->launch.n_gpu_shorter_than_cpu,
		    jnum(e, "n_gpu_shorter_than_cpu"), 0);
	}

	sec = jget(&exp, "queue_length_summary");
	for (size_t i = 0; sec && i < sec->n; i++) {
		static const char *const keys[8] = {
			"('queue_length', 'count')", "('queue_length', 'mean')",
			"('queue_length', 'std')", "('queue_length', 'min')",
			"('queue_length', '25%')", "('queue_length', '50%')",
			"('queue_length', '75%')", "('queue_length', 'max')"
		};
		const struct jv *e = &sec->kids[i];
		const struct ts_hta_rank *r = rank_of(&h, jnum(e, "('rank', '')"));
		const struct ts_hta_queue *q = NULL;
		double got[8];
		for (size_t k = 0; r && k < r->nqueue; k++)
			if ((double)r->queue[k].stream == jnum(e, "('stream', '')"))
				q = &r->queue[k];
		if (!q) {
			cmp(&ql, "stream present", 0, 1, 0);
			continue;
		}
		got[0] = q->count, got[1] = q->mean, got[2] = q->std, got[3] = q->min;
		got[4] = q->p25, got[5] = q->p50, got[6] = q->p75, got[7] = q->max;
		for (int k = 0; k < 8; k++)
			cmp(&ql, keys[k], got[k], jnum(e, keys[k]), 1e-9);
	}

	sec = jget(&exp, "profiler_steps");
	{
		const struct ts_hta_rank *r = h.nranks ? &h.ranks[0] : NULL;
		cmp(&ps, "step count", r ? (double)r->nsteps : -1, (double)(sec ? sec->n : 0), 0);
		for (size_t i = 0; r && sec && i < sec->n && i < r->nsteps; i++)
			cmp(&ps, "step", (double)r->steps[i], strtod(sec->kids[i].str, NULL), 0);
	}

	/* one line per file: which sections match */
	{
		size_t len = (size_t)snprintf(line, sizeof(line), "  hta %s:", name);
		for (size_t k = 0; k < sizeof(all) / sizeof(*all); k++)
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %s %s (%d/%d)",
						all[k]->name, all[k]->bad ? "MISMATCH" : "match",
						all[k]->ok, all[k]->ok + all[k]->bad);
		printf("%s\n", line);
	}

	ts_hta_release(&h);
	for (size_t k = 0; k < paths.n; k++)
		ts_trace_release(&traces[k]);
	free(traces);
	free(tp);
	ts_paths_release(&paths);
	jv_free(&exp);
}

TEST(hta_expected_amd_trace) { check_expected("amd_trace"); }
TEST(hta_expected_df_index_resolver) { check_expected("df_index_resolver"); }
TEST(hta_expected_nccl_parser_config) { check_expected("nccl_parser_config"); }
TEST(hta_expected_ns_resolution_trace) { check_expected("ns_resolution_trace"); }
TEST(hta_expected_timeline_analysis) { check_expected("timeline_analysis"); }
TEST(hta_expected_trace_filter) { check_expected("trace_filter"); }

/*
 * Every shared trace (GPU, ROCm, MTIA, CPU-only, legacy, synthetic faults)
 * goes through HTA mode without an error; CPU-only ones say "no GPU
 * kernels". Files the reader rejects (not Chrome traces) are skipped.
 */
TEST(hta_every_shared_trace)
{
	static const char *const dirs[] = { "traces/hta", "traces/cpu" };
	int analysed = 0, with_kernels = 0, without = 0;

	for (size_t d = 0; d < sizeof(dirs) / sizeof(*dirs); d++) {
		struct ts_paths paths;
		struct ts_err err;
		const char *dir = test_data(dirs[d]);
		if (!dir)
			return;
		ts_paths_init(&paths);
		ts_err_init(&err);
		REQUIRE(ts_paths_add(&paths, dir, 4, &err) == 0);
		for (size_t k = 0; k < paths.n; k++) {
			struct ts_trace t;
			const struct ts_trace *tp = &t;
			struct ts_hta h;
			struct ts_sb sb;
			struct ts_jw w;
			int rc;

			ts_trace_init(&t);
			ts_err_init(&err);
			if (ts_trace_read(&t, paths.v[k], NULL, &err) != 0) {
				ts_trace_release(&t);
				continue;
			}
			rc = ts_hta_analyze(&tp, 1, &h, &err);
			if (rc != 0) {
				ts_test_fail(__FILE__, __LINE__, "%s: %s", paths.v[k], err.msg);
				ts_hta_release(&h);
				ts_trace_release(&t);
				continue;
			}
			ts_sb_init(&sb);
			ts_jw_init(&w, &sb, 0);
			ts_hta_write_json(&h, 0, &w);
			CHECK(!sb.failed);
			/* the streaming path with the launch statistics and the
			 * queue length on a second thread writes the same bytes */
			{
				struct ts_hta_part part;
				struct ts_hta h2;
				struct ts_sb sb2;
				struct ts_jw w2;
				REQUIRE(ts_hta_part_build(&t, &part, 2, &err) == 0);
				REQUIRE(ts_hta_combine(&part, 1, &h2, &err) == 0);
				ts_sb_init(&sb2);
				ts_jw_init(&w2, &sb2, 0);
				ts_hta_write_json(&h2, 0, &w2);
				REQUIRE(!sb2.failed);
				if (sb2.len != sb.len || memcmp(sb2.buf, sb.buf, sb.len) != 0)
					ts_test_fail(__FILE__, __LINE__, "%s: threads 2 differ",
						     paths.v[k]);
				ts_sb_release(&sb2);
				ts_hta_release(&h2);
			}
			ts_hta_render(&h, &sb);
			CHECK(!sb.failed);
			if (h.ranks[0].nkernels) {
				with_kernels++;
				CHECK(isfinite(h.ranks[0].kernel_us));
			} else {
				without++;
				CHECK(strstr(sb.buf, "no GPU kernels") != NULL);
			}
			analysed++;
			ts_sb_release(&sb);
			ts_hta_release(&h);
			ts_trace_release(&t);
		}
		ts_paths_release(&paths);
	}
	printf("  hta mode ran on %d shared traces (%d with GPU kernels, %d without)\n",
	       analysed, with_kernels, without);
	CHECK(analysed > 20);
}

static int rows_equal(const struct hta_frame *a, const struct hta_frame *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t k = 0; k < a->n; k++) {
		const struct hta_row *x = &a->rows[k], *y = &b->rows[k];
		if (x->ev != y->ev || x->name != y->name || x->ts != y->ts || x->dur != y->dur ||
		    x->stream != y->stream || x->corr != y->corr || x->icorr != y->icorr ||
		    x->ktype != y->ktype || x->flags != y->flags)
			return 0;
	}
	return 1;
}

/*
 * The correlation tables indexed by id (hta_direct_fits) and the hash maps
 * give the same frame, the same filtered frame and the same launch
 * statistics and queue length on every shared trace; the ids of most of
 * them are dense enough for the tables, which the count checks.
 */
TEST(hta_direct_tables_are_the_maps)
{
	static const char *const dirs[] = { "traces/hta", "traces/cpu" };
	int same = 0, cases = 0, direct = 0;

	for (size_t d = 0; d < sizeof(dirs) / sizeof(*dirs); d++) {
		struct ts_paths paths;
		struct ts_err err;
		const char *dir = test_data(dirs[d]);
		if (!dir)
			return;
		ts_paths_init(&paths);
		ts_err_init(&err);
		REQUIRE(ts_paths_add(&paths, dir, 4, &err) == 0);
		for (size_t k = 0; k < paths.n; k++) {
			struct ts_trace t;
			struct hta_frame f[2];
			struct ts_hta_rank r[2];
			struct hta_labels lab[2];
			struct ts_arena a[2];
			int ok = 1;

			ts_trace_init(&t);
			ts_err_init(&err);
			if (ts_trace_read(&t, paths.v[k], NULL, &err) != 0) {
				ts_trace_release(&t);
				continue;
			}
			for (int v = 0; v < 2; v++) {
				ts_arena_init(&a[v]);
				memset(&r[v], 0, sizeof(r[v]));
				REQUIRE(hta_frame_base(&t, NULL, v, &f[v]) == 0);
			}
			{
				/* the frame's own table: 8 bytes per id */
				size_t ncorr = 0;
				for (size_t i = 0; i < f[1].n; i++)
					ncorr += f[1].rows[i].corr != -1;
				direct += hta_direct_fits(&f[1], ncorr, 8);
			}
			ok &= rows_equal(&f[0], &f[1]);
			for (int v = 0; v < 2; v++) {
				REQUIRE(hta_frame_filter(&f[v], &err) == 0);
				REQUIRE(hta_rank_analyze(&f[v], &a[v], &r[v], &lab[v], 1) == 0);
			}
			ok &= rows_equal(&f[0], &f[1]);
			ok &= memcmp(&r[0].launch, &r[1].launch, sizeof(r[0].launch)) == 0;
			ok &= r[0].nqueue == r[1].nqueue &&
			      (r[0].nqueue == 0 ||
			       memcmp(r[0].queue, r[1].queue, r[0].nqueue * sizeof(*r[0].queue)) == 0);
			if (!ok)
				ts_test_fail(__FILE__, __LINE__, "%s: tables and maps differ", paths.v[k]);
			same += ok;
			cases++;
			for (int v = 0; v < 2; v++) {
				hta_frame_release(&f[v]);
				ts_arena_release(&a[v]);
			}
			ts_trace_release(&t);
		}
		ts_paths_release(&paths);
	}
	printf("  hta tables against maps: %d of %d traces the same, %d took the tables\n",
	       same, cases, direct);
	CHECK_I64(same, cases);
	CHECK(direct > 10);
}

/* One event for the filter test, with its category string (HTA keeps only
 * rows that have one). */
static size_t filt_ev(struct ts_trace *t, int cat, const char *cs, const char *name,
		      int64_t tid, int64_t ts_us, int64_t corr)
{
	size_t i = tb_ev(t, cat, name, cat == TS_CAT_KERNEL ? 0 : 1, tid, ts_us, 5, corr);

	ts_trace_set_cat_str(t, i, (uint32_t)ts_intern(&t->strings, cs, strlen(cs)));
	return i;
}

/*
 * HTA's correlation filter (hta_frame_filter): CPU rows before the last
 * ProfilerStep start are kept, and each GPU row once per kept CPU row
 * sharing its correlation; GPU rows first, then CPU rows, each in file
 * order. Here (times in us) steps start at 0 and 100; launches at 10 and
 * 20 share correlation 7, one at 150 (after the last step) has 11; kernels
 * at 30 (c7), 50 (c9: no CPU row) and 160 (c11). Expected, by hand:
 * kernel@30 twice, then step#1, launch@10, launch@20 = 5 rows.
 */
TEST(hta_filter_repeats_gpu_rows)
{
	struct ts_trace t;
	struct hta_frame f;
	struct ts_err err;
	size_t k30, s1, l10, l20;
	static const int64_t want_ts_us[] = { 30, 30, 0, 10, 20 };

	tb_init(&t);
	s1 = filt_ev(&t, TS_CAT_USER_ANNOTATION, "user_annotation", "ProfilerStep#1", 1, 0, -1);
	filt_ev(&t, TS_CAT_USER_ANNOTATION, "user_annotation", "ProfilerStep#2", 1, 100, -1);
	l10 = filt_ev(&t, TS_CAT_RUNTIME, "cuda_runtime", "cudaLaunchKernel", 1, 10, 7);
	l20 = filt_ev(&t, TS_CAT_RUNTIME, "cuda_runtime", "cudaLaunchKernel", 1, 20, 7);
	filt_ev(&t, TS_CAT_RUNTIME, "cuda_runtime", "cudaLaunchKernel", 1, 150, 11);
	k30 = filt_ev(&t, TS_CAT_KERNEL, "kernel", "gemm", 7, 30, 7);
	filt_ev(&t, TS_CAT_KERNEL, "kernel", "gemm", 7, 50, 9);
	filt_ev(&t, TS_CAT_KERNEL, "kernel", "gemm", 7, 160, 11);
	REQUIRE(hta_frame_base(&t, NULL, 1, &f) == 0);
	CHECK_I64(f.n, 8);
	ts_err_init(&err);
	REQUIRE(hta_frame_filter(&f, &err) == 0);
	REQUIRE(f.n == 5);
	CHECK_I64(f.rows[0].ev, k30);
	CHECK_I64(f.rows[1].ev, k30);
	CHECK_I64(f.rows[2].ev, s1);
	CHECK_I64(f.rows[3].ev, l10);
	CHECK_I64(f.rows[4].ev, l20);
	for (size_t i = 0; i < 5; i++)
		CHECK_I64(f.rows[i].ts + f.t0, want_ts_us[i] * US);
	hta_frame_release(&f);
	tb_release(&t);
}

/*
 * The filter's result larger than the frame: three launches at 10, 20, 30
 * and three kernels at 40, 50, 60 all share correlation 7, so each kernel
 * is kept three times: 9 GPU rows, then step#1 and the three launches =
 * 13 rows from a frame of 8.
 */
TEST(hta_filter_grows_the_frame)
{
	struct ts_trace t;
	struct hta_frame f;
	struct ts_err err;
	static const int64_t want_ts_us[] = { 40, 40, 40, 50, 50, 50, 60, 60, 60, 0, 10, 20, 30 };

	tb_init(&t);
	filt_ev(&t, TS_CAT_USER_ANNOTATION, "user_annotation", "ProfilerStep#1", 1, 0, -1);
	filt_ev(&t, TS_CAT_USER_ANNOTATION, "user_annotation", "ProfilerStep#2", 1, 100, -1);
	for (int i = 1; i <= 3; i++)
		filt_ev(&t, TS_CAT_RUNTIME, "cuda_runtime", "cudaLaunchKernel", 1, 10 * i, 7);
	for (int i = 4; i <= 6; i++)
		filt_ev(&t, TS_CAT_KERNEL, "kernel", "gemm", 7, 10 * i, 7);
	REQUIRE(hta_frame_base(&t, NULL, 1, &f) == 0);
	CHECK_I64(f.n, 8);
	ts_err_init(&err);
	REQUIRE(hta_frame_filter(&f, &err) == 0);
	REQUIRE(f.n == 13);
	for (size_t i = 0; i < 13; i++)
		CHECK_I64(f.rows[i].ts + f.t0, want_ts_us[i] * US);
	hta_frame_release(&f);
	tb_release(&t);
}

/*
 * Hostile times: kernels at -9e18 and 9e18 + 1 ns are past 2^61 ns (taking
 * the frame's origin overflowed int64) and are no rows; a kernel of -1 us
 * stays (HTA keeps negative durations). Four kernels of 2^61 ns sum past
 * int64 (the per-kernel sum overflowed): the sum saturates at INT64_MAX ns.
 */
TEST(hta_hostile_times_bounded_and_saturated)
{
	struct ts_trace t;
	const struct ts_trace *tp = &t;
	struct ts_hta h;
	struct ts_err err;
	const int64_t lim = INT64_C(1) << 61;

	ts_trace_init(&t);
	ev(&t, "kernel", "k", INT64_C(-9000000000000000000), 1000, 7, 1);
	ev(&t, "kernel", "k", INT64_C(9000000000000000001), 1000, 7, 2);
	ev(&t, "kernel", "k", 1000, 2000, 7, 3);
	ev(&t, "kernel", "k", 5000, -1000, 7, 4);
	ts_err_init(&err);
	REQUIRE(ts_hta_analyze(&tp, 1, &h, &err) == 0);
	REQUIRE(h.ranks[0].nkernels_all == 1);
	CHECK_I64(h.ranks[0].kernels_all[0].count, 2);
	CHECK_NEAR(h.ranks[0].kernels_all[0].sum_us, 1, 0);
	ts_hta_release(&h);
	ts_trace_release(&t);

	ts_trace_init(&t);
	for (int i = 0; i < 4; i++)
		ev(&t, "kernel", "g", 0, lim, 7, i + 1);
	REQUIRE(ts_hta_analyze(&tp, 1, &h, &err) == 0);
	REQUIRE(h.ranks[0].nkernels_all == 1);
	CHECK_I64(h.ranks[0].kernels_all[0].count, 4);
	CHECK_NEAR(h.ranks[0].kernels_all[0].sum_us, (double)INT64_MAX / 1000.0, 0);
	ts_hta_release(&h);
	ts_trace_release(&t);
}

/*
 * test_ivset.c - interval arithmetic against hand-computed lengths.
 */
#include "harness.h"
#include "trainscope/profile.h"

static void set(struct ts_ivset *a, const int64_t *v, size_t n)
{
	ts_ivset_init(a);
	for (size_t i = 0; i + 1 < n; i += 2)
		ts_ivset_add(a, v[i], v[i + 1]);
	ts_ivset_norm(a);
}

TEST(ivset_union)
{
	/* [0,10) [5,20) [20,25) [30,40) [35,36) -> [0,25) [30,40): 25 + 10 = 35 */
	static const int64_t v[] = { 30, 40, 0, 10, 20, 25, 5, 20, 35, 36 };
	struct ts_ivset a;

	set(&a, v, 10);
	CHECK_I64(a.n, 2);
	CHECK_I64(a.v[0].s, 0);
	CHECK_I64(a.v[0].e, 25);
	CHECK_I64(a.v[1].s, 30);
	CHECK_I64(ts_ivset_len(&a), 35);
	/* empty and inverted intervals are ignored */
	ts_ivset_add(&a, 50, 50);
	ts_ivset_add(&a, 60, 55);
	CHECK_I64(a.n, 2);
	ts_ivset_release(&a);
}

TEST(ivset_ops)
{
	/* a = [0,100) [200,300); b = [50,250) [280,290)
	 * a∩b = [50,100) [200,250) [280,290) = 50+50+10 = 110
	 * a\b = [0,50) [250,280) [290,300) = 50+30+10 = 90
	 * a∪b = [0,300) = 300 */
	static const int64_t va[] = { 0, 100, 200, 300 };
	static const int64_t vb[] = { 50, 250, 280, 290 };
	struct ts_ivset a, b, o;

	set(&a, va, 4);
	set(&b, vb, 4);
	ts_ivset_init(&o);
	REQUIRE(ts_ivset_and(&o, &a, &b) == 0);
	CHECK_I64(o.n, 3);
	CHECK_I64(ts_ivset_len(&o), 110);
	CHECK_I64(ts_ivset_and_len(&a, &b), 110);
	REQUIRE(ts_ivset_sub(&o, &a, &b) == 0);
	CHECK_I64(o.n, 3);
	CHECK_I64(o.v[1].s, 250);
	CHECK_I64(o.v[1].e, 280);
	CHECK_I64(ts_ivset_len(&o), 90);
	REQUIRE(ts_ivset_sub(&o, &b, &a) == 0);
	/* b\a = [100,200) [250,250)x -> 100 */
	CHECK_I64(ts_ivset_len(&o), 100);
	REQUIRE(ts_ivset_or(&o, &a, &b) == 0);
	CHECK_I64(o.n, 1);
	CHECK_I64(ts_ivset_len(&o), 300);
	/* |a ∩ [90, 210)| = 10 + 10 = 20; [300, 400) touches nothing */
	CHECK_I64(ts_ivset_len_in(&a, 90, 210), 20);
	CHECK_I64(ts_ivset_len_in(&a, 300, 400), 0);
	CHECK_I64(ts_ivset_len_in(&a, -5, 1000), 200);
	ts_ivset_release(&a);
	ts_ivset_release(&b);
	ts_ivset_release(&o);
}

TEST(ivset_exact_ns_large_values)
{
	/* epoch-µs timestamps in ns (1.7e18) keep exact lengths: 1 ns apart */
	struct ts_ivset a;
	int64_t base = 1712195495519689047LL;

	ts_ivset_init(&a);
	ts_ivset_add(&a, base, base + 1);
	ts_ivset_add(&a, base + 2, base + 3);
	ts_ivset_norm(&a);
	CHECK_I64(a.n, 2);
	CHECK_I64(ts_ivset_len(&a), 2);
	ts_ivset_release(&a);
}

TEST(ivset_many_nested_is_fast)
{
	/* 200k nested intervals [i, 400000 - i): union is [0, 400000) */
	struct ts_ivset a, b, o;

	ts_ivset_init(&a);
	ts_ivset_init(&b);
	ts_ivset_init(&o);
	for (int64_t i = 0; i < 200000; i++) {
		ts_ivset_add(&a, i, 400000 - i);
		ts_ivset_add(&b, 2 * i, 2 * i + 1);
	}
	ts_ivset_norm(&a);
	ts_ivset_norm(&b);
	CHECK_I64(a.n, 1);
	CHECK_I64(ts_ivset_len(&a), 400000);
	/* b = 200k unit intervals at even points < 400000: all inside a */
	CHECK_I64(ts_ivset_and_len(&a, &b), 200000);
	REQUIRE(ts_ivset_sub(&o, &a, &b) == 0);
	CHECK_I64(ts_ivset_len(&o), 200000);
	ts_ivset_release(&a);
	ts_ivset_release(&b);
	ts_ivset_release(&o);
}

/* Nested and touching intervals in file order extend the last entry before
 * any norm; an earlier or disjoint start takes a new one. Parent [100,200)
 * with children [110,120) [150,210) and a touching [210,230): one entry
 * [100,230). Then [50,60) (earlier start) and [300,310): three entries;
 * after norm [50,60) [100,230) [300,310), 10 + 130 + 10 = 150. */
TEST(ivset_add_extends_last)
{
	struct ts_ivset a;

	ts_ivset_init(&a);
	REQUIRE(ts_ivset_add(&a, 100, 200) == 0);
	REQUIRE(ts_ivset_add(&a, 110, 120) == 0);
	REQUIRE(ts_ivset_add(&a, 150, 210) == 0);
	REQUIRE(ts_ivset_add(&a, 210, 230) == 0);
	CHECK_I64(a.n, 1);
	CHECK_I64(a.v[0].s, 100);
	CHECK_I64(a.v[0].e, 230);
	REQUIRE(ts_ivset_add(&a, 50, 60) == 0);
	REQUIRE(ts_ivset_add(&a, 300, 310) == 0);
	CHECK_I64(a.n, 3);
	ts_ivset_norm(&a);
	CHECK_I64(a.n, 3);
	CHECK_I64(a.v[0].s, 50);
	CHECK_I64(a.v[1].e, 230);
	CHECK_I64(ts_ivset_len(&a), 150);
	ts_ivset_release(&a);
}

/* Random sets over [0, 256) ns against the truth built point by point: a
 * bitmap per set, the result's bitmap from the two by its definition.
 * The output set is reused from one operation to the next (bigger, then
 * smaller, then empty before), so the sweeps must give the same set
 * whatever room and content it had. Every result is also normalized:
 * sorted, disjoint, not touching. */
static void bits_of(const struct ts_ivset *a, unsigned char *m)
{
	memset(m, 0, 256);
	for (size_t i = 0; i < a->n; i++)
		for (int64_t x = a->v[i].s; x < a->v[i].e; x++)
			m[x] = 1;
}

TEST(ivset_sweeps_match_pointwise_truth)
{
	uint64_t r = 99;
	struct ts_ivset a, b, o;
	unsigned char ma[256], mb[256], mo[256];
	int cases = 0;

	ts_ivset_init(&o);
	for (int round = 0; round < 300; round++) {
		ts_ivset_init(&a);
		ts_ivset_init(&b);
		for (int k = 0; k < 2; k++) {
			struct ts_ivset *x = k ? &b : &a;
			int n = (int)(round % 17) + k * 3;
			for (int i = 0; i < n; i++) {
				int64_t s, len;
				r = r * 6364136223846793005ULL + 1442695040888963407ULL;
				s = (int64_t)(r >> 33) % 240;
				len = 1 + (int64_t)(r >> 20) % 16;
				ts_ivset_add(x, s, s + len);
			}
			ts_ivset_norm(x);
		}
		bits_of(&a, ma);
		bits_of(&b, mb);
		if (round % 3 == 2)
			ts_ivset_release(&o);
		for (int op = 0; op < 3; op++) {
			int rc = op == 0 ? ts_ivset_or(&o, &a, &b)
				 : op == 1 ? ts_ivset_and(&o, &a, &b) : ts_ivset_sub(&o, &a, &b);
			int bad = 0;
			REQUIRE(rc == 0);
			bits_of(&o, mo);
			for (int x = 0; x < 256; x++) {
				int want = op == 0 ? (ma[x] | mb[x]) : op == 1 ? (ma[x] & mb[x])
									   : (ma[x] & !mb[x]);
				bad |= mo[x] != want;
			}
			for (size_t i = 0; i < o.n; i++)
				bad |= o.v[i].s >= o.v[i].e || (i && o.v[i].s <= o.v[i - 1].e);
			if (bad)
				ts_test_fail(__FILE__, __LINE__, "round %d op %d: wrong set", round, op);
			cases++;
		}
		ts_ivset_release(&a);
		ts_ivset_release(&b);
	}
	ts_ivset_release(&o);
	CHECK_I64(cases, 900);
}

/* The union of k sets in one merge against the point-by-point truth: 200
 * rounds of 0-5 random sets over [0, 256) (some empty), the output reused
 * from round to round; the result is normalized. */
TEST(ivset_or_all_matches_pointwise_truth)
{
	uint64_t r = 4242;
	struct ts_ivset in[5], o;
	const struct ts_ivset *ptr[5];
	unsigned char m[256], want[256], got[256];

	ts_ivset_init(&o);
	for (int round = 0; round < 200; round++) {
		int k = round % 6, bad = 0;
		memset(want, 0, sizeof(want));
		for (int j = 0; j < k; j++) {
			int n = (int)((round + j) % 9);
			ts_ivset_init(&in[j]);
			for (int i = 0; i < n; i++) {
				int64_t s, len;
				r = r * 6364136223846793005ULL + 1442695040888963407ULL;
				s = (int64_t)(r >> 33) % 240;
				len = 1 + (int64_t)(r >> 20) % 16;
				ts_ivset_add(&in[j], s, s + len);
			}
			ts_ivset_norm(&in[j]);
			bits_of(&in[j], m);
			for (int x = 0; x < 256; x++)
				want[x] |= m[x];
			ptr[j] = &in[j];
		}
		REQUIRE(ts_ivset_or_all(&o, ptr, (size_t)k) == 0);
		bits_of(&o, got);
		bad = memcmp(got, want, sizeof(got)) != 0;
		for (size_t i = 0; i < o.n; i++)
			bad |= o.v[i].s >= o.v[i].e || (i && o.v[i].s <= o.v[i - 1].e);
		if (bad)
			ts_test_fail(__FILE__, __LINE__, "round %d (%d sets): wrong union", round, k);
		for (int j = 0; j < k; j++)
			ts_ivset_release(&in[j]);
	}
	ts_ivset_release(&o);
}

/*
 * Unit tests for the table cells that skip printf: the reference is
 * snprintf itself with the format they stand for, on values chosen to hit
 * every rounding case (exact midpoints, values a hair off them, negative
 * zero, results that carry into the next digit) and on random values.
 */
#include <stdio.h>
#include <string.h>
#include "harness.h"
#include "trainscope/stats.h"
#include "trainscope/table.h"

/* Do the fast cells of v equal snprintf's for every decimals 0..7? */
static int fixed_matches(struct ts_table *t, double v)
{
	int ok = 1;

	for (int d = 0; d <= 7; d++) {
		char want[512];

		snprintf(want, sizeof(want), "%.*f", d, v);
		if (ts_table_cell_fixed(t, v, d))
			return 0;
		if (strcmp(t->cells[t->ncells - 1], want)) {
			fprintf(stderr, "  %.17g %%.%df: got %s want %s\n", v, d,
				t->cells[t->ncells - 1], want);
			ok = 0;
		}
	}
	return ok;
}

TEST(table_cell_fixed_is_printf)
{
	static const double fixed[] = {
		0, -0.0, 0.5, 1.5, 2.5, -2.5, 0.25, 0.125, 0.375, 1.05, 0.15, 0.35,
		9.95, 99.95, 999.5, 0.0005, 1e-300, -1e-300, 5e-324, 0.9999999,
		1328.45, 1328.55, 4503599627370495.5, 4503599627370496.0, 1e15, 1e16,
		1e22, 1e300, INFINITY, -INFINITY, NAN, -NAN,
	};
	struct ts_table t;
	struct ts_rng rng;
	int ok = 1;

	ts_table_init(&t);
	ts_table_col(&t, "x", NULL, TS_RIGHT, 0);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		ok &= fixed_matches(&t, fixed[i]);
	ts_rng_init(&rng, 7);
	for (int i = 0; i < 60000 && ok; i++) {
		/* midpoints k / 2^j and their neighbours, then random magnitudes */
		double k = (double)ts_rng_below(&rng, 1u << 30);
		double v = ldexp(k, -(int)ts_rng_below(&rng, 12));

		if (i % 3 == 1)
			v = nextafter(v, ts_rng_below(&rng, 2) ? INFINITY : -INFINITY);
		else if (i % 3 == 2)
			v = ts_rng_double(&rng) * pow(10, (double)ts_rng_below(&rng, 36) - 18);
		if (ts_rng_below(&rng, 2))
			v = -v;
		ok &= fixed_matches(&t, v);
	}
	CHECK(ok);
	ts_table_release(&t);
}

TEST(table_cell_i64_is_printf)
{
	static const long long v[] = { 0, 1, -1, 9, 10, -10, 1000941, INT64_MAX, INT64_MIN };
	struct ts_table t;

	ts_table_init(&t);
	ts_table_col(&t, "i", NULL, TS_RIGHT, 0);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char want[32];

		snprintf(want, sizeof(want), "%lld", v[i]);
		REQUIRE(ts_table_cell_i64(&t, v[i]) == 0);
		CHECK_STR(t.cells[t.ncells - 1], want);
	}
	ts_table_release(&t);
}

TEST(fmt_pct_keeps_small_shares_readable)
{
	/* the H200 example's MFU is 0.0553 %: "0.1" nearly doubled it */
	static const struct {
		double v;
		const char *want;
	} c[] = {
		{ 0.05534751670103093, "0.055" }, { 0.5, "0.5" }, { 0.994, "0.99" },
		{ 0.996, "1.0" }, { 1.0, "1.0" }, { 42.37, "42.4" }, { 0, "0.0" },
		{ 0.00041, "0.00041" }, { -0.25, "-0.25" }, { 100, "100.0" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ts_fmt_pct(buf, sizeof(buf), c[i].v);
		CHECK_STR(buf, c[i].want);
	}
}

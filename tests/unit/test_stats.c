/*
 * Unit tests for src/stats. Every expected value is a hand calculation
 * written next to it, a published table value (named), or a property
 * that follows from construction or theory.
 */
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "trainscope/stats.h"

TEST(stats_moments)
{
	/* Sum of squared deviations from 5: 9+1+1+1+0+0+4+16 = 32. */
	const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };

	CHECK_NEAR(ts_stats_mean(x, 8), 5, 1e-12);
	CHECK_NEAR(ts_stats_stddev(x, 8), sqrt(32.0 / 7), 1e-12);
	CHECK_NEAR(ts_stats_cv(x, 8), sqrt(32.0 / 7) / 5, 1e-12);
	CHECK(isnan(ts_stats_mean(x, 0)));
	CHECK(isnan(ts_stats_stddev(x, 1)));
}

TEST(stats_quantile_type7)
{
	/* sorted 1 2 3 4: h = 3p; p=.1 -> 1 + .3 = 1.3; p=.5 -> 2.5; p=.9 -> 3.7 */
	const double x[] = { 4, 1, 3, 2 };
	const double p[] = { 0, 0.1, 0.5, 0.9, 1 };
	/* NumPy docs: np.percentile([[10, 7, 4], [3, 2, 1]], 50) == 3.5 */
	const double np_doc[] = { 10, 7, 4, 3, 2, 1 };
	double q[5], med;

	REQUIRE(ts_stats_quantiles(x, 4, p, 5, q) == 0);
	CHECK_NEAR(q[0], 1, 1e-12);
	CHECK_NEAR(q[1], 1.3, 1e-12);
	CHECK_NEAR(q[2], 2.5, 1e-12);
	CHECK_NEAR(q[3], 3.7, 1e-12);
	CHECK_NEAR(q[4], 4, 1e-12);
	REQUIRE(ts_stats_quantiles(np_doc, 6, p + 2, 1, &med) == 0);
	CHECK_NEAR(med, 3.5, 1e-12);
	CHECK_I64(ts_stats_quantiles(x, 0, p, 1, q), TS_EUSAGE);
}

TEST(stats_median_mad)
{
	/* Wikipedia "Median absolute deviation": {1,1,2,2,4,6,9} has median 2,
	 * deviations {1,1,0,0,2,4,7}, MAD 1. */
	const double x[] = { 1, 1, 2, 2, 4, 6, 9 };
	double med, mad;

	REQUIRE(ts_stats_median_mad(x, 7, &med, &mad) == 0);
	CHECK_NEAR(med, 2, 1e-12);
	CHECK_NEAR(mad, 1, 1e-12);
}

TEST(stats_distributions_match_published_tables)
{
	/* Student t two-sided 95 % critical values (any statistics table). */
	CHECK_NEAR(ts_stats_t_quantile(0.975, 1), 12.7062047, 1e-6);
	CHECK_NEAR(ts_stats_t_quantile(0.975, 2), 4.30265273, 1e-7);
	CHECK_NEAR(ts_stats_t_quantile(0.975, 3), 3.18244631, 1e-7);
	CHECK_NEAR(ts_stats_t_quantile(0.975, 5), 2.57058184, 1e-7);
	CHECK_NEAR(ts_stats_t_quantile(0.975, 10), 2.22813885, 1e-7);
	CHECK_NEAR(ts_stats_t_quantile(0.975, 30), 2.04227246, 1e-7);
	CHECK_NEAR(ts_stats_t_quantile(0.95, 4), 2.13184679, 1e-7);
	CHECK_NEAR(ts_stats_t_quantile(0.025, 10), -2.22813885, 1e-7);
	/* Cauchy (df 1): F(1) = 1/2 + atan(1)/pi = 3/4. */
	CHECK_NEAR(ts_stats_t_cdf(1, 1), 0.75, 1e-12);
	CHECK_NEAR(ts_stats_t_cdf(0, 7.3), 0.5, 1e-15);
	/* Standard normal quantiles. */
	CHECK_NEAR(ts_stats_norm_quantile(0.975), 1.959963985, 1e-9);
	CHECK_NEAR(ts_stats_norm_quantile(0.995), 2.575829304, 1e-9);
	CHECK_NEAR(ts_stats_norm_quantile(0.001), -3.090232306, 1e-9);
	CHECK(isnan(ts_stats_norm_quantile(1)));
	/* t with huge df tends to the normal. */
	CHECK_NEAR(ts_stats_t_quantile(0.975, 1e7), 1.959963985, 1e-6);
}

TEST(stats_hypergeometric_tail)
{
	/* All 3 marked among 3 drawn from 10: 1 / C(10,3) = 1/120. */
	CHECK_NEAR(ts_stats_hypergeom_sf(10, 3, 3, 3), 1.0 / 120, 1e-15);
	/* At least 1 of 2 marked in 2 draws from 5: 1 - C(3,2)/C(5,2) = 0.7. */
	CHECK_NEAR(ts_stats_hypergeom_sf(5, 2, 2, 1), 0.7, 1e-14);
	CHECK_NEAR(ts_stats_hypergeom_sf(5, 2, 2, 0), 1, 0);
	CHECK_NEAR(ts_stats_hypergeom_sf(5, 2, 2, 3), 0, 0);
	/* 8 of 8 marked among 8 drawn from 60: 1 / C(60,8) = 1/2558620845. */
	CHECK_REL(ts_stats_hypergeom_sf(60, 8, 8, 8), 1.0 / 2558620845.0, 1e-9);
}

TEST(stats_rng_deterministic)
{
	struct ts_rng a, b;
	uint64_t x = 0, y = 0;
	int in_range = 1;

	ts_rng_init(&a, 42);
	ts_rng_init(&b, 42);
	for (int i = 0; i < 1000; i++) {
		x ^= ts_rng_next(&a);
		y ^= ts_rng_next(&b);
	}
	CHECK(x == y);
	for (int i = 0; i < 1000; i++)
		in_range &= ts_rng_below(&a, 7) < 7 && ts_rng_double(&a) < 1.0;
	CHECK(in_range);
}

TEST(stats_autocorrelation_by_hand)
{
	/* x = 1..5: deviations -2 -1 0 1 2, sum of squares 10.
	 * lag 1: (-2)(-1) + (-1)(0) + (0)(1) + (1)(2) = 4   -> 0.4
	 * lag 2: (-2)(0) + (-1)(1) + (0)(2) = -1            -> -0.1
	 * lag 3: (-2)(1) + (-1)(2) = -4                      -> -0.4
	 * Geyer: Gamma_0 = 1 + 0.4 = 1.4, Gamma_1 = -0.1 - 0.4 < 0, stop:
	 * tau = -1 + 2 * 1.4 = 1.8, ess = 5 / 1.8. */
	const double x[] = { 1, 2, 3, 4, 5 };
	struct ts_acf_summary s;

	CHECK_NEAR(ts_stats_autocorr(x, 5, 0), 1, 1e-12);
	CHECK_NEAR(ts_stats_autocorr(x, 5, 1), 0.4, 1e-12);
	CHECK_NEAR(ts_stats_autocorr(x, 5, 2), -0.1, 1e-12);
	CHECK_NEAR(ts_stats_autocorr(x, 5, 3), -0.4, 1e-12);
	REQUIRE(ts_stats_acf_summary(x, 5, &s) == 0);
	CHECK_NEAR(s.lag1, 0.4, 1e-12);
	CHECK_NEAR(s.tau_int, 1.8, 1e-12);
	CHECK_NEAR(s.ess, 5 / 1.8, 1e-12);
}

/* AR(1) x_t = rho x_{t-1} + e_t with standard normal e (Box-Muller). */
static void ar1(struct ts_rng *r, double rho, double *x, size_t n)
{
	double prev = 0;

	for (size_t i = 0; i < n + 100; i++) {
		double u1 = ts_rng_double(r), u2 = ts_rng_double(r);
		double e = sqrt(-2 * log(1 - u1)) * cos(2 * 3.141592653589793 * u2);

		prev = rho * prev + e;
		if (i >= 100)
			x[i - 100] = prev;
	}
}

TEST(stats_ess_of_ar1)
{
	/* ab-stats A3: for AR(1), N_eff = N (1 - rho) / (1 + rho); rho = 0.5
	 * turns 100000 steps into 33333. Allow 10 % sampling error. */
	size_t n = 100000;
	double *x = malloc(n * sizeof(*x));
	struct ts_rng r;
	struct ts_acf_summary s;

	REQUIRE(x);
	ts_rng_init(&r, 7);
	ar1(&r, 0.5, x, n);
	REQUIRE(ts_stats_acf_summary(x, n, &s) == 0);
	CHECK_REL(s.ess, 100000.0 / 3, 0.10);
	CHECK_NEAR(s.lag1, 0.5, 0.02);
	free(x);
}

TEST(stats_batch_means_by_hand)
{
	/* 1..20 in k = 4 batches of 5: means 3 8 13 18, mean 10.5,
	 * s^2 = (7.5^2 + 2.5^2 + 2.5^2 + 7.5^2) / 3 = 125/3,
	 * half width = t_{3,.975} s / 2 with t_{3,.975} = 3.18244631.
	 * lag-1 of the batch means: (18.75 - 6.25 + 18.75) / 125 = 0.25. */
	double x[20];
	struct ts_ci ci;
	double half = 3.18244631 * sqrt(125.0 / 3) / 2;

	for (int i = 0; i < 20; i++)
		x[i] = i + 1;
	REQUIRE(ts_stats_ci_batch_means(x, 20, 4, 0.95, &ci) == 0);
	CHECK_NEAR(ci.mean, 10.5, 1e-12);
	CHECK_NEAR(ci.lo, 10.5 - half, 1e-6);
	CHECK_NEAR(ci.hi, 10.5 + half, 1e-6);
	CHECK_I64(ci.batches, 4);
	CHECK_I64(ci.batch_len, 5);
	CHECK_NEAR(ci.lag1_batches, 0.25, 1e-12);
	CHECK_I64(ts_stats_ci_batch_means(x, 20, 1, 0.95, &ci), TS_EUSAGE);
}

TEST(stats_block_bootstrap_degenerate_cases)
{
	/* One block as long as the series: every resample is the series. */
	const double x[] = { 3, 1, 4, 1, 5, 9, 2, 6 };
	const double c[] = { 7, 7, 7, 7, 7, 7 };
	struct ts_ci a, b;

	REQUIRE(ts_stats_ci_block_bootstrap(x, 8, 8, 100, 1, 0.95, &a) == 0);
	CHECK_NEAR(a.lo, 31.0 / 8, 1e-12);
	CHECK_NEAR(a.hi, 31.0 / 8, 1e-12);
	REQUIRE(ts_stats_ci_block_bootstrap(c, 6, 0, 100, 1, 0.95, &a) == 0);
	CHECK_NEAR(a.lo, 7, 1e-12);
	CHECK_NEAR(a.hi, 7, 1e-12);
	CHECK_I64(a.block_len, 1); /* constant series: no dependence */
	/* Same seed, same interval. */
	REQUIRE(ts_stats_ci_block_bootstrap(x, 8, 2, 500, 99, 0.95, &a) == 0);
	REQUIRE(ts_stats_ci_block_bootstrap(x, 8, 2, 500, 99, 0.95, &b) == 0);
	CHECK(a.lo == b.lo && a.hi == b.hi);
	CHECK(a.lo < 31.0 / 8 && a.hi > 31.0 / 8);
}

TEST(stats_ci_honest_under_autocorrelation)
{
	/* AR(1) with rho = 0.7: tau = (1 + rho) / (1 - rho) = 5.67, so the iid
	 * t interval is sqrt(5.67) = 2.4 times too narrow and covers the true
	 * mean 0 only about P(|Z| < 1.96 / 2.4) = 59 % of the time. The
	 * interval we report must stay near its 95 % (>= 88 % over 300 runs). */
	size_t n = 400, runs = 300, cover = 0, cover_iid = 0;
	double *x = malloc(n * sizeof(*x));
	struct ts_rng r;

	REQUIRE(x);
	ts_rng_init(&r, 2024);
	for (size_t k = 0; k < runs; k++) {
		struct ts_ci ci;
		double m, se;

		ar1(&r, 0.7, x, n);
		REQUIRE(ts_stats_ci_mean(x, n, k, &ci) == 0);
		cover += ci.lo <= 0 && ci.hi >= 0;
		m = ts_stats_mean(x, n);
		se = ts_stats_stddev(x, n) / sqrt((double)n);
		cover_iid += fabs(m) <= 1.966 * se;
	}
	CHECK((double)cover / runs >= 0.88);
	CHECK((double)cover_iid / runs <= 0.75);
	free(x);
}

TEST(stats_mser5_by_hand)
{
	/* 5 x 50 then 25 x 10: batch means 50 10 10 10 10 10.
	 * d = 0: mean 100/6, SS = 33.33^2 + 5 * 6.67^2 = 1333.3, / 36 = 37.0
	 * d = 1..4: SS = 0 -> d* = 1 (smallest), cut 5, steady. */
	double x[30], ramp[50];
	struct ts_mser m;

	for (int i = 0; i < 30; i++)
		x[i] = i < 5 ? 50 : 10;
	REQUIRE(ts_stats_mser5(x, 30, &m) == 0);
	CHECK_I64(m.cut, 5);
	CHECK_I64(m.batches, 6);
	CHECK(m.steady);
	/* A ramp 0..49: batch means 2, 7, ..., 47. For the last k = m - d means
	 * the statistic is 25 (k^2 - 1) / (12 k), which falls as d grows, so the
	 * argmin over d <= m / 2 = 5 is the bound d = 5: cut 25 observations and
	 * no steady state. */
	for (int i = 0; i < 50; i++)
		ramp[i] = i;
	REQUIRE(ts_stats_mser5(ramp, 50, &m) == 0);
	CHECK(!m.steady);
	CHECK_I64(m.cut, 25);
	CHECK_I64(ts_stats_mser5(x, 9, &m), TS_EUSAGE);
}

TEST(stats_mser5_upto_caps_the_search)
{
	/* batch means 10, 10, 10, 1, 2, 1, 2, 1, 2, 1 (each batch 5 equal
	 * values). Unbounded (d <= 5): d = 2: mean 2.5, SS 66, / 64 = 1.031;
	 * d = 3: mean 10 / 7, SS = 4 (3/7)^2 + 3 (4/7)^2 = 12/7, / 49 = 0.0350;
	 * d = 4: SS 1.5, / 36 = 0.0417; d = 5: SS 1.2, / 25 = 0.048: d* = 3,
	 * cut 15. Up to d = 1: d = 0: mean 4, SS = 3 * 36 + 4 * 9 + 3 * 4 = 156,
	 * / 100 = 1.56; d = 1: mean 30 / 9, SS = 2 (20/3)^2 + 4 (7/3)^2 +
	 * 3 (4/3)^2 = 116, / 81 = 1.432: d* = 1, cut 5, on the cap (not
	 * steady). */
	static const double z[10] = { 10, 10, 10, 1, 2, 1, 2, 1, 2, 1 };
	double x[50];
	struct ts_mser m;

	for (int i = 0; i < 50; i++)
		x[i] = z[i / 5];
	REQUIRE(ts_stats_mser5(x, 50, &m) == 0);
	CHECK_I64(m.cut, 15);
	CHECK(m.steady);
	REQUIRE(ts_stats_mser5_upto(x, 50, 1, &m) == 0);
	CHECK_I64(m.cut, 5);
	CHECK(!m.steady);
	REQUIRE(ts_stats_mser5_upto(x, 50, 0, &m) == 0);
	CHECK_I64(m.cut, 0);
}

TEST(stats_pelt_finds_constructed_shift)
{
	/* 20 points alternating 0/1, then 20 alternating 10/11. One segment:
	 * var 25.25, cost 40 (ln(2 pi 25.25) + 1) = 242.7. Split at 20: cost
	 * 2 * 20 (ln(2 pi 0.25) + 1) = 58.1 plus penalty 15 ln 40 = 55.3 ->
	 * the split wins, at index 20. */
	double x[40], flat[40];
	size_t cps[4], ncp;

	for (int i = 0; i < 40; i++) {
		x[i] = (i < 20 ? 0 : 10) + (i % 2);
		flat[i] = i % 2;
	}
	REQUIRE(ts_stats_pelt(x, 40, 0, 5, 1e-6, cps, 4, &ncp) == 0);
	CHECK_I64(ncp, 1);
	CHECK_I64(cps[0], 20);
	REQUIRE(ts_stats_pelt(flat, 40, 0, 5, 1e-6, cps, 4, &ncp) == 0);
	CHECK_I64(ncp, 0);
	REQUIRE(ts_stats_pelt(x, 9, 0, 5, 1e-6, cps, 4, &ncp) == 0);
	CHECK_I64(ncp, 0);
	CHECK_I64(ts_stats_pelt(x, 40, 0, 1, 1e-6, cps, 4, &ncp), TS_EUSAGE);
}

TEST(stats_level_shift_merges_small_changes)
{
	/* 100 +- 0.1 then 101 +- 0.1: PELT sees the 1 % change (variance
	 * 0.01), but with rel_delta 2 % it is no level shift; 100 -> 110 is. */
	double x[60];
	size_t cps[4], ncp;

	for (int i = 0; i < 60; i++)
		x[i] = (i < 30 ? 100 : 101) + (i % 2 ? 0.1 : -0.1);
	REQUIRE(ts_stats_pelt(x, 60, 0, 5, 1e-9, cps, 4, &ncp) == 0);
	CHECK_I64(ncp, 1);
	REQUIRE(ts_stats_level_shifts(x, 60, 0.02, 5, 1e-9, cps, 4, &ncp) == 0);
	CHECK_I64(ncp, 0);
	for (int i = 30; i < 60; i++)
		x[i] += 9;
	REQUIRE(ts_stats_level_shifts(x, 60, 0.02, 5, 1e-9, cps, 4, &ncp) == 0);
	CHECK_I64(ncp, 1);
	CHECK_I64(cps[0], 30);
}

TEST(stats_spike_scores_by_hand)
{
	/* h = 1 moving medians: 10.5 10 11 11 11 11 10 11 10 10.5
	 * residuals: -.5 1 -1 0 19 -1 1 -1 1 -.5; median |e| = 1
	 * z_4 = 0.6745 * 19 = 12.8155, z_1 = 0.6745. */
	const double x[] = { 10, 11, 10, 11, 30, 10, 11, 10, 11, 10 };
	double base[10], z[10];

	REQUIRE(ts_stats_spike_scores(x, 10, 1, base, z) == 0);
	CHECK_NEAR(base[0], 10.5, 1e-12);
	CHECK_NEAR(base[4], 11, 1e-12);
	CHECK_NEAR(z[4], 0.6745 * 19, 1e-9);
	CHECK_NEAR(z[1], 0.6745, 1e-9);
	CHECK_NEAR(z[2], -0.6745, 1e-9);
	CHECK_I64(ts_stats_spike_scores(x, 10, 0, base, z), TS_EUSAGE);
}

TEST(stats_rise_ref_by_hand)
{
	/* a falling curve with a spike at 5: 10 8 6 5 4 [9] 3 2.5 2 */
	const double x[] = { 10, 8, 6, 5, 4, 9, 3, 2.5, 2 };

	/* nothing before the first value */
	CHECK(isnan(ts_stats_rise_ref(x, 9, 0, 3)));
	/* i = 1: before {10} -> 10; after {6 5 4} -> 5; max 10 > 8 */
	CHECK_NEAR(ts_stats_rise_ref(x, 9, 1, 3), 10, 1e-12);
	/* i = 3: before {10 8 6} -> 8; after {4 9 3} -> 4; max 8 > 5: no rise */
	CHECK_NEAR(ts_stats_rise_ref(x, 9, 3, 3), 8, 1e-12);
	/* i = 5 (the spike): before {6 5 4} -> 5; after {3 2.5 2} -> 2.5 */
	CHECK_NEAR(ts_stats_rise_ref(x, 9, 5, 3), 5, 1e-12);
	/* i = 7: before {4 9 3} -> 4; after {2} -> 2; h = 2: before {9 3} -> 6 */
	CHECK_NEAR(ts_stats_rise_ref(x, 9, 7, 3), 4, 1e-12);
	CHECK_NEAR(ts_stats_rise_ref(x, 9, 7, 2), 6, 1e-12);
	/* the last value: the before side alone, {3 2.5} and h = 2 -> 2.75 */
	CHECK_NEAR(ts_stats_rise_ref(x, 9, 8, 2), 2.75, 1e-12);
	CHECK(isnan(ts_stats_rise_ref(x, 9, 9, 3)));
	CHECK(isnan(ts_stats_rise_ref(x, 9, 4, 0)));
	CHECK(isnan(ts_stats_rise_ref(x, 9, 4, 17)));
}

/*
 * Reference moving median: copy the clipped window x[i-h .. i+h], sort it
 * with a stable insertion sort (equal values keep their index order, so
 * 0 and -0 come out in a fixed order) and take the middle, or the mean of
 * the two middle values of an even window.
 */
static double ref_window_median(const double *x, size_t n, size_t i, size_t h)
{
	double win[33];
	size_t a = i >= h ? i - h : 0, b = i + h < n ? i + h : n - 1, w = 0;

	for (size_t j = a; j <= b; j++) {
		size_t k = w++;

		while (k > 0 && win[k - 1] > x[j]) {
			win[k] = win[k - 1];
			k--;
		}
		win[k] = x[j];
	}
	return w % 2 ? win[w / 2] : 0.5 * (win[w / 2 - 1] + win[w / 2]);
}

/* The baselines must equal the reference bit for bit (sign of zero, NaN). */
static int baselines_match(const double *x, size_t n, size_t h, double *base)
{
	if (ts_stats_spike_scores(x, n, h, base, NULL))
		return 0;
	for (size_t i = 0; i < n; i++) {
		double want = ref_window_median(x, n, i, h);

		if (memcmp(&want, &base[i], sizeof(want)))
			return 0;
	}
	return 1;
}

TEST(stats_spike_baseline_is_the_moving_median)
{
	/* Values from a handful of levels, so that windows hold many ties,
	 * signed zeros and infinities; lengths below, at and above 2h + 1
	 * (odd windows inside, even ones where a window is clipped). */
	static const double levels[] = { 0.0, -0.0, 1, 2, 2.5, -3, 1e300, INFINITY, -INFINITY };
	double x[200], base[200];
	struct ts_rng rng;
	int ok = 1;

	ts_rng_init(&rng, 42);
	for (size_t h = 1; h <= 16; h++)
		for (size_t n = 1; n <= 200; n += n < 40 ? 1 : 37) {
			for (size_t i = 0; i < n; i++)
				x[i] = ts_rng_below(&rng, 2) ? levels[ts_rng_below(&rng, 9)]
							     : ts_rng_double(&rng);
			ok &= baselines_match(x, n, h, base);
			/* NaN has no place in an order: one to three of them still
			 * give the reference's windows */
			for (uint64_t k = ts_rng_below(&rng, 3); k < 3; k++)
				x[ts_rng_below(&rng, n)] = NAN;
			ok &= baselines_match(x, n, h, base);
		}
	CHECK(ok);
}

TEST(stats_periodic_every_seventh)
{
	/* Spikes at 6, 13, ..., 55 (every 7th, 8 of them) in 60 positions.
	 * Phase 6 of period 7 has ceil(54/7) = 8 slots, all hit: raw tail
	 * 1 / C(60,8); periods 2..20 are tried, 2+3+...+20 = 209 phases, so the
	 * adjusted p-value is 209 / 2558620845. */
	unsigned char f[60] = { 0 };
	struct ts_periodic p;

	for (int i = 6; i < 60; i += 7)
		f[i] = 1;
	REQUIRE(ts_stats_periodic(f, 60, 1000, 0.01, &p) == 0);
	CHECK(p.found);
	CHECK_I64(p.period, 7);
	CHECK_I64(p.phase, 6);
	CHECK_I64(p.hits, 8);
	CHECK_I64(p.slots, 8);
	CHECK_REL(p.p_value, 209.0 / 2558620845.0, 1e-6);
	/* With two stalls missed (70 % rule: 6 of 8 still passes). */
	f[13] = f[41] = 0;
	REQUIRE(ts_stats_periodic(f, 60, 1000, 0.01, &p) == 0);
	CHECK(p.found);
	CHECK_I64(p.period, 7);
	CHECK_I64(p.hits, 6);
}

TEST(stats_periodic_rejects_aperiodic)
{
	/* Doubling gaps 1 2 4 8 16 32: no phase of any period holds 3 hits
	 * at >= 70 % of its slots. */
	unsigned char f[60] = { 0 };
	struct ts_periodic p;

	f[1] = f[2] = f[4] = f[8] = f[16] = f[32] = 1;
	REQUIRE(ts_stats_periodic(f, 60, 1000, 0.01, &p) == 0);
	CHECK(!p.found);
	/* Three spikes in a row: period 2 phase would need 70 % of 30 slots. */
	memset(f, 0, sizeof(f));
	f[20] = f[21] = f[22] = 1;
	REQUIRE(ts_stats_periodic(f, 60, 1000, 0.01, &p) == 0);
	CHECK(!p.found);
}

TEST(stats_periodic_long_period_from_gaps)
{
	/* A checkpoint every 500 steps in 5000: period 500 is beyond the
	 * exhaustive range (65) and must come from the gap candidates. */
	size_t n = 5000;
	unsigned char *f = calloc(n, 1);
	struct ts_periodic p;

	REQUIRE(f);
	for (size_t i = 499; i < n; i += 500)
		f[i] = 1;
	f[1234] = f[2345] = 1; /* two unrelated spikes */
	REQUIRE(ts_stats_periodic(f, n, n, 0.01, &p) == 0);
	CHECK(p.found);
	CHECK_I64(p.period, 500);
	CHECK_I64(p.phase, 499);
	CHECK_I64(p.hits, 10);
	free(f);
}

TEST(stats_periodic_local_hand_computed)
{
	/* x = 10 everywhere, 13 at 2, 7, 12, ..., 57 (period 5, phase 2), plus
	 * +-0.5 alternating noise. Local excess at a stall i (both neighbours
	 * clean): 13 + e_i - (10 + e_{i-1} + 10 + e_{i+1}) / 2 with e alternating,
	 * so e_{i-1} = e_{i+1} = -e_i: d = 3 + 2 e_i = 4 or 2, mean 3 over 12
	 * slots (6 of each), hits (d > 1.5) = 12, excess 36. */
	double x[60];
	struct ts_periodic p;

	for (int i = 0; i < 60; i++)
		x[i] = 10 + (i % 2 ? 0.5 : -0.5) + (i % 5 == 2 ? 3 : 0);
	REQUIRE(ts_stats_periodic_local(x, 60, 16, 0, 0.01, &p) == 0);
	CHECK(p.found);
	CHECK_I64(p.period, 5);
	CHECK_I64(p.phase, 2);
	CHECK_I64(p.slots, 12);
	CHECK_I64(p.hits, 12);
	CHECK_NEAR(p.excess, 36, 1e-9);
	/* Period 10 phase 7 alone (d = 4 exactly, s = 0) has the smaller tail,
	 * but its divisor 5 passes with 12 of 12 slots: the fundamental period
	 * is reported. t = 3 / (s / sqrt 12) with s = sqrt(12 / 11) (d = 3 +- 1)
	 * is 9.95 on 11 df, upper tail about 3.9e-7, times 2 + ... + 16 = 135
	 * pairs: about 5.2e-5. */
	CHECK(p.p_value > 4e-5 && p.p_value < 7e-5);
	/* A materiality floor above the mean excess (3) rejects it. */
	REQUIRE(ts_stats_periodic_local(x, 60, 16, 3.5, 0.01, &p) == 0);
	CHECK(!p.found || p.period != 5);
	CHECK_I64(ts_stats_periodic_local(x, 60, 1, 0, 0.01, &p), TS_EUSAGE);
}

TEST(stats_periodic_local_lone_spikes_and_drift)
{
	/* A linear drift with two huge spikes at the same phase of period 7
	 * (positions 3 and 10): d is 0 on the drift, so the two spikes are the
	 * only positive mean; with 2 of 9 slots they raise s as much as the mean
	 * (t = mean / (s / 3) = 2 / sqrt(7 / 9 ... ) < 2): not a pattern. */
	double x[63];
	struct ts_periodic p;

	for (int i = 0; i < 63; i++)
		x[i] = 100 + 0.5 * i;
	x[3] += 500;
	x[10] += 500;
	REQUIRE(ts_stats_periodic_local(x, 63, 16, 0, 0.01, &p) == 0);
	CHECK(!p.found);
}

TEST(stats_drift_linear_and_flat)
{
	double x[100];
	struct ts_drift d;

	/* x_i = 100 + 0.1 i, i = 1..100: every pairwise slope is 0.1, the
	 * median is (105.0 + 105.1) / 2 = 105.05, so the change is
	 * 0.1 x 100 / 105.05 = 0.095193; the 10 block means rise: S = 45 */
	for (int i = 0; i < 100; i++)
		x[i] = 100 + 0.1 * (i + 1);
	CHECK_I64(ts_stats_drift(x, 100, 0.005, &d), 0);
	CHECK_NEAR(d.change, 10 / 105.05, 1e-12);
	CHECK_I64(d.kendall_s, 45);
	CHECK(d.found);
	/* the same falling: -0.095 (median unchanged), S = -45 */
	for (int i = 0; i < 100; i++)
		x[i] = 100 + 0.1 * (100 - i);
	CHECK_I64(ts_stats_drift(x, 100, 0.005, &d), 0);
	CHECK_NEAR(d.change, -10 / 105.05, 1e-12);
	CHECK_I64(d.kendall_s, -45);
	CHECK(d.found);
	/* 100, 101, 100, 101...: the median pairwise slope is 0 and every
	 * block mean is 100.5 (S = 0): no drift */
	for (int i = 0; i < 100; i++)
		x[i] = 100 + (i % 2);
	CHECK_I64(ts_stats_drift(x, 100, 0.005, &d), 0);
	CHECK_NEAR(d.change, 0, 1e-12);
	CHECK_I64(d.kendall_s, 0);
	CHECK(!d.found);
	/* monotone but immaterial: +0.1 % over the window is under 0.5 % */
	for (int i = 0; i < 100; i++)
		x[i] = 100 + 0.001 * (i + 1);
	CHECK_I64(ts_stats_drift(x, 100, 0.005, &d), 0);
	CHECK_I64(d.kendall_s, 45);
	CHECK(!d.found);
	CHECK_I64(ts_stats_drift(x, 19, 0.005, &d), TS_EUSAGE);
}

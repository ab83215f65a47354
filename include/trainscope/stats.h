/*
 * stats.h - statistics for step-time series: robust centre and spread,
 * quantiles, autocorrelation, confidence intervals that stay honest under
 * autocorrelation, steady-state truncation, changepoints and periodic
 * stalls.
 *
 * Every function is pure: it reads caller-owned double arrays (never
 * modified unless a parameter says so) and writes only its outputs. Where
 * scratch memory is needed the function allocates it and returns TS_ENOMEM
 * on failure; otherwise functions return 0 or TS_EUSAGE for arguments
 * outside the stated domain. Inputs must be finite unless stated; callers
 * drop NaN/Inf steps first. Randomness comes only from struct ts_rng with a
 * caller-given seed, so results are reproducible bit for bit.
 *
 * Definitions, formulas and sources are in docs/steps.md ("Statistics").
 */
#ifndef TRAINSCOPE_STATS_H
#define TRAINSCOPE_STATS_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"

/* ------------------------------------------------------------ moments */

/* Arithmetic mean; NAN when n == 0. */
double ts_stats_mean(const double *x, size_t n);

/* Sample standard deviation (divisor n - 1, two-pass); NAN when n < 2. */
double ts_stats_stddev(const double *x, size_t n);

/* Coefficient of variation = sample stddev / mean; NAN when n < 2 or the
 * mean is 0. A fraction, not a percentage. */
double ts_stats_cv(const double *x, size_t n);

/* ---------------------------------------------------------- quantiles */

/* Sort x[0..n) ascending in place (total order; inputs must be finite). */
void ts_stats_sort(double *x, size_t n);

/*
 * Quantile p in [0, 1] of an ascending array: Hyndman & Fan (1996) type 7,
 * the default of R and NumPy: h = (n - 1) p, Q = x[floor h] +
 * (h - floor h) (x[floor h + 1] - x[floor h]). NAN when n == 0 or p is
 * outside [0, 1].
 */
double ts_stats_quantile_sorted(const double *sorted, size_t n, double p);

/* Type-7 quantiles p[0..np) of unsorted x, written to out[0..np) (NAN for
 * p outside [0, 1]). Works on one copy by selection, O(n) per p.
 * TS_EUSAGE when n == 0. */
int ts_stats_quantiles(const double *x, size_t n, const double *p, size_t np,
		       double *out);

/*
 * Median and raw median absolute deviation MAD = median |x_i - median|
 * (unscaled: the robust sigma of normal data is 1.4826 MAD). TS_EUSAGE when
 * n == 0.
 */
int ts_stats_median_mad(const double *x, size_t n, double *median, double *mad);

/* Modified z-score of Iglewicz & Hoaglin (1993): 0.6745 (x - median) / MAD. */
#define TS_STATS_MODZ_K 0.6745
/* Their outlier threshold on the modified z-score. */
#define TS_STATS_MODZ_OUTLIER 3.5

/* ---------------------------------------------------- distributions */

/* Standard normal quantile (inverse CDF) for p in (0, 1); NAN outside.
 * Acklam's rational approximation refined by one Halley step (|error| <
 * 1e-12). */
double ts_stats_norm_quantile(double p);

/* Student t CDF with df > 0 degrees of freedom (df need not be an integer,
 * as Welch's df is not); via the regularized incomplete beta function. */
double ts_stats_t_cdf(double t, double df);

/* Student t quantile for p in (0, 1), df > 0 (bisection on ts_stats_t_cdf
 * to 1e-12). t_{df, 0.975} is the 95 % two-sided critical value. */
double ts_stats_t_quantile(double p, double df);

/*
 * Upper tail of the hypergeometric distribution: the probability that a
 * draw of m items without replacement from n items of which K are marked
 * contains at least h marked items. Requires K, m <= n. Computed with
 * lgamma, exact to ~1e-12 relative.
 */
double ts_stats_hypergeom_sf(size_t n, size_t K, size_t m, size_t h);

/* ------------------------------------------------------ random numbers */

/* xoshiro256** seeded by splitmix64 (Blackman & Vigna 2018). */
struct ts_rng {
	uint64_t s[4];
};

void ts_rng_init(struct ts_rng *r, uint64_t seed);
uint64_t ts_rng_next(struct ts_rng *r);
/* Uniform integer in [0, bound), bound > 0, without modulo bias (Lemire). */
uint64_t ts_rng_below(struct ts_rng *r, uint64_t bound);
/* Uniform double in [0, 1) with 53 random bits. */
double ts_rng_double(struct ts_rng *r);

/* -------------------------------------------------- autocorrelation */

/*
 * Sample autocorrelation at lag k: sum_{i<n-k} (x_i - m)(x_{i+k} - m) /
 * sum_i (x_i - m)^2 (the usual biased estimator, Box & Jenkins). 1 at lag 0;
 * NAN when n <= k or the series is constant.
 */
double ts_stats_autocorr(const double *x, size_t n, size_t k);

/* Lags beyond this are never summed (keeps the cost O(n) on long runs). */
#define TS_STATS_MAX_LAG 256

struct ts_acf_summary {
	double lag1;          /* rho_1 (NAN when undefined) */
	double tau_int;       /* integrated autocorrelation time, >= 1 */
	double ess;           /* effective sample size n / tau_int */
	size_t lags_used;     /* highest lag summed */
	int truncated;        /* stopped at TS_STATS_MAX_LAG, tau may be low */
};

/*
 * tau_int = 1 + 2 sum_{k>=1} rho_k, summed with Geyer's (1992) initial
 * positive sequence rule: pairs Gamma_m = rho_{2m} + rho_{2m+1} are added
 * while positive. tau_int is clamped to >= 1 (negative correlation is not
 * credited) so ess <= n. A constant series gives tau 1, ess n.
 * TS_EUSAGE when n < 2.
 */
int ts_stats_acf_summary(const double *x, size_t n, struct ts_acf_summary *out);

/* ------------------------------------------- confidence intervals */

enum ts_ci_method {
	TS_CI_NONE = 0,
	TS_CI_BATCH_MEANS,     /* non-overlapping batch means + Student t */
	TS_CI_BLOCK_BOOTSTRAP, /* moving-block bootstrap, percentile */
	TS_CI_AR1              /* AR(1) variance inflation, bias-corrected lag 1 + 1 SE, Student t */
};

struct ts_ci {
	double mean;          /* sample mean of x */
	double lo, hi;        /* interval of the mean at the requested level */
	int method;           /* enum ts_ci_method */
	size_t batches;       /* batch means: k */
	size_t batch_len;     /* batch means: b (observations per batch) */
	double lag1_batches;  /* batch means: lag-1 autocorrelation of the Y_j */
	size_t block_len;     /* bootstrap: l */
	size_t resamples;     /* bootstrap: B */
	int autocorrelated;   /* batch means still correlated (lag1 > 0.2) */
	double lag1;          /* AR(1): the lag-1 autocorrelation used (bias-corrected, plus one standard error) */
};

/* Name of a method ("batch-means", "block-bootstrap", "none"). */
const char *ts_ci_method_name(int method);

/*
 * Non-overlapping batch means (Schmeiser 1982): b = floor(n / k), the first
 * k b observations form k batches, Y_j their means, CI = Ybar +- t_{k-1,
 * (1+level)/2} s_Y / sqrt(k). Note Ybar (reported as mean) drops the n - kb
 * trailing observations. Requires 2 <= k <= n, 0 < level < 1.
 */
int ts_stats_ci_batch_means(const double *x, size_t n, size_t k, double level,
			    struct ts_ci *out);

/*
 * Block length for the block bootstrap of the mean: Politis & White (2004)
 * with the Patton, Politis & White (2009) correction, circular-bootstrap
 * constant D = (4/3) g^2, clipped to [1, min(3 sqrt n, n / 3)]. 1 for
 * n < 3 or a constant series.
 */
size_t ts_stats_block_length(const double *x, size_t n);

/*
 * Moving-block bootstrap (Kunsch 1989) percentile interval of the mean:
 * each of B resamples concatenates ceil(n / l) blocks of l consecutive
 * observations with uniformly random starts in [0, n - l], cut to n; the
 * interval is the type-7 quantiles (1-level)/2 and (1+level)/2 of the B
 * resample means. block_len 0 = ts_stats_block_length(). The same seed
 * gives the same interval. Requires n >= 2, B >= 2.
 */
int ts_stats_ci_block_bootstrap(const double *x, size_t n, size_t block_len,
				size_t resamples, uint64_t seed, double level,
				struct ts_ci *out);

/*
 * The 95 % CI of the mean the steps and A/B commands report (ab-stats A4,
 * case S): batch means with k = 20 (fewer when n < 100 so that b >= 5, at
 * least 2 batches); when the lag-1 autocorrelation of the batch means
 * exceeds 0.2, k = 10; if still above 0.2, or the series is too short for
 * batches (n < 10), a moving-block bootstrap (B = 2000, seed) is used.
 * An AR(1) interval (lag-1 autocorrelation corrected for its small-sample
 * bias and, from n = 10 on, raised by one standard error; t on the effective
 * sample size) is a floor when the corrected lag 1 (before the raise)
 * exceeds TS_STATS_AR1_FLOOR_LAG1, or n < 10: short positively correlated
 * series make the other two too narrow (tests/unit/test_ab_calibration.c).
 * The widest interval computed is reported, centred on the mean of all n
 * values. TS_EUSAGE when n < 2.
 */
#define TS_STATS_AR1_FLOOR_LAG1 0.2
#define TS_STATS_BOOT_RESAMPLES 2000
int ts_stats_ci_mean(const double *x, size_t n, uint64_t seed, struct ts_ci *out);

/* -------------------------------------------------- steady state */

struct ts_mser {
	size_t cut;        /* observations to drop from the front (5 d*) */
	size_t batches;    /* m = floor(n / 5) */
	int steady;        /* 0 when d* > m / 2: no steady state */
};

/*
 * MSER-5 (White 1997): batch means Z_1..Z_m of 5 consecutive observations
 * (a trailing remainder is ignored), statistic(d) = sum_{i>d} (Z_i -
 * Zbar_d)^2 / (m - d)^2, d* = its argmin over 0 <= d <= floor(m / 2)
 * (smallest d on ties) and cut = 5 d*. steady is 0 when d* lands on the
 * bound floor(m / 2): the statistic still falls there, so the rule would
 * drop more than half the data ("no steady state"). Searching only the
 * first half also avoids MSER's known end effect (a few final batches that
 * happen to agree). O(n). TS_EUSAGE when n < 10.
 */
int ts_stats_mser5(const double *x, size_t n, struct ts_mser *out);

/*
 * MSER-5 with d searched over 0 <= d <= max_d only (max_d capped at
 * floor(m / 2)); steady as above, against the cap. TS_EUSAGE when n < 10.
 */
int ts_stats_mser5_upto(const double *x, size_t n, size_t max_d, struct ts_mser *out);

/*
 * Changepoints by PELT (Killick, Fearnhead & Eckley 2012) with the Normal
 * mean-and-variance cost C = m (ln(2 pi s^2) + 1), s^2 the segment's MLE
 * variance floored at var_floor (> 0). penalty <= 0 selects Barrett et al.
 * (2017)'s 15 ln n. Segments are at least min_seg (>= 2) long. Writes the
 * start index of every segment after the first to cps (ascending, at most
 * cap of them, *ncp the total found). Expected O(n); the worst case is
 * O(n^2), so callers reduce long series (e.g. to block means) first.
 * A series shorter than 2 min_seg has no changepoint (*ncp = 0).
 * TS_EUSAGE when min_seg < 2 or var_floor <= 0.
 */
int ts_stats_pelt(const double *x, size_t n, double penalty, size_t min_seg,
		  double var_floor, size_t *cps, size_t cap, size_t *ncp);

/*
 * Level shifts: PELT as above, then adjacent segments whose means differ by
 * less than rel_delta times the smaller mean are merged (a change too small
 * to matter is not a shift), then, one at a time, the shift whose mean
 * difference is the fewest standard errors while that is below
 * TS_SHIFT_Z: the standard error of the difference of means n_a and n_b
 * long is sqrt(s^2 tau (1/n_a + 1/n_b)), s^2 the residual variance about
 * the segments' means and tau their integrated autocorrelation time
 * (ts_stats_acf_summary), both measured again after each merge. PELT's
 * cost assumes independent points; a slowly wandering series (lag-1
 * autocorrelation 0.9 and more) gives it runs of higher and lower
 * steps that are no shift. Output as ts_stats_pelt.
 */
#define TS_SHIFT_Z 4.0
int ts_stats_level_shifts(const double *x, size_t n, double rel_delta,
			  size_t min_seg, double var_floor, size_t *cps,
			  size_t cap, size_t *ncp);

/* ------------------------------------------------------ spikes and stalls */

/*
 * Robust spike scores against a moving baseline: base_i = median of
 * x[i-h .. i+h] (clipped at the ends), e_i = x_i - base_i, s = median |e_i|
 * and z_i = 0.6745 e_i / s, the modified z-score of Iglewicz & Hoaglin
 * applied to the detrended residual (the moving median follows slow drift
 * and level shifts, which a global median would count as spikes). s is
 * floored at 1e-9 times the mean |x| (1e-300 for an all-zero series).
 * Writes base and z (n each; either may be NULL, neither may overlap x).
 * 1 <= h <= 16.
 * TS_EUSAGE when n == 0 or h is out of range.
 */
int ts_stats_spike_scores(const double *x, size_t n, size_t h, double *base,
			  double *z);

/*
 * The level a point must rise above to be a spike on a trending series:
 * the larger of the median of the up to h points before x[i] and the
 * median of the up to h points after it (the after side is left out at the
 * series' end). On a monotone curve x_i lies between the two, so a point
 * of a smoothly falling loss is never above both, however steep, while a
 * spike on it still is; the clipped centred median of
 * ts_stats_spike_scores sits below the first points of a falling curve and
 * calls them spikes. NAN when i == 0 (nothing before: the first value
 * cannot be told from the curve's start) or i >= n. 1 <= h <= 16.
 */
double ts_stats_rise_ref(const double *x, size_t n, size_t i, size_t h);

struct ts_periodic {
	int found;          /* the best candidate passed the test */
	size_t period;      /* in index units */
	size_t phase;       /* index mod period of the stalled positions */
	size_t hits;        /* flagged positions with that phase */
	size_t slots;       /* positions with that phase in [0, n) */
	double p_value;     /* Bonferroni-adjusted (hypergeometric tail, or t tail) */
	double excess;      /* ts_stats_periodic_local: sum of positive local excess
			     * over the slots, in the units of x; 0 otherwise */
};

/*
 * Periodic stalls: given spike flags f[0..n) (nonzero = spike), find the
 * period p and phase r such that the positions i = r (mod p) are spikes
 * more often than chance. For each candidate (p, r) with m slots and h hits
 * the test needs h >= 3 and h >= 0.7 m; its p-value is the hypergeometric
 * tail P(X >= h) for m draws from n with K = sum f marked, multiplied by
 * the number of (p, r) pairs tried (Bonferroni). Candidates: every p in
 * [2, min(max_period, n / 3, 65)], plus, when longer periods are
 * allowed, the 32 most frequent gaps above 65 between a spike and the next
 * or next-but-one spike. The smallest adjusted p-value wins (smaller p on ties);
 * found = p_value < alpha. Cost O(candidates (K + p)).
 */
int ts_stats_periodic(const unsigned char *f, size_t n, size_t max_period,
		      double alpha, struct ts_periodic *out);

/*
 * Periodic stalls tested on the values themselves, for short periods.
 * For each period p in [2, min(max_period, n / 3)] and phase r, the local
 * excess d_j = x_i - (x_{i-1} + x_{i+1}) / 2 at the positions i = r + j p
 * (x_0 - x_1 and x_{n-1} - x_{n-2} at the ends): a stall every p steps
 * stands above both neighbours, which
 * belong to other phases, while drift, level shifts and autocorrelated
 * noise largely cancel. With m >= 4 such slots, mean d >= min_excess (a
 * materiality floor in the units of x) and sample SD s
 * (floored at 1e-12 times the mean |x|), t = mean / (s / sqrt(m)) is
 * tested one-sided on m - 1 df; the p-value (exact upper t tail) times
 * the (p, r) pairs tried is Bonferroni-adjusted. The smallest adjusted
 * p-value wins (smaller period on ties), then gives way to the smallest
 * divisor q of its period whose phase passes on its own with a mean
 * excess of at least 3/4 of the winner's (the fundamental period);
 * found = p_value < alpha. A lone spike at one phase cannot pass (it
 * raises s as much as the mean).
 * Fills period, phase, slots = m, hits = slots with d_j > mean / 2 and
 * excess = sum of max(d_j, 0). Cost O(n * max_period). TS_EUSAGE when
 * max_period < 2.
 */
int ts_stats_periodic_local(const double *x, size_t n, size_t max_period, double min_excess,
			    double alpha, struct ts_periodic *out);

/* ---------------------------------------------------------- drift */

/* A slow trend over a window (ab-stats A4 step 1.4). */
struct ts_drift {
	double change;   /* Theil-Sen slope x steps / median: the relative change
			  * from the window's start to its end (0.03 = +3 %) */
	int kendall_s;   /* Mann-Kendall S of the 10 block means (-45..45) */
	int found;       /* |change| > min_change and |S| >= 30 (two-sided
			  * p < 0.01 on the block means) */
};

/*
 * Drift of x[0..n) (n >= 20, finite, positive median): the Theil-Sen slope
 * (median of the pairwise slopes; on up to 512 block means when n is
 * larger, each at its block's centre) times n over the median, and a
 * Mann-Kendall test on 10 equal block means, which tames autocorrelation
 * the way batch means do: a trend counts when it is both material
 * (min_change, a fraction) and monotone across the blocks. Returns 0,
 * TS_EUSAGE when n < 20, TS_ENOMEM.
 */
int ts_stats_drift(const double *x, size_t n, double min_change, struct ts_drift *out);

#endif

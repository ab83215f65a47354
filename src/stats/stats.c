/*
 * stats.c - the numbers behind "how fast is it really?".
 *
 * Step times of a training run are short, noisy, drifting and
 * autocorrelated series with warm-up at the front and stalls sprinkled in.
 * The textbook iid formulas give intervals that are too narrow and call
 * every hiccup a regression. This module collects the few procedures the
 * benchmarking and simulation-output literature uses for such series
 * (docs/steps.md lists the sources) as small pure functions over double
 * arrays, shared by `steps` and the A/B verdict.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/stats.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ------------------------------------------------------------ moments */

double ts_stats_mean(const double *x, size_t n)
{
	double s = 0;

	if (n == 0)
		return NAN;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

double ts_stats_stddev(const double *x, size_t n)
{
	double m, ss = 0;

	if (n < 2)
		return NAN;
	m = ts_stats_mean(x, n);
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - m) * (x[i] - m);
	return sqrt(ss / (double)(n - 1));
}

double ts_stats_cv(const double *x, size_t n)
{
	double m;

	if (n < 2)
		return NAN;
	m = ts_stats_mean(x, n);
	if (m == 0)
		return NAN;
	return ts_stats_stddev(x, n) / fabs(m);
}

/* ---------------------------------------------------------- quantiles */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void ts_stats_sort(double *x, size_t n)
{
	if (n > 1)
		ts_sort(x, n, sizeof(*x), cmp_double);
}

double ts_stats_quantile_sorted(const double *sorted, size_t n, double p)
{
	double h, f;
	size_t lo;

	if (n == 0 || !(p >= 0 && p <= 1))
		return NAN;
	h = (double)(n - 1) * p;
	f = floor(h);
	lo = (size_t)f;
	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (h - f) * (sorted[lo + 1] - sorted[lo]);
}

static void swap_d(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

/*
 * The k-th smallest of a[0..n) (a is reordered): quickselect with a
 * median-of-three pivot, falling back to a full sort after 2 log2 n rounds
 * so that no input makes it quadratic.
 */
static double select_k(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1, rounds = 0, limit = 2;

	for (size_t m = n; m > 1; m >>= 1)
		limit += 2;
	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, i, j;
		double pivot;

		if (++rounds > limit) {
			ts_stats_sort(a + lo, hi - lo + 1);
			return a[k];
		}
		if (a[mid] < a[lo])
			swap_d(&a[mid], &a[lo]);
		if (a[hi] < a[lo])
			swap_d(&a[hi], &a[lo]);
		if (a[hi] < a[mid])
			swap_d(&a[hi], &a[mid]);
		pivot = a[mid];
		i = lo;
		j = hi;
		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				swap_d(&a[i], &a[j]);
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return a[k];
	}
	return a[k];
}

/* Type-7 quantile of a[0..n) by selection (a is reordered). */
static double quantile_select(double *a, size_t n, double p)
{
	double h = (double)(n - 1) * p, f = floor(h), lo, next;
	size_t k = (size_t)f;

	lo = select_k(a, n, k);
	if (k + 1 >= n || h == f)
		return lo;
	next = a[k + 1];
	for (size_t i = k + 2; i < n; i++)
		if (a[i] < next)
			next = a[i];
	return lo + (h - f) * (next - lo);
}

int ts_stats_quantiles(const double *x, size_t n, const double *p, size_t np,
		       double *out)
{
	double *c;

	if (n == 0)
		return TS_EUSAGE;
	c = malloc(n * sizeof(*c));
	if (!c)
		return TS_ENOMEM;
	memcpy(c, x, n * sizeof(*c));
	/* Selection works on any permutation, so one copy serves every p. */
	for (size_t i = 0; i < np; i++)
		out[i] = p[i] >= 0 && p[i] <= 1 ? quantile_select(c, n, p[i]) : NAN;
	free(c);
	return 0;
}

int ts_stats_median_mad(const double *x, size_t n, double *median, double *mad)
{
	double *c, med;

	if (n == 0)
		return TS_EUSAGE;
	c = malloc(n * sizeof(*c));
	if (!c)
		return TS_ENOMEM;
	memcpy(c, x, n * sizeof(*c));
	med = quantile_select(c, n, 0.5);
	if (median)
		*median = med;
	if (mad) {
		for (size_t i = 0; i < n; i++)
			c[i] = fabs(x[i] - med);
		*mad = quantile_select(c, n, 0.5);
	}
	free(c);
	return 0;
}

/* ---------------------------------------------------- distributions */

double ts_stats_norm_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
		-2.759285104469687e+02, 1.383577518672690e+02,
		-3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
		-1.556989798598866e+02, 6.680131188771972e+01,
		-1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
		-2.400758277161838e+00, -2.549732539343734e+00,
		4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
		2.445134137142996e+00, 3.754408661907416e+00 };
	const double plow = 0.02425;
	double q, r, x, e, u;

	if (!(p > 0 && p < 1))
		return NAN;
	if (p < plow) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p <= 1 - plow) {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	} else {
		q = sqrt(-2 * log(1 - p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	/* One Halley step on Phi(x) - p. */
	e = 0.5 * erfc(-x / sqrt(2.0)) - p;
	u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

/* Continued fraction of the incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-15;
	double qab = a + b, qap = a + 1, qam = a - 1;
	double c = 1, d = 1 - qab * x / qap, h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 500; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

/* Regularized incomplete beta I_x(a, b). */
static double beta_inc(double a, double b, double x)
{
	double lbt;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lbt) * beta_cf(a, b, x) / a;
	return 1 - exp(lbt) * beta_cf(b, a, 1 - x) / b;
}

double ts_stats_t_cdf(double t, double df)
{
	double tail;

	if (!(df > 0) || isnan(t))
		return NAN;
	if (isinf(t))
		return t > 0 ? 1 : 0;
	tail = 0.5 * beta_inc(df / 2, 0.5, df / (df + t * t));
	return t > 0 ? 1 - tail : tail;
}

double ts_stats_t_quantile(double p, double df)
{
	double lo, hi;

	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p == 0.5)
		return 0;
	if (p < 0.5)
		return -ts_stats_t_quantile(1 - p, df);
	lo = 0;
	hi = 1;
	while (ts_stats_t_cdf(hi, df) < p && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 400 && hi - lo > 1e-12 * (1 + hi); i++) {
		double mid = 0.5 * (lo + hi);

		if (ts_stats_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

static double lchoose(double n, double k)
{
	return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}

double ts_stats_hypergeom_sf(size_t n, size_t K, size_t m, size_t h)
{
	size_t jmin, jmax, j;
	double term, sum;

	if (K > n || m > n)
		return NAN;
	jmin = K + m > n ? K + m - n : 0; /* smallest possible count */
	jmax = K < m ? K : m;
	if (h <= jmin)
		return 1;
	if (h > jmax)
		return 0;
	j = h;
	term = exp(lchoose((double)K, (double)j) + lchoose((double)(n - K), (double)(m - j)) -
		   lchoose((double)n, (double)m));
	sum = 0;
	for (;;) {
		sum += term;
		if (j == jmax || term < sum * 1e-17)
			break;
		/* pmf(j + 1) / pmf(j) */
		term *= (double)(K - j) * (double)(m - j) /
			((double)(j + 1) * (double)(n - K - m + j + 1));
		j++;
	}
	return sum > 1 ? 1 : sum;
}

/* ------------------------------------------------------ random numbers */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void ts_rng_init(struct ts_rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t ts_rng_next(struct ts_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t ts_rng_below(struct ts_rng *r, uint64_t bound)
{
	unsigned __int128 m = (unsigned __int128)ts_rng_next(r) * bound;
	uint64_t low = (uint64_t)m;

	if (low < bound) {
		uint64_t threshold = -bound % bound;

		while (low < threshold) {
			m = (unsigned __int128)ts_rng_next(r) * bound;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double ts_rng_double(struct ts_rng *r)
{
	return (double)(ts_rng_next(r) >> 11) * 0x1.0p-53;
}

/* -------------------------------------------------- autocorrelation */

/* Centred sum of squares and the autocovariance sums share this. */
static double sum_sq_dev(const double *x, size_t n, double m)
{
	double ss = 0;

	for (size_t i = 0; i < n; i++)
		ss += (x[i] - m) * (x[i] - m);
	return ss;
}

static double lag_sum(const double *x, size_t n, double m, size_t k)
{
	double s = 0;

	for (size_t i = 0; i + k < n; i++)
		s += (x[i] - m) * (x[i + k] - m);
	return s;
}

double ts_stats_autocorr(const double *x, size_t n, size_t k)
{
	double m, den;

	if (n <= k || n == 0)
		return NAN;
	m = ts_stats_mean(x, n);
	den = sum_sq_dev(x, n, m);
	if (den == 0)
		return NAN;
	return lag_sum(x, n, m, k) / den;
}

int ts_stats_acf_summary(const double *x, size_t n, struct ts_acf_summary *out)
{
	double m, den, tau = 1;
	size_t k = 0;

	if (n < 2)
		return TS_EUSAGE;
	memset(out, 0, sizeof(*out));
	m = ts_stats_mean(x, n);
	den = sum_sq_dev(x, n, m);
	if (den == 0) {
		out->lag1 = NAN;
		out->tau_int = 1;
		out->ess = (double)n;
		return 0;
	}
	out->lag1 = lag_sum(x, n, m, 1) / den;
	/* Geyer: Gamma_j = rho_{2j} + rho_{2j+1}; tau = -1 + 2 sum Gamma_j. */
	tau = -1;
	for (size_t j = 0;; j++) {
		size_t a = 2 * j, b = 2 * j + 1;
		double ra, rb, g;

		if (b >= n || b > TS_STATS_MAX_LAG) {
			out->truncated = b > TS_STATS_MAX_LAG && b < n;
			break;
		}
		ra = a == 0 ? 1 : lag_sum(x, n, m, a) / den;
		rb = lag_sum(x, n, m, b) / den;
		g = ra + rb;
		if (g <= 0)
			break;
		tau += 2 * g;
		k = b;
	}
	if (tau < 1)
		tau = 1;
	out->tau_int = tau;
	out->ess = (double)n / tau;
	out->lags_used = k;
	return 0;
}

/* ------------------------------------------- confidence intervals */

const char *ts_ci_method_name(int method)
{
	switch (method) {
	case TS_CI_BATCH_MEANS:
		return "batch-means";
	case TS_CI_BLOCK_BOOTSTRAP:
		return "block-bootstrap";
	case TS_CI_AR1:
		return "ar1";
	default:
		return "none";
	}
}

int ts_stats_ci_batch_means(const double *x, size_t n, size_t k, double level,
			    struct ts_ci *out)
{
	size_t b;
	double *y, ybar, sd, t;

	if (k < 2 || k > n || !(level > 0 && level < 1))
		return TS_EUSAGE;
	b = n / k;
	y = malloc(k * sizeof(*y));
	if (!y)
		return TS_ENOMEM;
	for (size_t j = 0; j < k; j++)
		y[j] = ts_stats_mean(x + j * b, b);
	ybar = ts_stats_mean(y, k);
	sd = ts_stats_stddev(y, k);
	t = ts_stats_t_quantile(0.5 + level / 2, (double)(k - 1));
	memset(out, 0, sizeof(*out));
	out->mean = ybar;
	out->lo = ybar - t * sd / sqrt((double)k);
	out->hi = ybar + t * sd / sqrt((double)k);
	out->method = TS_CI_BATCH_MEANS;
	out->batches = k;
	out->batch_len = b;
	out->lag1_batches = k > 2 ? ts_stats_autocorr(y, k, 1) : NAN;
	free(y);
	return 0;
}

size_t ts_stats_block_length(const double *x, size_t n)
{
	double m, c, r0, g, G = 0, D, l, cap;
	size_t kn, mhat = 0, run = 0, maxlag, M, have;
	double *r;

	if (n < 3)
		return 1;
	m = ts_stats_mean(x, n);
	maxlag = n - 1 < TS_STATS_MAX_LAG ? n - 1 : TS_STATS_MAX_LAG;
	r = malloc((maxlag + 1) * sizeof(*r));
	if (!r)
		return (size_t)ceil(cbrt((double)n));
	r0 = r[0] = sum_sq_dev(x, n, m) / (double)n; /* autocovariance R(0) */
	if (r0 == 0) {
		free(r);
		return 1;
	}
	kn = (size_t)ceil(sqrt(log10((double)n)));
	if (kn < 5)
		kn = 5;
	c = 2 * sqrt(log10((double)n) / (double)n);
	/* m-hat: the smallest k after which kn consecutive |rho| < c. Lags are
	 * computed only as far as the rule looks. */
	have = 0;
	for (size_t k = 1; k <= maxlag; k++) {
		r[k] = lag_sum(x, n, m, k) / (double)n;
		have = k;
		if (fabs(r[k] / r0) < c) {
			if (++run == kn)
				break;
		} else {
			run = 0;
			mhat = k;
		}
	}
	M = 2 * mhat;
	if (M > maxlag)
		M = maxlag;
	for (size_t k = have + 1; k <= M; k++)
		r[k] = lag_sum(x, n, m, k) / (double)n;
	g = r0;
	for (size_t k = 1; k <= M; k++) {
		double t = (double)k / (double)M, lam;

		lam = t <= 0.5 ? 1 : 2 * (1 - t);
		g += 2 * lam * r[k];
		G += 2 * lam * (double)k * r[k];
	}
	free(r);
	D = 4.0 / 3.0 * g * g;
	l = D > 0 ? cbrt(2 * G * G / D) * cbrt((double)n) : 1;
	cap = 3 * sqrt((double)n);
	if ((double)n / 3 < cap)
		cap = (double)n / 3;
	if (l > cap)
		l = cap;
	if (!(l >= 1))
		l = 1;
	return (size_t)ceil(l);
}

int ts_stats_ci_block_bootstrap(const double *x, size_t n, size_t block_len,
				size_t resamples, uint64_t seed, double level,
				struct ts_ci *out)
{
	double *pre = NULL, *means = NULL;
	size_t l, nblocks;
	struct ts_rng rng;
	int rc = TS_ENOMEM;

	if (n < 2 || resamples < 2 || !(level > 0 && level < 1))
		return TS_EUSAGE;
	l = block_len ? block_len : ts_stats_block_length(x, n);
	if (l > n)
		l = n;
	nblocks = (n + l - 1) / l;
	pre = malloc((n + 1) * sizeof(*pre));
	means = malloc(resamples * sizeof(*means));
	if (!pre || !means)
		goto out;
	pre[0] = 0;
	for (size_t i = 0; i < n; i++)
		pre[i + 1] = pre[i] + x[i];
	ts_rng_init(&rng, seed);
	for (size_t b = 0; b < resamples; b++) {
		double s = 0;
		size_t left = n;

		for (size_t j = 0; j < nblocks; j++) {
			size_t start = (size_t)ts_rng_below(&rng, n - l + 1);
			size_t take = left < l ? left : l;

			s += pre[start + take] - pre[start];
			left -= take;
		}
		means[b] = s / (double)n;
	}
	ts_stats_sort(means, resamples);
	memset(out, 0, sizeof(*out));
	out->mean = pre[n] / (double)n;
	out->lo = ts_stats_quantile_sorted(means, resamples, 0.5 - level / 2);
	out->hi = ts_stats_quantile_sorted(means, resamples, 0.5 + level / 2);
	out->method = TS_CI_BLOCK_BOOTSTRAP;
	out->block_len = l;
	out->resamples = resamples;
	out->lag1_batches = NAN;
	rc = 0;
out:
	free(pre);
	free(means);
	return rc;
}

/*
 * The AR(1) interval: Var(mean) = s^2 / n * (1 + r) / (1 - r), and Student
 * t on the effective sample size n (1 - r) / (1 + r). r is the lag-1
 * autocorrelation corrected for its small-sample bias, E[r^] ~ r -
 * (1 + 3 r) / n (Kendall 1954; Marriott & Pope 1954), then, from 10
 * values on, raised by one standard error of r^, sqrt((1 - r^2) / n)
 * (Bartlett): the variance
 * factor is convex and steep near 1, so a plug-in of the point estimate
 * is too narrow whenever r^ falls short, and at a true lag 1 of 0.9 over
 * 60-120 steps such intervals held the mean in only 90-92 % of series
 * (95-97 % with the raised r; tests/unit/test_ab_calibration.c). Under
 * 10 values r^ says almost nothing and one standard error (>= 0.32) would
 * put every interval at the 0.95 cap, four times wider at no correlation:
 * the few steps of a profiler trace keep the point estimate. Short
 * series are where batch means (too few, too short batches) and the block
 * bootstrap (percentile intervals) are both too narrow; this floor keeps
 * their coverage. It applies when the corrected point estimate (*point)
 * exceeds TS_STATS_AR1_FLOOR_LAG1: below that, batches of >= 5 steps
 * already hold > 95 % of the AR(1) standard error, and a series with
 * periodic stalls (negative lag 1, a fixed stall count per window) is
 * better served by batch means than by an AR(1) model that cannot credit
 * the negative correlation.
 */
static void ci_ar1(const double *x, size_t n, double mean, struct ts_ci *out, double *point)
{
	double r = ts_stats_autocorr(x, n, 1), sd = ts_stats_stddev(x, n), ess, half;

	if (!isfinite(r))
		r = 0;
	r += (1 + 3 * r) / (double)n;
	if (r < 0)
		r = 0;
	if (r > 0.95)
		r = 0.95;
	*point = r;
	if (n >= 10)
		r += sqrt((1 - r * r) / (double)n);
	if (r > 0.95)
		r = 0.95;
	ess = (double)n * (1 - r) / (1 + r);
	half = ts_stats_t_quantile(0.975, ess > 2 ? ess - 1 : 1) * sd *
	       sqrt((1 + r) / (1 - r) / (double)n);
	memset(out, 0, sizeof(*out));
	out->mean = mean;
	out->lo = mean - half;
	out->hi = mean + half;
	out->method = TS_CI_AR1;
	out->lag1 = r;
}

/* Keep the wider of *best and c; batch-means diagnostics stay attached. */
static void keep_wider(struct ts_ci *best, const struct ts_ci *c)
{
	if (c->hi - c->lo > best->hi - best->lo) {
		struct ts_ci keep = *best;
		*best = *c;
		best->batches = keep.batches;
		best->batch_len = keep.batch_len;
		best->lag1_batches = keep.lag1_batches;
		best->autocorrelated = keep.autocorrelated;
		if (c->method != TS_CI_BLOCK_BOOTSTRAP) {
			best->block_len = keep.block_len;
			best->resamples = keep.resamples;
		}
	}
}

int ts_stats_ci_mean(const double *x, size_t n, uint64_t seed, struct ts_ci *out)
{
	struct ts_ci bm, bb, ar;
	size_t k;
	int rc;
	double mean, lag1;

	if (n < 2)
		return TS_EUSAGE;
	mean = ts_stats_mean(x, n);
	if (n >= 10) {
		k = n >= 100 ? 20 : n / 5;
		rc = ts_stats_ci_batch_means(x, n, k, 0.95, &bm);
		if (rc)
			return rc;
		if (bm.lag1_batches > 0.2 && k > 10) {
			rc = ts_stats_ci_batch_means(x, n, 10, 0.95, &bm);
			if (rc)
				return rc;
		}
		bm.autocorrelated = bm.lag1_batches > 0.2;
		/* batch means stand for the run's centre; keep their width around
		 * the full mean */
		bm.lo += mean - bm.mean;
		bm.hi += mean - bm.mean;
		bm.mean = mean;
		*out = bm;
	}
	if (n < 10 || bm.autocorrelated) {
		rc = ts_stats_ci_block_bootstrap(x, n, 0, TS_STATS_BOOT_RESAMPLES, seed, 0.95, &bb);
		if (rc)
			return rc;
		bb.mean = mean;
		if (n >= 10)
			keep_wider(out, &bb);
		else
			*out = bb;
	}
	/* a percentile bootstrap of < 10 values is no interval: the floor
	 * always applies there */
	ci_ar1(x, n, mean, &ar, &lag1);
	if (n < 10 || lag1 > TS_STATS_AR1_FLOOR_LAG1)
		keep_wider(out, &ar);
	return 0;
}

/* -------------------------------------------------- steady state */

int ts_stats_mser5(const double *x, size_t n, struct ts_mser *out)
{
	return ts_stats_mser5_upto(x, n, SIZE_MAX, out);
}

int ts_stats_mser5_upto(const double *x, size_t n, size_t max_d, struct ts_mser *out)
{
	size_t m = n / 5, half, best = 0;
	double *z, s1 = 0, s2 = 0, ref, best_v = INFINITY;

	if (n < 10)
		return TS_EUSAGE;
	z = malloc(m * sizeof(*z));
	if (!z)
		return TS_ENOMEM;
	for (size_t i = 0; i < m; i++)
		z[i] = ts_stats_mean(x + 5 * i, 5);
	ref = ts_stats_mean(z, m); /* centring keeps the suffix sums exact-ish */
	half = m / 2 < max_d ? m / 2 : max_d;
	/* Walk d from m - 1 down to 0 accumulating suffix sums. */
	for (size_t d = m; d-- > 0;) {
		double v = z[d] - ref, cnt, ss, stat;

		s1 += v;
		s2 += v * v;
		if (d > half)
			continue;
		cnt = (double)(m - d);
		ss = s2 - s1 * s1 / cnt;
		if (ss < 0)
			ss = 0;
		stat = ss / (cnt * cnt);
		if (d <= half && stat <= best_v) {
			best_v = stat;
			best = d;
		}
	}
	free(z);
	out->cut = 5 * best;
	out->batches = m;
	out->steady = best < half;
	return 0;
}

/* Prefix sums of (x - ref) and its square for O(1) segment costs. */
struct seg_sums {
	double *s1, *s2;
	double floor_var;
};

static double seg_cost(const struct seg_sums *ss, size_t a, size_t b)
{
	double m = (double)(b - a);
	double s1 = ss->s1[b] - ss->s1[a], s2 = ss->s2[b] - ss->s2[a];
	double var = (s2 - s1 * s1 / m) / m;

	if (var < ss->floor_var)
		var = ss->floor_var;
	return m * (log(2 * M_PI * var) + 1);
}

static int seg_sums_init(struct seg_sums *ss, const double *x, size_t n, double floor_var)
{
	double ref = ts_stats_mean(x, n);

	ss->s1 = malloc((n + 1) * sizeof(double));
	ss->s2 = malloc((n + 1) * sizeof(double));
	ss->floor_var = floor_var;
	if (!ss->s1 || !ss->s2)
		return TS_ENOMEM;
	ss->s1[0] = ss->s2[0] = 0;
	for (size_t i = 0; i < n; i++) {
		double v = x[i] - ref;

		ss->s1[i + 1] = ss->s1[i] + v;
		ss->s2[i + 1] = ss->s2[i] + v * v;
	}
	return 0;
}

static void seg_sums_release(struct seg_sums *ss)
{
	free(ss->s1);
	free(ss->s2);
	ss->s1 = ss->s2 = NULL;
}

int ts_stats_pelt(const double *x, size_t n, double penalty, size_t min_seg,
		  double var_floor, size_t *cps, size_t cap, size_t *ncp)
{
	struct seg_sums ss = { 0 };
	double *F = NULL;
	size_t *last = NULL, *cand = NULL, ncand = 0, found = 0;
	int rc = TS_ENOMEM;

	if (min_seg < 2 || !(var_floor > 0))
		return TS_EUSAGE;
	*ncp = 0;
	if (n < 2 * min_seg)
		return 0;
	if (!(penalty > 0))
		penalty = 15 * log((double)n);
	F = malloc((n + 1) * sizeof(*F));
	last = malloc((n + 1) * sizeof(*last));
	cand = malloc((n + 1) * sizeof(*cand));
	if (!F || !last || !cand || seg_sums_init(&ss, x, n, var_floor))
		goto out;
	F[0] = -penalty;
	cand[ncand++] = 0;
	for (size_t t = min_seg; t <= n; t++) {
		double best = INFINITY;
		size_t arg = 0, keep = 0;

		if (t >= 2 * min_seg)
			cand[ncand++] = t - min_seg;
		for (size_t i = 0; i < ncand; i++) {
			double v = F[cand[i]] + seg_cost(&ss, cand[i], t) + penalty;

			if (v < best) {
				best = v;
				arg = cand[i];
			}
		}
		F[t] = best;
		last[t] = arg;
		/* Prune: a tau that cannot beat F(t) now never will (K = 0). */
		for (size_t i = 0; i < ncand; i++)
			if (F[cand[i]] + seg_cost(&ss, cand[i], t) <= F[t])
				cand[keep++] = cand[i];
		ncand = keep;
	}
	/* Backtrack from n; collect changepoints in reverse, then flip. */
	for (size_t t = last[n]; t > 0; t = last[t])
		found++;
	*ncp = found;
	{
		size_t i = found;

		for (size_t t = last[n]; t > 0; t = last[t]) {
			i--;
			if (i < cap)
				cps[i] = t;
		}
	}
	rc = 0;
out:
	seg_sums_release(&ss);
	free(F);
	free(last);
	free(cand);
	return rc;
}

/* Mean of x[bounds[k] .. bounds[k + 1]) from the prefix sums pre. */
static double seg_mean(const double *pre, const size_t *bounds, size_t k)
{
	return (pre[bounds[k + 1]] - pre[bounds[k]]) / (double)(bounds[k + 1] - bounds[k]);
}

/*
 * The boundary (1 .. nb - 2 of bounds[0 .. nb)) whose shift stands least
 * out of the series' noise, with its z; z is |mean difference| over the
 * standard error of that difference when the noise is autocorrelated:
 * s^2 tau (1/n_a + 1/n_b), s^2 and tau (Geyer's tau_int) from the
 * residuals about the segments' means. r is scratch of n doubles.
 */
static int weakest_shift(const double *x, const double *pre, const size_t *bounds, size_t nb,
			 double *r, size_t *at, double *zmin)
{
	struct ts_acf_summary acf;
	double ss = 0, var;
	size_t n = bounds[nb - 1];
	int rc;

	for (size_t k = 0; k + 1 < nb; k++) {
		double m = seg_mean(pre, bounds, k);

		for (size_t i = bounds[k]; i < bounds[k + 1]; i++) {
			r[i] = x[i] - m;
			ss += r[i] * r[i];
		}
	}
	rc = ts_stats_acf_summary(r, n, &acf);
	if (rc)
		return rc;
	var = n > nb - 1 ? ss / (double)(n - (nb - 1)) : 0;
	*zmin = INFINITY;
	*at = 0;
	for (size_t k = 1; k + 1 < nb; k++) {
		double na = (double)(bounds[k] - bounds[k - 1]), nbk = (double)(bounds[k + 1] - bounds[k]);
		double se = sqrt(var * acf.tau_int * (1 / na + 1 / nbk));
		double d = fabs(seg_mean(pre, bounds, k - 1) - seg_mean(pre, bounds, k));
		double z = se > 0 ? d / se : (d > 0 ? INFINITY : 0);

		if (z < *zmin) {
			*zmin = z;
			*at = k;
		}
	}
	return 0;
}

int ts_stats_level_shifts(const double *x, size_t n, double rel_delta,
			  size_t min_seg, double var_floor, size_t *cps,
			  size_t cap, size_t *ncp)
{
	size_t found = 0, *all = NULL, *bounds = NULL, nb, out_n = 0;
	double *pre = NULL, *r = NULL;
	int rc;

	rc = ts_stats_pelt(x, n, 0, min_seg, var_floor, NULL, 0, &found);
	if (rc)
		return rc;
	*ncp = 0;
	if (found == 0)
		return 0;
	rc = TS_ENOMEM;
	all = malloc(found * sizeof(*all));
	bounds = malloc((found + 2) * sizeof(*bounds));
	pre = malloc((n + 1) * sizeof(*pre));
	r = malloc(n * sizeof(*r));
	if (!all || !bounds || !pre || !r)
		goto out;
	rc = ts_stats_pelt(x, n, 0, min_seg, var_floor, all, found, &found);
	if (rc)
		goto out;
	pre[0] = 0;
	for (size_t i = 0; i < n; i++)
		pre[i + 1] = pre[i] + x[i];
	/* Greedy left-to-right merge of segments whose means are within delta. */
	nb = 0;
	bounds[nb++] = 0;
	for (size_t i = 0; i < found; i++) {
		size_t a = bounds[nb - 1], b = all[i];
		size_t c = i + 1 < found ? all[i + 1] : n;
		double ma = (pre[b] - pre[a]) / (double)(b - a);
		double mb = (pre[c] - pre[b]) / (double)(c - b);
		double lo = fmin(fabs(ma), fabs(mb));

		if (fabs(ma - mb) >= rel_delta * lo)
			bounds[nb++] = b;
	}
	bounds[nb++] = n;
	/* Then the shift that stands least out of the autocorrelated noise is
	 * merged, and the noise measured again, until every one left stands
	 * out by TS_SHIFT_Z standard errors. */
	while (nb > 2) {
		size_t at;
		double z;

		rc = weakest_shift(x, pre, bounds, nb, r, &at, &z);
		if (rc)
			goto out;
		if (z >= TS_SHIFT_Z)
			break;
		memmove(bounds + at, bounds + at + 1, (nb - at - 1) * sizeof(*bounds));
		nb--;
	}
	for (size_t i = 1; i + 1 < nb; i++) {
		if (out_n < cap)
			cps[out_n] = bounds[i];
		out_n++;
	}
	*ncp = out_n;
	rc = 0;
out:
	free(all);
	free(bounds);
	free(pre);
	free(r);
	return rc;
}

/* ------------------------------------------------------ spikes and stalls */

/*
 * med[i] = median of x[max(0, i - h) .. min(n - 1, i + h)] for every i,
 * keeping the window sorted as it slides (one removal and one insertion of
 * <= 2h + 1 values per step) rather than sorting every window afresh, which
 * was the costliest part of the analysis on long series. The sorted window
 * is the one a stable insertion sort of the window gives, so the medians
 * stay those of the per-window sort this replaced, down to the sign of a
 * zero: a new value goes after its equals, and the value leaving (the
 * oldest) is the first of its equals. NaN compares false both ways, so the
 * insertion sort leaves it where it lands and the values after it stay
 * behind it: the window is sorted runs split by NaNs in index order. Here
 * too new values stop at the last NaN and the oldest value sits in the
 * first run (or is the leading NaN), where the removal finds it.
 */
static void moving_median(const double *x, size_t n, size_t h, double *med)
{
	double win[33];
	size_t w = 0;

	for (size_t i = 0; i < n; i++) {
		size_t add_from = i == 0 ? 0 : i + h, add_to = i + h < n ? i + h : n - 1;

		if (i > h) {
			double v = x[i - h - 1];
			size_t k = 0;

			while (win[k] < v)
				k++;
			for (w--; k < w; k++)
				win[k] = win[k + 1];
		}
		for (size_t j = add_from; j <= add_to; j++) {
			double v = x[j];
			size_t k = w++;

			while (k > 0 && win[k - 1] > v) {
				win[k] = win[k - 1];
				k--;
			}
			win[k] = v;
		}
		med[i] = w % 2 ? win[w / 2] : 0.5 * (win[w / 2 - 1] + win[w / 2]);
	}
}

int ts_stats_spike_scores(const double *x, size_t n, size_t h, double *base,
			  double *z)
{
	double *med, *own = NULL, *e = NULL, s, scale;
	int rc = TS_ENOMEM;

	if (n == 0 || h < 1 || h > 16)
		return TS_EUSAGE;
	/* The baselines go straight to base; the scale s only matters for z. */
	med = base ? base : (own = malloc(n * sizeof(*own)));
	if (!med)
		goto out;
	moving_median(x, n, h, med);
	rc = 0;
	if (!z)
		goto out;
	rc = TS_ENOMEM;
	e = malloc(n * sizeof(*e));
	if (!e)
		goto out;
	for (size_t i = 0; i < n; i++)
		e[i] = fabs(x[i] - med[i]);
	s = quantile_select(e, n, 0.5); /* e is scratch: no copy needed */
	scale = 0;
	for (size_t i = 0; i < n; i++)
		scale += fabs(x[i]) / (double)n;
	if (s < 1e-9 * scale)
		s = 1e-9 * scale;
	if (s < 1e-300)
		s = 1e-300;
	for (size_t i = 0; i < n; i++)
		z[i] = TS_STATS_MODZ_K * (x[i] - med[i]) / s;
	rc = 0;
out:
	free(own);
	free(e);
	return rc;
}

double ts_stats_rise_ref(const double *x, size_t n, size_t i, size_t h)
{
	double win[16], ref;
	size_t lo, hi;

	if (i == 0 || i >= n || h < 1 || h > 16)
		return NAN;
	lo = i > h ? i - h : 0;
	memcpy(win, x + lo, (i - lo) * sizeof(*win));
	ref = quantile_select(win, i - lo, 0.5);
	hi = n - 1 - i < h ? n - 1 - i : h;
	if (hi) {
		double after;

		memcpy(win, x + i + 1, hi * sizeof(*win));
		after = quantile_select(win, hi, 0.5);
		if (after > ref)
			ref = after;
	}
	return ref;
}

/* Test every phase of period p; keep the best (p, r) in best/raw_best. */
static void periodic_try(size_t n, const size_t *spk,
			 size_t K, size_t p, size_t *cnt, struct ts_periodic *best,
			 double *raw_best)
{
	memset(cnt, 0, p * sizeof(*cnt));
	if (n <= UINT32_MAX) /* a 32-bit division costs a fraction of a 64-bit one */
		for (size_t i = 0; i < K; i++)
			cnt[(uint32_t)spk[i] % (uint32_t)p]++;
	else
		for (size_t i = 0; i < K; i++)
			cnt[spk[i] % p]++;
	for (size_t r = 0; r < p; r++) {
		size_t m = (n - r + p - 1) / p, h = cnt[r];
		double pv;

		if (h < 3 || (double)h < 0.7 * (double)m)
			continue;
		pv = ts_stats_hypergeom_sf(n, K, m, h);
		if (pv < *raw_best || (pv == *raw_best && p < best->period)) {
			*raw_best = pv;
			best->period = p;
			best->phase = r;
			best->hits = h;
			best->slots = m;
		}
	}
}

static int cmp_size_desc_count(const void *a, const void *b)
{
	const size_t *x = a, *y = b; /* pairs {gap, count} */

	if (x[1] != y[1])
		return x[1] < y[1] ? 1 : -1;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

int ts_stats_periodic(const unsigned char *f, size_t n, size_t max_period,
		      double alpha, struct ts_periodic *out)
{
	size_t *spk = NULL, *cnt = NULL, *cands = NULL, *gaps = NULL, *pairs = NULL;
	size_t K = 0, pmax, ncand = 0;
	double raw = INFINITY, tests = 0;
	int rc = TS_ENOMEM;

	memset(out, 0, sizeof(*out));
	out->p_value = 1;
	pmax = n / 3 < max_period ? n / 3 : max_period;
	if (pmax < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		K += f[i] != 0;
	if (K < 3)
		return 0;
	spk = malloc(K * sizeof(*spk));
	cnt = malloc((pmax + 1) * sizeof(*cnt));
	cands = malloc((64 + 32) * sizeof(*cands));
	gaps = malloc(2 * K * sizeof(*gaps));
	pairs = malloc(2 * 2 * K * sizeof(*pairs));
	if (!spk || !cnt || !cands || !gaps || !pairs)
		goto out;
	K = 0;
	for (size_t i = 0; i < n; i++)
		if (f[i])
			spk[K++] = i;
	for (size_t p = 2; p <= pmax && p <= 65; p++)
		cands[ncand++] = p;
	if (pmax > 65) {
		/* Gaps to the next and the next-but-one spike, as {gap, count}.
		 * Only gaps that can become candidates are counted: the short
		 * ones, usually most of them, were all tried above. */
		size_t ng = 0, npairs = 0;

		for (size_t i = 0; i + 1 < K; i++) {
			size_t g1 = spk[i + 1] - spk[i], g2 = i + 2 < K ? spk[i + 2] - spk[i] : 0;

			if (g1 > 65 && g1 <= pmax)
				gaps[ng++] = g1;
			if (g2 > 65 && g2 <= pmax)
				gaps[ng++] = g2;
		}
		ts_sort(gaps, ng, sizeof(*gaps), cmp_size);
		for (size_t i = 0; i < ng;) {
			size_t j = i;

			while (j < ng && gaps[j] == gaps[i])
				j++;
			pairs[2 * npairs] = gaps[i];
			pairs[2 * npairs + 1] = j - i;
			npairs++;
			i = j;
		}
		ts_sort(pairs, npairs, 2 * sizeof(*pairs), cmp_size_desc_count);
		for (size_t i = 0; i < npairs && i < 32; i++)
			cands[ncand++] = pairs[2 * i];
	}
	for (size_t i = 0; i < ncand; i++) {
		periodic_try(n, spk, K, cands[i], cnt, out, &raw);
		tests += (double)cands[i];
	}
	if (out->period) {
		out->p_value = fmin(1, raw * tests);
		out->found = out->p_value < alpha;
	}
	rc = 0;
out:
	free(spk);
	free(cnt);
	free(cands);
	free(gaps);
	free(pairs);
	return rc;
}

/* The local excess of x[i] over its neighbours (one neighbour at the ends). */
static double local_excess(const double *x, size_t n, size_t i)
{
	if (i == 0)
		return x[0] - x[1];
	if (i + 1 == n)
		return x[i] - x[i - 1];
	return x[i] - 0.5 * (x[i - 1] + x[i + 1]);
}

/* The value test of one (p, r): slots, hits, excess and the raw t tail. */
struct local_slot {
	size_t m, hits;
	double mean, excess, pv;
};

static int local_try(const double *x, size_t n, size_t p, size_t r, double scale,
		     double min_excess, struct local_slot *o)
{
	double sum = 0, sum2 = 0, sd, t;

	memset(o, 0, sizeof(*o));
	o->pv = 1;
	for (size_t i = r; i < n; i += p, o->m++)
		sum += local_excess(x, n, i);
	if (o->m < 4)
		return 0;
	o->mean = sum / (double)o->m;
	if (!(o->mean > 0) || o->mean < min_excess)
		return 0;
	for (size_t i = r; i < n; i += p) {
		double d = local_excess(x, n, i);

		sum2 += (d - o->mean) * (d - o->mean);
		o->hits += d > 0.5 * o->mean;
		o->excess += d > 0 ? d : 0;
	}
	sd = sqrt(sum2 / (double)(o->m - 1));
	if (!(sd >= 1e-12 * scale) || sd == 0)
		sd = scale > 0 ? 1e-12 * scale : 1e-300;
	t = o->mean / (sd / sqrt((double)o->m));
	o->pv = ts_stats_t_cdf(-t, (double)(o->m - 1));
	return 1;
}

int ts_stats_periodic_local(const double *x, size_t n, size_t max_period, double min_excess,
			    double alpha, struct ts_periodic *out)
{
	size_t pmax = n / 3 < max_period ? n / 3 : max_period;
	double scale = 0, tests = 0;
	struct local_slot best = { 0, 0, 0, 0, INFINITY }, c;

	memset(out, 0, sizeof(*out));
	out->p_value = 1;
	if (max_period < 2)
		return TS_EUSAGE;
	if (pmax < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		scale += fabs(x[i]);
	scale /= (double)n;
	for (size_t p = 2; p <= pmax; p++) {
		tests += (double)p;
		for (size_t r = 0; r < p; r++)
			if (local_try(x, n, p, r, scale, min_excess, &c) &&
			    (c.pv < best.pv || (c.pv == best.pv && p < out->period))) {
				best = c;
				out->period = p;
				out->phase = r;
			}
	}
	if (!out->period)
		return 0;
	/* The fundamental period: a divisor q of the winner that passes on its
	 * own with a mean excess of at least 3/4 of the winner's (a winner at
	 * 2q can be the half of the slots the noise happens to favour; a true
	 * period 2q seen at q has half its slots clean, so half the mean). */
	for (size_t q = 2; q < out->period; q++)
		if (out->period % q == 0 && local_try(x, n, q, out->phase % q, scale, min_excess, &c) &&
		    c.pv * tests < alpha && c.mean >= 0.75 * best.mean) {
			best = c;
			out->phase %= q;
			out->period = q;
			break;
		}
	out->slots = best.m;
	out->hits = best.hits;
	out->excess = best.excess;
	out->p_value = fmin(1, best.pv * tests);
	out->found = out->p_value < alpha;
	return 0;
}

/* ---------------------------------------------------------- drift */

#define DRIFT_MAX_POINTS 512
#define DRIFT_BLOCKS 10
#define DRIFT_MIN_S 30

int ts_stats_drift(const double *x, size_t n, double min_change, struct ts_drift *out)
{
	size_t m = n < DRIFT_MAX_POINTS ? n : DRIFT_MAX_POINTS, np = 0;
	double *px = NULL, *py = NULL, *sl = NULL, blk[DRIFT_BLOCKS], med;
	int rc;

	memset(out, 0, sizeof(*out));
	out->change = NAN;
	if (n < 20)
		return TS_EUSAGE;
	px = malloc(m * sizeof(*px));
	py = malloc(m * sizeof(*py));
	sl = malloc((m * (m - 1) / 2) * sizeof(*sl));
	if (!px || !py || !sl) {
		rc = TS_ENOMEM;
		goto out;
	}
	/* m points: x itself, or the means of m near-equal blocks at their centres */
	for (size_t b = 0; b < m; b++) {
		size_t lo = b * n / m, hi = (b + 1) * n / m;
		double s = 0;

		for (size_t i = lo; i < hi; i++)
			s += x[i];
		px[b] = 0.5 * (double)(lo + hi - 1);
		py[b] = s / (double)(hi - lo);
	}
	for (size_t i = 0; i < m; i++)
		for (size_t j = i + 1; j < m; j++)
			sl[np++] = (py[j] - py[i]) / (px[j] - px[i]);
	if ((rc = ts_stats_median_mad(x, n, &med, NULL)))
		goto out;
	ts_stats_sort(sl, np);
	out->change = med > 0 ? ts_stats_quantile_sorted(sl, np, 0.5) * (double)n / med : NAN;
	for (size_t b = 0; b < DRIFT_BLOCKS; b++) {
		size_t lo = b * n / DRIFT_BLOCKS, hi = (b + 1) * n / DRIFT_BLOCKS;
		double s = 0;

		for (size_t i = lo; i < hi; i++)
			s += x[i];
		blk[b] = s / (double)(hi - lo);
	}
	for (size_t i = 0; i < DRIFT_BLOCKS; i++)
		for (size_t j = i + 1; j < DRIFT_BLOCKS; j++)
			out->kendall_s += (blk[j] > blk[i]) - (blk[j] < blk[i]);
	out->found = fabs(out->change) > min_change && abs(out->kendall_s) >= DRIFT_MIN_S;
	rc = 0;
out:
	free(px);
	free(py);
	free(sl);
	return rc;
}

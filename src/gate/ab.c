/*
 * ab.c - matched A/B comparison of step times with correctness gates.
 *
 * Why: "it looks faster" on a noisy cluster is how regressions ship. This
 * module turns baseline and candidate runs into one of four verdicts backed
 * by a 95 % confidence interval of the ratio of mean step times that stays
 * honest when consecutive steps are correlated (ab-stats.md A3/A4), decided
 * against a practical-significance band so a difference smaller than the
 * noise is never claimed, and it rejects any candidate whose training
 * changed (loss and grad-norm curves, NaN/Inf, skipped steps, memory;
 * ab-stats.md A5) whatever its speed.
 *
 * Interval by design:
 *   >= 4 runs per side  Hodges-Lehmann shift of log run means with the exact
 *                       Mann-Whitney interval (runs are the replicates);
 *   2-3 runs per side   Welch t on log run means, or the paired interval
 *                       below when that is wider;
 *   otherwise           paired by iteration: d_i = B_i - A_i over the matched
 *                       window (per-iteration means across repeats), CI of
 *                       mean(d) by ts_stats_ci_mean (the interval `steps`
 *                       reports), ratio = 1 + mean(d) / mean(A) with mean(A)'s
 *                       own uncertainty added (delta method), and, when the
 *                       user states a run-to-run CV (--run-cv), that Type B
 *                       term in quadrature: one run per side cannot measure
 *                       it (bench/ab_power.c shows what ignoring it costs).
 *                       Pairing never biases the mean difference; it removes
 *                       per-iteration work both runs share (same data, same
 *                       seed), and a run compared with itself gives exactly 1.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/gate.h"
#include "trainscope/telemetry.h"
#include "trainscope/steps.h"
#include "trainscope/stats.h"

const char *ts_ab_verdict_name(int v)
{
	switch (v) {
	case TS_AB_FASTER: return "faster";
	case TS_AB_SLOWER: return "slower";
	case TS_AB_NO_DIFFERENCE: return "no_difference";
	case TS_AB_INCONCLUSIVE: return "inconclusive";
	default: return "invalid";
	}
}

const char *ts_ab_phase_name(int phase)
{
	switch (phase) {
	case TS_PHASE_DATA: return "data";
	case TS_PHASE_FORWARD: return "fwd";
	case TS_PHASE_BACKWARD: return "bwd";
	case TS_PHASE_FWD_BWD: return "forward-backward";
	case TS_PHASE_OPTIMIZER: return "opt";
	case TS_PHASE_COMM: return "comm";
	default: return "unknown";
	}
}

void ts_ab_opts_init(struct ts_ab_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->band = -1;
	o->win_first = o->win_last = TS_WIN_AUTO;
	o->mem_tolerance = 0.05;
	o->loss_tolerance = 0.01;
	o->seed = 20260101;
}

void ts_ab_result_init(struct ts_ab_result *res)
{
	memset(res, 0, sizeof(*res));
	ts_arena_init(&res->arena);
	ts_warnings_init(&res->warnings);
	res->ratio = res->ci95_low = res->ci95_high = NAN;
}

void ts_ab_result_release(struct ts_ab_result *res)
{
	TS_VEC_RELEASE(res->checks);
	TS_VEC_RELEASE(res->reasons);
	TS_VEC_RELEASE(res->invalid);
	ts_warnings_release(&res->warnings);
	TS_VEC_RELEASE(res->diffs);
	TS_VEC_RELEASE(res->base);
	TS_VEC_RELEASE(res->cand);
	TS_VEC_RELEASE(res->phases);
	ts_arena_release(&res->arena);
	memset(res, 0, sizeof(*res));
}

/* printf into the result's arena. */
__attribute__((format(printf, 2, 3)))
static const char *fmt(struct ts_ab_result *res, const char *f, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	return ts_arena_strndup(&res->arena, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

#define ADD(vec, s) do { const char *s_ = (s); if (s_ && TS_VEC_PUSH((vec), s_)) oom = 1; } while (0)
/* A warning of the comparison: a stable code and the phrase made a sentence. */
#define WARN(code, s) do { const char *s_ = (s); \
	if (!s_ || ts_warnings_add(&res->warnings, (code), NULL, -1, TS_NO_INT, "%s.", s_)) \
		oom = 1; } while (0)

/* ------------------------------------------------------------ helpers */

/* A run's tokens per step, as its steps analysis found them; NAN unknown. */
static double run_tokens(const struct ts_run *r)
{
	return r->rm.have_steps && r->rm.steps.tokens_per_step > 0 ? r->rm.steps.tokens_per_step : NAN;
}

static double median_of(double *x, size_t n)
{
	ts_stats_sort(x, n);
	return ts_stats_quantile_sorted(x, n, 0.5);
}

/* Centred moving median of width w (clipped at the ends). */
static void moving_median(const double *x, size_t n, size_t w, double *out)
{
	double win[32];
	size_t h = w / 2;

	for (size_t i = 0; i < n; i++) {
		size_t lo = i >= h ? i - h : 0, hi = i + h < n ? i + h : n - 1, m = 0;
		for (size_t k = lo; k <= hi && m < 32; k++)
			win[m++] = x[k];
		out[i] = median_of(win, m);
	}
}

/* rtol for a loss magnitude (NeMo Megatron-Bridge evaluate.py, ab-stats A5). */
static double loss_rtol(double l)
{
	l = fabs(l);
	return l > 2.0 ? 0.10 : l >= 0.5 ? 0.05 : 0.02;
}

/*
 * Exact lower-tail count of the Mann-Whitney U null: the largest u with
 * P(U <= u) <= alpha, via the recurrence on the number of arrangements
 * f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u). Returns k = u + 1, or 0 when
 * even U = 0 is above alpha (the interval is unbounded).
 */
static size_t mw_k(size_t m, size_t n, double alpha)
{
	size_t umax = m * n;
	double *f = NULL, total = 0, cum = 0;
	size_t k = 0;

	if (m * n > 10000) {
		double z = ts_stats_norm_quantile(1 - alpha);
		double v = floor(m * n / 2.0 - z * sqrt(m * n * (m + n + 1) / 12.0));
		return v < 1 ? 0 : (size_t)v;
	}
	/* f[j][u] for j items of the first sample against all n of the second,
	 * built row by row: count of sequences with U = u. */
	{
		size_t cols = umax + 1;
		double *prev = calloc((n + 1) * cols, sizeof(double));
		double *cur = calloc((n + 1) * cols, sizeof(double));
		if (!prev || !cur) {
			free(prev);
			free(cur);
			return 0;
		}
		/* prev = row m' = 0: f(0, nn, 0) = 1 for every nn */
		for (size_t nn = 0; nn <= n; nn++)
			prev[nn * cols] = 1;
		for (size_t mm = 1; mm <= m; mm++) {
			memset(cur, 0, (n + 1) * cols * sizeof(double));
			cur[0] = 1; /* f(mm, 0, 0) = 1 */
			for (size_t nn = 1; nn <= n; nn++)
				for (size_t u = 0; u <= mm * nn && u < cols; u++) {
					double a = u >= nn ? prev[nn * cols + u - nn] : 0;
					double b = cur[(nn - 1) * cols + u];
					cur[nn * cols + u] = a + b;
				}
			double *t = prev;
			prev = cur;
			cur = t;
		}
		f = malloc(cols * sizeof(double));
		if (f)
			memcpy(f, prev + n * cols, cols * sizeof(double));
		free(prev);
		free(cur);
	}
	if (!f)
		return 0;
	for (size_t u = 0; u <= umax; u++)
		total += f[u];
	for (size_t u = 0; u <= umax; u++) {
		cum += f[u];
		if (cum / total > alpha)
			break;
		k = u + 1;
	}
	free(f);
	return k;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------ windows */

struct side_series {
	int64_t *iter;   /* matched iterations present in every run of the side */
	double *mean;    /* per-iteration mean across the side's runs */
	size_t n;
};

static int point_iter_below(const void *elem, const void *it)
{
	return ((const struct ts_run_point *)elem)->iteration < *(const int64_t *)it;
}

/* The point of iteration it (points are ascending and unique), or NULL. */
static const struct ts_run_point *find_point(const struct ts_run *r, int64_t it)
{
	size_t lo = ts_lower_bound(r->pts.v, r->pts.n, sizeof(*r->pts.v), &it, point_iter_below);

	return lo < r->pts.n && r->pts.v[lo].iteration == it ? &r->pts.v[lo] : NULL;
}

/* Per-iteration mean step time over the side's runs, only iterations every
 * run has usable inside [first, last]. */
static int side_curve(const struct ts_run *runs, size_t nr, int64_t first, int64_t last,
		      struct side_series *s)
{
	const struct ts_run *r0 = &runs[0];

	s->n = 0;
	s->iter = malloc((r0->pts.n + 1) * sizeof(*s->iter));
	s->mean = malloc((r0->pts.n + 1) * sizeof(*s->mean));
	if (!s->iter || !s->mean)
		return TS_ENOMEM;
	for (size_t i = 0; i < r0->pts.n; i++) {
		const struct ts_run_point *p = &r0->pts.v[i];
		double sum = 0;
		size_t have = 0;
		if (!ts_run_point_in_window(r0, i, first, last))
			continue;
		for (size_t k = 0; k < nr; k++) {
			const struct ts_run_point *q = find_point(&runs[k], p->iteration);
			if (q && ts_run_point_usable(q)) {
				sum += q->step_ms;
				have++;
			}
		}
		if (have == nr) {
			s->iter[s->n] = p->iteration;
			s->mean[s->n] = sum / (double)nr;
			s->n++;
		}
	}
	return 0;
}

static void side_release(struct side_series *s)
{
	free(s->iter);
	free(s->mean);
	memset(s, 0, sizeof(*s));
}

/*
 * The iterations of [first, last] usable in every run of both sides, with
 * each side's per-iteration mean step time: (*pit)[i], (*pa)[i], (*pb)[i]
 * for i < *n, allocated here (the caller frees them, also on failure).
 * TS_ENOMEM only.
 */
static int paired_steps(const struct ts_run *base, size_t nb, const struct ts_run *cand,
			size_t nc, int64_t first, int64_t last, int64_t **pit, double **pa,
			double **pb, size_t *n)
{
	struct side_series sa = { 0 }, sc = { 0 };
	size_t i = 0, k = 0;
	int rc = TS_ENOMEM;

	*n = 0;
	*pit = NULL;
	*pa = *pb = NULL;
	if (side_curve(base, nb, first, last, &sa) || side_curve(cand, nc, first, last, &sc))
		goto out;
	*pit = malloc((sa.n + 1) * sizeof(**pit));
	*pa = malloc((sa.n + 1) * sizeof(**pa));
	*pb = malloc((sa.n + 1) * sizeof(**pb));
	if (!*pit || !*pa || !*pb)
		goto out;
	while (i < sa.n && k < sc.n) {
		if (sa.iter[i] < sc.iter[k]) {
			i++;
		} else if (sa.iter[i] > sc.iter[k]) {
			k++;
		} else {
			(*pit)[*n] = sa.iter[i];
			(*pa)[*n] = sa.mean[i++];
			(*pb)[(*n)++] = sc.mean[k++];
		}
	}
	rc = 0;
out:
	side_release(&sa);
	side_release(&sc);
	return rc;
}

/*
 * The window ab proposes when the automatic windows leave fewer than 10
 * paired steps: from the latest start of a run's own window (first, the
 * run latest) to the last iteration that every run logged usable, when
 * at least 10 iterations there are usable in every run. Writes the
 * sentence that names it, or "" when there is none; TS_ENOMEM only.
 */
static int propose_window(const struct ts_run *base, size_t nb, const struct ts_run *cand,
			  size_t nc, int64_t first, const struct ts_run *latest, char *out, size_t cap)
{
	int64_t end = INT64_MAX, *pit = NULL;
	double *pa = NULL, *pb = NULL;
	size_t n = 0;
	int rc;

	out[0] = '\0';
	for (size_t i = 0; i < nb + nc; i++) {
		const struct ts_run *r = i < nb ? &base[i] : &cand[i - nb];
		int64_t last = INT64_MIN;

		for (size_t k = r->pts.n; k-- > 0 && last == INT64_MIN;)
			if (ts_run_point_usable(&r->pts.v[k]))
				last = r->pts.v[k].iteration;
		if (last < end)
			end = last;
	}
	rc = first <= end ? paired_steps(base, nb, cand, nc, first, end, &pit, &pa, &pb, &n) : 0;
	if (!rc && n >= 10)
		snprintf(out, cap, "; iterations %lld-%lld are past the start of every run's "
			 "own window (the latest, %s's, starts at %lld) and logged by every run "
			 "(%zu paired steps): declare them with --window %lld:%lld, which keeps "
			 "the steps an automatic window cut after a level shift, or declare "
			 "another common window", (long long)first, (long long)end, latest->path,
			 (long long)first, n, (long long)first, (long long)end);
	else if (!rc)
		snprintf(out, cap, "; no 10 iterations after the latest start of a run's own "
			 "window (%lld, in %s) are logged usable by every run, so no common "
			 "window is proposed", (long long)first, latest->path);
	free(pit);
	free(pa);
	free(pb);
	return rc;
}

/*
 * The verdict of a comparison over every paired step after iteration 1
 * (artefacts left out), with the same band and the same run-to-run term
 * as res's: when it is not res's verdict, res becomes inconclusive and
 * says why (picked: a run whose automatic window was picked from its
 * data). TS_ENOMEM only.
 */
static int whole_run_check(struct ts_ab_result *res, const struct ts_run *base, size_t nb,
			   const struct ts_run *cand, size_t nc, const struct ts_ab_opts *o,
			   const struct ts_run *picked)
{
	struct ts_ab_ratio pr;
	int64_t *pit;
	double *pa, *pb, lo, hi;
	size_t n;
	int rc = TS_ENOMEM, v;
	const struct ts_steps_report *st = &picked->rm.steps;

	if (paired_steps(base, nb, cand, nc, INT64_MIN, INT64_MAX, &pit, &pa, &pb, &n) ||
	    ts_ab_paired_ratio(pa, pb, n, o->seed, &pr))
		goto out;
	lo = pr.ci95_low;
	hi = pr.ci95_high;
	if (res->run_term > 0) {
		lo = pr.estimate - sqrt((pr.estimate - lo) * (pr.estimate - lo) +
					res->run_term * res->run_term);
		hi = pr.estimate + sqrt((hi - pr.estimate) * (hi - pr.estimate) +
					res->run_term * res->run_term);
	}
	v = ts_ab_decide(lo, hi, res->band);
	rc = 0;
	if (v == res->verdict)
		goto out;
	res->decide_note = fmt(res, "the verdict depends on the automatic window: %s's was "
			       "picked from its data (%s at iteration %lld), and over all %zu "
			       "paired steps after iteration 1 the ratio is %.4f, 95 %% CI "
			       "[%.4f, %.4f] (%s); declare the window (--window A:B, or the "
			       "contract's workload.steady_window) to decide", picked->path,
			       st->warnings & TS_WARN_LEVEL_SHIFT ? "a level shift" :
			       "a long warm-up, cut",
			       (long long)(st->warnings & TS_WARN_LEVEL_SHIFT ?
					   st->level_shift_iteration : st->mser_cut_iteration),
			       n, pr.estimate, lo, hi, ts_ab_verdict_name(v));
	res->verdict = TS_AB_INCONCLUSIVE;
	res->more_steps_per_run = res->more_runs_per_side = 0;
	rc = res->decide_note ? 0 : TS_ENOMEM;
out:
	free(pit);
	free(pa);
	free(pb);
	return rc;
}

/* ------------------------------------------------------------ intervals */

/*
 * How much wider a 95 % interval of ts_stats_ci_mean becomes at `level`:
 * the ratio of the two critical values on the degrees of freedom of the
 * method that made it (batch means: k - 1; AR(1): its effective sample
 * size - 1, as stats.c computes it; the percentile bootstrap: the normal
 * approximation). Exactly 1 at 95 %.
 */
static double widen(const struct ts_ci *c, size_t n, double level)
{
	double p = 1 - (1 - level) / 2, df;

	if (level == 0.95)
		return 1;
	if (c->method == TS_CI_BATCH_MEANS && c->batches >= 2) {
		df = (double)c->batches - 1;
	} else if (c->method == TS_CI_AR1) {
		double ess = (double)n * (1 - c->lag1) / (1 + c->lag1);
		df = ess > 2 ? ess - 1 : 1;
	} else {
		return ts_stats_norm_quantile(p) / ts_stats_norm_quantile(0.975);
	}
	return ts_stats_t_quantile(p, df) / ts_stats_t_quantile(0.975, df);
}

/* ts_ab_paired_ratio at a given interval level. */
static int paired_ratio(const double *a, const double *b, size_t n, uint64_t seed, double level,
			struct ts_ab_ratio *out)
{
	double *d;
	struct ts_ci cd, ca;
	double md, ma, r, t, fd, fa;
	int rc;

	out->estimate = out->ci95_low = out->ci95_high = NAN;
	out->method = NULL;
	if (n < 2)
		return 0;
	if (!(d = malloc((n + 1) * sizeof(double))))
		return TS_ENOMEM;
	for (size_t i = 0; i < n; i++)
		d[i] = b[i] - a[i];
	if ((rc = ts_stats_ci_mean(d, n, seed, &cd)) || (rc = ts_stats_ci_mean(a, n, seed + 1, &ca))) {
		free(d);
		return rc;
	}
	fd = widen(&cd, n, level);
	fa = widen(&ca, n, level);
	md = ts_stats_mean(d, n);
	ma = ts_stats_mean(a, n);
	r = 1 + md / ma;
	/* cd is centred on the batch means' mean, which may drop a few trailing
	 * steps; keep its half-widths around the full mean */
	t = fabs(md) / (ma * ma) * fa * (ca.hi - ca.lo) / 2;
	out->estimate = r;
	out->ci95_low = r - sqrt(pow(fd * (cd.mean - cd.lo) / ma, 2) + t * t);
	out->ci95_high = r + sqrt(pow(fd * (cd.hi - cd.mean) / ma, 2) + t * t);
	out->method = cd.method == TS_CI_BLOCK_BOOTSTRAP ? "block bootstrap"
		      : cd.method == TS_CI_AR1		? "AR(1)"
							: "batch means";
	free(d);
	return 0;
}

int ts_ab_paired_ratio(const double *a, const double *b, size_t n, uint64_t seed,
		       struct ts_ab_ratio *out)
{
	return paired_ratio(a, b, n, seed, 0.95, out);
}

/* ts_ab_welch_log_ratio with the t quantile p (0.975 for 95 %). */
static void welch_log_ratio(const double *a, size_t na, const double *b, size_t nb, double p,
			    struct ts_ab_ratio *out)
{
	double mx = 0, my = 0, vx = 0, vy = 0, ax, ay, se, df, t;

	out->estimate = out->ci95_low = out->ci95_high = NAN;
	out->method = NULL;
	if (na < 2 || nb < 2)
		return;
	for (size_t i = 0; i < na; i++)
		mx += log(a[i]) / (double)na;
	for (size_t i = 0; i < nb; i++)
		my += log(b[i]) / (double)nb;
	for (size_t i = 0; i < na; i++)
		vx += (log(a[i]) - mx) * (log(a[i]) - mx) / (double)(na - 1);
	for (size_t i = 0; i < nb; i++)
		vy += (log(b[i]) - my) * (log(b[i]) - my) / (double)(nb - 1);
	ax = vx / (double)na;
	ay = vy / (double)nb;
	se = sqrt(ax + ay);
	df = se > 0 ? pow(ax + ay, 2) / (ax * ax / (double)(na - 1) + ay * ay / (double)(nb - 1)) : 1;
	t = se > 0 ? ts_stats_t_quantile(p, df) : 0;
	out->estimate = exp(my - mx);
	out->ci95_low = exp(my - mx - t * se);
	out->ci95_high = exp(my - mx + t * se);
	out->method = "Welch t on log values";
}

void ts_ab_welch_log_ratio(const double *a, size_t na, const double *b, size_t nb,
			   struct ts_ab_ratio *out)
{
	welch_log_ratio(a, na, b, nb, 0.975, out);
}

int ts_ab_decide(double lo, double hi, double band)
{
	if (isnan(lo) || isnan(hi) || isnan(band))
		return TS_AB_INCONCLUSIVE;
	if (hi < 1 - band)
		return TS_AB_FASTER;
	if (lo > 1 + band)
		return TS_AB_SLOWER;
	if (lo >= 1 - band && hi <= 1 + band)
		return TS_AB_NO_DIFFERENCE;
	return TS_AB_INCONCLUSIVE;
}

/* ------------------------------------------------------------ curves */

/* Collect the common iterations where both runs logged a finite value of
 * loss (which = 0) or grad norm (which = 1). */
static size_t common_values(const struct ts_run *a, const struct ts_run *b, int which,
			    double *va, double *vb, int64_t *it)
{
	size_t i = 0, k = 0, n = 0;

	while (i < a->pts.n && k < b->pts.n) {
		const struct ts_run_point *p = &a->pts.v[i], *q = &b->pts.v[k];
		if (p->iteration < q->iteration) {
			i++;
		} else if (p->iteration > q->iteration) {
			k++;
		} else {
			double x = which ? p->grad_norm : p->loss, y = which ? q->grad_norm : q->loss;
			if (isfinite(x) && isfinite(y)) {
				va[n] = x;
				vb[n] = y;
				it[n] = p->iteration;
				n++;
			}
			i++, k++;
		}
	}
	return n;
}

/* Spikes: value above 5x the running median of the previous 9 points. */
static size_t count_spikes(const double *x, size_t n)
{
	double win[9];
	size_t s = 0;

	for (size_t i = 3; i < n; i++) {
		size_t lo = i >= 9 ? i - 9 : 0, m = 0;
		for (size_t k = lo; k < i; k++)
			win[m++] = x[k];
		if (x[i] > 5 * median_of(win, m))
			s++;
	}
	return s;
}

/* x as a log printing p significant digits (%E) shows it. */
static double at_sig(double x, int p)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.*e", p - 1, x);
	return strtod(buf, NULL);
}

/* x as a log printing d decimals (%f) shows it; |x| < 1e15. */
static double at_dec(double x, int d)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.*f", d, x);
	return strtod(buf, NULL);
}

/* values a log's printing precision is read from (a property of its
 * format: the first ones show it, and a 250k-step log costs no scan) */
#define PRINTED_SAMPLE 1024

/*
 * How run r's log prints its losses (which = 0) or grad norms (which = 1):
 * the most significant digits (*p, as %E) and decimals (*d, as %f) any of
 * its first PRINTED_SAMPLE finite nonzero values needs to read back. A
 * value that needs all 17 digits is a full double: *p = 17, *d = 30.
 */
static void printed_digits(const struct ts_run *r, int which, int *p, int *d)
{
	size_t seen = 0;

	*p = 1;
	*d = 0;
	for (size_t i = 0; i < r->pts.n && seen < PRINTED_SAMPLE; i++) {
		double v = which ? r->pts.v[i].grad_norm : r->pts.v[i].loss;

		if (!isfinite(v) || v == 0)
			continue;
		seen++;
		while (*p < 17 && at_sig(v, *p) != v)
			++*p;
		if (*p == 17) {
			*d = 30;
			return;
		}
		while (fabs(v) < 1e15 && *d < 30 && at_dec(v, *d) != v)
			++*d;
	}
}

/* x and y agree as a log printing p significant digits, or d decimals,
 * shows them (p >= 17 and d >= 30: exactly). */
static int same_printed(double x, double y, int p, int d)
{
	return x == y || (p < 17 && at_sig(x, p) == at_sig(y, p)) ||
	       (d < 30 && fabs(x) < 1e15 && fabs(y) < 1e15 && at_dec(x, d) == at_dec(y, d));
}

/* The loss tier's two tests of the noise, the last 10 %'s means and the
 * last half's bias, share a 5 % false-alarm budget (Bonferroni): each uses
 * a 97.5 % interval. */
#define TAIL_BIAS_LEVEL 0.975

/* Widen a 95 % interval of ts_stats_ci_mean over n values to `level`,
 * around its mean. */
static void at_level(struct ts_ci *c, size_t n, double level)
{
	double f = widen(c, n, level);

	c->lo = c->mean - f * (c->mean - c->lo);
	c->hi = c->mean + f * (c->hi - c->mean);
}

struct curve_out {
	int passed;
	int skipped;
	const char *detail;
	size_t tail;            /* loss: iterations in the tail check */
	double tail_noise;      /* loss: 97.5 % half-width of the tail's mean difference,
				 * relative to the baseline's tail mean; NAN when none */
};

/*
 * The two-tier loss (which = 0) or grad-norm (which = 1) curve check of
 * ab-stats A5 between run a (reference) and run b. lim is the loss tail's
 * limit (a fraction; the bias band is half of it). The tail fails when its
 * means differ by more than lim and by more than the per-step noise allows
 * (the 97.5 % half-width of their difference): A5's fixed 1 % on the raw
 * last 10 % rejected a fifth of A-vs-A pairs whose per-step loss varies by
 * 3 %.
 */
static int curve_check(struct ts_ab_result *res, const struct ts_run *a, const struct ts_run *b,
		       int which, int bitwise, double lim, uint64_t seed, struct curve_out *out)
{
	size_t cap = a->pts.n + 1, n, skip, m, fails = 0, allow, worst_i = 0;
	double *va = malloc(cap * sizeof(double)), *vb = malloc(cap * sizeof(double));
	double *sa = malloc(cap * sizeof(double)), *sb = malloc(cap * sizeof(double));
	int64_t *it = malloc(cap * sizeof(int64_t));
	const char *what = which ? "grad norm" : "loss";
	double worst = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->tail_noise = NAN;
	if (!va || !vb || !sa || !sb || !it) {
		rc = TS_ENOMEM;
		goto out;
	}
	n = common_values(a, b, which, va, vb, it);
	if (bitwise) {
		/* logs of two formats compare as far as both print: a Megatron
		 * log's %E loss (7 digits) or %.3f grad norm against a JSONL's
		 * full double is the same value when they agree there */
		int p = 17, d = 30;
		char at[96] = "";

		if (strcmp(a->format, b->format) != 0) {
			int pa, da, pb, db;

			printed_digits(a, which, &pa, &da);
			printed_digits(b, which, &pb, &db);
			p = pa < pb ? pa : pb;
			d = da < db ? da : db;
			snprintf(at, sizeof(at), " as both logs print them (%d significant digits or "
				 "%d decimals)", p, d);
		}
		for (size_t i = 0; i < n; i++)
			if (!same_printed(va[i], vb[i], p, d)) {
				out->detail = fmt(res, "bitwise tier (both runs declare determinism): %s "
						  "differs at iteration %lld (%.17g vs %.17g)%s", what,
						  (long long)it[i], va[i], vb[i], at);
				goto out;
			}
		out->passed = n > 0;
		out->skipped = n == 0;
		out->detail = n ? fmt(res, "bitwise tier: %s identical at all %zu common iterations%s",
				      what, n, at)
				: fmt(res, "no common logged %s values", what);
		goto out;
	}
	/* statistical tier: drop the first 1 % (at least 1), need >= 10 points */
	skip = n / 100 + 1;
	if (n < skip + 10) {
		out->skipped = 1;
		out->detail = fmt(res, "%zu common logged %s values; need at least %zu for the "
				  "statistical tier", n, what, skip + 10);
		goto out;
	}
	m = n - skip;
	moving_median(va + skip, m, 9, sa);
	moving_median(vb + skip, m, 9, sb);
	allow = m / 100 > 1 ? m / 100 : 1;
	for (size_t i = 0; i < m; i++) {
		double tol = which ? 0.10 * fabs(sa[i]) : fmax(0.02, loss_rtol(sa[i]) * fabs(sa[i]));
		double dev = fabs(sb[i] - sa[i]);
		if (dev > tol)
			fails++;
		if (dev / (tol > 0 ? tol : 1e-300) > worst) {
			worst = dev / (tol > 0 ? tol : 1e-300);
			worst_i = i;
		}
	}
	if (fails > allow) {
		out->detail = fmt(res, "statistical tier: smoothed %s outside tolerance at %zu of %zu "
				  "iterations (allowed %zu); worst at iteration %lld: %.6g vs %.6g",
				  what, fails, m, allow, (long long)it[skip + worst_i], sb[worst_i],
				  sa[worst_i]);
		goto out;
	}
	if (which) {
		size_t spa = count_spikes(va, n), spb = count_spikes(vb, n);
		if (spa + 1 < spb || spb + 1 < spa) {
			out->detail = fmt(res, "grad-norm spikes (> 5x running median) differ: %zu vs %zu",
					  spa, spb);
			goto out;
		}
		out->passed = 1;
		out->detail = fmt(res, "statistical tier: %zu of %zu smoothed points outside 10 %% "
				  "(allowed %zu); spikes %zu vs %zu", fails, m, allow, spa, spb);
		goto out;
	}
	{
		/* tail: mean of the last 10 % within lim, or within the noise of
		 * the tail's own paired differences (an estimate from more steps
		 * would take in a divergence that starts before the tail) */
		size_t t = m / 10 > 0 ? m / 10 : 1, h = m / 2;
		double ta = ts_stats_mean(va + n - t, t), tb = ts_stats_mean(vb + n - t, t);
		double rel = fabs(tb - ta) / fabs(ta), ref = fabs(ts_stats_mean(va + n - h, h));
		double *d = sa; /* reuse */
		struct ts_ci ci;
		char noise[96] = "";
		int beyond = 1;

		for (size_t i = 0; i < t; i++)
			d[i] = vb[n - t + i] - va[n - t + i];
		if (t >= 2 && ts_stats_ci_mean(d, t, seed, &ci) == 0) {
			at_level(&ci, t, TAIL_BIAS_LEVEL);
			out->tail = t;
			out->tail_noise = (ci.hi - ci.lo) / 2 / fabs(ta);
			beyond = ci.lo > 0 || ci.hi < 0;
			snprintf(noise, sizeof(noise), " (97.5 %% CI of the difference %+.2f %% to %+.2f %%)",
				 100 * ci.lo / fabs(ta), 100 * ci.hi / fabs(ta));
		}
		if (rel > lim && beyond) {
			out->detail = fmt(res, "statistical tier: mean %s of the last %zu iterations "
					  "differs by %.2f %% (limit %.3g %%), beyond its noise%s: %.6g vs "
					  "%.6g", what, t, 100 * rel, 100 * lim, noise, tb, ta);
			goto out;
		}
		/* bias: mean signed difference over the last half */
		for (size_t i = 0; i < h; i++)
			d[i] = vb[n - h + i] - va[n - h + i];
		if (h >= 2 && ts_stats_ci_mean(d, h, seed, &ci) == 0) {
			at_level(&ci, h, TAIL_BIAS_LEVEL);
			int has_zero = ci.lo <= 0 && ci.hi >= 0;
			int within = fabs(ci.lo) <= lim / 2 * ref && fabs(ci.hi) <= lim / 2 * ref;
			if (!has_zero && !within) {
				out->detail = fmt(res, "statistical tier: systematic %s bias over the last "
						  "%zu iterations: mean difference 97.5 %% CI [%.4g, %.4g] "
						  "excludes 0 and exceeds %.3g %%", what, h, ci.lo, ci.hi,
						  100 * lim / 2);
				goto out;
			}
		}
		out->passed = 1;
		out->detail = fmt(res, "statistical tier: %zu of %zu smoothed points outside "
				  "tolerance (allowed %zu); last-10 %% means differ %.3f %%%s; no "
				  "systematic bias", fails, m, allow, 100 * rel,
				  rel > lim ? ", within their noise" : "");
	}
out:
	free(va);
	free(vb);
	free(sa);
	free(sb);
	free(it);
	if (!rc && !out->detail)
		rc = TS_ENOMEM;
	return rc;
}

/* ------------------------------------------------------------ compare */

static int is_true(const char *v)
{
	return v && (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "1") ||
		     !strcmp(v, "yes"));
}

/* The declared variable names a field: "workload.tp", or "tp" for it. */
static int names_field(const char *variable, const char *key)
{
	size_t vn = strlen(variable), kn = strlen(key);

	if (!strcmp(variable, key))
		return 1;
	return kn > vn && key[kn - vn - 1] == '.' && !strcmp(key + kn - vn, variable);
}

static int check_contracts(struct ts_ab_result *res, const struct ts_run *base, size_t nb,
			   const struct ts_run *cand, size_t nc, const struct ts_ab_opts *o)
{
	int oom = 0;
	struct ts_contract_diff *d = NULL;
	size_t n = 0;
	const struct ts_run *sides[2] = { base, cand };
	size_t counts[2] = { nb, nc };
	const char *names[2] = { "baseline", "candidate" };

	for (int s = 0; s < 2; s++)
		for (size_t i = 1; i < counts[s]; i++) {
			if (!sides[s][0].has_contract || !sides[s][i].has_contract)
				continue;
			if (ts_contract_diff(&sides[s][0].contract, &sides[s][i].contract, &d, &n))
				return TS_ENOMEM;
			if (n)
				ADD(res->invalid, fmt(res, "%s repeats differ in their contracts "
						      "(%s: %s vs %s); repeats must be identical",
						      names[s], d[0].key, d[0].a ? d[0].a : "(unknown)",
						      d[0].b ? d[0].b : "(unknown)"));
			free(d);
			d = NULL;
		}
	if (base[0].has_contract != cand[0].has_contract) {
		WARN("contract-missing", fmt(res, "only the %s has a contract: cannot verify that one "
				       "variable changed", base[0].has_contract ? "baseline" : "candidate"));
		if (o->variable)
			WARN("variable-on-trust", fmt(res, "declared variable '%s' taken on trust", o->variable));
		res->variable = o->variable;
		return oom ? TS_ENOMEM : 0;
	}
	if (!base[0].has_contract) {
		res->variable = o->variable;
		return oom ? TS_ENOMEM : 0;
	}
	res->contracts_compared = 1;
	if (ts_contract_diff(&base[0].contract, &cand[0].contract, &d, &n))
		return TS_ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (TS_VEC_PUSH(res->diffs, d[i]))
			oom = 1;
	free(d);
	n = res->diffs.n;
	if (n == 0) {
		WARN("identical-contracts", fmt(res, "the contracts are identical: no declared variable "
				       "changed (an A/A comparison)"));
	} else if (n == 1) {
		res->variable = res->diffs.v[0].key;
		if (o->variable && !names_field(o->variable, res->variable))
			ADD(res->invalid, fmt(res, "declared variable '%s' is not the field that "
					      "differs ('%s')", o->variable, res->variable));
	} else if (!o->allow_multi) {
		struct ts_sb keys;
		ts_sb_init(&keys);
		for (size_t i = 0; i < n; i++)
			ts_sb_addf(&keys, "%s%s", i ? ", " : "", res->diffs.v[i].key);
		ADD(res->invalid, fmt(res, "the contracts differ in %zu fields (%s); an A/B changes "
				      "one variable at a time (--allow-multi to compare anyway)",
				      n, keys.buf));
		ts_sb_release(&keys);
	} else {
		WARN("several-fields-changed", fmt(res, "the contracts differ in %zu fields (--allow-multi): "
				       "the result cannot be credited to one variable", n));
		res->variable = o->variable;
	}
	if (o->variable && n > 1 && o->allow_multi) {
		int found = 0;
		for (size_t i = 0; i < n; i++)
			found |= names_field(o->variable, res->diffs.v[i].key);
		if (!found)
			ADD(res->invalid, fmt(res, "declared variable '%s' does not differ between "
					      "the contracts", o->variable));
	}
	if (base[0].contract.benchmark_only != cand[0].contract.benchmark_only)
		WARN("benchmark-only-mismatch", fmt(res, "baseline is %s but candidate is %s",
				       base[0].contract.benchmark_only ? "benchmark-only" : "training-equivalent",
				       cand[0].contract.benchmark_only ? "benchmark-only" : "training-equivalent"));
	return oom ? TS_ENOMEM : 0;
}

/*
 * What the runs record of where they ran, compared as diff compares two
 * traces' environments (one sentence, ts_context_differs_warn): the
 * contract's environment (version fields as versions, ts_version_same)
 * and world size, the Megatron arguments block's world size and layout,
 * and what the profiler traces record of device and versions (the
 * caller's o->trace_ctx; a field the contracts already name differing is
 * said once, in the contracts' words). The fields named by the declared
 * variable are the change, not context; so is a layout field that is the
 * contracts' one difference. A side whose own traces disagree (the
 * caller's o->mixed_ctx) is a context-mixed warning of its own.
 */
static const struct {
	const char *key, *label;
} ctx_env[] = {
	{ "environment.gpu.name", "device" },
	{ "environment.gpu.vendor", "vendor" },
	{ "environment.gpu.count", "GPU count" },
	{ "environment.gpu.driver", "driver version" },
	{ "environment.cuda.sdk", "CUDA version" },
	{ "environment.musa.sdk", "MUSA version" },
	{ "environment.python", "Python version" },
	{ "environment.torch", "PyTorch version" },
	{ "environment.torch.cuda", "PyTorch's CUDA version" },
	{ "environment.torch.hip", "PyTorch's HIP version" },
	{ "environment.torch.nccl", "PyTorch's NCCL version" },
	{ "environment.nccl.lib", "NCCL library version" },
	{ "environment.torch_musa", "torch_musa version" },
	{ "environment.torch.musa", "torch_musa's MUSA version" },
	{ "environment.torch.mccl", "torch_musa's MCCL version" },
	{ "environment.mccl.lib", "MCCL library version" },
};

enum { CTX_WORLD, CTX_TP, CTX_PP, CTX_VPP, CTX_CP, CTX_EP, CTX_ETP, CTX_MBS, CTX_PREC, CTX_LAYOUT };

static const struct {
	const char *key, *label;
} ctx_layout[CTX_LAYOUT] = {
	{ "workload.device_count", "world size" }, { "workload.tp", "tp" }, { "workload.pp", "pp" },
	{ "workload.vpp", "vpp" }, { "workload.cp", "cp" }, { "workload.ep", "ep" },
	{ "workload.etp", "etp" }, { "workload.micro_batch_size", "micro batch size" },
	{ "workload.precision", "precision" },
};

/* Layout field f of a run's arguments block as text in buf, NULL unstated. */
static const char *layout_value(const struct ts_run *r, int f, char *buf, size_t cap)
{
	const struct ts_model_args *a = &r->rm.args;
	int64_t v = 0;

	if (!r->rm.has_args)
		return NULL;
	switch (f) {
	case CTX_WORLD: v = a->world_size; break;
	case CTX_TP: v = a->tp; break;
	case CTX_PP: v = a->pp; break;
	case CTX_VPP: v = a->vpp; break;
	case CTX_CP: v = a->cp; break;
	case CTX_EP: v = a->ep; break;
	case CTX_ETP: v = a->etp; break;
	case CTX_MBS: v = a->micro_batch; break;
	default:
		return a->fp8[0] ? "fp8" : a->bf16 ? "bf16" : a->fp16 ? "fp16" : "fp32";
	}
	if (v <= 0)
		return NULL;
	snprintf(buf, cap, "%lld", (long long)v);
	return buf;
}

/* A recorded value: NULL when the field is absent or unknown (null). */
static const char *contract_value(const struct ts_run *r, const char *key)
{
	return r->has_contract ? ts_contract_get(&r->contract, key, NULL) : NULL;
}

/* Repeats of one side are one setup: their arguments blocks state the
 * same layout (as their contracts must be identical). */
static int check_repeat_layouts(struct ts_ab_result *res, const struct ts_run *runs, size_t nr,
				const char *side)
{
	int oom = 0;

	for (size_t i = 1; i < nr; i++)
		for (int f = 0; f < CTX_LAYOUT; f++) {
			char ba[24], bb[24];
			const char *a = layout_value(&runs[0], f, ba, sizeof(ba));
			const char *b = layout_value(&runs[i], f, bb, sizeof(bb));

			if (!a || !b || !strcmp(a, b))
				continue;
			ADD(res->invalid, fmt(res, "%s repeats differ in their arguments blocks (%s: %s "
					      "in %s, %s in %s); repeats must be identical", side,
					      ctx_layout[f].label, a, runs[0].path, b, runs[i].path));
			return oom ? TS_ENOMEM : 0;
		}
	return oom ? TS_ENOMEM : 0;
}

static int check_context(struct ts_ab_result *res, const struct ts_run *base, const struct ts_run *cand,
			 const struct ts_ab_opts *o)
{
	struct ts_ctx_change *c;
	char buf[CTX_LAYOUT][2][24];
	size_t n = 0, layout = 0, nenv;
	int oom = 0;

	c = calloc(sizeof(ctx_env) / sizeof(ctx_env[0]) + o->ntrace_ctx + CTX_LAYOUT, sizeof(*c));
	if (!c)
		return TS_ENOMEM;

	for (size_t f = 0; f < sizeof(ctx_env) / sizeof(ctx_env[0]); f++) {
		const char *a = contract_value(base, ctx_env[f].key);
		const char *b = contract_value(cand, ctx_env[f].key);

		if (!a || !b || (o->variable && names_field(o->variable, ctx_env[f].key)) ||
		    (ts_contract_key_is_version(ctx_env[f].key) ? ts_version_same(a, b) : !strcmp(a, b)))
			continue;
		c[n++] = (struct ts_ctx_change){ ctx_env[f].label, a, b, ctx_env[f].key };
	}
	nenv = n;
	for (size_t t = 0; t < o->ntrace_ctx; t++) {
		const struct ts_ctx_change *x = &o->trace_ctx[t];
		int said = 0;

		for (size_t k = 0; k < nenv && !said; k++)
			said = !strcmp(c[k].label, x->label) || (x->key && !strcmp(c[k].key, x->key));
		if (!said && !(o->variable && x->key && names_field(o->variable, x->key)))
			c[n++] = *x;
	}
	for (int f = 0; f < CTX_LAYOUT; f++) {
		/* the arguments block, else the contract (a contract made
		 * --from-log holds the same) */
		const char *a = layout_value(base, f, buf[f][0], sizeof(buf[f][0]));
		const char *b = layout_value(cand, f, buf[f][1], sizeof(buf[f][1]));

		a = a ? a : contract_value(base, ctx_layout[f].key);
		b = b ? b : contract_value(cand, ctx_layout[f].key);
		if (!a || !b || !strcmp(a, b) ||
		    (res->variable && names_field(res->variable, ctx_layout[f].key)))
			continue;
		c[n++] = (struct ts_ctx_change){ ctx_layout[f].label, a, b, ctx_layout[f].key };
		layout++;
	}
	if (ts_context_differs_warn(&res->warnings, c, n) ||
	    ts_context_mixed_warn(&res->warnings, "baseline", o->mixed_ctx[0], o->nmixed_ctx[0]) ||
	    ts_context_mixed_warn(&res->warnings, "candidate", o->mixed_ctx[1], o->nmixed_ctx[1])) {
		free(c);
		return TS_ENOMEM;
	}
	/* flops-memory-workflow 5.4 item 1: more than the one changed field
	 * is no A/B (contracts that differ in several are refused by
	 * check_contracts already) */
	if (!o->allow_multi && !(res->contracts_compared && res->diffs.n > 1) &&
	    layout + (res->variable ? 1 : 0) > 1) {
		struct ts_sb sb;
		ts_sb_init(&sb);
		for (size_t k = n - layout; k < n; k++)
			ts_sb_addf(&sb, "%s%s %s vs %s", k > n - layout ? ", " : "", c[k].label, c[k].a,
				   c[k].b);
		ADD(res->invalid, fmt(res, "the arguments blocks differ in %zu field%s (%s)%s%s%s; an "
				      "A/B changes one variable at a time (--allow-multi to compare "
				      "anyway)", layout, layout == 1 ? "" : "s", sb.failed ? "" : sb.buf,
				      res->variable ? " besides the variable '" : "",
				      res->variable ? res->variable : "", res->variable ? "'" : ""));
		ts_sb_release(&sb);
	}
	free(c);
	return oom ? TS_ENOMEM : 0;
}

/* Step times of r at the given (ascending) iterations, written to x. */
static size_t values_at(const struct ts_run *r, const int64_t *it, size_t n, double *x)
{
	size_t i = 0, k = 0, m = 0;

	while (i < r->pts.n && k < n) {
		if (r->pts.v[i].iteration < it[k]) {
			i++;
		} else if (r->pts.v[i].iteration > it[k]) {
			k++;
		} else {
			x[m++] = r->pts.v[i].step_ms;
			i++, k++;
		}
	}
	return m;
}

/* One run over the paired iterations (the matched window's usable steps). */
static int summarize(const struct ts_run *r, const int64_t *it, size_t npairs, uint64_t seed,
		     struct ts_ab_run_summary *s)
{
	double *x = malloc((npairs + 1) * sizeof(double));
	size_t n;
	struct ts_ci ci;

	if (!x)
		return TS_ENOMEM;
	memset(s, 0, sizeof(*s));
	s->path = r->path;
	s->label = r->has_contract ? (r->contract.benchmark_only ? "benchmark-only"
							       : "training-equivalent") : NULL;
	s->steps_logged = r->pts.n;
	n = values_at(r, it, npairs, x);
	s->window_steps = n;
	s->mean_ms = ts_stats_mean(x, n);
	s->cv = ts_stats_cv(x, n);
	s->ci95_low_ms = s->ci95_high_ms = NAN;
	s->ci_method = "none";
	if (n >= 2 && ts_stats_ci_mean(x, n, seed, &ci) == 0 && !ts_ci_positive(&ci)) {
		s->ci95_low_ms = ci.lo;
		s->ci95_high_ms = ci.hi;
		s->ci_method = ts_ci_method_name(ci.method);
	}
	s->median_ms = n ? median_of(x, n) : NAN;
	ts_run_health(r, INT64_MIN, INT64_MAX, &s->nonfinite, &s->skipped);
	s->loss_verdict = r->health.verdict;
	s->loss_cause = r->health.cause;
	s->first_bad_iteration = r->health.first_bad_iteration;
	s->first_bad_possible = r->health.first_bad_possible;
	s->peak_dev_bytes = r->peak_dev_bytes;
	s->peak_host_bytes = r->peak_host_bytes;
	s->final_loss = NAN;
	s->final_loss_iteration = TS_NO_INT;
	for (size_t i = r->pts.n; i-- > 0;)
		if (isfinite(r->pts.v[i].loss)) {
			s->final_loss = r->pts.v[i].loss;
			s->final_loss_iteration = r->pts.v[i].iteration;
			break;
		}
	free(x);
	return 0;
}

static double side_peak(const struct ts_ab_run_summary *s, size_t n, int dev)
{
	double m = NAN;

	for (size_t i = 0; i < n; i++) {
		double v = dev ? s[i].peak_dev_bytes : s[i].peak_host_bytes;
		if (isfinite(v) && (isnan(m) || v > m))
			m = v;
	}
	return m;
}

static int add_check(struct ts_ab_result *res, const char *name, int passed, int skipped,
		     const char *detail)
{
	struct ts_ab_check c = { name, passed, skipped, detail };
	int oom = 0;

	if (TS_VEC_PUSH(res->checks, c))
		return TS_ENOMEM;
	if (!passed && !skipped)
		ADD(res->reasons, fmt(res, "%s: %s", name, detail));
	return oom ? TS_ENOMEM : 0;
}

static int correctness(struct ts_ab_result *res, const struct ts_run *base, size_t nb,
		       const struct ts_run *cand, size_t nc, const struct ts_ab_opts *o)
{
	int rc = 0, bitwise;
	struct ts_sb sb;

	ts_sb_init(&sb);
	/* NaN/Inf: any non-finite loss or grad norm anywhere fails, and so
	 * does a loss that stops being logged (the loss-health verdict) */
	{
		int64_t tb = 0, tc = 0;
		const struct ts_ab_run_summary *bad = NULL;
		const struct ts_run *bad_run = NULL;
		char at[96], who[1200];

		for (size_t i = 0; i < nb + nc; i++) {
			const struct ts_ab_run_summary *s = i < nb ? &res->base.v[i] : &res->cand.v[i - nb];
			if (i < nb)
				tb += s->nonfinite;
			else
				tc += s->nonfinite;
			if (!bad && (s->loss_verdict == TS_LOSS_NONFINITE ||
				     (s->loss_verdict == TS_LOSS_MISSING &&
				      s->loss_cause == TS_LOSS_CAUSE_LOSS_DROPPED))) {
				bad = s;
				bad_run = i < nb ? &base[i] : &cand[i - nb];
			}
		}
		if (bad)
			rc |= add_check(res, "nan_inf", 0, 0,
					fmt(res, "loss health of %s: %s %s (%s%s); "
					    "non-finite steps: baseline %lld, candidate %lld",
					    bad->path, ts_loss_verdict_name(bad->loss_verdict),
					    ts_runmodel_span_words(&bad_run->rm, "from", "from within",
								   bad->first_bad_possible,
								   bad->first_bad_iteration, at,
								   sizeof(at)),
					    ts_loss_cause_name(bad->loss_cause),
					    ts_runmodel_first_bad_words(&bad_run->rm, who, sizeof(who)),
					    (long long)tb, (long long)tc));
		else
			rc |= add_check(res, "nan_inf", tb == 0 && tc == 0, 0,
					fmt(res, "non-finite loss/grad-norm or NaN iterations: baseline "
					    "%lld, candidate %lld (must be 0 and equal)", (long long)tb,
					    (long long)tc));
	}
	/* skipped: every run the same count */
	{
		int same = 1;
		for (size_t i = 0; i < nb; i++)
			same &= res->base.v[i].skipped == res->base.v[0].skipped;
		for (size_t i = 0; i < nc; i++)
			same &= res->cand.v[i].skipped == res->base.v[0].skipped;
		rc |= add_check(res, "skipped", same, 0,
				fmt(res, "skipped iterations: baseline %lld, candidate %lld (must be equal)",
				    (long long)res->base.v[0].skipped, (long long)res->cand.v[0].skipped));
	}
	bitwise = base[0].has_contract && cand[0].has_contract &&
		  is_true(ts_contract_get(&base[0].contract, "workload.deterministic", NULL)) &&
		  is_true(ts_contract_get(&cand[0].contract, "workload.deterministic", NULL));
	res->loss_tier = bitwise ? "bitwise" : "statistical";
	for (int which = 0; which < 2 && !rc; which++) {
		int passed = 1, skipped = 1;
		ts_sb_reset(&sb);
		double noisiest = NAN;
		size_t tail = 0;
		for (size_t i = 0; i < nc; i++) {
			struct curve_out co;
			if ((rc = curve_check(res, &base[0], &cand[i], which, bitwise, o->loss_tolerance,
					      o->seed, &co)))
				break;
			if (co.tail_noise > noisiest || (isfinite(co.tail_noise) && !isfinite(noisiest))) {
				noisiest = co.tail_noise;
				tail = co.tail;
			}
			if (!co.skipped) {
				skipped = 0;
				passed &= co.passed;
			}
			if (nc > 1)
				ts_sb_addf(&sb, "%scandidate %zu: %s", i ? "; " : "", i + 1, co.detail);
			else
				ts_sb_adds(&sb, co.detail);
		}
		if (!rc)
			rc = add_check(res, which ? "grad_norm_curve" : "loss_curve", passed && !skipped,
				       skipped, fmt(res, "%s", sb.buf));
		if (!rc && skipped)
			rc = ts_warnings_add(&res->warnings, "curve-not-compared", NULL, -1, TS_NO_INT,
					     "The %s curve is not compared: %s.",
					     which ? "grad-norm" : "loss", sb.buf);
		if (!rc && noisiest > o->loss_tolerance)
			rc = ts_warnings_add(&res->warnings, "loss-noisy", NULL, -1, TS_NO_INT,
					     "The per-step loss is too noisy for the %.3g %% tail limit: "
					     "the last %zu iterations' mean difference has a 97.5 %% "
					     "half-width of %.2f %%, so the tail check fails only a difference beyond "
					     "that. Compare more iterations, or set --loss-tolerance from "
					     "two baseline runs of the same code (ab-stats A5).",
					     100 * o->loss_tolerance, tail, 100 * noisiest);
	}
	/* peak memory: device memory may not grow beyond the tolerance; host RSS
	 * (CPU runs, profiler buffers included) is reported only */
	if (!rc) {
		double pb = side_peak(res->base.v, nb, 1), pc = side_peak(res->cand.v, nc, 1);
		if (isfinite(pb) && isfinite(pc) && pb > 0) {
			double ch = pc / pb - 1;
			rc = add_check(res, "peak_memory", ch <= o->mem_tolerance, 0,
				       fmt(res, "peak device memory %.0f -> %.0f bytes (%+.1f %%, limit "
					   "+%.1f %%)", pb, pc, 100 * ch, 100 * o->mem_tolerance));
		} else {
			double hb = side_peak(res->base.v, nb, 0), hc = side_peak(res->cand.v, nc, 0);
			if (isfinite(hb) && isfinite(hc) && hb > 0)
				rc = add_check(res, "peak_memory", 1, 1,
					       fmt(res, "no device memory logged; peak host RSS %.0f -> "
						   "%.0f bytes (%+.1f %%), reported only (it includes "
						   "profiler buffers)", hb, hc, 100 * (hc / hb - 1)));
			else
				rc = add_check(res, "peak_memory", 1, 1,
					       fmt(res, "no peak memory logged on both sides"));
		}
	}
	ts_sb_release(&sb);
	if (rc)
		return TS_ENOMEM;
	res->correctness_passed = 1;
	for (size_t i = 0; i < res->checks.n; i++)
		if (!res->checks.v[i].passed && !res->checks.v[i].skipped)
			res->correctness_passed = 0;
	return 0;
}

/* Ratio interval from run means (Case R / Case M). */
static int run_level(struct ts_ab_result *res, size_t nb, size_t nc)
{
	double *x = malloc(nb * sizeof(double)), *y = malloc(nc * sizeof(double));
	int rc = 0;

	if (!x || !y) {
		rc = TS_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nb; i++)
		x[i] = log(res->base.v[i].mean_ms);
	for (size_t i = 0; i < nc; i++)
		y[i] = log(res->cand.v[i].mean_ms);
	if (nb >= 4 && nc >= 4) {
		size_t N = nb * nc, k, q = 0;
		double *dd = malloc(N * sizeof(double));
		if (!dd) {
			rc = TS_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < nb; i++)
			for (size_t j = 0; j < nc; j++)
				dd[q++] = y[j] - x[i];
		ts_sort(dd, N, sizeof(double), dbl_cmp);
		k = mw_k(nb, nc, 0.025);
		res->ratio = exp(ts_stats_quantile_sorted(dd, N, 0.5));
		res->ci95_low = k ? exp(dd[k - 1]) : 0;
		res->ci95_high = k ? exp(dd[N - k]) : INFINITY;
		res->method = "runs as replicates: Hodges-Lehmann shift of log run means, exact "
			      "Mann-Whitney 95 % interval";
		free(dd);
	} else {
		struct ts_ab_ratio w;
		for (size_t i = 0; i < nb; i++)
			x[i] = res->base.v[i].mean_ms;
		for (size_t i = 0; i < nc; i++)
			y[i] = res->cand.v[i].mean_ms;
		ts_ab_welch_log_ratio(x, nb, y, nc, &w);
		res->ratio = w.estimate;
		res->ci95_low = w.ci95_low;
		res->ci95_high = w.ci95_high;
		res->method = "runs as replicates: Welch t on log run means";
	}
out:
	free(x);
	free(y);
	return rc;
}

/* The same runs on both sides (a run compared with itself): their levels
 * cannot differ, so no run-to-run term applies. */
static int same_runs(const struct ts_run *base, size_t nb, const struct ts_run *cand, size_t nc)
{
	if (nb != nc)
		return 0;
	for (size_t i = 0; i < nb; i++)
		if (strcmp(base[i].path, cand[i].path) != 0)
			return 0;
	return 1;
}

/* ------------------------------------------------------------ phases */

/* 1 when some run of runs logs phase k at one of the n iterations it. */
static int side_logs_phase(const struct ts_run *runs, size_t nr, int k, const int64_t *it,
			   size_t n)
{
	for (size_t i = 0; i < nr; i++)
		for (size_t j = 0; j < n; j++) {
			const struct ts_run_point *q = find_point(&runs[i], it[j]);
			if (q && isfinite(q->phase_ms[k]))
				return 1;
		}
	return 0;
}

/* Mean of phase k over the paired iterations where every run of one side
 * logs it (per-iteration means over the runs), NAN when none does. */
static double side_phase_mean(const struct ts_run *runs, size_t nr, int k, const int64_t *it,
			      size_t n)
{
	double sum = 0;
	size_t m = 0;

	for (size_t j = 0; j < n; j++) {
		double x = 0;
		size_t have = 0;
		for (size_t i = 0; i < nr; i++) {
			const struct ts_run_point *q = find_point(&runs[i], it[j]);
			if (q && isfinite(q->phase_ms[k])) {
				x += q->phase_ms[k];
				have++;
			}
		}
		if (have == nr) {
			sum += x / (double)nr;
			m++;
		}
	}
	return m ? sum / (double)m : NAN;
}

/*
 * The values of phase k at the paired iterations it[0..n) where every run
 * of both sides logs it: v[r * n + m] for run r (baseline runs first) at
 * the m-th such iteration. Returns the count m.
 */
static size_t phase_values(const struct ts_run *base, size_t nb, const struct ts_run *cand,
			   size_t nc, int k, const int64_t *it, size_t n, double *v)
{
	size_t m = 0;

	for (size_t j = 0; j < n; j++) {
		int all = 1;
		for (size_t r = 0; r < nb + nc && all; r++) {
			const struct ts_run_point *q =
				find_point(r < nb ? &base[r] : &cand[r - nb], it[j]);
			all = q && isfinite(q->phase_ms[k]);
		}
		if (!all)
			continue;
		for (size_t r = 0; r < nb + nc; r++)
			v[r * n + m] = find_point(r < nb ? &base[r] : &cand[r - nb], it[j])->phase_ms[k];
		m++;
	}
	return m;
}

/* The interval of one phase at `level`, built as the total's is. v, m and
 * n as phase_values leaves them; a and b receive the per-iteration side
 * means. */
static int phase_interval(struct ts_ab_result *res, const struct ts_run *base, size_t nb,
			  const struct ts_run *cand, size_t nc, const struct ts_ab_opts *o,
			  const double *v, size_t n, size_t m, double level, double *a, double *b,
			  struct ts_ab_phase *ph)
{
	struct ts_ab_ratio pr;
	double alpha = 1 - level;
	int rc;

	for (size_t j = 0; j < m; j++) {
		a[j] = b[j] = 0;
		for (size_t r = 0; r < nb; r++)
			a[j] += v[r * n + j] / (double)nb;
		for (size_t r = nb; r < nb + nc; r++)
			b[j] += v[r * n + j] / (double)nc;
	}
	ph->base_mean_ms = ts_stats_mean(a, m);
	ph->cand_mean_ms = ts_stats_mean(b, m);
	if ((rc = paired_ratio(a, b, m, o->seed, level, &pr)))
		return rc;
	ph->ratio = pr.estimate;
	ph->ci_low = pr.ci95_low;
	ph->ci_high = pr.ci95_high;
	ph->method = fmt(res, "paired by iteration, %s", pr.method ? pr.method : "too few steps");
	if (res->repeats) {
		/* runs as replicates: the phase's mean in each run over the m steps */
		double *x = malloc((nb + nc) * sizeof(double)), *y, lo, hi, est;
		size_t mb = nb, mc = nc;
		int positive = 1;

		if (!x)
			return TS_ENOMEM;
		y = x + nb;
		for (size_t r = 0; r < mb; r++)
			positive &= (x[r] = ts_stats_mean(v + r * n, m)) > 0;
		for (size_t r = 0; r < mc; r++)
			positive &= (y[r] = ts_stats_mean(v + (nb + r) * n, m)) > 0;
		if (!positive) {
			free(x);
			goto run_cv; /* a zero run mean has no log: keep the paired interval */
		}
		/* >= 4 runs per side: the exact Mann-Whitney interval, where it
		 * exists at this level (4 vs 4 has none beyond 97.1 %) */
		size_t k = mb >= 4 && mc >= 4 ? mw_k(mb, mc, alpha / 2) : 0;
		if (k) {
			size_t N = mb * mc, q = 0;
			double *dd = malloc(N * sizeof(double));
			if (!dd) {
				free(x);
				return TS_ENOMEM;
			}
			for (size_t i = 0; i < mb; i++)
				for (size_t j = 0; j < mc; j++)
					dd[q++] = log(y[j]) - log(x[i]);
			ts_sort(dd, N, sizeof(double), dbl_cmp);
			est = exp(ts_stats_quantile_sorted(dd, N, 0.5));
			lo = exp(dd[k - 1]);
			hi = exp(dd[N - k]);
			free(dd);
			ph->ratio = est;
			ph->ci_low = lo;
			ph->ci_high = hi;
			ph->method = "runs as replicates: Hodges-Lehmann shift of log run means, "
				     "exact Mann-Whitney interval";
		} else {
			struct ts_ab_ratio w;
			welch_log_ratio(x, mb, y, mc, 1 - alpha / 2, &w);
			/* 2-3 runs: as the total, the paired interval when wider;
			 * >= 4 runs: the run means alone */
			if ((mb >= 4 && mc >= 4) || !(ph->ci_high - ph->ci_low > w.ci95_high - w.ci95_low)) {
				ph->ratio = w.estimate;
				ph->ci_low = w.ci95_low;
				ph->ci_high = w.ci95_high;
				ph->method = "runs as replicates: Welch t on log run means";
			} else {
				ph->method = fmt(res, "paired by iteration over the per-iteration means "
						 "of the repeats, %s (wider than Welch t)",
						 pr.method ? pr.method : "too few steps");
			}
		}
		free(x);
		return 0;
	}
run_cv:
	if (!res->repeats && o->run_cv > 0 && !same_runs(base, nb, cand, nc) &&
	    isfinite(ph->ratio)) {
		/* the stated run-to-run CV, taken as the phase's own relative CV */
		double r = ph->ratio, lo = ph->ci_low, hi = ph->ci_high;
		double u = ts_stats_norm_quantile(1 - alpha / 2) * r * o->run_cv *
			   sqrt(1.0 / (double)nb + 1.0 / (double)nc);
		ph->ci_low = r - sqrt((r - lo) * (r - lo) + u * u);
		ph->ci_high = r + sqrt((hi - r) * (hi - r) + u * u);
		ph->method = fmt(res, "%s, plus the assumed run-to-run CV of %.2f %% (--run-cv)",
				 ph->method, 100 * o->run_cv);
	}
	return 0;
}

/*
 * Per-phase attribution (struct ts_ab_phase): every phase some run logs in
 * the paired iterations it[0..n) is listed; those both sides log at >= 10
 * common paired iterations with a baseline mean above zero are compared,
 * each at the Bonferroni level 1 - 0.05 / m over the m compared.
 */
static int compare_phases(struct ts_ab_result *res, const struct ts_run *base, size_t nb,
			  const struct ts_run *cand, size_t nc, const struct ts_ab_opts *o,
			  const int64_t *it, size_t n)
{
	double *v = malloc(((nb + nc) * n + 1) * sizeof(double));
	double *a = malloc((n + 1) * sizeof(double)), *b = malloc((n + 1) * sizeof(double));
	size_t cnt[TS_PHASE_COUNT] = { 0 }, m = 0;
	int rc = TS_ENOMEM;

	if (!v || !a || !b)
		goto out;
	/* which phases, and the family size */
	for (int k = 0; k < TS_PHASE_COUNT; k++) {
		struct ts_ab_phase ph;
		size_t c;

		memset(&ph, 0, sizeof(ph));
		ph.phase = k;
		ph.name = ts_ab_phase_name(k);
		ph.on_base = side_logs_phase(base, nb, k, it, n);
		ph.on_cand = side_logs_phase(cand, nc, k, it, n);
		ph.base_mean_ms = ph.cand_mean_ms = ph.share = NAN;
		ph.ratio = ph.ci_low = ph.ci_high = ph.band = NAN;
		ph.verdict = TS_AB_INVALID;
		if (!ph.on_base && !ph.on_cand)
			continue;
		c = ph.on_base && ph.on_cand ? phase_values(base, nb, cand, nc, k, it, n, v) : 0;
		ph.pairs = c;
		if (!ph.on_base || !ph.on_cand) {
			ph.reason = ph.on_base ? "logged by the baseline only"
					       : "logged by the candidate only";
		} else if (c < 10) {
			ph.reason = fmt(res, "only %zu of the %zu paired steps carry it in every run; "
					"need at least 10", c, n);
			if (!ph.reason)
				goto out;
		} else {
			double sum = 0;
			for (size_t r = 0; r < nb; r++)
				for (size_t j = 0; j < c; j++)
					sum += v[r * n + j];
			if (!(sum > 0))
				ph.reason = "0 ms in the baseline: no ratio";
		}
		if (!ph.reason)
			m++;
		else {
			/* what the side(s) logging it measured, for the reader */
			if (ph.on_base)
				ph.base_mean_ms = side_phase_mean(base, nb, k, it, n);
			if (ph.on_cand)
				ph.cand_mean_ms = side_phase_mean(cand, nc, k, it, n);
		}
		cnt[k] = c;
		if (TS_VEC_PUSH(res->phases, ph))
			goto out;
	}
	res->phases_compared = m;
	res->phase_ci_level = m ? 1 - 0.05 / (double)m : NAN;
	for (size_t i = 0; i < res->phases.n; i++) {
		struct ts_ab_phase *ph = &res->phases.v[i];

		if (ph->reason)
			continue;
		(void)phase_values(base, nb, cand, nc, ph->phase, it, n, v);
		if ((rc = phase_interval(res, base, nb, cand, nc, o, v, n, cnt[ph->phase],
					 res->phase_ci_level, a, b, ph)))
			goto out;
		rc = TS_ENOMEM;
		if (isfinite(ph->ci_low) && ph->ci_low < 0)
			ph->ci_low = 0; /* a time is never negative */
		ph->share = ph->base_mean_ms / res->base_mean_ms;
		/* the total's band in step time: a phase of share s moves the
		 * step by s * (ratio - 1) */
		ph->band = res->band / ph->share;
		ph->verdict = ts_ab_decide(ph->ci_low, ph->ci_high, ph->band);
	}
	rc = 0;
out:
	free(v);
	free(a);
	free(b);
	return rc;
}

/* The telemetry captures of one side's runs, read into one capture. An
 * unreadable capture is left out (the comparison does not depend on it)
 * with an unused-input warning; a capture's own warnings (a cut record,
 * ...) become the comparison's, naming it. Returns 0 or TS_ENOMEM. */
static int side_telemetry(struct ts_ab_result *res, const struct ts_run *r, size_t n,
			  struct ts_telemetry *t)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < r[i].rm.inputs.n; k++) {
			const char *path = r[i].rm.inputs.v[k].path;
			size_t before = t->notes.v.n;
			struct ts_err e;

			if (r[i].rm.inputs.v[k].role != TS_ROLE_TELEMETRY)
				continue;
			ts_err_init(&e);
			if (ts_tele_read(t, path, NULL, &e)) {
				rc |= ts_warnings_add(&res->warnings, "unused-input", path, e.offset,
						      TS_NO_INT, "%s: telemetry capture left out (%s)",
						      path, e.msg);
				continue;
			}
			rc |= ts_tele_notes_warn(t, before, path, &res->warnings);
		}
	ts_tele_match_gpus(t); /* once, all captures read */
	rc |= ts_tele_host_warn(t, &res->warnings);
	return rc ? TS_ENOMEM : 0;
}

/* Confounds (telemetry.h): the two sides ran at a different power limit,
 * clock, temperature or on other GPUs. Returns 0 or TS_ENOMEM. */
static int telemetry_confounds(struct ts_ab_result *res, const struct ts_run *base, size_t nb,
			       const struct ts_run *cand, size_t nc)
{
	struct ts_telemetry ta, tc;
	struct ts_tele_gpu_summary *sa = NULL, *sc = NULL;
	struct ts_tele_finding f[8];
	struct ts_tele_dropped dropped;
	int rc = 0;

	ts_tele_init(&ta);
	ts_tele_init(&tc);
	if (side_telemetry(res, base, nb, &ta) || side_telemetry(res, cand, nc, &tc)) {
		rc = TS_ENOMEM;
		goto out;
	}
	if (ta.gpus.n && tc.gpus.n) {
		sa = calloc(ta.gpus.n, sizeof(*sa));
		sc = calloc(tc.gpus.n, sizeof(*sc));
		if (!sa || !sc) {
			rc = TS_ENOMEM;
			goto out;
		}
		ts_tele_summarize(&ta, sa);
		ts_tele_summarize(&tc, sc);
		size_t nf = ts_tele_confounds(&ta, sa, &tc, sc, f, 8, &dropped);
		for (size_t i = 0; i < nf && !rc; i++)
			rc = ts_warnings_add(&res->warnings, "telemetry-confound", NULL, -1, TS_NO_INT,
					     "%s.", f[i].msg);
		if (!rc)
			rc = ts_tele_dropped_warn(&dropped, nf, "telemetry confounds", &res->warnings);
	}
out:
	free(sa);
	free(sc);
	ts_tele_release(&ta);
	ts_tele_release(&tc);
	return rc;
}

int ts_ab_compare(const struct ts_run *base, size_t nb, const struct ts_run *cand, size_t nc,
		  const struct ts_ab_opts *o, struct ts_ab_result *res, struct ts_err *err)
{
	int64_t first = INT64_MIN, last = INT64_MAX, *pit = NULL;
	int64_t wf = o->win_first, wl = o->win_last;
	const struct ts_run *latest = base;
	char proposal[1024] = "";
	double *pa = NULL, *pb = NULL;
	size_t npairs = 0;
	int oom = 0, rc = 0;

	if (!nb || !nc)
		return ts_err_set(err, TS_EUSAGE, "need at least one baseline and one candidate run");
	res->repeats = nb >= 2 && nc >= 2;
	res->band = o->band >= 0 ? o->band : res->repeats ? 0.01 : 0.02;
	if ((rc = check_contracts(res, base, nb, cand, nc, o)) || (rc = check_context(res, base, cand, o)) ||
	    (rc = check_repeat_layouts(res, base, nb, "baseline")) ||
	    (rc = check_repeat_layouts(res, cand, nc, "candidate")))
		goto oom;
	/* a repeat is a separate run: the same run twice would fake certainty */
	for (size_t s = 0; s < 2; s++) {
		const struct ts_run *runs = s ? cand : base;
		size_t nr = s ? nc : nb;
		for (size_t i = 0; i < nr; i++)
			for (size_t k = i + 1; k < nr; k++)
				if (strcmp(runs[i].path, runs[k].path) == 0)
					ADD(res->invalid, fmt(res, "%s is given twice as a %s repeat",
							      runs[i].path, s ? "candidate" : "baseline"));
	}
	/* same batch shape on both sides */
	if (base[0].global_batch > 0 && cand[0].global_batch > 0 &&
	    base[0].global_batch != cand[0].global_batch && !o->allow_multi)
		ADD(res->invalid, fmt(res, "global batch differs: %lld vs %lld sequences per step",
				      (long long)base[0].global_batch, (long long)cand[0].global_batch));
	/* a record is one step on one side and the mean of N on the other:
	 * their times and losses are not comparable pair by pair */
	{
		int64_t base_every = base[0].log_interval;

		for (size_t i = 1; i < nb + nc; i++) {
			const struct ts_run *r = i < nb ? &base[i] : &cand[i - nb];
			int64_t every = r->log_interval;

			if (base_every > 0 && every > 0 && base_every != every) {
				ADD(res->invalid, fmt(res, "the runs log at different intervals: %s "
						      "every %lld iteration(s), %s every %lld (a record "
						      "is the mean of its interval); log both with the "
						      "same --log-interval", base[0].path,
						      (long long)base_every, r->path, (long long)every));
				break;
			}
		}
	}
	/* the same work per step: the steps analysis's tokens per step (global
	 * batch x seq_length from the arguments block or --seq, else the
	 * logged tokens), however each side states it */
	if (!o->allow_multi) {
		const struct ts_run *unknown = NULL, *known = NULL;

		for (size_t i = 0; i < nb + nc; i++) {
			const struct ts_run *r = i < nb ? &base[i] : &cand[i - nb];
			double t = run_tokens(r);

			if (!(t > 0)) {
				unknown = unknown ? unknown : r;
				continue;
			}
			if (!known) {
				known = r;
			} else if (fabs(t - run_tokens(known)) > 1e-3 * run_tokens(known)) {
				ADD(res->invalid, fmt(res, "tokens per step differ: %.0f (%s) vs %.0f "
						      "(%s): a step does different work, so step times "
						      "do not compare", run_tokens(known), known->path,
						      t, r->path));
				break;
			}
		}
		if (known && unknown)
			WARN("tokens-unchecked",
			     fmt(res, "%s states no tokens per step (no global batch and seq_length, "
				 "nor logged tokens) while %s does %.0f: whether a step does the same "
				 "work on both sides is not checked (give --seq, or log tokens)",
				 unknown->path, known->path, run_tokens(known)));
	}
	/* a window declared in the baseline contract (workload.steady_window)
	 * stands unless --window overrides it */
	if (wf == TS_WIN_AUTO && base[0].has_contract &&
	    ts_window_parse(ts_contract_get(&base[0].contract, "workload.steady_window", NULL),
			    &wf, &wl) == 0)
		WARN("window-from-contract", fmt(res, "window %lld-%lld declared by the baseline contract",
				       (long long)wf, (long long)wl));
	/* matched window: the intersection of every run's steady window */
	for (size_t s = 0; s < 2; s++) {
		const struct ts_run *runs = s ? cand : base;
		size_t nr = s ? nc : nb;
		for (size_t i = 0; i < nr; i++) {
			struct ts_window w;
			struct ts_err werr;
			ts_err_init(&werr);
			if (ts_run_window(&runs[i], wf, wl, &w, &werr)) {
				ADD(res->invalid, fmt(res, "%s", werr.msg[0] ? werr.msg : "no window"));
				continue;
			}
			/* a loaded run's own warnings already say so */
			if (!w.steady && !runs[i].rm.have_steps)
				WARN("no-steady-state", fmt(res, "%s: MSER-5 finds no steady state (it would "
						       "drop more than half the steps)", runs[i].path));
			if (w.first > first) {
				first = w.first;
				latest = &runs[i];
			}
			if (w.last < last)
				last = w.last;
		}
	}
	if (oom)
		goto oom;
	if (!res->invalid.n && first > last) {
		if ((rc = propose_window(base, nb, cand, nc, first, latest, proposal, sizeof(proposal))))
			goto oom;
		ADD(res->invalid, fmt(res, "the steady windows do not overlap (each run's own is "
				      "`trainscope steps RUN`'s)%s", proposal[0] ? proposal :
				      "; declare a common one with --window FIRST:LAST"));
	}
	/* ab-stats A4 step 0: a step index missing inside the window fails
	 * the comparison (a lost stretch of log is no steady state) */
	for (size_t i = 0; !res->invalid.n && i < nb + nc; i++) {
		const struct ts_run *r = i < nb ? &base[i] : &cand[i - nb];
		int64_t every = r->log_interval, prev = TS_NO_INT;

		for (size_t k = 0; k < r->pts.n; k++) {
			int64_t it = r->pts.v[k].iteration;

			if (!ts_run_point_in_window(r, k, first, last))
				continue;
			if (prev != TS_NO_INT && every > 0 && it - prev > every) {
				ADD(res->invalid, fmt(res, "%s logs no step between iterations %lld and "
						      "%lld, inside the matched window %lld-%lld: a "
						      "missing step fails the comparison; declare a "
						      "window without the gap (--window)", r->path,
						      (long long)prev, (long long)it, (long long)first,
						      (long long)last));
				break;
			}
			prev = it;
		}
	}
	res->win_first = first;
	res->win_last = last;
	if (oom)
		goto oom;
	if (res->invalid.n) {
		res->verdict = TS_AB_INVALID;
		return 0;
	}
	/* runs that end apart are compared over the common part only, and
	 * their final losses are of different iterations */
	{
		const struct ts_run *lo = NULL, *hi = NULL;
		int64_t end_lo = INT64_MAX, end_hi = INT64_MIN;

		for (size_t i = 0; i < nb + nc; i++) {
			const struct ts_run *r = i < nb ? &base[i] : &cand[i - nb];
			int64_t end = r->pts.n ? r->pts.v[r->pts.n - 1].iteration : TS_NO_INT;

			if (end == TS_NO_INT)
				continue;
			if (end < end_lo)
				lo = r, end_lo = end;
			if (end > end_hi)
				hi = r, end_hi = end;
		}
		if (lo && end_hi - end_lo > hi->log_interval)
			WARN("runs-end-apart",
			     fmt(res, "the runs end at different iterations (%s at %lld, %s at %lld): "
				 "they are compared over %lld-%lld only, and their final losses "
				 "are of different iterations", lo->path, (long long)end_lo, hi->path,
				 (long long)end_hi, (long long)first, (long long)last));
	}
	/* paired iterations: usable in every run of both sides */
	if ((rc = paired_steps(base, nb, cand, nc, first, last, &pit, &pa, &pb, &npairs)))
		goto oom;
	res->win_steps = npairs;
	if (npairs < 10) {
		if (wf == TS_WIN_AUTO &&
		    (rc = propose_window(base, nb, cand, nc, first, latest, proposal, sizeof(proposal))))
			goto oom;
		ADD(res->invalid, fmt(res, "only %zu iterations of the matched window %lld-%lld are "
				      "usable in every run; need at least 10%s", npairs,
				      (long long)first, (long long)last, proposal));
		res->verdict = TS_AB_INVALID;
		goto done;
	}
	for (size_t i = 0; i < nb + nc; i++) {
		struct ts_ab_run_summary s;
		const struct ts_run *r = i < nb ? &base[i] : &cand[i - nb];
		if ((rc = summarize(r, pit, npairs, o->seed, &s)))
			goto oom;
		if (i < nb ? TS_VEC_PUSH(res->base, s) : TS_VEC_PUSH(res->cand, s))
			goto oom;
	}
	/* side means over the paired iterations */
	res->base_mean_ms = ts_stats_mean(pa, npairs);
	res->cand_mean_ms = ts_stats_mean(pb, npairs);
	/* a run's stalls travel as its own warning (the run model's stalls) */
	/* the interval */
	{
		struct ts_ab_ratio pr;
		double r, lo, hi;
		const char *how;
		if ((rc = ts_ab_paired_ratio(pa, pb, npairs, o->seed, &pr)))
			goto oom;
		r = pr.estimate;
		lo = pr.ci95_low;
		hi = pr.ci95_high;
		how = pr.method ? pr.method : "too few steps";
		if (res->repeats) {
			if ((rc = run_level(res, nb, nc)))
				goto oom;
			if (!(nb >= 4 && nc >= 4) && hi - lo > res->ci95_high - res->ci95_low) {
				res->ratio = r;
				res->ci95_low = lo;
				res->ci95_high = hi;
				res->method = fmt(res, "paired by iteration over the per-iteration means "
						  "of the repeats, %s (wider than Welch t on %zu+%zu run "
						  "means)", how, nb, nc);
			}
		} else if (o->run_cv > 0 && !same_runs(base, nb, cand, nc)) {
			/* each side's level is off by its run-to-run CV / sqrt(runs):
			 * a Type B term added in quadrature on the ratio scale */
			double u = 1.959964 * r * o->run_cv * sqrt(1.0 / (double)nb + 1.0 / (double)nc);
			res->ratio = r;
			res->ci95_low = r - sqrt((r - lo) * (r - lo) + u * u);
			res->ci95_high = r + sqrt((hi - r) * (hi - r) + u * u);
			res->run_cv = o->run_cv;
			res->run_term = u;
			res->method = fmt(res, "paired by iteration, %s CI of the mean difference, "
					  "plus an assumed run-to-run CV of %.2f %% (--run-cv; not "
					  "measured: repeat runs to measure it)", how, 100 * o->run_cv);
		} else {
			res->ratio = r;
			res->ci95_low = lo;
			res->ci95_high = hi;
			res->method = fmt(res, "paired by iteration, %s CI of the mean difference; "
					  "within-run only: run-to-run variance is not measured (repeat "
					  "runs, or --run-cv, to include it)", how);
		}
	}
	/* decision (Criterion-style practical significance; ab-stats A4 step 4) */
	{
		double d = res->band;
		double h = (res->ci95_high - res->ci95_low) / 2, e = fabs(res->ratio - 1), need;
		res->verdict = ts_ab_decide(res->ci95_low, res->ci95_high, d);
		if (res->verdict == TS_AB_INCONCLUSIVE) {
			need = e <= d ? d - e : e - d;
			if (need < 1e-4 || !isfinite(h)) {
				res->decide_note = fmt(res, "the estimate %.4f sits on the band edge "
						       "(1 +- %.3f): more data narrows the interval "
						       "but may never decide", res->ratio, d);
			} else if ((h / need) * (h / need) > TS_AB_DECIDE_MAX_DATA) {
				/* the interval would have to narrow more than 10x: the
				 * estimate is as likely to cross the edge as to stay */
				res->decide_note = fmt(res, "the estimate %.4f sits %.4f from the band "
						       "edge (1 +- %.3f): deciding would take about "
						       "%.0fx the data, and more data may never "
						       "decide", res->ratio, need, d,
						       (h / need) * (h / need));
			} else {
				double f = (h / need) * (h / need);
				if (res->repeats) {
					res->more_runs_per_side = ceil((double)(nb > nc ? nb : nc) * (f - 1));
					res->decide_note = fmt(res, "about %.0f more runs per side would "
							       "narrow the 95 %% CI to +-%.4f",
							       res->more_runs_per_side, need);
				} else if (res->run_term >= need) {
					res->decide_note = fmt(res, "more steps cannot decide: the assumed "
							       "run-to-run CV alone gives +-%.4f; repeat "
							       "the runs (>= 4 per side)", res->run_term);
				} else {
					/* only the within-run part shrinks with more steps */
					double hw = sqrt(fmax(h * h - res->run_term * res->run_term, 0));
					double need_w = sqrt(need * need - res->run_term * res->run_term);
					f = (hw / need_w) * (hw / need_w);
					res->more_steps_per_run = ceil((double)res->win_steps * (f - 1));
					res->decide_note = fmt(res, "about %.0f more steady steps per run "
							       "(or >= 4 repeated runs per side) would "
							       "narrow the 95 %% CI to +-%.4f",
							       res->more_steps_per_run, need);
				}
			}
		}
	}
	/* an automatic window cut at a level shift or after a long warm-up is
	 * the stretch of a run's own noise that looked flattest, and the
	 * interval does not count that choice (on A/A pairs with lag-1
	 * autocorrelation 0.95 every false verdict came through such windows):
	 * the verdict stands only when every paired step after iteration 1
	 * gives it too; a declared window decides alone. With >= 4 runs per
	 * side the interval is on run means, whose spread holds the choice. */
	if (wf == TS_WIN_AUTO && res->verdict != TS_AB_INCONCLUSIVE &&
	    !(res->repeats && nb >= 4 && nc >= 4)) {
		const struct ts_run *picked = NULL;

		for (size_t i = 0; i < nb + nc && !picked; i++) {
			const struct ts_run *r = i < nb ? &base[i] : &cand[i - nb];

			if (r->rm.have_steps &&
			    (r->rm.steps.warnings & (TS_WARN_LEVEL_SHIFT | TS_WARN_LONG_WARMUP |
						     TS_WARN_NO_STEADY)))
				picked = r;
		}
		if (picked && (rc = whole_run_check(res, base, nb, cand, nc, o, picked)))
			goto oom;
	}
	if (res->win_steps < 200)
		WARN("short-window", fmt(res, "matched window has %zu steps (< 200 recommended)",
				       res->win_steps));
	if (!res->repeats && (nb < 4 || nc < 4))
		WARN("few-runs", fmt(res, "fewer than 4 runs per side: run-to-run variance is %s",
				       res->repeats ? "estimated from few runs" : "not measured"));
	for (size_t i = 0; i < nb + nc; i++) {
		const struct ts_ab_run_summary *s = i < nb ? &res->base.v[i] : &res->cand.v[i - nb];
		const struct ts_run *r = i < nb ? &base[i] : &cand[i - nb];
		/* over the run's own window its run model already says so */
		int own = r->rm.have_steps && r->rm.window.first == res->win_first &&
			  r->rm.window.last == res->win_last;

		if (s->cv > 0.10 && !own)
			WARN("noisy", fmt(res, "%s: step-time CV %.1f %% over the window (> 10 %%: "
					       "noisy)", s->path, 100 * s->cv));
	}
	if (oom)
		goto oom;
	/* attribution: which phase of the step moved */
	if ((rc = compare_phases(res, base, nb, cand, nc, o, pit, npairs)))
		goto oom;
	if ((rc = correctness(res, base, nb, cand, nc, o)))
		goto oom;
	if ((rc = telemetry_confounds(res, base, nb, cand, nc)))
		goto oom;
done:
	res->accepted = res->verdict != TS_AB_INVALID && res->correctness_passed &&
			(res->verdict == TS_AB_FASTER || res->verdict == TS_AB_NO_DIFFERENCE);
	rc = oom ? TS_ENOMEM : 0;
	goto out;
oom:
	rc = TS_ENOMEM;
out:
	free(pit);
	free(pa);
	free(pb);
	return rc ? ts_err_set(err, TS_ENOMEM, "out of memory comparing runs") : 0;
}

/* "device (A vs B), driver version (A vs B) and ..." into sb. */
static void changes_text(struct ts_sb *sb, const struct ts_ctx_change *c, size_t n)
{
	for (size_t k = 0; k < n; k++)
		ts_sb_addf(sb, "%s%s (%s vs %s)", !k ? "" : k + 1 == n ? " and " : ", ", c[k].label,
			   c[k].a, c[k].b);
}

int ts_context_differs_warn(struct ts_warnings *w, const struct ts_ctx_change *c, size_t n)
{
	struct ts_sb sb;
	int rc;

	if (!n)
		return 0;
	ts_sb_init(&sb);
	changes_text(&sb, c, n);
	rc = sb.failed ? TS_ENOMEM :
	     ts_warnings_add(w, "context-differs", NULL, -1, TS_NO_INT,
			     "the two sides differ in %s: the step time and every delta include the effect"
			     " of %s, not only of the change under comparison", sb.buf,
			     n == 1 ? "that difference" : "those differences");
	ts_sb_release(&sb);
	return rc;
}

int ts_context_mixed_warn(struct ts_warnings *w, const char *side, const struct ts_ctx_change *c,
			  size_t n)
{
	struct ts_sb sb;
	int rc;

	if (!n)
		return 0;
	ts_sb_init(&sb);
	changes_text(&sb, c, n);
	rc = sb.failed ? TS_ENOMEM :
	     ts_warnings_add(w, "context-mixed", NULL, -1, TS_NO_INT,
			     "the %s's traces differ among themselves in %s: its step times mix those"
			     " setups, so the comparison includes the effect of %s", side, sb.buf,
			     n == 1 ? "that difference" : "those differences");
	ts_sb_release(&sb);
	return rc;
}

int ts_ab_warnings(const struct ts_run *runs, size_t n, const struct ts_ab_result *r,
		   struct ts_warnings *all)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		int seen = 0;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(runs[j].path, runs[i].path) == 0;
		for (size_t k = 0; k < runs[i].rm.warnings.v.n && !seen; k++) {
			const struct ts_warning *x = &runs[i].rm.warnings.v.v[k];

			if (x->file)
				rc |= ts_warnings_add(all, x->code, x->file, x->offset, x->iteration,
						      "%s", x->message);
			else
				rc |= ts_warnings_add(all, x->code, runs[i].path, x->offset,
						      x->iteration, "%s: %s", runs[i].path, x->message);
		}
	}
	for (size_t k = 0; k < r->warnings.v.n; k++) {
		const struct ts_warning *x = &r->warnings.v.v[k];

		if (ts_warnings_add(all, x->code, x->file, x->offset, x->iteration, "%s", x->message))
			rc = TS_ENOMEM;
		else
			all->v.v[all->v.n - 1].line = x->line;
	}
	return rc ? TS_ENOMEM : 0;
}

/*
 * steps.c - the steady-state step-time summary of a training run.
 *
 * A training log mixes warm-up, the steady state someone will quote,
 * profiler and checkpoint hiccups, data-loader stalls and, sometimes, a
 * level shift when a neighbour job lands on the node. This module turns the
 * parsed series into the numbers a performance claim needs: a window chosen
 * by rule (or declared), statistics whose confidence interval survives
 * autocorrelation, and every excluded or suspicious step named with its
 * reason, so nothing is dropped silently.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/steps.h"

#define SPIKE_H 3            /* moving-median half window */
#define SPIKE_Z TS_STATS_MODZ_OUTLIER
#define CAND_Z 3.0           /* candidates for the periodicity test */
#define SPIKE_MIN_REL TS_SPIKE_MIN_REL
#define PERIODIC_ALPHA 0.01
#define SHIFT_DELTA 0.02     /* delta_S of ab-stats A4 */
#define MIN_WINDOW 50
#define NOISY_CV 0.10
/* the stalls warning (../shared/reference/ab-stats.md, the run-health table) */
#define STALL_SHARE 0.02
#define STALL_STEPS 0.01
/* ... but many stalls count only when they cost this much: a 3 % CV
 * window's Gaussian noise alone puts ~1 % of its steps past the spike
 * test at ~0.1 % of the time, and a real run's few 10 % spikes cost
 * under 1 %; the stalls section lists them all the same */
#define STALL_MIN_SHARE 0.01
#define PELT_MAX_POINTS 500
#define LOCAL_MAX_PERIOD 16  /* periods tested on the values (ts_stats_periodic_local) */
#define PERIODIC_MIN_REL 0.01 /* a periodic stall is >= 1 % of the series median */
#define PHASE_MIN_RECORDS 10
#define PHASE_STALL_MIN_REL 0.01 /* one-off phase stall: >= 1 % of the step median */

const char *ts_outlier_reason_name(int reason)
{
	switch (reason) {
	case TS_OUT_PERIODIC:
		return "periodic-stall";
	case TS_OUT_PROFILER:
		return "profiler";
	case TS_OUT_CHECKPOINT:
		return "checkpoint";
	case TS_OUT_EVAL:
		return "eval";
	case TS_OUT_RESTART:
		return "restart";
	case TS_OUT_OVERHEAD:
		return "overhead";
	default:
		return "spike";
	}
}

void ts_steps_opts_init(struct ts_steps_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->window_first = o->window_last = TS_NO_INT;
	o->seed = 0x5eed;
}

struct key {
	int64_t iteration;
	int32_t rank;
	size_t pos;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->iteration != y->iteration)
		return x->iteration < y->iteration ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Sum of non-negative counts that stops at INT64_MAX instead of wrapping. */
static int64_t sat_add(int64_t a, int64_t b)
{
	if (b < 0)
		b = 0;
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static double nanmax(double a, double b)
{
	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	return a > b ? a : b;
}

int32_t ts_step_rank(const struct ts_steplog *log, const struct ts_step *s)
{
	if (s->rank >= 0)
		return s->rank;
	return log->nfiles > 1 ? s->file : -1;
}

/* The key of record j: k[j], or in file order when k is NULL. */
static struct key key_at(const struct ts_steplog *log, const struct key *k, size_t j)
{
	if (k)
		return k[j];
	return (struct key){ log->steps.v[j].iteration, ts_step_rank(log, &log->steps.v[j]), j };
}

/*
 * Merge per-rank records into one record per iteration, v[0..return), taking
 * the records in the order of k, or in file order when k is NULL. File order
 * must already be (iteration, rank) order; when a record breaks it, the
 * return is 0 and v is garbage.
 */
static size_t merge_ranks(const struct ts_steplog *log, const struct key *k, struct ts_step_merged *v)
{
	size_t n = log->steps.n, m = 0;
	struct key cur = key_at(log, k, 0), next = cur;

	for (size_t j = 0; j < n;) {
		struct ts_step_merged *r = &v[m++];
		int64_t iteration = cur.iteration;
		int have_primary = 0, have_loss = 0;
		int32_t prev_rank = INT32_MIN;

		memset(r, 0, sizeof(*r));
		r->iteration = iteration;
		r->step_ms = r->loss = r->grad_norm = r->tflops = r->overhead_ms = NAN;
		for (int k = 0; k < TS_PHASE_COUNT; k++)
			r->phase_ms[k] = NAN;
		r->skipped = r->nan_iters = r->tokens = r->gbs = r->bucket = TS_NO_INT;
		for (; j < n && cur.iteration == iteration; j++, cur = next) {
			const struct ts_step *s = &log->steps.v[cur.pos];
			/* a repeated (iteration, rank): another record of a rank
			 * already merged (several ranks printing without a prefix) */
			int again = prev_rank == cur.rank;

			if (j + 1 < n) {
				next = key_at(log, k, j + 1);
				if (!k && cmp_key(&cur, &next) > 0)
					return 0;
			}
			prev_rank = cur.rank;
			/* Phases come from the slowest rank's record, so they stay parts
			 * of the step time reported (a phase longer than its step is
			 * inconsistent and dropped); untimed records only fill gaps. */
			if (s->step_ns != TS_NO_INT && !((double)s->step_ns / 1e6 <= r->step_ms)) {
				for (int k = 0; k < TS_PHASE_COUNT; k++)
					r->phase_ms[k] = s->phase_ns[k] != TS_NO_INT &&
								 s->phase_ns[k] <= s->step_ns ?
							 (double)s->phase_ns[k] / 1e6 : NAN;
				r->step_ms = (double)s->step_ns / 1e6;
				/* so is the logged rate: its FLOPs over that time */
				r->tflops = s->tflops;
			} else if (s->step_ns == TS_NO_INT) {
				for (int k = 0; k < TS_PHASE_COUNT; k++)
					if (s->phase_ns[k] != TS_NO_INT && isnan(r->phase_ms[k]))
						r->phase_ms[k] = (double)s->phase_ns[k] / 1e6;
				if (isnan(r->step_ms) && isnan(r->tflops))
					r->tflops = s->tflops;
			}
			r->overhead_ms = nanmax(r->overhead_ms, s->overhead_ns / 1e6);
			r->flags |= s->flags;
			for (uint32_t e = 0; e < s->extra_n; e++)
				if (!isfinite(log->extras.v[s->extra_first + e].value))
					r->extra_nonfinite = 1;
			if (s->tokens != TS_NO_INT && again)
				r->tokens = r->tokens == TS_NO_INT || s->tokens > r->tokens ? s->tokens : r->tokens;
			else if (s->tokens != TS_NO_INT)
				r->tokens = sat_add(r->tokens == TS_NO_INT ? 0 : r->tokens, s->tokens);
			if (!have_loss && (!isnan(s->loss) || (s->flags & TS_STEP_LOSS_NONFINITE))) {
				/* The lowest rank that logs a loss speaks for it: with
				 * pipeline parallelism only the last stage has one */
				have_loss = 1;
				r->loss = s->loss;
			}
			/* A NaN or skipped iteration on any rank is the step's, as
			 * the gate's points and the loss health take it */
			if (s->skipped != TS_NO_INT && (r->skipped == TS_NO_INT || s->skipped > r->skipped))
				r->skipped = s->skipped;
			if (s->nan_iters != TS_NO_INT &&
			    (r->nan_iters == TS_NO_INT || s->nan_iters > r->nan_iters))
				r->nan_iters = s->nan_iters;
			if (!have_primary) {
				/* The lowest rank speaks for the rest. */
				have_primary = 1;
				r->grad_norm = s->grad_norm;
				r->gbs = s->global_batch;
				r->bucket = s->bucket;
			}
		}
		/* a phase an untimed record gave that is longer than the step
		 * is as inconsistent as a timed record's */
		for (int k = 0; k < TS_PHASE_COUNT; k++)
			if (r->phase_ms[k] > r->step_ms)
				r->phase_ms[k] = NAN;
	}
	return m;
}

/*
 * One record per iteration. Logs are nearly always in (iteration, rank)
 * order already, so the records are merged in file order first, which
 * reads the large step records once; only when one is out of order are
 * keys built, sorted and merged again.
 */
int ts_steps_merge(const struct ts_steplog *log, struct ts_step_merged **out, size_t *nout)
{
	struct key *k;
	struct ts_step_merged *v;
	size_t n = log->steps.n, m;

	*out = NULL;
	*nout = 0;
	if (n == 0)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return TS_ENOMEM;
	m = merge_ranks(log, NULL, v);
	if (m == 0) {
		k = malloc(n * sizeof(*k));
		if (!k) {
			free(v);
			return TS_ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			k[i] = key_at(log, NULL, i);
		ts_sort(k, n, sizeof(*k), cmp_key);
		m = merge_ranks(log, k, v);
		free(k);
	}
	*out = v;
	*nout = m;
	return 0;
}

static int push_i64(int64_t **a, size_t *n, size_t *cap, int64_t v)
{
	return ts_grow((void **)a, cap, *n + 1, sizeof(**a)) ? TS_ENOMEM : ((*a)[(*n)++] = v, 0);
}

/* Final loss and loss / grad-norm spikes over the whole series. */
static int loss_curve(const struct ts_step_merged *v, size_t n, struct ts_steps_report *rep)
{
	size_t cap2 = 0, cap3 = 0, nl = 0, ng = 0;
	double *lx = NULL, *gx = NULL, *z = NULL, *base = NULL;
	int64_t *li = NULL, *gi = NULL;
	int rc = TS_ENOMEM;

	rep->final_loss = NAN;
	rep->final_loss_iteration = TS_NO_INT;
	lx = malloc((n + 1) * sizeof(*lx));
	gx = malloc((n + 1) * sizeof(*gx));
	li = malloc((n + 1) * sizeof(*li));
	gi = malloc((n + 1) * sizeof(*gi));
	z = malloc((n + 1) * sizeof(*z));
	base = malloc((n + 1) * sizeof(*base));
	if (!lx || !gx || !li || !gi || !z || !base)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct ts_step_merged *r = &v[i];

		if (isfinite(r->loss)) {
			rep->final_loss = r->loss;
			rep->final_loss_iteration = r->iteration;
			lx[nl] = r->loss;
			li[nl++] = r->iteration;
		}
		if (isfinite(r->grad_norm)) {
			gx[ng] = r->grad_norm;
			gi[ng++] = r->iteration;
		}
	}
	if (nl >= 7) {
		if (ts_stats_spike_scores(lx, nl, SPIKE_H, base, z))
			goto out;
		for (size_t i = 0; i < nl; i++) {
			double ref;

			if (!(z[i] > SPIKE_Z && lx[i] - base[i] > SPIKE_MIN_REL * fabs(base[i])))
				continue;
			/* A loss spike rises above its neighbours on both sides,
			 * not only above a median the curve's trend has moved. */
			ref = ts_stats_rise_ref(lx, nl, i, SPIKE_H);
			if (lx[i] - ref > SPIKE_MIN_REL * fabs(ref) &&
			    push_i64(&rep->loss_spikes, &rep->nloss_spikes, &cap2, li[i]))
				goto out;
		}
	}
	if (ng >= 7) {
		/* ab-stats A5: grad norm above 5x its running median. */
		if (ts_stats_spike_scores(gx, ng, 5, base, NULL))
			goto out;
		for (size_t i = 0; i < ng; i++)
			if (gx[i] > 5 * base[i] && gx[i] > 5 * ts_stats_rise_ref(gx, ng, i, 5) &&
			    push_i64(&rep->grad_spikes, &rep->ngrad_spikes, &cap3, gi[i]))
				goto out;
	}
	rc = 0;
out:
	free(lx);
	free(gx);
	free(li);
	free(gi);
	free(z);
	free(base);
	return rc;
}

int ts_ci_positive(struct ts_ci *ci)
{
	if (ci->method == TS_CI_NONE || !(ci->lo < 0))
		return 0;
	ci->method = TS_CI_NONE;
	ci->lo = ci->hi = NAN;
	return 1;
}

int64_t ts_steps_first_cut(int64_t first, int64_t next)
{
	if (first == 0)
		return 0; /* a 0-based count (NeMo 2's global_step): 0 is the first */
	if (first >= 1 && next != TS_NO_INT && next > first && first <= next - first)
		return first;
	return 1;
}

int ts_step_artefact(int64_t iteration, int64_t first_cut, uint32_t flags, int64_t nan_iters,
		     int64_t skipped, double grad_norm)
{
	if (iteration <= first_cut)
		return TS_ART_FIRST;
	if (flags & TS_STEP_RESTARTED)
		return TS_ART_RESTART;
	if (flags & (TS_STEP_PROFILED | TS_STEP_AFTER_PROFILER))
		return TS_ART_PROFILER;
	if (flags & TS_STEP_AFTER_CHECKPOINT)
		return TS_ART_CHECKPOINT;
	if (flags & TS_STEP_AFTER_EVAL)
		return TS_ART_EVAL;
	if ((flags & (TS_STEP_LOSS_NONFINITE | TS_STEP_GRAD_NONFINITE)) || isinf(grad_norm) ||
	    (nan_iters != TS_NO_INT && nan_iters > 0))
		return TS_ART_NONFINITE;
	if (skipped != TS_NO_INT && skipped > 0)
		return TS_ART_SKIPPED;
	return TS_ART_NONE;
}

const char *ts_step_artefact_name(int artefact)
{
	static const char *const names[TS_ART_COUNT] = { "none", "first-iteration", "profiler",
							 "checkpoint", "eval", "non-finite",
							 "skipped", "restart" };

	return artefact >= 0 && artefact < TS_ART_COUNT ? names[artefact] : "?";
}

static int artefact_of(const struct ts_step_merged *r, int64_t first_cut)
{
	/* a NaN extra loss is a non-finite step as a NaN loss is (the loss
	 * health's rule, steps.h) */
	uint32_t flags = r->flags | (r->extra_nonfinite ? TS_STEP_LOSS_NONFINITE : 0);

	return ts_step_artefact(r->iteration, first_cut, flags, r->nan_iters, r->skipped,
				r->grad_norm);
}

static int reason_of(const struct ts_step_merged *r, double base, int periodic_hit)
{
	if (r->flags & (TS_STEP_AFTER_PROFILER | TS_STEP_PROFILED))
		return TS_OUT_PROFILER;
	if (r->flags & TS_STEP_AFTER_CHECKPOINT)
		return TS_OUT_CHECKPOINT;
	if (r->flags & TS_STEP_AFTER_EVAL)
		return TS_OUT_EVAL;
	if (r->flags & TS_STEP_RESTARTED)
		return TS_OUT_RESTART;
	if (periodic_hit)
		return TS_OUT_PERIODIC;
	/* time outside the step with no mark of what spent it: not called
	 * profiler (it stays in the window, an artefact would not) */
	return isfinite(r->overhead_ms) && r->overhead_ms > 0.5 * base ? TS_OUT_OVERHEAD : TS_OUT_SPIKE;
}

/*
 * A found pattern's period and phase in iterations: index units times the
 * stride when the records are evenly spaced (stride > 0), else as found.
 */
static void period_in_iters(const struct ts_periodic *p, const struct ts_step_merged *v, const size_t *ti,
			    size_t stride, int64_t *period, int64_t *phase)
{
	if (stride > 0 && stride <= (size_t)INT64_MAX / p->period) {
		*period = (int64_t)(p->period * stride);
		*phase = v[ti[p->phase]].iteration % *period;
	} else {
		*period = (int64_t)p->period;
		*phase = (int64_t)p->phase;
	}
}

/*
 * The periodic-stall test of one of `family` series tested (the step time
 * and each phase): the value test for short periods
 * (ts_stats_periodic_local) and the spike-flag test for any period
 * (ts_stats_periodic, on cand); the smaller p-value wins and is reported
 * Bonferroni-adjusted over the two tests and the family. *local says
 * whether the value test won (its excess is then in p->excess).
 */
static int periodic_test(const double *x, const unsigned char *cand, size_t n, double min_excess,
			 size_t family, struct ts_periodic *p, int *local)
{
	struct ts_periodic f;
	int rc = ts_stats_periodic(cand, n, n, PERIODIC_ALPHA, &f);

	if (!rc)
		rc = ts_stats_periodic_local(x, n, LOCAL_MAX_PERIOD, min_excess, PERIODIC_ALPHA, p);
	if (rc)
		return rc;
	*local = p->period && (!f.period || p->p_value <= f.p_value);
	if (!*local)
		*p = f;
	p->p_value = fmin(1, 2 * (double)family * p->p_value);
	p->found = p->period && p->p_value < PERIODIC_ALPHA;
	*local &= p->found;
	return 0;
}

/*
 * Stalls on the analysed part (after iteration 1) of the timed series:
 * spikes against a moving median, the periodicity test on candidates, and
 * a despiked copy for MSER-5 and the changepoint search.
 */
static int find_stalls(const struct ts_step_merged *v, const size_t *ti, size_t n, size_t family,
		       struct ts_steps_report *rep, double *despiked)
{
	double *x = NULL, *z = NULL, *base = NULL, wall = 0, excess_p = 0, excess_all = 0;
	unsigned char *cand = NULL;
	size_t cap = 0, stride = 0;
	int rc = TS_ENOMEM, uniform = 1, local = 0;
	struct ts_periodic *p = &rep->periodic;

	memset(p, 0, sizeof(*p));
	x = malloc(n * sizeof(*x));
	z = malloc(n * sizeof(*z));
	base = malloc(n * sizeof(*base));
	cand = calloc(n ? n : 1, 1);
	if (!x || !z || !base || !cand)
		goto out;
	for (size_t i = 0; i < n; i++) {
		x[i] = v[ti[i]].step_ms;
		wall += x[i];
		if (i > 0) {
			size_t d = (size_t)(v[ti[i]].iteration - v[ti[i - 1]].iteration);

			if (i == 1)
				stride = d;
			else if (d != stride)
				uniform = 0;
		}
	}
	rc = n ? ts_stats_spike_scores(x, n, SPIKE_H, base, z) : 0;
	if (rc)
		goto out;
	for (size_t i = 0; i < n; i++)
		cand[i] = z[i] > CAND_Z && x[i] - base[i] > SPIKE_MIN_REL * base[i];
	if (n) {
		double med;

		rc = ts_stats_median_mad(x, n, &med, NULL);
		if (!rc)
			rc = periodic_test(x, cand, n, PERIODIC_MIN_REL * med, family, p, &local);
		if (rc)
			goto out;
	}
	for (size_t i = 0; i < n; i++) {
		int hit = p->found && cand[i] && i % p->period == p->phase;
		int outlier = z[i] > SPIKE_Z && x[i] - base[i] > SPIKE_MIN_REL * base[i];
		struct ts_outlier o;

		despiked[i] = x[i];
		if (!hit && !outlier)
			continue;
		despiked[i] = base[i];
		o.iteration = v[ti[i]].iteration;
		o.step_ms = x[i];
		o.baseline_ms = base[i];
		o.excess_ms = x[i] - base[i];
		o.z = z[i];
		o.reason = reason_of(&v[ti[i]], base[i], hit);
		if (ts_grow((void **)&rep->outliers, &cap, rep->noutliers + 1, sizeof(o)))
			goto nomem;
		rep->outliers[rep->noutliers++] = o;
		excess_all += o.excess_ms;
		/* the pattern's cost, whatever its cause (checkpoint saves at a
		 * fixed interval are a periodic stall with a known cause) */
		if (hit)
			excess_p += o.excess_ms;
	}
	if (p->found)
		period_in_iters(p, v, ti, uniform ? stride : 0, &rep->periodic_period_iters,
				&rep->periodic_phase_iters);
	if (local)
		excess_p = p->excess;
	rep->periodic_share = wall > 0 ? excess_p / wall : NAN;
	rep->outlier_share = wall > 0 ? excess_all / wall : NAN;
	rc = 0;
	goto out;
nomem:
	rc = TS_ENOMEM;
out:
	free(x);
	free(z);
	free(base);
	free(cand);
	return rc;
}

/*
 * One phase's series over the records after iteration 1 (v[0..nv)):
 * window statistics, a periodic pattern and one-off stalls on it, costs
 * against wall (the step-time sum of the analysed records, 0 when none).
 * Returns 0 (s->steps == 0 when the phase is too rare), or TS_ENOMEM.
 */
static int phase_summary(const struct ts_step_merged *v, size_t nv, int k, double wall, size_t family,
			 const struct ts_steps_report *rep, uint64_t seed,
			 struct ts_phase_summary *s)
{
	size_t n = 0, nw = 0, stride = 0, *idx = NULL;
	double *x = NULL, *w = NULL, *base = NULL, *z = NULL, med, floor_ms, excess = 0;
	unsigned char *cand = NULL;
	int rc = TS_ENOMEM, uniform = 1, win = rep->win_n > 0, local = 0;

	memset(s, 0, sizeof(*s));
	s->phase = k;
	s->mean_ms = s->median_ms = s->step_share = NAN;
	s->ci.mean = s->ci.lo = s->ci.hi = s->ci.lag1_batches = NAN;
	s->periodic_excess_ms = s->periodic_share = s->stall_share = NAN;
	s->periodic_period_iters = s->periodic_phase_iters = TS_NO_INT;
	s->first_stall_iteration = TS_NO_INT;
	idx = malloc((nv + 1) * sizeof(*idx));
	x = malloc((nv + 1) * sizeof(*x));
	w = malloc((nv + 1) * sizeof(*w));
	base = malloc((nv + 1) * sizeof(*base));
	z = malloc((nv + 1) * sizeof(*z));
	cand = malloc(nv + 1);
	if (!idx || !x || !w || !base || !z || !cand)
		goto out;
	for (size_t i = 0; i < nv; i++) {
		/* with step times, only timed records: their sum is the wall */
		if (!isfinite(v[i].phase_ms[k]) || v[i].iteration <= rep->first_cut ||
		    (wall > 0 && !isfinite(v[i].step_ms)))
			continue;
		if (n > 0) {
			size_t d = (size_t)(v[i].iteration - v[idx[n - 1]].iteration);

			if (n == 1)
				stride = d;
			else if (d != stride)
				uniform = 0;
		}
		idx[n] = i;
		x[n++] = v[i].phase_ms[k];
		/* the window's own records: its artefacts (profiler, export,
		 * non-finite loss) are out, as they are of the step statistics */
		if (!win || (ts_record_in_window(ts_steps_record_from(rep, i), v[i].iteration,
						 rep->win_first, rep->win_last) && !rep->artefact[i]))
			w[nw++] = v[i].phase_ms[k];
	}
	rc = 0;
	if (n < PHASE_MIN_RECORDS || nw == 0)
		goto out;
	s->steps = nw;
	s->mean_ms = ts_stats_mean(w, nw);
	rc = ts_stats_median_mad(w, nw, &med, NULL);
	if (rc)
		goto out;
	s->median_ms = med;
	if (nw >= 2) {
		rc = ts_stats_ci_mean(w, nw, seed, &s->ci);
		if (rc)
			goto out;
		if (s->ci.lo < 0)
			s->ci.lo = 0; /* a time is never negative */
	}
	if (rep->mean_ms > 0)
		s->step_share = s->mean_ms / rep->mean_ms;
	rc = ts_stats_spike_scores(x, n, SPIKE_H, base, z);
	if (rc)
		goto out;
	/* material against the step, or against the phase itself without step times */
	floor_ms = isfinite(rep->median_ms) ? PHASE_STALL_MIN_REL * rep->median_ms
					    : SPIKE_MIN_REL * med;
	for (size_t i = 0; i < n; i++)
		cand[i] = z[i] > CAND_Z && x[i] - base[i] > SPIKE_MIN_REL * base[i] &&
			  x[i] - base[i] >= floor_ms;
	rc = periodic_test(x, cand, n, PERIODIC_MIN_REL * med, family, &s->periodic, &local);
	if (rc)
		goto out;
	if (s->periodic.found) {
		double ex = s->periodic.excess;

		if (!local) {
			ex = 0;
			for (size_t i = s->periodic.phase; i < n; i += s->periodic.period)
				ex += cand[i] ? x[i] - base[i] : 0;
		}
		period_in_iters(&s->periodic, v, idx, uniform ? stride : 0,
				&s->periodic_period_iters, &s->periodic_phase_iters);
		s->periodic_excess_ms = ex / (double)(local ? s->periodic.slots : s->periodic.hits);
		if (wall > 0)
			s->periodic_share = ex / wall;
	}
	for (size_t i = 0; i < n; i++) {
		double e = x[i] - base[i];

		if (s->periodic.found && i % s->periodic.period == s->periodic.phase)
			continue;
		if (!(z[i] > SPIKE_Z) || e <= SPIKE_MIN_REL * base[i] || e < floor_ms)
			continue;
		if (s->nstalls++ == 0)
			s->first_stall_iteration = v[idx[i]].iteration;
		excess += e;
	}
	if (wall > 0)
		s->stall_share = excess / wall;
out:
	free(idx);
	free(x);
	free(w);
	free(base);
	free(z);
	free(cand);
	return rc;
}

/* Phases with at least PHASE_MIN_RECORDS values after the records that
 * hold iteration 1 (those up to first_cut). */
static size_t phase_series(const struct ts_step_merged *v, size_t nv, int64_t first_cut)
{
	size_t k = 0;

	for (int ph = 0; ph < TS_PHASE_COUNT; ph++) {
		size_t c = 0;

		for (size_t i = 0; i < nv && c < PHASE_MIN_RECORDS; i++)
			c += isfinite(v[i].phase_ms[ph]) && v[i].iteration > first_cut;
		k += c >= PHASE_MIN_RECORDS;
	}
	return k;
}

static int phase_summaries(const struct ts_step_merged *v, size_t nv, double wall, size_t family,
			   uint64_t seed, struct ts_steps_report *rep)
{
	for (int k = 0; k < TS_PHASE_COUNT; k++) {
		struct ts_phase_summary s;
		size_t cap = rep->nphases;
		int rc = phase_summary(v, nv, k, wall, family, rep, seed, &s);

		if (rc)
			return rc;
		if (s.steps == 0)
			continue;
		if (ts_grow((void **)&rep->phases, &cap, rep->nphases + 1, sizeof(s)))
			return TS_ENOMEM;
		rep->phases[rep->nphases++] = s;
	}
	return 0;
}

/*
 * The warm-up cut of y[0..n) (despiked, artefacts out): MSER-5's, and a
 * cut past the first fifth must drop a warm-up. What it drops beyond the
 * best cut within the fifth must differ from the rest by SHIFT_DELTA, else
 * it is the series' own noise (MSER-5 over-truncates: 2.5 % of iid
 * 300-step runs were cut past 20 %); and when MSER-5 found a steady state
 * (its cut short of its bound), it must be slower: faster steps are no
 * warm-up but a level the run left (it got slower), which the level shift
 * search then sees. In both cases the cut within the fifth stands. A cut
 * at MSER-5's bound over faster steps is a drift (no steady state) and
 * stays. *steady as MSER-5's, set when the shorter cut stands. n < 10: no
 * cut.
 */
static int warmup_cut(const double *y, size_t n, size_t *cut, int *steady)
{
	struct ts_mser ms;
	int rc;

	*cut = 0;
	*steady = 1;
	if (n < 10)
		return 0;
	rc = ts_stats_mser5(y, n, &ms);
	if (rc)
		return rc;
	*cut = ms.cut;
	*steady = ms.steady;
	if (ms.cut * 5 > n) {
		struct ts_mser m5;
		double kept, extra;

		rc = ts_stats_mser5_upto(y, n, n / 25, &m5);
		if (rc)
			return rc;
		kept = ts_stats_mean(y + ms.cut, n - ms.cut);
		extra = ts_stats_mean(y + m5.cut, ms.cut - m5.cut);
		if (fabs(extra - kept) < SHIFT_DELTA * fabs(kept) ||
		    (ms.steady && extra < kept)) {
			*cut = m5.cut;
			*steady = 1;
		}
	}
	/* a warm-up is slower than what follows it: a cut whose steps are
	 * not slower than the rest by twice the standard error of their mean
	 * is the series' own noise (MSER-5 cut 16 of 40 iid runs of 300
	 * steps, up to 55 steps) */
	if (*cut && *steady) {
		double kept = ts_stats_mean(y + *cut, n - *cut);
		double sd = ts_stats_stddev(y + *cut, n - *cut);

		if (!(ts_stats_mean(y, *cut) - kept > 2 * sd / sqrt((double)*cut)))
			*cut = 0;
	}
	return 0;
}

/*
 * Where the warm-up of y[0..n) ends (records v[ti[0..n)]): warmup_cut's
 * cut, moved past the plain spikes (not periodic, no known cause) that
 * follow it, when it found a steady state and each such spike is no
 * slower than a step of the warm-up before it (the first iteration
 * included): a warm-up slows down no more as it ends. Such a step cannot
 * be told from the warm-up's last step, and an interval record (Megatron's
 * log-interval) holding the warm-up's tail is exactly that: despiked,
 * MSER-5 never saw it, and it opened the window as a "spike". A cut at
 * MSER-5's bound is no end of a warm-up; a stall there stays in the window.
 */
static int warmup_end(const double *y, size_t n, const struct ts_steps_report *rep,
		      const struct ts_step_merged *v, const size_t *ti, size_t *cut, int *steady)
{
	size_t k = 0, j = 0;
	double head = -INFINITY;
	int rc = warmup_cut(y, n, cut, steady);

	while (!rc && *steady && *cut < n) {
		int64_t it = v[ti[*cut]].iteration;

		for (; j < ti[*cut]; j++)
			if (rep->artefact[j] <= TS_ART_FIRST && v[j].step_ms > head)
				head = v[j].step_ms;
		while (k < rep->noutliers && rep->outliers[k].iteration < it)
			k++;
		if (k == rep->noutliers || rep->outliers[k].iteration != it ||
		    rep->outliers[k].reason != TS_OUT_SPIKE || v[ti[*cut]].step_ms > head)
			break;
		++*cut;
	}
	return rc;
}

/* Automatic window over y[0..n) (despiked, artefacts out): [*a, *b). */
static int auto_window(const double *y, size_t n, struct ts_steps_report *rep,
		       const struct ts_step_merged *v, const size_t *ti, size_t *a, size_t *b)
{
	size_t cut = 0, m, blk = 1, nz, cps[64], ncp = 0, best_a, best_len, j, k;
	double *zb = NULL, med, floor_var;
	int rc, steady;

	*a = 0;
	*b = n;
	rc = warmup_end(y, n, rep, v, ti, &cut, &steady);
	if (rc)
		return rc;
	if (!steady)
		rep->warnings |= TS_WARN_NO_STEADY;
	if (cut * 5 > n)
		rep->warnings |= TS_WARN_LONG_WARMUP;
	rep->mser_cut_iteration = n ? v[ti[cut < n ? cut : 0]].iteration : TS_NO_INT;
	m = n - cut;
	*a = cut;
	if (m < 10)
		return 0;
	/* PELT on at most PELT_MAX_POINTS block means. */
	blk = (m + PELT_MAX_POINTS - 1) / PELT_MAX_POINTS;
	nz = m / blk;
	zb = malloc(nz * sizeof(*zb));
	if (!zb)
		return TS_ENOMEM;
	for (size_t j = 0; j < nz; j++)
		zb[j] = ts_stats_mean(y + cut + j * blk, blk);
	rc = ts_stats_median_mad(zb, nz, &med, NULL);
	if (rc)
		goto out;
	floor_var = fmax(0.05 * 0.05, 1e-6 * med * med);
	rc = ts_stats_level_shifts(zb, nz, SHIFT_DELTA, 5, floor_var, cps, 64, &ncp);
	if (rc)
		goto out;
	if (ncp > 64)
		ncp = 64;
	if (ncp) {
		/* The longest segment is the steady state; ties go to the earliest. */
		size_t prev = 0;

		best_a = 0;
		best_len = 0;
		for (size_t k = 0; k <= ncp; k++) {
			size_t end = k < ncp ? cps[k] : nz;

			if (end - prev > best_len) {
				best_len = end - prev;
				best_a = prev;
			}
			prev = end;
		}
		/* where the first segment ends: a restarted process's warm-up
		 * between it and the next starts the shift */
		j = cut + cps[0] * blk;
		k = ti[j - 1] + 1;
		rep->level_shift_iteration =
			v[k < ti[j] && rep->artefact[k] == TS_ART_RESTART ? k : ti[j]].iteration;
		rep->warnings |= TS_WARN_LEVEL_SHIFT;
		*a = cut + best_a * blk;
		*b = best_a + best_len >= nz ? n : cut + (best_a + best_len) * blk;
	}
out:
	free(zb);
	return rc;
}

static int window_stats(const double *w, size_t n, uint64_t seed, struct ts_steps_report *rep)
{
	const double ps[3] = { 0.1, 0.5, 0.9 };
	double q[3];
	int rc;

	if (n == 0)
		return 0;
	rc = ts_stats_quantiles(w, n, ps, 3, q);
	if (rc)
		return rc;
	rep->p10_ms = q[0];
	rep->median_ms = q[1];
	rep->p90_ms = q[2];
	rep->mean_ms = ts_stats_mean(w, n);
	rep->cv = ts_stats_cv(w, n);
	if (n < TS_STEADY_MIN_STEPS)
		rep->warnings |= TS_WARN_FEW_STEPS;
	if (n >= TS_STEADY_MIN_STEPS) {
		rc = ts_stats_ci_mean(w, n, seed, &rep->ci);
		if (rc)
			return rc;
		if (ts_ci_positive(&rep->ci))
			rep->warnings |= TS_WARN_CI_TOO_WIDE;
		if (rep->ci.autocorrelated)
			rep->warnings |= TS_WARN_AUTOCORR;
		rc = ts_stats_acf_summary(w, n, &rep->acf);
		if (rc)
			return rc;
	}
	/* Megatron logs interval means: a record may stand for many steps.
	 * (Too few steps for an interval at all: the few-steps warning.) */
	if (rep->win_last - rep->win_first + 1 < MIN_WINDOW && n >= TS_STEADY_MIN_STEPS)
		rep->warnings |= TS_WARN_SHORT;
	if (rep->cv > NOISY_CV)
		rep->warnings |= TS_WARN_NOISY;
	{
		double wall = 0;

		for (size_t i = 0; i < n; i++)
			wall += w[i];
		if (ts_steps_window_stalls(rep, rep->win_first, rep->win_last, wall, n,
					   &rep->win_nstalls, &rep->win_stall_share))
			rep->warnings |= TS_WARN_STALLS;
	}
	rc = n >= 20 ? ts_stats_drift(w, n, TS_DRIFT_MIN_CHANGE, &rep->drift) : 0;
	if (rc)
		return rc;
	if (rep->drift.found)
		rep->warnings |= TS_WARN_DRIFT;
	return 0;
}

/* (rank, step index or mem index) for grouping in O(n log n). */
struct rank_ref {
	int32_t rank;
	int is_mem;
	size_t idx;
};

static int cmp_rank_ref(const void *a, const void *b)
{
	const struct rank_ref *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->is_mem != y->is_mem)
		return x->is_mem - y->is_mem;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static int has_memory(const struct ts_step *s)
{
	return !isnan(s->mem_max_alloc_bytes) || !isnan(s->mem_max_reserved_bytes) ||
	       !isnan(s->rss_max_bytes) || !isnan(s->mem_reserved_bytes) ||
	       !isnan(s->mem_alloc_bytes);
}

/* Per-rank memory, step times over the window and final loss. */
/* rep->iter is ascending */
int ts_steps_is_window_stall(const struct ts_outlier *o, int64_t first, int64_t last)
{
	return o->iteration >= first && o->iteration <= last &&
	       (o->reason == TS_OUT_SPIKE || o->reason == TS_OUT_PERIODIC ||
		o->reason == TS_OUT_OVERHEAD);
}

/* Whether iteration it of the analysed series is an artefact (a NaN-loss,
 * skipped, profiled, checkpoint or evaluation step): no step of a window's
 * statistics, so none of its stalls. rep->iter is ascending. */
static int artefact_at(const struct ts_steps_report *rep, int64_t it)
{
	size_t l = ts_lower_bound(rep->iter, rep->n, sizeof(*rep->iter), &it, ts_i64_below);

	return l < rep->n && rep->iter[l] == it && rep->artefact[l];
}

int ts_steps_window_stalls(const struct ts_steps_report *rep, int64_t first, int64_t last,
			   double wall_ms, size_t nsteps, size_t *n, double *share)
{
	double excess = 0;

	*n = 0;
	for (size_t i = 0; i < rep->noutliers; i++) {
		const struct ts_outlier *o = &rep->outliers[i];

		/* the window's time (wall_ms) holds no artefact step: a NaN
		 * step of a declared window 50:190 that spikes is none of its
		 * stalls (validate counted it: 8.4 % against steps' 6.7 %) */
		if (!ts_steps_is_window_stall(o, first, last) || artefact_at(rep, o->iteration))
			continue;
		excess += o->excess_ms;
		(*n)++;
	}
	*share = wall_ms > 0 ? excess / wall_ms : NAN;
	return *share > STALL_SHARE ||
	       (*n >= 2 && (double)*n > STALL_STEPS * (double)nsteps && *share > STALL_MIN_SHARE);
}

static int outlier_iter_below(const void *elem, const void *it)
{
	return ((const struct ts_outlier *)elem)->iteration < *(const int64_t *)it;
}

const struct ts_outlier *ts_steps_outlier_at(const struct ts_steps_report *rep, int64_t it)
{
	size_t l = ts_lower_bound(rep->outliers, rep->noutliers, sizeof(*rep->outliers), &it,
				  outlier_iter_below);

	return l < rep->noutliers && rep->outliers[l].iteration == it ? &rep->outliers[l] : NULL;
}

int64_t ts_steps_record_from(const struct ts_steps_report *rep, size_t i)
{
	return ts_record_from(i ? rep->iter[i - 1] : TS_NO_INT, rep->iter[i],
			      i + 1 < rep->n ? rep->iter[i + 1] : TS_NO_INT, rep->log_interval);
}

int ts_steps_in_window(const struct ts_steps_report *rep, int64_t it)
{
	size_t l;

	if (!rep->win_n)
		return 0;
	l = ts_lower_bound(rep->iter, rep->n, sizeof(*rep->iter), &it, ts_i64_below);
	return l < rep->n && rep->iter[l] == it && !rep->artefact[l] &&
	       ts_record_in_window(ts_steps_record_from(rep, l), it, rep->win_first, rep->win_last);
}

static int rank_summaries(const struct ts_steplog *log, struct ts_steps_report *rep)
{
	size_t nref = 0, cap = 0, timed = 0;
	struct rank_ref *ref = NULL;
	double *w = NULL, slow = -1;
	int rc = TS_ENOMEM, any_rank = 0;

	rep->slowest_rank = -1;
	ref = malloc((log->steps.n + log->mem.n + 1) * sizeof(*ref));
	w = malloc((log->steps.n + 1) * sizeof(*w));
	if (!ref || !w)
		goto out;
	/* Without ranks only the steps with memory fields count; one pass over
	 * the (large) step records collects them, or stops at the first rank,
	 * and then every step counts. */
	for (size_t i = 0; i < log->steps.n && !any_rank; i++) {
		int32_t r = ts_step_rank(log, &log->steps.v[i]);

		any_rank = r >= 0;
		if (!any_rank && has_memory(&log->steps.v[i]))
			ref[nref++] = (struct rank_ref){ r, 0, i };
	}
	if (any_rank) {
		nref = 0;
		for (size_t i = 0; i < log->steps.n; i++)
			ref[nref++] = (struct rank_ref){ ts_step_rank(log, &log->steps.v[i]), 0, i };
	}
	for (size_t i = 0; i < log->mem.n; i++)
		ref[nref++] = (struct rank_ref){ log->mem.v[i].rank, 1, i };
	ts_sort(ref, nref, sizeof(*ref), cmp_rank_ref);
	for (size_t i = 0; i < nref;) {
		struct ts_rank_summary k;
		size_t j = i, nw = 0;

		memset(&k, 0, sizeof(k));
		k.rank = ref[i].rank;
		k.mean_ms = k.median_ms = k.final_loss = NAN;
		k.max_alloc_bytes = k.max_reserved_bytes = k.max_rss_bytes = NAN;
		for (; j < nref && ref[j].rank == k.rank; j++) {
			if (ref[j].is_mem) {
				const struct ts_mem_report *m = &log->mem.v[ref[j].idx];

				k.max_alloc_bytes = nanmax(k.max_alloc_bytes, nanmax(m->max_alloc, m->alloc));
				k.max_reserved_bytes = nanmax(k.max_reserved_bytes,
							      nanmax(m->max_reserved, m->reserved));
			} else {
				const struct ts_step *s = &log->steps.v[ref[j].idx];

				k.steps_known = 1;
				k.max_alloc_bytes = nanmax(k.max_alloc_bytes,
							   nanmax(s->mem_max_alloc_bytes, s->mem_alloc_bytes));
				k.max_reserved_bytes = nanmax(k.max_reserved_bytes,
							      nanmax(s->mem_max_reserved_bytes,
								     s->mem_reserved_bytes));
				k.max_rss_bytes = nanmax(k.max_rss_bytes, s->rss_max_bytes);
				if (isfinite(s->loss))
					k.final_loss = s->loss;
				if (s->step_ns == TS_NO_INT)
					continue;
				k.records++;
				if (ts_steps_in_window(rep, s->iteration))
					w[nw++] = (double)s->step_ns / 1e6;
			}
		}
		k.steps = nw;
		if (nw) {
			double med;

			k.mean_ms = ts_stats_mean(w, nw);
			if (ts_stats_median_mad(w, nw, &med, NULL))
				goto out;
			k.median_ms = med;
			if (any_rank && k.rank >= 0) {
				timed++;
				if (k.mean_ms > slow) {
					slow = k.mean_ms;
					rep->slowest_rank = k.rank;
				}
			}
		}
		if (ts_grow((void **)&rep->ranks, &cap, rep->nranks + 1, sizeof(k)))
			goto out;
		rep->ranks[rep->nranks++] = k;
		i = j;
	}
	if (timed < 2)
		rep->slowest_rank = -1;
	rc = 0;
out:
	free(ref);
	free(w);
	return rc;
}

struct bucket_ref {
	int64_t bucket;
	double ms;
};

static int cmp_bucket_ref(const void *a, const void *b)
{
	const struct bucket_ref *x = a, *y = b;

	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	return (x->ms > y->ms) - (x->ms < y->ms);
}

static int bucket_summaries(const struct ts_step_merged *v, const size_t *wi, size_t nw,
			    struct ts_steps_report *rep)
{
	struct bucket_ref *ref = NULL;
	double *w = NULL;
	size_t nk = 0, cap = 0;
	int rc = TS_ENOMEM;

	ref = malloc((nw + 1) * sizeof(*ref));
	w = malloc((nw + 1) * sizeof(*w));
	if (!ref || !w)
		goto out;
	for (size_t i = 0; i < nw; i++)
		if (v[wi[i]].bucket != TS_NO_INT)
			ref[nk++] = (struct bucket_ref){ v[wi[i]].bucket, v[wi[i]].step_ms };
	rc = 0;
	if (nk == 0)
		goto out;
	ts_sort(ref, nk, sizeof(*ref), cmp_bucket_ref);
	rep->mixture_mean_ms = 0;
	for (size_t i = 0; i < nk;) {
		size_t j = i, nb = 0;
		struct ts_bucket_summary b;

		while (j < nk && ref[j].bucket == ref[i].bucket)
			w[nb++] = ref[j++].ms;
		b.bucket = ref[i].bucket;
		b.steps = nb;
		b.mean_ms = ts_stats_mean(w, nb);
		/* w is sorted: the median directly. */
		b.median_ms = ts_stats_quantile_sorted(w, nb, 0.5);
		b.weight = (double)nb / (double)nk;
		rc = TS_ENOMEM;
		if (ts_grow((void **)&rep->buckets, &cap, rep->nbuckets + 1, sizeof(b)))
			goto out;
		rep->buckets[rep->nbuckets++] = b;
		rep->mixture_mean_ms += b.weight * b.mean_ms;
		rc = 0;
		i = j;
	}
out:
	free(ref);
	free(w);
	return rc;
}

static void report_blank(struct ts_steps_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->first_iteration = rep->last_iteration = TS_NO_INT;
	rep->first_cut = 1;
	rep->win_first = rep->win_last = TS_NO_INT;
	rep->mser_cut_iteration = rep->level_shift_iteration = TS_NO_INT;
	rep->ramp_end_iteration = TS_NO_INT;
	rep->median_ms = rep->mean_ms = rep->p10_ms = rep->p90_ms = rep->cv = NAN;
	rep->ci.mean = rep->ci.lo = rep->ci.hi = rep->ci.lag1_batches = NAN;
	rep->acf.lag1 = rep->acf.tau_int = rep->acf.ess = NAN;
	rep->tokens_per_step = rep->tokens_per_s = rep->tokens_per_s_gpu = NAN;
	rep->tflops_mean = rep->tflops_median = NAN;
	rep->periodic_share = rep->outlier_share = rep->win_stall_share = NAN;
	rep->drift.change = NAN;
	rep->final_loss = NAN;
	rep->final_loss_iteration = TS_NO_INT;
	rep->slowest_rank = -1;
	rep->mixture_mean_ms = NAN;
	ts_loss_health_release(&rep->health);
}

double ts_tflops_delivered(const double *tflops, const double *step_ms, size_t n)
{
	double work = 0, time = 0, sum = 0;
	size_t nr = 0;

	for (size_t i = 0; i < n; i++) {
		if (!isfinite(tflops[i]))
			continue;
		sum += tflops[i];
		nr++;
		if (step_ms && isfinite(step_ms[i]) && step_ms[i] > 0) {
			work += tflops[i] * step_ms[i];
			time += step_ms[i];
		}
	}
	if (time > 0)
		return work / time;
	return nr ? sum / (double)nr : NAN;
}

static void throughput(const struct ts_step_merged *v, const size_t *wi, size_t nw,
		       const struct ts_steplog *log, const struct ts_steps_opts *o,
		       struct ts_steps_report *rep, double *tmp)
{
	double gbs = (double)o->gbs, gsum = 0;
	size_t nt = 0, ntok = 0, ng = 0;
	double tok = 0;

	/* each step's own logged batch: a ramp-up changes it, and tokens/s is
	 * the window's tokens over its time (the mean batch over the mean
	 * step time, the same steps in both) */
	for (size_t i = 0; i < nw; i++) {
		int64_t g = v[wi[i]].gbs;
		if (g == TS_NO_INT || g <= 0)
			continue;
		gsum += (double)g;
		ng++;
		if (!rep->gbs_min || g < rep->gbs_min)
			rep->gbs_min = g;
		if (g > rep->gbs_max)
			rep->gbs_max = g;
	}
	if (!o->gbs && ng == nw && ng)
		gbs = gsum / (double)ng;
	else if (!o->gbs && ng)   /* some steps without one: the first logged, as before */
		for (size_t i = 0; i < nw && !gbs; i++)
			if (v[wi[i]].gbs != TS_NO_INT && v[wi[i]].gbs > 0)
				gbs = (double)v[wi[i]].gbs;
	if (!o->gbs && rep->gbs_min != rep->gbs_max)
		rep->warnings |= TS_WARN_GBS_VARIES;
	for (size_t i = 0; i < nw; i++)
		if (v[wi[i]].tokens != TS_NO_INT) {
			tok += (double)v[wi[i]].tokens;
			ntok++;
		}
	if (gbs > 0 && o->seq > 0)
		rep->tokens_per_step = gbs * (double)o->seq;
	else if (ntok == nw && nw > 0)
		rep->tokens_per_step = tok / (double)ntok;
	rep->gpus = o->gpus;
	if (!rep->gpus && log->format == TS_LOG_JSONL) {
		int32_t maxr = -1;

		for (size_t i = 0; i < log->steps.n; i++)
			if (log->steps.v[i].rank > maxr)
				maxr = log->steps.v[i].rank;
		rep->gpus = maxr + 1 > 0 ? maxr + 1 : 0;
	}
	if (isfinite(rep->tokens_per_step) && rep->mean_ms > 0) {
		rep->tokens_per_s = rep->tokens_per_step / (rep->mean_ms / 1e3);
		if (rep->gpus > 0)
			rep->tokens_per_s_gpu = rep->tokens_per_s / (double)rep->gpus;
	}
	for (size_t i = 0; i < nw; i++)
		if (isfinite(v[wi[i]].tflops))
			tmp[nt++] = v[wi[i]].tflops;
	if (nt) {
		double med, *ms = tmp + nt;

		/* the rates again, beside their step times (tmp holds 2 nw) */
		nt = 0;
		for (size_t i = 0; i < nw; i++)
			if (isfinite(v[wi[i]].tflops)) {
				tmp[nt] = v[wi[i]].tflops;
				ms[nt++] = v[wi[i]].step_ms;
			}
		rep->tflops_mean = ts_tflops_delivered(tmp, ms, nt);
		if (!ts_stats_median_mad(tmp, nt, &med, NULL))
			rep->tflops_median = med;
	}
}

/* rep->ramp_* of the timed records v[ti[0..nt)] (steps.h). */
static void batch_ramp(const struct ts_step_merged *v, const size_t *ti, size_t nt,
		       struct ts_steps_report *rep)
{
	int64_t first = TS_NO_INT, prev = TS_NO_INT;
	size_t end = 0;

	for (size_t i = 0; i < nt; i++) {
		int64_t g = v[ti[i]].gbs;

		if (g == TS_NO_INT || g <= 0)
			continue;
		if (prev != TS_NO_INT && g < prev)
			return;   /* it falls: batches that vary, no ramp */
		if (prev == TS_NO_INT)
			first = g;
		else if (g > prev)
			end = i;
		prev = g;
	}
	if (!end)
		return;
	rep->ramp_end_iteration = v[ti[end]].iteration;
	rep->ramp_gbs_first = first;
	rep->ramp_gbs_last = prev;
	rep->warnings |= TS_WARN_GBS_RAMP;
}

/* Where the run's own batch starts in the compacted records tc[0..nc):
 * their index; 0 (and no ramp) when no usable record has it. */
static size_t ramp_start(const struct ts_step_merged *v, const size_t *tc, size_t nc,
			 struct ts_steps_report *rep)
{
	size_t r0 = 0;

	if (rep->ramp_end_iteration == TS_NO_INT)
		return 0;
	while (r0 < nc && v[tc[r0]].iteration < rep->ramp_end_iteration)
		r0++;
	if (r0 < nc)
		return r0;
	rep->ramp_end_iteration = TS_NO_INT;
	rep->ramp_gbs_first = rep->ramp_gbs_last = 0;
	rep->warnings &= ~(unsigned)TS_WARN_GBS_RAMP;
	return 0;
}

/*
 * The window search sees no artefact: a checkpoint step, or a restarted
 * process's warm-up, is neither a warm-up of the run nor a level of its
 * own. Compacts y[0..n) (record ti[i]) in place to its non-artefact
 * values, their records in tc; returns their count.
 */
static size_t compact(double *y, size_t n, const struct ts_steps_report *rep, const size_t *ti,
		      size_t *tc)
{
	size_t nc = 0;

	for (size_t i = 0; i < n; i++)
		if (!rep->artefact[ti[i]]) {
			y[nc] = y[i];
			tc[nc++] = ti[i];
		}
	return nc;
}

int ts_steps_analyze(const struct ts_steplog *log, const struct ts_steps_opts *o,
		     struct ts_steps_report *rep, struct ts_err *err)
{
	struct ts_step_merged *v = NULL;
	size_t nv = 0, *ti = NULL, *tc = NULL, nt = 0, skip = 0, *wi = NULL, nw = 0, a = 0, b = 0;
	size_t family;
	double *y = NULL, *w = NULL;
	int rc;

	report_blank(rep);
	snprintf(rep->format, sizeof(rep->format), "%s",
		 ts_log_format_name(log->formats & (1u << TS_LOG_BRIDGE) ? TS_LOG_BRIDGE :
				    log->format));
	rc = ts_steps_merge(log, &v, &nv);
	if (rc)
		goto out;
	rep->iterations = nv;
	rc = TS_ENOMEM;
	rep->iter = malloc((nv + 1) * sizeof(*rep->iter));
	rep->step_ms = malloc((nv + 1) * sizeof(*rep->step_ms));
	rep->artefact = malloc(nv + 1);
	rep->tflops = malloc((nv + 1) * sizeof(*rep->tflops));
	ti = malloc((nv + 1) * sizeof(*ti));
	wi = malloc((nv + 1) * sizeof(*wi));
	tc = calloc(nv + 1, sizeof(*tc)); /* gcc 12 -O2 cannot see compact() fill it */
	y = malloc((nv + 1) * sizeof(*y));
	w = malloc(2 * (nv + 1) * sizeof(*w));   /* throughput(): rates and times */
	if (!rep->iter || !rep->step_ms || !rep->artefact || !rep->tflops || !ti || !wi || !tc || !y || !w)
		goto out;
	rep->n = nv;
	for (size_t i = 0; i < nv; i++)
		if (isfinite(v[i].step_ms))
			ti[nt++] = i;
	/* Iteration 1 carries compilation and allocator warm-up: never
	 * steady, nor is an interval record that holds it. The first two
	 * timed records tell (the first two records when none is timed). */
	if (nt)
		rep->first_cut = ts_steps_first_cut(v[ti[0]].iteration,
						    nt > 1 ? v[ti[1]].iteration : TS_NO_INT);
	else
		rep->first_cut = ts_steps_first_cut(nv ? v[0].iteration : 1,
						    nv > 1 ? v[1].iteration : TS_NO_INT);
	for (size_t i = 0; i < nv; i++) {
		rep->iter[i] = v[i].iteration;
		rep->step_ms[i] = v[i].step_ms;
		rep->tflops[i] = v[i].tflops;
		rep->artefact[i] = (unsigned char)artefact_of(&v[i], rep->first_cut);
	}
	if (ts_record_interval(rep->iter, nv, &rep->log_interval))
		goto out;
	if (nv) {
		rep->first_iteration = v[0].iteration;
		rep->last_iteration = v[nv - 1].iteration;
	}
	rc = ts_loss_health_judge(log, &rep->health, err);
	if (rc)
		goto out;
	rc = loss_curve(v, nv, rep);
	if (rc)
		goto out;
	if (nt && v[ti[0]].iteration <= rep->first_cut)
		skip = 1;
	rep->dropped_first = (int)skip;
	family = 1 + phase_series(v, nv, rep->first_cut);
	rc = find_stalls(v, ti + skip, nt - skip, family, rep, y);
	if (rc)
		goto out;
	batch_ramp(v, ti + skip, nt - skip, rep);
	if (nt == 0) {
		rep->warnings |= TS_WARN_NO_TIME;
	} else if (o->window_first != TS_NO_INT) {
		size_t nc = compact(y, nt - skip, rep, ti + skip, tc), cut;
		size_t r0 = ramp_start(v, tc, nc, rep);
		int steady;

		/* where the warm-up (after a batch-size ramp) ends, for a
		 * declared window to be checked against (validate) */
		rc = warmup_end(y + r0, nc - r0, rep, v, tc + r0, &cut, &steady);
		if (rc)
			goto out;
		cut += r0;
		rep->mser_cut_iteration = nc ? v[tc[cut < nc ? cut : 0]].iteration : TS_NO_INT;
		size_t nart = 0;

		for (size_t i = 0; i < nt; i++) {
			if (!ts_record_in_window(ts_steps_record_from(rep, ti[i]), v[ti[i]].iteration,
						 o->window_first, o->window_last))
				continue;
			if (rep->artefact[ti[i]])
				nart++;
			else
				wi[nw++] = ti[i];
		}
		if (nw == 0 && nart) {
			rc = ts_err_set(err, TS_EUSAGE,
					"window %lld:%lld holds %zu timed step(s), all left out of "
					"the statistics (iteration 1, profiler, checkpoint, "
					"evaluation, restart, non-finite or skipped steps)",
					(long long)o->window_first, (long long)o->window_last, nart);
			goto out;
		}
		if (nw == 0) {
			rc = ts_err_set(err, TS_EUSAGE,
					"window %lld:%lld holds no timed step (the log has "
					"iterations %lld..%lld)",
					(long long)o->window_first, (long long)o->window_last,
					(long long)v[ti[0]].iteration, (long long)v[ti[nt - 1]].iteration);
			goto out;
		}
	} else {
		size_t nc = compact(y, nt - skip, rep, ti + skip, tc);
		size_t r0 = ramp_start(v, tc, nc, rep);

		rep->win_auto = 1;
		/* a batch-size ramp is neither warm-up nor a level of the run */
		rc = auto_window(y + r0, nc - r0, rep, v, tc + r0, &a, &b);
		if (rc)
			goto out;
		a += r0;
		b += r0;
		/* the window spans tc[a, b); the artefacts among them stay out */
		for (size_t i = a; i < b; i++)
			wi[nw++] = tc[i];
		if (nw == 0)
			for (size_t i = 0; i < nt; i++)
				if (!rep->artefact[ti[i]])
					wi[nw++] = ti[i];
		if (nw == 0 && nt) {
			rep->warnings |= TS_WARN_NO_USABLE;
			for (size_t i = 0; i < nt; i++)
				rep->unusable[rep->artefact[ti[i]]]++;
		}
	}
	if (nw) {
		rep->win_first = v[wi[0]].iteration;
		rep->win_last = v[wi[nw - 1]].iteration;
		rep->win_n = nw;
		for (size_t i = 0; i < nw; i++)
			w[i] = v[wi[i]].step_ms;
		rc = window_stats(w, nw, o->seed, rep);
		if (rc)
			goto out;
		throughput(v, wi, nw, log, o, rep, w);
		rc = bucket_summaries(v, wi, nw, rep);
		if (rc)
			goto out;
	}
	{
		double wall = 0;

		for (size_t i = skip; i < nt; i++)
			wall += v[ti[i]].step_ms;
		rc = phase_summaries(v, nv, wall, family, o->seed, rep);
		if (rc)
			goto out;
	}
	rc = rank_summaries(log, rep);
out:
	if (rc == TS_ENOMEM)
		ts_err_set(err, rc, "out of memory");
	if (rc)
		ts_steps_report_release(rep);
	free(v);
	free(ti);
	free(tc);
	free(wi);
	free(y);
	free(w);
	return rc;
}

void ts_steps_report_release(struct ts_steps_report *rep)
{
	free(rep->iter);
	free(rep->step_ms);
	free(rep->artefact);
	free(rep->tflops);
	free(rep->outliers);
	ts_loss_health_release(&rep->health);
	free(rep->loss_spikes);
	free(rep->grad_spikes);
	free(rep->ranks);
	free(rep->buckets);
	free(rep->phases);
	report_blank(rep);
}

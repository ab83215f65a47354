/*
 * synth_runs.h - synthetic training runs with known truth, for checking
 * that ts_ab_compare's intervals keep their coverage (test_ab_calibration.c)
 * and for measuring its power (bench/ab_power.c).
 *
 * Step times are lognormal with mean mu_ms and coefficient of variation cv
 * around a per-run level, driven by a stationary AR(1) Gaussian process with
 * lag-1 autocorrelation rho (the log-scale correlation; consecutive steps of
 * a loaded machine are slow together). The run level itself is lognormal
 * with mean 1 and CV run_cv (run-to-run variance: a different node, a
 * different neighbour). A stall of stall_ms is added to every stall_every-th
 * iteration (7, 14, ... like the shared d_stall run) and `slowdown`
 * multiplies every step. Iteration 1 is three times slower (a warm-up).
 * The loss curve is the same deterministic line in every run, so only the
 * timing differs.
 *
 * Expected mean step time over a window: slowdown * mu_ms, plus
 * stall_ms / stall_every on average.
 */
#ifndef TS_SYNTH_RUNS_H
#define TS_SYNTH_RUNS_H

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "trainscope/gate.h"
#include "trainscope/stats.h"

struct synth_noise {
	double mu_ms;       /* mean step time */
	double cv;          /* within-run coefficient of variation */
	double rho;         /* lag-1 autocorrelation of the log step times */
	double run_cv;      /* run-to-run coefficient of variation of the level */
};

struct synth_effect {
	double slowdown;    /* multiplies every step (1 = none) */
	size_t stall_every; /* 0 = no stalls */
	double stall_ms;
};

/* A standard normal variate (Box-Muller; the second value is dropped). */
static inline double synth_normal(struct ts_rng *g)
{
	double u = ts_rng_double(g), v = ts_rng_double(g);

	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* Mean of a lognormal factor with CV cv is 1: exp(s z - s^2 / 2), s^2 = ln(1 + cv^2). */
static inline double synth_lognormal(double z, double cv)
{
	double s = sqrt(log(1.0 + cv * cv));

	return exp(s * z - s * s / 2.0);
}

/* Fill r (initialised here) with n iterations; id makes the path unique. */
static inline int synth_run(struct ts_run *r, unsigned id, size_t n, const struct synth_noise *nz,
			    const struct synth_effect *ef, struct ts_rng *g)
{
	double level = synth_lognormal(synth_normal(g), nz->run_cv);
	double z = synth_normal(g); /* the stationary start */

	ts_run_init(r);
	snprintf(r->path, sizeof(r->path), "synthetic-%u", id);
	for (size_t i = 1; i <= n; i++) {
		struct ts_run_point p;
		double ms;

		z = nz->rho * z + sqrt(1.0 - nz->rho * nz->rho) * synth_normal(g);
		ms = nz->mu_ms * level * ef->slowdown * synth_lognormal(z, nz->cv);
		if (ef->stall_every && i % ef->stall_every == 0)
			ms += ef->stall_ms;
		memset(&p, 0, sizeof(p));
		p.iteration = (int64_t)i;
		p.step_ms = i == 1 ? 3 * ms : ms;
		p.excluded = i == 1 ? TS_EXCL_FIRST : 0; /* as ts_run_load marks it */
		p.loss = 8.0 - 0.001 * (double)i;
		p.grad_norm = 1.0;
		for (int k = 0; k < TS_PHASE_COUNT; k++)
			p.phase_ms[k] = NAN; /* no phases logged */
		if (TS_VEC_PUSH(r->pts, p))
			return TS_ENOMEM;
	}
	return 0;
}

/* Outcome counts of many simulated comparisons. */
struct synth_tally {
	size_t trials, covered, slower, faster, no_difference, inconclusive, invalid;
};

/*
 * `trials` comparisons of runs_per_side baseline runs (no effect) against
 * as many candidate runs (effect ef), n iterations each, on noise nz, with
 * options opts (NULL: the defaults). `truth` is the true ratio of mean step
 * times; an interval containing it counts as covered. Seeds derive from
 * `seed`, so a tally is reproducible.
 */
static inline int synth_tally_ab(size_t trials, size_t runs_per_side, size_t n,
				 const struct synth_noise *nz, const struct synth_effect *ef,
				 double truth, const struct ts_ab_opts *opts, uint64_t seed,
				 struct synth_tally *t)
{
	static const struct synth_effect none = { 1.0, 0, 0.0 };
	struct ts_run runs[2 * 16];
	struct ts_ab_opts o;
	struct ts_rng g;
	int rc = 0;

	if (runs_per_side == 0 || runs_per_side > 16)
		return TS_EUSAGE;
	memset(t, 0, sizeof(*t));
	ts_rng_init(&g, seed);
	if (opts)
		o = *opts;
	else
		ts_ab_opts_init(&o);
	for (size_t k = 0; k < trials && !rc; k++) {
		struct ts_ab_result res;
		struct ts_err err;
		size_t made = 0;

		for (; made < 2 * runs_per_side && !rc; made++)
			rc = synth_run(&runs[made], (unsigned)made, n, nz,
				       made < runs_per_side ? &none : ef, &g);
		ts_ab_result_init(&res);
		ts_err_init(&err);
		o.seed = seed + k;
		if (!rc)
			rc = ts_ab_compare(runs, runs_per_side, runs + runs_per_side, runs_per_side,
					   &o, &res, &err);
		if (!rc) {
			t->trials++;
			t->covered += res.verdict != TS_AB_INVALID && res.ci95_low <= truth &&
				      truth <= res.ci95_high;
			t->slower += res.verdict == TS_AB_SLOWER;
			t->faster += res.verdict == TS_AB_FASTER;
			t->no_difference += res.verdict == TS_AB_NO_DIFFERENCE;
			t->inconclusive += res.verdict == TS_AB_INCONCLUSIVE;
			t->invalid += res.verdict == TS_AB_INVALID;
		}
		ts_ab_result_release(&res);
		for (size_t i = 0; i < made; i++)
			ts_run_release(&runs[i]);
	}
	return rc;
}

#endif

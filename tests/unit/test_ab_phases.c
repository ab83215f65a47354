/*
 * The public A/B statistics by hand (gate.h): ts_ab_welch_log_ratio on a
 * three-against-three example, ts_ab_decide on its edges, and ab's
 * per-phase attribution (struct ts_ab_phase) on runs whose phase times are
 * constant, so every expected number follows from arithmetic written here.
 */
#include <stdlib.h>
#include "harness.h"
#include "trainscope/gate.h"

/*
 * Welch t on logs. a = exp{0, 1, 2}, b = exp{0, s, 2s} with
 * s = (sqrt 6 + sqrt 2) / 2 = 1.9318517 (s^2 = 2 + sqrt 3 = 3.7320508).
 *   means of logs   1 and s; difference s - 1 = 0.9318517
 *   variances       1 and s^2 (each {0, x, 2x} has sample variance x^2)
 *   se^2            1/3 + s^2/3 = (3 + sqrt 3)/3 = 1.5773503, se = 1.2559261
 *   Welch df        (1/3 + s^2/3)^2 / ((1/3)^2/2 + (s^2/3)^2/2)
 *                   = 2 (1 + s^2)^2 / (1 + s^4) = 2 (3 + sqrt 3)^2 / (1 + (2 + sqrt 3)^2)
 *                   = 2 (12 + 6 sqrt 3) / (8 + 4 sqrt 3) = 3 exactly
 *   t(0.975, 3)     3.182446 (any t table)
 *   t se            3.9969173
 *   estimate        exp(0.9318517) = 2.5392066
 *   interval        exp(0.9318517 -+ 3.9969173) = [0.0466508, 138.20926]
 */
TEST(ab_welch_log_ratio_by_hand)
{
	double s = (sqrt(6.0) + sqrt(2.0)) / 2;
	double a[3] = { exp(0.0), exp(1.0), exp(2.0) }, b[3] = { 1.0, exp(s), exp(2 * s) };
	struct ts_ab_ratio r;

	ts_ab_welch_log_ratio(a, 3, b, 3, &r);
	CHECK_REL(r.estimate, 2.5392066, 1e-6);
	CHECK_REL(r.ci95_low, 0.0466508, 1e-5);
	CHECK_REL(r.ci95_high, 138.20926, 1e-5);
	CHECK(r.method != NULL);
	/* swapping the sides inverts everything */
	ts_ab_welch_log_ratio(b, 3, a, 3, &r);
	CHECK_REL(r.estimate, 1 / 2.5392066, 1e-6);
	CHECK_REL(r.ci95_high, 1 / 0.0466508, 1e-5);
	/* one value on a side: no interval */
	ts_ab_welch_log_ratio(a, 1, b, 3, &r);
	CHECK(isnan(r.estimate) && isnan(r.ci95_low) && isnan(r.ci95_high) && !r.method);
}

/* Band 0.25 (exact in binary, so 1 -+ band are exactly 0.75 and 1.25). */
TEST(ab_decide_edges)
{
	CHECK_I64(ts_ab_decide(0.5, 0.7499, 0.25), TS_AB_FASTER);       /* hi just under 0.75 */
	CHECK_I64(ts_ab_decide(0.5, 0.75, 0.25), TS_AB_INCONCLUSIVE);  /* on the edge: not < */
	CHECK_I64(ts_ab_decide(1.2501, 2.0, 0.25), TS_AB_SLOWER);      /* lo just over 1.25 */
	CHECK_I64(ts_ab_decide(1.25, 2.0, 0.25), TS_AB_INCONCLUSIVE);
	CHECK_I64(ts_ab_decide(0.75, 1.25, 0.25), TS_AB_NO_DIFFERENCE); /* edges inside */
	CHECK_I64(ts_ab_decide(0.7499, 1.0, 0.25), TS_AB_INCONCLUSIVE); /* just outside */
	CHECK_I64(ts_ab_decide(1.0, 1.2501, 0.25), TS_AB_INCONCLUSIVE);
	CHECK_I64(ts_ab_decide(1.0, 1.0, 0.0), TS_AB_NO_DIFFERENCE);
	/* NaN anywhere decides nothing, even with the other bound far out */
	CHECK_I64(ts_ab_decide(NAN, 0.5, 0.25), TS_AB_INCONCLUSIVE);
	CHECK_I64(ts_ab_decide(2.0, NAN, 0.25), TS_AB_INCONCLUSIVE);
	CHECK_I64(ts_ab_decide(NAN, NAN, 0.25), TS_AB_INCONCLUSIVE);
	CHECK_I64(ts_ab_decide(0.9, 1.1, NAN), TS_AB_INCONCLUSIVE);
}

/* A run of n iterations: step 300 ms (iteration 1: 900), the phases given
 * (NAN = not logged; first_only > 0 logs `data` only up to that iteration). */
static void make_run(struct ts_run *r, const char *path, size_t n, const double *ph,
		     int64_t data_until)
{
	ts_run_init(r);
	snprintf(r->path, sizeof(r->path), "%s", path);
	for (size_t i = 1; i <= n; i++) {
		struct ts_run_point p;

		memset(&p, 0, sizeof(p));
		p.iteration = (int64_t)i;
		p.step_ms = i == 1 ? 900 : 300;
		p.excluded = i == 1 ? TS_EXCL_FIRST : 0; /* as ts_run_load marks it */
		p.loss = 8.0 - 0.001 * (double)i;
		p.grad_norm = 1.0;
		for (int k = 0; k < TS_PHASE_COUNT; k++)
			p.phase_ms[k] = ph[k];
		if (data_until > 0 && (int64_t)i > data_until)
			p.phase_ms[TS_PHASE_DATA] = NAN;
		CHECK(TS_VEC_PUSH(r->pts, p) == 0);
	}
}

static const struct ts_ab_phase *find_phase(const struct ts_ab_result *res, int k)
{
	for (size_t i = 0; i < res->phases.n; i++)
		if (res->phases.v[i].phase == k)
			return &res->phases.v[i];
	return NULL;
}

/*
 * Constant phases, so every interval has zero width and the numbers are
 * exact. Baseline data 5 ms, fwd 100, bwd 180, comm 0.3; candidate data
 * 25 ms, fwd 100, bwd 180, comm 0.6; opt 15 ms in the baseline only.
 *   compared: data, fwd, bwd, comm -> m = 4, level 1 - 0.05/4 = 0.9875
 *   data: ratio 25/5 = 5; share 5/300; band 0.02 * 300/5 = 1.2 -> [5, 5]
 *         lies above 2.2: slower
 *   fwd, bwd: ratio 1, band 0.02 * 300/100 = 0.06 and 0.02 * 300/180 =
 *         0.0333: no_difference
 *   comm: ratio 0.6/0.3 = 2, but its band is 0.02 * 300/0.3 = 20: a phase
 *         of 0.1 % of the step doubling moves the step by 0.1 %, inside
 *         the 2 % band: no_difference
 *   opt: listed, not compared ("logged by the baseline only")
 */
TEST(ab_phases_constant_runs)
{
	double pb[TS_PHASE_COUNT], pc[TS_PHASE_COUNT];
	struct ts_run r[2];
	struct ts_ab_opts o;
	struct ts_ab_result res;
	struct ts_err err;
	const struct ts_ab_phase *d, *c, *op, *f;

	for (int k = 0; k < TS_PHASE_COUNT; k++)
		pb[k] = pc[k] = NAN;
	pb[TS_PHASE_DATA] = 5, pc[TS_PHASE_DATA] = 25;
	pb[TS_PHASE_FORWARD] = pc[TS_PHASE_FORWARD] = 100;
	pb[TS_PHASE_BACKWARD] = pc[TS_PHASE_BACKWARD] = 180;
	pb[TS_PHASE_COMM] = 0.3, pc[TS_PHASE_COMM] = 0.6;
	pb[TS_PHASE_OPTIMIZER] = 15;
	make_run(&r[0], "base", 100, pb, 0);
	make_run(&r[1], "cand", 100, pc, 0);
	ts_ab_opts_init(&o);
	ts_ab_result_init(&res);
	ts_err_init(&err);
	CHECK(ts_ab_compare(&r[0], 1, &r[1], 1, &o, &res, &err) == 0);
	/* the total: the same 300 ms steps */
	CHECK_I64(res.verdict, TS_AB_NO_DIFFERENCE);
	CHECK_I64(res.phases.n, 5);
	CHECK_I64(res.phases_compared, 4);
	CHECK_NEAR(res.phase_ci_level, 0.9875, 1e-12);
	d = find_phase(&res, TS_PHASE_DATA);
	CHECK(d != NULL);
	if (d) {
		CHECK_STR(d->name, "data");
		CHECK(d->reason == NULL);
		CHECK_I64(d->pairs, res.win_steps);
		CHECK_NEAR(d->base_mean_ms, 5, 1e-9);
		CHECK_NEAR(d->cand_mean_ms, 25, 1e-9);
		CHECK_NEAR(d->ratio, 5, 1e-9);
		CHECK_NEAR(d->ci_low, 5, 1e-9);
		CHECK_NEAR(d->ci_high, 5, 1e-9);
		CHECK_NEAR(d->share, 5.0 / 300, 1e-12);
		CHECK_NEAR(d->band, 1.2, 1e-9);
		CHECK_I64(d->verdict, TS_AB_SLOWER);
	}
	f = find_phase(&res, TS_PHASE_BACKWARD);
	CHECK(f && f->verdict == TS_AB_NO_DIFFERENCE);
	CHECK(f && fabs(f->band - 0.02 * 300 / 180) < 1e-12);
	c = find_phase(&res, TS_PHASE_COMM);
	CHECK(c && fabs(c->ratio - 2) < 1e-9 && fabs(c->band - 20) < 1e-9);
	CHECK(c && c->verdict == TS_AB_NO_DIFFERENCE);
	op = find_phase(&res, TS_PHASE_OPTIMIZER);
	CHECK(op && op->reason && strcmp(op->reason, "logged by the baseline only") == 0);
	CHECK(op && op->verdict == TS_AB_INVALID && isnan(op->ratio));
	CHECK(op && fabs(op->base_mean_ms - 15) < 1e-9 && isnan(op->cand_mean_ms));
	CHECK(find_phase(&res, TS_PHASE_FWD_BWD) == NULL); /* logged by nobody: not listed */
	ts_ab_result_release(&res);
	ts_run_release(&r[0]);
	ts_run_release(&r[1]);
}

/* A phase the candidate logs on only a few paired steps is not compared;
 * runs without phase times get no phases at all. */
TEST(ab_phases_too_few_and_none)
{
	double pb[TS_PHASE_COUNT], none[TS_PHASE_COUNT];
	struct ts_run r[2];
	struct ts_ab_opts o;
	struct ts_ab_result res;
	struct ts_err err;
	const struct ts_ab_phase *d;

	for (int k = 0; k < TS_PHASE_COUNT; k++)
		pb[k] = none[k] = NAN;
	pb[TS_PHASE_DATA] = 5;
	pb[TS_PHASE_FORWARD] = 290;
	make_run(&r[0], "base", 100, pb, 0);
	/* the window starts after the first 10 % (iteration 11 at the
	 * earliest): iterations up to 15 leave at most 5 paired */
	make_run(&r[1], "cand", 100, pb, 15);
	ts_ab_opts_init(&o);
	ts_ab_result_init(&res);
	ts_err_init(&err);
	CHECK(ts_ab_compare(&r[0], 1, &r[1], 1, &o, &res, &err) == 0);
	d = find_phase(&res, TS_PHASE_DATA);
	CHECK(d && d->reason && strstr(d->reason, "need at least 10"));
	CHECK(d && d->pairs <= 5);
	CHECK_I64(res.phases_compared, 1); /* fwd only */
	CHECK_NEAR(res.phase_ci_level, 0.95, 1e-12);
	ts_ab_result_release(&res);
	ts_run_release(&r[0]);
	ts_run_release(&r[1]);

	make_run(&r[0], "base", 100, none, 0);
	make_run(&r[1], "cand", 100, none, 0);
	ts_ab_result_init(&res);
	CHECK(ts_ab_compare(&r[0], 1, &r[1], 1, &o, &res, &err) == 0);
	CHECK_I64(res.phases.n, 0);
	CHECK_I64(res.phases_compared, 0);
	ts_ab_result_release(&res);
	ts_run_release(&r[0]);
	ts_run_release(&r[1]);
}

/*
 * fit_plan.c - fit the constants of plan's step-time model on published
 * runs and say how well they generalise.
 *
 * The model (src/plan/steptime.c) has five constants physics does not give
 * (struct ts_plan_calib: GEMM efficiency, attention efficiency, per-layer
 * latency, natural-routing imbalance, the EP dispatcher's network factor).
 * This program prices the published layout of every case of a
 * layout-cases CSV with the settings of its run (ts_plan_case_job: the
 * row's cells, else the run's documented recipe) and minimises the sum of
 * squared ln(predicted/measured) by coordinate descent over a fixed grid
 * of each constant (rounds until nothing moves), from the values in
 * ts_plan_calib_init(). Then leave-one-out: for each case, refit on the
 * others and predict it; the RMS of those log errors is the model's
 * stated uncertainty (log_sigma). Output: the fitted constants, the
 * in-sample and leave-one-out error per case. Deterministic; about a
 * second on the eight shared cases.
 *
 * usage: fit_plan [CASES.csv]   (default $DATA/expected/layout-cases.csv)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/gpus.h"
#include "trainscope/input.h"
#include "trainscope/plan.h"

#define MAXC 64
#define NAXES 5

struct job {
	struct ts_plan_case c;
	struct ts_model m;
	struct ts_plan_opts o;
};

static struct job jobs[MAXC];
static size_t njobs;

/* ln(predicted/measured) of case i with constants k. */
static double logerr(size_t i, const struct ts_plan_calib *k)
{
	struct ts_plan_opts o = jobs[i].o;
	struct ts_plan_check r;
	struct ts_err err;

	o.calib = *k;
	ts_err_init(&err);
	if (ts_plan_check_case(&jobs[i].m, &jobs[i].c, &o, 0, &r, &err))
		return 10.0;
	return log(r.pub.step_s / jobs[i].c.step_s);
}

/* Sum of squared log errors over the cases, leaving out `skip` (-1: none). */
static double loss(const struct ts_plan_calib *k, long skip)
{
	double s = 0;

	for (size_t i = 0; i < njobs; i++)
		if ((long)i != skip) {
			double e = logerr(i, k);
			s += e * e;
		}
	return s;
}

struct axis {
	double *p, lo, hi, step;
};

static void fit(struct ts_plan_calib *k, long skip)
{
	struct axis ax[NAXES] = {
		{ &k->gemm_eff, 0.40, 0.95, 0.01 },
		{ &k->attn_eff, 0.20, 0.70, 0.01 },
		{ &k->layer_latency_s, 0.0, 4e-3, 25e-6 },
		{ &k->imbalance, 1.0, 3.0, 0.05 },
		{ &k->ep_net_factor, 0.40, 4.00, 0.05 },
	};
	double best = loss(k, skip);

	for (int pass = 0; pass < 20; pass++) {
		int moved = 0;
		for (int a = 0; a < NAXES; a++) {
			double keep = *ax[a].p;
			int steps = (int)((ax[a].hi - ax[a].lo) / ax[a].step + 0.5);
			for (int i = 0; i <= steps; i++) {
				double l, v = ax[a].lo + i * ax[a].step;
				v = round(v / ax[a].step) * ax[a].step; /* grid values exactly as printed */
				*ax[a].p = v;
				l = loss(k, skip);
				if (l < best - 1e-12) {
					best = l;
					keep = v;
					moved = 1;
				}
			}
			*ax[a].p = keep;
		}
		if (!moved)
			break;
	}
}

int main(int argc, char **argv)
{
	char def[1024], path[1200];
	const char *data = getenv("DATA");
	const char *csv = argc > 1 ? argv[1] : def;
	struct ts_plan_cases cases = { 0 };
	struct ts_gpu_catalog cat;
	struct ts_input in;
	struct ts_err err;
	struct ts_plan_calib k0, k;
	double loo[MAXC], s2 = 0, worst = 0;

	snprintf(def, sizeof(def), "%s/expected/layout-cases.csv", data && *data ? data : "../shared/data");
	ts_err_init(&err);
	if (ts_gpu_catalog_init(&cat) || ts_input_read_all(&in, csv, 1 << 20, &err) ||
	    ts_plan_cases_parse(&cases, in.data, in.len, csv, &err)) {
		fprintf(stderr, "fit_plan: %s: %s\n", csv, err.msg);
		return 2;
	}
	ts_input_release(&in);
	for (size_t i = 0; i < cases.n && njobs < MAXC; i++) {
		struct job *j = &jobs[njobs];
		const struct ts_gpu *g = ts_gpu_find(&cat, cases.v[i].gpu);
		int prec, ok = 0;
		j->c = cases.v[i];
		ts_plan_opts_init(&j->o);
		prec = ts_plan_case_job(&j->c, &j->o);
		for (int c = 0; !ok && ts_plan_case_model_path(csv, &j->c, c, path, sizeof(path)) == 0; c++) {
			ts_model_init(&j->m);
			ts_err_init(&err);
			ok = ts_model_read_config(&j->m, path, &err) == 0 && ts_model_finish(&j->m, &err) == 0;
		}
		if (!ok || !g || prec < 0 || ts_plan_opts_device(&j->o, g, prec, &err)) {
			fprintf(stderr, "fit_plan: %s: cannot load the model, device or precision\n", j->c.id);
			return 2;
		}
		njobs++;
	}
	ts_plan_calib_init(&k0);
	k = k0;
	fit(&k, -1);
	for (size_t i = 0; i < njobs; i++) {
		struct ts_plan_calib kl = k0;
		fit(&kl, (long)i);
		loo[i] = logerr(i, &kl);
		s2 += loo[i] * loo[i];
		if (fabs(loo[i]) > worst)
			worst = fabs(loo[i]);
	}
	printf("fitted on %zu cases, %d constants\n", njobs, NAXES);
	printf("  gemm_eff %.2f  attn_eff %.2f  layer_latency_us %.0f  imbalance %.2f  ep_net_factor %.2f"
	       "  (stated, not fitted: expert_half_rows %.0f)\n",
	       k.gemm_eff, k.attn_eff, k.layer_latency_s * 1e6, k.imbalance, k.ep_net_factor, k.expert_half_rows);
	printf("  leave-one-out RMS ln error %.3f (log_sigma), worst %.1f %%\n", sqrt(s2 / (double)njobs),
	       (exp(worst) - 1.0) * 100.0);
	printf("%-5s %10s %10s %9s %9s\n", "case", "measured", "predicted", "err %", "LOO err %");
	for (size_t i = 0; i < njobs; i++) {
		double e = logerr(i, &k);
		printf("%-5s %10.2f %10.2f %+9.1f %+9.1f\n", jobs[i].c.id, jobs[i].c.step_s,
		       jobs[i].c.step_s * exp(e), (exp(e) - 1.0) * 100.0, (exp(loo[i]) - 1.0) * 100.0);
	}
	printf("\nterms at the fitted constants (s per step; ETP, recompute and imbalance used)\n%-5s", "case");
	for (int t = 0; t < TS_T_COUNT; t++)
		printf(" %8.8s", ts_plan_term_name(t));
	printf("  etp rc    imb\n");
	for (size_t i = 0; i < njobs; i++) {
		struct ts_plan_opts o = jobs[i].o;
		struct ts_plan_check r;
		o.calib = k;
		ts_err_init(&err);
		if (ts_plan_check_case(&jobs[i].m, &jobs[i].c, &o, 0, &r, &err))
			continue;
		printf("%-5s", jobs[i].c.id);
		for (int t = 0; t < TS_T_COUNT; t++)
			printf(" %8.2f", r.pub.time.term_s[t]);
		printf("  %3lld %2d %6.2f\n", (long long)r.pub.etp, r.pub.option, r.pub.time.imbalance);
	}
	ts_plan_cases_release(&cases);
	ts_gpu_catalog_release(&cat);
	return 0;
}

/*
 * ab_phase_power.c - how often ab's per-phase verdict is right: power and
 * false-alarm rate of the `phases` attribution of ts_ab_compare on
 * synthetic runs with known truth (the model of
 * tests/scripts/ab-phases-gen.py, built in memory).
 *
 * Each step: data ~ 4 ms (CV 10 %), fwd ~ 120 ms and bwd ~ 160 ms sharing a
 * lognormal AR(1) load factor (within-run CV and lag-1 rho of the noise
 * case, and a run-to-run level of CV run_cv), opt ~ 15 ms and comm ~ 5 ms
 * (CV 10 %); the step is their sum plus 0.5 ms (~305 ms). The candidate
 * adds a data-loader sleep (the effect); nothing else differs.
 *
 * Columns (shares of the comparisons of a cell):
 *   data slower   the data phase called slower
 *   data wrong    the data phase called faster (or slower with no effect)
 *   other alarm   any of fwd/bwd/opt/comm called slower or faster (their
 *                 truth is no change): the family-wise false alarms
 *   total slower  the total step time called slower
 *
 * usage: ab_phase_power [TRIALS]   (default 200 comparisons per cell)
 */
#include <stdio.h>
#include <stdlib.h>
#include "../tests/unit/synth_runs.h"

struct sleep {
	const char *name;
	size_t every;      /* sleep on every `every`-th iteration (1 = each) */
	double ms;         /* 0 = no effect */
};

static int phase_run(struct ts_run *r, unsigned id, size_t n, const struct synth_noise *nz,
		     const struct sleep *s, struct ts_rng *g)
{
	double level = synth_lognormal(synth_normal(g), nz->run_cv);
	double z = synth_normal(g);

	ts_run_init(r);
	snprintf(r->path, sizeof(r->path), "synthetic-%u", id);
	for (size_t i = 1; i <= n; i++) {
		struct ts_run_point p;
		double load;

		z = nz->rho * z + sqrt(1.0 - nz->rho * nz->rho) * synth_normal(g);
		load = level * synth_lognormal(z, nz->cv);
		memset(&p, 0, sizeof(p));
		for (int k = 0; k < TS_PHASE_COUNT; k++)
			p.phase_ms[k] = NAN;
		p.phase_ms[TS_PHASE_DATA] = 4.0 * synth_lognormal(synth_normal(g), 0.10);
		if (s && s->ms > 0 && i % s->every == 0)
			p.phase_ms[TS_PHASE_DATA] += s->ms;
		p.phase_ms[TS_PHASE_FORWARD] = 120.0 * load;
		p.phase_ms[TS_PHASE_BACKWARD] = 160.0 * load;
		p.phase_ms[TS_PHASE_OPTIMIZER] = 15.0 * synth_lognormal(synth_normal(g), 0.10);
		p.phase_ms[TS_PHASE_COMM] = 5.0 * synth_lognormal(synth_normal(g), 0.10);
		p.iteration = (int64_t)i;
		p.step_ms = 0.5;
		for (int k = 0; k < TS_PHASE_COUNT; k++)
			if (isfinite(p.phase_ms[k]))
				p.step_ms += p.phase_ms[k];
		if (i == 1) {
			p.step_ms *= 3;
			p.excluded = TS_EXCL_FIRST; /* as ts_run_load marks it */
		}
		p.loss = 8.0 - 0.001 * (double)i;
		p.grad_norm = 1.0;
		if (TS_VEC_PUSH(r->pts, p))
			return TS_ENOMEM;
	}
	return 0;
}

struct tally {
	size_t trials, data_slower, data_wrong, other_alarm, total_slower;
};

static int run_cell(size_t trials, size_t sides, size_t n, const struct synth_noise *nz,
		    const struct sleep *s, uint64_t seed, struct tally *t)
{
	struct ts_run runs[16];
	struct ts_rng g;
	struct ts_ab_opts o;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	ts_rng_init(&g, seed);
	ts_ab_opts_init(&o);
	for (size_t k = 0; k < trials && !rc; k++) {
		struct ts_ab_result res;
		struct ts_err err;
		size_t made = 0;

		for (; made < 2 * sides && !rc; made++)
			rc = phase_run(&runs[made], (unsigned)made, n, nz, made < sides ? NULL : s, &g);
		ts_ab_result_init(&res);
		ts_err_init(&err);
		o.seed = seed + k;
		if (!rc)
			rc = ts_ab_compare(runs, sides, runs + sides, sides, &o, &res, &err);
		if (!rc && res.verdict != TS_AB_INVALID) {
			int other = 0;

			t->trials++;
			t->total_slower += res.verdict == TS_AB_SLOWER;
			for (size_t i = 0; i < res.phases.n; i++) {
				const struct ts_ab_phase *ph = &res.phases.v[i];
				int call = ph->verdict == TS_AB_SLOWER || ph->verdict == TS_AB_FASTER;

				if (ph->phase == TS_PHASE_DATA) {
					t->data_slower += ph->verdict == TS_AB_SLOWER;
					t->data_wrong += ph->verdict == TS_AB_FASTER ||
							 (s->ms == 0 && call);
				} else {
					other |= call;
				}
			}
			t->other_alarm += other;
		}
		ts_ab_result_release(&res);
		for (size_t i = 0; i < made; i++)
			ts_run_release(&runs[i]);
	}
	return rc;
}

static double pct(size_t k, size_t n)
{
	return n ? 100.0 * (double)k / (double)n : 0.0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; struct synth_noise nz; } noises[] = {
		{ "quiet (cv 3 %, rho 0.3)", { 0, 0.03, 0.3, 0.0 } },
		{ "loaded (cv 30 %, rho 0.5)", { 0, 0.30, 0.5, 0.0 } },
		{ "loaded + runs 5 %", { 0, 0.30, 0.5, 0.05 } },
	};
	static const struct sleep sleeps[] = {
		{ "none", 1, 0.0 },
		{ "+100 ms every 5th", 5, 100.0 },
		{ "+140 ms every 7th", 7, 140.0 },
		{ "+20 ms every step", 1, 20.0 },
		{ "+2 ms every step", 1, 2.0 },
	};
	static const size_t sides[] = { 1, 4 };
	static const size_t iters[] = { 60, 240 };
	size_t trials = argc > 1 ? strtoul(argv[1], NULL, 10) : 200;

	if (trials == 0) {
		fprintf(stderr, "usage: ab_phase_power [TRIALS]\n");
		return 2;
	}
	printf("%zu comparisons per cell; step ~305 ms, data ~4 ms; 5 phases compared, each at "
	       "99 %% (Bonferroni)\n\n", trials);
	printf("| noise | runs per side | steps | injected | data slower | data wrong | "
	       "other alarm | total slower |\n|---|---|---|---|---|---|---|---|\n");
	for (size_t a = 0; a < sizeof(noises) / sizeof(noises[0]); a++)
		for (size_t b = 0; b < sizeof(sides) / sizeof(sides[0]); b++)
			for (size_t c = 0; c < sizeof(iters) / sizeof(iters[0]); c++)
				for (size_t e = 0; e < sizeof(sleeps) / sizeof(sleeps[0]); e++) {
					struct tally t;
					uint64_t seed = 7000003u * (a + 1) + 10007u * (b + 1) +
							101u * (c + 1) + e;

					if (run_cell(trials, sides[b], iters[c], &noises[a].nz,
						     &sleeps[e], seed, &t)) {
						fprintf(stderr, "ab_phase_power: out of memory\n");
						return 3;
					}
					printf("| %s | %zu | %zu | %s | %.1f%% | %.1f%% | %.1f%% | "
					       "%.1f%% |\n", noises[a].name, sides[b], iters[c],
					       sleeps[e].name, pct(t.data_slower, t.trials),
					       pct(t.data_wrong, t.trials),
					       pct(t.other_alarm, t.trials),
					       pct(t.total_slower, t.trials));
					fflush(stdout);
				}
	return 0;
}

/*
 * synth_stalls.h - synthetic runs with a known periodic stall (or none),
 * written as the text a training job logs, for measuring the recall and
 * false-alarm rate of the stall detector end to end (reader + steps
 * analysis): tests/unit/test_stall_power.c and bench/stall_power.c.
 *
 * Two shapes of run, n iterations each (iteration 1 three times slower,
 * a warm-up):
 *
 *   SYNTH_LOG      Megatron iteration lines; the stall is in the step
 *                  time, the only signal. step = 300 ms + 15 ms z_t
 *                  (+ stall), so the noise SD is 15 ms (CV 5 %).
 *   SYNTH_PHASES   JSONL with data_ms, fwd_ms, bwd_ms, opt_ms and
 *                  step_ms = their sum; the stall is in data_ms:
 *                  data = 2 ms + 0.2 ms z_t (+ stall), noise SD 0.2 ms.
 *                  fwd and bwd are lognormal (means 100 and 180 ms, CV
 *                  40 % each, independent), so the step time has a CV
 *                  near 28 % and hides the stall.
 *
 * z_t is a stationary AR(1) Gaussian process with unit variance and
 * lag-1 autocorrelation rho. The stall adds amp_sd noise SDs (of the
 * series that carries it) to every iteration i with i % period == offset;
 * period 0 is a clean run. Deterministic for a given generator state.
 */
#ifndef TS_SYNTH_STALLS_H
#define TS_SYNTH_STALLS_H

#include "synth_runs.h"
#include "trainscope/core.h"
#include "trainscope/logs.h"
#include "trainscope/steps.h"

enum { SYNTH_LOG = 0, SYNTH_PHASES = 1 };

struct synth_stall {
	int kind;          /* SYNTH_LOG or SYNTH_PHASES */
	size_t n;          /* iterations 1..n */
	size_t period;     /* 0 = no stall */
	size_t offset;     /* stalled iterations: i % period == offset */
	double amp_sd;     /* stall size in noise SDs of the carrying series */
	double rho;        /* lag-1 autocorrelation of the noise */
};

#define SYNTH_STEP_MS 300.0
#define SYNTH_STEP_SD 15.0
#define SYNTH_DATA_MS 2.0
#define SYNTH_DATA_SD 0.2

/* Append the run's text to sb (cleared first). */
static inline void synth_stall_text(const struct synth_stall *c, struct ts_rng *g, struct ts_sb *sb)
{
	double z = synth_normal(g), a = sqrt(1.0 - c->rho * c->rho);

	ts_sb_reset(sb);
	for (size_t i = 1; i <= c->n; i++) {
		int stalled = c->period && i % c->period == c->offset;
		double warm = i == 1 ? 3.0 : 1.0;

		z = c->rho * z + a * synth_normal(g);
		if (c->kind == SYNTH_LOG) {
			double ms = SYNTH_STEP_MS + SYNTH_STEP_SD * z +
				    (stalled ? c->amp_sd * SYNTH_STEP_SD : 0);

			ts_sb_addf(sb, " iteration %8zu/%8zu | consumed samples: %12zu | "
				   "elapsed time per iteration (ms): %.3f | learning rate: 1.000000E-04 | "
				   "global batch size:     8 | lm loss: %.6E | loss scale: 1.0 | "
				   "grad norm: 1.000 | number of skipped iterations:   0 | "
				   "number of nan iterations:   0 |\n", i, c->n, 8 * i, warm * ms,
				   8.0 - 0.001 * (double)i);
		} else {
			double data = SYNTH_DATA_MS + SYNTH_DATA_SD * z +
				      (stalled ? c->amp_sd * SYNTH_DATA_SD : 0);
			double fwd = warm * 100.0 * synth_lognormal(synth_normal(g), 0.4);
			double bwd = 180.0 * synth_lognormal(synth_normal(g), 0.4);
			double opt = 15.0;

			ts_sb_addf(sb, "{\"iteration\": %zu, \"step_ms\": %.4f, \"data_ms\": %.4f, "
				   "\"fwd_ms\": %.4f, \"bwd_ms\": %.4f, \"opt_ms\": %.4f, "
				   "\"lm_loss\": %.6f}\n", i, data + fwd + bwd + opt, data, fwd,
				   bwd, opt, 8.0 - 0.001 * (double)i);
		}
	}
}

/*
 * Judge an analysis of the run: 1 when a periodic pattern with the true
 * period and phase was reported (on the step time or on any phase),
 * -1 when any other pattern was, 0 when none was.
 */
static inline int synth_stall_judge(const struct ts_steps_report *r, const struct synth_stall *c)
{
	int hit = 0, other = 0;

	if (r->periodic.found) {
		int ok = c->period && r->periodic_period_iters == (int64_t)c->period &&
			 r->periodic_phase_iters == (int64_t)(c->offset % c->period);

		hit |= ok;
		other |= !ok;
	}
	for (size_t k = 0; k < r->nphases; k++) {
		const struct ts_phase_summary *ph = &r->phases[k];
		int ok;

		if (!ph->periodic.found)
			continue;
		ok = c->period && ph->periodic_period_iters == (int64_t)c->period &&
		     ph->periodic_phase_iters == (int64_t)(c->offset % c->period);
		hit |= ok;
		other |= !ok;
	}
	return hit ? 1 : other ? -1 : 0;
}

/* Generate, read and analyse one run; returns the judgement, or -2 on error. */
static inline int synth_stall_trial(const struct synth_stall *c, struct ts_rng *g, struct ts_sb *sb)
{
	struct ts_steplog log;
	struct ts_steps_report r;
	struct ts_steps_opts o;
	struct ts_err err;
	int v = -2;

	synth_stall_text(c, g, sb);
	ts_steplog_init(&log);
	ts_err_init(&err);
	ts_steps_opts_init(&o);
	if (ts_steplog_read_mem(&log, sb->buf, sb->len, "synthetic", &err) == 0 &&
	    ts_steps_analyze(&log, &o, &r, &err) == 0) {
		v = synth_stall_judge(&r, c);
		ts_steps_report_release(&r);
	}
	ts_steplog_release(&log);
	return v;
}

#endif

/*
 * cmd_ab.c - `trainscope ab BASELINE CANDIDATE`: is the candidate faster,
 * and is it still the same training?
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_gate.h"
#include "diff_cli.h"
#include "trainscope/diff.h"
#include "trainscope/gate.h"
#include "trainscope/jsonw.h"
#include "trainscope/ledger.h"
#include "trainscope/paths.h"
#include "trainscope/table.h"

enum { OPT_BASE = 1, OPT_CAND, OPT_BAND, OPT_ALLOW_MULTI, OPT_VARIABLE, OPT_WINDOW,
       OPT_MEM_TOL, OPT_LOSS_TOL, OPT_DB, OPT_WORKLOAD, OPT_SEED, OPT_RUN_CV };

static const struct cli_opt opts[] = {
	{ "baseline", 0, "RUN", "another baseline run (repeat; RUN = directory, log or JSONL)", OPT_BASE },
	{ "candidate", 0, "RUN", "another candidate run (repeat)", OPT_CAND },
	{ "band", 0, "PCT", "practical-significance band in % (default 1 with repeats, 2 without)", OPT_BAND },
	{ "allow-multi", 0, NULL, "compare even when the contracts differ in several fields", OPT_ALLOW_MULTI },
	{ "variable", 0, "KEY", "the contract field this A/B changes (checked against the diff)", OPT_VARIABLE },
	{ "window", 0, "FIRST:LAST", "declared steady window (iterations, inclusive; FIRST-LAST also) for every run", OPT_WINDOW },
	{ "run-cv", 0, "PCT", "run-to-run CV of mean step time to assume without repeats (default 0: within-run only)", OPT_RUN_CV },
	{ "mem-tolerance", 0, "PCT", "allowed peak device-memory growth in % (default 5)", OPT_MEM_TOL },
	{ "loss-tolerance", 0, "PCT", "loss tail limit in % (default 1; bias band half of it): set it from two baseline runs", OPT_LOSS_TOL },
	{ "db", 0, "FILE", "record the experiment in this ledger (default $TRAINSCOPE_DB when set)", OPT_DB },
	{ "workload", 0, "NAME", "workload name in the ledger (default: contract model, else baseline name)", OPT_WORKLOAD },
	{ "seed", 0, "N", "bootstrap seed (default 20260101)", OPT_SEED },
	{ 0 }
};

/* Append each comma-separated path of arg (copied) to *v. */
static int add_list(const char *arg, char ***v, size_t *n, size_t *cap)
{
	const char *p = arg;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char *s = strndup(p, len);
		if (!s || ts_grow((void **)v, cap, *n + 1, sizeof(**v))) {
			free(s);
			return -1;
		}
		(*v)[(*n)++] = s;
		p += len + (comma ? 1 : 0);
	}
	return 0;
}

static void jw_ms(struct ts_jw *w, const char *key, double v)
{
	ts_jw_key(w, key);
	if (isfinite(v))
		ts_jw_fixed(w, v, 3);
	else
		ts_jw_null(w);
}

static void jw_runs(struct ts_jw *w, const char *key, const struct ts_ab_run_summary *s, size_t n)
{
	ts_jw_key(w, key);
	ts_jw_arr(w);
	for (size_t i = 0; i < n; i++) {
		ts_jw_obj(w);
		ts_jw_kstr(w, "path", s[i].path);
		ts_jw_kstr(w, "label", s[i].label);
		ts_jw_ki64(w, "steps_logged", (int64_t)s[i].steps_logged);
		ts_jw_ki64(w, "window_steps", (int64_t)s[i].window_steps);
		jw_ms(w, "mean_step_ms", s[i].mean_ms);
		jw_ms(w, "median_step_ms", s[i].median_ms);
		jw_ms(w, "mean_ci95_low_ms", s[i].ci95_low_ms);
		jw_ms(w, "mean_ci95_high_ms", s[i].ci95_high_ms);
		ts_jw_kstr(w, "ci_method", s[i].ci_method);
		ts_jw_key(w, "cv_pct");
		if (isfinite(s[i].cv))
			ts_jw_fixed(w, 100 * s[i].cv, 2);
		else
			ts_jw_null(w);
		ts_jw_ki64(w, "nonfinite_steps", s[i].nonfinite);
		ts_jw_ki64(w, "skipped_steps", s[i].skipped);
		ts_jw_kf64(w, "peak_device_memory_bytes", s[i].peak_dev_bytes);
		ts_jw_kf64(w, "peak_host_memory_bytes", s[i].peak_host_bytes);
		ts_jw_kf64(w, "final_loss", s[i].final_loss);
		ts_jw_key(w, "final_loss_iteration");
		if (s[i].final_loss_iteration != TS_NO_INT)
			ts_jw_i64(w, s[i].final_loss_iteration);
		else
			ts_jw_null(w);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
}

static void jw_strs(struct ts_jw *w, const char *key, const char *const *v, size_t n)
{
	ts_jw_key(w, key);
	ts_jw_arr(w);
	for (size_t i = 0; i < n; i++)
		ts_jw_str(w, v[i]);
	ts_jw_arr_end(w);
}

/* A phase row's verdict word: the verdict, or not_compared with its reason. */
static const char *phase_verdict(const struct ts_ab_phase *ph)
{
	return ph->reason ? "not_compared" : ts_ab_verdict_name(ph->verdict);
}

/*
 * Attribution: what moved inside the step. Per-phase times when the logs
 * carry them (`phases`); written only when some run logs a phase, so runs
 * without phases keep their output byte for byte. The trace walls of
 * `diff` belong beside them.
 */
static void jw_attribution(struct ts_jw *w, const struct ts_ab_result *r)
{
	if (!r->phases.n)
		return;
	ts_jw_key(w, "phases");
	ts_jw_arr(w);
	for (size_t i = 0; i < r->phases.n; i++) {
		const struct ts_ab_phase *ph = &r->phases.v[i];

		ts_jw_obj(w);
		ts_jw_kstr(w, "phase", ph->name);
		jw_ms(w, "baseline_ms", ph->base_mean_ms);
		jw_ms(w, "candidate_ms", ph->cand_mean_ms);
		ts_jw_key(w, "share_of_step_pct");
		if (isfinite(ph->share))
			ts_jw_fixed(w, 100 * ph->share, 2);
		else
			ts_jw_null(w);
		ts_jw_ki64(w, "paired_steps", (int64_t)ph->pairs);
		ts_jw_key(w, "ratio");
		ts_jw_obj(w);
		ts_jw_kf64(w, "estimate", ph->ratio);
		ts_jw_kf64(w, "ci95_low", ph->ci_low);
		ts_jw_kf64(w, "ci95_high", ph->ci_high);
		ts_jw_key(w, "per_phase_level_pct");
		if (ph->reason)
			ts_jw_null(w);
		else
			ts_jw_fixed(w, 100 * r->phase_ci_level, 2);
		ts_jw_kstr(w, "method", ph->method);
		ts_jw_obj_end(w);
		ts_jw_key(w, "band_pct");
		if (isfinite(ph->band))
			ts_jw_fixed(w, 100 * ph->band, 2);
		else
			ts_jw_null(w);
		ts_jw_kstr(w, "verdict", phase_verdict(ph));
		ts_jw_kstr(w, "reason", ph->reason);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
}

/*
 * The trace walls of `diff` between the first profiler trace of the first
 * run of each side (when both carry one): where the step time moved, by
 * trace's walls, beside the phases of the logs. Every trace of every run
 * of each side gives the environment the traces record
 * (ts_ab_opts.trace_ctx, mixed_ctx).
 */
struct ab_walls {
	int have;
	struct ab_trace_sides s;
	struct ts_diff_result r;
};

/* Compare the sides read (s) when both runs carry a trace; a trace that
 * cannot be read or compared is a trace-walls-skipped warning, not a
 * failed comparison. Returns 0 or TS_ENOMEM (from the warnings). */
static int ab_walls_load(struct ab_walls *aw, struct ts_warnings *warn)
{
	struct ts_diff_opts o;
	struct ts_err *err = &aw->s.err;

	if (!aw->s.base_trace || !aw->s.cand_trace)
		return 0;
	ts_diff_opts_init(&o);
	if (err->code || ts_diff_compare(&aw->s.b, &aw->s.c, &o, &aw->r, err))
		return ts_warnings_add(warn, "trace-walls-skipped", err->path[0] ? err->path : NULL,
				       err->offset, TS_NO_INT, "trace walls not compared: %s",
				       err->msg);
	aw->have = aw->r.pairs.n > 0;
	return 0;
}

static void ab_walls_release(struct ab_walls *aw)
{
	ts_diff_result_release(&aw->r);
	ab_trace_sides_release(&aw->s);
}

static void jw_walls(struct ts_jw *w, const struct ab_walls *aw)
{
	if (!aw->have)
		return;
	ts_jw_key(w, "trace_walls");
	ts_jw_obj(w);
	ts_jw_kstr(w, "baseline_trace", aw->s.base_trace);
	ts_jw_kstr(w, "candidate_trace", aw->s.cand_trace);
	ts_jw_kstr(w, "aligned_by", aw->r.aligned_by);
	ts_jw_ki64(w, "steps", (int64_t)aw->r.pairs.n);
	ts_jw_key(w, "walls");
	ts_jw_arr(w);
	for (int k = 0; k < TS_DW_COUNT; k++) {
		const struct ts_diff_wall_row *x = &aw->r.walls[k];
		ts_jw_obj(w);
		ts_jw_kstr(w, "wall", ts_diff_wall_name(x->wall));
		ts_jw_kfixed_or_null(w, "baseline_us", x->base_ns / 1e3, 3);
		ts_jw_kfixed_or_null(w, "candidate_us", x->cand_ns / 1e3, 3);
		ts_jw_kfixed_or_null(w, "delta_us", x->delta_ns / 1e3, 3);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
	ts_jw_obj_end(w);
}

static void text_walls(struct cli_ctx *ctx, const struct ab_walls *aw, struct ts_sb *out)
{
	struct ts_table t;

	if (!aw->have)
		return;
	ts_sb_addf(out, "\n%strace walls%s (trainscope diff %s %s; mean per compared step, %zu "
		   "step%s aligned by %s)\n", cli_style(ctx, "bold"), cli_style(ctx, "reset"),
		   aw->s.base_trace, aw->s.cand_trace, aw->r.pairs.n, aw->r.pairs.n == 1 ? "" : "s",
		   aw->r.aligned_by);
	ts_table_init(&t);
	ts_table_col(&t, "wall", NULL, TS_LEFT, 0);
	ts_table_col(&t, "baseline", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "candidate", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "delta", "ms", TS_RIGHT, 0);
	for (int k = 0; k < TS_DW_COUNT; k++) {
		const struct ts_diff_wall_row *x = &aw->r.walls[k];
		ts_table_cell(&t, "%s", ts_diff_wall_name(x->wall));
		ts_table_cell(&t, "%.3f", x->base_ns / 1e6);
		ts_table_cell(&t, "%.3f", x->cand_ns / 1e6);
		ts_table_cell(&t, "%+.3f", x->delta_ns / 1e6);
	}
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
}

/* The phase table of the text output (only when some run logs a phase). */
static void text_attribution(struct cli_ctx *ctx, const struct ts_ab_result *r, struct ts_sb *out)
{
	struct ts_table t;
	const char *b = cli_style(ctx, "bold"), *reset = cli_style(ctx, "reset");

	if (!r->phases.n)
		return;
	ts_sb_addf(out, "\n%sphases%s (mean per paired step)", b, reset);
	if (r->phases_compared)
		ts_sb_addf(out, ": %zu compared, each interval at %.2f %% (Bonferroni: all %zu hold "
			   "together with 95 %%); band = the step band / the phase's share\n",
			   r->phases_compared, 100 * r->phase_ci_level, r->phases_compared);
	else
		ts_sb_adds(out, ": none compared\n");
	ts_table_init(&t);
	ts_table_col(&t, "phase", NULL, TS_LEFT, 0);
	ts_table_col(&t, "share", "%", TS_RIGHT, 0);
	ts_table_col(&t, "baseline", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "candidate", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "ratio", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "simultaneous 95% CI", NULL, TS_LEFT, 0);
	ts_table_col(&t, "band", "+-%", TS_RIGHT, 0);
	ts_table_col(&t, "verdict", NULL, TS_LEFT, 0);
	for (size_t i = 0; i < r->phases.n; i++) {
		const struct ts_ab_phase *ph = &r->phases.v[i];

		ts_table_cell(&t, "%s", ph->name);
		if (isfinite(ph->share))
			ts_table_cell(&t, "%.1f", 100 * ph->share);
		else
			ts_table_cell(&t, "-");
		if (isfinite(ph->base_mean_ms))
			ts_table_cell(&t, "%.3f", ph->base_mean_ms);
		else
			ts_table_cell(&t, "-");
		if (isfinite(ph->cand_mean_ms))
			ts_table_cell(&t, "%.3f", ph->cand_mean_ms);
		else
			ts_table_cell(&t, "-");
		if (isfinite(ph->ratio))
			ts_table_cell(&t, "%.4f", ph->ratio);
		else
			ts_table_cell(&t, "-");
		if (isfinite(ph->ci_low) && isfinite(ph->ci_high))
			ts_table_cell(&t, "[%.4f, %.4f]", ph->ci_low, ph->ci_high);
		else if (ph->reason)
			ts_table_cell(&t, "-");
		else
			ts_table_cell(&t, "no noise estimate");
		if (isfinite(ph->band))
			ts_table_cell(&t, "%.1f", 100 * ph->band);
		else
			ts_table_cell(&t, "-");
		ts_table_cell(&t, "%s", phase_verdict(ph));
	}
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
	for (size_t i = 0; i < r->phases.n; i++)
		if (r->phases.v[i].reason)
			ts_sb_addf(out, "  %s not compared: %s\n", r->phases.v[i].name,
				   r->phases.v[i].reason);
}

static const char *decision(const struct ts_ab_result *r)
{
	if (r->verdict == TS_AB_INVALID)
		return "invalid";
	return r->accepted ? "accepted" : "rejected";
}

static void write_json(const struct ts_ab_result *r, const struct ts_run *base,
		       const struct ab_walls *aw, const struct ts_warnings *warn, struct ts_sb *out)
{
	struct ts_jw w;
	struct ts_window_obj win;
	int nowin = r->verdict == TS_AB_INVALID && r->base.n == 0;

	ts_runmodel_window(&base->rm, nowin ? TS_NO_INT : r->win_first,
			   nowin ? TS_NO_INT : r->win_last, &win);
	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", "trainscope.ab/1");
	ts_jw_kstr(&w, "verdict", ts_ab_verdict_name(r->verdict));
	ts_jw_kstr(&w, "decision", decision(r));
	ts_jw_kstr(&w, "variable", r->variable);
	ts_jw_key(&w, "ratio");
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "metric", "mean step time, candidate / baseline");
	ts_jw_kf64(&w, "estimate", r->ratio);
	ts_jw_kf64(&w, "ci95_low", r->ci95_low);
	ts_jw_kf64(&w, "ci95_high", r->ci95_high);
	ts_jw_kstr(&w, "method", r->method);
	ts_jw_obj_end(&w);
	ts_jw_key(&w, "band_pct");
	ts_jw_fixed(&w, 100 * r->band, 2);
	ts_jw_key(&w, "assumed_run_cv_pct");
	ts_jw_fixed(&w, 100 * r->run_cv, 2);
	ts_jw_kbool(&w, "repeats", r->repeats);
	/* the matched window, as every command writes a window; the steps
	 * paired by iteration (artefacts and NaN steps left out) beside it */
	ts_window_json(&w, &win);
	ts_jw_ki64(&w, "paired_steps", (int64_t)r->win_steps);
	jw_ms(&w, "baseline_mean_step_ms", r->base_mean_ms);
	jw_ms(&w, "candidate_mean_step_ms", r->cand_mean_ms);
	jw_attribution(&w, r);
	jw_walls(&w, aw);
	ts_jw_key(&w, "to_decide");
	if (r->decide_note) {
		ts_jw_obj(&w);
		ts_jw_kf64(&w, "more_steps_per_run", r->more_steps_per_run);
		ts_jw_kf64(&w, "more_runs_per_side", r->more_runs_per_side);
		ts_jw_kstr(&w, "note", r->decide_note);
		ts_jw_obj_end(&w);
	} else {
		ts_jw_null(&w);
	}
	ts_jw_key(&w, "correctness");
	ts_jw_obj(&w);
	ts_jw_key(&w, "passed");
	if (r->verdict == TS_AB_INVALID && !r->checks.n)
		ts_jw_null(&w); /* an invalid comparison runs no check */
	else
		ts_jw_bool(&w, r->correctness_passed);
	ts_jw_kstr(&w, "loss_tier", r->loss_tier);
	jw_strs(&w, "reasons", r->reasons.v, r->reasons.n);
	ts_jw_key(&w, "checks");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->checks.n; i++) {
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "name", r->checks.v[i].name);
		ts_jw_kstr(&w, "status", r->checks.v[i].skipped ? "skipped" :
			   r->checks.v[i].passed ? "passed" : "failed");
		ts_jw_kstr(&w, "detail", r->checks.v[i].detail);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_obj_end(&w);
	ts_jw_key(&w, "contract");
	ts_jw_obj(&w);
	ts_jw_kbool(&w, "compared", r->contracts_compared);
	ts_jw_key(&w, "differences");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->diffs.n; i++) {
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "key", r->diffs.v[i].key);
		ts_jw_kstr(&w, "baseline", r->diffs.v[i].a);
		ts_jw_kstr(&w, "candidate", r->diffs.v[i].b);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_obj_end(&w);
	jw_runs(&w, "baseline", r->base.v, r->base.n);
	jw_runs(&w, "candidate", r->cand.v, r->cand.n);
	jw_strs(&w, "invalid_reasons", r->invalid.v, r->invalid.n);
	ts_warnings_json(&w, warn, warn->v.n);
	ts_jw_obj_end(&w);
}

static void write_text(struct cli_ctx *ctx, const struct ts_ab_result *r,
		       const struct ab_walls *aw, const struct ts_warnings *warn, struct ts_sb *out)
{
	struct ts_table t;
	const char *b = cli_style(ctx, "bold"), *reset = cli_style(ctx, "reset");

	if (r->verdict == TS_AB_INVALID) {
		ts_sb_addf(out, "%sinvalid comparison%s: nothing is concluded\n", b, reset);
		for (size_t i = 0; i < r->invalid.n; i++)
			ts_sb_addf(out, "  - %s\n", r->invalid.v[i]);
		for (size_t i = 0; i < r->diffs.n; i++)
			ts_sb_addf(out, "  contract %s: %s -> %s\n", r->diffs.v[i].key,
				   r->diffs.v[i].a ? r->diffs.v[i].a : "(unknown)",
				   r->diffs.v[i].b ? r->diffs.v[i].b : "(unknown)");
		if (warn->v.n)
			ts_sb_addc(out, '\n');
		ts_warnings_text(out, warn, warn->v.n, cli_style(ctx, "yellow"), reset);
		return;
	}
	ts_sb_addf(out, "matched steady window: iterations %lld-%lld (%zu paired steps)\n",
		   (long long)r->win_first, (long long)r->win_last, r->win_steps);
	if (r->variable)
		ts_sb_addf(out, "changed variable: %s\n", r->variable);
	ts_sb_addc(out, '\n');
	ts_table_init(&t);
	ts_table_col(&t, "side", NULL, TS_LEFT, 0);
	ts_table_col(&t, "run", NULL, TS_LEFT, 48);
	ts_table_col(&t, "steps", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "mean step", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "95% CI of mean", "ms", TS_LEFT, 0);
	ts_table_col(&t, "median", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "cv", "%", TS_RIGHT, 0);
	ts_table_col(&t, "NaN/Inf", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "skipped", NULL, TS_RIGHT, 0);
	for (size_t i = 0; i < r->base.n + r->cand.n; i++) {
		const struct ts_ab_run_summary *s = i < r->base.n ? &r->base.v[i] : &r->cand.v[i - r->base.n];
		ts_table_cell(&t, "%s", i < r->base.n ? "baseline" : "candidate");
		ts_table_cell(&t, "%s", s->path);
		ts_table_cell(&t, "%zu", s->window_steps);
		ts_table_cell(&t, "%.2f", s->mean_ms);
		if (isfinite(s->ci95_low_ms))
			ts_table_cell(&t, "[%.2f, %.2f]", s->ci95_low_ms, s->ci95_high_ms);
		else
			ts_table_cell(&t, "too few steps");
		ts_table_cell(&t, "%.2f", s->median_ms);
		ts_table_cell(&t, "%.1f", 100 * s->cv);
		ts_table_cell(&t, "%lld", (long long)s->nonfinite);
		ts_table_cell(&t, "%lld", (long long)s->skipped);
	}
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
	ts_sb_addf(out, "\nratio candidate/baseline (mean step time): %.4f, 95%% CI [%.4f, %.4f]\n",
		   r->ratio, r->ci95_low, r->ci95_high);
	ts_sb_addf(out, "  band +-%.1f %%; %s\n", 100 * r->band, r->method);
	ts_sb_addf(out, "verdict: %s%s%s\n", b, ts_ab_verdict_name(r->verdict), reset);
	if (r->decide_note)
		ts_sb_addf(out, "  to decide: %s\n", r->decide_note);
	text_attribution(ctx, r, out);
	text_walls(ctx, aw, out);
	ts_sb_addf(out, "\ncorrectness: %s (%s loss tier)\n",
		   r->correctness_passed ? "passed" : "FAILED", r->loss_tier);
	for (size_t i = 0; i < r->checks.n; i++)
		ts_sb_addf(out, "  %-16s %-7s %s\n", r->checks.v[i].name,
			   r->checks.v[i].skipped ? "skipped" : r->checks.v[i].passed ? "passed" : "FAILED",
			   r->checks.v[i].detail);
	ts_sb_addf(out, "\ndecision: %s%s%s\n", b, decision(r), reset);
	if (warn->v.n)
		ts_sb_addc(out, '\n');
	ts_warnings_text(out, warn, warn->v.n, cli_style(ctx, "yellow"), reset);
}

static void ledger_run(const struct ts_run *run, const struct ts_ab_run_summary *s,
		       const struct ts_ab_result *r, struct ts_sb *contract, struct ts_ledger_run *lr)
{
	ts_ledger_run_init(lr);
	lr->source = run->path;
	if (run->has_contract) {
		ts_contract_write(&run->contract, contract);
		lr->contract_json = contract->buf;
		lr->contract_label = s->label;
	}
	lr->steps_logged = (int64_t)s->steps_logged;
	lr->window_first = r->win_first;
	lr->window_last = r->win_last;
	lr->window_steps = (int64_t)s->window_steps;
	lr->mean_step_ns = isfinite(s->mean_ms) ? llround(s->mean_ms * 1e6) : -1;
	lr->median_step_ns = isfinite(s->median_ms) ? llround(s->median_ms * 1e6) : -1;
	lr->cv = s->cv;
	lr->peak_mem_bytes = isfinite(s->peak_dev_bytes) ? llround(s->peak_dev_bytes)
			   : isfinite(s->peak_host_bytes) ? llround(s->peak_host_bytes) : -1;
	lr->nan_steps = s->nonfinite;
	lr->skipped_steps = s->skipped;
	lr->final_loss = s->final_loss;
}

static int record(struct cli_ctx *ctx, const char *db, const char *workload,
		  const struct ts_run *runs, size_t nb, size_t nc, const struct ts_ab_result *r,
		  const struct ts_sb *evidence)
{
	struct ts_ledger l;
	struct ts_ledger_experiment e;
	struct ts_ledger_run *lr = calloc(nb + nc, sizeof(*lr));
	struct ts_sb *contracts = calloc(nb + nc, sizeof(*contracts));
	struct ts_sb reasons;
	struct ts_err err;
	int64_t id = 0;
	int rc = 0;
	char wbuf[256];

	ts_err_init(&err);
	ts_sb_init(&reasons);
	if (!lr || !contracts) {
		free(lr);
		free(contracts);
		cli_error(ctx, "out of memory");
		return EXIT_INTERNAL;
	}
	if (!workload) {
		const char *m = runs[0].has_contract ? ts_contract_get(&runs[0].contract, "workload.model", NULL) : NULL;
		if (m) {
			workload = m;
		} else {
			snprintf(wbuf, sizeof(wbuf), "%s", ts_basename(runs[0].path));
			workload = wbuf;
		}
	}
	for (size_t i = 0; i < nb + nc; i++) {
		ts_sb_init(&contracts[i]);
		if (r->verdict == TS_AB_INVALID && (i < nb ? i >= r->base.n : i - nb >= r->cand.n)) {
			ts_ledger_run_init(&lr[i]);
			lr[i].source = runs[i].path;
			continue;
		}
		ledger_run(&runs[i], i < nb ? &r->base.v[i] : &r->cand.v[i - nb], r, &contracts[i], &lr[i]);
		lr[i].workload = workload;
	}
	for (size_t i = 0; i < r->invalid.n; i++)
		ts_sb_addf(&reasons, "%sinvalid: %s", reasons.len ? "\n" : "", r->invalid.v[i]);
	for (size_t i = 0; i < r->reasons.n; i++)
		ts_sb_addf(&reasons, "%s%s", reasons.len ? "\n" : "", r->reasons.v[i]);
	memset(&e, 0, sizeof(e));
	e.workload = workload;
	e.variable = r->variable;
	e.verdict = ts_ab_verdict_name(r->verdict);
	e.decision = decision(r);
	e.ratio = r->ratio;
	e.ci95_low = r->ci95_low;
	e.ci95_high = r->ci95_high;
	e.correctness_passed = r->correctness_passed;
	e.reasons = reasons.len ? reasons.buf : NULL;
	e.evidence_json = evidence->buf;
	e.baseline = lr;
	e.nbaseline = nb;
	e.candidate = lr + nb;
	e.ncandidate = nc;
	if (ts_ledger_open(&l, db, 1, &err) == 0) {
		l.now_ns = cli_fixed_now_ns();
		if (ts_ledger_add_experiment(&l, &e, &id, &err) == 0 && !ctx->quiet)
			fprintf(stderr, "trainscope ab: recorded experiment e%lld in %s\n", (long long)id, db);
		ts_ledger_release(&l);
	}
	if (err.code)
		rc = cli_fail(ctx, &err);
	for (size_t i = 0; i < nb + nc; i++)
		ts_sb_release(&contracts[i]);
	free(contracts);
	free(lr);
	ts_sb_release(&reasons);
	return rc;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_ab_opts o;
	struct ts_ab_result res;
	struct ab_walls aw;
	struct ts_err err;
	struct ts_sb out, json;
	struct ts_run *runs = NULL;
	struct ts_runmodel_opts ro;
	struct ts_warnings warn;
	char **base = NULL, **cand = NULL;
	const char *db = NULL, *workload = NULL;
	size_t nb = 0, nc = 0, capb = 0, capc = 0;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_ab_opts_init(&o);
	ts_ab_result_init(&res);
	memset(&aw, 0, sizeof(aw));
	ab_trace_sides_init(&aw.s);
	ts_diff_result_init(&aw.r);
	ts_warnings_init(&warn);
	ts_sb_init(&out);
	ts_sb_init(&json);
	ts_err_init(&err);
	for (size_t i = 0; i < p.nopts; i++) {
		const struct cli_arg *a = &p.opts[i];
		double d;
		long long v;
		switch (a->key) {
		case OPT_BASE:
		case OPT_CAND:
			if (a->key == OPT_BASE ? add_list(a->val, &base, &nb, &capb)
					       : add_list(a->val, &cand, &nc, &capc)) {
				rc = EXIT_INTERNAL;
				goto out;
			}
			break;
		case OPT_BAND:
			if ((rc = cli_double(ctx, a, 0, 50, &d)))
				goto out;
			o.band = d / 100;
			break;
		case OPT_RUN_CV:
			if ((rc = cli_double(ctx, a, 0, 50, &d)))
				goto out;
			o.run_cv = d / 100;
			break;
		case OPT_MEM_TOL:
			if ((rc = cli_double(ctx, a, 0, 1000, &d)))
				goto out;
			o.mem_tolerance = d / 100;
			break;
		case OPT_LOSS_TOL:
			if ((rc = cli_double(ctx, a, 0, 100, &d)))
				goto out;
			o.loss_tolerance = d / 100;
			break;
		case OPT_ALLOW_MULTI:
			o.allow_multi = 1;
			break;
		case OPT_VARIABLE:
			o.variable = a->val;
			break;
		case OPT_WINDOW:
			if (ts_window_parse(a->val, &o.win_first, &o.win_last)) {
				cli_error(ctx, "--window: expected FIRST:LAST or FIRST-LAST with 1 <= "
					  "FIRST <= LAST (iterations), got '%s'", a->val);
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_DB:
			db = a->val;
			break;
		case OPT_WORKLOAD:
			workload = a->val;
			break;
		case OPT_SEED:
			if ((rc = cli_int(ctx, a, 0, INT64_MAX, &v)))
				goto out;
			o.seed = (uint64_t)v;
			break;
		}
	}
	if (p.npos == 2 || (p.npos == 1 && (nb || nc))) {
		if (nb == 0 || p.npos == 2) {
			if (add_list(p.pos[0], &base, &nb, &capb)) {
				rc = EXIT_INTERNAL;
				goto out;
			}
		}
		if (add_list(p.pos[p.npos - 1], &cand, &nc, &capc)) {
			rc = EXIT_INTERNAL;
			goto out;
		}
	} else if (p.npos) {
		cli_error(ctx, "expected BASELINE CANDIDATE (comma-separate repeats), got %zu argument%s",
			  p.npos, p.npos == 1 ? "" : "s");
		rc = EXIT_USAGE;
		goto out;
	}
	if (!nb || !nc) {
		cli_error(ctx, "need a baseline and a candidate run");
		fprintf(stderr, "hint: trainscope ab runs/base runs/cand   (repeats: base1,base2 cand1,cand2)\n");
		rc = EXIT_USAGE;
		goto out;
	}
	runs = calloc(nb + nc, sizeof(*runs));
	if (!runs) {
		rc = EXIT_INTERNAL;
		goto out;
	}
	for (size_t i = 0; i < nb + nc; i++)
		ts_run_init(&runs[i]);
	ts_runmodel_opts_init(&ro);
	if (o.win_first != TS_WIN_AUTO) {
		ro.steps.window_first = o.win_first;
		ro.steps.window_last = o.win_last;
	}
	for (size_t i = 0; i < nb + nc; i++) {
		if (ts_run_load(&runs[i], i < nb ? base[i] : cand[i - nb], &ro, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	}
	if (ab_trace_sides_read(&aw.s, runs, nb, runs + nb, nc)) {
		rc = EXIT_INTERNAL;
		goto out;
	}
	o.trace_ctx = aw.s.chg;
	o.ntrace_ctx = aw.s.nchg;
	for (int k = 0; k < 2; k++) {
		o.mixed_ctx[k] = aw.s.mixed[k];
		o.nmixed_ctx[k] = aw.s.nmixed[k];
	}
	if (ts_ab_compare(runs, nb, runs + nb, nc, &o, &res, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ts_ab_warnings(runs, nb + nc, &res, &warn) || ab_trace_sides_warnings(&aw.s, &warn) ||
	    (res.verdict != TS_AB_INVALID && ab_walls_load(&aw, &warn))) {
		rc = EXIT_INTERNAL;
		goto out;
	}
	write_json(&res, &runs[0], &aw, &warn, &json);
	if (ctx->json)
		ts_sb_add(&out, json.buf, json.len);
	else
		write_text(ctx, &res, &aw, &warn, &out);
	if ((rc = cli_emit(ctx, &out)))
		goto out;
	if (!db)
		db = getenv("TRAINSCOPE_DB");
	/* the verdict is shown even when the ledger cannot take it */
	if (db && *db && (rc = record(ctx, db, workload, runs, nb, nc, &res, &json)))
		goto out;
	rc = res.verdict == TS_AB_INVALID ? EXIT_USAGE : res.accepted ? EXIT_OK : EXIT_GATE;
out:
	for (size_t i = 0; runs && i < nb + nc; i++)
		ts_run_release(&runs[i]);
	free(runs);
	for (size_t i = 0; i < nb; i++)
		free(base[i]);
	for (size_t i = 0; i < nc; i++)
		free(cand[i]);
	free(base);
	free(cand);
	ts_ab_result_release(&res);
	ab_walls_release(&aw);
	ts_warnings_release(&warn);
	ts_sb_release(&out);
	ts_sb_release(&json);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_ab = {
	.name = "ab",
	.stage = STAGE_RETUNE,
	.summary = "Matched A/B of step time with correctness gates: faster, slower or no difference",
	.usage = "ab [options] BASELINE CANDIDATE",
	.description =
		"Each side is a run directory, a training log or a JSONL metrics file; repeated\n"
		"runs are comma-separated (or given with --baseline/--candidate). When the runs\n"
		"carry contracts (contract.json), they must differ in exactly one field unless\n"
		"--allow-multi; so must the layouts of Megatron arguments blocks when they do not.\n"
		"A recorded environment or layout that differs besides the declared --variable\n"
		"(GPU model, driver, CUDA/PyTorch/NCCL versions, world size, tp, pp, ...; the\n"
		"contracts, arguments blocks and the first profiler trace or nsys export of each\n"
		"side) is warned (context-differs); so is a side whose own traces and exports\n"
		"(every rank of every run) disagree (context-mixed). The steady windows are\n"
		"matched; the ratio of mean step times\n"
		"(candidate / baseline) gets a 95 % CI honest under autocorrelation (paired batch\n"
		"means within runs, or runs as replicates with >= 2 per side) and is judged\n"
		"against a band (1 % with repeats, 2 % without): faster, slower, no_difference or\n"
		"inconclusive, with how much more data would decide. One run per side cannot\n"
		"measure run-to-run variance: use >= 4 runs per side, or state it with --run-cv\n"
		"when repeats of the job vary by more than ~0.5 % (docs/gate.md). Correctness gates: loss and\n"
		"grad-norm curves (bitwise when both contracts declare workload.deterministic,\n"
		"statistical otherwise), NaN/Inf and skipped counts, peak memory. A failed gate\n"
		"rejects the candidate whatever its speed. When the runs log phase times (JSONL\n"
		"data_ms/fwd_ms/bwd_ms/opt_ms/comm_ms, Megatron timers), each phase is compared\n"
		"the same way (simultaneous 95 % intervals, band in step time): which part of\n"
		"the step moved; the decision stays on the total.\n"
		"\n"
		"Exit 0 accepted (faster or no difference, gates green), 1 rejected (slower,\n"
		"inconclusive, or a gate failed), 2 invalid comparison or bad input. With --db or\n"
		"$TRAINSCOPE_DB the experiment is recorded in the ledger, whatever its outcome.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};

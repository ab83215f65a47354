/*
 * cmd_steps.c - `trainscope steps`: how fast is it really?
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "trainscope/detect.h"
#include "trainscope/jsonw.h"
#include "trainscope/logs.h"
#include "trainscope/paths.h"
#include "trainscope/steps.h"
#include "trainscope/table.h"

#define MAX_NOTES_SHOWN 20

enum { OPT_WINDOW = 1, OPT_GBS, OPT_SEQ, OPT_GPUS, OPT_CSV };

static const struct cli_opt opts[] = {
	{ "window", 0, "FIRST:LAST", "declare the steady window (iterations, inclusive)", OPT_WINDOW },
	{ "gbs", 0, "N", "global batch size in sequences (default: from the log)", OPT_GBS },
	{ "seq", 0, "N", "sequence length in tokens (enables tokens/s)", OPT_SEQ },
	{ "gpus", 0, "N", "GPUs in the job (enables tokens/s/GPU)", OPT_GPUS },
	{ "csv", 0, NULL, "print the step series as CSV instead of the summary", OPT_CSV },
	{ 0 }
};

static const char *const warn_names[] = {
	"short-window", "noisy", "no-steady-state", "level-shift", "autocorrelated",
	"no-step-times", "long-warmup"
};

static const char *const note_names[] = {
	"", "joined", "broken", "truncated", "bad-json", "unattached"
};

static int is_log_kind(enum ts_kind k)
{
	return k == TS_KIND_METRICS_JSONL || k == TS_KIND_LOG_MEGATRON || k == TS_KIND_LOG_BRIDGE ||
	       k == TS_KIND_LOG_NEMO || k == TS_KIND_LOG_HF || k == TS_KIND_LOG_PRIMUS;
}

/*
 * A file argument is read as given. A directory contributes its log files,
 * judged by content; when it holds per-rank JSONL metrics those are used
 * and its text logs (the same steps, printed by one rank) are not.
 */
static int collect(const char *arg, struct ts_paths *use, struct ts_err *err)
{
	struct ts_paths all;
	struct ts_detect *d = NULL;
	int rc, any_jsonl = 0;

	ts_paths_init(&all);
	rc = ts_paths_add(&all, arg, 1, err);
	if (rc)
		goto out;
	if (all.n == 1 && strcmp(all.v[0], arg) == 0) {
		rc = ts_paths_add(use, arg, 0, err);
		goto out;
	}
	d = calloc(all.n ? all.n : 1, sizeof(*d));
	rc = TS_ENOMEM;
	if (!d)
		goto out;
	for (size_t i = 0; i < all.n; i++) {
		rc = ts_detect_file(all.v[i], &d[i], err);
		if (rc)
			goto out;
		any_jsonl |= d[i].kind == TS_KIND_METRICS_JSONL;
	}
	rc = 0;
	for (size_t i = 0; i < all.n && !rc; i++)
		if (is_log_kind(d[i].kind) && (!any_jsonl || d[i].kind == TS_KIND_METRICS_JSONL))
			rc = ts_paths_add(use, all.v[i], 0, err);
out:
	free(d);
	ts_paths_release(&all);
	return rc;
}

static void fmt_num(char *buf, size_t size, double v, int decimals)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.*f", decimals, v);
}

/* 6 significant digits, so libm differences in the last bits never show. */
static double round6(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.6g", v);
	return strtod(buf, NULL);
}

static void jw_fixed_or_null(struct ts_jw *w, const char *key, double v, int decimals)
{
	ts_jw_key(w, key);
	if (isfinite(v))
		ts_jw_fixed(w, v, decimals);
	else
		ts_jw_null(w);
}

static void jw_i64_or_null(struct ts_jw *w, const char *key, int64_t v)
{
	ts_jw_key(w, key);
	if (v == TS_NO_INT)
		ts_jw_null(w);
	else
		ts_jw_i64(w, v);
}

static void jw_i64_array(struct ts_jw *w, const char *key, const int64_t *v, size_t n)
{
	ts_jw_key(w, key);
	ts_jw_arr(w);
	for (size_t i = 0; i < n; i++)
		ts_jw_i64(w, v[i]);
	ts_jw_arr_end(w);
}

static void render_json(const struct ts_steplog *log, const struct ts_steps_report *r,
			const struct ts_paths *files, struct ts_sb *out)
{
	struct ts_jw w;

	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", "trainscope.steps/1");
	ts_jw_kstr(&w, "format", r->format);
	ts_jw_key(&w, "inputs");
	ts_jw_arr(&w);
	for (size_t i = 0; i < files->n; i++)
		ts_jw_str(&w, files->v[i]);
	ts_jw_arr_end(&w);
	ts_jw_ki64(&w, "iterations", (int64_t)r->iterations);
	jw_i64_or_null(&w, "first_iteration", r->first_iteration);
	jw_i64_or_null(&w, "last_iteration", r->last_iteration);

	ts_jw_key(&w, "window");
	ts_jw_obj(&w);
	jw_i64_or_null(&w, "first", r->win_first);
	jw_i64_or_null(&w, "last", r->win_last);
	ts_jw_kbool(&w, "auto", r->win_auto);
	ts_jw_ki64(&w, "steps", (int64_t)r->win_n);
	jw_i64_or_null(&w, "mser_cut_iteration", r->mser_cut_iteration);
	jw_i64_or_null(&w, "level_shift_iteration", r->level_shift_iteration);
	ts_jw_obj_end(&w);

	ts_jw_key(&w, "step_time_ms");
	ts_jw_obj(&w);
	jw_fixed_or_null(&w, "median", r->median_ms, 3);
	jw_fixed_or_null(&w, "mean", r->mean_ms, 3);
	jw_fixed_or_null(&w, "p10", r->p10_ms, 3);
	jw_fixed_or_null(&w, "p90", r->p90_ms, 3);
	jw_fixed_or_null(&w, "cv", r->cv, 4);
	jw_fixed_or_null(&w, "ci95_low", r->ci.method ? r->ci.lo : NAN, 3);
	jw_fixed_or_null(&w, "ci95_high", r->ci.method ? r->ci.hi : NAN, 3);
	ts_jw_kstr(&w, "ci_method", ts_ci_method_name(r->ci.method));
	ts_jw_ki64(&w, "ci_batches", (int64_t)r->ci.batches);
	ts_jw_ki64(&w, "ci_block_len", (int64_t)r->ci.block_len);
	jw_fixed_or_null(&w, "lag1_autocorr", r->acf.lag1, 4);
	jw_fixed_or_null(&w, "effective_steps", r->acf.ess, 1);
	ts_jw_obj_end(&w);

	ts_jw_key(&w, "warnings");
	ts_jw_arr(&w);
	for (size_t i = 0; i < sizeof(warn_names) / sizeof(*warn_names); i++)
		if (r->warnings & (1u << i))
			ts_jw_str(&w, warn_names[i]);
	ts_jw_arr_end(&w);

	ts_jw_key(&w, "throughput");
	ts_jw_obj(&w);
	jw_fixed_or_null(&w, "tokens_per_step", r->tokens_per_step, 1);
	jw_fixed_or_null(&w, "tokens_per_s", r->tokens_per_s, 1);
	jw_fixed_or_null(&w, "tokens_per_s_per_gpu", r->tokens_per_s_gpu, 1);
	jw_i64_or_null(&w, "gpus", r->gpus ? r->gpus : TS_NO_INT);
	jw_fixed_or_null(&w, "logged_tflops_per_gpu_mean", r->tflops_mean, 2);
	jw_fixed_or_null(&w, "logged_tflops_per_gpu_median", r->tflops_median, 2);
	ts_jw_obj_end(&w);

	ts_jw_key(&w, "outliers");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->noutliers; i++) {
		const struct ts_outlier *o = &r->outliers[i];

		ts_jw_obj(&w);
		ts_jw_ki64(&w, "iteration", o->iteration);
		jw_fixed_or_null(&w, "step_time_ms", o->step_ms, 3);
		jw_fixed_or_null(&w, "baseline_ms", o->baseline_ms, 3);
		jw_fixed_or_null(&w, "excess_ms", o->excess_ms, 3);
		jw_fixed_or_null(&w, "robust_z", o->z, 2);
		ts_jw_kstr(&w, "reason", ts_outlier_reason_name(o->reason));
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	jw_fixed_or_null(&w, "outlier_excess_pct", r->outlier_share * 100, 2);

	ts_jw_key(&w, "periodic_stall");
	if (r->periodic.found) {
		ts_jw_obj(&w);
		ts_jw_ki64(&w, "period", r->periodic_period_iters);
		ts_jw_ki64(&w, "phase", r->periodic_phase_iters);
		ts_jw_ki64(&w, "hits", (int64_t)r->periodic.hits);
		ts_jw_ki64(&w, "slots", (int64_t)r->periodic.slots);
		ts_jw_kf64(&w, "p_value", round6(r->periodic.p_value));
		jw_fixed_or_null(&w, "wall_time_pct", r->periodic_share * 100, 2);
		ts_jw_obj_end(&w);
	} else {
		ts_jw_null(&w);
	}

	ts_jw_key(&w, "phases");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->nphases; i++) {
		const struct ts_phase_summary *ph = &r->phases[i];

		ts_jw_obj(&w);
		ts_jw_kstr(&w, "phase", ts_phase_name(ph->phase));
		ts_jw_ki64(&w, "steps", (int64_t)ph->steps);
		jw_fixed_or_null(&w, "mean_ms", ph->mean_ms, 3);
		jw_fixed_or_null(&w, "median_ms", ph->median_ms, 3);
		jw_fixed_or_null(&w, "ci95_low_ms", ph->ci.method ? ph->ci.lo : NAN, 3);
		jw_fixed_or_null(&w, "ci95_high_ms", ph->ci.method ? ph->ci.hi : NAN, 3);
		ts_jw_kstr(&w, "ci_method", ts_ci_method_name(ph->ci.method));
		jw_fixed_or_null(&w, "step_share_pct", ph->step_share * 100, 2);
		ts_jw_key(&w, "periodic_stall");
		if (ph->periodic.found) {
			ts_jw_obj(&w);
			ts_jw_ki64(&w, "period", ph->periodic_period_iters);
			ts_jw_ki64(&w, "phase", ph->periodic_phase_iters);
			ts_jw_ki64(&w, "hits", (int64_t)ph->periodic.hits);
			ts_jw_ki64(&w, "slots", (int64_t)ph->periodic.slots);
			ts_jw_kf64(&w, "p_value", round6(ph->periodic.p_value));
			jw_fixed_or_null(&w, "excess_per_stall_ms", ph->periodic_excess_ms, 3);
			jw_fixed_or_null(&w, "wall_time_pct", ph->periodic_share * 100, 2);
			ts_jw_obj_end(&w);
		} else {
			ts_jw_null(&w);
		}
		ts_jw_ki64(&w, "stalls", (int64_t)ph->nstalls);
		jw_i64_or_null(&w, "first_stall_iteration", ph->first_stall_iteration);
		jw_fixed_or_null(&w, "stall_wall_time_pct", ph->stall_share * 100, 2);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);

	ts_jw_key(&w, "loss");
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "health", ts_loss_verdict_name(r->health.verdict));
	ts_jw_kstr(&w, "health_cause", ts_loss_cause_name(r->health.cause));
	jw_i64_or_null(&w, "first_bad_iteration", r->health.first_bad_iteration);
	ts_jw_key(&w, "evidence");
	ts_jw_arr(&w);
	for (int c = TS_LOSS_CAUSE_LOSS; c < TS_LOSS_CAUSE_COUNT; c++) {
		const struct ts_loss_evidence *e = &r->health.ev[c];

		if (!e->records)
			continue;
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "cause", ts_loss_cause_name(c));
		jw_i64_or_null(&w, "first_iteration", e->first_iteration);
		ts_jw_ki64(&w, "records", e->records);
		ts_jw_ki64(&w, "iterations", e->iterations);
		if (c == TS_LOSS_CAUSE_EXTRA_LOSS)
			ts_jw_kstr(&w, "loss_name", r->health.extra_loss);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	jw_i64_array(&w, "nan_iterations", r->health.bad_iterations, r->health.nbad);
	jw_i64_or_null(&w, "first_nan_iteration",
		       r->health.nbad ? r->health.bad_iterations[0] : TS_NO_INT);
	ts_jw_ki64(&w, "skipped_iterations", r->health.ev[TS_LOSS_CAUSE_SKIPPED].iterations);
	ts_jw_key(&w, "final");
	if (isfinite(r->final_loss))
		ts_jw_f64(&w, r->final_loss);
	else
		ts_jw_null(&w);
	jw_i64_or_null(&w, "final_iteration", r->final_loss_iteration);
	jw_i64_array(&w, "spike_iterations", r->loss_spikes, r->nloss_spikes);
	jw_i64_array(&w, "grad_norm_spike_iterations", r->grad_spikes, r->ngrad_spikes);
	ts_jw_obj_end(&w);

	ts_jw_key(&w, "ranks");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->nranks; i++) {
		const struct ts_rank_summary *k = &r->ranks[i];

		ts_jw_obj(&w);
		jw_i64_or_null(&w, "rank", k->rank >= 0 ? k->rank : TS_NO_INT);
		ts_jw_ki64(&w, "steps", (int64_t)k->steps);
		jw_fixed_or_null(&w, "mean_ms", k->mean_ms, 3);
		jw_fixed_or_null(&w, "median_ms", k->median_ms, 3);
		jw_fixed_or_null(&w, "max_allocated_bytes", k->max_alloc_bytes, 0);
		jw_fixed_or_null(&w, "max_reserved_bytes", k->max_reserved_bytes, 0);
		jw_fixed_or_null(&w, "max_rss_bytes", k->max_rss_bytes, 0);
		ts_jw_key(&w, "final_loss");
		if (isfinite(k->final_loss))
			ts_jw_f64(&w, k->final_loss);
		else
			ts_jw_null(&w);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	jw_i64_or_null(&w, "slowest_rank", r->slowest_rank >= 0 ? r->slowest_rank : TS_NO_INT);

	ts_jw_key(&w, "buckets");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->nbuckets; i++) {
		ts_jw_obj(&w);
		ts_jw_ki64(&w, "bucket", r->buckets[i].bucket);
		ts_jw_ki64(&w, "steps", (int64_t)r->buckets[i].steps);
		jw_fixed_or_null(&w, "weight", r->buckets[i].weight, 4);
		jw_fixed_or_null(&w, "mean_ms", r->buckets[i].mean_ms, 3);
		jw_fixed_or_null(&w, "median_ms", r->buckets[i].median_ms, 3);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	jw_fixed_or_null(&w, "mixture_mean_ms", r->mixture_mean_ms, 3);

	ts_jw_key(&w, "theoretical_memory_mb");
	ts_jw_obj(&w);
	jw_fixed_or_null(&w, "weight_and_optimizer", log->theo_weight_opt_mb, 2);
	jw_fixed_or_null(&w, "activation", log->theo_activation_mb, 2);
	jw_fixed_or_null(&w, "total", log->theo_total_mb, 2);
	ts_jw_obj_end(&w);
	ts_jw_key(&w, "theoretical_params_billions");
	ts_jw_obj(&w);
	jw_fixed_or_null(&w, "transformer_block", log->theo_params_b, 4);
	jw_fixed_or_null(&w, "most_loaded_shard", log->theo_params_shard_b, 4);
	ts_jw_obj_end(&w);

	ts_jw_key(&w, "hf_trainer_summary");
	if (isfinite(log->hf_train_runtime_s) || isfinite(log->hf_steps_per_s)) {
		ts_jw_obj(&w);
		jw_fixed_or_null(&w, "train_runtime_s", log->hf_train_runtime_s, 4);
		jw_fixed_or_null(&w, "train_steps_per_s", log->hf_steps_per_s, 4);
		jw_fixed_or_null(&w, "mean_step_time_ms",
				 log->hf_steps_per_s > 0 ? 1e3 / log->hf_steps_per_s : NAN, 3);
		ts_jw_obj_end(&w);
	} else {
		ts_jw_null(&w);
	}

	ts_jw_key(&w, "notes");
	ts_jw_arr(&w);
	for (size_t i = 0; i < log->notes.n; i++) {
		const struct ts_log_note *n = &log->notes.v[i];

		ts_jw_obj(&w);
		ts_jw_kstr(&w, "kind", note_names[n->kind]);
		ts_jw_kstr(&w, "file", files->v[n->file]);
		ts_jw_ki64(&w, "line", n->line);
		ts_jw_kstr(&w, "message", n->msg);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_obj_end(&w);
	ts_sb_addc(out, '\n');
}

/* Up to 60 cells; each shows the largest step in its slice. */
static void sparkline(const struct ts_steps_report *r, struct ts_sb *out)
{
	static const char *const bars[8] = { "\u2581", "\u2582", "\u2583", "\u2584",
					     "\u2585", "\u2586", "\u2587", "\u2588" };
	double lo = INFINITY, hi = -INFINITY;
	size_t cells = r->n < 60 ? r->n : 60;

	for (size_t i = 0; i < r->n; i++)
		if (isfinite(r->step_ms[i])) {
			lo = fmin(lo, r->step_ms[i]);
			hi = fmax(hi, r->step_ms[i]);
		}
	if (!(hi >= lo) || cells == 0)
		return;
	for (size_t c = 0; c < cells; c++) {
		size_t a = c * r->n / cells, b = (c + 1) * r->n / cells;
		double m = -INFINITY;
		int level;

		for (size_t i = a; i < b; i++)
			if (isfinite(r->step_ms[i]))
				m = fmax(m, r->step_ms[i]);
		if (!isfinite(m)) {
			ts_sb_addc(out, ' ');
			continue;
		}
		level = hi > lo ? (int)((m - lo) / (hi - lo) * 7.999) : 0;
		ts_sb_adds(out, bars[level]);
	}
}

static size_t nphase_periodic(const struct ts_steps_report *r)
{
	size_t k = 0;

	for (size_t i = 0; i < r->nphases; i++)
		k += r->phases[i].periodic.found != 0;
	return k;
}

/* Per-phase means with their CI, share of the step and stalls. */
static void render_phases(struct cli_ctx *ctx, const struct ts_steps_report *r, struct ts_sb *out)
{
	const char *bold = cli_style(ctx, "bold"), *reset = cli_style(ctx, "reset");
	struct ts_table t;
	char a[32], b[32];

	if (!r->nphases)
		return;
	ts_table_init(&t);
	ts_table_col(&t, "phase", NULL, TS_LEFT, 0);
	ts_table_col(&t, "steps", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "mean", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "95 % CI", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "of step", "%", TS_RIGHT, 0);
	ts_table_col(&t, "one-off stalls", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "stall wall", "%", TS_RIGHT, 0);
	for (size_t i = 0; i < r->nphases; i++) {
		const struct ts_phase_summary *ph = &r->phases[i];

		ts_table_cell(&t, "%s", ts_phase_name(ph->phase));
		ts_table_cell(&t, "%zu", ph->steps);
		fmt_num(a, sizeof(a), ph->mean_ms, 3);
		ts_table_cell(&t, "%s", a);
		fmt_num(a, sizeof(a), ph->ci.method ? ph->ci.lo : NAN, 3);
		fmt_num(b, sizeof(b), ph->ci.method ? ph->ci.hi : NAN, 3);
		ts_table_cell(&t, "[%s, %s]", a, b);
		fmt_num(a, sizeof(a), ph->step_share * 100, 1);
		ts_table_cell(&t, "%s", a);
		ts_table_cell(&t, "%zu", ph->nstalls);
		fmt_num(a, sizeof(a), ph->stall_share * 100, 2);
		ts_table_cell(&t, "%s", a);
	}
	ts_sb_addf(out, "%sphases%s\n", bold, reset);
	ts_table_render(&t, out, 12);
	ts_table_release(&t);
}

static void render_stalls(struct cli_ctx *ctx, const struct ts_steps_report *r,
			  struct ts_sb *out)
{
	const char *bold = cli_style(ctx, "bold"), *reset = cli_style(ctx, "reset");
	const char *yellow = cli_style(ctx, "yellow");

	ts_sb_addf(out, "%sstalls%s      ", bold, reset);
	if (r->periodic.found)
		ts_sb_addf(out, "%speriodic every %lld iterations (phase %lld): %zu of %zu slots, "
			   "%.1f %% of wall time (p = %.2g)%s\n", yellow,
			   (long long)r->periodic_period_iters, (long long)r->periodic_phase_iters,
			   r->periodic.hits, r->periodic.slots, r->periodic_share * 100,
			   r->periodic.p_value, reset);
	else
		ts_sb_adds(out, nphase_periodic(r) ? "no periodic stall in the step time\n"
						   : "no periodic stall\n");
	for (size_t i = 0; i < r->nphases; i++) {
		const struct ts_phase_summary *ph = &r->phases[i];

		if (!ph->periodic.found)
			continue;
		ts_sb_addf(out, "            %speriodic in %s every %lld iterations (phase %lld): %zu of "
			   "%zu slots, %.1f ms each, %.1f %% of wall time (p = %.2g)%s\n", yellow,
			   ts_phase_name(ph->phase), (long long)ph->periodic_period_iters,
			   (long long)ph->periodic_phase_iters, ph->periodic.hits, ph->periodic.slots,
			   ph->periodic_excess_ms, ph->periodic_share * 100, ph->periodic.p_value, reset);
	}
	if (r->noutliers) {
		struct ts_table t;

		ts_table_init(&t);
		ts_table_col(&t, "iteration", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "step", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "baseline", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "excess", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "reason", NULL, TS_LEFT, 0);
		for (size_t i = 0; i < r->noutliers; i++) {
			const struct ts_outlier *o = &r->outliers[i];

			/* one row per stall, so a long run prints many: no printf */
			ts_table_cell_i64(&t, (long long)o->iteration);
			ts_table_cell_fixed(&t, o->step_ms, 1);
			ts_table_cell_fixed(&t, o->baseline_ms, 1);
			ts_table_cell_fixed(&t, o->excess_ms, 1);
			ts_table_cell(&t, "%s", ts_outlier_reason_name(o->reason));
		}
		ts_sb_addf(out, "            %zu outlier steps, %.1f %% of wall time in excess:\n",
			   r->noutliers, r->outlier_share * 100);
		ts_table_render(&t, out, 12);
		ts_table_release(&t);
	}
}

/* The loss-health verdict and its evidence, one sentence. */
static void render_health(struct cli_ctx *ctx, const struct ts_steps_report *r,
			  struct ts_sb *out)
{
	static const char *const what[TS_LOSS_CAUSE_COUNT] = {
		[TS_LOSS_CAUSE_LOSS] = "loss NaN/Inf",
		[TS_LOSS_CAUSE_EXTRA_LOSS] = "extra loss NaN/Inf",
		[TS_LOSS_CAUSE_GRAD_NORM] = "grad norm NaN/Inf",
		[TS_LOSS_CAUSE_NAN_COUNTER] = "NaN iterations counted",
		[TS_LOSS_CAUSE_LOSS_DROPPED] = "loss no longer logged",
		[TS_LOSS_CAUSE_SKIPPED] = "skipped iterations",
		[TS_LOSS_CAUSE_NEVER_LOGGED] = "no loss logged",
	};
	const struct ts_loss_health *h = &r->health;
	const char *colour = cli_style(ctx, h->verdict == TS_LOSS_FINITE ? "green" : "yellow");
	const char *reset = cli_style(ctx, "reset");
	int first = 1;

	ts_sb_addf(out, "            health %s%s%s", colour, ts_loss_verdict_name(h->verdict), reset);
	if (h->verdict != TS_LOSS_FINITE && h->first_bad_iteration != TS_NO_INT)
		ts_sb_addf(out, " from iteration %lld (%s%s%s)", (long long)h->first_bad_iteration,
			   what[h->cause], h->cause == TS_LOSS_CAUSE_EXTRA_LOSS ? ": " : "",
			   h->cause == TS_LOSS_CAUSE_EXTRA_LOSS ? h->extra_loss : "");
	for (int c = TS_LOSS_CAUSE_LOSS; c < TS_LOSS_CAUSE_NEVER_LOGGED; c++) {
		if (!h->ev[c].records || c == h->cause)
			continue;
		ts_sb_addf(out, "%s%s from %lld", first ? "; also " : ", ", what[c],
			   (long long)h->ev[c].first_iteration);
		first = 0;
	}
	ts_sb_addc(out, '\n');
}

static void render_text(struct cli_ctx *ctx, const struct ts_steplog *log,
			const struct ts_steps_report *r, struct ts_sb *out)
{
	char a[32], b[32], c[32], d[32];
	const char *bold = cli_style(ctx, "bold"), *reset = cli_style(ctx, "reset");
	const char *yellow = cli_style(ctx, "yellow");

	ts_sb_addf(out, "%sformat%s      %s, %zu iterations", bold, reset, r->format, r->iterations);
	if (r->first_iteration != TS_NO_INT)
		ts_sb_addf(out, " (%lld..%lld)", (long long)r->first_iteration,
			   (long long)r->last_iteration);
	ts_sb_addc(out, '\n');
	if (r->win_n) {
		ts_sb_addf(out, "%swindow%s      iterations %lld..%lld, %zu steps (%s", bold, reset,
			   (long long)r->win_first, (long long)r->win_last, r->win_n,
			   !r->win_auto ? "declared" : r->dropped_first ?
			   "automatic: iteration 1 dropped, MSER-5" : "automatic: MSER-5");
		if (r->win_auto && r->level_shift_iteration != TS_NO_INT)
			ts_sb_addf(out, ", level shift at %lld", (long long)r->level_shift_iteration);
		ts_sb_adds(out, ")\n");
		fmt_num(a, sizeof(a), r->median_ms, 1);
		fmt_num(b, sizeof(b), r->mean_ms, 1);
		fmt_num(c, sizeof(c), r->p10_ms, 1);
		fmt_num(d, sizeof(d), r->p90_ms, 1);
		ts_sb_addf(out, "%sstep time%s   median %s ms, mean %s ms, p10 %s ms, p90 %s ms, CV %.1f %%\n",
			   bold, reset, a, b, c, d, r->cv * 100);
		if (r->ci.method) {
			fmt_num(a, sizeof(a), r->ci.lo, 1);
			fmt_num(b, sizeof(b), r->ci.hi, 1);
			ts_sb_addf(out, "            95 %% CI of the mean [%s, %s] ms (%s", a, b,
				   ts_ci_method_name(r->ci.method));
			if (r->ci.method == TS_CI_BATCH_MEANS)
				ts_sb_addf(out, ", %zu batches of %zu", r->ci.batches, r->ci.batch_len);
			else if (r->ci.method == TS_CI_AR1)
				ts_sb_addf(out, ", bias-corrected lag 1 %.2f", r->ci.lag1);
			else
				ts_sb_addf(out, ", block %zu, %zu resamples", r->ci.block_len,
					   r->ci.resamples);
			ts_sb_addf(out, "; lag-1 autocorrelation %.2f, %.0f effective steps)\n",
				   r->acf.lag1, r->acf.ess);
		}
	}
	if (isfinite(r->tokens_per_s)) {
		ts_sb_addf(out, "%sthroughput%s  %.0f tokens/s", bold, reset, r->tokens_per_s);
		if (isfinite(r->tokens_per_s_gpu))
			ts_sb_addf(out, ", %.0f tokens/s/GPU (%lld GPUs)", r->tokens_per_s_gpu,
				   (long long)r->gpus);
		ts_sb_addc(out, '\n');
	}
	if (isfinite(r->tflops_median))
		ts_sb_addf(out, "%slogged%s      %.1f TFLOP/s/GPU median, %.1f mean\n", bold, reset,
			   r->tflops_median, r->tflops_mean);
	if (r->win_n) {
		ts_sb_addf(out, "%sseries%s      ", bold, reset);
		sparkline(r, out);
		ts_sb_addc(out, '\n');
		render_stalls(ctx, r, out);
	}
	render_phases(ctx, r, out);
	ts_sb_addf(out, "%sloss%s        final ", bold, reset);
	if (isfinite(r->final_loss))
		ts_sb_addf(out, "%.6g (iteration %lld)", r->final_loss,
			   (long long)r->final_loss_iteration);
	else
		ts_sb_adds(out, "-");
	ts_sb_addf(out, "; NaN/Inf iterations: ");
	if (r->health.nbad) {
		ts_sb_addf(out, "%s%zu, first %lld%s", yellow, r->health.nbad,
			   (long long)r->health.bad_iterations[0], reset);
	} else {
		ts_sb_adds(out, "none");
	}
	ts_sb_addf(out, "; skipped iterations: %lld\n",
		   (long long)r->health.ev[TS_LOSS_CAUSE_SKIPPED].iterations);
	render_health(ctx, r, out);
	if (r->nloss_spikes || r->ngrad_spikes)
		ts_sb_addf(out, "            %zu loss spikes, %zu grad-norm spikes (first at %lld)\n",
			   r->nloss_spikes, r->ngrad_spikes,
			   (long long)(r->nloss_spikes ? r->loss_spikes[0] : r->grad_spikes[0]));
	if (r->nranks) {
		struct ts_table t;

		ts_table_init(&t);
		ts_table_col(&t, "rank", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "steps", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "mean", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "max allocated", "MiB", TS_RIGHT, 0);
		ts_table_col(&t, "max reserved", "MiB", TS_RIGHT, 0);
		ts_table_col(&t, "max RSS", "MiB", TS_RIGHT, 0);
		for (size_t i = 0; i < r->nranks; i++) {
			const struct ts_rank_summary *k = &r->ranks[i];

			if (k->rank >= 0)
				ts_table_cell(&t, "%d", k->rank);
			else
				ts_table_cell(&t, "?");
			ts_table_cell(&t, "%zu", k->steps);
			fmt_num(a, sizeof(a), k->mean_ms, 1);
			ts_table_cell(&t, "%s", a);
			fmt_num(a, sizeof(a), k->max_alloc_bytes / 1048576.0, 1);
			ts_table_cell(&t, "%s", a);
			fmt_num(a, sizeof(a), k->max_reserved_bytes / 1048576.0, 1);
			ts_table_cell(&t, "%s", a);
			fmt_num(a, sizeof(a), k->max_rss_bytes / 1048576.0, 1);
			ts_table_cell(&t, "%s", a);
		}
		ts_sb_addf(out, "%sranks%s\n", bold, reset);
		ts_table_render(&t, out, 12);
		ts_table_release(&t);
		if (r->slowest_rank >= 0)
			ts_sb_addf(out, "            slowest rank: %d\n", r->slowest_rank);
	}
	if (r->nbuckets) {
		ts_sb_addf(out, "%sbuckets%s     mixture mean %.1f ms over", bold, reset,
			   r->mixture_mean_ms);
		for (size_t i = 0; i < r->nbuckets; i++)
			ts_sb_addf(out, "%s %lld: %.1f ms x %.0f %%", i ? "," : "",
				   (long long)r->buckets[i].bucket, r->buckets[i].mean_ms,
				   r->buckets[i].weight * 100);
		ts_sb_addc(out, '\n');
	}
	if (log->hf_steps_per_s > 0)
		ts_sb_addf(out, "%shf summary%s %.4g steps/s over %.1f s: mean step %.1f ms (whole run, "
			   "warm-up included)\n", bold, reset, log->hf_steps_per_s,
			   log->hf_train_runtime_s, 1e3 / log->hf_steps_per_s);
	if (isfinite(log->theo_total_mb))
		ts_sb_addf(out, "%stheoretical%s weights+optimizer %.1f MB, activations %.1f MB, total %.1f MB\n",
			   bold, reset, log->theo_weight_opt_mb, log->theo_activation_mb,
			   log->theo_total_mb);
	for (size_t i = 0; i < sizeof(warn_names) / sizeof(*warn_names); i++)
		if (r->warnings & (1u << i))
			ts_sb_addf(out, "%swarning%s     %s\n", yellow, reset, warn_names[i]);
}

static void render_csv(const struct ts_steplog *log, struct ts_sb *out)
{
	char buf[40];

	ts_sb_adds(out, "iteration,rank,step_time_ms,loss,grad_norm,learning_rate,loss_scale,"
			"tflops_per_gpu,energy_j_per_gpu,power_w_per_gpu,skipped,nan,tokens,bucket\n");
	for (size_t i = 0; i < log->steps.n; i++) {
		const struct ts_step *s = &log->steps.v[i];
		const double f[7] = { s->loss, s->grad_norm, s->lr, s->loss_scale, s->tflops,
				      s->energy_j, s->power_w };
		const int64_t ints[4] = { s->skipped, s->nan_iters, s->tokens, s->bucket };

		ts_sb_addf(out, "%lld,", (long long)s->iteration);
		if (s->rank >= 0)
			ts_sb_addf(out, "%d", s->rank);
		ts_sb_addc(out, ',');
		if (s->step_ns != TS_NO_INT)
			ts_sb_addf(out, "%.6f", (double)s->step_ns / 1e6);
		for (int k = 0; k < 7; k++) {
			ts_sb_addc(out, ',');
			if (!isnan(f[k]) || (k == 0 && (s->flags & TS_STEP_LOSS_NONFINITE))) {
				ts_fmt_f64(buf, sizeof(buf), f[k]);
				ts_sb_adds(out, isfinite(f[k]) ? buf : isnan(f[k]) ? "nan" :
						f[k] > 0 ? "inf" : "-inf");
			}
		}
		for (int k = 0; k < 4; k++) {
			ts_sb_addc(out, ',');
			if (ints[k] != TS_NO_INT)
				ts_sb_addf(out, "%lld", (long long)ints[k]);
		}
		ts_sb_addc(out, '\n');
	}
}

static int parse_window(struct cli_ctx *ctx, const char *v, struct ts_steps_opts *o)
{
	char *end;
	long long a, b;

	a = strtoll(v, &end, 10);
	if (end == v || *end != ':')
		goto bad;
	v = end + 1;
	b = strtoll(v, &end, 10);
	if (end == v || *end || a > b)
		goto bad;
	o->window_first = a;
	o->window_last = b;
	return 0;
bad:
	cli_error(ctx, "--window: expected FIRST:LAST with FIRST <= LAST (iterations)");
	return EXIT_USAGE;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_paths files;
	struct ts_steplog log;
	struct ts_steps_report rep;
	struct ts_steps_opts o;
	struct ts_err err;
	struct ts_sb out;
	int csv = 0;
	long long v;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_paths_init(&files);
	ts_steplog_init(&log);
	ts_sb_init(&out);
	ts_err_init(&err);
	ts_steps_opts_init(&o);
	memset(&rep, 0, sizeof(rep));
	for (size_t i = 0; i < p.nopts; i++) {
		const struct cli_arg *a = &p.opts[i];

		switch (a->key) {
		case OPT_WINDOW:
			rc = parse_window(ctx, a->val, &o);
			break;
		case OPT_GBS:
			rc = cli_int(ctx, a, 1, 1LL << 40, &v);
			o.gbs = v;
			break;
		case OPT_SEQ:
			rc = cli_int(ctx, a, 1, 1LL << 40, &v);
			o.seq = v;
			break;
		case OPT_GPUS:
			rc = cli_int(ctx, a, 1, 1LL << 30, &v);
			o.gpus = v;
			break;
		case OPT_CSV:
			csv = 1;
			break;
		}
		if (rc)
			goto out;
	}
	if (p.npos == 0) {
		cli_error(ctx, "no input given");
		fprintf(stderr, "hint: trainscope steps LOG|METRICS.jsonl|RUN_DIR...\n");
		rc = EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < p.npos; i++)
		if (collect(p.pos[i], &files, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	if (files.n == 0) {
		cli_error(ctx, "no training log or metrics file found in the inputs");
		rc = EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < files.n; i++)
		if (ts_steplog_read(&log, files.v[i], &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	if (!ctx->quiet && !ctx->json) {
		for (size_t i = 0; i < log.notes.n && i < MAX_NOTES_SHOWN; i++) {
			const struct ts_log_note *n = &log.notes.v[i];

			cli_warn(ctx, "%s: line %lld: %s", files.v[n->file], (long long)n->line, n->msg);
		}
		if (log.notes.n > MAX_NOTES_SHOWN)
			cli_warn(ctx, "%zu more notes (see --json)", log.notes.n - MAX_NOTES_SHOWN);
	}
	if (csv) {
		render_csv(&log, &out);
		rc = cli_emit(ctx, &out);
		goto out;
	}
	if (ts_steps_analyze(&log, &o, &rep, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ctx->json)
		render_json(&log, &rep, &files, &out);
	else
		render_text(ctx, &log, &rep, &out);
	rc = cli_emit(ctx, &out);
out:
	ts_steps_report_release(&rep);
	ts_steplog_release(&log);
	ts_sb_release(&out);
	ts_paths_release(&files);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_steps = {
	.name = "steps",
	.stage = STAGE_MEASURE,
	.summary = "Steady-state step time, stalls and loss health from training logs",
	.usage = "steps [options] LOG|METRICS.jsonl|RUN_DIR...",
	.description =
		"Reads Megatron-LM (any era), Megatron Bridge, NeMo 2, Hugging Face Trainer, AMD\n"
		"Primus and MT-MegatronLM logs and JSONL metrics, judged by content; several\n"
		"files are several ranks. A run directory contributes its per-rank JSONL metrics\n"
		"when it has them, else its logs.\n"
		"\n"
		"The steady window drops iteration 1 and the warm-up found by MSER-5, and stops\n"
		"at a level shift (PELT); --window FIRST:LAST declares it instead. On the window:\n"
		"median, mean, p10, p90, CV and a 95 % CI of the mean that stays honest when\n"
		"steps are autocorrelated (batch means, else a moving-block bootstrap). Stalls are\n"
		"steps far above a moving median (robust z > 3.5); a periodic pattern (a data\n"
		"loader or checkpoint every k steps) is reported with its period, phase and share\n"
		"of wall time. Per-phase times (JSONL data_ms, fwd_ms, bwd_ms, opt_ms, comm_ms;\n"
		"Megatron --timing-log-level timers) get means with CIs, and stalls are also\n"
		"looked for on each phase series, where a data-loader stall stands out. Loss\n"
		"health: one verdict (finite, non-finite, missing) with its first iteration and\n"
		"cause, from NaN/Inf losses, extra losses and grad norms, NaN counters and a loss\n"
		"that stops being logged; skipped iterations, loss and grad-norm spikes, final\n"
		"loss. Memory per rank, the slowest rank, bucket mixtures.\n"
		"\n"
		"--csv prints the parsed series (one row per record and rank) for plotting.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};

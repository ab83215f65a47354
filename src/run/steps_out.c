/*
 * steps_out.c - the steps analysis rendered: its JSON object (the same
 * wherever it appears: `steps --json`, under "steps" in `diagnose --json`)
 * and its terminal summary. The analysis itself is steps.h; the run it
 * belongs to (files, window object, warnings) is run.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/run.h"
#include "trainscope/table.h"

static const char *const note_names[] = {
	"", "joined", "broken", "truncated", "bad-json", "unattached"
};

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

static void jw_i64_array(struct ts_jw *w, const char *key, const int64_t *v, size_t n)
{
	ts_jw_key(w, key);
	ts_jw_arr(w);
	for (size_t i = 0; i < n; i++)
		ts_jw_i64(w, v[i]);
	ts_jw_arr_end(w);
}

/* What the source of node ranks' nproc_per_node is called (struct
 * ts_steplog, enum ts_nproc_source). */
static const char *nproc_source(int from)
{
	return from == TS_NPROC_STATED ? "stated" :
	       from == TS_NPROC_WORLD_NODES ? "world_size/nnodes" : "local ranks seen";
}

void ts_node_ranks_json(struct ts_jw *jw, const struct ts_runmodel *rm)
{
	const struct ts_steplog *log = &rm->log;

	ts_jw_key(jw, "node_ranks");
	if (log->replica_nproc_file < 0) {
		ts_jw_null(jw);
		return;
	}
	ts_jw_obj(jw);
	ts_jw_ki64(jw, "nproc_per_node", log->replica_nproc);
	ts_jw_kstr(jw, "source", nproc_source(log->replica_nproc_from));
	ts_jw_kstr(jw, "file", rm->step_files.v[log->replica_nproc_file]);
	ts_jw_ki64_or_null(jw, "line", log->replica_nproc_line, log->replica_nproc_line != TS_NO_INT);
	ts_jw_ki64_or_null(jw, "nnodes_line", log->replica_nodes_line,
			   log->replica_nodes_line != TS_NO_INT);
	ts_jw_ki64(jw, "files_with_node_prefixes", log->replica_files);
	ts_jw_ki64_or_null(jw, "differing_nproc_per_node", log->replica_differ_nproc,
			   log->replica_differ_file >= 0);
	ts_jw_obj_end(jw);
}

const char *ts_runmodel_node_ranks_words(const struct ts_runmodel *rm, char *buf, size_t size)
{
	const struct ts_steplog *log = &rm->log;
	const char *f;

	if (log->replica_nproc_file < 0)
		return NULL;
	f = rm->step_files.v[log->replica_nproc_file];
	if (log->replica_nproc_from == TS_NPROC_STATED)
		snprintf(buf, size, "nproc_per_node %lld stated at %s line %lld",
			 (long long)log->replica_nproc, f, (long long)log->replica_nproc_line);
	else if (log->replica_nproc_from == TS_NPROC_WORLD_NODES)
		snprintf(buf, size, "nproc_per_node %lld = world_size %lld / nnodes %lld (%s lines "
			 "%lld and %lld)", (long long)log->replica_nproc, (long long)log->replica_world,
			 (long long)log->replica_nodes, f, (long long)log->replica_nproc_line,
			 (long long)log->replica_nodes_line);
	else
		snprintf(buf, size, "nproc_per_node %lld = the local ranks seen",
			 (long long)log->replica_nproc);
	if (log->replica_files > 1) {
		size_t n = strlen(buf);

		snprintf(buf + n, size - n, log->replica_differ_file >= 0 ?
			 "; the first of %d files with node prefixes, which disagree "
			 "(node-ranks-differ)" : "; the first of %d files with node prefixes, "
			 "which agree", log->replica_files);
	}
	return buf;
}

void ts_steps_json(struct ts_jw *jw, const struct ts_runmodel *rm, int with_schema)
{
	const struct ts_steplog *log = &rm->log;
	const struct ts_steps_report *r = &rm->steps;
	const struct ts_paths *files = &rm->step_files;

	ts_jw_obj(jw);
	if (with_schema)
		ts_jw_kstr(jw, "schema", "trainscope.steps/1");
	ts_jw_kstr(jw, "format", r->format);
	ts_jw_key(jw, "inputs");
	ts_jw_arr(jw);
	for (size_t i = 0; i < files->n; i++)
		ts_jw_str(jw, files->v[i]);
	ts_jw_arr_end(jw);
	ts_jw_ki64(jw, "iterations", (int64_t)r->iterations);
	ts_jw_ki64_or_null(jw, "first_iteration", r->first_iteration, r->first_iteration != TS_NO_INT);
	ts_jw_ki64_or_null(jw, "last_iteration", r->last_iteration, r->last_iteration != TS_NO_INT);

	ts_window_json(jw, &rm->window);

	ts_jw_key(jw, "step_time_ms");
	ts_jw_obj(jw);
	ts_jw_kfixed_or_null(jw, "median", r->median_ms, 3);
	ts_jw_kfixed_or_null(jw, "mean", r->mean_ms, 3);
	ts_jw_kfixed_or_null(jw, "p10", r->p10_ms, 3);
	ts_jw_kfixed_or_null(jw, "p90", r->p90_ms, 3);
	ts_jw_kfixed_or_null(jw, "cv", r->cv, 4);
	ts_jw_kfixed_or_null(jw, "ci95_low", r->ci.method ? r->ci.lo : NAN, 3);
	ts_jw_kfixed_or_null(jw, "ci95_high", r->ci.method ? r->ci.hi : NAN, 3);
	ts_jw_kstr(jw, "ci_method", ts_ci_method_name(r->ci.method));
	ts_jw_ki64(jw, "ci_batches", (int64_t)r->ci.batches);
	ts_jw_ki64(jw, "ci_block_len", (int64_t)r->ci.block_len);
	ts_jw_kfixed_or_null(jw, "lag1_autocorr", r->acf.lag1, 4);
	ts_jw_kfixed_or_null(jw, "effective_steps", r->acf.ess, 1);
	ts_jw_obj_end(jw);

	ts_warnings_json(jw, &rm->warnings, rm->nwarn_steps);
	/* step times and iterations dropped as unusable, per kind */
	ts_jw_key(jw, "ignored_values");
	ts_jw_obj(jw);
	for (int k = 0; k < TS_IGN_COUNT; k++)
		ts_jw_ki64(jw, ts_ignored_name(k), (int64_t)rm->log.ignored[k]);
	ts_jw_obj_end(jw);

	ts_jw_key(jw, "throughput");
	ts_jw_obj(jw);
	ts_jw_kfixed_or_null(jw, "tokens_per_step", r->tokens_per_step, 1);
	ts_jw_kfixed_or_null(jw, "tokens_per_s", r->tokens_per_s, 1);
	ts_jw_kfixed_or_null(jw, "tokens_per_s_per_gpu", r->tokens_per_s_gpu, 1);
	ts_jw_ki64_or_null(jw, "gpus", r->gpus, r->gpus != 0);
	ts_jw_kfixed_or_null(jw, "logged_tflops_per_gpu_mean", r->tflops_mean, 2);
	ts_jw_kfixed_or_null(jw, "logged_tflops_per_gpu_median", r->tflops_median, 2);
	ts_jw_obj_end(jw);

	ts_jw_key(jw, "outliers");
	ts_jw_arr(jw);
	for (size_t i = 0; i < r->noutliers; i++) {
		const struct ts_outlier *o = &r->outliers[i];

		ts_jw_obj(jw);
		ts_jw_ki64(jw, "iteration", o->iteration);
		ts_jw_kfixed_or_null(jw, "step_time_ms", o->step_ms, 3);
		ts_jw_kfixed_or_null(jw, "baseline_ms", o->baseline_ms, 3);
		ts_jw_kfixed_or_null(jw, "excess_ms", o->excess_ms, 3);
		ts_jw_kfixed_or_null(jw, "robust_z", o->z, 2);
		ts_jw_kstr(jw, "reason", ts_outlier_reason_name(o->reason));
		ts_jw_obj_end(jw);
	}
	ts_jw_arr_end(jw);
	ts_jw_kfixed_or_null(jw, "outlier_excess_pct", r->outlier_share * 100, 2);
	ts_jw_ki64(jw, "window_stalls", (int64_t)r->win_nstalls);
	ts_jw_kfixed_or_null(jw, "window_stall_time_pct", r->win_stall_share * 100, 2);
	ts_jw_kfixed_or_null(jw, "window_drift_pct", r->drift.change * 100, 2);
	ts_jw_key(jw, "window_drift_kendall_s");
	if (isfinite(r->drift.change))
		ts_jw_i64(jw, r->drift.kendall_s);
	else
		ts_jw_null(jw);

	ts_jw_key(jw, "periodic_stall");
	if (r->periodic.found) {
		ts_jw_obj(jw);
		ts_jw_ki64(jw, "period", r->periodic_period_iters);
		ts_jw_ki64(jw, "phase", r->periodic_phase_iters);
		ts_jw_ki64(jw, "hits", (int64_t)r->periodic.hits);
		ts_jw_ki64(jw, "slots", (int64_t)r->periodic.slots);
		ts_jw_kf64(jw, "p_value", round6(r->periodic.p_value));
		ts_jw_kfixed_or_null(jw, "wall_time_pct", r->periodic_share * 100, 2);
		ts_jw_obj_end(jw);
	} else {
		ts_jw_null(jw);
	}

	ts_jw_key(jw, "phases");
	ts_jw_arr(jw);
	for (size_t i = 0; i < r->nphases; i++) {
		const struct ts_phase_summary *ph = &r->phases[i];

		ts_jw_obj(jw);
		ts_jw_kstr(jw, "phase", ts_phase_name(ph->phase));
		ts_jw_ki64(jw, "steps", (int64_t)ph->steps);
		ts_jw_kfixed_or_null(jw, "mean_ms", ph->mean_ms, 3);
		ts_jw_kfixed_or_null(jw, "median_ms", ph->median_ms, 3);
		ts_jw_kfixed_or_null(jw, "ci95_low_ms", ph->ci.method ? ph->ci.lo : NAN, 3);
		ts_jw_kfixed_or_null(jw, "ci95_high_ms", ph->ci.method ? ph->ci.hi : NAN, 3);
		ts_jw_kstr(jw, "ci_method", ts_ci_method_name(ph->ci.method));
		ts_jw_kfixed_or_null(jw, "step_share_pct", ph->step_share * 100, 2);
		ts_jw_key(jw, "periodic_stall");
		if (ph->periodic.found) {
			ts_jw_obj(jw);
			ts_jw_ki64(jw, "period", ph->periodic_period_iters);
			ts_jw_ki64(jw, "phase", ph->periodic_phase_iters);
			ts_jw_ki64(jw, "hits", (int64_t)ph->periodic.hits);
			ts_jw_ki64(jw, "slots", (int64_t)ph->periodic.slots);
			ts_jw_kf64(jw, "p_value", round6(ph->periodic.p_value));
			ts_jw_kfixed_or_null(jw, "excess_per_stall_ms", ph->periodic_excess_ms, 3);
			ts_jw_kfixed_or_null(jw, "wall_time_pct", ph->periodic_share * 100, 2);
			ts_jw_obj_end(jw);
		} else {
			ts_jw_null(jw);
		}
		ts_jw_ki64(jw, "stalls", (int64_t)ph->nstalls);
		ts_jw_ki64_or_null(jw, "first_stall_iteration", ph->first_stall_iteration, ph->first_stall_iteration != TS_NO_INT);
		ts_jw_kfixed_or_null(jw, "stall_wall_time_pct", ph->stall_share * 100, 2);
		ts_jw_obj_end(jw);
	}
	ts_jw_arr_end(jw);

	ts_jw_key(jw, "loss");
	ts_jw_obj(jw);
	ts_jw_kstr(jw, "health", ts_loss_verdict_name(r->health.verdict));
	ts_jw_kstr(jw, "health_cause", ts_loss_cause_name(r->health.cause));
	ts_jw_ki64_or_null(jw, "first_bad_iteration", r->health.first_bad_iteration, r->health.first_bad_iteration != TS_NO_INT);
	ts_jw_ki64_or_null(jw, "first_possible_bad_iteration", r->health.first_bad_possible,
			   r->health.first_bad_possible != TS_NO_INT);
	{
		/* the line that printed the first non-finite evidence */
		int32_t rank = -1;
		const char *path = NULL;
		int64_t line = TS_NO_INT;
		int have = ts_runmodel_first_bad(rm, &rank, &path, &line);

		ts_jw_ki64_or_null(jw, "first_nonfinite_rank", rank, have && rank >= 0);
		ts_jw_key(jw, "first_nonfinite_file");
		if (have)
			ts_jw_str(jw, path);
		else
			ts_jw_null(jw);
		ts_jw_ki64_or_null(jw, "first_nonfinite_line", line, have);
	}
	ts_jw_key(jw, "evidence");
	ts_jw_arr(jw);
	for (int c = TS_LOSS_CAUSE_LOSS; c < TS_LOSS_CAUSE_COUNT; c++) {
		const struct ts_loss_evidence *e = &r->health.ev[c];

		if (!e->records)
			continue;
		ts_jw_obj(jw);
		ts_jw_kstr(jw, "cause", ts_loss_cause_name(c));
		ts_jw_ki64_or_null(jw, "first_iteration", e->first_iteration, e->first_iteration != TS_NO_INT);
		ts_jw_ki64_or_null(jw, "first_possible_iteration", e->first_possible,
				   e->first_possible != TS_NO_INT);
		ts_jw_ki64(jw, "records", e->records);
		ts_jw_ki64(jw, "iterations", e->iterations);
		if (c == TS_LOSS_CAUSE_EXTRA_LOSS)
			ts_jw_kstr(jw, "loss_name", r->health.extra_loss);
		ts_jw_obj_end(jw);
	}
	ts_jw_arr_end(jw);
	jw_i64_array(jw, "nan_iterations", r->health.bad_iterations, r->health.nbad);
	ts_jw_ki64_or_null(jw, "first_nan_iteration",
			   r->health.nbad ? r->health.bad_iterations[0] : 0, r->health.nbad != 0);
	ts_jw_ki64(jw, "skipped_iterations", r->health.ev[TS_LOSS_CAUSE_SKIPPED].iterations);
	ts_jw_key(jw, "final");
	if (isfinite(r->final_loss))
		ts_jw_f64(jw, r->final_loss);
	else
		ts_jw_null(jw);
	ts_jw_ki64_or_null(jw, "final_iteration", r->final_loss_iteration, r->final_loss_iteration != TS_NO_INT);
	jw_i64_array(jw, "spike_iterations", r->loss_spikes, r->nloss_spikes);
	jw_i64_array(jw, "grad_norm_spike_iterations", r->grad_spikes, r->ngrad_spikes);
	ts_jw_obj_end(jw);

	ts_jw_key(jw, "ranks");
	ts_jw_arr(jw);
	for (size_t i = 0; i < r->nranks; i++) {
		const struct ts_rank_summary *k = &r->ranks[i];

		ts_jw_obj(jw);
		ts_jw_ki64_or_null(jw, "rank", k->rank, k->rank >= 0);
		ts_jw_ki64_or_null(jw, "records", (int64_t)k->records, k->steps_known);
		ts_jw_ki64_or_null(jw, "steps", (int64_t)k->steps, k->steps_known);
		ts_jw_kfixed_or_null(jw, "mean_ms", k->mean_ms, 3);
		ts_jw_kfixed_or_null(jw, "median_ms", k->median_ms, 3);
		ts_jw_kfixed_or_null(jw, "max_allocated_bytes", k->max_alloc_bytes, 0);
		ts_jw_kfixed_or_null(jw, "max_reserved_bytes", k->max_reserved_bytes, 0);
		ts_jw_kfixed_or_null(jw, "max_rss_bytes", k->max_rss_bytes, 0);
		ts_jw_key(jw, "final_loss");
		if (isfinite(k->final_loss))
			ts_jw_f64(jw, k->final_loss);
		else
			ts_jw_null(jw);
		ts_jw_obj_end(jw);
	}
	ts_jw_arr_end(jw);
	ts_jw_ki64_or_null(jw, "slowest_rank", r->slowest_rank, r->slowest_rank >= 0);
	ts_node_ranks_json(jw, rm);

	ts_jw_key(jw, "buckets");
	ts_jw_arr(jw);
	for (size_t i = 0; i < r->nbuckets; i++) {
		ts_jw_obj(jw);
		ts_jw_ki64(jw, "bucket", r->buckets[i].bucket);
		ts_jw_ki64(jw, "steps", (int64_t)r->buckets[i].steps);
		ts_jw_kfixed_or_null(jw, "weight", r->buckets[i].weight, 4);
		ts_jw_kfixed_or_null(jw, "mean_ms", r->buckets[i].mean_ms, 3);
		ts_jw_kfixed_or_null(jw, "median_ms", r->buckets[i].median_ms, 3);
		ts_jw_obj_end(jw);
	}
	ts_jw_arr_end(jw);
	ts_jw_kfixed_or_null(jw, "mixture_mean_ms", r->mixture_mean_ms, 3);

	ts_jw_key(jw, "theoretical_memory_mb");
	ts_jw_obj(jw);
	ts_jw_kfixed_or_null(jw, "weight_and_optimizer", log->theo_weight_opt_mb, 2);
	ts_jw_kfixed_or_null(jw, "activation", log->theo_activation_mb, 2);
	ts_jw_kfixed_or_null(jw, "total", log->theo_total_mb, 2);
	ts_jw_obj_end(jw);
	ts_jw_key(jw, "theoretical_params_billions");
	ts_jw_obj(jw);
	ts_jw_kfixed_or_null(jw, "transformer_block", log->theo_params_b, 4);
	ts_jw_kfixed_or_null(jw, "most_loaded_shard", log->theo_params_shard_b, 4);
	ts_jw_obj_end(jw);

	ts_jw_key(jw, "hf_trainer_summary");
	if (isfinite(log->hf_train_runtime_s) || isfinite(log->hf_steps_per_s)) {
		struct ts_hf_run_mean hm;

		ts_hf_run_mean(log, &hm);
		ts_jw_obj(jw);
		ts_jw_kfixed_or_null(jw, "train_runtime_s", log->hf_train_runtime_s, 4);
		ts_jw_kfixed_or_null(jw, "train_steps_per_s", log->hf_steps_per_s, 4);
		ts_jw_kfixed_or_null(jw, "mean_step_time_ms", hm.mean_ms, 3);
		ts_jw_kfixed_or_null(jw, "mean_step_time_low_ms", hm.low_ms, 3);
		ts_jw_kfixed_or_null(jw, "mean_step_time_high_ms", hm.high_ms, 3);
		ts_jw_ki64_or_null(jw, "max_steps", hm.steps, hm.steps != TS_NO_INT);
		ts_jw_obj_end(jw);
	} else {
		ts_jw_null(jw);
	}

	ts_jw_key(jw, "notes");
	ts_jw_arr(jw);
	for (size_t i = 0; i < log->notes.n; i++) {
		const struct ts_log_note *n = &log->notes.v[i];

		ts_jw_obj(jw);
		ts_jw_kstr(jw, "kind", note_names[n->kind]);
		ts_jw_kstr(jw, "file", files->v[n->file]);
		ts_jw_ki64(jw, "line", n->line);
		ts_jw_kstr(jw, "message", n->msg);
		ts_jw_obj_end(jw);
	}
	ts_jw_arr_end(jw);
	ts_jw_obj_end(jw);
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

/* The HF Trainer summary's whole-run mean step (ts_hf_run_mean): exact
 * when its step count is pinned, else with the range its rounding leaves. */
static void render_hf_run_mean(const struct ts_steplog *log, const char *bold, const char *reset,
			       struct ts_sb *out)
{
	struct ts_hf_run_mean hm;

	if (ts_hf_run_mean(log, &hm))
		return;
	ts_sb_addf(out, "%shf summary%s ", bold, reset);
	if (hm.steps != TS_NO_INT)
		ts_sb_addf(out, "%lld steps in %.1f s: mean step %.1f ms", (long long)hm.steps,
			   log->hf_train_runtime_s, hm.mean_ms);
	else if (isfinite(hm.high_ms))
		ts_sb_addf(out, "%.4g steps/s over %.1f s: mean step %.1f ms (%.1f-%.1f ms: the "
			   "Trainer rounds steps/s to 3 decimals)", log->hf_steps_per_s,
			   log->hf_train_runtime_s, hm.mean_ms, hm.low_ms, hm.high_ms);
	else
		ts_sb_addf(out, "%.4g steps/s over %.1f s: mean step over %.1f ms (the Trainer "
			   "rounds steps/s to 3 decimals)", log->hf_steps_per_s,
			   log->hf_train_runtime_s, hm.low_ms);
	ts_sb_adds(out, "; a whole-run mean, warm-up, evaluations and checkpoint saves "
		   "included, not a steady-window statistic\n");
}

/* Per-phase means with their CI, share of the step and stalls. */
static void render_phases(const struct ts_text_style *st, const struct ts_steps_report *r,
			  struct ts_sb *out)
{
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
	ts_sb_addf(out, "%sphases%s\n", st->bold, st->reset);
	ts_table_render(&t, out, 12);
	ts_table_release(&t);
}

/* The loss-health verdict and its evidence, one sentence. */
static void render_health(const struct ts_text_style *st, const struct ts_runmodel *rm,
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
	const struct ts_loss_health *h = &rm->steps.health;
	const char *colour = h->verdict == TS_LOSS_FINITE ? "" : st->yellow;
	const char *reset = h->verdict == TS_LOSS_FINITE ? "" : st->reset;
	int first = 1;

	char at[96], who[1200];

	ts_sb_addf(out, "            health %s%s%s", colour, ts_loss_verdict_name(h->verdict), reset);
	if (h->verdict != TS_LOSS_FINITE && h->first_bad_iteration != TS_NO_INT)
		ts_sb_addf(out, " %s (%s%s%s%s)",
			   ts_runmodel_span_words(rm, "from", "from within", h->first_bad_possible,
						  h->first_bad_iteration, at, sizeof(at)),
			   what[h->cause], h->cause == TS_LOSS_CAUSE_EXTRA_LOSS ? ": " : "",
			   h->cause == TS_LOSS_CAUSE_EXTRA_LOSS ? h->extra_loss : "",
			   ts_runmodel_first_bad_words(rm, who, sizeof(who)));
	for (int c = TS_LOSS_CAUSE_LOSS; c < TS_LOSS_CAUSE_NEVER_LOGGED; c++) {
		if (!h->ev[c].records || c == h->cause)
			continue;
		/* "from 250", or "from within 241-250" */
		if (h->ev[c].first_possible != TS_NO_INT &&
		    h->ev[c].first_possible < h->ev[c].first_iteration)
			ts_sb_addf(out, "%s%s from within %lld-%lld", first ? "; also " : ", ",
				   what[c], (long long)h->ev[c].first_possible,
				   (long long)h->ev[c].first_iteration);
		else
			ts_sb_addf(out, "%s%s from %lld", first ? "; also " : ", ", what[c],
				   (long long)h->ev[c].first_iteration);
		first = 0;
	}
	ts_sb_addc(out, '\n');
}

static void render_stalls(const struct ts_text_style *st, const struct ts_steps_report *r,
			  struct ts_sb *out)
{
	const char *bold = st->bold, *reset = st->reset, *yellow = st->yellow;

	ts_sb_addf(out, "%sstalls%s      ", bold, reset);
	if (r->periodic.found)
		ts_sb_addf(out, "%speriodic every %lld iterations (phase %lld): %zu of %zu slots, "
			   "%.1f %% of the run's time (p = %.2g)%s\n", yellow,
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
			   "%zu slots, %.1f ms each, %.1f %% of the run's time (p = %.2g)%s\n", yellow,
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
		ts_sb_addf(out, "            %zu outlier steps, %.1f %% of the run's time in excess:\n",
			   r->noutliers, r->outlier_share * 100);
		ts_table_render(&t, out, 12);
		ts_table_release(&t);
	}
}

void ts_steps_text(struct ts_sb *out, const struct ts_runmodel *rm,
		   const struct ts_text_style *st)
{
	const struct ts_steplog *log = &rm->log;
	const struct ts_steps_report *r = &rm->steps;
	char a[32], b[32], c[32], d[32], words[1200];
	const char *bold = st->bold, *reset = st->reset, *yellow = st->yellow;

	ts_sb_addf(out, "%sformat%s      %s, %zu iterations", bold, reset, r->format, r->iterations);
	if (r->first_iteration != TS_NO_INT)
		ts_sb_addf(out, " (%lld..%lld", (long long)r->first_iteration,
			   (long long)r->last_iteration);
	if (r->first_iteration != TS_NO_INT && rm->nordinal == log->steps.n)
		ts_sb_adds(out, ", record ordinals: the log prints no step numbers");
	else if (r->first_iteration != TS_NO_INT && rm->nordinal)
		ts_sb_addf(out, "; %zu records numbered by their order: the log prints no step "
			   "number for them", rm->nordinal);
	if (r->first_iteration != TS_NO_INT)
		ts_sb_addc(out, ')');
	ts_sb_addc(out, '\n');
	if (r->win_n) {
		ts_sb_addf(out, "%swindow%s      ", bold, reset);
		ts_window_text(out, &rm->window);
		ts_sb_addc(out, '\n');
		fmt_num(a, sizeof(a), r->median_ms, 1);
		fmt_num(b, sizeof(b), r->mean_ms, 1);
		fmt_num(c, sizeof(c), r->p10_ms, 1);
		fmt_num(d, sizeof(d), r->p90_ms, 1);
		ts_sb_addf(out, "%sstep time%s   median %s ms, mean %s ms, p10 %s ms, p90 %s ms, CV ",
			   bold, reset, a, b, c, d);
		/* one step has no spread: "-", as the JSON's null */
		fmt_num(a, sizeof(a), r->cv * 100, 1);
		ts_sb_addf(out, "%s %%\n", a);
		if (r->ci.method) {
			fmt_num(a, sizeof(a), r->ci.lo, 1);
			fmt_num(b, sizeof(b), r->ci.hi, 1);
			ts_sb_addf(out, "            95 %% CI of the mean [%s, %s] ms (%s", a, b,
				   ts_ci_method_name(r->ci.method));
			if (r->ci.method == TS_CI_BATCH_MEANS)
				ts_sb_addf(out, ", %zu batches of %zu", r->ci.batches, r->ci.batch_len);
			else if (r->ci.method == TS_CI_AR1)
				ts_sb_addf(out, ", lag-1 bound %.2f", r->ci.lag1);
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
		ts_sb_addf(out, "%slogged%s      %.1f TFLOP/s/GPU median, %.1f over the window (FLOPs / "
			   "time)\n", bold, reset,
			   r->tflops_median, r->tflops_mean);
	if (r->win_n) {
		ts_sb_addf(out, "%sseries%s      ", bold, reset);
		sparkline(r, out);
		ts_sb_addc(out, '\n');
		render_stalls(st, r, out);
	}
	render_phases(st, r, out);
	ts_sb_addf(out, "%sloss%s        final ", bold, reset);
	if (isfinite(r->final_loss))
		ts_sb_addf(out, "%.6g (%s %lld)", r->final_loss,
			   ts_runmodel_iteration_word(rm, r->final_loss_iteration),
			   (long long)r->final_loss_iteration);
	else
		ts_sb_adds(out, "-");
	ts_sb_addf(out, "; NaN/Inf iterations: ");
	if (r->health.nbad) {
		int64_t from = r->health.first_bad_possible, it = r->health.bad_iterations[0];

		/* the first bad record, and the first iteration it stands for */
		ts_sb_addf(out, "%s%lld, first ", yellow, (long long)r->health.nbad_iterations);
		if (from != TS_NO_INT && from < it)
			ts_sb_addf(out, "within %lld-%lld", (long long)from, (long long)it);
		else
			ts_sb_addf(out, "%lld", (long long)it);
		ts_sb_adds(out, reset);
	} else {
		ts_sb_adds(out, "none");
	}
	ts_sb_addf(out, "; skipped iterations: %lld\n",
		   (long long)r->health.ev[TS_LOSS_CAUSE_SKIPPED].iterations);
	render_health(st, rm, out);
	if (r->nloss_spikes || r->ngrad_spikes)
		ts_sb_addf(out, "            %zu loss spikes, %zu grad-norm spikes (first at %lld)\n",
			   r->nloss_spikes, r->ngrad_spikes,
			   (long long)(r->nloss_spikes ? r->loss_spikes[0] : r->grad_spikes[0]));
	if (r->nranks) {
		struct ts_table t;

		ts_table_init(&t);
		ts_table_col(&t, "rank", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "window steps", NULL, TS_RIGHT, 0);
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
			if (k->steps_known)
				ts_table_cell(&t, "%zu", k->steps);
			else
				ts_table_cell(&t, "-");
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
		if (ts_runmodel_node_ranks_words(rm, words, sizeof(words)))
			ts_sb_addf(out, "            node ranks: node x %lld + local rank; %s\n",
				   (long long)log->replica_nproc, words);
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
	render_hf_run_mean(log, bold, reset, out);
	if (isfinite(log->theo_total_mb))
		ts_sb_addf(out, "%stheoretical%s weights+optimizer %.1f MB, activations %.1f MB, total %.1f MB\n",
			   bold, reset, log->theo_weight_opt_mb, log->theo_activation_mb,
			   log->theo_total_mb);
	ts_warnings_text(out, &rm->warnings, rm->nwarn_steps, yellow, reset);
}

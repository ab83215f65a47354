/*
 * cmd_diff.c - `trainscope diff BASELINE CANDIDATE`: what changed between
 * two profiler traces (one rank window each), and why.
 *
 * Inputs are read one after the other with trace's reader (Kineto JSON,
 * legacy array, gzip, nsys SQLite exports) and reduced to a diff side
 * (diff.h) before the next is read, so at most one trace is in memory.
 * --hta-compat, --tracelens-compat and --annotate need both whole traces
 * (diffcompat.h): the two chosen files are then read again, in full.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "diff_cli.h"
#include "trainscope/detect.h"
#include "trainscope/diff.h"
#include "trainscope/diffcompat.h"
#include "trainscope/jsonw.h"
#include "trainscope/run.h"
#include "trainscope/table.h"

enum {
	OPT_RANK = 1, OPT_ALLOW_HW, OPT_FAIL_REG, OPT_MAX_UNMATCHED, OPT_BAND, OPT_TOP,
	OPT_HTA, OPT_HTA_DEVICE, OPT_HTA_ITER, OPT_HTA_SHORT, OPT_TRACELENS, OPT_ANNOTATE
};

static const struct cli_opt opts[] = {
	{ "rank", 0, "A:B", "compare rank A of BASELINE with rank B of CANDIDATE (default: the same rank, else the only one)", OPT_RANK },
	{ "allow-different-hardware", 0, NULL, "give a speed verdict although the device models differ", OPT_ALLOW_HW },
	{ "fail-on-regression", 0, "PCT", "exit 1 when the CI lower bound of the slowdown exceeds PCT % (negative: demands that speed-up)", OPT_FAIL_REG },
	{ "max-unmatched", 0, "PCT", "exit 1 when more than PCT % of the attributed time is in rows on one side only", OPT_MAX_UNMATCHED },
	{ "band", 0, "PCT", "practical-significance band of the verdict in % (default 2, as ab without repeats)", OPT_BAND },
	{ "top", 0, "N", "rows printed in the text table (default 25; --json has all)", OPT_TOP },
	{ "hta-compat", 0, NULL, "add HTA's TraceDiff compare_traces/ops_diff of the two traces (docs/diff-compat.md)", OPT_HTA },
	{ "hta-device", 0, "all|cpu|gpu", "device rows for --hta-compat (HTA's device_type; default all)", OPT_HTA_DEVICE },
	{ "hta-iterations", 0, "A:B", "--hta-compat compares ProfilerStep#A of BASELINE with #B of CANDIDATE (default: HTA's, the lowest)", OPT_HTA_ITER },
	{ "hta-short-names", 0, NULL, "--hta-compat groups by HTA's short names (use_short_name)", OPT_HTA_SHORT },
	{ "tracelens-compat", 0, NULL, "add TraceLens's gpu_timeline comparison and the kernel-family table", OPT_TRACELENS },
	{ "annotate", 0, "FILE", "write a Perfetto trace with both sides' compared steps stacked and delta tracks", OPT_ANNOTATE },
	{ 0 }
};

/* ------------------------------------------------------------ loading */

/* ------------------------------------------------------------ rendering */

static double ms(double ns)
{
	return ns / 1e6;
}

/* "22-26" or "20, 22-24, 28". */
static void iter_list(struct ts_sb *out, const int64_t *v, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		if (v[i] == TS_NONE) {
			ts_sb_addf(out, "%swhole window", i ? ", " : "");
			i++;
			continue;
		}
		while (j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		ts_sb_addf(out, "%s%lld", i ? ", " : "", (long long)v[i]);
		if (j > i)
			ts_sb_addf(out, "-%lld", (long long)v[j]);
		i = j + 1;
	}
	if (!n)
		ts_sb_adds(out, "none");
}

static void side_iters(const struct ts_diff_result *r, int side, int64_t *v, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < r->pairs.n; i++)
		v[(*n)++] = side ? r->pairs.v[i].cand_iteration : r->pairs.v[i].base_iteration;
}

static void note_text(struct ts_sb *out, const struct ts_diff_step_note *nt)
{
	ts_sb_addf(out, "    %-9s iteration %lld: %.1f ms", nt->side ? "candidate" : "baseline",
		   (long long)nt->iteration, ms((double)nt->dur_ns));
	if (!isnan(nt->robust_z))
		ts_sb_addf(out, ", robust z %+.1f", nt->robust_z);
	ts_sb_addf(out, "%s%s", nt->compared ? ", compared" : ", not compared",
		   nt->outlier ? ", OUTLIER" : "");
	if (nt->wall_excess_ns > 0)
		ts_sb_addf(out, "; its extra time is in %s: %+.1f ms over the side's median %.1f ms",
			   ts_diff_wall_name(nt->wall), ms((double)nt->wall_excess_ns),
			   ms((double)nt->wall_median_ns));
	ts_sb_addc(out, '\n');
}

/* One row of the context table; the mark says how a compared field
 * differs (ts_diff_ctx_compare), "" for rows not compared. */
static void context_row(struct ts_table *t, const char *k, const char *a, const char *b, const char *mark)
{
	ts_table_cell(t, "%s", k);
	ts_table_cell_text(t, a ? a : "-", strlen(a ? a : "-"));
	ts_table_cell_text(t, b ? b : "-", strlen(b ? b : "-"));
	ts_table_cell(t, "%s", mark);
}

static void context_text(struct ts_sb *out, const struct ts_diff_side *b, const struct ts_diff_side *c,
			 const struct ts_diff_result *r)
{
	static const char *const marks[] = {
		[TS_DCTX_SAME] = "", [TS_DCTX_DIFFERS] = "differs",
		[TS_DCTX_BASELINE_ONLY] = "only the baseline records it",
		[TS_DCTX_CANDIDATE_ONLY] = "only the candidate records it", [TS_DCTX_NEITHER] = "",
	};
	/* compared fields in table order, with rank before world size */
	static const int order[] = { TS_DCTX_DEVICE, TS_DCTX_SMS, TS_DCTX_VENDOR, -1, TS_DCTX_WORLD_SIZE,
				     TS_DCTX_FORMAT, TS_DCTX_PROFILER, TS_DCTX_CLOCK, TS_DCTX_BACKEND,
				     TS_DCTX_RUNTIME, TS_DCTX_DRIVER, TS_DCTX_NCCL };
	struct ts_table t;

	ts_table_init(&t);
	ts_table_col(&t, "context", NULL, TS_LEFT, 0);
	ts_table_col(&t, "baseline", NULL, TS_LEFT, 48);
	ts_table_col(&t, "candidate", NULL, TS_LEFT, 48);
	ts_table_col(&t, "", NULL, TS_LEFT, 0);
	for (size_t i = 0; i < sizeof(order) / sizeof(*order); i++) {
		char ba[32], bb[32];
		int f = order[i];
		if (f < 0) {
			snprintf(ba, sizeof(ba), "%lld", (long long)b->ctx.rank);
			snprintf(bb, sizeof(bb), "%lld", (long long)c->ctx.rank);
			context_row(&t, "rank", ba, bb, "");
		} else if (f == TS_DCTX_DEVICE) {
			/* a side without a model shows its vendor (device_known); GPU 0's
			 * taken for the rank's says so (rank-device-assumed) */
			char da[160], db[160];
			snprintf(da, sizeof(da), "%s%s", b->ctx.device, b->ctx.device_assumed ? " (assumed)" : "");
			snprintf(db, sizeof(db), "%s%s", c->ctx.device, c->ctx.device_assumed ? " (assumed)" : "");
			context_row(&t, ts_diff_ctx_label(f), da, db, marks[r->context[f]]);
		} else {
			context_row(&t, ts_diff_ctx_label(f), ts_diff_ctx_value(&b->ctx, f, ba, sizeof(ba)),
				    ts_diff_ctx_value(&c->ctx, f, bb, sizeof(bb)), marks[r->context[f]]);
		}
	}
	context_row(&t, "precision", b->ctx.precision, c->ctx.precision, "");
	ts_sb_adds(out, "context (a Kineto trace records no PyTorch version; runtime, driver and NCCL versions when its writer did)\n");
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
}

static void render_text(struct ts_sb *out, const struct ts_diff_side *b, const struct ts_diff_side *c,
			const struct ts_diff_result *r, int top)
{
	char why[320], hb[160], hc[160];
	const char *behind = ts_diff_spans_why(r->gpu_behind, r->clock_mismatch, why, sizeof(why));
	const char *may = r->clock_mismatch ? "may " : "";
	const char *of_spans = r->host_clock_only ? " of the host spans" : "";
	const char *given = ts_diff_verdict_given(r->verdict);
	int64_t *it = malloc((r->pairs.n + 1) * sizeof(*it));
	size_t n;
	struct ts_table t;
	int shown = 0;

	ts_sb_addf(out, "diff: %s (rank %lld) -> %s (rank %lld)\n\n", b->ctx.path, (long long)b->ctx.rank,
		   c->ctx.path, (long long)c->ctx.rank);
	context_text(out, b, c, r);
	if (!r->same_hardware)
		ts_sb_addf(out, "  different hardware: %s vs %s%s\n",
			   ts_diff_ctx_hardware(&b->ctx, &c->ctx, hb, sizeof(hb)),
			   ts_diff_ctx_hardware(&c->ctx, &b->ctx, hc, sizeof(hc)),
			   r->verdict == TS_DIFF_REFUSED_HARDWARE
				   ? ": no speed verdict (--allow-different-hardware gives one)"
				   : " (--allow-different-hardware)");
	ts_sb_addf(out, "\nsteps: aligned by %s, %zu compared\n", r->aligned_by, r->pairs.n);
	if (it) {
		side_iters(r, 0, it, &n);
		ts_sb_adds(out, "  baseline iterations  ");
		iter_list(out, it, n);
		side_iters(r, 1, it, &n);
		ts_sb_adds(out, "\n  candidate iterations ");
		iter_list(out, it, n);
		ts_sb_addc(out, '\n');
	}
	if (r->notes.n) {
		ts_sb_adds(out, "  steps not compared, and outliers:\n");
		for (size_t i = 0; i < r->notes.n; i++)
			note_text(out, &r->notes.v[i]);
	}
	if (strcmp(r->step_basis, "device") == 0)
		ts_sb_addf(out, "\nstep time, the GPU's own (%s, so the step spans"
			   " %stime the host): baseline %.3f ms, candidate %.3f ms (mean of %zu compared steps; their"
			   " spans %.3f and %.3f ms)\n", behind, may, ms(r->base_gpu_mean_ns), ms(r->cand_gpu_mean_ns),
			   r->basis_steps, ms(r->base_mean_ns), ms(r->cand_mean_ns));
	else if (r->host_clock_only)
		ts_sb_addf(out, "\nstep time: not compared (%s, and no compared step"
			   " has a GPU step time on both sides); the host spans, the host's launch pace: baseline"
			   " %.3f ms, candidate %.3f ms (mean of the compared steps)\n", behind, ms(r->base_mean_ns),
			   ms(r->cand_mean_ns));
	else
		ts_sb_addf(out, "\nstep time: baseline %.3f ms, candidate %.3f ms (mean of the compared steps)\n",
			   ms(r->base_mean_ns), ms(r->cand_mean_ns));
	if (r->verdict == TS_DIFF_NO_STEPS)
		ts_sb_adds(out, "  no steps to compare\n");
	else if (r->verdict == TS_DIFF_NO_NOISE_ESTIMATE || (r->host_clock_only && r->basis_steps == 1))
		ts_sb_addf(out, "  ratio%s %.4f, no noise estimate (one step per side)\n", of_spans, r->ratio);
	else if (isnan(r->ci95_low))
		ts_sb_addf(out, "  ratio%s %.4f, no interval: %s\n", of_spans, r->ratio, r->method ? r->method : "-");
	else
		ts_sb_addf(out, "  ratio%s %.4f, 95%% CI [%.4f, %.4f] (%s), band +-%.1f%%\n", of_spans, r->ratio,
			   r->ci95_low, r->ci95_high, r->method ? r->method : "-", 100 * r->band);
	if (given && strcmp(given, ts_diff_verdict_name(r->verdict)))
		ts_sb_addf(out, "  verdict: %s (%s)\n", given, ts_diff_verdict_name(r->verdict));
	else
		ts_sb_addf(out, "  verdict: %s\n", ts_diff_verdict_name(r->verdict));

	ts_sb_adds(out, "\nwalls per step (trace's names; the first five add up to the step)\n");
	ts_table_init(&t);
	ts_table_col(&t, "wall", NULL, TS_LEFT, 0);
	ts_table_col(&t, "baseline", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "candidate", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "delta", "ms", TS_RIGHT, 0);
	for (int i = 0; i < TS_DW_COUNT; i++) {
		const struct ts_diff_wall_row *wr = &r->walls[i];
		ts_table_cell(&t, "%s%s", ts_diff_wall_name(i), ts_diff_wall_partitions(i) ? "" : " (in idle)");
		ts_table_cell_fixed(&t, ms(wr->base_ns), 3);
		ts_table_cell_fixed(&t, ms(wr->cand_ns), 3);
		ts_table_cell(&t, "%+.3f", ms(wr->delta_ns));
	}
	ts_table_cell(&t, "step");
	ts_table_cell_fixed(&t, ms(r->base_mean_ns), 3);
	ts_table_cell_fixed(&t, ms(r->cand_mean_ns), 3);
	ts_table_cell(&t, "%+.3f", ms(r->cand_mean_ns - r->base_mean_ns));
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
	{
		int big = TS_DW_COMPUTE;
		for (int i = 0; i < TS_DW_COUNT; i++)
			if (i != TS_DW_IDLE && fabs(r->walls[i].delta_ns) > fabs(r->walls[big].delta_ns))
				big = i;
		if (fabs(r->walls[big].delta_ns) > 0)
			ts_sb_addf(out, "  largest move: %s %+.3f ms/step (%s %.3f ms, %s %.3f ms)%s\n",
				   ts_diff_wall_name(big), ms(r->walls[big].delta_ns), "baseline",
				   ms(r->walls[big].base_ns), "candidate", ms(r->walls[big].cand_ns),
				   big == TS_DW_EXPOSED_COMM
					   ? (r->walls[big].delta_ns < 0 ? ": the baseline waits in communication"
									 : ": the candidate waits in communication")
					   : "");
	}

	ts_sb_addf(out, "\nrows by |delta| (delta: %s per step; rows marked * add up to the step delta with the residual)\n",
		   strcmp(r->closing, "gpu_time") == 0 ? "GPU time" : "main-thread CPU self time");
	ts_table_init(&t);
	ts_table_col(&t, "", NULL, TS_LEFT, 0);
	ts_table_col(&t, "name", NULL, TS_LEFT, 60);
	ts_table_col(&t, "kind", NULL, TS_LEFT, 0);
	ts_table_col(&t, "family", NULL, TS_LEFT, 0);
	ts_table_col(&t, "match", NULL, TS_LEFT, 0);
	ts_table_col(&t, "count/step", "b->c", TS_RIGHT, 0);
	ts_table_col(&t, "base", "ms/step", TS_RIGHT, 0);
	ts_table_col(&t, "cand", "ms/step", TS_RIGHT, 0);
	ts_table_col(&t, "delta", "ms/step", TS_RIGHT, 0);
	ts_table_col(&t, "mean", "us b->c", TS_RIGHT, 0);
	ts_table_col(&t, "p50/p90 cand", "us", TS_RIGHT, 0);
	ts_table_col(&t, "GB/s", "b->c", TS_RIGHT, 0);
	for (size_t i = 0; i < r->rows.n && shown < top; i++) {
		const struct ts_diff_row *x = &r->rows.v[i];
		const char *nm = x->base_name ? x->base_name : x->cand_name;
		char name[600];
		shown++;
		if (x->match == TS_DIFF_MATCH_NORMALIZED)
			snprintf(name, sizeof(name), "%s -> %s", x->base_name, x->cand_name);
		else
			snprintf(name, sizeof(name), "%s%s", nm,
				 x->match == TS_DIFF_MATCH_NONE ? (x->base_name ? " (baseline only)" : " (candidate only)") : "");
		ts_table_cell(&t, "%s", x->closes ? "*" : "");
		ts_table_cell_text(&t, name, strlen(name));
		ts_table_cell(&t, "%s", ts_diff_kind_name(x->kind));
		ts_table_cell(&t, "%s", x->family);
		ts_table_cell(&t, "%s", ts_diff_match_name(x->match));
		ts_table_cell(&t, "%.1f->%.1f", x->base.count_per_step, x->cand.count_per_step);
		ts_table_cell_fixed(&t, ms(x->closes ? x->base.self_ns : x->base.total_ns), 3);
		ts_table_cell_fixed(&t, ms(x->closes ? x->cand.self_ns : x->cand.total_ns), 3);
		if (x->closes)
			ts_table_cell(&t, "%+.3f", ms(x->delta_ns));
		else
			ts_table_cell(&t, "(%+.3f)", ms(x->cand.total_ns - x->base.total_ns));
		ts_table_cell(&t, "%.1f->%.1f", (double)x->base.mean_ns / 1e3, (double)x->cand.mean_ns / 1e3);
		ts_table_cell(&t, "%.1f/%.1f", (double)x->cand.p50_ns / 1e3, (double)x->cand.p90_ns / 1e3);
		if (isnan(x->base.gbps) && isnan(x->cand.gbps))
			ts_table_cell(&t, "-");
		else
			ts_table_cell(&t, "%.1f->%.1f", x->base.gbps, x->cand.gbps);
	}
	ts_table_cell(&t, "*");
	ts_table_cell(&t, "residual (step delta minus the * rows)");
	for (int k = 0; k < 6; k++)
		ts_table_cell(&t, "%s", "");
	ts_table_cell(&t, "%+.3f", ms(r->residual_ns));
	for (int k = 0; k < 3; k++)
		ts_table_cell(&t, "%s", "");
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
	if (r->rows.n > (size_t)shown)
		ts_sb_addf(out, "  (%zu more rows in --json)\n", r->rows.n - (size_t)shown);
	ts_sb_addf(out, "  non-* rows show their inclusive time (delta in parentheses); they overlap the * rows\n");

	ts_sb_adds(out, "\nfamilies (the * measure per step)\n");
	ts_table_init(&t);
	ts_table_col(&t, "family", NULL, TS_LEFT, 0);
	ts_table_col(&t, "count/step", "b->c", TS_RIGHT, 0);
	ts_table_col(&t, "baseline", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "candidate", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "delta", "ms", TS_RIGHT, 0);
	for (size_t i = 0; i < r->families.n; i++) {
		const struct ts_diff_family_row *f = &r->families.v[i];
		ts_table_cell(&t, "%s", f->family);
		ts_table_cell(&t, "%.1f->%.1f", f->base_count, f->cand_count);
		ts_table_cell_fixed(&t, ms(f->base_ns), 3);
		ts_table_cell_fixed(&t, ms(f->cand_ns), 3);
		ts_table_cell(&t, "%+.3f", ms(f->delta_ns));
	}
	ts_table_render(&t, out, 2);
	ts_table_release(&t);

	ts_sb_addf(out, "\nop names (CPU ops and annotations, exact): %lld common, %lld added, %lld deleted;"
			" by count per step %lld increased, %lld decreased, %lld unchanged\n",
		   (long long)r->names_common, (long long)r->names_added, (long long)r->names_deleted,
		   (long long)r->names_increased, (long long)r->names_decreased,
		   (long long)r->names_unchanged);
	for (int side = 1; side >= 0; side--) {
		size_t k = 0, tot = 0;
		for (size_t i = 0; i < r->changes.n; i++)
			tot += r->changes.v[i].side == side;
		if (!tot)
			continue;
		ts_sb_addf(out, "%s (%zu names on one side only, by time; ms per step, family):\n",
			   side ? "added in candidate" : "deleted from baseline", tot);
		for (size_t i = 0; i < r->changes.n; i++) {
			const struct ts_diff_change *ch = &r->changes.v[i];
			if (ch->side != side)
				continue;
			if (k++ == (size_t)top) {
				ts_sb_addf(out, "    ... (%zu more in --json)\n", tot - (size_t)top);
				break;
			}
			ts_sb_addf(out, "  %c %-60.120s %9.3f  %s\n", side ? '+' : '-', ch->name, ms(ch->ns),
				   ch->family);
		}
	}
	free(it);
}

/* An iteration, null for a whole-window step (key NULL: an array value). */
static void jiter(struct ts_jw *w, const char *key, int64_t it)
{
	if (key)
		ts_jw_key(w, key);
	if (it == TS_NONE)
		ts_jw_null(w);
	else
		ts_jw_i64(w, it);
}

static void jstat(struct ts_jw *w, const char *key, const struct ts_diff_stat *s, const char *name)
{
	ts_jw_key(w, key);
	if (!name) {
		ts_jw_null(w);
		return;
	}
	ts_jw_obj(w);
	ts_jw_kstr(w, "name", name);
	ts_jw_ki64(w, "count", s->count);
	ts_jw_kf64(w, "count_per_step", s->count_per_step);
	ts_jw_kf64(w, "total_us_per_step", s->total_ns / 1e3);
	ts_jw_kf64(w, "self_us_per_step", s->self_ns / 1e3);
	ts_jw_kf64(w, "mean_us", (double)s->mean_ns / 1e3);
	ts_jw_kf64(w, "p50_us", (double)s->p50_ns / 1e3);
	ts_jw_kf64(w, "p90_us", (double)s->p90_ns / 1e3);
	ts_jw_kf64(w, "gbps", s->gbps);
	ts_jw_obj_end(w);
}

static void jctx(struct ts_jw *w, const char *key, const struct ts_diff_context *c)
{
	ts_jw_key(w, key);
	ts_jw_obj(w);
	ts_jw_kstr(w, "file", c->path);
	ts_jw_ki64(w, "rank", c->rank);
	ts_jw_key(w, "world_size");
	if (c->world_size < 0)
		ts_jw_null(w);
	else
		ts_jw_i64(w, c->world_size);
	ts_jw_kstr(w, "device", c->device);
	ts_jw_kbool(w, "device_assumed", c->device_assumed);
	ts_jw_key(w, "sm_count");
	if (c->sms > 0)
		ts_jw_i64(w, c->sms);
	else
		ts_jw_null(w);
	ts_jw_kstr(w, "vendor", c->vendor);
	ts_jw_kstr(w, "trace_format", c->format);
	ts_jw_kstr(w, "profiler", c->profiler[0] ? c->profiler : NULL);
	ts_jw_kstr(w, "backend", c->backend[0] ? c->backend : NULL);
	ts_jw_kstr(w, "runtime_version", c->runtime[0] ? c->runtime : NULL);
	ts_jw_kstr(w, "driver_version", c->driver[0] ? c->driver : NULL);
	ts_jw_kstr(w, "nccl_version", c->nccl[0] ? c->nccl : NULL);
	ts_jw_kstr(w, "precision", c->precision);
	ts_jw_key(w, "clock_resolution_ns");
	if (c->clock_ns > 0)
		ts_jw_i64(w, c->clock_ns);
	else
		ts_jw_null(w);
	ts_jw_kstr(w, "torch_version", NULL);
	ts_jw_kbool(w, "truncated", c->truncated);
	ts_jw_ki64(w, "steps_dropped", c->steps_dropped);
	ts_jw_kbool(w, "whole_window", c->whole_window);
	ts_jw_obj_end(w);
}

static void render_json(struct ts_sb *out, const struct ts_diff_side *b, const struct ts_diff_side *c,
			const struct ts_diff_hta *hta, const struct ts_diff_tracelens *tl,
			const struct ts_diff_result *r, const struct ts_warnings *warns)
{
	struct ts_jw w;

	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", "trainscope.diff/1");
	ts_jw_key(&w, "context");
	ts_jw_obj(&w);
	jctx(&w, "baseline", &b->ctx);
	jctx(&w, "candidate", &c->ctx);
	ts_jw_kbool(&w, "same_hardware", r->same_hardware);
	ts_jw_key(&w, "differs");
	ts_jw_arr(&w);
	for (int f = 0; f < TS_DCTX_COUNT; f++)
		if (r->context[f] == TS_DCTX_DIFFERS)
			ts_jw_str(&w, ts_diff_ctx_key(f));
	ts_jw_arr_end(&w);
	ts_jw_obj_end(&w);

	ts_jw_key(&w, "steps");
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "aligned_by", r->aligned_by);
	ts_jw_key(&w, "compared");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->pairs.n; i++) {
		const struct ts_diff_step_pair *p = &r->pairs.v[i];
		ts_jw_obj(&w);
		jiter(&w, "baseline_iteration", p->base_iteration);
		jiter(&w, "candidate_iteration", p->cand_iteration);
		ts_jw_kf64(&w, "baseline_us", (double)(p->base_end_ns - p->base_start_ns) / 1e3);
		ts_jw_kf64(&w, "candidate_us", (double)(p->cand_end_ns - p->cand_start_ns) / 1e3);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	for (int side = 0; side < 2; side++) {
		ts_jw_key(&w, side ? "candidate_iterations" : "baseline_iterations");
		ts_jw_arr(&w);
		for (size_t i = 0; i < r->pairs.n; i++)
			jiter(&w, NULL, side ? r->pairs.v[i].cand_iteration : r->pairs.v[i].base_iteration);
		ts_jw_arr_end(&w);
	}
	ts_jw_key(&w, "notes");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->notes.n; i++) {
		const struct ts_diff_step_note *nt = &r->notes.v[i];
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "side", nt->side ? "candidate" : "baseline");
		jiter(&w, "iteration", nt->iteration);
		ts_jw_kf64(&w, "dur_us", (double)nt->dur_ns / 1e3);
		ts_jw_kf64(&w, "robust_z", nt->robust_z);
		ts_jw_kbool(&w, "compared", nt->compared);
		ts_jw_kbool(&w, "outlier", nt->outlier);
		ts_jw_kstr(&w, "wall", ts_diff_wall_name(nt->wall));
		ts_jw_kf64(&w, "wall_excess_us", (double)nt->wall_excess_ns / 1e3);
		ts_jw_kf64(&w, "wall_median_us", (double)nt->wall_median_ns / 1e3);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_kf64(&w, "baseline_mean_us", r->base_mean_ns / 1e3);
	ts_jw_kf64(&w, "candidate_mean_us", r->cand_mean_ns / 1e3);
	ts_jw_kstr(&w, "step_basis", r->step_basis);
	ts_jw_ki64(&w, "basis_steps", (int64_t)r->basis_steps);
	ts_jw_key(&w, "gpu_behind");
	ts_jw_arr(&w);
	for (int side = 0; side < 2; side++)
		if (r->gpu_behind & (1 << side))
			ts_jw_str(&w, side ? "candidate" : "baseline");
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "clock_mismatch");
	ts_jw_arr(&w);
	for (int side = 0; side < 2; side++)
		if (r->clock_mismatch & (1 << side))
			ts_jw_str(&w, side ? "candidate" : "baseline");
	ts_jw_arr_end(&w);
	ts_jw_ki64(&w, "baseline_gpu_steps", (int64_t)r->base_gpu_steps);
	ts_jw_ki64(&w, "candidate_gpu_steps", (int64_t)r->cand_gpu_steps);
	ts_jw_kf64_or_null(&w, "baseline_gpu_step_mean_us", r->base_gpu_mean_ns / 1e3);
	ts_jw_kf64_or_null(&w, "candidate_gpu_step_mean_us", r->cand_gpu_mean_ns / 1e3);
	ts_jw_obj_end(&w);

	ts_jw_key(&w, "ratio");
	ts_jw_obj(&w);
	ts_jw_kf64(&w, "estimate", r->ratio);
	ts_jw_kf64(&w, "ci95_low", r->ci95_low);
	ts_jw_kf64(&w, "ci95_high", r->ci95_high);
	ts_jw_kstr(&w, "method", r->method);
	ts_jw_kf64(&w, "band", r->band);
	ts_jw_obj_end(&w);
	ts_jw_kstr(&w, "verdict", ts_diff_verdict_given(r->verdict));
	ts_jw_kstr(&w, "verdict_reason", ts_diff_verdict_name(r->verdict));

	ts_jw_key(&w, "walls");
	ts_jw_arr(&w);
	for (int i = 0; i < TS_DW_COUNT; i++) {
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "wall", ts_diff_wall_name(i));
		ts_jw_kstr(&w, "within", ts_diff_wall_partitions(i) ? NULL : "idle");
		ts_jw_kfixed_or_null(&w, "baseline_us", r->walls[i].base_ns / 1e3, 3);
		ts_jw_kfixed_or_null(&w, "candidate_us", r->walls[i].cand_ns / 1e3, 3);
		ts_jw_kfixed_or_null(&w, "delta_us", r->walls[i].delta_ns / 1e3, 3);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);

	ts_jw_kstr(&w, "closing_measure", r->closing);
	ts_jw_key(&w, "rows");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->rows.n; i++) {
		const struct ts_diff_row *x = &r->rows.v[i];
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "name", x->base_name ? x->base_name : x->cand_name);
		ts_jw_kstr(&w, "kind", ts_diff_kind_name(x->kind));
		ts_jw_kstr(&w, "family", x->family);
		ts_jw_kstr(&w, "match", ts_diff_match_name(x->match));
		ts_jw_kbool(&w, "closes", x->closes);
		jstat(&w, "baseline", &x->base, x->base_name);
		jstat(&w, "candidate", &x->cand, x->cand_name);
		ts_jw_kfixed_or_null(&w, "delta_us", x->delta_ns / 1e3, 3);
		ts_jw_obj_end(&w);
	}
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "name", "residual");
	ts_jw_kstr(&w, "kind", "residual");
	ts_jw_kbool(&w, "closes", 1);
	ts_jw_kfixed_or_null(&w, "delta_us", r->residual_ns / 1e3, 3);
	ts_jw_obj_end(&w);
	ts_jw_arr_end(&w);
	ts_jw_kf64(&w, "unmatched_pct", 100 * r->unmatched_frac);

	ts_jw_key(&w, "families");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->families.n; i++) {
		const struct ts_diff_family_row *f = &r->families.v[i];
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "family", f->family);
		ts_jw_kf64(&w, "baseline_count_per_step", f->base_count);
		ts_jw_kf64(&w, "candidate_count_per_step", f->cand_count);
		ts_jw_kfixed_or_null(&w, "baseline_us", f->base_ns / 1e3, 3);
		ts_jw_kfixed_or_null(&w, "candidate_us", f->cand_ns / 1e3, 3);
		ts_jw_kfixed_or_null(&w, "delta_us", f->delta_ns / 1e3, 3);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "op_names");
	ts_jw_obj(&w);
	ts_jw_ki64(&w, "common", r->names_common);
	ts_jw_ki64(&w, "added", r->names_added);
	ts_jw_ki64(&w, "deleted", r->names_deleted);
	ts_jw_ki64(&w, "increased", r->names_increased);
	ts_jw_ki64(&w, "decreased", r->names_decreased);
	ts_jw_ki64(&w, "unchanged", r->names_unchanged);
	ts_jw_obj_end(&w);
	ts_jw_key(&w, "changes");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->changes.n; i++) {
		const struct ts_diff_change *ch = &r->changes.v[i];
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "family", ch->family);
		ts_jw_kstr(&w, "name", ch->name);
		ts_jw_kstr(&w, "change", ch->side ? "added" : "deleted");
		ts_jw_kf64(&w, "us_per_step", ch->ns / 1e3);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	if (hta) {
		ts_jw_key(&w, "hta_compat");
		ts_diff_hta_write_json(hta, &w);
	}
	if (tl) {
		ts_jw_key(&w, "tracelens_compat");
		ts_diff_tracelens_write_json(tl, &w);
	}
	ts_warnings_json(&w, warns, warns->v.n);
	ts_jw_obj_end(&w);
	ts_sb_addc(out, '\n');
}

/* ------------------------------------------------------------ compat modes */

/* The whole trace of a side's chosen file, read as trace reads it for its
 * compatibility modes (python spans and flows kept). */
static int load_whole(struct cli_ctx *ctx, const char *path, const char *why, struct ts_trace *t)
{
	struct ts_detect d;
	struct ts_err err;

	ts_err_init(&err);
	if (ts_detect_file(path, &d, &err))
		return cli_fail(ctx, &err);
	if (d.kind == TS_KIND_NSYS_SQLITE) {
		cli_error(ctx, "%s: %s reads PyTorch profiler (Kineto) traces; this is an Nsight Systems export",
			  path, why);
		return EXIT_USAGE;
	}
	if (ts_trace_read(t, path, NULL, &err))
		return cli_fail(ctx, &err);
	return 0;
}

/* The rows that moved most, for the annotated file: the first n rows (they
 * are ranked by contribution), totals over the compared steps. */
static size_t moved_rows(const struct ts_diff_result *r, struct ts_diff_moved *m, size_t n)
{
	size_t k = 0;
	double steps = (double)r->pairs.n;

	for (size_t i = 0; i < r->rows.n && k < n; i++) {
		const struct ts_diff_row *row = &r->rows.v[i];
		double b = row->closes ? row->base.self_ns : row->base.total_ns;
		double c = row->closes ? row->cand.self_ns : row->cand.total_ns;
		m[k].name = row->cand_name ? row->cand_name : row->base_name;
		m[k].baseline_ns = (int64_t)llround(b * steps);
		m[k].candidate_ns = (int64_t)llround(c * steps);
		k++;
	}
	return k;
}

/* ------------------------------------------------------------ command */

static int parse_pair(struct cli_ctx *ctx, const char *opt, const char *what, const char *s,
		      int64_t *a, int64_t *b)
{
	const char *arg = s;
	char *end;
	long long x = strtoll(s, &end, 10), y;

	if (end == s || *end != ':' || x < 0)
		goto bad;
	s = end + 1;
	y = strtoll(s, &end, 10);
	if (end == s || *end || y < 0)
		goto bad;
	*a = x;
	*b = y;
	return 0;
bad:
	cli_error(ctx, "%s: expected A:B (two %s numbers), got '%s'", opt, what, arg);
	return EXIT_USAGE;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_diff_side b, c;
	struct ts_diff_result r;
	struct ts_diff_opts o;
	struct ts_warnings warns;
	struct ts_err err;
	struct ts_sb out;
	struct ts_trace tb, tc;
	struct ts_diff_hta hta;
	struct ts_diff_tracelens tl;
	int hta_on = 0, hta_short = 0, tl_on = 0;
	enum ts_diff_hta_device hta_dev = TS_DIFF_HTA_ALL;
	const char *annotate = NULL;
	int64_t rb = -1, rcand = -1, hib = -1, hic = -1;
	double fail_reg = NAN, max_unm = NAN;
	long long top = 25;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_diff_side_init(&b);
	ts_diff_side_init(&c);
	ts_diff_result_init(&r);
	ts_diff_opts_init(&o);
	ts_warnings_init(&warns);
	ts_err_init(&err);
	ts_sb_init(&out);
	ts_trace_init(&tb);
	ts_trace_init(&tc);
	ts_diff_hta_init(&hta);
	memset(&tl, 0, sizeof(tl));
	for (size_t i = 0; i < p.nopts; i++) {
		const struct cli_arg *a = &p.opts[i];
		double v;
		if (a->key == OPT_RANK && (rc = parse_pair(ctx, "--rank", "rank", a->val, &rb, &rcand)))
			goto out;
		if (a->key == OPT_ALLOW_HW)
			o.allow_different_hardware = 1;
		if (a->key == OPT_FAIL_REG && (rc = cli_double(ctx, a, -100, 1e6, &fail_reg)))
			goto out;
		if (a->key == OPT_MAX_UNMATCHED && (rc = cli_double(ctx, a, 0, 100, &max_unm)))
			goto out;
		if (a->key == OPT_BAND) {
			if ((rc = cli_double(ctx, a, 0, 100, &v)))
				goto out;
			o.band = v / 100;
		}
		if (a->key == OPT_TOP && (rc = cli_int(ctx, a, 0, 100000, &top)))
			goto out;
		if (a->key == OPT_HTA)
			hta_on = 1;
		if (a->key == OPT_HTA_ITER &&
		    (rc = parse_pair(ctx, "--hta-iterations", "ProfilerStep", a->val, &hib, &hic)))
			goto out;
		if (a->key == OPT_HTA_SHORT)
			hta_short = 1;
		if (a->key == OPT_HTA_DEVICE) {
			if (strcmp(a->val, "all") == 0) {
				hta_dev = TS_DIFF_HTA_ALL;
			} else if (strcmp(a->val, "cpu") == 0) {
				hta_dev = TS_DIFF_HTA_CPU;
			} else if (strcmp(a->val, "gpu") == 0) {
				hta_dev = TS_DIFF_HTA_GPU;
			} else {
				cli_error(ctx, "--hta-device: expected all, cpu or gpu, got '%s'", a->val);
				rc = EXIT_USAGE;
				goto out;
			}
		}
		if (a->key == OPT_TRACELENS)
			tl_on = 1;
		if (a->key == OPT_ANNOTATE)
			annotate = a->val;
	}
	if (p.npos != 2) {
		cli_error(ctx, "expected two inputs, BASELINE and CANDIDATE (got %zu)", p.npos);
		fprintf(stderr, "hint: trainscope diff BASE_TRACE|DIR CAND_TRACE|DIR [--rank A:B]\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if ((rc = diff_load_side(ctx, p.pos[0], rb, rb >= 0, &b, &warns)))
		goto out;
	/* the same rank, unless --rank; a single trace is taken as it is */
	if ((rc = diff_load_side(ctx, p.pos[1], rcand >= 0 ? rcand : b.ctx.rank, rcand >= 0, &c,
				 &warns)))
		goto out;
	if (ts_diff_compare(&b, &c, &o, &r, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ts_diff_warnings(&b, &c, &r, &warns)) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	if ((hta_on || tl_on || annotate) &&
	    ((rc = load_whole(ctx, b.ctx.path, hta_on ? "--hta-compat" : tl_on ? "--tracelens-compat" : "--annotate", &tb)) ||
	     (rc = load_whole(ctx, c.ctx.path, hta_on ? "--hta-compat" : tl_on ? "--tracelens-compat" : "--annotate", &tc))))
		goto out;
	if (hta_on) {
		/* one trace per side: the file diff chose; HTA's rank is the one
		 * --rank names, else HTA's default (the trace's own) */
		const struct ts_trace *bp[1] = { &tb }, *cp[1] = { &tc };
		struct ts_diff_hta_side hb = { bp, 1, rb >= 0 ? &rb : NULL, rb >= 0, hib >= 0 ? &hib : NULL, hib >= 0 };
		struct ts_diff_hta_side hc = { cp, 1, rcand >= 0 ? &rcand : NULL, rcand >= 0, hic >= 0 ? &hic : NULL,
					       hic >= 0 };
		if (ts_diff_hta_compare(&hb, &hc, hta_dev, hta_short, &hta, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	}
	if (tl_on && ts_diff_tracelens_compare(&tb, &tc, &tl, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (annotate) {
		struct ts_diff_moved m[16];
		size_t nm = moved_rows(&r, m, sizeof(m) / sizeof(m[0]));
		if (!r.pairs.n) {
			cli_error(ctx, "--annotate: no compared steps to stack");
			rc = EXIT_USAGE;
			goto out;
		}
		if (ts_diff_annotate_write(annotate, &tb, &tc, r.pairs.v, r.pairs.n, m, nm, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	}
	if (ctx->json) {
		render_json(&out, &b, &c, hta_on ? &hta : NULL, tl_on ? &tl : NULL, &r, &warns);
	} else {
		render_text(&out, &b, &c, &r, (int)top);
		if (hta_on) {
			ts_sb_adds(&out, "\nHolisticTraceAnalysis TraceDiff (--hta-compat: HTA's counts and sums by "
				   "name, not trainscope's attribution; docs/diff-compat.md)\n");
			ts_diff_hta_render(&hta, &out);
		}
		if (tl_on) {
			ts_sb_adds(&out, "\nTraceLens gpu_timeline comparison (--tracelens-compat; "
				   "docs/diff-compat.md)\n");
			ts_diff_tracelens_render(&tl, &out);
		}
		/* last, after the compatibility sections, where the reader ends */
		if (warns.v.n && (hta_on || tl_on))
			ts_sb_addc(&out, '\n');
		ts_warnings_text(&out, &warns, warns.v.n, "", "");
	}
	if ((rc = cli_emit(ctx, &out)))
		goto out;
	if (!isnan(fail_reg) && r.host_clock_only)
		cli_warn(ctx, "--fail-on-regression not applied: %s and no compared step"
			 " has a GPU step time on both sides (no-gpu-step-time)", r.clock_mismatch ?
			 "a side's device and host clocks disagree" : "the GPU runs behind the host");
	if (!isnan(fail_reg) && !isnan(r.ci95_low) && r.verdict != TS_DIFF_REFUSED_HARDWARE &&
	    !r.host_clock_only && (r.ci95_low - 1) * 100 > fail_reg) {
		if (fail_reg < 0)
			cli_error(ctx, "no speed-up of %g %%: the CI lower bound of the step-time ratio is %.4f"
				  " (> %.4f)", -fail_reg, r.ci95_low, 1 + fail_reg / 100);
		else
			cli_error(ctx, "regression: the CI lower bound of the step-time ratio is %.4f (> +%g %%)",
				  r.ci95_low, fail_reg);
		rc = EXIT_GATE;
	}
	if (!isnan(max_unm) && 100 * r.unmatched_frac > max_unm) {
		cli_error(ctx, "%.1f %% of the attributed time is in rows on one side only (> %g %%)",
			  100 * r.unmatched_frac, max_unm);
		rc = EXIT_GATE;
	}
out:
	ts_diff_hta_release(&hta);
	ts_trace_release(&tb);
	ts_trace_release(&tc);
	ts_diff_result_release(&r);
	ts_diff_side_release(&b);
	ts_diff_side_release(&c);
	ts_warnings_release(&warns);
	ts_sb_release(&out);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_diff = {
	.name = "diff",
	.stage = STAGE_PROFILE,
	.summary = "Compare two profiler traces: aligned steps, the step-time ratio and what moved",
	.usage = "diff [options] BASELINE CANDIDATE",
	.description =
		"Reads one rank window of each side with trace's reader (Kineto JSON, the legacy\n"
		"array, gzip, ROCm, MUSA, nsys SQLite exports; a directory of rank files: the rank\n"
		"of --rank A:B, default the same rank, else the only trace). Steps are aligned by\n"
		"iteration (legacy ProfilerStep#N = iteration N+1), else by position; steps\n"
		"without a partner and outlier steps are listed with the wall that holds their\n"
		"extra time. The ratio of mean step times gets ab's 95 % CI (paired by iteration,\n"
		"else Welch on logs) and a verdict with the band; one step per side gives no\n"
		"noise estimate. Where a GPU runs behind its host (trace's gpu-behind-host), the\n"
		"GPU's own step times are compared, not the spans, which time the host; without\n"
		"a pair that has one on both sides no verdict is given (no-gpu-step-time).\n"
		"The step difference is split into trace's walls, then into op and kernel rows\n"
		"ranked by their contribution, closing with a residual row, and into kernel\n"
		"families. Different device models refuse a speed verdict unless\n"
		"--allow-different-hardware. Where the sides ran differs (device, vendor, world\n"
		"size, profiler, clock resolution, backend, runtime, driver or NCCL version, as\n"
		"both record them) is marked in the context table and warned (context-differs).\n"
		"Exit 1 for --fail-on-regression / --max-unmatched.\n"
		"--hta-compat adds HTA's TraceDiff (compare_traces / ops_diff), --tracelens-compat\n"
		"TraceLens's gpu_timeline comparison, --annotate FILE a Perfetto file with both\n"
		"sides' compared steps stacked; these read the two chosen traces again in full.\n"
		"docs/diff.md, docs/diff-compat.md.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};

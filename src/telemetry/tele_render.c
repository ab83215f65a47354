/*
 * tele_render.c - the `trainscope.watch/1` JSON object and the text tables
 * of a telemetry analysis, side by side so both show the same facts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/jsonw.h"
#include "trainscope/table.h"
#include "trainscope/telemetry.h"

static void kstr_or_null(struct ts_jw *w, const char *k, const char *s)
{
	ts_jw_key(w, k);
	if (s)
		ts_jw_str(w, s);
	else
		ts_jw_null(w);
}

static void json_reasons(struct ts_jw *w, uint64_t bits)
{
	ts_jw_arr(w);
	for (uint64_t b = 1; b && b <= 0x100; b <<= 1)
		if ((bits & b) && ts_tele_reason_name(b))
			ts_jw_str(w, ts_tele_reason_name(b));
	ts_jw_arr_end(w);
}

/* A finding about one device in several captures: "captures", each GPU
 * it holds for (the finding's own first) with its capture, file, id and
 * sample span, and "captures_total" (more than listed when some did not
 * fit in the finding). */
static void json_same(struct ts_jw *w, const struct ts_telemetry *t,
		      const struct ts_tele_gpu_summary *sum, const struct ts_tele_finding *f)
{
	size_t shown = f->nsame < TS_TELE_SAME_MAX ? f->nsame : TS_TELE_SAME_MAX;

	ts_jw_key(w, "captures");
	ts_jw_arr(w);
	for (size_t i = 0; i <= shown; i++) {
		size_t g = (size_t)(i ? f->same[i - 1] : f->gpu);
		const struct ts_tele_gpu *gp = &t->gpus.v[g];
		ts_jw_obj(w);
		ts_jw_ki64(w, "capture", gp->capture);
		kstr_or_null(w, "file", gp->file);
		ts_jw_kstr(w, "gpu", gp->id);
		ts_jw_key(w, "first_unix_ns");
		if (sum[g].first_ns == TS_NO_TIME)
			ts_jw_null(w);
		else
			ts_jw_i64(w, sum[g].first_ns);
		ts_jw_key(w, "last_unix_ns");
		if (sum[g].last_ns == TS_NO_TIME)
			ts_jw_null(w);
		else
			ts_jw_i64(w, sum[g].last_ns);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
	ts_jw_ki64(w, "captures_total", (int64_t)(1 + f->nsame));
}

void ts_tele_render_json(struct ts_sb *out, const struct ts_telemetry *t,
			 const struct ts_tele_gpu_summary *sum, const struct ts_tele_step *steps,
			 size_t nsteps, const struct ts_tele_finding *f, size_t nf,
			 const struct ts_tele_dropped *dropped, int exit_code, int child_signal)
{
	struct ts_jw w;
	int multi = ts_tele_multi_capture(t);

	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", "trainscope.watch/1");
	ts_jw_kstr(&w, "source", t->source ? t->source : ts_tele_format_name(t->format));
	ts_jw_kstr(&w, "fidelity", t->fidelity ? t->fidelity : "text-capture");
	kstr_or_null(&w, "tool_version", t->tool_version);
	kstr_or_null(&w, "driver_version", t->driver_version);
	ts_jw_key(&w, "interval_ms");
	if (t->interval_ns > 0)
		ts_jw_f64(&w, (double)t->interval_ns / 1e6);
	else
		ts_jw_null(&w);
	if (t->gpus_attached >= 0)
		ts_jw_ki64(&w, "gpus_attached", t->gpus_attached);
	if (exit_code >= 0 || child_signal > 0) {
		ts_jw_key(&w, "command");
		ts_jw_obj(&w);
		ts_jw_ki64(&w, "exit_code", exit_code);
		ts_jw_ki64(&w, "signal", child_signal);
		ts_jw_obj_end(&w);
		ts_jw_key(&w, "overhead");
		ts_jw_obj(&w);
		ts_jw_kf64_or_null(&w, "sampler_cpu_pct", t->sampler_cpu_pct);
		ts_jw_kf64_or_null(&w, "sampler_call_us", t->sampler_call_us);
		ts_jw_obj_end(&w);
	}
	ts_jw_key(&w, "gpus");
	ts_jw_arr(&w);
	for (size_t g = 0; g < t->gpus.n; g++) {
		const struct ts_tele_gpu *gp = &t->gpus.v[g];
		const struct ts_tele_gpu_summary *s = &sum[g];
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "id", gp->id);
		if (multi) {
			ts_jw_ki64(&w, "capture", gp->capture);
			kstr_or_null(&w, "file", gp->file);
		}
		kstr_or_null(&w, "name", gp->name);
		if (gp->bus_id)
			ts_jw_kstr(&w, "bus_id", gp->bus_id);
		if (gp->uuid)
			ts_jw_kstr(&w, "uuid", gp->uuid);
		if (gp->host)
			ts_jw_kstr(&w, "host", gp->host);
		if (multi) {
			ts_jw_ki64(&w, "device", gp->device);
			kstr_or_null(&w, "matched_by", gp->matched_by);
		}
		ts_jw_ki64(&w, "samples", (int64_t)s->samples);
		ts_jw_key(&w, "fields");
		ts_jw_obj(&w);
		for (int k = 0; k < TS_TF_COUNT; k++) {
			const struct ts_tele_stat *st = &s->f[k];
			if (k == TS_TF_EVENT_REASONS || st->state == TS_TV_ABSENT)
				continue;
			ts_jw_key(&w, ts_tf_name(k));
			ts_jw_obj(&w);
			if (st->state == TS_TV_UNSUPPORTED) {
				ts_jw_kstr(&w, "unsupported", gp->unsupported_why[k] ?
					   gp->unsupported_why[k] : "device");
			} else {
				ts_jw_kf64_or_null(&w, "mean", st->n ? st->mean : NAN);
				ts_jw_kf64_or_null(&w, "min", st->n ? st->min : NAN);
				ts_jw_kf64_or_null(&w, "max", st->n ? st->max : NAN);
				ts_jw_ki64(&w, "values", (int64_t)st->n);
				ts_jw_ki64(&w, "missing", (int64_t)st->missing);
			}
			ts_jw_kstr(&w, "unit", ts_tf_unit(k));
			ts_jw_obj_end(&w);
		}
		ts_jw_obj_end(&w);
		if (s->f[TS_TF_EVENT_REASONS].n) {
			ts_jw_key(&w, "clock_event_reasons_seen");
			json_reasons(&w, s->reasons_seen);
		}
		ts_jw_kf64_or_null(&w, "energy_j", s->energy_j);
		kstr_or_null(&w, "energy_method", s->energy_method);
		ts_jw_kf64_or_null(&w, "energy_covered_s", s->energy_covered_s);
		ts_jw_kf64(&w, "gap_s", s->gap_s);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	if (t->straggler.n) {
		ts_jw_key(&w, "straggler_reports");
		ts_jw_arr(&w);
		for (size_t i = 0; i < t->straggler.n; i++) {
			const struct ts_straggler_line *l = &t->straggler.v[i];
			ts_jw_obj(&w);
			ts_jw_ki64(&w, "line", l->line);
			if (l->t_ns != TS_NO_TIME)
				ts_jw_ki64(&w, "t_unix_ns", l->t_ns);
			if (l->list_kind) {
				ts_jw_kstr(&w, "list", l->list_kind);
				ts_jw_key(&w, "etpt_tflops");
				ts_jw_arr(&w);
				for (int k = 0; k < l->nlist; k++) {
					ts_jw_obj(&w);
					ts_jw_ki64(&w, "rank", l->list_rank[k]);
					ts_jw_kf64(&w, "value", l->list_v[k]);
					ts_jw_obj_end(&w);
				}
				ts_jw_arr_end(&w);
			}
			for (int k = 0; k < l->nstat; k++) {
				const struct ts_straggler_stat *s = &l->stat[k];
				char key[32];
				snprintf(key, sizeof(key), "%s", s->metric);
				ts_jw_key(&w, key);
				ts_jw_obj(&w);
				ts_jw_kf64_or_null(&w, "min", s->min);
				ts_jw_ki64(&w, "min_rank", s->min_rank);
				ts_jw_kf64_or_null(&w, "max", s->max);
				ts_jw_ki64(&w, "max_rank", s->max_rank);
				ts_jw_kstr(&w, "unit", s->unit ? s->unit : "");
				ts_jw_obj_end(&w);
			}
			ts_jw_obj_end(&w);
		}
		ts_jw_arr_end(&w);
	}
	if (steps) {
		ts_jw_key(&w, "steps");
		ts_jw_arr(&w);
		for (size_t i = 0; i < nsteps; i++) {
			const struct ts_tele_step *r = &steps[i];
			ts_jw_obj(&w);
			ts_jw_ki64(&w, "iteration", r->iteration);
			ts_jw_kstr(&w, "gpu", t->gpus.v[r->gpu].id);
			if (multi)
				ts_jw_ki64(&w, "capture", t->gpus.v[r->gpu].capture);
			ts_jw_ki64(&w, "samples", (int64_t)r->samples);
			ts_jw_kf64_or_null(&w, "power_mean_w", r->power_mean_w);
			ts_jw_kf64_or_null(&w, "power_min_w", r->power_min_w);
			ts_jw_kf64_or_null(&w, "power_max_w", r->power_max_w);
			ts_jw_kf64_or_null(&w, "energy_j", r->energy_j);
			ts_jw_kf64_or_null(&w, "energy_per_token_j", r->energy_per_token_j);
			ts_jw_kf64_or_null(&w, "sm_clock_min_mhz", r->sm_clock_min_mhz);
			ts_jw_kf64_or_null(&w, "util_mean_pct", r->util_mean_pct);
			ts_jw_kf64_or_null(&w, "mem_used_max_mib", r->mem_used_max_mib);
			ts_jw_kf64_or_null(&w, "throttle_share", r->throttle_share);
			ts_jw_kf64_or_null(&w, "covered_s", r->covered_s);
			ts_jw_kf64_or_null(&w, "coverage_pct", 100 * r->coverage);
			ts_jw_obj_end(&w);
		}
		ts_jw_arr_end(&w);
	}
	ts_jw_key(&w, "findings");
	ts_jw_arr(&w);
	for (size_t i = 0; i < nf; i++) {
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "id", f[i].id);
		ts_jw_kstr(&w, "severity", f[i].severity);
		ts_jw_key(&w, "gpu");
		if (f[i].gpu >= 0)
			ts_jw_str(&w, t->gpus.v[f[i].gpu].id);
		else
			ts_jw_null(&w);
		if (multi && f[i].gpu >= 0)
			ts_jw_ki64(&w, "capture", t->gpus.v[f[i].gpu].capture);
		ts_jw_kstr(&w, "message", f[i].msg);
		if (f[i].nsame && f[i].gpu >= 0)
			json_same(&w, t, sum, &f[i]);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	if (dropped && dropped->total) {
		ts_jw_key(&w, "findings_dropped");
		ts_jw_obj(&w);
		for (size_t k = 0; k < dropped->nkind; k++)
			ts_jw_ki64(&w, dropped->id[k], (int64_t)dropped->count[k]);
		ts_jw_obj_end(&w);
	}
	ts_jw_key(&w, "errors");
	ts_jw_arr(&w);
	for (size_t i = 0; i < t->errors.n; i++)
		ts_jw_str(&w, t->errors.v[i]);
	ts_jw_arr_end(&w);
	ts_warnings_json(&w, &t->notes, t->notes.v.n);
	ts_jw_obj_end(&w);
	ts_sb_addc(out, '\n');
}

static void cell_stat(struct ts_table *tb, const struct ts_tele_stat *s, int dec)
{
	if (s->state == TS_TV_UNSUPPORTED)
		ts_table_cell(tb, "unsup");
	else if (!s->n)
		ts_table_cell(tb, s->state == TS_TV_MISSING ? "N/A" : "-");
	else if (s->min == s->max)
		ts_table_cell(tb, "%.*f", dec, s->mean);
	else
		ts_table_cell(tb, "%.*f (%.*f-%.*f)", dec, s->mean, dec, s->min, dec, s->max);
}

void ts_tele_render_text(struct ts_sb *out, const struct ts_telemetry *t,
			 const struct ts_tele_gpu_summary *sum, const struct ts_tele_step *steps,
			 size_t nsteps, const struct ts_tele_finding *f, size_t nf)
{
	struct ts_table tb;
	static const struct { int f; int dec; } cols[] = {
		{ TS_TF_POWER_W, 2 }, { TS_TF_POWER_LIMIT_W, 2 }, { TS_TF_UTIL_PCT, 0 },
		{ TS_TF_MEM_UTIL_PCT, 0 }, { TS_TF_TEMP_C, 0 }, { TS_TF_SM_CLOCK_MHZ, 0 },
		{ TS_TF_MEM_USED_MIB, 0 }, { TS_TF_MEM_TOTAL_MIB, 0 }, { TS_TF_SM_ACTIVE, 3 },
		{ TS_TF_TENSOR_ACTIVE, 3 },
	};
	int show[sizeof(cols) / sizeof(cols[0])];
	int multi = ts_tele_multi_capture(t);
	char lab[160];

	ts_sb_addf(out, "telemetry: %s (%s)", t->source ? t->source : ts_tele_format_name(t->format),
		   t->fidelity ? t->fidelity : "text-capture");
	if (t->tool_version)
		ts_sb_addf(out, ", %s", t->tool_version);
	if (t->driver_version)
		ts_sb_addf(out, ", driver %s", t->driver_version);
	ts_sb_addf(out, ", %zu GPU%s, %zu samples", t->gpus.n, t->gpus.n == 1 ? "" : "s",
		   t->samples.n);
	if (multi)
		ts_sb_addf(out, " from %d captures (a GPU is named with its capture)", t->nfiles);
	ts_sb_addc(out, '\n');
	if (t->gpus.n) {
		ts_table_init(&tb);
		ts_table_col(&tb, "gpu", NULL, TS_LEFT, 0);
		if (multi)
			ts_table_col(&tb, "capture", NULL, TS_LEFT, 0);
		ts_table_col(&tb, "name", NULL, TS_LEFT, 0);
		ts_table_col(&tb, "samples", NULL, TS_RIGHT, 0);
		for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			show[c] = 0;
			for (size_t g = 0; g < t->gpus.n; g++)
				if (sum[g].f[cols[c].f].state != TS_TV_ABSENT)
					show[c] = 1;
			if (show[c])
				ts_table_col(&tb, ts_tf_name(cols[c].f), ts_tf_unit(cols[c].f), TS_RIGHT, 0);
		}
		for (size_t g = 0; g < t->gpus.n; g++) {
			ts_table_cell(&tb, "%s", t->gpus.v[g].id);
			if (multi)
				ts_table_cell(&tb, "%s", t->gpus.v[g].file ? t->gpus.v[g].file : "-");
			ts_table_cell(&tb, "%s", t->gpus.v[g].name ? t->gpus.v[g].name : "-");
			ts_table_cell_i64(&tb, (long long)sum[g].samples);
			for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
				if (show[c])
					cell_stat(&tb, &sum[g].f[cols[c].f], cols[c].dec);
		}
		ts_table_render(&tb, out, 2);
		ts_table_release(&tb);
		ts_sb_adds(out, "  (mean, and min-max when they differ; unsup = the device or library "
			   "cannot report it; N/A = no value in any sample)\n");
		for (size_t g = 0; g < t->gpus.n; g++)
			if (isfinite(sum[g].energy_j) && sum[g].gap_s > 0)
				ts_sb_addf(out, "  %s energy: %.1f J (%s over %.1f s; %.1f s of sample "
					   "gaps left out)\n", ts_tele_gpu_label(t, g, 0, lab, sizeof(lab)),
					   sum[g].energy_j,
					   sum[g].energy_method, sum[g].energy_covered_s, sum[g].gap_s);
			else if (isfinite(sum[g].energy_j))
				ts_sb_addf(out, "  %s energy: %.1f J (%s)\n",
					   ts_tele_gpu_label(t, g, 0, lab, sizeof(lab)),
					   sum[g].energy_j, sum[g].energy_method);
	}
	/* one device in several captures: named once per line, at its first
	 * GPU (nxt[g]: the next GPU of g's device, SIZE_MAX none; head[d]:
	 * device d's first GPU) */
	size_t ng = t->gpus.n, *nxt = multi ? malloc(2 * (ng ? ng : 1) * sizeof(*nxt)) : NULL;
	size_t *head = nxt ? nxt + ng : NULL;
	if (multi && !nxt)
		ts_sb_adds(out, "  same GPU in several captures: not listed (out of memory)\n");
	for (size_t d = 0; nxt && d < ng; d++)
		head[d] = SIZE_MAX;
	for (size_t g = ng; nxt && g-- > 0;) {
		size_t d = (size_t)t->gpus.v[g].device < ng ? (size_t)t->gpus.v[g].device : g;
		nxt[g] = head[d];
		head[d] = g;
	}
	for (size_t g = 0; nxt && g < ng; g++) {
		size_t d = (size_t)t->gpus.v[g].device < ng ? (size_t)t->gpus.v[g].device : g;
		int by_uuid = 0, by_bus = 0;
		if (!t->gpus.v[g].matched_by || head[d] != g)
			continue;
		ts_sb_addf(out, "  same GPU in several captures:");
		for (size_t h = g; h != SIZE_MAX; h = nxt[h]) {
			ts_sb_addf(out, "%s %s", h == g ? "" : " =",
				   ts_tele_gpu_label(t, h, 0, lab, sizeof(lab)));
			by_uuid |= t->gpus.v[h].matched_by && !strcmp(t->gpus.v[h].matched_by, "uuid");
			by_bus |= t->gpus.v[h].matched_by && !strcmp(t->gpus.v[h].matched_by, "bus_id");
		}
		ts_sb_addf(out, " (by %s)\n", by_uuid && by_bus ? "uuid and PCI bus id" :
			   by_uuid ? "uuid" : "PCI bus id");
	}
	free(nxt);
	for (size_t i = 0; i < t->straggler.n; i++) {
		const struct ts_straggler_line *l = &t->straggler.v[i];
		ts_sb_addf(out, "straggler report, line %lld:", (long long)l->line);
		if (l->list_kind) {
			ts_sb_addf(out, " %s Etpt", l->list_kind);
			for (int k = 0; k < l->nlist; k++)
				ts_sb_addf(out, " %.2f TF/rank %d", l->list_v[k], l->list_rank[k]);
		}
		for (int k = 0; k < l->nstat; k++)
			ts_sb_addf(out, " %s %.6g-%.6g %s (ranks %d, %d)%s", l->stat[k].metric,
				   l->stat[k].min, l->stat[k].max, l->stat[k].unit ? l->stat[k].unit : "",
				   l->stat[k].min_rank, l->stat[k].max_rank, k + 1 < l->nstat ? ";" : "");
		ts_sb_addc(out, '\n');
	}
	if (steps && nsteps) {
		ts_table_init(&tb);
		ts_table_col(&tb, "iteration", NULL, TS_RIGHT, 0);
		ts_table_col(&tb, "gpu", NULL, TS_LEFT, 0);
		if (multi)
			ts_table_col(&tb, "capture", NULL, TS_LEFT, 0);
		ts_table_col(&tb, "samples", NULL, TS_RIGHT, 0);
		ts_table_col(&tb, "covered", "%", TS_RIGHT, 0);
		ts_table_col(&tb, "power", "W", TS_RIGHT, 0);
		ts_table_col(&tb, "energy", "J", TS_RIGHT, 0);
		ts_table_col(&tb, "util", "%", TS_RIGHT, 0);
		ts_table_col(&tb, "sm clock min", "MHz", TS_RIGHT, 0);
		ts_table_col(&tb, "mem peak", "MiB", TS_RIGHT, 0);
		for (size_t i = 0; i < nsteps; i++) {
			const struct ts_tele_step *r = &steps[i];
			ts_table_cell_i64(&tb, (long long)r->iteration);
			ts_table_cell(&tb, "%s", t->gpus.v[r->gpu].id);
			if (multi)
				ts_table_cell(&tb, "%s", t->gpus.v[r->gpu].file ? t->gpus.v[r->gpu].file : "-");
			ts_table_cell_i64(&tb, (long long)r->samples);
#define CELL(v, d) (isfinite(v) ? ts_table_cell(&tb, "%.*f", (d), (v)) : ts_table_cell(&tb, "-"))
			CELL(100 * r->coverage, 0);
			CELL(r->power_mean_w, 1);
			CELL(r->energy_j, 2);
			CELL(r->util_mean_pct, 0);
			CELL(r->sm_clock_min_mhz, 0);
			CELL(r->mem_used_max_mib, 0);
#undef CELL
		}
		ts_sb_adds(out, "per step:\n");
		ts_table_render(&tb, out, 2);
		ts_table_release(&tb);
	}
	for (size_t i = 0; i < t->errors.n; i++)
		ts_sb_addf(out, "tool error: %s\n", t->errors.v[i]);
	if (nf) {
		ts_sb_adds(out, "findings:\n");
		for (size_t i = 0; i < nf; i++)
			ts_sb_addf(out, "  [%s] %s: %s\n", f[i].severity, f[i].id, f[i].msg);
	} else {
		ts_sb_adds(out, "findings: none\n");
	}
	ts_warnings_text(out, &t->notes, t->notes.v.n, "", "");
}

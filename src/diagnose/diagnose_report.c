/*
 * diagnose_report.c - a diagnosis as output: the report model (HTML and
 * Markdown come from it) and the trainscope.diagnose/1 JSON object.
 *
 * Kept apart from the decision rules so that the verdict code never
 * formats, and so that the report can show everything diagnose knows even
 * where the verdict did not need it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "trainscope/diagnose.h"
#include "trainscope/jsonw.h"

static const struct ts_diag_rank_steps *report_rank(const struct ts_diag *d)
{
	return d->ranks.n ? &d->ranks.v[d->ranks.n - 1] : NULL;
}

static int is_stall(const struct ts_diag *d, int64_t it)
{
	for (size_t i = 0; i < d->steady.stalls.n; i++)
		if (d->steady.stalls.v[i] == it)
			return 1;
	return 0;
}

static void facts(const struct ts_diag *d, struct ts_report *r)
{
	const struct ts_diag_steady *s = &d->steady;

	if (s->known) {
		char v[64], n[160];
		snprintf(v, sizeof(v), "%.1f ms", s->mean_ms);
		snprintf(n, sizeof(n), "95%% CI [%.1f, %.1f] ms (%s), iterations %lld-%lld, n=%zu, median %.1f ms",
			 s->ci_lo_ms, s->ci_hi_ms, s->ci_method[0] ? s->ci_method : "?",
			 (long long)s->first, (long long)s->last, s->n, s->median_ms);
		ts_report_add_fact(r, "steady step time", v, n);
		snprintf(v, sizeof(v), "%zu", s->stalls.n);
		if (s->stall_period)
			snprintf(n, sizeof(n), "every %zu iterations", s->stall_period);
		ts_report_add_fact(r, "stalls", v, s->stall_period ? n : NULL);
	}
	if (isfinite(d->rate.tokens_per_s)) {
		char v[64];
		snprintf(v, sizeof(v), "%.0f tokens/s", d->rate.tokens_per_s);
		ts_report_add_fact(r, "throughput", v, "all ranks, steady window");
	}
	if (isfinite(d->rate.tflops_per_gpu)) {
		char v[64];
		snprintf(v, sizeof(v), "%.3f TFLOP/s/GPU", d->rate.tflops_per_gpu);
		ts_report_add_fact(r, "model FLOP rate", v, d->rate.model_name);
	}
	if (isfinite(d->rate.mfu_pct)) {
		char v[64];
		snprintf(v, sizeof(v), "%.1f %%", d->rate.mfu_pct);
		ts_report_add_fact(r, "MFU", v, d->rate.peak_name);
	}
	if (isfinite(d->rate.hfu_pct)) {
		char v[64];
		snprintf(v, sizeof(v), "%.1f %%", d->rate.hfu_pct);
		ts_report_add_fact(r, "HFU", v, d->rate.peak_name);
	}
	if (d->straggler_rank >= 0) {
		char v[64], n[96];
		snprintf(v, sizeof(v), "rank %lld", (long long)d->straggler_rank);
		snprintf(n, sizeof(n), "others wait %.1f ms per step", d->straggler_excess_ms);
		ts_report_add_fact(r, "straggler", v, n);
	}
	{
		char v[64];
		snprintf(v, sizeof(v), "%zu rank%s, %zu trace%s", d->ranks.n, d->ranks.n == 1 ? "" : "s",
			 d->traces.n, d->traces.n == 1 ? "" : "s");
		ts_report_add_fact(r, "evidence", v, ts_diag_vendor_name(ts_diag_vendor(d)));
	}
}

static void items(struct ts_report *r, int which, const struct ts_diag_item *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ts_report_add_item(r, which, v[i].level, v[i].title, v[i].detail);
}

int ts_diag_to_report(const struct ts_diag *d, struct ts_report *r)
{
	const struct ts_diag_rank_steps *rs = report_rank(d);

	r->title = ts_report_printf(r, "trainscope diagnose: %s", d->in.run ? d->in.run : "run");
	r->subtitle = ts_report_printf(r, "%zu log, %zu metrics, %zu trace, %zu config file(s)%s%s",
				       d->in.logs.n, d->in.metrics.n, d->in.traces.n, d->in.configs.n,
				       d->in.steps_source ? "; steps from " : "",
				       d->in.steps_source ? d->in.steps_source : "");
	if (d->wall != TS_WALL_UNKNOWN || d->evidence.n) {
		if (isfinite(d->wall_share_pct))
			r->wall = ts_report_printf(r, "%s (%.1f %% of the step)", ts_wall_name(d->wall),
						   d->wall_share_pct);
		else
			r->wall = ts_report_strdup(r, ts_wall_name(d->wall));
		r->wall_basis = ts_report_strdup(r, d->wall_basis);
	}
	facts(d, r);
	items(r, TS_REPORT_EVIDENCE, d->evidence.v, d->evidence.n);
	items(r, TS_REPORT_FINDINGS, d->findings.v, d->findings.n);
	items(r, TS_REPORT_MISSING, d->missing.v, d->missing.n);
	items(r, TS_REPORT_ADVICE, d->advice.v, d->advice.n);
	if (rs) {
		for (size_t i = 0; i < rs->steps.n; i++) {
			const struct ts_diag_step *s = &rs->steps.v[i];
			int flag = is_stall(d, s->iteration) ? TS_REPORT_STEP_STALL :
				   d->steady.known && s->iteration < d->steady.first ? TS_REPORT_STEP_EXCLUDED :
				   TS_REPORT_STEP_NORMAL;
			ts_report_add_step(r, s->iteration, s->step_ms, flag);
		}
		if (d->steady.known) {
			r->window_first = d->steady.first;
			r->window_last = d->steady.last;
		}
		r->steps_source = ts_report_printf(r, "%s, rank %lld",
						   d->in.steps_source ? d->in.steps_source : "log",
						   (long long)rs->rank);
	}
	/* per-step classes of the first trace: device classes when present,
	 * else the CPU view (data-loader, collectives, the rest) */
	if (d->traces.n) {
		const struct ts_diag_trace *t = &d->traces.v[0];
		int device = t->steps.n && t->steps.v[0].cls_ns[0] >= 0;
		for (size_t k = 0; k < t->steps.n; k++) {
			const struct ts_diag_tstep *s = &t->steps.v[k];
			double ms[TS_REPORT_NCLASS];
			char label[32];
			snprintf(label, sizeof(label), "iter %lld", (long long)s->iteration);
			if (device) {
				for (int c = 0; c < TS_REPORT_NCLASS; c++)
					ms[c] = s->cls_ns[c] >= 0 ? (double)s->cls_ns[c] / 1e6 : 0;
			} else {
				double data = s->data_ns > 0 ? (double)s->data_ns / 1e6 : 0;
				double comm = s->comm_ns > 0 ? (double)s->comm_ns / 1e6 : 0;
				double dur = (double)s->dur_ns / 1e6;
				ms[TS_REPORT_COMM_EXPOSED] = comm;
				ms[TS_REPORT_MEMCPY] = 0;
				ms[TS_REPORT_IDLE] = data;
				ms[TS_REPORT_COMPUTE] = dur - comm - data > 0 ? dur - comm - data : 0;
			}
			ts_report_add_stack(r, label, ms);
		}
		r->stacks_title = ts_report_printf(r, device ?
			"rank %lld, device timeline per profiled step" :
			"rank %lld, CPU-only trace: compute = operators, communication = collective spans, "
			"idle = waiting for the data loader", (long long)t->rank);
		for (size_t k = 0; k < t->kernels.n && k < 20; k++) {
			int64_t tot = 0;
			for (size_t j = 0; j < t->kernels.n; j++)
				tot += t->kernels.v[j].total_ns;
			ts_report_add_kernel(r, t->kernels.v[k].name, t->kernels.v[k].count,
					     (double)t->kernels.v[k].total_ns / 1e6,
					     tot > 0 ? 100.0 * (double)t->kernels.v[k].total_ns / (double)tot : NAN);
		}
		r->kernels_basis = ts_report_printf(r, "rank %lld, %s by total time in the trace window",
						    (long long)t->rank, t->kernels_kind ? t->kernels_kind : "kernels");
	}
	/* per-rank comparison: traces when there are several, else logs */
	if (d->traces.n > 1) {
		for (size_t i = 0; i < d->traces.n; i++) {
			const struct ts_diag_trace *t = &d->traces.v[i];
			struct ts_report_rank row = { t->rank, 0, 0, 0, 0, t->rank == d->straggler_rank };
			size_t n = 0;
			for (size_t k = 0; k < t->steps.n; k++) {
				const struct ts_diag_tstep *s = &t->steps.v[k];
				double comm = s->comm_ns > 0 ? (double)s->comm_ns / 1e6 : 0;
				row.step_ms += (double)s->dur_ns / 1e6;
				row.comm_ms += comm;
				row.other_ms += s->data_ns > 0 ? (double)s->data_ns / 1e6 : 0;
				n++;
			}
			if (!n)
				continue;
			row.step_ms /= (double)n;
			row.comm_ms /= (double)n;
			row.other_ms /= (double)n;
			row.compute_ms = row.step_ms - row.comm_ms - row.other_ms;
			if (row.compute_ms < 0)
				row.compute_ms = 0;
			ts_report_add_rank(r, &row);
		}
	} else if (d->ranks.n > 1) {
		for (size_t i = 0; i < d->ranks.n; i++) {
			const struct ts_diag_rank_steps *k = &d->ranks.v[i];
			struct ts_report_rank row = { k->rank, 0, NAN, NAN, NAN, k->rank == d->straggler_rank };
			size_t n = 0;
			for (size_t j = 0; j < k->steps.n; j++) {
				const struct ts_diag_step *s = &k->steps.v[j];
				if (!isfinite(s->step_ms) || is_stall(d, s->iteration) ||
				    (d->steady.known && (s->iteration < d->steady.first || s->iteration > d->steady.last)))
					continue;
				row.step_ms += s->step_ms;
				n++;
			}
			row.step_ms = n ? row.step_ms / (double)n : NAN;
			ts_report_add_rank(r, &row);
		}
	}
	return r->failed ? TS_ENOMEM : 0;
}

static void json_items(struct ts_jw *w, const char *key, const struct ts_diag_item *v, size_t n,
		       int candidate)
{
	ts_jw_key(w, key);
	ts_jw_arr(w);
	for (size_t i = 0; i < n; i++) {
		ts_jw_obj(w);
		ts_jw_kstr(w, "title", v[i].title);
		ts_jw_kstr(w, "detail", v[i].detail);
		if (candidate)
			ts_jw_kstr(w, "status", "candidate: test with trainscope ab");
		else
			ts_jw_kstr(w, "level", v[i].level == TS_REPORT_BAD ? "bad" :
				   v[i].level == TS_REPORT_WARN ? "warn" : "info");
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
}

static void json_num(struct ts_jw *w, const char *key, double v, int decimals)
{
	ts_jw_key(w, key);
	if (isfinite(v))
		ts_jw_fixed(w, v, decimals);
	else
		ts_jw_null(w);
}

static void json_files(struct ts_jw *w, const char *key, char *const *v, size_t n)
{
	ts_jw_key(w, key);
	ts_jw_arr(w);
	for (size_t i = 0; i < n; i++)
		ts_jw_str(w, v[i]);
	ts_jw_arr_end(w);
}

void ts_diag_json(const struct ts_diag *d, struct ts_sb *out)
{
	struct ts_jw w;
	const struct ts_diag_steady *s = &d->steady;

	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", "trainscope.diagnose/1");
	ts_jw_kstr(&w, "run", d->in.run);
	ts_jw_key(&w, "inputs");
	ts_jw_obj(&w);
	json_files(&w, "logs", d->in.logs.v, d->in.logs.n);
	json_files(&w, "metrics", d->in.metrics.v, d->in.metrics.n);
	json_files(&w, "traces", d->in.traces.v, d->in.traces.n);
	json_files(&w, "configs", d->in.configs.v, d->in.configs.n);
	json_files(&w, "telemetry", d->in.telemetry.v, d->in.telemetry.n);
	json_files(&w, "contracts", d->in.contracts.v, d->in.contracts.n);
	ts_jw_kstr(&w, "steps_source", d->in.steps_source);
	ts_jw_obj_end(&w);
	ts_jw_kstr(&w, "vendor", ts_diag_vendor_name(ts_diag_vendor(d)));

	ts_jw_key(&w, "step_time_ms");
	if (s->known) {
		ts_jw_obj(&w);
		ts_jw_ki64(&w, "window_first", s->first);
		ts_jw_ki64(&w, "window_last", s->last);
		ts_jw_ki64(&w, "n", (int64_t)s->n);
		json_num(&w, "mean", s->mean_ms, 3);
		json_num(&w, "median", s->median_ms, 3);
		json_num(&w, "ci95_lo", s->ci_lo_ms, 3);
		json_num(&w, "ci95_hi", s->ci_hi_ms, 3);
		ts_jw_kstr(&w, "ci_method", s->ci_method);
		json_num(&w, "cv_pct", 100 * s->cv, 2);
		ts_jw_obj_end(&w);
	} else {
		ts_jw_null(&w);
	}
	ts_jw_key(&w, "stalls");
	ts_jw_obj(&w);
	ts_jw_key(&w, "iterations");
	ts_jw_arr(&w);
	for (size_t i = 0; i < s->stalls.n; i++)
		ts_jw_i64(&w, s->stalls.v[i]);
	ts_jw_arr_end(&w);
	ts_jw_ki64(&w, "period_iterations", (int64_t)s->stall_period);
	ts_jw_obj_end(&w);

	ts_jw_key(&w, "throughput");
	ts_jw_obj(&w);
	json_num(&w, "tokens_per_s", d->rate.tokens_per_s, 1);
	json_num(&w, "model_tflops_per_gpu", d->rate.tflops_per_gpu, 4);
	json_num(&w, "mfu_pct", d->rate.mfu_pct, 2);
	json_num(&w, "hfu_pct", d->rate.hfu_pct, 2);
	ts_jw_kstr(&w, "peak", d->rate.peak_name);
	ts_jw_obj_end(&w);

	ts_jw_key(&w, "wall");
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "dominant", ts_wall_name(d->wall));
	ts_jw_kstr(&w, "basis", d->wall_basis);
	json_num(&w, "share_pct", d->wall_share_pct, 2);
	json_items(&w, "evidence", d->evidence.v, d->evidence.n, 0);
	ts_jw_obj_end(&w);

	ts_jw_key(&w, "straggler");
	if (d->straggler_rank >= 0) {
		ts_jw_obj(&w);
		ts_jw_ki64(&w, "rank", d->straggler_rank);
		json_num(&w, "wait_ms", d->straggler_excess_ms, 3);
		ts_jw_obj_end(&w);
	} else {
		ts_jw_null(&w);
	}
	json_items(&w, "findings", d->findings.v, d->findings.n, 0);
	json_items(&w, "missing", d->missing.v, d->missing.n, 0);
	json_items(&w, "advice", d->advice.v, d->advice.n, 1);
	ts_jw_obj_end(&w);
	ts_sb_addc(out, '\n');
}

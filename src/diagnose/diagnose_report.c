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
#include <stdlib.h>
#include <string.h>
#include "trainscope/diagnose.h"
#include "trainscope/jsonw.h"
#include "trainscope/table.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* ts_diag_analyse() sorted the stalls. */
static int is_stall(const struct ts_diag *d, int64_t it)
{
	return d->steady.stalls.n &&
	       bsearch(&it, d->steady.stalls.v, d->steady.stalls.n, sizeof(it), cmp_i64) != NULL;
}

/* Below TS_STEADY_MIN_STEPS the window is no steady state (the few-steps
 * warning): its mean is called "step time", and why it has no CI. */
static int few_steps(const struct ts_diag_steady *s)
{
	return s->n < TS_STEADY_MIN_STEPS;
}

static const char *no_ci_why(const struct ts_diag_steady *s)
{
	return few_steps(s) ? "fewer than 10 steps: no steady window" : "too few steps";
}

/* The step file a rank's series comes from: the first that holds one of
 * its records (several files are several ranks), else the run's first. */
static const char *rank_file(const struct ts_diag *d, int64_t rank)
{
	const struct ts_runmodel *rm = d->rm;

	for (size_t i = 0; rm && i < rm->log.steps.n; i++) {
		const struct ts_step *s = &rm->log.steps.v[i];
		if (s->rank == rank && s->file >= 0 && (size_t)s->file < rm->step_files.n)
			return rm->step_files.v[s->file];
	}
	if (rm && rm->step_files.n > 1)
		for (size_t i = 0; i < rm->log.steps.n; i++) {
			/* unnamed ranks take their file's index (steps.h) */
			const struct ts_step *s = &rm->log.steps.v[i];
			if (s->rank < 0 && s->file >= 0 && (int64_t)s->file == rank &&
			    (size_t)s->file < rm->step_files.n)
				return rm->step_files.v[s->file];
		}
	return d->in.steps_source ? d->in.steps_source : "log";
}

/* What the logged rate is against the model's, into buf: "; +D % off the
 * model's: logged-tflops-mismatch" when the run model raises that
 * warning; when the log counts FLOPs with a formula of its own
 * (ts_run_rate_log_formula), that it is not Megatron's count and what its
 * count gives per step and per GPU over the window (the model FLOP rate
 * and MFU stay Megatron's); else "". */
static const char *logged_off(const struct ts_diag *d, char *buf, size_t size)
{
	const struct ts_run_rate *rt = d->rm ? &d->rm->rate : NULL;
	size_t n = 0;

	buf[0] = '\0';
	if (rt && ts_run_rate_mismatch(d->rm))
		n = (size_t)snprintf(buf, size, "; %+.2f %% off the model's (%s formula): "
				     "logged-tflops-mismatch", 100 * rt->window.diff_signed,
				     ts_formula_name(rt->log_formula));
	if (n < size && rt && rt->log_formula != TS_FORMULA_CURRENT) {
		if (rt->log_flops.per_step > 0 && rt->flops.per_step > 0 &&
		    isfinite(rt->window.model_tflops))
			snprintf(buf + n, size - n, "; not Megatron's FLOP count: %s counts "
				 "%.4g FLOPs per step (%+.1f %% against Megatron's %.4g), %.1f "
				 "TFLOP/s/GPU over the same steps", ts_formula_name(rt->log_formula),
				 rt->log_flops.per_step,
				 100 * (rt->log_flops.per_step / rt->flops.per_step - 1),
				 rt->flops.per_step, rt->window.model_tflops);
		else
			snprintf(buf + n, size - n, "; not Megatron's FLOP count: %s counts its own%s%s",
				 ts_formula_name(rt->log_formula), rt->log_why ? ", not recomputed: " : "",
				 rt->log_why ? rt->log_why : "");
	}
	return buf;
}

/* The HF Trainer summary's whole-run mean (ts_hf_run_mean) in words into
 * buf; 0 when the run's log has none. */
static int hf_run_mean(const struct ts_diag *d, char *buf, size_t cap)
{
	struct ts_hf_run_mean hm;

	if (!d->rm || ts_hf_run_mean(&d->rm->log, &hm) || !isfinite(hm.mean_ms))
		return 0;
	if (hm.steps != TS_NO_INT)
		snprintf(buf, cap, "whole-run mean %.1f ms (the HF Trainer's train_runtime over its "
			 "%lld steps: warm-up, evaluations and checkpoint saves included)", hm.mean_ms,
			 (long long)hm.steps);
	else
		snprintf(buf, cap, "whole-run mean %.1f ms, %.1f-%.1f ms (the HF Trainer's "
			 "train_steps_per_second, rounded to 3 decimals: warm-up, evaluations and "
			 "checkpoint saves included)", hm.mean_ms, hm.low_ms, hm.high_ms);
	return 1;
}

static void facts(const struct ts_diag *d, struct ts_report *r)
{
	const struct ts_diag_steady *s = &d->steady;

	if (s->known) {
		char v[64], n[160];
		snprintf(v, sizeof(v), "%.1f ms", s->mean_ms);
		if (isfinite(s->ci_lo_ms))
			snprintf(n, sizeof(n), "95%% CI [%.1f, %.1f] ms (%s), iterations %lld-%lld, "
				 "n=%zu, median %.1f ms", s->ci_lo_ms, s->ci_hi_ms,
				 s->ci_method[0] ? s->ci_method : "?", (long long)s->first,
				 (long long)s->last, s->n, s->median_ms);
		else
			snprintf(n, sizeof(n), "no CI (%s), iterations %lld-%lld, n=%zu, "
				 "median %.1f ms", no_ci_why(s), (long long)s->first, (long long)s->last,
				 s->n, s->median_ms);
		ts_report_add_fact(r, few_steps(s) ? "step time" : "steady step time", v, n);
		snprintf(v, sizeof(v), "%zu", s->stalls.n);
		if (s->stall_period)
			snprintf(n, sizeof(n), "every %zu iterations", s->stall_period);
		ts_report_add_fact(r, "stalls", v, s->stall_period ? n : NULL);
	} else {
		char n[320];

		if (hf_run_mean(d, n, sizeof(n)))
			ts_report_add_fact(r, "step time", "unknown (no step-time series)", n);
	}
	if (isfinite(d->rate.tokens_per_s)) {
		char v[64];
		snprintf(v, sizeof(v), "%.0f tokens/s", d->rate.tokens_per_s);
		ts_report_add_fact(r, "throughput", v, few_steps(&d->steady) ?
				   "all ranks, fewer than 10 steps: no steady window" :
				   "all ranks, steady window");
	}
	if (isfinite(d->rate.tflops_per_gpu)) {
		char v[64];
		snprintf(v, sizeof(v), "%.3f TFLOP/s/GPU", d->rate.tflops_per_gpu);
		ts_report_add_fact(r, "model FLOP rate", v, d->rate.model_name);
	}
	if (d->have_steps && isfinite(d->steps_rep->tflops_mean)) {
		char v[64], n[600], off[448];
		snprintf(v, sizeof(v), "%.1f TFLOP/s/GPU", d->steps_rep->tflops_mean);
		snprintf(n, sizeof(n), "the training log's own, over the window (FLOPs / time)%s",
			 logged_off(d, off, sizeof(off)));
		ts_report_add_fact(r, "logged FLOP rate", v, n);
	}
	if (isfinite(d->rate.mfu_pct)) {
		char v[64];
		char p[32];
		ts_fmt_pct(p, sizeof(p), d->rate.mfu_pct);
		snprintf(v, sizeof(v), "%s %%", p);
		ts_report_add_fact(r, "MFU", v, d->rate.peak_name);
	}
	if (isfinite(d->rate.hfu_pct)) {
		char v[64];
		char p[32];
		ts_fmt_pct(p, sizeof(p), d->rate.hfu_pct);
		snprintf(v, sizeof(v), "%s %%", p);
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
		snprintf(v, sizeof(v), "%zu trace%s, %zu logged rank%s", d->nprofs, d->nprofs == 1 ? "" : "s",
			 d->ranks.n, d->ranks.n == 1 ? "" : "s");
		ts_report_add_fact(r, "evidence", v, ts_diag_vendor_name(ts_diag_vendor(d)));
	}
	{
		char v[64], n[1200];

		if (ts_runmodel_node_ranks_words(d->rm, n, sizeof(n))) {
			snprintf(v, sizeof(v), "node x %lld + local rank",
				 (long long)d->rm->log.replica_nproc);
			ts_report_add_fact(r, "node ranks", v, n);
		}
	}
}

static void items(struct ts_report *r, int which, const struct ts_diag_item *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ts_report_add_item(r, which, v[i].level, v[i].title, v[i].detail);
}

/* one finding per hang incident (the `trainscope hang` verdict), per
 * straggler of a group that did not hang, and for lags of such groups read
 * on hosts' clocks that could not be aligned */
static void hang_items(const struct ts_diag *d, struct ts_report *r)
{
	const struct ts_hang_result *h = &d->hang_res;
	for (size_t i = 0; i < h->incidents.n; i++) {
		const struct ts_hang_incident *in = &h->incidents.v[i];
		struct ts_sb sb;
		ts_sb_init(&sb);
		ts_sb_adds(&sb, "culprits:");
		for (size_t k = 0; k < in->culprits.n; k++)
			ts_sb_addf(&sb, " %lld", (long long)in->culprits.v[k]);
		if (!in->culprits.n)
			ts_sb_adds(&sb, " none named");
		for (size_t k = 0; k < in->notes.n; k++)
			ts_sb_addf(&sb, "; %s", in->notes.v[k]);
		ts_report_add_item(r, TS_REPORT_FINDINGS, in->cls == TS_HANG_UNDECIDED ? TS_REPORT_WARN : TS_REPORT_BAD,
				   ts_report_printf(r, "distributed hang: %s at seq %lld (%s)",
						    ts_hang_class_name(in->cls), (long long)in->seq,
						    in->op ? in->op : "op unknown"),
				   sb.failed ? NULL : sb.buf);
		ts_sb_release(&sb);
	}
	for (size_t i = 0; i < h->stragglers.n; i++) {
		const struct ts_hang_straggler *z = &h->stragglers.v[i];
		ts_report_add_item(r, TS_REPORT_FINDINGS, TS_REPORT_WARN,
				   ts_report_printf(r, "straggler: rank %lld entered the last collective of a group "
						    "%lld ms after the other members", (long long)z->rank,
						    (long long)z->lag_ms),
				   ts_report_printf(r, "group %s, seq %lld (time_created_ns of the Flight Recorder "
						    "dumps, its clock's offset of %lld ms taken off; %lld ms at the "
						    "group's first seq every member holds); not a hang",
						    z->pg >= 0 && d->hang.pgs.v[z->pg].guid ?
						    d->hang.pgs.v[z->pg].guid : "?", (long long)z->seq,
						    (long long)z->offset_ms, (long long)z->first_lag_ms));
	}
	if (h->clock_finding)
		ts_report_add_item(r, TS_REPORT_FINDINGS, TS_REPORT_WARN,
				   ts_report_printf(r, "Flight Recorder dumps: hosts' clocks could not be aligned"),
				   h->clock_finding);
}

int ts_diag_to_report(const struct ts_diag *d, struct ts_report *r)
{
	const struct ts_diag_rank_steps *rs = ts_diag_series_rank(d);

	r->title = ts_report_printf(r, "trainscope diagnose: %s", d->in.run ? d->in.run : "run");
	r->subtitle = ts_report_printf(r, "%zu log, %zu metrics, %zu trace, %zu config file(s)%s%s",
				       d->in.logs.n, d->in.metrics.n, d->in.traces.n, d->in.configs.n,
				       d->in.steps_source ? "; steps from " : "",
				       d->in.steps_source ? d->in.steps_source : "");
	if (d->wall_known || d->evidence.n) {
		if (!d->wall_known)
			r->wall = ts_report_strdup(r, "undetermined");
		else if (isfinite(d->wall_share_pct))
			r->wall = ts_report_printf(r, "%s (%.1f %% of the step)", ts_wall_name(d->wall),
						   d->wall_share_pct);
		else
			r->wall = ts_report_strdup(r, ts_wall_name(d->wall));
		r->wall_basis = ts_report_strdup(r, d->wall_basis);
	}
	facts(d, r);
	items(r, TS_REPORT_EVIDENCE, d->evidence.v, d->evidence.n);
	items(r, TS_REPORT_FINDINGS, d->findings.v, d->findings.n);
	if (d->hang_done)
		hang_items(d, r);
	items(r, TS_REPORT_MISSING, d->missing.v, d->missing.n);
	items(r, TS_REPORT_ADVICE, d->advice.v, d->advice.n);
	if (d->rm)
		ts_report_add_warnings(r, &d->rm->warnings);   /* r->failed on ENOMEM */
	if (rs) {
		for (size_t i = 0; i < rs->steps.n; i++) {
			const struct ts_diag_step *s = &rs->steps.v[i];
			/* excluded: outside the window, or one of its artefacts
			 * (profiler, export, non-finite loss), as the steps report */
			int flag = is_stall(d, s->iteration) ? TS_REPORT_STEP_STALL :
				   d->steady.known && d->steps_rep &&
				   !ts_steps_in_window(d->steps_rep, s->iteration) ? TS_REPORT_STEP_EXCLUDED :
				   TS_REPORT_STEP_NORMAL;
			ts_report_add_step(r, s->iteration, s->step_ms, flag);
		}
		/* a window of too few steps is shown as steps, never as a
		 * steady window (the few-steps rule of every command) */
		if (d->steady.known && !few_steps(&d->steady)) {
			r->window_first = d->steady.first;
			r->window_last = d->steady.last;
		}
		r->steps_source = ts_report_printf(r, "%s, rank %lld", rank_file(d, rs->rank),
						   (long long)rs->rank);
	}
	/* per-step classes of the first rank window (device classes on a GPU
	 * trace, the main thread's view on a CPU one) */
	if (d->job_done && d->job.n) {
		const struct ts_rank_prof *p = d->job.ranks[0];
		for (size_t k = 0; k < p->steps.n; k++) {
			const struct ts_step_prof *s = &p->steps.v[k];
			double ms[TS_REPORT_NCLASS];
			char label[32];
			snprintf(label, sizeof(label), "iter %lld", (long long)s->step);
			/* the profile's own split of the step, as trace prints it
			 * (profile.h: the four parts add up to the step) */
			ms[TS_REPORT_COMPUTE] = (double)s->compute_ns / 1e6;
			ms[TS_REPORT_COMM_EXPOSED] = (double)s->exposed_comm_ns / 1e6;
			ms[TS_REPORT_MEMCPY] = (double)(s->exposed_memcpy_ns + s->exposed_memset_ns) / 1e6;
			ms[TS_REPORT_IDLE] = (double)s->idle_ns / 1e6;
			ts_report_add_stack(r, label, ms);
		}
		r->stacks_title = ts_report_printf(r, p->has_gpu ?
			"rank %lld, device timeline per profiled step; memcpy = device busy outside compute "
			"and exposed communication; idle = step time with the device idle" :
			"rank %lld, CPU-only trace: compute = operators on the main thread, communication = "
			"waiting in collectives, idle = data loader and untraced host time", (long long)p->rank);
		if (p->top.n) {
			for (size_t k = 0; k < p->top.n; k++)
				ts_report_add_kernel(r, ts_prof_str(p, p->top.v[k].name), p->top.v[k].count,
						     (double)p->top.v[k].total_ns / 1e6,
						     p->busy_ns > 0 ? 100.0 * (double)p->top.v[k].total_ns /
						     (double)p->busy_ns : NAN);
			r->kernels_basis = ts_report_printf(r, "rank %lld, GPU activities by total time; share "
							    "of device busy time", (long long)p->rank);
		}
	}
	/* per-rank comparison: traces when there are several ranks, else logs */
	if (d->job_done && d->job.nranks > 1) {
		for (size_t i = 0; i < d->job.n; i++) {
			const struct ts_rank_prof *p = d->job.ranks[i];
			struct ts_report_rank row = { p->rank, NAN, 0, 0, 0, p->rank == d->straggler_rank };
			size_t n = p->steps.n;
			if (p->window_no || !n)
				continue;
			/* the profile's own split of each step (profile.h: its
			 * parts add up to the step), as the per-step classes
			 * above; other = exposed copies and idle */
			row.step_ms = 0;
			for (size_t k = 0; k < n; k++) {
				const struct ts_step_prof *s = &p->steps.v[k];
				row.step_ms += (double)s->dur_ns;
				row.compute_ms += (double)s->compute_ns;
				row.comm_ms += (double)s->exposed_comm_ns;
				row.other_ms += (double)(s->exposed_memcpy_ns + s->exposed_memset_ns +
							 s->idle_ns);
			}
			row.step_ms /= 1e6 * (double)n;
			row.compute_ms /= 1e6 * (double)n;
			row.comm_ms /= 1e6 * (double)n;
			row.other_ms /= 1e6 * (double)n;
			ts_report_add_rank(r, &row);
		}
	} else if (d->ranks.n > 1 && d->steps_rep) {
		/* the steps report's rank rows: the mean over the window's steps */
		for (size_t i = 0; i < d->steps_rep->nranks; i++) {
			const struct ts_rank_summary *k = &d->steps_rep->ranks[i];
			struct ts_report_rank row = { k->rank, k->mean_ms, NAN, NAN, NAN,
						      k->rank == d->straggler_rank };
			if (k->rank >= 0)
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
	if (d->hang_done)
		json_files(&w, "hang", d->in.hang.v, d->in.hang.n);
	ts_jw_kstr(&w, "steps_source", d->in.steps_source);
	ts_jw_obj_end(&w);
	if (d->hang_done) { /* the trainscope.hang/1 object, present with hang evidence */
		ts_jw_key(&w, "hang");
		ts_hang_jw(&w, &d->hang, &d->hang_res, 0);
	}
	ts_jw_kstr(&w, "vendor", ts_diag_vendor_name(ts_diag_vendor(d)));
	ts_jw_kstr(&w, "moe_evidence", d->moe_evidence);

	/* the run's window, and the steps analysis exactly as `steps --json` */
	if (d->rm)
		ts_window_json(&w, &d->rm->window);
	ts_jw_key(&w, "steps");
	if (d->rm && d->have_steps)
		ts_steps_json(&w, d->rm, 0);
	else
		ts_jw_null(&w);
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
	json_num(&w, "mfu_pct", d->rate.mfu_pct, 4);
	json_num(&w, "hfu_pct", d->rate.hfu_pct, 4);
	ts_jw_kstr(&w, "peak", d->rate.peak_name);
	ts_jw_obj_end(&w);

	ts_jw_key(&w, "wall");
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "dominant", d->wall_known ? ts_wall_name(d->wall) : NULL);
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
	if (d->rm)
		ts_warnings_json(&w, &d->rm->warnings, d->rm->warnings.v.n);
	ts_jw_obj_end(&w);
	ts_sb_addc(out, '\n');
}

/* Item list for the terminal: title, then the detail indented. */
static void text_items(struct ts_sb *o, const char *head, const struct ts_diag_item *v, size_t n,
		       int candidate)
{
	if (!n)
		return;
	ts_sb_addf(o, "\n%s\n", head);
	for (size_t i = 0; i < n; i++) {
		const char *p = v[i].detail;
		ts_sb_addf(o, "  %s %s%s\n", v[i].level == TS_REPORT_BAD ? "!" :
			   v[i].level == TS_REPORT_WARN ? "~" : "-", v[i].title,
			   candidate ? " [candidate: test with trainscope ab]" : "");
		while (p && *p) {
			const char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);
			ts_sb_adds(o, "      ");
			ts_sb_add(o, p, len);
			ts_sb_addc(o, '\n');
			p = nl ? nl + 1 : p + len;
		}
	}
}

void ts_diag_text(const struct ts_diag *d, struct ts_sb *o, int advice_only)
{
	const struct ts_diag_steady *s = &d->steady;
	char v[320];

	if (advice_only) {
		ts_sb_addf(o, "dominant wall: %s\n", d->wall_known ? ts_wall_name(d->wall) : "undetermined");
		if (d->moe_evidence)
			ts_sb_addf(o, "model: mixture of experts (%s); MoE candidates included\n",
				   d->moe_evidence);
		text_items(o, "candidates (each one a hypothesis: test it with `trainscope ab`, one "
			   "variable at a time; none is a default):", d->advice.v, d->advice.n, 0);
		return;
	}
	ts_sb_addf(o, "run: %s\n", d->in.run ? d->in.run : "-");
	ts_sb_addf(o, "inputs: %zu log, %zu metrics, %zu trace, %zu config; vendor %s\n",
		   d->in.logs.n, d->in.metrics.n, d->in.traces.n, d->in.configs.n,
		   ts_diag_vendor_name(ts_diag_vendor(d)));
	{
		char n[1200];

		if (ts_runmodel_node_ranks_words(d->rm, n, sizeof(n)))
			ts_sb_addf(o, "node ranks: node x %lld + local rank; %s\n",
				   (long long)d->rm->log.replica_nproc, n);
	}
	if (s->known && isfinite(s->ci_lo_ms))
		ts_sb_addf(o, "steady step time: %.1f ms, 95%% CI [%.1f, %.1f] ms (%s), median %.1f ms, "
			   "iterations %lld-%lld (n=%zu)\n", s->mean_ms, s->ci_lo_ms, s->ci_hi_ms,
			   s->ci_method[0] ? s->ci_method : "?", s->median_ms, (long long)s->first,
			   (long long)s->last, s->n);
	else if (s->known)
		ts_sb_addf(o, "%s: %.1f ms, no CI (%s), median %.1f ms, iterations %lld-%lld "
			   "(n=%zu)\n", few_steps(s) ? "step time" : "steady step time", s->mean_ms,
			   no_ci_why(s), s->median_ms, (long long)s->first, (long long)s->last, s->n);
	else if (hf_run_mean(d, v, sizeof(v)))
		ts_sb_addf(o, "steady step time: unknown (no step-time series); %s\n", v);
	else
		ts_sb_adds(o, "steady step time: unknown (no step-time series)\n");
	if (isfinite(d->rate.tokens_per_s))
		ts_sb_addf(o, "throughput: %.0f tokens/s\n", d->rate.tokens_per_s);
	if (isfinite(d->rate.tflops_per_gpu))
		ts_sb_addf(o, "model FLOP rate: %.3f TFLOP/s/GPU\n", d->rate.tflops_per_gpu);
	if (d->have_steps && isfinite(d->steps_rep->tflops_mean)) {
		char off[448];
		ts_sb_addf(o, "logged FLOP rate: %.1f TFLOP/s/GPU (the training log's own, over the "
			   "window%s)\n", d->steps_rep->tflops_mean, logged_off(d, off, sizeof(off)));
	}
	if (isfinite(d->rate.mfu_pct)) {
		char p[32];
		ts_fmt_pct(p, sizeof(p), d->rate.mfu_pct);
		ts_sb_addf(o, "MFU: %s %% of %s\n", p, d->rate.peak_name ? d->rate.peak_name : "?");
	}
	if (isfinite(d->rate.hfu_pct)) {
		char p[32];
		ts_fmt_pct(p, sizeof(p), d->rate.hfu_pct);
		ts_sb_addf(o, "HFU: %s %%\n", p);
	}
	ts_sb_addf(o, "\ndominant wall: %s", d->wall_known ? ts_wall_name(d->wall) : "undetermined");
	if (isfinite(d->wall_share_pct))
		ts_sb_addf(o, " (%.1f %% of the step)", d->wall_share_pct);
	if (d->wall_basis)
		ts_sb_addf(o, ", from the %s", d->wall_basis);
	ts_sb_addc(o, '\n');
	text_items(o, "evidence:", d->evidence.v, d->evidence.n, 0);
	text_items(o, "findings:", d->findings.v, d->findings.n, 0);
	text_items(o, "missing evidence:", d->missing.v, d->missing.n, 0);
	if (d->moe_evidence)
		ts_sb_addf(o, "\nmodel: mixture of experts (%s); MoE candidates included\n",
			   d->moe_evidence);
	text_items(o, "candidates for this wall (test each with `trainscope ab`; none is a default):",
		   d->advice.v, d->advice.n, 0);
	if (d->hang_done) {
		ts_sb_addf(o, "\ndistributed hang evidence (%zu file%s, `trainscope hang` on them):\n",
			   d->in.hang.n, d->in.hang.n == 1 ? "" : "s");
		ts_hang_text(&d->hang, &d->hang_res, o);
	}
	if (d->rm && d->rm->warnings.v.n) {
		ts_sb_addc(o, '\n');
		ts_warnings_text(o, &d->rm->warnings, d->rm->warnings.v.n, "", "");
	}
}

/*
 * validate.c - the final check of a winner (flops-memory-workflow 5.2
 * phase 5 and 5.4 items 3-6): long enough, measured on a declared
 * post-warm-up window free of artefacts, healthy, and with the numbers a
 * report needs present. Each check is pass / warn / fail / skip with the
 * evidence that decided it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/gate.h"
#include "trainscope/stats.h"

const char *ts_check_status_name(int s)
{
	switch (s) {
	case TS_CHECK_PASS: return "pass";
	case TS_CHECK_WARN: return "warn";
	case TS_CHECK_FAIL: return "fail";
	default: return "skip";
	}
}

void ts_validate_result_init(struct ts_validate_result *v)
{
	memset(v, 0, sizeof(*v));
	ts_arena_init(&v->arena);
}

void ts_validate_result_release(struct ts_validate_result *v)
{
	TS_VEC_RELEASE(v->checks);
	ts_arena_release(&v->arena);
	memset(v, 0, sizeof(*v));
}

__attribute__((format(printf, 4, 5)))
static int add(struct ts_validate_result *v, const char *name, int status, const char *f, ...)
{
	char buf[1024];
	va_list ap;
	int n;
	struct ts_validate_check c;

	va_start(ap, f);
	n = vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	c.name = name;
	c.status = status;
	c.evidence = ts_arena_strndup(&v->arena, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	if (!c.evidence || TS_VEC_PUSH(v->checks, c))
		return TS_ENOMEM;
	if (status == TS_CHECK_FAIL)
		v->passed = 0;
	return 0;
}

/*
 * Backend evidence (flops-memory-workflow 5.4 item 6): scan every trace of
 * the run, take the request from the contract, else from the Megatron
 * arguments block of the log, and judge (ts_backend_judge). A trace that
 * cannot be read is a warning naming it; the others still count.
 */
static int check_backend(const struct ts_run *r, struct ts_validate_result *v)
{
	struct ts_backend_evidence e;
	struct ts_backend_request q;
	struct ts_backend_verdict bv;
	int rc = 0;

	ts_backend_evidence_init(&e);
	for (size_t i = 0; i < r->traces.n; i++) {
		struct ts_err terr;
		ts_err_init(&terr);
		if (ts_backend_scan_file(r->traces.v[i], &e, &terr)) {
			if (terr.code == TS_ENOMEM)
				return TS_ENOMEM;
			rc |= add(v, "backend_evidence", TS_CHECK_WARN, "%s: not read (%s)",
				  r->traces.v[i], terr.msg);
		}
	}
	memset(&q, 0, sizeof(q));
	if (r->has_contract)
		ts_backend_requested(&r->contract, &q);
	if (!q.attention[0] && !q.graphs && !q.dispatcher[0] && !q.dispatcher_backend[0] &&
	    r->args_log[0]) {
		struct ts_contract c;
		struct ts_err cerr;
		ts_contract_init(&c);
		ts_err_init(&cerr);
		if (ts_contract_from_log(&c, r->args_log, &cerr) == 0)
			ts_backend_requested(&c, &q);
		ts_contract_release(&c);
	}
	if (!e.traces)
		return rc;
	ts_backend_judge(&q, &e, &bv);
	return rc | add(v, "backend_evidence", bv.status, "%s", bv.evidence);
}

/*
 * Logged TFLOP/s/GPU against the model FLOPs recomputed with Megatron's
 * current formula (flops.h), with the run model's model and shape
 * (run.h, struct ts_run_rate): per step, recomputed = F / (t 1e12 W); the
 * median |logged / recomputed - 1| must stay within 1 % (flops-memory-
 * workflow 5.4 item 5). When another formula version matches, it says so.
 * The comparison is the run model's (ts_run_rate_over), over this window.
 */
static int check_tflops(const struct ts_run *r, const struct ts_window *w,
			struct ts_validate_result *v)
{
	const struct ts_run_rate *rt = &r->rm.rate;
	struct ts_run_rate_cmp c;

	if (ts_run_rate_over(&r->rm, w->first, w->last, &c))
		return TS_ENOMEM;
	if (!c.nlogged)
		return add(v, "tflops", TS_CHECK_SKIP, "no TFLOP/s logged; nothing to recompute");
	if (!rt->model_from && r->rm.has_args && !r->rm.has_args_model)
		return add(v, "tflops", TS_CHECK_SKIP, "logged %.1f TFLOP/s/GPU over %zu steps (FLOPs / "
			   "time); not recomputed: the Megatron arguments block of %s does not give "
			   "the model shape (%s); put config.json in the run directory",
			   c.logged_tflops, c.nlogged, r->rm.args_log, r->rm.args_model_why);
	if (!rt->model_from)
		return add(v, "tflops", TS_CHECK_SKIP, "logged %.1f TFLOP/s/GPU over %zu steps (FLOPs / "
			   "time); not recomputed: no model config (config.json in the run directory "
			   "or a Megatron arguments block)", c.logged_tflops, c.nlogged);
	if (rt->why)
		return add(v, "tflops", TS_CHECK_SKIP, "logged %.1f TFLOP/s/GPU (FLOPs / time); not "
			   "recomputed: %s", c.logged_tflops, rt->why);
	if (rt->log_why)
		return add(v, "tflops", TS_CHECK_SKIP, "logged %.1f TFLOP/s/GPU (FLOPs / time); not "
			   "recomputed with the log's own formula %s: %s", c.logged_tflops,
			   ts_formula_name(rt->log_formula), rt->log_why);
	if (!c.ncompared)
		return add(v, "tflops", TS_CHECK_SKIP, "no step has both a time and a TFLOP/s value");
	if (c.diff_median <= TS_RATE_MAX_DIFF)
		return add(v, "tflops", TS_CHECK_PASS, "logged TFLOP/s/GPU within %.2f %% (median of "
			   "%zu steps) of the recomputed %s model FLOPs (%.4g per step, %lld GPUs, "
			   "model from %s)", 100 * c.diff_median, c.ncompared,
			   ts_formula_name(rt->log_formula), rt->log_flops.per_step,
			   (long long)rt->gpus, rt->model_from);
	return add(v, "tflops", TS_CHECK_FAIL, "logged TFLOP/s/GPU differs by %.2f %% (median of "
		   "%zu steps; limit 1 %%) from the recomputed %s model FLOPs (%.4g per step, %lld "
		   "GPUs): config or formula-version mismatch%s%s", 100 * c.diff_median,
		   c.ncompared, ts_formula_name(rt->log_formula), rt->log_flops.per_step,
		   (long long)rt->gpus, c.formula >= 0 ? "; it matches formula " : "",
		   c.formula >= 0 ? ts_formula_name(c.formula) : "");
}

int ts_validate_run(const struct ts_run *r, int64_t win_first, int64_t win_last,
		    int accept_auto, struct ts_validate_result *v, struct ts_err *err)
{
	struct ts_window auto_w, w;
	struct ts_err werr;
	const char *source = "automatic (MSER-5 after iteration 1)";
	int declared_by_run = r->rm.have_steps && r->rm.window_source != 0;
	int have_auto, rc = 0;
	double *x = NULL;
	size_t n = 0;

	v->passed = 1;
	ts_err_init(&werr);
	/* 1. run length, in training iterations: a record of Megatron's
	 * --log-interval N stands for N of them (a hole in the log, none) */
	{
		int64_t first = r->pts.n ? r->pts.v[0].iteration : 0;
		int64_t last = r->pts.n ? r->pts.v[r->pts.n - 1].iteration : 0;
		int64_t every = r->log_interval;
		int64_t span = 0;

		/* each record stands for the iterations ts_run_point_from says:
		 * since the one before, at most one interval (a hole in the log
		 * counts none; torchtitan's record of step 1 stands for it
		 * alone) */
		for (size_t i = 0; i < r->pts.n; i++) {
			int64_t from = ts_run_point_from(r, i), it = r->pts.v[i].iteration;

			span += from <= it ? it - from + 1 : 1;
		}
		char recs[64] = "";

		if (every > 1)
			snprintf(recs, sizeof(recs), " in %zu records of %lld", r->pts.n,
				 (long long)every);
		if (span >= TS_VALIDATE_MIN_STEPS)
			rc |= add(v, "steps_logged", TS_CHECK_PASS, "%lld logged steps (%ss "
				  "%lld-%lld%s; >= %d)", (long long)span,
				  ts_runmodel_iteration_word(&r->rm, first), (long long)first,
				  (long long)last, recs, TS_VALIDATE_MIN_STEPS);
		else
			rc |= add(v, "steps_logged", TS_CHECK_FAIL,
				  "only %lld logged steps (%ss %lld-%lld%s); a winner needs at "
				  "least %d", (long long)span, ts_runmodel_iteration_word(&r->rm, first),
				  (long long)first, (long long)last, recs, TS_VALIDATE_MIN_STEPS);
	}

	/* 2. the window */
	have_auto = ts_run_window(r, TS_WIN_AUTO, TS_WIN_AUTO, &auto_w, &werr) == 0;
	if (declared_by_run && win_first == TS_WIN_AUTO) {
		win_first = r->rm.window.first;
		win_last = r->rm.window.last;
		source = r->rm.window_source == 2 ?
			 "declared in the contract (workload.steady_window)" : "declared";
	} else if (win_first == TS_WIN_AUTO && r->has_contract &&
	    ts_window_parse(ts_contract_get(&r->contract, "workload.steady_window", NULL), &win_first,
			    &win_last) == 0)
		source = "declared in the contract (workload.steady_window)";
	else if (win_first != TS_WIN_AUTO)
		source = "declared";
	if (win_first != TS_WIN_AUTO) {
		memset(&w, 0, sizeof(w));
		w.first = win_first;
		w.last = win_last;
		w.declared = 1;
	} else if (have_auto) {
		w = auto_w;
	} else {
		rc |= add(v, "window", TS_CHECK_FAIL, "no steady window: %s", werr.msg);
		/* the window shown is still the run's (steps' and diagnose's) */
		v->win_first = r->rm.window.first;
		v->win_last = r->rm.window.last;
		goto out;
	}
	v->win_first = w.first;
	v->win_last = w.last;
	x = malloc((r->pts.n + 1) * sizeof(double));
	if (!x)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	n = ts_run_window_times(r, &w, x, NULL, r->pts.n);
	v->win_steps = n;
	{
		/* iteration 1 and a restarted process's start make the window not
		 * a post-warm-up one (bad); profiler, checkpoint and evaluation
		 * steps are left out of its statistics and named (left) */
		struct ts_sb bad, left;
		size_t nbad = 0, nleft = 0;

		ts_sb_init(&bad);
		ts_sb_init(&left);
		for (size_t i = 0; i < r->pts.n; i++) {
			const struct ts_run_point *p = &r->pts.v[i];
			int warm = (p->excluded & (TS_EXCL_FIRST | TS_EXCL_RESTART)) != 0;
			size_t *cnt = warm ? &nbad : &nleft;

			if (!ts_run_point_in_window(r, i, w.first, w.last) || !p->excluded)
				continue;
			if (++*cnt <= 8)
				ts_sb_addf(warm ? &bad : &left, "%s%lld (%s)", *cnt > 1 ? ", " : "",
					   (long long)p->iteration,
					   p->excluded & TS_EXCL_FIRST ?
					   (p->iteration == 1 ? "iteration 1" :
					    "holds iteration 1") :
					   p->excluded & TS_EXCL_RESTART ? "restart" :
					   p->excluded & TS_EXCL_PROFILER ? "profiler" :
					   p->excluded & TS_EXCL_CHECKPOINT ? "checkpoint" : "eval");
		}
		if (nleft > 8)
			ts_sb_addf(&left, " and %zu more", nleft - 8);
		if (nbad > 8)
			ts_sb_addf(&bad, " and %zu more", nbad - 8);
		if (w.declared && r->pts.n && w.last > r->pts.v[r->pts.n - 1].iteration)
			rc |= add(v, "window", TS_CHECK_FAIL,
				  "%s window %lld-%lld runs past the log, which ends at iteration "
				  "%lld: the run stopped %lld iterations short of it (a crash, or a "
				  "log cut early)", source, (long long)w.first, (long long)w.last,
				  (long long)r->pts.v[r->pts.n - 1].iteration,
				  (long long)(w.last - r->pts.v[r->pts.n - 1].iteration));
		else if (w.declared && nbad)
			rc |= add(v, "window", TS_CHECK_FAIL,
				  "%s window %lld-%lld includes %zu step(s) that must be excluded: %s",
				  source, (long long)w.first, (long long)w.last, nbad, bad.buf);
		else if (w.declared && r->rm.have_steps &&
			 r->rm.steps.ramp_end_iteration != TS_NO_INT &&
			 w.first < r->rm.steps.ramp_end_iteration)
			rc |= add(v, "window", TS_CHECK_WARN,
				  "%s window %lld-%lld starts in the batch-size ramp-up: the run's own "
				  "batch of %lld sequences starts at iteration %lld", source,
				  (long long)w.first, (long long)w.last,
				  (long long)r->rm.steps.ramp_gbs_last,
				  (long long)r->rm.steps.ramp_end_iteration);
		else if (w.declared && have_auto && w.first < auto_w.mser_first)
			rc |= add(v, "window", TS_CHECK_WARN,
				  "%s window %lld-%lld starts before the end of the warm-up MSER-5 "
				  "detects (iteration %lld)", source, (long long)w.first,
				  (long long)w.last, (long long)auto_w.mser_first);
		else if (n < TS_STEADY_MIN_STEPS)
			rc |= add(v, "window", TS_CHECK_FAIL, "%s window %lld-%lld has %zu usable steps "
				  "(need >= %d)", source, (long long)w.first, (long long)w.last, n,
				  TS_STEADY_MIN_STEPS);
		else if (!w.declared && !w.steady)
			rc |= add(v, "window", TS_CHECK_FAIL,
				  "%s window %lld-%lld: MSER-5 finds no steady state (its warm-up cut "
				  "stops at half of the series), the step time is still changing; "
				  "nothing to accept: declare a window (--window or the contract's "
				  "workload.steady_window) after the warm-up", source,
				  (long long)w.first, (long long)w.last);
		else if (!w.declared && accept_auto)
			rc |= add(v, "window", TS_CHECK_WARN,
				  "%s window %lld-%lld, %zu steps%s%s%s%s, accepted with "
				  "--accept-auto-window", source, (long long)w.first, (long long)w.last,
				  n, nbad || nleft ? "; left out of it: " : "", bad.buf,
				  nbad && nleft ? ", " : "", left.buf);
		else if (!w.declared)
			rc |= add(v, "window", TS_CHECK_FAIL,
				  "%s window %lld-%lld, %zu steps%s%s%s%s; declare it (--window or the "
				  "contract's workload.steady_window), or pass --accept-auto-window",
				  source, (long long)w.first, (long long)w.last, n,
				  nbad || nleft ? "; left out of it: " : "", bad.buf,
				  nbad && nleft ? ", " : "", left.buf);
		else
			rc |= add(v, "window", TS_CHECK_PASS, "%s window %lld-%lld, %zu steps, after "
				  "iteration 1 and the warm-up%s%s", source, (long long)w.first,
				  (long long)w.last, n, nleft ? "; left out of its statistics: " : "",
				  left.buf);
		rc |= bad.failed | left.failed;
		ts_sb_release(&bad);
		ts_sb_release(&left);
	}

	/* 3. loss health in the window */
	{
		int64_t nonfinite, skipped, nall, sall;
		size_t nloss = 0;
		double last_loss = NAN;
		char at[96], who[1200];
		ts_run_health(r, w.first, w.last, &nonfinite, &skipped);
		ts_run_health(r, INT64_MIN, INT64_MAX, &nall, &sall);
		for (size_t i = 0; i < r->pts.n; i++) {
			const struct ts_run_point *p = &r->pts.v[i];
			if (ts_run_point_in_window(r, i, w.first, w.last) && isfinite(p->loss)) {
				nloss++;
				last_loss = p->loss;
			}
		}
		if (r->health.verdict == TS_LOSS_NONFINITE ||
		    (r->health.verdict == TS_LOSS_MISSING &&
		     r->health.cause == TS_LOSS_CAUSE_LOSS_DROPPED))
			rc |= add(v, "loss_finite", TS_CHECK_FAIL, "loss health %s %s "
				  "(%s%s); %lld iteration(s) in the window have non-finite evidence",
				  ts_loss_verdict_name(r->health.verdict),
				  ts_runmodel_span_words(&r->rm, "from", "from within",
							 r->health.first_bad_possible,
							 r->health.first_bad_iteration, at, sizeof(at)),
				  ts_loss_cause_name(r->health.cause),
				  ts_runmodel_first_bad_words(&r->rm, who, sizeof(who)),
				  (long long)nonfinite);
		else if (nonfinite)
			rc |= add(v, "loss_finite", TS_CHECK_FAIL, "%lld iteration(s) in the window "
				  "have non-finite evidence (a loss or grad norm printed as NaN/Inf, or "
				  "the framework's NaN-iteration count)", (long long)nonfinite);
		else if (!nloss)
			rc |= add(v, "loss_finite", TS_CHECK_FAIL, "no loss logged in the window");
		else
			rc |= add(v, "loss_finite", nall ? TS_CHECK_WARN : TS_CHECK_PASS,
				  "%zu finite losses in iterations %lld-%lld (the window's range, its "
				  "excluded steps too), last %.6g%s", nloss, (long long)w.first,
				  (long long)w.last, last_loss,
				  nall ? "; non-finite values outside the window" : "");
		if (skipped || nonfinite)
			rc |= add(v, "skipped_nan", TS_CHECK_FAIL, "in the window: %lld skipped, %lld "
				  "NaN/Inf iteration(s); must be 0", (long long)skipped,
				  (long long)nonfinite);
		else
			rc |= add(v, "skipped_nan", TS_CHECK_PASS, "0 skipped and 0 NaN iterations in "
				  "the window (whole run: %lld skipped, %lld NaN)", (long long)sall,
				  (long long)nall);
	}

	/* 4. step time: the measurement workflow's 3 % bar, stricter than the
	 * run model's "noisy" warning (10 %), so it is not called noisy */
	if (n >= 2) {
		double cv = ts_stats_cv(x, n), mean = ts_stats_mean(x, n), med, wall = 0, share = NAN;
		size_t nst = 0;
		int stalls = 0;
		char words[160] = "", period[64] = "", trend[80] = "";
		struct ts_drift drift = { 0 };

		for (size_t i = 0; i < n; i++)
			wall += x[i];
		if (r->rm.have_steps)
			stalls = ts_steps_window_stalls(&r->rm.steps, w.first, w.last, wall, n, &nst,
							&share);
		if (stalls && r->rm.steps.periodic.found)
			snprintf(period, sizeof(period), ", recurring every %lld iterations",
				 (long long)r->rm.steps.periodic_period_iters);
		if (stalls)
			snprintf(words, sizeof(words), "; %zu step%s, %.1f %% of the window's "
				 "time%s (kept in the mean)", nst, nst == 1 ? " stalls" : "s stall",
				 100 * share, period);
		if (n >= 20 && ts_stats_drift(x, n, TS_DRIFT_MIN_CHANGE, &drift) == TS_ENOMEM) {
			free(x);
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		}
		if (drift.found)
			snprintf(trend, sizeof(trend), "; it %s %+.1f %% over the window (drift: not "
				 "steady)", drift.change > 0 ? "rises" : "falls", 100 * drift.change);
		ts_stats_sort(x, n);
		med = ts_stats_quantile_sorted(x, n, 0.5);
		rc |= add(v, "step_time", cv > 0.03 || stalls || drift.found ? TS_CHECK_WARN :
			  TS_CHECK_PASS, "mean %.2f ms, median %.2f ms, CV %.1f %%%s%s%s", mean, med,
			  100 * cv,
			  cv > 0.03 ? " (above the 3 % a measurement window should stay under)" : "",
			  words, trend);
	}

	/* 5. TFLOP/s */
	rc |= check_tflops(r, &w, v);

	/* 6. peak memory */
	if (isfinite(r->peak_dev_bytes))
		rc |= add(v, "peak_memory", TS_CHECK_PASS, "peak device memory allocated %.0f bytes",
			  r->peak_dev_bytes);
	else if (isfinite(r->peak_dev_reserved_bytes))
		rc |= add(v, "peak_memory", TS_CHECK_PASS, "peak device memory reserved %.0f bytes "
			  "(the caching allocator's; the log gives no max allocated)",
			  r->peak_dev_reserved_bytes);
	else if (isfinite(r->peak_host_bytes))
		rc |= add(v, "peak_memory", TS_CHECK_PASS, "no device memory logged (CPU run); peak "
			  "host RSS %.0f bytes", r->peak_host_bytes);
	else
		rc |= add(v, "peak_memory", TS_CHECK_WARN, "no peak memory in the log (enable "
			  "Megatron's memory report or log max_memory_allocated)");

	/* 7. backend evidence */
	if (r->traces.n)
		rc |= check_backend(r, v);
	else
		rc |= add(v, "backend_evidence", TS_CHECK_SKIP, "no profiler trace in the run");
out:
	free(x);
	if (rc)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	return 0;
}

/*
 * run.c - a run as the gate sees it: one point per iteration (ranks
 * merged), its contract, and its steady window.
 *
 * Why a separate model from the step log: A/B and validation need the
 * same iteration on both sides, a single value per iteration however many
 * ranks logged it, and the measurement artefacts (profiler, checkpoint,
 * evaluation intervals) marked so no window ever includes them. The
 * values per iteration are the steps analysis' own merge over ranks
 * (ts_steps_merge): a merge of its own here took another rank's rate,
 * NaN count and step time than `steps` did.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/detect.h"
#include "trainscope/gate.h"
#include "trainscope/logs.h"
#include "trainscope/paths.h"
#include "trainscope/run.h"
#include "trainscope/stats.h"

void ts_run_init(struct ts_run *r)
{
	memset(r, 0, sizeof(*r));
	ts_contract_init(&r->contract);
	ts_paths_init(&r->traces);
	ts_runmodel_init(&r->rm);
	r->global_batch = -1;
	r->peak_dev_bytes = r->peak_dev_reserved_bytes = r->peak_host_bytes = NAN;
	ts_loss_health_release(&r->health);
}

void ts_run_release(struct ts_run *r)
{
	ts_contract_release(&r->contract);
	ts_paths_release(&r->traces);
	TS_VEC_RELEASE(r->pts);
	ts_runmodel_release(&r->rm);
	ts_loss_health_release(&r->health);
	memset(r, 0, sizeof(*r));
}

static double nanmax(double a, double b)
{
	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	return a > b ? a : b;
}

/* The run's points: one per iteration of the one merge over ranks
 * (ts_steps_merge, the steps analysis' main series); points up to
 * first_cut hold iteration 1 (ts_steps_first_cut). */
static int build_points(struct ts_run *r, const struct ts_steplog *log, int64_t first_cut,
			struct ts_err *err)
{
	struct ts_step_merged *v = NULL;
	size_t n = 0, i;

	if (log->steps.n == 0)
		return ts_err_at(err, TS_EPARSE, r->path, -1, -1,
				 "no step records (expected Megatron/Bridge/NeMo/HF/Primus/"
				 "torchtitan/DeepSpeed step lines or JSONL metrics)");
	if (ts_steps_merge(log, &v, &n))
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++) {
		const struct ts_step_merged *m = &v[k];
		struct ts_run_point p;

		memset(&p, 0, sizeof(p));
		p.iteration = m->iteration;
		p.step_ms = m->step_ms;
		for (int j = 0; j < TS_PHASE_COUNT; j++)
			p.phase_ms[j] = m->phase_ms[j];
		if ((m->flags & (TS_STEP_LOSS_NONFINITE | TS_STEP_GRAD_NONFINITE)) ||
		    m->extra_nonfinite || isinf(m->grad_norm))
			p.nonfinite = 1;
		/* a NaN-iteration count over the log interval: that many */
		if (m->nan_iters != TS_NO_INT && m->nan_iters > p.nonfinite)
			p.nonfinite = m->nan_iters > INT_MAX ? INT_MAX : (int)m->nan_iters;
		p.skipped = m->skipped != TS_NO_INT && m->skipped > 0 ? m->skipped : 0;
		p.loss = !p.nonfinite && isfinite(m->loss) ? m->loss : NAN;
		p.grad_norm = isfinite(m->grad_norm) ? m->grad_norm : NAN;
		if (m->flags & (TS_STEP_AFTER_PROFILER | TS_STEP_PROFILED))
			p.excluded |= TS_EXCL_PROFILER;
		if (m->flags & TS_STEP_AFTER_CHECKPOINT)
			p.excluded |= TS_EXCL_CHECKPOINT;
		if (m->flags & TS_STEP_AFTER_EVAL)
			p.excluded |= TS_EXCL_EVAL;
		if (m->flags & TS_STEP_RESTARTED)
			p.excluded |= TS_EXCL_RESTART;
		if (m->gbs != TS_NO_INT)
			r->global_batch = m->gbs;
		if (TS_VEC_PUSH(r->pts, p)) {
			free(v);
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		}
	}
	free(v);
	for (size_t k = 0; k < log->steps.n; k++) {
		const struct ts_step *s = &log->steps.v[k];

		r->peak_dev_bytes = nanmax(r->peak_dev_bytes, s->mem_max_alloc_bytes);
		r->peak_dev_reserved_bytes = nanmax(r->peak_dev_reserved_bytes,
						    s->mem_max_reserved_bytes);
		r->peak_host_bytes = nanmax(r->peak_host_bytes, s->rss_max_bytes);
	}
	{
		/* the points' logging interval, from their iterations */
		int64_t *its = malloc((r->pts.n + 1) * sizeof(*its));

		if (!its)
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		for (size_t k = 0; k < r->pts.n; k++)
			its[k] = r->pts.v[k].iteration;
		i = (size_t)ts_record_interval(its, r->pts.n, &r->log_interval);
		free(its);
		if (i)
			return ts_err_set(err, TS_ENOMEM, "out of memory");
	}
	/* the steps analysis decides which records hold iteration 1 */
	for (size_t k = 0; k < r->pts.n; k++)
		if (r->pts.v[k].iteration <= first_cut)
			r->pts.v[k].excluded |= TS_EXCL_FIRST;
	for (size_t k = 0; k < log->mem.n; k++) {
		r->peak_dev_bytes = nanmax(r->peak_dev_bytes, log->mem.v[k].max_alloc);
		r->peak_dev_reserved_bytes = nanmax(r->peak_dev_reserved_bytes,
						    log->mem.v[k].max_reserved);
	}
	snprintf(r->format, sizeof(r->format), "%s", ts_log_format_name(log->format));
	ts_loss_health_release(&r->health);
	return ts_loss_health_judge(log, &r->health, err);
}

int ts_run_load(struct ts_run *r, const char *path, const struct ts_runmodel_opts *o,
		struct ts_err *err)
{
	char *paths[1] = { (char *)path };
	int rc = 0;

	snprintf(r->path, sizeof(r->path), "%s", path);
	if ((rc = ts_runmodel_load(&r->rm, paths, 1, o, 1, err)))
		goto out;
	for (size_t i = 0; i < r->rm.inputs.n; i++) {
		const struct ts_run_input *in = &r->rm.inputs.v[i];

		if (in->role == TS_ROLE_TRACE) {
			r->has_trace = 1;
			if ((rc = ts_paths_add(&r->traces, in->path, 0, err)))
				goto out;
		}
		if (in->role == TS_ROLE_NSYS) {
			/* backend evidence reads it through the nsys reader */
			r->has_trace = 1;
			if ((rc = ts_paths_add(&r->traces, in->path, 0, err)))
				goto out;
		}
		if (in->role == TS_ROLE_CONTRACT && !r->has_contract) {
			if ((rc = ts_contract_read(&r->contract, in->path, err)))
				goto out;
			r->has_contract = 1;
			snprintf(r->contract_path, sizeof(r->contract_path), "%s", in->path);
		}
	}
	if (r->rm.has_args)
		snprintf(r->args_log, sizeof(r->args_log), "%s", r->rm.args_log);
	r->nsources = (int)r->rm.step_files.n;
	r->nprofiled = r->rm.nprofiled;
	rc = build_points(r, &r->rm.log, r->rm.have_steps ? r->rm.steps.first_cut : 1, err);
out:
	return rc;
}

int64_t ts_run_point_from(const struct ts_run *r, size_t i)
{
	return ts_record_from(i ? r->pts.v[i - 1].iteration : TS_NO_INT, r->pts.v[i].iteration,
			      i + 1 < r->pts.n ? r->pts.v[i + 1].iteration : TS_NO_INT,
			      r->log_interval);
}

int ts_run_point_in_window(const struct ts_run *r, size_t i, int64_t first, int64_t last)
{
	return ts_record_in_window(ts_run_point_from(r, i), r->pts.v[i].iteration, first, last);
}

void ts_run_health(const struct ts_run *r, int64_t first, int64_t last, int64_t *nonfinite,
		   int64_t *skipped)
{
	*nonfinite = *skipped = 0;
	for (size_t i = 0; i < r->pts.n; i++) {
		const struct ts_run_point *p = &r->pts.v[i];
		if (!ts_run_point_in_window(r, i, first, last))
			continue;
		*nonfinite += p->nonfinite;
		*skipped += p->skipped;
	}
}

int ts_run_point_usable(const struct ts_run_point *p)
{
	return isfinite(p->step_ms) && !p->excluded && !p->nonfinite &&
	       p->skipped == 0;
}

size_t ts_run_window_times(const struct ts_run *r, const struct ts_window *w, double *ms,
			   int64_t *iters, size_t cap)
{
	size_t k = 0;

	for (size_t i = 0; i < r->pts.n && k < cap; i++) {
		const struct ts_run_point *p = &r->pts.v[i];
		if (!ts_run_point_in_window(r, i, w->first, w->last) || !ts_run_point_usable(p))
			continue;
		ms[k] = p->step_ms;
		if (iters)
			iters[k] = p->iteration;
		k++;
	}
	return k;
}

int ts_run_window(const struct ts_run *r, int64_t first, int64_t last, struct ts_window *w,
		  struct ts_err *err)
{
	double *x = NULL;
	int64_t *it = NULL;
	size_t n = 0;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	w->steady = 1;
	w->first = INT64_MIN;
	w->last = INT64_MAX;
	x = malloc((r->pts.n + 1) * sizeof(*x));
	it = malloc((r->pts.n + 1) * sizeof(*it));
	if (!x || !it) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
		goto out;
	}
	n = ts_run_window_times(r, w, x, it, r->pts.n);
	if (first != TS_WIN_AUTO) {
		w->declared = 1;
		w->first = first;
		w->last = last;
		w->mser_first = first;
		w->n = ts_run_window_times(r, w, x, it, r->pts.n);
		if (w->n < TS_STEADY_MIN_STEPS)
			rc = ts_err_at(err, TS_EUSAGE, r->path, -1, -1,
				       "declared window %lld-%lld has %zu usable timed steps; need "
				       "at least %d", (long long)first, (long long)last, w->n,
				       TS_STEADY_MIN_STEPS);
		goto out;
	}
	if (n < TS_STEADY_MIN_STEPS) {
		rc = ts_err_at(err, TS_EUSAGE, r->path, -1, -1,
			       "%zu usable timed steps after dropping iteration 1, profiler, "
			       "checkpoint, evaluation and NaN/skipped steps; need at least %d", n,
			       TS_STEADY_MIN_STEPS);
		goto out;
	}
	if (r->rm.have_steps) {
		const struct ts_window_obj *o = &r->rm.window;

		if (o->first == TS_NO_INT) {
			rc = ts_err_at(err, TS_EUSAGE, r->path, -1, -1, "the steps analysis found "
				       "no steady window");
			goto out;
		}
		w->declared = r->rm.window_source != 0;
		w->steady = !(r->rm.steps.warnings & TS_WARN_NO_STEADY);
		w->first = o->first;
		w->last = o->last;
		w->mser_first = r->rm.steps.mser_cut_iteration != TS_NO_INT ?
				r->rm.steps.mser_cut_iteration : o->first;
		w->n = ts_run_window_times(r, w, x, it, r->pts.n);
		if (w->n < TS_STEADY_MIN_STEPS)
			rc = ts_err_at(err, TS_EUSAGE, r->path, -1, -1,
				       "the steady window %lld:%lld has %zu usable timed steps; need "
				       "at least %d", (long long)w->first, (long long)w->last, w->n,
				       TS_STEADY_MIN_STEPS);
		goto out;
	}
	{
		/* warm-up: MSER-5's cut, but at least the first 10 % of the logged
		 * steps (the Megatron Bridge perf harness default) */
		struct ts_mser m;
		size_t cut = 0, skip = (r->pts.n + 9) / 10;
		int64_t min_iter = r->pts.v[skip < r->pts.n ? skip : r->pts.n - 1].iteration;
		if (ts_stats_mser5(x, n, &m) == 0) {
			cut = m.cut;
			w->steady = m.steady;
		}
		while (cut < n && it[cut] < min_iter)
			cut++;
		if (n - cut < TS_STEADY_MIN_STEPS) {
			rc = ts_err_at(err, TS_EUSAGE, r->path, -1, -1,
				       "%zu usable timed steps after the warm-up; need at least %d",
				       n - cut, TS_STEADY_MIN_STEPS);
			goto out;
		}
		w->first = it[cut];
		w->last = it[n - 1];
		w->mser_first = it[cut];
		w->n = n - cut;
	}
out:
	free(x);
	free(it);
	return rc;
}


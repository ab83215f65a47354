/*
 * diagnose_gather.c - from the paths a user gives (usually one run
 * directory) to the evidence struct the verdict works on.
 *
 * Every file is classified by content (detect.h), never by name, and
 * handed to the reader for its kind: traces to the trace reader and the
 * per-rank profile (profile.h), logs and metrics to the step-series reader
 * and analysis (logs.h, steps.h), JSONL metrics also to the phase reader
 * (diagnose_jsonl.c), model configs to the model reader and FLOPs (model.h,
 * flops.h). What is not there is recorded so the report can say how to
 * collect it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "trainscope/detect.h"
#include "trainscope/diagnose.h"
#include "trainscope/flops.h"
#include "trainscope/gpus.h"
#include "trainscope/logs.h"
#include "trainscope/model.h"
#include "trainscope/paths.h"
#include "trainscope/steps.h"
#include "trainscope/trace.h"

#define WALK_DEPTH 3

static int push_path(struct ts_diag *d, void *vec, const char *path)
{
	TS_VEC(char *) *v = vec;
	char *s = ts_diag_strdup(d, path);

	if (!s || TS_VEC_PUSH(*v, s))
		return TS_ENOMEM;
	return 0;
}

static int read_trace(struct ts_diag *d, const char *path, struct ts_err *err)
{
	struct ts_trace t;
	struct ts_trace_opts o = { .skip_python = 1, .strict = 0 };
	struct ts_rank_prof *p = NULL;
	int rc;

	ts_trace_init(&t);
	if ((rc = ts_trace_read(&t, path, &o, err)))
		goto out;
	p = malloc(sizeof(*p));
	if (!p) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory profiling %s", path);
		goto out;
	}
	ts_rank_prof_init(p);
	if ((rc = ts_rank_profile(p, &t, NULL, err)))
		goto out;
	if ((rc = ts_diag_add_profile(d, p)))
		goto out;
	p = NULL;
out:
	if (p) {
		ts_rank_prof_release(p);
		free(p);
	}
	ts_trace_release(&t);
	return rc;
}

/* A profiled step: its iteration and whether the trace calls it an outlier. */
struct pstep {
	int64_t it;
	int outlier;
};

static int cmp_pstep(const void *a, const void *b)
{
	int64_t x = ((const struct pstep *)a)->it, y = ((const struct pstep *)b)->it;
	return (x > y) - (x < y);
}

/*
 * A profiled iteration runs slower than the others (the profiler records
 * every operator), and the one after a window pays the trace export, so a
 * log outlier there is the profiler's, not the job's - unless the trace
 * itself shows that step as an outlier of its window (a real stall caught
 * by the profiler). ps is sorted by iteration; export iterations carry
 * outlier = 0 after the window's own steps.
 */
static int profiler_slowed(const struct pstep *ps, size_t n, int64_t it)
{
	struct pstep key = { it, 0 };
	const struct pstep *hit = n ? bsearch(&key, ps, n, sizeof(*ps), cmp_pstep) : NULL;

	if (!hit)
		return 0;
	/* several windows may list the same iteration: a trace outlier anywhere wins */
	while (hit > ps && hit[-1].it == it)
		hit--;
	for (; hit < ps + n && hit->it == it; hit++)
		if (hit->outlier)
			return 0;
	return 1;
}

/* Every profiled iteration (and each window's export iteration), sorted. */
static struct pstep *profiled_steps(const struct ts_diag *d, size_t *n)
{
	struct pstep *ps;
	size_t total = 0, k = 0;

	for (size_t i = 0; i < d->nprofs; i++)
		total += d->profs[i]->steps.n + 1;
	ps = malloc((total ? total : 1) * sizeof(*ps));
	if (!ps)
		return NULL;
	for (size_t i = 0; i < d->nprofs; i++) {
		const struct ts_rank_prof *p = d->profs[i];
		for (size_t j = 0; j < p->steps.n; j++)
			ps[k++] = (struct pstep){ p->steps.v[j].step, p->steps.v[j].outlier != 0 };
		if (p->steps.n)
			ps[k++] = (struct pstep){ p->steps.v[p->steps.n - 1].step + 1, 0 };
	}
	ts_sort(ps, k, sizeof(*ps), cmp_pstep);
	*n = k;
	return ps;
}

/* The steady summary the verdict needs, from the steps analysis. Outliers
 * with a known cause (profiler capture or export, checkpoint, evaluation)
 * are not stalls of the job. */
static int fill_steady(struct ts_diag *d)
{
	const struct ts_steps_report *r = &d->steps_rep;
	struct ts_diag_steady *s = &d->steady;
	size_t nps = 0;
	struct pstep *ps = profiled_steps(d, &nps);

	if (!ps)
		return TS_ENOMEM;
	if (r->win_n >= 2 && isfinite(r->mean_ms) && r->win_first != TS_NO_INT) {
		s->known = 1;
		s->first = r->win_first;
		s->last = r->win_last;
		s->n = r->win_n;
		s->mean_ms = r->mean_ms;
		s->median_ms = r->median_ms;
		s->ci_lo_ms = r->ci.method ? r->ci.lo : NAN;
		s->ci_hi_ms = r->ci.method ? r->ci.hi : NAN;
		snprintf(s->ci_method, sizeof(s->ci_method), "%s", ts_ci_method_name(r->ci.method));
		s->cv = r->cv;
	}
	for (size_t i = 0; i < r->noutliers; i++) {
		int64_t it = r->outliers[i].iteration;
		if (r->outliers[i].reason != TS_OUT_SPIKE && r->outliers[i].reason != TS_OUT_PERIODIC)
			continue;
		if (profiler_slowed(ps, nps, it))
			continue;
		if (TS_VEC_PUSH(s->stalls, it)) {
			free(ps);
			return TS_ENOMEM;
		}
	}
	free(ps);
	if (r->periodic.found && r->periodic_period_iters > 0)
		s->stall_period = (size_t)r->periodic_period_iters;
	d->rate.tokens_per_s = r->tokens_per_s;
	return 0;
}

/* Step series: JSONL metrics when present (their step time excludes the
 * profiler export that Megatron's logged interval contains), else logs. */
static int read_steps(struct ts_diag *d, struct ts_err *err)
{
	struct ts_steplog log;
	struct ts_steps_opts o;
	char *const *files = d->in.metrics.n ? d->in.metrics.v : d->in.logs.v;
	size_t n = d->in.metrics.n ? d->in.metrics.n : d->in.logs.n;
	int rc = 0;

	if (!n)
		return 0;
	ts_steplog_init(&log);
	ts_steps_opts_init(&o);
	for (size_t i = 0; i < n; i++)
		if ((rc = ts_steplog_read(&log, files[i], err)))
			goto out;
	if ((rc = ts_steps_analyze(&log, &o, &d->steps_rep, err)))
		goto out;
	d->have_steps = 1;
	d->in.steps_source = files[0];
	if ((rc = fill_steady(d)))
		goto out;
	/* without the phase split, the per-rank records come from the log */
	if (!d->in.metrics.n) {
		for (size_t i = 0; i < log.steps.n; i++) {
			const struct ts_step *t = &log.steps.v[i];
			struct ts_diag_rank_steps *r = ts_diag_rank(d, t->rank >= 0 ? t->rank : 0);
			struct ts_diag_step s = {
				t->iteration, t->step_ns == TS_NO_INT ? NAN : (double)t->step_ns / 1e6,
				NAN, NAN, NAN, NAN, t->loss, t->grad_norm,
				t->skipped == TS_NO_INT ? -1 : t->skipped > 0,
				t->nan_iters == TS_NO_INT ? -1 : t->nan_iters > 0
			};
			if (t->flags & TS_STEP_NO_LOSS)
				s.loss = NAN;
			if (!r || TS_VEC_PUSH(r->steps, s)) {
				rc = ts_err_set(err, TS_ENOMEM, "out of memory");
				goto out;
			}
		}
	}
out:
	ts_steplog_release(&log);
	return rc;
}

/* Model FLOP rate and MFU/HFU: needs a config, the steady step time and
 * tokens per step; the peak comes from the trace's device (BF16, the
 * usual training precision, named in the output). */
static int rates(struct ts_diag *d, struct ts_err *err)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_mfu u;
	struct ts_gpu_catalog cat;
	struct ts_err e;
	const struct ts_steps_report *r = &d->steps_rep;
	double peak = 0;
	int64_t gpus;

	if (!d->in.configs.n || !d->steady.known || !d->have_steps || !isfinite(r->tokens_per_step))
		return 0;
	ts_err_init(&e);
	ts_model_init(&m);
	if (ts_model_read_config(&m, d->in.configs.v[0], &e) || ts_model_finish(&m, &e))
		return 0; /* a config we cannot use leaves the rate unknown; listed as missing */
	/* sequence length: the model's context (n_positions); sequences per
	 * step: the logged tokens per step over it */
	ts_flops_shape_init(&sh);
	sh.seq = m.max_position > 0 ? m.max_position : 0;
	if (sh.seq > 0)
		sh.gbs = (int64_t)llround(r->tokens_per_step / (double)sh.seq);
	if (sh.seq <= 0 || sh.gbs <= 0 || ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &e))
		return 0;
	gpus = r->gpus > 0 ? r->gpus : (int64_t)(d->ranks.n ? d->ranks.n : 1);
	if (ts_gpu_catalog_init(&cat))
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	for (size_t i = 0; i < d->nprofs && peak <= 0; i++) {
		const struct ts_gpu *g = d->profs[i]->has_gpu ? ts_gpu_find(&cat, d->profs[i]->device) : NULL;
		const char *src;
		if (g && !ts_gpu_peak(g, TS_PREC_BF16, &peak, &src, &e)) {
			char buf[160];
			snprintf(buf, sizeof(buf), "%s BF16 dense %.1f TFLOP/s", g->sku, peak);
			d->rate.peak_name = ts_diag_strdup(d, buf);
		}
	}
	ts_mfu_compute(&f, (int64_t)llround(d->steady.mean_ms * 1e6), gpus, peak, &u);
	d->rate.tflops_per_gpu = u.tflops_per_gpu;
	d->rate.mfu_pct = isfinite(u.mfu) ? 100 * u.mfu : NAN;
	d->rate.hfu_pct = isfinite(u.hfu) ? 100 * u.hfu : NAN;
	{
		char buf[160];
		snprintf(buf, sizeof(buf), "%s, %lld layers, hidden %lld, seq %lld x %lld sequences/step, "
			 "%.3g model FLOPs/step", m.family, (long long)m.layers, (long long)m.hidden,
			 (long long)sh.seq, (long long)sh.gbs, f.per_step);
		d->rate.model_name = ts_diag_strdup(d, buf);
	}
	ts_gpu_catalog_release(&cat);
	return 0;
}

int ts_diag_gather(struct ts_diag *d, char *const *paths, size_t npaths, struct ts_err *err)
{
	struct ts_paths files;
	int rc = 0;

	ts_paths_init(&files);
	if (npaths == 1)
		d->in.run = ts_diag_strdup(d, paths[0]);
	else if (npaths > 1)
		d->in.run = ts_diag_strdup(d, "(several inputs)");
	for (size_t i = 0; i < npaths; i++)
		if ((rc = ts_paths_add(&files, paths[i], WALK_DEPTH, err)))
			goto out;
	for (size_t i = 0; i < files.n; i++) {
		struct ts_detect k;
		const char *f = files.v[i];

		if ((rc = ts_detect_file(f, &k, err)))
			goto out;
		switch (k.kind) {
		case TS_KIND_KINETO_TRACE:
		case TS_KIND_LEGACY_TRACE:
			rc = push_path(d, &d->in.traces, f);
			break;
		case TS_KIND_METRICS_JSONL:
			rc = push_path(d, &d->in.metrics, f);
			break;
		case TS_KIND_LOG_MEGATRON: case TS_KIND_LOG_BRIDGE: case TS_KIND_LOG_NEMO:
		case TS_KIND_LOG_HF: case TS_KIND_LOG_PRIMUS:
			rc = push_path(d, &d->in.logs, f);
			break;
		case TS_KIND_HF_CONFIG:
			rc = push_path(d, &d->in.configs, f);
			break;
		case TS_KIND_CONTRACT:
			rc = push_path(d, &d->in.contracts, f);
			break;
		case TS_KIND_TELEMETRY_SMI: case TS_KIND_TELEMETRY_DMON: case TS_KIND_TELEMETRY_GMI:
			rc = push_path(d, &d->in.telemetry, f);
			break;
		case TS_KIND_LOG_HANG: case TS_KIND_HANG_REPORT: case TS_KIND_FLIGHT_RECORDER:
			rc = push_path(d, &d->in.hang, f);
			break;
		default:
			rc = push_path(d, &d->in.other, f);
			break;
		}
		if (rc) {
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
			goto out;
		}
	}
	/* hang evidence: the whole hang analysis (hang.h) over it */
	for (size_t i = 0; i < d->in.hang.n; i++)
		if ((rc = ts_hang_read_file(&d->hang, d->in.hang.v[i], err)))
			goto out;
	if (d->in.hang.n) {
		if ((rc = ts_hang_analyze(&d->hang, &d->hang_res, err)))
			goto out;
		d->hang_done = 1;
	}
	if (!d->in.traces.n && !d->in.metrics.n && !d->in.logs.n && !d->hang_done) {
		rc = ts_err_set(err, TS_EUSAGE, "no training log, metrics or profiler trace found in %s",
				d->in.run ? d->in.run : "the input");
		goto out;
	}
	for (size_t i = 0; i < d->in.traces.n; i++)
		if ((rc = read_trace(d, d->in.traces.v[i], err)))
			goto out;
	if (d->nprofs) {
		if ((rc = ts_job_analyse(&d->job, d->profs, d->nprofs, err)))
			goto out;
		d->job_done = 1;
	}
	for (size_t i = 0; i < d->in.metrics.n; i++)
		if ((rc = ts_diag_read_phases(d, d->in.metrics.v[i], err)))
			goto out;
	if ((rc = read_steps(d, err)) || (rc = rates(d, err)))
		goto out;
out:
	ts_paths_release(&files);
	return rc;
}

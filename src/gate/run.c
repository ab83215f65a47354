/*
 * run.c - a run as the gate sees it: one point per iteration (ranks
 * merged), its contract, and its steady window.
 *
 * Why a separate model from the step log: A/B and validation need the
 * same iteration on both sides, a single value per iteration however many
 * ranks logged it, and the measurement artefacts (profiler, checkpoint,
 * evaluation intervals) marked so no window ever includes them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/detect.h"
#include "trainscope/gate.h"
#include "trainscope/input.h"
#include "trainscope/logs.h"
#include "trainscope/paths.h"
#include "trainscope/stats.h"

void ts_run_init(struct ts_run *r)
{
	memset(r, 0, sizeof(*r));
	ts_contract_init(&r->contract);
	ts_paths_init(&r->traces);
	ts_model_init(&r->model);
	ts_model_args_init(&r->args);
	r->global_batch = r->tokens_per_step = -1;
	r->peak_dev_bytes = r->peak_host_bytes = NAN;
}

void ts_run_release(struct ts_run *r)
{
	ts_contract_release(&r->contract);
	ts_paths_release(&r->traces);
	TS_VEC_RELEASE(r->pts);
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

static int by_iter_rank(const void *pa, const void *pb)
{
	const struct ts_step *a = *(const struct ts_step *const *)pa;
	const struct ts_step *b = *(const struct ts_step *const *)pb;

	if (a->iteration != b->iteration)
		return a->iteration < b->iteration ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* Merge the step log into one point per iteration. */
static int build_points(struct ts_run *r, const struct ts_steplog *log, struct ts_err *err)
{
	const struct ts_step **order = NULL;
	size_t n = log->steps.n, i = 0;
	int32_t maxrank = -1;

	if (n == 0)
		return ts_err_at(err, TS_EPARSE, r->path, -1, -1,
				 "no step records (expected Megatron/Bridge/NeMo/HF/Primus "
				 "iteration lines or JSONL metrics)");
	order = malloc(n * sizeof(*order));
	if (!order)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++)
		order[k] = &log->steps.v[k];
	ts_sort(order, n, sizeof(*order), by_iter_rank);
	while (i < n) {
		struct ts_run_point p;
		int64_t it = order[i]->iteration;
		int loss_set = 0;

		memset(&p, 0, sizeof(p));
		p.iteration = it;
		p.step_ms = p.loss = p.grad_norm = p.tflops = NAN;
		for (; i < n && order[i]->iteration == it; i++) {
			const struct ts_step *s = order[i];
			if (s->rank > maxrank)
				maxrank = s->rank;
			if (s->step_ns != TS_NO_INT)
				p.step_ms = nanmax(p.step_ms, s->step_ns / 1e6);
			if (s->flags & TS_STEP_LOSS_NONFINITE)
				p.nonfinite = 1;
			if (!loss_set && isfinite(s->loss)) {
				p.loss = s->loss;
				p.grad_norm = isfinite(s->grad_norm) ? s->grad_norm : NAN;
				loss_set = 1;
			}
			if (isinf(s->grad_norm) || (s->nan_iters != TS_NO_INT && s->nan_iters > 0))
				p.nonfinite = 1;
			if (s->skipped != TS_NO_INT && s->skipped > p.skipped)
				p.skipped = s->skipped;
			if (isfinite(s->tflops))
				p.tflops = s->tflops;
			if (s->flags & TS_STEP_AFTER_PROFILER)
				p.excluded |= TS_EXCL_PROFILER;
			if (s->flags & TS_STEP_AFTER_CHECKPOINT)
				p.excluded |= TS_EXCL_CHECKPOINT;
			if (s->flags & TS_STEP_AFTER_EVAL)
				p.excluded |= TS_EXCL_EVAL;
			if (s->global_batch != TS_NO_INT)
				r->global_batch = s->global_batch;
			if (s->tokens != TS_NO_INT)
				r->tokens_per_step = s->tokens;
			r->peak_dev_bytes = nanmax(r->peak_dev_bytes, s->mem_max_alloc_bytes);
			r->peak_host_bytes = nanmax(r->peak_host_bytes, s->rss_max_bytes);
		}
		if (p.nonfinite)
			p.loss = NAN;
		if (TS_VEC_PUSH(r->pts, p)) {
			free(order);
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		}
	}
	free(order);
	for (size_t k = 0; k < log->mem.n; k++)
		r->peak_dev_bytes = nanmax(r->peak_dev_bytes, log->mem.v[k].max_alloc);
	r->nranks = maxrank < 0 ? 1 : maxrank + 1;
	snprintf(r->format, sizeof(r->format), "%s", ts_log_format_name(log->format));
	return 0;
}

/*
 * Iterations a profiler trace captured, from its "ProfilerStep#N" names:
 * torch 2.x numbers them as the iteration, the legacy pre-Kineto exporter
 * (torch 1.x) one lower (../shared/data/traces/cpu/README.txt). Streams the
 * (inflated) file once; appends to *set.
 */
#define PROFILED_MAX 100000
struct i64_vec {
	int64_t *v;
	size_t n, cap;
};

static int scan_profiled(const char *path, int legacy, struct i64_vec *set, struct ts_err *err)
{
	static const char pat[] = "ProfilerStep#";
	struct ts_input in;
	size_t pos = 0;
	int rc;

	if ((rc = ts_input_open(&in, path, err)))
		return rc;
	for (;;) {
		const unsigned char *hit = NULL;
		if (pos < in.len)
			hit = memmem(in.data + pos, in.len - pos, pat, sizeof(pat) - 1);
		if (hit) {
			size_t k = (size_t)(hit - in.data) + sizeof(pat) - 1;
			int64_t v = 0;
			int digits = 0;
			if (k + 20 > in.len && !in.eof) {
				pos = (size_t)(hit - in.data);
				goto more;
			}
			while (k < in.len && digits < 18 && in.data[k] >= '0' && in.data[k] <= '9') {
				v = v * 10 + (in.data[k++] - '0');
				digits++;
			}
			if (digits && set->n < PROFILED_MAX && TS_VEC_PUSH(*set, v + (legacy ? 1 : 0))) {
				rc = ts_err_set(err, TS_ENOMEM, "out of memory");
				break;
			}
			pos = k;
			continue;
		}
		if (in.eof)
			break;
		pos = in.len > sizeof(pat) ? in.len - sizeof(pat) : 0;
more:
		{
			int64_t got = ts_input_more(&in, pos, err);
			if (got < 0) {
				rc = (int)got;
				break;
			}
			pos = 0;
			if (got == 0 && in.eof && !memmem(in.data, in.len, pat, sizeof(pat) - 1))
				break;
		}
	}
	ts_input_release(&in);
	return rc;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Mark profiled iterations, and the one after each captured range (the
 * trace export runs at its start), as profiler artefacts. */
static void mark_profiled(struct ts_run *r, int64_t *it, size_t n)
{
	size_t i = 0, k = 0;

	if (!n)
		return;
	ts_sort(it, n, sizeof(*it), cmp_i64);
	for (size_t q = 0; q < r->pts.n; q++) {
		struct ts_run_point *p = &r->pts.v[q];
		while (i < n && it[i] < p->iteration - 1)
			i++;
		for (k = i; k < n && it[k] <= p->iteration; k++) {
			int follows_range_end = it[k] == p->iteration - 1 &&
						(k + 1 >= n || it[k + 1] > p->iteration);
			if (it[k] == p->iteration || follows_range_end)
				p->excluded |= TS_EXCL_PROFILER;
		}
	}
	r->nprofiled = n;
}

static int is_log_kind(int kind)
{
	return kind == TS_KIND_LOG_MEGATRON || kind == TS_KIND_LOG_BRIDGE ||
	       kind == TS_KIND_LOG_NEMO || kind == TS_KIND_LOG_HF || kind == TS_KIND_LOG_PRIMUS;
}

int ts_run_load(struct ts_run *r, const char *path, struct ts_err *err)
{
	struct ts_paths files;
	struct ts_steplog log;
	struct i64_vec prof = { 0 };
	int *kinds = NULL;
	int rc = 0, njsonl = 0, nlog = 0;

	snprintf(r->path, sizeof(r->path), "%s", path);
	ts_paths_init(&files);
	ts_steplog_init(&log);
	if ((rc = ts_paths_add(&files, path, 1, err)))
		goto out;
	kinds = calloc(files.n ? files.n : 1, sizeof(*kinds));
	if (!kinds) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < files.n; i++) {
		struct ts_detect d;
		if ((rc = ts_detect_file(files.v[i], &d, err)))
			goto out;
		kinds[i] = d.kind;
		njsonl += d.kind == TS_KIND_METRICS_JSONL;
		nlog += is_log_kind(d.kind);
		if (d.kind == TS_KIND_KINETO_TRACE || d.kind == TS_KIND_LEGACY_TRACE) {
			r->has_trace = 1;
			if ((rc = scan_profiled(files.v[i], d.kind == TS_KIND_LEGACY_TRACE,
						&prof, err)) ||
			    (rc = ts_paths_add(&r->traces, files.v[i], 0, err)))
				goto out;
		}
		if (d.kind == TS_KIND_NSYS_SQLITE) {
			/* backend evidence reads it through the nsys reader */
			r->has_trace = 1;
			if ((rc = ts_paths_add(&r->traces, files.v[i], 0, err)))
				goto out;
		}
		if (d.kind == TS_KIND_HF_CONFIG && !r->has_model) {
			struct ts_err merr;
			ts_err_init(&merr);
			ts_model_init(&r->model);
			if (ts_model_read_config(&r->model, files.v[i], &merr) == 0 &&
			    ts_model_finish(&r->model, &merr) == 0) {
				r->has_model = 1;
				snprintf(r->model_path, sizeof(r->model_path), "%s", files.v[i]);
			}
		}
		if (d.kind == TS_KIND_CONTRACT && !r->has_contract) {
			if ((rc = ts_contract_read(&r->contract, files.v[i], err)))
				goto out;
			r->has_contract = 1;
			snprintf(r->contract_path, sizeof(r->contract_path), "%s", files.v[i]);
		}
	}
	/* JSONL metrics carry per-rank times, losses and flags; logs are the
	 * fallback. Mixing both would count every iteration twice. */
	for (size_t i = 0; i < files.n; i++) {
		int use = njsonl ? kinds[i] == TS_KIND_METRICS_JSONL : is_log_kind(kinds[i]);
		if (!use)
			continue;
		if ((rc = ts_steplog_read(&log, files.v[i], err)))
			goto out;
		r->nsources++;
		if (kinds[i] == TS_KIND_LOG_MEGATRON && !r->has_args) {
			/* the arguments block is optional: its absence is not an error */
			struct ts_model from_log;
			struct ts_err merr;
			ts_model_init(&from_log);
			ts_err_init(&merr);
			if (ts_model_read_megatron_args(&from_log, &r->args, files.v[i], &merr) == 0) {
				r->has_args = 1;
				snprintf(r->args_log, sizeof(r->args_log), "%s", files.v[i]);
				if (!r->has_model && ts_model_finish(&from_log, &merr) == 0) {
					r->model = from_log;
					r->has_model = 1;
					snprintf(r->model_path, sizeof(r->model_path), "%s", files.v[i]);
				}
			} else {
				ts_model_args_init(&r->args);
			}
		}
	}
	if (!njsonl && !nlog) {
		rc = ts_err_at(err, TS_EPARSE, path, -1, -1,
			       "no training log or JSONL metrics here (expected Megatron/Bridge/"
			       "NeMo/HF/Primus iteration lines or one JSON object per step)");
		goto out;
	}
	if ((rc = build_points(r, &log, err)))
		goto out;
	mark_profiled(r, prof.v, prof.n);
out:
	TS_VEC_RELEASE(prof);
	free(kinds);
	ts_steplog_release(&log);
	ts_paths_release(&files);
	return rc;
}

void ts_run_health(const struct ts_run *r, int64_t first, int64_t last, int64_t *nonfinite,
		   int64_t *skipped)
{
	*nonfinite = *skipped = 0;
	for (size_t i = 0; i < r->pts.n; i++) {
		const struct ts_run_point *p = &r->pts.v[i];
		if (p->iteration < first || p->iteration > last)
			continue;
		*nonfinite += p->nonfinite;
		*skipped += p->skipped;
	}
}

int ts_run_point_usable(const struct ts_run_point *p)
{
	return isfinite(p->step_ms) && p->iteration > 1 && !p->excluded && !p->nonfinite &&
	       p->skipped == 0;
}

size_t ts_run_window_times(const struct ts_run *r, const struct ts_window *w, double *ms,
			   int64_t *iters, size_t cap)
{
	size_t k = 0;

	for (size_t i = 0; i < r->pts.n && k < cap; i++) {
		const struct ts_run_point *p = &r->pts.v[i];
		if (p->iteration < w->first || p->iteration > w->last || !ts_run_point_usable(p))
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
		if (w->n < 10)
			rc = ts_err_at(err, TS_EUSAGE, r->path, -1, -1,
				       "declared window %lld-%lld has %zu usable timed steps; need "
				       "at least 10", (long long)first, (long long)last, w->n);
		goto out;
	}
	if (n < 10) {
		rc = ts_err_at(err, TS_EUSAGE, r->path, -1, -1,
			       "%zu usable timed steps after dropping iteration 1, profiler, "
			       "checkpoint, evaluation and NaN/skipped steps; need at least 10", n);
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
		if (n - cut < 10) {
			rc = ts_err_at(err, TS_EUSAGE, r->path, -1, -1,
				       "%zu usable timed steps after the warm-up; need at least 10",
				       n - cut);
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

int ts_parse_window(const char *s, int64_t *first, int64_t *last)
{
	char *end;
	long long a, b;

	if (!s)
		return TS_EUSAGE;
	a = strtoll(s, &end, 10);
	if (end == s || (*end != '-' && *end != ':'))
		return TS_EUSAGE;
	s = end + 1;
	b = strtoll(s, &end, 10);
	if (end == s || *end || a < 1 || b < a)
		return TS_EUSAGE;
	*first = a;
	*last = b;
	return 0;
}

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
#include "trainscope/detect.h"
#include "trainscope/diagnose.h"
#include "trainscope/paths.h"
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
		default:
			rc = push_path(d, &d->in.other, f);
			break;
		}
		if (rc) {
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
			goto out;
		}
	}
	if (!d->in.traces.n && !d->in.metrics.n && !d->in.logs.n) {
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
	if (d->in.metrics.n)
		d->in.steps_source = d->in.metrics.v[0];
out:
	ts_paths_release(&files);
	return rc;
}

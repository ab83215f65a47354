/*
 * diff_cli.c - reading a diff side from the command line's paths, and the
 * report's "Diff vs baseline" section.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diff_cli.h"
#include "trace_nsys.h"
#include "trainscope/detect.h"
#include "trainscope/nsys.h"
#include "trainscope/paths.h"

struct ctx_vec {
	struct ts_diff_context *v;
	size_t n, cap;
};

static int is_trace_file(const char *path, struct ts_err *err, int *ok)
{
	struct ts_detect d;

	*ok = 0;
	if (ts_detect_file(path, &d, err))
		return -1;
	*ok = d.kind == TS_KIND_KINETO_TRACE || d.kind == TS_KIND_LEGACY_TRACE ||
	      d.kind == TS_KIND_NSYS_SQLITE;
	return 0;
}

int diff_load_side(struct cli_ctx *ctx, const char *arg, int64_t want, int exact, struct ts_diff_side *s,
		     struct ts_warnings *warns)
{
	struct ts_paths tmp, files;
	struct ts_err err;
	struct trace_nsys_slot *nsl = NULL;
	int rc = 0, found = 0;

	ts_paths_init(&tmp);
	ts_paths_init(&files);
	ts_err_init(&err);
	if (ts_paths_add(&tmp, arg, 2, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	for (size_t i = 0; i < tmp.n; i++) {
		int ok = 1;
		if (!(tmp.n == 1 && strcmp(tmp.v[i], arg) == 0) && is_trace_file(tmp.v[i], &err, &ok)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
		if (ok && ts_paths_add(&files, tmp.v[i], 0, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	}
	if (!files.n) {
		cli_error(ctx, "%s: no profiler trace found", arg);
		rc = EXIT_USAGE;
		goto out;
	}
	if ((rc = trace_nsys_expand(ctx, &files, &nsl)))
		goto out;
	if (!exact && files.n == 1)
		want = -1;
	else if (want < 0)
		want = 0;
	for (size_t i = 0; i < files.n && !found; i++) {
		struct ts_trace t;
		struct ts_trace_opts o;
		int r;
		memset(&o, 0, sizeof(o));
		o.skip_python = 1;
		o.skip_flows = 1;
		o.has_order = 1;
		o.order = (int64_t)i;
		ts_trace_init(&t);
		if (nsl[i].is_nsys) {
			struct ts_nsys_read_opts no;
			memset(&no, 0, sizeof(no));
			r = trace_nsys_read(&nsl[i], files.v[i], &no, &t, &err);
		} else {
			r = ts_trace_read(&t, files.v[i], &o, &err);
		}
		if (!r && t.ev.n == 0)
			r = ts_err_at(&err, TS_EPARSE, files.v[i], (int64_t)t.meta.bytes, -1, "%s",
				      "no trace events");
		if (r) {
			ts_trace_release(&t);
			rc = cli_fail(ctx, &err);
			goto out;
		}
		if (want < 0 || t.meta.rank == want) {
			found = 1;
			r = ts_diff_side_build(s, &t, &err);
			if (!r && t.meta.truncated)
				ts_trace_truncated_warning(warns, files.v[i], t.meta.truncated_at,
							   t.meta.gzip, &s->prof);
			/* what the export lacks, as `trace` says it */
			if (!r && nsl[i].is_nsys)
				(void)ts_nsys_warnings(&nsl[i].joins, nsl[i].null_end, &nsl[i].gaps, files.v[i],
						       warns);
			if (!r) {   /* warns->failed */
				ts_trace_ignored_warning(warns, files.v[i], &t.meta);
				ts_rank_prof_warnings(&s->prof, s->ctx.whole_window, files.v[i], warns);
			}
		}
		ts_trace_release(&t);
		if (r) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	}
	if (!found) {
		cli_error(ctx, "%s: no trace of rank %lld among its %zu trace file(s)", arg,
			  (long long)want, files.n);
		rc = EXIT_USAGE;
	}
out:
	free(nsl);
	ts_paths_release(&tmp);
	ts_paths_release(&files);
	return rc;
}

int diff_fill_report(struct cli_ctx *ctx, struct ts_report *r, const char *base,
		     char *const *run, size_t nrun)
{
	struct ts_diff_side b, c;
	struct ts_diff_result res;
	struct ts_warnings warns;
	struct ts_err err;
	char t[256], d[1400];
	int rc;

	if (nrun != 1) {
		cli_error(ctx, "--baseline without --candidate diffs the traces of one run: give one RUN (got %zu)", nrun);
		return EXIT_USAGE;
	}
	ts_diff_side_init(&b);
	ts_diff_side_init(&c);
	ts_diff_result_init(&res);
	ts_warnings_init(&warns);
	ts_err_init(&err);
	if ((rc = diff_load_side(ctx, base, -1, 0, &b, &warns)) ||
	    (rc = diff_load_side(ctx, run[0], b.ctx.rank, 0, &c, &warns)))
		goto out;
	if (ts_diff_compare(&b, &c, NULL, &res, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ts_diff_warnings(&b, &c, &res, &warns)) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	snprintf(t, sizeof(t), "Compared %zu step%s (aligned by %s)", res.pairs.n,
		 res.pairs.n == 1 ? "" : "s", res.aligned_by);
	snprintf(d, sizeof(d), "baseline %s rank %lld on %s, candidate %s rank %lld on %s",
		 b.ctx.path, (long long)b.ctx.rank, b.ctx.device, c.ctx.path, (long long)c.ctx.rank,
		 c.ctx.device);
	rc = ts_report_add_item(r, TS_REPORT_DIFF, res.same_hardware && !res.context_differs ? TS_REPORT_INFO
										   : TS_REPORT_WARN, t, d);
	if (res.host_clock_only)
		snprintf(t, sizeof(t), "Step time not compared (no GPU step time on both sides): host spans %.3f ms"
			 " to %.3f ms: %s", res.base_mean_ns / 1e6, res.cand_mean_ns / 1e6,
			 ts_diff_verdict_given(res.verdict));
	else if (isnan(res.base_gpu_mean_ns))
		snprintf(t, sizeof(t), "Step time %.3f ms to %.3f ms: %s", res.base_mean_ns / 1e6,
			 res.cand_mean_ns / 1e6, ts_diff_verdict_name(res.verdict));
	else
		snprintf(t, sizeof(t), "GPU step time %.3f ms to %.3f ms: %s", res.base_gpu_mean_ns / 1e6,
			 res.cand_gpu_mean_ns / 1e6, ts_diff_verdict_name(res.verdict));
	if (isnan(res.ci95_low))
		snprintf(d, sizeof(d), "ratio%s %.4f, no interval", res.host_clock_only ? " of the host spans" : "",
			 res.ratio);
	else
		snprintf(d, sizeof(d), "ratio%s %.4f, 95%% CI [%.4f, %.4f] (%s), band +-%.1f%%",
			 res.host_clock_only ? " of the host spans" : "", res.ratio, res.ci95_low, res.ci95_high,
			 res.method, 100 * res.band);
	rc = rc ? rc : ts_report_add_item(r, TS_REPORT_DIFF, res.host_clock_only ? TS_REPORT_WARN : TS_REPORT_INFO,
					  t, d);
	for (int w = 0; w < TS_DW_COUNT && !rc; w++) {
		if (fabs(res.walls[w].delta_ns) < 0.01 * res.base_mean_ns)
			continue;
		snprintf(t, sizeof(t), "Wall %s %+.3f ms/step", ts_diff_wall_name(w), res.walls[w].delta_ns / 1e6);
		snprintf(d, sizeof(d), "%.3f ms to %.3f ms per step", res.walls[w].base_ns / 1e6,
			 res.walls[w].cand_ns / 1e6);
		rc = ts_report_add_item(r, TS_REPORT_DIFF, TS_REPORT_INFO, t, d);
	}
	for (size_t i = 0; i < res.rows.n && i < 8 && !rc; i++) {
		const struct ts_diff_row *x = &res.rows.v[i];
		double dv = x->closes ? x->delta_ns : x->cand.total_ns - x->base.total_ns;
		snprintf(t, sizeof(t), "%.180s %+.3f ms/step", x->base_name ? x->base_name : x->cand_name,
			 dv / 1e6);
		snprintf(d, sizeof(d), "%s, %s, match %s, %.1f to %.1f per step%s", ts_diff_kind_name(x->kind),
			 x->family, ts_diff_match_name(x->match), x->base.count_per_step,
			 x->cand.count_per_step, x->closes ? "" : ", inclusive time");
		rc = ts_report_add_item(r, TS_REPORT_DIFF, TS_REPORT_INFO, t, d);
	}
	if (!rc) {
		snprintf(t, sizeof(t), "Residual %+.3f ms/step", res.residual_ns / 1e6);
		rc = ts_report_add_item(r, TS_REPORT_DIFF, TS_REPORT_INFO, t,
					"step difference minus the rows that close (docs/diff.md)");
	}
	/* the warnings `diff` prints travel into the report */
	if (!rc)
		rc = ts_report_add_warnings(r, &warns);
	if (rc) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
	}
out:
	ts_diff_result_release(&res);
	ts_diff_side_release(&b);
	ts_diff_side_release(&c);
	ts_warnings_release(&warns);
	return rc;
}

void ab_trace_sides_init(struct ab_trace_sides *s)
{
	memset(s, 0, sizeof(*s));
	ts_diff_side_init(&s->b);
	ts_diff_side_init(&s->c);
	ts_err_init(&s->err);
	ts_warnings_init(&s->assumed);
}

void ab_trace_sides_release(struct ab_trace_sides *s)
{
	ts_diff_side_release(&s->b);
	ts_diff_side_release(&s->c);
	ts_warnings_release(&s->assumed);
}

/* The run's trace of the lowest rank its file name gives (rank0 before
 * rank2 before rank10, whatever their order by path), else its first by
 * path. */
static const char *first_trace(const struct ts_run *run)
{
	const char *best = NULL;
	int64_t best_rank = -1;

	for (size_t k = 0; k < run->rm.inputs.n; k++) {
		const char *p = run->rm.inputs.v[k].path;
		int64_t rank = ts_rank_in_name(p);

		if (run->rm.inputs.v[k].role != TS_ROLE_TRACE)
			continue;
		if (!best || (rank >= 0 && (best_rank < 0 || rank < best_rank))) {
			best = p;
			best_rank = rank;
		}
	}
	return best;
}

/* One side as diff reads it (python spans and flows left out). */
static int trace_side(const char *path, struct ts_diff_side *s, struct ts_err *err)
{
	struct ts_trace t;
	struct ts_trace_opts o;
	int rc;

	memset(&o, 0, sizeof(o));
	o.skip_python = 1;
	o.skip_flows = 1;
	ts_trace_init(&t);
	rc = ts_trace_read(&t, path, &o, err);
	if (!rc)
		rc = ts_diff_side_build(s, &t, err);
	ts_trace_release(&t);
	return rc;
}

/* A trace or export left out of the contexts: counted, the first one's
 * error kept. */
static void skipped(struct ab_trace_sides *s, const struct ts_err *err)
{
	if (!s->nskipped++)
		s->skip_err = *err;
}

/* The context of profiler trace `path` from its metadata, appended to v.
 * Returns 0 (a trace that cannot be read is left out, in s's skipped) or
 * TS_ENOMEM. */
static int trace_context(struct ab_trace_sides *s, const char *path, struct ctx_vec *v)
{
	struct ts_trace_opts o;
	struct ts_diff_context c;
	struct ts_trace t;
	struct ts_err err;
	int rc;

	memset(&o, 0, sizeof(o));
	o.meta_only = 1;
	ts_trace_init(&t);
	rc = ts_trace_read(&t, path, &o, &err);
	if (!rc) {
		ts_diff_context_env(&c, &t);
		/* say which of the listed GPUs the device is, where that is a guess */
		if (c.device_assumed) {
			rc = ts_rank_device_assumed_warning(&s->assumed, path, c.device, c.devices_listed);
			snprintf(c.path, sizeof(c.path), "%.400s (GPU 0's: it lists %zu GPUs and "
				 "not the rank's)", path, t.meta.ndevices);
		}
		if (!rc)
			rc = TS_VEC_PUSH(*v, c);
	} else if (rc != TS_ENOMEM) {
		skipped(s, &err);
	}
	ts_trace_release(&t);
	return rc == TS_ENOMEM ? rc : 0;
}

/* The contexts of Nsight Systems export `path`, one per GPU it lists (the
 * path then names the GPU when it lists several), appended to v. Returns 0
 * (an export that cannot be opened is left out, in s's skipped) or
 * TS_ENOMEM. */
static int nsys_contexts(struct ab_trace_sides *s, const char *path, struct ctx_vec *v)
{
	struct ts_nsys x;
	struct ts_err err;
	int rc;

	ts_nsys_init(&x);
	rc = ts_nsys_open(&x, path, &err);
	if (rc && rc != TS_ENOMEM)
		skipped(s, &err);
	for (size_t g = 0; !rc && g < (x.gpus.n ? x.gpus.n : 1); g++) {
		struct ts_diff_context c;
		struct ts_trace t;

		ts_trace_init(&t);
		rc = ts_nsys_meta(&x, x.gpus.n ? x.gpus.v[g].id : -1, &t, &err);
		if (x.gpus.n > 1)
			snprintf(t.path, sizeof(t.path), "%.400s (GPU %d)", path, (int)x.gpus.v[g].id);
		else
			snprintf(t.path, sizeof(t.path), "%s", path);
		if (!rc) {
			ts_diff_context_env(&c, &t);
			rc = TS_VEC_PUSH(*v, c);
		}
		ts_trace_release(&t);
	}
	ts_nsys_close(&x);
	return rc == TS_ENOMEM ? rc : 0;
}

/* The context of every trace of the runs, into *v: first the side's first
 * trace's (`first`, the diff side's when read, else from the metadata of
 * `first_path`, the first run's lowest rank), then every other profiler
 * trace and every GPU of every Nsight Systems export, run by run. Returns
 * 0 or TS_ENOMEM. */
static int side_contexts(struct ab_trace_sides *s, const struct ts_run *runs, size_t n,
			 const struct ts_diff_context *first, const char *first_path, struct ctx_vec *v)
{
	int rc = first ? TS_VEC_PUSH(*v, *first) : first_path ? trace_context(s, first_path, v) : 0;

	if (!rc && first && first->device_assumed)
		rc = ts_rank_device_assumed_warning(&s->assumed, first->path, first->device,
						    first->devices_listed);

	for (size_t r = 0; r < n && !rc; r++)
		for (size_t k = 0; k < runs[r].rm.inputs.n && !rc; k++) {
			const struct ts_run_input *in = &runs[r].rm.inputs.v[k];

			if (in->role == TS_ROLE_TRACE && !(first_path && !strcmp(in->path, first_path)))
				rc = trace_context(s, in->path, v);
			else if (in->role == TS_ROLE_NSYS)
				rc = nsys_contexts(s, in->path, v);
		}
	return rc;
}

/* The environment fields (TS_DCTX_ENV_MASK) that a context of v records
 * differently from the first context of v that records the field: one
 * change per field, its values "VALUE in PATH" written into buf. */
static size_t mixed_changes(const struct ts_diff_context *v, size_t n, struct ts_ctx_change *out,
			    char buf[][2][AB_MIXED_CAP])
{
	size_t k = 0;

	for (int f = 0; f < TS_DCTX_COUNT; f++) {
		size_t ref = n;
		char ta[32], tb[32];

		if (!(TS_DCTX_ENV_MASK >> f & 1u))
			continue;
		for (size_t i = 0; i < n; i++) {
			if (ref == n) {
				if (ts_diff_ctx_value(&v[i], f, ta, sizeof(ta)))
					ref = i;
				continue;
			}
			if (ts_diff_ctx_compare(&v[ref], &v[i], f) != TS_DCTX_DIFFERS)
				continue;
			snprintf(buf[f][0], sizeof(buf[f][0]), "%.40s in %.400s",
				 ts_diff_ctx_value(&v[ref], f, ta, sizeof(ta)), v[ref].path);
			snprintf(buf[f][1], sizeof(buf[f][1]), "%.40s in %.400s",
				 ts_diff_ctx_value(&v[i], f, tb, sizeof(tb)), v[i].path);
			out[k++] = (struct ts_ctx_change){ ts_diff_ctx_label(f), buf[f][0], buf[f][1], NULL };
			break;
		}
	}
	return k;
}

int ab_trace_sides_read(struct ab_trace_sides *s, const struct ts_run *base, size_t nb,
			const struct ts_run *cand, size_t nc)
{
	struct ctx_vec v[2] = { { 0 }, { 0 } };
	int rc = 0;

	s->base_trace = first_trace(&base[0]);
	s->cand_trace = first_trace(&cand[0]);
	if (s->base_trace && s->cand_trace &&
	    ((rc = trace_side(s->base_trace, &s->b, &s->err)) ||
	     (rc = trace_side(s->cand_trace, &s->c, &s->err))) && rc == TS_ENOMEM)
		goto out;
	rc = 0;
	if ((rc = side_contexts(s, base, nb, s->b.ctx.path[0] ? &s->b.ctx : NULL, s->base_trace,
				&v[0])) ||
	    (rc = side_contexts(s, cand, nc, s->c.ctx.path[0] ? &s->c.ctx : NULL, s->cand_trace,
				&v[1])))
		goto out;
	for (int k = 0; k < 2; k++)
		s->nmixed[k] = mixed_changes(v[k].v, v[k].n, s->mixed[k], s->mixed_buf[k]);
	if (v[0].n && v[1].n) {
		s->side[0] = v[0].v[0];
		s->side[1] = v[1].v[0];
		s->nchg = ts_diff_ctx_changes(&s->side[0], &s->side[1], TS_DCTX_ENV_MASK, s->chg, s->buf);
	}
out:
	TS_VEC_RELEASE(v[0]);
	TS_VEC_RELEASE(v[1]);
	return rc;
}

int ab_trace_sides_warnings(const struct ab_trace_sides *s, struct ts_warnings *w)
{
	const struct ts_err *e = &s->skip_err;

	for (size_t i = 0; i < s->assumed.v.n; i++) {
		const struct ts_warning *x = &s->assumed.v.v[i];

		if (ts_warnings_add(w, x->code, x->file, x->offset, x->iteration, "%s", x->message))
			return TS_ENOMEM;
	}
	if (!s->nskipped)
		return 0;
	return ts_warnings_add(w, "trace-context-skipped", e->path[0] ? e->path : NULL, e->offset,
			       TS_NO_INT, "%zu trace%s of the sides could not be read for where they ran"
			       " (the first: %s%s%s): context-differs and context-mixed leave %s out",
			       s->nskipped, s->nskipped == 1 ? "" : "s", e->path, e->path[0] ? ": " : "",
			       e->msg, s->nskipped == 1 ? "it" : "them");
}

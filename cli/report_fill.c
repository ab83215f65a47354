/*
 * report_fill.c - A/B and memory sections of `trainscope report`: the
 * numbers come from the gate and memory modules, unchanged; this file only
 * moves them into the report model.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "report_fill.h"
#include "diff_cli.h"
#include "memplan.h"
#include "trainscope/gate.h"
#include "trainscope/memory.h"

/* Step times of a run's window; *n set, NULL on allocation failure. */
static double *window_ms(const struct ts_run *run, int64_t first, int64_t last, size_t *n,
			 struct ts_err *err)
{
	struct ts_window w;
	double *ms;

	*n = 0;
	if (ts_run_window(run, first, last, &w, err))
		return NULL;
	ms = malloc((w.n ? w.n : 1) * sizeof(*ms));
	if (ms)
		*n = ts_run_window_times(run, &w, ms, NULL, w.n);
	return ms;
}

/* "A: dirname" from a run path (trailing slashes ignored). */
static char *arm_label(struct ts_report *r, const char *tag, const char *path)
{
	size_t n = strlen(path), s;

	while (n > 1 && path[n - 1] == '/')
		n--;
	s = n;
	while (s > 0 && path[s - 1] != '/')
		s--;
	return ts_report_printf(r, "%s: %.*s", tag, (int)(n - s), path + s);
}

int report_fill_ab(struct cli_ctx *ctx, struct ts_report *r, const char *base, const char *cand)
{
	struct ts_run runs[2];
	struct ts_ab_opts o;
	struct ts_ab_result res;
	struct ts_report_ab ab;
	struct ab_trace_sides ts;
	struct ts_warnings warn;
	struct ts_err err;
	double *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	int rc = 0;

	ts_run_init(&runs[0]);
	ts_run_init(&runs[1]);
	ts_ab_result_init(&res);
	ts_ab_opts_init(&o);
	ab_trace_sides_init(&ts);
	ts_warnings_init(&warn);
	ts_err_init(&err);
	if (ts_run_load(&runs[0], base, NULL, &err) || ts_run_load(&runs[1], cand, NULL, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	/* the environment the traces record, as `ab` reads it */
	if (ab_trace_sides_read(&ts, &runs[0], 1, &runs[1], 1)) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	o.trace_ctx = ts.chg;
	o.ntrace_ctx = ts.nchg;
	for (int k = 0; k < 2; k++) {
		o.mixed_ctx[k] = ts.mixed[k];
		o.nmixed_ctx[k] = ts.nmixed[k];
	}
	if (ts_ab_compare(&runs[0], 1, &runs[1], 1, &o, &res, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (res.verdict == TS_AB_INVALID || !isfinite(res.ratio)) {
		cli_error(ctx, "the A/B comparison is invalid: %s",
			  res.invalid.n ? res.invalid.v[0] : "see `trainscope ab`");
		rc = EXIT_GATE;
		goto out;
	}
	a = window_ms(&runs[0], res.win_first, res.win_last, &na, &err);
	b = window_ms(&runs[1], res.win_first, res.win_last, &nb, &err);
	if (!a || !b) {
		rc = err.code ? cli_fail(ctx, &err) : EXIT_INTERNAL;
		goto out;
	}
	memset(&ab, 0, sizeof(ab));
	ab.name_a = arm_label(r, "A", base);
	ab.name_b = arm_label(r, "B", cand);
	ab.a = a;
	ab.b = b;
	ab.na = na;
	ab.nb = nb;
	/* gate reports candidate / baseline mean step time; the chart shows (B - A) / A */
	ab.diff_pct = 100 * (res.ratio - 1);
	ab.ci_lo_pct = 100 * (res.ci95_low - 1);
	ab.ci_hi_pct = 100 * (res.ci95_high - 1);
	ab.verdict = ts_report_printf(r, "%s (band +-%.1f %%, %s; window %lld-%lld; correctness %s)",
				      ts_ab_verdict_name(res.verdict), 100 * res.band, res.method,
				      (long long)res.win_first, (long long)res.win_last,
				      res.correctness_passed ? "passed" : "failed");
	if (ts_report_set_ab(r, &ab)) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
	}
	/* the warnings `ab` prints travel into the report */
	if (ts_ab_warnings(runs, 2, &res, &warn) || ab_trace_sides_warnings(&ts, &warn)) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
	}
	ts_report_add_warnings(r, &warn);   /* r->failed on ENOMEM */
	if (r->failed && !rc) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
	}
out:
	free(a);
	free(b);
	ts_warnings_release(&warn);
	ts_ab_result_release(&res);
	ab_trace_sides_release(&ts);
	ts_run_release(&runs[0]);
	ts_run_release(&runs[1]);
	return rc;
}

/* "key=value,key=value" into the layout; 0 or an exit status. */
static int parse_layout(struct cli_ctx *ctx, const char *spec, struct ts_mem_layout *l)
{
	static const struct { const char *key; size_t off; } ints[] = {
		{ "tp", offsetof(struct ts_mem_layout, tp) }, { "pp", offsetof(struct ts_mem_layout, pp) },
		{ "vpp", offsetof(struct ts_mem_layout, vpp) }, { "cp", offsetof(struct ts_mem_layout, cp) },
		{ "ep", offsetof(struct ts_mem_layout, ep) }, { "etp", offsetof(struct ts_mem_layout, etp) },
		{ "dp", offsetof(struct ts_mem_layout, dp) }, { "mbs", offsetof(struct ts_mem_layout, mbs) },
		{ "gbs", offsetof(struct ts_mem_layout, gbs) }, { "seq", offsetof(struct ts_mem_layout, seq) },
	};
	const char *p = spec;

	while (*p) {
		const char *end = strchr(p, ','), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char key[16], val[32], *stop;
		long long v;
		int done = 0;

		eq = memchr(p, '=', len);
		if (!eq || (size_t)(eq - p) >= sizeof(key) || len - (size_t)(eq - p) - 1 >= sizeof(val) ||
		    eq == p) {
			cli_error(ctx, "--layout: expected key=value in '%.*s'", (int)len, p);
			return EXIT_USAGE;
		}
		memcpy(key, p, (size_t)(eq - p));
		key[eq - p] = 0;
		memcpy(val, eq + 1, len - (size_t)(eq - p) - 1);
		val[len - (size_t)(eq - p) - 1] = 0;
		if (!strcmp(key, "recompute")) {
			int g = mp_parse_recompute(val);
			if (g < 0) {
				cli_error(ctx, "--layout: recompute=%s: none, selective or full", val);
				return EXIT_USAGE;
			}
			l->recompute = g;
			done = 1;
		}
		for (size_t i = 0; !done && i < sizeof(ints) / sizeof(ints[0]); i++) {
			if (strcmp(key, ints[i].key))
				continue;
			v = strtoll(val, &stop, 10);
			if (*stop || stop == val || v < 1 || v > 1LL << 40) {
				cli_error(ctx, "--layout: %s=%s is not a positive integer", key, val);
				return EXIT_USAGE;
			}
			*(int64_t *)((char *)l + ints[i].off) = v;
			done = 1;
		}
		if (!done && (!strcmp(key, "dist_opt") || !strcmp(key, "sp"))) {
			if (strcmp(val, "0") && strcmp(val, "1")) {
				cli_error(ctx, "--layout: %s=%s: 0 or 1", key, val);
				return EXIT_USAGE;
			}
			if (!strcmp(key, "sp"))
				l->sequence_parallel = val[0] == '1';
			else
				l->dist_opt = val[0] == '1';
			done = 1;
		}
		if (!done) {
			cli_error(ctx, "--layout: unknown key '%s' (tp pp vpp cp ep etp dp mbs gbs seq "
				  "recompute dist_opt sp)", key);
			return EXIT_USAGE;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

int report_fill_mem(struct cli_ctx *ctx, struct ts_report *r, const char *model_path,
		    const char *layout, const char *gpu)
{
	struct ts_model m;
	struct ts_model_args args;
	struct ts_mem_layout l;
	struct ts_mem_ctx c;
	struct ts_mem_stage s;
	struct ts_gpu_catalog cat;
	const struct ts_gpu *g = NULL;
	struct ts_err err;
	struct ts_warnings wn;
	double cap = 0;
	int have_args = 0, rc;

	ts_err_init(&err);
	ts_model_init(&m);
	ts_model_args_init(&args);
	ts_mem_layout_init(&l);
	if (ts_gpu_catalog_init(&cat)) {
		cli_error(ctx, "out of memory");
		return EXIT_INTERNAL;
	}
	ts_warnings_init(&wn);
	/* what the model file leaves to defaults or the formulas leave out
	 * travels into the report as memory says it */
	if ((rc = mp_load_model_warn(ctx, model_path, &m, &args, &have_args, &wn)) ||
	    (rc = parse_layout(ctx, layout, &l)) ||
	    (rc = mp_capacity(ctx, &cat, gpu, NULL, 0, &g, &cap)))
		goto out;
	if (ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	ts_mem_peak(&c, &s);
	ts_report_add_warnings(r, &wn);   /* r->failed on ENOMEM */
	ts_report_add_mem(r, "weights", (int64_t)llround(s.weights_bytes));
	if (s.fp8_cache_bytes > 0)
		ts_report_add_mem(r, "FP8 weight cache", (int64_t)llround(s.fp8_cache_bytes));
	ts_report_add_mem(r, "gradients", (int64_t)llround(s.grads_bytes));
	ts_report_add_mem(r, "optimizer state", (int64_t)llround(s.optimizer_bytes));
	ts_report_add_mem(r, "activations", (int64_t)llround(s.activations_bytes));
	ts_report_add_mem(r, "context allowance", (int64_t)llround(s.context_bytes));
	ts_report_add_mem(r, "fragmentation allowance", (int64_t)llround(s.fragmentation_bytes));
	r->mem_capacity_bytes = (int64_t)llround(cap);
	r->mem_title = ts_report_printf(r, "most loaded GPU (pipeline rank %lld) of %s, layout %s%s%s; "
					"trainscope memory estimator", (long long)s.rank, model_path, layout,
					g ? ", device " : "", g ? g->sku : "");
	rc = r->failed ? EXIT_INTERNAL : 0;
out:
	ts_warnings_release(&wn);
	ts_gpu_catalog_release(&cat);
	return rc;
}

/*
 * runrate.c - the model FLOP rate of a run and the logged rate against it
 * (run.h, struct ts_run_rate).
 *
 * Why it exists: validate compared the TFLOP/s/GPU a log prints with the
 * model's, and diagnose recomputed the model's rate with a shape of its
 * own (seq and batch from other sources), so the two could disagree and
 * only validate said when the log's number was off. Here the model, the
 * job's shape and the comparison are decided once, and a mismatch is a
 * warning of the run every command renders.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run_int.h"
#include "trainscope/contract.h"
#include "trainscope/stats.h"

/* A positive contract workload integer, or 0. */
static int64_t contract_int(const struct ts_contract *c, int have, const char *key)
{
	const char *v = have ? ts_contract_get(c, key, NULL) : NULL;
	char *end;
	long long x;

	if (!v)
		return 0;
	x = strtoll(v, &end, 10);
	return end != v && *end == '\0' && x > 0 ? x : 0;
}

int ts_run_rate_log_formula(const struct ts_runmodel *rm)
{
	return rm->log.format == TS_LOG_TITAN ? TS_FORMULA_TITAN : TS_FORMULA_CURRENT;
}

int ts_run_rate_mismatch(const struct ts_runmodel *rm)
{
	const struct ts_run_rate_cmp *c = &rm->rate.window;

	return c->ncompared && c->diff_median > TS_RATE_MAX_DIFF;
}

int ts_run_rate_compare(const struct ts_run_rate *rt, const double *tflops,
			const double *step_ms, size_t n, struct ts_run_rate_cmp *out)
{
	double *logged, *ms, *sgn, sum_ms = 0, F = rt->log_flops.per_step;
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	out->logged_tflops = out->model_tflops = out->diff_median = out->diff_signed = NAN;
	out->formula = -1;
	logged = malloc((n + 1) * sizeof(double));
	ms = malloc((n + 1) * sizeof(double));
	sgn = malloc((n + 1) * sizeof(double));
	if (!logged || !ms || !sgn) {
		free(logged);
		free(ms);
		free(sgn);
		return TS_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (isfinite(tflops[i])) {
			logged[out->nlogged] = tflops[i];
			ms[out->nlogged++] = step_ms[i];
		}
	if (out->nlogged)
		out->logged_tflops = ts_tflops_delivered(logged, ms, out->nlogged);
	for (size_t i = 0; F > 0 && rt->gpus > 0 && i < n; i++) {
		if (!isfinite(tflops[i]) || !(step_ms[i] > 0))
			continue;
		sgn[k] = tflops[i] / (F / (step_ms[i] * 1e-3 * 1e12 * (double)rt->gpus)) - 1;
		logged[k] = fabs(sgn[k]);
		sum_ms += step_ms[i];
		k++;
	}
	out->ncompared = k;
	if (k) {
		out->model_tflops = F * (double)k / (sum_ms * 1e-3 * 1e12 * (double)rt->gpus);
		ts_stats_sort(logged, k);
		out->diff_median = ts_stats_quantile_sorted(logged, k, 0.5);
		ts_stats_sort(sgn, k);
		out->diff_signed = ts_stats_quantile_sorted(sgn, k, 0.5);
	}
	for (int f = 0; k && out->diff_median > TS_RATE_MAX_DIFF && f < TS_FORMULA_COUNT &&
	     out->formula < 0; f++) {
		/* logged / recomputed = F_logged / F_log_formula */
		struct ts_flops alt;
		struct ts_err e;

		ts_err_init(&e);
		if (f == rt->log_formula)
			continue;
		if (ts_flops_compute(&rt->model, &rt->shape, f, &alt, &e) == 0 && alt.per_step > 0 &&
		    fabs((1 + out->diff_signed) * F / alt.per_step - 1) <= TS_RATE_MAX_DIFF)
			out->formula = f;
	}
	free(logged);
	free(ms);
	free(sgn);
	return 0;
}

/* The model: the first config.json that reads, else the arguments
 * block's. */
static void rate_model(struct ts_runmodel *rm)
{
	struct ts_run_rate *rt = &rm->rate;

	for (size_t i = 0; i < rm->inputs.n && !rt->model_from; i++) {
		const struct ts_run_input *in = &rm->inputs.v[i];
		struct ts_err e;

		if (in->role != TS_ROLE_CONFIG)
			continue;
		ts_err_init(&e);
		ts_model_init(&rt->model);
		if (ts_model_read_config(&rt->model, in->path, &e) == 0 &&
		    ts_model_finish(&rt->model, &e) == 0)
			rt->model_from = in->path;
	}
	if (!rt->model_from && rm->has_args_model) {
		rt->model = rm->args_model;
		rt->model_from = rm->args_log;
	}
}

/* The job's shape, by the rule of run.h. */
static void rate_shape(struct ts_runmodel *rm, const struct ts_runmodel_opts *o,
		       const struct ts_contract *c, int have_c)
{
	struct ts_run_rate *rt = &rm->rate;
	struct ts_flops_shape *sh = &rt->shape;
	const struct ts_steps_report *r = &rm->steps;
	int64_t logged_gbs = r->gbs_min > 0 && r->gbs_min == r->gbs_max ? r->gbs_min
			     : !r->gbs_min ? rm->spare_gbs : 0;
	int64_t v;

	ts_flops_shape_init(sh);
	if (rm->has_args)
		ts_flops_shape_from_args(sh, &rm->args);
	if (o->steps.seq > 0) {
		sh->seq = o->steps.seq;
		rt->seq_from = "the --seq option";
	} else if (sh->seq > 0) {
		rt->seq_from = "seq_length in the Megatron arguments";
	} else if ((v = contract_int(c, have_c, "workload.seq_length"))) {
		sh->seq = v;
		rt->seq_from = "workload.seq_length in the contract";
	} else if (logged_gbs > 0 && isfinite(r->tokens_per_step)) {
		double per = r->tokens_per_step / (double)logged_gbs;

		if (per >= 1 && fabs(per - nearbyint(per)) <= 1e-6 * per) {
			sh->seq = (int64_t)nearbyint(per);
			rt->seq_from = "tokens per step over the logged global batch size";
		}
	}
	if (o->steps.gbs > 0) {
		sh->gbs = o->steps.gbs;
		rt->gbs_from = "the --gbs option";
	} else if (sh->gbs > 0) {
		rt->gbs_from = "global_batch_size in the Megatron arguments";
	} else if ((v = contract_int(c, have_c, "workload.global_batch_size"))) {
		sh->gbs = v;
		rt->gbs_from = "workload.global_batch_size in the contract";
	} else if (logged_gbs > 0) {
		sh->gbs = logged_gbs;
		rt->gbs_from = "the logged global batch size";
	} else if (sh->seq > 0 && isfinite(r->tokens_per_step) &&
		   llround(r->tokens_per_step / (double)sh->seq) >= 1) {
		sh->gbs = llround(r->tokens_per_step / (double)sh->seq);
		rt->gbs_from = "tokens per step over seq";
	}
	if (!sh->tp)
		sh->tp = contract_int(c, have_c, "workload.tp");
	if (o->steps.gpus > 0) {
		rt->gpus = o->steps.gpus;
		rt->gpus_from = "the --gpus option";
	} else if (rm->has_args && rm->args.world_size > 0) {
		rt->gpus = rm->args.world_size;
		rt->gpus_from = "world_size in the Megatron arguments";
	} else if ((v = contract_int(c, have_c, "workload.device_count"))) {
		rt->gpus = v;
		rt->gpus_from = "workload.device_count in the contract";
	} else if (r->gpus > 0) {
		rt->gpus = r->gpus;
		rt->gpus_from = "the ranks of the JSONL metrics";
	}
}

/* rt->why: the shape's values no source states. */
static void rate_missing(struct ts_runmodel *rm)
{
	struct ts_run_rate *rt = &rm->rate;
	const char *name[3] = { "seq_length", "global_batch_size", "device_count" };
	int miss[3] = { rt->shape.seq <= 0, rt->shape.gbs <= 0, rt->gpus <= 0 };
	char buf[256];
	size_t len = 0, nmiss = miss[0] + miss[1] + miss[2], k = 0;

	for (int i = 0; i < 3; i++) {
		if (!miss[i])
			continue;
		k++;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
					k == 1 ? "" : k == nmiss ? " and " : ", ", name[i]);
	}
	snprintf(buf + len, sizeof(buf) - len, " %s stated by the Megatron arguments, the "
		 "contract's workload fields or the log", nmiss == 1 ? "is not" : "are not");
	rt->why = ts_arena_strndup(&rm->arena, buf, strlen(buf));
}

static int mismatch_warning(struct ts_runmodel *rm)
{
	const struct ts_run_rate *rt = &rm->rate;
	const struct ts_run_rate_cmp *c = &rt->window;

	return ts_warnings_add(&rm->warnings, "logged-tflops-mismatch", NULL, -1, TS_NO_INT,
			       "The logged TFLOP/s/GPU differs from the model FLOP rate by %+.2f %% "
			       "(median over %zu steps of the window; above 1 %% the model or the "
			       "job's shape does not describe this run, or the log counts FLOPs "
			       "with another formula): the log gives %.1f TFLOP/s/GPU, the model's "
			       "%.4g FLOPs per step (%s formula; model from %s, seq %lld x %lld "
			       "sequences) over the same steps' times on %lld GPUs give %.2f "
			       "TFLOP/s/GPU%s%s.", 100 * c->diff_signed, c->ncompared,
			       c->logged_tflops, rt->log_flops.per_step,
			       ts_formula_name(rt->log_formula), rt->model_from,
			       (long long)rt->shape.seq, (long long)rt->shape.gbs,
			       (long long)rt->gpus, c->model_tflops,
			       c->formula >= 0 ? "; the logged rate matches formula " : "",
			       c->formula >= 0 ? ts_formula_name(c->formula) : "");
}

int ts_run_rate_over(const struct ts_runmodel *rm, int64_t first, int64_t last,
		     struct ts_run_rate_cmp *out)
{
	const struct ts_steps_report *r = &rm->steps;
	double *tf, *ms;
	size_t n = 0;
	int rc;

	tf = malloc((r->n + 1) * sizeof(double));
	ms = malloc((r->n + 1) * sizeof(double));
	if (!tf || !ms) {
		free(tf);
		free(ms);
		return TS_ENOMEM;
	}
	/* the window's usable steps: timed, no artefact (iteration 1 is one) */
	for (size_t i = 0; first != TS_NO_INT && i < r->n; i++)
		if (ts_record_in_window(ts_steps_record_from(r, i), r->iter[i], first, last) &&
		    !r->artefact[i] && isfinite(r->step_ms[i])) {
			tf[n] = r->tflops[i];
			ms[n++] = r->step_ms[i];
		}
	rc = ts_run_rate_compare(&rm->rate, tf, ms, n, out);
	free(tf);
	free(ms);
	return rc;
}

int runmodel_rate(struct ts_runmodel *rm, const struct ts_runmodel_opts *o)
{
	struct ts_run_rate *rt = &rm->rate;
	struct ts_contract c;
	struct ts_err e;
	int have_c = 0, rc = 0;

	ts_contract_init(&c);
	ts_err_init(&e);
	rate_model(rm);
	if (rm->contract)
		have_c = ts_contract_read(&c, rm->contract, &e) == 0;
	rate_shape(rm, o, &c, have_c);
	ts_contract_release(&c);
	if (rt->model_from && (rt->shape.seq <= 0 || rt->shape.gbs <= 0 || rt->gpus <= 0))
		rate_missing(rm);
	else if (rt->model_from &&
		 ts_flops_compute(&rt->model, &rt->shape, TS_FORMULA_CURRENT, &rt->flops, &e))
		rt->why = ts_arena_strndup(&rm->arena, e.msg, strlen(e.msg));
	rt->log_formula = ts_run_rate_log_formula(rm);
	if (rt->log_formula == TS_FORMULA_CURRENT)
		rt->log_flops = rt->flops;
	else if (rt->flops.per_step > 0 &&
		 ts_flops_compute(&rt->model, &rt->shape, rt->log_formula, &rt->log_flops, &e))
		rt->log_why = ts_arena_strndup(&rm->arena, e.msg, strlen(e.msg));
	if (rm->arena.failed)
		return TS_ENOMEM;
	if ((rc = ts_run_rate_over(rm, rm->window.first, rm->window.last, &rt->window)))
		return rc;
	if (ts_run_rate_mismatch(rm))
		rc = mismatch_warning(rm);
	/* the model rate counts what the formulas count: say what they leave out */
	if (rc == 0 && rt->model_from)
		rc = ts_model_unmodelled(&rt->model, rt->model_from, &rm->warnings);
	return rc;
}

/*
 * diagnose.c - the decision: which wall dominates this run, with which
 * numbers, and what else the evidence says (stragglers, stalls, loss
 * health, what is missing).
 *
 * The rules are deliberately simple and written down (diagnose.h and
 * docs/diagnose-report.md): each candidate wall gets a cost as a share of
 * the step, measured from the best evidence available (trace before log),
 * and the largest cost wins. A verdict always comes with the numbers it
 * was made from, so a reader can disagree with it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/diagnose.h"

/* Thresholds (shares of the step). */
#define DATA_SHARE_MIN 0.10     /* data-loader time worth a wall */
#define STALL_EXPLAINED 0.50    /* share of stall excess explained by data-loader time */
#define STRAGGLER_SHARE 0.20    /* forward-time gap between ranks */

const char *ts_diag_vendor_name(enum ts_vendor_kind v)
{
	switch (v) {
	case TS_DIAG_VENDOR_CPU: return "cpu";
	case TS_DIAG_VENDOR_CUDA: return "cuda";
	case TS_DIAG_VENDOR_ROCM: return "rocm";
	case TS_DIAG_VENDOR_MUSA: return "musa";
	default: return "unknown";
	}
}

void ts_diag_init(struct ts_diag *d)
{
	memset(d, 0, sizeof(*d));
	ts_arena_init(&d->arena);
	ts_job_prof_init(&d->job);
	ts_hang_set_init(&d->hang);
	d->straggler_rank = -1;
	d->wall_share_pct = NAN;
	d->rate.tokens_per_s = NAN;
	d->rate.tflops_per_gpu = NAN;
	d->rate.mfu_pct = NAN;
	d->rate.hfu_pct = NAN;
}

void ts_diag_release(struct ts_diag *d)
{
	for (size_t i = 0; i < d->ranks.n; i++)
		TS_VEC_RELEASE(d->ranks.v[i].steps);
	TS_VEC_RELEASE(d->ranks);
	TS_VEC_RELEASE(d->series);
	ts_job_prof_release(&d->job);
	for (size_t i = 0; i < d->nprofs; i++) {
		ts_rank_prof_release(d->profs[i]);
		free(d->profs[i]);
	}
	free(d->profs);
	TS_VEC_RELEASE(d->steady.stalls);
	TS_VEC_RELEASE(d->in.logs);
	TS_VEC_RELEASE(d->in.metrics);
	TS_VEC_RELEASE(d->in.traces);
	TS_VEC_RELEASE(d->in.configs);
	TS_VEC_RELEASE(d->in.telemetry);
	TS_VEC_RELEASE(d->in.contracts);
	TS_VEC_RELEASE(d->in.other);
	TS_VEC_RELEASE(d->in.hang);
	ts_hang_result_release(&d->hang_res);
	ts_hang_set_release(&d->hang);
	TS_VEC_RELEASE(d->evidence);
	TS_VEC_RELEASE(d->findings);
	TS_VEC_RELEASE(d->missing);
	TS_VEC_RELEASE(d->advice);
	ts_arena_release(&d->arena);
	ts_diag_init(d);
}

char *ts_diag_strdup(struct ts_diag *d, const char *s)
{
	return s ? ts_arena_strndup(&d->arena, s, strlen(s)) : NULL;
}

const struct ts_diag_rank_steps *ts_diag_series_rank(const struct ts_diag *d)
{
	int64_t want = d->steps_rep ? d->steps_rep->slowest_rank : -1;

	for (size_t i = 0; want >= 0 && i < d->ranks.n; i++)
		if (d->ranks.v[i].rank == want)
			return &d->ranks.v[i];
	return d->ranks.n ? &d->ranks.v[d->ranks.n - 1] : NULL;
}

struct ts_diag_rank_steps *ts_diag_rank(struct ts_diag *d, int64_t rank)
{
	size_t i = 0;
	struct ts_diag_rank_steps r;

	while (i < d->ranks.n && d->ranks.v[i].rank < rank)
		i++;
	if (i < d->ranks.n && d->ranks.v[i].rank == rank)
		return &d->ranks.v[i];
	if (TS_VEC_RESERVE(d->ranks, d->ranks.n + 1))
		return NULL;
	memmove(&d->ranks.v[i + 1], &d->ranks.v[i], (d->ranks.n - i) * sizeof(r));
	memset(&d->ranks.v[i], 0, sizeof(r));
	d->ranks.v[i].rank = rank;
	d->ranks.n++;
	return &d->ranks.v[i];
}

int ts_diag_add_profile(struct ts_diag *d, struct ts_rank_prof *p)
{
	struct ts_rank_prof **v = realloc(d->profs, (d->nprofs + 1) * sizeof(*v));

	if (!v)
		return TS_ENOMEM;
	d->profs = v;
	d->profs[d->nprofs++] = p;
	return 0;
}

static enum ts_vendor_kind vendor_kind(int v)
{
	switch (v) {
	case TS_VENDOR_CPU: return TS_DIAG_VENDOR_CPU;
	case TS_VENDOR_CUDA: return TS_DIAG_VENDOR_CUDA;
	case TS_VENDOR_ROCM: return TS_DIAG_VENDOR_ROCM;
	case TS_VENDOR_MUSA: return TS_DIAG_VENDOR_MUSA;
	default: return TS_DIAG_VENDOR_UNKNOWN;
	}
}

/* The device vendor wins over CPU-only windows of the same job. */
enum ts_vendor_kind ts_diag_vendor(const struct ts_diag *d)
{
	enum ts_vendor_kind v = TS_DIAG_VENDOR_UNKNOWN;

	for (size_t i = 0; i < d->nprofs; i++) {
		enum ts_vendor_kind k = vendor_kind(d->profs[i]->vendor);
		if (k > v)
			v = k;
	}
	return v;
}

/* ----------------------------------------------------------- items */

static int add_item(struct ts_diag *d, int which, int level, const char *title,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int add_item(struct ts_diag *d, int which, int level, const char *title,
		    const char *fmt, ...)
{
	struct ts_diag_item it;
	struct ts_sb sb;
	va_list ap;
	int rc = 0;

	ts_sb_init(&sb);
	if (fmt) {
		va_start(ap, fmt);
		ts_sb_vaddf(&sb, fmt, ap);
		va_end(ap);
	}
	it.level = level;
	it.title = ts_diag_strdup(d, title);
	it.detail = fmt ? ts_arena_strndup(&d->arena, sb.buf, sb.len) : NULL;
	if (!it.title || (fmt && !it.detail) || sb.failed) {
		rc = TS_ENOMEM;
		goto out;
	}
	switch (which) {
	case TS_REPORT_EVIDENCE: rc = TS_VEC_PUSH(d->evidence, it); break;
	case TS_REPORT_FINDINGS: rc = TS_VEC_PUSH(d->findings, it); break;
	case TS_REPORT_MISSING: rc = TS_VEC_PUSH(d->missing, it); break;
	default: rc = TS_VEC_PUSH(d->advice, it); break;
	}
out:
	if (rc)
		d->failed = 1;
	ts_sb_release(&sb);
	return rc;
}

#define EVID(...) add_item(d, TS_REPORT_EVIDENCE, TS_REPORT_INFO, __VA_ARGS__)

/* ------------------------------------------------------------ helpers */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of the finite values in v[0..n) (v is reordered); NaN if none. */
static double median_inplace(double *v, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			v[m++] = v[i];
	if (!m)
		return NAN;
	ts_sort(v, m, sizeof(*v), cmp_double);
	return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Stalls are sorted by ts_diag_analyse(), so this is a binary search. */
static int is_stall(const struct ts_diag *d, int64_t it)
{
	return d->steady.stalls.n &&
	       bsearch(&it, d->steady.stalls.v, d->steady.stalls.n, sizeof(it), cmp_i64) != NULL;
}

/* One of the steady window's steps (ts_steps_in_window: profiler,
 * checkpoint and evaluation steps inside its range are not), or any step
 * when there is no window; evidence built without a steps analysis has
 * only the window's range. */
static int in_window(const struct ts_diag *d, int64_t it)
{
	if (!d->steady.known)
		return 1;
	if (!d->steps_rep)
		return it >= d->steady.first && it <= d->steady.last;
	return ts_steps_in_window(d->steps_rep, it);
}

/* ------------------------------------------------------ candidate costs */

struct cost {
	double share;   /* of the step, 0..1; NaN unknown: the measured share */
	double weight;  /* what the verdict compares: the share, or a rule's floor */
};

/* Data wall from the log: data-loader time over the steady window's steps
 * (its stalls included) as a share of their step time, both of the run's
 * series (ts_steps_merge: each iteration's step time is its slowest
 * rank's, the data-loader time that rank's), as steps' phases take them. */
static struct cost data_cost_log(struct ts_diag *d, int emit)
{
	double sum_step = 0, sum_data = 0, st_step = 0, st_data = 0, ex = 0, ex_data = 0;
	size_t n = 0, nst = 0, nsteady = 0;
	double steady_med = d->steady.known ? d->steady.median_ms : NAN;
	double steady_data = 0;
	struct cost c = { NAN, NAN };

	for (size_t i = 0; i < d->series.n; i++) {
		const struct ts_diag_step *s = &d->series.v[i];
		double data_ms = s->data_ms;

		if (!isfinite(s->step_ms) || !isfinite(data_ms))
			continue;
		if (!in_window(d, s->iteration))
			continue;
		sum_step += s->step_ms;
		sum_data += data_ms;
		n++;
		if (is_stall(d, s->iteration)) {
			st_step += s->step_ms;
			st_data += data_ms;
			nst++;
			if (isfinite(steady_med)) {
				ex += s->step_ms - steady_med;
				ex_data += data_ms;
			}
		} else {
			steady_data += data_ms;
			nsteady++;
		}
	}
	if (!n || !(sum_step > 0))
		return c;
	c.share = c.weight = sum_data / sum_step;
	/* stalls the data loader explains are a data wall even when rare: the
	 * verdict weighs them at the wall's floor, the share stays measured */
	if (nst && ex > 0 && ex_data / ex >= STALL_EXPLAINED)
		c.weight = fmax(c.share, DATA_SHARE_MIN);
	if (emit) {
		EVID(d->steady.known ? "data-loader time over the steady window, stalls included (log)"
				     : "data-loader time over the run (log)",
		     "%.1f ms of %.1f ms step time = %.1f %% over %zu iterations", sum_data, sum_step,
		     100 * sum_data / sum_step, n);
		if (nst)
			EVID("stalled iterations (log)",
			     "%zu stalls: mean step %.1f ms vs steady median %.1f ms (+%.1f ms); data-loader "
			     "time on them %.1f ms, %.0f %% of the excess", nst, st_step / (double)nst,
			     steady_med, ex / (double)nst, st_data / (double)nst,
			     ex > 0 ? 100 * ex_data / ex : 0.0);
		if (nsteady && d->steady.known)
			EVID("data-loader time on steady iterations (log)", "mean %.2f ms per step",
			     steady_data / (double)nsteady);
	}
	return c;
}

/* Straggler from logs: a rank whose forward time (before the first
 * gradient collective) exceeds the others' median. */
static struct cost straggler_cost_log(struct ts_diag *d, int emit)
{
	struct cost c = { NAN, NAN };
	double fwd[64], step = 0, med, mx = -INFINITY;
	int64_t mx_rank = -1;
	size_t nr = 0;

	for (size_t i = 0; i < d->ranks.n && nr < 64; i++) {
		const struct ts_diag_rank_steps *r = &d->ranks.v[i];
		double sf = 0, ss = 0;
		size_t n = 0;
		for (size_t k = 0; k < r->steps.n; k++) {
			const struct ts_diag_step *s = &r->steps.v[k];
			if (!isfinite(s->fwd_ms) || !isfinite(s->step_ms) || !in_window(d, s->iteration) ||
			    is_stall(d, s->iteration))
				continue;
			sf += s->fwd_ms;
			ss += s->step_ms;
			n++;
		}
		if (!n)
			continue;
		fwd[nr++] = sf / (double)n;
		step += ss / (double)n;
		if (sf / (double)n > mx) {
			mx = sf / (double)n;
			mx_rank = r->rank;
		}
	}
	if (nr < 2)
		return c;
	step /= (double)nr;
	{
		double tmp[64];
		memcpy(tmp, fwd, nr * sizeof(double));
		med = median_inplace(tmp, nr);
		/* with two ranks the median is the mean; compare with the other rank */
		if (nr == 2)
			med = fmin(fwd[0], fwd[1]);
	}
	c.share = c.weight = (mx - med) / step;
	if (c.share >= STRAGGLER_SHARE && d->straggler_rank < 0) {
		d->straggler_rank = mx_rank;
		d->straggler_excess_ms = mx - med;
	}
	if (emit)
		EVID("forward time per rank (log)",
		     "rank %lld: %.1f ms per step in forward vs %.1f ms on the other ranks (+%.1f ms, "
		     "%.0f %% of the %.1f ms step)", (long long)mx_rank, mx, med, mx - med,
		     100 * c.share, step);
	return c;
}

/* ------------------------------------------------------------ findings */

/* The loss health over the run's series (ts_steps_merge: each iteration's
 * loss is the lowest rank's that logs one, its NaN and skipped counts any
 * rank's), the records the steps analysis judges. */
static int loss_health(struct ts_diag *d)
{
	size_t nonfinite = 0, skipped = 0, nanit = 0, nloss = 0, gn_bad = 0;
	double first = NAN, last = NAN;
	int64_t first_bad = -1;
	char at[96], who[1200];

	if (!d->series.n)
		return 0;
	for (size_t i = 0; i < d->series.n; i++) {
		const struct ts_diag_step *s = &d->series.v[i];

		if (s->skipped > 0)
			skipped++;
		if (s->nan > 0)
			nanit++;
		if (isnan(s->loss) && s->nan <= 0 && s->skipped <= 0)
			continue; /* not logged */
		nloss++;
		if (!isfinite(s->loss)) {
			nonfinite++;
			if (first_bad < 0)
				first_bad = s->iteration;
			continue;
		}
		if (isinf(s->grad_norm))
			gn_bad++;
		if (isnan(first))
			first = s->loss;
		last = s->loss;
	}
	/* the steps analysis holds the run's one loss-health verdict (steps.h):
	 * diagnose reports it, with its cause and first iteration */
	if (d->have_steps) {
		const struct ts_loss_health *h = &d->steps_rep->health;

		if (h->verdict == TS_LOSS_NONFINITE)
			return add_item(d, TS_REPORT_FINDINGS, TS_REPORT_BAD, "loss health: non-finite",
					"non-finite %s (%s%s); %lld iterations with non-finite "
					"evidence, %lld skipped",
					ts_runmodel_span_words(d->rm, "from", "from within",
							       h->first_bad_possible,
							       h->first_bad_iteration, at, sizeof(at)),
					ts_loss_cause_name(h->cause),
					ts_runmodel_first_bad_words(d->rm, who, sizeof(who)),
					(long long)h->nbad_iterations,
					(long long)h->ev[TS_LOSS_CAUSE_SKIPPED].iterations);
		if (h->verdict == TS_LOSS_MISSING && h->first_bad_iteration != TS_NO_INT)
			return add_item(d, TS_REPORT_FINDINGS, TS_REPORT_BAD, "loss health: missing",
					"the loss is missing %s (%s) while iterations go on",
					ts_runmodel_span_words(d->rm, "from", "from within",
							       h->first_bad_possible,
							       h->first_bad_iteration, at, sizeof(at)),
					ts_loss_cause_name(h->cause));
	}
	if (nonfinite && first_bad >= 0)
		return add_item(d, TS_REPORT_FINDINGS, TS_REPORT_BAD, "loss health: not finite",
				"%zu non-finite loss values (first at iteration %lld), %zu NaN iterations, "
				"%zu skipped iterations reported", nonfinite, (long long)first_bad, nanit, skipped);
	if (nonfinite || nanit || skipped)
		return add_item(d, TS_REPORT_FINDINGS, TS_REPORT_BAD, "loss health: not finite",
				"%zu non-finite loss values, %zu NaN iterations, %zu skipped iterations "
				"reported", nonfinite, nanit, skipped);
	if (!nloss)
		return add_item(d, TS_REPORT_MISSING, TS_REPORT_WARN, "loss values",
				"no loss in the log or metrics: loss health cannot be judged; log `lm loss` "
				"(Megatron) or a `loss` field per step");
	return add_item(d, TS_REPORT_FINDINGS, TS_REPORT_INFO, "loss health: finite",
			"%zu logged losses all finite, 0 skipped, 0 NaN iterations; loss %.4f at the first "
			"logged iteration, %.4f at the last%s", nloss, first, last,
			gn_bad ? "; some grad norms are infinite" : "");
}

static void stall_finding(struct ts_diag *d)
{
	struct ts_sb sb;

	if (!d->steady.stalls.n)
		return;
	ts_sb_init(&sb);
	for (size_t i = 0; i < d->steady.stalls.n && i < 24; i++)
		ts_sb_addf(&sb, "%s%lld", i ? ", " : "", (long long)d->steady.stalls.v[i]);
	if (d->steady.stalls.n > 24)
		ts_sb_adds(&sb, ", ...");
	if (d->steady.stall_period)
		ts_sb_addf(&sb, " (every %zu iterations)", d->steady.stall_period);
	/* a warning when they are worth the run's stalls warning (steps.h) */
	add_item(d, TS_REPORT_FINDINGS,
		 !d->steps_rep || (d->steps_rep->warnings & TS_WARN_STALLS) ? TS_REPORT_WARN
									       : TS_REPORT_INFO,
		 "stalls", "%zu %s out from %s neighbours: %s", d->steady.stalls.n,
		 d->steady.stalls.n == 1 ? "iteration stands" : "iterations stand",
		 d->steady.stalls.n == 1 ? "its" : "their", sb.buf);
	ts_sb_release(&sb);
}

static void missing_evidence(struct ts_diag *d)
{
	int have_data = 0;

	for (size_t i = 0; i < d->series.n && !have_data; i++)
		have_data = isfinite(d->series.v[i].data_ms);
	if (!d->nprofs)
		add_item(d, TS_REPORT_MISSING, TS_REPORT_WARN, "profiler trace",
			       "no trace: the wall is judged from the log alone. Add a scheduled profiler "
			       "around the training loop, outside the measured window:\n"
			       "  prof = torch.profiler.profile(\n"
			       "      activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],  # MUSA: ProfilerActivity.MUSA\n"
			       "      schedule=torch.profiler.schedule(skip_first=20, wait=0, warmup=2, active=5, repeat=1),\n"
			       "      on_trace_ready=torch.profiler.tensorboard_trace_handler(\"traces\", worker_name=f\"rank{rank}\", use_gzip=True),\n"
			       "      record_shapes=True)\n"
			       "  prof.start(); ... call prof.step() at the top of every iteration ...; prof.stop()");
	if (d->series.n && !have_data)
		add_item(d, TS_REPORT_MISSING, TS_REPORT_INFO, "per-step data-loader time",
			       "the log does not split the step: log the time spent in next(data_iterator) "
			       "per step (JSONL `data_ms`) or Megatron timers (--timing-log-level 1) so a data "
			       "wall can be seen without a trace");
	if (!d->in.configs.n && d->rm && d->rm->has_args && !d->rm->has_args_model)
		add_item(d, TS_REPORT_MISSING, TS_REPORT_INFO, "model config",
			       "the Megatron arguments block of %s does not give the model shape (%s): "
			       "TFLOP/s/GPU and MFU%s need it; put the Hugging Face config.json in the "
			       "run directory", d->rm->args_log, d->rm->args_model_why,
			       d->have_steps && isfinite(d->steps_rep->tflops_mean)
			       ? " and a check of the log's own TFLOP/s/GPU" : "");
	else if (!d->in.configs.n && !(d->rm && d->rm->has_args_model))
		add_item(d, TS_REPORT_MISSING, TS_REPORT_INFO, "model config",
			       d->have_steps && isfinite(d->steps_rep->tflops_mean)
			       ? "no model config: the log's own TFLOP/s/GPU is shown, but MFU and a "
				 "check of that rate need the model shape; put the Hugging Face "
				 "config.json (or the Megatron arguments block) in the run directory"
			       : "no model config: TFLOP/s/GPU and MFU need the model shape; put the Hugging "
				 "Face config.json (or the Megatron arguments block) in the run directory");
	if (d->rm && d->rm->rate.model_from && d->rm->rate.why && d->steady.known)
		add_item(d, TS_REPORT_MISSING, TS_REPORT_INFO, "job shape",
			       "the model is known, but model TFLOP/s and MFU also need the job's "
			       "shape: %s (seq_length, global_batch_size and world_size in a Megatron "
			       "arguments block, the contract's workload fields, or a `tokens` field in "
			       "the JSONL metrics with the logged global batch size)", d->rm->rate.why);
	if (!d->steady.known)
		add_item(d, TS_REPORT_MISSING, TS_REPORT_INFO, "steady-state window",
			       !d->have_steps
			       ? "no training log or metrics: the steady-state step time and its CI need "
				 "per-iteration step times (a Megatron or NeMo log, or JSONL metrics "
				 "with a step time)"
			       : d->steps_rep && (d->steps_rep->warnings & TS_WARN_NO_TIME)
			       ? "the step records carry no step times (an HF Trainer log has none): "
				 "log a step time per iteration (JSONL metrics with a step time, or "
				 "Megatron's `elapsed time per iteration`) for a steady-state window"
			       : "too few logged iterations for a steady-state window and a CI: log every "
				 "iteration (--log-interval 1) and run at least 50 iterations");
	if (d->ranks.n < 2 && d->job.nranks < 2 && d->in.traces.n + d->in.metrics.n > 0)
		add_item(d, TS_REPORT_MISSING, TS_REPORT_INFO, "other ranks",
			       "evidence from one rank only: stragglers cannot be seen; keep every rank's "
			       "trace (worker_name=f\"rank{rank}\") or per-rank metrics");
}

/* --------------------------------------------------------------- verdict */

/* Evidence lines of the trace verdict: profile.h writes them as one
 * string of "; "-separated clauses. */
static void trace_evidence(struct ts_diag *d)
{
	const struct ts_verdict *v = &d->job.wall;
	char clauses[TS_EVIDENCE_MAX];

	/* profile.h joins its clauses with "; ": one per line reads better */
	{
		size_t o = 0;
		for (const char *p = v->evidence; *p && o + 1 < sizeof(clauses); p++) {
			if (p[0] == ';' && p[1] == ' ') {
				clauses[o++] = '\n';
				p++;
			} else {
				clauses[o++] = *p;
			}
		}
		clauses[o] = 0;
	}
	EVID("trace verdict", "%s: %.1f %% of the window%s%s", ts_wall_name(v->wall), 100 * v->share,
	     clauses[0] ? "\n" : "", clauses);
	for (size_t i = 0; i < d->nprofs; i++) {
		const struct ts_rank_prof *p = d->profs[i];
		if (p->window_ns <= 0)
			continue;
		if (p->has_gpu)
			EVID("device time (trace)",
			     "rank %lld over %.2f ms: busy %.2f ms (%.1f %%), compute %.2f ms, exposed "
			     "communication %.2f ms (%.1f %%), exposed memcpy %.2f ms (%.1f %%), idle %.2f ms "
			     "(%.1f %%)", (long long)p->rank, (double)p->window_ns / 1e6,
			     (double)p->busy_ns / 1e6, 100.0 * (double)p->busy_ns / (double)p->window_ns,
			     (double)p->compute_ns / 1e6, (double)p->exposed_comm_ns / 1e6,
			     100.0 * (double)p->exposed_comm_ns / (double)p->window_ns,
			     (double)p->exposed_memcpy_ns / 1e6,
			     100.0 * (double)p->exposed_memcpy_ns / (double)p->window_ns,
			     (double)p->idle_ns / 1e6, 100.0 * (double)p->idle_ns / (double)p->window_ns);
		else if (p->steps.n)
			EVID("CPU time (trace)",
			     "rank %lld, %zu profiled steps over %.2f ms: data loader %.2f ms (%.1f %%), "
			     "collectives %.2f ms (%.1f %%), operators %.2f ms", (long long)p->rank,
			     p->steps.n, (double)p->window_ns / 1e6, (double)p->data_ns / 1e6,
			     100.0 * (double)p->data_ns / (double)p->window_ns, (double)p->comm_ns / 1e6,
			     100.0 * (double)p->comm_ns / (double)p->window_ns, (double)p->host_busy_ns / 1e6);
	}
	/* the outlier steps say where the time went, step by step */
	for (size_t i = 0; i < d->nprofs && i < 4; i++) {
		const struct ts_rank_prof *p = d->profs[i];
		for (size_t k = 0; k < p->steps.n; k++) {
			const struct ts_step_prof *s = &p->steps.v[k];
			if (!s->outlier)
				continue;
			EVID("slow step (trace)", "rank %lld iteration %lld: %.1f ms (median %.1f ms), data "
			     "loader %.1f ms, communication %.1f ms%s%s", (long long)p->rank,
			     (long long)s->step, (double)s->dur_ns / 1e6, (double)p->median_step_ns / 1e6,
			     (double)s->data_ns / 1e6, (double)s->comm_ns / 1e6, s->reason[0] ? "; " : "",
			     s->reason);
		}
	}
	/* the verdict already carries the first straggler's evidence */
	for (size_t i = v->wall == TS_WALL_STRAGGLER; i < d->job.stragglers.n; i++)
		EVID("straggler (trace)", "%s", d->job.stragglers.v[i].evidence);
}

int ts_diag_analyse(struct ts_diag *d)
{
	struct cost data_l, strag_l;
	double best = NAN;

	if (d->steady.stalls.n)
		ts_sort(d->steady.stalls.v, d->steady.stalls.n, sizeof(*d->steady.stalls.v), cmp_i64);
	data_l = data_cost_log(d, 0);
	strag_l = straggler_cost_log(d, 0);

	d->wall_known = 0;
	if (d->job_done && d->job.n && d->job.wall.wall != TS_WALL_UNDETERMINED) {
		d->wall_known = 1;
		d->wall = d->job.wall.wall;
		best = d->job.wall.share;
		if (d->job.stragglers.n) {
			d->straggler_rank = d->job.stragglers.v[0].rank;
			d->straggler_excess_ms = (double)d->job.stragglers.v[0].late_p50_ns / 1e6;
		}
	} else {
		/* log rules: the larger cost above its threshold; the share
		 * reported is the measured one */
		double weight = NAN;

		if (isfinite(data_l.weight) && data_l.weight >= DATA_SHARE_MIN) {
			d->wall_known = 1;
			d->wall = TS_WALL_DATA;
			best = data_l.share;
			weight = data_l.weight;
		}
		if (isfinite(strag_l.weight) && strag_l.weight >= STRAGGLER_SHARE &&
		    !(isfinite(weight) && weight >= strag_l.weight)) {
			d->wall_known = 1;
			d->wall = TS_WALL_STRAGGLER;
			best = strag_l.share;
		}
	}
	if (d->wall_known && isfinite(best) && best > 1) {
		/* a part larger than its whole is an artefact of the input (a
		 * truncated or partial trace), never a share to print */
		if (d->rm && ts_warnings_add(&d->rm->warnings, "share-over-whole", NULL, -1, TS_NO_INT,
					     "The %s wall comes out at %.1f %% of the step, more than "
					     "the whole step (a truncated or partial trace?): its share "
					     "is not reported.", ts_wall_name(d->wall), 100 * best))
			return TS_ENOMEM;
		best = NAN;
	}
	d->wall_share_pct = d->wall_known && isfinite(best) ? 100 * best : NAN;
	{
		int t = d->nprofs > 0, l = d->ranks.n > 0;
		d->wall_basis = t && l ? "trace and log" : t ? "trace" : l ? "log" : NULL;
	}

	if (d->job_done && d->job.n)
		trace_evidence(d);
	if (isfinite(data_l.share) && (!d->wall_known || d->wall == TS_WALL_DATA ||
				       data_l.weight >= DATA_SHARE_MIN))
		data_cost_log(d, 1);
	if (isfinite(strag_l.share) && (d->wall_known && d->wall == TS_WALL_STRAGGLER))
		straggler_cost_log(d, 1);
	/* the window's stalls and their share of the window's time: the
	 * stalls warning's and validate's one number, never the share of
	 * every outlier over the whole run */
	if (d->have_steps && d->steady.stalls.n && isfinite(d->steps_rep->win_stall_share) &&
	    (!d->wall_known || d->wall == TS_WALL_DATA))
		EVID("cost of the stalls (log)", "the %zu stalling steps cost %.1f %% of the "
		     "window's time%s", d->steps_rep->win_nstalls,
		     100 * d->steps_rep->win_stall_share, d->steady.stall_period ?
		     "; they recur at a fixed period, the signature of one slow sample or shard in the "
		     "input pipeline (a data-loader split or a trace would confirm it)" : "");
	if (!d->wall_known)
		EVID("not enough evidence", "%s",
		     d->nprofs ? "the trace does not separate compute, communication and host "
				 "overhead in this window; see the missing evidence below"
			       : "the log alone does not separate compute, communication and host "
				 "overhead; see the missing evidence below");

	if (d->straggler_rank >= 0)
		add_item(d, TS_REPORT_FINDINGS, TS_REPORT_BAD, "straggler",
			 "rank %lld is the straggler: the other ranks wait %.1f ms per step for it",
			 (long long)d->straggler_rank, d->straggler_excess_ms);
	else if (d->job.nranks >= 2 || isfinite(strag_l.share))
		add_item(d, TS_REPORT_FINDINGS, TS_REPORT_INFO, "no straggler",
			 "%s", isfinite(strag_l.share) ?
			 "ranks compared; none stands out (forward time within 20 % of the step)" :
			 "ranks compared in the trace; none arrives late at the collectives");
	stall_finding(d);
	loss_health(d);
	missing_evidence(d);
	ts_diag_advise(d, d->wall_known, d->wall, ts_diag_vendor(d));
	return d->failed ? TS_ENOMEM : 0;
}

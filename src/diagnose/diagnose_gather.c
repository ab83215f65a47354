/*
 * diagnose_gather.c - from the paths a user gives (usually one run
 * directory) to the evidence struct the verdict works on.
 *
 * Every file is classified by content (detect.h), never by name, and
 * handed to the reader for its kind: traces to the trace reader and the
 * per-rank profile (profile.h); logs and metrics come read and analysed
 * by the run model (run.h: the step series with its per-rank records and
 * phase split, resumed segments resolved), model configs to the model
 * reader and FLOPs (model.h,
 * flops.h). What is not there is recorded so the report can say how to
 * collect it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include "trainscope/detect.h"
#include "trainscope/diagnose.h"
#include "trainscope/flops.h"
#include "trainscope/gpus.h"
#include "trainscope/logs.h"
#include "trainscope/model.h"
#include "trainscope/preflight.h"
#include "trainscope/taxonomy.h"
#include "trainscope/telemetry.h"
#include "trainscope/paths.h"
#include "trainscope/steps.h"
#include "trainscope/trace.h"
#include "trainscope/nsys.h"

static int push_path(struct ts_diag *d, void *vec, const char *path)
{
	TS_VEC(char *) *v = vec;
	char *s = ts_diag_strdup(d, path);

	if (!s || TS_VEC_PUSH(*v, s))
		return TS_ENOMEM;
	return 0;
}

/* The index of the run's warning code about file, or w->v.n (the run
 * model may have seen a trace's cut while scanning it). */
static size_t find_warning(const struct ts_warnings *w, const char *code, const char *file)
{
	for (size_t i = 0; i < w->v.n; i++)
		if (strcmp(w->v.v[i].code, code) == 0 && w->v.v[i].file &&
		    strcmp(w->v.v[i].file, file) == 0)
			return i;
	return w->v.n;
}

/* Options of one trace's analysis: diagnose reads its traces one at a
 * time, so with a second CPU the analysis takes it (trace does the same
 * when it has fewer files than threads; the result is the same). */
static struct ts_prof_opts prof_opts(void)
{
	struct ts_prof_opts po;

	memset(&po, 0, sizeof(po));
	po.threads = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
	return po;
}

/* Case-insensitive (ASCII): does s contain w (lower case)? */
static int has_part(const char *s, const char *w)
{
	return ts_name_contains(s, strlen(s), w);
}

/* A kernel or op name that only mixture-of-experts models run: Megatron's
 * and Transformer Engine's moe_* ops and kernels, expert GEMMs, DeepEP and
 * token dispatch. Generic operators an MoE layer also uses (topk,
 * scatter_add, index_add, permute) are not evidence: dense models run them
 * too. */
static int moe_name(const char *s)
{
	static const char *const parts[] = { "moe", "expert", "deepep", "token_dispatch",
					     "tokendispatch" };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (has_part(s, parts[i]))
			return 1;
	return 0;
}

/* MoE evidence from a trace: the first event name moe_name() accepts. */
static int trace_moe(struct ts_diag *d, const struct ts_trace *t, const char *path)
{
	uint8_t *seen;
	char buf[512];
	int rc = 0;

	if (d->moe_evidence)
		return 0;
	seen = calloc(t->strings.count + 1, 1);
	if (!seen)
		return TS_ENOMEM;
	for (size_t i = 0; i < t->ev.n; i++) {
		uint32_t id = t->ev.name[i];
		const char *nm;
		if (id >= t->strings.count || seen[id])
			continue;
		seen[id] = 1;
		nm = ts_trace_str(t, id);
		if (nm && moe_name(nm)) {
			snprintf(buf, sizeof(buf), "MoE kernel or op '%.200s' in %s", nm, path);
			d->moe_evidence = ts_diag_strdup(d, buf);
			rc = d->moe_evidence ? 0 : TS_ENOMEM;
			break;
		}
	}
	free(seen);
	return rc;
}

/* MoE evidence from the model and the log: num_experts > 0 in a model
 * config, an MoE auxiliary loss among the step records' extra losses, or
 * num_experts > 0 in the arguments block of a Megatron log (logs without one
 * are no evidence; a config that cannot be read is left to the readers that
 * need it). Returns 0 or TS_ENOMEM. */
static int model_moe(struct ts_diag *d)
{
	char buf[512];

	for (size_t i = 0; i < d->in.configs.n && !d->moe_evidence; i++) {
		struct ts_model m;
		struct ts_err e;
		ts_model_init(&m);
		ts_err_init(&e);
		if (ts_model_read_config(&m, d->in.configs.v[i], &e) == 0 && m.num_experts > 0) {
			snprintf(buf, sizeof(buf), "%lld experts in the model config %s",
				 (long long)m.num_experts, d->in.configs.v[i]);
			if (!(d->moe_evidence = ts_diag_strdup(d, buf)))
				return TS_ENOMEM;
		}
	}
	/* an MoE auxiliary loss in the step records (Megatron's
	 * load_balancing_loss; a JSONL moe_* or *expert* loss) */
	if (d->rm && !d->moe_evidence) {
		const struct ts_steplog *log = &d->rm->log;
		for (size_t i = 0; i < log->names.count; i++) {
			const char *nm = ts_steplog_name(log, (uint32_t)i);
			if (nm && (has_part(nm, "load_balancing") || moe_name(nm))) {
				snprintf(buf, sizeof(buf), "the MoE loss '%.200s' in the step log", nm);
				if (!(d->moe_evidence = ts_diag_strdup(d, buf)))
					return TS_ENOMEM;
				break;
			}
		}
	}
	for (size_t i = 0; d->log_args && i < d->in.logs.n && !d->moe_evidence; i++) {
		const struct ts_diag_log_args *la = &d->log_args[i];

		if (la->ok && la->m.num_experts > 0) {
			snprintf(buf, sizeof(buf), "num_experts %lld in the arguments of %s",
				 (long long)la->m.num_experts, d->in.logs.v[i]);
			if (!(d->moe_evidence = ts_diag_strdup(d, buf)))
				return TS_ENOMEM;
		}
	}
	return 0;
}

/* An Nsight Systems export: one profile per (process, device) rank. */
static int read_nsys(struct ts_diag *d, const char *path, struct ts_err *err)
{
	struct ts_prof_opts po = prof_opts();
	struct ts_nsys x;
	int rc;

	ts_nsys_init(&x);
	if ((rc = ts_nsys_open(&x, path, err)) || (rc = ts_nsys_survey(&x, err)))
		goto out;
	/* as `trace` refuses it: nothing on a GPU to profile */
	if (!x.ranks.n) {
		rc = ts_err_at(err, TS_EPARSE, path, -1, -1,
			       "an Nsight Systems export without GPU activity (no kernel, memcpy or memset"
			       " rows%s)", x.caps.kernels ? "" : "; no CUPTI_ACTIVITY_KIND_KERNEL table");
		goto out;
	}
	for (size_t k = 0; k < x.ranks.n && !rc; k++) {
		struct ts_trace t;
		struct ts_rank_prof *p = malloc(sizeof(*p));
		ts_trace_init(&t);
		if (!p) {
			rc = ts_err_set(err, TS_ENOMEM, "out of memory profiling %s", path);
		} else {
			ts_rank_prof_init(p);
			rc = ts_nsys_read_rank(&x, k, NULL, &t, NULL, err);
			if (!rc)
				rc = ts_rank_profile(p, &t, &po, err);
			if (!rc && trace_moe(d, &t, path))
				rc = ts_err_set(err, TS_ENOMEM, "out of memory");
			if (!rc)
				rc = ts_diag_add_profile(d, p);
			if (rc) {
				ts_rank_prof_release(p);
				free(p);
			}
		}
		ts_trace_release(&t);
	}
	/* the export's warnings, as `trace` writes them */
	if (!rc && d->rm && ts_nsys_warnings(&x.joins, x.null_end, &x.gaps, path, &d->rm->warnings))
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
out:
	ts_nsys_close(&x);
	return rc;
}

static int read_trace(struct ts_diag *d, const char *path, size_t order, struct ts_err *err)
{
	struct ts_prof_opts po = prof_opts();
	struct ts_trace t;
	/* a trace that names no rank is the order-th, as `trace` numbers it */
	struct ts_trace_opts o = { .skip_python = 1, .strict = 0, .has_order = 1,
				   .order = (int64_t)order };
	struct ts_rank_prof *p = NULL;
	struct ts_detect k;
	int rc;

	if (ts_detect_file(path, &k, err) == 0 && k.kind == TS_KIND_NSYS_SQLITE)
		return read_nsys(d, path, err);
	ts_trace_init(&t);
	if ((rc = ts_trace_read(&t, path, &o, err)))
		goto out;
	p = malloc(sizeof(*p));
	if (!p) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory profiling %s", path);
		goto out;
	}
	ts_rank_prof_init(p);
	if ((rc = ts_rank_profile(p, &t, &po, err)))
		goto out;
	if (trace_moe(d, &t, path)) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
		goto out;
	}
	if (t.meta.truncated) {
		/* trace's wording, in place of the run model's less exact one */
		struct ts_warnings *w = &d->rm->warnings;
		size_t old = find_warning(w, "truncated-trace", path);

		if (ts_trace_truncated_warning(w, path, t.meta.truncated_at, t.meta.gzip, p)) {
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
			goto out;
		}
		if (old < w->v.n - 1)
			w->v.v[old] = w->v.v[--w->v.n];
	}
	if (ts_trace_ignored_warning(&d->rm->warnings, path, &t.meta) ||
	    ts_rank_prof_warnings(p, !p->steps.n, path, &d->rm->warnings)) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
		goto out;
	}
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

/* The steady summary the verdict needs, from the steps analysis. Its
 * stalls are the window's (ts_steps_is_window_stall: the steps before the
 * window are warm-up, not stalls), less the steps a trace shows profiled. */
static int fill_steady(struct ts_diag *d)
{
	const struct ts_steps_report *r = d->steps_rep;
	struct ts_diag_steady *s = &d->steady;
	size_t nps = 0;
	struct pstep *ps = profiled_steps(d, &nps);

	if (!ps)
		return TS_ENOMEM;
	/* a window of one step has its time too (as in steps), with no CI */
	if (r->win_n >= 1 && isfinite(r->mean_ms) && r->win_first != TS_NO_INT) {
		s->known = 1;
		/* the run's window object: a declared range keeps its ends */
		s->first = d->rm->window.first != TS_NO_INT ? d->rm->window.first : r->win_first;
		s->last = d->rm->window.last != TS_NO_INT ? d->rm->window.last : r->win_last;
		s->n = r->win_n;
		s->mean_ms = r->mean_ms;
		s->median_ms = r->median_ms;
		s->ci_lo_ms = r->ci.method ? r->ci.lo : NAN;
		s->ci_hi_ms = r->ci.method ? r->ci.hi : NAN;
		snprintf(s->ci_method, sizeof(s->ci_method), "%s", ts_ci_method_name(r->ci.method));
		s->cv = r->cv;
	}
	for (size_t i = 0; s->known && i < r->noutliers; i++) {
		int64_t it = r->outliers[i].iteration;
		/* over the timed steps' range, as steps counts window_stalls
		 * (a declared window's NaN steps at its end are none of them) */
		if (!ts_steps_is_window_stall(&r->outliers[i], r->win_first, r->win_last) ||
		    !ts_steps_in_window(r, it))
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

/* A phase time of a step record in ms; NaN when not logged. */
static double phase_ms(const struct ts_step *t, int k)
{
	return t->phase_ns[k] == TS_NO_INT ? NAN : (double)t->phase_ns[k] / 1e6;
}

/* d->series from the run's merge over ranks (ts_steps_merge). */
static int use_series(struct ts_diag *d)
{
	struct ts_step_merged *v;
	size_t n;

	if (ts_steps_merge(&d->rm->log, &v, &n))
		return TS_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct ts_step_merged *m = &v[i];
		struct ts_diag_step s = {
			m->iteration, m->step_ms, m->phase_ms[TS_PHASE_DATA],
			m->phase_ms[TS_PHASE_FORWARD], m->phase_ms[TS_PHASE_BACKWARD],
			m->phase_ms[TS_PHASE_COMM], m->loss, m->grad_norm,
			m->skipped == TS_NO_INT ? -1 : m->skipped > 0,
			m->nan_iters == TS_NO_INT ? -1 : m->nan_iters > 0
		};
		if (TS_VEC_PUSH(d->series, s)) {
			free(v);
			return TS_ENOMEM;
		}
	}
	free(v);
	return 0;
}

/* The run's step series: its steps analysis (computed once, by the run
 * model) and the per-rank records of its step series, resumed segments
 * resolved, with their phase split (JSONL metrics' data_ms, fwd_ms...,
 * Megatron's timers) as the steps reader took it: one reader of the
 * records for every command. */
static int use_steps(struct ts_diag *d, struct ts_err *err)
{
	const struct ts_steplog *log = &d->rm->log;
	int rc;

	if (!d->rm->have_steps)
		return 0;
	d->steps_rep = &d->rm->steps;
	d->have_steps = 1;
	d->in.steps_source = d->rm->step_files.v[0];
	if ((rc = fill_steady(d)))
		return ts_err_set(err, rc, "out of memory");
	if ((rc = use_series(d)))
		return ts_err_set(err, rc, "out of memory");
	for (size_t i = 0; i < log->steps.n; i++) {
		const struct ts_step *t = &log->steps.v[i];
		int32_t rank = ts_step_rank(log, t);   /* as the steps analysis' ranks */
		struct ts_diag_rank_steps *r = ts_diag_rank(d, rank >= 0 ? rank : 0);
		struct ts_diag_step s = {
			t->iteration, t->step_ns == TS_NO_INT ? NAN : (double)t->step_ns / 1e6,
			phase_ms(t, TS_PHASE_DATA), phase_ms(t, TS_PHASE_FORWARD),
			phase_ms(t, TS_PHASE_BACKWARD), phase_ms(t, TS_PHASE_COMM),
			t->loss, t->grad_norm,
			t->skipped == TS_NO_INT ? -1 : t->skipped > 0,
			t->nan_iters == TS_NO_INT ? -1 : t->nan_iters > 0
		};
		if (t->flags & TS_STEP_NO_LOSS)
			s.loss = NAN;
		if (!r || TS_VEC_PUSH(r->steps, s))
			return ts_err_set(err, TS_ENOMEM, "out of memory");
	}
	return 0;
}

/* Model FLOP rate and MFU/HFU: the run model's model FLOPs and shape
 * (run.h, struct ts_run_rate: the ones validate recomputes the logged
 * rate with) over the steady step time; the peak comes from the trace's
 * device (BF16, the usual training precision, named in the output). */
static int rates(struct ts_diag *d, struct ts_err *err)
{
	const struct ts_run_rate *rt = d->rm ? &d->rm->rate : NULL;
	struct ts_mfu u;
	struct ts_gpu_catalog cat;
	struct ts_err e;
	double peak = 0;

	if (!rt || !(rt->flops.per_step > 0) || !d->steady.known || !d->have_steps)
		return 0;
	ts_err_init(&e);
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
	ts_mfu_compute(&rt->flops, (int64_t)llround(d->steady.mean_ms * 1e6), rt->gpus, peak, &u);
	if (ts_mfu_check(&u, &e)) {
		/* more than the peak: the config does not describe this run */
		ts_gpu_catalog_release(&cat);
		if (ts_warnings_add(&d->rm->warnings, "mfu-over-peak", rt->model_from, -1,
				    TS_NO_INT, "With the model of %s the MFU comes out at %.4g %% of the "
				    "peak, which is impossible (the model does not describe this run, or "
				    "the tokens per step are off): MFU is not reported.",
				    rt->model_from, 100 * fmax(u.mfu, u.hfu)))
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		return 0;
	}
	d->rate.tflops_per_gpu = u.tflops_per_gpu;
	d->rate.mfu_pct = isfinite(u.mfu) ? 100 * u.mfu : NAN;
	d->rate.hfu_pct = isfinite(u.hfu) ? 100 * u.hfu : NAN;
	{
		char buf[512];
		snprintf(buf, sizeof(buf), "%s (from %s), %lld layers, hidden %lld, seq %lld (%s) x "
			 "%lld sequences/step (%s) on %lld GPU%s (%s), %.3g model FLOPs/step",
			 rt->model.family, rt->model_from, (long long)rt->model.layers,
			 (long long)rt->model.hidden, (long long)rt->shape.seq, rt->seq_from,
			 (long long)rt->shape.gbs, rt->gbs_from, (long long)rt->gpus,
			 rt->gpus == 1 ? "" : "s", rt->gpus_from,
			 rt->flops.per_step);
		d->rate.model_name = ts_diag_strdup(d, buf);
	}
	ts_gpu_catalog_release(&cat);
	return 0;
}


/* Telemetry captures of the run (telemetry.h): read together, joined to
 * the run's timed steps, judged; each finding becomes a diagnose finding,
 * each warning of a capture a warning of the run (naming the capture); a
 * capture of the run directory that cannot be read is an unused-input
 * warning (the run's other evidence stands), the path given an error. */
static int read_telemetry(struct ts_diag *d, struct ts_err *err)
{
	struct ts_telemetry t;
	struct ts_tele_gpu_summary *sum = NULL;
	struct ts_tele_span *spans = NULL;
	struct ts_tele_step *steps = NULL;
	struct ts_tele_finding f[32];
	struct ts_tele_dropped dropped;
	size_t nspans = 0, nsteps = 0, nf;
	int rc = 0;

	ts_tele_init(&t);
	for (size_t i = 0; i < d->in.telemetry.n && !rc; i++) {
		const char *path = d->in.telemetry.v[i];
		size_t before = t.notes.v.n;

		struct ts_err e;

		ts_err_init(&e);
		rc = ts_tele_read(&t, path, NULL, &e);
		/* a capture found in the run that cannot be read is left out, as
		 * ab leaves it out; one named on the command line is an error */
		if (rc && rc != TS_ENOMEM && d->rm && strcmp(path, d->rm->root) != 0) {
			rc = ts_warnings_add(&d->rm->warnings, "unused-input", path, e.offset,
					     TS_NO_INT, "%s: telemetry capture left out (%s)", path, e.msg)
				     ? ts_err_set(err, TS_ENOMEM, "out of memory")
				     : 0;
			continue;
		}
		if (rc && err)
			*err = e;
		/* the capture's warnings (a cut last record, ...) are the run's */
		if (!rc && d->rm && ts_tele_notes_warn(&t, before, path, &d->rm->warnings))
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
	}
	if (!rc)
		ts_tele_match_gpus(&t); /* once, all captures read */
	if (!rc && d->rm && ts_tele_host_warn(&t, &d->rm->warnings))
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
	if (rc)
		goto out;
	sum = calloc(t.gpus.n + 1, sizeof(*sum));
	if (d->rm && d->rm->log.steps.n)
		spans = calloc(d->rm->log.steps.n, sizeof(*spans));
	if (!sum || (d->rm && d->rm->log.steps.n && !spans)) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
		goto out;
	}
	ts_tele_summarize(&t, sum);
	for (size_t i = 0; spans && i < d->rm->log.steps.n; i++) {
		const struct ts_step *s = &d->rm->log.steps.v[i];
		if (s->t_start_ns == TS_NO_INT || s->step_ns == TS_NO_INT || s->step_ns <= 0 ||
		    (nspans && s->t_start_ns < spans[nspans - 1].end_ns))
			continue; /* one rank's series, in time order */
		spans[nspans].iteration = s->iteration;
		spans[nspans].start_ns = s->t_start_ns;
		spans[nspans].end_ns = s->t_start_ns + s->step_ns;
		spans[nspans].tokens = s->tokens == TS_NO_INT ? -1 : s->tokens;
		nspans++;
	}
	if (nspans) {
		struct ts_err aerr;
		ts_err_init(&aerr);
		if (ts_tele_align(&t, spans, nspans, &steps, &nsteps, &aerr) &&
		    aerr.code == TS_ENOMEM) {
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
			goto out;
		}
		/* steps outside the capture, steps in its gaps: as watch says them */
		if (d->rm && ts_tele_join_warn(&t, spans, nspans, steps, nsteps, &d->rm->warnings)) {
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
			goto out;
		}
	}
	nf = ts_tele_findings(&t, sum, steps, nsteps, NULL, f, sizeof(f) / sizeof(f[0]), &dropped);
	if (d->rm && ts_tele_dropped_warn(&dropped, nf, "telemetry", &d->rm->warnings)) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nf && !rc; i++) {
		struct ts_diag_item it;
		char title[96];
		snprintf(title, sizeof(title), "telemetry %s", f[i].id);
		it.level = !strcmp(f[i].severity, "warning") ? TS_REPORT_WARN : TS_REPORT_INFO;
		it.title = ts_diag_strdup(d, title);
		it.detail = ts_diag_strdup(d, f[i].msg);
		if (!it.title || !it.detail || TS_VEC_PUSH(d->findings, it))
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
	}
out:
	free(sum);
	free(spans);
	free(steps);
	ts_tele_release(&t);
	return rc;
}

/* A recorded preflight (trainscope.preflight/1): its findings become
 * diagnose findings, severity mapped to the report levels. */
static int read_preflight(struct ts_diag *d, const char *path, struct ts_err *err)
{
	struct ts_preflight pf;
	int rc;

	ts_preflight_init(&pf);
	if ((rc = ts_preflight_read(&pf, path, err)))
		goto out;
	for (size_t i = 0; i < pf.findings.n && !rc; i++) {
		const struct ts_pf_finding *f = &pf.findings.v[i];
		struct ts_diag_item it;
		char title[160];
		struct ts_sb detail;
		ts_sb_init(&detail);
		snprintf(title, sizeof(title), "preflight %s", f->id);
		ts_sb_addf(&detail, "%s (%s); fix: %s", f->evidence, ts_basename(path), f->fix);
		it.level = f->sev == TS_PF_ERROR ? TS_REPORT_BAD : f->sev == TS_PF_WARNING ? TS_REPORT_WARN : TS_REPORT_INFO;
		it.title = ts_diag_strdup(d, title);
		it.detail = detail.failed ? NULL : ts_diag_strdup(d, detail.buf);
		ts_sb_release(&detail);
		if (!it.title || !it.detail || TS_VEC_PUSH(d->findings, it))
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
	}
out:
	ts_preflight_release(&pf);
	return rc;
}

/*
 * What the traces say about the window they are read against: profiled
 * steps are slower than steady ones (the profiler records every operator),
 * and a capture outside the steady window describes another phase.
 */
#define PROFILED_SLOWER 1.2

static int trace_warnings(struct ts_diag *d)
{
	const struct ts_steps_report *r = d->steps_rep;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t n = 0, outside = 0, timed = 0;
	double sum = 0;

	if (!d->have_steps || !d->nprofs || r->win_first == TS_NO_INT)
		return 0;
	for (size_t i = 0; i < d->nprofs; i++)
		for (size_t j = 0; j < d->profs[i]->steps.n; j++) {
			int64_t it = d->profs[i]->steps.v[j].step;

			n++;
			lo = it < lo ? it : lo;
			hi = it > hi ? it : hi;
			outside += it < r->win_first || it > r->win_last;
			for (size_t k = 0; k < r->n; k++)
				if (r->iter[k] == it && isfinite(r->step_ms[k])) {
					sum += r->step_ms[k];
					timed++;
					break;
				}
		}
	if (!n)
		return 0;
	if (outside &&
	    ts_warnings_add(&d->rm->warnings, "window-outside-trace", NULL, -1, lo,
			    "%zu of the %zu profiled steps (iterations %lld:%lld) lie outside the "
			    "steady window %lld:%lld: the trace's shares describe another phase of "
			    "the run.", outside, n, (long long)lo, (long long)hi,
			    (long long)r->win_first, (long long)r->win_last))
		return TS_ENOMEM;
	if (timed && isfinite(r->median_ms) && r->median_ms > 0 &&
	    sum / (double)timed > PROFILED_SLOWER * r->median_ms &&
	    ts_warnings_add(&d->rm->warnings, "profiled-steps-slower", NULL, -1, lo,
			    "The profiled steps took %.1f ms on average in the log, %.1fx the steady "
			    "median of %.1f ms: the trace's wall shares come from slowed steps.",
			    sum / (double)timed, sum / (double)timed / r->median_ms, r->median_ms))
		return TS_ENOMEM;
	return 0;
}

int ts_diag_gather(struct ts_diag *d, struct ts_runmodel *rm, struct ts_err *err)
{
	int rc = 0;

	d->rm = rm;
	d->in.run = ts_diag_strdup(d, rm->root);
	for (size_t i = 0; i < rm->inputs.n && !rc; i++) {
		const struct ts_run_input *in = &rm->inputs.v[i];

		switch (in->role) {
		case TS_ROLE_TRACE:
			rc = push_path(d, &d->in.traces, in->path);
			break;
		case TS_ROLE_NSYS:
			/* read_trace hands it to the nsys reader */
			rc = push_path(d, &d->in.traces, in->path);
			break;
		case TS_ROLE_STEPS:
			rc = push_path(d, in->kind == TS_KIND_METRICS_JSONL ? (void *)&d->in.metrics :
				       (void *)&d->in.logs, in->path);
			break;
		case TS_ROLE_LOG_SPARE:
			rc = push_path(d, &d->in.logs, in->path);
			break;
		case TS_ROLE_CONFIG:
			rc = push_path(d, &d->in.configs, in->path);
			break;
		case TS_ROLE_CONTRACT:
			rc = push_path(d, &d->in.contracts, in->path);
			break;
		case TS_ROLE_TELEMETRY:
			rc = push_path(d, &d->in.telemetry, in->path);
			break;
		default:
			/* hang evidence goes to the hang analysis below */
			if (in->kind == TS_KIND_LOG_HANG || in->kind == TS_KIND_HANG_REPORT ||
			    in->kind == TS_KIND_FLIGHT_RECORDER) {
				rc = push_path(d, &d->in.hang, in->path);
				break;
			}
			/* a recorded preflight: its findings are diagnose findings */
			if (in->kind == TS_KIND_PREFLIGHT && (rc = read_preflight(d, in->path, err)))
				return rc;
			rc = push_path(d, &d->in.other, in->path);
			break;
		}
	}
	if (rc)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	/* hang evidence: the whole hang analysis (hang.h) over it */
	for (size_t i = 0; i < d->in.hang.n; i++)
		if ((rc = ts_hang_read_file(&d->hang, d->in.hang.v[i], err)))
			return rc;
	if (d->in.hang.n) {
		if ((rc = ts_hang_analyze(&d->hang, &d->hang_res, err)))
			return rc;
		d->hang_done = 1;
		/* a cut dump is a run warning too (truncated-dump) */
		if ((rc = ts_hang_warnings(&d->hang, &d->rm->warnings)))
			return ts_err_set(err, TS_ENOMEM, "out of memory");
	}
	if (d->in.telemetry.n && (rc = read_telemetry(d, err)))
		return rc;
	if (!d->in.traces.n && !d->in.metrics.n && !d->in.logs.n && !d->hang_done)
		return ts_err_set(err, TS_EUSAGE, "no training log, metrics or profiler trace found "
				  "in %s", d->in.run ? d->in.run : "the input");
	d->log_args = ts_arena_alloc(&d->arena, (d->in.logs.n + 1) * sizeof(*d->log_args));
	if (!d->log_args)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	for (size_t i = 0; i < d->in.logs.n; i++) {
		struct ts_diag_log_args *la = &d->log_args[i];
		struct ts_err e;

		/* the run model read the block of its log already */
		if (rm->has_args && strcmp(d->in.logs.v[i], rm->args_log) == 0) {
			la->ok = 1;
			la->m = rm->args_model;
			la->a = rm->args;
			continue;
		}
		ts_model_init(&la->m);
		ts_err_init(&e);
		la->ok = ts_model_read_megatron_args(&la->m, &la->a, d->in.logs.v[i], &e) == 0;
	}
	if (model_moe(d))
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	for (size_t i = 0; i < d->in.traces.n; i++) {
		const char *path = d->in.traces.v[i];
		struct ts_err e;
		char buf[TS_ERR_MSG_MAX + TS_ERR_PATH_MAX];

		ts_err_init(&e);
		rc = read_trace(d, path, i, &e);
		if (!rc)
			continue;
		/* a trace found in the run that cannot be read is left out, as a
		 * telemetry capture is; one named on the command line is an error */
		if (rc == TS_ENOMEM || strcmp(path, rm->root) == 0) {
			if (err)
				*err = e;
			return rc;
		}
		if (e.offset >= 0)
			snprintf(buf, sizeof(buf), "byte %lld: %s", (long long)e.offset, e.msg);
		else
			snprintf(buf, sizeof(buf), "%s", e.msg);
		if (ts_warnings_add(&d->rm->warnings, "unused-input", path, e.offset, TS_NO_INT,
				    "%s cannot be read as a profiler trace and is not used (%s).",
				    path, buf))
			return ts_err_set(err, TS_ENOMEM, "out of memory");
	}
	if (d->nprofs) {
		if ((rc = ts_job_analyse(&d->job, d->profs, d->nprofs, err)))
			return rc;
		if (ts_job_warnings(&d->job, &d->rm->warnings))
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		d->job_done = 1;
	}
	if ((rc = use_steps(d, err)) || (rc = rates(d, err)))
		return rc;
	if (trace_warnings(d))
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	return 0;
}

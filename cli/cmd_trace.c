/*
 * cmd_trace.c - `trainscope trace`: where every microsecond of each step
 * went, per rank and across ranks, and which wall the job hits.
 *
 * Rank files are read and analysed in parallel threads (each thread reads
 * one file, profiles it and frees the trace before taking the next; a
 * single file's trace is freed on a thread of its own while the report is
 * rendered, joined before run() returns), then the cross-rank analysis
 * runs once over the compact per-rank results.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "trainscope/jsonw.h"
#include "trainscope/hta.h"
#include "trainscope/tracelens.h"
#include "trainscope/paths.h"
#include "trainscope/profile.h"
#include "trainscope/table.h"
#include "trainscope/run.h"
#include "trainscope/trace.h"
#include "trace_mpi.h"
#include "trace_nsys.h"
#include "trainscope/annotate.h"
#include "trainscope/telemetry.h"
#include "trainscope/input.h"
#include "trainscope/detect.h"

enum { OPT_TOP = 1, OPT_JOBS, OPT_ANNOTATE, OPT_STRICT, OPT_ALL_STEPS, OPT_DEPTH, OPT_MPI, OPT_HTA,
       OPT_TL, OPT_TL_RECOMPUTE, OPT_TELEMETRY, OPT_REPORT, OPT_CSV, OPT_STEP_NVTX };

static const struct cli_opt opts[] = {
	{ "top", 0, "N", "kernels listed per rank (default 10)", OPT_TOP },
	{ "jobs", 'j', "N", "rank files analysed in parallel (default 2)", OPT_JOBS },
	{ "annotate", 0, "OUT", "write the trace(s) plus finding tracks for Perfetto (OUT: a file for one input, a directory for several)", OPT_ANNOTATE },
	{ "telemetry", 0, "FILE", "with --annotate: add power, SM clock and utilisation counter tracks from a telemetry capture (trainscope watch or any format it reads)", OPT_TELEMETRY },
	{ "strict", 0, NULL, "no recovery from known trace-writer bugs", OPT_STRICT },
	{ "all-steps", 0, NULL, "list every step (default: up to 40 rows, then outliers only)", OPT_ALL_STEPS },
	{ "depth", 0, "N", "descend N levels into directories (default 2)", OPT_DEPTH },
	{ "mpi", 0, NULL, "run under mpirun: each process analyses its share of the files, process 0 reports", OPT_MPI },
	{ "hta-compat", 0, NULL, "also reproduce HolisticTraceAnalysis's numbers exactly, its preprocessing included (docs/hta-compat.md)", OPT_HTA },
	{ "tracelens-compat", 0, NULL, "also reproduce TraceLens's gpu_timeline exactly, under its rules (docs/tracelens-compat.md)", OPT_TL },
	{ "tracelens-recompute", 0, NULL, "with --tracelens-compat: also TraceLens's --detect_recompute split (two timelines)", OPT_TL_RECOMPUTE },
	{ "report", 0, "NAME", "print one nsys stats report instead: cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, nvtx_sum, cuda_kern_exec_sum (docs/nsys.md)", OPT_REPORT },
	{ "csv", 0, NULL, "--report as CSV with nsys's column names", OPT_CSV },
	{ "step-nvtx", 0, "REGEX", "nsys exports: NVTX ranges matching REGEX (POSIX extended) mark the steps", OPT_STEP_NVTX },
	{ 0 }
};

/* What a worker learns about one file besides the profile (sent as is
 * between MPI processes of the same build). */
struct slot_meta {
	int rc;
	struct ts_err err;
	int truncated;
	uint64_t truncated_at;
	int gzip;               /* offsets are of the inflated JSON */
	uint64_t recovered, first_recovery_at;
	struct ts_trace_meta meta;   /* its counts of ignored values */
	int rank_source;
	int64_t base_ns;        /* baseTimeNanoseconds, for telemetry counters */
};

struct slot {
	const char *path;
	struct ts_rank_prof prof;
	struct slot_meta m;
	struct ts_prof_tracks tracks;
	int want_tracks;
	int skip;               /* --mpi: another process analyses this file */
	struct ts_hta_part hta; /* --hta-compat: what HTA needs from this file */
	struct ts_tracelens tl; /* --tracelens-compat */
	struct trace_nsys_slot *nsys; /* one rank of an Nsight Systems export, else NULL */
	struct ts_trace trace;  /* while analysed; then released, by rel_th when started */
	pthread_t rel_th;
	int rel_started;        /* joined in run() */
};

struct pool {
	struct slot *slots;
	size_t n;
	size_t next;
	int top_k;
	int strict;
	int hta;
	int tl;                 /* 1 --tracelens-compat, 2 with --tracelens-recompute */
	int prof_threads;       /* threads of one file's analysis (ts_prof_opts.threads) */
	struct ts_nsys_read_opts nsys_opts;
	pthread_mutex_t mu;
};

/* HTA's frames of one trace, on their own thread (they only read it) */
struct hta_job {
	const struct ts_trace *t;
	struct ts_hta_part *part;
	int threads;            /* ts_hta_part_build's */
	struct ts_err err;
	int rc;
};

static void *hta_main(void *arg)
{
	struct hta_job *j = arg;

	ts_err_init(&j->err);
	j->rc = ts_hta_part_build(j->t, j->part, j->threads, &j->err);
	return NULL;
}

/* ts_trace_release() on the thread that runs it. */
static void *release_main(void *arg)
{
	ts_trace_release(arg);
	return NULL;
}

static void analyse_one(struct pool *pl, struct slot *s, size_t order)
{
	struct ts_trace *t = &s->trace;
	struct ts_trace_opts o;
	struct ts_prof_opts po;

	memset(&o, 0, sizeof(o));
	o.skip_python = pl->tl != 2; /* the recompute split needs recompute_fn spans */
	o.strict = pl->strict;
	o.has_order = 1;
	o.order = (int64_t)order;
	memset(&po, 0, sizeof(po));
	po.top_k = pl->top_k;
	po.tracks = s->want_tracks ? &s->tracks : NULL;
	po.threads = pl->prof_threads;
	ts_trace_init(t);
	ts_err_init(&s->m.err);
	if (s->nsys && s->nsys->is_nsys)
		s->m.rc = trace_nsys_read(s->nsys, s->path, &pl->nsys_opts, t, &s->m.err);
	else
		s->m.rc = ts_trace_read(t, s->path, &o, &s->m.err);
	if (!s->m.rc && t->ev.n == 0)
		s->m.rc = ts_err_at(&s->m.err, TS_EPARSE, s->path, (int64_t)t->meta.bytes, -1,
				    "%s", t->meta.truncated ? "no complete trace event before the input ends"
						     : "no trace events (an empty traceEvents list)");
	if (!s->m.rc) {
		s->m.truncated = t->meta.truncated;
		s->m.truncated_at = t->meta.truncated_at;
		s->m.gzip = t->meta.gzip;
		s->m.recovered = t->meta.recovered;
		s->m.first_recovery_at = t->meta.first_recovery_at;
		s->m.meta = t->meta;
		s->m.rank_source = t->meta.rank_source;
		s->m.base_ns = t->meta.has_base ? t->meta.base_ns : 0;
		/* a spare core (one file): HTA's analysis beside the profile,
		 * which then keeps to one thread: HTA's frame and filter are
		 * serial and the longer path, and the profile's own threads
		 * only took the core from them. The profile's error, if any,
		 * is the one reported, as when they run one after the other */
		struct hta_job hj = { .t = t, .part = &s->hta, .threads = 2 };
		pthread_t hth;
		int hta_th = pl->hta && pl->prof_threads >= 2 &&
			     pthread_create(&hth, NULL, hta_main, &hj) == 0;
		if (hta_th)
			po.threads = 1;
		s->m.rc = ts_rank_profile(&s->prof, t, &po, &s->m.err);
		if (hta_th) {
			pthread_join(hth, NULL);
			if (!s->m.rc && hj.rc) {
				s->m.rc = hj.rc;
				s->m.err = hj.err;
			}
		} else if (!s->m.rc && pl->hta) {
			s->m.rc = ts_hta_part_build(t, &s->hta, pl->prof_threads, &s->m.err);
		}
		if (!s->m.rc && pl->tl)
			s->m.rc = ts_tracelens_analyze(t, pl->tl == 2, &s->tl, &s->m.err);
	}
	/* one file (a spare core): its memory goes back on a thread of its
	 * own while the report is rendered */
	s->rel_started = pl->prof_threads >= 2 && !pthread_create(&s->rel_th, NULL, release_main, t);
	if (!s->rel_started)
		ts_trace_release(t);
}

static void *worker(void *arg)
{
	struct pool *pl = arg;

	for (;;) {
		size_t i;
		pthread_mutex_lock(&pl->mu);
		i = pl->next++;
		pthread_mutex_unlock(&pl->mu);
		if (i >= pl->n)
			break;
		if (!pl->slots[i].skip)
			analyse_one(pl, &pl->slots[i], i);
	}
	return NULL;
}

static int run_pool(struct pool *pl, int jobs)
{
	pthread_t th[64];
	int started = 0;

	if (jobs > 64)
		jobs = 64;
	/* fewer files than threads: a file's analysis takes a spare one */
	pl->prof_threads = (size_t)jobs > pl->n ? 2 : 1;
	if ((size_t)jobs > pl->n)
		jobs = (int)pl->n;
	for (int i = 1; i < jobs; i++) {
		if (pthread_create(&th[started], NULL, worker, pl))
			break;
		started++;
	}
	worker(pl);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* ------------------------------------------------------------ rendering */

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static void jus(struct ts_jw *w, const char *key, int64_t ns)
{
	ts_jw_key(w, key);
	ts_jw_fixed(w, (double)ns / 1e3, 3);
}

/* µs or null for "not annotated" (-1). */
static void jus_opt(struct ts_jw *w, const char *key, int64_t ns)
{
	if (ns < 0) {
		ts_jw_key(w, key);
		ts_jw_null(w);
	} else {
		jus(w, key, ns);
	}
}

static const char *vendor_of(const struct ts_rank_prof *p)
{
	return ts_vendor_name((enum ts_vendor)p->vendor);
}

static void json_rank(struct ts_jw *w, const struct slot *s, const struct ts_hta *hta,
		      size_t hta_index, int tl)
{
	const struct ts_rank_prof *p = &s->prof;

	ts_jw_obj(w);
	ts_jw_ki64(w, "rank", p->rank);
	ts_jw_ki64(w, "window", p->window_no);
	ts_jw_kstr(w, "file", p->file);
	ts_jw_kstr(w, "vendor", vendor_of(p));
	ts_jw_kstr(w, "device", p->device[0] ? p->device : NULL);
	ts_jw_kbool(w, "device_assumed", p->device_assumed);
	ts_jw_kbool(w, "legacy", p->legacy);
	ts_jw_kbool(w, "truncated", s->m.truncated);
	if (s->m.truncated)
		ts_jw_ki64(w, "truncated_at_byte", (int64_t)s->m.truncated_at);
	ts_jw_ki64(w, "recovered_events", (int64_t)s->m.recovered);
	ts_jw_ki64(w, "steps_dropped", p->steps_dropped);
	jus(w, "window_us", p->window_ns);
	jus(w, "busy_us", p->busy_ns);
	jus(w, "idle_us", p->idle_ns);
	jus(w, "compute_us", p->compute_ns);
	jus(w, "comm_us", p->comm_ns);
	jus(w, "exposed_comm_us", p->exposed_comm_ns);
	jus(w, "memcpy_us", p->memcpy_ns);
	jus(w, "exposed_memcpy_us", p->exposed_memcpy_ns);
	jus(w, "memset_us", p->memset_ns);
	jus(w, "exposed_memset_us", p->exposed_memset_ns);
	jus(w, "gpu_span_us", p->gpu_span_ns);
	jus(w, "gpu_span_idle_us", p->gpu_span_idle_ns);
	jus(w, "unlinked_us", p->unlinked_ns);
	ts_jw_ki64(w, "unlinked_events", p->unlinked_events);
	ts_jw_key(w, "overlap_pct");
	if (p->overlap_pct < 0)
		ts_jw_null(w);
	else
		ts_jw_fixed(w, p->overlap_pct, 2);
	jus(w, "host_busy_us", p->host_busy_ns);
	jus(w, "host_gap_us", p->host_gap_ns);
	jus(w, "data_us", p->data_ns);
	jus_opt(w, "idle_host_bound_us", p->idle_host_ns);
	jus(w, "idle_data_bound_us", p->idle_data_ns);
	jus(w, "idle_other_us", p->idle_other_ns);

	ts_jw_key(w, "classes");
	ts_jw_arr(w);
	for (int k = 0; k < TS_KC_COUNT; k++) {
		if (!p->class_count[k])
			continue;
		ts_jw_obj(w);
		ts_jw_kstr(w, "class", ts_kclass_name((enum ts_kclass)k));
		ts_jw_ki64(w, "count", p->class_count[k]);
		jus(w, "union_us", p->class_union_ns[k]);
		jus(w, "sum_us", p->class_sum_ns[k]);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);

	ts_jw_key(w, "top_kernels");
	ts_jw_arr(w);
	for (size_t i = 0; i < p->top.n; i++) {
		const struct ts_kernel_stat *k = &p->top.v[i];
		ts_jw_obj(w);
		ts_jw_key(w, "name");
		ts_jw_strn(w, ts_prof_str(p, k->name), ts_prof_len(p, k->name));
		ts_jw_kstr(w, "class", ts_kclass_name(k->cls));
		ts_jw_ki64(w, "count", k->count);
		jus(w, "total_us", k->total_ns);
		jus(w, "mean_us", k->mean_ns);
		jus(w, "p50_us", k->p50_ns);
		jus(w, "p90_us", k->p90_ns);
		jus(w, "max_us", k->max_ns);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);

	ts_jw_key(w, "launch");
	ts_jw_obj(w);
	ts_jw_ki64(w, "calls", p->launch.calls);
	jus(w, "call_total_us", p->launch.call_total_ns);
	jus(w, "call_p50_us", p->launch.call_p50_ns);
	jus(w, "call_p90_us", p->launch.call_p90_ns);
	jus(w, "call_max_us", p->launch.call_max_ns);
	ts_jw_ki64(w, "linked", p->launch.linked);
	jus(w, "delay_total_us", p->launch.delay_total_ns);
	jus(w, "delay_p50_us", p->launch.delay_p50_ns);
	jus(w, "delay_p90_us", p->launch.delay_p90_ns);
	jus(w, "delay_max_us", p->launch.delay_max_ns);
	ts_jw_ki64(w, "short_kernels", p->launch.short_kernels);
	ts_jw_key(w, "short_kernels_pct");
	ts_jw_fixed(w, p->launch.linked ? 100.0 * (double)p->launch.short_kernels /
						  (double)p->launch.linked : 0.0, 2);
	ts_jw_ki64(w, "graph_launches", p->launch.graph_launches);
	ts_jw_ki64(w, "graph_activities", p->launch.graph_activities);
	ts_jw_obj_end(w);

	ts_jw_key(w, "idle_by_stream");
	ts_jw_arr(w);
	for (size_t i = 0; i < p->idle.n; i++) {
		const struct ts_stream_idle *si = &p->idle.v[i];
		ts_jw_obj(w);
		ts_jw_ki64(w, "device", si->device);
		ts_jw_ki64(w, "stream", si->stream);
		jus(w, "host_wait_us", si->host_wait_ns);
		jus(w, "kernel_wait_us", si->kernel_wait_ns);
		jus(w, "other_us", si->other_ns);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);

	ts_jw_key(w, "memcpy_by_direction");
	ts_jw_arr(w);
	for (int d = 0; d < TS_MDIR_COUNT; d++) {
		const struct ts_xfer_stat *x = &p->xfer[d];
		if (!x->count)
			continue;
		ts_jw_obj(w);
		ts_jw_kstr(w, "direction", ts_mdir_name((enum ts_mdir)d));
		ts_jw_ki64(w, "count", x->count);
		ts_jw_key(w, "bytes");
		if (x->bytes < 0)
			ts_jw_null(w);
		else
			ts_jw_i64(w, x->bytes);
		jus(w, "dur_us", x->ns);
		ts_jw_key(w, "bandwidth_gb_per_s");
		if (x->bytes < 0 || x->ns <= 0)
			ts_jw_null(w);
		else
			ts_jw_fixed(w, (double)x->bytes / (double)x->ns, 3);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);

	ts_jw_key(w, "memory");
	ts_jw_obj(w);
	ts_jw_kstr(w, "device", p->mem_peak_alloc_bytes < 0 ? NULL : p->mem_on_gpu ? "gpu" : "cpu");
	ts_jw_key(w, "peak_allocated_bytes");
	if (p->mem_peak_alloc_bytes < 0)
		ts_jw_null(w);
	else
		ts_jw_i64(w, p->mem_peak_alloc_bytes);
	ts_jw_key(w, "peak_reserved_bytes");
	if (p->mem_peak_reserved_bytes < 0)
		ts_jw_null(w);
	else
		ts_jw_i64(w, p->mem_peak_reserved_bytes);
	ts_jw_key(w, "device_total_bytes");
	if (p->device_mem_bytes < 0)
		ts_jw_null(w);
	else
		ts_jw_i64(w, p->device_mem_bytes);
	ts_jw_obj_end(w);
	if (hta) {
		ts_jw_key(w, "hta");
		ts_hta_write_json(hta, hta_index, w);
	}
	if (tl) {
		ts_jw_key(w, "tracelens");
		ts_tracelens_write_json(&s->tl, w);
	}
	ts_jw_key(w, "profiler_flop");
	if (p->flops_events)
		ts_jw_f64(w, p->flops);
	else
		ts_jw_null(w);

	if (p->steps.n)
		jus(w, "median_step_us", p->median_step_ns);
	else
		jus_opt(w, "median_step_us", -1);   /* no steps: null */
	ts_jw_ki64(w, "outliers", p->outliers);
	ts_jw_key(w, "steps");
	ts_jw_arr(w);
	for (size_t i = 0; i < p->steps.n; i++) {
		const struct ts_step_prof *st = &p->steps.v[i];
		ts_jw_obj(w);
		ts_jw_ki64(w, "step", st->step);
		jus(w, "start_us", st->start_ns);
		jus(w, "dur_us", st->dur_ns);
		jus(w, "data_us", st->data_ns);
		jus_opt(w, "fwd_us", st->fwd_ns);
		jus_opt(w, "bwd_us", st->bwd_ns);
		jus_opt(w, "opt_us", st->opt_ns);
		jus(w, "comm_us", st->comm_ns);
		jus(w, "exposed_comm_us", st->exposed_comm_ns);
		jus(w, "busy_us", st->busy_ns);
		jus(w, "compute_us", st->compute_ns);
		jus(w, "exposed_memcpy_us", st->exposed_memcpy_ns);
		jus(w, "exposed_memset_us", st->exposed_memset_ns);
		jus(w, "idle_us", st->idle_ns);
		jus(w, "host_us", st->host_ns);
		jus(w, "host_gap_us", st->gap_ns);
		ts_jw_ki64(w, "kernels", st->kernels);
		ts_jw_kbool(w, "outlier", st->outlier);
		ts_jw_kstr(w, "reason", st->outlier ? st->reason : NULL);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
	ts_jw_key(w, "wall");
	ts_jw_obj(w);
	ts_jw_kstr(w, "dominant", ts_wall_name(p->verdict.wall));
	ts_jw_key(w, "share_pct");
	ts_jw_fixed(w, 100 * p->verdict.share, 2);
	ts_jw_kstr(w, "evidence", p->verdict.evidence);
	ts_jw_key(w, "walls");
	ts_jw_arr(w);
	for (size_t i = 0; i < p->nwalls; i++) {
		const struct ts_wall_cand *c = &p->walls[i];
		ts_jw_obj(w);
		ts_jw_kstr(w, "wall", ts_wall_name(c->wall));
		ts_jw_kstr(w, "measure", c->what);
		jus_opt(w, "time_us", c->ns);
		ts_jw_key(w, "share_pct");
		if (c->ns < 0)
			ts_jw_null(w);
		else
			ts_jw_fixed(w, 100 * c->share, 2);
		ts_jw_key(w, "threshold_pct");
		ts_jw_fixed(w, 100 * c->threshold, 1);
		ts_jw_kbool(w, "over_threshold", c->over);
		ts_jw_kbool(w, "eligible", c->eligible);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
	ts_jw_obj_end(w);
	ts_jw_obj_end(w);
}

static void json_thresholds(struct ts_jw *w)
{
	ts_jw_key(w, "thresholds");
	ts_jw_obj(w);
	ts_jw_key(w, "data_pct");
	ts_jw_fixed(w, 100 * TS_WALL_DATA_FRAC, 1);
	ts_jw_key(w, "comm_pct");
	ts_jw_fixed(w, 100 * TS_WALL_COMM_FRAC, 1);
	ts_jw_key(w, "host_pct");
	ts_jw_fixed(w, 100 * TS_WALL_HOST_FRAC, 1);
	ts_jw_key(w, "memcpy_pct");
	ts_jw_fixed(w, 100 * TS_WALL_MEMCPY_FRAC, 1);
	ts_jw_key(w, "memory_capacity_pct");
	ts_jw_fixed(w, 100 * TS_WALL_MEMCAP_FRAC, 1);
	ts_jw_key(w, "straggler_lateness_pct");
	ts_jw_fixed(w, 100 * TS_STRAGGLER_FRAC, 1);
	ts_jw_ki64(w, "straggler_min_steps", TS_STRAGGLER_MIN_STEPS);
	ts_jw_key(w, "outlier_slow_pct");
	ts_jw_fixed(w, 100 * TS_OUTLIER_SLOW_FRAC, 1);
	ts_jw_key(w, "outlier_stall_pct");
	ts_jw_fixed(w, 100 * TS_OUTLIER_STALL_FRAC, 1);
	ts_jw_kf64(w, "outlier_mad_k", TS_OUTLIER_K);
	ts_jw_obj_end(w);
}

/* The slot holding a profile (profiles live inside the slots array). */
static const struct slot *slot_of(const struct slot *slots, const struct ts_rank_prof *p)
{
	size_t i = (size_t)((const char *)p - (const char *)&slots[0].prof) / sizeof(*slots);
	return &slots[i];
}

static void json_lateness(struct ts_jw *w, const struct ts_straggler *s)
{
	ts_jw_ki64(w, "steps", s->steps);
	ts_jw_ki64(w, "late_steps", s->late_steps);
	jus(w, "lateness_p25_us", s->late_p25_ns);
	jus(w, "lateness_p50_us", s->late_p50_ns);
	jus(w, "median_step_us", s->median_step_ns);
	jus(w, "own_noncomm_us", s->own_noncomm_ns);
	jus(w, "peer_noncomm_us", s->peer_noncomm_ns);
}

static void render_json(struct ts_sb *out, struct slot *slots, size_t n,
			const struct ts_job_prof *j, const struct ts_hta *hta, int tl,
			const struct trace_nsys_slot *nsl, char *const *paths,
			const struct ts_warnings *warns)
{
	struct ts_jw w;

	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", "trainscope.trace/1");
	ts_jw_ki64(&w, "files", (int64_t)n);
	ts_jw_ki64(&w, "distinct_ranks", j->nranks);
	ts_jw_key(&w, "ranks");
	ts_jw_arr(&w);
	for (size_t i = 0; i < j->n; i++)
	{
		const struct slot *s = slot_of(slots, j->ranks[i]);
		json_rank(&w, s, hta, (size_t)(s - slots), tl);
	}
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "stragglers");
	ts_jw_arr(&w);
	for (size_t i = 0; i < j->stragglers.n; i++) {
		const struct ts_straggler *s = &j->stragglers.v[i];
		ts_jw_obj(&w);
		ts_jw_ki64(&w, "rank", s->rank);
		json_lateness(&w, s);
		ts_jw_kstr(&w, "evidence", s->evidence);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "lateness");
	ts_jw_arr(&w);
	for (size_t i = 0; i < j->per_rank.n; i++) {
		const struct ts_straggler *s = &j->per_rank.v[i];
		ts_jw_obj(&w);
		ts_jw_ki64(&w, "rank", s->rank);
		json_lateness(&w, s);
		ts_jw_kbool(&w, "straggler", s->straggler);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "collective_skew");
	ts_jw_obj(&w);
	ts_jw_ki64(&w, "matched", j->skew.matched);
	ts_jw_ki64(&w, "uneven_groups", j->skew.unmatched_groups);
	ts_jw_ki64(&w, "uneven_instances", j->skew.unmatched_instances);
	jus(&w, "p50_us", j->skew.p50_ns);
	jus(&w, "p90_us", j->skew.p90_ns);
	jus(&w, "max_us", j->skew.max_ns);
	if (j->skew.matched) {
		ts_jw_kstr(&w, "worst_name", j->skew.worst_name);
		ts_jw_ki64(&w, "worst_late_rank", j->skew.worst_rank);
		ts_jw_key(&w, "worst_step");
		if (j->skew.worst_step == TS_NONE)
			ts_jw_null(&w);
		else
			ts_jw_i64(&w, j->skew.worst_step);
	}
	ts_jw_obj_end(&w);
	ts_jw_key(&w, "wall");
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "dominant", ts_wall_name(j->wall.wall));
	ts_jw_key(&w, "share_pct");
	ts_jw_fixed(&w, 100 * j->wall.share, 2);
	ts_jw_kstr(&w, "evidence", j->wall.evidence);
	json_thresholds(&w);
	ts_jw_obj_end(&w);
	if (nsl)
		trace_nsys_json(&w, nsl, paths, n);
	ts_warnings_json(&w, warns, warns->v.n);
	ts_jw_obj_end(&w);
	ts_sb_addc(out, '\n');
}

static void render_text(struct cli_ctx *ctx, struct ts_sb *out, const struct ts_job_prof *j,
			int all_steps, int top_k)
{
	struct ts_table t;
	size_t nsteps = 0, nout = 0;
	const char *b = cli_style(ctx, "bold"), *r = cli_style(ctx, "reset");
	int any_gpu = 0;

	for (size_t i = 0; i < j->n; i++) {
		nsteps += j->ranks[i]->steps.n;
		nout += (size_t)j->ranks[i]->outliers;
		any_gpu |= j->ranks[i]->has_gpu;
	}
	ts_sb_addf(out, "%strace%s: %zu rank window%s, %lld rank%s, %zu steps, %zu outlier%s\n\n",
		   b, r, j->n, j->n == 1 ? "" : "s", (long long)j->nranks,
		   j->nranks == 1 ? "" : "s", nsteps, nout, nout == 1 ? "" : "s");

	ts_table_init(&t);
	ts_table_col(&t, "rank", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "win", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "vendor", NULL, TS_LEFT, 0);
	ts_table_col(&t, "window", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "busy", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "compute", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "comm", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "exp.comm", "ms", TS_RIGHT, 0);
	ts_table_col(&t, any_gpu ? "exp.memcpy" : "host gap", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "data", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "step p50", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "wall", NULL, TS_LEFT, 0);
	for (size_t i = 0; i < j->n; i++) {
		const struct ts_rank_prof *p = j->ranks[i];
		ts_table_cell(&t, "%lld", (long long)p->rank);
		ts_table_cell(&t, "%lld", (long long)p->window_no);
		ts_table_cell(&t, "%s", vendor_of(p));
		ts_table_cell(&t, "%.1f", ms(p->window_ns));
		ts_table_cell(&t, "%.1f", ms(p->busy_ns));
		ts_table_cell(&t, "%.1f", ms(p->compute_ns));
		ts_table_cell(&t, "%.1f", ms(p->comm_ns));
		ts_table_cell(&t, "%.1f", ms(p->exposed_comm_ns));
		ts_table_cell(&t, "%.1f", ms(any_gpu ? p->exposed_memcpy_ns : p->host_gap_ns));
		ts_table_cell(&t, "%.1f", ms(p->data_ns));
		if (p->steps.n)
			ts_table_cell(&t, "%.1f", ms(p->median_step_ns));
		else
			ts_table_cell(&t, "-");   /* no steps: no step time */
		ts_table_cell(&t, "%s", ts_wall_name(p->verdict.wall));
	}
	ts_sb_addf(out, "%sranks%s\n", b, r);
	ts_table_render(&t, out, 2);
	ts_table_release(&t);

	if (nsteps) {
		int only_outliers = !all_steps && nsteps > 40;
		ts_table_init(&t);
		ts_table_col(&t, "rank", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "step", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "dur", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "data", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "fwd", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "bwd", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "opt", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "comm", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "exp.comm", "ms", TS_RIGHT, 0);
		ts_table_col(&t, any_gpu ? "busy" : "host gap", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "outlier", NULL, TS_LEFT, 0);
		for (size_t i = 0; i < j->n; i++) {
			const struct ts_rank_prof *p = j->ranks[i];
			for (size_t s = 0; s < p->steps.n; s++) {
				const struct ts_step_prof *st = &p->steps.v[s];
				if (only_outliers && !st->outlier)
					continue;
				ts_table_cell(&t, "%lld", (long long)p->rank);
				ts_table_cell(&t, "%lld", (long long)st->step);
				ts_table_cell(&t, "%.1f", ms(st->dur_ns));
				ts_table_cell(&t, "%.1f", ms(st->data_ns));
				if (st->fwd_ns < 0)
					ts_table_cell(&t, "-");
				else
					ts_table_cell(&t, "%.1f", ms(st->fwd_ns));
				if (st->bwd_ns < 0)
					ts_table_cell(&t, "-");
				else
					ts_table_cell(&t, "%.1f", ms(st->bwd_ns));
				if (st->opt_ns < 0)
					ts_table_cell(&t, "-");
				else
					ts_table_cell(&t, "%.1f", ms(st->opt_ns));
				ts_table_cell(&t, "%.1f", ms(st->comm_ns));
				ts_table_cell(&t, "%.1f", ms(st->exposed_comm_ns));
				ts_table_cell(&t, "%.1f", ms(any_gpu ? st->busy_ns : st->gap_ns));
				ts_table_cell(&t, "%s", st->outlier ? st->reason : "-");
			}
		}
		ts_sb_addf(out, "\n%ssteps%s%s\n", b, r,
			   only_outliers ? " (outliers only; --all-steps lists every step)" : "");
		if (t.ncells)
			ts_table_render(&t, out, 2);
		else
			ts_sb_adds(out, "  no outlier steps\n");
		ts_table_release(&t);
	}

	for (size_t i = 0; i < j->n && top_k > 0; i++) {
		const struct ts_rank_prof *p = j->ranks[i];
		if (!p->has_gpu)
			continue;
		ts_table_init(&t);
		ts_table_col(&t, "kernel", NULL, TS_LEFT, 60);
		ts_table_col(&t, "class", NULL, TS_LEFT, 0);
		ts_table_col(&t, "count", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "total", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "mean", "us", TS_RIGHT, 0);
		ts_table_col(&t, "p50", "us", TS_RIGHT, 0);
		ts_table_col(&t, "p90", "us", TS_RIGHT, 0);
		ts_table_col(&t, "max", "us", TS_RIGHT, 0);
		for (size_t k = 0; k < p->top.n; k++) {
			const struct ts_kernel_stat *ks = &p->top.v[k];
			ts_table_cell_text(&t, ts_prof_str(p, ks->name), ts_prof_len(p, ks->name));
			ts_table_cell(&t, "%s", ts_kclass_name(ks->cls));
			ts_table_cell(&t, "%lld", (long long)ks->count);
			ts_table_cell(&t, "%.3f", ms(ks->total_ns));
			ts_table_cell(&t, "%.1f", (double)ks->mean_ns / 1e3);
			ts_table_cell(&t, "%.1f", (double)ks->p50_ns / 1e3);
			ts_table_cell(&t, "%.1f", (double)ks->p90_ns / 1e3);
			ts_table_cell(&t, "%.1f", (double)ks->max_ns / 1e3);
		}
		ts_sb_addf(out, "\n%stop kernels%s, rank %lld window %lld (%lld distinct)\n", b, r,
			   (long long)p->rank, (long long)p->window_no, (long long)p->kernel_names);
		ts_table_render(&t, out, 2);
		ts_table_release(&t);
		ts_sb_adds(out, "  classes, union (sum) in ms:");
		for (int k = 0; k < TS_KC_COUNT; k++)
			if (p->class_count[k])
				ts_sb_addf(out, " %s %.1f (%.1f)", ts_kclass_name((enum ts_kclass)k),
					   ms(p->class_union_ns[k]), ms(p->class_sum_ns[k]));
		ts_sb_addc(out, '\n');
		ts_sb_addf(out, "  launch: %lld calls, p50 %.1f us, p90 %.1f us; delay p50 %.1f us, "
			   "p90 %.1f us, max %.1f us; %lld kernels shorter than their launch call (%lld linked activities)",
			   (long long)p->launch.calls, (double)p->launch.call_p50_ns / 1e3,
			   (double)p->launch.call_p90_ns / 1e3, (double)p->launch.delay_p50_ns / 1e3,
			   (double)p->launch.delay_p90_ns / 1e3, (double)p->launch.delay_max_ns / 1e3,
			   (long long)p->launch.short_kernels, (long long)p->launch.linked);
		if (p->launch.graph_launches)
			ts_sb_addf(out, "; %lld graph launches (%lld activities)",
				   (long long)p->launch.graph_launches,
				   (long long)p->launch.graph_activities);
		{
			int64_t hw = 0, kw = 0, ot = 0;
			for (size_t k = 0; k < p->idle.n; k++) {
				hw += p->idle.v[k].host_wait_ns;
				kw += p->idle.v[k].kernel_wait_ns;
				ot += p->idle.v[k].other_ns;
			}
			ts_sb_addf(out, "\n  stream idle (HTA rule, %zu streams): host-wait %.1f ms, "
				   "kernel-wait %.1f ms, other %.1f ms", p->idle.n, ms(hw), ms(kw), ms(ot));
		}
		ts_sb_addf(out, "\n  window %.1f ms = compute %.1f + exposed comm %.1f + exposed memcpy "
			   "%.1f + exposed memset %.1f + idle %.1f ms; GPU span %.1f ms (idle %.1f ms)",
			   ms(p->window_ns), ms(p->compute_ns), ms(p->exposed_comm_ns),
			   ms(p->exposed_memcpy_ns), ms(p->exposed_memset_ns), ms(p->idle_ns),
			   ms(p->gpu_span_ns), ms(p->gpu_span_idle_ns));
		if (p->unlinked_events)
			ts_sb_addf(out, "\n  unlinked: %lld activities, %.1f ms with no launch call in the "
				   "trace (counted where they ran; their launch is unknown)",
				   (long long)p->unlinked_events, ms(p->unlinked_ns));
		ts_sb_addf(out, "\n  GPU idle %.1f ms: host-bound ", ms(p->idle_ns));
		if (p->idle_host_ns < 0)
			ts_sb_adds(out, "unknown (no launch linked)");
		else
			ts_sb_addf(out, "%.1f ms", ms(p->idle_host_ns));
		ts_sb_addf(out, ", data-bound %.1f ms, other %.1f ms; overlap of comm with compute ",
			   ms(p->idle_data_ns), ms(p->idle_other_ns));
		if (p->overlap_pct < 0)
			ts_sb_adds(out, "n/a (no comm)\n");
		else
			ts_sb_addf(out, "%.1f%%\n", p->overlap_pct);
		for (int d = 0; d < TS_MDIR_COUNT; d++)
			if (p->xfer[d].count) {
				ts_sb_addf(out, "  memcpy %s: %lld copies, %.3f ms", ts_mdir_name((enum ts_mdir)d),
					   (long long)p->xfer[d].count, ms(p->xfer[d].ns));
				if (p->xfer[d].bytes >= 0 && p->xfer[d].ns > 0)
					ts_sb_addf(out, ", %lld bytes, %.2f GB/s",
						   (long long)p->xfer[d].bytes,
						   (double)p->xfer[d].bytes / (double)p->xfer[d].ns);
				ts_sb_addc(out, '\n');
			}
		if (p->mem_peak_alloc_bytes >= 0)
			ts_sb_addf(out, "  memory (%s): peak allocated %.3f GiB, peak reserved %.3f GiB\n",
				   p->mem_on_gpu ? "GPU" : "CPU",
				   (double)p->mem_peak_alloc_bytes / 1073741824.0,
				   (double)p->mem_peak_reserved_bytes / 1073741824.0);
		break;
	}

	if (j->nranks >= 2) {
		ts_sb_addf(out, "\n%scross-rank%s\n", b, r);
		if (j->skew.matched)
			ts_sb_addf(out, "  collective skew over %lld matched collectives: p50 %.1f ms, "
				   "p90 %.1f ms, max %.1f ms (rank %lld last at %s, step %lld)\n",
				   (long long)j->skew.matched, ms(j->skew.p50_ns), ms(j->skew.p90_ns),
				   ms(j->skew.max_ns), (long long)j->skew.worst_rank,
				   j->skew.worst_name ? j->skew.worst_name : "?",
				   (long long)(j->skew.worst_step == TS_NONE ? -1 : j->skew.worst_step));
		else
			ts_sb_adds(out, "  no collectives matched across ranks\n");
		for (size_t i = 0; i < j->per_rank.n; i++) {
			const struct ts_straggler *s = &j->per_rank.v[i];
			ts_sb_addf(out, "  rank %lld: late in %lld of %lld steps, lateness p25 %.1f ms, "
				   "median %.1f ms; outside comm %.1f ms vs %.1f ms on peers\n",
				   (long long)s->rank, (long long)s->late_steps, (long long)s->steps,
				   ms(s->late_p25_ns), ms(s->late_p50_ns), ms(s->own_noncomm_ns),
				   ms(s->peer_noncomm_ns));
		}
		if (!j->stragglers.n)
			ts_sb_addf(out, "  stragglers: none (a rank must arrive last with lateness "
				   "p25 >= %.0f%% of its median step over >= %d steps)\n",
				   100 * TS_STRAGGLER_FRAC, TS_STRAGGLER_MIN_STEPS);
		for (size_t i = 0; i < j->stragglers.n; i++)
			ts_sb_addf(out, "  straggler: %s\n", j->stragglers.v[i].evidence);
	}

	ts_sb_addf(out, "\n%swall: %s%s\n  %s\n", b, ts_wall_name(j->wall.wall), r,
		   j->wall.evidence);
	for (size_t i = 0; i < j->n && i < 8; i++) {
		const struct ts_rank_prof *p = j->ranks[i];
		ts_sb_addf(out, "  walls, rank %lld window %lld (ranked):", (long long)p->rank,
			   (long long)p->window_no);
		for (size_t k = 0; k < p->nwalls; k++) {
			const struct ts_wall_cand *c = &p->walls[k];
			if (c->ns < 0) {
				ts_sb_addf(out, "%s %s unknown", k ? "," : "", ts_wall_name(c->wall));
				continue;
			}
			ts_sb_addf(out, "%s %s %.1f%%", k ? "," : "", ts_wall_name(c->wall), 100 * c->share);
			if (c->wall != TS_WALL_COMPUTE)
				ts_sb_addf(out, " (threshold %.0f%%%s)", 100 * c->threshold,
					   c->over && !c->eligible ? ", not the largest idle cause" : "");
		}
		ts_sb_addc(out, '\n');
	}
	if (j->n > 1)
		for (size_t i = 0; i < j->n; i++)
			ts_sb_addf(out, "  rank %lld window %lld: %s (%.1f%%)\n",
				   (long long)j->ranks[i]->rank, (long long)j->ranks[i]->window_no,
				   ts_wall_name(j->ranks[i]->verdict.wall),
				   100 * j->ranks[i]->verdict.share);
}

/* ------------------------------------------------------------ MPI */

/*
 * Process r analysed files i with i % size == r. Every process but 0 sends
 * each of its results (meta + packed profile) to process 0 in file order;
 * process 0 receives the others' results in the same order, so it ends up
 * with every slot filled as if it had analysed all files itself.
 */
static int mpi_gather(struct cli_ctx *ctx, struct pool *pl, int mrank, int msize)
{
	struct ts_sb sb;
	struct ts_err err;
	char why[256];
	int rc = 0;

	ts_sb_init(&sb);
	for (size_t i = 0; i < pl->n && !rc; i++) {
		struct slot *s = &pl->slots[i];
		int owner = (int)(i % (size_t)msize);
		if (mrank != 0 && owner == mrank) {
			ts_sb_reset(&sb);
			ts_sb_add(&sb, &s->m, sizeof(s->m));
			ts_rank_prof_pack(&s->prof, &sb);
			if (sb.failed || trace_mpi_send(sb.buf, sb.len, why, sizeof(why))) {
				cli_error(ctx, "--mpi: process %d: %s", mrank, sb.failed ? "out of memory" : why);
				rc = EXIT_INTERNAL;
			}
		} else if (mrank == 0 && owner != 0) {
			if (trace_mpi_recv(owner, &sb, why, sizeof(why))) {
				cli_error(ctx, "--mpi: %s", why);
				rc = EXIT_INTERNAL;
				break;
			}
			ts_rank_prof_release(&s->prof);
			ts_rank_prof_init(&s->prof);
			if (sb.len < sizeof(s->m) ||
			    ts_rank_prof_unpack(&s->prof, sb.buf + sizeof(s->m), sb.len - sizeof(s->m), &err)) {
				cli_error(ctx, "--mpi: bad result for %s from process %d", s->path, owner);
				rc = EXIT_INTERNAL;
				break;
			}
			memcpy(&s->m, sb.buf, sizeof(s->m));
		}
	}
	ts_sb_release(&sb);
	if (rc)
		trace_mpi_abort(rc);
	return rc;
}

/* ------------------------------------------------------------ annotate */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One input: OUT is the file. Several: OUT is a directory (created when
 * missing) receiving <basename without .gz> per input; two inputs with the
 * same base name are refused. */
static int write_annotations(struct cli_ctx *ctx, const char *out, struct pool *pl,
			     const struct ts_job_prof *job, const struct ts_telemetry *tele)
{
	char **names = calloc(pl->n, sizeof(*names));
	struct ts_err err;
	int rc = 0;

	if (!names) {
		cli_error(ctx, "out of memory");
		return EXIT_INTERNAL;
	}
	for (size_t i = 0; i < pl->n && !rc; i++) {
		struct ts_sb path;
		const char *base = ts_basename(pl->slots[i].path);
		size_t bl = strlen(base);
		ts_sb_init(&path);
		if (pl->n == 1) {
			ts_sb_adds(&path, out);
		} else {
			if (bl > 3 && strcmp(base + bl - 3, ".gz") == 0)
				bl -= 3;
			ts_sb_addf(&path, "%s/%.*s", out, (int)bl, base);
		}
		names[i] = path.failed ? NULL : path.buf;
		if (!names[i])
			rc = EXIT_INTERNAL;
	}
	if (!rc && pl->n > 1) {
		char **sorted = malloc(pl->n * sizeof(*sorted));
		if (!sorted) {
			rc = EXIT_INTERNAL;
			goto done;
		}
		memcpy(sorted, names, pl->n * sizeof(*sorted));
		ts_sort(sorted, pl->n, sizeof(*sorted), cmp_str);
		for (size_t i = 1; i < pl->n && !rc; i++)
			if (strcmp(sorted[i - 1], sorted[i]) == 0) {
				cli_error(ctx, "--annotate: two inputs would both be written to %s", sorted[i]);
				rc = EXIT_USAGE;
			}
		free(sorted);
	}
	if (!rc && pl->n > 1 && mkdir(out, 0777) != 0 && errno != EEXIST) {
		cli_error(ctx, "--annotate: cannot create directory %s: %s", out, strerror(errno));
		rc = EXIT_USAGE;
	}
	for (size_t i = 0; i < pl->n && !rc; i++) {
		struct ts_annotate_info ai;
		memset(&ai, 0, sizeof(ai));
		ai.prof = &pl->slots[i].prof;
		ai.tracks = &pl->slots[i].tracks;
		ai.job = job;
		ai.tele = tele;
		ai.base_ns = pl->slots[i].m.base_ns;
		ts_err_init(&err);
		if (ts_annotate_write(names[i], pl->slots[i].path, &ai, &err))
			rc = cli_fail(ctx, &err);
	}
done:
	for (size_t i = 0; i < pl->n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* ------------------------------------------------------------ command */

/* A file named on the command line is taken as is (the reader says what is
 * wrong with it); directories and globs contribute only the files whose
 * content is a trace, so a run directory with logs and metrics works. */
/* The traces and nsys exports arg names (a file, or the ones a directory
 * holds); a file in a directory that cannot be classified, or that its
 * name says is a trace but is none (ts_detect_misnamed), is an
 * unused-input warning in warns, as in every run model. */
static int add_inputs(struct cli_ctx *ctx, struct ts_paths *files, const char *arg, int depth,
		      struct ts_warnings *warns)
{
	struct ts_paths tmp;
	struct ts_err err;
	size_t before = files->n;
	int rc = 0;

	ts_paths_init(&tmp);
	ts_err_init(&err);
	if (ts_paths_add(&tmp, arg, depth, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	for (size_t i = 0; i < tmp.n; i++) {
		struct ts_detect d;
		int explicit_file = tmp.n == 1 && strcmp(tmp.v[i], arg) == 0;
		if (!explicit_file) {
			struct ts_run_input in = { .path = tmp.v[i], .role = TS_ROLE_OTHER };
			char why[TS_ERR_PATH_MAX + TS_ERR_MSG_MAX + 160];
			int is_trace = 0;

			if (ts_detect_file(tmp.v[i], &d, &err)) {
				ts_err_format(&err, why, sizeof(why));
				in.role = TS_ROLE_BAD;
				in.problem = why;
			} else {
				is_trace = d.kind == TS_KIND_KINETO_TRACE || d.kind == TS_KIND_LEGACY_TRACE ||
					   d.kind == TS_KIND_NSYS_SQLITE;
				if (!is_trace)
					in.problem = ts_detect_misnamed(tmp.v[i], &d, why, sizeof(why));
			}
			if (!is_trace) {
				ts_unused_input_warning(warns, &in);   /* warns->failed on ENOMEM */
				continue;
			}
		}
		if (ts_paths_add(files, tmp.v[i], 0, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	}
	if (files->n == before) {
		cli_error(ctx, "%s: no profiler trace found", arg);
		rc = EXIT_USAGE;
	}
out:
	ts_paths_release(&tmp);
	return rc;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_paths files;
	struct ts_err err;
	struct ts_sb out;
	struct pool pl;
	struct ts_job_prof job;
	struct ts_rank_prof **profs = NULL;
	long long top = 10, jobs = 2, depth = 2;
	const char *annotate = NULL, *tele_path = NULL;
	struct ts_telemetry tele;
	int strict = 0, all_steps = 0, use_mpi = 0, mpi_on = 0, mrank = 0, msize = 1;
	int hta_on = 0, tl_on = 0;
	int csv = 0, any_nsys = 0;
	const char *report = NULL, *step_nvtx = NULL;
	struct trace_nsys_slot *nsl = NULL;
	struct ts_hta hta;
	struct ts_hta_part *parts = NULL;
	struct ts_warnings warns;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_paths_init(&files);
	ts_sb_init(&out);
	ts_err_init(&err);
	ts_job_prof_init(&job);
	ts_hta_init(&hta);
	ts_tele_init(&tele);
	ts_warnings_init(&warns);
	memset(&pl, 0, sizeof(pl));
	for (size_t i = 0; i < p.nopts; i++) {
		const struct cli_arg *a = &p.opts[i];
		if (a->key == OPT_TOP && (rc = cli_int(ctx, a, 0, 1000, &top)))
			goto out;
		if (a->key == OPT_JOBS && (rc = cli_int(ctx, a, 1, 64, &jobs)))
			goto out;
		if (a->key == OPT_DEPTH && (rc = cli_int(ctx, a, 0, 16, &depth)))
			goto out;
		if (a->key == OPT_ANNOTATE)
			annotate = a->val;
		if (a->key == OPT_TELEMETRY)
			tele_path = a->val;
		if (a->key == OPT_STRICT)
			strict = 1;
		if (a->key == OPT_ALL_STEPS)
			all_steps = 1;
		if (a->key == OPT_MPI)
			use_mpi = 1;
		if (a->key == OPT_HTA)
			hta_on = 1;
		if (a->key == OPT_REPORT)
			report = a->val;
		if (a->key == OPT_CSV)
			csv = 1;
		if (a->key == OPT_STEP_NVTX)
			step_nvtx = a->val;
		if (a->key == OPT_TL && !tl_on)
			tl_on = 1;
		if (a->key == OPT_TL_RECOMPUTE)
			tl_on = 2;
	}
	if (use_mpi && tl_on) {
		cli_error(ctx, "--tracelens-compat is computed in one process; it cannot be combined with --mpi");
		rc = EXIT_USAGE;
		goto out;
	}
	if (use_mpi && hta_on) {
		cli_error(ctx, "--hta-compat needs every rank in one process; it cannot be combined with --mpi");
		rc = EXIT_USAGE;
		goto out;
	}
	if (p.npos == 0) {
		cli_error(ctx, "no input given");
		fprintf(stderr, "hint: trainscope trace TRACE.json[.gz]|DIR|GLOB...\n");
		rc = EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < p.npos; i++)
		if ((rc = add_inputs(ctx, &files, p.pos[i], (int)depth, &warns)))
			goto out;
	if (report) {
		rc = trace_stats_report(ctx, &files, report, csv);
		goto out;
	}
	if ((rc = trace_nsys_expand(ctx, &files, &nsl)))
		goto out;
	for (size_t i = 0; i < files.n; i++)
		any_nsys |= nsl[i].is_nsys;
	if (any_nsys && (use_mpi || annotate)) {
		cli_error(ctx, "%s cannot be combined with Nsight Systems exports yet", use_mpi ? "--mpi" : "--annotate");
		rc = EXIT_USAGE;
		goto out;
	}
	pl.nsys_opts.step_nvtx = step_nvtx;
	if (step_nvtx && !any_nsys)
		cli_warn(ctx, "--step-nvtx applies to Nsight Systems exports; Kineto traces keep their ProfilerStep spans");
	/* --annotate reads each input again to copy it: a pipe or FIFO is
	 * kept in memory instead of being reopened (which would hang) */
	for (size_t i = 0; annotate && i < files.n; i++) {
		struct ts_err herr;
		ts_err_init(&herr);
		if (ts_input_hold_whole(files.v[i], &herr)) {
			rc = cli_fail(ctx, &herr);
			goto out;
		}
	}
	/* the capture is read before the traces: a bad one fails at once */
	if (tele_path && !annotate) {
		cli_error(ctx, "--telemetry goes with --annotate (it adds counter tracks to the annotated trace)");
		rc = EXIT_USAGE;
		goto out;
	}
	if (tele_path && ts_tele_read(&tele, tele_path, NULL, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	ts_tele_match_gpus(&tele);

	if (use_mpi) {
		char why[256];
		if (trace_mpi_start(&mrank, &msize, why, sizeof(why))) {
			cli_error(ctx, "--mpi: %s", why);
			rc = EXIT_USAGE;
			goto out;
		}
		mpi_on = 1;
	}
	pl.n = files.n;
	pl.top_k = (int)top;
	pl.strict = strict;
	pl.hta = hta_on;
	pl.tl = tl_on;
	pl.slots = calloc(files.n, sizeof(*pl.slots));
	profs = calloc(files.n, sizeof(*profs));
	if (!pl.slots || !profs) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	for (size_t i = 0; i < files.n; i++) {
		pl.slots[i].path = files.v[i];
		ts_rank_prof_init(&pl.slots[i].prof);
		ts_prof_tracks_init(&pl.slots[i].tracks);
		ts_hta_part_init(&pl.slots[i].hta);
		pl.slots[i].want_tracks = annotate != NULL;
		pl.slots[i].nsys = &nsl[i];
		pl.slots[i].skip = (int)(i % (size_t)msize) != mrank;
		profs[i] = &pl.slots[i].prof;
	}
	pthread_mutex_init(&pl.mu, NULL);
#ifdef M_MMAP_THRESHOLD
	/* a fixed threshold: glibc would otherwise raise it to the size of each
	 * large buffer freed, and the analysis's buffers, freed and allocated
	 * in turn, would stay in the heap (about 20 MB more peak RSS on a 1 GB
	 * trace) */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	run_pool(&pl, (int)jobs);
	pthread_mutex_destroy(&pl.mu);

	if (use_mpi) {
		rc = mpi_gather(ctx, &pl, mrank, msize);
		if (rc || mrank != 0)
			goto out;
	}
	for (size_t i = 0; i < files.n; i++) {
		struct slot *s = &pl.slots[i];
		if (s->m.rc) {
			rc = cli_fail(ctx, &s->m.err);
			goto out;
		}
		if (s->m.truncated)
			ts_trace_truncated_warning(&warns, s->path, s->m.truncated_at, s->m.gzip,
						   &s->prof);
		if (s->m.recovered)
			ts_warnings_add(&warns, "recovered-events", s->path,
					(int64_t)s->m.first_recovery_at, TS_NO_INT,
					"%s: recovered %llu event(s) from known writer bugs (first at byte %llu)",
					s->path, (unsigned long long)s->m.recovered,
					(unsigned long long)s->m.first_recovery_at);
		if (!s->nsys->is_nsys)   /* an export's ranks: trace_nsys_warnings */
			ts_rank_prof_warnings(&s->prof, !s->prof.steps.n, s->path, &warns);
		ts_trace_ignored_warning(&warns, s->path, &s->m.meta);   /* warns.failed */
		if (files.n > 1 && s->m.rank_source == 3 && !s->nsys->is_nsys)
			ts_warnings_add(&warns, "rank-from-order", s->path, -1, TS_NO_INT,
					"%s: neither the trace (distributedInfo.rank) nor its file name "
					"names its rank, so rank %lld is its place among the files given: "
					"the ranks that cross-rank results name may not be the job's",
					s->path, (long long)s->prof.rank);
	}
	if (any_nsys)
		trace_nsys_warnings(&warns, nsl, files.v, files.n);
	if (tele_path)   /* a cut last record, ...: the annotated counters stop there */
		ts_tele_notes_warn(&tele, 0, tele_path, &warns);
	if (warns.failed) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	if (ts_job_analyse(&job, profs, files.n, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ts_job_warnings(&job, &warns)) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	/* JSON carries them in its array, and stderr says so at once; the text
	 * report prints them at its end, so a saved report keeps them */
	for (size_t i = 0; ctx->json && i < warns.v.n; i++)
		if (warns.v.v[i].line > 0)
			cli_warn(ctx, "%s (line %lld)", warns.v.v[i].message, (long long)warns.v.v[i].line);
		else
			cli_warn(ctx, "%s", warns.v.v[i].message);
	if (hta_on) {
		/* HTA's common t0 spans the job: combine every file's part, in
		 * file order (the "hta" index of a rank is its file index) */
		parts = calloc(files.n, sizeof(*parts));
		if (!parts) {
			cli_error(ctx, "out of memory");
			rc = EXIT_INTERNAL;
			goto out;
		}
		for (size_t i = 0; i < files.n; i++) {
			parts[i] = pl.slots[i].hta;
			ts_hta_part_init(&pl.slots[i].hta);
		}
		if (ts_hta_combine(parts, files.n, &hta, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	}
	if (ctx->json) {
		render_json(&out, pl.slots, files.n, &job, hta_on ? &hta : NULL, tl_on,
			    any_nsys ? nsl : NULL, files.v, &warns);
	} else {
		render_text(ctx, &out, &job, all_steps, (int)top);
		if (any_nsys)
			trace_nsys_text(&out, nsl, files.v, files.n);
		if (hta_on) {
			ts_sb_adds(&out, "\nHolisticTraceAnalysis-compatible breakdown (--hta-compat, docs/hta-compat.md)\n");
			ts_hta_render(&hta, &out);
		}
		if (tl_on) {
			ts_sb_adds(&out, "\nTraceLens gpu_timeline (--tracelens-compat: TraceLens's numbers under "
				   "its rules, not trainscope's; docs/tracelens-compat.md)\n");
			for (size_t i = 0; i < files.n; i++)
				ts_tracelens_render(&pl.slots[i].tl, pl.slots[i].path, &out);
		}
		/* last, after the compatibility sections, where the reader ends */
		if (warns.v.n)
			ts_sb_addc(&out, '\n');
		ts_warnings_text(&out, &warns, warns.v.n, cli_style(ctx, "yellow"), cli_style(ctx, "reset"));
	}
	if (annotate && (rc = write_annotations(ctx, annotate, &pl, &job, tele_path ? &tele : NULL)))
		goto out;
	rc = cli_emit(ctx, &out);
out:
	for (size_t i = 0; pl.slots && i < pl.n; i++)
		if (pl.slots[i].rel_started)
			pthread_join(pl.slots[i].rel_th, NULL);
	if (mpi_on)
		trace_mpi_stop();
	ts_job_prof_release(&job);
	if (pl.slots)
		for (size_t i = 0; i < pl.n; i++) {
			ts_rank_prof_release(&pl.slots[i].prof);
			ts_prof_tracks_release(&pl.slots[i].tracks);
			ts_hta_part_release(&pl.slots[i].hta);
		}
	free(parts);
	ts_hta_release(&hta);
	ts_tele_release(&tele);
	ts_warnings_release(&warns);
	free(pl.slots);
	free(nsl);
	free(profs);
	ts_sb_release(&out);
	ts_paths_release(&files);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_trace = {
	.name = "trace",
	.stage = STAGE_PROFILE,
	.summary = "Break profiler traces down per rank and step and name the wall",
	.usage = "trace [options] TRACE|DIR|GLOB...",
	.description =
		"Reads PyTorch profiler (Kineto) traces, one file per rank window (plain or gzip,\n"
		"the legacy array export, CUDA, ROCm, MUSA, MTIA, CPU-only), and reports per rank:\n"
		"GPU busy/idle, compute, communication and exposed communication, memcpy, time per\n"
		"kernel class, top kernels, launch statistics, idle breakdown, and per step the\n"
		"duration, data-loader, forward/backward/optimizer and communication time with\n"
		"outliers and their reason. Across ranks it matches collectives, reports their\n"
		"skew and names stragglers. The wall verdict (compute, memory, communication,\n"
		"host, data, straggler) is printed with the numbers and thresholds behind it.\n"
		"\n"
		"Under MPI (mpirun -n N trainscope trace --mpi PATH...) every process expands\n"
		"the same inputs, analyses the files i with i % N == its rank, and process 0\n"
		"gathers the compact results and prints the report. Definitions:\n"
		"docs/trace-analysis.md.\n"
		"\n"
		"Nsight Systems SQLite exports (nsys export --type sqlite) are read by content: one\n"
		"rank per (process, device), the same report, then the export's capability report\n"
		"(what it can and cannot answer), launch joins and exact per-device walls in ns.\n"
		"Steps come from --step-nvtx REGEX, else from a detected repeating top-level NVTX\n"
		"range or synchronise cadence (stated). --report NAME prints one nsys stats report\n"
		"(same rows, order, rounding and median/stddev as nsys stats; --csv, --json) from\n"
		"nsys exports or Kineto traces. docs/nsys.md.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};

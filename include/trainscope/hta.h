/*
 * hta.h - HolisticTraceAnalysis (HTA) compatibility mode of `trace`.
 *
 * Reproduces the numbers HTA (commit f4d0062, pandas 1.5.3 / numpy 1.24.2)
 * prints for a set of rank traces, its preprocessing included:
 *   - ns timestamps rounded to whole us (ceil start, floor end, done on the
 *     double values Python's json module produces),
 *   - rows without dur or cat dropped, cat "Trace" dropped,
 *   - CPU<->GPU linking by args.correlation (index_correlation),
 *   - all ranks shifted to a common t0,
 *   - with >= 2 distinct ProfilerStep#N names: the last step dropped and GPU
 *     rows kept only when a kept CPU row has the same correlation,
 *   - "GPU kernel" = every row whose args.stream is not -1.
 * Where HTA's result depends on the tie order of numpy's unstable quicksort,
 * that order is reproduced too. docs/hta-compat.md has every definition.
 *
 * Units: all durations are microseconds (HTA's unit after rounding), as
 * doubles holding whole numbers when the trace had ns resolution.
 * Percentages are rounded the way HTA rounds them (numpy round).
 *
 * Ownership: everything hangs off struct ts_hta and is freed by
 * ts_hta_release(). The input traces are not referenced after
 * ts_hta_analyze() / ts_hta_part_build() return.
 */
#ifndef TRAINSCOPE_HTA_H
#define TRAINSCOPE_HTA_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/jsonw.h"
#include "trainscope/trace.h"

/* HTA's three kernel classes (regexes on the name) plus the cuda_sync rest. */
enum ts_hta_ktype {
	TS_HTA_COMM = 0,
	TS_HTA_COMP,
	TS_HTA_MEM,
	TS_HTA_OTHER
};

const char *ts_hta_ktype_name(enum ts_hta_ktype t); /* "COMMUNICATION", ... */

/* One row of HTA's per-kernel table (get_gpu_kernel_breakdown DF2). */
struct ts_hta_kstat {
	const char *name;        /* kernel name, or "others" */
	enum ts_hta_ktype type;
	int64_t count;           /* kernels (for "others": all kernels folded in) */
	double sum_us, max_us, min_us, mean_us, std_us;
};

/* One row of the kernel-type overlap breakdown (DF1). */
struct ts_hta_klabel {
	const char *label;       /* "COMPUTATION overlapping COMMUNICATION" */
	double sum_us;
	double pct;              /* HTA: rounded to 1 decimal */
};

enum ts_hta_idle_cat { TS_HTA_HOST_WAIT = 0, TS_HTA_KERNEL_WAIT, TS_HTA_IDLE_OTHER };

/* Idle time between kernels of one stream (get_idle_time_breakdown). */
struct ts_hta_idle {
	int64_t stream;
	int present[3];          /* category has at least one kernel */
	double idle_us[3];
	double ratio[3];         /* HTA: idle / stream total, 2 decimals; NaN if total 0 */
};

/* describe() of the queue-length change points of one stream. */
struct ts_hta_queue {
	int64_t stream;
	double count, mean, std, min, p25, p50, p75, max;
};

/* Summary of get_cuda_kernel_launch_stats (runtime call <-> GPU op pairs). */
struct ts_hta_launch {
	int64_t n;
	double sum_launch_delay_us;      /* sum of max(0, gpu.ts - runtime end) */
	int64_t n_launch_delay_gt_100us;
	int64_t n_cpu_dur_gt_50us;
	int64_t n_gpu_shorter_than_cpu;
};

struct ts_hta_rank {
	int64_t rank;            /* HTA's rank: distributedInfo.rank, else 0 */
	const char *file;
	int rounded;             /* ns timestamps were rounded to us */
	int filtered;            /* the last-step / correlation filter ran */
	size_t nrows;            /* rows after preprocessing */
	size_t nkernels;         /* rows with stream != -1 */
	int64_t *steps;          /* ProfilerStep numbers kept, ascending */
	size_t nsteps;

	/* temporal breakdown; all NaN when nkernels == 0 */
	double idle_us, compute_us, non_compute_us, kernel_us;
	double idle_pct, compute_pct, non_compute_pct;
	double overlap_pct;      /* comp/comm overlap; NaN without comm kernels */

	struct ts_hta_klabel *ktype;   /* this rank's kernel-type breakdown */
	size_t nktype;
	struct ts_hta_kstat *kernels;  /* HTA defaults: top 10 / 80 % + others */
	size_t nkernels_tab;
	struct ts_hta_kstat *kernels_all; /* every kernel name */
	size_t nkernels_all;
	struct ts_hta_idle *idle;      /* streams in HTA's order */
	size_t nidle;
	struct ts_hta_launch launch;
	struct ts_hta_queue *queue;    /* streams ascending */
	size_t nqueue;
};

/*
 * What HTA needs from one rank's trace, kept after the trace is released.
 * Whether HTA's last-step filter runs depends on the ProfilerStep names of
 * every rank, so a part holds the results both ways until ts_hta_combine()
 * knows. Fields are filled by ts_hta_part_build(); treat them as private.
 */
struct ts_hta_part {
	struct ts_hta_rank rank[2];    /* [0] unfiltered, [1] filtered */
	int have[2];
	int label_present[2][8];       /* kernel-type label sums (ns) by bits */
	int64_t label_ns[2][8];
	int filter_rc;                 /* error of the filtered variant, if any */
	struct ts_err filter_err;
	const char **step_names;       /* distinct ^ProfilerStep#N names */
	size_t nstep_names;
	int64_t t0_ns;                 /* first row start (rounded file time) */
	int has_rows;
	struct ts_arena arena;
};

struct ts_hta {
	struct ts_hta_rank *ranks;     /* in the order given */
	size_t nranks;
	struct ts_hta_klabel *ktype;   /* kernel-type breakdown summed over ranks */
	size_t nktype;
	int64_t t0_ns;                 /* common origin (file time base, rounded) */
	struct ts_hta_part *parts;     /* owned: the ranks' memory */
	size_t nparts;
	struct ts_arena arena;
};

/*
 * Run HTA's preprocessing and analyzers over nranks traces (one per rank)
 * held in memory together; the same as ts_hta_part_build() on each, then
 * ts_hta_combine(). A rank without GPU kernels is not an error: its
 * nkernels is 0 and its numbers are NaN ("no GPU kernels"). Returns 0,
 * TS_ENOMEM, or TS_ELIMIT when HTA's correlation filter would repeat rows
 * beyond 16x the events (err names the file). out is initialised here;
 * release it even on error.
 */
int ts_hta_analyze(const struct ts_trace *const *ranks, size_t nranks,
		   struct ts_hta *out, struct ts_err *err);

/*
 * Streaming use, one trace in memory at a time (e.g. in worker threads):
 * ts_hta_part_build() takes what HTA needs from one rank's trace, which can
 * be released right after; the part does not reference it. Parts of
 * different ranks may be built concurrently. threads >= 2: the queue
 * length runs on a second thread beside the other analyzers (the same part
 * as with 1). p is initialised here; 0 or
 * TS_ENOMEM.
 */
void ts_hta_part_init(struct ts_hta_part *p);
void ts_hta_part_release(struct ts_hta_part *p);
int ts_hta_part_build(const struct ts_trace *t, struct ts_hta_part *p, int threads,
		      struct ts_err *err);

/*
 * Join the parts of one job (common t0, ProfilerStep names counted over all
 * ranks) into out, in the given order. out takes over the parts' memory and
 * leaves them zeroed (free only the array), also on error. Returns 0,
 * TS_ENOMEM or TS_ELIMIT (see ts_hta_analyze). out is initialised here.
 */
int ts_hta_combine(struct ts_hta_part *parts, size_t nparts, struct ts_hta *out,
		   struct ts_err *err);

/*
 * Write the value of a rank's "hta" object: rounded_to_us and
 * last_step_dropped (which preprocessing steps ran), idle_time_us, compute_time_us,
 * non_compute_time_us, kernel_time_us, idle_time_pct, compute_time_pct,
 * non_compute_time_pct, comp_comm_overlap_pct, kernel_type [{kernel_type,
 * sum_us, pct}], kernels and kernels_all [{name, kernel_type, count, sum_us,
 * max_us, min_us, mean_us, stddev_us}], idle_breakdown [{stream,
 * idle_category, idle_time_us, idle_time_ratio}], launch_stats {...},
 * queue_length [{stream, count, mean, std, min, p25, p50, p75, max}],
 * profiler_steps, gpu_kernels (count), note ("no GPU kernels" when 0).
 * NaN values are written as null.
 */
void ts_hta_write_json(const struct ts_hta *h, size_t rank_index, struct ts_jw *w);

/* Terminal tables (units in the headers) for every rank. */
void ts_hta_render(const struct ts_hta *h, struct ts_sb *out);

void ts_hta_init(struct ts_hta *h);
void ts_hta_release(struct ts_hta *h);

#endif

/*
 * diffcompat.h - the compatibility modes of `trainscope diff` and its
 * annotated Perfetto output (docs/diff-compat.md).
 *
 *   ts_diff_hta_*        HolisticTraceAnalysis's TraceDiff.compare_traces and
 *                        ops_diff (commit f4d0062), its preprocessing included
 *                        (--hta-compat);
 *   ts_diff_tracelens_*  TraceLens's gpu_timeline comparison (baseline,
 *                        variant, diff, pct per row, as in its
 *                        compare_perf_reports CSV) plus a kernel-family table
 *                        that lines up kernels of different vendors
 *                        (--tracelens-compat);
 *   ts_diff_annotate_write  a dual-process Chrome-trace file with both
 *                        sides' compared steps aligned at step start and
 *                        "delta" tracks for the rows that moved (--annotate).
 *
 * Inputs are loaded traces (struct ts_trace, read with flow events kept for
 * the TraceLens mode); nothing here references them after a call returns.
 * Results own their memory (one arena) and are freed by *_release().
 */
#ifndef TRAINSCOPE_DIFFCOMPAT_H
#define TRAINSCOPE_DIFFCOMPAT_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/jsonw.h"
#include "trainscope/trace.h"
#include "trainscope/tracelens.h"

/* ------------------------------------------------------------ HTA TraceDiff */

/* HTA's DeviceType: CPU = rows with stream -1 (cpu_op, cuda_runtime,
 * user_annotation, ProfilerStep itself), GPU = stream != -1, ALL = both. */
enum ts_diff_hta_device {
	TS_DIFF_HTA_CPU = 1,
	TS_DIFF_HTA_GPU = 2,
	TS_DIFF_HTA_ALL = 3
};

/* One side of the comparison, as HTA's LabeledTrace over a trace folder. */
struct ts_diff_hta_side {
	const struct ts_trace *const *traces; /* every rank trace of the folder */
	size_t ntraces;
	/* Ranks (HTA's rank: distributedInfo.rank, else 0) summed together;
	 * NULL/0: HTA's default, the lowest rank. */
	const int64_t *ranks;
	size_t nranks;
	/* ProfilerStep numbers summed together; NULL/0: the lowest one of
	 * any ProfilerStep name in the folder (HTA's default). */
	const int64_t *iterations;
	size_t niterations;
};

/* ops_diff's five sets, decided by counts only. */
enum ts_diff_hta_set {
	TS_DIFF_HTA_ADDED = 0,     /* control 0, test > 0 */
	TS_DIFF_HTA_DELETED,       /* control > 0, test 0 */
	TS_DIFF_HTA_INCREASED,     /* both > 0, test more */
	TS_DIFF_HTA_DECREASED,     /* both > 0, test fewer */
	TS_DIFF_HTA_UNCHANGED      /* same count */
};

const char *ts_diff_hta_set_name(enum ts_diff_hta_set s); /* "added", ... */

/* One row of compare_traces (index = name or short_name). */
struct ts_diff_hta_row {
	const char *name;
	int64_t control_counts, test_counts, diff_counts;
	double control_us, test_us, diff_us; /* total_duration, Σ dur in us */
	char change;                         /* counts_change_categories: '+', '-', '=' */
	enum ts_diff_hta_set set;
};

struct ts_diff_hta {
	enum ts_diff_hta_device device;
	int short_name;
	int64_t *control_ranks, *test_ranks;     /* the ranks used */
	size_t ncontrol_ranks, ntest_ranks;
	int64_t *control_iters, *test_iters;     /* the iterations used */
	size_t ncontrol_iters, ntest_iters;
	struct ts_diff_hta_row *rows;            /* sorted by name (byte order), like pandas */
	size_t nrows;
	size_t nchange[3];                       /* rows with '+', '-', '=' */
	size_t nset[5];                          /* rows per enum ts_diff_hta_set */
	struct ts_arena arena;
};

void ts_diff_hta_init(struct ts_diff_hta *d);
void ts_diff_hta_release(struct ts_diff_hta *d);

/*
 * HTA's TraceDiff.compare_traces(control, test, ranks, iterations,
 * device_type, use_short_name) on loaded traces; the ops_diff sets come
 * with each row (HTA's ops_diff always keys on the full name, so they are
 * HTA's exactly when short_name is 0). Per side: HTA's parser (rounding to
 * us, dropped rows, index_correlation; LabeledTrace does not run the
 * last-step filter of `trace --hta-compat`), HTA's iteration
 * column (CPU rows and stream-0 cpu_ops by the ProfilerStep span holding
 * their start, the last such step in row order; GPU rows by the row their
 * index_correlation names), then rows of the chosen iterations and device
 * grouped by name: count and Σ dur. Returns 0; TS_EUSAGE when a side has no
 * trace, no ProfilerStep (HTA: "doesn't have any iteration"), or a rank or
 * iteration asked for that it does not have (err says which);
 * TS_EUNSUPPORTED for a "ProfilerStep..." name HTA cannot parse; TS_ENOMEM.
 * out is initialised here; release
 * it even on error.
 */
int ts_diff_hta_compare(const struct ts_diff_hta_side *control,
			const struct ts_diff_hta_side *test,
			enum ts_diff_hta_device device, int use_short_name,
			struct ts_diff_hta *out, struct ts_err *err);

/*
 * HTA's shorten_name: memory kernels (Memcpy/Memset/dma names) unchanged;
 * otherwise "->" removed, template (<...>) and argument ((...)) groups
 * removed, and the last space-separated word kept. Writes into out.
 */
void ts_diff_hta_short_name(const char *name, struct ts_sb *out);

/*
 * The "hta_compat" object: device, use_short_name, control/test ranks and
 * iterations, counts_change_categories {"+", "-", "="}, ops_diff {added,
 * deleted, increased, decreased, unchanged: [names]}, rows [{name,
 * control_counts, test_counts, diff_counts, control_total_duration_us,
 * test_total_duration_us, diff_duration_us, counts_change_category,
 * ops_diff}].
 */
void ts_diff_hta_write_json(const struct ts_diff_hta *d, struct ts_jw *w);

/* Table of every row (counts, us) and the category totals, appended to out. */
void ts_diff_hta_render(const struct ts_diff_hta *d, struct ts_sb *out);

/* ------------------------------------------------------ TraceLens comparison */

/* The gpu_timeline rows in TraceLens's order of its comparison CSV. */
enum ts_diff_tl_metric {
	TS_DIFF_TL_BUSY = 0,
	TS_DIFF_TL_COMPUTATION,
	TS_DIFF_TL_EXPOSED_COMM,
	TS_DIFF_TL_EXPOSED_MEMCPY,
	TS_DIFF_TL_IDLE,
	TS_DIFF_TL_TOTAL_COMM,
	TS_DIFF_TL_TOTAL_MEMCPY,
	TS_DIFF_TL_TOTAL,
	TS_DIFF_TL_NMETRIC
};

/* "busy_time", "computation_time", ... (TraceLens's `type` column). */
const char *ts_diff_tl_metric_name(enum ts_diff_tl_metric m);

struct ts_diff_tl_row {
	double baseline_us, variant_us;
	double baseline_pct, variant_pct; /* percent of that side's total_time */
	double diff_us;                   /* variant - baseline */
	double diff_pct;                  /* 100 * diff / baseline; NaN when baseline is 0 */
};

/* Kernel families that line up across vendors (names differ, the work
 * does not). */
enum ts_diff_family {
	TS_DF_GEMM = 0,
	TS_DF_ATTN_FWD,
	TS_DF_ATTN_BWD,
	TS_DF_ALLREDUCE,
	TS_DF_ALLGATHER,
	TS_DF_REDUCESCATTER,
	TS_DF_ALLTOALL,
	TS_DF_SENDRECV,
	TS_DF_BROADCAST,
	TS_DF_COMM_OTHER,
	TS_DF_ELEMENTWISE,
	TS_DF_REDUCTION,
	TS_DF_NORM,
	TS_DF_OPTIMIZER,
	TS_DF_MEMCPY,
	TS_DF_MEMSET,
	TS_DF_TRITON,
	TS_DF_EMBEDDING,
	TS_DF_OTHER,
	TS_DF_COUNT
};

/* "gemm", "attention_fwd", "allreduce", ... */
const char *ts_diff_family_name(enum ts_diff_family f);

/*
 * Family of a GPU activity: the taxonomy class (taxonomy.h) refined into
 * attention forward/backward ("bwd", "backward", "grad", "cutlassb" in the name) and
 * collectives by type (all_reduce/allreduce, all_gather/allgather,
 * reduce_scatter/reducescatter, alltoall, sendrecv/send/recv, broadcast).
 */
enum ts_diff_family ts_diff_family_of(const char *name, size_t n, int is_memcpy,
				      int is_memset);

struct ts_diff_tl_family_row {
	enum ts_diff_family family;
	int64_t baseline_count, variant_count;
	double baseline_us, variant_us;      /* Σ kernel duration */
	double diff_us;                      /* variant - baseline */
	int64_t baseline_names, variant_names; /* distinct kernel names */
};

struct ts_diff_tracelens {
	struct ts_tracelens base, var;          /* each side's gpu_timeline */
	struct ts_diff_tl_row rows[TS_DIFF_TL_NMETRIC];
	/* families present on either side, in enum order */
	struct ts_diff_tl_family_row fam[TS_DF_COUNT];
	size_t nfam;
};

/*
 * TraceLens's gpu_timeline of each trace (tracelens.h rules), compared row
 * by row as TraceLens's compare_perf_reports does (diff = variant -
 * baseline, pct = 100 * diff / baseline, empty when baseline is 0), and the
 * kernel-family table over every GPU event (kernel, memcpy, memset) with a
 * duration. Returns 0; TS_EPARSE when a trace has no linked GPU event (err
 * names the file); TS_ENOMEM. No allocation outlives the call.
 */
int ts_diff_tracelens_compare(const struct ts_trace *baseline, const struct ts_trace *variant,
			      struct ts_diff_tracelens *out, struct ts_err *err);

/*
 * The "tracelens_compat" object: gpu_timeline [{type, baseline_ms,
 * variant_ms, diff_ms, diff_pct, baseline_pct_of_total, variant_pct_of_total}]
 * (ms like TraceLens's CSV; diff_pct null when undefined) and families
 * [{family, baseline_count, variant_count, baseline_us, variant_us,
 * diff_us, baseline_kernel_names, variant_kernel_names}].
 */
void ts_diff_tracelens_write_json(const struct ts_diff_tracelens *d, struct ts_jw *w);

/* Both tables (ms, %, us), appended to out. */
void ts_diff_tracelens_render(const struct ts_diff_tracelens *d, struct ts_sb *out);

/* ------------------------------------------------------ annotated Perfetto */

#ifndef TS_DIFF_STEP_PAIR_DEFINED
#define TS_DIFF_STEP_PAIR_DEFINED
/* One compared step of each side (ns on each trace's own clock). */
struct ts_diff_step_pair {
	int64_t base_iteration, cand_iteration;
	int64_t base_start_ns, base_end_ns;
	int64_t cand_start_ns, cand_end_ns;
};
#endif

/* A row that moved (an op group, kernel family, wall), totals over the
 * compared steps. */
struct ts_diff_moved {
	const char *name;
	int64_t baseline_ns, candidate_ns;
};

/* pids of the annotated diff file */
#define TS_DIFF_ANN_PID_BASE 1
#define TS_DIFF_ANN_PID_CAND 2
#define TS_DIFF_ANN_PID_DELTA 3

/*
 * Write a Chrome-trace JSON file ({"traceEvents": [...]}, times in us with
 * ns decimals) to out_path, atomically (atomic.h). Pair k gets a slot on a
 * common timeline starting at the sum of max(baseline, candidate) step
 * lengths of the pairs before it, so paired steps start at the same time.
 * Process "baseline" (pid 1) and "candidate" (pid 2) each hold a
 * "compared steps" track (tid 999999999) with one "step N" event per pair
 * (args: pair, iteration, original_ts_us), then every complete event with
 * a duration (python_function, the profiler's Trace span and flows left
 * out) that starts inside one of that side's steps, shifted into the
 * pair's slot: CPU events on their tid, GPU events (kernel, memcpy, memset,
 * gpu_user_annotation) on "GPU stream N" tracks (tid 1000000000 + N).
 * Process "delta" (pid 3) holds a "step delta" track (tid 0, one event per
 * slot: "step B/C +X.XXX ms (+P %)") and one track per moved row (tid
 * 1 + row index, in the given order): one event over all slots named
 * "NAME +X.XXX ms (+P %)" ("(new)" when the baseline is 0) with args
 * {baseline_ns, candidate_ns, delta_ns}, and an instant "delta NAME" at 0.
 * Steps lie within +-2^62 ns (as a trace's do); slot times and GPU tids
 * past int64 saturate at INT64_MAX. Returns 0; TS_EUSAGE when npairs is 0 or a step ends before it starts;
 * TS_EIO from the writer; TS_ENOMEM.
 */
int ts_diff_annotate_write(const char *out_path, const struct ts_trace *base,
			   const struct ts_trace *cand, const struct ts_diff_step_pair *pairs,
			   size_t npairs, const struct ts_diff_moved *rows, size_t nrows,
			   struct ts_err *err);

#endif

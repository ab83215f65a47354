/*
 * gate.h - the evidence gate: load runs, match their steady windows,
 * compare baseline and candidate step times with an honest 95 % CI, check
 * that the training is still the same (loss and grad-norm curves, NaN/Inf
 * and skipped counts, peak memory), and validate a winner.
 *
 * Procedures and thresholds: docs/gate.md, after
 * ../shared/reference/ab-stats.md (A4, A5) and flops-memory-workflow.md
 * (3.3, 5.4). Times are milliseconds in doubles (derived from the logs'
 * integer nanoseconds), memory bytes.
 *
 * Ownership: a ts_run owns its points, contract and model; a result owns
 * its strings and arrays (its arena), freed by *_release(), except that
 * run paths and contract differences point into the ts_runs compared: keep
 * them alive while the result is used.
 */
#ifndef TRAINSCOPE_GATE_H
#define TRAINSCOPE_GATE_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/contract.h"
#include "trainscope/core.h"
#include "trainscope/logs.h"
#include "trainscope/model.h"
#include "trainscope/paths.h"
#include "trainscope/run.h"
#include "trainscope/steps.h"

/* ------------------------------------------------------------ runs */

/* One logged iteration: a record of ts_steps_merge (steps.h), the one
 * merge over ranks of every command (the slowest rank's time and phases,
 * the lowest rank's loss and grad norm, NaN/skipped from any rank). */
struct ts_run_point {
	int64_t iteration;
	double step_ms;        /* NAN when the record has no time */
	double loss;           /* NAN when unknown or printed non-finite */
	double grad_norm;      /* NAN when unknown or printed non-finite */
	int nonfinite;         /* non-finite iterations it stands for: 1 when a loss or
			        * grad norm printed NaN/Inf, the NaN-iteration count
			        * when it counts more (over a log interval); else 0 */
	int64_t skipped;       /* skipped iterations reported in this record */
	unsigned excluded;     /* enum ts_point_excl: why it never enters a window */
	double phase_ms[TS_PHASE_COUNT]; /* per-phase time (enum ts_phase) of the record
				      * that set step_ms (the slowest rank), NAN unknown */
};

enum ts_point_excl {
	TS_EXCL_PROFILER = 1 << 0,   /* captured by a profiler trace of the run (ProfilerStep#N),
				      * the iteration after a captured range (trace export),
				      * or profiler lines in the log precede it */
	TS_EXCL_CHECKPOINT = 1 << 1, /* checkpoint save lines precede it */
	TS_EXCL_EVAL = 1 << 2,       /* evaluation lines precede it */
	TS_EXCL_FIRST = 1 << 3,      /* it holds iteration 1: iteration 1, or an interval
				      * record reaching back to it (ts_steps_first_cut) */
	TS_EXCL_RESTART = 1 << 4     /* a restarted process's first record or warm-up
				      * (TS_STEP_RESTART, TS_STEP_RESTART_WARMUP) */
};

struct ts_run {
	char path[TS_ERR_PATH_MAX];
	char format[24];            /* log format of the step source */
	struct ts_contract contract;
	int has_contract;
	char contract_path[TS_ERR_PATH_MAX];
	TS_VEC(struct ts_run_point) pts; /* ascending iteration, unique */
	int64_t log_interval;       /* the points' logging interval (Megatron's
				     * --log-interval; ts_record_interval), 0 none */
	int nsources;               /* files the steps came from */
	int64_t global_batch;       /* -1 unknown */
	double peak_dev_bytes;      /* max allocated device memory, NAN unknown */
	double peak_dev_reserved_bytes; /* max reserved device memory (the
				     * caching allocator's), NAN unknown */
	double peak_host_bytes;     /* max host RSS, NAN unknown */
	int has_trace;              /* a profiler trace sits in the run directory */
	struct ts_paths traces;     /* its Kineto / legacy traces and Nsight Systems exports */
	char args_log[TS_ERR_PATH_MAX]; /* the log whose Megatron arguments block was read, or "" */
	size_t nprofiled;           /* ProfilerStep entries found in its traces */
	/* the run model it was loaded from (run.h): inputs, THE steps
	 * analysis and its window, the model FLOP rate (rm.rate: the model
	 * for recomputing TFLOP/s), the warnings; empty for runs built in
	 * memory (tests, simulations) */
	struct ts_runmodel rm;
	/* the one loss-health verdict (steps.h) of the loaded step log; a run
	 * built point by point (tests) reads finite with no evidence */
	struct ts_loss_health health;
};

void ts_run_init(struct ts_run *r);
void ts_run_release(struct ts_run *r);

/*
 * Load a run through the run model (ts_runmodel_load with o, NULL =
 * defaults): a directory (its JSONL metrics files when present, else its
 * training logs; contract.json or any trainscope contract; traces noted),
 * a log file or a JSONL file. TS_EIO unreadable, TS_EPARSE (naming the
 * file) when no step records are found or the contract is malformed,
 * TS_EUSAGE for the run model's identity errors. A trace that cannot be
 * scanned for profiled steps is a warning in r->rm.warnings.
 */
int ts_run_load(struct ts_run *r, const char *path, const struct ts_runmodel_opts *o,
		struct ts_err *err);

/* The first iteration point i of r stands for (ts_record_from: since the
 * point before it, at most the run's log interval). */
int64_t ts_run_point_from(const struct ts_run *r, size_t i);

/* Whether point i of r belongs to the window [first, last]: the iterations
 * it stands for (ts_run_point_from) overlap it (ts_record_in_window, the
 * one rule of every command). */
int ts_run_point_in_window(const struct ts_run *r, size_t i, int64_t first, int64_t last);

/* Count of points with a non-finite loss/grad-norm or NaN iteration, and
 * the sum of skipped iterations, over the points in the window [first,
 * last] (ts_run_point_in_window). */
void ts_run_health(const struct ts_run *r, int64_t first, int64_t last, int64_t *nonfinite,
		   int64_t *skipped);

/* ------------------------------------------------------------ windows */

#define TS_WIN_AUTO INT64_MIN

struct ts_window {
	int64_t first, last;   /* inclusive iteration range */
	size_t n;              /* points inside with a time and not excluded */
	int declared;          /* given by the user / contract */
	int steady;            /* MSER-5 found a steady state */
	int64_t mser_first;    /* first iteration MSER-5 keeps */
};

/*
 * The steady window of one run. A loaded run's automatic window is the
 * window of its steps analysis (r->rm.window: one window for every
 * command). A run built in memory without a run model (tests,
 * simulations) gets the point rule instead: iteration 1 and every
 * excluded point dropped, the warm-up cut by MSER-5 (White 1997) and at
 * least the first 10 % of the logged steps, ending at the last timed
 * iteration. A declared [first, last] replaces the automatic choice.
 * Inside the window, iteration 1, profiler, checkpoint, evaluation and
 * NaN/skipped points are never timed (n counts the rest).
 * Returns 0, or TS_EUSAGE when fewer than 10 timed points remain.
 */
int ts_run_window(const struct ts_run *r, int64_t first, int64_t last, struct ts_window *w,
		  struct ts_err *err);


/* 1 when a point can be timed: it has a step time, is not iteration 1, is
 * no profiler/checkpoint/eval artefact, and has no NaN or skipped step. */
int ts_run_point_usable(const struct ts_run_point *p);

/* Step times (ms) of the window's usable points (ts_run_point_in_window), with their iterations
 * (iters may be NULL). Returns the count written (at most cap). */
size_t ts_run_window_times(const struct ts_run *r, const struct ts_window *w, double *ms,
			   int64_t *iters, size_t cap);

/* ------------------------------------------------------------ A/B */

enum ts_ab_verdict {
	TS_AB_INVALID = 0,
	TS_AB_FASTER,
	TS_AB_SLOWER,
	TS_AB_NO_DIFFERENCE,
	TS_AB_INCONCLUSIVE
};
const char *ts_ab_verdict_name(int verdict);

struct ts_ab_opts {
	double band;              /* practical-significance band, < 0 = 1 % with repeats, 2 % without */
	int allow_multi;          /* accept contracts differing in several fields */
	const char *variable;     /* the declared changed field, or NULL */
	int64_t win_first, win_last; /* declared window or TS_WIN_AUTO */
	double mem_tolerance;     /* allowed device peak-memory growth (fraction) */
	double loss_tolerance;    /* statistical loss tier: the last 10 %'s means may differ
				   * by this (fraction, default 0.01) within the noise; the
				   * last half's bias band is half of it */
	double run_cv;            /* assumed run-to-run CV of a run's mean step time
				   * (fraction) for comparisons without repeats on both
				   * sides; 0 = within-run interval only */
	uint64_t seed;            /* bootstrap seed */
	/* Where the sides' profiler traces record different environments:
	 * ts_diff_ctx_changes (diff.h, TS_DCTX_ENV_MASK) of the first trace
	 * of each side's first run, read by the caller (gate reads no
	 * trace); borrowed; NULL when a side has none. */
	const struct ts_ctx_change *trace_ctx;
	size_t ntrace_ctx;
	/* Where one side's own traces (every profiler trace and Nsight
	 * Systems export of each of its runs, side 0 the baseline, 1 the
	 * candidate) record different environments: each change's a and b
	 * name a value and the trace that records it, read by the caller;
	 * borrowed; a context-mixed warning per side that has any. */
	const struct ts_ctx_change *mixed_ctx[2];
	size_t nmixed_ctx[2];
};

void ts_ab_opts_init(struct ts_ab_opts *o);

struct ts_ab_run_summary {
	const char *path;
	const char *label;        /* contract label or NULL */
	size_t steps_logged;
	size_t window_steps;
	double mean_ms, median_ms, cv;
	double ci95_low_ms, ci95_high_ms; /* CI of the mean (autocorrelation-honest) */
	const char *ci_method;
	int64_t nonfinite, skipped;
	int loss_verdict;         /* enum ts_loss_verdict of the run */
	int loss_cause;           /* enum ts_loss_cause */
	int64_t first_bad_iteration; /* TS_NO_INT when finite */
	int64_t first_bad_possible;  /* the first iteration its record stands for
				      * (ts_loss_health's first_bad_possible) */
	double peak_dev_bytes, peak_host_bytes;
	double final_loss;
	int64_t final_loss_iteration; /* TS_NO_INT when no finite loss */
};

struct ts_ab_check {
	const char *name;         /* "loss_curve", "grad_norm_curve", "nan_inf", "skipped", "peak_memory", ... */
	int passed;
	int skipped;              /* not applicable (no data); does not fail */
	const char *detail;
};

/*
 * One phase of the step (enum ts_phase) compared like the total: over the
 * paired iterations of the matched window that carry the phase in every
 * run, the same interval construction (paired by iteration, or runs as
 * replicates with repeats, plus --run-cv as a relative term), at the
 * Bonferroni level 1 - 0.05 / m over the m phases compared, so all m
 * intervals hold together with >= 95 %. The band is the total's band in
 * step-time units: band * baseline mean step / baseline mean phase (a
 * phase verdict says whether the phase's change moves the step by more
 * than the band). docs/gate.md.
 */
struct ts_ab_phase {
	int phase;                /* enum ts_phase */
	const char *name;         /* "data", "fwd", "bwd", "forward-backward", "opt", "comm" */
	int on_base, on_cand;     /* logged by a run of that side inside the window */
	const char *reason;       /* why it is not compared, or NULL */
	size_t pairs;             /* paired iterations carrying it */
	double base_mean_ms, cand_mean_ms; /* over those pairs; not compared: over the
				      * paired steps where every run of the side logs
				      * it (NAN for a side that does not) */
	double share;             /* baseline mean phase / baseline mean step */
	double ratio, ci_low, ci_high; /* candidate / baseline at phase_ci_level */
	double band;              /* the phase's band on the ratio scale */
	const char *method;
	int verdict;              /* enum ts_ab_verdict; TS_AB_INVALID when not compared */
};

/* The short name of a phase in ab output: "data", "fwd", "bwd", "opt",
 * "comm" (the JSONL key stems), "forward-backward" (the Megatron timer). */
const char *ts_ab_phase_name(int phase);

#define TS_AB_DECIDE_MAX_DATA 100.0

struct ts_ab_result {
	int verdict;              /* enum ts_ab_verdict */
	int accepted;             /* verdict faster/no_difference and correctness passed */
	double ratio, ci95_low, ci95_high; /* candidate / baseline mean step time */
	double band;
	double run_cv;            /* the assumed run-to-run CV folded into the CI (0 none) */
	double run_term;          /* its 95 % half-width on the ratio scale (0 none) */
	const char *method;       /* how the CI was made */
	int repeats;              /* both sides have >= 2 runs */
	int64_t win_first, win_last;
	size_t win_steps;
	/* what would decide an inconclusive result (0 when not applicable:
	 * also when it would take more than TS_AB_DECIDE_MAX_DATA times the
	 * data, an estimate that close to the band edge; decide_note says so) */
	double more_steps_per_run;
	double more_runs_per_side;
	const char *decide_note;
	/* correctness */
	int correctness_passed;
	const char *loss_tier;    /* "bitwise" or "statistical" */
	TS_VEC(struct ts_ab_check) checks;
	TS_VEC(const char *) reasons;   /* why correctness failed */
	TS_VEC(const char *) invalid;   /* why the comparison is invalid */
	struct ts_warnings warnings;    /* of the comparison (run.h; codes in docs/warnings.md) */
	/* contracts */
	int contracts_compared;
	const char *variable;     /* the one changed field, when exactly one */
	TS_VEC(struct ts_contract_diff) diffs;
	/* runs */
	TS_VEC(struct ts_ab_run_summary) base, cand;
	double base_mean_ms, cand_mean_ms;
	/* attribution: per-phase comparisons (ts_ab_phases); empty when no run
	 * logs phase times */
	TS_VEC(struct ts_ab_phase) phases;
	size_t phases_compared;   /* phases with an interval: the Bonferroni family size */
	double phase_ci_level;    /* per-phase interval level, 1 - 0.05 / phases_compared */
	struct ts_arena arena;
};

void ts_ab_result_init(struct ts_ab_result *res);
void ts_ab_result_release(struct ts_ab_result *res);

/*
 * Compare nb baseline runs with nc candidate runs. An invalid comparison
 * (contracts differing in more than one field without allow_multi, the
 * declared variable not the one that differs, different batch shape, no
 * common window) returns 0 with verdict TS_AB_INVALID and the reasons
 * in res->invalid. Returns TS_ENOMEM / TS_EUSAGE (nb or nc zero) otherwise.
 * A valid comparison also compares the phases (res->phases, struct
 * ts_ab_phase) when any run logs phase times.
 */
int ts_ab_compare(const struct ts_run *base, size_t nb, const struct ts_run *cand, size_t nc,
		  const struct ts_ab_opts *o, struct ts_ab_result *res, struct ts_err *err);

/* One field of where or how a side ran that differs between the two
 * sides of a comparison: its words ("world size", "tp"), both values
 * as text (borrowed), and the contract key that records the same fact
 * ("environment.gpu.name"), or NULL. */
struct ts_ctx_change {
	const char *label;
	const char *a, *b;
	const char *key;
};

/*
 * The one context-differs warning of a comparison (diff's environment
 * fields, ab's recorded environment and layout): "the two sides differ in
 * world size (8 vs 16) and tp (2 vs 4): the step time and every delta
 * include the effect of those differences, not only of the change under
 * comparison", appended to w. Nothing when n is 0. Returns 0 or TS_ENOMEM.
 */
int ts_context_differs_warn(struct ts_warnings *w, const struct ts_ctx_change *c, size_t n);

/*
 * The context-mixed warning of one side (`side`: "baseline" or
 * "candidate") whose own traces differ among themselves, each change's a
 * and b naming a value and its trace: "the candidate's traces differ among
 * themselves in device (NVIDIA H200 in run/rank0.json vs NVIDIA H100 in
 * run/rank3.json): its step times mix those setups, so the comparison
 * includes the effect of that difference", appended to w. Nothing when n
 * is 0. Returns 0 or TS_ENOMEM.
 */
int ts_context_mixed_warn(struct ts_warnings *w, const char *side, const struct ts_ctx_change *c,
			  size_t n);

/*
 * The warnings of an A/B comparison in one list, as `ab` prints and writes
 * them and the report's A/B section shows them: those of the runs (their
 * run models; one that names no file is prefixed with the run's path, a
 * run given twice, an A/A check, warns once), then those of the
 * comparison (res->warnings). Appends to all; returns 0 or TS_ENOMEM.
 */
int ts_ab_warnings(const struct ts_run *runs, size_t n, const struct ts_ab_result *res,
		   struct ts_warnings *all);

/*
 * A ratio candidate / baseline with its 95 % interval (NaN when it cannot
 * be estimated) and how it was made (a static string, NULL when NaN).
 */
struct ts_ab_ratio {
	double estimate, ci95_low, ci95_high;
	const char *method;
};

/*
 * mean(b) / mean(a) over n pairs (a_i, b_i) matched by iteration or
 * position: the interval of mean(b - a) by ts_stats_ci_mean (batch means,
 * AR(1) or a block bootstrap, autocorrelation-honest), then
 * 1 + mean(d) / mean(a) with mean(a)'s own interval added by the delta
 * method. n < 2 gives NaN (no noise estimate). Returns 0 or TS_ENOMEM.
 */
int ts_ab_paired_ratio(const double *a, const double *b, size_t n, uint64_t seed,
		       struct ts_ab_ratio *out);

/*
 * Unpaired ratio of geometric means exp(mean log b - mean log a) with a
 * Welch t interval on the logs; values must be > 0. Fewer than 2 values
 * on a side gives NaN.
 */
void ts_ab_welch_log_ratio(const double *a, size_t na, const double *b, size_t nb,
			   struct ts_ab_ratio *out);

/*
 * The verdict of an interval [lo, hi] of a ratio against a practical band:
 * faster when hi < 1 - band, slower when lo > 1 + band, no_difference when
 * the interval lies inside 1 +- band (edges included), else inconclusive
 * (also when lo, hi or band is NaN).
 */
int ts_ab_decide(double lo, double hi, double band);

/* ------------------------------------------------------------ backend evidence */

enum ts_check_status { TS_CHECK_PASS = 0, TS_CHECK_WARN, TS_CHECK_FAIL, TS_CHECK_SKIP };
const char *ts_check_status_name(int status);


/* What ran, from a profiler trace: attention kinds, graph replays and
 * collectives (kernels and CPU operators; runtime calls for graphs). */
enum ts_attn_kind {
	TS_ATTN_NONE = 0,
	TS_ATTN_FLASH,      /* FlashAttention kernels/ops (flash_fwd, FA3, CPU flash SDPA) */
	TS_ATTN_CUDNN,      /* cuDNN / muDNN fused attention, TE fused attention */
	TS_ATTN_EFFICIENT,  /* memory-efficient attention (xformers / cutlass fmha) */
	TS_ATTN_MATH,       /* unfused: SDPA math fallback, Megatron's masked softmax */
	TS_ATTN_COUNT
};
enum ts_coll_kind {
	TS_COLL_NONE = 0,
	TS_COLL_ALLTOALL,
	TS_COLL_ALLGATHER,
	TS_COLL_REDUCE_SCATTER,
	TS_COLL_ALLREDUCE,
	TS_COLL_DEEPEP,     /* DeepEP dispatch/combine kernels */
	TS_COLL_HYBRIDEP,   /* HybridEP kernels */
	TS_COLL_COUNT
};
const char *ts_attn_name(int kind);
const char *ts_coll_name(int kind);

struct ts_backend_evidence {
	size_t traces;                 /* traces scanned */
	int64_t kernels;               /* GPU kernels seen (0: a CPU-only trace) */
	int64_t graph_launches;        /* cudaGraphLaunch / musaGraphLaunch / hipGraphLaunch calls */
	int64_t attn[TS_ATTN_COUNT];   /* events per attention kind */
	int64_t coll[TS_COLL_COUNT];   /* events per collective kind */
	char graph_example[96];
	char attn_example[TS_ATTN_COUNT][160];  /* first name seen per kind */
	char coll_example[TS_COLL_COUNT][160];
	unsigned ex_kernel;            /* bit per example taken from a kernel name */
};

void ts_backend_evidence_init(struct ts_backend_evidence *e);
/* Add one trace's evidence to e. TS_ENOMEM only. */
struct ts_trace;
int ts_backend_scan(const struct ts_trace *t, struct ts_backend_evidence *e);
/* Read a trace file (python functions and flows skipped) and scan it; an
 * Nsight Systems export is read rank by rank (nsys.h). */
int ts_backend_scan_file(const char *path, struct ts_backend_evidence *e, struct ts_err *err);

/* What a contract asks for (keys as `contract capture --from-log` writes
 * them): workload.attention_backend (Megatron "AttnBackend.flash" or
 * "flash"; workload.use_flash_attn), workload.graph_impl /
 * enable_cuda_graph / external_cuda_graph, workload.dispatcher and
 * workload.dispatcher_backend (or moe_enable_deepep). Empty = not asked. */
struct ts_backend_request {
	char attention[24];        /* flash | fused | unfused | local | auto | "" */
	int graphs;
	char dispatcher[24];       /* alltoall | allgather | flex | "" */
	char dispatcher_backend[24]; /* deepep | hybridep | "" */
};
void ts_backend_requested(const struct ts_contract *c, struct ts_backend_request *q);

/* One verdict over every requested item: fail when the trace shows another
 * kind ran (a fallback), warn when the trace cannot tell (no kernels, no
 * collectives), pass when each request is evidenced, skip when nothing was
 * requested (the evidence then says what the trace shows). */
struct ts_backend_verdict {
	int status;                /* enum ts_check_status */
	char evidence[1024];
};
void ts_backend_judge(const struct ts_backend_request *q, const struct ts_backend_evidence *e,
		      struct ts_backend_verdict *out);

/* ------------------------------------------------------------ validate */


struct ts_validate_check {
	const char *name;
	int status;               /* enum ts_check_status */
	const char *evidence;
};

struct ts_validate_result {
	int passed;               /* no check failed */
	int64_t win_first, win_last;
	size_t win_steps;
	TS_VEC(struct ts_validate_check) checks;
	struct ts_arena arena;
};

void ts_validate_result_init(struct ts_validate_result *v);
void ts_validate_result_release(struct ts_validate_result *v);

#define TS_VALIDATE_MIN_STEPS 50

/*
 * The final check of a winner (flops-memory-workflow 5.4 items 3-6): at
 * least 50 logged steps; a window (declared, or from the contract's
 * workload.steady_window; an automatic one fails the check unless
 * accept_auto, then it only warns) after iteration 1 and any restarted
 * process's start (a window holding one fails; its profiler, checkpoint
 * and evaluation steps are left out of the statistics and named, as the
 * checklist's "window excludes" asks); finite loss; zero skipped and NaN
 * iterations in the window; logged TFLOP/s against a recomputed value
 * (skipped: needs a model FLOP formula); peak memory reported; backend
 * evidence from the run's traces against what its contract (else its
 * Megatron arguments block) requested (ts_backend_judge; skipped when no
 * trace; an unreadable trace is a warning). TS_ENOMEM only.
 */
int ts_validate_run(const struct ts_run *r, int64_t win_first, int64_t win_last,
		    int accept_auto, struct ts_validate_result *v, struct ts_err *err);

#endif

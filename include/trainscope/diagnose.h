/*
 * diagnose.h - from the evidence of a run (per-step records per rank, the
 * steady-state summary of steps.h, the per-rank and cross-rank trace
 * profiles of profile.h, throughput figures) to the dominant wall with its
 * numbers, stragglers, loss health, the evidence that is missing, and
 * candidate changes to test.
 *
 * ts_diag_gather() (diagnose_gather.c) fills the evidence from a run
 * directory with the project's readers and analyses; tests fill the
 * per-step records and the steady summary by hand. The wall names are
 * profile.h's enum ts_wall.
 *
 * Units: milliseconds as double for per-step display values (NaN =
 * unknown); trace profiles keep their int64 nanoseconds.
 *
 * Ownership: a struct ts_diag owns everything in it (ts_diag_release()).
 * Strings passed in are copied.
 */
#ifndef TRAINSCOPE_DIAGNOSE_H
#define TRAINSCOPE_DIAGNOSE_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/hang.h"
#include "trainscope/model.h"
#include "trainscope/core.h"
#include "trainscope/profile.h"
#include "trainscope/report.h"
#include "trainscope/run.h"
#include "trainscope/steps.h"

/* The vendor of the run's device, from its traces. */
enum ts_vendor_kind { TS_DIAG_VENDOR_UNKNOWN = 0, TS_DIAG_VENDOR_CPU, TS_DIAG_VENDOR_CUDA,
		      TS_DIAG_VENDOR_ROCM, TS_DIAG_VENDOR_MUSA };

/* One logged iteration of one rank. Unknown values are NaN. */
struct ts_diag_step {
	int64_t iteration;
	double step_ms;
	double data_ms;
	double fwd_ms;
	double bwd_ms;
	double comm_ms;
	double loss;
	double grad_norm;
	int skipped;     /* 1 skipped, 0 not, -1 unknown */
	int nan;         /* NaN iteration reported by the framework */
};

struct ts_diag_rank_steps {
	int64_t rank;
	TS_VEC(struct ts_diag_step) steps;
};

/* The steady-state summary of the step-time series (from the steps analysis). */
struct ts_diag_steady {
	int known;
	int64_t first, last;        /* steady window (iterations) */
	size_t n;                   /* steps used in the window */
	double mean_ms, median_ms;
	double ci_lo_ms, ci_hi_ms;  /* 95 % CI of the mean */
	char ci_method[32];
	double cv;                  /* fraction */
	TS_VEC(int64_t) stalls;     /* iterations flagged as stalls (whole run) */
	size_t stall_period;        /* 0 = no period found */
};

/* Throughput, from the steps / mfu analyses (NaN when unknown). */
struct ts_diag_rate {
	double tokens_per_s;
	double tflops_per_gpu;
	double mfu_pct;
	double hfu_pct;
	char *peak_name;      /* "H100 SXM BF16 989.4 TFLOP/s" */
	char *model_name;     /* from config.json */
};

/* What was found in the run directory. */
struct ts_diag_inputs {
	char *run;                    /* the path given */
	TS_VEC(char *) logs;          /* training logs */
	TS_VEC(char *) metrics;       /* JSONL metrics */
	TS_VEC(char *) traces;
	TS_VEC(char *) configs;       /* model configs */
	TS_VEC(char *) telemetry;
	TS_VEC(char *) contracts;
	TS_VEC(char *) other;
	TS_VEC(char *) hang;          /* hang evidence (hang.h): watchdog logs, FR dumps, reports */
	char *steps_source;           /* which file the step series came from */
};

struct ts_diag_item {
	char *title;
	char *detail;   /* may be NULL */
	int level;      /* enum ts_report_level */
};

struct ts_diag {
	struct ts_diag_inputs in;
	TS_VEC(struct ts_diag_rank_steps) ranks;  /* sorted by rank */
	struct ts_diag_steady steady;             /* of the reporting rank */
	struct ts_runmodel *rm;                   /* the run (run.h), the caller's; NULL
						   * for evidence filled by hand */
	const struct ts_steps_report *steps_rep;  /* the run's steps analysis (rm->steps) */
	int have_steps;                           /* steps_rep is set */
	/* The run's one record per iteration, ascending (ts_steps_merge: the
	 * series the steps analysis judges; each step time and phase the
	 * slowest rank's, the loss the lowest rank's that logs one, skipped and
	 * NaN any rank's): the log's data wall and loss health read it. */
	TS_VEC(struct ts_diag_step) series;
	/* trace evidence: one profile per trace file (rank window) and the
	 * cross-rank analysis over them (profile.h) */
	struct ts_rank_prof **profs;
	size_t nprofs;
	struct ts_job_prof job;
	int job_done;                             /* ts_job_analyse() ran */
	struct ts_diag_rate rate;
	struct ts_hang_set hang;                  /* read from in.hang */
	struct ts_hang_result hang_res;           /* valid when hang_done */
	int hang_done;
	/* Evidence that the model is a mixture of experts, in words (in the
	 * arena), or NULL: num_experts > 0 in a model config or in a Megatron
	 * log's arguments, or an MoE-named kernel or op in a trace (moe,
	 * expert, DeepEP, token dispatch). Advice about MoE needs it. */
	const char *moe_evidence;
	/* the Megatron arguments block of each of in.logs, read once (ok 0:
	 * the log has none) */
	struct ts_diag_log_args {
		int ok;
		struct ts_model m;
		struct ts_model_args a;
	} *log_args;

	/* results of ts_diag_analyse() */
	int wall_known;
	enum ts_wall wall;                        /* valid when wall_known */
	const char *wall_basis;                   /* "trace", "log", "trace and log" or NULL */
	double wall_share_pct;                    /* share of the step the wall costs; NaN */
	TS_VEC(struct ts_diag_item) evidence;
	int64_t straggler_rank;                   /* -1 none */
	double straggler_excess_ms;
	TS_VEC(struct ts_diag_item) findings;     /* loss health, stalls, stragglers */
	TS_VEC(struct ts_diag_item) missing;
	TS_VEC(struct ts_diag_item) advice;
	int failed;                               /* sticky allocation failure */
	struct ts_arena arena;
};

void ts_diag_init(struct ts_diag *d);
void ts_diag_release(struct ts_diag *d);

/* Copy s into d's arena; NULL on failure (or when s is NULL). */
char *ts_diag_strdup(struct ts_diag *d, const char *s);

/* Rank record for rank (created, kept sorted); NULL on allocation failure. */
struct ts_diag_rank_steps *ts_diag_rank(struct ts_diag *d, int64_t rank);

/* The rank whose logged records the log rules (data time, loss counts)
 * and the report's step chart read: the steps analysis' slowest rank,
 * whose records give the step time, when it names one; else the last
 * rank (Megatron logs from the last rank). NULL without per-rank records. */
const struct ts_diag_rank_steps *ts_diag_series_rank(const struct ts_diag *d);

/*
 * Fill d from a loaded run model (ts_runmodel_load, need_steps 0): its
 * classified inputs, its steps analysis (the steady summary, stalls and
 * loss health come from it, never recomputed), per-rank records from the
 * JSONL metrics (with the step split) or its step log, per-rank trace
 * summaries, throughput and MFU from a model config and the trace's
 * device. Warnings of the trace stage (truncated-trace,
 * profiled-steps-slower, window-outside-trace) are appended to
 * rm->warnings. rm must outlive d. Returns 0, TS_EIO / TS_EPARSE (err
 * names the file) or TS_ENOMEM. A run with nothing usable in it is
 * TS_EUSAGE ("no training log, metrics or trace found in ...").
 */
int ts_diag_gather(struct ts_diag *d, struct ts_runmodel *rm, struct ts_err *err);

/*
 * Take ownership of a rank profile (from ts_rank_profile()); it is
 * released with d. Returns 0 or TS_ENOMEM (p is then still the caller's).
 */
int ts_diag_add_profile(struct ts_diag *d, struct ts_rank_prof *p);

/*
 * Decide the dominant wall, find stragglers, judge loss health, list
 * missing evidence and fill the advice for the wall and vendor.
 * Deterministic. Returns 0 or TS_ENOMEM.
 *
 * With traces, the wall is the cross-rank verdict of ts_job_analyse()
 * (profile.h, its thresholds) with its evidence, and the log adds its own
 * numbers. Without traces, from the per-step records (thresholds in
 * docs/diagnose-report.md):
 *  - data: data-loader time >= 10 % of the step time after warm-up, or
 *    stalls whose excess over the steady median is >= 50 % data-loader time;
 *  - straggler: >= 2 ranks and one rank's forward time (before the first
 *    gradient collective) exceeds the other ranks' by >= 20 % of the step
 *    (the first 64 ranks of the log are compared);
 *  - otherwise unknown, with the evidence that would decide it listed.
 */
int ts_diag_analyse(struct ts_diag *d);

/* Candidates for a wall and vendor (appended to d->advice); wall_known 0
 * gives the "collect evidence first" entry. MoE-only candidates (expert
 * parallelism, token dispatchers, grouped GEMM, ...) only when
 * d->moe_evidence is set: a dense model, or one of unknown kind, gets none. */
int ts_diag_advise(struct ts_diag *d, int wall_known, enum ts_wall wall,
		   enum ts_vendor_kind vendor);

/* The vendor of the run: the first trace's, else unknown. */
enum ts_vendor_kind ts_diag_vendor(const struct ts_diag *d);
const char *ts_diag_vendor_name(enum ts_vendor_kind v);

/* Fill a report model from d (everything d knows) after ts_diag_analyse().
 * Returns 0 or TS_ENOMEM. */
int ts_diag_to_report(const struct ts_diag *d, struct ts_report *r);

/* The terminal summary (advice_only: the wall and its candidates). */
void ts_diag_text(const struct ts_diag *d, struct ts_sb *out, int advice_only);

/* Write the trainscope.diagnose/1 JSON object (pretty): "steps" is the
 * steps analysis exactly as `steps --json` writes it (less "schema"),
 * "window" and "warnings" the run's. */
void ts_diag_json(const struct ts_diag *d, struct ts_sb *out);

#endif

/*
 * steps.h - from a step series (logs.h) to "how fast is it really?":
 * the steady-state window, step-time statistics with an honest 95 % CI,
 * throughput, stalls (one-off and periodic), loss health, memory, ranks
 * and bucket mixtures. Procedures and thresholds: docs/steps.md.
 *
 * The report owns all its arrays; ts_steps_report_release() frees them.
 * Times are reported in milliseconds (doubles), memory in bytes.
 */
#ifndef TRAINSCOPE_STEPS_H
#define TRAINSCOPE_STEPS_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/logs.h"
#include "trainscope/stats.h"

/* ---------------------------------------------------------- loss health */

/*
 * Evidence about the numerical health of a run, each kind with the first
 * iteration it shows on. Ties in first iteration are reported in this
 * order.
 */
enum ts_loss_cause {
	TS_LOSS_CAUSE_NONE = 0,
	TS_LOSS_CAUSE_LOSS,         /* the primary loss (lm loss, loss, ...) printed NaN/Inf */
	TS_LOSS_CAUSE_EXTRA_LOSS,   /* an extra loss (mtp_1 loss, MoE aux loss, JSONL *_loss) NaN/Inf */
	TS_LOSS_CAUSE_GRAD_NORM,    /* grad norm printed NaN/Inf */
	TS_LOSS_CAUSE_NAN_COUNTER,  /* Megatron "number of nan iterations" > 0, JSONL "nan": true */
	TS_LOSS_CAUSE_LOSS_DROPPED, /* the loss was logged before and is absent from a later
				     * record of the same series (file, rank) that is not an
				     * all-skipped interval: Megatron drops a NaN loss
				     * because it prints only losses > 0 */
	TS_LOSS_CAUSE_SKIPPED,      /* "number of skipped iterations" > 0, JSONL "skipped": true;
				     * evidence only: fp16 loss-scale warm-up skips steps */
	TS_LOSS_CAUSE_NEVER_LOGGED, /* no record carries a loss */
	TS_LOSS_CAUSE_COUNT
};

/* "none", "loss-nonfinite", "extra-loss-nonfinite", "grad-norm-nonfinite",
 * "nan-iterations", "loss-dropped", "skipped-iterations", "no-loss-logged". */
const char *ts_loss_cause_name(int cause);

/*
 * The verdict: non-finite when any of LOSS, EXTRA_LOSS, GRAD_NORM or
 * NAN_COUNTER is seen (first bad iteration = the earliest of them); else
 * missing when LOSS_DROPPED or NEVER_LOGGED is; else finite. SKIPPED never
 * changes the verdict (the gates compare skipped counts between runs).
 */
enum ts_loss_verdict { TS_LOSS_FINITE = 0, TS_LOSS_NONFINITE, TS_LOSS_MISSING };

/* "finite", "non-finite", "missing". */
const char *ts_loss_verdict_name(int verdict);

struct ts_loss_evidence {
	int64_t first_iteration;  /* TS_NO_INT when not seen */
	int64_t first_possible;   /* the earliest iteration the evidence may start on:
				   * a record stands for the iterations since its
				   * series' (file, rank) previous record (Megatron's
				   * --log-interval N: the record at 250 counts NaN and
				   * skipped iterations of 241-250, its loss is their
				   * mean), so the first bad iteration lies in
				   * [first_possible, first_iteration]; a series' first
				   * record reaches back by the gap to its next one
				   * (not below 1), a lone record only itself. TS_NO_INT
				   * when not seen */
	int32_t first_rank;       /* the record that shows it at first_iteration: the
				   * lowest rank there (ts_step_rank, -1 unknown),
				   * then the first file and line; -1 not seen */
	int32_t first_file;       /* its file (steplog index), -1 not seen */
	int64_t first_line;       /* its 1-based line, TS_NO_INT not seen */
	int64_t records;          /* step records showing it */
	int64_t iterations;       /* counter sum for NAN_COUNTER and SKIPPED (saturating),
				   * else = records */
};

/*
 * The first iteration a record at it stands for: a record stands for the
 * iterations since its series' previous record at prev (Megatron's
 * --log-interval 10: the record at 250 stands for 241-250, its counters
 * count them and its loss and step time are their mean), at most the
 * series' log interval every (ts_record_interval; 0 unknown: no cap), so
 * a hole in the log widens no record (records to 100, then 200 by 10:
 * the record at 200 stands for 191-200). A series' first record (prev
 * TS_NO_INT) reaches back by the interval, else by the gap to its next
 * record at next, not below 1; a log counting from 0 or 1, or a lone
 * record with no interval known, only itself.
 */
int64_t ts_record_from(int64_t prev, int64_t it, int64_t next, int64_t every);

/*
 * A series' log interval: the most common positive gap between the
 * consecutive iterations iter[0..n) (ascending; repeats allowed), the
 * smallest of equally common ones; *every = 0 when there is none. Returns
 * 0 or TS_ENOMEM.
 */
int ts_record_interval(const int64_t *iter, size_t n, int64_t *every);

/*
 * Whether a record standing for iterations from..it belongs to the window
 * [first, last]: the one rule of steps, validate, diagnose and ab. It does
 * when the iterations it stands for overlap the window (from <= last and
 * it >= first): its NaN and skipped counters, its iteration-1 warm-up and
 * its step time may all be the window's. A window whose edges are record
 * iterations therefore holds the records printed inside it, as before;
 * --window 241:249 with records every 10 holds the record at 250 (241-250).
 * from TS_NO_INT (or above it) is it.
 */
int ts_record_in_window(int64_t from, int64_t it, int64_t first, int64_t last);

struct ts_loss_health {
	int verdict;              /* enum ts_loss_verdict */
	int cause;                /* enum ts_loss_cause of the verdict, NONE when finite */
	int64_t first_bad_iteration; /* where the verdict's cause starts; TS_NO_INT when finite */
	int64_t first_bad_possible;  /* the earliest iteration it may start on (the
				      * evidence's first_possible; = first_bad_iteration
				      * when every iteration is logged) */
	int32_t first_bad_rank;   /* the rank, file and line of the record that shows */
	int32_t first_bad_file;   /* the verdict's cause at first_bad_iteration (the */
	int64_t first_bad_line;   /* cause's first_rank...); -1, -1, TS_NO_INT when finite */
	char extra_loss[48];      /* name of the first non-finite extra loss, "" if none */
	struct ts_loss_evidence ev[TS_LOSS_CAUSE_COUNT]; /* indexed by enum ts_loss_cause */
	int64_t *bad_iterations;  /* ascending, unique: iterations with non-finite evidence */
	size_t nbad;
	int64_t nbad_iterations;  /* the non-finite iterations they stand for: a record
				   * whose NaN-iteration counter is above 1 (Megatron
				   * counts over its log interval) stands for that many */
};

/*
 * The one loss-health judgement of a step log (every record, every rank).
 * h is overwritten; ts_loss_health_release frees bad_iterations. Returns
 * 0 or TS_ENOMEM (err says so; h then holds nothing). An empty log is
 * missing / NEVER_LOGGED.
 */
int ts_loss_health_judge(const struct ts_steplog *log, struct ts_loss_health *h,
			 struct ts_err *err);
void ts_loss_health_release(struct ts_loss_health *h);

/* ---------------------------------------------------------- steps */

struct ts_steps_opts {
	int64_t window_first;     /* declared window, TS_NO_INT = automatic */
	int64_t window_last;
	int64_t gbs;              /* sequences per step, 0 = from the log */
	int64_t seq;              /* tokens per sequence, 0 = unknown */
	int64_t gpus;             /* GPUs in the job, 0 = ranks seen or unknown */
	uint64_t seed;            /* bootstrap seed (deterministic) */
};

void ts_steps_opts_init(struct ts_steps_opts *o);

/*
 * The TFLOP/s a window delivered from the per-step logged rates: the FLOPs
 * over the time, sum(tflops_i * ms_i) / sum(ms_i) over the steps with both
 * (a stalled step does its FLOPs slowly, so the mean of the rates would
 * overstate the window); the mean of the rates when no step has a time,
 * NAN when none has a rate. step_ms may be NULL (no times).
 */
double ts_tflops_delivered(const double *tflops, const double *step_ms, size_t n);

/* Fewest usable timed steps a steady window needs: below it `steps` gives
 * the window's statistics with no interval and a few-steps warning, and
 * validate and ab find no steady window. */
#define TS_STEADY_MIN_STEPS 10

/* A slow step is a spike when its modified z-score against its baseline is
 * above TS_STATS_MODZ_OUTLIER (stats.h) and it exceeds the baseline by at
 * least this share of it (steps' outliers; a restarted process's warm-up,
 * run.h). */
#define TS_SPIKE_MIN_REL 0.05

/* A trend over a window matters above half the 1 % noise band of
 * ab-stats A4 (ts_stats_drift's min_change: `steps`, validate). */
#define TS_DRIFT_MIN_CHANGE 0.005

enum ts_steps_warn {
	TS_WARN_SHORT = 1 << 0,       /* window spans < 50 iterations */
	TS_WARN_NOISY = 1 << 1,       /* CV > 10 % */
	TS_WARN_NO_STEADY = 1 << 2,   /* MSER-5 wants > half the series */
	TS_WARN_LEVEL_SHIFT = 1 << 3, /* window cut at a level shift */
	TS_WARN_AUTOCORR = 1 << 4,    /* batch means still correlated */
	TS_WARN_NO_TIME = 1 << 5,     /* no step times in the input */
	TS_WARN_LONG_WARMUP = 1 << 6, /* MSER-5 cut > 20 % of the series */
	TS_WARN_CI_TOO_WIDE = 1 << 7, /* the CI reached below 0 ms: not reported */
	TS_WARN_FEW_STEPS = 1 << 8,   /* fewer than TS_STEADY_MIN_STEPS steps in the
				       * window: no CI, not a steady-state estimate */
	TS_WARN_GBS_VARIES = 1 << 9,  /* the logged global batch size changes inside
				       * the window (batch-size ramp-up): gbs_min..max */
	TS_WARN_NO_USABLE = 1 << 10,  /* timed records, but each is an artefact (iteration
				       * 1, skipped, non-finite...): no step time;
				       * unusable[] says why */
	TS_WARN_STALLS = 1 << 11,     /* the window's stalls matter
				       * (ts_steps_window_stalls); they stay in the mean */
	TS_WARN_DRIFT = 1 << 12,      /* the step time trends over the window
				       * (ts_stats_drift, drift.found) */
	TS_WARN_GBS_RAMP = 1 << 13    /* the logged global batch size ramps up to
				       * its last value (ramp_* below) */
};

/*
 * The invariant of an interval of a positive time: it never reaches below
 * 0. When ci->lo < 0 (too few or too wild steps for the interval to mean
 * anything) the interval is dropped (method TS_CI_NONE, lo = hi = NAN) and
 * 1 is returned; else 0 and ci is untouched. Every CI of a step time goes
 * through it (steps, ab).
 */
int ts_ci_positive(struct ts_ci *ci);

/*
 * Why a timed step never enters a window's statistics (0: it does): the one
 * rule of every command (the gate's usable points follow it, gate.h).
 */
enum ts_step_artefact {
	TS_ART_NONE = 0,
	TS_ART_FIRST,             /* iteration 1: compilation, allocator warm-up */
	TS_ART_PROFILER,          /* profiled or trace export (TS_STEP_PROFILED /
				   * TS_STEP_AFTER_PROFILER) */
	TS_ART_CHECKPOINT,        /* a checkpoint save precedes it */
	TS_ART_EVAL,              /* an evaluation precedes it */
	TS_ART_NONFINITE,         /* NaN/Inf loss or grad norm, or a NaN iteration */
	TS_ART_SKIPPED,           /* skipped iterations in it */
	TS_ART_RESTART,           /* a restarted process's first record and its
				   * warm-up (TS_STEP_RESTART, TS_STEP_RESTART_WARMUP) */
	TS_ART_COUNT
};

/* The artefact of a step from its fields (flags: enum ts_step_flags;
 * nan_iters, skipped: TS_NO_INT unknown); first_cut: ts_steps_first_cut(). */
int ts_step_artefact(int64_t iteration, int64_t first_cut, uint32_t flags, int64_t nan_iters,
		     int64_t skipped, double grad_norm);

/*
 * The last iteration whose record holds iteration 1 (compilation and
 * allocator warm-up: never steady), from the iterations of the log's first
 * two timed records (next TS_NO_INT when there is one): 1, or the first
 * record's iteration when it is an interval mean (Megatron --log-interval N
 * logs the mean of N iterations every N) whose interval, the gap to the
 * next record, reaches back to iteration 1; 0 when the log counts from 0
 * (NeMo 2's global_step, a JSONL "step": 0): its first step is iteration 0.
 */
int64_t ts_steps_first_cut(int64_t first, int64_t next);
/* "first-iteration", "profiler", "checkpoint", "eval", "non-finite", "skipped". */
const char *ts_step_artefact_name(int artefact);

/*
 * One iteration of a step log merged over its ranks: the one merge every
 * per-iteration fact of a run comes from (the steps analysis' main series,
 * the gate's run points, gate.h).
 */
struct ts_step_merged {
	int64_t iteration;
	double step_ms;           /* the slowest rank's (a synchronous step is as slow
				   * as it), NAN when no record is timed */
	double loss;              /* the lowest rank's that logs one (with pipeline
				   * parallelism only the last stage does); NAN
				   * printed non-finite (flags say so) or none */
	double grad_norm;         /* the lowest rank's, NAN none */
	double tflops;            /* logged TFLOP/s/GPU of the record that gives
				   * step_ms (its FLOPs over that time); an untimed
				   * iteration's lowest rank's; NAN none */
	double overhead_ms;       /* the largest over ranks, NAN none */
	double phase_ms[TS_PHASE_COUNT]; /* of the record that gives step_ms (a phase
				   * longer than the step dropped); untimed records
				   * fill only phases it lacks; NAN none */
	int64_t skipped, nan_iters; /* the largest count any rank logs (a NaN or skipped
				   * iteration on one rank is the step's),
				   * TS_NO_INT none */
	int64_t tokens;           /* summed over ranks, TS_NO_INT none */
	int64_t gbs, bucket;      /* the lowest rank's, TS_NO_INT none */
	uint32_t flags;           /* enum ts_step_flags, OR over ranks */
	int extra_nonfinite;      /* an extra loss (mtp_1 loss, MoE aux loss, JSONL
				   * *_loss) of some rank is NaN/Inf */
};

/*
 * The rank record s of log speaks for: its own, else, when the log has
 * several files, its file's index (a file without rank markers is a rank
 * of its own), else -1 (unknown). The one rule of every command that
 * groups records by rank (the merge below, the run model's identity
 * checks, steps' and diagnose's per-rank rows).
 */
int32_t ts_step_rank(const struct ts_steplog *log, const struct ts_step *s);

/*
 * Merge log's records into one per iteration, in ascending iteration: a
 * record speaks for its rank (ts_step_rank); a repeated (iteration, rank)
 * (the run model has already resolved restarts, whose later segment
 * replaces the earlier records) is read as the lines of several ranks
 * printed without a rank prefix: it merges as another rank's record (the
 * slowest gives the step time, the first the loss), except that its
 * tokens are the largest of the rank's, not added. *out is malloc'd (the caller frees it; NULL for an
 * empty log), *nout its length. Returns 0 or TS_ENOMEM.
 */
int ts_steps_merge(const struct ts_steplog *log, struct ts_step_merged **out, size_t *nout);

/* Why a step is listed as an outlier. */
enum ts_outlier_reason {
	TS_OUT_SPIKE = 1,         /* robust spike with no known cause */
	TS_OUT_PERIODIC,          /* member of the periodic stall pattern */
	TS_OUT_PROFILER,          /* profiler capture/export in its interval */
	TS_OUT_CHECKPOINT,        /* checkpoint save in its interval */
	TS_OUT_EVAL,              /* evaluation in its interval */
	TS_OUT_RESTART,           /* a restarted process's first record or warm-up */
	TS_OUT_OVERHEAD           /* its logged interval exceeds the step time by more
				   * than half a step: time outside the step, cause
				   * unknown (no profiler, checkpoint or eval mark) */
};
const char *ts_outlier_reason_name(int reason);

struct ts_outlier {
	int64_t iteration;
	double step_ms;
	double baseline_ms;       /* moving-median baseline */
	double excess_ms;         /* step_ms - baseline_ms */
	double z;                 /* modified z of the residual */
	int reason;
};

struct ts_rank_summary {
	int32_t rank;
	size_t records;           /* records with a step time */
	size_t steps;             /* of those, the window's (artefacts left out):
				   * the steps of mean_ms and median_ms */
	int steps_known;          /* 0: the log names this rank only in memory
				   * reports, its steps are not attributed */
	double mean_ms, median_ms;/* over the window */
	double max_alloc_bytes, max_reserved_bytes, max_rss_bytes; /* NAN unknown */
	double final_loss;
};

struct ts_bucket_summary {
	int64_t bucket;
	size_t steps;
	double weight;            /* share of window steps */
	double mean_ms, median_ms;
};

/*
 * One phase (logs.h enum ts_phase) when the records carry it. The series
 * is the phase time of every record after iteration 1 that has it (with
 * several ranks, from the record whose step time is kept, the slowest; a
 * phase longer than its record's step is dropped as inconsistent; with
 * step times, untimed records are left out), so every share below is at
 * most 1 (forward-backward contains forward and backward: phases may
 * overlap, each is a part of the step); statistics are over the records of
 * the step window (all of them when there is no window). Stalls are
 * found on this series, where a data-loader stall stands out even when
 * the step time is too noisy to show it; their cost is a share of the
 * wall time (the sum of step times after iteration 1).
 */
struct ts_phase_summary {
	int phase;                /* enum ts_phase */
	size_t steps;             /* window records carrying it */
	double mean_ms, median_ms;
	struct ts_ci ci;          /* 95 % CI of the mean (ts_stats_ci_mean), lo clipped at 0;
				   * method 0 below 2 steps */
	double step_share;        /* mean_ms / the step-time mean, NAN without step times */
	struct ts_periodic periodic; /* on the phase series, as for the step time; a pattern
				      * is >= 1 % of the phase's own median */
	int64_t periodic_period_iters, periodic_phase_iters;
	double periodic_excess_ms;  /* mean local excess of a stalled slot */
	double periodic_share;    /* periodic excess / wall, NAN without step times */
	size_t nstalls;           /* one-off stalls: robust spikes (z > 3.5) at least 1 % of
				   * the step median (5 % of the phase baseline without
				   * step times), periodic slots excluded */
	double stall_share;       /* their excess / wall, NAN without step times */
	int64_t first_stall_iteration; /* TS_NO_INT when none */
};

struct ts_steps_report {
	char format[24];
	size_t iterations;        /* records in the main series */
	int64_t first_iteration, last_iteration;
	/* main series (one value per iteration; max over ranks) */
	int64_t *iter;
	int64_t log_interval;     /* ts_record_interval of iter, 0 none */
	double *step_ms;          /* NAN when the record has no time */
	unsigned char *artefact;  /* enum ts_step_artefact per iteration */
	double *tflops;           /* logged TFLOP/s per GPU of the record that gives
				   * step_ms (the slowest rank's; an untimed
				   * iteration's lowest rank's), NAN none */
	size_t n;
	/* window */
	int64_t win_first, win_last;
	int win_auto;
	int dropped_first;        /* the record holding iteration 1 was left out of the window */
	int64_t first_cut;        /* records up to this iteration hold iteration 1
				   * (ts_steps_first_cut; 1 when nothing is timed) */
	size_t win_n;             /* timed steps in [win_first, win_last] that are
				   * no artefact: the ones the statistics use */
	int64_t mser_cut_iteration;  /* first kept iteration after MSER-5 */
	int64_t level_shift_iteration; /* TS_NO_INT when none */
	/* a batch-size ramp-up (Megatron's --rampup-batch-size): the timed
	 * records' logged global batch sizes never fall and rise at least
	 * once. The run's own batch is the last; an automatic window and the
	 * warm-up cut start at its first record (ramp_end_iteration), and the
	 * records before it are the ramp. TS_NO_INT (and 0) when there is
	 * none, or when no usable step has the last batch. */
	int64_t ramp_end_iteration;
	int64_t ramp_gbs_first, ramp_gbs_last;
	unsigned warnings;           /* enum ts_steps_warn */
	/* statistics over the window */
	double median_ms, mean_ms, p10_ms, p90_ms, cv;
	struct ts_ci ci;
	struct ts_acf_summary acf;
	double tokens_per_step, tokens_per_s, tokens_per_s_gpu;
	int64_t gbs_min, gbs_max;     /* logged global batch sizes in the window, 0 none */
	size_t unusable[TS_ART_COUNT]; /* timed records per artefact, when none
				       * is usable (TS_WARN_NO_USABLE) */
	int64_t gpus;
	double tflops_mean, tflops_median;
	/* stalls */
	struct ts_outlier *outliers;
	size_t noutliers;
	/* periodic stall on the step series: ts_stats_periodic_local for
	 * periods up to 32 records, the spike-flag test ts_stats_periodic for
	 * longer ones (period/phase below in iterations when found) */
	struct ts_periodic periodic;
	int64_t periodic_period_iters, periodic_phase_iters;
	double periodic_share;        /* excess time of periodic stalls / wall */
	/* per-phase times, in enum ts_phase order, only the phases present */
	struct ts_phase_summary *phases;
	size_t nphases;
	double outlier_share;         /* excess time of all outliers / wall */
	/* the window's own stalls (ts_steps_window_stalls over win_first..win_last) */
	size_t win_nstalls;
	double win_stall_share;       /* NAN without a timed window */
	struct ts_drift drift;        /* over the window's steps (>= 20; change NAN
				       * otherwise), TS_DRIFT_MIN_CHANGE */
	/* loss health: the verdict, its evidence and the non-finite iterations */
	struct ts_loss_health health;
	int64_t *loss_spikes;
	size_t nloss_spikes;
	int64_t *grad_spikes;
	size_t ngrad_spikes;
	double final_loss;
	int64_t final_loss_iteration;
	/* ranks */
	struct ts_rank_summary *ranks;
	size_t nranks;
	int32_t slowest_rank;         /* -1 with fewer than two ranks */
	/* buckets */
	struct ts_bucket_summary *buckets;
	size_t nbuckets;
	double mixture_mean_ms;
};

/*
 * Analyse log. Returns 0, TS_EUSAGE (declared window outside the data,
 * err says so) or TS_ENOMEM. A log without step times still gets loss
 * health, memory and ranks; its step statistics are NAN and warnings has
 * TS_WARN_NO_TIME. On failure rep holds nothing (already released).
 */
int ts_steps_analyze(const struct ts_steplog *log, const struct ts_steps_opts *o,
		     struct ts_steps_report *rep, struct ts_err *err);

void ts_steps_report_release(struct ts_steps_report *rep);

/*
 * The stalls of a window [first, last]: the outliers with no known cause
 * (spikes and periodic stalls; profiler, checkpoint and evaluation steps
 * are artefacts, outside any window's statistics) on iterations in it.
 * *n gets their count and *share their excess time over wall_ms, the sum
 * of the window's nsteps step times (NAN when wall_ms is not positive).
 * Returns 1 when they are worth the stalls warning (TS_WARN_STALLS): more
 * than 2 % of the time, or at least 2 stalls and more than 1 % of the steps
 * costing more than 1 % of it; else 0. One rule for `steps`' window and a window validate
 * is given.
 */
int ts_steps_window_stalls(const struct ts_steps_report *rep, int64_t first, int64_t last,
			   double wall_ms, size_t nsteps, size_t *n, double *share);

/* Whether outlier o is a stall of the window [first, last] (the rule
 * ts_steps_window_stalls counts by). */
int ts_steps_is_window_stall(const struct ts_outlier *o, int64_t first, int64_t last);

/* The outlier of iteration it (rep->outliers is in iteration order), NULL
 * when it is none. */
const struct ts_outlier *ts_steps_outlier_at(const struct ts_steps_report *rep, int64_t it);

/* The first iteration the main series' record i stands for
 * (ts_record_from over rep->iter). */
int64_t ts_steps_record_from(const struct ts_steps_report *rep, size_t i);

/* Whether iteration it is one of the window's steps (the ones its
 * statistics use): a record of the main series in the window
 * (ts_record_in_window), no artefact. */
int ts_steps_in_window(const struct ts_steps_report *rep, int64_t it);

#endif

/*
 * run.h - one run, one answer: the run model every command that takes a
 * run renders (steps, diagnose, advise, validate, ab, report; ledger
 * stores what ab rendered from it).
 *
 * ts_runmodel_load() turns a run directory or a file list into one value:
 * every input file classified by content (and whether it is used), one
 * step series (ranks as read, a resumed log reduced to its later
 * segments), ONE steps analysis (steps.h: steady window, statistics,
 * stalls, loss health), the window object built from it, the model FLOP
 * rate (struct ts_run_rate: the model, the job's shape, the logged
 * TFLOP/s/GPU against the model's), and one list of warnings. Nothing
 * here recomputes what the steps analysis decides;
 * commands render these facts and add warnings of their own stages (trace
 * reading, A/B) to the same list.
 *
 * Input identity (docs/warnings.md): two step series for one rank are an
 * error naming both files (a file without rank markers is a rank of its
 * own, as steps.h merges them); step files of one rank in several
 * directories are several runs, refused with their list, and so are traces
 * whose world sizes differ; a log whose iterations go back (a resumed job)
 * keeps the later segment and warns; one that logs an iteration again for
 * one rank without going back warns repeated-records (several ranks' lines
 * without rank prefixes look so: the merge takes the slowest record's step
 * time, as for ranks it can tell apart). A restarted process warms up again:
 * after each record flagged TS_STEP_RESTART that is not its series' first,
 * the leading records of that process's segment (up to the series' next
 * restart) up to its last spike against the segment's median (steps.h's
 * spike rule) that keeps spikes at least half of them are flagged
 * TS_STEP_RESTART_WARMUP, restart artefacts like the
 * restart record; none when they are more than a fifth of the segment
 * (that is a level of its own, the steps analysis judges it). A log that
 * prints no step numbers has its records numbered by their place
 * (TS_STEP_ORDINAL): each such file is warned ordinal-steps, with the
 * declared window read on those numbers. Records whose log gives their
 * step time as zero (logs.h: zero_steptimes) are warned, once for the run,
 * step-time-below-resolution. A file found in a directory that
 * cannot be classified, or a trace that cannot be scanned, is a warning,
 * not an error. The traces' ProfilerStep#N iterations (and the export step
 * after each captured range) are flagged TS_STEP_PROFILED before the steps
 * analysis, so no window statistic includes them.
 *
 * Ownership: a ts_runmodel owns everything it points to (its arena, its
 * step log, its steps report); ts_runmodel_release() frees it all.
 * Warnings are plain structs whose strings live in the list's arena.
 */
#ifndef TRAINSCOPE_RUN_H
#define TRAINSCOPE_RUN_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/flops.h"
#include "trainscope/jsonw.h"
#include "trainscope/logs.h"
#include "trainscope/model.h"
#include "trainscope/paths.h"
#include "trainscope/steps.h"

/* The warning type and list (struct ts_warnings, ts_warnings_add,
 * ts_warnings_json, ts_warnings_text) are in jsonw.h, so readers below
 * the run model (telemetry) write the same objects. */

/* ------------------------------------------------------------ window */

/* Steps left out of the window, one group per reason. */
struct ts_window_excl {
	const char *reason;     /* outside: "first-iteration",
				 * "batch-size-ramp-up", "warm-up",
				 * "before-window", "level-shift", "after-window";
				 * inside (ts_step_artefact_name): "profiler",
				 * "checkpoint", "eval", "non-finite", "skipped" */
	int64_t first, last;    /* first and last iteration of the group */
	size_t steps;           /* timed steps in it */
};

/*
 * The window object every command emits for a run: the steady window of
 * the steps analysis (or a matched window of A/B over the same series).
 */
struct ts_window_obj {
	int64_t first, last;    /* TS_NO_INT when there is no window */
	size_t steps;           /* timed steps in [first, last] the statistics use
				 * (no artefact, steps.h) */
	const char *method;     /* "declared", "contract", "mser-5", "mser-5-capped",
				 * "few-steps" (automatic, fewer than
				 * TS_STEADY_MIN_STEPS usable steps: no steady
				 * window in any command), "matched", "none" */
	struct ts_window_excl excl[12];
	size_t nexcl;
};

/* Write key "window" and the object {first_iteration, last_iteration,
 * steps, method, excluded: [{reason, first_iteration, last_iteration,
 * steps}]}. */
void ts_window_json(struct ts_jw *jw, const struct ts_window_obj *w);

/* "41-50" or "41:50" -> first 41, last 50 (1 <= first <= last): the one
 * window syntax of every command. TS_EUSAGE for anything else (s may be
 * NULL). */
int ts_window_parse(const char *s, int64_t *first, int64_t *last);

/* "iterations A:B, N steps (METHOD; excluded: ...)" into out; METHOD
 * few-steps reads "few-steps, no steady window". */
void ts_window_text(struct ts_sb *out, const struct ts_window_obj *w);

/* ------------------------------------------------------------ the run */

enum ts_input_role {
	TS_ROLE_STEPS = 1,      /* its step records are the run's series */
	TS_ROLE_LOG_SPARE,      /* a training log not read: JSONL metrics carry the steps */
	TS_ROLE_TRACE,          /* profiler trace (Kineto / legacy) */
	TS_ROLE_NSYS,           /* Nsight Systems export */
	TS_ROLE_CONFIG,         /* model config.json */
	TS_ROLE_CONTRACT,       /* trainscope contract */
	TS_ROLE_TELEMETRY,      /* nvidia-smi / dmon / mthreads-gmi */
	TS_ROLE_OTHER,          /* recognised but not used by any run command */
	TS_ROLE_BAD             /* cannot be classified (err in problem) */
};

struct ts_run_input {
	const char *path;
	int kind;               /* enum ts_kind */
	int role;               /* enum ts_input_role */
	char vendor[16];        /* traces: from detect */
	const char *problem;    /* TS_ROLE_BAD: why it could not be classified;
				 * TS_ROLE_OTHER: why a file its name promises is
				 * not used (ts_detect_misnamed); else NULL */
};

/* The unused-input warning of an input that is not used and says why
 * (in->problem): "PATH cannot be classified and is not used (WHY)." for
 * TS_ROLE_BAD, "PATH: WHY." for any other role; nothing without a problem.
 * Every command that walks directories for inputs gives these words.
 * Returns 0 or TS_ENOMEM. */
int ts_unused_input_warning(struct ts_warnings *w, const struct ts_run_input *in);

/* ------------------------------------------------------------ model FLOP rate */

/* The logged TFLOP/s/GPU of a set of steps against the model's. */
struct ts_run_rate_cmp {
	size_t nlogged;           /* steps with a logged TFLOP/s/GPU */
	double logged_tflops;     /* their delivered rate (ts_tflops_delivered), NAN none */
	size_t ncompared;         /* of those, steps with a time too */
	double model_tflops;      /* F ncompared / (sum t 1e12 W) over them: the model
				   * rate the same steps delivered, NAN none; F is
				   * log_flops.per_step (the log's own formula) */
	double diff_median;       /* median over them of |logged / (F / (t 1e12 W)) - 1|,
				   * NAN none */
	double diff_signed;       /* median of logged / recomputed - 1 (sign kept) */
	int formula;              /* diff_median > TS_RATE_MAX_DIFF: another formula
				   * (enum ts_formula; an older Megatron version)
				   * whose FLOPs the logged rate matches within
				   * TS_RATE_MAX_DIFF, else -1 */
};

/* Logged and recomputed rates may differ by this much (a fraction):
 * flops-memory-workflow 5.4 item 5; more is a config or formula-version
 * mismatch (validate fails, the run warns logged-tflops-mismatch). */
#define TS_RATE_MAX_DIFF 0.01

/*
 * The model FLOP rate of a run, decided once for every command (steps,
 * validate, diagnose, report); docs/warnings.md and docs/mfu.md.
 *
 * The model: the run's first config.json that reads and finishes, else
 * the model of its Megatron arguments block.
 *
 * The job's shape: each value from the first of these that states it,
 *   seq   an option of the command (steps --seq); the arguments block's
 *         seq_length; the contract's workload.seq_length; the window's
 *         tokens per step over its one logged global batch size, when that
 *         divides to a whole number
 *   gbs   --gbs; the arguments' global_batch_size; the contract's
 *         workload.global_batch_size; the window's logged global batch
 *         size when it is one value (or the one the training log beside
 *         JSONL metrics prints); the window's tokens per step over seq
 *   tp    the arguments' tensor_model_parallel_size; the contract's
 *         workload.tp; else 1 (it only pads the vocabulary)
 *   gpus  --gpus; the arguments' world_size; the contract's
 *         workload.device_count; the ranks of a JSONL series
 * pipeline stages, vocabulary divisor and recompute as the arguments state
 * them. Nothing is guessed: a value no source states leaves the rate
 * unknown (why says which).
 *
 * The model FLOPs per step are Megatron's current formula (flops.h): the
 * model FLOP rate and MFU every command prints. The logged rate is
 * compared with the formula the log counts with (ts_run_rate_log_formula:
 * torchtitan's own for a torchtitan log, whose tflops is its FLOPs per
 * token x tokens per second per device of the whole job, so the same
 * F / (t 1e12 W) per GPU). The comparison (ts_run_rate_compare) is over
 * the run window's usable steps (no artefact); when their median
 * |difference| is above TS_RATE_MAX_DIFF the run model warns
 * logged-tflops-mismatch.
 */
struct ts_run_rate {
	const char *model_from;   /* the config.json or the log whose arguments block
				   * gave the model; NULL: no model */
	struct ts_model model;    /* finished, when model_from */
	struct ts_flops_shape shape;
	int64_t gpus;             /* W, 0 unknown */
	const char *seq_from, *gbs_from, *gpus_from; /* the source of each, in words
				   * ("the Megatron arguments", ...); NULL unknown */
	struct ts_flops flops;    /* current formula; flops.per_step > 0 when known */
	const char *why;          /* flops.per_step unknown with a model: what is
				   * missing or wrong (in the run model's arena) */
	int log_formula;          /* enum ts_formula the logged rate counts with */
	struct ts_flops log_flops;/* that formula's FLOPs (a copy of flops for
				   * TS_FORMULA_CURRENT); per_step > 0 when known */
	const char *log_why;      /* flops known, log_flops not: why (arena) */
	struct ts_run_rate_cmp window; /* over the run's window */
};

/*
 * Compare the logged rates tflops[i] (NAN: not logged) of n steps with
 * their times step_ms[i] (NAN: untimed) against rt's FLOPs under the
 * log's formula (rt->log_flops): *out.
 * The caller chooses the steps (usable ones of a window). With no known
 * model FLOPs only nlogged and logged_tflops are filled. Returns 0 or
 * TS_ENOMEM.
 */
int ts_run_rate_compare(const struct ts_run_rate *rt, const double *tflops,
			const double *step_ms, size_t n, struct ts_run_rate_cmp *out);

struct ts_runmodel;
/*
 * The logged rate against the model's over the window [first, last] of
 * rm's step series (first TS_NO_INT: no window, no steps): its usable steps
 * (records in it by ts_record_in_window, timed, no artefact), each with
 * the logged rate of the record that gives its step time (steps.h: the
 * slowest rank's), compared by ts_run_rate_compare into *out. The one
 * comparison of every command: rm->rate.window is this over the run's
 * window, validate's tflops check this over its window. Returns 0 or
 * TS_ENOMEM.
 */
int ts_run_rate_over(const struct ts_runmodel *rm, int64_t first, int64_t last,
		     struct ts_run_rate_cmp *out);

/*
 * The FLOPs formula (enum ts_formula) rm's step log counts its logged
 * TFLOP/s/GPU with: TS_FORMULA_TITAN for a torchtitan log (6 x active
 * parameters + 6·n·(d_qk + d_v)·s per token per layer, no MTP, flops.h;
 * a mismatch names TS_FORMULA_TITAN_HEADDIMS or _DIM when an older
 * torchtitan's count matches), else TS_FORMULA_CURRENT.
 */
int ts_run_rate_log_formula(const struct ts_runmodel *rm);

/* 1 when rm's logged rate over its window is past TS_RATE_MAX_DIFF from
 * the model's under the log's formula (the logged-tflops-mismatch
 * warning), else 0. */
int ts_run_rate_mismatch(const struct ts_runmodel *rm);

struct ts_runmodel_opts {
	struct ts_steps_opts steps;   /* window_first/last: a declared window
				       * (TS_NO_INT = the contract's, else automatic) */
	int walk_depth;               /* directory levels listed (default 3) */
	int strict;                   /* unusable step values fail the read (logs.h) */
};

void ts_runmodel_opts_init(struct ts_runmodel_opts *o);

struct ts_runmodel {
	const char *root;             /* the path given, or "(several inputs)" */
	TS_VEC(struct ts_run_input) inputs;  /* every file listed, sorted by path */
	struct ts_paths step_files;   /* step sources in steplog file-index order */
	struct ts_steplog log;        /* the step series (resumed segments resolved) */
	struct ts_steps_report steps; /* THE steps analysis (ts_steps_analyze once) */
	int have_steps;               /* a step source was found and analysed */
	const char *contract;         /* first contract input, or NULL */
	int window_source;            /* 0 automatic, 1 --window, 2 contract */
	struct ts_window_obj window;  /* of steps */
	struct ts_warnings warnings;  /* the run's warnings, in stage order */
	size_t nwarn_steps;           /* the first ones belong to the steps stage */
	size_t nordinal;              /* records of log numbered by their place
				       * (TS_STEP_ORDINAL): their log prints no step
				       * number (warning ordinal-steps) */
	size_t resumed_segments;      /* segments of the most-resumed rank's log
				       * (restarts + 1; 0: no log resumed) */
	size_t nprofiled;             /* ProfilerStep entries found in its traces */
	int64_t spare_gbs;            /* the global batch size the training logs beside
				       * JSONL metrics print, when one value; else 0 */
	/* The earliest non-finite evidence those logs add to the metrics
	 * (records flagged TS_STEP_HEALTH_FROM_LOG): its iteration (TS_NO_INT
	 * none), the log (an input's path), its line and rank (-1 unknown). */
	int64_t spare_nan_iteration, spare_nan_line;
	const char *spare_nan_path;
	int32_t spare_nan_rank;
	/* The first Megatron arguments block among the run's Megatron and
	 * Primus logs (a step source or a spare log), read once here for every
	 * command. The steps analysis takes seq_length and world_size from it,
	 * and global_batch_size when no record prints one, unless an option
	 * gives them. */
	int has_args;                 /* args holds a block */
	const char *args_log;         /* the log it was read from */
	struct ts_model_args args;
	int has_args_model;           /* args_model is the block's model, finished */
	struct ts_model args_model;
	char args_model_why[512];     /* has_args && !has_args_model: what the block
				       * lacks (ts_model_finish's message), else "" */
	struct ts_run_rate rate;      /* the model FLOP rate (above) */
	struct ts_arena arena;
};

void ts_runmodel_init(struct ts_runmodel *rm);
void ts_runmodel_release(struct ts_runmodel *rm);

/*
 * Load the run from paths (directories walked o->walk_depth levels).
 * need_steps: a run without any step source is TS_EUSAGE ("no training
 * log or metrics ..."); without it (diagnose with traces only) it is not.
 * A declared window is o->steps.window_first/last, else the first
 * contract's workload.steady_window (window_source 1 / 2), else automatic.
 * Returns 0, or TS_EUSAGE (several runs, traces of different jobs, two
 * series for one rank, a log going back too often, declared window
 * outside the data; err names the files), TS_EIO / TS_EPARSE from a file
 * named on the command line or a step source (a file the run needs),
 * TS_ENOMEM. On failure rm holds what was loaded so far; release it.
 */
int ts_runmodel_load(struct ts_runmodel *rm, char *const *paths, size_t npaths,
		     const struct ts_runmodel_opts *o, int need_steps, struct ts_err *err);

/* The window object for [first, last] over the run's step series: the
 * run's own window when the range is its window, else method "matched". */
void ts_runmodel_window(const struct ts_runmodel *rm, int64_t first, int64_t last,
			struct ts_window_obj *w);

/* Where iteration it of the run's series stands to the run's window, the
 * one classification the window object counts by: "in" (one of its
 * steps: the statistics use it; with method few-steps it is no steady
 * window), a ts_window_excl reason when it is left out ("first-iteration",
 * "batch-size-ramp-up", "warm-up", "level-shift", "before-window",
 * "after-window", or its artefact: "profiler", "checkpoint", "eval",
 * "non-finite", "skipped", "restart"), "untimed" (no step time: no window
 * counts it), or "no-window" (the run has none; an artefact still says
 * its name). A static string. */
const char *ts_runmodel_step_window(const struct ts_runmodel *rm, int64_t it);

/* The words that name iteration it of the run's series in a sentence:
 * "record ordinal" when its record is numbered by its place in the log
 * (TS_STEP_ORDINAL: the log prints no step number for it), else
 * "iteration". */
const char *ts_runmodel_iteration_word(const struct ts_runmodel *rm, int64_t it);

/* Where evidence first shows when its record stands for the iterations
 * from..it (ts_loss_evidence's first_possible and first_iteration):
 * "PRE WORD it" (WORD from ts_runmodel_iteration_word; no PRE when "")
 * when from is it or unknown, else "RANGE iterations from-it" (Megatron's
 * --log-interval: the first NaN is somewhere in the interval), RANGE such
 * as "from within" or "within". Writes into buf (size bytes), returns buf. */
const char *ts_runmodel_span_words(const struct ts_runmodel *rm, const char *pre,
				   const char *range, int64_t from, int64_t it, char *buf,
				   size_t size);

/* Which line printed the loss health's first non-finite evidence: the
 * record ts_loss_health names (first_bad_rank, _file, _line), or, when its
 * evidence is a log's beside the metrics (TS_STEP_HEALTH_FROM_LOG), that
 * log's line. 1 with *rank (-1 unknown), *path (the run model's) and
 * *line set; 0 when the verdict is not non-finite or the record unknown. */
int ts_runmodel_first_bad(const struct ts_runmodel *rm, int32_t *rank, const char **path,
			  int64_t *line);

/* The same in words: "; first printed by rank R (FILE line L)", or
 * "; first printed in FILE line L" when the rank is unknown; "" when
 * ts_runmodel_first_bad gives none. Writes into buf (size bytes, cut to
 * fit), returns buf. */
const char *ts_runmodel_first_bad_words(const struct ts_runmodel *rm, char *buf, size_t size);

/* How global ranks were numbered from torchx node prefixes ("node x N +
 * local rank"), in words: "nproc_per_node N stated at FILE line L",
 * "nproc_per_node N = world_size W / nnodes M (FILE lines L and K)" or
 * "nproc_per_node N = the local ranks seen"; NULL when no node past 0 has
 * a prefix. Writes into buf (size bytes, cut to fit), returns buf. The one
 * text of the fact every output renders (steps, diagnose, validate,
 * report). */
const char *ts_runmodel_node_ranks_words(const struct ts_runmodel *rm, char *buf, size_t size);

/* Count of inputs with role. */
size_t ts_runmodel_count(const struct ts_runmodel *rm, int role);

/* ------------------------------------------------------------ rendering */

/* Colour codes for the text renderers ("" for none). */
struct ts_text_style {
	const char *bold, *reset, *yellow;
};

/* The steps analysis as JSON: one object (schema "trainscope.steps/1"
 * when with_schema), the same keys and values wherever it is embedded. */
void ts_steps_json(struct ts_jw *jw, const struct ts_runmodel *rm, int with_schema);

/* Key "node_ranks" and its value: null without torchx node prefixes past
 * node 0, else {nproc_per_node, source ("stated", "world_size/nnodes",
 * "local ranks seen"), file, line, nnodes_line: the first file with node
 * prefixes'; files_with_node_prefixes, differing_nproc_per_node: another
 * such file's count when it differs, else null} (docs/steps.md). The one
 * JSON of the fact (steps, diagnose under "steps", validate). */
void ts_node_ranks_json(struct ts_jw *jw, const struct ts_runmodel *rm);

/* The steps analysis as the terminal summary (warnings at the end). */
void ts_steps_text(struct ts_sb *out, const struct ts_runmodel *rm,
		   const struct ts_text_style *st);

#endif

/*
 * diff_cli.h - `diff` glue shared by `diff`, `ab` and `report`: one side
 * read with trace's readers (Kineto, legacy, gzip, nsys exports), the
 * report's "Diff vs baseline" section, and the two runs' trace sides of
 * an A/B (its trace walls and the environment its traces record).
 */
#ifndef TS_CLI_DIFF_CLI_H
#define TS_CLI_DIFF_CLI_H

#include "cli.h"
#include "trainscope/diff.h"
#include "trainscope/gate.h"
#include "trainscope/report.h"
#include "trainscope/run.h"

/*
 * Read the side of `arg` (a trace file, or a directory of rank files) for
 * rank `want` (-1: rank 0) into s (freshly initialised); a single trace is
 * taken whatever its rank unless `exact` (the rank was asked for with
 * --rank). Truncated and legacy traces add
 * warnings to warns. One trace is in memory at a time. Returns 0 or an
 * exit status (error printed).
 */
int diff_load_side(struct cli_ctx *ctx, const char *arg, int64_t want, int exact, struct ts_diff_side *s,
		   struct ts_warnings *warns);

/*
 * "Diff vs baseline" of the report: the traces of base (baseline) and of
 * the run paths (candidate), rank 0 or the only trace, compared with the
 * default options; items for the compared steps, the ratio and verdict,
 * the walls that moved and the top rows. Returns 0 or an exit status.
 */
int diff_fill_report(struct cli_ctx *ctx, struct ts_report *r, const char *base,
		     char *const *run, size_t nrun);

/*
 * The two sides' traces of an A/B. The first profiler trace (lowest rank)
 * of the first run of each side, read as diff reads one (python spans and
 * flows left out) into a diff side, when both sides carry one: the trace
 * walls. And where each side ran by every profiler trace (its metadata
 * alone, trace.h meta_only) and every Nsight Systems export (one context
 * per GPU it lists, nsys.h ts_nsys_meta) of each of its runs: the side's
 * own context is that of its first trace (the first run's lowest rank:
 * the diff side's when read, else from its metadata; a side without one,
 * the first context read), compared between the sides, and a trace that
 * records a field
 * differently from the side's first one that records it makes the side
 * mixed.
 */
#define AB_MIXED_CAP 448
struct ab_trace_sides {
	const char *base_trace, *cand_trace;   /* NULL: that run has none (nothing read) */
	struct ts_diff_side b, c;
	struct ts_err err;                     /* err.code != 0: a trace could not be read */
	struct ts_diff_context side[2];        /* each side's own context (its first trace's) */
	/* the environment fields the two sides record differently
	 * (ts_diff_ctx_changes, TS_DCTX_ENV_MASK): ts_ab_opts.trace_ctx */
	struct ts_ctx_change chg[TS_DCTX_COUNT];
	char buf[TS_DCTX_COUNT][2][32];
	size_t nchg;
	/* per side (0 baseline, 1 candidate), the fields its own traces record
	 * differently, values as "VALUE in PATH": ts_ab_opts.mixed_ctx */
	struct ts_ctx_change mixed[2][TS_DCTX_COUNT];
	char mixed_buf[2][TS_DCTX_COUNT][2][AB_MIXED_CAP];
	size_t nmixed[2];
	size_t nskipped;                       /* traces and exports whose metadata could not be read */
	struct ts_err skip_err;                /* the first one's error */
	struct ts_warnings assumed;            /* rank-device-assumed of each trace read */
};

void ab_trace_sides_init(struct ab_trace_sides *s);
void ab_trace_sides_release(struct ab_trace_sides *s);
/* Read s (initialised) from the nb baseline runs and the nc candidate
 * runs. Prints nothing; a first trace that cannot be read whole is left
 * in s->err (its side's context then from the metadata alone); a trace
 * whose metadata cannot be read is left out (nskipped). Returns 0 or
 * TS_ENOMEM. */
int ab_trace_sides_read(struct ab_trace_sides *s, const struct ts_run *base, size_t nb,
			const struct ts_run *cand, size_t nc);
/* The trace-context-skipped warning when s left traces out (their count,
 * the first one's path and error), and rank-device-assumed of each trace
 * whose device is GPU 0's, assumed (profile.h
 * ts_rank_device_assumed_warning), appended to w. Returns 0 or TS_ENOMEM. */
int ab_trace_sides_warnings(const struct ab_trace_sides *s, struct ts_warnings *w);

#endif

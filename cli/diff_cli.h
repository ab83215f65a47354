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
 * The first profiler trace of the A/B's baseline run and of its candidate
 * run (their run models' inputs), each read as diff reads one (python
 * spans and flows left out) into a diff side, when both runs carry one.
 */
struct ab_trace_sides {
	const char *base_trace, *cand_trace;   /* NULL: that run has none (nothing read) */
	struct ts_diff_side b, c;
	struct ts_err err;                     /* err.code != 0: a trace could not be read */
	/* the environment fields the two traces record differently
	 * (ts_diff_ctx_changes, TS_DCTX_ENV_MASK): ts_ab_opts.trace_ctx */
	struct ts_ctx_change chg[TS_DCTX_COUNT];
	char buf[TS_DCTX_COUNT][2][32];
	size_t nchg;
};

void ab_trace_sides_init(struct ab_trace_sides *s);
void ab_trace_sides_release(struct ab_trace_sides *s);
/* Read s (initialised) from the runs base and cand. Prints nothing; a
 * trace that cannot be read is left in s->err (no changes then). Returns
 * 0 or TS_ENOMEM. */
int ab_trace_sides_read(struct ab_trace_sides *s, const struct ts_run *base, const struct ts_run *cand);

#endif

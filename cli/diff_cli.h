/*
 * diff_cli.h - `diff` glue shared by `diff` and `report --baseline`: one
 * side read with trace's readers (Kineto, legacy, gzip, nsys exports), and
 * the report's "Diff vs baseline" section.
 */
#ifndef TS_CLI_DIFF_CLI_H
#define TS_CLI_DIFF_CLI_H

#include "cli.h"
#include "trainscope/diff.h"
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

#endif

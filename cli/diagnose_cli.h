/*
 * diagnose_cli.h - what diagnose, advise and report share on the command
 * line: gathering and analysing a run, and the report format a file name
 * implies (.html/.htm, .md/.markdown).
 */
#ifndef TRAINSCOPE_DIAGNOSE_CLI_H
#define TRAINSCOPE_DIAGNOSE_CLI_H

#include "cli.h"
#include "trainscope/diagnose.h"

enum diag_report_format { DIAG_FMT_NONE = 0, DIAG_FMT_HTML, DIAG_FMT_MD };

/* Format implied by a file name, DIAG_FMT_NONE when it names neither. */
int diag_format_of(const char *path);

/* Load the run model into rm (initialised by the caller, released after
 * d), gather and analyse; prints the error and returns an exit status on
 * failure, 0 on success. */
int diag_run(struct cli_ctx *ctx, struct ts_diag *d, struct ts_runmodel *rm, char *const *paths,
	     size_t n);

#endif

/*
 * diagnose_cli.c - the command-line glue diagnose, advise and report
 * share, so the three commands read a run the same way.
 */
#include <string.h>
#include <strings.h>
#include "diagnose_cli.h"

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

int diag_format_of(const char *path)
{
	if (!path)
		return DIAG_FMT_NONE;
	if (ends_with(path, ".html") || ends_with(path, ".htm"))
		return DIAG_FMT_HTML;
	if (ends_with(path, ".md") || ends_with(path, ".markdown"))
		return DIAG_FMT_MD;
	return DIAG_FMT_NONE;
}

int diag_run(struct cli_ctx *ctx, struct ts_diag *d, struct ts_runmodel *rm, char *const *paths,
	     size_t n)
{
	struct ts_err err;
	int rc;

	ts_err_init(&err);
	if (n == 0) {
		cli_error(ctx, "no input given");
		fprintf(stderr, "hint: trainscope %s RUN_DIR (a directory with a training log, "
			"metrics or profiler traces)\n", ctx->cmd->name);
		return EXIT_USAGE;
	}
	if ((rc = ts_runmodel_load(rm, paths, n, NULL, 0, &err)) || (rc = ts_diag_gather(d, rm, &err)))
		return cli_fail(ctx, &err);
	if ((rc = ts_diag_analyse(d))) {
		ts_err_set(&err, rc, "out of memory while analysing");
		return cli_fail(ctx, &err);
	}
	return 0;
}

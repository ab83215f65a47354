/*
 * cmd_report.c - `trainscope report PATH... -o report.html`: the run
 * summary as a self-contained HTML page (inline SVG charts) or Markdown.
 */
#include <stdio.h>
#include <string.h>
#include "diagnose_cli.h"

enum { OPT_FORMAT = 1 };

static const struct cli_opt opts[] = {
	{ "format", 0, "FMT", "html or md (default: from the -o name, else md)", OPT_FORMAT },
	{ 0 }
};

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_diag d;
	int fmt = DIAG_FMT_NONE;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_diag_init(&d);
	for (size_t i = 0; i < p.nopts; i++) {
		if (p.opts[i].key != OPT_FORMAT)
			continue;
		if (!strcmp(p.opts[i].val, "html")) {
			fmt = DIAG_FMT_HTML;
		} else if (!strcmp(p.opts[i].val, "md") || !strcmp(p.opts[i].val, "markdown")) {
			fmt = DIAG_FMT_MD;
		} else {
			cli_error(ctx, "--format: '%s' is neither html nor md", p.opts[i].val);
			rc = EXIT_USAGE;
			goto out;
		}
	}
	if (ctx->json) {
		cli_error(ctx, "the report is HTML or Markdown; use `trainscope diagnose --json` for JSON");
		rc = EXIT_USAGE;
		goto out;
	}
	if (fmt == DIAG_FMT_NONE)
		fmt = diag_format_of(ctx->output);
	if (fmt == DIAG_FMT_NONE)
		fmt = DIAG_FMT_MD;
	if ((rc = diag_run(ctx, &d, p.pos, p.npos)))
		goto out;
	rc = diag_write_report(ctx, &d, fmt, ctx->output);
	if (!rc && ctx->output && !ctx->quiet)
		fprintf(stderr, "report written to %s\n", ctx->output);
out:
	ts_diag_release(&d);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_report = {
	.name = "report",
	.stage = STAGE_VALIDATE,
	.summary = "Write a run's report: self-contained HTML with inline charts, or Markdown",
	.usage = "report [options] RUN_DIR|FILE... [-o report.html|report.md]",
	.description =
		"Reads a run as `trainscope diagnose` does and writes one file that needs no\n"
		"network: inline CSS, SVG charts drawn by trainscope (step time over the run with\n"
		"the steady window shaded and stalls marked, per-step time stacked by class,\n"
		"top kernels, per-rank comparison), the dominant wall with its evidence,\n"
		"findings, candidates and missing evidence. Every name taken from a trace is\n"
		"escaped. The Markdown variant holds the same tables. The format follows the\n"
		"-o name (.html, .md) unless --format says otherwise; without -o, Markdown goes\n"
		"to standard output.",
	.opts = opts,
	.run = run,
	.json_schema_version = 0,
	.writes_output = 1,
};

/*
 * cmd_diagnose.c - `trainscope diagnose RUN_DIR`: the dominant wall with
 * its numbers, and everything else the run's evidence says.
 */
#include <stdio.h>
#include "diagnose_cli.h"

enum { OPT_REPORT = 1 };

static const struct cli_opt opts[] = {
	{ "report", 0, "FILE", "also write the report (HTML or Markdown by the name)", OPT_REPORT },
	{ 0 }
};

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_diag d;
	struct ts_runmodel rm;
	struct ts_sb out;
	const char *report = NULL;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_diag_init(&d);
	ts_runmodel_init(&rm);
	ts_sb_init(&out);
	for (size_t i = 0; i < p.nopts; i++)
		if (p.opts[i].key == OPT_REPORT)
			report = p.opts[i].val;
	if (report && !diag_format_of(report)) {
		cli_error(ctx, "--report: %s: name it .html or .md", report);
		rc = EXIT_USAGE;
		goto out;
	}
	/* -o report.html / report.md writes the report, the summary still goes to stdout */
	if (!report && diag_format_of(ctx->output)) {
		report = ctx->output;
		ctx->output = NULL;
	}
	if ((rc = diag_run(ctx, &d, &rm, p.pos, p.npos)))
		goto out;
	if (report && (rc = diag_write_report(ctx, &d, diag_format_of(report), report)))
		goto out;
	if (ctx->json)
		ts_diag_json(&d, &out);
	else if (!ctx->quiet || ctx->output)
		ts_diag_text(&d, &out, 0);
	rc = cli_emit(ctx, &out);
	if (!rc && report && !ctx->quiet && !ctx->json)
		fprintf(stderr, "report written to %s\n", report);
out:
	ts_sb_release(&out);
	ts_diag_release(&d);
	ts_runmodel_release(&rm);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_diagnose = {
	.name = "diagnose",
	.stage = STAGE_PROFILE,
	.summary = "Name the dominant wall of a run, with its evidence, and what to test next",
	.usage = "diagnose [options] RUN_DIR|FILE...",
	.description =
		"Finds the pieces of a run by content (training log, JSONL metrics, profiler\n"
		"traces of one or more ranks, model config) and reports the steady-state step\n"
		"time with its CI and stalls, throughput, the dominant wall (data, straggler,\n"
		"communication, host, memory, compute) with the numbers behind it (from the\n"
		"trace when there is one, from the log otherwise), stragglers, loss health, the\n"
		"evidence that is missing and how to collect it, and candidate changes for the\n"
		"wall. Candidates are hypotheses to test with `trainscope ab`, never defaults.\n"
		"\n"
		"-o FILE.html or -o FILE.md (or --report FILE) also writes the report.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};

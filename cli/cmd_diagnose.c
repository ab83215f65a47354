/*
 * cmd_diagnose.c - `trainscope diagnose RUN_DIR`: the dominant wall with
 * its numbers, and everything else the run's evidence says.
 */
#include <stdio.h>
#include <string.h>
#include "diagnose_cli.h"

static const struct cli_opt opts[] = {
	{ 0 }
};

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_diag d;
	struct ts_runmodel rm;
	struct ts_sb out;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_diag_init(&d);
	ts_runmodel_init(&rm);
	ts_sb_init(&out);
	/* -o writes what the flags say (text, or JSON with --json): a report
	 * is `trainscope report`'s */
	if (diag_format_of(ctx->output)) {
		cli_error(ctx, "-o %s: diagnose writes text (JSON with --json); an HTML or Markdown "
			  "report comes from `trainscope report`", ctx->output);
		fprintf(stderr, "hint: trainscope report %s -o %s\n", p.npos ? p.pos[0] : "RUN_DIR",
			ctx->output);
		rc = EXIT_USAGE;
		goto out;
	}
	if ((rc = diag_run(ctx, &d, &rm, p.pos, p.npos)))
		goto out;
	if (ctx->json)
		ts_diag_json(&d, &out);
	else if (!ctx->quiet || ctx->output)
		ts_diag_text(&d, &out, 0);
	rc = cli_emit(ctx, &out);
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
		"The HTML or Markdown report of the same run is `trainscope report RUN -o\n"
		"FILE.html|FILE.md`; -o here writes the text (or --json) summary.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};

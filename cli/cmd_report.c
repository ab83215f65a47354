/*
 * cmd_report.c - `trainscope report PATH... -o report.html`: the run
 * summary as a self-contained HTML page (inline SVG charts) or Markdown.
 */
#include <stdio.h>
#include <string.h>
#include "diagnose_cli.h"
#include "diff_cli.h"
#include "report_fill.h"

enum { OPT_FORMAT = 1, OPT_BASE, OPT_CAND, OPT_LAYOUT, OPT_MODEL, OPT_GPU };

static const struct cli_opt opts[] = {
	{ "format", 0, "FMT", "html or md (default: from the -o name, else md)", OPT_FORMAT },
	{ "baseline", 0, "RUN", "A/B section: the baseline run (with --candidate); without it, \"Diff vs baseline\" of the traces of RUN and this run", OPT_BASE },
	{ "candidate", 0, "RUN", "A/B section: the candidate run (with --baseline)", OPT_CAND },
	{ "layout", 0, "SPEC", "memory section for a layout, e.g. tp=2,pp=4,dp=8,mbs=1,gbs=512,seq=4096", OPT_LAYOUT },
	{ "model", 0, "FILE", "with --layout: config.json or Megatron log (default: the run's config)", OPT_MODEL },
	{ "gpu", 0, "SKU", "with --layout: the device whose memory to compare with", OPT_GPU },
	{ 0 }
};

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_diag d;
	struct ts_runmodel rm;
	struct ts_report r;
	struct ts_sb out;
	const char *base = NULL, *cand = NULL, *layout = NULL, *model = NULL, *gpu = NULL;
	int fmt = DIAG_FMT_NONE;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_diag_init(&d);
	ts_runmodel_init(&rm);
	ts_report_init(&r);
	ts_sb_init(&out);
	for (size_t i = 0; i < p.nopts; i++) {
		switch (p.opts[i].key) {
		case OPT_BASE: base = p.opts[i].val; continue;
		case OPT_CAND: cand = p.opts[i].val; continue;
		case OPT_LAYOUT: layout = p.opts[i].val; continue;
		case OPT_MODEL: model = p.opts[i].val; continue;
		case OPT_GPU: gpu = p.opts[i].val; continue;
		default: break;
		}
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
	if (fmt == DIAG_FMT_NONE && ctx->output) {
		cli_error(ctx, "-o %s: name the report .html/.htm or .md/.markdown, or give --format "
			  "html|md", ctx->output);
		rc = EXIT_USAGE;
		goto out;
	}
	if (fmt == DIAG_FMT_NONE)
		fmt = DIAG_FMT_MD;
	if (!base != !cand && !(base && p.npos)) {
		cli_error(ctx, "an A/B section needs both --baseline and --candidate");
		rc = EXIT_USAGE;
		goto out;
	}
	if ((model || gpu) && !layout) {
		cli_error(ctx, "--model and --gpu go with --layout");
		rc = EXIT_USAGE;
		goto out;
	}
	if (p.npos || (!base && !layout)) {
		if ((rc = diag_run(ctx, &d, &rm, p.pos, p.npos)))
			goto out;
		if (ts_diag_to_report(&d, &r)) {
			cli_error(ctx, "out of memory");
			rc = EXIT_INTERNAL;
			goto out;
		}
	} else {
		r.title = ts_report_strdup(&r, "trainscope report");
	}
	if (base && cand && (rc = report_fill_ab(ctx, &r, base, cand)))
		goto out;
	if (base && !cand && (rc = diff_fill_report(ctx, &r, base, p.pos, p.npos)))
		goto out;
	if (layout) {
		if (!model)
			model = d.in.configs.n ? d.in.configs.v[0] : NULL;
		if (!model) {
			cli_error(ctx, "--layout needs a model: --model FILE, or a config.json in the run");
			rc = EXIT_USAGE;
			goto out;
		}
		if ((rc = report_fill_mem(ctx, &r, model, layout, gpu)))
			goto out;
	}
	if ((fmt == DIAG_FMT_MD ? ts_report_md(&r, &out) : ts_report_html(&r, &out))) {
		cli_error(ctx, "out of memory while rendering the report");
		rc = EXIT_INTERNAL;
		goto out;
	}
	rc = cli_emit(ctx, &out);
	if (!rc && ctx->output && strcmp(ctx->output, "-") != 0 && !ctx->quiet)
		fprintf(stderr, "report written to %s\n", ctx->output);
out:
	ts_sb_release(&out);
	ts_report_release(&r);
	ts_diag_release(&d);
	ts_runmodel_release(&rm);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_report = {
	.name = "report",
	.stage = STAGE_VALIDATE,
	.summary = "Write a run's report: self-contained HTML with inline charts, or Markdown",
	.usage = "report [options] [RUN_DIR|FILE...] [-o report.html|report.md]",
	.description =
		"Reads a run as `trainscope diagnose` does and writes one file that needs no\n"
		"network: inline CSS, SVG charts drawn by trainscope (step time over the run with\n"
		"the steady window shaded and stalls marked, per-step time stacked by class,\n"
		"top kernels, per-rank comparison), the dominant wall with its evidence,\n"
		"findings, candidates and missing evidence. Every name taken from a trace is\n"
		"escaped. The Markdown variant holds the same tables. The format follows the\n"
		"-o name (.html/.htm, .md/.markdown; another extension is refused) unless\n"
		"--format says otherwise; without -o, Markdown goes to standard output.\n"
		"\n"
		"--baseline RUN --candidate RUN adds the A/B section (step-time distributions of\n"
		"the matched windows and the CI of the difference, as `trainscope ab` decides\n"
		"it); --layout SPEC adds the memory breakdown of the most loaded GPU (as\n"
		"`trainscope memory`), against --gpu SKU's capacity when given. RUN --baseline\n"
		"BASE without --candidate adds \"Diff vs baseline\": trainscope diff of the two\n"
		"runs' traces (docs/diff.md).",
	.opts = opts,
	.run = run,
	.json_schema_version = 0,
	.writes_output = 1,
};

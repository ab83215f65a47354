/*
 * cmd_validate.c - `trainscope validate RUN`: the final check of a winner.
 */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "trainscope/gate.h"
#include "trainscope/jsonw.h"
#include "trainscope/table.h"

enum { OPT_WINDOW = 1, OPT_ACCEPT_AUTO };

static const struct cli_opt opts[] = {
	{ "window", 0, "FIRST:LAST", "declared steady window (FIRST-LAST also; default: the contract's workload.steady_window)", OPT_WINDOW },
	{ "accept-auto-window", 0, NULL, "accept the automatic window when none is declared (it then only warns)", OPT_ACCEPT_AUTO },
	{ 0 }
};

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_run r;
	struct ts_validate_result v;
	struct ts_err err;
	struct ts_sb out;
	int64_t first = TS_WIN_AUTO, last = TS_WIN_AUTO;
	struct ts_runmodel_opts ro;
	struct ts_window_obj win;
	int accept_auto = 0;
	char words[1200];
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_run_init(&r);
	ts_validate_result_init(&v);
	ts_sb_init(&out);
	ts_err_init(&err);
	ts_runmodel_opts_init(&ro);
	for (size_t i = 0; i < p.nopts; i++) {
		if (p.opts[i].key == OPT_ACCEPT_AUTO)
			accept_auto = 1;
		if (p.opts[i].key == OPT_WINDOW && ts_window_parse(p.opts[i].val, &first, &last)) {
			cli_error(ctx, "--window: expected FIRST:LAST or FIRST-LAST with 1 <= FIRST <= "
				  "LAST (iterations), got '%s'", p.opts[i].val);
			rc = EXIT_USAGE;
			goto out;
		}
	}
	if (first != TS_WIN_AUTO) {
		ro.steps.window_first = first;
		ro.steps.window_last = last;
	}
	if (p.npos != 1) {
		cli_error(ctx, "expected one run (directory, log or JSONL), got %zu", p.npos);
		fprintf(stderr, "hint: trainscope validate runs/winner\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if (ts_run_load(&r, p.pos[0], &ro, &err) ||
	    ts_validate_run(&r, first, last, accept_auto, &v, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	ts_runmodel_window(&r.rm, v.win_first, v.win_last, &win);
	if (ctx->json) {
		struct ts_jw w;
		ts_jw_init(&w, &out, 1);
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "schema", "trainscope.validate/1");
		ts_jw_kstr(&w, "run", p.pos[0]);
		ts_jw_kbool(&w, "passed", v.passed);
		ts_window_json(&w, &win);
		ts_jw_ki64(&w, "window_steps_timed", (int64_t)v.win_steps);
		ts_node_ranks_json(&w, &r.rm);
		ts_jw_key(&w, "checks");
		ts_jw_arr(&w);
		for (size_t i = 0; i < v.checks.n; i++) {
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "name", v.checks.v[i].name);
			ts_jw_kstr(&w, "status", ts_check_status_name(v.checks.v[i].status));
			ts_jw_kstr(&w, "evidence", v.checks.v[i].evidence);
			ts_jw_obj_end(&w);
		}
		ts_jw_arr_end(&w);
		ts_warnings_json(&w, &r.rm.warnings, r.rm.warnings.v.n);
		ts_jw_obj_end(&w);
		ts_sb_addc(&out, '\n');
	} else {
		struct ts_table t;
		ts_table_init(&t);
		ts_table_col(&t, "check", NULL, TS_LEFT, 0);
		ts_table_col(&t, "status", NULL, TS_LEFT, 0);
		ts_table_col(&t, "evidence", NULL, TS_LEFT, 0);
		for (size_t i = 0; i < v.checks.n; i++) {
			ts_table_cell(&t, "%s", v.checks.v[i].name);
			ts_table_cell(&t, "%s", ts_check_status_name(v.checks.v[i].status));
			ts_table_cell(&t, "%s", v.checks.v[i].evidence);
		}
		ts_table_render(&t, &out, 0);
		ts_table_release(&t);
		ts_sb_adds(&out, "\nwindow: ");
		ts_window_text(&out, &win);
		ts_sb_addc(&out, '\n');
		if (ts_runmodel_node_ranks_words(&r.rm, words, sizeof(words)))
			ts_sb_addf(&out, "node ranks: node x %lld + local rank; %s\n",
				   (long long)r.rm.log.replica_nproc, words);
		ts_warnings_text(&out, &r.rm.warnings, r.rm.warnings.v.n, cli_style(ctx, "yellow"),
				 cli_style(ctx, "reset"));
		ts_sb_addf(&out, "\n%s: %s\n", p.pos[0], v.passed ? "validated" : "NOT validated");
	}
	rc = cli_emit(ctx, &out);
	if (!rc && !v.passed)
		rc = EXIT_GATE;
out:
	ts_sb_release(&out);
	ts_validate_result_release(&v);
	ts_run_release(&r);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_validate = {
	.name = "validate",
	.stage = STAGE_VALIDATE,
	.summary = "Final check of a winner: length, declared window, loss health, memory, evidence",
	.usage = "validate [options] RUN",
	.description =
		"Checks, each pass/warn/fail/skip with its evidence: at least 50 logged steps; a\n"
		"declared window (--window, or the contract's workload.steady_window; the\n"
		"automatic window of the steps analysis fails this check unless\n"
		"--accept-auto-window, then it warns) after iteration 1 and any restart (it\n"
		"fails when it holds one; it warns when it starts before the warm-up's end;\n"
		"its profiler, checkpoint and evaluation steps are left out of the statistics\n"
		"and named); finite loss and grad norm; zero skipped and NaN\n"
		"iterations in the window; step time (warns above 3 % CV); logged TFLOP/s\n"
		"(recomputation needs the FLOP formula: skipped); peak memory reported; backend\n"
		"evidence from a trace (skipped). Exit 1 when a check fails.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};

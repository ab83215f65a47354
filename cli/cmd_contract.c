/*
 * cmd_contract.c - `trainscope contract capture | diff`: freeze what is
 * measured, and show what differs between two runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "cli_gate.h"
#include "trainscope/contract.h"
#include "trainscope/jsonw.h"
#include "trainscope/table.h"

extern char **environ;

enum { OPT_SET = 1, OPT_FROM_LOG, OPT_NO_PROBE };

static const struct cli_opt opts[] = {
	{ "set", 0, "KEY=VALUE", "record a workload field (repeatable): model=, revision=, data=, precision=, tp=, ...", OPT_SET },
	{ "from-log", 0, "FILE", "fill the workload from the arguments block of a Megatron log", OPT_FROM_LOG },
	{ "no-probe", 0, NULL, "capture: do not run external tools (nvidia-smi, python3, ...)", OPT_NO_PROBE },
	{ 0 }
};

static int probe_run(void *ctx, const char *const argv[], struct ts_sb *out)
{
	(void)ctx;
	/* importing torch can take tens of seconds on a cold cache */
	return cli_run_capture(argv, out, strcmp(argv[0], "python3") == 0 ? 120000 : 20000);
}

static void now_iso(char *buf, size_t size)
{
	int64_t fixed = cli_fixed_now_ns();
	time_t t = fixed ? (time_t)(fixed / 1000000000) : time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int capture(struct cli_ctx *ctx, struct cli_parsed *p)
{
	struct ts_contract c;
	struct ts_probe probe = { probe_run, NULL, environ, "" };
	struct ts_err err;
	struct ts_sb out;
	char when[32];
	int rc = 0;

	ts_contract_init(&c);
	ts_sb_init(&out);
	ts_err_init(&err);
	for (size_t i = 0; i < p->nopts; i++)
		if (p->opts[i].key == OPT_NO_PROBE)
			probe.run = NULL;
	if (p->npos > 1) {
		cli_error(ctx, "capture takes no positional arguments (got '%s')", p->pos[1]);
		rc = EXIT_USAGE;
		goto out;
	}
	if ((rc = ts_contract_capture_env(&c, &probe, &err)))
		goto fail;
	for (size_t i = 0; i < p->nopts; i++) {
		if (p->opts[i].key == OPT_FROM_LOG &&
		    (rc = ts_contract_from_log(&c, p->opts[i].val, &err)))
			goto fail;
	}
	for (size_t i = 0; i < p->nopts; i++) {
		if (p->opts[i].key == OPT_SET && (rc = ts_contract_apply_set(&c, p->opts[i].val, &err)))
			goto fail;
	}
	now_iso(when, sizeof(when));
	c.captured_time = when;
	if (ts_contract_finish(&c)) {
		rc = EXIT_INTERNAL;
		goto out;
	}
	ts_contract_write(&c, &out);
	rc = cli_emit(ctx, &out);
	if (!rc && !ctx->quiet && c.benchmark_only)
		for (size_t i = 0; i < c.reasons.n; i++)
			cli_warn(ctx, "benchmark-only: %s", c.reasons.v[i]);
	goto out;
fail:
	rc = cli_fail(ctx, &err);
out:
	ts_sb_release(&out);
	ts_contract_release(&c);
	return rc;
}

static int diff(struct cli_ctx *ctx, struct cli_parsed *p)
{
	struct ts_contract a, b;
	struct ts_contract_diff *d = NULL;
	struct ts_err err;
	struct ts_sb out;
	struct ts_jw w;
	size_t n = 0;
	int rc = 0;

	ts_contract_init(&a);
	ts_contract_init(&b);
	ts_sb_init(&out);
	ts_err_init(&err);
	if (p->npos != 3) {
		cli_error(ctx, "diff wants two contract files");
		fprintf(stderr, "hint: trainscope contract diff A.json B.json\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if ((rc = ts_contract_read(&a, p->pos[1], &err)) ||
	    (rc = ts_contract_read(&b, p->pos[2], &err))) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ts_contract_diff(&a, &b, &d, &n)) {
		rc = EXIT_INTERNAL;
		goto out;
	}
	if (ctx->json) {
		ts_jw_init(&w, &out, 1);
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "schema", "trainscope.contract-diff/1");
		ts_jw_kstr(&w, "a", p->pos[1]);
		ts_jw_kstr(&w, "b", p->pos[2]);
		ts_jw_kstr(&w, "a_label", a.benchmark_only ? "benchmark-only" : "training-equivalent");
		ts_jw_kstr(&w, "b_label", b.benchmark_only ? "benchmark-only" : "training-equivalent");
		ts_jw_ki64(&w, "count", (int64_t)n);
		ts_jw_key(&w, "differences");
		ts_jw_arr(&w);
		for (size_t i = 0; i < n; i++) {
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "key", d[i].key);
			ts_jw_kstr(&w, "a", d[i].a);
			ts_jw_kstr(&w, "b", d[i].b);
			ts_jw_obj_end(&w);
		}
		ts_jw_arr_end(&w);
		ts_jw_obj_end(&w);
	} else {
		struct ts_table t;
		ts_sb_addf(&out, "A: %s (%s)\nB: %s (%s)\n%zu difference%s\n", p->pos[1],
			   a.benchmark_only ? "benchmark-only" : "training-equivalent", p->pos[2],
			   b.benchmark_only ? "benchmark-only" : "training-equivalent", n,
			   n == 1 ? "" : "s");
		if (n) {
			ts_sb_addc(&out, '\n');
			ts_table_init(&t);
			ts_table_col(&t, "field", NULL, TS_LEFT, 48);
			ts_table_col(&t, "A", NULL, TS_LEFT, 40);
			ts_table_col(&t, "B", NULL, TS_LEFT, 40);
			for (size_t i = 0; i < n; i++) {
				ts_table_cell(&t, "%s", d[i].key);
				ts_table_cell(&t, "%s", d[i].a ? d[i].a : "(unknown)");
				ts_table_cell(&t, "%s", d[i].b ? d[i].b : "(unknown)");
			}
			ts_table_render(&t, &out, 0);
			ts_table_release(&t);
		}
	}
	rc = cli_emit(ctx, &out);
out:
	free(d);
	ts_sb_release(&out);
	ts_contract_release(&a);
	ts_contract_release(&b);
	return rc;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (p.npos && strcmp(p.pos[0], "capture") == 0) {
		rc = capture(ctx, &p);
	} else if (p.npos && strcmp(p.pos[0], "diff") == 0) {
		rc = diff(ctx, &p);
	} else {
		cli_error(ctx, "expected 'capture' or 'diff'%s%s", p.npos ? ", got " : "",
			  p.npos ? p.pos[0] : "");
		fprintf(stderr, "hint: trainscope contract capture -o run/contract.json --set model=...\n");
		rc = EXIT_USAGE;
	}
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_contract = {
	.name = "contract",
	.stage = STAGE_CONTRACT,
	.summary = "Freeze the measurement contract of a run, or diff two contracts",
	.usage = "contract capture [-o FILE] [--set KEY=VALUE]... [--from-log LOG] | diff A B",
	.description =
		"capture records this machine (OS, CPU, GPUs and driver via nvidia-smi or\n"
		"mthreads-gmi, CUDA/MUSA SDK, python3 with torch/torch_musa, NCCL/MCCL, the\n"
		"environment variables that change performance) and the workload (model,\n"
		"revision, data, precision, shapes, accumulation, device count, parallel layout,\n"
		"recompute, dispatcher, graph scopes, steady window) from --set and from a\n"
		"Megatron log's arguments block. Tools that are not installed are recorded as\n"
		"\"absent\". The contract is labelled training-equivalent or benchmark-only\n"
		"(forced load balancing, mock data, NaN checks off, optimizer or checkpoint\n"
		"disabled) with the reasons. Put it in the run directory as contract.json;\n"
		"`trainscope ab` refuses runs whose contracts differ in more than one field.\n"
		"\n"
		"diff lists every field that differs (--json: an array of {key, a, b}); version\n"
		"fields compare as versions (535.104.05 = 535.104.5, 12.4 = 12.4.0).",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};

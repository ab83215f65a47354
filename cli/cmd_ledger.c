/*
 * cmd_ledger.c - `trainscope ledger`: read the experiment history and set
 * the baseline of a workload.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "cli_gate.h"
#include "trainscope/jsonw.h"
#include "trainscope/ledger.h"
#include "trainscope/table.h"

enum { OPT_DB = 1, OPT_WORKLOAD };

static const struct cli_opt opts[] = {
	{ "db", 0, "FILE", "ledger database (default $TRAINSCOPE_DB, else .trainscope/ledger.db)", OPT_DB },
	{ "workload", 0, "NAME", "only this workload (list, history)", OPT_WORKLOAD },
	{ 0 }
};

static void fmt_time(int64_t ns, char *buf, size_t size)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (ns < 0 || !gmtime_r(&t, &tm)) {
		snprintf(buf, size, "-");
		return;
	}
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void jw_run(struct ts_jw *w, const struct ts_ledger_run *r, int with_contract)
{
	char when[32];

	fmt_time(r->created_ns, when, sizeof(when));
	ts_jw_obj(w);
	ts_jw_ki64(w, "id", r->id);
	ts_jw_kstr(w, "created", when);
	ts_jw_kstr(w, "workload", r->workload);
	ts_jw_kstr(w, "source", r->source);
	ts_jw_kbool(w, "baseline", r->is_baseline);
	ts_jw_kstr(w, "label", r->contract_label);
	ts_jw_ki64_or_null(w, "steps_logged", r->steps_logged, r->steps_logged >= 0);
	ts_jw_key(w, "window");
	if (r->window_first < 0) {
		ts_jw_null(w);
	} else {
		ts_jw_arr(w);
		ts_jw_i64(w, r->window_first);
		ts_jw_i64(w, r->window_last);
		ts_jw_arr_end(w);
	}
	ts_jw_ki64_or_null(w, "window_steps", r->window_steps, r->window_steps >= 0);
	ts_jw_kf64(w, "mean_step_ms", r->mean_step_ns < 0 ? NAN : r->mean_step_ns / 1e6);
	ts_jw_kf64(w, "median_step_ms", r->median_step_ns < 0 ? NAN : r->median_step_ns / 1e6);
	ts_jw_kf64(w, "cv_pct", r->cv * 100.0);
	ts_jw_ki64_or_null(w, "peak_mem_bytes", r->peak_mem_bytes, r->peak_mem_bytes >= 0);
	ts_jw_ki64_or_null(w, "nan_steps", r->nan_steps, r->nan_steps >= 0);
	ts_jw_ki64_or_null(w, "skipped_steps", r->skipped_steps, r->skipped_steps >= 0);
	ts_jw_kf64(w, "final_loss", r->final_loss);
	if (with_contract) {
		ts_jw_key(w, "contract");
		if (r->contract_json)
			ts_jw_str(w, r->contract_json);
		else
			ts_jw_null(w);
	}
	ts_jw_obj_end(w);
}

/* The newline-separated lines of s (the last may lack its newline): a
 * JSON array of strings, or "  - line" rows. */
static void jw_lines(struct ts_jw *w, const char *s)
{
	ts_jw_arr(w);
	for (const char *q = s; q && *q;) {
		const char *nl = strchr(q, '\n');
		size_t n = nl ? (size_t)(nl - q) : strlen(q);
		ts_jw_strn(w, q, n);
		q += n + (nl ? 1 : 0);
	}
	ts_jw_arr_end(w);
}

static void text_lines(struct ts_sb *out, const char *s)
{
	for (const char *q = s; q && *q;) {
		const char *nl = strchr(q, '\n');
		size_t n = nl ? (size_t)(nl - q) : strlen(q);
		ts_sb_addf(out, "  - %.*s\n", (int)n, q);
		q += n + (nl ? 1 : 0);
	}
}

static void jw_exp(struct ts_jw *w, const struct ts_ledger_experiment *e, int full)
{
	char when[32];

	fmt_time(e->created_ns, when, sizeof(when));
	ts_jw_obj(w);
	ts_jw_ki64(w, "id", e->id);
	ts_jw_kstr(w, "created", when);
	ts_jw_kstr(w, "workload", e->workload);
	ts_jw_kstr(w, "variable", e->variable);
	ts_jw_kstr(w, "verdict", e->verdict);
	ts_jw_kstr(w, "decision", e->decision);
	ts_jw_key(w, "ratio");
	ts_jw_obj(w);
	ts_jw_kf64(w, "estimate", e->ratio);
	ts_jw_kf64(w, "ci95_low", e->ci95_low);
	ts_jw_kf64(w, "ci95_high", e->ci95_high);
	ts_jw_obj_end(w);
	ts_jw_kbool(w, "correctness_passed", e->correctness_passed);
	ts_jw_key(w, "reasons");
	jw_lines(w, e->reasons);
	ts_jw_key(w, "baseline_runs");
	ts_jw_arr(w);
	for (size_t i = 0; i < e->nbaseline; i++)
		full ? jw_run(w, &e->baseline[i], 0) : ts_jw_i64(w, e->baseline[i].id);
	ts_jw_arr_end(w);
	ts_jw_key(w, "candidate_runs");
	ts_jw_arr(w);
	for (size_t i = 0; i < e->ncandidate; i++)
		full ? jw_run(w, &e->candidate[i], 0) : ts_jw_i64(w, e->candidate[i].id);
	ts_jw_arr_end(w);
	if (full) {
		/* the warnings ab gave, read out of the evidence (null when it
		 * cannot be read) */
		struct ts_sb msgs;
		struct ts_err err;
		size_t n;
		ts_sb_init(&msgs);
		ts_err_init(&err);
		ts_jw_key(w, "warnings");
		if (ts_ledger_evidence_warnings(e->evidence_json, &msgs, &n, &err))
			ts_jw_null(w);
		else
			jw_lines(w, msgs.buf);
		ts_sb_release(&msgs);
		/* ab's JSON as recorded, as JSON; null when there is none or
		 * it is not one JSON value (a damaged database) */
		ts_jw_key(w, "evidence");
		if (!e->evidence_json ||
		    ts_jw_json(w, e->evidence_json, strlen(e->evidence_json)))
			ts_jw_null(w);
	}
	ts_jw_obj_end(w);
}

/* The warnings ab gave when it recorded the experiment (from its evidence),
 * as ab printed them. 0 or TS_ENOMEM; evidence that cannot be read is said. */
static int show_warnings(const struct ts_ledger_experiment *e, struct ts_sb *out,
			 struct ts_err *err)
{
	struct ts_sb msgs;
	size_t n;
	int rc;

	ts_sb_init(&msgs);
	rc = ts_ledger_evidence_warnings(e->evidence_json, &msgs, &n, err);
	ts_sb_adds(out, "\nwarnings:\n");
	if (rc && rc != TS_ENOMEM) {
		ts_sb_addf(out, "  (not readable from the recorded evidence: %s)\n", err->msg);
		ts_sb_reset(&msgs);
		rc = 0;
	} else if (!rc && !n) {
		ts_sb_adds(out, "  (none)\n");
	}
	if (!rc)
		text_lines(out, msgs.buf);
	ts_sb_release(&msgs);
	return rc;
}

static void ms_cell(struct ts_table *t, int64_t ns)
{
	if (ns < 0)
		ts_table_cell(t, "-");
	else
		ts_table_cell(t, "%.2f", ns / 1e6);
}

static void runs_table(const struct ts_ledger_run *v, size_t n, struct ts_sb *out)
{
	struct ts_table t;

	ts_table_init(&t);
	ts_table_col(&t, "run", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "created", "UTC", TS_LEFT, 0);
	ts_table_col(&t, "workload", NULL, TS_LEFT, 24);
	ts_table_col(&t, "source", NULL, TS_LEFT, 40);
	ts_table_col(&t, "window", "iter", TS_LEFT, 0);
	ts_table_col(&t, "mean step", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "median", "ms", TS_RIGHT, 0);
	ts_table_col(&t, "cv", "%", TS_RIGHT, 0);
	ts_table_col(&t, "label", NULL, TS_LEFT, 0);
	ts_table_col(&t, "baseline", NULL, TS_LEFT, 0);
	for (size_t i = 0; i < n; i++) {
		const struct ts_ledger_run *r = &v[i];
		char when[32];
		fmt_time(r->created_ns, when, sizeof(when));
		ts_table_cell(&t, "%lld", (long long)r->id);
		ts_table_cell(&t, "%s", when);
		ts_table_cell(&t, "%s", r->workload ? r->workload : "-");
		ts_table_cell(&t, "%s", r->source ? r->source : "-");
		if (r->window_first < 0)
			ts_table_cell(&t, "-");
		else
			ts_table_cell(&t, "%lld-%lld", (long long)r->window_first,
				      (long long)r->window_last);
		ms_cell(&t, r->mean_step_ns);
		ms_cell(&t, r->median_step_ns);
		if (isfinite(r->cv))
			ts_table_cell(&t, "%.1f", r->cv * 100.0);
		else
			ts_table_cell(&t, "-");
		ts_table_cell(&t, "%s", r->contract_label ? r->contract_label : "-");
		ts_table_cell(&t, "%s", r->is_baseline ? "yes" : "");
	}
	ts_table_render(&t, out, 0);
	ts_table_release(&t);
}

static void exps_table(const struct ts_ledger_experiment *v, size_t n, struct ts_sb *out)
{
	struct ts_table t;

	ts_table_init(&t);
	ts_table_col(&t, "exp", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "created", "UTC", TS_LEFT, 0);
	ts_table_col(&t, "workload", NULL, TS_LEFT, 24);
	ts_table_col(&t, "variable", NULL, TS_LEFT, 28);
	ts_table_col(&t, "runs", "A/B", TS_RIGHT, 0);
	ts_table_col(&t, "ratio", "B/A", TS_RIGHT, 0);
	ts_table_col(&t, "95% CI", "B/A", TS_LEFT, 0);
	ts_table_col(&t, "verdict", NULL, TS_LEFT, 0);
	ts_table_col(&t, "correctness", NULL, TS_LEFT, 0);
	ts_table_col(&t, "decision", NULL, TS_LEFT, 0);
	for (size_t i = 0; i < n; i++) {
		const struct ts_ledger_experiment *e = &v[i];
		char when[32];
		fmt_time(e->created_ns, when, sizeof(when));
		ts_table_cell(&t, "%lld", (long long)e->id);
		ts_table_cell(&t, "%s", when);
		ts_table_cell(&t, "%s", e->workload ? e->workload : "-");
		ts_table_cell(&t, "%s", e->variable ? e->variable : "-");
		ts_table_cell(&t, "%zu/%zu", e->nbaseline, e->ncandidate);
		if (isfinite(e->ratio))
			ts_table_cell(&t, "%.4f", e->ratio);
		else
			ts_table_cell(&t, "-");
		if (isfinite(e->ci95_low) && isfinite(e->ci95_high))
			ts_table_cell(&t, "[%.4f, %.4f]", e->ci95_low, e->ci95_high);
		else
			ts_table_cell(&t, "-");
		ts_table_cell(&t, "%s", e->verdict);
		ts_table_cell(&t, "%s", e->correctness_passed ? "passed" : "failed");
		ts_table_cell(&t, "%s", e->decision);
	}
	ts_table_render(&t, out, 0);
	ts_table_release(&t);
}

/* "12" or "r12" is a run, "e12" an experiment. Returns 'r', 'e' or 0. */
static int parse_id(const char *s, int64_t *id)
{
	int kind = 'r';
	char *end;
	long long v;

	if (*s == 'r' || *s == 'e')
		kind = *s++;
	if (*s < '0' || *s > '9')
		return 0;
	v = strtoll(s, &end, 10);
	if (*end || v <= 0)
		return 0;
	*id = v;
	return kind;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_ledger l;
	struct ts_ledger_rows rows;
	struct ts_err err;
	struct ts_sb out;
	struct ts_jw w;
	const char *db = NULL, *workload = NULL, *sub;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	memset(&l, 0, sizeof(l));
	ts_ledger_rows_init(&rows);
	ts_sb_init(&out);
	ts_err_init(&err);
	ts_jw_init(&w, &out, 1);
	for (size_t i = 0; i < p.nopts; i++) {
		if (p.opts[i].key == OPT_DB)
			db = p.opts[i].val;
		else if (p.opts[i].key == OPT_WORKLOAD)
			workload = p.opts[i].val;
	}
	sub = p.npos ? p.pos[0] : "list";
	db = ts_ledger_pick_path(db, getenv("TRAINSCOPE_DB"));
	if (strcmp(sub, "list") && strcmp(sub, "show") && strcmp(sub, "baseline") &&
	    strcmp(sub, "history") && strcmp(sub, "check")) {
		cli_error(ctx, "unknown subcommand '%s'", sub);
		fprintf(stderr, "hint: trainscope ledger list | show ID | baseline set ID | history | check\n");
		rc = EXIT_USAGE;
		goto out;
	}
	/* only `baseline set` writes; the rest never waits behind writers */
	if ((rc = ts_ledger_open(&l, db, strcmp(sub, "baseline") == 0 ? TS_LEDGER_CREATE
				 : TS_LEDGER_READ, &err))) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	l.now_ns = cli_fixed_now_ns();
	if (strcmp(sub, "check") == 0) {
		struct ts_err cerr;
		int bad;
		ts_err_init(&cerr);
		bad = ts_ledger_check(&l, &cerr) != 0;
		if (ctx->json) {
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "schema", "trainscope.ledger-check/1");
			ts_jw_kstr(&w, "db", db);
			ts_jw_kbool(&w, "ok", !bad);
			ts_jw_kstr(&w, "problem", bad ? cerr.msg : NULL);
			ts_jw_ki64(&w, "runs", ts_ledger_count(&l, "runs"));
			ts_jw_ki64(&w, "experiments", ts_ledger_count(&l, "experiments"));
			ts_jw_obj_end(&w);
		} else if (bad) {
			ts_sb_addf(&out, "%s: damaged: %s\n"
				   "recover: sqlite3 %s .recover | sqlite3 recovered.db, then use "
				   "--db recovered.db (writes to the damaged file are refused)\n",
				   db, cerr.msg, db);
		} else {
			ts_sb_addf(&out, "%s: ok (integrity check and ledger invariants), %lld runs, "
				   "%lld experiments\n", db, (long long)ts_ledger_count(&l, "runs"),
				   (long long)ts_ledger_count(&l, "experiments"));
		}
		rc = cli_emit(ctx, &out);
		if (!rc && bad)
			rc = EXIT_GATE;
		goto out;
	}
	if (strcmp(sub, "list") == 0) {
		if ((rc = ts_ledger_list_runs(&l, workload, &rows, &err)))
			goto fail;
		if (ctx->json) {
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "schema", "trainscope.ledger/1");
			ts_jw_kstr(&w, "db", db);
			ts_jw_key(&w, "runs");
			ts_jw_arr(&w);
			for (size_t i = 0; i < rows.runs.n; i++)
				jw_run(&w, &rows.runs.v[i], 0);
			ts_jw_arr_end(&w);
			ts_jw_obj_end(&w);
		} else {
			runs_table(rows.runs.v, rows.runs.n, &out);
		}
	} else if (strcmp(sub, "history") == 0) {
		if (p.npos > 1 && !workload)
			workload = p.pos[1];
		if ((rc = ts_ledger_list_experiments(&l, workload, &rows, &err)))
			goto fail;
		if (ctx->json) {
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "schema", "trainscope.ledger/1");
			ts_jw_kstr(&w, "db", db);
			ts_jw_key(&w, "experiments");
			ts_jw_arr(&w);
			for (size_t i = 0; i < rows.exps.n; i++)
				jw_exp(&w, &rows.exps.v[i], 0);
			ts_jw_arr_end(&w);
			ts_jw_obj_end(&w);
		} else {
			exps_table(rows.exps.v, rows.exps.n, &out);
		}
	} else {
		const char *ids = NULL;
		int64_t id = 0;
		int kind;
		int is_set = strcmp(sub, "baseline") == 0;

		if (is_set && (p.npos < 2 || strcmp(p.pos[1], "set") != 0)) {
			cli_error(ctx, "expected 'baseline set RUN_ID'");
			rc = EXIT_USAGE;
			goto out;
		}
		ids = p.npos > (size_t)(is_set ? 2 : 1) ? p.pos[is_set ? 2 : 1] : NULL;
		kind = ids ? parse_id(ids, &id) : 0;
		if (!kind || (is_set && kind != 'r')) {
			cli_error(ctx, "expected a run id (N or rN)%s, got '%s'",
				  is_set ? "" : " or an experiment id (eN)", ids ? ids : "");
			rc = EXIT_USAGE;
			goto out;
		}
		if (is_set) {
			if ((rc = ts_ledger_set_baseline(&l, id, &err)))
				goto fail;
		}
		if (kind == 'e')
			rc = ts_ledger_get_experiment(&l, id, &rows, &err);
		else
			rc = ts_ledger_get_run(&l, id, &rows, &err);
		if (rc)
			goto fail;
		if (ctx->json) {
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "schema", "trainscope.ledger/1");
			ts_jw_kstr(&w, "db", db);
			ts_jw_key(&w, kind == 'e' ? "experiment" : "run");
			if (kind == 'e')
				jw_exp(&w, &rows.exps.v[0], 1);
			else
				jw_run(&w, &rows.runs.v[0], 1);
			ts_jw_obj_end(&w);
		} else if (kind == 'e') {
			const struct ts_ledger_experiment *e = &rows.exps.v[0];
			exps_table(e, 1, &out);
			ts_sb_adds(&out, "\nreasons:\n");
			/* a rejection without a failed gate is the verdict's */
			if ((!e->reasons || !*e->reasons) && strcmp(e->decision, "rejected") == 0)
				ts_sb_addf(&out, "  - the verdict: %s\n", e->verdict);
			else if (!e->reasons || !*e->reasons)
				ts_sb_adds(&out, "  (none)\n");
			text_lines(&out, e->reasons);
			if ((rc = show_warnings(e, &out, &err)))
				goto fail;
			ts_sb_adds(&out, "\nbaseline runs:\n");
			runs_table(e->baseline, e->nbaseline, &out);
			ts_sb_adds(&out, "\ncandidate runs:\n");
			runs_table(e->candidate, e->ncandidate, &out);
		} else {
			if (is_set)
				ts_sb_addf(&out, "run %lld is now the baseline of workload '%s'\n\n",
					   (long long)id, rows.runs.v[0].workload);
			runs_table(rows.runs.v, 1, &out);
			if (!is_set && rows.runs.v[0].contract_json)
				ts_sb_addf(&out, "\ncontract:\n%s\n", rows.runs.v[0].contract_json);
		}
	}
	rc = cli_emit(ctx, &out);
	goto out;
fail:
	rc = cli_fail(ctx, &err);
out:
	ts_ledger_rows_release(&rows);
	ts_ledger_release(&l);
	ts_sb_release(&out);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_ledger = {
	.name = "ledger",
	.stage = STAGE_AROUND,
	.summary = "Show the experiment history and set the baseline of a workload",
	.usage = "ledger [options] list | show ID | baseline set RUN_ID | history [WORKLOAD] | check",
	.description =
		"The ledger is a SQLite database (WAL mode, safe with several writers) at --db FILE,\n"
		"$TRAINSCOPE_DB, or .trainscope/ledger.db. `trainscope ab --db` records every\n"
		"experiment there with its runs, contracts, step summaries, verdict and evidence;\n"
		"rejected candidates are kept.\n"
		"\n"
		"list: the runs. show ID: one run (N or rN) or experiment (eN) in full.\n"
		"baseline set RUN_ID: make a run the baseline of its workload. history: the\n"
		"experiments, oldest first, with their verdicts. check: SQLite's integrity check\n"
		"and the ledger's invariants; exit 1 when the file is damaged, with how to recover.\n"
		"\n"
		"list, show, history and check open the file read-only and never wait behind a\n"
		"writer. Every writer checks the file before its first write and refuses a damaged\n"
		"one (exit 2), leaving it as it was.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};

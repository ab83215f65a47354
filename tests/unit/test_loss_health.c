/*
 * Unit tests for src/logs/health.c (the one loss-health verdict) and the
 * per-phase fields of the log reader. Every log here is written by the
 * test; the expected verdicts follow from how it was written.
 */
#include <math.h>
#include <stdlib.h>
#include "harness.h"
#include <stdio.h>
#include <unistd.h>
#include "trainscope/core.h"
#include "trainscope/gate.h"
#include "trainscope/logs.h"
#include "trainscope/steps.h"

/* One Megatron line (current grammar) per 10 iterations, 10..200. */
enum { OK_LINE, NO_LOSS_GRAD_NAN, NO_LOSS, MTP_NAN, NAN_COUNT, SKIPPED_WITH_LOSS };

static void megatron_line(struct ts_sb *sb, int64_t it, int kind)
{
	ts_sb_addf(sb, " [2024-04-06 10:00:00] iteration %8lld/     200 | consumed samples: %12lld | "
		   "elapsed time per iteration (ms): %.1f | learning rate: 1.000000E-04 | "
		   "global batch size:     8 |", (long long)it, (long long)it * 8,
		   1000.0 + (double)(it % 7));
	if (kind != NO_LOSS_GRAD_NAN && kind != NO_LOSS)
		ts_sb_addf(sb, " lm loss: %.6E |", 8.0 - 0.001 * (double)it);
	if (kind == MTP_NAN)
		ts_sb_adds(sb, " mtp_1 loss: nan |");
	ts_sb_adds(sb, " loss scale: 1.0 |");
	ts_sb_adds(sb, kind == NO_LOSS_GRAD_NAN ? " grad norm: nan |" : " grad norm: 1.234 |");
	ts_sb_addf(sb, " number of skipped iterations: %3d | number of nan iterations: %3d |\n",
		   kind == SKIPPED_WITH_LOSS ? 1 : 0, kind == NAN_COUNT ? 2 : 0);
}

/* Lines with kind `bad` from iteration `from` on (or only there when once). */
static int judge_megatron(int bad, int64_t from, int once, struct ts_loss_health *h)
{
	struct ts_steplog log;
	struct ts_err err;
	struct ts_sb sb;
	int rc;

	ts_sb_init(&sb);
	for (int64_t it = 10; it <= 200; it += 10)
		megatron_line(&sb, it, it == from || (!once && it > from) ? bad : OK_LINE);
	ts_steplog_init(&log);
	ts_err_init(&err);
	rc = ts_steplog_read_mem(&log, sb.buf, sb.len, "t.log", &err);
	if (!rc)
		rc = ts_loss_health_judge(&log, h, &err);
	ts_steplog_release(&log);
	ts_sb_release(&sb);
	return rc;
}

TEST(health_loss_dropped_and_grad_nan_is_nonfinite_from_n)
{
	/* The log: lm loss disappears from 120 on, grad norm: nan,
	 * the NaN counter stays 0. Before the verdict every command said
	 * "NaN/Inf iterations: none". */
	struct ts_loss_health h;

	REQUIRE(judge_megatron(NO_LOSS_GRAD_NAN, 120, 0, &h) == 0);
	CHECK_I64(h.verdict, TS_LOSS_NONFINITE);
	CHECK_STR(ts_loss_verdict_name(h.verdict), "non-finite");
	CHECK_I64(h.cause, TS_LOSS_CAUSE_GRAD_NORM);
	CHECK_I64(h.first_bad_iteration, 120);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_GRAD_NORM].records, 9); /* 120..200 */
	CHECK_I64(h.ev[TS_LOSS_CAUSE_LOSS_DROPPED].first_iteration, 120);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_LOSS_DROPPED].records, 9);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_NAN_COUNTER].records, 0);
	REQUIRE(h.nbad == 9);
	CHECK_I64(h.bad_iterations[0], 120);
	CHECK_I64(h.bad_iterations[8], 200);
	ts_loss_health_release(&h);
}

TEST(health_loss_dropped_alone_is_missing)
{
	struct ts_loss_health h;

	REQUIRE(judge_megatron(NO_LOSS, 150, 0, &h) == 0);
	CHECK_I64(h.verdict, TS_LOSS_MISSING);
	CHECK_I64(h.cause, TS_LOSS_CAUSE_LOSS_DROPPED);
	CHECK_I64(h.first_bad_iteration, 150);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_LOSS_DROPPED].records, 6); /* 150..200 */
	CHECK_I64(h.nbad, 0);
	ts_loss_health_release(&h);
}

TEST(health_extra_loss_nan_is_nonfinite_with_its_name)
{
	struct ts_loss_health h;

	REQUIRE(judge_megatron(MTP_NAN, 70, 1, &h) == 0);
	CHECK_I64(h.verdict, TS_LOSS_NONFINITE);
	CHECK_I64(h.cause, TS_LOSS_CAUSE_EXTRA_LOSS);
	CHECK_I64(h.first_bad_iteration, 70);
	CHECK_STR(h.extra_loss, "mtp_1 loss");
	REQUIRE(h.nbad == 1);
	CHECK_I64(h.bad_iterations[0], 70);
	ts_loss_health_release(&h);
}

TEST(health_nan_counter_counts_iterations)
{
	struct ts_loss_health h;

	REQUIRE(judge_megatron(NAN_COUNT, 40, 1, &h) == 0);
	CHECK_I64(h.verdict, TS_LOSS_NONFINITE);
	CHECK_I64(h.cause, TS_LOSS_CAUSE_NAN_COUNTER);
	CHECK_I64(h.first_bad_iteration, 40);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_NAN_COUNTER].iterations, 2);
	/* one record (iteration 40, logged every 10) that counts 2 NaN
	 * iterations: 2 non-finite iterations, not 1 */
	CHECK_I64(h.nbad, 1);
	CHECK_I64(h.nbad_iterations, 2);
	ts_loss_health_release(&h);
	/* from 40 on: 17 records of 2 each; a grad-norm NaN record is 1 */
	REQUIRE(judge_megatron(NAN_COUNT, 40, 0, &h) == 0);
	CHECK_I64(h.nbad, 17);
	CHECK_I64(h.nbad_iterations, 34);
	ts_loss_health_release(&h);
	REQUIRE(judge_megatron(NO_LOSS_GRAD_NAN, 40, 1, &h) == 0);
	CHECK_I64(h.nbad_iterations, 1);
	ts_loss_health_release(&h);
}

TEST(health_interval_record_stands_for_its_interval)
{
	/* Records every 10 iterations (10..200, --log-interval 10): the
	 * record at 40 counts the NaN iterations of 31-40, so the first NaN
	 * may be any of them; the first record, 10, stands for 1-10 (the gap
	 * to its next one). Before, only 40 (10) was known. */
	struct ts_loss_health h;

	REQUIRE(judge_megatron(NAN_COUNT, 40, 1, &h) == 0);
	CHECK_I64(h.first_bad_iteration, 40);
	CHECK_I64(h.first_bad_possible, 31);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_NAN_COUNTER].first_possible, 31);
	ts_loss_health_release(&h);
	REQUIRE(judge_megatron(NAN_COUNT, 10, 1, &h) == 0);
	CHECK_I64(h.first_bad_iteration, 10);
	CHECK_I64(h.first_bad_possible, 1);
	ts_loss_health_release(&h);
	REQUIRE(judge_megatron(SKIPPED_WITH_LOSS, 30, 1, &h) == 0);
	CHECK_I64(h.first_bad_possible, TS_NO_INT);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_SKIPPED].first_possible, 21);
	ts_loss_health_release(&h);
	/* a loss that disappears from 120 on (and a NaN grad norm there) */
	REQUIRE(judge_megatron(NO_LOSS_GRAD_NAN, 120, 0, &h) == 0);
	CHECK_I64(h.first_bad_possible, 111);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_LOSS_DROPPED].first_possible, 111);
	ts_loss_health_release(&h);
}

TEST(health_skipped_is_evidence_not_a_verdict)
{
	struct ts_loss_health h;

	REQUIRE(judge_megatron(SKIPPED_WITH_LOSS, 30, 1, &h) == 0);
	CHECK_I64(h.verdict, TS_LOSS_FINITE);
	CHECK_I64(h.cause, TS_LOSS_CAUSE_NONE);
	CHECK_I64(h.first_bad_iteration, TS_NO_INT);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_SKIPPED].first_iteration, 30);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_SKIPPED].iterations, 1);
	ts_loss_health_release(&h);
}

static int judge_text(const char *text, struct ts_loss_health *h)
{
	struct ts_steplog log;
	struct ts_err err;
	int rc;

	ts_steplog_init(&log);
	ts_err_init(&err);
	rc = ts_steplog_read_mem(&log, text, strlen(text), "t.jsonl", &err);
	if (!rc)
		rc = ts_loss_health_judge(&log, h, &err);
	ts_steplog_release(&log);
	return rc;
}

TEST(health_jsonl_grad_nan_and_earlier_loss_nan)
{
	/* grad norm NaN at 3, loss NaN at 2: the earliest cause is the verdict's */
	const char *t = "{\"iteration\": 1, \"lm_loss\": 2.0, \"grad_norm\": 1.0}\n"
			"{\"iteration\": 2, \"lm_loss\": NaN, \"grad_norm\": 1.0}\n"
			"{\"iteration\": 3, \"lm_loss\": 2.0, \"grad_norm\": Infinity}\n"
			"{\"iteration\": 4, \"lm_loss\": 2.0, \"grad_norm\": 1.0, \"nan\": true}\n";
	struct ts_loss_health h;

	REQUIRE(judge_text(t, &h) == 0);
	CHECK_I64(h.verdict, TS_LOSS_NONFINITE);
	CHECK_I64(h.cause, TS_LOSS_CAUSE_LOSS);
	CHECK_I64(h.first_bad_iteration, 2);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_GRAD_NORM].first_iteration, 3);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_NAN_COUNTER].first_iteration, 4);
	REQUIRE(h.nbad == 3);
	CHECK_I64(h.bad_iterations[0], 2);
	CHECK_I64(h.bad_iterations[2], 4);
	ts_loss_health_release(&h);
}

TEST(health_rank_without_loss_is_not_a_drop)
{
	/* rank 1 never logs a loss (only the last stage computes it): finite */
	const char *t = "{\"iteration\": 1, \"rank\": 0, \"lm_loss\": 2.0}\n"
			"{\"iteration\": 1, \"rank\": 1, \"lm_loss\": null}\n"
			"{\"iteration\": 2, \"rank\": 0, \"lm_loss\": 1.9}\n"
			"{\"iteration\": 2, \"rank\": 1, \"lm_loss\": null}\n";
	struct ts_loss_health h;

	REQUIRE(judge_text(t, &h) == 0);
	CHECK_I64(h.verdict, TS_LOSS_FINITE);
	CHECK_I64(h.ev[TS_LOSS_CAUSE_LOSS_DROPPED].records, 0);
	ts_loss_health_release(&h);
}

TEST(health_jsonl_loss_turns_null_is_missing)
{
	const char *t = "{\"iteration\": 1, \"lm_loss\": 2.0}\n"
			"{\"iteration\": 2, \"lm_loss\": 1.9}\n"
			"{\"iteration\": 3, \"lm_loss\": null}\n";
	struct ts_loss_health h;

	REQUIRE(judge_text(t, &h) == 0);
	CHECK_I64(h.verdict, TS_LOSS_MISSING);
	CHECK_I64(h.cause, TS_LOSS_CAUSE_LOSS_DROPPED);
	CHECK_I64(h.first_bad_iteration, 3);
	ts_loss_health_release(&h);
}

/* 100 Megatron lines; from iteration 60 on, lines of kind `bad`. */
static int write_log(char *path, int bad)
{
	struct ts_sb sb;
	FILE *f;
	int fd = mkstemp(path), ok;

	if (fd < 0)
		return -1;
	ts_sb_init(&sb);
	for (int64_t it = 1; it <= 100; it++)
		megatron_line(&sb, it, it >= 60 ? bad : OK_LINE);
	f = fdopen(fd, "wb");
	ok = f && fwrite(sb.buf, 1, sb.len, f) == sb.len;
	if (f)
		fclose(f);
	ts_sb_release(&sb);
	return ok ? 0 : -1;
}

static int nan_inf_passed(const struct ts_ab_result *res)
{
	for (size_t i = 0; i < res->checks.n; i++)
		if (!strcmp(res->checks.v[i].name, "nan_inf"))
			return res->checks.v[i].passed;
	return -1;
}

static int validate_status(const struct ts_validate_result *v, const char *name)
{
	for (size_t i = 0; i < v->checks.n; i++)
		if (!strcmp(v->checks.v[i].name, name))
			return v->checks.v[i].status;
	return -1;
}

TEST(gate_fails_a_run_whose_loss_turns_nan_or_disappears)
{
	/* Before the one verdict, `grad norm: nan` with the loss gone passed
	 * ab's nan_inf gate (NaN grad norm read as "unknown") and a dropped
	 * loss passed both gates. */
	const int kinds[2] = { NO_LOSS_GRAD_NAN, NO_LOSS };
	char clean[] = "/tmp/ts-health-clean-XXXXXX";
	struct ts_run a;
	struct ts_err err;

	ts_err_init(&err);
	REQUIRE(write_log(clean, OK_LINE) == 0);
	ts_run_init(&a);
	REQUIRE(ts_run_load(&a, clean, NULL, &err) == 0);
	CHECK_I64(a.health.verdict, TS_LOSS_FINITE);
	for (int k = 0; k < 2; k++) {
		char bad[] = "/tmp/ts-health-bad-XXXXXX";
		struct ts_run b;
		struct ts_ab_opts o;
		struct ts_ab_result res;
		struct ts_validate_result v;

		REQUIRE(write_log(bad, kinds[k]) == 0);
		ts_run_init(&b);
		REQUIRE(ts_run_load(&b, bad, NULL, &err) == 0);
		CHECK_I64(b.health.verdict, k == 0 ? TS_LOSS_NONFINITE : TS_LOSS_MISSING);
		CHECK_I64(b.health.first_bad_iteration, 60);
		ts_ab_opts_init(&o);
		ts_ab_result_init(&res);
		REQUIRE(ts_ab_compare(&a, 1, &b, 1, &o, &res, &err) == 0);
		CHECK_I64(nan_inf_passed(&res), 0);
		CHECK(!res.correctness_passed);
		ts_ab_result_release(&res);
		ts_validate_result_init(&v);
		REQUIRE(ts_validate_run(&b, 10, 100, 0, &v, &err) == 0);
		CHECK(!v.passed);
		CHECK_I64(validate_status(&v, "loss_finite"), TS_CHECK_FAIL);
		ts_validate_result_release(&v);
		ts_run_release(&b);
		remove(bad);
	}
	ts_run_release(&a);
	remove(clean);
}

/* ----------------------------------------------------------- phases */

static int read_text(const char *text, struct ts_steplog *log)
{
	struct ts_err err;

	ts_steplog_init(log);
	ts_err_init(&err);
	return ts_steplog_read_mem(log, text, strlen(text), "t.log", &err);
}

TEST(phases_jsonl_keys)
{
	struct ts_steplog log;

	REQUIRE(read_text("{\"iteration\": 1, \"step_ms\": 10.0, \"data_ms\": 0.4, \"fwd_ms\": 3.5, "
			  "\"bwd_ms\": 5.25, \"opt_ms\": 0.75, \"comm_ms\": 0.1}\n", &log) == 0);
	REQUIRE(log.steps.n == 1);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_DATA], 400000);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_FORWARD], 3500000);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_BACKWARD], 5250000);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_OPTIMIZER], 750000);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_COMM], 100000);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_FWD_BWD], TS_NO_INT);
	ts_steplog_release(&log);
}

TEST(phases_megatron_timer_block_max_of_min_max)
{
	/* Timers follow their iteration line; the max across ranks is kept;
	 * forward-backward-send-... is a sub-timer and not kept. */
	const char *t =
		" iteration       10/     100 | elapsed time per iteration (ms): 1000.0 | "
		"number of skipped iterations:   0 | number of nan iterations:   0 |\n"
		"(min, max) time across ranks (ms):\n"
		"    forward-backward ...............................: (900.00, 950.50)\n"
		"    batch-generator ................................: (1.25, 2.50)\n"
		"    optimizer ......................................: (20.00, 25.00)\n"
		" iteration       20/     100 | elapsed time per iteration (ms): 1001.0 | "
		"number of skipped iterations:   0 | number of nan iterations:   0 |\n"
		"0: max time across ranks (ms):\n"
		"0:     forward-backward ...............................: 960.25\n"
		"0:     all-grads-sync .................................: 12.00\n";
	struct ts_steplog log;

	REQUIRE(read_text(t, &log) == 0);
	REQUIRE(log.steps.n == 2);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_FWD_BWD], 950500000);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_DATA], 2500000);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_OPTIMIZER], 25000000);
	CHECK_I64(log.steps.v[1].phase_ns[TS_PHASE_FWD_BWD], 960250000);
	CHECK_I64(log.steps.v[1].phase_ns[TS_PHASE_COMM], 12000000);
	CHECK_I64(log.steps.v[1].phase_ns[TS_PHASE_DATA], TS_NO_INT);
	ts_steplog_release(&log);
}

TEST(phases_megatron_legacy_timer_line)
{
	/* The 2020 shape of ../shared/data/logs/megatron-lm_issue60_legacy_2020.log,
	 * after a line of a build without a NaN counter (a pending record). */
	const char *t =
		" iteration        5/  120000 | elapsed time per iteration (ms): 16491.5 | "
		"learning rate: 0.000E+00 | loss scale: 268435456.0 |\n"
		"time (ms) | forward: 11716.18 | backward: 4770.37 | backward-allreduce: 195.31 | "
		"optimizer: 0.06 | batch generator: 2.61\n";
	struct ts_steplog log;

	REQUIRE(read_text(t, &log) == 0);
	REQUIRE(log.steps.n == 1);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_FORWARD], 11716180000);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_BACKWARD], 4770370000);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_COMM], 195310000);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_OPTIMIZER], 60000);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_DATA], 2610000);
	CHECK_I64(log.broken, 0);
	ts_steplog_release(&log);
}

TEST(phases_shared_legacy_2020_log)
{
	/* Line 3 of the file: "time (ms) | forward: 11716.18 | ... | batch generator: 2.61",
	 * after iteration 5; line 5: "... batch generator: 3.45" after 10. */
	DATA_OR_SKIP(path, "logs/megatron-lm_issue60_legacy_2020.log");
	struct ts_steplog log;
	struct ts_err err;

	ts_steplog_init(&log);
	ts_err_init(&err);
	REQUIRE(ts_steplog_read(&log, path, &err) == 0);
	REQUIRE(log.steps.n >= 2);
	CHECK_I64(log.steps.v[0].iteration, 5);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_FORWARD], 11716180000);
	CHECK_I64(log.steps.v[0].phase_ns[TS_PHASE_DATA], 2610000);
	CHECK_I64(log.steps.v[1].phase_ns[TS_PHASE_DATA], 3450000);
	ts_steplog_release(&log);
}

/* The one window rule (ts_record_in_window): records every 10 after
 * iteration 1 stand for 2-10, 11-20, ...; they belong to a window when
 * those iterations overlap it (hand-worked). */
TEST(record_window_membership_by_overlap)
{
	CHECK_I64(ts_record_from(TS_NO_INT, 1, 10, 0), 1);     /* iteration 1 is itself */
	CHECK_I64(ts_record_from(1, 10, 20, 0), 2);            /* after 1: 2-10 */
	CHECK_I64(ts_record_from(240, 250, 260, 0), 241);
	CHECK_I64(ts_record_from(TS_NO_INT, 30, 40, 0), 21);   /* a first record: back by the gap */
	CHECK_I64(ts_record_from(TS_NO_INT, 5, 20, 0), 1);     /* not below 1 */
	CHECK_I64(ts_record_from(TS_NO_INT, 30, TS_NO_INT, 0), 30); /* a lone record */
	/* with the series' interval (10): a hole widens no record (records to
	 * 100, then 200: 191-200), the first reaches back by it, not by the
	 * gap to the next (a hole after it), and the record after iteration 1
	 * (torchtitan's step 1, then 10) keeps 2-10 */
	CHECK_I64(ts_record_from(100, 200, 210, 10), 191);
	CHECK_I64(ts_record_from(TS_NO_INT, 30, 100, 10), 21);
	CHECK_I64(ts_record_from(TS_NO_INT, 30, TS_NO_INT, 10), 21);
	CHECK_I64(ts_record_from(1, 10, 20, 10), 2);
	CHECK_I64(ts_record_from(TS_NO_INT, 1, 10, 10), 1);
	{
		/* the interval: the most common gap (1 -> 10 is 9, then 10s),
		 * the smaller of equally common ones, 0 without two iterations */
		const int64_t a[] = { 1, 10, 20, 30, 40, 100, 110 }, b[] = { 5, 7, 9, 12, 15 };
		const int64_t c[] = { 3, 3, 3 };
		int64_t every = -1;

		CHECK_I64(ts_record_interval(a, 7, &every), 0);
		CHECK_I64(every, 10);
		CHECK_I64(ts_record_interval(b, 5, &every), 0);
		CHECK_I64(every, 2);
		CHECK_I64(ts_record_interval(c, 3, &every), 0);
		CHECK_I64(every, 0);
		CHECK_I64(ts_record_interval(a, 1, &every), 0);
		CHECK_I64(every, 0);
		/* gaps 1, 2, 3, 2: no gap in most records (a majority vote's
		 * last candidate is 3); 2 is the most common; repeated
		 * iterations (ranks) give no gap */
		const int64_t d[] = { 0, 1, 3, 6, 8 }, e[] = { 10, 10, 20, 20, 30 };
		CHECK_I64(ts_record_interval(d, 5, &every), 0);
		CHECK_I64(every, 2);
		CHECK_I64(ts_record_interval(e, 5, &every), 0);
		CHECK_I64(every, 10);
	}
	CHECK(ts_record_in_window(241, 250, 241, 249));     /* 241-250 reaches into 241:249 */
	CHECK(ts_record_in_window(241, 250, 250, 300));
	CHECK(!ts_record_in_window(241, 250, 251, 300));
	CHECK(!ts_record_in_window(231, 240, 241, 249));
	CHECK(ts_record_in_window(391, 400, 301, 391));     /* 391-400 holds 391 */
	CHECK(ts_record_in_window(TS_NO_INT, 250, 250, 250)); /* unknown: the record itself */
	CHECK(!ts_record_in_window(TS_NO_INT, 250, 241, 249));
}

/*
 * test_runmodel.c - the run model (run.h) on runs written to a temporary
 * directory, with the expected window object, identity errors and
 * warnings worked out by hand.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "trainscope/run.h"

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

/* Remove the test directory and the files the tests write into it. */
static void remove_dir(const char *dir)
{
	static const char *const names[] = { "metrics_rank0.jsonl", "a.jsonl", "b.jsonl",
					     "metrics.jsonl" };
	char path[256];

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* 40 iterations of 100 ms, rank 0; iteration 20 logs a NaN loss. */
static char *nan_run(void)
{
	size_t cap = 40 * 96, n = 0;
	char *s = malloc(cap);

	for (int i = 1; s && i <= 40; i++)
		n += (size_t)snprintf(s + n, cap - n,
				      "{\"iteration\": %d, \"rank\": 0, \"step_ms\": %d, "
				      "\"lm_loss\": %s}\n", i, 100 + i % 3, i == 20 ? "NaN" : "2.5");
	return s;
}

static const struct ts_window_excl *excl(const struct ts_window_obj *w, const char *reason)
{
	for (size_t i = 0; i < w->nexcl; i++)
		if (strcmp(w->excl[i].reason, reason) == 0)
			return &w->excl[i];
	return NULL;
}

TEST(runmodel_declared_window_lists_what_it_leaves_out)
{
	/* Declared 10:40 of iterations 1..40: 31 timed steps in range, one of
	 * them (20) non-finite, so 30 steps; 1..9 before the window. */
	char dir[] = "/tmp/ts_rm_XXXXXX";
	char *paths[1] = { dir };
	char *text = nan_run();
	struct ts_runmodel rm;
	struct ts_runmodel_opts o;
	struct ts_err err;
	const struct ts_window_excl *e;

	REQUIRE(text && mkdtemp(dir));
	write_file(dir, "metrics_rank0.jsonl", text);
	ts_runmodel_init(&rm);
	ts_runmodel_opts_init(&o);
	ts_err_init(&err);
	o.steps.window_first = 10;
	o.steps.window_last = 40;
	REQUIRE(ts_runmodel_load(&rm, paths, 1, &o, 1, &err) == 0);
	CHECK_STR(rm.window.method, "declared");
	CHECK_I64(rm.window.first, 10);
	CHECK_I64(rm.window.last, 40);
	CHECK_I64(rm.window.steps, 30);
	CHECK_I64(rm.steps.win_n, 30);
	e = excl(&rm.window, "before-window");
	REQUIRE(e);
	CHECK_I64(e->first, 1);
	CHECK_I64(e->last, 9);
	CHECK_I64(e->steps, 9);
	e = excl(&rm.window, "non-finite");
	REQUIRE(e);
	CHECK_I64(e->first, 20);
	CHECK_I64(e->steps, 1);
	CHECK_I64(rm.steps.health.nbad, 1);
	CHECK_I64(rm.steps.health.verdict, TS_LOSS_NONFINITE);
	CHECK_I64(rm.steps.health.first_bad_iteration, 20);
	ts_runmodel_release(&rm);
	remove_dir(dir);
	free(text);
}

TEST(runmodel_two_series_for_one_rank_name_both_files)
{
	char dir[] = "/tmp/ts_rm_XXXXXX";
	char *paths[1] = { dir };
	char *text = nan_run();
	struct ts_runmodel rm;
	struct ts_err err;

	REQUIRE(text && mkdtemp(dir));
	write_file(dir, "a.jsonl", text);
	write_file(dir, "b.jsonl", text);
	ts_runmodel_init(&rm);
	ts_err_init(&err);
	CHECK_I64(ts_runmodel_load(&rm, paths, 1, NULL, 1, &err), TS_EUSAGE);
	CHECK(strstr(err.msg, "rank 0") && strstr(err.msg, "a.jsonl") && strstr(err.msg, "b.jsonl"));
	ts_runmodel_release(&rm);
	remove_dir(dir);
	free(text);
}

/* A JSONL log of iterations 1..6 at 500 ms, then resumed at 4 and run to
 * 12 at 100 ms, into text (cap bytes). */
static void resumed_jsonl(char *text, size_t cap)
{
	size_t n = 0;

	for (int i = 1; i <= 6; i++)
		n += (size_t)snprintf(text + n, cap - n, "{\"iteration\": %d, \"step_ms\": 500}\n", i);
	for (int i = 4; i <= 12; i++)
		n += (size_t)snprintf(text + n, cap - n, "{\"iteration\": %d, \"step_ms\": 100}\n", i);
}

TEST(runmodel_resumed_log_keeps_the_later_segment)
{
	/* 1..6 at 500 ms, then the job resumes at 4 and runs to 12 at 100 ms:
	 * the three earlier records 4..6 are replaced, 12 iterations remain,
	 * and every remaining step after iteration 3 is 100 ms. */
	char dir[] = "/tmp/ts_rm_XXXXXX";
	char *paths[1] = { dir };
	char text[2048];
	struct ts_runmodel rm;
	struct ts_err err;
	size_t resumed = 0;

	resumed_jsonl(text, sizeof(text));
	REQUIRE(mkdtemp(dir));
	write_file(dir, "metrics.jsonl", text);
	ts_runmodel_init(&rm);
	ts_err_init(&err);
	REQUIRE(ts_runmodel_load(&rm, paths, 1, NULL, 1, &err) == 0);
	CHECK_I64(rm.steps.iterations, 12);
	CHECK_I64(rm.resumed_segments, 2);
	for (size_t i = 0; i < rm.steps.n; i++)
		if (rm.steps.iter[i] >= 4)
			CHECK_NEAR(rm.steps.step_ms[i], 100, 1e-9);
	for (size_t i = 0; i < rm.warnings.v.n; i++)
		if (strcmp(rm.warnings.v.v[i].code, "resumed-log") == 0) {
			resumed++;
			CHECK_I64(rm.warnings.v.v[i].iteration, 4);
			CHECK(strstr(rm.warnings.v.v[i].message, "replaces 3 earlier") != NULL);
		}
	CHECK_I64(resumed, 1);
	ts_runmodel_release(&rm);
	remove_dir(dir);
}

/* Two ranks' logs (two files) resumed once each, at the same iteration:
 * the most-resumed log has 2 segments. Counting restarts over all ranks
 * gave 3 (a 1,024-rank console restarting once gave 1,025). */
TEST(runmodel_resumed_segments_are_per_rank)
{
	char dir[] = "/tmp/ts_rm_XXXXXX";
	char *paths[1] = { dir };
	char text[2048];
	struct ts_runmodel rm;
	struct ts_err err;

	REQUIRE(mkdtemp(dir));
	for (int f = 0; f < 2; f++) {
		char name[32];
		resumed_jsonl(text, sizeof(text));
		snprintf(name, sizeof(name), "metrics-%d.jsonl", f);
		write_file(dir, name, text);
	}
	ts_runmodel_init(&rm);
	ts_err_init(&err);
	REQUIRE(ts_runmodel_load(&rm, paths, 1, NULL, 1, &err) == 0);
	CHECK_I64(rm.resumed_segments, 2);
	ts_runmodel_release(&rm);
	remove_dir(dir);
}

/* A job resumed from before a NaN: the replaced records held a NaN loss at
 * iteration 5 (and a NaN grad norm at 6), which the statistics no longer
 * see; the resumed-log warning says so (every command said "finite" with
 * no word of it). */
TEST(runmodel_resume_over_a_nan_is_said)
{
	char dir[] = "/tmp/ts_rm_XXXXXX";
	char *paths[1] = { dir };
	char text[2048];
	size_t n = 0, said = 0;
	struct ts_runmodel rm;
	struct ts_err err;

	for (int i = 1; i <= 6; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "{\"iteration\": %d, \"step_ms\": 100, \"loss\": %s, "
				      "\"grad_norm\": %s}\n", i, i == 5 ? "NaN" : "2.0",
				      i == 6 ? "NaN" : "1.0");
	for (int i = 4; i <= 12; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "{\"iteration\": %d, \"step_ms\": 100, \"loss\": 2.0}\n", i);
	REQUIRE(mkdtemp(dir));
	write_file(dir, "metrics.jsonl", text);
	ts_runmodel_init(&rm);
	ts_err_init(&err);
	REQUIRE(ts_runmodel_load(&rm, paths, 1, NULL, 1, &err) == 0);
	for (size_t i = 0; i < rm.warnings.v.n; i++)
		if (strcmp(rm.warnings.v.v[i].code, "resumed-log") == 0 &&
		    strstr(rm.warnings.v.v[i].message, "replaces 3 earlier record(s). 2 of them show a "
			   "non-finite loss or grad norm or NaN iterations, the first at iteration 5"))
			said++;
	CHECK_I64(said, 1);
	ts_runmodel_release(&rm);
	remove_dir(dir);
}

/*
 * The logged rate against the model's (ts_run_rate_compare), by hand:
 * F = 8e12 FLOPs per step on W = 8 GPUs, so a step of t ms delivers
 * 1000 / t TFLOP/s/GPU: 10 ms -> 100, 20 ms -> 50. Steps (logged, ms):
 * (101, 10) +1 %, (55, 20) +10 %, (NAN, 10) not logged, (98, 10) -2 %,
 * (120, NAN) untimed. Compared: three, |diff| 0.01 0.10 0.02, median
 * 0.02; signed -0.02 0.01 0.10, median +0.01. Model rate over them:
 * 3 F / (40 ms 1e-3 1e12 8) = 75. Logged, FLOPs over time of the four
 * logged steps ((101 10 + 55 20 + 98 10) / 40 ms; ts_tflops_delivered
 * takes the timed ones) = 77.25.
 */
TEST(run_rate_compare_by_hand)
{
	struct ts_run_rate rt;
	struct ts_run_rate_cmp c;
	const double tf[5] = { 101, 55, NAN, 98, 120 };
	const double ms[5] = { 10, 20, 10, 10, NAN };

	memset(&rt, 0, sizeof(rt));
	rt.flops.per_step = 8e12;
	rt.log_formula = TS_FORMULA_CURRENT;
	rt.log_flops = rt.flops;  /* the log counts with Megatron's formula */
	rt.gpus = 8;
	CHECK_I64(ts_run_rate_compare(&rt, tf, ms, 5, &c), 0);
	CHECK_I64((int64_t)c.nlogged, 4);
	CHECK_I64((int64_t)c.ncompared, 3);
	CHECK_NEAR(c.model_tflops, 75, 1e-9);
	CHECK_NEAR(c.diff_median, 0.02, 1e-12);
	CHECK_NEAR(c.diff_signed, 0.01, 1e-12);
	CHECK_NEAR(c.logged_tflops, 77.25, 1e-9);
	/* above the 1 % limit, but the empty model matches no older formula */
	CHECK_I64(c.formula, -1);
	/* no model FLOPs: only the logged side */
	rt.flops.per_step = rt.log_flops.per_step = 0;
	CHECK_I64(ts_run_rate_compare(&rt, tf, ms, 5, &c), 0);
	CHECK_I64((int64_t)c.nlogged, 4);
	CHECK_I64((int64_t)c.ncompared, 0);
	CHECK(isnan(c.diff_median) && isnan(c.model_tflops));
}

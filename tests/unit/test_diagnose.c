/* The diagnose rules on hand-built evidence. Each expected number is
 * worked out in the comment from the inputs of the test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"
#include "trainscope/atomic.h"
#include "trainscope/diagnose.h"
#include "trainscope/run.h"

/* A rank's record of iteration it (iterations in ascending order), and
 * the run's series as the merge over ranks makes it: the slowest record
 * of the iteration gives its step and phase times. */
static void add(struct ts_diag *d, int64_t rank, int64_t it, double step, double data, double fwd)
{
	struct ts_diag_rank_steps *r = ts_diag_rank(d, rank);
	struct ts_diag_step s = { it, step, data, fwd, NAN, NAN, 7.5, 1.0, 0, 0 };
	struct ts_diag_step *last = d->series.n ? &d->series.v[d->series.n - 1] : NULL;

	if (r)
		TS_VEC_PUSH(r->steps, s);
	if (!last || last->iteration != it)
		TS_VEC_PUSH(d->series, s);
	else if (step > last->step_ms)
		*last = s;
}

static int has(const struct ts_diag_item *v, size_t n, const char *title)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(v[i].title, title))
			return 1;
	return 0;
}

TEST(diag_data_wall_from_log)
{
	struct ts_diag d;

	ts_diag_init(&d);
	/* 20 iterations of 100 ms with 1 ms data loading, except 7 and 14:
	 * 400 ms with 300 ms data loading. Window 3..20, stalls 7 and 14. */
	for (int i = 1; i <= 20; i++)
		add(&d, 0, i, i % 7 ? 100 : 400, i % 7 ? 1 : 300, 40);
	d.steady.known = 1;
	d.steady.first = 3;
	d.steady.last = 20;
	d.steady.median_ms = 100;
	TS_VEC_PUSH(d.steady.stalls, 7);
	TS_VEC_PUSH(d.steady.stalls, 14);
	REQUIRE(ts_diag_analyse(&d) == 0);
	CHECK(d.wall_known);
	CHECK_I64(d.wall, TS_WALL_DATA);
	/* iterations 3..20: step 16*100 + 2*400 = 2400 ms, data 16*1 + 2*300 = 616 ms */
	CHECK_NEAR(d.wall_share_pct, 100.0 * 616 / 2400, 1e-9);
	CHECK_STR(d.wall_basis, "log");
	CHECK(has(d.evidence.v, d.evidence.n, "stalled iterations"));
	CHECK(has(d.advice.v, d.advice.n, "data-loader workers"));
	CHECK(has(d.findings.v, d.findings.n, "stalls"));
	CHECK(has(d.missing.v, d.missing.n, "profiler trace"));
	ts_diag_release(&d);
}

TEST(diag_data_wall_reads_the_run_series)
{
	struct ts_diag d;

	ts_diag_init(&d);
	/* two ranks; on odd iterations rank 0 takes 120 ms (40 ms loading
	 * data) and rank 1 100 ms (10 ms), on even ones the other way round:
	 * every step is its slowest rank's 120 ms with 40 ms of data, 33.3 %
	 * (one rank's own records: 500 / 2200 = 22.7 %) */
	for (int i = 1; i <= 20; i++) {
		add(&d, 0, i, i % 2 ? 120 : 100, i % 2 ? 40 : 10, 40);
		add(&d, 1, i, i % 2 ? 100 : 120, i % 2 ? 10 : 40, 40);
	}
	REQUIRE(ts_diag_analyse(&d) == 0);
	CHECK(d.wall_known);
	CHECK_I64(d.wall, TS_WALL_DATA);
	CHECK_NEAR(d.wall_share_pct, 100.0 * 40 / 120, 1e-9);
	ts_diag_release(&d);
}

TEST(diag_straggler_from_log)
{
	struct ts_diag d;

	ts_diag_init(&d);
	/* rank 0 forward 100 ms, rank 1 forward 400 ms, both 500 ms steps:
	 * the gap is 300 ms = 60 % of the step, over the 20 % threshold */
	for (int i = 1; i <= 10; i++) {
		add(&d, 0, i, 500, 0.5, 100);
		add(&d, 1, i, 500, 0.5, 400);
	}
	REQUIRE(ts_diag_analyse(&d) == 0);
	CHECK(d.wall_known);
	CHECK_I64(d.wall, TS_WALL_STRAGGLER);
	CHECK_I64(d.straggler_rank, 1);
	CHECK_NEAR(d.straggler_excess_ms, 300, 1e-9);
	CHECK_NEAR(d.wall_share_pct, 60, 1e-9);
	ts_diag_release(&d);
}

TEST(diag_unknown_without_evidence)
{
	struct ts_diag d;

	ts_diag_init(&d);
	for (int i = 1; i <= 10; i++)
		add(&d, 0, i, 100, NAN, NAN);
	REQUIRE(ts_diag_analyse(&d) == 0);
	CHECK(!d.wall_known);
	CHECK(has(d.advice.v, d.advice.n, "collect a trace first"));
	CHECK_I64(d.advice.n, 1);
	CHECK(has(d.missing.v, d.missing.n, "per-step data-loader time"));
	ts_diag_release(&d);
}

TEST(diag_advice_is_vendor_specific)
{
	struct ts_diag d;
	int musa_fa = 0, cuda_fa = 0, compile = 0;

	ts_diag_init(&d);
	REQUIRE(ts_diag_advise(&d, 1, TS_WALL_COMPUTE, TS_DIAG_VENDOR_MUSA) == 0);
	for (size_t i = 0; i < d.advice.n; i++) {
		musa_fa |= !strcmp(d.advice.v[i].title, "flash attention") &&
			   strstr(d.advice.v[i].detail, "mp_31") != NULL;
		cuda_fa |= strstr(d.advice.v[i].detail, "sm80") != NULL;
		compile |= !strcmp(d.advice.v[i].title, "torch.compile");
	}
	CHECK(musa_fa);
	CHECK(!cuda_fa);
	CHECK(!compile);
	ts_diag_release(&d);

	ts_diag_init(&d);
	REQUIRE(ts_diag_advise(&d, 1, TS_WALL_COMM, TS_DIAG_VENDOR_CUDA) == 0);
	CHECK(has(d.advice.v, d.advice.n, "NCCL settings"));
	CHECK(!has(d.advice.v, d.advice.n, "MCCL settings"));
	ts_diag_release(&d);
}

/* Does any candidate name an MoE knob? The words below appear only in the
 * MoE entries (expert parallelism, token dispatcher, grouped GEMM, router,
 * moe_* recompute and graph scopes). */
static int mentions_moe(const struct ts_diag *d)
{
	static const char *const words[] = { "MoE", "moe", "expert", "EP ", "EP-", "dispatcher",
					     "grouped", "router", "DeepEP" };
	for (size_t i = 0; i < d->advice.n; i++)
		for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
			if (strstr(d->advice.v[i].title, words[k]) ||
			    (d->advice.v[i].detail && strstr(d->advice.v[i].detail, words[k])))
				return 1;
	return 0;
}

TEST(diag_advice_moe_needs_evidence)
{
	static const enum ts_wall walls[] = { TS_WALL_COMM, TS_WALL_HOST, TS_WALL_MEMORY,
					      TS_WALL_COMPUTE, TS_WALL_DATA, TS_WALL_STRAGGLER };
	static const enum ts_vendor_kind vendors[] = { TS_DIAG_VENDOR_CUDA, TS_DIAG_VENDOR_MUSA,
						       TS_DIAG_VENDOR_ROCM, TS_DIAG_VENDOR_CPU,
						       TS_DIAG_VENDOR_UNKNOWN };
	struct ts_diag d;

	/* dense (no evidence): no MoE knob for any wall and vendor */
	for (size_t w = 0; w < sizeof(walls) / sizeof(walls[0]); w++)
		for (size_t v = 0; v < sizeof(vendors) / sizeof(vendors[0]); v++) {
			ts_diag_init(&d);
			REQUIRE(ts_diag_advise(&d, 1, walls[w], vendors[v]) == 0);
			CHECK(!mentions_moe(&d));
			CHECK(d.advice.n > 0);
			ts_diag_release(&d);
		}
	/* MoE evidence: the dispatcher and the EP overlap for CUDA comm, the
	 * fused expert kernels for host, after the dense entries */
	ts_diag_init(&d);
	d.moe_evidence = "8 experts in the model config config.json";
	REQUIRE(ts_diag_advise(&d, 1, TS_WALL_COMM, TS_DIAG_VENDOR_CUDA) == 0);
	CHECK(has(d.advice.v, d.advice.n, "NCCL settings"));
	CHECK(has(d.advice.v, d.advice.n, "MoE: token dispatcher"));
	CHECK(has(d.advice.v, d.advice.n, "MoE: expert-parallel communication overlap"));
	ts_diag_release(&d);
	ts_diag_init(&d);
	d.moe_evidence = "MoE kernel or op 'moe_permute' in t.json";
	REQUIRE(ts_diag_advise(&d, 1, TS_WALL_HOST, TS_DIAG_VENDOR_CUDA) == 0);
	CHECK(has(d.advice.v, d.advice.n, "fewer, larger kernels"));
	CHECK(has(d.advice.v, d.advice.n, "MoE: fused expert kernels"));
	CHECK(mentions_moe(&d));
	ts_diag_release(&d);
	/* MUSA has no token-dispatcher entry (DeepEP is CUDA) */
	ts_diag_init(&d);
	d.moe_evidence = "--moe";
	REQUIRE(ts_diag_advise(&d, 1, TS_WALL_COMM, TS_DIAG_VENDOR_MUSA) == 0);
	CHECK(!has(d.advice.v, d.advice.n, "MoE: token dispatcher"));
	CHECK(has(d.advice.v, d.advice.n, "MoE: expert-parallel communication overlap"));
	ts_diag_release(&d);
}

/* diagnose on a run directory takes the step records from the run model
 * (one reader): a JSONL resumed at 201 whose superseded records 201-300
 * carried 60 ms of data loading per 100 ms step keeps only the resumed
 * records (0.3 ms), so there is no data wall: 0.3 ms / 100 ms = 0.3 %
 * (its own reader had read all 500 records: data 12 %); and the step
 * reader's key spellings (step_time_ms, dataloader_ms) count. */
TEST(diag_phases_from_the_run_model)
{
	char dir[] = "/tmp/ts-diag-XXXXXX", path[64], *paths[1] = { dir };
	struct ts_sb sb;
	struct ts_err err;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/metrics.jsonl", dir);
	for (int alias = 0; alias < 2; alias++) {
		struct ts_runmodel rm;
		struct ts_diag d;
		size_t recs = 0;

		ts_sb_init(&sb);
		for (int i = 1; i <= 300; i++)
			ts_sb_addf(&sb, "{\"iteration\": %d, \"%s\": 100, \"%s\": %s, \"loss\": 2}\n",
				   i, alias ? "step_time_ms" : "step_ms", alias ? "dataloader_ms" : "data_ms",
				   i > 200 ? "60" : "0.3");
		for (int i = 201; i <= 400; i++)
			ts_sb_addf(&sb, "{\"iteration\": %d, \"%s\": 100, \"%s\": 0.3, \"loss\": 2}\n",
				   i, alias ? "step_time_ms" : "step_ms", alias ? "dataloader_ms" : "data_ms");
		ts_err_init(&err);
		REQUIRE(!sb.failed && ts_write_file_atomic(path, sb.buf, sb.len, &err) == 0);
		ts_sb_release(&sb);
		ts_runmodel_init(&rm);
		ts_diag_init(&d);
		REQUIRE(ts_runmodel_load(&rm, paths, 1, NULL, 0, &err) == 0);
		REQUIRE(ts_diag_gather(&d, &rm, &err) == 0);
		REQUIRE(ts_diag_analyse(&d) == 0);
		for (size_t k = 0; k < d.ranks.n; k++)
			recs += d.ranks.v[k].steps.n;
		CHECK_I64(recs, 400);
		CHECK(d.ranks.n == 1 && fabs(d.ranks.v[0].steps.v[0].data_ms - 0.3) < 1e-9);
		CHECK(!(d.wall_known && d.wall == TS_WALL_DATA));
		ts_diag_release(&d);
		ts_runmodel_release(&rm);
	}
	unlink(path);
	rmdir(dir);
}

/* A window of one step (a Bridge log that times iteration 20 alone) has
 * its step time in diagnose as in steps, with no CI: it said "unknown (no
 * step-time series)" while its JSON carried the steps' value. */
TEST(diag_one_step_window_has_its_time)
{
	const char *p = test_data("logs/megatron-bridge_pr841_profiling_wrapped.log");
	char *paths[1];
	struct ts_runmodel rm;
	struct ts_diag d;
	struct ts_err err;

	if (!p)
		return;
	paths[0] = (char *)p;
	ts_runmodel_init(&rm);
	ts_diag_init(&d);
	ts_err_init(&err);
	REQUIRE(ts_runmodel_load(&rm, paths, 1, NULL, 0, &err) == 0);
	REQUIRE(ts_diag_gather(&d, &rm, &err) == 0);
	REQUIRE(rm.steps.win_n == 1);
	CHECK(d.steady.known);
	CHECK_I64(d.steady.n, 1);
	CHECK_NEAR(d.steady.mean_ms, rm.steps.mean_ms, 0);
	CHECK_I64(d.steady.first, rm.steps.win_first);
	ts_diag_release(&d);
	ts_runmodel_release(&rm);
}

/* Stalls the data loader explains are a data wall even when they are rare,
 * but the share reported is the measured one: 20 steps of 100 ms (1 ms
 * data) but 7 and 14, 400 ms (300 ms data); window 3..20: data
 * 16 x 1 + 2 x 300 = 616 ms of 2400 ms is 25.7 %, above the 10 % floor
 * anyway; with 50 ms stalls (data 40 ms) the share is 16 + 2 x 40 = 96 ms
 * of 1600 + 2 x 150 = 1900 ms, 5.05 % (it said 10 %, the floor). */
TEST(diag_data_wall_share_is_measured)
{
	struct ts_diag d;

	ts_diag_init(&d);
	for (int i = 1; i <= 20; i++)
		add(&d, 0, i, i % 7 ? 100 : 150, i % 7 ? 1 : 40, 40);
	d.steady.known = 1;
	d.steady.first = 3;
	d.steady.last = 20;
	d.steady.median_ms = 100;
	TS_VEC_PUSH(d.steady.stalls, 7);
	TS_VEC_PUSH(d.steady.stalls, 14);
	REQUIRE(ts_diag_analyse(&d) == 0);
	CHECK(d.wall_known);
	CHECK_I64(d.wall, TS_WALL_DATA);
	CHECK_NEAR(d.wall_share_pct, 100.0 * 96 / 1900, 1e-9);
	ts_diag_release(&d);
}

TEST(diag_many_stalls_is_not_quadratic)
{
	struct ts_diag d;
	struct timespec t0, t1;
	double secs;

	/* 200 000 iterations, every other one a stall: a linear stall lookup per
	 * step would be 2e10 comparisons; the budget allows a sort and a
	 * binary search per step (well under a second even under ASan) */
	ts_diag_init(&d);
	for (int i = 1; i <= 200000; i++) {
		add(&d, 0, i, i % 2 ? 100 : 300, i % 2 ? 1 : 201, 40);
		if (!(i % 2))
			TS_VEC_PUSH(d.steady.stalls, i);
	}
	d.steady.known = 1;
	d.steady.first = 1;
	d.steady.last = 200000;
	d.steady.median_ms = 100;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	REQUIRE(ts_diag_analyse(&d) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(secs < 5.0);
	/* data: 100000 * 1 + 100000 * 201 = 20.2e6 ms of 40e6 ms = 50.5 % */
	CHECK_I64(d.wall, TS_WALL_DATA);
	CHECK_NEAR(d.wall_share_pct, 50.5, 1e-9);
	ts_diag_release(&d);
}

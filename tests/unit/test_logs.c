/*
 * Unit tests for src/logs/logparse.c. Expected values are read off the
 * shared log files by eye (quoted in the comments), or taken from the
 * runs' ground_truth.json, which the test reads with the JSON tokenizer
 * (not the code under test).
 */
#include <stdlib.h>
#include "harness.h"
#include "trainscope/json.h"
#include "trainscope/logs.h"

#define MiB 1048576.0

static int read_file(struct ts_steplog *log, const char *path)
{
	struct ts_err err;

	ts_steplog_init(log);
	ts_err_init(&err);
	return ts_steplog_read(log, path, &err);
}

static int read_text(struct ts_steplog *log, const char *text, struct ts_err *err)
{
	ts_steplog_init(log);
	ts_err_init(err);
	return ts_steplog_read_mem(log, text, strlen(text), "t.log", err);
}

static const struct ts_step *find_iter(const struct ts_steplog *log, int64_t it, int rank)
{
	for (size_t i = 0; i < log->steps.n; i++)
		if (log->steps.v[i].iteration == it && log->steps.v[i].rank == rank)
			return &log->steps.v[i];
	return NULL;
}

static size_t count_notes(const struct ts_steplog *log, int kind)
{
	size_t k = 0;

	for (size_t i = 0; i < log->notes.n; i++)
		k += log->notes.v[i].kind == kind;
	return k;
}

static double extra(const struct ts_steplog *log, const struct ts_step *s, const char *name)
{
	for (uint32_t k = 0; k < s->extra_n; k++) {
		const struct ts_step_extra *e = &log->extras.v[s->extra_first + k];

		if (strcmp(ts_steplog_name(log, e->name), name) == 0)
			return e->value;
	}
	return NAN;
}

TEST(logs_megatron_legacy_2020_all_skipped)
{
	/* " iteration        5/  120000 | elapsed time per iteration (ms): 16491.5 |
	 *   learning rate: 0.000E+00 | loss scale: 268435456.0 | number of skipped
	 *   iterations:   5 | number of nan iterations:   0 |" - no loss printed.
	 * "after 5 iterations memory (MB) | allocated: 10250.5693359375 | max
	 *  allocated: 12606.06201171875 | reserved: 17482.0 | max reserved: 17482.0" */
	DATA_OR_SKIP(path, "logs/megatron-lm_issue60_legacy_2020.log");
	struct ts_steplog log;
	const struct ts_step *s;

	REQUIRE(read_file(&log, path) == 0);
	CHECK_I64(log.format, TS_LOG_MEGATRON);
	CHECK_I64(log.steps.n, 2);
	s = find_iter(&log, 5, -1);
	REQUIRE(s);
	CHECK_I64(s->train_iters, 120000);
	CHECK_I64(s->step_ns, 16491500000LL);
	CHECK_NEAR(s->lr, 0, 0);
	CHECK_NEAR(s->loss_scale, 268435456.0, 0);
	CHECK_I64(s->skipped, 5);
	CHECK_I64(s->nan_iters, 0);
	CHECK(isnan(s->loss));
	CHECK(s->flags & TS_STEP_NO_LOSS);
	CHECK(!(s->flags & TS_STEP_LOSS_NONFINITE));
	s = find_iter(&log, 10, -1);
	REQUIRE(s);
	CHECK_I64(s->step_ns, 1993900000LL);
	CHECK_NEAR(s->loss_scale, 8388608.0, 0);
	REQUIRE(log.mem.n == 1);
	CHECK_I64(log.mem.v[0].rank, -1);
	CHECK_I64(log.mem.v[0].iteration, 5);
	CHECK_NEAR(log.mem.v[0].alloc, 10250.5693359375 * MiB, 1e-3);
	CHECK_NEAR(log.mem.v[0].max_alloc, 12606.06201171875 * MiB, 1e-3);
	CHECK_NEAR(log.mem.v[0].max_reserved, 17482.0 * MiB, 1e-3);
	ts_steplog_release(&log);
}

TEST(logs_bridge_wrapped_paste_is_joined)
{
	/* The PR #841 paste is hard-wrapped at ~85 columns: "global batch" /
	 * "size:   512" lost a space, "number of s" / "kipped iterations" split a
	 * word, "max alloca" / "ted: 12712.43603515625" split the memory line.
	 * Values as printed: iteration 10: 13212.7 ms, lr 3.000000E-04, lm loss
	 * 4.474437E+00, grad norm 0.704; iteration 20: 14260.3 ms, lr
	 * 2.604594E-04, lm loss 8.797448E-02, grad norm 0.170, preceded by
	 * "Step Time : 14.26s GPU utilization: 58.2TFLOP/s/GPU". The final
	 * Step Time line (line 19) has no iteration line after it. */
	DATA_OR_SKIP(path, "logs/megatron-bridge_pr841_profiling_wrapped.log");
	struct ts_steplog log;
	const struct ts_step *s;

	REQUIRE(read_file(&log, path) == 0);
	CHECK(log.formats & (1u << TS_LOG_BRIDGE));
	CHECK_I64(log.steps.n, 2);
	CHECK_I64(log.joined, 3);
	CHECK_I64(log.broken, 0);
	CHECK_I64(count_notes(&log, TS_NOTE_JOINED), 3);
	CHECK_I64(count_notes(&log, TS_NOTE_UNATTACHED), 1);
	s = find_iter(&log, 10, -1);
	REQUIRE(s);
	CHECK(s->flags & TS_STEP_JOINED);
	CHECK_I64(s->line, 1);
	CHECK_I64(s->train_iters, 50);
	CHECK_I64(s->consumed_samples, 5120);
	CHECK_I64(s->step_ns, 13212700000LL);
	CHECK_REL(s->lr, 3.0e-4, 1e-12);
	CHECK_I64(s->global_batch, 512);
	CHECK_REL(s->loss, 4.474437, 1e-12);
	CHECK_NEAR(s->loss_scale, 1.0, 0);
	CHECK_NEAR(s->grad_norm, 0.704, 1e-12);
	CHECK_I64(s->skipped, 0);
	CHECK_I64(s->nan_iters, 0);
	s = find_iter(&log, 20, -1);
	REQUIRE(s);
	CHECK_I64(s->step_ns, 14260300000LL);
	CHECK_REL(s->lr, 2.604594e-4, 1e-12);
	CHECK_REL(s->loss, 8.797448e-2, 1e-12);
	CHECK_NEAR(s->grad_norm, 0.170, 1e-12);
	CHECK_NEAR(s->tflops, 58.2, 1e-12);
	REQUIRE(log.mem.n == 1);
	CHECK_I64(log.mem.v[0].rank, 0);
	CHECK_I64(log.mem.v[0].iteration, 10);
	CHECK_NEAR(log.mem.v[0].alloc, 11908.05029296875 * MiB, 1e-3);
	CHECK_NEAR(log.mem.v[0].max_alloc, 12712.43603515625 * MiB, 1e-3);
	CHECK_NEAR(log.mem.v[0].reserved, 12954.0 * MiB, 1e-3);
	ts_steplog_release(&log);
}

TEST(logs_bridge_step_time_line_alone)
{
	/* "Step Time : 12.78s GPU utilization: 528.1 TFLOP/s/GPU" */
	DATA_OR_SKIP(path, "logs/megatron-bridge_pr388_steptime.log");
	struct ts_steplog log;

	REQUIRE(read_file(&log, path) == 0);
	CHECK_I64(log.format, TS_LOG_BRIDGE);
	REQUIRE(log.steps.n == 1);
	CHECK_I64(log.steps.v[0].step_ns, 12780000000LL);
	CHECK_NEAR(log.steps.v[0].tflops, 528.1, 1e-12);
	CHECK(log.steps.v[0].flags & TS_STEP_ORDINAL);
	ts_steplog_release(&log);
}

/* A step time printed as zero is shorter than its print resolves: Bridge's
 * "Step Time : 0.00s" (%.2f s: under 5 ms), DeepSpeed's pipeline engine's
 * "iter time (s): 0.000" (0.5 ms) and Megatron's "elapsed time per
 * iteration (ms): 0.0" (0.05 ms). The record stays, untimed, and is
 * counted with the first one's line, iteration and resolution; a value
 * just above zero is kept as printed. Before: 0 ms steps, none counted. */
TEST(logs_step_time_printed_zero_is_unknown)
{
	static const char bridge[] =
		"Step Time : 0.81s GPU utilization: 100.0 TFLOP/s/GPU\n"
		"Step Time : 0.00s GPU utilization: 100.0 TFLOP/s/GPU\n"
		"Step Time : 0.01s GPU utilization: 100.0 TFLOP/s/GPU\n";
	static const char pipe[] =
		"steps: 10 loss: 2.2900 iter time (s): 0.800 samples/sec: 80.000\n"
		"steps: 20 loss: 2.2800 iter time (s): 0.000 samples/sec: 6400000.000\n"
		"steps: 30 loss: 2.2700 iter time (s): 0.000 samples/sec: 640000.000\n"
		"steps: 40 loss: 2.2600 iter time (s): 0.001 samples/sec: 64000.000\n";
	static const char meg[] =
		" iteration       10/     300 | consumed samples:          640 | elapsed time per "
		"iteration (ms): 0.0 | learning rate: 4.990E-05 | global batch size:    64 | lm loss: "
		"2.300000E+00 | loss scale: 8192.0 | number of skipped iterations:   0 | number of nan "
		"iterations:   0 |\n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, bridge, &err) == 0);
	REQUIRE(log.steps.n == 3);
	CHECK_I64(log.steps.v[0].step_ns, 810000000LL);
	CHECK_I64(log.steps.v[1].step_ns, TS_NO_INT);
	CHECK_I64(log.steps.v[2].step_ns, 10000000LL);
	CHECK_I64((int64_t)log.zero_steptimes, 1);
	CHECK_I64(log.zero_line, 2);
	CHECK_I64(log.zero_iteration, 2);
	CHECK_NEAR(log.zero_res_ms, 5.0, 1e-12);
	ts_steplog_release(&log);

	REQUIRE(read_text(&log, pipe, &err) == 0);
	REQUIRE(log.steps.n == 4);
	CHECK_I64(log.steps.v[1].step_ns, TS_NO_INT);
	CHECK_REL(log.steps.v[1].loss, 2.28, 1e-12);
	CHECK_I64(log.steps.v[2].step_ns, TS_NO_INT);
	CHECK_I64(log.steps.v[3].step_ns, 1000000LL);
	CHECK_I64((int64_t)log.zero_steptimes, 2);
	CHECK_I64(log.zero_line, 2);
	CHECK_I64(log.zero_iteration, 20);
	CHECK_NEAR(log.zero_res_ms, 0.5, 1e-12);
	ts_steplog_release(&log);

	REQUIRE(read_text(&log, meg, &err) == 0);
	REQUIRE(log.steps.n == 1);
	CHECK_I64(log.steps.v[0].step_ns, TS_NO_INT);
	CHECK_REL(log.steps.v[0].loss, 2.3, 1e-12);
	CHECK_I64((int64_t)log.zero_steptimes, 1);
	CHECK_I64(log.zero_iteration, 10);
	CHECK_NEAR(log.zero_res_ms, 0.05, 1e-12);
	ts_steplog_release(&log);
}

/* The one rule (push_step): a step time of zero from any reader is none
 * and counted with its resolution (NeMo 2 "%.2f" s: 5 ms; a JSONL full
 * float: 0; two torchtitan ms stamps alike over 1 step: 1 ms); a negative
 * one, printed or a clock stepping back between two stamps, is none and
 * an ignored value of kind negative. */
TEST(logs_step_time_zero_or_negative_one_rule)
{
	static const char nemo2[] =
		"Training epoch 0, iteration 0/9 | lr: 1e-05 | global_batch_size: 8 | global_step: 1 | "
		"reduced_train_loss: 2.3 | train_step_timing in s: 0.00 | consumed_samples: 8\n";
	static const char jsonl[] =
		"{\"iteration\": 1, \"loss\": 2.3, \"step_ms\": 812}\n"
		"{\"iteration\": 2, \"loss\": 2.2, \"step_ms\": 0}\n"
		"{\"iteration\": 3, \"loss\": 2.1, \"step_ms\": -0.0}\n";
	/* steps 1..3 at 0.8 s, 0.8 s (stamp alike: 0 ms), then 1 s earlier */
	static const char titan[] =
		"[titan] 2025-03-10 20:05:00,000 - root - INFO - step:  1  loss:  8.9900  "
		"memory: 42.22GiB(44.44%)  tps: 6,826  mfu: 39.97%\n"
		"[titan] 2025-03-10 20:05:00,800 - root - INFO - step:  2  loss:  8.9800  "
		"memory: 42.22GiB(44.44%)  tps: 6,826  mfu: 39.97%\n"
		"[titan] 2025-03-10 20:05:00,800 - root - INFO - step:  3  loss:  8.9700  "
		"memory: 42.22GiB(44.44%)  tps: 6,826  mfu: 39.97%\n"
		"[titan] 2025-03-10 20:04:59,800 - root - INFO - step:  4  loss:  8.9600  "
		"memory: 42.22GiB(44.44%)  tps: 6,826  mfu: 39.97%\n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, nemo2, &err) == 0);
	REQUIRE(log.steps.n == 1);
	CHECK_I64(log.steps.v[0].step_ns, TS_NO_INT);
	CHECK_REL(log.steps.v[0].loss, 2.3, 1e-12);
	CHECK_I64((int64_t)log.zero_steptimes, 1);
	CHECK_NEAR(log.zero_res_ms, 5.0, 1e-12);
	ts_steplog_release(&log);

	REQUIRE(read_text(&log, jsonl, &err) == 0);
	REQUIRE(log.steps.n == 3);
	CHECK_I64(log.steps.v[0].step_ns, 812000000LL);
	CHECK_I64(log.steps.v[1].step_ns, TS_NO_INT);
	CHECK_I64(log.steps.v[2].step_ns, TS_NO_INT);
	CHECK(isnan(log.steps.v[1].overhead_ns));
	CHECK_I64((int64_t)log.zero_steptimes, 2);
	CHECK_I64(log.zero_iteration, 2);
	CHECK_NEAR(log.zero_res_ms, 0.0, 0.0);
	ts_steplog_release(&log);

	REQUIRE(read_text(&log, titan, &err) == 0);
	REQUIRE(log.steps.n == 4);
	CHECK_I64(log.steps.v[0].step_ns, TS_NO_INT);
	CHECK_I64(log.steps.v[1].step_ns, 800000000LL);
	CHECK_I64(log.steps.v[2].step_ns, TS_NO_INT);
	CHECK_I64(log.steps.v[3].step_ns, TS_NO_INT);
	CHECK_I64((int64_t)log.zero_steptimes, 1);
	CHECK_I64(log.zero_iteration, 3);
	CHECK_NEAR(log.zero_res_ms, 1.0, 1e-12);
	CHECK_I64((int64_t)log.ignored[TS_IGN_NEGATIVE], 1);
	ts_steplog_release(&log);
}

TEST(logs_nemo2_lightning_line)
{
	/* " 0: Training epoch 0, iteration 8/29 | lr: 5.389e-06 | global_batch_size:
	 *  512 | global_step: 8 | max_memory_reserved: 57466159104 |
	 *  max_memory_allocated: 53930270720 | reduced_train_loss: 10.22 |
	 *  train_step_timing in s: 27.01 | consumed_samples: 4608 |
	 *  TFLOPS_per_GPU: 48.58"; iteration 11: reserved 57675874304, loss 9.924,
	 *  26.93 s, 85.8 TFLOP/s. Blank " 0: " lines in between. */
	DATA_OR_SKIP(path, "logs/nemo2_issue14850_qwen3_30b_a3b.log");
	struct ts_steplog log;
	const struct ts_step *s;

	REQUIRE(read_file(&log, path) == 0);
	CHECK_I64(log.format, TS_LOG_NEMO2);
	CHECK_I64(log.steps.n, 4);
	s = find_iter(&log, 8, 0);
	REQUIRE(s);
	CHECK_I64(s->train_iters, 29);
	CHECK_REL(s->lr, 5.389e-06, 1e-12);
	CHECK_I64(s->global_batch, 512);
	CHECK_NEAR(s->mem_max_reserved_bytes, 57466159104.0, 0);
	CHECK_NEAR(s->mem_max_alloc_bytes, 53930270720.0, 0);
	CHECK_NEAR(s->loss, 10.22, 1e-12);
	CHECK_I64(s->step_ns, 27010000000LL);
	CHECK_I64(s->consumed_samples, 4608);
	CHECK_NEAR(s->tflops, 48.58, 1e-12);
	s = find_iter(&log, 11, 0);
	REQUIRE(s);
	CHECK_NEAR(s->mem_max_reserved_bytes, 57675874304.0, 0);
	CHECK_NEAR(s->loss, 9.924, 1e-12);
	CHECK_I64(s->step_ns, 26930000000LL);
	CHECK_NEAR(s->tflops, 85.8, 1e-12);
	ts_steplog_release(&log);
}

/* NeMo 2 over several epochs: "iteration i/N" starts again at 0 in each
 * epoch, global_step goes on (epochs of 3 steps: global steps 0-8). The
 * iterations were the in-epoch counter, so epochs 1 and 2 read as two
 * resumes and only the last epoch was kept, a NaN loss of epoch 0 lost. */
TEST(logs_nemo2_epochs_use_global_step)
{
	struct ts_sb sb;
	struct ts_steplog log;
	struct ts_err err;
	const struct ts_step *s;

	ts_sb_init(&sb);
	for (int g = 0; g < 9; g++)
		ts_sb_addf(&sb, "Training epoch %d, iteration %d/2 | lr: 1e-05 | global_batch_size: 256 | "
			   "global_step: %d | reduced_train_loss: %s | train_step_timing in s: 2.0%d | "
			   "consumed_samples: %d\n", g / 3, g % 3, g, g == 1 ? "nan" : "2.5", g,
			   256 * (g + 1));
	REQUIRE(read_text(&log, sb.buf, &err) == 0);
	CHECK_I64(log.format, TS_LOG_NEMO2);
	CHECK_I64(log.steps.n, 9);
	for (int g = 0; g < 9; g++) {
		s = find_iter(&log, g, -1);
		REQUIRE(s);
		CHECK_I64(s->step_ns, 2000000000LL + 10000000LL * g);
	}
	s = find_iter(&log, 1, -1);
	CHECK(s && (s->flags & TS_STEP_LOSS_NONFINITE));
	ts_steplog_release(&log);
	ts_sb_release(&sb);
}

/* HF Trainer with logging_steps=10 captured with its bar (2>&1): the bar
 * counts optimizer steps and is redrawn before the dict of step i is
 * written, so the dicts are iterations 10, 20, 30 (they were 1, 2, 3, and
 * a NaN at step 20 read as "iteration 2"). A data bar with a description
 * ("Map: ... 25000/25000") is not the Trainer's; a dict on a line of its
 * own takes the number after the last. */
TEST(logs_hf_dicts_take_the_bars_step)
{
	static const char text[] =
		"Map: 100%|##########| 25000/25000 [00:05<00:00, 4813.79 examples/s]\n"
		"\r  4%|#   | 9/250 [00:09<04:00,  1.00it/s]\r  4%|#   | 10/250 [00:10<04:00,  1.00it/s]"
		"\r          \r{'loss': 2.5, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 0.04}\n"
		"\r  8%|#   | 20/250 [00:20<03:50,  1.00it/s]{'loss': nan, 'grad_norm': 1.0, "
		"'learning_rate': 1e-05, 'epoch': 0.08}\n"
		"{'loss': 2.3, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 0.12}\n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_I64(log.format, TS_LOG_HF);
	REQUIRE(log.steps.n == 3);
	CHECK_I64(log.steps.v[0].iteration, 10);
	CHECK_I64(log.steps.v[1].iteration, 20);
	CHECK(log.steps.v[1].flags & TS_STEP_LOSS_NONFINITE);
	CHECK_I64(log.steps.v[2].iteration, 21);
	CHECK(log.steps.v[2].flags & TS_STEP_ORDINAL);
	CHECK(!(log.steps.v[0].flags & TS_STEP_ORDINAL));
	ts_steplog_release(&log);
}

/* The same under a launcher's per-rank prefix before each redraw and the
 * dict (torchrun "[rank0]:", srun --label "0: "): the prefix is no
 * description, the dicts are 10 and 20 (they were record ordinals 1, 2);
 * a description after the prefix is still one (a record ordinal). */
TEST(logs_hf_bar_after_launcher_prefix)
{
	static const char text[] =
		"\r[rank0]:  4%|#   | 10/250 [00:10<04:00,  1.00it/s]\r[rank0]:          "
		"\r[rank0]:{'loss': 2.5, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 0.04}\n"
		"\r0:   8%|#   | 20/250 [00:20<03:50,  1.00it/s]{'loss': 2.4, 'grad_norm': 1.0, "
		"'learning_rate': 1e-05, 'epoch': 0.08}\n"
		"\r[rank0]:Map:  12%|#   | 30/250 [00:30<03:40,  1.00it/s]"
		"\r[rank0]:{'loss': 2.3, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 0.12}\n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_I64(log.format, TS_LOG_HF);
	REQUIRE(log.steps.n == 3);
	CHECK_I64(log.steps.v[0].iteration, 10);
	CHECK_I64(log.steps.v[1].iteration, 20);
	CHECK(!(log.steps.v[1].flags & TS_STEP_ORDINAL));
	CHECK_I64(log.steps.v[2].iteration, 21);
	CHECK(log.steps.v[2].flags & TS_STEP_ORDINAL);
	ts_steplog_release(&log);
}

TEST(logs_hf_trainer_dicts)
{
	/* first: {'loss': 2.119, 'grad_norm': 37.657958984375, 'learning_rate':
	 * 4.5833333333333334e-05, 'epoch': 0.25}; last: {'loss': 1.1649,
	 * 'grad_norm': 11.211311340332031, 'learning_rate': 2.5e-05, 'epoch': 1.5} */
	DATA_OR_SKIP(path, "logs/hf_trainer_transformers_pr35207.log");
	struct ts_steplog log;

	REQUIRE(read_file(&log, path) == 0);
	CHECK_I64(log.format, TS_LOG_HF);
	REQUIRE(log.steps.n == 6);
	CHECK_I64(log.steps.v[0].iteration, 1);
	CHECK(log.steps.v[0].flags & TS_STEP_ORDINAL);
	CHECK_NEAR(log.steps.v[0].loss, 2.119, 1e-12);
	CHECK_NEAR(log.steps.v[0].grad_norm, 37.657958984375, 1e-12);
	CHECK_REL(log.steps.v[0].lr, 4.5833333333333334e-05, 1e-15);
	CHECK_I64(log.steps.v[0].step_ns, TS_NO_INT);
	CHECK_NEAR(log.steps.v[5].loss, 1.1649, 1e-12);
	CHECK_NEAR(log.steps.v[5].grad_norm, 11.211311340332031, 1e-12);
	CHECK_REL(log.steps.v[5].lr, 2.5e-05, 1e-15);
	ts_steplog_release(&log);
}

/* An HF Trainer log cut inside its last dict ("{'loss': 1." with no line
 * end): a cut input (truncated-log), as a cut Megatron line is; it said
 * nothing. The same dict whole is a record. */
TEST(logs_hf_cut_last_dict)
{
	const char *text = "{'loss': 2.119, 'grad_norm': 37.6, 'learning_rate': 4.5e-05, 'epoch': 0.25}\n"
			   "{'loss': 1.";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_I64(log.steps.n, 1);
	CHECK_I64(count_notes(&log, TS_NOTE_TRUNCATED), 1);
	if (log.notes.n)
		CHECK_I64(log.notes.v[0].line, 2);
	ts_steplog_release(&log);
	text = "{'loss': 2.119, 'epoch': 0.25}\n{'loss': 1.5, 'epoch': 0.5}";
	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_I64(log.steps.n, 2);
	CHECK_I64(count_notes(&log, TS_NOTE_TRUNCATED), 0);
	ts_steplog_release(&log);
}

TEST(logs_hf_dicts_under_a_progress_bar)
{
	/* A log captured with 2>&1: tqdm redraws its bar after '\r', and
	 * tqdm.write() (HF's ProgressCallback) clears it with '\r', blanks,
	 * '\r' before the dict; a print() lands right after the bar's ']'.
	 * Values in Python wrappers: grad_norm as a tensor, NumPy 2 reprs. */
	const char *text =
		"\r  0%|          | 0/30 [00:00<?, ?it/s]\r  3%|3         | 1/30 [00:01<00:40,"
		"  1.40s/it]\r                                        \r{'loss': 2.119, "
		"'grad_norm': 37.66, 'learning_rate': 4.5e-05, 'epoch': 0.25}\n"
		"\r  7%|6         | 2/30 [00:02<00:39,  1.40s/it]{'loss': 1.6462, 'grad_norm': "
		"tensor(17.55, device='cuda:0'), 'learning_rate': 4.2e-05, 'epoch': 0.5}\n"
		"\r 10%|#         | 3/30 [00:04<00:37,  1.40s/it]\r          \r{'loss': "
		"np.float64(nan), 'grad_norm': np.float32(14.87), 'learning_rate': 3.75e-05, "
		"'epoch': np.float64(0.75)}   \n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_I64(log.format, TS_LOG_HF);
	REQUIRE(log.steps.n == 3);
	CHECK_NEAR(log.steps.v[0].loss, 2.119, 1e-12);
	CHECK_NEAR(log.steps.v[0].grad_norm, 37.66, 1e-12);
	CHECK_NEAR(log.steps.v[1].loss, 1.6462, 1e-12);
	CHECK_NEAR(log.steps.v[1].grad_norm, 17.55, 1e-12);
	CHECK_REL(log.steps.v[1].lr, 4.2e-05, 1e-15);
	CHECK(isnan(log.steps.v[2].loss));
	CHECK(log.steps.v[2].flags & TS_STEP_LOSS_NONFINITE);
	CHECK_NEAR(log.steps.v[2].grad_norm, 14.87, 1e-12);
	CHECK_I64(log.steps.v[2].iteration, 3);
	ts_steplog_release(&log);
}

TEST(logs_lightning_bar_redraws)
{
	/* NeMo 1: Lightning's bar, redrawn after '\r' on one physical line
	 * for the whole epoch, its postfix carrying the step's metrics. The
	 * redraw of global step 1 is repeated (the later one stands); the
	 * validation bar and a bar without global_step are no records; a
	 * global step in exponent form (3 significant digits) with nothing to
	 * pin it (the one redraw of a new epoch's bar) is no record, counted.
	 * Expected: steps 0, 1, 2 with the times written, one record for step
	 * 1 (its redraw replaces it), one record without an iteration. */
	const char *text =
		"Epoch 0: :   0%|          | 1/300 [00:02<11:30, v_num=, reduced_train_loss=10.60, "
		"global_step=0.000, consumed_samples=256.0, train_step_timing in s=2.910]"
		"\rEpoch 0: :   1%|          | 2/300 [00:05<11:29, v_num=, reduced_train_loss=10.50, "
		"global_step=1.000, consumed_samples=512.0, train_step_timing in s=2.930]"
		"\rEpoch 0: :   1%|          | 2/300 [00:05<11:29, v_num=, reduced_train_loss=10.50, "
		"global_step=1.000, consumed_samples=512.0, train_step_timing in s=2.950]"
		"\rValidation DataLoader 0:  50%|#####     | 1/2 [00:00<00:00,  5.00it/s]"
		"\rEpoch 0: :   1%|          | 3/300 [00:08<11:28, v_num=, reduced_train_loss=nan, "
		"global_step=2.000, consumed_samples=768.0, train_step_timing in s=2.890, lr=3e-5]"
		"\rEpoch 1:  67% 10/15 [02:53<01:18, 15.76s/it, loss=0.429, v_num=l1_0]"
		"\rEpoch 9:  67%|######6   | 10/15 [02:53<01:18, reduced_train_loss=1.0, "
		"global_step=1.23e+06]\n";
	struct ts_steplog log;
	struct ts_err err;
	const struct ts_step *s;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_I64(log.format, TS_LOG_LIGHTNING);
	CHECK_STR(ts_log_format_name(log.format), "lightning-bar");
	REQUIRE(log.steps.n == 3);
	s = &log.steps.v[0];
	CHECK_I64(s->iteration, 0);
	CHECK_I64(s->step_ns, 2910000000LL);
	CHECK_NEAR(s->loss, 10.60, 1e-12);
	CHECK_I64(s->consumed_samples, 256);
	CHECK_I64(log.steps.v[1].iteration, 1);
	CHECK_I64(log.steps.v[1].step_ns, 2950000000LL);
	s = &log.steps.v[2];
	CHECK_I64(s->iteration, 2);
	CHECK(isnan(s->loss));
	CHECK(s->flags & TS_STEP_LOSS_NONFINITE);
	CHECK_REL(s->lr, 3e-5, 1e-15);
	CHECK_I64(log.ignored[TS_IGN_NO_ITER], 1);
	ts_steplog_release(&log);
}

/* One redraw of NeMo 1's bar: counter i, global_step and
 * consumed_samples as Lightning prints them (tqdm's format_num, floats
 * padded to 5 characters unless in exponent form). */
static void nemo_bar(struct ts_sb *sb, long i, const char *step, const char *samples)
{
	char b[256];

	snprintf(b, sizeof(b),
		 "\rEpoch 0: :  50%%|#####     | %ld/300000 [70:01:02<70:00:00, v_num=, "
		 "reduced_train_loss=2.850, global_step=%s, consumed_samples=%s, "
		 "train_step_timing in s=1.510]", i, step, samples);
	ts_sb_add(sb, b, strlen(b));
}

TEST(logs_lightning_bar_exponent_steps)
{
	/* tqdm prints a float in '{:.3g}' form when that is shorter, so from
	 * global step 1e5 on every redraw reads like "1.51e+5". By hand
	 * ('{:.3g}' rounds half to even): 150500 -> 1.50e5 (150 even) ->
	 * "1.5e+5"; 150501-151499 -> "1.51e+5"; 151500 -> 1.52e5 (151.5 goes
	 * to the even 152) -> "1.52e+5". A run resumed at global step 150495,
	 * the bar's counter i = global step + 1: the first redraw of "1.51e+5"
	 * (counter 150502) pins global step - counter to -1, the first of
	 * "1.52e+5" (counter 150501 + 1000) pins it again 999 steps on, so
	 * the 1011 redraws are iterations 150495-151505. */
	struct ts_sb sb;
	struct ts_steplog log;
	struct ts_err err;

	ts_sb_init(&sb);
	for (long g = 150495; g <= 151505; g++)
		nemo_bar(&sb, g + 1, g <= 150500 ? "1.5e+5" : g < 151500 ? "1.51e+5" : "1.52e+5",
			 "3.85e+7");
	ts_sb_addc(&sb, '\n');
	REQUIRE(!sb.failed && read_text(&log, sb.buf, &err) == 0);
	REQUIRE(log.steps.n == 1011);
	for (size_t k = 0; k < 1011; k++) {
		CHECK_I64(log.steps.v[k].iteration, 150495 + (int64_t)k);
		CHECK_I64(log.steps.v[k].step_ns, 1510000000LL);
		CHECK_I64(log.steps.v[k].consumed_samples, TS_NO_INT);
	}
	CHECK_I64(log.ignored[TS_IGN_NO_ITER], 0);
	ts_steplog_release(&log);

	/* The same redraws cut after 151499: one rounding step only, which a
	 * bar counting micro-batches would pin the same way. Nothing is read
	 * and the error says why. */
	ts_sb_reset(&sb);
	for (long g = 150495; g < 151500; g++)
		nemo_bar(&sb, g + 1, g <= 150500 ? "1.5e+5" : "1.51e+5", "3.85e+7");
	ts_sb_addc(&sb, '\n');
	CHECK(read_text(&log, sb.buf, &err) == TS_EPARSE);
	CHECK(strstr(err.msg, "1005 progress-bar redraws") != NULL);
	ts_steplog_release(&log);

	/* Gradient accumulation, four counts a global step (counter 4 (g -
	 * 150495) + 1 .. + 4): the pin at the first "1.51e+5" (counter 25) is
	 * contradicted before any second one, so no redraw gets an
	 * iteration (all 4044 dropped) rather than a wrong one. */
	ts_sb_reset(&sb);
	for (long g = 150495; g <= 151505; g++)
		for (long k = 1; k <= 4; k++)
			nemo_bar(&sb, 4 * (g - 150495) + k,
				 g <= 150500 ? "1.5e+5" : g < 151500 ? "1.51e+5" : "1.52e+5", "3.85e+7");
	ts_sb_addc(&sb, '\n');
	CHECK(read_text(&log, sb.buf, &err) == TS_EPARSE);
	CHECK(strstr(err.msg, "4044 progress-bar redraws") != NULL);
	ts_steplog_release(&log);

	/* Between 1e4 and 1e5 the rounder counts only: 10946-10949 print
	 * "10946.0" ... ("1.09e+4" is as long), 10950-11050 print "1.1e+4".
	 * The exact ones at 10946 and 10948 (two apart) pin the offset; the
	 * others follow. A restart (the counter back to 1 with "1.1e+4":
	 * offset 10949 at least, against -1) changes nothing already read and
	 * waits again, to the end: one record without an iteration. */
	ts_sb_reset(&sb);
	nemo_bar(&sb, 10947, "10946.0", "2.802e+6");
	nemo_bar(&sb, 10948, "10947.0", "2.802e+6");
	nemo_bar(&sb, 10949, "10948.0", "2.803e+6");
	nemo_bar(&sb, 10950, "10949.0", "2.803e+6");
	for (long g = 10950; g <= 10953; g++)
		nemo_bar(&sb, g + 1, "1.1e+4", "2.8e+6");
	nemo_bar(&sb, 1, "1.1e+4", "2.8e+6");
	ts_sb_addc(&sb, '\n');
	REQUIRE(!sb.failed && read_text(&log, sb.buf, &err) == 0);
	REQUIRE(log.steps.n == 8);
	for (size_t k = 0; k < 8; k++)
		CHECK_I64(log.steps.v[k].iteration, 10946 + (int64_t)k);
	CHECK_I64(log.ignored[TS_IGN_NO_ITER], 1);
	ts_steplog_release(&log);
	ts_sb_release(&sb);
}

TEST(logs_unusable_value_counted_once_per_record)
{
	/* One infinite step time in a record is one ignored value: a record
	 * hard-wrapped in two pieces is parsed once per piece, and a JSONL
	 * record may repeat its key. Each file below has exactly one. */
	const char *wrapped =
		" [2024-04-06 10:00:01.000000] iteration        1/     200 | consumed samples:"
		"          512 | elapsed time per iteration (ms): inf | lm loss: 5.0E+00 | number of\n"
		" skipped iterations:   0 | number of nan iterations:   0 |\n"
		" [2024-04-06 10:00:02.000000] iteration        2/     200 | consumed samples:"
		"         1024 | elapsed time per iteration (ms): 1000.0 | lm loss: 5.0E+00 | number of"
		" skipped iterations:   0 | number of nan iterations:   0 |\n";
	const char *jsonl =
		"{\"iteration\": 1, \"step_ms\": -Infinity, \"step_ms\": Infinity, \"loss\": 2.0}\n"
		"{\"iteration\": 2, \"step_ms\": 100.0, \"loss\": 2.0}\n";
	const char *texts[] = { wrapped, jsonl };
	struct ts_steplog log;
	struct ts_err err;

	for (int k = 0; k < 2; k++) {
		REQUIRE(read_text(&log, texts[k], &err) == 0);
		CHECK_I64(log.steps.n, 2);
		CHECK_I64((int64_t)log.ignored[TS_IGN_INF], 1);
		CHECK_I64(log.steps.v[0].step_ns, TS_NO_INT);
		ts_steplog_release(&log);
	}
}

/* ------------------------------------------ cpu runs vs ground_truth.json */

struct gt_rec {
	int64_t iteration;
	int rank;
	double step_ms, logged_ms, loss, grad_norm, max_rss_mb;
};

/* Read every rank's records from ground_truth.json (test helper). */
static size_t read_gt(const char *path, struct gt_rec *out, size_t cap)
{
	struct ts_input in;
	struct ts_json j;
	struct ts_err err;
	size_t n = 0;
	int tok, depth_rec = -1, rank = -1;
	const char *key = NULL;
	size_t keyn = 0;
	struct gt_rec cur;

	ts_err_init(&err);
	if (ts_input_open(&in, path, &err))
		return 0;
	ts_json_init_input(&j, &in, TS_JSON_ALLOW_NAN);
	memset(&cur, 0, sizeof(cur));
	while ((tok = ts_json_next(&j, &err)) > 0) {
		if (tok == TS_JSON_KEY) {
			key = j.s;
			keyn = j.n;
			if (keyn == 7 && !memcmp(key, "records", 7))
				depth_rec = j.depth + 1;
			continue;
		}
		if (tok == TS_JSON_OBJ && j.depth == depth_rec + 1) {
			memset(&cur, 0, sizeof(cur));
			cur.rank = rank;
			cur.loss = cur.grad_norm = NAN;
		} else if (tok == TS_JSON_OBJ_END && j.depth == depth_rec) {
			if (n < cap)
				out[n++] = cur;
		} else if (tok == TS_JSON_ARR_END && j.depth == depth_rec - 1) {
			depth_rec = -1;
		} else if (tok == TS_JSON_NUM && key) {
			double v;

			ts_num_f64(j.s, j.n, &v);
			if (depth_rec < 0 && keyn == 4 && !memcmp(key, "rank", 4) && j.depth == 3)
				rank = (int)v;
			else if (depth_rec >= 0 && j.depth == depth_rec + 1) {
#define GT(name, field) if (keyn == sizeof(name) - 1 && !memcmp(key, name, keyn)) cur.field = v
				GT("iteration", iteration);
				GT("step_ms", step_ms);
				GT("logged_elapsed_ms", logged_ms);
				GT("lm_loss", loss);
				GT("grad_norm", grad_norm);
				GT("max_rss_mb", max_rss_mb);
#undef GT
			}
		}
	}
	ts_json_release(&j);
	ts_input_release(&in);
	return n;
}

static void check_run(const char *run, int ranks, int iters)
{
	char rel[256];
	const char *path;
	struct gt_rec *gt = calloc(512, sizeof(*gt));
	size_t ngt, bad = 0;
	struct ts_steplog log;

	REQUIRE(gt);
	snprintf(rel, sizeof(rel), "traces/cpu/%s/ground_truth.json", run);
	path = test_data(rel);
	if (!path) {
		free(gt);
		return;
	}
	ngt = read_gt(path, gt, 512);
	CHECK_I64(ngt, (size_t)(ranks * iters));
	/* stdout.log: the last rank's Megatron lines (print_rank_last), elapsed
	 * time printed %.1f of
	 * logged_elapsed_ms, lm loss %.6E of lm_loss, grad norm %.3f. */
	snprintf(rel, sizeof(rel), "traces/cpu/%s/stdout.log", run);
	REQUIRE(read_file(&log, test_data(rel)) == 0);
	CHECK_I64(log.steps.n, iters);
	CHECK_I64(log.format, TS_LOG_MEGATRON);
	for (size_t i = 0; i < ngt; i++) {
		const struct ts_step *s = find_iter(&log, gt[i].iteration, -1);

		if (gt[i].rank != ranks - 1)
			continue;
		if (!s || fabs((double)s->step_ns / 1e6 - gt[i].logged_ms) > 0.0501 ||
		    fabs(s->loss - gt[i].loss) > 5e-6 * gt[i].loss ||
		    fabs(s->grad_norm - gt[i].grad_norm) > 0.0005001)
			bad++;
	}
	CHECK_I64(bad, 0);
	ts_steplog_release(&log);
	/* metrics_rank<R>.jsonl: the same records exactly. */
	ts_steplog_init(&log);
	for (int r = 0; r < ranks; r++) {
		struct ts_err err;

		snprintf(rel, sizeof(rel), "traces/cpu/%s/metrics_rank%d.jsonl", run, r);
		ts_err_init(&err);
		REQUIRE(ts_steplog_read(&log, test_data(rel), &err) == 0);
	}
	CHECK_I64(log.format, TS_LOG_JSONL);
	CHECK_I64(log.steps.n, (size_t)(ranks * iters));
	bad = 0;
	for (size_t i = 0; i < ngt; i++) {
		const struct ts_step *s = find_iter(&log, gt[i].iteration, gt[i].rank);

		if (!s || llabs(s->step_ns - (int64_t)llround(gt[i].step_ms * 1e6)) > 0 ||
		    s->loss != gt[i].loss || s->grad_norm != gt[i].grad_norm ||
		    fabs(s->overhead_ns - (gt[i].logged_ms - gt[i].step_ms) * 1e6) > 1 ||
		    fabs(s->rss_max_bytes - gt[i].max_rss_mb * MiB) > 1e-3)
			bad++;
	}
	CHECK_I64(bad, 0);
	ts_steplog_release(&log);
	free(gt);
}

TEST(logs_cpu_a_dense) { check_run("a_dense", 1, 60); }
TEST(logs_cpu_a_dense_legacy113) { check_run("a_dense_legacy113", 1, 60); }
TEST(logs_cpu_b_moe) { check_run("b_moe", 1, 40); }
TEST(logs_cpu_c_ddp2) { check_run("c_ddp2", 2, 40); }
TEST(logs_cpu_d_stall) { check_run("d_stall", 1, 60); }
TEST(logs_cpu_e_straggler) { check_run("e_straggler", 2, 40); }

TEST(logs_b_moe_aux_loss_and_timestamp_prefix)
{
	/* " [2026-11-29 17:40:23] iteration        1/      40 | ... lm loss:
	 * 7.661906E+00 | load_balancing_loss: 4.013003E+00 | ..." */
	DATA_OR_SKIP(path, "traces/cpu/b_moe/stdout.log");
	struct ts_steplog log;
	const struct ts_step *s;

	REQUIRE(read_file(&log, path) == 0);
	s = find_iter(&log, 1, -1);
	REQUIRE(s);
	CHECK_REL(s->loss, 7.661906, 1e-12);
	CHECK_REL(extra(&log, s, "load_balancing_loss"), 4.013003, 1e-12);
	s = find_iter(&log, 40, -1);
	REQUIRE(s);
	CHECK_REL(extra(&log, s, "load_balancing_loss"), 4.003063, 1e-12);
	ts_steplog_release(&log);
}

/* ------------------------------------------------- synthetic dialects */

TEST(logs_primus_ansi_rank_prefix_cur_avg)
{
	/* Primus prints Megatron fields as cur/avg pairs behind a coloured
	 * "[time][rank-i/N][INFO ] [---trainer.py:L] :" prefix. */
	const char *text =
		"\x1b[32m[20260701 10:00:00][rank-7/8][INFO ] [--------trainer.py:1700] :\x1b[0m "
		"iteration      100/    1000 | consumed samples:        51200 | elapsed time "
		"per iteration (ms): 5200.5/5300.1 | throughput per GPU (TFLOP/s/GPU): "
		"410.2/400.0 | tokens per GPU (tokens/s/GPU): 12345.6/12000.0 | learning rate: "
		"3.000000E-04 | global batch size:   512 | lm loss: 2.345678E+00 | loss scale: "
		"1.0 | grad norm: 0.250 | hip mem usage/free/total/usage_ratio: "
		"150.00GB/42.00GB/192.00GB/78.12% | number of skipped iterations:   0 | number "
		"of nan iterations:   0 |\n";
	struct ts_steplog log;
	struct ts_err err;
	const struct ts_step *s;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_I64(log.format, TS_LOG_PRIMUS);
	REQUIRE(log.steps.n == 1);
	s = &log.steps.v[0];
	CHECK_I64(s->rank, 7);
	CHECK_I64(s->iteration, 100);
	CHECK_I64(s->step_ns, 5200500000LL);   /* the current value, not the average */
	CHECK_NEAR(s->tflops, 410.2, 1e-12);
	CHECK_NEAR(s->tokens_per_s_gpu, 12345.6, 1e-9);
	CHECK_NEAR(s->mem_reserved_bytes, 150.0 * 1024 * 1024 * 1024, 1);
	CHECK_REL(s->loss, 2.345678, 1e-12);
	ts_steplog_release(&log);
}

/* torchrun prints each local rank's output behind "[<role><local
 * rank>]:" and mpirun --tag-output behind "[<job>,<rank>]<stdout>:": both
 * name the rank, as "3: " (srun -l) and "[rank3]:" do. */
TEST(logs_torchrun_and_mpirun_prefixes)
{
	const char *text =
		"[default3]: [2024-10-01 12:00:00] iteration       10/     100 | elapsed time per "
		"iteration (ms): 812.3 | lm loss: 6.5E+00 | number of skipped iterations:   0 | "
		"number of nan iterations:   0 |\n"
		"[1,5]<stdout>: [2024-10-01 12:00:08] iteration       10/     100 | elapsed time per "
		"iteration (ms): 799.0 | lm loss: 6.5E+00 | number of skipped iterations:   0 | "
		"number of nan iterations:   0 |\n"
		"[trainer2]:[2024-10-01 12:00:09] iteration       10/     100 | elapsed time per "
		"iteration (ms): 801.0 | lm loss: 6.5E+00 | number of skipped iterations:   0 | "
		"number of nan iterations:   0 |\n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	REQUIRE(log.steps.n == 3);
	CHECK(find_iter(&log, 10, 3) != NULL);
	CHECK(find_iter(&log, 10, 5) != NULL);
	CHECK(find_iter(&log, 10, 2) != NULL);
	ts_steplog_release(&log);
}

/* A terminal copy hard-wraps a record at a fixed column, wherever that
 * falls: in the launcher prefix's line before the timestamp, inside the
 * timestamp, inside the word "iteration", inside its number, or on the
 * blank inside the key "lm loss". Each record below is
 * "0: [2024-04-06 10:00:0S.000000] iteration S/100 | elapsed time per
 * iteration (ms): 1000.0 | lm loss: 5.0E+00 | number of skipped
 * iterations: 0 | number of nan iterations: 0 |" (S = 1..5) cut at one such
 * place; each must read as that record, rank 0 from its prefix. */
TEST(logs_wrapped_record_heads)
{
	const char *text =
		"0: \n"
		"[2024-04-06 10:00:01.000000] iteration 1/100 | elapsed time per iteration (ms): "
		"1000.0 | lm loss: 5.0E+00 | number of skipped iterations: 0 | number of nan "
		"iterations: 0 |\n"
		"0: [2024-04-06 10:0\n"
		"0:02.000000] iteration 2/100 | elapsed time per iteration (ms): 1000.0 | lm loss: "
		"5.0E+00 | number of skipped iterations: 0 | number of nan iterations: 0 |\n"
		"0: [2024-04-06 10:00:03.000000] itera\n"
		"tion 3/100 | elapsed time per iteration (ms): 1000.0 | lm loss: 5.0E+00 | number of "
		"skipped iterations: 0 | number of nan iterations: 0 |\n"
		"0: [2024-04-06 10:00:04.000000] iteration   \n"
		"  4/100 | elapsed time per iteration (ms): 1000.0 | lm \n"
		"loss: 5.0E+00 | number of skipped iterations: 0 | number of nan iterations: 0 |\n"
		"0: [2024-04-06 10:00:05.000000] iteration 5/1\n"
		"00 | elapsed time per iteration (ms): 1000.0 | lm loss: 5.0E+00 | number of skipped "
		"iterations: 0 | number of nan iterations: 0 |\n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_I64(log.steps.n, 5);
	for (int64_t it = 1; it <= 5; it++) {
		const struct ts_step *st = find_iter(&log, it, 0);
		CHECK(st != NULL);
		if (!st)
			continue;
		CHECK_I64(st->train_iters, 100);
		CHECK_I64(st->step_ns, 1000000000LL);
		CHECK_NEAR(st->loss, 5.0, 0);
		CHECK_I64(st->extra_n, 0);
	}
	CHECK_I64(log.broken, 0);
	CHECK_I64(count_notes(&log, TS_NOTE_JOINED), 5);
	ts_steplog_release(&log);
}

/* Lines that only look like a wrapped record head are read as what they
 * are: a sentence ending "at iteration 100" (not a head: words before
 * it), a blank launcher line before a record with its own prefix, a
 * prefix-only last line. No join, no broken record, and the checkpoint
 * line still marks the step after it. */
TEST(logs_wrap_lookalikes)
{
	const char *text =
		"0:  saved checkpoint at iteration 100\n"
		"0: some other output\n"
		"0: [2024-04-06 10:00:01.000000] iteration 101/200 | elapsed time per iteration "
		"(ms): 1000.0 | lm loss: 5.0E+00 | number of skipped iterations: 0 | number of nan "
		"iterations: 0 |\n"
		"0: \n"
		"0: [2024-04-06 10:00:02.000000] iteration 102/200 | elapsed time per iteration "
		"(ms): 1000.0 | lm loss: 5.0E+00 | number of skipped iterations: 0 | number of nan "
		"iterations: 0 |\n"
		"0: \n";
	struct ts_steplog log;
	struct ts_err err;
	const struct ts_step *st;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_I64(log.steps.n, 2);
	CHECK_I64(log.broken, 0);
	CHECK_I64(log.notes.n, 0);
	st = find_iter(&log, 101, 0);
	REQUIRE(st != NULL);
	CHECK(st->flags & TS_STEP_AFTER_CHECKPOINT);
	st = find_iter(&log, 102, 0);
	REQUIRE(st != NULL);
	CHECK(!(st->flags & TS_STEP_AFTER_CHECKPOINT));
	ts_steplog_release(&log);
}

TEST(logs_mt_megatron_nan_and_prefixes)
{
	/* MT-MegatronLM (2024 grammar, decoupled lr, num zeros %.1f) behind a
	 * torchrun "[rank3]:" prefix; then a NaN loss interval behind srun "3: ". */
	const char *text =
		"[rank3]: [2024-10-01 12:00:00] iteration       10/     100 | consumed samples:"
		"          640 | elapsed time per iteration (ms): 812.3 | learning rate: 1.000000E-04"
		" | decoupled learning rate: 2.000000E-04 | global batch size:    64 | lm loss: "
		"6.543210E+00 | loss scale: 4096.0 | grad norm: 1.234 | num zeros: 12.0 | params "
		"norm: 345.678 | number of skipped iterations:   0 | number of nan iterations:   0 |\n"
		"unrelated line from another library\n"
		"3:  [2024-10-01 12:00:08] iteration       20/     100 | consumed samples:"
		"         1280 | elapsed time per iteration (ms): 799.0 | learning rate: 1.000000E-04"
		" | global batch size:    64 | lm loss: NAN | loss scale: 2048.0 | number of "
		"skipped iterations:   1 | number of nan iterations:   1 |\n";
	struct ts_steplog log;
	struct ts_err err;
	const struct ts_step *s;

	REQUIRE(read_text(&log, text, &err) == 0);
	REQUIRE(log.steps.n == 2);
	s = &log.steps.v[0];
	CHECK_I64(s->rank, 3);
	CHECK_I64(s->step_ns, 812300000LL);
	CHECK_NEAR(s->num_zeros, 12.0, 0);
	CHECK_NEAR(s->params_norm, 345.678, 1e-12);
	CHECK_REL(s->lr, 1e-4, 1e-12);
	s = &log.steps.v[1];
	CHECK_I64(s->rank, 3);
	CHECK(isnan(s->loss));
	CHECK(s->flags & TS_STEP_LOSS_NONFINITE);
	CHECK_I64(s->nan_iters, 1);
	CHECK_I64(s->skipped, 1);
	ts_steplog_release(&log);
}

TEST(logs_cut_mid_line_is_not_misparsed)
{
	/* The log ends inside "lm loss: 4.12": the record lacks its NaN counter
	 * and the final field has no terminator, so it is dropped and noted as
	 * a cut input (truncated-log), not as a broken record. */
	const char *text =
		" iteration        1/      10 | elapsed time per iteration (ms): 100.0 | lm loss: "
		"4.500000E+00 | loss scale: 1.0 | number of skipped iterations:   0 | number of "
		"nan iterations:   0 |\n"
		" iteration        2/      10 | elapsed time per iteration (ms): 90.0 | lm loss: 4.12";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_I64(log.steps.n, 1);
	CHECK_I64(log.broken, 0);
	CHECK_I64(count_notes(&log, TS_NOTE_TRUNCATED), 1);
	CHECK_I64(log.notes.v[0].line, 2);
	ts_steplog_release(&log);
}

TEST(logs_cut_inside_iteration_head_is_noted)
{
	/* Cut after " iteration 2" and after " iteration 2/  1": no field yet,
	 * so no record at all; the cut is still noted, on line 2. A last line
	 * that merely mentions iterations is not a cut record. */
	static const char *const tails[] = { " iteration        2", " iteration        2/      1",
					     "[rank0]: iteration        2/" };
	const char *head =
		" iteration        1/      10 | elapsed time per iteration (ms): 100.0 | lm loss: "
		"4.500000E+00 | loss scale: 1.0 | number of skipped iterations:   0 | number of "
		"nan iterations:   0 |\n";
	char text[512];
	struct ts_steplog log;
	struct ts_err err;

	for (int k = 0; k < 4; k++) {
		snprintf(text, sizeof(text), "%s%s", head, k < 3 ? tails[k] : "done after 1 iteration of 10");
		REQUIRE(read_text(&log, text, &err) == 0);
		CHECK_I64(log.steps.n, 1);
		CHECK_I64(count_notes(&log, TS_NOTE_TRUNCATED), k < 3);
		if (k < 3)
			CHECK_I64(log.notes.v[0].line, 2);
		ts_steplog_release(&log);
	}
}

TEST(logs_unjoinable_wrap_is_reported)
{
	/* A wrapped record whose continuation is garbage never completes. */
	const char *text =
		" iteration        1/      10 | elapsed time per iteration (ms): 100.0 | lm\n"
		"zzz qqq\n"
		" iteration        2/      10 | elapsed time per iteration (ms): 90.0 | lm loss: "
		"4.000000E+00 | number of skipped iterations:   0 | number of nan iterations:   0 |\n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_I64(log.steps.n, 1);
	CHECK_I64(log.steps.v[0].iteration, 2);
	CHECK_I64(log.broken, 1);
	ts_steplog_release(&log);
}

TEST(logs_jsonl_nan_infinity_seconds_bucket)
{
	/* Bare NaN/Infinity, step time in seconds, a seq_len bucket, a
	 * malformed line in the middle and a cut last line. */
	const char *text =
		"{\"step\": 1, \"step_time\": 1.5, \"loss\": 3.25, \"seq_len\": 4096}\n"
		"{\"step\": 2, \"step_time\": 1.25, \"loss\": NaN, \"grad_norm\": Infinity, "
		"\"seq_len\": 8192, \"nested\": {\"a\": [1, 2]}}\n"
		"{\"step\": 3, \"step_time\": oops}\n"
		"{\"step\": 4, \"step_time\": 1.0, \"loss\": 3.0, \"seq_len\": 4096}\n"
		"{\"step\": 5, \"step_ti";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_I64(log.format, TS_LOG_JSONL);
	REQUIRE(log.steps.n == 3);
	CHECK_I64(log.steps.v[0].step_ns, 1500000000LL);
	CHECK_I64(log.steps.v[0].bucket, 4096);
	CHECK(isnan(log.steps.v[1].loss));
	CHECK(log.steps.v[1].flags & TS_STEP_LOSS_NONFINITE);
	CHECK(isinf(log.steps.v[1].grad_norm));
	CHECK_I64(log.steps.v[1].bucket, 8192);
	CHECK_I64(log.steps.v[2].iteration, 4);
	CHECK_I64(count_notes(&log, TS_NOTE_BAD_JSON), 1);
	CHECK_I64(count_notes(&log, TS_NOTE_TRUNCATED), 1);
	ts_steplog_release(&log);
}

TEST(logs_hf_summary_and_eval)
{
	/* An eval dict marks the next step; the final dict is the run summary. */
	const char *text =
		"{'loss': 2.5, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 0.5}\n"
		"{'eval_loss': 2.4, 'eval_runtime': 3.0, 'epoch': 0.5}\n"
		"{'loss': 2.25, 'grad_norm': 0.9, 'learning_rate': 1e-05, 'epoch': 1.0}\n"
		"{'train_runtime': 120.5, 'train_samples_per_second': 10.0, "
		"'train_steps_per_second': 2.5, 'train_loss': 2.4, 'epoch': 1.0}\n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	REQUIRE(log.steps.n == 2);
	CHECK(!(log.steps.v[0].flags & TS_STEP_AFTER_EVAL));
	CHECK(log.steps.v[1].flags & TS_STEP_AFTER_EVAL);
	CHECK_I64(log.steps.v[1].iteration, 2);
	CHECK_NEAR(log.hf_train_runtime_s, 120.5, 0);
	CHECK_NEAR(log.hf_steps_per_s, 2.5, 0);
	ts_steplog_release(&log);
}

TEST(logs_hf_run_mean)
{
	struct ts_steplog log;
	struct ts_hf_run_mean hm;

	ts_steplog_init(&log);
	/* no summary */
	CHECK_I64(ts_hf_run_mean(&log, &hm), -1);
	CHECK(isnan(hm.mean_ms));
	/* 300 steps in 910.7 s print round(300 / 910.7, 3) = 0.329: only n = 300
	 * has n / 910.7 within 0.0005 of it (299: 0.32832, 301: 0.33051) */
	log.hf_train_runtime_s = 910.7;
	log.hf_steps_per_s = 0.329;
	CHECK_I64(ts_hf_run_mean(&log, &hm), 0);
	CHECK_I64(hm.steps, 300);
	CHECK_NEAR(hm.mean_ms, 910.7 / 300 * 1e3, 1e-9);
	CHECK_NEAR(hm.low_ms, hm.mean_ms, 0);
	/* 2000 steps in 127601.6 s print 0.016: every n from 127601.6 x 0.0155
	 * = 1977.8 to 127601.6 x 0.0165 = 2105.4 fits, so the mean is
	 * 1000 / 0.016 = 62500 ms within 1000 / 0.0165 and 1000 / 0.0155 */
	log.hf_train_runtime_s = 127601.6;
	log.hf_steps_per_s = 0.016;
	CHECK_I64(ts_hf_run_mean(&log, &hm), 0);
	CHECK_I64(hm.steps, TS_NO_INT);
	CHECK_NEAR(hm.mean_ms, 62500, 1e-9);
	CHECK_NEAR(hm.low_ms, 1e3 / 0.0165, 1e-9);
	CHECK_NEAR(hm.high_ms, 1e3 / 0.0155, 1e-9);
	/* 0.000 steps/s over 29901.2 s: 1 to 14 steps fit, a lower bound only */
	log.hf_train_runtime_s = 29901.2;
	log.hf_steps_per_s = 0;
	CHECK_I64(ts_hf_run_mean(&log, &hm), 0);
	CHECK(isnan(hm.mean_ms) && isnan(hm.high_ms));
	CHECK_NEAR(hm.low_ms, 2e6, 1e-6);
	/* 0.000 steps/s over 2500 s: one step alone (two, 0.0008, print 0.001) */
	log.hf_train_runtime_s = 2500;
	CHECK_I64(ts_hf_run_mean(&log, &hm), 0);
	CHECK_I64(hm.steps, 1);
	CHECK_NEAR(hm.mean_ms, 2.5e6, 1e-6);
	ts_steplog_release(&log);
}

TEST(logs_no_records_is_a_parse_error)
{
	struct ts_steplog log;
	struct ts_err err;

	CHECK_I64(read_text(&log, "hello\nworld\n", &err), TS_EPARSE);
	CHECK(strstr(err.msg, "no step records") != NULL);
	CHECK_STR(err.path, "t.log");
	ts_steplog_release(&log);
}

TEST(logs_theoretical_memory_and_markers)
{
	const char *text =
		"Number of parameters in transformer block in billions:  6.44\n"
		"Number of parameters in most loaded shard in billions: 0.8054\n"
		"Theoretical memory footprints: weight and optimizer=1234.56 MB, activation=789.00 "
		"MB, total=2023.56 MB\n"
		" iteration        1/      10 | elapsed time per iteration (ms): 100.0 | energy per "
		"GPU (J/iter/GPU): 123.4 | power per GPU (W/GPU): 456.7 | lm loss: "
		"4.0E+00 | number of skipped iterations:   0 | number of nan iterations:   0 |\n"
		"saving checkpoint at iteration       1 to /ckpt\n"
		" iteration        2/      10 | elapsed time per iteration (ms): 900.0 | lm loss: "
		"3.9E+00 | number of skipped iterations:   0 | number of nan iterations:   0 |\n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK_NEAR(log.theo_weight_opt_mb, 1234.56, 1e-9);
	CHECK_NEAR(log.theo_activation_mb, 789.0, 1e-9);
	CHECK_NEAR(log.theo_total_mb, 2023.56, 1e-9);
	CHECK_NEAR(log.theo_params_b, 6.44, 1e-12);
	CHECK_NEAR(log.theo_params_shard_b, 0.8054, 1e-12);
	REQUIRE(log.steps.n == 2);
	CHECK_NEAR(log.steps.v[0].energy_j, 123.4, 1e-12);
	CHECK_NEAR(log.steps.v[0].power_w, 456.7, 1e-12);
	CHECK(!(log.steps.v[0].flags & TS_STEP_AFTER_CHECKPOINT));
	CHECK(log.steps.v[1].flags & TS_STEP_AFTER_CHECKPOINT);
	ts_steplog_release(&log);
}

TEST(logs_jsonl_out_of_range_counts_are_unknown)
{
	/* Counts that no int64 holds (found by fuzz_logs) read as unknown. */
	const char *text =
		"{\"iteration\": 1, \"step_ms\": 5, \"nan\": 1e121, \"tokens\": -1e300, "
		"\"skipped\": 1e19}\n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	REQUIRE(log.steps.n == 1);
	CHECK_I64(log.steps.v[0].nan_iters, TS_NO_INT);
	CHECK_I64(log.steps.v[0].tokens, TS_NO_INT);
	CHECK_I64(log.steps.v[0].skipped, TS_NO_INT);
	CHECK_I64(log.steps.v[0].step_ns, 5000000);
	ts_steplog_release(&log);
}

TEST(logs_bridge_gb_memory_line)
{
	/* Bridge's GB line (GB = 1e9, note the upstream typo "retires"). */
	const char *text =
		"[Rank 3] (after 10 iterations) memory (GB) | mem-allocated-gigabytes: 12.345 | "
		"mem-active-gigabytes: 12.345 | mem-inactive-gigabytes: 0.5 | "
		"mem-reserved-gigabytes: 25.0 | mem-max-allocated-gigabytes: 20.5 | "
		"mem-max-active-gigabytes: 20.5 | mem-max-inactive-gigabytes: 1.0 | "
		"mem-max-reserved-gigabytes: 30.25 | mem-alloc-retires: 0 | "
		"mem-allocated-count: 12345\n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	CHECK(log.formats & (1u << TS_LOG_BRIDGE));
	REQUIRE(log.mem.n == 1);
	CHECK_I64(log.mem.v[0].rank, 3);
	CHECK_I64(log.mem.v[0].iteration, 10);
	CHECK_NEAR(log.mem.v[0].alloc, 12.345e9, 1e-3);
	CHECK_NEAR(log.mem.v[0].max_alloc, 20.5e9, 1e-3);
	CHECK_NEAR(log.mem.v[0].reserved, 25.0e9, 1e-3);
	CHECK_NEAR(log.mem.v[0].max_reserved, 30.25e9, 1e-3);
	ts_steplog_release(&log);
}

TEST(logs_integer_limits_and_many_extra_losses)
{
	/* Counts are exact up to 9e15 and unknown above (9000000000000001 is
	 * not read); a sign still reads ("+3" is 3). Six extra losses, more
	 * than the reader keeps at hand, in a different order on each line,
	 * each keep their own value. */
	const char *text =
		" iteration        1/      10 | consumed samples: 9000000000000000 | "
		"global batch size: 9000000000000001 | a_loss: 1.5 | b_loss: 2.5 | c_loss: 3.5 | "
		"d_loss: 4.5 | e_loss: 5.5 | f_loss: 6.5 | number of skipped iterations:  +3 | "
		"number of nan iterations:   0 |\n"
		" iteration        2/      10 | consumed samples:   42 | global batch size: 8 | "
		"f_loss: 16.5 | e_loss: 15.5 | d_loss: 14.5 | c_loss: 13.5 | b_loss: 12.5 | "
		"a_loss: 11.5 | number of skipped iterations:   0 | number of nan iterations:   0 |\n";
	struct ts_steplog log;
	struct ts_err err;
	const struct ts_step *s1, *s2;

	REQUIRE(read_text(&log, text, &err) == 0);
	REQUIRE(log.steps.n == 2);
	s1 = &log.steps.v[0];
	s2 = &log.steps.v[1];
	CHECK_I64(s1->consumed_samples, 9000000000000000);
	CHECK_I64(s1->global_batch, TS_NO_INT);
	CHECK_I64(s1->skipped, 3);
	CHECK_I64(s2->consumed_samples, 42);
	CHECK_I64(s2->global_batch, 8);
	CHECK_I64(s1->extra_n, 6);
	CHECK_I64(s2->extra_n, 6);
	CHECK_NEAR(extra(&log, s1, "a_loss"), 1.5, 0);
	CHECK_NEAR(extra(&log, s1, "f_loss"), 6.5, 0);
	CHECK_NEAR(extra(&log, s2, "a_loss"), 11.5, 0);
	CHECK_NEAR(extra(&log, s2, "c_loss"), 13.5, 0);
	CHECK_NEAR(extra(&log, s2, "f_loss"), 16.5, 0);
	/* No "lm loss": the first extra loss of the line is the primary. */
	CHECK_NEAR(s1->loss, 1.5, 0);
	CHECK_NEAR(s2->loss, 16.5, 0);
	ts_steplog_release(&log);
}

TEST(logs_leading_zeros_are_not_significant)
{
	/* 21 zeros before the digits: 1.2e-20 and 3.4e-21 by hand, not 0; a
	 * 20-digit integer keeps its magnitude (12345678901234567890). */
	const char *text =
		" iteration        1/      10 | lm loss: 0.000000000000000000012 | "
		"grad norm: 00000000000000000000000.0000000000000000000034 | "
		"a_loss: 12345678901234567890 |\n";
	struct ts_steplog log;
	struct ts_err err;

	REQUIRE(read_text(&log, text, &err) == 0);
	REQUIRE(log.steps.n == 1);
	CHECK_REL(log.steps.v[0].loss, 1.2e-20, 1e-15);
	CHECK_REL(log.steps.v[0].grad_norm, 3.4e-21, 1e-15);
	CHECK_REL(extra(&log, &log.steps.v[0], "a_loss"), 12345678901234567890.0, 1e-15);
	ts_steplog_release(&log);
}

TEST(logs_jsonl_start_plus_step_past_int64)
{
	/* t_start_unix 8999999999 s + step 8999999999999 ms = 1.8e19 ns, past
	 * int64 (diagnose and watch --steps overflowed adding them): the start is
	 * unknown and counted as too large; the step time stays. 1767712384 s
	 * with 250 ms is an ordinary start. */
	struct ts_steplog log;
	struct ts_err err;
	REQUIRE(read_text(&log, "{\"iteration\":1,\"step_ms\":8999999999999,\"t_start_unix\":8999999999}\n"
				"{\"iteration\":2,\"step_ms\":250,\"t_start_unix\":1767712384}\n", &err) == 0);
	const struct ts_step *a = find_iter(&log, 1, -1), *b = find_iter(&log, 2, -1);
	REQUIRE(a && b);
	CHECK_I64(a->t_start_ns, TS_NO_INT);
	CHECK_REL((double)a->step_ns, 8.999999999999e18, 1e-15);
	CHECK_I64((int64_t)log.ignored[TS_IGN_TOO_LARGE], 1);
	CHECK_I64(b->t_start_ns, INT64_C(1767712384000000000));
	CHECK_I64(b->step_ns, 250000000);
	ts_steplog_release(&log);
}

/*
 * test_diff.c - trainscope diff on hand-built traces: name normalisation,
 * families, CPU self time, step alignment (iteration, position, legacy
 * offset), rows that close, the verdicts. Expected values are worked out
 * by hand in the comments.
 */
#include <math.h>
#include <string.h>
#include "harness.h"
#include "tbuild.h"
#include "trainscope/diff.h"
#include "trainscope/gate.h"

static void norm_is(const char *in, const char *want)
{
	char buf[256];
	ts_diff_normalize(in, strlen(in), buf, sizeof(buf));
	CHECK_STR(buf, want);
}

TEST(diff_normalize_names)
{
	norm_is("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, float)",
		"vectorized_elementwise_kernel");
	norm_is("ampere_bf16_s16816gemm_128x64", "ampere_bf16_s16816gemm_128x64");
	norm_is("mudnn_gemm___mt_bfloat16", "mudnn_gemm_bf16");
	norm_is("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "nccldevkernel_allreduce_sum_f32_ring_ll");
	norm_is("aten::mm", "mm");
	norm_is("fused_kernel_42", "fused_kernel");
	norm_is("Optimizer.step#AdamW.step", "optimizer.step#adamw.step");
	norm_is("half_kernel_float16", "fp16_kernel_fp16");
}

TEST(diff_families)
{
#define FAM(n, k) ts_diff_family(n, strlen(n), k)
	CHECK_STR(FAM("aten::mm", TS_DIFF_CPU_OP), "gemm");
	CHECK_STR(FAM("aten::matmul", TS_DIFF_CPU_OP), "gemm");
	CHECK_STR(FAM("aten::masked_fill", TS_DIFF_CPU_OP), "elementwise");
	CHECK_STR(FAM("aten::topk", TS_DIFF_CPU_OP), "reduction");
	CHECK_STR(FAM("aten::_foreach_mul_", TS_DIFF_CPU_OP), "optimizer");
	CHECK_STR(FAM("gloo:all_reduce", TS_DIFF_ANNOTATION), "allreduce");
	/* the host side of a collective, and copies, are not "other"/"elementwise" */
	CHECK_STR(FAM("record_param_comms", TS_DIFF_CPU_OP), "communication");
	CHECK_STR(FAM("aten::copy_", TS_DIFF_CPU_OP), "copy");
	CHECK_STR(FAM("aten::to", TS_DIFF_CPU_OP), "copy");
	CHECK_STR(FAM("aten::topk", TS_DIFF_CPU_OP), "reduction");
	CHECK_STR(FAM("aten::t", TS_DIFF_CPU_OP), "other");
	CHECK_STR(FAM("ncclDevKernel_AllGather_RING_LL", TS_DIFF_KERNEL), "allgather");
	CHECK_STR(FAM("mcclKernel_ReduceScatter", TS_DIFF_KERNEL), "reducescatter");
	CHECK_STR(FAM("flash_fwd_kernel", TS_DIFF_KERNEL), "attention_fwd");
	CHECK_STR(FAM("flash_bwd_dq_dk_dv_loop_kernel", TS_DIFF_KERNEL), "attention_bwd");
	CHECK_STR(FAM("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", TS_DIFF_ANNOTATION),
		  "data_loader");
	CHECK_STR(FAM("Memcpy HtoD (Pageable -> Device)", TS_DIFF_MEMCPY), "memcpy");
#undef FAM
}

/* A CPU-only step: ProfilerStep#it at t0 lasting dur, with aten::mm (mm
 * us) holding aten::copy_ (copy us) and a DataLoader annotation (data us). */
static void cpu_step(struct ts_trace *t, int64_t it, int64_t t0, int64_t dur, int64_t mm,
		     int64_t copy, int64_t data)
{
	char nm[32];
	snprintf(nm, sizeof(nm), "ProfilerStep#%lld", (long long)it);
	tb_cpu(t, TS_CAT_USER_ANNOTATION, nm, t0, dur);
	tb_cpu(t, TS_CAT_USER_ANNOTATION, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
	       t0 + 1, data);
	tb_cpu(t, TS_CAT_CPU_OP, "aten::mm", t0 + 2 + data, mm);
	tb_cpu(t, TS_CAT_CPU_OP, "aten::copy_", t0 + 3 + data, copy);
}

static const struct ts_diff_row *row_named(const struct ts_diff_result *r, const char *n)
{
	for (size_t i = 0; i < r->rows.n; i++) {
		const char *x = r->rows.v[i].base_name ? r->rows.v[i].base_name : r->rows.v[i].cand_name;
		if (strcmp(x, n) == 0)
			return &r->rows.v[i];
	}
	return NULL;
}

TEST(diff_cpu_rows_close_and_self_time)
{
	struct ts_trace a, b;
	struct ts_diff_side sa, sb;
	struct ts_diff_result r;
	struct ts_err err;
	const struct ts_diff_row *mm, *cp, *idle;
	double sum = 0;

	tb_init(&a);
	tb_init(&b);
	/* baseline steps 5, 6: 1000 us, mm 400 holding copy 100, data 10 */
	cpu_step(&a, 5, 0, 1000, 400, 100, 10);
	cpu_step(&a, 6, 1000, 1000, 400, 100, 10);
	/* candidate steps 4, 5, 6: mm 600 holding copy 100 in 5 and 6 */
	cpu_step(&b, 4, 0, 1000, 400, 100, 10);
	cpu_step(&b, 5, 1000, 1200, 600, 100, 10);
	cpu_step(&b, 6, 2200, 1200, 600, 100, 10);
	ts_diff_side_init(&sa);
	ts_diff_side_init(&sb);
	ts_diff_result_init(&r);
	ts_err_init(&err);
	CHECK(ts_diff_traces(&a, &b, NULL, &sa, &sb, &r, &err) == 0);
	CHECK_STR(r.aligned_by, "iteration");
	CHECK_I64((int64_t)r.pairs.n, 2);
	CHECK_I64(r.pairs.v[0].base_iteration, 5);
	CHECK_I64(r.pairs.v[0].cand_iteration, 5);
	/* candidate step 4 is not compared */
	CHECK_I64((int64_t)r.notes.n, 1);
	CHECK_I64(r.notes.v[0].iteration, 4);
	CHECK(!r.notes.v[0].compared);
	CHECK_NEAR(r.base_mean_ns, 1000e3, 1);
	CHECK_NEAR(r.cand_mean_ns, 1200e3, 1);
	/* self time: mm 400 - 100 = 300 -> 600 - 100 = 500: +200 us */
	mm = row_named(&r, "aten::mm");
	CHECK(mm != NULL);
	CHECK_NEAR(mm->base.self_ns, 300e3, 1);
	CHECK_NEAR(mm->cand.self_ns, 500e3, 1);
	CHECK_NEAR(mm->delta_ns, 200e3, 1);
	CHECK_I64(mm->match, TS_DIFF_MATCH_EXACT);
	CHECK(mm->closes);
	cp = row_named(&r, "aten::copy_");
	CHECK(cp != NULL);
	CHECK_NEAR(cp->delta_ns, 0, 1);
	CHECK_NEAR(cp->base.count_per_step, 1, 1e-9);
	/* the idle wall row: step - ops = 1000 - 400 = 600 on both sides */
	idle = row_named(&r, "idle");
	CHECK(idle != NULL);
	CHECK_NEAR(idle->base.self_ns, 600e3, 1);
	for (size_t i = 0; i < r.rows.n; i++)
		if (r.rows.v[i].closes)
			sum += r.rows.v[i].delta_ns;
	CHECK_NEAR(sum + r.residual_ns, 200e3, 1);
	CHECK_NEAR(r.residual_ns, 0, 1);
	/* the data loader annotation: in trace's data wall, not a closing row */
	CHECK(!row_named(&r, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__")->closes);
	CHECK_NEAR(r.walls[TS_DW_DATA].base_ns, 10e3, 1);
	/* the first row is the largest move */
	CHECK_STR(r.rows.v[0].base_name, "aten::mm");
	ts_diff_result_release(&r);
	ts_diff_side_release(&sa);
	ts_diff_side_release(&sb);
	tb_release(&a);
	tb_release(&b);
}

TEST(diff_legacy_offset_and_one_step)
{
	struct ts_trace a, b;
	struct ts_diff_side sa, sb;
	struct ts_diff_result r;
	struct ts_err err;

	tb_init(&a);
	tb_init(&b);
	cpu_step(&a, 23, 0, 1000, 400, 100, 10);
	/* legacy: ProfilerStep#22 is iteration 23 */
	b.meta.legacy = 1;
	cpu_step(&b, 22, 0, 1500, 400, 100, 10);
	ts_diff_side_init(&sa);
	ts_diff_side_init(&sb);
	ts_diff_result_init(&r);
	ts_err_init(&err);
	CHECK(ts_diff_traces(&a, &b, NULL, &sa, &sb, &r, &err) == 0);
	CHECK_STR(r.aligned_by, "iteration");
	CHECK_I64((int64_t)r.pairs.n, 1);
	CHECK_I64(r.pairs.v[0].cand_iteration, 23);
	CHECK_I64(r.verdict, TS_DIFF_NO_NOISE_ESTIMATE);
	CHECK_NEAR(r.ratio, 1.5, 1e-12);
	CHECK(isnan(r.ci95_low));
	ts_diff_result_release(&r);
	ts_diff_side_release(&sa);
	ts_diff_side_release(&sb);
	tb_release(&a);
	tb_release(&b);
}

TEST(diff_position_alignment_and_normalized_match)
{
	struct ts_trace a, b;
	struct ts_diff_side sa, sb;
	struct ts_diff_result r;
	struct ts_err err;
	const struct ts_diff_row *k;

	tb_init(&a);
	tb_init(&b);
	for (int i = 0; i < 3; i++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "ProfilerStep#%d", 10 + i);
		tb_cpu(&a, TS_CAT_USER_ANNOTATION, nm, i * 1000, 1000);
		tb_cpu(&a, TS_CAT_CPU_OP, "fused_kernel_7<float>", i * 1000 + 5, 100);
		snprintf(nm, sizeof(nm), "ProfilerStep#%d", 20 + i);
		tb_cpu(&b, TS_CAT_USER_ANNOTATION, nm, i * 1000, 1000);
		tb_cpu(&b, TS_CAT_CPU_OP, "fused_kernel_9<half>", i * 1000 + 5, 150);
	}
	ts_diff_side_init(&sa);
	ts_diff_side_init(&sb);
	ts_diff_result_init(&r);
	ts_err_init(&err);
	CHECK(ts_diff_traces(&a, &b, NULL, &sa, &sb, &r, &err) == 0);
	CHECK_STR(r.aligned_by, "position");
	CHECK_I64((int64_t)r.pairs.n, 3);
	CHECK_I64(r.pairs.v[2].base_iteration, 12);
	CHECK_I64(r.pairs.v[2].cand_iteration, 22);
	/* equal steps: Welch interval of width 0 -> no difference */
	CHECK_NEAR(r.ratio, 1.0, 1e-12);
	k = row_named(&r, "fused_kernel_7<float>");
	CHECK(k != NULL);
	CHECK_I64(k->match, TS_DIFF_MATCH_NORMALIZED);
	CHECK_STR(k->cand_name, "fused_kernel_9<half>");
	CHECK_NEAR(k->delta_ns, 50e3, 1);
	CHECK_I64(r.names_added, 1);   /* exact-name sets: renamed counts as added + deleted */
	CHECK_I64(r.names_deleted, 1);
	ts_diff_result_release(&r);
	ts_diff_side_release(&sa);
	ts_diff_side_release(&sb);
	tb_release(&a);
	tb_release(&b);
}

TEST(diff_refuses_different_hardware)
{
	struct ts_trace a, b;
	struct ts_diff_side sa, sb;
	struct ts_diff_result r;
	struct ts_diff_opts o;
	struct ts_err err;
	struct ts_trace_device da, db;

	tb_init(&a);
	tb_init(&b);
	for (int i = 0; i < 4; i++) {
		cpu_step(&a, 30 + i, i * 3000, 1000 + 10 * i, 400, 100, 10);
		cpu_step(&b, 30 + i, i * 3000, 2000 + 10 * i, 400, 100, 10);
	}
	memset(&da, 0, sizeof(da));
	memset(&db, 0, sizeof(db));
	da.name = (uint32_t)ts_intern(&a.strings, "NVIDIA A100", 11);
	db.name = (uint32_t)ts_intern(&b.strings, "Tesla V100", 10);
	a.meta.devices = &da;
	a.meta.ndevices = 1;
	b.meta.devices = &db;
	b.meta.ndevices = 1;
	ts_diff_opts_init(&o);
	ts_diff_side_init(&sa);
	ts_diff_side_init(&sb);
	ts_diff_result_init(&r);
	ts_err_init(&err);
	CHECK(ts_diff_traces(&a, &b, &o, &sa, &sb, &r, &err) == 0);
	CHECK(!r.same_hardware);
	CHECK_I64(r.verdict, TS_DIFF_REFUSED_HARDWARE);
	CHECK(r.families.n > 0);
	ts_diff_result_release(&r);
	ts_diff_result_init(&r);
	o.allow_different_hardware = 1;
	CHECK(ts_diff_compare(&sa, &sb, &o, &r, &err) == 0);
	/* twice as long with a tiny spread: slower */
	CHECK_I64(r.verdict, TS_DIFF_SLOWER);
	/* means 1015 and 2015 us */
	CHECK_NEAR(r.ratio, 2015.0 / 1015.0, 1e-9);
	CHECK(r.ci95_low > 1.5);
	ts_diff_result_release(&r);
	ts_diff_side_release(&sa);
	ts_diff_side_release(&sb);
	a.meta.devices = b.meta.devices = NULL;
	a.meta.ndevices = b.meta.ndevices = 0;
	tb_release(&a);
	tb_release(&b);
}

TEST(diff_no_steps_is_one_whole_window_step)
{
	struct ts_trace a, b;
	struct ts_diff_side sa, sb;
	struct ts_diff_result r;
	struct ts_err err;

	tb_init(&a);
	tb_init(&b);
	/* no ProfilerStep: the window (first event start to last end) is the step */
	tb_cpu(&a, TS_CAT_CPU_OP, "aten::mm", 0, 100);
	tb_cpu(&b, TS_CAT_CPU_OP, "aten::mm", 0, 200);
	ts_diff_side_init(&sa);
	ts_diff_side_init(&sb);
	ts_diff_result_init(&r);
	ts_err_init(&err);
	CHECK(ts_diff_traces(&a, &b, NULL, &sa, &sb, &r, &err) == 0);
	CHECK(sa.ctx.whole_window && sb.ctx.whole_window);
	CHECK_STR(r.aligned_by, "position");
	CHECK_I64((int64_t)r.pairs.n, 1);
	CHECK_I64(r.pairs.v[0].base_iteration, TS_NONE);
	CHECK_I64(r.verdict, TS_DIFF_NO_NOISE_ESTIMATE);
	CHECK_NEAR(r.base_mean_ns, 100e3, 1);
	CHECK_NEAR(r.ratio, 2.0, 1e-12);
	CHECK_NEAR(row_named(&r, "aten::mm")->delta_ns, 100e3, 1);
	ts_diff_result_release(&r);
	ts_diff_side_release(&sa);
	ts_diff_side_release(&sb);
	tb_release(&a);
	tb_release(&b);
}

/* A CPU event on the main thread with its times in ns. */
static void cpu_ns(struct ts_trace *t, const char *name, int64_t ts_ns, int64_t dur_ns)
{
	struct ts_trace_event x;

	ts_trace_event_init(&x);
	x.ts_ns = ts_ns;
	x.dur_ns = dur_ns;
	x.name = (uint32_t)ts_intern(&t->strings, name, strlen(name));
	x.cat = TS_CAT_CPU_OP;
	x.ph = 'X';
	x.pid = 1;
	x.tid = 1;
	ts_trace_push_event(t, &x);
}

static size_t insts_named(const struct ts_diff_side *s, const char *n)
{
	size_t k = 0;
	for (size_t i = 0; i < s->inst.n; i++)
		if (!strcmp(ts_intern_str(&s->names, s->ops.v[s->inst.v[i].op].name), n))
			k++;
	return k;
}

TEST(diff_far_times_are_not_timed_and_sums_saturate)
{
	/* four nested aten::mm of 2^61 ns on one thread, no ProfilerStep: the
	 * main-thread pick sums them (4 * 2^61 = 2^63 wrapped int64); aten::far
	 * at 2^62 lasting 2^62 (its end 2^63 wrapped) is past profile's 2^61
	 * bound, not a timed event; the whole window is one step, so aten::mm's
	 * total per step is the saturated sum, INT64_MAX ns */
	struct ts_trace a;
	struct ts_diff_side sa, sb;
	struct ts_diff_result r;
	struct ts_err err;
	const int64_t lim = INT64_C(1) << 61;

	tb_init(&a);
	for (int i = 0; i < 4; i++)
		cpu_ns(&a, "aten::mm", i, lim);
	cpu_ns(&a, "aten::far", 2 * lim, 2 * lim);
	ts_diff_side_init(&sa);
	ts_diff_side_init(&sb);
	ts_diff_result_init(&r);
	ts_err_init(&err);
	CHECK_I64(ts_diff_side_build(&sa, &a, &err), 0);
	CHECK_I64((int64_t)insts_named(&sa, "aten::mm"), 4);
	CHECK_I64((int64_t)insts_named(&sa, "aten::far"), 0);
	ts_diff_side_release(&sa);
	ts_diff_side_init(&sa);
	CHECK_I64(ts_diff_traces(&a, &a, NULL, &sa, &sb, &r, &err), 0);
	const struct ts_diff_row *mm = row_named(&r, "aten::mm");
	REQUIRE(mm != NULL);
	CHECK_NEAR(mm->base.total_ns, (double)INT64_MAX, 0);
	ts_diff_result_release(&r);
	ts_diff_side_release(&sa);
	ts_diff_side_release(&sb);
	tb_release(&a);
}

/* The walls data_loader and host_gap are parts of idle, measured over
 * idle's own intervals. On GPU traces the host gap is main-thread time, not
 * GPU time: a CPU that waits while the GPU runs is no GPU idle. One step
 * [0, 1000) us; aten::mm [5, 25) holding its launch [10, 20); the kernel
 * [100, 900); a data loader span [50, 150).
 *   GPU idle = [0, 100) + [900, 1000) = 200 us.
 *   host gap (CPU side) = step \ mm \ data = [0, 5) + [25, 50) + [150, 1000)
 *     = 5 + 25 + 850 = 880 us: more than idle, not a part of it.
 *   data loader in idle = [50, 100) = 50 us (its CPU span is 100 us).
 *   host gap in idle = [0, 5) + [25, 50) + [900, 1000) = 5 + 25 + 100 = 130 us.
 *   50 + 130 = 180 <= 200: the other 20 us of idle are mm [5, 25).
 * Without the ProfilerStep the window is [5, 900) (mm start to kernel end):
 *   idle = [5, 100) = 95 us; data in idle [50, 100) = 50 us; host gap in
 *   idle [25, 50) = 25 us (CPU-side host gap [25, 50) + [150, 900) = 775). */
static void gpu_gap_trace(struct ts_trace *t, int step)
{
	if (step)
		tb_cpu(t, TS_CAT_USER_ANNOTATION, "ProfilerStep#1", 0, 1000);
	tb_cpu(t, TS_CAT_CPU_OP, "aten::mm", 5, 20);
	tb_launch(t, "cudaLaunchKernel", 10, 10, 1);
	tb_cpu(t, TS_CAT_USER_ANNOTATION, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
	       50, 100);
	tb_gpu(t, TS_CAT_KERNEL, "ampere_sgemm_128x64_nn", 7, 100, 800, 1);
}

TEST(diff_idle_parts_gpu_within_idle)
{
	for (int step = 1; step >= 0; step--) {
		struct ts_trace a;
		struct ts_diff_side sa, sb;
		struct ts_diff_result r;
		struct ts_err err;
		const struct ts_diff_wall_row *w = NULL;

		tb_init(&a);
		gpu_gap_trace(&a, step);
		ts_diff_side_init(&sa);
		ts_diff_side_init(&sb);
		ts_diff_result_init(&r);
		ts_err_init(&err);
		REQUIRE(ts_diff_traces(&a, &a, NULL, &sa, &sb, &r, &err) == 0);
		w = r.walls;
		CHECK_I64(sa.ctx.whole_window, !step);
		CHECK_NEAR(w[TS_DW_IDLE].base_ns, step ? 200e3 : 95e3, 1);
		CHECK_NEAR(w[TS_DW_DATA].base_ns, 50e3, 1);
		CHECK_NEAR(w[TS_DW_HOST_GAP].base_ns, step ? 130e3 : 25e3, 1);
		CHECK(w[TS_DW_DATA].base_ns + w[TS_DW_HOST_GAP].base_ns <= w[TS_DW_IDLE].base_ns);
		/* trace's CPU-side figures are unchanged: 880 / 775 us of host gap */
		CHECK_I64(sa.prof.steps.v[0].gap_ns, step ? 880 * US : 775 * US);
		CHECK_I64(sa.prof.steps.v[0].data_ns, 100 * US);
		ts_diff_result_release(&r);
		ts_diff_side_release(&sa);
		ts_diff_side_release(&sb);
		tb_release(&a);
	}
}

/* CPU-only: idle is the step outside main-thread ops (no collectives). One
 * step [0, 1000) us; a data loader span [0, 300) holding aten::copy_
 * [100, 300); aten::mm [300, 800).
 *   idle = 1000 - 200 - 500 = 300 us.
 *   data loader in idle = [0, 100) = 100 us (its span is 300 us).
 *   host gap in idle = [800, 1000) = 200 us; 100 + 200 = 300 = idle. */
TEST(diff_idle_parts_cpu_within_idle)
{
	struct ts_trace a;
	struct ts_diff_side sa, sb;
	struct ts_diff_result r;
	struct ts_err err;

	tb_init(&a);
	tb_cpu(&a, TS_CAT_USER_ANNOTATION, "ProfilerStep#1", 0, 1000);
	tb_cpu(&a, TS_CAT_USER_ANNOTATION, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
	       0, 300);
	tb_cpu(&a, TS_CAT_CPU_OP, "aten::copy_", 100, 200);
	tb_cpu(&a, TS_CAT_CPU_OP, "aten::mm", 300, 500);
	ts_diff_side_init(&sa);
	ts_diff_side_init(&sb);
	ts_diff_result_init(&r);
	ts_err_init(&err);
	REQUIRE(ts_diff_traces(&a, &a, NULL, &sa, &sb, &r, &err) == 0);
	CHECK_NEAR(r.walls[TS_DW_IDLE].base_ns, 300e3, 1);
	CHECK_NEAR(r.walls[TS_DW_DATA].base_ns, 100e3, 1);
	CHECK_NEAR(r.walls[TS_DW_HOST_GAP].base_ns, 200e3, 1);
	CHECK_I64(sa.prof.idle_part_data_ns, 100 * US);
	CHECK_I64(sa.prof.idle_part_gap_ns, 200 * US);
	ts_diff_result_release(&r);
	ts_diff_side_release(&sa);
	ts_diff_side_release(&sb);
	tb_release(&a);
}

/* Set a trace's metadata string (an interned id). */
static uint32_t meta_str(struct ts_trace *t, const char *s)
{
	return (uint32_t)ts_intern(&t->strings, s, strlen(s));
}

TEST(diff_context_differs)
{
	struct ts_trace a, b;
	struct ts_diff_side sa, sb;
	struct ts_diff_result r;
	struct ts_warnings w;
	struct ts_err err;
	const char *msg = NULL;

	tb_init(&a);
	tb_init(&b);
	for (int i = 0; i < 3; i++) {
		cpu_step(&a, 10 + i, i * 2000, 1000, 400, 100, 10);
		cpu_step(&b, 10 + i, i * 2000, 1000, 400, 100, 10);
	}
	/* differ: world size, driver (as written: "12040" vs "12080"), clock
	 * (b has one ns time); same: backend; one side only: the runtime
	 * version (not a difference); neither: NCCL */
	a.meta.world_size = 8;
	b.meta.world_size = 2;
	a.meta.driver_version = meta_str(&a, "12040");
	b.meta.driver_version = meta_str(&b, "12080");
	a.meta.backend = meta_str(&a, "nccl");
	b.meta.backend = meta_str(&b, "nccl");
	a.meta.runtime_version = meta_str(&a, "12040");
	a.meta.nccl_version = b.meta.nccl_version = TS_NO_ID;
	a.meta.profiler_version = b.meta.profiler_version = TS_NO_ID;
	b.meta.runtime_version = TS_NO_ID;
	cpu_ns(&b, "aten::add", 10, 1);
	ts_diff_side_init(&sa);
	ts_diff_side_init(&sb);
	ts_diff_result_init(&r);
	ts_warnings_init(&w);
	ts_err_init(&err);
	CHECK(ts_diff_traces(&a, &b, NULL, &sa, &sb, &r, &err) == 0);
	CHECK(r.same_hardware);
	CHECK_I64(r.context[TS_DCTX_WORLD_SIZE], TS_DCTX_DIFFERS);
	CHECK_I64(r.context[TS_DCTX_DRIVER], TS_DCTX_DIFFERS);
	CHECK_I64(r.context[TS_DCTX_CLOCK], TS_DCTX_DIFFERS);
	CHECK_I64(r.context[TS_DCTX_BACKEND], TS_DCTX_SAME);
	CHECK_I64(r.context[TS_DCTX_RUNTIME], TS_DCTX_BASELINE_ONLY);
	CHECK_I64(r.context[TS_DCTX_NCCL], TS_DCTX_NEITHER);
	CHECK_I64(r.context[TS_DCTX_DEVICE], TS_DCTX_SAME); /* "cpu" both */
	CHECK_I64(r.context_differs, 3);
	CHECK(ts_diff_warnings(&sa, &sb, &r, &w) == 0);
	for (size_t i = 0; i < w.v.n; i++)
		if (strcmp(w.v.v[i].code, "context-differs") == 0)
			msg = w.v.v[i].message;
	CHECK(msg != NULL);
	if (msg)
		CHECK_STR(msg, "the two sides differ in world size (8 vs 2), clock resolution (1 us vs 1 ns) and"
			       " driver version (12040 vs 12080): the step time and every delta include the"
			       " effect of those differences, not only of the change under comparison");
	ts_warnings_release(&w);
	ts_diff_result_release(&r);
	/* the same context: no warning */
	ts_diff_result_init(&r);
	ts_warnings_init(&w);
	CHECK(ts_diff_compare(&sa, &sa, NULL, &r, &err) == 0);
	CHECK_I64(r.context_differs, 0);
	CHECK(ts_diff_warnings(&sa, &sa, &r, &w) == 0);
	for (size_t i = 0; i < w.v.n; i++)
		CHECK(strcmp(w.v.v[i].code, "context-differs") != 0);
	ts_warnings_release(&w);
	ts_diff_result_release(&r);
	ts_diff_side_release(&sa);
	ts_diff_side_release(&sb);
	tb_release(&a);
	tb_release(&b);
}

/* The runtime change's contract key is the vendor's: CUDA torch.cuda, ROCm
 * torch.hip, MUSA torch.musa, a side without a vendor taking the other's;
 * two vendors (or one without a runtime key, MTIA) none. The other keys
 * stay (the driver: gpu.driver). */
TEST(diff_runtime_key_by_vendor)
{
	static const struct {
		const char *va, *vb, *key;
	} cases[] = {
		{ "cuda", "cuda", "environment.torch.cuda" }, { "rocm", "rocm", "environment.torch.hip" },
		{ "musa", "musa", "environment.torch.musa" }, { "unknown", "rocm", "environment.torch.hip" },
		{ "musa", "unknown", "environment.torch.musa" }, { "rocm", "cuda", NULL },
		{ "mtia", "mtia", NULL },
	};
	struct ts_diff_context a, b;
	struct ts_ctx_change out[TS_DCTX_COUNT];
	char buf[TS_DCTX_COUNT][2][32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n, k;
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		a.vendor = cases[i].va;
		b.vendor = cases[i].vb;
		snprintf(a.runtime, sizeof(a.runtime), "60443483");
		snprintf(b.runtime, sizeof(b.runtime), "60500000");
		snprintf(a.driver, sizeof(a.driver), "1");
		snprintf(b.driver, sizeof(b.driver), "2");
		n = ts_diff_ctx_changes(&a, &b, 1u << TS_DCTX_RUNTIME | 1u << TS_DCTX_DRIVER, out, buf);
		REQUIRE(n == 2);
		k = strcmp(out[0].label, "runtime version") == 0 ? 0 : 1;
		CHECK_STR(out[k].label, "runtime version");
		if (cases[i].key)
			CHECK(out[k].key && strcmp(out[k].key, cases[i].key) == 0);
		else
			CHECK(out[k].key == NULL);
		CHECK_STR(out[1 - k].key, "environment.gpu.driver");
	}
}

/* Six steps of a host that runs ahead of its GPU: ProfilerStep spans of
 * 300 us at 300 us apart (iterations first, first + by, ...), each
 * launching one kernel (linked by correlation unless !linked) that runs
 * gemm us back to back from 20 us on. The GPU's own step is gemm us (the
 * ends of consecutive steps' kernels lie gemm apart); spans 300 us. */
static void behind_trace(struct ts_trace *t, int64_t first, int64_t by, int64_t gemm, int linked)
{
	for (int64_t k = 0; k < 6; k++) {
		char nm[48];
		snprintf(nm, sizeof(nm), "ProfilerStep#%lld", (long long)(first + by * k));
		tb_cpu(t, TS_CAT_USER_ANNOTATION, nm, 300 * k, 300);
		tb_launch(t, "cudaLaunchKernel", 300 * k + 10, 5, 100 + k);
		tb_gpu(t, TS_CAT_KERNEL, "ampere_sgemm_128x64_nn", 7, 20 + gemm * k, gemm,
		       linked ? 100 + k : -1);
	}
}

static int has_warning(const struct ts_warnings *w, const char *code)
{
	for (size_t i = 0; i < w->v.n; i++)
		if (strcmp(w->v.v[i].code, code) == 0)
			return 1;
	return 0;
}

/* A GPU behind its host: the ratio compares the GPU's own step times when
 * a pair has one on both sides (2000 vs 2400 us: 1.2, slower), and with
 * none on one side (its kernels unlinked) or on both (iterations 10, 12,
 * ..., so no step follows its previous iteration) the host spans alone
 * are compared, which gives no verdict (TS_DIFF_NO_GPU_STEP_TIME, JSON
 * "inconclusive") and a no-gpu-step-time warning. */
TEST(diff_gpu_behind_compares_one_clock)
{
	static const struct {
		int64_t by_b, by_c;
		int linked_c;
		const char *basis;
		int behind, host_only, verdict;
		size_t gpu_b, gpu_c;
	} cs[] = {
		{ 1, 1, 1, "device", 3, 0, TS_DIFF_SLOWER, 5, 5 },
		{ 1, 1, 0, "host_span", 1, 1, TS_DIFF_NO_GPU_STEP_TIME, 5, 0 },
		{ 2, 2, 1, "host_span", 3, 1, TS_DIFF_NO_GPU_STEP_TIME, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		struct ts_trace a, b;
		struct ts_diff_side sa, sb;
		struct ts_diff_result r;
		struct ts_warnings w;
		struct ts_err err;

		tb_init(&a);
		tb_init(&b);
		behind_trace(&a, 10, cs[i].by_b, 2000, 1);
		behind_trace(&b, 10, cs[i].by_c, 2400, cs[i].linked_c);
		ts_diff_side_init(&sa);
		ts_diff_side_init(&sb);
		ts_diff_result_init(&r);
		ts_warnings_init(&w);
		ts_err_init(&err);
		REQUIRE(ts_diff_traces(&a, &b, NULL, &sa, &sb, &r, &err) == 0);
		CHECK(sa.prof.gpu_behind);
		CHECK_STR(r.step_basis, cs[i].basis);
		CHECK_I64(r.gpu_behind, cs[i].behind);
		CHECK_I64(r.host_clock_only, cs[i].host_only);
		CHECK_I64(r.verdict, cs[i].verdict);
		CHECK_I64((int64_t)r.base_gpu_steps, (int64_t)cs[i].gpu_b);
		CHECK_I64((int64_t)r.cand_gpu_steps, (int64_t)cs[i].gpu_c);
		if (cs[i].host_only) {
			CHECK_NEAR(r.ratio, 1.0, 1e-9); /* the spans: 300 us both */
			CHECK_STR(ts_diff_verdict_given(r.verdict), "inconclusive");
			CHECK_STR(ts_diff_verdict_name(r.verdict), "no_gpu_step_time");
		} else {
			CHECK_NEAR(r.base_gpu_mean_ns, 2000e3, 1);
			CHECK_NEAR(r.cand_gpu_mean_ns, 2400e3, 1);
			CHECK_NEAR(r.ratio, 1.2, 1e-9);
		}
		REQUIRE(ts_diff_warnings(&sa, &sb, &r, &w) == 0);
		CHECK_I64(has_warning(&w, "no-gpu-step-time"), cs[i].host_only);
		ts_warnings_release(&w);
		ts_diff_result_release(&r);
		ts_diff_side_release(&sa);
		ts_diff_side_release(&sb);
		tb_release(&a);
		tb_release(&b);
	}
}

/* Versions written two ways are one version; a real change stays one
 * (cases by hand from ts_version_same's rule in core.h). */
TEST(diff_version_same)
{
	static const struct { const char *a, *b; int same; } v[] = {
		{ "535.104.05", "535.104.5", 1 }, { "12.4", "12.4.0", 1 }, { "12.4.0.0", "12.4", 1 },
		{ "2.5.1+cu124", "2.5.1", 1 }, { "2.5.1", "2.5.1+cu124", 1 },
		{ "2.5.1+cu124", "2.5.1+cu121", 0 }, { "2.5.0a0+git1234", "2.5.0", 0 },
		{ "2.5.0rc1", "2.5.0rc1", 1 }, { "2.21.5", "2.21.6", 0 }, { "12.4", "12.4.1", 0 },
		{ "12.4", "12040", 0 }, { "13000", "013000", 1 }, { "535.104.05", "535.104", 0 },
		{ "99999999999999999999.1", "99999999999999999999.1", 1 },
		{ "99999999999999999999", "99999999999999999998", 0 },
		{ "nccl", "nccl", 1 }, { "nccl", "gloo", 0 }, { "v1.2", "1.2", 0 },
		{ "Nsight Systems 2026.2.1", "Nsight Systems 2026.2.1", 1 },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (ts_version_same(v[i].a, v[i].b) != v[i].same)
			ts_test_fail(__FILE__, __LINE__, "%s vs %s: want %s", v[i].a, v[i].b,
				     v[i].same ? "same" : "different");
		if (ts_version_same(v[i].b, v[i].a) != v[i].same)
			ts_test_fail(__FILE__, __LINE__, "%s vs %s: want %s (swapped)", v[i].b, v[i].a,
				     v[i].same ? "same" : "different");
	}
}

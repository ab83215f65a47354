/*
 * test_profile.c - per-rank analysis on hand-built traces; every expected
 * number is worked out by hand in the comments.
 */
#include "harness.h"
#include "tbuild.h"
#include "trainscope/paths.h"
#include "trainscope/profile.h"

#define GEMM "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_cublas"
#define ELEM "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"
#define NCCL "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
#define H2D "Memcpy HtoD (Pinned -> Device)"

/*
 * Two steps of 1000 us each (times in us):
 *   CPU  ProfilerStep#1 [0,1000)  ProfilerStep#2 [1000,2000)
 *        DataLoader [0,100) [1000,1400); aten::mm [100,300) [1400,1500)
 *        launches: k1 [150,160) c1, k2 [200,210) c2, cpy [250,255) c4,
 *                  cpy [256,258) c6, k3 [1410,1420) c3, nccl [1450,1460) c5
 *   GPU  s7: gemm [170,400) c1, elem [400,405) c2, gemm [1430,1600) c3
 *        s8: H2D [260,300) c4 4096 B, H2D [320,330) c6 1024 B
 *        s9: nccl [1500,1700) c5
 */
static void build_gpu_ids(struct ts_trace *t, int64_t mul)
{
	size_t e;
	struct ts_trace_xfer x;
	struct ts_trace_mem m;

	tb_init(t);
	tb_cpu(t, TS_CAT_USER_ANNOTATION, "ProfilerStep#1", 0, 1000);
	tb_cpu(t, TS_CAT_USER_ANNOTATION, "ProfilerStep#2", 1000, 1000);
	tb_cpu(t, TS_CAT_USER_ANNOTATION, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, 100);
	tb_cpu(t, TS_CAT_USER_ANNOTATION, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1000, 400);
	tb_cpu(t, TS_CAT_CPU_OP, "aten::mm", 100, 200);
	tb_cpu(t, TS_CAT_CPU_OP, "aten::mm", 1400, 100);
	tb_launch(t, "cudaLaunchKernel", 150, 10, 1 * mul);
	tb_launch(t, "cudaLaunchKernel", 200, 10, 2 * mul);
	tb_launch(t, "cudaMemcpyAsync", 250, 5, 4 * mul);
	tb_launch(t, "cudaMemcpyAsync", 256, 2, 6 * mul);
	tb_launch(t, "cudaLaunchKernel", 1410, 10, 3 * mul);
	tb_launch(t, "cudaLaunchKernel", 1450, 10, 5 * mul);
	tb_gpu(t, TS_CAT_KERNEL, GEMM, 7, 170, 230, 1 * mul);
	tb_gpu(t, TS_CAT_KERNEL, ELEM, 7, 400, 5, 2 * mul);
	tb_gpu(t, TS_CAT_KERNEL, GEMM, 7, 1430, 170, 3 * mul);
	e = tb_gpu(t, TS_CAT_MEMCPY, H2D, 8, 260, 40, 4 * mul);
	x = (struct ts_trace_xfer){ (uint32_t)e, 4096 };
	TS_VEC_PUSH(t->xfer, x);
	e = tb_gpu(t, TS_CAT_MEMCPY, H2D, 8, 320, 10, 6 * mul);
	x = (struct ts_trace_xfer){ (uint32_t)e, 1024 };
	TS_VEC_PUSH(t->xfer, x);
	tb_gpu(t, TS_CAT_KERNEL, NCCL, 9, 1500, 200, 5 * mul);
	memset(&m, 0, sizeof(m));
	m.device_type = 1;
	m.total_allocated = 1000, m.total_reserved = 2000;
	TS_VEC_PUSH(t->mem, m);
	m.total_allocated = 3000, m.total_reserved = 4000;
	TS_VEC_PUSH(t->mem, m);
	m.device_type = 0;
	m.total_allocated = 99999, m.total_reserved = 99999;
	TS_VEC_PUSH(t->mem, m);
}

/* The same trace with correlation ids 1..6. */
static void build_gpu(struct ts_trace *t)
{
	build_gpu_ids(t, 1);
}

TEST(profile_gpu_window)
{
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_err err;

	build_gpu(&t);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	CHECK(p.has_gpu);
	/* window = steps [0,2000) (GPU activity [170,1700) lies inside) */
	CHECK_I64(p.window_ns, 2000 * US);
	/* busy = [170,405) ∪ [1430,1700) = 235 + 270 */
	CHECK_I64(p.busy_ns, 505 * US);
	CHECK_I64(p.idle_ns, 1495 * US);
	/* compute = gemm+elem [170,405) ∪ gemm [1430,1600) = 235 + 170 */
	CHECK_I64(p.compute_ns, 405 * US);
	CHECK_I64(p.comm_ns, 200 * US);
	/* comm [1500,1700) minus compute [1430,1600) = [1600,1700) */
	CHECK_I64(p.exposed_comm_ns, 100 * US);
	CHECK_NEAR(p.overlap_pct, 50.0, 1e-9);
	/* memcpy [260,300) ∪ [320,330), both under the gemm [170,400) */
	CHECK_I64(p.memcpy_ns, 50 * US);
	CHECK_I64(p.exposed_memcpy_ns, 0);
	CHECK_I64(p.class_union_ns[TS_KC_GEMM], 400 * US);
	CHECK_I64(p.class_sum_ns[TS_KC_GEMM], 400 * US);
	CHECK_I64(p.class_count[TS_KC_GEMM], 2);
	CHECK_I64(p.class_union_ns[TS_KC_ELEMENTWISE], 5 * US);
	CHECK_I64(p.class_union_ns[TS_KC_MEMCPY], 50 * US);
	/* host = aten::mm [100,300) ∪ [1400,1500) (launches inside) */
	CHECK_I64(p.host_busy_ns, 300 * US);
	CHECK_I64(p.data_ns, 500 * US);
	/* GPU idle gaps [0,170) [405,1430) [1700,2000). Host-bound: up to the
	 * launch call of the activity ending the gap when it came later:
	 * [0,150) (gemm launched at 150), [405,1410) (gemm launched at 1410),
	 * [1700,2000) (nothing after it) = 1455, less the data loader
	 * [0,100) + [1000,1400) = 955. Data = 500; other = 1495-955-500 = 40
	 * ([150,170) and [1410,1430): launched, not yet running). */
	CHECK_I64(p.idle_host_ns, 955 * US);
	CHECK_I64(p.idle_data_ns, 500 * US);
	CHECK_I64(p.idle_other_ns, 40 * US);
	/* the partition: 405 + 100 + 0 + 0 + 1495 = 2000 */
	CHECK_I64(p.compute_ns + p.exposed_comm_ns + p.exposed_memcpy_ns + p.exposed_memset_ns +
		  p.idle_ns, p.window_ns);
	CHECK_I64(p.gpu_span_ns, 1530 * US);
	CHECK_I64(p.gpu_span_idle_ns, 1025 * US);
	CHECK_I64(p.unlinked_events, 0);
	/* host gap = 2000 - 300 - 500 */
	CHECK_I64(p.host_gap_ns, 1200 * US);
	ts_rank_prof_release(&p);
	tb_release(&t);
}

/*
 * Correlation ids times mul: 1 gives ids 1..6 (the packed index), 50 ids
 * 50..300 with holes (still packed: the range is under 64x the 7 calls),
 * 10^12 a range far over it (the sorted pairs). A second runtime call with
 * c1's id comes later and must lose: the first call in the trace is the
 * launch.
 */
static void launch_idle_xfer(int64_t mul)
{
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_err err;
	const struct ts_stream_idle *s7 = NULL;

	build_gpu_ids(&t, mul);
	tb_launch(&t, "cudaStreamGetPriority", 165, 1, 1 * mul);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	/* launch call durations 10,10,5,2,10,10 -> sorted 2,5,10,10,10,10:
	 * nearest-rank p50 = 3rd = 10, p90 = 6th = 10, total 47 */
	CHECK_I64(p.launch.calls, 6);
	CHECK_I64(p.launch.call_total_ns, 47 * US);
	CHECK_I64(p.launch.call_p50_ns, 10 * US);
	CHECK_I64(p.launch.call_max_ns, 10 * US);
	/* delays: c1 170-160=10, c2 400-210=190, c4 260-255=5, c6 320-258=62,
	 * c3 1430-1420=10, c5 1500-1460=40 -> sorted 5,10,10,40,62,190 */
	CHECK_I64(p.launch.linked, 6);
	CHECK_I64(p.launch.delay_total_ns, 317 * US);
	CHECK_I64(p.launch.delay_p50_ns, 10 * US);
	CHECK_I64(p.launch.delay_p90_ns, 190 * US);
	CHECK_I64(p.launch.delay_max_ns, 190 * US);
	/* elem (5 us) is shorter than its 10 us launch */
	CHECK_I64(p.launch.short_kernels, 1);
	CHECK_I64(p.launch.graph_launches, 0);
	/* stream 7: gap 400->400 is 0 (not idle); 405 -> 1430 = 1025 with the
	 * launch at 1410 after the stream drained: host-wait.
	 * stream 8: 300 -> 320 = 20 < 30 us, launched at 256 before: kernel-wait */
	REQUIRE(p.idle.n == 3);
	for (size_t i = 0; i < p.idle.n; i++)
		if (p.idle.v[i].stream == 7)
			s7 = &p.idle.v[i];
	REQUIRE(s7);
	CHECK_I64(s7->host_wait_ns, 1025 * US);
	CHECK_I64(s7->kernel_wait_ns, 0);
	CHECK_I64(p.idle.v[1].stream, 8);
	CHECK_I64(p.idle.v[1].kernel_wait_ns, 20 * US);
	CHECK_I64(p.idle.v[1].host_wait_ns, 0);
	CHECK_I64(p.xfer[TS_MDIR_HTOD].count, 2);
	CHECK_I64(p.xfer[TS_MDIR_HTOD].bytes, 5120);
	CHECK_I64(p.xfer[TS_MDIR_HTOD].ns, 50 * US);
	CHECK_I64(p.xfer[TS_MDIR_DTOH].count, 0);
	/* GPU [memory] only: peaks 3000 / 4000 (CPU 99999 ignored) */
	CHECK(p.mem_on_gpu);
	CHECK_I64(p.mem_peak_alloc_bytes, 3000);
	CHECK_I64(p.mem_peak_reserved_bytes, 4000);
	/* top: gemm 400 (2: 230,170), nccl 200, memcpy 50 (2), elem 5 */
	REQUIRE(p.top.n == 4);
	CHECK_STR(ts_prof_str(&p, p.top.v[0].name), GEMM);
	CHECK_I64(p.top.v[0].count, 2);
	CHECK_I64(p.top.v[0].total_ns, 400 * US);
	CHECK_I64(p.top.v[0].mean_ns, 200 * US);
	CHECK_I64(p.top.v[0].p50_ns, 170 * US);
	CHECK_I64(p.top.v[0].p90_ns, 230 * US);
	CHECK_I64(p.top.v[0].max_ns, 230 * US);
	CHECK_I64(p.top.v[0].cls, TS_KC_GEMM);
	CHECK_I64(p.top.v[1].cls, TS_KC_COMM);
	CHECK_I64(p.top.v[2].total_ns, 50 * US);
	CHECK_I64(p.top.v[3].total_ns, 5 * US);
	ts_rank_prof_release(&p);
	tb_release(&t);
}

TEST(profile_gpu_launch_idle_xfer)
{
	launch_idle_xfer(1);
}

TEST(profile_gpu_launch_corr_holes)
{
	launch_idle_xfer(50);
}

TEST(profile_gpu_launch_corr_sparse)
{
	launch_idle_xfer(INT64_C(1000000000000));
}

TEST(profile_gpu_steps_and_verdict)
{
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_err err;

	build_gpu(&t);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	REQUIRE(p.steps.n == 2);
	CHECK_I64(p.steps.v[0].step, 1);
	CHECK_I64(p.steps.v[0].dur_ns, 1000 * US);
	CHECK_I64(p.steps.v[0].data_ns, 100 * US);
	CHECK_I64(p.steps.v[1].data_ns, 400 * US);
	/* step 1 launches gemm, elem, 2 copies: busy = compute = [170,405) */
	CHECK_I64(p.steps.v[0].kernels, 4);
	CHECK_I64(p.steps.v[0].busy_ns, 235 * US);
	CHECK_I64(p.steps.v[0].compute_ns, 235 * US);
	CHECK_I64(p.steps.v[0].comm_ns, 0);
	/* step 2: gemm [1430,1600) + nccl [1500,1700) */
	CHECK_I64(p.steps.v[1].kernels, 2);
	CHECK_I64(p.steps.v[1].busy_ns, 270 * US);
	CHECK_I64(p.steps.v[1].compute_ns, 170 * US);
	CHECK_I64(p.steps.v[1].comm_ns, 200 * US);
	CHECK_I64(p.steps.v[1].exposed_comm_ns, 100 * US);
	/* gap: step 1 = 1000 - 200 - 100, step 2 = 1000 - 100 - 400 */
	CHECK_I64(p.steps.v[0].gap_ns, 700 * US);
	CHECK_I64(p.steps.v[1].gap_ns, 500 * US);
	CHECK_I64(p.steps.v[0].fwd_ns, -1);
	/* two steps: too few for outliers */
	CHECK_I64(p.outliers, 0);
	/* step idle: 1000 - 235, 1000 - 270 */
	CHECK_I64(p.steps.v[0].idle_ns, 765 * US);
	CHECK_I64(p.steps.v[1].idle_ns, 730 * US);
	/* shares of 2000: exposed memcpy 0, exposed comm 100 = 5%,
	 * data 500/2000 = 25% >= 10%, host-bound idle 955 = 47.75% >= 20% and
	 * the largest idle cause (955 > 500 > 40) -> host */
	CHECK_I64(p.verdict.wall, TS_WALL_HOST);
	CHECK_NEAR(p.verdict.share, 0.4775, 1e-12);
	CHECK(strstr(p.verdict.evidence, "host-bound GPU idle 1.0 ms = 47.") == p.verdict.evidence);
	CHECK(strstr(p.verdict.evidence, "; GPU idle in the data loader 25.0% (threshold 10%)") != NULL);
	/* walls ranked: host (named), then data 25% (over, not the largest),
	 * compute 405/2000 = 20.25%, comm 5%, memory 0 */
	REQUIRE(p.nwalls == 5);
	CHECK_I64(p.walls[0].wall, TS_WALL_HOST);
	CHECK_I64(p.walls[1].wall, TS_WALL_DATA);
	CHECK_I64(p.walls[2].wall, TS_WALL_COMPUTE);
	CHECK_I64(p.walls[3].wall, TS_WALL_COMM);
	CHECK_NEAR(p.walls[3].share, 0.05, 1e-12);
	CHECK_I64(p.walls[4].wall, TS_WALL_MEMORY);
	/* the nccl kernel is the one collective, launched in step 2 */
	REQUIRE(p.colls.n == 1);
	CHECK_I64(p.colls.v[0].step, 2);
	CHECK_I64(p.colls.v[0].dur_ns, 200 * US);
	ts_rank_prof_release(&p);
	tb_release(&t);
}

/*
 * CPU-only: 5 steps (ms): [0,100) [100,200) [200,300) [300,480) [480,580).
 * Each: DataLoader 1 ms at the start, then aten op 90 ms; step 3 (the 4th)
 * has an 81 ms data-loader stall: DL [300,381), op [381,471).
 */
static void build_cpu(struct ts_trace *t, int legacy)
{
	static const int64_t start[] = { 0, 100, 200, 300, 480 }, dur[] = { 100, 100, 100, 180, 100 };
	char nm[32];

	tb_init(t);
	t->meta.legacy = legacy;
	for (int i = 0; i < 5; i++) {
		int64_t s = start[i] * 1000, dl = i == 3 ? 81000 : 1000;
		snprintf(nm, sizeof(nm), "ProfilerStep#%d", 10 + i);
		tb_cpu(t, legacy ? TS_CAT_CPU_OP : TS_CAT_USER_ANNOTATION, nm, s, dur[i] * 1000);
		tb_cpu(t, TS_CAT_USER_ANNOTATION, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", s, dl);
		tb_cpu(t, TS_CAT_CPU_OP, "aten::addmm", s + dl, 90000);
	}
}

TEST(profile_cpu_data_stall_outlier)
{
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_err err;

	build_cpu(&t, 0);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	CHECK(!p.has_gpu);
	REQUIRE(p.steps.n == 5);
	CHECK_I64(p.steps.v[0].step, 10);
	CHECK_I64(p.window_ns, 580000 * US);
	/* busy = 5 x 90 ms of ops */
	CHECK_I64(p.busy_ns, 450000 * US);
	CHECK_I64(p.steps.v[3].data_ns, 81000 * US);
	CHECK_I64(p.steps.v[3].gap_ns, 9000 * US);
	/* data 1,1,1,81,1 ms: median 1, MAD 0 -> excess 80 > 20% of the 100 ms
	 * median step: outlier with the data loader as reason; no other step */
	CHECK_I64(p.median_step_ns, 100000 * US);
	CHECK_I64(p.outliers, 1);
	CHECK(p.steps.v[3].outlier);
	CHECK_STR(p.steps.v[3].reason, "data loader 81.0 ms (median 1.0 ms)");
	CHECK(!p.steps.v[0].outlier && !p.steps.v[4].outlier);
	/* data 85 ms of 580 ms step time = 14.7% >= 10%; host gap 45 ms = 7.8% */
	CHECK_I64(p.verdict.wall, TS_WALL_DATA);
	CHECK_NEAR(p.verdict.share, 85.0 / 580.0, 1e-12);
	ts_rank_prof_release(&p);
	tb_release(&t);
}

TEST(profile_cpu_legacy_step_numbering)
{
	/* torch 1.13 legacy: ProfilerStep#N is iteration N+1 */
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_err err;

	build_cpu(&t, 1);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	REQUIRE(p.steps.n == 5);
	CHECK_I64(p.steps.v[0].step, 11);
	CHECK_I64(p.steps.v[4].step, 15);
	ts_rank_prof_release(&p);
	tb_release(&t);
}

TEST(profile_cpu_slow_step_without_stall)
{
	/* steps of 100,100,100,100 ms and one of 200 ms whose op is 190 ms:
	 * durations median 100, MAD 0; no stall component moves (data 1 ms,
	 * gap 9 ms each) -> slow-step rule: +100 ms > 25 ms */
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_err err;
	char nm[32];

	tb_init(&t);
	for (int i = 0; i < 5; i++) {
		int64_t s = (i < 3 ? i * 100 : i == 3 ? 300 : 500) * 1000LL;
		int64_t d = i == 3 ? 200000 : 100000;
		snprintf(nm, sizeof(nm), "ProfilerStep#%d", i + 1);
		tb_cpu(&t, TS_CAT_USER_ANNOTATION, nm, s, d);
		tb_cpu(&t, TS_CAT_USER_ANNOTATION, "enumerate(DataLoader)#x", s, 1000);
		tb_cpu(&t, TS_CAT_CPU_OP, "aten::addmm", s + 1000, d - 10000);
	}
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	CHECK_I64(p.outliers, 1);
	CHECK(p.steps.v[3].outlier);
	CHECK_STR(p.steps.v[3].reason, "step 200.0 ms vs median 100.0 ms (+100.0 ms)");
	/* ops 90+90+90+190+90 = 550 of 600 ms: no wall over its threshold */
	CHECK_I64(p.verdict.wall, TS_WALL_COMPUTE);
	ts_rank_prof_release(&p);
	tb_release(&t);
}

/*
 * MUSA naming (shared/reference/musa.md): musaLaunchKernel / musaGraphLaunch
 * runtime calls, mcclKernel_* collectives, "Memcpy1 HtoD (...)" and
 * "MemTransfer(d2d)" copies. Times in us:
 *   CPU  ProfilerStep#7 [0,1000); launches: gemm [10,15) c1, mccl [20,25) c2,
 *        graph [30,40) c3 (launches two kernels c3), copy [50,52) c4, [60,62) c5
 *   GPU  s1: muDNN gemm [100,300) c1; graph kernels [300,350) c3, [350,360) c3
 *        s2: mccl AllReduce [200,500) c2
 *        s3: Memcpy1 HtoD [500,520) c4 2000 B; MemTransfer(d2d) [520,530) c5
 */
TEST(profile_musa_naming)
{
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_err err;
	struct ts_trace_xfer x;
	size_t e;

	tb_init(&t);
	tb_cpu(&t, TS_CAT_USER_ANNOTATION, "ProfilerStep#7", 0, 1000);
	tb_launch(&t, "musaLaunchKernel", 10, 5, 1);
	tb_launch(&t, "musaLaunchKernel", 20, 5, 2);
	tb_launch(&t, "musaGraphLaunch", 30, 10, 3);
	tb_launch(&t, "musaMemcpyAsync", 50, 2, 4);
	tb_launch(&t, "musaMemcpyAsync", 60, 2, 5);
	tb_gpu(&t, TS_CAT_KERNEL, "void musa::dnn::(anonymous namespace)::batch_gemv_row_continuous_kernel<__half>", 1, 100, 200, 1);
	tb_gpu(&t, TS_CAT_KERNEL, "triton_poi_fused_add_0", 1, 300, 50, 3);
	tb_gpu(&t, TS_CAT_KERNEL, "triton_poi_fused_mul_1", 1, 350, 10, 3);
	tb_gpu(&t, TS_CAT_KERNEL, "mcclKernel_AllReduce_RING_SIMPLE_Sum___mt_bfloat16", 2, 200, 300, 2);
	e = tb_gpu(&t, TS_CAT_MEMCPY, "Memcpy1 HtoD (Pageable -> Device)", 3, 500, 20, 4);
	x = (struct ts_trace_xfer){ (uint32_t)e, 2000 };
	TS_VEC_PUSH(t.xfer, x);
	tb_gpu(&t, TS_CAT_MEMCPY, "MemTransfer(d2d)", 3, 520, 10, 5);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	/* compute = gemm [100,300) ∪ triton [300,360) = 260; comm [200,500) = 300;
	 * exposed comm = [360,500) = 140; memcpy [500,530) = 30, none under
	 * compute or comm -> exposed 30 */
	CHECK_I64(p.compute_ns, 260 * US);
	CHECK_I64(p.comm_ns, 300 * US);
	CHECK_I64(p.exposed_comm_ns, 140 * US);
	CHECK_I64(p.memcpy_ns, 30 * US);
	CHECK_I64(p.exposed_memcpy_ns, 30 * US);
	CHECK_I64(p.class_union_ns[TS_KC_GEMM], 200 * US);
	CHECK_I64(p.class_union_ns[TS_KC_TRITON], 60 * US);
	CHECK_I64(p.class_union_ns[TS_KC_COMM], 300 * US);
	CHECK_I64(p.xfer[TS_MDIR_HTOD].bytes, 2000);
	CHECK_I64(p.xfer[TS_MDIR_HTOD].ns, 20 * US);
	CHECK_I64(p.xfer[TS_MDIR_DTOD].count, 1);
	CHECK_I64(p.xfer[TS_MDIR_DTOD].bytes, -1);
	/* 5 launch calls, one graph launch that launched 2 activities; all 6
	 * activities linked by correlation */
	CHECK_I64(p.launch.calls, 5);
	CHECK_I64(p.launch.graph_launches, 1);
	CHECK_I64(p.launch.graph_activities, 2);
	CHECK_I64(p.launch.linked, 6);
	/* the mccl kernel is a collective of step 7 */
	REQUIRE(p.colls.n == 1);
	CHECK_I64(p.colls.v[0].step, 7);
	CHECK_STR(ts_prof_str(&p, p.colls.v[0].name), "mcclKernel_AllReduce_RING_SIMPLE_Sum___mt_bfloat16");
	ts_rank_prof_release(&p);
	tb_release(&t);
}

/*
 * Memset and unlinked activity (us). ProfilerStep#1 [0,1000); launches
 * cudaLaunchKernel [100,110) c1, cudaMemsetAsync [150,155) c2.
 * GPU: elem [0,300) c99 (no launch in the trace: unlinked), gemm [200,500)
 * c1, memset [600,700) c2, memset [650,800) without correlation (unlinked).
 *   busy = [0,500) ∪ [600,800) = 700, compute = [0,500) = 500,
 *   memset = [600,800) = 200, all exposed; idle = 300;
 *   500 + 0 + 0 + 200 + 300 = 1000 = window.
 *   unlinked = [0,300) ∪ [650,800) = 450 in 2 events; GPU span [0,800).
 *   step 1 [0,1000) holds all of it, linked or not (a step's GPU time is
 *   what ran in it): busy 700, compute 500, exposed memset 200, idle 300,
 *   the window's figures; 2 activities launched in it (the linked ones).
 */
TEST(profile_memset_and_unlinked)
{
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_err err;
	const struct ts_step_prof *s;

	tb_init(&t);
	tb_cpu(&t, TS_CAT_USER_ANNOTATION, "ProfilerStep#1", 0, 1000);
	tb_launch(&t, "cudaLaunchKernel", 100, 10, 1);
	tb_launch(&t, "cudaMemsetAsync", 150, 5, 2);
	tb_gpu(&t, TS_CAT_KERNEL, ELEM, 7, 0, 300, 99);
	tb_gpu(&t, TS_CAT_KERNEL, GEMM, 7, 200, 300, 1);
	tb_gpu(&t, TS_CAT_MEMSET, "Memset (Device)", 7, 600, 100, 2);
	tb_gpu(&t, TS_CAT_MEMSET, "Memset (Device)", 8, 650, 150, -1);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	CHECK_I64(p.window_ns, 1000 * US);
	CHECK_I64(p.busy_ns, 700 * US);
	CHECK_I64(p.compute_ns, 500 * US);
	CHECK_I64(p.memset_ns, 200 * US);
	CHECK_I64(p.exposed_memset_ns, 200 * US);
	CHECK_I64(p.idle_ns, 300 * US);
	CHECK_I64(p.compute_ns + p.exposed_comm_ns + p.exposed_memcpy_ns + p.exposed_memset_ns +
		  p.idle_ns, p.window_ns);
	CHECK_I64(p.unlinked_ns, 450 * US);
	CHECK_I64(p.unlinked_events, 2);
	CHECK_I64(p.gpu_span_ns, 800 * US);
	CHECK_I64(p.gpu_span_idle_ns, 100 * US);
	REQUIRE(p.steps.n == 1);
	s = &p.steps.v[0];
	CHECK_I64(s->busy_ns, 700 * US);
	CHECK_I64(s->compute_ns, 500 * US);
	CHECK_I64(s->exposed_memset_ns, 200 * US);
	CHECK_I64(s->idle_ns, 300 * US);
	CHECK_I64(s->kernels, 2);
	ts_rank_prof_release(&p);
	tb_release(&t);
}

/*
 * CPU-only, ops and a collective outside the one step are clipped away:
 * ProfilerStep#1 [100,600); aten::mm [0,300) and [500,900) on the main
 * thread; gloo:all_reduce [250,700) on another thread.
 *   window [100,600) = 500; host = [100,300) ∪ [500,600) = 300 = busy =
 *   compute; comm [250,600) = 350, exposed = comm \ host = [300,500) = 200;
 *   idle = 500 - 300 - 200 = 0.
 */
TEST(profile_cpu_clipped_to_window)
{
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_err err;
	size_t e;

	tb_init(&t);
	tb_cpu(&t, TS_CAT_USER_ANNOTATION, "ProfilerStep#1", 100, 500);
	tb_cpu(&t, TS_CAT_CPU_OP, "aten::mm", 0, 300);
	tb_cpu(&t, TS_CAT_CPU_OP, "aten::mm", 500, 400);
	e = tb_cpu(&t, TS_CAT_USER_ANNOTATION, "gloo:all_reduce", 250, 450);
	REQUIRE(ts_trace_set_c32(&t, TS_C32_TID, e, 99) == 0);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	CHECK(!p.has_gpu);
	CHECK_I64(p.window_ns, 500 * US);
	CHECK_I64(p.busy_ns, 300 * US);
	CHECK_I64(p.compute_ns, 300 * US);
	CHECK_I64(p.comm_ns, 350 * US);
	CHECK_I64(p.exposed_comm_ns, 200 * US);
	CHECK_I64(p.idle_ns, 0);
	REQUIRE(p.steps.n == 1);
	CHECK_I64(p.steps.v[0].busy_ns + p.steps.v[0].exposed_comm_ns + p.steps.v[0].idle_ns,
		  p.steps.v[0].dur_ns);
	ts_rank_prof_release(&p);
	tb_release(&t);
}

/*
 * A cut trace as Kineto writes one: the host's ops for steps 1 (0-1000 us)
 * and 2 (1000-2000 us), then the launches and kernels in time order.
 * Cut among the activities, after step 2's launch: step 2 lost its device
 * work and is dropped (it was kept, idle, as its host ops are all there),
 * and the warning says the device times may be partial. Cut only after
 * the event list closed, both steps are whole and kept (step 2 was
 * dropped).
 */
static void build_cut(struct ts_trace *t, int activities_of_step2, int events_whole)
{
	tb_init(t);
	for (int k = 0; k < 2; k++) {
		tb_cpu(t, TS_CAT_USER_ANNOTATION, k ? "ProfilerStep#2" : "ProfilerStep#1",
		       1000 * k, 1000);
		tb_cpu(t, TS_CAT_CPU_OP, "aten::mm", 1000 * k + 10, 900);
	}
	for (int k = 0; k < 2; k++) {
		tb_launch(t, "cudaLaunchKernel", 1000 * k + 20, 10, 7 + k);
		if (k == 0 || activities_of_step2)   /* else the cut took it */
			tb_gpu(t, TS_CAT_KERNEL, "gemm", 7, 1000 * k + 40, 800, 7 + k);
	}
	t->meta.truncated = 1;
	t->meta.truncated_at = 12345;
	t->meta.events_whole = events_whole;
}

TEST(profile_cut_trace_steps)
{
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_err err;
	struct ts_warnings w;

	build_cut(&t, 0, 0);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	REQUIRE(p.steps.n == 1);
	CHECK_I64(p.steps.v[0].step, 1);
	CHECK_I64(p.steps_dropped, 1);
	CHECK_I64(p.cut_in_device, 1);
	ts_warnings_init(&w);
	REQUIRE(ts_trace_truncated_warning(&w, "t.json", 12345, 0, &p) == 0);
	REQUIRE(w.v.n == 1);
	CHECK(strstr(w.v.v[0].message, "device times of the steps kept may be partial") != NULL);
	ts_warnings_release(&w);
	ts_rank_prof_release(&p);
	tb_release(&t);

	build_cut(&t, 1, 1);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	CHECK_I64(p.steps.n, 2);
	CHECK_I64(p.steps_dropped, 0);
	ts_rank_prof_release(&p);
	tb_release(&t);
}

/* No timed evidence, no verdict: one event with dur -1; many zero-length
 * events (window 0 < TS_WALL_MIN_WINDOW_NS). */
TEST(profile_wall_undetermined)
{
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_err err;
	size_t e;

	tb_init(&t);
	e = tb_gpu(&t, TS_CAT_KERNEL, GEMM, 7, 10, 0, 1);
	REQUIRE(ts_trace_set_c32(&t, TS_C32_DUR, e, -1000) == 0);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	CHECK_I64(p.verdict.wall, TS_WALL_UNDETERMINED);
	CHECK(strstr(p.verdict.evidence, "too little timed evidence") == p.verdict.evidence);
	ts_rank_prof_release(&p);
	tb_release(&t);

	tb_init(&t);
	for (int i = 0; i < 2000; i++)
		tb_cpu(&t, TS_CAT_CPU_OP, "aten::add", 5, 0);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	CHECK_I64(p.window_ns, 0);
	CHECK_I64(p.verdict.wall, TS_WALL_UNDETERMINED);
	ts_rank_prof_release(&p);
	tb_release(&t);
}

/* p without its pointers (arrays and names are compared on their own). */
static void prof_scalars(const struct ts_rank_prof *p, struct ts_rank_prof *s)
{
	*s = *p;
	memset(&s->top, 0, sizeof(s->top));
	memset(&s->idle, 0, sizeof(s->idle));
	memset(&s->steps, 0, sizeof(s->steps));
	memset(&s->colls, 0, sizeof(s->colls));
	memset(&s->names, 0, sizeof(s->names));
}

#define SAME_ARR(a, b, f)                                                       \
	(a.f.n == b.f.n && (!a.f.n || !memcmp(a.f.v, b.f.v, a.f.n * sizeof(*a.f.v))))

/*
 * The analysis on one thread and on two (launch statistics, idle per stream
 * and kernel statistics beside the interval sets) gives the same profile,
 * field by field, on every shared trace the reader takes.
 */
TEST(profile_threads_same_result_every_shared_trace)
{
	static const char *const dirs[] = { "traces/hta", "traces/cpu", "traces/tracelens",
						  "traces/tracelens-compare", "traces/kineto-tb" };
	int analysed = 0;

	for (size_t d = 0; d < sizeof(dirs) / sizeof(*dirs); d++) {
		struct ts_paths paths;
		struct ts_err err;
		const char *dir = test_data(dirs[d]);
		if (!dir)
			return;
		ts_paths_init(&paths);
		ts_err_init(&err);
		REQUIRE(ts_paths_add(&paths, dir, 4, &err) == 0);
		for (size_t k = 0; k < paths.n; k++) {
			struct ts_trace t;
			struct ts_rank_prof p[2], s[2];
			struct ts_prof_opts o[2];
			int rc[2];

			ts_trace_init(&t);
			if (ts_trace_read(&t, paths.v[k], NULL, &err) != 0 || !t.ev.n) {
				ts_trace_release(&t);
				continue;
			}
			for (int i = 0; i < 2; i++) {
				memset(&o[i], 0, sizeof(o[i]));
				o[i].threads = i + 1;
				ts_rank_prof_init(&p[i]);
				rc[i] = ts_rank_profile(&p[i], &t, &o[i], &err);
				prof_scalars(&p[i], &s[i]);
			}
			CHECK(rc[0] == 0 && rc[1] == 0);
			if (memcmp(&s[0], &s[1], sizeof(s[0])) || !SAME_ARR(p[0], p[1], top) ||
			    !SAME_ARR(p[0], p[1], idle) || !SAME_ARR(p[0], p[1], steps) ||
			    !SAME_ARR(p[0], p[1], colls) || p[0].names.count != p[1].names.count)
				ts_test_fail(__FILE__, __LINE__, "%s: 1 and 2 threads differ", paths.v[k]);
			for (uint32_t i = 0; i < p[0].names.count && i < p[1].names.count; i++)
				if (ts_prof_len(&p[0], i) != ts_prof_len(&p[1], i) ||
				    memcmp(ts_prof_str(&p[0], i), ts_prof_str(&p[1], i), ts_prof_len(&p[0], i)))
					ts_test_fail(__FILE__, __LINE__, "%s: name %u differs", paths.v[k], i);
			analysed += p[0].idle.n > 0;
			for (int i = 0; i < 2; i++)
				ts_rank_prof_release(&p[i]);
			ts_trace_release(&t);
		}
		ts_paths_release(&paths);
	}
	/* the GPU traces have streams: the two-thread part did real work */
	CHECK(analysed >= 10);
}

/*
 * Generated: N steps of 1000 us; in step j (times from 1000 j, us):
 *   CPU  ProfilerStep#(j+1) [0,1000), DataLoader [0,100), aten::mm [100,300),
 *        launches of 5 us: kernel m (m < M = 2 S) at 110 + 10 m, NCCL at 290
 *   GPU  kernel m on stream m % S at [400 + 20 m, +10), NCCL [700, 800) on
 *        its own stream S (on stream 0 when S = 1: then one track)
 * By construction: host gap per step 1000 - 200 (mm) - 100 (data) = 700 us;
 * per stream the idle parts sum to the stream's gaps, last end - first
 * start - busy; one collective per step, in that step (its launch's).
 */
static void build_streams(struct ts_trace *t, int n, int s)
{
	int m = 2 * s, comm = s == 1 ? 0 : s;
	int64_t corr = 1;

	tb_init(t);
	for (int j = 0; j < n; j++) {
		char step[32];
		int64_t b = 1000LL * j;
		snprintf(step, sizeof(step), "ProfilerStep#%d", j + 1);
		tb_cpu(t, TS_CAT_USER_ANNOTATION, step, b, 1000);
		tb_cpu(t, TS_CAT_USER_ANNOTATION, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 100);
		tb_cpu(t, TS_CAT_CPU_OP, "aten::mm", b + 100, 200);
		for (int k = 0; k < m; k++)
			tb_launch(t, "cudaLaunchKernel", b + 110 + 10 * k, 5, corr + k);
		tb_launch(t, "cudaLaunchKernel", b + 290, 5, corr + m);
		corr += m + 1;
	}
	corr = 1;
	for (int j = 0; j < n; j++) {
		int64_t b = 1000LL * j;
		for (int k = 0; k < m; k++)
			tb_gpu(t, TS_CAT_KERNEL, k % 2 ? ELEM : GEMM, k % s, b + 400 + 20 * k, 10, corr + k);
		tb_gpu(t, TS_CAT_KERNEL, NCCL, comm, b + 700, 100, corr + m);
		corr += m + 1;
	}
}

/* Expected sum of a stream's idle parts (ns), from the layout above. */
static int64_t stream_gaps(int n, int s, int64_t stream)
{
	if (s == 1)   /* 400, 420 (10 us each) and NCCL 700 (100 us) per step */
		return (1000LL * (n - 1) + 800 - 400 - 120LL * n) * US;
	if (stream == s)   /* NCCL only */
		return (1000LL * (n - 1) + 800 - 700 - 100LL * n) * US;
	/* kernels stream and stream + s of each step */
	return (1000LL * (n - 1) + 400 + 20 * (stream + s) + 10 - (400 + 20 * stream) -
		20LL * n) * US;
}

/*
 * Two threads (lists beside the steps, launch and idle statistics beside
 * the GPU's sets, the host gap beside the unions, the idle split by cause
 * beside the steps' GPU figures, the timed flags in two halves) give the
 * profile one thread gives, on generated traces with many streams and with
 * one, and both match the construction.
 */
TEST(profile_threads_same_result_generated_streams)
{
	static const int streams[] = { 1, 6 };
	const int n = 9;

	for (size_t c = 0; c < sizeof(streams) / sizeof(*streams); c++) {
		int s = streams[c];
		struct ts_trace t;
		struct ts_rank_prof p[2], sc[2];
		struct ts_prof_opts o[2];
		struct ts_err err;

		build_streams(&t, n, s);
		for (int i = 0; i < 2; i++) {
			memset(&o[i], 0, sizeof(o[i]));
			o[i].threads = i + 1;
			ts_rank_prof_init(&p[i]);
			REQUIRE(ts_rank_profile(&p[i], &t, &o[i], &err) == 0);
			prof_scalars(&p[i], &sc[i]);
		}
		CHECK(memcmp(&sc[0], &sc[1], sizeof(sc[0])) == 0);
		CHECK(SAME_ARR(p[0], p[1], top));
		CHECK(SAME_ARR(p[0], p[1], idle));
		CHECK(SAME_ARR(p[0], p[1], steps));
		CHECK(SAME_ARR(p[0], p[1], colls));
		for (int i = 0; i < 2; i++) {
			const struct ts_rank_prof *q = &p[i];
			REQUIRE(q->steps.n == (size_t)n);
			CHECK_I64(q->host_gap_ns, n * 700 * US);
			for (int j = 0; j < n; j++) {
				CHECK_I64(q->steps.v[j].gap_ns, 700 * US);
				CHECK_I64(q->steps.v[j].data_ns, 100 * US);
				CHECK_I64(q->steps.v[j].host_ns, 200 * US);
				CHECK_I64(q->steps.v[j].kernels, 2 * s + 1);
			}
			CHECK_I64(q->launch.calls, n * (2 * s + 1));
			CHECK_I64(q->launch.linked, n * (2 * s + 1));
			REQUIRE(q->idle.n == (size_t)(s == 1 ? 1 : s + 1));
			for (size_t k = 0; k < q->idle.n; k++) {
				const struct ts_stream_idle *si = &q->idle.v[k];
				CHECK_I64(si->stream, (int64_t)k);   /* sorted by (device, stream) */
				CHECK_I64(si->host_wait_ns + si->kernel_wait_ns + si->other_ns,
					  stream_gaps(n, s, si->stream));
			}
			REQUIRE(q->colls.n == (size_t)n);
			for (int j = 0; j < n; j++)
				CHECK_I64(q->colls.v[j].step, j + 1);
		}
		for (int i = 0; i < 2; i++)
			ts_rank_prof_release(&p[i]);
		tb_release(&t);
	}
}

/*
 * The main thread's runtime calls count as host busy whether or not an op
 * holds them (times in us; one step [0,1000)):
 *   ops    aten::mm [100,300), then, written after the calls, aten::add [500,600)
 *   calls  [150,160) inside mm, [290,310) across mm's end, [400,410) outside
 *          any op, [510,520) inside add (which comes later in the file)
 * host busy = |[100,310) u [400,410) u [500,600)| = 210 + 10 + 100 = 320 us.
 */
TEST(profile_host_calls_inside_and_outside_ops)
{
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_prof_opts o;
	struct ts_err err;

	for (int threads = 1; threads <= 2; threads++) {
		tb_init(&t);
		tb_cpu(&t, TS_CAT_USER_ANNOTATION, "ProfilerStep#1", 0, 1000);
		tb_cpu(&t, TS_CAT_CPU_OP, "aten::mm", 100, 200);
		tb_launch(&t, "cudaLaunchKernel", 150, 10, 1);
		tb_launch(&t, "cudaLaunchKernel", 290, 20, 2);
		tb_launch(&t, "cudaStreamSynchronize", 400, 10, -1);
		tb_launch(&t, "cudaLaunchKernel", 510, 10, 3);
		tb_cpu(&t, TS_CAT_CPU_OP, "aten::add", 500, 100);
		tb_gpu(&t, TS_CAT_KERNEL, GEMM, 7, 170, 100, 1);
		tb_gpu(&t, TS_CAT_KERNEL, GEMM, 7, 320, 50, 2);
		tb_gpu(&t, TS_CAT_KERNEL, ELEM, 7, 530, 20, 3);
		memset(&o, 0, sizeof(o));
		o.threads = threads;
		ts_rank_prof_init(&p);
		REQUIRE(ts_rank_profile(&p, &t, &o, &err) == 0);
		CHECK_I64(p.host_busy_ns, 320 * US);
		REQUIRE(p.steps.n == 1);
		CHECK_I64(p.steps.v[0].host_ns, 320 * US);
		/* no data loader, no CPU collective: the gap is the rest */
		CHECK_I64(p.host_gap_ns, (1000 - 320) * US);
		ts_rank_prof_release(&p);
		tb_release(&t);
	}
}

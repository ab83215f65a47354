/*
 * test_tracelens.c - TraceLens's gpu_timeline rules on a hand-built trace;
 * every expected number is worked out in the comments (times in us).
 */
#include <string.h>
#include "harness.h"
#include "tbuild.h"
#include "trainscope/tracelens.h"

static void set_cat(struct ts_trace *t, size_t i, const char *c)
{
	ts_trace_set_cat_str(t, i, (uint32_t)ts_intern(&t->strings, c, strlen(c)));
}

static size_t flow(struct ts_trace *t, char ph, int64_t id, int64_t pid, int64_t tid)
{
	size_t i = tb_ev(t, TS_CAT_FLOW, "ac2g", pid, tid, 0, 0, -1);

	t->ev.ph[i] = ph;
	ts_trace_set_c32(t, TS_C32_DUR, i, TS_NONE);
	ts_trace_set_c32(t, TS_C32_FLOW, i, id);
	set_cat(t, i, "ac2g");
	return i;
}

static size_t call(struct ts_trace *t, const char *name, int64_t ts, int64_t corr)
{
	size_t i = tb_launch(t, name, ts, 2, corr);

	set_cat(t, i, "cuda_runtime");
	return i;
}

static size_t gpu(struct ts_trace *t, int cat, const char *c, const char *name, int64_t stream,
		  int64_t ts, int64_t dur, int64_t corr)
{
	size_t i = tb_gpu(t, cat, name, stream, ts, dur, corr);

	set_cat(t, i, c);
	return i;
}

/*
 *   c1 cudaLaunchKernel + ac2g s/f (f on GPU 0 stream 7): gemm [10,20)
 *   c2 with flows: nccl all-reduce [15,35) on stream 8 -> communication
 *   c3 cudaMemsetAsync without flows: memset [40,45) -> not linked
 *   c99 no launch call: kernel [100,150) -> not linked
 *   c4 cudaGraphLaunch, no flows: kernel [50,55) and memcpy [52,62)
 *   c5 with flows: memset [70,75) -> computation (TraceLens's class)
 * comp = [10,20) [50,55) [70,75) = 20; comm = [15,35) = 20, exposed
 * [20,35) = 15; memcpy [52,62) = 10, exposed [55,62) = 7; busy =
 * [10,35) [50,62) [70,75) = 42; total = 75 - 10 = 65; idle = 23;
 * 20 + 15 + 7 + 23 = 65. Linked 5 of 7 GPU events.
 */
TEST(tracelens_linking_and_timeline)
{
	struct ts_trace t;
	struct ts_tracelens tl;
	struct ts_err err;

	tb_init(&t);
	call(&t, "cudaLaunchKernel", 0, 1);
	flow(&t, 's', 1, 1, 1);
	flow(&t, 'f', 1, 0, 7);
	call(&t, "cudaLaunchKernel", 1, 2);
	flow(&t, 's', 2, 1, 1);
	flow(&t, 'f', 2, 0, 8);
	call(&t, "cudaMemsetAsync", 3, 3);
	call(&t, "cudaGraphLaunch", 4, 4);
	call(&t, "cudaLaunchKernel", 5, 5);
	flow(&t, 's', 5, 1, 1);
	flow(&t, 'f', 5, 0, 7);
	gpu(&t, TS_CAT_KERNEL, "kernel", "sm90_gemm", 7, 10, 10, 1);
	gpu(&t, TS_CAT_KERNEL, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 8, 15, 20, 2);
	gpu(&t, TS_CAT_MEMSET, "gpu_memset", "Memset (Device)", 7, 40, 5, 3);
	gpu(&t, TS_CAT_KERNEL, "kernel", "elementwise", 7, 100, 50, 99);
	gpu(&t, TS_CAT_KERNEL, "kernel", "graph_kernel", 7, 50, 5, 4);
	gpu(&t, TS_CAT_MEMCPY, "gpu_memcpy", "Memcpy DtoD", 9, 52, 10, 4);
	gpu(&t, TS_CAT_MEMSET, "gpu_memset", "Memset (Device)", 7, 70, 5, 5);
	REQUIRE(ts_tracelens_analyze(&t, 0, &tl, &err) == 0);
	CHECK(tl.linking_correlation);
	CHECK_I64(tl.gpu_events, 7);
	CHECK_I64(tl.linked, 5);
	CHECK_NEAR(tl.all.computation_us, 20, 1e-12);
	CHECK_NEAR(tl.all.total_comm_us, 20, 1e-12);
	CHECK_NEAR(tl.all.exposed_comm_us, 15, 1e-12);
	CHECK_NEAR(tl.all.total_memcpy_us, 10, 1e-12);
	CHECK_NEAR(tl.all.exposed_memcpy_us, 7, 1e-12);
	CHECK_NEAR(tl.all.busy_us, 42, 1e-12);
	CHECK_NEAR(tl.all.total_us, 65, 1e-12);
	CHECK_NEAR(tl.all.idle_us, 23, 1e-12);
	tb_release(&t);
}

/* The flow end decides which event: the last event in file order with
 * (end pid, end tid, id) wins, as in TraceLens's dict. Without any linked
 * GPU event: TraceLens's error. */
TEST(tracelens_last_writer_and_error)
{
	struct ts_trace t;
	struct ts_tracelens tl;
	struct ts_err err;

	tb_init(&t);
	call(&t, "cudaLaunchKernel", 0, 1);
	flow(&t, 's', 1, 1, 1);
	flow(&t, 'f', 1, 0, 7);
	gpu(&t, TS_CAT_KERNEL, "kernel", "first", 7, 10, 10, 1);
	gpu(&t, TS_CAT_KERNEL, "kernel", "second", 7, 30, 5, 1);
	REQUIRE(ts_tracelens_analyze(&t, 0, &tl, &err) == 0);
	CHECK_I64(tl.linked, 1);
	CHECK_NEAR(tl.all.total_us, 5, 1e-12);
	tb_release(&t);

	tb_init(&t);
	call(&t, "cudaLaunchKernel", 0, 1);
	gpu(&t, TS_CAT_KERNEL, "kernel", "k", 7, 10, 10, 1);
	CHECK_I64(ts_tracelens_analyze(&t, 0, &tl, &err), TS_EPARSE);
	CHECK(strstr(err.msg, "No GPU events found in the trace") != NULL);
	tb_release(&t);
}

/* A recompute span at 4611686018427387 us lasting 5e15 us ends past int64
 * ns (its end overflowed): past 2^61 ns, it is no span, and the launch of
 * gemm [10,20) at 0 us stays outside recompute: split[0] computation 10 us,
 * split[1] none. */
TEST(tracelens_recompute_span_past_int64)
{
	struct ts_trace t;
	struct ts_tracelens tl;
	struct ts_err err;

	tb_init(&t);
	call(&t, "cudaLaunchKernel", 0, 1);
	flow(&t, 's', 1, 1, 1);
	flow(&t, 'f', 1, 0, 7);
	gpu(&t, TS_CAT_KERNEL, "kernel", "sm90_gemm", 7, 10, 10, 1);
	size_t i = tb_ev(&t, TS_CAT_PYTHON, "torch/utils/checkpoint.py(300): recompute_fn", 1, 1,
			 INT64_C(4611686018427387), INT64_C(5000000000000000), -1);
	set_cat(&t, i, "python_function");
	ts_err_init(&err);
	REQUIRE(ts_tracelens_analyze(&t, 1, &tl, &err) == 0);
	CHECK(tl.recompute);
	CHECK_NEAR(tl.split[0].computation_us, 10, 1e-12);
	CHECK_NEAR(tl.split[1].computation_us, 0, 0);
	tb_release(&t);
}

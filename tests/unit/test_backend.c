/*
 * Backend evidence (validate's check 7) on real traces. Reference counts
 * were taken with Python's json module over the same files, outside this
 * code: events whose cat is kernel / cpu_op / user_annotation (cuda_runtime
 * for graph launches) and whose lower-cased name contains the pattern.
 *
 *   trace_diff/test     12 cudaGraphLaunch; 54 all_to_all / alltoall events
 *                       (42 "nccl:all_to_all" + 6 + 6 "## alltoall_* ##")
 *   trace_diff/control  0 graph launches; the same 54 all-to-all events
 *   examples/run-h200   128 cuDNN SDPA events (cudnn + sdpa/attention:
 *                       64 kernels, 64 aten/autograd operators)
 *   cpu/a_dense         80 CPU flash-attention operators, no kernels
 */
#include <string.h>
#include "harness.h"
#include "trainscope/gate.h"

static int scan(const char *path, struct ts_backend_evidence *e)
{
	struct ts_err err;

	ts_backend_evidence_init(e);
	ts_err_init(&err);
	return ts_backend_scan_file(path, e, &err);
}

static int judge(const struct ts_backend_evidence *e, const char *key, const char *value,
		 const char *key2, const char *value2)
{
	struct ts_contract c;
	struct ts_backend_request q;
	struct ts_backend_verdict v;

	ts_contract_init(&c);
	if (key)
		ts_contract_set(&c, key, value);
	if (key2)
		ts_contract_set(&c, key2, value2);
	ts_backend_requested(&c, &q);
	ts_backend_judge(&q, e, &v);
	ts_contract_release(&c);
	return v.status;
}

TEST(backend_graph_replay_and_all_to_all)
{
	const char *test = test_data("traces/hta/trace_diff/test/test.json.gz");
	const char *control = test_data("traces/hta/trace_diff/control/control.json.gz");
	struct ts_backend_evidence et, ec;

	if (ts_test_skipping())
		return;
	REQUIRE(scan(test, &et) == 0);
	REQUIRE(scan(control, &ec) == 0);
	CHECK_I64(et.graph_launches, 12);
	CHECK_I64(ec.graph_launches, 0);
	CHECK_I64(et.coll[TS_COLL_ALLTOALL], 54);
	CHECK_I64(ec.coll[TS_COLL_ALLTOALL], 54);
	CHECK(et.kernels > 0);
	/* graphs requested: replayed in test, never in control */
	CHECK_I64(judge(&et, "workload.graph_impl", "local", NULL, NULL), TS_CHECK_PASS);
	CHECK_I64(judge(&ec, "workload.graph_impl", "local", NULL, NULL), TS_CHECK_FAIL);
	CHECK_I64(judge(&ec, "workload.graph_impl", "none", NULL, NULL), TS_CHECK_SKIP);
	CHECK_I64(judge(&ec, "workload.enable_cuda_graph", "True", NULL, NULL), TS_CHECK_FAIL);
	/* dispatcher: all-to-all ran; DeepEP did not */
	CHECK_I64(judge(&et, "workload.dispatcher", "alltoall", NULL, NULL), TS_CHECK_PASS);
	CHECK_I64(judge(&et, "workload.dispatcher", "flex", "workload.dispatcher_backend", "deepep"),
		  TS_CHECK_FAIL);
	CHECK_I64(judge(&et, "workload.moe_enable_deepep", "True", NULL, NULL), TS_CHECK_FAIL);
	/* the worst item decides */
	CHECK_I64(judge(&ec, "workload.dispatcher", "alltoall", "workload.graph_impl", "local"),
		  TS_CHECK_FAIL);
}

/* examples/run-h200 ships with the repository; the test runs from its root. */
TEST(backend_attention_cudnn_on_h200)
{
	struct ts_backend_evidence eg;
	struct ts_paths files;
	struct ts_err err;

	ts_paths_init(&files);
	ts_err_init(&err);
	REQUIRE(ts_paths_add(&files, "examples/run-h200/traces", 1, &err) == 0);
	REQUIRE(files.n == 1);
	REQUIRE(scan(files.v[0], &eg) == 0);
	ts_paths_release(&files);
	CHECK_I64(eg.attn[TS_ATTN_CUDNN], 128);
	CHECK_I64(eg.attn[TS_ATTN_FLASH], 0);
	CHECK(strncmp(eg.attn_example[TS_ATTN_CUDNN], "cudnn_generated_fort_native_sdpa", 32) == 0);
	/* Megatron prints the enum: AttnBackend.fused is cuDNN fused attention */
	CHECK_I64(judge(&eg, "workload.attention_backend", "AttnBackend.fused", NULL, NULL),
		  TS_CHECK_PASS);
	CHECK_I64(judge(&eg, "workload.attention_backend", "flash", NULL, NULL), TS_CHECK_FAIL);
	CHECK_I64(judge(&eg, "workload.use_flash_attn", "True", NULL, NULL), TS_CHECK_FAIL);
	CHECK_I64(judge(&eg, "workload.attention_backend", "auto", NULL, NULL), TS_CHECK_PASS);
	/* one GPU: no collectives to show a dispatcher */
	CHECK_I64(judge(&eg, "workload.dispatcher", "alltoall", NULL, NULL), TS_CHECK_WARN);
}

TEST(backend_attention_flash_on_cpu)
{
	const char *cpu = test_data("traces/cpu/a_dense/rank0.1795973760440387363.pt.trace.json.gz");
	struct ts_backend_evidence ec;

	if (ts_test_skipping())
		return;
	REQUIRE(scan(cpu, &ec) == 0);
	CHECK_I64(ec.attn[TS_ATTN_FLASH], 80);
	CHECK_I64(ec.kernels, 0);
	CHECK_I64(judge(&ec, "workload.attention_backend", "flash", NULL, NULL), TS_CHECK_PASS);
	CHECK_I64(judge(&ec, "workload.attention_backend", "unfused", NULL, NULL), TS_CHECK_FAIL);
	/* a CPU trace cannot show graph replay */
	CHECK_I64(judge(&ec, "workload.graph_impl", "local", NULL, NULL), TS_CHECK_WARN);
	CHECK_I64(judge(&ec, NULL, NULL, NULL, NULL), TS_CHECK_SKIP);
}

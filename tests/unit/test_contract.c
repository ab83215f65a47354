/* Unit tests for measurement contracts: capture through a fake machine,
 * Megatron arguments, labels, JSON round trip, diff, bad input. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"
#include "trainscope/contract.h"

static char root[256];

static void put(const char *rel, const char *text)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	if (system(cmd) != 0)
		return;
	f = fopen(path, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static const char *gmi_text;

/* The fake runner: canned output per tool, "not installed" otherwise. */
static int fake_run(void *ctx, const char *const argv[], struct ts_sb *out)
{
	(void)ctx;
	if (strcmp(argv[0], "nvidia-smi") == 0) {
		/* nvidia-smi --query-gpu=name,driver_version,memory.total
		 * --format=csv,noheader,nounits prints one line per GPU */
		ts_sb_adds(out, "NVIDIA H100 80GB HBM3, 550.54.15, 81559\n"
				"NVIDIA H100 80GB HBM3, 550.54.15, 81559\n");
		return 0;
	}
	if (strcmp(argv[0], "mthreads-gmi") == 0 && gmi_text) {
		ts_sb_adds(out, gmi_text);
		return 0;
	}
	if (strcmp(argv[0], "python3") == 0) {
		ts_sb_adds(out, "python=3.11.2\ntorch=2.6.0\ntorch.cuda=12.4\ntorch.hip=None\n"
				"torch.nccl=2.21.5\ntorch_musa=absent\n");
		return 0;
	}
	return -1;
}

static void make_root(void)
{
	char cmd[300];

	snprintf(root, sizeof(root), "/tmp/ts-contract-root-%ld", (long)getpid());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return;
	put("/etc/os-release", "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n");
	put("/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
	put("/proc/sys/kernel/arch", "x86_64\n");
	put("/proc/sys/kernel/hostname", "node7\n");
	put("/proc/cpuinfo", "processor\t: 0\nmodel name\t: AMD EPYC 9654\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 9654\n");
	put("/proc/meminfo", "MemTotal:       2048 kB\nMemFree: 1 kB\n");
	put("/usr/local/cuda/version.json", "{\n   \"cuda\" : {\n      \"name\" : \"CUDA SDK\",\n      \"version\" : \"12.4.1\"\n   }\n}\n");
	put("/usr/lib/x86_64-linux-gnu/libnccl.so.2.9.9", "");
	put("/usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5", "");
	put("/usr/lib/x86_64-linux-gnu/libnccl.so.2", "");
}

static void drop_root(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return;
}

TEST(contract_capture_fake_machine)
{
	char *envp[] = { "NCCL_ALGO=Ring", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
			 "HOME=/root", "TORCH_NCCL_AVOID_RECORD_STREAMS=1", NULL };
	struct ts_probe p = { fake_run, NULL, envp, root };
	struct ts_contract c;
	struct ts_err err;
	int found = 0;

	make_root();
	gmi_text = NULL;
	ts_contract_init(&c);
	ts_err_init(&err);
	REQUIRE(ts_contract_capture_env(&c, &p, &err) == 0);
	REQUIRE(ts_contract_finish(&c) == 0);
	CHECK_STR(ts_contract_get(&c, "environment.os", NULL), "Debian GNU/Linux 12 (bookworm)");
	CHECK_STR(ts_contract_get(&c, "environment.kernel", NULL), "6.1.0-18-amd64");
	CHECK_STR(ts_contract_get(&c, "environment.cpu.model", NULL), "AMD EPYC 9654");
	CHECK_STR(ts_contract_get(&c, "environment.cpu.count", NULL), "2");
	CHECK_STR(ts_contract_get(&c, "environment.memory_bytes", NULL), "2097152"); /* 2048 kB */
	CHECK_STR(ts_contract_get(&c, "environment.gpu.count", NULL), "2");
	CHECK_STR(ts_contract_get(&c, "environment.gpu.name", NULL), "NVIDIA H100 80GB HBM3");
	CHECK_STR(ts_contract_get(&c, "environment.gpu.driver", NULL), "550.54.15");
	CHECK_STR(ts_contract_get(&c, "environment.cuda.sdk", NULL), "12.4.1");
	/* 2.21.5 is newer than 2.9.9: numeric, not byte, comparison */
	CHECK_STR(ts_contract_get(&c, "environment.nccl.lib", NULL),
		  "2.21.5 (/usr/lib/x86_64-linux-gnu)");
	CHECK_STR(ts_contract_get(&c, "environment.mthreads_gmi", NULL), "absent");
	CHECK_STR(ts_contract_get(&c, "environment.musa.sdk", NULL), "absent");
	CHECK_STR(ts_contract_get(&c, "environment.mccl.lib", NULL), "absent");
	CHECK_STR(ts_contract_get(&c, "environment.torch", NULL), "2.6.0");
	CHECK_STR(ts_contract_get(&c, "environment.torch.nccl", NULL), "2.21.5");
	CHECK_STR(ts_contract_get(&c, "environment.torch_musa", NULL), "absent");
	ts_contract_get(&c, "environment.torch.hip", &found);
	CHECK(!found); /* "None" is not recorded */
	CHECK_STR(ts_contract_get(&c, "environment.env.NCCL_ALGO", NULL), "Ring");
	CHECK_STR(ts_contract_get(&c, "environment.env.TORCH_NCCL_AVOID_RECORD_STREAMS", NULL), "1");
	CHECK_STR(ts_contract_get(&c, "environment.env.PYTORCH_CUDA_ALLOC_CONF", NULL),
		  "expandable_segments:True");
	CHECK_STR(ts_contract_get(&c, "environment.env.CUDA_DEVICE_MAX_CONNECTIONS", NULL), "unset");
	ts_contract_get(&c, "environment.env.HOME", &found);
	CHECK(!found);
	CHECK_STR(c.captured_host, "node7");
	CHECK(!c.benchmark_only);
	ts_contract_release(&c);
	drop_root();
}

TEST(contract_capture_mthreads_gmi_sample)
{
	struct ts_probe p = { fake_run, NULL, NULL, "/nonexistent-root" };
	struct ts_contract c;
	struct ts_err err;
	struct ts_sb sb;
	FILE *f;
	char buf[4096];
	size_t n;
	DATA_OR_SKIP(path, "telemetry/mthreads-gmi_default_S5000_gmi2.3.2_partial.txt");

	ts_sb_init(&sb);
	f = fopen(path, "r");
	REQUIRE(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		ts_sb_add(&sb, buf, n);
	fclose(f);
	gmi_text = sb.buf;
	ts_contract_init(&c);
	ts_err_init(&err);
	REQUIRE(ts_contract_capture_env(&c, &p, &err) == 0);
	/* the sample's banner says Driver Version:3.3.5-server and lists GPUs 0, 1, 2 */
	CHECK_STR(ts_contract_get(&c, "environment.mthreads_gmi", NULL), "present");
	CHECK_STR(ts_contract_get(&c, "environment.gpu.vendor", NULL), "mthreads");
	CHECK_STR(ts_contract_get(&c, "environment.gpu.driver", NULL), "3.3.5-server");
	CHECK_STR(ts_contract_get(&c, "environment.gpu.count", NULL), "3");
	CHECK_STR(ts_contract_get(&c, "environment.gpu.name", NULL), "MTT S5000");
	/* files under a missing root are unknown, not invented */
	CHECK(ts_contract_get(&c, "environment.os", NULL) == NULL);
	gmi_text = NULL;
	ts_sb_release(&sb);
	ts_contract_release(&c);
}

TEST(contract_no_runner_means_unknown_not_absent)
{
	struct ts_probe p = { NULL, NULL, NULL, "/nonexistent-root" };
	struct ts_contract c;
	struct ts_err err;
	int found = 0;

	ts_contract_init(&c);
	ts_err_init(&err);
	REQUIRE(ts_contract_capture_env(&c, &p, &err) == 0);
	CHECK(ts_contract_get(&c, "environment.nvidia_smi", &found) == NULL);
	CHECK(found);
	CHECK(ts_contract_get(&c, "environment.python", NULL) == NULL);
	ts_contract_release(&c);
}

static const char megatron_args[] =
	"using world size: 8, data-parallel size: 4, context-parallel size: 1\n"
	"------------------------ arguments ------------------------\n"
	"  bf16 ............................................ True\n"
	"  check_for_nan_in_loss_and_grad .................. False\n"
	"  data_parallel_size .............................. 4\n"
	"  fp16 ............................................ False\n"
	"  fp8 ............................................. None\n"
	"  global_batch_size ............................... 256\n"
	"  micro_batch_size ................................ 2\n"
	"  moe_token_dispatcher_type ....................... alltoall\n"
	"  pipeline_model_parallel_size .................... 2\n"
	"  recompute_granularity ........................... selective\n"
	"  save ............................................ /ckpt/run1\n"
	"  seq_length ...................................... 4096\n"
	"  tensor_model_parallel_size ...................... 1\n"
	"  world_size ...................................... 8\n"
	"-------------------- end of arguments ---------------------\n"
	"  not_an_arg ...................................... 99\n";

TEST(contract_from_megatron_args)
{
	char path[256];
	struct ts_contract c;
	struct ts_err err;
	FILE *f;
	int found = 1;

	snprintf(path, sizeof(path), "/tmp/ts-contract-args-%ld.log", (long)getpid());
	f = fopen(path, "w");
	REQUIRE(f);
	fputs(megatron_args, f);
	fclose(f);
	ts_contract_init(&c);
	ts_err_init(&err);
	REQUIRE(ts_contract_from_log(&c, path, &err) == 0);
	REQUIRE(ts_contract_finish(&c) == 0);
	CHECK_STR(ts_contract_get(&c, "workload.tp", NULL), "1");
	CHECK_STR(ts_contract_get(&c, "workload.pp", NULL), "2");
	CHECK_STR(ts_contract_get(&c, "workload.dp", NULL), "4");
	CHECK_STR(ts_contract_get(&c, "workload.device_count", NULL), "8");
	CHECK_STR(ts_contract_get(&c, "workload.seq_length", NULL), "4096");
	CHECK_STR(ts_contract_get(&c, "workload.precision", NULL), "bf16");
	/* 256 / (2 x 4) = 32 micro-batches accumulated per step */
	CHECK_STR(ts_contract_get(&c, "workload.grad_accumulation", NULL), "32");
	CHECK_STR(ts_contract_get(&c, "workload.dispatcher", NULL), "alltoall");
	CHECK_STR(ts_contract_get(&c, "workload.recompute", NULL), "selective");
	CHECK_STR(ts_contract_get(&c, "workload.checkpointing", NULL), "true");
	ts_contract_get(&c, "workload.not_an_arg", &found);
	CHECK(!found);
	/* NaN checks off makes it benchmark-only */
	CHECK(c.benchmark_only);
	REQUIRE(c.reasons.n == 1);
	CHECK(strstr(c.reasons.v[0], "NaN") != NULL);
	ts_contract_release(&c);

	/* a log without the block is an error naming the file */
	f = fopen(path, "w");
	REQUIRE(f);
	fputs(" iteration 1/ 10 | elapsed time per iteration (ms): 100.0 |\n", f);
	fclose(f);
	ts_contract_init(&c);
	CHECK_I64(ts_contract_from_log(&c, path, &err), TS_EPARSE);
	CHECK_STR(err.path, path);
	ts_contract_release(&c);
	unlink(path);
}

TEST(contract_round_trip_and_diff)
{
	struct ts_contract a, b, c;
	struct ts_contract_diff *d = NULL;
	struct ts_err err;
	struct ts_sb out;
	size_t n = 99;

	ts_contract_init(&a);
	ts_contract_init(&b);
	ts_contract_init(&c);
	ts_sb_init(&out);
	ts_err_init(&err);
	CHECK_I64(ts_contract_apply_set(&a, "model=llama3-8b", &err), 0);
	CHECK_I64(ts_contract_apply_set(&a, "tp=2", &err), 0);
	CHECK_I64(ts_contract_apply_set(&a, "environment.env.NCCL_ALGO=Ring", &err), 0);
	CHECK_I64(ts_contract_apply_set(&a, "workload.data=\"/d/x\" \\ y", &err), 0);
	CHECK_I64(ts_contract_apply_set(&a, "novalue", &err), TS_EUSAGE);
	CHECK_I64(ts_contract_apply_set(&a, "=x", &err), TS_EUSAGE);
	a.captured_time = "2026-01-01T00:00:00Z";
	REQUIRE(ts_contract_finish(&a) == 0);
	ts_contract_write(&a, &out);
	REQUIRE(ts_contract_read_mem(&b, out.buf, out.len, "a.json", &err) == 0);
	CHECK_STR(ts_contract_get(&b, "workload.data", NULL), "\"/d/x\" \\ y");
	CHECK_STR(b.captured_time, "2026-01-01T00:00:00Z");
	REQUIRE(ts_contract_diff(&a, &b, &d, &n) == 0);
	CHECK_I64(n, 0);
	free(d);
	/* two changed fields and one only in c */
	ts_contract_set(&b, "workload.tp", "4");
	ts_contract_set(&b, "environment.env.NCCL_ALGO", "Tree");
	ts_contract_set(&b, "workload.mock_data", "true");
	REQUIRE(ts_contract_finish(&b) == 0);
	CHECK(b.benchmark_only);
	REQUIRE(ts_contract_diff(&a, &b, &d, &n) == 0);
	REQUIRE(n == 3);
	CHECK_STR(d[0].key, "environment.env.NCCL_ALGO");
	CHECK_STR(d[0].a, "Ring");
	CHECK_STR(d[0].b, "Tree");
	CHECK_STR(d[1].key, "workload.mock_data");
	CHECK(d[1].a == NULL);
	CHECK_STR(d[2].key, "workload.tp");
	free(d);
	/* nested objects and arrays flatten */
	{
		static const char doc[] = "{\"schema\": \"trainscope.contract/1\", \"workload\": "
			"{\"layout\": {\"tp\": 2, \"pp\": null}, \"scopes\": [\"attn\", \"moe_router\"], "
			"\"det\": true}}";
		REQUIRE(ts_contract_read_mem(&c, doc, sizeof(doc) - 1, "n.json", &err) == 0);
		CHECK_STR(ts_contract_get(&c, "workload.layout.tp", NULL), "2");
		CHECK(ts_contract_get(&c, "workload.layout.pp", NULL) == NULL);
		CHECK_STR(ts_contract_get(&c, "workload.scopes", NULL), "attn,moe_router");
		CHECK_STR(ts_contract_get(&c, "workload.det", NULL), "true");
	}
	ts_sb_release(&out);
	ts_contract_release(&a);
	ts_contract_release(&b);
	ts_contract_release(&c);
}

TEST(contract_bad_input)
{
	struct ts_contract c;
	struct ts_err err;
	static const char wrong[] = "{\"schema\": \"trainscope.ab/1\"}";
	static const char broken[] = "{\"schema\": \"trainscope.contract/1\", \"workload\": {\"a\": }";
	static const char none[] = "{\"workload\": {}}";

	ts_err_init(&err);
	ts_contract_init(&c);
	CHECK_I64(ts_contract_read_mem(&c, wrong, sizeof(wrong) - 1, "w.json", &err), TS_EPARSE);
	CHECK_I64(err.offset, 11); /* the schema value starts at byte 11 */
	ts_contract_release(&c);
	ts_contract_init(&c);
	CHECK_I64(ts_contract_read_mem(&c, broken, sizeof(broken) - 1, "b.json", &err), TS_EPARSE);
	CHECK_I64(err.offset, 54); /* the "}" where a value was expected */
	ts_contract_release(&c);
	ts_contract_init(&c);
	CHECK_I64(ts_contract_read_mem(&c, none, sizeof(none) - 1, "n.json", &err), TS_EPARSE);
	ts_contract_release(&c);
	ts_contract_init(&c);
	CHECK_I64(ts_contract_read(&c, "/nonexistent/contract.json", &err), TS_EIO);
	ts_contract_release(&c);
}

/* Pathological input with a time budget: 100 000 keys read in linear time
 * (a quadratic duplicate search would take minutes); a repeated key keeps
 * its last value. */
TEST(contract_many_keys_linear)
{
	struct ts_contract c;
	struct ts_err err;
	struct ts_sb doc;
	struct timespec t0, t1;
	double secs;

	ts_sb_init(&doc);
	ts_sb_adds(&doc, "{\"schema\": \"trainscope.contract/1\", \"workload\": {\"dup\": \"first\"");
	for (int i = 0; i < 100000; i++)
		ts_sb_addf(&doc, ", \"k%d\": \"v%d\"", i, i);
	ts_sb_adds(&doc, ", \"dup\": \"last\"}}");
	REQUIRE(!doc.failed);
	ts_contract_init(&c);
	ts_err_init(&err);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	REQUIRE(ts_contract_read_mem(&c, doc.buf, doc.len, "big.json", &err) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	CHECK(secs < 5.0);
	CHECK_I64(c.fields.n, 100001);
	CHECK_STR(ts_contract_get(&c, "workload.dup", NULL), "last");
	CHECK_STR(ts_contract_get(&c, "workload.k99999", NULL), "v99999");
	ts_contract_release(&c);
	ts_sb_release(&doc);
}

TEST(contract_accumulation_product_past_int64)
{
	/* micro_batch_size 4294967296 x data_parallel_size 4294967296 = 2^64
	 * wrapped to 0 (gv % 0): no accumulation is derived; 512 / (4 x 8) = 16
	 * is */
	static const char huge[] =
		"------------------------ arguments ------------------------\n"
		"  data_parallel_size .............................. 4294967296\n"
		"  global_batch_size ............................... 256\n"
		"  micro_batch_size ................................ 4294967296\n"
		"-------------------- end of arguments ---------------------\n";
	static const char ok[] =
		"------------------------ arguments ------------------------\n"
		"  data_parallel_size .............................. 8\n"
		"  global_batch_size ............................... 512\n"
		"  micro_batch_size ................................ 4\n"
		"-------------------- end of arguments ---------------------\n";
	struct ts_contract c;
	struct ts_err err;
	int found = 1;

	ts_contract_init(&c);
	ts_err_init(&err);
	REQUIRE(ts_contract_from_log_mem(&c, huge, sizeof(huge) - 1, "h.log", &err) == 0);
	ts_contract_get(&c, "workload.grad_accumulation", &found);
	CHECK(!found);
	ts_contract_release(&c);
	ts_contract_init(&c);
	REQUIRE(ts_contract_from_log_mem(&c, ok, sizeof(ok) - 1, "o.log", &err) == 0);
	CHECK_STR(ts_contract_get(&c, "workload.grad_accumulation", NULL), "16");
	ts_contract_release(&c);
}

TEST(contract_memtotal_past_int64)
{
	/* MemTotal 9007199254740993 kB x 1024 is past int64 (it overflowed):
	 * no memory size is recorded */
	struct ts_probe p = { fake_run, NULL, NULL, root };
	struct ts_contract c;
	struct ts_err err;
	int found = 1;

	make_root();
	put("/proc/meminfo", "MemTotal:       9007199254740993 kB\n");
	gmi_text = NULL;
	ts_contract_init(&c);
	ts_err_init(&err);
	REQUIRE(ts_contract_capture_env(&c, &p, &err) == 0);
	ts_contract_get(&c, "environment.memory_bytes", &found);
	CHECK(!found);
	ts_contract_release(&c);
	drop_root();
}

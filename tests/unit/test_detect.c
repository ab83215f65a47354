/*
 * test_detect.c - classification by content: prose that quotes log or
 * telemetry lines is text, the lines themselves are what they are; the
 * vendor of a trace whose device events come after its first 256 KiB;
 * names that promise an input the content is not (ts_detect_misnamed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "trainscope/detect.h"

static const char iter_line[] =
	" [2024-05-01 12:00:00] iteration       10/     100 | consumed samples:          640 | "
	"elapsed time per iteration (ms): 1234.5 | learning rate: 1.000000E-04 | "
	"lm loss: 7.123456E+00 | loss scale: 1.0 | grad norm: 1.234 |\n";

TEST(detect_prose_quoting_log_lines_is_text)
{
	char buf[8192];
	size_t n = 0;
	char vendor[16];

	/* a PROVENANCE-like note: eight sentences and one quoted record */
	static const char *const sentences[] = {
		"Provenance of the log excerpts that are kept in this folder\n",
		"All files are verbatim excerpts of training log text that users pasted.\n",
		"They were collected from public issues and kept exactly as they were printed.\n",
		"Only complete lines were kept and lines cut by the excerpt were dropped.\n",
		"The record below shows the grammar that the parser has to accept here.\n",
		"Nothing else was altered in any of the files that are listed below.\n",
		"They are data for the parser tests and are not meant to be read as logs.\n",
		"Each entry names the source thread and the format of the excerpt it holds.\n",
	};
	for (size_t i = 0; i < sizeof(sentences) / sizeof(*sentences); i++) {
		memcpy(buf + n, sentences[i], strlen(sentences[i]));
		n += strlen(sentences[i]);
	}
	memcpy(buf + n, iter_line, sizeof(iter_line) - 1);
	n += sizeof(iter_line) - 1;
	CHECK_I64(ts_detect_buffer(buf, n, vendor, sizeof(vendor)), TS_KIND_TEXT);
	/* the record alone, and a log with a few warnings around it, stay a log */
	CHECK_I64(ts_detect_buffer(iter_line, sizeof(iter_line) - 1, vendor, sizeof(vendor)),
		  TS_KIND_LOG_MEGATRON);
	n = 0;
	for (int i = 0; i < 3; i++) {
		memcpy(buf + n, sentences[i], strlen(sentences[i]));
		n += strlen(sentences[i]);
		memcpy(buf + n, iter_line, sizeof(iter_line) - 1);
		n += sizeof(iter_line) - 1;
	}
	CHECK_I64(ts_detect_buffer(buf, n, vendor, sizeof(vendor)), TS_KIND_LOG_MEGATRON);
}

/* A "schema" whose value is a container is skipped whole: its members are
 * not the file's top-level keys (a "traceEvents" inside it made a model
 * config a Kineto trace). */
/* DeepSpeed's pipeline engine prints no throughput line: its log is known
 * by train_batch's record (deepspeed/runtime/pipe/engine.py) */
TEST(detect_deepspeed_pipeline_log)
{
	static const char log[] =
		"[2023-11-07 01:50:42,197] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, "
		"lr=[4.99e-05], mom=[(0.9, 0.95)]\n"
		"steps: 10 loss: 2.2900 iter time (s): 1.220 samples/sec: 52.459\n"
		"[2023-11-07 01:50:50,181] [INFO] [logging.py:96:log_dist] [Rank 0] step=20, skipped=0, "
		"lr=[4.99e-05], mom=[(0.9, 0.95)]\n"
		"steps: 20 loss: 2.2800 iter time (s): 0.798 samples/sec: 80.201\n";
	char vendor[16];

	CHECK_I64(ts_detect_buffer(log, sizeof(log) - 1, vendor, sizeof(vendor)), TS_KIND_LOG_DEEPSPEED);
}

/* qlora-pipe's subclass of that engine prints its record through its own
 * log() (tdrussell/qlora-pipe engine.py): "step: N / T", not "steps: N" */
TEST(detect_qlora_pipe_log)
{
	static const char log[] =
		"[2023-11-07 01:50:42,231] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, "
		"lr=[4.99e-05], mom=[(0.9, 0.95)]\n"
		"[2023-11-07 01:50:42.234] [INFO] [qlora-pipe] step:    10 /   300 loss: 2.2900 "
		"iter time (s): 1.223 samples/sec: 52.326 eta (h): 0.099\n"
		"[2023-11-07 01:50:50,245] [INFO] [logging.py:96:log_dist] [Rank 0] step=20, skipped=0, "
		"lr=[4.99e-05], mom=[(0.9, 0.95)]\n"
		"[2023-11-07 01:50:50.248] [INFO] [qlora-pipe] step:    20 /   300 loss: 2.2800 "
		"iter time (s): 0.801 samples/sec: 79.854 eta (h): 0.062\n";
	char vendor[16];

	CHECK_I64(ts_detect_buffer(log, sizeof(log) - 1, vendor, sizeof(vendor)), TS_KIND_LOG_DEEPSPEED);
}

TEST(detect_schema_container_value)
{
	static const char a[] = "{\"schema\": {\"traceEvents\": 1}, \"model_type\": \"llama\", \"num_hidden_layers\": 2}";
	static const char b[] = "{\"schema\": [1], \"model_type\": \"llama\", \"num_hidden_layers\": 2}";
	char vendor[32];

	CHECK_I64(ts_detect_buffer(a, sizeof(a) - 1, vendor, sizeof(vendor)), TS_KIND_HF_CONFIG);
	CHECK_I64(ts_detect_buffer(b, sizeof(b) - 1, vendor, sizeof(vendor)), TS_KIND_HF_CONFIG);
}

TEST(detect_markdown_naming_mtt_devices_is_text)
{
	static const char md[] =
		"# Expected parser values for the telemetry samples\n"
		"\n"
		"## mthreads-gmi_default_S4000.txt (default table)\n"
		"- L3 `mthreads-gmi:2.2.0`, `Driver Version:3.0.0`.\n"
		"- GPU 0: `MTT S4000`, bus `00000000:08:00.0`, util 0 %, used 0 MiB.\n"
		"- GPU 1: `MTT S4000`, bus `00000000:09:00.0`, util 0 %, used 0 MiB.\n"
		"- GPU 2: `MTT S4000`, bus `00000000:0a:00.0`, util 0 %, used 0 MiB.\n"
		"- GPU 3: `MTT S4000`, bus `00000000:0b:00.0`, util 0 %, used 0 MiB.\n"
		"Source: https://example.org/thread/1 (a public issue).\n"
		"Source: https://example.org/thread/2 (a public issue).\n";
	static const char table[] =
		"Tue Nov 12 20:55:00 2024\n"
		"---------------------------------------------------------------\n"
		"    mthreads-gmi:1.12.2          Driver Version:1.2.0\n"
		"---------------------------------------------------------------\n"
		"0    MTT S4000      |00000000:08:00.0    |88%   44302MiB(32768MiB)\n";
	char vendor[16];

	CHECK_I64(ts_detect_buffer(md, sizeof(md) - 1, vendor, sizeof(vendor)), TS_KIND_TEXT);
	CHECK_I64(ts_detect_buffer(table, sizeof(table) - 1, vendor, sizeof(vendor)),
		  TS_KIND_TELEMETRY_GMI);
	CHECK_I64(ts_detect_buffer(NULL, 0, vendor, sizeof(vendor)), TS_KIND_TEXT);
}

/* 300 KiB of CPU operators, then one kernel event: a CUDA trace (the
 * prefix alone says cpu). */
TEST(detect_trace_vendor_after_the_prefix)
{
	static const char head[] = "{\"schemaVersion\": 1, \"traceEvents\": [\n";
	static const char cpu[] = "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", "
				  "\"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1},\n";
	static const char gpu[] = "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_gemm\", "
				  "\"pid\": 0, \"tid\": 7, \"ts\": 2, \"dur\": 1}]}\n";
	char path[] = "/tmp/ts_detect_XXXXXX";
	struct ts_detect d;
	struct ts_err err;
	FILE *f;
	int fd = mkstemp(path);

	REQUIRE(fd >= 0);
	f = fdopen(fd, "w");
	REQUIRE(f);
	fputs(head, f);
	for (size_t b = 0; b < (300u << 10); b += sizeof(cpu) - 1)
		fputs(cpu, f);
	fputs(gpu, f);
	fclose(f);
	ts_err_init(&err);
	REQUIRE(ts_detect_file(path, &d, &err) == 0);
	CHECK_I64(d.kind, TS_KIND_KINETO_TRACE);
	CHECK_STR(d.vendor, "cuda");
	remove(path);
}

/* A name that promises an input its content is not: tensorboard_trace_handler's
 * "*.pt.trace.json[.gz]" on anything but a trace (binary, text, empty, another
 * kind), and any "*.nsys-rep" (read only through its SQLite export). Other
 * names and kept promises give NULL. */
TEST(detect_misnamed_inputs)
{
	struct ts_detect d = { .kind = TS_KIND_BINARY, .bytes = 300 };
	char buf[600];
	const char *m;

	m = ts_detect_misnamed("run/rank0.123.pt.trace.json", &d, buf, sizeof(buf));
	REQUIRE(m != NULL);
	CHECK(strstr(m, "named like a PyTorch profiler trace, but its content is binary") != NULL);
	d.bytes = 0;
	d.kind = TS_KIND_TEXT;
	m = ts_detect_misnamed("rank2.pt.trace.json.gz", &d, buf, sizeof(buf));
	REQUIRE(m != NULL);
	CHECK(strstr(m, "its content is empty") != NULL);
	d.bytes = 10;
	d.kind = TS_KIND_LOG_MEGATRON;
	m = ts_detect_misnamed("rank2.pt.trace.json", &d, buf, sizeof(buf));
	REQUIRE(m != NULL);
	CHECK(strstr(m, "its content is log-megatron") != NULL);
	d.kind = TS_KIND_KINETO_TRACE;
	CHECK(ts_detect_misnamed("rank2.pt.trace.json", &d, buf, sizeof(buf)) == NULL);
	d.kind = TS_KIND_LEGACY_TRACE;
	CHECK(ts_detect_misnamed("rank2.pt.trace.json.gz", &d, buf, sizeof(buf)) == NULL);
	d.kind = TS_KIND_BINARY;
	CHECK(ts_detect_misnamed("model.pt", &d, buf, sizeof(buf)) == NULL);
	CHECK(ts_detect_misnamed("trace.json", &d, buf, sizeof(buf)) == NULL);
	m = ts_detect_misnamed("prof/report1.nsys-rep", &d, buf, sizeof(buf));
	REQUIRE(m != NULL);
	CHECK(strstr(m, "nsys export --type sqlite prof/report1.nsys-rep") != NULL);
}

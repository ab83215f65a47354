/*
 * test_bom.c - a UTF-8 byte order mark (EF BB BF) before an input, as
 * Windows editors and Excel's "CSV UTF-8" write it, is not data: every
 * reader gives the same answer with and without it. Each case reads the
 * same hand-written text twice, with and without the mark; a mark that is
 * not at offset 0 stays data.
 */
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "trainscope/detect.h"
#include "trainscope/hang.h"
#include "trainscope/input.h"
#include "trainscope/json.h"
#include "trainscope/telemetry.h"

#define BOM "\xef\xbb\xbf"

TEST(bom_len)
{
	CHECK_I64((int64_t)ts_bom_len(BOM "x", 4), 3);
	CHECK_I64((int64_t)ts_bom_len(BOM, 3), 3);
	CHECK_I64((int64_t)ts_bom_len("\xef\xbb", 2), 0);
	CHECK_I64((int64_t)ts_bom_len("x" BOM, 4), 0);
	CHECK_I64((int64_t)ts_bom_len(NULL, 0), 0);
}

/* the first line loses the mark and starts at offset 3; a mark at the
 * start of a later line is that line's text */
TEST(bom_getline_first_line_only)
{
	static const char text[] = BOM "ab\n" BOM "cd\n";
	struct ts_input in;
	struct ts_err err;
	const char *line;
	size_t n;
	uint64_t off;

	REQUIRE(ts_input_open_mem(&in, text, sizeof(text) - 1, "m.txt", &err) == 0);
	REQUIRE(ts_input_getline(&in, &line, &n, &off, &err) == 1);
	CHECK(n == 2 && memcmp(line, "ab", 2) == 0);
	CHECK_I64((int64_t)off, 3);
	REQUIRE(ts_input_getline(&in, &line, &n, &off, &err) == 1);
	CHECK(n == 5 && memcmp(line, BOM "cd", 5) == 0);
	CHECK_I64((int64_t)off, 6);
	CHECK_I64(ts_input_getline(&in, &line, &n, &off, &err), 0);
	ts_input_release(&in);

	/* a file that is only the mark (no newline) is one empty line */
	REQUIRE(ts_input_open_mem(&in, BOM, 3, "m.txt", &err) == 0);
	REQUIRE(ts_input_getline(&in, &line, &n, &off, &err) == 1);
	CHECK_I64((int64_t)n, 0);
	CHECK_I64(ts_input_getline(&in, &line, &n, &off, &err), 0);
	ts_input_release(&in);
}

/* the JSON tokenizer: the mark before the document is skipped, one after
 * a value (the second of a JSONL stream) is an error at its offset */
TEST(bom_json_document_start)
{
	static const char one[] = BOM "{\"a\": 1}";
	static const char two[] = BOM "{\"a\": 1}\n" BOM "{\"a\": 2}\n";
	struct ts_json j;
	struct ts_err err;
	int t;

	ts_err_init(&err);
	ts_json_init_mem(&j, one, sizeof(one) - 1, 0, "one.json");
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_OBJ);
	CHECK_I64((int64_t)j.tok_offset, 3);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_KEY);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_NUM);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_OBJ_END);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_EOF);
	ts_json_release(&j);

	ts_json_init_mem(&j, two, sizeof(two) - 1, TS_JSON_MULTI, "two.jsonl");
	while ((t = ts_json_next(&j, &err)) > 0)
		;
	CHECK_I64(t, TS_EPARSE);
	CHECK_I64(err.offset, 12); /* 3 + 8 bytes of the first record + its newline */
	ts_json_release(&j);
}

/* detection sees through the mark: a metrics JSONL and a dmon capture are
 * what they are with it */
TEST(bom_detect_same_kind)
{
	static const char jsonl[] =
		"{\"iteration\": 1, \"step_time_ms\": 512.0, \"loss\": 7.5}\n"
		"{\"iteration\": 2, \"step_time_ms\": 498.0, \"loss\": 7.4}\n"
		"{\"iteration\": 3, \"step_time_ms\": 501.0, \"loss\": 7.3}\n";
	char buf[512], vendor[16];
	enum ts_kind plain = ts_detect_buffer(jsonl, sizeof(jsonl) - 1, vendor, sizeof(vendor));

	CHECK_I64(plain, TS_KIND_METRICS_JSONL);
	memcpy(buf, BOM, 3);
	memcpy(buf + 3, jsonl, sizeof(jsonl) - 1);
	CHECK_I64(ts_detect_buffer(buf, sizeof(jsonl) + 2, vendor, sizeof(vendor)), plain);
}

/* an empty input (no buffer at all, as an empty file maps) and a mark
 * alone are both empty text; neither offsets the absent buffer (clang's
 * UBSan stopped the fuzzer on "zero offset to null pointer") */
TEST(bom_empty_inputs)
{
	char vendor[16];

	CHECK_I64(ts_detect_buffer(NULL, 0, vendor, sizeof(vendor)), TS_KIND_TEXT);
	CHECK_I64(ts_detect_buffer(BOM, 3, vendor, sizeof(vendor)), TS_KIND_TEXT);
}

static const char dmon[] =
	"# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk\n"
	"# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz\n"
	"    0     86     33      -     30     27      0      0      0      0   6250   1710\n"
	"    0    267     39      -    100     95      0      0      0      0   6250   1710\n";

/* the dmon capture reads as two samples of GPU 0 either way, the mark's
 * file included (it was refused as "not a telemetry capture") */
TEST(bom_telemetry_dmon)
{
	char buf[sizeof(dmon) + 3];
	struct ts_telemetry t;
	struct ts_err err;

	for (int with = 0; with < 2; with++) {
		size_t n = 0;
		if (with) {
			memcpy(buf, BOM, 3);
			n = 3;
		}
		memcpy(buf + n, dmon, sizeof(dmon) - 1);
		n += sizeof(dmon) - 1;
		ts_tele_init(&t);
		ts_err_init(&err);
		REQUIRE(ts_tele_read_mem(&t, buf, n, "dmon.txt", NULL, &err) == 0);
		CHECK_I64((int64_t)t.gpus.n, 1);
		CHECK_I64((int64_t)t.samples.n, 2);
		ts_tele_release(&t);
	}
}

/* nothing to read, with or without the mark: refused the same way */
TEST(bom_telemetry_empty)
{
	struct ts_telemetry t;
	struct ts_err err;

	for (int with = 0; with < 2; with++) {
		ts_tele_init(&t);
		ts_err_init(&err);
		CHECK(ts_tele_read_mem(&t, with ? BOM : NULL, with ? 3 : 0, "empty.csv", NULL, &err) != 0);
		CHECK(strstr(err.msg, "empty.csv") != NULL || strstr(err.path, "empty.csv") != NULL);
		ts_tele_release(&t);
	}
}

/* a Flight Recorder dump written as JSON text after a mark is one dump of
 * one entry (it was read as log lines: no dump) */
TEST(bom_hang_fr_dump_text)
{
	static const char dump[] =
		"{\"version\": \"2.5\", \"pg_config\": {\"0\": {\"name\": \"0\", "
		"\"desc\": \"default_pg\", \"ranks\": \"[0, 1]\"}}, \"entries\": [{"
		"\"record_id\": 0, \"pg_id\": 0, \"process_group\": [\"0\", \"default_pg\"], "
		"\"collective_seq_id\": 1, \"p2p_seq_id\": 0, \"op_id\": 1, "
		"\"profiling_name\": \"nccl:all_reduce\", \"time_created_ns\": 1, "
		"\"input_sizes\": [[4]], \"input_dtypes\": [\"Float\"], "
		"\"output_sizes\": [[4]], \"output_dtypes\": [\"Float\"], "
		"\"state\": \"completed\", \"time_discovered_started_ns\": 2, "
		"\"time_discovered_completed_ns\": 3, \"retired\": true, "
		"\"timeout_ms\": 600000, \"is_p2p\": false}]}";
	char buf[sizeof(dump) + 3];
	struct ts_hang_set s;
	struct ts_err err;

	memcpy(buf, BOM, 3);
	memcpy(buf + 3, dump, sizeof(dump) - 1);
	for (int with = 0; with < 2; with++) {
		ts_hang_set_init(&s);
		ts_err_init(&err);
		REQUIRE(ts_hang_read_mem(&s, with ? buf : dump, sizeof(dump) - 1 + (with ? 3 : 0),
					 "nccl_trace_rank_0", &err) == 0);
		CHECK_I64((int64_t)s.dumps.n, 1);
		if (s.dumps.n)
			CHECK_I64(s.dumps.v[0].entries, 1);
		ts_hang_set_release(&s);
	}
}

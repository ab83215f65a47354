/*
 * fuzz_hta.c - libFuzzer target for the HTA-compatibility mode: whatever
 * trace the reader accepts, ts_hta_analyze() must end in 0 or a clean
 * error, and the JSON and table writers must cope with its result; the
 * part built with two threads (what `trace --hta-compat` does) must give
 * the same code and the same JSON.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/hta.h"
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The JSON of the part of t built with two threads, compared with
 * json[0..n) (rc: ts_hta_analyze's code). */
static void same_threaded(const struct ts_trace *t, int rc, const char *json, size_t n)
{
	struct ts_hta_part part;
	struct ts_hta h;
	struct ts_err err;
	struct ts_sb sb;
	struct ts_jw w;
	int rc2;

	ts_err_init(&err);
	rc2 = ts_hta_part_build(t, &part, 2, &err);
	if (rc2 == 0)
		rc2 = ts_hta_combine(&part, 1, &h, &err);
	else
		ts_hta_init(&h);
	if (rc2 == TS_ENOMEM || rc == TS_ENOMEM) {
		ts_hta_release(&h);
		return;
	}
	if (rc2 != rc)
		abort();
	if (rc == 0) {
		ts_sb_init(&sb);
		ts_jw_init(&w, &sb, 0);
		ts_hta_write_json(&h, 0, &w);
		if (!sb.failed && (sb.len != n || memcmp(sb.buf, json, n) != 0))
			abort();
		ts_sb_release(&sb);
	}
	ts_hta_release(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_trace t;
	const struct ts_trace *tp = &t;
	struct ts_hta h;
	struct ts_err err;
	struct ts_sb sb;
	struct ts_jw w;

	ts_trace_init(&t);
	ts_err_init(&err);
	if (ts_trace_read_mem(&t, data, size, "fuzz.json", NULL, &err) == 0) {
		int rc = ts_hta_analyze(&tp, 1, &h, &err);
		if (rc == 0) {
			ts_sb_init(&sb);
			ts_jw_init(&w, &sb, 0);
			ts_hta_write_json(&h, 0, &w);
			if (!sb.failed) {
				oracle_json(sb.buf, sb.len);
				same_threaded(&t, rc, sb.buf, sb.len);
			}
			ts_sb_reset(&sb);
			ts_hta_render(&h, &sb);
			if (!sb.failed)
				oracle_text(sb.buf, sb.len);
			ts_sb_release(&sb);
		} else if (rc != TS_ELIMIT && rc != TS_ENOMEM) {
			abort();
		} else {
			same_threaded(&t, rc, NULL, 0);
		}
		ts_hta_release(&h);
	}
	ts_trace_release(&t);
	return 0;
}

/*
 * fuzz_hta.c - libFuzzer target for the HTA-compatibility mode: whatever
 * trace the reader accepts, ts_hta_analyze() must end in 0 or a clean
 * error, and the JSON and table writers must cope with its result.
 */
#include <stdint.h>
#include <stdlib.h>
#include "trainscope/hta.h"
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
			if (!sb.failed)
				oracle_json(sb.buf, sb.len);
			ts_sb_reset(&sb);
			ts_hta_render(&h, &sb);
			if (!sb.failed)
				oracle_text(sb.buf, sb.len);
			ts_sb_release(&sb);
		} else if (rc != TS_ELIMIT && rc != TS_ENOMEM) {
			abort();
		}
		ts_hta_release(&h);
	}
	ts_trace_release(&t);
	return 0;
}

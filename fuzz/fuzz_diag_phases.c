/* libFuzzer target: the JSONL phase reader of diagnose (one JSON object
 * per line, NaN allowed, truncated last line tolerated). */
#include <stddef.h>
#include <stdint.h>
#include "trainscope/diagnose.h"
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_diag d;
	struct ts_err err;

	ts_diag_init(&d);
	ts_err_init(&err);
	if (ts_diag_read_phases_mem(&d, data, size, "fuzz.jsonl", &err) == 0 &&
	    ts_diag_analyse(&d) == 0) {
		struct ts_sb out;
		ts_sb_init(&out);
		ts_diag_json(&d, &out);
		if (!out.failed)
			oracle_json(out.buf, out.len);
		ts_sb_reset(&out);
		ts_diag_text(&d, &out, 0);
		if (!out.failed)
			oracle_text(out.buf, out.len);
		ts_sb_release(&out);
	}
	ts_diag_release(&d);
	return 0;
}

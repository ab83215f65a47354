/* libFuzzer target: the JSONL phase reader of diagnose (one JSON object
 * per line, NaN allowed, truncated last line tolerated). */
#include <stddef.h>
#include <stdint.h>
#include "trainscope/diagnose.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_diag d;
	struct ts_err err;

	ts_diag_init(&d);
	ts_err_init(&err);
	if (ts_diag_read_phases_mem(&d, data, size, "fuzz.jsonl", &err) == 0)
		(void)ts_diag_analyse(&d);
	ts_diag_release(&d);
	return 0;
}

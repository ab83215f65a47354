/*
 * fuzz_hang_log.c - libFuzzer target for the hang text reader (watchdog,
 * desync, DETAIL, COLL, RAS and fr_trace lines): never an error on text,
 * and the analysis properties of hang_props.h hold.
 */
#include <stddef.h>
#include <stdint.h>
#include "hang_props.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_hang_set s;
	struct ts_err err;

	ts_hang_set_init(&s);
	ts_err_init(&err);
	/* text lines that are not evidence are skipped, never an error */
	if (ts_hang_read_lines_mem(&s, data, size, "fuzz.log", &err) != 0 && err.code != TS_ENOMEM)
		abort();
	hang_check(&s);
	ts_hang_set_release(&s);
	return 0;
}

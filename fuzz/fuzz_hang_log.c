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
	/* text lines that are not evidence are skipped, never an error; a
	 * gzip stream (the magic 1f 8b) may be damaged: a parse error or a cut stream */
	if (ts_hang_read_lines_mem(&s, data, size, "fuzz.log", &err) != 0 && err.code != TS_ENOMEM &&
	    !(size >= 2 && data[0] == 0x1f && data[1] == 0x8b &&
	      (err.code == TS_EPARSE || err.code == TS_ETRUNC)))
		abort();
	hang_check(&s);
	ts_hang_set_release(&s);
	return 0;
}

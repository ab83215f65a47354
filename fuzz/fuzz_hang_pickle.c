/*
 * fuzz_hang_pickle.c - libFuzzer target for the safe pickle reader: any
 * bytes run to STOP or fail at an offset inside the input (or -1 for a
 * dump-level error after the parse); a pickle that
 * names a class (GLOBAL / INST, opcode bytes 'c' / 'i' at the failing
 * offset) is refused as unsupported, never read; what is read analyses with
 * the properties of hang_props.h.
 */
#include <stddef.h>
#include <stdint.h>
#include "hang_props.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_hang_set s;
	struct ts_err err;
	int rc;

	ts_hang_set_init(&s);
	ts_err_init(&err);
	rc = ts_hang_read_pickle_mem(&s, data, size, "nccl_trace_rank_0", 0, &err);
	if (rc == 0) {
		if (s.dumps.n != 1)
			abort();
		hang_check(&s);
	} else if (rc != TS_ENOMEM) {
		if (err.offset < -1 || (err.offset >= 0 && (uint64_t)err.offset > size))
			abort();
		if (err.offset >= 0 && (uint64_t)err.offset < size && (data[err.offset] == 'c' || data[err.offset] == 'i' ||
						    data[err.offset] == 'R') && rc != TS_EUNSUPPORTED)
			abort();
	}
	ts_hang_set_release(&s);
	return 0;
}

/*
 * fuzz_hang_repr.c - libFuzzer target for Flight Recorder dumps pasted as a
 * Python repr: any bytes parse or fail with a position inside the input,
 * and what parses analyses with the properties of hang_props.h.
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
	if (ts_hang_read_pyobj_mem(&s, data, size, "nccl_trace_rank_3", -1, &err) == 0) {
		/* a dump read: its rank comes from the name unless a "rank" key says */
		if (s.dumps.n > 1)
			abort();
		hang_check(&s);
	} else if (err.code != TS_ENOMEM && (err.offset < -1 || (err.offset >= 0 && (uint64_t)err.offset > size)) &&
		   err.code != TS_EUNSUPPORTED) {
		abort();
	}
	ts_hang_set_release(&s);
	return 0;
}

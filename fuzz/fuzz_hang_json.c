/*
 * fuzz_hang_json.c - libFuzzer target for Flight Recorder and NCCL RAS JSON
 * documents. Beyond the analysis properties of hang_props.h: the dump
 * grammar contains JSON, so every input the strict JSON tokenizer accepts
 * (one value, nested at most 64 deep) must not be a syntax error for the
 * dump reader.
 */
#include <stddef.h>
#include <stdint.h>
#include "hang_props.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int strict_json(const uint8_t *data, size_t size)
{
	struct ts_json j;
	struct ts_err err;
	int tok, ok = 1;

	ts_err_init(&err);
	ts_json_init_mem(&j, data, size, 0, "x");
	while ((tok = ts_json_next(&j, &err)) > 0)
		if (j.depth > 60) {
			ok = 0;
			break;
		}
	if (tok < 0)
		ok = 0;
	ts_json_release(&j);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_hang_set s;
	struct ts_err err;
	int rc;

	ts_hang_set_init(&s);
	ts_err_init(&err);
	rc = ts_hang_read_pyobj_mem(&s, data, size, "trace.json", 0, &err);
	if (rc == 0)
		hang_check(&s);
	else if ((rc == TS_EPARSE || rc == TS_ETRUNC) && strict_json(data, size))
		abort();
	ts_hang_set_release(&s);
	return 0;
}

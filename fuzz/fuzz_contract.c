/* libFuzzer target: the contract reader (JSON with flattened sections). */
#include <stdint.h>
#include <stdlib.h>
#include "trainscope/contract.h"
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_contract c, d;
	struct ts_contract_diff *diffs = NULL;
	struct ts_err err;
	size_t n = 0;

	ts_err_init(&err);
	ts_contract_init(&c);
	ts_contract_init(&d);
	if (ts_contract_read_mem(&c, (const char *)data, size, "fuzz.json", &err) == 0 &&
	    ts_contract_diff(&c, &d, &diffs, &n) == 0) {
		struct ts_sb out;
		ts_sb_init(&out);
		ts_contract_write(&c, &out);
		if (!out.failed)
			oracle_json(out.buf, out.len);
		ts_sb_release(&out);
	}
	free(diffs);
	ts_contract_release(&c);
	ts_contract_release(&d);
	return 0;
}

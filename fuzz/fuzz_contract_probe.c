/* libFuzzer target: the parsers of tool output behind `contract capture`
 * (nvidia-smi CSV, mthreads-gmi table, nvcc / musa_runtime_version / mcc
 * banners, the python3 probe's key=value lines; the fuzz input is every
 * tool's answer) and the Megatron arguments-block reader. */
#include <stdint.h>
#include <stdlib.h>
#include "trainscope/contract.h"
#include "oracle.h"

static const uint8_t *g_data;
static size_t g_size;

static int fuzz_run(void *ctx, const char *const argv[], struct ts_sb *out)
{
	(void)ctx;
	(void)argv;
	ts_sb_add(out, g_data, g_size);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_probe p = { fuzz_run, NULL, NULL, "/nonexistent-fuzz-root" };
	struct ts_contract c;
	struct ts_err err;
	struct ts_sb out;

	g_data = data;
	g_size = size;
	ts_err_init(&err);
	ts_contract_init(&c);
	ts_sb_init(&out);
	ts_contract_capture_env(&c, &p, &err);
	ts_contract_from_log_mem(&c, (const char *)data, size, "fuzz.log", &err);
	ts_contract_finish(&c);
	ts_contract_write(&c, &out);
	if (!out.failed)
		oracle_json(out.buf, out.len); /* tool output lands in JSON strings */
	ts_sb_release(&out);
	ts_contract_release(&c);
	return 0;
}

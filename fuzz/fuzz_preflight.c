/* libFuzzer target: the report readers behind `preflight --from`
 * (collect_env, check_env, nvidia-smi -q, mthreads-gmi table and JSON) and
 * the rules. Asserts that an accepted report gives a model whose JSON
 * parses back, starts with the schema, and whose findings all carry an id,
 * evidence and a fix; a rejected one fails with a parse error naming it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/json.h"
#include "trainscope/preflight.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_preflight pf;
	struct ts_err err;
	struct ts_sb out;
	int rc;

	ts_err_init(&err);
	ts_preflight_init(&pf);
	ts_sb_init(&out);
	rc = ts_preflight_from_mem(&pf, (const char *)data, size, "fuzz.txt", &err);
	if (rc == 0) {
		struct ts_json j;
		int tok;
		if (ts_preflight_judge(&pf) != 0)
			abort();
		for (size_t i = 0; i < pf.findings.n; i++)
			if (!pf.findings.v[i].id || !pf.findings.v[i].evidence || !pf.findings.v[i].fix)
				abort();
		ts_preflight_write_table(&pf, &out);
		ts_sb_reset(&out);
		ts_preflight_write_json(&pf, &out);
		if (strncmp(out.buf, "{\n  \"schema\": \"" TS_PREFLIGHT_SCHEMA "\"", 36) != 0)
			abort();
		ts_json_init_mem(&j, out.buf, out.len, TS_JSON_LENIENT, "out");
		while ((tok = ts_json_next(&j, &err)) > 0)
			;
		if (tok != TS_JSON_EOF)
			abort();
		ts_json_release(&j);
	} else if (rc == TS_EPARSE && strcmp(err.path, "fuzz.txt") != 0) {
		abort();
	}
	ts_sb_release(&out);
	ts_preflight_release(&pf);
	return 0;
}

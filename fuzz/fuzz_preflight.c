/* libFuzzer target: the report readers behind `preflight --from`
 * (collect_env, check_env, nvidia-smi -q, mthreads-gmi table and JSON),
 * the rules, and the reader of preflight JSON. Asserts that an accepted
 * report gives a model whose JSON starts with the schema, tokenizes to the
 * end, and reads back with the same findings (ids and severities in
 * order; evidence text may differ where the writer replaced invalid UTF-8);
 * that every finding carries an id, evidence and a fix; and that a
 * rejected input fails with an error naming it. */
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
		struct ts_preflight back;
		ts_preflight_init(&back);
		if (ts_preflight_read_mem(&back, out.buf, out.len, "out.json", &err) != 0 ||
		    back.findings.n != pf.findings.n || back.devices.n != pf.devices.n)
			abort();
		for (size_t i = 0; i < pf.findings.n; i++)
			if (strcmp(back.findings.v[i].id, pf.findings.v[i].id) ||
			    back.findings.v[i].sev != pf.findings.v[i].sev)
				abort();
		ts_preflight_release(&back);
	} else if (rc == TS_EPARSE && strcmp(err.path, "fuzz.txt") != 0) {
		abort();
	}
	ts_preflight_release(&pf);
	ts_preflight_init(&pf);
	ts_err_init(&err);
	rc = ts_preflight_read_mem(&pf, (const char *)data, size, "fuzz.json", &err);
	if (rc && strcmp(err.path, "fuzz.json") != 0 && rc != TS_ENOMEM)
		abort();
	ts_sb_release(&out);
	ts_preflight_release(&pf);
	return 0;
}

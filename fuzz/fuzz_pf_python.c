/*
 * fuzz_pf_python.c - libFuzzer target for the reader of the python3
 * probe's answer in `preflight` (pf_python_parse: one flat JSON object of
 * strings, booleans and string lists). Asserts that every fact it keeps
 * has a key and a value, that the rules run on the model, and that the
 * preflight JSON written from it reads back with the same facts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/preflight.h"
#include "../src/preflight/pf_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_preflight pf, back;
	struct ts_err err;
	struct ts_sb out;

	ts_preflight_init(&pf);
	ts_preflight_init(&back);
	ts_err_init(&err);
	ts_sb_init(&out);
	if (pf_python_parse(&pf, (const char *)data, size) == 0) {
		for (size_t i = 0; i < pf.facts.n; i++)
			if (!pf.facts.v[i].key || !pf.facts.v[i].value)
				abort();
		if (ts_preflight_judge(&pf) != 0)
			abort();
		ts_preflight_write_json(&pf, &out);
		if (!out.failed && (ts_preflight_read_mem(&back, out.buf, out.len, "out.json", &err) != 0 ||
				    back.facts.n != pf.facts.n))
			abort();
	}
	ts_sb_release(&out);
	ts_preflight_release(&back);
	ts_preflight_release(&pf);
	return 0;
}

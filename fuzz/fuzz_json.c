/*
 * fuzz_json.c - libFuzzer target for the JSON tokenizer, the number and
 * string helpers, the writer's escaping and its copy of a JSON document
 * (ts_jw_json), and the ledger's reader of the warnings in a recorded
 * experiment's evidence.
 *
 * The first input byte picks the tokenizer flags; the rest is the document.
 * Every token is checked for consistency (views inside the input, or for a
 * key with escapes inside the tokenizer's key buffer with none left, depth
 * in range) and numbers/strings are pushed through the helpers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/json.h"
#include "trainscope/jsonw.h"
#include "trainscope/ledger.h"
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_json j;
	struct ts_err err;
	struct ts_sb sb;
	int t, flags;

	if (size < 1)
		return 0;
	flags = data[0] & (TS_JSON_ALLOW_NAN | TS_JSON_LENIENT | TS_JSON_MULTI);
	data++;
	size--;
	ts_err_init(&err);
	ts_sb_init(&sb);
	ts_json_init_mem(&j, data, size, flags, "fuzz");
	while ((t = ts_json_next(&j, &err)) > 0) {
		if (j.depth < 0 || j.depth > TS_JSON_MAX_DEPTH)
			abort();
		if (t == TS_JSON_KEY && j.escaped)
			abort(); /* keys are handed out decoded */
		if (t == TS_JSON_KEY || t == TS_JSON_STR || t == TS_JSON_NUM) {
			int in_input = (const uint8_t *)j.s >= data && (const uint8_t *)j.s + j.n <= data + size;
			int in_key = t == TS_JSON_KEY && j.key.len && j.s == j.key.buf && j.n == j.key.len;
			if (!in_input && !in_key)
				abort();
		}
		if (t == TS_JSON_NUM) {
			int64_t i;
			uint64_t u;
			double d;
			ts_num_fixed(j.s, j.n, 3, &i);
			ts_num_i64(j.s, j.n, &i);
			ts_num_u64(j.s, j.n, &u);
			if (ts_num_f64(j.s, j.n, &d) != 0 && !(flags & TS_JSON_ALLOW_NAN))
				abort(); /* the tokenizer accepted it, so strtod must too */
		} else if (t == TS_JSON_KEY || t == TS_JSON_STR) {
			ts_sb_reset(&sb);
			if (t == TS_JSON_KEY)
				ts_sb_add(&sb, j.s, j.n); /* decoded already */
			else if (ts_json_unescape(j.s, j.n, 1, &sb) != 0)
				abort(); /* lenient unescape never fails */
			size_t len = sb.len;
			struct ts_sb esc;
			ts_sb_init(&esc);
			ts_sb_addc(&esc, '"');
			ts_json_escape(&esc, sb.buf, len);
			ts_sb_addc(&esc, '"');
			if (!esc.failed)
				oracle_json(esc.buf, esc.len); /* valid UTF-8, no raw controls */
			ts_sb_release(&esc);
		}
	}
	if (t < 0 && err.msg[0] == '\0')
		abort(); /* every failure says what went wrong */
	/* any bytes at all, escaped, are a valid JSON string */
	ts_sb_reset(&sb);
	ts_sb_addc(&sb, '"');
	ts_json_escape(&sb, (const char *)data, size);
	ts_sb_addc(&sb, '"');
	if (!sb.failed)
		oracle_json(sb.buf, sb.len);
	oracle_text(data, size);
	{
		/* evidence as the ledger stores it (a C string): one line per
		 * message counted, none holding a newline or a NUL */
		char *doc = malloc(size + 1);
		size_t n = 0, lines = 0;
		if (doc) {
			memcpy(doc, data, size);
			doc[size] = '\0';
			ts_sb_reset(&sb);
			if (ts_ledger_evidence_warnings(doc, &sb, &n, &err) == 0 && !sb.failed) {
				for (size_t k = 0; k < sb.len; k++)
					lines += sb.buf[k] == '\n';
				if (lines != n || (sb.len && sb.buf[sb.len - 1] != '\n') ||
				    strlen(sb.buf) != sb.len)
					abort();
			}
			free(doc);
		}
	}
	{
		/* a document the writer copies is written whole and reads back
		 * as JSON that copies to the same bytes; one it refuses leaves
		 * the output as it was */
		struct ts_jw w;
		struct ts_sb again;
		int rc;
		ts_sb_reset(&sb);
		ts_jw_init(&w, &sb, flags & 1);
		ts_jw_arr(&w);
		rc = ts_jw_json(&w, (const char *)data, size);
		if (rc && rc != TS_ENOMEM && sb.len != 1)
			abort();
		if (rc == 0 && !sb.failed) {
			ts_jw_arr_end(&w);
			oracle_json(sb.buf, sb.len);
			ts_sb_init(&again);
			ts_jw_init(&w, &again, flags & 1);
			if (ts_jw_json(&w, sb.buf, sb.len) == TS_EPARSE)
				abort();
			if (!again.failed && (again.len != sb.len || memcmp(again.buf, sb.buf, sb.len)))
				abort();
			ts_sb_release(&again);
		}
	}
	ts_json_release(&j);
	ts_sb_release(&sb);
	return 0;
}

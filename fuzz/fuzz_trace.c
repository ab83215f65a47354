/*
 * fuzz_trace.c - libFuzzer target for the trace reader (ts_trace_read_mem).
 *
 * Every input must end in 0 or a clean error, never a crash, a hang or a
 * model that breaks its own invariants (side-table rows pointing past the
 * events, string ids past the table). Each input is read lenient
 * (recovery on), strict, with skip_python, and its metadata alone
 * (meta_only: no event kept).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/jsonw.h"
#include "trainscope/trace.h"
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct ts_trace *t)
{
	size_t ns = t->strings.count;

	for (size_t i = 0; i < t->ev.n; i++) {
		if (t->ev.name[i] != TS_NO_ID && t->ev.name[i] >= ns)
			abort();
		if (ts_ev_cat_str(&t->ev, i) != TS_NO_ID && ts_ev_cat_str(&t->ev, i) >= ns)
			abort();
		if (t->ev.cat[i] >= TS_CAT_COUNT)
			abort();
		if (TS_IS_STRID(ts_ev_pid(&t->ev, i)) && (uint64_t)(ts_ev_pid(&t->ev, i) - TS_STRID_BASE) >= ns)
			abort();
		(void)ts_trace_str(t, t->ev.name[i]);
	}
	for (size_t k = 0; k < t->coll.n; k++)
		if (t->coll.v[k].ev >= t->ev.n)
			abort();
	for (size_t k = 0; k < t->xfer.n; k++)
		if (t->xfer.v[k].ev >= t->ev.n)
			abort();
	for (size_t k = 0; k < t->mem.n; k++)
		if (t->mem.v[k].ev >= t->ev.n)
			abort();
	for (size_t k = 0; k < t->meta.npgs; k++)
		for (int32_t r = 0; t->meta.pgs[k].ranks && r < t->meta.pgs[k].size; r++)
			(void)t->meta.pgs[k].ranks[r];
	for (size_t k = 0; k < t->meta.ndevices; k++)
		(void)ts_trace_str(t, t->meta.devices[k].name);
	if (t->meta.truncated && t->meta.truncated_at > t->meta.bytes)
		abort();
	/* every name, with all its bytes (NULs included), escapes to valid
	 * JSON and sanitises to printable text */
	struct ts_sb sb;
	ts_sb_init(&sb);
	for (size_t k = 0; k < ns; k++) {
		const char *s = ts_intern_str(&t->strings, (uint32_t)k);
		size_t n = ts_intern_len(&t->strings, (uint32_t)k);
		ts_sb_reset(&sb);
		ts_sb_addc(&sb, '"');
		ts_json_escape(&sb, s, n);
		ts_sb_addc(&sb, '"');
		if (!sb.failed)
			oracle_json(sb.buf, sb.len);
		oracle_text(s, n);
	}
	ts_sb_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct ts_trace_opts opts[] = {
		{ 0 }, { .strict = 1 }, { .skip_python = 1, .has_order = 1, .order = 3 },
		{ .meta_only = 1 },
	};

	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		struct ts_trace t;
		struct ts_err err;
		ts_trace_init(&t);
		ts_err_init(&err);
		int rc = ts_trace_read_mem(&t, data, size, "fuzz.json", &opts[k], &err);
		if (rc == 0) {
			check(&t);
			if (opts[k].meta_only && t.ev.n)
				abort();
		} else if (rc != TS_EPARSE && rc != TS_ELIMIT && rc != TS_ENOMEM)
			abort();
		/* every error names its code, says what, and a parse error where */
		if (rc && (err.code != rc || !err.msg[0] || (rc == TS_EPARSE && err.offset < 0)))
			abort();
		ts_trace_release(&t);
	}
	return 0;
}

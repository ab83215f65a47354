/*
 * test_trace_model.c - the narrow 32-bit columns of the trace model (ids
 * and durations) give
 * back every 64-bit value they were given (trace.h, "Narrow integer
 * columns"): values that fit, TS_NONE, and the escaped ones (negative,
 * TS_STRID ids, 2^32 - 2 and more) from the side table.
 */
#include "harness.h"
#include "trainscope/trace.h"

/* Values chosen around the encoding's edges, written out by hand. */
static const int64_t vals[] = {
	0, 1, 7, 4294967293LL /* 2^32 - 3, the largest stored inline */,
	4294967294LL /* 2^32 - 2: TS_C32_ESC itself, escaped */,
	4294967295LL /* 2^32 - 1: TS_C32_NONE itself, escaped */,
	4294967296LL, -1, -1220540864LL, TS_NONE, INT64_MAX, TS_STRID_BASE + 3,
};
#define NV ((int)(sizeof(vals) / sizeof(vals[0])))

TEST(trace_model_c32_roundtrip)
{
	struct ts_trace t;
	struct ts_trace_event x;

	ts_trace_init(&t);
	for (int i = 0; i < 3 * NV; i++) {
		ts_trace_event_init(&x);
		x.pid = vals[i % NV];
		x.tid = vals[(i + 1) % NV];
		x.stream = vals[(i + 2) % NV];
		x.correlation = vals[(i + 3) % NV];
		x.external_id = vals[(i + 4) % NV];
		x.flow_id = vals[(i + 5) % NV];
		x.dur_ns = vals[(i + 6) % NV];
		REQUIRE(ts_trace_push_event(&t, &x) == i);
	}
	for (int i = 0; i < 3 * NV; i++) {
		CHECK_I64(ts_ev_pid(&t.ev, i), vals[i % NV]);
		CHECK_I64(ts_ev_tid(&t.ev, i), vals[(i + 1) % NV]);
		CHECK_I64(ts_ev_stream(&t.ev, i), vals[(i + 2) % NV]);
		CHECK_I64(ts_ev_corr(&t.ev, i), vals[(i + 3) % NV]);
		CHECK_I64(ts_ev_extid(&t.ev, i), vals[(i + 4) % NV]);
		CHECK_I64(ts_ev_flow(&t.ev, i), vals[(i + 5) % NV]);
		CHECK_I64(ts_ev_dur(&t.ev, i), vals[(i + 6) % NV]);
	}
	/* 7 of the 12 values escape (2^32 - 2, 2^32 - 1, 2^32, -1,
	 * -1220540864, INT64_MAX and the strid), three rounds */
	CHECK(t.ev.esc[TS_C32_PID].n == 21);
	CHECK(t.ev.esc[TS_C32_DUR].n == 21);
	ts_trace_release(&t);
}

TEST(trace_model_c32_set)
{
	struct ts_trace t;
	struct ts_trace_event x;

	ts_trace_init(&t);
	ts_trace_event_init(&x);
	for (int i = 0; i < 5; i++) {
		x.tid = i == 2 ? -5 : i;
		REQUIRE(ts_trace_push_event(&t, &x) == i);
	}
	/* inline -> escaped, before and after the escaped event 2 */
	REQUIRE(ts_trace_set_c32(&t, TS_C32_TID, 4, -9) == 0);
	REQUIRE(ts_trace_set_c32(&t, TS_C32_TID, 0, INT64_MIN + 1) == 0);
	CHECK(t.ev.esc[TS_C32_TID].n == 3);
	CHECK_I64(ts_ev_tid(&t.ev, 0), INT64_MIN + 1);
	CHECK_I64(ts_ev_tid(&t.ev, 2), -5);
	CHECK_I64(ts_ev_tid(&t.ev, 4), -9);
	/* escaped -> another escaped value, -> inline, -> absent */
	REQUIRE(ts_trace_set_c32(&t, TS_C32_TID, 2, -6) == 0);
	CHECK_I64(ts_ev_tid(&t.ev, 2), -6);
	REQUIRE(ts_trace_set_c32(&t, TS_C32_TID, 2, 99) == 0);
	REQUIRE(ts_trace_set_c32(&t, TS_C32_TID, 4, TS_NONE) == 0);
	CHECK(t.ev.esc[TS_C32_TID].n == 1);
	CHECK_I64(ts_ev_tid(&t.ev, 0), INT64_MIN + 1);
	CHECK_I64(ts_ev_tid(&t.ev, 1), 1);
	CHECK_I64(ts_ev_tid(&t.ev, 2), 99);
	CHECK_I64(ts_ev_tid(&t.ev, 3), 3);
	CHECK_I64(ts_ev_tid(&t.ev, 4), TS_NONE);
	/* other columns untouched: the record's defaults */
	CHECK_I64(ts_ev_corr(&t.ev, 3), TS_NONE);
	ts_trace_release(&t);
}

/* The column list gives the stored widths of the per-event columns: ts 8,
 * dur 4, name 4, category code 1, cat 1, ph 1, pid 4, tid 4 bytes (27 per
 * event; the sparse columns are not in it). */
TEST(trace_model_columns)
{
	struct ts_trace t;
	struct ts_trace_event x;
	void *col[TS_TRACE_NCOLS];
	size_t elem[TS_TRACE_NCOLS], sum = 0;
	static const size_t want[TS_TRACE_NCOLS] = { 8, 4, 4, 1, 1, 1, 4, 4 };

	ts_trace_init(&t);
	ts_trace_event_init(&x);
	REQUIRE(ts_trace_push_event(&t, &x) == 0);
	REQUIRE(ts_trace_columns(&t.ev, col, elem) == TS_TRACE_NCOLS);
	for (int k = 0; k < TS_TRACE_NCOLS; k++) {
		CHECK_I64((int64_t)elem[k], (int64_t)want[k]);
		CHECK(col[k] != NULL);
		sum += elem[k];
	}
	CHECK_I64((int64_t)sum, 27);
	CHECK(col[0] == (void *)t.ev.ts_ns && col[7] == (void *)t.ev.tid);
	ts_trace_release(&t);
}

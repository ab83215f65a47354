/*
 * test_trace_sparse.c - the sparse columns (stream, device, correlation,
 * external id, flow id: only present values stored, trace.h "Sparse
 * columns") and the one-byte raw category codes (trace.h "Raw
 * categories") give back what was pushed, after changes, and after a
 * batch append at an index that is not a multiple of 64.
 *
 * The expected values come from the pattern functions below, which define
 * the input: which events have a value and what it is.
 */
#include <string.h>
#include "harness.h"
#include "trainscope/trace.h"
#include "../../src/trace/trace_int.h"

#define N 300

/* Stream present on every 7th event and around the 64-event word edges;
 * every 49th value is negative (stored in the side table). */
static int64_t want_stream(int i)
{
	int edge = i == 63 || i == 64 || i == 127 || i == 128 || i == 129 || i == 255 || i == 256;

	if (i % 7 && !edge)
		return TS_NONE;
	return i % 49 == 0 ? -(int64_t)i - 1 : 3 * (int64_t)i;
}

/* Device on every 5th event, -7 (escaped) on event 100. */
static int32_t want_device(int i)
{
	if (i % 5)
		return -1;
	return i == 100 ? -7 : i % 8;
}

/* Correlation on a run of 64 events crossing a word (events 32..95) and
 * 2^32 (escaped) on event 40. */
static int64_t want_corr(int i)
{
	if (i < 32 || i > 95)
		return TS_NONE;
	return i == 40 ? 4294967296LL : 1000 + i;
}

static void fill(struct ts_trace_event *x, int i)
{
	ts_trace_event_init(x);
	x->ts_ns = i;
	x->stream = want_stream(i);
	x->device = want_device(i);
	x->correlation = want_corr(i);
	x->external_id = i % 2 ? 5 * (int64_t)i : TS_NONE;
	x->flow_id = i % 3 == 1 ? (int64_t)i : TS_NONE;
}

static void push_range(struct ts_trace *t, int from, int to)
{
	struct ts_trace_event x;

	for (int i = from; i < to; i++) {
		fill(&x, i);
		REQUIRE(ts_trace_push_event(t, &x) == i - from);
	}
}

static int check_all(const struct ts_trace *t, int n)
{
	int bad = 0;

	for (int i = 0; i < n; i++) {
		bad += ts_ev_stream(&t->ev, i) != want_stream(i);
		bad += ts_ev_device(&t->ev, i) != want_device(i);
		bad += ts_ev_corr(&t->ev, i) != want_corr(i);
		bad += ts_ev_extid(&t->ev, i) != (i % 2 ? 5 * (int64_t)i : TS_NONE);
		bad += ts_ev_flow(&t->ev, i) != (i % 3 == 1 ? (int64_t)i : TS_NONE);
	}
	return bad;
}

TEST(trace_sparse_roundtrip)
{
	struct ts_trace t;
	size_t nstream = 0;

	ts_trace_init(&t);
	push_range(&t, 0, N);
	CHECK_I64(check_all(&t, N), 0);
	for (int i = 0; i < N; i++)
		nstream += want_stream(i) != TS_NONE;
	/* only the present values are stored: 43 multiples of 7 below 300
	 * plus the 6 edge events that are not multiples of 7 (63 is) = 49 */
	CHECK_I64((int64_t)nstream, 49);
	CHECK_I64((int64_t)t.ev.stream.nval, 49);
	CHECK_I64((int64_t)t.ev.device.nval, 60);
	CHECK_I64((int64_t)t.ev.correlation.nval, 64);
	CHECK_I64((int64_t)t.ev.external_id.nval, 150);
	CHECK_I64((int64_t)t.ev.flow_id.nval, 100);
	/* escapes: 0, 49, ..., 294 (7 values) for stream; event 100 for device */
	CHECK_I64((int64_t)t.ev.esc[TS_C32_STREAM].n, 7);
	CHECK_I64((int64_t)t.ev.esc[TS_C32_DEVICE].n, 1);
	CHECK_I64((int64_t)t.ev.esc[TS_C32_CORR].n, 1);
	ts_trace_release(&t);
}

TEST(trace_sparse_set)
{
	struct ts_trace t;

	ts_trace_init(&t);
	push_range(&t, 0, N);
	/* absent -> present at the first, a word's first and the last event;
	 * present -> absent at a word's last and first event; a value change */
	REQUIRE(ts_trace_set_c32(&t, TS_C32_STREAM, 1, 11) == 0);
	REQUIRE(ts_trace_set_c32(&t, TS_C32_STREAM, 192, -192) == 0);
	REQUIRE(ts_trace_set_c32(&t, TS_C32_STREAM, 299, 299) == 0);
	REQUIRE(ts_trace_set_c32(&t, TS_C32_STREAM, 63, TS_NONE) == 0);
	REQUIRE(ts_trace_set_c32(&t, TS_C32_STREAM, 128, TS_NONE) == 0);
	REQUIRE(ts_trace_set_c32(&t, TS_C32_STREAM, 0, 5) == 0);
	REQUIRE(ts_trace_set_c32(&t, TS_C32_DEVICE, 3, 2) == 0);
	for (int i = 0; i < N; i++) {
		int64_t w = want_stream(i);
		if (i == 1 || i == 299)
			w = i == 1 ? 11 : 299;
		else if (i == 192)
			w = -192;
		else if (i == 63 || i == 128)
			w = TS_NONE;
		else if (i == 0)
			w = 5;
		CHECK_I64(ts_ev_stream(&t.ev, i), w);
		CHECK_I64(ts_ev_device(&t.ev, i), i == 3 ? 2 : want_device(i));
		CHECK_I64(ts_ev_corr(&t.ev, i), want_corr(i));
	}
	/* 49 + 3 added - 2 removed; the escapes: event 0's went inline,
	 * 192's was added */
	CHECK_I64((int64_t)t.ev.stream.nval, 50);
	CHECK_I64((int64_t)t.ev.esc[TS_C32_STREAM].n, 7);
	ts_trace_release(&t);
}

/* Events [n0, N) appended as one batch to a trace holding [0, n0): the
 * same values and the same stored arrays as pushing them one by one. */
static void batch_case(int n0)
{
	struct ts_trace serial, t, b;
	uint32_t remap[1] = { 0 };

	ts_trace_init(&serial);
	ts_trace_init(&t);
	ts_trace_init(&b);
	push_range(&serial, 0, N);
	push_range(&t, 0, n0);
	push_range(&b, n0, N);
	REQUIRE(trace_append_batch(&t, &b, remap) == 0);
	REQUIRE(t.ev.n == N);
	CHECK_I64(check_all(&t, N), 0);
#define SAME(c)                                                                          \
	CHECK(t.ev.c.nval == serial.ev.c.nval &&                                         \
	      memcmp(t.ev.c.val, serial.ev.c.val, t.ev.c.nval * 4) == 0 &&                \
	      memcmp(t.ev.c.bits, serial.ev.c.bits, (N + 63) / 64 * 8) == 0 &&            \
	      memcmp(t.ev.c.rank, serial.ev.c.rank, (N + 63) / 64 * 4) == 0)
	SAME(stream);
	SAME(device);
	SAME(correlation);
	SAME(external_id);
	SAME(flow_id);
#undef SAME
	for (int c = 0; c < TS_C32_COUNT; c++) {
		CHECK_I64((int64_t)t.ev.esc[c].n, (int64_t)serial.ev.esc[c].n);
		for (size_t k = 0; k < t.ev.esc[c].n && k < serial.ev.esc[c].n; k++)
			CHECK(t.ev.esc[c].v[k].ev == serial.ev.esc[c].v[k].ev &&
			      t.ev.esc[c].v[k].v == serial.ev.esc[c].v[k].v);
	}
	ts_trace_release(&serial);
	ts_trace_release(&t);
	ts_trace_release(&b);
}

TEST(trace_sparse_batch_append)
{
	batch_case(70);   /* mid-word */
	batch_case(128);  /* on a word edge */
	batch_case(1);
	batch_case(N - 1);
}

/* 300 distinct raw categories: the first 254 get codes, the rest (and any
 * later use of them) go to the side table; every event reads back its id. */
TEST(trace_sparse_category_codes)
{
	struct ts_trace t;
	struct ts_trace_event x;
	uint32_t id[300];
	char s[16];

	ts_trace_init(&t);
	for (int k = 0; k < 300; k++) {
		int n = snprintf(s, sizeof(s), "cat%d", k);
		id[k] = (uint32_t)ts_intern(&t.strings, s, (size_t)n);
	}
	for (int i = 0; i < 600; i++) {
		ts_trace_event_init(&x);
		x.cat_str = i == 7 ? TS_NO_ID : id[i % 300];
		REQUIRE(ts_trace_push_event(&t, &x) == i);
	}
	for (int i = 0; i < 600; i++)
		CHECK(ts_ev_cat_str(&t.ev, i) == (i == 7 ? TS_NO_ID : id[i % 300]));
	/* event 7 has none: cat0..cat6 and cat8..cat254 take the 254 codes;
	 * cat255..cat299 escape in both rounds (45 + 45), and so does cat7,
	 * first seen at event 307 */
	CHECK_I64((int64_t)t.ev.ncat_dict, 254);
	CHECK_I64((int64_t)t.ev.esc[TS_C32_CATSTR].n, 2 * 46 - 1);
	/* a coded event to an escaped id, an escaped one to none, then back */
	REQUIRE(ts_trace_set_cat_str(&t, 0, id[299]) == 0);
	REQUIRE(ts_trace_set_cat_str(&t, 599, TS_NO_ID) == 0);
	REQUIRE(ts_trace_set_cat_str(&t, 7, id[1]) == 0);
	CHECK(ts_ev_cat_str(&t.ev, 0) == id[299]);
	CHECK(ts_ev_cat_str(&t.ev, 599) == TS_NO_ID);
	CHECK(ts_ev_cat_str(&t.ev, 7) == id[1]);
	CHECK(ts_ev_cat_str(&t.ev, 598) == id[298]);
	CHECK_I64((int64_t)t.ev.esc[TS_C32_CATSTR].n, 2 * 46 - 1);
	ts_trace_release(&t);
}

/* A batch whose dictionary lists categories in another order than the
 * trace's: the appended events are coded with the trace's dictionary,
 * exactly as serial pushes code them. */
TEST(trace_sparse_category_batch)
{
	struct ts_trace serial, t, b;
	struct ts_trace_event x;
	uint32_t remap[2];
	uint32_t a_t, k_t, a_b, k_b;

	ts_trace_init(&serial);
	ts_trace_init(&t);
	ts_trace_init(&b);
	a_t = (uint32_t)ts_intern(&t.strings, "cpu_op", 6);
	k_t = (uint32_t)ts_intern(&t.strings, "kernel", 6);
	(void)ts_intern(&serial.strings, "cpu_op", 6);
	(void)ts_intern(&serial.strings, "kernel", 6);
	k_b = (uint32_t)ts_intern(&b.strings, "kernel", 6);
	a_b = (uint32_t)ts_intern(&b.strings, "cpu_op", 6);
	remap[k_b] = k_t;
	remap[a_b] = a_t;
	for (int i = 0; i < 100; i++) {
		ts_trace_event_init(&x);
		x.cat_str = i < 10 ? a_t : (i % 3 ? k_t : a_t);
		REQUIRE(ts_trace_push_event(&serial, &x) == i);
		if (i < 10) {
			REQUIRE(ts_trace_push_event(&t, &x) == i);
		} else {
			x.cat_str = i % 3 ? k_b : a_b;
			REQUIRE(ts_trace_push_event(&b, &x) == i - 10);
		}
	}
	/* the batch coded kernel first */
	CHECK(b.ev.cat_dict[0] == k_b);
	REQUIRE(trace_append_batch(&t, &b, remap) == 0);
	CHECK(memcmp(t.ev.cat_str, serial.ev.cat_str, 100) == 0);
	CHECK(t.ev.ncat_dict == 2 && t.ev.cat_dict[0] == a_t && t.ev.cat_dict[1] == k_t);
	for (int i = 0; i < 100; i++)
		CHECK(ts_ev_cat_str(&t.ev, i) == (i < 10 || i % 3 == 0 ? a_t : k_t));
	ts_trace_release(&serial);
	ts_trace_release(&t);
	ts_trace_release(&b);
}

/* A batch that overflows the trace's dictionary: the trace has coded 250
 * categories, the batch brings 10 new ones; the first 4 get codes, the
 * other 6 escape, exactly as when the events are pushed one by one. */
TEST(trace_sparse_category_batch_overflow)
{
	struct ts_trace serial, t, b;
	struct ts_trace_event x;
	uint32_t remap[10];
	char s[16];

	ts_trace_init(&serial);
	ts_trace_init(&t);
	ts_trace_init(&b);
	for (int k = 0; k < 260; k++) {
		int n = snprintf(s, sizeof(s), "c%d", k);
		uint32_t id = (uint32_t)ts_intern(&t.strings, s, (size_t)n);
		REQUIRE(ts_intern(&serial.strings, s, (size_t)n) == id);
		if (k >= 250)
			remap[ts_intern(&b.strings, s, (size_t)n)] = id;
	}
	for (int i = 0; i < 270; i++) {
		ts_trace_event_init(&x);
		x.cat_str = (uint32_t)(i < 250 ? i : 250 + (i - 250) % 10);
		REQUIRE(ts_trace_push_event(&serial, &x) == i);
		if (i < 250) {
			REQUIRE(ts_trace_push_event(&t, &x) == i);
		} else {
			x.cat_str = (uint32_t)((i - 250) % 10);
			REQUIRE(ts_trace_push_event(&b, &x) == i - 250);
		}
	}
	REQUIRE(trace_append_batch(&t, &b, remap) == 0);
	CHECK_I64((int64_t)t.ev.ncat_dict, 254);
	/* c254..c259 escape twice each (events 254..259 and 264..269) */
	CHECK_I64((int64_t)t.ev.esc[TS_C32_CATSTR].n, 12);
	CHECK(memcmp(t.ev.cat_str, serial.ev.cat_str, 270) == 0);
	for (int i = 0; i < 270; i++)
		CHECK(ts_ev_cat_str(&t.ev, i) == ts_ev_cat_str(&serial.ev, i));
	ts_trace_release(&serial);
	ts_trace_release(&t);
	ts_trace_release(&b);
}

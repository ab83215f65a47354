/*
 * test_trace_model.c - the narrow 32-bit columns of the trace model (ids
 * and durations) give
 * back every 64-bit value they were given (trace.h, "Narrow integer
 * columns"): values that fit, TS_NONE, and the escaped ones (negative,
 * TS_STRID ids, 2^32 - 2 and more) from the side table; the start,
 * stored as a 32-bit offset from its block's base, likewise (trace.h,
 * TS_TS_BLOCK), whether pushed one by one or appended as a batch; the
 * clock resolution its times show.
 */
#include "harness.h"
#include "tbuild.h"
#include "trainscope/trace.h"
#include "../../src/trace/trace_int.h"

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

/* The column list gives the stored widths of the per-event columns: ts
 * offset 4, dur 4, name 4, category code 1, cat 1, ph 1, pid 4, tid 4
 * bytes (23 per event; the sparse columns and the per-block ts_base are
 * not in it). */
TEST(trace_model_columns)
{
	struct ts_trace t;
	struct ts_trace_event x;
	void *col[TS_TRACE_NCOLS];
	size_t elem[TS_TRACE_NCOLS], sum = 0;
	static const size_t want[TS_TRACE_NCOLS] = { 4, 4, 4, 1, 1, 1, 4, 4 };

	ts_trace_init(&t);
	ts_trace_event_init(&x);
	REQUIRE(ts_trace_push_event(&t, &x) == 0);
	REQUIRE(ts_trace_columns(&t.ev, col, elem) == TS_TRACE_NCOLS);
	for (int k = 0; k < TS_TRACE_NCOLS; k++) {
		CHECK_I64((int64_t)elem[k], (int64_t)want[k]);
		CHECK(col[k] != NULL);
		sum += elem[k];
	}
	CHECK_I64((int64_t)sum, 23);
	CHECK(col[0] == (void *)t.ev.ts_off && col[7] == (void *)t.ev.tid);
	ts_trace_release(&t);
}

/*
 * Starts around the edges of the block encoding, by hand. Block 0 (events
 * 0..1023) has base B0 = 5 s; block 1 (1024..2047) starts with an absent
 * ts, so its base is 0; block 2 (2048..2099) starts at INT64_MAX, far
 * from its other events (epoch nanoseconds), which all escape.
 */
#define TS_B0 5000000000LL
#define TS_EPOCH 1712195495519689047LL
#define TS_NEV 2100

static int64_t start_of(int i)
{
	switch (i) {
	case 0: return TS_B0;
	case 1: return TS_B0 + INT32_MAX;           /* offset INT32_MAX: fits */
	case 2: return TS_B0 + INT32_MIN + 1;       /* offset INT32_MIN + 1: fits */
	case 3: return TS_B0 + INT32_MAX + 1LL;     /* one beyond: escaped */
	case 4: return TS_B0 + INT32_MIN;           /* the escape code itself: escaped */
	case 5: return TS_NONE;                     /* escaped */
	case 6: return INT64_MIN + 1;               /* escaped */
	case 7: return INT64_MAX;                   /* escaped */
	case 1023: return TS_B0 + INT32_MAX;        /* block 0's last event: fits */
	case 1024: return TS_NONE;                  /* block 1's first: base 0, escaped */
	case 1025: return 100;
	case 1026: return TS_B0;                    /* 5 s from base 0: escaped */
	case 1027: return INT32_MAX;
	case 2047: return -(int64_t)INT32_MAX;      /* block 1's last: offset INT32_MIN + 1 */
	case 2048: return INT64_MAX;                /* block 2's first: base INT64_MAX */
	case 2049: return INT64_MIN + 1;            /* escaped (no overflow in the test) */
	case 2050: return INT64_MAX - INT32_MAX;    /* offset INT32_MIN + 1: fits */
	}
	if (i < 1024)
		return TS_B0 + (int64_t)i * 1000;
	if (i < 2048)
		return (int64_t)i * 7;
	return TS_EPOCH + i;                        /* 2051..2099: escaped */
}

/* escaped: 3..7 (5), 1024 and 1026 (2), 2049 and 2051..2099 (50) */
#define TS_NESC 57

static void push_starts(struct ts_trace *t, int from, int to)
{
	struct ts_trace_event x;

	for (int i = from; i < to; i++) {
		ts_trace_event_init(&x);
		x.ts_ns = start_of(i);
		REQUIRE(ts_trace_push_event(t, &x) == i - from);
	}
}

static void check_starts(const struct ts_trace *t)
{
	const struct ts_trace_events *e = &t->ev;

	REQUIRE(e->n == TS_NEV);
	for (int i = 0; i < TS_NEV; i++)
		CHECK_I64(ts_ev_ts(e, i), start_of(i));
	/* the raw columns, by hand */
	CHECK_I64(e->ts_base[0], TS_B0);
	CHECK_I64(e->ts_base[1], 0);
	CHECK_I64(e->ts_base[2], INT64_MAX);
	CHECK_I64(e->ts_off[0], 0);
	CHECK_I64(e->ts_off[1], INT32_MAX);
	CHECK_I64(e->ts_off[2], INT32_MIN + 1);
	for (int i = 3; i <= 7; i++)
		CHECK_I64(e->ts_off[i], TS_TS_ESC);
	CHECK_I64(e->ts_off[8], 8000);
	CHECK_I64(e->ts_off[1023], INT32_MAX);
	CHECK_I64(e->ts_off[1024], TS_TS_ESC);
	CHECK_I64(e->ts_off[1025], 100);
	CHECK_I64(e->ts_off[1026], TS_TS_ESC);
	CHECK_I64(e->ts_off[1027], INT32_MAX);
	CHECK_I64(e->ts_off[2047], INT32_MIN + 1);
	CHECK_I64(e->ts_off[2048], 0);
	CHECK_I64(e->ts_off[2049], TS_TS_ESC);
	CHECK_I64(e->ts_off[2050], INT32_MIN + 1);
	CHECK_I64(e->ts_off[2099], TS_TS_ESC);
	REQUIRE(e->ts_esc.n == TS_NESC);
	CHECK_I64(e->ts_esc.v[0].ev, 3);
	CHECK_I64(e->ts_esc.v[0].v, TS_B0 + INT32_MAX + 1LL);
	CHECK_I64(e->ts_esc.v[2].ev, 5);
	CHECK_I64(e->ts_esc.v[2].v, TS_NONE);
	CHECK_I64(e->ts_esc.v[5].ev, 1024);
	CHECK_I64(e->ts_esc.v[7].ev, 2049);
	CHECK_I64(e->ts_esc.v[TS_NESC - 1].ev, 2099);
	CHECK_I64(e->ts_esc.v[TS_NESC - 1].v, TS_EPOCH + 2099);
}

TEST(trace_model_ts_blocks)
{
	struct ts_trace t;

	ts_trace_init(&t);
	push_starts(&t, 0, TS_NEV);
	check_starts(&t);
	ts_trace_release(&t);
}

/* A batch (the split parse's helper output, encoded in its own blocks)
 * appended at n0 = 1000, inside block 0, gives the serial columns. */
TEST(trace_model_ts_batch)
{
	struct ts_trace s, t, b;
	const uint32_t remap[1] = { 0 };
	struct ts_trace_event x;

	ts_trace_init(&s);
	ts_trace_init(&t);
	ts_trace_init(&b);
	push_starts(&s, 0, TS_NEV);
	push_starts(&t, 0, 1000);
	for (int i = 1000; i < TS_NEV; i++) {
		ts_trace_event_init(&x);
		x.ts_ns = start_of(i);
		REQUIRE(ts_trace_push_event(&b, &x) == i - 1000);
	}
	/* in its own blocks event 1000 is a base: nothing alike */
	CHECK_I64(b.ev.ts_base[0], TS_B0 + 1000 * 1000LL);
	REQUIRE(trace_append_batch(&t, &b, remap) == 0);
	check_starts(&t);
	CHECK(memcmp(t.ev.ts_off, s.ev.ts_off, TS_NEV * sizeof(*t.ev.ts_off)) == 0);
	CHECK(memcmp(t.ev.ts_base, s.ev.ts_base, 3 * sizeof(*t.ev.ts_base)) == 0);
	REQUIRE(t.ev.ts_esc.n == s.ev.ts_esc.n);
	for (size_t k = 0; k < s.ev.ts_esc.n; k++) {
		CHECK_I64(t.ev.ts_esc.v[k].ev, s.ev.ts_esc.v[k].ev);
		CHECK_I64(t.ev.ts_esc.v[k].v, s.ev.ts_esc.v[k].v);
	}
	ts_trace_release(&b);
	ts_trace_release(&t);
	ts_trace_release(&s);
}

/* An event with its start and duration in ns. */
static void ev_ns(struct ts_trace *t, int64_t ts_ns, int64_t dur_ns)
{
	struct ts_trace_event x;

	ts_trace_event_init(&x);
	x.ts_ns = ts_ns;
	x.dur_ns = dur_ns;
	x.name = (uint32_t)ts_intern(&t->strings, "aten::add", 9);
	x.cat = TS_CAT_CPU_OP;
	x.ph = 'X';
	x.pid = x.tid = 1;
	ts_trace_push_event(t, &x);
}

TEST(trace_model_clock_resolution)
{
	struct ts_trace t;

	tb_init(&t);
	CHECK_I64(ts_trace_clock_resolution_ns(&t), 0);
	/* whole microseconds: 1 us */
	tb_cpu(&t, TS_CAT_CPU_OP, "aten::mm", 5, 400);
	ev_ns(&t, -3000, TS_NONE);
	CHECK_I64(ts_trace_clock_resolution_ns(&t), 1000);
	/* a start at -1,500 ns: 100 ns */
	ev_ns(&t, -1500, 3000);
	CHECK_I64(ts_trace_clock_resolution_ns(&t), 100);
	/* a duration of 20 ns: still 10 ns at most */
	ev_ns(&t, 10000, 20);
	CHECK_I64(ts_trace_clock_resolution_ns(&t), 10);
	/* a duration of 1,234 ns: 1 ns */
	ev_ns(&t, 20000, 1234);
	CHECK_I64(ts_trace_clock_resolution_ns(&t), 1);
	tb_release(&t);
}

/* A node's trace lists GPUs 0..2; the rank ran on GPU 2. */
TEST(trace_model_rank_device)
{
	struct ts_trace t;
	struct ts_trace_device dev[3];
	struct ts_trace_event x;
	enum ts_rank_dev_source src;

	tb_init(&t);
	CHECK_I64(ts_trace_rank_device(&t, &src), -1);
	CHECK_I64(src, TS_RANK_DEV_NONE);
	memset(dev, 0, sizeof(dev));
	for (int i = 0; i < 3; i++)
		dev[i].id = i;
	t.meta.devices = dev;
	t.meta.ndevices = 3;
	/* no activity, no local rank: the first listed */
	CHECK_I64(ts_trace_rank_device(&t, &src), 0);
	CHECK_I64(src, TS_RANK_DEV_FIRST);
	/* local_rank 1 (metadata alone), one not listed (7) is ignored */
	t.meta.local_rank = 7;
	CHECK_I64(ts_trace_rank_device(&t, &src), 0);
	t.meta.local_rank = 1;
	CHECK_I64(ts_trace_rank_device(&t, &src), 1);
	CHECK_I64(src, TS_RANK_DEV_LOCAL_RANK);
	/* a CPU op with a device and a kernel on an unlisted device do not
	 * count; the kernel on device 2 does, over local_rank */
	ts_trace_event_init(&x);
	x.cat = TS_CAT_CPU_OP;
	x.ph = 'X';
	x.device = 0;
	ts_trace_push_event(&t, &x);
	x.cat = TS_CAT_KERNEL;
	x.device = 9;
	ts_trace_push_event(&t, &x);
	CHECK_I64(ts_trace_rank_device(&t, &src), 1);
	x.device = 2;
	ts_trace_push_event(&t, &x);
	CHECK_I64(ts_trace_rank_device(&t, &src), 2);
	CHECK_I64(src, TS_RANK_DEV_EVENTS);
	t.meta.devices = NULL;
	t.meta.ndevices = 0;
	tb_release(&t);
}

/* No activity and no local rank: GPU 0 is taken, an assumption only where
 * the listed GPUs differ in name, SM count or memory. */
TEST(trace_model_rank_device_assumed)
{
	struct ts_trace t;
	struct ts_trace_device dev[2];
	enum ts_rank_dev_source src;

	tb_init(&t);
	memset(dev, 0, sizeof(dev));
	for (int i = 0; i < 2; i++)
		dev[i] = (struct ts_trace_device){ .id = i, .name = 5, .total_mem_bytes = 80,
						   .num_sms = 132 };
	t.meta.devices = dev;
	t.meta.ndevices = 2;
	CHECK_I64(ts_trace_rank_device(&t, &src), 0);
	CHECK_I64(src, TS_RANK_DEV_FIRST);          /* alike: nothing assumed */
	dev[1].num_sms = 114;                       /* H100 PCIe beside an SXM */
	CHECK_I64(ts_trace_rank_device(&t, &src), 0);
	CHECK_I64(src, TS_RANK_DEV_ASSUMED);
	dev[1].num_sms = 132;
	dev[1].total_mem_bytes = 141;
	CHECK_I64(ts_trace_rank_device(&t, &src), 0);
	CHECK_I64(src, TS_RANK_DEV_ASSUMED);
	dev[1].total_mem_bytes = 80;
	dev[1].name = 6;
	CHECK_I64(ts_trace_rank_device(&t, &src), 0);
	CHECK_I64(src, TS_RANK_DEV_ASSUMED);
	t.meta.local_rank = 1;                      /* stated: no assumption */
	CHECK_I64(ts_trace_rank_device(&t, &src), 1);
	CHECK_I64(src, TS_RANK_DEV_LOCAL_RANK);
	t.meta.devices = NULL;
	t.meta.ndevices = 0;
	tb_release(&t);
}

/*
 * tbuild.h - build a struct ts_trace by hand for analysis tests.
 *
 * The builder appends events with ts_trace_push_event() and frees the
 * trace in tb_release(); it does not use the reader, so analysis
 * tests state their input event by event. Times are given in microseconds
 * (integers) and stored as ns.
 */
#ifndef TS_TEST_TBUILD_H
#define TS_TEST_TBUILD_H

#include <stdlib.h>
#include <string.h>
#include "trainscope/trace.h"

#define US 1000LL

static inline void tb_init(struct ts_trace *t)
{
	ts_trace_init(t);
	t->meta.rank = 0;
	snprintf(t->path, sizeof(t->path), "hand-built");
}

static inline void tb_release(struct ts_trace *t)
{
	ts_trace_release(t);
}

/* Append a complete event; returns its index. corr < 0 means none. */
static inline size_t tb_ev(struct ts_trace *t, int cat, const char *name, int64_t pid,
			   int64_t tid, int64_t ts_us, int64_t dur_us, int64_t corr)
{
	struct ts_trace_event x;

	ts_trace_event_init(&x);
	x.ts_ns = ts_us * US;
	x.dur_ns = dur_us * US;
	x.name = (uint32_t)ts_intern(&t->strings, name, strlen(name));
	x.cat = (enum ts_cat)cat;
	x.ph = 'X';
	x.pid = pid;
	x.tid = tid;
	x.stream = (cat == TS_CAT_KERNEL || cat == TS_CAT_MEMCPY || cat == TS_CAT_MEMSET)
			   ? tid : TS_NONE;
	x.correlation = corr >= 0 ? corr : TS_NONE;
	return (size_t)ts_trace_push_event(t, &x);
}

/* CPU main thread is pid 1, tid 1; the GPU is pid 0 with streams as tid. */
static inline size_t tb_cpu(struct ts_trace *t, int cat, const char *name, int64_t ts_us,
			    int64_t dur_us)
{
	return tb_ev(t, cat, name, 1, 1, ts_us, dur_us, -1);
}

static inline size_t tb_gpu(struct ts_trace *t, int cat, const char *name, int64_t stream,
			    int64_t ts_us, int64_t dur_us, int64_t corr)
{
	return tb_ev(t, cat, name, 0, stream, ts_us, dur_us, corr);
}

static inline size_t tb_launch(struct ts_trace *t, const char *name, int64_t ts_us,
			       int64_t dur_us, int64_t corr)
{
	return tb_ev(t, TS_CAT_RUNTIME, name, 1, 1, ts_us, dur_us, corr);
}

#endif

/*
 * tbuild.h - build a struct ts_trace by hand for analysis tests.
 *
 * The builder owns the columns it allocates (fixed capacity TB_CAP) and
 * frees them in tb_release(); it does not use the reader, so analysis
 * tests state their input event by event. Times are given in microseconds
 * (integers) and stored as ns.
 */
#ifndef TS_TEST_TBUILD_H
#define TS_TEST_TBUILD_H

#include <stdlib.h>
#include <string.h>
#include "trainscope/trace.h"

#define TB_CAP 4096
#define US 1000LL

static inline void tb_init(struct ts_trace *t)
{
	memset(t, 0, sizeof(*t));
	t->ev.cap = TB_CAP;
	t->ev.ts_ns = calloc(TB_CAP, sizeof(int64_t));
	t->ev.dur_ns = calloc(TB_CAP, sizeof(int64_t));
	t->ev.name = calloc(TB_CAP, sizeof(uint32_t));
	t->ev.cat_str = calloc(TB_CAP, sizeof(uint32_t));
	t->ev.cat = calloc(TB_CAP, 1);
	t->ev.ph = calloc(TB_CAP, 1);
	t->ev.pid = calloc(TB_CAP, sizeof(int64_t));
	t->ev.tid = calloc(TB_CAP, sizeof(int64_t));
	t->ev.stream = calloc(TB_CAP, sizeof(int64_t));
	t->ev.device = calloc(TB_CAP, sizeof(int32_t));
	t->ev.correlation = calloc(TB_CAP, sizeof(int64_t));
	t->ev.external_id = calloc(TB_CAP, sizeof(int64_t));
	t->ev.flow_id = calloc(TB_CAP, sizeof(int64_t));
	ts_intern_init(&t->strings);
	ts_arena_init(&t->arena);
	t->meta.rank = 0;
	t->meta.world_size = -1;
	snprintf(t->path, sizeof(t->path), "hand-built");
}

static inline void tb_release(struct ts_trace *t)
{
	free(t->ev.ts_ns);
	free(t->ev.dur_ns);
	free(t->ev.name);
	free(t->ev.cat_str);
	free(t->ev.cat);
	free(t->ev.ph);
	free(t->ev.pid);
	free(t->ev.tid);
	free(t->ev.stream);
	free(t->ev.device);
	free(t->ev.correlation);
	free(t->ev.external_id);
	free(t->ev.flow_id);
	TS_VEC_RELEASE(t->coll);
	TS_VEC_RELEASE(t->xfer);
	TS_VEC_RELEASE(t->mem);
	TS_VEC_RELEASE(t->flops);
	ts_intern_release(&t->strings);
	ts_arena_release(&t->arena);
}

/* Append a complete event; returns its index. corr < 0 means none. */
static inline size_t tb_ev(struct ts_trace *t, int cat, const char *name, int64_t pid,
			   int64_t tid, int64_t ts_us, int64_t dur_us, int64_t corr)
{
	size_t i = t->ev.n++;

	t->ev.ts_ns[i] = ts_us * US;
	t->ev.dur_ns[i] = dur_us * US;
	t->ev.name[i] = (uint32_t)ts_intern(&t->strings, name, strlen(name));
	t->ev.cat_str[i] = TS_NO_ID;
	t->ev.cat[i] = (uint8_t)cat;
	t->ev.ph[i] = 'X';
	t->ev.pid[i] = pid;
	t->ev.tid[i] = tid;
	t->ev.stream[i] = (cat == TS_CAT_KERNEL || cat == TS_CAT_MEMCPY || cat == TS_CAT_MEMSET)
				  ? tid : TS_NONE;
	t->ev.device[i] = -1;
	t->ev.correlation[i] = corr >= 0 ? corr : TS_NONE;
	t->ev.external_id[i] = TS_NONE;
	t->ev.flow_id[i] = TS_NONE;
	return i;
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

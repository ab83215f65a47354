/*
 * trace_model.c - lifecycle, names and column storage of struct ts_trace.
 *
 * The reader and anything that builds a trace by hand (tests, synthetic
 * traces) append events through ts_trace_push_event() so that the thirteen
 * columns always grow together. Seven of them are 32-bit with a sorted side
 * table for the values that do not fit (trace.h, "Narrow integer columns"),
 * the start as an offset from a per-block base: 46 bytes per event instead
 * of 78. Columns are plain malloc/realloc arrays:
 * glibc serves big ones from mmap and grows them with mremap, so growing a
 * column never copies bytes and untouched capacity costs no resident memory.
 */
#include <stdlib.h>
#include <string.h>
#include "trainscope/limits.h"
#include "trainscope/trace.h"
#include "trace_int.h"

static const char *const cat_names[TS_CAT_COUNT] = {
	[TS_CAT_OTHER] = "other",
	[TS_CAT_CPU_OP] = "cpu_op",
	[TS_CAT_USER_ANNOTATION] = "user_annotation",
	[TS_CAT_GPU_USER_ANNOTATION] = "gpu_user_annotation",
	[TS_CAT_RUNTIME] = "runtime",
	[TS_CAT_DRIVER] = "driver",
	[TS_CAT_KERNEL] = "kernel",
	[TS_CAT_MEMCPY] = "memcpy",
	[TS_CAT_MEMSET] = "memset",
	[TS_CAT_SYNC] = "sync",
	[TS_CAT_PYTHON] = "python_function",
	[TS_CAT_INSTANT] = "instant",
	[TS_CAT_FLOW] = "flow",
	[TS_CAT_TRACE_SPAN] = "trace_span",
	[TS_CAT_OVERHEAD] = "overhead",
	[TS_CAT_COLLECTIVE] = "collective_comm",
};

const char *ts_cat_name(enum ts_cat cat)
{
	if ((unsigned)cat >= TS_CAT_COUNT)
		return "other";
	return cat_names[cat];
}

const char *ts_vendor_name(enum ts_vendor v)
{
	switch (v) {
	case TS_VENDOR_CPU: return "cpu";
	case TS_VENDOR_CUDA: return "cuda";
	case TS_VENDOR_ROCM: return "rocm";
	case TS_VENDOR_MUSA: return "musa";
	case TS_VENDOR_MTIA: return "mtia";
	case TS_VENDOR_UNKNOWN: break;
	}
	return "unknown";
}

/* Raw category strings as written by every Kineto generation we know. */
static const struct { const char *s; uint8_t cat; } cat_table[] = {
	{ "cpu_op", TS_CAT_CPU_OP },
	{ "Operator", TS_CAT_CPU_OP },
	{ "user_annotation", TS_CAT_USER_ANNOTATION },
	{ "gpu_user_annotation", TS_CAT_GPU_USER_ANNOTATION },
	{ "cuda_runtime", TS_CAT_RUNTIME },
	{ "musa_runtime", TS_CAT_RUNTIME },
	{ "privateuse1_runtime", TS_CAT_RUNTIME },
	{ "xpu_runtime", TS_CAT_RUNTIME },
	{ "mtia_runtime", TS_CAT_RUNTIME },
	{ "hip", TS_CAT_RUNTIME },
	{ "hip_runtime", TS_CAT_RUNTIME },
	{ "Runtime", TS_CAT_RUNTIME },
	{ "cuda_driver", TS_CAT_DRIVER },
	{ "musa_driver", TS_CAT_DRIVER },
	{ "privateuse1_driver", TS_CAT_DRIVER },
	{ "xpu_driver", TS_CAT_DRIVER },
	{ "Driver", TS_CAT_DRIVER },
	{ "kernel", TS_CAT_KERNEL },
	{ "Kernel", TS_CAT_KERNEL },
	{ "mtia_ccp_events", TS_CAT_KERNEL },
	{ "gpu_memcpy", TS_CAT_MEMCPY },
	{ "Memcpy", TS_CAT_MEMCPY },
	{ "gpu_memset", TS_CAT_MEMSET },
	{ "Memset", TS_CAT_MEMSET },
	{ "cuda_sync", TS_CAT_SYNC },
	{ "musa_sync", TS_CAT_SYNC },
	{ "xpu_sync", TS_CAT_SYNC },
	{ "python_function", TS_CAT_PYTHON },
	{ "cpu_instant_event", TS_CAT_INSTANT },
	{ "ac2g", TS_CAT_FLOW },
	{ "fwdbwd", TS_CAT_FLOW },
	{ "async", TS_CAT_FLOW },
	{ "async_cpu_to_gpu", TS_CAT_FLOW },
	{ "async_gpu", TS_CAT_FLOW },
	{ "Trace", TS_CAT_TRACE_SPAN },
	{ "overhead", TS_CAT_OVERHEAD },
	{ "collective_comm", TS_CAT_COLLECTIVE },
};

enum ts_cat ts_cat_of(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(cat_table) / sizeof(cat_table[0]); i++)
		if (strlen(cat_table[i].s) == n && memcmp(cat_table[i].s, s, n) == 0)
			return (enum ts_cat)cat_table[i].cat;
	return TS_CAT_OTHER;
}

const char *ts_trace_str(const struct ts_trace *t, uint32_t id)
{
	if (id == TS_NO_ID || id >= t->strings.count)
		return "";
	return ts_intern_str(&t->strings, id);
}

void ts_trace_init(struct ts_trace *t)
{
	memset(t, 0, sizeof(*t));
	ts_intern_init(&t->strings);
	ts_arena_init(&t->arena);
	t->meta.rank = -1;
	t->meta.world_size = -1;
	t->meta.backend = TS_NO_ID;
	t->meta.profiler_version = TS_NO_ID;
	t->meta.trace_name = TS_NO_ID;
	t->meta.runtime_version = TS_NO_ID;
	t->meta.driver_version = TS_NO_ID;
	t->meta.nccl_version = TS_NO_ID;
}

static void events_release(struct ts_trace_events *e)
{
	free(e->ts_off);
	free(e->ts_base);
	free(e->ts_esc.v);
	free(e->dur);
	free(e->name);
	free(e->cat_str);
	free(e->cat);
	free(e->ph);
	free(e->pid);
	free(e->tid);
	free(e->stream);
	free(e->device);
	free(e->correlation);
	free(e->external_id);
	free(e->flow_id);
	for (int c = 0; c < TS_C32_COUNT; c++)
		free(e->esc[c].v);
	memset(e, 0, sizeof(*e));
}

void ts_trace_release(struct ts_trace *t)
{
	ts_mem_charge(-(int64_t)t->ev.cap * TS_TRACE_EVENT_COST);
	events_release(&t->ev);
	ts_intern_release(&t->strings);
	TS_VEC_RELEASE(t->coll);
	TS_VEC_RELEASE(t->xfer);
	TS_VEC_RELEASE(t->mem);
	TS_VEC_RELEASE(t->flops);
	ts_arena_release(&t->arena);
	ts_trace_init(t);
}

/* realloc one column to cap elements. No MADV_HUGEPAGE: with THP in
 * "madvise" defrag mode, faulting huge pages stalled in direct compaction
 * for seconds (0.2 GB/s) when free huge pages ran out, while 4 KiB pages
 * populate at 1.0-2.0 GB/s on the target VMs. */
static int col_resize(void **p, size_t cap, size_t elem)
{
	void *np = realloc(*p, cap * elem);

	if (!np)
		return TS_ENOMEM;
	*p = np;
	return 0;
}

int ts_trace_reserve(struct ts_trace *t, size_t need)
{
	struct ts_trace_events *e = &t->ev;
	size_t cap;

	if (need <= e->cap)
		return 0;
	cap = e->cap + e->cap / 2;
	if (cap < need)
		cap = need;
	if (cap < 1024)
		cap = 1024;
	if (cap > SIZE_MAX / 16)
		return TS_ENOMEM;
	if (ts_mem_charge((int64_t)(cap - e->cap) * TS_TRACE_EVENT_COST)) {
		/* grow to what is left of the budget before giving up */
		uint64_t used = ts_mem_charged(), budget = ts_mem_budget();
		uint64_t left = used < budget ? budget - used : 0;
		size_t fit = (size_t)(left / TS_TRACE_EVENT_COST) + e->cap;
		if (fit < need || ts_mem_charge((int64_t)(fit - e->cap) * TS_TRACE_EVENT_COST)) {
			t->over_budget = 1;
			return TS_ELIMIT;
		}
		cap = fit;
	}
	/* each column keeps its old contents if a later one fails; cap only
	 * moves once all of them have the new size */
	if (col_resize((void **)&e->ts_off, cap, sizeof(*e->ts_off)) ||
	    col_resize((void **)&e->ts_base, (cap + TS_TS_BLOCK - 1) / TS_TS_BLOCK,
		       sizeof(*e->ts_base)) ||
	    col_resize((void **)&e->dur, cap, sizeof(*e->dur)) ||
	    col_resize((void **)&e->name, cap, sizeof(*e->name)) ||
	    col_resize((void **)&e->cat_str, cap, sizeof(*e->cat_str)) ||
	    col_resize((void **)&e->cat, cap, sizeof(*e->cat)) ||
	    col_resize((void **)&e->ph, cap, sizeof(*e->ph)) ||
	    col_resize((void **)&e->pid, cap, sizeof(*e->pid)) ||
	    col_resize((void **)&e->tid, cap, sizeof(*e->tid)) ||
	    col_resize((void **)&e->stream, cap, sizeof(*e->stream)) ||
	    col_resize((void **)&e->device, cap, sizeof(*e->device)) ||
	    col_resize((void **)&e->correlation, cap, sizeof(*e->correlation)) ||
	    col_resize((void **)&e->external_id, cap, sizeof(*e->external_id)) ||
	    col_resize((void **)&e->flow_id, cap, sizeof(*e->flow_id))) {
		ts_mem_charge(-(int64_t)(cap - e->cap) * TS_TRACE_EVENT_COST);
		return TS_ENOMEM;
	}
	e->cap = cap;
	return 0;
}

int64_t ts_c32_escaped(const struct ts_c32_side *side, size_t i)
{
	size_t l = 0, h = side->n;

	while (l < h) {
		size_t m = l + (h - l) / 2;
		if (side->v[m].ev < i)
			l = m + 1;
		else
			h = m;
	}
	return l < side->n && side->v[l].ev == i ? side->v[l].v : TS_NONE;
}

static uint32_t *c32_col(struct ts_trace_events *e, enum ts_c32 c)
{
	switch (c) {
	case TS_C32_PID: return e->pid;
	case TS_C32_TID: return e->tid;
	case TS_C32_STREAM: return e->stream;
	case TS_C32_CORR: return e->correlation;
	case TS_C32_EXTID: return e->external_id;
	case TS_C32_DUR: return e->dur;
	case TS_C32_FLOW: break;
	case TS_C32_COUNT: break;
	}
	return e->flow_id;
}

static int side_reserve(struct ts_c32_side *side)
{
	struct ts_c32_esc *nv;
	size_t cap;

	if (side->n < side->cap)
		return 0;
	cap = side->cap ? side->cap * 2 : 16;
	nv = realloc(side->v, cap * sizeof(*nv));
	if (!nv)
		return TS_ENOMEM;
	side->v = nv;
	side->cap = cap;
	return 0;
}

/* Store v as event i of column c; i is the newest event (appending keeps
 * the side table sorted). */
static inline int c32_append(struct ts_trace_events *e, uint32_t *col, enum ts_c32 c,
			     size_t i, int64_t v)
{
	struct ts_c32_side *side = &e->esc[c];

	if (v >= 0 && v < TS_C32_ESC) {
		col[i] = (uint32_t)v;
		return 0;
	}
	if (v == TS_NONE) {
		col[i] = TS_C32_NONE;
		return 0;
	}
	if (side_reserve(side))
		return TS_ENOMEM;
	side->v[side->n++] = (struct ts_c32_esc){ (uint32_t)i, v };
	col[i] = TS_C32_ESC;
	return 0;
}

int ts_trace_columns(struct ts_trace_events *e, void *col[TS_TRACE_NCOLS],
		     size_t elem[TS_TRACE_NCOLS])
{
	void *c[TS_TRACE_NCOLS] = { e->ts_off, e->dur, e->name, e->cat_str, e->cat, e->ph,
				    e->pid, e->tid, e->stream, e->device, e->correlation,
				    e->external_id, e->flow_id };
	size_t z[TS_TRACE_NCOLS] = {
		sizeof(*e->ts_off), sizeof(*e->dur), sizeof(*e->name), sizeof(*e->cat_str),
		sizeof(*e->cat), sizeof(*e->ph), sizeof(*e->pid), sizeof(*e->tid),
		sizeof(*e->stream), sizeof(*e->device), sizeof(*e->correlation),
		sizeof(*e->external_id), sizeof(*e->flow_id)
	};

	memcpy(col, c, sizeof(c));
	memcpy(elem, z, sizeof(z));
	return TS_TRACE_NCOLS;
}

int ts_trace_set_c32(struct ts_trace *t, enum ts_c32 c, size_t i, int64_t v)
{
	struct ts_trace_events *e = &t->ev;
	struct ts_c32_side *side = &e->esc[c];
	uint32_t *col = c32_col(e, c);
	size_t l = 0, h = side->n;
	int fits = v == TS_NONE || (v >= 0 && v < TS_C32_ESC);

	while (l < h) {
		size_t m = l + (h - l) / 2;
		if (side->v[m].ev < i)
			l = m + 1;
		else
			h = m;
	}
	if (l < side->n && side->v[l].ev == i) {
		if (!fits) {
			side->v[l].v = v;
			return 0;
		}
		memmove(side->v + l, side->v + l + 1, (side->n - l - 1) * sizeof(*side->v));
		side->n--;
	} else if (!fits) {
		if (side_reserve(side))
			return TS_ENOMEM;
		memmove(side->v + l + 1, side->v + l, (side->n - l) * sizeof(*side->v));
		side->v[l] = (struct ts_c32_esc){ (uint32_t)i, v };
		side->n++;
		col[i] = TS_C32_ESC;
		return 0;
	}
	col[i] = v == TS_NONE ? TS_C32_NONE : (uint32_t)v;
	return 0;
}

/* Store v as the start of event i, the newest event (appending keeps the
 * side table sorted); the first event of a block sets the block's base. */
static inline int ts_append(struct ts_trace_events *e, size_t i, int64_t v)
{
	int64_t *base = &e->ts_base[i >> TS_TS_SHIFT];
	struct ts_c32_side *side = &e->ts_esc;
	uint64_t d;

	if ((i & (TS_TS_BLOCK - 1)) == 0)
		*base = v == TS_NONE ? 0 : v;
	/* |v - base| without overflowing: INT32_MAX at most fits either way
	 * (INT32_MIN + 1 .. INT32_MAX), INT32_MIN is TS_TS_ESC */
	d = v >= *base ? (uint64_t)v - (uint64_t)*base : (uint64_t)*base - (uint64_t)v;
	if (v != TS_NONE && d <= INT32_MAX) {
		e->ts_off[i] = (int32_t)(v - *base);
		return 0;
	}
	if (side_reserve(side))
		return TS_ENOMEM;
	side->v[side->n++] = (struct ts_c32_esc){ (uint32_t)i, v };
	e->ts_off[i] = TS_TS_ESC;
	return 0;
}

int64_t ts_trace_push_event(struct ts_trace *t, const struct ts_trace_event *x)
{
	struct ts_trace_events *e = &t->ev;
	size_t i = e->n;

	if (i >= UINT32_MAX)
		return TS_ELIMIT;
	if (i == e->cap) {
		int rc = ts_trace_reserve(t, i + 1);
		if (rc)
			return rc;
	}
	e->name[i] = x->name;
	e->cat_str[i] = x->cat_str;
	e->cat[i] = (uint8_t)x->cat;
	e->ph[i] = x->ph;
	e->device[i] = x->device;
	if (ts_append(e, i, x->ts_ns) ||
	    c32_append(e, e->pid, TS_C32_PID, i, x->pid) ||
	    c32_append(e, e->tid, TS_C32_TID, i, x->tid) ||
	    c32_append(e, e->stream, TS_C32_STREAM, i, x->stream) ||
	    c32_append(e, e->correlation, TS_C32_CORR, i, x->correlation) ||
	    c32_append(e, e->external_id, TS_C32_EXTID, i, x->external_id) ||
	    c32_append(e, e->flow_id, TS_C32_FLOW, i, x->flow_id) ||
	    c32_append(e, e->dur, TS_C32_DUR, i, x->dur_ns)) {
		/* the event is not kept: drop what it left in the side tables */
		for (int c = 0; c < TS_C32_COUNT; c++)
			if (e->esc[c].n && e->esc[c].v[e->esc[c].n - 1].ev == i)
				e->esc[c].n--;
		if (e->ts_esc.n && e->ts_esc.v[e->ts_esc.n - 1].ev == i)
			e->ts_esc.n--;
		return TS_ENOMEM;
	}
	e->n = i + 1;
	return (int64_t)i;
}

void ts_trace_event_init(struct ts_trace_event *x)
{
	x->ts_ns = TS_NONE;
	x->dur_ns = TS_NONE;
	x->name = TS_NO_ID;
	x->cat_str = TS_NO_ID;
	x->cat = TS_CAT_OTHER;
	x->ph = 0;
	x->pid = TS_NONE;
	x->tid = TS_NONE;
	x->stream = TS_NONE;
	x->device = -1;
	x->correlation = TS_NONE;
	x->external_id = TS_NONE;
	x->flow_id = TS_NONE;
}

/* ------------------------------------------------ batches (trace_int.h) */

static uint32_t remap_id(const uint32_t *remap, uint32_t id)
{
	return id == TS_NO_ID ? TS_NO_ID : remap[id];
}

/* A batch's pid/tid value: its string ids (id < nstr) remapped; the reader
 * ends a batch before any number in the string-id range (trace_read.c
 * raw_strid), so every other value is a plain number. */
static int64_t remap_strid(const uint32_t *remap, size_t nstr, int64_t v)
{
	return TS_IS_STRID(v) && (uint64_t)(v - TS_STRID_BASE) < nstr
		       ? TS_STRID(remap[v - TS_STRID_BASE])
		       : v;
}

/* Side table rows of b with their event index moved by off (a macro: four
 * row types with the same leading `ev`). */
#define APPEND_ROWS(dst, src, off, fix)                                      \
	do {                                                                 \
		if (TS_VEC_RESERVE((dst), (dst).n + (src).n))                \
			return TS_ENOMEM;                                    \
		for (size_t k_ = 0; k_ < (src).n; k_++) {                    \
			(dst).v[(dst).n + k_] = (src).v[k_];                 \
			(dst).v[(dst).n + k_].ev += (off);                   \
			fix;                                                 \
		}                                                            \
	} while (0)

int trace_append_batch(struct ts_trace *t, const struct ts_trace *b, const uint32_t *remap)
{
	struct ts_trace_events *e = &t->ev;
	const struct ts_trace_events *x = &b->ev;
	size_t n0 = e->n, bn = x->n;
	int rc;

	if (!bn)
		return 0;
	if (n0 + bn >= UINT32_MAX)
		return TS_ELIMIT;
	if (n0 + bn > e->cap && (rc = ts_trace_reserve(t, n0 + bn)))
		return rc;
	/* room in every side table first, so that a failure leaves t as it was */
	for (int c = 0; c < TS_C32_COUNT; c++) {
		struct ts_c32_side *side = &e->esc[c];
		size_t need = side->n + x->esc[c].n;
		if (need > side->cap) {
			size_t cap = side->cap ? side->cap : 16;
			while (cap < need)
				cap *= 2;
			struct ts_c32_esc *nv = realloc(side->v, cap * sizeof(*nv));
			if (!nv)
				return TS_ENOMEM;
			side->v = nv;
			side->cap = cap;
		}
	}
	if (TS_VEC_RESERVE(t->coll, t->coll.n + b->coll.n) ||
	    TS_VEC_RESERVE(t->xfer, t->xfer.n + b->xfer.n) ||
	    TS_VEC_RESERVE(t->mem, t->mem.n + b->mem.n) ||
	    TS_VEC_RESERVE(t->flops, t->flops.n + b->flops.n))
		return TS_ENOMEM;
	/* starts: decoded from the batch's blocks, encoded in t's (bases at
	 * t's indices), as serial pushes would; only the side table can fail,
	 * and dropping its new rows undoes the rest (it is all past e->n) */
	size_t nesc = e->ts_esc.n;
	for (size_t i = 0; i < bn; i++)
		if (ts_append(e, n0 + i, ts_ev_ts(x, i))) {
			e->ts_esc.n = nesc;
			return TS_ENOMEM;
		}
	memcpy(e->dur + n0, x->dur, bn * sizeof(*e->dur));
	memcpy(e->cat + n0, x->cat, bn * sizeof(*e->cat));
	memcpy(e->ph + n0, x->ph, bn * sizeof(*e->ph));
	memcpy(e->device + n0, x->device, bn * sizeof(*e->device));
	memcpy(e->pid + n0, x->pid, bn * sizeof(*e->pid));
	memcpy(e->tid + n0, x->tid, bn * sizeof(*e->tid));
	memcpy(e->stream + n0, x->stream, bn * sizeof(*e->stream));
	memcpy(e->correlation + n0, x->correlation, bn * sizeof(*e->correlation));
	memcpy(e->external_id + n0, x->external_id, bn * sizeof(*e->external_id));
	memcpy(e->flow_id + n0, x->flow_id, bn * sizeof(*e->flow_id));
	for (size_t i = 0; i < bn; i++) {
		e->name[n0 + i] = remap_id(remap, x->name[i]);
		e->cat_str[n0 + i] = remap_id(remap, x->cat_str[i]);
	}
	for (int c = 0; c < TS_C32_COUNT; c++) {
		struct ts_c32_side *side = &e->esc[c];
		const struct ts_c32_side *from = &x->esc[c];
		int strs = c == TS_C32_PID || c == TS_C32_TID;
		for (size_t k = 0; k < from->n; k++) {
			struct ts_c32_esc v = from->v[k];
			v.ev += (uint32_t)n0;
			if (strs)
				v.v = remap_strid(remap, b->strings.count, v.v);
			side->v[side->n++] = v;
		}
	}
	APPEND_ROWS(t->coll, b->coll, (uint32_t)n0, {
		struct ts_trace_coll *c_ = &t->coll.v[t->coll.n + k_];
		c_->coll_name = remap_id(remap, c_->coll_name);
		c_->pg_name = remap_id(remap, c_->pg_name);
		c_->pg_desc = remap_id(remap, c_->pg_desc);
		c_->dtype = remap_id(remap, c_->dtype);
	});
	t->coll.n += b->coll.n;
	APPEND_ROWS(t->xfer, b->xfer, (uint32_t)n0, (void)0);
	t->xfer.n += b->xfer.n;
	APPEND_ROWS(t->mem, b->mem, (uint32_t)n0, (void)0);
	t->mem.n += b->mem.n;
	APPEND_ROWS(t->flops, b->flops, (uint32_t)n0, (void)0);
	t->flops.n += b->flops.n;
	e->n = n0 + bn;
	return 0;
}

void trace_batch_clear(struct ts_trace *b)
{
	struct ts_trace_events ev = b->ev;
	TS_VEC(struct ts_trace_coll) coll = { b->coll.v, 0, b->coll.cap };
	TS_VEC(struct ts_trace_xfer) xfer = { b->xfer.v, 0, b->xfer.cap };
	TS_VEC(struct ts_trace_mem) mem = { b->mem.v, 0, b->mem.cap };
	TS_VEC(struct ts_trace_flops) flops = { b->flops.v, 0, b->flops.cap };

	ev.n = 0;
	for (int c = 0; c < TS_C32_COUNT; c++)
		ev.esc[c].n = 0;
	ev.ts_esc.n = 0;
	ts_intern_release(&b->strings);
	ts_arena_release(&b->arena);
	ts_trace_init(b);
	b->ev = ev;
	memcpy(&b->coll, &coll, sizeof(coll));
	memcpy(&b->xfer, &xfer, sizeof(xfer));
	memcpy(&b->mem, &mem, sizeof(mem));
	memcpy(&b->flops, &flops, sizeof(flops));
}

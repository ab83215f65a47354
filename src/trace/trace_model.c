/*
 * trace_model.c - lifecycle, names and column storage of struct ts_trace.
 *
 * The reader and anything that builds a trace by hand (tests, synthetic
 * traces) append events through ts_trace_push_event() so that the columns
 * always grow together. The integer ones are 32-bit codes with a sorted
 * side table for the values that do not fit (trace.h, "Narrow integer
 * columns"), the start as an offset from a per-block base; five of them
 * keep only the events that have a value (trace.h, "Sparse columns") and
 * the raw category is a byte into a dictionary: on a GPU trace about 30
 * bytes per event instead of 78 for full 64-bit columns. Columns are
 * plain malloc/realloc arrays:
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

int64_t ts_trace_clock_resolution_ns(const struct ts_trace *t)
{
	int64_t res = 1000;
	int any = 0;

	for (size_t i = 0; i < t->ev.n && res > 1; i++) {
		int64_t v[2] = { ts_ev_ts(&t->ev, i), ts_ev_dur(&t->ev, i) };
		for (int k = 0; k < 2; k++) {
			if (v[k] == TS_NONE)
				continue;
			any = 1;
			while (res > 1 && v[k] % res)
				res /= 10;
		}
	}
	return any ? res : 0;
}

static int listed_device(const struct ts_trace *t, int64_t id)
{
	for (size_t k = 0; k < t->meta.ndevices; k++)
		if (t->meta.devices[k].id == id)
			return (int)k;
	return -1;
}

/* Two listed GPUs a rank could not tell apart: same name (string id),
 * SM count and memory. */
static int same_device(const struct ts_trace_device *a, const struct ts_trace_device *b)
{
	return a->name == b->name && a->num_sms == b->num_sms && a->total_mem_bytes == b->total_mem_bytes;
}

int ts_trace_rank_device(const struct ts_trace *t, enum ts_rank_dev_source *source)
{
	enum ts_rank_dev_source src = TS_RANK_DEV_FIRST;
	int k = -1;

	if (!t->meta.ndevices) {
		if (source)
			*source = TS_RANK_DEV_NONE;
		return -1;
	}
	for (size_t i = 0; i < t->ev.n && k < 0; i++) {
		enum ts_cat c = (enum ts_cat)t->ev.cat[i];
		int32_t d;
		if (c != TS_CAT_KERNEL && c != TS_CAT_MEMCPY && c != TS_CAT_MEMSET)
			continue;
		d = ts_ev_device(&t->ev, i);
		if (d >= 0)
			k = listed_device(t, d);
	}
	if (k >= 0)
		src = TS_RANK_DEV_EVENTS;
	else if (t->meta.local_rank >= 0 && (k = listed_device(t, t->meta.local_rank)) >= 0)
		src = TS_RANK_DEV_LOCAL_RANK;
	else {
		k = 0;
		for (size_t i = 1; i < t->meta.ndevices && src == TS_RANK_DEV_FIRST; i++)
			if (!same_device(&t->meta.devices[0], &t->meta.devices[i]))
				src = TS_RANK_DEV_ASSUMED;
	}
	if (source)
		*source = src;
	return k;
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
	t->meta.local_rank = -1;
}

static void sparse_release(struct ts_sparse32 *s)
{
	free(s->bits);
	free(s->rank);
	free(s->val);
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
	sparse_release(&e->stream);
	sparse_release(&e->device);
	sparse_release(&e->correlation);
	sparse_release(&e->external_id);
	sparse_release(&e->flow_id);
	free(e->cat_code_of);
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

/* A sparse column's arrays for cap events: the value array as long as the
 * events (untouched capacity costs no resident memory). */
static int sparse_resize(struct ts_sparse32 *s, size_t cap)
{
	size_t words = cap / 64 + 1;

	return col_resize((void **)&s->bits, words, sizeof(*s->bits)) ||
	       col_resize((void **)&s->rank, words, sizeof(*s->rank)) ||
	       col_resize((void **)&s->val, cap, sizeof(*s->val));
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
	    sparse_resize(&e->stream, cap) || sparse_resize(&e->device, cap) ||
	    sparse_resize(&e->correlation, cap) || sparse_resize(&e->external_id, cap) ||
	    sparse_resize(&e->flow_id, cap)) {
		ts_mem_charge(-(int64_t)(cap - e->cap) * TS_TRACE_EVENT_COST);
		return TS_ENOMEM;
	}
	e->cap = cap;
	return 0;
}

static int esc_ev_below(const void *elem, const void *i)
{
	return ((const struct ts_c32_esc *)elem)->ev < *(const size_t *)i;
}

int64_t ts_c32_escaped(const struct ts_c32_side *side, size_t i)
{
	size_t l = ts_lower_bound(side->v, side->n, sizeof(*side->v), &i, esc_ev_below);

	return l < side->n && side->v[l].ev == i ? side->v[l].v : TS_NONE;
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

/* Code of v for event i, the newest event: a value that does not fit goes
 * to the end of the side table (appending keeps it sorted). */
static inline int c32_code(struct ts_c32_side *side, size_t i, int64_t v, uint32_t *code)
{
	if (v >= 0 && v < TS_C32_ESC) {
		*code = (uint32_t)v;
		return 0;
	}
	if (v == TS_NONE) {
		*code = TS_C32_NONE;
		return 0;
	}
	if (side_reserve(side))
		return TS_ENOMEM;
	side->v[side->n++] = (struct ts_c32_esc){ (uint32_t)i, v };
	*code = TS_C32_ESC;
	return 0;
}

/* Append event i (== the column's event count) with a code. */
static inline void sparse_push(struct ts_sparse32 *s, size_t i, uint32_t code)
{
	size_t w = i >> 6;

	if (!(i & 63)) {
		s->bits[w] = 0;
		s->rank[w] = (uint32_t)s->nval;
	}
	if (code != TS_C32_NONE) {
		s->bits[w] |= (uint64_t)1 << (i & 63);
		s->val[s->nval++] = code;
	}
}

/* Change event i of a sparse column holding n events to code. */
static void sparse_set(struct ts_sparse32 *s, size_t n, size_t i, uint32_t code)
{
	size_t w = i >> 6, words = (n + 63) >> 6;
	uint64_t b = (uint64_t)1 << (i & 63);
	size_t at = s->rank[w] + ts_popcount64(s->bits[w] & (b - 1));

	if (s->bits[w] & b) {
		if (code != TS_C32_NONE) {
			s->val[at] = code;
			return;
		}
		memmove(s->val + at, s->val + at + 1, (s->nval - at - 1) * sizeof(*s->val));
		s->nval--;
		s->bits[w] &= ~b;
		for (size_t k = w + 1; k < words; k++)
			s->rank[k]--;
		return;
	}
	if (code == TS_C32_NONE)
		return;
	/* an absent event makes nval < n <= cap: room for one more */
	memmove(s->val + at + 1, s->val + at, (s->nval - at) * sizeof(*s->val));
	s->val[at] = code;
	s->nval++;
	s->bits[w] |= b;
	for (size_t k = w + 1; k < words; k++)
		s->rank[k]++;
}

/* Append the n events of `from` to `to`, which holds n0. */
static void sparse_append(struct ts_sparse32 *to, size_t n0, const struct ts_sparse32 *from, size_t n)
{
	size_t w0 = n0 >> 6, sh = n0 & 63, last = (n0 + n - 1) >> 6;

	if (!sh) {
		to->bits[w0] = 0;
		to->rank[w0] = (uint32_t)to->nval;
	}
	for (size_t w = w0 + 1; w <= last; w++)
		to->bits[w] = 0;
	/* bits past the batch's last event are 0 in its last word */
	for (size_t k = 0; k < (n + 63) >> 6; k++) {
		uint64_t x = from->bits[k];
		to->bits[w0 + k] |= x << sh;
		if (sh && w0 + k + 1 <= last)
			to->bits[w0 + k + 1] |= x >> (64 - sh);
	}
	for (size_t w = w0 + 1; w <= last; w++)
		to->rank[w] = to->rank[w - 1] + ts_popcount64(to->bits[w - 1]);
	memcpy(to->val + to->nval, from->val, from->nval * sizeof(*from->val));
	to->nval += from->nval;
}

static struct ts_sparse32 *sparse_col(struct ts_trace_events *e, enum ts_c32 c)
{
	switch (c) {
	case TS_C32_STREAM: return &e->stream;
	case TS_C32_CORR: return &e->correlation;
	case TS_C32_EXTID: return &e->external_id;
	case TS_C32_FLOW: return &e->flow_id;
	case TS_C32_DEVICE: return &e->device;
	default: return NULL;
	}
}

/* Code of a raw category in the dictionary, TS_CAT8_ESC when it is full
 * and id is not in it (add 0: the dictionary is left as it is). What is
 * found is remembered per string id below CAT_MEMO_MAX, when there is
 * memory for it. */
#define CAT_MEMO_MAX ((uint32_t)1 << 20)
static uint8_t cat_search(struct ts_trace_events *e, uint32_t id, int add)
{
	unsigned k;

	for (k = 0; k < e->ncat_dict && e->cat_dict[k] != id; k++)
		;
	if (k == e->ncat_dict) {
		if (!add)
			return TS_CAT8_ESC;
		if (e->ncat_dict < TS_CAT8_ESC)
			e->cat_dict[e->ncat_dict++] = id;
	}
	if (id >= CAT_MEMO_MAX)
		return (uint8_t)k;
	if (id >= e->ncat_code_of) {
		size_t n = e->ncat_code_of ? e->ncat_code_of : 64;
		while (n <= id)
			n *= 2;
		uint8_t *p = realloc(e->cat_code_of, n);
		if (!p)
			return (uint8_t)k;
		memset(p + e->ncat_code_of, 0, n - e->ncat_code_of);
		e->cat_code_of = p;
		e->ncat_code_of = n;
	}
	e->cat_code_of[id] = (uint8_t)(k + 1);
	return (uint8_t)k;
}

static inline uint8_t cat_lookup(struct ts_trace_events *e, uint32_t id, int add)
{
	if (id < e->ncat_code_of && e->cat_code_of[id])
		return (uint8_t)(e->cat_code_of[id] - 1);
	return cat_search(e, id, add);
}

/* Code of a raw category for event i, the newest event. */
static int cat_code(struct ts_trace_events *e, size_t i, uint32_t id, uint8_t *code)
{
	if (id == TS_NO_ID) {
		*code = TS_CAT8_NONE;
		return 0;
	}
	*code = cat_lookup(e, id, 1);
	if (*code != TS_CAT8_ESC)
		return 0;
	if (side_reserve(&e->esc[TS_C32_CATSTR]))
		return TS_ENOMEM;
	e->esc[TS_C32_CATSTR].v[e->esc[TS_C32_CATSTR].n++] = (struct ts_c32_esc){ (uint32_t)i, id };
	return 0;
}

int ts_trace_columns(struct ts_trace_events *e, void *col[TS_TRACE_NCOLS],
		     size_t elem[TS_TRACE_NCOLS])
{
	void *c[TS_TRACE_NCOLS] = { e->ts_off, e->dur, e->name, e->cat_str, e->cat, e->ph,
				    e->pid, e->tid };
	size_t z[TS_TRACE_NCOLS] = {
		sizeof(*e->ts_off), sizeof(*e->dur), sizeof(*e->name), sizeof(*e->cat_str),
		sizeof(*e->cat), sizeof(*e->ph), sizeof(*e->pid), sizeof(*e->tid)
	};

	memcpy(col, c, sizeof(c));
	memcpy(elem, z, sizeof(z));
	return TS_TRACE_NCOLS;
}

/* Make side's entry for event i hold v (keep: v needs the table) or drop
 * it. Returns 0 or TS_ENOMEM (unchanged). */
static int side_set(struct ts_c32_side *side, size_t i, int64_t v, int keep)
{
	size_t l = ts_lower_bound(side->v, side->n, sizeof(*side->v), &i, esc_ev_below);

	if (l < side->n && side->v[l].ev == i) {
		if (keep) {
			side->v[l].v = v;
			return 0;
		}
		memmove(side->v + l, side->v + l + 1, (side->n - l - 1) * sizeof(*side->v));
		side->n--;
		return 0;
	}
	if (!keep)
		return 0;
	if (side_reserve(side))
		return TS_ENOMEM;
	memmove(side->v + l + 1, side->v + l, (side->n - l) * sizeof(*side->v));
	side->v[l] = (struct ts_c32_esc){ (uint32_t)i, v };
	side->n++;
	return 0;
}

int ts_trace_set_cat_str(struct ts_trace *t, size_t i, uint32_t id)
{
	struct ts_trace_events *e = &t->ev;
	uint8_t code = id == TS_NO_ID ? TS_CAT8_NONE : cat_lookup(e, id, 1);

	if (side_set(&e->esc[TS_C32_CATSTR], i, id, code == TS_CAT8_ESC))
		return TS_ENOMEM;
	e->cat_str[i] = code;
	return 0;
}

int ts_trace_set_c32(struct ts_trace *t, enum ts_c32 c, size_t i, int64_t v)
{
	struct ts_trace_events *e = &t->ev;
	int fits = v == TS_NONE || (v >= 0 && v < TS_C32_ESC);
	uint32_t code = !fits ? TS_C32_ESC : v == TS_NONE ? TS_C32_NONE : (uint32_t)v;
	struct ts_sparse32 *s = sparse_col(e, c);

	if (c == TS_C32_CATSTR)
		return ts_trace_set_cat_str(t, i, v >= 0 && v < UINT32_MAX ? (uint32_t)v : TS_NO_ID);
	if (side_set(&e->esc[c], i, v, !fits))
		return TS_ENOMEM;
	if (s)
		sparse_set(s, e->n, i, code);
	else
		(c == TS_C32_PID ? e->pid : c == TS_C32_TID ? e->tid : e->dur)[i] = code;
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
	uint32_t pid, tid, dur, stream, dev, corr, ext, flow;
	uint8_t cs;

	if (i >= UINT32_MAX)
		return TS_ELIMIT;
	if (i == e->cap) {
		int rc = ts_trace_reserve(t, i + 1);
		if (rc)
			return rc;
	}
	if (ts_append(e, i, x->ts_ns) ||
	    c32_code(&e->esc[TS_C32_PID], i, x->pid, &pid) ||
	    c32_code(&e->esc[TS_C32_TID], i, x->tid, &tid) ||
	    c32_code(&e->esc[TS_C32_STREAM], i, x->stream, &stream) ||
	    c32_code(&e->esc[TS_C32_CORR], i, x->correlation, &corr) ||
	    c32_code(&e->esc[TS_C32_EXTID], i, x->external_id, &ext) ||
	    c32_code(&e->esc[TS_C32_FLOW], i, x->flow_id, &flow) ||
	    c32_code(&e->esc[TS_C32_DUR], i, x->dur_ns, &dur) ||
	    c32_code(&e->esc[TS_C32_DEVICE], i, x->device == -1 ? TS_NONE : x->device, &dev) ||
	    cat_code(e, i, x->cat_str, &cs)) {
		/* the event is not kept: drop what it left in the side tables */
		for (int c = 0; c < TS_C32_COUNT; c++)
			if (e->esc[c].n && e->esc[c].v[e->esc[c].n - 1].ev == i)
				e->esc[c].n--;
		if (e->ts_esc.n && e->ts_esc.v[e->ts_esc.n - 1].ev == i)
			e->ts_esc.n--;
		return TS_ENOMEM;
	}
	e->name[i] = x->name;
	e->cat_str[i] = cs;
	e->cat[i] = (uint8_t)x->cat;
	e->ph[i] = x->ph;
	e->pid[i] = pid;
	e->tid[i] = tid;
	e->dur[i] = dur;
	sparse_push(&e->stream, i, stream);
	sparse_push(&e->device, i, dev);
	sparse_push(&e->correlation, i, corr);
	sparse_push(&e->external_id, i, ext);
	sparse_push(&e->flow_id, i, flow);
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
	/* room in every side table first, so that a failure leaves t as it was;
	 * the batch's raw categories are coded again with t's dictionary, and
	 * those t cannot code become escapes */
	size_t cat_new = 0;
	/* the batch holds at most its dictionary plus its escapes in distinct
	 * categories: when t's dictionary has room for them all, none escapes
	 * and the events need no look */
	if (e->ncat_dict + x->ncat_dict + x->esc[TS_C32_CATSTR].n > TS_CAT8_ESC) {
		for (size_t i = 0; i < bn; i++) {
			uint32_t id = remap_id(remap, ts_ev_cat_str(x, i));
			cat_new += id != TS_NO_ID && cat_lookup(e, id, 0) == TS_CAT8_ESC;
		}
		if (e->ncat_dict + cat_new <= TS_CAT8_ESC)
			cat_new = 0;
	}
	for (int c = 0; c < TS_C32_COUNT; c++) {
		struct ts_c32_side *side = &e->esc[c];
		size_t need = side->n + (c == TS_C32_CATSTR ? cat_new : x->esc[c].n);
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
	memcpy(e->pid + n0, x->pid, bn * sizeof(*e->pid));
	memcpy(e->tid + n0, x->tid, bn * sizeof(*e->tid));
	sparse_append(&e->stream, n0, &x->stream, bn);
	sparse_append(&e->device, n0, &x->device, bn);
	sparse_append(&e->correlation, n0, &x->correlation, bn);
	sparse_append(&e->external_id, n0, &x->external_id, bn);
	sparse_append(&e->flow_id, n0, &x->flow_id, bn);
	for (size_t i = 0; i < bn; i++) {
		e->name[n0 + i] = remap_id(remap, x->name[i]);
		/* cannot fail: the side table has room */
		(void)cat_code(e, n0 + i, remap_id(remap, ts_ev_cat_str(x, i)), &e->cat_str[n0 + i]);
	}
	for (int c = 0; c < TS_C32_COUNT; c++) {
		struct ts_c32_side *side = &e->esc[c];
		const struct ts_c32_side *from = &x->esc[c];
		int strs = c == TS_C32_PID || c == TS_C32_TID;
		if (c == TS_C32_CATSTR)
			continue;
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
	ev.stream.nval = ev.device.nval = ev.correlation.nval = 0;
	ev.external_id.nval = ev.flow_id.nval = 0;
	ev.ncat_dict = 0;
	if (ev.ncat_code_of)
		memset(ev.cat_code_of, 0, ev.ncat_code_of);
	ts_intern_release(&b->strings);
	ts_arena_release(&b->arena);
	ts_trace_init(b);
	b->ev = ev;
	memcpy(&b->coll, &coll, sizeof(coll));
	memcpy(&b->xfer, &xfer, sizeof(xfer));
	memcpy(&b->mem, &mem, sizeof(mem));
	memcpy(&b->flops, &flops, sizeof(flops));
}

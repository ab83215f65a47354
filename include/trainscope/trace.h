/*
 * trace.h - the per-rank profiler trace model (PyTorch profiler / Kineto
 * Chrome-trace JSON, the legacy pre-Kineto array, CUDA, ROCm, MUSA, MTIA,
 * CPU-only) and the reader that fills it.
 *
 * Layout: one `struct ts_trace` per trace file (one rank, one profiling
 * window). Events are stored column-wise (struct of arrays, index i is one
 * event) so analyses stream over just the columns they need:
 *
 *   ev.ts_off[i]   ev.dur[i]    ev.name[i]  ev.cat[i]  ev.ph[i] ...
 *   +-----------+  +----------+  +--------+  +-------+  +------+
 *   | int32 off |  | uint32 ns|  | intern |  | uint8 |  | char |
 *   +-----------+  +----------+  +--------+  +-------+  +------+
 *   ev.ts_base[i >> 10]: one int64 ns per block of TS_TS_BLOCK events
 *
 * Read the start with ts_ev_ts(&t->ev, i) and the narrow columns with
 * their accessors (ts_ev_dur(), ts_ev_pid(), ...); see "Narrow integer
 * columns" below for the encodings.
 *
 * Times are integer nanoseconds parsed exactly from the text ("123.456"
 * microseconds -> 123456 ns), on the file's own time base (relative to
 * baseTimeNanoseconds when the file has it; meta.base_ns records it).
 * Strings (names, categories, process-group names) are interned in
 * `strings`; ids index ts_intern_str(&t->strings, id).
 *
 * Arguments most events do not carry live in sparse side tables keyed by
 * event index (collectives, memcpy bytes, memory instants, FLOPs).
 *
 * Ownership: everything belongs to the ts_trace and is freed by
 * ts_trace_release().
 */
#ifndef TRAINSCOPE_TRACE_H
#define TRAINSCOPE_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"

/* Event categories that analyses branch on. The raw category string is
 * kept too (ev.cat_str). */
enum ts_cat {
	TS_CAT_OTHER = 0,
	TS_CAT_CPU_OP,              /* cpu_op, legacy events without cat */
	TS_CAT_USER_ANNOTATION,     /* user_annotation (record_function) */
	TS_CAT_GPU_USER_ANNOTATION, /* gpu_user_annotation */
	TS_CAT_RUNTIME,             /* cuda_runtime, musa_runtime, privateuse1_runtime, xpu_runtime, mtia_runtime, hip */
	TS_CAT_DRIVER,              /* cuda_driver, musa_driver, privateuse1_driver */
	TS_CAT_KERNEL,              /* kernel, Kernel */
	TS_CAT_MEMCPY,              /* gpu_memcpy, Memcpy */
	TS_CAT_MEMSET,              /* gpu_memset, Memset */
	TS_CAT_SYNC,                /* cuda_sync */
	TS_CAT_PYTHON,              /* python_function */
	TS_CAT_INSTANT,             /* cpu_instant_event ([memory] and others) */
	TS_CAT_FLOW,                /* ac2g, fwdbwd, async (s/f flow events) */
	TS_CAT_TRACE_SPAN,          /* Trace ("PyTorch Profiler (0)") */
	TS_CAT_OVERHEAD,            /* overhead */
	TS_CAT_COLLECTIVE,          /* collective_comm */
	TS_CAT_COUNT
};

const char *ts_cat_name(enum ts_cat cat);

/* Category of a raw category string ("cpu_op", old "Operator", "Kernel",
 * "Runtime", "mtia_ccp_events" -> TS_CAT_KERNEL, ...); TS_CAT_OTHER when
 * unknown. The table is documented in docs/trace-reader.md. */
enum ts_cat ts_cat_of(const char *s, size_t n);

/* Device/runtime vendor of a trace, from metadata first, then names. */
enum ts_vendor {
	TS_VENDOR_UNKNOWN = 0,
	TS_VENDOR_CPU,   /* no device activity */
	TS_VENDOR_CUDA,
	TS_VENDOR_ROCM,
	TS_VENDOR_MUSA,
	TS_VENDOR_MTIA
};

const char *ts_vendor_name(enum ts_vendor v);

#define TS_NO_ID UINT32_MAX   /* absent interned string */
#define TS_NONE INT64_MIN     /* absent integer field */

/* pid/tid may be strings in real files ("Spans", "stream 7", ""). A
 * string that is not a number is interned and stored as TS_STRID(id);
 * "stream N" is stored as N. */
#define TS_STRID_BASE (INT64_MIN / 2)
#define TS_STRID(id) (TS_STRID_BASE + (int64_t)(id))
#define TS_IS_STRID(v) ((v) < TS_STRID_BASE / 2 && (v) != TS_NONE)

/*
 * Narrow integer columns. The start is an offset from a per-block base
 * (below, TS_TS_BLOCK). pid, tid, duration (ns), stream, device,
 * correlation, external id and flow id are 64-bit values that nearly
 * always fit 32 bits, so each is coded as one uint32_t: the value itself
 * when it is in [0, TS_C32_ESC), TS_C32_NONE for TS_NONE, and TS_C32_ESC
 * when the value lives in the column's side table (negative numbers,
 * TS_STRID ids, values of 2^32 - 2 and more), sorted by event index. pid,
 * tid and duration hold one code per event; the others are sparse (below).
 * Read them with the accessors (ts_ev_pid(&t->ev, i), ...), change one
 * with ts_trace_set_c32(); never write the columns directly.
 */
#define TS_C32_NONE UINT32_MAX
#define TS_C32_ESC (UINT32_MAX - 1)

/*
 * The start (ns) is stored in 32 bits too, as an offset from its block's
 * base: events are grouped by index in blocks of TS_TS_BLOCK, and a
 * block's base (ev.ts_base[i >> TS_TS_SHIFT]) is the start of its first
 * event (0 when that one has none). Event i stores ts - base in ev.ts_off[i]
 * when that is in [INT32_MIN + 1, INT32_MAX] (+-2.1 s; files list events
 * nearly in time order, so a block rarely spans more), else TS_TS_ESC and
 * the value (TS_NONE too) is in ev.ts_esc, sorted by event index. Read it
 * with ts_ev_ts(); it is only written by ts_trace_push_event() and the
 * reader's batch append.
 */
#define TS_TS_SHIFT 10
#define TS_TS_BLOCK ((size_t)1 << TS_TS_SHIFT)
#define TS_TS_ESC INT32_MIN

enum ts_c32 {
	TS_C32_PID, TS_C32_TID, TS_C32_STREAM, TS_C32_CORR, TS_C32_EXTID, TS_C32_FLOW,
	TS_C32_DUR, TS_C32_DEVICE, TS_C32_CATSTR, TS_C32_COUNT
};

struct ts_c32_esc {
	uint32_t ev;           /* event index */
	int64_t v;             /* its value */
};

struct ts_c32_side {
	struct ts_c32_esc *v;  /* sorted by ev */
	size_t n, cap;
};

/*
 * Sparse columns. stream, device, correlation, external id and flow id are
 * absent on most events (a flow carries only its id; only GPU activities
 * have a stream and a device), so each keeps only its present values, in
 * event order, with a presence bit per event and, per 64 events, the
 * number of values before them: event i's value is
 * val[rank[i / 64] + popcount(bits[i / 64] below bit i % 64)]. Values are
 * coded as in the 32-bit columns (TS_C32_ESC: in the side table; absent
 * events have no value). About 0.19 bytes per event plus 4 per value.
 */
struct ts_sparse32 {
	uint64_t *bits;        /* bit i % 64 of word i / 64: event i has a value */
	uint32_t *rank;        /* values before word w */
	uint32_t *val;         /* the present values, coded */
	size_t nval;
};

/*
 * Raw categories. An event's category string is one of a handful per
 * trace, so cat_str holds one byte per event: a code into cat_dict (up to
 * TS_CAT8_ESC codes, in first-appearance order), TS_CAT8_NONE for none,
 * TS_CAT8_ESC for an id in the side table esc[TS_C32_CATSTR]. Read it with
 * ts_ev_cat_str(), change it with ts_trace_set_cat_str().
 */
#define TS_CAT8_NONE 255
#define TS_CAT8_ESC 254

struct ts_trace_events {
	size_t n;
	size_t cap;
	int32_t *ts_off;       /* start, as an offset from its block's base: ts_ev_ts() */
	uint32_t *dur;         /* duration in ns; 0 for instants, TS_NONE if absent: ts_ev_dur() */
	uint32_t *name;        /* interned name */
	uint8_t *cat_str;      /* raw category code: ts_ev_cat_str() */
	uint8_t *cat;          /* enum ts_cat */
	char *ph;              /* 'X', 'i', 's', 'f', 'M', 'C', 'B', 'E', ... */
	uint32_t *pid;         /* process (CPU) or device (GPU): ts_ev_pid() */
	uint32_t *tid;         /* thread (CPU) or stream (GPU): ts_ev_tid() */
	struct ts_sparse32 stream;      /* args.stream, TS_NONE if absent: ts_ev_stream() */
	struct ts_sparse32 device;      /* args.device, -1 if absent: ts_ev_device() */
	struct ts_sparse32 correlation; /* args.correlation, TS_NONE if absent: ts_ev_corr() */
	struct ts_sparse32 external_id; /* args["External id"] / "external id", TS_NONE: ts_ev_extid() */
	struct ts_sparse32 flow_id;     /* flow id for s/f events, TS_NONE otherwise: ts_ev_flow() */
	uint32_t cat_dict[TS_CAT8_ESC]; /* interned raw category of each code */
	unsigned ncat_dict;
	uint8_t *cat_code_of;  /* string id -> its code + 1 (TS_CAT8_ESC + 1: escaped), 0: not seen */
	size_t ncat_code_of;
	struct ts_c32_side esc[TS_C32_COUNT]; /* values that do not fit, per column */
	int64_t *ts_base;      /* per block of TS_TS_BLOCK events: its first event's start, or 0 */
	struct ts_c32_side ts_esc; /* starts that are no offset of their block's base */
};

/* Value of event i in an escaped column's side table (TS_NONE if absent). */
int64_t ts_c32_escaped(const struct ts_c32_side *side, size_t i);

static inline int64_t ts_c32_dec(uint32_t v, const struct ts_c32_side *side, size_t i)
{
	if (v < TS_C32_ESC)
		return (int64_t)v;
	return v == TS_C32_NONE ? TS_NONE : ts_c32_escaped(side, i);
}

static inline int64_t ts_c32_get(const uint32_t *col, const struct ts_c32_side *side, size_t i)
{
	return ts_c32_dec(col[i], side, i);
}

static inline unsigned ts_popcount64(uint64_t x)
{
#if defined(__POPCNT__)
	return (unsigned)__builtin_popcountll(x);
#else
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* Coded value of event i (< ev.n) of a sparse column, TS_C32_NONE if absent. */
static inline uint32_t ts_sparse_raw(const struct ts_sparse32 *s, size_t i)
{
	uint64_t w = s->bits[i >> 6], b = (uint64_t)1 << (i & 63);

	if (!(w & b))
		return TS_C32_NONE;
	return s->val[s->rank[i >> 6] + ts_popcount64(w & (b - 1))];
}

/* The 64-bit values of the narrow columns (as the reader parsed them). */
static inline int64_t ts_ev_pid(const struct ts_trace_events *e, size_t i)
{
	return ts_c32_get(e->pid, &e->esc[TS_C32_PID], i);
}
static inline int64_t ts_ev_tid(const struct ts_trace_events *e, size_t i)
{
	return ts_c32_get(e->tid, &e->esc[TS_C32_TID], i);
}
static inline int64_t ts_ev_stream(const struct ts_trace_events *e, size_t i)
{
	return ts_c32_dec(ts_sparse_raw(&e->stream, i), &e->esc[TS_C32_STREAM], i);
}
static inline int64_t ts_ev_corr(const struct ts_trace_events *e, size_t i)
{
	return ts_c32_dec(ts_sparse_raw(&e->correlation, i), &e->esc[TS_C32_CORR], i);
}
static inline int64_t ts_ev_extid(const struct ts_trace_events *e, size_t i)
{
	return ts_c32_dec(ts_sparse_raw(&e->external_id, i), &e->esc[TS_C32_EXTID], i);
}
static inline int64_t ts_ev_flow(const struct ts_trace_events *e, size_t i)
{
	return ts_c32_dec(ts_sparse_raw(&e->flow_id, i), &e->esc[TS_C32_FLOW], i);
}
/* args.device, -1 when absent. */
static inline int32_t ts_ev_device(const struct ts_trace_events *e, size_t i)
{
	int64_t v = ts_c32_dec(ts_sparse_raw(&e->device, i), &e->esc[TS_C32_DEVICE], i);

	return v == TS_NONE ? -1 : (int32_t)v;
}
/* Start in ns (TS_NONE if absent): its block's base plus its offset, or
 * the escaped value. */
static inline int64_t ts_ev_ts(const struct ts_trace_events *e, size_t i)
{
	int32_t o = e->ts_off[i];

	if (o != TS_TS_ESC)
		return e->ts_base[i >> TS_TS_SHIFT] + o;
	return ts_c32_escaped(&e->ts_esc, i);
}
/* Durations of 2^32 - 2 ns (4.3 s) and more, and negative ones, are escaped. */
static inline int64_t ts_ev_dur(const struct ts_trace_events *e, size_t i)
{
	return ts_c32_get(e->dur, &e->esc[TS_C32_DUR], i);
}
/* Interned raw category of event i, TS_NO_ID if none. */
static inline uint32_t ts_ev_cat_str(const struct ts_trace_events *e, size_t i)
{
	uint8_t c = e->cat_str[i];

	if (c < TS_CAT8_ESC)
		return e->cat_dict[c];
	return c == TS_CAT8_NONE ? TS_NO_ID : (uint32_t)ts_c32_escaped(&e->esc[TS_C32_CATSTR], i);
}

/* record_param_comms cpu_ops and NCCL kernels carrying collective args. */
struct ts_trace_coll {
	uint32_t ev;           /* event index */
	uint32_t coll_name;    /* "Collective name" (allreduce, all_gather, ...) */
	uint32_t pg_name;      /* "Process Group Name" */
	uint32_t pg_desc;      /* "Process Group Description" */
	uint32_t dtype;
	int64_t seq;           /* "Seq", TS_NONE if absent */
	int64_t in_nelems;
	int64_t out_nelems;
	int32_t group_size;
	uint64_t comms_id;     /* may exceed int64 */
};

/* gpu_memcpy / gpu_memset payloads. */
struct ts_trace_xfer {
	uint32_t ev;
	int64_t bytes;
};

/* [memory] instants (profile_memory=True). */
struct ts_trace_mem {
	uint32_t ev;
	int64_t bytes;            /* + alloc, - free */
	int64_t total_allocated;
	int64_t total_reserved;
	int32_t device_type;      /* 0 CPU, 1 CUDA/GPU, ... */
	int32_t device_id;
};

/* Events that carry a profiler FLOP count (with_flops). */
struct ts_trace_flops {
	uint32_t ev;
	double flops;
};

struct ts_trace_pg {
	uint32_t name;            /* pg_name */
	uint32_t desc;            /* pg_desc */
	uint32_t backend;         /* backend_config */
	int32_t size;
	int32_t *ranks;           /* size entries (arena) */
};

struct ts_trace_device {
	int32_t id;
	uint32_t name;            /* "NVIDIA A100-SXM4-40GB" */
	int64_t total_mem_bytes;
	int32_t compute_major, compute_minor;
	int32_t num_sms;
};

struct ts_trace_meta {
	int64_t rank;             /* distributedInfo.rank, else from the name, else -1 */
	int rank_source;          /* 0 unknown, 1 distributedInfo, 2 file name, 3 file order */
	int64_t world_size;       /* -1 if unknown */
	uint32_t backend;         /* distributedInfo.backend */
	enum ts_vendor vendor;
	int legacy;               /* pre-Kineto bare array */
	int nsys;                 /* built from an Nsight Systems SQLite export */
	int64_t base_ns;          /* baseTimeNanoseconds, 0 if absent */
	int has_base;
	uint32_t profiler_version;/* cupti_version / mupti_version / roctracer text, TS_NO_ID */
	uint32_t trace_name;      /* traceName */
	uint32_t runtime_version; /* cuda/musa/hip_runtime_version as written, TS_NO_ID */
	uint32_t driver_version;  /* cuda/musa/hip_driver_version as written, TS_NO_ID */
	uint32_t nccl_version;    /* distributedInfo.nccl_version, TS_NO_ID */
	int64_t local_rank;       /* distributedInfo.local_rank, -1 if absent */
	struct ts_trace_pg *pgs;
	size_t npgs;
	struct ts_trace_device *devices;
	size_t ndevices;

	/* reading outcome */
	int truncated;            /* the file ends inside the document */
	uint64_t truncated_at;    /* byte offset (decompressed) where it ended */
	int events_whole;         /* its event list closed (a cut after it loses
				   * no event) */
	int gzip;                 /* the file is gzip-compressed: offsets are of the inflated JSON */
	uint64_t recovered;       /* events skipped or repaired by recovery */
	uint64_t first_recovery_at; /* byte offset of the first event recovered */
	uint64_t bytes;           /* decompressed bytes read */
	uint64_t skipped;         /* events dropped on purpose (opts.skip_python, skip_flows) */
	/* Events whose "ts" or "dur" was given but cannot be used (NaN,
	 * Infinity, a string, beyond +-2^63 ns such as 1e300) and complete
	 * events with a negative "dur": kept with the value absent (TS_NONE)
	 * and counted here, so the CLI warns (ignored-values); strict rejects
	 * the first one instead. */
	uint64_t bad_ts, bad_dur, negative_dur;
	/* Complete ("X") events with no "dur" at all: kept with the duration
	 * absent, so no interval counts them; counted for the same warning. */
	uint64_t missing_dur;
};

struct ts_trace {
	char path[TS_ERR_PATH_MAX];
	struct ts_trace_meta meta;
	struct ts_trace_events ev;
	struct ts_intern strings;
	TS_VEC(struct ts_trace_coll) coll;
	TS_VEC(struct ts_trace_xfer) xfer;
	TS_VEC(struct ts_trace_mem) mem;
	TS_VEC(struct ts_trace_flops) flops;
	struct ts_arena arena;    /* metadata arrays */
	int over_budget;          /* growth refused by the memory budget (limits.h) */
};

struct ts_trace_opts {
	int skip_python;          /* drop python_function events (they can be 90 % of a file) */
	int skip_flows;           /* drop flow events (ph s/t/f: ac2g, fwdbwd; about a third
				   * of a GPU trace; links use args.correlation) */
	int strict;               /* no recovery from known writer bugs */
	int meta_only;            /* the top-level metadata alone: the event array is
				   * validated, not kept (no events); the vendor from
				   * metadata keys and device names, else
				   * TS_VENDOR_UNKNOWN. For reading where many traces
				   * ran without holding their events. */
	int has_order;            /* 1: use `order` as the last rank source */
	int64_t order;            /* rank when neither distributedInfo nor the
				   * file name gives one (the file's 0-based
				   * position in the caller's list; rank_source 3) */
};

void ts_trace_init(struct ts_trace *t);
void ts_trace_release(struct ts_trace *t);

/*
 * Read one trace file (plain or gzip, detected by content). Returns 0 on
 * success, including a truncated file (meta.truncated set: every complete
 * event is kept) and a file repaired by recovery (meta.recovered > 0).
 * Returns TS_EPARSE with err naming the file, byte offset and line when the
 * file is not a trace or is broken beyond the documented recoveries;
 * TS_EIO when it cannot be read. opts may be NULL.
 */
int ts_trace_read(struct ts_trace *t, const char *path,
		  const struct ts_trace_opts *opts, struct ts_err *err);

/* Same, from memory (fuzzing, tests). */
int ts_trace_read_mem(struct ts_trace *t, const void *data, size_t n,
		      const char *name, const struct ts_trace_opts *opts,
		      struct ts_err *err);

/* Interned string of an id (empty string for TS_NO_ID). */
const char *ts_trace_str(const struct ts_trace *t, uint32_t id);

/*
 * The trace's clock resolution in ns as its writer's timestamps show it:
 * the largest of 1, 10, 100 and 1000 that divides every start and
 * duration of its events (a Kineto trace of recent PyTorch writes ns, "ts":
 * 12.345 us; older ones, the legacy array and hand-built traces whole us:
 * 1000). 0 when no event has a time. One pass over the events, stopping at
 * the first time that is not a multiple of 10 ns.
 */
int64_t ts_trace_clock_resolution_ns(const struct ts_trace *t);

/* How ts_trace_rank_device() chose the rank's device. */
enum ts_rank_dev_source {
	TS_RANK_DEV_NONE = 0,     /* no device listed */
	TS_RANK_DEV_EVENTS,       /* the device its first GPU activity ran on */
	TS_RANK_DEV_LOCAL_RANK,   /* the listed id equal to distributedInfo.local_rank */
	TS_RANK_DEV_FIRST,        /* neither, and the listed GPUs alike (or one): the
				   * first listed, whose name, SM count and memory
				   * are every listed one's */
	TS_RANK_DEV_ASSUMED       /* neither, and the listed GPUs differ in name, SM
				   * count or memory: the first listed (GPU 0's on
				   * a node's list) taken for the rank's, assumed */
};

/*
 * The index in t->meta.devices of the GPU the trace's rank ran on. Kineto
 * lists every visible GPU of the node in deviceProperties, so the first
 * entry is GPU 0's, not necessarily the rank's: the listed device whose id
 * is the `device` of the first GPU activity (kernel, memcpy, memset) that
 * names a listed one; else (no such activity, a trace read meta_only) the
 * one whose id is distributedInfo.local_rank; else 0, which is an
 * assumption (TS_RANK_DEV_ASSUMED) when the listed GPUs differ. -1 when
 * none is listed. *source (may be NULL) says which rule chose: the one
 * fact every output that prints the rank's device renders
 * (ts_rank_device_assumed_warning, profile.h).
 */
int ts_trace_rank_device(const struct ts_trace *t, enum ts_rank_dev_source *source);

/*
 * Building a trace by hand (tests, synthetic traces, the reader itself).
 * One event as a row; ts_trace_event_init() sets every field to "absent"
 * (TS_NONE, TS_NO_ID, device -1, cat OTHER, ph 0).
 */
struct ts_trace_event {
	int64_t ts_ns, dur_ns;
	uint32_t name, cat_str;
	enum ts_cat cat;
	char ph;
	int64_t pid, tid, stream;
	int32_t device;
	int64_t correlation, external_id, flow_id;
};

void ts_trace_event_init(struct ts_trace_event *x);
/* Make room for `need` events in every column (amortised growth). Returns
 * 0, TS_ENOMEM, or TS_ELIMIT with over_budget set when the memory budget
 * (TS_TRACE_EVENT_COST per event, limits.h) refuses the growth; columns
 * keep their contents. Invalidates column pointers. */
int ts_trace_reserve(struct ts_trace *t, size_t need);
/* Append one event to all columns; returns its index, or TS_ENOMEM /
 * TS_ELIMIT (more than UINT32_MAX - 1 events). */
int64_t ts_trace_push_event(struct ts_trace *t, const struct ts_trace_event *x);
/* The eight columns with one element per event and their element sizes in
 * bytes, in the order of struct ts_trace_events (for code that touches
 * column memory as bytes, such as the reader's page prefaulting; the
 * sparse columns and the per-block ts_base, 8 bytes per TS_TS_BLOCK
 * events, are not among them). Returns TS_TRACE_NCOLS. */
#define TS_TRACE_NCOLS 8
int ts_trace_columns(struct ts_trace_events *e, void *col[TS_TRACE_NCOLS],
		     size_t elem[TS_TRACE_NCOLS]);
/* Set event i (< ev.n) of narrow column c to v (tests, repairs). Returns 0
 * or TS_ENOMEM (the side table could not grow; the column is unchanged). */
int ts_trace_set_c32(struct ts_trace *t, enum ts_c32 c, size_t i, int64_t v);
/* Set event i's raw category to the interned id (TS_NO_ID: none). Returns
 * 0 or TS_ENOMEM (the event is unchanged). */
int ts_trace_set_cat_str(struct ts_trace *t, size_t i, uint32_t id);

#endif

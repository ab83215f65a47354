/*
 * nsys.h - Nsight Systems SQLite exports (`nsys export --type sqlite`) read
 * into the per-rank trace model of trace.h, what an export can and cannot
 * answer, per-device GPU walls, and the `nsys stats` summary reports.
 *
 * An export holds every process and GPU of one capture. A "rank" here is
 * one (process, device) pair that ran GPU activity; ts_nsys_read_rank()
 * fills one struct ts_trace with that device's kernels, memcpys, memsets
 * and synchronisations and with the CPU side of that process (CUDA
 * runtime/driver calls with `_vNNNN` suffixes stripped, NVTX ranges and
 * marks), so the Kineto analyses (profile.h) run on it unchanged. GPU
 * events use pid = device and tid = stream, CPU events the OS pid and tid
 * decoded from globalTid; times are the export's own ns (session clock).
 *
 * Nothing is assumed about the schema: tables come from sqlite_master and
 * columns from PRAGMA table_info, so exports from schema 3.1 to 3.25 and
 * exports that lack whole tables read; what is missing shows up in the
 * capability report (struct ts_nsys_caps) instead of an error.
 *
 * Ownership: a struct ts_nsys owns its database handle and every string it
 * reports; ts_nsys_close() frees them. Facts and definitions: docs/nsys.md.
 */
#ifndef TRAINSCOPE_NSYS_H
#define TRAINSCOPE_NSYS_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/trace.h"

/* Tables the reader looks for. */
enum ts_nsys_tab {
	TS_NT_KERNEL = 0,  /* CUPTI_ACTIVITY_KIND_KERNEL */
	TS_NT_MEMCPY,      /* CUPTI_ACTIVITY_KIND_MEMCPY */
	TS_NT_MEMSET,      /* CUPTI_ACTIVITY_KIND_MEMSET */
	TS_NT_RUNTIME,     /* CUPTI_ACTIVITY_KIND_RUNTIME (runtime and driver) */
	TS_NT_SYNC,        /* CUPTI_ACTIVITY_KIND_SYNCHRONIZATION */
	TS_NT_NVTX,        /* NVTX_EVENTS */
	TS_NT_STRINGS,     /* StringIds */
	TS_NT_PROCESSES,   /* PROCESSES */
	TS_NT_GPU,         /* TARGET_INFO_GPU */
	TS_NT_ENUM_MEMCPY, /* ENUM_CUDA_MEMCPY_OPER */
	TS_NT_ENUM_SYNC,   /* ENUM_CUPTI_SYNC_TYPE */
	TS_NT_META,        /* META_DATA_EXPORT (3.15+) */
	TS_NT_META_OLD,    /* EXPORT_META_DATA (3.1 .. 3.14) */
	TS_NT_PAYLOAD,     /* NVTX_PAYLOAD_SCHEMAS */
	TS_NT_SESSION,     /* TARGET_INFO_SESSION_START_TIME */
	TS_NT_SYSENV,      /* TARGET_INFO_SYSTEM_ENV */
	TS_NT_CUDA_DEVICE, /* TARGET_INFO_CUDA_DEVICE (older exports: ids, no name) */
	TS_NT_COUNT
};

/* Table name of a ts_nsys_tab. */
const char *ts_nsys_table_name(enum ts_nsys_tab t);

/* What the export can answer (1) or not (0), computed from the probe. */
struct ts_nsys_caps {
	int kernels;         /* KERNEL table with start, end, deviceId and a name column */
	int memcpy, memset, runtime, sync, nvtx;
	int gpu_name;        /* TARGET_INFO_GPU has a name for the devices */
	/* Without named devices, the CUDA devices TARGET_INFO_CUDA_DEVICE
	 * lists (by cudaId; 0 when it is absent) and their multiprocessor
	 * count (numMultiprocessors: the same on all, else or absent -1). An
	 * SM count names no model (an H100 SXM and an H200 both have 132). */
	int cuda_devices;
	int32_t cuda_device_sms;
	int launch_join;     /* KERNEL and RUNTIME both carry correlationId */
	int nccl_kernels;    /* at least one NCCL-class kernel */
	int nccl_nvtx;       /* NCCL NVTX ranges (ncclSend, ncclAllReduce, ...) */
	int message_sizes;   /* NVTX payloads exported (EXPORT_PARAM_INCLUDE_BLOBS=true and binaryData present) */
	int blobs_excluded;  /* export says EXPORT_PARAM_INCLUDE_BLOBS=false */
	int payload_schemas; /* NVTX_PAYLOAD_SCHEMAS present (what the payloads would hold) */
};

struct ts_nsys_rank {
	int64_t global_pid;  /* globalPid as stored (pid in bits 24..47) */
	int64_t pid;         /* OS pid */
	int32_t device;      /* deviceId */
	char process[64];    /* PROCESSES.name, "" if unknown */
	int64_t kernels, memcpys, memsets;
};

struct ts_nsys_gpu {
	int32_t id;
	char name[96];          /* "" from TARGET_INFO_CUDA_DEVICE (no name) */
	int32_t sms;            /* TARGET_INFO_GPU smCount, else TARGET_INFO_CUDA_DEVICE
				 * numMultiprocessors; -1 unknown */
};

/* Kernel-to-launch joins over the whole export (KERNEL.correlationId =
 * RUNTIME.correlationId within the same process). */
struct ts_nsys_joins {
	int64_t kernels;        /* kernels with a correlation id */
	int64_t joined;         /* ... whose launch row is in the same process */
	int64_t unjoined;       /* ... without one (launched before the window, or not traced) */
	int64_t cross_process;  /* unjoined kernels whose id matches a launch row of another process */
};

/* What an export lacks that the analyses use: an older schema or a partial
 * capture. Filled by ts_nsys_survey (unnamed also by ts_srep_count_skipped
 * for the tables a report reads); every field becomes a warning
 * (ts_nsys_warnings). */
struct ts_nsys_gaps {
	int64_t unnamed[TS_NT_COUNT]; /* KERNEL, RUNTIME, NVTX_EVENTS rows whose name is a
				       * string id StringIds lacks (or NULL) */
	int64_t orphan_launches;      /* kernel launch calls when no kernel row is usable */
	int64_t unlaunched_kernels;   /* usable kernel rows when no launch can be joined */
	int runtime_absent;           /* ... because there is no RUNTIME table */
	int64_t no_process[TS_NT_COUNT]; /* usable rows of GPU table t without a process: no
					  * globalPid column, or one whose pid bits are 0 */
};

struct ts_nsys {
	char path[TS_ERR_PATH_MAX];
	void *db;                        /* sqlite3 * */
	char schema[32];                 /* EXPORT_SCHEMA_VERSION, "" if absent */
	char product[64];                /* EXPORT_PRODUCT_VERSION, "" if absent */
	char cuda_driver[32];            /* TARGET_INFO_SYSTEM_ENV CudaDriverVersion (as
					  * Kineto's cuda_driver_version: 13000 for
					  * 13.0), "" if absent */
	unsigned present;                /* bit t set: table t exists */
	unsigned cols[TS_NT_COUNT];      /* bit c set: known column c exists (reader-internal numbering) */
	int64_t rows[TS_NT_COUNT];       /* rows of the activity tables, -1 when absent */
	int64_t window_lo_ns, window_hi_ns; /* DERIVED_WINDOW_NS, -1 when absent */
	struct ts_nsys_caps caps;
	struct ts_nsys_joins joins;
	TS_VEC(struct ts_nsys_rank) ranks;  /* sorted by pid, then device */
	TS_VEC(struct ts_nsys_gpu) gpus;
	int64_t null_end[TS_NT_COUNT];   /* rows skipped: a NULL start or end, an end before
					  * the start, no real time (NS_ROW_OK_SQL) */
	struct ts_nsys_gaps gaps;
	int64_t nccl_nvtx_ranges;        /* NVTX ranges named nccl* */
	int surveyed;                    /* ts_nsys_survey() ran */

	/* string table: StringIds id -> local intern id */
	struct ts_intern strings;
	int64_t *sid;                    /* sorted StringIds ids */
	uint32_t *sloc;                  /* their local intern ids */
	size_t nsid;
	uint32_t *sdense;                /* id -> local id when the ids are dense, else NULL */
	size_t ndense;
	char memcpy_label[16][40];       /* ENUM_CUDA_MEMCPY_OPER labels by id */
	char sync_label[8][40];          /* ENUM_CUPTI_SYNC_TYPE labels by id */
};

void ts_nsys_init(struct ts_nsys *x);
/* Close the database and free everything; safe on an initialised or
 * zeroed struct and twice. */
void ts_nsys_close(struct ts_nsys *x);

/*
 * Open an export read-only and probe it: tables, columns, metadata, string
 * and enum tables, GPU names, and the capabilities the schema alone gives.
 * Returns 0, or TS_EIO (cannot open/read), TS_EPARSE (not an SQLite file;
 * an SQLite database that is not an Nsight Systems export; a truncated or
 * corrupt file) with err naming the file and, where known, the byte offset.
 * An export without a KERNEL table opens (caps.kernels = 0).
 */
int ts_nsys_open(struct ts_nsys *x, const char *path, struct ts_err *err);

/*
 * The scans behind ranks, joins and the remaining capabilities (one pass
 * over the GPU tables, RUNTIME, KERNEL and NVTX_EVENTS): fills ranks (no
 * ranks when no kernel, memcpy or memset row exists), joins, null_end of
 * the GPU tables and of NVTX_EVENTS' ranges (the whole export's: the rank
 * reader skips them per process), gaps, nccl_nvtx_ranges,
 * caps.nccl_kernels, nccl_nvtx and message_sizes. Idempotent. Returns 0, TS_EPARSE (corrupt rows), TS_ENOMEM.
 * ts_nsys_read_rank() needs it; the stats reports do not.
 */
int ts_nsys_survey(struct ts_nsys *x, struct ts_err *err);

/* null_end[t] alone: the rows of table t that no analysis or report uses
 * (a NULL, reversed or out-of-range start/end), one count query; what the
 * survey fills for the GPU tables. 0, or TS_EPARSE / TS_ENOMEM. */
int ts_nsys_count_unusable(struct ts_nsys *x, enum ts_nsys_tab t, struct ts_err *err);

/* gaps.unnamed[t] alone, one count query: the rows of KERNEL (neither
 * demangledName nor shortName resolves), RUNTIME (nameId) or NVTX_EVENTS
 * (textId, when text is NULL) whose string id StringIds does not hold; 0
 * for other tables. 0, or TS_EPARSE / TS_ENOMEM. */
int ts_nsys_count_unnamed(struct ts_nsys *x, enum ts_nsys_tab t, struct ts_err *err);

/* gaps.orphan_launches alone: when KERNEL has no usable row, the kernel
 * launch calls of RUNTIME (cudaLaunch*, cuLaunch*, graph launches; not
 * cudaLaunchHostFunc), by name; else 0. 0, or TS_EPARSE / TS_ENOMEM. */
int ts_nsys_count_orphan_launches(struct ts_nsys *x, struct ts_err *err);

struct ts_warnings;
/*
 * The warnings of an export (path names it), appended to w (jsonw.h):
 * unjoined-kernels and cross-process-correlation from joins, null-times
 * per table from null_end (TS_NT_COUNT entries), and from gaps (NULL:
 * none): unnamed-rows, kernels-missing, no-launch-data, no-process.
 * `trace`, its reports and `diagnose` all write these. Returns 0 or
 * TS_ENOMEM.
 */
int ts_nsys_warnings(const struct ts_nsys_joins *joins, const int64_t *null_end,
		     const struct ts_nsys_gaps *gaps, const char *path, struct ts_warnings *w);

struct ts_nsys_read_opts {
	const char *step_nvtx;   /* POSIX extended regex: NVTX ranges that mark steps, or NULL */
	int no_auto_steps;       /* 1: no automatic step detection */
};

/* How the steps of a rank were found (ts_nsys_read_rank). */
enum ts_nsys_steps {
	TS_NSYS_STEPS_NONE = 0,
	TS_NSYS_STEPS_REGEX,     /* --step-nvtx */
	TS_NSYS_STEPS_NVTX,      /* detected: a repeating top-level NVTX range */
	TS_NSYS_STEPS_SYNC,      /* detected: a regular stream/device synchronise cadence */
	TS_NSYS_STEPS_PROFILER   /* the export's own ProfilerStep#N ranges (PyTorch's profiler) */
};

struct ts_nsys_rank_info {
	enum ts_nsys_steps steps_from;
	char step_marker[128];   /* the NVTX range name or the sync call */
	int64_t steps;
	int regex_unmatched;     /* --step-nvtx matched no range of the rank */
	int64_t events;          /* events put into the trace */
	/* NCCL by NVTX projection: kernels whose launch call lies inside an
	 * NCCL NVTX range (ncclSend, ncclGroupEnd, ...) of the same thread,
	 * and how many of them the kernel-name taxonomy also calls NCCL */
	int64_t nccl_nvtx_kernels, nccl_nvtx_kernels_named;
};

/*
 * Fill t (initialised by ts_trace_init, empty) with rank k (0 <= k <
 * ranks.n, after ts_nsys_survey): one pass per table in storage order. Steps found as
 * info->steps_from says become "ProfilerStep#N" user annotations on the
 * marking thread, the way Kineto marks steps. meta.rank = k, world_size =
 * ranks.n, vendor CUDA, the device name from TARGET_INFO_GPU when present.
 * Returns 0, TS_EUSAGE (bad regex or k), TS_EPARSE (corrupt rows),
 * TS_ENOMEM; err filled.
 */
int ts_nsys_read_rank(struct ts_nsys *x, size_t k, const struct ts_nsys_read_opts *o,
		      struct ts_trace *t, struct ts_nsys_rank_info *info, struct ts_err *err);

/*
 * The metadata of a rank on GPU `device` of export x (x opened; no survey
 * needed), into t (initialised, empty), no events: vendor CUDA, nsys, the
 * one device with its TARGET_INFO_GPU name when the export lists it, the
 * profiler ("Nsight Systems " EXPORT_PRODUCT_VERSION) and the CUDA driver
 * version (TARGET_INFO_SYSTEM_ENV CudaDriverVersion); rank and world size
 * are left as they are. ts_nsys_read_rank() writes its metadata with it.
 * Returns 0 or TS_ENOMEM (err filled).
 */
int ts_nsys_meta(const struct ts_nsys *x, int32_t device, struct ts_trace *t, struct ts_err *err);

/* Name of a step source ("none", "--step-nvtx", "nvtx", "sync"). */
const char *ts_nsys_steps_name(enum ts_nsys_steps s);

/* Strip a CUDA API version suffix: returns the length of name without a
 * trailing "_v" followed by one or more digits (n when there is none). */
size_t ts_nsys_api_len(const char *name, size_t n);

/* ------------------------------------------------------------ GPU walls */

/*
 * Per-device GPU time of a trace (Kineto or nsys-read), over kernels,
 * memcpys and memsets: span = last end - first start; busy = |union|;
 * idle = span - busy; compute = |union of non-communication kernels and
 * memsets|; comm = |union of communication kernels (NCCL/RCCL/MCCL by
 * name)|; exposed_comm = |comm \ compute|; memcpy = |union of memcpys|;
 * exposed_memcpy = |memcpy \ (compute ∪ comm)|. Integer ns, exact.
 */
struct ts_dev_walls {
	int32_t device;
	int64_t t0_ns, span_ns, busy_ns, idle_ns, compute_ns, comm_ns, exposed_comm_ns;
	int64_t memcpy_ns, exposed_memcpy_ns, memset_ns;
	int64_t kernels, memcpys, memsets;
	int64_t comm_kernels;    /* kernels of the communication class */
	int64_t kernel_sum_ns;   /* summed kernel durations */
};

/* Fill *out (malloc'ed, caller frees) with one entry per device, sorted by
 * device. Returns 0 or TS_ENOMEM. */
int ts_dev_walls_of(const struct ts_trace *t, struct ts_dev_walls **out, size_t *n,
		    struct ts_err *err);

/* ------------------------------------------------------------ nsys stats */

enum ts_srep_kind {
	TS_SREP_KERN_SUM = 0,   /* cuda_gpu_kern_sum */
	TS_SREP_API_SUM,        /* cuda_api_sum */
	TS_SREP_MEM_TIME_SUM,   /* cuda_gpu_mem_time_sum */
	TS_SREP_MEM_SIZE_SUM,   /* cuda_gpu_mem_size_sum */
	TS_SREP_NVTX_SUM,       /* nvtx_sum */
	TS_SREP_KERN_EXEC_SUM,  /* cuda_kern_exec_sum */
	TS_SREP_COUNT
};

/* Report name ("cuda_gpu_kern_sum", ...). */
const char *ts_srep_name(enum ts_srep_kind r);
/* Report of a name; -1 when unknown. */
int ts_srep_of(const char *name);

/* Order statistics of one group of integer values. */
struct ts_srep_stat {
	int64_t n, total, min, max;
	double avg, med, stddev;   /* stddev: sample (n - 1); 0 when n == 1 */
};

struct ts_srep_row {
	uint32_t name;             /* in ts_srep.names: kernel/API/op/range name */
	uint32_t api;              /* kern_exec: API name */
	uint32_t style;            /* nvtx_sum: "PushPop" / "StartEnd" */
	int64_t pid, tid;          /* kern_exec */
	int32_t device;            /* kern_exec */
	struct ts_srep_stat v;     /* time (ns) or size (bytes); kern_exec: kernel time */
	struct ts_srep_stat api_t, queue_t, total_t; /* kern_exec only; queue_t.n = QCount */
	double pct;                /* share of the listed total, rounded to 0.1 */
};

struct ts_srep_acc;            /* reader-internal grouping state */

struct ts_srep {
	enum ts_srep_kind kind;
	TS_VEC(struct ts_srep_row) rows;
	struct ts_intern names;
	struct ts_srep_acc *acc;
	char source[32];           /* "nsys-sqlite" or "kineto" */
};

void ts_srep_init(struct ts_srep *r, enum ts_srep_kind kind);
void ts_srep_release(struct ts_srep *r);

/* Add the rows of an nsys export (the SQL tables directly, one pass per
 * table) or of a trace. Several sources may be added before finishing.
 * Return 0, TS_EPARSE (corrupt export; a report whose tables the export
 * lacks: err says which) or TS_ENOMEM. */
int ts_srep_add_nsys(struct ts_srep *r, struct ts_nsys *x, struct ts_err *err);
int ts_srep_add_trace(struct ts_srep *r, const struct ts_trace *t, struct ts_err *err);
/* x->null_end of the tables report kind k reads (ts_nsys_count_unusable;
 * for nvtx_sum the ranges with an end before the start or no real time,
 * open ones being its own business): the rows it leaves out, and x->gaps.unnamed of the table whose rows it
 * names (ts_nsys_count_unnamed), for ts_nsys_warnings. 0, TS_EPARSE,
 * TS_ENOMEM. */
int ts_srep_count_skipped(enum ts_srep_kind k, struct ts_nsys *x, struct ts_err *err);

/* Compute the statistics and order the rows as `nsys stats` does. 0 or TS_ENOMEM. */
int ts_srep_finish(struct ts_srep *r, struct ts_err *err);

/* Render: CSV with nsys's column names (no room for warnings: the caller
 * says them elsewhere), an aligned table followed by the warnings w, or
 * JSON (schema trainscope.nsys_stats/1) with a warnings array; w may be
 * NULL (none). */
void ts_srep_csv(const struct ts_srep *r, struct ts_sb *out);
void ts_srep_table(const struct ts_srep *r, const struct ts_warnings *w, struct ts_sb *out);
void ts_srep_json(const struct ts_srep *r, const struct ts_warnings *w, struct ts_sb *out);

#endif

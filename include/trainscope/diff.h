/*
 * diff.h - what changed between a baseline and a candidate profiler trace
 * (one rank window each), and why.
 *
 * Two stages, so a caller never holds two traces at once:
 *
 *   ts_diff_side_build(trace)  -> struct ts_diff_side   (the trace may be
 *                                  released right after: the side keeps the
 *                                  rank profile of profile.h and one small
 *                                  record per op instance inside a step)
 *   ts_diff_compare(base, cand) -> struct ts_diff_result
 *
 * ts_diff_traces() does both for two already-loaded traces.
 *
 * Steps are those ts_rank_profile() finds (ProfilerStep#N; N+1 on legacy
 * pre-Kineto traces, where ProfilerStep#N is iteration N+1). They are
 * aligned by iteration number, else by position. The step-time ratio
 * (candidate / baseline, ratio of means) and its 95 % CI come from gate.h
 * (ts_ab_paired_ratio when aligned by iteration with >= 2 pairs, else
 * ts_ab_welch_log_ratio); the verdict from ts_ab_decide with the band.
 * The walls are trace's per-step figures; rows attribute the mean step
 * time difference to op names and close with a residual row. Definitions:
 * docs/diff.md.
 *
 * Library code: nothing prints. All times int64 ns; per-step figures are
 * means over the compared steps.
 */
#ifndef TRAINSCOPE_DIFF_H
#define TRAINSCOPE_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/profile.h"
#include "trainscope/trace.h"

#ifndef TS_DIFF_STEP_PAIR_DEFINED
#define TS_DIFF_STEP_PAIR_DEFINED
/* One aligned pair of steps, times on each trace's own clock. */
struct ts_diff_step_pair {
	int64_t base_iteration, cand_iteration;
	int64_t base_start_ns, base_end_ns;
	int64_t cand_start_ns, cand_end_ns;
};
#endif

/* What a row counts. */
enum ts_diff_kind {
	TS_DIFF_CPU_OP = 0,     /* cpu_op events (and legacy events), runtime and driver calls */
	TS_DIFF_ANNOTATION,     /* user_annotation (record_function, DataLoader, gloo:*) */
	TS_DIFF_KERNEL,         /* GPU kernels */
	TS_DIFF_MEMCPY,         /* GPU copies */
	TS_DIFF_MEMSET,         /* GPU sets */
	TS_DIFF_WALL_ROW,       /* a wall no op row holds (idle; on CPU-only traces also
				 * exposed comm): closes the rows to the step */
	TS_DIFF_KIND_COUNT
};
/* "cpu_op", "annotation", "kernel", "memcpy", "memset", "wall". */
const char *ts_diff_kind_name(int kind);

/* How a row's baseline and candidate names were matched. */
enum ts_diff_match {
	TS_DIFF_MATCH_EXACT = 0,   /* same name on both sides */
	TS_DIFF_MATCH_NORMALIZED,  /* same name after ts_diff_normalize */
	TS_DIFF_MATCH_NONE         /* on one side only */
};
/* "exact", "normalized", "none". */
const char *ts_diff_match_name(int match);

/*
 * The matching key of an op or kernel name: a leading "void " and the
 * return type dropped, template arguments <...> and a trailing argument
 * list (...) removed, namespaces (everything up to the last "::") dropped,
 * ASCII lower case, vendor dtype words shortened (bfloat16 -> bf16,
 * float16/half -> fp16, float32 -> fp32; "___mt_bfloat16" -> "_bf16"),
 * runs of '_' collapsed, numeric suffixes ("_42", "#3") removed. Writes at
 * most cap - 1 bytes and a NUL; returns the length written.
 */
size_t ts_diff_normalize(const char *name, size_t n, char *out, size_t cap);

/*
 * Kernel family of an op or GPU activity: the taxonomy class
 * (ts_kclass_of) refined: "attention_fwd" / "attention_bwd", collectives
 * by type ("comm:all_reduce", "comm:all_gather", "comm:reduce_scatter",
 * "comm:all_to_all", "comm:send_recv", "comm:broadcast", "comm"), and for
 * CPU operators the aten families the kernel taxonomy does not name
 * (aten::mm/bmm/addmm/matmul/linear -> "gemm", softmax/sum/mean/topk ->
 * "reduction", _foreach_* / Optimizer.* -> "optimizer", the DataLoader
 * annotation -> "data_loader"). A static string.
 */
const char *ts_diff_family(const char *name, size_t n, int kind);

/* One op instance inside a step (what a side keeps of its trace). */
struct ts_diff_inst {
	uint32_t op;            /* index into ts_diff_side.ops */
	int32_t step;           /* index into ts_diff_side.prof.steps */
	int64_t dur_ns;         /* inclusive duration */
	int64_t self_ns;        /* CPU: duration minus children on its thread; GPU: dur */
	int64_t bytes;          /* copies/collectives with a size, else -1 */
	uint8_t main_thread;    /* CPU: on the thread that runs the steps */
};

struct ts_diff_op {
	uint32_t name;          /* in ts_diff_side.names */
	uint8_t kind;           /* enum ts_diff_kind */
	const char *family;     /* ts_diff_family */
};

/* Where a side comes from and what ran it. */
struct ts_diff_context {
	char path[TS_ERR_PATH_MAX];
	int64_t rank;
	int64_t world_size;     /* -1 unknown */
	const char *vendor;     /* ts_vendor_name */
	char device[128];       /* GPU model, "cpu" on CPU-only traces; the vendor's
				 * name when the trace records no model */
	int device_known;       /* device names a model (or "cpu"), not the vendor */
	int32_t sms;            /* that device's multiprocessor count (deviceProperties
				 * numSms / multiProcessorCount, nsys smCount or
				 * numMultiprocessors); 0 unknown. Two GPUs of one name
				 * can differ in it: a MIG slice, H100 PCIe (114) and
				 * SXM (132) */
	int device_assumed;     /* the trace lists GPUs that differ and says not
				 * which one ran the rank (no GPU activity, no
				 * distributedInfo.local_rank): device and sms
				 * are the first named one's, GPU 0's, assumed
				 * (trace.h TS_RANK_DEV_ASSUMED) */
	int devices_listed;     /* GPUs the trace lists */
	char format[16];        /* "kineto", "legacy-array" or "nsys-sqlite" */
	char profiler[64];      /* cupti/roctracer/mupti version text, "" unknown */
	char backend[32];       /* distributedInfo.backend, "" unknown */
	char runtime[32];       /* cuda/musa/hip_runtime_version, "" unknown */
	char driver[32];        /* cuda/musa/hip_driver_version, "" unknown */
	char nccl[32];          /* distributedInfo.nccl_version, "" unknown */
	char precision[16];     /* "bf16", "fp16", "fp32/unknown": from op and kernel names */
	int64_t clock_ns;       /* ts_trace_clock_resolution_ns: 1, 10, 100, 1000; 0 unknown */
	int has_gpu;
	int truncated;          /* the file ended inside its event list */
	int64_t steps_dropped;  /* steps cut by the end of a truncated file */
	uint64_t recovered;     /* events recovered from writer bugs */
	int whole_window;       /* no steps in the trace: the window is one step
				 * (iteration TS_NONE) */
};

/*
 * The context of trace t from its metadata, and its GPU activities where
 * read (c overwritten): path,
 * rank, world size, vendor, device (the rank's own, ts_trace_rank_device():
 * the listed GPU its GPU activities ran on, else the one of
 * distributedInfo.local_rank, else the first named deviceProperties entry,
 * with device_assumed set when the listed entries differ; device_known
 * 0 and device "" when none is named), the SM count of that same entry,
 * format,
 * profiler, backend, runtime, driver and NCCL versions; the rest zero.
 * Works on a trace read with opts.meta_only (trace.h) or built by
 * ts_nsys_meta (nsys.h); ts_diff_side_build starts from it.
 */
void ts_diff_context_env(struct ts_diff_context *c, const struct ts_trace *t);

/*
 * The context fields that describe where a side ran, each of which moves
 * step times by itself: when they differ, a diff mixes that change into
 * the code change it is read for. Rank (the window chosen) and precision
 * (what the code ran) are context too, but not compared here.
 */
enum ts_diff_ctx_field {
	TS_DCTX_DEVICE = 0,     /* device model, when device_known */
	TS_DCTX_SMS,            /* the device's SM count, when recorded */
	TS_DCTX_VENDOR,
	TS_DCTX_WORLD_SIZE,
	TS_DCTX_FORMAT,         /* kineto / legacy-array / nsys-sqlite: the profiler */
	TS_DCTX_PROFILER,       /* its version text */
	TS_DCTX_CLOCK,          /* clock resolution */
	TS_DCTX_BACKEND,
	TS_DCTX_RUNTIME,
	TS_DCTX_DRIVER,
	TS_DCTX_NCCL,
	TS_DCTX_COUNT
};

/* How a field compares between baseline and candidate. */
enum ts_diff_ctx_state {
	TS_DCTX_SAME = 0,
	TS_DCTX_DIFFERS,        /* both record it, as different text */
	TS_DCTX_BASELINE_ONLY,  /* only the baseline records it */
	TS_DCTX_CANDIDATE_ONLY, /* only the candidate records it */
	TS_DCTX_NEITHER
};

/* The field's key in the JSON context objects: "device", "sm_count", "vendor",
 * "world_size", "trace_format", "profiler", "clock_resolution_ns",
 * "backend", "runtime_version", "driver_version", "nccl_version". */
const char *ts_diff_ctx_key(int field);
/* Its words in text: "device", "SM count", "vendor", "world size", "trace format",
 * "profiler", "clock resolution", "backend", "runtime version", "driver
 * version", "NCCL version". */
const char *ts_diff_ctx_label(int field);
/* The field of c as text, written into buf (cap bytes, at least 32) when
 * it is a number ("8", "132", "1 ns", "1 us"), else pointing into c; NULL
 * when c records none (device: a model is not known; vendor "unknown";
 * world size -1; SM count or clock 0; an empty string). */
const char *ts_diff_ctx_value(const struct ts_diff_context *c, int field, char *buf, size_t cap);
/* Compare field f of a and b. Values are compared as the text
 * ts_diff_ctx_value gives, the versions (profiler, runtime, driver, NCCL)
 * by ts_version_same (core.h: "535.104.05" = "535.104.5", "12.4" =
 * "12.4.0", "2.5.1+cu124" = "2.5.1"; encodings are not translated: "12.4"
 * and "12040" differ); a side that records none is not a difference. */
int ts_diff_ctx_compare(const struct ts_diff_context *a, const struct ts_diff_context *b, int field);
/* The device c ran on as the hardware verdict names it: its model (or the
 * vendor's name), followed by " (N SMs)" when other names the same device
 * and both record SM counts that differ (two GPUs of one name that are not
 * the same hardware), written into buf (cap bytes). Returns buf. */
const char *ts_diff_ctx_hardware(const struct ts_diff_context *c, const struct ts_diff_context *other,
				 char *buf, size_t cap);

struct ts_ctx_change;
/* The fields where a side ran (device, its SM count, vendor, runtime,
 * driver and NCCL versions): what `ab` compares of the sides' traces. */
#define TS_DCTX_ENV_MASK ((1u << TS_DCTX_DEVICE) | (1u << TS_DCTX_SMS) | (1u << TS_DCTX_VENDOR) | \
			  (1u << TS_DCTX_RUNTIME) | (1u << TS_DCTX_DRIVER) | (1u << TS_DCTX_NCCL))
/*
 * The fields of mask (bit f for field f; ~0u all) that differ between a
 * and b (ts_diff_ctx_compare gives TS_DCTX_DIFFERS), in field order, as
 * the changes ts_context_differs_warn (gate.h) words: out[k] with label
 * ts_diff_ctx_label, both values (written into buf[f] or pointing into a
 * and b: they live as long as those) and key, the contract field that
 * records the same fact ("environment.gpu.name", "environment.gpu.vendor",
 * for the runtime torch runs on the vendor's: "environment.torch.cuda",
 * "environment.torch.hip" (rocm), "environment.torch.musa" (musa), NULL
 * when the sides record different vendors or none of those,
 * "environment.gpu.driver", "environment.torch.nccl" (the NCCL torch
 * reports); NULL for the others). out and buf hold
 * TS_DCTX_COUNT entries. Returns the number of changes.
 */
size_t ts_diff_ctx_changes(const struct ts_diff_context *a, const struct ts_diff_context *b,
			   unsigned mask, struct ts_ctx_change *out, char buf[][2][32]);

struct ts_diff_side {
	struct ts_rank_prof prof;     /* trace's analysis: steps and their walls */
	struct ts_diff_context ctx;
	struct ts_intern names;
	TS_VEC(struct ts_diff_op) ops;
	TS_VEC(struct ts_diff_inst) inst;
};

void ts_diff_side_init(struct ts_diff_side *s);
void ts_diff_side_release(struct ts_diff_side *s);

/*
 * Analyse one trace for diffing: ts_rank_profile(), then one record per
 * CPU op, annotation and GPU activity whose start lies in a step
 * (ProfilerStep spans themselves excluded). A trace without steps gives one
 * step, its whole window with the window's walls (ctx.whole_window; the
 * diff then has no noise estimate). s must be freshly initialised.
 * Returns 0, TS_ENOMEM or TS_EUNSUPPORTED (no steps and an empty window),
 * err filled.
 */
int ts_diff_side_build(struct ts_diff_side *s, const struct ts_trace *t, struct ts_err *err);

/* Walls of a step: names and numbers of `trace` (profile.h ts_step_prof).
 * compute + exposed_comm + exposed_memcpy + exposed_memset + idle = step;
 * data_loader and host_gap are parts of idle (within = "idle"), measured
 * over idle's intervals (ts_step_prof idle_part_data_ns, idle_part_gap_ns):
 * disjoint, data_loader + host_gap <= idle. */
enum ts_diff_wall {
	TS_DW_COMPUTE = 0,
	TS_DW_EXPOSED_COMM,
	TS_DW_EXPOSED_MEMCPY,
	TS_DW_EXPOSED_MEMSET,
	TS_DW_IDLE,
	TS_DW_DATA,
	TS_DW_HOST_GAP,
	TS_DW_COUNT
};
/* "compute", "exposed_comm", "exposed_memcpy", "exposed_memset", "idle",
 * "data_loader", "host_gap". */
const char *ts_diff_wall_name(int wall);
/* 1 for the walls that partition the step (the first five). */
int ts_diff_wall_partitions(int wall);

struct ts_diff_wall_row {
	int wall;               /* enum ts_diff_wall */
	double base_ns, cand_ns, delta_ns; /* per step, mean over compared steps */
};

/* Per-instance statistics of one side of a row, over the compared steps. */
struct ts_diff_stat {
	int64_t count;          /* instances in the compared steps */
	double count_per_step;
	double total_ns;        /* inclusive, per step */
	double self_ns;         /* the closing measure (see closes), per step */
	int64_t mean_ns, p50_ns, p90_ns; /* per instance, inclusive */
	double gbps;            /* bytes / duration, NaN without sizes */
};

struct ts_diff_row {
	const char *base_name;  /* NULL when only in candidate */
	const char *cand_name;  /* NULL when only in baseline */
	int kind;               /* enum ts_diff_kind */
	const char *family;
	int match;              /* enum ts_diff_match */
	int closes;             /* counted in the closing sum (see docs/diff.md) */
	struct ts_diff_stat base, cand;
	double delta_ns;        /* cand.self_ns - base.self_ns, per step */
	double rank_ns;         /* what rows are ranked by: delta_ns for closing rows,
				 * else the change of inclusive time per step */
};

struct ts_diff_family_row {
	const char *family;
	double base_ns, cand_ns, delta_ns;  /* closing measure per step */
	double base_count, cand_count;      /* instances per step */
};

/* A step of one side outside the compared set, or an outlier inside it. */
struct ts_diff_step_note {
	int side;               /* 0 baseline, 1 candidate */
	int64_t iteration;
	int64_t dur_ns;
	double robust_z;        /* (dur - median) / (1.4826 MAD) within its side, NaN when MAD = 0 */
	int compared;
	int outlier;            /* trace's outlier rule, or robust_z >= TS_DIFF_OUTLIER_Z */
	int wall;               /* the wall with the largest excess over its side's median */
	int64_t wall_excess_ns;
	int64_t wall_median_ns;
};

#define TS_DIFF_OUTLIER_Z 3.5

/* The verdict of a diff: ab's four, or why none is given. */
enum ts_diff_verdict {
	TS_DIFF_FASTER = 0,
	TS_DIFF_SLOWER,
	TS_DIFF_NO_DIFFERENCE,
	TS_DIFF_INCONCLUSIVE,
	TS_DIFF_NO_NOISE_ESTIMATE,      /* one step on a side */
	TS_DIFF_REFUSED_HARDWARE,       /* different device, no allow_different_hardware */
	TS_DIFF_NO_STEPS,               /* nothing to compare */
	/* A side's GPU runs behind its host (ts_rank_prof.gpu_behind), so its
	 * spans time the host, but no compared pair has a GPU step time on
	 * both sides: only the host spans could be compared, and they say
	 * nothing of the GPU's pace (step_basis "host_span"). */
	TS_DIFF_NO_GPU_STEP_TIME
};
/* "faster", "slower", "no_difference", "inconclusive", "no_noise_estimate",
 * "refused_different_hardware", "no_steps", "no_gpu_step_time": why the
 * verdict is what it is (the JSON's verdict_reason). */
const char *ts_diff_verdict_name(int verdict);
/* The verdict itself (the JSON's verdict, the text's and the report's):
 * ts_diff_verdict_name, except "inconclusive" for TS_DIFF_NO_GPU_STEP_TIME
 * and NULL (none given) for TS_DIFF_NO_NOISE_ESTIMATE and TS_DIFF_NO_STEPS. */
const char *ts_diff_verdict_given(int verdict);
/* The sides of a ts_diff_result.gpu_behind in words: "the baseline", "the
 * candidate", "both sides"; "" for none. */
const char *ts_diff_gpu_behind_sides(int gpu_behind);
/* Why the step spans may time the host, as a phrase written into buf (cap
 * bytes, at least 256): "the GPU runs behind the host on the baseline",
 * "the candidate's device and host clocks disagree (clock-mismatch):
 * whether its GPU runs behind the host cannot be told", or both joined by
 * "; "; "" when neither. Returns buf. */
const char *ts_diff_spans_why(int gpu_behind, int clock_mismatch, char *buf, size_t cap);

struct ts_diff_opts {
	double band;            /* practical band, default 0.02 (ab without repeats) */
	int allow_different_hardware;
	uint64_t seed;          /* bootstrap seed (ab's default) */
};

void ts_diff_opts_init(struct ts_diff_opts *o);

/* A name present on one side only, within a family. */
struct ts_diff_change {
	const char *family;
	const char *name;
	int side;               /* 0 only in baseline (deleted), 1 only in candidate (added) */
	double ns;              /* closing measure per step */
};

struct ts_diff_result {
	const char *aligned_by;         /* "iteration" or "position" */
	TS_VEC(struct ts_diff_step_pair) pairs;
	TS_VEC(struct ts_diff_step_note) notes;  /* unmatched steps and outliers */
	/* What the ratio compares: "host_span" (the ProfilerStep spans), or
	 * "device" when either side's GPU runs behind its host
	 * (ts_rank_prof.gpu_behind) or has clocks that disagree
	 * (clock_mismatch): each step's GPU
	 * step time (ts_step_prof.dev_step_ns), over the basis_steps pairs
	 * that have one on both sides. When such a side has no pair with one
	 * on both sides, the basis stays "host_span" and the verdict
	 * is TS_DIFF_NO_GPU_STEP_TIME. */
	const char *step_basis;
	size_t basis_steps;
	int gpu_behind;                 /* bit 0 the baseline's GPU runs behind its host, bit 1 the candidate's
					 * (ts_diff_gpu_behind_sides names them) */
	/* The same bits for a side whose device and host timestamps are not
	 * on one clock (ts_rank_prof.launch.before_launch: trace's
	 * clock-mismatch). Such a side is never gpu_behind, since its lead
	 * cannot be measured, yet its spans may time the host: it takes the
	 * "device" basis as a side behind does (before 2026-12-04 its host
	 * spans were compared as step times). */
	int clock_mismatch;
	size_t base_gpu_steps, cand_gpu_steps; /* compared steps of each side with a GPU step time */
	int host_clock_only;            /* gpu_behind, steps compared, yet step_basis "host_span" */
	double base_mean_ns, cand_mean_ns;       /* mean step span over the compared steps (the walls add up to it) */
	double base_gpu_mean_ns, cand_gpu_mean_ns; /* "device" basis: the mean GPU step times; else NaN */
	double ratio, ci95_low, ci95_high;       /* cand / base; CI NaN without noise estimate */
	const char *method;                      /* how the CI was made, NULL none */
	double band;
	int verdict;                             /* enum ts_diff_verdict */
	int same_hardware;
	uint8_t context[TS_DCTX_COUNT];          /* ts_diff_ctx_compare of each field */
	int context_differs;                     /* fields in state TS_DCTX_DIFFERS */
	struct ts_diff_wall_row walls[TS_DW_COUNT];
	TS_VEC(struct ts_diff_row) rows;         /* ranked by |delta_ns| */
	double residual_ns;                      /* measured delta - sum of closing rows */
	const char *closing;                     /* "cpu_self" or "gpu_time" */
	TS_VEC(struct ts_diff_family_row) families; /* ranked by |delta_ns| */
	TS_VEC(struct ts_diff_change) changes;   /* names only on one side, by family */
	/* op-name sets (CPU ops and annotations in the compared steps, exact names) */
	int64_t names_common, names_added, names_deleted;
	int64_t names_increased, names_decreased, names_unchanged; /* by count per step */
	double unmatched_frac;                   /* closing time of one-side rows / all */
	struct ts_arena arena;
};

void ts_diff_result_init(struct ts_diff_result *r);
void ts_diff_result_release(struct ts_diff_result *r);

/*
 * Compare two built sides (borrowed; names in r point into them, so they
 * must outlive r). Returns 0 (also for a comparison without common steps:
 * verdict TS_DIFF_NO_STEPS) or TS_ENOMEM.
 */
int ts_diff_compare(const struct ts_diff_side *base, const struct ts_diff_side *cand,
		    const struct ts_diff_opts *o, struct ts_diff_result *r, struct ts_err *err);

struct ts_warnings;
/*
 * The comparison's warnings, appended to w (jsonw.h), the one list `diff`
 * prints and writes and the report's diff section shows:
 * context-differs (the context fields in state TS_DCTX_DIFFERS, each with
 * both values: the deltas include that change), different-hardware (the
 * sides ran on different devices; whether a verdict was given),
 * device-unknown, unmatched-steps (steps without a partner) and
 * no-gpu-step-time (verdict TS_DIFF_NO_GPU_STEP_TIME: which side runs
 * behind, which lacks the GPU step time, and that the host spans were
 * compared) or gpu-steps-partial (the GPU step times are compared, but
 * over two or more fewer pairs than were matched: the ratio stands for
 * those). Returns 0 or TS_ENOMEM.
 */
int ts_diff_warnings(const struct ts_diff_side *base, const struct ts_diff_side *cand,
		     const struct ts_diff_result *r, struct ts_warnings *w);

/*
 * The whole diff of two already-loaded traces: builds both sides into
 * *base and *cand (freshly initialised; caller releases them after r) and
 * compares them. r->walls is the wall attribution. Returns what
 * ts_diff_side_build or ts_diff_compare return.
 */
int ts_diff_traces(const struct ts_trace *tb, const struct ts_trace *tc,
		   const struct ts_diff_opts *o, struct ts_diff_side *base,
		   struct ts_diff_side *cand, struct ts_diff_result *r, struct ts_err *err);

#endif

/*
 * profile.h - what a profiler trace says about a training job: per-rank
 * time breakdowns (whole window and per step), launch and idle analysis,
 * step outliers, cross-rank stragglers and collective skew, and the wall
 * verdict with its evidence.
 *
 * Input is the trace model of trace.h (one struct ts_trace per file).
 * Analyses never print; they fill plain structs the CLI renders. All times
 * are int64 nanoseconds on the trace's own clock (collective start times
 * are absolute: meta.base_ns + ts). Definitions and thresholds are in
 * docs/trace-analysis.md.
 *
 * Ownership: a ts_rank_prof owns copies of every string it reports (kernel
 * and collective names live in its own intern table), so the ts_trace can
 * be released right after ts_rank_profile() returns.
 */
#ifndef TRAINSCOPE_PROFILE_H
#define TRAINSCOPE_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/jsonw.h"
#include "trainscope/taxonomy.h"
#include "trainscope/trace.h"

/* ------------------------------------------------------------ intervals */

/* Half-open [s, e) in ns. */
struct ts_iv {
	int64_t s, e;
};

/*
 * A set of intervals. After ts_ivset_norm() it is sorted, disjoint and
 * non-touching; the set operations below take and give normalized sets.
 * All operations are O(n log n) (norm) or O(n + m) (sweeps).
 */
struct ts_ivset {
	struct ts_iv *v;
	size_t n, cap;
};

void ts_ivset_init(struct ts_ivset *a);
void ts_ivset_release(struct ts_ivset *a);
/* Append [s, e); empty or inverted intervals are ignored, and one that
 * starts inside or at the end of the last one only extends it (the union is
 * the same; nested CPU ops then take one entry). 0 or TS_ENOMEM. */
int ts_ivset_add(struct ts_ivset *a, int64_t s, int64_t e);
/* Sort and merge overlapping or touching intervals, in place. */
void ts_ivset_norm(struct ts_ivset *a);
/* Total length (normalized set). */
int64_t ts_ivset_len(const struct ts_ivset *a);
/* out = a ∩ b, a ∪ b, a \ b (out must differ from a and b; its previous
 * content is dropped). 0 or TS_ENOMEM. */
int ts_ivset_and(struct ts_ivset *out, const struct ts_ivset *a, const struct ts_ivset *b);
int ts_ivset_or(struct ts_ivset *out, const struct ts_ivset *a, const struct ts_ivset *b);
int ts_ivset_sub(struct ts_ivset *out, const struct ts_ivset *a, const struct ts_ivset *b);
/* out = the union of k sets in one merge (out must differ from each; its
 * previous content is dropped). 0 or TS_ENOMEM. */
int ts_ivset_or_all(struct ts_ivset *out, const struct ts_ivset *const *sets, size_t k);
/* |a ∩ b| without building the set. */
int64_t ts_ivset_and_len(const struct ts_ivset *a, const struct ts_ivset *b);
/* |a ∩ [lo, hi)|, O(log n + k). */
int64_t ts_ivset_len_in(const struct ts_ivset *a, int64_t lo, int64_t hi);

/* ------------------------------------------------------------ thresholds */

/* Step outliers (per rank window, needs >= TS_OUTLIER_MIN_STEPS steps):
 * a step is slow when dur - median > max(SLOW_FRAC * median, K * 1.4826 * MAD);
 * a stall component (data loader, exposed comm, untraced host gap) flags
 * a step when its excess over its own median exceeds
 * max(STALL_FRAC * median step, K * 1.4826 * MAD of the component). */
#define TS_OUTLIER_MIN_STEPS 3
#define TS_OUTLIER_SLOW_FRAC 0.25
#define TS_OUTLIER_STALL_FRAC 0.20
#define TS_OUTLIER_K 3.0

/* Wall verdict thresholds (share of the window, or of step time on CPU-only
 * traces). */
#define TS_WALL_DATA_FRAC 0.10
#define TS_WALL_COMM_FRAC 0.20
#define TS_WALL_HOST_FRAC 0.20
#define TS_WALL_MEMCPY_FRAC 0.10
#define TS_WALL_MEMCAP_FRAC 0.95

/* No wall verdict below this much timed evidence: a window shorter than
 * TS_WALL_MIN_WINDOW_NS (100 us), or one in which nothing timed ran
 * (window - idle + data loader = 0), gives TS_WALL_UNDETERMINED with the
 * reason in the evidence. */
#define TS_WALL_MIN_WINDOW_NS INT64_C(100000)

/* Straggler: at least MIN_STEPS matched steps, and the 25th percentile
 * over steps of the rank's lateness >= FRAC * median step time. */
#define TS_STRAGGLER_MIN_STEPS 4
#define TS_STRAGGLER_FRAC 0.15

/* HTA's idle rule: a gap shorter than this is kernel-wait. */
#define TS_KERNEL_WAIT_NS 30000

/* ------------------------------------------------------------ results */

#define TS_REASON_MAX 160
#define TS_EVIDENCE_MAX 768

struct ts_kernel_stat {
	uint32_t name;          /* in ts_rank_prof.names */
	enum ts_kclass cls;
	int64_t count;
	int64_t total_ns, mean_ns, p50_ns, p90_ns, max_ns;
};

/* HTA-rule idle of one stream (between its own activities). */
struct ts_stream_idle {
	int64_t device;
	int64_t stream;
	int64_t host_wait_ns, kernel_wait_ns, other_ns;
	int64_t gaps;
};

struct ts_xfer_stat {
	int64_t count;
	int64_t bytes;          /* -1 when no copy carried a byte count */
	int64_t ns;             /* summed duration */
};

struct ts_launch_stat {
	int64_t calls;          /* runtime/driver launch calls (kernel, copy, set, graph) */
	int64_t call_total_ns, call_p50_ns, call_p90_ns, call_max_ns;
	int64_t linked;         /* GPU activities linked to a launch by correlation */
	int64_t delay_total_ns, delay_p50_ns, delay_p90_ns, delay_max_ns;
	int64_t short_kernels;  /* linked kernels shorter than their launch call */
	int64_t graph_launches; /* cudaGraphLaunch / musaGraphLaunch calls */
	int64_t graph_activities; /* GPU activities launched by them */
	/* linked activities that start more than TS_CLOCK_LEAD_NS before their
	 * launch call starts, impossible on one clock (device timestamps on
	 * another clock domain): how many, and the largest lead */
	int64_t before_launch, before_launch_max_ns;
};

/* What a kernel may seem to start before its launch call: host/device
 * clock-sync error stays in microseconds. */
#define TS_CLOCK_LEAD_NS 1000000

#define TS_GPU_BEHIND 0.5
#define TS_GPU_BEHIND_BUSY 0.25

struct ts_step_prof {
	int64_t step;           /* iteration: ProfilerStep#N, N+1 on legacy traces */
	int64_t start_ns, dur_ns;
	int64_t data_ns;        /* data-loader annotations */
	int64_t fwd_ns, bwd_ns, opt_ns; /* -1 when not annotated */
	/* GPU traces: the GPU activity that ran inside [start, start + dur),
	 * whether or not its launch call is in the trace.
	 * compute + exposed_comm + exposed_memcpy + exposed_memset + idle = dur.
	 * CPU-only traces: busy = compute = main-thread ops, exposed_comm =
	 * collectives outside them, idle the rest (memcpy/memset 0). */
	int64_t comm_ns, exposed_comm_ns;
	int64_t busy_ns, compute_ns;
	int64_t exposed_memcpy_ns, exposed_memset_ns, idle_ns;
	int64_t host_ns;        /* CPU main-thread ops */
	int64_t gap_ns;         /* main thread outside ops, data loader and comm */
	/* The parts of idle_ns (the same intervals: GPU idle, or CPU-only
	 * idle) inside the data loader and inside host gaps (gap_ns's set):
	 * disjoint, idle_part_data_ns + idle_part_gap_ns <= idle_ns. data_ns
	 * and gap_ns are CPU-side and may overlap GPU work; these may not. */
	int64_t idle_part_data_ns, idle_part_gap_ns;
	int64_t kernels;        /* linked GPU activities launched in the step */
	/* The device work the step launched (linked by correlation), wherever
	 * it ran: its summed duration, the part inside the step's own span,
	 * and when the last of it ended (TS_NONE: none). dev_step_ns is the
	 * GPU's own step time: gpu_done_ns minus the previous iteration's
	 * (TS_NONE for the first step or when either launched nothing). */
	int64_t launched_ns, launched_in_ns, gpu_done_ns, dev_step_ns;
	int outlier;
	char reason[TS_REASON_MAX];
};

enum ts_wall {
	TS_WALL_COMPUTE = 0,
	TS_WALL_MEMORY,
	TS_WALL_COMM,
	TS_WALL_HOST,
	TS_WALL_DATA,
	TS_WALL_STRAGGLER,
	TS_WALL_UNDETERMINED,   /* too little timed evidence (TS_WALL_MIN_WINDOW_NS) */
	TS_WALL_COUNT
};

/* "compute", "memory", "communication", "host", "data", "straggler",
 * "undetermined". */
const char *ts_wall_name(enum ts_wall w);

struct ts_verdict {
	enum ts_wall wall;
	double share;           /* of the window / step time, 0..1 */
	char evidence[TS_EVIDENCE_MAX];
};

/* One candidate wall of a rank: its time, share of the base (window, or
 * summed step time on CPU-only traces with steps) and threshold. `over`:
 * share >= threshold; `eligible`: it may be named (host only when
 * host-bound idle is the largest cause of GPU idle). Compute has
 * threshold 0: it is the verdict when no other wall is named. */
struct ts_wall_cand {
	enum ts_wall wall;
	int64_t ns;             /* -1 not measured (host without launch data):
				 * share 0, neither over nor eligible */
	double share, threshold;
	int over, eligible;
	char what[64];          /* what was measured ("exposed communication") */
};

/* One collective as seen by one rank, for cross-rank matching. */
struct ts_coll_span {
	uint64_t key;           /* hash of process group + collective name */
	uint32_t name;          /* in ts_rank_prof.names */
	int64_t step;           /* step it started in, TS_NONE outside steps */
	int64_t idx;            /* occurrence of key within the step */
	int64_t seq;            /* process-group sequence, TS_NONE if unknown */
	int64_t start_ns;       /* absolute */
	int64_t dur_ns;
};

struct ts_rank_prof {
	int64_t rank;
	int64_t window_no;      /* 0, 1, ... for several windows of a rank */
	char file[TS_ERR_PATH_MAX];
	int vendor;             /* enum ts_vendor */
	char device[128];
	int has_gpu;
	int legacy;

	/* The window partition, exact in ns: compute + exposed_comm +
	 * exposed_memcpy + exposed_memset + idle = window_ns (GPU traces:
	 * exposed comm = comm \ compute, exposed memcpy = memcpy \ compute \
	 * comm, exposed memset = memset \ compute \ comm \ memcpy, busy =
	 * window - idle; CPU-only traces: compute = busy = main-thread ops,
	 * exposed comm = collectives outside them, memcpy/memset 0). Every
	 * set is clipped to the window. */
	int64_t t0_ns, window_ns;
	int64_t busy_ns, idle_ns, compute_ns, comm_ns, exposed_comm_ns;
	int64_t memcpy_ns, exposed_memcpy_ns;
	int64_t memset_ns, exposed_memset_ns;
	int64_t gpu_span_ns;    /* first GPU activity start to last end, 0 without */
	int64_t gpu_span_idle_ns; /* gpu_span_ns - busy */
	int64_t unlinked_ns;    /* |union| of GPU activity whose launch call is not in the trace */
	int64_t unlinked_events;
	double overlap_pct;     /* |comm ∩ compute| / |comm|, -1 without comm */
	int64_t class_union_ns[TS_KC_COUNT];
	int64_t class_sum_ns[TS_KC_COUNT];
	int64_t class_count[TS_KC_COUNT];
	int64_t kernel_names;   /* distinct GPU activity names */

	int64_t host_busy_ns, host_gap_ns, data_ns;
	/* GPU idle split by cause (idle_ns = data + host + other): data =
	 * inside data-loader annotations; host = the part of a gap before the
	 * launch call of the activity that ends it, when that call started
	 * after the gap began, or the whole gap when nothing ran after it (the
	 * GPU waited for the CPU); other = the rest: work already launched
	 * (dependencies, syncs, launch latency) or launched outside the trace.
	 * idle_host_ns is -1 (unknown) when no GPU activity is linked to a
	 * launch call (no runtime events, an nsys export without CUDA API
	 * rows): then other = idle - data. */
	int64_t idle_host_ns;
	int64_t idle_data_ns;
	int64_t idle_other_ns;
	/* The parts of idle_ns (its intervals, GPU or CPU-only) inside the
	 * data loader and inside host gaps (host_gap_ns's set): disjoint,
	 * their sum <= idle_ns (on GPU traces idle_part_data_ns =
	 * idle_data_ns). As ts_step_prof's, for the window. */
	int64_t idle_part_data_ns, idle_part_gap_ns;

	struct ts_launch_stat launch;
	struct ts_xfer_stat xfer[TS_MDIR_COUNT];
	int64_t mem_peak_alloc_bytes;    /* -1 without [memory] events */
	int64_t mem_peak_reserved_bytes;
	int mem_on_gpu;
	int64_t device_mem_bytes;        /* -1 unknown */
	int device_assumed;              /* device (and its memory) is GPU 0's of the
					  * devices_listed that differ, assumed
					  * (ts_trace_rank_device TS_RANK_DEV_ASSUMED) */
	int devices_listed;
	double flops;
	int64_t flops_events;

	TS_VEC(struct ts_kernel_stat) top;
	TS_VEC(struct ts_stream_idle) idle;
	TS_VEC(struct ts_step_prof) steps;
	TS_VEC(struct ts_coll_span) colls;
	int64_t median_step_ns;
	int64_t outliers;
	int64_t steps_dropped;  /* truncated trace: steps cut by the end of the file */
	int cut_in_device;      /* truncated trace cut among its runtime calls and
				 * device activities (written after the host's ops):
				 * the device times of its steps may be partial */
	int device_lost;        /* truncated GPU trace (devices listed, or runtime calls
				 * read) cut before any device work was written: its
				 * steps carry no device time */
	int64_t steps_repeated; /* ProfilerStep spans identical to one before (same
				 * number, start and end): counted once */
	/* GPU behind the host: the share of the device time the steps
	 * launched that ran outside the span of the step that launched it
	 * (NaN without linked device work in steps), and the median of the
	 * steps' dev_step_ns (TS_NONE without two). gpu_behind is set when
	 * that share is above TS_GPU_BEHIND, the work launched is at least
	 * TS_GPU_BEHIND_BUSY of the steps' spans (a GPU idle most of the step
	 * cannot be behind) and the clocks agree (no launch.before_launch):
	 * the step spans then measure the host's pace, not the GPU's. */
	double gpu_behind_frac;
	int64_t dev_step_p50_ns;
	int gpu_behind;

	struct ts_verdict verdict;
	struct ts_wall_cand walls[TS_WALL_COUNT]; /* ranked: nameable walls first, then by share */
	size_t nwalls;
	struct ts_intern names;
};

/* Interval tracks for the annotated trace (--annotate), on the trace's
 * own clock. */
struct ts_prof_tracks {
	struct ts_ivset idle;           /* GPU idle in the window; CPU-only: host gaps */
	struct ts_ivset exposed_comm;
	struct ts_ivset exposed_memcpy;
	struct ts_ivset data;           /* data-loader annotations */
};

void ts_prof_tracks_init(struct ts_prof_tracks *k);
void ts_prof_tracks_release(struct ts_prof_tracks *k);

struct ts_prof_opts {
	int top_k;              /* kernels kept in top (default 10) */
	struct ts_prof_tracks *tracks; /* filled when non-NULL (caller-owned, initialised) */
	int threads;            /* >= 2: the launch statistics, idle per stream and
				 * kernel statistics run on a second thread beside
				 * the interval sets (same result as 1) */
};

void ts_rank_prof_init(struct ts_rank_prof *p);
/* Index of the step of p whose [start, start + dur) holds t, or -1 (the
 * steps are sorted and disjoint). */
int32_t ts_rank_prof_step_at(const struct ts_rank_prof *p, int64_t t);
void ts_rank_prof_release(struct ts_rank_prof *p);

/* The warnings every command that profiles the trace at path gives, in
 * one wording: legacy-trace (p->legacy: ProfilerStep#N is iteration N+1,
 * no device events), repeated-steps (p->steps_repeated: the same step span
 * twice, as in a trace written twice), rank-device-assumed
 * (p->device_assumed, ts_rank_device_assumed_warning) and, when
 * whole_window (the trace has no ProfilerStep spans or step range),
 * whole-window: the window is analysed as one step, without step
 * statistics. Returns 0 or TS_ENOMEM. */
int ts_rank_prof_warnings(const struct ts_rank_prof *p, int whole_window, const char *path,
			  struct ts_warnings *w);

/* The truncated-trace warning of the trace at path, one wording for every
 * command: cut at byte `at` (of the inflated JSON when gzip), every
 * complete event before it analysed, p's steps_dropped steps cut by the
 * end dropped, and whether the cut fell among its device-side events (p's
 * cut_in_device). Returns 0 or TS_ENOMEM. */
int ts_trace_truncated_warning(struct ts_warnings *w, const char *path, uint64_t at, int gzip,
			       const struct ts_rank_prof *p);

/* The rank-device-assumed warning of the trace at path: it lists `listed`
 * GPUs that differ and nothing says which one ran the rank (no GPU
 * activity names one, no distributedInfo.local_rank), so its device
 * (`device`, "" unnamed) is GPU 0's, assumed (trace.h
 * TS_RANK_DEV_ASSUMED). One wording for trace, diff, diagnose and ab.
 * Returns 0 or TS_ENOMEM. */
int ts_rank_device_assumed_warning(struct ts_warnings *w, const char *path, const char *device,
				   int listed);

/* The ignored-values warning of a trace whose meta counts events with an
 * unusable ts or dur, a negative dur or an "X" event without a dur (none:
 * nothing added). One wording for trace, diagnose and diff. Returns 0 or
 * TS_ENOMEM. */
struct ts_trace_meta;
int ts_trace_ignored_warning(struct ts_warnings *w, const char *path,
			     const struct ts_trace_meta *m);

/*
 * Analyse one rank window. p must be freshly initialised. Returns 0 or
 * TS_ENOMEM (err filled). opts may be NULL.
 */
int ts_rank_profile(struct ts_rank_prof *p, const struct ts_trace *t,
		    const struct ts_prof_opts *opts, struct ts_err *err);

/* String of a name id in p->names. */
const char *ts_prof_str(const struct ts_rank_prof *p, uint32_t id);
/* Its length in bytes (a name may hold a NUL: use this, not strlen). */
size_t ts_prof_len(const struct ts_rank_prof *p, uint32_t id);

/*
 * Compact binary form of a rank profile, to move it between processes of
 * the same build (MPI gather): the struct, its four arrays and its names.
 * Not a file format: same binary, same architecture only.
 * pack appends to out (check out->failed). unpack fills a freshly
 * initialised p from data[0..n) and returns 0 or TS_EPARSE when the bytes
 * are not a complete profile of this build; p is then safe to release.
 */
void ts_rank_prof_pack(const struct ts_rank_prof *p, struct ts_sb *out);
int ts_rank_prof_unpack(struct ts_rank_prof *p, const void *data, size_t n,
			struct ts_err *err);

/* ------------------------------------------------------------ job */

struct ts_straggler {
	int64_t rank;
	int64_t steps;          /* steps with matched collectives */
	int64_t late_steps;     /* steps where the rank arrived last */
	int64_t late_p25_ns, late_p50_ns; /* lateness over steps */
	int64_t median_step_ns;
	int64_t own_noncomm_ns; /* median step time outside comm, this rank */
	int64_t peer_noncomm_ns;/* same, median over the other ranks */
	int straggler;          /* passed the straggler rule */
	char evidence[TS_EVIDENCE_MAX];
};

/* Per matched collective (key, step, idx, or key + seq), skew summary. */
struct ts_skew_stat {
	int64_t matched;        /* collectives seen on >= 2 ranks */
	int64_t p50_ns, p90_ns, max_ns; /* dur(longest waiter) - dur(shortest) */
	const char *worst_name; /* borrowed from the rank profile, NULL if none */
	int64_t worst_rank;     /* rank that arrived last at the worst one */
	int64_t worst_step;
	/* (collective, step) pairs matched by order (no process-group sequence)
	 * that occur a different number of times on different ranks: not
	 * matched, since order would pair unlike calls; their instances */
	int64_t unmatched_groups, unmatched_instances;
};

/* A rank window that overlaps an earlier window of the same rank in time
 * (the same file given twice, a glob that caught a copy): left out. */
struct ts_job_dup {
	const struct ts_rank_prof *copy, *of;
};

struct ts_job_prof {
	struct ts_rank_prof **ranks;   /* borrowed, sorted by (rank, window); without
					* the duplicates */
	size_t n;
	TS_VEC(struct ts_job_dup) dups;
	int64_t nranks;                /* distinct ranks */
	TS_VEC(struct ts_straggler) stragglers;
	TS_VEC(struct ts_straggler) per_rank; /* the same figures for every rank with matched steps */
	struct ts_skew_stat skew;
	struct ts_verdict wall;
};

void ts_job_prof_init(struct ts_job_prof *j);
void ts_job_prof_release(struct ts_job_prof *j);

/*
 * Cross-rank analysis over already profiled rank windows (borrowed; they
 * must outlive j). Sorts ranks by (rank, window_no), leaves out a window
 * whose time overlaps an earlier one of its rank (j->dups), assigns
 * window_no to the other windows of a rank in input order, matches
 * collectives, finds stragglers and decides the job's wall. Returns 0 or
 * TS_ENOMEM.
 */
int ts_job_analyse(struct ts_job_prof *j, struct ts_rank_prof **ranks, size_t n,
		   struct ts_err *err);

/* The job's warnings (duplicate-window, one per left-out window) into w:
 * 0 or TS_ENOMEM. */
int ts_job_warnings(const struct ts_job_prof *j, struct ts_warnings *w);

#endif

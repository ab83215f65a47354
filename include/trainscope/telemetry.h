/*
 * telemetry.h - device telemetry: samples of power, clocks, utilisation,
 * memory and temperatures per GPU, read from other tools' captures or taken
 * by trainscope's own sampler, summarised, judged and joined to steps.
 *
 * One model for every source. A capture is a list of GPUs and a list of
 * samples; a sample holds one value per field, and each value has a state:
 * absent (the source never has the field), a value, missing in this sample
 * (N/A in one tick of dcgmi, a truncated block) or unsupported (the source
 * says the device cannot give it: `-` in dmon, `[Not Supported]`, an MTML
 * gap, a missing NVML symbol). Unsupported is never 0.
 *
 * Readers (by content, never by file name): nvidia-smi dmon (legacy and
 * modern columns, -o DT), nvidia-smi --query-gpu CSV (any field order, with
 * or without header and units, N/A placeholders), dcgmi dmon (N/A and N/W
 * cells, error outputs, GPU / GPU-I entities), dcgm-exporter's Prometheus
 * text (DCGM_FI_* series, each scrape a sampling round), mthreads-gmi default tables
 * (1.x and 2.x) and --query --json, Megatron StragglerDetector lines
 * (power in mW printed as "W", fixed and flagged) and trainscope's own
 * `trainscope.telemetry/1` JSONL. Units inside the model: W, %, degrees C,
 * MHz, MiB, joules, fractions 0-1 for DCGM profiling fields, time in
 * integer nanoseconds since the Unix epoch (TS_NO_TIME when the source
 * prints none).
 */
#ifndef TRAINSCOPE_TELEMETRY_H
#define TRAINSCOPE_TELEMETRY_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/jsonw.h"

/* Fields, in output order. */
enum ts_tf {
	TS_TF_POWER_W,
	TS_TF_POWER_LIMIT_W,
	TS_TF_ENERGY_J,         /* cumulative counter (NVML) or integrated power */
	TS_TF_UTIL_PCT,
	TS_TF_MEM_UTIL_PCT,
	TS_TF_TEMP_C,
	TS_TF_MEM_TEMP_C,
	TS_TF_SM_CLOCK_MHZ,
	TS_TF_SM_CLOCK_MAX_MHZ,
	TS_TF_MEM_CLOCK_MHZ,
	TS_TF_MEM_USED_MIB,
	TS_TF_MEM_TOTAL_MIB,
	TS_TF_FAN_PCT,
	TS_TF_PCIE_GEN,
	TS_TF_PCIE_GEN_MAX,
	TS_TF_PCIE_WIDTH,
	TS_TF_PCIE_WIDTH_MAX,
	TS_TF_PCIE_RX_MBPS,     /* MB/s */
	TS_TF_PCIE_TX_MBPS,
	TS_TF_POWER_VIOL_PCT,   /* dmon pviol: % of time power-capped */
	TS_TF_THERMAL_VIOL,     /* dmon tviol: bool */
	TS_TF_EVENT_REASONS,    /* NVML clock-event reasons bitmask */
	TS_TF_ECC_SBE,          /* error counts as printed */
	TS_TF_ECC_DBE,
	TS_TF_GR_ACTIVE,        /* DCGM profiling fractions 0..1 */
	TS_TF_SM_ACTIVE,
	TS_TF_SM_OCCUPANCY,
	TS_TF_TENSOR_ACTIVE,
	TS_TF_DRAM_ACTIVE,
	TS_TF_FP64_ACTIVE,
	TS_TF_FP32_ACTIVE,
	TS_TF_FP16_ACTIVE,
	TS_TF_XID,              /* last Xid error code (dcgmi XIDER), 0 none */
	TS_TF_COUNT
};

/* JSON name ("power_w") and unit ("W") of a field. */
const char *ts_tf_name(int field);
const char *ts_tf_unit(int field);

/* NVML clock-event reason bits (nvml.h); names by ts_tele_reason_name. */
enum {
	TS_REASON_GPU_IDLE = 0x1, TS_REASON_APP_CLOCKS = 0x2,
	TS_REASON_SW_POWER_CAP = 0x4, TS_REASON_HW_SLOWDOWN = 0x8,
	TS_REASON_SYNC_BOOST = 0x10, TS_REASON_SW_THERMAL = 0x20,
	TS_REASON_HW_THERMAL = 0x40, TS_REASON_HW_POWER_BRAKE = 0x80,
	TS_REASON_DISPLAY_CLOCK = 0x100
};
/* "sw_power_cap" for one bit, NULL for an unknown bit. */
const char *ts_tele_reason_name(uint64_t bit);

enum ts_tv_state { TS_TV_ABSENT = 0, TS_TV_VALUE, TS_TV_MISSING, TS_TV_UNSUPPORTED };

#define TS_NO_TIME INT64_MIN

/* One sample of one GPU. */
struct ts_tele_sample {
	int64_t t_ns;              /* Unix epoch ns, TS_NO_TIME if unknown */
	int64_t mono_ns;           /* CLOCK_MONOTONIC (own sampler), else TS_NO_TIME */
	uint32_t gpu;              /* index into capture.gpus */
	uint32_t tick;             /* 0-based sampling round */
	double v[TS_TF_COUNT];
	unsigned char st[TS_TF_COUNT]; /* enum ts_tv_state */
};

/* One GPU (or DCGM entity) of a capture. */
struct ts_tele_gpu {
	const char *id;            /* "0", "GPU-I 28" (arena) */
	const char *name;          /* "NVIDIA H100 80GB HBM3", or NULL */
	const char *bus_id;        /* PCI bus id, or NULL */
	const char *uuid;          /* or NULL */
	/* the capture it was read from: with several captures read into one
	 * telemetry (watch --read A B), a GPU is (capture, id), and GPU 0 of
	 * A is not GPU 0 of B */
	int32_t capture;           /* 0-based index of the capture file */
	const char *file;          /* its name as given to the reader, or NULL */
	/* the host it is on as its capture records it (the "host" of a
	 * trainscope.telemetry/1 header), NULL when unrecorded: then its
	 * host is that of another capture holding one of its capture's GPUs
	 * by uuid, else its capture (one tool's capture is one machine's; see
	 * ts_tele_host_warn). GPUs are compared with the GPUs of their own
	 * host only (straggler-gpu, clock-spread, low-utilization,
	 * ts_tele_confounds). */
	const char *host;
	/* the same device seen in several captures (ts_tele_match_gpus): GPUs
	 * of different captures with the same uuid ("GPU-" prefix, case and
	 * blanks aside), or, where one of them has none and both captures
	 * record the same host, the same PCI bus id (domain width and case
	 * aside) share `device` (0-based, in order of first appearance);
	 * matched_by is "uuid", "bus_id" or NULL (seen in no other capture) */
	int32_t device;
	const char *matched_by;
	/* why a field is unsupported ("mtml-2.2.0", "nvml: symbol missing"),
	 * NULL when not said */
	const char *unsupported_why[TS_TF_COUNT];
	/* the first placeholder cell of a throttle-reason field (clock-event
	 * reasons, per-reason fields, pviol, tviol) with its column, as
	 * "clocks_throttle_reasons.active is '[Not Supported]'" (arena), NULL
	 * when there is none; what the GPU or driver gave instead of reasons */
	const char *reasons_cell;
	/* 1 when its capture read some time from a stamp without a zone (dmon
	 * -o DT, mthreads-gmi dates, a --query-gpu timestamp without one): the
	 * capturing machine's local time, read as UTC. Per capture: a capture
	 * with zoned stamps read beside it is UTC all the same. */
	int local_time;
};

enum ts_tele_format {
	TS_TELE_UNKNOWN = 0,
	TS_TELE_DMON,              /* nvidia-smi dmon */
	TS_TELE_QUERY_CSV,         /* nvidia-smi --query-gpu --format=csv */
	TS_TELE_DCGMI,             /* dcgmi dmon */
	TS_TELE_GMI_TABLE,         /* mthreads-gmi default table */
	TS_TELE_GMI_JSON,          /* mthreads-gmi --query --json */
	TS_TELE_STRAGGLER,         /* Megatron StragglerDetector lines */
	TS_TELE_OWN,               /* trainscope.telemetry/1 JSONL */
	TS_TELE_DCGM_EXPORTER,     /* dcgm-exporter's Prometheus text, scrape after scrape */
	TS_TELE_FORMAT_COUNT
};
/* "nvidia-smi-dmon", "nvidia-smi-query-gpu", "dcgmi-dmon", ... */
const char *ts_tele_format_name(int format);

/*
 * The telemetry format of a buffer (the start of a file), or TS_TELE_UNKNOWN.
 * The one content test for telemetry; detect uses it too.
 */
int ts_tele_sniff(const char *data, size_t n);

/* Megatron StragglerDetector report: min/max of a metric across ranks. */
struct ts_straggler_stat {
	const char *metric;        /* "Rtt", "Pwr", "Tmp", "Utl", "Clk", "DRtt", "Etpt" */
	const char *unit;          /* after normalisation: "ms", "W", "C", "%", "MHz", "TF" */
	double min, max;
	int32_t min_rank, max_rank;
};
#define TS_STRAGGLER_MAX 16
struct ts_straggler_line {
	int64_t t_ns;              /* the bracketed timestamp, TS_NO_TIME if none */
	int32_t file;
	int64_t line;
	int32_t srun_rank;         /* the launcher's "N:" label, -1 if none */
	struct ts_straggler_stat stat[TS_STRAGGLER_MAX];
	int nstat;
	/* a "Bottom/Top N Ranks with lowest/highest Etpt(TF)" line */
	const char *list_kind;     /* "bottom" | "top" | NULL */
	double list_v[TS_STRAGGLER_MAX];
	int32_t list_rank[TS_STRAGGLER_MAX];
	int nlist;
};

struct ts_telemetry {
	int format;                /* first source's enum ts_tele_format */
	const char *source;        /* "nvml", "mtml", "nvidia-smi-dmon", ... (arena) */
	const char *fidelity;      /* "library" | "text-capture" | "cli-polling" */
	const char *tool_version;  /* "mthreads-gmi 2.2.0", "NVML 13.580.82" or NULL */
	const char *driver_version;/* or NULL */
	int64_t interval_ns;       /* sampling interval when known, else 0 */
	int32_t gpus_attached;     /* the source's own count (gmi JSON), -1 if unsaid */
	TS_VEC(struct ts_tele_gpu) gpus;
	TS_VEC(struct ts_tele_sample) samples;   /* in time (tick) order */
	struct ts_warnings notes;  /* remarks about the input (not errors), codes
				    * "truncated", "partial-tick", "mw-as-w", ...,
				    * with their line when known (jsonw.h) */
	TS_VEC(const char *) errors;             /* tool error lines (dcgmi) */
	TS_VEC(struct ts_straggler_line) straggler;
	/* own sampler: its overhead */
	double sampler_cpu_pct;    /* CPU time / wall time of the sampling thread, NAN if unknown */
	double sampler_call_us;    /* mean time of one sampling round, NAN if unknown */
	int nfiles;
	struct ts_arena arena;
};

void ts_tele_init(struct ts_telemetry *t);
void ts_tele_release(struct ts_telemetry *t);

/* Options of the text readers. */
struct ts_tele_read_opts {
	/* field names of a headerless --query-gpu CSV, comma separated, as
	 * given to --query-gpu (NULL: from a "--query-gpu=" on a comment line) */
	const char *query_fields;
};

/*
 * Read one capture file (any format above) and append its GPUs and
 * samples (a second file's GPUs are new entries, each its own device
 * until ts_tele_match_gpus). Returns 0, TS_EIO,
 * TS_EPARSE naming file and line (not a telemetry format, a headerless CSV
 * without field names, a malformed row), TS_ELIMIT or TS_ENOMEM; on an
 * error t holds what it held before the call (nothing of the file). A cut
 * last record is a "truncated" note, not an error.
 */
int ts_tele_read(struct ts_telemetry *t, const char *path,
		 const struct ts_tele_read_opts *o, struct ts_err *err);
/* Append the notes of t from index `from` on (those of the file read last,
 * when `from` is the note count before that read) to out as warnings of
 * the command that read `path`: code kept, message "PATH: NOTE", file path,
 * the note's line. Returns 0 or TS_ENOMEM. */
int ts_tele_notes_warn(const struct ts_telemetry *t, size_t from, const char *path,
		       struct ts_warnings *out);
/* As ts_tele_read on a caller-owned buffer; name is used in messages. */
int ts_tele_read_mem(struct ts_telemetry *t, const void *data, size_t n,
		     const char *name, const struct ts_tele_read_opts *o,
		     struct ts_err *err);

/* Set every GPU's device and matched_by (see struct ts_tele_gpu): two GPUs
 * of one capture are never one device, nor two with different uuids; a
 * bus id is unique only on its host, so it joins only GPUs whose captures
 * record the same host, and none that two uuids share. Time linear in
 * the GPUs (times the captures a device is seen in). The readers leave
 * each GPU its own device: call it once after the last capture is read
 * and before anything reads device or matched_by (the analyses, the
 * renderers, ts_tele_host_warn); after each file it made reading N
 * captures quadratic in N. Returns the number of devices seen in more than one
 * capture (0, every GPU its own device, when out of memory). */
size_t ts_tele_match_gpus(struct ts_telemetry *t);
/* A uuid as the tools spell it ("GPU-ABCDEF01-...", "abcdef01-...") in one
 * form: lower case, without "GPU-" and blanks, into buf; 0 when it is no
 * uuid (empty, "N/A", no hex digit). */
int ts_tele_uuid_norm(const char *uuid, char *buf, size_t cap);
/* A PCI bus id ("00000000:1B:00.0", "0000:1b:00.0", "1b:00.0") as one
 * number (domain << 24 | bus << 16 | device << 8 | function) into *out;
 * 0 when it does not parse. */
int ts_tele_bus_norm(const char *bus, uint64_t *out);

/*
 * The hosts of the GPUs, on which every comparison across GPUs is made
 * (straggler-gpu, clock-spread, low-utilization, ts_tele_confounds): the
 * host a capture records; else, for a capture that records none, the host
 * of another capture holding one of its GPUs by uuid (captures of no host
 * sharing a GPU are one host); else the capture itself (one tool's capture
 * is one machine's). Where captures of no host hold GPUs of two recorded
 * hosts, each GPU seen on a recorded host is on it and those captures'
 * other GPUs are one host of their own, in any reading order. A PCI bus id
 * joins no hosts (every machine of one board layout repeats them), nor are
 * two recorded host names joined. With several captures, append to out a
 * "host-unknown" warning (file: the capture; "FILE: " before the message)
 * for each capture recording no host whose host is not so told: its GPUs
 * have no uuid, none is in another capture, they match other captures'
 * only by bus id (so are not taken for the same GPUs), or they are GPUs of
 * captures of two different hosts. Returns 0 or TS_ENOMEM.
 */
int ts_tele_host_warn(const struct ts_telemetry *t, struct ts_warnings *out);

/* 1 when t's GPUs come from more than one capture (their ids may repeat). */
int ts_tele_multi_capture(const struct ts_telemetry *t);
/* How text names GPU g: "GPU 3" (an entity id as it is: "GPU-I 28"), with
 * " of FILE" when t's GPUs come from several captures; with bare set, the
 * id without "GPU " ("3 of FILE"). Written into buf (cap bytes); returns buf. */
const char *ts_tele_gpu_label(const struct ts_telemetry *t, size_t g, int bare, char *buf,
			      size_t cap);

/* Append a GPU (strings are copied into the arena). Returns its index or -1. */
int ts_tele_add_gpu(struct ts_telemetry *t, const char *id, const char *name);
/* Append a blank sample of gpu in tick (all fields absent). NULL on ENOMEM. */
struct ts_tele_sample *ts_tele_add_sample(struct ts_telemetry *t, uint32_t gpu,
					  uint32_t tick, int64_t t_ns);
/* Add a note (msg copied; line <= 0 unknown). */
void ts_tele_note(struct ts_telemetry *t, const char *code, int64_t line,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ------------------------------------------------------------- analysis */

/* Per GPU and field: over samples whose state is a value. */
struct ts_tele_stat {
	size_t n;                  /* values */
	size_t missing;            /* samples missing the field */
	int state;                 /* TS_TV_VALUE if any value, else the field's state */
	double mean, min, max;
};

struct ts_tele_gpu_summary {
	size_t samples;
	int64_t first_ns, last_ns; /* TS_NO_TIME when untimed */
	struct ts_tele_stat f[TS_TF_COUNT];
	double energy_j;           /* by counter difference or integration, NAN */
	const char *energy_method; /* "counter" | "integrated" | NULL */
	double energy_covered_s;   /* integrated: the time integrated over (sample
				    * gaps left out); counter: last - first sample; NAN */
	double gap_s;              /* time inside sample gaps, 0 when none */
	uint64_t reasons_seen;     /* OR of event-reason bits over samples */
};

/*
 * Sample gaps. An interval between consecutive timed samples of one GPU
 * longer than TS_TELE_GAP_FACTOR x that GPU's median interval is a gap:
 * power is not integrated across it, and the time in it does not count as
 * a step's coverage. The readers note each gap ("sample-gap").
 */
#define TS_TELE_GAP_FACTOR 2.5

/* Fill one summary per GPU (out has t->gpus.n entries). Linear in the
 * samples whatever the GPU count; on ENOMEM the energy figures stay NAN. */
void ts_tele_summarize(const struct ts_telemetry *t, struct ts_tele_gpu_summary *out);

/* A finding with the numbers behind it. */
#define TS_TELE_SAME_MAX 8
struct ts_tele_finding {
	const char *id;            /* "power-capped", "thermal-throttling", "clock-spread",
				      "low-utilization", "memory-misreport", "memory-headroom",
				      "pcie-link-degraded", "idle-gap", "straggler-gpu",
				      "counter-untrustworthy", "stall-dips", "no-straggler",
				      "ecc-uncorrectable", "xid-error" */
	const char *severity;      /* "warning" | "info" */
	int32_t gpu;               /* index, or -1 for the job */
	char msg[512];             /* the sentence with its numbers */
	/* a finding about one device seen in several captures (struct
	 * ts_tele_gpu's device) that holds in more than one of them is one
	 * finding: gpu is the first such GPU, same[] the others (GPU indices,
	 * in capture order, the first TS_TELE_SAME_MAX), nsame their count
	 * (0: gpu's capture only); msg names each capture with its time
	 * span. Made so for straggler-gpu and every finding about one GPU
	 * (power-capped, thermal-throttling, memory-*, pcie-link-degraded,
	 * idle-gap, counter-untrustworthy, ecc-uncorrectable, xid-error:
	 * each other capture's words up to their first "; "). */
	int32_t same[TS_TELE_SAME_MAX];
	size_t nsame;
};

/* Per-step telemetry, one row per (step, GPU). */
struct ts_tele_step {
	int64_t iteration;
	uint32_t gpu;
	int64_t start_ns, end_ns;  /* Unix epoch ns */
	size_t samples;
	size_t power_samples;      /* samples with a power value */
	double power_mean_w, power_min_w, power_max_w;
	double energy_j;           /* mean power x step duration, NAN */
	double energy_per_token_j; /* NAN without tokens */
	double sm_clock_min_mhz;
	double util_mean_pct;
	double mem_used_max_mib;
	double throttle_share;     /* share of samples with a power/thermal reason, NAN */
	/* the part of [start, end) inside intervals between two consecutive
	 * samples of the GPU that are no sample gap, in s, and as a fraction of
	 * the step (NAN when the GPU has fewer than 2 timed samples). Below
	 * TS_TELE_MIN_COVERAGE the step is not measured: energy_j and
	 * energy_per_token_j are NAN, the means are those of its few samples. */
	double covered_s;
	double coverage;
};
#define TS_TELE_MIN_COVERAGE 0.5

/* A step's time span for alignment. */
struct ts_tele_span {
	int64_t iteration;
	int64_t start_ns, end_ns;  /* Unix epoch ns */
	int64_t tokens;            /* or TS_NO_INT-like negative when unknown */
};

/*
 * Join samples to steps: a sample belongs to the step whose [start, end)
 * holds its time. Steps without a sample get a row with samples = 0.
 * *out is malloc'ed (caller frees); *nout rows. Untimed captures give
 * TS_EUNSUPPORTED ("the capture has no timestamps").
 */
int ts_tele_align(const struct ts_telemetry *t, const struct ts_tele_span *steps,
		  size_t nsteps, struct ts_tele_step **out, size_t *nout,
		  struct ts_err *err);

/*
 * Warnings about a join (code, message, appended to out):
 * "steps-outside-capture" when no step, or only some, overlap a capture's
 * time range (both ranges and the offset between their starts, with a
 * time-zone hint when the offset is within 2 min of a non-zero multiple of
 * 15 min and that capture's GPUs have local_time; a stamp with a zone is
 * UTC already), judged capture by capture: with several captures each is
 * judged on its own range, and its warning names it (file and "FILE: "
 * before the message; with one, file NULL), and "sample-gap" listing the steps inside the capture whose
 * coverage is below TS_TELE_MIN_COVERAGE on some GPU. rows are
 * ts_tele_align's. Returns 0 or TS_ENOMEM.
 */
int ts_tele_join_warn(const struct ts_telemetry *t, const struct ts_tele_span *steps,
		      size_t nsteps, const struct ts_tele_step *rows, size_t nrows,
		      struct ts_warnings *out);

/*
 * The findings a cap left out: total, and per id (in the order of their
 * first finding; the ids of struct ts_tele_finding and
 * "telemetry-confound" are fewer than TS_TELE_DROP_KINDS).
 */
#define TS_TELE_DROP_KINDS 16
struct ts_tele_dropped {
	size_t total;
	size_t nkind;
	const char *id[TS_TELE_DROP_KINDS];
	size_t count[TS_TELE_DROP_KINDS];
};

/*
 * Judge the capture (and the aligned steps, may be NULL) into findings.
 * sku_mem_mib: nominal memory of the GPUs' SKU per gpu name lookup is done
 * by the caller through expected_total_mib (NULL or 0 when unknown).
 * Every finding is judged (the throttled GPUs that straggler-gpu's clock
 * test skips are those of all power-capped and thermal-throttling
 * findings); when there are more than cap, the cap most important are
 * written, warnings before info and, within a severity, in the order
 * below, and *dropped (may be NULL; zeroed first) counts the others by
 * id. The written ones keep their order. Returns the number written to
 * out (at most cap); 0 on ENOMEM.
 */
size_t ts_tele_findings(const struct ts_telemetry *t,
			const struct ts_tele_gpu_summary *sum,
			const struct ts_tele_step *steps, size_t nsteps,
			const double *expected_total_mib,
			struct ts_tele_finding *out, size_t cap,
			struct ts_tele_dropped *dropped);

/*
 * Append to out a "findings-dropped" warning when d dropped some: "WHAT:
 * N of M findings are not listed (the first K by severity are): 40
 * idle-gap, 3 straggler-gpu" (kept: the number written). Nothing when d
 * is NULL or dropped none. Returns 0 or TS_ENOMEM.
 */
int ts_tele_dropped_warn(const struct ts_tele_dropped *d, size_t kept, const char *what,
			 struct ts_warnings *out);

/*
 * Confounds of an A/B comparison: the two sides' telemetry differ in what
 * changes speed without any code change. Compared host by host (a host of
 * a with the host of b of the same name, "on host NAME" in the message),
 * or over all GPUs of a side when no host is on both or each side is one:
 * the power limit (max) differs by more than 1 %, the mean SM clock by more
 * than 3 %, the mean temperature by more than 10 C, or the GPU names
 * differ. Each is a "telemetry-confound" finding (gpu -1) naming both
 * values. Returns the number written (at most cap: the first cap in that
 order; *dropped, may be NULL, counts the others as ts_tele_findings does).
 */
size_t ts_tele_confounds(const struct ts_telemetry *a, const struct ts_tele_gpu_summary *sa,
			 const struct ts_telemetry *b, const struct ts_tele_gpu_summary *sb,
			 struct ts_tele_finding *out, size_t cap,
			 struct ts_tele_dropped *dropped);

/* --------------------------------------------------------------- output */

struct ts_sb;
/*
 * Render the `trainscope.watch/1` JSON object (gpus, straggler, steps,
 * findings, notes as warnings) or the text tables into out. dropped (may
 * be NULL): when it counts some, the JSON adds "findings_dropped" after
 * "findings", {id: count}; the text says it by the "findings-dropped"
 * warning among t's notes (ts_tele_dropped_warn).
 */
void ts_tele_render_json(struct ts_sb *out, const struct ts_telemetry *t,
			 const struct ts_tele_gpu_summary *sum,
			 const struct ts_tele_step *steps, size_t nsteps,
			 const struct ts_tele_finding *f, size_t nf,
			 const struct ts_tele_dropped *dropped,
			 int exit_code, int child_signal);
void ts_tele_render_text(struct ts_sb *out, const struct ts_telemetry *t,
			 const struct ts_tele_gpu_summary *sum,
			 const struct ts_tele_step *steps, size_t nsteps,
			 const struct ts_tele_finding *f, size_t nf);

/* ------------------------------------------------------------- sampler */

/*
 * The sampler: device libraries opened with dlopen and every symbol looked
 * up alone (a missing one makes its fields unsupported, never a crash).
 * NVML (libnvidia-ml.so.1, new names first, deprecated ones as fallback)
 * and MTML (libmtml.so: library, system, device, GPU and memory handles
 * created once and freed at close). TS_SAMPLER_LIB_* override the sonames
 * for tests. Samples go to t and, line by line, to a telemetry JSONL file.
 * When no library loads, `nvidia-smi --query-gpu ... -lms` polls into a
 * temporary file that is read when sampling stops (fidelity "cli-polling",
 * local times moved to UTC).
 */
struct ts_sampler;

struct ts_sampler_opts {
	int64_t interval_ns;       /* 10 ms .. 10 s */
	const char *backend;       /* "auto", "nvml", "mtml", "nvidia-smi" */
	const char *out_path;      /* JSONL file, or NULL */
};

/* Open a backend. Returns 0, or TS_EUNSUPPORTED with err saying what was
 * tried ("no device library: libnvidia-ml.so.1: ...; libmtml.so: ..."). */
int ts_sampler_open(struct ts_sampler **sp, const struct ts_sampler_opts *o,
		    struct ts_telemetry *t, struct ts_err *err);
/* Start the sampling thread. */
int ts_sampler_start(struct ts_sampler *s, struct ts_err *err);
/* Stop the thread (takes one last sample), flush, record the overhead. */
int ts_sampler_stop(struct ts_sampler *s, struct ts_err *err);
/* Close libraries and handles; safe on NULL. */
void ts_sampler_close(struct ts_sampler *s);

#endif

/*
 * detect.h - what is this file? Decided by content, never by name alone.
 *
 * Reads at most the first 256 KiB (inflated when gzip) and classifies the
 * input. Commands use it to accept "files or a run directory": diagnose
 * walks a directory and hands each piece to the right reader.
 */
#ifndef TRAINSCOPE_DETECT_H
#define TRAINSCOPE_DETECT_H

#include "trainscope/core.h"

enum ts_kind {
	TS_KIND_UNKNOWN = 0,
	TS_KIND_KINETO_TRACE,    /* Chrome-trace JSON object with traceEvents */
	TS_KIND_LEGACY_TRACE,    /* pre-Kineto bare array of events */
	TS_KIND_NSYS_SQLITE,     /* Nsight Systems SQLite export */
	TS_KIND_SQLITE,          /* another SQLite database (e.g. a ledger) */
	TS_KIND_HF_CONFIG,       /* Hugging Face config.json */
	TS_KIND_CONTRACT,        /* trainscope contract */
	TS_KIND_FLIGHT_RECORDER, /* PyTorch Flight Recorder dump (JSON, repr or pickle) */
	TS_KIND_JSON_OTHER,      /* some other JSON document */
	TS_KIND_METRICS_JSONL,   /* one JSON object per step per line */
	TS_KIND_LOG_MEGATRON,    /* Megatron-LM / MT-MegatronLM iteration lines */
	TS_KIND_LOG_BRIDGE,      /* Megatron Bridge "Step Time :" lines */
	TS_KIND_LOG_NEMO,        /* NeMo 2 progress lines, NeMo 1 Lightning bars */
	TS_KIND_LOG_HF,          /* Hugging Face Trainer dict lines */
	TS_KIND_LOG_PRIMUS,      /* AMD Primus */
	TS_KIND_LOG_TITAN,       /* torchtitan "step: N  loss: ..." lines */
	TS_KIND_LOG_DEEPSPEED,   /* DeepSpeed engine throughput lines */
	TS_KIND_LOG_HANG,        /* watchdog / NCCL timeout lines, NCCL_DEBUG COLL lines */
	TS_KIND_HANG_REPORT,     /* fr_trace analyser output, NCCL RAS report */
	TS_KIND_TELEMETRY_SMI,   /* nvidia-smi --query-gpu CSV */
	TS_KIND_TELEMETRY_DMON,  /* nvidia-smi dmon */
	TS_KIND_TELEMETRY_GMI,   /* mthreads-gmi table or --query --json */
	TS_KIND_TELEMETRY_DCGMI, /* dcgmi dmon */
	TS_KIND_TELEMETRY_STRAGGLER, /* Megatron StragglerDetector lines */
	TS_KIND_TELEMETRY_OWN,   /* trainscope.telemetry/1 JSONL (watch) */
	TS_KIND_TELEMETRY_DCGM_EXPORTER, /* dcgm-exporter Prometheus text */
	TS_KIND_ENV_REPORT,      /* collect_env, sglang check_env, nvidia-smi -q */
	TS_KIND_PREFLIGHT,       /* trainscope preflight JSON */
	TS_KIND_SAFETENSORS,     /* safetensors tensor dump */
	TS_KIND_TEXT,            /* text we do not recognise */
	TS_KIND_BINARY,          /* binary we do not recognise */
	TS_KIND_COUNT
};

/* Stable lower-case name ("kineto-trace", "log-megatron", ...). */
const char *ts_kind_name(enum ts_kind kind);

struct ts_detect {
	enum ts_kind kind;
	int gzip;             /* the file was gzip-compressed */
	int64_t bytes;        /* size on disk, -1 if unknown */
	char vendor[16];      /* traces: "cuda", "rocm", "musa", "mtia", "cpu" or "" */
};

/* Classify path. Returns 0 (kind may be UNKNOWN) or TS_EIO / TS_EPARSE
 * (corrupt gzip) with err filled; TS_ETRUNC (err has the offset) when a gzip
 * stream ends early before anything recognisable (kind UNKNOWN or TEXT). */
int ts_detect_file(const char *path, struct ts_detect *out, struct ts_err *err);

/*
 * Why a file whose content ts_detect_file() classified as d is not the
 * input its name promises, as one clause for a warning (no path, no final
 * period) in buf[size]; NULL when the name promises nothing or keeps its
 * promise. Names: "*.pt.trace.json" / "*.pt.trace.json.gz" (what the
 * PyTorch profiler's tensorboard_trace_handler writes) on content that is
 * no trace; "*.nsys-rep" (an Nsight Systems report, binary, read only
 * through its SQLite export). A directory walk uses it so that a cut,
 * corrupt or misnamed rank file is said, not silently left out.
 */
const char *ts_detect_misnamed(const char *path, const struct ts_detect *d, char *buf, size_t size);

/*
 * 1 when the n bytes at data open like a pickle: PROTO (0x80: protocols 2
 * and up), or for protocols 0 and 1, which have no PROTO, the root
 * container's opcodes: MARK, DICT / LIST / TUPLE, then a memo or value
 * opcode ("(dp0" in protocol 0), or EMPTY_DICT / EMPTY_LIST then a memo or
 * MARK opcode ("}q\0(" in protocol 1), which no text log starts with.
 * detect and the hang reader decide "pickle" with it.
 */
int ts_detect_pickle_opening(const void *data, size_t n);

/* Classify a prefix of content already in memory (not gzip). */
enum ts_kind ts_detect_buffer(const char *data, size_t n, char *vendor, size_t vsize);

#endif

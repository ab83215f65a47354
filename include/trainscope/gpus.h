/*
 * gpus.h - the accelerator catalog: dense peak throughput by precision,
 * memory, and the intra-node link, each number with its source.
 *
 * MFU is only as honest as its denominator, so every peak carries the
 * source it was taken from, peaks are DENSE (sparsity never counts), and a
 * value nobody has published (MTT S5000 BF16) is TS_PEAK_UNKNOWN, never a
 * guess. A user catalog file (JSON, format in docs/mfu.md) overrides
 * entries and adds new ones.
 *
 * Ownership: the catalog owns its entries and every string in them (an
 * arena); pointers returned by lookups stay valid until
 * ts_gpu_catalog_release().
 */
#ifndef TRAINSCOPE_GPUS_H
#define TRAINSCOPE_GPUS_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"

enum ts_precision {
	TS_PREC_FP32 = 0, /* vector FP32 */
	TS_PREC_TF32,
	TS_PREC_BF16,
	TS_PREC_FP16,
	TS_PREC_FP8,
	TS_PREC_INT8,     /* dense TOPS */
	TS_PREC_FP4,
	TS_PREC_COUNT
};

/* "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4" (lowercase). */
const char *ts_precision_name(int prec);
/* Parse a precision name, case-insensitive; also "mxfp8"/"e4m3"/"hybrid" ->
 * fp8, "nvfp4"/"mxfp4" -> fp4, "half" -> fp16. -1 when unknown. */
int ts_precision_parse(const char *s);

enum ts_peak_state {
	TS_PEAK_UNKNOWN = 0,  /* not published; the user must supply it */
	TS_PEAK_KNOWN,
	TS_PEAK_UNSUPPORTED   /* the hardware has no such datapath */
};

struct ts_peak {
	int state;            /* enum ts_peak_state */
	double tflops;        /* dense TFLOP/s (TOPS for int8) when KNOWN */
	const char *source;   /* where the number comes from (NULL: the entry's source) */
	const char *note;     /* caveat, or NULL */
};

struct ts_gpu {
	const char *sku;      /* canonical name ("H100-SXM") */
	const char *vendor;   /* "NVIDIA", "AMD", "Moore Threads", or a user string */
	const char *aliases;  /* comma-separated other names ("H100,H100 SXM5") */
	struct ts_peak peak[TS_PREC_COUNT];
	const char *source;   /* source of the peaks unless a peak names its own */
	int64_t memory_bytes; /* device memory; 0 = unknown. Marketed "GB" of HBM/GDDR
			       * are binary: 80 GB = 80 * 2^30 bytes */
	const char *memory_note;
	double mem_bw_bytes_per_s;   /* 0 = unknown */
	const char *link;            /* intra-node link ("NVLink4"), or NULL */
	double link_bytes_per_s;     /* per-GPU aggregate, 0 = unknown */
	int link_domain;             /* GPUs in one fast-link domain (8 HGX, 72 NVL72); 0 = unknown */
	const char *notes;           /* general caveats */
	int user;                    /* 1 if defined or overridden by a user catalog */
};

struct ts_gpu_catalog {
	struct ts_gpu *v;
	size_t n, cap;
	struct ts_arena arena;
};

/* Fill with the built-in entries (static strings). Returns 0 or TS_ENOMEM. */
int ts_gpu_catalog_init(struct ts_gpu_catalog *c);
void ts_gpu_catalog_release(struct ts_gpu_catalog *c);

/*
 * Merge a user catalog file: {"gpus": [{"sku": "...", ...}, ...]}. An entry
 * whose sku or an alias matches an existing entry overrides the fields it
 * states; otherwise it is added. TS_EIO / TS_EPARSE with file, offset and
 * line. Also ts_gpu_catalog_parse() for a memory buffer.
 */
int ts_gpu_catalog_load(struct ts_gpu_catalog *c, const char *path, struct ts_err *err);
int ts_gpu_catalog_parse(struct ts_gpu_catalog *c, const void *data, size_t n,
			 const char *name, struct ts_err *err);

/*
 * Find by name: case-insensitive, ignoring spaces, '-' and '_' ("h100-sxm",
 * "H100 SXM", "MTT S4000", "s4000" all work); the SKU first, then aliases.
 * NULL when nothing matches.
 */
const struct ts_gpu *ts_gpu_find(const struct ts_gpu_catalog *c, const char *name);

/*
 * The dense peak of g at prec: 0 and *tflops and *source set when known;
 * TS_EUNSUPPORTED with err saying the value is not published (or the
 * precision not supported) and how to supply it (--peak-tflops or a
 * catalog file).
 */
int ts_gpu_peak(const struct ts_gpu *g, int prec, double *tflops, const char **source,
		struct ts_err *err);

#endif

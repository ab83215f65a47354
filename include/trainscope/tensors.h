/*
 * tensors.h - safetensors reader and per-tensor numerical comparison.
 *
 * A safetensors file is an 8-byte little-endian header length N, N bytes
 * of JSON {"name": {"dtype": "BF16", "shape": [..], "data_offsets": [b, e]},
 * "__metadata__": {...}}, then the raw little-endian tensor bytes; offsets
 * are relative to the byte after the header. Files are mmap'ed; tensors are
 * views into the mapping, never copied.
 *
 * The comparison follows torch.testing.assert_close: an element passes when
 * |b - a| <= atol + rtol |a| (a = the reference, first file), with per-dtype
 * defaults bf16 (1.6e-2, 1e-5), fp16 (1e-3, 1e-5), fp32 (1.3e-6, 1e-5),
 * fp64 (1e-7, 1e-7); integers and bool must be equal. NaN or Inf in either
 * tensor fails it (counts reported per side).
 */
#ifndef TRAINSCOPE_TENSORS_H
#define TRAINSCOPE_TENSORS_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/input.h"

#define TS_ST_MAX_HEADER ((uint64_t)100 << 20) /* as the reference implementation */
#define TS_ST_MAX_DIMS 16

enum ts_dtype {
	TS_DT_UNKNOWN = 0,
	TS_DT_F64, TS_DT_F32, TS_DT_F16, TS_DT_BF16,
	TS_DT_F8_E4M3, TS_DT_F8_E5M2,
	TS_DT_I64, TS_DT_I32, TS_DT_I16, TS_DT_I8,
	TS_DT_U64, TS_DT_U32, TS_DT_U16, TS_DT_U8,
	TS_DT_BOOL,
	TS_DT_COUNT
};

/* "F32", "BF16", ... as written in the header; "?" for unknown. */
const char *ts_dtype_name(int dtype);
/* Bytes per element (0 for unknown). */
size_t ts_dtype_size(int dtype);

struct ts_tensor_info {
	const char *name;            /* decoded UTF-8, in the reader's arena */
	int dtype;                   /* enum ts_dtype */
	int ndim;
	int64_t shape[TS_ST_MAX_DIMS];
	uint64_t numel;
	const unsigned char *data;   /* view into the file, numel * size bytes */
};

struct ts_safetensors {
	TS_VEC(struct ts_tensor_info) tensors; /* sorted by name */
	struct ts_input in;
	struct ts_arena arena;
	char path[TS_ERR_PATH_MAX];
};

void ts_safetensors_init(struct ts_safetensors *st);
void ts_safetensors_release(struct ts_safetensors *st);

/*
 * Map and index a file. TS_EIO when unreadable; TS_EPARSE (with the byte
 * offset) for a header that is not valid safetensors: length beyond the
 * file or above TS_ST_MAX_HEADER, bad JSON, unknown dtype, offsets outside
 * the data or not matching shape x dtype size, duplicate names.
 */
int ts_safetensors_open(struct ts_safetensors *st, const char *path, struct ts_err *err);
/* The same on a caller-owned buffer (must outlive st). */
int ts_safetensors_parse(struct ts_safetensors *st, const void *data, size_t n,
			 const char *name, struct ts_err *err);

/* Element i of a floating tensor as double (NAN for non-float dtypes). */
double ts_tensor_get(const struct ts_tensor_info *t, uint64_t i);

/* torch.testing.assert_close default tolerances of a dtype. */
void ts_tensor_default_tol(int dtype, double *rtol, double *atol);

enum ts_tcmp_status {
	TS_TCMP_OK = 0,
	TS_TCMP_MISMATCH,    /* elements outside the tolerance */
	TS_TCMP_NONFINITE,   /* NaN or Inf in either tensor */
	TS_TCMP_SHAPE,       /* shapes differ */
	TS_TCMP_ONLY_A,      /* tensor missing from the second file */
	TS_TCMP_ONLY_B,      /* tensor missing from the first file */
	TS_TCMP_UNSUPPORTED  /* dtype we do not compare (fp8) */
};

const char *ts_tcmp_status_name(int status);

struct ts_tensor_cmp {
	const char *name;
	int dtype_a, dtype_b;        /* TS_DT_UNKNOWN when absent on that side */
	const struct ts_tensor_info *a, *b;
	uint64_t numel;
	double rtol, atol;           /* tolerances applied */
	double max_abs;              /* max |b - a| over finite pairs */
	double max_rel;              /* max |b - a| / |a| over finite pairs with a != 0 */
	uint64_t argmax_abs;         /* flat index of max_abs */
	uint64_t mismatched;         /* finite pairs outside the tolerance */
	uint64_t nan_a, nan_b, inf_a, inf_b;
	int status;                  /* enum ts_tcmp_status */
};

/*
 * Compare every tensor of a with the tensor of the same name in b (union of
 * names, sorted). rtol/atol < 0 select the per-dtype defaults (the looser
 * of the two dtypes when they differ). *out is malloc'ed (free it), *n the
 * count, *failed the number whose status is not OK. TS_ENOMEM only.
 */
int ts_tensors_compare(const struct ts_safetensors *a, const struct ts_safetensors *b,
		       double rtol, double atol, struct ts_tensor_cmp **out, size_t *n,
		       size_t *failed);

#endif

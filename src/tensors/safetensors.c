/*
 * safetensors.c - read safetensors dumps and compare them tensor by tensor.
 *
 * Why: a performance change (a fused kernel, a new attention backend, lower
 * precision somewhere) must not change what the model computes. Users dump
 * forward outputs and gradients of a baseline and a candidate step; this
 * module says, per tensor, how far apart they are in the units that matter
 * (max absolute and relative error against dtype-aware tolerances) and
 * whether NaN or Inf appeared.
 *
 * The header is untrusted input: every length and offset is checked against
 * the file before any tensor byte is touched.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/json.h"
#include "trainscope/tensors.h"

static const struct {
	const char *name;
	size_t size;
} dtypes[TS_DT_COUNT] = {
	[TS_DT_UNKNOWN] = { "?", 0 },
	[TS_DT_F64] = { "F64", 8 }, [TS_DT_F32] = { "F32", 4 },
	[TS_DT_F16] = { "F16", 2 }, [TS_DT_BF16] = { "BF16", 2 },
	[TS_DT_F8_E4M3] = { "F8_E4M3", 1 }, [TS_DT_F8_E5M2] = { "F8_E5M2", 1 },
	[TS_DT_I64] = { "I64", 8 }, [TS_DT_I32] = { "I32", 4 },
	[TS_DT_I16] = { "I16", 2 }, [TS_DT_I8] = { "I8", 1 },
	[TS_DT_U64] = { "U64", 8 }, [TS_DT_U32] = { "U32", 4 },
	[TS_DT_U16] = { "U16", 2 }, [TS_DT_U8] = { "U8", 1 },
	[TS_DT_BOOL] = { "BOOL", 1 },
};

const char *ts_dtype_name(int dtype)
{
	return dtype > 0 && dtype < TS_DT_COUNT ? dtypes[dtype].name : "?";
}

size_t ts_dtype_size(int dtype)
{
	return dtype > 0 && dtype < TS_DT_COUNT ? dtypes[dtype].size : 0;
}

static int dtype_of(const char *s, size_t n)
{
	for (int d = 1; d < TS_DT_COUNT; d++)
		if (strlen(dtypes[d].name) == n && memcmp(dtypes[d].name, s, n) == 0)
			return d;
	return TS_DT_UNKNOWN;
}

static int is_float(int d)
{
	return d == TS_DT_F64 || d == TS_DT_F32 || d == TS_DT_F16 || d == TS_DT_BF16;
}

void ts_safetensors_init(struct ts_safetensors *st)
{
	memset(st, 0, sizeof(*st));
	ts_arena_init(&st->arena);
}

void ts_safetensors_release(struct ts_safetensors *st)
{
	TS_VEC_RELEASE(st->tensors);
	ts_arena_release(&st->arena);
	ts_input_release(&st->in);
	memset(st, 0, sizeof(*st));
}

static int perr(struct ts_err *err, const char *name, struct ts_json *j, const char *what)
{
	return ts_err_at(err, TS_EPARSE, name, (int64_t)j->tok_offset, -1, "%s", what);
}

/* Read [u64, u64, ...] into v (at most cap); *n receives the count. */
static int read_u64s(struct ts_json *j, uint64_t *v, int cap, int *n, const char *name,
		     const char *what, struct ts_err *err)
{
	int tok = ts_json_next(j, err);

	*n = 0;
	if (tok < 0)
		return tok;
	if (tok != TS_JSON_ARR)
		return perr(err, name, j, what);
	while ((tok = ts_json_next(j, err)) == TS_JSON_NUM) {
		if (*n >= cap || ts_num_u64(j->s, j->n, &v[*n]))
			return perr(err, name, j, what);
		(*n)++;
	}
	if (tok < 0)
		return tok;
	return tok == TS_JSON_ARR_END ? 0 : perr(err, name, j, what);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct ts_tensor_info *)a)->name,
		      ((const struct ts_tensor_info *)b)->name);
}

/* Parse one tensor entry whose '{' was just read. */
static int read_entry(struct ts_json *j, struct ts_tensor_info *t,
		      const unsigned char *data, uint64_t data_len, const char *name,
		      struct ts_err *err)
{
	uint64_t shape[TS_ST_MAX_DIMS], offs[2];
	int nshape = -1, noffs = -1, tok, rc;
	uint64_t entry_off = j->tok_offset;

	t->dtype = TS_DT_UNKNOWN;
	while ((tok = ts_json_next(j, err)) == TS_JSON_KEY) {
		if (TS_JSON_IS(j, "dtype")) {
			if ((tok = ts_json_next(j, err)) < 0)
				return tok;
			if (tok != TS_JSON_STR || !(t->dtype = dtype_of(j->s, j->n)))
				return perr(err, name, j, "expected a safetensors dtype (F32, BF16, F16, F64, I64, ...)");
		} else if (TS_JSON_IS(j, "shape")) {
			if ((rc = read_u64s(j, shape, TS_ST_MAX_DIMS, &nshape, name,
					    "expected \"shape\": [non-negative integers] (at most 16)", err)))
				return rc;
		} else if (TS_JSON_IS(j, "data_offsets")) {
			if ((rc = read_u64s(j, offs, 2, &noffs, name,
					    "expected \"data_offsets\": [begin, end]", err)))
				return rc;
		} else {
			if ((tok = ts_json_next(j, err)) < 0 || (rc = ts_json_skip(j, tok, err)))
				return tok < 0 ? tok : rc;
		}
	}
	if (tok < 0)
		return tok;
	if (t->dtype == TS_DT_UNKNOWN || nshape < 0 || noffs != 2)
		return ts_err_at(err, TS_EPARSE, name, (int64_t)entry_off, -1,
				 "tensor '%s' needs dtype, shape and data_offsets [begin, end]", t->name);
	t->ndim = nshape;
	t->numel = 1;
	for (int i = 0; i < nshape; i++) {
		if (shape[i] > INT64_MAX || (shape[i] && t->numel > UINT64_MAX / shape[i]))
			return ts_err_at(err, TS_EPARSE, name, (int64_t)entry_off, -1,
					 "tensor '%s': shape too large", t->name);
		t->shape[i] = (int64_t)shape[i];
		t->numel *= shape[i];
	}
	if (offs[0] > offs[1] || offs[1] > data_len)
		return ts_err_at(err, TS_EPARSE, name, (int64_t)entry_off, -1,
				 "tensor '%s': data_offsets [%llu, %llu] outside the %llu data bytes",
				 t->name, (unsigned long long)offs[0], (unsigned long long)offs[1],
				 (unsigned long long)data_len);
	if (t->numel > UINT64_MAX / 8 || offs[1] - offs[0] != t->numel * ts_dtype_size(t->dtype))
		return ts_err_at(err, TS_EPARSE, name, (int64_t)entry_off, -1,
				 "tensor '%s': %llu bytes for %llu %s elements (want %llu)", t->name,
				 (unsigned long long)(offs[1] - offs[0]), (unsigned long long)t->numel,
				 ts_dtype_name(t->dtype),
				 (unsigned long long)(t->numel * ts_dtype_size(t->dtype)));
	t->data = data + offs[0];
	return 0;
}

int ts_safetensors_parse(struct ts_safetensors *st, const void *buf, size_t n,
			 const char *name, struct ts_err *err)
{
	const unsigned char *p = buf;
	struct ts_json j;
	struct ts_sb key;
	uint64_t hlen = 0;
	int tok, rc = 0;

	if (n < 8)
		return ts_err_at(err, TS_EPARSE, name, 0, -1,
				 "not safetensors: %zu bytes, need an 8-byte header length", n);
	for (int i = 7; i >= 0; i--)
		hlen = hlen << 8 | p[i];
	if (hlen > TS_ST_MAX_HEADER || hlen > n - 8)
		return ts_err_at(err, TS_EPARSE, name, 0, -1,
				 "not safetensors: header length %llu exceeds the file (%zu bytes) "
				 "or the 100 MiB cap", (unsigned long long)hlen, n);
	ts_json_init_mem(&j, p + 8, (size_t)hlen, 0, name);
	ts_sb_init(&key);
	if ((tok = ts_json_next(&j, err)) != TS_JSON_OBJ) {
		rc = tok < 0 ? tok : perr(err, name, &j, "expected a JSON object header");
		goto out;
	}
	while ((tok = ts_json_next(&j, err)) == TS_JSON_KEY) {
		struct ts_tensor_info t;
		ts_sb_reset(&key);
		if (ts_json_unescape(j.s, j.n, 0, &key)) {
			rc = perr(err, name, &j, "bad tensor name");
			goto out;
		}
		if ((tok = ts_json_next(&j, err)) < 0) {
			rc = tok;
			goto out;
		}
		if (strcmp(key.buf, "__metadata__") == 0) {
			if ((rc = ts_json_skip(&j, tok, err)))
				goto out;
			continue;
		}
		if (tok != TS_JSON_OBJ) {
			rc = perr(err, name, &j, "expected a tensor entry object");
			goto out;
		}
		memset(&t, 0, sizeof(t));
		t.name = ts_arena_strndup(&st->arena, key.buf, key.len);
		if (!t.name) {
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = read_entry(&j, &t, p + 8 + hlen, n - 8 - hlen, name, err)))
			goto out;
		if (TS_VEC_PUSH(st->tensors, t)) {
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
			goto out;
		}
	}
	if (tok < 0) {
		rc = tok;
		goto out;
	}
	if (tok != TS_JSON_OBJ_END || (tok = ts_json_next(&j, err)) != TS_JSON_EOF) {
		/* the header may be padded with spaces; anything else is an error */
		rc = tok < 0 ? tok : perr(err, name, &j, "unexpected data after the header object");
		goto out;
	}
	if (st->tensors.n)
		ts_sort(st->tensors.v, st->tensors.n, sizeof(*st->tensors.v), by_name);
	for (size_t i = 1; i < st->tensors.n; i++)
		if (strcmp(st->tensors.v[i - 1].name, st->tensors.v[i].name) == 0) {
			rc = ts_err_at(err, TS_EPARSE, name, 0, -1, "tensor '%s' appears twice",
				       st->tensors.v[i].name);
			goto out;
		}
out:
	/* offsets so far are relative to the header, which starts at byte 8 */
	if (rc && err && err->offset >= 0) {
		err->offset += 8;
		err->line = -1;
	}
	if (rc == TS_ETRUNC) {
		rc = TS_EPARSE;
		if (err)
			err->code = rc;
	}
	ts_sb_release(&key);
	ts_json_release(&j);
	return rc;
}

int ts_safetensors_open(struct ts_safetensors *st, const char *path, struct ts_err *err)
{
	int rc;

	snprintf(st->path, sizeof(st->path), "%s", path);
	if ((rc = ts_input_read_all(&st->in, path, SIZE_MAX, err)))
		return rc;
	return ts_safetensors_parse(st, st->in.data, st->in.len, st->in.path, err);
}

/* ------------------------------------------------------------ values */

static float bits_to_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* IEEE binary16 to float, subnormals included. */
static float half_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;

	if (exp == 0) {
		float v = (float)man * 5.9604644775390625e-8f; /* 2^-24 */
		return sign ? -v : v;
	}
	if (exp == 31)
		return bits_to_f32(sign | 0x7f800000u | (man << 13));
	return bits_to_f32(sign | ((exp + 112) << 23) | (man << 13));
}

double ts_tensor_get(const struct ts_tensor_info *t, uint64_t i)
{
	const unsigned char *p = t->data + i * ts_dtype_size(t->dtype);

	switch (t->dtype) {
	case TS_DT_F64: {
		double d;
		memcpy(&d, p, 8);
		return d;
	}
	case TS_DT_F32: {
		float f;
		memcpy(&f, p, 4);
		return f;
	}
	case TS_DT_F16:
		return half_to_f32((uint16_t)(p[0] | p[1] << 8));
	case TS_DT_BF16:
		return bits_to_f32((uint32_t)(p[0] | p[1] << 8) << 16);
	default:
		return NAN;
	}
}

/* Integer and bool elements as int64 (u64 values above INT64_MAX wrap,
 * which keeps equality exact). */
static int64_t int_get(const struct ts_tensor_info *t, uint64_t i)
{
	size_t sz = ts_dtype_size(t->dtype);
	const unsigned char *p = t->data + i * sz;
	uint64_t u = 0;

	for (size_t k = sz; k-- > 0;)
		u = u << 8 | p[k];
	switch (t->dtype) {
	case TS_DT_I32: return (int32_t)(uint32_t)u;
	case TS_DT_I16: return (int16_t)(uint16_t)u;
	case TS_DT_I8: return (int8_t)(uint8_t)u;
	default: return (int64_t)u;
	}
}

void ts_tensor_default_tol(int dtype, double *rtol, double *atol)
{
	switch (dtype) {
	case TS_DT_BF16: *rtol = 1.6e-2; *atol = 1e-5; break;
	case TS_DT_F16: *rtol = 1e-3; *atol = 1e-5; break;
	case TS_DT_F32: *rtol = 1.3e-6; *atol = 1e-5; break;
	case TS_DT_F64: *rtol = 1e-7; *atol = 1e-7; break;
	default: *rtol = 0; *atol = 0; break;
	}
}

const char *ts_tcmp_status_name(int status)
{
	static const char *const names[] = { "ok", "mismatch", "nan_or_inf", "shape_differs",
					     "missing_in_b", "missing_in_a", "unsupported_dtype" };
	return status >= 0 && status <= TS_TCMP_UNSUPPORTED ? names[status] : "?";
}

static void compare_one(struct ts_tensor_cmp *c, double rtol, double atol)
{
	const struct ts_tensor_info *a = c->a, *b = c->b;
	int fl = is_float(a->dtype) && is_float(b->dtype);

	c->numel = a->numel;
	if (a->ndim != b->ndim || memcmp(a->shape, b->shape, sizeof(a->shape[0]) * (size_t)a->ndim)) {
		c->status = TS_TCMP_SHAPE;
		return;
	}
	if (fl) {
		double ra, aa, rb, ab;
		ts_tensor_default_tol(a->dtype, &ra, &aa);
		ts_tensor_default_tol(b->dtype, &rb, &ab);
		c->rtol = rtol >= 0 ? rtol : (ra > rb ? ra : rb);
		c->atol = atol >= 0 ? atol : (aa > ab ? aa : ab);
		for (uint64_t i = 0; i < a->numel; i++) {
			double x = ts_tensor_get(a, i), y = ts_tensor_get(b, i), d;
			int bad = 0;
			if (isnan(x))
				c->nan_a++, bad = 1;
			else if (isinf(x))
				c->inf_a++, bad = 1;
			if (isnan(y))
				c->nan_b++, bad = 1;
			else if (isinf(y))
				c->inf_b++, bad = 1;
			if (bad)
				continue;
			d = fabs(y - x);
			if (d > c->max_abs) {
				c->max_abs = d;
				c->argmax_abs = i;
			}
			if (x != 0 && d / fabs(x) > c->max_rel)
				c->max_rel = d / fabs(x);
			if (d > c->atol + c->rtol * fabs(x))
				c->mismatched++;
		}
	} else if (!is_float(a->dtype) && !is_float(b->dtype) && a->dtype != TS_DT_F8_E4M3 &&
		   a->dtype != TS_DT_F8_E5M2 && b->dtype != TS_DT_F8_E4M3 &&
		   b->dtype != TS_DT_F8_E5M2) {
		c->rtol = rtol >= 0 ? rtol : 0;
		c->atol = atol >= 0 ? atol : 0;
		for (uint64_t i = 0; i < a->numel; i++) {
			int64_t x = int_get(a, i), y = int_get(b, i);
			double d = fabs((double)y - (double)x);
			if (d > c->max_abs) {
				c->max_abs = d;
				c->argmax_abs = i;
			}
			if (x != 0 && d / fabs((double)x) > c->max_rel)
				c->max_rel = d / fabs((double)x);
			if (d > c->atol + c->rtol * fabs((double)x))
				c->mismatched++;
		}
	} else {
		c->status = TS_TCMP_UNSUPPORTED;
		return;
	}
	if (c->nan_a || c->nan_b || c->inf_a || c->inf_b)
		c->status = TS_TCMP_NONFINITE;
	else if (c->mismatched)
		c->status = TS_TCMP_MISMATCH;
	else
		c->status = TS_TCMP_OK;
}

int ts_tensors_compare(const struct ts_safetensors *a, const struct ts_safetensors *b,
		       double rtol, double atol, struct ts_tensor_cmp **out, size_t *n,
		       size_t *failed)
{
	TS_VEC(struct ts_tensor_cmp) v = { 0 };
	size_t i = 0, k = 0;

	*failed = 0;
	while (i < a->tensors.n || k < b->tensors.n) {
		struct ts_tensor_cmp c;
		int cmp = i >= a->tensors.n ? 1 : k >= b->tensors.n ? -1
			: strcmp(a->tensors.v[i].name, b->tensors.v[k].name);

		memset(&c, 0, sizeof(c));
		if (cmp < 0) {
			c.a = &a->tensors.v[i++];
			c.status = TS_TCMP_ONLY_A;
		} else if (cmp > 0) {
			c.b = &b->tensors.v[k++];
			c.status = TS_TCMP_ONLY_B;
		} else {
			c.a = &a->tensors.v[i++];
			c.b = &b->tensors.v[k++];
		}
		c.name = c.a ? c.a->name : c.b->name;
		c.dtype_a = c.a ? c.a->dtype : TS_DT_UNKNOWN;
		c.dtype_b = c.b ? c.b->dtype : TS_DT_UNKNOWN;
		c.numel = c.a ? c.a->numel : c.b->numel;
		if (c.a && c.b)
			compare_one(&c, rtol, atol);
		if (c.status != TS_TCMP_OK)
			(*failed)++;
		if (TS_VEC_PUSH(v, c)) {
			TS_VEC_RELEASE(v);
			return TS_ENOMEM;
		}
	}
	*out = v.v;
	*n = v.n;
	return 0;
}

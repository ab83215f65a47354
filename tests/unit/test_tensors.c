/* Unit tests for the safetensors reader and the tensor comparison. Files are
 * built here byte by byte from the format definition (8-byte LE header
 * length, JSON header, raw little-endian data). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "trainscope/tensors.h"

struct file {
	unsigned char buf[4096];
	size_t len;
};

/* header JSON + data bytes -> a safetensors image */
static void build(struct file *f, const char *header, const void *data, size_t n)
{
	size_t h = strlen(header);

	for (int i = 0; i < 8; i++)
		f->buf[i] = (unsigned char)((uint64_t)h >> (8 * i));
	memcpy(f->buf + 8, header, h);
	memcpy(f->buf + 8 + h, data, n);
	f->len = 8 + h + n;
}

static int parse(struct ts_safetensors *st, const struct file *f, struct ts_err *err)
{
	ts_safetensors_init(st);
	ts_err_init(err);
	return ts_safetensors_parse(st, f->buf, f->len, "t.safetensors", err);
}

static const struct ts_tensor_cmp *find(const struct ts_tensor_cmp *c, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i].name, name) == 0)
			return &c[i];
	return NULL;
}

TEST(tensors_compare_by_dtype)
{
	/* A: w f32 [2,2] = {1, 2, -3, 0}; h f16 [3] = {1, 1, 1};
	 *    g bf16 [2] = {1, 1}; i i32 [2] = {7, -7}; only_a f32 [1]
	 * B: w = {1, 2.5, -3, 1e-6}; h = {1+2^-10, 1+2^-9, 1};
	 *    g = {1+2^-7, 1}; i = {7, -7}; only_b f32 [1]; n f32 [1] NaN (A: 0) */
	float wa[4] = { 1, 2, -3, 0 }, wb[4] = { 1, 2.5f, -3, 1e-6f };
	uint16_t ha[3] = { 0x3C00, 0x3C00, 0x3C00 }, hb[3] = { 0x3C01, 0x3C02, 0x3C00 };
	uint16_t ga[2] = { 0x3F80, 0x3F80 }, gb[2] = { 0x3F81, 0x3F80 };
	int32_t ia[2] = { 7, -7 }, ib[2] = { 7, -7 };
	float one = 1, zero = 0, nan = NAN;
	unsigned char da[64], db[64];
	struct file fa, fb;
	struct ts_safetensors a, b;
	struct ts_tensor_cmp *cmp = NULL;
	struct ts_err err;
	size_t n = 0, failed = 0;
	const struct ts_tensor_cmp *c;

	/* data layout A: w 0-16, h 16-22, g 22-26, i 26-34, only_a 34-38, n 38-42 */
	memcpy(da, wa, 16);
	memcpy(da + 16, ha, 6);
	memcpy(da + 22, ga, 4);
	memcpy(da + 26, ia, 8);
	memcpy(da + 34, &one, 4);
	memcpy(da + 38, &zero, 4);
	build(&fa, "{\"__metadata__\":{\"format\":\"pt\"},"
		   "\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
		   "\"h\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[16,22]},"
		   "\"g\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[22,26]},"
		   "\"i\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[26,34]},"
		   "\"only_a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[34,38]},"
		   "\"n\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[38,42]}}  ", da, 42);
	memcpy(db, wb, 16);
	memcpy(db + 16, hb, 6);
	memcpy(db + 22, gb, 4);
	memcpy(db + 26, ib, 8);
	memcpy(db + 34, &one, 4);
	memcpy(db + 38, &nan, 4);
	build(&fb, "{\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
		   "\"h\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[16,22]},"
		   "\"g\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[22,26]},"
		   "\"i\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[26,34]},"
		   "\"only_b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[34,38]},"
		   "\"n\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[38,42]}}", db, 42);
	REQUIRE(parse(&a, &fa, &err) == 0);
	REQUIRE(parse(&b, &fb, &err) == 0);
	CHECK_I64(a.tensors.n, 6);
	CHECK_STR(a.tensors.v[0].name, "g"); /* sorted by name */
	REQUIRE(ts_tensors_compare(&a, &b, -1, -1, &cmp, &n, &failed) == 0);
	CHECK_I64(n, 7);
	/* w: |2.5-2| = 0.5 at index 1 fails fp32's 1e-5 + 1.3e-6*2; 1e-6 vs 0 passes atol;
	 * max rel 0.5 / 2 = 0.25 (a = 0 is left out of the relative error) */
	c = find(cmp, n, "w");
	REQUIRE(c);
	CHECK_STR(ts_tcmp_status_name(c->status), "mismatch");
	CHECK_NEAR(c->max_abs, 0.5, 0);
	CHECK_I64(c->argmax_abs, 1);
	CHECK_NEAR(c->max_rel, 0.25, 0);
	CHECK_I64(c->mismatched, 1);
	CHECK_NEAR(c->rtol, 1.3e-6, 0);
	/* h: fp16 1+2^-10 is within 1e-5 + 1e-3; 1+2^-9 (diff 1.953125e-3) is not */
	c = find(cmp, n, "h");
	REQUIRE(c);
	CHECK_I64(c->mismatched, 1);
	CHECK_NEAR(c->max_abs, 1.953125e-3, 0);
	/* g: bf16 1+2^-7 vs 1: diff 7.8125e-3 <= 1e-5 + 1.6e-2 */
	c = find(cmp, n, "g");
	REQUIRE(c);
	CHECK_STR(ts_tcmp_status_name(c->status), "ok");
	CHECK_NEAR(c->max_rel, 7.8125e-3, 0);
	c = find(cmp, n, "i");
	REQUIRE(c);
	CHECK_STR(ts_tcmp_status_name(c->status), "ok");
	c = find(cmp, n, "n");
	REQUIRE(c);
	CHECK_STR(ts_tcmp_status_name(c->status), "nan_or_inf");
	CHECK_I64(c->nan_b, 1);
	CHECK_I64(c->nan_a, 0);
	CHECK_STR(ts_tcmp_status_name(find(cmp, n, "only_a")->status), "missing_in_b");
	CHECK_STR(ts_tcmp_status_name(find(cmp, n, "only_b")->status), "missing_in_a");
	CHECK_I64(failed, 5); /* w, h, n, only_a, only_b */
	free(cmp);
	/* a file compared with itself passes */
	REQUIRE(ts_tensors_compare(&b, &b, -1, -1, &cmp, &n, &failed) == 0);
	CHECK_I64(failed, 1); /* only the NaN tensor */
	free(cmp);
	/* explicit tolerances override the dtype defaults */
	REQUIRE(ts_tensors_compare(&a, &b, 0.3, 0, &cmp, &n, &failed) == 0);
	CHECK_STR(ts_tcmp_status_name(find(cmp, n, "w")->status), "mismatch"); /* 1e-6 vs 0 */
	CHECK_STR(ts_tcmp_status_name(find(cmp, n, "h")->status), "ok");
	free(cmp);
	ts_safetensors_release(&a);
	ts_safetensors_release(&b);
}

TEST(tensors_half_precision_values)
{
	/* IEEE binary16: 0x0001 = 2^-24 (smallest subnormal), 0xC000 = -2,
	 * 0x7C00 = +Inf, 0x7BFF = 65504 (largest normal). bfloat16 0xC0490FDB>>16
	 * = 0xC049 = -3.140625. */
	uint16_t h[4] = { 0x0001, 0xC000, 0x7C00, 0x7BFF }, bf = 0xC049;
	struct ts_tensor_info t = { .dtype = TS_DT_F16, .numel = 4, .data = (unsigned char *)h };

	CHECK_NEAR(ts_tensor_get(&t, 0), 5.9604644775390625e-8, 0);
	CHECK_NEAR(ts_tensor_get(&t, 1), -2.0, 0);
	CHECK(isinf(ts_tensor_get(&t, 2)));
	CHECK_NEAR(ts_tensor_get(&t, 3), 65504.0, 0);
	t.dtype = TS_DT_BF16;
	t.data = (unsigned char *)&bf;
	CHECK_NEAR(ts_tensor_get(&t, 0), -3.140625, 0);
}

TEST(tensors_bad_headers)
{
	struct file f;
	struct ts_safetensors st;
	struct ts_err err;
	unsigned char d[16] = { 0 };

	/* header length beyond the file */
	build(&f, "{}", d, 0);
	f.buf[0] = 200;
	CHECK_I64(parse(&st, &f, &err), TS_EPARSE);
	CHECK(strstr(err.msg, "header length") != NULL);
	ts_safetensors_release(&st);
	/* unknown dtype: the value "F99" starts at header byte 14, file byte 8 + 14 */
	build(&f, "{\"x\":{\"dtype\":\"F99\",\"shape\":[1],\"data_offsets\":[0,4]}}", d, 4);
	CHECK_I64(parse(&st, &f, &err), TS_EPARSE);
	CHECK_I64(err.offset, 8 + 14);
	ts_safetensors_release(&st);
	/* 2 F32 elements need 8 bytes, not 4 */
	build(&f, "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", d, 8);
	CHECK_I64(parse(&st, &f, &err), TS_EPARSE);
	CHECK(strstr(err.msg, "want 8") != NULL);
	ts_safetensors_release(&st);
	/* offsets past the data */
	build(&f, "{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", d, 8);
	CHECK_I64(parse(&st, &f, &err), TS_EPARSE);
	ts_safetensors_release(&st);
	/* truncated JSON, duplicate names, fewer than 8 bytes */
	build(&f, "{\"x\":{\"dtype\":\"F32\"", d, 0);
	CHECK_I64(parse(&st, &f, &err), TS_EPARSE);
	ts_safetensors_release(&st);
	build(&f, "{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
		  "\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", d, 2);
	CHECK_I64(parse(&st, &f, &err), TS_EPARSE);
	CHECK(strstr(err.msg, "twice") != NULL);
	ts_safetensors_release(&st);
	f.len = 5;
	CHECK_I64(parse(&st, &f, &err), TS_EPARSE);
	ts_safetensors_release(&st);
	/* shape overflow */
	build(&f, "{\"x\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296,16],\"data_offsets\":[0,8]}}", d, 8);
	CHECK_I64(parse(&st, &f, &err), TS_EPARSE);
	ts_safetensors_release(&st);
	ts_safetensors_init(&st);
	CHECK_I64(ts_safetensors_open(&st, "/nonexistent/x.safetensors", &err), TS_EIO);
	ts_safetensors_release(&st);
}

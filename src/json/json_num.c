/*
 * json_num.c - exact number conversion and string unescaping.
 *
 * Kineto prints timestamps like 1712195495519689.047 (microseconds with a
 * nanosecond fraction): 19 significant digits, more than a double holds.
 * These helpers convert number text straight to scaled integers so that
 * nanoseconds stay exact.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/json.h"

int ts_num_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0)
		return TS_EPARSE;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return TS_EPARSE;
		if (v > (UINT64_MAX - d) / 10)
			return TS_ELIMIT;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int ts_num_i64(const char *s, size_t n, int64_t *out)
{
	uint64_t v;
	int neg = n > 0 && s[0] == '-';
	int rc = ts_num_u64(s + neg, n - (size_t)neg, &v);

	if (rc)
		return rc;
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1)
			return TS_ELIMIT;
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > (uint64_t)INT64_MAX)
			return TS_ELIMIT;
		*out = (int64_t)v;
	}
	return 0;
}

typedef unsigned __int128 u128;

static u128 pow10_u128(int e)
{
	u128 p = 1;

	while (e-- > 0)
		p *= 10;
	return p;
}

int ts_num_fixed(const char *s, size_t n, int scale, int64_t *out)
{
	size_t i = 0;
	int neg = 0, frac_digits = 0, sig = 0, any = 0;
	long exp10 = 0;
	u128 mant = 0;
	int dropped_int = 0; /* integer digits beyond precision */

	if (i < n && (s[i] == '-' || s[i] == '+')) {
		neg = s[i] == '-';
		i++;
	}
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		any = 1;
		if (sig < 36) {
			mant = mant * 10 + (unsigned)(s[i] - '0');
			if (mant)
				sig++;
		} else {
			dropped_int++;
		}
	}
	if (i < n && s[i] == '.') {
		i++;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			any = 1;
			if (sig < 36) {
				mant = mant * 10 + (unsigned)(s[i] - '0');
				frac_digits++;
				if (mant)
					sig++;
			}
		}
	}
	if (!any)
		return TS_EPARSE;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		int eneg = 0;
		long e = 0;
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+')) {
			eneg = s[i] == '-';
			i++;
		}
		if (i >= n)
			return TS_EPARSE;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (e < 100000)
				e = e * 10 + (s[i] - '0');
		exp10 = eneg ? -e : e;
	}
	if (i != n)
		return TS_EPARSE;

	long e = exp10 + scale - frac_digits + dropped_int;
	u128 v;
	if (mant == 0) {
		v = 0;
	} else if (e >= 0) {
		if (e > 19)
			return TS_ELIMIT;
		u128 p = pow10_u128((int)e);
		if (mant > ((u128)1 << 64) / p)
			return TS_ELIMIT;
		v = mant * p;
	} else if (e < -38) {
		v = 0;
	} else {
		u128 p = pow10_u128((int)-e);
		u128 q = mant / p, r = mant % p;
		if (r * 2 >= p)
			q++;
		v = q;
	}
	if (neg) {
		if (v > (u128)INT64_MAX + 1)
			return TS_ELIMIT;
		*out = v == (u128)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > (u128)INT64_MAX)
			return TS_ELIMIT;
		*out = (int64_t)v;
	}
	return 0;
}

/* RFC 8259 number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
 * (strtod alone would also take hex, "inf", "nan" and leading spaces). */
static int json_number_text(const char *s, size_t n)
{
	size_t i = 0, d;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0') {
		i++;
	} else {
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	if (i < n && s[i] == '.') {
		for (d = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	return i == n;
}

int ts_num_f64(const char *s, size_t n, double *out)
{
	char stack[128];
	char *buf = stack, *end;
	int rc = 0;

	if (n == 3 && memcmp(s, "NaN", 3) == 0) {
		*out = NAN;
		return 0;
	}
	if (n == 8 && memcmp(s, "Infinity", 8) == 0) {
		*out = INFINITY;
		return 0;
	}
	if (n == 9 && memcmp(s, "-Infinity", 9) == 0) {
		*out = -INFINITY;
		return 0;
	}
	if (!json_number_text(s, n))
		return TS_EPARSE;
	if (n >= sizeof(stack)) {
		buf = malloc(n + 1);
		if (!buf)
			return TS_ENOMEM;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*out = strtod(buf, &end);
	if (end != buf + n)
		rc = TS_EPARSE;
	if (buf != stack)
		free(buf);
	return rc;
}

static void put_utf8(struct ts_sb *out, uint32_t cp)
{
	char b[4];

	if (cp < 0x80) {
		ts_sb_addc(out, (char)cp);
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		ts_sb_add(out, b, 2);
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		ts_sb_add(out, b, 3);
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		ts_sb_add(out, b, 4);
	}
}

static int hex4(const char *s, size_t n, size_t i, uint32_t *out)
{
	uint32_t v = 0;

	if (i + 4 > n)
		return -1;
	for (size_t k = 0; k < 4; k++) {
		char c = s[i + k];
		int d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v * 16 + (uint32_t)d;
	}
	*out = v;
	return 0;
}

int ts_json_unescape(const char *s, size_t n, int lenient, struct ts_sb *out)
{
	size_t i = 0;

	while (i < n) {
		const char *bs = memchr(s + i, '\\', n - i);
		size_t plain = bs ? (size_t)(bs - (s + i)) : n - i;
		ts_sb_add(out, s + i, plain);
		i += plain;
		if (i >= n)
			break;
		if (i + 1 >= n) {
			if (!lenient)
				return TS_EPARSE;
			ts_sb_addc(out, '\\');
			break;
		}
		char e = s[i + 1];
		const char *simple = "\"\\/bfnrt";
		const char *map = "\"\\/\b\f\n\r\t";
		const char *hit = e ? strchr(simple, e) : NULL;
		if (hit) {
			ts_sb_addc(out, map[hit - simple]);
			i += 2;
			continue;
		}
		if (e == 'u') {
			uint32_t cp, lo;
			if (hex4(s, n, i + 2, &cp)) {
				if (!lenient)
					return TS_EPARSE;
				ts_sb_add(out, s + i, 2);
				i += 2;
				continue;
			}
			i += 6;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (i + 1 < n && s[i] == '\\' && s[i + 1] == 'u' &&
				    hex4(s, n, i + 2, &lo) == 0 && lo >= 0xdc00 && lo <= 0xdfff) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					i += 6;
				} else {
					if (!lenient)
						return TS_EPARSE;
					cp = 0xfffd;
				}
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				if (!lenient)
					return TS_EPARSE;
				cp = 0xfffd;
			}
			put_utf8(out, cp);
			continue;
		}
		if (!lenient)
			return TS_EPARSE;
		ts_sb_add(out, s + i, 2);
		i += 2;
	}
	return out->failed ? TS_ENOMEM : 0;
}

/*
 * sanitize.c - make text safe to print on a terminal (see sanitize.h).
 */
#include <string.h>
#include "trainscope/sanitize.h"
#include "trainscope/utf8.h"

/* Length of an SGR sequence ESC [ [0-9;]* m at p, else 0. */
static size_t sgr_len(const unsigned char *p, size_t n)
{
	size_t k = 2;

	if (n < 3 || p[0] != 0x1b || p[1] != '[')
		return 0;
	while (k < n && k < 16 && ((p[k] >= '0' && p[k] <= '9') || p[k] == ';'))
		k++;
	return k < n && p[k] == 'm' ? k + 1 : 0;
}

static int bidi(uint32_t cp)
{
	return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* Bytes of the unit at p that can be copied as is; 0 when it must be
 * replaced (*cp is then the code point, or UINT32_MAX for a bad byte). */
static size_t clean_unit(const unsigned char *p, size_t n, int keep_sgr, uint32_t *cp)
{
	int len;

	if (p[0] >= 0x20 && p[0] < 0x7f)
		return 1;
	if (p[0] == '\n' || p[0] == '\t')
		return 1;
	if (p[0] == 0x1b && keep_sgr) {
		size_t s = sgr_len(p, n);
		if (s)
			return s;
	}
	len = ts_utf8_seq(p, n, cp);
	if (!len) {
		*cp = UINT32_MAX;
		return 0;
	}
	if (*cp < 0x20 || *cp == 0x7f || (*cp >= 0x80 && *cp <= 0x9f) || bidi(*cp))
		return 0;
	return (size_t)len;
}

int ts_text_is_clean(const char *s, size_t n, int keep_sgr)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	uint32_t cp;

	while (i < n) {
		size_t k = clean_unit(p + i, n - i, keep_sgr, &cp);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

void ts_text_sanitize(struct ts_sb *out, const char *s, size_t n, int keep_sgr)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;
	uint32_t cp;

	while (i < n) {
		size_t k = clean_unit(p + i, n - i, keep_sgr, &cp);
		if (k) {
			i += k;
			run += k;
			continue;
		}
		ts_sb_add(out, p + i - run, run);
		run = 0;
		if (cp == UINT32_MAX || cp < 0x80) {
			char e[4] = { '\\', 'x', hex[p[i] >> 4], hex[p[i] & 15] };
			ts_sb_add(out, e, 4);
			i++;
		} else {
			char e[6] = { '\\', 'u', hex[cp >> 12 & 15], hex[cp >> 8 & 15],
				      hex[cp >> 4 & 15], hex[cp & 15] };
			ts_sb_add(out, e, 6);
			i += cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
		}
	}
	ts_sb_add(out, p + i - run, run);
}

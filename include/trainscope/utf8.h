/*
 * utf8.h - strict UTF-8 decoding of one sequence (RFC 3629).
 *
 * Used by the JSON writer (invalid bytes become U+FFFD) and the text
 * sanitiser. Valid: U+0000..U+D7FF and U+E000..U+10FFFF in the shortest
 * form; lead bytes C0, C1 and F5..FF, overlong forms, surrogates
 * (ED A0..BF) and code points above U+10FFFF (F4 90..) are invalid.
 */
#ifndef TRAINSCOPE_UTF8_H
#define TRAINSCOPE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length (1..4) of the valid sequence at p[0..n), its code point in *cp;
 * 0 when p[0] does not start a valid sequence (or n is 0). */
static inline int ts_utf8_seq(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned c;
	int len;
	uint32_t v, min;

	if (!n)
		return 0;
	c = p[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2; v = c & 0x1f; min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3; v = c & 0x0f; min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4; v = c & 0x07; min = 0x10000;
	} else {
		return 0; /* 80..C1 (continuation, overlong 2-byte) and F5..FF */
	}
	if ((size_t)len > n)
		return 0;
	for (int k = 1; k < len; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[k] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

#endif

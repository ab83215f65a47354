/*
 * oracle.h - output properties every fuzz target asserts (issue 21), kept
 * independent of the code under test: the UTF-8 check below is written
 * from the table of well-formed byte sequences (Unicode 15, table 3-7), not
 * from src/, so a bug in ts_utf8_seq or the JSON writer cannot hide itself.
 *
 *   oracle_utf8(s, n)   valid UTF-8 (no overlongs, surrogates, > U+10FFFF)
 *   oracle_json(s, n)   valid UTF-8, no raw control byte except \n between
 *                       tokens, strings closed, brackets balanced
 *   oracle_text(s, n)   what the sanitiser makes of s is valid UTF-8 with
 *                       only \n and \t as controls (no ESC, C1 or bidi)
 *   oracle_share(x)     a share in [0, 1] (or NaN for "not known")
 * Each aborts (a libFuzzer crash with the input saved) on failure.
 */
#ifndef TS_FUZZ_ORACLE_H
#define TS_FUZZ_ORACLE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "trainscope/core.h"
#include "trainscope/sanitize.h"

/* Table 3-7: first byte range, then the allowed range of each next byte. */
static inline size_t oracle_seq(const unsigned char *p, size_t n)
{
	static const struct { unsigned char lo, hi, n, r[3][2]; } t[] = {
		{ 0x00, 0x7f, 1, { { 0, 0 } } },
		{ 0xc2, 0xdf, 2, { { 0x80, 0xbf } } },
		{ 0xe0, 0xe0, 3, { { 0xa0, 0xbf }, { 0x80, 0xbf } } },
		{ 0xe1, 0xec, 3, { { 0x80, 0xbf }, { 0x80, 0xbf } } },
		{ 0xed, 0xed, 3, { { 0x80, 0x9f }, { 0x80, 0xbf } } },
		{ 0xee, 0xef, 3, { { 0x80, 0xbf }, { 0x80, 0xbf } } },
		{ 0xf0, 0xf0, 4, { { 0x90, 0xbf }, { 0x80, 0xbf }, { 0x80, 0xbf } } },
		{ 0xf1, 0xf3, 4, { { 0x80, 0xbf }, { 0x80, 0xbf }, { 0x80, 0xbf } } },
		{ 0xf4, 0xf4, 4, { { 0x80, 0x8f }, { 0x80, 0xbf }, { 0x80, 0xbf } } },
	};
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		if (p[0] < t[k].lo || p[0] > t[k].hi)
			continue;
		if (n < t[k].n)
			return 0;
		for (unsigned i = 1; i < t[k].n; i++)
			if (p[i] < t[k].r[i - 1][0] || p[i] > t[k].r[i - 1][1])
				return 0;
		return t[k].n;
	}
	return 0;
}

static inline void oracle_utf8(const void *s, size_t n)
{
	const unsigned char *p = s;

	for (size_t i = 0; i < n;) {
		size_t k = oracle_seq(p + i, n - i);
		if (!k)
			abort();
		i += k;
	}
}

static inline void oracle_json(const void *s, size_t n)
{
	const unsigned char *p = s;
	int in_str = 0, esc = 0;
	long depth = 0;

	oracle_utf8(s, n);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];
		if (in_str) {
			if (c < 0x20)
				abort(); /* a raw control inside a string */
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c < 0x20 && c != '\n')
			abort();
		if (c == '"')
			in_str = 1;
		else if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']')
			depth--;
		if (depth < 0)
			abort();
	}
	if (in_str || depth != 0)
		abort();
}

static inline void oracle_text(const void *s, size_t n)
{
	struct ts_sb sb;

	ts_sb_init(&sb);
	ts_text_sanitize(&sb, s, n, 0);
	if (!sb.failed) {
		const unsigned char *p = (const unsigned char *)sb.buf;
		oracle_utf8(p, sb.len);
		for (size_t i = 0; i < sb.len; i++) {
			if ((p[i] < 0x20 && p[i] != '\n' && p[i] != '\t') || p[i] == 0x7f)
				abort();
			if (p[i] == 0xc2 && i + 1 < sb.len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
				abort(); /* C1 */
			if (p[i] == 0xe2 && i + 2 < sb.len && p[i + 1] == 0x80 &&
			    p[i + 2] >= 0xaa && p[i + 2] <= 0xae)
				abort(); /* bidi embedding / override */
		}
	}
	ts_sb_release(&sb);
}

static inline void oracle_share(double x)
{
	if (!isnan(x) && !(x >= 0.0 && x <= 1.0 + 1e-9))
		abort();
}

#endif

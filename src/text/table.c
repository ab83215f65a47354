/*
 * table.c - the one table printer.
 *
 * Cells are formatted into an arena as they come; widths are computed at
 * render time so a table can be filled in one pass over the data.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/table.h"
#include "trainscope/sanitize.h"

void ts_table_init(struct ts_table *t)
{
	memset(t, 0, sizeof(*t));
	ts_arena_init(&t->arena);
}

void ts_table_release(struct ts_table *t)
{
	free(t->cells);
	ts_arena_release(&t->arena);
	memset(t, 0, sizeof(*t));
}

int ts_table_col(struct ts_table *t, const char *name, const char *unit,
		 enum ts_align align, int max_width)
{
	if (t->ncols >= TS_TABLE_MAX_COLS)
		return TS_ELIMIT;
	t->name[t->ncols] = name;
	t->unit[t->ncols] = unit;
	t->align[t->ncols] = align;
	t->max_width[t->ncols] = max_width;
	return t->ncols++;
}

/* Append a copy of s[0..n) as the next cell. */
static int push_cell(struct ts_table *t, const char *s, size_t n)
{
	char *cell = ts_arena_alloc(&t->arena, n + 1);

	if (!cell)
		return TS_ENOMEM;
	memcpy(cell, s, n);
	cell[n] = 0;
	if (ts_grow((void **)&t->cells, &t->cap, t->ncells + 1, sizeof(*t->cells)))
		return TS_ENOMEM;
	t->cells[t->ncells++] = cell;
	return 0;
}

int ts_table_cell_text(struct ts_table *t, const char *s, size_t n)
{
	struct ts_sb sb;
	int rc;

	if (ts_text_is_clean(s, n, 0) && !memchr(s, '\n', n) && !memchr(s, '\t', n))
		return push_cell(t, s, n);
	ts_sb_init(&sb);
	/* a cell is one line: newlines and tabs are shown escaped too */
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n' || s[i] == '\t') {
			ts_text_sanitize(&sb, s, i, 0);
			ts_sb_adds(&sb, s[i] == '\n' ? "\\x0a" : "\\x09");
			s += i + 1;
			n -= i + 1;
			i = (size_t)-1;
		}
	}
	ts_text_sanitize(&sb, s, n, 0);
	rc = sb.failed ? TS_ENOMEM : push_cell(t, sb.buf, sb.len);
	ts_sb_release(&sb);
	return rc;
}

int ts_table_cell(struct ts_table *t, const char *fmt, ...)
{
	va_list ap;
	char small[256];
	int n;
	char *cell;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return TS_EINTERNAL;
	if ((size_t)n < sizeof(small))
		return push_cell(t, small, (size_t)n);
	cell = ts_arena_alloc(&t->arena, (size_t)n + 1);
	if (!cell)
		return TS_ENOMEM;
	va_start(ap, fmt);
	vsnprintf(cell, (size_t)n + 1, fmt, ap);
	va_end(ap);
	if (ts_grow((void **)&t->cells, &t->cap, t->ncells + 1, sizeof(*t->cells)))
		return TS_ENOMEM;
	t->cells[t->ncells++] = cell;
	return 0;
}

/* Write the decimal digits of q to end in the bytes before it; return the first. */
static char *put_u64(char *end, uint64_t q)
{
	do {
		*--end = (char)('0' + q % 10);
		q /= 10;
	} while (q);
	return end;
}

int ts_table_cell_fixed(struct ts_table *t, double v, int decimals)
{
	static const double scale[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };
	char buf[48], *end = buf + sizeof(buf), *s = end;
	double a = fabs(v), p, e, f, tie;
	uint64_t q, unit;

	if (decimals < 0 || decimals > 6 || !(a < 0x1p52 / scale[decimals]))
		return ts_table_cell(t, "%.*f", decimals, v);
	/* a * 10^d is exactly p + e (fma gives the product's rounding error);
	 * p < 2^52, so f = floor(p) and p - f - 0.5 are exact too, and the sign
	 * of (p - f - 0.5) + e, a correctly rounded sum, is that of the exact
	 * value's distance to the midpoint between f and f + 1. */
	p = a * scale[decimals];
	e = fma(a, scale[decimals], -p);
	f = floor(p);
	tie = (p - f - 0.5) + e;
	q = (uint64_t)f;
	if (tie > 0 || (tie == 0 && q % 2))
		q++;
	unit = (uint64_t)scale[decimals];
	if (decimals) {
		uint64_t frac = q % unit;

		for (int i = 0; i < decimals; i++) {
			*--s = (char)('0' + frac % 10);
			frac /= 10;
		}
		*--s = '.';
	}
	s = put_u64(s, q / unit);
	if (signbit(v))
		*--s = '-';
	return push_cell(t, s, (size_t)(end - s));
}

int ts_table_cell_i64(struct ts_table *t, long long v)
{
	char buf[24], *end = buf + sizeof(buf), *s;
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	s = put_u64(end, m);
	if (v < 0)
		*--s = '-';
	return push_cell(t, s, (size_t)(end - s));
}

size_t ts_utf8_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

/* Byte length of the first `width` code points of s. */
static size_t utf8_prefix(const char *s, size_t width)
{
	size_t i = 0, w = 0;

	while (s[i]) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (w == width)
				break;
			w++;
		}
		i++;
	}
	return i;
}

static void header_text(const struct ts_table *t, int c, char *buf, size_t size)
{
	if (t->unit[c] && t->unit[c][0])
		snprintf(buf, size, "%s (%s)", t->name[c], t->unit[c]);
	else
		snprintf(buf, size, "%s", t->name[c]);
}

static size_t cell_width(const struct ts_table *t, int c, const char *s)
{
	size_t w = ts_utf8_width(s);

	if (t->max_width[c] > 3 && w > (size_t)t->max_width[c])
		w = (size_t)t->max_width[c];
	return w;
}

static void put_cell(struct ts_sb *out, const struct ts_table *t, int c,
		     const char *s, size_t width, int last)
{
	size_t w = ts_utf8_width(s);
	size_t shown = w;
	int cut = 0;

	if (t->max_width[c] > 3 && w > (size_t)t->max_width[c]) {
		shown = (size_t)t->max_width[c];
		cut = 1;
	}
	if (t->align[c] == TS_RIGHT)
		ts_sb_pad(out, ' ', width - shown);
	if (cut) {
		ts_sb_add(out, s, utf8_prefix(s, shown - 3));
		ts_sb_adds(out, "...");
	} else {
		ts_sb_adds(out, s);
	}
	if (t->align[c] == TS_LEFT && !last)
		ts_sb_pad(out, ' ', width - shown);
}

void ts_table_render(const struct ts_table *t, struct ts_sb *out, int indent)
{
	size_t width[TS_TABLE_MAX_COLS];
	char head[TS_TABLE_MAX_COLS][128];
	size_t nrows = t->ncols ? t->ncells / (size_t)t->ncols : 0;

	for (int c = 0; c < t->ncols; c++) {
		header_text(t, c, head[c], sizeof(head[c]));
		width[c] = ts_utf8_width(head[c]);
	}
	for (size_t r = 0; r < nrows; r++)
		for (int c = 0; c < t->ncols; c++) {
			size_t w = cell_width(t, c, t->cells[r * (size_t)t->ncols + (size_t)c]);
			if (w > width[c])
				width[c] = w;
		}
	ts_sb_pad(out, ' ', (size_t)indent);
	for (int c = 0; c < t->ncols; c++) {
		if (c)
			ts_sb_adds(out, "  ");
		put_cell(out, t, c, head[c], width[c], c == t->ncols - 1);
	}
	ts_sb_addc(out, '\n');
	ts_sb_pad(out, ' ', (size_t)indent);
	for (int c = 0; c < t->ncols; c++) {
		if (c)
			ts_sb_adds(out, "  ");
		ts_sb_pad(out, '-', width[c]);
	}
	ts_sb_addc(out, '\n');
	for (size_t r = 0; r < nrows; r++) {
		ts_sb_pad(out, ' ', (size_t)indent);
		for (int c = 0; c < t->ncols; c++) {
			if (c)
				ts_sb_adds(out, "  ");
			put_cell(out, t, c, t->cells[r * (size_t)t->ncols + (size_t)c],
				 width[c], c == t->ncols - 1);
		}
		ts_sb_addc(out, '\n');
	}
}

void ts_fmt_pct(char *buf, size_t n, double pct)
{
	if (pct == 0 || fabs(pct) >= 0.995 || !isfinite(pct))   /* 0.996: "1.0", not "1" */
		snprintf(buf, n, "%.1f", pct);
	else
		snprintf(buf, n, "%.2g", pct);
}

/*
 * table.h - aligned text tables with units in the header.
 *
 * Every terminal table in trainscope is built here so alignment, unit
 * display and truncation of long names behave the same everywhere. A
 * header reads "name (unit)"; numbers are right-aligned, text left-aligned;
 * widths are counted in UTF-8 code points.
 */
#ifndef TRAINSCOPE_TABLE_H
#define TRAINSCOPE_TABLE_H

#include <stddef.h>
#include "trainscope/core.h"

#define TS_TABLE_MAX_COLS 24

enum ts_align { TS_LEFT = 0, TS_RIGHT = 1 };

struct ts_table {
	int ncols;
	const char *name[TS_TABLE_MAX_COLS];
	const char *unit[TS_TABLE_MAX_COLS];
	int align[TS_TABLE_MAX_COLS];
	int max_width[TS_TABLE_MAX_COLS]; /* 0 = no limit; longer cells end in "..." */
	char **cells;                     /* row-major, ncols per row */
	size_t ncells;
	size_t cap;
	struct ts_arena arena;
};

void ts_table_init(struct ts_table *t);
void ts_table_release(struct ts_table *t);

/* Add a column (before the first cell). unit may be NULL. Strings must
 * outlive the table (literals). Returns the column index or TS_ELIMIT. */
int ts_table_col(struct ts_table *t, const char *name, const char *unit,
		 enum ts_align align, int max_width);

/* Append the next cell, row by row. Returns 0 or TS_ENOMEM. */
int ts_table_cell(struct ts_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Append s[0..n) (names, any bytes: NULs, escapes, bad UTF-8) as the next
 * cell, passed through ts_text_sanitize so widths count what is shown. */
int ts_table_cell_text(struct ts_table *t, const char *s, size_t n);

/*
 * Append a number as ts_table_cell(t, "%.*f", decimals, v) would, byte for
 * byte (rounding half to even on the exact binary value, "-" for a
 * negative sign including -0, "nan"/"inf" as printf writes them), but
 * without printf for the common case: long tables of step times spent
 * most of their output time in printf's float conversion. The rounding is
 * that of the default floating-point environment. Returns 0 or TS_ENOMEM.
 */
int ts_table_cell_fixed(struct ts_table *t, double v, int decimals);

/* Append an integer cell, as ts_table_cell(t, "%lld", v) would. */
int ts_table_cell_i64(struct ts_table *t, long long v);

/* Render with `indent` leading spaces, header, a rule, then the rows. */
void ts_table_render(const struct ts_table *t, struct ts_sb *out, int indent);

/* A percentage for display: one decimal from 1 % up (and 0), two
 * significant digits below ("0.055", not a "0.1" that nearly doubles it). */
void ts_fmt_pct(char *buf, size_t n, double pct);

/* Display width of s in code points. */
size_t ts_utf8_width(const char *s);

#endif

/*
 * jsonw.h - deterministic JSON writer.
 *
 * Writes into a ts_sb: same calls, same bytes. Keys are written in the
 * order given (callers keep a fixed order); strings are escaped per RFC
 * 8259 with invalid UTF-8 replaced by U+FFFD so the output is always valid
 * JSON; doubles use the shortest "%.17g"-class form that round-trips, and
 * NaN/Inf become null. Output is indented by two spaces per level when
 * `pretty` is set.
 */
#ifndef TRAINSCOPE_JSONW_H
#define TRAINSCOPE_JSONW_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"

#define TS_JW_MAX_DEPTH 64

struct ts_jw {
	struct ts_sb *out;
	int pretty;
	int depth;
	int first[TS_JW_MAX_DEPTH]; /* no member written yet at this level */
	int after_key;
};

void ts_jw_init(struct ts_jw *w, struct ts_sb *out, int pretty);

void ts_jw_obj(struct ts_jw *w);      /* { */
void ts_jw_obj_end(struct ts_jw *w);  /* } */
void ts_jw_arr(struct ts_jw *w);      /* [ */
void ts_jw_arr_end(struct ts_jw *w);  /* ] */
void ts_jw_key(struct ts_jw *w, const char *key);
void ts_jw_str(struct ts_jw *w, const char *s);
void ts_jw_strn(struct ts_jw *w, const char *s, size_t n);
void ts_jw_i64(struct ts_jw *w, int64_t v);
void ts_jw_f64(struct ts_jw *w, double v);
/* v rounded to `decimals` places, trailing zeros kept ("%.*f"). */
void ts_jw_fixed(struct ts_jw *w, double v, int decimals);
void ts_jw_bool(struct ts_jw *w, int v);
void ts_jw_null(struct ts_jw *w);
/* The one JSON value in doc[0..n) (RFC 8259, nothing after it), re-written
 * in this writer's layout: keys and strings re-escaped, numbers as written.
 * 0; TS_EPARSE or TS_ETRUNC when doc is not one JSON value and TS_ELIMIT
 * when it nests past TS_JW_MAX_DEPTH, both with nothing written; TS_ENOMEM
 * part-way. */
int ts_jw_json(struct ts_jw *w, const char *doc, size_t n);

/* key + value shorthands */
void ts_jw_kstr(struct ts_jw *w, const char *key, const char *s);
void ts_jw_ki64(struct ts_jw *w, const char *key, int64_t v);
void ts_jw_kf64(struct ts_jw *w, const char *key, double v);
void ts_jw_kbool(struct ts_jw *w, const char *key, int v);
/* key + value, or key + null: v when have is non-zero (i64), when v is
 * finite (f64, fixed with decimals places). */
void ts_jw_ki64_or_null(struct ts_jw *w, const char *key, int64_t v, int have);
void ts_jw_kf64_or_null(struct ts_jw *w, const char *key, double v);
void ts_jw_kfixed_or_null(struct ts_jw *w, const char *key, double v, int decimals);

/* Unknown integer (also in logs.h; identical definition). */
#define TS_NO_INT INT64_MIN

/* ------------------------------------------------------------ warnings */


/* One warning. code is a stable kebab-case word listed in
 * docs/warnings.md; message is a sentence (it names the file itself when
 * the warning is about one). */
struct ts_warning {
	const char *code;
	const char *message;
	const char *file;       /* NULL when not about one file */
	int64_t offset;         /* byte offset in file, -1 unknown */
	int64_t iteration;      /* TS_NO_INT when not about one iteration */
	int64_t line;           /* 1-based line in file, 0 unknown (the JSON
				 * "line" key is written only when known) */
};

struct ts_warnings {
	TS_VEC(struct ts_warning) v;
	struct ts_arena arena;  /* the strings */
	int failed;             /* sticky: an add ran out of memory */
};

void ts_warnings_init(struct ts_warnings *w);
void ts_warnings_release(struct ts_warnings *w);

/* Append a warning (code and file are copied; line 0). Returns 0 or
 * TS_ENOMEM (also sets w->failed). */
int ts_warnings_add(struct ts_warnings *w, const char *code, const char *file, int64_t offset,
		    int64_t iteration, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Write key "warnings" and the array of the first n warnings
 * ({code, message, file, byte_offset, iteration}; unknowns null; then
 * "line" when the warning has one). The one writer of every command's
 * "warnings" array. */
void ts_warnings_json(struct ts_jw *jw, const struct ts_warnings *w, size_t n);

/* One line per warning of the first n: "warning: MESSAGE\n", or
 * "warning: MESSAGE (line N)\n" when it has a line (prefix and suffix
 * around "warning:", e.g. colour codes; may be ""). */
void ts_warnings_text(struct ts_sb *out, const struct ts_warnings *w, size_t n,
		      const char *pre, const char *post);

/* Append s escaped as a JSON string body (no quotes) to out. */
void ts_json_escape(struct ts_sb *out, const char *s, size_t n);

/* Shortest decimal text of v that reads back to v ("null" for NaN/Inf). */
void ts_fmt_f64(char *buf, size_t size, double v);

#endif

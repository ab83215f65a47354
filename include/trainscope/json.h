/*
 * json.h - streaming JSON pull tokenizer and number/string helpers.
 *
 * The tokenizer hands out one token per call as a zero-copy view into the
 * input window: for strings the raw bytes between the quotes (still
 * escaped; `escaped` says whether any backslash occurs), for numbers the
 * number text. Keys are handed out decoded (a key written with escapes,
 * "n\u0061me", reads as "name", in a buffer of the tokenizer's own), so
 * that comparing a key with a literal follows JSON, not its spelling. A
 * view is valid until the next ts_json_next() call.
 *
 * Grammar is RFC 8259 plus, by flag: NaN / Infinity / -Infinity tokens,
 * lenient strings (invalid UTF-8 and raw control characters accepted), and
 * a sequence of top-level values (JSON Lines / concatenated JSON).
 *
 * Errors carry the absolute byte offset (and line when the input is in
 * memory). End of input inside a value is reported as TS_ETRUNC, distinct
 * from a syntax error, so callers can keep what was complete.
 */
#ifndef TRAINSCOPE_JSON_H
#define TRAINSCOPE_JSON_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/input.h"

enum ts_json_tok {
	TS_JSON_EOF = 0,  /* end of input after complete value(s) */
	TS_JSON_OBJ,      /* { */
	TS_JSON_OBJ_END,  /* } */
	TS_JSON_ARR,      /* [ */
	TS_JSON_ARR_END,  /* ] */
	TS_JSON_KEY,      /* object key (view) */
	TS_JSON_STR,      /* string value (view) */
	TS_JSON_NUM,      /* number (view of its text; NaN/Infinity with flag) */
	TS_JSON_TRUE,
	TS_JSON_FALSE,
	TS_JSON_NULL
};

enum ts_json_flags {
	TS_JSON_ALLOW_NAN = 1 << 0, /* NaN, Infinity, -Infinity as numbers */
	TS_JSON_LENIENT = 1 << 1,   /* invalid UTF-8 / raw control chars in strings */
	TS_JSON_MULTI = 1 << 2      /* several top-level values (JSON Lines) */
};

#define TS_JSON_MAX_DEPTH 1024

struct ts_json {
	/* last token's view */
	const char *s;
	size_t n;
	int escaped;         /* STR: a backslash occurs in the body (KEY: always 0) */
	int bad_text;        /* KEY/STR: invalid UTF-8 or raw control (lenient) */
	uint64_t tok_offset; /* absolute offset of the last token */
	int depth;           /* containers open after the last token */

	/* private */
	struct ts_input *in;
	struct ts_input own;
	size_t pos;          /* cursor in in->data */
	int flags;
	int state;
	int top_done;
	uint64_t stack[TS_JSON_MAX_DEPTH / 64];
	struct ts_sb key;    /* the last key, decoded, when it had escapes */
};

/* Tokenize a memory buffer (not copied; must outlive j). name is for errors. */
void ts_json_init_mem(struct ts_json *j, const void *data, size_t n, int flags,
		      const char *name);
/* Tokenize an opened input (owned by the caller). */
void ts_json_init_input(struct ts_json *j, struct ts_input *in, int flags);
void ts_json_release(struct ts_json *j);

/*
 * Next token: returns an enum ts_json_tok (TS_JSON_EOF at the end), or a
 * negative code: TS_EPARSE (err says what was expected, where), TS_ETRUNC
 * (input ended inside a value), TS_ELIMIT (nesting deeper than
 * TS_JSON_MAX_DEPTH), TS_EIO/TS_ENOMEM from the input.
 */
int ts_json_next(struct ts_json *j, struct ts_err *err);

/*
 * Skip the value whose first token `tok` was just returned (a scalar is
 * already complete; a container is consumed up to its end). Returns 0 or a
 * negative code as ts_json_next.
 */
int ts_json_skip(struct ts_json *j, int tok, struct ts_err *err);

/* Absolute offset of the tokenizer's cursor (bytes consumed so far). */
uint64_t ts_json_offset(const struct ts_json *j);

/* Line (1-based) of an absolute offset, or -1 when it is no longer in memory. */
int64_t ts_json_line_of(const struct ts_json *j, uint64_t offset);

/* 1 if the last KEY/STR view equals the literal (a key decoded, a string's
 * raw bytes). */
static inline int ts_json_is(const struct ts_json *j, const char *lit, size_t litlen)
{
	return j->n == litlen && __builtin_memcmp(j->s, lit, litlen) == 0;
}
#define TS_JSON_IS(j, lit) ts_json_is((j), (lit), sizeof(lit) - 1)

/* ---------------------------------------------------------------- numbers */

/* Parse an integer number text (no fraction/exponent). TS_EPARSE if it is
 * not an integer, TS_ELIMIT if it does not fit. */
int ts_num_i64(const char *s, size_t n, int64_t *out);
int ts_num_u64(const char *s, size_t n, uint64_t *out);

/*
 * Exact decimal to fixed point: the value times 10^scale, rounded half away
 * from zero, without going through double. "1712195495519689.047" with
 * scale 3 gives 1712195495519689047 (microseconds to nanoseconds).
 * Exponents are honoured. TS_ELIMIT when the result does not fit int64;
 * TS_EPARSE for NaN/Infinity or non-numbers.
 */
int ts_num_fixed(const char *s, size_t n, int scale, int64_t *out);

/* Number text (including NaN/Infinity/-Infinity) to double. */
int ts_num_f64(const char *s, size_t n, double *out);

/* ---------------------------------------------------------------- strings */

/*
 * Decode the escaped body of a JSON string (as given by a KEY/STR view) and
 * append UTF-8 to out. With lenient set, bad escapes are kept as written and
 * invalid \u surrogates become U+FFFD; otherwise they give TS_EPARSE.
 */
int ts_json_unescape(const char *s, size_t n, int lenient, struct ts_sb *out);

#endif

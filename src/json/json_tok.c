/*
 * json_tok.c - the streaming JSON pull tokenizer.
 *
 * Why hand-written: traces are GB-scale and one `"` occurs every ~10 bytes,
 * so the cost is in the per-byte loops. String bodies are scanned 16 bytes at
 * a time with SSE2 (one signed compare finds control bytes and non-ASCII
 * bytes together); everything else is a small state machine. No allocation
 * per token: tokens are views into the input window.
 *
 * When a token runs off the end of a streaming window, the window is
 * refilled keeping the token's first byte and the token is scanned again.
 */
#include <stdio.h>
#include <string.h>
#include "trainscope/json.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum {
	ST_VALUE,         /* a value must follow */
	ST_VALUE_OR_END,  /* after '[' */
	ST_KEY_OR_END,    /* after '{' */
	ST_KEY,           /* after ',' in an object */
	ST_COLON,         /* after a key */
	ST_COMMA_OR_END,  /* after a value inside a container */
	ST_DONE           /* after the top-level value */
};

/* Scan result when the window ends inside a token. */
#define NEED_MORE 1000

void ts_json_init_input(struct ts_json *j, struct ts_input *in, int flags)
{
	memset(j, 0, sizeof(*j));
	j->in = in;
	j->flags = flags;
	j->state = ST_VALUE;
}

void ts_json_init_mem(struct ts_json *j, const void *data, size_t n, int flags,
		      const char *name)
{
	memset(j, 0, sizeof(*j));
	/* memory input never fails to open for non-gzip data */
	ts_input_open_mem(&j->own, data, n, name ? name : "<memory>", NULL);
	j->in = &j->own;
	j->flags = flags;
	j->state = ST_VALUE;
}

void ts_json_release(struct ts_json *j)
{
	if (j->in == &j->own)
		ts_input_release(&j->own);
	ts_sb_release(&j->key);
	memset(j, 0, sizeof(*j));
}

uint64_t ts_json_offset(const struct ts_json *j)
{
	return j->in->base + j->pos;
}

int64_t ts_json_line_of(const struct ts_json *j, uint64_t offset)
{
	const struct ts_input *in = j->in;
	int64_t line = 1;

	if (in->base != 0 || offset > in->base + in->len)
		return -1;
	const unsigned char *p = in->data, *end = in->data + offset;
	while (p < end) {
		const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		line++;
		p = nl + 1;
	}
	return line;
}

static void describe(int c, char *buf, size_t size)
{
	if (c < 0)
		snprintf(buf, size, "end of input");
	else if (c >= 0x21 && c < 0x7f)
		snprintf(buf, size, "'%c'", c);
	else
		snprintf(buf, size, "byte 0x%02x", c);
}

static int fail(struct ts_json *j, struct ts_err *err, int code, uint64_t off,
		const char *what)
{
	char found[32];
	uint64_t rel = off - j->in->base;
	int c = rel < j->in->len ? j->in->data[rel] : -1;

	describe(c, found, sizeof(found));
	return ts_err_at(err, code, j->in->path, (int64_t)off, ts_json_line_of(j, off),
			 "%s, found %s", what, found);
}

static int trunc_err(struct ts_json *j, struct ts_err *err, uint64_t tok_off)
{
	return ts_err_at(err, TS_ETRUNC, j->in->path, (int64_t)(j->in->base + j->in->len),
			 ts_json_line_of(j, j->in->base + j->in->len),
			 "input ends inside a JSON value (last token began at byte %llu)",
			 (unsigned long long)tok_off);
}

static inline int is_obj(const struct ts_json *j, int depth)
{
	return (int)((j->stack[depth >> 6] >> (depth & 63)) & 1);
}

static inline size_t skip_ws_slow(const unsigned char *d, size_t pos, size_t len)
{
#if defined(__SSE2__)
	const __m128i sp = _mm_set1_epi8(' ');
	const __m128i nl = _mm_set1_epi8('\n');
	const __m128i cr = _mm_set1_epi8('\r');
	const __m128i tab = _mm_set1_epi8('\t');
	while (pos + 16 <= len) {
		__m128i v = _mm_loadu_si128((const __m128i *)(d + pos));
		__m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, nl)),
					  _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tab)));
		int mask = ~_mm_movemask_epi8(ws) & 0xffff;
		if (mask)
			return pos + (size_t)__builtin_ctz((unsigned)mask);
		pos += 16;
	}
#endif
	while (pos < len) {
		unsigned char c = d[pos];
		if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
			break;
		pos++;
	}
	return pos;
}

static inline size_t skip_ws(const unsigned char *d, size_t pos, size_t len)
{
	/* bytes above ' ' are never whitespace, and most tokens are preceded
	 * by nothing or by one space; indentation runs take the vector path */
	if (pos < len && d[pos] > ' ')
		return pos;
	if (pos + 1 < len && d[pos] == ' ' && d[pos + 1] > ' ')
		return pos + 1;
	return skip_ws_slow(d, pos, len);
}

/* Index of the first byte at or after i that is '"', '\\', < 0x20 or >= 0x80. */
static inline size_t scan_plain(const unsigned char *d, size_t i, size_t len)
{
#if defined(__SSE2__)
	const __m128i q = _mm_set1_epi8('"');
	const __m128i bs = _mm_set1_epi8('\\');
	const __m128i sp = _mm_set1_epi8(0x20);
	while (i + 16 <= len) {
		__m128i v = _mm_loadu_si128((const __m128i *)(d + i));
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q),
						      _mm_cmpeq_epi8(v, bs)),
					 _mm_cmplt_epi8(v, sp));
		int mask = _mm_movemask_epi8(m);
		if (mask)
			return i + (size_t)__builtin_ctz((unsigned)mask);
		i += 16;
	}
#endif
	while (i < len) {
		unsigned char c = d[i];
		if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
			return i;
		i++;
	}
	return len;
}

/* Index of the first non-digit byte at or after i (len if none). */
static inline size_t scan_digits(const unsigned char *d, size_t i, size_t len)
{
#if defined(__SSE2__)
	const __m128i lo = _mm_set1_epi8('0' - 1);
	const __m128i hi = _mm_set1_epi8('9' + 1);
	while (i + 16 <= len) {
		__m128i v = _mm_loadu_si128((const __m128i *)(d + i));
		__m128i dig = _mm_and_si128(_mm_cmpgt_epi8(v, lo), _mm_cmplt_epi8(v, hi));
		int mask = ~_mm_movemask_epi8(dig) & 0xffff;
		if (mask)
			return i + (size_t)__builtin_ctz((unsigned)mask);
		i += 16;
	}
#endif
	while (i < len && d[i] >= '0' && d[i] <= '9')
		i++;
	return i;
}

/* Length of a valid UTF-8 sequence at d[i] (given avail bytes), 0 if
 * invalid, -1 if more bytes are needed to tell. */
static int utf8_len(const unsigned char *d, size_t avail)
{
	unsigned char c = d[0];
	int n;
	unsigned lo = 0x80, hi = 0xbf;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	for (int k = 1; k < n; k++) {
		if ((size_t)k >= avail)
			return -1;
		unsigned b = d[k];
		if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf))
			return 0;
	}
	return n;
}

static inline int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * Scan a string starting at the opening quote d[start]. On success sets
 * j->s/n/escaped/bad_text and returns the index after the closing quote.
 * Returns NEED_MORE-tagged value via *need when the window ends, or a
 * negative code.
 */
static inline __attribute__((always_inline)) int scan_string(struct ts_json *j, size_t start, size_t *endpos,
		       struct ts_err *err)
{
	const unsigned char *d = j->in->data;
	size_t len = j->in->len;
	size_t i = start + 1;
	int escaped = 0, bad = 0;
	int lenient = j->flags & TS_JSON_LENIENT;

	for (;;) {
		i = scan_plain(d, i, len);
		if (i >= len)
			return NEED_MORE;
		unsigned char c = d[i];
		if (c == '"')
			break;
		if (c == '\\') {
			escaped = 1;
			if (i + 1 >= len)
				return NEED_MORE;
			unsigned char e = d[i + 1];
			if (e == 'u') {
				if (i + 6 > len)
					return NEED_MORE;
				int ok = 1;
				for (int k = 2; k < 6; k++)
					if (hexval(d[i + (size_t)k]) < 0)
						ok = 0;
				if (!ok && !lenient)
					return fail(j, err, TS_EPARSE, j->in->base + i,
						    "bad \\u escape in string (expected 4 hex digits)");
				i += ok ? 6 : 2;
				continue;
			}
			if (!strchr("\"\\/bfnrt", e) || e == 0) {
				if (!lenient)
					return fail(j, err, TS_EPARSE, j->in->base + i + 1,
						    "bad escape in string (expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
				bad = 1;
			}
			i += 2;
			continue;
		}
		if (c < 0x20) {
			if (!lenient)
				return fail(j, err, TS_EPARSE, j->in->base + i,
					    "raw control character in string");
			bad = 1;
			i++;
			continue;
		}
		/* c >= 0x80 */
		int ul = utf8_len(d + i, len - i);
		if (ul < 0)
			return NEED_MORE;
		if (ul == 0) {
			if (!lenient)
				return fail(j, err, TS_EPARSE, j->in->base + i,
					    "invalid UTF-8 in string");
			bad = 1;
			i++;
			continue;
		}
		i += (size_t)ul;
	}
	j->s = (const char *)d + start + 1;
	j->n = i - start - 1;
	j->escaped = escaped;
	j->bad_text = bad;
	*endpos = i + 1;
	return 0;
}

static inline __attribute__((always_inline)) int scan_number(struct ts_json *j, size_t start, size_t *endpos,
		       struct ts_err *err)
{
	const unsigned char *d = j->in->data;
	size_t len = j->in->len;
	size_t i = start;
	int eof = j->in->eof;

	if (d[i] == '-')
		i++;
	if (i >= len)
		return eof ? trunc_err(j, err, j->in->base + start) : NEED_MORE;
	if (d[i] == '0') {
		i++;
	} else if (d[i] >= '1' && d[i] <= '9') {
		i = scan_digits(d, i + 1, len);
	} else {
		return fail(j, err, TS_EPARSE, j->in->base + i, "expected a digit in number");
	}
	if (i < len && d[i] == '.') {
		i++;
		size_t f = i;
		i = scan_digits(d, i, len);
		if (i == f) {
			if (i >= len)
				return eof ? trunc_err(j, err, j->in->base + start) : NEED_MORE;
			return fail(j, err, TS_EPARSE, j->in->base + i,
				    "expected a digit after '.' in number");
		}
	}
	if (i < len && (d[i] == 'e' || d[i] == 'E')) {
		i++;
		if (i < len && (d[i] == '+' || d[i] == '-'))
			i++;
		size_t f = i;
		while (i < len && d[i] >= '0' && d[i] <= '9')
			i++;
		if (i == f) {
			if (i >= len)
				return eof ? trunc_err(j, err, j->in->base + start) : NEED_MORE;
			return fail(j, err, TS_EPARSE, j->in->base + i,
				    "expected a digit in number exponent");
		}
	}
	if (i >= len && !eof)
		return NEED_MORE;
	j->s = (const char *)d + start;
	j->n = i - start;
	*endpos = i;
	return 0;
}

/* Match a literal; returns its token, NEED_MORE, or a negative code. */
static int scan_literal(struct ts_json *j, size_t start, size_t *endpos,
			struct ts_err *err)
{
	static const struct { const char *text; int tok; int nan; } lits[] = {
		{ "true", TS_JSON_TRUE, 0 },
		{ "false", TS_JSON_FALSE, 0 },
		{ "null", TS_JSON_NULL, 0 },
		{ "NaN", TS_JSON_NUM, 1 },
		{ "Infinity", TS_JSON_NUM, 1 },
		{ "-Infinity", TS_JSON_NUM, 1 },
	};
	const unsigned char *d = j->in->data;
	size_t avail = j->in->len - start;
	int prefix = 0;

	for (size_t k = 0; k < sizeof(lits) / sizeof(lits[0]); k++) {
		size_t n = strlen(lits[k].text);
		if (lits[k].nan && !(j->flags & TS_JSON_ALLOW_NAN))
			continue;
		size_t m = avail < n ? avail : n;
		if (memcmp(d + start, lits[k].text, m) != 0)
			continue;
		if (avail < n) {
			prefix = 1;
			continue;
		}
		j->s = (const char *)d + start;
		j->n = n;
		*endpos = start + n;
		return lits[k].tok;
	}
	if (prefix)
		return j->in->eof ? trunc_err(j, err, j->in->base + start) : NEED_MORE;
	return fail(j, err, TS_EPARSE, j->in->base + start,
		    (j->flags & TS_JSON_ALLOW_NAN) ?
		    "expected a JSON value (object, array, string, number, true, false, null, NaN, Infinity)" :
		    "expected a JSON value (object, array, string, number, true, false, null)");
}

static void value_done(struct ts_json *j)
{
	if (j->depth == 0) {
		j->top_done = 1;
		j->state = (j->flags & TS_JSON_MULTI) ? ST_VALUE : ST_DONE;
	} else {
		j->state = ST_COMMA_OR_END;
	}
}

static int refill(struct ts_json *j, size_t keep, struct ts_err *err)
{
	int64_t r = ts_input_more(j->in, keep, err);

	if (r < 0)
		return (int)r;
	j->pos -= keep;
	return 0;
}

/* End of the window reached between tokens: refill or finish. Returns 1 to
 * go on scanning, 0 with *tok set when done, or a negative code. */
static int at_window_end(struct ts_json *j, size_t pos, int *tok, struct ts_err *err)
{
	struct ts_input *in = j->in;
	int rc;

	j->pos = pos;
	if (!in->eof) {
		rc = refill(j, pos, err);
		if (rc)
			return rc;
		if (in->len > j->pos || !in->eof)
			return 1;
	}
	if (j->depth == 0 && (j->state == ST_DONE || (j->state == ST_VALUE && j->top_done))) {
		*tok = TS_JSON_EOF;
		return 0;
	}
	if (j->depth == 0 && !j->top_done && j->state == ST_VALUE)
		return ts_err_at(err, TS_EPARSE, in->path, (int64_t)(in->base + pos), -1,
				 "no JSON value (empty input)");
	return trunc_err(j, err, in->base + pos);
}

int ts_json_next(struct ts_json *j, struct ts_err *err)
{
	struct ts_input *in = j->in;
	const unsigned char *d;
	size_t len, pos, end;
	int rc, tok = 0, state;

reload:
	d = in->data;
	len = in->len;
	pos = j->pos;
	state = j->state;
	for (;;) {
		pos = skip_ws(d, pos, len);
		if (__builtin_expect(pos >= len, 0)) {
			j->state = state;
			rc = at_window_end(j, pos, &tok, err);
			if (rc == 1)
				goto reload;
			return rc < 0 ? rc : tok;
		}

		unsigned char c = d[pos];

		switch (state) {
		case ST_COMMA_OR_END: {
			int obj = is_obj(j, j->depth - 1);
			if (c == ',') {
				pos = skip_ws(d, pos + 1, len);
				if (obj && pos < len && d[pos] == '"') {
					c = '"';
					state = ST_KEY;
					goto key; /* the usual ", \"key\"" */
				}
				state = obj ? ST_KEY : ST_VALUE;
				continue;
			}
			if (c == (obj ? '}' : ']')) {
				j->tok_offset = in->base + pos;
				j->pos = pos + 1;
				j->depth--;
				value_done(j);
				return obj ? TS_JSON_OBJ_END : TS_JSON_ARR_END;
			}
			j->state = state;
			return fail(j, err, TS_EPARSE, in->base + pos,
				    obj ? "expected ',' or '}' after object member" :
					  "expected ',' or ']' after array element");
		}
		case ST_KEY_OR_END:
			if (c == '}') {
				j->tok_offset = in->base + pos;
				j->pos = pos + 1;
				j->depth--;
				value_done(j);
				return TS_JSON_OBJ_END;
			}
			/* fall through */
		case ST_KEY:
		key:
			j->tok_offset = in->base + pos;
			if (c != '"')
				return fail(j, err, TS_EPARSE, in->base + pos,
					    state == ST_KEY_OR_END ?
					    "expected '\"' (object key) or '}'" :
					    "expected '\"' (object key) after ','");
			rc = scan_string(j, pos, &end, err);
			if (rc == NEED_MORE) {
				if (in->eof)
					return trunc_err(j, err, in->base + pos);
				j->pos = pos;
				j->state = state;
				rc = refill(j, pos, err);
				if (rc)
					return rc;
				goto reload;
			}
			if (rc)
				return rc;
			/* fast path: consume the ':' when it is right there */
			end = skip_ws(d, end, len);
			if (end < len && d[end] == ':') {
				j->pos = skip_ws(d, end + 1, len);
				j->state = ST_VALUE;
			} else {
				j->pos = end;
				j->state = ST_COLON;
			}
			if (j->escaped) {
				/* a key is only ever compared: hand it out decoded */
				ts_sb_reset(&j->key);
				if (ts_json_unescape(j->s, j->n, 1, &j->key) || j->key.failed)
					return ts_err_at(err, TS_ENOMEM, j->in->path, (int64_t)j->tok_offset,
							 -1, "out of memory");
				j->s = j->key.buf;
				j->n = j->key.len;
				j->escaped = 0;
			}
			return TS_JSON_KEY;
		case ST_COLON:
			if (c != ':')
				return fail(j, err, TS_EPARSE, in->base + pos,
					    "expected ':' after object key");
			pos++;
			state = ST_VALUE;
			continue;
		case ST_DONE:
			return fail(j, err, TS_EPARSE, in->base + pos,
				    "expected end of input after the JSON value");
		case ST_VALUE_OR_END:
			if (c == ']') {
				j->tok_offset = in->base + pos;
				j->pos = pos + 1;
				j->depth--;
				value_done(j);
				return TS_JSON_ARR_END;
			}
			break;
		default: /* ST_VALUE */
			break;
		}

		/* a value */
		j->tok_offset = in->base + pos;
		switch (c) {
		case '{':
		case '[':
			if (j->depth >= TS_JSON_MAX_DEPTH)
				return fail(j, err, TS_ELIMIT, in->base + pos,
					    "nesting deeper than 1024 levels");
			if (c == '{')
				j->stack[j->depth >> 6] |= (uint64_t)1 << (j->depth & 63);
			else
				j->stack[j->depth >> 6] &= ~((uint64_t)1 << (j->depth & 63));
			j->depth++;
			j->pos = pos + 1;
			j->state = c == '{' ? ST_KEY_OR_END : ST_VALUE_OR_END;
			return c == '{' ? TS_JSON_OBJ : TS_JSON_ARR;
		case '"':
			rc = scan_string(j, pos, &end, err);
			tok = TS_JSON_STR;
			break;
		case '-':
			if (pos + 1 < len && d[pos + 1] == 'I') {
				rc = scan_literal(j, pos, &end, err);
				tok = rc;
				if (rc == TS_JSON_NUM)
					rc = 0;
				break;
			}
			if (pos + 1 >= len && !in->eof) {
				rc = NEED_MORE;
				tok = 0;
				break;
			}
			/* fall through */
		case '0': case '1': case '2': case '3': case '4':
		case '5': case '6': case '7': case '8': case '9':
			rc = scan_number(j, pos, &end, err);
			tok = TS_JSON_NUM;
			break;
		default:
			/* a UTF-8 byte order mark before the document (RFC 8259
			 * lets a parser ignore it; Windows editors write one) */
			if (c == 0xef && in->base + pos == 0 && ts_bom_len(d + pos, len - pos)) {
				pos += 3;
				continue;
			}
			rc = scan_literal(j, pos, &end, err);
			tok = rc;
			if (rc > 0 && rc != NEED_MORE)
				rc = 0;
			break;
		}
		if (rc == NEED_MORE) {
			if (in->eof)
				return trunc_err(j, err, in->base + pos);
			j->pos = pos;
			j->state = state;
			rc = refill(j, pos, err);
			if (rc)
				return rc;
			goto reload;
		}
		if (rc)
			return rc;
		j->pos = end;
		value_done(j);
		return tok;
	}
}

int ts_json_skip(struct ts_json *j, int tok, struct ts_err *err)
{
	if (tok != TS_JSON_OBJ && tok != TS_JSON_ARR)
		return tok < 0 ? tok : 0;
	int target = j->depth - 1;
	for (;;) {
		int t = ts_json_next(j, err);
		if (t < 0)
			return t;
		if (t == TS_JSON_EOF)
			return ts_err_set(err, TS_EINTERNAL, "skip ran past the end");
		if ((t == TS_JSON_OBJ_END || t == TS_JSON_ARR_END) && j->depth == target)
			return 0;
	}
}

/*
 * json_write.c - deterministic JSON output.
 *
 * Every --json object goes through here so escaping, number format and
 * layout are the same everywhere, and the same input gives the same bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/json.h"
#include "trainscope/jsonw.h"
#include "trainscope/utf8.h"

void ts_jw_init(struct ts_jw *w, struct ts_sb *out, int pretty)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->pretty = pretty;
	w->first[0] = 1;
}

static void newline(struct ts_jw *w)
{
	if (!w->pretty)
		return;
	ts_sb_addc(w->out, '\n');
	ts_sb_pad(w->out, ' ', (size_t)w->depth * 2);
}

/* Separator before a value or key at the current level. */
static void before_item(struct ts_jw *w)
{
	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (w->depth > 0) {
		if (!w->first[w->depth])
			ts_sb_addc(w->out, ',');
		newline(w);
	}
	w->first[w->depth] = 0;
}

static void open(struct ts_jw *w, char c)
{
	before_item(w);
	ts_sb_addc(w->out, c);
	if (w->depth + 1 < TS_JW_MAX_DEPTH)
		w->depth++;
	w->first[w->depth] = 1;
}

static void close_(struct ts_jw *w, char c)
{
	int empty = w->first[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (!empty)
		newline(w);
	ts_sb_addc(w->out, c);
	if (w->depth == 0 && w->pretty)
		ts_sb_addc(w->out, '\n');
}

void ts_jw_obj(struct ts_jw *w) { open(w, '{'); }
void ts_jw_obj_end(struct ts_jw *w) { close_(w, '}'); }
void ts_jw_arr(struct ts_jw *w) { open(w, '['); }
void ts_jw_arr_end(struct ts_jw *w) { close_(w, ']'); }

void ts_json_escape(struct ts_sb *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;

	while (i < n) {
		unsigned char c = p[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			run++;
			continue;
		}
		ts_sb_add(out, p + i - run, run);
		run = 0;
		if (c == '"' || c == '\\') {
			ts_sb_addc(out, '\\');
			ts_sb_addc(out, (char)c);
			i++;
		} else if (c < 0x20) {
			switch (c) {
			case '\n': ts_sb_adds(out, "\\n"); break;
			case '\r': ts_sb_adds(out, "\\r"); break;
			case '\t': ts_sb_adds(out, "\\t"); break;
			case '\b': ts_sb_adds(out, "\\b"); break;
			case '\f': ts_sb_adds(out, "\\f"); break;
			default: {
				char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };
				ts_sb_add(out, u, 6);
			}
			}
			i++;
		} else {
			/* one valid UTF-8 sequence is copied; an invalid byte
			 * (F5..FF leads, overlongs, surrogates, cut sequences)
			 * becomes U+FFFD */
			uint32_t cp;
			int len = ts_utf8_seq(p + i, n - i, &cp);
			if (len) {
				ts_sb_add(out, p + i, (size_t)len);
				i += (size_t)len;
			} else {
				ts_sb_adds(out, "\xef\xbf\xbd");
				i++;
			}
		}
	}
	ts_sb_add(out, p + i - run, run);
}

static void key_n(struct ts_jw *w, const char *key, size_t n)
{
	before_item(w);
	ts_sb_addc(w->out, '"');
	ts_json_escape(w->out, key, n);
	ts_sb_adds(w->out, w->pretty ? "\": " : "\":");
	w->after_key = 1;
}

void ts_jw_key(struct ts_jw *w, const char *key)
{
	key_n(w, key, strlen(key));
}

void ts_jw_strn(struct ts_jw *w, const char *s, size_t n)
{
	before_item(w);
	ts_sb_addc(w->out, '"');
	ts_json_escape(w->out, s, n);
	ts_sb_addc(w->out, '"');
}

void ts_jw_str(struct ts_jw *w, const char *s)
{
	if (!s) {
		ts_jw_null(w);
		return;
	}
	ts_jw_strn(w, s, strlen(s));
}

void ts_jw_i64(struct ts_jw *w, int64_t v)
{
	before_item(w);
	ts_sb_addf(w->out, "%lld", (long long)v);
}

void ts_fmt_f64(char *buf, size_t size, double v)
{
	if (!isfinite(v)) {
		snprintf(buf, size, "null");
		return;
	}
	if (v == 0) {
		snprintf(buf, size, "0");
		return;
	}
	if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v) {
		/* whole numbers (all exact below 2^53) as integers: 50, not 5e01 */
		snprintf(buf, size, "%lld", (long long)v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* JSON has no leading '+' in exponents; "%g" prints e+NN */
	char *e = strchr(buf, 'e');
	if (e && e[1] == '+')
		memmove(e + 1, e + 2, strlen(e + 2) + 1);
}

void ts_jw_f64(struct ts_jw *w, double v)
{
	char buf[40];

	before_item(w);
	ts_fmt_f64(buf, sizeof(buf), v);
	ts_sb_adds(w->out, buf);
}

void ts_jw_fixed(struct ts_jw *w, double v, int decimals)
{
	before_item(w);
	if (!isfinite(v)) {
		ts_sb_adds(w->out, "null");
		return;
	}
	if (v == 0)
		v = 0; /* no "-0.00" */
	char buf[64];
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	if (strncmp(buf, "-0.", 3) == 0 && strspn(buf + 3, "0") == strlen(buf + 3))
		memmove(buf, buf + 1, strlen(buf));
	ts_sb_adds(w->out, buf);
}

void ts_jw_bool(struct ts_jw *w, int v)
{
	before_item(w);
	ts_sb_adds(w->out, v ? "true" : "false");
}

void ts_jw_null(struct ts_jw *w)
{
	before_item(w);
	ts_sb_adds(w->out, "null");
}

void ts_jw_kstr(struct ts_jw *w, const char *key, const char *s)
{
	ts_jw_key(w, key);
	ts_jw_str(w, s);
}

void ts_jw_ki64(struct ts_jw *w, const char *key, int64_t v)
{
	ts_jw_key(w, key);
	ts_jw_i64(w, v);
}

void ts_jw_kf64(struct ts_jw *w, const char *key, double v)
{
	ts_jw_key(w, key);
	ts_jw_f64(w, v);
}

void ts_jw_kbool(struct ts_jw *w, const char *key, int v)
{
	ts_jw_key(w, key);
	ts_jw_bool(w, v);
}

void ts_jw_ki64_or_null(struct ts_jw *w, const char *key, int64_t v, int have)
{
	ts_jw_key(w, key);
	if (have)
		ts_jw_i64(w, v);
	else
		ts_jw_null(w);
}

void ts_jw_kf64_or_null(struct ts_jw *w, const char *key, double v)
{
	ts_jw_key(w, key);
	if (isfinite(v))
		ts_jw_f64(w, v);
	else
		ts_jw_null(w);
}

void ts_jw_kfixed_or_null(struct ts_jw *w, const char *key, double v, int decimals)
{
	ts_jw_key(w, key);
	if (isfinite(v))
		ts_jw_fixed(w, v, decimals);
	else
		ts_jw_null(w);
}

/* One pass of ts_jw_json over doc: check (emit 0) or write (emit 1).
 * Escaped strings are decoded in both, so a bad escape (a lone
 * surrogate) is found before anything is written. */
static int copy_pass(struct ts_jw *w, const char *doc, size_t n, int emit, struct ts_sb *tmp)
{
	struct ts_json j;
	struct ts_err err;
	int tok = 0, rc = 0;

	ts_err_init(&err);
	ts_json_init_mem(&j, doc, n, 0, "JSON value");
	while (!rc && (tok = ts_json_next(&j, &err)) > 0) {
		if (tok == TS_JSON_STR && j.escaped) {
			ts_sb_reset(tmp);
			rc = ts_json_unescape(j.s, j.n, 0, tmp);
			if (!rc && tmp->failed)
				rc = TS_ENOMEM;
		}
		if (!emit) {
			if (w->depth + j.depth >= TS_JW_MAX_DEPTH)
				rc = TS_ELIMIT;
			continue;
		}
		switch (rc ? -1 : tok) {
		case -1: break;
		case TS_JSON_OBJ: ts_jw_obj(w); break;
		case TS_JSON_OBJ_END: ts_jw_obj_end(w); break;
		case TS_JSON_ARR: ts_jw_arr(w); break;
		case TS_JSON_ARR_END: ts_jw_arr_end(w); break;
		case TS_JSON_KEY: key_n(w, j.s, j.n); break;
		case TS_JSON_STR:
			if (j.escaped)
				ts_jw_strn(w, tmp->buf ? tmp->buf : "", tmp->len);
			else
				ts_jw_strn(w, j.s, j.n);
			break;
		case TS_JSON_NUM:
			before_item(w);
			ts_sb_add(w->out, j.s, j.n);
			break;
		case TS_JSON_TRUE: ts_jw_bool(w, 1); break;
		case TS_JSON_FALSE: ts_jw_bool(w, 0); break;
		default: ts_jw_null(w); break;
		}
	}
	if (!rc && tok < 0)
		rc = tok;
	ts_json_release(&j);
	return rc;
}

int ts_jw_json(struct ts_jw *w, const char *doc, size_t n)
{
	struct ts_sb tmp;
	int rc;

	ts_sb_init(&tmp);
	rc = copy_pass(w, doc, n, 0, &tmp);
	if (!rc)
		rc = copy_pass(w, doc, n, 1, &tmp);
	ts_sb_release(&tmp);
	return rc;
}

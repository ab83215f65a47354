/* Unit tests for the streaming JSON tokenizer and number/string helpers. */
#include <stdlib.h>
#include "harness.h"
#include "trainscope/json.h"
#include "trainscope/jsonw.h"

/* Tokenize a whole string; returns the token types as letters and the
 * final code (0 = clean EOF). */
static int toks(const char *text, int flags, char *out, size_t size, struct ts_err *err)
{
	static const char letters[] = "E{}[]ksn+-0";
	struct ts_json j;
	size_t k = 0;
	int t;

	ts_err_init(err);
	ts_json_init_mem(&j, text, strlen(text), flags, "t.json");
	for (;;) {
		t = ts_json_next(&j, err);
		if (t <= 0)
			break;
		if (k + 1 < size)
			out[k++] = letters[t];
	}
	out[k] = '\0';
	ts_json_release(&j);
	return t;
}

TEST(json_tokens_basic)
{
	char got[64];
	struct ts_err err;

	CHECK_I64(toks("{\"a\": [1, -2.5e3, \"x\", true, false, null], \"b\": {}}", 0,
		       got, sizeof(got), &err), 0);
	CHECK_STR(got, "{k[nns+-0]k{}}");
	CHECK_I64(toks("  42  ", 0, got, sizeof(got), &err), 0);
	CHECK_STR(got, "n");
}

TEST(json_syntax_errors_have_offsets)
{
	char got[64];
	struct ts_err err;

	CHECK_I64(toks("{\"a\" 1}", 0, got, sizeof(got), &err), TS_EPARSE);
	CHECK_I64(err.offset, 5);
	CHECK_I64(err.line, 1);
	CHECK(strstr(err.msg, "expected ':'") != NULL);
	CHECK_I64(toks("[1,\n2,,3]", 0, got, sizeof(got), &err), TS_EPARSE);
	CHECK_I64(err.offset, 6);
	CHECK_I64(err.line, 2);
	CHECK_I64(toks("[1] [2]", 0, got, sizeof(got), &err), TS_EPARSE);
	CHECK_I64(toks("[01]", 0, got, sizeof(got), &err), TS_EPARSE);
	CHECK_I64(toks("", 0, got, sizeof(got), &err), TS_EPARSE);
	CHECK_I64(toks("[1.]", 0, got, sizeof(got), &err), TS_EPARSE);
	CHECK_I64(toks("{\"a\":tru}", 0, got, sizeof(got), &err), TS_EPARSE);
}

TEST(json_truncation_is_its_own_condition)
{
	char got[64];
	struct ts_err err;

	CHECK_I64(toks("{\"traceEvents\": [{\"ph\": \"X\"}, {\"ph\": \"X", 0, got,
		       sizeof(got), &err), TS_ETRUNC);
	CHECK_STR(got, "{k[{ks}{k");
	CHECK_I64(toks("[1, 2", 0, got, sizeof(got), &err), TS_ETRUNC);
	CHECK_I64(toks("[tr", 0, got, sizeof(got), &err), TS_ETRUNC);
	CHECK_I64(toks("{\"a\": 1.", 0, got, sizeof(got), &err), TS_ETRUNC);
}

TEST(json_nan_only_when_asked)
{
	char got[64];
	struct ts_err err;
	double v;

	CHECK_I64(toks("[NaN, Infinity, -Infinity]", 0, got, sizeof(got), &err), TS_EPARSE);
	CHECK_I64(toks("[NaN, Infinity, -Infinity]", TS_JSON_ALLOW_NAN, got, sizeof(got), &err), 0);
	CHECK_STR(got, "[nnn]");
	CHECK_I64(ts_num_f64("NaN", 3, &v), 0);
	CHECK(isnan(v));
	CHECK_I64(ts_num_f64("-Infinity", 9, &v), 0);
	CHECK(isinf(v) && v < 0);
	/* only JSON number text: no hex, inf/nan spellings or spaces */
	CHECK_I64(ts_num_f64("0x0", 3, &v), TS_EPARSE);
	CHECK_I64(ts_num_f64("inf", 3, &v), TS_EPARSE);
	CHECK_I64(ts_num_f64(" 1", 2, &v), TS_EPARSE);
	CHECK_I64(ts_num_f64("1.", 2, &v), TS_EPARSE);
	CHECK_I64(ts_num_f64("-0.5e+3", 7, &v), 0);
	CHECK_NEAR(v, -500, 0);
}

TEST(json_lenient_strings)
{
	char got[64];
	struct ts_err err;
	const char *bad_utf8 = "[\"a\xff\xfe b\"]";
	const char *raw_nl = "[\"line1\nline2\"]";
	const char *bad_esc = "[\"C:\\path\"]";

	CHECK_I64(toks(bad_utf8, 0, got, sizeof(got), &err), TS_EPARSE);
	CHECK(strstr(err.msg, "UTF-8") != NULL);
	CHECK_I64(toks(bad_utf8, TS_JSON_LENIENT, got, sizeof(got), &err), 0);
	CHECK_I64(toks(raw_nl, 0, got, sizeof(got), &err), TS_EPARSE);
	CHECK_I64(toks(raw_nl, TS_JSON_LENIENT, got, sizeof(got), &err), 0);
	CHECK_I64(toks(bad_esc, 0, got, sizeof(got), &err), TS_EPARSE);
	CHECK_I64(toks(bad_esc, TS_JSON_LENIENT, got, sizeof(got), &err), 0);
	/* valid multi-byte UTF-8 is fine in strict mode */
	CHECK_I64(toks("[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]", 0, got, sizeof(got), &err), 0);
}

TEST(json_views_and_escapes)
{
	struct ts_json j;
	struct ts_err err;
	struct ts_sb sb;
	const char *text = "{\"na\\\"me\": \"a\\u00e9\\ud83d\\ude00\\n\"}";

	ts_err_init(&err);
	ts_sb_init(&sb);
	ts_json_init_mem(&j, text, strlen(text), 0, NULL);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_OBJ);
	/* a key is handed out decoded: 5 bytes na"me, not the 6 written */
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_KEY);
	CHECK(!j.escaped);
	CHECK_I64(j.n, 5);
	CHECK(memcmp(j.s, "na\"me", 5) == 0);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_STR);
	CHECK(j.escaped);
	CHECK_I64(ts_json_unescape(j.s, j.n, 0, &sb), 0);
	CHECK_STR(sb.buf, "a\xc3\xa9\xf0\x9f\x98\x80\n");
	ts_json_release(&j);
	ts_sb_reset(&sb);
	CHECK_I64(ts_json_unescape("\\ud800x", 7, 0, &sb), TS_EPARSE);
	ts_sb_reset(&sb);
	CHECK_I64(ts_json_unescape("\\ud800x", 7, 1, &sb), 0);
	CHECK_STR(sb.buf, "\xef\xbf\xbdx");
	ts_sb_release(&sb);
}

/* "n\u0061me" is the key "name" (JSON, RFC 8259 section 7): readers
 * that compare keys with TS_JSON_IS find it; a bad escape in a lenient
 * document stays as written. */
TEST(json_escaped_keys_compare_decoded)
{
	const char *text = "{\"n\\u0061me\": 1, \"\\u0074\\u0073\": 2, \"x\\qy\": 3, \"name\": 4}";
	struct ts_json j;
	struct ts_err err;

	ts_err_init(&err);
	ts_json_init_mem(&j, text, strlen(text), TS_JSON_LENIENT, NULL);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_OBJ);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_KEY);
	CHECK(TS_JSON_IS(&j, "name"));
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_NUM);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_KEY);
	CHECK(TS_JSON_IS(&j, "ts"));
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_NUM);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_KEY);
	CHECK(TS_JSON_IS(&j, "x\\qy"));
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_NUM);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_KEY);
	CHECK(TS_JSON_IS(&j, "name"));
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_NUM);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_OBJ_END);
	CHECK_I64(ts_json_next(&j, &err), TS_JSON_EOF);
	ts_json_release(&j);
}

TEST(num_fixed_is_exact)
{
	int64_t v;

	/* 19 significant digits: a double would round this */
	CHECK_I64(ts_num_fixed("1712195495519689.047", 20, 3, &v), 0);
	CHECK_I64(v, 1712195495519689047LL);
	CHECK_I64(ts_num_fixed("12", 2, 3, &v), 0);
	CHECK_I64(v, 12000);
	CHECK_I64(ts_num_fixed("0.0005", 6, 3, &v), 0);   /* 0.5 ns rounds away */
	CHECK_I64(v, 1);
	CHECK_I64(ts_num_fixed("-0.0005", 7, 3, &v), 0);
	CHECK_I64(v, -1);
	CHECK_I64(ts_num_fixed("0.00049", 7, 3, &v), 0);
	CHECK_I64(v, 0);
	CHECK_I64(ts_num_fixed("1.5e3", 5, 3, &v), 0);    /* 1500 us */
	CHECK_I64(v, 1500000);
	CHECK_I64(ts_num_fixed("2E-3", 4, 3, &v), 0);
	CHECK_I64(v, 2);
	CHECK_I64(ts_num_fixed("9223372036854775807", 19, 0, &v), 0);
	CHECK_I64(v, INT64_MAX);
	CHECK_I64(ts_num_fixed("9223372036854775808", 19, 0, &v), TS_ELIMIT);
	CHECK_I64(ts_num_fixed("1e30", 4, 3, &v), TS_ELIMIT);
	CHECK_I64(ts_num_fixed("abc", 3, 3, &v), TS_EPARSE);
}

TEST(num_integers)
{
	int64_t v;
	uint64_t u;

	CHECK_I64(ts_num_i64("-1220540864", 11, &v), 0);
	CHECK_I64(v, -1220540864LL);
	CHECK_I64(ts_num_i64("-9223372036854775808", 20, &v), 0);
	CHECK(v == INT64_MIN);
	/* Comms Id values exceed int64 */
	CHECK_I64(ts_num_i64("18446744073709551615", 20, &v), TS_ELIMIT);
	CHECK_I64(ts_num_u64("18446744073709551615", 20, &u), 0);
	CHECK(u == UINT64_MAX);
	CHECK_I64(ts_num_u64("18446744073709551616", 20, &u), TS_ELIMIT);
	CHECK_I64(ts_num_i64("1.5", 3, &v), TS_EPARSE);
}

TEST(json_writer_is_deterministic_and_escapes)
{
	struct ts_sb sb;
	struct ts_jw w;

	ts_sb_init(&sb);
	ts_jw_init(&w, &sb, 0);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "name", "a\"<b>&\n\x01\xff");
	ts_jw_kf64(&w, "x_us", 0.1);
	ts_jw_kf64(&w, "nan", NAN);
	ts_jw_kf64(&w, "big", 1e21);
	ts_jw_kf64(&w, "whole", 50);
	ts_jw_kf64(&w, "neg", -1250);
	ts_jw_ki64(&w, "n", -3);
	ts_jw_key(&w, "arr");
	ts_jw_arr(&w);
	ts_jw_fixed(&w, -0.0001, 2);
	ts_jw_bool(&w, 1);
	ts_jw_arr_end(&w);
	ts_jw_obj_end(&w);
	CHECK_STR(sb.buf, "{\"name\":\"a\\\"<b>&\\n\\u0001\xef\xbf\xbd\",\"x_us\":0.1,"
		  "\"nan\":null,\"big\":1e21,\"whole\":50,\"neg\":-1250,\"n\":-3,\"arr\":[0.00,true]}");
	ts_sb_release(&sb);
}

/* A JSON document embedded as a value: re-laid-out, escapes decoded and
 * re-escaped, numbers as written; anything that is not one JSON value
 * leaves the output untouched. Expected bytes written out by hand. */
TEST(json_writer_embeds_a_document)
{
	static const char doc[] = " {\"a\": [1, 2.50, -3e2], \"k\\u0065y\": \"x\\u00e9\\n\","
				  " \"e\": {}, \"t\": [true, false, null]} ";
	static const char *const bad[] = {
		"", "{", "{\"a\":1} x", "[1,]", "NaN", "\"\\ud800\"", "{} {}",
	};
	struct ts_sb sb;
	struct ts_jw w;

	ts_sb_init(&sb);
	ts_jw_init(&w, &sb, 0);
	ts_jw_obj(&w);
	ts_jw_key(&w, "doc");
	CHECK_I64(ts_jw_json(&w, doc, sizeof(doc) - 1), 0);
	ts_jw_ki64(&w, "after", 1);
	ts_jw_obj_end(&w);
	CHECK_STR(sb.buf, "{\"doc\":{\"a\":[1,2.50,-3e2],\"key\":\"x\xc3\xa9\\n\",\"e\":{},"
		  "\"t\":[true,false,null]},\"after\":1}");

	ts_sb_reset(&sb);
	ts_jw_init(&w, &sb, 1);
	ts_jw_obj(&w);
	ts_jw_key(&w, "d");
	CHECK_I64(ts_jw_json(&w, "[1,{\"b\":[]}]", 12), 0);
	ts_jw_obj_end(&w);
	CHECK_STR(sb.buf, "{\n  \"d\": [\n    1,\n    {\n      \"b\": []\n    }\n  ]\n}\n");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ts_sb_reset(&sb);
		ts_jw_init(&w, &sb, 0);
		ts_jw_arr(&w);
		CHECK(ts_jw_json(&w, bad[i], strlen(bad[i])) < 0);
		CHECK_I64((int64_t)sb.len, 1);   /* only the '[' */
	}

	/* deeper than the writer can indent: refused whole */
	{
		char deep[2 * TS_JW_MAX_DEPTH + 2];
		size_t n = 0;
		for (int k = 0; k < TS_JW_MAX_DEPTH; k++)
			deep[n++] = '[';
		for (int k = 0; k < TS_JW_MAX_DEPTH; k++)
			deep[n++] = ']';
		ts_sb_reset(&sb);
		ts_jw_init(&w, &sb, 0);
		CHECK_I64(ts_jw_json(&w, deep, n), TS_ELIMIT);
		CHECK_I64((int64_t)sb.len, 0);
		CHECK_I64(ts_jw_json(&w, deep + 2, n - 4), 0);
	}
	ts_sb_release(&sb);
}

/* Token statistics of a tokenizer run: count and a hash of all views. */
struct tokstat { long long ntok; uint64_t sum; int last; };

static struct tokstat run_tokens(struct ts_json *j)
{
	struct tokstat st = { 0, 0, 0 };
	struct ts_err err;
	int t;

	ts_err_init(&err);
	while ((t = ts_json_next(j, &err)) > 0) {
		st.ntok++;
		st.sum = st.sum * 31 + (uint64_t)t;
		if (t == TS_JSON_STR || t == TS_JSON_KEY || t == TS_JSON_NUM)
			st.sum += ts_hash(j->s, j->n);
	}
	st.last = t;
	return st;
}

TEST(json_stream_refill_matches_memory)
{
	/* A gzip input streams through a 4 MiB window; tokens crossing window
	 * boundaries must come out identical to the parse of the same bytes
	 * held in memory. */
	DATA_OR_SKIP(path, "traces/cpu/b_moe/rank0.1795974037134393545.pt.trace.json.gz");
	struct ts_input in;
	struct ts_json j;
	struct ts_err err;
	struct ts_sb all;

	ts_err_init(&err);
	ts_sb_init(&all);
	REQUIRE(ts_input_open(&in, path, &err) == 0);
	CHECK(in.gzip);
	while (ts_input_more(&in, in.len, &err) > 0)
		ts_sb_add(&all, in.data, in.len);
	ts_input_release(&in);
	CHECK(all.len > 8u << 20); /* bigger than one window */

	REQUIRE(ts_input_open(&in, path, &err) == 0);
	ts_json_init_input(&j, &in, 0);
	struct tokstat a = run_tokens(&j);
	ts_json_release(&j);
	ts_input_release(&in);

	ts_json_init_mem(&j, all.buf, all.len, 0, NULL);
	struct tokstat b = run_tokens(&j);
	ts_json_release(&j);
	ts_sb_release(&all);

	CHECK_I64(a.last, 0);
	CHECK_I64(b.last, 0);
	CHECK(a.ntok > 100000);
	CHECK_I64(a.ntok, b.ntok);
	CHECK(a.sum == b.sum);
}

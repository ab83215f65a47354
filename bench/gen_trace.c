/*
 * gen_trace.c - build a large, realistic Kineto trace from a real one.
 *
 * Benchmarks need GB-scale traces; the shared data holds MB-scale real
 * ones. This program replicates every event of a real trace K times, each
 * copy shifted in time by the source's span, with correlation / External
 * id / flow ids offset so links stay unique, and ProfilerStep#N renumbered,
 * until the output reaches the requested size. Metadata before and after
 * the event array is copied once. Output format matches Kineto's: one
 * event per line.
 *
 * usage: gen_trace SRC.json[.gz] OUT.json SIZE_MB
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/input.h"
#include "trainscope/json.h"

struct range { size_t start, end; };

static int die(const char *what, const struct ts_err *err)
{
	char buf[1200];

	if (err) {
		ts_err_format(err, buf, sizeof(buf));
		fprintf(stderr, "gen_trace: %s: %s\n", what, buf);
	} else {
		fprintf(stderr, "gen_trace: %s\n", what);
	}
	return 2;
}

/* Print ns as microseconds with 3 decimals. */
static void put_us(FILE *out, int64_t ns)
{
	int neg = ns < 0;
	uint64_t a = neg ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;

	fprintf(out, "%s%llu.%03llu", neg ? "-" : "", (unsigned long long)(a / 1000),
		(unsigned long long)(a % 1000));
}

/* Re-emit one event object with shifted fields. */
static int emit_event(FILE *out, const char *src, struct range r, int64_t shift_ns,
		      int64_t id_shift, int64_t step_shift, struct ts_err *err)
{
	struct ts_json j;
	int need_comma[TS_JSON_MAX_DEPTH + 1] = { 0 };
	int t, rc = 0, after_key = 0;
	enum { F_NONE, F_TS, F_ID, F_NAME } field = F_NONE;

	ts_json_init_mem(&j, src + r.start, r.end - r.start, TS_JSON_LENIENT, "event");
	while ((t = ts_json_next(&j, err)) > 0) {
		if (t == TS_JSON_OBJ_END || t == TS_JSON_ARR_END) {
			fputc(t == TS_JSON_OBJ_END ? '}' : ']', out);
			after_key = 0;
			continue;
		}
		int cont = (t == TS_JSON_OBJ || t == TS_JSON_ARR) ? j.depth - 1 : j.depth;
		if (t == TS_JSON_KEY) {
			if (need_comma[cont])
				fputs(", ", out);
			need_comma[cont] = 1;
			fputc('"', out);
			fwrite(j.s, 1, j.n, out);
			fputs("\": ", out);
			after_key = 1;
			field = F_NONE;
			if (cont == 1 && TS_JSON_IS(&j, "ts"))
				field = F_TS;
			else if (TS_JSON_IS(&j, "correlation") || TS_JSON_IS(&j, "External id") ||
				 TS_JSON_IS(&j, "external id") || (cont == 1 && TS_JSON_IS(&j, "id")))
				field = F_ID;
			else if (cont == 1 && TS_JSON_IS(&j, "name"))
				field = F_NAME;
			continue;
		}
		if (!after_key && cont > 0) {
			if (need_comma[cont])
				fputs(", ", out);
			need_comma[cont] = 1;
		}
		after_key = 0;
		switch (t) {
		case TS_JSON_OBJ:
		case TS_JSON_ARR:
			fputc(t == TS_JSON_OBJ ? '{' : '[', out);
			need_comma[j.depth] = 0;
			break;
		case TS_JSON_NUM: {
			int64_t v;
			if (field == F_TS && ts_num_fixed(j.s, j.n, 3, &v) == 0)
				put_us(out, v + shift_ns);
			else if (field == F_ID && ts_num_i64(j.s, j.n, &v) == 0 && v > 0)
				fprintf(out, "%lld", (long long)(v + id_shift));
			else
				fwrite(j.s, 1, j.n, out);
			break;
		}
		case TS_JSON_STR: {
			int64_t step;
			fputc('"', out);
			if (field == F_NAME && j.n > 13 && memcmp(j.s, "ProfilerStep#", 13) == 0 &&
			    ts_num_i64(j.s + 13, j.n - 13, &step) == 0)
				fprintf(out, "ProfilerStep#%lld", (long long)(step + step_shift));
			else
				fwrite(j.s, 1, j.n, out);
			fputc('"', out);
			break;
		}
		default:
			fwrite(j.s, 1, j.n, out);
			break;
		}
		field = F_NONE;
	}
	if (t < 0)
		rc = t;
	ts_json_release(&j);
	return rc;
}

int main(int argc, char **argv)
{
	struct ts_input in;
	struct ts_err err;
	struct ts_sb src;
	struct ts_json j;
	struct range *ev = NULL;
	size_t nev = 0, cap = 0;
	size_t arr_open = 0, arr_close = 0;
	int64_t tmin = INT64_MAX, tmax = INT64_MIN, step_min = INT64_MAX, step_max = INT64_MIN;
	int64_t id_max = 0;
	int t;

	if (argc != 4) {
		fprintf(stderr, "usage: gen_trace SRC.json[.gz] OUT.json SIZE_MB\n");
		return 2;
	}
	long long target = strtoll(argv[3], NULL, 10) * 1000000LL;
	ts_err_init(&err);
	ts_sb_init(&src);
	if (ts_input_open(&in, argv[1], &err))
		return die("open", &err);
	while (!in.eof) {
		int64_t r = ts_input_more(&in, in.len, &err);
		if (r < 0)
			return die("read", &err);
		if (in.kind == TS_INPUT_MAP) {
			ts_sb_add(&src, in.data, in.len);
			break;
		}
		ts_sb_add(&src, in.data, in.len);
	}
	if (in.kind == TS_INPUT_MAP && src.len == 0)
		ts_sb_add(&src, in.data, in.len);
	ts_input_release(&in);

	/* find the event array and each event's byte range */
	ts_json_init_mem(&j, src.buf, src.len, TS_JSON_LENIENT, argv[1]);
	int in_events = 0;
	size_t ev_start = 0;
	int64_t cur_ts = 0, cur_dur = 0;
	int key_kind = 0;
	while ((t = ts_json_next(&j, &err)) > 0) {
		if (t == TS_JSON_KEY && j.depth == 1) {
			if (TS_JSON_IS(&j, "traceEvents")) {
				t = ts_json_next(&j, &err);
				if (t != TS_JSON_ARR)
					return die("traceEvents is not an array", NULL);
				arr_open = (size_t)j.tok_offset;
				in_events = 1;
			}
			continue;
		}
		if (!in_events)
			continue;
		if (t == TS_JSON_OBJ && j.depth == 3) {
			ev_start = (size_t)j.tok_offset;
			cur_ts = 0;
			cur_dur = 0;
		} else if (t == TS_JSON_OBJ_END && j.depth == 2) {
			if (ts_grow((void **)&ev, &cap, nev + 1, sizeof(*ev)))
				return die("out of memory", NULL);
			ev[nev].start = ev_start;
			ev[nev].end = (size_t)ts_json_offset(&j);
			nev++;
			if (cur_ts < tmin)
				tmin = cur_ts;
			if (cur_ts + cur_dur > tmax)
				tmax = cur_ts + cur_dur;
		} else if (t == TS_JSON_ARR_END && j.depth == 1) {
			arr_close = (size_t)j.tok_offset;
			in_events = 0;
		} else if (t == TS_JSON_KEY && j.depth == 3) {
			key_kind = TS_JSON_IS(&j, "ts") ? 1 : TS_JSON_IS(&j, "dur") ? 2 :
				   TS_JSON_IS(&j, "name") ? 3 : TS_JSON_IS(&j, "id") ? 4 : 0;
			continue;
		} else if (t == TS_JSON_KEY && j.depth == 4) {
			key_kind = (TS_JSON_IS(&j, "correlation") || TS_JSON_IS(&j, "External id")) ? 4 : 0;
			continue;
		} else if (t == TS_JSON_NUM && key_kind) {
			int64_t v;
			if (key_kind == 1 && ts_num_fixed(j.s, j.n, 3, &v) == 0)
				cur_ts = v;
			else if (key_kind == 2 && ts_num_fixed(j.s, j.n, 3, &v) == 0)
				cur_dur = v;
			else if (key_kind == 4 && ts_num_i64(j.s, j.n, &v) == 0 && v > id_max)
				id_max = v;
		} else if (t == TS_JSON_STR && key_kind == 3 && j.n > 13 &&
			   memcmp(j.s, "ProfilerStep#", 13) == 0) {
			int64_t s;
			if (ts_num_i64(j.s + 13, j.n - 13, &s) == 0) {
				if (s < step_min)
					step_min = s;
				if (s > step_max)
					step_max = s;
			}
		}
		key_kind = 0;
	}
	if (t < 0)
		return die("parse", &err);
	ts_json_release(&j);
	if (!nev || !arr_close)
		return die("no traceEvents array found", NULL);

	FILE *out = fopen(argv[2], "wb");
	if (!out)
		return die("cannot create output", NULL);
	static char obuf[1 << 20];
	setvbuf(out, obuf, _IOFBF, sizeof(obuf));
	fwrite(src.buf, 1, arr_open + 1, out);
	int64_t span = tmax - tmin + 1000;
	int64_t nsteps = step_max >= step_min ? step_max - step_min + 1 : 0;
	long long copies = 0;
	for (;;) {
		for (size_t i = 0; i < nev; i++) {
			fputs(copies == 0 && i == 0 ? "\n  " : ",\n  ", out);
			if (emit_event(out, src.buf, ev[i], copies * span, copies * (id_max + 1),
				       copies * nsteps, &err))
				return die("re-emit", &err);
		}
		copies++;
		if (ftell(out) >= target)
			break;
	}
	fputs("\n", out);
	fwrite(src.buf + arr_close, 1, src.len - arr_close, out);
	if (fclose(out))
		return die("write failed", NULL);
	fprintf(stderr, "gen_trace: %zu events x %lld copies, span %lld ns, %lld steps per copy\n",
		nev, copies, (long long)span, (long long)nsteps);
	free(ev);
	ts_sb_release(&src);
	return 0;
}

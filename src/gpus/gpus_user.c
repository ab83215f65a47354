/*
 * gpus_user.c - merge a user catalog file into the GPU catalog.
 *
 * Sites know numbers the public sources do not (an NDA datasheet for the
 * S5000, a power-capped SKU, a new part). The file lets them state those
 * numbers, with their own source string, without rebuilding trainscope:
 *
 *   {"gpus": [{"sku": "MTT-S5000", "peak_tflops": {"bf16": 512},
 *              "source": "vendor datasheet rev 3"}]}
 *
 * An entry that names an existing SKU (or alias) overrides only the fields
 * it states; any other entry is added. Strings are copied into the
 * catalog's arena.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/gpus.h"
#include "trainscope/input.h"
#include "trainscope/json.h"

/* Lookups scan every entry and alias: caps keep a hostile file linear-ish. */
#define MAX_USER_ENTRIES 1024
#define MAX_ALIASES_BYTES 4096

struct ustate {
	struct ts_json j;
	struct ts_gpu_catalog *c;
	const char *name;
	struct ts_err *err;
	struct ts_sb tmp;
};

static int bad(struct ustate *st, const char *what)
{
	uint64_t off = st->j.tok_offset;
	return ts_err_at(st->err, TS_EPARSE, st->name, (int64_t)off, ts_json_line_of(&st->j, off),
			 "expected %s", what);
}

static int next(struct ustate *st)
{
	return ts_json_next(&st->j, st->err);
}

/* Copy the current STR token into the arena (unescaped). */
static int take_str(struct ustate *st, int tok, const char *what, const char **out)
{
	char *s;
	int rc;

	if (tok != TS_JSON_STR)
		return bad(st, what);
	ts_sb_reset(&st->tmp);
	if ((rc = ts_json_unescape(st->j.s, st->j.n, 0, &st->tmp)))
		return bad(st, what);
	if (st->tmp.failed)
		return ts_err_set(st->err, TS_ENOMEM, "out of memory");
	s = ts_arena_strndup(&st->c->arena, st->tmp.buf, st->tmp.len);
	if (!s)
		return ts_err_set(st->err, TS_ENOMEM, "out of memory");
	*out = s;
	return 0;
}

static int take_num(struct ustate *st, int tok, const char *what, double *out)
{
	if (tok != TS_JSON_NUM || ts_num_f64(st->j.s, st->j.n, out) || !(*out >= 0) ||
	    *out > 1e18)
		return bad(st, what);
	return 0;
}

/* "aliases": ["a", "b"] or "a,b" */
static int take_aliases(struct ustate *st, int tok, const char **out)
{
	struct ts_sb all;
	int rc = 0;

	if (tok == TS_JSON_STR) {
		if (st->j.n > MAX_ALIASES_BYTES)
			return ts_err_at(st->err, TS_ELIMIT, st->name, (int64_t)st->j.tok_offset,
					 ts_json_line_of(&st->j, st->j.tok_offset),
					 "aliases longer than %d bytes", MAX_ALIASES_BYTES);
		return take_str(st, tok, "aliases as a string or an array of strings", out);
	}
	if (tok != TS_JSON_ARR)
		return bad(st, "aliases as a string or an array of strings");
	ts_sb_init(&all);
	for (;;) {
		tok = next(st);
		if (tok < 0) {
			rc = tok;
			goto out;
		}
		if (tok == TS_JSON_ARR_END)
			break;
		if (tok != TS_JSON_STR) {
			rc = bad(st, "an alias string");
			goto out;
		}
		if (all.len)
			ts_sb_addc(&all, ',');
		if ((rc = ts_json_unescape(st->j.s, st->j.n, 0, &all))) {
			rc = bad(st, "a valid alias string");
			goto out;
		}
	}
	if (all.len > MAX_ALIASES_BYTES) {
		rc = ts_err_at(st->err, TS_ELIMIT, st->name, (int64_t)st->j.tok_offset,
			       ts_json_line_of(&st->j, st->j.tok_offset),
			       "aliases longer than %d bytes", MAX_ALIASES_BYTES);
		goto out;
	}
	if (all.failed) {
		rc = ts_err_set(st->err, TS_ENOMEM, "out of memory");
		goto out;
	}
	*out = ts_arena_strndup(&st->c->arena, all.buf, all.len);
	if (!*out)
		rc = ts_err_set(st->err, TS_ENOMEM, "out of memory");
out:
	ts_sb_release(&all);
	return rc;
}

/* "peak_tflops": {"bf16": 512, "fp4": null, "fp8": "unsupported"} */
static int take_peaks(struct ustate *st, int tok, struct ts_peak *peaks, int *given)
{
	if (tok != TS_JSON_OBJ)
		return bad(st, "peak_tflops as an object {\"bf16\": TFLOPS, ...}");
	for (;;) {
		char key[16];
		int prec;

		tok = next(st);
		if (tok < 0)
			return tok;
		if (tok == TS_JSON_OBJ_END)
			return 0;
		size_t n = st->j.n < sizeof(key) - 1 ? st->j.n : sizeof(key) - 1;
		memcpy(key, st->j.s, n);
		key[n] = '\0';
		prec = st->j.n < sizeof(key) - 1 ? ts_precision_parse(key) : -1;
		if (prec < 0)
			return bad(st, "a precision key (fp32, tf32, bf16, fp16, fp8, int8, fp4)");
		tok = next(st);
		if (tok < 0)
			return tok;
		memset(&peaks[prec], 0, sizeof(peaks[prec]));
		if (tok == TS_JSON_NULL) {
			peaks[prec].state = TS_PEAK_UNKNOWN;
		} else if (tok == TS_JSON_STR && TS_JSON_IS(&st->j, "unsupported")) {
			peaks[prec].state = TS_PEAK_UNSUPPORTED;
		} else {
			int rc = take_num(st, tok, "a peak in TFLOP/s, null or \"unsupported\"",
					  &peaks[prec].tflops);
			if (rc)
				return rc;
			peaks[prec].state = TS_PEAK_KNOWN;
		}
		given[prec] = 1;
	}
}

static int has_alnum(const char *s)
{
	for (; *s; s++)
		if (isalnum((unsigned char)*s))
			return 1;
	return 0;
}

static int find_sku(struct ts_gpu_catalog *c, const char *sku, const char *aliases)
{
	const struct ts_gpu *g = ts_gpu_find(c, sku);
	const char *p = aliases, *comma;
	char one[128];

	while (!g && p && *p) {
		comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n < sizeof(one)) {
			memcpy(one, p, n);
			one[n] = '\0';
			g = ts_gpu_find(c, one);
		}
		p = comma ? comma + 1 : NULL;
	}
	return g ? (int)(g - c->v) : -1;
}

static int entry(struct ustate *st, int tok)
{
	struct ts_gpu e;
	struct ts_peak peaks[TS_PREC_COUNT];
	int given[TS_PREC_COUNT] = { 0 };
	int has_mem = 0, has_bw = 0, has_link_bw = 0, has_domain = 0;
	double mem = 0, bw = 0, link_bw = 0, domain = 0;
	uint64_t start = st->j.tok_offset;
	int rc, idx;

	memset(&e, 0, sizeof(e));
	memset(peaks, 0, sizeof(peaks));
	if (tok != TS_JSON_OBJ)
		return bad(st, "a GPU entry object");
	for (;;) {
		tok = next(st);
		if (tok < 0)
			return tok;
		if (tok == TS_JSON_OBJ_END)
			break;
		char key[32];
		size_t n = st->j.n < sizeof(key) - 1 ? st->j.n : sizeof(key) - 1;
		memcpy(key, st->j.s, n);
		key[n] = '\0';
		tok = next(st);
		if (tok < 0)
			return tok;
		if (strcmp(key, "sku") == 0)
			rc = take_str(st, tok, "sku as a string", &e.sku);
		else if (strcmp(key, "vendor") == 0)
			rc = take_str(st, tok, "vendor as a string", &e.vendor);
		else if (strcmp(key, "aliases") == 0)
			rc = take_aliases(st, tok, &e.aliases);
		else if (strcmp(key, "source") == 0)
			rc = take_str(st, tok, "source as a string", &e.source);
		else if (strcmp(key, "notes") == 0)
			rc = take_str(st, tok, "notes as a string", &e.notes);
		else if (strcmp(key, "link") == 0)
			rc = take_str(st, tok, "link as a string", &e.link);
		else if (strcmp(key, "peak_tflops") == 0)
			rc = take_peaks(st, tok, peaks, given);
		else if (strcmp(key, "memory_bytes") == 0) {
			rc = take_num(st, tok, "memory_bytes as a number", &mem);
			has_mem = 1;
		} else if (strcmp(key, "mem_bw_bytes_per_s") == 0) {
			rc = take_num(st, tok, "mem_bw_bytes_per_s as a number", &bw);
			has_bw = 1;
		} else if (strcmp(key, "link_bytes_per_s") == 0) {
			rc = take_num(st, tok, "link_bytes_per_s as a number", &link_bw);
			has_link_bw = 1;
		} else if (strcmp(key, "link_domain") == 0) {
			rc = take_num(st, tok, "link_domain as a number", &domain);
			has_domain = 1;
		} else
			rc = ts_json_skip(&st->j, tok, st->err);
		if (rc)
			return rc;
	}
	if (!e.sku)
		return ts_err_at(st->err, TS_EPARSE, st->name, (int64_t)start,
				 ts_json_line_of(&st->j, start), "GPU entry without \"sku\"");
	if (!has_alnum(e.sku))
		return ts_err_at(st->err, TS_EPARSE, st->name, (int64_t)start,
				 ts_json_line_of(&st->j, start),
				 "GPU entry \"sku\" needs a letter or digit");
	if (!e.source) {
		ts_sb_reset(&st->tmp);
		ts_sb_addf(&st->tmp, "user catalog %s", st->name);
		if (st->tmp.failed || !(e.source = ts_arena_strndup(&st->c->arena, st->tmp.buf,
								    st->tmp.len)))
			return ts_err_set(st->err, TS_ENOMEM, "out of memory");
	}
	for (int p = 0; p < TS_PREC_COUNT; p++)
		if (given[p])
			peaks[p].source = e.source;

	idx = find_sku(st->c, e.sku, e.aliases);
	if (idx < 0) {
		if (ts_grow((void **)&st->c->v, &st->c->cap, st->c->n + 1, sizeof(*st->c->v)))
			return ts_err_set(st->err, TS_ENOMEM, "out of memory");
		idx = (int)st->c->n++;
		memset(&st->c->v[idx], 0, sizeof(st->c->v[idx]));
		st->c->v[idx].sku = e.sku;
		st->c->v[idx].vendor = e.vendor ? e.vendor : "user";
		st->c->v[idx].source = e.source;
	}
	struct ts_gpu *g = &st->c->v[idx];
	g->user = 1;
	if (e.vendor)
		g->vendor = e.vendor;
	if (e.aliases)
		g->aliases = e.aliases;
	if (e.notes)
		g->notes = e.notes;
	if (e.link)
		g->link = e.link;
	for (int p = 0; p < TS_PREC_COUNT; p++)
		if (given[p])
			g->peak[p] = peaks[p];
	if (has_mem) {
		g->memory_bytes = (int64_t)mem;
		g->memory_note = NULL;
	}
	if (has_bw)
		g->mem_bw_bytes_per_s = bw;
	if (has_link_bw)
		g->link_bytes_per_s = link_bw;
	if (has_domain)
		g->link_domain = domain > 1e6 ? 1000000 : (int)domain;
	return 0;
}

int ts_gpu_catalog_parse(struct ts_gpu_catalog *c, const void *data, size_t n,
			 const char *name, struct ts_err *err)
{
	struct ustate st;
	int tok, rc = 0, found = 0, entries = 0;

	memset(&st, 0, sizeof(st));
	st.c = c;
	st.name = name;
	st.err = err;
	ts_sb_init(&st.tmp);
	ts_json_init_mem(&st.j, data, n, 0, name);
	tok = next(&st);
	if (tok < 0) {
		rc = tok;
		goto out;
	}
	if (tok != TS_JSON_OBJ) {
		rc = bad(&st, "a catalog object {\"gpus\": [...]}");
		goto out;
	}
	for (;;) {
		tok = next(&st);
		if (tok < 0) {
			rc = tok;
			goto out;
		}
		if (tok == TS_JSON_OBJ_END)
			break;
		int is_gpus = TS_JSON_IS(&st.j, "gpus");
		tok = next(&st);
		if (tok < 0) {
			rc = tok;
			goto out;
		}
		if (!is_gpus) {
			if ((rc = ts_json_skip(&st.j, tok, err)))
				goto out;
			continue;
		}
		if (tok != TS_JSON_ARR) {
			rc = bad(&st, "\"gpus\" as an array of entries");
			goto out;
		}
		found = 1;
		for (;;) {
			tok = next(&st);
			if (tok < 0) {
				rc = tok;
				goto out;
			}
			if (tok == TS_JSON_ARR_END)
				break;
			if (++entries > MAX_USER_ENTRIES) {
				rc = ts_err_at(err, TS_ELIMIT, name, (int64_t)st.j.tok_offset,
					       ts_json_line_of(&st.j, st.j.tok_offset),
					       "more than %d GPU entries", MAX_USER_ENTRIES);
				goto out;
			}
			if ((rc = entry(&st, tok)))
				goto out;
		}
	}
	tok = next(&st);
	if (tok < 0) {
		rc = tok;
		goto out;
	}
	if (!found)
		rc = ts_err_at(err, TS_EPARSE, name, 0, 1, "catalog has no \"gpus\" array");
out:
	ts_json_release(&st.j);
	ts_sb_release(&st.tmp);
	return rc;
}

int ts_gpu_catalog_load(struct ts_gpu_catalog *c, const char *path, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_read_all(&in, path, TS_DOC_MAX_BYTES, err)))
		return rc;
	rc = ts_gpu_catalog_parse(c, in.data, in.len, in.path, err);
	ts_input_release(&in);
	return rc;
}

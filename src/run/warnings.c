/*
 * warnings.c - the one warning type and the window object, with their
 * JSON and text forms, so every command writes them the same way.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/run.h"

void ts_warnings_init(struct ts_warnings *w)
{
	memset(w, 0, sizeof(*w));
	ts_arena_init(&w->arena);
}

void ts_warnings_release(struct ts_warnings *w)
{
	TS_VEC_RELEASE(w->v);
	ts_arena_release(&w->arena);
	memset(w, 0, sizeof(*w));
}

static const char *dup(struct ts_warnings *w, const char *s)
{
	return s ? ts_arena_strndup(&w->arena, s, strlen(s)) : NULL;
}

int ts_warnings_add(struct ts_warnings *w, const char *code, const char *file, int64_t offset,
		    int64_t iteration, const char *fmt, ...)
{
	struct ts_warning x;
	struct ts_sb sb;
	va_list ap;

	ts_sb_init(&sb);
	va_start(ap, fmt);
	ts_sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	x.code = dup(w, code);
	x.message = dup(w, sb.buf);
	x.file = dup(w, file);
	x.offset = offset;
	x.iteration = iteration;
	if (sb.failed || !x.code || !x.message || (file && !x.file) || TS_VEC_PUSH(w->v, x)) {
		ts_sb_release(&sb);
		w->failed = 1;
		return TS_ENOMEM;
	}
	ts_sb_release(&sb);
	return 0;
}

void ts_warnings_json(struct ts_jw *jw, const struct ts_warnings *w, size_t n)
{
	ts_jw_key(jw, "warnings");
	ts_jw_arr(jw);
	for (size_t i = 0; i < n && i < w->v.n; i++) {
		const struct ts_warning *x = &w->v.v[i];

		ts_jw_obj(jw);
		ts_jw_kstr(jw, "code", x->code);
		ts_jw_kstr(jw, "message", x->message);
		ts_jw_key(jw, "file");
		if (x->file)
			ts_jw_str(jw, x->file);
		else
			ts_jw_null(jw);
		ts_jw_key(jw, "byte_offset");
		if (x->offset >= 0)
			ts_jw_i64(jw, x->offset);
		else
			ts_jw_null(jw);
		ts_jw_key(jw, "iteration");
		if (x->iteration != TS_NO_INT)
			ts_jw_i64(jw, x->iteration);
		else
			ts_jw_null(jw);
		ts_jw_obj_end(jw);
	}
	ts_jw_arr_end(jw);
}

void ts_warnings_text(struct ts_sb *out, const struct ts_warnings *w, size_t n,
		      const char *pre, const char *post)
{
	for (size_t i = 0; i < n && i < w->v.n; i++)
		ts_sb_addf(out, "%swarning:%s %s\n", pre, post, w->v.v[i].message);
}

static void jw_iter(struct ts_jw *jw, const char *key, int64_t v)
{
	ts_jw_key(jw, key);
	if (v == TS_NO_INT)
		ts_jw_null(jw);
	else
		ts_jw_i64(jw, v);
}

void ts_window_json(struct ts_jw *jw, const struct ts_window_obj *w)
{
	ts_jw_key(jw, "window");
	ts_jw_obj(jw);
	jw_iter(jw, "first_iteration", w->first);
	jw_iter(jw, "last_iteration", w->last);
	ts_jw_ki64(jw, "steps", (int64_t)w->steps);
	ts_jw_kstr(jw, "method", w->method);
	ts_jw_key(jw, "excluded");
	ts_jw_arr(jw);
	for (size_t i = 0; i < w->nexcl; i++) {
		ts_jw_obj(jw);
		ts_jw_kstr(jw, "reason", w->excl[i].reason);
		ts_jw_ki64(jw, "first_iteration", w->excl[i].first);
		ts_jw_ki64(jw, "last_iteration", w->excl[i].last);
		ts_jw_ki64(jw, "steps", (int64_t)w->excl[i].steps);
		ts_jw_obj_end(jw);
	}
	ts_jw_arr_end(jw);
	ts_jw_obj_end(jw);
}

void ts_window_text(struct ts_sb *out, const struct ts_window_obj *w)
{
	if (w->first == TS_NO_INT) {
		ts_sb_adds(out, "none");
		return;
	}
	ts_sb_addf(out, "iterations %lld:%lld, %zu steps (%s", (long long)w->first,
		   (long long)w->last, w->steps, w->method);
	for (size_t i = 0; i < w->nexcl; i++)
		ts_sb_addf(out, "%s%s %lld:%lld", i ? ", " : "; left out: ", w->excl[i].reason,
			   (long long)w->excl[i].first, (long long)w->excl[i].last);
	ts_sb_addc(out, ')');
}

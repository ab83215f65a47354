/*
 * warnings.c - the one warning type and list, with its JSON and text
 * forms, so every command writes its warnings the same way.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/jsonw.h"

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
	x.line = 0;
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
		if (x->line > 0)
			ts_jw_ki64(jw, "line", x->line);
		ts_jw_obj_end(jw);
	}
	ts_jw_arr_end(jw);
}

void ts_warnings_text(struct ts_sb *out, const struct ts_warnings *w, size_t n,
		      const char *pre, const char *post)
{
	for (size_t i = 0; i < n && i < w->v.n; i++) {
		ts_sb_addf(out, "%swarning:%s %s", pre, post, w->v.v[i].message);
		if (w->v.v[i].line > 0)
			ts_sb_addf(out, " (line %lld)", (long long)w->v.v[i].line);
		ts_sb_addc(out, '\n');
	}
}

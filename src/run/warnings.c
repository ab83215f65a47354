/*
 * warnings.c - the window object's JSON and text forms, and the words of
 * an unused input, so every command writes them the same way (the warning
 * list is in src/json/warnings.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/run.h"

int ts_unused_input_warning(struct ts_warnings *w, const struct ts_run_input *in)
{
	if (!in->problem)
		return 0;
	if (in->role == TS_ROLE_BAD)
		return ts_warnings_add(w, "unused-input", in->path, -1, TS_NO_INT,
				       "%s cannot be classified and is not used (%s).", in->path,
				       in->problem);
	return ts_warnings_add(w, "unused-input", in->path, -1, TS_NO_INT, "%s: %s.", in->path,
			       in->problem);
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
	ts_sb_addf(out, "iterations %lld:%lld, %zu step%s (%s%s", (long long)w->first,
		   (long long)w->last, w->steps, w->steps == 1 ? "" : "s", w->method,
		   strcmp(w->method, "few-steps") == 0 ? ", no steady window" : "");
	for (size_t i = 0; i < w->nexcl; i++)
		ts_sb_addf(out, "%s%s %lld:%lld", i ? ", " : "; left out: ", w->excl[i].reason,
			   (long long)w->excl[i].first, (long long)w->excl[i].last);
	ts_sb_addc(out, ')');
}

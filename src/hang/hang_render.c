/*
 * hang_render.c - the two renderings of a hang analysis, side by side:
 * `--json` (schema trainscope.hang/1) and the table per incident.
 */
#include <stdlib.h>
#include <string.h>
#include "hang_int.h"
#include "trainscope/jsonw.h"
#include "trainscope/table.h"

static void jw_ranks(struct ts_jw *w, const char *key, const int64_t *v, size_t n)
{
	ts_jw_key(w, key);
	ts_jw_arr(w);
	for (size_t i = 0; i < n; i++)
		ts_jw_i64(w, v[i]);
	ts_jw_arr_end(w);
}

void ts_hang_json(const struct ts_hang_set *s, const struct ts_hang_result *r,
		  struct ts_sb *out, int pretty)
{
	struct ts_jw w;

	ts_jw_init(&w, out, pretty);
	ts_hang_jw(&w, s, r, 1);
	ts_sb_addc(out, '\n');
}

void ts_hang_jw(struct ts_jw *wp, const struct ts_hang_set *s, const struct ts_hang_result *r,
		int schema)
{
#define w (*wp)
	ts_jw_obj(&w);
	if (schema)
		ts_jw_kstr(&w, "schema", "trainscope.hang/1");
	ts_jw_kstr(&w, "backend", r->backend);
	ts_jw_kstr(&w, "vendor", r->vendor);
	ts_jw_kstr(&w, "vendor_evidence", r->vendor_why);
	ts_jw_ki64(&w, "files", (int64_t)s->files.n);
	ts_jw_ki64(&w, "dumps", (int64_t)s->dumps.n);
	{
		int64_t entries = 0;
		for (size_t i = 0; i < s->dumps.n; i++)
			entries += s->dumps.v[i].entries;
		ts_jw_ki64(&w, "dump_entries", entries);
		ts_jw_ki64(&w, "p2p_pending", (int64_t)r->p2p_pending);
	}
	ts_jw_key(&w, "incidents");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->incidents.n; i++) {
		const struct ts_hang_incident *in = &r->incidents.v[i];
		const struct ts_hang_pg *pg = in->pg >= 0 ? &s->pgs.v[in->pg] : NULL;
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "class", ts_hang_class_name(in->cls));
		ts_jw_key(&w, "pg");
		ts_jw_obj(&w);
		ts_jw_ki64_or_null(&w, "id", pg ? pg->id : -1, pg && pg->id >= 0);
		ts_jw_kstr(&w, "guid", pg ? pg->guid : NULL);
		ts_jw_kstr(&w, "desc", pg ? pg->desc : NULL);
		ts_jw_obj_end(&w);
		ts_jw_ki64_or_null(&w, "seq", in->seq, in->seq >= 0);
		ts_jw_kstr(&w, "op", in->op);
		ts_jw_kstr(&w, "op_kind", in->op ? ts_hang_op_name(in->kind) : NULL);
		ts_jw_ki64_or_null(&w, "numel_in", in->numel_in, in->numel_in >= 0);
		ts_jw_ki64_or_null(&w, "numel_out", in->numel_out, in->numel_out >= 0);
		ts_jw_ki64_or_null(&w, "timeout_ms", in->timeout_ms, in->timeout_ms >= 0);
		ts_jw_ki64_or_null(&w, "ran_for_ms", in->ran_for_ms, in->ran_for_ms >= 0);
		jw_ranks(&w, "ranks_reporting", in->reporting.v, in->reporting.n);
		jw_ranks(&w, "culprits", in->culprits.v, in->culprits.n);
		jw_ranks(&w, "missing_ranks", in->missing.v, in->missing.n);
		ts_jw_ki64_or_null(&w, "last_enqueued", in->last_enqueued, in->last_enqueued >= 0);
		ts_jw_ki64_or_null(&w, "last_completed", in->last_completed, in->last_completed >= 0);
		ts_jw_key(&w, "evidence");
		ts_jw_arr(&w);
		for (size_t k = 0; k < in->evs.n; k++) {
			const struct ts_hang_ev *e = &s->evs.v[in->evs.v[k]];
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "file", s->files.v[e->file]);
			ts_jw_ki64_or_null(&w, "line", e->line, e->line >= 0);
			ts_jw_kstr(&w, "text", e->text);
			ts_jw_obj_end(&w);
		}
		ts_jw_arr_end(&w);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "stragglers");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->stragglers.n; i++) {
		const struct ts_hang_straggler *z = &r->stragglers.v[i];
		ts_jw_obj(&w);
		ts_jw_ki64(&w, "rank", z->rank);
		ts_jw_kstr(&w, "pg_guid", z->pg >= 0 ? s->pgs.v[z->pg].guid : NULL);
		ts_jw_ki64(&w, "seq", z->seq);
		ts_jw_ki64(&w, "lag_ms", z->lag_ms);
		ts_jw_ki64(&w, "first_seq_lag_ms", z->first_lag_ms);
		ts_jw_ki64(&w, "groups", (int64_t)z->groups);
		ts_jw_ki64(&w, "clock_offset_ms", z->offset_ms);
		ts_jw_ki64(&w, "clock_offset_from_rank", z->offset_from);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "findings");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->incidents.n; i++)
		for (size_t k = 0; k < r->incidents.v[i].notes.n; k++) {
			ts_jw_obj(&w);
			ts_jw_ki64(&w, "incident", (int64_t)i + 1);
			ts_jw_kstr(&w, "text", r->incidents.v[i].notes.v[k]);
			ts_jw_obj_end(&w);
		}
	for (size_t i = 0; i < r->findings.n; i++) {
		ts_jw_obj(&w);
		ts_jw_key(&w, "incident");
		ts_jw_null(&w);
		ts_jw_kstr(&w, "text", r->findings.v[i]);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	if (schema) {
		struct ts_warnings warn;

		ts_warnings_init(&warn);
		if (ts_hang_warnings(s, &warn))
			w.out->failed = 1;
		ts_warnings_json(&w, &warn, warn.v.n);
		ts_warnings_release(&warn);
	}
	ts_jw_key(&w, "advice");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->advice.n; i++) {
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "knob", r->advice.v[i].knob);
		ts_jw_kstr(&w, "value", r->advice.v[i].value);
		ts_jw_kstr(&w, "why", r->advice.v[i].why);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_obj_end(&w);
#undef w
}

static void ranks_cell(struct ts_table *t, const int64_t *v, size_t n)
{
	struct ts_sb sb;
	ts_sb_init(&sb);
	hang_ranks_text(&sb, v, n);
	ts_table_cell(t, "%s", sb.len ? sb.buf : "-");
	ts_sb_release(&sb);
}

static void num_cell(struct ts_table *t, int64_t v)
{
	if (v < 0)
		ts_table_cell(t, "-");
	else
		ts_table_cell_i64(t, v);
}

void ts_hang_text(const struct ts_hang_set *s, const struct ts_hang_result *r, struct ts_sb *out)
{
	ts_sb_addf(out, "hang: %zu incident%s; backend %s, vendor %s (%s)\n", r->incidents.n,
		   r->incidents.n == 1 ? "" : "s", r->backend, r->vendor, r->vendor_why);
	if (!r->incidents.n && r->p2p_pending)
		ts_sb_addf(out, "no collective hang found, but %zu point-to-point op%s not completed "
			   "(findings): no peer's whole dump lacks the matching op, so none is blamed\n",
			   r->p2p_pending, r->p2p_pending == 1 ? " is" : "s are");
	else if (!r->incidents.n)
		ts_sb_adds(out, "no hang evidence: no timeout, desync, mismatch or stuck collective found\n");
	if (!r->incidents.n) {
		/* what was not read may hold the hang: a cut dump lost its newest
		 * entries, a rank without a dump said nothing */
		struct hang_i64v members = { 0 }, missing = { 0 };
		size_t cut = 0;

		for (size_t i = 0; i < s->dumps.n; i++)
			cut += s->dumps.v[i].entries_cut != 0;
		if (!hang_missing_dumps(s, &members, &missing) && (cut || missing.n)) {
			ts_sb_adds(out, "  (in what was read only:");
			if (cut)
				ts_sb_addf(out, " %zu dump%s cut, %s newest entries lost;", cut, cut == 1 ? " is" : "s are",
					   cut == 1 ? "its" : "their");
			if (missing.n)
				ts_sb_addf(out, " %zu rank%s no dump;", missing.n, missing.n == 1 ? " has" : "s have");
			ts_sb_adds(out, " see the findings)\n");
		}
		TS_VEC_RELEASE(members);
		TS_VEC_RELEASE(missing);
	}
	for (size_t i = 0; i < r->incidents.n; i++) {
		const struct ts_hang_incident *in = &r->incidents.v[i];
		const struct ts_hang_pg *pg = in->pg >= 0 ? &s->pgs.v[in->pg] : NULL;
		struct ts_table t;

		ts_sb_addf(out, "\nincident %zu: %s\n", i + 1, ts_hang_class_name(in->cls));
		ts_table_init(&t);
		ts_table_col(&t, "pg id", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "pg", NULL, TS_LEFT, 24);
		ts_table_col(&t, "seq", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "op", NULL, TS_LEFT, 28);
		ts_table_col(&t, "kind", NULL, TS_LEFT, 0);
		ts_table_col(&t, "numel in", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "numel out", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "timeout", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "ran for", "ms", TS_RIGHT, 0);
		ts_table_col(&t, "enqueued", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "completed", NULL, TS_RIGHT, 0);
		num_cell(&t, pg ? pg->id : -1);
		if (pg && (pg->guid || pg->desc))
			ts_table_cell(&t, "%s%s%s%s", pg->guid ? pg->guid : "", pg->desc ? "(" : "",
				      pg->desc ? pg->desc : "", pg->desc ? ")" : "");
		else
			ts_table_cell(&t, "-");
		num_cell(&t, in->seq);
		ts_table_cell(&t, "%s", in->op ? in->op : "-");
		ts_table_cell(&t, "%s", in->op ? ts_hang_op_name(in->kind) : "-");
		num_cell(&t, in->numel_in);
		num_cell(&t, in->numel_out);
		num_cell(&t, in->timeout_ms);
		num_cell(&t, in->ran_for_ms);
		num_cell(&t, in->last_enqueued);
		num_cell(&t, in->last_completed);
		ts_table_render(&t, out, 2);
		ts_table_release(&t);

		ts_table_init(&t);
		ts_table_col(&t, "ranks reporting", NULL, TS_LEFT, 0);
		ts_table_col(&t, "culprits", NULL, TS_LEFT, 0);
		ts_table_col(&t, "missing ranks", NULL, TS_LEFT, 0);
		ranks_cell(&t, in->reporting.v, in->reporting.n);
		ranks_cell(&t, in->culprits.v, in->culprits.n);
		ranks_cell(&t, in->missing.v, in->missing.n);
		ts_table_render(&t, out, 2);
		ts_table_release(&t);
		for (size_t k = 0; k < in->notes.n; k++)
			ts_sb_addf(out, "  - %s\n", in->notes.v[k]);
		if (in->evs.n)
			ts_sb_adds(out, "  evidence:\n");
		for (size_t k = 0; k < in->evs.n && k < 12; k++) {
			const struct ts_hang_ev *e = &s->evs.v[in->evs.v[k]];
			if (e->line >= 0)
				ts_sb_addf(out, "    %s:%lld: %s\n", s->files.v[e->file], (long long)e->line, e->text);
			else
				ts_sb_addf(out, "    %s: %s\n", s->files.v[e->file], e->text);
		}
		if (in->evs.n > 12)
			ts_sb_addf(out, "    ... %zu more (see --json)\n", in->evs.n - 12);
	}
	if (r->findings.n)
		ts_sb_adds(out, "\nfindings:\n");
	for (size_t i = 0; i < r->findings.n; i++)
		ts_sb_addf(out, "  - %s\n", r->findings.v[i]);
	if (r->advice.n)
		ts_sb_adds(out, "\nto make the next hang diagnosable:\n");
	for (size_t i = 0; i < r->advice.n; i++)
		ts_sb_addf(out, "  %s=%s  (%s)\n", r->advice.v[i].knob, r->advice.v[i].value, r->advice.v[i].why);
}

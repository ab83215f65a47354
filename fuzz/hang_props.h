/*
 * hang_props.h - properties every hang fuzz target asserts after a read
 * that succeeded: the analysis runs, its incidents use the fixed class
 * vocabulary, rank sets are sorted and unique, evidence indices are in
 * range, the exit code follows the incidents, and the JSON rendering is
 * well-formed JSON (checked with the project's strict tokenizer).
 */
#ifndef TS_FUZZ_HANG_PROPS_H
#define TS_FUZZ_HANG_PROPS_H

#include <stdlib.h>
#include "trainscope/hang.h"
#include "trainscope/json.h"

static void hang_sorted(const int64_t *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (v[i - 1] >= v[i])
			abort();
}

static void hang_check(struct ts_hang_set *s)
{
	struct ts_hang_result r;
	struct ts_err err;
	struct ts_sb sb;
	struct ts_json j;
	int tok, exit_code = 0;

	ts_err_init(&err);
	if (ts_hang_analyze(s, &r, &err)) {
		if (err.code != TS_ENOMEM)
			abort();
		ts_hang_result_release(&r);
		return;
	}
	for (size_t i = 0; i < r.incidents.n; i++) {
		const struct ts_hang_incident *in = &r.incidents.v[i];
		if ((unsigned)in->cls > TS_HANG_UNDECIDED || in->pg >= (int)s->pgs.n)
			abort();
		hang_sorted(in->reporting.v, in->reporting.n);
		hang_sorted(in->culprits.v, in->culprits.n);
		hang_sorted(in->missing.v, in->missing.n);
		for (size_t k = 0; k < in->evs.n; k++)
			if (in->evs.v[k] < 0 || (size_t)in->evs.v[k] >= s->evs.n ||
			    (k && in->evs.v[k - 1] >= in->evs.v[k]))
				abort();
		if (in->culprits.n || in->cls != TS_HANG_UNDECIDED)
			exit_code = 1;
	}
	if (exit_code != r.exit_code)
		abort();
	ts_sb_init(&sb);
	ts_hang_json(s, &r, &sb, 0);
	ts_hang_text(s, &r, &sb);
	if (!sb.failed) {
		/* the JSON is the first line of sb */
		size_t n = 0;
		while (n < sb.len && sb.buf[n] != '\n')
			n++;
		ts_json_init_mem(&j, sb.buf, n, 0, "hang.json");
		while ((tok = ts_json_next(&j, &err)) > 0)
			;
		if (tok < 0)
			abort();
		ts_json_release(&j);
	}
	ts_sb_release(&sb);
	ts_hang_result_release(&r);
}

#endif

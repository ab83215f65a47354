/*
 * diagnose_jsonl.c - the per-rank phase split of JSONL step metrics.
 *
 * The step-series reader (logs.h) keeps what every format shares (step
 * time, loss, tokens...). Deciding between the data, straggler and compute
 * walls from a log needs more: where inside the step the time went
 * (data_ms, fwd_ms, bwd_ms, comm_ms) and on which rank. Training scripts
 * that write one JSON object per step per rank carry exactly that, so this
 * reader takes those fields, line by line, and nothing else.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "trainscope/diagnose.h"
#include "trainscope/input.h"
#include "trainscope/json.h"

#define MAX_RECORDS 10000000

static void step_init(struct ts_diag_step *s)
{
	s->iteration = -1;
	s->step_ms = s->data_ms = s->fwd_ms = s->bwd_ms = s->comm_ms = NAN;
	s->loss = s->grad_norm = NAN;
	s->skipped = s->nan = -1;
}

static int num(struct ts_json *j, int tok, double *out)
{
	if (tok == TS_JSON_NUM)
		return ts_num_f64(j->s, j->n, out);
	if (tok == TS_JSON_NULL) {
		*out = NAN;
		return 0;
	}
	return TS_EPARSE;
}

/* One line: 1 record kept, 0 not a step record, negative error. */
static int parse_line(struct ts_diag *d, const char *line, size_t n, const char *path,
		      struct ts_err *err, uint64_t off, int64_t lineno)
{
	struct ts_json j;
	struct ts_diag_step s;
	struct ts_err e;
	double rank = 0, v;
	int tok, rc = 0, have_it = 0;

	step_init(&s);
	ts_err_init(&e);
	ts_json_init_mem(&j, line, n, TS_JSON_ALLOW_NAN | TS_JSON_LENIENT, path);
	tok = ts_json_next(&j, &e);
	if (tok != TS_JSON_OBJ) {
		rc = tok < 0 ? tok : ts_err_at(&e, TS_EPARSE, path, 0, -1, "the line is not an object");
		goto bad;
	}
	for (;;) {
		double *dst = NULL;
		int *flag = NULL;
		int is_iter = 0, is_rank = 0;

		tok = ts_json_next(&j, &e);
		if (tok == TS_JSON_OBJ_END)
			break;
		if (tok != TS_JSON_KEY) {
			rc = tok < 0 ? tok : TS_EPARSE;
			goto bad;
		}
		if (TS_JSON_IS(&j, "iteration") || TS_JSON_IS(&j, "step") || TS_JSON_IS(&j, "global_step"))
			is_iter = 1;
		else if (TS_JSON_IS(&j, "rank"))
			is_rank = 1;
		else if (TS_JSON_IS(&j, "step_ms"))
			dst = &s.step_ms;
		else if (TS_JSON_IS(&j, "data_ms"))
			dst = &s.data_ms;
		else if (TS_JSON_IS(&j, "fwd_ms"))
			dst = &s.fwd_ms;
		else if (TS_JSON_IS(&j, "bwd_ms"))
			dst = &s.bwd_ms;
		else if (TS_JSON_IS(&j, "comm_ms"))
			dst = &s.comm_ms;
		else if (TS_JSON_IS(&j, "lm_loss") || (TS_JSON_IS(&j, "loss") && isnan(s.loss)))
			dst = &s.loss;
		else if (TS_JSON_IS(&j, "grad_norm"))
			dst = &s.grad_norm;
		else if (TS_JSON_IS(&j, "skipped"))
			flag = &s.skipped;
		else if (TS_JSON_IS(&j, "nan"))
			flag = &s.nan;
		char key[32];
		snprintf(key, sizeof(key), "%.*s", (int)(j.n < 31 ? j.n : 31), j.s);
		tok = ts_json_next(&j, &e);
		if (tok < 0) {
			rc = tok;
			goto bad;
		}
		if (dst || is_iter || is_rank) {
			if (num(&j, tok, &v)) {
				rc = ts_err_at(&e, TS_EPARSE, path, (int64_t)j.tok_offset, -1,
					       "\"%s\" is not a number", key);
				goto bad;
			}
			if (dst)
				*dst = v;
			else if (is_iter && isfinite(v) && v >= 0 && v < 9e15) {
				s.iteration = (int64_t)v;
				have_it = 1;
			} else if (is_rank && isfinite(v) && v >= 0 && v < 1e9)
				rank = v;
		} else if (flag && (tok == TS_JSON_TRUE || tok == TS_JSON_FALSE)) {
			*flag = tok == TS_JSON_TRUE;
		} else if ((rc = ts_json_skip(&j, tok, &e))) {
			goto bad;
		}
	}
	ts_json_release(&j);
	if (!have_it)
		return 0;
	{
		struct ts_diag_rank_steps *r = ts_diag_rank(d, (int64_t)rank);
		if (!r || TS_VEC_PUSH(r->steps, s))
			return ts_err_set(err, TS_ENOMEM, "out of memory reading %s", path);
	}
	return 1;
bad:
	ts_json_release(&j);
	return ts_err_at(err, rc == TS_ETRUNC ? TS_ETRUNC : TS_EPARSE, path,
			 (int64_t)off + (e.offset >= 0 ? e.offset : 0), lineno,
			 "expected one JSON object per line (step metrics): %s", e.msg);
}

static int read_input(struct ts_diag *d, struct ts_input *in, const char *path,
		      struct ts_err *err)
{
	const char *line;
	size_t n, kept = 0;
	uint64_t off;
	int64_t lineno = 0;
	int rc;

	while ((rc = ts_input_getline(in, &line, &n, &off, err)) == 1) {
		lineno++;
		while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
			n--;
		if (!n)
			continue;
		rc = parse_line(d, line, n, path, err, off, lineno);
		if (rc == TS_ETRUNC && in->eof) {
			/* a last line cut by a crash: keep what came before it */
			ts_err_init(err);
			rc = 0;
			break;
		}
		if (rc < 0)
			return rc == TS_ETRUNC ? TS_EPARSE : rc;
		kept += (size_t)rc;
		if (kept > MAX_RECORDS)
			return ts_err_at(err, TS_ELIMIT, path, (int64_t)off, lineno,
					 "more than %d step records", MAX_RECORDS);
	}
	if (rc < 0)
		return rc;
	return 0;
}

int ts_diag_read_phases(struct ts_diag *d, const char *path, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_open(&in, path, err)))
		return rc;
	rc = read_input(d, &in, path, err);
	ts_input_release(&in);
	return rc;
}

int ts_diag_read_phases_mem(struct ts_diag *d, const void *data, size_t n, const char *name,
			    struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_open_mem(&in, data, n, name, err)))
		return rc;
	rc = read_input(d, &in, name, err);
	ts_input_release(&in);
	return rc;
}

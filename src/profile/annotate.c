/*
 * annotate.c - the trace plus trainscope's findings, for a timeline viewer.
 *
 * Why: numbers in a table are easier to trust once you can see the idle
 * gap or the exposed all-reduce on the timeline next to the kernels. The
 * original file is not re-serialised from the model (that would drop args
 * and metadata): a first streaming pass finds where the event array ends,
 * a second copies the bytes and inserts the finding events there. Memory
 * stays bounded by the input window, as in the reader.
 */
#include <stdio.h>
#include <string.h>
#include "trainscope/annotate.h"
#include "trainscope/atomic.h"
#include "trainscope/input.h"
#include "trainscope/json.h"
#include "trainscope/jsonw.h"
#include "trainscope/telemetry.h"

enum { TID_IDLE = 1, TID_COMM, TID_MEMCPY, TID_DATA, TID_STEPS, TID_WALL };

static void meta(struct ts_sb *o, int *first, const char *what, int tid, const char *name)
{
	ts_sb_addf(o, "%s{\"ph\":\"M\",\"pid\":%d,", *first ? "" : ",\n", TS_ANNOTATE_PID);
	if (tid)
		ts_sb_addf(o, "\"tid\":%d,", tid);
	ts_sb_addf(o, "\"name\":\"%s\",\"args\":{\"name\":\"", what);
	ts_json_escape(o, name, strlen(name));
	ts_sb_adds(o, "\"}}");
	*first = 0;
}

static void span(struct ts_sb *o, int *first, int tid, const char *name, int64_t s, int64_t e,
		 const char *detail)
{
	ts_sb_addf(o, "%s{\"ph\":\"X\",\"cat\":\"trainscope\",\"pid\":%d,\"tid\":%d,\"name\":\"",
		   *first ? "" : ",\n", TS_ANNOTATE_PID, tid);
	ts_json_escape(o, name, strlen(name));
	/* µs with ns decimals, exact from int64 ns */
	{
		uint64_t ms = s < 0 ? 0 - (uint64_t)s : (uint64_t)s;
		uint64_t d = (uint64_t)e - (uint64_t)s;
		ts_sb_addf(o, "\",\"ts\":%s%llu.%03llu,\"dur\":%llu.%03llu", s < 0 ? "-" : "",
			   (unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000),
			   (unsigned long long)(d / 1000), (unsigned long long)(d % 1000));
	}
	if (detail) {
		ts_sb_adds(o, ",\"args\":{\"finding\":\"");
		ts_json_escape(o, detail, strlen(detail));
		ts_sb_adds(o, "\"}");
	}
	ts_sb_addc(o, '}');
	*first = 0;
}

static void set_track(struct ts_sb *o, int *first, int tid, const char *name,
		      const struct ts_ivset *set, int64_t min_ns)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].e - set->v[i].s >= min_ns)
			span(o, first, tid, name, set->v[i].s, set->v[i].e, NULL);
}

/* Counter events ("ph":"C") for the telemetry samples in [lo, hi) of the
 * trace clock: one counter track per GPU with power, SM clock and
 * utilisation as its series. Unsupported and missing values are left out,
 * never drawn as 0. */
static void counters(struct ts_sb *o, const struct ts_telemetry *t, int64_t base_ns, int64_t lo,
		     int64_t hi)
{
	static const int series[] = { TS_TF_POWER_W, TS_TF_SM_CLOCK_MHZ, TS_TF_UTIL_PCT };
	char num[40];

	ts_sb_addf(o, ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\","
		   "\"args\":{\"name\":\"trainscope telemetry\"}}", TS_ANNOTATE_TELE_PID);
	for (size_t i = 0; i < t->samples.n; i++) {
		const struct ts_tele_sample *x = &t->samples.v[i];
		if (x->t_ns == TS_NO_TIME)
			continue;
		int64_t at = x->t_ns - base_ns;
		if (at < lo || at >= hi)
			continue;
		int any = 0;
		for (size_t k = 0; k < sizeof(series) / sizeof(series[0]); k++)
			any |= x->st[series[k]] == TS_TV_VALUE;
		if (!any)
			continue;
		uint64_t m = at < 0 ? 0 - (uint64_t)at : (uint64_t)at;
		ts_sb_addf(o, ",\n{\"ph\":\"C\",\"pid\":%d,\"tid\":0,\"name\":\"GPU ",
			   TS_ANNOTATE_TELE_PID);
		ts_json_escape(o, t->gpus.v[x->gpu].id, strlen(t->gpus.v[x->gpu].id));
		ts_sb_addf(o, "\",\"ts\":%s%llu.%03llu,\"args\":{", at < 0 ? "-" : "",
			   (unsigned long long)(m / 1000), (unsigned long long)(m % 1000));
		int f1 = 1;
		for (size_t k = 0; k < sizeof(series) / sizeof(series[0]); k++) {
			if (x->st[series[k]] != TS_TV_VALUE)
				continue;
			ts_fmt_f64(num, sizeof(num), x->v[series[k]]);
			ts_sb_addf(o, "%s\"%s\":%s", f1 ? "" : ",", ts_tf_name(series[k]), num);
			f1 = 0;
		}
		ts_sb_adds(o, "}}");
	}
}

void ts_annotate_events(struct ts_sb *o, const struct ts_annotate_info *ai)
{
	const struct ts_rank_prof *p = ai->prof;
	const struct ts_prof_tracks *k = ai->tracks;
	char buf[64];
	int first = 1;

	meta(o, &first, "process_name", 0, "trainscope findings");
	meta(o, &first, "thread_name", TID_IDLE, p->has_gpu ? "GPU idle gaps" : "host gaps (untraced)");
	meta(o, &first, "thread_name", TID_COMM, "exposed communication");
	meta(o, &first, "thread_name", TID_MEMCPY, "exposed memcpy");
	meta(o, &first, "thread_name", TID_DATA, "data loader");
	meta(o, &first, "thread_name", TID_STEPS, "outlier steps");
	meta(o, &first, "thread_name", TID_WALL, "wall verdict");
	set_track(o, &first, TID_IDLE, p->has_gpu ? "GPU idle" : "host gap", &k->idle,
		  TS_ANNOTATE_MIN_GAP_NS);
	set_track(o, &first, TID_COMM, "exposed comm", &k->exposed_comm, 0);
	set_track(o, &first, TID_MEMCPY, "exposed memcpy", &k->exposed_memcpy, 0);
	set_track(o, &first, TID_DATA, "data loader", &k->data, 0);
	for (size_t i = 0; i < p->steps.n; i++) {
		const struct ts_step_prof *st = &p->steps.v[i];
		if (!st->outlier)
			continue;
		snprintf(buf, sizeof(buf), "outlier step %lld", (long long)st->step);
		span(o, &first, TID_STEPS, buf, st->start_ns, st->start_ns + st->dur_ns, st->reason);
	}
	snprintf(buf, sizeof(buf), "rank wall: %s", ts_wall_name(p->verdict.wall));
	span(o, &first, TID_WALL, buf, p->t0_ns, p->t0_ns + p->window_ns, p->verdict.evidence);
	if (ai->job) {
		snprintf(buf, sizeof(buf), "job wall: %s", ts_wall_name(ai->job->wall.wall));
		span(o, &first, TID_WALL, buf, p->t0_ns, p->t0_ns + p->window_ns,
		     ai->job->wall.evidence);
	}
	if (ai->tele)
		counters(o, ai->tele, ai->base_ns, p->t0_ns - 1000000000LL,
			 p->t0_ns + p->window_ns + 1000000000LL);
}

/* Where pass 1 found the document's parts (byte offsets of the input). */
struct doc_ends {
	uint64_t at;            /* the event array's ']', or the end of its last
				 * complete element when the file is cut inside it */
	int nonempty;           /* the array holds elements */
	const char *close;      /* cut inside the array: what closes the document
				 * after the findings ("]}" or "]"), else NULL */
	uint64_t tail_end;      /* the input from at is copied up to here
				 * (UINT64_MAX: to its end) */
	const char *tail_close; /* cut after the array: what closes the document
				 * after the last complete member ("}"), else NULL */
};

/*
 * Pass 1: find the event array and check the whole document, so that what
 * is copied around the findings is well-formed JSON: a syntax error
 * anywhere (the reader may have read past it with recovery, and a second
 * traceEvents array is read too) is TS_EPARSE. A file cut inside the
 * event array is closed after its last complete element; one cut after
 * the array keeps its complete top-level members and is closed after them.
 */
static int find_end(const char *path, struct doc_ends *e, struct ts_err *err)
{
	struct ts_input in;
	struct ts_json j;
	int rc, tok, legacy = 0, found = 0;
	uint64_t last_end = 0;

	memset(e, 0, sizeof(*e));
	e->tail_end = UINT64_MAX;
	if ((rc = ts_input_open(&in, path, err)))
		return rc;
	ts_json_init_input(&j, &in, TS_JSON_LENIENT | TS_JSON_ALLOW_NAN);
	tok = ts_json_next(&j, err);
	if (tok == TS_JSON_ARR) {
		legacy = 1;
		found = 1;
	} else if (tok == TS_JSON_OBJ) {
		while ((tok = ts_json_next(&j, err)) == TS_JSON_KEY) {
			int is_ev = TS_JSON_IS(&j, "traceEvents");
			tok = ts_json_next(&j, err);
			if (tok < 0)
				break;
			if (is_ev && tok == TS_JSON_ARR) {
				found = 1;
				break;
			}
			if ((rc = ts_json_skip(&j, tok, err)))
				break;
		}
	}
	if (!found) {
		rc = tok < 0 ? tok : ts_err_at(err, TS_EPARSE, path, (int64_t)j.tok_offset, -1,
						 "expected a trace object with a traceEvents array");
		goto out;
	}
	last_end = ts_json_offset(&j);
	for (;;) {
		tok = ts_json_next(&j, err);
		if (tok == TS_JSON_ARR_END) {
			e->at = j.tok_offset;
			break;
		}
		if (tok >= 0 && tok != TS_JSON_EOF)
			rc = ts_json_skip(&j, tok, err);
		else
			rc = tok == TS_JSON_EOF ? TS_ETRUNC : tok;
		if (rc == TS_ETRUNC) {
			/* cut inside the event list: close it after the last element */
			e->at = last_end;
			e->close = legacy ? "]\n" : "]}\n";
			ts_err_init(err);
			rc = 0;
			goto out;
		}
		if (rc)
			goto out;
		e->nonempty = 1;
		last_end = ts_json_offset(&j);
	}
	/* the rest: the members after the array, then nothing */
	last_end = ts_json_offset(&j);
	uint64_t keep = last_end;
	int last_num = 0;
	while (!legacy && (tok = ts_json_next(&j, err)) == TS_JSON_KEY) {
		if ((tok = ts_json_next(&j, err)) < 0)
			break;
		last_num = tok == TS_JSON_NUM;
		if ((tok = ts_json_skip(&j, tok, err)) < 0)
			break;
		keep = last_end;
		last_end = ts_json_offset(&j);
	}
	if (tok >= 0)
		tok = ts_json_next(&j, err);
	if (tok == TS_ETRUNC && !legacy) {
		/* a number that ends at the last byte may be cut ("1727" of
		 * "17277..."); the tokenizer read to the end, so the input's
		 * window ends there */
		e->tail_end = last_num && last_end == in.base + in.len ? keep : last_end;
		e->tail_close = "\n}\n";
		ts_err_init(err);
	} else if (tok != TS_JSON_EOF) {
		rc = tok < 0 ? tok : ts_err_at(err, TS_EPARSE, path, (int64_t)j.tok_offset, -1,
					       "expected the end of the trace");
	}
out:
	ts_json_release(&j);
	ts_input_release(&in);
	return rc;
}

static int copy_range(struct ts_input *in, FILE *fp, uint64_t *pos, uint64_t until,
		      struct ts_err *err)
{
	for (;;) {
		size_t off = (size_t)(*pos - in->base);
		size_t avail = in->len - off;
		size_t take = avail;
		int64_t got;
		if (until != UINT64_MAX && *pos + take > until)
			take = (size_t)(until - *pos);
		if (take && fwrite(in->data + off, 1, take, fp) != take)
			return ts_err_set(err, TS_EIO, "write failed");
		*pos += take;
		if (*pos == until)
			return 0;
		got = ts_input_more(in, in->len, err);
		if (got < 0)
			return (int)got;
		if (got == 0)
			return until == UINT64_MAX ? 0 : ts_err_set(err, TS_EIO, "%s: input shrank while copying", in->path);
	}
}

int ts_annotate_write(const char *out_path, const char *in_path,
		      const struct ts_annotate_info *ai, struct ts_err *err)
{
	struct ts_atomic a;
	struct ts_input in;
	struct ts_sb ev;
	struct doc_ends e;
	uint64_t pos = 0;
	int rc, opened = 0;

	memset(&a, 0, sizeof(a));
	ts_sb_init(&ev);
	if ((rc = find_end(in_path, &e, err)))
		goto done;
	ts_annotate_events(&ev, ai);
	if (ev.failed) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory building the annotation");
		goto done;
	}
	if ((rc = ts_input_open(&in, in_path, err)))
		goto done;
	opened = 1;
	if ((rc = ts_atomic_open(&a, out_path, err)))
		goto done;
	if ((rc = copy_range(&in, a.fp, &pos, e.at, err)))
		goto done;
	if (fputs(e.nonempty ? ",\n" : "\n", a.fp) < 0 || fwrite(ev.buf, 1, ev.len, a.fp) != ev.len ||
	    fputs(e.close ? e.close : "\n", a.fp) < 0) {
		rc = ts_err_set(err, TS_EIO, "%s: write failed", out_path);
		goto done;
	}
	if (!e.close && (rc = copy_range(&in, a.fp, &pos, e.tail_end, err)))
		goto done;
	if (e.tail_close && fputs(e.tail_close, a.fp) < 0) {
		rc = ts_err_set(err, TS_EIO, "%s: write failed", out_path);
		goto done;
	}
	rc = ts_atomic_commit(&a, err);
done:
	if (rc)
		ts_atomic_abort(&a);
	if (opened)
		ts_input_release(&in);
	ts_sb_release(&ev);
	return rc;
}

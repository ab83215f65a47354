/*
 * diff_annotate.c - the annotated Perfetto file of `diff --annotate`: the
 * two sides' compared steps stacked, aligned at step start, with delta
 * tracks for the rows that moved.
 *
 * Why a new file and not the trace plus tracks (src/profile/annotate.c):
 * two traces on two clocks cannot share one timeline unless their events
 * are moved, so here the events are re-emitted from the model (name, cat,
 * ts, dur, track), shifted into one slot per step pair. The output is
 * streamed through a bounded buffer; no allocation per event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/atomic.h"
#include "trainscope/diffcompat.h"
#include "trainscope/jsonw.h"

#define GPU_TID_BASE 1000000000LL   /* tid of GPU stream N: base + N */
#define STEP_TID 999999999LL        /* the "compared steps" track */
#define FLUSH_BYTES (1u << 20)

struct out {
	struct ts_atomic a;
	struct ts_sb sb;
	int first;
	int failed;
};

static void flush(struct out *o, int force)
{
	if (o->sb.len == 0 || (!force && o->sb.len < FLUSH_BYTES))
		return;
	if (o->sb.failed || fwrite(o->sb.buf, 1, o->sb.len, o->a.fp) != o->sb.len)
		o->failed = 1;
	ts_sb_reset(&o->sb);
}

static void sep(struct out *o)
{
	ts_sb_adds(&o->sb, o->first ? "\n" : ",\n");
	o->first = 0;
}

/* us with ns decimals, exact from int64 ns */
static void us(struct ts_sb *sb, int64_t ns)
{
	uint64_t m = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;

	ts_sb_addf(sb, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(m / 1000),
		   (unsigned long long)(m % 1000));
}

static void meta(struct out *o, int pid, int64_t tid, const char *what, const char *name)
{
	sep(o);
	ts_sb_addf(&o->sb, "{\"ph\":\"M\",\"pid\":%d,", pid);
	if (tid != TS_NONE)
		ts_sb_addf(&o->sb, "\"tid\":%lld,", (long long)tid);
	ts_sb_addf(&o->sb, "\"name\":\"%s\",\"args\":{\"name\":\"", what);
	ts_json_escape(&o->sb, name, strlen(name));
	ts_sb_adds(&o->sb, "\"}}");
}

static void sort_index(struct out *o, int pid, int64_t tid, int64_t idx)
{
	sep(o);
	ts_sb_addf(&o->sb, "{\"ph\":\"M\",\"pid\":%d,", pid);
	if (tid != TS_NONE)
		ts_sb_addf(&o->sb, "\"tid\":%lld,\"name\":\"thread_sort_index\",", (long long)tid);
	else
		ts_sb_adds(&o->sb, "\"name\":\"process_sort_index\",");
	ts_sb_addf(&o->sb, "\"args\":{\"sort_index\":%lld}}", (long long)idx);
}

/* Opens a complete event; the caller may add ",\"args\":{...}" and must
 * close it with '}'. */
static void span_open(struct out *o, int pid, int64_t tid, const char *cat, size_t catlen,
		      const char *name, size_t namelen, int64_t ts, int64_t dur)
{
	sep(o);
	ts_sb_addf(&o->sb, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%lld,\"cat\":\"", pid, (long long)tid);
	ts_json_escape(&o->sb, cat, catlen);
	ts_sb_adds(&o->sb, "\",\"name\":\"");
	ts_json_escape(&o->sb, name, namelen);
	ts_sb_adds(&o->sb, "\",\"ts\":");
	us(&o->sb, ts);
	ts_sb_adds(&o->sb, ",\"dur\":");
	us(&o->sb, dur);
}

static int is_gpu(int cat)
{
	return cat == TS_CAT_KERNEL || cat == TS_CAT_MEMCPY || cat == TS_CAT_MEMSET ||
	       cat == TS_CAT_GPU_USER_ANNOTATION;
}

/* a + b for a, b >= 0, saturated at INT64_MAX (slots of steps of up to
 * 2^62 ns each, ids as large as a trace writes them) */
static int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int64_t plain_id(int64_t v)
{
	return v == TS_NONE || TS_IS_STRID(v) || v < 0 ? 0 : v;
}

struct ord {
	int64_t start;
	size_t k;
};

struct side {
	const struct ts_trace *t;
	int pid;
	const struct ord *order; /* pairs by step start */
	const int64_t *start, *end;
};

static int cmp_ord(const void *a, const void *b)
{
	const struct ord *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

static int ord_starts_by(const void *elem, const void *ts)
{
	return ((const struct ord *)elem)->start <= *(const int64_t *)ts;
}

/* Pair whose step holds ts, or npairs. */
static size_t pair_of(const struct side *s, size_t npairs, int64_t ts)
{
	/* the first ordered pair with start > ts */
	size_t lo = ts_lower_bound(s->order, npairs, sizeof(*s->order), &ts, ord_starts_by);

	if (lo == 0)
		return npairs;
	lo = s->order[lo - 1].k;
	return ts < s->end[lo] ? lo : npairs;
}

/* Every complete event of one side inside a compared step, shifted. */
static void side_events(struct out *o, const struct side *s, const int64_t *slot, size_t npairs,
			uint8_t *gpu_seen, size_t nseen)
{
	const struct ts_trace_events *ev = &s->t->ev;

	for (size_t i = 0; i < ev->n; i++) {
		int64_t tid;
		size_t k;
		uint32_t cs;
		int c = ev->cat[i];

		if (ev->ph[i] != 'X' || ts_ev_ts(ev, i) == TS_NONE || ts_ev_dur(ev, i) == TS_NONE ||
		    c == TS_CAT_PYTHON || c == TS_CAT_TRACE_SPAN || c == TS_CAT_FLOW)
			continue;
		k = pair_of(s, npairs, ts_ev_ts(ev, i));
		if (k == npairs)
			continue;
		if (is_gpu(c)) {
			int64_t st = plain_id(ts_ev_stream(ev, i) != TS_NONE ? ts_ev_stream(ev, i) : ts_ev_tid(ev, i));
			tid = sat_add(GPU_TID_BASE, st);
			if ((size_t)st < nseen && !gpu_seen[st]) {
				char nm[48];
				gpu_seen[st] = 1;
				snprintf(nm, sizeof(nm), "GPU stream %lld", (long long)st);
				meta(o, s->pid, tid, "thread_name", nm);
			}
		} else {
			tid = plain_id(ts_ev_tid(ev, i));
		}
		cs = ts_ev_cat_str(ev, i);
		span_open(o, s->pid, tid, cs == TS_NO_ID ? "" : ts_trace_str(s->t, cs),
			  cs == TS_NO_ID ? 0 : ts_intern_len(&s->t->strings, cs),
			  ts_trace_str(s->t, ev->name[i]),
			  ev->name[i] < s->t->strings.count ? ts_intern_len(&s->t->strings, ev->name[i]) : 0,
			  sat_add(ts_ev_ts(ev, i) - s->start[k], slot[k]), ts_ev_dur(ev, i));
		ts_sb_addc(&o->sb, '}');
		flush(o, 0);
	}
}

static void delta_label(char *buf, size_t size, const char *name, int64_t b, int64_t c)
{
	double d = (double)(c - b) / 1e6;

	if (b > 0)
		snprintf(buf, size, "%s %+.3f ms (%+.1f %%)", name, d, 100.0 * (double)(c - b) / (double)b);
	else
		snprintf(buf, size, "%s %+.3f ms (new)", name, d);
}

int ts_diff_annotate_write(const char *out_path, const struct ts_trace *base,
			   const struct ts_trace *cand, const struct ts_diff_step_pair *pairs,
			   size_t npairs, const struct ts_diff_moved *rows, size_t nrows,
			   struct ts_err *err)
{
	struct out o;
	struct side sd[2];
	int64_t *slot = NULL, *bs = NULL, *be = NULL, *cs = NULL, *ce = NULL, total = 0;
	struct ord *ob = NULL, *oc = NULL;
	uint8_t *seen = NULL;
	const size_t nseen = 4096;
	char label[600];
	int rc;

	if (npairs == 0)
		return ts_err_set(err, TS_EUSAGE, "annotated diff: no compared steps");
	for (size_t k = 0; k < npairs; k++)
		if (pairs[k].base_end_ns < pairs[k].base_start_ns ||
		    pairs[k].cand_end_ns < pairs[k].cand_start_ns)
			return ts_err_set(err, TS_EUSAGE,
					  "annotated diff: step pair %zu ends before it starts", k);
	slot = malloc(npairs * sizeof(*slot));
	bs = malloc(npairs * sizeof(*bs));
	be = malloc(npairs * sizeof(*be));
	cs = malloc(npairs * sizeof(*cs));
	ce = malloc(npairs * sizeof(*ce));
	ob = malloc(npairs * sizeof(*ob));
	oc = malloc(npairs * sizeof(*oc));
	seen = malloc(nseen);
	if (!slot || !bs || !be || !cs || !ce || !ob || !oc || !seen) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory writing %s", out_path);
		goto free_all;
	}
	for (size_t k = 0; k < npairs; k++) {
		int64_t lb = pairs[k].base_end_ns - pairs[k].base_start_ns;
		int64_t lc = pairs[k].cand_end_ns - pairs[k].cand_start_ns;
		slot[k] = total;
		total = sat_add(total, lb > lc ? lb : lc);
		bs[k] = pairs[k].base_start_ns;
		be[k] = pairs[k].base_end_ns;
		cs[k] = pairs[k].cand_start_ns;
		ce[k] = pairs[k].cand_end_ns;
		ob[k] = (struct ord){ bs[k], k };
		oc[k] = (struct ord){ cs[k], k };
	}
	ts_sort(ob, npairs, sizeof(*ob), cmp_ord);
	ts_sort(oc, npairs, sizeof(*oc), cmp_ord);
	sd[0] = (struct side){ base, TS_DIFF_ANN_PID_BASE, ob, bs, be };
	sd[1] = (struct side){ cand, TS_DIFF_ANN_PID_CAND, oc, cs, ce };

	memset(&o, 0, sizeof(o));
	ts_sb_init(&o.sb);
	o.first = 1;
	if ((rc = ts_atomic_open(&o.a, out_path, err)))
		goto free_all;
	ts_sb_adds(&o.sb, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
	meta(&o, TS_DIFF_ANN_PID_BASE, TS_NONE, "process_name", "baseline");
	meta(&o, TS_DIFF_ANN_PID_CAND, TS_NONE, "process_name", "candidate");
	meta(&o, TS_DIFF_ANN_PID_DELTA, TS_NONE, "process_name", "delta");
	for (int p = 1; p <= 3; p++)
		sort_index(&o, p, TS_NONE, p);
	for (int s = 0; s < 2; s++) {
		meta(&o, sd[s].pid, STEP_TID, "thread_name", "compared steps");
		sort_index(&o, sd[s].pid, STEP_TID, -1);
		for (size_t k = 0; k < npairs; k++) {
			int64_t it = s ? pairs[k].cand_iteration : pairs[k].base_iteration;
			char nm[64];
			int n = snprintf(nm, sizeof(nm), "step %lld", (long long)it);
			span_open(&o, sd[s].pid, STEP_TID, "trainscope", 10, nm, (size_t)n, slot[k],
				  sd[s].end[k] - sd[s].start[k]);
			ts_sb_addf(&o.sb, ",\"args\":{\"pair\":%zu,\"iteration\":%lld,"
				   "\"original_ts_us\":", k, (long long)it);
			us(&o.sb, sd[s].start[k]);
			ts_sb_adds(&o.sb, "}}");
		}
		memset(seen, 0, nseen);
		side_events(&o, &sd[s], slot, npairs, seen, nseen);
	}
	/* delta process: the step pairs, then one track per moved row */
	meta(&o, TS_DIFF_ANN_PID_DELTA, 0, "thread_name", "step delta");
	for (size_t k = 0; k < npairs; k++) {
		int64_t b = be[k] - bs[k], c = ce[k] - cs[k];
		char nm[64];
		int n;
		snprintf(nm, sizeof(nm), "step %lld/%lld", (long long)pairs[k].base_iteration,
			 (long long)pairs[k].cand_iteration);
		delta_label(label, sizeof(label), nm, b, c);
		n = (int)strlen(label);
		span_open(&o, TS_DIFF_ANN_PID_DELTA, 0, "trainscope", 10, label, (size_t)n, slot[k],
			  b > c ? b : c);
		ts_sb_addf(&o.sb, ",\"args\":{\"baseline_ns\":%lld,\"candidate_ns\":%lld,"
			   "\"delta_ns\":%lld}}", (long long)b, (long long)c, (long long)(c - b));
	}
	for (size_t r = 0; r < nrows; r++) {
		const char *name = rows[r].name ? rows[r].name : "";
		int64_t b = rows[r].baseline_ns, c = rows[r].candidate_ns;
		meta(&o, TS_DIFF_ANN_PID_DELTA, (int64_t)r + 1, "thread_name", name);
		delta_label(label, sizeof(label), name, b, c);
		span_open(&o, TS_DIFF_ANN_PID_DELTA, (int64_t)r + 1, "trainscope", 10, label,
			  strlen(label), 0, total);
		ts_sb_addf(&o.sb, ",\"args\":{\"baseline_ns\":%lld,\"candidate_ns\":%lld,"
			   "\"delta_ns\":%lld}}", (long long)b, (long long)c, (long long)(c - b));
		sep(&o);
		ts_sb_addf(&o.sb, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%lld,"
			   "\"cat\":\"trainscope\",\"ts\":0.000,\"name\":\"delta ", TS_DIFF_ANN_PID_DELTA,
			   (long long)r + 1);
		ts_json_escape(&o.sb, name, strlen(name));
		ts_sb_adds(&o.sb, "\"}");
		flush(&o, 0);
	}
	ts_sb_adds(&o.sb, "\n]}\n");
	flush(&o, 1);
	if (o.failed || o.sb.failed) {
		ts_atomic_abort(&o.a);
		rc = o.sb.failed ? ts_err_set(err, TS_ENOMEM, "out of memory writing %s", out_path)
				 : ts_err_set(err, TS_EIO, "%s: write failed", out_path);
	} else {
		rc = ts_atomic_commit(&o.a, err);
	}
	ts_sb_release(&o.sb);
free_all:
	free(slot);
	free(bs);
	free(be);
	free(cs);
	free(ce);
	free(ob);
	free(oc);
	free(seen);
	return rc;
}

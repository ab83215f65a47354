/*
 * tracelens.c - TraceLens's gpu_timeline, reproduced (tracelens.h).
 *
 * Why this module exists: many ROCm users quote TraceLens's GPU timeline,
 * and its numbers differ from trainscope's for reasons that are all
 * definitions (which events count, which window, which classes, float
 * arithmetic). Reproducing them exactly, apart from trainscope's own
 * breakdown, lets a user reconcile the two without running Python. The
 * rules are TraceLens's (see tracelens.h); nothing here is shared with
 * src/profile on purpose: a fix to trainscope's definitions must not move
 * these numbers.
 *
 * Memory: a few arrays proportional to the number of events, freed before
 * returning.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/table.h"
#include "trainscope/tracelens.h"

/* The double Python's json module makes of the decimal text ns/1000 (the
 * reader keeps times exactly in ns when the text has ns resolution). */
static double us_double(int64_t ns)
{
	char buf[48];
	uint64_t mag;

	if (ns > -(INT64_C(1) << 53) && ns < (INT64_C(1) << 53))
		return (double)ns / 1000.0; /* both exact: one correctly rounded division */
	mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	snprintf(buf, sizeof(buf), "%s%llu.%03llu", ns < 0 ? "-" : "",
		 (unsigned long long)(mag / 1000), (unsigned long long)(mag % 1000));
	return strtod(buf, NULL);
}

static const char *tstr(const struct ts_trace *t, uint32_t id)
{
	return id < t->strings.count ? ts_intern_str(&t->strings, id) : "";
}

static int cat_is(const struct ts_trace *t, size_t i, const char *c)
{
	return ts_ev_cat_str(&t->ev, i) != TS_NO_ID && strcmp(tstr(t, ts_ev_cat_str(&t->ev, i)), c) == 0;
}

enum { G_NONE = 0, G_KERNEL, G_MEMCPY, G_MEMSET };

static int gpu_cat(const struct ts_trace *t, size_t i)
{
	if (ts_ev_cat_str(&t->ev, i) == TS_NO_ID)
		return G_NONE;
	if (cat_is(t, i, "kernel"))
		return G_KERNEL;
	if (cat_is(t, i, "gpu_memcpy"))
		return G_MEMCPY;
	if (cat_is(t, i, "gpu_memset"))
		return G_MEMSET;
	return G_NONE;
}

static int is_runtime(const struct ts_trace *t, size_t i)
{
	return cat_is(t, i, "cuda_runtime") || cat_is(t, i, "cuda_driver");
}

static int contains_ci(const char *s, const char *pat)
{
	size_t m = strlen(pat);

	for (; *s; s++) {
		size_t k = 0;
		while (k < m && s[k] && (s[k] | 32) == (pat[k] | 32))
			k++;
		if (k == m)
			return 1;
	}
	return 0;
}

enum { K_COMP = 0, K_COMM, K_MEMCPY };

static int tl_class(const struct ts_trace *t, size_t i, int g)
{
	const char *nm = tstr(t, t->ev.name[i]);

	if (g == G_MEMCPY)
		return K_MEMCPY;
	if (g == G_KERNEL && (strncmp(nm, "MEMORY_COPY_", 12) == 0 ||
			      strncmp(nm, "__amd_rocclr_copyBuffer", 23) == 0))
		return K_MEMCPY;
	if (contains_ci(nm, "nccl") || contains_ci(nm, "rccl") || contains_ci(nm, "cross_device_reduce"))
		return K_COMM;
	return K_COMP;
}

/* ------------------------------------------------------------ linking */

struct key3 {
	int64_t pid, tid, id;
	uint32_t ev;
};

static int cmp_key3(const void *x, const void *y)
{
	const struct key3 *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return (a->ev > b->ev) - (a->ev < b->ev);
}

static int key3_not_above(const void *elem, const void *key)
{
	return cmp_key3(elem, key) <= 0;
}

static int key3_id_below(const void *elem, const void *id)
{
	return ((const struct key3 *)elem)->id < *(const int64_t *)id;
}

/* Last (in file order) entry with (pid, tid, id), or -1: Python's dict,
 * later events overwriting earlier ones. */
static int64_t find3(const struct key3 *v, size_t n, int64_t pid, int64_t tid, int64_t id)
{
	struct key3 k = { pid, tid, id, UINT32_MAX };
	size_t l = ts_lower_bound(v, n, sizeof(*v), &k, key3_not_above);

	if (l > 0 && v[l - 1].pid == pid && v[l - 1].tid == tid && v[l - 1].id == id)
		return v[l - 1].ev;
	return -1;
}

/* Flow (s or f) with this id, last in file order; -1 if none. */
static int64_t find_flow(const struct key3 *v, size_t n, int64_t id)
{
	return find3(v, n, 0, 0, id);
}

#define SPAN_LIM (INT64_C(1) << 61)

struct span {
	int64_t pid, tid, s, e;
};

static int cmp_span(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->s > b->s) - (a->s < b->s);
}

static int span_not_above(const void *elem, const void *key)
{
	return cmp_span(elem, key) <= 0;
}

/* 1 when [ts] lies in a recompute span of (pid, tid). Spans of a thread
 * nest or are disjoint, so scanning back from the last one starting at or
 * before ts finds an enclosing one. */
static int in_span(const struct span *v, size_t n, int64_t pid, int64_t tid, int64_t ts)
{
	struct span k = { pid, tid, ts, 0 };
	size_t l = ts_lower_bound(v, n, sizeof(*v), &k, span_not_above);

	while (l > 0) {
		const struct span *s = &v[--l];
		if (s->pid != pid || s->tid != tid)
			break;
		if (ts < s->e)
			return 1;
	}
	return 0;
}

/* ------------------------------------------------------------ metrics */

struct div {
	double s, e;
};

static int cmp_div(const void *x, const void *y)
{
	const struct div *a = x, *b = y;

	return (a->s > b->s) - (a->s < b->s);
}

/* Sort by start and merge (start <= last end merges), in place; returns
 * the merged count. */
static size_t merge(struct div *v, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0;
	ts_sort(v, n, sizeof(*v), cmp_div);
	for (size_t i = 1; i < n; i++) {
		if (v[i].s <= v[k].e) {
			if (v[i].e > v[k].e)
				v[k].e = v[i].e;
		} else {
			v[++k] = v[i];
		}
	}
	return k + 1;
}

/* out = b minus a (both merged, sorted); returns the count. out holds at
 * most nb + na pieces. */
static size_t subtract(struct div *out, const struct div *a, size_t na, const struct div *b,
		       size_t nb)
{
	size_t k = 0, ai = 0;

	for (size_t i = 0; i < nb; i++) {
		double cur = b[i].s, be = b[i].e;
		size_t j;
		while (ai < na && a[ai].e <= b[i].s)
			ai++;
		for (j = ai; j < na && a[j].s < be; j++) {
			if (a[j].s > cur)
				out[k++] = (struct div){ cur, be < a[j].s ? be : a[j].s };
			if (a[j].e > cur)
				cur = a[j].e;
			if (cur >= be)
				break;
		}
		if (cur < be)
			out[k++] = (struct div){ cur, be };
	}
	return k;
}

static double length(const struct div *v, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i].e - v[i].s;
	return sum;
}

/* One timeline over the events with sel[i] == want. */
static int timeline(const struct ts_trace *t, const uint8_t *cls, const uint8_t *sel, int want,
		    struct ts_tl_timeline *tl)
{
	size_t n = 0, nc[3] = { 0, 0, 0 };
	struct div *all, *c[3], *x, *y;
	int rc = TS_ENOMEM;

	for (size_t i = 0; i < t->ev.n; i++)
		if (sel[i] == want) {
			n++;
			nc[cls[i]]++;
		}
	memset(tl, 0, sizeof(*tl));
	tl->events = (int64_t)n;
	if (!n)
		return 0;
	all = malloc(n * sizeof(*all));
	c[0] = malloc((nc[0] + 1) * sizeof(**c));
	c[1] = malloc((nc[1] + 1) * sizeof(**c));
	c[2] = malloc((nc[2] + 1) * sizeof(**c));
	x = malloc((2 * n + 1) * sizeof(*x));
	y = malloc((2 * n + 1) * sizeof(*y));
	if (!all || !c[0] || !c[1] || !c[2] || !x || !y)
		goto out;
	n = nc[0] = nc[1] = nc[2] = 0;
	for (size_t i = 0; i < t->ev.n; i++)
		if (sel[i] == want) {
			double s = us_double(ts_ev_ts(&t->ev, i));
			struct div d = { s, s + us_double(ts_ev_dur(&t->ev, i)) };
			all[n++] = d;
			c[cls[i]][nc[cls[i]]++] = d;
		}
	n = merge(all, n);
	for (int k = 0; k < 3; k++)
		nc[k] = merge(c[k], nc[k]);
	tl->total_us = all[n - 1].e - all[0].s;
	tl->computation_us = length(c[K_COMP], nc[K_COMP]);
	tl->total_comm_us = length(c[K_COMM], nc[K_COMM]);
	tl->exposed_comm_us = length(x, subtract(x, c[K_COMP], nc[K_COMP], c[K_COMM], nc[K_COMM]));
	tl->total_memcpy_us = length(c[K_MEMCPY], nc[K_MEMCPY]);
	{
		size_t m = subtract(x, c[K_COMP], nc[K_COMP], c[K_MEMCPY], nc[K_MEMCPY]);
		tl->exposed_memcpy_us = length(y, subtract(y, c[K_COMM], nc[K_COMM], x, m));
	}
	tl->busy_us = length(all, n);
	tl->idle_us = tl->total_us - tl->busy_us;
	rc = 0;
out:
	free(all);
	free(c[0]);
	free(c[1]);
	free(c[2]);
	free(x);
	free(y);
	return rc;
}

/* ------------------------------------------------------------ analysis */

int ts_tracelens_analyze(const struct ts_trace *t, int recompute, struct ts_tracelens *tl,
			 struct ts_err *err)
{
	const struct ts_trace_events *ev = &t->ev;
	size_t n = ev->n, nk = 0, ns = 0, nf = 0, nsp = 0, ng = 0;
	struct key3 *keys = NULL, *fs = NULL, *ff = NULL, *gcorr = NULL;
	struct span *spans = NULL;
	uint8_t *cls = NULL, *sel = NULL;
	int64_t *launcher = NULL;
	int use_corr = 0, rc = TS_ENOMEM;

	memset(tl, 0, sizeof(*tl));
	/* the linking key: correlation when the first launch call carries it */
	for (size_t i = 0; i < n; i++)
		if (is_runtime(t, i) && contains_ci(tstr(t, ev->name[i]), "launch")) {
			use_corr = ts_ev_corr(ev, i) != TS_NONE;
			break;
		}
	tl->linking_correlation = use_corr;

	keys = malloc((n + 1) * sizeof(*keys));
	fs = malloc((n + 1) * sizeof(*fs));
	ff = malloc((n + 1) * sizeof(*ff));
	gcorr = malloc((n + 1) * sizeof(*gcorr));
	cls = calloc(n + 1, 1);
	sel = malloc(n + 1);
	launcher = malloc((n + 1) * sizeof(*launcher));
	if (!keys || !fs || !ff || !gcorr || !cls || !sel || !launcher)
		goto out;
	memset(sel, 0xff, n + 1);
	for (size_t i = 0; i < n; i++) {
		int64_t id = use_corr ? ts_ev_corr(ev, i) : ts_ev_extid(ev, i);
		launcher[i] = -1;
		if (cat_is(t, i, "ac2g")) {
			if (ts_ev_flow(ev, i) == TS_NONE)
				continue;
			if (ev->ph[i] == 's')
				fs[ns++] = (struct key3){ 0, 0, ts_ev_flow(ev, i), (uint32_t)i };
			else if (ev->ph[i] == 'f')
				ff[nf++] = (struct key3){ 0, 0, ts_ev_flow(ev, i), (uint32_t)i };
			continue;
		}
		if (ts_ev_pid(ev, i) != TS_NONE && ts_ev_tid(ev, i) != TS_NONE && id != TS_NONE)
			keys[nk++] = (struct key3){ ts_ev_pid(ev, i), ts_ev_tid(ev, i), id, (uint32_t)i };
		if (gpu_cat(t, i) && ts_ev_corr(ev, i) != TS_NONE)
			gcorr[ng++] = (struct key3){ 0, 0, ts_ev_corr(ev, i), (uint32_t)i };
	}
	ts_sort(keys, nk, sizeof(*keys), cmp_key3);
	ts_sort(fs, ns, sizeof(*fs), cmp_key3);
	ts_sort(ff, nf, sizeof(*ff), cmp_key3);
	ts_sort(gcorr, ng, sizeof(*gcorr), cmp_key3);

	/* mark: sel[i] = 0 for a linked GPU event (is_recompute decided below) */
	for (size_t i = 0; i < n; i++) {
		int64_t id = use_corr ? ts_ev_corr(ev, i) : ts_ev_extid(ev, i);
		const char *nm;
		int64_t f, g;
		if (!is_runtime(t, i) || id == TS_NONE)
			continue;
		nm = tstr(t, ev->name[i]);
		if (strcmp(nm, "cudaGraphLaunch") == 0 || strcmp(nm, "hipGraphLaunch") == 0) {
			/* every GPU event with that correlation */
			size_t l = ts_lower_bound(gcorr, ng, sizeof(*gcorr), &id, key3_id_below);
			for (; l < ng && gcorr[l].id == id; l++) {
				sel[gcorr[l].ev] = 0;
				launcher[gcorr[l].ev] = (int64_t)i;
			}
			continue;
		}
		if (find_flow(fs, ns, id) < 0 || (f = find_flow(ff, nf, id)) < 0)
			continue;
		g = find3(keys, nk, ts_ev_pid(ev, f), ts_ev_tid(ev, f), ts_ev_flow(ev, f));
		if (g >= 0 && gpu_cat(t, (size_t)g)) {
			sel[g] = 0;
			launcher[g] = (int64_t)i;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int g = gpu_cat(t, i);
		if (!g)
			continue;
		if (ts_ev_ts(ev, i) == TS_NONE || ts_ev_dur(ev, i) == TS_NONE || ts_ev_dur(ev, i) < 0) {
			sel[i] = 0xff;
			continue;
		}
		tl->gpu_events++;
		cls[i] = (uint8_t)tl_class(t, i, g);
		tl->linked += sel[i] == 0;
	}
	if (tl->linked == 0) {
		rc = ts_err_set(err, TS_EPARSE, "%s: --tracelens-compat: No GPU events found in the "
				"trace (TraceLens keeps only GPU events linked to a launch call by an "
				"ac2g flow; %lld GPU events, none linked)", t->path,
				(long long)tl->gpu_events);
		goto out;
	}
	if ((rc = timeline(t, cls, sel, 0, &tl->all)))
		goto out;
	if (recompute) {
		spans = malloc((n + 1) * sizeof(*spans));
		if (!spans) {
			rc = TS_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			const char *nm;
			/* spans within 2^61 ns (73 years): their ends stay in int64 */
			int64_t s0 = ts_ev_ts(ev, i), d = ts_ev_dur(ev, i);
			if (!cat_is(t, i, "python_function") || s0 < -SPAN_LIM || s0 > SPAN_LIM ||
			    d < 0 || d > SPAN_LIM)
				continue;
			nm = tstr(t, ev->name[i]);
			if (strstr(nm, "torch/utils/checkpoint.py") && strstr(nm, "recompute_fn"))
				spans[nsp++] = (struct span){ ts_ev_pid(ev, i), ts_ev_tid(ev, i), s0, s0 + d };
		}
		ts_sort(spans, nsp, sizeof(*spans), cmp_span);
		for (size_t i = 0; i < n; i++) {
			int64_t r = launcher[i];
			if (sel[i] != 0 || r < 0)
				continue;
			if (in_span(spans, nsp, ts_ev_pid(ev, r), ts_ev_tid(ev, r), ts_ev_ts(ev, r)))
				sel[i] = 1;
		}
		tl->recompute = 1;
		if ((rc = timeline(t, cls, sel, 0, &tl->split[0])) ||
		    (rc = timeline(t, cls, sel, 1, &tl->split[1])))
			goto out;
	}
	rc = 0;
out:
	if (rc == TS_ENOMEM)
		ts_err_set(err, rc, "%s: out of memory in --tracelens-compat", t->path);
	free(keys);
	free(fs);
	free(ff);
	free(gcorr);
	free(spans);
	free(cls);
	free(sel);
	free(launcher);
	return rc;
}

/* ------------------------------------------------------------ output */

static void jus6(struct ts_jw *w, const char *key, double us)
{
	ts_jw_key(w, key);
	ts_jw_fixed(w, us, 6);
}

static void json_timeline(struct ts_jw *w, const struct ts_tl_timeline *tl)
{
	if (!tl->events) {
		static const char *const keys[8] = {
			"computation_us", "exposed_comm_us", "exposed_memcpy_us", "busy_us", "idle_us",
			"total_us", "total_comm_us", "total_memcpy_us"
		};
		for (int i = 0; i < 8; i++) {
			ts_jw_key(w, keys[i]);
			ts_jw_null(w);
		}
		ts_jw_ki64(w, "events", 0);
		return;
	}
	jus6(w, "computation_us", tl->computation_us);
	jus6(w, "exposed_comm_us", tl->exposed_comm_us);
	jus6(w, "exposed_memcpy_us", tl->exposed_memcpy_us);
	jus6(w, "busy_us", tl->busy_us);
	jus6(w, "idle_us", tl->idle_us);
	jus6(w, "total_us", tl->total_us);
	jus6(w, "total_comm_us", tl->total_comm_us);
	jus6(w, "total_memcpy_us", tl->total_memcpy_us);
	ts_jw_ki64(w, "events", tl->events);
}

void ts_tracelens_write_json(const struct ts_tracelens *tl, struct ts_jw *w)
{
	ts_jw_obj(w);
	ts_jw_kstr(w, "source", "TraceLens gpu_timeline (AMD-AGI/TraceLens 171dd74 rules): "
		   "TraceLens's numbers, not trainscope's");
	ts_jw_kstr(w, "linking_key", tl->linking_correlation ? "correlation" : "External id");
	ts_jw_ki64(w, "gpu_events", tl->gpu_events);
	ts_jw_ki64(w, "linked_events", tl->linked);
	ts_jw_key(w, "gpu_timeline");
	ts_jw_obj(w);
	json_timeline(w, &tl->all);
	ts_jw_obj_end(w);
	ts_jw_key(w, "recompute");
	if (!tl->recompute) {
		ts_jw_null(w);
	} else {
		ts_jw_arr(w);
		for (int k = 0; k < 2; k++) {
			ts_jw_obj(w);
			ts_jw_kbool(w, "is_recompute", k);
			json_timeline(w, &tl->split[k]);
			ts_jw_obj_end(w);
		}
		ts_jw_arr_end(w);
	}
	ts_jw_obj_end(w);
}

static void table_rows(struct ts_table *tb, const struct ts_tl_timeline *tl, const char *block)
{
	static const char *const names[8] = {
		"computation_time", "exposed_comm_time", "exposed_memcpy_time", "busy_time",
		"idle_time", "total_time", "total_comm_time", "total_memcpy_time"
	};
	const double v[8] = { tl->computation_us, tl->exposed_comm_us, tl->exposed_memcpy_us,
			      tl->busy_us, tl->idle_us, tl->total_us, tl->total_comm_us,
			      tl->total_memcpy_us };

	if (!tl->events) {
		ts_table_cell(tb, "%s", block);
		ts_table_cell(tb, "no GPU events");
		ts_table_cell(tb, "-");
		ts_table_cell(tb, "-");
		return;
	}
	for (int i = 0; i < 8; i++) {
		ts_table_cell(tb, "%s", block);
		ts_table_cell(tb, "%s", names[i]);
		ts_table_cell_fixed(tb, v[i] / 1e3, 6);
		ts_table_cell_fixed(tb, tl->total_us > 0 ? 100 * v[i] / tl->total_us : 0, 2);
	}
}

void ts_tracelens_render(const struct ts_tracelens *tl, const char *file, struct ts_sb *out)
{
	struct ts_table tb;

	ts_table_init(&tb);
	ts_table_col(&tb, "block", NULL, TS_LEFT, 0);
	ts_table_col(&tb, "type", NULL, TS_LEFT, 0);
	ts_table_col(&tb, "time", "ms", TS_RIGHT, 0);
	ts_table_col(&tb, "percent", "%", TS_RIGHT, 0);
	table_rows(&tb, &tl->all, "all");
	if (tl->recompute) {
		table_rows(&tb, &tl->split[0], "is_recompute=False");
		table_rows(&tb, &tl->split[1], "is_recompute=True");
	}
	ts_sb_addf(out, "  %s: %lld of %lld GPU events linked (by %s)\n", file,
		   (long long)tl->linked, (long long)tl->gpu_events,
		   tl->linking_correlation ? "correlation" : "External id");
	ts_table_render(&tb, out, 2);
	ts_table_release(&tb);
}

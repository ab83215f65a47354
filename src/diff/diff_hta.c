/*
 * diff_hta.c - HolisticTraceAnalysis's TraceDiff (compare_traces, ops_diff)
 * on loaded traces, for `diff --hta-compat`.
 *
 * HTA's answer depends on its loader as much as on TraceDiff: the rows are
 * HTA's frame as its parser leaves it (src/hta/hta_frame.c; LabeledTrace
 * calls parse_traces only, so neither the common t0 nor the last-step
 * filter of `trace --hta-compat` applies), the iteration column is
 * HTA's add_iteration (a CPU row belongs to the last ProfilerStep, in row
 * order, whose [ts, ts + dur) holds its start; a GPU row to the row its
 * index_correlation names, when that index is > 0), and the row order of
 * the result is pandas' (each side grouped and sorted by name, control's
 * names first, then the names only the test side has). One pass over each
 * trace's rows; counts and sums per interned name in flat arrays.
 */
#include <stdlib.h>
#include <string.h>
#include "trainscope/diffcompat.h"
#include "trainscope/table.h"
#include "../hta/hta_int.h"

#define NO_ITER INT64_MIN   /* pandas NaN in the iteration column */

const char *ts_diff_hta_set_name(enum ts_diff_hta_set s)
{
	static const char *const n[] = { "added", "deleted", "increased", "decreased",
					 "unchanged" };
	return (unsigned)s < 5 ? n[s] : "unchanged";
}

void ts_diff_hta_init(struct ts_diff_hta *d)
{
	memset(d, 0, sizeof(*d));
	ts_arena_init(&d->arena);
}

void ts_diff_hta_release(struct ts_diff_hta *d)
{
	ts_arena_release(&d->arena);
	memset(d, 0, sizeof(*d));
}

static int is_memory_kernel(const char *s)
{
	/* HTA's MemoryKernelGroupingPattern: ^(Memcpy|Memset|dma) at the start */
	return strncmp(s, "Memcpy", 6) == 0 || strncmp(s, "Memset", 6) == 0 ||
	       strncmp(s, "dma", 3) == 0;
}

void ts_diff_hta_short_name(const char *name, struct ts_sb *out)
{
	size_t start = out->len, last;

	if (is_memory_kernel(name) || (!strchr(name, '<') && !strchr(name, '('))) {
		ts_sb_adds(out, name);
		return;
	}
	/* a stack of characters: '>' pops back to its '<', ')' to its '(' */
	for (const char *p = name; *p; p++) {
		char open;
		if (p[0] == '-' && p[1] == '>') {
			p++;
			continue;
		}
		if (*p != '>' && *p != ')') {
			ts_sb_addc(out, *p);
			continue;
		}
		open = *p == '>' ? '<' : '(';
		while (out->len > start && out->buf[out->len - 1] != open)
			out->len--;
		if (out->len > start)
			out->len--;
		if (!out->failed)
			out->buf[out->len] = 0;
	}
	if (out->failed)
		return;
	/* split(" ")[-1] */
	last = start;
	for (size_t i = start; i < out->len; i++)
		if (out->buf[i] == ' ')
			last = i + 1;
	memmove(out->buf + start, out->buf + last, out->len - last);
	out->len = start + (out->len - last);
	out->buf[out->len] = 0;
}

/* "ProfilerStep\s*#\s*(\d+)" at the start of s; -1 when it does not match. */
static int64_t step_number(const char *s)
{
	int64_t v = 0;
	int digits = 0;

	if (strncmp(s, "ProfilerStep", 12) != 0)
		return -1;
	s += 12;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v')
		s++;
	if (*s++ != '#')
		return -1;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v')
		s++;
	for (; *s >= '0' && *s <= '9' && digits < 18; s++, digits++)
		v = v * 10 + (*s - '0');
	return digits ? v : -1;
}

/* ProfilerStep spans of one frame, resolved into elementary segments. */
struct steps {
	int64_t *bound;  /* nb sorted distinct boundaries */
	int64_t *win;    /* per segment [bound[j], bound[j+1]): iteration or NO_ITER */
	size_t nb;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int steps_build(const struct hta_frame *f, struct steps *st, struct ts_err *err)
{
	size_t ns = 0, nb = 0;
	size_t *idx = NULL;
	int64_t *num = NULL;
	int rc = TS_ENOMEM;

	memset(st, 0, sizeof(*st));
	for (size_t k = 0; k < f->n; k++)
		if (strncmp(ts_trace_str(f->t, f->rows[k].name), "ProfilerStep", 12) == 0)
			ns++;
	idx = malloc((ns ? ns : 1) * sizeof(*idx));
	num = malloc((ns ? ns : 1) * sizeof(*num));
	st->bound = malloc((2 * ns + 1) * sizeof(*st->bound));
	st->win = malloc((2 * ns + 1) * sizeof(*st->win));
	if (!idx || !num || !st->bound || !st->win)
		goto out;
	ns = 0;
	for (size_t k = 0; k < f->n; k++) {
		const char *s = ts_trace_str(f->t, f->rows[k].name);
		if (strncmp(s, "ProfilerStep", 12) != 0)
			continue;
		num[ns] = step_number(s);
		if (num[ns] < 0) {
			rc = ts_err_set(err, TS_EUNSUPPORTED,
					"%s: HTA cannot parse the profiler step name \"%.80s\"",
					f->t->path, s);
			goto out;
		}
		idx[ns++] = k;
		st->bound[nb++] = f->rows[k].ts;
		st->bound[nb++] = f->rows[k].ts + f->rows[k].dur;
	}
	ts_sort(st->bound, nb, sizeof(*st->bound), cmp_i64);
	st->nb = 0;
	for (size_t j = 0; j < nb; j++)
		if (st->nb == 0 || st->bound[st->nb - 1] != st->bound[j])
			st->bound[st->nb++] = st->bound[j];
	/* the last step in row order that covers a segment wins */
	for (size_t j = 0; j + 1 < st->nb; j++) {
		st->win[j] = NO_ITER;
		for (size_t q = 0; q < ns; q++) {
			const struct hta_row *r = &f->rows[idx[q]];
			if (r->ts <= st->bound[j] && r->ts + r->dur >= st->bound[j + 1])
				st->win[j] = num[q];
		}
	}
	rc = 0;
out:
	free(idx);
	free(num);
	return rc;
}

/* HTA's _get_profiler_step(ts): -1 outside every step. */
static int64_t steps_at(const struct steps *st, int64_t ts)
{
	size_t lo;

	if (st->nb < 2 || ts < st->bound[0] || ts >= st->bound[st->nb - 1])
		return -1;
	/* bound[lo] <= ts < bound[lo + 1] */
	lo = ts_lower_bound(st->bound, st->nb, sizeof(*st->bound), &ts, ts_i64_not_above) - 1;
	return st->win[lo] == NO_ITER ? -1 : st->win[lo];
}

static void steps_release(struct steps *st)
{
	free(st->bound);
	free(st->win);
	memset(st, 0, sizeof(*st));
}

/* One side's groups: key -> count, Σ dur (ns), in an intern table. */
struct groups {
	struct ts_intern keys;
	TS_VEC(int64_t) count;
	TS_VEC(int64_t) sum_ns;
};

static int64_t hta_rank_of(const struct ts_trace *t)
{
	return t->meta.rank >= 0 && t->meta.rank_source == 1 ? t->meta.rank : 0;
}

static int has_i64(const int64_t *v, size_t n, int64_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

static int add_group(struct groups *g, const char *key, size_t len, int64_t count,
		     int64_t sum_ns)
{
	int64_t id = ts_intern(&g->keys, key, len);

	if (id < 0)
		return TS_ENOMEM;
	if ((size_t)id >= g->count.n) {
		if (TS_VEC_RESERVE(g->count, (size_t)id + 1) ||
		    TS_VEC_RESERVE(g->sum_ns, (size_t)id + 1))
			return TS_ENOMEM;
		g->count.v[id] = 0;
		g->sum_ns.v[id] = 0;
		g->count.n = g->sum_ns.n = (size_t)id + 1;
	}
	g->count.v[id] += count;
	g->sum_ns.v[id] += sum_ns;
	return 0;
}

/* The rows of one trace that HTA's extract_ops keeps, grouped. */
static int side_trace(const struct ts_trace *t, const int64_t *iters, size_t niters,
		      enum ts_diff_hta_device dev, int short_name, struct groups *g,
		      struct ts_err *err)
{
	struct hta_frame f;
	struct steps st;
	int64_t *cpu_iter = NULL, *cnt = NULL, *sum = NULL;
	int64_t cpu_op = ts_intern_find(&t->strings, "cpu_op", 6);
	struct ts_sb sb;
	int rc;

	ts_sb_init(&sb);
	memset(&st, 0, sizeof(st));
	rc = hta_frame_base(t, NULL, 1, &f);
	if (rc)
		goto out;
	if ((rc = steps_build(&f, &st, err)))
		goto out;
	rc = TS_ENOMEM;
	cpu_iter = malloc((t->ev.n ? t->ev.n : 1) * sizeof(*cpu_iter));
	cnt = calloc(t->strings.count + 1, sizeof(*cnt));
	sum = calloc(t->strings.count + 1, sizeof(*sum));
	if (!cpu_iter || !cnt || !sum)
		goto out;
	/* add_iteration's first two assignments (host side, stream-0 cpu_ops) */
	for (size_t i = 0; i < t->ev.n; i++)
		cpu_iter[i] = NO_ITER;
	for (size_t k = 0; k < f.n; k++) {
		const struct hta_row *r = &f.rows[k];
		if (r->stream < 0 ||
		    (r->stream == 0 && cpu_op >= 0 && ts_ev_cat_str(&t->ev, r->ev) == (uint32_t)cpu_op))
			cpu_iter[r->ev] = steps_at(&st, r->ts);
	}
	for (size_t k = 0; k < f.n; k++) {
		const struct hta_row *r = &f.rows[k];
		int64_t it;
		if (r->stream > 0)
			it = hta_icorr(r) > 0 && (uint64_t)r->icorr < t->ev.n ? cpu_iter[r->icorr] : -1;
		else
			it = cpu_iter[r->ev];
		if (it == NO_ITER || !has_i64(iters, niters, it))
			continue;
		if ((dev == TS_DIFF_HTA_CPU && r->stream != -1) ||
		    (dev == TS_DIFF_HTA_GPU && r->stream == -1))
			continue;
		cnt[r->name]++;
		sum[r->name] += r->dur;
	}
	rc = 0;
	for (uint32_t id = 0; id < t->strings.count && !rc; id++) {
		const char *s;
		if (!cnt[id])
			continue;
		s = ts_intern_str(&t->strings, id);
		if (short_name) {
			ts_sb_reset(&sb);
			ts_diff_hta_short_name(s, &sb);
			rc = sb.failed ? TS_ENOMEM : add_group(g, sb.buf, sb.len, cnt[id], sum[id]);
		} else {
			rc = add_group(g, s, ts_intern_len(&t->strings, id), cnt[id], sum[id]);
		}
	}
out:
	if (rc == TS_ENOMEM)
		ts_err_set(err, TS_ENOMEM, "out of memory in HTA's TraceDiff of %s", t->path);
	ts_sb_release(&sb);
	free(cpu_iter);
	free(cnt);
	free(sum);
	steps_release(&st);
	hta_frame_release(&f);
	return rc;
}

static int cmp_i64_asc(const void *a, const void *b)
{
	return cmp_i64(a, b);
}

/* Sorted distinct values of v into the arena. */
static int64_t *dup_sorted(struct ts_arena *a, const int64_t *v, size_t n, size_t *nout)
{
	int64_t *o = ts_arena_alloc(a, (n ? n : 1) * sizeof(*o));
	size_t m = 0;

	if (!o)
		return NULL;
	memcpy(o, v, n * sizeof(*o));
	ts_sort(o, n, sizeof(*o), cmp_i64_asc);
	for (size_t i = 0; i < n; i++)
		if (m == 0 || o[m - 1] != o[i])
			o[m++] = o[i];
	*nout = m;
	return o;
}

/* One side: validate ranks and iterations like HTA, group its rows. */
static int side_groups(const struct ts_diff_hta_side *s, const char *label, struct ts_arena *a,
		       enum ts_diff_hta_device dev, int short_name, struct groups *g,
		       int64_t **ranks_out, size_t *nranks_out, int64_t **iters_out,
		       size_t *niters_out, struct ts_err *err)
{
	TS_VEC(int64_t) have_iters = { 0 };
	int64_t first_rank = INT64_MAX;
	int64_t one_rank, one_iter;
	const int64_t *ranks = s->ranks, *iters = s->iterations;
	size_t nranks = s->nranks, niters = s->niterations;
	int rc = 0;

	if (!s->ntraces)
		return ts_err_set(err, TS_EUSAGE, "HTA TraceDiff: the %s side has no trace", label);
	for (size_t i = 0; i < s->ntraces && !rc; i++) {
		const struct ts_trace *t = s->traces[i];
		int64_t r = hta_rank_of(t);
		for (size_t j = 0; j < i; j++)
			if (hta_rank_of(s->traces[j]) == r)
				rc = ts_err_set(err, TS_EUSAGE,
						"HTA TraceDiff: %s and %s are both rank %lld of the %s side",
						s->traces[j]->path, t->path, (long long)r, label);
		if (r < first_rank)
			first_rank = r;
		/* LabeledTrace.iterations(): every ProfilerStep symbol */
		for (uint32_t id = 0; id < t->strings.count && !rc; id++) {
			const char *n = ts_intern_str(&t->strings, id);
			int64_t v;
			if (strncmp(n, "ProfilerStep", 12) != 0)
				continue;
			v = strncmp(n, "ProfilerStep#", 13) == 0 ? step_number(n) : -1;
			if (v < 0) {
				rc = ts_err_set(err, TS_EUNSUPPORTED,
						"%s: HTA cannot parse the profiler step name \"%.80s\"",
						t->path, n);
				break;
			}
			if (!has_i64(have_iters.v, have_iters.n, v) && TS_VEC_PUSH(have_iters, v))
				rc = ts_err_set(err, TS_ENOMEM, "out of memory");
		}
	}
	if (rc)
		goto out;
	if (!nranks) {
		one_rank = first_rank;
		ranks = &one_rank;
		nranks = 1;
	}
	for (size_t k = 0; k < nranks && !rc; k++) {
		int found = 0;
		for (size_t i = 0; i < s->ntraces; i++)
			found |= hta_rank_of(s->traces[i]) == ranks[k];
		if (!found)
			rc = ts_err_set(err, TS_EUSAGE, "HTA TraceDiff: the %s side has no rank %lld",
					label, (long long)ranks[k]);
	}
	if (!rc && !have_iters.n)
		rc = ts_err_set(err, TS_EUSAGE,
				"HTA TraceDiff: the %s side (%s) has no ProfilerStep, so no iteration",
				label, s->traces[0]->path);
	if (rc)
		goto out;
	if (!niters) {
		one_iter = have_iters.v[0];
		for (size_t k = 1; k < have_iters.n; k++)
			if (have_iters.v[k] < one_iter)
				one_iter = have_iters.v[k];
		iters = &one_iter;
		niters = 1;
	}
	for (size_t k = 0; k < niters && !rc; k++)
		if (!has_i64(have_iters.v, have_iters.n, iters[k]))
			rc = ts_err_set(err, TS_EUSAGE,
					"HTA TraceDiff: the %s side has no iteration %lld", label,
					(long long)iters[k]);
	if (rc)
		goto out;
	*ranks_out = dup_sorted(a, ranks, nranks, nranks_out);
	*iters_out = dup_sorted(a, iters, niters, niters_out);
	if (!*ranks_out || !*iters_out) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < s->ntraces && !rc; i++)
		if (has_i64(ranks, nranks, hta_rank_of(s->traces[i])))
			rc = side_trace(s->traces[i], iters, niters, dev, short_name, g, err);
out:
	TS_VEC_RELEASE(have_iters);
	return rc;
}

struct keyref {
	const char *s;
	uint32_t len, id;
};

static int cmp_key(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* ids of g in pandas' sorted index order (byte order = code point order) */
static uint32_t *sorted_ids(const struct groups *g)
{
	size_t n = g->keys.count;
	struct keyref *k = malloc((n ? n : 1) * sizeof(*k));
	uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids));

	if (!k || !ids) {
		free(k);
		free(ids);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++) {
		k[i].s = ts_intern_str(&g->keys, i);
		k[i].len = ts_intern_len(&g->keys, i);
		k[i].id = i;
	}
	ts_sort(k, n, sizeof(*k), cmp_key);
	for (size_t i = 0; i < n; i++)
		ids[i] = k[i].id;
	free(k);
	return ids;
}

static void groups_release(struct groups *g)
{
	ts_intern_release(&g->keys);
	TS_VEC_RELEASE(g->count);
	TS_VEC_RELEASE(g->sum_ns);
}

static void fill_row(struct ts_diff_hta_row *r)
{
	r->diff_counts = r->test_counts - r->control_counts;
	r->diff_us = r->test_us - r->control_us;
	r->change = r->diff_counts > 0 ? '+' : r->diff_counts < 0 ? '-' : '=';
	if (r->control_counts == 0 && r->test_counts > 0)
		r->set = TS_DIFF_HTA_ADDED;
	else if (r->control_counts > 0 && r->test_counts == 0)
		r->set = TS_DIFF_HTA_DELETED;
	else if (r->diff_counts > 0)
		r->set = TS_DIFF_HTA_INCREASED;
	else if (r->diff_counts < 0)
		r->set = TS_DIFF_HTA_DECREASED;
	else
		r->set = TS_DIFF_HTA_UNCHANGED;
}

int ts_diff_hta_compare(const struct ts_diff_hta_side *control,
			const struct ts_diff_hta_side *test,
			enum ts_diff_hta_device device, int use_short_name,
			struct ts_diff_hta *out, struct ts_err *err)
{
	struct groups gc, gt;
	uint32_t *oc = NULL, *ot = NULL;
	int rc;

	ts_diff_hta_init(out);
	out->device = device;
	out->short_name = use_short_name != 0;
	memset(&gc, 0, sizeof(gc));
	memset(&gt, 0, sizeof(gt));
	ts_intern_init(&gc.keys);
	ts_intern_init(&gt.keys);
	rc = side_groups(control, "control", &out->arena, device, out->short_name, &gc,
			 &out->control_ranks, &out->ncontrol_ranks, &out->control_iters,
			 &out->ncontrol_iters, err);
	if (!rc)
		rc = side_groups(test, "test", &out->arena, device, out->short_name, &gt,
				 &out->test_ranks, &out->ntest_ranks, &out->test_iters,
				 &out->ntest_iters, err);
	if (rc)
		goto out;
	rc = TS_ENOMEM;
	oc = sorted_ids(&gc);
	ot = sorted_ids(&gt);
	out->rows = ts_arena_alloc(&out->arena, (gc.keys.count + gt.keys.count + 1) *
						sizeof(*out->rows));
	if (!oc || !ot || !out->rows)
		goto out;
	/* pd.concat(axis=1, join="outer"): control's index, then test's new keys */
	for (size_t k = 0; k < gc.keys.count; k++) {
		struct ts_diff_hta_row *r = &out->rows[out->nrows++];
		uint32_t id = oc[k], len = ts_intern_len(&gc.keys, id);
		const char *s = ts_intern_str(&gc.keys, id);
		int64_t tid = ts_intern_find(&gt.keys, s, len);

		memset(r, 0, sizeof(*r));
		if (!(r->name = ts_arena_strndup(&out->arena, s, len)))
			goto out;
		r->control_counts = gc.count.v[id];
		r->control_us = (double)gc.sum_ns.v[id] / 1000.0;
		if (tid >= 0) {
			r->test_counts = gt.count.v[tid];
			r->test_us = (double)gt.sum_ns.v[tid] / 1000.0;
		}
		fill_row(r);
	}
	for (size_t k = 0; k < gt.keys.count; k++) {
		uint32_t id = ot[k], len = ts_intern_len(&gt.keys, id);
		const char *s = ts_intern_str(&gt.keys, id);
		struct ts_diff_hta_row *r;

		if (ts_intern_find(&gc.keys, s, len) >= 0)
			continue;
		r = &out->rows[out->nrows++];
		memset(r, 0, sizeof(*r));
		if (!(r->name = ts_arena_strndup(&out->arena, s, len)))
			goto out;
		r->test_counts = gt.count.v[id];
		r->test_us = (double)gt.sum_ns.v[id] / 1000.0;
		fill_row(r);
	}
	for (size_t k = 0; k < out->nrows; k++) {
		const struct ts_diff_hta_row *r = &out->rows[k];
		out->nchange[r->change == '+' ? 0 : r->change == '-' ? 1 : 2]++;
		out->nset[r->set]++;
	}
	rc = 0;
out:
	if (rc == TS_ENOMEM)
		ts_err_set(err, TS_ENOMEM, "out of memory in HTA's TraceDiff");
	free(oc);
	free(ot);
	groups_release(&gc);
	groups_release(&gt);
	return rc;
}

static const char *device_name(enum ts_diff_hta_device d)
{
	return d == TS_DIFF_HTA_CPU ? "CPU" : d == TS_DIFF_HTA_GPU ? "GPU" : "ALL";
}

static void i64_array(struct ts_jw *w, const char *key, const int64_t *v, size_t n)
{
	ts_jw_key(w, key);
	ts_jw_arr(w);
	for (size_t i = 0; i < n; i++)
		ts_jw_i64(w, v[i]);
	ts_jw_arr_end(w);
}

void ts_diff_hta_write_json(const struct ts_diff_hta *d, struct ts_jw *w)
{
	static const char change[3][2] = { "+", "-", "=" };

	ts_jw_obj(w);
	ts_jw_kstr(w, "device", device_name(d->device));
	ts_jw_kbool(w, "use_short_name", d->short_name);
	i64_array(w, "control_ranks", d->control_ranks, d->ncontrol_ranks);
	i64_array(w, "test_ranks", d->test_ranks, d->ntest_ranks);
	i64_array(w, "control_iterations", d->control_iters, d->ncontrol_iters);
	i64_array(w, "test_iterations", d->test_iters, d->ntest_iters);
	ts_jw_key(w, "counts_change_categories");
	ts_jw_obj(w);
	for (int c = 0; c < 3; c++)
		ts_jw_ki64(w, change[c], (int64_t)d->nchange[c]);
	ts_jw_obj_end(w);
	ts_jw_key(w, "ops_diff");
	ts_jw_obj(w);
	for (int s = 0; s < 5; s++) {
		ts_jw_key(w, ts_diff_hta_set_name((enum ts_diff_hta_set)s));
		ts_jw_arr(w);
		for (size_t k = 0; k < d->nrows; k++)
			if ((int)d->rows[k].set == s)
				ts_jw_str(w, d->rows[k].name);
		ts_jw_arr_end(w);
	}
	ts_jw_obj_end(w);
	ts_jw_key(w, "rows");
	ts_jw_arr(w);
	for (size_t k = 0; k < d->nrows; k++) {
		const struct ts_diff_hta_row *r = &d->rows[k];
		char ch[2] = { r->change, 0 };
		ts_jw_obj(w);
		ts_jw_kstr(w, "name", r->name);
		ts_jw_ki64(w, "control_counts", r->control_counts);
		ts_jw_ki64(w, "test_counts", r->test_counts);
		ts_jw_ki64(w, "diff_counts", r->diff_counts);
		ts_jw_kf64(w, "control_total_duration_us", r->control_us);
		ts_jw_kf64(w, "test_total_duration_us", r->test_us);
		ts_jw_kf64(w, "diff_duration_us", r->diff_us);
		ts_jw_kstr(w, "counts_change_category", ch);
		ts_jw_kstr(w, "ops_diff", ts_diff_hta_set_name(r->set));
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
	ts_jw_obj_end(w);
}

static void list_i64(struct ts_sb *out, const int64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ts_sb_addf(out, "%s%lld", i ? "," : "", (long long)v[i]);
}

void ts_diff_hta_render(const struct ts_diff_hta *d, struct ts_sb *out)
{
	struct ts_table tb;

	ts_sb_addf(out, "HTA TraceDiff (%s, %s names): control rank ", device_name(d->device),
		   d->short_name ? "short" : "full");
	list_i64(out, d->control_ranks, d->ncontrol_ranks);
	ts_sb_adds(out, " iteration ");
	list_i64(out, d->control_iters, d->ncontrol_iters);
	ts_sb_adds(out, ", test rank ");
	list_i64(out, d->test_ranks, d->ntest_ranks);
	ts_sb_adds(out, " iteration ");
	list_i64(out, d->test_iters, d->ntest_iters);
	ts_sb_addf(out, "\ncounts_change_categories: + %zu, - %zu, = %zu; ops_diff: added %zu, "
		   "deleted %zu, increased %zu, decreased %zu, unchanged %zu\n",
		   d->nchange[0], d->nchange[1], d->nchange[2], d->nset[0], d->nset[1], d->nset[2],
		   d->nset[3], d->nset[4]);
	ts_table_init(&tb);
	ts_table_col(&tb, "name", NULL, TS_LEFT, 80);
	ts_table_col(&tb, "control", "count", TS_RIGHT, 0);
	ts_table_col(&tb, "test", "count", TS_RIGHT, 0);
	ts_table_col(&tb, "diff", "count", TS_RIGHT, 0);
	ts_table_col(&tb, "control", "us", TS_RIGHT, 0);
	ts_table_col(&tb, "test", "us", TS_RIGHT, 0);
	ts_table_col(&tb, "diff", "us", TS_RIGHT, 0);
	ts_table_col(&tb, "change", NULL, TS_LEFT, 0);
	ts_table_col(&tb, "ops_diff", NULL, TS_LEFT, 0);
	for (size_t k = 0; k < d->nrows; k++) {
		const struct ts_diff_hta_row *r = &d->rows[k];
		ts_table_cell_text(&tb, r->name, strlen(r->name));
		ts_table_cell_i64(&tb, r->control_counts);
		ts_table_cell_i64(&tb, r->test_counts);
		ts_table_cell_i64(&tb, r->diff_counts);
		ts_table_cell_fixed(&tb, r->control_us, 3);
		ts_table_cell_fixed(&tb, r->test_us, 3);
		ts_table_cell_fixed(&tb, r->diff_us, 3);
		ts_table_cell(&tb, "%c", r->change);
		ts_table_cell(&tb, "%s", ts_diff_hta_set_name(r->set));
	}
	ts_table_render(&tb, out, 2);
	ts_table_release(&tb);
}

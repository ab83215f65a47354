/*
 * hta_metrics.c - HTA's analyzers over a preprocessed frame: temporal
 * breakdown, kernel-type overlap breakdown, per-kernel table, comm/comp
 * overlap, per-stream idle breakdown, kernel launch stats and queue length.
 *
 * Each function follows the pandas code path of HTA (f4d0062) step by step,
 * including the order rows are concatenated in before an unstable sort, so
 * ties resolve as they do in HTA. Times stay integer ns until they are
 * reported; reported values are us doubles.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hta_int.h"
#include "../profile/radix.h"

#define US(ns) ((double)(ns) / 1000.0)
#define KERNEL_WAIT_NS 30000   /* consecutive_kernel_delay = 30 (us) */
#define RUNTIME_CUTOFF_NS 50000
#define LAUNCH_DELAY_CUTOFF_NS 100000
#define NUM_KERNELS 10
#define DURATION_RATIO 0.8

struct ivl {
	struct hta_pool *pool;
	int64_t *ts, *end;
	size_t n;
};

static void ivl_release(struct ivl *m)
{
	hta_pool_put(m->pool, m->ts);
	hta_pool_put(m->pool, m->end);
	memset(m, 0, sizeof(*m));
}

/* merge_kernel_intervals() over the rows picked by sel (frame order). */
static int merge_rows(const struct hta_frame *f, int (*sel)(const struct hta_row *, int),
		      int arg, struct ivl *out)
{
	size_t n = 0, g = 0;
	int64_t *ts = NULL, *end = NULL, *gts = NULL, *gend = NULL, cmax = 0;
	uint32_t *idx = NULL, *gidx = NULL;
	int rc = TS_ENOMEM;

	memset(out, 0, sizeof(*out));
	out->pool = f->pool;
	for (size_t k = 0; k < f->n; k++)
		n += sel(&f->rows[k], arg) != 0;
	ts = hta_pool_get(f->pool, (n + 1) * sizeof(*ts));
	end = hta_pool_get(f->pool, (n + 1) * sizeof(*end));
	idx = hta_pool_get(f->pool, (n + 1) * sizeof(*idx));
	gts = hta_pool_get(f->pool, (n + 1) * sizeof(*gts));
	gend = hta_pool_get(f->pool, (n + 1) * sizeof(*gend));
	gidx = hta_pool_get(f->pool, (n + 1) * sizeof(*gidx));
	if (!ts || !end || !idx || !gts || !gend || !gidx)
		goto out;
	n = 0;
	for (size_t k = 0; k < f->n; k++)
		if (sel(&f->rows[k], arg)) {
			ts[n] = f->rows[k].ts;
			end[n] = f->rows[k].ts + f->rows[k].dur;
			n++;
		}
	/* gts is the sort's scratch until the groups overwrite it (g <= k) */
	memcpy(gts, ts, n * sizeof(*ts));
	hta_argsort(gts, n, idx, f->pool);
	for (size_t k = 0; k < n; k++) {
		int64_t t = ts[idx[k]], e = end[idx[k]];
		/* new group when ts > cummax(end of the rows before) */
		if (k == 0 || t > cmax) {
			gts[g] = t;
			gend[g] = e;
			g++;
		} else {
			if (t < gts[g - 1])
				gts[g - 1] = t;
			if (e > gend[g - 1])
				gend[g - 1] = e;
		}
		if (k == 0 || e > cmax)
			cmax = e;
	}
	/* end is the sort's scratch until the gather overwrites it */
	memcpy(end, gts, g * sizeof(*gts));
	hta_argsort(end, g, gidx, f->pool);
	out->ts = ts;
	out->end = end;
	for (size_t k = 0; k < g; k++) {
		out->ts[k] = gts[gidx[k]];
		out->end[k] = gend[gidx[k]];
	}
	out->n = g;
	ts = end = NULL;
	rc = 0;
out:
	hta_pool_put(f->pool, ts);
	hta_pool_put(f->pool, end);
	hta_pool_put(f->pool, idx);
	hta_pool_put(f->pool, gts);
	hta_pool_put(f->pool, gend);
	hta_pool_put(f->pool, gidx);
	return rc;
}

static int sel_kernel(const struct hta_row *r, int arg)
{
	(void)arg;
	return r->stream != -1;
}

static int sel_type(const struct hta_row *r, int type)
{
	return r->stream != -1 && r->ktype == type;
}

static int64_t ivl_busy(const struct ivl *m)
{
	int64_t s = 0;
	for (size_t k = 0; k < m->n; k++)
		s = hta_sat_add(s, m->end[k] - m->ts[k]);
	return s;
}

/* Merged intervals of all GPU rows and of each kernel class, once per rank. */
struct merged {
	struct ivl all, type[3];  /* indexed by enum ts_hta_ktype (COMM, COMP, MEM) */
};

static void merged_release(struct merged *m)
{
	ivl_release(&m->all);
	for (int t = 0; t < 3; t++)
		ivl_release(&m->type[t]);
}

static int merged_build(const struct hta_frame *f, struct merged *m)
{
	memset(m, 0, sizeof(*m));
	if (merge_rows(f, sel_kernel, 0, &m->all))
		return TS_ENOMEM;
	for (int t = 0; t < 3; t++)
		if (merge_rows(f, sel_type, t, &m->type[t])) {
			merged_release(m);
			return TS_ENOMEM;
		}
	return 0;
}

static void temporal(const struct merged *m, struct ts_hta_rank *r)
{
	int64_t kt = m->all.end[m->all.n - 1] - m->all.ts[0];
	int64_t idle = hta_sat_sub(kt, ivl_busy(&m->all));
	int64_t c = ivl_busy(&m->type[TS_HTA_COMP]);

	r->kernel_us = US(kt);
	r->idle_us = US(idle);
	r->compute_us = US(c);
	r->non_compute_us = US(hta_sat_sub(hta_sat_sub(kt, c), idle));
	r->idle_pct = hta_round(100 * (r->idle_us / r->kernel_us), 2);
	r->compute_pct = hta_round(100 * (r->compute_us / r->kernel_us), 2);
	r->non_compute_pct = hta_round(100 * (r->non_compute_us / r->kernel_us), 2);
}

/* ---------------------------------------------------- kernel type labels */

static int rank_labels(const struct merged *mg, struct hta_pool *pool, struct hta_labels *out)
{
	static const int types[3] = { TS_HTA_COMP, TS_HTA_COMM, TS_HTA_MEM };
	int64_t *time = NULL, *ntime = NULL;
	int *status = NULL, *nstatus = NULL;
	uint32_t *idx = NULL;
	size_t n = 0, cap = 0;
	int rc = TS_ENOMEM;

	memset(out, 0, sizeof(*out));
	for (int t = 0; t < 3; t++)
		cap += mg->type[t].n;
	cap = 2 * cap + 1;
	time = hta_pool_get(pool, cap * sizeof(*time));
	ntime = hta_pool_get(pool, cap * sizeof(*ntime));
	status = hta_pool_get(pool, cap * sizeof(*status));
	nstatus = hta_pool_get(pool, cap * sizeof(*nstatus));
	idx = hta_pool_get(pool, cap * sizeof(*idx));
	if (!time || !ntime || !status || !nstatus || !idx)
		goto out;
	for (int t = 0; t < 3; t++) {
		const struct ivl *m = &mg->type[types[t]];
		int v = 1 << t;
		/* concat([sorted so far, melt(ts..., end...)]).sort_values("time") */
		for (size_t k = 0; k < m->n; k++) {
			time[n + k] = m->ts[k];
			status[n + k] = v;
			time[n + m->n + k] = m->end[k];
			status[n + m->n + k] = -v;
		}
		n += 2 * m->n;
		/* ntime is the sort's scratch until the gather overwrites it */
		memcpy(ntime, time, n * sizeof(*time));
		hta_argsort(ntime, n, idx, pool);
		for (size_t k = 0; k < n; k++) {
			ntime[k] = time[idx[k]];
			nstatus[k] = status[idx[k]];
		}
		memcpy(time, ntime, n * sizeof(*time));
		memcpy(status, nstatus, n * sizeof(*status));
	}
	{
		int64_t running = 0;
		for (size_t k = 0; k + 1 < n; k++) {
			running += status[k];
			if (running > 0) {
				int lab = (int)(running & 7);
				out->present[lab] = 1;
				out->sum_ns[lab] += time[k + 1] - time[k];
			}
		}
	}
	rc = 0;
out:
	hta_pool_put(pool, time);
	hta_pool_put(pool, ntime);
	hta_pool_put(pool, status);
	hta_pool_put(pool, nstatus);
	hta_pool_put(pool, idx);
	return rc;
}

static const char *label_name(int lab, char *buf, size_t size)
{
	static const char *const names[3] = { "COMPUTATION", "COMMUNICATION", "MEMORY" };
	size_t len = 0;
	buf[0] = 0;
	for (int b = 0; b < 3; b++) {
		if (!(lab & (1 << b)))
			continue;
		if (len)
			len += (size_t)snprintf(buf + len, size - len, " overlapping ");
		len += (size_t)snprintf(buf + len, size - len, "%s", names[b]);
	}
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int hta_labels_emit(const struct hta_labels *l, struct ts_arena *a,
		    struct ts_hta_klabel **out, size_t *nout)
{
	const char *names[8];
	char bufs[8][96];
	int64_t sums[8], total = 0;
	uint32_t order[8];
	size_t n = 0;

	/* groupby(kernel_type) yields labels sorted by string */
	for (int lab = 0; lab < 8; lab++)
		if (l->present[lab])
			names[n++] = label_name(lab, bufs[lab], sizeof(bufs[lab]));
	ts_sort(names, n, sizeof(*names), cmp_str);
	for (size_t k = 0; k < n; k++) {
		for (int lab = 0; lab < 8; lab++) {
			char tmp[96];
			if (l->present[lab] && strcmp(label_name(lab, tmp, sizeof(tmp)), names[k]) == 0) {
				sums[k] = l->sum_ns[lab];
				break;
			}
		}
		total += sums[k];
	}
	if (hta_argsort_desc(sums, n, order))
		return TS_ENOMEM;
	*out = ts_arena_alloc(a, (n ? n : 1) * sizeof(**out));
	if (!*out)
		return TS_ENOMEM;
	for (size_t k = 0; k < n; k++) {
		struct ts_hta_klabel *o = &(*out)[k];
		o->label = ts_arena_strndup(a, names[order[k]], strlen(names[order[k]]));
		if (!o->label)
			return TS_ENOMEM;
		o->sum_us = US(sums[order[k]]);
		o->pct = hta_round((US(sums[order[k]]) / US(total)) * 100, 1);
	}
	*nout = n;
	return 0;
}

/* ------------------------------------------------------ per-kernel table */

struct kgroup {
	const char *name;
	int64_t count, sum, max, min;
	long double sumsq_us;  /* for the std of dur */
};

static int cmp_kgroup_name(const void *a, const void *b)
{
	return strcmp(((const struct kgroup *)a)->name, ((const struct kgroup *)b)->name);
}

/* std with ddof=1 of values given by sum and sum of squares (n >= 2). */
static double std_of(double n, long double sum, long double sumsq)
{
	long double var = (sumsq - sum * sum / n) / (n - 1);
	return var > 0 ? sqrt((double)var) : 0;
}

/* groupby(name) over the rows of one kernel class, sorted by name; *ng = 0
 * when there are none. 0 or TS_ENOMEM. */
static int kgroups(const struct hta_frame *f, int type, struct kgroup **out, size_t *nout)
{
	const struct ts_trace *t = f->t;
	struct kgroup *g = NULL;
	uint32_t *first = NULL;
	size_t ng = 0, nrows = 0;

	*out = NULL;
	*nout = 0;
	for (size_t k = 0; k < f->n; k++)
		nrows += sel_type(&f->rows[k], type);
	if (nrows == 0)
		return 0;
	/* one group per distinct name string */
	first = hta_pool_get(f->pool, (t->strings.count + 1) * sizeof(*first));
	g = calloc(nrows < t->strings.count + 1 ? nrows : t->strings.count + 1, sizeof(*g));
	if (!first || !g) {
		hta_pool_put(f->pool, first);
		free(g);
		return TS_ENOMEM;
	}
	for (size_t k = 0; k <= t->strings.count; k++)
		first[k] = UINT32_MAX;
	for (size_t k = 0; k < f->n; k++) {
		const struct hta_row *r = &f->rows[k];
		uint32_t key;
		struct kgroup *x;
		long double us;
		if (!sel_type(r, type))
			continue;
		key = r->name == TS_NO_ID ? (uint32_t)t->strings.count : r->name;
		if (first[key] == UINT32_MAX) {
			first[key] = (uint32_t)ng;
			x = &g[ng++];
			x->name = ts_trace_str(t, r->name);
			x->min = r->dur;
			x->max = r->dur;
		}
		x = &g[first[key]];
		x->count++;
		x->sum = hta_sat_add(x->sum, r->dur);
		if (r->dur > x->max)
			x->max = r->dur;
		if (r->dur < x->min)
			x->min = r->dur;
		us = US(r->dur);
		x->sumsq_us += us * us;
	}
	hta_pool_put(f->pool, first);
	ts_sort(g, ng, sizeof(*g), cmp_kgroup_name);
	*out = g;
	*nout = ng;
	return 0;
}

/* HTA's kernel table of one class from its groups (kgroups()). */
static int kstats(const struct kgroup *g, size_t ng, int type, size_t num_kernels,
		  struct ts_arena *a, struct ts_hta_kstat **out, size_t *nout)
{
	uint32_t *order = NULL;
	int64_t *sums = NULL;
	int rc = TS_ENOMEM;

	*out = NULL;
	*nout = 0;
	if (ng == 0)
		return 0;
	sums = malloc(ng * sizeof(*sums));
	order = malloc(ng * sizeof(*order));
	*out = ts_arena_alloc(a, ng * sizeof(**out));
	if (!sums || !order || !*out)
		goto out;
	for (size_t k = 0; k < ng; k++)
		sums[k] = g[k].sum;
	if (hta_argsort_desc(sums, ng, order))
		goto out;
	if (ng <= num_kernels) {
		/* no aggregation: rows sorted by name, stats of the kernels */
		for (size_t k = 0; k < ng; k++) {
			struct ts_hta_kstat *o = &(*out)[k];
			double n = (double)g[k].count;
			o->name = g[k].name;
			o->type = (enum ts_hta_ktype)type;
			o->count = g[k].count;
			o->sum_us = US(g[k].sum);
			o->max_us = US(g[k].max);
			o->min_us = US(g[k].min);
			o->mean_us = o->sum_us / n;
			o->std_us = g[k].count > 1 ? std_of(n, o->sum_us, g[k].sumsq_us) : 0;
		}
		*nout = ng;
	} else {
		/* cumsum over the sum-sorted names; names past the 0.8 quantile
		 * of that cumsum, or past num_kernels, become "others" */
		double *cum = malloc(ng * sizeof(*cum)), *sorted = malloc(ng * sizeof(*sorted));
		double c = 0, q, osum = 0, omax = -INFINITY, omin = INFINITY;
		long double osq = 0;
		size_t nothers = 0, nk = 0;
		int64_t ocount = 0;
		int *is_other = calloc(ng, sizeof(*is_other));
		if (!cum || !sorted || !is_other) {
			free(cum);
			free(sorted);
			free(is_other);
			goto out;
		}
		for (size_t k = 0; k < ng; k++) {
			c += US(g[order[k]].sum);
			cum[k] = c;
			sorted[k] = c;
		}
		for (size_t k = 1; k < ng; k++) { /* insertion sort; cumsum is near-sorted */
			double v = sorted[k];
			size_t j = k;
			while (j > 0 && sorted[j - 1] > v) {
				sorted[j] = sorted[j - 1];
				j--;
			}
			sorted[j] = v;
		}
		q = hta_quantile_sorted(sorted, ng, DURATION_RATIO);
		for (size_t k = 0; k < ng; k++)
			if (cum[k] > q || k >= num_kernels)
				is_other[order[k]] = 1;
		for (size_t k = 0; k < ng; k++) {
			double s = US(g[k].sum);
			if (!is_other[k])
				continue;
			nothers++;
			ocount += g[k].count;
			osum += s;
			osq += (long double)s * s;
			if (s > omax)
				omax = s;
			if (s < omin)
				omin = s;
		}
		/* regroup by name (sorted), "others" among the names */
		for (size_t k = 0, placed = 0; k <= ng; k++) {
			int others_here = nothers && !placed &&
				(k == ng || strcmp("others", g[k].name) < 0);
			if (others_here) {
				struct ts_hta_kstat *o = &(*out)[nk++];
				o->name = "others";
				o->type = (enum ts_hta_ktype)type;
				o->count = ocount;
				o->sum_us = osum;
				o->max_us = omax;
				o->min_us = omin;
				o->mean_us = osum / (double)nothers;
				o->std_us = nothers > 1 ? std_of((double)nothers, osum, osq) : 0;
				placed = 1;
			}
			if (k == ng)
				break;
			if (!is_other[k]) {
				struct ts_hta_kstat *o = &(*out)[nk++];
				double s = US(g[k].sum);
				o->name = g[k].name;
				o->type = (enum ts_hta_ktype)type;
				o->count = g[k].count;
				o->sum_us = o->max_us = o->min_us = o->mean_us = s;
				o->std_us = 0;
			}
		}
		*nout = nk;
		free(cum);
		free(sorted);
		free(is_other);
	}
	for (size_t k = 0; k < *nout; k++) {
		const char *nm = (*out)[k].name;
		(*out)[k].name = ts_arena_strndup(a, nm, strlen(nm));
		if (!(*out)[k].name)
			goto out;
	}
	rc = 0;
out:
	free(sums);
	free(order);
	return rc;
}

/* The two kernel tables (num_kernels 10 and all), each over all types in
 * HTA's output order (COMMUNICATION, COMPUTATION, MEMORY); f holds the
 * kernel rows. */
static int ktables(const struct hta_frame *f, struct ts_arena *a, struct ts_hta_rank *r)
{
	static const int types[3] = { TS_HTA_COMM, TS_HTA_COMP, TS_HTA_MEM };
	struct ts_hta_kstat *part[2][3];
	size_t np[2][3], total[2] = { 0, 0 };
	struct ts_hta_kstat **out[2] = { &r->kernels, &r->kernels_all };
	size_t *nout[2] = { &r->nkernels_tab, &r->nkernels_all };

	for (int t = 0; t < 3; t++) {
		struct kgroup *g;
		size_t ng;
		int rc = kgroups(f, types[t], &g, &ng);
		if (!rc)
			rc = kstats(g, ng, types[t], NUM_KERNELS, a, &part[0][t], &np[0][t]);
		if (!rc)
			rc = kstats(g, ng, types[t], SIZE_MAX, a, &part[1][t], &np[1][t]);
		free(g);
		if (rc)
			return rc;
		total[0] += np[0][t];
		total[1] += np[1][t];
	}
	for (int v = 0; v < 2; v++) {
		*out[v] = ts_arena_alloc(a, (total[v] ? total[v] : 1) * sizeof(**out[v]));
		if (!*out[v])
			return TS_ENOMEM;
		*nout[v] = 0;
		for (int t = 0; t < 3; t++) {
			if (np[v][t])
				memcpy(*out[v] + *nout[v], part[v][t], np[v][t] * sizeof(**out[v]));
			*nout[v] += np[v][t];
		}
	}
	return 0;
}

/* ------------------------------------------------------------- overlap */

struct sweep_pt {
	int64_t t;
	int s;
};

static int cmp_pt(const void *a, const void *b)
{
	const struct sweep_pt *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

static uint64_t key_pt(const void *x)
{
	return ts_radix_i64(((const struct sweep_pt *)x)->t);
}

/* |a ∩ b| of two merged interval lists (each sorted and disjoint, no
 * interval ending before it starts): one walk over both. */
static int64_t common_ns(const int64_t *ats, const int64_t *aend, size_t na,
			 const int64_t *bts, const int64_t *bend, size_t nb)
{
	int64_t sum = 0;

	for (size_t i = 0, j = 0; i < na && j < nb;) {
		int64_t lo = ats[i] > bts[j] ? ats[i] : bts[j];
		int64_t hi = aend[i] < bend[j] ? aend[i] : bend[j];
		if (hi > lo)
			sum += hi - lo;
		if (aend[i] < bend[j])
			i++;
		else
			j++;
	}
	return sum;
}

static int in_order(const int64_t *ts, const int64_t *end, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (end[k] < ts[k])
			return 0;
	return 1;
}

int hta_overlap_ns(const int64_t *cts, const int64_t *cend, size_t nc,
		   const int64_t *mts, const int64_t *mend, size_t nm, int sweep, int64_t *ov)
{
	struct sweep_pt *p;
	int64_t run = 0;
	size_t n = 0;

	/* intervals in order: the sweep's running sum is 3 exactly on their
	 * intersection */
	if (!sweep && in_order(cts, cend, nc) && in_order(mts, mend, nm)) {
		*ov = common_ns(cts, cend, nc, mts, mend, nm);
		return 0;
	}
	p = malloc((2 * (nc + nm) + 1) * sizeof(*p));
	if (!p)
		return TS_ENOMEM;
	for (size_t k = 0; k < nm; k++) {
		p[n++] = (struct sweep_pt){ mts[k], 1 };
		p[n++] = (struct sweep_pt){ mend[k], -1 };
	}
	for (size_t k = 0; k < nc; k++) {
		p[n++] = (struct sweep_pt){ cts[k], 2 };
		p[n++] = (struct sweep_pt){ cend[k], -2 };
	}
	/* sum of segments where running == 3; ties only make zero-length
	 * segments, so any sort order gives HTA's sum */
	if (ts_radix_sort(p, n, sizeof(*p), key_pt))
		ts_sort(p, n, sizeof(*p), cmp_pt);
	*ov = 0;
	for (size_t k = 0; k + 1 < n; k++) {
		run += p[k].s;
		if (run == 3)
			*ov += p[k + 1].t - p[k].t;
	}
	free(p);
	return 0;
}

static int overlap(const struct merged *mg, struct ts_hta_rank *r)
{
	const struct ivl *comp = &mg->type[TS_HTA_COMP], *comm = &mg->type[TS_HTA_COMM];
	int64_t ov, den;

	if (hta_overlap_ns(comp->ts, comp->end, comp->n, comm->ts, comm->end, comm->n, 0, &ov))
		return TS_ENOMEM;
	den = ivl_busy(comm);
	r->overlap_pct = den == 0 ? NAN : hta_round(100 * (US(ov) / US(den)), 2);
	return 0;
}

/* -------------------------------------------------------- idle breakdown */

/* The ts of the rows that the kernel rows' index_correlation names, for
 * those events only (a table over every event of the trace was 8.6 MB on
 * the 241 MB benchmark trace, for 107 k kernel rows): a bit per event says
 * which are named, and the named ones' ts sit in event order, found by the
 * bits' rank. */
struct named_ts {
	struct hta_pool *pool;
	uint64_t *bits;     /* nev bits */
	uint32_t *rank;     /* named events in the words before word w */
	int64_t *ts;        /* INT64_MIN: the event has no row */
	size_t nev;
};

static void named_release(struct named_ts *m)
{
	hta_pool_put(m->pool, m->bits);
	hta_pool_put(m->pool, m->rank);
	hta_pool_put(m->pool, m->ts);
	memset(m, 0, sizeof(*m));
}

/* the ts of the first row of f whose event is ev, when a kernel row of kf
 * names it; INT64_MIN when no row has it or ev is out of range */
static int64_t named_get(const struct named_ts *m, int64_t ev)
{
	if (ev < 0 || (uint64_t)ev >= m->nev || !(m->bits[(uint64_t)ev >> 6] >> ((uint64_t)ev & 63) & 1))
		return INT64_MIN;
	return m->ts[hta_rankbits_slot(m->bits, m->rank, (uint64_t)ev)];
}

static int named_build(struct named_ts *m, const struct hta_frame *f, const struct hta_frame *kf)
{
	size_t n;

	memset(m, 0, sizeof(*m));
	m->pool = f->pool;
	m->nev = f->t->ev.n;
	if (hta_rankbits_get(f->pool, m->nev, &m->bits, &m->rank))
		return TS_ENOMEM;
	for (size_t k = 0; k < kf->n; k++) {
		int64_t e = hta_icorr(&kf->rows[k]);
		if ((kf->rows[k].flags & HTA_ROW_KCAT) && e >= 0 && (uint64_t)e < m->nev)
			hta_rankbits_set(m->bits, (uint64_t)e);
	}
	n = hta_rankbits_rank(m->bits, m->rank, m->nev);
	m->ts = hta_pool_get(f->pool, (n + 1) * sizeof(*m->ts));
	if (!m->ts)
		return TS_ENOMEM;
	for (size_t k = 0; k < n; k++)
		m->ts[k] = INT64_MIN;
	/* first occurrence in frame order */
	for (size_t k = 0; k < f->n; k++) {
		uint32_t e = f->rows[k].ev;
		if (m->bits[e >> 6] >> (e & 63) & 1) {
			int64_t *t = &m->ts[hta_rankbits_slot(m->bits, m->rank, e)];
			if (*t == INT64_MIN)
				*t = f->rows[k].ts;
		}
	}
	return 0;
}

/* f: the whole frame (the rows index_correlation names); kf: its kernel
 * rows */
static int idle_breakdown(const struct hta_frame *f, const struct hta_frame *kf,
			  struct ts_arena *a, struct ts_hta_rank *r)
{
	size_t ns = 0;
	int64_t *streams = NULL, *ts = NULL;
	uint32_t *sub = NULL, *idx = NULL;
	size_t *start = NULL, *fill = NULL;
	struct hta_map order = { 0 };
	struct named_ts named;
	int rc = TS_ENOMEM;

	if (named_build(&named, f, kf))
		goto out;
	streams = hta_pool_get(f->pool, (kf->n + 1) * sizeof(*streams));
	start = hta_pool_get(f->pool, (kf->n + 2) * sizeof(*start));
	fill = hta_pool_get(f->pool, (kf->n + 1) * sizeof(*fill));
	sub = hta_pool_get(f->pool, (kf->n + 1) * sizeof(*sub));
	ts = hta_pool_get(f->pool, (kf->n + 1) * sizeof(*ts));
	idx = hta_pool_get(f->pool, (kf->n + 1) * sizeof(*idx));
	for (size_t k = 0; k < kf->n; k++)
		if (kf->rows[k].flags & HTA_ROW_KCAT)
			ns++;
	if (!streams || !start || !fill || !sub || !ts || !idx ||
	    hta_map_init(&order, f->pool, ns, 0))
		goto out;
	/* the stream count bounds both (at most one stream per kernel row) */
	memset(start, 0, (ns + 2) * sizeof(*start));
	memset(fill, 0, (ns + 1) * sizeof(*fill));
	ns = 0;
	/* streams in order of first appearance (pandas unique()); the rows of
	 * each stream grouped by a counting sort that keeps frame order */
	for (size_t k = 0; k < kf->n; k++) {
		const struct hta_row *x = &kf->rows[k];
		size_t s;
		if (!(x->flags & HTA_ROW_KCAT))
			continue;
		s = hta_map_put(&order, x->stream, -1);
		if (order.a[s] < 0) {
			order.a[s] = (int64_t)ns;
			streams[ns++] = x->stream;
		}
		start[order.a[s] + 1]++;
	}
	for (size_t s = 0; s < ns; s++)
		start[s + 1] += start[s];
	for (size_t k = 0; k < kf->n; k++) {
		const struct hta_row *x = &kf->rows[k];
		size_t s;
		if (!(x->flags & HTA_ROW_KCAT))
			continue;
		s = (size_t)order.a[hta_map_find(&order, x->stream)];
		sub[start[s] + fill[s]++] = (uint32_t)k;
	}
	r->idle = ts_arena_alloc(a, (ns ? ns : 1) * sizeof(*r->idle));
	if (!r->idle)
		goto out;
	r->nidle = ns;
	for (size_t s = 0; s < ns; s++) {
		struct ts_hta_idle *o = &r->idle[s];
		const uint32_t *rows = sub + start[s];
		size_t m = start[s + 1] - start[s];
		int64_t sum[3] = { 0, 0, 0 }, total;

		memset(o, 0, sizeof(*o));
		o->stream = streams[s];
		for (size_t k = 0; k < m; k++)
			ts[k] = kf->rows[rows[k]].ts;
		hta_argsort(ts, m, idx, f->pool);
		for (size_t k = 0; k < m; k++) {
			const struct hta_row *x = &kf->rows[rows[idx[k]]];
			const struct hta_row *p;
			int64_t prev_end, gap, rt;
			int cat;
			if (k == 0) {
				o->present[TS_HTA_IDLE_OTHER] = 1; /* NaN gap */
				continue;
			}
			p = &kf->rows[rows[idx[k - 1]]];
			prev_end = p->ts + p->dur;
			gap = x->ts - prev_end;
			rt = named_get(&named, hta_icorr(x));
			if (rt != INT64_MIN && rt > prev_end)
				cat = TS_HTA_HOST_WAIT;
			else if (gap < KERNEL_WAIT_NS)
				cat = TS_HTA_KERNEL_WAIT;
			else
				cat = TS_HTA_IDLE_OTHER;
			o->present[cat] = 1;
			sum[cat] = hta_sat_add(sum[cat], gap);
		}
		total = hta_sat_add(hta_sat_add(sum[0], sum[1]), sum[2]);
		for (int c = 0; c < 3; c++) {
			o->idle_us[c] = hta_round(US(sum[c]), 2);
			o->ratio[c] = total == 0 && sum[c] == 0 ? NAN :
				hta_round(US(sum[c]) / US(total), 2);
		}
	}
	rc = 0;
out:
	hta_map_release(&order);
	named_release(&named);
	hta_pool_put(f->pool, streams);
	hta_pool_put(f->pool, start);
	hta_pool_put(f->pool, fill);
	hta_pool_put(f->pool, sub);
	hta_pool_put(f->pool, ts);
	hta_pool_put(f->pool, idx);
	return rc;
}

/* ---------------------------------------------------------- launch stats */

/* A set of correlations: a byte per id (hta_direct_fits) or a map; key -1
 * apart. */
struct cset {
	const struct hta_frame *f;
	struct hta_map map;
	uint8_t *d;         /* NULL: the map */
	int none;           /* -1 is in */
};

static int cset_init(struct cset *c, const struct hta_frame *f, size_t expect)
{
	memset(c, 0, sizeof(*c));
	c->f = f;
	if (!hta_direct_fits(f, expect, 1))
		return hta_map_init(&c->map, f->pool, expect, f->corr_span);
	c->d = hta_pool_get(f->pool, f->ncid);
	if (!c->d)
		return TS_ENOMEM;
	memset(c->d, 0, f->ncid);
	return 0;
}

static void cset_release(struct cset *c)
{
	if (c->f)
		hta_pool_put(c->f->pool, c->d);
	hta_map_release(&c->map);
	memset(c, 0, sizeof(*c));
}

static void cset_add(struct cset *c, int64_t corr)
{
	if (corr == -1)
		c->none = 1;
	else if (c->d)
		c->d[hta_corr_slot(c->f, corr)] = 1;
	else
		hta_map_put(&c->map, corr, 0);
}

static int cset_has(const struct cset *c, int64_t corr)
{
	if (corr == -1)
		return c->none;
	if (c->d)
		return c->d[hta_corr_slot(c->f, corr)];
	return hta_map_find(&c->map, corr) >= 0;
}

static int is_queue_launch_name(const char *s);

static int is_launch_stat_name(const char *s)
{
	return strcmp(s, "cudaLaunchKernel") == 0 || strcmp(s, "cudaLaunchKernelExC") == 0 ||
	       strcmp(s, "runFunction - job_prep_and_submit_for_execution") == 0 ||
	       strcmp(s, "cudaMemcpyAsync") == 0 || strcmp(s, "cudaMemsetAsync") == 0;
}

static uint64_t key_lrow_corr(const void *x)
{
	return ts_radix_i64(((const struct hta_lrow *)x)->corr);
}

static uint64_t key_lrow_a(const void *x)
{
	return ts_radix_i64(((const struct hta_lrow *)x)->a);
}

/* x sorts strictly before y: by corr, then a */
static int lrow_before(const struct hta_lrow *x, const struct hta_lrow *y)
{
	return x->corr < y->corr || (x->corr == y->corr && x->a < y->a);
}

/* end of the run of v (ascending by corr, a) that starts at i */
static size_t lrow_run_end(const struct hta_lrow *v, size_t i, size_t n)
{
	for (i++; i < n && !lrow_before(&v[i], &v[i - 1]); i++)
		;
	return i;
}

#define LROW_MERGE_RUNS 16

void hta_lrows_sort(struct hta_lrow *v, size_t n, struct hta_lrow *scratch)
{
	struct hta_lrow *src = v, *dst = scratch;
	size_t runs = 1;

	for (size_t k = 1; k < n; k++)
		runs += lrow_before(&v[k], &v[k - 1]);
	if (runs == 1)
		return;
	/* frame order is nearly correlation order (the rows come in a few
	 * runs: 6 each on the 241 MB benchmark trace): merge adjacent runs,
	 * the left one first on a tie, until one is left (at most 4 passes) */
	if (runs <= LROW_MERGE_RUNS) {
		while (runs > 1) {
			size_t i = 0;
			runs = 0;
			while (i < n) {
				size_t mid = lrow_run_end(src, i, n);
				size_t to = mid < n ? lrow_run_end(src, mid, n) : n;
				size_t p = i, q = mid, o = i;
				while (p < mid && q < to)
					dst[o++] = lrow_before(&src[q], &src[p]) ? src[q++] : src[p++];
				memcpy(dst + o, src + p, (mid - p) * sizeof(*dst));
				o += mid - p;
				memcpy(dst + o, src + q, (to - q) * sizeof(*dst));
				i = to;
				runs++;
			}
			struct hta_lrow *t = src;
			src = dst;
			dst = t;
		}
		if (src != v)
			memcpy(v, src, n * sizeof(*v));
		return;
	}
	/* by corr, then each run of one corr by a (a launch's correlation is
	 * nearly always its own: runs of one or two rows, sorted in place,
	 * where a second radix sort of every row by a made six passes) */
	ts_radix_sort_in(v, n, sizeof(*v), key_lrow_corr, scratch);
	for (size_t i = 0, e; i < n; i = e) {
		for (e = i + 1; e < n && v[e].corr == v[i].corr; e++)
			;
		if (e - i > 16) {
			ts_radix_sort_in(v + i, e - i, sizeof(*v), key_lrow_a, scratch);
			continue;
		}
		for (size_t k = i + 1; k < e; k++) {
			struct hta_lrow x = v[k];
			size_t j = k;
			for (; j > i && v[j - 1].a > x.a; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
	}
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t p = *(const int64_t *)x, q = *(const int64_t *)y;
	return p < q ? -1 : p > q;
}

/* number of v[0..n) < x (v sorted) */
static size_t count_lt(const int64_t *v, size_t n, int64_t x)
{
	return ts_lower_bound(v, n, sizeof(*v), &x, ts_i64_below);
}

#define NAME_LAUNCH_STAT 1
#define NAME_QUEUE_LAUNCH 2
#define NAME_STEP 4         /* starts with "ProfilerStep" */

static int launch_stats(const struct hta_frame *f, const uint8_t *nflag,
			struct ts_hta_rank *r)
{
	struct cset set = { 0 };
	struct hta_lrow *cpu = NULL, *gpu = NULL, *scratch = NULL;
	int64_t *ends = NULL, *durs = NULL;
	long double *pref = NULL, delay = 0;
	size_t nc = 0, ng = 0;
	int rc = TS_ENOMEM;

	memset(&r->launch, 0, sizeof(r->launch));
	/* the launches' correlations: the rows listed (in cpu's room) in the
	 * pass that counts them, for the set sized by the count */
	cpu = hta_pool_get(f->pool, (f->n + 1) * sizeof(*cpu));
	if (!cpu)
		goto out;
	for (size_t k = 0; k < f->n; k++)
		if (f->rows[k].name != TS_NO_ID && (nflag[f->rows[k].name] & NAME_LAUNCH_STAT))
			cpu[nc++].corr = f->rows[k].corr;
	if (cset_init(&set, f, nc))
		goto out;
	for (size_t k = 0; k < nc; k++)
		cset_add(&set, cpu[k].corr);
	nc = 0;
	gpu = hta_pool_get(f->pool, (f->n + 1) * sizeof(*gpu));
	ends = hta_pool_get(f->pool, (f->n + 1) * sizeof(*ends));
	durs = hta_pool_get(f->pool, (f->n + 1) * sizeof(*durs));
	pref = hta_pool_get(f->pool, (f->n + 2) * sizeof(*pref));
	if (!gpu || !ends || !durs || !pref)
		goto out;
	for (size_t k = 0; k < f->n; k++) {
		const struct hta_row *x = &f->rows[k];
		if (!cset_has(&set, x->corr))
			continue;
		if (x->stream == -1)
			cpu[nc++] = (struct hta_lrow){ x->corr, x->ts + x->dur, x->dur };
		else
			gpu[ng++] = (struct hta_lrow){ x->corr, x->ts, x->dur };
	}
	scratch = hta_pool_get(f->pool, (nc > ng ? nc : ng) * sizeof(*scratch) + 1);
	if (!scratch)
		goto out;
	hta_lrows_sort(cpu, nc, scratch);
	hta_lrows_sort(gpu, ng, scratch);
	/* inner join on correlation, aggregated per key without forming pairs */
	for (size_t i = 0, j = 0; i < nc && j < ng;) {
		size_t i2 = i, j2 = j, m, gt50 = 0;
		if (cpu[i].corr < gpu[j].corr) {
			i++;
			continue;
		}
		if (gpu[j].corr < cpu[i].corr) {
			j++;
			continue;
		}
		while (i2 < nc && cpu[i2].corr == cpu[i].corr)
			i2++;
		while (j2 < ng && gpu[j2].corr == gpu[j].corr)
			j2++;
		m = i2 - i;
		pref[0] = 0;
		for (size_t k = 0; k < m; k++) {
			ends[k] = cpu[i + k].a;
			durs[k] = cpu[i + k].b;
			pref[k + 1] = pref[k] + (long double)ends[k];
			gt50 += durs[k] > RUNTIME_CUTOFF_NS;
		}
		ts_sort(durs, m, sizeof(*durs), cmp_i64);
		for (size_t k = j; k < j2; k++) {
			int64_t gts = gpu[k].a, gdur = gpu[k].b;
			size_t lt = count_lt(ends, m, gts);
			r->launch.n += (int64_t)m;
			delay += (long double)lt * (long double)gts - pref[lt];
			r->launch.n_launch_delay_gt_100us +=
				(int64_t)count_lt(ends, m, gts - LAUNCH_DELAY_CUTOFF_NS);
			r->launch.n_cpu_dur_gt_50us += (int64_t)gt50;
			r->launch.n_gpu_shorter_than_cpu +=
				(int64_t)(m - count_lt(durs, m, gdur + 1));
		}
		i = i2;
		j = j2;
	}
	r->launch.sum_launch_delay_us = (double)(delay / 1000.0L);
	rc = 0;
out:
	cset_release(&set);
	hta_pool_put(f->pool, cpu);
	hta_pool_put(f->pool, gpu);
	hta_pool_put(f->pool, scratch);
	hta_pool_put(f->pool, ends);
	hta_pool_put(f->pool, durs);
	hta_pool_put(f->pool, pref);
	return rc;
}

/* ---------------------------------------------------------- queue length */

static int is_queue_launch_name(const char *s)
{
	static const char *const k[] = {
		"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
		"cudaMemcpyAsync", "cudaMemsetAsync", "hipLaunchKernel",
		"hipExtModuleLaunchKernel", "hipMemcpyAsync", "hipMemsetAsync",
		"hipMemcpyWithStream", "runFunction - job_prep_and_submit_for_execution"
	};
	for (size_t i = 0; i < sizeof(k) / sizeof(*k); i++)
		if (strcmp(s, k[i]) == 0)
			return 1;
	return 0;
}

struct qpt {
	int64_t ts, stream;
	int has_stream, delta;
	uint32_t pos;   /* position after the ts sort */
};

static uint64_t key_qpt_stream(const void *x)
{
	return ts_radix_i64(((const struct qpt *)x)->stream);
}

/* GPU rows grouped by correlation: for the slot of a correlation, the
 * first of its rows in a list grouped by correlation and their count. The
 * slots are hta_corr_slot()'s and one more for -1 (a table, when
 * hta_direct_fits) or a map's. */
struct kgroups {
	const struct hta_frame *f;
	struct hta_map map;
	int64_t *first, *count;  /* by slot: the table's, or the map's a and b */
	size_t nslot;
	int dense;
};

static int kg_init(struct kgroups *g, const struct hta_frame *f, size_t expect)
{
	memset(g, 0, sizeof(*g));
	g->f = f;
	if (!hta_direct_fits(f, expect, 2 * sizeof(int64_t))) {
		if (hta_map_init(&g->map, f->pool, expect, f->corr_span))
			return TS_ENOMEM;
		g->first = g->map.a;
		g->count = g->map.b;
		g->nslot = g->map.mask + 2;
		return 0;
	}
	g->dense = 1;
	g->nslot = f->ncid + 1;
	g->first = hta_pool_get(f->pool, g->nslot * sizeof(*g->first));
	g->count = hta_pool_get(f->pool, g->nslot * sizeof(*g->count));
	if (!g->first || !g->count)
		return TS_ENOMEM;
	memset(g->count, 0, g->nslot * sizeof(*g->count));
	return 0;
}

static void kg_release(struct kgroups *g)
{
	if (g->dense) {
		hta_pool_put(g->f->pool, g->first);
		hta_pool_put(g->f->pool, g->count);
	}
	hta_map_release(&g->map);
	memset(g, 0, sizeof(*g));
}

/* the slot of corr (one of the frame's, or -1), made when new (count 0) */
static size_t kg_put(struct kgroups *g, int64_t corr)
{
	if (!g->dense)
		return hta_map_put(&g->map, corr, 0);
	return corr == -1 ? g->nslot - 1 : hta_corr_slot(g->f, corr);
}

/* the slot of corr when a GPU row has it, else -1 */
static int64_t kg_find(const struct kgroups *g, int64_t corr)
{
	size_t s;

	if (!g->dense)
		return hta_map_find(&g->map, corr);
	s = corr == -1 ? g->nslot - 1 : hta_corr_slot(g->f, corr);
	return g->count[s] ? (int64_t)s : -1;
}

static int kg_used(const struct kgroups *g, size_t s)
{
	return g->dense ? g->count[s] != 0 : g->map.used[s];
}

static int queue_length(const struct hta_frame *f, const uint8_t *nflag, struct ts_arena *a,
			struct ts_hta_rank *r)
{
	struct kgroups kmap = { 0 };
	struct cset rset = { 0 };
	uint32_t *krows = NULL, *idx = NULL, *grows = NULL, *lrows = NULL;
	struct qpt *pts = NULL, *srt = NULL;
	int64_t *ts = NULL;
	double *vals = NULL, *sorted = NULL;
	size_t nk = 0, np = 0, cap, nq = 0, ngpu = 0, nlaunch = 0;
	int rc = TS_ENOMEM;

	/* the GPU rows and the launches, listed in frame order in one pass
	 * over the frame (the passes below walk the lists, a fifth of the
	 * frame each); the maps are sized for the rows that can be keys, not
	 * for every row (a table of 2-4x the frame, touched all over, was
	 * most of the peak) */
	grows = hta_pool_get(f->pool, (f->n + 1) * sizeof(*grows));
	lrows = hta_pool_get(f->pool, (f->n + 1) * sizeof(*lrows));
	if (!grows || !lrows)
		goto out;
	for (size_t k = 0; k < f->n; k++) {
		const struct hta_row *x = &f->rows[k];
		if (x->stream != -1)
			grows[ngpu++] = (uint32_t)k;
		if (hta_icorr(x) > 0 && x->name != TS_NO_ID && (nflag[x->name] & NAME_QUEUE_LAUNCH))
			lrows[nlaunch++] = (uint32_t)k;
	}
	if (kg_init(&kmap, f, ngpu) || cset_init(&rset, f, nlaunch))
		goto out;
	krows = hta_pool_get(f->pool, (ngpu + 1) * sizeof(*krows));
	if (!krows)
		goto out;
	/* GPU rows grouped by correlation, in frame order: krows lists
	 * them, group by group, by a counting pass (where the groups sit in
	 * it does not matter) */
	for (size_t g = 0; g < ngpu; g++)
		kmap.count[kg_put(&kmap, f->rows[grows[g]].corr)]++;
	{
		size_t off = 0;
		for (size_t s = 0; s < kmap.nslot; s++)
			if (kg_used(&kmap, s)) {
				kmap.first[s] = (int64_t)off;
				off += (size_t)kmap.count[s];
				kmap.count[s] = 0;
			}
		nk = off;
		for (size_t g = 0; g < ngpu; g++) {
			size_t s = kg_put(&kmap, f->rows[grows[g]].corr);
			krows[kmap.first[s] + kmap.count[s]++] = grows[g];
		}
	}
	cap = 0;
	for (size_t l = 0; l < nlaunch; l++) {
		const struct hta_row *x = &f->rows[lrows[l]];
		int64_t s = kg_find(&kmap, x->corr);
		cap += s >= 0 ? (size_t)kmap.count[s] : 1;
		cset_add(&rset, x->corr);
	}
	cap += nk + 1;
	pts = hta_pool_get(f->pool, cap * sizeof(*pts));
	srt = hta_pool_get(f->pool, cap * sizeof(*srt));
	ts = hta_pool_get(f->pool, cap * sizeof(*ts));
	idx = hta_pool_get(f->pool, cap * sizeof(*idx));
	if (!pts || !srt || !ts || !idx)
		goto out;
	/* runtime_calls.join(gpu_kernels on correlation): +1 per GPU match */
	for (size_t l = 0; l < nlaunch; l++) {
		const struct hta_row *x = &f->rows[lrows[l]];
		int64_t s = kg_find(&kmap, x->corr);
		if (s < 0) {
			pts[np++] = (struct qpt){ x->ts, 0, 0, 1, 0 };
			continue;
		}
		for (int64_t c = 0; c < kmap.count[s]; c++) {
			const struct hta_row *g = &f->rows[krows[kmap.first[s] + c]];
			pts[np++] = (struct qpt){ x->ts, g->stream, 1, 1, 0 };
		}
	}
	/* then GPU rows whose correlation a runtime call has: -1 at start */
	for (size_t g = 0; g < ngpu; g++) {
		const struct hta_row *x = &f->rows[grows[g]];
		if (cset_has(&rset, x->corr))
			pts[np++] = (struct qpt){ x->ts, x->stream, 1, -1, 0 };
	}
	for (size_t k = 0; k < np; k++)
		ts[k] = pts[k].ts;
	hta_argsort(ts, np, idx, f->pool);
	for (size_t k = 0; k < np; k++) {
		srt[k] = pts[idx[k]];
		srt[k].pos = (uint32_t)k;
	}
	/* groupby("stream"): NaN streams dropped, groups ascending */
	{
		size_t m = 0;
		for (size_t k = 0; k < np; k++)
			if (srt[k].has_stream)
				srt[m++] = srt[k];
		np = m;
	}
	/* by stream, then position: srt is in position order and the sort
	 * is stable (pts, no longer needed, is its scratch) */
	ts_radix_sort_in(srt, np, sizeof(*srt), key_qpt_stream, pts);
	/* the lengths of a stream and the same sorted, in the sort keys' and
	 * the radix scratch's room (cap elements each, both free now) */
	vals = (double *)ts;
	sorted = (double *)pts;
	for (size_t k = 0; k < np;) {
		size_t e = k;
		while (e < np && srt[e].stream == srt[k].stream)
			e++;
		nq++;
		k = e;
	}
	r->queue = ts_arena_alloc(a, (nq ? nq : 1) * sizeof(*r->queue));
	if (!r->queue)
		goto out;
	r->nqueue = nq;
	nq = 0;
	for (size_t k = 0; k < np;) {
		struct ts_hta_queue *o = &r->queue[nq++];
		size_t e = k, m, ns = 0;
		int64_t run = 0, lo = 0, hi = 0;
		double sum = 0, sq = 0, mean;
		while (e < np && srt[e].stream == srt[k].stream)
			e++;
		m = e - k;
		for (size_t i = 0; i < m; i++) {
			run += srt[k + i].delta;
			vals[i] = (double)run;
			sum += vals[i];
			lo = i == 0 || run < lo ? run : lo;
			hi = i == 0 || run > hi ? run : hi;
		}
		mean = sum / (double)m;
		for (size_t i = 0; i < m; i++)
			sq += (vals[i] - mean) * (vals[i] - mean);
		/* the lengths step by 1, so they span at most m + 1 values:
		 * sorted by counting them (in idx, free after the argsort) */
		memset(idx, 0, (size_t)(hi - lo + 1) * sizeof(*idx));
		for (size_t i = 0; i < m; i++)
			idx[(int64_t)vals[i] - lo]++;
		for (int64_t v = lo; v <= hi; v++)
			for (uint32_t c = idx[v - lo]; c > 0; c--)
				sorted[ns++] = (double)v;
		o->stream = srt[k].stream;
		o->count = (double)m;
		o->mean = mean;
		o->std = m > 1 ? sqrt(sq / (double)(m - 1)) : NAN;
		o->min = sorted[0];
		o->max = sorted[m - 1];
		o->p25 = hta_quantile_sorted(sorted, m, 0.25);
		o->p50 = hta_quantile_sorted(sorted, m, 0.5);
		o->p75 = hta_quantile_sorted(sorted, m, 0.75);
		k = e;
	}
	rc = 0;
out:
	kg_release(&kmap);
	cset_release(&rset);
	hta_pool_put(f->pool, krows);
	hta_pool_put(f->pool, grows);
	hta_pool_put(f->pool, lrows);
	hta_pool_put(f->pool, pts);
	hta_pool_put(f->pool, srt);
	hta_pool_put(f->pool, ts);
	hta_pool_put(f->pool, idx);
	return rc;
}

/* ---------------------------------------------------------- steps kept */

static int steps_kept(const struct hta_frame *f, const uint8_t *nflag, struct ts_arena *a,
		      struct ts_hta_rank *r)
{
	int64_t *v = hta_pool_get(f->pool, (f->n + 1) * sizeof(*v));
	size_t n = 0, u = 0;

	if (!v)
		return TS_ENOMEM;
	for (size_t k = 0; k < f->n; k++) {
		const char *s;
		int64_t num = 0;
		int digits = 0;
		if (f->rows[k].name == TS_NO_ID || !(nflag[f->rows[k].name] & NAME_STEP))
			continue;
		/* ProfilerStep\s*#\s*(\d+) at the start (NAME_STEP: the first
		 * word is there) */
		s = ts_trace_str(f->t, f->rows[k].name) + 12;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s++ != '#')
			continue;
		while (*s == ' ' || *s == '\t')
			s++;
		while (*s >= '0' && *s <= '9' && num < INT64_MAX / 10 - 10) {
			num = num * 10 + (*s++ - '0');
			digits++;
		}
		if (digits)
			v[n++] = num;
	}
	if (ts_radix_sort_i64(v, n)) {
		hta_pool_put(f->pool, v);
		return TS_ENOMEM;
	}
	for (size_t k = 0; k < n; k++)
		if (u == 0 || v[u - 1] != v[k])
			v[u++] = v[k];
	r->steps = ts_arena_alloc(a, (u ? u : 1) * sizeof(*r->steps));
	if (!r->steps) {
		hta_pool_put(f->pool, v);
		return TS_ENOMEM;
	}
	memcpy(r->steps, v, u * sizeof(*v));
	r->nsteps = u;
	hta_pool_put(f->pool, v);
	return 0;
}

/* The queue length, beside the other analyzers: it reads the frame and
 * writes r->queue and r->nqueue only; the queue rows go to the job's own
 * arena (arenas are not shared between threads) and are copied over after
 * the join. */
struct queue_job {
	const struct hta_frame *f;
	const uint8_t *nflag;
	struct ts_hta_rank *r;
	struct ts_arena arena;
	int rc;
};

static void *queue_job_main(void *arg)
{
	struct queue_job *j = arg;

	j->rc = queue_length(j->f, j->nflag, &j->arena, j->r);
	return NULL;
}

/* The analyzers that follow the merged kernel intervals (temporal,
 * overlap, kernel-type labels), the kernel tables and the idle breakdown;
 * kf holds f's kernel rows. */
static int kernel_analyses(const struct hta_frame *f, const struct hta_frame *kf,
			 struct ts_arena *arena, struct ts_hta_rank *r, struct hta_labels *lab)
{
	struct merged mg;
	int rc;

	if ((rc = merged_build(kf, &mg)))
		return rc;
	temporal(&mg, r);
	rc = overlap(&mg, r);
	if (!rc)
		rc = rank_labels(&mg, f->pool, lab);
	if (!rc)
		rc = hta_labels_emit(lab, arena, &r->ktype, &r->nktype);
	merged_release(&mg);
	if (!rc)
		rc = ktables(kf, arena, r);
	if (!rc)
		rc = idle_breakdown(f, kf, arena, r);
	return rc;
}

/* kernel_analyses() over f: they read its kernel rows only (r->nkernels of
 * them, f->rows[first] the first and f->rows[last] the last), in frame
 * order, a fifth of the frame to scan: the block of the frame where they
 * are one, else a copy. */
static int kernel_side(const struct hta_frame *f, size_t first, size_t last,
		       struct ts_arena *arena, struct ts_hta_rank *r, struct hta_labels *lab)
{
	struct hta_frame sub = *f, *kf = &sub;
	int rc;

	/* after the filter the linked GPU rows lead the frame: when the
	 * kernel rows (first .. last) are one block, it is their copy */
	if (last - first + 1 == r->nkernels) {
		sub.rows = f->rows + first;
		sub.n = r->nkernels;
		return kernel_analyses(f, kf, arena, r, lab);
	}
	sub.n = 0;
	sub.rows = hta_pool_get(f->pool, (size_t)r->nkernels * sizeof(*sub.rows));
	if (!sub.rows)
		return TS_ENOMEM;
	for (size_t k = 0; k < f->n; k++)
		if (f->rows[k].stream != -1)
			sub.rows[sub.n++] = f->rows[k];
	rc = kernel_analyses(f, kf, arena, r, lab);
	hta_pool_put(f->pool, sub.rows);
	return rc;
}

int hta_rank_analyze(const struct hta_frame *f, struct ts_arena *arena, struct ts_hta_rank *r,
		     struct hta_labels *lab, int threads)
{
	struct queue_job job;
	pthread_t th;
	int started = 0, rc;
	uint8_t *nflag;
	size_t first = 0, last = 0;

	memset(lab, 0, sizeof(*lab));
	r->rounded = f->rounded;
	r->filtered = f->filtered;
	r->nrows = f->n;
	r->nkernels = 0;
	for (size_t k = 0; k < f->n; k++)
		if (f->rows[k].stream != -1) {
			if (r->nkernels++ == 0)
				first = k;
			last = k;
		}
	r->idle_us = r->compute_us = r->non_compute_us = r->kernel_us = NAN;
	r->idle_pct = r->compute_pct = r->non_compute_pct = r->overlap_pct = NAN;
	/* per-name flags, so the row loops compare no strings */
	nflag = malloc(f->t->strings.count + 1);
	if (!nflag)
		return TS_ENOMEM;
	for (size_t k = 0; k < f->t->strings.count; k++) {
		const char *s = ts_intern_str(&f->t->strings, (uint32_t)k);
		/* every launch name starts with c (cuda, cu), h (hip) or r
		 * (runFunction): the other strings skip the compares */
		nflag[k] = 0;
		if (*s == 'c' || *s == 'h' || *s == 'r')
			nflag[k] = (uint8_t)((is_launch_stat_name(s) ? NAME_LAUNCH_STAT : 0) |
					     (is_queue_launch_name(s) ? NAME_QUEUE_LAUNCH : 0));
		else if (strncmp(s, "ProfilerStep", 12) == 0)
			nflag[k] = NAME_STEP;
	}
	rc = steps_kept(f, nflag, arena, r);
	if (rc || r->nkernels == 0) {
		free(nflag);
		return rc;
	}
	job = (struct queue_job){ .f = f, .nflag = nflag, .r = r };
	ts_arena_init(&job.arena);
	if (threads >= 2)
		started = !pthread_create(&th, NULL, queue_job_main, &job);
	rc = kernel_side(f, first, last, arena, r, lab);
	if (!rc)
		rc = launch_stats(f, nflag, r);
	if (started)
		pthread_join(th, NULL);
	else if (!rc)
		queue_job_main(&job);
	if (!rc)
		rc = job.rc;
	if (!rc && r->nqueue) {
		struct ts_hta_queue *q = ts_arena_alloc(arena, r->nqueue * sizeof(*q));
		if (q)
			memcpy(q, r->queue, r->nqueue * sizeof(*q));
		else
			rc = TS_ENOMEM;
		r->queue = q;
	}
	if (rc) {
		r->queue = NULL;
		r->nqueue = 0;
	}
	ts_arena_release(&job.arena);
	free(nflag);
	return rc;
}

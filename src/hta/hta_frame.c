/*
 * hta_frame.c - HTA's preprocessing, turning a trace into the rows its
 * analyzers see.
 *
 * HTA's numbers are decided more by its loader than by its analyzers: it
 * rounds ns timestamps to whole us (on doubles), drops rows without dur or
 * cat, links CPU and GPU rows by correlation, shifts all ranks to one t0,
 * and with two or more ProfilerStep names drops the last step and every GPU
 * row whose correlation no kept CPU row has (duplicating a GPU row once per
 * matching CPU row, as its pandas merge does). This file reproduces those
 * steps and the resulting row order, which later tie-breaking depends on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hta_int.h"

/* A regex `.*X` only looks at the first line ('.' stops at a newline). */
static int in_first_line(const char *s, const char *needle)
{
	const char *nl = strchr(s, '\n');
	const char *p = strstr(s, needle);
	return p && (!nl || p + strlen(needle) <= nl);
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

enum ts_hta_ktype hta_classify(const char *n)
{
	static const char *const not_comp_prefix[] = {
		"nccl", "Stream Wait Event", "runFunction", "hip", "job_exe",
		"packet", "pe_exe", "cpum_exe_subgraph", "hccl",
		"collective_subgraph_execution"
	};
	const char *nl;

	/* (^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*) */
	if (starts(n, "nccl") || starts(n, "hip") || starts(n, "hccl") ||
	    in_first_line(n, "ncclKernel"))
		return TS_HTA_COMM;
	/* (^(hip)?Memcpy)|(^(hip)?Memset)|(^dma) */
	if (starts(n, "Memcpy") || starts(n, "Memset") || starts(n, "dma"))
		return TS_HTA_MEM;
	for (size_t k = 0; k < sizeof(not_comp_prefix) / sizeof(*not_comp_prefix); k++)
		if (starts(n, not_comp_prefix[k]))
			return TS_HTA_OTHER;
	if (in_first_line(n, "Memcpy") || in_first_line(n, "Memset") ||
	    in_first_line(n, "dma") || in_first_line(n, "Sync"))
		return TS_HTA_OTHER;
	/* (cuda.*LaunchKernel) */
	nl = strchr(n, '\n');
	if (starts(n, "cuda")) {
		const char *p = strstr(n + 4, "LaunchKernel");
		if (p && (!nl || p + 12 <= nl))
			return TS_HTA_OTHER;
	}
	return TS_HTA_COMP;
}

static int is_step_name(const char *s)
{
	/* ^ProfilerStep#(\d+) */
	return starts(s, "ProfilerStep#") && s[13] >= '0' && s[13] <= '9';
}

/* The double Python's json module makes of the decimal text ns/1000. */
static double us_double(int64_t ns)
{
	char buf[48];
	uint64_t mag;

	if (ns > -(INT64_C(1) << 53) && ns < (INT64_C(1) << 53))
		return (double)ns / 1000.0; /* one correctly rounded division */
	mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	snprintf(buf, sizeof(buf), "%s%llu.%03llu", ns < 0 ? "-" : "",
		 (unsigned long long)(mag / 1000), (unsigned long long)(mag % 1000));
	return strtod(buf, NULL);
}

static int64_t us_to_ns(double us)
{
	if (us > 9e15)
		us = 9e15;
	if (us < -9e15)
		us = -9e15;
	return (int64_t)us * 1000;
}

static int cat_is_kernel(const char *c)
{
	static const char *const k[] = { "kernel", "Kernel", "gpu_memset", "Memset",
					 "gpu_memcpy", "Memcpy", "mtia_ccp_events" };
	for (size_t i = 0; i < sizeof(k) / sizeof(*k); i++)
		if (strcmp(c, k[i]) == 0)
			return 1;
	return 0;
}

#define S_DONE 0x80
#define S_TRACE 0x04   /* the category "Trace" */
#define S_KCAT 0x08    /* a kernel/memcpy/memset/mtia_ccp category */
#define S_SYNC 0x10    /* "Event Sync" / "Context Sync" */
#define S_STEP 0x20    /* ^ProfilerStep#\d */

/* Facts about one interned string, computed once (bits 0-1: kernel class). */
static uint8_t sfacts_new(const struct ts_trace *t, uint8_t *cache, uint32_t id)
{
	const char *s;
	uint8_t v;

	if (id == TS_NO_ID || id >= t->strings.count)
		return TS_HTA_COMP;
	s = ts_intern_str(&t->strings, id);
	v = (uint8_t)(S_DONE | hta_classify(s));
	if (strcmp(s, "Trace") == 0)
		v |= S_TRACE;
	if (cat_is_kernel(s))
		v |= S_KCAT;
	if (strcmp(s, "Event Sync") == 0 || strcmp(s, "Context Sync") == 0)
		v |= S_SYNC;
	if (is_step_name(s))
		v |= S_STEP;
	cache[id] = v;
	return v;
}

static inline uint8_t sfacts(const struct ts_trace *t, uint8_t *cache, uint32_t id)
{
	if (id < t->strings.count && (cache[id] & S_DONE))
		return cache[id];
	return sfacts_new(t, cache, id);
}

int hta_direct_fits(const struct hta_frame *f, size_t expect, size_t entry)
{
	return f->cbits && f->ncid <= hta_map_bytes(expect) / entry;
}

/* f->cbits and f->crank over the rows' correlations, when the frame is
 * direct and a bit per id of their span (with the ranks, 3/16 byte) costs
 * no more than a map of them would. 0 or TS_ENOMEM. */
static int corr_index(struct hta_frame *f, size_t ncorr)
{
	if (!f->direct || !ncorr || !f->corr_span || f->corr_span / 16 * 3 > hta_map_bytes(ncorr))
		return 0;
	if (hta_rankbits_get(f->pool, f->corr_span, &f->cbits, &f->crank))
		return TS_ENOMEM;
	for (size_t k = 0; k < f->n; k++)
		if (f->rows[k].corr != -1)
			hta_rankbits_set(f->cbits, (uint64_t)f->rows[k].corr - (uint64_t)f->corr_lo);
	f->ncid = hta_rankbits_rank(f->cbits, f->crank, f->corr_span);
	return 0;
}

struct link {
	uint32_t cpu, gpu;  /* last CPU (GPU) row's event with the id, or UINT32_MAX */
};

/* index_correlation: the last CPU (GPU) row in file order sharing the
 * correlation wins, as with HTA's df.loc assignment of a merge. Shifts ts
 * to the frame's origin on the way. */
static int frame_link(struct hta_frame *f, size_t ncorr)
{
	struct hta_map m = { 0 };
	struct link *d = NULL;

	if (hta_direct_fits(f, ncorr, sizeof(*d))) {
		d = hta_pool_get(f->pool, f->ncid * sizeof(*d));
		if (!d)
			return TS_ENOMEM;
		memset(d, 0xff, f->ncid * sizeof(*d));
	} else if (hta_map_init(&m, f->pool, ncorr, f->corr_span)) {
		return TS_ENOMEM;
	}
	for (size_t k = 0; k < f->n; k++) {
		struct hta_row *r = &f->rows[k];
		if (r->corr == -1)
			continue;
		if (d) {
			struct link *l = &d[hta_corr_slot(f, r->corr)];
			if (r->flags & HTA_ROW_GPU)
				l->gpu = r->ev;
			else
				l->cpu = r->ev;
		} else {
			size_t s = hta_map_put(&m, r->corr, -1);
			if (r->flags & HTA_ROW_GPU)
				m.b[s] = r->ev;
			else
				m.a[s] = r->ev;
		}
	}
	for (size_t k = 0; k < f->n; k++) {
		struct hta_row *r = &f->rows[k];
		int64_t cpu, gpu;
		r->ts -= f->t0;
		if (r->corr == -1)
			continue;
		if (d) {
			const struct link *l = &d[hta_corr_slot(f, r->corr)];
			cpu = l->cpu == UINT32_MAX ? -1 : (int64_t)l->cpu;
			gpu = l->gpu == UINT32_MAX ? -1 : (int64_t)l->gpu;
		} else {
			int64_t s = hta_map_find(&m, r->corr);
			cpu = m.a[s];
			gpu = m.b[s];
		}
		if (r->flags & HTA_ROW_GPU) {
			if (cpu >= 0)
				r->icorr = (uint32_t)cpu;
		} else if (gpu >= 0) {
			r->icorr = (uint32_t)gpu;
		}
	}
	hta_pool_put(f->pool, d);
	hta_map_release(&m);
	return 0;
}

/* Rows of one trace in file order, rounded, with index_correlation. */
int hta_frame_base(const struct ts_trace *t, struct hta_pool *pool, int direct,
		   struct hta_frame *f)
{
	const struct ts_trace_events *ev = &t->ev;
	uint8_t *cache = NULL;
	int rc = TS_ENOMEM;
	size_t n = 0, ncorr = 0;
	int64_t t0 = INT64_MAX, clo = INT64_MAX, chi = INT64_MIN;
	int64_t cpu_min = INT64_MAX, step_max = INT64_MIN;

	memset(f, 0, sizeof(*f));
	f->t = t;
	f->pool = pool;
	f->direct = direct;
	for (size_t i = 0; i < ev->n; i++) {
		int64_t s = ts_ev_ts(ev, i);
		if (s == TS_NONE || s % 1000 != 0) {
			f->rounded = 1;
			break;
		}
	}
	f->rows = malloc((ev->n ? ev->n : 1) * sizeof(*f->rows));
	cache = hta_pool_get(pool, t->strings.count + 1);
	if (!f->rows || !cache)
		goto out;
	memset(cache, 0, t->strings.count + 1);
	for (size_t i = 0; i < ev->n; i++) {
		struct hta_row *r;
		uint8_t cf, nf;
		int64_t ts, dur;
		uint32_t cat;

		if (ev->ph[i] != 'X')
			continue;
		ts = ts_ev_ts(ev, i);
		dur = ts_ev_dur(ev, i);
		cat = ts_ev_cat_str(ev, i);
		if (dur == TS_NONE || ts == TS_NONE || cat == TS_NO_ID)
			continue;
		/* past 2^61 ns (73 years) no trace goes; HTA keeps negative
		 * durations, and so do we, within the same bound */
		if (ts < -HTA_TIME_LIM || ts > HTA_TIME_LIM || dur < -HTA_TIME_LIM ||
		    dur > HTA_TIME_LIM)
			continue;
		cf = sfacts(t, cache, cat);
		if (cf & S_TRACE)
			continue;
		nf = sfacts(t, cache, ev->name[i]);
		r = &f->rows[n++];
		r->ev = (uint32_t)i;
		r->name = ev->name[i];
		if (f->rounded) {
			double tsu = us_double(ts);
			double end = tsu + us_double(dur);
			r->ts = us_to_ns(ceil(tsu));
			r->dur = us_to_ns(floor(end)) - r->ts;
		} else {
			r->ts = ts;
			r->dur = dur;
		}
		r->stream = ts_ev_stream(ev, i) == TS_NONE ? -1 : ts_ev_stream(ev, i);
		r->corr = ts_ev_corr(ev, i) == TS_NONE ? -1 : ts_ev_corr(ev, i);
		r->ktype = nf & 3;
		r->flags = 0;
		if ((r->stream >= 0 && r->corr >= 0) || (nf & S_SYNC))
			r->flags |= HTA_ROW_GPU;
		if (cf & S_KCAT)
			r->flags |= HTA_ROW_KCAT;
		if (nf & S_STEP)
			r->flags |= HTA_ROW_STEP;
		r->icorr = r->corr < 0 ? HTA_ICORR_NEG : 0;
		if (r->corr != -1) {
			ncorr++;
			clo = r->corr < clo ? r->corr : clo;
			chi = r->corr > chi ? r->corr : chi;
		}
		if (r->ts < t0)
			t0 = r->ts;
		if (!(r->flags & HTA_ROW_GPU)) {
			f->ncpu++;
			f->ncpu_corr += r->corr != -1;
			if (r->ts < cpu_min)
				cpu_min = r->ts;
			if ((r->flags & HTA_ROW_STEP) && r->ts > step_max)
				step_max = r->ts;
		}
	}
	f->n = n;
	/* a local origin keeps every later sum small; HTA's results do not
	 * depend on where t = 0 is (applied in the pass below) */
	f->t0 = n ? t0 : 0;
	/* on the rows' origin, as frame_link() shifts them */
	f->cpu_min_ts = f->ncpu ? cpu_min - f->t0 : INT64_MAX;
	f->step_max_ts = step_max != INT64_MIN ? step_max - f->t0 : INT64_MIN;
	f->corr_span = ncorr ? (uint64_t)chi - (uint64_t)clo + 1 : 0;
	f->corr_lo = ncorr ? clo : 0;
	rc = corr_index(f, ncorr);
	if (!rc)
		rc = frame_link(f, ncorr);
out:
	hta_pool_put(pool, cache);
	return rc;
}

/* Kept CPU rows per correlation: a table by id (hta_direct_fits) or a map;
 * key -1 counted apart. */
struct corr_count {
	const struct hta_frame *f;
	struct hta_map map;
	uint32_t *d;        /* NULL: the map */
	size_t none;        /* key -1 */
};

static int count_init(struct corr_count *c, const struct hta_frame *f, size_t nkeys)
{
	memset(c, 0, sizeof(*c));
	c->f = f;
	if (!hta_direct_fits(f, nkeys, sizeof(*c->d)))
		return hta_map_init(&c->map, f->pool, nkeys, f->corr_span);
	c->d = hta_pool_get(f->pool, f->ncid * sizeof(*c->d));
	if (!c->d)
		return TS_ENOMEM;
	memset(c->d, 0, f->ncid * sizeof(*c->d));
	return 0;
}

static void count_release(struct corr_count *c)
{
	if (c->f)
		hta_pool_put(c->f->pool, c->d);
	hta_map_release(&c->map);
	memset(c, 0, sizeof(*c));
}

static void count_add(struct corr_count *c, int64_t corr)
{
	if (corr == -1)
		c->none++;
	else if (c->d)
		c->d[hta_corr_slot(c->f, corr)]++;
	else
		c->map.a[hta_map_put(&c->map, corr, 0)]++;
}

static size_t count_of(const struct corr_count *c, int64_t corr)
{
	int64_t s;

	if (corr == -1)
		return c->none;
	if (c->d)
		return c->d[hta_corr_slot(c->f, corr)];
	s = hta_map_find(&c->map, corr);
	return s < 0 ? 0 : (size_t)c->map.a[s];
}

/* Keep CPU rows before the last step and GPU rows a kept CPU row links. */
int hta_frame_filter(struct hta_frame *f, struct ts_err *err)
{
	struct corr_count cnt = { 0 };
	struct hta_row *out = NULL;
	/* CPU rows without a correlation share the key -1 */
	int64_t last_start = f->step_max_ts;
	size_t nkeys = f->ncpu_corr + 1, nout = 0, total = 0, ncpu_kept, cap;
	int rc = TS_ENOMEM;

	if (f->ncpu == 0)
		return 0;
	if (last_start == INT64_MIN)
		last_start = f->cpu_min_ts;
	f->filtered = 1;
	if (count_init(&cnt, f, nkeys))
		goto out;
	for (size_t k = 0; k < f->n; k++) {
		const struct hta_row *r = &f->rows[k];
		if (!(r->flags & HTA_ROW_GPU) && r->ts < last_start) {
			count_add(&cnt, r->corr);
			total++;
		}
	}
	ncpu_kept = total;
	for (size_t k = 0; k < f->n; k++)
		if (f->rows[k].flags & HTA_ROW_GPU)
			total += count_of(&cnt, f->rows[k].corr);
	cap = 16 * f->t->ev.n + 1024;
	if (total > cap) {
		rc = ts_err_set(err, TS_ELIMIT,
				"%s: HTA's correlation filter would repeat GPU rows %zu times "
				"(more than 16 per event); refusing", f->t->path, total);
		goto out;
	}
	/* the result is the linked GPU rows (each as often as kept CPU rows
	 * share its correlation), then the kept CPU rows, both in frame
	 * order. Only the GPU part is copied out; the CPU rows are compacted
	 * in place (a row never moves forward), shifted behind it, and the GPU
	 * part copied in front: no second frame. */
	if (total > f->n) {
		struct hta_row *g = realloc(f->rows, total * sizeof(*f->rows));
		if (!g)
			goto out;
		f->rows = g;
	}
	out = hta_pool_get(f->pool, (total - ncpu_kept ? total - ncpu_kept : 1) * sizeof(*out));
	if (!out)
		goto out;
	/* one pass: row k is read before the compaction writes over it (it
	 * writes at c <= k) */
	for (size_t k = 0, c = 0; k < f->n; k++) {
		const struct hta_row *r = &f->rows[k];
		if (r->flags & HTA_ROW_GPU) {
			for (size_t m = count_of(&cnt, r->corr); m > 0; m--)
				out[nout++] = *r;
		} else if (r->ts < last_start) {
			f->rows[c++] = *r;
		}
	}
	memmove(f->rows + nout, f->rows, ncpu_kept * sizeof(*f->rows));
	memcpy(f->rows, out, nout * sizeof(*f->rows));
	f->n = nout + ncpu_kept;
	{
		/* give back the rows the filter dropped (a failure keeps them) */
		struct hta_row *g = realloc(f->rows, (f->n ? f->n : 1) * sizeof(*f->rows));
		if (g)
			f->rows = g;
	}
	rc = 0;
out:
	hta_pool_put(f->pool, out);
	count_release(&cnt);
	return rc;
}

void hta_frame_release(struct hta_frame *f)
{
	hta_pool_put(f->pool, f->cbits);
	hta_pool_put(f->pool, f->crank);
	free(f->rows);
	memset(f, 0, sizeof(*f));
}

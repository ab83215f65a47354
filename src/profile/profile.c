/*
 * profile.c - one rank window: where every nanosecond went.
 *
 * Why this module exists: a Kineto trace is millions of loose events; the
 * questions a performance engineer asks (how busy was the GPU, how much
 * communication was not hidden, which step was slow and why) are answers
 * about sets of intervals. This file turns the columnar trace into those
 * sets once (GPU activity by taxonomy class, main-thread CPU ops, data
 * loader, collectives), measures them exactly with ivset.c, attributes GPU
 * work to steps through the launch correlation, and derives the step
 * outliers and the rank's wall verdict. Everything is O(n log n).
 */
#include <pthread.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/profile.h"
#include "prof_util.h"
#include "radix.h"

#define NOCLS 0xff

static const char *const wall_names[TS_WALL_COUNT] = {
	"compute", "memory", "communication", "host", "data", "straggler", "undetermined"
};

const char *ts_wall_name(enum ts_wall w)
{
	return (unsigned)w < TS_WALL_COUNT ? wall_names[w] : "compute";
}

void ts_rank_prof_init(struct ts_rank_prof *p)
{
	memset(p, 0, sizeof(*p));
	p->rank = -1;
	p->overlap_pct = -1;
	p->mem_peak_alloc_bytes = -1;
	p->mem_peak_reserved_bytes = -1;
	p->device_mem_bytes = -1;
	p->gpu_behind_frac = NAN;
	p->dev_step_p50_ns = TS_NONE;
	ts_intern_init(&p->names);
}

void ts_rank_prof_release(struct ts_rank_prof *p)
{
	TS_VEC_RELEASE(p->top);
	TS_VEC_RELEASE(p->idle);
	TS_VEC_RELEASE(p->steps);
	TS_VEC_RELEASE(p->colls);
	ts_intern_release(&p->names);
}

const char *ts_prof_str(const struct ts_rank_prof *p, uint32_t id)
{
	return id < p->names.count ? ts_intern_str(&p->names, id) : "";
}

size_t ts_prof_len(const struct ts_rank_prof *p, uint32_t id)
{
	return id < p->names.count ? ts_intern_len(&p->names, id) : 0;
}

/* ------------------------------------------------------------ helpers */

/* Median (mean of the two middle values) of v, sorted in place. */
static int64_t median_of(int64_t *v, size_t n)
{
	if (!n)
		return 0;
	sort_n(v, n, sizeof(*v), cmp_i64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median absolute deviation around m (v is scratch). */
static int64_t mad_of(const int64_t *src, int64_t *tmp, size_t n, int64_t m)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = src[i] > m ? src[i] - m : m - src[i];
	return median_of(tmp, n);
}

static int starts_with(const char *s, const char *pre)
{
	return strncmp(s, pre, strlen(pre)) == 0;
}

static int contains_ci(const char *s, const char *pat)
{
	size_t m = strlen(pat);

	for (; *s; s++) {
		size_t i = 0;
		while (i < m && s[i] && (s[i] | 32) == (pat[i] | 32))
			i++;
		if (i == m)
			return 1;
	}
	return 0;
}

/* Names keep all their bytes (a NUL inside a name is part of it). */
static uint32_t keep_name(struct ts_rank_prof *p, const char *s, size_t n, int *failed)
{
	int64_t id = ts_intern(&p->names, s, n);

	if (id < 0) {
		*failed = 1;
		return 0;
	}
	return (uint32_t)id;
}

/* ------------------------------------------------------------ the work */

/* A timed GPU activity, for the idle split (sorted by start there). */
struct gpu_ev {
	int64_t s;
	int64_t launch;         /* launch call start, TS_NONE when unlinked */
};

static uint64_t key_gev_s(const void *x)
{
	return ts_radix_i64(((const struct gpu_ev *)x)->s);
}

struct corr {
	int64_t corr;
	uint32_t ev;
};

static uint64_t key_corr(const void *x)
{
	return ts_radix_i64(((const struct corr *)x)->corr);
}

/*
 * Runtime/driver call by correlation id: the first such call (in event
 * order) with the id. Correlation ids are mostly a counter shared with
 * other records, so when their range is at most CORR_DENSE_MAX times the
 * number of calls they are indexed without a sort: a bitmap over the range
 * (1 bit per id), the count of set bits before each 64-bit word, and the
 * event of each present id in id order (about 5 B per call here, at most
 * 16 B). Otherwise (hostile or merged traces) sorted (id, event) pairs.
 * Both give the same answers.
 */
#define CORR_DENSE_MAX 64
#define CORR_NONE UINT32_MAX

struct corr_map {
	uint64_t *bits;         /* dense: bit (id - lo) set when a call has the id */
	uint32_t *rank;         /* dense: set bits in the words before word w */
	uint32_t *ev;           /* dense: event of the k-th present id */
	int64_t lo;
	uint64_t span;
	struct corr *pairs;     /* sparse: sorted by id, stable */
	size_t n;
};

/* Index of a present id among the present ids (dense map). */
static size_t corr_rank(const struct corr_map *m, uint64_t k)
{
	uint64_t below = m->bits[k / 64] & ((UINT64_C(1) << (k % 64)) - 1);

	return m->rank[k / 64] + ts_popcount64(below);
}

static int corr_below(const void *elem, const void *c)
{
	return ((const struct corr *)elem)->corr < *(const int64_t *)c;
}

static int64_t find_corr(const struct corr_map *m, int64_t c)
{
	size_t l;

	if (m->bits) {
		uint64_t k = (uint64_t)c - (uint64_t)m->lo;
		if (c < m->lo || k >= m->span || !(m->bits[k / 64] >> (k % 64) & 1))
			return -1;
		return m->ev[corr_rank(m, k)];
	}
	l = ts_lower_bound(m->pairs, m->n, sizeof(*m->pairs), &c, corr_below);
	return l < m->n && m->pairs[l].corr == c ? (int64_t)m->pairs[l].ev : -1;
}

static int cmp_kstat(const void *x, const void *y)
{
	const struct ts_kernel_stat *a = x, *b = y;

	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return (a->name > b->name) - (a->name < b->name);
}

/* A GPU activity in its (device, stream) bucket, for the idle per stream. */
struct stream_ev {
	int64_t s, e;
	int64_t launch_ts;      /* TS_NONE without a linked runtime call */
};

static uint64_t key_sev_s(const void *x)
{
	return ts_radix_i64(((const struct stream_ev *)x)->s);
}

/* One (device, stream) and where its activities lie in the bucket array. */
struct track {
	int64_t dev, stream;
	size_t n, off;
};

static int cmp_track(const void *x, const void *y)
{
	const struct track *a = x, *b = y;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return (a->stream > b->stream) - (a->stream < b->stream);
}

struct thread_dur {
	int64_t pid, tid, dur;
};

static int cmp_thread(const void *x, const void *y)
{
	const struct thread_dur *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->tid > b->tid) - (a->tid < b->tid);
}

struct step_src {
	int64_t step, s, e;
};

static int cmp_step_src(const void *x, const void *y)
{
	const struct step_src *a = x, *b = y;

	if (a->s != b->s)
		return (a->s > b->s) - (a->s < b->s);
	if (a->step != b->step)
		return (a->step > b->step) - (a->step < b->step);
	return (a->e > b->e) - (a->e < b->e);
}

static int cmp_coll(const void *x, const void *y)
{
	const struct ts_coll_span *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

static int step_ends_by(const void *elem, const void *t)
{
	const struct ts_step_prof *s = elem;
	return s->start_ns + s->dur_ns <= *(const int64_t *)t;
}

int32_t ts_rank_prof_step_at(const struct ts_rank_prof *p, int64_t t)
{
	size_t l = ts_lower_bound(p->steps.v, p->steps.n, sizeof(*p->steps.v), &t, step_ends_by);

	if (l < p->steps.n && p->steps.v[l].start_ns <= t)
		return (int32_t)l;
	return -1;
}

/* ts_rank_prof_step_at(p, t), trying first the step *hint (found for the
 * time before; times that come nearly in order mostly fall in it) and
 * leaving the answer there: the same answer, as steps are sorted and
 * disjoint, without the search. */
static int32_t step_at_near(const struct ts_rank_prof *p, int64_t t, int32_t *hint)
{
	const struct ts_step_prof *h = *hint >= 0 ? &p->steps.v[*hint] : NULL;

	if (h && h->start_ns <= t && t < h->start_ns + h->dur_ns)
		return *hint;
	*hint = ts_rank_prof_step_at(p, t);
	return *hint;
}

/* S_E*: the exposed parts of comm, memcpy and memset (what steps are
 * measured on, with busy and compute). */
enum set_id {
	S_BUSY, S_COMPUTE, S_COMM, S_MEMCPY, S_MEMSET, S_HOST, S_DATA, S_CPUCOMM, S_FWD,
	S_BWD, S_OPT, S_UNLINKED, S_ECOMM, S_EMCPY, S_EMSET, S_T1, S_T2, S_T3, S_HOST_CALLS,
	S_NSETS
};

struct work {
	struct ts_ivset set[S_NSETS];
	struct ts_ivset cls[TS_KC_COUNT];
	uint8_t *name_cls;      /* per interned name, NOCLS = not yet classified */
	uint16_t *name_flags;   /* per interned name, F_* bits, 0 = not yet looked at */
	uint8_t *name_dir;      /* per interned name, enum ts_mdir, NOCLS = not yet looked at */
	uint8_t *tm;            /* per event: timed(); with GPU activity its buffer
				 * becomes compute's union once the sets are built */
	uint32_t *gpu;          /* event of each timed GPU activity, in event order */
	uint32_t *gpu_launch;   /* its launch call (find_corr), CORR_NONE when unlinked */
	size_t ngpu;            /* entries of gpu */
	uint32_t *calls;        /* event of each timed runtime/driver call, in event order
				 * (freed by launch_and_idle) */
	size_t ncalls;
	struct corr_map corr;
	int64_t *tmp, *tmp2;
	size_t ntmp;
};

static void work_release(struct work *w)
{
	for (int i = 0; i < S_NSETS; i++)
		ts_ivset_release(&w->set[i]);
	for (int i = 0; i < TS_KC_COUNT; i++)
		ts_ivset_release(&w->cls[i]);
	free(w->name_cls);
	free(w->name_flags);
	free(w->name_dir);
	free(w->tm);
	free(w->gpu);
	free(w->gpu_launch);
	free(w->calls);
	free(w->corr.bits);
	free(w->corr.rank);
	free(w->corr.ev);
	free(w->corr.pairs);
	free(w->tmp);
	free(w->tmp2);
}

/* Give back what only the figures above needed; the finding tracks
 * (export_tracks) still use the other sets. */
static void work_drop(struct work *w)
{
	static const enum set_id drop[] = {
		S_MEMSET, S_FWD, S_BWD, S_OPT, S_UNLINKED, S_ECOMM, S_EMCPY, S_EMSET, S_T1, S_T2,
		S_T3
	};

	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		ts_ivset_release(&w->set[drop[i]]);
	for (int i = 0; i < TS_KC_COUNT; i++)
		ts_ivset_release(&w->cls[i]);
}

static int is_gpu_cat(int cat)
{
	return cat == TS_CAT_KERNEL || cat == TS_CAT_MEMCPY || cat == TS_CAT_MEMSET;
}

/* Times beyond +-2^61 ns (73 years around the epoch) are not real; keeping
 * them out lets every end, difference and union length fit int64. */
#define TIME_LIM (INT64_C(1) << 61)

static int timed(const struct ts_trace *t, size_t i)
{
	int64_t ts = ts_ev_ts(&t->ev, i), d = ts_ev_dur(&t->ev, i);

	return t->ev.ph[i] == 'X' && d != TS_NONE && d >= 0 && d <= TIME_LIM &&
	       ts != TS_NONE && ts >= -TIME_LIM && ts <= TIME_LIM;
}

/* timed() of the events [lo, hi) into tm[lo, hi), on the thread that runs
 * it. */
struct timed_job {
	const struct ts_trace *t;
	uint8_t *tm;
	size_t lo, hi;
};

static void *timed_main(void *arg)
{
	struct timed_job *j = arg;

	for (size_t i = j->lo; i < j->hi; i++)
		j->tm[i] = (uint8_t)timed(j->t, i);
	return NULL;
}

/* timed() of every event into tm; with two threads each takes one half of
 * the events (disjoint parts of tm, joined before return). */
static void timed_all(const struct ts_trace *t, uint8_t *tm, int threads)
{
	struct timed_job job[2] = { { t, tm, 0, t->ev.n / 2 }, { t, tm, t->ev.n / 2, t->ev.n } };
	pthread_t th;

	if (threads < 2 || pthread_create(&th, NULL, timed_main, &job[1])) {
		job[0].hi = t->ev.n;
		timed_main(&job[0]);
		return;
	}
	timed_main(&job[0]);
	pthread_join(th, NULL);
}

/* Sums of overlapping durations (or bytes) saturate instead of wrapping. */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static enum ts_kclass class_of(struct work *w, const struct ts_trace *t, size_t i)
{
	uint32_t id = t->ev.name[i];
	const char *s;

	if (id >= t->strings.count)
		return TS_KC_OTHER;
	if (w->name_cls[id] == NOCLS) {
		s = ts_intern_str(&t->strings, id);
		w->name_cls[id] = (uint8_t)ts_kclass_of(s, ts_intern_len(&t->strings, id),
						       t->ev.cat[i] == TS_CAT_MEMCPY,
						       t->ev.cat[i] == TS_CAT_MEMSET);
	}
	return (enum ts_kclass)w->name_cls[id];
}

static const char *tstr(const struct ts_trace *t, uint32_t id)
{
	return id < t->strings.count ? ts_intern_str(&t->strings, id) : "";
}

static const char *ev_name(const struct ts_trace *t, size_t i)
{
	return tstr(t, t->ev.name[i]);
}

/* Memcpy direction of event i's name, looked at once per name. */
static enum ts_mdir dir_of(struct work *w, const struct ts_trace *t, size_t i)
{
	uint32_t id = t->ev.name[i];

	if (id >= t->strings.count)
		return ts_memcpy_dir("", 0);
	if (w->name_dir[id] == NOCLS)
		w->name_dir[id] = (uint8_t)ts_memcpy_dir(ts_intern_str(&t->strings, id),
							 strlen(ts_intern_str(&t->strings, id)));
	return (enum ts_mdir)w->name_dir[id];
}

/* What a name says, looked at once per distinct name (not per event). */
enum {
	F_KNOWN = 1 << 0, F_STEP = 1 << 1, F_DATA = 1 << 2, F_CPUCOMM = 1 << 3, F_OPT = 1 << 4,
	F_FWD = 1 << 5, F_BWD_OP = 1 << 6, F_BWD_ANN = 1 << 7, F_LAUNCH = 1 << 8, F_GRAPH = 1 << 9
};

static unsigned flags_of(const char *nm, size_t n)
{
	unsigned f = F_KNOWN;

	if (starts_with(nm, "ProfilerStep#"))
		f |= F_STEP;
	if (starts_with(nm, "enumerate(DataLoader)"))
		f |= F_DATA;
	if (ts_is_cpu_collective(nm, n))
		f |= F_CPUCOMM;
	if (starts_with(nm, "Optimizer."))
		f |= F_OPT;
	if (contains_ci(nm, "backward"))
		f |= F_BWD_ANN;
	else if (contains_ci(nm, "forward"))
		f |= F_FWD;
	if (starts_with(nm, "autograd::engine::evaluate_function"))
		f |= F_BWD_OP;
	if (ts_is_launch_call(nm, n))
		f |= F_LAUNCH;
	if (ts_is_graph_launch(nm, n))
		f |= F_GRAPH;
	return f;
}

static unsigned name_flags_first(struct work *w, const struct ts_trace *t, uint32_t id)
{
	w->name_flags[id] = (uint16_t)flags_of(ts_intern_str(&t->strings, id),
					       ts_intern_len(&t->strings, id));
	return w->name_flags[id];
}

/* Called for most events: the cached look is inlined, the first look at a
 * name is not. */
static inline unsigned name_flags(struct work *w, const struct ts_trace *t, size_t i)
{
	uint32_t id = t->ev.name[i];

	if (id >= t->strings.count)
		return F_KNOWN;
	return w->name_flags[id] ? w->name_flags[id] : name_flags_first(w, t, id);
}

/* Keep the first n entries of a list allocated for more (only the pages
 * written were touched; giving back the rest keeps the heap small). */
static uint32_t *shrink_list(uint32_t *v, size_t n)
{
	uint32_t *r = realloc(v, (n ? n : 1) * sizeof(*v));

	return r ? r : v;
}

/*
 * The lists of struct work (timed GPU activities, timed runtime/driver
 * calls) in one pass over the events, then the correlation map from the
 * calls (see struct corr_map) and each activity's launch call (the class of
 * its name is found by gpu_sets, which walks the same list in the same
 * order). Later passes walk the lists instead of every event. Reads only the
 * trace and w->tm.
 */
static int index_build(struct work *w, const struct ts_trace *t)
{
	struct corr_map *m = &w->corr;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t n = 0, words, present = 0;
	/* each call's correlation id as the trace's sparse column codes it
	 * (4 B, ts_c32_dec), looked up there once (the map below reads it
	 * twice) */
	uint32_t *cc = malloc((t->ev.n + 1) * sizeof(*cc));
	int rc = TS_ENOMEM;

	memset(m, 0, sizeof(*m));
	w->gpu = malloc((t->ev.n + 1) * sizeof(*w->gpu));
	w->calls = malloc((t->ev.n + 1) * sizeof(*w->calls));
	if (!cc || !w->gpu || !w->calls)
		goto out;
	for (size_t i = 0; i < t->ev.n; i++) {
		int cat = t->ev.cat[i];
		int64_t c;
		if (!w->tm[i])
			continue;
		if (is_gpu_cat(cat)) {
			w->gpu[w->ngpu++] = (uint32_t)i;
			continue;
		}
		if (cat != TS_CAT_RUNTIME && cat != TS_CAT_DRIVER)
			continue;
		cc[w->ncalls] = ts_sparse_raw(&t->ev.correlation, i);
		c = ts_c32_dec(cc[w->ncalls], &t->ev.esc[TS_C32_CORR], i);
		w->calls[w->ncalls++] = (uint32_t)i;
		if (c == TS_NONE)
			continue;
		if (c < lo)
			lo = c;
		if (c > hi)
			hi = c;
		n++;
	}
	w->gpu = shrink_list(w->gpu, w->ngpu);
	w->calls = shrink_list(w->calls, w->ncalls);
	if (!n)
		goto link;
	/* hi - lo as unsigned cannot overflow; the span test keeps it small */
	if ((uint64_t)hi - (uint64_t)lo < (uint64_t)n * CORR_DENSE_MAX) {
		m->lo = lo;
		m->span = (uint64_t)hi - (uint64_t)lo + 1;
		words = (size_t)(m->span / 64 + 1);
		m->bits = calloc(words, sizeof(*m->bits));
		m->rank = malloc(words * sizeof(*m->rank));
		if (!m->bits || !m->rank)
			goto out;
		for (size_t j = 0; j < w->ncalls; j++) {
			int64_t c = ts_c32_dec(cc[j], &t->ev.esc[TS_C32_CORR], w->calls[j]);
			if (c != TS_NONE) {
				uint64_t k = (uint64_t)c - (uint64_t)lo;
				m->bits[k / 64] |= UINT64_C(1) << (k % 64);
			}
		}
		for (size_t x = 0; x < words; x++) {
			m->rank[x] = (uint32_t)present;
			present += ts_popcount64(m->bits[x]);
		}
		m->ev = malloc(present * sizeof(*m->ev));
		if (!m->ev)
			goto out;
		memset(m->ev, 0xff, present * sizeof(*m->ev));
		for (size_t j = 0; j < w->ncalls; j++) {
			int64_t c = ts_c32_dec(cc[j], &t->ev.esc[TS_C32_CORR], w->calls[j]);
			if (c != TS_NONE) {
				uint32_t *d = &m->ev[corr_rank(m, (uint64_t)c - (uint64_t)lo)];
				if (*d == CORR_NONE)
					*d = w->calls[j];
			}
		}
	} else {
		m->pairs = malloc(n * sizeof(*m->pairs));
		if (!m->pairs)
			goto out;
		for (size_t j = 0; j < w->ncalls; j++) {
			int64_t c = ts_c32_dec(cc[j], &t->ev.esc[TS_C32_CORR], w->calls[j]);
			if (c != TS_NONE)
				m->pairs[m->n++] = (struct corr){ c, w->calls[j] };
		}
		if (ts_radix_sort(m->pairs, m->n, sizeof(*m->pairs), key_corr))
			goto out;
	}
link:
	/* the ids are done with: their buffer (its pages touched) takes the
	 * activities' launch calls */
	w->gpu_launch = realloc(cc, (w->ngpu ? w->ngpu : 1) * sizeof(*w->gpu_launch));
	if (!w->gpu_launch)
		goto out;
	cc = NULL;
	for (size_t k = 0; k < w->ngpu; k++) {
		int64_t c = ts_ev_corr(&t->ev, w->gpu[k]);
		int64_t r = c != TS_NONE ? find_corr(m, c) : -1;
		w->gpu_launch[k] = r >= 0 ? (uint32_t)r : CORR_NONE;
	}
	rc = 0;
out:
	free(cc);
	return rc;
}

/* A runtime or driver call, or device work: what Kineto writes after the
 * host's ops (the CUPTI activities). */
static int is_activity(const struct ts_trace *t, size_t i)
{
	int c = t->ev.cat[i];

	return c == TS_CAT_RUNTIME || c == TS_CAT_DRIVER || c == TS_CAT_KERNEL ||
	       c == TS_CAT_MEMCPY || c == TS_CAT_MEMSET || c == TS_CAT_GPU_USER_ANNOTATION;
}

/* index_build() on the thread that runs it. */
struct index_job {
	struct work *w;
	const struct ts_trace *t;
	int rc;
};

static void *index_main(void *arg)
{
	struct index_job *j = arg;

	j->rc = index_build(j->w, j->t);
	return NULL;
}

/* Steps from CPU-side ProfilerStep#N spans. */
static int find_steps(struct ts_rank_prof *p, const struct ts_trace *t, struct work *w,
		      int64_t *main_pid, int64_t *main_tid)
{
	TS_VEC(struct step_src) src = { 0 };
	int rc = 0;

	*main_pid = *main_tid = TS_NONE;
	for (size_t i = 0; i < t->ev.n; i++) {
		const char *nm;
		char *end;
		long long n;
		/* the name first: it rules out nearly every event */
		if (!(name_flags(w, t, i) & F_STEP) || !w->tm[i] ||
		    t->ev.cat[i] == TS_CAT_GPU_USER_ANNOTATION || is_gpu_cat(t->ev.cat[i]))
			continue;
		nm = ev_name(t, i);
		n = strtoll(nm + 13, &end, 10);
		if (end == nm + 13 || n < 0 || n >= INT64_MAX / 2)
			continue;
		if (*main_pid == TS_NONE) {
			*main_pid = ts_ev_pid(&t->ev, i);
			*main_tid = ts_ev_tid(&t->ev, i);
		}
		if (TS_VEC_PUSH(src, ((struct step_src){ (int64_t)n + (t->meta.legacy ? 1 : 0),
						       ts_ev_ts(&t->ev, i),
						       ts_ev_ts(&t->ev, i) + ts_ev_dur(&t->ev, i) }))) {
			rc = TS_ENOMEM;
			goto out;
		}
	}
	sort_n(src.v, src.n, sizeof(*src.v), cmp_step_src);
	{
		/* a span identical to the one before (a trace written twice):
		 * one step, not a second one of length 0 */
		size_t k = 0;
		for (size_t i = 0; i < src.n; i++) {
			if (k && src.v[i].step == src.v[k - 1].step && src.v[i].s == src.v[k - 1].s &&
			    src.v[i].e == src.v[k - 1].e) {
				p->steps_repeated++;
				continue;
			}
			src.v[k++] = src.v[i];
		}
		src.n = k;
	}
	if (t->meta.truncated && !t->meta.events_whole) {
		/* the file was cut inside its events: a step that ends after the
		 * last event that made it into the file lost its tail, and would
		 * read as a stall. Kineto writes the host's ops, then the
		 * activities (runtime and driver calls with the device work, in
		 * time order); other writers put the calls among the host's ops.
		 * A call before the first device event belongs to the host's
		 * section. Whichever section the cut fell in stops earliest: the
		 * horizon is the earlier of the two sections' latest starts, of
		 * those the trace has (out of time order, the warning says the
		 * device times may be partial: cut_in_device). */
		int64_t last = INT64_MAX, last_host = INT64_MIN, last_act = INT64_MIN;
		size_t first_dev = t->ev.n;
		int any_dev = 0, any_call = 0;
		for (size_t i = 0; i < t->ev.n && first_dev == t->ev.n; i++)
			if (w->tm[i] && is_activity(t, i) && t->ev.cat[i] != TS_CAT_RUNTIME &&
			    t->ev.cat[i] != TS_CAT_DRIVER && !(name_flags(w, t, i) & F_STEP))
				first_dev = i;
		for (size_t i = 0; i < t->ev.n; i++) {
			int call;
			int64_t *l;
			if (!w->tm[i] || (name_flags(w, t, i) & F_STEP))
				continue;
			call = t->ev.cat[i] == TS_CAT_RUNTIME || t->ev.cat[i] == TS_CAT_DRIVER;
			any_call |= call;
			any_dev |= is_activity(t, i) && !call;
			l = !is_activity(t, i) || (call && i < first_dev) ? &last_host : &last_act;
			if (ts_ev_ts(&t->ev, i) > *l)
				*l = ts_ev_ts(&t->ev, i);
		}
		if (last_host != INT64_MIN)
			last = last_host;
		if (last_act != INT64_MIN && last_act < last)
			last = last_act;
		for (size_t i = t->ev.n; i-- > 0;)
			if (w->tm[i]) {
				p->cut_in_device = i >= first_dev && is_activity(t, i);
				break;
			}
		p->device_lost = !any_dev && (t->meta.ndevices > 0 || any_call);
		while (src.n && src.v[src.n - 1].e > last) {
			src.n--;
			p->steps_dropped++;
		}
	}
	for (size_t i = 0; i < src.n; i++) {
		struct ts_step_prof sp;
		int64_t e = src.v[i].e;
		/* keep steps disjoint: a step ends where the next begins */
		if (i + 1 < src.n && e > src.v[i + 1].s)
			e = src.v[i + 1].s;
		if (p->steps.n && src.v[i].s < p->steps.v[p->steps.n - 1].start_ns +
						 p->steps.v[p->steps.n - 1].dur_ns)
			continue;
		memset(&sp, 0, sizeof(sp));
		sp.step = src.v[i].step;
		sp.start_ns = src.v[i].s;
		sp.dur_ns = e - src.v[i].s;
		sp.fwd_ns = sp.bwd_ns = sp.opt_ns = -1;
		sp.gpu_done_ns = sp.dev_step_ns = TS_NONE;
		if (TS_VEC_PUSH(p->steps, sp)) {
			rc = TS_ENOMEM;
			goto out;
		}
	}
out:
	TS_VEC_RELEASE(src);
	return rc;
}

/* Main thread when there are no steps: the (pid, tid) with most cpu_op time. */
static int busiest_thread(const struct ts_trace *t, const uint8_t *tm, int64_t *pid, int64_t *tid)
{
	TS_VEC(struct thread_dur) v = { 0 };
	int64_t best = -1;

	for (size_t i = 0; i < t->ev.n; i++)
		if (tm[i] && t->ev.cat[i] == TS_CAT_CPU_OP &&
		    TS_VEC_PUSH(v, ((struct thread_dur){ ts_ev_pid(&t->ev, i), ts_ev_tid(&t->ev, i),
							 ts_ev_dur(&t->ev, i) }))) {
			TS_VEC_RELEASE(v);
			return TS_ENOMEM;
		}
	sort_n(v.v, v.n, sizeof(*v.v), cmp_thread);
	for (size_t i = 0; i < v.n;) {
		size_t j = i;
		int64_t sum = 0;
		while (j < v.n && v.v[j].pid == v.v[i].pid && v.v[j].tid == v.v[i].tid)
			sum = sat_add(sum, v.v[j++].dur);
		if (sum > best) {
			best = sum;
			*pid = v.v[i].pid;
			*tid = v.v[i].tid;
		}
		i = j;
	}
	TS_VEC_RELEASE(v);
	return 0;
}

static int grow_tmp(struct work *w, size_t n)
{
	int64_t *a, *b;

	if (n <= w->ntmp)
		return 0;
	a = realloc(w->tmp, n * sizeof(*a));
	if (!a)
		return TS_ENOMEM;
	w->tmp = a;
	b = realloc(w->tmp2, n * sizeof(*b));
	if (!b)
		return TS_ENOMEM;
	w->tmp2 = b;
	w->ntmp = n;
	return 0;
}

/* Sort a group of int64 values (small groups without the radix buffer;
 * scratch holds n values). */
static int sort_group(int64_t *v, size_t n, int64_t *scratch)
{
	if (n < 64) {
		sort_n(v, n, sizeof(*v), cmp_i64);
		return 0;
	}
	return ts_radix_sort_i64_in(v, n, scratch);
}

typedef TS_VEC(struct ts_kernel_stat) kstat_vec;

/*
 * Per distinct GPU activity name: its count, total and mean, all of them in
 * *all, sorted by cmp_kstat (the top by total first); the percentiles and
 * maximum of the first top_k only, which are all that is shown: their
 * durations are gathered into dur (room for w->ngpu values) and each
 * group sorted on its own (scratch, as much). A total is a saturating sum
 * of non-negative durations, so the order they are added in does not
 * matter. Reads only the trace and w->gpu; 0 or TS_ENOMEM.
 */
static int kernel_stats(const struct ts_trace *t, const struct work *w, kstat_vec *all, int top_k,
			int64_t *scratch, int64_t *dur)
{
	size_t nid = t->strings.count + 1; /* the last id: names outside the table */
	int64_t *cnt = calloc(nid, sizeof(*cnt)), *tot = calloc(nid, sizeof(*tot));
	size_t ntop, *at = NULL;     /* at[j]: the next free place of top group j */
	uint32_t *slot = NULL;       /* per id: its top group + 1, 0 = not shown */
	int rc = TS_ENOMEM;

	if (!cnt || !tot)
		goto out;
	for (size_t k = 0; k < w->ngpu; k++) {
		uint32_t id = t->ev.name[w->gpu[k]];
		id = id < t->strings.count ? id : (uint32_t)t->strings.count;
		cnt[id]++;
		tot[id] = sat_add(tot[id], ts_ev_dur(&t->ev, w->gpu[k]));
	}
	for (size_t id = 0; id < nid; id++) {
		struct ts_kernel_stat ks;
		if (!cnt[id])
			continue;
		memset(&ks, 0, sizeof(ks));
		ks.name = (uint32_t)id;
		ks.count = cnt[id];
		ks.total_ns = tot[id];
		ks.mean_ns = ks.total_ns / ks.count;
		if (TS_VEC_PUSH(*all, ks))
			goto out;
	}
	sort_n(all->v, all->n, sizeof(*all->v), cmp_kstat);
	ntop = all->n < (size_t)top_k ? all->n : (size_t)top_k;
	slot = calloc(nid, sizeof(*slot));
	at = malloc((ntop ? ntop : 1) * sizeof(*at));
	if (!slot || !at)
		goto out;
	for (size_t j = 0, o = 0; j < ntop; o += (size_t)all->v[j].count, j++) {
		slot[all->v[j].name] = (uint32_t)j + 1;
		at[j] = o;
	}
	for (size_t k = 0; k < w->ngpu && ntop; k++) {
		uint32_t id = t->ev.name[w->gpu[k]];
		uint32_t g = slot[id < t->strings.count ? id : t->strings.count];
		if (g)
			dur[at[g - 1]++] = ts_ev_dur(&t->ev, w->gpu[k]);
	}
	/* at[j] is now the end of group j, the start of group j + 1 */
	for (size_t j = 0, b = 0; j < ntop; b = at[j], j++) {
		struct ts_kernel_stat *ks = &all->v[j];
		size_t n = (size_t)ks->count;
		if (sort_group(dur + b, n, scratch))
			goto out;
		ks->p50_ns = pct_sorted(dur + b, n, 0.5);
		ks->p90_ns = pct_sorted(dur + b, n, 0.9);
		ks->max_ns = dur[b + n - 1];
	}
	rc = 0;
out:
	free(cnt);
	free(tot);
	free(slot);
	free(at);
	return rc;
}

/* The first top_k of the kernel statistics (kernel_stats' order: by total
 * time), names kept in p. */
static int top_kernels(struct ts_rank_prof *p, const struct ts_trace *t, const struct work *w,
		       kstat_vec *all, int top_k, int *failed)
{
	p->kernel_names = (int64_t)all->n;
	for (size_t i = 0; i < all->n && (int)i < top_k; i++) {
		struct ts_kernel_stat ks = all->v[i];
		const char *s = ks.name < t->strings.count ? ts_intern_str(&t->strings, ks.name) : "";
		size_t sn = ks.name < t->strings.count ? ts_intern_len(&t->strings, ks.name) : 0;
		ks.cls = ks.name < t->strings.count && w->name_cls[ks.name] != NOCLS
				 ? (enum ts_kclass)w->name_cls[ks.name] : TS_KC_OTHER;
		ks.name = keep_name(p, s, sn, failed);
		if (TS_VEC_PUSH(p->top, ks))
			return TS_ENOMEM;
	}
	return 0;
}

/* (device, stream) -> track index, open addressing over a growing table. */
struct track_map {
	TS_VEC(struct track) tr;
	uint32_t *slot;         /* track index + 1, 0 = empty */
	size_t mask;
};

static size_t track_hash(int64_t dev, int64_t stream)
{
	uint64_t h = (uint64_t)dev * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)stream;

	h ^= h >> 29;
	h *= UINT64_C(0xBF58476D1CE4E5B9);
	return (size_t)(h ^ (h >> 32));
}

static int track_rehash(struct track_map *m, size_t cap)
{
	uint32_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return TS_ENOMEM;
	free(m->slot);
	m->slot = s;
	m->mask = cap - 1;
	for (size_t i = 0; i < m->tr.n; i++) {
		size_t h = track_hash(m->tr.v[i].dev, m->tr.v[i].stream) & m->mask;
		while (m->slot[h])
			h = (h + 1) & m->mask;
		m->slot[h] = (uint32_t)(i + 1);
	}
	return 0;
}

/* The track of (dev, stream), added when new; -1 on TS_ENOMEM. */
static int64_t track_of(struct track_map *m, int64_t dev, int64_t stream)
{
	size_t h;

	if ((m->tr.n + 1) * 2 > m->mask + 1 && track_rehash(m, m->mask ? (m->mask + 1) * 2 : 64))
		return -1;
	h = track_hash(dev, stream) & m->mask;
	while (m->slot[h]) {
		const struct track *x = &m->tr.v[m->slot[h] - 1];
		if (x->dev == dev && x->stream == stream)
			return m->slot[h] - 1;
		h = (h + 1) & m->mask;
	}
	if (TS_VEC_PUSH(m->tr, ((struct track){ dev, stream, 0, 0 })))
		return -1;
	m->slot[h] = (uint32_t)m->tr.n;
	return (int64_t)m->tr.n - 1;
}

/* HTA's idle per stream over one track's activities, sorted by start. */
static void stream_idle(struct ts_stream_idle *si, const struct stream_ev *v, size_t n)
{
	for (size_t j = 1; j < n; j++) {
		int64_t prev_end = v[j - 1].e;
		int64_t gap = v[j].s - prev_end;
		if (gap <= 0)
			continue;
		si->gaps++;
		if (v[j].launch_ts != TS_NONE && v[j].launch_ts > prev_end)
			si->host_wait_ns += gap;
		else if (gap < TS_KERNEL_WAIT_NS)
			si->kernel_wait_ns += gap;
		else
			si->other_ns += gap;
	}
}

/*
 * Launch statistics, then the idle per stream: the activities are bucketed
 * by (device, stream) in event order (a counting sort over a track id per
 * activity), each bucket sorted by start on its own (stable, so equal
 * starts keep event order), and the tracks reported by (device, stream).
 * The percentiles of the calls' durations and of the launch delays are
 * selected, not sorted for. Every sort and selection uses scratch: room for
 * max(w->ncalls, 3 * w->ngpu) int64 (with several tracks it holds the
 * buckets, and their sorts use the other copy). *list (room for
 * max(w->ncalls, w->ngpu) int64) holds the calls' durations, then the
 * launch delays; it is freed (and *list set to NULL) after them, as
 * w->calls is, which nothing needs after.
 */
static int launch_and_idle(struct ts_rank_prof *p, const struct ts_trace *t, struct work *w,
			   int64_t *scratch, int64_t **list)
{
	/* call durations, then launch delays: at most one per call or activity */
	int64_t *calls = *list, *delays = *list;
	size_t ncalls = 0, ndelays = 0;
	struct track_map tracks = { 0 };
	uint32_t *trk = NULL;
	struct stream_ev *sev = NULL, *bucket;
	void *spare;
	size_t k = 0, off = 0;
	int64_t last = -1;
	int rc = TS_ENOMEM;

	for (size_t j = 0; j < w->ncalls; j++) {
		size_t i = w->calls[j];
		unsigned f = name_flags(w, t, i);
		if (!(f & F_LAUNCH))
			continue;
		calls[ncalls++] = ts_ev_dur(&t->ev, i);
		p->launch.call_total_ns = sat_add(p->launch.call_total_ns, ts_ev_dur(&t->ev, i));
		if (f & F_GRAPH)
			p->launch.graph_launches++;
	}
	/* the last use of the calls' list: its buffer (its pages touched)
	 * takes the activities' track ids */
	trk = realloc(w->calls, (w->ngpu ? w->ngpu : 1) * sizeof(*trk));
	if (!trk)
		goto out;
	w->calls = NULL;
	w->ncalls = 0;
	p->launch.calls = (int64_t)ncalls;
	p->launch.call_p50_ns = pct_select(calls, ncalls, 0.5, scratch);
	p->launch.call_p90_ns = pct_select(calls, ncalls, 0.9, scratch);
	p->launch.call_max_ns = max_of(calls, ncalls);

	sev = malloc((w->ngpu ? w->ngpu : 1) * sizeof(*sev));
	if (!sev)
		goto out;
	for (k = 0; k < w->ngpu; k++) {
		size_t i = w->gpu[k];
		int64_t r = w->gpu_launch[k] != CORR_NONE ? (int64_t)w->gpu_launch[k] : -1;
		int64_t dev, stream, id, s = ts_ev_ts(&t->ev, i), launch_ts = TS_NONE;
		if (r >= 0) {
			int64_t rend, d, lead;
			launch_ts = ts_ev_ts(&t->ev, r);
			rend = launch_ts + ts_ev_dur(&t->ev, r);
			d = s - rend;
			lead = launch_ts - s; /* |ts| <= TIME_LIM */
			if (lead > TS_CLOCK_LEAD_NS) {
				p->launch.before_launch++;
				if (lead > p->launch.before_launch_max_ns)
					p->launch.before_launch_max_ns = lead;
			}
			if (d < 0)
				d = 0;
			delays[ndelays++] = d;
			p->launch.linked++;
			p->launch.delay_total_ns = sat_add(p->launch.delay_total_ns, d);
			if (t->ev.cat[i] == TS_CAT_KERNEL && ts_ev_dur(&t->ev, i) < ts_ev_dur(&t->ev, r))
				p->launch.short_kernels++;
			if (name_flags(w, t, (size_t)r) & F_GRAPH)
				p->launch.graph_activities++;
		}
		sev[k] = (struct stream_ev){ s, s + ts_ev_dur(&t->ev, i), launch_ts };
		dev = ts_ev_pid(&t->ev, i);
		stream = ts_ev_stream(&t->ev, i) != TS_NONE ? ts_ev_stream(&t->ev, i) : ts_ev_tid(&t->ev, i);
		/* activities of one stream come in runs: try the last track first */
		if (last < 0 || tracks.tr.v[last].dev != dev || tracks.tr.v[last].stream != stream)
			last = track_of(&tracks, dev, stream);
		id = last;
		if (id < 0)
			goto out;
		tracks.tr.v[id].n++;
		trk[k] = (uint32_t)id;
	}
	p->launch.delay_p50_ns = pct_select(delays, ndelays, 0.5, scratch);
	p->launch.delay_p90_ns = pct_select(delays, ndelays, 0.9, scratch);
	p->launch.delay_max_ns = max_of(delays, ndelays);
	free(*list);
	*list = NULL;

	/* the activities by track, each track's in activity order: with one
	 * track sev is that already; else they are scattered into scratch
	 * (room for w->ngpu of them) and sev is the sorts' scratch */
	bucket = sev;
	spare = scratch;
	if (tracks.tr.n > 1) {
		bucket = (struct stream_ev *)(void *)scratch;
		spare = sev;
		for (size_t j = 0; j < tracks.tr.n; j++) {
			tracks.tr.v[j].off = off;
			off += tracks.tr.v[j].n;
			tracks.tr.v[j].n = 0;
		}
		for (k = 0; k < w->ngpu; k++) {
			struct track *x = &tracks.tr.v[trk[k]];
			bucket[x->off + x->n++] = sev[k];
		}
	}
	free(trk);
	trk = NULL;
	sort_n(tracks.tr.v, tracks.tr.n, sizeof(*tracks.tr.v), cmp_track);
	for (size_t j = 0; j < tracks.tr.n; j++) {
		const struct track *x = &tracks.tr.v[j];
		struct ts_stream_idle si;
		if (ts_radix_sort_in(bucket + x->off, x->n, sizeof(*bucket), key_sev_s, spare))
			goto out;
		memset(&si, 0, sizeof(si));
		si.device = x->dev;
		si.stream = x->stream;
		stream_idle(&si, bucket + x->off, x->n);
		if (TS_VEC_PUSH(p->idle, si))
			goto out;
	}
	rc = 0;
out:
	TS_VEC_RELEASE(tracks.tr);
	free(tracks.slot);
	free(trk);
	free(sev);
	return rc;
}

static int copy_set(struct ts_ivset *dst, const struct ts_ivset *src)
{
	dst->n = 0;
	for (size_t i = 0; i < src->n; i++)
		if (ts_ivset_add(dst, src->v[i].s, src->v[i].e))
			return TS_ENOMEM;
	return 0;
}

/* Keep only the part of a normalized set inside [lo, hi). */
static void clip_set(struct ts_ivset *a, int64_t lo, int64_t hi)
{
	size_t k = 0;

	for (size_t i = 0; i < a->n; i++) {
		int64_t s = a->v[i].s > lo ? a->v[i].s : lo;
		int64_t e = a->v[i].e < hi ? a->v[i].e : hi;
		if (s < e)
			a->v[k++] = (struct ts_iv){ s, e };
	}
	a->n = k;
}

/* Normalize, clip to [lo, hi) and give back the memory the raw intervals
 * took beyond what is left. */
static void norm_clip(struct ts_ivset *a, int64_t lo, int64_t hi)
{
	ts_ivset_norm(a);
	clip_set(a, lo, hi);
	if (a->cap > a->n + a->n / 8 + 16) {
		struct ts_iv *v = realloc(a->v, (a->n ? a->n : 1) * sizeof(*a->v));
		if (v) {
			a->v = v;
			a->cap = a->n ? a->n : 1;
		}
	}
}

/* norm_clip() on a list of sets, on the thread that runs it. */
struct clip_job {
	struct ts_ivset *v[S_NSETS + TS_KC_COUNT];
	size_t n;
	int64_t lo, hi;
};

static void *clip_main(void *arg)
{
	struct clip_job *j = arg;

	for (size_t i = 0; i < j->n; i++)
		norm_clip(j->v[i], j->lo, j->hi);
	return NULL;
}

/* norm_clip() on every set and class set of w; with two threads the sets
 * are dealt, largest first, to the less loaded of this thread and a helper
 * (each set is normalized alone, so the result is the same). */
static void clip_all(struct work *w, int64_t lo, int64_t hi, int threads)
{
	struct clip_job job[2] = { { .lo = lo, .hi = hi }, { .lo = lo, .hi = hi } };
	struct ts_ivset *all[S_NSETS + TS_KC_COUNT];
	size_t n = 0, load[2] = { 0, 0 };
	pthread_t th;

	for (int i = 0; i < S_NSETS; i++)
		all[n++] = &w->set[i];
	for (int k = 0; k < TS_KC_COUNT; k++)
		all[n++] = &w->cls[k];
	if (threads < 2) {
		job[0].n = n;
		memcpy(job[0].v, all, n * sizeof(*all));
		clip_main(&job[0]);
		return;
	}
	for (size_t taken = 0; taken < n; taken++) {
		size_t big = taken;
		int side;
		for (size_t i = taken + 1; i < n; i++)
			if (all[i]->n > all[big]->n)
				big = i;
		struct ts_ivset *x = all[big];
		all[big] = all[taken];
		all[taken] = x;
		side = load[1] < load[0];
		job[side].v[job[side].n++] = x;
		load[side] += x->n + 1;
	}
	if (pthread_create(&th, NULL, clip_main, &job[1])) {
		clip_main(&job[1]);
		clip_main(&job[0]);
		return;
	}
	clip_main(&job[0]);
	pthread_join(th, NULL);
}

/* dst takes src's intervals; src is left empty. */
static void move_set(struct ts_ivset *dst, struct ts_ivset *src)
{
	ts_ivset_release(dst);
	*dst = *src;
	ts_ivset_init(src);
}

/* out = a \ b \ c; tmp is scratch. */
static int sub2(struct ts_ivset *out, const struct ts_ivset *a, const struct ts_ivset *b,
		const struct ts_ivset *c, struct ts_ivset *tmp)
{
	if (ts_ivset_sub(tmp, a, b))
		return TS_ENOMEM;
	return ts_ivset_sub(out, tmp, c);
}

/* Per-step GPU figures: the GPU activity inside the step's own interval,
 * launched in the trace or not (so the parts of a step sum to its duration
 * and the steps to the window's part in them). */
static int step_gpu(struct ts_rank_prof *p, struct work *w)
{
	struct ts_ivset *x = &w->set[S_T1], *y = &w->set[S_T2];

	if (ts_ivset_sub(&w->set[S_ECOMM], &w->set[S_COMM], &w->set[S_COMPUTE]) ||
	    ts_ivset_sub(x, &w->set[S_MEMCPY], &w->set[S_COMPUTE]) ||
	    ts_ivset_sub(&w->set[S_EMCPY], x, &w->set[S_COMM]) ||
	    sub2(x, &w->set[S_MEMSET], &w->set[S_COMPUTE], &w->set[S_COMM], y) ||
	    ts_ivset_sub(&w->set[S_EMSET], x, &w->set[S_MEMCPY]))
		return TS_ENOMEM;
	for (size_t i = 0; i < p->steps.n; i++) {
		struct ts_step_prof *sp = &p->steps.v[i];
		int64_t lo = sp->start_ns, hi = sp->start_ns + sp->dur_ns;
		sp->busy_ns = ts_ivset_len_in(&w->set[S_BUSY], lo, hi);
		sp->compute_ns = ts_ivset_len_in(&w->set[S_COMPUTE], lo, hi);
		sp->comm_ns = ts_ivset_len_in(&w->set[S_COMM], lo, hi);
		sp->exposed_comm_ns = ts_ivset_len_in(&w->set[S_ECOMM], lo, hi);
		sp->exposed_memcpy_ns = ts_ivset_len_in(&w->set[S_EMCPY], lo, hi);
		sp->exposed_memset_ns = ts_ivset_len_in(&w->set[S_EMSET], lo, hi);
		sp->idle_ns = sp->dur_ns - sp->busy_ns;
	}
	return 0;
}

/* The parts of idle spent in the data loader and in host gaps (gap: the
 * host-gap set), measured over idle's own intervals: GPU traces, window \
 * busy (per step clipped to the step, step_gpu's idle); CPU-only
 * traces, window \ (main-thread ops ∪ collectives). The gap set excludes the
 * data loader, so the two parts are disjoint and never add up to more than
 * idle. The sets must be normalized and clipped to the window. */
static int idle_parts(struct ts_rank_prof *p, struct work *w, const struct ts_ivset *gap)
{
	struct ts_ivset gi, di, *busy = &w->set[S_BUSY];
	int rc = TS_ENOMEM;

	ts_ivset_init(&gi);
	ts_ivset_init(&di);
	if (!p->has_gpu) {
		busy = &w->set[S_T3];
		if (ts_ivset_or(busy, &w->set[S_HOST], &w->set[S_COMM]))
			goto out;
	}
	if (ts_ivset_sub(&gi, gap, busy) || ts_ivset_sub(&di, &w->set[S_DATA], busy))
		goto out;
	p->idle_part_gap_ns = ts_ivset_len(&gi);
	p->idle_part_data_ns = ts_ivset_len(&di);
	for (size_t i = 0; i < p->steps.n; i++) {
		struct ts_step_prof *sp = &p->steps.v[i];
		int64_t lo = sp->start_ns, hi = sp->start_ns + sp->dur_ns;
		sp->idle_part_gap_ns = ts_ivset_len_in(&gi, lo, hi);
		sp->idle_part_data_ns = ts_ivset_len_in(&di, lo, hi);
	}
	rc = 0;
out:
	ts_ivset_release(&gi);
	ts_ivset_release(&di);
	return rc;
}

/* GPU idle by cause (see profile.h): walk the idle gaps of the window and
 * look at the launch calls of the activities that end each gap (the
 * activities' starts and launch times, sorted by start). */
static int idle_causes(struct ts_rank_prof *p, const struct ts_trace *t, struct work *w)
{
	struct ts_ivset sets[3], *idle = &sets[0], *win = &sets[1], *hb = &sets[2];
	struct gpu_ev *gev = malloc((w->ngpu ? w->ngpu : 1) * sizeof(*gev));
	size_t i, j = 0, ngev = w->ngpu;
	int linked, rc = TS_ENOMEM;

	for (i = 0; i < 3; i++)
		ts_ivset_init(&sets[i]);
	if (!gev)
		goto out;
	for (i = 0; i < ngev; i++) {
		uint32_t r = w->gpu_launch[i];
		gev[i] = (struct gpu_ev){ ts_ev_ts(&t->ev, w->gpu[i]),
					  r != CORR_NONE ? ts_ev_ts(&t->ev, r) : TS_NONE };
	}
	if (ts_ivset_add(win, p->t0_ns, p->t0_ns + p->window_ns) ||
	    ts_ivset_sub(idle, win, &w->set[S_BUSY]))
		goto out;
	if (ts_radix_sort(gev, ngev, sizeof(*gev), key_gev_s))
		goto out;
	for (i = 0; i < idle->n; i++) {
		int64_t a = idle->v[i].s, b = idle->v[i].e, first = INT64_MAX;
		int any = 0, host;
		while (j < ngev && gev[j].s < b)
			j++;
		for (size_t k = j; k < ngev && gev[k].s == b; k++) {
			any = 1;
			if (gev[k].launch != TS_NONE && gev[k].launch < first)
				first = gev[k].launch;
		}
		/* the GPU waited for the CPU until the next launch call (or to the
		 * end of the gap when nothing ran after it); from the call on,
		 * the work was queued and the wait is something else */
		host = !any || (first != INT64_MAX && first > a);
		if (host && ts_ivset_add(hb, a, any && first < b ? first : b))
			goto out;
	}
	ts_ivset_norm(hb);
	p->idle_data_ns = ts_ivset_and_len(idle, &w->set[S_DATA]);
	for (i = 0, linked = 0; i < ngev && !linked; i++)
		linked = gev[i].launch != TS_NONE;
	if (!linked) {
		/* no activity linked to a launch call (nsys -t nvtx,osrt, a trace
		 * without runtime events): no gap can be told host-bound, the
		 * trailing one included; what is not data loader is other */
		p->idle_host_ns = -1;
		p->idle_other_ns = p->idle_ns - p->idle_data_ns;
		rc = 0;
		goto out;
	}
	if (ts_ivset_sub(win, hb, &w->set[S_DATA]))
		goto out;
	p->idle_host_ns = ts_ivset_len(win);
	p->idle_other_ns = p->idle_ns - p->idle_data_ns - p->idle_host_ns;
	rc = 0;
out:
	for (i = 0; i < 3; i++)
		ts_ivset_release(&sets[i]);
	free(gev);
	return rc;
}

/* idle_causes() on the thread that runs it: it reads the trace, the
 * activity list, busy, the data loader's set, p's window and idle, and
 * writes only its own buffers and p's idle_data_ns, idle_host_ns and
 * idle_other_ns. */
struct causes_job {
	struct ts_rank_prof *p;
	const struct ts_trace *t;
	struct work *w;
	int rc;
};

static void *causes_main(void *arg)
{
	struct causes_job *j = arg;

	j->rc = idle_causes(j->p, j->t, j->w);
	return NULL;
}



/* Robust step outliers with a reason. */
/* How far the GPU runs behind the host (ts_rank_prof.gpu_behind_frac),
 * and the GPU's own step times. */
static int gpu_behind(struct ts_rank_prof *p, struct work *w)
{
	double launched = 0, in = 0, spans = 0;
	size_t n = 0;

	if (grow_tmp(w, p->steps.n + 1))
		return TS_ENOMEM;
	for (size_t i = 0; i < p->steps.n; i++) {
		struct ts_step_prof *s = &p->steps.v[i];
		const struct ts_step_prof *b = i ? &p->steps.v[i - 1] : NULL;
		launched += (double)s->launched_ns;
		in += (double)s->launched_in_ns;
		spans += (double)s->dur_ns;
		if (b && b->step != TS_NONE && s->step == b->step + 1 && b->gpu_done_ns != TS_NONE &&
		    s->gpu_done_ns != TS_NONE && s->gpu_done_ns > b->gpu_done_ns) {
			s->dev_step_ns = s->gpu_done_ns - b->gpu_done_ns;
			w->tmp[n++] = s->dev_step_ns;
		}
	}
	p->gpu_behind_frac = launched > 0 ? 1.0 - in / launched : NAN;
	p->dev_step_p50_ns = n ? median_of(w->tmp, n) : TS_NONE;
	p->gpu_behind = p->gpu_behind_frac > TS_GPU_BEHIND && launched >= TS_GPU_BEHIND_BUSY * spans &&
			!p->launch.before_launch;
	return 0;
}

static int step_outliers(struct ts_rank_prof *p, struct work *w)
{
	static const char *const comp_names[] = {
		"data loader", "exposed communication", "untraced host time"
	};
	size_t n = p->steps.n;
	int64_t med, mad, cmed[3], cmad[3];
	int64_t *v;

	if (grow_tmp(w, n + 1))
		return TS_ENOMEM;
	v = w->tmp;
	for (size_t i = 0; i < n; i++)
		v[i] = p->steps.v[i].dur_ns;
	med = median_of(v, n);
	p->median_step_ns = med;
	if (n < TS_OUTLIER_MIN_STEPS)
		return 0;
	for (size_t i = 0; i < n; i++)
		v[i] = p->steps.v[i].dur_ns;
	mad = mad_of(v, w->tmp2, n, med);
	for (int c = 0; c < 3; c++) {
		for (size_t i = 0; i < n; i++) {
			const struct ts_step_prof *s = &p->steps.v[i];
			v[i] = c == 0 ? s->data_ns : c == 1 ? s->exposed_comm_ns : s->gap_ns;
		}
		cmed[c] = median_of(v, n);
		for (size_t i = 0; i < n; i++) {
			const struct ts_step_prof *s = &p->steps.v[i];
			v[i] = c == 0 ? s->data_ns : c == 1 ? s->exposed_comm_ns : s->gap_ns;
		}
		cmad[c] = mad_of(v, w->tmp2, n, cmed[c]);
	}
	for (size_t i = 0; i < n; i++) {
		struct ts_step_prof *s = &p->steps.v[i];
		double slow_lim = TS_OUTLIER_SLOW_FRAC * (double)med;
		double mad_lim = TS_OUTLIER_K * 1.4826 * (double)mad;
		int64_t excess = s->dur_ns - med;
		int best = -1;
		double best_x = 0;
		for (int c = 0; c < 3; c++) {
			int64_t val = c == 0 ? s->data_ns : c == 1 ? s->exposed_comm_ns : s->gap_ns;
			double x = (double)(val - cmed[c]);
			double lim = TS_OUTLIER_STALL_FRAC * (double)med;
			double clim = TS_OUTLIER_K * 1.4826 * (double)cmad[c];
			if (x > (lim > clim ? lim : clim) && x > best_x) {
				best = c;
				best_x = x;
			}
		}
		if (best >= 0) {
			int64_t val = best == 0 ? s->data_ns : best == 1 ? s->exposed_comm_ns : s->gap_ns;
			s->outlier = 1;
			snprintf(s->reason, sizeof(s->reason), "%s %.1f ms (median %.1f ms)",
				 comp_names[best], (double)val / 1e6, (double)cmed[best] / 1e6);
		} else if ((double)excess > slow_lim && (double)excess > mad_lim) {
			s->outlier = 1;
			snprintf(s->reason, sizeof(s->reason),
				 "step %.1f ms vs median %.1f ms (+%.1f ms)",
				 (double)s->dur_ns / 1e6, (double)med / 1e6, (double)excess / 1e6);
		}
		p->outliers += s->outlier;
	}
	return 0;
}

static void set_evidence(struct ts_verdict *v, struct ts_sb *sb)
{
	if (!sb->failed) {
		size_t m = sb->len < sizeof(v->evidence) ? sb->len : sizeof(v->evidence) - 1;
		memcpy(v->evidence, sb->buf, m);
		v->evidence[m] = 0;
	}
}

/* Walls that can be named (over the threshold and eligible) first, then
 * by share. */
static int cmp_cand(const void *x, const void *y)
{
	const struct ts_wall_cand *a = x, *b = y;
	int na = a->over && a->eligible && a->wall != TS_WALL_COMPUTE;
	int nb = b->over && b->eligible && b->wall != TS_WALL_COMPUTE;

	if (na != nb)
		return nb - na;
	if (a->share != b->share)
		return a->share > b->share ? -1 : 1;
	return (a->wall > b->wall) - (a->wall < b->wall);
}

static void add_cand(struct ts_rank_prof *p, enum ts_wall wall, int64_t ns, int64_t base,
		     double thr, const char *what)
{
	struct ts_wall_cand *c = &p->walls[p->nwalls++];

	memset(c, 0, sizeof(*c));
	c->wall = wall;
	c->ns = ns < 0 ? -1 : ns;
	c->share = base > 0 && ns > 0 ? (double)ns / (double)base : 0;
	if (c->share > 1)
		c->share = 1;
	c->threshold = thr;
	c->over = ns >= 0 && c->share >= thr;
	c->eligible = ns >= 0;
	snprintf(c->what, sizeof(c->what), "%s", what);
}

/*
 * The rank's wall. Every candidate is measured and ranked (p->walls); the
 * verdict is the largest eligible share over its threshold, else the
 * device memory capacity rule, else compute. Host is eligible only when
 * host-bound idle is the largest cause of GPU idle. Too little timed
 * evidence gives undetermined, and so does a GPU idle more than it
 * computes with its work already queued (nothing in the trace says why). The evidence names the deciding numbers
 * first, then every other candidate and why it lost.
 */
static void rank_verdict(struct ts_rank_prof *p)
{
	struct ts_verdict *v = &p->verdict;
	const struct ts_wall_cand *best = NULL;
	int64_t base = 0;
	const char *basis = p->has_gpu || !p->steps.n ? "window" : "summed step time";
	struct ts_sb sb;

	ts_sb_init(&sb);
	p->nwalls = 0;
	if (p->has_gpu) {
		base = p->window_ns;
		add_cand(p, TS_WALL_MEMORY, p->exposed_memcpy_ns + p->exposed_memset_ns, base,
			 TS_WALL_MEMCPY_FRAC, "exposed memcpy and memset");
		add_cand(p, TS_WALL_COMM, p->exposed_comm_ns, base, TS_WALL_COMM_FRAC,
			 "exposed communication");
		add_cand(p, TS_WALL_HOST, p->idle_host_ns, base, TS_WALL_HOST_FRAC,
			 "host-bound GPU idle");
		add_cand(p, TS_WALL_DATA, p->idle_data_ns, base, TS_WALL_DATA_FRAC,
			 "GPU idle in the data loader");
		add_cand(p, TS_WALL_COMPUTE, p->compute_ns, base, 0, "GPU compute");
		/* a CPU running ahead of the GPU is not host-bound */
		p->walls[2].eligible = p->idle_host_ns >= 0 && p->idle_host_ns >= p->idle_data_ns &&
				       p->idle_host_ns >= p->idle_other_ns;
	} else {
		int64_t comm = 0, host = 0, data = 0;
		for (size_t i = 0; i < p->steps.n; i++) {
			base += p->steps.v[i].dur_ns;
			comm += p->steps.v[i].exposed_comm_ns;
			host += p->steps.v[i].gap_ns;
			data += p->steps.v[i].data_ns;
		}
		if (!p->steps.n) {
			base = p->window_ns;
			comm = p->exposed_comm_ns;
			host = p->host_gap_ns;
			data = p->data_ns;
		}
		add_cand(p, TS_WALL_COMM, comm, base, TS_WALL_COMM_FRAC,
			 "communication wait (main thread idle)");
		add_cand(p, TS_WALL_HOST, host, base, TS_WALL_HOST_FRAC,
			 "untraced host time (main thread outside ops)");
		add_cand(p, TS_WALL_DATA, data, base, TS_WALL_DATA_FRAC, "data loader");
		add_cand(p, TS_WALL_COMPUTE, p->host_busy_ns, base, 0, "CPU ops");
	}
	sort_n(p->walls, p->nwalls, sizeof(*p->walls), cmp_cand);

	if (p->launch.before_launch) {
		/* the window and idle mix two clocks: no share of them means anything */
		v->wall = TS_WALL_UNDETERMINED;
		v->share = 0;
		ts_sb_addf(&sb, "the device and host timestamps are on different clocks: %lld of "
			   "%lld linked GPU activities start before their launch call, by up to "
			   "%.3f ms", (long long)p->launch.before_launch, (long long)p->launch.linked,
			   (double)p->launch.before_launch_max_ns / 1e6);
		set_evidence(v, &sb);
		ts_sb_release(&sb);
		return;
	}
	if (p->window_ns < TS_WALL_MIN_WINDOW_NS || p->window_ns - p->idle_ns + p->data_ns <= 0) {
		v->wall = TS_WALL_UNDETERMINED;
		v->share = 0;
		ts_sb_addf(&sb, "too little timed evidence: %s (a verdict needs a window of at "
			   "least %.1f ms with some timed activity in it)",
			   p->window_ns < TS_WALL_MIN_WINDOW_NS ? "the window is shorter than the minimum"
								: "nothing timed ran in the window",
			   (double)TS_WALL_MIN_WINDOW_NS / 1e6);
		ts_sb_addf(&sb, "; window %.3f ms, busy %.3f ms", (double)p->window_ns / 1e6,
			   (double)p->busy_ns / 1e6);
		set_evidence(v, &sb);
		ts_sb_release(&sb);
		return;
	}
	for (size_t i = 0; i < p->nwalls && !best; i++)
		if (p->walls[i].wall != TS_WALL_COMPUTE && p->walls[i].over && p->walls[i].eligible)
			best = &p->walls[i];
	if (!best && p->has_gpu && p->device_mem_bytes > 0 && p->mem_on_gpu &&
	    (double)p->mem_peak_reserved_bytes >= TS_WALL_MEMCAP_FRAC * (double)p->device_mem_bytes) {
		v->wall = TS_WALL_MEMORY;
		v->share = (double)p->mem_peak_reserved_bytes / (double)p->device_mem_bytes;
		if (v->share > 1)
			v->share = 1;
		ts_sb_addf(&sb, "peak reserved %.2f GiB = %.1f%% of %.2f GiB device memory "
			   "(threshold %.0f%%)", (double)p->mem_peak_reserved_bytes / 1073741824.0,
			   100 * v->share, (double)p->device_mem_bytes / 1073741824.0,
			   100 * TS_WALL_MEMCAP_FRAC);
	} else if (best) {
		v->wall = best->wall;
		v->share = best->share;
		ts_sb_addf(&sb, "%s %.1f ms = %.1f%% of %.1f ms %s (threshold %.0f%%)", best->what,
			   (double)best->ns / 1e6, 100 * best->share, (double)base / 1e6, basis,
			   100 * best->threshold);
	} else if (p->has_gpu && (double)p->idle_other_ns >= TS_WALL_HOST_FRAC * (double)base &&
		   p->idle_other_ns > p->compute_ns) {
		/* the GPU mostly sat idle with its work already queued: the
		 * trace does not say what it waited for, and compute it is not */
		v->wall = TS_WALL_UNDETERMINED;
		v->share = 0;
		ts_sb_addf(&sb, "GPU idle with its work already launched (dependencies, syncs, "
			   "launch latency) or launched outside the trace %.1f ms = %.1f%% of %.1f ms "
			   "window, more than compute: the trace does not show what it waited for",
			   (double)p->idle_other_ns / 1e6, 100.0 * (double)p->idle_other_ns / (double)base,
			   (double)base / 1e6);
	} else {
		for (size_t i = 0; i < p->nwalls; i++)
			if (p->walls[i].wall == TS_WALL_COMPUTE)
				best = &p->walls[i];
		v->wall = TS_WALL_COMPUTE;
		v->share = best->share;
		ts_sb_addf(&sb, "%s %.1f ms = %.1f%% of %.1f ms %s; no other wall over its threshold",
			   best->what, (double)best->ns / 1e6, 100 * best->share, (double)base / 1e6,
			   basis);
	}
	for (size_t i = 0; i < p->nwalls; i++) {
		const struct ts_wall_cand *c = &p->walls[i];
		if (c == best)
			continue;
		if (c->wall == TS_WALL_COMPUTE) {
			ts_sb_addf(&sb, "; %s %.1f%%", c->what, 100 * c->share);
			continue;
		}
		if (c->ns < 0) {
			ts_sb_addf(&sb, "; %s unknown (no GPU activity linked to its launch)", c->what);
			continue;
		}
		ts_sb_addf(&sb, "; %s %.1f%% (threshold %.0f%%%s)", c->what, 100 * c->share,
			   100 * c->threshold,
			   c->over && !c->eligible ? ", over it but not the largest cause of GPU idle" : "");
	}
	if (p->has_gpu && p->idle_host_ns < 0)
		ts_sb_addf(&sb, "; GPU idle %.1f ms: host-bound unknown, data loader %.1f ms, "
			   "work already launched or unlinked %.1f ms",
			   (double)p->idle_ns / 1e6, (double)p->idle_data_ns / 1e6,
			   (double)p->idle_other_ns / 1e6);
	else if (p->has_gpu)
		ts_sb_addf(&sb, "; GPU idle %.1f ms: host-bound %.1f ms, data loader %.1f ms, "
			   "work already launched or unlinked %.1f ms",
			   (double)p->idle_ns / 1e6, (double)p->idle_host_ns / 1e6,
			   (double)p->idle_data_ns / 1e6, (double)p->idle_other_ns / 1e6);
	/* no activity linked to its launch: no delay was measured, not 0 */
	if (p->has_gpu && p->launch.linked)
		ts_sb_addf(&sb, "; launch delay p50 %.2f ms", (double)p->launch.delay_p50_ns / 1e6);
	else if (p->has_gpu)
		ts_sb_adds(&sb, "; launch delay unknown (no GPU activity linked to its launch)");
	set_evidence(v, &sb);
	ts_sb_release(&sb);
}

/* What collect_colls() carries from one event to the next. */
struct coll_walk {
	uint64_t *khash;        /* per name id: its hash, computed once */
	uint32_t *kept;         /* per name id: its id in p->names, UINT32_MAX: not yet */
	size_t ci;              /* first of t->coll not before the event */
	int32_t near;           /* step_at_near()'s hint */
};

/* The collective span of event i, in the step holding `when` (its launch
 * call's start, or its own); events come in order. 0 or TS_ENOMEM. */
static int coll_add(struct ts_rank_prof *p, const struct ts_trace *t, struct coll_walk *cw,
		    size_t i, int64_t when, int *failed)
{
	int64_t base = t->meta.has_base ? t->meta.base_ns : 0;
	uint32_t id = t->ev.name[i] < t->strings.count ? t->ev.name[i] : t->strings.count;
	struct ts_coll_span cs;
	int32_t st;

	if (cw->kept[id] == UINT32_MAX) {
		const char *nm = ev_name(t, i);
		cw->khash[id] = ts_hash(nm, strlen(nm));
		cw->kept[id] = keep_name(p, nm, strlen(nm), failed);
	}
	memset(&cs, 0, sizeof(cs));
	cs.seq = TS_NONE;
	cs.key = cw->khash[id];
	/* collective args (process group, sequence) when the reader has them */
	while (cw->ci < t->coll.n && t->coll.v[cw->ci].ev < i)
		cw->ci++;
	if (cw->ci < t->coll.n && t->coll.v[cw->ci].ev == i) {
		const struct ts_trace_coll *c = &t->coll.v[cw->ci];
		const char *pg = tstr(t, c->pg_name);
		const char *cn = tstr(t, c->coll_name);
		cs.key = ts_hash(pg, strlen(pg)) * 31 + ts_hash(cn, strlen(cn));
		cs.seq = c->seq;
	}
	st = step_at_near(p, when, &cw->near);
	cs.step = st >= 0 ? p->steps.v[st].step : TS_NONE;
	cs.name = cw->kept[id];
	if (__builtin_add_overflow(base, ts_ev_ts(&t->ev, i), &cs.start_ns))
		cs.start_ns = ts_ev_ts(&t->ev, i);
	cs.dur_ns = ts_ev_dur(&t->ev, i);
	return TS_VEC_PUSH(p->colls, cs) ? TS_ENOMEM : 0;
}

/* The rank's collective spans: with GPU activity its communication
 * kernels (walked in w->gpu, each in the step of its launch call), else
 * the CPU-side collective annotations and ops. */
static int collect_colls(struct ts_rank_prof *p, const struct ts_trace *t, struct work *w,
			 int *failed)
{
	size_t nstr = t->strings.count + 1;
	struct coll_walk cw = { .khash = calloc(nstr, sizeof(*cw.khash)),
				.kept = malloc(nstr * sizeof(*cw.kept)), .near = -1 };
	int rc = TS_ENOMEM;

	if (!cw.khash || !cw.kept)
		goto out;
	memset(cw.kept, 0xff, nstr * sizeof(*cw.kept));
	for (size_t k = 0; p->has_gpu && k < w->ngpu; k++) {
		size_t i = w->gpu[k];
		uint32_t r = w->gpu_launch[k];
		if (class_of(w, t, i) == TS_KC_COMM &&
		    coll_add(p, t, &cw, i, ts_ev_ts(&t->ev, r != CORR_NONE ? r : i), failed))
			goto out;
	}
	for (size_t i = 0; !p->has_gpu && i < t->ev.n; i++)
		if (w->tm[i] && t->ev.cat[i] != TS_CAT_GPU_USER_ANNOTATION &&
		    (name_flags(w, t, i) & F_CPUCOMM) &&
		    coll_add(p, t, &cw, i, ts_ev_ts(&t->ev, i), failed))
			goto out;
	sort_n(p->colls.v, p->colls.n, sizeof(*p->colls.v), cmp_coll);
	for (size_t i = 0; i < p->colls.n;) {
		size_t j = i;
		while (j < p->colls.n && p->colls.v[j].key == p->colls.v[i].key &&
		       p->colls.v[j].step == p->colls.v[i].step) {
			p->colls.v[j].idx = (int64_t)(j - i);
			j++;
		}
		i = j;
	}
	rc = 0;
out:
	free(cw.khash);
	free(cw.kept);
	return rc;
}

void ts_prof_tracks_init(struct ts_prof_tracks *k)
{
	ts_ivset_init(&k->idle);
	ts_ivset_init(&k->exposed_comm);
	ts_ivset_init(&k->exposed_memcpy);
	ts_ivset_init(&k->data);
}

void ts_prof_tracks_release(struct ts_prof_tracks *k)
{
	ts_ivset_release(&k->idle);
	ts_ivset_release(&k->exposed_comm);
	ts_ivset_release(&k->exposed_memcpy);
	ts_ivset_release(&k->data);
}

/* The finding tracks, from the sets still held in w. */
static int export_tracks(const struct ts_rank_prof *p, struct work *w, struct ts_prof_tracks *k)
{
	struct ts_ivset *win = &w->set[S_T1], *x = &w->set[S_T2];

	win->n = 0;
	if (ts_ivset_add(win, p->t0_ns, p->t0_ns + p->window_ns))
		return TS_ENOMEM;
	if (p->has_gpu) {
		if (ts_ivset_sub(&k->idle, win, &w->set[S_BUSY]) ||
		    ts_ivset_sub(&k->exposed_comm, &w->set[S_COMM], &w->set[S_COMPUTE]))
			return TS_ENOMEM;
	} else {
		if (ts_ivset_sub(x, win, &w->set[S_HOST]) ||
		    ts_ivset_sub(&w->set[S_T3], x, &w->set[S_DATA]) ||
		    ts_ivset_sub(&k->idle, &w->set[S_T3], &w->set[S_CPUCOMM]) ||
		    ts_ivset_sub(&k->exposed_comm, &w->set[S_COMM], &w->set[S_HOST]))
			return TS_ENOMEM;
	}
	if (ts_ivset_sub(x, &w->set[S_MEMCPY], &w->set[S_COMPUTE]) ||
	    ts_ivset_sub(&k->exposed_memcpy, x, &w->set[S_COMM]))
		return TS_ENOMEM;
	return copy_set(&k->data, &w->set[S_DATA]);
}

/* Every name's flags up front, so that name_flags() only reads (two
 * threads use it). */
static void all_name_flags(struct work *w, const struct ts_trace *t)
{
	for (uint32_t id = 0; id < t->strings.count; id++)
		if (!w->name_flags[id])
			w->name_flags[id] = (uint16_t)flags_of(ts_intern_str(&t->strings, id),
							       ts_intern_len(&t->strings, id));
}

/* The part of the analysis that needs no interval set: launch statistics,
 * idle per stream (p->launch, p->idle) and the kernel statistics. */
struct side {
	struct ts_rank_prof *p;
	const struct ts_trace *t;
	struct work *w;
	int top_k;              /* the kernels whose percentiles are shown */
	kstat_vec all;
	int rc;
};

static void side_run(struct side *s)
{
	/* one radix buffer for all the sorts and selections below, and one
	 * list for the shown kernels' durations, then the calls', then the
	 * launch delays: their pages are touched once */
	size_t n = s->w->ncalls > 3 * s->w->ngpu ? s->w->ncalls : 3 * s->w->ngpu;
	size_t nl = s->w->ncalls > s->w->ngpu ? s->w->ncalls : s->w->ngpu;
	int64_t *scratch = malloc((n ? n : 1) * sizeof(*scratch));
	int64_t *list = malloc((nl ? nl : 1) * sizeof(*list));

	s->rc = scratch && list ? kernel_stats(s->t, s->w, &s->all, s->top_k, scratch, list) : TS_ENOMEM;
	if (!s->rc)
		s->rc = launch_and_idle(s->p, s->t, s->w, scratch, &list);
	free(list);
	free(scratch);
}

static void *side_main(void *arg)
{
	side_run(arg);
	return NULL;
}

/* ts_ivset_add() for the main thread's ops, most of them nested in the
 * one before: an interval the set's last one covers changes nothing (as in
 * ts_ivset_add), and skips the call. */
static inline int add_nested(struct ts_ivset *a, int64_t s, int64_t e)
{
	if (a->n && a->v[a->n - 1].s <= s && e <= a->v[a->n - 1].e)
		return 0;
	return ts_ivset_add(a, s, e);
}

/* Whether an interval of h at or after *j holds [s, e), moving *j past the
 * intervals that end by s: h is the host's ops in the order added and the
 * calls come in time order, so the cursor only moves forward; where the ops
 * are out of order a containing interval can be passed, and the call is
 * then kept (never dropped wrongly). */
static int covered(const struct ts_ivset *h, size_t *j, int64_t s, int64_t e)
{
	while (*j < h->n && h->v[*j].e <= s)
		(*j)++;
	return *j < h->n && h->v[*j].s <= s && e <= h->v[*j].e;
}

/* The sets of the events other than GPU activities (host, data loader,
 * CPU collectives, forward/backward/optimizer), and the window's bounds
 * without steps. Reads only the trace, tm and the name flags (so it runs
 * beside index_build); 0 or TS_ENOMEM. */
static int host_sets(struct ts_rank_prof *p, const struct ts_trace *t, struct work *w,
		     int64_t main_pid, int64_t main_tid, int64_t *t0, int64_t *t1)
{
	size_t hj = 0;          /* covered()'s cursor */

	for (size_t i = 0; i < t->ev.n; i++) {
		int cat = t->ev.cat[i];
		int64_t s, e;
		unsigned nf;
		if (!w->tm[i] || cat == TS_CAT_TRACE_SPAN || cat == TS_CAT_OVERHEAD || is_gpu_cat(cat) ||
		    cat == TS_CAT_GPU_USER_ANNOTATION)
			continue;
		s = ts_ev_ts(&t->ev, i);
		e = s + ts_ev_dur(&t->ev, i);
		if (!p->steps.n) {
			if (s < *t0)
				*t0 = s;
			if (e > *t1)
				*t1 = e;
		}
		nf = name_flags(w, t, i);
		if (cat == TS_CAT_USER_ANNOTATION || cat == TS_CAT_CPU_OP) {
			int ann = cat == TS_CAT_USER_ANNOTATION;
			if ((nf & F_DATA) && ts_ivset_add(&w->set[S_DATA], s, e))
				return TS_ENOMEM;
			if (ann && (nf & F_CPUCOMM) && ts_ivset_add(&w->set[S_CPUCOMM], s, e))
				return TS_ENOMEM;
			if ((nf & F_OPT) && ts_ivset_add(&w->set[S_OPT], s, e))
				return TS_ENOMEM;
			if (ann && (nf & F_FWD) && ts_ivset_add(&w->set[S_FWD], s, e))
				return TS_ENOMEM;
			if (((nf & F_BWD_OP) || (ann && (nf & F_BWD_ANN))) &&
			    ts_ivset_add(&w->set[S_BWD], s, e))
				return TS_ENOMEM;
		}
		/* the calls apart: Kineto writes them after the host's ops, so
		 * in one set they would interleave with the ops and take a sort;
		 * a call inside an op already added changes nothing */
		if ((cat == TS_CAT_CPU_OP || cat == TS_CAT_RUNTIME || cat == TS_CAT_DRIVER) &&
		    ts_ev_pid(&t->ev, i) == main_pid && ts_ev_tid(&t->ev, i) == main_tid && !(nf & F_STEP) &&
		    (cat == TS_CAT_CPU_OP || !covered(&w->set[S_HOST], &hj, s, e)) &&
		    add_nested(&w->set[cat == TS_CAT_CPU_OP ? S_HOST : S_HOST_CALLS], s, e))
			return TS_ENOMEM;
	}
	return 0;
}

/* The GPU activities' sets and counts, each linked one to the step whose
 * span holds its launch call; the window's and
 * the GPU span's bounds. Needs index_build's lists; 0 or TS_ENOMEM. */
static int gpu_sets(struct ts_rank_prof *p, const struct ts_trace *t, struct work *w,
		    int64_t *t0, int64_t *t1, int64_t *g0, int64_t *g1)
{
	int32_t near = -1;

	for (size_t j = 0; j < w->ngpu; j++) {
		size_t i = w->gpu[j];
		int64_t s = ts_ev_ts(&t->ev, i), e = s + ts_ev_dur(&t->ev, i);
		enum ts_kclass k = class_of(w, t, i);
		int64_t launch = TS_NONE, r = w->gpu_launch[j] != CORR_NONE ? (int64_t)w->gpu_launch[j] : -1;
		if (r >= 0) {
			int32_t st;
			launch = ts_ev_ts(&t->ev, r);
			st = step_at_near(p, launch, &near);
			if (st >= 0) {
				struct ts_step_prof *sp = &p->steps.v[st];
				int64_t lo = s > sp->start_ns ? s : sp->start_ns;
				int64_t hi = e < sp->start_ns + sp->dur_ns ? e : sp->start_ns + sp->dur_ns;
				sp->kernels++;
				sp->launched_ns = sat_add(sp->launched_ns, e - s);
				if (hi > lo)
					sp->launched_in_ns = sat_add(sp->launched_in_ns, hi - lo);
				if (e > sp->gpu_done_ns)
					sp->gpu_done_ns = e;
			}
		} else {
			/* launched before the profiler started, or its runtime
			 * events not captured: counted, but no step launched it */
			p->unlinked_events++;
			if (ts_ivset_add(&w->set[S_UNLINKED], s, e))
				return TS_ENOMEM;
		}
		p->class_sum_ns[k] = sat_add(p->class_sum_ns[k], e - s);
		p->class_count[k]++;
		if (ts_ivset_add(&w->cls[k], s, e))
			return TS_ENOMEM;
		if (s < *g0)
			*g0 = s;
		if (e > *g1)
			*g1 = e;
		if (k == TS_KC_MEMCPY) {
			enum ts_mdir d = dir_of(w, t, i);
			p->xfer[d].count++;
			p->xfer[d].ns = sat_add(p->xfer[d].ns, e - s);
		}
		if (s < *t0)
			*t0 = s;
		if (e > *t1)
			*t1 = e;
	}
	return 0;
}

/* The main thread's calls (S_HOST_CALLS, kept apart while the sets are
 * built) merged into its ops' set S_HOST; tmp is scratch, left with the
 * ops' old buffer. 0 or TS_ENOMEM. */
static int host_merge(struct work *w, struct ts_ivset *tmp)
{
	const struct ts_ivset *host[2] = { &w->set[S_HOST], &w->set[S_HOST_CALLS] };
	struct ts_ivset x;

	if (!w->set[S_HOST_CALLS].n)
		return 0;
	if (ts_ivset_or_all(tmp, host, 2))
		return TS_ENOMEM;
	x = w->set[S_HOST];
	w->set[S_HOST] = *tmp;
	*tmp = x;
	ts_ivset_release(&w->set[S_HOST_CALLS]);
	return 0;
}

/* The host gap: the window outside the main thread's ops, the data
 * loader and CPU-side collectives (y), its length, and the steps' CPU
 * figures (data, host, gap, forward, backward, optimizer), after
 * host_merge() when merge is set. Touches only the host's sets of w
 * (normalized and clipped), y, its own scratch sets and those fields of p,
 * so it runs beside the GPU's unions; rc 0 or TS_ENOMEM. */
struct gap_job {
	struct ts_rank_prof *p;
	struct work *w;
	int merge;              /* host_merge() first */
	int64_t t0, t1;
	struct ts_ivset y;
	int rc;
};

static void *gap_main(void *arg)
{
	struct gap_job *j = arg;
	struct ts_rank_prof *p = j->p;
	struct work *w = j->w;
	struct ts_ivset win, idle, x;

	ts_ivset_init(&win);
	ts_ivset_init(&idle);
	ts_ivset_init(&x);
	j->rc = (j->merge && host_merge(w, &x)) || ts_ivset_add(&win, j->t0, j->t1) ||
		ts_ivset_sub(&idle, &win, &w->set[S_HOST]) ||
		ts_ivset_sub(&x, &idle, &w->set[S_DATA]) ||
		ts_ivset_sub(&j->y, &x, &w->set[S_CPUCOMM]) ? TS_ENOMEM : 0;
	ts_ivset_release(&win);
	ts_ivset_release(&idle);
	ts_ivset_release(&x);
	if (j->rc)
		return NULL;
	p->host_gap_ns = ts_ivset_len(&j->y);
	for (size_t i = 0; i < p->steps.n; i++) {
		struct ts_step_prof *sp = &p->steps.v[i];
		int64_t lo = sp->start_ns, hi = sp->start_ns + sp->dur_ns;
		sp->data_ns = ts_ivset_len_in(&w->set[S_DATA], lo, hi);
		sp->host_ns = ts_ivset_len_in(&w->set[S_HOST], lo, hi);
		sp->gap_ns = ts_ivset_len_in(&j->y, lo, hi);
		if (w->set[S_FWD].n)
			sp->fwd_ns = ts_ivset_len_in(&w->set[S_FWD], lo, hi);
		if (w->set[S_BWD].n)
			sp->bwd_ns = ts_ivset_len_in(&w->set[S_BWD], lo, hi);
		if (w->set[S_OPT].n)
			sp->opt_ns = ts_ivset_len_in(&w->set[S_OPT], lo, hi);
	}
	return NULL;
}

int ts_rank_profile(struct ts_rank_prof *p, const struct ts_trace *t,
		    const struct ts_prof_opts *opts, struct ts_err *err)
{
	struct work w;
	int64_t main_pid, main_tid, t0 = INT64_MAX, t1 = INT64_MIN;
	int64_t g0 = INT64_MAX, g1 = INT64_MIN; /* GPU activity span */
	int top_k = opts && opts->top_k > 0 ? opts->top_k : 10;
	int failed = 0, rc = TS_ENOMEM;
	struct side side;
	struct index_job ij;
	struct gap_job gap;
	struct causes_job causes;
	pthread_t side_th, index_th, gap_th, causes_th;
	int side_started = 0, index_started = 0, gap_started = 0, causes_started = 0, nomem;

	memset(&w, 0, sizeof(w));
	memset(&side, 0, sizeof(side));
	memset(&gap, 0, sizeof(gap));
	memset(&causes, 0, sizeof(causes));
	snprintf(p->file, sizeof(p->file), "%s", t->path);
	p->rank = t->meta.rank;
	p->vendor = (int)t->meta.vendor;
	p->legacy = t->meta.legacy;
	if (t->meta.ndevices) {
		/* a node's trace lists all its GPUs: the rank's own, not GPU 0 */
		enum ts_rank_dev_source src;
		const struct ts_trace_device *d = &t->meta.devices[ts_trace_rank_device(t, &src)];
		p->device_assumed = src == TS_RANK_DEV_ASSUMED;
		p->devices_listed = (int)t->meta.ndevices;
		p->device_mem_bytes = d->total_mem_bytes > 0 ? d->total_mem_bytes : -1;
		snprintf(p->device, sizeof(p->device), "%s", tstr(t, d->name));
	}
	w.name_cls = malloc(t->strings.count + 1);
	if (!w.name_cls)
		goto out;
	memset(w.name_cls, NOCLS, t->strings.count + 1);
	w.name_flags = calloc(t->strings.count + 1, sizeof(*w.name_flags));
	if (!w.name_flags)
		goto out;

	w.name_dir = malloc(t->strings.count + 1);
	if (!w.name_dir)
		goto out;
	memset(w.name_dir, NOCLS, t->strings.count + 1);
	w.tm = malloc(t->ev.n + 1);
	if (!w.tm)
		goto out;
	timed_all(t, w.tm, opts ? opts->threads : 1);
	/* the lists and the correlation map need only the trace and tm: with
	 * two threads they are built beside the step search */
	ij = (struct index_job){ .w = &w, .t = t };
	if (opts && opts->threads >= 2)
		index_started = !pthread_create(&index_th, NULL, index_main, &ij);
	if (!index_started)
		index_main(&ij);
	/* the host's sets need only the steps (the main thread), tm and the
	 * name flags: they are built beside the lists too */
	nomem = find_steps(p, t, &w, &main_pid, &main_tid) ||
		(main_pid == TS_NONE && busiest_thread(t, w.tm, &main_pid, &main_tid)) ||
		host_sets(p, t, &w, main_pid, main_tid, &t0, &t1);
	if (index_started)
		pthread_join(index_th, NULL);
	if (nomem || ij.rc)
		goto out;
	/* what follows only reads the trace, tm, the lists, corr and the name
	 * flags: with two threads it runs beside the GPU's interval sets */
	side.p = p;
	side.t = t;
	side.w = &w;
	side.top_k = top_k;
	if (opts && opts->threads >= 2) {
		all_name_flags(&w, t);
		side_started = !pthread_create(&side_th, NULL, side_main, &side);
	}
	if (!side_started)
		side_run(&side);
	if (gpu_sets(p, t, &w, &t0, &t1, &g0, &g1))
		goto out;

	p->has_gpu = w.ngpu > 0;
	if (p->steps.n) {
		const struct ts_step_prof *a = &p->steps.v[0], *b = &p->steps.v[p->steps.n - 1];
		if (a->start_ns < t0)
			t0 = a->start_ns;
		if (b->start_ns + b->dur_ns > t1)
			t1 = b->start_ns + b->dur_ns;
	}
	if (t0 > t1)
		t0 = t1 = 0;
	p->t0_ns = t0;
	p->window_ns = t1 - t0;

	/* nothing is counted outside the window it is a share of */
	clip_all(&w, t0, t1, opts ? opts->threads : 1);
	/* CPU-only, the sets below need the host's whole set at once */
	if (!p->has_gpu && host_merge(&w, &w.set[S_T1]))
		goto out;
	/* the host gap needs only the host's sets: with two threads it runs
	 * beside the GPU's unions below (and with GPU activity, merges the
	 * host's calls first) */
	gap = (struct gap_job){ .p = p, .w = &w, .t0 = t0, .t1 = t1, .merge = p->has_gpu };
	ts_ivset_init(&gap.y);
	if (opts && opts->threads >= 2)
		gap_started = !pthread_create(&gap_th, NULL, gap_main, &gap);
	if (!gap_started)
		gap_main(&gap);
	for (int k = 0; k < TS_KC_COUNT; k++)
		p->class_union_ns[k] = ts_ivset_len(&w.cls[k]);
	/* compute / comm / memcpy sets; compute = the compute classes, busy =
	 * compute and the other classes, each one merge of the normalized parts
	 * (not a second copy of every interval, nor one merge per class) */
	if (p->has_gpu) {
		const struct ts_ivset *part[TS_KC_COUNT + 1];
		size_t np = 0;
		int big = -1;
		for (int k = 0; k < TS_KC_COUNT; k++)
			if (ts_kclass_is_compute((enum ts_kclass)k))
				part[np++] = &w.cls[k];
		/* the timed flags are done with (with GPU activity the lists hold
		 * what is left to walk): their buffer, its pages touched, takes
		 * compute's union (grown by realloc) */
		ts_ivset_release(&w.set[S_COMPUTE]);
		w.set[S_COMPUTE].v = (struct ts_iv *)(void *)w.tm;
		w.set[S_COMPUTE].cap = (t->ev.n + 1) / sizeof(struct ts_iv);
		w.tm = NULL;
		if (ts_ivset_or_all(&w.set[S_COMPUTE], part, np))
			goto out;
		/* busy's output takes the largest compute class's buffer, whose
		 * pages are touched already (it grows by realloc); the rest go */
		for (int k = 0; k < TS_KC_COUNT; k++)
			if (ts_kclass_is_compute((enum ts_kclass)k) &&
			    (big < 0 || w.cls[k].cap > w.cls[big].cap))
				big = k;
		for (int k = 0; k < TS_KC_COUNT; k++)
			if (ts_kclass_is_compute((enum ts_kclass)k) && k != big)
				ts_ivset_release(&w.cls[k]);
		if (big >= 0)
			move_set(&w.set[S_BUSY], &w.cls[big]);
		np = 0;
		part[np++] = &w.set[S_COMPUTE];
		for (int k = 0; k < TS_KC_COUNT; k++)
			if (!ts_kclass_is_compute((enum ts_kclass)k))
				part[np++] = &w.cls[k];
		if (ts_ivset_or_all(&w.set[S_BUSY], part, np))
			goto out;
		/* the class sets end here: comm, memcpy and memset move over */
		move_set(&w.set[S_COMM], &w.cls[TS_KC_COMM]);
		move_set(&w.set[S_MEMCPY], &w.cls[TS_KC_MEMCPY]);
		move_set(&w.set[S_MEMSET], &w.cls[TS_KC_MEMSET]);
		for (int k = 0; k < TS_KC_COUNT; k++)
			ts_ivset_release(&w.cls[k]);
		p->gpu_span_ns = g1 - g0;
		p->gpu_span_idle_ns = p->gpu_span_ns - ts_ivset_len(&w.set[S_BUSY]);
		p->unlinked_ns = ts_ivset_len(&w.set[S_UNLINKED]);
	} else {
		if (ts_ivset_or(&w.set[S_COMM], &w.set[S_CPUCOMM], &w.set[S_T3]))
			goto out;
		/* CPU compute: the main thread running ops */
		if (copy_set(&w.set[S_COMPUTE], &w.set[S_HOST]))
			goto out;
	}
	p->busy_ns = p->has_gpu ? ts_ivset_len(&w.set[S_BUSY]) : ts_ivset_len(&w.set[S_HOST]);
	p->idle_ns = p->window_ns - p->busy_ns;
	/* the idle split by cause needs only busy, the data loader, the window
	 * and the activities' starts: with two threads it runs beside the rest */
	causes = (struct causes_job){ .p = p, .t = t, .w = &w };
	if (p->has_gpu && opts && opts->threads >= 2)
		causes_started = !pthread_create(&causes_th, NULL, causes_main, &causes);
	p->compute_ns = ts_ivset_len(&w.set[S_COMPUTE]);
	p->comm_ns = ts_ivset_len(&w.set[S_COMM]);
	p->data_ns = ts_ivset_len(&w.set[S_DATA]);
	{
		int64_t ov = ts_ivset_and_len(&w.set[S_COMM], &w.set[S_COMPUTE]);
		if (p->has_gpu) {
			p->exposed_comm_ns = p->comm_ns - ov;
		} else {
			/* on CPU the collective runs on a worker thread; it is exposed
			 * when the main thread is not running ops */
			if (ts_ivset_sub(&w.set[S_T1], &w.set[S_COMM], &w.set[S_HOST]))
				goto out;
			p->exposed_comm_ns = ts_ivset_len(&w.set[S_T1]);
			ov = p->comm_ns - p->exposed_comm_ns;
		}
		p->overlap_pct = p->comm_ns > 0 ? 100.0 * (double)ov / (double)p->comm_ns : -1;
	}
	p->memcpy_ns = ts_ivset_len(&w.set[S_MEMCPY]);
	if (ts_ivset_sub(&w.set[S_T1], &w.set[S_MEMCPY], &w.set[S_COMPUTE]) ||
	    ts_ivset_sub(&w.set[S_T2], &w.set[S_T1], &w.set[S_COMM]))
		goto out;
	p->exposed_memcpy_ns = ts_ivset_len(&w.set[S_T2]);
	if (p->has_gpu) {
		if (sub2(&w.set[S_T1], &w.set[S_MEMSET], &w.set[S_COMPUTE], &w.set[S_COMM],
			 &w.set[S_T3]) ||
		    ts_ivset_sub(&w.set[S_T2], &w.set[S_T1], &w.set[S_MEMCPY]))
			goto out;
		p->memset_ns = ts_ivset_len(&w.set[S_MEMSET]);
		p->exposed_memset_ns = ts_ivset_len(&w.set[S_T2]);
	} else {
		/* idle: the main thread neither in ops nor waiting on a collective */
		p->idle_ns = p->window_ns - p->busy_ns - p->exposed_comm_ns;
	}

	/* GPU idle split by what the CPU did meanwhile (the host gap) */
	{
		struct ts_ivset *x = &w.set[S_T3];
		if (gap_started) {
			pthread_join(gap_th, NULL);
			gap_started = 0;
		}
		if (gap.rc)
			goto out;
		p->host_busy_ns = ts_ivset_len(&w.set[S_HOST]);
		for (size_t i = 0; !p->has_gpu && i < p->steps.n; i++) {
			struct ts_step_prof *sp = &p->steps.v[i];
			sp->comm_ns = ts_ivset_len_in(&w.set[S_COMM], sp->start_ns,
						      sp->start_ns + sp->dur_ns);
			sp->busy_ns = sp->host_ns;
			sp->compute_ns = sp->host_ns;
		}
		if (idle_parts(p, &w, &gap.y))
			goto out;
		if (!p->has_gpu) {
			if (ts_ivset_sub(x, &w.set[S_COMM], &w.set[S_HOST]))
				goto out;
			for (size_t i = 0; i < p->steps.n; i++) {
				struct ts_step_prof *sp = &p->steps.v[i];
				sp->exposed_comm_ns = ts_ivset_len_in(x, sp->start_ns,
								      sp->start_ns + sp->dur_ns);
				sp->idle_ns = sp->dur_ns - sp->busy_ns - sp->exposed_comm_ns;
			}
		}
	}
	if (p->has_gpu && step_gpu(p, &w))
		goto out;
	if (causes_started) {
		pthread_join(causes_th, NULL);
		causes_started = 0;
	} else if (p->has_gpu) {
		causes_main(&causes);
	}
	if (causes.rc)
		goto out;
	work_drop(&w);

	/* transfers, memory, FLOPs */
	for (size_t i = 0; i < t->xfer.n; i++) {
		uint32_t e = t->xfer.v[i].ev;
		enum ts_mdir d;
		if (e >= t->ev.n || t->ev.cat[e] != TS_CAT_MEMCPY || t->xfer.v[i].bytes < 0)
			continue;
		d = dir_of(&w, t, e);
		p->xfer[d].bytes = sat_add(p->xfer[d].bytes > 0 ? p->xfer[d].bytes : 0, t->xfer.v[i].bytes);
	}
	for (int d = 0; d < TS_MDIR_COUNT; d++)
		if (p->xfer[d].count && !p->xfer[d].bytes)
			p->xfer[d].bytes = -1;
	for (size_t i = 0; i < t->mem.n; i++) {
		const struct ts_trace_mem *m = &t->mem.v[i];
		int gpu = m->device_type != 0;
		if (gpu && !p->mem_on_gpu) {
			p->mem_on_gpu = 1;
			p->mem_peak_alloc_bytes = p->mem_peak_reserved_bytes = -1;
		}
		if (gpu != p->mem_on_gpu)
			continue;
		if (m->total_allocated > p->mem_peak_alloc_bytes)
			p->mem_peak_alloc_bytes = m->total_allocated;
		if (m->total_reserved > p->mem_peak_reserved_bytes)
			p->mem_peak_reserved_bytes = m->total_reserved;
	}
	for (size_t i = 0; i < t->flops.n; i++) {
		p->flops += t->flops.v[i].flops;
		p->flops_events++;
	}

	if (side_started) {
		pthread_join(side_th, NULL);
		side_started = 0;
	}
	if (side.rc || top_kernels(p, t, &w, &side.all, top_k, &failed) ||
	    step_outliers(p, &w) || gpu_behind(p, &w) || collect_colls(p, t, &w, &failed) || failed)
		goto out;
	rank_verdict(p);
	if (opts && opts->tracks && export_tracks(p, &w, opts->tracks))
		goto out;
	rc = 0;
out:
	if (side_started)
		pthread_join(side_th, NULL);
	if (gap_started)
		pthread_join(gap_th, NULL);
	if (causes_started)
		pthread_join(causes_th, NULL);
	ts_ivset_release(&gap.y);
	TS_VEC_RELEASE(side.all);
	work_release(&w);
	if (rc)
		ts_err_set(err, rc, "%s: out of memory while analysing the trace", t->path);
	return rc;
}

int ts_rank_prof_warnings(const struct ts_rank_prof *p, int whole_window, const char *path,
			  struct ts_warnings *w)
{
	if (p->legacy &&
	    ts_warnings_add(w, "legacy-trace", path, -1, TS_NO_INT,
			    "%s: a legacy (pre-Kineto) trace: ProfilerStep#N is iteration N+1, and it "
			    "carries no device events", path))
		return TS_ENOMEM;
	if (p->steps_repeated &&
	    ts_warnings_add(w, "repeated-steps", path, -1, TS_NO_INT,
			    "%s: %lld ProfilerStep span%s repeated exactly (same step, start and "
			    "end; a trace written twice or concatenated?): each step is counted once, "
			    "but events repeated with it may be counted twice", path,
			    (long long)p->steps_repeated, p->steps_repeated == 1 ? " is" : "s are"))
		return TS_ENOMEM;
	if (p->launch.before_launch &&
	    ts_warnings_add(w, "clock-mismatch", path, -1, TS_NO_INT,
			    "%s: %lld of %lld GPU activities linked to a launch call start before "
			    "that call does, by up to %.3f ms: the device and host timestamps are not "
			    "on one clock (a device-relative GPU clock?), so the window, idle, launch "
			    "delay and the wall built on them are not to be trusted", path,
			    (long long)p->launch.before_launch, (long long)p->launch.linked,
			    (double)p->launch.before_launch_max_ns / 1e6))
		return TS_ENOMEM;
	if (p->gpu_behind) {
		char own[128] = "too few consecutive steps to time the GPU's own step";
		if (p->dev_step_p50_ns != TS_NONE)
			snprintf(own, sizeof(own), "the GPU's own step time (between the ends of consecutive "
				 "steps' device work) is a median %.3f ms", (double)p->dev_step_p50_ns / 1e6);
		if (ts_warnings_add(w, "gpu-behind-host", path, -1, TS_NO_INT,
				    "%s: the GPU runs behind the host: %.0f %% of the device time the steps "
				    "launched ran after the span of the step that launched it, so the step "
				    "spans (median %.3f ms) measure the host's pace and each step's device "
				    "walls are of other steps' work; %s", path, p->gpu_behind_frac * 100.0,
				    (double)p->median_step_ns / 1e6, own))
			return TS_ENOMEM;
	}
	if (p->device_assumed && ts_rank_device_assumed_warning(w, path, p->device, p->devices_listed))
		return TS_ENOMEM;
	if (whole_window &&
	    ts_warnings_add(w, "whole-window", path, -1, TS_NO_INT,
			    "%s: no steps (no ProfilerStep spans, no step range): its whole window is "
			    "analysed as one step, without step statistics", path))
		return TS_ENOMEM;
	return 0;
}

int ts_rank_device_assumed_warning(struct ts_warnings *w, const char *path, const char *device,
				   int listed)
{
	return ts_warnings_add(w, "rank-device-assumed", path, -1, TS_NO_INT,
			       "%s: lists %d GPUs that differ (name, SM count or memory) and no GPU "
			       "activity or distributedInfo.local_rank says which one ran the rank: its "
			       "device%s%s%s, its SM count and memory are GPU 0's, assumed", path, listed,
			       *device ? " (" : "", device, *device ? ")" : "")
		       ? TS_ENOMEM : 0;
}

int ts_trace_ignored_warning(struct ts_warnings *w, const char *path,
			     const struct ts_trace_meta *m)
{
	if (!m->bad_ts && !m->bad_dur && !m->negative_dur && !m->missing_dur)
		return 0;
	return ts_warnings_add(w, "ignored-values", path, -1, TS_NO_INT,
			       "%s: ignored-values: %llu event(s) with an unusable ts, %llu with an "
			       "unusable dur (NaN, Infinity, beyond 2^63 ns), %llu with a negative "
			       "dur, %llu complete (X) event(s) without a dur; none of them counts in "
			       "any time%s", path, (unsigned long long)m->bad_ts,
			       (unsigned long long)m->bad_dur, (unsigned long long)m->negative_dur,
			       (unsigned long long)m->missing_dur,
			       m->bad_ts || m->bad_dur || m->negative_dur ? "; --strict rejects the "
			       "unusable and negative ones" : "")
		       ? TS_ENOMEM
		       : 0;
}

int ts_trace_truncated_warning(struct ts_warnings *w, const char *path, uint64_t at, int gzip,
			       const struct ts_rank_prof *p)
{
	return ts_warnings_add(w, "truncated-trace", path, (int64_t)at, TS_NO_INT,
			       "%s: truncated at byte %llu%s; analysed every complete event before "
			       "it (%lld step%s cut by the end dropped)%s", path, (unsigned long long)at,
			       gzip ? " of the inflated JSON" : "", (long long)p->steps_dropped,
			       p->steps_dropped == 1 ? "" : "s",
			       p->cut_in_device ? "; the cut fell among its device-side events, "
			       "which the profiler writes after the host's and not always in time "
			       "order, so the device times of the steps kept may be partial" :
			       p->device_lost ? "; the cut fell before any device-side event (the "
			       "profiler writes them after the host's), so this GPU trace's device "
			       "activity is lost and its steps carry host time only" : "")
		       ? TS_ENOMEM
		       : 0;
}

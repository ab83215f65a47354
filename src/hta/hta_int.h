/*
 * hta_int.h - internals shared by the HTA-compatibility files (not public).
 */
#ifndef TRAINSCOPE_HTA_INT_H
#define TRAINSCOPE_HTA_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "trainscope/hta.h"

/*
 * Freed temporaries of one part's analysis, kept to be handed out again
 * (hta_pool.c says why). Safe to share between the part's threads.
 * hta_pool_get: a buffer of at least size bytes, not zeroed, or NULL (out
 * of memory); with pool NULL it is malloc. hta_pool_put: gives buf (from
 * hta_pool_get of the same pool, or NULL) back, to be kept while the kept
 * buffers' capacity stays within budget bytes (else freed); with pool NULL
 * it is free.
 * hta_pool_release frees what is kept; the buffers handed out must have
 * been given back.
 */
#define HTA_POOL_KEEP 24
struct hta_pool {
	pthread_mutex_t mu;
	void *kept[HTA_POOL_KEEP];
	size_t n;
	size_t bytes;       /* kept's capacity */
	size_t budget;      /* the most kept; a buffer past it is freed */
};
void hta_pool_init(struct hta_pool *p, size_t budget);
void hta_pool_release(struct hta_pool *p);
void *hta_pool_get(struct hta_pool *p, size_t size);
void hta_pool_put(struct hta_pool *p, void *buf);

/* One row of HTA's per-rank DataFrame after preprocessing. */
struct hta_row {
	uint32_t ev;        /* event index in the trace (HTA's "index") */
	uint32_t name;      /* interned name in the rank's trace */
	int64_t ts;         /* ns after rounding, relative to the frame's t0 */
	int64_t dur;        /* ns */
	int64_t stream;     /* args.stream, -1 when absent */
	int64_t corr;       /* args.correlation, -1 when absent */
	uint32_t icorr;     /* index_correlation: the linked event's index, 0,
			     * or HTA_ICORR_NEG for HTA's negative values (only
			     * the sign of those is ever looked at): hta_icorr() */
	uint8_t ktype;      /* enum ts_hta_ktype */
	uint8_t flags;      /* HTA_ROW_* */
};

/* index_correlation stored as a negative value (the correlation itself when
 * it is negative, as HTA writes it); event indices stay below it (trace.h:
 * at most 2^32 - 2 events) */
#define HTA_ICORR_NEG UINT32_MAX

/* A row's index_correlation as HTA has it, up to the value of a negative
 * one (-1 for all of them: every use looks at its sign only). */
static inline int64_t hta_icorr(const struct hta_row *r)
{
	return r->icorr == HTA_ICORR_NEG ? -1 : (int64_t)r->icorr;
}

/* Rows keep |ts| and |dur| within this (ns): an end or a gap of a row stays
 * in int64; sums over rows use hta_sat_add(). */
#define HTA_TIME_LIM (INT64_C(1) << 61)

/* a + b saturated at the int64 range. */
static inline int64_t hta_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* a - b saturated at the int64 range. */
static inline int64_t hta_sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

#define HTA_ROW_GPU 1   /* GPU side of HTA's correlation filter */
#define HTA_ROW_KCAT 2  /* cat is a kernel/memcpy/memset/mtia_ccp category */
#define HTA_ROW_STEP 4  /* name matches ^ProfilerStep#\d */

/* A rank's frame: rows in HTA's row order. */
struct hta_frame {
	const struct ts_trace *t;
	struct hta_pool *pool; /* the temporaries of its analysis (NULL: malloc) */
	struct hta_row *rows;
	size_t n;
	int64_t t0;         /* rows' ts are relative to this (rounded file time) */
	uint64_t corr_span; /* max - min + 1 of the rows' correlations other than
			     * -1 (0: none), for hta_map_init() */
	int64_t corr_lo;    /* their min (0: none) */
	int direct;         /* correlation lookups may use a table indexed by
			     * hta_corr_slot() where it is smaller than a map */
	/* the distinct correlations of the base frame's rows (the filter's
	 * rows have no others): bit corr - corr_lo of cbits set for each,
	 * crank[w] of them in the words before word w; NULL when the frame is
	 * not direct or its ids are too sparse (hta_frame_base) */
	uint64_t *cbits;
	uint32_t *crank;
	size_t ncid;        /* how many: tables by slot have ncid entries */
	/* the base frame's CPU rows (not HTA_ROW_GPU), for the filter: how
	 * many, how many have a correlation, the earliest ts and the latest
	 * ts of a ProfilerStep (INT64_MIN: none); stale once it filtered */
	size_t ncpu, ncpu_corr;
	int64_t cpu_min_ts, step_max_ts;
	int rounded;
	int filtered;
};

/*
 * A set of the integers 0..nbits-1 as a bit per integer, with each 64-bit
 * word's rank (the set bits in the words before it), so that a member's
 * place among the members is a lookup and a popcount: what the frame's
 * correlation slots and the idle breakdown's named events both use.
 * hta_rankbits_get: the two arrays from pool, the bits zeroed; 0 or
 * TS_ENOMEM. hta_rankbits_rank: fill the ranks once the bits are set;
 * returns the number of members. hta_rankbits_slot: the place of i, a
 * member, among the members.
 */
static inline int hta_rankbits_get(struct hta_pool *pool, uint64_t nbits, uint64_t **bits,
				   uint32_t **rank)
{
	size_t nw = (size_t)(nbits / 64) + 1;

	*bits = hta_pool_get(pool, nw * sizeof(**bits));
	*rank = hta_pool_get(pool, nw * sizeof(**rank));
	if (!*bits || !*rank)
		return TS_ENOMEM;
	memset(*bits, 0, nw * sizeof(**bits));
	return 0;
}

static inline void hta_rankbits_set(uint64_t *bits, uint64_t i)
{
	bits[i >> 6] |= UINT64_C(1) << (i & 63);
}

static inline size_t hta_rankbits_rank(const uint64_t *bits, uint32_t *rank, uint64_t nbits)
{
	size_t nw = (size_t)(nbits / 64) + 1, n = 0;

	for (size_t w = 0; w < nw; w++) {
		rank[w] = (uint32_t)n;
		n += (size_t)ts_popcount64(bits[w]);
	}
	return n;
}

static inline size_t hta_rankbits_slot(const uint64_t *bits, const uint32_t *rank, uint64_t i)
{
	return rank[i >> 6] + (size_t)ts_popcount64(bits[i >> 6] & ((UINT64_C(1) << (i & 63)) - 1));
}

/* The slot in 0..f->ncid of corr, one of the frame's correlations (any
 * row's but -1), for a table by id; f->cbits must be set. */
static inline size_t hta_corr_slot(const struct hta_frame *f, int64_t corr)
{
	return hta_rankbits_slot(f->cbits, f->crank, (uint64_t)corr - (uint64_t)f->corr_lo);
}

/*
 * numpy 1.24 np.argsort(kind="quicksort") on int64 keys: idx[0..n) gets
 * the permutation numpy returns, tie order included (introsort, not
 * stable). v is the sort's scratch: on return it holds the same keys in an
 * unspecified order (a caller that needs them keeps a copy). The shortcut's
 * scratch comes from pool (NULL: malloc).
 */
void hta_argsort(int64_t *v, size_t n, uint32_t *idx, struct hta_pool *pool);
/* The same, always by numpy's own steps (hta_argsort skips them when no two
 * keys tie, where every sort gives the one answer); v is left sorted
 * ascending (v[k] is the old v[idx[k]]). */
void hta_argsort_np(int64_t *v, size_t n, uint32_t *idx);

/* pandas sort_values(ascending=False) on the same keys (nargsort); 0 or TS_ENOMEM. */
int hta_argsort_desc(const int64_t *v, size_t n, uint32_t *idx);

/* numpy linear quantile of n values sorted ascending (n > 0). */
double hta_quantile_sorted(const double *sorted, size_t n, double q);

/* numpy round(x, decimals). */
double hta_round(double x, int decimals);

/* Open-addressing map int64 -> two int64 payloads, fixed capacity. Key -1
 * (a row without a correlation, the most common key of the frame) has its
 * own slot, mask + 1, outside the hashed ones: slots run 0..mask + 1. */
struct hta_map {
	struct hta_pool *pool;
	int64_t *key;
	int64_t *a, *b;
	uint8_t *used;
	size_t mask;
	int block_bits;     /* keys k and k + 1 share a block of 2^block_bits slots */
};
/* Room for `expect` distinct keys; span: hi - lo + 1 of the keys other than
 * -1 (how densely they sit, which sets the block size), 0 when unknown; the
 * arrays from pool (NULL: malloc). 0 or TS_ENOMEM. */
int hta_map_init(struct hta_map *m, struct hta_pool *pool, size_t expect, uint64_t span);
/* Bytes hta_map_init() allocates for `expect` keys. */
size_t hta_map_bytes(size_t expect);
void hta_map_release(struct hta_map *m);
/* Slot of key or -1. */
int64_t hta_map_find(const struct hta_map *m, int64_t key);
/* Slot of key, created with a = b = init when new. */
size_t hta_map_put(struct hta_map *m, int64_t key, int64_t init);

/* 1 when lookups of the frame's correlations may use a table indexed by
 * hta_corr_slot(), of `entry` bytes for each of the f->ncid correlations,
 * in place of a hash map for `expect` keys: the frame has the slots and
 * the table is no larger. Kineto's ids are one counter over the trace, so
 * their span is a few times the ids a frame holds (6.4x on
 * df_index_resolver: a bit per id of it is a fraction of the map); ids
 * far apart get the map. */
int hta_direct_fits(const struct hta_frame *f, size_t expect, size_t entry);

/* Kernel class of a name by HTA's regexes. */
enum ts_hta_ktype hta_classify(const char *name);

/* Rows of one trace in file order: dropped, rounded, index_correlation set,
 * ts relative to the first row; the frame's temporaries (and those of its
 * analysis) come from pool, which must outlive it (NULL: malloc). direct:
 * 1 lets the correlation lookups of the frame and its filter use a table
 * indexed by id where that is smaller than a hash map (the same rows
 * either way); 0 always hashes (for tests). 0 or TS_ENOMEM. */
int hta_frame_base(const struct ts_trace *t, struct hta_pool *pool, int direct,
		   struct hta_frame *f);
/* HTA's last-step / correlation filter, in place, of a frame from
 * hta_frame_base() (its ncpu .. step_max_ts). 0, TS_ENOMEM, TS_ELIMIT. */
int hta_frame_filter(struct hta_frame *f, struct ts_err *err);
void hta_frame_release(struct hta_frame *f);

/* |COMP ∩ COMM| in ns (*ov) of two merged interval lists (merge_kernel_
 * intervals: sorted by start, each group after the last one's end), by
 * HTA's sweep over their sorted start and end points. When no interval
 * ends before it starts that is their intersection, walked in one pass;
 * sweep = 1 sorts the points anyway (for tests). 0 or TS_ENOMEM. */
int hta_overlap_ns(const int64_t *comp_ts, const int64_t *comp_end, size_t ncomp,
		   const int64_t *comm_ts, const int64_t *comm_end, size_t ncomm, int sweep,
		   int64_t *ov);

/* Kernel-type label sums (ns) indexed by the running bit value & 7
 * (COMP 1, COMM 2, MEM 4; 0 is HTA's "" label). */
struct hta_labels {
	int present[8];
	int64_t sum_ns[8];
};
/* Fill one rank's results from its frame (strings go to a); lab receives
 * the rank's kernel-type label sums for the job total. threads >= 2: the
 * queue length on a second thread (same results). */
int hta_rank_analyze(const struct hta_frame *f, struct ts_arena *a,
		     struct ts_hta_rank *r, struct hta_labels *lab, int threads);

/* A launch-stats row: CPU side a = end, b = dur; GPU side a = ts, b = dur. */
struct hta_lrow {
	int64_t corr, a, b;
};
/* Stable sort of v[0..n) by (corr, a), ascending; scratch: n rows. Rows
 * equal on both keep their order (no launch-stats sum depends on it).
 * Nearly sorted input (at most 16 ascending runs) is merged run by run;
 * other input takes radix sorts. */
void hta_lrows_sort(struct hta_lrow *v, size_t n, struct hta_lrow *scratch);

/* Labels as HTA's DF1 rows: sorted by sum descending, pct of the total. */
int hta_labels_emit(const struct hta_labels *l, struct ts_arena *a,
		    struct ts_hta_klabel **out, size_t *nout);

#endif

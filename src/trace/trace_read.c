/*
 * trace_read.c - the Kineto / Chrome-trace JSON reader.
 *
 * Why not the generic tokenizer for events: an event is ~30 tokens and a
 * 1 GB trace has millions of them, so the reader parses each event object
 * directly, dispatching on the keys it needs and skipping the rest with a
 * validating scanner, straight from the input window into the columns.
 * Each event is parsed from its '{' again when the window ends inside it
 * (events are small, so this costs nothing measurable), which also makes
 * recovery simple: a bad event is dropped by resynchronising on the next
 * "}, {" boundary. Top-level metadata (small) is delimited by the same
 * scanner and then read with the generic tokenizer.
 *
 * The scanner functions return one of the P_* codes below; the driver
 * refills the window on P_NEED, keeps what was complete on P_TRUNC, and
 * decides between recovery and an error on P_BAD.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "trainscope/json.h"
#include "trainscope/trace.h"
#include "trainscope/paths.h"
#include "trace_src.h"
#include "trace_int.h"
#include "trainscope/limits.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { P_OK = 0, P_NEED = 1, P_TRUNC = 2, P_BAD = 3 };

#define MAX_DEPTH 1024
#define HOT __attribute__((always_inline))  /* per-token helpers GCC -O2 would call */
#define EST_EVENT_BYTES 128         /* smallest typical event, for reserving */
#define EST_RESERVE_FROM (256 << 10)

/* string scan flags */
#define S_ESC 1      /* a backslash occurs: unescape before use */
#define S_BADESC 2   /* an escape that JSON does not allow (writer bug) */
#define S_CTRL 4     /* a raw control character (writer bug) */

struct strv {
	const char *s;
	size_t n;
	int flags;
};

/* args of one event that the model keeps (side tables, columns) */
struct evargs {
	int has_coll, has_bytes, has_mem, has_flops;
	int rare_init;            /* the fields below are set (evargs_rare_init) */
	uint32_t coll_name, pg_name, pg_desc, dtype;
	int64_t seq, in_nelems, out_nelems, group_size;
	uint64_t comms_id;
	int64_t bytes;
	int64_t mem_bytes, total_alloc, total_resv, dev_type, dev_id;
	double flops;
	int bad_ts, bad_dur;      /* "ts" / "dur" given but unusable */
};

/*
 * Column pages are faulted in a little ahead of the parser with
 * MADV_POPULATE_WRITE: on the target VMs zeroing fresh pages costs a
 * third of parsing, and one batched call is cheaper than a fault per page.
 * For plain files and ISA-L's gzip a helper thread does it on the other
 * core; for zlib's gzip (the other core inflates) and for a split parse
 * (both cores parse) the parser does it in batches. At most
 * PF_LEAD events ahead, so resident memory follows the events read, not
 * the reservation.
 */
#define NCOLS TS_TRACE_NCOLS
#define PF_LEAD ((size_t)64 << 10)
#define PF_PUBLISH_MASK ((size_t)(8 << 10) - 1)

struct prefault {
	pthread_t th;
	int started;
	atomic_size_t parsed;
	atomic_int stop;
	void *col[NCOLS];
	size_t elem[NCOLS];
	size_t cap;
	int sync;                 /* no thread: the parser populates in batches */
	size_t done;              /* sync: events populated so far */
};

struct split;

/* One slot of the reader's string cache (intern_text): the interned
 * string, its length and id side by side, so a hit reads one cache line
 * and the string, not the interner's length and pointer arrays. */
struct icache_ent {
	const char *s;            /* NULL: empty */
	uint32_t n;
	uint32_t id;
};

/* One slot of the short-string cache (short_strid): a plain string of at
 * most 31 bytes kept as its bytes, zero-padded, so that a hit is two
 * vector compares of the input, with no pointer to follow. */
struct scache_ent {
	unsigned char b[32];
	uint32_t n1;              /* length + 1; 0: empty */
	uint32_t id;
	unsigned char pad_[24];   /* 64 bytes a slot */
};

#define ICACHE_N 4096
#define SCACHE_N 1024

/* The reader's string caches; a helper empties its own per chunk (its
 * batch's string ids restart). */
struct strcache {
	struct icache_ent ent[ICACHE_N];
	struct scache_ent sh[SCACHE_N];
};

struct rd {
	struct trace_src src;
	struct prefault pf;
	const unsigned char *d;   /* window (mirrors src) */
	size_t len;
	int eof;
	struct ts_trace *t;
	const struct ts_trace_opts *o;
	struct ts_err *err;
	struct ts_sb sb;          /* unescape scratch */
	TS_VEC(uint8_t) catmap;   /* string id -> enum ts_cat + 1 (0 = not looked up) */
	struct strcache *sc;      /* recent strings by cheap keys */
	int strict;
	int repaired;             /* the current event needed a lenient repair */
	int raw_strid;            /* the current event's pid or tid is a number in
				   * the TS_STRID range (trace.h): only the serial
				   * parse stores it (a batch could not tell it from
				   * a string id when remapping) */

	/* P_BAD details */
	size_t bad_at;            /* window index */
	const char *bad_what;
	int bad_recoverable;

	/* vendor hints */
	int hint_vendor;          /* from metadata keys */
	uint64_t ncat[TS_CAT_COUNT];

	/* split parse (reader only; NULL / 0 in the helper) */
	struct split *sp;
	size_t split_chunk;       /* 0: one thread */
	int split_patient;        /* chunk size forced (tests): no chunk skipped */
	struct trace_split_stats *split_stats;
};

/* ------------------------------------------------------------ window */

static void win_sync(struct rd *r)
{
	r->d = r->src.data;
	r->len = r->src.len;
	r->eof = r->src.eof;
}

/* Drop bytes before keep and read more. Returns 0, or a negative code with
 * r->err filled; a gzip stream that ends early becomes eof (truncated). */
static int refill(struct rd *r, size_t keep)
{
	int rc = trace_src_more(&r->src, keep, r->err);

	win_sync(r);
	return rc;
}

static inline uint64_t abs_off(const struct rd *r, size_t i)
{
	return r->src.base + i;
}

/* ------------------------------------------------------ prefault */

/* Fault in the column pages of events [*done, want). */
static void pf_populate(struct prefault *p, size_t *done, size_t want)
{
	const uintptr_t page = 4096;

	if (want > p->cap)
		want = p->cap;
	if (want <= *done)
		return;
	for (int k = 0; k < NCOLS; k++) {
		uintptr_t a = (uintptr_t)((unsigned char *)p->col[k] + *done * p->elem[k]) & ~(page - 1);
		uintptr_t e = (uintptr_t)((unsigned char *)p->col[k] + want * p->elem[k]);
#ifdef MADV_POPULATE_WRITE
		madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
		(void)a;
		(void)e;
#endif
	}
	*done = want;
}

static void *pf_main(void *arg)
{
	struct prefault *p = arg;
	size_t done = 0;

	while (!atomic_load_explicit(&p->stop, memory_order_relaxed) && done < p->cap) {
		size_t want = atomic_load_explicit(&p->parsed, memory_order_relaxed) + PF_LEAD;
		if (want <= done) {
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
			continue;
		}
		pf_populate(p, &done, want);
	}
	return NULL;
}

/* Start faulting column pages ahead: in a thread (threaded 1) or in
 * batches from the parser itself (when the other core is inflating). */
static void pf_start(struct rd *r, int threaded)
{
	struct prefault *p = &r->pf;
	struct ts_trace_events *e = &r->t->ev;

#ifndef MADV_POPULATE_WRITE
	return;
#endif
	/* the model's own list: the columns' real widths */
	ts_trace_columns(e, p->col, p->elem);
	p->cap = e->cap;
	p->done = e->n;
	if (!threaded) {
		p->sync = 1;
		return;
	}
	atomic_init(&p->parsed, e->n);
	atomic_init(&p->stop, 0);
	p->started = pthread_create(&p->th, NULL, pf_main, p) == 0;
}

static void pf_stop(struct rd *r)
{
	r->pf.sync = 0;
	if (!r->pf.started)
		return;
	atomic_store(&r->pf.stop, 1);
	pthread_join(r->pf.th, NULL);
	r->pf.started = 0;
}

/* -------------------------------------------------------- scanning */

static inline int end_or_need(const struct rd *r)
{
	return r->eof ? P_TRUNC : P_NEED;
}

static int bad(struct rd *r, size_t at, const char *what, int recoverable)
{
	r->bad_at = at;
	r->bad_what = what;
	r->bad_recoverable = recoverable;
	return P_BAD;
}

static inline size_t skip_ws(const unsigned char *d, size_t i, size_t len)
{
	while (i < len) {
		unsigned char c = d[i];
		if (c > ' ' || (c != ' ' && c != '\n' && c != '\r' && c != '\t'))
			break;
		i++;
	}
	return i;
}

/*
 * n (a length below 32) as a branch target: each case returns its own
 * constant, so what follows depends on a predicted indirect branch instead
 * of on the loads and masks that computed n. The parse is bound by the
 * chain from one member's end to the next member's start (each position
 * waits for the bytes before it), not by its instruction count; writers
 * repeat their lengths (the same keys, the same digits of ts), so the
 * prediction mostly holds and a miss costs about what the wait did. The
 * empty asm keeps the compiler from folding the cases back into n.
 */
static inline HOT size_t predicted_len(size_t n)
{
#define C(k) case k: n = k; __asm__("" : "+r"(n)); return n;
	switch (n) {
	C(0) C(1) C(2) C(3) C(4) C(5) C(6) C(7) C(8) C(9) C(10) C(11) C(12) C(13) C(14) C(15)
	C(16) C(17) C(18) C(19) C(20) C(21) C(22) C(23) C(24) C(25) C(26) C(27) C(28) C(29)
	C(30) C(31)
	default: return n;
	}
#undef C
}

#if defined(__SSE2__)
/* The bytes of v that end a plain string ('"', '\\' or a byte < 0x20:
 * unsigned v <= 0x1f <=> min(v, 0x1f) == v) as a 16-bit mask. */
static inline uint32_t stop_mask16(__m128i v)
{
	const __m128i lim = _mm_set1_epi8(0x1f);
	__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
					      _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
				 _mm_cmpeq_epi8(_mm_min_epu8(v, lim), v));
	return (uint32_t)_mm_movemask_epi8(m);
}
#endif

/* First index at or after i holding '"', '\\' or a byte < 0x20. */
static inline size_t scan_plain(const unsigned char *d, size_t i, size_t len)
{
#if defined(__SSE2__)
	while (i + 16 <= len) {
		uint32_t mask = stop_mask16(_mm_loadu_si128((const __m128i *)(d + i)));
		if (mask)
			return i + (size_t)__builtin_ctz(mask);
		i += 16;
	}
#endif
	while (i < len) {
		unsigned char c = d[i];
		if (c == '"' || c == '\\' || c < 0x20)
			return i;
		i++;
	}
	return len;
}

static inline int is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* String at d[*ip] == '"'. Invalid UTF-8 is accepted as bytes. */
static inline HOT int scan_str(struct rd *r, size_t *ip, struct strv *out)
{
	const unsigned char *d = r->d;
	size_t len = r->len, i = *ip + 1;
	int flags = 0;

	for (;;) {
		i = scan_plain(d, i, len);
		if (i >= len)
			return end_or_need(r);
		unsigned char c = d[i];
		if (c == '"')
			break;
		if (c == '\\') {
			flags |= S_ESC;
			if (i + 1 >= len)
				return end_or_need(r);
			unsigned char e = d[i + 1];
			if (e == 'u') {
				if (i + 6 > len)
					return end_or_need(r);
				if (!(is_hex(d[i + 2]) && is_hex(d[i + 3]) &&
				      is_hex(d[i + 4]) && is_hex(d[i + 5]))) {
					flags |= S_BADESC;
					i += 2;
					continue;
				}
				i += 6;
				continue;
			}
			if (!(e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' ||
			      e == 'n' || e == 'r' || e == 't'))
				flags |= S_BADESC;
			i += 2;
			continue;
		}
		flags |= S_CTRL;
		i++;
	}
	out->s = (const char *)d + *ip + 1;
	out->n = i - *ip - 1;
	out->flags = flags;
	if (flags & (S_BADESC | S_CTRL)) {
		if (r->strict)
			return bad(r, *ip, (flags & S_CTRL) ?
				   "raw control character in string (a writer bug; not repaired in strict mode)" :
				   "invalid escape in string (a writer bug; not repaired in strict mode)", 0);
		r->repaired = 1;
	}
	*ip = i + 1;
	return P_OK;
}

/* Number at d[*ip] (JSON grammar, plus NaN / Infinity / -Infinity). */
static int scan_num(struct rd *r, size_t *ip, struct strv *out)
{
	const unsigned char *d = r->d;
	size_t len = r->len, i = *ip, f;

	if (d[i] == '-')
		i++;
	if (i >= len)
		return end_or_need(r);
	if (d[i] == 'I' || d[i] == 'N') {
		const char *lit = d[i] == 'I' ? "Infinity" : "NaN";
		size_t n = strlen(lit);
		if (d[i] == 'N' && i != *ip)
			return bad(r, i, "expected a digit in number", 0);
		size_t m = len - i < n ? len - i : n;
		if (memcmp(d + i, lit, m) != 0)
			return bad(r, i, "expected a JSON value", 0);
		if (m < n)
			return end_or_need(r);
		i += n;
		goto done;
	}
	if (d[i] == '0') {
		i++;
	} else if (d[i] >= '1' && d[i] <= '9') {
		while (i < len && d[i] >= '0' && d[i] <= '9')
			i++;
	} else {
		return bad(r, i, "expected a digit in number", 0);
	}
	if (i < len && d[i] == '.') {
		f = ++i;
		while (i < len && d[i] >= '0' && d[i] <= '9')
			i++;
		if (i == f)
			return i >= len ? end_or_need(r) :
				bad(r, i, "expected a digit after '.' in number", 0);
	}
	if (i < len && (d[i] == 'e' || d[i] == 'E')) {
		i++;
		if (i < len && (d[i] == '+' || d[i] == '-'))
			i++;
		f = i;
		while (i < len && d[i] >= '0' && d[i] <= '9')
			i++;
		if (i == f)
			return i >= len ? end_or_need(r) :
				bad(r, i, "expected a digit in number exponent", 0);
	}
	if (i >= len && !r->eof)
		return P_NEED;
done:
	out->s = (const char *)d + *ip;
	out->n = i - *ip;
	out->flags = 0;
	*ip = i;
	return P_OK;
}

static int scan_lit(struct rd *r, size_t *ip)
{
	static const char *const lits[] = { "true", "false", "null" };
	const unsigned char *d = r->d;
	size_t avail = r->len - *ip;

	for (int k = 0; k < 3; k++) {
		size_t n = strlen(lits[k]);
		if (d[*ip] != (unsigned char)lits[k][0])
			continue;
		size_t m = avail < n ? avail : n;
		if (memcmp(d + *ip, lits[k], m) != 0)
			break;
		if (m < n)
			return end_or_need(r);
		*ip += n;
		return P_OK;
	}
	return bad(r, *ip, "expected a JSON value (object, array, string, number, true, false, null)", 0);
}

/*
 * Skip one value starting at d[*ip] (whitespace already skipped),
 * validating its syntax. Errors that follow a string are marked
 * recoverable: that is what an unescaped quote inside a string looks like.
 */
static int skip_value(struct rd *r, size_t *ip)
{
	const unsigned char *d = r->d;
	size_t len = r->len, i = *ip;
	uint64_t stack[MAX_DEPTH / 64];
	int depth = 0, rc, after_str = 0;
	struct strv sv;

value:
	if (i >= len)
		return end_or_need(r);
	switch (d[i]) {
	case '{':
	case '[':
		if (depth >= MAX_DEPTH)
			return bad(r, i, "nesting deeper than 1024 levels", 0);
		if (d[i] == '{')
			stack[depth >> 6] |= (uint64_t)1 << (depth & 63);
		else
			stack[depth >> 6] &= ~((uint64_t)1 << (depth & 63));
		depth++;
		i = skip_ws(d, i + 1, len);
		if (i >= len)
			return end_or_need(r);
		if (stack[(depth - 1) >> 6] >> ((depth - 1) & 63) & 1) {
			if (d[i] == '}') {
				i++;
				depth--;
				after_str = 0;
				goto after;
			}
			goto key;
		}
		if (d[i] == ']') {
			i++;
			depth--;
			after_str = 0;
			goto after;
		}
		goto value;
	case '"':
		rc = scan_str(r, &i, &sv);
		if (rc)
			return rc;
		after_str = 1;
		goto after;
	case 't': case 'f': case 'n':
		rc = scan_lit(r, &i);
		if (rc)
			return rc;
		after_str = 0;
		goto after;
	default:
		if (d[i] == '-' || (d[i] >= '0' && d[i] <= '9') || d[i] == 'N' || d[i] == 'I') {
			rc = scan_num(r, &i, &sv);
			if (rc)
				return rc;
			after_str = 0;
			goto after;
		}
		return bad(r, i, "expected a JSON value (object, array, string, number, true, false, null)",
			   after_str);
	}
after:
	if (depth == 0) {
		*ip = i;
		return P_OK;
	}
	i = skip_ws(d, i, len);
	if (i >= len)
		return end_or_need(r);
	{
		int obj = (int)(stack[(depth - 1) >> 6] >> ((depth - 1) & 63) & 1);
		if (d[i] == ',') {
			i = skip_ws(d, i + 1, len);
			if (obj)
				goto key;
			goto value;
		}
		if (d[i] == (obj ? '}' : ']')) {
			i++;
			depth--;
			after_str = 0;
			goto after;
		}
		return bad(r, i, obj ? "expected ',' or '}' after object member" :
			   "expected ',' or ']' after array element", after_str);
	}
key:
	if (i >= len)
		return end_or_need(r);
	if (d[i] != '"')
		return bad(r, i, "expected '\"' (object key)", after_str);
	rc = scan_str(r, &i, &sv);
	if (rc)
		return rc;
	i = skip_ws(d, i, len);
	if (i >= len)
		return end_or_need(r);
	if (d[i] != ':')
		return bad(r, i, "expected ':' after object key", 1);
	i = skip_ws(d, i + 1, len);
	after_str = 0;
	goto value;
}


/* An object key at d[*ip] == '"': keys are short and plain, so a byte loop
 * beats the vector scan; anything unusual goes through scan_str. */
static inline HOT int scan_key(struct rd *r, size_t *ip, struct strv *out)
{
	const unsigned char *d = r->d;
	size_t len = r->len, i = *ip + 1;

#if defined(__SSE2__)
	if (i + 16 <= len) {
		__m128i v = _mm_loadu_si128((const __m128i *)(d + i));
		__m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
						      _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))), ctl);
		int mask = _mm_movemask_epi8(m);
		if (!mask)
			return scan_str(r, ip, out);
		i += (size_t)__builtin_ctz((unsigned)mask);
	} else
#endif
	while (i < len && d[i] != '"' && d[i] != '\\' && d[i] >= 0x20)
		i++;
	if (i < len && d[i] == '"') {
		out->s = (const char *)d + *ip + 1;
		out->n = i - *ip - 1;
		out->flags = 0;
		*ip = i + 1;
		return P_OK;
	}
	return scan_str(r, ip, out);
}

/* Eight ASCII digits in a little-endian word (the fast_float / simdjson
 * trick): test, then convert with three multiplications. */
static inline int swar_is_8digits(uint64_t x)
{
	return !(((x & 0xF0F0F0F0F0F0F0F0ULL) |
		  (((x + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) ^
		 0x3333333333333333ULL);
}

static inline uint64_t swar_8digits(uint64_t v)
{
	const uint64_t mask = 0x000000FF000000FFULL;
	const uint64_t mul1 = 0x000F424000000064ULL; /* 100 + (1000000 << 32) */
	const uint64_t mul2 = 0x0000271000000001ULL; /* 1 + (10000 << 32) */

	v -= 0x3030303030303030ULL;
	v = v * 10 + (v >> 8);
	v = (((v & mask) * mul1) + (((v >> 16) & mask) * mul2)) >> 32;
	return v;
}

#if defined(__SSE2__)
/* n (1..8) ASCII digits at p, with 8 bytes readable at p. */
static inline HOT uint64_t swar_digits(const unsigned char *p, unsigned n)
{
	uint64_t w;

	memcpy(&w, p, 8);
	if (n < 8) {
		unsigned s = 8 * (8 - n);
		/* the digits move to the high bytes, '0's fill the low ones */
		w = (w << s) | (0x3030303030303030ULL >> (64 - s));
	}
	return swar_8digits(w);
}

/* Bit k set: p[k] is an ASCII digit (unsigned p[k] - '0' <= 9); 32
 * bytes at p must be readable. */
static inline uint32_t digit_mask32(const unsigned char *p)
{
	const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
	__m128i a = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)p), zero);
	__m128i b = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), zero);

	return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(a, nine), a)) |
		(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(b, nine), b)) << 16;
}

/* The length of the number at p when it is digits with an optional
 * fraction ending within 32 bytes (what scan_num would delimit), else 0. */
static inline HOT size_t num_len_vec(const unsigned char *p)
{
	uint32_t m = digit_mask32(p);
	unsigned nd, nf;

	if (m == UINT32_MAX)
		return 0;
	nd = (unsigned)__builtin_ctz(~m);
	if (nd == 0 || nd > 30 || (p[0] == '0' && nd > 1))
		return 0;
	if (p[nd] == '.') {
		nf = (unsigned)__builtin_ctz(~(m >> (nd + 1)));
		if (nf == 0 || nd + 1 + nf >= 32)
			return 0;
		nd += 1 + nf;
	}
	return p[nd] == 'e' || p[nd] == 'E' ? 0 : nd;
}

/*
 * The common shapes of num_fast ("1102", "1712195495519689.047", at most
 * 16 integer digits), with every length taken from one digit mask of the
 * next 32 bytes instead of a loop over the bytes (fewer instructions and
 * branches per number). Returns 1 with the magnitude
 * (scaled) and the length, or 0 for any other shape (num_fast's loops then
 * decide). 32 bytes at p must be readable.
 */
static inline HOT int num_vec(const unsigned char *p, int scale, uint64_t *val, size_t *adv)
{
	uint32_t m = digit_mask32(p);
	uint64_t v, frac = 0;
	unsigned nd, nf, k;

	if (m == UINT32_MAX)
		return 0;
	nd = (unsigned)__builtin_ctz(~m);
	if (nd == 0 || nd > 16 || (p[0] == '0' && nd > 1))
		return 0;
	v = nd > 8 ? swar_digits(p, nd - 8) * 100000000 + swar_digits(p + nd - 8, 8) :
		swar_digits(p, nd);
	k = nd;
	if (p[k] == '.') {
		if (scale != 3)
			return 0;
		nf = (unsigned)__builtin_ctz(~(m >> (k + 1)));
		if (nf == 0 || k + 1 + nf >= 32)
			return 0;
		frac = (uint64_t)(p[k + 1] - '0') * 100;
		if (nf >= 2)
			frac += (uint64_t)(p[k + 2] - '0') * 10;
		if (nf >= 3)
			frac += (uint64_t)(p[k + 3] - '0') + (nf > 3 && p[k + 4] >= '5');
		k += 1 + nf;
	}
	if (p[k] == 'e' || p[k] == 'E')
		return 0;
	if (scale == 3) {
		if (v > ((uint64_t)INT64_MAX - 1000) / 1000)
			return 0;
		v = v * 1000 + frac;
	}
	*val = v;
	*adv = k;
	return 1;
}
#endif

static inline int is_num_start(unsigned char c)
{
	return c == '-' || (c >= '0' && c <= '9');
}

/*
 * A number at d[*ip] converted to fixed point with `scale` decimals (3:
 * microseconds text to nanoseconds, 0: integers), in one pass for the
 * common shapes ("123", "-5", "1712195495519689.047"). Other shapes
 * (exponents, fractions of integers, 19+ digits, NaN) take the exact slow
 * path. *ok is 0 when the value is not representable; the syntax is
 * checked either way.
 */
static inline HOT int num_fast(struct rd *r, size_t *ip, int scale, int64_t *out, int *ok)
{
	const unsigned char *d = r->d;
	size_t len = r->len, i = *ip;
	uint64_t v = 0, frac = 0;
	int neg = 0, nd = 0, nf = 0, round = 0;

	if (d[i] == '-') {
		neg = 1;
		i++;
	}
	if (i >= len)
		goto slow;
#if defined(__SSE2__)
	size_t adv;
	if (len - i >= 32 && num_vec(d + i, scale, &v, &adv)) {
		i += adv;
		goto done;
	}
#endif
	if (d[i] == '0') {
		i++;
	} else if (d[i] >= '1' && d[i] <= '9') {
		uint64_t w;
		while (nd <= 8 && i + 8 <= len) {
			memcpy(&w, d + i, 8);
			if (!swar_is_8digits(w))
				break;
			v = v * 100000000 + swar_8digits(w);
			nd += 8;
			i += 8;
		}
		while (i < len && (unsigned)(d[i] - '0') < 10) {
			v = v * 10 + (unsigned)(d[i] - '0');
			nd++;
			i++;
		}
		if (nd > 18)
			goto slow;
	} else {
		goto slow;
	}
	if (i < len && d[i] == '.') {
		if (scale != 3)
			goto slow;
		i++;
		size_t f0 = i;
		while (i < len && (unsigned)(d[i] - '0') < 10) {
			if (nf < 3) {
				frac = frac * 10 + (unsigned)(d[i] - '0');
				nf++;
			} else if (i - f0 == 3) {
				round = d[i] >= '5';
			}
			i++;
		}
		if (i == f0)
			goto slow;
	}
	if (i >= len || d[i] == 'e' || d[i] == 'E')
		goto slow;
	if (scale == 3) {
		while (nf < 3) {
			frac *= 10;
			nf++;
		}
		if (v > ((uint64_t)INT64_MAX - 1000) / 1000)
			goto slow;
		v = v * 1000 + frac + (uint64_t)round;
	} else if (v > (uint64_t)INT64_MAX) {
		goto slow;
	}
#if defined(__SSE2__)
done:
#endif
	*out = neg ? -(int64_t)v : (int64_t)v;
	*ok = 1;
	*ip = i;
	return P_OK;
slow:;
	struct strv sv;
	size_t j = *ip;
	int rc = scan_num(r, &j, &sv);
	if (rc)
		return rc;
	*ip = j;
	*ok = scale == 3 ? ts_num_fixed(sv.s, sv.n, 3, out) == 0 :
		ts_num_i64(sv.s, sv.n, out) == 0;
	if (!*ok && scale == 0) {
		double f;
		if (ts_num_f64(sv.s, sv.n, &f) == 0 && f == f && f > -9.2e18 && f < 9.2e18) {
			*out = (int64_t)f;
			*ok = 1;
		}
	}
	return P_OK;
}

/*
 * A flat array of unsigned integers at d[i] == '[' ("grid": [4, 106, 1],
 * ", " or "," between them), delimited with a byte loop within 64 bytes.
 * Returns 1 with *ip past the ']', or 0 for any other shape, blanks
 * elsewhere or near the window's end (skip_value then validates it: it
 * accepts what this accepts and ends at the same byte).
 */
static inline int skip_int_array(const unsigned char *d, size_t i, size_t len, size_t *ip)
{
	size_t k = i + 1, lim = i + 63;

	if (i >= len || len - i < 66)
		return 0;
	for (;;) {
		if ((unsigned)(d[k] - '0') > 9 ||
		    (d[k] == '0' && (unsigned)(d[k + 1] - '0') <= 9))
			return 0;
		while (k < lim && (unsigned)(d[k] - '0') <= 9)
			k++;
		if (k >= lim)
			return 0;
		if (d[k] == ']') {
			*ip = k + 1;
			return 1;
		}
		if (d[k] != ',')
			return 0;
		k += d[k + 1] == ' ' ? 2 : 1;
	}
}

/* A value the model does not keep: most are one number or string, which
 * skip_value would delimit with the same scanners after its own set-up
 * (a function call and the nesting stack). */
static inline HOT int skip_member(struct rd *r, size_t *ip)
{
	struct strv v;
	unsigned char c = r->d[*ip];

	if (c == '"')
		return scan_str(r, ip, &v);
	if (c == '-' || (c >= '0' && c <= '9')) {
#if defined(__SSE2__)
		size_t neg = c == '-';
		size_t n = r->len - *ip >= 33 ? num_len_vec(r->d + *ip + neg) : 0;
		if (n) {
			*ip += neg + n;
			return P_OK;
		}
#endif
		return scan_num(r, ip, &v);
	}
	if (c == '[' && skip_int_array(r->d, *ip, r->len, ip))
		return P_OK;
	return skip_value(r, ip);
}

/* -------------------------------------------------------- values */

/* Text of a string view, unescaped when needed (valid until the next call). */
static int str_text(struct rd *r, const struct strv *v, const char **s, size_t *n)
{
	if (!(v->flags & S_ESC)) {
		*s = v->s;
		*n = v->n;
		return 0;
	}
	ts_sb_reset(&r->sb);
	if (ts_json_unescape(v->s, v->n, 1, &r->sb) || r->sb.failed)
		return TS_ENOMEM;
	*s = r->sb.buf;
	*n = r->sb.len;
	return 0;
}

/* v with its escapes decoded, so that it reads as the text JSON means
 * (a key, a number in a string, a ph): unchanged without escapes, else
 * pointing into r->sb until its next use. */
static int str_plain(struct rd *r, struct strv *v)
{
	const char *s;
	size_t n;
	int rc;

	if (!(v->flags & S_ESC))
		return 0;
	if ((rc = str_text(r, v, &s, &n)))
		return rc;
	v->s = s;
	v->n = n;
	v->flags &= ~S_ESC;
	return 0;
}

/*
 * Names repeat millions of times: a direct-mapped cache keyed by the
 * length and the first and last 8 bytes finds the id of a repeated string
 * with one memcmp, skipping the full hash and the table probe.
 */
static inline uint32_t icache_slot(const char *s, size_t n)
{
	uint64_t a = 0, b = 0;

	if (n >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
	} else if (n >= 4) {
		uint32_t x, y;
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		a = (uint64_t)x << 32 | y;
	} else {
		for (size_t k = 0; k < n; k++)
			a |= (uint64_t)(unsigned char)s[k] << (8 * k);
	}
	uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ULL) ^ n) * 0xff51afd7ed558ccdULL;
	return (uint32_t)(h >> 52) & (ICACHE_N - 1);
}

/* memcmp(a, b, n) == 0 without a library call for the short strings that
 * dominate (categories, most names). */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t x, y, u, v;

	if (n > 16)
		return memcmp(a, b, n) == 0;
	if (n >= 8) {
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		memcpy(&u, a + n - 8, 8);
		memcpy(&v, b + n - 8, 8);
		return x == y && u == v;
	}
	if (n >= 4) {
		uint32_t x4, y4, u4, v4;
		memcpy(&x4, a, 4);
		memcpy(&y4, b, 4);
		memcpy(&u4, a + n - 4, 4);
		memcpy(&v4, b + n - 4, 4);
		return x4 == y4 && u4 == v4;
	}
	for (size_t k = 0; k < n; k++)
		if (a[k] != b[k])
			return 0;
	return 1;
}

static inline HOT int intern_text(struct rd *r, const char *s, size_t n, uint32_t *id)
{
	const struct ts_intern *in = &r->t->strings;
	struct icache_ent *c = &r->sc->ent[icache_slot(s, n)];
	int64_t x;

	if (c->s && c->n == n && same_bytes(c->s, s, n)) {
		*id = c->id;
		return 0;
	}
	x = ts_intern(&r->t->strings, s, n);
	if (x < 0)
		return (int)x;
	c->s = n <= UINT32_MAX ? in->strs[x] : NULL;
	c->n = (uint32_t)n;
	c->id = (uint32_t)x;
	*id = (uint32_t)x;
	return 0;
}

static int intern_view(struct rd *r, const struct strv *v, uint32_t *id)
{
	const char *s;
	size_t n;
	int rc = str_text(r, v, &s, &n);

	if (rc)
		return rc;
	return intern_text(r, s, n, id);
}

/*
 * A plain string value of at most 31 bytes at d[*ip] (a category, most
 * names), looked up by its bytes in the short-string cache before
 * intern_text: the closing quote is found and the key is made from the
 * same two 16-byte loads. Returns 1 with *out and *ip set, -1 when
 * interning failed (out of memory), or 0 (nothing changed) for a value
 * that is not a string, escapes, control bytes, longer strings or near the
 * window's end: value_strid then reads it, with the same id or error.
 */
static inline HOT int short_strid(struct rd *r, size_t *ip, uint32_t *out)
{
#if defined(__SSE2__)
	static const unsigned char ones[64] = {
		255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
		255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	};
	const unsigned char *p = r->d + *ip + 1;
	__m128i v0, v1, e0, e1;
	struct scache_ent *c;
	uint64_t a, b;
	uint32_t m, id = 0;
	unsigned n;

	if (*ip >= r->len || r->len - *ip < 64 || p[-1] != '"')
		return 0;
	v0 = _mm_loadu_si128((const __m128i *)p);
	v1 = _mm_loadu_si128((const __m128i *)(p + 16));
	m = stop_mask16(v0) | stop_mask16(v1) << 16;
	if (!m)
		return 0;
	n = (unsigned)__builtin_ctz(m);
	if (p[n] != '"')
		return 0;
	v0 = _mm_and_si128(v0, _mm_loadu_si128((const __m128i *)(ones + 32 - n)));
	v1 = _mm_and_si128(v1, _mm_loadu_si128((const __m128i *)(ones + 48 - n)));
	e0 = _mm_xor_si128(v0, v1);
	a = (uint64_t)_mm_cvtsi128_si64(e0);
	b = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(e0, e0));
	c = &r->sc->sh[(uint32_t)(((a ^ (b * 0x9e3779b97f4a7c15ULL) ^ n) *
				   0xff51afd7ed558ccdULL) >> 40) & (SCACHE_N - 1)];
	e0 = _mm_loadu_si128((const __m128i *)c->b);
	e1 = _mm_loadu_si128((const __m128i *)(c->b + 16));
	if (c->n1 == n + 1 &&
	    _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(v0, e0), _mm_cmpeq_epi8(v1, e1))) == 0xffff) {
		*out = c->id;
		*ip += n + 2;
		return 1;
	}
	if (intern_text(r, (const char *)p, n, &id))
		return -1;
	_mm_storeu_si128((__m128i *)c->b, v0);
	_mm_storeu_si128((__m128i *)(c->b + 16), v1);
	c->n1 = n + 1;
	c->id = id;
	*out = id;
	*ip += n + 2;
	return 1;
#else
	(void)r; (void)ip; (void)out;
	return 0;
#endif
}

/* Integer from number text; fractions and exponents go through double. */
static int num_int(const char *s, size_t n, int64_t *out)
{
	double f;

	if (ts_num_i64(s, n, out) == 0)
		return 0;
	if (ts_num_f64(s, n, &f) == 0 && f == f && f > -9.2e18 && f < 9.2e18) {
		*out = (int64_t)f;
		return 0;
	}
	return -1;
}

/* A value that should be a number: a number token, or a string holding
 * one. Returns P_* and sets *ok when a number was found. */
static int value_num(struct rd *r, size_t *ip, struct strv *v, int *ok)
{
	int rc;

	*ok = 0;
	if (*ip >= r->len)
		return end_or_need(r);
	unsigned char c = r->d[*ip];
	if (c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I') {
		rc = scan_num(r, ip, v);
		*ok = rc == P_OK;
		return rc;
	}
	if (c == '"') {
		rc = scan_str(r, ip, v);
		if (rc == P_OK && str_plain(r, v))
			return TS_ENOMEM;
		*ok = rc == P_OK;
		return rc;
	}
	return skip_value(r, ip);
}

/*
 * The integers of ids, pids and streams ("0", "1102", "361552"): 1-7
 * digits without a sign, fraction or exponent, found with one SWAR test of
 * 8 bytes (a byte is flagged when it is below '0' or above '9'; borrows
 * and carries only reach the bytes above the first flagged one, so the
 * lowest flag is exact) and converted with swar_digits. Returns 1 with
 * *out and *ip set, or 0 (nothing changed) for any other shape or near
 * the window's end: num_fast then decides, with the same result for
 * these shapes.
 */
static inline HOT int small_int(const unsigned char *d, size_t i, size_t len, int64_t *out,
				size_t *ip)
{
#if defined(__SSE2__)
	uint64_t w, m;
	unsigned nd, c;

	if (i >= len || len - i < 17)
		return 0;
	memcpy(&w, d + i, 8);
	m = ((w - 0x3030303030303030ULL) | (w + 0x4646464646464646ULL)) & 0x8080808080808080ULL;
	if (!m)
		return 0;
	nd = (unsigned)__builtin_ctzll(m) >> 3;
	c = d[i + nd];
	if (nd == 0 || (d[i] == '0' && nd > 1) || c == '.' || c == 'e' || c == 'E')
		return 0;
	*out = (int64_t)swar_digits(d + i, nd);
	*ip = i + nd;
	return 1;
#else
	(void)d; (void)i; (void)len; (void)out; (void)ip;
	return 0;
#endif
}

/* A number as int64: scale 0 for integers (a fraction is truncated, as
 * num_int does), 3 for microseconds text to exact nanoseconds. */
static inline HOT int value_scaled(struct rd *r, size_t *ip, int scale, int64_t *out)
{
	struct strv v;
	int ok = 0, rc;
	int64_t x;

	if (scale == 0 && small_int(r->d, *ip, r->len, out, ip))
		return P_OK;
	if (*ip < r->len && is_num_start(r->d[*ip])) {
		rc = num_fast(r, ip, scale, &x, &ok);
		if (rc == P_OK && ok)
			*out = x;
		return rc;
	}
	rc = value_num(r, ip, &v, &ok);
	if (rc == P_OK && ok &&
	    (scale ? ts_num_fixed(v.s, v.n, scale, &x) : num_int(v.s, v.n, &x)) == 0)
		*out = x;
	return rc;
}

static inline HOT int value_int(struct rd *r, size_t *ip, int64_t *out)
{
	return value_scaled(r, ip, 0, out);
}

/* pid / tid: a number, a numeric string, "stream N", or any other string
 * (interned, stored as TS_STRID). */
static int value_id(struct rd *r, size_t *ip, int64_t *out)
{
	struct strv v;
	int rc;

	if (*ip >= r->len)
		return end_or_need(r);
	if (r->d[*ip] != '"') {
		rc = value_int(r, ip, out);
		if (rc == P_OK && TS_IS_STRID(*out))
			r->raw_strid = 1;
		return rc;
	}
	rc = scan_str(r, ip, &v);
	if (rc)
		return rc;
	if (str_plain(r, &v))
		return TS_ENOMEM;
	const char *s = v.s;
	size_t n = v.n;
	if (n > 7 && memcmp(s, "stream ", 7) == 0) {
		s += 7;
		n -= 7;
	}
	if (n > 0 && ts_num_i64(s, n, out) == 0) {
		if (TS_IS_STRID(*out))
			r->raw_strid = 1;
		return P_OK;
	}
	uint32_t id;
	rc = intern_view(r, &v, &id);
	if (rc)
		return rc;
	*out = TS_STRID(id);
	return P_OK;
}

/* ts / dur: microseconds text to exact nanoseconds. */
static inline HOT int value_ns(struct rd *r, size_t *ip, int64_t *out)
{
	return value_scaled(r, ip, 3, out);
}

static int value_u64(struct rd *r, size_t *ip, uint64_t *out, int *has)
{
	struct strv v;
	int ok, rc = value_num(r, ip, &v, &ok);
	int64_t x;

	if (rc == P_OK && ok) {
		if (ts_num_u64(v.s, v.n, out) == 0)
			*has = 1;
		else if (num_int(v.s, v.n, &x) == 0) {
			*out = (uint64_t)x;
			*has = 1;
		}
	}
	return rc;
}

/* value_strid after short_strid declined: any string (escapes unescaped)
 * or number text is interned, anything else skipped. */
static int value_strid_slow(struct rd *r, size_t *ip, uint32_t *out)
{
	struct strv v;
	int rc;

	if (*ip >= r->len)
		return end_or_need(r);
	if (r->d[*ip] == '"') {
		rc = scan_str(r, ip, &v);
		if (rc)
			return rc;
		if (!(v.flags & S_ESC))
			return intern_text(r, v.s, v.n, out) ? TS_ENOMEM : P_OK;
		return intern_view(r, &v, out) ? TS_ENOMEM : P_OK;
	}
	unsigned char c = r->d[*ip];
	if (c == '-' || (c >= '0' && c <= '9')) {
		rc = scan_num(r, ip, &v);
		if (rc)
			return rc;
		return intern_view(r, &v, out) ? TS_ENOMEM : P_OK;
	}
	return skip_value(r, ip);
}

/* A string-valued field (name, cat, the collective's strings) as a string
 * id; *out is unchanged when the value is not a string or number. */
static inline HOT int value_strid(struct rd *r, size_t *ip, uint32_t *out)
{
	int rc = short_strid(r, ip, out);

	if (rc)
		return rc > 0 ? P_OK : TS_ENOMEM;
	return value_strid_slow(r, ip, out);
}

/* -------------------------------------------------------- events */

enum {
	A_OTHER, A_CORR, A_EXTID, A_STREAM, A_DEVICE, A_BYTES, A_COLL, A_PGNAME,
	A_PGDESC, A_DTYPE, A_SEQ, A_INN, A_OUTN, A_GSIZE, A_COMMSID, A_MBYTES,
	A_TALLOC, A_TRESV, A_DEVTYPE, A_DEVID, A_FLOPS
};

static inline HOT int arg_key(const char *s, size_t n)
{
#define K(lit, id) if (n == sizeof(lit) - 1 && same_bytes(s, lit, sizeof(lit) - 1)) return id
	switch (n) {
	case 3: K("Seq", A_SEQ); break;
	case 5: K("bytes", A_BYTES); K("Bytes", A_MBYTES); K("dtype", A_DTYPE);
		K("flops", A_FLOPS); break;
	case 6: K("stream", A_STREAM); K("device", A_DEVICE); break;
	case 8: K("Comms Id", A_COMMSID); break;
	case 9: K("Device Id", A_DEVID); break;
	case 10: K("Group size", A_GSIZE); break;
	case 11: K("correlation", A_CORR); K("External id", A_EXTID);
		K("external id", A_EXTID); K("Device Type", A_DEVTYPE); break;
	case 13: K("In msg nelems", A_INN); break;
	case 14: K("Out msg nelems", A_OUTN); K("Total Reserved", A_TRESV); break;
	case 15: K("Collective name", A_COLL); K("Total Allocated", A_TALLOC); break;
	case 18: K("Process Group Name", A_PGNAME); break;
	case 25: K("Process Group Description", A_PGDESC); break;
	default: break;
	}
#undef K
	return A_OTHER;
}

/* `"key":` and the blanks after it, at d[*ip] == '"': *ip moves to the
 * value, k holds the key as written. */
static inline HOT int member_key(struct rd *r, size_t *ip, struct strv *k)
{
	const unsigned char *d = r->d;
	size_t len = r->len, i = *ip;
	int rc = scan_key(r, &i, k);

	if (rc)
		return rc;
	if ((k->flags & S_ESC) && str_plain(r, k))
		return TS_ENOMEM;
	if (i + 1 < len && d[i] == ':' && d[i + 1] == ' ') {
		i += 2;
	} else if (i < len && d[i] == ':') {
		i++;
	} else {
		i = skip_ws(d, i, len);
		if (i >= len)
			return end_or_need(r);
		if (d[i] != ':')
			return bad(r, i, "expected ':' after object key", 1);
		i++;
	}
	i = skip_ws(d, i, len);
	if (i >= len)
		return end_or_need(r);
	*ip = i;
	return P_OK;
}

/*
 * The args key at d[i] == '"' as writers put it: a plain key of at most
 * 31 bytes (found with two 16-byte compares), `": ` and a value byte.
 * Returns its A_* kind with *adv the bytes up to the value, or -1
 * (escapes, control bytes, other blanks, a longer key, the window's end):
 * member_key then reads it, to the same kind and value.
 */
static inline HOT int akey_word(const unsigned char *d, size_t i, size_t len, size_t *adv)
{
#if defined(__SSE2__)
	const unsigned char *p = d + i + 1;
	__m128i v0, v1;
	uint32_t m;
	unsigned n;

	if (len - i < 64)
		return -1;
	v0 = _mm_loadu_si128((const __m128i *)p);
	v1 = _mm_loadu_si128((const __m128i *)(p + 16));
	m = stop_mask16(v0) | stop_mask16(v1) << 16;
	if (!m)
		return -1;
	n = (unsigned)__builtin_ctz(m);
	if (p[n] != '"' || p[n + 1] != ':' || p[n + 2] != ' ' || p[n + 3] <= ' ')
		return -1;
	*adv = predicted_len(n) + 4;
	return arg_key((const char *)p, n);
#else
	(void)d; (void)i; (void)len; (void)adv;
	return -1;
#endif
}

/* Members of an object: the body reads the key at d[i] == '"' (with
 * member_key) and its value, setting vrc. */
#define OBJ_LOOP_BEGIN(r, i)                                               \
	{                                                                  \
		const unsigned char *d_ = (r)->d;                          \
		size_t len_ = (r)->len;                                    \
		(i) = skip_ws(d_, (i) + 1, len_);                          \
		if ((i) >= len_)                                           \
			return end_or_need(r);                             \
		if (d_[i] != '}') {                                        \
			for (;;) {                                         \
				if (d_[i] != '"')                          \
					return bad((r), (i), "expected '\"' (object key)", 0); \
				{ int vrc;

#define OBJ_LOOP_END(r, i)                                                 \
				  if (vrc)                                 \
					  return vrc;                      \
				}                                          \
				if ((i) + 2 < len_ && d_[i] == ',' &&      \
				    d_[(i) + 1] == ' ' && d_[(i) + 2] == '"') { \
					(i) += 2;                          \
					continue;                          \
				}                                          \
				(i) = skip_ws(d_, (i), len_);              \
				if ((i) >= len_)                           \
					return end_or_need(r);             \
				if (d_[i] == '}')                          \
					break;                             \
				if (d_[i] != ',')                          \
					return bad((r), (i), "expected ',' or '}' after object member", \
						   (r)->d[(i) - 1] == '"'); \
				(i) = skip_ws(d_, (i) + 1, len_);          \
				if ((i) >= len_)                           \
					return end_or_need(r);             \
			}                                                  \
		}                                                          \
		(i)++;                                                     \
	}

/* The side-table fields are set up only when an event has one of their
 * keys: most events have none, and this runs once per event. */
static void evargs_rare_init(struct evargs *a)
{
	a->rare_init = 1;
	a->coll_name = a->pg_name = a->pg_desc = a->dtype = TS_NO_ID;
	a->seq = a->in_nelems = a->out_nelems = TS_NONE;
	a->group_size = -1;
	a->bytes = a->mem_bytes = TS_NONE;
	a->total_alloc = a->total_resv = TS_NONE;
	a->dev_type = a->dev_id = -1;
	a->comms_id = 0;      /* "Comms Id" absent */
}

static inline void evargs_init(struct evargs *a)
{
	a->has_coll = a->has_bytes = a->has_mem = a->has_flops = 0;
	a->rare_init = 0;
	a->bad_ts = a->bad_dur = 0;
}

static int parse_args(struct rd *r, size_t *ip, struct ts_trace_event *e,
		      struct evargs *a)
{
	size_t i = *ip;
	int64_t x;
	int has;

	if (r->d[i] != '{') {
		int rc = skip_value(r, &i);
		*ip = i;
		return rc;
	}
	OBJ_LOOP_BEGIN(r, i)
	size_t adv;
	int kind = akey_word(d_, i, len_, &adv);
	if (kind >= 0) {
		i += adv;
	} else {
		struct strv k;
		vrc = member_key(r, &i, &k);
		if (vrc)
			return vrc;
		kind = arg_key(k.s, k.n);
	}
	if (kind >= A_BYTES && !a->rare_init)
		evargs_rare_init(a);
	switch (kind) {
	case A_CORR: vrc = value_int(r, &i, &e->correlation); break;
	case A_EXTID: vrc = value_int(r, &i, &e->external_id); break;
	case A_STREAM: vrc = value_int(r, &i, &e->stream); break;
	case A_DEVICE:
		x = -1;
		vrc = value_int(r, &i, &x);
		if (x >= INT32_MIN && x <= INT32_MAX)
			e->device = (int32_t)x;
		break;
	case A_BYTES:
		x = TS_NONE;
		vrc = value_int(r, &i, &x);
		if (x != TS_NONE) {
			a->bytes = x;
			a->has_bytes = 1;
		}
		break;
	case A_COLL: vrc = value_strid(r, &i, &a->coll_name); a->has_coll = 1; break;
	case A_PGNAME: vrc = value_strid(r, &i, &a->pg_name); break;
	case A_PGDESC: vrc = value_strid(r, &i, &a->pg_desc); break;
	case A_DTYPE: vrc = value_strid(r, &i, &a->dtype); break;
	case A_SEQ: vrc = value_int(r, &i, &a->seq); break;
	case A_INN: vrc = value_int(r, &i, &a->in_nelems); break;
	case A_OUTN: vrc = value_int(r, &i, &a->out_nelems); break;
	case A_GSIZE: vrc = value_int(r, &i, &a->group_size); break;
	case A_COMMSID: has = 0; vrc = value_u64(r, &i, &a->comms_id, &has); break;
	case A_MBYTES:
		x = TS_NONE;
		vrc = value_int(r, &i, &x);
		if (x != TS_NONE) {
			a->mem_bytes = x;
			a->has_mem = 1;
		}
		break;
	case A_TALLOC: vrc = value_int(r, &i, &a->total_alloc); break;
	case A_TRESV: vrc = value_int(r, &i, &a->total_resv); break;
	case A_DEVTYPE: vrc = value_int(r, &i, &a->dev_type); break;
	case A_DEVID: vrc = value_int(r, &i, &a->dev_id); break;
	case A_FLOPS: {
		struct strv v;
		int ok;
		vrc = value_num(r, &i, &v, &ok);
		if (vrc == P_OK && ok && ts_num_f64(v.s, v.n, &a->flops) == 0)
			a->has_flops = 1;
		break;
	}
	default: vrc = skip_member(r, &i); break;
	}
	OBJ_LOOP_END(r, i)
	*ip = i;
	return P_OK;
}


enum { E_OTHER, E_PH, E_TS, E_ID, E_CAT, E_PID, E_TID, E_DUR, E_NAME, E_ARGS };

static int event_key(const char *s, size_t n)
{
	switch (n) {
	case 2:
		if (s[0] == 'p' && s[1] == 'h')
			return E_PH;
		if (s[0] == 't' && s[1] == 's')
			return E_TS;
		if (s[0] == 'i' && s[1] == 'd')
			return E_ID;
		break;
	case 3:
		if (memcmp(s, "cat", 3) == 0)
			return E_CAT;
		if (memcmp(s, "pid", 3) == 0)
			return E_PID;
		if (memcmp(s, "tid", 3) == 0)
			return E_TID;
		if (memcmp(s, "dur", 3) == 0)
			return E_DUR;
		break;
	case 4:
		if (memcmp(s, "name", 4) == 0)
			return E_NAME;
		if (memcmp(s, "args", 4) == 0)
			return E_ARGS;
		break;
	default:
		break;
	}
	return E_OTHER;
}

/*
 * The event keys as writers emit them, `"ph":` ... `"args":`, recognised
 * with one fixed-size compare of the quoted key and its colon at d[i]
 * instead of a vector scan for the closing quote, a compare of the key and
 * the colon checks (2 % of the parse time, interleaved A/B runs). Returns
 * the key's E_* kind with *adv set to the bytes matched, or -1 (escapes, a
 * blank before the colon, other keys, the window end): the caller then
 * takes member_key.
 */
static inline HOT int event_key_word(const unsigned char *d, size_t i, size_t len, size_t *adv)
{
#define W(lit, kind) if (memcmp(d + i, lit, sizeof(lit) - 1) == 0) \
		{ *adv = sizeof(lit) - 1; return kind; }
	if (len - i < 8)
		return -1;
	switch (d[i + 1]) {
	case 'p': W("\"ph\":", E_PH); W("\"pid\":", E_PID); break;
	case 't': W("\"ts\":", E_TS); W("\"tid\":", E_TID); break;
	case 'c': W("\"cat\":", E_CAT); break;
	case 'n': W("\"name\":", E_NAME); break;
	case 'd': W("\"dur\":", E_DUR); break;
	case 'a': W("\"args\":", E_ARGS); break;
	case 'i': W("\"id\":", E_ID); break;
	default: break;
	}
#undef W
	return -1;
}

/*
 * The event keys with the blank writers put after the colon, `"ph": ` ...
 * `"args": `, as little-endian words: a key at d[i] is looked up by its
 * first two letters (a multiplicative hash onto 32 slots, no two of these
 * keys sharing one) and matched with one 8-byte compare, (word | keep) ==
 * match, where keep has the bits of the bytes after the key set (an empty
 * slot, all zero, never matches: a key starts with '"'). Anything else
 * goes through event_key_word and member_key.
 */
struct ekey {
	uint64_t match, keep;
	int kind;
	unsigned adv;
};

#define EKEY_MUL 522037u

/* `"key": ` of each kind: the table's lengths and parse_event's constants */
#define EKEY_TEXT_E_PH "\"ph\": "
#define EKEY_TEXT_E_TS "\"ts\": "
#define EKEY_TEXT_E_ID "\"id\": "
#define EKEY_TEXT_E_CAT "\"cat\": "
#define EKEY_TEXT_E_PID "\"pid\": "
#define EKEY_TEXT_E_TID "\"tid\": "
#define EKEY_TEXT_E_DUR "\"dur\": "
#define EKEY_TEXT_E_NAME "\"name\": "
#define EKEY_TEXT_E_ARGS "\"args\": "
#define EKEY_LEN(kind) (sizeof(EKEY_TEXT_##kind) - 1)

static const struct ekey ekeys[32] = {
	[0] = { 0xff203a2274616322ULL, 0xff00000000000000ULL, E_CAT, EKEY_LEN(E_CAT) },
	[1] = { 0x203a22656d616e22ULL, 0x0000000000000000ULL, E_NAME, EKEY_LEN(E_NAME) },
	[3] = { 0xffff203a22646922ULL, 0xffff000000000000ULL, E_ID, EKEY_LEN(E_ID) },
	[7] = { 0xffff203a22687022ULL, 0xffff000000000000ULL, E_PH, EKEY_LEN(E_PH) },
	[8] = { 0xff203a2264697022ULL, 0xff00000000000000ULL, E_PID, EKEY_LEN(E_PID) },
	[9] = { 0xff203a2264697422ULL, 0xff00000000000000ULL, E_TID, EKEY_LEN(E_TID) },
	[17] = { 0x203a227367726122ULL, 0x0000000000000000ULL, E_ARGS, EKEY_LEN(E_ARGS) },
	[18] = { 0xffff203a22737422ULL, 0xffff000000000000ULL, E_TS, EKEY_LEN(E_TS) },
	[20] = { 0xff203a2272756422ULL, 0xff00000000000000ULL, E_DUR, EKEY_LEN(E_DUR) },
};

/* The E_* kind of the `"key": ` at d[i] followed by a value byte, or -1;
 * the value starts ekeys[].adv bytes on (parse_event's constants). */
static inline HOT int ekey_word(const unsigned char *d, size_t i, size_t len)
{
	const struct ekey *k;
	uint64_t w;

	if (len - i < 16)
		return -1;
	memcpy(&w, d + i, 8);
	k = &ekeys[(uint32_t)(w >> 8 & 0xffff) * EKEY_MUL >> 27];
	if ((w | k->keep) != k->match || d[i + k->adv] <= ' ')
		return -1;
	return k->kind;
}

/* The value of the event member of kind `kind` at d[*ip]. */
static inline HOT int event_value(struct rd *r, size_t *ip, int kind, struct ts_trace_event *e,
				  struct evargs *a)
{
	const unsigned char *d = r->d;
	size_t len = r->len, i = *ip;
	struct strv v;
	int rc;

	switch (kind) {
	case E_PH:
		/* "X": one plain byte, what scan_str would find */
		if (len - i >= 3 && d[i] == '"' && d[i + 2] == '"' && d[i + 1] >= 0x20 &&
		    d[i + 1] != '"' && d[i + 1] != '\\') {
			e->ph = (char)d[i + 1];
			*ip = i + 3;
			return P_OK;
		}
		if (d[i] != '"')
			return skip_value(r, ip);
		rc = scan_str(r, ip, &v);
		if (rc == P_OK && str_plain(r, &v))
			rc = TS_ENOMEM;
		if (rc == P_OK && v.n > 0)
			e->ph = v.s[0];
		return rc;
	case E_TS:
		rc = value_ns(r, ip, &e->ts_ns);
		a->bad_ts = rc == P_OK && e->ts_ns == TS_NONE;
		return rc;
	case E_ID: return value_int(r, ip, &e->flow_id);
	case E_CAT: return value_strid(r, ip, &e->cat_str);
	case E_PID: return small_int(d, i, len, &e->pid, ip) ? P_OK : value_id(r, ip, &e->pid);
	case E_TID: return small_int(d, i, len, &e->tid, ip) ? P_OK : value_id(r, ip, &e->tid);
	case E_DUR:
		rc = value_ns(r, ip, &e->dur_ns);
		a->bad_dur = rc == P_OK && e->dur_ns == TS_NONE;
		return rc;
	case E_NAME: return value_strid(r, ip, &e->name);
	case E_ARGS: return parse_args(r, ip, e, a);
	default: return skip_member(r, ip);
	}
}

/*
 * Parse the event object at d[*ip] == '{' into e and a. A key that
 * ekey_word matched moves the position by a constant of its case: the
 * value's position then hangs on a predicted branch, where taking the
 * length from the key table put a load and the table's hash on the chain
 * from one member to the next (the parse is bound by that chain, not by
 * its instruction count: docs/benchmarks.md).
 */
static int parse_event(struct rd *r, size_t *ip, struct ts_trace_event *e,
		       struct evargs *a)
{
	size_t i = *ip, adv;
	struct strv v;

	ts_trace_event_init(e);
	evargs_init(a);
	r->repaired = 0;
	r->raw_strid = 0;
	OBJ_LOOP_BEGIN(r, i)
	int kind = ekey_word(d_, i, len_);
#define EKEY(k) case k: i += EKEY_LEN(k); vrc = event_value(r, &i, k, e, a); break
	switch (kind) {
	EKEY(E_PH); EKEY(E_TS); EKEY(E_ID); EKEY(E_CAT); EKEY(E_PID); EKEY(E_TID);
	EKEY(E_DUR); EKEY(E_NAME); EKEY(E_ARGS);
#undef EKEY
	default:
		if ((kind = event_key_word(d_, i, len_, &adv)) >= 0) {
			i += adv;
			if (i + 1 < len_ && d_[i] == ' ' && d_[i + 1] > ' ') {
				i++;   /* `"key": value`, as writers put it */
			} else {
				i = skip_ws(d_, i, len_);
				if (i >= len_)
					return end_or_need(r);
			}
		} else {
			vrc = member_key(r, &i, &v);
			if (vrc)
				return vrc;
			kind = event_key(v.s, v.n);
		}
		vrc = event_value(r, &i, kind, e, a);
		break;
	}
	OBJ_LOOP_END(r, i)
	*ip = i;
	return P_OK;
}

static uint8_t cat_for(struct rd *r, uint32_t id)
{
	if (id >= r->catmap.n) {
		size_t need = r->t->strings.count;
		if (TS_VEC_RESERVE(r->catmap, need))
			return TS_CAT_OTHER;
		memset(r->catmap.v + r->catmap.n, 0, need - r->catmap.n);
		r->catmap.n = need;
	}
	if (!r->catmap.v[id]) {
		const char *s = ts_intern_str(&r->t->strings, id);
		r->catmap.v[id] = (uint8_t)(ts_cat_of(s, ts_intern_len(&r->t->strings, id)) + 1);
	}
	return (uint8_t)(r->catmap.v[id] - 1);
}

static int is_memory_name(const struct rd *r, uint32_t id)
{
	return id != TS_NO_ID && ts_intern_len(&r->t->strings, id) == 8 &&
	       memcmp(ts_intern_str(&r->t->strings, id), "[memory]", 8) == 0;
}

static int64_t line_of(struct rd *r, uint64_t off);

/* Classify and store one parsed event with its side-table rows. */
static int commit_event(struct rd *r, struct ts_trace_event *e, const struct evargs *a,
			uint64_t at)
{
	struct ts_trace *t = r->t;
	int64_t idx;
	uint8_t cat;

	if (e->cat_str != TS_NO_ID)
		cat = cat_for(r, e->cat_str);
	else if (t->meta.legacy && e->ph == 'X')
		cat = TS_CAT_CPU_OP;
	else if (e->ph == 'i' && is_memory_name(r, e->name))
		cat = TS_CAT_INSTANT;
	else
		cat = TS_CAT_OTHER;
	if (e->ph == 's' || e->ph == 'f' || e->ph == 't')
		cat = TS_CAT_FLOW;
	else
		e->flow_id = TS_NONE;
	e->cat = (enum ts_cat)cat;
	/* unusable times: counted (and refused in strict mode) */
	if (a->bad_ts || a->bad_dur || (e->ph == 'X' && e->dur_ns != TS_NONE && e->dur_ns < 0)) {
		if (r->strict)
			return ts_err_at(r->err, TS_EPARSE, r->src.path, (int64_t)at, line_of(r, at),
					 "event with an unusable %s (NaN, Infinity, beyond 2^63 ns or "
					 "negative; rejected in strict mode, else ignored and counted)",
					 a->bad_ts ? "ts" : "dur");
		t->meta.bad_ts += a->bad_ts;
		t->meta.bad_dur += a->bad_dur;
		if (!a->bad_dur && e->ph == 'X' && e->dur_ns < 0)
			t->meta.negative_dur++;
	} else if (e->ph == 'X' && e->dur_ns == TS_NONE) {
		t->meta.missing_dur++;
	}
	if (r->o && ((cat == TS_CAT_PYTHON && r->o->skip_python) ||
		     (cat == TS_CAT_FLOW && r->o->skip_flows))) {
		t->meta.skipped++;
		return 0;
	}
	if ((r->pf.started || r->pf.sync) && t->ev.n >= r->pf.cap)
		pf_stop(r);   /* the columns are about to move */
	if (r->pf.sync && t->ev.n >= r->pf.done)
		pf_populate(&r->pf, &r->pf.done, t->ev.n + PF_LEAD);
	idx = ts_trace_push_event(t, e);
	if (idx < 0)
		return (int)idx;
	if (r->pf.started && ((size_t)idx & PF_PUBLISH_MASK) == 0)
		atomic_store_explicit(&r->pf.parsed, (size_t)idx, memory_order_relaxed);
	r->ncat[cat]++;
	if (r->repaired) {
		if (!t->meta.recovered)
			t->meta.first_recovery_at = at;
		t->meta.recovered++;
	}
	if (a->has_coll) {
		struct ts_trace_coll c = {
			.ev = (uint32_t)idx, .coll_name = a->coll_name, .pg_name = a->pg_name,
			.pg_desc = a->pg_desc, .dtype = a->dtype, .seq = a->seq,
			.in_nelems = a->in_nelems, .out_nelems = a->out_nelems,
			.group_size = a->group_size >= INT32_MIN && a->group_size <= INT32_MAX ?
				(int32_t)a->group_size : -1,
			.comms_id = a->comms_id,
		};
		if (TS_VEC_PUSH(t->coll, c))
			return TS_ENOMEM;
	}
	if (a->has_bytes && (cat == TS_CAT_MEMCPY || cat == TS_CAT_MEMSET)) {
		struct ts_trace_xfer x = { .ev = (uint32_t)idx, .bytes = a->bytes };
		if (TS_VEC_PUSH(t->xfer, x))
			return TS_ENOMEM;
	}
	if (a->has_mem && (cat == TS_CAT_INSTANT || e->ph == 'i')) {
		struct ts_trace_mem m = {
			.ev = (uint32_t)idx, .bytes = a->mem_bytes,
			.total_allocated = a->total_alloc, .total_reserved = a->total_resv,
			.device_type = (int32_t)a->dev_type, .device_id = (int32_t)a->dev_id,
		};
		if (TS_VEC_PUSH(t->mem, m))
			return TS_ENOMEM;
	}
	if (a->has_flops) {
		struct ts_trace_flops f = { .ev = (uint32_t)idx, .flops = a->flops };
		if (TS_VEC_PUSH(t->flops, f))
			return TS_ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------ error helpers */

static int64_t line_of(struct rd *r, uint64_t off)
{
	return trace_src_line_of(&r->src, off);
}

static int parse_error(struct rd *r)
{
	uint64_t off = abs_off(r, r->bad_at);
	char found[24];
	unsigned char c = r->bad_at < r->len ? r->d[r->bad_at] : 0;

	if (r->bad_at >= r->len)
		snprintf(found, sizeof(found), "end of input");
	else if (c >= 0x21 && c < 0x7f)
		snprintf(found, sizeof(found), "'%c'", c);
	else
		snprintf(found, sizeof(found), "byte 0x%02x", c);
	return ts_err_at(r->err, TS_EPARSE, r->src.path, (int64_t)off, line_of(r, off),
			 "%s, found %s", r->bad_what, found);
}

/*
 * After a recoverable error inside the event that starts at *ip, find the
 * start of the next event ("}" ws "," ws "{" ws '"') or the end of the
 * array ("}" ws "]"), searching from the error. Returns P_OK with *ip at
 * the '{' or ']', P_TRUNC at the end of input, or a negative code.
 */
static int resync(struct rd *r, size_t *ip)
{
	size_t i = r->bad_at;

	for (;;) {
		const unsigned char *d = r->d;
		size_t len = r->len;
		const unsigned char *p = i < len ? memchr(d + i, '}', len - i) : NULL;
		if (p) {
			size_t k = (size_t)(p - d);
			size_t j = skip_ws(d, k + 1, len);
			if (j < len && d[j] == ']') {
				*ip = j;
				return P_OK;
			}
			if (j < len && d[j] == ',') {
				j = skip_ws(d, j + 1, len);
				if (j < len && d[j] == '{') {
					size_t q = skip_ws(d, j + 1, len);
					if (q < len && d[q] == '"') {
						*ip = j;
						return P_OK;
					}
					if (q >= len)
						j = len;   /* its '"' may follow: refill */
				}
			}
			if (j < len) {
				i = k + 1;
				continue;
			}
			/* the candidate runs off the window: refill from it */
			i = k;
		} else {
			i = len;
		}
		if (r->eof)
			return P_TRUNC;
		int rc = refill(r, i);
		if (rc < 0)
			return rc;
		i = 0;
		if (r->eof && r->len == 0)
			return P_TRUNC;
	}
}

/* ------------------------------------------------------ split parse */

/*
 * One file's event array on two cores (plain files, plain memory and
 * gzip, whose chunks are the inflated buffers: split_fetch()).
 * The input is cut into chunks of about `chunk` bytes by offset
 * (chunk_at); a helper thread takes the odd chunks, the reader itself
 * parses everything else
 * as before. The helper does not know whether a chunk starts inside a
 * string, so it starts at a candidate event start (the resync pattern
 * "}" ws "," ws "{" ws '"' after the chunk's first byte) and parses
 * speculatively into a batch: a trace of its own with its own string ids,
 * stopping after the last event that starts in the chunk, at the end of
 * the array, and before anything that is not a clean event (an error,
 * a repair, an unusable ts/dur, the end of input, a limit). The reader
 * uses a batch only when its own serial parse arrives at an event that
 * starts exactly at the candidate: then the bytes from there are events
 * the serial parse would read the same way, so it appends the batch
 * (strings interned in the batch's first-appearance order, ids remapped),
 * moves its window to the end of the batch's last event and carries on
 * serially. Passing the candidate anywhere else (it was inside a string
 * or a metadata value) discards the batch. The result is the serial
 * result, byte for byte.
 */
enum { SL_EMPTY, SL_BUSY, SL_DONE };
#define CAND_UNKNOWN UINT64_MAX
#define CAND_NONE (UINT64_MAX - 1)
/* the helper's batches ahead of the reader: with two it waited behind a
 * reader slowed by an append or a column move and left the reader waiting
 * in turn (1 GB plain trace, 11 alternated rounds: read 0.422 -> 0.403 s
 * median; gzip unchanged) */
#define NSLOT 4

/* gzip: bytes of the next chunk the helper copies for its chunk's last
 * event (events are a few hundred bytes; a longer one ends the batch) */
static size_t split_gz_tail(size_t chunk)
{
	return chunk < ((size_t)256 << 10) ? chunk : (size_t)256 << 10;
}

struct split_slot {
	int state;                /* SL_*, under the mutex */
	uint64_t k;               /* chunk index */
	uint64_t cand;            /* first event's offset, CAND_* */
	atomic_int cancel;        /* the reader is past it: stop */
	struct ts_trace b;        /* the batch */
	struct rd w;              /* the helper's parser state for it */
	struct ts_err err;
	size_t nstr;              /* strings interned up to the last event kept */
	uint64_t end;             /* offset after the last kept event's '}' */
	int ok;                   /* at least one event, no failure */
	int input_end;            /* gzip: the stream ended before this chunk */
	unsigned char *copy;      /* gzip: the chunk and the next one's head */
};

struct split {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct split_slot slot[NSLOT];
	size_t chunk;
	uint64_t size;            /* input bytes */
	int legacy;
	int patient;              /* tests: the reader waits for every odd chunk */
	int stop;
	int helper_done;          /* the helper has left its loop (takes no more chunks) */
	uint64_t next_claim;      /* next odd chunk the helper takes */
	uint64_t mk;              /* the chunk the reader expects next */
	uint64_t next_check;      /* the reader looks at the helper from here */
	struct trace_src src;     /* the helper's reads (one chunk at a time) */
	const struct trace_src *gz;  /* gzip: the reader's source, whose
				      * inflated buffers are the chunks */
	TS_VEC(uint32_t) remap;
	struct trace_split_stats stats;
};

/*
 * The offset where chunk k starts. The reader also appends the helper's
 * batches and populates the column pages, so with chunks of one size it
 * finished last: a plain input's even (reader) chunks are a sixteenth
 * shorter than `chunk` and its odd (helper) chunks a sixteenth longer
 * (1 GB trace, 11 rounds: read 0.460 -> 0.424 s wall; an eighth 0.439, a
 * thirty-second 0.430, a quarter no better than none). gzip's chunks are
 * its inflated buffers, all of one size.
 */
static uint64_t chunk_at(const struct split *sp, uint64_t k)
{
	uint64_t c = sp->chunk;

	if (sp->gz)
		return k * c;
	return k / 2 * 2 * c + (k & 1) * (c - c / 16);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * The helper's window for chunk s->k from offset from: plain inputs read
 * it with pread(); gzip copies the inflated buffer of that chunk and the
 * head of the next (for the chunk's last event), since the ring reuses
 * its buffers as the reader moves on. An event that runs past that head
 * ends the batch early; the reader parses it. Returns 0 or -1 (no window:
 * an error, the stream ended, or the reader is past the chunk).
 */
static int split_fetch(struct split *sp, struct split_slot *s, uint64_t from)
{
	struct rd *w = &s->w;
	size_t n = 0, m = 0;
	int last = 0, rc;

	if (!sp->gz) {
		if (trace_src_seek(&w->src, from, w->err) || refill(w, 0) < 0)
			return -1;
		return 0;
	}
	rc = trace_src_copy_chunk(sp->gz, s->k, sp->chunk, s->copy, &n, &last, &s->cancel);
	if (rc == 0)
		s->input_end = 1;
	if (rc != 1)
		return -1;
	if (!last &&
	    trace_src_copy_chunk(sp->gz, s->k + 1, split_gz_tail(sp->chunk), s->copy + n, &m,
				 &last, &s->cancel) < 0)
		return -1;
	trace_src_open_view(&w->src, s->copy, n + m, from, sp->gz->path);
	win_sync(w);
	return 0;
}

/* The helper's parse of chunk s->k into s->b. */
static void split_chunk(struct split *sp, struct split_slot *s)
{
	struct rd *w = &s->w;
	struct ts_trace_event e;
	struct evargs a;
	uint64_t from = chunk_at(sp, s->k), to = chunk_at(sp, s->k + 1);
	size_t i = 0, start;
	int rc;

	trace_batch_clear(&s->b);
	s->b.meta.legacy = sp->legacy;
	w->catmap.n = 0;
	memset(w->sc, 0, sizeof(*w->sc));
	memset(w->ncat, 0, sizeof(w->ncat));
	s->ok = 0;
	s->nstr = 0;
	s->end = 0;
	s->input_end = 0;
	uint64_t cand = CAND_NONE;
	if (split_fetch(sp, s, from) < 0)
		goto publish;
	w->bad_at = 0;
	for (;;) {
		rc = resync(w, &i);
		if (rc != P_OK || w->d[i] == '{')
			break;
		w->bad_at = i + 1;   /* "}" "]": look further */
	}
	if (rc == P_OK && abs_off(w, i) < to)
		cand = abs_off(w, i);
publish:
	pthread_mutex_lock(&sp->mu);
	s->cand = cand;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
	if (cand == CAND_NONE)
		return;
	for (;;) {
		if (atomic_load_explicit(&s->cancel, memory_order_relaxed))
			return;
		start = i;
		rc = parse_event(w, &i, &e, &a);
		if (rc == P_NEED) {
			if (refill(w, start) < 0)
				return;
			i = 0;
			continue;
		}
		if (rc != P_OK || w->repaired || w->raw_strid || a.bad_ts || a.bad_dur ||
		    (e.ph == 'X' && (e.dur_ns == TS_NONE || e.dur_ns < 0)))
			return;   /* the reader parses this one itself */
		if (commit_event(w, &e, &a, abs_off(w, start))) {
			s->ok = 0;
			return;
		}
		s->nstr = s->b.strings.count;
		s->end = abs_off(w, i);
		s->ok = 1;
		/* "," and the next event's '{', refilling */
		for (int sep = 0; sep < 2; sep++) {
			for (;;) {
				i = skip_ws(w->d, i, w->len);
				if (i < w->len || w->eof)
					break;
				if (refill(w, i) < 0)
					return;
				i = 0;
			}
			if (i >= w->len || w->d[i] != (sep ? '{' : ','))
				return;
			if (!sep)
				i++;
		}
		if (abs_off(w, i) >= to)
			return;
	}
}

static void *split_main(void *arg)
{
	struct split *sp = arg;

	pthread_mutex_lock(&sp->mu);
	for (;;) {
		struct split_slot *s = NULL;
		while (!sp->stop) {
			for (int k = 0; k < NSLOT && !s; k++)
				if (sp->slot[k].state == SL_EMPTY)
					s = &sp->slot[k];
			if (s)
				break;
			pthread_cond_wait(&sp->cv, &sp->mu);
		}
		if (sp->stop || chunk_at(sp, sp->next_claim) >= sp->size)
			break;
		/* behind the reader: jump to the chunk after the one it expects */
		if (!sp->patient && sp->next_claim <= sp->mk)
			sp->next_claim = sp->mk + 2;
		if (chunk_at(sp, sp->next_claim) >= sp->size)
			break;
		s->k = sp->next_claim;
		sp->next_claim += 2;
		s->state = SL_BUSY;
		s->cand = CAND_UNKNOWN;
		atomic_store(&s->cancel, 0);
		sp->stats.chunks++;
		pthread_mutex_unlock(&sp->mu);
		double t0 = thread_cpu_s();
		s->w.src = sp->src;
		split_chunk(sp, s);
		sp->src = s->w.src;
		memset(&s->w.src, 0, sizeof(s->w.src));
		pthread_mutex_lock(&sp->mu);
		sp->stats.helper_s += thread_cpu_s() - t0;
		if (s->cand == CAND_UNKNOWN)
			s->cand = CAND_NONE;
		if (s->input_end && sp->size > chunk_at(sp, s->k))
			sp->size = chunk_at(sp, s->k);   /* no chunk from here on */
		s->state = atomic_load(&s->cancel) ? SL_EMPTY : SL_DONE;
		pthread_cond_broadcast(&sp->cv);
	}
	sp->helper_done = 1;   /* a patient reader stops waiting for a claim */
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
	return NULL;
}

static void split_free(struct split *sp)
{
	for (int k = 0; k < NSLOT; k++) {
		struct split_slot *s = &sp->slot[k];
		ts_trace_release(&s->b);
		free(s->copy);
		free(s->w.sc);
		ts_sb_release(&s->w.sb);
		TS_VEC_RELEASE(s->w.catmap);
	}
	trace_src_release(&sp->src);
	TS_VEC_RELEASE(sp->remap);
	free(sp);
}

/* Start the helper for the array the reader is about to parse (first
 * array only: the helper covers the whole input). */
static void split_start(struct rd *r)
{
	struct split *sp;

	int gz = trace_src_chunk(&r->src) != 0;

	if (r->sp || !r->split_chunk || !(gz || trace_src_can_seek(&r->src)))
		return;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return;
	sp->chunk = r->split_chunk;
	sp->patient = r->split_patient;
	/* gzip: the inflated size is known at the stream's end only */
	sp->size = gz ? UINT64_MAX : r->src.mem ? r->src.mem_len : r->src.size_hint;
	sp->gz = gz ? &r->src : NULL;
	sp->legacy = r->t->meta.legacy;
	sp->next_claim = 1;
	sp->mk = 1;
	sp->next_check = chunk_at(sp, 1);
	for (int k = 0; k < NSLOT; k++) {
		struct split_slot *s = &sp->slot[k];
		struct rd *w = &s->w;
		ts_trace_init(&s->b);
		atomic_init(&s->cancel, 0);
		s->k = UINT64_MAX;
		w->t = &s->b;
		w->o = r->o;
		w->strict = r->strict;
		w->err = &s->err;
		ts_sb_init(&w->sb);
		w->sc = calloc(1, sizeof(*w->sc));
		if (gz)
			s->copy = malloc(sp->chunk + split_gz_tail(sp->chunk));
		if (!w->sc || (gz && !s->copy)) {
			split_free(sp);
			return;
		}
	}
	if (!gz && trace_src_clone(&sp->src, &r->src, 0, &sp->slot[0].err)) {
		split_free(sp);
		return;
	}
	pthread_mutex_init(&sp->mu, NULL);
	pthread_cond_init(&sp->cv, NULL);
	if (pthread_create(&sp->th, NULL, split_main, sp) != 0) {
		pthread_mutex_destroy(&sp->mu);
		pthread_cond_destroy(&sp->cv);
		split_free(sp);
		return;
	}
	r->sp = sp;
}

static void split_stop(struct rd *r)
{
	struct split *sp = r->sp;

	if (!sp)
		return;
	pthread_mutex_lock(&sp->mu);
	sp->stop = 1;
	for (int k = 0; k < NSLOT; k++)
		atomic_store(&sp->slot[k].cancel, 1);
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
	if (sp->gz)
		trace_src_wake(sp->gz);
	pthread_join(sp->th, NULL);
	pthread_mutex_destroy(&sp->mu);
	pthread_cond_destroy(&sp->cv);
	if (r->split_stats)
		*r->split_stats = sp->stats;
	split_free(sp);
	r->sp = NULL;
}

/* Append a finished batch; 1 when it cannot be (the reader parses its
 * bytes itself and meets the same condition), else 0 or a negative code. */
static int split_take(struct rd *r, struct split_slot *s)
{
	struct split *sp = r->sp;
	struct ts_trace *t = r->t;
	const struct ts_intern *bs = &s->b.strings;
	int rc;

	/* room first: a refusal must leave the strings untouched */
	if (t->ev.n + s->b.ev.n > t->ev.cap) {
		int was = t->over_budget;
		if ((r->pf.started || r->pf.sync))
			pf_stop(r);   /* the columns are about to move */
		if (ts_trace_reserve(t, t->ev.n + s->b.ev.n)) {
			t->over_budget = was;
			return 1;
		}
	}
	if (TS_VEC_RESERVE(sp->remap, s->nstr ? s->nstr : 1))
		return TS_ENOMEM;
	for (size_t id = 0; id < s->nstr; id++) {
		int64_t x = ts_intern(&t->strings, bs->strs[id], bs->lens[id]);
		if (x < 0)
			return (int)x;
		sp->remap.v[id] = (uint32_t)x;
	}
	for (size_t id = 0; id < s->nstr && id < s->w.catmap.n; id++)
		if (s->w.catmap.v[id])
			(void)cat_for(r, sp->remap.v[id]);
	if ((rc = trace_append_batch(t, &s->b, sp->remap.v)))
		return rc;
	for (int c = 0; c < TS_CAT_COUNT; c++)
		r->ncat[c] += s->w.ncat[c];
	t->meta.skipped += s->b.meta.skipped;
	if (r->pf.started)
		atomic_store_explicit(&r->pf.parsed, t->ev.n, memory_order_relaxed);
	sp->stats.handed++;
	sp->stats.events += s->b.ev.n;
	return 0;
}

static struct split_slot *split_head(struct split *sp)
{
	for (int k = 0; k < NSLOT; k++)
		if (sp->slot[k].state != SL_EMPTY && sp->slot[k].k == sp->mk)
			return &sp->slot[k];
	return NULL;
}

/* The reader's next event starts at d[i], at or past sp->next_check.
 * Returns 1 when a batch was appended (the window then starts after its
 * last event, before the separator), 0 to parse on, or a negative code. */
static int split_at(struct rd *r, size_t i)
{
	struct split *sp = r->sp;
	uint64_t at = abs_off(r, i);
	struct split_slot *s;
	int rc;
	double t0 = mono_s();

	pthread_mutex_lock(&sp->mu);
	while (at >= sp->next_check) {
		s = split_head(sp);
		while (!s && sp->patient && !sp->helper_done && sp->next_claim <= sp->mk) {
			pthread_cond_wait(&sp->cv, &sp->mu);
			s = split_head(sp);
		}
		if (!s) {
			/* not taken yet: the reader parses that chunk itself */
			if (sp->next_claim == sp->mk)
				sp->next_claim += 2;
			sp->mk += 2;
			sp->next_check = chunk_at(sp, sp->mk);
			continue;
		}
		while (s->cand == CAND_UNKNOWN)
			pthread_cond_wait(&sp->cv, &sp->mu);
		if (at < s->cand && s->cand != CAND_NONE) {
			sp->next_check = s->cand;
			break;
		}
		if (at == s->cand) {
			while (s->state != SL_DONE)
				pthread_cond_wait(&sp->cv, &sp->mu);
			sp->stats.wait_s += mono_s() - t0;
			pthread_mutex_unlock(&sp->mu);
			rc = s->ok ? split_take(r, s) : 1;
			uint64_t end = s->end;
			pthread_mutex_lock(&sp->mu);
			s->state = SL_EMPTY;
			s->k = UINT64_MAX;
			sp->mk += 2;
			sp->next_check = chunk_at(sp, sp->mk);
			pthread_cond_broadcast(&sp->cv);
			pthread_mutex_unlock(&sp->mu);
			if (rc)
				return rc < 0 ? rc : 0;
			rc = sp->gz ? trace_src_skip(&r->src, end, r->err) :
				trace_src_seek(&r->src, end, r->err);
			if (rc)
				return rc;
			win_sync(r);
			return 1;
		}
		/* passed it (or none): discard */
		atomic_store(&s->cancel, 1);
		if (sp->gz)
			trace_src_wake(sp->gz);
		if (s->state == SL_DONE) {
			s->state = SL_EMPTY;
			s->k = UINT64_MAX;
		}
		sp->mk += 2;
		sp->next_check = chunk_at(sp, sp->mk);
		pthread_cond_broadcast(&sp->cv);
	}
	sp->stats.wait_s += mono_s() - t0;
	pthread_mutex_unlock(&sp->mu);
	return 0;
}

/* ------------------------------------------------------ metadata */

static int meta_json_error(struct rd *r, size_t start, const struct ts_err *je)
{
	uint64_t off = abs_off(r, start) + (uint64_t)(je->offset > 0 ? je->offset : 0);

	return ts_err_at(r->err, TS_EPARSE, r->src.path, (int64_t)off, line_of(r, off),
			 "%s", je->msg);
}

/* Text of the current token (string or number) interned; TS_NO_ID else. */
static uint32_t tok_strid(struct rd *r, struct ts_json *j, int tok)
{
	int64_t id;

	if (tok == TS_JSON_STR) {
		ts_sb_reset(&r->sb);
		if (ts_json_unescape(j->s, j->n, 1, &r->sb) || r->sb.failed)
			return TS_NO_ID;
		id = ts_intern(&r->t->strings, r->sb.buf, r->sb.len);
	} else if (tok == TS_JSON_NUM) {
		id = ts_intern(&r->t->strings, j->s, j->n);
	} else {
		return TS_NO_ID;
	}
	return id < 0 ? TS_NO_ID : (uint32_t)id;
}

/* The text of the KEY or STR token j holds, escapes decoded: j's own
 * bytes without escapes, else r->sb's until its next use (NULL when out of
 * memory). */
static const char *tok_text(struct rd *r, const struct ts_json *j, size_t *n)
{
	if (!j->escaped) {
		*n = j->n;
		return j->s;
	}
	ts_sb_reset(&r->sb);
	if (ts_json_unescape(j->s, j->n, 1, &r->sb) || r->sb.failed)
		return NULL;
	*n = r->sb.len;
	return r->sb.buf;
}

static int64_t tok_int(struct rd *r, struct ts_json *j, int tok, int64_t dflt)
{
	const char *s = j->s;
	size_t n = j->n;
	int64_t x;

	if (tok == TS_JSON_STR && !(s = tok_text(r, j, &n)))
		return dflt;
	if ((tok == TS_JSON_NUM || tok == TS_JSON_STR) && num_int(s, n, &x) == 0)
		return x;
	return dflt;
}

/* The key token j holds (decoded by the tokenizer) as a C string in
 * key[size]; a longer key is cut (no key the reader looks for is that
 * long). */
static void meta_key(const struct ts_json *j, char *key, size_t size)
{
	size_t n = j->n < size - 1 ? j->n : size - 1;

	memcpy(key, j->s, n);
	key[n] = '\0';
}

/*
 * A member value where a scalar is read: a container is skipped whole (its
 * tokens read as members would run the member loop past the value's end).
 * Returns 1 when tok opened a container (*rc: the skip's result), else 0.
 * The member loops also stop at TS_JSON_EOF, which the tokenizer gives
 * only once the whole value is read.
 */
static int skip_container(struct ts_json *j, int tok, struct ts_err *je, int *rc)
{
	if (tok != TS_JSON_OBJ && tok != TS_JSON_ARR)
		return 0;
	*rc = ts_json_skip(j, tok, je);
	return 1;
}

/* Parse the deviceProperties / computeProperties array. */
static int meta_devices(struct rd *r, struct ts_json *j, struct ts_err *je)
{
	TS_VEC(struct ts_trace_device) devs = { 0 };
	int tok = ts_json_next(j, je), rc = 0;

	if (tok != TS_JSON_ARR)
		return tok < 0 ? tok : ts_json_skip(j, tok, je);
	for (;;) {
		tok = ts_json_next(j, je);
		if (tok <= TS_JSON_EOF || tok == TS_JSON_ARR_END) {
			rc = tok < 0 ? tok : 0;
			break;
		}
		if (tok != TS_JSON_OBJ) {
			rc = ts_json_skip(j, tok, je);
			if (rc)
				break;
			continue;
		}
		struct ts_trace_device dv = { .id = -1, .name = TS_NO_ID, .total_mem_bytes = -1,
					      .compute_major = -1, .compute_minor = -1, .num_sms = -1 };
		for (;;) {
			tok = ts_json_next(j, je);
			if (tok <= TS_JSON_EOF || tok == TS_JSON_OBJ_END)
				break;
			char key[32];
			meta_key(j, key, sizeof(key));
			tok = ts_json_next(j, je);
			if (tok < 0)
				break;
			if (skip_container(j, tok, je, &rc)) {
				if (rc)
					break;
				continue;
			}
			if (!strcmp(key, "id"))
				dv.id = (int32_t)tok_int(r, j, tok, -1);
			else if (!strcmp(key, "name"))
				dv.name = tok_strid(r, j, tok);
			else if (!strcmp(key, "totalGlobalMem"))
				dv.total_mem_bytes = tok_int(r, j, tok, -1);
			else if (!strcmp(key, "computeMajor") || !strcmp(key, "major"))
				dv.compute_major = (int32_t)tok_int(r, j, tok, -1);
			else if (!strcmp(key, "computeMinor") || !strcmp(key, "minor"))
				dv.compute_minor = (int32_t)tok_int(r, j, tok, -1);
			else if (!strcmp(key, "numSms") || !strcmp(key, "multiProcessorCount"))
				dv.num_sms = (int32_t)tok_int(r, j, tok, -1);
			else if ((rc = ts_json_skip(j, tok, je)))
				break;
		}
		if (tok < 0 || rc) {
			rc = tok < 0 ? tok : rc;
			break;
		}
		if (TS_VEC_PUSH(devs, dv)) {
			rc = TS_ENOMEM;
			break;
		}
	}
	if (!rc && devs.n) {
		struct ts_trace_device *p = ts_arena_alloc(&r->t->arena,
							  (r->t->meta.ndevices + devs.n) * sizeof(*p));
		if (!p) {
			rc = TS_ENOMEM;
		} else {
			if (r->t->meta.ndevices)
				memcpy(p, r->t->meta.devices, r->t->meta.ndevices * sizeof(*p));
			memcpy(p + r->t->meta.ndevices, devs.v, devs.n * sizeof(*p));
			r->t->meta.devices = p;
			r->t->meta.ndevices += devs.n;
		}
	}
	TS_VEC_RELEASE(devs);
	return rc;
}

static int meta_pg(struct rd *r, struct ts_json *j, struct ts_err *je,
		   struct ts_trace_pg *pg)
{
	TS_VEC(int32_t) ranks = { 0 };
	int tok, rc = 0;

	pg->name = pg->desc = pg->backend = TS_NO_ID;
	pg->size = -1;
	pg->ranks = NULL;
	for (;;) {
		tok = ts_json_next(j, je);
		if (tok <= TS_JSON_EOF || tok == TS_JSON_OBJ_END)
			break;
		char key[32];
		meta_key(j, key, sizeof(key));
		tok = ts_json_next(j, je);
		if (tok < 0)
			break;
		if (!(tok == TS_JSON_ARR && !strcmp(key, "ranks")) && skip_container(j, tok, je, &rc)) {
			if (rc)
				break;
			continue;
		}
		if (!strcmp(key, "pg_name"))
			pg->name = tok_strid(r, j, tok);
		else if (!strcmp(key, "pg_desc"))
			pg->desc = tok_strid(r, j, tok);
		else if (!strcmp(key, "backend_config"))
			pg->backend = tok_strid(r, j, tok);
		else if (!strcmp(key, "pg_size"))
			pg->size = (int32_t)tok_int(r, j, tok, -1);
		else if (!strcmp(key, "ranks") && tok == TS_JSON_ARR) {
			for (;;) {
				tok = ts_json_next(j, je);
				if (tok <= TS_JSON_EOF || tok == TS_JSON_ARR_END)
					break;
				if (tok != TS_JSON_NUM) {
					if ((rc = ts_json_skip(j, tok, je)))
						break;
					continue;
				}
				if (TS_VEC_PUSH(ranks, (int32_t)tok_int(r, j, tok, -1))) {
					rc = TS_ENOMEM;
					break;
				}
			}
			if (tok < 0 || rc)
				break;
		} else if ((rc = ts_json_skip(j, tok, je)))
			break;
	}
	if (tok < 0)
		rc = tok;
	/* size comes from pg_size, else from the list; ranks has size entries
	 * (-1 where the list is shorter), NULL when the file lists none */
	if (pg->size < 0 || pg->size > (1 << 24))
		pg->size = (int32_t)ranks.n;
	if (!rc && ranks.n && pg->size > 0) {
		pg->ranks = ts_arena_alloc(&r->t->arena, (size_t)pg->size * sizeof(int32_t));
		if (!pg->ranks) {
			rc = TS_ENOMEM;
		} else {
			for (int32_t k = 0; k < pg->size; k++)
				pg->ranks[k] = (size_t)k < ranks.n ? ranks.v[k] : -1;
		}
	}
	TS_VEC_RELEASE(ranks);
	return rc;
}

static int meta_dist(struct rd *r, struct ts_json *j, struct ts_err *je)
{
	TS_VEC(struct ts_trace_pg) pgs = { 0 };
	struct ts_trace_meta *m = &r->t->meta;
	int tok = ts_json_next(j, je), rc = 0;

	if (tok != TS_JSON_OBJ)
		return tok < 0 ? tok : ts_json_skip(j, tok, je);
	for (;;) {
		tok = ts_json_next(j, je);
		if (tok <= TS_JSON_EOF || tok == TS_JSON_OBJ_END)
			break;
		char key[32];
		meta_key(j, key, sizeof(key));
		tok = ts_json_next(j, je);
		if (tok < 0)
			break;
		if (!(tok == TS_JSON_ARR && !strcmp(key, "pg_config")) && skip_container(j, tok, je, &rc)) {
			if (rc)
				break;
			continue;
		}
		if (!strcmp(key, "rank")) {
			int64_t x = tok_int(r, j, tok, -1);
			if (x >= 0) {
				m->rank = x;
				m->rank_source = 1;
			}
		} else if (!strcmp(key, "world_size")) {
			m->world_size = tok_int(r, j, tok, -1);
		} else if (!strcmp(key, "local_rank")) {
			m->local_rank = tok_int(r, j, tok, -1);
		} else if (!strcmp(key, "backend")) {
			m->backend = tok_strid(r, j, tok);
		} else if (!strcmp(key, "nccl_version") && (tok == TS_JSON_STR || tok == TS_JSON_NUM)) {
			m->nccl_version = tok_strid(r, j, tok);
		} else if (!strcmp(key, "pg_config") && tok == TS_JSON_ARR) {
			for (;;) {
				tok = ts_json_next(j, je);
				if (tok <= TS_JSON_EOF || tok == TS_JSON_ARR_END)
					break;
				if (tok != TS_JSON_OBJ) {
					if ((rc = ts_json_skip(j, tok, je)))
						break;
					continue;
				}
				struct ts_trace_pg pg;
				if ((rc = meta_pg(r, j, je, &pg)))
					break;
				if (TS_VEC_PUSH(pgs, pg)) {
					rc = TS_ENOMEM;
					break;
				}
			}
			if (tok < 0 || rc)
				break;
		} else if ((rc = ts_json_skip(j, tok, je))) {
			break;
		}
	}
	if (tok < 0)
		rc = tok;
	if (!rc && pgs.n) {
		struct ts_trace_pg *p = ts_arena_alloc(&r->t->arena, pgs.n * sizeof(*p));
		if (!p) {
			rc = TS_ENOMEM;
		} else {
			memcpy(p, pgs.v, pgs.n * sizeof(*p));
			m->pgs = p;
			m->npgs = pgs.n;
		}
	}
	TS_VEC_RELEASE(pgs);
	return rc;
}

enum { M_SKIP, M_DEVICES, M_DIST, M_BASE, M_NAME, M_VER_CUDA, M_VER_MUSA,
       M_VER_ROCM, M_HINT_CUDA, M_HINT_MUSA, M_HINT_ROCM };
/* runtime / driver version keys: the kind, and which version they give */
enum { V_NONE, V_RUNTIME, V_DRIVER };

static int meta_kind(const char *s, size_t n)
{
	static const struct { const char *k; int kind; } keys[] = {
		{ "deviceProperties", M_DEVICES }, { "computeProperties", M_DEVICES },
		{ "distributedInfo", M_DIST }, { "baseTimeNanoseconds", M_BASE },
		{ "traceName", M_NAME },
		{ "cupti_version", M_VER_CUDA }, { "mupti_version", M_VER_MUSA },
		{ "roctracer_version", M_VER_ROCM },
		{ "cuda_runtime_version", M_HINT_CUDA }, { "cuda_driver_version", M_HINT_CUDA },
		{ "musa_runtime_version", M_HINT_MUSA }, { "musa_driver_version", M_HINT_MUSA },
		{ "hip_runtime_version", M_HINT_ROCM }, { "hip_driver_version", M_HINT_ROCM },
	};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (strlen(keys[k].k) == n && memcmp(keys[k].k, s, n) == 0)
			return keys[k].kind;
	return M_SKIP;
}

/* V_RUNTIME / V_DRIVER for a *_runtime_version / *_driver_version key. */
static int version_kind(const char *s, size_t n)
{
	if (n > 16 && memcmp(s + n - 16, "_runtime_version", 16) == 0)
		return V_RUNTIME;
	if (n > 15 && memcmp(s + n - 15, "_driver_version", 15) == 0)
		return V_DRIVER;
	return V_NONE;
}

/* Read the metadata value d[start..end) of top-level key `kind` (vk: the
 * runtime or driver version that key gives, V_NONE). */
static int meta_value(struct rd *r, int kind, int vk, size_t start, size_t end)
{
	struct ts_json j;
	struct ts_err je;
	struct ts_trace_meta *m = &r->t->meta;
	int rc = 0, tok;

	ts_err_init(&je);
	ts_json_init_mem(&j, r->d + start, end - start, TS_JSON_LENIENT | TS_JSON_ALLOW_NAN,
			 r->src.path);
	switch (kind) {
	case M_DEVICES:
		rc = meta_devices(r, &j, &je);
		break;
	case M_DIST:
		rc = meta_dist(r, &j, &je);
		break;
	case M_BASE:
		tok = ts_json_next(&j, &je);
		if (tok == TS_JSON_NUM || tok == TS_JSON_STR) {
			int64_t x;
			size_t n;
			const char *s = tok == TS_JSON_STR ? tok_text(r, &j, &n) : j.s;
			if (tok == TS_JSON_NUM)
				n = j.n;
			if (s && (ts_num_i64(s, n, &x) == 0 || ts_num_fixed(s, n, 0, &x) == 0)) {
				m->base_ns = x;
				m->has_base = 1;
			}
		}
		rc = tok < 0 ? tok : 0;
		break;
	case M_NAME:
		tok = ts_json_next(&j, &je);
		m->trace_name = tok_strid(r, &j, tok);
		rc = tok < 0 ? tok : 0;
		break;
	case M_VER_CUDA:
	case M_VER_MUSA:
	case M_VER_ROCM:
		tok = ts_json_next(&j, &je);
		m->profiler_version = tok_strid(r, &j, tok);
		r->hint_vendor = kind == M_VER_CUDA ? TS_VENDOR_CUDA :
			kind == M_VER_MUSA ? TS_VENDOR_MUSA : TS_VENDOR_ROCM;
		rc = tok < 0 ? tok : 0;
		break;
	case M_HINT_CUDA:
	case M_HINT_MUSA:
	case M_HINT_ROCM:
		if (kind == M_HINT_CUDA && !r->hint_vendor)
			r->hint_vendor = TS_VENDOR_CUDA;
		else if (kind == M_HINT_MUSA)
			r->hint_vendor = TS_VENDOR_MUSA;
		else if (kind == M_HINT_ROCM && r->hint_vendor != TS_VENDOR_MUSA)
			r->hint_vendor = TS_VENDOR_ROCM;
		tok = ts_json_next(&j, &je);
		if (tok == TS_JSON_NUM || tok == TS_JSON_STR) {
			uint32_t id = tok_strid(r, &j, tok);
			if (vk == V_RUNTIME)
				m->runtime_version = id;
			else if (vk == V_DRIVER)
				m->driver_version = id;
		}
		rc = tok < 0 ? tok : 0;
		break;
	}
	ts_json_release(&j);
	if (rc == TS_ENOMEM)
		return ts_err_set(r->err, TS_ENOMEM, "out of memory");
	if (rc < 0)
		return meta_json_error(r, start, &je);
	return 0;
}

/* ------------------------------------------------------ top level */

/* Parse the event array whose '[' is at d[*ip]. */
static int read_events(struct rd *r, size_t *ip)
{
	struct ts_trace_event e;
	struct evargs a;
	size_t i = *ip + 1, start;
	int rc;

	split_start(r);
	for (;;) {
		i = skip_ws(r->d, i, r->len);
		if (i >= r->len) {
			if (r->eof)
				return P_TRUNC;
			if ((rc = refill(r, i)) < 0)
				return rc;
			i = 0;
			continue;
		}
		if (r->d[i] == ']')
			break;
		if (r->sp && r->d[i] == '{' && abs_off(r, i) >= r->sp->next_check) {
			rc = split_at(r, i);
			if (rc < 0)
				return rc;
			if (rc == 1) {
				i = 0;   /* after the batch's last event */
				goto separator;
			}
		}
		/* one event */
		start = i;
		if (r->d[i] != '{')
			return bad(r, i, "expected an event object '{' in the event array", 0);
		rc = parse_event(r, &i, &e, &a);
		if (rc == P_NEED) {
			if ((rc = refill(r, start)) < 0)
				return rc;
			i = 0;
			continue;
		}
		if (rc < 0)
			return rc;
		if (rc == P_TRUNC)
			return P_TRUNC;
		if (rc == P_BAD) {
			if (r->strict || !r->bad_recoverable)
				return P_BAD;
			uint64_t at = abs_off(r, start);
			if (!r->t->meta.recovered)
				r->t->meta.first_recovery_at = at;
			r->t->meta.recovered++;
			rc = resync(r, &i);
			if (rc)
				return rc;
			if (r->d[i] == '{')
				continue;
			break; /* ']' */
		}
		if ((rc = commit_event(r, &e, &a, abs_off(r, start))))
			return rc;
separator:
		for (;;) {
			i = skip_ws(r->d, i, r->len);
			if (i < r->len || r->eof)
				break;
			if ((rc = refill(r, i)) < 0)
				return rc;
			i = 0;
		}
		if (i >= r->len)
			return P_TRUNC;
		if (r->d[i] == ',') {
			i++;
			continue;
		}
		if (r->d[i] == ']')
			break;
		return bad(r, i, "expected ',' or ']' after an event", 0);
	}
	*ip = i + 1;
	return P_OK;
}

/* Skip whitespace, refilling; P_OK with *ip at a byte, P_TRUNC at the end. */
static int next_byte(struct rd *r, size_t *ip)
{
	int rc;

	for (;;) {
		*ip = skip_ws(r->d, *ip, r->len);
		if (*ip < r->len)
			return P_OK;
		if (r->eof)
			return P_TRUNC;
		if ((rc = refill(r, *ip)) < 0)
			return rc;
		*ip = 0;
	}
}

/* The event array whose '[' is at d[*ip], validated and not kept
 * (opts.meta_only): one element at a time in the window, a bad one
 * skipped as read_events recovers it. */
static int skip_events(struct rd *r, size_t *ip)
{
	size_t i = *ip + 1, start;
	int rc;

	for (;;) {
		if ((rc = next_byte(r, &i)))
			return rc;
		if (r->d[i] == ']')
			break;
		start = i;
		rc = skip_value(r, &i);
		if (rc == P_NEED) {
			if ((rc = refill(r, start)) < 0)
				return rc;
			i = 0;
			continue;
		}
		if (rc == P_BAD && !r->strict && r->bad_recoverable) {
			if (!r->t->meta.recovered)
				r->t->meta.first_recovery_at = abs_off(r, start);
			r->t->meta.recovered++;
			if ((rc = resync(r, &i)))
				return rc;
			if (r->d[i] == '{')
				continue;
			break; /* ']' */
		}
		if (rc)
			return rc;
		if ((rc = next_byte(r, &i)))
			return rc;
		if (r->d[i] == ']')
			break;
		if (r->d[i] != ',')
			return bad(r, i, "expected ',' or ']' after an event", 0);
		i++;
	}
	*ip = i + 1;
	return P_OK;
}

/* A top-level member value at d[*ip]: delimit it (refilling), then read it. */
static int top_value(struct rd *r, size_t *ip, int kind, int vk)
{
	for (;;) {
		size_t i = *ip;
		int rc = skip_value(r, &i);
		if (rc == P_NEED) {
			if ((rc = refill(r, *ip)) < 0)
				return rc;
			*ip = 0;
			continue;
		}
		if (rc)
			return rc;
		if (kind != M_SKIP && (rc = meta_value(r, kind, vk, *ip, i)))
			return rc;
		*ip = i;
		return P_OK;
	}
}

static int read_object(struct rd *r, size_t *ip, int *saw_events)
{
	size_t i = *ip + 1;
	int rc;
	struct strv k;

	if ((rc = next_byte(r, &i)))
		return rc;
	if (r->d[i] == '}') {
		*ip = i + 1;
		return P_OK;
	}
	for (;;) {
		if (r->d[i] != '"')
			return bad(r, i, "expected '\"' (top-level key)", 0);
		for (;;) {
			size_t j = i;
			rc = scan_str(r, &j, &k);
			if (rc == P_NEED) {
				if ((rc = refill(r, i)) < 0)
					return rc;
				i = 0;
				continue;
			}
			if (rc)
				return rc;
			if (str_plain(r, &k))
				return ts_err_set(r->err, TS_ENOMEM, "out of memory");
			i = j;
			break;
		}
		int is_events = k.n == 11 && memcmp(k.s, "traceEvents", 11) == 0;
		int kind = is_events ? M_SKIP : meta_kind(k.s, k.n);
		int vk = is_events ? V_NONE : version_kind(k.s, k.n);
		if ((rc = next_byte(r, &i)))
			return rc;
		if (r->d[i] != ':')
			return bad(r, i, "expected ':' after object key", 0);
		i++;
		if ((rc = next_byte(r, &i)))
			return rc;
		if (is_events) {
			if (r->d[i] != '[')
				return bad(r, i, "expected '[' (the traceEvents array)", 0);
			*saw_events = 1;
			rc = r->o && r->o->meta_only ? skip_events(r, &i) : read_events(r, &i);
			if (rc)
				return rc;
			r->t->meta.events_whole = 1;
		} else if ((rc = top_value(r, &i, kind, vk))) {
			return rc;
		}
		if ((rc = next_byte(r, &i)))
			return rc;
		if (r->d[i] == '}')
			break;
		if (r->d[i] != ',')
			return bad(r, i, "expected ',' or '}' after a top-level member", 0);
		i++;
		if ((rc = next_byte(r, &i)))
			return rc;
	}
	*ip = i + 1;
	return P_OK;
}

/* ------------------------------------------------------ after reading */

static int name_has_prefix(const struct ts_trace *t, uint32_t id, const char *p)
{
	size_t n = strlen(p);

	return id != TS_NO_ID && ts_intern_len(&t->strings, id) >= n &&
	       memcmp(ts_intern_str(&t->strings, id), p, n) == 0;
}

static int device_name_has(const struct ts_trace *t, const char *needle)
{
	for (size_t k = 0; k < t->meta.ndevices; k++)
		if (t->meta.devices[k].name != TS_NO_ID &&
		    strstr(ts_intern_str(&t->strings, t->meta.devices[k].name), needle))
			return 1;
	return 0;
}

static enum ts_vendor detect_vendor(struct rd *r)
{
	const struct ts_trace *t = r->t;
	uint64_t device = r->ncat[TS_CAT_KERNEL] + r->ncat[TS_CAT_MEMCPY] +
		r->ncat[TS_CAT_MEMSET] + r->ncat[TS_CAT_RUNTIME] + r->ncat[TS_CAT_DRIVER] +
		r->ncat[TS_CAT_GPU_USER_ANNOTATION] + r->ncat[TS_CAT_SYNC];

	if (r->hint_vendor)
		return (enum ts_vendor)r->hint_vendor;
	if (device_name_has(t, "MTIA"))
		return TS_VENDOR_MTIA;
	if (r->o && r->o->meta_only) {
		/* no events to tell by: the device names, else unknown */
		if (device_name_has(t, "MTT") || device_name_has(t, "Moore Threads"))
			return TS_VENDOR_MUSA;
		if (device_name_has(t, "AMD") || device_name_has(t, "Radeon") ||
		    device_name_has(t, "Instinct"))
			return TS_VENDOR_ROCM;
		return TS_VENDOR_UNKNOWN;
	}
	for (uint32_t id = 0; id < t->strings.count && id < r->catmap.n; id++) {
		uint8_t c = r->catmap.v[id];
		const char *s = ts_intern_str(&t->strings, id);
		if (c && !strncmp(s, "mtia_", 5))
			return TS_VENDOR_MTIA;
	}
	if (!device)
		return TS_VENDOR_CPU;
	/* runtime, driver and kernel names name the vendor (each distinct
	 * name looked at once) */
	int musa = 0, hip = 0;
	uint8_t *seen = calloc(t->strings.count ? t->strings.count : 1, 1);
	for (size_t i = 0; i < t->ev.n && !musa; i++) {
		uint8_t c = t->ev.cat[i];
		if (c != TS_CAT_RUNTIME && c != TS_CAT_DRIVER && c != TS_CAT_KERNEL)
			continue;
		uint32_t nm = t->ev.name[i];
		if (nm == TS_NO_ID || (seen && seen[nm]))
			continue;
		if (seen)
			seen[nm] = 1;
		if (name_has_prefix(t, nm, "musa") || name_has_prefix(t, nm, "muLaunch") ||
		    name_has_prefix(t, nm, "mcclKernel"))
			musa = 1;
		else if (name_has_prefix(t, nm, "hip"))
			hip = 1;
	}
	free(seen);
	if (musa || device_name_has(t, "MTT") || device_name_has(t, "Moore Threads"))
		return TS_VENDOR_MUSA;
	if (hip || device_name_has(t, "AMD") || device_name_has(t, "Radeon") ||
	    device_name_has(t, "Instinct"))
		return TS_VENDOR_ROCM;
	return TS_VENDOR_CUDA;
}

static void finish_meta(struct rd *r)
{
	struct ts_trace_meta *m = &r->t->meta;

	m->vendor = detect_vendor(r);
	if (m->rank_source == 0) {
		int64_t x = ts_rank_in_name(r->t->path);
		if (x >= 0) {
			m->rank = x;
			m->rank_source = 2;
		} else if (r->o && r->o->has_order) {
			m->rank = r->o->order;
			m->rank_source = 3;
		}
	}
}

static int read_all(struct rd *r)
{
	size_t i = 0;
	int rc, saw_events = 0;

	win_sync(r);
	/* big inputs: reserve the columns once (virtual memory; pages are
	 * touched as events arrive, as huge pages) instead of growing them */
	if (r->src.size_hint / EST_EVENT_BYTES >= EST_RESERVE_FROM && !(r->o && r->o->meta_only)) {
		rc = ts_trace_reserve(r->t, (size_t)(r->src.size_hint / EST_EVENT_BYTES));
		if (rc == TS_ELIMIT)
			r->t->over_budget = 0; /* only an estimate: grow as events come */
		else if (rc)
			return ts_err_set(r->err, TS_ENOMEM, "out of memory");
		/* zlib's gzip keeps the other core busy inflating; ISA-L's
		 * (0.38 s per GB) leaves room for the population thread; the
		 * split parse keeps both cores parsing, where a third thread
		 * only takes turns with them (1 GB: 0.47 -> 0.41 s wall) */
		pf_start(r, (!r->src.gzip || r->src.gzip_fast) && !r->split_chunk);
	}
	rc = next_byte(r, &i);
	if (rc == P_TRUNC && r->src.cut)
		return ts_err_at(r->err, TS_EPARSE, r->src.path, (int64_t)abs_off(r, i), -1,
				 "gzip stream ends before its first byte of data (file cut short?)");
	if (rc == P_TRUNC)
		return ts_err_at(r->err, TS_EPARSE, r->src.path, (int64_t)abs_off(r, i), -1,
				 "empty input, expected a Chrome trace (a JSON object or array)");
	if (rc < 0)
		return rc;
	if (ts_bom_len(r->d + i, r->len - i)) {
		i += 3;
		if ((rc = next_byte(r, &i)))
			goto out;
	}
	if (r->d[i] == '[') {
		r->t->meta.legacy = 1;
		saw_events = 1;
		rc = r->o && r->o->meta_only ? skip_events(r, &i) : read_events(r, &i);
		r->t->meta.events_whole = rc == P_OK;
	} else if (r->d[i] == '{') {
		rc = read_object(r, &i, &saw_events);
	} else {
		rc = bad(r, i, "expected a Chrome trace (a JSON object or array)", 0);
	}
	if (rc == P_OK) {
		rc = next_byte(r, &i);
		if (rc == P_OK)
			rc = bad(r, i, "expected end of input after the trace", 0);
		else if (rc == P_TRUNC)
			rc = P_OK;
		if (rc == P_OK && !saw_events)
			return ts_err_at(r->err, TS_EPARSE, r->src.path, 0, 1,
					 "not a Chrome trace: the top-level object has no traceEvents array");
	}
out:
	/* a gzip stream cut after the whole JSON (in its trailer): the file
	 * is cut, though no event was lost (events_whole) */
	if (rc == P_TRUNC || (rc == P_OK && r->src.cut)) {
		r->t->meta.truncated = 1;
		r->t->meta.truncated_at = r->src.base + r->len;
		rc = P_OK;
	}
	if (rc == P_BAD)
		return parse_error(r);
	return rc;
}

static int read_src(struct ts_trace *t, struct rd *r, const char *name,
		    const struct ts_trace_opts *opts, size_t split,
		    struct trace_split_stats *stats, struct ts_err *err)
{
	size_t n = strlen(name);
	int rc;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	r->split_stats = stats;
	size_t gz_chunk = trace_src_chunk(&r->src);
	if (split != TRACE_SPLIT_OFF && (gz_chunk || trace_src_can_seek(&r->src))) {
		/* gzip: its size_hint guesses 8:1; traces reach 16:1 */
		uint64_t size = gz_chunk ? r->src.size_hint * 2 :
			r->src.mem ? r->src.mem_len : r->src.size_hint;
		if (split != TRACE_SPLIT_AUTO) {
			r->split_chunk = gz_chunk ? gz_chunk : split;
			r->split_patient = 1;
		}
		/* only far from the memory budget (limits.h): the batches are
		 * charged to it while they exist, so near it the event where the
		 * budget refuses could depend on the threads' timing; columns
		 * take at most ~1.4x the file (a 40 B event), 4x leaves room */
		else if (size >= TRACE_SPLIT_FROM && sysconf(_SC_NPROCESSORS_ONLN) >= 2 &&
			 size <= ts_mem_budget() / 4)
			r->split_chunk = gz_chunk ? gz_chunk : TRACE_SPLIT_CHUNK;
	}

	if (n >= sizeof(t->path))
		n = sizeof(t->path) - 1;
	memcpy(t->path, name, n);
	t->path[n] = '\0';
	r->t = t;
	r->o = opts;
	r->err = err;
	r->strict = opts && opts->strict;
	ts_sb_init(&r->sb);
	r->sc = calloc(1, sizeof(*r->sc));
	if (!r->sc) {
		trace_src_release(&r->src);
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	}
	rc = read_all(r);
	split_stop(r);
	pf_stop(r);
	if (rc == TS_ENOMEM)
		ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
	else if (rc == TS_ELIMIT && t->over_budget)
		ts_err_at(err, TS_ELIMIT, r->src.path, (int64_t)(r->src.base + r->len), -1,
			  "memory budget of %llu MiB reached after %zu events read (about %d "
			  "bytes per event with the analyses); --max-memory SIZE raises it, or "
			  "record fewer steps", (unsigned long long)(ts_mem_budget() >> 20),
			  t->ev.n, TS_TRACE_EVENT_COST);
	else if (rc == TS_ELIMIT && (!err || err->code == TS_OK))
		ts_err_at(err, TS_ELIMIT, r->src.path, (int64_t)(r->src.base + r->len), -1,
			  "more than %u events or strings in one trace", UINT32_MAX - 1);
	else if (rc < 0 && (!err || err->code == TS_OK))
		ts_err_set(err, rc, "%s reading %s", ts_code_name(rc), name);
	if (!rc)
		finish_meta(r);
	t->meta.bytes = r->src.base + r->len;
	t->meta.gzip = r->src.gzip;
	ts_sb_release(&r->sb);
	free(r->sc);
	TS_VEC_RELEASE(r->catmap);
	trace_src_release(&r->src);
	return rc;
}

/* gzip with an explicit split: its inflated buffers are the chunks */
static size_t split_ring_chunk(size_t split)
{
	return split == TRACE_SPLIT_OFF || split == TRACE_SPLIT_AUTO ? 0 : split;
}

int trace_read_split(struct ts_trace *t, const char *path, const struct ts_trace_opts *opts,
		     size_t split, struct trace_split_stats *stats, struct ts_err *err)
{
	struct rd r;
	int rc;

	memset(&r, 0, sizeof(r));
	if (err)
		ts_err_init(err);
	rc = trace_src_open(&r.src, path, split_ring_chunk(split), err);
	if (rc) {
		trace_src_release(&r.src);
		return rc;
	}
	return read_src(t, &r, path, opts, split, stats, err);
}

int trace_read_mem_split(struct ts_trace *t, const void *data, size_t n, const char *name,
			 const struct ts_trace_opts *opts, size_t split,
			 struct trace_split_stats *stats, struct ts_err *err)
{
	struct rd r;
	int rc;

	memset(&r, 0, sizeof(r));
	if (err)
		ts_err_init(err);
	if (!name)
		name = "<memory>";
	rc = trace_src_open_mem(&r.src, data, n, name, split_ring_chunk(split), err);
	if (rc) {
		trace_src_release(&r.src);
		return rc;
	}
	return read_src(t, &r, name, opts, split, stats, err);
}

int ts_trace_read(struct ts_trace *t, const char *path,
		  const struct ts_trace_opts *opts, struct ts_err *err)
{
	return trace_read_split(t, path, opts, TRACE_SPLIT_AUTO, NULL, err);
}

int ts_trace_read_mem(struct ts_trace *t, const void *data, size_t n,
		      const char *name, const struct ts_trace_opts *opts,
		      struct ts_err *err)
{
	return trace_read_mem_split(t, data, n, name, opts, TRACE_SPLIT_AUTO, NULL, err);
}

/*
 * core.h - error record, arena, growable arrays, string builder, interning.
 *
 * The small containers every trainscope module stands on. Nothing here
 * prints or exits; failures are reported through return codes and, where a
 * caller needs a message, through a struct ts_err.
 *
 * Lifecycle verbs (as in git): x_init() sets up x without allocating x
 * itself; x_release() frees what x owns and leaves it zeroed (safe to call
 * on a zeroed struct, safe to call twice); x_clear() = release + init.
 */
#ifndef TRAINSCOPE_CORE_H
#define TRAINSCOPE_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

/* ------------------------------------------------------------------ errors */

/* Error codes: negative ints, errno-style. 0 means success. */
enum ts_code {
	TS_OK = 0,
	TS_EUSAGE = -1,   /* bad options or arguments (exit 2) */
	TS_EIO = -2,      /* cannot open/read/write a file (exit 2) */
	TS_EPARSE = -3,   /* malformed input (exit 2) */
	TS_ETRUNC = -4,   /* input ended inside a value (caller may keep what was complete) */
	TS_ENOMEM = -5,   /* allocation failed (exit 3) */
	TS_EINTERNAL = -6,/* a bug in trainscope (exit 3) */
	TS_EUNSUPPORTED = -7, /* valid input we do not handle (exit 2) */
	TS_ELIMIT = -8    /* input exceeds a hard cap (exit 2) */
};

#define TS_ERR_MSG_MAX 512
#define TS_ERR_PATH_MAX 512

/*
 * The error record filled by library calls. offset and line are -1 when not
 * known; line is 1-based. A record that was never set has code TS_OK.
 */
struct ts_err {
	int code;
	int64_t offset;
	int64_t line;
	char path[TS_ERR_PATH_MAX];
	char msg[TS_ERR_MSG_MAX];
};

void ts_err_init(struct ts_err *err);

/*
 * Fill err (when non-NULL) and return code, so failure paths read
 * `return ts_err_set(err, TS_EPARSE, "expected %s", what);`.
 * ts_err_at also records the file and position (path may be NULL).
 */
int ts_err_set(struct ts_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int ts_err_at(struct ts_err *err, int code, const char *path, int64_t offset,
	      int64_t line, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Short name of an error code ("parse error", "truncated input", ...). */
const char *ts_code_name(int code);

/*
 * Format err as one line "PATH: byte OFF (line L): MESSAGE" into buf
 * (always NUL-terminated). Parts that are unknown are left out.
 */
void ts_err_format(const struct ts_err *err, char *buf, size_t size);

/* ------------------------------------------------------------------ arena */

/*
 * Bump allocator for one unit of work (a trace file, a report). Blocks grow
 * geometrically; big blocks come from mmap with MADV_HUGEPAGE because first
 * touch of fresh pages is slow on the target VMs. Everything is freed at once
 * by ts_arena_release(). Allocation failure returns NULL and sets a sticky
 * flag (a->failed) so callers can check once at the end.
 */
struct ts_arena_block;
struct ts_arena {
	struct ts_arena_block *head;
	size_t used_bytes;   /* bytes handed out */
	size_t mapped_bytes; /* bytes reserved from the system */
	int failed;
};

void ts_arena_init(struct ts_arena *a);
void ts_arena_release(struct ts_arena *a);
/* size bytes aligned to 16; NULL on failure. Memory is not zeroed. */
void *ts_arena_alloc(struct ts_arena *a, size_t size);
/* Copy n bytes of s and append a NUL; NULL on failure. */
char *ts_arena_strndup(struct ts_arena *a, const char *s, size_t n);

/* ---------------------------------------------------------- growable arrays */

/*
 * Make room for `need` elements of `elem` bytes in *ptr whose capacity is
 * *cap (in elements). Grows by 1.5x at least; returns 0, or TS_ENOMEM leaving
 * *ptr and *cap untouched. Invalidates pointers into the old array.
 */
int ts_grow(void **ptr, size_t *cap, size_t need, size_t elem);

/* Typed wrappers: `struct { T *v; size_t n, cap; } xs;` */
#define TS_VEC(T) struct { T *v; size_t n, cap; }
#define TS_VEC_RESERVE(vec, need) \
	ts_grow((void **)&(vec).v, &(vec).cap, (need), sizeof(*(vec).v))
/* Append x; evaluates to 0 or TS_ENOMEM. */
#define TS_VEC_PUSH(vec, x) \
	(TS_VEC_RESERVE((vec), (vec).n + 1) ? TS_ENOMEM : ((vec).v[(vec).n++] = (x), 0))
#define TS_VEC_RELEASE(vec) \
	do { free((vec).v); (vec).v = NULL; (vec).n = (vec).cap = 0; } while (0)

/*
 * Sort n elements with cmp, accepting an empty array whose pointer may be
 * NULL (the C library's sort declares its array non-null, so passing NULL
 * is undefined even for 0 elements). Use it instead of the libc sort.
 */
void ts_sort(void *base, size_t n, size_t size,
	     int (*cmp)(const void *, const void *));

/*
 * The one binary search over a sorted array: the index of the first of the
 * n elements (size bytes each, at base) for which before(elem, key) is
 * false, n when it is true of all. The array must be partitioned by
 * before: true for a prefix, false for the rest. With before "elem's key <
 * key" that is the lower bound (the first element not below key); with
 * "elem's key <= key", the upper bound (the first above it). base may be
 * NULL when n is 0. before is called at most ceil(log2(n + 1)) times and
 * is never given an element outside [0, n).
 *
 * Inline so that each caller's comparison is inlined with it (the trace
 * model's side tables and profile's launch lookups are per-event paths).
 */
static inline size_t ts_lower_bound(const void *base, size_t n, size_t size, const void *key,
				    int (*before)(const void *elem, const void *key))
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (before((const char *)base + mid * size, key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ts_lower_bound's before over an int64_t array: the lower bound (elem <
 * key) and the upper bound (elem <= key). */
static inline int ts_i64_below(const void *elem, const void *key)
{
	return *(const int64_t *)elem < *(const int64_t *)key;
}

static inline int ts_i64_not_above(const void *elem, const void *key)
{
	return *(const int64_t *)elem <= *(const int64_t *)key;
}

/* ---------------------------------------------------------- string builder */

/*
 * Growable NUL-terminated byte buffer. buf is never NULL after init (points
 * at a static empty string until the first append). On allocation failure
 * the builder sets `failed` and ignores further appends.
 */
struct ts_sb {
	char *buf;
	size_t len;
	size_t cap;
	int failed;
};

void ts_sb_init(struct ts_sb *sb);
void ts_sb_release(struct ts_sb *sb);
void ts_sb_reset(struct ts_sb *sb); /* len = 0, keeps the memory */
void ts_sb_add(struct ts_sb *sb, const void *data, size_t n);
void ts_sb_addc(struct ts_sb *sb, char c);
void ts_sb_adds(struct ts_sb *sb, const char *s);
void ts_sb_addf(struct ts_sb *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ts_sb_vaddf(struct ts_sb *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Append n copies of c. */
void ts_sb_pad(struct ts_sb *sb, char c, size_t n);

/* ---------------------------------------------------------- interning */

/*
 * Maps byte strings to dense ids 0, 1, 2... (in first-seen order) so the
 * millions of repeated names in a trace are stored once. Strings are copied
 * into the table's own arena and stay valid until ts_intern_release().
 */
struct ts_intern {
	uint32_t *slots;     /* open addressing: id + 1, 0 = empty */
	uint32_t *hashes;    /* hash per id */
	const char **strs;   /* string per id (NUL-terminated) */
	uint32_t *lens;      /* length per id */
	size_t count;
	size_t nslots;       /* power of two */
	size_t cap;          /* capacity of the per-id arrays */
	struct ts_arena arena;
};

void ts_intern_init(struct ts_intern *t);
void ts_intern_release(struct ts_intern *t);
/* Id of s[0..n) (added if new); negative TS_ENOMEM on failure. */
int64_t ts_intern(struct ts_intern *t, const char *s, size_t n);
/* Id of s if present, else -1. */
int64_t ts_intern_find(const struct ts_intern *t, const char *s, size_t n);
static inline const char *ts_intern_str(const struct ts_intern *t, uint32_t id)
{
	return t->strs[id];
}
static inline uint32_t ts_intern_len(const struct ts_intern *t, uint32_t id)
{
	return t->lens[id];
}

/* 64-bit hash of n bytes (deterministic across runs and machines). */
uint64_t ts_hash(const void *data, size_t n);

/*
 * Nanoseconds since 1970-01-01T00:00:00 of a calendar date and time
 * (proleptic Gregorian), taken as UTC: no zone is applied, so two stamps
 * of one clock differ by their true interval whatever its zone. sec may
 * carry a fraction (and 60, a leap second). INT64_MIN when a field is out
 * of range: year 1970-2200, month 1-12, day 1-31, hour 0-23, minute 0-59,
 * second [0, 61).
 */
int64_t ts_civil_ns(int y, int mo, int d, int h, int mi, double sec);

/*
 * The one reader of calendar stamps written as text (training logs,
 * telemetry captures): s[0..n) starts with
 *   YYYY-MM-DD HH:MM:SS   or YYYY/MM/DD ... or YYYYMMDD ...
 * with 'T' for the blank (ISO 8601), one or two digits in each field after
 * the year, an optional fraction of a second after '.' or ',' (Python's
 * logging writes ",mmm"), and an optional zone right after it: "Z",
 * "+HH:MM", "+HHMM", "+HH" (or '-'). Returns the bytes the stamp takes
 * (0: s does not start with one, or a field is out of ts_civil_ns's
 * range); *ns is the time in UTC when a zone was written (*zoned = 1),
 * else the time as written (*zoned = 0). What follows the stamp is not
 * looked at.
 */
size_t ts_stamp_parse(const char *s, size_t n, int64_t *ns, int *zoned);

/*
 * The one version comparator family (version.c): preflight, contract
 * capture, contract diff, diff's context and ab use these and no other.
 *
 * ts_version_cmp orders the version strings a and b (NUL-terminated):
 * negative when a is older, 0 when they name the same version, positive
 * when a is newer. The rule:
 *  - Strings that do not both start with a digit compare as text
 *    (strcmp): "nccl" = "nccl", "v1.2" != "1.2".
 *  - Else the release, numeric components joined by '.' ("535.104.05"),
 *    compares component by component as numbers of any length; leading
 *    zeros and missing trailing components (read as 0) change nothing:
 *    "535.104.05" = "535.104.5", "12.4" = "12.4.0" < "12.4.1" < "12.10".
 *  - Then the text after the release up to a '+': a pre-release (a
 *    letter first, after any '.', '-', '_', other than "post": "a0",
 *    "rc1", ".dev0") is older than none, which is older than a
 *    post-release ("2.5.0rc1" < "2.5.0" < "2.5.0.post1" and "12.4.1-1");
 *    two of one kind in natural order (digit runs as numbers: "rc2" <
 *    "rc10"), ties broken by the bytes ("rc01" != "rc1").
 *  - Then a local build label after '+' (PEP 440: "+cu124"), in the same
 *    natural order, only when both carry one: "2.5.1+cu124" = "2.5.1",
 *    "+cu121" < "+cu124".
 * Encodings are not translated: CUDA's integer "12040" and "12.4" differ
 * (12040 > 12). With labels the zero is not transitive ("2.5.1+cu121" =
 * "2.5.1" = "2.5.1+cu124", the first and last differ), so it is no sort
 * key for lists that mix labelled and unlabelled versions.
 */
int ts_version_cmp(const char *a, const char *b);

/* 1 when ts_version_cmp(a, b) is 0: a and b name the same version. */
int ts_version_same(const char *a, const char *b);

#endif

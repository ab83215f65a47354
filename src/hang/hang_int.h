/*
 * hang_int.h - helpers shared by the hang readers and the analysis
 * (src/hang/ only).
 */
#ifndef TS_HANG_INT_H
#define TS_HANG_INT_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/hang.h"
#include "trainscope/input.h"

/* Replace invalid UTF-8 in p[0..n) by '?' (output stays valid JSON text);
 * returns the length without a multibyte character cut at the end. */
size_t hang_utf8_clean(char *p, size_t n);
/* Copy of s[0..n) in the set's arena, UTF-8 cleaned; NULL on failure
 * (arena sticky flag). */
const char *hang_strndup(struct ts_hang_set *s, const char *p, size_t n);
/* Index of a new file name, or -1. */
int hang_add_file(struct ts_hang_set *s, const char *name);
/* New evidence line (text cut to TS_HANG_TEXT_MAX, trailing space kept out);
 * returns its index or -1 on allocation failure. */
int hang_add_ev(struct ts_hang_set *s, uint32_t file, int64_t line, const char *text, size_t n);
/* The group matching the known fields (id < 0 / NULL = unknown), merged
 * into an existing compatible group or added; -1 on allocation failure or
 * when nothing is known. */
int hang_pg(struct ts_hang_set *s, int64_t id, const char *guid, size_t guid_n,
	    const char *desc, size_t desc_n, const char *ranks);
/* The group of a Flight Recorder entry: keyed by its name (the global
 * process-group name) and rank set, as fr_trace keys it, never by pg_id:
 * pg_id is the process-local creation index of the group (a rank that is
 * a member of fewer groups created before numbers the later ones lower), so
 * one group has different pg_ids on different ranks and one pg_id names
 * different groups. Without a name it is hang_pg. */
int hang_pg_dump(struct ts_hang_set *s, int64_t id, const char *guid, size_t guid_n,
		 const char *desc, size_t desc_n, const char *ranks);
/* The group of a watchdog line's tag: a group of its PG GUID (the global
 * name) is keyed by that name, whatever its PG ID (process-local, as a
 * dump's pg_id: its ids then vary); else hang_pg, so a tag with a GUID
 * joins the id-only tags ("[PG 1 Rank 0]") of its id. */
int hang_pg_log(struct ts_hang_set *s, int64_t id, const char *guid, size_t guid_n,
		const char *desc, size_t desc_n);
void hang_rank_seen(struct ts_hang_set *s, int64_t rank);
void hang_work_init(struct ts_hang_work *w);
void hang_report_init(struct ts_hang_report *r, enum ts_hang_report_kind kind);
/* Add v to a sorted unique int64 vector; 0 or TS_ENOMEM. */
int hang_set_add(void *vec, int64_t v);
/* a sorted unique int64 vector type (layout of TS_VEC(int64_t)) */
struct hang_i64v { int64_t *v; size_t n, cap; };
int hang_set_has(const void *vec, int64_t v);
/* The next rank of a process group's ranks text ("[0, 1, 2]", "0,1"): skips
 * to the next run of digits from *pp, stores it in *rank and moves *pp past
 * it; 0 at the end of the text. A run past INT64_MAX is skipped whole. */
int hang_ranks_next(const char **pp, int64_t *rank);

/* Parse memory reused from one dump to the next (a dump's value tree is
 * dropped once its entries are taken): chunks are kept across resets, so a
 * directory of dumps does not fault in fresh pages for every file. */
struct hang_pool {
	struct hang_chunk { char *p; size_t cap; } *chunks;
	size_t nchunks, cur, used;
	int failed;
};
void *hang_pool_alloc(struct hang_pool *a, size_t size);
char *hang_pool_strndup(struct hang_pool *a, const char *s, size_t n);
void hang_pool_reset(struct hang_pool *a);
void hang_pool_free(struct hang_pool *a);

/* A Python / JSON value read from a dump (arena-allocated, freed with
 * the arena of the reader). Dicts hold key, value pairs in it[]. */
enum pv_type { PV_NONE, PV_BOOL, PV_INT, PV_FLOAT, PV_STR, PV_LIST, PV_TUPLE, PV_DICT, PV_MARK };
struct pv {
	enum pv_type t;
	int64_t i;        /* INT, BOOL */
	double f;         /* FLOAT */
	const char *s;    /* STR (not NUL-terminated) */
	size_t n;         /* STR length */
	struct pv **it;   /* LIST, TUPLE: items; DICT: key, value, key, value... */
	size_t nit, cap;
	int cut;          /* containers: the input ended inside it (salvaged) */
};
/*
 * Parse a JSON or Python-repr document into *out (values in arena). With
 * cut non-NULL a document whose input ends inside its top container is
 * salvaged instead of failing: every container open at the end keeps its
 * complete items and has `cut` set (an item that ends at the last byte
 * counts as cut too, a dict key without its value is dropped), and *cut is
 * the number of bytes read; else *cut is -1.
 */
int hang_pv_parse_text(struct hang_pool *a, const char *d, size_t n, const char *name,
		       struct pv **out, int64_t *cut, struct ts_err *err);
/*
 * Run the safe pickle subset; *out is the value at STOP. With cut non-NULL
 * a pickle whose input ends before STOP is salvaged as the text reader
 * does (every container still being filled keeps the items pushed for it
 * and is cut; the value on top of the stack is cut too, since it may be a
 * container still waiting for its items) and *cut is the number of bytes
 * read; else *cut is -1. Errors other than the input ending are never
 * salvaged.
 */
int hang_pv_parse_pickle(struct hang_pool *a, const unsigned char *d, size_t n, const char *name,
			 struct pv **out, int64_t *cut, struct ts_err *err);
/* dict lookup by string key; NULL when absent or not a dict */
const struct pv *hang_pv_get(const struct pv *d, const char *key);
/* Fill s from a parsed dump or RAS JSON document; cut: the document was
 * salvaged after its input ended at that byte (hang_pv_parse_text,
 * hang_pv_parse_pickle), else
 * -1. A cut Flight Recorder dump keeps its complete entries (the one the
 * cut is inside is dropped); any other cut document is TS_ETRUNC. ras: the
 * document may be an NCCL RAS report (a text document: RAS writes JSON,
 * so a pickle is a dump, whatever other keys it holds). */
int hang_from_pv(struct ts_hang_set *s, const struct pv *root, uint32_t file, int64_t rank,
		 int64_t cut, int ras, const char *name, struct ts_err *err);

/* The one wording of a cut dump (d->cut_at >= 0), appended to sb: the
 * finding of the analysis and the truncated-dump warning. */
void hang_cut_text(const struct ts_hang_set *s, const struct ts_hang_dump *d, struct ts_sb *sb);
/* The words of an unread input's finding and warning. */
void hang_unread_text(const struct ts_hang_set *s, const struct ts_hang_unread *u, struct ts_sb *sb);
/* The words of a text log's cut last line (struct ts_hang_cut_line). */
void hang_cutline_text(const struct ts_hang_set *s, const struct ts_hang_cut_line *c,
		       struct ts_sb *sb);

/* The earlier dump of the same rank as dump i (index into s->dumps), or
 * -1: a second dump of one rank is not compared. */
int hang_dup_dump(const struct ts_hang_set *s, size_t i);
/* The words of that finding and of its duplicate-rank warning. */
void hang_dup_text(const struct ts_hang_set *s, size_t i, size_t first, struct ts_sb *sb);

/* The ranks the evidence names at or above --world-size (s->world_size >
 * 0), added to above (a sorted unique vector the caller releases): the
 * world given is too small and is not used. 0 or TS_ENOMEM. */
int hang_world_above(const struct ts_hang_set *s, struct hang_i64v *above);
/* The words of that finding and of its world-size-mismatch warning. */
void hang_world_text(const struct ts_hang_set *s, const struct hang_i64v *above, struct ts_sb *sb);
/* The ranks the dumps' groups name (pg_config rank sets, and 0..N-1 for a
 * usable --world-size N) into members, those with no dump read into
 * missing (sorted unique vectors the caller releases); nothing when no dump
 * of a known rank was read. 0 or TS_ENOMEM. hang_missing_text: the words of
 * that finding and of its missing-dump warning. */
int hang_missing_dumps(const struct ts_hang_set *s, struct hang_i64v *members, struct hang_i64v *missing);
void hang_missing_text(const struct hang_i64v *members, const struct hang_i64v *missing, struct ts_sb *sb);
/* The index of the first dump whose "version" differs from the first
 * dump's (dumps without one are not counted), -1 when they agree;
 * hang_versions_text: the words of that finding and of its
 * dump-version-mismatch warning, each version with its files. */
int64_t hang_version_other(const struct ts_hang_set *s);
void hang_versions_text(const struct ts_hang_set *s, struct ts_sb *sb);

/*
 * Name the pg_status ids a dump alone could not (struct ts_hang_pg_status
 * with pg -1, its dump's struct ts_hang_local items) from every dump
 * together: groups are created in one order on every rank (the other
 * dumps' (id, group) pairs order them), and a collective completes on a
 * member only once every member issued it (the other members' progress
 * rules groups out). An id one group is left for gets its pg; the words of
 * the dumps whose ids stay open are appended to said ("rank 0 (FILE): its
 * pg_status ids 2, 3 could each be group a, b"). Run once, before the
 * analysis reads s->status. 0 or TS_ENOMEM.
 */
int hang_status_resolve(struct ts_hang_set *s, struct ts_sb *said);

/* The text reader over an open input whose file is the last in s->files. */
int hang_read_lines_input(struct ts_hang_set *s, struct ts_input *in, struct ts_err *err);

/* Append a sorted rank list as ranges ("0-2, 5, 7-9") to sb; nothing for
 * an empty list. */
void hang_ranks_text(struct ts_sb *sb, const int64_t *v, size_t n);

#endif

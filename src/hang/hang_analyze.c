/*
 * hang_analyze.c - from evidence to incidents. Flight Recorder dumps are
 * compared per process group (keyed by name and rank set) and aligned by
 * the collective sequence id, never by the per-process record id; at the
 * first sequence where ranks disagree or did not finish, the minority is
 * blamed (a tie stays undecided). Log-only evidence (watchdog timeouts,
 * progress lines) is grouped by (group, seq); reports that already name
 * rank sets (desync debug, fr_trace, RAS, DETAIL) are read for what they
 * say, with the right side blamed (RAS lists the ranks that are ahead).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hang_int.h"
#include "trainscope/jsonw.h"
#include "trainscope/paths.h"

/* a log line of one rank joined to a log incident: a timeout (work >= 0)
 * or a progress line that shows the rank behind the incident's seq */
struct logref {
	int inc;
	int64_t rank;
	size_t work;          /* index into works, or SIZE_MAX */
	int64_t enqueued, completed;
	int pg;
	int ev;
};

struct an {
	struct ts_hang_set *s;
	struct ts_hang_result *r;
	int64_t world;            /* --world-size when no rank is at or above it, else -1 */
	TS_VEC(int) has_progress; /* per incident */
	TS_VEC(struct logref) lrefs;
	/* per file: the range [wbeg, wend) of s->works holding its dump
	 * entries (a dump's entries are pushed together), so a rank's
	 * entries are found without a scan of every rank's; NULL outside
	 * dumps() */
	size_t *wbeg, *wend;
	const struct hang_i64v *dup_files;
};

/* The file of rank's dump (the first read: a second of one rank is not
 * compared), -1 when none. */
static int rank_file(const struct an *a, int64_t rank)
{
	for (size_t i = 0; i < a->s->dumps.n; i++)
		if (a->s->dumps.v[i].rank == rank && !hang_set_has(a->dup_files, a->s->dumps.v[i].file))
			return (int)a->s->dumps.v[i].file;
	return -1;
}

/* The first point-to-point entry of the dump in file f not completed (the
 * one its communication stream is held in); -1 when none. */
static ssize_t p2p_first_pending(const struct an *a, int f)
{
	const struct ts_hang_set *s = a->s;
	ssize_t best = -1;

	for (size_t i = a->wbeg[f]; i < a->wend[f]; i++) {
		const struct ts_hang_work *w = &s->works.v[i];
		if (!w->from_dump || w->file != (uint32_t)f || (w->kind != TS_OP_SEND && w->kind != TS_OP_RECV) ||
		    w->state == TS_ST_COMPLETED || w->state == TS_ST_UNKNOWN)
			continue;
		if (best < 0 || (w->record_id >= 0 && w->record_id < s->works.v[best].record_id))
			best = (ssize_t)i;
	}
	return best;
}

static const char *fmt(struct ts_hang_result *r, const char *f, ...)
	__attribute__((format(printf, 2, 3)));
static const char *fmt(struct ts_hang_result *r, const char *f, ...)
{
	struct ts_sb sb;
	va_list ap;
	const char *out;

	ts_sb_init(&sb);
	va_start(ap, f);
	ts_sb_vaddf(&sb, f, ap);
	va_end(ap);
	out = sb.failed ? NULL : ts_arena_strndup(&r->arena, sb.buf, sb.len);
	ts_sb_release(&sb);
	return out;
}

/* A cut last line of a file already said to be no dump we read (an
 * unread-input) says nothing more. */
static int cut_line_said(const struct ts_hang_set *s, const struct ts_hang_cut_line *c)
{
	for (size_t i = 0; i < s->unread.n; i++)
		if (s->unread.v[i].file == c->file)
			return 0;
	return 1;
}

void hang_cut_text(const struct ts_hang_set *s, const struct ts_hang_dump *d, struct ts_sb *sb)
{
	int one = d->entries == 1;

	if (!d->entries_cut) {
		ts_sb_addf(sb, "%s: truncated at byte %lld, after its entries list: its %lld "
			   "%s read whole", s->files.v[d->file], (long long)d->cut_at,
			   (long long)d->entries, one ? "entry is" : "entries are");
		return;
	}
	ts_sb_addf(sb, "%s: truncated at byte %lld; its %lld complete %s before the cut %s read, "
		   "and its rank is not taken as absent past %s", s->files.v[d->file],
		   (long long)d->cut_at, (long long)d->entries, one ? "entry" : "entries",
		   one ? "is" : "are", one ? "it" : "the last of them");
}

/* The warning (code, file, byte) in the words sb holds; sb is emptied. */
static int warn_words(struct ts_warnings *w, const char *code, const char *file, int64_t off,
		      struct ts_sb *sb)
{
	int rc = sb->failed ? TS_ENOMEM :
		 ts_warnings_add(w, code, file, off, TS_NO_INT, "%s", sb->buf);

	ts_sb_reset(sb);
	return rc;
}

/* a rank at or above the world size given */
static int above_add(struct hang_i64v *above, int64_t world, int64_t rank)
{
	return rank >= world ? hang_set_add(above, rank) : 0;
}

static int above_vec(struct hang_i64v *above, int64_t world, const int64_t *v, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++)
		rc = above_add(above, world, v[i]);
	return rc;
}

int hang_world_above(const struct ts_hang_set *s, struct hang_i64v *above)
{
	int64_t w = s->world_size;
	int rc = 0;

	if (w <= 0)
		return 0;
	for (size_t i = 0; i < s->works.n && !rc; i++)
		rc = above_add(above, w, s->works.v[i].rank);
	for (size_t i = 0; i < s->progress.n && !rc; i++)
		rc = above_add(above, w, s->progress.v[i].rank);
	for (size_t i = 0; i < s->dumps.n && !rc; i++)
		rc = above_add(above, w, s->dumps.v[i].rank);
	for (size_t i = 0; i < s->status.n && !rc; i++)
		rc = above_add(above, w, s->status.v[i].rank);
	for (size_t i = 0; i < s->pgs.n && !rc; i++) {
		const char *p = s->pgs.v[i].ranks;
		int64_t k;

		while (p && !rc && hang_ranks_next(&p, &k))
			rc = above_add(above, w, k);
	}
	for (size_t i = 0; i < s->reports.n && !rc; i++) {
		const struct ts_hang_report *rep = &s->reports.v[i];

		rc = above_add(above, w, rep->reporter);
		if (!rc)
			rc = above_vec(above, w, rep->culprits.v, rep->culprits.n);
		if (!rc)
			rc = above_vec(above, w, rep->missing.v, rep->missing.n);
		if (!rc)
			rc = above_vec(above, w, rep->expected.v, rep->expected.n);
		for (size_t g = 0; g < rep->groups.n && !rc; g++)
			rc = above_vec(above, w, rep->groups.v[g].ranks.v, rep->groups.v[g].ranks.n);
	}
	return rc;
}

void hang_world_text(const struct ts_hang_set *s, const struct hang_i64v *above, struct ts_sb *sb)
{
	ts_sb_addf(sb, "--world-size %lld, but the evidence names rank%s ", (long long)s->world_size,
		   above->n == 1 ? "" : "s");
	{
		struct ts_sb r;

		ts_sb_init(&r);
		hang_ranks_text(&r, above->v, above->n);
		ts_sb_adds(sb, r.failed ? "?" : r.buf);
		ts_sb_release(&r);
	}
	ts_sb_addf(sb, " (ranks count from 0): the world is larger, so the given size is not used, and "
		   "no rank is taken as silent from it");
}

int hang_missing_dumps(const struct ts_hang_set *s, struct hang_i64v *members, struct hang_i64v *missing)
{
	struct hang_i64v dumped = { 0 }, above = { 0 };
	int rc = 0;

	for (size_t i = 0; i < s->dumps.n && !rc; i++)
		if (s->dumps.v[i].rank >= 0)
			rc = hang_set_add(&dumped, s->dumps.v[i].rank);
	/* only Flight Recorder groups have rank sets (pg_config) */
	for (size_t i = 0; i < s->pgs.n && !rc && dumped.n; i++) {
		const char *p = s->pgs.v[i].ranks;
		int64_t k;

		while (p && !rc && hang_ranks_next(&p, &k))
			rc = hang_set_add(members, k);
	}
	if (!rc && dumped.n && s->world_size > 0 && !(rc = hang_world_above(s, &above)) && !above.n)
		for (int64_t k = 0; k < s->world_size && k < 65536 && !rc; k++)
			rc = hang_set_add(members, k);
	for (size_t i = 0; i < members->n && !rc; i++)
		if (!hang_set_has(&dumped, members->v[i]))
			rc = hang_set_add(missing, members->v[i]);
	TS_VEC_RELEASE(dumped);
	TS_VEC_RELEASE(above);
	return rc;
}

void hang_missing_text(const struct hang_i64v *members, const struct hang_i64v *missing, struct ts_sb *sb)
{
	struct ts_sb r;

	ts_sb_init(&r);
	hang_ranks_text(&r, missing->v, missing->n);
	ts_sb_addf(sb, "no Flight Recorder dump was read for rank%s %s", missing->n == 1 ? "" : "s",
		   r.failed ? "?" : r.buf);
	ts_sb_release(&r);
	ts_sb_addf(sb, " of the %zu ranks the dumps' groups (or --world-size) name: a rank that died, or "
		   "hangs outside the collective, often writes none (or its file was not given); what it "
		   "did is unknown, and it is blamed only where every other member waits on it", members->n);
}

/* The first dump whose version differs from the first dump's that has
 * one (one job's ranks run one PyTorch and write one version), or -1. */
int64_t hang_version_other(const struct ts_hang_set *s)
{
	const char *first = NULL;

	for (size_t i = 0; i < s->dumps.n; i++) {
		const char *v = s->dumps.v[i].version;

		if (!v)
			continue;
		if (!first)
			first = v;
		else if (strcmp(v, first))
			return (int64_t)i;
	}
	return -1;
}

/* the first dump with that version is i */
static int version_first(const struct ts_hang_set *s, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (s->dumps.v[k].version && strcmp(s->dumps.v[k].version, s->dumps.v[i].version) == 0)
			return 0;
	return 1;
}

void hang_versions_text(const struct ts_hang_set *s, struct ts_sb *sb)
{
	const char *sep = "";

	ts_sb_adds(sb, "Flight Recorder dumps of different versions: ");
	for (size_t i = 0; i < s->dumps.n; i++) {
		const char *v = s->dumps.v[i].version;
		size_t shown = 0, more = 0;

		if (!v || !version_first(s, i))
			continue;
		ts_sb_addf(sb, "%sversion %s in ", sep, v);
		for (size_t k = i; k < s->dumps.n; k++) {
			if (!s->dumps.v[k].version || strcmp(s->dumps.v[k].version, v))
				continue;
			if (shown < 4)
				ts_sb_addf(sb, "%s%s", shown ? ", " : "", s->files.v[s->dumps.v[k].file]);
			else
				more++;
			shown++;
		}
		if (more)
			ts_sb_addf(sb, " and %zu more", more);
		sep = "; ";
	}
	ts_sb_adds(sb, ": the ranks of one job run one PyTorch and write one version, so these may "
		   "be dumps of different jobs or builds mixed");
}

int ts_hang_warnings(const struct ts_hang_set *s, struct ts_warnings *w)
{
	struct ts_sb sb;
	int64_t other;
	int rc = 0;

	ts_sb_init(&sb);
	for (size_t i = 0; i < s->dumps.n && !rc; i++) {
		const struct ts_hang_dump *d = &s->dumps.v[i];

		if (d->cut_at < 0)
			continue;
		hang_cut_text(s, d, &sb);
		rc = warn_words(w, "truncated-dump", s->files.v[d->file], d->cut_at, &sb);
	}
	for (size_t i = 0; i < s->dumps.n && !rc; i++) {
		int first = hang_dup_dump(s, i);

		if (first < 0)
			continue;
		hang_dup_text(s, i, (size_t)first, &sb);
		rc = warn_words(w, "duplicate-rank", s->files.v[s->dumps.v[i].file], 0, &sb);
	}
	if (!rc && (other = hang_version_other(s)) >= 0) {
		hang_versions_text(s, &sb);
		rc = warn_words(w, "dump-version-mismatch", s->files.v[s->dumps.v[other].file], 0, &sb);
	}
	if (!rc && s->dumps.n) {
		struct hang_i64v members = { 0 }, missing = { 0 };

		rc = hang_missing_dumps(s, &members, &missing);
		if (!rc && missing.n) {
			ts_sb_reset(&sb);
			hang_missing_text(&members, &missing, &sb);
			rc = warn_words(w, "missing-dump", NULL, -1, &sb);
		}
		TS_VEC_RELEASE(members);
		TS_VEC_RELEASE(missing);
	}
	if (!rc && s->world_size > 0) {
		struct hang_i64v above = { 0 };

		rc = hang_world_above(s, &above);
		if (!rc && above.n) {
			hang_world_text(s, &above, &sb);
			rc = warn_words(w, "world-size-mismatch", NULL, -1, &sb);
		}
		TS_VEC_RELEASE(above);
	}
	for (size_t i = 0; i < s->cut_lines.n && !rc; i++) {
		const struct ts_hang_cut_line *c = &s->cut_lines.v[i];

		if (!cut_line_said(s, c))
			continue;
		hang_cutline_text(s, c, &sb);
		rc = warn_words(w, "truncated-log", s->files.v[c->file], c->offset, &sb);
	}
	for (size_t i = 0; i < s->unread.n && !rc; i++) {
		const struct ts_hang_unread *u = &s->unread.v[i];

		hang_unread_text(s, u, &sb);
		rc = warn_words(w, "unread-input", s->files.v[u->file],
				(u->binary || u->error) && u->bad_at >= 0 ? u->bad_at : u->nul_at >= 0 ? u->nul_at : 0, &sb);
	}
	ts_sb_release(&sb);
	return rc;
}

int hang_dup_dump(const struct ts_hang_set *s, size_t i)
{
	for (size_t k = 0; k < i && s->dumps.v[i].rank >= 0; k++)
		if (s->dumps.v[k].rank == s->dumps.v[i].rank)
			return (int)k;
	return -1;
}

void hang_dup_text(const struct ts_hang_set *s, size_t i, size_t first, struct ts_sb *sb)
{
	ts_sb_addf(sb, "%s: its dump claims rank %lld, as %s does; only %s is compared (a rank key "
		   "or file name is wrong, or dumps of two jobs are mixed)",
		   s->files.v[s->dumps.v[i].file], (long long)s->dumps.v[i].rank,
		   s->files.v[s->dumps.v[first].file], s->files.v[s->dumps.v[first].file]);
}

void hang_cutline_text(const struct ts_hang_set *s, const struct ts_hang_cut_line *c,
		       struct ts_sb *sb)
{
	ts_sb_addf(sb, "%s: its last line (line %lld, byte %lld) has no line end: the log was "
		   "cut while it was written, and the line is not read (a number at its end may "
		   "be the head of a longer one)", s->files.v[c->file], (long long)c->line,
		   (long long)c->offset);
}

/* "binary (a NUL byte at offset N)" or "binary (K of its first M bytes
 * are no text ...)" */
static void binary_text(const struct ts_hang_unread *u, struct ts_sb *sb)
{
	if (u->nul_early)
		ts_sb_addf(sb, "binary (a NUL byte at offset %lld)", (long long)u->nul_at);
	else
		ts_sb_addf(sb, "binary (%lld of its first %lld bytes are no text: control bytes or "
			   "invalid UTF-8)", (long long)u->nontext, (long long)u->scanned);
}

void hang_unread_text(const struct ts_hang_set *s, const struct ts_hang_unread *u, struct ts_sb *sb)
{
	int dump = strstr(ts_basename(s->files.v[u->file]), "_trace_rank_") != NULL;

	if (u->error) {
		ts_sb_addf(sb, "%s: byte %lld: %s: the dump cannot be read, and nothing was read from it "
			   "(its rank is one without a dump)", s->files.v[u->file], (long long)u->bad_at, u->error);
		return;
	}
	if (u->empty) {
		ts_sb_addf(sb, "%s: empty (0 bytes)%s; nothing was read from it", s->files.v[u->file],
			   dump ? ", a Flight Recorder dump's name: its rank may have died before it "
				  "wrote the dump" : "");
		return;
	}
	if (!dump) {
		ts_sb_addf(sb, "%s: ", s->files.v[u->file]);
		binary_text(u, sb);
		ts_sb_adds(sb, ": neither a Flight Recorder dump (pickle, JSON or Python repr) nor a text "
			   "log; nothing was read from it");
		return;
	}
	ts_sb_addf(sb, "%s: named like a Flight Recorder dump, ", s->files.v[u->file]);
	if (u->kind) {
		ts_sb_addf(sb, "but its content is %s, not a dump; it was not read", u->kind);
		return;
	}
	if (u->binary) {
		binary_text(u, sb);
		ts_sb_adds(sb, ", ");
	} else if (u->nul_at >= 0) {
		ts_sb_addf(sb, "with a NUL byte at offset %lld, ", (long long)u->nul_at);
	}
	ts_sb_adds(sb, "but it opens with bytes");
	for (int i = 0; i < u->nhead; i++)
		ts_sb_addf(sb, " %02x", u->head[i]);
	ts_sb_adds(sb, " that open no dump trainscope reads (pickle protocols 0-5, JSON, Python repr); ");
	ts_sb_adds(sb, u->binary ? "it is no text log either, and nothing was read from it" :
		   "it was read as a text log, and no dump entry came from it");
}

int ts_hang_nothing_read(const struct ts_hang_set *s, struct ts_err *err)
{
	size_t empty = 0, binary = 0, bad = 0;
	const struct ts_hang_unread *u = NULL;

	for (size_t i = 0; i < s->unread.n; i++) {
		empty += s->unread.v[i].empty;
		binary += s->unread.v[i].binary;
		bad += s->unread.v[i].error != NULL;
		if (!u && (s->unread.v[i].empty || s->unread.v[i].binary || s->unread.v[i].error))
			u = &s->unread.v[i];
	}
	if (!s->files.n || !u || empty + binary + bad != s->files.n)
		return 0;
	if (bad) {
		if (s->files.n == 1)
			return ts_err_at(err, TS_EPARSE, s->files.v[u->file], u->bad_at, u->error_line, "%s",
					 u->error);
		return ts_err_at(err, TS_EPARSE, s->files.v[u->file], 0, -1,
				 "every input is empty (%zu), binary (%zu) or a dump that cannot be read "
				 "(%zu): no hang evidence to read", empty, binary, bad);
	}
	if (!binary)
		return ts_err_at(err, TS_EPARSE, s->files.v[u->file], 0, -1, "%s",
				 s->files.n == 1 ? "empty input (0 bytes): no hang evidence to read" :
				 "every input is empty (0 bytes): no hang evidence to read");
	if (s->files.n == 1) {
		struct ts_sb sb;
		int rc;

		ts_sb_init(&sb);
		binary_text(u, &sb);
		rc = ts_err_at(err, TS_EPARSE, s->files.v[u->file], u->bad_at >= 0 ? u->bad_at : 0, -1,
			       "%s: neither a Flight Recorder dump (pickle, JSON or Python repr) nor a "
			       "text log; no hang evidence to read", sb.failed ? "binary" : sb.buf);
		ts_sb_release(&sb);
		return rc;
	}
	return ts_err_at(err, TS_EPARSE, s->files.v[u->file], 0, -1,
			 "every input is empty (%zu) or binary (%zu), neither a Flight Recorder dump nor "
			 "a text log: no hang evidence to read", empty, binary);
}

void hang_ranks_text(struct ts_sb *sb, const int64_t *v, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		if (sb->len)
			ts_sb_adds(sb, ", ");
		if (j > i)
			ts_sb_addf(sb, "%lld-%lld", (long long)v[i], (long long)v[j]);
		else
			ts_sb_addf(sb, "%lld", (long long)v[i]);
		i = j + 1;
	}
}

/* "0-2, 5, 7-9" */
static const char *ranks_str(struct ts_hang_result *r, const int64_t *v, size_t n)
{
	struct ts_sb sb;
	const char *out;

	ts_sb_init(&sb);
	hang_ranks_text(&sb, v, n);
	out = sb.failed ? NULL : ts_arena_strndup(&r->arena, sb.len ? sb.buf : "none", sb.len ? sb.len : 4);
	ts_sb_release(&sb);
	return out;
}

static const char *ordinal(struct ts_hang_result *r, int64_t n)
{
	int64_t t = n % 100;
	const char *suf = t >= 11 && t <= 13 ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
	return fmt(r, "%lld%s", (long long)n, suf);
}

static void note(struct ts_hang_incident *in, const char *text)
{
	if (text)
		TS_VEC_PUSH(in->notes, text);
}

static void finding(struct ts_hang_result *r, const char *text)
{
	if (text)
		TS_VEC_PUSH(r->findings, text);
}

static int int_below(const void *elem, const void *key)
{
	return *(const int *)elem < *(const int *)key;
}

/* in->evs stays sorted and unique; lines mostly come in order, so the
 * last is looked at first */
static void add_ev(struct ts_hang_incident *in, int ev)
{
	size_t lo;
	if (ev < 0)
		return;
	if (!in->evs.n || in->evs.v[in->evs.n - 1] < ev)
		lo = in->evs.n;
	else
		lo = ts_lower_bound(in->evs.v, in->evs.n, sizeof(*in->evs.v), &ev, int_below);
	if (lo < in->evs.n && in->evs.v[lo] == ev)
		return;
	if (TS_VEC_RESERVE(in->evs, in->evs.n + 1))
		return;
	memmove(in->evs.v + lo + 1, in->evs.v + lo, (in->evs.n - lo) * sizeof(int));
	in->evs.v[lo] = ev;
	in->evs.n++;
}

static int new_inc(struct an *a, enum ts_hang_class cls, int pg, int64_t seq)
{
	struct ts_hang_incident in;
	memset(&in, 0, sizeof(in));
	in.cls = cls;
	in.pg = pg;
	in.seq = seq;
	in.numel_in = in.numel_out = in.timeout_ms = in.ran_for_ms = -1;
	in.last_enqueued = in.last_completed = -1;
	if (TS_VEC_PUSH(a->r->incidents, in) || TS_VEC_PUSH(a->has_progress, 0))
		return -1;
	return (int)a->r->incidents.n - 1;
}

/* the log incident of (pg, seq); an unknown group on either side matches */
static int find_inc(struct an *a, int pg, int64_t seq)
{
	for (size_t i = 0; i < a->r->incidents.n; i++) {
		struct ts_hang_incident *in = &a->r->incidents.v[i];
		if (in->seq == seq && (in->pg == pg || in->pg < 0 || pg < 0)) {
			if (in->pg < 0)
				in->pg = pg;
			return (int)i;
		}
	}
	return -1;
}

/* an incident citing a line of file; pg -2 = any group; rank -1 = any */
static int inc_of_file(struct an *a, uint32_t file, int pg, int64_t rank)
{
	for (size_t i = 0; i < a->r->incidents.n; i++) {
		const struct ts_hang_incident *in = &a->r->incidents.v[i];
		if (pg != -2 && in->pg != pg && in->pg >= 0 && pg >= 0)
			continue;
		if (rank >= 0 && !hang_set_has(&in->reporting, rank))
			continue;
		for (size_t k = 0; k < in->evs.n; k++)
			if (a->s->evs.v[in->evs.v[k]].file == file)
				return (int)i;
	}
	return -1;
}

static void set_op(struct ts_hang_incident *in, const char *op, enum ts_hang_op kind)
{
	if (!in->op && op) {
		in->op = op;
		in->kind = kind;
	}
}

/* ------------------------------------------------------------ dumps */

struct wref {
	int pg;
	int64_t seq;
	int64_t rank;
	size_t idx;
};

static int cmp_wref(const void *x, const void *y)
{
	const struct wref *a = x, *b = y;
	if (a->pg != b->pg)
		return a->pg < b->pg ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int same_sig(const struct ts_hang_work *a, const struct ts_hang_work *b)
{
	const char *oa = a->op ? strchr(a->op, ':') : NULL, *ob = b->op ? strchr(b->op, ':') : NULL;
	oa = oa ? oa + 1 : a->op;
	ob = ob ? ob + 1 : b->op;
	/* state is not compared: a collective completed on one rank means every
	 * rank joined it, the others only discover it later (pytorch #119249) */
	if (a->kind != b->kind)
		return 0;
	/* P2P coalesced groups differ by rank by design: compare kind and state */
	if (a->shape && b->shape && strcmp(a->shape, "p2p") == 0 && strcmp(b->shape, "p2p") == 0)
		return 1;
	if ((oa == NULL) != (ob == NULL) || (oa && strcmp(oa, ob)))
		return 0;
	if ((a->shape == NULL) != (b->shape == NULL) || (a->shape && strcmp(a->shape, b->shape)))
		return 0;
	return 1;
}

static const char *state_name(enum ts_hang_state st)
{
	switch (st) {
	case TS_ST_SCHEDULED: return "scheduled";
	case TS_ST_STARTED: return "started";
	case TS_ST_COMPLETED: return "completed";
	case TS_ST_TIMED_OUT: return "timed out";
	default: return "unknown";
	}
}

static int dump_ev(struct ts_hang_set *s, struct ts_hang_work *w)
{
	char buf[TS_HANG_TEXT_MAX];
	int n;
	if (w->ev >= 0)
		return w->ev;
	n = snprintf(buf, sizeof(buf), "rank %lld record %lld: %s seq %lld %s %s",
		     (long long)w->rank, (long long)w->record_id, w->op ? w->op : "?",
		     (long long)w->seq, w->shape ? w->shape : "", state_name(w->state));
	if (n < 0)
		return -1;
	w->ev = hang_add_ev(s, w->file, -1, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	return w->ev;
}

static void parse_ranks(const char *ranks, void *vec)
{
	const char *p = ranks;
	int64_t v;

	while (p && hang_ranks_next(&p, &v))
		hang_set_add(vec, v);
}

/* rank's pg_status in group pg (its dump's last enqueued and completed
 * seq); 0 when its dump has none */
static int pg_status_of(const struct ts_hang_set *s, int pg, int64_t rank, int64_t *enq, int64_t *done)
{
	for (size_t k = 0; k < s->status.n; k++)
		if (s->status.v[k].pg == pg && s->status.v[k].rank == rank && s->status.v[k].enqueued >= 0) {
			*enq = s->status.v[k].enqueued;
			*done = s->status.v[k].completed;
			return 1;
		}
	return 0;
}

/* The last seq rank has in the group's sorted refs [b, e); INT64_MIN if
 * none. A truncated dump tells nothing past it. */
static int64_t horizon(const struct wref *refs, size_t b, size_t e, int64_t rank)
{
	int64_t h = INT64_MIN;

	for (size_t i = b; i < e; i++)
		if (refs[i].rank == rank && refs[i].seq > h)
			h = refs[i].seq;
	return h;
}

/* How many of the entries refs [b, e) (one seq) are in state st. */
static size_t seq_states(const struct an *a, const struct wref *refs, size_t b, size_t e, enum ts_hang_state st)
{
	size_t n = 0;

	for (size_t k = b; k < e; k++)
		n += a->s->works.v[refs[k].idx].state == st;
	return n;
}

/* How many of the entries refs [b, e) come from a dump that records
 * starts (struct ts_hang_dump timing). */
static size_t seq_timed(const struct an *a, const struct wref *refs, size_t b, size_t e)
{
	size_t n = 0;

	for (size_t k = b; k < e; k++)
		for (size_t d = 0; d < a->s->dumps.n; d++)
			if (a->s->dumps.v[d].file == a->s->works.v[refs[k].idx].file) {
				n += a->s->dumps.v[d].timing != 0;
				break;
			}
	return n;
}

/* What would decide a seq for ranks without a dump, in words. */
static const char *what_to_collect(struct ts_hang_result *r, const struct hang_i64v *undumped)
{
	const char *who = undumped->n == 1 ? fmt(r, "rank %lld's", (long long)undumped->v[0]) :
			  fmt(r, "ranks %s'", ranks_str(r, undumped->v, undumped->n));
	return fmt(r, "%s dump (TORCH_NCCL_DUMP_ON_TIMEOUT=1, TORCH_FR_DUMP_TEMP_FILE on a path every host "
		   "writes), %s log (a watchdog line gives its last enqueued seq) or a py-spy dump of %s",
		   who, who, undumped->n == 1 ? "it" : "them");
}

/* A group whose entries were all completed up to seq last, where a
 * member's pg_status says it enqueued a later seq and did not complete it
 * (its entries of it lost: a dump written without entries, a ring buffer
 * that kept none of the group): at the first such seq, the members whose
 * pg_status says they never enqueued it (or, without one, whose whole dump
 * ends before it) never issued it: not_joined on them. */
static int status_beyond(struct an *a, int pg, const struct hang_i64v *members, const struct hang_i64v *dumped,
			 const struct hang_i64v *cut, int64_t last)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;
	struct hang_i64v issued = { 0 }, absent = { 0 };
	int64_t seq = INT64_MAX, enq, done;
	int rc = 0;

	for (size_t k = 0; k < members->n; k++)
		if (pg_status_of(s, pg, members->v[k], &enq, &done) && enq > done && done + 1 > last &&
		    done + 1 < seq)
			seq = done + 1;
	for (size_t k = 0; k < members->n && seq != INT64_MAX; k++) {
		int64_t m = members->v[k];
		if (!hang_set_has(dumped, m) || (!pg_status_of(s, pg, m, &enq, &done) && hang_set_has(cut, m))) {
			seq = INT64_MAX; /* no dump, or a cut one without pg_status: cannot tell */
			break;
		}
		if (!pg_status_of(s, pg, m, &enq, &done))
			enq = last; /* its whole dump's entries of the group end at last at most */
		hang_set_add(enq >= seq ? &issued : &absent, m);
	}
	if (seq != INT64_MAX && issued.n && absent.n) {
		int id = new_inc(a, TS_HANG_NOT_JOINED, pg, seq);
		if (id < 0) {
			rc = TS_ENOMEM;
		} else {
			struct ts_hang_incident *in = &r->incidents.v[id];
			for (size_t k = 0; k < members->n; k++)
				hang_set_add(&in->reporting, members->v[k]);
			for (size_t k = 0; k < absent.n; k++) {
				hang_set_add(&in->culprits, absent.v[k]);
				hang_set_add(&in->missing, absent.v[k]);
			}
			in->last_enqueued = seq;
			in->last_completed = seq - 1;
			note(in, fmt(r, "ranks %s have no entry for seq %lld, but the pg_status of their dumps says "
				     "they enqueued it and did not complete it; ranks %s never enqueued it (their "
				     "pg_status, or their whole dump, ends before seq %lld): they never issued it (the "
				     "op is unknown: no dump holds its entry)", ranks_str(r, issued.v, issued.n),
				     (long long)seq, ranks_str(r, absent.v, absent.n), (long long)seq));
		}
	}
	TS_VEC_RELEASE(issued);
	TS_VEC_RELEASE(absent);
	return rc;
}

/* analyse one group's sorted refs [b, e); cut: ranks whose dump is
 * truncated, with their horizons in this group (cut_h) */
static int dump_group(struct an *a, struct wref *refs, size_t b, size_t e, const struct hang_i64v *dumped,
		      const struct hang_i64v *cut)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;
	int pg = refs[b].pg;
	struct hang_i64v members = { 0 }, have = { 0 }, undumped = { 0 }, cut_h = { 0 };
	int64_t start = INT64_MIN, first_min = INT64_MAX;
	int rc = 0, found = 0;

	if (pg >= 0 && s->pgs.v[pg].ranks)
		parse_ranks(s->pgs.v[pg].ranks, &members);
	{
		/* ranks with entries: per-rank minimum seq (refs are sorted by seq) */
		struct hang_i64v seen = { 0 };
		for (size_t i = b; i < e; i++) {
			if (!hang_set_has(&seen, refs[i].rank)) {
				hang_set_add(&seen, refs[i].rank);
				if (refs[i].seq > start)
					start = refs[i].seq;
				if (refs[i].seq < first_min)
					first_min = refs[i].seq;
			}
		}
		for (size_t i = 0; i < seen.n; i++)
			hang_set_add(&have, seen.v[i]);
		TS_VEC_RELEASE(seen);
	}
	/* no rank set in the dumps: the default group is the world when
	 * --world-size says how big it is, else the ranks that have entries */
	if (!members.n && a->world > 0 && pg >= 0 && s->pgs.v[pg].desc &&
	    strcmp(s->pgs.v[pg].desc, "default_pg") == 0)
		for (int64_t k = 0; k < a->world && k < 65536; k++)
			hang_set_add(&members, k);
	if (!members.n)
		for (size_t i = 0; i < have.n; i++)
			hang_set_add(&members, have.v[i]);
	for (size_t i = 0; i < members.n; i++)
		if (!hang_set_has(dumped, members.v[i]))
			hang_set_add(&undumped, members.v[i]);
	for (size_t i = 0; i < cut->n; i++)
		if (TS_VEC_PUSH(cut_h, horizon(refs, b, e, cut->v[i])))
			rc = TS_ENOMEM;
	/* truncated buffers: ranks whose first entry of the group is later */
	if (start > first_min) {
		struct hang_i64v late = { 0 };
		struct hang_i64v seen = { 0 };
		for (size_t i = b; i < e; i++)
			if (!hang_set_has(&seen, refs[i].rank)) {
				hang_set_add(&seen, refs[i].rank);
				if (refs[i].seq > first_min)
					hang_set_add(&late, refs[i].rank);
			}
		finding(r, fmt(r, "group %s: the ring buffer of rank(s) %s starts later (seq %lld, others from %lld): "
			       "entries before seq %lld were overwritten, so the comparison starts there",
			       pg >= 0 && s->pgs.v[pg].guid ? s->pgs.v[pg].guid : "?",
			       ranks_str(r, late.v, late.n), (long long)start, (long long)first_min, (long long)start));
		TS_VEC_RELEASE(late);
		TS_VEC_RELEASE(seen);
	}
	for (size_t i = b; i < e;) {
		size_t j = i;
		int64_t seq = refs[i].seq;
		struct hang_i64v present = { 0 }, absent = { 0 }, unknown = { 0 }, issued = { 0 }, done_on = { 0 };
		int all_done = 1;
		while (j < e && refs[j].seq == seq)
			j++;
		if (seq < start) {
			i = j;
			continue;
		}
		for (size_t k = i; k < j; k++) {
			hang_set_add(&present, refs[k].rank);
			if (s->works.v[refs[k].idx].state != TS_ST_COMPLETED)
				all_done = 0;
			else
				hang_set_add(&done_on, refs[k].rank);
		}
		for (size_t k = 0; k < members.n; k++) {
			size_t c;
			int64_t enq, done;
			if (!hang_set_has(dumped, members.v[k]) || hang_set_has(&present, members.v[k]))
				continue;
			/* no entry, but the dump's pg_status says how far the rank got */
			if (pg_status_of(s, pg, members.v[k], &enq, &done)) {
				if (enq < seq) {
					hang_set_add(&absent, members.v[k]);
				} else {
					hang_set_add(&issued, members.v[k]);
					if (done < seq)
						all_done = 0;
				}
				continue;
			}
			for (c = 0; c < cut->n && cut->v[c] != members.v[k]; c++)
				;
			/* past the end of a truncated dump: not seen, not absent */
			if (c < cut->n && c < cut_h.n && seq > cut_h.v[c])
				hang_set_add(&unknown, members.v[k]);
			else
				hang_set_add(&absent, members.v[k]);
		}
		if (all_done && !absent.n) {
			TS_VEC_RELEASE(present);
			TS_VEC_RELEASE(absent);
			TS_VEC_RELEASE(unknown);
			TS_VEC_RELEASE(issued);
			TS_VEC_RELEASE(done_on);
			i = j;
			continue;
		}
		/* signature groups among the present ranks */
		size_t ng = 0, *gfirst = calloc(j - i, sizeof(size_t)), *gcount = calloc(j - i, sizeof(size_t));
		size_t *gof = calloc(j - i, sizeof(size_t));
		int id = gfirst && gcount && gof ? new_inc(a, TS_HANG_UNDECIDED, pg, seq) : -1;
		if (id < 0) {
			free(gfirst);
			free(gcount);
			free(gof);
			TS_VEC_RELEASE(present);
			TS_VEC_RELEASE(absent);
			TS_VEC_RELEASE(unknown);
			TS_VEC_RELEASE(issued);
			TS_VEC_RELEASE(done_on);
			rc = TS_ENOMEM;
			break;
		}
		for (size_t k = i; k < j; k++) {
			size_t g;
			for (g = 0; g < ng; g++)
				if (same_sig(&s->works.v[refs[gfirst[g]].idx], &s->works.v[refs[k].idx]))
					break;
			if (g == ng)
				gfirst[ng++] = k;
			gcount[g]++;
			gof[k - i] = g;
		}
		size_t big = 0, ties = 0;
		for (size_t g = 1; g < ng; g++)
			if (gcount[g] > gcount[big])
				big = g;
		for (size_t g = 0; g < ng; g++)
			ties += gcount[g] == gcount[big];
		struct ts_hang_work *maj = &s->works.v[refs[gfirst[big]].idx];
		struct ts_hang_incident *in = &r->incidents.v[id];
		set_op(in, maj->op, maj->kind);
		in->numel_in = maj->numel_in;
		in->numel_out = maj->numel_out;
		in->timeout_ms = maj->timeout_ms;
		for (size_t k = 0; k < members.n; k++)
			if (hang_set_has(dumped, members.v[k]))
				hang_set_add(&in->reporting, members.v[k]);
		for (size_t k = i; k < j && k < i + 32; k++)
			add_ev(in, dump_ev(s, &s->works.v[refs[k].idx]));
		if (absent.n) {
			in->cls = TS_HANG_NOT_JOINED;
			for (size_t k = 0; k < absent.n; k++) {
				hang_set_add(&in->missing, absent.v[k]);
				hang_set_add(&in->culprits, absent.v[k]);
			}
			note(in, fmt(r, "ranks %s have no entry for seq %lld in their dumps: they never issued it",
				     ranks_str(r, absent.v, absent.n), (long long)seq));
		} else if (ng > 1 && ties == 1) {
			in->cls = TS_HANG_MISMATCH;
			for (size_t k = i; k < j; k++)
				if (gof[k - i] != big)
					hang_set_add(&in->culprits, refs[k].rank);
			note(in, fmt(r, "%zu of %zu ranks agree on (op, sizes, dtypes, state); the minority is blamed",
				     gcount[big], j - i));
		} else if (ng > 1) {
			in->cls = TS_HANG_UNDECIDED;
			note(in, fmt(r, "tie: %zu groups of %zu ranks disagree at seq %lld and none is the majority",
				     ties, gcount[big], (long long)seq));
		} else if (undumped.n && !unknown.n && !done_on.n && undumped.n < present.n + issued.n) {
			/* every member with evidence issued it and waits: the few
			 * without a dump are the likely culprits (a rank that died or
			 * hangs outside the collective often writes no dump) */
			in->cls = TS_HANG_NOT_JOINED;
			for (size_t k = 0; k < undumped.n; k++) {
				hang_set_add(&in->missing, undumped.v[k]);
				hang_set_add(&in->culprits, undumped.v[k]);
			}
			note(in, fmt(r, "no dump from ranks %s, the only members without evidence; every other member "
				     "issued seq %lld and waits in it: ranks %s likely never issued it or died "
				     "(inferred: their dump is missing)", ranks_str(r, undumped.v, undumped.n),
				     (long long)seq, ranks_str(r, undumped.v, undumped.n)));
		} else if (undumped.n && !unknown.n && !done_on.n && !issued.n &&
			   seq_states(a, refs, i, j, TS_ST_STARTED) == j - i) {
			/* not fewer than the members with evidence, but those
			 * started it: their kernels run and wait on the others */
			in->cls = TS_HANG_NOT_JOINED;
			for (size_t k = 0; k < undumped.n; k++) {
				hang_set_add(&in->missing, undumped.v[k]);
				hang_set_add(&in->culprits, undumped.v[k]);
			}
			note(in, fmt(r, "inferred, hedged: ranks %s issued seq %lld and their dumps show it "
				     "started (TORCH_NCCL_ENABLE_TIMING): their kernels run, waiting on the other "
				     "members; ranks %s wrote no dump, so they likely never issued it or died. A "
				     "network hang with every member in it looks the same from this side: collect "
				     "%s to confirm", ranks_str(r, present.v, present.n), (long long)seq,
				     ranks_str(r, undumped.v, undumped.n), what_to_collect(r, &undumped)));
		} else if ((undumped.n || unknown.n) && !done_on.n) {
			in->cls = TS_HANG_UNDECIDED;
			if (undumped.n && seq_states(a, refs, i, j, TS_ST_SCHEDULED) == j - i &&
			    seq_timed(a, refs, i, j) == j - i)
				note(in, fmt(r, "no dump from ranks %s, and ranks %s never started seq %lld on their "
					     "GPUs though their dumps record starts (TORCH_NCCL_ENABLE_TIMING): their "
					     "own GPUs had not reached it (a kernel before it, or a stream wait, on "
					     "them), which the missing dumps do not explain: look at ranks %s first, "
					     "and collect %s", ranks_str(r, undumped.v, undumped.n),
					     ranks_str(r, present.v, present.n), (long long)seq,
					     ranks_str(r, present.v, present.n), what_to_collect(r, &undumped)));
			else if (undumped.n)
				note(in, fmt(r, "no dump from ranks %s: cannot tell whether they joined. They are "
					     "not fewer than the %zu member%s with evidence, so no majority decides, "
					     "and seq %lld issued and not completed on the others says nothing of "
					     "its peers%s; collect %s", ranks_str(r, undumped.v, undumped.n),
					     present.n + issued.n, present.n + issued.n == 1 ? "" : "s", (long long)seq,
					     seq_timed(a, refs, i, j) ? "" : " (without TORCH_NCCL_ENABLE_TIMING=1 "
					     "\"scheduled\" cannot tell a kernel waiting on its peer from one never "
					     "started)", what_to_collect(r, &undumped)));
		} else if (seq <= 1 || (maj->kind == TS_OP_COALESCED && seq <= 2)) {
			in->cls = TS_HANG_INIT;
			note(in, "the first collective of the group never completed: communicator set-up / topology");
		} else {
			in->cls = TS_HANG_ALL_STUCK;
			note(in, done_on.n ? "every member issued it with the same signature; not every member completed it"
			     : "every member issued it with the same signature; none completed (network, library or GPU)");
		}
		if (unknown.n)
			note(in, fmt(r, "the dumps of ranks %s are truncated before seq %lld: cannot tell "
				     "whether they joined", ranks_str(r, unknown.v, unknown.n), (long long)seq));
		if (issued.n)
			note(in, fmt(r, "ranks %s have no entry for seq %lld, but the pg_status of their dumps "
				     "says they enqueued it", ranks_str(r, issued.v, issued.n), (long long)seq));
		if (done_on.n && !absent.n && ng == 1)
			note(in, fmt(r, "ranks %s completed seq %lld: every member joined it (a watchdog can "
				     "discover a completion late, or mark an aborted collective completed: "
				     "pytorch #119249); no rank is blamed for its state",
				     ranks_str(r, done_on.v, done_on.n), (long long)seq));
		if (ng > 1) {
			for (size_t g = 0; g < ng; g++) {
				struct hang_i64v gr = { 0 };
				const struct ts_hang_work *w = &s->works.v[refs[gfirst[g]].idx];
				for (size_t k = i; k < j; k++)
					if (gof[k - i] == g)
						hang_set_add(&gr, refs[k].rank);
				note(in, fmt(r, "ranks %s: %s %s %s", ranks_str(r, gr.v, gr.n), w->op ? w->op : "?",
					     w->shape ? w->shape : "", state_name(w->state)));
				TS_VEC_RELEASE(gr);
			}
		}
		/* pg_status of the reporting ranks */
		for (size_t k = 0; k < s->status.n; k++)
			if (s->status.v[k].pg == pg) {
				if (s->status.v[k].enqueued > in->last_enqueued)
					in->last_enqueued = s->status.v[k].enqueued;
				if (s->status.v[k].completed >= 0 &&
				    (in->last_completed < 0 || s->status.v[k].completed < in->last_completed))
					in->last_completed = s->status.v[k].completed;
			}
		free(gfirst);
		free(gcount);
		free(gof);
		TS_VEC_RELEASE(present);
		TS_VEC_RELEASE(absent);
		TS_VEC_RELEASE(unknown);
		TS_VEC_RELEASE(issued);
		TS_VEC_RELEASE(done_on);
		found = 1;
		break; /* one incident per group: later seqs follow from this one */
	}
	if (!rc && !found)
		rc = status_beyond(a, pg, &members, dumped, cut, refs[e - 1].seq);
	TS_VEC_RELEASE(members);
	TS_VEC_RELEASE(have);
	TS_VEC_RELEASE(undumped);
	TS_VEC_RELEASE(cut_h);
	return rc;
}

/* A rank's collective entries not completed, (rank, pg, seq) sorted. */
struct pend { int64_t rank; int pg; int64_t seq; size_t idx; };

static int cmp_pend(const void *x, const void *y)
{
	const struct pend *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->pg != b->pg)
		return a->pg < b->pg ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

struct casc {
	struct an *a;
	size_t first, n;            /* the dump incidents */
	struct hang_i64v *orig;     /* their culprits before the cascade */
	struct pend *pend;
	size_t npend;
};

/* An incident that waits on no rank's progress elsewhere: every member
 * issued the collective (all_stuck, init) or they disagree on it
 * (mismatch): a rank waiting in it is held there, its culprits (if any)
 * are where the chain ends. */
static int terminal(const struct ts_hang_incident *in)
{
	return in->cls == TS_HANG_ALL_STUCK || in->cls == TS_HANG_INIT || in->cls == TS_HANG_MISMATCH;
}

static int pend_rank_below(const void *elem, const void *rank)
{
	return ((const struct pend *)elem)->rank < *(const int64_t *)rank;
}

/* The dump incident (other than inc) in which rank waits: it has an entry
 * of that incident's group and seq not completed, and is not blamed there;
 * -1 when none. *w: that entry. */
static int waits_in(const struct casc *c, int64_t rank, size_t inc, size_t *w)
{
	size_t lo = ts_lower_bound(c->pend, c->npend, sizeof(*c->pend), &rank, pend_rank_below);

	for (; lo < c->npend && c->pend[lo].rank == rank; lo++)
		for (size_t j = 0; j < c->n; j++) {
			const struct ts_hang_incident *in = &c->a->r->incidents.v[c->first + j];
			if (j == inc || in->pg != c->pend[lo].pg || in->seq != c->pend[lo].seq ||
			    (!c->orig[j].n && !terminal(in)) || hang_set_has(&c->orig[j], rank) ||
			    hang_set_has(&in->culprits, rank))
				continue;
			*w = c->pend[lo].idx;
			return (int)j;
		}
	return -1;
}

/* Incident j has a culprit that waits in no other incident (depth bounds
 * a cycle of ranks waiting on each other: no root then). */
static int has_root(const struct casc *c, size_t j, int depth)
{
	size_t w;

	if (depth <= 0)
		return 0;
	if (terminal(&c->a->r->incidents.v[c->first + j]))
		return 1;
	for (size_t k = 0; k < c->orig[j].n; k++) {
		int next = waits_in(c, c->orig[j].v[k], j, &w);
		if (next < 0 || has_root(c, (size_t)next, depth - 1))
			return 1;
	}
	return 0;
}

static const char *pg_name(const struct ts_hang_set *s, int pg)
{
	if (pg < 0)
		return "?";
	return s->pgs.v[pg].guid ? s->pgs.v[pg].guid : s->pgs.v[pg].desc ? s->pgs.v[pg].desc : "?";
}

/* The global rank of a point-to-point entry's peer: "send 0->1" and
 * "recv 1<-0" name group ranks, mapped through the group's rank set; -1
 * when the name or the group's ranks do not say. */
/* the group rank a point-to-point entry names as its peer, -1 */
static long long p2p_local_peer(const struct ts_hang_work *w)
{
	const char *arrow;

	if (!w->op)
		return -1;
	arrow = strstr(w->op, w->kind == TS_OP_SEND ? "->" : "<-");
	if (!arrow || arrow[2] < '0' || arrow[2] > '9')
		return -1;
	return strtoll(arrow + 2, NULL, 10);
}

/* the group rank of global rank g in group pg, -1 */
static long long group_rank(const struct ts_hang_set *s, int pg, int64_t g)
{
	const char *p = pg >= 0 ? s->pgs.v[pg].ranks : NULL;
	long long k = 0;
	int64_t v;

	while (p && hang_ranks_next(&p, &v)) {
		if (v == g)
			return k;
		k++;
	}
	return -1;
}

static int64_t p2p_peer(const struct ts_hang_set *s, const struct ts_hang_work *w)
{
	const char *p;
	long long local;
	int64_t v;

	if (!w->op || w->pg < 0 || !s->pgs.v[w->pg].ranks || (local = p2p_local_peer(w)) < 0)
		return -1;
	p = s->pgs.v[w->pg].ranks;
	while (hang_ranks_next(&p, &v))
		if (local-- == 0)
			return v;
	return -1;
}

/* The first point-to-point entry of rank's dump not completed (the one its
 * communication stream is held in), its peer's global rank in *peer; -1
 * when none. */
static ssize_t p2p_wait(const struct casc *c, int64_t rank, int64_t *peer)
{
	int f = rank_file(c->a, rank);
	ssize_t best = f >= 0 ? p2p_first_pending(c->a, f) : -1;

	*peer = best >= 0 ? p2p_peer(c->a->s, &c->a->s->works.v[best]) : -1;
	return *peer >= 0 ? best : -1;
}

static int blamed(const struct casc *c, int64_t rank)
{
	for (size_t j = 0; j < c->n; j++)
		if (hang_set_has(&c->orig[j], rank))
			return 1;
	return 0;
}

static int waits_anywhere(const struct casc *c, int64_t rank)
{
	size_t w;
	for (size_t j = 0; j < c->n; j++)
		if (hang_set_has(&c->orig[j], rank) && waits_in(c, rank, j, &w) >= 0)
			return 1;
	return 0;
}

/* rank waits in a point-to-point op on a peer that is blamed and waits
 * nowhere, or on a peer that waits the same way (a pipeline: stage 3
 * receives from stage 2, which receives from stage 1, which never sent);
 * the peer it waits on directly in *peer. A cycle has no root. */
static int p2p_root(const struct casc *c, int64_t rank, int depth, int64_t *peer)
{
	int64_t q, q2;

	if (depth <= 0 || p2p_wait(c, rank, &q) < 0 || q == rank)
		return 0;
	*peer = q;
	if (p2p_wait(c, q, &q2) >= 0)
		return p2p_root(c, q, depth - 1, &q2);
	return blamed(c, q) && !waits_anywhere(c, q);
}

/* Cascades across groups: a rank blamed for not joining seq N of one group
 * whose own dump shows it waiting in a collective of another group, itself
 * hung on other ranks, is a victim (it never got to seq N): it stays a
 * missing rank but is not a culprit, and the chain is said. */
static int cascade(struct an *a, size_t first, const struct hang_i64v *dup_files)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;
	struct casc c;
	int rc = 0;

	memset(&c, 0, sizeof(c));
	c.a = a;
	c.first = first;
	c.n = r->incidents.n - first;
	if (c.n < 1)
		return 0;
	c.orig = calloc(c.n, sizeof(*c.orig));
	c.pend = malloc((s->works.n + s->status.n + 1) * sizeof(*c.pend));
	if (!c.orig || !c.pend) {
		rc = TS_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->works.n; i++) {
		const struct ts_hang_work *w = &s->works.v[i];
		if (!w->from_dump || w->rank < 0 || w->seq < 0 || w->state == TS_ST_COMPLETED ||
		    w->kind == TS_OP_SEND || w->kind == TS_OP_RECV ||
		    (dup_files->n && hang_set_has(dup_files, w->file)))
			continue;
		c.pend[c.npend].rank = w->rank;
		c.pend[c.npend].pg = w->pg;
		c.pend[c.npend].seq = w->seq;
		c.pend[c.npend].idx = i;
		c.npend++;
	}
	/* a rank whose pg_status says it enqueued a seq it did not complete
	 * waits in it, its entry kept or not (idx SIZE_MAX: from pg_status) */
	for (size_t i = 0; i < s->status.n; i++) {
		const struct ts_hang_pg_status *st = &s->status.v[i];
		if (st->rank < 0 || st->pg < 0 || st->enqueued <= st->completed)
			continue;
		c.pend[c.npend].rank = st->rank;
		c.pend[c.npend].pg = st->pg;
		c.pend[c.npend].seq = st->completed + 1;
		c.pend[c.npend].idx = SIZE_MAX;
		c.npend++;
	}
	ts_sort(c.pend, c.npend, sizeof(*c.pend), cmp_pend);
	for (size_t j = 0; j < c.n; j++) {
		const struct ts_hang_incident *in = &r->incidents.v[first + j];
		if (in->cls == TS_HANG_NOT_JOINED)
			for (size_t k = 0; k < in->culprits.n; k++)
				if (hang_set_add(&c.orig[j], in->culprits.v[k]))
					rc = TS_ENOMEM;
	}
	for (size_t j = 0; j < c.n && !rc; j++) {
		struct ts_hang_incident *in = &r->incidents.v[first + j];
		size_t keep = 0;

		for (size_t k = 0; k < c.orig[j].n; k++) {
			int64_t rank = c.orig[j].v[k];
			size_t w;
			int next = waits_in(&c, rank, j, &w);

			if (next < 0) {
				int64_t peer;
				ssize_t pw;
				if (!p2p_root(&c, rank, 16, &peer) || (pw = p2p_wait(&c, rank, &peer)) < 0) {
					in->culprits.v[keep++] = rank;
					continue;
				}
				const struct ts_hang_work *wk = &s->works.v[pw];
				/* a point-to-point incident has no seq */
				const char *at = in->seq >= 0 ? fmt(r, "seq %lld", (long long)in->seq)
							      : "its point-to-point op";
				note(in, fmt(r, "rank %lld is a victim, not a culprit: its dump shows it waiting in "
					     "point-to-point %s (record %lld, group %s, %s) on rank %lld, whose own "
					     "wait ends in a blamed rank that waits nowhere; it never got to %s "
					     "here", (long long)rank,
					     wk->op ? wk->op : "?", (long long)wk->record_id, pg_name(s, wk->pg),
					     state_name(wk->state), (long long)peer, at));
				finding(r, fmt(r, "cascade: group %s stopped at %s because rank %lld waits in "
					       "point-to-point %s of group %s on rank %lld", pg_name(s, in->pg),
					       at, (long long)rank, wk->op ? wk->op : "?",
					       pg_name(s, wk->pg), (long long)peer));
				continue;
			}
			if (!has_root(&c, (size_t)next, 16)) {
				in->culprits.v[keep++] = rank;
				continue;
			}
			{
				const struct ts_hang_incident *up = &r->incidents.v[first + (size_t)next];
				const struct ts_hang_work *wk = w == SIZE_MAX ? NULL : &s->works.v[w];
				/* whom it waits on: the culprits of a not_joined or
				 * mismatch incident; in an all_stuck or init one, on no
				 * rank (every member issued it) */
				const struct hang_i64v *on = up->cls == TS_HANG_MISMATCH ? (const struct hang_i64v *)&up->culprits
							     : &c.orig[next];
				const char *whom = on->n ? fmt(r, "ranks %s", ranks_str(r, on->v, on->n))
						   : fmt(r, "no rank: every member issued it and none completed it (%s)",
							 ts_hang_class_name(up->cls));
				note(in, fmt(r, "rank %lld is a victim, not a culprit: its dump shows it waiting in "
					     "group %s seq %lld (%s, %s), which waits on %s (incident %zu); "
					     "it never got to seq %lld here", (long long)rank,
					     pg_name(s, up->pg), (long long)up->seq, wk && wk->op ? wk->op : "?",
					     wk ? state_name(wk->state) : "enqueued and not completed, by its pg_status",
					     whom, first + (size_t)next + 1, (long long)in->seq));
				finding(r, fmt(r, "cascade: group %s stopped at seq %lld because rank %lld waits in "
					       "group %s seq %lld on %s: group %s was stuck first",
					       pg_name(s, in->pg), (long long)in->seq, (long long)rank,
					       pg_name(s, up->pg), (long long)up->seq, whom, pg_name(s, up->pg)));
			}
		}
		if (in->cls == TS_HANG_NOT_JOINED)
			in->culprits.n = keep;
	}
out:
	for (size_t j = 0; c.orig && j < c.n; j++)
		TS_VEC_RELEASE(c.orig[j]);
	free(c.orig);
	free(c.pend);
	return rc;
}

/* The lowest record id of a rank's dump entries: above 0, its ring buffer
 * wrapped and the entries before it are lost. INT64_MAX when none. */
static int64_t first_record(const struct an *a, int f)
{
	int64_t lo = INT64_MAX;

	for (size_t i = a->wbeg[f]; i < a->wend[f]; i++) {
		const struct ts_hang_work *w = &a->s->works.v[i];
		if (w->from_dump && w->file == (uint32_t)f && w->record_id < lo)
			lo = w->record_id;
	}
	return lo;
}

/* Point-to-point ops of rank in group pg with peer of one kind, before
 * record id `before` (INT64_MAX: all). Sends and receives between two ranks
 * of one communicator match in the order they were issued. */
static int64_t p2p_count(const struct an *a, int f, int pg, int64_t peer, enum ts_hang_op kind, int64_t before)
{
	int64_t n = 0;
	long long local = group_rank(a->s, pg, peer);

	for (size_t i = a->wbeg[f]; i < a->wend[f] && local >= 0; i++) {
		const struct ts_hang_work *w = &a->s->works.v[i];
		if (w->from_dump && w->file == (uint32_t)f && w->pg == pg && w->kind == kind &&
		    w->record_id < before && p2p_local_peer(w) == local)
			n++;
	}
	return n;
}

/* A rank's first point-to-point op not completed (send k to peer q) whose
 * peer's dump, whole and not wrapped like its own, holds fewer than k + 1
 * receives from it (or sends to it, for a receive): the peer never issued
 * the matching op. One not_joined incident per group, the peers blamed. */
static int p2p_unmatched(struct an *a, const struct hang_i64v *dumped, const struct hang_i64v *cut,
			 const struct hang_i64v *dup_files)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;

	for (size_t i = 0; i < s->dumps.n; i++) {
		const struct ts_hang_dump *d = &s->dumps.v[i];
		const struct ts_hang_work *e = NULL;
		int64_t q, k, have;
		enum ts_hang_op other;
		int id = -1, qf;
		ssize_t ei;

		if (d->rank < 0 || hang_set_has(dup_files, d->file))
			continue;
		if ((ei = p2p_first_pending(a, (int)d->file)) < 0)
			continue;
		e = &s->works.v[ei];
		if (e->record_id < 0 || (q = p2p_peer(s, e)) < 0 || q == d->rank ||
		    !hang_set_has(dumped, q) || hang_set_has(cut, q) || (qf = rank_file(a, q)) < 0 ||
		    first_record(a, (int)d->file) != 0 || first_record(a, qf) != 0)
			continue;
		other = e->kind == TS_OP_SEND ? TS_OP_RECV : TS_OP_SEND;
		k = p2p_count(a, (int)d->file, e->pg, q, e->kind, e->record_id);
		have = p2p_count(a, qf, e->pg, d->rank, other, INT64_MAX);
		if (have > k)
			continue;
		for (size_t j = 0; j < r->incidents.n; j++)
			if (r->incidents.v[j].pg == e->pg && r->incidents.v[j].seq < 0 &&
			    (r->incidents.v[j].kind == TS_OP_SEND || r->incidents.v[j].kind == TS_OP_RECV))
				id = (int)j;
		if (id < 0) {
			const char *ranks = s->pgs.v[e->pg].ranks;
			id = new_inc(a, TS_HANG_NOT_JOINED, e->pg, -1);
			if (id < 0)
				return TS_ENOMEM;
			set_op(&r->incidents.v[id], e->op, e->kind);
			if (ranks) {
				struct hang_i64v m = { 0 };
				parse_ranks(ranks, &m);
				for (size_t x = 0; x < m.n; x++)
					if (hang_set_has(dumped, m.v[x]))
						hang_set_add(&r->incidents.v[id].reporting, m.v[x]);
				TS_VEC_RELEASE(m);
			}
		}
		struct ts_hang_incident *in = &r->incidents.v[id];
		hang_set_add(&in->culprits, q);
		hang_set_add(&in->missing, q);
		add_ev(in, dump_ev(s, (struct ts_hang_work *)e));
		note(in, fmt(r, "rank %lld waits in point-to-point %s (record %lld, %s), its %s %s %lld in "
			     "group %s: the dump of rank %lld holds %lld %s %s rank %lld in that group, so rank "
			     "%lld never issued the matching %s", (long long)d->rank, e->op ? e->op : "?",
			     (long long)e->record_id, state_name(e->state), ordinal(r, k + 1),
			     e->kind == TS_OP_SEND ? "send to" : "receive from", (long long)q, pg_name(s, e->pg),
			     (long long)q, (long long)have, other == TS_OP_RECV ? "receives" : "sends",
			     other == TS_OP_RECV ? "from" : "to", (long long)d->rank, (long long)q,
			     other == TS_OP_RECV ? "receive" : "send"));
	}
	return 0;
}

/* The next point-to-point op of rank file f from index *i on (advanced
 * past it) in group pg of one kind with group rank `local` as its peer;
 * NULL at the end. Entries are pushed in record order, so the k-th found
 * is the k-th issued. */
static const struct ts_hang_work *p2p_next(const struct an *a, int f, size_t *i, int pg, long long local,
					   enum ts_hang_op kind)
{
	for (; *i < a->wend[f]; (*i)++) {
		const struct ts_hang_work *w = &a->s->works.v[*i];
		if (w->from_dump && w->file == (uint32_t)f && w->pg == pg && w->kind == kind &&
		    p2p_local_peer(w) == local) {
			(*i)++;
			return w;
		}
	}
	return NULL;
}

/* Rank d's sends to q in group pg against q's receives from d, in issue
 * order (one walk of each dump): the first pair whose sizes or dtypes
 * differ makes a mismatch incident of the group, naming both entries. */
static int p2p_pair_sizes(struct an *a, const struct ts_hang_dump *d, int64_t q, int qf, int pg)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;
	long long to_q = group_rank(s, pg, q), from_d = group_rank(s, pg, d->rank);
	size_t i = a->wbeg[d->file], j = a->wbeg[qf];
	const struct ts_hang_work *e, *m;
	int64_t nth = 0;

	if (to_q < 0 || from_d < 0)
		return 0;
	while ((e = p2p_next(a, (int)d->file, &i, pg, to_q, TS_OP_SEND)) &&
	       (m = p2p_next(a, qf, &j, pg, from_d, TS_OP_RECV))) {
		nth++;
		if (!e->shape || !m->shape || strcmp(e->shape, m->shape) == 0)
			continue;
		int id = new_inc(a, TS_HANG_MISMATCH, pg, -1);
		if (id < 0)
			return TS_ENOMEM;
		struct ts_hang_incident *in = &r->incidents.v[id];
		set_op(in, e->op, e->kind);
		in->numel_in = e->numel_in;
		in->numel_out = e->numel_out;
		in->timeout_ms = e->timeout_ms;
		hang_set_add(&in->reporting, d->rank);
		hang_set_add(&in->reporting, q);
		add_ev(in, dump_ev(s, (struct ts_hang_work *)e));
		add_ev(in, dump_ev(s, (struct ts_hang_work *)m));
		note(in, fmt(r, "rank %lld's %s send to %lld in group %s (record %lld, %s, %s) and rank "
			     "%lld's %s receive from %lld (record %lld, %s, %s) are one transfer and differ "
			     "in size or dtype: one of the two ranks posted the wrong tensor (a receive "
			     "larger than its send waits for data that never comes); the two dumps cannot "
			     "say which, so neither is blamed: look at both ranks' code at this transfer",
			     (long long)d->rank, ordinal(r, nth), (long long)q, pg_name(s, pg),
			     (long long)e->record_id, e->shape, state_name(e->state), (long long)q,
			     ordinal(r, nth), (long long)d->rank, (long long)m->record_id, m->shape,
			     state_name(m->state)));
		return 1;
	}
	return 0;
}

/* Sends against the receives they match: the k-th send from rank p to q
 * in a group meets q's k-th receive from p (both dumps whole and not
 * wrapped, as for p2p_unmatched); sizes or dtypes that differ are a
 * mismatch, as fr_trace checks them (a receive posted larger than its send
 * waits for data that never comes). Two ranks cannot say which side is
 * wrong: the incident names both and blames neither. One incident per
 * group, on the first such pair found. Each (group, peer) of a dump's
 * sends is walked once against the peer's dump. */
static int p2p_sizes(struct an *a, const struct hang_i64v *dumped, const struct hang_i64v *cut,
		     const struct hang_i64v *dup_files)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;
	struct pair { int pg; int64_t q; };
	TS_VEC(struct pair) done = { 0 };
	int rc = 0;

	for (size_t i = 0; i < s->dumps.n && rc >= 0; i++) {
		const struct ts_hang_dump *d = &s->dumps.v[i];
		int f = (int)d->file;

		if (d->rank < 0 || hang_set_has(dup_files, d->file) || hang_set_has(cut, d->rank) ||
		    first_record(a, f) != 0)
			continue;
		done.n = 0;
		for (size_t k = a->wbeg[f]; k < a->wend[f] && rc >= 0; k++) {
			const struct ts_hang_work *e = &s->works.v[k];
			int64_t q;
			int qf, seen = 0;

			if (!e->from_dump || e->file != (uint32_t)f || e->kind != TS_OP_SEND ||
			    (q = p2p_peer(s, e)) < 0 || q == d->rank || !hang_set_has(dumped, q) ||
			    hang_set_has(cut, q) || (qf = rank_file(a, q)) < 0 || first_record(a, qf) != 0)
				continue;
			for (size_t x = 0; x < done.n; x++)
				seen |= done.v[x].pg == e->pg && done.v[x].q == q;
			for (size_t x = 0; x < r->incidents.n; x++)
				seen |= r->incidents.v[x].pg == e->pg && r->incidents.v[x].cls == TS_HANG_MISMATCH &&
					r->incidents.v[x].seq < 0;
			if (seen)
				continue;
			struct pair pr = { e->pg, q };
			if (TS_VEC_PUSH(done, pr))
				rc = TS_ENOMEM;
			else
				rc = p2p_pair_sizes(a, d, q, qf, e->pg);
		}
	}
	TS_VEC_RELEASE(done);
	return rc < 0 ? rc : 0;
}

/* One collective entry with its enqueue and completion times, for
 * stragglers(). */
struct sref { int pg; int64_t rank, seq, created, completed; int done; };

static int cmp_sref(const void *x, const void *y)
{
	const struct sref *a = x, *b = y;
	if (a->pg != b->pg)
		return a->pg < b->pg ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_i64(const void *x, const void *y)
{
	const int64_t *a = x, *b = y;
	return *a < *b ? -1 : *a > *b;
}

/* The entry at seq in one rank's refs [b, e) (sorted by seq), or NULL. */
static const struct sref *sref_at(const struct sref *v, size_t b, size_t e, int64_t seq)
{
	while (b < e) {
		size_t mid = b + (e - b) / 2;
		if (v[mid].seq == seq)
			return &v[mid];
		if (v[mid].seq < seq)
			b = mid + 1;
		else
			e = mid;
	}
	return NULL;
}

/* One rank's run [b, e) of a group's refs, and its clock's offset (ns,
 * subtracted from its times; 0 when the clocks are not aligned). */
struct srun { size_t b, e; int64_t shift; };

/* At seq, the run whose rank enqueued it last (*late) and how long after
 * the last of the others (ns, each run's shift removed); INT64_MIN when a
 * run has no entry there or (need_done) one is not completed. */
static int64_t sref_lag(const struct sref *v, const struct srun *runs, size_t n, int64_t seq, int need_done,
			size_t *late)
{
	int64_t top = INT64_MIN, second = INT64_MIN;

	for (size_t k = 0; k < n; k++) {
		const struct sref *x = sref_at(v, runs[k].b, runs[k].e, seq);
		int64_t t;
		if (!x || (need_done && !x->done))
			return INT64_MIN;
		t = x->created - runs[k].shift;
		if (t > top) {
			second = top;
			top = t;
			*late = k;
		} else if (t > second) {
			second = t;
		}
	}
	return n >= 2 ? top - second : INT64_MIN;
}

/* The index of rank in the sorted unique vector ranks, which holds it:
 * the last entry not above it (0 when there is none). */
static size_t rank_index(const struct hang_i64v *ranks, int64_t rank)
{
	size_t above = ts_lower_bound(ranks->v, ranks->n, sizeof(*ranks->v), &rank, ts_i64_not_above);

	return above ? above - 1 : 0;
}

/* The runs of the group whose refs start at v[b]: *e is set past them. */
static int group_runs(const struct sref *v, size_t n, size_t b, size_t *e, void *runs_vec)
{
	TS_VEC(struct srun) *runs = runs_vec;
	int pg = v[b].pg;

	runs->n = 0;
	for (*e = b; *e < n && v[*e].pg == pg; (*e)++)
		if (*e == b || v[*e - 1].rank != v[*e].rank) {
			struct srun run = { *e, *e + 1, 0 };
			if (TS_VEC_PUSH(*runs, run))
				return TS_ENOMEM;
		} else {
			runs->v[runs->n - 1].e = *e + 1;
		}
	return 0;
}

/* Two ranks' clocks: off[a] = off[b] + d (ns); each edge is kept both
 * ways (b, a, -d), sorted by a. */
struct sedge { size_t a, b; int64_t d; };

static int sedge_a_below(const void *elem, const void *a)
{
	return ((const struct sedge *)elem)->a < *(const size_t *)a;
}

static int cmp_sedge(const void *x, const void *y)
{
	const struct sedge *p = x, *q = y;
	return p->a < q->a ? -1 : p->a > q->a;
}

/*
 * Each dumped rank's clock offset (ns): a collective completes on every
 * member at once, so the difference of two members'
 * time_discovered_completed_ns at a seq both completed is the offset
 * between their clocks (plus the watchdogs' discovery delays); its median
 * over at least TS_HANG_CLOCK_SHARED such seqs is taken, against one
 * member of each group, and offsets are carried from group to group
 * through shared members. ranks: the sorted ranks of v. set[k] is the
 * index of the lowest rank ranks->v[k]'s clock is aligned with (itself
 * when none other), off[k] its offset to that rank's clock.
 */
static int clock_offsets(const struct sref *v, size_t n, const struct hang_i64v *ranks, int64_t *off,
			 size_t *set)
{
	TS_VEC(struct srun) runs = { 0 };
	TS_VEC(struct sedge) edges = { 0 };
	int64_t *d = malloc((n ? n : 1) * sizeof(*d));
	size_t *queue = malloc((ranks->n ? ranks->n : 1) * sizeof(*queue));
	int rc = 0;

	if (!d || !queue) {
		free(d);
		free(queue);
		return TS_ENOMEM;
	}
	for (size_t b = 0, e; b < n && !rc; b = e) {
		ssize_t ref = -1;
		if ((rc = group_runs(v, n, b, &e, &runs)))
			break;
		/* the group's first member with enough timed completions */
		for (size_t k = 0; k < runs.n && ref < 0; k++) {
			size_t timed = 0;
			for (size_t i = runs.v[k].b; i < runs.v[k].e; i++)
				timed += v[i].done && v[i].completed >= 0;
			if (timed >= TS_HANG_CLOCK_SHARED)
				ref = (ssize_t)k;
		}
		for (size_t k = 0; ref >= 0 && k < runs.n && !rc; k++) {
			const struct srun *rr = &runs.v[ref];
			size_t nd = 0;
			if (k == (size_t)ref)
				continue;
			for (size_t i = runs.v[k].b; i < runs.v[k].e; i++) {
				const struct sref *x = sref_at(v, rr->b, rr->e, v[i].seq);
				if (x && x->done && v[i].done && x->completed >= 0 && v[i].completed >= 0)
					d[nd++] = v[i].completed - x->completed;
			}
			if (nd < TS_HANG_CLOCK_SHARED)
				continue;
			ts_sort(d, nd, sizeof(*d), cmp_i64);
			struct sedge ed = { rank_index(ranks, v[runs.v[k].b].rank), rank_index(ranks, v[rr->b].rank),
					    d[(nd - 1) / 2] };
			struct sedge back = { ed.b, ed.a, -ed.d };
			if (TS_VEC_PUSH(edges, ed) || TS_VEC_PUSH(edges, back))
				rc = TS_ENOMEM;
		}
	}
	/* from each rank not reached yet, lowest first, along the edges */
	ts_sort(edges.v, edges.n, sizeof(*edges.v), cmp_sedge);
	for (size_t k = 0; k < ranks->n; k++)
		set[k] = SIZE_MAX;
	for (size_t root = 0; root < ranks->n && !rc; root++) {
		size_t head = 0, tail = 0;
		if (set[root] != SIZE_MAX)
			continue;
		set[root] = root;
		off[root] = 0;
		queue[tail++] = root;
		while (head < tail) {
			size_t x = queue[head++];
			size_t lo = ts_lower_bound(edges.v, edges.n, sizeof(*edges.v), &x, sedge_a_below);
			for (size_t i = lo; i < edges.n && edges.v[i].a == x; i++) {
				const struct sedge *ed = &edges.v[i];
				if (set[ed->b] != SIZE_MAX)
					continue;
				set[ed->b] = root;
				off[ed->b] = off[x] - ed->d;
				queue[tail++] = ed->b;
			}
		}
	}
	TS_VEC_RELEASE(edges);
	TS_VEC_RELEASE(runs);
	free(queue);
	free(d);
	return rc;
}

/* Late stragglers in groups that did not hang: at a group's last seq that
 * every member holds, all completed, the rank that enqueued it
 * TS_HANG_STRAGGLER_MS or more after the last of the others held them up.
 * time_created_ns is each host's wall clock: the members' clocks are
 * aligned first (clock_offsets). When a member's cannot be, a lag read on
 * the hosts' own clocks cannot be told from an offset between them (nor a
 * victim, late in its next collective, from the peer it waited on): no
 * straggler is named there, and one finding says so with each such lag.
 * One finding per straggler, its largest lag. first_inc: the dumps' first
 * incident. */
static int stragglers(struct an *a, size_t first_inc, const struct hang_i64v *dup_files)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;
	struct sref *v = malloc((s->works.n ? s->works.n : 1) * sizeof(*v));
	TS_VEC(struct srun) runs = { 0 };
	struct hang_i64v ranks = { 0 }, unaligned = { 0 };
	int64_t *off = NULL;
	size_t *set = NULL;
	const int64_t thr = (int64_t)TS_HANG_STRAGGLER_MS * 1000000;
	size_t n = 0;
	int rc = 0;
	struct ts_sb lags;

	if (!v)
		return TS_ENOMEM;
	ts_sb_init(&lags);
	for (size_t i = 0; i < s->works.n && !rc; i++) {
		const struct ts_hang_work *w = &s->works.v[i];
		if (!w->from_dump || w->rank < 0 || w->pg < 0 || w->seq < 0 || w->created_ns < 0 ||
		    w->kind == TS_OP_SEND || w->kind == TS_OP_RECV || hang_set_has(dup_files, w->file))
			continue;
		v[n].pg = w->pg;
		v[n].rank = w->rank;
		v[n].seq = w->seq;
		v[n].created = w->created_ns;
		v[n].completed = w->completed_ns;
		v[n].done = w->state == TS_ST_COMPLETED;
		rc = hang_set_add(&ranks, w->rank);
		n++;
	}
	if (!rc && (!(off = malloc((ranks.n ? ranks.n : 1) * sizeof(*off))) ||
		    !(set = malloc((ranks.n ? ranks.n : 1) * sizeof(*set)))))
		rc = TS_ENOMEM;
	ts_sort(v, n, sizeof(*v), cmp_sref);
	if (!rc)
		rc = clock_offsets(v, n, &ranks, off, set);
	for (size_t b = 0, e = 0; b < n && !rc; b = e) {
		size_t late = 0, late0 = 0;
		int pg = v[b].pg, hung = 0, aligned = 1;
		struct hang_i64v members = { 0 };
		int64_t last = INT64_MAX, first = INT64_MIN, lag = INT64_MIN, lag0 = 0;

		if ((rc = group_runs(v, n, b, &e, &runs)))
			break;
		for (size_t j = first_inc; j < r->incidents.n; j++)
			hung |= r->incidents.v[j].pg == pg;
		/* sorted by (rank, seq): a rank's first and last entries end its run */
		for (size_t k = 0; k < runs.n; k++) {
			size_t m = rank_index(&ranks, v[runs.v[k].b].rank);
			first = v[runs.v[k].b].seq > first ? v[runs.v[k].b].seq : first;
			last = v[runs.v[k].e - 1].seq < last ? v[runs.v[k].e - 1].seq : last;
			aligned &= set[m] == set[rank_index(&ranks, v[runs.v[0].b].rank)];
			runs.v[k].shift = off[m];
		}
		if (!aligned)
			for (size_t k = 0; k < runs.n; k++)
				runs.v[k].shift = 0;
		parse_ranks(s->pgs.v[pg].ranks, &members);
		if (!hung && runs.n >= 2 && (!members.n || members.n == runs.n) && first <= last)
			lag = sref_lag(v, runs.v, runs.n, last, 1, &late);
		if (lag >= thr) {
			lag0 = sref_lag(v, runs.v, runs.n, first, 0, &late0);
			lag0 = late0 == late ? lag0 : 0;
		}
		if (lag >= thr && !aligned) {
			/* on unaligned clocks a lag cannot be told from an
			 * offset between hosts (nor a victim from the rank it
			 * waited on): said, not named a straggler */
			for (size_t k = 0; k < runs.n && !rc; k++)
				rc = hang_set_add(&unaligned, v[runs.v[k].b].rank);
			ts_sb_addf(&lags, "%sgroup %s (seq %lld): rank %lld, %lld ms (%lld ms at its first seq every "
				   "member holds)", lags.len ? "; " : "", pg_name(s, pg), (long long)last,
				   (long long)v[runs.v[late].b].rank, (long long)(lag / 1000000),
				   (long long)(lag0 / 1000000));
			lag = INT64_MIN;
		}
		if (!rc && lag >= thr) {
			int64_t rank = v[runs.v[late].b].rank;
			size_t k;
			for (k = 0; k < r->stragglers.n && r->stragglers.v[k].rank != rank; k++)
				;
			if (k == r->stragglers.n) {
				struct ts_hang_straggler z = { rank, -1, -1, -1, 0, 0, 0, -1 };
				if (TS_VEC_PUSH(r->stragglers, z))
					rc = TS_ENOMEM;
			}
			if (!rc) {
				struct ts_hang_straggler *z = &r->stragglers.v[k];
				z->groups++;
				if (lag / 1000000 > z->lag_ms) {
					z->lag_ms = lag / 1000000;
					z->seq = last;
					z->pg = pg;
					z->first_lag_ms = lag0 / 1000000;
					z->offset_ms = runs.v[late].shift / 1000000;
					z->offset_from = ranks.v[set[rank_index(&ranks, rank)]];
				}
			}
		}
		TS_VEC_RELEASE(members);
	}
	for (size_t k = 0; k < r->stragglers.n && !rc; k++) {
		const struct ts_hang_straggler *z = &r->stragglers.v[k];
		finding(r, fmt(r, "straggler: rank %lld entered the last collective of group %s (seq %lld) "
			       "%lld ms after the last of the other members (time_created_ns)%s: the job did "
			       "not hang there, every member completed it, but rank %lld held the others up; "
			       "the hosts' clocks were aligned by the collectives the members completed "
			       "together (time_discovered_completed_ns: rank %lld's clock reads %lld ms %s "
			       "rank %lld's, taken off), and at the group's first seq every member holds its "
			       "lag was %lld ms; look at what rank %lld did before it (data loading, host "
			       "stalls, a slow GPU)",
			       (long long)z->rank, pg_name(s, z->pg), (long long)z->seq, (long long)z->lag_ms,
			       z->groups > 1 ? fmt(r, " (the largest lag of %zu groups)", z->groups) : "",
			       (long long)z->rank, (long long)z->rank,
			       (long long)(z->offset_ms < 0 ? -z->offset_ms : z->offset_ms),
			       z->offset_ms < 0 ? "behind" : "ahead of", (long long)z->offset_from,
			       (long long)z->first_lag_ms, (long long)z->rank));
	}
	if (!rc && unaligned.n) {
		const char *who = ranks_str(r, unaligned.v, unaligned.n);
		struct ts_sb sb;

		ts_sb_init(&sb);
		ts_sb_addf(&sb, "clocks: the hosts' clocks of the members of groups of ranks %s", who ? who : "?");
		ts_sb_addf(&sb, " could not be aligned with each other (fewer than %d collectives completed "
			   "on both sides with time_discovered_completed_ns), and in such groups that did not "
			   "hang a member entered the last collective %d ms or more after the others on the "
			   "hosts' own clocks (%s): an offset between hosts reads as such a lag, and a rank "
			   "waiting on a late peer is late in its next collective too, so no straggler is named "
			   "there", TS_HANG_CLOCK_SHARED, TS_HANG_STRAGGLER_MS, lags.len && !lags.failed ? lags.buf : "");
		if (sb.failed || lags.failed)
			rc = TS_ENOMEM;
		else
			finding(r, r->clock_finding = fmt(r, "%s", sb.buf));
		ts_sb_release(&sb);
	}
	ts_sb_release(&lags);
	TS_VEC_RELEASE(unaligned);
	TS_VEC_RELEASE(ranks);
	TS_VEC_RELEASE(runs);
	free(set);
	free(off);
	free(v);
	return rc;
}

static int dumps(struct an *a)
{
	struct ts_hang_set *s = a->s;
	struct wref *refs;
	size_t n = 0;
	struct hang_i64v dumped = { 0 }, cut = { 0 }, dup_files = { 0 };
	size_t first_inc = a->r->incidents.n;
	int rc = 0;

	if (!s->dumps.n)
		return 0;
	for (size_t i = 0; i < s->dumps.n; i++) {
		const struct ts_hang_dump *d = &s->dumps.v[i];
		if (d->rank >= 0)
			hang_set_add(&dumped, d->rank);
		if (d->rank >= 0 && d->entries_cut)
			hang_set_add(&cut, d->rank);
		if (d->cut_at >= 0) {
			struct ts_sb sb;

			ts_sb_init(&sb);
			hang_cut_text(s, d, &sb);
			finding(a->r, sb.failed ? NULL : ts_arena_strndup(&a->r->arena, sb.buf, sb.len));
			ts_sb_release(&sb);
		}
	}
	{
		struct hang_i64v members = { 0 }, missing = { 0 };

		if (hang_missing_dumps(s, &members, &missing) == 0 && missing.n) {
			struct ts_sb sb;

			ts_sb_init(&sb);
			hang_missing_text(&members, &missing, &sb);
			finding(a->r, sb.failed ? NULL : ts_arena_strndup(&a->r->arena, sb.buf, sb.len));
			ts_sb_release(&sb);
		}
		TS_VEC_RELEASE(members);
		TS_VEC_RELEASE(missing);
	}
	/* a second dump of one rank is not compared (a finding names both) */
	for (size_t i = 0; i < s->dumps.n; i++) {
		int first = hang_dup_dump(s, i);
		struct ts_sb sb;

		if (first < 0)
			continue;
		hang_set_add(&dup_files, s->dumps.v[i].file);
		ts_sb_init(&sb);
		hang_dup_text(s, i, (size_t)first, &sb);
		finding(a->r, sb.failed ? NULL : ts_arena_strndup(&a->r->arena, sb.buf, sb.len));
		ts_sb_release(&sb);
	}
	refs = malloc((s->works.n ? s->works.n : 1) * sizeof(*refs));
	if (!refs) {
		TS_VEC_RELEASE(dumped);
		TS_VEC_RELEASE(cut);
		TS_VEC_RELEASE(dup_files);
		return TS_ENOMEM;
	}
	for (size_t i = 0; i < s->works.n; i++) {
		const struct ts_hang_work *w = &s->works.v[i];
		if (!w->from_dump || w->rank < 0 || w->seq < 0 || w->kind == TS_OP_SEND || w->kind == TS_OP_RECV)
			continue;
		if (dup_files.n && hang_set_has(&dup_files, w->file))
			continue;
		refs[n].pg = w->pg;
		refs[n].seq = w->seq;
		refs[n].rank = w->rank;
		refs[n].idx = i;
		n++;
	}
	ts_sort(refs, n, sizeof(*refs), cmp_wref);
	for (size_t i = 0; i < n && !rc;) {
		size_t j = i;
		while (j < n && refs[j].pg == refs[i].pg)
			j++;
		rc = dump_group(a, refs, i, j, &dumped, &cut);
		i = j;
	}
	free(refs);
	a->wbeg = calloc(s->files.n ? s->files.n : 1, sizeof(size_t));
	a->wend = calloc(s->files.n ? s->files.n : 1, sizeof(size_t));
	a->dup_files = &dup_files;
	if (!a->wbeg || !a->wend)
		rc = TS_ENOMEM;
	for (size_t f = 0; !rc && f < s->files.n; f++)
		a->wbeg[f] = SIZE_MAX;
	for (size_t i = 0; !rc && i < s->works.n; i++) {
		const struct ts_hang_work *w = &s->works.v[i];
		if (!w->from_dump || w->file >= s->files.n)
			continue;
		if (a->wbeg[w->file] == SIZE_MAX)
			a->wbeg[w->file] = i;
		a->wend[w->file] = i + 1;
	}
	for (size_t f = 0; !rc && f < s->files.n; f++)
		if (a->wbeg[f] == SIZE_MAX)
			a->wbeg[f] = 0;
	if (!rc)
		rc = p2p_unmatched(a, &dumped, &cut, &dup_files);
	if (!rc)
		rc = p2p_sizes(a, &dumped, &cut, &dup_files);
	if (!rc)
		rc = cascade(a, first_inc, &dup_files);
	if (!rc)
		rc = stragglers(a, first_inc, &dup_files);
	free(a->wbeg);
	free(a->wend);
	a->wbeg = a->wend = NULL;
	a->dup_files = NULL;
	TS_VEC_RELEASE(dumped);
	TS_VEC_RELEASE(cut);
	TS_VEC_RELEASE(dup_files);
	for (size_t i = 0; i < s->dumps.n; i++)
		if (s->dumps.v[i].rank < 0)
			finding(a->r, fmt(a->r, "%s: a dump whose rank is unknown (no \"rank\" key, no trailing number in the file name) is left out",
					  s->files.v[s->dumps.v[i].file]));
	/* each file's collective entries and those with a sequence id, in one
	 * pass over the entries (one pass per dump was ranks^2 x entries) */
	size_t *colls = calloc(2 * (s->files.n ? s->files.n : 1), sizeof(*colls));
	if (!colls && !rc)
		rc = TS_ENOMEM;
	for (size_t k = 0; colls && k < s->works.n; k++) {
		const struct ts_hang_work *w = &s->works.v[k];
		if (!w->from_dump || w->file >= s->files.n || w->kind == TS_OP_SEND ||
		    w->kind == TS_OP_RECV)
			continue;
		colls[2 * w->file]++;
		colls[2 * w->file + 1] += w->seq >= 0;
	}
	for (size_t i = 0; colls && i < s->dumps.n; i++) {
		const struct ts_hang_dump *d = &s->dumps.v[i];
		if (d->file < s->files.n && colls[2 * d->file] && !colls[2 * d->file + 1])
			finding(a->r, fmt(a->r, "%s: none of its %zu collective entries has a sequence "
					  "id (collective_seq_id, or seq_id before dump version 2): they "
					  "cannot be matched with other ranks' and are left out",
					  s->files.v[d->file], colls[2 * d->file]));
	}
	free(colls);
	/* point-to-point ops are not matched across ranks: one left pending
	 * is said, never passed over as "no hang evidence" */
	for (size_t k = 0; k < s->works.n; k++) {
		const struct ts_hang_work *w = &s->works.v[k];
		if (!w->from_dump || (w->kind != TS_OP_SEND && w->kind != TS_OP_RECV) ||
		    w->state == TS_ST_COMPLETED || w->state == TS_ST_UNKNOWN)
			continue;
		a->r->p2p_pending++;
		finding(a->r, fmt(a->r, "%s: rank %lld's point-to-point %s (record %lld) is %s and not "
				  "completed; only a peer whose whole, unwrapped dump lacks the matching op "
				  "is blamed: look at its peer's dump and stack", s->files.v[w->file], (long long)w->rank,
				  w->op ? w->op : "op", (long long)w->record_id,
				  w->state == TS_ST_SCHEDULED ? "scheduled" :
				  w->state == TS_ST_STARTED ? "started" : "timed out"));
	}
	return rc;
}

/* ------------------------------------------------------------ logs */

static int logs(struct an *a)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;

	for (size_t i = 0; i < s->works.n; i++) {
		const struct ts_hang_work *w = &s->works.v[i];
		int id;
		if (w->from_dump)
			continue;
		if ((id = find_inc(a, w->pg, w->seq)) < 0 && (id = new_inc(a, TS_HANG_UNDECIDED, w->pg, w->seq)) < 0)
			return TS_ENOMEM;
		struct ts_hang_incident *in = &r->incidents.v[id];
		set_op(in, w->op, w->kind);
		if (in->numel_in < 0)
			in->numel_in = w->numel_in;
		if (in->numel_out < 0)
			in->numel_out = w->numel_out;
		if (w->timeout_ms > in->timeout_ms)
			in->timeout_ms = w->timeout_ms;
		if (w->ran_for_ms > in->ran_for_ms)
			in->ran_for_ms = w->ran_for_ms;
		if (w->rank >= 0)
			hang_set_add(&in->reporting, w->rank);
		add_ev(in, w->ev);
		if (w->rank >= 0 && w->state == TS_ST_TIMED_OUT) {
			struct logref l = { id, w->rank, i, -1, -1, w->pg, w->ev };
			if (TS_VEC_PUSH(a->lrefs, l))
				return TS_ENOMEM;
		}
	}
	for (size_t i = 0; i < s->progress.n; i++) {
		const struct ts_hang_progress *p = &s->progress.v[i];
		int id = -1;
		if (p->seq >= 0) {
			if ((id = find_inc(a, p->pg, p->seq)) < 0 && (id = new_inc(a, TS_HANG_UNDECIDED, p->pg, p->seq)) < 0)
				return TS_ENOMEM;
		} else {
			/* a dump signal names no seq: the incident of its group,
			 * one from the same file first */
			id = inc_of_file(a, s->evs.v[p->ev].file, p->pg, -1);
			for (size_t k = 0; k < r->incidents.n && id < 0; k++)
				if (r->incidents.v[k].pg == p->pg || r->incidents.n == 1)
					id = (int)k;
			if (id < 0 && (id = new_inc(a, TS_HANG_UNDECIDED, p->pg, -1)) < 0)
				return TS_ENOMEM;
		}
		struct ts_hang_incident *in = &r->incidents.v[id];
		if (in->pg < 0)
			in->pg = p->pg;
		if (p->rank >= 0)
			hang_set_add(&in->reporting, p->rank);
		if (p->signal_from >= 0)
			hang_set_add(&in->reporting, p->signal_from);
		/* the numbers of a rank behind the seq are its own (a note) */
		if (in->last_enqueued < 0 && !(in->seq >= 0 && p->enqueued >= 0 && p->enqueued < in->seq)) {
			in->last_enqueued = p->enqueued;
			in->last_completed = p->completed;
		}
		if (in->seq >= 0 && p->enqueued >= in->seq && p->completed >= 0 && p->completed < in->seq)
			a->has_progress.v[id] = 1;
		if (p->signal_from >= 0)
			note(in, fmt(r, "rank %lld received the dump signal from rank %lld, which timed out (seq not printed)",
				     (long long)p->rank, (long long)p->signal_from));
		add_ev(in, p->ev);
		/* a rank whose last enqueued work is below the seq never issued it */
		if (p->rank >= 0 && in->seq >= 0 && p->enqueued >= 0 && p->enqueued < in->seq &&
		    !(p->pg >= 0 && in->pg >= 0 && p->pg != in->pg)) {
			struct logref l = { id, p->rank, SIZE_MAX, p->enqueued, p->completed, p->pg, p->ev };
			if (TS_VEC_PUSH(a->lrefs, l))
				return TS_ENOMEM;
		}
	}
	return 0;
}

/* a->lrefs grouped by incident, each in lrefs order: incident i's are
 * a->lrefs.v[at[k]] for k in [from[i], from[i + 1]) */
struct lref_index {
	size_t *from; /* incidents + 2 */
	size_t *at;   /* one per lref */
};

static int lref_index_build(struct lref_index *x, const struct an *a)
{
	size_t ni = a->r->incidents.n, nl = a->lrefs.n;

	x->from = calloc(ni + 2, sizeof(*x->from));
	x->at = malloc((nl ? nl : 1) * sizeof(*x->at));
	if (!x->from || !x->at)
		return TS_ENOMEM;
	for (size_t k = 0; k < nl; k++)
		x->from[a->lrefs.v[k].inc + 2]++;
	for (size_t i = 2; i < ni + 2; i++)
		x->from[i] += x->from[i - 1];
	for (size_t k = 0; k < nl; k++)
		x->at[x->from[a->lrefs.v[k].inc + 1]++] = k;
	return 0;
}

static void lref_index_release(struct lref_index *x)
{
	free(x->from);
	free(x->at);
}

/* the log text of a timeout's signature: "OpType=X, NumelIn=a, NumelOut=b" */
static int same_log_sig(const struct ts_hang_work *a, const struct ts_hang_work *b)
{
	if (a->numel_in != b->numel_in || a->numel_out != b->numel_out)
		return 0;
	if (a->kind != TS_OP_UNKNOWN || b->kind != TS_OP_UNKNOWN)
		return a->kind == b->kind;
	return (a->op == NULL) == (b->op == NULL) && (!a->op || strcmp(a->op, b->op) == 0);
}

/* Timeout lines of one (group, seq) that disagree on OpType or Numel: the
 * minority is blamed (a tie stays undecided), as for dumps (nccl #1409).
 * Returns 1 when the lines disagree. */
static int log_mismatch(struct an *a, const struct lref_index *x, size_t id)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;
	struct ts_hang_incident *in = &r->incidents.v[id];
	size_t sig[8], nsig = 0, big = 0, ties = 0;
	struct hang_i64v ranks[8], seen = { 0 };
	int over = 0;

	memset(ranks, 0, sizeof(ranks));
	for (size_t k = x->from[id]; k < x->from[id + 1]; k++) {
		const struct logref *l = &a->lrefs.v[x->at[k]];
		size_t g;
		if (l->work == SIZE_MAX || hang_set_has(&seen, l->rank))
			continue;
		hang_set_add(&seen, l->rank);
		for (g = 0; g < nsig && !same_log_sig(&s->works.v[sig[g]], &s->works.v[l->work]); g++)
			;
		if (g == nsig) {
			if (nsig == 8) {
				over = 1;
				continue;
			}
			sig[nsig++] = l->work;
		}
		hang_set_add(&ranks[g], l->rank);
	}
	TS_VEC_RELEASE(seen);
	if (nsig < 2) {
		TS_VEC_RELEASE(ranks[0]);
		return 0;
	}
	for (size_t g = 1; g < nsig; g++)
		if (ranks[g].n > ranks[big].n)
			big = g;
	for (size_t g = 0; g < nsig; g++)
		ties += ranks[g].n == ranks[big].n;
	in->cls = ties == 1 && !over ? TS_HANG_MISMATCH : TS_HANG_UNDECIDED;
	for (size_t g = 0; g < nsig; g++) {
		const struct ts_hang_work *w = &s->works.v[sig[g]];
		note(in, fmt(r, "ranks %s timed out in %s, NumelIn=%lld, NumelOut=%lld",
			     ranks_str(r, ranks[g].v, ranks[g].n), w->op ? w->op : "?",
			     (long long)w->numel_in, (long long)w->numel_out));
		if (in->cls == TS_HANG_MISMATCH && g != big)
			for (size_t k = 0; k < ranks[g].n; k++)
				hang_set_add(&in->culprits, ranks[g].v[k]);
	}
	if (in->cls == TS_HANG_MISMATCH) {
		const struct ts_hang_work *w = &s->works.v[sig[big]];
		in->op = w->op;
		in->kind = w->kind;
		in->numel_in = w->numel_in;
		in->numel_out = w->numel_out;
		note(in, fmt(r, "%zu of %zu ranks agree on (OpType, NumelIn, NumelOut) at seq %lld; the minority is blamed",
			     ranks[big].n, in->reporting.n, (long long)in->seq));
	} else {
		note(in, fmt(r, "the timeout lines of seq %lld disagree and no group is the majority",
			     (long long)in->seq));
	}
	for (size_t g = 0; g < nsig; g++)
		TS_VEC_RELEASE(ranks[g]);
	return 1;
}

/* Progress lines whose last enqueued work is below the incident's seq: those
 * ranks never issued it (the others wait in it). Returns 1 when any. */
static int log_behind(struct an *a, const struct lref_index *x, size_t id)
{
	struct ts_hang_result *r = a->r;
	struct ts_hang_incident *in = &r->incidents.v[id];
	struct hang_i64v timed = { 0 }, behind = { 0 };

	for (size_t k = x->from[id]; k < x->from[id + 1]; k++)
		if (a->lrefs.v[x->at[k]].work != SIZE_MAX)
			hang_set_add(&timed, a->lrefs.v[x->at[k]].rank);
	for (size_t k = x->from[id]; k < x->from[id + 1]; k++) {
		const struct logref *l = &a->lrefs.v[x->at[k]];
		if (l->work != SIZE_MAX || hang_set_has(&timed, l->rank) || hang_set_has(&behind, l->rank))
			continue;
		hang_set_add(&behind, l->rank);
		note(in, fmt(r, "rank %lld printed last enqueued work %lld, last completed %lld: it never issued "
			     "seq %lld, which the other ranks wait in", (long long)l->rank, (long long)l->enqueued,
			     (long long)l->completed, (long long)in->seq));
	}
	TS_VEC_RELEASE(timed);
	if (!behind.n)
		return 0;
	in->cls = TS_HANG_NOT_JOINED;
	for (size_t k = 0; k < behind.n; k++) {
		hang_set_add(&in->culprits, behind.v[k]);
		hang_set_add(&in->missing, behind.v[k]);
	}
	TS_VEC_RELEASE(behind);
	return 1;
}

/* the world as far as the evidence shows it */
static int64_t world_of(const struct an *a)
{
	const struct ts_hang_set *s = a->s;

	if (a->world > 0)
		return a->world;
	return s->ranks_seen.n ? s->ranks_seen.v[s->ranks_seen.n - 1] + 1 : -1;
}

/* The world is known beyond the reporting ranks: the world size is
 * given, or more than one rank reported (one rank's log says nothing of
 * the ranks it does not name). */
static int whole_world(const struct an *a, const struct ts_hang_incident *in)
{
	return a->world > 0 || in->reporting.n > 1;
}

/* The world is given (--world-size) and the ranks without a line are a
 * minority while every other rank issued the seq: they are the likely
 * culprits, as a member without a dump is (inferred: their logs are
 * missing). */
static void blame_silent(struct an *a, struct ts_hang_incident *in, const struct hang_i64v *silent)
{
	struct ts_hang_result *r = a->r;

	in->cls = TS_HANG_NOT_JOINED;
	for (size_t k = 0; k < silent->n; k++) {
		hang_set_add(&in->culprits, silent->v[k]);
		hang_set_add(&in->missing, silent->v[k]);
	}
	note(in, fmt(r, "no line from ranks %s (world size %lld), the only ranks without evidence: they likely "
		     "never issued seq %lld or died (inferred: their logs are missing)",
		     ranks_str(r, silent->v, silent->n), (long long)a->world, (long long)in->seq));
}

static int rank_seq_cmp(const void *pa, const void *pb)
{
	const int64_t *x = pa, *y = pb;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* A finding for each reporting rank of incidents [first, n) that timed out
 * at more than one seq in its logs (each rank's seqs read off the log
 * timeouts sorted by rank and seq, not a pass over them per rank). */
static int several_seqs(struct an *a, size_t first)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;
	struct hang_i64v ranks = { 0 };
	int64_t (*rs)[2] = malloc((s->works.n ? s->works.n : 1) * sizeof(*rs));
	size_t n = 0;

	if (!rs)
		return TS_ENOMEM;
	for (size_t i = first; i < r->incidents.n; i++)
		for (size_t k = 0; k < r->incidents.v[i].reporting.n; k++)
			hang_set_add(&ranks, r->incidents.v[i].reporting.v[k]);
	for (size_t i = 0; i < s->works.n; i++)
		if (!s->works.v[i].from_dump && s->works.v[i].state == TS_ST_TIMED_OUT &&
		    hang_set_has(&ranks, s->works.v[i].rank)) {
			rs[n][0] = s->works.v[i].rank;
			rs[n][1] = s->works.v[i].seq;
			n++;
		}
	ts_sort(rs, n, sizeof(*rs), rank_seq_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		struct hang_i64v seqs = { 0 };
		for (j = i; j < n && rs[j][0] == rs[i][0]; j++)
			if (!seqs.n || seqs.v[seqs.n - 1] != rs[j][1])
				TS_VEC_PUSH(seqs, rs[j][1]);
		if (seqs.n > 1)
			finding(r, fmt(r, "rank %lld timed out at %zu sequence ids (%s): one per process group, since seq ids count per group",
				       (long long)rs[i][0], seqs.n, ranks_str(r, seqs.v, seqs.n)));
		TS_VEC_RELEASE(seqs);
	}
	TS_VEC_RELEASE(ranks);
	free(rs);
	return 0;
}

static int classify_logs(struct an *a, size_t first)
{
	struct ts_hang_result *r = a->r;
	int64_t world = world_of(a);
	struct lref_index x;
	int rc;

	if ((rc = lref_index_build(&x, a))) {
		lref_index_release(&x);
		return rc;
	}
	for (size_t i = first; i < r->incidents.n; i++) {
		struct ts_hang_incident *in = &r->incidents.v[i];
		struct hang_i64v silent = { 0 };
		if (in->cls != TS_HANG_UNDECIDED)
			continue;
		for (int64_t k = 0; k < world && k < 65536; k++)
			if (!hang_set_has(&in->reporting, k))
				hang_set_add(&silent, k);
		if (in->seq >= 0 && (log_mismatch(a, &x, i) || log_behind(a, &x, i))) {
			/* decided by the lines themselves */
		} else if (in->timeout_ms > 0 && in->ran_for_ms / TS_HANG_LATE_RATIO >= in->timeout_ms) {
			in->cls = TS_HANG_WATCHDOG_LATE;
			note(in, fmt(r, "ran for %lld ms = %.1f x the %lld ms timeout: the watchdog itself was starved (GIL or host stall)",
				     (long long)in->ran_for_ms, (double)in->ran_for_ms / (double)in->timeout_ms,
				     (long long)in->timeout_ms));
		} else if (in->seq >= 0 && (in->seq <= 1 || (in->kind == TS_OP_COALESCED && in->seq <= 2))) {
			in->cls = TS_HANG_INIT;
			note(in, "the first collective of the group timed out: communicator set-up / topology");
		} else if (a->has_progress.v[i] && in->seq >= 0) {
			/* what the reporting ranks enqueued says nothing of the
			 * ranks that left no line, and one that never issued the
			 * seq hangs the group the same way (a desync report names
			 * rank 7 where rank 0 alone printed "enqueued 315,
			 * completed 183"): all_stuck needs most of the world */
			note(in, fmt(r, "every reporting rank (%s) enqueued seq %lld and none completed it",
				     ranks_str(r, in->reporting.v, in->reporting.n), (long long)in->seq));
			if (silent.n && !(a->world > 0 && silent.n < in->reporting.n))
				note(in, fmt(r, "no evidence from ranks %s (%s %lld%s): a rank that never issued "
					     "seq %lld would hang the group the same way (not_joined); their "
					     "logs or Flight Recorder dumps decide", ranks_str(r, silent.v, silent.n),
					     a->world > 0 ? "world size" : "world >=", (long long)world,
					     a->world > 0 ? "" : " as far as the logs show", (long long)in->seq));
			if (!whole_world(a, in))
				note(in, "one rank's evidence, and the world size is unknown (--world-size): "
					 "the other ranks' state is unknown");
			else if (silent.n < in->reporting.n)
				in->cls = TS_HANG_ALL_STUCK;
			if (in->cls == TS_HANG_ALL_STUCK && a->world > 0 && silent.n)
				blame_silent(a, in, &silent);
		} else if (silent.n && in->seq >= 0 && a->world > 0 && silent.n < in->reporting.n) {
			note(in, fmt(r, "every reporting rank (%s) timed out on seq %lld",
				     ranks_str(r, in->reporting.v, in->reporting.n), (long long)in->seq));
			blame_silent(a, in, &silent);
		} else if (silent.n && in->seq >= 0) {
			note(in, fmt(r, "the logs lack ranks %s (%s %lld): their state at seq %lld is unknown",
				     ranks_str(r, silent.v, silent.n),
				     a->world > 0 ? "world size" : "world >=", (long long)world, (long long)in->seq));
		} else if (in->seq >= 0 && in->reporting.n && whole_world(a, in)) {
			in->cls = TS_HANG_ALL_STUCK;
			note(in, "every rank of the world timed out on it");
		} else if (in->seq >= 0 && in->reporting.n) {
			note(in, "one rank's evidence, and the world size is unknown (--world-size): "
				 "the other ranks' state is unknown");
		}
		if (in->last_enqueued >= 0 && in->seq >= 0)
			note(in, fmt(r, "as printed: failed seq %lld, last enqueued %lld, last completed %lld (%lld enqueued past the last completed)",
				     (long long)in->seq, (long long)in->last_enqueued, (long long)in->last_completed,
				     (long long)(in->last_enqueued - in->last_completed)));
		TS_VEC_RELEASE(silent);
	}
	lref_index_release(&x);
	/* several seqs on one rank without group names = several groups */
	return several_seqs(a, first);
}

/* ------------------------------------------------------------ reports */

static int reports(struct an *a)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;
	struct hang_i64v fp_ranks[8];
	const char *fp_text[8];
	size_t nfp = 0;
	int fp_inc = -1;

	memset(fp_ranks, 0, sizeof(fp_ranks));
	for (size_t ri = 0; ri < s->reports.n; ri++) {
		struct ts_hang_report *rep = &s->reports.v[ri];
		int id = -1;
		struct ts_hang_incident *in;

		switch (rep->kind) {
		case TS_REP_DESYNC:
			/* attach to the reporter's watchdog incident, in the same file first */
			if (rep->evs.n)
				id = inc_of_file(a, s->evs.v[rep->evs.v[0]].file, -2, rep->reporter);
			for (size_t k = 0; k < r->incidents.n && id < 0; k++)
				if (hang_set_has(&r->incidents.v[k].reporting, rep->reporter))
					id = (int)k;
			if (id < 0 && (id = new_inc(a, TS_HANG_UNDECIDED, rep->pg, -1)) < 0)
				return TS_ENOMEM;
			in = &r->incidents.v[id];
			for (size_t k = 0; k < rep->evs.n; k++)
				add_ev(in, rep->evs.v[k]);
			if (rep->reporter >= 0)
				hang_set_add(&in->reporting, rep->reporter);
			set_op(in, rep->op, rep->op ? ts_hang_op_kind(rep->op, strlen(rep->op)) : TS_OP_UNKNOWN);
			if (rep->culprits.n) {
				in->cls = TS_HANG_NOT_JOINED;
				for (size_t k = 0; k < rep->culprits.n; k++) {
					hang_set_add(&in->culprits, rep->culprits.v[k]);
					hang_set_add(&in->missing, rep->culprits.v[k]);
				}
				note(in, fmt(r, "the desync report names rank(s) %s as lagging/dead/mismatched",
					     ranks_str(r, rep->culprits.v, rep->culprits.n)));
			}
			note(in, fmt(r, "the desync report counts collectives its own way: #%lld there, SeqNum %lld in the watchdog line (both as printed)",
				     (long long)rep->seq, (long long)in->seq));
			for (size_t g = 0; g < rep->groups.n; g++) {
				const struct ts_hang_group *gr = &rep->groups.v[g];
				for (size_t k = 0; k < gr->ranks.n; k++)
					hang_rank_seen(s, gr->ranks.v[k]);
				note(in, fmt(r, "snapshot #%lld: ranks %s %s", (long long)gr->seq,
					     ranks_str(r, gr->ranks.v, gr->ranks.n), gr->what ? gr->what : ""));
			}
			break;
		case TS_REP_FR_TRACE:
			if ((id = find_inc(a, rep->pg, rep->seq)) < 0 &&
			    (id = new_inc(a, TS_HANG_UNDECIDED, rep->pg, rep->seq)) < 0)
				return TS_ENOMEM;
			in = &r->incidents.v[id];
			for (size_t k = 0; k < rep->evs.n; k++)
				add_ev(in, rep->evs.v[k]);
			set_op(in, rep->op, rep->op ? ts_hang_op_kind(rep->op, strlen(rep->op)) : TS_OP_UNKNOWN);
			in->numel_in = rep->numel_in;
			in->numel_out = rep->numel_out;
			if (rep->mismatch && rep->culprits.n) {
				/* fr_trace blames the ranks that differ from the first
				 * rank it looked at; when that is most of the world the
				 * odd one out is the first rank: blame the minority */
				struct hang_i64v world = { 0 }, rest = { 0 };
				for (size_t k = 0; k < rep->expected.n; k++)
					hang_set_add(&world, rep->expected.v[k]);
				if (!world.n)
					for (int64_t k = 0; k < rep->world && k < 65536; k++)
						hang_set_add(&world, k);
				for (size_t k = 0; k < world.n; k++)
					if (!hang_set_has(&rep->culprits, world.v[k]))
						hang_set_add(&rest, world.v[k]);
				in->cls = TS_HANG_MISMATCH;
				if (world.n && rep->culprits.n * 2 > world.n && rest.n) {
					for (size_t k = 0; k < rest.n; k++)
						hang_set_add(&in->culprits, rest.v[k]);
					note(in, fmt(r, "fr_trace named %zu of %zu ranks as culprits; the minority is the other side: ranks %s",
						     rep->culprits.n, world.n, ranks_str(r, rest.v, rest.n)));
				} else {
					for (size_t k = 0; k < rep->culprits.n; k++)
						hang_set_add(&in->culprits, rep->culprits.v[k]);
					if (world.n && rep->culprits.n * 2 == world.n)
						in->cls = TS_HANG_UNDECIDED;
					note(in, fmt(r, "fr_trace names ranks %s%s", ranks_str(r, rep->culprits.v, rep->culprits.n),
						     world.n ? "" : " (world size not printed: cannot check they are the minority)"));
				}
				if (in->cls == TS_HANG_UNDECIDED)
					in->culprits.n = 0;
				TS_VEC_RELEASE(world);
				TS_VEC_RELEASE(rest);
			}
			if (rep->missing.n) {
				in->cls = TS_HANG_NOT_JOINED;
				for (size_t k = 0; k < rep->missing.n; k++) {
					hang_set_add(&in->missing, rep->missing.v[k]);
					hang_set_add(&in->culprits, rep->missing.v[k]);
				}
			}
			{
				struct hang_i64v exp = { 0 };
				for (size_t k = 0; k < rep->expected.n; k++)
					hang_set_add(&exp, rep->expected.v[k]);
				if (!exp.n)
					for (int64_t k = 0; k < rep->world && k < 65536; k++)
						hang_set_add(&exp, k);
				for (size_t k = 0; k < exp.n; k++)
					if (!hang_set_has(&rep->missing, exp.v[k]))
						hang_set_add(&in->reporting, exp.v[k]);
				note(in, fmt(r, "fr_trace: %zu expected ranks, missing %s, joined %s; state %s; internal record id %lld",
					     exp.n, ranks_str(r, rep->missing.v, rep->missing.n),
					     ranks_str(r, in->reporting.v, in->reporting.n),
					     rep->state ? rep->state : "?", (long long)rep->record_id));
				TS_VEC_RELEASE(exp);
			}
			break;
		case TS_REP_RAS: {
			const struct ts_hang_group *listed = NULL, *hi = NULL, *lo = NULL;
			struct hang_i64v ahead = { 0 }, behind = { 0 };
			for (size_t g = 0; g < rep->groups.n; g++) {
				const struct ts_hang_group *gr = &rep->groups.v[g];
				if (gr->what && strcmp(gr->what, "listed") == 0)
					listed = gr;
				else if (!hi || gr->seq > hi->seq)
					hi = gr;
			}
			for (size_t g = 0; g < rep->groups.n; g++) {
				const struct ts_hang_group *gr = &rep->groups.v[g];
				if (gr != listed && gr != hi && (!lo || gr->seq > lo->seq))
					lo = gr;
			}
			if (rep->errors && strcmp(rep->errors, "OK") == 0 && !rep->dead && !lo)
				break;
			if ((id = new_inc(a, TS_HANG_UNDECIDED, -1, hi ? hi->seq : -1)) < 0)
				return TS_ENOMEM;
			in = &r->incidents.v[id];
			for (size_t k = 0; k < rep->evs.n; k++)
				add_ev(in, rep->evs.v[k]);
			set_op(in, rep->op, rep->op ? ts_hang_op_kind(rep->op, strlen(rep->op)) : TS_OP_UNKNOWN);
			for (int64_t k = 0; k < rep->world && k < 65536; k++)
				hang_set_add(&in->reporting, k);
			if (rep->dead && rep->missing.n) {
				in->cls = TS_HANG_RANK_DEAD;
				for (size_t k = 0; k < rep->missing.n; k++) {
					hang_set_add(&in->culprits, rep->missing.v[k]);
					hang_set_add(&in->missing, rep->missing.v[k]);
				}
				note(in, fmt(r, "NCCL RAS: ranks %s are missing and considered dead or unresponsive",
					     ranks_str(r, rep->missing.v, rep->missing.n)));
			}
			if (hi && lo) {
				/* listed ranks are the outlier set: whichever count group they fill */
				if (hi->ranks.n)
					for (size_t k = 0; k < hi->ranks.n; k++)
						hang_set_add(&ahead, hi->ranks.v[k]);
				else if (listed && (int64_t)listed->ranks.n == hi->count)
					for (size_t k = 0; k < listed->ranks.n; k++)
						hang_set_add(&ahead, listed->ranks.v[k]);
				if (lo->ranks.n)
					for (size_t k = 0; k < lo->ranks.n; k++)
						hang_set_add(&behind, lo->ranks.v[k]);
				else if (listed && (int64_t)listed->ranks.n == lo->count)
					for (size_t k = 0; k < listed->ranks.n; k++)
						hang_set_add(&behind, listed->ranks.v[k]);
				if (!behind.n && ahead.n)
					for (int64_t k = 0; k < rep->world && k < 65536; k++)
						if (!hang_set_has(&ahead, k))
							hang_set_add(&behind, k);
				if (behind.n && in->cls == TS_HANG_UNDECIDED) {
					in->cls = TS_HANG_NOT_JOINED;
					for (size_t k = 0; k < behind.n; k++) {
						hang_set_add(&in->culprits, behind.v[k]);
						hang_set_add(&in->missing, behind.v[k]);
					}
				}
				note(in, fmt(r, "NCCL RAS: %lld ranks launched up to %s %lld, %lld ranks only up to %lld; "
					     "ranks %s are ahead (waiting inside %lld), ranks %s have not launched it",
					     (long long)hi->count, rep->op ? rep->op : "operation", (long long)hi->seq,
					     (long long)lo->count, (long long)lo->seq,
					     ahead.n ? ranks_str(r, ahead.v, ahead.n) : "(not listed)", (long long)hi->seq,
					     behind.n ? ranks_str(r, behind.v, behind.n) : "(not listed)"));
			}
			if (rep->state || rep->errors)
				note(in, fmt(r, "NCCL RAS communicator: %lld ranks, status %s, errors %s", (long long)rep->world,
					     rep->state ? rep->state : "?", rep->errors ? rep->errors : "?"));
			TS_VEC_RELEASE(ahead);
			TS_VEC_RELEASE(behind);
			break;
		}
		case TS_REP_DETAIL:
			if (fp_inc < 0 && (fp_inc = new_inc(a, TS_HANG_UNDECIDED, -1, -1)) < 0)
				return TS_ENOMEM;
			for (size_t k = 0; k < rep->evs.n; k++)
				add_ev(&r->incidents.v[fp_inc], rep->evs.v[k]);
			for (size_t g = 0; g < rep->groups.n; g++) {
				const struct ts_hang_group *gr = &rep->groups.v[g];
				size_t f;
				for (f = 0; f < nfp; f++)
					if (strcmp(fp_text[f], gr->what ? gr->what : "") == 0)
						break;
				if (f == nfp) {
					if (nfp == 8)
						continue;
					fp_text[nfp++] = gr->what ? gr->what : "";
				}
				for (size_t k = 0; k < gr->ranks.n; k++)
					hang_set_add(&fp_ranks[f], gr->ranks.v[k]);
			}
			break;
		case TS_REP_IB_MISMATCH:
			if ((id = new_inc(a, TS_HANG_MISMATCH, -1, -1)) < 0)
				return TS_ENOMEM;
			in = &r->incidents.v[id];
			for (size_t k = 0; k < rep->evs.n; k++)
				add_ev(in, rep->evs.v[k]);
			note(in, fmt(r, "NCCL NET/IB: collective size mismatch between nodes: local %lld B, remote %lld B%s; no rank is named",
				     (long long)rep->size_a, (long long)rep->size_b,
				     rep->size_a > 0 && rep->size_b > 0 && rep->size_b % rep->size_a == 0
				     ? fmt(r, " (x%lld)", (long long)(rep->size_b / rep->size_a)) : ""));
			break;
		}
	}
	if (fp_inc >= 0) {
		struct ts_hang_incident *in = &r->incidents.v[fp_inc];
		size_t big = 0, ties = 0;
		for (size_t f = 1; f < nfp; f++)
			if (fp_ranks[f].n > fp_ranks[big].n)
				big = f;
		for (size_t f = 0; f < nfp; f++)
			ties += fp_ranks[f].n == fp_ranks[big].n;
		for (size_t f = 0; f < nfp; f++) {
			const char *op = strstr(fp_text[f], "OpType=");
			for (size_t k = 0; k < fp_ranks[f].n; k++)
				hang_set_add(&in->reporting, fp_ranks[f].v[k]);
			if (f == big && op) {
				size_t n = strcspn(op + 7, ",)");
				in->op = ts_arena_strndup(&r->arena, op + 7, n);
				in->kind = ts_hang_op_kind(op + 7, n);
			}
			note(in, fmt(r, "ranks %s run %s", ranks_str(r, fp_ranks[f].v, fp_ranks[f].n), fp_text[f]));
		}
		if (nfp > 1 && ties == 1) {
			in->cls = TS_HANG_MISMATCH;
			for (size_t f = 0; f < nfp; f++)
				if (f != big)
					for (size_t k = 0; k < fp_ranks[f].n; k++)
						hang_set_add(&in->culprits, fp_ranks[f].v[k]);
		} else if (nfp > 1) {
			note(in, "TORCH_DISTRIBUTED_DEBUG=DETAIL mismatch with no majority: undecided");
		}
		for (size_t f = 0; f < 8; f++)
			TS_VEC_RELEASE(fp_ranks[f]);
	}
	return 0;
}

/* NCCL_DEBUG=INFO COLL lines: compare (op, count, datatype) per opCount
 * across processes of the same communicator size */
static int colls(struct an *a)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;
	struct hang_i64v pids = { 0 }, ops = { 0 };
	int bad = -1;

	if (!s->colls.n)
		return 0;
	for (size_t i = 0; i < s->colls.n; i++) {
		hang_set_add(&pids, s->colls.v[i].pid);
		hang_set_add(&ops, s->colls.v[i].op_count);
	}
	for (size_t o = 0; o < ops.n; o++) {
		const struct ts_hang_coll *ref = NULL;
		struct hang_i64v seen = { 0 }, peers = { 0 };
		int differ = 0;
		for (size_t i = 0; i < s->colls.n; i++) {
			const struct ts_hang_coll *c = &s->colls.v[i];
			if (c->op_count != ops.v[o])
				continue;
			if (!ref)
				for (size_t k = 0; k < s->colls.n; k++)
					if (s->colls.v[k].nranks == c->nranks)
						hang_set_add(&peers, s->colls.v[k].pid);
			hang_set_add(&seen, c->pid);
			if (!ref)
				ref = c;
			else if (c->nranks == ref->nranks &&
				 (strcmp(c->op, ref->op) || c->count != ref->count || c->dtype != ref->dtype))
				differ = 1;
		}
		if (differ) {
			if (bad < 0 && (bad = new_inc(a, TS_HANG_MISMATCH, -1, ops.v[o])) < 0) {
				TS_VEC_RELEASE(seen);
				return TS_ENOMEM;
			}
			struct ts_hang_incident *in = &r->incidents.v[bad];
			set_op(in, ref->op, ts_hang_op_kind(ref->op, strlen(ref->op)));
			for (size_t i = 0; i < s->colls.n; i++)
				if (s->colls.v[i].op_count == ops.v[o])
					add_ev(in, s->colls.v[i].ev);
			note(in, fmt(r, "NCCL COLL: opCount 0x%llx differs across processes (op, count or datatype)",
				     (unsigned long long)ops.v[o]));
		} else if (seen.n < peers.n) {
			finding(r, fmt(r, "NCCL COLL: opCount 0x%llx (%lld) seen only for pid(s) %s (edge of the excerpt)",
				       (unsigned long long)ops.v[o], (long long)ops.v[o], ranks_str(r, seen.v, seen.n)));
		}
		TS_VEC_RELEASE(seen);
		TS_VEC_RELEASE(peers);
	}
	if (bad < 0)
		finding(r, fmt(r, "NCCL COLL: %zu calls from %zu processes agree (op, count, datatype) at every common opCount",
			       s->colls.n, pids.n));
	TS_VEC_RELEASE(pids);
	TS_VEC_RELEASE(ops);
	return 0;
}

static void advise(struct an *a, int mccl)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;
	struct ts_hang_advice ad;
	int started = 0;

	for (size_t i = 0; i < s->works.n; i++)
		if (s->works.v[i].from_dump && s->works.v[i].state == TS_ST_STARTED)
			started = 1;
#define ADV(k, v, w) do { ad.knob = (k); ad.value = (v); ad.why = (w); TS_VEC_PUSH(r->advice, ad); } while (0)
	if (s->fr_disabled || (!s->dumps.n && r->incidents.n)) {
		if (mccl) {
			ADV("TORCH_MCCL_TRACE_BUFFER_SIZE", "2000", "torch_musa's Flight Recorder is off by default (0)");
		} else {
			ADV("TORCH_FR_BUFFER_SIZE", "2000", s->fr_disabled ? "the log says the Flight Recorder is disabled"
			    : "no Flight Recorder dump was given: keep the last collectives per rank");
			ADV("TORCH_NCCL_TRACE_BUFFER_SIZE", "2000", "the same knob before PyTorch 2.9 (still honoured)");
		}
	}
	if (!s->dumps.n && r->incidents.n) {
		if (mccl) {
			ADV("TORCH_MCCL_DUMP_ON_TIMEOUT", "1", "off by default on torch_musa: dump every rank's buffer at the timeout");
			ADV("TORCH_MCCL_DEBUG_INFO_TEMP_FILE", "/shared/fr/mccl_trace_rank_", "a path every rank can write; the rank is appended");
			ADV("TORCH_MCCL_DEBUG_INFO_PIPE_FILE", "/shared/fr/pipe_", "write to <path><rank>.pipe to dump a live hung job");
		} else {
			ADV("TORCH_NCCL_DUMP_ON_TIMEOUT", "1", "dump every rank's buffer when a collective times out");
			ADV("TORCH_FR_DUMP_TEMP_FILE", "/shared/fr/nccl_trace_rank_", "a path every rank can write; the rank is appended (older name TORCH_NCCL_DEBUG_INFO_TEMP_FILE)");
			ADV("TORCH_NCCL_DEBUG_INFO_PIPE_FILE", "/shared/fr/pipe_", "write to <path><rank>.pipe to dump a live hung job");
		}
	}
	if (!started && r->incidents.n)
		ADV(mccl ? "TORCH_MCCL_ENABLE_TIMING" : "TORCH_NCCL_ENABLE_TIMING", "1",
		    "without it entries go scheduled -> completed and a collective that started cannot be told from one that never ran");
#undef ADV
}

static void vendor(struct an *a, int *mccl)
{
	struct ts_hang_set *s = a->s;
	struct ts_hang_result *r = a->r;
	int m = s->mccl_lines > 0 || s->ev_pgmccl >= 0 || s->ev_musa_state >= 0;
	int n = s->nccl_lines > 0;

	*mccl = m && !n;
	r->backend = m && n ? "nccl+mccl" : m ? "mccl" : n ? "nccl" : "unknown";
	r->vendor = "unknown";
	r->vendor_why = "no vendor evidence";
	if (m) {
		if (s->ev_pgmccl >= 0 || s->ev_musa_state >= 0 || s->ev_musa >= 0) {
			r->vendor = "moore_threads";
			r->vendor_why = s->ev_pgmccl >= 0 ? "ProcessGroupMCCL / WorkMCCL (torch_musa classes)"
				: s->ev_musa_state >= 0 ? "dump key mccl_comm_state (torch_musa)"
				: "MUSA names in the evidence";
		} else if (s->ev_maca >= 0) {
			r->vendor = "metax";
			r->vendor_why = "MACA names (/opt/maca, mc* runtime) next to MCCL";
		} else if (s->ev_torchcomms >= 0) {
			r->vendor = "nvidia";
			r->vendor_why = "torchcomms MCCL (Meta) on CUDA";
		} else {
			r->vendor_why = "MCCL names only: Moore Threads (torch_musa) and MetaX both ship an MCCL; no MUSA or MACA evidence";
		}
	} else if (n) {
		r->vendor = s->ev_cuda >= 0 ? "nvidia" : "unknown";
		r->vendor_why = s->ev_cuda >= 0 ? "NCCL with CUDA names in the evidence"
			: "NCCL names without CUDA evidence (RCCL on ROCm prints the same PyTorch lines)";
	}
}

int ts_hang_analyze(struct ts_hang_set *s, struct ts_hang_result *r, struct ts_err *err)
{
	struct an a;
	int rc, mccl = 0;
	size_t first_log;

	memset(r, 0, sizeof(*r));
	ts_arena_init(&r->arena);
	memset(&a, 0, sizeof(a));
	a.s = s;
	a.r = r;
	a.world = s->world_size > 0 ? s->world_size : -1;
	{
		/* findings about the evidence as a whole: a world size the ranks
		 * exceed (not used), dumps of different versions */
		struct hang_i64v above = { 0 };
		struct ts_sb sb;

		ts_sb_init(&sb);
		if (hang_world_above(s, &above))
			sb.failed = 1;
		if (above.n) {
			a.world = -1;
			hang_world_text(s, &above, &sb);
			finding(r, sb.failed ? NULL : ts_arena_strndup(&r->arena, sb.buf, sb.len));
			ts_sb_reset(&sb);
		}
		if (hang_version_other(s) >= 0) {
			hang_versions_text(s, &sb);
			finding(r, sb.failed ? NULL : ts_arena_strndup(&r->arena, sb.buf, sb.len));
		}
		TS_VEC_RELEASE(above);
		ts_sb_release(&sb);
	}
	{
		/* findings about inputs: files that open no dump, cut last lines */
		struct ts_sb sb;

		ts_sb_init(&sb);
		for (size_t i = 0; i < s->unread.n + s->cut_lines.n; i++) {
			if (i < s->unread.n)
				hang_unread_text(s, &s->unread.v[i], &sb);
			else if (cut_line_said(s, &s->cut_lines.v[i - s->unread.n]))
				hang_cutline_text(s, &s->cut_lines.v[i - s->unread.n], &sb);
			else
				continue;
			finding(r, sb.failed ? NULL : ts_arena_strndup(&r->arena, sb.buf, sb.len));
			ts_sb_reset(&sb);
		}
		ts_sb_release(&sb);
	}
	{
		/* pg_status ids a dump alone could not name, tried with every
		 * dump together; those still open are said and not used */
		struct ts_sb sb;

		ts_sb_init(&sb);
		rc = hang_status_resolve(s, &sb);
		if (!rc && sb.len)
			finding(r, fmt(r, "pg_status: %s; which group each of them is cannot be told from the "
				       "dump's entries, its pg_config (hashed group names give no creation "
				       "order), the order the other dumps' ids give the groups, or what the "
				       "other members enqueued and completed, so those ids are not used (the "
				       "rank's progress in those groups is read from its entries alone)",
				       sb.buf));
		ts_sb_release(&sb);
		if (rc)
			goto out;
	}
	if ((rc = dumps(&a)))
		goto out;
	first_log = r->incidents.n;
	if ((rc = logs(&a)))
		goto out;
	if ((rc = reports(&a)))
		goto out;
	if ((rc = classify_logs(&a, first_log)))
		goto out;
	if ((rc = colls(&a)))
		goto out;
	vendor(&a, &mccl);
	advise(&a, mccl);
	if (s->ras_ok) {
		for (size_t i = 0; i < s->works.n; i++)
			if (!s->works.v[i].from_dump && s->works.v[i].state == TS_ST_TIMED_OUT) {
				finding(r, "contradiction: NCCL RAS reports errors OK while a rank's watchdog timed out");
				break;
			}
	}
	for (size_t i = 0; i < r->incidents.n; i++) {
		const struct ts_hang_incident *in = &r->incidents.v[i];
		if (in->culprits.n || in->cls != TS_HANG_UNDECIDED)
			r->exit_code = 1;
	}
	if (r->arena.failed || s->arena.failed)
		rc = TS_ENOMEM;
out:
	TS_VEC_RELEASE(a.has_progress);
	TS_VEC_RELEASE(a.lrefs);
	if (rc == TS_ENOMEM)
		return ts_err_set(err, TS_ENOMEM, "out of memory analysing the hang evidence");
	return rc;
}

void ts_hang_result_release(struct ts_hang_result *r)
{
	for (size_t i = 0; i < r->incidents.n; i++) {
		struct ts_hang_incident *in = &r->incidents.v[i];
		TS_VEC_RELEASE(in->reporting);
		TS_VEC_RELEASE(in->culprits);
		TS_VEC_RELEASE(in->missing);
		TS_VEC_RELEASE(in->evs);
		TS_VEC_RELEASE(in->notes);
	}
	TS_VEC_RELEASE(r->incidents);
	TS_VEC_RELEASE(r->stragglers);
	TS_VEC_RELEASE(r->findings);
	TS_VEC_RELEASE(r->advice);
	ts_arena_release(&r->arena);
	memset(r, 0, sizeof(*r));
}

/*
 * hang_status.c - which group a dump's pg_status id names, when the dump
 * alone cannot tell (hashed group names, and more than one of its groups
 * without an entry in its ring buffer).
 *
 * pg_status is keyed by the process-local pg_id: the creation index of the
 * group among the groups the rank is a member of. Two facts of the whole
 * job narrow it down, and only they are used:
 *  - groups are created in one order on every rank, so the (pg_id, group)
 *    pairs the other dumps tell order the groups: a rank's ids follow that
 *    order;
 *  - a collective completes on a member only once every member issued it,
 *    so an id whose last completed seq some other member never enqueued, or
 *    whose last enqueued seq is below one another member completed, is not
 *    that group.
 * Every assignment of the dump's unnamed ids to its groups without an id
 * that keeps both is enumerated; an id that takes one group in all of them
 * is that group, any other is said and not used.
 */
#include <stdlib.h>
#include <string.h>
#include "hang_int.h"

/* The most groups the creation order is kept for (a bit matrix), the most
 * unnamed ids and groups of one dump tried, and the search's step budget. */
#define ORDER_MAX 256
#define UNNAMED_MAX 16
#define CAND_MAX 64
#define STEPS_MAX 200000

/* How far one rank got in one group: the largest seq it enqueued and
 * completed (its entries and its pg_status), -1 for none. */
struct prog { int pg; int64_t rank, enq, comp; int cut; };

static int cmp_prog(const void *x, const void *y)
{
	const struct prog *a = x, *b = y;
	if (a->pg != b->pg)
		return a->pg < b->pg ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

struct solve {
	const struct ts_hang_set *s;
	const unsigned char *before;      /* before[a * np + b]: a created before b */
	size_t np;
	const struct prog *prog;          /* sorted by (pg, rank), merged */
	size_t nprog;
	int64_t rank;                     /* the dump's */
	const struct ts_hang_pg_status *ids[UNNAMED_MAX];
	size_t nids;
	int cand[CAND_MAX];               /* its groups without an id */
	size_t ncand;
	const struct ts_hang_local *named; /* its (id, group) pairs */
	size_t nnamed;
	int at[UNNAMED_MAX];              /* index into cand, per id */
	uint64_t seen[UNNAMED_MAX];       /* cand bits each id took in a solution */
	size_t solutions;
	long steps;
	int tried;                        /* the search ran */
};

static int created_before(const struct solve *v, int a, int b)
{
	return v->before && a >= 0 && b >= 0 && (size_t)a < v->np && (size_t)b < v->np &&
	       v->before[(size_t)a * v->np + (size_t)b];
}

static int prog_pg_below(const void *elem, const void *pg)
{
	return ((const struct prog *)elem)->pg < *(const int *)pg;
}

/* The progress item id could have in group pg, by what the other members
 * of pg did. */
static int progress_fits(const struct solve *v, const struct ts_hang_pg_status *id, int pg)
{
	size_t lo = ts_lower_bound(v->prog, v->nprog, sizeof(*v->prog), &pg, prog_pg_below);

	for (size_t i = lo; i < v->nprog && v->prog[i].pg == pg; i++) {
		const struct prog *m = &v->prog[i];
		if (m->rank == v->rank)
			continue;
		if (id->completed > 0 && m->enq >= 0 && !m->cut && m->enq < id->completed)
			return 0;
		if (m->comp > 0 && m->comp > id->enqueued)
			return 0;
	}
	return 1;
}

/* The order of ids a and b of this dump fits their groups' creation
 * order. */
static int order_fits(const struct solve *v, int64_t ida, int pga, int64_t idb, int pgb)
{
	return ida < idb ? !created_before(v, pgb, pga) : !created_before(v, pga, pgb);
}

static void search(struct solve *v, size_t k, uint64_t used)
{
	if (++v->steps > STEPS_MAX)
		return;
	if (k == v->nids) {
		v->solutions++;
		for (size_t i = 0; i < v->nids; i++)
			v->seen[i] |= (uint64_t)1 << v->at[i];
		return;
	}
	for (size_t c = 0; c < v->ncand; c++) {
		int pg = v->cand[c], ok = !(used & ((uint64_t)1 << c)) && progress_fits(v, v->ids[k], pg);
		for (size_t i = 0; ok && i < v->nnamed; i++)
			ok = order_fits(v, v->ids[k]->id, pg, v->named[i].id, v->named[i].pg);
		for (size_t i = 0; ok && i < k; i++)
			ok = order_fits(v, v->ids[k]->id, pg, v->ids[i]->id, v->cand[v->at[i]]);
		if (!ok)
			continue;
		v->at[k] = (int)c;
		search(v, k + 1, used | ((uint64_t)1 << c));
	}
}

/* The creation order the dumps' named pg_status items give (transitively
 * closed), or NULL when there are too many groups (nothing is then ordered)
 * or on allocation failure (*failed set). */
static unsigned char *creation_order(const struct ts_hang_set *s, int *failed)
{
	size_t np = s->pgs.n;
	unsigned char *b;

	if (np > ORDER_MAX)
		return NULL;
	if (!(b = calloc(np ? np * np : 1, 1))) {
		*failed = 1;
		return NULL;
	}
	for (size_t i = 0; i < s->status.n; i++) {
		const struct ts_hang_pg_status *x = &s->status.v[i];
		if (x->pg < 0)
			continue;
		for (size_t j = i + 1; j < s->status.n && s->status.v[j].file == x->file; j++) {
			const struct ts_hang_pg_status *y = &s->status.v[j];
			if (y->pg < 0 || y->pg == x->pg || y->id == x->id)
				continue;
			if (x->id < y->id)
				b[(size_t)x->pg * np + (size_t)y->pg] = 1;
			else
				b[(size_t)y->pg * np + (size_t)x->pg] = 1;
		}
	}
	for (size_t k = 0; k < np; k++)
		for (size_t i = 0; i < np; i++)
			if (b[i * np + k])
				for (size_t j = 0; j < np; j++)
					b[i * np + j] |= b[k * np + j];
	return b;
}

/* Each rank's progress in each group (entries and named pg_status). */
static struct prog *progress(const struct ts_hang_set *s, size_t *n)
{
	struct prog *p = malloc((s->works.n + s->status.n + 1) * sizeof(*p));
	unsigned char *cut = calloc(s->files.n ? s->files.n : 1, 1);
	size_t k = 0, out = 0;

	if (!p || !cut) {
		free(p);
		free(cut);
		return NULL;
	}
	/* a dump cut inside its entries may have lost its last ones */
	for (size_t i = 0; i < s->dumps.n; i++)
		if (s->dumps.v[i].file < s->files.n)
			cut[s->dumps.v[i].file] |= (unsigned char)(s->dumps.v[i].entries_cut != 0);
	for (size_t i = 0; i < s->works.n; i++) {
		const struct ts_hang_work *w = &s->works.v[i];
		if (!w->from_dump || w->pg < 0 || w->rank < 0 || w->seq < 0 ||
		    w->kind == TS_OP_SEND || w->kind == TS_OP_RECV)
			continue;
		p[k++] = (struct prog){ w->pg, w->rank, w->seq, w->state == TS_ST_COMPLETED ? w->seq : -1,
					w->file < s->files.n && cut[w->file] };
	}
	free(cut);
	for (size_t i = 0; i < s->status.n; i++) {
		const struct ts_hang_pg_status *x = &s->status.v[i];
		if (x->pg >= 0 && x->rank >= 0)
			p[k++] = (struct prog){ x->pg, x->rank, x->enqueued, x->completed, 0 };
	}
	ts_sort(p, k, sizeof(*p), cmp_prog);
	for (size_t i = 0; i < k; i++) {
		if (out && p[out - 1].pg == p[i].pg && p[out - 1].rank == p[i].rank) {
			struct prog *m = &p[out - 1];
			m->enq = p[i].enq > m->enq ? p[i].enq : m->enq;
			m->comp = p[i].comp > m->comp ? p[i].comp : m->comp;
			m->cut |= p[i].cut;
			continue;
		}
		p[out++] = p[i];
	}
	*n = out;
	return p;
}

static const char *pg_label(const struct ts_hang_set *s, int pg)
{
	const struct ts_hang_pg *g = &s->pgs.v[pg];
	return g->guid ? g->guid : g->desc ? g->desc : "?";
}

/* Words of one dump's ids left unnamed, appended to said. */
static void say(const struct solve *v, uint32_t file, const int *left, struct ts_sb *said)
{
	size_t n = 0;

	ts_sb_addf(said, "%srank %lld (%s): its pg_status ids", said->len ? "; " : "", (long long)v->rank,
		   v->s->files.v[file]);
	for (size_t i = 0; i < v->nids; i++)
		if (left[i])
			ts_sb_addf(said, "%s %lld", n++ ? "," : "", (long long)v->ids[i]->id);
	ts_sb_adds(said, " could each be group");
	n = 0;
	for (size_t c = 0; c < v->ncand; c++) {
		int any = 0;
		for (size_t i = 0; i < v->nids; i++)
			any |= left[i] && (v->seen[i] & ((uint64_t)1 << c));
		if (any || !v->solutions)
			ts_sb_addf(said, "%s %s", n++ ? "," : "", pg_label(v->s, v->cand[c]));
	}
	if (!v->tried)
		ts_sb_adds(said, " (more ids than groups without one, or too many to try)");
	else if (!v->solutions)
		ts_sb_adds(said, v->steps > STEPS_MAX ? " (too many ways to try)" :
			   " (none fits the order the other dumps created the groups in and the members' progress)");
}

int hang_status_resolve(struct ts_hang_set *s, struct ts_sb *said)
{
	unsigned char *before = NULL;
	struct prog *prog = NULL;
	size_t nprog = 0;
	int failed = 0, any = 0;

	for (size_t i = 0; i < s->status.n && !any; i++)
		any = s->status.v[i].pg < 0;
	if (!any)
		return 0;
	before = creation_order(s, &failed);
	if (!failed && !(prog = progress(s, &nprog)))
		failed = 1;
	for (size_t b = 0, e; b < s->status.n && !failed; b = e) {
		uint32_t file = s->status.v[b].file;
		struct solve v;
		int left[UNNAMED_MAX] = { 0 }, unnamed = 0;

		for (e = b; e < s->status.n && s->status.v[e].file == file; e++)
			unnamed += s->status.v[e].pg < 0;
		if (!unnamed)
			continue;
		memset(&v, 0, sizeof(v));
		v.s = s;
		v.before = before;
		v.np = s->pgs.n;
		v.prog = prog;
		v.nprog = nprog;
		v.rank = s->status.v[b].rank;
		for (size_t i = 0; i < s->locals.n; i++) {
			const struct ts_hang_local *l = &s->locals.v[i];
			if (l->file != file)
				continue;
			if (l->id < 0 && v.ncand < CAND_MAX)
				v.cand[v.ncand++] = l->pg;
			else if (l->id >= 0 && !v.named) {
				v.named = l;
				v.nnamed = 1;
			} else if (l->id >= 0 && v.named + v.nnamed == l) {
				v.nnamed++;
			}
		}
		for (size_t i = b; i < e && v.nids < UNNAMED_MAX; i++)
			if (s->status.v[i].pg < 0)
				v.ids[v.nids++] = &s->status.v[i];
		v.tried = v.nids == (size_t)unnamed && v.nids <= v.ncand;
		if (v.tried)
			search(&v, 0, 0);
		if (v.steps > STEPS_MAX)
			v.solutions = 0;
		for (size_t i = 0; i < v.nids; i++) {
			uint64_t bits = v.seen[i];
			if (v.solutions && bits && !(bits & (bits - 1))) {
				size_t c = 0;
				while (!(bits & ((uint64_t)1 << c)))
					c++;
				((struct ts_hang_pg_status *)v.ids[i])->pg = v.cand[c];
			} else {
				left[i] = 1;
			}
		}
		for (size_t i = 0; i < v.nids; i++)
			if (left[i]) {
				say(&v, file, left, said);
				break;
			}
	}
	free(prog);
	free(before);
	return failed || said->failed ? TS_ENOMEM : 0;
}

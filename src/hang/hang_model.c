/*
 * hang_model.c - the evidence set every hang reader fills: files, evidence
 * lines, process groups merged across sources, and the fixed vocabularies
 * (incident classes, normalised op kinds).
 */
#include <stdlib.h>
#include <string.h>
#include "hang_int.h"

void ts_hang_set_init(struct ts_hang_set *s)
{
	memset(s, 0, sizeof(*s));
	ts_arena_init(&s->arena);
	ts_intern_init(&s->strs);
	ts_intern_init(&s->tmo_keys);
	ts_intern_init(&s->pg_guids);
	s->world_size = -1;
	s->ev_musa = s->ev_maca = s->ev_cuda = s->ev_torchcomms = -1;
	s->ev_pgmccl = s->ev_musa_state = -1;
}

void ts_hang_set_release(struct ts_hang_set *s)
{
	for (size_t i = 0; i < s->reports.n; i++) {
		struct ts_hang_report *r = &s->reports.v[i];
		for (size_t g = 0; g < r->groups.n; g++)
			TS_VEC_RELEASE(r->groups.v[g].ranks);
		TS_VEC_RELEASE(r->groups);
		TS_VEC_RELEASE(r->culprits);
		TS_VEC_RELEASE(r->missing);
		TS_VEC_RELEASE(r->expected);
		TS_VEC_RELEASE(r->evs);
	}
	TS_VEC_RELEASE(s->reports);
	TS_VEC_RELEASE(s->files);
	TS_VEC_RELEASE(s->evs);
	TS_VEC_RELEASE(s->pgs);
	TS_VEC_RELEASE(s->works);
	TS_VEC_RELEASE(s->progress);
	TS_VEC_RELEASE(s->colls);
	TS_VEC_RELEASE(s->dumps);
	TS_VEC_RELEASE(s->unread);
	TS_VEC_RELEASE(s->cut_lines);
	TS_VEC_RELEASE(s->status);
	TS_VEC_RELEASE(s->locals);
	TS_VEC_RELEASE(s->ranks_seen);
	ts_arena_release(&s->arena);
	ts_intern_release(&s->strs);
	ts_intern_release(&s->tmo_keys);
	TS_VEC_RELEASE(s->tmo_work);
	ts_intern_release(&s->pg_guids);
	TS_VEC_RELEASE(s->pg_head);
	TS_VEC_RELEASE(s->pg_next);
	if (s->scratch) {
		hang_pool_free(s->scratch);
		free(s->scratch);
	}
	ts_hang_set_init(s);
}

/* Length of the valid UTF-8 sequence at p (1-4), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t k;
	uint32_t cp;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		k = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		k = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		k = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (k > n)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((k == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return k;
}

size_t hang_utf8_clean(char *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		size_t k = utf8_len((const unsigned char *)p + i, n - i);
		if (!k) {
			if (i + 4 >= n && (unsigned char)p[i] >= 0xc2) /* a character cut at the end */
				return i;
			p[i++] = '?';
		} else {
			i += k;
		}
	}
	return n;
}

const char *hang_strndup(struct ts_hang_set *s, const char *p, size_t n)
{
	char *c = ts_arena_strndup(&s->arena, p, n);
	if (c)
		c[hang_utf8_clean(c, n)] = 0;
	return c;
}

int hang_add_file(struct ts_hang_set *s, const char *name)
{
	const char *c = hang_strndup(s, name, strlen(name));
	if (!c || TS_VEC_PUSH(s->files, c))
		return -1;
	return (int)s->files.n - 1;
}

int hang_add_ev(struct ts_hang_set *s, uint32_t file, int64_t line, const char *text, size_t n)
{
	struct ts_hang_ev e;

	while (n && (text[n - 1] == '\r' || text[n - 1] == ' '))
		n--;
	if (n > TS_HANG_TEXT_MAX)
		n = TS_HANG_TEXT_MAX;
	e.file = file;
	e.line = line;
	e.month = e.day = -1;
	e.tod_ns = -1;
	e.text = hang_strndup(s, text, n);
	if (!e.text || TS_VEC_PUSH(s->evs, e))
		return -1;
	return (int)s->evs.n - 1;
}

static int same(const char *a, const char *b, size_t bn)
{
	return strlen(a) == bn && memcmp(a, b, bn) == 0;
}

/* The lowest group index named guid, -1 when none; then s->pg_next */
static int guid_first(const struct ts_hang_set *s, const char *guid, size_t guid_n)
{
	int64_t id = ts_intern_find(&s->pg_guids, guid, guid_n);

	return id < 0 ? -1 : s->pg_head.v[id];
}

/* File group pg (its guid just set) under its guid, in index order */
static void guid_file(struct ts_hang_set *s, int pg)
{
	const char *g = s->pgs.v[pg].guid;
	int64_t id = ts_intern(&s->pg_guids, g, strlen(g));
	int *at;

	if (id < 0)
		return;
	while (s->pg_next.n <= (size_t)pg)
		if (TS_VEC_PUSH(s->pg_next, -1))
			return;
	if ((size_t)id == s->pg_head.n) {
		if (TS_VEC_PUSH(s->pg_head, pg) == 0)
			s->pg_next.v[pg] = -1;
		return;
	}
	at = &s->pg_head.v[id];
	while (*at >= 0 && *at < pg)
		at = &s->pg_next.v[*at];
	s->pg_next.v[pg] = *at;
	*at = pg;
}

int hang_pg(struct ts_hang_set *s, int64_t id, const char *guid, size_t guid_n,
	    const char *desc, size_t desc_n, const char *ranks)
{
	struct ts_hang_pg pg;

	if (id < 0 && !guid && !desc)
		return -1;
	for (size_t i = 0; i < s->pgs.n; i++) {
		struct ts_hang_pg *p = &s->pgs.v[i];
		int common = 0, clash = 0;
		if (id >= 0 && p->id >= 0)
			p->id == id ? common++ : clash++;
		if (guid && p->guid)
			same(p->guid, guid, guid_n) ? common++ : clash++;
		if (desc && p->desc)
			same(p->desc, desc, desc_n) ? common++ : clash++;
		if (ranks && p->ranks)
			strcmp(p->ranks, ranks) == 0 ? common++ : clash++;
		if (clash || !common)
			continue;
		if (p->id < 0 && !p->id_varies)
			p->id = id;
		if (!p->guid && guid && (p->guid = hang_strndup(s, guid, guid_n)))
			guid_file(s, (int)i);
		if (!p->desc && desc)
			p->desc = hang_strndup(s, desc, desc_n);
		if (!p->ranks && ranks)
			p->ranks = hang_strndup(s, ranks, strlen(ranks));
		return (int)i;
	}
	pg.id = id;
	pg.id_varies = 0;
	pg.guid = guid ? hang_strndup(s, guid, guid_n) : NULL;
	pg.desc = desc ? hang_strndup(s, desc, desc_n) : NULL;
	pg.ranks = ranks ? hang_strndup(s, ranks, strlen(ranks)) : NULL;
	if (TS_VEC_PUSH(s->pgs, pg))
		return -1;
	if (pg.guid)
		guid_file(s, (int)s->pgs.n - 1);
	return (int)s->pgs.n - 1;
}

int hang_pg_dump(struct ts_hang_set *s, int64_t id, const char *guid, size_t guid_n,
		 const char *desc, size_t desc_n, const char *ranks)
{
	struct ts_hang_pg pg;

	if (!guid)
		return hang_pg(s, id, guid, guid_n, desc, desc_n, ranks);
	for (int i = guid_first(s, guid, guid_n); i >= 0; i = s->pg_next.v[i]) {
		struct ts_hang_pg *p = &s->pgs.v[i];
		if ((desc && p->desc && !same(p->desc, desc, desc_n)) ||
		    (ranks && p->ranks && strcmp(p->ranks, ranks) != 0))
			continue;
		if (p->id >= 0 && id >= 0 && p->id != id) {
			p->id = -1;
			p->id_varies = 1;
		} else if (p->id < 0 && !p->id_varies) {
			p->id = id;
		}
		if (!p->desc && desc)
			p->desc = hang_strndup(s, desc, desc_n);
		if (!p->ranks && ranks)
			p->ranks = hang_strndup(s, ranks, strlen(ranks));
		return i;
	}
	pg.id = id;
	pg.id_varies = 0;
	pg.guid = hang_strndup(s, guid, guid_n);
	pg.desc = desc ? hang_strndup(s, desc, desc_n) : NULL;
	pg.ranks = ranks ? hang_strndup(s, ranks, strlen(ranks)) : NULL;
	if (TS_VEC_PUSH(s->pgs, pg))
		return -1;
	if (pg.guid)
		guid_file(s, (int)s->pgs.n - 1);
	return (int)s->pgs.n - 1;
}

int hang_pg_log(struct ts_hang_set *s, int64_t id, const char *guid, size_t guid_n,
		const char *desc, size_t desc_n)
{
	for (int i = guid ? guid_first(s, guid, guid_n) : -1; i >= 0; i = s->pg_next.v[i]) {
		const struct ts_hang_pg *p = &s->pgs.v[i];
		if (!desc || !p->desc || same(p->desc, desc, desc_n))
			return hang_pg_dump(s, id, guid, guid_n, desc, desc_n, NULL);
	}
	return hang_pg(s, id, guid, guid_n, desc, desc_n, NULL);
}

int hang_set_has(const void *vec, int64_t v)
{
	const struct hang_i64v *x = vec;
	size_t lo = ts_lower_bound(x->v, x->n, sizeof(*x->v), &v, ts_i64_below);

	return lo < x->n && x->v[lo] == v;
}

int hang_set_add(void *vec, int64_t v)
{
	struct hang_i64v *x = vec;
	size_t lo = ts_lower_bound(x->v, x->n, sizeof(*x->v), &v, ts_i64_below);

	if (lo < x->n && x->v[lo] == v)
		return 0;
	if (ts_grow((void **)&x->v, &x->cap, x->n + 1, sizeof(int64_t)))
		return TS_ENOMEM;
	memmove(x->v + lo + 1, x->v + lo, (x->n - lo) * sizeof(int64_t));
	x->v[lo] = v;
	x->n++;
	return 0;
}

int hang_ranks_next(const char **pp, int64_t *rank)
{
	const char *p = *pp;

	for (;;) {
		int64_t v = 0;
		int over = 0;

		while (*p && !(*p >= '0' && *p <= '9'))
			p++;
		if (!*p) {
			*pp = p;
			return 0;
		}
		for (; *p >= '0' && *p <= '9'; p++) {
			if (v > (INT64_MAX - 9) / 10)
				over = 1;
			else
				v = v * 10 + (*p - '0');
		}
		if (!over) {
			*rank = v;
			*pp = p;
			return 1;
		}
	}
}

void hang_rank_seen(struct ts_hang_set *s, int64_t rank)
{
	if (rank >= 0)
		hang_set_add(&s->ranks_seen, rank);
}

void hang_work_init(struct ts_hang_work *w)
{
	memset(w, 0, sizeof(*w));
	w->rank = -1;
	w->pg = -1;
	w->seq = -1;
	w->record_id = w->p2p_seq = w->created_ns = w->completed_ns = -1;
	w->numel_in = w->numel_out = -1;
	w->timeout_ms = w->ran_for_ms = -1;
	w->ev = -1;
}

void hang_report_init(struct ts_hang_report *r, enum ts_hang_report_kind kind)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->reporter = -1;
	r->pg = -1;
	r->seq = r->record_id = -1;
	r->numel_in = r->numel_out = -1;
	r->world = -1;
	r->size_a = r->size_b = -1;
	r->frames = -1;
	r->cuda_runtime = r->cuda_driver = r->nodes = r->procs_per_node = -1;
}

const char *ts_hang_class_name(enum ts_hang_class c)
{
	static const char *const names[] = {
		"not_joined", "mismatch", "all_stuck", "init", "watchdog_late",
		"rank_dead", "undecided"
	};
	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "undecided";
}

const char *ts_hang_op_name(enum ts_hang_op k)
{
	static const char *const names[] = {
		"unknown", "all_reduce", "all_gather", "reduce_scatter", "broadcast",
		"reduce", "gather", "scatter", "all_to_all", "send", "recv", "barrier",
		"coalesced"
	};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

/* Op names from every source, letters only, lower-cased, in the order that
 * keeps longer names before their prefixes. */
enum ts_hang_op ts_hang_op_kind(const char *op, size_t n)
{
	static const struct { const char *key; enum ts_hang_op k; } tab[] = {
		{ "allreducecoalesced", TS_OP_COALESCED },
		{ "allgatherintotensorcoalesced", TS_OP_COALESCED },
		{ "reducescattertensorcoalesced", TS_OP_COALESCED },
		{ "coalesced", TS_OP_COALESCED },
		{ "allreduce", TS_OP_ALL_REDUCE },
		{ "allgather", TS_OP_ALL_GATHER },
		{ "reducescatter", TS_OP_REDUCE_SCATTER },
		{ "broadcast", TS_OP_BROADCAST },
		{ "alltoall", TS_OP_ALL_TO_ALL },
		{ "reduce", TS_OP_REDUCE },
		{ "gather", TS_OP_GATHER },
		{ "scatter", TS_OP_SCATTER },
		{ "barrier", TS_OP_BARRIER },
		{ "send", TS_OP_SEND },
		{ "recv", TS_OP_RECV },
	};
	char buf[64];
	size_t k = 0, i = 0;

	/* drop a backend prefix "nccl:" / "mccl:" */
	for (size_t c = 0; c < n; c++)
		if (op[c] == ':') {
			i = c + 1;
			break;
		}
	for (; i < n && k + 1 < sizeof(buf); i++) {
		char c = op[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c >= 'a' && c <= 'z')
			buf[k++] = c;
		else if (c == ' ')
			break; /* "send 0->1" */
	}
	buf[k] = 0;
	for (size_t t = 0; t < sizeof(tab) / sizeof(tab[0]); t++)
		if (strstr(buf, tab[t].key))
			return tab[t].k;
	return TS_OP_UNKNOWN;
}

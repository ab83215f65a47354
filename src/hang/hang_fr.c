/*
 * hang_fr.c - Flight Recorder dumps (pickle, JSON, Python repr) and NCCL
 * RAS JSON reports into the evidence set, and the reader that picks text,
 * pickle or document by the first bytes of a file.
 */
#include <stdlib.h>
#include <string.h>
#include "hang_int.h"
#include "trainscope/detect.h"
#include "trainscope/input.h"
#include "trainscope/paths.h"
#include "trainscope/utf8.h"

static int64_t pv_int(const struct pv *v, int64_t dflt)
{
	if (!v)
		return dflt;
	if (v->t == PV_INT || v->t == PV_BOOL)
		return v->i;
	if (v->t == PV_STR) { /* pg_status keys and some ids are strings */
		int64_t x = 0;
		if (!v->n || v->n > 18)
			return dflt;
		for (size_t i = 0; i < v->n; i++) {
			if (v->s[i] < '0' || v->s[i] > '9')
				return dflt;
			x = x * 10 + (v->s[i] - '0');
		}
		return x;
	}
	return dflt;
}

static int is_seq(const struct pv *v)
{
	return v && (v->t == PV_LIST || v->t == PV_TUPLE);
}

/* "[0, 1, 2]" string or a list of ints into canonical "0,1,2" */
static const char *ranks_text(struct ts_hang_set *s, const struct pv *v)
{
	struct ts_sb sb;
	const char *out = NULL;
	int first = 1;

	if (!v)
		return NULL;
	ts_sb_init(&sb);
	if (is_seq(v)) {
		for (size_t i = 0; i < v->nit; i++)
			if (v->it[i]->t == PV_INT) {
				ts_sb_addf(&sb, "%s%lld", first ? "" : ",", (long long)v->it[i]->i);
				first = 0;
			}
	} else if (v->t == PV_STR) {
		for (size_t i = 0; i < v->n;) {
			if (v->s[i] >= '0' && v->s[i] <= '9') {
				size_t b = i;
				while (i < v->n && v->s[i] >= '0' && v->s[i] <= '9' && i - b < 18)
					i++;
				ts_sb_addf(&sb, "%s%.*s", first ? "" : ",", (int)(i - b), v->s + b);
				first = 0;
			} else {
				i++;
			}
		}
	}
	if (!sb.failed)
		out = hang_strndup(s, sb.buf, sb.len);
	ts_sb_release(&sb);
	return out;
}

/* decimal of v (printf-free: dumps have millions of dims) */
static void add_i64(struct ts_sb *sb, int64_t v)
{
	char b[24];
	int k = sizeof(b);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		b[--k] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		b[--k] = '-';
	ts_sb_add(sb, b + k, sizeof(b) - (size_t)k);
}

/* sizes [[3, 4], [5]] -> total numel, and canonical text into sb */
static int64_t sizes(const struct pv *v, struct ts_sb *sb)
{
	int64_t total = 0;
	ts_sb_addc(sb, '[');
	if (is_seq(v))
		for (size_t i = 0; i < v->nit; i++) {
			const struct pv *t = v->it[i];
			int64_t prod = 1;
			ts_sb_adds(sb, i ? ",[" : "[");
			if (is_seq(t))
				for (size_t k = 0; k < t->nit; k++) {
					int64_t d = pv_int(t->it[k], 0);
					if (k)
						ts_sb_addc(sb, ',');
					add_i64(sb, d);
					if (d > 0 && prod <= INT64_MAX / d)
						prod *= d;
					else
						prod = d > 0 ? prod : 0;
				}
			ts_sb_addc(sb, ']');
			if (total <= INT64_MAX - prod)
				total += prod;
		}
	ts_sb_addc(sb, ']');
	return total;
}

static void dtypes(const struct pv *v, struct ts_sb *sb)
{
	ts_sb_addc(sb, '[');
	if (is_seq(v))
		for (size_t i = 0; i < v->nit; i++)
			if (v->it[i]->t == PV_STR) {
				if (i)
					ts_sb_addc(sb, ',');
				ts_sb_add(sb, v->it[i]->s, v->it[i]->n > 32 ? 32 : v->it[i]->n);
			}
	ts_sb_addc(sb, ']');
}

static const char *interned(struct ts_hang_set *s, const char *p, size_t n)
{
	char buf[512];
	int64_t id;
	if (n > sizeof(buf))
		n = sizeof(buf);
	memcpy(buf, p, n);
	n = hang_utf8_clean(buf, n);
	id = ts_intern(&s->strs, buf, n);
	return id < 0 ? NULL : ts_intern_str(&s->strs, (uint32_t)id);
}

static enum ts_hang_state state_of(const struct pv *v)
{
	if (!v || v->t != PV_STR)
		return TS_ST_UNKNOWN;
	if (v->n == 9 && memcmp(v->s, "scheduled", 9) == 0)
		return TS_ST_SCHEDULED;
	if (v->n == 7 && memcmp(v->s, "started", 7) == 0)
		return TS_ST_STARTED;
	if (v->n == 9 && memcmp(v->s, "completed", 9) == 0)
		return TS_ST_COMPLETED;
	return TS_ST_UNKNOWN;
}

/* the entry keys the analysis reads, found in one pass over the dict */
enum { K_PG, K_PG_ID, K_SEQ, K_SEQ_OLD, K_RECORD, K_TIMEOUT, K_STATE, K_NAME, K_IN_SIZES, K_IN_DTYPES,
       K_OUT_SIZES, K_OUT_DTYPES, K_P2P_SEQ, K_IS_P2P, K_CREATED, K_COMPLETED, K_COUNT };
struct fr_keys {
	const struct pv *v[K_COUNT];
};

static void entry_keys(const struct pv *e, struct fr_keys *k)
{
	static const struct { const char *name; size_t n; int k; } tab[] = {
		{ "process_group", 13, K_PG }, { "pg_id", 5, K_PG_ID },
		{ "collective_seq_id", 17, K_SEQ }, { "seq_id", 6, K_SEQ_OLD },
		{ "record_id", 9, K_RECORD },
		{ "timeout_ms", 10, K_TIMEOUT }, { "state", 5, K_STATE },
		{ "profiling_name", 14, K_NAME }, { "input_sizes", 11, K_IN_SIZES },
		{ "input_dtypes", 12, K_IN_DTYPES }, { "output_sizes", 12, K_OUT_SIZES },
		{ "output_dtypes", 13, K_OUT_DTYPES }, { "p2p_seq_id", 10, K_P2P_SEQ },
		{ "is_p2p", 6, K_IS_P2P }, { "time_created_ns", 15, K_CREATED },
		{ "time_discovered_completed_ns", 28, K_COMPLETED },
	};
	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i + 1 < e->nit; i += 2) {
		const struct pv *key = e->it[i];
		if (key->t != PV_STR)
			continue;
		for (size_t t = 0; t < sizeof(tab) / sizeof(tab[0]); t++)
			if (key->n == tab[t].n && key->s[0] == tab[t].name[0] &&
			    memcmp(key->s, tab[t].name, key->n) == 0) {
				if (!k->v[tab[t].k]) /* the first of duplicate keys, as hang_pv_get */
					k->v[tab[t].k] = e->it[i + 1];
				break;
			}
	}
}

/* A pg_id of this dump and the group its entries of that id are of. */
struct local_pg { int64_t id; int pg; };

static int cfg_decimal(const struct pv *name, uint64_t *v)
{
	*v = 0;
	if (name->t != PV_STR || !name->n || name->n > 18)
		return 0;
	for (size_t i = 0; i < name->n; i++) {
		if (name->s[i] < '0' || name->s[i] > '9')
			return 0;
		*v = *v * 10 + (uint64_t)(name->s[i] - '0');
	}
	return 1;
}

static int cfg_group(struct ts_hang_set *s, const struct pv *cfg, size_t k, int64_t id)
{
	const struct pv *g = cfg->it[k + 1], *desc = hang_pv_get(g, "desc");
	const struct pv *name = cfg->it[k];

	if (name->t != PV_STR)
		return -1;
	return hang_pg_dump(s, id, name->s, name->n, desc && desc->t == PV_STR ? desc->s : NULL,
			    desc && desc->t == PV_STR ? desc->n : 0, ranks_text(s, hang_pv_get(g, "ranks")));
}

/* The pg_config groups of one dump by the pg_id its process gave them,
 * for pg_status ids none of its entries carries (cfg_ids_init). */
struct cfg_ids {
	size_t *by_id;   /* key index in pg_config of pg_id i, i < n */
	size_t n;        /* 0 when the names do not give the order */
	ssize_t lone;    /* key index of the one pg_config group no entry names
			    when one pg_status id names none too, else -1 */
};

struct cfg_num { uint64_t v; size_t k; };

static int cmp_cfg_num(const void *x, const void *y)
{
	const struct cfg_num *a = x, *b = y;
	return a->v < b->v ? -1 : a->v > b->v;
}

/* The largest pg_config and pg_status a dump's lone unnamed group is
 * looked for in (pairwise name comparisons). */
#define CFG_LONE_MAX 256

static int same_name(const char *g, const struct pv *name)
{
	return g && name->t == PV_STR && strlen(g) == name->n && memcmp(g, name->s, name->n) == 0;
}

/*
 * pg_id is the process-local creation index of a group (only groups the
 * rank is a member of count), and group names are the global creation
 * count ("0", "1", ...): when every pg_config name (the groups this rank is
 * a member of) is a number, the id-th in numeric order is pg_id id,
 * provided the ids the dump's entries carry (local) sit where their
 * groups' names do. Otherwise, when exactly one pg_config group has no
 * entry and exactly one pg_status id names none, they are each other
 * (small dumps only: CFG_LONE_MAX). Never another dump's group of that id:
 * that id is another process's. 0 or TS_ENOMEM; release c->by_id.
 */
static int cfg_ids_init(struct cfg_ids *c, struct ts_hang_set *s, const struct pv *cfg,
			const struct local_pg *local, size_t nlocal, const struct pv *st)
{
	size_t ncfg = cfg && cfg->t == PV_DICT ? cfg->nit / 2 : 0, nst = st && st->t == PV_DICT ? st->nit / 2 : 0;
	struct cfg_num *num;
	int ordered = 1;

	c->by_id = NULL;
	c->n = 0;
	c->lone = -1;
	if (!ncfg)
		return 0;
	if (!(num = malloc(ncfg * sizeof(*num))))
		return TS_ENOMEM;
	for (size_t k = 0; k < ncfg && ordered; k++) {
		num[k].k = 2 * k;
		ordered = cfg_decimal(cfg->it[2 * k], &num[k].v);
	}
	if (ordered)
		ts_sort(num, ncfg, sizeof(*num), cmp_cfg_num);
	for (size_t k = 1; k < ncfg && ordered; k++)
		ordered = num[k - 1].v != num[k].v;
	for (size_t m = 0; m < nlocal && ordered; m++) {
		const char *g = s->pgs.v[local[m].pg].guid;
		struct pv name = { .t = PV_STR, .s = g, .n = g ? strlen(g) : 0 };
		struct cfg_num key, *at;
		ordered = g && cfg_decimal(&name, &key.v) &&
			  (at = bsearch(&key, num, ncfg, sizeof(*num), cmp_cfg_num)) &&
			  local[m].id == (int64_t)(at - num);
	}
	if (ordered && (c->by_id = malloc(ncfg * sizeof(*c->by_id)))) {
		for (size_t k = 0; k < ncfg; k++)
			c->by_id[k] = num[k].k;
		c->n = ncfg;
	}
	free(num);
	if (ordered && !c->by_id)
		return TS_ENOMEM;
	if (ncfg <= CFG_LONE_MAX && nlocal <= CFG_LONE_MAX && nst <= CFG_LONE_MAX) {
		size_t free_cfg = 0, free_ids = 0;
		for (size_t k = 0; k + 1 < cfg->nit; k += 2) {
			int used = 0;
			for (size_t m = 0; m < nlocal; m++)
				used |= same_name(s->pgs.v[local[m].pg].guid, cfg->it[k]);
			if (!used) {
				free_cfg++;
				c->lone = (ssize_t)k;
			}
		}
		for (size_t k = 0; k + 1 < 2 * nst; k += 2) {
			int64_t x = pv_int(st->it[k], -1);
			int used = 0;
			for (size_t m = 0; m < nlocal; m++)
				used |= local[m].id == x;
			free_ids += !used;
		}
		if (free_cfg != 1 || free_ids != 1)
			c->lone = -1;
	}
	return 0;
}

/* The group of a pg_status id none of the dump's entries carries, -1. */
static int status_group(struct ts_hang_set *s, const struct pv *cfg, const struct cfg_ids *c, int64_t id)
{
	if (id >= 0 && (uint64_t)id < c->n)
		return cfg_group(s, cfg, c->by_id[id], id);
	return c->lone >= 0 ? cfg_group(s, cfg, (size_t)c->lone, id) : -1;
}

/* A dump with pg_status ids no group was found for: what it tells of
 * its groups, for ts_hang_analyze to try with the other dumps
 * (struct ts_hang_local): the (id, group) of its pg_status items from
 * first_status on that have one, and its pg_config groups none of them
 * names, with id -1. 0 or TS_ENOMEM. */
static int dump_locals(struct ts_hang_set *s, const struct pv *cfg, uint32_t file, size_t first_status)
{
	for (size_t i = first_status; i < s->status.n; i++) {
		struct ts_hang_local l = { file, s->status.v[i].id, s->status.v[i].pg };
		if (l.pg >= 0 && TS_VEC_PUSH(s->locals, l))
			return TS_ENOMEM;
	}
	for (size_t k = 0; cfg && cfg->t == PV_DICT && k + 1 < cfg->nit; k += 2) {
		struct ts_hang_local l = { file, -1, cfg_group(s, cfg, k, -1) };
		size_t i;
		if (l.pg < 0)
			continue;
		for (i = first_status; i < s->status.n && s->status.v[i].pg != l.pg; i++)
			;
		if (i == s->status.n && TS_VEC_PUSH(s->locals, l))
			return TS_ENOMEM;
	}
	return 0;
}

static int fr_dump(struct ts_hang_set *s, const struct pv *root, uint32_t file, int64_t rank,
		   int64_t cut, const char *name, struct ts_err *err)
{
	const struct pv *cfg = hang_pv_get(root, "pg_config");
	const struct pv *st = hang_pv_get(root, "pg_status");
	const struct pv *ents = hang_pv_get(root, "entries");
	const struct pv *ver = hang_pv_get(root, "version");
	struct ts_hang_dump dump;
	struct ts_sb sb;
	size_t first_work = s->works.n, nents;
	int last_pg = -1;
	int64_t last_id = -1;
	TS_VEC(struct local_pg) local = { 0 };
	struct cfg_ids ids;
	const char *last_name = NULL, *last_desc = NULL;
	size_t last_name_n = 0, last_desc_n = 0, unnamed = 0, first_status = s->status.n;

	if (hang_pv_get(root, "rank"))
		rank = pv_int(hang_pv_get(root, "rank"), rank);
	memset(&dump, 0, sizeof(dump));
	dump.rank = rank;
	dump.file = file;
	dump.cut_at = cut;
	dump.entries_cut = cut >= 0 && (!ents || ents->cut);
	if (ver && ver->t == PV_STR)
		dump.version = hang_strndup(s, ver->s, ver->n > 16 ? 16 : ver->n);
	if (ents && !is_seq(ents))
		return ts_err_at(err, TS_EUNSUPPORTED, name, -1, -1, "Flight Recorder \"entries\" is not a list");
	hang_rank_seen(s, rank);
	if (hang_pv_get(root, "mccl_comm_state") && s->ev_musa_state < 0)
		s->ev_musa_state = hang_add_ev(s, file, -1, "dump key mccl_comm_state (torch_musa)",
					       strlen("dump key mccl_comm_state (torch_musa)"));
	/* a cut dump: the entry the input ends inside is not a record */
	nents = ents ? ents->nit : 0;
	if (cut >= 0 && nents && ents->it[nents - 1] && ents->it[nents - 1]->cut)
		nents--;
	ts_sb_init(&sb);
	for (size_t i = 0; i < nents; i++) {
		const struct pv *e = ents->it[i], *pg, *pn;
		struct fr_keys ek;
		const char *gname = NULL, *gdesc = NULL, *granks = NULL;
		size_t gname_n = 0, gdesc_n = 0;
		struct ts_hang_work w;
		int64_t pg_id;

		if (!e || e->t != PV_DICT)
			continue;
		entry_keys(e, &ek);
		pg = ek.v[K_PG];
		hang_work_init(&w);
		w.rank = rank;
		w.from_dump = 1;
		w.file = file;
		pg_id = pv_int(ek.v[K_PG_ID], -1);
		if (is_seq(pg) && pg->nit >= 2 && pg->it[0]->t == PV_STR && pg->it[1]->t == PV_STR) {
			gname = pg->it[0]->s;
			gname_n = pg->it[0]->n;
			gdesc = pg->it[1]->s;
			gdesc_n = pg->it[1]->n;
		}
		/* consecutive entries of one group: the group found for the last one */
		if (last_pg >= 0 && pg_id == last_id && gname_n == last_name_n && gdesc_n == last_desc_n &&
		    (!gname_n || memcmp(gname, last_name, gname_n) == 0) &&
		    (!gdesc_n || memcmp(gdesc, last_desc, gdesc_n) == 0)) {
			w.pg = last_pg;
		} else {
			/* pg_config is keyed by the group name */
			for (size_t k = 0; gname && cfg && cfg->t == PV_DICT && k + 1 < cfg->nit; k += 2)
				if (cfg->it[k]->t == PV_STR && cfg->it[k]->n == gname_n &&
				    memcmp(cfg->it[k]->s, gname, gname_n) == 0)
					granks = ranks_text(s, hang_pv_get(cfg->it[k + 1], "ranks"));
			w.pg = hang_pg_dump(s, pg_id, gname, gname_n, gdesc, gdesc_n, granks);
			/* this dump's pg_id -> group, for its pg_status */
			if (pg_id >= 0 && w.pg >= 0) {
				size_t m;
				for (m = 0; m < local.n && local.v[m].id != pg_id; m++)
					;
				if (m == local.n) {
					struct local_pg lp = { pg_id, w.pg };
					if (TS_VEC_PUSH(local, lp)) {
						ts_sb_release(&sb);
						TS_VEC_RELEASE(local);
						return ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
					}
				}
			}
			last_pg = w.pg;
			last_id = pg_id;
			last_name = gname;
			last_name_n = gname_n;
			last_desc = gdesc;
			last_desc_n = gdesc_n;
		}
		/* dumps of versions 1.x (PyTorch 2.2-2.3) name the sequence seq_id */
		w.seq = pv_int(ek.v[K_SEQ] ? ek.v[K_SEQ] : ek.v[K_SEQ_OLD], -1);
		w.record_id = pv_int(ek.v[K_RECORD], -1);
		w.p2p_seq = pv_int(ek.v[K_P2P_SEQ], -1);
		w.created_ns = pv_int(ek.v[K_CREATED], -1);
		w.completed_ns = pv_int(ek.v[K_COMPLETED], -1);
		w.timeout_ms = pv_int(ek.v[K_TIMEOUT], -1);
		w.state = state_of(ek.v[K_STATE]);
		dump.timing |= w.state == TS_ST_STARTED;
		pn = ek.v[K_NAME];
		if (pn && pn->t == PV_STR) {
			w.op = interned(s, pn->s, pn->n > 64 ? 64 : pn->n);
			w.kind = ts_hang_op_kind(pn->s, pn->n);
			const char *colon = memchr(pn->s, ':', pn->n);
			if (colon && !dump.backend)
				dump.backend = interned(s, pn->s, (size_t)(colon - pn->s));
			if (colon && colon - pn->s == 4 && memcmp(pn->s, "mccl", 4) == 0)
				s->mccl_lines++;
			else if (colon && colon - pn->s == 4 && memcmp(pn->s, "nccl", 4) == 0)
				s->nccl_lines++;
		}
		ts_sb_reset(&sb);
		w.numel_in = sizes(ek.v[K_IN_SIZES], &sb);
		dtypes(ek.v[K_IN_DTYPES], &sb);
		ts_sb_addc(&sb, '>');
		w.numel_out = sizes(ek.v[K_OUT_SIZES], &sb);
		dtypes(ek.v[K_OUT_DTYPES], &sb);
		if (w.kind == TS_OP_COALESCED && ek.v[K_IS_P2P] && ek.v[K_IS_P2P]->t == PV_BOOL &&
		    ek.v[K_IS_P2P]->i && w.p2p_seq >= 0) {
			/* the end of a batch of point-to-point ops
			 * (batch_isend_irecv): its members share its p2p_seq_id,
			 * and its collective_seq_id is the group's last
			 * collective's, not a seq of its own; the members stay
			 * point-to-point ops, matched with their peers' */
			dump.entries++;
			continue;
		}
		if (w.kind == TS_OP_COALESCED) {
			/* the coalesced entry stands for the group: its members of
			 * this dump (same group and seq) are folded into it; P2P
			 * members differ by rank by design, so only collective
			 * members' shapes are compared */
			struct ts_sb g;
			int p2p = 0;
			size_t keep = first_work;
			ts_sb_init(&g);
			for (size_t k = first_work; k < s->works.n; k++) {
				struct ts_hang_work *m = &s->works.v[k];
				if (m->pg == w.pg && m->seq == w.seq && m->kind != TS_OP_COALESCED) {
					if (m->kind == TS_OP_SEND || m->kind == TS_OP_RECV)
						p2p = 1;
					else if (m->shape)
						ts_sb_addf(&g, "%s%s;", m->op ? m->op : "", m->shape);
					continue;
				}
				s->works.v[keep++] = *m;
			}
			s->works.n = keep;
			if (!p2p && g.len)
				w.shape = interned(s, g.buf, g.len);
			else
				w.shape = p2p ? "p2p" : NULL;
			ts_sb_release(&g);
		} else if (!sb.failed) {
			w.shape = interned(s, sb.buf, sb.len);
		}
		if (TS_VEC_PUSH(s->works, w)) {
			ts_sb_release(&sb);
			TS_VEC_RELEASE(local);
			return ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
		}
		dump.entries++;
	}
	ts_sb_release(&sb);
	if (cfg_ids_init(&ids, s, cfg, local.v, local.n, st)) {
		TS_VEC_RELEASE(local);
		return ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
	}
	/* pg_status: keyed by this process's pg_ids */
	for (size_t k = 0; st && st->t == PV_DICT && k + 1 < st->nit; k += 2) {
		int64_t id = pv_int(st->it[k], -1);
		const struct pv *v = st->it[k + 1];
		struct ts_hang_pg_status ps;
		ps.rank = rank;
		ps.pg = -1;
		/* the group its own entries of that pg_id are of, else the one
		 * its own pg_config gives that id (never another dump's group of
		 * that id: pg_id is process-local) */
		for (size_t m = 0; m < local.n && ps.pg < 0; m++)
			if (local.v[m].id == id)
				ps.pg = local.v[m].pg;
		if (ps.pg < 0 && id >= 0)
			ps.pg = status_group(s, cfg, &ids, id);
		if (id < 0)
			continue;
		ps.id = id;
		ps.file = file;
		unnamed += ps.pg < 0;
		ps.enqueued = pv_int(hang_pv_get(v, "last_enqueued_collective"), -1);
		ps.started = pv_int(hang_pv_get(v, "last_started_collective"), -1);
		ps.completed = pv_int(hang_pv_get(v, "last_completed_collective"), -1);
		dump.timing |= ps.started >= 0;
		if (TS_VEC_PUSH(s->status, ps)) {
			TS_VEC_RELEASE(local);
			free(ids.by_id);
			return ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
		}
	}
	if (unnamed && dump_locals(s, cfg, file, first_status)) {
		TS_VEC_RELEASE(local);
		free(ids.by_id);
		return ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
	}
	TS_VEC_RELEASE(local);
	free(ids.by_id);
	if (TS_VEC_PUSH(s->dumps, dump))
		return ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
	return 0;
}

static int truthy(const struct pv *v)
{
	return v && (v->t == PV_BOOL || v->t == PV_INT) && v->i != 0;
}

/* NCCL RAS JSON: communicators[{size, ranks[{rank, collective_counts}],
 * missing_ranks[{rank, status{unresponsive, considered_dead}}]}] */
static int ras_json(struct ts_hang_set *s, const struct pv *root, uint32_t file, const char *name,
		    struct ts_err *err)
{
	const struct pv *comms = hang_pv_get(root, "communicators");
	int ev = hang_add_ev(s, file, -1, "NCCL RAS JSON report", 20);

	for (size_t c = 0; is_seq(comms) && c < comms->nit; c++) {
		const struct pv *cm = comms->it[c], *ranks = hang_pv_get(cm, "ranks");
		const struct pv *miss = hang_pv_get(cm, "missing_ranks");
		struct ts_hang_report r;
		hang_report_init(&r, TS_REP_RAS);
		r.world = pv_int(hang_pv_get(cm, "size"), -1);
		for (size_t i = 0; is_seq(ranks) && i < ranks->nit; i++) {
			const struct pv *rk = ranks->it[i], *cc = hang_pv_get(rk, "collective_counts");
			int64_t rank = pv_int(hang_pv_get(rk, "rank"), -1);
			for (size_t k = 0; cc && cc->t == PV_DICT && k + 1 < cc->nit; k += 2) {
				const struct pv *fn = cc->it[k];
				int64_t cnt = pv_int(cc->it[k + 1], -1);
				struct ts_hang_group *g = NULL;
				if (fn->t != PV_STR)
					continue;
				if (!r.op)
					r.op = hang_strndup(s, fn->s, fn->n > 32 ? 32 : fn->n);
				else if (strlen(r.op) != fn->n || memcmp(r.op, fn->s, fn->n))
					continue; /* one function per report: the first named */
				for (size_t gi = 0; gi < r.groups.n; gi++)
					if (r.groups.v[gi].seq == cnt)
						g = &r.groups.v[gi];
				if (!g) {
					struct ts_hang_group ng;
					memset(&ng, 0, sizeof(ng));
					ng.seq = cnt;
					ng.what = "launched";
					ng.ev = ev;
					if (TS_VEC_PUSH(r.groups, ng))
						return ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
					g = &r.groups.v[r.groups.n - 1];
				}
				hang_set_add(&g->ranks, rank);
				g->count = (int64_t)g->ranks.n;
			}
		}
		for (size_t i = 0; is_seq(miss) && i < miss->nit; i++) {
			const struct pv *st = hang_pv_get(miss->it[i], "status");
			hang_set_add(&r.missing, pv_int(hang_pv_get(miss->it[i], "rank"), -1));
			if (truthy(hang_pv_get(st, "considered_dead")) || truthy(hang_pv_get(st, "unresponsive")))
				r.dead = 1;
		}
		if (ev >= 0)
			TS_VEC_PUSH(r.evs, ev);
		if (TS_VEC_PUSH(s->reports, r))
			return ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
	}
	s->nccl_lines++;
	return 0;
}

int hang_from_pv(struct ts_hang_set *s, const struct pv *root, uint32_t file, int64_t rank,
		 int64_t cut, int ras, const char *name, struct ts_err *err)
{
	int comms;

	if (!root || root->t != PV_DICT)
		return ts_err_at(err, cut >= 0 ? TS_ETRUNC : TS_EUNSUPPORTED, name, cut >= 0 ? cut : 0,
				 -1, cut >= 0 ? "input ends inside the document" :
				 "not a Flight Recorder dump or NCCL RAS report (the top level is not a dict)");
	comms = ras && hang_pv_get(root, "communicators");
	if (comms && cut < 0)
		return ras_json(s, root, file, name, err);
	if (!comms && (hang_pv_get(root, "entries") || hang_pv_get(root, "pg_config")))
		return fr_dump(s, root, file, rank, cut, name, err);
	if (cut >= 0)
		return ts_err_at(err, TS_ETRUNC, name, cut, -1, "input ends inside the document");
	return ts_err_at(err, TS_EUNSUPPORTED, name, 0, 1, ras ?
			 "not a Flight Recorder dump or NCCL RAS report (no \"entries\", \"pg_config\" or \"communicators\")" :
			 "not a Flight Recorder dump (no \"entries\" or \"pg_config\")");
}

static int doc(struct ts_hang_set *s, const void *data, size_t n, const char *name, int64_t rank,
	       int pickle, struct ts_err *err)
{
	struct pv *root = NULL;
	int64_t cut = -1;
	int file = hang_add_file(s, name), rc;

	if (file < 0)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	if (!s->scratch && !(s->scratch = calloc(1, sizeof(*s->scratch))))
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	hang_pool_reset(s->scratch);
	rc = pickle ? hang_pv_parse_pickle(s->scratch, data, n, name, &root, &cut, err)
		    : hang_pv_parse_text(s->scratch, data, n, name, &root, &cut, err);
	if (!rc)
		rc = hang_from_pv(s, root, (uint32_t)file, rank, cut, !pickle, name, err);
	if (rc == TS_ENOMEM && err && err->code == TS_OK)
		ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
	hang_pool_reset(s->scratch);
	if (!rc && s->arena.failed)
		rc = ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
	return rc;
}

int ts_hang_read_pickle_mem(struct ts_hang_set *s, const void *data, size_t n,
			    const char *name, int64_t rank, struct ts_err *err)
{
	return doc(s, data, n, name, rank, 1, err);
}

int ts_hang_read_pyobj_mem(struct ts_hang_set *s, const void *data, size_t n,
			   const char *name, int64_t rank, struct ts_err *err)
{
	return doc(s, data, n, name, rank, 0, err);
}

/* trailing number of the base name after dropping extensions: the rank
 * fr_trace takes from "nccl_trace_rank_5" (and "rank_5.json") */
static int64_t rank_from_name(const char *path)
{
	const char *b = ts_basename(path);
	size_t n = strlen(b);
	int64_t v = 0, mul = 1;
	size_t k;

	for (;;) { /* drop ".json", ".pkl", ".gz" ... (letters only) */
		const char *dot = memrchr(b, '.', n);
		size_t i;
		if (!dot || dot == b)
			break;
		for (i = (size_t)(dot - b) + 1; i < n; i++)
			if (!((b[i] >= 'a' && b[i] <= 'z') || (b[i] >= 'A' && b[i] <= 'Z')))
				break;
		if (i != n)
			break;
		n = (size_t)(dot - b);
	}
	for (k = n; k > 0 && b[k - 1] >= '0' && b[k - 1] <= '9' && n - k < 9; k--) {
		v += (b[k - 1] - '0') * mul;
		mul *= 10;
	}
	/* "v2.5": a version, not a rank */
	if (k == n || (k > 0 && b[k - 1] == '.'))
		return -1;
	return v;
}

/* 'p' for a pickle (any protocol, ts_detect_pickle_opening), '{' for a
 * JSON or Python repr document, 't' for text lines. */
static int first_kind(const unsigned char *d, size_t n)
{
	size_t i = ts_bom_len(d, n);
	if (ts_detect_pickle_opening(d, n))
		return 'p';
	while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t'))
		i++;
	return i < n && d[i] == '{' ? '{' : 't';
}

int ts_hang_binary(const unsigned char *d, size_t n, struct ts_hang_unread *u)
{
	size_t m = n < 4096 ? n : 4096, t, bad = 0;
	const unsigned char *nul = m ? memchr(d, 0, m) : NULL;
	int64_t bad_at = nul ? nul - d : -1;
	int eol = 0;

	t = nul ? (size_t)(nul - d) : m;
	for (size_t i = 0; i < t;) {
		uint32_t cp = 0;
		int k = ts_utf8_seq(d + i, t - i, &cp);

		if (k == 0 || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\v' && cp != '\f' &&
			       cp != '\r' && cp != '\b' && cp != 0x1b) || cp == 0x7f) {
			if (!bad++)
				bad_at = (int64_t)i; /* before the NUL */
		}
		eol |= cp == '\n';
		i += k ? (size_t)k : 1;
	}
	if (u) {
		u->nul_at = nul ? nul - d : -1;
		u->nontext = (int64_t)bad;
		u->scanned = (int64_t)t;
		u->nul_early = nul && !eol;
		u->bad_at = u->nul_early ? u->nul_at : bad_at;
	}
	return (nul && !eol) || bad > t / 8;
}

/* An input about to be read as a text log (s->files' last one): an empty
 * or binary one (ts_hang_binary) is said and not read (*skip set), and one
 * with a Flight Recorder dump's name ("nccl_trace_rank_3",
 * "mccl_trace_rank_3") is a dump no reader here takes: remember it (struct
 * ts_hang_unread), with its first NUL byte in its first 4 KiB if it has
 * one. */
static int note_unread(struct ts_hang_set *s, const char *name, const unsigned char *d, size_t n,
		       int *skip)
{
	struct ts_hang_unread u;

	memset(&u, 0, sizeof(u));
	u.empty = n == 0;   /* d may be NULL then */
	u.binary = ts_hang_binary(d, n, &u);
	*skip = u.empty || u.binary;
	if (!*skip && !strstr(ts_basename(name), "_trace_rank_"))
		return 0;
	u.file = (uint32_t)(s->files.n - 1);
	u.nhead = n < sizeof(u.head) ? (int)n : (int)sizeof(u.head);
	if (n)
		memcpy(u.head, d, (size_t)u.nhead);
	return TS_VEC_PUSH(s->unread, u) ? TS_ENOMEM : 0;
}

int ts_hang_skip_file(struct ts_hang_set *s, const char *path, const char *kind)
{
	struct ts_hang_unread u;

	if (!strstr(ts_basename(path), "_trace_rank_"))
		return 0;
	memset(&u, 0, sizeof(u));
	u.nul_at = u.bad_at = -1;
	u.kind = kind;
	if (hang_add_file(s, path) < 0)
		return TS_ENOMEM;
	u.file = (uint32_t)(s->files.n - 1);
	return TS_VEC_PUSH(s->unread, u) ? TS_ENOMEM : 0;
}

/* An input whose opening is no dump's: read as text lines unless it is
 * empty or binary (note_unread); its first 4 KiB decide. */
static int read_text(struct ts_hang_set *s, const char *name, struct ts_input *in, struct ts_err *err)
{
	int64_t got;
	int skip = 0;

	while (in->len < 4096 && !in->eof)
		if ((got = ts_input_more(in, 0, err)) <= 0) {
			if (got < 0)
				return (int)got;
			break;
		}
	if (hang_add_file(s, name) < 0 || note_unread(s, name, in->data, in->len, &skip))
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	return skip ? 0 : hang_read_lines_input(s, in, err);
}

int ts_hang_read_mem(struct ts_hang_set *s, const void *data, size_t n,
		     const char *name, struct ts_err *err)
{
	int k = first_kind(data, n);
	if (k == 't') {
		struct ts_input in;
		int rc = ts_input_open_mem(&in, data, n, name, err);

		if (rc)
			return rc;
		rc = read_text(s, name, &in, err);
		ts_input_release(&in);
		return rc;
	}
	return doc(s, data, n, name, rank_from_name(name), k == 'p', err);
}

int ts_hang_read_file(struct ts_hang_set *s, const char *path, struct ts_err *err)
{
	struct ts_input in;
	int rc = ts_input_open(&in, path, err), k;
	int64_t got;

	if (rc)
		return rc;
	while (in.len < 64 && !in.eof)
		if ((got = ts_input_more(&in, 0, err)) <= 0) {
			if (got < 0) {
				ts_input_release(&in);
				return (int)got;
			}
			break;
		}
	k = first_kind(in.data, in.len);
	if (k == 't') {
		rc = read_text(s, path, &in, err);
		ts_input_release(&in);
		return rc;
	}
	while (!in.eof) {
		if (in.len > TS_HANG_DUMP_MAX) {
			ts_input_release(&in);
			return ts_err_at(err, TS_ELIMIT, path, (int64_t)TS_HANG_DUMP_MAX, -1,
					 "dump larger than %zu bytes", TS_HANG_DUMP_MAX);
		}
		if ((got = ts_input_more(&in, 0, err)) < 0) {
			ts_input_release(&in);
			return (int)got;
		}
		if (got == 0)
			break;
	}
	rc = doc(s, in.data, in.len, path, rank_from_name(path), k == 'p', err);
	ts_input_release(&in);
	/* a dump that opens like one and cannot be parsed (a corrupt pickle:
	 * an unknown opcode, a broken stack) is an unread input among others,
	 * its rank one without a dump; code it would run (TS_EUNSUPPORTED), a
	 * cut before its root holds entries (TS_ETRUNC) and memory stay errors */
	if (rc == TS_EPARSE && err && s->files.n) {
		struct ts_hang_unread u;

		memset(&u, 0, sizeof(u));
		u.file = (uint32_t)(s->files.n - 1);
		u.nul_at = -1;
		u.bad_at = err->offset;
		u.error_line = err->line;
		u.error = hang_strndup(s, err->msg, strlen(err->msg));
		if (!u.error || TS_VEC_PUSH(s->unread, u))
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		ts_err_init(err);
		return 0;
	}
	return rc;
}

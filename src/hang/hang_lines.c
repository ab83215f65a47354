/*
 * hang_lines.c - the text reader of hang evidence. Each line is stripped of
 * the prefixes launchers and loggers put in front (body(): ANSI colours, a
 * log collector's timestamp, srun's "3: ", torchrun's "[default3]:",
 * mpirun's "[1,3]<stderr>:", progress-bar redraws; strip(): reporter line numbers "[80746] ",
 * "(RayWorkerWrapper pid=...)", "[rank3]:", glog headers with 3- or 4-digit
 * MMDD or none at all), then matched against
 * the messages PyTorch's ProcessGroupNCCL / torch_musa's ProcessGroupMCCL,
 * NCCL (COLL, NET/IB, RAS) and fr_trace print. Multi-line reports (desync
 * debug, fr_trace, RAS) keep a small state so their lines stay together.
 * Lines that match nothing are skipped: a log holds much else.
 */
#include <stdlib.h>
#include <string.h>
#include "hang_int.h"
#include "trainscope/input.h"
#include "trainscope/json.h"
#include "trainscope/lineprefix.h"

struct lines_st {
	struct ts_hang_set *s;
	uint32_t file;
	int64_t lineno;
	int desync;     /* index of the open desync report, -1 */
	int desync_sub; /* 0 none, 1 culprit list, 2 snapshot */
	int64_t desync_reporter;
	int desync_opener; /* evidence of the "Rank N" line that opens a report */
	int frt;        /* open fr_trace report, -1 */
	int ras;        /* open RAS report, -1 */
	int ras_table;  /* next rows are the communicator table */
	int ras_summary;/* next numeric row is the job summary */
	int64_t ras_listed; /* group index holding listed ranks, -1 */
	struct ts_sb clean;  /* a line without its ANSI sequences */
};

static const char *find(const char *p, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	const char *h = k <= n ? memmem(p, n, needle, k) : NULL;
	return h ? h + k : NULL;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Decimal at p (after spaces); advances *pp. 0 or -1. */
static int num(const char **pp, const char *end, int64_t *out)
{
	const char *p = *pp;
	int neg = 0;
	int64_t v = 0;

	while (p < end && *p == ' ')
		p++;
	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	if (p >= end || !is_digit(*p))
		return -1;
	while (p < end && is_digit(*p)) {
		if (v > (INT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*p - '0');
		p++;
	}
	*out = neg ? -v : v;
	*pp = p;
	return 0;
}

static int num_after(const char *p, size_t n, const char *key, int64_t *out)
{
	const char *q = find(p, n, key);
	if (!q)
		return -1;
	return num(&q, p + n, out);
}

static int hexnum(const char **pp, const char *end, int64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int k = 0;

	while (p < end && *p == ' ')
		p++;
	for (; p < end && k < 16; p++, k++) {
		char c = *p;
		int d = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 :
			(c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
		if (d < 0)
			break;
		v = v << 4 | (uint64_t)d;
	}
	if (!k || v > INT64_MAX)
		return -1;
	*out = (int64_t)v;
	*pp = p;
	return 0;
}

/* A word after key up to a space, comma, ')' or end. */
static const char *word_after(const char *p, size_t n, const char *key, size_t *wn)
{
	const char *q = find(p, n, key), *end = p + n, *b;
	if (!q)
		return NULL;
	while (q < end && *q == ' ')
		q++;
	b = q;
	while (q < end && *q != ' ' && *q != ',' && *q != ')')
		q++;
	*wn = (size_t)(q - b);
	return *wn ? b : NULL;
}

/* Parse "[0, 1, 2]" or "{3, 4}" ranks (any brackets) into vec. */
static void rank_list(const char *p, const char *end, void *vec)
{
	while (p < end && *p != ']' && *p != '}') {
		int64_t v;
		if (is_digit(*p) && num(&p, end, &v) == 0)
			hang_set_add(vec, v);
		else
			p++;
	}
}

static int vendor_scan(struct lines_st *st, const char *l, size_t n, int ev)
{
	struct ts_hang_set *s = st->s;
	ev = ev >= 0 ? ev : 0; /* the fields below are "seen" marks */
	if (find(l, n, "MCCL") || find(l, n, "mccl:"))
		s->mccl_lines++;
	if (find(l, n, "NCCL") || find(l, n, "nccl:"))
		s->nccl_lines++;
	if (s->ev_musa < 0 && (find(l, n, "musa") || find(l, n, "MUSA") || find(l, n, "___mt_")))
		s->ev_musa = ev;
	if (s->ev_maca < 0 && (find(l, n, "/opt/maca") || find(l, n, "MACA") || find(l, n, "mcGraphLaunch")))
		s->ev_maca = ev;
	if (s->ev_cuda < 0 && (find(l, n, "CUDA") || find(l, n, "libtorch_cuda") || find(l, n, "cuda:")))
		s->ev_cuda = ev;
	if (s->ev_torchcomms < 0 && (find(l, n, "TorchCommMCCL") || find(l, n, "torchcomm")))
		s->ev_torchcomms = ev;
	return 0;
}

struct gtime {
	int month, day;
	int64_t tod_ns;
};

/* "E626 16:48:25.440243908" / "E1213 ..." at p (the severity letter first):
 * 3 digits are M DD, 4 are MM DD */
static void glog_time(const char *p, const char *end, struct gtime *t)
{
	const char *q = p + 1;
	int64_t md, h, m, sec, frac = 0;
	size_t nd;
	const char *b = q;
	if (num(&q, end, &md) || *b == '-')
		return;
	nd = (size_t)(q - b);
	if (nd != 3 && nd != 4)
		return;
	if (md / 100 < 1 || md / 100 > 12 || md % 100 < 1 || md % 100 > 31)
		return;
	t->month = (int)(md / 100);
	t->day = (int)(md % 100);
	if (q >= end || *q != ' ')
		return;
	if (num(&q, end, &h) || q >= end || *q++ != ':' || num(&q, end, &m) || q >= end || *q++ != ':' ||
	    num(&q, end, &sec))
		return;
	if (q < end && *q == '.') {
		int digits = 0;
		for (q++; q < end && is_digit(*q) && digits < 9; q++, digits++)
			frac = frac * 10 + (*q - '0');
		for (; digits < 9; digits++)
			frac *= 10;
	}
	if (h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 60)
		return;
	t->tod_ns = ((h * 60 + m) * 60 + sec) * 1000000000LL + frac;
}

/* Skip the launcher and logger prefixes; sets *rank from "[rankN]:" and *t
 * from a glog header. */
static const char *strip(const char *p, const char *end, int64_t *rank, int *glog, struct gtime *t)
{
	for (int round = 0; round < 8; round++) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end)
			break;
		if (*p == '[') {
			const char *c = memchr(p, ']', (size_t)(end - p));
			size_t k;
			if (!c)
				break;
			k = (size_t)(c - p - 1);
			if (k && k < 12) {
				size_t d = 0;
				while (d < k && is_digit(p[1 + d]))
					d++;
				if (d == k) { /* reporter line number */
					p = c + 1;
					continue;
				}
			}
			if (k > 4 && memcmp(p + 1, "rank", 4) == 0 && is_digit(p[5])) {
				const char *q = p + 5;
				int64_t r;
				if (num(&q, c, &r) == 0 && q == c) {
					*rank = r;
					p = c + 1 + (c + 1 < end && c[1] == ':');
					continue;
				}
			}
			if (k > 7 && memcmp(p + 1, "default", 7) == 0 && is_digit(p[8])) {
				p = c + 1 + (c + 1 < end && c[1] == ':');
				continue;
			}
			if (k > 2 && (p[1] == 'E' || p[1] == 'W' || p[1] == 'I' || p[1] == 'F') &&
			    (p[2] == ' ' || is_digit(p[2])) &&
			    (find(p, k + 1, ".cpp:") || find(p, k + 1, ".hpp:") || find(p, k + 1, ".h:") ||
			     find(p, k + 1, ".py:"))) {
				*glog = 1;
				glog_time(p + 1, c, t);
				p = c + 1;
				continue;
			}
			break;
		}
		if (*p == '(') {
			const char *c = memchr(p, ')', (size_t)(end - p));
			if (c && find(p, (size_t)(c - p), " pid=")) {
				p = c + 1;
				continue;
			}
			break;
		}
		/* raw glog: "E0626 16:48:25.440243 12345 ProcessGroupNCCL.cpp:670] " */
		if ((*p == 'E' || *p == 'W' || *p == 'I' || *p == 'F') && p + 5 < end &&
		    is_digit(p[1]) && is_digit(p[2]) && is_digit(p[3])) {
			size_t lim = (size_t)(end - p) < 96 ? (size_t)(end - p) : 96;
			const char *c = memchr(p, ']', lim);
			if (c && find(p, (size_t)(c - p), ".cpp:")) {
				*glog = 1;
				glog_time(p, c, t);
				p = c + 1;
				continue;
			}
		}
		break;
	}
	while (p < end && *p == ' ')
		p++;
	return p;
}

/* "[PG ID 0 PG GUID 0(default_pg) Rank 5]", "[PG 1 Rank 0]",
 * "[PG 0 (default_pg) Rank 7]", "[PG 3c6ef362 (tp) Rank 2]" (torch 2.4:
 * a name that is no number is the group's global name, its GUID),
 * "[Rank 3]" at p. Returns the pg index or -1; *rank gets the tag rank
 * when the tag has one. */
static int pg_tag(struct ts_hang_set *s, const char *p, const char *end, int64_t *rank,
		  const char **after)
{
	const char *c, *q;
	int64_t id = -1, r = -1;
	const char *guid = NULL, *desc = NULL;
	size_t guid_n = 0, desc_n = 0;

	*after = p;
	if (p >= end || *p != '[')
		return -1;
	c = memchr(p, ']', (size_t)(end - p));
	if (!c)
		return -1;
	q = p + 1;
	if ((size_t)(c - q) > 3 && memcmp(q, "PG ", 3) == 0) {
		const char *t;
		int digits = 1, id_kw = 0;
		q += 3;
		if ((size_t)(c - q) > 3 && memcmp(q, "ID ", 3) == 0) {
			q += 3;
			id_kw = 1;
		}
		for (t = q; t < c && *t != ' ' && *t != '('; t++)
			digits &= is_digit(*t) || (t == q && *t == '-');
		if (t > q && !digits && !id_kw) {
			/* torch 2.4: "[PG <name> (<desc>) Rank N]", the group's
			 * global name, a hash of its ranks when not a count */
			guid = q;
			guid_n = (size_t)(t - q);
			q = t;
		} else if (num(&q, c, &id)) {
			return -1;
		}
		while (q < c && *q == ' ')
			q++;
		if ((size_t)(c - q) > 8 && memcmp(q, "PG GUID ", 8) == 0) {
			q += 8;
			guid = q;
			while (q < c && *q != '(' && *q != ' ')
				q++;
			guid_n = (size_t)(q - guid);
		}
		while (q < c && *q == ' ')
			q++;
		if (q < c && *q == '(') {
			const char *e = memchr(q, ')', (size_t)(c - q));
			if (!e)
				return -1;
			desc = q + 1;
			desc_n = (size_t)(e - desc);
			q = e + 1;
		}
		while (q < c && *q == ' ')
			q++;
	}
	if ((size_t)(c - q) > 5 && memcmp(q, "Rank ", 5) == 0) {
		q += 5;
		if (num(&q, c, &r))
			return -1;
	}
	if (q != c)
		return -1;
	*rank = r;
	*after = c + 1;
	while (*after < end && **after == ' ')
		(*after)++;
	return hang_pg_log(s, id, guid, guid_n, desc, desc_n);
}

static int push_report(struct ts_hang_set *s, enum ts_hang_report_kind k)
{
	struct ts_hang_report r;
	hang_report_init(&r, k);
	if (TS_VEC_PUSH(s->reports, r))
		return -1;
	return (int)s->reports.n - 1;
}

static void report_ev(struct ts_hang_set *s, int rep, int ev)
{
	if (rep >= 0 && ev >= 0)
		TS_VEC_PUSH(s->reports.v[rep].evs, ev);
}

static struct ts_hang_group *push_group(struct ts_hang_report *r, int64_t seq,
					const char *what, int64_t count, int ev)
{
	struct ts_hang_group g;
	memset(&g, 0, sizeof(g));
	g.seq = seq;
	g.what = what;
	g.count = count;
	g.ev = ev;
	if (TS_VEC_PUSH(r->groups, g))
		return NULL;
	return &r->groups.v[r->groups.n - 1];
}

/*
 * The log timeouts already read, by key (rank, seq, pg) in s->tmo_keys. A
 * repeated line is the first earlier timeout of its rank and seq whose
 * group is its own or unknown (either side). The first timeout of a (rank,
 * seq) is filed under pg TMO_FIRST as well: a later line of that rank and
 * seq matches it when either group is unknown, so while its group is
 * unknown it stays the only timeout of that (rank, seq), and every other
 * one has a group of its own, one timeout per group.
 */
#define TMO_FIRST INT64_MIN

static int64_t tmo_key(const struct ts_hang_set *s, int64_t rank, int64_t seq, int64_t pg)
{
	int64_t k[3] = { rank, seq, pg };
	int64_t id = ts_intern_find(&s->tmo_keys, (const char *)k, sizeof(k));

	return id < 0 ? -1 : (int64_t)s->tmo_work.v[id];
}

static void tmo_file(struct ts_hang_set *s, int64_t rank, int64_t seq, int64_t pg, size_t work)
{
	int64_t k[3] = { rank, seq, pg };
	int64_t id = ts_intern(&s->tmo_keys, (const char *)k, sizeof(k));

	if (id < 0)
		return;
	if ((size_t)id < s->tmo_work.n)
		s->tmo_work.v[id] = work;
	else
		TS_VEC_PUSH(s->tmo_work, work);
}

/* 1 when wk repeats a timeout already read (whose unknown group it then
 * takes), else 0 */
static int tmo_same(struct ts_hang_set *s, const struct ts_hang_work *wk)
{
	int64_t first = tmo_key(s, wk->rank, wk->seq, TMO_FIRST);
	struct ts_hang_work *o;

	if (first < 0)
		return 0;
	o = &s->works.v[first];
	if (o->pg < 0 || wk->pg < 0) {
		if (o->pg < 0 && wk->pg >= 0) {
			o->pg = wk->pg;
			tmo_file(s, wk->rank, wk->seq, wk->pg, (size_t)first);
		}
		return 1;
	}
	return tmo_key(s, wk->rank, wk->seq, wk->pg) >= 0;
}

/* "Work?CCL(SeqNum=..., OpType=..., NumelIn=..., NumelOut=..., Timeout(ms)=...) ran for N" */
static int timeout_line(struct lines_st *st, const char *l, size_t n, int64_t rank, int pg, int ev)
{
	struct ts_hang_set *s = st->s;
	const char *w = find(l, n, "CCL(SeqNum="), *end = l + n;
	struct ts_hang_work wk;
	const char *op;
	size_t opn;

	if (!w)
		return 0;
	hang_work_init(&wk);
	wk.rank = rank;
	wk.pg = pg;
	wk.state = TS_ST_TIMED_OUT;
	wk.ev = ev;
	wk.file = st->file;
	if (num(&w, end, &wk.seq))
		return 0;
	op = word_after(w, (size_t)(end - w), "OpType=", &opn);
	if (op) {
		wk.op = hang_strndup(s, op, opn);
		wk.kind = ts_hang_op_kind(op, opn);
	}
	num_after(w, (size_t)(end - w), "NumelIn=", &wk.numel_in);
	num_after(w, (size_t)(end - w), "NumelOut=", &wk.numel_out);
	num_after(w, (size_t)(end - w), "Timeout(ms)=", &wk.timeout_ms);
	num_after(w, (size_t)(end - w), ") ran for ", &wk.ran_for_ms);
	/* the same timeout is often printed twice (watchdog line, then the
	 * exception text): keep one */
	if (tmo_same(s, &wk))
		return 1;
	if (TS_VEC_PUSH(s->works, wk) == 0) {
		tmo_file(s, wk.rank, wk.seq, TMO_FIRST, s->works.n - 1);
		if (wk.pg >= 0)
			tmo_file(s, wk.rank, wk.seq, wk.pg, s->works.n - 1);
	}
	return 1;
}

static int progress_line(struct lines_st *st, const char *l, size_t n, int64_t rank, int pg, int ev)
{
	struct ts_hang_progress pr;
	const char *q;

	memset(&pr, 0, sizeof(pr));
	pr.rank = rank;
	pr.pg = pg;
	pr.seq = pr.enqueued = pr.completed = pr.signal_from = -1;
	pr.ev = ev;
	if (num_after(l, n, "ast enqueued NCCL work:", &pr.enqueued) &&
	    num_after(l, n, "ast enqueued MCCL work:", &pr.enqueued) &&
	    num_after(l, n, "ast enqueued work:", &pr.enqueued))
		return 0;
	if (num_after(l, n, "ast completed NCCL work:", &pr.completed) &&
	    num_after(l, n, "ast completed MCCL work:", &pr.completed))
		num_after(l, n, "ast completed work:", &pr.completed);
	if (num_after(l, n, "at work sequence id:", &pr.seq) &&
	    num_after(l, n, "detected by watchdog at work:", &pr.seq) &&
	    num_after(l, n, "Timeout at NCCL work:", &pr.seq))
		num_after(l, n, "Timeout at MCCL work:", &pr.seq);
	if ((q = find(l, n, "dump signal due to a collective timeout from"))) {
		st->s->dump_signal = 1;
		if (find(q, (size_t)(l + n - q), " this local rank"))
			pr.signal_from = -2;
		else
			num_after(q, (size_t)(l + n - q), "rank", &pr.signal_from);
	}
	TS_VEC_PUSH(st->s->progress, pr);
	return 1;
}

/* TORCH_DISTRIBUTED_DEBUG=DETAIL: "Rank 1 is running collective:
 * CollectiveFingerPrint(...), but Rank 0 is running collective: ..." */
static int detail_line(struct lines_st *st, const char *l, size_t n, int ev)
{
	struct ts_hang_set *s = st->s;
	const char *p = find(l, n, "Detected mismatch between collectives on ranks."), *end = l + n;
	int rep;

	if (!p)
		return 0;
	if ((rep = push_report(s, TS_REP_DETAIL)) < 0)
		return 1;
	report_ev(s, rep, ev);
	for (int k = 0; k < 2 && p; k++) {
		const char *r = find(p, (size_t)(end - p), "Rank "), *fp, *q;
		int64_t rank;
		int depth = 0;
		if (!r || num(&r, end, &rank))
			break;
		fp = find(r, (size_t)(end - r), "CollectiveFingerPrint(");
		if (!fp)
			break;
		for (q = fp; q < end; q++) {
			if (*q == '(')
				depth++;
			else if (*q == ')' && depth-- == 0)
				break;
		}
		struct ts_hang_group *g = push_group(&s->reports.v[rep], -1,
						     hang_strndup(s, fp, (size_t)(q - fp)), 1, ev);
		if (g)
			hang_set_add(&g->ranks, rank);
		p = q < end ? q : NULL;
	}
	return 1;
}

static int coll_line(struct lines_st *st, const char *l, size_t n, int ev)
{
	struct ts_hang_set *s = st->s;
	const char *info = find(l, n, " NCCL INFO "), *end = l + n, *p, *h, *c;
	struct ts_hang_coll co;
	size_t wn;

	if (!info)
		info = find(l, n, " MCCL INFO ");
	if (!info || !find(info, (size_t)(end - info), ": opCount "))
		return 0;
	memset(&co, 0, sizeof(co));
	co.ev = ev;
	co.pid = co.tid = co.dev = co.nranks = co.count = co.dtype = -1;
	/* host:pid:tid [dev] */
	h = l;
	c = memchr(h, ':', (size_t)(info - h));
	if (c) {
		co.host = hang_strndup(s, h, (size_t)(c - h));
		p = c + 1;
		num(&p, info, &co.pid);
		if (p < info && *p == ':') {
			p++;
			num(&p, info, &co.tid);
		}
		if ((p = find(p, (size_t)(info - p), "[")))
			num(&p, info, &co.dev);
	}
	p = info;
	while (p < end && *p == ' ')
		p++;
	c = memchr(p, ':', (size_t)(end - p));
	if (!c)
		return 0;
	co.op = hang_strndup(s, p, (size_t)(c - p));
	p = c + 1;
	if (!(p = find(p, (size_t)(end - p), "opCount")) || hexnum(&p, end, &co.op_count))
		return 0;
	num_after(p, (size_t)(end - p), " count ", &co.count);
	num_after(p, (size_t)(end - p), " datatype ", &co.dtype);
	num_after(p, (size_t)(end - p), "[nranks=", &co.nranks);
	if ((h = word_after(p, (size_t)(end - p), " comm ", &wn)))
		co.comm = hang_strndup(s, h, wn);
	TS_VEC_PUSH(s->colls, co);
	return 1;
}

static int ib_line(struct lines_st *st, const char *l, size_t n, int ev)
{
	struct ts_hang_set *s = st->s;
	int rep;
	if (!find(l, n, "collective mismatch error") ||
	    !(find(l, n, " NCCL WARN ") || find(l, n, " MCCL WARN ")))
		return 0;
	if ((rep = push_report(s, TS_REP_IB_MISMATCH)) < 0)
		return 1;
	num_after(l, n, "local size ", &s->reports.v[rep].size_a);
	num_after(l, n, "remote ", &s->reports.v[rep].size_b);
	report_ev(s, rep, ev);
	return 1;
}

/* The desync report block: "- [0] Timeout at collective: ALLREDUCE, #315",
 * culprit lines after "ranks that caused the desync are:", snapshot
 * groups "#315 started ranks:" + "[0, 1, 2] started ALLREDUCE". */
static int desync_line(struct lines_st *st, const char *p, const char *end, int ev)
{
	struct ts_hang_set *s = st->s;
	struct ts_hang_report *r;
	const char *q;
	size_t n = (size_t)(end - p);

	if (p >= end) /* a blank line ends the report */
		return 0;
	if (st->desync < 0) {
		if (!(q = find(p, n, "Timeout at collective:")))
			return 0;
		if ((st->desync = push_report(s, TS_REP_DESYNC)) < 0)
			return 1;
		r = &s->reports.v[st->desync];
		r->reporter = st->desync_reporter;
		report_ev(s, st->desync, st->desync_opener);
		if ((q = find(p, n, "[")))
			num(&q, end, &r->reporter);
		q = find(p, n, "Timeout at collective:");
		while (q < end && *q == ' ')
			q++;
		const char *e = q;
		while (e < end && *e != ',' && *e != ' ')
			e++;
		r->op = hang_strndup(s, q, (size_t)(e - q));
		num_after(e, (size_t)(end - e), "#", &r->seq);
		report_ev(s, st->desync, ev);
		return 1;
	}
	r = &s->reports.v[st->desync];
	report_ev(s, st->desync, ev);
	if (find(p, n, "caused the desync are")) {
		st->desync_sub = 1;
		return 1;
	}
	if (find(p, n, "Snapshot of ranks")) {
		st->desync_sub = 2;
		return 1;
	}
	if (*p == '#') {
		int64_t seq;
		q = p + 1;
		if (num(&q, end, &seq) == 0) {
			while (q < end && *q == ' ')
				q++;
			const char *e = find(q, (size_t)(end - q), " ranks:");
			push_group(r, seq, e ? hang_strndup(s, q, (size_t)(e - 7 - q)) : NULL, -1, ev);
		}
		return 1;
	}
	if (*p == '[') {
		const char *c = memchr(p, ']', n);
		if (!c)
			return 1;
		if (st->desync_sub == 1) {
			rank_list(p + 1, c, &r->culprits);
		} else if (st->desync_sub == 2 && r->groups.n) {
			struct ts_hang_group *g = &r->groups.v[r->groups.n - 1];
			rank_list(p + 1, c, &g->ranks);
			q = c + 1;
			while (q < end && *q == ' ')
				q++;
			if (q < end) /* "started ALLREDUCE" */
				g->what = hang_strndup(s, q, (size_t)(end - q));
		}
	}
	return 1;
}

static int frt_line(struct lines_st *st, const char *p, const char *end, const char *l, size_t ln)
{
	struct ts_hang_set *s = st->s;
	struct ts_hang_report *r;
	size_t n = (size_t)(end - p);
	const char *q;
	int64_t v;

	if ((q = find(p, n, "Not all ranks joining collective"))) {
		if ((st->frt = push_report(s, TS_REP_FR_TRACE)) < 0)
			return 1;
		r = &s->reports.v[st->frt];
		if (num_after(p, n, "sequence number:", &r->seq))
			num(&q, end, &r->seq); /* "collective 5 at entry 4" */
		num_after(p, n, "at entry", &r->record_id);
		report_ev(s, st->frt, hang_add_ev(s, st->file, st->lineno, l, ln));
		return 1;
	}
	/* the mismatch form: "Collective sequence number: N has errors" */
	if (n > 27 && memcmp(p, "Collective sequence number:", 27) == 0 && find(p, n, "has errors")) {
		if ((st->frt = push_report(s, TS_REP_FR_TRACE)) < 0)
			return 1;
		r = &s->reports.v[st->frt];
		r->mismatch = 1;
		num_after(p, n, "number:", &r->seq);
		report_ev(s, st->frt, hang_add_ev(s, st->file, st->lineno, l, ln));
		return 1;
	}
	if (st->frt < 0)
		return 0;
	r = &s->reports.v[st->frt];
	if (n > 13 && memcmp(p, "Culprit rank ", 13) == 0) {
		int64_t v2;
		q = p + 13;
		if (num(&q, end, &v2) == 0)
			hang_set_add(&r->culprits, v2);
		report_ev(s, st->frt, hang_add_ev(s, st->file, st->lineno, l, ln));
		return 1;
	}
	if (p == end) {
		st->frt = -1;
		return 1;
	}
	if (n > 19 && memcmp(p, "internal record id:", 19) == 0) {
		num_after(p, n, "id:", &r->record_id);
	} else if (n > 11 && memcmp(p, "group info:", 11) == 0) {
		q = p + 11;
		while (q < end && *q == ' ')
			q++;
		const char *c = memchr(q, ':', (size_t)(end - q));
		if (c)
			r->pg = hang_pg(s, -1, q, (size_t)(c - q), c + 1, (size_t)(end - c - 1), NULL);
	} else if (n > 11 && memcmp(p, "collective:", 11) == 0) {
		q = p + 11;
		while (q < end && *q == ' ')
			q++;
		r->op = hang_strndup(s, q, (size_t)(end - q));
	} else if (n > 14 && memcmp(p, "missing ranks:", 14) == 0) {
		rank_list(p + 14, end, &r->missing);
	} else if (n > 12 && memcmp(p, "input sizes:", 12) == 0) {
		int64_t prod = 1, sum = 0;
		for (q = p + 12; q < end; q++)
			if (is_digit(*q) && num(&q, end, &v) == 0) {
				prod = (v > 0 && prod <= INT64_MAX / v) ? prod * v : (v > 0 ? INT64_MAX : 0);
				if (q < end && *q == ']') {
					sum = sum <= INT64_MAX - prod ? sum + prod : INT64_MAX;
					prod = 1;
				}
			}
		r->numel_in = sum;
	} else if (n > 13 && memcmp(p, "output sizes:", 13) == 0) {
		int64_t prod = 1, sum = 0;
		for (q = p + 13; q < end; q++)
			if (is_digit(*q) && num(&q, end, &v) == 0) {
				prod = (v > 0 && prod <= INT64_MAX / v) ? prod * v : (v > 0 ? INT64_MAX : 0);
				if (q < end && *q == ']') {
					sum = sum <= INT64_MAX - prod ? sum + prod : INT64_MAX;
					prod = 1;
				}
			}
		r->numel_out = sum;
	} else if (n > 11 && memcmp(p, "world size:", 11) == 0) {
		num_after(p, n, "size:", &r->world);
	} else if (n > 15 && memcmp(p, "expected ranks:", 15) == 0) {
		q = p + 15;
		while (q < end && *q == ' ')
			q++;
		if (q < end && *q == '{')
			rank_list(q, end, &r->expected);
		else if (num(&q, end, &v) == 0 && r->world < 0)
			r->world = v; /* older output: a count */
	} else if (n > 17 && memcmp(p, "collective state:", 17) == 0) {
		q = p + 17;
		while (q < end && *q == ' ')
			q++;
		r->state = hang_strndup(s, q, (size_t)(end - q));
	} else if (find(p, n, "stack trace")) {
		r->frames = 0;
		return 1;
	} else if (r->frames >= 0 && find(p, n, " at ")) {
		r->frames++; /* frames: counted, not evidence */
		return 1;
	} else {
		st->frt = -1;
		return 0;
	}
	report_ev(s, st->frt, hang_add_ev(s, st->file, st->lineno, l, ln));
	return 1;
}

static int ras_line(struct lines_st *st, const char *p, const char *end, const char *l, size_t ln)
{
	struct ts_hang_set *s = st->s;
	struct ts_hang_report *r;
	size_t n = (size_t)(end - p);
	const char *q;
	int64_t v[8];
	int k = 0;

	if (st->ras < 0) {
		if (!((n > 13 && memcmp(p, "NCCL version ", 13) == 0 && find(p, n, "compiled with")) ||
		      (n >= 11 && memcmp(p, "Job summary", 11) == 0)))
			return 0;
		if ((st->ras = push_report(s, TS_REP_RAS)) < 0)
			return 1;
		vendor_scan(st, l, ln, -1);
		st->ras_listed = -1;
		if (p[0] == 'N') {
			size_t wn;
			const char *v = word_after(p, n, "NCCL version", &wn);
			if (v)
				s->reports.v[st->ras].version = hang_strndup(s, v, wn);
		}
		report_ev(s, st->ras, hang_add_ev(s, st->file, st->lineno, l, ln));
		if (p[0] == 'J')
			st->ras_summary = 1;
		return 1;
	}
	r = &s->reports.v[st->ras];
	if (n >= 11 && memcmp(p, "Job summary", 11) == 0) {
		st->ras_summary = 1;
		return 1;
	}
	if (n > 21 && memcmp(p, "CUDA runtime version ", 21) == 0) {
		num_after(p, n, "runtime version", &r->cuda_runtime);
		num_after(p, n, "driver version", &r->cuda_driver);
		report_ev(s, st->ras, hang_add_ev(s, st->file, st->lineno, l, ln));
		return 1;
	}
	if (n >= 5 && memcmp(p, "Group", 5) == 0 && find(p, n, "Comms")) {
		st->ras_table = 1;
		return 1;
	}
	if (n >= 6 && (memcmp(p, "Errors", 6) == 0 || memcmp(p, "Warnings", 8 <= n ? 8 : n) == 0))
		st->ras_table = 0;
	q = p;
	while (k < 8 && num(&q, end, &v[k]) == 0)
		k++;
	if (st->ras_summary && k == 5) {
		r->world = v[3]; /* nodes, procs/node, gpus/proc, procs, gpus */
		r->nodes = v[0];
		r->procs_per_node = v[1];
		st->ras_summary = 0;
		report_ev(s, st->ras, hang_add_ev(s, st->file, st->lineno, l, ln));
		return 1;
	}
	if (st->ras_table && k == 6) {
		size_t wn;
		while (q < end && *q == ' ')
			q++;
		const char *w = q;
		while (q < end && *q != ' ')
			q++;
		wn = (size_t)(q - w);
		r->world = v[4]; /* group, comms, nodes/comm, ranks/node, ranks/comm, ranks in group */
		r->state = hang_strndup(s, w, wn);
		while (q < end && *q == ' ')
			q++;
		r->errors = hang_strndup(s, q, (size_t)(end - q));
		if (r->errors && strcmp(r->errors, "OK") == 0)
			s->ras_ok = 1;
		report_ev(s, st->ras, hang_add_ev(s, st->file, st->lineno, l, ln));
		return 1;
	}
	if ((q = find(p, n, "Communicator ranks have different "))) {
		const char *e = find(q, (size_t)(end - q), " operation counts");
		if (e)
			r->op = hang_strndup(s, q, (size_t)(e - 17 - q));
		report_ev(s, st->ras, hang_add_ev(s, st->file, st->lineno, l, ln));
		return 1;
	}
	if (k == 1 && (q = find(p, n, " have launched up to operation "))) {
		int64_t op;
		if (num(&q, end, &op) == 0)
			push_group(r, op, "launched", v[0], -1);
		report_ev(s, st->ras, hang_add_ev(s, st->file, st->lineno, l, ln));
		return 1;
	}
	if (n > 5 && memcmp(p, "Rank ", 5) == 0 && find(p, n, " managed by process ")) {
		int64_t rank;
		q = p + 5;
		if (num(&q, end, &rank) == 0) {
			if (st->ras_listed < 0) {
				struct ts_hang_group *g = push_group(r, -1, "listed", -1, -1);
				if (g)
					st->ras_listed = (int64_t)r->groups.n - 1;
			}
			if (st->ras_listed >= 0)
				hang_set_add(&r->groups.v[st->ras_listed].ranks, rank);
		}
		report_ev(s, st->ras, hang_add_ev(s, st->file, st->lineno, l, ln));
		return 1;
	}
	if (find(p, n, "MISMATCH") || find(p, n, "INCOMPLETE") || find(p, n, "unresponsive") ||
	    find(p, n, "dead")) {
		if (find(p, n, "dead") || find(p, n, "unresponsive"))
			r->dead = 1;
		report_ev(s, st->ras, hang_add_ev(s, st->file, st->lineno, l, ln));
		return 1;
	}
	return 0;
}

static void one_message(struct lines_st *st, const char *l, const char *end, const char *p,
			int64_t rank, int glog);

/*
 * The line as the process printed it: without ANSI colours, the timestamp
 * a log collector put first, the launcher's prefix (srun's, torchrun's,
 * mpirun's; srun's blank after it too), and a progress bar's redraws
 * before it, so that a report's continuation lines still start with its
 * blanks. The rank comes from the process's own text: torchrun's number is
 * a local rank.
 */
static const char *body(struct lines_st *st, const char *l, size_t *n)
{
	size_t k;

	if (ts_ansi_strip(&st->clean, l, *n)) {
		l = st->clean.buf ? st->clean.buf : "";
		*n = st->clean.len;
	}
	k = ts_collector_stamp(l, *n);
	l += k;
	*n -= k;
	const char *cr, *in;
	size_t in_n;

	if ((k = ts_launcher_prefix(l, *n, NULL))) {
		if (l[0] != '[' && k < *n && l[k] == ' ')   /* srun's blank */
			k++;
		l += k;
		*n -= k;
	}
	/* a terminal line drawn over shows its last redraw, and what the
	 * process printed while a progress bar was shown follows the bar */
	if ((cr = memrchr(l, '\r', *n))) {
		*n -= (size_t)(cr + 1 - l);
		l = cr + 1;
	}
	if ((k = ts_progress_bar(l, *n, &in, &in_n))) {
		l += k;
		*n -= k;
	}
	return l;
}

static int one_line(struct lines_st *st, const char *l, size_t n)
{
	struct ts_hang_set *s = st->s;
	const char *end, *p;
	int64_t rank = -1;
	int glog = 0;
	struct gtime t = { -1, -1, -1 };
	size_t evs_before = s->evs.n;

	while (n && l[n - 1] == '\r')
		n--;
	l = body(st, l, &n);
	end = l + n;
	p = strip(l, end, &rank, &glog, &t);
	one_message(st, l, end, p, rank, glog);
	for (size_t i = evs_before; i < s->evs.n; i++) {
		s->evs.v[i].month = t.month;
		s->evs.v[i].day = t.day;
		s->evs.v[i].tod_ns = t.tod_ns;
	}
	return 0;
}

/* everything after the prefixes of one line */
static void one_message(struct lines_st *st, const char *l, const char *end, const char *p,
			int64_t rank, int glog)
{
	struct ts_hang_set *s = st->s;
	size_t n = (size_t)(end - l);
	const char *msg;
	int64_t tag_rank = -1;
	int pg, ev = -1;

	/* continuation lines of a multi-line report have no prefix and start
	 * with spaces */
	if (st->desync >= 0 || st->desync_reporter >= 0) {
		if (!glog && rank < 0 && n && (l[0] == ' ' || l[0] == '\t')) {
			/* no prefix stripping here: "[7] finished ..." is a rank list */
			const char *q = l;
			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			ev = hang_add_ev(s, st->file, st->lineno, l, n);
			if (desync_line(st, q, end, ev))
				return;
		}
		st->desync = -1;
		st->desync_sub = 0;
		st->desync_reporter = -1;
	}
	if (!glog && rank < 0) {
		if ((st->frt >= 0 || ((size_t)(end - p) > 32 && memcmp(p, "Not all ranks joining collective", 32) == 0) ||
		     ((size_t)(end - p) > 27 && memcmp(p, "Collective sequence number:", 27) == 0)) &&
		    frt_line(st, p, end, l, n))
			return;
		if (ras_line(st, p, end, l, n))
			return;
	} else {
		st->frt = st->ras = -1;
	}
	if (rank >= 0)
		hang_rank_seen(s, rank);
	pg = pg_tag(s, p, end, &tag_rank, &msg);
	if (rank < 0)
		rank = tag_rank;
	if (rank < 0) { /* "[Rank 2]" later in the message */
		const char *q = find(msg, (size_t)(end - msg), "[Rank ");
		if (q)
			num(&q, end, &rank);
	}
	n = (size_t)(end - msg);
	{
		int matched = 0;
		const char *w = find(msg, n, "Watchdog caught collective operation timeout");
		int hit = w || find(msg, n, "CCL(SeqNum=") || find(msg, n, "ast enqueued") ||
			find(msg, n, "Detected mismatch between collectives") ||
			find(msg, n, "opCount") || find(msg, n, "collective mismatch error") ||
			find(msg, n, "FlightRecorder is disabled") ||
			find(msg, n, "taking the entire process down") ||
			find(msg, n, "dump signal") || find(msg, n, "dump debug info") ||
			find(msg, n, "operations have failed or timed out") ||
			find(msg, n, "signal dumping") ||
			(glog && msg + 5 <= end && memcmp(msg, "Rank ", 5) == 0);
		/* quoted log text in prose (a README, an issue) is not evidence:
		 * PyTorch's messages come behind a logger, rank or group prefix */
		if (hit && !glog && rank < 0 && pg < 0 && !find(msg, n, "] Watchdog caught") &&
		    !find(msg, n, "Detected mismatch between collectives on ranks.") &&
		    !find(l, (size_t)(end - l), " NCCL INFO ") && !find(l, (size_t)(end - l), " MCCL INFO ") &&
		    !find(l, (size_t)(end - l), " NCCL WARN ") && !find(l, (size_t)(end - l), " MCCL WARN "))
			hit = 0;
		if (!hit) {
			if (glog && (find(msg, n, "CCL") || find(msg, n, "ProcessGroup")))
				vendor_scan(st, l, (size_t)(end - l), -1);
			return;
		}
		ev = hang_add_ev(s, st->file, st->lineno, l, (size_t)(end - l));
		vendor_scan(st, l, (size_t)(end - l), ev);
		if (s->ev_pgmccl < 0 &&
		    (find(l, (size_t)(end - l), "ProcessGroupMCCL") || find(l, (size_t)(end - l), "WorkMCCL")))
			s->ev_pgmccl = ev;
		if (rank >= 0)
			hang_rank_seen(s, rank);
		matched |= timeout_line(st, msg, n, rank, pg, ev);
		if (!matched && find(msg, n, "ast enqueued"))
			matched |= progress_line(st, msg, n, rank, pg, ev);
		if (!matched)
			matched |= detail_line(st, msg, n, ev);
		if (!matched)
			matched |= coll_line(st, l, (size_t)(end - l), ev);
		if (!matched)
			matched |= ib_line(st, msg, n, ev);
		if (find(msg, n, "FlightRecorder is disabled"))
			s->fr_disabled = 1;
		if (find(msg, n, "dump signal") || find(msg, n, "dump debug info") ||
		    find(msg, n, "signal dumping"))
			s->dump_signal = 1;
		if (find(msg, n, "taking the entire process down"))
			s->takedown = 1;
		/* "Rank 0" alone opens a desync report on the next lines */
		if (glog && n >= 5 && memcmp(msg, "Rank ", 5) == 0) {
			const char *q = msg + 5;
			int64_t r;
			if (num(&q, end, &r) == 0 && q == end) {
				st->desync_reporter = r;
				st->desync_opener = ev;
			}
		}
	}
	return;
}

static int read_lines(struct ts_hang_set *s, struct ts_input *in, struct ts_err *err)
{
	struct lines_st st;
	const char *line;
	size_t n;
	uint64_t off;
	int rc;

	memset(&st, 0, sizeof(st));
	st.s = s;
	st.desync = st.frt = st.ras = -1;
	st.desync_reporter = -1;
	st.ras_listed = -1;
	st.file = (uint32_t)s->files.n - 1;
	ts_sb_init(&st.clean);
	while ((rc = ts_input_getline(in, &line, &n, &off, err)) == 1) {
		st.lineno++;
		s->lines++;
		int nl = line + n < (const char *)in->data + in->len && line[n] == '\n';
		size_t k = n && line[n - 1] == '\r' ? n - 1 : n;
		if (!nl && k) {
			/* the last line has no line end: cut (struct ts_hang_cut_line) */
			struct ts_hang_cut_line c = { st.file, (int64_t)off, st.lineno };
			if (TS_VEC_PUSH(s->cut_lines, c)) {
				ts_sb_release(&st.clean);
				return ts_err_set(err, TS_ENOMEM, "out of memory reading %s", in->path);
			}
			continue;
		}
		one_line(&st, line, n);
		if (s->arena.failed || st.clean.failed) {
			ts_sb_release(&st.clean);
			return ts_err_set(err, TS_ENOMEM, "out of memory reading %s", in->path);
		}
	}
	ts_sb_release(&st.clean);
	return rc < 0 ? rc : 0;
}

int ts_hang_read_lines_mem(struct ts_hang_set *s, const void *data, size_t n,
			   const char *name, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if (hang_add_file(s, name) < 0)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	if ((rc = ts_input_open_mem(&in, data, n, name, err)))
		return rc;
	rc = read_lines(s, &in, err);
	ts_input_release(&in);
	return rc;
}

int hang_read_lines_input(struct ts_hang_set *s, struct ts_input *in, struct ts_err *err)
{
	return read_lines(s, in, err);
}

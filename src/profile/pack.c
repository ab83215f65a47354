/*
 * pack.c - a rank profile as bytes, for gathering profiles across MPI
 * processes.
 *
 * Why: under `trainscope trace --mpi` each process analyses its share of
 * the rank files and rank 0 needs the compact results (never the traces)
 * to run the cross-rank analysis and render one report. The profile is a
 * flat struct plus four arrays plus an intern table, so the encoding is
 * those bytes in order, length-prefixed; unpack checks every length.
 */
#include <string.h>
#include "trainscope/profile.h"

static const char magic[8] = "TSRPv1\n";

static void put_u64(struct ts_sb *out, uint64_t v)
{
	ts_sb_add(out, &v, sizeof(v));
}

static void put_arr(struct ts_sb *out, const void *v, size_t n, size_t elem)
{
	put_u64(out, n);
	if (n)
		ts_sb_add(out, v, n * elem);
}

void ts_rank_prof_pack(const struct ts_rank_prof *p, struct ts_sb *out)
{
	ts_sb_add(out, magic, sizeof(magic));
	put_u64(out, sizeof(*p));
	ts_sb_add(out, p, sizeof(*p));
	put_arr(out, p->top.v, p->top.n, sizeof(*p->top.v));
	put_arr(out, p->idle.v, p->idle.n, sizeof(*p->idle.v));
	put_arr(out, p->steps.v, p->steps.n, sizeof(*p->steps.v));
	put_arr(out, p->colls.v, p->colls.n, sizeof(*p->colls.v));
	put_u64(out, p->names.count);
	for (size_t i = 0; i < p->names.count; i++) {
		uint64_t len = ts_intern_len(&p->names, (uint32_t)i);
		put_u64(out, len);
		ts_sb_add(out, ts_intern_str(&p->names, (uint32_t)i), len);
	}
}

struct rd {
	const unsigned char *d;
	size_t n, pos;
};

static int get(struct rd *r, void *dst, size_t len)
{
	if (len > r->n - r->pos)
		return -1;
	memcpy(dst, r->d + r->pos, len);
	r->pos += len;
	return 0;
}

static int get_u64(struct rd *r, uint64_t *v)
{
	return get(r, v, sizeof(*v));
}

/* Read a length-prefixed array into *v (allocated), *n elements. */
static int get_arr(struct rd *r, void **v, size_t *n, size_t *cap, size_t elem)
{
	uint64_t cnt;

	*v = NULL;
	*n = *cap = 0;
	if (get_u64(r, &cnt) || cnt > (r->n - r->pos) / elem)
		return -1;
	if (!cnt)
		return 0;
	if (ts_grow(v, cap, (size_t)cnt, elem))
		return -1;
	*n = (size_t)cnt;
	return get(r, *v, (size_t)cnt * elem);
}

int ts_rank_prof_unpack(struct ts_rank_prof *p, const void *data, size_t n,
			struct ts_err *err)
{
	struct rd r = { data, n, 0 };
	char m[sizeof(magic)];
	uint64_t size, count;

	if (get(&r, m, sizeof(m)) || memcmp(m, magic, sizeof(magic)) != 0 ||
	    get_u64(&r, &size) || size != sizeof(*p) || get(&r, p, sizeof(*p)))
		goto bad;
	/* the sender's pointers mean nothing here */
	memset(&p->top, 0, sizeof(p->top));
	memset(&p->idle, 0, sizeof(p->idle));
	memset(&p->steps, 0, sizeof(p->steps));
	memset(&p->colls, 0, sizeof(p->colls));
	ts_intern_init(&p->names);
	if (get_arr(&r, (void **)&p->top.v, &p->top.n, &p->top.cap, sizeof(*p->top.v)) ||
	    get_arr(&r, (void **)&p->idle.v, &p->idle.n, &p->idle.cap, sizeof(*p->idle.v)) ||
	    get_arr(&r, (void **)&p->steps.v, &p->steps.n, &p->steps.cap, sizeof(*p->steps.v)) ||
	    get_arr(&r, (void **)&p->colls.v, &p->colls.n, &p->colls.cap, sizeof(*p->colls.v)) ||
	    get_u64(&r, &count))
		goto bad;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t len;
		if (get_u64(&r, &len) || len > r.n - r.pos ||
		    ts_intern(&p->names, (const char *)r.d + r.pos, (size_t)len) != (int64_t)i)
			goto bad;
		r.pos += (size_t)len;
	}
	if (r.pos != r.n)
		goto bad;
	return 0;
bad:
	return ts_err_set(err, TS_EPARSE, "rank profile bytes are incomplete or from another build (at byte %zu of %zu)",
			  r.pos, n);
}

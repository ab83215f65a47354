/*
 * hang_pyval.c - the two value readers behind Flight Recorder dumps: a
 * literal parser for JSON and for the Python repr users paste (one grammar:
 * 'x' and "x", True/true, None/null, tuples), and a pickle reader that runs
 * only the data opcodes of protocols 0-2 (plus PROTO/FRAME/MEMOIZE of
 * later ones). Nothing that would import a module or call an object is
 * executed: GLOBAL, STACK_GLOBAL, INST, OBJ, REDUCE, BUILD, NEWOBJ, EXT*,
 * PERSID are errors that name the class and the byte offset.
 */
#include <stdlib.h>
#include <string.h>
#include "hang_int.h"
#include "trainscope/json.h"

#define PV_MAX_DEPTH 64
#define PV_MAX_STACK ((size_t)1 << 22)
#define PV_MAX_MEMO ((size_t)1 << 24)

void *hang_pool_alloc(struct hang_pool *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	while (a->cur < a->nchunks && a->used + size > a->chunks[a->cur].cap) {
		a->cur++;
		a->used = 0;
	}
	if (a->cur == a->nchunks) {
		size_t cap = size > ((size_t)1 << 20) ? size : (size_t)1 << 20;
		struct hang_chunk *nc = realloc(a->chunks, (a->nchunks + 1) * sizeof(*nc));
		char *p;
		if (!nc) {
			a->failed = 1;
			return NULL;
		}
		a->chunks = nc;
		if (!(p = malloc(cap))) {
			a->failed = 1;
			return NULL;
		}
		a->chunks[a->nchunks].p = p;
		a->chunks[a->nchunks].cap = cap;
		a->nchunks++;
		a->used = 0;
	}
	a->used += size;
	return a->chunks[a->cur].p + a->used - size;
}

char *hang_pool_strndup(struct hang_pool *a, const char *s, size_t n)
{
	char *c = hang_pool_alloc(a, n + 1);
	if (c) {
		memcpy(c, s, n);
		c[n] = 0;
	}
	return c;
}

void hang_pool_reset(struct hang_pool *a)
{
	a->cur = a->used = 0;
	a->failed = 0;
}

void hang_pool_free(struct hang_pool *a)
{
	for (size_t i = 0; i < a->nchunks; i++)
		free(a->chunks[i].p);
	free(a->chunks);
	memset(a, 0, sizeof(*a));
}

static struct pv *pv_new(struct hang_pool *a, enum pv_type t)
{
	struct pv *v = hang_pool_alloc(a, sizeof(*v));
	if (v) {
		memset(v, 0, sizeof(*v));
		v->t = t;
	}
	return v;
}

static int pv_push(struct hang_pool *a, struct pv *c, struct pv *x)
{
	if (c->nit == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 8;
		struct pv **ni = hang_pool_alloc(a, nc * sizeof(*ni));
		if (!ni)
			return TS_ENOMEM;
		if (c->nit)
			memcpy(ni, c->it, c->nit * sizeof(*ni));
		c->it = ni;
		c->cap = nc;
	}
	c->it[c->nit++] = x;
	return 0;
}

const struct pv *hang_pv_get(const struct pv *d, const char *key)
{
	size_t k = strlen(key);
	if (!d || d->t != PV_DICT)
		return NULL;
	for (size_t i = 0; i + 1 < d->nit; i += 2) {
		const struct pv *kv = d->it[i];
		if (kv && kv->t == PV_STR && kv->n == k && memcmp(kv->s, key, k) == 0)
			return d->it[i + 1];
	}
	return NULL;
}

/* ------------------------------------------------------------ literals */

struct tp {
	struct hang_pool *a;
	const char *d;
	size_t n, pos;
	const char *name;
	struct ts_err *err;
	int salvage;      /* keep what was read when the input ends (parse_text) */
};

static int tp_fail(struct tp *t, int code, const char *what)
{
	int64_t line = 1;
	for (size_t i = 0; i < t->pos && i < t->n; i++)
		line += t->d[i] == '\n';
	return ts_err_at(t->err, code, t->name, (int64_t)t->pos, line, "%s", what);
}

static void tp_ws(struct tp *t)
{
	while (t->pos < t->n) {
		char c = t->d[t->pos];
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			t->pos++;
		else
			break;
	}
}

static void put_utf8(struct ts_sb *sb, uint32_t cp)
{
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		cp = 0xfffd;
	if (cp < 0x80) {
		ts_sb_addc(sb, (char)cp);
	} else if (cp < 0x800) {
		ts_sb_addc(sb, (char)(0xc0 | cp >> 6));
		ts_sb_addc(sb, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		ts_sb_addc(sb, (char)(0xe0 | cp >> 12));
		ts_sb_addc(sb, (char)(0x80 | ((cp >> 6) & 0x3f)));
		ts_sb_addc(sb, (char)(0x80 | (cp & 0x3f)));
	} else {
		ts_sb_addc(sb, (char)(0xf0 | cp >> 18));
		ts_sb_addc(sb, (char)(0x80 | ((cp >> 12) & 0x3f)));
		ts_sb_addc(sb, (char)(0x80 | ((cp >> 6) & 0x3f)));
		ts_sb_addc(sb, (char)(0x80 | (cp & 0x3f)));
	}
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
		c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int tp_string(struct tp *t, struct pv **out)
{
	char q = t->d[t->pos++];
	size_t start = t->pos;
	struct ts_sb sb;
	struct pv *v;
	int esc = 0;

	while (t->pos < t->n && t->d[t->pos] != q) {
		if (t->d[t->pos] == '\\') {
			esc = 1;
			if (++t->pos >= t->n)
				break;
		}
		if (t->pos < t->n && t->d[t->pos] == '\n')
			return tp_fail(t, TS_EPARSE, "newline inside a string");
		t->pos++;
	}
	if (t->pos >= t->n)
		return tp_fail(t, TS_ETRUNC, "input ends inside a string");
	if (!(v = pv_new(t->a, PV_STR)))
		return TS_ENOMEM;
	if (!esc) {
		v->s = t->d + start;
		v->n = t->pos - start;
		t->pos++;
		*out = v;
		return 0;
	}
	ts_sb_init(&sb);
	for (size_t i = start; i < t->pos; i++) {
		char c = t->d[i];
		if (c != '\\') {
			ts_sb_addc(&sb, c);
			continue;
		}
		c = t->d[++i];
		switch (c) {
		case 'n': ts_sb_addc(&sb, '\n'); break;
		case 't': ts_sb_addc(&sb, '\t'); break;
		case 'r': ts_sb_addc(&sb, '\r'); break;
		case 'b': ts_sb_addc(&sb, '\b'); break;
		case 'f': ts_sb_addc(&sb, '\f'); break;
		case 'x': case 'u': {
			int digits = c == 'x' ? 2 : 4;
			uint32_t cp = 0;
			for (int k = 0; k < digits; k++) {
				int h = i + 1 < t->pos ? hexval(t->d[i + 1]) : -1;
				if (h < 0) {
					ts_sb_release(&sb);
					t->pos = i;
					return tp_fail(t, TS_EPARSE, "bad escape in a string");
				}
				cp = cp << 4 | (uint32_t)h;
				i++;
			}
			put_utf8(&sb, cp);
			break;
		}
		default: ts_sb_addc(&sb, c); break;
		}
	}
	t->pos++;
	if (sb.failed) {
		ts_sb_release(&sb);
		return TS_ENOMEM;
	}
	v->s = hang_pool_strndup(t->a, sb.buf, sb.len);
	v->n = sb.len;
	ts_sb_release(&sb);
	if (!v->s)
		return TS_ENOMEM;
	*out = v;
	return 0;
}

static int tp_value(struct tp *t, struct pv **out, int depth);

/* Salvage: the input ended inside c. Its complete items stay; an item
 * that ended at the last byte may be cut if it is a number (12 of 123) and
 * goes (a closed string or container is whole), and so does a dict key
 * left without its value. */
static int tp_cut(struct tp *t, struct pv *c, int last_at_end)
{
	if (last_at_end && c->nit)
		c->nit--;
	if (c->t == PV_DICT && c->nit % 2)
		c->nit--;
	c->cut = 1;
	return TS_ETRUNC;
}

/* One item of c: a value, pushed. On a salvaged cut a container cut inside
 * is kept (it holds what was read) and c is cut too. */
static int tp_item(struct tp *t, struct pv *c, int depth)
{
	struct pv *x = NULL;
	int rc = tp_value(t, &x, depth + 1);

	if (rc == TS_ETRUNC && t->salvage) {
		if (x && x->cut && (rc = pv_push(t->a, c, x)))
			return rc;
		return tp_cut(t, c, 0);
	}
	if (rc || (rc = pv_push(t->a, c, x)))
		return rc;
	if (t->salvage && t->pos >= t->n)
		return tp_cut(t, c, x->t == PV_INT || x->t == PV_FLOAT);
	return 0;
}

static int tp_seq(struct tp *t, struct pv *c, char close, int depth)
{
	int rc;
	for (;;) {
		tp_ws(t);
		if (t->pos >= t->n)
			return t->salvage ? tp_cut(t, c, 0)
					  : tp_fail(t, TS_ETRUNC, "input ends inside a container");
		if (t->d[t->pos] == close) {
			t->pos++;
			return 0;
		}
		if ((rc = tp_item(t, c, depth)))
			return rc;
		if (c->t == PV_DICT) {
			tp_ws(t);
			if (t->pos >= t->n)
				return t->salvage ? tp_cut(t, c, 0)
						  : tp_fail(t, TS_ETRUNC, "input ends inside a dict");
			if (t->d[t->pos] != ':')
				return tp_fail(t, TS_EPARSE, "expected ':' after a dict key");
			t->pos++;
			if ((rc = tp_item(t, c, depth)))
				return rc;
		}
		tp_ws(t);
		if (t->pos >= t->n)
			return t->salvage ? tp_cut(t, c, 0)
					  : tp_fail(t, TS_ETRUNC, "input ends inside a container");
		if (t->d[t->pos] == ',')
			t->pos++;
		else if (t->d[t->pos] != close)
			return tp_fail(t, TS_EPARSE, "expected ',' or the end of the container");
	}
}

static int word_is(struct tp *t, const char *w)
{
	size_t k = strlen(w);
	if (t->n - t->pos < k || memcmp(t->d + t->pos, w, k) != 0)
		return 0;
	if (t->pos + k < t->n) {
		char c = t->d[t->pos + k];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (c >= '0' && c <= '9'))
			return 0;
	}
	t->pos += k;
	return 1;
}

static int tp_value(struct tp *t, struct pv **out, int depth)
{
	struct pv *v;
	char c;

	if (depth > PV_MAX_DEPTH)
		return tp_fail(t, TS_ELIMIT, "values nested too deep");
	tp_ws(t);
	if (t->pos >= t->n)
		return tp_fail(t, TS_ETRUNC, "input ends where a value was expected");
	c = t->d[t->pos];
	if (c == '{' || c == '[' || c == '(') {
		v = pv_new(t->a, c == '{' ? PV_DICT : c == '[' ? PV_LIST : PV_TUPLE);
		if (!v)
			return TS_ENOMEM;
		t->pos++;
		*out = v;
		return tp_seq(t, v, c == '{' ? '}' : c == '[' ? ']' : ')', depth);
	}
	if (c == '"' || c == '\'')
		return tp_string(t, out);
	if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
		size_t b = t->pos;
		int flt = 0;
		t->pos++;
		while (t->pos < t->n) {
			char d = t->d[t->pos];
			if (d >= '0' && d <= '9')
				;
			else if (d == '.' || d == 'e' || d == 'E' ||
				 ((d == '-' || d == '+') && (t->d[t->pos - 1] == 'e' || t->d[t->pos - 1] == 'E')))
				flt = 1;
			else
				break;
			t->pos++;
		}
		if (!(v = pv_new(t->a, PV_INT)))
			return TS_ENOMEM;
		const char *s = t->d + b + (t->d[b] == '+');
		size_t k = t->pos - b - (t->d[b] == '+');
		if (!flt && ts_num_i64(s, k, &v->i) == 0) {
			*out = v;
			return 0;
		}
		v->t = PV_FLOAT;
		if (ts_num_f64(s, k, &v->f)) {
			if (t->salvage && t->pos >= t->n)
				return TS_ETRUNC;   /* "1e" cut from "1e-5" */
			t->pos = b;
			return tp_fail(t, TS_EPARSE, "bad number");
		}
		*out = v;
		return 0;
	}
	if (!(v = pv_new(t->a, PV_NONE)))
		return TS_ENOMEM;
	*out = v;
	if (word_is(t, "None") || word_is(t, "null"))
		return 0;
	v->t = PV_BOOL;
	if (word_is(t, "True") || word_is(t, "true")) {
		v->i = 1;
		return 0;
	}
	if (word_is(t, "False") || word_is(t, "false"))
		return 0;
	v->t = PV_FLOAT;
	if (word_is(t, "NaN") || word_is(t, "nan") || word_is(t, "Infinity") || word_is(t, "inf"))
		return 0;
	if (t->salvage) {
		/* "fal" cut from "false": letters up to the end of the input */
		size_t k = t->pos;
		while (k < t->n && ((t->d[k] >= 'a' && t->d[k] <= 'z') || (t->d[k] >= 'A' && t->d[k] <= 'Z')))
			k++;
		if (k >= t->n)
			return TS_ETRUNC;
	}
	return tp_fail(t, TS_EPARSE, "expected a value (dict, list, tuple, string, number, True/False/None)");
}

int hang_pv_parse_text(struct hang_pool *a, const char *d, size_t n, const char *name,
		       struct pv **out, int64_t *cut, struct ts_err *err)
{
	struct tp t = { a, d, n, ts_bom_len(d, n), name, err, cut != NULL };
	int rc;

	*out = NULL;
	if (cut)
		*cut = -1;
	rc = tp_value(&t, out, 0);
	if (rc == TS_ETRUNC && t.salvage && *out && (*out)->cut) {
		*cut = (int64_t)n;
		ts_err_init(err);   /* a string cut at the end said so */
		return a->failed ? TS_ENOMEM : 0;
	}
	if (rc)
		return rc;
	tp_ws(&t);
	if (t.pos < n)
		return tp_fail(&t, TS_EPARSE, "text after the end of the document");
	return a->failed ? TS_ENOMEM : 0;
}

/* ------------------------------------------------------------- pickle */

struct pk {
	struct hang_pool *a;
	const unsigned char *d;
	size_t n, pos, op_at;
	const char *name;
	struct ts_err *err;
	TS_VEC(struct pv *) stack;
	TS_VEC(struct pv *) memo;
};

static struct pv pv_mark = { PV_MARK, 0, 0, NULL, 0, NULL, 0, 0, 0 };

static int pk_fail(struct pk *p, int code, const char *msg)
{
	return ts_err_at(p->err, code, p->name, (int64_t)p->op_at, -1, "%s", msg);
}

static int pk_need(struct pk *p, size_t k)
{
	if (p->n - p->pos < k)
		return pk_fail(p, TS_ETRUNC, "pickle ends inside an opcode");
	return 0;
}

static uint64_t le(const unsigned char *b, int k)
{
	uint64_t v = 0;
	for (int i = k - 1; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static int pk_push(struct pk *p, struct pv *v)
{
	if (!v)
		return TS_ENOMEM;
	if (p->stack.n >= PV_MAX_STACK)
		return pk_fail(p, TS_ELIMIT, "pickle stack too deep");
	return TS_VEC_PUSH(p->stack, v);
}

static int pk_pop(struct pk *p, struct pv **v)
{
	if (!p->stack.n || p->stack.v[p->stack.n - 1] == &pv_mark)
		return pk_fail(p, TS_EPARSE, "pickle stack underflow");
	*v = p->stack.v[--p->stack.n];
	return 0;
}

/* index of the topmost mark, or -1 */
static int64_t pk_mark(struct pk *p)
{
	for (size_t i = p->stack.n; i-- > 0;)
		if (p->stack.v[i] == &pv_mark)
			return (int64_t)i;
	return -1;
}

static int pk_top(struct pk *p, struct pv **v)
{
	if (!p->stack.n || p->stack.v[p->stack.n - 1] == &pv_mark)
		return pk_fail(p, TS_EPARSE, "pickle stack underflow");
	*v = p->stack.v[p->stack.n - 1];
	return 0;
}

static int pk_str(struct pk *p, size_t len)
{
	struct pv *v;
	if (len > p->n - p->pos)
		return pk_fail(p, TS_ETRUNC, "pickle ends inside a string");
	if (!(v = pv_new(p->a, PV_STR)))
		return TS_ENOMEM;
	v->s = (const char *)p->d + p->pos;
	v->n = len;
	p->pos += len;
	return pk_push(p, v);
}

/*
 * The text argument of a protocol 0 UNICODE ('V': raw-unicode-escape, each
 * byte a Latin-1 character except \uXXXX and \UXXXXXXXX) or STRING ('S':
 * a quoted repr with backslash escapes) opcode, k bytes at p->pos, as a
 * UTF-8 string value; p->pos moves past the newline.
 */
static int pk_text_str(struct pk *p, size_t k, int repr)
{
	const unsigned char *s = p->d + p->pos;
	struct ts_sb sb;
	struct pv *v;
	size_t i = 0;

	if (repr) {
		if (k < 2 || (s[0] != '\'' && s[0] != '"') || s[k - 1] != s[0])
			return pk_fail(p, TS_EPARSE, "pickle STRING without its quotes");
		s++;
		k -= 2;
	}
	while (i < k && s[i] < 0x80 && s[i] != '\\')
		i++;
	if (i == k) {
		if (!(v = pv_new(p->a, PV_STR)))
			return TS_ENOMEM;
		v->s = (const char *)s;
		v->n = k;
		p->pos += k + (repr ? 2 : 0) + 1;
		return pk_push(p, v);
	}
	ts_sb_init(&sb);
	for (i = 0; i < k; i++) {
		int digits = 0;
		uint32_t cp;

		if (s[i] != '\\' || i + 1 >= k) {
			put_utf8(&sb, s[i]);
			continue;
		}
		switch (s[i + 1]) {
		case 'u': digits = 4; break;
		case 'U': digits = 8; break;
		case 'x': digits = repr ? 2 : 0; break;
		default: break;
		}
		if (!digits && repr) {
			const char *from = "nrt\\'\"", *to = "\n\r\t\\'\"";
			const char *at = memchr(from, s[i + 1], 6);
			ts_sb_addc(&sb, at ? to[at - from] : (char)s[i + 1]);
			i++;
			continue;
		}
		if (!digits || i + 2 + (size_t)digits > k) {
			put_utf8(&sb, s[i]);
			continue;
		}
		cp = 0;
		for (int d = 0; d < digits; d++) {
			int h = hexval((char)s[i + 2 + d]);
			if (h < 0) {
				ts_sb_release(&sb);
				return pk_fail(p, TS_EPARSE, "bad escape in a pickle string");
			}
			cp = cp << 4 | (uint32_t)h;
		}
		put_utf8(&sb, cp);
		i += 1 + (size_t)digits;
	}
	if (sb.failed || !(v = pv_new(p->a, PV_STR)) ||
	    !(v->s = hang_pool_strndup(p->a, sb.buf, sb.len))) {
		ts_sb_release(&sb);
		return TS_ENOMEM;
	}
	v->n = sb.len;
	ts_sb_release(&sb);
	p->pos += k + (repr ? 2 : 0) + 1;
	return pk_push(p, v);
}

static int pk_int(struct pk *p, int64_t i)
{
	struct pv *v = pv_new(p->a, PV_INT);
	if (!v)
		return TS_ENOMEM;
	v->i = i;
	return pk_push(p, v);
}

static int pk_float(struct pk *p, double f)
{
	struct pv *v = pv_new(p->a, PV_FLOAT);
	if (!v)
		return TS_ENOMEM;
	v->f = f;
	return pk_push(p, v);
}

/* Bytes of a protocol 0 opcode's text argument, from p->pos to its '\n'. */
static int pk_line(struct pk *p, size_t *k)
{
	const unsigned char *nl = memchr(p->d + p->pos, '\n', p->n - p->pos);
	if (!nl)
		return pk_fail(p, TS_ETRUNC, "pickle ends inside an opcode");
	*k = (size_t)(nl - (p->d + p->pos));
	return 0;
}

static int pk_put(struct pk *p, uint64_t idx)
{
	struct pv *v = NULL;
	int rc;
	if (idx >= PV_MAX_MEMO)
		return pk_fail(p, TS_ELIMIT, "pickle memo index too large");
	if ((rc = pk_top(p, &v)))
		return rc;
	if (TS_VEC_RESERVE(p->memo, idx + 1))
		return TS_ENOMEM;
	while (p->memo.n <= idx)
		p->memo.v[p->memo.n++] = NULL;
	p->memo.v[idx] = v;
	return 0;
}

static int pk_get(struct pk *p, uint64_t idx)
{
	if (idx >= p->memo.n || !p->memo.v[idx])
		return pk_fail(p, TS_EPARSE, "pickle refers to a memo entry never stored");
	return pk_push(p, p->memo.v[idx]);
}

/* pop items down to the mark into container c (pairs for a dict) */
static int pk_fill(struct pk *p, struct pv *c, int pairs)
{
	int64_t m = pk_mark(p);
	size_t k;
	if (m < 0)
		return pk_fail(p, TS_EPARSE, "pickle has no MARK for this opcode");
	k = p->stack.n - (size_t)m - 1;
	if (pairs && k % 2)
		return pk_fail(p, TS_EPARSE, "odd number of items for a dict");
	if (c->t == PV_DICT && !pairs)
		return pk_fail(p, TS_EPARSE, "APPENDS on a dict");
	if (c->t != PV_DICT && pairs)
		return pk_fail(p, TS_EPARSE, "SETITEMS on a value that is not a dict");
	if (c->nit + k > c->cap) { /* grow once for the whole batch */
		size_t nc = c->cap ? c->cap : 8;
		struct pv **ni;
		while (nc < c->nit + k)
			nc *= 2;
		if (!(ni = hang_pool_alloc(p->a, nc * sizeof(*ni))))
			return TS_ENOMEM;
		if (c->nit)
			memcpy(ni, c->it, c->nit * sizeof(*ni));
		c->it = ni;
		c->cap = nc;
	}
	if (k)
		memcpy(c->it + c->nit, p->stack.v + m + 1, k * sizeof(*c->it));
	c->nit += k;
	p->stack.n = (size_t)m;
	return 0;
}

static int pk_refuse_named(struct pk *p, const char *op)
{
	/* GLOBAL / INST: "module\nname\n" follows the opcode */
	const unsigned char *a = p->d + p->pos, *e = p->d + p->n;
	const unsigned char *nl1 = memchr(a, '\n', (size_t)(e - a));
	const unsigned char *nl2 = nl1 ? memchr(nl1 + 1, '\n', (size_t)(e - nl1 - 1)) : NULL;
	char cls[160];
	size_t k = 0;
	if (nl1 && nl2) {
		for (const unsigned char *c = a; c < nl2 && k + 1 < sizeof(cls); c++)
			if (c != nl1 && *c >= 0x20 && *c < 0x7f)
				cls[k++] = (char)*c;
			else if (c == nl1 && k + 1 < sizeof(cls))
				cls[k++] = '.';
	}
	cls[k] = 0;
	return ts_err_at(p->err, TS_EUNSUPPORTED, p->name, (int64_t)p->op_at, -1,
			 "pickle %s %s: refusing to import or call code (a Flight Recorder dump holds only plain data)",
			 op, k ? cls : "(unnamed)");
}

static int pk_run(struct pk *p, struct pv **out)
{
	int rc;
	struct pv *v = NULL, *w = NULL, *x = NULL;

	while (p->pos < p->n) {
		unsigned char op = p->d[p->pos];
		p->op_at = p->pos++;
		switch (op) {
		case 0x80: /* PROTO */
			if ((rc = pk_need(p, 1)))
				return rc;
			if (p->d[p->pos] > 5)
				return pk_fail(p, TS_EUNSUPPORTED, "pickle protocol above 5");
			p->pos++;
			break;
		case 0x95: /* FRAME */
			if ((rc = pk_need(p, 8)))
				return rc;
			p->pos += 8;
			break;
		case '.': /* STOP */
			if ((rc = pk_pop(p, out)))
				return rc;
			return 0;
		case '}': if ((rc = pk_push(p, pv_new(p->a, PV_DICT)))) return rc; break;
		case ']': if ((rc = pk_push(p, pv_new(p->a, PV_LIST)))) return rc; break;
		case ')': if ((rc = pk_push(p, pv_new(p->a, PV_TUPLE)))) return rc; break;
		case '(': if ((rc = pk_push(p, &pv_mark))) return rc; break;
		case 'N': if ((rc = pk_push(p, pv_new(p->a, PV_NONE)))) return rc; break;
		case 0x88: case 0x89:
			if (!(v = pv_new(p->a, PV_BOOL)))
				return TS_ENOMEM;
			v->i = op == 0x88;
			if ((rc = pk_push(p, v)))
				return rc;
			break;
		case 'X': /* BINUNICODE */
		case 'T': /* BINSTRING */
		case 'B': /* BINBYTES */
			if ((rc = pk_need(p, 4)))
				return rc;
			p->pos += 4;
			if ((rc = pk_str(p, (size_t)le(p->d + p->pos - 4, 4))))
				return rc;
			break;
		case 0x8d: /* BINUNICODE8 */
		case 0x8e: /* BINBYTES8 */
			if ((rc = pk_need(p, 8)))
				return rc;
			p->pos += 8;
			if (le(p->d + p->pos - 8, 8) > p->n)
				return pk_fail(p, TS_ETRUNC, "pickle ends inside a string");
			if ((rc = pk_str(p, (size_t)le(p->d + p->pos - 8, 8))))
				return rc;
			break;
		case 0x8c: /* SHORT_BINUNICODE */
		case 'U':  /* SHORT_BINSTRING */
		case 'C':  /* SHORT_BINBYTES */
			if ((rc = pk_need(p, 1)))
				return rc;
			p->pos++;
			if ((rc = pk_str(p, p->d[p->pos - 1])))
				return rc;
			break;
		case 'J':
			if ((rc = pk_need(p, 4)))
				return rc;
			p->pos += 4;
			if ((rc = pk_int(p, (int32_t)(uint32_t)le(p->d + p->pos - 4, 4))))
				return rc;
			break;
		case 'K':
			if ((rc = pk_need(p, 1)))
				return rc;
			if ((rc = pk_int(p, p->d[p->pos++])))
				return rc;
			break;
		case 'M':
			if ((rc = pk_need(p, 2)))
				return rc;
			p->pos += 2;
			if ((rc = pk_int(p, (int64_t)le(p->d + p->pos - 2, 2))))
				return rc;
			break;
		case 0x8a: /* LONG1 */
		case 0x8b: { /* LONG4 */
			size_t k;
			if (op == 0x8a) {
				if ((rc = pk_need(p, 1)))
					return rc;
				k = p->d[p->pos++];
			} else {
				if ((rc = pk_need(p, 4)))
					return rc;
				k = (size_t)le(p->d + p->pos, 4);
				p->pos += 4;
			}
			if (k > 8)
				return pk_fail(p, TS_ELIMIT, "pickle integer wider than 64 bits");
			if ((rc = pk_need(p, k)))
				return rc;
			uint64_t u = le(p->d + p->pos, (int)k);
			if (k && k < 8 && (p->d[p->pos + k - 1] & 0x80))
				u |= ~(uint64_t)0 << (8 * k);
			p->pos += k;
			if ((rc = pk_int(p, (int64_t)u)))
				return rc;
			break;
		}
		case 'G': { /* BINFLOAT, big-endian */
			uint64_t u = 0;
			double f;
			if ((rc = pk_need(p, 8)))
				return rc;
			for (int i = 0; i < 8; i++)
				u = u << 8 | p->d[p->pos + i];
			p->pos += 8;
			memcpy(&f, &u, sizeof(f));
			if ((rc = pk_float(p, f)))
				return rc;
			break;
		}
		case 'V': case 'S': case 'F': { /* protocol 0 text argument to '\n' */
			size_t k = 0;
			double f;
			if ((rc = pk_line(p, &k)))
				return rc;
			if (op != 'F') {
				if ((rc = pk_text_str(p, k, op == 'S')))
					return rc;
				break;
			}
			if (ts_num_f64((const char *)p->d + p->pos, k, &f))
				return pk_fail(p, TS_EPARSE, "bad number in a FLOAT opcode");
			p->pos += k + 1;
			if ((rc = pk_float(p, f)))
				return rc;
			break;
		}
		case 'I': case 'L': case 'p': case 'g': { /* text argument to '\n' */
			int64_t iv;
			size_t k = 0, line;
			if ((rc = pk_line(p, &k)))
				return rc;
			line = k;
			if (op == 'L' && k && p->d[p->pos + k - 1] == 'L')
				k--;
			if (op == 'I' && k == 2 && (p->d[p->pos] == '0') && (p->d[p->pos + 1] == '0' || p->d[p->pos + 1] == '1')) {
				if (!(v = pv_new(p->a, PV_BOOL)))
					return TS_ENOMEM;
				v->i = p->d[p->pos + 1] == '1';
				p->pos += line + 1;
				if ((rc = pk_push(p, v)))
					return rc;
				break;
			}
			if (ts_num_i64((const char *)p->d + p->pos, k, &iv))
				return pk_fail(p, TS_EPARSE, "bad integer in a text opcode");
			p->pos += line + 1;
			if (op == 'p' || op == 'g') {
				if (iv < 0)
					return pk_fail(p, TS_EPARSE, "negative memo index");
				rc = op == 'p' ? pk_put(p, (uint64_t)iv) : pk_get(p, (uint64_t)iv);
			} else {
				rc = pk_int(p, iv);
			}
			if (rc)
				return rc;
			break;
		}
		case 'q': case 'h':
			if ((rc = pk_need(p, 1)))
				return rc;
			p->pos++;
			rc = op == 'q' ? pk_put(p, p->d[p->pos - 1]) : pk_get(p, p->d[p->pos - 1]);
			if (rc)
				return rc;
			break;
		case 'r': case 'j':
			if ((rc = pk_need(p, 4)))
				return rc;
			p->pos += 4;
			rc = op == 'r' ? pk_put(p, le(p->d + p->pos - 4, 4)) : pk_get(p, le(p->d + p->pos - 4, 4));
			if (rc)
				return rc;
			break;
		case 0x94: /* MEMOIZE */
			if ((rc = pk_put(p, p->memo.n)))
				return rc;
			break;
		case '0': /* POP */
			if (p->stack.n && p->stack.v[p->stack.n - 1] == &pv_mark)
				p->stack.n--;
			else if ((rc = pk_pop(p, &v)))
				return rc;
			break;
		case '1': { /* POP_MARK */
			int64_t m = pk_mark(p);
			if (m < 0)
				return pk_fail(p, TS_EPARSE, "pickle has no MARK for POP_MARK");
			p->stack.n = (size_t)m;
			break;
		}
		case '2': /* DUP */
			if ((rc = pk_top(p, &v)) || (rc = pk_push(p, v)))
				return rc;
			break;
		case 't': case 'l': case 'd': /* TUPLE, LIST, DICT from the mark */
			if (!(v = pv_new(p->a, op == 't' ? PV_TUPLE : op == 'l' ? PV_LIST : PV_DICT)))
				return TS_ENOMEM;
			if ((rc = pk_fill(p, v, op == 'd')) || (rc = pk_push(p, v)))
				return rc;
			break;
		case 0x85: case 0x86: case 0x87: { /* TUPLE1..3 */
			size_t k = (size_t)(op - 0x84);
			if (!(v = pv_new(p->a, PV_TUPLE)))
				return TS_ENOMEM;
			if (p->stack.n < k)
				return pk_fail(p, TS_EPARSE, "pickle stack underflow");
			for (size_t i = p->stack.n - k; i < p->stack.n; i++) {
				if (p->stack.v[i] == &pv_mark)
					return pk_fail(p, TS_EPARSE, "pickle stack underflow");
				if (pv_push(p->a, v, p->stack.v[i]))
					return TS_ENOMEM;
			}
			p->stack.n -= k;
			if ((rc = pk_push(p, v)))
				return rc;
			break;
		}
		case 'a': /* APPEND */
			if ((rc = pk_pop(p, &x)) || (rc = pk_top(p, &v)))
				return rc;
			if (v->t != PV_LIST)
				return pk_fail(p, TS_EPARSE, "APPEND to a value that is not a list");
			if (pv_push(p->a, v, x))
				return TS_ENOMEM;
			break;
		case 'e': { /* APPENDS */
			int64_t m = pk_mark(p);
			if (m < 1 || p->stack.v[m - 1] == &pv_mark || p->stack.v[m - 1]->t != PV_LIST)
				return pk_fail(p, TS_EPARSE, "APPENDS without a list under the MARK");
			if ((rc = pk_fill(p, p->stack.v[m - 1], 0)))
				return rc;
			break;
		}
		case 's': /* SETITEM */
			if ((rc = pk_pop(p, &x)) || (rc = pk_pop(p, &w)) || (rc = pk_top(p, &v)))
				return rc;
			if (v->t != PV_DICT)
				return pk_fail(p, TS_EPARSE, "SETITEM on a value that is not a dict");
			if (pv_push(p->a, v, w) || pv_push(p->a, v, x))
				return TS_ENOMEM;
			break;
		case 'u': { /* SETITEMS */
			int64_t m = pk_mark(p);
			if (m < 1 || p->stack.v[m - 1] == &pv_mark || p->stack.v[m - 1]->t != PV_DICT)
				return pk_fail(p, TS_EPARSE, "SETITEMS without a dict under the MARK");
			if ((rc = pk_fill(p, p->stack.v[m - 1], 1)))
				return rc;
			break;
		}
		case 'c': return pk_refuse_named(p, "GLOBAL");
		case 'i': return pk_refuse_named(p, "INST");
		case 0x93: { /* STACK_GLOBAL: module and name are the two strings on the stack */
			char cls[160] = "(unnamed)";
			if (p->stack.n >= 2 && p->stack.v[p->stack.n - 1]->t == PV_STR &&
			    p->stack.v[p->stack.n - 2]->t == PV_STR) {
				const struct pv *m = p->stack.v[p->stack.n - 2], *nm = p->stack.v[p->stack.n - 1];
				int mk = m->n > 70 ? 70 : (int)m->n, nk = nm->n > 70 ? 70 : (int)nm->n;
				struct ts_sb sb;
				ts_sb_init(&sb);
				ts_sb_addf(&sb, "%.*s.%.*s", mk, m->s, nk, nm->s);
				for (size_t i = 0; i < sb.len && i + 1 < sizeof(cls); i++) {
					cls[i] = (sb.buf[i] >= 0x20 && sb.buf[i] < 0x7f) ? sb.buf[i] : '?';
					cls[i + 1] = 0;
				}
				ts_sb_release(&sb);
			}
			return ts_err_at(p->err, TS_EUNSUPPORTED, p->name, (int64_t)p->op_at, -1,
					 "pickle STACK_GLOBAL %s: refusing to import or call code (a Flight Recorder dump holds only plain data)", cls);
		}
		case 'R': return pk_fail(p, TS_EUNSUPPORTED, "pickle REDUCE: refusing to call code (a Flight Recorder dump holds only plain data)");
		case 'b': return pk_fail(p, TS_EUNSUPPORTED, "pickle BUILD: refusing to run object state code");
		case 'o': return pk_fail(p, TS_EUNSUPPORTED, "pickle OBJ: refusing to build objects");
		case 0x81: case 0x92: return pk_fail(p, TS_EUNSUPPORTED, "pickle NEWOBJ: refusing to build objects");
		case 0x82: case 0x83: case 0x84: return pk_fail(p, TS_EUNSUPPORTED, "pickle EXT: refusing extension-registry classes");
		case 'P': case 'Q': return pk_fail(p, TS_EUNSUPPORTED, "pickle PERSID: refusing persistent ids");
		default: {
			char hex[8];
			hex[0] = '0';
			hex[1] = 'x';
			hex[2] = "0123456789abcdef"[op >> 4];
			hex[3] = "0123456789abcdef"[op & 15];
			hex[4] = 0;
			return ts_err_at(p->err, TS_EPARSE, p->name, (int64_t)p->op_at, -1,
					 "unknown or unsupported pickle opcode %s", hex);
		}
		}
	}
	return ts_err_at(p->err, TS_ETRUNC, p->name, (int64_t)p->pos, -1, "pickle ends without STOP");
}

/* Is v a container that items can still be added to (SETITEMS, APPENDS)? */
static int pk_open_kind(const struct pv *v)
{
	return v != &pv_mark && (v->t == PV_DICT || v->t == PV_LIST);
}

/*
 * Salvage of a pickle whose input ended before STOP. The stack then holds
 * the containers being filled, each with the items pushed for it above its
 * MARK; they are folded in from the top: a container keeps those items (a
 * dict key without its value is dropped) and is cut, then it is an item of
 * the one below. Items above a MARK with no dict or list under it (a
 * TUPLE, LIST or DICT opcode never reached) become a cut tuple. The value
 * on top of the stack may be a container still waiting for its items (a
 * dict pushed empty, its MARK and items not yet read), so it is cut too:
 * a complete entry cut right after its SETITEMS is dropped as well. The
 * root is the bottom value; it must be the only one left (a SETITEM or
 * APPEND without MARK under way at the bottom folds into it the same way).
 * 0 with *out set, or -1 when nothing can be salvaged.
 */
static int pk_salvage(struct pk *p, struct pv **out)
{
	size_t n = p->stack.n;

	if (!n)
		return -1;
	if (p->stack.v[n - 1] != &pv_mark)
		p->stack.v[n - 1]->cut = 1;
	for (;;) {
		int64_t m = pk_mark(p);
		size_t from, at;
		struct pv *c;

		if (m < 0 && p->stack.n == 1)
			break;
		if (m < 0) {
			if (!pk_open_kind(p->stack.v[0]))
				return -1;
			c = p->stack.v[0];
			from = 1;
			at = 0;
		} else if (m > 0 && pk_open_kind(p->stack.v[m - 1])) {
			c = p->stack.v[m - 1];
			from = (size_t)m + 1;
			at = (size_t)m - 1;
		} else {
			if (!(c = pv_new(p->a, PV_TUPLE)))
				return -1;
			from = (size_t)m + 1;
			at = (size_t)m;
		}
		size_t k = p->stack.n - from;
		if (c->t == PV_DICT && k % 2)
			k--;
		for (size_t i = 0; i < k; i++)
			if (pv_push(p->a, c, p->stack.v[from + i]))
				return -1;
		c->cut = 1;
		p->stack.v[at] = c;
		p->stack.n = at + 1;
		if (m < 0)
			break;
	}
	if (p->stack.n != 1 || p->stack.v[0] == &pv_mark)
		return -1;
	*out = p->stack.v[0];
	return 0;
}

int hang_pv_parse_pickle(struct hang_pool *a, const unsigned char *d, size_t n, const char *name,
			 struct pv **out, int64_t *cut, struct ts_err *err)
{
	struct pk p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.a = a;
	p.d = d;
	p.n = n;
	p.name = name;
	p.err = err;
	if (cut)
		*cut = -1;
	rc = pk_run(&p, out);
	if (rc == TS_ETRUNC && cut && pk_salvage(&p, out) == 0 && !a->failed) {
		*cut = (int64_t)n;
		ts_err_init(err);
		rc = 0;
	}
	if ((!rc || rc == TS_ETRUNC) && a->failed)
		rc = ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
	TS_VEC_RELEASE(p.stack);
	TS_VEC_RELEASE(p.memo);
	return rc;
}

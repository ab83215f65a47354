/*
 * nsys_stats.c - the `nsys stats` summary reports, computed the way the
 * nsys report scripts compute them, from an nsys export (its tables
 * directly, one pass per table) or from a trace model (Kineto, where the
 * data exists).
 *
 * Definitions (docs/nsys.md): per group Total = Σ, Avg = Total / n, Med =
 * the middle value (the mean of the two middle values for even n), StdDev
 * = sample standard deviation (n - 1; 0 for one value), Time % = Total /
 * Σ Total of the rows listed; Avg, Med, StdDev and Time % rounded to 0.1
 * half away from zero (SQLite's round()). Row order: kernels by total
 * desc, instances asc, name; API calls, memory ops and NVTX ranges by
 * total desc (name as the tie-break, for stable output); kern_exec by
 * average total time desc.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/jsonw.h"
#include "trainscope/nsys.h"
#include "trainscope/taxonomy.h"
#include "nsys_int.h"
#include "../profile/radix.h"

static const char *const rep_names[TS_SREP_COUNT] = {
	[TS_SREP_KERN_SUM] = "cuda_gpu_kern_sum",
	[TS_SREP_API_SUM] = "cuda_api_sum",
	[TS_SREP_MEM_TIME_SUM] = "cuda_gpu_mem_time_sum",
	[TS_SREP_MEM_SIZE_SUM] = "cuda_gpu_mem_size_sum",
	[TS_SREP_NVTX_SUM] = "nvtx_sum",
	[TS_SREP_KERN_EXEC_SUM] = "cuda_kern_exec_sum",
};

const char *ts_srep_name(enum ts_srep_kind r)
{
	return (unsigned)r < TS_SREP_COUNT ? rep_names[r] : "";
}

int ts_srep_of(const char *name)
{
	for (int i = 0; i < TS_SREP_COUNT; i++)
		if (strcmp(name, rep_names[i]) == 0)
			return i;
	return -1;
}

typedef TS_VEC(int64_t) i64vec;

/* A kernel whose name id is not in StringIds (a damaged export). */
#define UNNAMED_KERNEL "(unnamed kernel)"
#define UNNAMED_API "(unnamed API call)"

/* nsys's display rule for API names: drop a trailing "_vNNNN" (exactly
 * six characters starting with "_v"). */
static size_t nsys_api_display(const char *s, size_t n)
{
	return n >= 6 && s[n - 6] == '_' && s[n - 5] == 'v' ? n - 6 : n;
}

struct grp {
	uint32_t name, api, style;
	int64_t pid, tid;
	int32_t device;
	i64vec v, a, q, tt;   /* value (time/size; kern_exec: kernel), api, queue, total */
};

struct ts_srep_acc {
	struct ts_intern keys;
	TS_VEC(struct grp) g;
	uint32_t *by_loc;     /* nsys local string id -> group + 1 (0: not yet) */
	size_t nloc;
};

void ts_srep_init(struct ts_srep *r, enum ts_srep_kind kind)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	ts_intern_init(&r->names);
}

static void acc_free(struct ts_srep_acc *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->g.n; i++) {
		TS_VEC_RELEASE(a->g.v[i].v);
		TS_VEC_RELEASE(a->g.v[i].a);
		TS_VEC_RELEASE(a->g.v[i].q);
		TS_VEC_RELEASE(a->g.v[i].tt);
	}
	TS_VEC_RELEASE(a->g);
	ts_intern_release(&a->keys);
	free(a->by_loc);
	free(a);
}

void ts_srep_release(struct ts_srep *r)
{
	acc_free(r->acc);
	r->acc = NULL;
	TS_VEC_RELEASE(r->rows);
	ts_intern_release(&r->names);
}

static int nomem(struct ts_err *err)
{
	return ts_err_set(err, TS_ENOMEM, "out of memory building the report");
}

static int64_t name_id(struct ts_srep *r, const char *s, size_t n)
{
	return ts_intern(&r->names, s, n);
}

/* The group of a key, created on first use; NULL on out of memory. */
static struct grp *group(struct ts_srep *r, uint32_t name, uint32_t api, uint32_t style, int64_t pid,
			 int64_t tid, int32_t dev)
{
	char key[128];
	int n;
	int64_t id;

	if (!r->acc) {
		r->acc = calloc(1, sizeof(*r->acc));
		if (!r->acc)
			return NULL;
		ts_intern_init(&r->acc->keys);
	}
	n = snprintf(key, sizeof(key), "%u|%u|%u|%lld|%lld|%d", name, api, style, (long long)pid,
		     (long long)tid, dev);
	id = ts_intern(&r->acc->keys, key, (size_t)n);
	if (id < 0)
		return NULL;
	if ((size_t)id == r->acc->g.n) {
		struct grp g;
		memset(&g, 0, sizeof(g));
		g.name = name;
		g.api = api;
		g.style = style;
		g.pid = pid;
		g.tid = tid;
		g.device = dev;
		if (TS_VEC_PUSH(r->acc->g, g))
			return NULL;
	}
	return &r->acc->g.v[id];
}

static int add1(struct ts_srep *r, const char *nm, size_t n, int64_t v)
{
	int64_t id = name_id(r, nm, n);
	struct grp *g = id < 0 ? NULL : group(r, (uint32_t)id, TS_NO_ID, TS_NO_ID, 0, 0, 0);

	return !g || TS_VEC_PUSH(g->v, v) ? TS_ENOMEM : 0;
}

/* add1 for a row named by an nsys local string id (display length by
 * api for API names): the group is looked up once per distinct id. */
static int add_loc(struct ts_srep *r, struct ts_nsys *x, uint32_t loc, int api, int64_t v)
{
	const char *s;
	size_t n;
	int64_t id;
	struct grp *g;

	if (loc == TS_NO_ID) {
		s = UNNAMED_KERNEL;
		return add1(r, s, strlen(s), v);
	}
	if (r->acc && r->acc->by_loc && loc < r->acc->nloc && r->acc->by_loc[loc])
		return TS_VEC_PUSH(r->acc->g.v[r->acc->by_loc[loc] - 1].v, v) ? TS_ENOMEM : 0;
	s = ts_intern_str(&x->strings, loc);
	n = ts_intern_len(&x->strings, loc);
	if (api)
		n = nsys_api_display(s, n);
	id = name_id(r, s, n);
	g = id < 0 ? NULL : group(r, (uint32_t)id, TS_NO_ID, TS_NO_ID, 0, 0, 0);
	if (!g || TS_VEC_PUSH(g->v, v))
		return TS_ENOMEM;
	if (!r->acc->by_loc) {
		r->acc->nloc = x->strings.count;
		r->acc->by_loc = calloc(r->acc->nloc ? r->acc->nloc : 1, sizeof(*r->acc->by_loc));
	}
	if (r->acc->by_loc && loc < r->acc->nloc)
		r->acc->by_loc[loc] = (uint32_t)(g - r->acc->g.v) + 1;
	return 0;
}

static int add_style(struct ts_srep *r, const char *nm, size_t n, const char *style, int64_t v)
{
	int64_t id = name_id(r, nm, n), st = name_id(r, style, strlen(style));
	struct grp *g = id < 0 || st < 0 ? NULL : group(r, (uint32_t)id, TS_NO_ID, (uint32_t)st, 0, 0, 0);

	return !g || TS_VEC_PUSH(g->v, v) ? TS_ENOMEM : 0;
}

static int add_exec(struct ts_srep *r, int64_t pid, int64_t tid, int32_t dev, const char *api, size_t an,
		    const char *kn, size_t kl, int64_t rs, int64_t re, int64_t ks, int64_t ke)
{
	int64_t a = name_id(r, api, an), k = name_id(r, kn, kl);
	struct grp *g;

	if (!NS_TIME_OK(rs) || !NS_TIME_OK(re) || !NS_TIME_OK(ks) || !NS_TIME_OK(ke))
		return 0;   /* not a real time: left out */
	g = a < 0 || k < 0 ? NULL : group(r, (uint32_t)k, (uint32_t)a, TS_NO_ID, pid, tid, dev);
	if (!g || TS_VEC_PUSH(g->v, ke - ks) || TS_VEC_PUSH(g->a, re - rs) ||
	    TS_VEC_PUSH(g->tt, (re > ke ? re : ke) - rs))
		return TS_ENOMEM;
	if (ks - re >= 0 && TS_VEC_PUSH(g->q, ks - re))
		return TS_ENOMEM;
	return 0;
}


/* ------------------------------------------------------------ from an nsys export */

static int need(struct ts_nsys *x, enum ts_nsys_tab t, const char *what, struct ts_err *err)
{
	if (ns_col(x, t, 0) && ns_col(x, t, 1))
		return 0;
	return ts_err_at(err, TS_EPARSE, x->path, -1, -1, "the export has no %s (%s table%s)", what,
			 ts_nsys_table_name(t), ns_has(x, t) ? " without start/end" : " absent");
}

static const char *lstr(struct ts_nsys *x, uint32_t id, size_t *n)
{
	if (id == TS_NO_ID) {
		*n = 0;
		return NULL;
	}
	*n = ts_intern_len(&x->strings, id);
	return ts_intern_str(&x->strings, id);
}

static int nsys_kern(struct ts_srep *r, struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	char sql[512];
	int rc;

	if ((rc = need(x, TS_NT_KERNEL, "CUDA kernel data", err)))
		return rc;
	/* the demangled name, else the short one (as the trace model names them) */
	snprintf(sql, sizeof(sql), "SELECT end - start, %s, %s FROM CUPTI_ACTIVITY_KIND_KERNEL"
				   " WHERE " NS_ROW_OK_SQL,
		 ns_c(x, TS_NT_KERNEL, NS_KNAME), ns_c(x, TS_NT_KERNEL, NS_KSHORT));
	if ((rc = ns_prepare(x, &st, sql, "CUPTI_ACTIVITY_KIND_KERNEL", err)))
		return rc;
	while ((rc = ns_step(x, st, "CUPTI_ACTIVITY_KIND_KERNEL", err)) == 1) {
		uint32_t loc = ns_str_col(x, st, 1);
		if (loc == TS_NO_ID)
			loc = ns_str_col(x, st, 2);
		if (add_loc(r, x, loc, 0, sqlite3_column_int64(st, 0))) {
			rc = nomem(err);
			break;
		}
	}
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

static int nsys_api(struct ts_srep *r, struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	char sql[512];
	int rc;

	if ((rc = need(x, TS_NT_RUNTIME, "CUDA API data", err)))
		return rc;
	snprintf(sql, sizeof(sql), "SELECT end - start, %s FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE " NS_ROW_OK_SQL,
		 ns_c(x, TS_NT_RUNTIME, NS_RT_NAME));
	if ((rc = ns_prepare(x, &st, sql, "CUPTI_ACTIVITY_KIND_RUNTIME", err)))
		return rc;
	while ((rc = ns_step(x, st, "CUPTI_ACTIVITY_KIND_RUNTIME", err)) == 1) {
		uint32_t loc = ns_str_col(x, st, 1);
		int bad;
		/* a call whose name is lost still counts (warned: unnamed-rows) */
		if (loc == TS_NO_ID)
			bad = add1(r, UNNAMED_API, strlen(UNNAMED_API), sqlite3_column_int64(st, 0));
		else
			bad = add_loc(r, x, loc, 1, sqlite3_column_int64(st, 0));
		if (bad) {
			rc = nomem(err);
			break;
		}
	}
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

static int nsys_mem(struct ts_srep *r, struct ts_nsys *x, int size, struct ts_err *err)
{
	sqlite3_stmt *st;
	char sql[512];
	int rc;
	int cp = ns_col(x, TS_NT_MEMCPY, 0) && ns_col(x, TS_NT_MEMCPY, 1);
	int ms = ns_col(x, TS_NT_MEMSET, 0) && ns_col(x, TS_NT_MEMSET, 1);

	if (!cp && !ms)
		return ts_err_at(err, TS_EPARSE, x->path, -1, -1,
				 "the export has no GPU memory data (no CUPTI_ACTIVITY_KIND_MEMCPY or _MEMSET table)");
	if (cp) {
		snprintf(sql, sizeof(sql), "SELECT %s, %s FROM CUPTI_ACTIVITY_KIND_MEMCPY"
					   " WHERE " NS_ROW_OK_SQL,
			 size ? ns_c(x, TS_NT_MEMCPY, NS_BYTES) : "end - start", ns_c(x, TS_NT_MEMCPY, NS_COPYKIND));
		if ((rc = ns_prepare(x, &st, sql, "CUPTI_ACTIVITY_KIND_MEMCPY", err)))
			return rc;
		while ((rc = ns_step(x, st, "CUPTI_ACTIVITY_KIND_MEMCPY", err)) == 1) {
			int64_t k = sqlite3_column_int64(st, 1);
			char nm[80];
			int n;
			if (k < 0 || k >= 16 || !x->memcpy_label[k][0])
				continue;   /* nsys joins the kind with the enum table */
			n = snprintf(nm, sizeof(nm), "[CUDA memcpy %s]", x->memcpy_label[k]);
			if (add1(r, nm, (size_t)n, sqlite3_column_int64(st, 0))) {
				rc = nomem(err);
				break;
			}
		}
		sqlite3_finalize(st);
		if (rc < 0)
			return rc;
	}
	if (ms) {
		snprintf(sql, sizeof(sql), "SELECT %s FROM CUPTI_ACTIVITY_KIND_MEMSET"
					   " WHERE " NS_ROW_OK_SQL,
			 size ? ns_c(x, TS_NT_MEMSET, NS_BYTES) : "end - start");
		if ((rc = ns_prepare(x, &st, sql, "CUPTI_ACTIVITY_KIND_MEMSET", err)))
			return rc;
		while ((rc = ns_step(x, st, "CUPTI_ACTIVITY_KIND_MEMSET", err)) == 1)
			if (add1(r, "[CUDA memset]", 13, sqlite3_column_int64(st, 0))) {
				rc = nomem(err);
				break;
			}
		sqlite3_finalize(st);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int nsys_nvtx(struct ts_srep *r, struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	char sql[400];
	int rc;
	int64_t maxts = 0;
	/* domain names from NvtxDomainCreate (eventType 75) records */
	TS_VEC(struct { int64_t dom; uint32_t name; }) doms = { 0 };
	struct ts_sb nm;

	if ((rc = need(x, TS_NT_NVTX, "NVTX data", err)))
		return rc;
	if (!ns_col(x, TS_NT_NVTX, NS_NV_TYPE))
		return ts_err_at(err, TS_EPARSE, x->path, -1, -1,
				 "NVTX_EVENTS has no eventType column: its ranges cannot be told from marks"
				 " and other records");
	if ((rc = ns_prepare(x, &st, "SELECT max(max(start), max(end)) FROM NVTX_EVENTS", "NVTX_EVENTS", err)))
		return rc;
	if ((rc = ns_step(x, st, "NVTX_EVENTS", err)) == 1)
		maxts = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc < 0)
		return rc;
	ts_sb_init(&nm);
	if (ns_col(x, TS_NT_NVTX, NS_NV_TYPE) && ns_col(x, TS_NT_NVTX, NS_NV_DOMAIN)) {
		snprintf(sql, sizeof(sql), "SELECT domainId, %s, %s FROM NVTX_EVENTS WHERE eventType = 75",
			 ns_c(x, TS_NT_NVTX, NS_NV_TEXT), ns_c(x, TS_NT_NVTX, NS_NV_TEXTID));
		if ((rc = ns_prepare(x, &st, sql, "NVTX_EVENTS", err)))
			goto out;
		while ((rc = ns_step(x, st, "NVTX_EVENTS", err)) == 1) {
			uint32_t id = ns_nvtx_text(x, st, 1, 2);
			if (id == TS_NO_ID)
				continue;
			if (TS_VEC_RESERVE(doms, doms.n + 1)) {
				rc = nomem(err);
				break;
			}
			doms.v[doms.n].dom = sqlite3_column_int64(st, 0);
			doms.v[doms.n].name = id;
			doms.n++;
		}
		sqlite3_finalize(st);
		if (rc < 0)
			goto out;
	}
	snprintf(sql, sizeof(sql), "SELECT start, %s, %s, %s, %s, %s FROM NVTX_EVENTS WHERE start IS NOT NULL",
		 ns_c(x, TS_NT_NVTX, 1), ns_c(x, TS_NT_NVTX, NS_NV_TYPE), ns_c(x, TS_NT_NVTX, NS_NV_DOMAIN),
		 ns_c(x, TS_NT_NVTX, NS_NV_TEXT), ns_c(x, TS_NT_NVTX, NS_NV_TEXTID));
	if ((rc = ns_prepare(x, &st, sql, "NVTX_EVENTS", err)))
		goto out;
	while ((rc = ns_step(x, st, "NVTX_EVENTS", err)) == 1) {
		int64_t ty = sqlite3_column_type(st, 2) == SQLITE_INTEGER ? sqlite3_column_int64(st, 2) : -1;
		int64_t s = sqlite3_column_int64(st, 0);
		int has_end = sqlite3_column_type(st, 1) == SQLITE_INTEGER;
		int64_t e = has_end ? sqlite3_column_int64(st, 1) : maxts;
		int64_t dom = sqlite3_column_int64(st, 3);
		const char *style;
		uint32_t id;
		size_t n;
		const char *txt;
		if (!NS_TIME_OK(s) || !NS_TIME_OK(e))
			continue;   /* not a real time */
		if (has_end && e < s)
			continue;   /* an end before the start (counted: ts_srep_count_skipped) */
		if (ty == 59 || ty == 70)
			style = "PushPop";
		else if (ty == 60 || ty == 71)
			style = "StartEnd";
		else
			continue;
		id = ns_nvtx_text(x, st, 4, 5);
		txt = lstr(x, id, &n);
		ts_sb_reset(&nm);
		for (size_t i = 0; i < doms.n; i++)
			if (doms.v[i].dom == dom) {
				size_t dn;
				const char *d = lstr(x, doms.v[i].name, &dn);
				ts_sb_add(&nm, d, dn);
				ts_sb_addc(&nm, ':');
				break;
			}
		if (txt)
			ts_sb_add(&nm, txt, n);
		if (add_style(r, nm.buf, nm.len, style, e - s)) {
			rc = nomem(err);
			break;
		}
	}
	sqlite3_finalize(st);
out:
	TS_VEC_RELEASE(doms);
	ts_sb_release(&nm);
	return rc < 0 ? rc : 0;
}

struct launch {
	int64_t gp, corr, s, e, gt;
	uint32_t name;
};

static int cmp_launch(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;

	if (x->gp != y->gp)
		return x->gp < y->gp ? -1 : 1;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return (x->s > y->s) - (x->s < y->s);
}

static int launch_below(const void *elem, const void *key)
{
	return cmp_launch(elem, key) < 0;
}

static int nsys_exec(struct ts_srep *r, struct ts_nsys *x, struct ts_err *err)
{
	TS_VEC(struct launch) L = { 0 };
	sqlite3_stmt *st = NULL;
	char sql[512];
	int rc;

	if ((rc = need(x, TS_NT_KERNEL, "CUDA kernel data", err)) ||
	    (rc = need(x, TS_NT_RUNTIME, "CUDA API data", err)))
		return rc;
	if (!x->caps.launch_join)
		return ts_err_at(err, TS_EPARSE, x->path, -1, -1,
				 "the export cannot join kernels to their launches (cuda_kern_exec_sum needs"
				 " correlationId and globalPid in CUPTI_ACTIVITY_KIND_KERNEL, globalTid and"
				 " correlationId in CUPTI_ACTIVITY_KIND_RUNTIME)");
	if ((rc = ns_prepare(x, &st, "SELECT globalTid, correlationId, start, end, nameId FROM"
				     " CUPTI_ACTIVITY_KIND_RUNTIME WHERE " NS_ROW_OK_SQL
				     " AND correlationId IS NOT NULL",
			     "CUPTI_ACTIVITY_KIND_RUNTIME", err)))
		return rc;
	while ((rc = ns_step(x, st, "CUPTI_ACTIVITY_KIND_RUNTIME", err)) == 1) {
		int64_t gt = sqlite3_column_int64(st, 0);
		struct launch l = { gt & ~(int64_t)0xFFFFFF, sqlite3_column_int64(st, 1),
				    sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3), gt,
				    ns_str_col(x, st, 4) };
		if (TS_VEC_PUSH(L, l)) {
			rc = nomem(err);
			break;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc < 0)
		goto out;
	ts_sort(L.v, L.n, sizeof(*L.v), cmp_launch);
	snprintf(sql, sizeof(sql), "SELECT globalPid, correlationId, start, end, deviceId, %s, %s FROM"
				   " CUPTI_ACTIVITY_KIND_KERNEL WHERE " NS_ROW_OK_SQL,
		 ns_c(x, TS_NT_KERNEL, NS_KNAME), ns_c(x, TS_NT_KERNEL, NS_KSHORT));
	if ((rc = ns_prepare(x, &st, sql, "CUPTI_ACTIVITY_KIND_KERNEL", err)))
		goto out;
	while ((rc = ns_step(x, st, "CUPTI_ACTIVITY_KIND_KERNEL", err)) == 1) {
		struct launch k = { sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), INT64_MIN, 0, 0, 0 };
		size_t lo, kn;
		uint32_t kloc = ns_str_col(x, st, 5);
		const char *ks = lstr(x, kloc != TS_NO_ID ? kloc : ns_str_col(x, st, 6), &kn);
		if (sqlite3_column_type(st, 1) != SQLITE_INTEGER)
			continue;
		if (!ks) {
			ks = UNNAMED_KERNEL;
			kn = strlen(ks);
		}
		lo = ts_lower_bound(L.v, L.n, sizeof(*L.v), &k, launch_below);
		for (; lo < L.n && L.v[lo].gp == k.gp && L.v[lo].corr == k.corr; lo++) {
			size_t an;
			const char *as = lstr(x, L.v[lo].name, &an);
			if (!as) {
				as = "";
				an = 0;
			}
			if (add_exec(r, (L.v[lo].gt >> 24) & 0xFFFFFF, L.v[lo].gt & 0xFFFFFF,
				     (int32_t)sqlite3_column_int64(st, 4), as, nsys_api_display(as, an), ks, kn,
				     L.v[lo].s, L.v[lo].e, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3))) {
				rc = nomem(err);
				goto out;
			}
		}
	}
out:
	if (st)
		sqlite3_finalize(st);
	TS_VEC_RELEASE(L);
	return rc < 0 ? rc : 0;
}

int ts_srep_add_nsys(struct ts_srep *r, struct ts_nsys *x, struct ts_err *err)
{
	snprintf(r->source, sizeof(r->source), "nsys-sqlite");
	if (r->acc) {
		/* local string ids are per export */
		free(r->acc->by_loc);
		r->acc->by_loc = NULL;
		r->acc->nloc = 0;
	}
	switch (r->kind) {
	case TS_SREP_KERN_SUM: return nsys_kern(r, x, err);
	case TS_SREP_API_SUM: return nsys_api(r, x, err);
	case TS_SREP_MEM_TIME_SUM: return nsys_mem(r, x, 0, err);
	case TS_SREP_MEM_SIZE_SUM: return nsys_mem(r, x, 1, err);
	case TS_SREP_NVTX_SUM: return nsys_nvtx(r, x, err);
	case TS_SREP_KERN_EXEC_SUM: return nsys_exec(r, x, err);
	case TS_SREP_COUNT: break;
	}
	return ts_err_set(err, TS_EUSAGE, "unknown report");
}

/* ------------------------------------------------------------ from a trace */

static const char *mdir_label(enum ts_mdir d)
{
	switch (d) {
	case TS_MDIR_HTOD: return "Host-to-Device";
	case TS_MDIR_DTOH: return "Device-to-Host";
	case TS_MDIR_DTOD: return "Device-to-Device";
	case TS_MDIR_HTOH: return "Host-to-Host";
	case TS_MDIR_PTOP: return "Peer-to-Peer";
	default: break;
	}
	return "Unknown";
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

struct corr_ev {
	int64_t corr;
	size_t i;
};

static int cmp_corr(const void *a, const void *b)
{
	const struct corr_ev *x = a, *y = b;

	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

static int corr_ev_below(const void *elem, const void *c)
{
	return ((const struct corr_ev *)elem)->corr < *(const int64_t *)c;
}

/* An event whose end stays in int64: ts and dur within NS_TIME_LIM. */
/* The device of a kernel: args.device, else its pid. */
static int32_t kernel_device(const struct ts_trace *t, size_t i)
{
	int32_t d = ts_ev_device(&t->ev, i);

	return d >= 0 ? d : (int32_t)ts_ev_pid(&t->ev, i);
}

static int exec_timed(const struct ts_trace *t, size_t i)
{
	int64_t d = ts_ev_dur(&t->ev, i);

	return NS_TIME_OK(ts_ev_ts(&t->ev, i)) && d >= 0 && d <= NS_TIME_LIM;
}

static int trace_exec(struct ts_srep *r, const struct ts_trace *t, struct ts_err *err)
{
	TS_VEC(struct corr_ev) rt = { 0 };
	int rc = 0;

	for (size_t i = 0; i < t->ev.n; i++)
		if ((t->ev.cat[i] == TS_CAT_RUNTIME || t->ev.cat[i] == TS_CAT_DRIVER) && t->ev.ph[i] == 'X' &&
		    ts_ev_corr(&t->ev, i) != TS_NONE && ts_ev_dur(&t->ev, i) >= 0) {
			struct corr_ev c = { ts_ev_corr(&t->ev, i), i };
			if (TS_VEC_PUSH(rt, c)) {
				rc = nomem(err);
				goto out;
			}
		}
	ts_sort(rt.v, rt.n, sizeof(*rt.v), cmp_corr);
	for (size_t i = 0; i < t->ev.n; i++) {
		size_t lo;
		int64_t c = ts_ev_corr(&t->ev, i);
		if (t->ev.cat[i] != TS_CAT_KERNEL || t->ev.ph[i] != 'X' || c == TS_NONE ||
		    !exec_timed(t, i))
			continue;
		lo = ts_lower_bound(rt.v, rt.n, sizeof(*rt.v), &c, corr_ev_below);
		for (; lo < rt.n && rt.v[lo].corr == c; lo++) {
			size_t j = rt.v[lo].i;
			uint32_t an = t->ev.name[j], kn = t->ev.name[i];
			if (!exec_timed(t, j))
				continue;
			if (add_exec(r, ts_ev_pid(&t->ev, j), ts_ev_tid(&t->ev, j), kernel_device(t, i),
				     ts_trace_str(t, an), an < t->strings.count ? ts_intern_len(&t->strings, an) : 0,
				     ts_trace_str(t, kn), kn < t->strings.count ? ts_intern_len(&t->strings, kn) : 0,
				     ts_ev_ts(&t->ev, j), ts_ev_ts(&t->ev, j) + ts_ev_dur(&t->ev, j), ts_ev_ts(&t->ev, i),
				     ts_ev_ts(&t->ev, i) + ts_ev_dur(&t->ev, i))) {
				rc = nomem(err);
				goto out;
			}
		}
	}
out:
	TS_VEC_RELEASE(rt);
	return rc;
}

int ts_srep_add_trace(struct ts_srep *r, const struct ts_trace *t, struct ts_err *err)
{
	int64_t *bytes = NULL;
	int rc = 0;

	snprintf(r->source, sizeof(r->source), "kineto");
	if (r->kind == TS_SREP_KERN_EXEC_SUM)
		return trace_exec(r, t, err);
	if (r->kind == TS_SREP_MEM_SIZE_SUM) {
		bytes = malloc((t->ev.n ? t->ev.n : 1) * sizeof(*bytes));
		if (!bytes)
			return nomem(err);
		for (size_t i = 0; i < t->ev.n; i++)
			bytes[i] = -1;
		for (size_t i = 0; i < t->xfer.n; i++)
			if (t->xfer.v[i].ev < t->ev.n)
				bytes[t->xfer.v[i].ev] = t->xfer.v[i].bytes;
	}
	for (size_t i = 0; i < t->ev.n && !rc; i++) {
		int cat = t->ev.cat[i];
		uint32_t id = t->ev.name[i];
		const char *s = ts_trace_str(t, id);
		size_t n = id < t->strings.count ? ts_intern_len(&t->strings, id) : 0;
		int64_t d = ts_ev_dur(&t->ev, i);
		if (t->ev.ph[i] != 'X' || d == TS_NONE || d < 0)
			continue;
		switch (r->kind) {
		case TS_SREP_KERN_SUM:
			if (cat == TS_CAT_KERNEL)
				rc = add1(r, s, n, d);
			break;
		case TS_SREP_API_SUM:
			if (cat == TS_CAT_RUNTIME || cat == TS_CAT_DRIVER)
				rc = add1(r, s, n, d);
			break;
		case TS_SREP_MEM_TIME_SUM:
		case TS_SREP_MEM_SIZE_SUM: {
			char nm[80];
			int k;
			int64_t v = d;
			if (cat == TS_CAT_MEMCPY)
				k = snprintf(nm, sizeof(nm), "[CUDA memcpy %s]", mdir_label(ts_memcpy_dir(s, n)));
			else if (cat == TS_CAT_MEMSET)
				k = snprintf(nm, sizeof(nm), "[CUDA memset]");
			else
				break;
			if (r->kind == TS_SREP_MEM_SIZE_SUM) {
				v = bytes[i];
				if (v < 0)
					break;
			}
			rc = add1(r, nm, (size_t)k, v);
			break;
		}
		case TS_SREP_NVTX_SUM:
			if (cat == TS_CAT_USER_ANNOTATION)
				rc = add_style(r, s, n, "PushPop", d);
			break;
		default:
			break;
		}
	}
	free(bytes);
	return rc ? nomem(err) : 0;
}

/* ------------------------------------------------------------ statistics */

static double round1(double v)
{
	return v < 0 ? -floor(-v * 10 + 0.5) / 10 : floor(v * 10 + 0.5) / 10;
}

static int stat_of(i64vec *v, struct ts_srep_stat *s)
{
	long double sum = 0, ss = 0, mean;

	memset(s, 0, sizeof(*s));
	s->n = (int64_t)v->n;
	if (!v->n)
		return 0;
	if (ts_radix_sort_i64(v->v, v->n))
		ts_sort(v->v, v->n, sizeof(*v->v), cmp_i64);   /* no memory for the radix buffer */
	s->min = v->v[0];
	s->max = v->v[v->n - 1];
	for (size_t i = 0; i < v->n; i++) {
		if (__builtin_add_overflow(s->total, v->v[i], &s->total))
			s->total = v->v[i] > 0 ? INT64_MAX : INT64_MIN;   /* saturate */
		sum += v->v[i];
	}
	mean = sum / (long double)v->n;
	for (size_t i = 0; i < v->n; i++)
		ss += ((long double)v->v[i] - mean) * ((long double)v->v[i] - mean);
	s->avg = (double)mean;
	s->med = v->n % 2 ? (double)v->v[v->n / 2]
			  : ((double)v->v[v->n / 2 - 1] + (double)v->v[v->n / 2]) / 2.0;
	s->stddev = v->n > 1 ? (double)sqrtl(ss / (long double)(v->n - 1)) : 0.0;
	return 0;
}

static const struct ts_srep *sort_ctx;

static int cmp_name(const struct ts_srep_row *a, const struct ts_srep_row *b)
{
	return strcmp(ts_intern_str(&sort_ctx->names, a->name), ts_intern_str(&sort_ctx->names, b->name));
}

static int cmp_row(const void *pa, const void *pb)
{
	const struct ts_srep_row *a = pa, *b = pb;
	int c;

	if (sort_ctx->kind == TS_SREP_KERN_EXEC_SUM) {
		if (a->total_t.avg != b->total_t.avg)
			return a->total_t.avg > b->total_t.avg ? -1 : 1;
		if (a->pid != b->pid)
			return a->pid < b->pid ? -1 : 1;
		if (a->tid != b->tid)
			return a->tid < b->tid ? -1 : 1;
		if (a->device != b->device)
			return a->device < b->device ? -1 : 1;
		c = cmp_name(a, b);
		return c ? c : strcmp(ts_intern_str(&sort_ctx->names, a->api), ts_intern_str(&sort_ctx->names, b->api));
	}
	if (a->v.total != b->v.total)
		return a->v.total > b->v.total ? -1 : 1;
	if (sort_ctx->kind == TS_SREP_KERN_SUM && a->v.n != b->v.n)
		return a->v.n < b->v.n ? -1 : 1;
	c = cmp_name(a, b);
	if (c || a->style == TS_NO_ID || b->style == TS_NO_ID)
		return c;
	return strcmp(ts_intern_str(&sort_ctx->names, a->style), ts_intern_str(&sort_ctx->names, b->style));
}

int ts_srep_finish(struct ts_srep *r, struct ts_err *err)
{
	double all = 0;   /* Σ totals (double: the sum of saturated totals may exceed int64) */

	r->rows.n = 0;
	if (!r->acc)
		return 0;
	if (TS_VEC_RESERVE(r->rows, r->acc->g.n))
		return nomem(err);
	for (size_t i = 0; i < r->acc->g.n; i++) {
		struct grp *g = &r->acc->g.v[i];
		struct ts_srep_row *w = &r->rows.v[r->rows.n++];
		memset(w, 0, sizeof(*w));
		w->name = g->name;
		w->api = g->api;
		w->style = g->style;
		w->pid = g->pid;
		w->tid = g->tid;
		w->device = g->device;
		stat_of(&g->v, &w->v);
		stat_of(&g->a, &w->api_t);
		stat_of(&g->q, &w->queue_t);
		stat_of(&g->tt, &w->total_t);
		all += (double)w->v.total;
	}
	for (size_t i = 0; i < r->rows.n; i++)
		r->rows.v[i].pct = all > 0 ? round1((double)r->rows.v[i].v.total * 100.0 / all) : 0;
	sort_ctx = r;
	ts_sort(r->rows.v, r->rows.n, sizeof(*r->rows.v), cmp_row);
	sort_ctx = NULL;
	return 0;
}

/* ------------------------------------------------------------ rendering */

enum colkind { C_PCT, C_INT, C_F1, C_MB, C_STR };

struct col {
	const char *head;     /* nsys column name */
	const char *key;      /* JSON key */
	enum colkind kind;
};

/* Cell c of row w as text (into buf), with its kind in *is_str: 0 decimal
 * (*num), 1 text, 2 integer (*inum), 3 integer id (no digit grouping);
 * *is_null for a statistic over no values. */
static void cell(const struct ts_srep *r, const struct ts_srep_row *w, int c, char *buf, size_t n,
		 int *is_str, double *num, int64_t *inum, int *is_null)
{
	const struct ts_srep_stat *sv[4] = { &w->total_t, &w->api_t, &w->queue_t, &w->v };
	*is_str = 0;
	*is_null = 0;
	*num = 0;
	*inum = 0;
	buf[0] = 0;
	if (r->kind == TS_SREP_KERN_EXEC_SUM) {
		if (c < 5) {
			int64_t v = c == 0 ? w->pid : c == 1 ? w->tid : c == 2 ? w->device : c == 3 ? w->v.n : w->queue_t.n;
			*inum = v;
			*is_str = c < 3 ? 3 : 2;   /* ids print without digit grouping */
			snprintf(buf, n, "%lld", (long long)v);
			return;
		}
		if (c < 25) {
			const struct ts_srep_stat *s = sv[(c - 5) / 5];
			int f = (c - 5) % 5;
			if (!s->n) {
				*is_null = 1;
				return;
			}
			if (f == 2 || f == 3) {
				*inum = f == 2 ? s->min : s->max;
				snprintf(buf, n, "%lld", (long long)*inum);
				*is_str = 2;
				return;
			}
			*num = round1(f == 0 ? s->avg : f == 1 ? s->med : s->stddev);
			snprintf(buf, n, "%.1f", *num);
			return;
		}
		*is_str = 1;
		snprintf(buf, n, "%s", ts_intern_str(&r->names, c == 25 ? w->api : w->name));
		return;
	}
	if (r->kind == TS_SREP_MEM_SIZE_SUM) {
		/* Total, Count, Avg, Med, Min, Max, StdDev (MB = 1e6 B), Operation */
		double v;
		if (c == 1) {
			*inum = w->v.n;
			*is_str = 2;
			snprintf(buf, n, "%lld", (long long)w->v.n);
			return;
		}
		if (c == 7) {
			*is_str = 1;
			snprintf(buf, n, "%s", ts_intern_str(&r->names, w->name));
			return;
		}
		if (c == 0 || c == 4 || c == 5)   /* the byte counts themselves, for the JSON */
			*inum = c == 0 ? w->v.total : c == 4 ? w->v.min : w->v.max;
		v = c == 0 ? (double)w->v.total : c == 2 ? w->v.avg : c == 3 ? w->v.med : c == 4 ? (double)w->v.min
		    : c == 5 ? (double)w->v.max : w->v.stddev;
		*num = v;
		snprintf(buf, n, "%.3f", v / 1e6);
		return;
	}
	switch (c) {
	case 0:
		*num = w->pct;
		snprintf(buf, n, "%.1f", w->pct);
		return;
	case 1: case 2: case 5: case 6:
		*inum = c == 1 ? w->v.total : c == 2 ? w->v.n : c == 5 ? w->v.min : w->v.max;
		*is_str = 2;
		snprintf(buf, n, "%lld", (long long)*inum);
		return;
	case 3: case 4: case 7:
		*num = round1(c == 3 ? w->v.avg : c == 4 ? w->v.med : w->v.stddev);
		snprintf(buf, n, "%.1f", *num);
		return;
	default:
		*is_str = 1;
		snprintf(buf, n, "%s", ts_intern_str(&r->names, c == 8 && r->kind == TS_SREP_NVTX_SUM ? w->style : w->name));
		return;
	}
}

static const char *const h_sum[] = { "Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
				     "Min (ns)", "Max (ns)", "StdDev (ns)", "Name" };
static const char *const k_sum[] = { "time_pct", "total_ns", "instances", "avg_ns", "med_ns", "min_ns",
				     "max_ns", "stddev_ns", "name" };
static const char *const h_api[] = { "Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)", "Med (ns)",
				     "Min (ns)", "Max (ns)", "StdDev (ns)", "Name" };
static const char *const k_api[] = { "time_pct", "total_ns", "calls", "avg_ns", "med_ns", "min_ns",
				     "max_ns", "stddev_ns", "name" };
static const char *const h_mt[] = { "Time (%)", "Total Time (ns)", "Count", "Avg (ns)", "Med (ns)",
				    "Min (ns)", "Max (ns)", "StdDev (ns)", "Operation" };
static const char *const k_mt[] = { "time_pct", "total_ns", "count", "avg_ns", "med_ns", "min_ns",
				    "max_ns", "stddev_ns", "operation" };
static const char *const h_ms[] = { "Total (MB)", "Count", "Avg (MB)", "Med (MB)", "Min (MB)", "Max (MB)",
				    "StdDev (MB)", "Operation" };
static const char *const k_ms[] = { "total_bytes", "count", "avg_bytes", "med_bytes", "min_bytes",
				    "max_bytes", "stddev_bytes", "operation" };
static const char *const h_nv[] = { "Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
				    "Min (ns)", "Max (ns)", "StdDev (ns)", "Style", "Range" };
static const char *const k_nv[] = { "time_pct", "total_ns", "instances", "avg_ns", "med_ns", "min_ns",
				    "max_ns", "stddev_ns", "style", "range" };
static const char *const h_ex[] = {
	"PID", "TID", "DevId", "Count", "QCount",
	"TAvg (ns)", "TMed (ns)", "TMin (ns)", "TMax (ns)", "TStdDev (ns)",
	"AAvg (ns)", "AMed (ns)", "AMin (ns)", "AMax (ns)", "AStdDev (ns)",
	"QAvg (ns)", "QMed (ns)", "QMin (ns)", "QMax (ns)", "QStdDev (ns)",
	"KAvg (ns)", "KMed (ns)", "KMin (ns)", "KMax (ns)", "KStdDev (ns)",
	"API Name", "Kernel Name" };
static const char *const k_ex[] = {
	"pid", "tid", "device", "count", "qcount",
	"t_avg_ns", "t_med_ns", "t_min_ns", "t_max_ns", "t_stddev_ns",
	"a_avg_ns", "a_med_ns", "a_min_ns", "a_max_ns", "a_stddev_ns",
	"q_avg_ns", "q_med_ns", "q_min_ns", "q_max_ns", "q_stddev_ns",
	"k_avg_ns", "k_med_ns", "k_min_ns", "k_max_ns", "k_stddev_ns",
	"api_name", "kernel_name" };

static int columns(const struct ts_srep *r, const char *const **h, const char *const **k)
{
	switch (r->kind) {
	case TS_SREP_KERN_SUM: *h = h_sum; *k = k_sum; return 9;
	case TS_SREP_API_SUM: *h = h_api; *k = k_api; return 9;
	case TS_SREP_MEM_TIME_SUM: *h = h_mt; *k = k_mt; return 9;
	case TS_SREP_MEM_SIZE_SUM: *h = h_ms; *k = k_ms; return 8;
	case TS_SREP_NVTX_SUM: *h = h_nv; *k = k_nv; return 10;
	case TS_SREP_KERN_EXEC_SUM: *h = h_ex; *k = k_ex; return 27;
	default: break;
	}
	*h = h_sum;
	*k = k_sum;
	return 9;
}

static void csv_field(struct ts_sb *out, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		ts_sb_adds(out, s);
		return;
	}
	ts_sb_addc(out, '"');
	for (; *s; s++) {
		if (*s == '"')
			ts_sb_addc(out, '"');
		ts_sb_addc(out, *s);
	}
	ts_sb_addc(out, '"');
}

/* The NVTX ranges nvtx_sum leaves out: a start or end that is no real
 * time, an end before the start (an open range, end NULL, it ends at the
 * last timestamp as nsys does). Into x->null_end[TS_NT_NVTX]. */
static int nvtx_sum_unusable(struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	char sql[512];
	int rc;

	x->null_end[TS_NT_NVTX] = 0;
	if (!ns_col(x, TS_NT_NVTX, 0) || !ns_col(x, TS_NT_NVTX, 1) || !ns_col(x, TS_NT_NVTX, NS_NV_TYPE))
		return 0;
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM NVTX_EVENTS WHERE start IS NOT NULL AND eventType IN (59, 60, 70, 71)"
		 " AND (start NOT BETWEEN -2305843009213693952 AND 2305843009213693952 OR (end IS NOT NULL"
		 " AND (end < start OR end NOT BETWEEN -2305843009213693952 AND 2305843009213693952)))");
	if ((rc = ns_prepare(x, &st, sql, "NVTX_EVENTS", err)))
		return rc;
	rc = ns_step(x, st, "NVTX_EVENTS", err);
	if (rc == 1)
		x->null_end[TS_NT_NVTX] = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

int ts_srep_count_skipped(enum ts_srep_kind k, struct ts_nsys *x, struct ts_err *err)
{
	static const enum ts_nsys_tab none = TS_NT_COUNT;
	enum ts_nsys_tab tabs[2] = { none, none };
	int rc = 0;

	switch (k) {
	case TS_SREP_KERN_SUM:
		tabs[0] = TS_NT_KERNEL;
		break;
	case TS_SREP_API_SUM:
		tabs[0] = TS_NT_RUNTIME;
		break;
	case TS_SREP_MEM_TIME_SUM:
	case TS_SREP_MEM_SIZE_SUM:
		tabs[0] = TS_NT_MEMCPY;
		tabs[1] = TS_NT_MEMSET;
		break;
	case TS_SREP_KERN_EXEC_SUM:
		tabs[0] = TS_NT_KERNEL;
		tabs[1] = TS_NT_RUNTIME;
		break;
	default: /* nvtx_sum: below (open ranges are its own business) */
		break;
	}
	if (k == TS_SREP_NVTX_SUM) {
		tabs[0] = TS_NT_NVTX;
		rc = nvtx_sum_unusable(x, err);
	}
	for (int i = 0; i < 2 && !rc; i++)
		if (tabs[i] != none && tabs[i] != TS_NT_NVTX)
			rc = ts_nsys_count_unusable(x, tabs[i], err);
	/* names: the tables whose rows each report names (kern_exec by kernel) */
	if (!rc && tabs[0] != none)
		rc = ts_nsys_count_unnamed(x, tabs[0], err);
	if (!rc && (k == TS_SREP_KERN_SUM || k == TS_SREP_KERN_EXEC_SUM))
		rc = ts_nsys_count_orphan_launches(x, err);
	return rc;
}

void ts_srep_csv(const struct ts_srep *r, struct ts_sb *out)
{
	const char *const *h, *const *k;
	int nc = columns(r, &h, &k);
	char buf[4096];

	for (int c = 0; c < nc; c++) {
		if (c)
			ts_sb_addc(out, ',');
		csv_field(out, h[c]);
	}
	ts_sb_addc(out, '\n');
	for (size_t i = 0; i < r->rows.n; i++) {
		for (int c = 0; c < nc; c++) {
			int is_str, is_null;
			double num;
			int64_t inum;
			cell(r, &r->rows.v[i], c, buf, sizeof(buf), &is_str, &num, &inum, &is_null);
			if (c)
				ts_sb_addc(out, ',');
			csv_field(out, buf);
		}
		ts_sb_addc(out, '\n');
	}
}

/* Thousands separators on the integer part of a number cell. */
static void group_digits(const char *in, char *out, size_t n)
{
	const char *dot = strchr(in, '.');
	size_t ilen = dot ? (size_t)(dot - in) : strlen(in), k = 0, start = in[0] == '-' ? 1 : 0;

	for (size_t i = 0; i < ilen && k + 2 < n; i++) {
		if (i > start && (ilen - i) % 3 == 0)
			out[k++] = ',';
		out[k++] = in[i];
	}
	if (dot)
		for (const char *p = dot; *p && k + 1 < n; p++)
			out[k++] = *p;
	out[k] = 0;
}

void ts_srep_table(const struct ts_srep *r, const struct ts_warnings *w, struct ts_sb *out)
{
	const char *const *h, *const *k;
	int nc = columns(r, &h, &k);
	size_t *wd = calloc((size_t)nc, sizeof(*wd));
	char buf[4096], g[4200];

	if (!wd)
		return;
	for (int c = 0; c < nc; c++)
		wd[c] = strlen(h[c]);
	for (int pass = 0; pass < 2; pass++) {
		if (pass) {
			for (int c = 0; c < nc; c++) {
				int left = c == nc - 1 || (r->kind == TS_SREP_NVTX_SUM && c == 8) ||
					   (r->kind == TS_SREP_KERN_EXEC_SUM && c == 25);
				ts_sb_addc(out, ' ');
				if (!left)
					ts_sb_pad(out, ' ', wd[c] - strlen(h[c]));
				ts_sb_adds(out, h[c]);
				if (left && c != nc - 1)
					ts_sb_pad(out, ' ', wd[c] - strlen(h[c]));
				ts_sb_addc(out, c == nc - 1 ? '\n' : ' ');
			}
			for (int c = 0; c < nc; c++) {
				ts_sb_addc(out, ' ');
				ts_sb_pad(out, '-', wd[c]);
				ts_sb_addc(out, c == nc - 1 ? '\n' : ' ');
			}
		}
		for (size_t i = 0; i < r->rows.n; i++) {
			for (int c = 0; c < nc; c++) {
				int is_str, is_null;
				double num;
				int64_t inum;
				size_t len;
				cell(r, &r->rows.v[i], c, buf, sizeof(buf), &is_str, &num, &inum, &is_null);
				if (is_str != 1 && is_str != 3 && !is_null && buf[0])
					group_digits(buf, g, sizeof(g));
				else
					snprintf(g, sizeof(g), "%s", buf);
				len = strlen(g);
				if (!pass) {
					if (len > wd[c])
						wd[c] = len;
					continue;
				}
				ts_sb_addc(out, ' ');
				if (is_str == 1) {
					ts_sb_adds(out, g);
					if (c != nc - 1)
						ts_sb_pad(out, ' ', wd[c] - len);
				} else {
					ts_sb_pad(out, ' ', wd[c] - len);
					ts_sb_adds(out, g);
				}
				ts_sb_addc(out, c == nc - 1 ? '\n' : ' ');
			}
		}
	}
	free(wd);
	if (w && w->v.n) {
		ts_sb_addc(out, '\n');
		ts_warnings_text(out, w, w->v.n, "", "");
	}
}

void ts_srep_json(const struct ts_srep *r, const struct ts_warnings *warns, struct ts_sb *out)
{
	const char *const *h, *const *k;
	int nc = columns(r, &h, &k);
	struct ts_jw w;
	char buf[4096];

	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", "trainscope.nsys_stats/1");
	ts_jw_kstr(&w, "report", ts_srep_name(r->kind));
	ts_jw_kstr(&w, "source", r->source);
	ts_jw_key(&w, "rows");
	ts_jw_arr(&w);
	for (size_t i = 0; i < r->rows.n; i++) {
		ts_jw_obj(&w);
		for (int c = 0; c < nc; c++) {
			int is_str, is_null;
			double num;
			int64_t inum;
			cell(r, &r->rows.v[i], c, buf, sizeof(buf), &is_str, &num, &inum, &is_null);
			ts_jw_key(&w, k[c]);
			if (is_null)
				ts_jw_null(&w);
			else if (is_str == 1)
				ts_jw_str(&w, buf);
			else if (is_str >= 2)
				ts_jw_i64(&w, inum);
			else if (r->kind == TS_SREP_MEM_SIZE_SUM && (c == 0 || c == 4 || c == 5))
				ts_jw_i64(&w, inum);
			else
				ts_jw_fixed(&w, r->kind == TS_SREP_MEM_SIZE_SUM ? round1(num) : num, 1);
		}
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_warnings_json(&w, warns, warns ? warns->v.n : 0);
	ts_jw_obj_end(&w);
	ts_sb_addc(out, '\n');
}

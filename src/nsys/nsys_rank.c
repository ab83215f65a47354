/*
 * nsys_rank.c - one (process, device) of an nsys export as a struct
 * ts_trace, Kineto-shaped, so every trace analysis runs on it unchanged.
 *
 * GPU rows become kernel / gpu_memcpy / gpu_memset / cuda_sync events on
 * pid = device, tid = stream; CPU rows (runtime/driver calls, NVTX) become
 * cuda_runtime / cuda_driver / user_annotation events on the OS pid and
 * tid. Copies are named as Kineto names them ("Memcpy HtoD (Pageable ->
 * Device)"). Steps, when found, are added as ProfilerStep#N annotations.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/nsys.h"
#include "trainscope/taxonomy.h"
#include "nsys_int.h"

struct range {
	int64_t s, e, tid;
	uint32_t name;      /* trace intern id */
	uint32_t key;       /* name without PyTorch's ", op_id = N" / ", seq = N" (detection) */
	int top;            /* not inside another range of the same thread */
};

struct rb {
	struct ts_nsys *x;
	struct ts_trace *t;
	uint32_t *map;      /* local string id -> trace string id */
	size_t nmap;
	TS_VEC(struct range) nvtx;
	TS_VEC(struct range) syncs;  /* stream/device synchronise calls */
	int64_t events;
};

static int64_t tr_intern(struct rb *b, const char *s, size_t n)
{
	return ts_intern(&b->t->strings, s, n);
}

/* Trace string id of a local string id (TS_NO_ID stays). */
static int64_t tr_local(struct rb *b, uint32_t loc)
{
	int64_t id;

	if (loc == TS_NO_ID || loc >= b->x->strings.count)
		return TS_NO_ID;
	if (loc >= b->nmap) {
		/* inline NVTX text interned since the map was sized */
		size_t n = b->x->strings.count;
		uint32_t *m = realloc(b->map, n * sizeof(*m));
		if (!m)
			return TS_ENOMEM;
		for (size_t i = b->nmap; i < n; i++)
			m[i] = TS_NO_ID;
		b->map = m;
		b->nmap = n;
	}
	if (b->map[loc] != TS_NO_ID)
		return b->map[loc];
	id = tr_intern(b, ts_intern_str(&b->x->strings, loc), ts_intern_len(&b->x->strings, loc));
	if (id >= 0)
		b->map[loc] = (uint32_t)id;
	return id;
}

static int push(struct rb *b, struct ts_trace_event *e, struct ts_err *err)
{
	int64_t i = ts_trace_push_event(b->t, e);

	if (i < 0)
		return ts_err_at(err, (int)i, b->x->path, -1, -1, "too many events for one rank");
	b->events++;
	return 0;
}

static int nomem(struct rb *b, struct ts_err *err)
{
	return ts_err_at(err, TS_ENOMEM, b->x->path, -1, -1, "out of memory");
}

/* start/end of a row; 0 when usable. */
static int span_of(sqlite3_stmt *st, int64_t *s, int64_t *e)
{
	if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || sqlite3_column_type(st, 1) != SQLITE_INTEGER)
		return -1;
	*s = sqlite3_column_int64(st, 0);
	*e = sqlite3_column_int64(st, 1);
	return NS_TIME_OK(*s) && NS_TIME_OK(*e) && *e >= *s ? 0 : -1;
}

static int64_t col_i64(sqlite3_stmt *st, int c, int64_t dflt)
{
	return sqlite3_column_type(st, c) == SQLITE_INTEGER ? sqlite3_column_int64(st, c) : dflt;
}

/* GPU table rows of the rank's (process, device). */
static int read_gpu(struct rb *b, enum ts_nsys_tab t, const struct ts_nsys_rank *r, struct ts_err *err)
{
	struct ts_nsys *x = b->x;
	sqlite3_stmt *st;
	char sql[640];
	int rc;
	const char *tn = ts_nsys_table_name(t);
	int64_t cat_str = -1;

	if (!ns_col(x, t, NS_START) || !ns_col(x, t, NS_END))
		return 0;
	snprintf(sql, sizeof(sql),
		 "SELECT start, end, %s, %s, %s, %s, %s, %s, %s, %s FROM %s WHERE coalesce(%s, 0) = ?1 AND"
		 " coalesce(%s, 0) = ?2",
		 ns_c(x, t, NS_DEV), ns_c(x, t, NS_STREAM), ns_c(x, t, NS_CORR), ns_c(x, t, NS_GPID),
		 ns_c(x, t, 6), ns_c(x, t, 7), ns_c(x, t, 8), ns_c(x, t, 9), tn, ns_c(x, t, NS_GPID),
		 ns_c(x, t, NS_DEV));
	if ((rc = ns_prepare(x, &st, sql, tn, err)))
		return rc;
	/* a table without globalPid / deviceId puts its rows in process 0 /
	 * device 0, as the survey counted them */
	sqlite3_bind_int64(st, 1, r->global_pid);
	sqlite3_bind_int64(st, 2, r->device);
	cat_str = tr_intern(b, t == TS_NT_KERNEL ? "kernel" : t == TS_NT_MEMCPY ? "gpu_memcpy"
							: t == TS_NT_MEMSET ? "gpu_memset" : "cuda_sync",
			    t == TS_NT_KERNEL ? 6 : t == TS_NT_SYNC ? 9 : 10);
	if (cat_str < 0) {
		sqlite3_finalize(st);
		return nomem(b, err);
	}
	while ((rc = ns_step(x, st, tn, err)) == 1) {
		struct ts_trace_event e;
		int64_t s, en, name = TS_NO_ID, bytes = -1;
		char buf[96];
		if (span_of(st, &s, &en))
			continue;
		ts_trace_event_init(&e);
		e.ts_ns = s;
		e.dur_ns = en - s;
		e.ph = 'X';
		e.cat_str = (uint32_t)cat_str;
		e.device = (int32_t)col_i64(st, 2, r->device);
		e.pid = e.device;
		e.stream = col_i64(st, 3, TS_NONE);
		e.tid = e.stream == TS_NONE ? 0 : e.stream;
		e.correlation = col_i64(st, 4, TS_NONE);
		if (t == TS_NT_KERNEL) {
			/* the SELECT lists the table's columns in the reader's numbering */
			uint32_t loc = ns_str_col(x, st, ns_col(x, t, NS_KNAME) ? NS_KNAME : NS_KSHORT);
			if (loc == TS_NO_ID)
				loc = ns_str_col(x, st, NS_KSHORT);
			e.cat = TS_CAT_KERNEL;
			name = tr_local(b, loc);
			if (name == TS_NO_ID)
				name = tr_intern(b, "(unnamed kernel)", 16);
		} else if (t == TS_NT_MEMCPY) {
			int n = snprintf(buf, sizeof(buf), "Memcpy %s (%s -> %s)",
					 ns_copy_short(col_i64(st, NS_COPYKIND, 0)),
					 ns_mem_kind(col_i64(st, NS_SRCKIND, 7)), ns_mem_kind(col_i64(st, NS_DSTKIND, 7)));
			e.cat = TS_CAT_MEMCPY;
			name = tr_intern(b, buf, (size_t)n);
			bytes = col_i64(st, NS_BYTES, -1);
		} else if (t == TS_NT_MEMSET) {
			int n = snprintf(buf, sizeof(buf), "Memset (%s)", ns_mem_kind(col_i64(st, NS_MEMKIND, 7)));
			e.cat = TS_CAT_MEMSET;
			name = tr_intern(b, buf, (size_t)n);
			bytes = col_i64(st, NS_BYTES, -1);
		} else {
			int64_t k = col_i64(st, NS_SYNCTYPE, 0);
			const char *lab = k >= 0 && k < 8 ? x->sync_label[k] : "Unknown";
			e.cat = TS_CAT_SYNC;
			name = tr_intern(b, lab, strlen(lab));
		}
		if (name < 0) {
			rc = nomem(b, err);
			break;
		}
		e.name = (uint32_t)name;
		if ((rc = push(b, &e, err)))
			break;
		if (bytes >= 0) {
			struct ts_trace_xfer xf = { (uint32_t)(b->t->ev.n - 1), bytes };
			if (TS_VEC_PUSH(b->t->xfer, xf)) {
				rc = nomem(b, err);
				break;
			}
		}
	}
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

static int is_sync_call(const char *s, size_t n)
{
	return (n == 21 && memcmp(s, "cudaStreamSynchronize", 21) == 0) ||
	       (n == 21 && memcmp(s, "cudaDeviceSynchronize", 21) == 0) ||
	       (n == 19 && memcmp(s, "cuStreamSynchronize", 19) == 0) ||
	       (n == 16 && memcmp(s, "cuCtxSynchronize", 16) == 0);
}

/* CPU rows of the rank's process: runtime/driver calls and NVTX. */
static int read_cpu(struct rb *b, enum ts_nsys_tab t, const struct ts_nsys_rank *r, struct ts_err *err)
{
	struct ts_nsys *x = b->x;
	sqlite3_stmt *st;
	char sql[640];
	int rc, tidc = t == TS_NT_RUNTIME ? NS_RT_TID : NS_NV_TID;
	const char *tn = ts_nsys_table_name(t);
	int64_t cs_rt, cs_drv, cs_ann;

	if (!ns_col(x, t, 0))
		return 0;
	if (t == TS_NT_RUNTIME)
		snprintf(sql, sizeof(sql), "SELECT start, end, %s, %s, %s, %s FROM %s%s",
			 ns_c(x, t, NS_RT_CLASS), ns_c(x, t, NS_RT_TID), ns_c(x, t, NS_RT_CORR),
			 ns_c(x, t, NS_RT_NAME), tn,
			 ns_col(x, t, tidc) && r->global_pid ? " WHERE globalTid >= ?1 AND globalTid < ?1 + 16777216" : "");
	else
		snprintf(sql, sizeof(sql), "SELECT start, %s, %s, %s, %s, %s FROM %s%s",
			 ns_c(x, t, 1), ns_c(x, t, NS_NV_TYPE), ns_c(x, t, NS_NV_TID), ns_c(x, t, NS_NV_TEXT),
			 ns_c(x, t, NS_NV_TEXTID), tn,
			 ns_col(x, t, tidc) && r->global_pid ? " WHERE globalTid >= ?1 AND globalTid < ?1 + 16777216" : "");
	if ((rc = ns_prepare(x, &st, sql, tn, err)))
		return rc;
	if (ns_col(x, t, tidc) && r->global_pid)
		sqlite3_bind_int64(st, 1, r->global_pid);
	cs_rt = tr_intern(b, "cuda_runtime", 12);
	cs_drv = tr_intern(b, "cuda_driver", 11);
	cs_ann = tr_intern(b, "user_annotation", 15);
	if (cs_rt < 0 || cs_drv < 0 || cs_ann < 0) {
		sqlite3_finalize(st);
		return nomem(b, err);
	}
	while ((rc = ns_step(x, st, tn, err)) == 1) {
		struct ts_trace_event e;
		int64_t s, en = 0, gt, name;
		ts_trace_event_init(&e);
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
			continue;
		s = sqlite3_column_int64(st, 0);
		if (!NS_TIME_OK(s))
			continue;
		gt = col_i64(st, 3, 0);
		e.pid = (gt >> 24) & 0xFFFFFF;
		e.tid = gt & 0xFFFFFF;
		e.ts_ns = s;
		if (t == TS_NT_RUNTIME) {
			uint32_t loc;
			const char *nm;
			size_t n;
			if (span_of(st, &s, &en))
				continue;
			loc = ns_str_col(x, st, 5);
			nm = loc == TS_NO_ID ? "(unnamed call)" : ts_intern_str(&x->strings, loc);
			n = loc == TS_NO_ID ? 14 : ts_nsys_api_len(nm, ts_intern_len(&x->strings, loc));
			name = tr_intern(b, nm, n);
			e.cat = col_i64(st, 2, 0) == 1 ? TS_CAT_DRIVER : TS_CAT_RUNTIME;
			e.cat_str = (uint32_t)(e.cat == TS_CAT_DRIVER ? cs_drv : cs_rt);
			e.correlation = col_i64(st, 4, TS_NONE);
			e.ph = 'X';
			e.dur_ns = en - s;
			if (name >= 0 && is_sync_call(nm, n)) {
				struct range rg = { s, en, gt, (uint32_t)name, 0, 0 };
				if (TS_VEC_PUSH(b->syncs, rg)) {
					rc = nomem(b, err);
					break;
				}
			}
		} else {
			int64_t ty = col_i64(st, 2, -1);
			int has_end = sqlite3_column_type(st, 1) == SQLITE_INTEGER;
			uint32_t loc;
			int range = ty == 59 || ty == 60 || ty == 70 || ty == 71 || (ty == -1 && has_end);
			if (!range && ty != 34 && ty != -1)
				continue;   /* domain/category/thread naming records */
			if (range && !has_end)
				continue;   /* counted by the survey (null_end) */
			loc = ns_nvtx_text(x, st, 4, 5);
			name = tr_local(b, loc);
			if (name == TS_NO_ID)
				name = tr_intern(b, "", 0);
			e.cat = TS_CAT_USER_ANNOTATION;
			e.cat_str = (uint32_t)cs_ann;
			if (range) {
				en = sqlite3_column_int64(st, 1);
				if (en < s || !NS_TIME_OK(en))
					continue;   /* counted by the survey (null_end) */
				e.ph = 'X';
				e.dur_ns = en - s;
				if (name >= 0) {
					struct range rg = { s, en, gt, (uint32_t)name, 0, 0 };
					if (TS_VEC_PUSH(b->nvtx, rg)) {
						rc = nomem(b, err);
						break;
					}
				}
			} else {
				e.ph = 'i';
				e.dur_ns = 0;
			}
		}
		if (name < 0) {
			rc = nomem(b, err);
			break;
		}
		e.name = (uint32_t)name;
		if ((rc = push(b, &e, err)))
			break;
	}
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return (x->e < y->e) - (x->e > y->e);   /* enclosing range first */
}

/* Mark ranges that no other range of their thread encloses. */
static void mark_top(struct range *v, size_t n)
{
	int64_t tid = 0, end = INT64_MIN;

	ts_sort(v, n, sizeof(*v), cmp_range);
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || v[i].tid != tid) {
			tid = v[i].tid;
			end = INT64_MIN;
		}
		v[i].top = v[i].s >= end;
		if (v[i].top || v[i].e > end)
			end = v[i].top ? v[i].e : end;
	}
}

static int cmp_i64v(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Length of ", op_id = N" or ", seq = N" at s, 0 when there is none. */
static size_t id_suffix(const char *s)
{
	static const char *const pre[] = { ", op_id = ", ", seq = " };

	for (size_t k = 0; k < 2; k++) {
		size_t n = strlen(pre[k]), i = n;
		if (strncmp(s, pre[k], n) != 0)
			continue;
		while (s[i] >= '0' && s[i] <= '9')
			i++;
		if (i > n)
			return i;
	}
	return 0;
}

/* Detection keys: range names with per-call ids removed, so the ranges of
 * PyTorch's emit_nvtx ("FSDP::pre_forward (...), op_id = 57") repeat. */
static int range_keys(struct rb *b, struct ts_intern *keys, struct ts_err *err)
{
	struct ts_sb sb;
	int rc = 0;

	ts_sb_init(&sb);
	for (size_t i = 0; i < b->nvtx.n && !rc; i++) {
		const char *s = ts_trace_str(b->t, b->nvtx.v[i].name);
		int64_t id;
		ts_sb_reset(&sb);
		while (*s) {
			size_t skip = id_suffix(s);
			if (skip)
				s += skip;
			else
				ts_sb_addc(&sb, *s++);
		}
		id = ts_intern(keys, sb.buf, sb.len);
		if (id < 0 || sb.failed)
			rc = nomem(b, err);
		else
			b->nvtx.v[i].key = (uint32_t)id;
	}
	ts_sb_release(&sb);
	return rc;
}

static int add_steps(struct rb *b, const struct range *v, size_t n, struct ts_err *err)
{
	int64_t id = 0;
	int64_t cs = tr_intern(b, "user_annotation", 15);

	for (size_t i = 0; i < n; i++) {
		struct ts_trace_event e;
		char nm[48];
		int len = snprintf(nm, sizeof(nm), "ProfilerStep#%lld", (long long)i);
		int rc;
		id = tr_intern(b, nm, (size_t)len);
		if (id < 0 || cs < 0)
			return nomem(b, err);
		ts_trace_event_init(&e);
		e.ts_ns = v[i].s;
		e.dur_ns = v[i].e - v[i].s;
		e.ph = 'X';
		e.cat = TS_CAT_USER_ANNOTATION;
		e.cat_str = (uint32_t)cs;
		e.name = (uint32_t)id;
		e.pid = (v[i].tid >> 24) & 0xFFFFFF;
		e.tid = v[i].tid & 0xFFFFFF;
		if ((rc = push(b, &e, err)))
			return rc;
	}
	return 0;
}

/* The thread with most ranges selected by sel[], its ranges in time order. */
static size_t pick_thread(struct range *v, size_t n, const unsigned char *sel, struct range *out)
{
	size_t best = 0, bi = 0, i = 0, k = 0;

	while (i < n) {
		size_t j = i, c = 0;
		while (j < n && v[j].tid == v[i].tid)
			c += sel[j++];
		if (c > best) {
			best = c;
			bi = i;
		}
		i = j;
	}
	for (i = bi; best && i < n && v[i].tid == v[bi].tid; i++)
		if (sel[i])
			out[k++] = v[i];
	return k;
}

static int find_steps(struct rb *b, const struct ts_nsys_read_opts *o, struct ts_nsys_rank_info *info,
		      struct ts_err *err)
{
	struct range *v = b->nvtx.v, *out = NULL;
	size_t n = b->nvtx.n, k = 0;
	unsigned char *sel = NULL;
	struct ts_intern keys;
	int rc = 0;

	ts_intern_init(&keys);
	mark_top(v, n);
	/* PyTorch's profiler marked the steps itself: they are the steps, as
	 * in a Kineto trace (their ranges are already user annotations) */
	for (size_t i = 0; i < n; i++)
		if (strncmp(ts_trace_str(b->t, v[i].name), "ProfilerStep#", 13) == 0)
			info->steps++;
	if (info->steps && !(o && o->step_nvtx)) {
		info->steps_from = TS_NSYS_STEPS_PROFILER;
		snprintf(info->step_marker, sizeof(info->step_marker), "ProfilerStep#N");
		return 0;
	}
	info->steps = 0;
	sel = calloc(n ? n : 1, 1);
	out = malloc((n > b->syncs.n ? n : b->syncs.n) * sizeof(*out) + sizeof(*out));
	if (!sel || !out) {
		rc = nomem(b, err);
		goto out;
	}
	if (o && o->step_nvtx) {
		regex_t re;
		if (regcomp(&re, o->step_nvtx, REG_EXTENDED | REG_NOSUB)) {
			rc = ts_err_at(err, TS_EUSAGE, NULL, -1, -1, "--step-nvtx: invalid regular expression '%s'",
				       o->step_nvtx);
			goto out;
		}
		/* the outermost matching ranges of each thread */
		for (size_t i = 0; i < n; i++)
			sel[i] = regexec(&re, ts_trace_str(b->t, v[i].name), 0, NULL, 0) == 0;
		regfree(&re);
		for (size_t i = 0; i < n; i++) {
			if (!sel[i])
				continue;
			for (size_t j = i + 1; j < n && v[j].tid == v[i].tid && v[j].s < v[i].e; j++)
				if (v[j].e <= v[i].e)
					sel[j] = 0;
		}
		k = pick_thread(v, n, sel, out);
		info->steps_from = TS_NSYS_STEPS_REGEX;
		snprintf(info->step_marker, sizeof(info->step_marker), "%s", o->step_nvtx);
	} else if (!o || !o->no_auto_steps) {
		/* a top-level range name repeating >= 3 times on one thread,
		 * median >= 1 ms, covering >= half of its first-to-last span */
		uint32_t best_key = TS_NO_ID;
		int64_t best_tid = 0;
		size_t best_cnt = 0;
		if ((rc = range_keys(b, &keys, err)))
			goto out;
		for (size_t i = 0; i < n; i++) {
			size_t cnt = 0;
			int64_t sum = 0, lo = INT64_MAX, hi = INT64_MIN;
			int64_t *d;
			int dup = 0;
			if (!v[i].top)
				continue;
			for (size_t j = 0; j < i && !dup; j++)
				dup = v[j].top && v[j].tid == v[i].tid && v[j].key == v[i].key;
			if (dup)
				continue;
			for (size_t j = i; j < n && v[j].tid == v[i].tid; j++)
				if (v[j].top && v[j].key == v[i].key)
					cnt++;
			if (cnt < 3 || cnt <= best_cnt)
				continue;
			d = malloc(cnt * sizeof(*d));
			if (!d) {
				rc = nomem(b, err);
				goto out;
			}
			cnt = 0;
			for (size_t j = i; j < n && v[j].tid == v[i].tid; j++)
				if (v[j].top && v[j].key == v[i].key) {
					d[cnt++] = v[j].e - v[j].s;
					sum += v[j].e - v[j].s;
					lo = v[j].s < lo ? v[j].s : lo;
					hi = v[j].e > hi ? v[j].e : hi;
				}
			ts_sort(d, cnt, sizeof(*d), cmp_i64v);
			/* sum >= half the span, rounded up (2 x sum overflowed) */
			if (d[cnt / 2] >= 1000000 && sum >= (hi - lo) - (hi - lo) / 2) {
				best_key = v[i].key;
				best_tid = v[i].tid;
				best_cnt = cnt;
			}
			free(d);
		}
		if (best_cnt) {
			for (size_t i = 0; i < n; i++)
				sel[i] = v[i].top && v[i].tid == best_tid && v[i].key == best_key;
			k = pick_thread(v, n, sel, out);
			info->steps_from = TS_NSYS_STEPS_NVTX;
			snprintf(info->step_marker, sizeof(info->step_marker), "%s", ts_intern_str(&keys, best_key));
		} else if (b->syncs.n >= 4) {
			/* a regular synchronise cadence on one thread: intervals
			 * between consecutive sync ends within 25 % of their median */
			struct range *s = b->syncs.v;
			size_t m = b->syncs.n, bi = 0, bc = 0;
			ts_sort(s, m, sizeof(*s), cmp_range);
			for (size_t i = 0; i < m;) {
				size_t j = i;
				while (j < m && s[j].tid == s[i].tid)
					j++;
				if (j - i > bc) {
					bc = j - i;
					bi = i;
				}
				i = j;
			}
			if (bc >= 4) {
				int64_t *d = malloc(bc * sizeof(*d)), med;
				int regular;
				if (!d) {
					rc = nomem(b, err);
					goto out;
				}
				for (size_t i = 0; i + 1 < bc; i++)
					d[i] = s[bi + i + 1].e - s[bi + i].e;
				ts_sort(d, bc - 1, sizeof(*d), cmp_i64v);
				/* a median >= 1 ms first: then dv, |dv| stay in int64
				 * (ends within 2^61), and |dv| > med / 4 is 4 |dv| > med */
				med = d[(bc - 1) / 2];
				regular = med >= 1000000;
				for (size_t i = 0; regular && i + 1 < bc; i++) {
					int64_t dv = s[bi + i + 1].e - s[bi + i].e - med;
					if ((dv < 0 ? -dv : dv) > med / 4)
						regular = 0;
				}
				if (regular) {
					for (size_t i = 0; i + 1 < bc; i++)
						out[k++] = (struct range){ s[bi + i].e, s[bi + i + 1].e, s[bi + i].tid,
									   s[bi + i].name, 0, 1 };
					info->steps_from = TS_NSYS_STEPS_SYNC;
					snprintf(info->step_marker, sizeof(info->step_marker), "%s",
						 ts_trace_str(b->t, s[bi].name));
				}
				free(d);
			}
		}
	}
	if (k)
		rc = add_steps(b, out, k, err);
	info->regex_unmatched = o && o->step_nvtx && !k;
	info->steps = (int64_t)k;
	if (!k)
		info->steps_from = TS_NSYS_STEPS_NONE;
out:
	ts_intern_release(&keys);
	free(sel);
	free(out);
	return rc;
}

struct launch_at {
	int64_t corr, tid, s;
};

static int cmp_launch_at(const void *a, const void *b)
{
	const struct launch_at *x = a, *y = b;
	return (x->corr > y->corr) - (x->corr < y->corr);
}

static int launch_corr_below(const void *elem, const void *c)
{
	return ((const struct launch_at *)elem)->corr < *(const int64_t *)c;
}

/* Range elem is of a lower thread than launch key's, or of its thread and
 * starts at or before it. */
static int range_not_after(const void *elem, const void *key)
{
	const struct range *r = elem;
	const struct launch_at *l = key;
	return r->tid < l->tid || (r->tid == l->tid && r->s <= l->s);
}

/* Kernels launched inside an NCCL NVTX range of the launching thread. */
static int nccl_projection(struct rb *b, struct ts_nsys_rank_info *info, struct ts_err *err)
{
	struct ts_trace *t = b->t;
	TS_VEC(struct range) nr = { 0 };
	TS_VEC(struct launch_at) la = { 0 };
	int rc = 0;

	for (size_t i = 0; i < b->nvtx.n; i++)
		if (ns_is_nccl_range(ts_trace_str(t, b->nvtx.v[i].name)) && TS_VEC_PUSH(nr, b->nvtx.v[i])) {
			rc = nomem(b, err);
			goto out;
		}
	if (!nr.n)
		goto out;
	/* per thread, the union of its NCCL ranges: sorted, disjoint */
	for (size_t i = 0; i < nr.n; i++)
		nr.v[i].tid &= 0xFFFFFFFFFFFF;   /* pid and tid bits, as the launch events carry them */
	ts_sort(nr.v, nr.n, sizeof(*nr.v), cmp_range);
	{
		size_t m = 0;
		for (size_t i = 0; i < nr.n; i++) {
			if (m && nr.v[m - 1].tid == nr.v[i].tid && nr.v[i].s <= nr.v[m - 1].e) {
				if (nr.v[i].e > nr.v[m - 1].e)
					nr.v[m - 1].e = nr.v[i].e;
			} else {
				nr.v[m++] = nr.v[i];
			}
		}
		nr.n = m;
	}
	for (size_t i = 0; i < t->ev.n; i++)
		if ((t->ev.cat[i] == TS_CAT_RUNTIME || t->ev.cat[i] == TS_CAT_DRIVER) &&
		    ts_ev_corr(&t->ev, i) != TS_NONE) {
			struct launch_at l = { ts_ev_corr(&t->ev, i),
					       ts_ev_pid(&t->ev, i) << 24 | ts_ev_tid(&t->ev, i), ts_ev_ts(&t->ev, i) };
			if (TS_VEC_PUSH(la, l)) {
				rc = nomem(b, err);
				goto out;
			}
		}
	ts_sort(la.v, la.n, sizeof(*la.v), cmp_launch_at);
	for (size_t i = 0; i < t->ev.n; i++) {
		size_t lo;
		int64_t c = ts_ev_corr(&t->ev, i);
		const struct launch_at *l;
		int inside = 0;
		if (t->ev.cat[i] != TS_CAT_KERNEL || c == TS_NONE)
			continue;
		lo = ts_lower_bound(la.v, la.n, sizeof(*la.v), &c, launch_corr_below);
		if (lo == la.n || la.v[lo].corr != c)
			continue;
		l = &la.v[lo];
		/* the last merged range of the thread starting at or before l->s */
		lo = ts_lower_bound(nr.v, nr.n, sizeof(*nr.v), l, range_not_after);
		inside = lo > 0 && nr.v[lo - 1].tid == l->tid && l->s < nr.v[lo - 1].e;
		if (!inside)
			continue;
		info->nccl_nvtx_kernels++;
		if (ts_kclass_of(ts_trace_str(t, t->ev.name[i]),
				 t->ev.name[i] < t->strings.count ? ts_intern_len(&t->strings, t->ev.name[i]) : 0, 0,
				 0) == TS_KC_COMM)
			info->nccl_nvtx_kernels_named++;
	}
out:
	TS_VEC_RELEASE(nr);
	TS_VEC_RELEASE(la);
	return rc;
}

int ts_nsys_meta(const struct ts_nsys *x, int32_t device, struct ts_trace *t, struct ts_err *err)
{
	struct ts_trace_meta *m = &t->meta;
	char prof[96];
	int64_t id;

	m->vendor = TS_VENDOR_CUDA;
	m->nsys = 1;
	m->base_ns = 0;
	m->has_base = 0;
	m->bytes = 0;
	m->devices = ts_arena_alloc(&t->arena, sizeof(*m->devices));
	if (!m->devices)
		goto nomem;
	memset(m->devices, 0, sizeof(*m->devices));
	m->devices[0].id = device;
	m->devices[0].name = TS_NO_ID;
	m->devices[0].total_mem_bytes = -1;
	m->devices[0].num_sms = -1;
	m->ndevices = 1;
	/* the context a diff compares: which profiler wrote it, which driver ran */
	snprintf(prof, sizeof(prof), "Nsight Systems %s", x->product);
	if (x->product[0]) {
		if ((id = ts_intern(&t->strings, prof, strlen(prof))) < 0)
			goto nomem;
		m->profiler_version = (uint32_t)id;
	}
	if (x->cuda_driver[0]) {
		if ((id = ts_intern(&t->strings, x->cuda_driver, strlen(x->cuda_driver))) < 0)
			goto nomem;
		m->driver_version = (uint32_t)id;
	}
	for (size_t i = 0; i < x->gpus.n; i++)
		if (x->gpus.v[i].id == device) {
			if ((id = ts_intern(&t->strings, x->gpus.v[i].name, strlen(x->gpus.v[i].name))) < 0)
				goto nomem;
			m->devices[0].name = (uint32_t)id;
			m->devices[0].num_sms = x->gpus.v[i].sms;
		}
	return 0;
nomem:
	return ts_err_at(err, TS_ENOMEM, x->path, -1, -1, "out of memory");
}

int ts_nsys_read_rank(struct ts_nsys *x, size_t k, const struct ts_nsys_read_opts *o,
		      struct ts_trace *t, struct ts_nsys_rank_info *info, struct ts_err *err)
{
	struct rb b;
	const struct ts_nsys_rank *r;
	int rc = 0;
	struct ts_nsys_rank_info dummy;

	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	if (!x->surveyed)
		return ts_err_at(err, TS_EUSAGE, x->path, -1, -1, "ts_nsys_survey() must run before reading ranks");
	if (k >= x->ranks.n)
		return ts_err_at(err, TS_EUSAGE, x->path, -1, -1, "rank %zu out of range (%zu ranks)", k,
				 x->ranks.n);
	r = &x->ranks.v[k];
	memset(&b, 0, sizeof(b));
	b.x = x;
	b.t = t;
	b.nmap = x->strings.count;
	b.map = malloc((b.nmap ? b.nmap : 1) * sizeof(*b.map));
	if (!b.map)
		return nomem(&b, err);
	for (size_t i = 0; i < b.nmap; i++)
		b.map[i] = TS_NO_ID;
	snprintf(t->path, sizeof(t->path), "%s", x->path);
	if ((rc = read_gpu(&b, TS_NT_KERNEL, r, err)) || (rc = read_gpu(&b, TS_NT_MEMCPY, r, err)) ||
	    (rc = read_gpu(&b, TS_NT_MEMSET, r, err)) || (rc = read_gpu(&b, TS_NT_SYNC, r, err)) ||
	    (rc = read_cpu(&b, TS_NT_RUNTIME, r, err)) || (rc = read_cpu(&b, TS_NT_NVTX, r, err)) ||
	    (rc = nccl_projection(&b, info, err)) || (rc = find_steps(&b, o, info, err)))
		goto out;
	if ((rc = ts_nsys_meta(x, r->device, t, err)))
		goto out;
	t->meta.rank = (int64_t)k;
	t->meta.rank_source = 3;
	t->meta.world_size = (int64_t)x->ranks.n;
	info->events = b.events;
out:
	free(b.map);
	TS_VEC_RELEASE(b.nvtx);
	TS_VEC_RELEASE(b.syncs);
	return rc;
}

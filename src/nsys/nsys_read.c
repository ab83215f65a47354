/*
 * nsys_read.c - Nsight Systems SQLite exports into the columnar trace model.
 *
 * Exports differ by version (schema 3.1 to 3.25 so far) and by what was
 * captured: tables are created lazily and columns come and go, so every
 * table and column is probed and every query is built from what exists;
 * a missing column reads as NULL. Rows with a NULL start or end are
 * counted and skipped (newer exports write NULL, older ones defaults).
 * Names are StringIds ids (or inline text in NVTX), loaded once into a
 * local intern table and translated per rank.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include "trainscope/jsonw.h"
#include "trainscope/nsys.h"
#include "trainscope/taxonomy.h"
#include "nsys_int.h"

static const char *const tab_names[TS_NT_COUNT] = {
	[TS_NT_KERNEL] = "CUPTI_ACTIVITY_KIND_KERNEL",
	[TS_NT_MEMCPY] = "CUPTI_ACTIVITY_KIND_MEMCPY",
	[TS_NT_MEMSET] = "CUPTI_ACTIVITY_KIND_MEMSET",
	[TS_NT_RUNTIME] = "CUPTI_ACTIVITY_KIND_RUNTIME",
	[TS_NT_SYNC] = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
	[TS_NT_NVTX] = "NVTX_EVENTS",
	[TS_NT_STRINGS] = "StringIds",
	[TS_NT_PROCESSES] = "PROCESSES",
	[TS_NT_GPU] = "TARGET_INFO_GPU",
	[TS_NT_ENUM_MEMCPY] = "ENUM_CUDA_MEMCPY_OPER",
	[TS_NT_ENUM_SYNC] = "ENUM_CUPTI_SYNC_TYPE",
	[TS_NT_META] = "META_DATA_EXPORT",
	[TS_NT_META_OLD] = "EXPORT_META_DATA",
	[TS_NT_PAYLOAD] = "NVTX_PAYLOAD_SCHEMAS",
	[TS_NT_SESSION] = "TARGET_INFO_SESSION_START_TIME",
	[TS_NT_SYSENV] = "TARGET_INFO_SYSTEM_ENV",
	[TS_NT_CUDA_DEVICE] = "TARGET_INFO_CUDA_DEVICE",
};

/* Columns the reader uses, per table; bit i of cols[t] = column i exists. */
static const char *const col_names[TS_NT_COUNT][NS_MAXCOL] = {
	[TS_NT_KERNEL] = { "start", "end", "deviceId", "streamId", "correlationId", "globalPid",
			   "demangledName", "shortName" },
	[TS_NT_MEMCPY] = { "start", "end", "deviceId", "streamId", "correlationId", "globalPid",
			   "bytes", "copyKind", "srcKind", "dstKind" },
	[TS_NT_MEMSET] = { "start", "end", "deviceId", "streamId", "correlationId", "globalPid",
			   "bytes", "memKind" },
	[TS_NT_RUNTIME] = { "start", "end", "eventClass", "globalTid", "correlationId", "nameId" },
	[TS_NT_SYNC] = { "start", "end", "deviceId", "streamId", "correlationId", "globalPid",
			 "syncType" },
	[TS_NT_NVTX] = { "start", "end", "eventType", "text", "textId", "globalTid", "domainId",
			 "binaryData" },
	[TS_NT_STRINGS] = { "id", "value" },
	[TS_NT_PROCESSES] = { "globalPid", "pid", "name" },
	[TS_NT_GPU] = { "id", "name", "cuDevice", "smCount" },
	[TS_NT_ENUM_MEMCPY] = { "id", "label" },
	[TS_NT_ENUM_SYNC] = { "id", "label" },
	[TS_NT_META] = { "name", "value" },
	[TS_NT_META_OLD] = { "name", "value" },
	[TS_NT_PAYLOAD] = { "domainId" },
	[TS_NT_SESSION] = { "utcEpochNs" },
	[TS_NT_SYSENV] = { "name", "value" },
	[TS_NT_CUDA_DEVICE] = { "cudaId", "numMultiprocessors" },
};

/* Labels from the reference numbering (ENUM_CUDA_MEMCPY_OPER,
 * ENUM_CUPTI_SYNC_TYPE), used when the export lacks the enum table. */
static const char *const memcpy_labels[14] = {
	"Unknown", "Host-to-Device", "Device-to-Host", "Host-to-Array", "Array-to-Host",
	"Array-to-Array", "Array-to-Device", "Device-to-Array", "Device-to-Device",
	"Host-to-Host", "Peer-to-Peer", "Unified Host-to-Device", "Unified Device-to-Host",
	"Unified Device-to-Device"
};
/* Kineto-style short kinds, so the trace model names copies as Kineto does. */
static const char *const memcpy_short[14] = {
	"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH",
	"PtoP", "HtoD", "DtoH", "DtoD"
};
static const char *const mem_kinds[8] = {
	"Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static",
	"Unknown"
};
static const char *const sync_labels[5] = {
	"Unknown", "Event sync", "Stream wait sync", "Stream sync", "Context sync"
};

const char *ts_nsys_table_name(enum ts_nsys_tab t)
{
	return (unsigned)t < TS_NT_COUNT ? tab_names[t] : "";
}

const char *ts_nsys_steps_name(enum ts_nsys_steps s)
{
	switch (s) {
	case TS_NSYS_STEPS_REGEX: return "--step-nvtx";
	case TS_NSYS_STEPS_NVTX: return "nvtx";
	case TS_NSYS_STEPS_SYNC: return "sync";
	case TS_NSYS_STEPS_PROFILER: return "profiler_step";
	case TS_NSYS_STEPS_NONE: break;
	}
	return "none";
}

size_t ts_nsys_api_len(const char *name, size_t n)
{
	size_t i = n;

	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	if (i == n || i < 3 || name[i - 1] != 'v' || name[i - 2] != '_')
		return n;
	return i - 2;
}

void ts_nsys_init(struct ts_nsys *x)
{
	memset(x, 0, sizeof(*x));
	ts_intern_init(&x->strings);
	x->window_lo_ns = x->window_hi_ns = -1;
	for (int t = 0; t < TS_NT_COUNT; t++)
		x->rows[t] = -1;
}

void ts_nsys_close(struct ts_nsys *x)
{
	if (x->db)
		sqlite3_close((sqlite3 *)x->db);
	x->db = NULL;
	TS_VEC_RELEASE(x->ranks);
	TS_VEC_RELEASE(x->gpus);
	free(x->sid);
	free(x->sloc);
	free(x->sdense);
	x->sdense = NULL;
	x->ndense = 0;
	x->sid = NULL;
	x->sloc = NULL;
	x->nsid = 0;
	ts_intern_release(&x->strings);
}

/* ------------------------------------------------------------ queries */

int ns_sql_fail(struct ts_nsys *x, struct ts_err *err, const char *what)
{
	sqlite3 *db = x->db;
	int code = db ? sqlite3_errcode(db) : SQLITE_ERROR;

	if (code == SQLITE_NOMEM)
		return ts_err_at(err, TS_ENOMEM, x->path, -1, -1, "out of memory reading %s", what);
	if (code == SQLITE_IOERR || code == SQLITE_CANTOPEN)
		return ts_err_at(err, TS_EIO, x->path, -1, -1, "cannot read %s: %s", what,
				 db ? sqlite3_errmsg(db) : "sqlite error");
	return ts_err_at(err, TS_EPARSE, x->path, -1, -1, "%s: %s (a corrupt or truncated export?)",
			 what, db ? sqlite3_errmsg(db) : "sqlite error");
}

int ns_has(const struct ts_nsys *x, enum ts_nsys_tab t)
{
	return (x->present >> t) & 1u;
}

int ns_col(const struct ts_nsys *x, enum ts_nsys_tab t, int c)
{
	return ns_has(x, t) && ((x->cols[t] >> c) & 1u);
}

/* "col" or "NULL" for a column the table lacks. */
const char *ns_c(const struct ts_nsys *x, enum ts_nsys_tab t, int c)
{
	return ns_col(x, t, c) ? col_names[t][c] : "NULL";
}

int ns_prepare(struct ts_nsys *x, sqlite3_stmt **st, const char *sql, const char *what,
	       struct ts_err *err)
{
	*st = NULL;
	if (sqlite3_prepare_v2((sqlite3 *)x->db, sql, -1, st, NULL) != SQLITE_OK)
		return ns_sql_fail(x, err, what);
	return 0;
}

/* Step; 1 row, 0 done, negative error (statement finalised by the caller). */
int ns_step(struct ts_nsys *x, sqlite3_stmt *st, const char *what, struct ts_err *err)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return ns_sql_fail(x, err, what);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Local intern id of a StringIds id, TS_NO_ID when unknown. */
uint32_t ns_sid(const struct ts_nsys *x, int64_t id)
{
	size_t lo;

	if (x->sdense)
		return id >= 0 && (uint64_t)id < x->ndense ? x->sdense[id] : TS_NO_ID;

	lo = ts_lower_bound(x->sid, x->nsid, sizeof(*x->sid), &id, ts_i64_below);
	return lo < x->nsid && x->sid[lo] == id ? x->sloc[lo] : TS_NO_ID;
}

/* Local string of column c: a StringIds reference, or inline text. */
uint32_t ns_str_col(struct ts_nsys *x, sqlite3_stmt *st, int c)
{
	int ty = sqlite3_column_type(st, c);

	if (ty == SQLITE_INTEGER)
		return ns_sid(x, sqlite3_column_int64(st, c));
	if (ty == SQLITE_TEXT) {
		const char *s = (const char *)sqlite3_column_text(st, c);
		int n = sqlite3_column_bytes(st, c);
		int64_t id = ts_intern(&x->strings, s ? s : "", s ? (size_t)n : 0);
		return id < 0 ? TS_NO_ID : (uint32_t)id;
	}
	return TS_NO_ID;
}

uint32_t ns_nvtx_text(struct ts_nsys *x, sqlite3_stmt *st, int text, int text_id)
{
	/* an empty inline text is no text: an export that writes a default
	 * for a missing value names the range through textId */
	if (sqlite3_column_type(st, text) != SQLITE_NULL &&
	    (sqlite3_column_bytes(st, text) > 0 || sqlite3_column_type(st, text_id) == SQLITE_NULL))
		return ns_str_col(x, st, text);
	return ns_str_col(x, st, text_id);
}

/* ------------------------------------------------------------ probing */

/* The header of the file: its page size, and whether it says how many
 * pages the file holds (*sized; legacy writers leave the count 0 or stale,
 * with the change counter past the version-valid-for number). A file
 * shorter than a page count it states, or not a whole number of pages, is
 * refused here; one cut at a page boundary with no valid count is found by
 * probe_complete once the database is open. */
static int probe_header(struct ts_nsys *x, uint32_t *page_size, int64_t *size, int *sized,
			struct ts_err *err)
{
	unsigned char h[100];
	struct stat sb;
	FILE *f = fopen(x->path, "rb");
	size_t got;
	uint32_t page, pages, change, valid;

	if (!f)
		return ts_err_at(err, TS_EIO, x->path, -1, -1, "cannot open: %s", strerror(errno));
	got = fread(h, 1, sizeof(h), f);
	if (fstat(fileno(f), &sb) != 0) {
		fclose(f);
		return ts_err_at(err, TS_EIO, x->path, -1, -1, "cannot stat: %s", strerror(errno));
	}
	fclose(f);
	if (got < 16 || memcmp(h, "SQLite format 3", 16) != 0)
		return ts_err_at(err, TS_EPARSE, x->path, 0, -1,
				 "not an SQLite database (an Nsight Systems export starts with \"SQLite format 3\")");
	if (got < sizeof(h))
		return ts_err_at(err, TS_EPARSE, x->path, (int64_t)got, -1,
				 "truncated SQLite file: %zu bytes, shorter than the 100-byte header", got);
	page = (uint32_t)h[16] << 8 | h[17];
	if (page == 1)
		page = 65536;
	pages = (uint32_t)h[28] << 24 | (uint32_t)h[29] << 16 | (uint32_t)h[30] << 8 | h[31];
	change = (uint32_t)h[24] << 24 | (uint32_t)h[25] << 16 | (uint32_t)h[26] << 8 | h[27];
	valid = (uint32_t)h[92] << 24 | (uint32_t)h[93] << 16 | (uint32_t)h[94] << 8 | h[95];
	if (page < 512 || (page & (page - 1)))
		return ts_err_at(err, TS_EPARSE, x->path, 16, -1, "corrupt SQLite header: page size %u", page);
	if (pages && change == valid && (uint64_t)sb.st_size < (uint64_t)page * pages)
		return ts_err_at(err, TS_EPARSE, x->path, (int64_t)sb.st_size, -1,
				 "truncated export: %lld bytes, the header says %llu (%u pages of %u bytes)",
				 (long long)sb.st_size, (unsigned long long)page * pages, pages, page);
	if ((uint64_t)sb.st_size % page)
		return ts_err_at(err, TS_EPARSE, x->path, (int64_t)sb.st_size, -1,
				 "truncated export: %lld bytes is not a whole number of %u-byte pages",
				 (long long)sb.st_size, page);
	*page_size = page;
	*size = (int64_t)sb.st_size;
	*sized = pages && change == valid;
	return 0;
}

/*
 * A file whose header states no valid page count can be cut at a page
 * boundary and still open: SQLite takes its size as the page count, and
 * only the queries that reach a missing page fail, so one report reads
 * what another is refused. Walking every b-tree once (quick_check, which
 * stops at the first fault) finds a tree that points past the end, before
 * any analysis reads a table.
 */
static int probe_complete(struct ts_nsys *x, uint32_t page, int64_t size, struct ts_err *err)
{
	sqlite3_stmt *st;
	const char *why, *nl;
	int rc;

	if ((rc = ns_prepare(x, &st, "PRAGMA quick_check(1)", "the file", err)))
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_NOMEM) {
		rc = ts_err_at(err, TS_ENOMEM, x->path, -1, -1, "out of memory");
		goto out;
	}
	/* a row "ok", or "*** in database main ***\nOn tree page 57 cell 0:
	 * invalid page number 653"; SQLITE_CORRUPT when the schema itself is cut */
	why = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : sqlite3_errmsg(x->db);
	if (rc == SQLITE_ROW && why && !strcmp(why, "ok")) {
		rc = 0;
		goto out;
	}
	nl = why ? strrchr(why, '\n') : NULL;
	rc = ts_err_at(err, TS_EPARSE, x->path, size, -1,
		       "truncated or corrupt export: %lld bytes (%lld pages of %u bytes), its header"
		       " states no valid page count, and its tables do not read whole (%.160s)",
		       (long long)size, (long long)(size / page), page, nl ? nl + 1 : why ? why : "?");
out:
	sqlite3_finalize(st);
	return rc;
}

static int probe_tables(struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = ns_prepare(x, &st, "SELECT name FROM sqlite_master WHERE type IN ('table','view')",
			     "sqlite_master", err)))
		return rc;
	while ((rc = ns_step(x, st, "sqlite_master", err)) == 1) {
		const char *n = (const char *)sqlite3_column_text(st, 0);
		for (int t = 0; n && t < TS_NT_COUNT; t++)
			if (strcmp(n, tab_names[t]) == 0)
				x->present |= 1u << t;
	}
	sqlite3_finalize(st);
	if (rc < 0)
		return rc;
	for (int t = 0; t < TS_NT_COUNT; t++) {
		char sql[128];
		if (!ns_has(x, t))
			continue;
		snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", tab_names[t]);
		if ((rc = ns_prepare(x, &st, sql, tab_names[t], err)))
			return rc;
		while ((rc = ns_step(x, st, tab_names[t], err)) == 1) {
			const char *c = (const char *)sqlite3_column_text(st, 1);
			for (int i = 0; c && i < NS_MAXCOL && col_names[t][i]; i++)
				if (strcmp(c, col_names[t][i]) == 0)
					x->cols[t] |= 1u << i;
		}
		sqlite3_finalize(st);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int load_strings(struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;
	int64_t *ids = NULL;
	uint32_t *loc = NULL;
	int sorted = 1;

	if (!ns_col(x, TS_NT_STRINGS, 0) || !ns_col(x, TS_NT_STRINGS, 1))
		return 0;
	if ((rc = ns_prepare(x, &st, "SELECT id, value FROM StringIds", "StringIds", err)))
		return rc;
	while ((rc = ns_step(x, st, "StringIds", err)) == 1) {
		const char *s = (const char *)sqlite3_column_text(st, 1);
		int n = sqlite3_column_bytes(st, 1);
		int64_t id;
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
			continue;
		if (x->nsid == cap) {
			size_t c2 = cap ? cap * 2 : 256;
			int64_t *a = realloc(ids, c2 * sizeof(*a));
			uint32_t *b = a ? realloc(loc, c2 * sizeof(*b)) : NULL;
			if (a)
				ids = a;
			if (!a || !b) {
				rc = ts_err_at(err, TS_ENOMEM, x->path, -1, -1, "out of memory reading StringIds");
				break;
			}
			loc = b;
			cap = c2;
		}
		id = ts_intern(&x->strings, s ? s : "", s ? (size_t)n : 0);
		if (id < 0) {
			rc = ts_err_at(err, TS_ENOMEM, x->path, -1, -1, "out of memory reading StringIds");
			break;
		}
		ids[x->nsid] = sqlite3_column_int64(st, 0);
		loc[x->nsid] = (uint32_t)id;
		if (x->nsid && ids[x->nsid] <= ids[x->nsid - 1])
			sorted = 0;
		x->nsid++;
	}
	sqlite3_finalize(st);
	x->sid = ids;
	x->sloc = loc;
	if (rc < 0)
		return rc;
	if (!sorted) {
		/* sort (id, loc) pairs together through an index array */
		int64_t *pair = malloc(x->nsid * 2 * sizeof(*pair));
		if (!pair)
			return ts_err_at(err, TS_ENOMEM, x->path, -1, -1, "out of memory reading StringIds");
		for (size_t i = 0; i < x->nsid; i++) {
			pair[2 * i] = ids[i];
			pair[2 * i + 1] = loc[i];
		}
		ts_sort(pair, x->nsid, 2 * sizeof(*pair), cmp_i64);
		for (size_t i = 0; i < x->nsid; i++) {
			ids[i] = pair[2 * i];
			loc[i] = (uint32_t)pair[2 * i + 1];
		}
		free(pair);
	}
	/* ids are usually dense from 0 or 1: index them directly */
	if (x->nsid && ids[0] >= 0 && (uint64_t)ids[x->nsid - 1] < 4 * (uint64_t)x->nsid + 1024) {
		x->ndense = (size_t)ids[x->nsid - 1] + 1;
		x->sdense = malloc(x->ndense * sizeof(*x->sdense));
		if (x->sdense) {
			for (size_t i = 0; i < x->ndense; i++)
				x->sdense[i] = TS_NO_ID;
			for (size_t i = 0; i < x->nsid; i++)
				x->sdense[ids[i]] = loc[i];
		}
	}
	return 0;
}

static void copy_label(char *dst, size_t n, const unsigned char *s)
{
	snprintf(dst, n, "%s", s ? (const char *)s : "");
}

static int load_enums(struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	int rc;

	for (int i = 0; i < 14; i++)
		snprintf(x->memcpy_label[i], sizeof(x->memcpy_label[i]), "%s", memcpy_labels[i]);
	for (int i = 0; i < 5; i++)
		snprintf(x->sync_label[i], sizeof(x->sync_label[i]), "%s", sync_labels[i]);
	if (ns_col(x, TS_NT_ENUM_MEMCPY, 0) && ns_col(x, TS_NT_ENUM_MEMCPY, 1)) {
		if ((rc = ns_prepare(x, &st, "SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER",
				     "ENUM_CUDA_MEMCPY_OPER", err)))
			return rc;
		while ((rc = ns_step(x, st, "ENUM_CUDA_MEMCPY_OPER", err)) == 1) {
			int64_t id = sqlite3_column_int64(st, 0);
			if (id >= 0 && id < 16)
				copy_label(x->memcpy_label[id], sizeof(x->memcpy_label[id]),
					   sqlite3_column_text(st, 1));
		}
		sqlite3_finalize(st);
		if (rc < 0)
			return rc;
	}
	if (ns_col(x, TS_NT_ENUM_SYNC, 0) && ns_col(x, TS_NT_ENUM_SYNC, 1)) {
		if ((rc = ns_prepare(x, &st, "SELECT id, label FROM ENUM_CUPTI_SYNC_TYPE",
				     "ENUM_CUPTI_SYNC_TYPE", err)))
			return rc;
		while ((rc = ns_step(x, st, "ENUM_CUPTI_SYNC_TYPE", err)) == 1) {
			int64_t id = sqlite3_column_int64(st, 0);
			if (id >= 0 && id < 8)
				copy_label(x->sync_label[id], sizeof(x->sync_label[id]),
					   sqlite3_column_text(st, 1));
		}
		sqlite3_finalize(st);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int load_meta(struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	int rc;
	enum ts_nsys_tab t = ns_has(x, TS_NT_META) ? TS_NT_META : TS_NT_META_OLD;
	char sql[96];

	if (!ns_col(x, t, 0) || !ns_col(x, t, 1))
		return 0;
	snprintf(sql, sizeof(sql), "SELECT name, value FROM %s", tab_names[t]);
	if ((rc = ns_prepare(x, &st, sql, tab_names[t], err)))
		return rc;
	while ((rc = ns_step(x, st, tab_names[t], err)) == 1) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);
		if (!k || !v)
			continue;
		if (strcmp(k, "EXPORT_SCHEMA_VERSION") == 0)
			snprintf(x->schema, sizeof(x->schema), "%s", v);
		else if (strcmp(k, "EXPORT_PRODUCT_VERSION") == 0)
			snprintf(x->product, sizeof(x->product), "%s", v);
		else if (strcmp(k, "EXPORT_PARAM_INCLUDE_BLOBS") == 0)
			x->caps.blobs_excluded = strcmp(v, "false") == 0;
		else if (strcmp(k, "DERIVED_WINDOW_NS") == 0) {
			long long a, b;
			if (sscanf(v, "%lld-%lld", &a, &b) == 2 && a >= 0 && b >= a) {
				x->window_lo_ns = a;
				x->window_hi_ns = b;
			}
		}
	}
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

/* The CUDA driver version the target reported (TARGET_INFO_SYSTEM_ENV). */
static int load_sysenv(struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	int rc;

	if (!ns_col(x, TS_NT_SYSENV, 0) || !ns_col(x, TS_NT_SYSENV, 1))
		return 0;
	if ((rc = ns_prepare(x, &st,
			     "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'CudaDriverVersion'",
			     tab_names[TS_NT_SYSENV], err)))
		return rc;
	while ((rc = ns_step(x, st, tab_names[TS_NT_SYSENV], err)) == 1) {
		const unsigned char *v = sqlite3_column_text(st, 0);

		if (v && *v && !x->cuda_driver[0])
			copy_label(x->cuda_driver, sizeof(x->cuda_driver), v);
	}
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

static int load_gpus(struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	int rc;
	char sql[160];

	if (!ns_col(x, TS_NT_GPU, 1))
		return 0;
	snprintf(sql, sizeof(sql), "SELECT %s, %s, name, %s FROM TARGET_INFO_GPU",
		 ns_c(x, TS_NT_GPU, 2), ns_c(x, TS_NT_GPU, 0),
		 ns_col(x, TS_NT_GPU, 3) ? "smCount" : "NULL");
	if ((rc = ns_prepare(x, &st, sql, "TARGET_INFO_GPU", err)))
		return rc;
	while ((rc = ns_step(x, st, "TARGET_INFO_GPU", err)) == 1) {
		struct ts_nsys_gpu g;
		int c = sqlite3_column_type(st, 0) == SQLITE_INTEGER ? 0 : 1;
		const unsigned char *nm = sqlite3_column_text(st, 2);
		if (sqlite3_column_type(st, c) != SQLITE_INTEGER || !nm || !*nm)
			continue;
		int64_t sms = sqlite3_column_type(st, 3) == SQLITE_INTEGER ? sqlite3_column_int64(st, 3) : -1;
		g.id = (int32_t)sqlite3_column_int64(st, c);
		g.sms = sms > 0 && sms <= INT32_MAX ? (int32_t)sms : -1;
		copy_label(g.name, sizeof(g.name), nm);
		if (TS_VEC_PUSH(x->gpus, g)) {
			rc = ts_err_at(err, TS_ENOMEM, x->path, -1, -1, "out of memory");
			break;
		}
	}
	sqlite3_finalize(st);
	if (rc < 0)
		return rc;
	x->caps.gpu_name = x->gpus.n > 0;
	return 0;
}

/* Older exports list CUDA devices in TARGET_INFO_CUDA_DEVICE (one row per
 * device and process) with no name: the ids and SM counts, once each. */
static int load_cuda_devices(struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	int rc;
	char sql[160];

	x->caps.cuda_device_sms = -1;
	if (x->gpus.n || !ns_col(x, TS_NT_CUDA_DEVICE, 0))
		return 0;
	snprintf(sql, sizeof(sql), "SELECT DISTINCT cudaId, %s FROM TARGET_INFO_CUDA_DEVICE "
		 "ORDER BY cudaId", ns_col(x, TS_NT_CUDA_DEVICE, 1) ? "numMultiprocessors" : "NULL");
	if ((rc = ns_prepare(x, &st, sql, "TARGET_INFO_CUDA_DEVICE", err)))
		return rc;
	while ((rc = ns_step(x, st, "TARGET_INFO_CUDA_DEVICE", err)) == 1) {
		struct ts_nsys_gpu g;
		int64_t sms = sqlite3_column_type(st, 1) == SQLITE_INTEGER ? sqlite3_column_int64(st, 1) : -1;
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
			continue;
		g.id = (int32_t)sqlite3_column_int64(st, 0);
		if (x->gpus.n && x->gpus.v[x->gpus.n - 1].id == g.id)
			continue; /* one device seen with two SM counts: keep the first */
		g.name[0] = 0;
		g.sms = sms > 0 && sms <= INT32_MAX ? (int32_t)sms : -1;
		if (TS_VEC_PUSH(x->gpus, g)) {
			rc = ts_err_at(err, TS_ENOMEM, x->path, -1, -1, "out of memory");
			break;
		}
	}
	sqlite3_finalize(st);
	if (rc < 0)
		return rc;
	x->caps.cuda_devices = (int)x->gpus.n;
	for (size_t i = 0; i < x->gpus.n; i++)
		if (!i)
			x->caps.cuda_device_sms = x->gpus.v[0].sms;
		else if (x->gpus.v[i].sms != x->caps.cuda_device_sms)
			x->caps.cuda_device_sms = -1;
	return 0;
}

static int cmp_rank(const void *a, const void *b)
{
	const struct ts_nsys_rank *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->global_pid != y->global_pid)
		return x->global_pid < y->global_pid ? -1 : 1;
	return (x->device > y->device) - (x->device < y->device);
}

/* Ranks: distinct (globalPid, deviceId) over the GPU tables. */
int ts_nsys_count_unusable(struct ts_nsys *x, enum ts_nsys_tab t, struct ts_err *err)
{
	sqlite3_stmt *st;
	char sql[512];
	int rc;

	x->null_end[t] = 0;
	if (!ns_has(x, t) || !ns_col(x, t, NS_START) || !ns_col(x, t, NS_END))
		return 0;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE NOT (" NS_ROW_OK_SQL ")",
		 tab_names[t]);
	if ((rc = ns_prepare(x, &st, sql, tab_names[t], err)))
		return rc;
	rc = ns_step(x, st, tab_names[t], err);
	if (rc == 1)
		x->null_end[t] = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

int ts_nsys_count_unnamed(struct ts_nsys *x, enum ts_nsys_tab t, struct ts_err *err)
{
	sqlite3_stmt *st;
	char sql[640];
	int rc;
	const char *c;

	x->gaps.unnamed[t] = 0;
	if (!ns_col(x, TS_NT_STRINGS, 0) || !ns_col(x, t, NS_START) || !ns_col(x, t, NS_END))
		return 0;
	/* an id StringIds lacks, or no name at all; inline text is a name. A
	 * kernel is named by its demangled name, else its short one. */
#define NS_LOST(c) "(typeof(" c ") <> 'text' AND coalesce(" c " NOT IN (SELECT id FROM StringIds), 1))"
	if (t == TS_NT_RUNTIME) {
		c = ns_c(x, t, NS_RT_NAME);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE " NS_ROW_OK_SQL " AND " NS_LOST("%s"),
			 tab_names[t], c, c);
	} else if (t == TS_NT_KERNEL) {
		c = ns_c(x, t, NS_KNAME);
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM %s WHERE " NS_ROW_OK_SQL " AND " NS_LOST("%s") " AND " NS_LOST("%s"),
			 tab_names[t], c, c, ns_c(x, t, NS_KSHORT), ns_c(x, t, NS_KSHORT));
	} else if (t == TS_NT_NVTX) {
		/* the ranges nvtx_sum lists, named through textId */
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM NVTX_EVENTS WHERE start IS NOT NULL AND %s IN (59, 60, 70, 71)"
			 " AND coalesce(%s, '') = '' AND typeof(%s) = 'integer' AND %s NOT IN (SELECT id FROM StringIds)",
			 ns_c(x, t, NS_NV_TYPE), ns_c(x, t, NS_NV_TEXT), ns_c(x, t, NS_NV_TEXTID),
			 ns_c(x, t, NS_NV_TEXTID));
	} else {
		return 0;
	}
#undef NS_LOST
	if ((rc = ns_prepare(x, &st, sql, tab_names[t], err)))
		return rc;
	rc = ns_step(x, st, tab_names[t], err);
	if (rc == 1)
		x->gaps.unnamed[t] = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

static int load_ranks(struct ts_nsys *x, struct ts_err *err)
{
	static const enum ts_nsys_tab gt[3] = { TS_NT_KERNEL, TS_NT_MEMCPY, TS_NT_MEMSET };
	int rc;

	for (int g = 0; g < 3; g++) {
		enum ts_nsys_tab t = gt[g];
		sqlite3_stmt *st;
		char sql[512];
		if (!ns_has(x, t))
			continue;
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", tab_names[t]);
		if ((rc = ns_prepare(x, &st, sql, tab_names[t], err)))
			return rc;
		rc = ns_step(x, st, tab_names[t], err);
		if (rc == 1)
			x->rows[t] = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		if (rc < 0)
			return rc;
		if (!ns_col(x, t, NS_START) || !ns_col(x, t, NS_END))
			continue;
		snprintf(sql, sizeof(sql),
			 "SELECT %s, %s, count(*) FROM %s WHERE " NS_ROW_OK_SQL " GROUP BY 1, 2",
			 ns_c(x, t, NS_GPID), ns_c(x, t, NS_DEV), tab_names[t]);
		if ((rc = ns_prepare(x, &st, sql, tab_names[t], err)))
			return rc;
		while ((rc = ns_step(x, st, tab_names[t], err)) == 1) {
			int64_t gp = sqlite3_column_int64(st, 0);
			int32_t dev = (int32_t)sqlite3_column_int64(st, 1);
			int64_t cnt = sqlite3_column_int64(st, 2);
			size_t i;
			for (i = 0; i < x->ranks.n; i++)
				if (x->ranks.v[i].global_pid == gp && x->ranks.v[i].device == dev)
					break;
			if (i == x->ranks.n) {
				struct ts_nsys_rank r;
				memset(&r, 0, sizeof(r));
				r.global_pid = gp;
				r.pid = (gp >> 24) & 0xFFFFFF;
				r.device = dev;
				if (TS_VEC_PUSH(x->ranks, r)) {
					rc = ts_err_at(err, TS_ENOMEM, x->path, -1, -1, "out of memory");
					break;
				}
			}
			if (t == TS_NT_KERNEL)
				x->ranks.v[i].kernels += cnt;
			else if (t == TS_NT_MEMCPY)
				x->ranks.v[i].memcpys += cnt;
			else
				x->ranks.v[i].memsets += cnt;
		}
		sqlite3_finalize(st);
		if (rc < 0)
			return rc;
		if ((rc = ts_nsys_count_unusable(x, t, err)))
			return rc;
	}
	ts_sort(x->ranks.v, x->ranks.n, sizeof(*x->ranks.v), cmp_rank);
	if (ns_col(x, TS_NT_PROCESSES, 0) && ns_col(x, TS_NT_PROCESSES, 2)) {
		sqlite3_stmt *st;
		if ((rc = ns_prepare(x, &st, "SELECT globalPid, name FROM PROCESSES", "PROCESSES", err)))
			return rc;
		while ((rc = ns_step(x, st, "PROCESSES", err)) == 1) {
			int64_t gp = sqlite3_column_int64(st, 0);
			for (size_t i = 0; i < x->ranks.n; i++)
				if (x->ranks.v[i].global_pid == gp)
					copy_label(x->ranks.v[i].process, sizeof(x->ranks.v[i].process),
						   sqlite3_column_text(st, 1));
		}
		sqlite3_finalize(st);
		if (rc < 0)
			return rc;
	}
	return 0;
}

struct pc {
	int64_t gp, corr;
};

static int cmp_pc(const void *a, const void *b)
{
	const struct pc *x = a, *y = b;

	if (x->gp != y->gp)
		return x->gp < y->gp ? -1 : 1;
	return (x->corr > y->corr) - (x->corr < y->corr);
}

static int pc_below(const void *elem, const void *key)
{
	return cmp_pc(elem, key) < 0;
}

static int has_pc(const struct pc *v, size_t n, struct pc k)
{
	size_t lo = ts_lower_bound(v, n, sizeof(*v), &k, pc_below);

	return lo < n && cmp_pc(&v[lo], &k) == 0;
}

/* Kernel-to-launch joins: same correlationId in the same process only. */
static int load_joins(struct ts_nsys *x, struct ts_err *err)
{
	TS_VEC(struct pc) rt = { 0 };
	int64_t *corr = NULL;
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (!x->caps.launch_join)
		return 0;
	if ((rc = ns_prepare(x, &st, "SELECT globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"
				     " WHERE correlationId IS NOT NULL AND globalTid IS NOT NULL",
			     "CUPTI_ACTIVITY_KIND_RUNTIME", err)))
		return rc;
	while ((rc = ns_step(x, st, "CUPTI_ACTIVITY_KIND_RUNTIME", err)) == 1) {
		struct pc p = { sqlite3_column_int64(st, 0) & ~(int64_t)0xFFFFFF,
				sqlite3_column_int64(st, 1) };
		if (TS_VEC_PUSH(rt, p)) {
			rc = ts_err_at(err, TS_ENOMEM, x->path, -1, -1, "out of memory");
			goto out;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc < 0)
		goto out;
	ts_sort(rt.v, rt.n, sizeof(*rt.v), cmp_pc);
	corr = malloc((rt.n ? rt.n : 1) * sizeof(*corr));
	if (!corr) {
		rc = ts_err_at(err, TS_ENOMEM, x->path, -1, -1, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < rt.n; i++)
		corr[i] = rt.v[i].corr;
	ts_sort(corr, rt.n, sizeof(*corr), cmp_i64);
	if ((rc = ns_prepare(x, &st, "SELECT globalPid, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL"
				     " WHERE correlationId IS NOT NULL AND " NS_ROW_OK_SQL,
			     "CUPTI_ACTIVITY_KIND_KERNEL", err)))
		goto out;
	while ((rc = ns_step(x, st, "CUPTI_ACTIVITY_KIND_KERNEL", err)) == 1) {
		struct pc k = { sqlite3_column_int64(st, 0) & ~(int64_t)0xFFFFFF,
				sqlite3_column_int64(st, 1) };
		x->joins.kernels++;
		if (has_pc(rt.v, rt.n, k)) {
			x->joins.joined++;
		} else {
			size_t lo = ts_lower_bound(corr, rt.n, sizeof(*corr), &k.corr, ts_i64_below);
			x->joins.unjoined++;
			if (lo < rt.n && corr[lo] == k.corr)
				x->joins.cross_process++;
		}
	}
	if (rc > 0)
		rc = 0;
out:
	if (st)
		sqlite3_finalize(st);
	free(corr);
	TS_VEC_RELEASE(rt);
	return rc < 0 ? rc : 0;
}

/* What the tables and columns alone say. */
static void probe_cols(struct ts_nsys *x)
{
	struct ts_nsys_caps *c = &x->caps;

	c->kernels = ns_col(x, TS_NT_KERNEL, NS_START) && ns_col(x, TS_NT_KERNEL, NS_END) &&
		     ns_col(x, TS_NT_KERNEL, NS_DEV) &&
		     (ns_col(x, TS_NT_KERNEL, NS_KNAME) || ns_col(x, TS_NT_KERNEL, NS_KSHORT));
	c->memcpy = ns_col(x, TS_NT_MEMCPY, NS_START) && ns_col(x, TS_NT_MEMCPY, NS_END);
	c->memset = ns_col(x, TS_NT_MEMSET, NS_START) && ns_col(x, TS_NT_MEMSET, NS_END);
	c->runtime = ns_col(x, TS_NT_RUNTIME, 0) && ns_col(x, TS_NT_RUNTIME, 1);
	c->sync = ns_col(x, TS_NT_SYNC, 0) && ns_col(x, TS_NT_SYNC, 1);
	/* without eventType a range cannot be told from a mark */
	c->nvtx = ns_col(x, TS_NT_NVTX, 0) && ns_col(x, TS_NT_NVTX, NS_NV_TID) &&
		  ns_col(x, TS_NT_NVTX, NS_NV_TYPE);
	c->payload_schemas = ns_has(x, TS_NT_PAYLOAD);
	c->launch_join = ns_col(x, TS_NT_KERNEL, NS_CORR) && ns_col(x, TS_NT_RUNTIME, 3) &&
			 ns_col(x, TS_NT_RUNTIME, 4) && ns_col(x, TS_NT_KERNEL, NS_GPID);
}

/* What takes a scan: NCCL kernels and NVTX ranges, payload blobs. */
static int probe_caps(struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	int rc;
	struct ts_nsys_caps *c = &x->caps;

	if (c->kernels) {
		char sql[160];
		snprintf(sql, sizeof(sql), "SELECT DISTINCT %s FROM CUPTI_ACTIVITY_KIND_KERNEL",
			 ns_c(x, TS_NT_KERNEL, ns_col(x, TS_NT_KERNEL, NS_KNAME) ? NS_KNAME : NS_KSHORT));
		if ((rc = ns_prepare(x, &st, sql, "CUPTI_ACTIVITY_KIND_KERNEL", err)))
			return rc;
		while ((rc = ns_step(x, st, "CUPTI_ACTIVITY_KIND_KERNEL", err)) == 1) {
			uint32_t id = ns_str_col(x, st, 0);
			if (id != TS_NO_ID &&
			    ts_kclass_of(ts_intern_str(&x->strings, id), ts_intern_len(&x->strings, id), 0, 0) ==
				    TS_KC_COMM)
				c->nccl_kernels = 1;
		}
		sqlite3_finalize(st);
		if (rc < 0)
			return rc;
	}
	if (c->nvtx) {
		char sql[400];
		snprintf(sql, sizeof(sql),
			 "SELECT %s, %s FROM NVTX_EVENTS WHERE start IS NOT NULL AND end IS NOT NULL",
			 ns_c(x, TS_NT_NVTX, 3), ns_c(x, TS_NT_NVTX, 4));
		if ((rc = ns_prepare(x, &st, sql, "NVTX_EVENTS", err)))
			return rc;
		while ((rc = ns_step(x, st, "NVTX_EVENTS", err)) == 1) {
			uint32_t id = ns_nvtx_text(x, st, 0, 1);
			if (id != TS_NO_ID && ns_is_nccl_range(ts_intern_str(&x->strings, id)))
				x->nccl_nvtx_ranges++;
		}
		sqlite3_finalize(st);
		if (rc < 0)
			return rc;
		c->nccl_nvtx = x->nccl_nvtx_ranges > 0;
		if (ns_col(x, TS_NT_NVTX, 7)) {
			if ((rc = ns_prepare(x, &st, "SELECT 1 FROM NVTX_EVENTS WHERE binaryData IS NOT NULL LIMIT 1",
					     "NVTX_EVENTS", err)))
				return rc;
			rc = ns_step(x, st, "NVTX_EVENTS", err);
			sqlite3_finalize(st);
			if (rc < 0)
				return rc;
			c->message_sizes = rc == 1 && !c->blobs_excluded;
		}
	}
	return 0;
}

int ns_is_nccl_range(const char *s)
{
	/* NCCL's own NVTX ranges: ncclAllReduce, ncclSend, ncclGroupStart, ... */
	return strncmp(s, "nccl", 4) == 0 && s[4] >= 'A' && s[4] <= 'Z';
}

int ts_nsys_open(struct ts_nsys *x, const char *path, struct ts_err *err)
{
	sqlite3 *db = NULL;
	int rc;
	unsigned nsys_tabs;
	uint32_t page = 0;
	int64_t size = 0;
	int sized = 0;

	snprintf(x->path, sizeof(x->path), "%s", path);
	if ((rc = probe_header(x, &page, &size, &sized, err)))
		return rc;
	/* one connection per thread: no SQLite mutexes */
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		rc = ts_err_at(err, TS_EIO, path, -1, -1, "cannot open: %s",
			       db ? sqlite3_errmsg(db) : "sqlite error");
		if (db)
			sqlite3_close(db);
		return rc;
	}
	x->db = db;
	if ((!sized && (rc = probe_complete(x, page, size, err))) || (rc = probe_tables(x, err)))
		return rc;
	nsys_tabs = x->present & ((1u << TS_NT_KERNEL) | (1u << TS_NT_MEMCPY) | (1u << TS_NT_MEMSET) |
				  (1u << TS_NT_RUNTIME) | (1u << TS_NT_SYNC) | (1u << TS_NT_NVTX) |
				  (1u << TS_NT_META) | (1u << TS_NT_META_OLD) | (1u << TS_NT_SESSION));
	if (!nsys_tabs || !ns_has(x, TS_NT_STRINGS))
		return ts_err_at(err, TS_EPARSE, path, -1, -1,
				 "an SQLite database, but not an Nsight Systems export (no StringIds table, or"
				 " none of CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, META_DATA_EXPORT)");
	if ((rc = load_meta(x, err)) || (rc = load_strings(x, err)) || (rc = load_enums(x, err)) ||
	    (rc = load_gpus(x, err)) || (rc = load_cuda_devices(x, err)) || (rc = load_sysenv(x, err)))
		return rc;
	probe_cols(x);
	return 0;
}

/* NVTX ranges the trace model leaves out (no end, an end before the
 * start, no real time), counted once for the whole export: the rank
 * reader skips them per process. */
static int nvtx_unusable(struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	int rc;

	x->null_end[TS_NT_NVTX] = 0;
	if (!ns_col(x, TS_NT_NVTX, NS_START) || !ns_col(x, TS_NT_NVTX, NS_END) ||
	    !ns_col(x, TS_NT_NVTX, NS_NV_TYPE))
		return 0;
	if ((rc = ns_prepare(x, &st, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, 71)"
				     " AND NOT (" NS_ROW_OK_SQL ")", tab_names[TS_NT_NVTX], err)))
		return rc;
	rc = ns_step(x, st, tab_names[TS_NT_NVTX], err);
	if (rc == 1)
		x->null_end[TS_NT_NVTX] = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

/* What the export lacks (gaps): names, processes, either side of the
 * kernel launches. After load_ranks. */
static int survey_gaps(struct ts_nsys *x, struct ts_err *err)
{
	static const enum ts_nsys_tab named[3] = { TS_NT_KERNEL, TS_NT_RUNTIME, TS_NT_NVTX };
	static const enum ts_nsys_tab gpu[3] = { TS_NT_KERNEL, TS_NT_MEMCPY, TS_NT_MEMSET };
	struct ts_nsys_gaps *g = &x->gaps;
	int64_t kernels = 0;
	int rc;

	for (int i = 0; i < 3; i++)
		if ((rc = ts_nsys_count_unnamed(x, named[i], err)))
			return rc;
	if ((rc = nvtx_unusable(x, err)))
		return rc;
	/* the ranks the survey made in process 0 (OS pid 0 is no process) */
	for (size_t i = 0; i < x->ranks.n; i++) {
		const struct ts_nsys_rank *r = &x->ranks.v[i];
		kernels += r->kernels;
		if (r->pid == 0) {
			g->no_process[gpu[0]] += r->kernels;
			g->no_process[gpu[1]] += r->memcpys;
			g->no_process[gpu[2]] += r->memsets;
		}
	}
	if (kernels && !x->caps.launch_join) {
		g->unlaunched_kernels = kernels;
		g->runtime_absent = !ns_has(x, TS_NT_RUNTIME);
	}
	return kernels ? 0 : ts_nsys_count_orphan_launches(x, err);
}

int ts_nsys_count_orphan_launches(struct ts_nsys *x, struct ts_err *err)
{
	sqlite3_stmt *st;
	int rc;

	x->gaps.orphan_launches = 0;
	if (ns_col(x, TS_NT_KERNEL, NS_START) && ns_col(x, TS_NT_KERNEL, NS_END)) {
		if ((rc = ns_prepare(x, &st, "SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE " NS_ROW_OK_SQL
					     " LIMIT 1", tab_names[TS_NT_KERNEL], err)))
			return rc;
		rc = ns_step(x, st, tab_names[TS_NT_KERNEL], err);
		sqlite3_finalize(st);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	if (!ns_col(x, TS_NT_RUNTIME, NS_RT_NAME) || !ns_col(x, TS_NT_STRINGS, 0) ||
	    !ns_col(x, TS_NT_STRINGS, 1))
		return 0;
	/* launch calls with no kernel row at all: the GPU side is missing
	 * (cudaLaunchHostFunc runs a host function, not a kernel) */
	if ((rc = ns_prepare(x, &st,
			     "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id ="
			     " r.nameId WHERE (s.value LIKE 'cudaLaunch%' OR s.value LIKE 'cuLaunch%' OR"
			     " s.value LIKE 'cudaGraphLaunch%' OR s.value LIKE 'cuGraphLaunch%') AND"
			     " s.value NOT LIKE '%HostFunc%'",
			     tab_names[TS_NT_RUNTIME], err)))
		return rc;
	rc = ns_step(x, st, tab_names[TS_NT_RUNTIME], err);
	if (rc == 1)
		x->gaps.orphan_launches = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

int ts_nsys_survey(struct ts_nsys *x, struct ts_err *err)
{
	int rc;

	if (x->surveyed)
		return 0;
	if ((rc = load_ranks(x, err)) || (rc = load_joins(x, err)) || (rc = probe_caps(x, err)) ||
	    (rc = survey_gaps(x, err)))
		return rc;
	x->surveyed = 1;
	return 0;
}

const char *ns_mem_kind(int64_t k)
{
	return k >= 0 && k < 8 ? mem_kinds[k] : "Unknown";
}

const char *ns_copy_short(int64_t k)
{
	return k >= 0 && k < 14 ? memcpy_short[k] : "Unknown";
}

int ts_nsys_warnings(const struct ts_nsys_joins *joins, const int64_t *null_end,
		     const struct ts_nsys_gaps *gaps, const char *path, struct ts_warnings *w)
{
	int rc = 0;

	if (gaps && gaps->orphan_launches)
		rc |= ts_warnings_add(w, "kernels-missing", path, -1, TS_NO_INT,
				      "%s: %lld kernel launch call(s) in CUPTI_ACTIVITY_KIND_RUNTIME but no "
				      "usable kernel row: the GPU side of the capture is missing, so kernel "
				      "time and compute are not measured (the walls see only copies and memsets)", path,
				      (long long)gaps->orphan_launches);
	if (gaps && gaps->unlaunched_kernels)
		rc |= ts_warnings_add(w, "no-launch-data", path, -1, TS_NO_INT,
				      "%s: %lld kernels and no launch to join them to (%s): launch latency and "
				      "host-bound GPU idle are not measured; the idle counts as unlinked",
				      path, (long long)gaps->unlaunched_kernels,
				      gaps->runtime_absent ? "no CUPTI_ACTIVITY_KIND_RUNTIME table"
							   : "no correlationId, globalPid or globalTid column");
	for (int t = 0; gaps && t < TS_NT_COUNT; t++) {
		if (gaps->no_process[t])
			rc |= ts_warnings_add(w, "no-process", path, -1, TS_NO_INT,
					      "%s: %lld %s row(s) have no process (no globalPid column, or its pid "
					      "bits 0): they are put in process 0, apart from other rows of their "
					      "device, and joined to no launch", path, (long long)gaps->no_process[t],
					      ts_nsys_table_name((enum ts_nsys_tab)t));
		if (gaps->unnamed[t])
			rc |= ts_warnings_add(w, "unnamed-rows", path, -1, TS_NO_INT,
					      "%s: %lld %s row(s) name a string id that StringIds does not "
					      "hold (or no name): their names are unknown", path,
					      (long long)gaps->unnamed[t], ts_nsys_table_name((enum ts_nsys_tab)t));
	}

	if (joins->unjoined)
		rc |= ts_warnings_add(w, "unjoined-kernels", path, -1, TS_NO_INT,
				      "%s: %lld of %lld kernels have no launch row in their own process "
				      "(launched before the export window, or not traced); their launch "
				      "latency is not reported%s", path, (long long)joins->unjoined,
				      (long long)joins->kernels, joins->cross_process ? "" : ".");
	if (joins->cross_process)
		rc |= ts_warnings_add(w, "cross-process-correlation", path, -1, TS_NO_INT,
				      "%s: %lld of those would match a launch row of another process by "
				      "correlationId alone; not joined (ids are per process)", path,
				      (long long)joins->cross_process);
	for (int t = 0; t < TS_NT_COUNT; t++)
		if (null_end[t])
			rc |= ts_warnings_add(w, "null-times", path, -1, TS_NO_INT,
					      "%s: %lld %s row(s) with a NULL start or end, an end "
					      "before the start, or a time beyond 2^61 ns skipped", path,
					      (long long)null_end[t], ts_nsys_table_name((enum ts_nsys_tab)t));
	return rc ? TS_ENOMEM : 0;
}

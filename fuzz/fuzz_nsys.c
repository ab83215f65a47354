/*
 * fuzz_nsys.c - libFuzzer target for the Nsight Systems reader: string and
 * enum resolution, column probing, NULL and inverted times, the rank
 * builder, the device walls and the six stats reports.
 *
 * The input is a little program that builds an nsys-shaped SQLite file:
 * byte 0 picks which optional columns and tables exist, then records of
 * (table, fields...) insert rows whose ids, names and times come from the
 * input (StringIds ids that collide, go missing or are not integers; enum
 * ids out of range; NVTX text vs textId; NULL ends). An input that starts
 * with "SQLite format 3" is written as is (a raw, probably corrupt, file).
 * Checked properties, not just "no crash": every error has its code and a
 * message; joins add up; ranks are sorted and distinct; every event of a
 * rank has a name in its string table, a duration >= 0 and (GPU events) the
 * rank's device; walls satisfy idle = span - busy >= 0, compute <= busy,
 * exposed <= total; report rows have min <= med <= max, min <= avg <= max,
 * stddev >= 0, and Time % sums to ~100.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "trainscope/nsys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct in {
	const uint8_t *p;
	size_t n, i;
};

static unsigned u8(struct in *in)
{
	return in->i < in->n ? in->p[in->i++] : 0;
}

static int64_t i64(struct in *in)
{
	/* small values are common: one byte for 0..127, else 4 or 8 bytes */
	unsigned b = u8(in);
	int64_t v = 0;
	int k = b & 0x80 ? ((b & 0x40) ? 8 : 4) : 0;

	if (!k)
		return (int64_t)b;
	for (int j = 0; j < k; j++)
		v = (int64_t)((uint64_t)v << 8 | u8(in));
	return v;
}

static void bind_val(sqlite3_stmt *st, int col, struct in *in)
{
	unsigned kind = u8(in) % 8;

	if (kind == 0)
		sqlite3_bind_null(st, col);
	else if (kind == 1) {
		char s[24];
		size_t n = u8(in) % sizeof(s);
		for (size_t j = 0; j < n; j++)
			s[j] = (char)u8(in);
		sqlite3_bind_text(st, col, s, (int)n, SQLITE_TRANSIENT);
	} else
		sqlite3_bind_int64(st, col, i64(in));
}

static const char *const schema_full[] = {
	"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT)",
	"CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT)",
	("INSERT INTO META_DATA_EXPORT VALUES('EXPORT_SCHEMA_VERSION','3.25.0'),"
	 "('EXPORT_PARAM_INCLUDE_BLOBS','false'),('DERIVED_WINDOW_NS','5-900')"),
	"CREATE TABLE ENUM_CUDA_MEMCPY_OPER(id INTEGER, name TEXT, label TEXT)",
	"CREATE TABLE ENUM_CUPTI_SYNC_TYPE(id INTEGER, name TEXT, label TEXT)",
	"CREATE TABLE TARGET_INFO_GPU(id INTEGER, name TEXT, cuDevice INTEGER)",
	"CREATE TABLE PROCESSES(globalPid INTEGER, pid INTEGER, name TEXT)",
};

/* Optional column sets (bit i of the mode byte drops the extra columns). */
static const char *const tables[][2] = {
	{ "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId, streamId, correlationId, globalPid, demangledName, shortName)",
	  "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId, shortName)" },
	{ "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start, end, deviceId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind)",
	  "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start, end, deviceId, globalPid, bytes)" },
	{ "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start, end, deviceId, streamId, correlationId, globalPid, bytes, memKind)",
	  "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start, end, globalPid)" },
	{ "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start, end, eventClass, globalTid, correlationId, nameId)",
	  "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start, end, nameId)" },
	{ "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(start, end, deviceId, streamId, correlationId, globalPid, syncType)",
	  "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(start, end)" },
	{ "CREATE TABLE NVTX_EVENTS(start, end, eventType, text, textId, globalTid, domainId, binaryData)",
	  "CREATE TABLE NVTX_EVENTS(start, end, text, globalTid)" },
};
static const char *const inserts[] = {
	"INSERT INTO StringIds VALUES(?1, ?2)",
	"INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(?1, 'x', ?2)",
	"INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES(?1, 'x', ?2)",
	"INSERT INTO TARGET_INFO_GPU VALUES(?1, ?2, ?3)",
	"INSERT INTO PROCESSES VALUES(?1, ?2, ?3)",
};

static int build(const char *path, const uint8_t *data, size_t size)
{
	struct in in = { data, size, 0 };
	sqlite3 *db = NULL;
	unsigned mode = u8(&in);
	int rc = -1;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		goto out;
	sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN", NULL, NULL, NULL);
	for (size_t k = 0; k < sizeof(schema_full) / sizeof(schema_full[0]); k++)
		if (!(mode & 0x80) || k != 0)   /* bit 7: no StringIds */
			sqlite3_exec(db, schema_full[k], NULL, NULL, NULL);
	for (size_t t = 0; t < 6; t++)
		if (!((mode >> 6) & 1) || t != 0)   /* bit 6: no KERNEL table */
			sqlite3_exec(db, tables[t][(mode >> t) & 1], NULL, NULL, NULL);
	while (in.i < in.n) {
		unsigned op = u8(&in) % 11;
		sqlite3_stmt *st = NULL;
		char sql[160];
		int ncol;
		if (op < 5) {
			if (sqlite3_prepare_v2(db, inserts[op], -1, &st, NULL) != SQLITE_OK)
				continue;
			ncol = sqlite3_bind_parameter_count(st);
		} else {
			static const char *const tn[6] = {
				"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
				"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS"
			};
			static const int nc[6][2] = { { 8, 4 }, { 10, 5 }, { 8, 3 }, { 6, 3 }, { 7, 2 }, { 8, 4 } };
			unsigned t = op - 5;
			ncol = nc[t][(mode >> t) & 1];
			snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES(?%s%s%s%s%s%s%s%s%s)", tn[t],
				 ncol > 1 ? ",?" : "", ncol > 2 ? ",?" : "", ncol > 3 ? ",?" : "", ncol > 4 ? ",?" : "",
				 ncol > 5 ? ",?" : "", ncol > 6 ? ",?" : "", ncol > 7 ? ",?" : "", ncol > 8 ? ",?" : "",
				 ncol > 9 ? ",?" : "");
			if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
				continue;
		}
		for (int c = 1; c <= ncol; c++)
			bind_val(st, c, &in);
		sqlite3_step(st);
		sqlite3_finalize(st);
	}
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	rc = 0;
out:
	sqlite3_close(db);
	return rc;
}

static void check_err(int rc, const struct ts_err *err)
{
	if (rc >= 0)
		return;
	if (err->code != rc || !err->msg[0])
		abort();
}

static void check_report(struct ts_nsys *x, enum ts_srep_kind k)
{
	struct ts_srep r;
	struct ts_err err;
	struct ts_sb sb;
	double pct = 0;
	int rc;

	ts_srep_init(&r, k);
	ts_err_init(&err);
	rc = ts_srep_add_nsys(&r, x, &err);
	if (!rc)
		rc = ts_srep_finish(&r, &err);
	check_err(rc, &err);
	for (size_t i = 0; !rc && i < r.rows.n; i++) {
		const struct ts_srep_stat *s = &r.rows.v[i].v;
		if (s->n <= 0 || s->min > s->max || s->med < (double)s->min || s->med > (double)s->max ||
		    s->stddev < 0)
			abort();
		/* avg of values within [min, max], up to double rounding */
		if (s->avg < (double)s->min - 1e-6 * (1 + fabs((double)s->min)) ||
		    s->avg > (double)s->max + 1e-6 * (1 + fabs((double)s->max)))
			abort();
		if (r.rows.v[i].name >= r.names.count)
			abort();
		pct += r.rows.v[i].pct;
	}
	ts_sb_init(&sb);
	ts_srep_csv(&r, &sb);
	ts_srep_table(&r, NULL, &sb);
	ts_srep_json(&r, NULL, &sb);
	ts_sb_release(&sb);
	(void)pct;
	ts_srep_release(&r);
}

static void check_rank(struct ts_nsys *x, size_t k)
{
	struct ts_trace t;
	struct ts_err err;
	struct ts_nsys_rank_info info;
	struct ts_nsys_read_opts o = { .step_nvtx = k % 2 ? "^[a-c]" : NULL, .no_auto_steps = 0 };
	struct ts_dev_walls *w = NULL;
	size_t nw = 0;
	int rc;

	ts_trace_init(&t);
	ts_err_init(&err);
	rc = ts_nsys_read_rank(x, k, &o, &t, &info, &err);
	check_err(rc, &err);
	if (!rc) {
		for (size_t i = 0; i < t.ev.n; i++) {
			int gpu = t.ev.cat[i] == TS_CAT_KERNEL || t.ev.cat[i] == TS_CAT_MEMCPY ||
				  t.ev.cat[i] == TS_CAT_MEMSET;
			if (t.ev.name[i] >= t.strings.count || ts_ev_dur(&t.ev, i) < 0)
				abort();
			if (gpu && ts_ev_device(&t.ev, i) != x->ranks.v[k].device)
				abort();
		}
		for (size_t i = 0; i < t.xfer.n; i++)
			if (t.xfer.v[i].ev >= t.ev.n)
				abort();
		if (info.steps < 0 || (info.steps == 0) != (info.steps_from == TS_NSYS_STEPS_NONE))
			abort();
		rc = ts_dev_walls_of(&t, &w, &nw, &err);
		check_err(rc, &err);
		for (size_t i = 0; !rc && i < nw; i++) {
			const struct ts_dev_walls *d = &w[i];
			if (d->idle_ns != d->span_ns - d->busy_ns || d->idle_ns < 0 || d->compute_ns > d->busy_ns ||
			    d->exposed_comm_ns > d->comm_ns || d->exposed_comm_ns < 0 ||
			    d->exposed_memcpy_ns > d->memcpy_ns || d->exposed_memcpy_ns < 0 ||
			    d->kernels > x->ranks.v[k].kernels)
				abort();
		}
		free(w);
	}
	ts_trace_release(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* tmpfs when there is one: a database file per input */
	char path[] = "/dev/shm/fuzz-nsys-XXXXXX";
	int fd = mkstemp(path);
	struct ts_nsys x;
	struct ts_err err;
	int rc;

	if (fd < 0) {
		memcpy(path, "/tmp/fuzz-nsys-XXXXXX", sizeof("/tmp/fuzz-nsys-XXXXXX"));
		fd = mkstemp(path);
	}
	if (fd < 0)
		return 0;
	if (size >= 16 && memcmp(data, "SQLite format 3", 16) == 0) {
		if (write(fd, data, size) != (ssize_t)size) {
			close(fd);
			unlink(path);
			return 0;
		}
		close(fd);
	} else {
		close(fd);
		unlink(path);
		if (build(path, data, size)) {
			unlink(path);
			return 0;
		}
	}
	for (size_t n = 0; n < size && n < 40; n++) {
		/* the suffix rule on input bytes */
		char s[48];
		size_t len;
		memcpy(s, data, n);
		s[n] = 0;
		len = ts_nsys_api_len(s, n);
		if (len > n || (len < n && (s[len] != '_' || s[len + 1] != 'v')))
			abort();
	}
	ts_nsys_init(&x);
	ts_err_init(&err);
	rc = ts_nsys_open(&x, path, &err);
	check_err(rc, &err);
	if (!rc) {
		for (int k = 0; k < TS_SREP_COUNT; k++)
			check_report(&x, (enum ts_srep_kind)k);
		rc = ts_nsys_survey(&x, &err);
		check_err(rc, &err);
	}
	if (!rc) {
		const struct ts_nsys_joins *j = &x.joins;
		if (j->joined + j->unjoined != j->kernels || j->cross_process > j->unjoined || j->joined < 0)
			abort();
		for (size_t k = 0; k < x.ranks.n; k++) {
			const struct ts_nsys_rank *r = &x.ranks.v[k];
			if (r->kernels + r->memcpys + r->memsets <= 0)
				abort();
			if (k && x.ranks.v[k - 1].global_pid == r->global_pid && x.ranks.v[k - 1].device == r->device)
				abort();
		}
		for (size_t k = 0; k < x.ranks.n && k < 4; k++)
			check_rank(&x, k);
	}
	ts_nsys_close(&x);
	unlink(path);
	return 0;
}

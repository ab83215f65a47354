/*
 * ledger.c - the SQLite experiment ledger.
 *
 * Why SQLite and why this shape: an optimisation campaign is a long series of
 * A/B experiments run by several people and jobs, often at the same time;
 * the history (including every rejected candidate) must survive crashes and
 * be queryable. SQLite in WAL mode gives concurrent readers, serialised
 * writers waiting on a busy timeout, and atomic multi-table transactions, so
 * a killed writer can never leave an experiment without its runs.
 *
 * Unknown values are stored as SQL NULL and read back as -1 / NaN / NULL.
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "trainscope/json.h"
#include "trainscope/ledger.h"

/* Schema migrations: entry i brings user_version i to i + 1. */
static const char *const migrations[TS_LEDGER_SCHEMA_VERSION] = {
	"CREATE TABLE contracts ("
	"  id INTEGER PRIMARY KEY,"
	"  hash TEXT NOT NULL UNIQUE,"
	"  label TEXT,"
	"  body TEXT NOT NULL);"
	"CREATE TABLE runs ("
	"  id INTEGER PRIMARY KEY,"
	"  created_ns INTEGER NOT NULL,"
	"  workload TEXT NOT NULL,"
	"  source TEXT,"
	"  contract_id INTEGER REFERENCES contracts(id));"
	"CREATE INDEX runs_workload ON runs(workload);"
	"CREATE TABLE step_summaries ("
	"  run_id INTEGER PRIMARY KEY REFERENCES runs(id),"
	"  steps_logged INTEGER, window_first INTEGER, window_last INTEGER,"
	"  window_steps INTEGER, mean_step_ns INTEGER, median_step_ns INTEGER,"
	"  cv REAL, peak_mem_bytes INTEGER, nan_steps INTEGER,"
	"  skipped_steps INTEGER, final_loss REAL);"
	"CREATE TABLE experiments ("
	"  id INTEGER PRIMARY KEY,"
	"  created_ns INTEGER NOT NULL,"
	"  workload TEXT NOT NULL,"
	"  variable TEXT,"
	"  verdict TEXT NOT NULL,"
	"  decision TEXT NOT NULL,"
	"  ratio REAL, ci95_low REAL, ci95_high REAL,"
	"  correctness_passed INTEGER NOT NULL,"
	"  reasons TEXT,"
	"  evidence TEXT,"
	"  n_runs INTEGER NOT NULL);"
	"CREATE TABLE experiment_runs ("
	"  experiment_id INTEGER NOT NULL REFERENCES experiments(id),"
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  side TEXT NOT NULL CHECK (side IN ('baseline', 'candidate')),"
	"  PRIMARY KEY (experiment_id, run_id));"
	"CREATE TABLE baselines ("
	"  workload TEXT PRIMARY KEY,"
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  set_ns INTEGER NOT NULL);"
	"CREATE TABLE baseline_history ("
	"  id INTEGER PRIMARY KEY,"
	"  workload TEXT NOT NULL,"
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  set_ns INTEGER NOT NULL);",
};

const char *ts_ledger_pick_path(const char *opt, const char *env)
{
	if (opt && *opt)
		return opt;
	if (env && *env)
		return env;
	return TS_LEDGER_DEFAULT_PATH;
}

void ts_ledger_run_init(struct ts_ledger_run *r)
{
	memset(r, 0, sizeof(*r));
	r->id = r->created_ns = -1;
	r->steps_logged = r->window_first = r->window_last = r->window_steps = -1;
	r->mean_step_ns = r->median_step_ns = r->peak_mem_bytes = -1;
	r->nan_steps = r->skipped_steps = -1;
	r->cv = NAN;
	r->final_loss = NAN;
}

static int db_fail(struct ts_ledger *l, struct ts_err *err, int code, const char *what)
{
	return ts_err_at(err, code, l->path, -1, -1, "%s: %s", what,
			 l->db ? sqlite3_errmsg(l->db) : "no database");
}

static int64_t now_ns(const struct ts_ledger *l)
{
	struct timespec ts;

	if (l->now_ns > 0)
		return l->now_ns;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int exec(struct ts_ledger *l, const char *sql, struct ts_err *err)
{
	if (sqlite3_exec(l->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(l, err, TS_EIO, sql);
	return 0;
}

/* Make the parent directory of path when it is missing (one level). */
static int make_parent(const char *path, struct ts_err *err)
{
	char dir[TS_ERR_PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash || slash == path)
		return 0;
	n = (size_t)(slash - path);
	if (n >= sizeof(dir))
		return ts_err_at(err, TS_ELIMIT, path, -1, -1, "path too long");
	memcpy(dir, path, n);
	dir[n] = '\0';
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return ts_err_at(err, TS_EIO, path, -1, -1, "cannot create directory %s: %s",
				 dir, strerror(errno));
	return 0;
}

int ts_ledger_version(struct ts_ledger *l)
{
	sqlite3_stmt *st = NULL;
	int v = -1;

	if (sqlite3_prepare_v2(l->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Switching to WAL takes an exclusive lock the busy handler does not always
 * wait for when many processes create the file at once: retry. */
static int set_wal(struct ts_ledger *l, struct ts_err *err)
{
	for (int attempt = 0; attempt < 300; attempt++) {
		int rc = sqlite3_exec(l->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			return 0;
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
			break;
		sqlite3_sleep(10);
	}
	return db_fail(l, err, TS_EIO, "cannot switch to WAL mode");
}

static int migrate(struct ts_ledger *l, struct ts_err *err)
{
	int v, rc;

	if ((rc = exec(l, "BEGIN IMMEDIATE", err)))
		return rc;
	v = ts_ledger_version(l);
	if (v < 0) {
		rc = db_fail(l, err, TS_EPARSE, "not a ledger database");
		goto fail;
	}
	if (v > TS_LEDGER_SCHEMA_VERSION) {
		rc = ts_err_at(err, TS_EUNSUPPORTED, l->path, -1, -1,
			       "ledger schema version %d is newer than this trainscope "
			       "understands (%d); upgrade trainscope", v,
			       TS_LEDGER_SCHEMA_VERSION);
		goto fail;
	}
	for (; v < TS_LEDGER_SCHEMA_VERSION; v++) {
		char pragma[64];
		if ((rc = exec(l, migrations[v], err)))
			goto fail;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d", v + 1);
		if ((rc = exec(l, pragma, err)))
			goto fail;
	}
	return exec(l, "COMMIT", err);
fail:
	sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* Before the first write of a session: a damaged file is never appended to
 * (SQLite would write into a broken b-tree and make it worse). */
static int check_before_write(struct ts_ledger *l, struct ts_err *err)
{
	struct ts_err cerr;

	if (ts_ledger_version(l) <= 0)
		return 0; /* new or empty: nothing to check yet */
	ts_err_init(&cerr);
	if (ts_ledger_check(l, &cerr) == 0)
		return 0;
	return ts_err_at(err, TS_EPARSE, l->path, -1, -1,
			 "ledger is damaged, nothing was written (%s); keep the file, "
			 "'trainscope ledger check --db %s' shows the problem, and "
			 "'sqlite3 %s .recover | sqlite3 recovered.db' salvages what is "
			 "readable (then use --db recovered.db)",
			 cerr.msg, l->path, l->path);
}

int ts_ledger_open(struct ts_ledger *l, const char *path, int mode, struct ts_err *err)
{
	int create = mode == TS_LEDGER_CREATE;
	int flags = (mode == TS_LEDGER_READ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
		    SQLITE_OPEN_NOMUTEX;
	int rc;
	struct stat st;

	memset(l, 0, sizeof(*l));
	if (strlen(path) >= sizeof(l->path))
		return ts_err_at(err, TS_ELIMIT, path, -1, -1, "path too long");
	snprintf(l->path, sizeof(l->path), "%s", path);
	if (!create && stat(path, &st) != 0)
		return ts_err_at(err, TS_EIO, path, -1, -1,
				 "no ledger here (%s); record an experiment with "
				 "'trainscope ab --db %s' first", strerror(errno), path);
	/* SQLite would take an empty file for an empty database and write a
	 * schema into it; only a command that records may do that */
	if (!create && S_ISREG(st.st_mode) && st.st_size == 0)
		return ts_err_at(err, TS_EPARSE, path, 0, -1,
				 "empty file, not a ledger; record an experiment with "
				 "'trainscope ab --db %s' first", path);
	if (create) {
		flags |= SQLITE_OPEN_CREATE;
		if ((rc = make_parent(path, err)))
			return rc;
	}
	if (sqlite3_open_v2(path, &l->db, flags, NULL) != SQLITE_OK) {
		rc = db_fail(l, err, TS_EIO, "cannot open ledger");
		goto fail;
	}
	sqlite3_busy_timeout(l->db, TS_LEDGER_BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(l->db, 0);
	if (mode == TS_LEDGER_READ) {
		int v = ts_ledger_version(l);
		if (v < 0) {
			rc = db_fail(l, err, TS_EPARSE, "not a ledger database");
			goto fail;
		}
		if (v > TS_LEDGER_SCHEMA_VERSION) {
			rc = ts_err_at(err, TS_EUNSUPPORTED, l->path, -1, -1,
				       "ledger schema version %d is newer than this trainscope "
				       "understands (%d); upgrade trainscope", v,
				       TS_LEDGER_SCHEMA_VERSION);
			goto fail;
		}
		if (v < TS_LEDGER_SCHEMA_VERSION) {
			rc = ts_err_at(err, TS_EPARSE, l->path, -1, -1,
				       "not a trainscope ledger (schema version %d); record an "
				       "experiment with 'trainscope ab --db %s' first", v, path);
			goto fail;
		}
		return 0;
	}
	if ((rc = check_before_write(l, err)))
		goto fail;
	if ((rc = set_wal(l, err)))
		goto fail;
	/* NORMAL is durable against a killed process in WAL mode; only a power
	 * loss can drop the last commits, never corrupt the file. */
	if ((rc = exec(l, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON", err)))
		goto fail;
	if ((rc = migrate(l, err)))
		goto fail;
	return 0;
fail:
	if (err && err->code == TS_EIO && l->db &&
	    sqlite3_errcode(l->db) == SQLITE_NOTADB)
		err->code = rc = TS_EPARSE;
	ts_ledger_release(l);
	return rc;
}

void ts_ledger_release(struct ts_ledger *l)
{
	if (l->db)
		sqlite3_close_v2(l->db);
	l->db = NULL;
}

/* ------------------------------------------------------------- binding */

static void bind_i64(sqlite3_stmt *st, int i, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

static void bind_f64(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* Run a prepared statement to completion; finalize it. */
static int step_done(struct ts_ledger *l, sqlite3_stmt *st, const char *what,
		     struct ts_err *err)
{
	int rc = sqlite3_step(st);

	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_fail(l, err, TS_EIO, what);
	return 0;
}

static int prepare(struct ts_ledger *l, const char *sql, sqlite3_stmt **st,
		   struct ts_err *err)
{
	if (sqlite3_prepare_v2(l->db, sql, -1, st, NULL) != SQLITE_OK)
		return db_fail(l, err, TS_EINTERNAL, sql);
	return 0;
}

static int insert_contract(struct ts_ledger *l, const char *body, const char *label,
			   int64_t *id, struct ts_err *err)
{
	sqlite3_stmt *st = NULL;
	char hash[32];
	int rc;

	*id = -1;
	if (!body)
		return 0;
	snprintf(hash, sizeof(hash), "%016llx",
		 (unsigned long long)ts_hash(body, strlen(body)));
	if ((rc = prepare(l, "INSERT OR IGNORE INTO contracts(hash, label, body) "
			     "VALUES (?, ?, ?)", &st, err)))
		return rc;
	bind_str(st, 1, hash);
	bind_str(st, 2, label);
	bind_str(st, 3, body);
	if ((rc = step_done(l, st, "cannot store contract", err)))
		return rc;
	if ((rc = prepare(l, "SELECT id FROM contracts WHERE hash = ?", &st, err)))
		return rc;
	bind_str(st, 1, hash);
	if (sqlite3_step(st) == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return *id < 0 ? db_fail(l, err, TS_EIO, "contract vanished") : 0;
}

static int insert_run(struct ts_ledger *l, struct ts_ledger_run *r, int64_t created,
		      struct ts_err *err)
{
	sqlite3_stmt *st = NULL;
	int64_t cid;
	int rc;

	if ((rc = insert_contract(l, r->contract_json, r->contract_label, &cid, err)))
		return rc;
	if ((rc = prepare(l, "INSERT INTO runs(created_ns, workload, source, contract_id) "
			     "VALUES (?, ?, ?, ?)", &st, err)))
		return rc;
	sqlite3_bind_int64(st, 1, created);
	bind_str(st, 2, r->workload ? r->workload : "default");
	bind_str(st, 3, r->source);
	bind_i64(st, 4, cid);
	if ((rc = step_done(l, st, "cannot store run", err)))
		return rc;
	r->id = sqlite3_last_insert_rowid(l->db);
	r->created_ns = created;
	if ((rc = prepare(l, "INSERT INTO step_summaries VALUES "
			     "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &st, err)))
		return rc;
	sqlite3_bind_int64(st, 1, r->id);
	bind_i64(st, 2, r->steps_logged);
	bind_i64(st, 3, r->window_first);
	bind_i64(st, 4, r->window_last);
	bind_i64(st, 5, r->window_steps);
	bind_i64(st, 6, r->mean_step_ns);
	bind_i64(st, 7, r->median_step_ns);
	bind_f64(st, 8, r->cv);
	bind_i64(st, 9, r->peak_mem_bytes);
	bind_i64(st, 10, r->nan_steps);
	bind_i64(st, 11, r->skipped_steps);
	bind_f64(st, 12, r->final_loss);
	return step_done(l, st, "cannot store step summary", err);
}

static int link_run(struct ts_ledger *l, int64_t exp, int64_t run, const char *side,
		    struct ts_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if ((rc = prepare(l, "INSERT INTO experiment_runs VALUES (?, ?, ?)", &st, err)))
		return rc;
	sqlite3_bind_int64(st, 1, exp);
	sqlite3_bind_int64(st, 2, run);
	bind_str(st, 3, side);
	return step_done(l, st, "cannot link run to experiment", err);
}

int ts_ledger_add_experiment(struct ts_ledger *l, struct ts_ledger_experiment *e,
			     int64_t *id, struct ts_err *err)
{
	sqlite3_stmt *st = NULL;
	int64_t created = now_ns(l), eid;
	int rc;

	if ((rc = exec(l, "BEGIN IMMEDIATE", err)))
		return rc;
	if ((rc = prepare(l, "INSERT INTO experiments(created_ns, workload, variable, "
			     "verdict, decision, ratio, ci95_low, ci95_high, "
			     "correctness_passed, reasons, evidence, n_runs) "
			     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &st, err)))
		goto fail;
	sqlite3_bind_int64(st, 1, created);
	bind_str(st, 2, e->workload ? e->workload : "default");
	bind_str(st, 3, e->variable);
	bind_str(st, 4, e->verdict ? e->verdict : "invalid");
	bind_str(st, 5, e->decision ? e->decision : "invalid");
	bind_f64(st, 6, e->ratio);
	bind_f64(st, 7, e->ci95_low);
	bind_f64(st, 8, e->ci95_high);
	sqlite3_bind_int(st, 9, e->correctness_passed ? 1 : 0);
	bind_str(st, 10, e->reasons);
	bind_str(st, 11, e->evidence_json);
	sqlite3_bind_int64(st, 12, (int64_t)(e->nbaseline + e->ncandidate));
	if ((rc = step_done(l, st, "cannot store experiment", err)))
		goto fail;
	eid = sqlite3_last_insert_rowid(l->db);
	for (size_t i = 0; i < e->nbaseline + e->ncandidate; i++) {
		int base = i < e->nbaseline;
		struct ts_ledger_run *r = base ? &e->baseline[i] : &e->candidate[i - e->nbaseline];
		if (!r->workload)
			r->workload = e->workload;
		if ((rc = insert_run(l, r, created, err)) ||
		    (rc = link_run(l, eid, r->id, base ? "baseline" : "candidate", err)))
			goto fail;
	}
	if ((rc = exec(l, "COMMIT", err)))
		goto fail;
	e->id = eid;
	e->created_ns = created;
	if (id)
		*id = eid;
	return 0;
fail:
	sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int ts_ledger_set_baseline(struct ts_ledger *l, int64_t run_id, struct ts_err *err)
{
	sqlite3_stmt *st = NULL;
	char *workload = NULL;
	int64_t t = now_ns(l);
	int rc;

	if ((rc = exec(l, "BEGIN IMMEDIATE", err)))
		return rc;
	if ((rc = prepare(l, "SELECT workload FROM runs WHERE id = ?", &st, err)))
		goto fail;
	sqlite3_bind_int64(st, 1, run_id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *w = (const char *)sqlite3_column_text(st, 0);
		workload = w ? strdup(w) : NULL;
	}
	sqlite3_finalize(st);
	if (!workload) {
		rc = ts_err_at(err, TS_EUSAGE, l->path, -1, -1, "no run with id %lld",
			       (long long)run_id);
		goto fail;
	}
	if ((rc = prepare(l, "INSERT OR REPLACE INTO baselines VALUES (?, ?, ?)", &st, err)))
		goto fail;
	bind_str(st, 1, workload);
	sqlite3_bind_int64(st, 2, run_id);
	sqlite3_bind_int64(st, 3, t);
	if ((rc = step_done(l, st, "cannot set baseline", err)))
		goto fail;
	if ((rc = prepare(l, "INSERT INTO baseline_history(workload, run_id, set_ns) "
			     "VALUES (?, ?, ?)", &st, err)))
		goto fail;
	bind_str(st, 1, workload);
	sqlite3_bind_int64(st, 2, run_id);
	sqlite3_bind_int64(st, 3, t);
	if ((rc = step_done(l, st, "cannot record baseline history", err)))
		goto fail;
	rc = exec(l, "COMMIT", err);
	if (rc)
		goto fail;
	free(workload);
	return 0;
fail:
	free(workload);
	sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* ------------------------------------------------------------- reading */

void ts_ledger_rows_init(struct ts_ledger_rows *rows)
{
	memset(rows, 0, sizeof(*rows));
	ts_arena_init(&rows->arena);
}

void ts_ledger_rows_release(struct ts_ledger_rows *rows)
{
	TS_VEC_RELEASE(rows->runs);
	TS_VEC_RELEASE(rows->exps);
	ts_arena_release(&rows->arena);
}

static const char *col_str(struct ts_ledger_rows *rows, sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	if (!s)
		return NULL;
	return ts_arena_strndup(&rows->arena, (const char *)s,
				(size_t)sqlite3_column_bytes(st, i));
}

static int64_t col_i64(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

static double col_f64(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

#define RUN_COLUMNS \
	"SELECT r.id, r.created_ns, r.workload, r.source, c.body, c.label, " \
	"s.steps_logged, s.window_first, s.window_last, s.window_steps, " \
	"s.mean_step_ns, s.median_step_ns, s.cv, s.peak_mem_bytes, s.nan_steps, " \
	"s.skipped_steps, s.final_loss, " \
	"EXISTS (SELECT 1 FROM baselines b WHERE b.run_id = r.id) " \
	"FROM runs r LEFT JOIN contracts c ON c.id = r.contract_id " \
	"LEFT JOIN step_summaries s ON s.run_id = r.id "

static void read_run(struct ts_ledger_rows *rows, sqlite3_stmt *st, struct ts_ledger_run *r)
{
	ts_ledger_run_init(r);
	r->id = sqlite3_column_int64(st, 0);
	r->created_ns = sqlite3_column_int64(st, 1);
	r->workload = col_str(rows, st, 2);
	r->source = col_str(rows, st, 3);
	r->contract_json = col_str(rows, st, 4);
	r->contract_label = col_str(rows, st, 5);
	r->steps_logged = col_i64(st, 6);
	r->window_first = col_i64(st, 7);
	r->window_last = col_i64(st, 8);
	r->window_steps = col_i64(st, 9);
	r->mean_step_ns = col_i64(st, 10);
	r->median_step_ns = col_i64(st, 11);
	r->cv = col_f64(st, 12);
	r->peak_mem_bytes = col_i64(st, 13);
	r->nan_steps = col_i64(st, 14);
	r->skipped_steps = col_i64(st, 15);
	r->final_loss = col_f64(st, 16);
	r->is_baseline = sqlite3_column_int(st, 17);
}

/* Append the runs selected by sql (one optional text or integer parameter). */
static int query_runs(struct ts_ledger *l, const char *sql, const char *text, int64_t num,
		      struct ts_ledger_rows *rows, struct ts_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, s;

	if ((rc = prepare(l, sql, &st, err)))
		return rc;
	if (text)
		bind_str(st, 1, text);
	else if (num >= 0)
		sqlite3_bind_int64(st, 1, num);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		struct ts_ledger_run r;
		read_run(rows, st, &r);
		if (TS_VEC_PUSH(rows->runs, r)) {
			sqlite3_finalize(st);
			return ts_err_set(err, TS_ENOMEM, "out of memory reading the ledger");
		}
	}
	sqlite3_finalize(st);
	if (s != SQLITE_DONE)
		return db_fail(l, err, TS_EIO, "cannot read runs");
	return rows->arena.failed ? ts_err_set(err, TS_ENOMEM, "out of memory") : 0;
}

int ts_ledger_list_runs(struct ts_ledger *l, const char *workload,
			struct ts_ledger_rows *rows, struct ts_err *err)
{
	if (workload)
		return query_runs(l, RUN_COLUMNS "WHERE r.workload = ? ORDER BY r.id",
				  workload, -1, rows, err);
	return query_runs(l, RUN_COLUMNS "ORDER BY r.id", NULL, -1, rows, err);
}

int ts_ledger_get_run(struct ts_ledger *l, int64_t id, struct ts_ledger_rows *rows,
		      struct ts_err *err)
{
	size_t before = rows->runs.n;
	int rc = query_runs(l, RUN_COLUMNS "WHERE r.id = ?", NULL, id, rows, err);

	if (!rc && rows->runs.n == before)
		rc = ts_err_at(err, TS_EUSAGE, l->path, -1, -1, "no run with id %lld",
			       (long long)id);
	return rc;
}

/* Load each experiment's runs (baseline first) into rows->runs and point
 * the experiment at them once every query is done (the vector may move). */
static int attach_runs(struct ts_ledger *l, struct ts_ledger_rows *rows, size_t first_exp,
		       struct ts_err *err)
{
	size_t *start = NULL;
	size_t nexp = rows->exps.n - first_exp;
	int rc = 0;

	if (nexp == 0)
		return 0;
	start = calloc(nexp, sizeof(*start));
	if (!start)
		return ts_err_set(err, TS_ENOMEM, "out of memory reading the ledger");
	for (size_t i = 0; i < nexp; i++) {
		struct ts_ledger_experiment *e = &rows->exps.v[first_exp + i];
		size_t nb;

		start[i] = rows->runs.n;
		rc = query_runs(l, RUN_COLUMNS "JOIN experiment_runs x ON x.run_id = r.id "
				"WHERE x.experiment_id = ? AND x.side = 'baseline' ORDER BY r.id",
				NULL, e->id, rows, err);
		if (rc)
			goto out;
		nb = rows->runs.n - start[i];
		rc = query_runs(l, RUN_COLUMNS "JOIN experiment_runs x ON x.run_id = r.id "
				"WHERE x.experiment_id = ? AND x.side = 'candidate' ORDER BY r.id",
				NULL, e->id, rows, err);
		if (rc)
			goto out;
		e->nbaseline = nb;
		e->ncandidate = rows->runs.n - start[i] - nb;
	}
	for (size_t i = 0; i < nexp; i++) {
		struct ts_ledger_experiment *e = &rows->exps.v[first_exp + i];
		if (!rows->runs.v)
			continue;
		e->baseline = rows->runs.v + start[i];
		e->candidate = e->baseline + e->nbaseline;
	}
out:
	free(start);
	return rc;
}

static int query_exps(struct ts_ledger *l, const char *sql, const char *text, int64_t num,
		      struct ts_ledger_rows *rows, struct ts_err *err)
{
	sqlite3_stmt *st = NULL;
	size_t first = rows->exps.n;
	int rc, s;

	if ((rc = prepare(l, sql, &st, err)))
		return rc;
	if (text)
		bind_str(st, 1, text);
	else if (num >= 0)
		sqlite3_bind_int64(st, 1, num);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		struct ts_ledger_experiment e;
		memset(&e, 0, sizeof(e));
		e.id = sqlite3_column_int64(st, 0);
		e.created_ns = sqlite3_column_int64(st, 1);
		e.workload = col_str(rows, st, 2);
		e.variable = col_str(rows, st, 3);
		e.verdict = col_str(rows, st, 4);
		e.decision = col_str(rows, st, 5);
		e.ratio = col_f64(st, 6);
		e.ci95_low = col_f64(st, 7);
		e.ci95_high = col_f64(st, 8);
		e.correctness_passed = sqlite3_column_int(st, 9);
		e.reasons = col_str(rows, st, 10);
		e.evidence_json = col_str(rows, st, 11);
		if (TS_VEC_PUSH(rows->exps, e)) {
			sqlite3_finalize(st);
			return ts_err_set(err, TS_ENOMEM, "out of memory reading the ledger");
		}
	}
	sqlite3_finalize(st);
	if (s != SQLITE_DONE)
		return db_fail(l, err, TS_EIO, "cannot read experiments");
	return attach_runs(l, rows, first, err);
}

#define EXP_COLUMNS \
	"SELECT id, created_ns, workload, variable, verdict, decision, ratio, " \
	"ci95_low, ci95_high, correctness_passed, reasons, evidence FROM experiments "

int ts_ledger_list_experiments(struct ts_ledger *l, const char *workload,
			       struct ts_ledger_rows *rows, struct ts_err *err)
{
	if (workload)
		return query_exps(l, EXP_COLUMNS "WHERE workload = ? ORDER BY id", workload,
				  -1, rows, err);
	return query_exps(l, EXP_COLUMNS "ORDER BY id", NULL, -1, rows, err);
}

int ts_ledger_get_experiment(struct ts_ledger *l, int64_t id, struct ts_ledger_rows *rows,
			     struct ts_err *err)
{
	size_t before = rows->exps.n;
	int rc = query_exps(l, EXP_COLUMNS "WHERE id = ?", NULL, id, rows, err);

	if (!rc && rows->exps.n == before)
		rc = ts_err_at(err, TS_EUSAGE, l->path, -1, -1, "no experiment with id %lld",
			       (long long)id);
	return rc;
}

int64_t ts_ledger_count(struct ts_ledger *l, const char *table)
{
	char sql[96];
	sqlite3_stmt *st = NULL;
	int64_t n = -1;

	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s", table);
	if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

int ts_ledger_check(struct ts_ledger *l, struct ts_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	/* a damaged file may fail to prepare or to step: that is the answer */
	if (sqlite3_prepare_v2(l->db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK)
		return db_fail(l, err, TS_EPARSE, "integrity check");
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_fail(l, err, TS_EPARSE, "integrity check");
	}
	{
		const char *r = (const char *)sqlite3_column_text(st, 0);
		if (!r || strcmp(r, "ok") != 0) {
			rc = ts_err_at(err, TS_EPARSE, l->path, -1, -1, "integrity check: %s",
				       r ? r : "no answer");
			sqlite3_finalize(st);
			return rc;
		}
	}
	sqlite3_finalize(st);
	rc = 0;
	if (sqlite3_prepare_v2(l->db, "SELECT e.id, e.n_runs, (SELECT COUNT(*) FROM experiment_runs x "
			       "JOIN runs r ON r.id = x.run_id JOIN step_summaries s "
			       "ON s.run_id = r.id WHERE x.experiment_id = e.id) "
			       "FROM experiments e", -1, &st, NULL) != SQLITE_OK)
		return db_fail(l, err, TS_EPARSE, "cannot read the experiments");
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (sqlite3_column_int64(st, 1) != sqlite3_column_int64(st, 2)) {
			rc = ts_err_at(err, TS_EPARSE, l->path, -1, -1,
				       "experiment %lld declares %lld runs but has %lld",
				       (long long)sqlite3_column_int64(st, 0),
				       (long long)sqlite3_column_int64(st, 1),
				       (long long)sqlite3_column_int64(st, 2));
			break;
		}
	}
	sqlite3_finalize(st);
	return rc;
}

int ts_ledger_evidence_warnings(const char *evidence, struct ts_sb *out, size_t *n,
				struct ts_err *err)
{
	struct ts_json j;
	int tok, in_warnings = 0, rc = 0;

	*n = 0;
	if (!evidence)
		return 0;
	ts_json_init_mem(&j, evidence, strlen(evidence), TS_JSON_ALLOW_NAN, "experiment evidence");
	/* warnings[] at the top level: each object's "message" string; the
	 * other top-level values are skipped whole */
	while ((tok = ts_json_next(&j, err)) > TS_JSON_EOF) {
		if (tok == TS_JSON_KEY && j.depth == 1) {
			int warnings = TS_JSON_IS(&j, "warnings");
			if ((tok = ts_json_next(&j, err)) < 0)
				break;
			/* warnings is an array of objects; anything else is skipped */
			in_warnings = warnings && tok == TS_JSON_ARR;
			if (!in_warnings && (tok = ts_json_skip(&j, tok, err)) < 0)
				break;
		} else if (tok == TS_JSON_KEY && in_warnings && j.depth == 3 &&
			   TS_JSON_IS(&j, "message")) {
			size_t from = out->len;
			if ((tok = ts_json_next(&j, err)) < 0)
				break;
			if (tok != TS_JSON_STR)
				continue;
			if (ts_json_unescape(j.s, j.n, 1, out))
				out->failed = 1;
			/* one line per message: a newline or NUL in it is a blank */
			for (size_t k = from; !out->failed && k < out->len; k++)
				if (out->buf[k] == '\n' || out->buf[k] == '\0')
					out->buf[k] = ' ';
			ts_sb_addc(out, '\n');
			(*n)++;
		}
	}
	if (tok < 0)
		rc = tok;
	else if (out->failed)
		rc = ts_err_set(err, TS_ENOMEM, "out of memory reading experiment evidence");
	ts_json_release(&j);
	return rc;
}

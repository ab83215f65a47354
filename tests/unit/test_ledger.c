/* Unit tests for the SQLite ledger: round trip, migrations, concurrent
 * writers from several processes, and a writer killed with SIGKILL. */
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"
#include "trainscope/ledger.h"

static void tmp_db(char *buf, size_t n, const char *tag)
{
	snprintf(buf, n, "/tmp/ts-ledger-%s-%ld/ledger.db", tag, (long)getpid());
}

static void rm_db(const char *path)
{
	char cmd[600];
	char dir[512];
	const char *slash = strrchr(path, '/');

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return;
}

static int64_t count(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int64_t n = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/* One experiment with nb baseline and nc candidate runs. */
static int add_exp(struct ts_ledger *l, int nb, int nc, const char *verdict)
{
	struct ts_ledger_run runs[64];
	struct ts_ledger_experiment e;
	struct ts_err err;

	memset(&e, 0, sizeof(e));
	for (int i = 0; i < nb + nc; i++) {
		ts_ledger_run_init(&runs[i]);
		runs[i].source = i < nb ? "base/run" : "cand/run";
		runs[i].mean_step_ns = 300000000 + i;
		runs[i].contract_json = "{\"schema\": \"trainscope.contract/1\"}";
		runs[i].contract_label = "training-equivalent";
	}
	e.workload = "gpt-test";
	e.variable = "environment.env.NCCL_ALGO";
	e.verdict = verdict;
	e.decision = strcmp(verdict, "slower") ? "accepted" : "rejected";
	e.ratio = 1.1;
	e.ci95_low = 1.05;
	e.ci95_high = 1.15;
	e.correctness_passed = 1;
	e.reasons = "first\nsecond";
	e.baseline = runs;
	e.nbaseline = (size_t)nb;
	e.candidate = runs + nb;
	e.ncandidate = (size_t)nc;
	ts_err_init(&err);
	return ts_ledger_add_experiment(l, &e, NULL, &err);
}

TEST(ledger_round_trip)
{
	char path[256];
	struct ts_ledger l;
	struct ts_ledger_rows rows;
	struct ts_err err;
	int64_t id = 0;

	tmp_db(path, sizeof(path), "rt");
	rm_db(path);
	ts_err_init(&err);
	REQUIRE(ts_ledger_open(&l, path, 1, &err) == 0);
	l.now_ns = 1700000000LL * 1000000000LL;
	CHECK_I64(ts_ledger_version(&l), TS_LEDGER_SCHEMA_VERSION);
	CHECK_I64(add_exp(&l, 2, 1, "slower"), 0);
	CHECK_I64(add_exp(&l, 1, 1, "no_difference"), 0);
	ts_ledger_rows_init(&rows);
	REQUIRE(ts_ledger_list_experiments(&l, NULL, &rows, &err) == 0);
	REQUIRE(rows.exps.n == 2);
	CHECK_STR(rows.exps.v[0].verdict, "slower");
	CHECK_STR(rows.exps.v[0].decision, "rejected");
	CHECK_I64(rows.exps.v[0].nbaseline, 2);
	CHECK_I64(rows.exps.v[0].ncandidate, 1);
	CHECK_STR(rows.exps.v[0].candidate[0].source, "cand/run");
	CHECK_I64(rows.exps.v[0].created_ns, 1700000000LL * 1000000000LL);
	CHECK_NEAR(rows.exps.v[1].ci95_high, 1.15, 0);
	CHECK_STR(rows.exps.v[1].reasons, "first\nsecond");
	/* 5 runs in all; the identical contract body is stored once */
	ts_ledger_rows_release(&rows);
	ts_ledger_rows_init(&rows);
	REQUIRE(ts_ledger_list_runs(&l, "gpt-test", &rows, &err) == 0);
	CHECK_I64(rows.runs.n, 5);
	CHECK(isnan(rows.runs.v[0].cv));
	CHECK_I64(rows.runs.v[0].peak_mem_bytes, -1);
	id = rows.runs.v[3].id;
	ts_ledger_rows_release(&rows);
	CHECK_I64(count(path, "SELECT COUNT(*) FROM contracts"), 1);
	CHECK_I64(ts_ledger_set_baseline(&l, id, &err), 0);
	CHECK_I64(ts_ledger_set_baseline(&l, 999, &err), TS_EUSAGE);
	ts_ledger_rows_init(&rows);
	REQUIRE(ts_ledger_get_run(&l, id, &rows, &err) == 0);
	CHECK(rows.runs.v[0].is_baseline);
	ts_ledger_rows_release(&rows);
	CHECK_I64(ts_ledger_check(&l, &err), 0);
	ts_ledger_release(&l);
	{
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;
		REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
		REQUIRE(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK);
		REQUIRE(sqlite3_step(st) == SQLITE_ROW);
		CHECK_STR((const char *)sqlite3_column_text(st, 0), "wal");
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	rm_db(path);
}

TEST(ledger_refuses_newer_schema_and_non_database)
{
	char path[256];
	struct ts_ledger l;
	struct ts_err err;
	sqlite3 *db = NULL;
	FILE *f;

	tmp_db(path, sizeof(path), "ver");
	rm_db(path);
	ts_err_init(&err);
	REQUIRE(ts_ledger_open(&l, path, 1, &err) == 0);
	ts_ledger_release(&l);
	REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
	sqlite3_exec(db, "PRAGMA user_version=99", NULL, NULL, NULL);
	sqlite3_close(db);
	CHECK_I64(ts_ledger_open(&l, path, 0, &err), TS_EUNSUPPORTED);
	CHECK(strstr(err.msg, "99") != NULL);
	rm_db(path);
	/* a text file is not a ledger */
	REQUIRE(ts_ledger_open(&l, path, 1, &err) == 0); /* creates the folder */
	ts_ledger_release(&l);
	unlink(path);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("this is not a database, it is a text file with enough bytes to look at\n", f);
	fclose(f);
	CHECK(ts_ledger_open(&l, path, 0, &err) < 0);
	rm_db(path);
	/* missing file without create */
	CHECK_I64(ts_ledger_open(&l, "/tmp/ts-ledger-none/nothing.db", 0, &err), TS_EIO);
}

/* 6 processes x 10 experiments (3 runs each) at the same time: every write
 * must succeed (the busy timeout serialises them) and all 60 be present. */
TEST(ledger_concurrent_writers)
{
	char path[256];
	pid_t kids[6];
	struct ts_ledger l;
	struct ts_err err;
	int ok = 1;

	tmp_db(path, sizeof(path), "conc");
	rm_db(path);
	for (int k = 0; k < 6; k++) {
		kids[k] = fork();
		REQUIRE(kids[k] >= 0);
		if (kids[k] == 0) {
			struct ts_ledger cl;
			struct ts_err cerr;
			int bad = 0;
			ts_err_init(&cerr);
			if (ts_ledger_open(&cl, path, 1, &cerr) != 0)
				_exit(10);
			for (int i = 0; i < 10; i++)
				if (add_exp(&cl, 2, 1, "faster") != 0)
					bad++;
			ts_ledger_release(&cl);
			_exit(bad ? 11 : 0);
		}
	}
	for (int k = 0; k < 6; k++) {
		int st = 0;
		waitpid(kids[k], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			ok = 0;
	}
	CHECK(ok);
	CHECK_I64(count(path, "SELECT COUNT(*) FROM experiments"), 60);
	CHECK_I64(count(path, "SELECT COUNT(*) FROM runs"), 180);
	ts_err_init(&err);
	REQUIRE(ts_ledger_open(&l, path, 0, &err) == 0);
	CHECK_I64(ts_ledger_check(&l, &err), 0);
	ts_ledger_release(&l);
	rm_db(path);
}

/* A writer adding large experiments (60 runs each) in a loop is killed with
 * SIGKILL at several moments; afterwards the file passes integrity_check and
 * every experiment present has all of its 60 runs (none is partial). */
TEST(ledger_kill9_during_write)
{
	static const int delays_ms[] = { 15, 40, 75, 120, 160 };
	char path[256];
	struct ts_ledger l;
	struct ts_err err;
	int64_t before = 0;

	tmp_db(path, sizeof(path), "kill");
	rm_db(path);
	ts_err_init(&err);
	REQUIRE(ts_ledger_open(&l, path, 1, &err) == 0);
	ts_ledger_release(&l);
	for (size_t k = 0; k < sizeof(delays_ms) / sizeof(delays_ms[0]); k++) {
		struct timespec ts = { 0, delays_ms[k] * 1000000L };
		int st = 0;
		int64_t n;
		pid_t pid = fork();

		REQUIRE(pid >= 0);
		if (pid == 0) {
			struct ts_ledger cl;
			struct ts_err cerr;
			ts_err_init(&cerr);
			if (ts_ledger_open(&cl, path, TS_LEDGER_WRITE, &cerr) != 0)
				_exit(10);
			for (;;)
				add_exp(&cl, 30, 30, "slower");
		}
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		REQUIRE(ts_ledger_open(&l, path, 0, &err) == 0);
		CHECK_I64(ts_ledger_check(&l, &err), 0);
		ts_ledger_release(&l);
		n = count(path, "SELECT COUNT(*) FROM experiments");
		CHECK(n >= before);
		CHECK_I64(count(path, "SELECT COUNT(*) FROM runs"), n * 60);
		CHECK_I64(count(path, "SELECT COUNT(*) FROM experiment_runs"), n * 60);
		before = n;
	}
	CHECK(before > 0); /* the writer did get experiments in before dying */
	rm_db(path);
}

/* The warnings in recorded evidence, one line each: escapes decoded, a
 * newline or NUL inside a message a blank (a NUL once crashed `ledger
 * show`, which walks the lines as C strings), a warnings value that is not
 * an array and keys below other top-level values ignored, and text that is
 * not JSON refused with TS_EPARSE or TS_ETRUNC. */
TEST(ledger_evidence_warnings)
{
	struct ts_sb sb;
	struct ts_err err;
	size_t n;

	ts_sb_init(&sb);
	ts_err_init(&err);
	CHECK_I64(ts_ledger_evidence_warnings(
			  "{\"verdict\": \"slower\", \"window\": {\"warnings\": [{\"message\": \"no\"}]},"
			  " \"warnings\": [{\"code\": \"a\", \"message\": \"x\\u0000y\"},"
			  " {\"message\": 3}, {\"message\": \"p\\nq \\u00e9\"}]}",
			  &sb, &n, &err), 0);
	CHECK_I64((int64_t)n, 2);
	CHECK_I64((int64_t)sb.len, 11);
	CHECK(memcmp(sb.buf, "x y\np q \xc3\xa9\n", 11) == 0);
	ts_sb_reset(&sb);
	CHECK_I64(ts_ledger_evidence_warnings("{\"warnings\": {\"a\": {\"message\": \"x\"}}}",
					      &sb, &n, &err), 0);
	CHECK_I64((int64_t)n, 0);
	CHECK_I64((int64_t)sb.len, 0);
	CHECK_I64(ts_ledger_evidence_warnings(NULL, &sb, &n, &err), 0);
	CHECK_I64((int64_t)n, 0);
	CHECK(ts_ledger_evidence_warnings("{\"warnings\": [{\"message\": \"x\"}", &sb, &n, &err) < 0);
	CHECK(ts_ledger_evidence_warnings("not json", &sb, &n, &err) < 0);
	ts_sb_release(&sb);
}

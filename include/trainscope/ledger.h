/*
 * ledger.h - the experiment history in SQLite: runs, their contracts and
 * step summaries, A/B experiments with verdicts and evidence, and the
 * current baseline per workload. Negative results are stored like wins.
 *
 * One database file, opened in WAL mode with a busy timeout so several
 * processes (ranks, parallel `ab` jobs) can write at once. Every write is one
 * transaction: an experiment, its runs, their contracts and the links appear
 * together or not at all, also when the writer is killed mid-write.
 *
 * The schema is versioned with PRAGMA user_version and migrated forward on
 * open (TS_LEDGER_SCHEMA_VERSION); a database written by a newer trainscope
 * is refused (TS_EUNSUPPORTED) rather than misread.
 *
 * Times are integer nanoseconds since the Unix epoch; durations are integer
 * nanoseconds; memory is bytes. Unknown integers are -1, unknown doubles NaN,
 * unknown strings NULL.
 */
#ifndef TRAINSCOPE_LEDGER_H
#define TRAINSCOPE_LEDGER_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"

#define TS_LEDGER_SCHEMA_VERSION 1
#define TS_LEDGER_DEFAULT_PATH ".trainscope/ledger.db"
#define TS_LEDGER_BUSY_TIMEOUT_MS 30000

struct sqlite3;

struct ts_ledger {
	struct sqlite3 *db;
	int64_t now_ns;      /* fixed clock for tests (SOURCE_DATE_EPOCH); 0 = real time */
	char path[TS_ERR_PATH_MAX];
};

/*
 * Which file to use: `opt` (--db) when given, else `env` ($TRAINSCOPE_DB)
 * when non-empty, else TS_LEDGER_DEFAULT_PATH. Returns a pointer to one of
 * the arguments or the constant.
 */
const char *ts_ledger_pick_path(const char *opt, const char *env);

/* How to open: read commands never write, never take a write lock and so
 * never wait behind writers (WAL readers see the last commit); writers
 * check the file's integrity before their first write. */
enum ts_ledger_mode {
	TS_LEDGER_READ = 0,   /* read only: no WAL switch, no migration */
	TS_LEDGER_CREATE = 1, /* write; create the file and a missing parent */
	TS_LEDGER_WRITE = 2   /* write an existing file */
};

/*
 * Open in `mode` (enum ts_ledger_mode). Writers switch to WAL, run PRAGMA
 * integrity_check (and the invariants of ts_ledger_check) before anything
 * is written, and migrate the schema; a damaged file is refused with
 * TS_EPARSE and how to recover, and is left untouched. Returns 0, TS_EIO
 * (cannot open/create, or the file is missing when not creating),
 * TS_EUNSUPPORTED (newer schema, or READ of a file that needs a migration
 * first) or TS_EPARSE (not a database, damaged, or an empty file when not
 * creating) with err naming the file.
 */
int ts_ledger_open(struct ts_ledger *l, const char *path, int mode, struct ts_err *err);
void ts_ledger_release(struct ts_ledger *l);

/* Schema version of the open database (PRAGMA user_version). */
int ts_ledger_version(struct ts_ledger *l);

/* A run as recorded: identity, contract and the step summary of its window. */
struct ts_ledger_run {
	int64_t id;                 /* filled on insert / read */
	int64_t created_ns;
	const char *workload;
	const char *source;         /* path the run was read from */
	const char *contract_json;  /* the contract document, or NULL */
	const char *contract_label; /* "training-equivalent" / "benchmark-only" / NULL */
	int64_t steps_logged;
	int64_t window_first;       /* steady window, iteration numbers (inclusive) */
	int64_t window_last;
	int64_t window_steps;
	int64_t mean_step_ns;
	int64_t median_step_ns;
	double cv;                  /* coefficient of variation of step time in the window */
	int64_t peak_mem_bytes;
	int64_t nan_steps;
	int64_t skipped_steps;
	double final_loss;
	int is_baseline;            /* read side: the current baseline of its workload */
};

/* Set every numeric field of r to "unknown" and strings to NULL. */
void ts_ledger_run_init(struct ts_ledger_run *r);

/* An A/B experiment with its verdict and evidence. */
struct ts_ledger_experiment {
	int64_t id;
	int64_t created_ns;
	const char *workload;
	const char *variable;       /* the declared changed field, or NULL */
	const char *verdict;        /* faster / slower / no_difference / inconclusive / invalid */
	const char *decision;       /* accepted / rejected / invalid */
	double ratio;               /* candidate / baseline mean step time */
	double ci95_low, ci95_high;
	int correctness_passed;
	const char *reasons;        /* newline-separated */
	const char *evidence_json;  /* the full trainscope.ab/1 document */
	struct ts_ledger_run *baseline;
	size_t nbaseline;
	struct ts_ledger_run *candidate;
	size_t ncandidate;
};

/*
 * Insert an experiment with all its runs, contracts and links in one
 * transaction; run ids are written back into e->baseline[i].id and
 * e->candidate[i].id, the experiment id into *id (may be NULL).
 */
int ts_ledger_add_experiment(struct ts_ledger *l, struct ts_ledger_experiment *e,
			     int64_t *id, struct ts_err *err);

/* Make run `run_id` the baseline of its workload. TS_EUSAGE if no such run. */
int ts_ledger_set_baseline(struct ts_ledger *l, int64_t run_id, struct ts_err *err);

/*
 * Read side. Rows and every string they point to live in `arena` and stay
 * valid until ts_ledger_rows_release(). Ordered by id.
 */
struct ts_ledger_rows {
	TS_VEC(struct ts_ledger_run) runs;
	TS_VEC(struct ts_ledger_experiment) exps;
	struct ts_arena arena;
};

void ts_ledger_rows_init(struct ts_ledger_rows *rows);
void ts_ledger_rows_release(struct ts_ledger_rows *rows);

/* All runs (workload NULL) or those of one workload. */
int ts_ledger_list_runs(struct ts_ledger *l, const char *workload,
			struct ts_ledger_rows *rows, struct ts_err *err);
/* All experiments (workload NULL) or one workload's, oldest first, with
 * their run lists filled. */
int ts_ledger_list_experiments(struct ts_ledger *l, const char *workload,
			       struct ts_ledger_rows *rows, struct ts_err *err);
/* One run, or one experiment (with its runs). TS_EUSAGE if the id is unknown. */
int ts_ledger_get_run(struct ts_ledger *l, int64_t id, struct ts_ledger_rows *rows,
		      struct ts_err *err);
int ts_ledger_get_experiment(struct ts_ledger *l, int64_t id, struct ts_ledger_rows *rows,
			     struct ts_err *err);

/*
 * The messages of the warnings an experiment's evidence (the trainscope.ab/1
 * document ab recorded: its top-level warnings array) carries, appended to
 * out one per line, in their order (a newline or NUL inside a message
 * becomes a blank); *n gets their count. 0, TS_ENOMEM, or TS_EPARSE when evidence is
 * not JSON (err names the byte offset). NULL evidence: none.
 */
int ts_ledger_evidence_warnings(const char *evidence, struct ts_sb *out, size_t *n,
				struct ts_err *err);

/* PRAGMA integrity_check plus the ledger's own invariants (every experiment
 * has as many run links as it declares). 0 when consistent, TS_EPARSE with
 * the first problem in err otherwise. */
int ts_ledger_check(struct ts_ledger *l, struct ts_err *err);

/* Row counts for `ledger check` (-1 when unreadable). */
int64_t ts_ledger_count(struct ts_ledger *l, const char *table);

#endif

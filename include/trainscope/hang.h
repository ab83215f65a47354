/*
 * hang.h - distributed-hang triage for NCCL and MCCL process groups.
 *
 * Readers (src/hang/), each chosen by content, never by file name, fill one
 * evidence set (struct ts_hang_set):
 *   - text: PyTorch watchdog / progress / dump-signal / take-down lines of
 *     every era (WorkNCCL(...) and WorkMCCL(...), `[rank3]:`, reporter line
 *     numbers, `(RayWorkerWrapper pid=...)`, unpadded `E626` dates),
 *     TORCH_NCCL_DESYNC_DEBUG reports (multi-line, kept together),
 *     TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprint mismatches, NCCL_DEBUG=INFO
 *     COLL lines (hex opCount), NET/IB size-mismatch warnings, NCCL RAS text
 *     reports and fr_trace text reports;
 *   - Flight Recorder dumps as pickle (a safe reader of the protocol-2 data
 *     subset: anything that would import or call code is refused with the
 *     class and byte offset), as JSON, and as the pasted Python repr;
 *   - NCCL RAS JSON reports.
 * ts_hang_analyze() turns the set into incidents, one per hang, each with a
 * class from a fixed vocabulary, the culprits (the minority at the first
 * disagreeing collective sequence id of a process group), the evidence lines,
 * findings and advice.
 *
 * Ownership: a ts_hang_set owns every string and array in it (its arena and
 * vectors); ts_hang_set_release() frees them. Pointers handed out stay valid
 * until then. Memory: text is read line by line (one line at a time in
 * memory); a dump is read whole up to TS_HANG_DUMP_MAX bytes and only its
 * entries are kept.
 */
#ifndef TRAINSCOPE_HANG_H
#define TRAINSCOPE_HANG_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"

#define TS_HANG_DUMP_MAX ((size_t)1 << 30) /* largest dump read */
#define TS_HANG_TEXT_MAX 512                /* evidence text kept per line */

enum ts_hang_class {
	TS_HANG_NOT_JOINED = 0, /* some ranks never issued the collective */
	TS_HANG_MISMATCH,       /* same seq, different op / sizes / dtypes / state */
	TS_HANG_ALL_STUCK,      /* every reporting rank issued it, none completed */
	TS_HANG_INIT,           /* the first collectives (seq 1, COALESCED at start) */
	TS_HANG_WATCHDOG_LATE,  /* ran for far beyond the timeout: watchdog starved */
	TS_HANG_RANK_DEAD,      /* a rank died or stopped answering */
	TS_HANG_UNDECIDED       /* the evidence cannot tell (findings say what is missing) */
};
const char *ts_hang_class_name(enum ts_hang_class c);

enum ts_hang_op {
	TS_OP_UNKNOWN = 0, TS_OP_ALL_REDUCE, TS_OP_ALL_GATHER, TS_OP_REDUCE_SCATTER,
	TS_OP_BROADCAST, TS_OP_REDUCE, TS_OP_GATHER, TS_OP_SCATTER, TS_OP_ALL_TO_ALL,
	TS_OP_SEND, TS_OP_RECV, TS_OP_BARRIER, TS_OP_COALESCED
};
/* Normalised name ("all_reduce", ...; "unknown"). */
const char *ts_hang_op_name(enum ts_hang_op k);
/* Kind of an op as printed by any source: "ALLREDUCE", "_ALLGATHER_BASE",
 * "nccl:all_reduce", "mccl:send 0->1", "AllGather", "ALLTOALL_BASE"... */
enum ts_hang_op ts_hang_op_kind(const char *op, size_t n);

enum ts_hang_state { TS_ST_UNKNOWN = 0, TS_ST_SCHEDULED, TS_ST_STARTED, TS_ST_COMPLETED, TS_ST_TIMED_OUT };

/* One evidence line: file index into set->files, 1-based line (-1 when the
 * source has no lines, e.g. a pickle), text cut to TS_HANG_TEXT_MAX bytes. */
struct ts_hang_ev {
	uint32_t file;
	int64_t line;
	const char *text;
	int month, day;     /* glog date (MMDD with month unpadded: E515 = 5/15), -1 */
	int64_t tod_ns;     /* glog time of day in ns, -1 */
};

/* A process group as the evidence names it; -1 / NULL when not known. */
struct ts_hang_pg {
	int64_t id;         /* PG ID (FR pg_id) */
	const char *guid;   /* PG GUID / FR process-group name */
	const char *desc;   /* "default_pg", "mesh_ulysses" ... */
	const char *ranks;  /* FR pg_config ranks, canonical "0,1,2" or NULL */
	int id_varies;      /* its dumps give it different pg_ids (a process-local
			       index): id is -1, unknown */
};

/* One rank's view of one collective (or coalesced group) of one group. */
struct ts_hang_work {
	int64_t rank;       /* global rank, -1 unknown */
	int pg;             /* index into set->pgs, -1 unknown */
	int64_t seq;        /* collective sequence id on that group */
	int64_t record_id;  /* FR record id, -1 */
	int64_t p2p_seq;    /* FR p2p_seq_id, -1 */
	int64_t created_ns; /* FR time_created_ns (the rank's wall clock when it
			       enqueued the op), -1 */
	int64_t completed_ns; /* FR time_discovered_completed_ns (its wall clock
				 when its watchdog saw the op complete: a
				 collective completes on every member at once,
				 so it aligns the members' clocks), -1 */
	const char *op;     /* as printed */
	enum ts_hang_op kind;
	int64_t numel_in, numel_out;   /* -1 unknown */
	const char *shape;  /* FR sizes and dtypes, canonical text, or NULL */
	enum ts_hang_state state;
	int64_t timeout_ms, ran_for_ms; /* -1 unknown */
	int from_dump;      /* 1 when it comes from a Flight Recorder dump */
	uint32_t file;      /* index into set->files */
	int ev;             /* index into set->evs, -1 (dump entries get one
			       only when an incident cites them) */
};

/* A watchdog progress line: failed seq (-1 if the line has none),
 * last enqueued and completed work on that group. */
struct ts_hang_progress {
	int64_t rank;
	int pg;
	int64_t seq, enqueued, completed;
	int64_t signal_from; /* dump signal: the rank that timed out, -1; -2 "this local rank" */
	int ev;
};

/* A rank set named by a report, e.g. RAS "2 ranks have launched up to
 * operation 641" or a desync snapshot "#315 started ranks: [0, 1, 2]". */
struct ts_hang_group {
	int64_t seq;        /* operation / collective number in the report's count */
	const char *what;   /* "started ALLREDUCE", "launched AllGather" ... */
	int64_t count;      /* ranks in the set (RAS gives counts), -1 */
	TS_VEC(int64_t) ranks; /* listed ranks (may be fewer than count) */
	int ev;
};

enum ts_hang_report_kind {
	TS_REP_DESYNC = 1,  /* TORCH_NCCL_DESYNC_DEBUG report */
	TS_REP_FR_TRACE,    /* fr_trace analyser text output */
	TS_REP_RAS,         /* NCCL RAS report (text or JSON) */
	TS_REP_DETAIL,      /* TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprint mismatch */
	TS_REP_IB_MISMATCH  /* NCCL WARN NET/IB collective mismatch error */
};

/* A report that already names sets of ranks. Fields not given are -1/NULL. */
struct ts_hang_report {
	enum ts_hang_report_kind kind;
	int64_t reporter;   /* rank that wrote it */
	int pg;
	int64_t seq;        /* sequence number (fr_trace) or report count (desync #N) */
	int64_t record_id;  /* fr_trace internal record id */
	const char *op;
	int64_t numel_in, numel_out;
	int64_t world;      /* world / communicator size */
	const char *state;  /* fr_trace collective state, RAS status */
	const char *errors; /* RAS errors column */
	TS_VEC(int64_t) culprits;  /* ranks the report blames */
	TS_VEC(int64_t) missing;   /* fr_trace missing ranks; RAS missing/dead ranks */
	TS_VEC(int64_t) expected;  /* expected ranks */
	int64_t frames;     /* fr_trace: stack frames printed, -1 */
	int mismatch;       /* fr_trace: "Collective sequence number: N has errors" form */
	const char *version;/* RAS: "2.26.2" (NCCL version line) */
	int64_t cuda_runtime, cuda_driver, nodes, procs_per_node; /* RAS, -1 */
	TS_VEC(struct ts_hang_group) groups;
	int dead;           /* RAS JSON: a missing rank is considered dead / unresponsive */
	int64_t size_a, size_b; /* IB mismatch: local and remote size in bytes */
	TS_VEC(int) evs;
};

/* One NCCL_DEBUG=INFO COLL line. */
struct ts_hang_coll {
	const char *host;
	int64_t pid, tid, dev, nranks, op_count, count, dtype;
	const char *op;
	const char *comm;
	int ev;
};

/* A Flight Recorder dump: where a rank's buffer of one group starts. */
struct ts_hang_dump {
	int64_t rank;
	uint32_t file;
	const char *version;
	const char *backend; /* "nccl", "mccl", "xccl"... from profiling names */
	int64_t entries;
	int64_t cut_at;      /* the dump ends inside its document (a rank killed while
			      * dumping): the bytes read, its entries the complete ones
			      * before the cut; -1 when whole */
	int timing;          /* an entry is "started" or its pg_status has a last started
			      * collective: TORCH_NCCL_ENABLE_TIMING was on, so an entry
			      * still "scheduled" never started on its GPU */
	int entries_cut;     /* cut_at >= 0 and the cut is inside its entries list (or
			      * before it): entries may be missing, so its rank is not
			      * taken as absent past them; 0 when the list closed
			      * before the cut (its entries are all there) */
};

/* An input nothing was read from, or no dump: an empty file or a binary
 * one (any name: neither a dump nor a text log, not read), or one named like
 * a Flight Recorder dump ("nccl_trace_rank_3") that holds no dump a reader
 * here takes: read as a text log, or, found in a directory and detected as
 * something else (kind set), not read. */
struct ts_hang_unread {
	uint32_t file;
	int64_t nul_at;          /* offset of its first NUL byte (first 4 KiB), -1 when none */
	unsigned char head[4];   /* its first bytes */
	int nhead;
	const char *kind;        /* what detection says it is (ts_kind_name), or NULL */
	int empty;               /* the file is empty (0 bytes): any name */
	int binary;              /* no text (ts_hang_binary): not read */
	int64_t nontext, scanned; /* binary: bytes of its first `scanned` that are no text */
	int64_t bad_at;          /* offset of its first NUL or non-text byte, -1 */
	int nul_early;           /* a NUL byte before its first line end (binary) */
	const char *error;       /* a dump that opens like one but cannot be parsed
				    (a corrupt pickle): the reader's message, at
				    bad_at; NULL otherwise */
	int64_t error_line;      /* its line (JSON, repr), -1 */
};

/* A text log's last line without its line end (the log was cut while it
 * was written): not read, since a number at its end may be the head of a
 * longer one ("SeqNum=15" of 1580). */
struct ts_hang_cut_line {
	uint32_t file;
	int64_t offset;          /* of the line */
	int64_t line;            /* 1-based */
};

/* One pg_status item of a dump: keyed by the dump's own pg_id (process
 * local). pg -1 while that id names no group the dump's entries or
 * pg_config tell (ts_hang_analyze then tries the dumps together). */
struct ts_hang_pg_status {
	int64_t rank;
	int pg;
	int64_t enqueued, started, completed;
	int64_t id;          /* the dump's pg_id */
	uint32_t file;       /* the dump */
};

/* A group of a dump whose pg_status holds an id no group was found for:
 * each (pg_id, group) its entries or pg_config tell, and each pg_config
 * group of its own with id -1 (none told). */
struct ts_hang_local {
	uint32_t file;
	int64_t id;
	int pg;
};

struct hang_pool;
struct ts_hang_set {
	struct ts_arena arena;
	struct ts_intern strs;       /* op names and shapes of dump entries */
	TS_VEC(const char *) files;
	TS_VEC(struct ts_hang_ev) evs;
	TS_VEC(struct ts_hang_pg) pgs;
	TS_VEC(struct ts_hang_work) works;
	TS_VEC(struct ts_hang_progress) progress;
	TS_VEC(struct ts_hang_report) reports;
	TS_VEC(struct ts_hang_coll) colls;
	TS_VEC(struct ts_hang_dump) dumps;
	TS_VEC(struct ts_hang_unread) unread;
	TS_VEC(struct ts_hang_cut_line) cut_lines;
	TS_VEC(struct ts_hang_pg_status) status;
	TS_VEC(struct ts_hang_local) locals;
	TS_VEC(int64_t) ranks_seen;  /* global ranks named by `[rankN]:` prefixes or dumps */
	int64_t world_size;          /* --world-size, -1 */
	int fr_disabled;             /* "FlightRecorder is disabled" seen */
	int dump_signal;             /* a dump signal / preparing-to-dump line seen */
	int takedown;                /* "taking the entire process down" seen */
	int mccl_lines;              /* WorkMCCL / ProcessGroupMCCL / mccl: seen */
	int nccl_lines;              /* WorkNCCL / ProcessGroupNCCL / NCCL INFO seen */
	int ras_ok;                  /* a RAS report says errors OK */
	/* vendor evidence: first line seen of each */
	int ev_musa, ev_maca, ev_cuda, ev_torchcomms;
	int ev_pgmccl;               /* ProcessGroupMCCL / WorkMCCL (torch_musa's classes) */
	int ev_musa_state;           /* a dump with "mccl_comm_state" (torch_musa's key) */
	int64_t lines;               /* text lines read */
	/* private: the log timeouts of works (from_dump 0) by key (rank, seq, pg)
	 * and (rank, seq, none), so a repeated timeout line is found without a
	 * scan of every work (hang_lines.c); tmo_work[id] the work of key id */
	struct ts_intern tmo_keys;
	TS_VEC(size_t) tmo_work;
	/* private: the groups by name (hang_model.c): pg_guids interns each
	 * guid, pg_head[id] its lowest group index, pg_next[pg] the next
	 * higher group of the same guid (-1 ends) */
	struct ts_intern pg_guids;
	TS_VEC(int) pg_head;
	TS_VEC(int) pg_next;
	struct hang_pool *scratch;   /* private: parse memory reused across dumps */
};

void ts_hang_set_init(struct ts_hang_set *s);
void ts_hang_set_release(struct ts_hang_set *s);

/*
 * Read one file ("-" for stdin; gzip inflated) into s, choosing the reader
 * by content: a pickle (first byte 0x80), a JSON or Python-repr document
 * (first non-blank byte '{'), else text lines; an empty or binary input
 * (ts_hang_binary) is not read but kept as unread (struct ts_hang_unread:
 * a finding and an unread-input warning). Returns 0 or a negative
 * ts_code with err naming the file and position: TS_EPARSE for malformed
 * dumps, TS_EUNSUPPORTED for a pickle that carries code (GLOBAL, REDUCE,
 * ...), TS_ELIMIT for a dump over TS_HANG_DUMP_MAX. Text lines that are not
 * hang evidence are skipped, never an error. A dump's rank comes from a
 * "rank" key when present, else from the trailing number of the file name
 * (after dropping an extension), else it is unknown (-1).
 */
int ts_hang_read_file(struct ts_hang_set *s, const char *path, struct ts_err *err);

/*
 * A file of a directory that is not read (detection says it is kind, no
 * hang evidence): when its name is a Flight Recorder dump's
 * ("nccl_trace_rank_3", "mccl_trace_rank_3"), it is kept as an unread input
 * (an unread-input warning and finding) rather than passed over without a
 * word. kind must outlive the set (ts_kind_name). Returns 0 or TS_ENOMEM.
 */
int ts_hang_skip_file(struct ts_hang_set *s, const char *path, const char *kind);

/*
 * The readers on a memory buffer (not copied); name is for messages. A
 * buffer that opens with gzip's magic is inflated first, so a damaged or
 * cut gzip stream is an error (TS_EPARSE, TS_ETRUNC); text never is.
 */
int ts_hang_read_mem(struct ts_hang_set *s, const void *data, size_t n,
		     const char *name, struct ts_err *err);
int ts_hang_read_lines_mem(struct ts_hang_set *s, const void *data, size_t n,
			   const char *name, struct ts_err *err);
int ts_hang_read_pickle_mem(struct ts_hang_set *s, const void *data, size_t n,
			    const char *name, int64_t rank, struct ts_err *err);
/* JSON and Python repr share one literal grammar (True/true, None/null,
 * 'x'/"x", tuples). */
int ts_hang_read_pyobj_mem(struct ts_hang_set *s, const void *data, size_t n,
			   const char *name, int64_t rank, struct ts_err *err);

/*
 * Whether d[0..n) is binary, neither a dump nor a text log (the rule the
 * reader applies to every input it would read as text): in its first 4 KiB
 * a NUL byte before the first line end, or more than one byte in 8 before
 * the first NUL that is no text (a control byte other than tab, line and
 * page ends, backspace and ESC; DEL; invalid UTF-8). A log whose end a crash
 * padded with NUL bytes after its lines stays text. u (may be NULL) gets
 * nul_at, nontext, scanned and bad_at. d may be NULL when n is 0.
 */
int ts_hang_binary(const unsigned char *d, size_t n, struct ts_hang_unread *u);

/*
 * Nothing was read from any input: every file is empty (0 bytes) or binary
 * (struct ts_hang_unread). Returns TS_EPARSE with err naming the file (the
 * first one, when several) and saying why, or 0 when some input was read
 * (an empty or binary file among others is a finding and an unread-input
 * warning).
 */
int ts_hang_nothing_read(const struct ts_hang_set *s, struct ts_err *err);

/* ------------------------------------------------------------- analysis */

struct ts_hang_incident {
	enum ts_hang_class cls;
	int pg;                      /* index into set->pgs, -1 */
	int64_t seq;
	const char *op;
	enum ts_hang_op kind;
	int64_t numel_in, numel_out, timeout_ms, ran_for_ms;
	int64_t last_enqueued, last_completed;
	TS_VEC(int64_t) reporting;   /* sorted, unique */
	TS_VEC(int64_t) culprits;
	TS_VEC(int64_t) missing;
	TS_VEC(int) evs;             /* indices into set->evs, in file order */
	TS_VEC(const char *) notes;  /* what the incident's numbers mean / lack */
};

struct ts_hang_advice {
	const char *knob;  /* env var */
	const char *value;
	const char *why;
};

/* A rank that enqueued a group's last collective late in a group that did
 * not hang (TS_HANG_STRAGGLER_MS), on the members' clocks aligned by the
 * collectives they completed together: its largest lag over its groups. */
struct ts_hang_straggler {
	int64_t rank;
	int pg;                      /* index into set->pgs */
	int64_t seq;                 /* the group's last seq every member holds */
	int64_t lag_ms;              /* after the last of the other members */
	int64_t first_lag_ms;        /* at the group's first seq every member holds */
	size_t groups;               /* groups it was that late in */
	int64_t offset_ms;           /* its clock's offset, taken off its times:
				      * ms ahead of offset_from's clock */
	int64_t offset_from;         /* the lowest rank its clock is aligned with */
};

struct ts_hang_result {
	TS_VEC(struct ts_hang_incident) incidents;
	TS_VEC(struct ts_hang_straggler) stragglers; /* each also a finding */
	TS_VEC(const char *) findings;
	const char *clock_finding;   /* one of findings, or NULL: finished
				      * groups' lags read on hosts' clocks that
				      * could not be aligned, no straggler named
				      * (reports show it) */
	TS_VEC(struct ts_hang_advice) advice;
	const char *backend;         /* "nccl", "mccl", "unknown" */
	const char *vendor;          /* "nvidia", "moore_threads", "metax", "unknown" */
	const char *vendor_why;      /* the evidence chain, one line */
	int exit_code;               /* 1 culprit or decided class, 0 otherwise */
	size_t p2p_pending;          /* dumps' point-to-point ops not completed (not
				      * matched across ranks: each a finding) */
	struct ts_arena arena;
};

/* The ratio of ran-for to timeout above which the watchdog was late. */
#define TS_HANG_LATE_RATIO 2
/* A rank that enqueued a group's last collective this many ms after every
 * other member (time_created_ns), in a group with no hang, is a straggler
 * (a finding, not an incident). */
#define TS_HANG_STRAGGLER_MS 1000
/* The fewest collectives two ranks must both have completed (with
 * time_discovered_completed_ns) for one's clock offset to the other's to
 * be taken: the median of the differences of those completions. */
#define TS_HANG_CLOCK_SHARED 3

/*
 * Analyse the evidence: per process group (keyed by name and rank set) align
 * ranks by collective sequence id, detect ring-buffer truncation, compare
 * (op, sizes, dtypes, state) per seq and blame the minority (a tie is
 * undecided with both groups in the notes); log-only evidence is grouped by
 * (group, seq). A group of dumps with no incident whose last collective one
 * rank enqueued TS_HANG_STRAGGLER_MS or more after the others is a
 * straggler finding. Fills r (release with ts_hang_result_release). Returns 0 or
 * TS_ENOMEM.
 */
int ts_hang_analyze(struct ts_hang_set *s, struct ts_hang_result *r, struct ts_err *err);
void ts_hang_result_release(struct ts_hang_result *r);

struct ts_sb;
/* schema trainscope.hang/1 (pretty when pretty != 0). */
void ts_hang_json(const struct ts_hang_set *s, const struct ts_hang_result *r,
		  struct ts_sb *out, int pretty);
struct ts_jw;
/* The same object as one value into an open writer (other documents embed
 * it, e.g. diagnose's "hang" block); schema != 0 (the document of its own)
 * adds the "schema" key and the "warnings" array of ts_hang_warnings. */
void ts_hang_jw(struct ts_jw *w, const struct ts_hang_set *s, const struct ts_hang_result *r,
		int schema);
struct ts_warnings;
/* Add the evidence's warnings to w: a truncated-dump warning per cut dump
 * (file, byte of the cut), a duplicate-rank warning per second dump of a
 * rank, a dump-version-mismatch when the dumps' versions differ, a
 * world-size-mismatch when a rank seen is at or above --world-size (no
 * file), a truncated-log warning per text log whose last
 * line is cut (struct ts_hang_cut_line) and an unread-input warning per
 * input that looks like a dump but is none trainscope reads (struct
 * ts_hang_unread), in the words of the hang analysis's findings. `hang --json` and diagnose carry
 * them. Returns 0 or TS_ENOMEM. */
int ts_hang_warnings(const struct ts_hang_set *s, struct ts_warnings *w);
/* The table per incident, findings and advice. */
void ts_hang_text(const struct ts_hang_set *s, const struct ts_hang_result *r,
		  struct ts_sb *out);

#endif

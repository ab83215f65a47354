/*
 * trace_nsys.h - `trace` glue for Nsight Systems exports: one input file
 * becomes one slot per (process, device) rank, each read into the trace
 * model by the library; the export's capability report, launch joins and
 * per-device walls are rendered after the usual per-rank report; and
 * `trace --report NAME` (the nsys stats reports) for nsys and Kineto inputs.
 */
#ifndef TS_CLI_TRACE_NSYS_H
#define TS_CLI_TRACE_NSYS_H

#include "cli.h"
#include "trainscope/jsonw.h"
#include "trainscope/nsys.h"
#include "trainscope/paths.h"

/* What `trace` keeps per slot of an nsys export. */
struct trace_nsys_slot {
	int is_nsys;
	size_t rank;                    /* rank index inside the export */
	int first;                      /* first slot of its file (file-level facts rendered once) */
	struct ts_nsys_rank rk;
	struct ts_nsys_rank_info info;
	struct ts_dev_walls walls;      /* the rank's device */
	int has_walls;
	/* file-level facts */
	char schema[32], product[64];
	struct ts_nsys_caps caps;
	struct ts_nsys_joins joins;
	int64_t null_end[TS_NT_COUNT];
	struct ts_nsys_gaps gaps;
	int64_t nccl_nvtx_ranges;
	int64_t window_lo_ns, window_hi_ns;
	size_t nranks;
};

/* 1 when path is an SQLite file (by content), to be read as an nsys export. */
int trace_nsys_is(const char *path);

/*
 * Replace files with one entry per slot (an nsys export repeated once per
 * rank, other files as they are) and give per-slot nsys facts (*out,
 * calloc'ed, files->n entries). Returns 0 or an exit status after printing
 * the error (an export that cannot be opened, or one without GPU activity).
 */
int trace_nsys_expand(struct cli_ctx *ctx, struct ts_paths *files, struct trace_nsys_slot **out);

/* Read slot ns of path into t (freshly initialised); fills ns->info and walls. */
int trace_nsys_read(struct trace_nsys_slot *ns, const char *path, const struct ts_nsys_read_opts *o,
		    struct ts_trace *t, struct ts_err *err);

struct ts_warnings;
/* Add the exports' warnings (launch rows not joined, NULL times), once
 * per file, to w. */
void trace_nsys_warnings(struct ts_warnings *w, const struct trace_nsys_slot *ns, char *const *paths,
			 size_t n);
/* The nsys section of the text report and of the JSON ("nsys" key). */
void trace_nsys_text(struct ts_sb *out, const struct trace_nsys_slot *ns, char *const *paths, size_t n);
void trace_nsys_json(struct ts_jw *w, const struct trace_nsys_slot *ns, char *const *paths, size_t n);

/* `trace --report NAME`: the report over every input (nsys and Kineto),
 * as CSV (csv = 1), JSON (ctx->json) or a table. Returns an exit status. */
int trace_stats_report(struct cli_ctx *ctx, const struct ts_paths *files, const char *name, int csv);

#endif

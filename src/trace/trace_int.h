/*
 * trace_int.h - hooks private to src/trace/ (and the reader's own tests):
 * appending a batch of events parsed on another thread into a trace, and
 * the split-parse knob of the reader.
 */
#ifndef TRAINSCOPE_TRACE_INT_H
#define TRAINSCOPE_TRACE_INT_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/trace.h"

/*
 * Append events [0, b->ev.n) of the batch b to t, as if they had been
 * pushed one by one after t's own: every column, the escaped 32-bit values
 * (event indices offset by t's count) and the side tables coll, xfer, mem
 * and flops (event indices offset too). remap[id] is t's string id for
 * b's string id (names, raw categories, pid/tid strings, the coll
 * strings); TS_NO_ID stays TS_NO_ID. b's strings, metadata and arena are
 * not looked at. Returns 0, or TS_ENOMEM / TS_ELIMIT (over_budget set,
 * as ts_trace_reserve) with t unchanged.
 */
int trace_append_batch(struct ts_trace *t, const struct ts_trace *b, const uint32_t *remap);

/* Empty a batch for reuse, keeping its column and side-table memory
 * (strings are released). */
void trace_batch_clear(struct ts_trace *b);

/*
 * The reader with an explicit split policy (tests and benchmarks; the
 * public ts_trace_read / ts_trace_read_mem use TRACE_SPLIT_AUTO).
 * split: TRACE_SPLIT_OFF parses on one thread; TRACE_SPLIT_AUTO splits
 * plain regular files and plain memory of at least TRACE_SPLIT_FROM bytes
 * into TRACE_SPLIT_CHUNK chunks, and gzip of an estimated inflated size of
 * at least TRACE_SPLIT_FROM into its inflated buffers; any other value
 * splits every plain seekable input and every gzip input into chunks of
 * that many bytes (tiny chunks exercise the boundary checks; for gzip the
 * inflated buffers get that size). Plain pipes are always parsed on one
 * thread. The result is the same in every case. stats (may be NULL) says
 * what the split did.
 */
#define TRACE_SPLIT_OFF ((size_t)-1)
#define TRACE_SPLIT_AUTO ((size_t)0)
#define TRACE_SPLIT_FROM ((uint64_t)16 << 20)
#define TRACE_SPLIT_CHUNK ((size_t)2 << 20)

struct trace_split_stats {
	uint64_t chunks;      /* chunks the helper thread took */
	uint64_t handed;      /* of them, batches appended (boundary confirmed) */
	uint64_t events;      /* events that came from those batches */
	double wait_s;        /* the reader's time waiting for the helper */
	double helper_s;      /* the helper's CPU time parsing chunks */
};

int trace_read_split(struct ts_trace *t, const char *path, const struct ts_trace_opts *opts,
		     size_t split, struct trace_split_stats *stats, struct ts_err *err);
int trace_read_mem_split(struct ts_trace *t, const void *data, size_t n, const char *name,
			 const struct ts_trace_opts *opts, size_t split,
			 struct trace_split_stats *stats, struct ts_err *err);

#endif

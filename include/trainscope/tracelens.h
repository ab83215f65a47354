/*
 * tracelens.h - TraceLens compatibility mode of `trace` (--tracelens-compat).
 *
 * Reproduces TraceLens's gpu_timeline (AMD-AGI/TraceLens 171dd74,
 * TreePerfAnalyzer.get_df_gpu_timeline with default options) for one trace
 * file. These are TraceLens's numbers under TraceLens's rules, not
 * trainscope's (docs/tracelens-compat.md lists every difference):
 *   - only GPU events (cat "kernel", "gpu_memcpy", "gpu_memset") linked to
 *     a cuda_runtime/cuda_driver call: through an ac2g flow pair with the
 *     call's linking id (args.correlation when the first launch call has
 *     one, else args["External id"]), the GPU event being the last event
 *     with (flow end's pid, tid, id); or, for cudaGraphLaunch /
 *     hipGraphLaunch, every GPU event with that correlation;
 *   - window = first to last linked GPU event (total_time);
 *   - classes: memcpy = gpu_memcpy or a rocclr copy kernel; communication =
 *     name contains nccl, rccl or cross_device_reduce (any case); every
 *     other event, memsets included, is computation;
 *   - float64 microseconds as Python parses the JSON text, ts + dur in
 *     double, sequential sums. An event without ts or dur, or with a
 *     negative dur, is left out (TraceLens fails on it).
 * With recompute set (--tracelens-recompute) it also gives TraceLens's
 * --detect_recompute split: two independent timelines, over the linked
 * events launched inside a python_function span named
 * "torch/utils/checkpoint.py(...): recompute_fn" on the launching thread
 * (is_recompute true) and over the others. Each has its own first-to-last
 * window, so their idle and total rows do not add up to anything.
 *
 * The input trace must be read with flow events (and, for the recompute
 * split, python_function events) kept. No allocation outlives the call.
 */
#ifndef TRAINSCOPE_TRACELENS_H
#define TRAINSCOPE_TRACELENS_H

#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/jsonw.h"
#include "trainscope/trace.h"

/* One gpu_timeline, microseconds (TraceLens's CSV has the same in ms). */
struct ts_tl_timeline {
	int64_t events;            /* GPU events in this timeline */
	double computation_us, exposed_comm_us, exposed_memcpy_us;
	double busy_us, idle_us, total_us, total_comm_us, total_memcpy_us;
};

struct ts_tracelens {
	int linking_correlation;   /* 1: args.correlation, 0: External id */
	int64_t gpu_events;        /* all GPU-category events with ts and dur */
	int64_t linked;            /* of which linked (the timeline's events) */
	struct ts_tl_timeline all; /* the default gpu_timeline */
	int recompute;             /* split computed */
	struct ts_tl_timeline split[2]; /* [0] is_recompute False, [1] True */
};

/*
 * Fill tl from one trace. Returns 0; TS_EPARSE with TraceLens's meaning
 * ("No GPU events found in the trace", err naming the file) when no GPU
 * event is linked; TS_ENOMEM. A recompute block without events has
 * events 0 (its metrics are then meaningless and written as null).
 */
int ts_tracelens_analyze(const struct ts_trace *t, int recompute, struct ts_tracelens *tl,
			 struct ts_err *err);

/* The "tracelens" JSON object of one rank (value only; the caller writes
 * the key). */
void ts_tracelens_write_json(const struct ts_tracelens *tl, struct ts_jw *w);

/* The timeline as a table (ms and percent of total_time, like TraceLens's
 * CSV), appended to out. */
void ts_tracelens_render(const struct ts_tracelens *tl, const char *file, struct ts_sb *out);

#endif

/*
 * annotate.h - write a trace back with trainscope's findings as extra
 * tracks (Perfetto / chrome://tracing): GPU idle gaps (host gaps on
 * CPU-only traces), exposed communication, exposed memcpy, data-loader
 * stalls, outlier steps with their reason, and the wall verdict.
 *
 * The original events are copied byte for byte (plain or gzip input; the
 * output is plain JSON) and the finding events are inserted at the end of
 * the event array, on their own process "trainscope findings" (pid
 * TS_ANNOTATE_PID). A truncated input is closed after its last complete
 * event. The output file is written atomically.
 */
#ifndef TRAINSCOPE_ANNOTATE_H
#define TRAINSCOPE_ANNOTATE_H

#include "trainscope/core.h"
#include "trainscope/profile.h"

#define TS_ANNOTATE_PID 0x7a5c0de
#define TS_ANNOTATE_TELE_PID (TS_ANNOTATE_PID + 1)
/* Gaps shorter than this are not drawn (they would swamp the viewer). */
#define TS_ANNOTATE_MIN_GAP_NS 10000

struct ts_telemetry;

struct ts_annotate_info {
	const struct ts_rank_prof *prof;
	const struct ts_prof_tracks *tracks;
	const struct ts_job_prof *job;   /* may be NULL */
	/* Device telemetry drawn as counter tracks (power, SM clock,
	 * utilisation per GPU, process "trainscope telemetry"), or NULL. Its
	 * Unix-time samples are put on the trace's clock with base_ns
	 * (baseTimeNanoseconds); only samples inside the rank window +- 1 s. */
	const struct ts_telemetry *tele;
	int64_t base_ns;
};

/*
 * Write in_path plus the finding tracks to out_path. Returns 0; TS_EIO when
 * a file cannot be read or written; TS_EPARSE (err names the byte offset)
 * when in_path is not well-formed JSON up to its event array (a trace the
 * reader could only read with recovery cannot be copied verbatim);
 * TS_ETRUNC when it ends before its event array starts (a file cut inside
 * the array is written up to its last complete element, then closed).
 */
int ts_annotate_write(const char *out_path, const char *in_path,
		      const struct ts_annotate_info *ai, struct ts_err *err);

/* The finding events alone, as JSON array elements separated by commas
 * (no brackets), appended to out. */
void ts_annotate_events(struct ts_sb *out, const struct ts_annotate_info *ai);

#endif

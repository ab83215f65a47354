/*
 * tele_internal.h - what the files of src/telemetry share and nothing
 * outside them uses.
 */
#ifndef TRAINSCOPE_TELE_INTERNAL_H
#define TRAINSCOPE_TELE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/telemetry.h"

/*
 * Note the sample gaps of the samples from index `from` on (those of the
 * file read last, whose GPUs are its own) as "sample-gap" notes of t: one note per gap (the first
 * five, then one counting the rest), each with its time, its length and
 * the median interval it is judged against (TS_TELE_GAP_FACTOR). Sampling
 * rounds (ticks) are timed by their earliest sample; fewer than 3 timed
 * intervals judge nothing.
 */
void tele_note_gaps(struct ts_telemetry *t, size_t from);

/* "2026-03-01T10:01:09Z" (".123" before the Z when the time has ms) of a
 * Unix ns time into buf; the bare ns count when the date is out of range. */
const char *tele_fmt_utc(char *buf, size_t cap, int64_t ns);

#endif

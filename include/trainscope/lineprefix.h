/*
 * lineprefix.h - what launchers, log collectors and terminals put in front
 * of the lines a training process prints, told once for every reader of
 * such lines (training logs, hang evidence, telemetry captures).
 */
#ifndef TRAINSCOPE_LINEPREFIX_H
#define TRAINSCOPE_LINEPREFIX_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"

/*
 * A launcher prefix at the very start of s[0..n):
 *   "12: "           srun -l / --label (the task: global rank), padded
 *                    with blanks to the widest task number (" 3: "); the
 *                    ':' must be followed by a blank or end s, so
 *                    "10:27:27" is no prefix
 *   "[default3]:"    torchrun (role name in lower case letters and '_',
 *                    then the local rank; "[rank3]:", PyTorch's own
 *                    prefix of the global rank, is none)
 *   "[1,3]<stdout>:" mpirun --tag-output (job, rank, stream)
 *   "retraining/0 [default3]:"
 *                    torchx (NeMo-Run's local executor): the replica
 *                    (role, '/', replica number, a blank) before
 *                    torchrun's prefix; the rank is torchrun's local rank
 *                    (the global rank on one node, as "[default3]:";
 *                    on several, ts_launcher_replica() gives the node)
 * Returns the prefix's length through its ':' (a blank after it is not
 * part of it), 0 when s starts with none; *rank (may be NULL) gets the
 * number it names (at most 7 digits).
 */
size_t ts_launcher_prefix(const char *s, size_t n, int64_t *rank);

/*
 * The replica (node) N of a torchx prefix "ROLE/N [defaultK]:" at the very
 * start of s[0..n), -1 when s starts with no such prefix. With it the
 * rank ts_launcher_prefix() gives is the local rank on that node: the
 * global rank is N x nproc_per_node + K.
 */
int64_t ts_launcher_replica(const char *s, size_t n);

/*
 * A log collector's timestamp at the start of s[0..n): RFC 3339 with a
 * 'T', "2025-09-01T05:20:03.118748741Z " (kubectl logs --timestamps,
 * Loki, Cloud Logging exports), fraction and zone optional, zone 'Z' or
 * +hh:mm. Returns its length with the one blank the collector puts after
 * it (the line's own blanks stay), 0 when s starts with none (a timestamp
 * without a blank after it is none).
 */
size_t ts_collector_stamp(const char *s, size_t n);

/*
 * A tqdm progress bar in s[0..n) (Lightning's bars are tqdm bars):
 * "{desc}: {pct}%|{bar}| {i}/{total} [{elapsed}<{left}, {rate}{, key=value
 * ...}]", "{desc}: {i}it [{elapsed}, ...]" without a total, or the same
 * with the bar's blocks lost in a copy ("67% 10/15 [02:53<01:18, ...]").
 * Told by the count before " [" and the elapsed time ("02:53", "9:07:58")
 * that opens the bracket. Returns the length of s through the bracket's
 * ']' (what a process prints while the bar is shown follows it), 0 when s
 * holds no bar; *in, *in_n get the bracket's content.
 */
size_t ts_progress_bar(const char *s, size_t n, const char **in, size_t *in_n);

/*
 * The same bar with its bracket still open at the end of s[0..n) (a line
 * cut by the end of its input inside the bar's "[...]"): 1 with *in,
 * *in_n the bracket's content up to the end; 0 when s holds no bar head,
 * or its bracket closes.
 */
int ts_progress_bar_open(const char *s, size_t n, const char **in, size_t *in_n);

/*
 * s[0..n) without its ANSI control sequences (ESC '[' ... final byte
 * 0x40-0x7e: colours, cursor moves), as a terminal would not show them.
 * Returns 0 when s holds no ESC (out untouched); else out is reset and
 * gets the text, and 1 is returned (check out->failed).
 */
int ts_ansi_strip(struct ts_sb *out, const char *s, size_t n);

#endif

/*
 * paths.h - turn command-line inputs (files, directories, globs) into a
 * sorted list of files.
 */
#ifndef TRAINSCOPE_PATHS_H
#define TRAINSCOPE_PATHS_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"

struct ts_paths {
	char **v;   /* owned strings */
	size_t n;
	size_t cap;
};

void ts_paths_init(struct ts_paths *p);
void ts_paths_release(struct ts_paths *p);

/*
 * Expand one argument: a file is added as is ("-" too), a directory adds
 * its regular files (recursively up to `depth` levels, hidden entries
 * skipped), a pattern with * ? [ is expanded with glob(3). Each expansion
 * is sorted (C locale byte order) so output is deterministic. A missing
 * path or a pattern that matches nothing is TS_EIO naming it.
 */
int ts_paths_add(struct ts_paths *p, const char *arg, int depth, struct ts_err *err);

/* Base name of a path (pointer into path). */
const char *ts_basename(const char *path);

/*
 * The rank a file's name gives: the first "rank" (any case) in the base
 * name followed, after an optional '-' or '_', by digits (at most 7 read):
 * "rank3.pt.trace.json", "train_rank-12.log", "Rank_0.jsonl"; -1 when the
 * name gives none. The one reading of a trace's and a log's file name.
 */
int64_t ts_rank_in_name(const char *path);

#endif

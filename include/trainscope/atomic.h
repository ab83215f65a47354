/*
 * atomic.h - write a file so readers see the old or the new content, never
 * half of one: write a temp file in the same directory, fsync, rename.
 */
#ifndef TRAINSCOPE_ATOMIC_H
#define TRAINSCOPE_ATOMIC_H

#include <stdio.h>
#include "trainscope/core.h"

struct ts_atomic {
	FILE *fp;            /* write here between open and commit */
	char tmp[TS_ERR_PATH_MAX + 32];
	char path[TS_ERR_PATH_MAX];
};

/* Create the temp file next to path. Returns 0 or TS_EIO/TS_ELIMIT. */
int ts_atomic_open(struct ts_atomic *a, const char *path, struct ts_err *err);
/* Flush, fsync and rename over path. On failure the temp file is removed
 * and path is untouched. */
int ts_atomic_commit(struct ts_atomic *a, struct ts_err *err);
/* Remove the temp file (safe after commit and on a zeroed struct). */
void ts_atomic_abort(struct ts_atomic *a);
/* open + write n bytes + commit. */
int ts_write_file_atomic(const char *path, const void *data, size_t n,
			 struct ts_err *err);

#endif

/*
 * atomic.h - write an output so readers see the old or the new content,
 * never half of one, without harming what the path names.
 *
 * How a path is written (the one policy for every `-o` and annotated trace):
 *   "-"                     standard output, written through;
 *   a symlink               followed to its final target (the link stays);
 *   a regular file or none  a temp file in the target's directory, fsync,
 *                           rename over the target;
 *   anything else           (character device, FIFO, socket, /dev/fd/N of a
 *                           pipe) opened and written through, never replaced.
 * Write errors are reported on every path (/dev/full gives ENOSPC).
 *
 * While a temp file exists its name is registered so that a signal handler
 * can remove it (ts_atomic_cleanup_signal); it is also removed by commit
 * failure and abort.
 */
#ifndef TRAINSCOPE_ATOMIC_H
#define TRAINSCOPE_ATOMIC_H

#include <stdio.h>
#include "trainscope/core.h"

struct ts_atomic {
	FILE *fp;            /* write here between open and commit */
	char tmp[TS_ERR_PATH_MAX + 32]; /* temp file, "" when writing through */
	char path[TS_ERR_PATH_MAX];     /* the name given (for messages) */
	char target[TS_ERR_PATH_MAX];   /* what is written: symlinks resolved */
	int direct;          /* 1: written through (stdout, device, FIFO) */
	int slot;            /* private: temp registration + 1, 0 none */
};

/* Open path for writing as described above. Returns 0 or TS_EIO/TS_ELIMIT
 * with err naming path (a missing directory, a symlink loop, no access). */
int ts_atomic_open(struct ts_atomic *a, const char *path, struct ts_err *err);
/* Flush and check for write errors; for a temp file also fsync and rename
 * over the target. On failure the temp file is removed and the target is
 * untouched; TS_EIO with the system's reason ("No space left on device"). */
int ts_atomic_commit(struct ts_atomic *a, struct ts_err *err);
/* Close and remove the temp file (safe after commit and on a zeroed struct). */
void ts_atomic_abort(struct ts_atomic *a);
/* open + write n bytes + commit. */
int ts_write_file_atomic(const char *path, const void *data, size_t n,
			 struct ts_err *err);
/* Async-signal-safe: unlink every registered temp file. For the CLI's
 * SIGINT/SIGTERM/SIGHUP/SIGBUS handlers. */
void ts_atomic_cleanup_signal(void);

#endif

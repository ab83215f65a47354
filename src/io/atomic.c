/*
 * atomic.c - all-or-nothing file writes.
 *
 * Reports, annotated traces and contracts are written through here so an
 * interrupted run never leaves a half-written file under the final name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "trainscope/atomic.h"

int ts_atomic_open(struct ts_atomic *a, const char *path, struct ts_err *err)
{
	int fd;

	memset(a, 0, sizeof(*a));
	if (strlen(path) >= sizeof(a->path))
		return ts_err_at(err, TS_ELIMIT, path, -1, -1, "path too long");
	snprintf(a->path, sizeof(a->path), "%s", path);
	snprintf(a->tmp, sizeof(a->tmp), "%s.tmp.XXXXXX", path);
	fd = mkstemp(a->tmp);
	if (fd < 0) {
		a->tmp[0] = '\0';
		return ts_err_at(err, TS_EIO, path, -1, -1, "cannot create: %s",
				 strerror(errno));
	}
	a->fp = fdopen(fd, "wb");
	if (!a->fp) {
		close(fd);
		unlink(a->tmp);
		a->tmp[0] = '\0';
		return ts_err_at(err, TS_EIO, path, -1, -1, "cannot open: %s",
				 strerror(errno));
	}
	return 0;
}

void ts_atomic_abort(struct ts_atomic *a)
{
	if (a->fp) {
		fclose(a->fp);
		a->fp = NULL;
	}
	if (a->tmp[0]) {
		unlink(a->tmp);
		a->tmp[0] = '\0';
	}
}

int ts_atomic_commit(struct ts_atomic *a, struct ts_err *err)
{
	int bad = 0;
	int saved = 0;

	if (!a->fp)
		return ts_err_set(err, TS_EINTERNAL, "atomic write not open");
	if (fflush(a->fp) || ferror(a->fp) || fsync(fileno(a->fp))) {
		bad = 1;
		saved = errno;
	}
	if (fclose(a->fp) && !bad) {
		bad = 1;
		saved = errno;
	}
	a->fp = NULL;
	if (!bad) {
		/* mkstemp creates 0600; give the file the usual mode */
		mode_t um = umask(0);
		umask(um);
		chmod(a->tmp, 0666 & ~um);
		if (rename(a->tmp, a->path)) {
			bad = 1;
			saved = errno;
		}
	}
	if (bad) {
		unlink(a->tmp);
		a->tmp[0] = '\0';
		return ts_err_at(err, TS_EIO, a->path, -1, -1, "cannot write: %s",
				 strerror(saved));
	}
	a->tmp[0] = '\0';
	return 0;
}

int ts_write_file_atomic(const char *path, const void *data, size_t n,
			 struct ts_err *err)
{
	struct ts_atomic a;
	int rc = ts_atomic_open(&a, path, err);

	if (rc)
		return rc;
	if (n && fwrite(data, 1, n, a.fp) != n) {
		int saved = errno;
		ts_atomic_abort(&a);
		return ts_err_at(err, TS_EIO, path, -1, -1, "cannot write: %s",
				 strerror(saved));
	}
	return ts_atomic_commit(&a, err);
}

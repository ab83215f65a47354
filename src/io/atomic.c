/*
 * atomic.c - all-or-nothing file writes that never replace what is not a
 * regular file.
 *
 * Reports, annotated traces and contracts are written through here so an
 * interrupted run never leaves a half-written file under the final name.
 * As root, renaming a temp file over /dev/null or /dev/stdout would replace
 * the device node or the link, so only regular files (or new names) get the
 * temp+rename treatment; everything else is written through.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "trainscope/atomic.h"

/* ------------------------------------------------ temp file registry */

#define TEMP_SLOTS 16

static char temp_name[TEMP_SLOTS][TS_ERR_PATH_MAX + 32];
static volatile int temp_used[TEMP_SLOTS];
static pthread_mutex_t temp_mu = PTHREAD_MUTEX_INITIALIZER;

/* Claim a slot before the temp file exists; 0 when all are taken (the file
 * is then still removed on normal paths, only not from a signal). */
static int temp_register(const char *name)
{
	int got = 0;

	pthread_mutex_lock(&temp_mu);
	for (int i = 0; i < TEMP_SLOTS && !got; i++) {
		if (!temp_used[i]) {
			memcpy(temp_name[i], name, strlen(name) + 1);
			__atomic_store_n(&temp_used[i], 1, __ATOMIC_SEQ_CST);
			got = i + 1;
		}
	}
	pthread_mutex_unlock(&temp_mu);
	return got;
}

static void temp_unregister(int slot)
{
	if (slot <= 0)
		return;
	pthread_mutex_lock(&temp_mu);
	__atomic_store_n(&temp_used[slot - 1], 0, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&temp_mu);
}

void ts_atomic_cleanup_signal(void)
{
	for (int i = 0; i < TEMP_SLOTS; i++)
		if (__atomic_load_n(&temp_used[i], __ATOMIC_SEQ_CST))
			unlink(temp_name[i]);
}

/* ------------------------------------------------ path resolution */

/* Names under /dev and /proc (e.g. /dev/stdout -> /proc/self/fd/1) are
 * never replaced, whatever they point to. */
static int is_system_name(const char *p)
{
	return strncmp(p, "/dev/", 5) == 0 || strncmp(p, "/proc/", 6) == 0;
}

/* Follow symlinks from path to the final name (which may not exist yet).
 * Returns 0 or TS_ELIMIT / TS_EIO. */
static int resolve(const char *path, char *out, size_t cap, struct ts_err *err)
{
	char link[TS_ERR_PATH_MAX];
	struct stat st;

	if (strlen(path) >= cap)
		return ts_err_at(err, TS_ELIMIT, path, -1, -1, "path too long");
	memcpy(out, path, strlen(path) + 1);
	for (int hops = 0;; hops++) {
		/* /proc/self/fd/N are magic links (to "pipe:[N]"): the kernel
		 * follows them on open, a name-level walk cannot */
		if (is_system_name(out) || lstat(out, &st) || !S_ISLNK(st.st_mode))
			return 0;
		if (hops == 40)
			return ts_err_at(err, TS_EIO, path, -1, -1,
					 "cannot write: too many levels of symbolic links");
		ssize_t n = readlink(out, link, sizeof(link) - 1);
		if (n < 0)
			return ts_err_at(err, TS_EIO, path, -1, -1, "cannot write: %s",
					 strerror(errno));
		link[n] = '\0';
		if (link[0] == '/') {
			memcpy(out, link, (size_t)n + 1);
		} else {
			char *slash = strrchr(out, '/');
			size_t dir = slash ? (size_t)(slash - out) + 1 : 0;
			if (dir + (size_t)n >= cap)
				return ts_err_at(err, TS_ELIMIT, path, -1, -1, "path too long");
			memcpy(out + dir, link, (size_t)n + 1);
		}
	}
}

/* ------------------------------------------------ open / commit */

static int open_direct(struct ts_atomic *a, int regular, struct ts_err *err)
{
	int fd = open(a->target, O_WRONLY | O_CLOEXEC | O_NOCTTY | (regular ? O_TRUNC : 0));

	if (fd < 0)
		return ts_err_at(err, TS_EIO, a->path, -1, -1, "cannot open for writing: %s",
				 strerror(errno));
	a->fp = fdopen(fd, "wb");
	if (!a->fp) {
		int saved = errno;
		close(fd);
		return ts_err_at(err, TS_EIO, a->path, -1, -1, "cannot open: %s",
				 strerror(saved));
	}
	a->direct = 1;
	return 0;
}

int ts_atomic_open(struct ts_atomic *a, const char *path, struct ts_err *err)
{
	struct stat st;
	int fd, rc, exists;

	memset(a, 0, sizeof(*a));
	if (strlen(path) >= sizeof(a->path))
		return ts_err_at(err, TS_ELIMIT, path, -1, -1, "path too long");
	memcpy(a->path, path, strlen(path) + 1);
	if (strcmp(path, "-") == 0) {
		a->fp = stdout;
		a->direct = 1;
		memcpy(a->target, "-", 2);
		return 0;
	}
	if ((rc = resolve(path, a->target, sizeof(a->target), err)))
		return rc;
	exists = stat(a->target, &st) == 0;
	if ((exists && !S_ISREG(st.st_mode)) || is_system_name(a->target)) {
		if (exists && S_ISDIR(st.st_mode))
			return ts_err_at(err, TS_EIO, path, -1, -1, "is a directory");
		return open_direct(a, exists && S_ISREG(st.st_mode), err);
	}
	if (strlen(a->target) + 12 >= sizeof(a->tmp))
		return ts_err_at(err, TS_ELIMIT, path, -1, -1, "path too long");
	snprintf(a->tmp, sizeof(a->tmp), "%s.tmp.XXXXXX", a->target);
	/* registered before it exists, so a signal in between is harmless */
	a->slot = temp_register(a->tmp);
	fd = mkstemp(a->tmp);
	if (fd < 0) {
		int saved = errno;
		temp_unregister(a->slot);
		a->slot = 0;
		a->tmp[0] = '\0';
		return ts_err_at(err, TS_EIO, path, -1, -1, "cannot create: %s",
				 strerror(saved));
	}
	if (a->slot)
		memcpy(temp_name[a->slot - 1], a->tmp, strlen(a->tmp) + 1);
	/* mkstemp creates 0600: keep an existing file's mode, else the usual one */
	mode_t um = umask(0);
	umask(um);
	fchmod(fd, exists ? (st.st_mode & 07777) : (0666 & ~um));
	a->fp = fdopen(fd, "wb");
	if (!a->fp) {
		int saved = errno;
		close(fd);
		ts_atomic_abort(a);
		return ts_err_at(err, TS_EIO, path, -1, -1, "cannot open: %s",
				 strerror(saved));
	}
	return 0;
}

void ts_atomic_abort(struct ts_atomic *a)
{
	if (a->fp) {
		if (a->fp == stdout)
			fflush(stdout);
		else
			fclose(a->fp);
		a->fp = NULL;
	}
	if (a->tmp[0]) {
		unlink(a->tmp);
		a->tmp[0] = '\0';
	}
	temp_unregister(a->slot);
	a->slot = 0;
}

int ts_atomic_commit(struct ts_atomic *a, struct ts_err *err)
{
	int bad = 0;
	int saved = 0;

	if (!a->fp)
		return ts_err_set(err, TS_EINTERNAL, "atomic write not open");
	errno = 0;
	if (fflush(a->fp) || ferror(a->fp) || (!a->direct && fsync(fileno(a->fp)))) {
		bad = 1;
		saved = errno ? errno : EIO;
	}
	if (a->fp != stdout && fclose(a->fp) && !bad) {
		bad = 1;
		saved = errno;
	}
	a->fp = NULL;
	if (!bad && !a->direct && rename(a->tmp, a->target)) {
		bad = 1;
		saved = errno;
	}
	if (bad) {
		ts_atomic_abort(a);
		return ts_err_at(err, TS_EIO, a->path, -1, -1, "cannot write: %s",
				 strerror(saved));
	}
	a->tmp[0] = '\0';
	temp_unregister(a->slot);
	a->slot = 0;
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

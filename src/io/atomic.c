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
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "trainscope/atomic.h"

/* ------------------------------------------------ temp file registry */

#define TEMP_SLOTS 16

static char temp_name[TEMP_SLOTS][TS_ERR_PATH_MAX + 32];
/* 0 free, 1 holds the name of a file to remove, 2 claimed (name not valid) */
static volatile int temp_used[TEMP_SLOTS];
static pthread_mutex_t temp_mu = PTHREAD_MUTEX_INITIALIZER;

/* Claim a slot before the temp file exists ("" claims it without a name);
 * 0 when all are taken (the file
 * is then still removed on normal paths, only not from a signal). */
static int temp_register(const char *name)
{
	int got = 0;

	pthread_mutex_lock(&temp_mu);
	for (int i = 0; i < TEMP_SLOTS && !got; i++) {
		if (!temp_used[i]) {
			memcpy(temp_name[i], name, strlen(name) + 1);
			__atomic_store_n(&temp_used[i], name[0] ? 1 : 2, __ATOMIC_SEQ_CST);
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

/* Create "TARGET.tmp.XXXXXX" (six random letters) exclusively, writing
 * each candidate name into the registry slot before the file can exist.
 * Returns the descriptor, or -1 with errno. */
static int create_temp(char *tmp, size_t cap, const char *target, int slot)
{
	static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	struct timespec now;
	uint64_t x;

	clock_gettime(CLOCK_REALTIME, &now);
	x = (uint64_t)now.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 32 ^
	    (uint64_t)now.tv_sec ^ (uint64_t)(uintptr_t)tmp;
	for (int attempt = 0; attempt < 100; attempt++) {
		int fd, n = snprintf(tmp, cap, "%s.tmp.", target);
		for (int i = 0; i < 6; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			tmp[n + i] = al[x % (sizeof(al) - 1)];
		}
		tmp[n + 6] = '\0';
		if (slot) {
			/* the handler never sees a half-copied name */
			pthread_mutex_lock(&temp_mu);
			__atomic_store_n(&temp_used[slot - 1], 2, __ATOMIC_SEQ_CST);
			memcpy(temp_name[slot - 1], tmp, strlen(tmp) + 1);
			__atomic_store_n(&temp_used[slot - 1], 1, __ATOMIC_SEQ_CST);
			pthread_mutex_unlock(&temp_mu);
		}
		fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

void ts_atomic_cleanup_signal(void)
{
	for (int i = 0; i < TEMP_SLOTS; i++)
		if (__atomic_load_n(&temp_used[i], __ATOMIC_SEQ_CST) == 1)
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
	/* the registered name is the file's name before the file exists, so a
	 * signal at any point removes exactly what was created (mkstemp would
	 * create the file before its name could be registered) */
	a->slot = temp_register("");
	fd = create_temp(a->tmp, sizeof(a->tmp), a->target, a->slot);
	if (fd < 0) {
		int saved = errno;
		temp_unregister(a->slot);
		a->slot = 0;
		a->tmp[0] = '\0';
		return ts_err_at(err, TS_EIO, path, -1, -1, "cannot create: %s",
				 strerror(saved));
	}
	/* created 0600: keep an existing file's mode, else the usual one */
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

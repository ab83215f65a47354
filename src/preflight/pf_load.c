/*
 * pf_load.c - load one accelerator library in a forked child.
 *
 * Why: dlopen runs the library's constructors and its version calls may
 * talk to the kernel driver; a wedged driver or a broken install must not
 * hang or crash preflight. The child dlopens, asks the library for its
 * version with its own call, writes "key value" lines to a pipe and exits;
 * the parent waits up to the timeout, then SIGKILLs it. A child stuck in
 * the kernel (uninterruptible sleep) cannot be reaped at once: it is left
 * behind and reported, never waited for.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "trainscope/preflight.h"

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void put(int fd, const char *key, const char *val)
{
	char line[700];
	int n = snprintf(line, sizeof(line), "%s %s\n", key, val);

	if (n > 0 && write(fd, line, (size_t)n > sizeof(line) - 1 ? sizeof(line) - 1 : (size_t)n) < 0)
		_exit(3);
}

#define SYM(h, var, name) (*(void **)&(var) = dlsym((h), (name)))

/* NCCL and MCCL codes: major*10000+minor*100+patch since NCCL 2.9, before
 * that major*1000+minor*100+patch. cuDNN: the same switch at v9. */
static void decode_mmp(char *buf, size_t size, long v, long split)
{
	if (v >= split)
		snprintf(buf, size, "%ld.%ld.%ld", v / 10000, v % 10000 / 100, v % 100);
	else
		snprintf(buf, size, "%ld.%ld.%ld", v / 1000, v % 1000 / 100, v % 100);
}

static void version_call(int fd, void *h, const char *name)
{
	char buf[160] = "", src[64] = "";
	int v = 0, r = 0;

	if (!strcmp(name, "cuda") || !strcmp(name, "cudart")) {
		int (*fn)(int *);
		const char *sym = name[4] ? "cudaRuntimeGetVersion" : "cuDriverGetVersion";
		if (SYM(h, fn, sym) && (r = fn(&v)) == 0) {
			snprintf(buf, sizeof(buf), "%d.%d", v / 1000, v % 1000 / 10);
		} else if (fn) {
			snprintf(buf, sizeof(buf), "%s returned %d", sym, r);
			put(fd, "E", buf);
			return;
		}
		snprintf(src, sizeof(src), "%s", sym);
	} else if (!strcmp(name, "nvml")) {
		int (*init)(void), (*shut)(void), (*drv)(char *, unsigned);
		if (SYM(h, init, "nvmlInit_v2") && SYM(h, drv, "nvmlSystemGetDriverVersion")) {
			if ((r = init()) != 0) {
				/* 18 = NVML_ERROR_LIB_RM_VERSION_MISMATCH, 9 = DRIVER_NOT_LOADED */
				snprintf(buf, sizeof(buf), "nvmlInit_v2 returned %d%s", r,
					 r == 18 ? " (driver/library version mismatch)" :
					 r == 9 ? " (driver not loaded)" : "");
				put(fd, "E", buf);
				return;
			}
			if (drv(buf, sizeof(buf)) != 0)
				buf[0] = 0;
			if (SYM(h, shut, "nvmlShutdown"))
				shut();
			snprintf(src, sizeof(src), "nvmlSystemGetDriverVersion");
		}
	} else if (!strcmp(name, "nccl") || !strcmp(name, "mccl")) {
		int (*fn)(int *);
		const char *sym = name[0] == 'n' ? "ncclGetVersion" : "mcclGetVersion";
		if (SYM(h, fn, sym) && fn(&v) == 0) {
			decode_mmp(buf, sizeof(buf), v, 20900);
			snprintf(src, sizeof(src), "%s", sym);
		}
	} else if (!strcmp(name, "cudnn")) {
		size_t (*fn)(void);
		if (SYM(h, fn, "cudnnGetVersion")) {
			decode_mmp(buf, sizeof(buf), (long)fn(), 90000);
			snprintf(src, sizeof(src), "cudnnGetVersion");
		}
	} else if (!strcmp(name, "cupti") || !strcmp(name, "mupti")) {
		int (*fn)(unsigned *);
		unsigned u = 0;
		const char *sym = name[0] == 'c' ? "cuptiGetVersion" : "muptiGetVersion";
		if (SYM(h, fn, sym) && fn(&u) == 0) {
			snprintf(buf, sizeof(buf), "api %u", u);
			snprintf(src, sizeof(src), "%s", sym);
		}
	} else if (!strcmp(name, "musart") || !strcmp(name, "musa")) {
		int (*fn)(int *);
		const char *sym = name[4] ? "musaRuntimeGetVersion" : "muDriverGetVersion";
		if (SYM(h, fn, sym) && fn(&v) == 0) {
			snprintf(buf, sizeof(buf), "%d", v); /* raw: the encoding is not documented */
			snprintf(src, sizeof(src), "%s", sym);
		}
	} else if (!strcmp(name, "mtml")) {
		int (*init)(void **), (*shut)(void *), (*libver)(void *, char *, unsigned);
		int (*initsys)(void *, void **), (*drv)(void *, char *, unsigned), (*freesys)(void *);
		void *lib = NULL, *sys = NULL;
		char lv[64] = "", dv[64] = "";
		if (SYM(h, init, "mtmlLibraryInit") && (r = init(&lib)) == 0) {
			if (SYM(h, libver, "mtmlLibraryGetVersion"))
				libver(lib, lv, sizeof(lv));
			if (SYM(h, initsys, "mtmlLibraryInitSystem") && initsys(lib, &sys) == 0) {
				if (SYM(h, drv, "mtmlSystemGetDriverVersion"))
					drv(sys, dv, sizeof(dv));
				if (SYM(h, freesys, "mtmlLibraryFreeSystem"))
					freesys(sys);
			}
			if (SYM(h, shut, "mtmlLibraryShutDown"))
				shut(lib);
			lv[sizeof(lv) - 1] = dv[sizeof(dv) - 1] = 0;
			snprintf(buf, sizeof(buf), "%s%s%s%s", lv[0] ? "mtml " : "", lv,
				 dv[0] ? ", driver " : "", dv);
			snprintf(src, sizeof(src), "mtmlLibraryGetVersion");
		} else if (init) {
			snprintf(buf, sizeof(buf), "mtmlLibraryInit returned %d", r);
			put(fd, "E", buf);
			return;
		}
	}
	if (buf[0]) {
		put(fd, "V", buf);
		put(fd, "S", src);
	}
}

static void child(int fd, const char *name, const char *soname)
{
	int null = open("/dev/null", O_RDWR);
	struct link_map *lm = NULL;
	void *h;

	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		put(fd, "E", e ? e : "dlopen failed");
		_exit(0);
	}
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
		put(fd, "P", lm->l_name);
	put(fd, "L", "1");
	version_call(fd, h, name);
	_exit(0);
}

static void field(const char *buf, const char *key, char *out, size_t size)
{
	size_t kn = strlen(key);

	for (const char *p = buf; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (len > kn && strncmp(p, key, kn) == 0 && p[kn] == ' ') {
			snprintf(out, size, "%.*s", (int)(len - kn - 1), p + kn + 1);
			return;
		}
		p = eol ? eol + 1 : NULL;
	}
}

int ts_preflight_load(const char *name, const char *soname, int timeout_ms,
		      struct ts_pf_load *out)
{
	char buf[4096];
	size_t used = 0;
	int fds[2], status = 0, timed_out = 0;
	int64_t deadline;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	if (timeout_ms <= 0)
		timeout_ms = 5000;
	if (pipe(fds) != 0)
		return TS_EINTERNAL;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return TS_EINTERNAL;
	}
	if (pid == 0) {
		close(fds[0]);
		child(fds[1], name, soname);
	}
	close(fds[1]);
	deadline = mono_ms() + timeout_ms;
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		int64_t left = deadline - mono_ms();
		ssize_t n;
		if (left <= 0) {
			timed_out = 1;
			break;
		}
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = read(fds[0], buf + used, sizeof(buf) - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
		if (used >= sizeof(buf) - 1)
			break;
	}
	close(fds[0]);
	buf[used] = 0;
	if (timed_out) {
		kill(pid, SIGKILL);
		out->status = -1;
		/* reap it if it dies promptly; one stuck in the kernel is left */
		for (int i = 0; i < 20; i++) {
			if (waitpid(pid, &status, WNOHANG) == pid)
				break;
			if (i == 19) {
				snprintf(out->error, sizeof(out->error),
					 "timed out after %d ms; killed, still in the kernel", timeout_ms);
				return 0;
			}
			usleep(10000);
		}
		snprintf(out->error, sizeof(out->error), "timed out after %d ms; killed", timeout_ms);
		return 0;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	field(buf, "P", out->path, sizeof(out->path));
	field(buf, "V", out->version, sizeof(out->version));
	field(buf, "S", out->version_src, sizeof(out->version_src));
	field(buf, "E", out->error, sizeof(out->error));
	if (strstr(buf, "L 1\n"))
		out->status = 1;
	if (WIFSIGNALED(status)) {
		out->status = -2;
		snprintf(out->error, sizeof(out->error), "child killed by signal %d", WTERMSIG(status));
	}
	return 0;
}

/*
 * gate_common.c - the clock and process runner behind cli_gate.h.
 *
 * The contract library asks for tool output (nvidia-smi, python3 -c ...)
 * through a callback so it never forks itself and stays testable; this is
 * the real implementation of that callback.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli_gate.h"

extern char **environ;

#define CAPTURE_MAX ((size_t)1 << 20)

int64_t cli_fixed_now_ns(void)
{
	const char *s = getenv("SOURCE_DATE_EPOCH");
	char *end;
	long long v;

	if (!s || !*s)
		return 0;
	v = strtoll(s, &end, 10);
	if (*end || v <= 0 || v > 4102444800LL)
		return 0;
	return (int64_t)v * 1000000000;
}

/* Is name an executable somewhere on PATH (or a path that is)? */
static int on_path(const char *name)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(name, '/'))
		return access(name, X_OK) == 0;
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		int len = snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", name);
		if (len > 0 && (size_t)len < sizeof(buf) && access(buf, X_OK) == 0)
			return 1;
		path += n + (colon ? 1 : 0);
	}
	return 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cli_run_capture(const char *const argv[], struct ts_sb *out, int timeout_ms)
{
	posix_spawn_file_actions_t fa;
	int fds[2] = { -1, -1 };
	pid_t pid;
	int status = 0, rc = -2, timed_out = 0;
	int64_t deadline = mono_ms() + timeout_ms;

	if (!on_path(argv[0]))
		return -1;
	if (pipe(fds) != 0)
		return -2;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		close(fds[0]);
		close(fds[1]);
		return -2;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		char buf[4096];
		int64_t left = deadline - mono_ms();
		ssize_t n;

		if (left <= 0) {
			timed_out = 1;
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out->len + (size_t)n <= CAPTURE_MAX)
			ts_sb_add(out, buf, (size_t)n);
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!timed_out && WIFEXITED(status))
		rc = WEXITSTATUS(status);
	return rc;
}

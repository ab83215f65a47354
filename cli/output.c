/*
 * output.c - how results reach the user: stdout or an atomic file, error
 * and warning lines, colour, and the progress bar.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "trainscope/atomic.h"
#include "trainscope/input.h"
#include "trainscope/sanitize.h"

int cli_exit_for(int code)
{
	switch (code) {
	case TS_OK:
		return EXIT_OK;
	case TS_ENOMEM:
	case TS_EINTERNAL:
		return EXIT_INTERNAL;
	default:
		return EXIT_USAGE;
	}
}

/* Messages quote file names and input text: sanitised like all output. */
__attribute__((format(printf, 3, 0)))
static void vmsg(struct cli_ctx *ctx, const char *kind, const char *fmt, va_list ap)
{
	char buf[4096];
	struct ts_sb sb;
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	ts_sb_init(&sb);
	ts_text_sanitize(&sb, buf, (size_t)n, 0);
	fprintf(stderr, "trainscope %s: %s%.*s\n", ctx->cmd ? ctx->cmd->name : "", kind,
		sb.failed ? 0 : (int)sb.len, sb.failed ? "" : sb.buf);
	ts_sb_release(&sb);
}

void cli_error(struct cli_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	cli_progress_end(ctx);
	va_start(ap, fmt);
	vmsg(ctx, "", fmt, ap);
	va_end(ap);
}

void cli_warn(struct cli_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (ctx->quiet)
		return;
	cli_progress_end(ctx);
	va_start(ap, fmt);
	vmsg(ctx, "warning: ", fmt, ap);
	va_end(ap);
}

int cli_fail(struct cli_ctx *ctx, const struct ts_err *err)
{
	char buf[TS_ERR_MSG_MAX + TS_ERR_PATH_MAX + 64];

	ts_err_format(err, buf, sizeof(buf));
	cli_error(ctx, "%s", buf);
	return cli_exit_for(err->code);
}

int cli_emit_to(struct cli_ctx *ctx, const char *path, const struct ts_sb *sb)
{
	struct ts_err err;

	if (sb->failed) {
		cli_error(ctx, "out of memory while building the output");
		return EXIT_INTERNAL;
	}
	/* names and text from the inputs may hold terminal escapes or bad
	 * UTF-8: every output is sanitised (JSON from the writer is already
	 * clean and passes unchanged; colours are kept when they are on) */
	if (!ts_text_is_clean(sb->buf, sb->len, ctx->color)) {
		struct ts_sb clean;
		int rc;
		ts_sb_init(&clean);
		ts_text_sanitize(&clean, sb->buf, sb->len, ctx->color);
		rc = clean.failed ? -1 : cli_emit_to(ctx, path, &clean);
		ts_sb_release(&clean);
		if (rc < 0) {
			cli_error(ctx, "out of memory while building the output");
			return EXIT_INTERNAL;
		}
		return rc;
	}
	if (!path) {
		errno = 0;
		if ((sb->len && fwrite(sb->buf, 1, sb->len, stdout) != sb->len) ||
		    fflush(stdout)) {
			cli_error(ctx, "cannot write to standard output: %s",
				  strerror(errno ? errno : EIO));
			return EXIT_USAGE;
		}
		return 0;
	}
	/* "-", devices, FIFOs and symlinks are handled by the atomic writer */
	ts_err_init(&err);
	if (ts_write_file_atomic(path, sb->buf, sb->len, &err))
		return cli_fail(ctx, &err);
	return 0;
}

int cli_emit(struct cli_ctx *ctx, const struct ts_sb *sb)
{
	return cli_emit_to(ctx, ctx->output, sb);
}

const char *cli_style(const struct cli_ctx *ctx, const char *style)
{
	static const struct { const char *name, *seq; } styles[] = {
		{ "bold", "\033[1m" }, { "dim", "\033[2m" }, { "red", "\033[31m" },
		{ "green", "\033[32m" }, { "yellow", "\033[33m" }, { "cyan", "\033[36m" },
		{ "reset", "\033[0m" },
	};

	if (!ctx->color)
		return "";
	for (size_t i = 0; i < sizeof(styles) / sizeof(styles[0]); i++)
		if (strcmp(styles[i].name, style) == 0)
			return styles[i].seq;
	return "";
}

static struct timespec last_draw;
static int bar_shown;

void cli_progress(struct cli_ctx *ctx, const char *what, uint64_t done, uint64_t total)
{
	struct timespec now;

	if (!ctx->progress || ctx->quiet || total == 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long long ms = (now.tv_sec - last_draw.tv_sec) * 1000LL +
		       (now.tv_nsec - last_draw.tv_nsec) / 1000000;
	if (bar_shown && ms < 100 && done < total)
		return;
	last_draw = now;
	int width = 30;
	int fill = (int)((double)done / (double)total * width);
	if (fill > width)
		fill = width;
	fprintf(stderr, "\r%-12.12s [", what);
	for (int i = 0; i < width; i++)
		fputc(i < fill ? '#' : '.', stderr);
	fprintf(stderr, "] %3d%%", (int)((double)done * 100.0 / (double)total));
	fflush(stderr);
	bar_shown = 1;
}

void cli_progress_end(struct cli_ctx *ctx)
{
	(void)ctx;
	if (!bar_shown)
		return;
	fprintf(stderr, "\r%60s\r", "");
	fflush(stderr);
	bar_shown = 0;
}

/* ------------------------------------------------ fatal signals */

static const char *sig_cmd = "";

static void sig_write(const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(2, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	ts_atomic_cleanup_signal();
	if (sig == SIGBUS && si) {
		const char *path = ts_input_fault_path(si->si_addr);
		if (path) {
			sig_write("trainscope ");
			sig_write(sig_cmd);
			sig_write(": ");
			sig_write(path);
			sig_write(": shrank while being read (truncated or rewritten by "
				  "another process); read a copy or rerun when it is complete\n");
			_exit(EXIT_USAGE);
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void cli_signals_install(const char *cmd_name)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGBUS };
	struct sigaction sa;

	sig_cmd = cmd_name ? cmd_name : "";
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;
		/* keep an inherited "ignore" (nohup) */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN &&
		    sigs[i] != SIGBUS)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

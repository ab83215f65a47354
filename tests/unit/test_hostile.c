/* Issue 21: the JSON writer emits only valid UTF-8, the text sanitiser,
 * temp files of unfinished outputs removed from a signal handler, and the
 * mapped-input registry that turns SIGBUS into "FILE shrank". Expected
 * bytes are written out by hand from RFC 3629 (which sequences are valid)
 * and the escape forms documented in sanitize.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "trainscope/atomic.h"
#include "trainscope/input.h"
#include "trainscope/jsonw.h"
#include "trainscope/logs.h"
#include "trainscope/sanitize.h"

static void esc_is(const char *in, size_t n, const char *want)
{
	struct ts_sb sb;

	ts_sb_init(&sb);
	ts_json_escape(&sb, in, n);
	ts_sb_addc(&sb, 0);
	CHECK_STR(sb.buf, want);
	ts_sb_release(&sb);
}

#define FFFD "\xef\xbf\xbd"

TEST(json_escape_only_valid_utf8)
{
	esc_is("\xe2\x82\xac", 3, "\xe2\x82\xac");                 /* U+20AC kept */
	esc_is("\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80");         /* U+1F600 kept */
	esc_is("\xf4\x8f\xbf\xbf", 4, "\xf4\x8f\xbf\xbf");         /* U+10FFFF kept */
	esc_is("\xf5\x80\x80", 3, FFFD FFFD FFFD);                 /* F5 is no lead */
	esc_is("\xff\xfe", 2, FFFD FFFD);
	esc_is("\xc0\xaf", 2, FFFD FFFD);                          /* overlong '/' */
	esc_is("\xe0\x80\xaf", 3, FFFD FFFD FFFD);                 /* overlong 3-byte */
	esc_is("\xed\xa0\x80", 3, FFFD FFFD FFFD);                 /* surrogate D800 */
	esc_is("\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD);        /* above 10FFFF */
	esc_is("a\xe2\x82", 3, "a" FFFD FFFD);                     /* cut short */
	esc_is("k\0a", 3, "k\\u0000a");                            /* NUL kept */
	esc_is("\x1b[2J", 4, "\\u001b[2J");
	esc_is("\x7f", 1, "\x7f");                                 /* DEL is valid JSON */
}

static void san_is(const char *in, size_t n, int sgr, const char *want)
{
	struct ts_sb sb;

	ts_sb_init(&sb);
	ts_text_sanitize(&sb, in, n, sgr);
	ts_sb_addc(&sb, 0);
	CHECK_STR(sb.buf, want);
	CHECK(ts_text_is_clean(sb.buf, sb.len - 1, sgr));
	ts_sb_release(&sb);
}

TEST(text_sanitize_controls_visible)
{
	san_is("plain ok\n\tx", 11, 0, "plain ok\n\tx");
	CHECK(ts_text_is_clean("plain ok\n", 9, 0));
	san_is("\x1b]0;pwned\x07", 10, 0, "\\x1b]0;pwned\\x07");
	san_is("\x1b[2J", 4, 1, "\\x1b[2J");          /* not SGR: replaced */
	san_is("\x1b[1mb\x1b[0m", 9, 1, "\x1b[1mb\x1b[0m"); /* colours kept */
	san_is("\x1b[1m", 4, 0, "\\x1b[1m");           /* unless not asked */
	san_is("k\0a\r", 4, 0, "k\\x00a\\x0d");
	san_is("c1\xc2\x85x", 5, 0, "c1\\u0085x");     /* C1 NEL */
	san_is("\xe2\x80\xae", 3, 0, "\\u202e");       /* RTL override */
	san_is("\xf5\x80\x80", 3, 0, "\\xf5\\x80\\x80");
	san_is("\xed\xa0\x80", 3, 0, "\\xed\\xa0\\x80");
	san_is("\xc3\xa9t\xc3\xa9", 5, 0, "\xc3\xa9t\xc3\xa9"); /* é kept */
	san_is("\x7f", 1, 0, "\\x7f");
}

TEST(atomic_temp_removed_by_signal_cleanup)
{
	char dir[] = "/tmp/ts_atomicXXXXXX", path[64];
	struct ts_atomic a;
	struct ts_err err;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	ts_err_init(&err);
	CHECK_I64(ts_atomic_open(&a, path, &err), 0);
	CHECK(a.tmp[0] != 0);
	CHECK_I64(stat(a.tmp, &st), 0);
	ts_atomic_cleanup_signal();        /* what the SIGTERM handler calls */
	CHECK(stat(a.tmp, &st) != 0 && errno == ENOENT);
	ts_atomic_abort(&a);
	CHECK(stat(path, &st) != 0);       /* the target never appeared */
	/* a committed file is not registered any more */
	CHECK_I64(ts_write_file_atomic(path, "x\n", 2, &err), 0);
	ts_atomic_cleanup_signal();
	CHECK_I64(stat(path, &st), 0);
	CHECK_I64(st.st_size, 2);
	unlink(path);
	rmdir(dir);
}

TEST(atomic_writes_through_fifo_and_symlink)
{
	char dir[] = "/tmp/ts_atomicXXXXXX", fifo[64], real[64], link[64], buf[16];
	struct ts_err err;
	struct stat st;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(fifo, sizeof(fifo), "%s/f", dir);
	snprintf(real, sizeof(real), "%s/real", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	CHECK_I64(mkfifo(fifo, 0600), 0);
	fd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader, so open for write succeeds */
	CHECK(fd >= 0);
	ts_err_init(&err);
	CHECK_I64(ts_write_file_atomic(fifo, "hello", 5, &err), 0);
	CHECK_I64(read(fd, buf, sizeof(buf)), 5);
	close(fd);
	CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK_I64(symlink("real", link), 0);
	CHECK_I64(ts_write_file_atomic(link, "abc", 3, &err), 0);
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(stat(real, &st) == 0 && st.st_size == 3);
	unlink(fifo);
	unlink(link);
	unlink(real);
	rmdir(dir);
}

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	const char *p = ts_input_fault_path(si->si_addr);
	_exit(p && strstr(p, "shrink.log") ? 42 : 43);
}

/* In a child: map a file, cut it to nothing, touch its last page. The
 * registry must name the file from the faulting address. */
TEST(input_fault_registry_names_the_shrunk_file)
{
	char dir[] = "/tmp/ts_shrinkXXXXXX", path[64];
	int status = 0;
	pid_t pid;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/shrink.log", dir);
	pid = fork();
	if (pid == 0) {
		struct ts_input in;
		struct ts_err err;
		struct sigaction sa;
		volatile unsigned char sink;
		FILE *f = fopen(path, "w");
		for (int i = 0; i < 100000; i++)
			fputs("0123456789\n", f);
		fclose(f);
		ts_err_init(&err);
		if (ts_input_open(&in, path, &err) || in.kind != TS_INPUT_MAP)
			_exit(44);
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_bus;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGBUS, &sa, NULL);
		if (truncate(path, 0))
			_exit(45);
		sink = in.data[in.len - 1];
		(void)sink;
		_exit(46); /* no fault: the test cannot show anything */
	}
	CHECK(pid > 0);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status));
	CHECK_I64(WEXITSTATUS(status), 42);
	unlink(path);
	rmdir(dir);
}

TEST(input_peek_hands_a_pipe_on)
{
	int fds[2];
	struct ts_input in;
	struct ts_err err;
	char name[32];
	const char *line;
	size_t n;

	CHECK_I64(pipe(fds), 0);
	CHECK_I64(write(fds[1], "one\ntwo\n", 8), 8);
	close(fds[1]);
	snprintf(name, sizeof(name), "/dev/fd/%d", fds[0]);
	ts_err_init(&err);
	CHECK_I64(ts_input_open_peek(&in, name, &err), 0);
	CHECK(ts_input_more(&in, 0, &err) > 0);
	CHECK_I64(in.len, 8);
	CHECK_I64(ts_input_release_keep(&in, 0, &err), 0);
	/* the next open continues the same stream from byte 0 */
	CHECK_I64(ts_input_open(&in, name, &err), 0);
	CHECK_I64(ts_input_getline(&in, &line, &n, NULL, &err), 1);
	CHECK(n == 3 && memcmp(line, "one", 3) == 0);
	CHECK_I64(ts_input_getline(&in, &line, &n, NULL, &err), 1);
	CHECK(n == 3 && memcmp(line, "two", 3) == 0);
	CHECK_I64(ts_input_getline(&in, &line, &n, NULL, &err), 0);
	ts_input_release(&in);
	close(fds[0]);
}

/* Unusable step times are counted per kind, not silently dropped; strict
 * rejects them. Counts are by hand from the lines below. */
TEST(steps_unusable_values_counted)
{
	static const char doc[] =
		"{\"iteration\": 1, \"step_time_ms\": 100.0}\n"
		"{\"iteration\": 2, \"step_time_ms\": NaN}\n"
		"{\"iteration\": 3, \"step_time_ms\": Infinity}\n"
		"{\"iteration\": 4, \"step_time_ms\": -Infinity}\n"
		"{\"iteration\": 5, \"step_time_ms\": -1}\n"
		"{\"iteration\": 6, \"step_time_ms\": 1e300}\n"
		"{\"iteration\": 7, \"step_time_ms\": 101.0}\n";
	struct ts_steplog log;
	struct ts_err err;

	ts_err_init(&err);
	ts_steplog_init(&log);
	CHECK_I64(ts_steplog_read_mem(&log, doc, sizeof(doc) - 1, "m.jsonl", &err), 0);
	CHECK_I64(log.ignored[TS_IGN_NAN], 1);
	CHECK_I64(log.ignored[TS_IGN_INF], 2);
	CHECK_I64(log.ignored[TS_IGN_NEGATIVE], 1);
	CHECK_I64(log.ignored[TS_IGN_TOO_LARGE], 1);
	CHECK_I64(log.steps.n, 7); /* the records stay, their times are unknown */
	ts_steplog_release(&log);
	log.strict = 1;
	CHECK_I64(ts_steplog_read_mem(&log, doc, sizeof(doc) - 1, "m.jsonl", &err), TS_EPARSE);
	CHECK(strstr(err.msg, "line 2") && strstr(err.msg, "nan"));
	ts_steplog_release(&log);
}

/* One-line JSON documents that carry no step key are not iterations. */
TEST(steps_one_line_json_is_not_an_iteration)
{
	static const char config[] =
		"{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":4096,"
		"\"model_type\":\"llama\",\"num_hidden_layers\":32,\"vocab_size\":128256}\n";
	static const char contract[] =
		"{\"schema\":\"trainscope.contract/1\",\"labels\":{\"model\":\"x\"}}\n";
	struct ts_steplog log;
	struct ts_err err;

	ts_err_init(&err);
	ts_steplog_init(&log);
	CHECK_I64(ts_steplog_read_mem(&log, config, sizeof(config) - 1, "c.json", &err), TS_EPARSE);
	CHECK(strstr(err.msg, "no step records") != NULL);
	ts_steplog_release(&log);
	CHECK_I64(ts_steplog_read_mem(&log, contract, sizeof(contract) - 1, "k.json", &err), TS_EPARSE);
	ts_steplog_release(&log);
}

/*
 * bench_trace.c - trace reader throughput and memory against baselines
 * measured in the same run.
 *
 * Every case runs in a fresh child process (what the CLI pays: cold heap,
 * file in the page cache after a warm-up), timed by the parent, with the
 * child's peak RSS from wait4(). Cases, interleaved in each round:
 *   cat      `cat FILE > /dev/null` through the shell (plain files)
 *   memchr2  two threads, each pread()s one half of FILE into a page-aligned
 *            1 MiB buffer and counts '"' with one memchr call per quote
 *            (plain files: the issue #14 baseline for the end-to-end goal)
 *   inflate  zlib inflate of FILE.gz into one reused 4 MiB buffer, one
 *            thread (what any .gz reader must at least pay)
 *   read     ts_trace_read(FILE)            (all events)
 *   read-skip ts_trace_read, skip_python + skip_flows (when asked with -p)
 *   read-1t  the same read on one thread (split parse off; with -1):
 *            the reader before the split, in the same binary
 *   cli      `BIN trace --json FILE > /dev/null` (when asked with -t BIN):
 *            the end-to-end command the issue #14 goals are about
 *   cli-old  the same with another binary (-o OLDBIN), for old vs new
 * Each case also reports its CPU time (user + sys of the child and what
 * it waited for, from wait4), and the load average is printed before and
 * after the rounds.
 * Medians over RUNS rounds; MB = 10^6 bytes of decompressed JSON.
 * Ratios: read / cat and read / memchr2 for plain files, read / inflate
 * for gzip (each the median of the per-round ratios: the cases of one round
 * run back to back, so a ratio compares like with like on a noisy machine).
 *
 * usage: bench_trace [-p] [-1] [-t TRAINSCOPE] [-o OLD_TRAINSCOPE] FILE [RUNS]
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "trainscope/trace.h"
#include "bench_util.h"
#include "../src/trace/trace_int.h"

struct result {
	double secs;
	double cpu;
	double rss_mb;
	unsigned long long events;
	unsigned long long bytes;
};

/* Child bodies: write "events bytes" to fd, exit 0. */
static int child_read(const char *path, int skip, int one, int fd)
{
	struct ts_trace t;
	struct ts_err err;
	struct ts_trace_opts o = { .skip_python = skip, .skip_flows = skip };
	char buf[1200];

	ts_trace_init(&t);
	ts_err_init(&err);
	if (trace_read_split(&t, path, &o, one ? TRACE_SPLIT_OFF : TRACE_SPLIT_AUTO, NULL, &err)) {
		ts_err_format(&err, buf, sizeof(buf));
		fprintf(stderr, "bench_trace: %s\n", buf);
		return 1;
	}
	int n = snprintf(buf, sizeof(buf), "%zu %llu\n", t.ev.n, (unsigned long long)t.meta.bytes);
	if (write(fd, buf, (size_t)n) != n)
		return 1;
	return 0;
}

static int child_inflate(const char *path, int fd)
{
	static unsigned char in[1 << 20], out[4 << 20];
	z_stream z;
	unsigned long long total = 0;
	int src = open(path, O_RDONLY), zr = Z_OK;
	ssize_t r;
	char buf[64];

	memset(&z, 0, sizeof(z));
	if (src < 0 || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return 1;
	while (zr != Z_STREAM_END && (r = read(src, in, sizeof(in))) > 0) {
		z.next_in = in;
		z.avail_in = (uInt)r;
		while (z.avail_in && zr != Z_STREAM_END) {
			z.next_out = out;
			z.avail_out = sizeof(out);
			zr = inflate(&z, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END)
				return 1;
			total += sizeof(out) - z.avail_out;
		}
	}
	inflateEnd(&z);
	close(src);
	int n = snprintf(buf, sizeof(buf), "0 %llu\n", total);
	return write(fd, buf, (size_t)n) == n ? 0 : 1;
}

struct half {
	int fd;
	off_t from, to;
	unsigned long long quotes;
	int bad;
};

static void *count_quotes(void *arg)
{
	struct half *h = arg;
	const size_t bsize = (size_t)1 << 20;
	void *mem = NULL;

	if (posix_memalign(&mem, 4096, bsize)) {
		h->bad = 1;
		return NULL;
	}
	const char *buf = mem;
	for (off_t pos = h->from; pos < h->to;) {
		size_t want = (size_t)(h->to - pos) < bsize ? (size_t)(h->to - pos) : bsize;
		ssize_t r = pread(h->fd, mem, want, pos);
		if (r <= 0) {
			h->bad = 1;
			break;
		}
		const char *p = buf, *end = buf + r;
		while ((p = memchr(p, '"', (size_t)(end - p))) != NULL) {
			h->quotes++;
			p++;
		}
		pos += r;
	}
	free(mem);
	return NULL;
}

static int child_memchr2(const char *path, int fd)
{
	struct stat st;
	struct half h[2];
	pthread_t th;
	char buf[64];
	int src = open(path, O_RDONLY);

	if (src < 0 || fstat(src, &st) != 0)
		return 1;
	off_t mid = st.st_size / 2;
	h[0] = (struct half){ .fd = src, .from = 0, .to = mid };
	h[1] = (struct half){ .fd = src, .from = mid, .to = st.st_size };
	if (pthread_create(&th, NULL, count_quotes, &h[1]) != 0)
		return 1;
	count_quotes(&h[0]);
	pthread_join(th, NULL);
	close(src);
	if (h[0].bad || h[1].bad)
		return 1;
	int n = snprintf(buf, sizeof(buf), "%llu %llu\n", h[0].quotes + h[1].quotes,
			 (unsigned long long)st.st_size);
	return write(fd, buf, (size_t)n) == n ? 0 : 1;
}

static const char *cli_bin, *old_bin;

/* `cat` or the CLI through the shell; wait4 reports the peak RSS of the
 * largest process the shell waited for. */
static int child_shell(const char *path, const char *bin, int fd)
{
	char cmd[8400];

	if (bin)
		snprintf(cmd, sizeof(cmd), "'%s' trace --json '%s' > /dev/null", bin, path);
	else
		snprintf(cmd, sizeof(cmd), "cat '%s' > /dev/null", path);
	if (system(cmd) != 0)
		return 1;
	return write(fd, "0 0\n", 4) == 4 ? 0 : 1;
}

enum { C_CAT, C_INFLATE, C_READ, C_READ_SKIP, C_MEMCHR2, C_CLI, C_READ_1T, C_CLI_OLD, NCASE };

static int run_case(int which, const char *path, struct result *res)
{
	int p[2];
	struct rusage ru;
	int status;
	char buf[128];

	if (pipe(p))
		return -1;
	double t0 = now_s();
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		int rc = which == C_CAT ? child_shell(path, NULL, p[1]) :
			which == C_CLI ? child_shell(path, cli_bin, p[1]) :
			which == C_CLI_OLD ? child_shell(path, old_bin, p[1]) :
			which == C_INFLATE ? child_inflate(path, p[1]) :
			which == C_MEMCHR2 ? child_memchr2(path, p[1]) :
			child_read(path, which == C_READ_SKIP, which == C_READ_1T, p[1]);
		_exit(rc);
	}
	close(p[1]);
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || n <= 0)
		return -1;
	res->secs = now_s() - t0;
	res->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	res->rss_mb = (double)ru.ru_maxrss * 1024.0 / 1e6;  /* KiB -> MB (10^6 B) */
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &res->events, &res->bytes) != 2)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int skip = 0, one = 0, a = 1;
	struct stat st;

	for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
		if (strcmp(argv[a], "-p") == 0)
			skip = 1;
		else if (strcmp(argv[a], "-1") == 0)
			one = 1;
		else if (strcmp(argv[a], "-t") == 0 && a + 1 < argc)
			cli_bin = argv[++a];
		else if (strcmp(argv[a], "-o") == 0 && a + 1 < argc)
			old_bin = argv[++a];
		else
			break;
	}
	if (a >= argc || stat(argv[a], &st) != 0) {
		fprintf(stderr, "usage: bench_trace [-p] [-1] [-t TRAINSCOPE] [-o OLD_TRAINSCOPE] "
			"FILE.json|FILE.json.gz [RUNS]\n");
		return 2;
	}
	const char *path = argv[a];
	int runs = a + 1 < argc ? (int)strtol(argv[a + 1], NULL, 10) : 3;
	if (runs < 1 || runs > 15)
		runs = 3;
	unsigned char magic[2] = { 0, 0 };
	FILE *f = fopen(path, "rb");
	if (!f || fread(magic, 1, 2, f) != 2) {
		fprintf(stderr, "bench_trace: cannot read %s\n", path);
		return 2;
	}
	fclose(f);
	int gz = magic[0] == 0x1f && magic[1] == 0x8b;
	int base = gz ? C_INFLATE : C_CAT;
	/* a round: baseline, reader, [reader skipping], [memchr2, CLI]: the
	 * reader and the CLI each follow a baseline they are compared with */
	int cases[NCASE] = { base, C_READ, C_READ_SKIP };
	int ncases = skip ? 3 : 2;
	if (!gz)
		cases[ncases++] = C_MEMCHR2;
	if (one)
		cases[ncases++] = C_READ_1T;
	if (old_bin)
		cases[ncases++] = C_CLI_OLD;
	if (cli_bin)
		cases[ncases++] = C_CLI;
	double secs[NCASE][16], cpu[NCASE][16], rss[NCASE][16], ratio[16], ratio_skip[16], ratio_mc[16];
	double cli_ratio[16], one_ratio[16], old_ratio[16], load[3] = { 0, 0, 0 };
	struct result r[NCASE];

	/* warm-up round: page cache, and the event count to check against */
	for (int c = 0; c < ncases; c++)
		if (run_case(cases[c], path, &r[cases[c]])) {
			fprintf(stderr, "bench_trace: case %d failed\n", cases[c]);
			return 1;
		}
	unsigned long long events = r[C_READ].events, bytes = r[C_READ].bytes;
	if (getloadavg(load, 3) < 0)
		load[0] = -1;
	double load0 = load[0];
	for (int k = 0; k < runs; k++) {
		for (int c = 0; c < ncases; c++) {
			struct result x;
			if (run_case(cases[c], path, &x) ||
			    ((cases[c] == C_READ || cases[c] == C_READ_1T) && x.events != events)) {
				fprintf(stderr, "bench_trace: case %d failed or changed\n", cases[c]);
				return 1;
			}
			secs[cases[c]][k] = x.secs;
			cpu[cases[c]][k] = x.cpu;
			rss[cases[c]][k] = x.rss_mb;
		}
		ratio[k] = secs[base][k] / secs[C_READ][k];
		ratio_skip[k] = skip ? secs[base][k] / secs[C_READ_SKIP][k] : 0;
		ratio_mc[k] = gz ? 0 : secs[C_MEMCHR2][k] / secs[C_READ][k];
		one_ratio[k] = one ? secs[C_READ_1T][k] / secs[C_READ][k] : 0;
		old_ratio[k] = old_bin && cli_bin ? secs[C_CLI_OLD][k] / secs[C_CLI][k] : 0;
		cli_ratio[k] = cli_bin ? secs[gz ? C_INFLATE : C_MEMCHR2][k] / secs[C_CLI][k] : 0;
	}
	double mb = (double)bytes / 1e6;
	double file_mb = (double)st.st_size / 1e6;
	printf("file           %s (%s, %.1f MB on disk, %.1f MB JSON, %llu events, %.0f B/event)\n",
	       path, gz ? "gzip" : "plain", file_mb, mb, events, (double)bytes / (double)events);
	printf("rounds         %d (median; each case a fresh process, interleaved)\n", runs);
	if (getloadavg(load, 3) < 0)
		load[0] = -1;
	printf("load average   %.2f before the rounds, %.2f after (1 min)\n", load0, load[0]);
	static const char *const names[] = { "cat >/dev/null", "zlib inflate", "ts_trace_read",
					     "read, skip py+flow", "memchr '\"', 2 thr",
					     "trace --json (CLI)", "read, one thread",
					     "trace --json (old)" };
	printf("%-18s %10s %10s %10s %12s %12s\n", "case", "time_s", "cpu_s", "MB/s", "peak_rss_MB",
	       "rss_%_json");
	for (int c = 0; c < ncases; c++) {
		int w = cases[c];
		double t = median(secs[w], runs), u = median(cpu[w], runs), m = median(rss[w], runs);
		printf("%-18s %10.3f %10.3f %10.0f %12.1f %12.1f\n", names[w], t, u, mb / t, m,
		       100.0 * m / mb);
	}
	printf("ratio          ts_trace_read / %s = %.2f (speed, median of per-round ratios)\n",
	       gz ? "zlib inflate" : "cat", median(ratio, runs));
	if (skip)
		printf("ratio          read skip py+flow / %s = %.2f\n", gz ? "zlib inflate" : "cat",
		       median(ratio_skip, runs));
	if (!gz)
		printf("ratio          ts_trace_read / memchr 2 threads = %.2f (speed)\n",
		       median(ratio_mc, runs));
	if (one)
		printf("ratio          ts_trace_read one thread / split = %.2f (speed-up)\n",
		       median(one_ratio, runs));
	if (old_bin && cli_bin)
		printf("ratio          trace --json old / new = %.2f (speed-up)\n", median(old_ratio, runs));
	if (cli_bin)
		printf("ratio          trace --json / %s = %.2f (speed; issue #14 goal >= %s)\n",
		       gz ? "zlib inflate" : "memchr 2 threads", median(cli_ratio, runs),
		       gz ? "1.00" : "0.70");
	return 0;
}

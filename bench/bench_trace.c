/*
 * bench_trace.c - trace reader throughput and memory against baselines
 * measured in the same run.
 *
 * Every case runs in a fresh child process (what the CLI pays: cold heap,
 * file in the page cache after a warm-up), timed by the parent, with the
 * child's peak RSS from wait4(). Cases, interleaved in each round:
 *   cat      `cat FILE > /dev/null` through the shell (plain files)
 *   inflate  zlib inflate of FILE.gz into one reused 4 MiB buffer, one
 *            thread (what any .gz reader must at least pay)
 *   read     ts_trace_read(FILE)            (all events)
 *   read-skip ts_trace_read, skip_python + skip_flows (when asked with -p)
 * Medians over RUNS rounds; MB = 10^6 bytes of decompressed JSON.
 * Ratios: read / cat for plain files, read / inflate for gzip.
 *
 * usage: bench_trace [-p] FILE.json|FILE.json.gz [RUNS]
 */
#include <fcntl.h>
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

struct result {
	double secs;
	double rss_mb;
	unsigned long long events;
	unsigned long long bytes;
};

/* Child bodies: write "events bytes" to fd, exit 0. */
static int child_read(const char *path, int skip, int fd)
{
	struct ts_trace t;
	struct ts_err err;
	struct ts_trace_opts o = { .skip_python = skip, .skip_flows = skip };
	char buf[1200];

	ts_trace_init(&t);
	ts_err_init(&err);
	if (ts_trace_read(&t, path, &o, &err)) {
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

static int child_cat(const char *path, int fd)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "cat '%s' > /dev/null", path);
	if (system(cmd) != 0)
		return 1;
	return write(fd, "0 0\n", 4) == 4 ? 0 : 1;
}

enum { C_CAT, C_INFLATE, C_READ, C_READ_SKIP };

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
		int rc = which == C_CAT ? child_cat(path, p[1]) :
			which == C_INFLATE ? child_inflate(path, p[1]) :
			child_read(path, which == C_READ_SKIP, p[1]);
		_exit(rc);
	}
	close(p[1]);
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || n <= 0)
		return -1;
	res->secs = now_s() - t0;
	res->rss_mb = (double)ru.ru_maxrss * 1024.0 / 1e6;  /* KiB -> MB (10^6 B) */
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &res->events, &res->bytes) != 2)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int skip = 0, a = 1;
	struct stat st;

	if (a < argc && strcmp(argv[a], "-p") == 0) {
		skip = 1;
		a++;
	}
	if (a >= argc || stat(argv[a], &st) != 0) {
		fprintf(stderr, "usage: bench_trace [-p] FILE.json|FILE.json.gz [RUNS]\n");
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
	int cases[3] = { base, C_READ, C_READ_SKIP };
	int ncases = skip ? 3 : 2;
	double secs[4][16], rss[4][16], ratio[16], ratio_skip[16];
	struct result r[4];

	/* warm-up round: page cache, and the event count to check against */
	for (int c = 0; c < ncases; c++)
		if (run_case(cases[c], path, &r[cases[c]])) {
			fprintf(stderr, "bench_trace: case %d failed\n", cases[c]);
			return 1;
		}
	unsigned long long events = r[C_READ].events, bytes = r[C_READ].bytes;
	for (int k = 0; k < runs; k++) {
		for (int c = 0; c < ncases; c++) {
			struct result x;
			if (run_case(cases[c], path, &x) ||
			    (cases[c] == C_READ && x.events != events)) {
				fprintf(stderr, "bench_trace: case %d failed or changed\n", cases[c]);
				return 1;
			}
			secs[cases[c]][k] = x.secs;
			rss[cases[c]][k] = x.rss_mb;
		}
		ratio[k] = secs[base][k] / secs[C_READ][k];
		ratio_skip[k] = skip ? secs[base][k] / secs[C_READ_SKIP][k] : 0;
	}
	double mb = (double)bytes / 1e6;
	double file_mb = (double)st.st_size / 1e6;
	printf("file           %s (%s, %.1f MB on disk, %.1f MB JSON, %llu events, %.0f B/event)\n",
	       path, gz ? "gzip" : "plain", file_mb, mb, events, (double)bytes / (double)events);
	printf("rounds         %d (median; each case a fresh process, interleaved)\n", runs);
	static const char *const names[] = { "cat >/dev/null", "zlib inflate", "ts_trace_read",
					     "read, skip py+flow" };
	printf("%-18s %10s %10s %12s %12s\n", "case", "time_s", "MB/s", "peak_rss_MB", "rss_%_json");
	for (int c = 0; c < ncases; c++) {
		int w = cases[c];
		double t = median(secs[w], runs), m = median(rss[w], runs);
		printf("%-18s %10.3f %10.0f %12.1f %12.1f\n", names[w], t, mb / t, m, 100.0 * m / mb);
	}
	printf("ratio          ts_trace_read / %s = %.2f (speed, median of per-round ratios)\n",
	       gz ? "zlib inflate" : "cat", median(ratio, runs));
	if (skip)
		printf("ratio          read skip py+flow / %s = %.2f\n", gz ? "zlib inflate" : "cat",
		       median(ratio_skip, runs));
	return 0;
}

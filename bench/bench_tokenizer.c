/*
 * bench_tokenizer.c - JSON tokenizer throughput against baselines measured
 * in the same run.
 *
 * Baselines: `cat FILE > /dev/null` (how fast the bytes can be read at all)
 * and yajl 2's streaming SAX parser fed 1 MiB chunks (the well-known C
 * streaming parser, same engine as ijson's yajl2_c backend). Ours: the
 * trainscope pull tokenizer over the mmap'ed file, touching every token.
 * Each case runs once to warm the page cache, then RUNS rounds with the
 * cases interleaved; medians are reported. MB = 10^6 bytes.
 *
 * usage: bench_tokenizer FILE.json [RUNS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>
#include "trainscope/input.h"
#include "trainscope/json.h"
#include "bench_util.h"

static long long yajl_count;
static int cb_null(void *ctx) { (void)ctx; yajl_count++; return 1; }
static int cb_bool(void *ctx, int b) { (void)ctx; (void)b; yajl_count++; return 1; }
static int cb_number(void *ctx, const char *s, size_t n) { (void)ctx; (void)s; (void)n; yajl_count++; return 1; }
static int cb_string(void *ctx, const unsigned char *s, size_t n) { (void)ctx; (void)s; (void)n; yajl_count++; return 1; }
static int cb_start_map(void *ctx) { (void)ctx; yajl_count++; return 1; }
static int cb_map_key(void *ctx, const unsigned char *s, size_t n) { (void)ctx; (void)s; (void)n; yajl_count++; return 1; }
static int cb_end_map(void *ctx) { (void)ctx; yajl_count++; return 1; }
static int cb_start_array(void *ctx) { (void)ctx; yajl_count++; return 1; }
static int cb_end_array(void *ctx) { (void)ctx; yajl_count++; return 1; }

static const yajl_callbacks callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array
};

static long long run_yajl(const char *path)
{
	static unsigned char buf[1 << 20];
	int fd = open(path, O_RDONLY);
	yajl_handle h = yajl_alloc(&callbacks, NULL, NULL);
	ssize_t r;

	yajl_count = 0;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		if (yajl_parse(h, buf, (size_t)r) != yajl_status_ok) {
			fprintf(stderr, "yajl: parse error\n");
			exit(1);
		}
	if (yajl_complete_parse(h) != yajl_status_ok) {
		fprintf(stderr, "yajl: parse error at end\n");
		exit(1);
	}
	yajl_free(h);
	close(fd);
	return yajl_count;
}

static long long run_ours(const char *path)
{
	struct ts_input in;
	struct ts_json j;
	struct ts_err err;
	long long n = 0;
	int t;

	ts_err_init(&err);
	if (ts_input_open(&in, path, &err)) {
		fprintf(stderr, "open failed: %s\n", err.msg);
		exit(1);
	}
	ts_json_init_input(&j, &in, 0);
	while ((t = ts_json_next(&j, &err)) > 0)
		n++;
	if (t < 0) {
		fprintf(stderr, "tokenizer: %s at %lld\n", err.msg, (long long)err.offset);
		exit(1);
	}
	ts_json_release(&j);
	ts_input_release(&in);
	return n;
}

static long long run_cat(const char *path)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "cat '%s' > /dev/null", path);
	return system(cmd) == 0 ? 1 : -1;
}

/* One timed call of fn; checks the count against the warm-up's. */
static double timed(long long (*fn)(const char *), const char *path, long long want)
{
	double t0 = now_s();
	long long c = fn(path);
	double dt = now_s() - t0;

	if (c != want) {
		fprintf(stderr, "count changed between runs\n");
		exit(1);
	}
	return dt;
}

int main(int argc, char **argv)
{
	struct stat st;
	long long c_cat, c_yajl, c_ours;
	int runs = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 5;

	if (argc < 2 || stat(argv[1], &st) != 0) {
		fprintf(stderr, "usage: bench_tokenizer FILE.json [RUNS]\n");
		return 2;
	}
	if (runs < 1 || runs > 31)
		runs = 5;
	double mb = (double)st.st_size / 1e6;
	double tc[32], ty[32], to[32], ratio[32];

	/* warm-up, then the three cases interleaved in every round so that
	 * load from other jobs on a shared machine hits them alike; the
	 * ratio is the median of the per-round ratios */
	c_cat = run_cat(argv[1]);
	c_yajl = run_yajl(argv[1]);
	c_ours = run_ours(argv[1]);
	for (int r = 0; r < runs; r++) {
		tc[r] = timed(run_cat, argv[1], c_cat);
		ty[r] = timed(run_yajl, argv[1], c_yajl);
		to[r] = timed(run_ours, argv[1], c_ours);
		ratio[r] = ty[r] / to[r];
	}
	double t_cat = median(tc, runs), t_yajl = median(ty, runs), t_ours = median(to, runs);
	double r_yajl = median(ratio, runs);

	printf("file: %s (%.1f MB), median of %d runs after a warm-up\n", argv[1], mb, runs);
	printf("%-28s %10s %12s %14s\n", "case", "time (s)", "MB/s", "tokens");
	printf("%-28s %10.3f %12.0f %14s\n", "cat > /dev/null", t_cat, mb / t_cat, "-");
	printf("%-28s %10.3f %12.0f %14lld\n", "yajl 2 SAX (1 MiB chunks)", t_yajl, mb / t_yajl, c_yajl);
	printf("%-28s %10.3f %12.0f %14lld\n", "trainscope tokenizer", t_ours, mb / t_ours, c_ours);
	printf("ratio trainscope / yajl (median of per-round ratios): %.2fx\n", r_yajl);
	printf("ratio trainscope / cat (share of the read limit): %.2f\n", t_cat / t_ours);
	/* yajl reports no end-of-container for keys; both count one per value,
	 * key and container boundary, so the counts must agree */
	if (c_yajl != c_ours) {
		fprintf(stderr, "token counts differ: yajl %lld, trainscope %lld\n", c_yajl, c_ours);
		return 1;
	}
	return 0;
}

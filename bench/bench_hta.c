/*
 * bench_hta.c - cost of the HTA-compatibility mode against reading the
 * trace, both measured in the same run.
 *
 * Baseline: ts_trace_read() of the file (what every `trace` run pays).
 * Ours: ts_hta_analyze() over the model read once (preprocessing and all
 * seven analyzers). Each case runs once to warm up, then RUNS rounds;
 * medians are reported with the ratio analyze/read and events per second.
 *
 * usage: bench_hta FILE.json[.gz] [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "trainscope/hta.h"
#include "bench_util.h"

int main(int argc, char **argv)
{
	int runs = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 5;
	double rd[64], an[64];
	struct ts_trace t;
	const struct ts_trace *tp = &t;
	struct ts_err err;
	size_t nev = 0;

	if (argc < 2 || runs < 1 || runs > 64) {
		fprintf(stderr, "usage: bench_hta FILE.json[.gz] [RUNS<=64]\n");
		return 2;
	}
	for (int r = -1; r < runs; r++) {
		struct ts_hta h;
		double t0, t1, t2;

		ts_trace_init(&t);
		ts_err_init(&err);
		t0 = now_s();
		if (ts_trace_read(&t, argv[1], NULL, &err)) {
			fprintf(stderr, "bench_hta: %s\n", err.msg);
			return 2;
		}
		t1 = now_s();
		if (ts_hta_analyze(&tp, 1, &h, &err)) {
			fprintf(stderr, "bench_hta: %s\n", err.msg);
			return 2;
		}
		t2 = now_s();
		nev = t.ev.n;
		ts_hta_release(&h);
		ts_trace_release(&t);
		if (r >= 0) {
			rd[r] = t1 - t0;
			an[r] = t2 - t1;
		}
	}
	qsort(rd, (size_t)runs, sizeof(double), cmp_double);
	qsort(an, (size_t)runs, sizeof(double), cmp_double);
	printf("bench_hta %s: %zu events, median of %d\n", argv[1], nev, runs);
	printf("  read (baseline)   %8.1f ms\n", rd[runs / 2] * 1e3);
	printf("  hta analyze       %8.1f ms  (%.2fx the read, %.1f M events/s)\n",
	       an[runs / 2] * 1e3, an[runs / 2] / rd[runs / 2], (double)nev / an[runs / 2] / 1e6);
	return 0;
}

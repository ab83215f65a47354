/*
 * bench_logs.c - log parsing speed against newline counting of the same
 * file, measured in the same run.
 *
 * Writes a ~100 MB current-format Megatron-LM log (timestamps, MoE aux
 * loss, throughput, memory lines every 1000 iterations, an unrelated line
 * every 97) to /tmp, then times, median of 5 after one warm-up:
 *   baseline  memchr newline count over the mapped file (`wc -l`);
 *   parse     ts_steplog_read of the same file;
 *   analyse   ts_steps_analyze of the parsed series.
 * Times are CPU seconds of this process (the 2-vCPU VM is shared). Prints
 * MB/s and the parse/baseline ratio. Usage: bench_logs [MB] [file].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "trainscope/input.h"
#include "trainscope/logs.h"
#include "trainscope/steps.h"

/* CPU time of this process: the machine is shared, and wall time would
 * measure the neighbours. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static long long generate(const char *path, double mb)
{
	FILE *f = fopen(path, "w");
	long long bytes = 0, it = 0;
	unsigned s = 12345;

	if (!f)
		return -1;
	while (bytes < (long long)(mb * 1e6)) {
		double ms, loss;
		int n;

		it++;
		s = s * 1103515245u + 12345u;
		ms = 1000.0 + (double)(s >> 16 & 1023) / 10.0 + (it % 7 == 0 ? 300.0 : 0.0);
		loss = 2.0 + 8.0 / (1.0 + (double)it / 1000.0);
		n = fprintf(f, " [2026-01-27 12:%02lld:%02lld.%06lld] iteration %8lld/%8d | "
			    "consumed samples: %12lld | elapsed time per iteration (ms): %.1f | "
			    "throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: %.6E | "
			    "global batch size:   512 | lm loss: %.6E | load_balancing_loss: %.6E | "
			    "loss scale: 1.0 | grad norm: %.3f | number of skipped iterations:   0 | "
			    "number of nan iterations:   0 |\n",
			    it / 60 % 60, it % 60, (it * 7919) % 1000000, it, 99999999, it * 512, ms,
			    400.0 * 1000.0 / ms, 3e-4 * (1.0 - (double)it / 2e6), loss, 1.0 + loss / 100,
			    0.5 + (double)(s & 255) / 1000.0);
		bytes += n;
		if (it % 1000 == 0)
			bytes += fprintf(f, "[Rank 0] (after %lld iterations) memory (MB) | allocated: "
					 "11908.05 | max allocated: 12712.44 | reserved: 12954.00 | "
					 "max reserved: 12954.00\n", it);
		if (it % 97 == 0)
			bytes += fprintf(f, "WARNING: some unrelated library message %lld\n", it);
	}
	fclose(f);
	return it;
}

int main(int argc, char **argv)
{
	double mb = argc > 1 ? atof(argv[1]) : 100;
	const char *path = argc > 2 ? argv[2] : "/tmp/trainscope_bench_megatron.log";
	double tb[6], tp[6], ta[6], size_mb = 0;
	long long iters = generate(path, mb);
	size_t records = 0;

	if (iters < 0) {
		fprintf(stderr, "bench_logs: cannot write %s\n", path);
		return 1;
	}
	for (int rep = 0; rep < 6; rep++) {
		struct ts_input in;
		struct ts_err err;
		struct ts_steplog log;
		struct ts_steps_report r;
		struct ts_steps_opts o;
		size_t lines = 0;
		double t0;

		ts_err_init(&err);
		t0 = now();
		if (ts_input_open(&in, path, &err))
			return 1;
		while (ts_input_more(&in, in.len, &err) > 0)
			;
		{
			const char *p = (const char *)in.data, *e = p + in.len;

			while ((p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
				lines++;
				p++;
			}
		}
		size_mb = (double)in.len / 1e6;
		ts_input_release(&in);
		tb[rep] = now() - t0;

		ts_steplog_init(&log);
		t0 = now();
		if (ts_steplog_read(&log, path, &err))
			return 1;
		tp[rep] = now() - t0;
		records = log.steps.n;
		ts_steps_opts_init(&o);
		t0 = now();
		if (ts_steps_analyze(&log, &o, &r, &err))
			return 1;
		ta[rep] = now() - t0;
		ts_steps_report_release(&r);
		ts_steplog_release(&log);
		if (lines == 0)
			return 1;
	}
	/* Drop the warm-up run, median of the other five. */
	qsort(tb + 1, 5, sizeof(double), cmp_d);
	qsort(tp + 1, 5, sizeof(double), cmp_d);
	qsort(ta + 1, 5, sizeof(double), cmp_d);
	printf("input      %.1f MB, %lld iterations, %zu records parsed\n", size_mb, iters, records);
	printf("baseline   newline count   %8.1f MB/s  (%.3f s)\n", size_mb / tb[3], tb[3]);
	printf("parse      ts_steplog_read %8.1f MB/s  (%.3f s)  %.2fx baseline time\n",
	       size_mb / tp[3], tp[3], tp[3] / tb[3]);
	printf("analyse    ts_steps_analyze          %.3f s for %zu steps\n", ta[3], records);
	printf("end to end %.0f iteration lines/s; 1e6 such lines: %.2f s\n",
	       (double)records / (tp[3] + ta[3]), 1e6 * (tp[3] + ta[3]) / (double)records);
	if (argc <= 2)
		remove(path);
	return 0;
}

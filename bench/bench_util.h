/*
 * bench_util.h - the clock, comparator and median every bench program
 * uses (header-only: each bench program is its own file).
 */
#ifndef TS_BENCH_UTIL_H
#define TS_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* Seconds on clock clk (CLOCK_MONOTONIC for wall time,
 * CLOCK_PROCESS_CPUTIME_ID for CPU time). */
static inline double bench_clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double now_s(void)
{
	return bench_clock_s(CLOCK_MONOTONIC);
}

/* Ascending doubles, for qsort. */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median (upper middle for even n) of v[0..n), n >= 1; sorts v. */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return v[n / 2];
}

#endif

/*
 * bench_profile.c - speed of the per-rank analysis (ts_rank_profile) on a
 * trace already in memory, against a baseline measured in the same run:
 * one pass over the same columns that only sums durations per category
 * (the least any analysis must do), and a second one that sorts the start
 * times of all complete events with qsort (the intrinsic O(n log n) cost of
 * one exact interval sweep). Median of N runs after one warm-up.
 *
 * usage: bench_profile TRACE.json[.gz] [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "trainscope/profile.h"
#include "trainscope/trace.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static volatile int64_t sink;

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void baseline_sort(const struct ts_trace *t, int64_t *tmp)
{
	size_t k = 0;

	for (size_t i = 0; i < t->ev.n; i++)
		if (t->ev.ph[i] == 'X')
			tmp[k++] = ts_ev_ts(&t->ev, i);
	qsort(tmp, k, sizeof(*tmp), cmp_i64);
	sink += k ? tmp[k / 2] : 0;
}

static void baseline(const struct ts_trace *t)
{
	int64_t sum[TS_CAT_COUNT] = { 0 };

	for (size_t i = 0; i < t->ev.n; i++)
		if (t->ev.ph[i] == 'X' && ts_ev_dur(&t->ev, i) > 0 && t->ev.cat[i] < TS_CAT_COUNT)
			sum[t->ev.cat[i]] += ts_ev_dur(&t->ev, i) + (ts_ev_ts(&t->ev, i) & 1);
	for (int c = 0; c < TS_CAT_COUNT; c++)
		sink += sum[c];
}

int main(int argc, char **argv)
{
	struct ts_trace t;
	struct ts_trace_opts o = { 0 };
	struct ts_err err;
	int runs = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 7;
	double tp[64], tb[64], ts[64];
	int64_t *tmp;

	if (argc < 2 || runs < 1 || runs > 64) {
		fprintf(stderr, "usage: bench_profile TRACE [RUNS<=64]\n");
		return 2;
	}
	o.skip_python = 1;
	ts_trace_init(&t);
	if (ts_trace_read(&t, argv[1], &o, &err)) {
		char buf[1200];
		ts_err_format(&err, buf, sizeof(buf));
		fprintf(stderr, "bench_profile: %s\n", buf);
		return 2;
	}
	tmp = malloc((t.ev.n + 1) * sizeof(*tmp));
	if (!tmp)
		return 3;
	for (int r = -1; r < runs; r++) {
		struct ts_rank_prof p;
		double z = now(), a, b, c;
		baseline_sort(&t, tmp);
		a = now();
		baseline(&t);
		b = now();
		ts_rank_prof_init(&p);
		if (ts_rank_profile(&p, &t, NULL, &err))
			return 3;
		c = now();
		ts_rank_prof_release(&p);
		if (r >= 0) {
			ts[r] = a - z;
			tb[r] = b - a;
			tp[r] = c - b;
		}
	}
	qsort(tp, (size_t)runs, sizeof(double), cmp_d);
	qsort(tb, (size_t)runs, sizeof(double), cmp_d);
	qsort(ts, (size_t)runs, sizeof(double), cmp_d);
	printf("bench_profile: %zu events, %llu bytes of JSON\n", t.ev.n,
	       (unsigned long long)t.meta.bytes);
	printf("  baseline (sum durations per category): %.4f s median, %.1f Mevents/s\n",
	       tb[runs / 2], (double)t.ev.n / tb[runs / 2] / 1e6);
	printf("  baseline (qsort of all start times):   %.4f s median, %.1f Mevents/s\n",
	       ts[runs / 2], (double)t.ev.n / ts[runs / 2] / 1e6);
	printf("  ts_rank_profile:                       %.4f s median, %.1f Mevents/s, %.0f MB/s of JSON\n",
	       tp[runs / 2], (double)t.ev.n / tp[runs / 2] / 1e6,
	       (double)t.meta.bytes / tp[runs / 2] / 1e6);
	printf("  ratio profile/sum-baseline: %.1fx, profile/sort-baseline: %.1fx\n",
	       tp[runs / 2] / tb[runs / 2], tp[runs / 2] / ts[runs / 2]);
	free(tmp);
	ts_trace_release(&t);
	return 0;
}

/*
 * bench_hang.c - `trainscope hang` at scale on generated Flight Recorder
 * dumps (pickle protocol 2, as PyTorch writes them; made here in memory,
 * one rank at a time).
 *
 *   bench_hang [RANKS [ENTRIES [REPEATS]]]   default 64 2000 3
 *
 * Each rank's dump holds ENTRIES collectives of the default group (8 ops
 * cycling, seq 1..ENTRIES, all completed) except that the last rank never
 * issues the last one, so the analysis has one not_joined incident to find
 * (checked). Measured, median of REPEATS after one warm-up:
 *   read   - every dump read once into a fresh set (the baseline: reading
 *            the evidence, nothing else),
 *   total  - every dump read into one set, then ts_hang_analyze().
 * The ratio total / read is what the analysis costs on top of reading.
 * Dump generation is outside both timings.
 *
 * Then the watchdog logs of a larger job, one console: RANKS x 16 ranks,
 * each timing out in 4 groups (PG ID 0-3, seq 100 + group), rank 3's line
 * of group 0 missing; read + analyse (CPU, median of REPEATS), and the same
 * at 4 x the ranks, with the ratio (4.0 is linear; the log reader and the
 * analysis once compared each line with every line before).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_util.h"
#include "trainscope/hang.h"

struct buf {
	unsigned char *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			fprintf(stderr, "out of memory\n");
			exit(3);
		}
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void op(struct buf *b, unsigned char c)
{
	put(b, &c, 1);
}

/* strings are memoized as both picklers (Python's and c10's) do: the first
 * time SHORT_BINUNICODE + BINPUT, then BINGET */
static const char *memo[256];
static int nmemo;

static void str(struct buf *b, const char *s)
{
	size_t n = strlen(s);
	for (int i = 0; i < nmemo; i++)
		if (strcmp(memo[i], s) == 0) {
			op(b, 'h'); /* BINGET */
			op(b, (unsigned char)i);
			return;
		}
	op(b, 0x8c); /* SHORT_BINUNICODE */
	op(b, (unsigned char)n);
	put(b, s, n);
	if (nmemo < 256) {
		op(b, 'q'); /* BINPUT */
		op(b, (unsigned char)nmemo);
		memo[nmemo++] = s;
	}
}

static void i64(struct buf *b, long long v)
{
	if (v >= 0 && v < 256) {
		op(b, 'K');
		op(b, (unsigned char)v);
	} else if (v >= -2147483647LL && v <= 2147483647LL) {
		unsigned char le[4];
		for (int i = 0; i < 4; i++)
			le[i] = (unsigned char)((unsigned long long)v >> (8 * i));
		op(b, 'J');
		put(b, le, 4);
	} else {
		unsigned char le[8];
		for (int i = 0; i < 8; i++)
			le[i] = (unsigned char)((unsigned long long)v >> (8 * i));
		op(b, 0x8a); /* LONG1 */
		op(b, 8);
		put(b, le, 8);
	}
}

static void sizes(struct buf *b, long long a, long long c)
{
	op(b, ']');
	op(b, ']');
	op(b, '(');
	i64(b, a);
	i64(b, c);
	op(b, 'e'); /* APPENDS */
	op(b, 'a'); /* APPEND */
}

static const char *const ops[] = {
	"nccl:all_reduce", "nccl:_allgather_base", "nccl:_reduce_scatter_base", "nccl:broadcast",
	"nccl:all_reduce", "nccl:all_reduce", "nccl:_allgather_base", "nccl:all_reduce",
};

/* one rank's dump; rank `skip_last` stops one collective early */
static void make_dump(struct buf *b, int rank, int ranks, int entries)
{
	char rk[64];
	int n = rank == ranks - 1 ? entries - 1 : entries;

	b->n = 0;
	nmemo = 0;
	op(b, 0x80);
	op(b, 2);
	op(b, '}');
	op(b, '(');
	str(b, "version");
	str(b, "2.5");
	str(b, "pg_config");
	op(b, '}');
	str(b, "0");
	op(b, '}');
	op(b, '(');
	str(b, "name");
	str(b, "0");
	str(b, "desc");
	str(b, "default_pg");
	str(b, "ranks");
	snprintf(rk, sizeof(rk), "[0..%d]", ranks - 1); /* a range string keeps dumps small */
	op(b, 0x8c);
	op(b, (unsigned char)strlen(rk));
	put(b, rk, strlen(rk));
	op(b, 'u');
	op(b, 's');
	str(b, "rank");
	i64(b, rank);
	str(b, "entries");
	op(b, ']');
	op(b, '(');
	for (int i = 0; i < n; i++) {
		op(b, '}');
		op(b, '(');
		str(b, "record_id");
		i64(b, i);
		str(b, "pg_id");
		i64(b, 0);
		str(b, "process_group");
		str(b, "0");
		str(b, "default_pg");
		op(b, 0x86); /* TUPLE2 */
		str(b, "collective_seq_id");
		i64(b, i + 1);
		str(b, "p2p_seq_id");
		i64(b, 0);
		str(b, "op_id");
		i64(b, i + 1);
		str(b, "profiling_name");
		str(b, ops[i % 8]);
		str(b, "time_created_ns");
		i64(b, 1724779239936775119LL + i * 1000000LL);
		str(b, "input_sizes");
		sizes(b, 4096, 1024 + i % 8);
		str(b, "input_dtypes");
		op(b, ']');
		str(b, "BFloat16");
		op(b, 'a');
		str(b, "output_sizes");
		sizes(b, 4096, 1024 + i % 8);
		str(b, "output_dtypes");
		op(b, ']');
		str(b, "BFloat16");
		op(b, 'a');
		str(b, "state");
		str(b, i == n - 1 && rank != ranks - 1 && n == entries ? "scheduled" : "completed");
		str(b, "retired");
		op(b, 0x88);
		str(b, "timeout_ms");
		i64(b, 600000);
		str(b, "is_p2p");
		op(b, 0x89);
		op(b, 'u'); /* SETITEMS */
	}
	op(b, 'e');
	op(b, 'u');
	op(b, '.');
}

/* the console of `ranks` ranks timing out in 4 groups, rank 3 silent in group 0 */
static void make_log(struct buf *b, int ranks)
{
	char line[400];

	for (int r = 0; r < ranks; r++)
		for (int g = 0; g < 4; g++) {
			int n;
			if (r == 3 && g == 0)
				continue;
			n = snprintf(line, sizeof(line),
				     "[rank%d]:[E125 18:38:34.698812301 ProcessGroupNCCL.cpp:2057] [PG ID %d PG GUID "
				     "%d(pg%d) Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, "
				     "OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600020 "
				     "milliseconds before timing out.\n", r, g, g, g, r, 100 + g);
			put(b, line, (size_t)n);
		}
}

/* median CPU seconds of reading and analysing log, REPEATS after a warm-up */
static double time_log(const struct buf *log, int reps)
{
	double *c = calloc((size_t)reps + 1, sizeof(double)), m;
	struct ts_err err;

	if (!c)
		exit(3);
	for (int k = 0; k <= reps; k++) {
		struct ts_hang_set s;
		struct ts_hang_result res;
		double c0 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID);
		ts_hang_set_init(&s);
		if (ts_hang_read_lines_mem(&s, log->p, log->n, "console.log", &err) ||
		    ts_hang_analyze(&s, &res, &err)) {
			fprintf(stderr, "log: %s\n", err.msg);
			exit(1);
		}
		c[k] = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
		if (res.incidents.n != 4) {
			fprintf(stderr, "log: %zu incidents, want 4\n", res.incidents.n);
			exit(1);
		}
		ts_hang_result_release(&res);
		ts_hang_set_release(&s);
	}
	m = median(c + 1, reps);
	free(c);
	return m;
}

int main(int argc, char **argv)
{
	int ranks = argc > 1 ? atoi(argv[1]) : 64;
	int entries = argc > 2 ? atoi(argv[2]) : 2000;
	int reps = argc > 3 ? atoi(argv[3]) : 3;
	struct buf *dumps;
	double *t_read, *t_total, *c_read, *c_total, bytes = 0;
	struct ts_err err;

	if (ranks < 2 || entries < 2 || reps < 1) {
		fprintf(stderr, "usage: bench_hang [RANKS>=2 [ENTRIES>=2 [REPEATS>=1]]]\n");
		return 2;
	}
	dumps = calloc((size_t)ranks, sizeof(*dumps));
	t_read = calloc((size_t)reps + 1, sizeof(double));
	t_total = calloc((size_t)reps + 1, sizeof(double));
	c_read = calloc((size_t)reps + 1, sizeof(double));
	c_total = calloc((size_t)reps + 1, sizeof(double));
	if (!dumps || !t_read || !t_total || !c_read || !c_total)
		return 3;
	for (int r = 0; r < ranks; r++) {
		make_dump(&dumps[r], r, ranks, entries);
		bytes += (double)dumps[r].n;
	}
	printf("%d dumps x %d entries (pickle protocol 2), %.1f MB\n", ranks, entries, bytes / 1e6);
	for (int k = 0; k <= reps; k++) {
		struct ts_hang_set s;
		struct ts_hang_result res;
		char name[32];
		double t0 = now_s(), c0 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID);
		for (int r = 0; r < ranks; r++) {
			ts_hang_set_init(&s);
			snprintf(name, sizeof(name), "rank_%d", r);
			if (ts_hang_read_pickle_mem(&s, dumps[r].p, dumps[r].n, name, r, &err)) {
				fprintf(stderr, "read: %s\n", err.msg);
				return 1;
			}
			ts_hang_set_release(&s);
		}
		t_read[k] = now_s() - t0;
		c_read[k] = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
		t0 = now_s();
		c0 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID);
		ts_hang_set_init(&s);
		for (int r = 0; r < ranks; r++) {
			snprintf(name, sizeof(name), "rank_%d", r);
			if (ts_hang_read_pickle_mem(&s, dumps[r].p, dumps[r].n, name, r, &err)) {
				fprintf(stderr, "read: %s\n", err.msg);
				return 1;
			}
		}
		if (ts_hang_analyze(&s, &res, &err)) {
			fprintf(stderr, "analyze: %s\n", err.msg);
			return 1;
		}
		t_total[k] = now_s() - t0;
		c_total[k] = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
		if (res.incidents.n != 1 || res.incidents.v[0].cls != TS_HANG_NOT_JOINED ||
		    res.incidents.v[0].culprits.n != 1 || res.incidents.v[0].culprits.v[0] != ranks - 1 ||
		    res.incidents.v[0].seq != entries) {
			fprintf(stderr, "wrong verdict: %zu incidents\n", res.incidents.n);
			return 1;
		}
		ts_hang_result_release(&res);
		ts_hang_set_release(&s);
	}
	/* drop the warm-up */
	double read = median(t_read + 1, reps), total = median(t_total + 1, reps);
	double cread = median(c_read + 1, reps), ctotal = median(c_total + 1, reps);
	printf("read once:        %.3f s wall, %.3f s CPU  (%.0f MB/s, %.2f M entries/s of CPU)\n", read, cread,
	       bytes / 1e6 / cread, (double)ranks * entries / 1e6 / cread);
	printf("read + analyse:   %.3f s wall, %.3f s CPU  (ratio %.2f x reading once, CPU)\n", total, ctotal,
	       ctotal / cread);
	printf("verdict: not_joined at seq %d, culprit rank %d (as generated)\n", entries, ranks - 1);
	{
		struct buf small = { 0 }, big = { 0 };
		double cs, cb;
		make_log(&small, ranks * 16);
		make_log(&big, ranks * 64);
		cs = time_log(&small, reps);
		cb = time_log(&big, reps);
		printf("watchdog logs:    %d ranks x 4 groups %.3f s CPU, %d ranks %.3f s (ratio %.2f for 4 x the lines)\n",
		       ranks * 16, cs, ranks * 64, cb, cb / cs);
		free(small.p);
		free(big.p);
	}
	for (int r = 0; r < ranks; r++)
		free(dumps[r].p);
	free(dumps);
	free(t_read);
	free(t_total);
	free(c_read);
	free(c_total);
	return 0;
}

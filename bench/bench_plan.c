/*
 * bench_plan.c - the full layout search for DeepSeek-V3 on 4096 H100
 * against baselines measured in the same run.
 *
 * Cases, interleaved over RUNS rounds after one warm-up round, medians
 * reported (wall clock and CPU time of this process):
 *   enumerate  the legal layouts only (no memory, no timing): the floor;
 *   memory     enumeration + memory of every layout with the
 *              recompute/offload ladder, no step-time model;
 *   full       everything `trainscope plan` computes: memory, FLOPs,
 *              communication per link, step time, the rule sieve and the
 *              ranking.
 * Goal: full < 1 s. The ratios say what the memory model and the timing
 * add on top of enumeration.
 *
 * usage: bench_plan [MODEL.json] [RUNS]   (default: $DATA/models/deepseek-v3.json, 5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "trainscope/plan.h"
#include "bench_util.h"

static int once(const struct ts_model *m, int mode, double *wall, double *cpu, size_t *n)
{
	struct ts_plan_opts o;
	struct ts_plan p;
	struct ts_err err;
	double w0, c0;
	int rc;

	ts_plan_opts_init(&o);
	o.gpus = 4096;
	o.gpus_per_node = 8;
	o.seq = 4096;
	o.gbs = 16384;
	o.capacity_bytes = 80.0 * 1073741824.0;
	o.peak_flops = 989.4e12;
	o.intra_bw = 450e9;
	o.inter_bw = 50e9;
	o.mem_bw = 3.35e12;
	o.sms = 132;
	o.max_mbs = 8; /* the widest search: MBS 1, 2, 4, 8 */
	o.enumerate_only = mode == 0;
	o.memory_only = mode == 1;
	ts_plan_init(&p);
	ts_err_init(&err);
	w0 = bench_clock_s(CLOCK_MONOTONIC);
	c0 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID);
	rc = ts_plan_run(m, &o, &p, &err);
	*cpu = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	*wall = bench_clock_s(CLOCK_MONOTONIC) - w0;
	*n = mode == 0 ? p.parallel_layouts : p.n;
	ts_plan_release(&p);
	if (rc)
		fprintf(stderr, "bench_plan: %s\n", err.msg);
	return rc;
}

int main(int argc, char **argv)
{
	static const char *const names[3] = { "enumerate", "memory", "full" };
	char def[1024];
	const char *data = getenv("DATA");
	const char *path = argc > 1 ? argv[1] : def;
	int runs = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 5;
	double wall[3][64], cpu[3][64];
	size_t n[3] = { 0, 0, 0 };
	struct ts_model m;
	struct ts_err err;

	snprintf(def, sizeof(def), "%s/models/deepseek-v3.json", data && *data ? data : "../shared/data");
	if (runs < 1 || runs > 64)
		runs = 5;
	ts_model_init(&m);
	ts_err_init(&err);
	if (ts_model_read_config(&m, path, &err) || ts_model_finish(&m, &err)) {
		fprintf(stderr, "bench_plan: %s: %s\n", path, err.msg);
		return 2;
	}
	for (int r = -1; r < runs; r++)
		for (int mode = 0; mode < 3; mode++) {
			double w, c;
			if (once(&m, mode, &w, &c, &n[mode]))
				return 3;
			if (r >= 0) {
				wall[mode][r] = w;
				cpu[mode][r] = c;
			}
		}
	printf("plan search, %s on 4096 GPUs (8 per node, 80 GiB), seq 4096, GBS 16384; median of %d\n",
	       m.family, runs);
	printf("%-10s %10s %12s %12s %10s\n", "case", "layouts", "wall (ms)", "cpu (ms)", "x enum");
	for (int mode = 0; mode < 3; mode++) {
		qsort(wall[mode], (size_t)runs, sizeof(double), cmp_double);
		qsort(cpu[mode], (size_t)runs, sizeof(double), cmp_double);
	}
	for (int mode = 0; mode < 3; mode++)
		printf("%-10s %10zu %12.1f %12.1f %10.1f\n", names[mode], n[mode], wall[mode][runs / 2] * 1e3,
		       cpu[mode][runs / 2] * 1e3, cpu[mode][runs / 2] / cpu[0][runs / 2]);
	printf("goal: full search < 1000 ms wall: %s\n", wall[2][runs / 2] < 1.0 ? "met" : "NOT met");
	return 0;
}

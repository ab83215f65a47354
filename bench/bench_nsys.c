/*
 * bench_nsys.c - `cuda_gpu_kern_sum` on an Nsight Systems export: ours
 * (ts_nsys_open, one pass over CUPTI_ACTIVITY_KIND_KERNEL, statistics, CSV)
 * against /usr/bin/python3's sqlite3 module computing the same report on
 * the same file (the join with StringIds, grouping, median, sample
 * standard deviation, ordering, CSV), both measured in this run.
 *
 * Each side runs once to warm the page cache, then RUNS rounds; medians
 * are reported, in CPU seconds (user + system: the build machine is
 * shared, so wall time measures the neighbours). Python is timed twice:
 * the whole process (interpreter start included, what a user pays) and
 * the query alone (time.process_time() inside Python). The two CSVs are
 * compared so the ratio is between equal outputs. Peak RSS of this process
 * is reported against the file size.
 *
 * usage: bench_nsys FILE.sqlite [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "trainscope/nsys.h"
#include "bench_util.h"

static const char *const py =
	"import csv, io, math, sqlite3, statistics, sys, time\n"
	"t0 = time.process_time()\n"
	"db = sqlite3.connect('file:%s?mode=ro' % sys.argv[1], uri=True)\n"
	"S = dict(db.execute('SELECT id, value FROM StringIds'))\n"
	"g = {}\n"
	"for d, n in db.execute('SELECT end - start, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL'):\n"
	"    g.setdefault(S[n], []).append(d)\n"
	"def r1(x): return math.floor(x * 10 + 0.5) / 10\n"
	"rows = []\n"
	"for k, v in g.items():\n"
	"    v.sort(); n = len(v)\n"
	"    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2\n"
	"    rows.append((k, sum(v), n, sum(v) / n, med, v[0], v[-1], statistics.stdev(v) if n > 1 else 0.0))\n"
	"tot = sum(r[1] for r in rows)\n"
	"rows.sort(key=lambda r: (-r[1], r[2], r[0].encode()))\n"
	"o = io.StringIO(); w = csv.writer(o, lineterminator='\\n')\n"
	"w.writerow(['Time (%)', 'Total Time (ns)', 'Instances', 'Avg (ns)', 'Med (ns)', 'Min (ns)', 'Max (ns)', 'StdDev (ns)', 'Name'])\n"
	"for r in rows:\n"
	"    w.writerow(['%.1f' % r1(r[1] * 100.0 / tot), r[1], r[2], '%.1f' % r1(r[3]), '%.1f' % r1(r[4]), r[5], r[6], '%.1f' % r1(r[7]), r[0]])\n"
	"open(sys.argv[2], 'w').write(o.getvalue())\n"
	"sys.stderr.write('%.6f\\n' % (time.process_time() - t0))\n";

static double children_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static int ours(const char *path, struct ts_sb *csv)
{
	struct ts_nsys x;
	struct ts_srep r;
	struct ts_err err;
	int rc;

	ts_nsys_init(&x);
	ts_srep_init(&r, TS_SREP_KERN_SUM);
	ts_err_init(&err);
	ts_sb_reset(csv);
	rc = ts_nsys_open(&x, path, &err);
	if (!rc)
		rc = ts_srep_add_nsys(&r, &x, &err);
	if (!rc)
		rc = ts_srep_finish(&r, &err);
	if (!rc)
		ts_srep_csv(&r, csv);
	else
		fprintf(stderr, "bench_nsys: %s\n", err.msg);
	ts_srep_release(&r);
	ts_nsys_close(&x);
	return rc;
}

int main(int argc, char **argv)
{
	int runs = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 5;
	double us[64], pw[64], pq[64];
	char script[] = "/tmp/bench-nsys-XXXXXX", out[64], cmd[1024];
	struct ts_sb csv;
	struct stat sb;
	struct rusage ru;
	FILE *f;
	int fd, same = 0;

	if (argc < 2 || runs < 1 || runs > 64 || stat(argv[1], &sb)) {
		fprintf(stderr, "usage: bench_nsys FILE.sqlite [RUNS<=64]\n");
		return 2;
	}
	fd = mkstemp(script);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "bench_nsys: cannot write the python script\n");
		return 2;
	}
	fputs(py, f);
	fclose(f);
	snprintf(out, sizeof(out), "%s.csv", script);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s '%s' %s 2>%s.t", script, argv[1], out, script);
	ts_sb_init(&csv);
	for (int r = -1; r < runs; r++) {
		double t0 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID), t1, c0, c1;
		char tb[64];
		FILE *tf;
		if (ours(argv[1], &csv))
			return 2;
		t1 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID);
		c0 = children_cpu_s();
		if (system(cmd) != 0) {
			fprintf(stderr, "bench_nsys: /usr/bin/python3 baseline failed\n");
			return 2;
		}
		c1 = children_cpu_s();
		snprintf(tb, sizeof(tb), "%s.t", script);
		tf = fopen(tb, "r");
		if (r >= 0) {
			us[r] = t1 - t0;
			pw[r] = c1 - c0;
			pq[r] = 0;
			if (!tf || fscanf(tf, "%lf", &pq[r]) != 1)
				pq[r] = 0;
		}
		if (tf)
			fclose(tf);
	}
	f = fopen(out, "r");
	if (f) {
		char *buf = malloc(csv.len + 2);
		size_t n = buf ? fread(buf, 1, csv.len + 1, f) : 0;
		same = buf && n == csv.len && memcmp(buf, csv.buf, n) == 0;
		free(buf);
		fclose(f);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("bench_nsys %s: %lld bytes, cuda_gpu_kern_sum, CPU time, median of %d\n", argv[1],
	       (long long)sb.st_size, runs);
	printf("  trainscope (open + probe + report)  %8.2f ms\n", median(us, runs) * 1e3);
	printf("  python3 sqlite3, whole process      %8.2f ms  (%.1fx ours)\n", median(pw, runs) * 1e3,
	       median(pw, runs) / median(us, runs));
	printf("  python3 sqlite3, query alone        %8.2f ms  (%.1fx ours)\n", median(pq, runs) * 1e3,
	       median(pq, runs) / median(us, runs));
	printf("  outputs %s\n", same ? "identical" : "DIFFER");
	printf("  peak RSS of this process %ld KiB (%.1f%% of the file)\n",
	       ru.ru_maxrss, 100.0 * (double)ru.ru_maxrss * 1024.0 / (double)sb.st_size);
	unlink(script);
	unlink(out);
	snprintf(cmd, sizeof(cmd), "%s.t", script);
	unlink(cmd);
	ts_sb_release(&csv);
	return same ? 0 : 1;
}

/*
 * bench_faults.c - what fresh anonymous memory costs on this host.
 *
 * The trace engine's columns and analysis buffers are fresh memory, and on
 * the VMs the issue #14 ratios are measured on, the first write to a page
 * costs from about 1 to 12 us depending on the host: enough to move a
 * ratio by a third between two hosts running the same binary. This
 * program prints that cost beside the ratios so that a recorded
 * `make bench` says which kind of host it ran on. Modes, each on its own
 * fresh mapping of SIZE MiB, one write per 4 KiB page:
 *   4k        plain first-touch page faults
 *   populate  MADV_POPULATE_WRITE over the mapping, then the writes (what
 *             the reader's prefault helper does)
 *   thp       MADV_HUGEPAGE, then the writes (transparent huge pages; with
 *             defrag in "madvise" mode a fault may wait on compaction)
 * Medians over RUNS rounds, the modes interleaved; also the minor faults
 * the kernel counted for the writes.
 *
 * usage: bench_faults [SIZE_MIB] [RUNS]   (defaults 256 and 5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include "bench_util.h"

enum { M_4K, M_POPULATE, M_THP, M_COUNT };
static const char *const mode_name[M_COUNT] = { "4k", "populate", "thp" };

static long minflt(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return u.ru_minflt;
}

/* One round of mode m over bytes: seconds for advice plus writes; the
 * faults counted go to *faults. -1 when the mapping fails. */
static double one(int m, size_t bytes, long *faults)
{
	unsigned char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t0;
	long f0;

	if (p == MAP_FAILED)
		return -1;
	f0 = minflt();
	t0 = now_s();
#ifdef MADV_POPULATE_WRITE
	if (m == M_POPULATE)
		madvise(p, bytes, MADV_POPULATE_WRITE);
#endif
#ifdef MADV_HUGEPAGE
	if (m == M_THP)
		madvise(p, bytes, MADV_HUGEPAGE);
#endif
	for (size_t i = 0; i < bytes; i += 4096)
		((volatile unsigned char *)p)[i] = 1;
	t0 = now_s() - t0;
	*faults = minflt() - f0;
	munmap(p, bytes);
	return t0;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	size_t bytes = mib << 20, pages = bytes / 4096;
	double *secs;
	long faults[M_COUNT] = { 0 };

	if (mib == 0 || runs < 1) {
		fprintf(stderr, "usage: bench_faults [SIZE_MIB] [RUNS]\n");
		return 2;
	}
	secs = malloc((size_t)runs * M_COUNT * sizeof(*secs));
	if (!secs)
		return 1;
	for (int r = 0; r < runs; r++)
		for (int m = 0; m < M_COUNT; m++) {
			double s = one(m, bytes, &faults[m]);
			if (s < 0) {
				fprintf(stderr, "bench_faults: cannot map %zu MiB\n", mib);
				return 1;
			}
			secs[m * runs + r] = s;
		}
	printf("fresh memory   %zu MiB per round, %d rounds (median, min-max)\n", mib, runs);
	printf("%-10s %10s %12s %12s %10s\n", "mode", "time_s", "us_per_4KiB", "GB_per_s", "faults");
	for (int m = 0; m < M_COUNT; m++) {
		double *v = secs + m * runs, med = median(v, runs);
		printf("%-10s %10.3f %12.2f %12.2f %10ld   (%.3f-%.3f s)\n", mode_name[m], med,
		       med / (double)pages * 1e6, (double)bytes / med / 1e9, faults[m], v[0],
		       v[runs - 1]);
	}
	free(secs);
	return 0;
}

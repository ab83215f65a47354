/*
 * limits.c - the memory budget for analyses (see limits.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trainscope/limits.h"

static uint64_t budget;
static int64_t charged;

static uint64_t machine_default(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize
					      : (uint64_t)4 << 30;
	FILE *f = fopen("/sys/fs/cgroup/memory.max", "r");

	if (f) {
		char buf[32];
		if (fgets(buf, sizeof(buf), f) && buf[0] >= '0' && buf[0] <= '9') {
			uint64_t cg = strtoull(buf, NULL, 10);
			if (cg > 0 && cg < ram)
				ram = cg;
		}
		fclose(f);
	}
	return ram / 4 * 3;
}

uint64_t ts_mem_budget(void)
{
	uint64_t b = __atomic_load_n(&budget, __ATOMIC_RELAXED);

	if (!b) {
		b = machine_default();
		__atomic_store_n(&budget, b, __ATOMIC_RELAXED);
	}
	return b;
}

void ts_mem_budget_set(uint64_t bytes)
{
	__atomic_store_n(&budget, bytes, __ATOMIC_RELAXED);
}

int ts_parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v, mul = 1;

	if (!s || !*s || *s == '-')
		return -1;
	v = strtod(s, &end);
	if (end == s || !(v > 0))
		return -1;
	switch (*end) {
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
	default: break;
	}
	if (mul > 1 && *end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v * mul > 0x1p60 || v * mul < 1)
		return -1;
	*out = (uint64_t)(v * mul);
	return 0;
}

int ts_mem_charge(int64_t delta)
{
	int64_t now = __atomic_add_fetch(&charged, delta, __ATOMIC_SEQ_CST);

	if (delta > 0 && (uint64_t)now > ts_mem_budget()) {
		__atomic_sub_fetch(&charged, delta, __ATOMIC_SEQ_CST);
		return -1;
	}
	return 0;
}

uint64_t ts_mem_charged(void)
{
	int64_t v = __atomic_load_n(&charged, __ATOMIC_SEQ_CST);

	return v > 0 ? (uint64_t)v : 0;
}

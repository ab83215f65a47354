/*
 * limits.h - the memory budget for analyses.
 *
 * An input that is too large for the machine is an input error (exit 2,
 * with how much was read), not an out-of-memory crash or an internal error
 * after the kernel starts swapping. Readers that grow with the input (the
 * trace columns: about TS_TRACE_EVENT_COST bytes per event once the
 * analyses' working set is counted) ask before they grow.
 *
 * The default is 3/4 of the smaller of the physical memory and the cgroup
 * limit (/sys/fs/cgroup/memory.max); `--max-memory SIZE` sets it.
 */
#ifndef TRAINSCOPE_LIMITS_H
#define TRAINSCOPE_LIMITS_H

#include <stdint.h>

/* The budget in bytes (computed once from the machine unless set). */
uint64_t ts_mem_budget(void);
/* Set it (0 restores the default). */
void ts_mem_budget_set(uint64_t bytes);
/* Charge delta bytes (negative to give back) against the budget, process
 * wide (traces are read by several threads). Returns 0, or -1 without
 * charging when a positive delta would exceed the budget. */
int ts_mem_charge(int64_t delta);
/* Bytes charged now. */
uint64_t ts_mem_charged(void);

/* Bytes per trace event charged by the trace reader: 78 in the columns,
 * the rest in the per-event arrays of the analyses. Measured: peak RSS of
 * `trace` on 0.3 M and 1.5 M one-kernel events grew by 235 bytes per event
 * (84 MB -> 366 MB). */
#define TS_TRACE_EVENT_COST 256
/* Parse "512M", "8G", "1.5T", "4096" (bytes); K/M/G/T are powers of 1024,
 * an optional trailing "B"/"iB" is accepted. 0 and a negative, malformed or
 * absurd (> 2^60) value are errors. Returns 0 or -1. */
int ts_parse_size(const char *s, uint64_t *out);

#endif

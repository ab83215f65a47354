/*
 * cli_gate.h - helpers shared by the evidence-gate commands (contract, ab,
 * ledger, validate): the injectable clock and the process runner the
 * contract probes use.
 */
#ifndef TRAINSCOPE_CLI_GATE_H
#define TRAINSCOPE_CLI_GATE_H

#include <stdint.h>
#include "trainscope/core.h"

/*
 * SOURCE_DATE_EPOCH (seconds) as nanoseconds when set, for reproducible
 * output in tests; 0 (use the real clock) otherwise.
 */
int64_t cli_fixed_now_ns(void);

/*
 * Run argv[0] (searched in PATH) with argv, stdin from /dev/null, stdout
 * captured into out (at most 1 MiB), stderr discarded, killed after
 * timeout_ms. Returns the exit status (0..255), -1 when the program is not
 * installed, -2 when it could not be run or timed out.
 */
int cli_run_capture(const char *const argv[], struct ts_sb *out, int timeout_ms);

#endif

/*
 * fuzz_logs.c - libFuzzer target for the training-log reader and the steps
 * analysis: any bytes must parse or fail cleanly, and whatever parses must
 * analyse without crashing, hanging or leaking.
 */
#include <stddef.h>
#include <stdint.h>
#include "trainscope/logs.h"
#include "trainscope/steps.h"
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_steplog log;
	struct ts_steps_report rep;
	struct ts_steps_opts o;
	struct ts_err err;

	ts_steplog_init(&log);
	ts_err_init(&err);
	if (ts_steplog_read_mem(&log, data, size, "fuzz.log", &err) == 0) {
		uint64_t ign = 0;
		for (int k = 0; k < TS_IGN_COUNT; k++)
			ign += log.ignored[k];
		if (ign > log.steps.n)
			abort(); /* at most one unusable step time or iteration per record */
		ts_steps_opts_init(&o);
		if (ts_steps_analyze(&log, &o, &rep, &err) == 0) {
			oracle_share(rep.periodic_share);
			oracle_share(rep.outlier_share);
			ts_steps_report_release(&rep);
		}
		o.window_first = 2;
		o.window_last = 40;
		if (ts_steps_analyze(&log, &o, &rep, &err) == 0)
			ts_steps_report_release(&rep);
	}
	ts_steplog_release(&log);
	return 0;
}

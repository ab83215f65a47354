/*
 * fuzz_logs.c - libFuzzer target for the training-log reader, the loss-
 * health verdict and the steps analysis: any bytes must parse or fail
 * cleanly, and whatever parses must analyse without crashing, hanging or
 * leaking, with outputs that keep their invariants (a verdict that agrees
 * with its evidence, no share of wall time above 100 %, no negative CI of
 * a phase time).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "trainscope/logs.h"
#include "trainscope/steps.h"
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int share_ok(double s)
{
	return isnan(s) || (s >= -1e-9 && s <= 1 + 1e-9);
}

static void check(const struct ts_steps_report *r)
{
	const struct ts_loss_health *h = &r->health;

	if (h->verdict < TS_LOSS_FINITE || h->verdict > TS_LOSS_MISSING)
		abort();
	if (h->verdict == TS_LOSS_NONFINITE &&
	    (h->nbad == 0 || h->first_bad_iteration != h->bad_iterations[0]))
		abort();
	if (h->verdict != TS_LOSS_NONFINITE && h->nbad != 0)
		abort();
	if (h->verdict == TS_LOSS_FINITE && h->first_bad_iteration != TS_NO_INT)
		abort();
	for (size_t i = 1; i < h->nbad; i++)
		if (h->bad_iterations[i] <= h->bad_iterations[i - 1])
			abort();
	if (!share_ok(r->periodic_share) || !share_ok(r->outlier_share))
		abort();
	for (size_t i = 0; i < r->nphases; i++) {
		const struct ts_phase_summary *p = &r->phases[i];
		double both = (isnan(p->periodic_share) ? 0 : p->periodic_share) +
			      (isnan(p->stall_share) ? 0 : p->stall_share);

		if (!share_ok(p->periodic_share) || !share_ok(p->stall_share) || !share_ok(both))
			abort();
		if (p->ci.method && p->ci.lo < 0)
			abort();
		if (p->periodic.found && (p->periodic.hits > p->periodic.slots || p->periodic.period < 2))
			abort();
	}
}

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
			check(&rep);
			oracle_share(rep.periodic_share);
			oracle_share(rep.outlier_share);
			ts_steps_report_release(&rep);
		}
		o.window_first = 2;
		o.window_last = 40;
		if (ts_steps_analyze(&log, &o, &rep, &err) == 0) {
			check(&rep);
			ts_steps_report_release(&rep);
		}
	}
	ts_steplog_release(&log);
	return 0;
}

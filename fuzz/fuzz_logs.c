/*
 * fuzz_logs.c - libFuzzer target for the training-log reader, the loss-
 * health verdict and the steps analysis: any bytes must parse or fail
 * cleanly, and whatever parses must analyse without crashing, hanging or
 * leaking, with outputs that keep their invariants (a verdict that agrees
 * with its evidence, no share of wall time above 100 %, no negative CI of
 * a phase time). Value-level oracles besides: the same bytes with CRLF
 * line ends (what a Windows copy or a tee through a pty gives), and with a
 * carriage return before every line that is not blank (a line drawn over
 * nothing: what a terminal shows is the same), must read as the same
 * steps, field by field.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* Both doubles the same value (NaN equal to NaN). */
static int same_f(double a, double b)
{
	return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof(a)) == 0;
}

/* Every step of a read as in b, the line numbers and files aside. */
static void same_steps(const struct ts_steplog *a, const struct ts_steplog *b)
{
	if (a->steps.n != b->steps.n || a->extras.n != b->extras.n)
		abort();
	for (size_t i = 0; i < a->steps.n; i++) {
		const struct ts_step *x = &a->steps.v[i], *y = &b->steps.v[i];
		if (x->iteration != y->iteration || x->step_ns != y->step_ns || x->rank != y->rank ||
		    x->flags != y->flags || x->skipped != y->skipped || x->nan_iters != y->nan_iters ||
		    x->consumed_samples != y->consumed_samples || x->global_batch != y->global_batch ||
		    x->tokens != y->tokens || x->train_iters != y->train_iters ||
		    x->extra_n != y->extra_n || !same_f(x->loss, y->loss) ||
		    !same_f(x->grad_norm, y->grad_norm) || !same_f(x->lr, y->lr) ||
		    !same_f(x->tflops, y->tflops) || !same_f(x->mem_max_alloc_bytes, y->mem_max_alloc_bytes))
			abort();
	}
	for (size_t i = 0; i < a->extras.n; i++)
		if (!same_f(a->extras.v[i].value, b->extras.v[i].value))
			abort();
}

/* 1 when data[i..] up to the line's end holds more than blanks. */
static int line_has_text(const uint8_t *data, size_t size, size_t i)
{
	for (; i < size && data[i] != '\n'; i++)
		if (data[i] != ' ' && data[i] != '\t')
			return 1;
	return 0;
}

/* The input respelled, when it has no '\r' of its own: every "\n" written
 * "\r\n" (crlf), or a '\r' put before every line with text (not crlf).
 * It must read as the same steps. */
static void respelled_oracle(const uint8_t *data, size_t size, const struct ts_steplog *ref,
			     int crlf)
{
	struct ts_steplog log;
	struct ts_err err;
	size_t n = 0;
	uint8_t *out;

	if (memchr(data, '\r', size) || !(out = malloc(2 * size + 2)))
		return;
	for (size_t i = 0; i < size; i++) {
		if (crlf && data[i] == '\n')
			out[n++] = '\r';
		if (!crlf && (i == 0 || data[i - 1] == '\n') && line_has_text(data, size, i))
			out[n++] = '\r';
		out[n++] = data[i];
	}
	ts_steplog_init(&log);
	ts_err_init(&err);
	if (ts_steplog_read_mem(&log, out, n, "fuzz.log", &err) != 0)
		abort();
	same_steps(ref, &log);
	ts_steplog_release(&log);
	free(out);
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
		uint64_t ign = 0, lines = 1;
		for (int k = 0; k < TS_IGN_COUNT; k++)
			if (k != TS_IGN_NO_ITER)
				ign += log.ignored[k];
		if (ign > log.steps.n)
			abort(); /* at most one unusable value per kept record */
		for (size_t i = 0; i < size; i++)
			lines += data[i] == '\n' || data[i] == '\r';
		if (log.ignored[TS_IGN_NO_ITER] > lines)
			abort(); /* a record without an iteration is dropped: one per
				  * line or progress-bar redraw at most */
		respelled_oracle(data, size, &log, 1);
		respelled_oracle(data, size, &log, 0);
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

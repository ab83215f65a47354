/*
 * fuzz_plan_check.c - libFuzzer target for the published-case CSV reader
 * of `plan --check` and the rank correlation.
 *
 * Properties asserted on every input the reader accepts: every case has
 * the sizes the reader promises (>= 1; ETP >= 0), a positive measured step
 * time, NUL-terminated text cells, strictly increasing 1-based line
 * numbers no larger than the input's line count; the run-setting cells
 * are "not stated" (-1) or a known value (moe_overlap 0/1, cuda_graphs a
 * ts_cuda_graphs, dispatcher a ts_dispatcher, schedule a ts_schedule), and a case's recipe, when
 * one matches, fills only known values into the job; the Spearman coefficient
 * of any two columns is NaN or within [-1, 1], and 1 against itself when
 * defined. A rejected input must leave an error message.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "trainscope/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_plan_cases c = { 0 };
	struct ts_err err;
	int64_t lines = 1, last = 0;
	static double a[4096], b[4096];

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	ts_err_init(&err);
	if (ts_plan_cases_parse(&c, data, size, "fuzz.csv", &err)) {
		assert(err.code < 0 && err.msg[0]);
		ts_plan_cases_release(&c);
		return 0;
	}
	for (size_t i = 0; i < c.n; i++) {
		const struct ts_plan_case *x = &c.v[i];
		assert(x->gpus >= 1 && x->tp >= 1 && x->pp >= 1 && x->vpp >= 0 && x->cp >= 1);
		assert(x->ep >= 1 && x->mbs >= 1 && x->gbs >= 1 && x->seq >= 1 && x->etp >= 0);
		assert(x->moe_overlap >= -1 && x->moe_overlap <= 1 && x->tp_overlap >= -1 && x->tp_overlap <= 1);
		assert(x->recompute == -1 || x->recompute == 0 || x->recompute == 1 || x->recompute == 3);
		assert(x->step_s > 0 && isfinite(x->step_s));
		assert(memchr(x->id, 0, sizeof(x->id)) && memchr(x->model, 0, sizeof(x->model)));
		assert(memchr(x->gpu, 0, sizeof(x->gpu)) && memchr(x->prec, 0, sizeof(x->prec)));
		assert(memchr(x->routing, 0, sizeof(x->routing)));
		assert(x->line > last && x->line <= lines);
		assert(x->moe_overlap >= -1 && x->moe_overlap <= 1);
		assert(x->cuda_graphs >= -1 && x->cuda_graphs <= TS_GRAPHS_FULL);
		assert(x->dispatcher >= -1 && x->dispatcher <= TS_DISPATCH_ALLTOALL);
		assert(x->schedule >= -1 && x->schedule <= TS_SCHED_DUALPIPE);
		{
			struct ts_plan_opts o;
			ts_plan_opts_init(&o);
			ts_plan_case_job(x, &o);
			assert(o.moe_overlap == 0 || o.moe_overlap == 1);
			assert(o.cuda_graphs >= TS_GRAPHS_NONE && o.cuda_graphs <= TS_GRAPHS_FULL);
			assert(o.routing == TS_ROUTING_NATURAL || o.routing == TS_ROUTING_BALANCED);
			assert(o.schedule == TS_SCHED_1F1B || o.schedule == TS_SCHED_DUALPIPE);
		}
		last = x->line;
		if (i < 4096) {
			a[i] = x->step_s;
			b[i] = (double)x->gpus;
		}
	}
	if (c.n >= 2 && c.n <= 4096) {
		double r = ts_plan_spearman(a, b, c.n), s = ts_plan_spearman(a, a, c.n);
		assert(isnan(r) || (r >= -1.0 - 1e-9 && r <= 1.0 + 1e-9));
		assert(isnan(s) || fabs(s - 1.0) < 1e-9);
	}
	ts_plan_cases_release(&c);
	return 0;
}

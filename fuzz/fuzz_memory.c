/*
 * fuzz_memory.c - libFuzzer target for the memory estimators and the
 * layout search on hostile model records.
 *
 * The input is read as a config.json and as a Megatron arguments block
 * (the readers are fuzzed by fuzz_model; here their output feeds the
 * formulas). Whatever model comes out is priced by every estimator for a
 * layout taken from the arguments block (or the first bytes), every
 * pipeline rank, and a small plan, so range checks, divisions and the
 * schedule walk see extreme sizes. Nothing may crash, hang or trip the
 * sanitizers; results are not checked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/gpus.h"
#include "trainscope/memory.h"
#include "trainscope/model.h"
#include "trainscope/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int64_t pick(const uint8_t *data, size_t size, size_t i, int64_t lo, int64_t hi)
{
	return lo + (size > i ? data[i] : 0) % (hi - lo + 1);
}

static void price(const struct ts_model *m, const struct ts_mem_layout *l)
{
	struct ts_mem_ctx c;
	struct ts_mem_stage s;
	struct ts_err err;

	for (int est = 0; est <= TS_MEM_EST_MEGATRON_014; est++) {
		ts_err_init(&err);
		if (ts_mem_prepare(&c, m, l, est, &err))
			continue;
		for (int64_t r = 0; r < l->pp && r < 16; r++) {
			ts_mem_stage_eval(&c, r, &s);
			/* no part of a GPU's memory is negative; the total holds them */
			if (s.weights_bytes < 0 || s.grads_bytes < 0 || s.optimizer_bytes < 0 ||
			    s.activations_bytes < 0 || s.total_bytes < s.allocated_bytes)
				abort();
		}
		ts_mem_peak(&c, &s);
	}
}

static void model_case(const struct ts_model *m, const struct ts_model_args *a,
		       const uint8_t *data, size_t size)
{
	struct ts_mem_layout l;
	struct ts_plan_opts o;
	struct ts_plan p;
	struct ts_err err;

	ts_mem_layout_init(&l);
	l.tp = a && a->tp > 0 && a->tp <= 64 ? a->tp : pick(data, size, 0, 1, 8);
	l.pp = a && a->pp > 0 && a->pp <= 64 ? a->pp : pick(data, size, 1, 1, 8);
	l.vpp = pick(data, size, 2, 1, 4);
	l.cp = pick(data, size, 3, 1, 2);
	l.ep = pick(data, size, 4, 1, 8);
	l.etp = pick(data, size, 5, 1, 2);
	l.dp = pick(data, size, 6, 1, 8);
	l.mbs = pick(data, size, 7, 1, 4);
	l.gbs = l.mbs * l.dp * pick(data, size, 8, 1, 16);
	l.seq = a && a->seq_length > 0 && a->seq_length <= (1 << 20) ? a->seq_length : 4096;
	l.sequence_parallel = data[0] & 1;
	l.recompute = pick(data, size, 9, 0, 2);
	l.recompute_modules = (int)pick(data, size, 10, 0, 127);
	l.recompute_method = (int)pick(data, size, 11, 0, 2);
	l.recompute_layers = pick(data, size, 12, 0, 4);
	l.offload = (int)pick(data, size, 13, 0, 3);
	l.precision = data[0] & 2 ? TS_PREC_FP8 : TS_PREC_BF16;
	l.fsdp = (data[0] & 4) != 0;
	l.dualpipe = (data[0] & 16) != 0;
	l.first_stage_layers = pick(data, size, 14, -1, 3);
	l.last_stage_layers = pick(data, size, 15, -1, 3);
	price(m, &l);

	if (m->layers > 128)
		return; /* the search is bounded by layers x GPUs; keep runs short */
	ts_plan_opts_init(&o);
	o.gpus = pick(data, size, 16, 1, 16);
	o.gpus_per_node = 8;
	o.seq = 2048;
	o.gbs = 16;
	o.capacity_bytes = 80.0 * 1073741824.0;
	o.peak_flops = 989.4e12;
	o.intra_bw = 450e9;
	o.fsdp = (data[0] & 8) != 0;
	o.schedule = data[0] & 16 ? TS_SCHED_DUALPIPE : TS_SCHED_1F1B;
	ts_plan_init(&p);
	ts_err_init(&err);
	ts_plan_run(m, &o, &p, &err);
	ts_plan_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_model m;
	struct ts_model_args a;
	struct ts_err err;

	if (size == 0)
		return 0;
	ts_model_init(&m);
	ts_err_init(&err);
	if (ts_model_parse_config(&m, data, size, "fuzz.json", &err) == 0 &&
	    ts_model_finish(&m, &err) == 0)
		model_case(&m, NULL, data, size);
	ts_model_init(&m);
	ts_model_args_init(&a);
	if (ts_model_parse_megatron_args(&m, &a, data, size, "fuzz.log", &err) == 0 &&
	    ts_model_finish(&m, &err) == 0)
		model_case(&m, &a, data, size);
	return 0;
}
